/* TODO(#4): the TFLite reader (being written). */
#ifndef TI_NO_TFLITE
TI__PRIVATE ti_status ti__tflite_parse(ti_model *m, const uint8_t *data, size_t size, ti_error *err) {
    (void)data;
    (void)size;
    return ti__fail(err, TI_ERR_UNSUPPORTED, m->name, "TFLite models are not supported yet (issue #4)");
}
#endif
