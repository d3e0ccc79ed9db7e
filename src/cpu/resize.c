/* TODO: kernels of group 'resize' (being written). */
TI__PRIVATE const ti__op ti__ops_resize[] = {
    {NULL, NULL, NULL, NULL, 0}
};
