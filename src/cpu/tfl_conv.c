/* TODO(#4): TFLite kernels of group 'tfl_conv' (being written). */
TI__PRIVATE const ti__op ti__ops_tfl_conv[] = {
    {NULL, NULL, NULL, NULL, 0}
};
