/* TODO(#4): TFLite kernels of group 'tfl_detect' (being written). */
TI__PRIVATE const ti__op ti__ops_tfl_detect[] = {
    {NULL, NULL, NULL, NULL, 0}
};
