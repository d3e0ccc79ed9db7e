/* Generator kernels: Shape and Size (their output depends on the input's shape only),
 * Constant, ConstantOfShape, Range and EyeLike. Relies on internal.h; Constant and
 * ConstantOfShape read TENSOR attributes from the model's constant values. Must not read an
 * input's data in Shape / Size (it may be absent) and never allocates in a run function. */

TI__PRIVATE ti_status ti__gen_set(ti__kctx *k, int i, ti_dtype dt, int rank, const int64_t *dims) {
    if (i >= k->n_out || k->out[i] == NULL) return TI_OK;
    if (!ti__set_shape(k->out[i], dt, rank, dims))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "output %d: rank %d or size is too large", i,
                         rank);
    return TI_OK;
}

/* ---- Shape, Size ----------------------------------------------------------------------- */

/* [start, end) of the dims Shape reports (opset 15 attributes), clamped into [0, rank]. */
TI__PRIVATE void ti__shape_range(ti__kctx *k, int64_t *start, int64_t *end) {
    int64_t r = k->in[0]->rank;
    int64_t s = ti__attr_i(k->node, "start", 0), e = ti__attr_i(k->node, "end", r);
    if (s < 0) s += r;
    if (e < 0) e += r;
    *start = s < 0 ? 0 : (s > r ? r : s);
    *end = e < 0 ? 0 : (e > r ? r : e);
    if (*end < *start) *end = *start;
}

TI__PRIVATE int ti__shape_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    int64_t s, e;
    ti__shape_range(k, &s, &e);
    int64_t d = e - s;
    return ti__gen_set(k, 0, TI_DTYPE_I64, 1, &d);
}

TI__PRIVATE ti_status ti__shape_run(ti__kctx *k) {
    int64_t s, e, *y = (int64_t *)k->out[0]->data;
    ti__shape_range(k, &s, &e);
    for (int64_t i = s; i < e; i++) y[i - s] = k->in[0]->shape[i];
    return TI_OK;
}

TI__PRIVATE int ti__size_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    return ti__gen_set(k, 0, TI_DTYPE_I64, 0, NULL);
}

TI__PRIVATE ti_status ti__size_run(ti__kctx *k) {
    *(int64_t *)k->out[0]->data = (int64_t)ti__numel(k->in[0]);
    return TI_OK;
}

/* ---- Constant -------------------------------------------------------------------------- */

/* The attribute that holds the value, and its dtype, rank, dims and bytes. */
typedef struct ti__const_src {
    ti_dtype dtype;
    int rank;
    int64_t dims[TI_MAX_DIMS];
    const void *data;
    size_t bytes;
} ti__const_src;

TI__PRIVATE int ti__constant_src(ti__kctx *k, ti__const_src *c) {
    const ti__node *n = k->node;
    memset(c, 0, sizeof *c);
    for (int i = 0; i < n->n_attrs; i++) {
        const ti__attr *a = &n->attrs[i];
        if (a->name == NULL) continue;
        if (strcmp(a->name, "value") == 0 && a->type == TI__ATTR_TENSOR) {
            if (a->tensor < 0 || a->tensor >= k->model->n_values)
                return ti__kfail(k, TI_ERR_BAD_MODEL, "value attribute has no tensor");
            const ti__value *v = &k->model->values[a->tensor];
            if (ti_dtype_size(v->dtype) == 0 || v->rank < 0 || v->rank > TI_MAX_DIMS)
                return ti__kfail(k, TI_ERR_UNSUPPORTED, "value tensor of dtype %s rank %d is "
                                 "not supported", ti_dtype_name(v->dtype), v->rank);
            c->dtype = v->dtype;
            c->rank = v->rank;
            for (int j = 0; j < v->rank; j++) c->dims[j] = v->dims[j];
            c->data = v->data;
            c->bytes = v->bytes;
        } else if (strcmp(a->name, "value_float") == 0 && a->type == TI__ATTR_FLOAT) {
            c->dtype = TI_DTYPE_F32;
            c->data = &a->f;
            c->bytes = sizeof(float);
        } else if (strcmp(a->name, "value_int") == 0 && a->type == TI__ATTR_INT) {
            c->dtype = TI_DTYPE_I64;
            c->data = &a->i;
            c->bytes = sizeof(int64_t);
        } else if (strcmp(a->name, "value_floats") == 0 && a->type == TI__ATTR_FLOATS) {
            c->dtype = TI_DTYPE_F32;
            c->rank = 1;
            c->dims[0] = a->count;
            c->data = a->floats;
            c->bytes = (size_t)a->count * sizeof(float);
        } else if (strcmp(a->name, "value_ints") == 0 && a->type == TI__ATTR_INTS) {
            c->dtype = TI_DTYPE_I64;
            c->rank = 1;
            c->dims[0] = a->count;
            c->data = a->ints;
            c->bytes = (size_t)a->count * sizeof(int64_t);
        } else {
            return ti__kfail(k, TI_ERR_UNSUPPORTED, "attribute '%s' is not supported", a->name);
        }
        size_t need = ti__shape_numel(c->rank, c->dims) * ti_dtype_size(c->dtype);
        if (need != c->bytes || (need != 0 && c->data == NULL))
            return ti__kfail(k, TI_ERR_BAD_MODEL, "value holds %zu bytes, its shape needs %zu",
                             c->bytes, need);
        return TI_OK;
    }
    return ti__kfail(k, TI_ERR_BAD_MODEL, "no value attribute");
}

TI__PRIVATE int ti__constant_shape(ti__kctx *k) {
    ti__const_src c;
    int st = ti__constant_src(k, &c);
    if (st != TI_OK) return st;
    return ti__gen_set(k, 0, c.dtype, c.rank, c.dims);
}

TI__PRIVATE ti_status ti__constant_run(ti__kctx *k) {
    ti__const_src c;
    int st = ti__constant_src(k, &c);
    if (st != TI_OK) return (ti_status)st;
    if (c.bytes != 0) memcpy(k->out[0]->data, c.data, c.bytes);
    return TI_OK;
}

/* ---- ConstantOfShape ------------------------------------------------------------------- */

/* The fill value: a one-element "value" tensor attribute, float32 0 when absent. */
TI__PRIVATE int ti__cos_value(ti__kctx *k, ti_dtype *dt, unsigned char *val) {
    const ti__attr *a = ti__attr_get(k->node, "value");
    memset(val, 0, 8);
    *dt = TI_DTYPE_F32;
    if (a == NULL) return TI_OK;
    if (a->type != TI__ATTR_TENSOR || a->tensor < 0 || a->tensor >= k->model->n_values)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "value attribute must be a tensor");
    const ti__value *v = &k->model->values[a->tensor];
    size_t es = ti_dtype_size(v->dtype);
    if (es == 0 || es > 8)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "value of dtype %s is not supported",
                         ti_dtype_name(v->dtype));
    if (v->data == NULL || v->bytes != es)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "value must hold exactly one element");
    *dt = v->dtype;
    memcpy(val, v->data, es);
    return TI_OK;
}

TI__PRIVATE int ti__cos_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    const ti_tensor *s = k->in[0];
    ti_dtype dt = TI_DTYPE_UNKNOWN;
    unsigned char val[8];
    int st = ti__cos_value(k, &dt, val);
    if (st != TI_OK) return st;
    if (s->rank != 1 || !ti__dtype_is_int(s->dtype))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "input must be a 1-D integer tensor (rank %d, %s)",
                         s->rank, ti_dtype_name(s->dtype));
    size_t n = ti__numel(s);
    if (n > TI_MAX_DIMS)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "output rank %zu above %d", n, TI_MAX_DIMS);
    TI__NEED(k, s);
    int64_t d[TI_MAX_DIMS];
    for (size_t i = 0; i < n; i++) {
        d[i] = ti__get_i64(s, i);
        if (d[i] < 0)
            return ti__kfail(k, TI_ERR_INVALID_ARGUMENT, "shape[%zu] = %lld is negative", i,
                             (long long)d[i]);
    }
    return ti__gen_set(k, 0, dt, (int)n, d);
}

TI__PRIVATE ti_status ti__cos_run(ti__kctx *k) {
    ti_dtype dt = TI_DTYPE_UNKNOWN;
    unsigned char val[8];
    int st = ti__cos_value(k, &dt, val);
    if (st != TI_OK) return (ti_status)st;
    size_t es = ti_dtype_size(dt), n = ti__numel(k->out[0]);
    unsigned char *y = (unsigned char *)k->out[0]->data;
    for (size_t i = 0; i < n; i++) memcpy(y + i * es, val, es);
    return TI_OK;
}

/* ---- Range ----------------------------------------------------------------------------- */

/* Element count: max(ceil((limit - start) / delta), 0), computed exactly for integers. */
TI__PRIVATE int ti__range_count(ti__kctx *k, int64_t *count) {
    for (int i = 0; i < 3; i++) {
        TI__REQUIRE_INPUT(k, i);
        const ti_tensor *t = k->in[i];
        if (ti__numel(t) != 1 || t->dtype != k->in[0]->dtype)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "input %d must be one %s value (has %zu of %s)",
                             i, ti_dtype_name(k->in[0]->dtype), ti__numel(t),
                             ti_dtype_name(t->dtype));
    }
    ti_dtype dt = k->in[0]->dtype;
    if (!ti__dtype_is_int(dt) && !ti__dtype_is_float(dt))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "dtype %s is not supported", ti_dtype_name(dt));
    for (int i = 0; i < 3; i++) TI__NEED(k, k->in[i]);
    double s = ti__get_f64(k->in[0], 0), l = ti__get_f64(k->in[1], 0);
    double d = ti__get_f64(k->in[2], 0);
    if (d == 0.0 || d != d || s != s || l != l)
        return ti__kfail(k, TI_ERR_INVALID_ARGUMENT, "delta is 0 or a value is NaN");
    double n = ceil((l - s) / d);
    if (n > 4.0e15) return ti__kfail(k, TI_ERR_INVALID_ARGUMENT, "range of %g values", n);
    if (ti__dtype_is_int(dt)) { /* exact integer count, no double rounding */
        int64_t si = ti__get_i64(k->in[0], 0), li = ti__get_i64(k->in[1], 0);
        int64_t di = ti__get_i64(k->in[2], 0);
        if (fabs(l - s) > 4.0e18)
            return ti__kfail(k, TI_ERR_INVALID_ARGUMENT, "range is too large");
        int64_t diff = li - si, q = diff / di;
        if (q * di != diff) q += (diff > 0) == (di > 0) ? 1 : 0; /* ceil */
        *count = q > 0 ? q : 0;
        return TI_OK;
    }
    *count = n > 0.0 ? (int64_t)n : 0;
    return TI_OK;
}

TI__PRIVATE int ti__range_shape(ti__kctx *k) {
    int64_t n;
    int st = ti__range_count(k, &n);
    if (st != TI_OK) return st;
    return ti__gen_set(k, 0, k->in[0]->dtype, 1, &n);
}

TI__PRIVATE ti_status ti__range_run(ti__kctx *k) {
    ti_tensor *y = k->out[0];
    size_t n = ti__numel(y);
    if (ti__dtype_is_int(y->dtype)) {
        int64_t s = ti__get_i64(k->in[0], 0), d = ti__get_i64(k->in[2], 0);
        for (size_t i = 0; i < n; i++) ti__set_i64(y, i, s + (int64_t)i * d);
    } else {
        double s = ti__get_f64(k->in[0], 0), d = ti__get_f64(k->in[2], 0);
        for (size_t i = 0; i < n; i++) ti__set_f64(y, i, s + (double)i * d);
    }
    return TI_OK;
}

/* ---- EyeLike --------------------------------------------------------------------------- */

TI__PRIVATE int ti__eyelike_dtype(ti__kctx *k, ti_dtype *dt) {
    TI__REQUIRE_INPUT(k, 0);
    const ti__attr *a = ti__attr_get(k->node, "dtype");
    *dt = a != NULL ? ti__onnx_dtype(a->i) : k->in[0]->dtype;
    if (ti_dtype_size(*dt) == 0)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "output dtype %s (ONNX type %lld) is not "
                         "supported", ti_dtype_name(*dt), (long long)(a ? a->i : -1));
    if (k->in[0]->rank != 2)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "input has rank %d, expected 2", k->in[0]->rank);
    return TI_OK;
}

TI__PRIVATE int ti__eyelike_shape(ti__kctx *k) {
    ti_dtype dt = TI_DTYPE_UNKNOWN;
    int st = ti__eyelike_dtype(k, &dt);
    if (st != TI_OK) return st;
    return ti__gen_set(k, 0, dt, 2, k->in[0]->shape);
}

TI__PRIVATE ti_status ti__eyelike_run(ti__kctx *k) {
    ti_tensor *y = k->out[0];
    int64_t rows = y->shape[0], cols = y->shape[1], kk = ti__attr_i(k->node, "k", 0);
    if (y->size_bytes != 0) memset(y->data, 0, y->size_bytes); /* zero bytes: 0 in every dtype */
    for (int64_t i = 0; i < rows; i++) {
        if (kk > cols || kk < -rows) break;
        int64_t j = i + kk;
        if (j >= 0 && j < cols) ti__set_f64(y, (size_t)(i * cols + j), 1.0);
    }
    return TI_OK;
}

TI__PRIVATE const ti__op ti__ops_generate[] = {
    {"Shape", ti__shape_shape, ti__shape_run, NULL, TI__OP_SHAPE_ONLY},
    {"Size", ti__size_shape, ti__size_run, NULL, TI__OP_SHAPE_ONLY},
    {"Constant", ti__constant_shape, ti__constant_run, NULL, 0},
    {"ConstantOfShape", ti__cos_shape, ti__cos_run, NULL, 0},
    {"Range", ti__range_shape, ti__range_run, NULL, 0},
    {"EyeLike", ti__eyelike_shape, ti__eyelike_run, NULL, 0},
    {NULL, NULL, NULL, NULL, 0}
};
