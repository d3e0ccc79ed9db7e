/* Bias and fused activation over a block of a float32 output (ti__act_block in cpu/conv.c)
 * for aarch64 NEON: ti__act_row's expressions on 4 lanes. ReLU, Clip and HardSwish give the
 * same bits as the scalar loop (compare-and-select with the scalar operand order, never
 * FMAX / FMIN, which differ on NaN and signed zeros; products and sums rounded apart, never
 * contracted). Sigmoid and SiLU: where every lane of a vector has |x| <= 80, a vector exp
 * (the Taylor form of cpu/x86/act_x86.c: within 2 ulp of expf) and an IEEE division
 * (FDIV), so a few ulp from the scalar loop; any other vector (an infinity, NaN, a large
 * value) goes through expf lane by lane, so it keeps the scalar answers. The last columns
 * of a row go through a stack vector (same operations). Used by the GEMM's epilogue for
 * sigmoid / SiLU, by the conv bias pass and the Winograd output. Must not allocate. */
#ifdef TI__ARM_NEON
#include <arm_neon.h>

#define TI__NEXP_LN2_HI 0.693145752f
#define TI__NEXP_LN2_LO 1.42860677e-06f

/* SILU ? x / (1 + exp(-x)) : 1 / (1 + exp(-x)) on 4 lanes */
TI__ARM_INLINE float32x4_t ti__sigmn(const int SILU, float32x4_t x) {
    const float32x4_t one = vdupq_n_f32(1.0f);
    float32x4_t num = SILU ? x : one;
    /* every |x| <= 80 (NaN fails the test): exp(-x) in [e^-80, e^80], 2^n normal */
    if (vminvq_u32(vcaleq_f32(x, vdupq_n_f32(80.0f))) == 0) {
        float l[4], o[4];
        vst1q_f32(l, x);
        for (int i = 0; i < 4; i++) o[i] = SILU ? l[i] / (1.0f + expf(-l[i])) : 1.0f / (1.0f + expf(-l[i]));
        return vld1q_f32(o);
    }
    float32x4_t t = vnegq_f32(x);
    float32x4_t n = vrndnq_f32(vmulq_f32(t, vdupq_n_f32(1.44269504f)));
    float32x4_t r = vfmsq_f32(t, n, vdupq_n_f32(TI__NEXP_LN2_HI));
    r = vfmsq_f32(r, n, vdupq_n_f32(TI__NEXP_LN2_LO));
    /* exp(r) by its Taylor series to r^6, in Horner form */
    float32x4_t p = vfmaq_f32(vdupq_n_f32(1.0f / 120.0f), vdupq_n_f32(1.0f / 720.0f), r);
    p = vfmaq_f32(vdupq_n_f32(1.0f / 24.0f), p, r);
    p = vfmaq_f32(vdupq_n_f32(1.0f / 6.0f), p, r);
    p = vfmaq_f32(vdupq_n_f32(0.5f), p, r);
    p = vfmaq_f32(one, p, r);
    p = vfmaq_f32(one, p, r);
    int32x4_t e = vshlq_n_s32(vaddq_s32(vcvtq_s32_f32(n), vdupq_n_s32(127)), 23);
    float32x4_t d = vaddq_f32(one, vmulq_f32(p, vreinterpretq_f32_s32(e)));
    return vdivq_f32(num, d);
}

/* One activation on a vector whose bias is added (act is a constant once inlined). */
TI__ARM_INLINE float32x4_t ti__actn(const int act, float32x4_t x, float32x4_t va, float32x4_t vb) {
    const float32x4_t zero = vdupq_n_f32(0.0f), one = vdupq_n_f32(1.0f);
    switch (act) {
    case TI__ACT_RELU: return vbslq_f32(vcgtq_f32(x, zero), x, zero); /* x > 0 ? x : 0 */
    case TI__ACT_CLIP: { /* x < a ? a : (x > b ? b : x) */
        float32x4_t t = vbslq_f32(vcgtq_f32(x, vb), vb, x);
        return vbslq_f32(vcltq_f32(x, va), va, t);
    }
    case TI__ACT_HARD_SWISH: { /* h = x * (1/6) + 0.5; x * (h < 0 ? 0 : (h > 1 ? 1 : h)) */
        float32x4_t h = vaddq_f32(vmulq_f32(x, vdupq_n_f32(1.0f / 6.0f)), vdupq_n_f32(0.5f));
        float32x4_t c = vbslq_f32(vcgtq_f32(h, one), one, h);
        c = vbslq_f32(vcltq_f32(h, zero), zero, c);
        return vmulq_f32(x, c);
    }
    case TI__ACT_SIGMOID: return ti__sigmn(0, x);
    case TI__ACT_SILU: return ti__sigmn(1, x);
    default: return x;
    }
}

/* rows x cols of y (row stride ldy), bias per row (NULL: none), with one activation. */
TI__ARM_INLINE void ti__act_rowsn(const int act, float a, float b, const float *bias, float *y,
                                  size_t ldy, size_t rows, size_t cols) {
    const float32x4_t va = vdupq_n_f32(a), vb = vdupq_n_f32(b);
    for (size_t r = 0; r < rows; r++) {
        float bv = bias != NULL ? bias[r] : 0.0f;
        if (act == TI__ACT_NONE && bv == 0.0f) continue; /* as ti__act_row: -0 stays -0 */
        const float32x4_t vbias = vdupq_n_f32(bv);
        float *p = y + r * ldy;
        size_t i = 0;
        for (; i + 4 <= cols; i += 4)
            vst1q_f32(p + i, ti__actn(act, vaddq_f32(vld1q_f32(p + i), vbias), va, vb));
        if (i < cols) { /* the last 1-3 columns, through a stack vector */
            float t[4] = {0.0f, 0.0f, 0.0f, 0.0f};
            for (size_t q = i; q < cols; q++) t[q - i] = p[q];
            vst1q_f32(t, ti__actn(act, vaddq_f32(vld1q_f32(t), vbias), va, vb));
            for (size_t q = i; q < cols; q++) p[q] = t[q - i];
        }
    }
}

/* ONNX Relu (cpu/unary.c): 0 only where x < 0, so NaN and -0 stay (FMAX would differ). */
TI__PRIVATE void ti__relu_neon(const float *x, float *y, size_t n) {
    const float32x4_t z = vdupq_n_f32(0.0f);
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        float32x4_t v = vld1q_f32(x + i);
        vst1q_f32(y + i, vbslq_f32(vcltq_f32(v, z), z, v));
    }
    for (; i < n; i++) y[i] = x[i] < 0.0f ? 0.0f : x[i];
}

/* ONNX Erf, as ti__erf512 (cpu/x86/act_x86.c); NaN is kept by a select (FMIN / FMAX would
 * keep it too, but the clamp is written as the x86 one reads). */
TI__ARM_INLINE float32x4_t ti__erfn(float32x4_t x) {
    uint32x4_t nan = vmvnq_u32(vceqq_f32(x, x));
    float32x4_t c = vmaxq_f32(vdupq_n_f32(-4.0f), vminq_f32(vdupq_n_f32(4.0f), x));
    float32x4_t t = vmulq_f32(c, c);
#define TI__ERFN_FMA(a, t, c) vfmaq_f32(c, a, t)
    float32x4_t p = TI__ERF_POLY(TI__ERFN_FMA, vdupq_n_f32, t, P);
    float32x4_t q = TI__ERF_POLY(TI__ERFN_FMA, vdupq_n_f32, t, Q);
#undef TI__ERFN_FMA
    float32x4_t y = vdivq_f32(vmulq_f32(c, p), q);
    y = vmaxq_f32(vdupq_n_f32(-1.0f), vminq_f32(vdupq_n_f32(1.0f), y));
    return vbslq_f32(nan, x, y);
}
TI__PRIVATE void ti__erf_neon(const float *x, float *y, size_t n) {
    size_t i = 0;
    for (; i + 4 <= n; i += 4) vst1q_f32(y + i, ti__erfn(vld1q_f32(x + i)));
    if (i < n) {
        float t[4] = {0, 0, 0, 0};
        for (size_t k = i; k < n; k++) t[k - i] = x[k];
        vst1q_f32(t, ti__erfn(vld1q_f32(t)));
        for (size_t k = i; k < n; k++) y[k] = t[k - i];
    }
}

TI__PRIVATE int ti__act_block_neon(int act, float a, float b, const float *bias, float *y,
                                   size_t ldy, size_t rows, size_t cols) {
    if (act == TI__ACT_CLIP && !(a <= b)) return 0; /* min above max: the scalar order decides */
    switch (act) {
#define TI__ACTN_CASE(A)                                                                    \
    case A: ti__act_rowsn(A, a, b, bias, y, ldy, rows, cols); return 1;
        TI__ACTN_CASE(TI__ACT_NONE)
        TI__ACTN_CASE(TI__ACT_RELU)
        TI__ACTN_CASE(TI__ACT_CLIP)
        TI__ACTN_CASE(TI__ACT_HARD_SWISH)
        TI__ACTN_CASE(TI__ACT_SIGMOID)
        TI__ACTN_CASE(TI__ACT_SILU)
#undef TI__ACTN_CASE
    default: return 0;
    }
}
#endif /* TI__ARM_NEON */
