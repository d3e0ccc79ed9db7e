/* TODO: kernels of group 'movement' (being written). */
TI__PRIVATE const ti__op ti__ops_movement[] = {
    {NULL, NULL, NULL, NULL, 0}
};
