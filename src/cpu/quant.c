/* Linear quantization: QuantizeLinear, DequantizeLinear (per-tensor, per-axis and blocked),
 * DynamicQuantizeLinear, QLinearMatMul and QLinearConv. Integer types int8/uint8/int16/
 * uint16 (and int32 for DequantizeLinear); float8/int4/int2 tensors reach here with an
 * unknown dtype and are refused. Rounding is half to even (nearbyint in the default
 * rounding mode), results saturate to the integer range. QLinear* accumulate exact int32
 * dot products of zero-point-corrected values and requantize with the float multiplier
 * a_scale * b_scale / y_scale, as the ONNX reference does. Relies on internal.h,
 * core/tensor.c and the thread pool. Must not allocate in a run function. */

/* Range of an integer quantized dtype; 0 when dt is not one. */
TI__PRIVATE int ti__q_range(ti_dtype dt, int64_t *lo, int64_t *hi) {
    switch (dt) {
    case TI_DTYPE_U8: *lo = 0, *hi = 255; return 1;
    case TI_DTYPE_I8: *lo = -128, *hi = 127; return 1;
    case TI_DTYPE_U16: *lo = 0, *hi = 65535; return 1;
    case TI_DTYPE_I16: *lo = -32768, *hi = 32767; return 1;
    case TI_DTYPE_I32: *lo = INT32_MIN, *hi = INT32_MAX; return 1;
    default: *lo = 0, *hi = 0; return 0;
    }
}

/* v rounded to the precision of float dtype dt (float64 and others: unchanged). */
TI__PRIVATE double ti__q_rnd(ti_dtype dt, double v) {
    switch (dt) {
    case TI_DTYPE_F32: return (double)(float)v;
    case TI_DTYPE_F16: return ti__f16_to_f32(ti__f32_to_f16((float)v));
    case TI_DTYPE_BF16: return ti__bf16_to_f32(ti__f32_to_bf16((float)v));
    default: return v;
    }
}

/* Round half to even, then saturate to [lo, hi]; NaN gives lo (numpy's int cast of NaN,
 * then clip). */
TI__PRIVATE int64_t ti__q_sat(double v, int64_t lo, int64_t hi) {
    if (v != v) return lo;
    v = nearbyint(v);
    if (v <= (double)lo) return lo;
    if (v >= (double)hi) return hi;
    return (int64_t)v;
}

/* ---- QuantizeLinear / DequantizeLinear ----------------------------------------------- */
/* Where element i of x finds its scale and zero point: per tensor (one value), per axis
 * (scale [dim]) or blocked (scale shaped like x with ceil(dim / block) along axis). */
typedef struct ti__qmap {
    int mode; /* 0 per tensor, 1 per axis, 2 blocked */
    size_t dim, inner;
    int64_t block, sdim;
} ti__qmap;

TI__PRIVATE size_t ti__qmap_index(const ti__qmap *m, size_t i) {
    if (m->mode == 0) return 0;
    size_t a = (i / m->inner) % m->dim;
    if (m->mode == 1) return a;
    size_t o = i / (m->dim * m->inner), in = i % m->inner;
    return (o * (size_t)m->sdim + a / (size_t)m->block) * m->inner + in;
}

/* Validates scale (input 1) and zero point (input 2, optional) against x (input 0). */
TI__PRIVATE int ti__qmap_setup(ti__kctx *k, ti__qmap *m) {
    const ti_tensor *x = k->in[0], *s = k->in[1];
    const ti_tensor *zp = k->n_in > 2 ? k->in[2] : NULL;
    memset(m, 0, sizeof *m);
    int64_t block = ti__attr_i(k->node, "block_size", 0);
    if (zp != NULL) {
        int same = zp->rank == s->rank;
        for (int i = 0; same && i < s->rank; i++) same = zp->shape[i] == s->shape[i];
        if (!same && !(ti__numel(zp) == 1 && ti__numel(s) == 1))
            return ti__kfail(k, TI_ERR_BAD_MODEL, "zero point shape differs from scale shape");
    }
    if (block < 0)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "block_size %lld is negative", (long long)block);
    if (ti__numel(s) == 1 && block == 0) return TI_OK; /* per tensor */
    int64_t axis = ti__attr_i(k->node, "axis", 1);
    if (axis < -(int64_t)x->rank || axis >= x->rank)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "axis %lld is out of range for rank %d",
                         (long long)axis, x->rank);
    if (axis < 0) axis += x->rank;
    m->dim = (size_t)x->shape[axis];
    m->inner = 1;
    for (int i = (int)axis + 1; i < x->rank; i++) m->inner *= (size_t)x->shape[i];
    if (block == 0) {
        if (s->rank != 1 || s->shape[0] != x->shape[axis])
            return ti__kfail(k, TI_ERR_BAD_MODEL,
                             "per-axis scale has %zu values (rank %d), expected shape [%lld] "
                             "(x dim %lld)",
                             ti__numel(s), s->rank, (long long)x->shape[axis], (long long)axis);
        m->mode = 1;
        return TI_OK;
    }
    if (s->rank != x->rank)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "blocked scale has rank %d, x has rank %d", s->rank,
                         x->rank);
    for (int i = 0; i < x->rank; i++) {
        if (i == axis) continue;
        if (s->shape[i] != x->shape[i])
            return ti__kfail(k, TI_ERR_BAD_MODEL, "blocked scale dim %d is %lld, x has %lld", i,
                             (long long)s->shape[i], (long long)x->shape[i]);
    }
    m->sdim = s->shape[axis];
    if (m->sdim * block < x->shape[axis] ||
        (m->sdim - 1) * block >= x->shape[axis])
        return ti__kfail(k, TI_ERR_BAD_MODEL,
                         "block_size %lld does not cover dim %lld with %lld blocks",
                         (long long)block, (long long)x->shape[axis], (long long)m->sdim);
    m->block = block;
    m->mode = 2;
    return TI_OK;
}

TI__PRIVATE int ti__quant_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    const ti_tensor *x = k->in[0], *s = k->in[1];
    const ti_tensor *zp = k->n_in > 2 ? k->in[2] : NULL;
    if (!ti__dtype_is_float(x->dtype) && x->dtype != TI_DTYPE_I32)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "x dtype %s is not supported",
                         ti_dtype_name(x->dtype));
    if (!ti__dtype_is_float(s->dtype))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "scale dtype %s is not supported",
                         ti_dtype_name(s->dtype));
    ti_dtype out = TI_DTYPE_U8;
    const ti__attr *od = ti__attr_get(k->node, "output_dtype");
    if (od != NULL && od->i != 0) {
        out = ti__onnx_dtype(od->i);
        if (out != TI_DTYPE_U8 && out != TI_DTYPE_I8 && out != TI_DTYPE_U16 && out != TI_DTYPE_I16)
            return ti__kfail(k, TI_ERR_UNSUPPORTED,
                             "output_dtype %lld is not supported (uint8, int8, uint16, int16)",
                             (long long)od->i);
    }
    if (zp != NULL) {
        if (od != NULL && od->i != 0 && zp->dtype != out)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "output_dtype differs from zero point dtype %s",
                             ti_dtype_name(zp->dtype));
        out = zp->dtype;
    }
    int64_t lo, hi;
    if (out == TI_DTYPE_I32 || !ti__q_range(out, &lo, &hi))
        return ti__kfail(k, TI_ERR_UNSUPPORTED,
                         "quantized type %s is not supported (uint8, int8, uint16, int16)",
                         ti_dtype_name(out));
    ti__qmap m;
    int r = ti__qmap_setup(k, &m);
    if (r != TI_OK) return r;
    if (k->n_out > 0 && k->out[0] != NULL && !ti__set_shape(k->out[0], out, x->rank, x->shape))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid output shape");
    return TI_OK;
}

TI__PRIVATE ti_status ti__quant_run(ti__kctx *k) {
    ti__qmap m;
    int r = ti__qmap_setup(k, &m);
    if (r != TI_OK) return (ti_status)r;
    const ti_tensor *x = k->in[0], *s = k->in[1];
    const ti_tensor *zp = k->n_in > 2 ? k->in[2] : NULL;
    ti_tensor *y = k->out[0];
    int64_t lo, hi;
    ti__q_range(y->dtype, &lo, &hi);
    /* x / scale is computed in the precision attribute's type, else the scale's type */
    ti_dtype prec = s->dtype;
    const ti__attr *pa = ti__attr_get(k->node, "precision");
    if (pa != NULL && pa->i != 0) {
        prec = ti__onnx_dtype(pa->i);
        if (!ti__dtype_is_float(prec))
            return ti__kfail(k, TI_ERR_UNSUPPORTED, "precision %lld is not a float type",
                             (long long)pa->i);
    }
    size_t n = ti__numel(x);
    for (size_t i = 0; i < n; i++) {
        size_t si = ti__qmap_index(&m, i);
        double xv = ti__q_rnd(prec, ti__get_f64(x, i));
        double q = ti__q_rnd(prec, xv / ti__q_rnd(prec, ti__get_f64(s, si)));
        if (q == q) q = nearbyint(q);
        if (zp != NULL) q += (double)ti__get_i64(zp, si);
        ti__set_i64(y, i, ti__q_sat(q, lo, hi));
    }
    return TI_OK;
}

TI__PRIVATE int ti__dequant_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    const ti_tensor *x = k->in[0], *s = k->in[1];
    const ti_tensor *zp = k->n_in > 2 ? k->in[2] : NULL;
    int64_t lo, hi;
    if (!ti__q_range(x->dtype, &lo, &hi))
        return ti__kfail(k, TI_ERR_UNSUPPORTED,
                         "x dtype %s is not supported (int8, uint8, int16, uint16, int32)",
                         ti_dtype_name(x->dtype));
    if (zp != NULL && zp->dtype != x->dtype)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "zero point dtype %s differs from x dtype %s",
                         ti_dtype_name(zp->dtype), ti_dtype_name(x->dtype));
    if (!ti__dtype_is_float(s->dtype))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "scale dtype %s is not supported",
                         ti_dtype_name(s->dtype));
    ti_dtype out = s->dtype;
    int64_t od = ti__attr_i(k->node, "output_dtype", 0);
    if (od != 0) {
        out = ti__onnx_dtype(od);
        if (!ti__dtype_is_float(out))
            return ti__kfail(k, TI_ERR_UNSUPPORTED, "output_dtype %lld is not a float type",
                             (long long)od);
    }
    ti__qmap m;
    int r = ti__qmap_setup(k, &m);
    if (r != TI_OK) return r;
    if (k->n_out > 0 && k->out[0] != NULL && !ti__set_shape(k->out[0], out, x->rank, x->shape))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid output shape");
    return TI_OK;
}

TI__PRIVATE ti_status ti__dequant_run(ti__kctx *k) {
    ti__qmap m;
    int r = ti__qmap_setup(k, &m);
    if (r != TI_OK) return (ti_status)r;
    const ti_tensor *x = k->in[0], *s = k->in[1];
    const ti_tensor *zp = k->n_in > 2 ? k->in[2] : NULL;
    ti_tensor *y = k->out[0];
    size_t n = ti__numel(x);
    /* (float32(x) - zp) * scale in float32, then the output type (ONNX reference) */
    for (size_t i = 0; i < n; i++) {
        size_t si = ti__qmap_index(&m, i);
        float d = (float)ti__get_i64(x, i);
        if (zp != NULL) d -= (float)ti__get_i64(zp, si);
        ti__set_f64(y, i, (double)(d * (float)ti__get_f64(s, si)));
    }
    return TI_OK;
}

/* ---- DynamicQuantizeLinear ----------------------------------------------------------- */
/* uint8 asymmetric quantization with scale = (max(0, max x) - min(0, min x)) / 255 and
 * zero point = round(clamp(-min / scale, 0, 255)); float32 arithmetic as the spec. */

TI__PRIVATE int ti__dynq_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    const ti_tensor *x = k->in[0];
    if (!ti__dtype_is_float(x->dtype))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "x dtype %s: float types only",
                         ti_dtype_name(x->dtype));
    if (k->n_out > 0 && k->out[0] != NULL && !ti__set_shape(k->out[0], TI_DTYPE_U8, x->rank, x->shape))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid output shape");
    if (k->n_out > 1 && k->out[1] != NULL && !ti__set_shape(k->out[1], x->dtype, 0, NULL))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid y_scale shape");
    if (k->n_out > 2 && k->out[2] != NULL && !ti__set_shape(k->out[2], TI_DTYPE_U8, 0, NULL))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid y_zero_point shape");
    return TI_OK;
}

TI__PRIVATE ti_status ti__dynq_run(ti__kctx *k) {
    const ti_tensor *x = k->in[0];
    size_t n = ti__numel(x);
    float mx = 0.0f, mn = 0.0f;
    for (size_t i = 0; i < n; i++) {
        float v = (float)ti__get_f64(x, i);
        if (v > mx) mx = v;
        if (v < mn) mn = v;
    }
    float scale = (mx == mn ? 1.0f : mx - mn) / 255.0f;
    float zpf = 0.0f - mn / scale;
    zpf = zpf < 0.0f ? 0.0f : (zpf > 255.0f ? 255.0f : zpf);
    float zp = nearbyintf(zpf);
    if (k->n_out > 0 && k->out[0] != NULL) {
        uint8_t *y = (uint8_t *)k->out[0]->data;
        for (size_t i = 0; i < n; i++) {
            float q = nearbyintf((float)ti__get_f64(x, i) / scale) + zp;
            y[i] = (uint8_t)ti__q_sat((double)q, 0, 255);
        }
    }
    if (k->n_out > 1 && k->out[1] != NULL) ti__set_f64(k->out[1], 0, (double)scale);
    if (k->n_out > 2 && k->out[2] != NULL) ((uint8_t *)k->out[2]->data)[0] = (uint8_t)zp;
    return TI_OK;
}

/* Clamp range of a quantized output of dtype dt with zero point yz and scale ys, narrowed by
 * the activation the fusion pass folded into the node (Relu, Clip; applied to the float
 * value it equals clamping the quantized one, Q being monotonic). */
TI__PRIVATE void ti__q_out_range(const ti__node *nd, ti_dtype dt, int64_t yz, const ti_tensor *ys,
                                 int32_t *lo, int32_t *hi) {
    int64_t l, h;
    ti__q_range(dt, &l, &h);
    if (nd->act == TI__ACT_RELU || nd->act == TI__ACT_CLIP) {
        double s = ti__get_f64(ys, 0);
        ti_dtype sd = ys->dtype;
        int64_t ql = nd->act == TI__ACT_RELU ? yz
                                             : ti__q_sat(ti__q_rnd(sd, (double)nd->act_a / s) + (double)yz, l, h);
        if (ql > l) l = ql;
        if (nd->act == TI__ACT_CLIP) {
            int64_t qh = ti__q_sat(ti__q_rnd(sd, (double)nd->act_b / s) + (double)yz, l, h);
            if (qh < h) h = qh;
        }
    }
    *lo = (int32_t)l;
    *hi = (int32_t)(h < l ? l : h);
}

/* ONNX requantization per channel: real[c] = x_scale * w_scale[c] / y_scale in the scales'
 * (float) precision, as the reference; in scratch. */
TI__PRIVATE void ti__q_onnx_reals(double *real, size_t nc, const ti_tensor *xs, const ti_tensor *ws,
                                  const ti_tensor *ys) {
    ti_dtype sd = xs->dtype;
    double x = ti__get_f64(xs, 0), y = ti__get_f64(ys, 0);
    for (size_t c = 0; c < nc; c++)
        real[c] = ti__q_rnd(sd, ti__q_rnd(sd, x * ti__get_f64(ws, ti__numel(ws) == 1 ? 0 : c)) / y);
}

/* The ONNX requantization of nc channels into *rq: the multipliers packed at planning when
 * the scales were constant, else computed into the start of the scratch (*rq_bytes of it).
 * 0 when the scratch is too small. */
TI__PRIVATE int ti__q_onnx_rq(ti__kctx *k, size_t nc, const ti_tensor *xs, const ti_tensor *ws,
                              const ti_tensor *ys, ti__qrq *rq, size_t *rq_bytes) {
    const ti__qpack *pk = ti__qpack_rq(k->node, nc);
    memset(rq, 0, sizeof *rq);
    rq->mode = TI__QRQ_ONNX;
    *rq_bytes = pk != NULL ? 0 : ti__qg_rq_bytes(nc);
    if (pk != NULL) {
        rq->real = pk->real;
        return 1;
    }
    if (*rq_bytes > 0 && (k->scratch == NULL || k->scratch_bytes < *rq_bytes)) return 0;
    ti__q_onnx_reals((double *)k->scratch, nc, xs, ws, ys);
    rq->real = (const double *)k->scratch;
    return 1;
}

/* ---- QLinearMatMul ------------------------------------------------------------------- */
/* Inputs a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point.
 * Numpy matmul shapes (rank-1 operands promoted, batch dims broadcast). a's scale and zero
 * point are per tensor; b's (and y's) per tensor or per output column [N]. */

typedef struct ti__qmm {
    int64_t m, kd, n;
    int rank;                       /* of the output */
    int64_t batch[TI_MAX_DIMS];     /* output batch dims */
    int nb;                         /* number of batch dims */
    int64_t astr[TI_MAX_DIMS], bstr[TI_MAX_DIMS]; /* batch strides in matrices, 0 = broadcast */
} ti__qmm;

TI__PRIVATE int ti__qmm_setup(ti__kctx *k, ti__qmm *p, int set_outputs) {
    for (int i = 0; i < 8; i++) {
        if (i == 2 || i == 5 || i == 7) continue; /* zero points are optional before opset 21 */
        TI__REQUIRE_INPUT(k, i);
    }
    const ti_tensor *a = k->in[0], *b = k->in[3];
    const ti_tensor *azp = k->in[2], *bzp = k->in[5], *yzp = k->n_in > 7 ? k->in[7] : NULL;
    int64_t lo, hi;
    if ((a->dtype != TI_DTYPE_U8 && a->dtype != TI_DTYPE_I8) ||
        (b->dtype != TI_DTYPE_U8 && b->dtype != TI_DTYPE_I8))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "a/b dtypes %s/%s: int8 or uint8 only",
                         ti_dtype_name(a->dtype), ti_dtype_name(b->dtype));
    if ((azp != NULL && azp->dtype != a->dtype) || (bzp != NULL && bzp->dtype != b->dtype))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "zero point dtypes differ from a/b dtypes");
    ti_dtype out = yzp != NULL ? yzp->dtype : a->dtype;
    if (!ti__q_range(out, &lo, &hi) || out == TI_DTYPE_I32)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "y dtype %s is not supported", ti_dtype_name(out));
    static const int scale_inputs[3] = {1, 4, 6};
    for (int i = 0; i < 3; i++) {
        const ti_tensor *s = k->in[scale_inputs[i]];
        if (!ti__dtype_is_float(s->dtype))
            return ti__kfail(k, TI_ERR_UNSUPPORTED, "scale dtype %s is not a float type",
                             ti_dtype_name(s->dtype));
    }
    if (a->rank < 1 || b->rank < 1)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "a and b must have rank >= 1");
    p->m = a->rank >= 2 ? a->shape[a->rank - 2] : 1;
    p->kd = a->shape[a->rank - 1];
    int64_t bk = b->rank >= 2 ? b->shape[b->rank - 2] : b->shape[0];
    p->n = b->rank >= 2 ? b->shape[b->rank - 1] : 1;
    if (bk != p->kd)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "inner dims differ: a has %lld, b has %lld",
                         (long long)p->kd, (long long)bk);
    int ra = a->rank >= 2 ? a->rank - 2 : 0, rb = b->rank >= 2 ? b->rank - 2 : 0;
    if (!ti__broadcast_shape(ra, a->shape, rb, b->shape, &p->nb, p->batch))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "batch dims of a and b do not broadcast");
    /* batch strides (in whole matrices) of a and b, aligned to the right */
    int64_t sa = 1, sb = 1;
    for (int i = p->nb - 1; i >= 0; i--) {
        int ia = i - (p->nb - ra), ib = i - (p->nb - rb);
        int64_t da = ia >= 0 ? a->shape[ia] : 1, db = ib >= 0 ? b->shape[ib] : 1;
        p->astr[i] = da == 1 ? 0 : sa;
        p->bstr[i] = db == 1 ? 0 : sb;
        sa *= da;
        sb *= db;
    }
    const ti_tensor *per[5];
    per[0] = k->in[1], per[1] = azp, per[2] = k->in[4], per[3] = bzp, per[4] = k->in[6];
    for (int i = 0; i < 5; i++) {
        const ti_tensor *t = per[i];
        if (t == NULL) continue;
        size_t c = ti__numel(t);
        int column = i >= 2 && i <= 3 && (int64_t)c == p->n;
        if (c != 1 && !column)
            return ti__kfail(k, TI_ERR_UNSUPPORTED,
                             "scale/zero point with %zu values: per tensor (or per column of b) only",
                             c);
    }
    if (yzp != NULL && ti__numel(yzp) != 1)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "y_zero_point must be a single value");
    if (!set_outputs) return TI_OK;
    int64_t od[TI_MAX_DIMS + 2];
    int r = 0;
    for (int i = 0; i < p->nb; i++) od[r++] = p->batch[i];
    if (a->rank >= 2) od[r++] = p->m;
    if (b->rank >= 2) od[r++] = p->n;
    if (r > TI_MAX_DIMS || !ti__set_shape(k->out[0], out, r, od))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid output shape");
    return TI_OK;
}

TI__PRIVATE int ti__qmm_shape(ti__kctx *k) {
    ti__qmm p;
    if (k->n_out < 1 || k->out[0] == NULL) return TI_OK;
    return ti__qmm_setup(k, &p, 1);
}

TI__PRIVATE size_t ti__qmm_scratch(ti__kctx *k) {
    ti__qmm p;
    ti_error *saved = k->err, tmp;
    if (k->n_out < 1 || k->out[0] == NULL) return 0;
    k->err = &tmp;
    int r = ti__qmm_setup(k, &p, 0);
    k->err = saved;
    if (r != TI_OK) return 0;
    size_t rq = ti__qpack_rq(k->node, (size_t)p.n) != NULL ? 0 : ti__qg_rq_bytes((size_t)p.n);
    if (ti__qpack_b(k->node, 1, (size_t)p.n, (size_t)p.kd, 0) != NULL) return rq; /* packed at planning */
    return rq + ti__qg_packed_bytes((size_t)p.n, (size_t)p.kd);
}

TI__PRIVATE ti_status ti__qmm_run(ti__kctx *k) {
    ti__qmm p;
    if (k->n_out < 1 || k->out[0] == NULL) return TI_OK;
    int r = ti__qmm_setup(k, &p, 0);
    if (r != TI_OK) return (ti_status)r;
    const ti_tensor *a = k->in[0], *as = k->in[1], *azp = k->in[2];
    const ti_tensor *b = k->in[3], *bs = k->in[4], *bzp = k->in[5];
    const ti_tensor *ys = k->in[6], *yzp = k->n_in > 7 ? k->in[7] : NULL;
    ti_tensor *y = k->out[0];
    ti__qrq rq;
    size_t rq_bytes;
    if (!ti__q_onnx_rq(k, (size_t)p.n, as, bs, ys, &rq, &rq_bytes)) /* b_scale per column or one */
        return ti__kfail(k, TI_ERR_INVALID_ARGUMENT, "scratch of %zu bytes is too small", k->scratch_bytes);
    int64_t yz = yzp != NULL ? ti__get_i64(yzp, 0) : 0;
    rq.yo = (int32_t)yz;
    ti__q_out_range(k->node, y->dtype, yz, ys, &rq.lo, &rq.hi);
    return ti__q_matmul_gemm(k, a, azp, b, bzp, &rq, y, p.m, p.kd, p.n, p.nb, p.batch, p.astr,
                             p.bstr, rq_bytes);
}

/* ---- QLinearConv --------------------------------------------------------------------- */
/* Inputs x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B
 * (int32 bias). x [N, C, spatial...] with 1 to 3 spatial dims, w [M, C / group, k...].
 * Spatial dims are handled as 3-D (d, h, w) with leading size-1 dims. */

typedef struct ti__qconv {
    int sr; /* spatial rank */
    int64_t n, c, m, group, cg, mg;
    int64_t in[3], ker[3], out[3], str[3], dil[3], pad[3]; /* 3-D, leading dims padded */
    const ti_tensor *x, *w, *bias, *xzp, *wzp, *xs, *ws, *ys, *yzp;
    ti_tensor *y;
} ti__qconv;

TI__PRIVATE int ti__qconv_setup(ti__kctx *k, ti__qconv *p, int set_outputs) {
    memset(p, 0, sizeof *p);
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    TI__REQUIRE_INPUT(k, 3);
    TI__REQUIRE_INPUT(k, 4);
    TI__REQUIRE_INPUT(k, 6);
    p->x = k->in[0], p->xs = k->in[1], p->xzp = k->n_in > 2 ? k->in[2] : NULL;
    p->w = k->in[3], p->ws = k->in[4], p->wzp = k->n_in > 5 ? k->in[5] : NULL;
    p->ys = k->in[6], p->yzp = k->n_in > 7 ? k->in[7] : NULL;
    p->bias = k->n_in > 8 ? k->in[8] : NULL;
    p->y = k->n_out > 0 ? k->out[0] : NULL;
    const ti_tensor *x = p->x, *w = p->w;
    const ti__node *nd = k->node;
    if ((x->dtype != TI_DTYPE_U8 && x->dtype != TI_DTYPE_I8) ||
        (w->dtype != TI_DTYPE_U8 && w->dtype != TI_DTYPE_I8))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "x/w dtypes %s/%s: int8 or uint8 only",
                         ti_dtype_name(x->dtype), ti_dtype_name(w->dtype));
    if ((p->xzp != NULL && (p->xzp->dtype != x->dtype || ti__numel(p->xzp) != 1)) ||
        (p->wzp != NULL && p->wzp->dtype != w->dtype))
        return ti__kfail(k, TI_ERR_BAD_MODEL,
                         "zero points must match x/w dtypes (x_zero_point a single value)");
    if (!ti__dtype_is_float(p->xs->dtype) || !ti__dtype_is_float(p->ws->dtype) ||
        !ti__dtype_is_float(p->ys->dtype) || ti__numel(p->xs) != 1 || ti__numel(p->ys) != 1)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "x_scale and y_scale must be single float values");
    if (p->bias != NULL && p->bias->dtype != TI_DTYPE_I32)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "bias dtype %s, expected int32",
                         ti_dtype_name(p->bias->dtype));
    ti_dtype out = p->yzp != NULL ? p->yzp->dtype : x->dtype;
    if (out != TI_DTYPE_U8 && out != TI_DTYPE_I8)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "y dtype %s: int8 or uint8 only",
                         ti_dtype_name(out));
    if (x->rank < 3 || x->rank > 5 || w->rank != x->rank)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "x rank %d, w rank %d: 1 to 3 spatial dims only",
                         x->rank, w->rank);
    p->sr = x->rank - 2;
    p->n = x->shape[0];
    p->c = x->shape[1];
    p->m = w->shape[0];
    p->group = ti__attr_i(nd, "group", 1);
    if (p->group <= 0 || p->c % p->group != 0 || p->m % p->group != 0 ||
        w->shape[1] != p->c / p->group)
        return ti__kfail(k, TI_ERR_BAD_MODEL,
                         "group %lld does not fit %lld input channels, %lld filters of %lld channels",
                         (long long)p->group, (long long)p->c, (long long)p->m,
                         (long long)w->shape[1]);
    p->cg = p->c / p->group;
    p->mg = p->m / p->group;
    size_t mcount = (size_t)p->m;
    if (ti__numel(p->ws) != 1 && ti__numel(p->ws) != mcount)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "w_scale has %zu values, expected 1 or %lld",
                         ti__numel(p->ws), (long long)p->m);
    if (p->wzp != NULL && ti__numel(p->wzp) != 1 && ti__numel(p->wzp) != mcount)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "w_zero_point has %zu values, expected 1 or %lld",
                         ti__numel(p->wzp), (long long)p->m);
    if (p->bias != NULL && ti__numel(p->bias) != mcount)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "bias has %zu values, expected %lld",
                         ti__numel(p->bias), (long long)p->m);
    int nk, ns, nd2, np;
    const int64_t *ks = ti__attr_ints(nd, "kernel_shape", &nk);
    const int64_t *st = ti__attr_ints(nd, "strides", &ns);
    const int64_t *dl = ti__attr_ints(nd, "dilations", &nd2);
    const int64_t *pd = ti__attr_ints(nd, "pads", &np);
    if ((ks != NULL && nk != p->sr) || (st != NULL && ns != p->sr) ||
        (dl != NULL && nd2 != p->sr) || (pd != NULL && np != 2 * p->sr))
        return ti__kfail(k, TI_ERR_BAD_MODEL,
                         "kernel_shape/strides/dilations/pads lengths do not match %d spatial dims",
                         p->sr);
    const char *ap = ti__attr_s(nd, "auto_pad", "NOTSET");
    int same_upper = strcmp(ap, "SAME_UPPER") == 0, same_lower = strcmp(ap, "SAME_LOWER") == 0;
    int valid = strcmp(ap, "VALID") == 0;
    if (!same_upper && !same_lower && !valid && strcmp(ap, "NOTSET") != 0)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "auto_pad '%s' is not valid", ap);
    int off = 3 - p->sr;
    for (int i = 0; i < 3; i++) {
        p->in[i] = p->ker[i] = p->out[i] = p->str[i] = p->dil[i] = 1;
        p->pad[i] = 0;
    }
    for (int i = 0; i < p->sr; i++) {
        int o = i + off;
        p->in[o] = x->shape[2 + i];
        p->ker[o] = w->shape[2 + i];
        if (ks != NULL && ks[i] != p->ker[o])
            return ti__kfail(k, TI_ERR_BAD_MODEL, "kernel_shape[%d] = %lld, w has %lld", i,
                             (long long)ks[i], (long long)p->ker[o]);
        p->str[o] = st != NULL ? st[i] : 1;
        p->dil[o] = dl != NULL ? dl[i] : 1;
        if (p->str[o] <= 0 || p->dil[o] <= 0)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "strides and dilations must be positive");
        int64_t ext = (p->ker[o] - 1) * p->dil[o] + 1, pb = 0, pe = 0;
        if (same_upper || same_lower) {
            int64_t o_sz = (p->in[o] + p->str[o] - 1) / p->str[o];
            int64_t total = (o_sz - 1) * p->str[o] + ext - p->in[o];
            if (total < 0) total = 0;
            pb = same_upper ? total / 2 : total - total / 2;
            pe = total - pb;
        } else if (!valid && pd != NULL) {
            pb = pd[i];
            pe = pd[i + p->sr];
            if (pb < 0 || pe < 0) return ti__kfail(k, TI_ERR_BAD_MODEL, "pads must be >= 0");
        }
        p->pad[o] = pb;
        int64_t span = p->in[o] + pb + pe - ext;
        if (span < 0)
            return ti__kfail(k, TI_ERR_BAD_MODEL,
                             "kernel extent %lld exceeds padded input %lld in spatial dim %d",
                             (long long)ext, (long long)(p->in[o] + pb + pe), i);
        p->out[o] = span / p->str[o] + 1;
    }
    if (!set_outputs || p->y == NULL) return TI_OK;
    int64_t od[5];
    od[0] = p->n;
    od[1] = p->m;
    for (int i = 0; i < p->sr; i++) od[2 + i] = p->out[i + off];
    if (!ti__set_shape(p->y, out, x->rank, od))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid output shape");
    return TI_OK;
}

TI__PRIVATE int ti__qconv_shape(ti__kctx *k) {
    ti__qconv p;
    return ti__qconv_setup(k, &p, 1);
}

TI__PRIVATE size_t ti__qconv_scratch(ti__kctx *k) {
    ti__qconv p;
    ti_error *saved = k->err, tmp;
    k->err = &tmp;
    int r = ti__qconv_setup(k, &p, 0);
    k->err = saved;
    if (r != TI_OK) return 0;
    size_t depth = (size_t)(p.cg * p.ker[0] * p.ker[1] * p.ker[2]);
    size_t rq = ti__qpack_rq(k->node, (size_t)p.m) != NULL ? 0 : ti__qg_rq_bytes((size_t)p.m);
    if (ti__qpack_b(k->node, (size_t)p.group, (size_t)p.mg, depth, 0) != NULL) return rq;
    return rq + ti__qg_packed_bytes((size_t)p.mg, depth);
}

TI__PRIVATE ti_status ti__qconv_run(ti__kctx *k) {
    ti__qconv p;
    int r = ti__qconv_setup(k, &p, 0);
    if (r != TI_OK) return (ti_status)r;
    if (p.y == NULL) return TI_OK;
    ti__qrq rq;
    size_t rq_bytes;
    if (!ti__q_onnx_rq(k, (size_t)p.m, p.xs, p.ws, p.ys, &rq, &rq_bytes))
        return ti__kfail(k, TI_ERR_INVALID_ARGUMENT, "scratch of %zu bytes is too small", k->scratch_bytes);
    int64_t yz = p.yzp != NULL ? ti__get_i64(p.yzp, 0) : 0;
    rq.yo = (int32_t)yz;
    ti__q_out_range(k->node, p.y->dtype, yz, p.ys, &rq.lo, &rq.hi);
    int32_t zx = p.xzp != NULL ? (int32_t)ti__get_i64(p.xzp, 0) : 0;
    return ti__q_conv_gemm(k, p.x, p.w, p.wzp, zx, p.bias, &rq, p.y, p.n, p.c, p.m, p.group,
                           p.in, p.ker, p.str, p.dil, p.pad, p.out, rq_bytes);
}

/* ---- weights packed once at planning ---------------------------------------------------- */
/* Called by the prepack pass (graph/passes.c) when w (QLinearConv) or b (QLinearMatMul) is
 * a constant: packs it for the shared 8-bit GEMM with its zero points (which must be
 * constants too) into pool as the node's ti__qpack, and when the three scales are
 * constants, the float multipliers as well. A node that fails its checks, or a
 * QLinearMatMul whose b holds several matrices, gets no pack (the run packs per run). */
TI__PRIVATE ti_status ti__qconv_prepack(ti__kctx *k, ti__node *node, ti__pool *pool) {
    ti__qconv p;
    ti_error *saved = k->err, tmp;
    k->err = &tmp;
    int r = ti__qconv_setup(k, &p, 0);
    k->err = saved;
    if (r != TI_OK || p.y == NULL || p.w->data == NULL || (p.wzp != NULL && p.wzp->data == NULL))
        return TI_OK;
    size_t depth = (size_t)(p.cg * p.ker[0] * p.ker[1] * p.ker[2]);
    if (depth == 0 || p.mg == 0) return TI_OK;
    ti__qgemm t; /* the B of ti__q_conv_gemm */
    memset(&t, 0, sizeof t);
    ti__qg_onnx_b(&t, p.w, p.wzp, (size_t)p.mg, depth, 1);
    int scales = p.xs->data != NULL && p.ws->data != NULL && p.ys->data != NULL;
    void *mem = NULL;
    ti__qpack *pk = ti__qpack_make(node, pool, k->tp, &t, (size_t)p.group, (size_t)p.mg * depth,
                                   scales ? (size_t)p.m : 0, &mem);
    if (pk == NULL) return TI_ERR_OUT_OF_MEMORY;
    if (scales) ti__q_onnx_reals((double *)mem, (size_t)p.m, p.xs, p.ws, p.ys);
    pk->mode = TI__QRQ_ONNX;
    return TI_OK;
}

TI__PRIVATE ti_status ti__qmm_prepack(ti__kctx *k, ti__node *node, ti__pool *pool) {
    ti__qmm p;
    if (k->n_out < 1 || k->out[0] == NULL) return TI_OK;
    ti_error *saved = k->err, tmp;
    k->err = &tmp;
    int r = ti__qmm_setup(k, &p, 0);
    k->err = saved;
    const ti_tensor *as = k->in[1], *b = k->in[3], *bs = k->in[4], *bzp = k->in[5], *ys = k->in[6];
    if (r != TI_OK || b->data == NULL || (bzp != NULL && bzp->data == NULL) || p.kd == 0 || p.n == 0)
        return TI_OK;
    for (int i = 0; i < p.nb; i++)
        if (p.bstr[i] != 0) return TI_OK; /* b has several matrices */
    ti__qgemm t; /* the B of ti__q_matmul_gemm */
    memset(&t, 0, sizeof t);
    ti__qg_onnx_b(&t, b, bzp, (size_t)p.n, (size_t)p.kd, 0);
    int scales = as->data != NULL && bs->data != NULL && ys->data != NULL;
    void *mem = NULL;
    ti__qpack *pk = ti__qpack_make(node, pool, k->tp, &t, 1, 0, scales ? (size_t)p.n : 0, &mem);
    if (pk == NULL) return TI_ERR_OUT_OF_MEMORY;
    if (scales) ti__q_onnx_reals((double *)mem, (size_t)p.n, as, bs, ys);
    pk->mode = TI__QRQ_ONNX;
    return TI_OK;
}

TI__PRIVATE const ti__op ti__ops_quant[] = {
    {"QuantizeLinear", ti__quant_shape, ti__quant_run, NULL, 0},
    {"DequantizeLinear", ti__dequant_shape, ti__dequant_run, NULL, 0},
    {"DynamicQuantizeLinear", ti__dynq_shape, ti__dynq_run, NULL, 0},
    {"QLinearMatMul", ti__qmm_shape, ti__qmm_run, ti__qmm_scratch, 0},
    {"QLinearConv", ti__qconv_shape, ti__qconv_run, ti__qconv_scratch, 0},
    {NULL, NULL, NULL, NULL, 0}
};
