/* TODO: kernels of group 'binary' (being written). */
TI__PRIVATE const ti__op ti__ops_binary[] = {
    {NULL, NULL, NULL, NULL, 0}
};
