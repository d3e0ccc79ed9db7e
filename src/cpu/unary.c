/* TODO: kernels of group 'unary' (being written). */
TI__PRIVATE const ti__op ti__ops_unary[] = {
    {NULL, NULL, NULL, NULL, 0}
};
