/* TODO: kernels of group 'quant' (being written). */
TI__PRIVATE const ti__op ti__ops_quant[] = {
    {NULL, NULL, NULL, NULL, 0}
};
