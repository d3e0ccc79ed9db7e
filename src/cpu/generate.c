/* TODO: kernels of group 'generate' (being written). */
TI__PRIVATE const ti__op ti__ops_generate[] = {
    {NULL, NULL, NULL, NULL, 0}
};
