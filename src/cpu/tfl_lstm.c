/* TODO(#4): TFLite kernels of group 'tfl_lstm' (being written). */
TI__PRIVATE const ti__op ti__ops_tfl_lstm[] = {
    {NULL, NULL, NULL, NULL, 0}
};
