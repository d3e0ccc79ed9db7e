/* TODO(#4): TFLite kernels of group 'tfl_shape' (being written). */
TI__PRIVATE const ti__op ti__ops_tfl_shape[] = {
    {NULL, NULL, NULL, NULL, 0}
};
