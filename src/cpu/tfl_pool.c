/* TODO(#4): TFLite kernels of group 'tfl_pool' (being written). */
TI__PRIVATE const ti__op ti__ops_tfl_pool[] = {
    {NULL, NULL, NULL, NULL, 0}
};
