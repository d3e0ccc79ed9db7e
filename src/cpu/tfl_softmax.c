/* TFLite normalisations over the last (channel) axis: SOFTMAX (beta), LOG_SOFTMAX,
 * L2_NORMALIZATION, and LOCAL_RESPONSE_NORMALIZATION (radius, bias, alpha, beta) on NHWC.
 * Registered by the table in tfl_pool.c. Quantized SOFTMAX / LOG_SOFTMAX follow TFLite's
 * builtin x86 kernels: a 256-entry float exp table (kept in scratch, rebuilt each run
 * because scratch is shared) and float normalisation; quantized L2_NORMALIZATION uses
 * TFLite's fixed-point inverse square root. Relies on core/qmath.c and the helpers of
 * tfl_pool.c. Must not allocate in a run function; parallel over rows. */

TI__PRIVATE int ti__tfs_same_shape(ti__kctx *k, ti_dtype out_dt, int min_rank, int exact_rank) {
    TI__REQUIRE_INPUT(k, 0);
    const ti_tensor *x = k->in[0];
    if (x->rank < min_rank || (exact_rank > 0 && x->rank != exact_rank))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "input has %d dims, expected %s %d", x->rank,
                         exact_rank > 0 ? "exactly" : "at least",
                         exact_rank > 0 ? exact_rank : min_rank);
    if (!ti__set_shape(k->out[0], out_dt, x->rank, x->shape))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid output shape");
    return TI_OK;
}

/* Rows of the last axis: outer count and depth. */
TI__PRIVATE void ti__tfs_rows(const ti_tensor *x, size_t *outer, size_t *depth) {
    *depth = x->rank > 0 ? (size_t)x->shape[x->rank - 1] : 1;
    *outer = *depth > 0 ? ti__numel(x) / *depth : 0;
}

/* ---- SOFTMAX / LOG_SOFTMAX ------------------------------------------------------------ */

TI__PRIVATE int ti__tfs_softmax_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    ti_dtype in = k->in[0]->dtype, out = in;
    if (in == TI_DTYPE_U8 || in == TI_DTYPE_I8) {
        ti_dtype d = ti__tfl_declared_dtype(k, 0, in);
        if (d == TI_DTYPE_I16) out = d; /* TFLite allows int8/uint8 -> int16 probabilities */
    } else if (in != TI_DTYPE_F32 && in != TI_DTYPE_I16) {
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "dtype %s is not supported", ti_dtype_name(in));
    }
    return ti__tfs_same_shape(k, out, 1, 0);
}

TI__PRIVATE int ti__tfs_log_softmax_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    ti_dtype in = k->in[0]->dtype;
    if (in != TI_DTYPE_F32 && in != TI_DTYPE_U8 && in != TI_DTYPE_I8)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "dtype %s is not supported", ti_dtype_name(in));
    return ti__tfs_same_shape(k, in, 1, 0);
}

/* The tables of the quantized kernels: 256 floats of exp for 8-bit inputs, or TFLite's two
 * 513-entry int16 tables (exp on [-10, 0], 1 / (1 + x) on [0, 1]) for int16. */
#define TI__TFS_LUT16 513
TI__PRIVATE size_t ti__tfs_softmax_scratch(ti__kctx *k) {
    if (k->n_in < 1 || k->in[0] == NULL) return 0;
    ti_dtype t = k->in[0]->dtype;
    if (t == TI_DTYPE_I16) return 2 * TI__TFS_LUT16 * sizeof(int16_t);
    return (t == TI_DTYPE_U8 || t == TI_DTYPE_I8) ? 256 * sizeof(float) : 0;
}

/* TFLite LUTPopulate<int16_t> (double version) for int16 input and output quantized by
 * (in_scale, in_zp) and (out_scale, 0): 512 samples corrected at their midpoints plus one
 * end value, for LUTLookup's 7-bit interpolation. is_exp: exp, else 1 / (1 + x). */
TI__PRIVATE TI__TFL_NOFMA_FN void ti__tfs_lut16(double in_scale, int32_t in_zp, double out_scale,
                                                int is_exp, int16_t *lut) {
    TI__TFL_NOFMA
    double in_min = in_scale * (double)(-32768 - in_zp);
    double in_max = in_scale * (double)(32767 - in_zp);
    double out_min = out_scale * -32768.0, out_max = out_scale * 32767.0;
    const int steps = 512;
    double step = (in_max - in_min) / steps, half = step / 2;
    double inv = 65536.0 / (out_max - out_min);
    for (int i = 0; i <= steps; i++) {
        double v, vm, vn, q;
        if (i == steps) {
            v = is_exp ? exp(in_max) : 1.0 / (1.0 + in_max);
            q = ti__q_round(v * inv);
        } else {
            double a = in_min + i * step, m = in_min + i * step + half;
            double b = in_min + (i + 1) * step;
            v = is_exp ? exp(a) : 1.0 / (1.0 + a);
            vm = is_exp ? exp(m) : 1.0 / (1.0 + m);
            vn = is_exp ? exp(b) : 1.0 / (1.0 + b);
            double sample = ti__q_round(v * inv);
            double interp = ti__q_round((vn * inv + ti__q_round(v * inv)) / 2);
            double err = interp - ti__q_round(vm * inv);
            q = sample - ti__q_round(err / 2);
        }
        q = q < -32768.0 ? -32768.0 : (q > 32767.0 ? 32767.0 : q);
        lut[i] = (int16_t)q;
    }
}

/* TFLite LUTLookup: 9-bit index, 7-bit linear interpolation. */
TI__PRIVATE int16_t ti__tfs_lut16_get(int16_t v, const int16_t *lut) {
    int idx = 256 + (v >> 7), off = v & 0x7f;
    int16_t slope = (int16_t)(lut[idx + 1] - lut[idx]);
    return (int16_t)(lut[idx] + ((slope * off + 64) >> 7));
}

typedef struct ti__tfs_job {
    const ti_tensor *x;
    ti_tensor *y;
    size_t depth;
    int log;
    float beta;
    const float *table; /* quantized: table[255 - d] = exp(-input_scale * beta * d) */
    const int16_t *exp_lut, *recip_lut; /* int16 */
    int32_t mult;                       /* int16: input scale * beta onto [-10, 0] */
    int shift;
    float in_scale, out_scale;
    int32_t out_zp, lo, hi;
} ti__tfs_job;

TI__PRIVATE TI__TFL_NOFMA_FN void ti__tfs_softmax_rows(void *ctx, size_t begin, size_t end) {
    TI__TFL_NOFMA
    const ti__tfs_job *j = (const ti__tfs_job *)ctx;
    size_t d = j->depth;
    for (size_t r = begin; r < end; r++) {
        size_t base = r * d;
        if (j->x->dtype == TI_DTYPE_F32) {
            const float *x = (const float *)j->x->data + base;
            float *y = (float *)j->y->data + base;
            float mx = x[0];
            for (size_t c = 1; c < d; c++) mx = x[c] > mx ? x[c] : mx;
            if (j->log) {
                float sum = 0.0f;
                for (size_t c = 0; c < d; c++) sum += expf(x[c] - mx);
                float log_sum = logf(sum);
                for (size_t c = 0; c < d; c++) y[c] = x[c] - mx - log_sum;
            } else {
                float sum = 0.0f;
                for (size_t c = 0; c < d; c++) {
                    y[c] = expf((x[c] - mx) * j->beta);
                    sum += y[c];
                }
                float inv = 1.0f / sum;
                for (size_t c = 0; c < d; c++) y[c] *= inv;
            }
            continue;
        }
        ti_dtype it = j->x->dtype, ot = j->y->dtype;
        if (it == TI_DTYPE_I16) { /* TFLite reference SoftmaxInt16 */
            const int16_t *x = (const int16_t *)j->x->data + base;
            int16_t *y = (int16_t *)j->y->data + base;
            int16_t mx16 = INT16_MIN;
            for (size_t c = 0; c < d; c++) mx16 = x[c] > mx16 ? x[c] : mx16;
            int32_t sum = 0; /* Q16.15; the exps are kept in the output meanwhile */
            for (size_t c = 0; c < d; c++) {
                int32_t sd = ti__q_mul((int32_t)x[c] - mx16, j->mult, j->shift) + 32767;
                y[c] = ti__tfs_lut16_get((int16_t)ti__tfq_clamp(sd, -32768, 32767), j->exp_lut);
                sum += y[c];
            }
            int clz = 0;
            for (uint32_t u = (uint32_t)sum; clz < 32 && (u & 0x80000000u) == 0; u <<= 1) clz++;
            int32_t shifted = (int32_t)((((int64_t)sum << (clz - 1)) + (1 << 13)) >> 14);
            int32_t sym = ti__tfq_clamp(shifted - ((1 << 15) + (1 << 16)), -32768, 32767);
            int16_t recip = ti__tfs_lut16_get((int16_t)sym, j->recip_lut);
            int rs = 31 - clz;
            for (size_t c = 0; c < d; c++) {
                int64_t v = ((int64_t)y[c] * recip + ((int64_t)1 << (rs - 1))) >> rs;
                y[c] = (int16_t)(v < 0 ? 0 : (v > 32767 ? 32767 : v));
            }
            continue;
        }
        int32_t mx = it == TI_DTYPE_U8 ? 0 : -128;
        for (size_t c = 0; c < d; c++) {
            int32_t v = ti__tfq_load(j->x->data, it, base + c);
            mx = v > mx ? v : mx;
        }
        const float *tab = j->table + 255 - mx; /* tab[v] = exp(scale * beta * (v - max)) */
        float sum = 0.0f;
        for (size_t c = 0; c < d; c++) sum += tab[ti__tfq_load(j->x->data, it, base + c)];
        if (j->log) {
            float log_sum = logf(sum);
            float scale = j->in_scale / j->out_scale;
            float pre = (j->in_scale * (float)mx + log_sum) / j->out_scale;
            for (size_t c = 0; c < d; c++) {
                float lp = scale * (float)ti__tfq_load(j->x->data, it, base + c) - pre;
                int32_t q = (int32_t)(rintf(lp) + (float)j->out_zp);
                ti__tfq_store(j->y->data, ot, base + c, ti__tfq_clamp(q, j->lo, j->hi));
            }
        } else {
            float inv = 1.0f / (sum * j->out_scale);
            for (size_t c = 0; c < d; c++) {
                float p = tab[ti__tfq_load(j->x->data, it, base + c)] * inv;
                /* TFLite's x86 uint8 output adds 0.5 and truncates, without zero point */
                int32_t q =
                    ot == TI_DTYPE_U8 ? (int32_t)(p + 0.5f) : (int32_t)roundf(p) + j->out_zp;
                ti__tfq_store(j->y->data, ot, base + c, ti__tfq_clamp(q, j->lo, j->hi));
            }
        }
    }
}

TI__PRIVATE TI__TFL_NOFMA_FN ti_status ti__tfs_softmax_common(ti__kctx *k, int log) {
    TI__TFL_NOFMA
    ti__tfs_job j;
    memset(&j, 0, sizeof j);
    j.x = k->in[0];
    j.y = k->out[0];
    j.log = log;
    j.beta = log ? 1.0f : ti__attr_f(k->node, "beta", 0.0f);
    size_t outer;
    ti__tfs_rows(j.x, &outer, &j.depth);
    if (j.x->rank < 1) return ti__kfail(k, TI_ERR_BAD_MODEL, "input must have at least 1 dim");
    if (ti__numel(j.y) != ti__numel(j.x))
        return ti__kfail(k, TI_ERR_INVALID_ARGUMENT, "output does not match the input shape");
    if (j.x->dtype == TI_DTYPE_I16) {
        ti__tfq qi = ti__tfq_of(j.x), qo = ti__tfq_of(j.y);
        if (log || j.y->dtype != TI_DTYPE_I16 || qi.zp != 0 || qo.zp != 0)
            return ti__kfail(k, TI_ERR_UNSUPPORTED,
                             "int16 %s needs int16 output and zero "
                             "points 0 (got %d, %d)",
                             log ? "LOG_SOFTMAX" : "SOFTMAX", (int)qi.zp, (int)qo.zp);
        if (k->scratch == NULL || k->scratch_bytes < 2 * TI__TFS_LUT16 * sizeof(int16_t))
            return ti__kfail(k, TI_ERR_INVALID_ARGUMENT, "scratch of %zu bytes is too small",
                             k->scratch_bytes);
        int16_t *luts = (int16_t *)k->scratch;
        ti__tfs_lut16(10.0 / 65535.0, 32767, 2.0 / 65535.0, 1, luts);
        ti__tfs_lut16(1.0 / 65535.0, -32768, 2.0 / 65535.0, 0, luts + TI__TFS_LUT16);
        j.exp_lut = luts;
        j.recip_lut = luts + TI__TFS_LUT16;
        /* [-65535, 0] of scaled input differences covers [-10, 0] */
        ti__q_quantize_multiplier((double)(qi.scale * j.beta) / (10.0 / 65535.0), &j.mult,
                                  &j.shift);
    } else if (j.x->dtype != TI_DTYPE_F32) {
        if (k->scratch == NULL || k->scratch_bytes < 256 * sizeof(float))
            return ti__kfail(k, TI_ERR_INVALID_ARGUMENT, "scratch of %zu bytes is too small",
                             k->scratch_bytes);
        ti__tfq qi = ti__tfq_of(j.x), qo = ti__tfq_of(j.y);
        float *tab = (float *)k->scratch;
        float scale = -qi.scale * j.beta; /* TFLite PopulateSoftmaxLookupTable */
        for (int32_t v = 0; v <= 255; v++) tab[255 - v] = expf(scale * (float)v);
        j.table = tab;
        j.in_scale = qi.scale;
        j.out_scale = qo.scale;
        j.out_zp = qo.zp;
        if (!ti__tfq_range(j.y->dtype, &j.lo, &j.hi))
            return ti__kfail(k, TI_ERR_UNSUPPORTED, "output dtype %s is not supported",
                             ti_dtype_name(j.y->dtype));
    }
    if (outer == 0 || j.depth == 0) return TI_OK;
    ti__parallel_for(k->tp, outer, TI__MAX((size_t)1, 8192 / j.depth), ti__tfs_softmax_rows, &j);
    return TI_OK;
}
TI__PRIVATE ti_status ti__tfs_softmax_run(ti__kctx *k) {
    return ti__tfs_softmax_common(k, 0);
}
TI__PRIVATE ti_status ti__tfs_log_softmax_run(ti__kctx *k) {
    return ti__tfs_softmax_common(k, 1);
}

/* ---- L2_NORMALIZATION --------------------------------------------------------------------- */

/* gemmlowp SaturatingRoundingMultiplyByPOT<e> for e > 0. */
TI__PRIVATE int32_t ti__tfs_sat_shl(int32_t x, int e) {
    int32_t threshold = (int32_t)(((int64_t)1 << (31 - e)) - 1);
    if (x > threshold) return INT32_MAX;
    if (x < -threshold) return INT32_MIN;
    return (int32_t)(uint32_t)((uint32_t)x << e);
}

/* TFLite GetInvSqrtQuantizedMultiplierExp with reverse_shift -1: 1/sqrt(input) as a
 * multiplier and a (non-positive) left shift, by Newton-Raphson in gemmlowp fixed point
 * with 3 integer bits. */
TI__PRIVATE void ti__tfs_inv_sqrt(int32_t input, int32_t *mult, int *shift) {
    if (input <= 1) {
        *mult = INT32_MAX;
        *shift = 0;
        return;
    }
    int sh = 11;
    while (input >= (1 << 29)) {
        input /= 4;
        ++sh;
    }
    int clz = 0;
    for (uint32_t u = (uint32_t)input; (u & 0x80000000u) == 0; u <<= 1) clz++;
    int left_pairs = (clz - 1) / 2 - 1;
    sh -= left_pairs;
    input <<= 2 * left_pairs;
    int32_t fin = input >> 1;                         /* F3 */
    int32_t half_in = ti__q_rdbypot(fin, 1);          /* F3 */
    const int32_t half_three = (1 << 28) + (1 << 27); /* 1.5 in F3 */
    int32_t x = 1 << 28;                              /* 1.0 in F3 */
    for (int i = 0; i < 5; i++) {
        int32_t x3 = ti__tfs_sat_shl(ti__q_srdhm(ti__q_srdhm(x, x), x), 6); /* F9 -> F3 */
        int32_t d = (int32_t)((uint32_t)ti__q_srdhm(half_three, x) -
                              (uint32_t)ti__q_srdhm(half_in, x3)); /* F6 */
        x = ti__tfs_sat_shl(d, 3);
    }
    x = ti__q_srdhm(x, 1518500250); /* times sqrt(2)/2 in F0 */
    if (sh < 0) {
        x = (int32_t)((uint32_t)x << -sh);
        sh = 0;
    }
    *mult = x;
    *shift = -sh;
}

TI__PRIVATE int ti__tfs_l2norm_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    ti_dtype t = k->in[0]->dtype;
    if (t != TI_DTYPE_F32 && t != TI_DTYPE_U8 && t != TI_DTYPE_I8)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "dtype %s is not supported", ti_dtype_name(t));
    int act = (int)ti__attr_i(k->node, "fused_activation_function", TI__TFL_ACT_NONE);
    if (act != TI__TFL_ACT_NONE)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "fused activation %d is not supported", act);
    return ti__tfs_same_shape(k, t, 1, 0);
}

typedef struct ti__tfs_l2_job {
    const ti_tensor *x;
    ti_tensor *y;
    size_t depth;
    int32_t zp;
} ti__tfs_l2_job;

TI__PRIVATE TI__TFL_NOFMA_FN void ti__tfs_l2norm_rows(void *ctx, size_t begin, size_t end) {
    TI__TFL_NOFMA
    const ti__tfs_l2_job *j = (const ti__tfs_l2_job *)ctx;
    size_t d = j->depth;
    ti_dtype t = j->x->dtype;
    for (size_t r = begin; r < end; r++) {
        size_t base = r * d;
        if (t == TI_DTYPE_F32) {
            const float *x = (const float *)j->x->data + base;
            float *y = (float *)j->y->data + base;
            float sq = 0.0f;
            for (size_t c = 0; c < d; c++) sq += x[c] * x[c];
            float n = sqrtf(sq);
            n = n > 1e-6f ? n : 1e-6f;
            for (size_t c = 0; c < d; c++) y[c] = x[c] / n;
            continue;
        }
        int32_t sq = 0;
        for (size_t c = 0; c < d; c++) {
            int32_t v = ti__tfq_load(j->x->data, t, base + c) - j->zp;
            sq += v * v;
        }
        int32_t mult;
        int shift;
        ti__tfs_inv_sqrt(sq, &mult, &shift);
        for (size_t c = 0; c < d; c++) {
            int32_t v = ti__tfq_load(j->x->data, t, base + c) - j->zp;
            int32_t q;
            if (t == TI_DTYPE_U8) /* output scale 1/128, zero point 128 */
                q = ti__tfq_clamp(128 + ti__q_rdbypot(ti__q_srdhm(128 * v, mult), -shift), 0, 255);
            else /* int8: zero point 0, the 1/128 scale folded into the shift */
                q = ti__tfq_clamp(ti__q_mul(v, mult, shift + 7), -128, 127);
            ti__tfq_store(j->y->data, t, base + c, q);
        }
    }
}

TI__PRIVATE ti_status ti__tfs_l2norm_run(ti__kctx *k) {
    ti__tfs_l2_job j;
    size_t outer;
    j.x = k->in[0];
    j.y = k->out[0];
    j.zp = ti__tfq_of(j.x).zp;
    ti__tfs_rows(j.x, &outer, &j.depth);
    if (outer == 0 || j.depth == 0) return TI_OK;
    ti__parallel_for(k->tp, outer, TI__MAX((size_t)1, 8192 / j.depth), ti__tfs_l2norm_rows, &j);
    return TI_OK;
}

/* ---- LOCAL_RESPONSE_NORMALIZATION ------------------------------------------------------- */

TI__PRIVATE int ti__tfs_lrn_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    if (k->in[0]->dtype != TI_DTYPE_F32)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "dtype %s is not supported (float32 only)",
                         ti_dtype_name(k->in[0]->dtype));
    int64_t radius = ti__attr_i(k->node, "radius", 0);
    if (radius < 0 || radius > INT32_MAX / 4)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "radius %lld is out of range", (long long)radius);
    return ti__tfs_same_shape(k, TI_DTYPE_F32, 4, 4);
}

typedef struct ti__tfs_lrn_job {
    const float *x;
    float *y;
    size_t depth;
    int64_t range;
    float bias, alpha, beta;
} ti__tfs_lrn_job;

/* Pixels [begin, end): TFLite's running window sum over the zero-padded squares, in its
 * order of additions and subtractions, then the power. */
TI__PRIVATE TI__TFL_NOFMA_FN void ti__tfs_lrn_pixels(void *ctx, size_t begin, size_t end) {
    TI__TFL_NOFMA
    const ti__tfs_lrn_job *j = (const ti__tfs_lrn_job *)ctx;
    int64_t d = (int64_t)j->depth, r = j->range;
    for (size_t p = begin; p < end; p++) {
        const float *x = j->x + p * j->depth;
        float *y = j->y + p * j->depth;
        float acc = 0.0f;
        /* the window of channel 0: padded indices 0 .. 2r-1 are channels -r .. r-1, and
         * only those in [0, d) add anything (so a radius far above the depth costs nothing) */
        for (int64_t c = 0; c < r && c < d; c++) acc += x[c] * x[c] * j->alpha;
        for (int64_t i = 0; i < d; i++) {
            int64_t c = i + r; /* padded index i + 2r */
            if (c < d) acc += x[c] * x[c] * j->alpha;
            y[i] = j->bias + acc;
            c = i - r; /* padded index i */
            if (c >= 0) acc -= x[c] * x[c] * j->alpha;
        }
        for (int64_t i = 0; i < d; i++) {
            if (j->beta == 1.0f)
                y[i] = x[i] * (1.0f / y[i]);
            else if (j->beta == 0.5f)
                y[i] = x[i] * (1.0f / sqrtf(y[i]));
            else
                y[i] = x[i] * powf(y[i], -j->beta);
        }
    }
}

TI__PRIVATE ti_status ti__tfs_lrn_run(ti__kctx *k) {
    ti__tfs_lrn_job j;
    size_t outer;
    ti__tfs_rows(k->in[0], &outer, &j.depth);
    j.x = (const float *)k->in[0]->data;
    j.y = (float *)k->out[0]->data;
    j.range = ti__attr_i(k->node, "radius", 0);
    j.bias = ti__attr_f(k->node, "bias", 0.0f);
    j.alpha = ti__attr_f(k->node, "alpha", 0.0f);
    j.beta = ti__attr_f(k->node, "beta", 0.0f);
    if (outer == 0 || j.depth == 0) return TI_OK;
    ti__parallel_for(k->tp, outer, TI__MAX((size_t)1, 4096 / j.depth), ti__tfs_lrn_pixels, &j);
    return TI_OK;
}
