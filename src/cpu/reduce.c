/* TODO: kernels of group 'reduce' (being written). */
TI__PRIVATE const ti__op ti__ops_reduce[] = {
    {NULL, NULL, NULL, NULL, 0}
};
