/* TODO: kernels of group 'norm' (being written). */
TI__PRIVATE const ti__op ti__ops_norm[] = {
    {NULL, NULL, NULL, NULL, 0}
};
