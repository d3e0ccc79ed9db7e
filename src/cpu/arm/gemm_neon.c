/* float32 GEMM micro-kernel for aarch64 NEON: an 8 x 12 register tile (24 of the 32 vector
 * registers as accumulators, three B vectors, one broadcast of A), smaller row counts for
 * edges, a stack tile for the last columns. The blocking around it (packing, cache blocks,
 * threads) is in cpu/gemm.c; this file only provides the kernel, the B-panel packer and a
 * dot product. Runs on every aarch64 CPU (NEON is architectural there). Must not allocate. */
#ifdef TI__ARM_NEON
#include <arm_neon.h>

#define TI__KN_MR 8
#define TI__KN_NR 12
#define TI__KN_KC 256 /* B sliver 256 x 12 floats = 12 KiB: in a 32 or 64 KiB L1 */
#define TI__KN_MC 128 /* A block 128 x 256 floats = 128 KiB: a part of L2 */

/* ti__act_row's expressions on 4 lanes, bit for bit: compare-and-select, not FMAX / FMIN,
 * which differ from the scalar ternaries on NaN and on the sign of zero. */
TI__ARM_INLINE float32x4_t ti__kn_epi1(int ep, float32x4_t x, float32x4_t vbias, float32x4_t vlo,
                                       float32x4_t vhi) {
    float32x4_t zero = vdupq_n_f32(0.0f), y = vaddq_f32(x, vbias);
    if (ep == 2) return vbslq_f32(vcgtq_f32(y, zero), y, zero); /* y > 0 ? y : 0 */
    if (ep == 3) { /* y < lo ? lo : (y > hi ? hi : y) */
        float32x4_t t = vbslq_f32(vcgtq_f32(y, vhi), vhi, y);
        return vbslq_f32(vcltq_f32(y, vlo), vlo, t);
    }
    if (ep == 4) { /* y * clamp(y * (1/6) + 0.5, 0, 1), the product and sum rounded apart */
        float32x4_t one = vdupq_n_f32(1.0f);
        float32x4_t h = vaddq_f32(vmulq_f32(y, vdupq_n_f32(1.0f / 6.0f)), vdupq_n_f32(0.5f));
        float32x4_t t = vbslq_f32(vcgtq_f32(h, one), one, h);
        t = vbslq_f32(vcltq_f32(h, zero), zero, t);
        return vmulq_f32(y, t);
    }
    return y;
}

/* One row of the tile: c[0:nc] = epi(alpha * x + beta * c[0:nc]); beta == 0 does not read
 * c. The epilogue ep (ti__sgemm_kernel_epi: 1 bias, 2 ReLU, 3 Clip, 4 HardSwish). */
TI__ARM_INLINE void ti__kn_row(float *c, float32x4_t x0, float32x4_t x1, float32x4_t x2,
                               float alpha, float beta, int nc, int ep, float bv,
                               float32x4_t vlo, float32x4_t vhi) {
    float32x4_t va = vdupq_n_f32(alpha);
    float t[TI__KN_NR];
    float *d = nc == TI__KN_NR ? c : t; /* the last columns: through a stack tile */
    x0 = vmulq_f32(x0, va);
    x1 = vmulq_f32(x1, va);
    x2 = vmulq_f32(x2, va);
    if (beta != 0.0f) {
        if (nc < TI__KN_NR)
            for (int j = 0; j < TI__KN_NR; j++) t[j] = j < nc ? c[j] : 0.0f;
        float32x4_t vb = vdupq_n_f32(beta);
        x0 = vfmaq_f32(x0, vb, vld1q_f32(d));
        x1 = vfmaq_f32(x1, vb, vld1q_f32(d + 4));
        x2 = vfmaq_f32(x2, vb, vld1q_f32(d + 8));
    }
    if (ep > 0 && !(ep == 1 && bv == 0.0f)) { /* bias 0 and no activation: as it is */
        float32x4_t vbias = vdupq_n_f32(bv);
        x0 = ti__kn_epi1(ep, x0, vbias, vlo, vhi);
        x1 = ti__kn_epi1(ep, x1, vbias, vlo, vhi);
        x2 = ti__kn_epi1(ep, x2, vbias, vlo, vhi);
    }
    vst1q_f32(d, x0);
    vst1q_f32(d + 4, x1);
    vst1q_f32(d + 8, x2);
    if (nc < TI__KN_NR)
        for (int j = 0; j < nc; j++) c[j] = t[j];
}

/* One row of the tile's k step: accumulators c<r>_0..2, live only when MR > r (MR is a
 * constant once inlined, so unused rows cost nothing). */
#define TI__KN_FMA(r)                                                                       \
    if (MR > r) {                                                                           \
        float32x4_t ar = vld1q_dup_f32(ROWS ? a + (r) * lda : a + (r));                     \
        c##r##_0 = vfmaq_f32(c##r##_0, b0, ar);                                             \
        c##r##_1 = vfmaq_f32(c##r##_1, b1, ar);                                             \
        c##r##_2 = vfmaq_f32(c##r##_2, b2, ar);                                             \
    }
#define TI__KN_STORE(r)                                                                     \
    if (MR > r)                                                                             \
        ti__kn_row(c + (r) * ldc, c##r##_0, c##r##_1, c##r##_2, alpha, beta, nc, ep,        \
                   ep > 0 && bias != NULL ? bias[r] : 0.0f, vlo, vhi);

/* A is read where it lies: ROWS = 1: element (r, p) at a[r * lda + p] (A not transposed);
 * ROWS = 0: at a[p * lda + r] (A transposed). MR and ROWS are constants once inlined. Line
 * p < npf of pf is prefetched at step p (ti__sgemm_kernel_fn). */
TI__ARM_INLINE void ti__kn_tile(const int MR, const int ROWS, size_t kc, const float *a,
                                size_t lda, const float *b, float *c, size_t ldc, int nc,
                                float alpha, float beta, int ep, const float *bias, float lo,
                                float hi, const float *pf, size_t npf) {
    size_t astep = ROWS ? 1 : lda;
    float32x4_t z = vdupq_n_f32(0.0f);
    float32x4_t c0_0 = z, c0_1 = z, c0_2 = z, c1_0 = z, c1_1 = z, c1_2 = z;
    float32x4_t c2_0 = z, c2_1 = z, c2_2 = z, c3_0 = z, c3_1 = z, c3_2 = z;
    float32x4_t c4_0 = z, c4_1 = z, c4_2 = z, c5_0 = z, c5_1 = z, c5_2 = z;
    float32x4_t c6_0 = z, c6_1 = z, c6_2 = z, c7_0 = z, c7_1 = z, c7_2 = z;
    for (size_t p = 0; p < kc; p++) {
        if (p < npf) __builtin_prefetch(pf + p * 16, 0, 2);
        float32x4_t b0 = vld1q_f32(b), b1 = vld1q_f32(b + 4), b2 = vld1q_f32(b + 8);
        TI__KN_FMA(0) TI__KN_FMA(1) TI__KN_FMA(2) TI__KN_FMA(3)
        TI__KN_FMA(4) TI__KN_FMA(5) TI__KN_FMA(6) TI__KN_FMA(7)
        a += astep;
        b += TI__KN_NR;
    }
    float32x4_t vlo = vdupq_n_f32(lo), vhi = vdupq_n_f32(hi);
    TI__KN_STORE(0) TI__KN_STORE(1) TI__KN_STORE(2) TI__KN_STORE(3)
    TI__KN_STORE(4) TI__KN_STORE(5) TI__KN_STORE(6) TI__KN_STORE(7)
}

/* One out-of-line function per row count, so each gets its own register allocation. */
#define TI__KN_DEF(n)                                                                       \
    static __attribute__((noinline, unused)) void ti__kn_m##n(                               \
        int rows, size_t kc, const float *a, size_t lda, const float *b, float *c,          \
        size_t ldc, int nc, float alpha, float beta, int ep, const float *bias, float lo,   \
        float hi, const float *pf, size_t npf) {                                            \
        if (rows) ti__kn_tile(n, 1, kc, a, lda, b, c, ldc, nc, alpha, beta, ep, bias, lo, hi, pf, npf); \
        else ti__kn_tile(n, 0, kc, a, lda, b, c, ldc, nc, alpha, beta, ep, bias, lo, hi, pf, npf); \
    }
TI__KN_DEF(1)
TI__KN_DEF(2)
TI__KN_DEF(3)
TI__KN_DEF(4)
TI__KN_DEF(5)
TI__KN_DEF(6)
TI__KN_DEF(7)
TI__KN_DEF(8)

TI__PRIVATE void ti__sgemm_kernel_neon(size_t kc, const float *a, size_t lda, int a_rows,
                                       const float *b, float *c, size_t ldc, int mr, int nc,
                                       float alpha, float beta, const ti__gemm_epi *epi,
                                       const float *pf, size_t npf) {
    float lo, hi;
    int ep = ti__sgemm_kernel_epi(epi, &lo, &hi);
    const float *bias = ep > 0 ? epi->bias : NULL;
    TI_ASSERT(ep >= 0);
    switch (mr) {
#define TI__KN_CASE(n)                                                                      \
    case n: ti__kn_m##n(a_rows, kc, a, lda, b, c, ldc, nc, alpha, beta, ep, bias, lo, hi, pf, npf); break;
    TI__KN_CASE(1) TI__KN_CASE(2) TI__KN_CASE(3) TI__KN_CASE(4)
    TI__KN_CASE(5) TI__KN_CASE(6) TI__KN_CASE(7)
#undef TI__KN_CASE
    default: ti__kn_m8(a_rows, kc, a, lda, b, c, ldc, nc, alpha, beta, ep, bias, lo, hi, pf, npf); break;
    }
}

/* Packs B[0:kc, 0:w] (row-major, row stride ldb) as kc rows of 12 floats, zero past w. */
TI__PRIVATE void ti__sgemm_pack_b_neon(size_t kc, size_t w, const float *b, size_t ldb,
                                       float *dst) {
    if (w == TI__KN_NR) {
        for (size_t p = 0; p < kc; p++, b += ldb, dst += TI__KN_NR) {
            vst1q_f32(dst, vld1q_f32(b));
            vst1q_f32(dst + 4, vld1q_f32(b + 4));
            vst1q_f32(dst + 8, vld1q_f32(b + 8));
        }
        return;
    }
    for (size_t p = 0; p < kc; p++, b += ldb, dst += TI__KN_NR) {
        size_t q = 0;
        for (; q < w; q++) dst[q] = b[q];
        for (; q < TI__KN_NR; q++) dst[q] = 0.0f;
    }
}

/* sum of a[p] * b[p] for p < k: four vector accumulators, the tail in scalars, then summed
 * in a fixed order (same inputs, same bits). */
/* DOT = 1: the sum of a[p] * b[p] for p < k; DOT = 0: the sum of a[p] (b unused). Four
 * vector accumulators, the last floats one by one, in a fixed order. */
#define TI__SREDN_TERM(s, off)                                                              \
    s = DOT ? vfmaq_f32(s, vld1q_f32(a + (off)), vld1q_f32(b + (off)))                      \
            : vaddq_f32(s, vld1q_f32(a + (off)));
TI__ARM_INLINE float ti__sredn(const int DOT, const float *a, const float *b, size_t k) {
    float32x4_t s0 = vdupq_n_f32(0.0f), s1 = s0, s2 = s0, s3 = s0;
    size_t p = 0;
    for (; p + 16 <= k; p += 16) {
        TI__SREDN_TERM(s0, p)
        TI__SREDN_TERM(s1, p + 4)
        TI__SREDN_TERM(s2, p + 8)
        TI__SREDN_TERM(s3, p + 12)
    }
    for (; p + 4 <= k; p += 4) TI__SREDN_TERM(s0, p)
    float s = vaddvq_f32(vaddq_f32(vaddq_f32(s0, s1), vaddq_f32(s2, s3)));
    for (; p < k; p++) s += DOT ? a[p] * b[p] : a[p];
    return s;
}
#undef TI__SREDN_TERM
TI__PRIVATE float ti__sdot_neon(const float *a, const float *b, size_t k) {
    return ti__sredn(1, a, b, k);
}
/* ti__dw_sum_fn (the plane sums of cpu/pool.c and cpu/reduce.c) */
TI__PRIVATE float ti__ssum_neon(const float *x, size_t n) { return ti__sredn(0, x, NULL, n); }

TI__PRIVATE const ti__sgemm_isa *ti__sgemm_neon_isa(void) {
    static const ti__sgemm_isa isa = {TI__ISA_NEON, TI__KN_MR, TI__KN_NR, TI__KN_KC, TI__KN_MC,
                                      ti__sgemm_kernel_neon, ti__sgemm_pack_b_neon, ti__sdot_neon, NULL, NULL, NULL,
                                      NULL, NULL, NULL, 0, TI__CONV_APANEL_MIN_K, NULL};
    return &isa;
}
#endif /* TI__ARM_NEON */
