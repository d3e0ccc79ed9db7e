/* Errors: status strings and the formatting of messages that name the file, the node and
 * the reason. Relies on vsnprintf only. Must never print, abort or exit. */

TI_API const char *ti_status_string(ti_status code) {
    switch (code) {
    case TI_OK: return "ok";
    case TI_ERR_INVALID_ARGUMENT: return "invalid argument";
    case TI_ERR_IO: return "i/o error";
    case TI_ERR_BAD_MODEL: return "bad model";
    case TI_ERR_UNSUPPORTED: return "unsupported";
    case TI_ERR_OUT_OF_MEMORY: return "out of memory";
    case TI_ERR_BACKEND: return "backend error";
    default: return "unknown status";
    }
}

TI__PRIVATE void ti__error_clear(ti_error *err) {
    if (err == NULL) return;
    memset(err, 0, sizeof *err);
    err->node_index = -1;
}

TI__PRIVATE void ti__copy_str(char *dst, size_t cap, const char *src) {
    size_t n = src ? strlen(src) : 0;
    if (n >= cap) n = cap - 1;
    if (n) memcpy(dst, src, n);
    dst[n] = 0;
}

TI__PRIVATE void ti__vfail(ti_error *err, ti_status code, const char *file, int node_index,
                           const char *node, const char *op, const char *fmt, va_list ap) {
    if (err == NULL) return;
    err->code = code;
    err->node_index = node_index;
    ti__copy_str(err->node, sizeof err->node, node);
    ti__copy_str(err->op, sizeof err->op, op);
    int n;
    if (op != NULL) {
        /* a node name cut short where the whole one would leave the reason under 128 bytes
         * (TensorFlow's fused names run to several hundred; err->node keeps what fits) */
        const char *f = file ? file : "<memory>", *nm = node ? node : "";
        size_t fixed = strlen(f) + strlen(op) + sizeof ": node '' (): " - 1, len = strlen(nm);
        size_t room = 0;
        if (fixed + 128 < sizeof err->message) room = sizeof err->message - 128 - fixed;
        if (len > room && room > 3)
            n = snprintf(err->message, sizeof err->message, "%s: node '%.*s...' (%s): ", f,
                         (int)(room - 3), nm, op);
        else
            n = snprintf(err->message, sizeof err->message, "%s: node '%s' (%s): ", f, nm, op);
    } else
        n = snprintf(err->message, sizeof err->message, "%s: ", file ? file : "<memory>");
    if (n < 0) n = 0;
    if ((size_t)n < sizeof err->message)
        vsnprintf(err->message + n, sizeof err->message - (size_t)n, fmt, ap);
}

TI__PRIVATE ti_status ti__fail(ti_error *err, ti_status code, const char *file, const char *fmt,
                               ...) {
    va_list ap;
    va_start(ap, fmt);
    ti__vfail(err, code, file, -1, NULL, NULL, fmt, ap);
    va_end(ap);
    return code;
}

TI__PRIVATE ti_status ti__fail_node(ti_error *err, ti_status code, const char *file, int node_index,
                                    const char *node, const char *op, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    ti__vfail(err, code, file, node_index, node, op ? op : "", fmt, ap);
    va_end(ap);
    return code;
}

TI__PRIVATE ti_status ti__kfail(ti__kctx *k, ti_status code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    ti__vfail(k->err, code, k->file, k->node_index, k->node->name, k->node->op, fmt, ap);
    va_end(ap);
    return code;
}
