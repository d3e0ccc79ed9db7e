/* TODO: kernels of group 'conv' (being written). */
TI__PRIVATE const ti__op ti__ops_conv[] = {
    {NULL, NULL, NULL, NULL, 0}
};
