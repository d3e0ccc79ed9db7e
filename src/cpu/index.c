/* TODO: kernels of group 'index' (being written). */
TI__PRIVATE const ti__op ti__ops_index[] = {
    {NULL, NULL, NULL, NULL, 0}
};
