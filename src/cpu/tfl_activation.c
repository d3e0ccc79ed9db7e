/* TFLite ops of one input (domain "tflite"): LOGISTIC, TANH, RELU, RELU6, RELU_N1_TO_1,
 * RELU_0_TO_1, LEAKY_RELU, HARD_SWISH, ELU, GELU, EXP, LOG, SQRT, RSQRT, SQUARE, ABS, NEG,
 * FLOOR, CEIL, ROUND, SIN, COS, QUANTIZE, DEQUANTIZE, CAST, LOGICAL_NOT; plus the helpers
 * tfl_elementwise.c shares (quantization parameters, activation ranges, gemmlowp fixed point).
 * Quantized paths repeat TFLite's kernels bit for bit as its builds compile them (x86 builds
 * run the optimized NEON loops through NEON_2_SSE, so QUANTIZE, DEQUANTIZE and 8-bit
 * requantization follow those loops where they round differently from the reference code);
 * float math only where TFLite uses it (tables built in float). Relies on qmath.c and
 * binary.c (dtype masks, value carriers). The op table is in tfl_elementwise.c, which comes
 * after this file in the amalgamation. Must not allocate in run: tables live in scratch. */

/* ---- shared helpers ------------------------------------------------------------------ */
/* Range of a quantized dtype; 0 for dtypes that are not 8/16/32-bit integers. */
TI__PRIVATE int ti__tfl_qrange(ti_dtype t, int32_t *lo, int32_t *hi) {
    switch (t) {
    case TI_DTYPE_U8: *lo = 0; *hi = 255; return 1;
    case TI_DTYPE_I8: *lo = -128; *hi = 127; return 1;
    case TI_DTYPE_I16: *lo = -32768; *hi = 32767; return 1;
    case TI_DTYPE_I32: *lo = INT32_MIN; *hi = INT32_MAX; return 1;
    default: *lo = *hi = 0; return 0;
    }
}

/* Per-tensor scale and zero point of t; 0 when t carries no quantization. */
TI__PRIVATE int ti__tfl_q(const ti_tensor *t, float *scale, int32_t *zp) {
    if (t == NULL || t->quant.count < 1 || t->quant.scale == NULL) return 0;
    *scale = t->quant.scale[0];
    *zp = t->quant.zero_point ? (int32_t)t->quant.zero_point[0] : 0;
    return 1;
}

/* Checks the quantization of a quantized tensor: present, scales finite and positive, zero
 * points inside the dtype's range (the integer kernels rely on both to stay in int32). */
TI__PRIVATE int ti__tfl_qcheck(ti__kctx *k, const ti_tensor *t, ti_dtype dt, const char *what) {
    int32_t lo = 0, hi = 0;
    if (t->quant.count < 1 || t->quant.scale == NULL)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "%s (%s) has no quantization parameters", what,
                         ti_dtype_name(dt));
    ti__tfl_qrange(dt, &lo, &hi);
    for (int i = 0; i < t->quant.count; i++) {
        const float s = t->quant.scale[i];
        const int64_t z = t->quant.zero_point ? t->quant.zero_point[i] : 0;
        if (!(s > 0.0f) || !(s <= FLT_MAX))
            return ti__kfail(k, TI_ERR_BAD_MODEL, "%s has scale %g; expected a finite scale > 0",
                             what, (double)s);
        if (z < lo || z > hi)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "%s (%s) has zero point %lld outside [%d, %d]",
                             what, ti_dtype_name(dt), (long long)z, (int)lo, (int)hi);
    }
    return TI_OK;
}

/* float -> int32 as TFLite's static_cast after rounding: saturating; NaN gives INT32_MIN,
 * which is what x86 returns for it (the kernels then clamp to the dtype's minimum). */
TI__PRIVATE int32_t ti__tfl_f2i(double v) {
    if (v != v) return INT32_MIN;
    if (v >= 2147483647.0) return INT32_MAX;
    if (v <= -2147483648.0) return INT32_MIN;
    return (int32_t)v;
}
TI__PRIVATE int32_t ti__tfl_clamp(int64_t v, int32_t lo, int32_t hi) {
    return v < lo ? lo : (v > hi ? hi : (int32_t)v);
}

/* TFLite CalculateActivationRangeQuantized: the bounds are quantized in float
 * (round(f / scale) in float, half away from zero). TANH and SIGN_BIT leave the full range,
 * as TFLite does for these ops. */
TI__PRIVATE void ti__tfl_act_q(int act, float scale, int32_t zp, int32_t qmin, int32_t qmax,
                               int32_t *lo, int32_t *hi) {
    float flo = 0.0f, fhi = 0.0f;
    int has_hi = 1;
    *lo = qmin;
    *hi = qmax;
    switch (act) {
    case TI__TFL_ACT_RELU: has_hi = 0; break;
    case TI__TFL_ACT_RELU6: fhi = 6.0f; break;
    case TI__TFL_ACT_RELU_N1_TO_1: flo = -1.0f; fhi = 1.0f; break;
    default: return;
    }
    int32_t q = (int32_t)ti__tfl_clamp((int64_t)zp + ti__tfl_f2i(roundf(flo / scale)), qmin, qmax);
    *lo = q > qmin ? q : qmin;
    if (has_hi) {
        q = (int32_t)ti__tfl_clamp((int64_t)zp + ti__tfl_f2i(roundf(fhi / scale)), qmin, qmax);
        *hi = q < qmax ? q : qmax;
    }
}

/* TFLite CalculateActivationRange for float outputs; TANH / SIGN_BIT: no clamp. */
TI__PRIVATE void ti__tfl_act_f(int act, float *lo, float *hi) {
    if (!ti__f_act_range(act, lo, hi)) {
        *lo = -FLT_MAX;
        *hi = FLT_MAX;
    }
}

/* The dtype the model declares for output i (QUANTIZE, DEQUANTIZE and CAST take their
 * target type from it, as TFLite does). */
TI__PRIVATE ti_dtype ti__tfl_out_dtype(const ti__kctx *k, int i) {
    const int v = k->node->outputs[i];
    if (k->model != NULL && v >= 0 && v < k->model->n_values) return k->model->values[v].dtype;
    return k->out[i]->dtype;
}

/* The kernel makes output 0 of dtype dt: the model must declare that dtype (TFLite has
 * variants with other output types, such as int16 x int16 -> int8 MUL, that these kernels
 * do not implement). */
TI__PRIVATE int ti__tfl_check_out_dtype(ti__kctx *k, ti_dtype dt) {
    const ti_dtype want = ti__tfl_out_dtype(k, 0);
    if (want != TI_DTYPE_UNKNOWN && want != dt)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "output dtype %s is not supported for these inputs "
                         "(expected %s)", ti_dtype_name(want), ti_dtype_name(dt));
    return TI_OK;
}

/* MultiplyByQuantizedMultiplier with the shift kept where the arithmetic is defined. */
TI__PRIVATE int32_t ti__tfl_qm(int32_t x, int32_t m, int shift) {
    return ti__q_mul(x, m, shift < -31 ? -31 : (shift > 31 ? 31 : shift));
}

/* gemmlowp fixed point on int32 (wrapping adds, saturating shifts), for DIV and RSQRT. */
TI__PRIVATE int32_t ti__tfl_wadd(int32_t a, int32_t b) { return (int32_t)((uint32_t)a + (uint32_t)b); }
TI__PRIVATE int32_t ti__tfl_wsub(int32_t a, int32_t b) { return (int32_t)((uint32_t)a - (uint32_t)b); }
TI__PRIVATE int32_t ti__tfl_sat_shl(int32_t x, int e) { /* SaturatingRoundingMultiplyByPOT<e> */
    const int32_t thr = (int32_t)((1LL << (31 - e)) - 1);
    if (x > thr) return INT32_MAX;
    if (x < -thr) return INT32_MIN;
    return (int32_t)((uint32_t)x << e);
}
TI__PRIVATE int ti__tfl_clz32(uint32_t x) {
    int n = 0;
    if (x == 0) return 32;
    while (!(x & 0x80000000u)) {
        x <<= 1;
        n++;
    }
    return n;
}
/* 1 / (1 + a) for a in [0, 1), Q0.31 in and out (Newton-Raphson, 3 steps, in Q2.29). */
TI__PRIVATE int32_t ti__tfl_one_over_one_plus_x(int32_t a) {
    const int64_t sum = (int64_t)a + INT32_MAX;
    const int32_t half_den = (int32_t)((sum + (sum >= 0 ? 1 : -1)) / 2);
    int32_t x = ti__tfl_wadd(1515870810, ti__q_srdhm(half_den, -1010580540)); /* 48/17 - 32/17 d */
    for (int i = 0; i < 3; i++) {
        const int32_t one_minus = ti__tfl_wsub(1 << 29, ti__q_srdhm(half_den, x));
        x = ti__tfl_wadd(x, ti__tfl_sat_shl(ti__q_srdhm(x, one_minus), 2));
    }
    return ti__tfl_sat_shl(x, 1);
}
/* TFLite GetReciprocal(x, 31, &shift): x > 0. */
TI__PRIVATE int32_t ti__tfl_reciprocal(int32_t x, int *num_bits_over_unit) {
    const int hpo = ti__tfl_clz32((uint32_t)x);
    *num_bits_over_unit = 31 - hpo;
    return ti__tfl_one_over_one_plus_x((int32_t)(((uint32_t)x << hpo) - 0x80000000u));
}
/* TFLite GetInvSqrtQuantizedMultiplierExp(input, -1, ...): 1/sqrt(input) as multiplier and
 * left shift (Newton-Raphson in Q3.28, 5 steps). */
TI__PRIVATE void ti__tfl_inv_sqrt(int32_t input, int32_t *inv, int *shift) {
    if (input <= 1) {
        *inv = INT32_MAX;
        *shift = 0;
        return;
    }
    int s = 11;
    while (input >= (1 << 29)) {
        input /= 4;
        s++;
    }
    const int pairs = (ti__tfl_clz32((uint32_t)input) - 1) / 2 - 1;
    s -= pairs;
    input <<= 2 * pairs;
    const int32_t half_in = ti__q_rdbypot(input >> 1, 1);
    const int32_t half_three = (1 << 28) + (1 << 27);
    int32_t x = 1 << 28;
    for (int i = 0; i < 5; i++) {
        const int32_t x3 = ti__tfl_sat_shl(ti__q_srdhm(ti__q_srdhm(x, x), x), 6);
        x = ti__tfl_sat_shl(ti__tfl_wsub(ti__q_srdhm(half_three, x), ti__q_srdhm(half_in, x3)), 3);
    }
    x = ti__q_srdhm(x, 1518500250); /* sqrt(2) / 2 */
    if (s < 0) {
        x = (int32_t)((uint32_t)x << -s);
        s = 0;
    }
    *inv = x;
    *shift = -s;
}

/* x << n on int32 without overflow traps (wraps as the vector shifts do) */
TI__PRIVATE int32_t ti__tfl_vshl_u(int32_t x, int n) { return (int32_t)((uint32_t)x << (n > 31 ? 31 : n)); }

/* gemmlowp int16 arithmetic for HARD_SWISH. */
TI__PRIVATE int16_t ti__tfl_srdhm16(int16_t a, int16_t b) {
    if (a == b && a == INT16_MIN) return INT16_MAX;
    const int32_t ab = (int32_t)a * (int32_t)b;
    return (int16_t)((ab + (ab >= 0 ? (1 << 14) : (1 - (1 << 14)))) / (1 << 15));
}
TI__PRIVATE int16_t ti__tfl_rdbypot16(int16_t x, int e) {
    if (e > 31) e = 31;
    const int16_t mask = (int16_t)((1LL << e) - 1);
    const int16_t rem = (int16_t)(x & mask);
    const int16_t thr = (int16_t)((mask >> 1) + (x < 0 ? 1 : 0));
    return (int16_t)((x >> e) + (rem > thr ? 1 : 0));
}
TI__PRIVATE int16_t ti__tfl_sat_shl16(int16_t v, int amount) {
    const int64_t r = (int64_t)v * ((int64_t)1 << (amount > 31 ? 31 : amount));
    return (int16_t)(r > INT16_MAX ? INT16_MAX : (r < INT16_MIN ? INT16_MIN : r));
}

/* A 256-entry table of a quantized 8-bit op computed in float as TFLite's LUTPopulate does:
 * dequantize, f, multiply by 1/out_scale, round half away from zero, add the zero point,
 * clamp. Indexed by the raw byte (int8 values cast to uint8). */
typedef float (*ti__tfl_lutfn)(float x, const void *p);
TI__PRIVATE void ti__tfl_lut8(uint8_t *lut, int is_signed, float in_scale, int32_t in_zp,
                              float out_scale, int32_t out_zp, ti__tfl_lutfn fn, const void *p) {
    const float inv = 1.0f / out_scale;
    const int32_t lo = is_signed ? -128 : 0, hi = is_signed ? 127 : 255;
    for (int32_t v = lo; v <= hi; v++) {
        const float x = in_scale * (float)(v - in_zp);
        const float r = roundf(fn(x, p) * inv);
        const int32_t q = ti__tfl_clamp(ti__tfl_f2i(r + (float)out_zp), lo, hi);
        lut[(uint8_t)v] = (uint8_t)(q & 0xff);
    }
}
/* TFLite's int16 table (LUTPopulateInt16): 512 segments over the input range plus an end
 * point, each sample biased by half the interpolation error at the segment's midpoint;
 * read with linear interpolation on the low 7 bits (ti__tfl_lut16_get). All in float. */
/* float -> int16 after clamping to [-32768, 32767]; NaN gives 0 (what x86 makes of it) */
TI__PRIVATE int16_t ti__tfl_f2i16(float q) {
    if (q != q) return 0;
    return (int16_t)(q < -32768.0f ? -32768.0f : (q > 32767.0f ? 32767.0f : q));
}
TI__PRIVATE void ti__tfl_lut16(int16_t *lut, float in_scale, int32_t in_zp, float out_scale,
                               int32_t out_zp, ti__tfl_lutfn fn, const void *p) {
    const float in_min = in_scale * (float)(-32768 - in_zp), in_max = in_scale * (float)(32767 - in_zp);
    const float out_min = out_scale * (float)(-32768 - out_zp), out_max = out_scale * (float)(32767 - out_zp);
    const float step = (in_max - in_min) / 512.0f, half = step / 2.0f;
    const float inv = 65536.0f / (out_max - out_min);
    for (int i = 0; i < 512; i++) {
        const float v = fn(in_min + (float)i * step, p);
        const float vm = fn(in_min + (float)i * step + half, p);
        const float vn = fn(in_min + (float)(i + 1) * step, p);
        const float sample = roundf(v * inv);
        const float interp = roundf((vn * inv + roundf(v * inv)) / 2.0f);
        const float bias = roundf((interp - roundf(vm * inv)) / 2.0f);
        lut[i] = ti__tfl_f2i16(sample - bias);
    }
    lut[512] = ti__tfl_f2i16(roundf(fn(in_max, p) * inv));
}
TI__PRIVATE int16_t ti__tfl_lut16_get(const int16_t *lut, int16_t v) {
    const int idx = 256 + (v >> 7), off = v & 0x7f;
    const int16_t slope = (int16_t)(lut[idx + 1] - lut[idx]);
    return (int16_t)(lut[idx] + ((slope * off + 64) >> 7));
}

#define TI__TFL_SQRT1_2 0.70710678118654752440
#define TI__TFL_SQRT_2_PI 0.79788456080286535588 /* sqrt(2 / pi) */
TI__PRIVATE float ti__tfl_sigmoidf(float x) { return 1.0f / (1.0f + expf(-x)); }
TI__PRIVATE float ti__tfl_gelu_exact(float x) {
    return 0.5f * x * erfcf(x * (float)-TI__TFL_SQRT1_2);
}
TI__PRIVATE float ti__tfl_gelu_tanh(float x) {
    return 0.5f * x * (1.0f + tanhf((float)TI__TFL_SQRT_2_PI * (x + 0.044715f * x * x * x)));
}
TI__PRIVATE float ti__tfl_lut_logistic(float x, const void *p) { (void)p; return ti__tfl_sigmoidf(x); }
TI__PRIVATE float ti__tfl_lut_tanh(float x, const void *p) { (void)p; return tanhf(x); }
TI__PRIVATE float ti__tfl_lut_elu(float x, const void *p) { (void)p; return x < 0.0f ? expm1f(x) : x; }
TI__PRIVATE float ti__tfl_lut_exp(float x, const void *p) { (void)p; return expf(x); }
TI__PRIVATE float ti__tfl_lut_gelu(float x, const void *p) {
    return *(const int *)p ? ti__tfl_gelu_tanh(x) : ti__tfl_gelu_exact(x);
}
TI__PRIVATE float ti__tfl_lut_log(float x, const void *p) { /* p: the output's real minimum */
    return x <= 0.0f ? *(const float *)p : logf(x);
}
TI__PRIVATE float ti__tfl_lut_rsqrt(float x, const void *p) { /* p: the output's real maximum */
    return x <= 0.0f ? *(const float *)p : 1.0f / sqrtf(x);
}
/* round half to even, as TFLite's ROUND (RoundToNearest) */
TI__PRIVATE float ti__tfl_round_even(float x) {
    const float f = floorf(x), d = x - f; /* d == 0.5 only where |f| < 2^23 */
    if (d < 0.5f || (d == 0.5f && ((int64_t)f & 1) == 0)) return f;
    return f + 1.0f;
}

/* ---- the ops of one input ------------------------------------------------------------ */
enum {
    TI__TU_LOGISTIC, TI__TU_TANH, TI__TU_RELU, TI__TU_RELU6, TI__TU_RELU_N1_TO_1,
    TI__TU_RELU_0_TO_1, TI__TU_LEAKY_RELU, TI__TU_HARD_SWISH, TI__TU_ELU, TI__TU_GELU,
    TI__TU_EXP, TI__TU_LOG, TI__TU_SQRT, TI__TU_RSQRT, TI__TU_SQUARE, TI__TU_ABS, TI__TU_NEG,
    TI__TU_FLOOR, TI__TU_CEIL, TI__TU_ROUND, TI__TU_SIN, TI__TU_COS, TI__TU_QUANTIZE,
    TI__TU_DEQUANTIZE, TI__TU_CAST, TI__TU_NOT
};

#define TI__TQ8 (TI__EDT(TI_DTYPE_U8) | TI__EDT(TI_DTYPE_I8))
/* raw: dtypes computed on as plain values; quant: dtypes that need quantization parameters
 * (int16 in both: quantized when the tensor carries parameters). Indexed by TI__TU_*. */
static const struct {
    unsigned raw, quant;
} ti__tfl_un_types[] = {
    {TI__EDT(TI_DTYPE_F32), TI__TQ8},                          /* LOGISTIC */
    {TI__EDT(TI_DTYPE_F32), TI__TQ8},                          /* TANH */
    {TI__EDT(TI_DTYPE_F32), TI__TQ8 | TI__EDT(TI_DTYPE_I16)},  /* RELU */
    {TI__EDT(TI_DTYPE_F32), TI__TQ8 | TI__EDT(TI_DTYPE_I16)},  /* RELU6 */
    {TI__EDT(TI_DTYPE_F32), TI__TQ8},                          /* RELU_N1_TO_1 */
    {TI__EDT(TI_DTYPE_F32), TI__TQ8},                          /* RELU_0_TO_1 */
    {TI__EDT(TI_DTYPE_F32), TI__TQ8 | TI__EDT(TI_DTYPE_I16)},  /* LEAKY_RELU */
    {TI__EDT(TI_DTYPE_F32), TI__TQ8},                          /* HARD_SWISH */
    {TI__EDT(TI_DTYPE_F32), TI__EDT(TI_DTYPE_I8)},             /* ELU */
    {TI__EDT(TI_DTYPE_F32), TI__TQ8 | TI__EDT(TI_DTYPE_I16)},  /* GELU */
    {TI__EDT(TI_DTYPE_F32), TI__EDT(TI_DTYPE_I8) | TI__EDT(TI_DTYPE_I16)}, /* EXP */
    {TI__EDT(TI_DTYPE_F32), TI__EDT(TI_DTYPE_I8) | TI__EDT(TI_DTYPE_I16)}, /* LOG */
    {TI__EDT(TI_DTYPE_F32), TI__EDT(TI_DTYPE_I8) | TI__EDT(TI_DTYPE_I16)}, /* SQRT */
    {TI__EDT(TI_DTYPE_F32), TI__EDT(TI_DTYPE_I8) | TI__EDT(TI_DTYPE_I16)}, /* RSQRT */
    {TI__EDT(TI_DTYPE_F32), 0},                                /* SQUARE */
    {TI__EDT(TI_DTYPE_F32) | TI__EDT(TI_DTYPE_I32) | TI__EDT(TI_DTYPE_I16),
     TI__EDT(TI_DTYPE_I8) | TI__EDT(TI_DTYPE_I16)},            /* ABS */
    {TI__EDT(TI_DTYPE_F32) | TI__EDT(TI_DTYPE_I8) | TI__EDT(TI_DTYPE_I16) |
         TI__EDT(TI_DTYPE_I32) | TI__EDT(TI_DTYPE_I64), 0},    /* NEG: raw values */
    {TI__EDT(TI_DTYPE_F32), 0}, /* FLOOR */
    {TI__EDT(TI_DTYPE_F32), 0}, /* CEIL */
    {TI__EDT(TI_DTYPE_F32), 0}, /* ROUND */
    {TI__EDT(TI_DTYPE_F32), 0}, /* SIN */
    {TI__EDT(TI_DTYPE_F32), 0}, /* COS */
    {TI__EDT(TI_DTYPE_F32), TI__TQ8 | TI__EDT(TI_DTYPE_I16) | TI__EDT(TI_DTYPE_I32)}, /* QUANTIZE */
    {TI__EDT(TI_DTYPE_F16), TI__TQ8 | TI__EDT(TI_DTYPE_I16)},  /* DEQUANTIZE */
    {TI__EDT_ALL, 0},                                          /* CAST */
    {TI__EDT_BOOL, 0},                                         /* LOGICAL_NOT */
};

/* Everything a run needs, filled before the element loops (which run on the thread pool). */
typedef struct ti__tfl_un {
    int code;
    int quant; /* the input is quantized */
    const void *x;
    void *y;
    ti_dtype xt, yt;
    int32_t in_zp, out_zp, qmin, qmax, lo, hi;
    int32_t m1, m2;
    int s1, s2;
    float in_scale, out_scale, alpha;
    int approximate;
    int16_t hs_out_m, hs_relu_m; /* HARD_SWISH int16 multipliers and their exponents */
    int hs_out_e, hs_relu_e;
    const uint8_t *lut;
    int lut_xor; /* >= 0: lut (both halves) is v ^ lut_xor, looked up as that */
    const int16_t *lut16;
    const float *ch_scale; /* per-channel QUANTIZE / DEQUANTIZE */
    const int64_t *ch_zp;
    size_t ch_inner, ch_count;
    size_t n_vec;  /* QUANTIZE / DEQUANTIZE: elements [0, n_vec) go through TFLite's vector loop */
    float vscale, vzero; /* ... with these float constants */
} ti__tfl_un;

TI__PRIVATE int ti__tfl_un_shape(ti__kctx *k, int code) {
    TI__REQUIRE_INPUT(k, 0);
    const ti_tensor *x = k->in[0];
    if (k->n_out < 1 || k->out[0] == NULL)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "output 0 is required");
    ti_tensor *y = k->out[0];
    const unsigned raw = ti__tfl_un_types[code].raw, quant = ti__tfl_un_types[code].quant;
    const int has_q = x->quant.count > 0;
    ti_dtype yt = x->dtype;
    int r;
    if (!TI__EDT_IN(x->dtype, raw | quant))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "input dtype %s is not supported%s",
                         ti_dtype_name(x->dtype),
                         x->dtype == TI_DTYPE_I16 && code <= TI__TU_TANH
                             ? " (TFLite's int16 LOGISTIC/TANH fixed-point kernel is not implemented)"
                             : "");
    if (code == TI__TU_DEQUANTIZE) {
        yt = TI_DTYPE_F32;
    } else if (code == TI__TU_QUANTIZE || code == TI__TU_CAST) {
        yt = ti__tfl_out_dtype(k, 0);
        if (!TI__EDT_IN(yt, TI__EDT_ALL))
            return ti__kfail(k, TI_ERR_UNSUPPORTED, "output dtype %s is not supported",
                             ti_dtype_name(yt));
    }
    if (code == TI__TU_QUANTIZE) {
        const unsigned to = x->dtype == TI_DTYPE_F32 ? TI__TQ8 | TI__EDT(TI_DTYPE_I16)
                            : x->dtype == TI_DTYPE_I32 ? TI__EDT(TI_DTYPE_I8) | TI__EDT(TI_DTYPE_I16)
                            : x->dtype == TI_DTYPE_I16 ? TI__EDT(TI_DTYPE_I8) | TI__EDT(TI_DTYPE_I16) |
                                                             TI__EDT(TI_DTYPE_I32)
                                                       : TI__TQ8 | TI__EDT(TI_DTYPE_I16);
        if (!TI__EDT_IN(yt, to))
            return ti__kfail(k, TI_ERR_UNSUPPORTED, "quantizing %s to %s is not supported",
                             ti_dtype_name(x->dtype), ti_dtype_name(yt));
        if ((r = ti__tfl_qcheck(k, y, yt, "output")) != TI_OK) return r;
        if (y->quant.count > 1) {
            if (x->dtype != TI_DTYPE_F32)
                return ti__kfail(k, TI_ERR_UNSUPPORTED,
                                 "per-channel requantization (%s to %s) is not supported",
                                 ti_dtype_name(x->dtype), ti_dtype_name(yt));
            if (y->quant.axis < 0 || y->quant.axis >= x->rank ||
                x->shape[y->quant.axis] != y->quant.count)
                return ti__kfail(k, TI_ERR_BAD_MODEL,
                                 "output has %d scales on axis %d, which does not match the input",
                                 y->quant.count, y->quant.axis);
        }
    }
    if (TI__EDT_IN(x->dtype, quant) && (has_q || !TI__EDT_IN(x->dtype, raw))) {
        if ((r = ti__tfl_qcheck(k, x, x->dtype, "input 0")) != TI_OK) return r;
        if (x->quant.count > 1 && code != TI__TU_DEQUANTIZE)
            return ti__kfail(k, TI_ERR_UNSUPPORTED, "per-channel quantized input is not supported");
        if (x->quant.count > 1 && (x->quant.axis < 0 || x->quant.axis >= x->rank ||
                                   x->shape[x->quant.axis] != x->quant.count))
            return ti__kfail(k, TI_ERR_BAD_MODEL,
                             "input has %d scales on axis %d, which does not match its shape",
                             x->quant.count, x->quant.axis);
        if (code != TI__TU_QUANTIZE && code != TI__TU_DEQUANTIZE &&
            (r = ti__tfl_qcheck(k, y, yt, "output")) != TI_OK)
            return r;
    }
    if ((r = ti__tfl_check_out_dtype(k, yt)) != TI_OK) return r;
    if (!ti__set_shape(y, yt, x->rank, x->shape))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "output shape is invalid");
    return TI_OK;
}

TI__PRIVATE size_t ti__tfl_un_scratch(ti__kctx *k) {
    return TI__EDT_IN(k->in[0]->dtype, TI__TQ8) ? 512 : (k->in[0]->dtype == TI_DTYPE_I16 ? 513 * 2 : 0);
}

#define TI__TFL_F32_LOOP(EXPR)                                                                \
    do {                                                                                      \
        for (size_t i = b; i < e; i++) {                                                      \
            const float v = xf[i];                                                            \
            yf[i] = (EXPR);                                                                   \
        }                                                                                     \
    } while (0)

/* raw 8/16-bit element i of x as int32 */
#define TI__TFL_LD(P, T, I)                                                                   \
    ((T) == TI_DTYPE_U8 ? (int32_t)((const uint8_t *)(P))[I]                                   \
     : (T) == TI_DTYPE_I8 ? (int32_t)((const int8_t *)(P))[I]                                  \
     : (T) == TI_DTYPE_I16 ? (int32_t)((const int16_t *)(P))[I]                                \
                           : ((const int32_t *)(P))[I])

TI__PRIVATE void ti__tfl_st(void *p, ti_dtype t, size_t i, int32_t v) {
    switch (t) {
    case TI_DTYPE_U8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case TI_DTYPE_I8: ((int8_t *)p)[i] = (int8_t)v; break;
    case TI_DTYPE_I16: ((int16_t *)p)[i] = (int16_t)v; break;
    default: ((int32_t *)p)[i] = v; break;
    }
}

/* One quantized element of the ops that are not a table. vec: the element is in TFLite's
 * 8-bit requantization vector loop (see TI__TU_QUANTIZE). */
TI__PRIVATE int32_t ti__tfl_un_q(const ti__tfl_un *u, int32_t x, int vec) {
    switch (u->code) {
    case TI__TU_RELU: case TI__TU_RELU6: case TI__TU_RELU_N1_TO_1: case TI__TU_RELU_0_TO_1:
        return ti__tfl_clamp((int64_t)u->out_zp + ti__tfl_qm(x - u->in_zp, u->m1, u->s1), u->lo,
                             u->hi);
    case TI__TU_LEAKY_RELU: {
        const int32_t v = x - u->in_zp;
        int64_t o;
        if (v >= 0) {
            o = (int64_t)u->out_zp + ti__tfl_qm(v, u->m1, u->s1);
        } else { /* alpha may be negative: TFLite multiplies by |m| and negates */
            const int32_t am = u->m2 >= 0 ? u->m2 : (u->m2 == INT32_MIN ? INT32_MAX : -u->m2);
            const int32_t s = ti__tfl_qm(v, am, u->s2);
            o = (int64_t)u->out_zp + (u->m2 < 0 ? -(int64_t)s : s);
        }
        return ti__tfl_clamp(o, u->qmin, u->qmax);
    }
    case TI__TU_HARD_SWISH: { /* TFLite reference_ops::HardSwish, int16 fixed point */
        const int16_t in = (int16_t)(x - u->in_zp);
        const int16_t hires = (int16_t)(in * (1 << 7));
        const int16_t pre = ti__tfl_srdhm16(hires, u->hs_out_m);
        int16_t rel = hires;
        if (u->hs_relu_e > 0) rel = ti__tfl_sat_shl16(rel, u->hs_relu_e - 1);
        rel = ti__tfl_srdhm16(rel, u->hs_relu_m);
        if (u->hs_relu_e > 0) rel = ti__tfl_sat_shl16(rel, 1);
        if (u->hs_relu_e < 0) rel = ti__tfl_rdbypot16(rel, -u->hs_relu_e);
        rel = (int16_t)((rel + (1 << 15)) >> 1);
        /* SaturatingDoublingHighMul: truncating, not rounding */
        const int16_t prod = (rel == INT16_MIN && pre == INT16_MIN)
                                 ? INT16_MAX
                                 : (int16_t)(((int32_t)rel * (int32_t)pre) / (1 << 15));
        int16_t o = ti__tfl_rdbypot16(prod, -u->hs_out_e);
        o = (int16_t)(o + u->out_zp);
        return ti__tfl_clamp(o, u->qmin, u->qmax);
    }
    case TI__TU_SQRT: { /* float, truncated toward zero (not rounded) as in TFLite */
        const float d = u->in_scale * (float)(x - u->in_zp);
        const int64_t q = (int64_t)ti__tfl_f2i((double)(sqrtf(d) / u->out_scale)) + u->out_zp;
        return ti__tfl_clamp(q, u->qmin, u->qmax);
    }
    case TI__TU_RSQRT: {
        const int32_t v = x - u->in_zp;
        int32_t inv;
        int sh;
        if (v == 0) return u->qmax;
        ti__tfl_inv_sqrt(v, &inv, &sh);
        const int32_t d = ti__tfl_qm(1, inv, sh + 20);
        return ti__tfl_clamp((int64_t)ti__tfl_qm(d, u->m1, u->s1 - 20) + u->out_zp, u->qmin,
                             u->qmax);
    }
    case TI__TU_ABS: {
        const int32_t v = x - u->in_zp < 0 ? u->in_zp - x : x - u->in_zp;
        if (u->m1 == 0) return ti__tfl_clamp((int64_t)v + u->out_zp, u->qmin, u->qmax);
        return ti__tfl_clamp((int64_t)ti__tfl_qm(v, u->m1, u->s1) + u->out_zp, u->qmin, u->qmax);
    }
    case TI__TU_QUANTIZE: { /* requantize between integer types */
        if (!vec) /* int32 inputs may wrap when the zero point is taken off, as in TFLite */
            return ti__tfl_clamp((int64_t)ti__tfl_qm(ti__tfl_wsub(x, u->in_zp), u->m1, u->s1) +
                                     u->out_zp, u->qmin, u->qmax);
        /* TFLite's 8-bit vector loop ends with ARM's rounding right shift, which rounds
         * half up rather than away from zero */
        const int left = u->s1 > 0 ? u->s1 : 0, right = u->s1 > 0 ? 0 : -u->s1;
        int32_t p = ti__q_srdhm(ti__tfl_vshl_u(x - u->in_zp, left), u->m1);
        if (right > 0) p = (int32_t)(((int64_t)p + ((int64_t)1 << (right - 1))) >> right);
        return ti__tfl_clamp((int64_t)p + u->out_zp, u->qmin, u->qmax);
    }
    default: return x;
    }
}

TI__PRIVATE void ti__tfl_un_range(void *ctx, size_t b, size_t e) {
    const ti__tfl_un *u = (const ti__tfl_un *)ctx;
    const float *xf = (const float *)u->x;
    float *yf = (float *)u->y;
    if (u->code == TI__TU_DEQUANTIZE) {
        if (u->xt == TI_DTYPE_F16) {
            for (size_t i = b; i < e; i++) yf[i] = ti__f16_to_f32(((const uint16_t *)u->x)[i]);
        } else if (u->ch_scale != NULL) { /* per channel: float arithmetic */
            for (size_t i = b; i < e; i++) {
                const size_t c = (i / u->ch_inner) % u->ch_count;
                const int32_t z = u->ch_zp ? (int32_t)u->ch_zp[c] : 0;
                yf[i] = u->ch_scale[c] * (float)(TI__TFL_LD(u->x, u->xt, i) - z);
            }
        } else { /* per tensor: TFLite's vector loop works in float (x * scale + -zp * scale,
                  * not fused), its leftover elements in double */
            const double s = u->in_scale;
            for (size_t i = b; i < e; i++) {
                const int32_t v = TI__TFL_LD(u->x, u->xt, i);
                if (i < u->n_vec) {
                    const float p = (float)v * u->vscale;
                    yf[i] = p + u->vzero;
                } else {
                    yf[i] = (float)(s * (double)(v - u->in_zp));
                }
            }
        }
        return;
    }
    if (u->code == TI__TU_QUANTIZE && u->xt == TI_DTYPE_F32) {
        if (u->ch_scale != NULL) { /* per channel: float division, as TFLite's reference */
            for (size_t i = b; i < e; i++) {
                const size_t c = (i / u->ch_inner) % u->ch_count;
                const int64_t z = u->ch_zp ? u->ch_zp[c] : 0;
                const int64_t q = (int64_t)ti__tfl_f2i(roundf(xf[i] / u->ch_scale[c])) + z;
                ti__tfl_st(u->y, u->yt, i, ti__tfl_clamp(q, u->qmin, u->qmax));
            }
        } else { /* per tensor: TFLite's vector loop multiplies by a float reciprocal and
                  * rounds half to even; its leftover elements divide in double and round half
                  * away from zero */
            const double s = u->out_scale;
            for (size_t i = b; i < e; i++) {
                const float p = xf[i] * u->vscale;
                const int32_t r = i < u->n_vec ? ti__tfl_f2i(ti__tfl_round_even(p))
                                               : ti__tfl_f2i(ti__q_round((double)xf[i] / s));
                ti__tfl_st(u->y, u->yt, i, ti__tfl_clamp((int64_t)r + u->out_zp, u->qmin, u->qmax));
            }
        }
        return;
    }
    if (u->quant) {
        if (u->lut16 != NULL) {
            const int16_t *x16 = (const int16_t *)u->x;
            int16_t *y16 = (int16_t *)u->y;
            for (size_t i = b; i < e; i++) y16[i] = ti__tfl_lut16_get(u->lut16, x16[i]);
        } else if (u->lut != NULL) {
            const uint8_t *x8 = (const uint8_t *)u->x;
            uint8_t *y8 = (uint8_t *)u->y;
            const uint8_t *lv = u->lut + (u->n_vec > 0 ? 256 : 0); /* vector-loop table */
            size_t m = u->n_vec < b ? b : (u->n_vec > e ? e : u->n_vec); /* [b, m) vector loop's */
            if (u->lut_xor >= 0) { /* both tables flip bits (uint8 <-> int8 at one scale) */
                const uint8_t f = (uint8_t)u->lut_xor;
                const uint64_t f8 = 0x0101010101010101ull * f;
                size_t i = b;
                for (; i + 8 <= e; i += 8) { /* eight bytes at a time */
                    uint64_t v;
                    memcpy(&v, x8 + i, 8);
                    v ^= f8;
                    memcpy(y8 + i, &v, 8);
                }
                for (; i < e; i++) y8[i] = (uint8_t)(x8[i] ^ f);
            } else {
                for (size_t i = b; i < m; i++) y8[i] = lv[x8[i]];
                for (size_t i = m; i < e; i++) y8[i] = u->lut[x8[i]];
            }
        } else {
            for (size_t i = b; i < e; i++)
                ti__tfl_st(u->y, u->yt, i, ti__tfl_un_q(u, TI__TFL_LD(u->x, u->xt, i), i < u->n_vec));
        }
        return;
    }
    switch (u->code) {
    case TI__TU_LOGISTIC: TI__TFL_F32_LOOP(ti__tfl_sigmoidf(v)); break;
    case TI__TU_TANH: TI__TFL_F32_LOOP(tanhf(v)); break;
    case TI__TU_RELU: TI__TFL_F32_LOOP(v < 0.0f ? 0.0f : v); break;
    case TI__TU_RELU6: TI__TFL_F32_LOOP(v < 0.0f ? 0.0f : (v > 6.0f ? 6.0f : v)); break;
    case TI__TU_RELU_N1_TO_1: TI__TFL_F32_LOOP(v < -1.0f ? -1.0f : (v > 1.0f ? 1.0f : v)); break;
    case TI__TU_RELU_0_TO_1: TI__TFL_F32_LOOP(v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v)); break;
    case TI__TU_LEAKY_RELU: {
        const float a = u->alpha;
        TI__TFL_F32_LOOP(v > 0.0f ? v : v * a);
        break;
    }
    case TI__TU_HARD_SWISH: /* TFLite's vector loop scales first: (x / 6) * relu6(x + 3) */
        for (size_t i = b; i < e; i++) {
            const float v = xf[i], t = v + 3.0f;
            const float r = t < 0.0f ? 0.0f : (t > 6.0f ? 6.0f : t);
            yf[i] = i < u->n_vec ? (v * (1.0f / 6.0f)) * r : v * r * (1.0f / 6.0f);
        }
        break;
    case TI__TU_ELU: TI__TFL_F32_LOOP(v < 0.0f ? expm1f(v) : v); break;
    case TI__TU_GELU:
        if (u->approximate) TI__TFL_F32_LOOP(ti__tfl_gelu_tanh(v));
        else TI__TFL_F32_LOOP(ti__tfl_gelu_exact(v));
        break;
    case TI__TU_EXP: TI__TFL_F32_LOOP(expf(v)); break;
    case TI__TU_LOG: TI__TFL_F32_LOOP(logf(v)); break;
    case TI__TU_SQRT: TI__TFL_F32_LOOP(sqrtf(v)); break;
    case TI__TU_RSQRT: TI__TFL_F32_LOOP(1.0f / sqrtf(v)); break;
    case TI__TU_SQUARE: TI__TFL_F32_LOOP(v * v); break;
    case TI__TU_FLOOR: TI__TFL_F32_LOOP(floorf(v)); break;
    case TI__TU_CEIL: TI__TFL_F32_LOOP(ceilf(v)); break;
    case TI__TU_ROUND: TI__TFL_F32_LOOP(ti__tfl_round_even(v)); break;
    case TI__TU_SIN: TI__TFL_F32_LOOP(sinf(v)); break;
    case TI__TU_COS: TI__TFL_F32_LOOP(cosf(v)); break;
    case TI__TU_ABS:
        if (u->xt == TI_DTYPE_F32) {
            TI__TFL_F32_LOOP(fabsf(v));
        } else { /* int32 / int16 without quantization; |INT_MIN| wraps as in C++ */
            for (size_t i = b; i < e; i++) {
                const int64_t v = TI__TFL_LD(u->x, u->xt, i);
                ti__tfl_st(u->y, u->yt, i, (int32_t)(uint32_t)(uint64_t)(v < 0 ? -v : v));
            }
        }
        break;
    case TI__TU_NEG:
        if (u->xt == TI_DTYPE_F32) {
            TI__TFL_F32_LOOP(-v);
        } else if (u->xt == TI_DTYPE_I64) {
            for (size_t i = b; i < e; i++)
                ((int64_t *)u->y)[i] = (int64_t)(0u - (uint64_t)((const int64_t *)u->x)[i]);
        } else { /* raw values, also for int8: TFLite negates the stored integers */
            for (size_t i = b; i < e; i++)
                ti__tfl_st(u->y, u->yt, i, (int32_t)(0u - (uint32_t)TI__TFL_LD(u->x, u->xt, i)));
        }
        break;
    case TI__TU_NOT: {
        const uint8_t *x8 = (const uint8_t *)u->x;
        uint8_t *y8 = (uint8_t *)u->y;
        for (size_t i = b; i < e; i++) y8[i] = x8[i] ? 0 : 1;
        break;
    }
    default: break;
    }
}

/* CAST: float -> integer truncates and saturates (NaN gives the maximum), as TFLite's
 * SafeCast; integers wrap; anything -> bool is != 0. Moves values through binary.c's
 * carriers (double for floats, int64 for signed and bool, uint64 for unsigned). */
TI__PRIVATE void ti__tfl_cast(const ti_tensor *x, ti_tensor *y) {
    const size_t n = ti__numel(x);
    const ti_dtype sd = x->dtype, dd = y->dtype;
    const int carry = ti__carry_of(sd);
    union {
        double f[TI__CARRY_CHUNK];
        int64_t i[TI__CARRY_CHUNK];
        uint64_t u[TI__CARRY_CHUNK];
    } v;
    double lo = 0.0, hi_excl = 0.0; /* float -> integer: [lo, hi_excl) passes through */
    uint64_t hi_u = 0;
    switch (dd) {
    case TI_DTYPE_I8: lo = -128.0; hi_excl = 128.0; hi_u = 127; break;
    case TI_DTYPE_U8: hi_excl = 256.0; hi_u = 255; break;
    case TI_DTYPE_I16: lo = -32768.0; hi_excl = 32768.0; hi_u = 32767; break;
    case TI_DTYPE_U16: hi_excl = 65536.0; hi_u = 65535; break;
    case TI_DTYPE_I32: lo = -2147483648.0; hi_excl = 2147483648.0; hi_u = INT32_MAX; break;
    case TI_DTYPE_U32: hi_excl = 4294967296.0; hi_u = UINT32_MAX; break;
    case TI_DTYPE_I64: lo = -9223372036854775808.0; hi_excl = 9223372036854775808.0; hi_u = INT64_MAX; break;
    case TI_DTYPE_U64: hi_excl = 18446744073709551616.0; hi_u = UINT64_MAX; break;
    default: break;
    }
    if (sd == dd) {
        memcpy(y->data, x->data, n * ti_dtype_size(sd));
        return;
    }
    for (size_t off = 0; off < n; off += TI__CARRY_CHUNK) {
        const size_t m = TI__MIN((size_t)TI__CARRY_CHUNK, n - off);
        if (carry == TI__CARRY_F && hi_u != 0) {
            ti__carry_load_f(x->data, sd, off, 1, m, v.f);
            for (size_t i = 0; i < m; i++) { /* wraps into the dtype when stored */
                const double d = v.f[i];
                const uint64_t lo_bits = (uint64_t)(int64_t)lo;
                v.u[i] = (d != d || d >= hi_excl) ? hi_u
                         : d < lo                 ? lo_bits
                         : d < 0.0                ? (uint64_t)(int64_t)d
                                                  : (uint64_t)d;
            }
            ti__carry_store_u(y->data, dd, off, m, v.u);
        } else if (carry == TI__CARRY_F) {
            ti__carry_load_f(x->data, sd, off, 1, m, v.f);
            ti__carry_store_f(y->data, dd, off, m, v.f);
        } else if (carry == TI__CARRY_I) {
            ti__carry_load_i(x->data, sd, off, 1, m, v.i);
            ti__carry_store_i(y->data, dd, off, m, v.i);
        } else {
            ti__carry_load_u(x->data, sd, off, 1, m, v.u);
            ti__carry_store_u(y->data, dd, off, m, v.u);
        }
    }
}

TI__PRIVATE ti_status ti__tfl_un_run(ti__kctx *k, int code) {
    const ti_tensor *x = k->in[0];
    ti_tensor *y = k->out[0];
    const size_t n = ti__numel(x);
    ti__tfl_un u;
    memset(&u, 0, sizeof u);
    u.lut_xor = -1;
    u.code = code;
    u.x = x->data;
    u.y = y->data;
    u.xt = x->dtype;
    u.yt = y->dtype;
    if (code == TI__TU_CAST) {
        ti__tfl_cast(x, y);
        return TI_OK;
    }
    ti__tfl_qrange(y->dtype, &u.qmin, &u.qmax);
    u.quant = TI__EDT_IN(x->dtype, ti__tfl_un_types[code].quant) &&
              (x->quant.count > 0 || !TI__EDT_IN(x->dtype, ti__tfl_un_types[code].raw));
    if (u.quant && code != TI__TU_DEQUANTIZE) {
        ti__tfl_q(x, &u.in_scale, &u.in_zp);
        ti__tfl_q(y, &u.out_scale, &u.out_zp);
    }
    if (code == TI__TU_HARD_SWISH && !u.quant) u.n_vec = n - n % 4;
    if (code == TI__TU_LEAKY_RELU) u.alpha = ti__attr_f(k->node, "alpha", 0.0f);
    if (code == TI__TU_GELU) u.approximate = (int)ti__attr_i(k->node, "approximate", 0);
    if (code == TI__TU_DEQUANTIZE && x->dtype != TI_DTYPE_F16) {
        ti__tfl_q(x, &u.in_scale, &u.in_zp);
        if (x->quant.count > 1) {
            u.ch_scale = x->quant.scale;
            u.ch_zp = x->quant.zero_point;
            u.ch_count = (size_t)x->quant.count;
            u.ch_inner = ti__shape_numel(x->rank - x->quant.axis - 1, x->shape + x->quant.axis + 1);
        }
    }
    if (code == TI__TU_QUANTIZE) {
        ti__tfl_q(y, &u.out_scale, &u.out_zp);
        if (x->dtype == TI_DTYPE_F32 && y->quant.count > 1) {
            u.ch_scale = y->quant.scale;
            u.ch_zp = y->quant.zero_point;
            u.ch_count = (size_t)y->quant.count;
            u.ch_inner = ti__shape_numel(y->rank - y->quant.axis - 1, y->shape + y->quant.axis + 1);
        } else if (x->dtype != TI_DTYPE_F32) {
            ti__q_quantize_multiplier((double)u.in_scale / (double)u.out_scale, &u.m1, &u.s1);
            if (TI__EDT_IN(x->dtype, TI__TQ8) && TI__EDT_IN(y->dtype, TI__TQ8)) u.n_vec = n - n % 16;
        } else {
            u.vscale = (float)(1.0 / (double)u.out_scale);
            u.n_vec = n - n % 8;
        }
    }
    if (code == TI__TU_DEQUANTIZE && x->dtype != TI_DTYPE_F16 && x->quant.count == 1) {
        u.vscale = u.in_scale;
        u.vzero = (float)(-(double)u.in_zp * (double)u.in_scale);
        u.n_vec = n - n % 8;
    }
    if (u.quant) {
        const int sgn = x->dtype == TI_DTYPE_I8;
        uint8_t *lut = (uint8_t *)k->scratch;
        ti__tfl_lutfn fn = NULL;
        const void *p = NULL;
        float log_min = 0.0f, rsqrt_max = 0.0f;
        const int i16 = x->dtype == TI_DTYPE_I16;
        switch (code) {
        case TI__TU_LOGISTIC: fn = ti__tfl_lut_logistic; break;
        case TI__TU_TANH: fn = ti__tfl_lut_tanh; break;
        case TI__TU_ELU: fn = ti__tfl_lut_elu; break;
        case TI__TU_EXP: fn = ti__tfl_lut_exp; break;
        case TI__TU_GELU: fn = ti__tfl_lut_gelu; p = &u.approximate; break;
        case TI__TU_LOG:
            log_min = (float)(u.qmin - u.out_zp) * u.out_scale;
            fn = ti__tfl_lut_log;
            p = &log_min;
            break;
        case TI__TU_RELU: case TI__TU_RELU6: case TI__TU_RELU_N1_TO_1: case TI__TU_RELU_0_TO_1: {
            /* TFLite QuantizedReluX: bounds rounded in float, then clamped to the dtype */
            const float amin = code == TI__TU_RELU_N1_TO_1 ? -1.0f : 0.0f;
            const float amax = code == TI__TU_RELU6 ? 6.0f : 1.0f;
            ti__q_quantize_multiplier((double)(u.in_scale / u.out_scale), &u.m1, &u.s1);
            u.lo = (int32_t)ti__tfl_clamp((int64_t)u.out_zp + ti__tfl_f2i(roundf(amin / u.out_scale)),
                                          u.qmin, u.qmax);
            u.hi = code == TI__TU_RELU
                       ? u.qmax
                       : ti__tfl_clamp((int64_t)u.out_zp + ti__tfl_f2i(roundf(amax / u.out_scale)),
                                       u.qmin, u.qmax);
            break;
        }
        case TI__TU_LEAKY_RELU: /* real multipliers computed in float, as TFLite */
            ti__q_quantize_multiplier((double)(u.in_scale * u.alpha / u.out_scale), &u.m2, &u.s2);
            ti__q_quantize_multiplier((double)(u.in_scale / u.out_scale), &u.m1, &u.s1);
            break;
        case TI__TU_HARD_SWISH: {
            const float hires = (1.0f / 128.0f) * u.in_scale;
            int32_t m32;
            ti__q_quantize_multiplier((double)(hires / u.out_scale), &m32, &u.hs_out_e);
            if (u.hs_out_e > 0)
                return ti__kfail(k, TI_ERR_UNSUPPORTED,
                                 "input scale %g / output scale %g is too large for HARD_SWISH",
                                 (double)u.in_scale, (double)u.out_scale);
            u.hs_out_m = (int16_t)(m32 >= INT32_MAX - (1 << 15) ? INT16_MAX : (m32 + (1 << 15)) >> 16);
            ti__q_quantize_multiplier((double)(hires / (3.0f / 32768.0f)), &m32, &u.hs_relu_e);
            u.hs_relu_m = (int16_t)(m32 >= INT32_MAX - (1 << 15) ? INT16_MAX : (m32 + (1 << 15)) >> 16);
            break;
        }
        case TI__TU_SQRT: case TI__TU_RSQRT: {
            size_t bad = n;
            for (size_t i = 0; i < n && bad == n; i++) {
                const int32_t v = TI__TFL_LD(x->data, x->dtype, i);
                if (code == TI__TU_SQRT ? u.in_scale * (float)(v - u.in_zp) < 0.0f : v < u.in_zp)
                    bad = i;
            }
            if (bad < n)
                return ti__kfail(k, TI_ERR_INVALID_ARGUMENT,
                                 "%s is only defined for non-negative values (element %zu)",
                                 code == TI__TU_SQRT ? "SQRT" : "RSQRT", bad);
            if (code == TI__TU_RSQRT && i16) { /* a table, as LOG */
                rsqrt_max = 32767.0f * u.out_scale;
                fn = ti__tfl_lut_rsqrt;
                p = &rsqrt_max;
            } else if (code == TI__TU_RSQRT) { /* 1 / (sqrt(in_scale) * out_scale) in float */
                ti__q_quantize_multiplier(1.0 / (double)(sqrtf(u.in_scale) * u.out_scale), &u.m1, &u.s1);
            }
            break;
        }
        case TI__TU_ABS:
            if (u.in_scale != u.out_scale)
                ti__q_quantize_multiplier((double)(u.in_scale / u.out_scale), &u.m1, &u.s1);
            break;
        default: break;
        }
        if (fn == NULL && !i16 && TI__EDT_IN(y->dtype, TI__TQ8)) {
            /* 8-bit in and out: every op is a function of the input byte, so tabulate it
             * (TFLite's requantization needs a second table for its vector loop) */
            if (k->scratch == NULL || k->scratch_bytes < 512)
                return ti__kfail(k, TI_ERR_INVALID_ARGUMENT, "scratch memory is missing");
            for (int v = 0; v < 256; v++) {
                const int32_t raw = x->dtype == TI_DTYPE_I8 ? (int32_t)(int8_t)v : v;
                lut[v] = (uint8_t)(ti__tfl_un_q(&u, raw, 0) & 0xff);
                lut[256 + v] = (uint8_t)(ti__tfl_un_q(&u, raw, 1) & 0xff);
            }
            u.lut = lut;
            u.lut_xor = lut[0]; /* an input image's uint8 -> int8 QUANTIZE: a flip of the top bit */
            for (int v = 0; v < 512 && u.lut_xor >= 0; v++)
                if (lut[v] != (uint8_t)((v & 255) ^ u.lut_xor)) u.lut_xor = -1;
        }
        if (fn != NULL) {
            if (k->scratch == NULL || k->scratch_bytes < (i16 ? 513 * 2 : 256))
                return ti__kfail(k, TI_ERR_INVALID_ARGUMENT, "scratch memory is missing");
            if (i16) {
                ti__tfl_lut16((int16_t *)k->scratch, u.in_scale, u.in_zp, u.out_scale, u.out_zp, fn, p);
                u.lut16 = (const int16_t *)k->scratch;
            } else {
                ti__tfl_lut8(lut, sgn, u.in_scale, u.in_zp, u.out_scale, u.out_zp, fn, p);
                u.lut = lut;
            }
        }
    }
    if (n > 0) ti__parallel_for(k->tp, n, TI__ELEMWISE_GRAIN, ti__tfl_un_range, &u);
    return TI_OK;
}

#define TI__TFL_UNARY(NAME, CODE)                                                             \
    TI__PRIVATE int ti__tfl_##NAME##_shape(ti__kctx *k) { return ti__tfl_un_shape(k, CODE); } \
    TI__PRIVATE ti_status ti__tfl_##NAME##_run(ti__kctx *k) { return ti__tfl_un_run(k, CODE); }
TI__TFL_UNARY(logistic, TI__TU_LOGISTIC)
TI__TFL_UNARY(tanh, TI__TU_TANH)
TI__TFL_UNARY(relu, TI__TU_RELU)
TI__TFL_UNARY(relu6, TI__TU_RELU6)
TI__TFL_UNARY(relu_n1_to_1, TI__TU_RELU_N1_TO_1)
TI__TFL_UNARY(relu_0_to_1, TI__TU_RELU_0_TO_1)
TI__TFL_UNARY(leaky_relu, TI__TU_LEAKY_RELU)
TI__TFL_UNARY(hard_swish, TI__TU_HARD_SWISH)
TI__TFL_UNARY(elu, TI__TU_ELU)
TI__TFL_UNARY(gelu, TI__TU_GELU)
TI__TFL_UNARY(exp, TI__TU_EXP)
TI__TFL_UNARY(log, TI__TU_LOG)
TI__TFL_UNARY(sqrt, TI__TU_SQRT)
TI__TFL_UNARY(rsqrt, TI__TU_RSQRT)
TI__TFL_UNARY(square, TI__TU_SQUARE)
TI__TFL_UNARY(abs, TI__TU_ABS)
TI__TFL_UNARY(neg, TI__TU_NEG)
TI__TFL_UNARY(floor, TI__TU_FLOOR)
TI__TFL_UNARY(ceil, TI__TU_CEIL)
TI__TFL_UNARY(round, TI__TU_ROUND)
TI__TFL_UNARY(sin, TI__TU_SIN)
TI__TFL_UNARY(cos, TI__TU_COS)
TI__TFL_UNARY(quantize, TI__TU_QUANTIZE)
TI__TFL_UNARY(dequantize, TI__TU_DEQUANTIZE)
TI__TFL_UNARY(cast, TI__TU_CAST)
TI__TFL_UNARY(logical_not, TI__TU_NOT)
#undef TI__TFL_UNARY
