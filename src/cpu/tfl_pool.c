/* TFLite pooling and resizing on NHWC tensors: AVERAGE_POOL_2D, MAX_POOL_2D, L2_POOL_2D,
 * RESIZE_BILINEAR, RESIZE_NEAREST_NEIGHBOR; also the op table of the group, whose reduction,
 * softmax and normalisation kernels live in tfl_reduce.c and tfl_softmax.c (declared below).
 * Float32 and uint8/int8/int16 follow the arithmetic of TFLite's builtin (optimized) CPU
 * kernels bit for bit, including their summation order and float rounding, because
 * quantized outputs are compared exactly with ai-edge-litert. Relies on core/qmath.c.
 * Must not allocate in a run function; parallel over output rows. */

/* ---- helpers shared by the tfl_pool group --------------------------------------------- */

/* Float arithmetic that must round exactly like TFLite's (quantized outputs computed in
 * float, fixed-point tables): no fused multiply-add contraction. GCC contracts across
 * statements under -std=gnu* on FMA targets, clang within an expression; this attribute
 * (GCC) and pragma (clang, at the start of the function body) turn that off. */
#if defined(__clang__)
#define TI__TFL_NOFMA_FN
#define TI__TFL_NOFMA _Pragma("clang fp contract(off)")
#elif defined(__GNUC__)
#define TI__TFL_NOFMA_FN __attribute__((optimize("fp-contract=off")))
#define TI__TFL_NOFMA
#else
#define TI__TFL_NOFMA_FN
#define TI__TFL_NOFMA
#endif

/* Per-tensor quantization of a TFLite tensor; scale 1, zero point 0 when it has none. */
typedef struct ti__tfq {
    float scale;
    int32_t zp;
} ti__tfq;

TI__PRIVATE ti__tfq ti__tfq_of(const ti_tensor *t) {
    ti__tfq q;
    q.scale = 1.0f;
    q.zp = 0;
    if (t != NULL && t->quant.count > 0 && t->quant.scale != NULL) {
        q.scale = t->quant.scale[0];
        q.zp = t->quant.zero_point != NULL ? (int32_t)t->quant.zero_point[0] : 0;
    }
    return q;
}

/* Range of a quantized integer dtype; 0 for other dtypes. */
TI__PRIVATE int ti__tfq_range(ti_dtype dt, int32_t *lo, int32_t *hi) {
    switch (dt) {
    case TI_DTYPE_U8:
        *lo = 0;
        *hi = 255;
        return 1;
    case TI_DTYPE_I8:
        *lo = -128;
        *hi = 127;
        return 1;
    case TI_DTYPE_I16:
        *lo = -32768;
        *hi = 32767;
        return 1;
    default: return 0;
    }
}

TI__PRIVATE int32_t ti__tfq_clamp(int32_t v, int32_t lo, int32_t hi) {
    return v < lo ? lo : (v > hi ? hi : v);
}

/* Element i of an 8/16-bit integer tensor as int32. */
TI__PRIVATE int32_t ti__tfq_load(const void *data, ti_dtype dt, size_t i) {
    switch (dt) {
    case TI_DTYPE_U8: return ((const uint8_t *)data)[i];
    case TI_DTYPE_I8: return ((const int8_t *)data)[i];
    default: return ((const int16_t *)data)[i];
    }
}

TI__PRIVATE void ti__tfq_store(void *data, ti_dtype dt, size_t i, int32_t v) {
    switch (dt) {
    case TI_DTYPE_U8: ((uint8_t *)data)[i] = (uint8_t)v; break;
    case TI_DTYPE_I8: ((int8_t *)data)[i] = (int8_t)v; break;
    default: ((int16_t *)data)[i] = (int16_t)v; break;
    }
}

/* The dtype the model declares for output i (SOFTMAX may write int16 from int8), or def. */
TI__PRIVATE ti_dtype ti__tfl_declared_dtype(const ti__kctx *k, int i, ti_dtype def) {
    if (k->model == NULL || i >= k->node->n_outputs) return def;
    int v = k->node->outputs[i];
    if (v < 0 || v >= k->model->n_values) return def;
    ti_dtype d = k->model->values[v].dtype;
    return d == TI_DTYPE_UNKNOWN ? def : d;
}

/* Fused activation clamp of an output: float bounds, or quantized bounds from the output's
 * quantization. Unsupported activations (TANH, SIGN_BIT) fail. */
TI__PRIVATE ti_status ti__tfl_act_bounds(ti__kctx *k, const ti_tensor *out, float *flo, float *fhi,
                                         int32_t *qlo, int32_t *qhi) {
    int act = (int)ti__attr_i(k->node, "fused_activation_function", TI__TFL_ACT_NONE);
    if (out->dtype == TI_DTYPE_F32) {
        if (!ti__f_act_range(act, flo, fhi))
            return ti__kfail(k, TI_ERR_UNSUPPORTED, "fused activation %d is not supported", act);
        return TI_OK;
    }
    int32_t lo = 0, hi = 0;
    ti__tfq_range(out->dtype, &lo, &hi);
    ti__tfq q = ti__tfq_of(out);
    if (!ti__q_act_range(act, q.scale, q.zp, lo, hi, qlo, qhi))
        return ti__kfail(k, TI_ERR_UNSUPPORTED,
                         "fused activation %d is not supported on a quantized output", act);
    return TI_OK;
}

/* ---- kernels defined in tfl_reduce.c and tfl_softmax.c -------------------------------- */
TI__PRIVATE int ti__tfr_reduce_shape(ti__kctx *k);
TI__PRIVATE ti_status ti__tfr_mean_run(ti__kctx *k);
TI__PRIVATE ti_status ti__tfr_sum_run(ti__kctx *k);
TI__PRIVATE ti_status ti__tfr_max_run(ti__kctx *k);
TI__PRIVATE ti_status ti__tfr_min_run(ti__kctx *k);
TI__PRIVATE ti_status ti__tfr_prod_run(ti__kctx *k);
TI__PRIVATE ti_status ti__tfr_any_run(ti__kctx *k);
TI__PRIVATE ti_status ti__tfr_all_run(ti__kctx *k);
TI__PRIVATE int ti__tfr_argminmax_shape(ti__kctx *k);
TI__PRIVATE ti_status ti__tfr_argmax_run(ti__kctx *k);
TI__PRIVATE ti_status ti__tfr_argmin_run(ti__kctx *k);
TI__PRIVATE int ti__tfs_softmax_shape(ti__kctx *k);
TI__PRIVATE size_t ti__tfs_softmax_scratch(ti__kctx *k);
TI__PRIVATE ti_status ti__tfs_softmax_run(ti__kctx *k);
TI__PRIVATE int ti__tfs_log_softmax_shape(ti__kctx *k);
TI__PRIVATE ti_status ti__tfs_log_softmax_run(ti__kctx *k);
TI__PRIVATE int ti__tfs_l2norm_shape(ti__kctx *k);
TI__PRIVATE ti_status ti__tfs_l2norm_run(ti__kctx *k);
TI__PRIVATE int ti__tfs_lrn_shape(ti__kctx *k);
TI__PRIVATE ti_status ti__tfs_lrn_run(ti__kctx *k);

/* ---- pooling ---------------------------------------------------------------------------- */

typedef enum { TI__TFP_AVG, TI__TFP_MAX, TI__TFP_L2 } ti__tfp_kind;

/* Window geometry of a 2-D pool: TFLite pads only the top/left by total/2 (the rest of the
 * window simply falls off the bottom/right edge). */
typedef struct ti__tfp_geom {
    int64_t n, ih, iw, c, oh, ow;
    int64_t sh, sw, fh, fw, ph, pw;
} ti__tfp_geom;

/* Output size and top/left padding of one spatial axis (TFLite ComputePaddingHeightWidth). */
TI__PRIVATE int ti__tfp_axis(int padding, int64_t in, int64_t filter, int64_t stride, int64_t *out,
                             int64_t *pad) {
    if (padding == 0) /* SAME */
        *out = (in + stride - 1) / stride;
    else /* VALID */
        *out = (in + stride - filter) / stride;
    if (*out < 0) return 0;
    int64_t total = (*out - 1) * stride + filter - in;
    *pad = total > 0 ? total / 2 : 0;
    return 1;
}

TI__PRIVATE ti_status ti__tfp_geometry(ti__kctx *k, ti__tfp_geom *g) {
    const ti_tensor *x = k->in[0];
    if (x->rank != 4)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "input has %d dims, expected 4 (NHWC)", x->rank);
    int padding = (int)ti__attr_i(k->node, "padding", 0);
    g->sw = ti__attr_i(k->node, "stride_w", 0);
    g->sh = ti__attr_i(k->node, "stride_h", 0);
    g->fw = ti__attr_i(k->node, "filter_width", 0);
    g->fh = ti__attr_i(k->node, "filter_height", 0);
    if (padding != 0 && padding != 1)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "padding %d is not SAME (0) or VALID (1)", padding);
    if (g->sw < 1 || g->sh < 1 || g->fw < 1 || g->fh < 1 || g->sw > INT32_MAX ||
        g->sh > INT32_MAX || g->fw > INT32_MAX || g->fh > INT32_MAX)
        return ti__kfail(k, TI_ERR_BAD_MODEL,
                         "stride %lldx%lld and filter %lldx%lld (h x w) must be in [1, 2^31)",
                         (long long)g->sh, (long long)g->sw, (long long)g->fh, (long long)g->fw);
    g->n = x->shape[0];
    g->ih = x->shape[1];
    g->iw = x->shape[2];
    g->c = x->shape[3];
    if (!ti__tfp_axis(padding, g->ih, g->fh, g->sh, &g->oh, &g->ph) ||
        !ti__tfp_axis(padding, g->iw, g->fw, g->sw, &g->ow, &g->pw))
        return ti__kfail(k, TI_ERR_BAD_MODEL,
                         "filter %lldx%lld does not fit the %lldx%lld input with VALID padding",
                         (long long)g->fh, (long long)g->fw, (long long)g->ih, (long long)g->iw);
    return TI_OK;
}

TI__PRIVATE int ti__tfp_shape(ti__kctx *k, ti__tfp_kind kind) {
    TI__REQUIRE_INPUT(k, 0);
    const ti_tensor *x = k->in[0];
    int ok = x->dtype == TI_DTYPE_F32 ||
             (kind != TI__TFP_L2 &&
              (x->dtype == TI_DTYPE_U8 || x->dtype == TI_DTYPE_I8 || x->dtype == TI_DTYPE_I16));
    if (!ok)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "dtype %s is not supported%s",
                         ti_dtype_name(x->dtype), kind == TI__TFP_L2 ? " (float32 only)" : "");
    ti__tfp_geom g;
    ti_status e = ti__tfp_geometry(k, &g);
    if (e != TI_OK) return e;
    int64_t dims[4] = {g.n, g.oh, g.ow, g.c};
    if (!ti__set_shape(k->out[0], x->dtype, 4, dims))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid output shape");
    return TI_OK;
}
TI__PRIVATE int ti__tfp_avg_shape(ti__kctx *k) {
    return ti__tfp_shape(k, TI__TFP_AVG);
}
TI__PRIVATE int ti__tfp_max_shape(ti__kctx *k) {
    return ti__tfp_shape(k, TI__TFP_MAX);
}
TI__PRIVATE int ti__tfp_l2_shape(ti__kctx *k) {
    return ti__tfp_shape(k, TI__TFP_L2);
}

typedef struct ti__tfp_job {
    ti__tfp_geom g;
    ti__tfp_kind kind;
    const ti_tensor *x;
    ti_tensor *y;
    float flo, fhi;
    int32_t qlo, qhi;
} ti__tfp_job;

/* Channels per accumulator block (on the stack, as TFLite's depth tranches). */
#define TI__TFP_TRANCHE 256

/* Output rows [begin, end) of [n * oh]. Each output element folds its window in (fy, fx)
 * order, as TFLite's optimized kernels do, so float sums round the same way; the channels
 * of a pixel are processed together, in blocks, so that the inner loops are contiguous. */
TI__PRIVATE TI__TFL_NOFMA_FN void ti__tfp_rows(void *ctx, size_t begin, size_t end) {
    TI__TFL_NOFMA
    const ti__tfp_job *j = (const ti__tfp_job *)ctx;
    const ti__tfp_geom *g = &j->g;
    ti_dtype dt = j->x->dtype;
    float facc[TI__TFP_TRANCHE];
    int32_t qacc[TI__TFP_TRANCHE];
    for (size_t row = begin; row < end; row++) {
        int64_t b = (int64_t)row / g->oh, oy = (int64_t)row % g->oh;
        int64_t iy0 = oy * g->sh - g->ph;
        int64_t fy0 = TI__MAX(0, -iy0), fy1 = TI__MIN(g->fh, g->ih - iy0);
        for (int64_t ox = 0; ox < g->ow; ox++) {
            int64_t ix0 = ox * g->sw - g->pw;
            int64_t fx0 = TI__MAX(0, -ix0), fx1 = TI__MIN(g->fw, g->iw - ix0);
            int64_t count = (fx1 > fx0 && fy1 > fy0) ? (fx1 - fx0) * (fy1 - fy0) : 0;
            size_t yo = (size_t)(((b * g->oh + oy) * g->ow + ox) * g->c);
            for (int64_t c0 = 0; c0 < g->c; c0 += TI__TFP_TRANCHE) {
                int nc = (int)TI__MIN((int64_t)TI__TFP_TRANCHE, g->c - c0);
                if (dt == TI_DTYPE_F32) {
                    float init = j->kind == TI__TFP_MAX ? -FLT_MAX : 0.0f;
                    for (int c = 0; c < nc; c++) facc[c] = init;
                } else {
                    int32_t init = j->kind == TI__TFP_MAX ? j->qlo : 0;
                    for (int c = 0; c < nc; c++) qacc[c] = init;
                }
                for (int64_t fy = fy0; fy < fy1; fy++) {
                    for (int64_t fx = fx0; fx < fx1; fx++) {
                        size_t xi =
                            (size_t)(((b * g->ih + iy0 + fy) * g->iw + ix0 + fx) * g->c + c0);
                        if (dt == TI_DTYPE_F32) {
                            const float *xp = (const float *)j->x->data + xi;
                            if (j->kind == TI__TFP_MAX)
                                for (int c = 0; c < nc; c++)
                                    facc[c] = xp[c] > facc[c] ? xp[c] : facc[c];
                            else if (j->kind == TI__TFP_AVG)
                                for (int c = 0; c < nc; c++) facc[c] += xp[c];
                            else
                                for (int c = 0; c < nc; c++) facc[c] += xp[c] * xp[c];
                        } else if (dt == TI_DTYPE_U8) {
                            const uint8_t *xp = (const uint8_t *)j->x->data + xi;
                            if (j->kind == TI__TFP_MAX)
                                for (int c = 0; c < nc; c++)
                                    qacc[c] = xp[c] > qacc[c] ? xp[c] : qacc[c];
                            else
                                for (int c = 0; c < nc; c++) qacc[c] += xp[c];
                        } else if (dt == TI_DTYPE_I8) {
                            const int8_t *xp = (const int8_t *)j->x->data + xi;
                            if (j->kind == TI__TFP_MAX)
                                for (int c = 0; c < nc; c++)
                                    qacc[c] = xp[c] > qacc[c] ? xp[c] : qacc[c];
                            else
                                for (int c = 0; c < nc; c++) qacc[c] += xp[c];
                        } else {
                            const int16_t *xp = (const int16_t *)j->x->data + xi;
                            if (j->kind == TI__TFP_MAX)
                                for (int c = 0; c < nc; c++)
                                    qacc[c] = xp[c] > qacc[c] ? xp[c] : qacc[c];
                            else
                                for (int c = 0; c < nc; c++) qacc[c] += xp[c];
                        }
                    }
                }
                size_t o = yo + (size_t)c0;
                if (dt == TI_DTYPE_F32) {
                    float *yp = (float *)j->y->data + o;
                    for (int c = 0; c < nc; c++) {
                        float v = facc[c];
                        if (j->kind == TI__TFP_AVG)
                            v = v / (float)count;
                        else if (j->kind == TI__TFP_L2)
                            v = sqrtf(v * (1.0f / (float)count));
                        yp[c] = v < j->flo ? j->flo : (v > j->fhi ? j->fhi : v);
                    }
                } else {
                    int32_t n = (int32_t)count;
                    for (int c = 0; c < nc; c++) {
                        int32_t v = qacc[c];
                        /* TFLite: round half away from zero with truncating division */
                        if (j->kind == TI__TFP_AVG) v = v > 0 ? (v + n / 2) / n : (v - n / 2) / n;
                        ti__tfq_store(j->y->data, dt, o + (size_t)c,
                                      ti__tfq_clamp(v, j->qlo, j->qhi));
                    }
                }
            }
        }
    }
}

TI__PRIVATE ti_status ti__tfp_run(ti__kctx *k, ti__tfp_kind kind) {
    ti__tfp_job j;
    ti_status e = ti__tfp_geometry(k, &j.g);
    if (e != TI_OK) return e;
    j.kind = kind;
    j.x = k->in[0];
    j.y = k->out[0];
    j.flo = -FLT_MAX;
    j.fhi = FLT_MAX;
    j.qlo = j.qhi = 0;
    if ((e = ti__tfl_act_bounds(k, j.y, &j.flo, &j.fhi, &j.qlo, &j.qhi)) != TI_OK) return e;
    if (kind != TI__TFP_MAX && j.g.oh * j.g.ow > 0) {
        /* every window overlaps the input for valid geometry; guard the division anyway */
        for (int64_t oy = 0; oy < j.g.oh; oy++) {
            int64_t iy0 = oy * j.g.sh - j.g.ph;
            if (TI__MIN(j.g.fh, j.g.ih - iy0) <= TI__MAX(0, -iy0))
                return ti__kfail(k, TI_ERR_BAD_MODEL, "output row %lld pools no input",
                                 (long long)oy);
        }
        for (int64_t ox = 0; ox < j.g.ow; ox++) {
            int64_t ix0 = ox * j.g.sw - j.g.pw;
            if (TI__MIN(j.g.fw, j.g.iw - ix0) <= TI__MAX(0, -ix0))
                return ti__kfail(k, TI_ERR_BAD_MODEL, "output column %lld pools no input",
                                 (long long)ox);
        }
    }
    size_t rows = (size_t)(j.g.n * j.g.oh);
    size_t work = (size_t)(j.g.ow * j.g.c * j.g.fh * j.g.fw) + 1;
    ti__parallel_for(k->tp, rows, TI__MAX((size_t)1, 32768 / work), ti__tfp_rows, &j);
    return TI_OK;
}
TI__PRIVATE ti_status ti__tfp_avg_run(ti__kctx *k) {
    return ti__tfp_run(k, TI__TFP_AVG);
}
TI__PRIVATE ti_status ti__tfp_max_run(ti__kctx *k) {
    return ti__tfp_run(k, TI__TFP_MAX);
}
TI__PRIVATE ti_status ti__tfp_l2_run(ti__kctx *k) {
    return ti__tfp_run(k, TI__TFP_L2);
}

/* ---- RESIZE_BILINEAR / RESIZE_NEAREST_NEIGHBOR ----------------------------------------- */

/* Reads the size input [2] (new height, width) and the coordinate flags. */
TI__PRIVATE int ti__tfz_params(ti__kctx *k, int bilinear, int64_t *oh, int64_t *ow, int *align,
                               int *half) {
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    const ti_tensor *x = k->in[0], *sz = k->in[1];
    if (x->rank != 4)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "input has %d dims, expected 4 (NHWC)", x->rank);
    if ((sz->dtype != TI_DTYPE_I32 && sz->dtype != TI_DTYPE_I64) || sz->rank != 1 ||
        sz->shape[0] != 2)
        return ti__kfail(k, TI_ERR_BAD_MODEL,
                         "size must be an int32 tensor of shape [2] "
                         "(got %s with %d dims)",
                         ti_dtype_name(sz->dtype), sz->rank);
    *align = ti__attr_i(k->node, "align_corners", 0) != 0;
    *half = ti__attr_i(k->node, "half_pixel_centers", 0) != 0;
    if (bilinear && *align && *half)
        return ti__kfail(k, TI_ERR_BAD_MODEL,
                         "half_pixel_centers and align_corners cannot both be true");
    TI__NEED(k, sz);
    *oh = ti__get_i64(sz, 0);
    *ow = ti__get_i64(sz, 1);
    if (*oh <= 0 || *ow <= 0 || *oh > INT32_MAX || *ow > INT32_MAX)
        return ti__kfail(k, TI_ERR_INVALID_ARGUMENT, "output size %lldx%lld must be positive",
                         (long long)*oh, (long long)*ow);
    if (x->shape[1] > INT32_MAX / 1024 || x->shape[2] > INT32_MAX / 1024)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "input %lldx%lld is too large",
                         (long long)x->shape[1], (long long)x->shape[2]);
    return TI_OK;
}

TI__PRIVATE int ti__tfz_shape(ti__kctx *k, int bilinear) {
    int64_t oh = 0, ow = 0;
    int align, half;
    int e = ti__tfz_params(k, bilinear, &oh, &ow, &align, &half);
    if (e != TI_OK) return e;
    const ti_tensor *x = k->in[0];
    ti_dtype dt = x->dtype;
    int ok = bilinear ? (dt == TI_DTYPE_F32 || dt == TI_DTYPE_U8 || dt == TI_DTYPE_I8 ||
                         dt == TI_DTYPE_I16)
                      : (dt != TI_DTYPE_UNKNOWN && dt != TI_DTYPE_STRING);
    if (!ok)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "dtype %s is not supported", ti_dtype_name(dt));
    int64_t dims[4] = {x->shape[0], oh, ow, x->shape[3]};
    if (!ti__set_shape(k->out[0], dt, 4, dims))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid output shape");
    return TI_OK;
}
TI__PRIVATE int ti__tfz_bilinear_shape(ti__kctx *k) {
    return ti__tfz_shape(k, 1);
}
TI__PRIVATE int ti__tfz_nearest_shape(ti__kctx *k) {
    return ti__tfz_shape(k, 0);
}

typedef struct ti__tfz_job {
    const ti_tensor *x;
    ti_tensor *y;
    int32_t n, ih, iw, c, oh, ow;
    int align, half;
    float hscale, wscale; /* float coordinate scales (TFLite's float paths) */
    int32_t hs10, ws10;   /* 10-bit fixed-point scales (int8/int16 bilinear) */
    int64_t hs16, ws16;   /* 16-bit fixed-point scales (8-bit nearest, no flags) */
} ti__tfz_job;

/* TFLite ComputeInterpolationValues: source coordinate and its two neighbours. */
TI__PRIVATE TI__TFL_NOFMA_FN void ti__tfz_interp(int32_t v, float scale, int half, int32_t size,
                                                 float *src, int32_t *lo, int32_t *hi) {
    TI__TFL_NOFMA
    float fv = (float)v;
    *src = half ? (fv + 0.5f) * scale - 0.5f : fv * scale;
    int32_t f = (int32_t)floorf(*src);
    *lo = f > 0 ? f : 0;
    int32_t c = (int32_t)ceilf(*src);
    *hi = c < size - 1 ? c : size - 1;
}

/* TFLite ComputeInterpolationValuesInteger: coordinates in 1/1024 units. */
TI__PRIVATE void ti__tfz_interp10(int32_t v, int32_t scale10, int half, int32_t size, int32_t *src,
                                  int32_t *lo, int32_t *hi) {
    *src = half ? v * scale10 + scale10 / 2 - (1 << 9) : v * scale10;
    int32_t l = *src / (1 << 10);
    *lo = l > 0 ? l : 0;
    int32_t h = (*src + (1 << 10) - 1) / (1 << 10);
    *hi = h < size - 1 ? h : size - 1;
}

/* Bilinear rows [begin, end) of [n * oh]. */
TI__PRIVATE TI__TFL_NOFMA_FN void ti__tfz_bilinear_rows(void *ctx, size_t begin, size_t end) {
    TI__TFL_NOFMA
    const ti__tfz_job *j = (const ti__tfz_job *)ctx;
    ti_dtype dt = j->x->dtype;
    int two_x =
        dt == TI_DTYPE_F32 && !j->align && !j->half && j->oh == 2 * j->ih && j->ow == 2 * j->iw;
    for (size_t row = begin; row < end; row++) {
        int32_t b = (int32_t)(row / (size_t)j->oh), y = (int32_t)(row % (size_t)j->oh);
        size_t in_b = (size_t)b * (size_t)j->ih * (size_t)j->iw * (size_t)j->c;
        float *yf = dt == TI_DTYPE_F32 ? (float *)j->y->data : NULL;
        size_t yo = row * (size_t)j->ow * (size_t)j->c;
        if (two_x) {
            /* TFLite's 2x upsampling kernel: exact halves of neighbour sums. */
            const float *xf = (const float *)j->x->data;
            int32_t y0 = y / 2, y1 = TI__MIN(y0 + 1, j->ih - 1);
            for (int32_t x = 0; x < j->ow; x++) {
                int32_t x0 = x / 2, x1 = TI__MIN(x0 + 1, j->iw - 1);
                const float *p00 =
                    xf + in_b + ((size_t)y0 * (size_t)j->iw + (size_t)x0) * (size_t)j->c;
                const float *p10 =
                    xf + in_b + ((size_t)y0 * (size_t)j->iw + (size_t)x1) * (size_t)j->c;
                const float *p01 =
                    xf + in_b + ((size_t)y1 * (size_t)j->iw + (size_t)x0) * (size_t)j->c;
                const float *p11 =
                    xf + in_b + ((size_t)y1 * (size_t)j->iw + (size_t)x1) * (size_t)j->c;
                float *o = yf + yo + (size_t)x * (size_t)j->c;
                for (int32_t c = 0; c < j->c; c++) {
                    float v;
                    if ((y & 1) == 0)
                        v = (x & 1) == 0 ? p00[c] : (p00[c] + p10[c]) / 2;
                    else if ((x & 1) == 0)
                        v = (p00[c] + p01[c]) / 2;
                    else
                        v = ((p00[c] + p01[c]) / 2 + (p10[c] + p11[c]) / 2) / 2;
                    o[c] = v;
                }
            }
            continue;
        }
        if (dt == TI_DTYPE_F32 || dt == TI_DTYPE_U8) {
            float sy;
            int32_t y0, y1;
            ti__tfz_interp(y, j->hscale, j->half, j->ih, &sy, &y0, &y1);
            for (int32_t x = 0; x < j->ow; x++) {
                float sx;
                int32_t x0, x1;
                ti__tfz_interp(x, j->wscale, j->half, j->iw, &sx, &x0, &x1);
                size_t o00 = in_b + ((size_t)y0 * (size_t)j->iw + (size_t)x0) * (size_t)j->c;
                size_t o01 = in_b + ((size_t)y0 * (size_t)j->iw + (size_t)x1) * (size_t)j->c;
                size_t o10 = in_b + ((size_t)y1 * (size_t)j->iw + (size_t)x0) * (size_t)j->c;
                size_t o11 = in_b + ((size_t)y1 * (size_t)j->iw + (size_t)x1) * (size_t)j->c;
                float dy = sy - (float)y0, dx = sx - (float)x0;
                float s00 = (1 - dy) * (1 - dx), s01 = (1 - dy) * dx;
                float s10 = dy * (1 - dx), s11 = dy * dx;
                size_t o = yo + (size_t)x * (size_t)j->c;
                if (dt == TI_DTYPE_F32) {
                    const float *xf = (const float *)j->x->data;
                    for (int32_t c = 0; c < j->c; c++) {
                        float v = xf[o00 + (size_t)c] * s00;
                        v += xf[o01 + (size_t)c] * s01;
                        v += xf[o10 + (size_t)c] * s10;
                        v += xf[o11 + (size_t)c] * s11;
                        yf[o + (size_t)c] = v;
                    }
                } else { /* uint8: TFLite's float path, rounded by +0.5 and truncation */
                    const uint8_t *xu = (const uint8_t *)j->x->data;
                    uint8_t *yu = (uint8_t *)j->y->data;
                    for (int32_t c = 0; c < j->c; c++) {
                        float v = (float)xu[o00 + (size_t)c] * s00 +
                                  (float)xu[o01 + (size_t)c] * s01 +
                                  (float)xu[o10 + (size_t)c] * s10 +
                                  (float)xu[o11 + (size_t)c] * s11 + 0.5f;
                        v = v < 0.0f ? 0.0f : (v > 255.0f ? 255.0f : v);
                        yu[o + (size_t)c] = (uint8_t)v;
                    }
                }
            }
        } else { /* int8 / int16: TFLite's integer path with 10-bit fractions */
            int32_t sy, y0, y1;
            ti__tfz_interp10(y, j->hs10, j->half, j->ih, &sy, &y0, &y1);
            int64_t wy1 = sy - (1 << 10) * y0, wy0 = (1 << 10) - wy1;
            for (int32_t x = 0; x < j->ow; x++) {
                int32_t sx, x0, x1;
                ti__tfz_interp10(x, j->ws10, j->half, j->iw, &sx, &x0, &x1);
                int64_t wx1 = sx - (1 << 10) * x0, wx0 = (1 << 10) - wx1;
                size_t o00 = in_b + ((size_t)y0 * (size_t)j->iw + (size_t)x0) * (size_t)j->c;
                size_t o01 = in_b + ((size_t)y0 * (size_t)j->iw + (size_t)x1) * (size_t)j->c;
                size_t o10 = in_b + ((size_t)y1 * (size_t)j->iw + (size_t)x0) * (size_t)j->c;
                size_t o11 = in_b + ((size_t)y1 * (size_t)j->iw + (size_t)x1) * (size_t)j->c;
                size_t o = yo + (size_t)x * (size_t)j->c;
                for (int32_t c = 0; c < j->c; c++) {
                    int64_t v = (int64_t)ti__tfq_load(j->x->data, dt, o00 + (size_t)c) * wy0 * wx0 +
                                (int64_t)ti__tfq_load(j->x->data, dt, o10 + (size_t)c) * wy1 * wx0 +
                                (int64_t)ti__tfq_load(j->x->data, dt, o01 + (size_t)c) * wy0 * wx1 +
                                (int64_t)ti__tfq_load(j->x->data, dt, o11 + (size_t)c) * wy1 * wx1;
                    int64_t round = v > 0 ? (1 << 19) : -(1 << 19);
                    ti__tfq_store(j->y->data, dt, o + (size_t)c,
                                  (int32_t)((v + round) / (1 << 20)));
                }
            }
        }
    }
}

/* TFLite GetNearestNeighbor (float coordinates). */
TI__PRIVATE TI__TFL_NOFMA_FN int32_t ti__tfz_nearest(int32_t v, int32_t in, float scale, int align,
                                                     int half) {
    TI__TFL_NOFMA
    float s = ((float)v + (half ? 0.5f : 0.0f)) * scale;
    int32_t r = align ? (int32_t)roundf(s) : (int32_t)floorf(s); /* TfLiteRound: half away */
    r = r < in - 1 ? r : in - 1;
    if (half && r < 0) r = 0;
    return r;
}

/* Nearest-neighbour rows [begin, end) of [n * oh]: copies whole pixels. 8-bit tensors
 * without flags use TFLite's 16-bit fixed-point source index, everything else its float one. */
TI__PRIVATE void ti__tfz_nearest_rows(void *ctx, size_t begin, size_t end) {
    const ti__tfz_job *j = (const ti__tfz_job *)ctx;
    size_t es = ti_dtype_size(j->x->dtype), px = (size_t)j->c * es;
    int fixed = es == 1 && !j->align && !j->half;
    for (size_t row = begin; row < end; row++) {
        int32_t b = (int32_t)(row / (size_t)j->oh), y = (int32_t)(row % (size_t)j->oh);
        int64_t iy = fixed ? TI__MIN(((int64_t)y * j->hs16) >> 16, (int64_t)j->ih - 1)
                           : ti__tfz_nearest(y, j->ih, j->hscale, j->align, j->half);
        const unsigned char *src = (const unsigned char *)j->x->data +
                                   (((size_t)b * (size_t)j->ih + (size_t)iy) * (size_t)j->iw) * px;
        unsigned char *dst = (unsigned char *)j->y->data + row * (size_t)j->ow * px;
        for (int32_t x = 0; x < j->ow; x++) {
            int64_t ix = fixed ? TI__MIN(((int64_t)x * j->ws16) >> 16, (int64_t)j->iw - 1)
                               : ti__tfz_nearest(x, j->iw, j->wscale, j->align, j->half);
            memcpy(dst + (size_t)x * px, src + (size_t)ix * px, px);
        }
    }
}

TI__PRIVATE ti_status ti__tfz_run(ti__kctx *k, int bilinear) {
    int64_t oh = 0, ow = 0;
    ti__tfz_job j;
    int e = ti__tfz_params(k, bilinear, &oh, &ow, &j.align, &j.half);
    if (e != TI_OK) return (ti_status)e;
    j.x = k->in[0];
    j.y = k->out[0];
    j.n = (int32_t)j.x->shape[0];
    j.ih = (int32_t)j.x->shape[1];
    j.iw = (int32_t)j.x->shape[2];
    j.c = (int32_t)j.x->shape[3];
    j.oh = (int32_t)oh;
    j.ow = (int32_t)ow;
    if (j.y->shape[1] != oh || j.y->shape[2] != ow)
        return ti__kfail(k, TI_ERR_INVALID_ARGUMENT,
                         "size %lldx%lld differs from the planned "
                         "output %lldx%lld",
                         (long long)oh, (long long)ow, (long long)j.y->shape[1],
                         (long long)j.y->shape[2]);
    if (j.ih <= 0 || j.iw <= 0) {
        if (ti__numel(j.y) != 0)
            return ti__kfail(k, TI_ERR_INVALID_ARGUMENT, "cannot resize an empty image");
        return TI_OK;
    }
    /* Float scales exactly as TFLite computes them (float division). */
    if (j.align && j.oh > 1)
        j.hscale = (float)(j.ih - 1) / (float)(j.oh - 1);
    else
        j.hscale = (float)j.ih / (float)j.oh;
    if (j.align && j.ow > 1)
        j.wscale = (float)(j.iw - 1) / (float)(j.ow - 1);
    else
        j.wscale = (float)j.iw / (float)j.ow;
    j.hs10 = ((1 << 10) * j.ih + j.oh / 2) / j.oh;
    j.ws10 = ((1 << 10) * j.iw + j.ow / 2) / j.ow;
    if (j.align && j.oh > 1) j.hs10 = ((1 << 10) * (j.ih - 1) + (j.oh - 1) / 2) / (j.oh - 1);
    if (j.align && j.ow > 1) j.ws10 = ((1 << 10) * (j.iw - 1) + (j.ow - 1) / 2) / (j.ow - 1);
    j.hs16 = ((int64_t)j.ih << 16) / j.oh + 1;
    j.ws16 = ((int64_t)j.iw << 16) / j.ow + 1;
    size_t rows = (size_t)j.n * (size_t)j.oh;
    size_t work = (size_t)j.ow * (size_t)j.c * (bilinear ? 4u : 1u) + 1;
    ti__parallel_for(k->tp, rows, TI__MAX((size_t)1, 65536 / work),
                     bilinear ? ti__tfz_bilinear_rows : ti__tfz_nearest_rows, &j);
    return TI_OK;
}
TI__PRIVATE ti_status ti__tfz_bilinear_run(ti__kctx *k) {
    return ti__tfz_run(k, 1);
}
TI__PRIVATE ti_status ti__tfz_nearest_run(ti__kctx *k) {
    return ti__tfz_run(k, 0);
}

TI__PRIVATE const ti__op ti__ops_tfl_pool[] = {
    {"AVERAGE_POOL_2D", ti__tfp_avg_shape, ti__tfp_avg_run, NULL, 0},
    {"MAX_POOL_2D", ti__tfp_max_shape, ti__tfp_max_run, NULL, 0},
    {"L2_POOL_2D", ti__tfp_l2_shape, ti__tfp_l2_run, NULL, 0},
    {"RESIZE_BILINEAR", ti__tfz_bilinear_shape, ti__tfz_bilinear_run, NULL, 0},
    {"RESIZE_NEAREST_NEIGHBOR", ti__tfz_nearest_shape, ti__tfz_nearest_run, NULL, 0},
    {"MEAN", ti__tfr_reduce_shape, ti__tfr_mean_run, NULL, 0},
    {"SUM", ti__tfr_reduce_shape, ti__tfr_sum_run, NULL, 0},
    {"REDUCE_MAX", ti__tfr_reduce_shape, ti__tfr_max_run, NULL, 0},
    {"REDUCE_MIN", ti__tfr_reduce_shape, ti__tfr_min_run, NULL, 0},
    {"REDUCE_PROD", ti__tfr_reduce_shape, ti__tfr_prod_run, NULL, 0},
    {"REDUCE_ANY", ti__tfr_reduce_shape, ti__tfr_any_run, NULL, 0},
    {"REDUCE_ALL", ti__tfr_reduce_shape, ti__tfr_all_run, NULL, 0},
    {"ARG_MAX", ti__tfr_argminmax_shape, ti__tfr_argmax_run, NULL, 0},
    {"ARG_MIN", ti__tfr_argminmax_shape, ti__tfr_argmin_run, NULL, 0},
    {"SOFTMAX", ti__tfs_softmax_shape, ti__tfs_softmax_run, ti__tfs_softmax_scratch, 0},
    {"LOG_SOFTMAX", ti__tfs_log_softmax_shape, ti__tfs_log_softmax_run, ti__tfs_softmax_scratch, 0},
    {"L2_NORMALIZATION", ti__tfs_l2norm_shape, ti__tfs_l2norm_run, NULL, 0},
    {"LOCAL_RESPONSE_NORMALIZATION", ti__tfs_lrn_shape, ti__tfs_lrn_run, NULL, 0},
    {NULL, NULL, NULL, NULL, 0}};
