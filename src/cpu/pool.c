/* TODO: kernels of group 'pool' (being written). */
TI__PRIVATE const ti__op ti__ops_pool[] = {
    {NULL, NULL, NULL, NULL, 0}
};
