/* TFLite data-movement builtins (domain "tflite"): CONCATENATION, RESHAPE, SQUEEZE,
 * EXPAND_DIMS, TRANSPOSE, PAD, PADV2, MIRROR_PAD, STRIDED_SLICE, SLICE, GATHER, GATHER_ND,
 * SPLIT, SPLIT_V, PACK, UNPACK, DEPTH_TO_SPACE, SPACE_TO_DEPTH, SHAPE, FILL, TILE,
 * BROADCAST_TO, ZEROS_LIKE, REVERSE_V2 and RANGE, with TFLite's semantics (NHWC,
 * its StridedSlice mask rules, its uint8 Concatenation rescale). They move whole elements,
 * so every sized dtype works. Relies on internal.h, qmath.c and the ti__mv_* helpers of
 * movement.c (element size, strided gather, fill), which come earlier in the header. Must not
 * allocate in a run function nor read outside an input: shapes and indices are checked. */

#define TI__TSH_SS_MAX 48 /* StridedSlice: up to 32 spec entries plus the input's dims */

/* ---- helpers --------------------------------------------------------------------------- */

TI__PRIVATE int ti__tsh_has_q(const ti_tensor *t) {
    return t->quant.count > 0 && t->quant.scale != NULL && t->quant.zero_point != NULL;
}
/* Same per-tensor quantization (or one of them is not quantized: nothing to compare). */
TI__PRIVATE int ti__tsh_same_q(const ti_tensor *a, const ti_tensor *b) {
    if (!ti__tsh_has_q(a) || !ti__tsh_has_q(b)) return 1;
    return a->quant.scale[0] == b->quant.scale[0] &&
           a->quant.zero_point[0] == b->quant.zero_point[0];
}
/* For the ops whose TFLite kernel refuses differing quantization (EXPAND_DIMS, PACK, UNPACK,
 * MIRROR_PAD, FILL, PADV2's value): the same refusal, naming both. */
TI__PRIVATE ti_status ti__tsh_need_same_q(ti__kctx *k, const ti_tensor *a, const char *what,
                                          const ti_tensor *out) {
    if (out == NULL || ti__tsh_same_q(a, out)) return TI_OK;
    return ti__kfail(k, TI_ERR_UNSUPPORTED,
                     "%s has scale %g zero point %lld but the output has scale %g zero point "
                     "%lld; this op does not requantize",
                     what, (double)a->quant.scale[0], (long long)a->quant.zero_point[0],
                     (double)out->quant.scale[0], (long long)out->quant.zero_point[0]);
}

/* Reads integer input i (any integer dtype) into v (at most cap values); count in *n. The
 * caller has made sure its data is present (TI__NEED in shape functions). */
TI__PRIVATE ti_status ti__tsh_ints(ti__kctx *k, int i, const char *what, int64_t *v, int cap,
                                   int *n) {
    const ti_tensor *t = i < k->n_in ? k->in[i] : NULL;
    if (t == NULL) return ti__kfail(k, TI_ERR_BAD_MODEL, "%s (input %d) is missing", what, i);
    if (!ti__dtype_is_int(t->dtype))
        return ti__kfail(k, TI_ERR_UNSUPPORTED,
                         "%s (input %d) has dtype %s, expected int32 or int64", what, i,
                         ti_dtype_name(t->dtype));
    size_t c = ti__numel(t);
    if (c > (size_t)cap)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "%s has %lu values, at most %d are supported", what,
                         (unsigned long)c, cap);
    for (size_t j = 0; j < c; j++) {
        int64_t x = ti__get_i64(t, j);
        /* keep later sums (end + start, index + dim) far from overflow */
        const int64_t lim = (int64_t)1 << 62;
        v[j] = x > lim ? lim : (x < -lim ? -lim : x);
    }
    *n = (int)c;
    return TI_OK;
}

/* Normalises axis into [0, rank) or fails. */
TI__PRIVATE ti_status ti__tsh_axis(ti__kctx *k, int64_t axis, int rank, const char *what,
                                   int *out) {
    if (!ti__mv_axis(axis, rank, out))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "%s %lld is out of range for rank %d", what,
                         (long long)axis, rank);
    return TI_OK;
}

TI__PRIVATE size_t ti__tsh_prod(const int64_t *d, int from, int to) {
    size_t n = 1;
    for (int i = from; i < to; i++) n *= (size_t)d[i];
    return n;
}

/* The output must have the input's dtype and shape (ZEROS_LIKE, ...). */
TI__PRIVATE int ti__tsh_same_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    size_t es;
    ti_status st = ti__mv_esize(k, k->in[0], &es);
    if (st != TI_OK) return st;
    return ti__mv_set(k, 0, k->in[0]->dtype, k->in[0]->rank, k->in[0]->shape);
}

/* ---- CONCATENATION, PACK ---------------------------------------------------------------- */

/* Fused activation of CONCATENATION: clamp bounds on the float or quantized output. (TFLite's
 * kernel only accepts NONE; a clamp costs nothing and keeps such graphs meaningful.) */
TI__PRIVATE ti_status ti__tsh_concat_act(ti__kctx *k, float *flo, float *fhi, int32_t *qlo,
                                         int32_t *qhi) {
    int act = (int)ti__attr_i(k->node, "fused_activation_function", TI__TFL_ACT_NONE);
    const ti_tensor *y = k->out[0];
    int ok = 0;
    *flo = -FLT_MAX;
    *fhi = FLT_MAX;
    *qlo = INT32_MIN;
    *qhi = INT32_MAX;
    if (act == TI__TFL_ACT_NONE) return TI_OK;
    if (y->dtype == TI_DTYPE_F32)
        ok = ti__f_act_range(act, flo, fhi);
    else if (ti__tsh_has_q(y) &&
             (y->dtype == TI_DTYPE_U8 || y->dtype == TI_DTYPE_I8 || y->dtype == TI_DTYPE_I16)) {
        int32_t lo = y->dtype == TI_DTYPE_U8 ? 0 : y->dtype == TI_DTYPE_I8 ? -128 : -32768;
        int32_t hi = y->dtype == TI_DTYPE_U8 ? 255 : y->dtype == TI_DTYPE_I8 ? 127 : 32767;
        ok = ti__q_act_range(act, y->quant.scale[0], y->quant.zero_point[0], lo, hi, qlo, qhi);
    }
    if (!ok)
        return ti__kfail(k, TI_ERR_UNSUPPORTED,
                         "fused activation %d on a %s output is not supported", act,
                         ti_dtype_name(y->dtype));
    return TI_OK;
}

/* uint8 inputs whose quantization differs from the output's are rescaled as TFLite's
 * ConcatenationWithScaling does (float multiply-add, round half away from zero); int8 the
 * same way (TFLite requires int8 params to be equal, so it never needs this). */
TI__PRIVATE int ti__tsh_concat_rescales(const ti_tensor *x, const ti_tensor *y) {
    return (x->dtype == TI_DTYPE_U8 || x->dtype == TI_DTYPE_I8) && !ti__tsh_same_q(x, y);
}

TI__PRIVATE int ti__tsh_concat_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    const ti_tensor *x0 = k->in[0];
    size_t es;
    ti_status st = ti__mv_esize(k, x0, &es);
    if (st != TI_OK) return st;
    int64_t axis_attr = ti__attr_i(k->node, "axis", 0), d[TI_MAX_DIMS];
    int r = x0->rank, axis = 0;
    if (r == 0) { /* TFLite joins scalars into a vector when axis is 0 */
        if (axis_attr != 0)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "axis %lld is out of range for scalars",
                             (long long)axis_attr);
    } else if ((st = ti__tsh_axis(k, axis_attr, r, "axis", &axis)) != TI_OK)
        return st;
    for (int i = 0; i < r; i++) d[i] = x0->shape[i];
    if (r > 0) d[axis] = 0;
    for (int i = 0; i < k->n_in; i++) {
        const ti_tensor *x = k->in[i];
        TI__REQUIRE_INPUT(k, i);
        if (x->dtype != x0->dtype || x->rank != r)
            return ti__kfail(k, TI_ERR_BAD_MODEL,
                             "input %d is %s of rank %d, input 0 is %s of rank %d", i,
                             ti_dtype_name(x->dtype), x->rank, ti_dtype_name(x0->dtype), r);
        for (int j = 0; j < r; j++)
            if (j != axis && x->shape[j] != x0->shape[j])
                return ti__kfail(k, TI_ERR_BAD_MODEL,
                                 "input %d has dim %d = %lld, input 0 has %lld", i, j,
                                 (long long)x->shape[j], (long long)x0->shape[j]);
        if (r > 0) d[axis] += x->shape[axis];
        if (k->n_out > 0 && k->out[0] != NULL && x->dtype == TI_DTYPE_I16 &&
            !ti__tsh_same_q(x, k->out[0]))
            return ti__tsh_need_same_q(k, x, "an int16 input", k->out[0]);
    }
    if (r == 0) d[0] = k->n_in;
    if ((st = ti__mv_set(k, 0, x0->dtype, r == 0 ? 1 : r, d)) != TI_OK) return st;
    float flo, fhi;
    int32_t qlo, qhi;
    return k->n_out > 0 && k->out[0] ? ti__tsh_concat_act(k, &flo, &fhi, &qlo, &qhi) : TI_OK;
}

TI__PRIVATE void ti__tsh_rescale(const ti_tensor *x, const ti_tensor *y, const unsigned char *src,
                                 unsigned char *dst, size_t n) {
    const float scale = x->quant.scale[0] * (1.0f / y->quant.scale[0]);
    const float bias = -(float)x->quant.zero_point[0] * scale;
    const int32_t zp = (int32_t)y->quant.zero_point[0];
    const int u8 = x->dtype == TI_DTYPE_U8;
    for (size_t j = 0; j < n; j++) {
        float v = u8 ? (float)src[j] : (float)(int8_t)src[j];
        float r = roundf(v * scale + bias);
        r = r > 1e9f ? 1e9f : (r > -1e9f ? r : -1e9f); /* no undefined cast of inf or NaN */
        int32_t q = (int32_t)r + zp;
        if (u8)
            dst[j] = (unsigned char)(q < 0 ? 0 : q > 255 ? 255 : q);
        else
            dst[j] = (unsigned char)(int8_t)(q < -128 ? -128 : q > 127 ? 127 : q);
    }
}

TI__PRIVATE void ti__tsh_clamp(ti_tensor *y, float flo, float fhi, int32_t qlo, int32_t qhi) {
    size_t n = ti__numel(y);
    if (y->dtype == TI_DTYPE_F32) {
        float *p = (float *)y->data;
        for (size_t i = 0; i < n; i++) p[i] = p[i] < flo ? flo : p[i] > fhi ? fhi : p[i];
        return;
    }
    for (size_t i = 0; i < n; i++) {
        int64_t v = ti__get_i64(y, i);
        if (v < qlo)
            ti__set_i64(y, i, qlo);
        else if (v > qhi)
            ti__set_i64(y, i, qhi);
    }
}

TI__PRIVATE ti_status ti__tsh_concat_run(ti__kctx *k) {
    ti_tensor *y = k->out[0];
    const ti_tensor *x0 = k->in[0];
    size_t es = ti_dtype_size(y->dtype);
    int r = x0->rank;
    int64_t axis_attr = ti__attr_i(k->node, "axis", 0);
    int axis = r == 0 ? 0 : (int)(axis_attr < 0 ? axis_attr + r : axis_attr);
    size_t outer = r == 0 ? 1 : ti__tsh_prod(x0->shape, 0, axis);
    size_t inner = r == 0 ? 1 : ti__tsh_prod(x0->shape, axis + 1, r);
    unsigned char *dst = (unsigned char *)y->data;
    for (size_t o = 0; o < outer; o++) {
        for (int i = 0; i < k->n_in; i++) {
            const ti_tensor *x = k->in[i];
            size_t n = (r == 0 ? 1 : (size_t)x->shape[axis]) * inner;
            const unsigned char *src = (const unsigned char *)x->data + o * n * es;
            if (ti__tsh_concat_rescales(x, y))
                ti__tsh_rescale(x, y, src, dst, n);
            else if (n != 0)
                memcpy(dst, src, n * es);
            dst += n * es;
        }
    }
    float flo, fhi;
    int32_t qlo, qhi;
    ti_status st = ti__tsh_concat_act(k, &flo, &fhi, &qlo, &qhi);
    if (st != TI_OK) return st;
    if (ti__attr_i(k->node, "fused_activation_function", 0) != TI__TFL_ACT_NONE)
        ti__tsh_clamp(y, flo, fhi, qlo, qhi);
    return TI_OK;
}

/* PACK: values_count inputs of one shape stacked along a new axis. */
TI__PRIVATE int ti__tsh_pack_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    const ti_tensor *x0 = k->in[0];
    int64_t count = ti__attr_i(k->node, "values_count", k->n_in), d[TI_MAX_DIMS + 1];
    if (count != k->n_in)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "values_count is %lld but the node has %d inputs",
                         (long long)count, k->n_in);
    size_t es;
    ti_status st = ti__mv_esize(k, x0, &es);
    if (st != TI_OK) return st;
    int r = x0->rank, axis = 0;
    if (r + 1 > TI_MAX_DIMS)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "output rank %d is too large", r + 1);
    if ((st = ti__tsh_axis(k, ti__attr_i(k->node, "axis", 0), r + 1, "axis", &axis)) != TI_OK)
        return st;
    for (int i = 0; i < k->n_in; i++) {
        TI__REQUIRE_INPUT(k, i);
        const ti_tensor *x = k->in[i];
        int same = x->dtype == x0->dtype && x->rank == r;
        for (int j = 0; same && j < r; j++) same = x->shape[j] == x0->shape[j];
        if (!same)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "input %d differs from input 0 in dtype or shape",
                             i);
        if (k->n_out > 0 && (st = ti__tsh_need_same_q(k, x, "an input", k->out[0])) != TI_OK)
            return st;
    }
    for (int i = 0, j = 0; i <= r; i++) d[i] = i == axis ? k->n_in : x0->shape[j++];
    return ti__mv_set(k, 0, x0->dtype, r + 1, d);
}

TI__PRIVATE ti_status ti__tsh_pack_run(ti__kctx *k) {
    const ti_tensor *x0 = k->in[0];
    size_t es = ti_dtype_size(x0->dtype);
    int r = x0->rank;
    int64_t a = ti__attr_i(k->node, "axis", 0);
    int axis = (int)(a < 0 ? a + r + 1 : a);
    size_t outer = ti__tsh_prod(x0->shape, 0, axis), inner = ti__tsh_prod(x0->shape, axis, r);
    unsigned char *dst = (unsigned char *)k->out[0]->data;
    for (size_t o = 0; o < outer; o++)
        for (int i = 0; i < k->n_in; i++, dst += inner * es)
            if (inner != 0)
                memcpy(dst, (const unsigned char *)k->in[i]->data + o * inner * es, inner * es);
    return TI_OK;
}

/* ---- SPLIT, SPLIT_V, UNPACK ------------------------------------------------------------ */

/* Copies x's pieces of lens[i] along axis into the present outputs. */
TI__PRIVATE void ti__tsh_split_copy(ti__kctx *k, const ti_tensor *x, int axis, const int64_t *lens,
                                    int n) {
    size_t es = ti_dtype_size(x->dtype);
    size_t outer = ti__tsh_prod(x->shape, 0, axis),
           inner = ti__tsh_prod(x->shape, axis + 1, x->rank);
    const unsigned char *src = (const unsigned char *)x->data;
    for (size_t o = 0; o < outer; o++) {
        for (int i = 0; i < n; i++) {
            size_t bytes = (size_t)lens[i] * inner * es;
            if (k->out[i] != NULL && bytes != 0)
                memcpy((unsigned char *)k->out[i]->data + o * bytes, src, bytes);
            src += bytes;
        }
    }
}

/* SPLIT (inputs: axis, x) and SPLIT_V (x, size_splits, axis): the axis and the piece lengths. */
TI__PRIVATE int ti__tsh_split_plan(ti__kctx *k, int is_v, int *axis, int64_t *lens) {
    int xi = is_v ? 0 : 1, ai = is_v ? 2 : 0, n = k->n_out, na;
    TI__REQUIRE_INPUT(k, xi);
    TI__REQUIRE_INPUT(k, ai);
    if (is_v) TI__REQUIRE_INPUT(k, 1);
    const ti_tensor *x = k->in[xi];
    TI__NEED(k, k->in[ai]);
    if (is_v) TI__NEED(k, k->in[1]);
    int64_t num = ti__attr_i(k->node, "num_splits", n), av[1];
    if (num != n || n < 1)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "num_splits is %lld but the node has %d outputs",
                         (long long)num, n);
    ti_status st = ti__tsh_ints(k, ai, "axis", av, 1, &na);
    if (st != TI_OK) return st;
    if (na != 1) return ti__kfail(k, TI_ERR_BAD_MODEL, "axis has %d values, expected 1", na);
    if ((st = ti__tsh_axis(k, av[0], x->rank, "axis", axis)) != TI_OK) return st;
    int64_t dim = x->shape[*axis];
    if (!is_v) {
        if (dim % n != 0)
            return ti__kfail(k, TI_ERR_BAD_MODEL,
                             "dim %d of size %lld does not split evenly into %d", *axis,
                             (long long)dim, n);
        for (int i = 0; i < n; i++) lens[i] = dim / n;
        return TI_OK;
    }
    int ns, minus = -1;
    if (k->in[1]->rank != 1)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "size_splits has rank %d, expected 1",
                         k->in[1]->rank);
    if ((st = ti__tsh_ints(k, 1, "size_splits", lens, n, &ns)) != TI_OK) return st;
    if (ns != n)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "size_splits has %d values for %d outputs", ns, n);
    int64_t sum = 0;
    for (int i = 0; i < n; i++) {
        if (lens[i] == -1 && minus < 0)
            minus = i;
        else if (lens[i] < 0)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "size_splits[%d] is %lld", i, (long long)lens[i]);
        else
            sum += lens[i];
    }
    if (minus >= 0 && sum <= dim)
        lens[minus] = dim - sum;
    else if (minus >= 0 || sum != dim)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "size_splits add up to %lld, dim %d has %lld",
                         (long long)sum, *axis, (long long)dim);
    return TI_OK;
}

TI__PRIVATE int ti__tsh_split_shape_any(ti__kctx *k, int is_v) {
    int axis = 0;
    int64_t lens[256], d[TI_MAX_DIMS];
    if (k->n_out > 256)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "%d outputs, at most 256", k->n_out);
    int r = ti__tsh_split_plan(k, is_v, &axis, lens);
    if (r != TI_OK) return r;
    const ti_tensor *x = k->in[is_v ? 0 : 1];
    size_t es;
    ti_status st = ti__mv_esize(k, x, &es);
    if (st != TI_OK) return st;
    for (int i = 0; i < k->n_out; i++) {
        for (int j = 0; j < x->rank; j++) d[j] = j == axis ? lens[i] : x->shape[j];
        if ((st = ti__mv_set(k, i, x->dtype, x->rank, d)) != TI_OK) return st;
    }
    return TI_OK;
}
TI__PRIVATE int ti__tsh_split_shape(ti__kctx *k) {
    return ti__tsh_split_shape_any(k, 0);
}
TI__PRIVATE int ti__tsh_splitv_shape(ti__kctx *k) {
    return ti__tsh_split_shape_any(k, 1);
}

TI__PRIVATE ti_status ti__tsh_split_run_any(ti__kctx *k, int is_v) {
    int axis = 0;
    int64_t lens[256];
    int r = ti__tsh_split_plan(k, is_v, &axis, lens);
    if (r != TI_OK)
        return r == TI__NEED_VALUE ? ti__kfail(k, TI_ERR_BAD_MODEL, "split sizes unknown")
                                   : (ti_status)r;
    ti__tsh_split_copy(k, k->in[is_v ? 0 : 1], axis, lens, k->n_out);
    return TI_OK;
}
TI__PRIVATE ti_status ti__tsh_split_run(ti__kctx *k) {
    return ti__tsh_split_run_any(k, 0);
}
TI__PRIVATE ti_status ti__tsh_splitv_run(ti__kctx *k) {
    return ti__tsh_split_run_any(k, 1);
}

/* UNPACK: num outputs, each x with `axis` removed. */
TI__PRIVATE int ti__tsh_unpack_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    const ti_tensor *x = k->in[0];
    int axis = 0;
    int64_t d[TI_MAX_DIMS];
    size_t es;
    ti_status st = ti__mv_esize(k, x, &es);
    if (st != TI_OK) return st;
    if ((st = ti__tsh_axis(k, ti__attr_i(k->node, "axis", 0), x->rank, "axis", &axis)) != TI_OK)
        return st;
    int64_t num = ti__attr_i(k->node, "num", k->n_out);
    if (num != k->n_out || num != x->shape[axis])
        return ti__kfail(k, TI_ERR_BAD_MODEL,
                         "num is %lld, the node has %d outputs and dim %d is %lld", (long long)num,
                         k->n_out, axis, (long long)x->shape[axis]);
    for (int j = 0, o = 0; j < x->rank; j++)
        if (j != axis) d[o++] = x->shape[j];
    for (int i = 0; i < k->n_out; i++) {
        if (k->out[i] != NULL && (st = ti__tsh_need_same_q(k, x, "the input", k->out[i])) != TI_OK)
            return st;
        if ((st = ti__mv_set(k, i, x->dtype, x->rank - 1, d)) != TI_OK) return st;
    }
    return TI_OK;
}

TI__PRIVATE ti_status ti__tsh_unpack_run(ti__kctx *k) {
    const ti_tensor *x = k->in[0];
    int64_t a = ti__attr_i(k->node, "axis", 0), lens[256];
    int n = TI__MIN(k->n_out, 256);
    for (int i = 0; i < n; i++) lens[i] = 1;
    if (k->n_out > 256)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "%d outputs, at most 256", k->n_out);
    ti__tsh_split_copy(k, x, (int)(a < 0 ? a + x->rank : a), lens, n);
    return TI_OK;
}

/* ---- RESHAPE, SQUEEZE, EXPAND_DIMS ----------------------------------------------------- */

/* RESHAPE: the shape tensor (input 1) when it is a vector, else the new_shape option (TFLite's
 * order); [0] in the option means a scalar (old converters). One -1 takes what is left; 0
 * stays 0. */
TI__PRIVATE int ti__tsh_reshape_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    const ti_tensor *x = k->in[0], *s = k->n_in > 1 ? k->in[1] : NULL;
    int64_t d[TI_MAX_DIMS];
    int n = 0;
    ti_status st;
    if (s != NULL && s->rank == 1 && ti__dtype_is_int(s->dtype)) {
        TI__NEED(k, s);
        if ((st = ti__tsh_ints(k, 1, "shape", d, TI_MAX_DIMS, &n)) != TI_OK) return st;
    } else {
        const int64_t *a = ti__attr_ints(k->node, "new_shape", &n);
        if (n > TI_MAX_DIMS) return ti__kfail(k, TI_ERR_UNSUPPORTED, "new_shape has rank %d", n);
        if (n == 1 && a[0] == 0) n = 0;
        for (int i = 0; i < n; i++) d[i] = a[i];
    }
    size_t in_n = ti__numel(x), nz_in = 1;
    for (int i = 0; i < x->rank; i++)
        if (x->shape[i] != 0) nz_in *= (size_t)x->shape[i];
    uint64_t nz_out = 1, out_n = 1;
    int stretch = -1;
    for (int i = 0; i < n; i++) {
        if (d[i] == -1 && stretch >= 0)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "shape has more than one -1 (dims %d and %d)",
                             stretch, i);
        if (d[i] == -1) {
            stretch = i;
            continue;
        }
        if (d[i] < 0 || d[i] > ((int64_t)1 << 46))
            return ti__kfail(k, TI_ERR_BAD_MODEL, "shape[%d] is %lld", i, (long long)d[i]);
        if (d[i] != 0 && nz_out > ((uint64_t)1 << 50) / (uint64_t)d[i])
            return ti__kfail(k, TI_ERR_BAD_MODEL, "the new shape is too large");
        if (d[i] != 0) nz_out *= (uint64_t)d[i];
        out_n *= (uint64_t)d[i];
    }
    if (stretch >= 0) {
        d[stretch] = (in_n == 0 && out_n != 0) ? 0 : (int64_t)(nz_in / nz_out);
        out_n *= (uint64_t)d[stretch];
    }
    if (out_n != (uint64_t)in_n)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "cannot reshape %lu elements into %llu",
                         (unsigned long)in_n, (unsigned long long)out_n);
    return ti__mv_set(k, 0, x->dtype, n, d);
}

TI__PRIVATE int ti__tsh_squeeze_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    const ti_tensor *x = k->in[0];
    int n = 0, r = x->rank, o = 0;
    const int64_t *a = ti__attr_ints(k->node, "squeeze_dims", &n);
    char drop[TI_MAX_DIMS] = {0};
    int64_t d[TI_MAX_DIMS];
    for (int i = 0; i < r; i++) drop[i] = n == 0 && x->shape[i] == 1;
    for (int i = 0; i < n; i++) {
        int ax = 0;
        ti_status st = ti__tsh_axis(k, a[i], r, "squeeze_dims entry", &ax);
        if (st != TI_OK) return st;
        if (x->shape[ax] != 1)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "cannot squeeze dim %d of size %lld", ax,
                             (long long)x->shape[ax]);
        drop[ax] = 1;
    }
    for (int i = 0; i < r; i++)
        if (!drop[i]) d[o++] = x->shape[i];
    return ti__mv_set(k, 0, x->dtype, o, d);
}

TI__PRIVATE int ti__tsh_expand_dims_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    const ti_tensor *x = k->in[0];
    TI__NEED(k, k->in[1]);
    int64_t a[1], d[TI_MAX_DIMS];
    int n, r = x->rank, axis = 0;
    ti_status st = ti__tsh_ints(k, 1, "axis", a, 1, &n);
    if (st != TI_OK) return st;
    if (n != 1) return ti__kfail(k, TI_ERR_BAD_MODEL, "axis has %d values, expected 1", n);
    if (r + 1 > TI_MAX_DIMS)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "output rank %d is too large", r + 1);
    if ((st = ti__tsh_axis(k, a[0], r + 1, "axis", &axis)) != TI_OK) return st;
    if (k->n_out > 0 && (st = ti__tsh_need_same_q(k, x, "the input", k->out[0])) != TI_OK)
        return st;
    for (int i = 0, j = 0; i <= r; i++) d[i] = i == axis ? 1 : x->shape[j++];
    return ti__mv_set(k, 0, x->dtype, r + 1, d);
}

/* ---- TRANSPOSE, REVERSE_V2 ------------------------------------------------------------- */

TI__PRIVATE ti_status ti__tsh_perm(ti__kctx *k, int *perm) {
    const ti_tensor *x = k->in[0];
    int64_t p[TI_MAX_DIMS];
    int n, r = x->rank, seen[TI_MAX_DIMS] = {0};
    ti_status st = ti__tsh_ints(k, 1, "perm", p, TI_MAX_DIMS, &n);
    if (st != TI_OK) return st;
    if (n != r) return ti__kfail(k, TI_ERR_BAD_MODEL, "perm has %d values for rank %d", n, r);
    for (int i = 0; i < r; i++) {
        if ((st = ti__tsh_axis(k, p[i], r, "perm entry", &perm[i])) != TI_OK) return st;
        if (seen[perm[i]]++) return ti__kfail(k, TI_ERR_BAD_MODEL, "perm repeats axis %d", perm[i]);
    }
    return TI_OK;
}

TI__PRIVATE int ti__tsh_transpose_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    TI__NEED(k, k->in[1]);
    const ti_tensor *x = k->in[0];
    int perm[TI_MAX_DIMS];
    int64_t d[TI_MAX_DIMS];
    size_t es;
    ti_status st = ti__mv_esize(k, x, &es);
    if (st != TI_OK || (st = ti__tsh_perm(k, perm)) != TI_OK) return st;
    for (int i = 0; i < x->rank; i++) d[i] = x->shape[perm[i]];
    return ti__mv_set(k, 0, x->dtype, x->rank, d);
}

TI__PRIVATE ti_status ti__tsh_transpose_run(ti__kctx *k) {
    const ti_tensor *x = k->in[0];
    int perm[TI_MAX_DIMS];
    int64_t xs[TI_MAX_DIMS], s[TI_MAX_DIMS];
    ti_status st = ti__tsh_perm(k, perm);
    if (st != TI_OK) return st;
    ti__strides(x->rank, x->shape, xs);
    for (int i = 0; i < x->rank; i++) s[i] = xs[perm[i]];
    ti__mv_strided_copy(k, k->out[0]->data, x->data, ti_dtype_size(x->dtype), x->rank,
                        k->out[0]->shape, s, 0);
    return TI_OK;
}

/* REVERSE_V2: the axes are read at run time (the shape does not depend on them). */
TI__PRIVATE int ti__tsh_reverse_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 1);
    const ti_tensor *a = k->in[1];
    if (!ti__dtype_is_int(a->dtype) || a->rank > 1)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "axis must be an integer vector, got %s of rank %d",
                         ti_dtype_name(a->dtype), a->rank);
    return ti__tsh_same_shape(k);
}

TI__PRIVATE ti_status ti__tsh_reverse_run(ti__kctx *k) {
    const ti_tensor *x = k->in[0];
    int64_t a[TI_MAX_DIMS], s[TI_MAX_DIMS], off = 0;
    int n, r = x->rank, flip[TI_MAX_DIMS] = {0};
    ti_status st = ti__tsh_ints(k, 1, "axis", a, TI_MAX_DIMS, &n);
    if (st != TI_OK) return st;
    for (int i = 0; i < n; i++) {
        int ax = 0;
        if ((st = ti__tsh_axis(k, a[i], r, "axis", &ax)) != TI_OK) return st;
        if (flip[ax]++) return ti__kfail(k, TI_ERR_INVALID_ARGUMENT, "axis %d is repeated", ax);
    }
    ti__strides(r, x->shape, s);
    for (int i = 0; i < r; i++)
        if (flip[i] && x->shape[i] > 0) {
            off += (x->shape[i] - 1) * s[i];
            s[i] = -s[i];
        }
    ti__mv_strided_copy(k, k->out[0]->data, x->data, ti_dtype_size(x->dtype), r, x->shape, s, off);
    return TI_OK;
}

/* ---- PAD, PADV2, MIRROR_PAD ------------------------------------------------------------ */

/* Paddings (input 1, shape [rank, 2], non-negative) and the padded shape. */
TI__PRIVATE int ti__tsh_pads(ti__kctx *k, int64_t *lo, int64_t *hi, int64_t *d) {
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    const ti_tensor *x = k->in[0], *p = k->in[1];
    int r = x->rank, n;
    int64_t v[2 * TI_MAX_DIMS];
    if (p->rank != 2 || p->shape[0] != r || p->shape[1] != 2)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "paddings must have shape [%d, 2], got rank %d", r,
                         p->rank);
    TI__NEED(k, p);
    ti_status st = ti__tsh_ints(k, 1, "paddings", v, 2 * TI_MAX_DIMS, &n);
    if (st != TI_OK) return st;
    for (int i = 0; i < r; i++) {
        lo[i] = v[2 * i];
        hi[i] = v[2 * i + 1];
        if (lo[i] < 0 || hi[i] < 0 || lo[i] > ((int64_t)1 << 40) || hi[i] > ((int64_t)1 << 40))
            return ti__kfail(k, TI_ERR_BAD_MODEL, "paddings of dim %d are %lld, %lld", i,
                             (long long)lo[i], (long long)hi[i]);
        d[i] = x->shape[i] + lo[i] + hi[i];
    }
    return TI_OK;
}

/* The fill value of PAD / PADV2 as es bytes: constant_values (input 2), else the output's
 * zero point when quantized, else 0. */
TI__PRIVATE ti_status ti__tsh_pad_value(ti__kctx *k, unsigned char *val) {
    const ti_tensor *x = k->in[0], *c = k->n_in > 2 ? k->in[2] : NULL, *y = k->out[0];
    size_t es = ti_dtype_size(x->dtype);
    memset(val, 0, 8);
    if (c != NULL) {
        if (c->dtype != x->dtype || ti__numel(c) != 1)
            return ti__kfail(
                k, TI_ERR_BAD_MODEL, "constant_values must be one %s, got %s with %lu values",
                ti_dtype_name(x->dtype), ti_dtype_name(c->dtype), (unsigned long)ti__numel(c));
        ti_status st = ti__tsh_need_same_q(k, c, "constant_values", y);
        if (st != TI_OK) return st;
        if (c->data != NULL) memcpy(val, c->data, es);
        return TI_OK;
    }
    if (ti__dtype_is_int(x->dtype) && ti__tsh_has_q(y)) {
        ti_tensor t;
        memset(&t, 0, sizeof t);
        t.dtype = x->dtype;
        t.data = val;
        int64_t zp = y->quant.zero_point[0];
        ti__set_i64(&t, 0, zp);
        if (ti__get_i64(&t, 0) != zp)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "output zero point %lld does not fit %s",
                             (long long)zp, ti_dtype_name(x->dtype));
    }
    return TI_OK;
}

TI__PRIVATE int ti__tsh_pad_shape(ti__kctx *k) {
    int64_t lo[TI_MAX_DIMS], hi[TI_MAX_DIMS], d[TI_MAX_DIMS];
    unsigned char val[8];
    int r = ti__tsh_pads(k, lo, hi, d);
    if (r != TI_OK) return r;
    size_t es;
    ti_status st = ti__mv_esize(k, k->in[0], &es);
    if (st != TI_OK || (st = ti__mv_set(k, 0, k->in[0]->dtype, k->in[0]->rank, d)) != TI_OK)
        return st;
    return k->n_out > 0 && k->out[0] ? ti__tsh_pad_value(k, val) : TI_OK;
}

TI__PRIVATE ti_status ti__tsh_pad_run(ti__kctx *k) {
    int64_t lo[TI_MAX_DIMS], hi[TI_MAX_DIMS], d[TI_MAX_DIMS], xs[TI_MAX_DIMS], ys[TI_MAX_DIMS];
    unsigned char val[8];
    const ti_tensor *x = k->in[0];
    ti_tensor *y = k->out[0];
    int r = ti__tsh_pads(k, lo, hi, d), rank = x->rank;
    if (r != TI_OK)
        return r == TI__NEED_VALUE ? ti__kfail(k, TI_ERR_BAD_MODEL, "paddings unknown")
                                   : (ti_status)r;
    ti_status st = ti__tsh_pad_value(k, val);
    if (st != TI_OK) return st;
    size_t es = ti_dtype_size(x->dtype), n = ti__numel(x);
    ti__mv_fill(y->data, ti__numel(y), val, es);
    if (n == 0) return TI_OK;
    if (rank == 0) {
        memcpy(y->data, x->data, es);
        return TI_OK;
    }
    /* each input row (the last dim) lands at its shifted place in the output */
    ti__strides(rank, x->shape, xs);
    ti__strides(rank, y->shape, ys);
    size_t row = (size_t)x->shape[rank - 1];
    for (size_t i = 0; i < n; i += row) {
        int64_t off = lo[rank - 1];
        for (int j = 0; j < rank - 1; j++)
            off += ((int64_t)i / xs[j] % x->shape[j] + lo[j]) * ys[j];
        memcpy((unsigned char *)y->data + (size_t)off * es, (const unsigned char *)x->data + i * es,
               row * es);
    }
    return TI_OK;
}

/* MIRROR_PAD: REFLECT (0) leaves the edge out, SYMMETRIC (1) repeats it; paddings are at most
 * dim - 1 (REFLECT) or dim (SYMMETRIC), so one reflection is enough. */
TI__PRIVATE int ti__tsh_mirror_shape(ti__kctx *k) {
    int64_t lo[TI_MAX_DIMS], hi[TI_MAX_DIMS], d[TI_MAX_DIMS];
    int r = ti__tsh_pads(k, lo, hi, d);
    if (r != TI_OK) return r;
    const ti_tensor *x = k->in[0];
    int64_t mode = ti__attr_i(k->node, "mode", 0);
    if (mode != 0 && mode != 1)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "mode %lld", (long long)mode);
    int64_t edge = mode == 0 ? 1 : 0;
    for (int i = 0; i < x->rank; i++)
        if (lo[i] > x->shape[i] - edge || hi[i] > x->shape[i] - edge)
            return ti__kfail(k, TI_ERR_BAD_MODEL,
                             "paddings %lld, %lld of dim %d exceed its size %lld%s",
                             (long long)lo[i], (long long)hi[i], i, (long long)x->shape[i],
                             edge ? " minus 1 (REFLECT)" : "");
    size_t es;
    ti_status st = ti__mv_esize(k, x, &es);
    if (st != TI_OK) return st;
    if (k->n_out > 0 && (st = ti__tsh_need_same_q(k, x, "the input", k->out[0])) != TI_OK)
        return st;
    return ti__mv_set(k, 0, x->dtype, x->rank, d);
}

/* Input coordinate of output coordinate c along a dim of n with lo leading pads. */
TI__PRIVATE int64_t ti__tsh_mirror_map(int64_t c, int64_t lo, int64_t n, int64_t edge) {
    if (c < lo) return lo - 1 - c + edge;
    c -= lo;
    if (c < n) return c;
    return n - 1 - edge - (c - n);
}

TI__PRIVATE ti_status ti__tsh_mirror_run(ti__kctx *k) {
    int64_t lo[TI_MAX_DIMS], hi[TI_MAX_DIMS], d[TI_MAX_DIMS], xs[TI_MAX_DIMS];
    int r = ti__tsh_pads(k, lo, hi, d), rank = k->in[0]->rank;
    if (r != TI_OK)
        return r == TI__NEED_VALUE ? ti__kfail(k, TI_ERR_BAD_MODEL, "paddings unknown")
                                   : (ti_status)r;
    const ti_tensor *x = k->in[0];
    ti_tensor *y = k->out[0];
    int64_t edge = ti__attr_i(k->node, "mode", 0) == 0 ? 1 : 0;
    size_t es = ti_dtype_size(x->dtype), n = ti__numel(y);
    const unsigned char *src = (const unsigned char *)x->data;
    unsigned char *dst = (unsigned char *)y->data;
    if (n == 0) return TI_OK;
    if (rank == 0) {
        memcpy(dst, src, es);
        return TI_OK;
    }
    ti__strides(rank, x->shape, xs);
    int64_t w = y->shape[rank - 1], nx = x->shape[rank - 1], l = lo[rank - 1];
    for (size_t i = 0; i < n; i += (size_t)w) {
        int64_t off = 0, rem = (int64_t)(i / (size_t)w);
        for (int j = rank - 2; j >= 0; j--) {
            off += ti__tsh_mirror_map(rem % y->shape[j], lo[j], x->shape[j], edge) * xs[j];
            rem /= y->shape[j];
        }
        for (int64_t c = 0; c < w; c++) {
            if (c == l && nx > 0) { /* the unpadded middle in one copy */
                memcpy(dst, src + off * (int64_t)es, (size_t)nx * es);
                dst += (size_t)nx * es;
                c += nx - 1;
                continue;
            }
            memcpy(dst, src + (off + ti__tsh_mirror_map(c, l, nx, edge)) * (int64_t)es, es);
            dst += es;
        }
    }
    return TI_OK;
}

/* ---- STRIDED_SLICE, SLICE -------------------------------------------------------------- */

/* StridedSlice as TFLite resolves it: ellipsis and new axes turn into an "effective" input
 * of n dims (new axes are dims of 1); per effective dim a start, a step and a count. */
typedef struct ti__tsh_ss {
    int n;
    int64_t dims[TI__TSH_SS_MAX], start[TI__TSH_SS_MAX], step[TI__TSH_SS_MAX],
        count[TI__TSH_SS_MAX];
    char keep[TI__TSH_SS_MAX]; /* 0 for shrunk axes */
} ti__tsh_ss;

/* Elements from a range of len (end - start) walked with step sd. */
TI__PRIVATE int64_t ti__tsh_ss_count(int64_t len, int64_t sd) {
    if ((len < 0) != (sd < 0)) return 0;
    if (sd < 0) return (len + 1) / sd + 1;
    return len == 0 ? 0 : (len - 1) / sd + 1;
}

TI__PRIVATE int ti__tsh_ss_plan(ti__kctx *k, ti__tsh_ss *p) {
    for (int i = 0; i < 4; i++) TI__REQUIRE_INPUT(k, i);
    for (int i = 1; i < 4; i++) {
        if (k->in[i]->rank != 1)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "input %d has rank %d, expected 1", i,
                             k->in[i]->rank);
        TI__NEED(k, k->in[i]);
    }
    const ti_tensor *x = k->in[0];
    int64_t b[32], e[32], s[32];
    int nb, ne, ns, r = x->rank;
    ti_status st;
    if ((st = ti__tsh_ints(k, 1, "begin", b, 32, &nb)) != TI_OK ||
        (st = ti__tsh_ints(k, 2, "end", e, 32, &ne)) != TI_OK ||
        (st = ti__tsh_ints(k, 3, "strides", s, 32, &ns)) != TI_OK)
        return st;
    if (nb != ne || nb != ns)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "begin, end and strides have %d, %d and %d values",
                         nb, ne, ns);
    uint32_t bm = (uint32_t)ti__attr_i(k->node, "begin_mask", 0);
    uint32_t em = (uint32_t)ti__attr_i(k->node, "end_mask", 0);
    uint32_t ell = (uint32_t)ti__attr_i(k->node, "ellipsis_mask", 0);
    uint32_t nam = (uint32_t)ti__attr_i(k->node, "new_axis_mask", 0);
    uint32_t sam = (uint32_t)ti__attr_i(k->node, "shrink_axis_mask", 0);
    int offset = ti__attr_i(k->node, "offset", 0) != 0;
    if (ell & (ell - 1))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "ellipsis_mask 0x%x has more than one bit",
                         (unsigned)ell);
    /* offset (from dynamic slices): end holds sizes. TFLite sizes the output from them as
     * they are but copies the clamped range, so only in-range slices without ellipsis and new
     * axes are well defined; the others are refused below. */
    if (offset && (ell != 0 || nam != 0 || nb != r))
        return ti__kfail(k, TI_ERR_UNSUPPORTED,
                         "offset with ellipsis or new axes, or with %d indices "
                         "for rank %d, is not supported",
                         nb, r);
    int num_add = 0;
    for (int i = 0; i < nb; i++) num_add += !((ell >> i) & 1) && ((nam >> i) & 1);
    int n = r + num_add;
    if (n > TI__TSH_SS_MAX) return ti__kfail(k, TI_ERR_UNSUPPORTED, "%d effective dims", n);
    /* which effective dims the ellipsis covers and which are new axes */
    char is_ell[TI__TSH_SS_MAX] = {0}, is_new[TI__TSH_SS_MAX] = {0};
    int ell_start = n, expanded = 0;
    for (int i = 0; i < n;) {
        if (i < 32 && ((ell >> i) & 1)) {
            int end = TI__MAX(i + 1, TI__MIN(i + 1 + num_add + r - nb, n));
            ell_start = i;
            expanded = end - i - 1;
            for (; i < end; i++) is_ell[i] = 1;
            continue;
        }
        int o = i - expanded;
        is_new[i] = o >= 0 && o < 32 && ((nam >> o) & 1);
        i++;
    }
    int added_ell = 0, added_ax = 0;
    p->n = n;
    for (int i = 0; i < n; i++) {
        int64_t st0 = 0, en0 = 0, sd = 1, dim;
        int bmi = 1, emi = 1, shr = 0, xi = i - added_ax;
        if (is_new[i]) {
            en0 = 1;
            bmi = emi = 0;
            dim = 1;
            added_ax++;
        } else {
            if (xi < 0 || xi >= r)
                return ti__kfail(k, TI_ERR_BAD_MODEL, "the masks address more dims than rank %d",
                                 r);
            dim = x->shape[xi];
            if (is_ell[i])
                added_ell = TI__MAX(0, i - ell_start);
            else if (i < nb + expanded) {
                int o = i - added_ell;
                if (o < 0 || o >= nb) return ti__kfail(k, TI_ERR_BAD_MODEL, "inconsistent masks");
                st0 = b[o], en0 = e[o], sd = s[o];
                bmi = (bm >> o) & 1, emi = (em >> o) & 1, shr = (sam >> o) & 1;
            }
        }
        if (sd == 0) return ti__kfail(k, TI_ERR_BAD_MODEL, "stride of dim %d is 0", i);
        int64_t lo = sd > 0 ? 0 : -1, hi = sd > 0 ? dim : dim - 1;
        int64_t start = st0 < 0 ? st0 + dim : st0, end, cnt;
        start = start < lo ? lo : start > hi ? hi : start;
        if (bmi) start = sd > 0 ? 0 : dim - 1;
        if (shr) {
            /* TFLite reads element `start` (its loop skips it for negative strides or when
             * start is past the end and leaves the output unset; those are refused here) */
            if (start < 0 || start >= dim)
                return ti__kfail(k, TI_ERR_INVALID_ARGUMENT,
                                 "index %lld is out of range for dim %d of size %lld",
                                 (long long)st0, xi, (long long)dim);
            cnt = 1;
        } else {
            end = offset ? en0 + start : en0;
            if (end < 0) end += dim;
            end = end < lo ? lo : end > hi ? hi : end;
            if (emi) end = sd > 0 ? dim : -1;
            cnt = ti__tsh_ss_count(end - start, sd);
            if (offset && cnt != ti__tsh_ss_count(en0, sd))
                return ti__kfail(k, TI_ERR_INVALID_ARGUMENT,
                                 "slice of size %lld at %lld does not fit dim %d of size %lld",
                                 (long long)en0, (long long)st0, i, (long long)dim);
        }
        p->dims[i] = dim;
        p->start[i] = start;
        p->step[i] = sd;
        p->count[i] = cnt;
        p->keep[i] = (char)!shr;
    }
    return TI_OK;
}

TI__PRIVATE int ti__tsh_strided_slice_shape(ti__kctx *k) {
    ti__tsh_ss p;
    int r = ti__tsh_ss_plan(k, &p), o = 0;
    if (r != TI_OK) return r;
    int64_t d[TI__TSH_SS_MAX];
    size_t es;
    ti_status st = ti__mv_esize(k, k->in[0], &es);
    if (st != TI_OK) return st;
    for (int i = 0; i < p.n; i++)
        if (p.keep[i]) d[o++] = p.count[i];
    if (o > TI_MAX_DIMS) return ti__kfail(k, TI_ERR_UNSUPPORTED, "output rank %d is too large", o);
    return ti__mv_set(k, 0, k->in[0]->dtype, o, d);
}

TI__PRIVATE ti_status ti__tsh_strided_slice_run(ti__kctx *k) {
    ti__tsh_ss p;
    int r = ti__tsh_ss_plan(k, &p);
    if (r != TI_OK)
        return r == TI__NEED_VALUE ? ti__kfail(k, TI_ERR_BAD_MODEL, "slice bounds unknown")
                                   : (ti_status)r;
    int64_t xs[TI__TSH_SS_MAX], s[TI__TSH_SS_MAX], off = 0;
    ti__strides(p.n, p.dims, xs); /* dims of 1 (new axes) do not change the others' strides */
    for (int i = 0; i < p.n; i++) {
        if (p.count[i] == 0) return TI_OK;
        s[i] = xs[i] * p.step[i];
        off += p.start[i] * xs[i];
    }
    ti__mv_strided_copy(k, k->out[0]->data, k->in[0]->data, ti_dtype_size(k->in[0]->dtype), p.n,
                        p.count, s, off);
    return TI_OK;
}

/* SLICE: begin and size per dim; size -1 runs to the end. Out of range fails (as TFLite). */
TI__PRIVATE int ti__tsh_slice_plan(ti__kctx *k, int64_t *b, int64_t *sz) {
    for (int i = 0; i < 3; i++) TI__REQUIRE_INPUT(k, i);
    TI__NEED(k, k->in[1]);
    TI__NEED(k, k->in[2]);
    const ti_tensor *x = k->in[0];
    int nb, ns;
    ti_status st;
    if ((st = ti__tsh_ints(k, 1, "begin", b, TI_MAX_DIMS, &nb)) != TI_OK ||
        (st = ti__tsh_ints(k, 2, "size", sz, TI_MAX_DIMS, &ns)) != TI_OK)
        return st;
    if (nb != x->rank || ns != x->rank)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "begin and size have %d and %d values for rank %d",
                         nb, ns, x->rank);
    for (int i = 0; i < x->rank; i++) {
        if (sz[i] == -1) sz[i] = x->shape[i] - b[i];
        if (b[i] < 0 || sz[i] < 0 || b[i] + sz[i] > x->shape[i])
            return ti__kfail(k, TI_ERR_INVALID_ARGUMENT,
                             "dim %d: begin %lld size %lld is outside 0..%lld", i, (long long)b[i],
                             (long long)sz[i], (long long)x->shape[i]);
    }
    return TI_OK;
}

TI__PRIVATE int ti__tsh_slice_shape(ti__kctx *k) {
    int64_t b[TI_MAX_DIMS], sz[TI_MAX_DIMS];
    int r = ti__tsh_slice_plan(k, b, sz);
    if (r != TI_OK) return r;
    size_t es;
    ti_status st = ti__mv_esize(k, k->in[0], &es);
    if (st != TI_OK) return st;
    return ti__mv_set(k, 0, k->in[0]->dtype, k->in[0]->rank, sz);
}

TI__PRIVATE ti_status ti__tsh_slice_run(ti__kctx *k) {
    int64_t b[TI_MAX_DIMS], sz[TI_MAX_DIMS], xs[TI_MAX_DIMS], off = 0;
    int r = ti__tsh_slice_plan(k, b, sz);
    if (r != TI_OK)
        return r == TI__NEED_VALUE ? ti__kfail(k, TI_ERR_BAD_MODEL, "slice bounds unknown")
                                   : (ti_status)r;
    const ti_tensor *x = k->in[0];
    ti__strides(x->rank, x->shape, xs);
    for (int i = 0; i < x->rank; i++) off += b[i] * xs[i];
    ti__mv_strided_copy(k, k->out[0]->data, x->data, ti_dtype_size(x->dtype), x->rank, sz, xs, off);
    return TI_OK;
}

/* ---- GATHER, GATHER_ND ----------------------------------------------------------------- */

TI__PRIVATE int ti__tsh_gather_params(ti__kctx *k, int *axis, int *bd) {
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    const ti_tensor *x = k->in[0], *ix = k->in[1];
    if (!ti__dtype_is_int(ix->dtype))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "indices have dtype %s", ti_dtype_name(ix->dtype));
    ti_status st = ti__tsh_axis(k, ti__attr_i(k->node, "axis", 0), x->rank, "axis", axis);
    if (st != TI_OK) return st;
    int64_t b = ti__attr_i(k->node, "batch_dims", 0);
    if (b < 0) b += ix->rank;
    if (b < 0 || b > *axis || b > ix->rank)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "batch_dims %lld with axis %d and indices of rank %d",
                         (long long)ti__attr_i(k->node, "batch_dims", 0), *axis, ix->rank);
    *bd = (int)b;
    for (int i = 0; i < *bd; i++)
        if (x->shape[i] != ix->shape[i])
            return ti__kfail(k, TI_ERR_BAD_MODEL, "batch dim %d: params %lld, indices %lld", i,
                             (long long)x->shape[i], (long long)ix->shape[i]);
    return TI_OK;
}

TI__PRIVATE int ti__tsh_gather_shape(ti__kctx *k) {
    int axis, bd, o = 0;
    int r = ti__tsh_gather_params(k, &axis, &bd);
    if (r != TI_OK) return r;
    const ti_tensor *x = k->in[0], *ix = k->in[1];
    int64_t d[3 * TI_MAX_DIMS];
    size_t es;
    ti_status st = ti__mv_esize(k, x, &es);
    if (st != TI_OK) return st;
    for (int i = 0; i < axis; i++) d[o++] = x->shape[i];
    for (int i = bd; i < ix->rank; i++) d[o++] = ix->shape[i];
    for (int i = axis + 1; i < x->rank; i++) d[o++] = x->shape[i];
    if (o > TI_MAX_DIMS) return ti__kfail(k, TI_ERR_UNSUPPORTED, "output rank %d is too large", o);
    return ti__mv_set(k, 0, x->dtype, o, d);
}

TI__PRIVATE ti_status ti__tsh_gather_run(ti__kctx *k) {
    int axis, bd;
    int r = ti__tsh_gather_params(k, &axis, &bd);
    if (r != TI_OK) return (ti_status)r;
    const ti_tensor *x = k->in[0], *ix = k->in[1];
    size_t es = ti_dtype_size(x->dtype);
    size_t batch = ti__tsh_prod(x->shape, 0, bd), outer = ti__tsh_prod(x->shape, bd, axis);
    size_t inner = ti__tsh_prod(x->shape, axis + 1, x->rank) * es,
           cs = ti__tsh_prod(ix->shape, bd, ix->rank);
    int64_t dim = x->shape[axis];
    const unsigned char *src = (const unsigned char *)x->data;
    unsigned char *dst = (unsigned char *)k->out[0]->data;
    for (size_t b = 0; b < batch; b++)
        for (size_t o = 0; o < outer; o++)
            for (size_t i = 0; i < cs; i++, dst += inner) {
                int64_t c = ti__get_i64(ix, b * cs + i);
                if (c < 0 || c >= dim)
                    return ti__kfail(k, TI_ERR_INVALID_ARGUMENT,
                                     "index %lld is out of range [0, %lld)", (long long)c,
                                     (long long)dim);
                if (inner != 0)
                    memcpy(dst, src + (((b * outer) + o) * (size_t)dim + (size_t)c) * inner, inner);
            }
    return TI_OK;
}

TI__PRIVATE int ti__tsh_gather_nd_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    const ti_tensor *x = k->in[0], *ix = k->in[1];
    if (!ti__dtype_is_int(ix->dtype))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "indices have dtype %s", ti_dtype_name(ix->dtype));
    if (ix->rank < 1) return ti__kfail(k, TI_ERR_BAD_MODEL, "indices must have rank >= 1");
    int64_t nd = ix->shape[ix->rank - 1], d[2 * TI_MAX_DIMS];
    if (nd > x->rank)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "index depth %lld exceeds params rank %d",
                         (long long)nd, x->rank);
    int o = 0;
    for (int i = 0; i < ix->rank - 1; i++) d[o++] = ix->shape[i];
    for (int i = (int)nd; i < x->rank; i++) d[o++] = x->shape[i];
    size_t es;
    ti_status st = ti__mv_esize(k, x, &es);
    if (st != TI_OK) return st;
    if (o > TI_MAX_DIMS) return ti__kfail(k, TI_ERR_UNSUPPORTED, "output rank %d is too large", o);
    return ti__mv_set(k, 0, x->dtype, o, d);
}

TI__PRIVATE ti_status ti__tsh_gather_nd_run(ti__kctx *k) {
    const ti_tensor *x = k->in[0], *ix = k->in[1];
    int nd = (int)ix->shape[ix->rank - 1];
    int64_t xs[TI_MAX_DIMS];
    size_t es = ti_dtype_size(x->dtype), slice = ti__tsh_prod(x->shape, nd, x->rank) * es;
    size_t n = ti__tsh_prod(ix->shape, 0, ix->rank - 1);
    ti__strides(x->rank, x->shape, xs);
    unsigned char *dst = (unsigned char *)k->out[0]->data;
    for (size_t i = 0; i < n; i++, dst += slice) {
        int64_t from = 0;
        for (int j = 0; j < nd; j++) {
            int64_t c = ti__get_i64(ix, i * (size_t)nd + (size_t)j);
            if (c < 0 || c >= x->shape[j])
                return ti__kfail(k, TI_ERR_INVALID_ARGUMENT,
                                 "index %lld is out of range [0, %lld) for dim %d", (long long)c,
                                 (long long)x->shape[j], j);
            from += c * xs[j];
        }
        if (slice != 0) memcpy(dst, (const unsigned char *)x->data + (size_t)from * es, slice);
    }
    return TI_OK;
}

/* ---- DEPTH_TO_SPACE, SPACE_TO_DEPTH (NHWC) --------------------------------------------- */

TI__PRIVATE int ti__tsh_d2s_check(ti__kctx *k, int64_t *bs) {
    TI__REQUIRE_INPUT(k, 0);
    const ti_tensor *x = k->in[0];
    *bs = ti__attr_i(k->node, "block_size", 0);
    if (x->rank != 4)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "input has rank %d, expected 4 (NHWC)", x->rank);
    if (*bs < 1 || *bs > 65536)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "block_size %lld", (long long)*bs);
    size_t es;
    return ti__mv_esize(k, x, &es);
}

TI__PRIVATE int ti__tsh_d2s_shape(ti__kctx *k) {
    int64_t bs = 1;
    int r = ti__tsh_d2s_check(k, &bs);
    if (r != TI_OK) return r;
    const int64_t *s = k->in[0]->shape;
    if (s[3] % (bs * bs) != 0)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "depth %lld is not a multiple of block_size^2 = %lld",
                         (long long)s[3], (long long)(bs * bs));
    int64_t d[4] = {s[0], s[1] * bs, s[2] * bs, s[3] / (bs * bs)};
    return ti__mv_set(k, 0, k->in[0]->dtype, 4, d);
}

TI__PRIVATE ti_status ti__tsh_d2s_run(ti__kctx *k) {
    const ti_tensor *x = k->in[0];
    int64_t bs = ti__attr_i(k->node, "block_size", 1), h = x->shape[1], w = x->shape[2],
            c = x->shape[3];
    int64_t co = c / (bs * bs);
    /* output as [N, H, bh, W, bw, Co] <- input [n, h, w, (bh * bs + bw) * Co + co] */
    int64_t d[6] = {x->shape[0], h, bs, w, bs, co};
    int64_t s[6] = {h * w * c, w * c, bs * co, c, co, 1};
    ti__mv_strided_copy(k, k->out[0]->data, x->data, ti_dtype_size(x->dtype), 6, d, s, 0);
    return TI_OK;
}

TI__PRIVATE int ti__tsh_s2d_shape(ti__kctx *k) {
    int64_t bs = 1;
    int r = ti__tsh_d2s_check(k, &bs);
    if (r != TI_OK) return r;
    const int64_t *s = k->in[0]->shape;
    if (s[1] % bs != 0 || s[2] % bs != 0)
        return ti__kfail(k, TI_ERR_BAD_MODEL,
                         "height %lld and width %lld must be multiples of block_size %lld",
                         (long long)s[1], (long long)s[2], (long long)bs);
    int64_t d[4] = {s[0], s[1] / bs, s[2] / bs, s[3] * bs * bs};
    return ti__mv_set(k, 0, k->in[0]->dtype, 4, d);
}

TI__PRIVATE ti_status ti__tsh_s2d_run(ti__kctx *k) {
    const ti_tensor *x = k->in[0];
    int64_t bs = ti__attr_i(k->node, "block_size", 1), h = x->shape[1], w = x->shape[2],
            c = x->shape[3];
    /* output as [N, Ho, Wo, bh, bw, C] <- input [n, ho * bs + bh, wo * bs + bw, c] */
    int64_t d[6] = {x->shape[0], h / bs, w / bs, bs, bs, c};
    int64_t s[6] = {h * w * c, bs * w * c, bs * c, w * c, c, 1};
    ti__mv_strided_copy(k, k->out[0]->data, x->data, ti_dtype_size(x->dtype), 6, d, s, 0);
    return TI_OK;
}

/* ---- SHAPE, FILL, ZEROS_LIKE, RANGE ---------------------------------------------------- */

/* out_type is a TFLite TensorType: INT32 = 2 (also when absent), INT64 = 4. */
TI__PRIVATE int ti__tsh_shape_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    int64_t t = ti__attr_i(k->node, "out_type", 2), d[1] = {k->in[0]->rank};
    if (t != 2 && t != 4)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "out_type %lld (only INT32 = 2 and INT64 = 4)",
                         (long long)t);
    return ti__mv_set(k, 0, t == 2 ? TI_DTYPE_I32 : TI_DTYPE_I64, 1, d);
}

TI__PRIVATE ti_status ti__tsh_shape_run(ti__kctx *k) {
    for (int i = 0; i < k->in[0]->rank; i++) ti__set_i64(k->out[0], (size_t)i, k->in[0]->shape[i]);
    return TI_OK;
}

TI__PRIVATE int ti__tsh_fill_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    const ti_tensor *v = k->in[1];
    int64_t d[TI_MAX_DIMS];
    int n;
    if (k->in[0]->rank != 1)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "dims has rank %d, expected 1", k->in[0]->rank);
    if (ti__numel(v) != 1)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "value has %lu elements, expected 1",
                         (unsigned long)ti__numel(v));
    TI__NEED(k, k->in[0]);
    size_t es;
    ti_status st = ti__mv_esize(k, v, &es);
    if (st != TI_OK || (st = ti__tsh_ints(k, 0, "dims", d, TI_MAX_DIMS, &n)) != TI_OK) return st;
    for (int i = 0; i < n; i++)
        if (d[i] < 0) return ti__kfail(k, TI_ERR_BAD_MODEL, "dims[%d] is %lld", i, (long long)d[i]);
    if (k->n_out > 0 && (st = ti__tsh_need_same_q(k, v, "value", k->out[0])) != TI_OK) return st;
    return ti__mv_set(k, 0, v->dtype, n, d);
}

TI__PRIVATE ti_status ti__tsh_fill_run(ti__kctx *k) {
    ti_tensor *y = k->out[0];
    ti__mv_fill(y->data, ti__numel(y), (const unsigned char *)k->in[1]->data,
                ti_dtype_size(y->dtype));
    return TI_OK;
}

TI__PRIVATE ti_status ti__tsh_zeros_like_run(ti__kctx *k) {
    if (k->out[0]->size_bytes != 0) memset(k->out[0]->data, 0, k->out[0]->size_bytes);
    return TI_OK;
}

/* RANGE: start, start + delta, ... up to limit; the values accumulate in the dtype, as in
 * TFLite (a float range adds delta repeatedly). */
TI__PRIVATE int ti__tsh_range_count(ti__kctx *k, int64_t *count) {
    for (int i = 0; i < 3; i++) {
        TI__REQUIRE_INPUT(k, i);
        if (k->in[i]->dtype != k->in[0]->dtype || ti__numel(k->in[i]) != 1)
            return ti__kfail(k, TI_ERR_BAD_MODEL,
                             "start, limit and delta must be scalars of one dtype");
    }
    ti_dtype dt = k->in[0]->dtype;
    if (dt != TI_DTYPE_F32 && dt != TI_DTYPE_I32 && dt != TI_DTYPE_I64)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "dtype %s (float32, int32, int64 only)",
                         ti_dtype_name(dt));
    for (int i = 0; i < 3; i++) TI__NEED(k, k->in[i]);
    double n;
    if (dt == TI_DTYPE_F32) {
        float s = *(const float *)k->in[0]->data, l = *(const float *)k->in[1]->data;
        float d = *(const float *)k->in[2]->data;
        if (d == 0.0f || !((s >= l && d < 0) || (s <= l && d > 0)))
            return ti__kfail(k, TI_ERR_BAD_MODEL, "start %g, limit %g, delta %g give no range", s,
                             l, d);
        n = ceil(fabs((double)((l - s) / d)));
    } else {
        int64_t s = ti__get_i64(k->in[0], 0), l = ti__get_i64(k->in[1], 0),
                d = ti__get_i64(k->in[2], 0);
        if (d == 0 || !((s >= l && d < 0) || (s <= l && d > 0)))
            return ti__kfail(k, TI_ERR_BAD_MODEL,
                             "start %lld, limit %lld, delta %lld give no range", (long long)s,
                             (long long)l, (long long)d);
        uint64_t span = s <= l ? (uint64_t)l - (uint64_t)s : (uint64_t)s - (uint64_t)l;
        uint64_t ad = d > 0 ? (uint64_t)d : 0 - (uint64_t)d;
        n = (double)(span / ad + (span % ad != 0));
    }
    if (!(n <= (double)((int64_t)1 << 40)))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "range of %g elements is too large", n);
    *count = (int64_t)n;
    return TI_OK;
}

TI__PRIVATE int ti__tsh_range_shape(ti__kctx *k) {
    int64_t n;
    int r = ti__tsh_range_count(k, &n);
    if (r != TI_OK) return r;
    return ti__mv_set(k, 0, k->in[0]->dtype, 1, &n);
}

TI__PRIVATE ti_status ti__tsh_range_run(ti__kctx *k) {
    ti_tensor *y = k->out[0];
    size_t n = ti__numel(y);
    if (y->dtype == TI_DTYPE_F32) {
        float v = *(const float *)k->in[0]->data, d = *(const float *)k->in[2]->data;
        for (size_t i = 0; i < n; i++, v += d) ((float *)y->data)[i] = v;
    } else { /* wraps like the int32 / int64 arithmetic of TFLite, without signed overflow */
        uint64_t v = (uint64_t)ti__get_i64(k->in[0], 0), d = (uint64_t)ti__get_i64(k->in[2], 0);
        for (size_t i = 0; i < n; i++, v += d) ti__set_i64(y, i, (int64_t)v);
    }
    return TI_OK;
}

/* ---- TILE, BROADCAST_TO ---------------------------------------------------------------- */

TI__PRIVATE int ti__tsh_tile_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    TI__NEED(k, k->in[1]);
    const ti_tensor *x = k->in[0];
    int64_t m[TI_MAX_DIMS], d[TI_MAX_DIMS];
    int n;
    size_t es;
    ti_status st = ti__mv_esize(k, x, &es);
    if (st != TI_OK || (st = ti__tsh_ints(k, 1, "multiples", m, TI_MAX_DIMS, &n)) != TI_OK)
        return st;
    if (n != x->rank)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "multiples has %d values for rank %d", n, x->rank);
    for (int i = 0; i < n; i++) {
        if (m[i] < 0 || (x->shape[i] != 0 && m[i] > ((int64_t)1 << 46) / x->shape[i]))
            return ti__kfail(k, TI_ERR_BAD_MODEL, "multiples[%d] is %lld", i, (long long)m[i]);
        d[i] = x->shape[i] * m[i];
    }
    return ti__mv_set(k, 0, x->dtype, n, d);
}

TI__PRIVATE ti_status ti__tsh_tile_run(ti__kctx *k) {
    const ti_tensor *x = k->in[0], *y = k->out[0];
    int64_t xs[TI_MAX_DIMS], d[2 * TI_MAX_DIMS], s[2 * TI_MAX_DIMS];
    ti__strides(x->rank, x->shape, xs);
    /* a gather of shape [rep0, d0, rep1, d1, ...], the repeats with stride 0 */
    for (int i = 0; i < x->rank; i++) {
        d[2 * i] = x->shape[i] == 0 ? 0 : y->shape[i] / x->shape[i];
        s[2 * i] = 0;
        d[2 * i + 1] = x->shape[i];
        s[2 * i + 1] = xs[i];
    }
    ti__mv_strided_copy(k, y->data, x->data, ti_dtype_size(x->dtype), 2 * x->rank, d, s, 0);
    return TI_OK;
}

TI__PRIVATE int ti__tsh_broadcast_to_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    if (k->in[1]->rank != 1)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "shape has rank %d, expected 1", k->in[1]->rank);
    TI__NEED(k, k->in[1]);
    const ti_tensor *x = k->in[0];
    int64_t d[TI_MAX_DIMS];
    int n;
    size_t es;
    ti_status st = ti__mv_esize(k, x, &es);
    if (st != TI_OK || (st = ti__tsh_ints(k, 1, "shape", d, TI_MAX_DIMS, &n)) != TI_OK) return st;
    if (n < x->rank)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "shape has rank %d, below the input's %d", n,
                         x->rank);
    for (int i = 0; i < n; i++) {
        int64_t xd = i < n - x->rank ? 1 : x->shape[i - (n - x->rank)];
        if (d[i] < 0 || (xd != 1 && xd != d[i]))
            return ti__kfail(k, TI_ERR_BAD_MODEL, "cannot broadcast dim of %lld to %lld",
                             (long long)xd, (long long)d[i]);
    }
    return ti__mv_set(k, 0, x->dtype, n, d);
}

TI__PRIVATE ti_status ti__tsh_broadcast_to_run(ti__kctx *k) {
    const ti_tensor *x = k->in[0], *y = k->out[0];
    int64_t xs[TI_MAX_DIMS], s[TI_MAX_DIMS];
    int lead = y->rank - x->rank;
    ti__strides(x->rank, x->shape, xs);
    for (int i = 0; i < y->rank; i++) s[i] = i < lead || x->shape[i - lead] == 1 ? 0 : xs[i - lead];
    ti__mv_strided_copy(k, y->data, x->data, ti_dtype_size(x->dtype), y->rank, y->shape, s, 0);
    return TI_OK;
}

TI__PRIVATE const ti__op ti__ops_tfl_shape[] = {
    {"CONCATENATION", ti__tsh_concat_shape, ti__tsh_concat_run, NULL, 0},
    {"RESHAPE", ti__tsh_reshape_shape, ti__mv_copy_run, NULL, 0},
    {"SQUEEZE", ti__tsh_squeeze_shape, ti__mv_copy_run, NULL, 0},
    {"EXPAND_DIMS", ti__tsh_expand_dims_shape, ti__mv_copy_run, NULL, 0},
    {"TRANSPOSE", ti__tsh_transpose_shape, ti__tsh_transpose_run, NULL, 0},
    {"PAD", ti__tsh_pad_shape, ti__tsh_pad_run, NULL, 0},
    {"PADV2", ti__tsh_pad_shape, ti__tsh_pad_run, NULL, 0},
    {"MIRROR_PAD", ti__tsh_mirror_shape, ti__tsh_mirror_run, NULL, 0},
    {"STRIDED_SLICE", ti__tsh_strided_slice_shape, ti__tsh_strided_slice_run, NULL, 0},
    {"SLICE", ti__tsh_slice_shape, ti__tsh_slice_run, NULL, 0},
    {"GATHER", ti__tsh_gather_shape, ti__tsh_gather_run, NULL, 0},
    {"GATHER_ND", ti__tsh_gather_nd_shape, ti__tsh_gather_nd_run, NULL, 0},
    {"SPLIT", ti__tsh_split_shape, ti__tsh_split_run, NULL, 0},
    {"SPLIT_V", ti__tsh_splitv_shape, ti__tsh_splitv_run, NULL, 0},
    {"PACK", ti__tsh_pack_shape, ti__tsh_pack_run, NULL, 0},
    {"UNPACK", ti__tsh_unpack_shape, ti__tsh_unpack_run, NULL, 0},
    {"DEPTH_TO_SPACE", ti__tsh_d2s_shape, ti__tsh_d2s_run, NULL, 0},
    {"SPACE_TO_DEPTH", ti__tsh_s2d_shape, ti__tsh_s2d_run, NULL, 0},
    {"SHAPE", ti__tsh_shape_shape, ti__tsh_shape_run, NULL, TI__OP_SHAPE_ONLY},
    {"FILL", ti__tsh_fill_shape, ti__tsh_fill_run, NULL, 0},
    {"TILE", ti__tsh_tile_shape, ti__tsh_tile_run, NULL, 0},
    {"BROADCAST_TO", ti__tsh_broadcast_to_shape, ti__tsh_broadcast_to_run, NULL, 0},
    {"ZEROS_LIKE", ti__tsh_same_shape, ti__tsh_zeros_like_run, NULL, 0},
    {"REVERSE_V2", ti__tsh_reverse_shape, ti__tsh_reverse_run, NULL, 0},
    {"RANGE", ti__tsh_range_shape, ti__tsh_range_run, NULL, 0},
    {NULL, NULL, NULL, NULL, 0}};
