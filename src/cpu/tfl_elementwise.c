/* TODO(#4): TFLite kernels of group 'tfl_elementwise' (being written). */
TI__PRIVATE const ti__op ti__ops_tfl_elementwise[] = {
    {NULL, NULL, NULL, NULL, 0}
};
