/* float32 GEMM micro-kernel for AVX-512F: a 14 x 32 register tile (28 ZMM accumulators, two
 * B vectors, one broadcast of A), smaller row counts for edges, masked loads and stores for
 * the last columns. The blocking around it (packing, cache blocks, threads) is in
 * cpu/gemm.c; this file only provides the kernel and the B-panel packer. Compiled with a
 * function-level target attribute, run only when cpuid says AVX-512F is usable
 * (cpu/x86/cpuid.c). Must not allocate. */
#ifdef TI__X86_SIMD
#include <immintrin.h>

#define TI__K512_MR 14
#define TI__K512_NR 32
#define TI__K512_KC 128 /* B sliver 128 x 32 floats = 16 KiB: half of a 32 KiB L1 */
#define TI__K512_MC 256 /* A block 256 x 128 floats = 128 KiB: a part of L2 */
/* k steps ahead that ti__k512_tile prefetches B (and a packed A) into L1. B read in place
 * (ti__sgemm_kernel_avx512_ldb: a 1x1 conv of at most 2 row slivers of output channels on 1
 * thread), per-node minima in the models, 1 thread, Xeon, 3 x 200 runs, builds alternating:
 * MobileNetV2's 96 -> 24 and 144 -> 24 at 56 x 56 0.120-0.133 -> 0.099-0.103 and 0.189-0.203
 * -> 0.146-0.157 ms, EfficientNet-B0's 144 -> 24 0.182-0.197 -> 0.147-0.157; sums of minima
 * -2 to -3 %. Distances of 8 to 48 were within the noise of each other. The workspace's long
 * k blocks (ti__sgemm_kernel_avx512_l2): SGEMM 1024^3 147.0 -> 153.3 GFLOP/s (medians of 10
 * alternating runs of bench/sgemm.c). Prefetching B and A in every call (B packed in short
 * k blocks, in L1 already) lost 5-10 % on bench/sgemm.c's 112 x 112 shapes; MobileNetV2's
 * 32 -> 16 at 112 x 112 (B in place, kc 32) stayed within the noise (0.125-0.128 -> 0.126-0.134
 * ms). */
#define TI__K512_PFD 16

/* The epilogue ep (ti__sgemm_kernel_epi: 1 bias, 2 ReLU, 3 Clip, 4 HardSwish) on one row's
 * vectors, with ti__act_block's operations and operand order, so the same bits. */
TI__X86_INLINE TI__TARGET_AVX512 void ti__k512_epi(int ep, float bv, __m512 vlo, __m512 vhi,
                                                   __m512 *x0, __m512 *x1) {
    if (ep == 1 && bv == 0.0f) return; /* no bias, no activation: left as it is */
    __m512 vbias = _mm512_set1_ps(bv), zero = _mm512_setzero_ps();
    __m512 y0 = _mm512_add_ps(*x0, vbias), y1 = _mm512_add_ps(*x1, vbias);
    if (ep == 2) {
        y0 = _mm512_max_ps(y0, zero);
        y1 = _mm512_max_ps(y1, zero);
    } else if (ep == 3) {
        y0 = _mm512_min_ps(vhi, _mm512_max_ps(vlo, y0));
        y1 = _mm512_min_ps(vhi, _mm512_max_ps(vlo, y1));
    } else if (ep == 4) { /* x * min(1, max(0, x * (1/6) + 0.5)) */
        __m512 one = _mm512_set1_ps(1.0f), sixth = _mm512_set1_ps(1.0f / 6.0f);
        __m512 half = _mm512_set1_ps(0.5f);
        __m512 h0 = _mm512_add_ps(_mm512_mul_ps(y0, sixth), half);
        __m512 h1 = _mm512_add_ps(_mm512_mul_ps(y1, sixth), half);
        y0 = _mm512_mul_ps(y0, _mm512_min_ps(one, _mm512_max_ps(zero, h0)));
        y1 = _mm512_mul_ps(y1, _mm512_min_ps(one, _mm512_max_ps(zero, h1)));
    }
    *x0 = y0;
    *x1 = y1;
}

/* c[0:nc] = epi(alpha * (x0|x1) + beta * c[0:nc]); beta == 0 does not read c. */
TI__X86_INLINE TI__TARGET_AVX512 void ti__k512_row(float *c, __m512 x0, __m512 x1, int scale,
                                                   __m512 va, __m512 vb, float beta, int nc,
                                                   __mmask16 m0, __mmask16 m1, int ep,
                                                   float bv, __m512 vlo, __m512 vhi) {
    if (scale) { /* x * 1 is x, bit for bit: the multiply is skipped for alpha 1 */
        x0 = _mm512_mul_ps(x0, va);
        x1 = _mm512_mul_ps(x1, va);
    }
    if (nc == TI__K512_NR) {
        if (beta != 0.0f) {
            x0 = _mm512_fmadd_ps(vb, _mm512_loadu_ps(c), x0);
            x1 = _mm512_fmadd_ps(vb, _mm512_loadu_ps(c + 16), x1);
        }
        if (ep > 0) ti__k512_epi(ep, bv, vlo, vhi, &x0, &x1);
        _mm512_storeu_ps(c, x0);
        _mm512_storeu_ps(c + 16, x1);
    } else { /* masked lanes are neither read nor written */
        if (beta != 0.0f) {
            x0 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m0, c), x0);
            x1 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m1, c + 16), x1);
        }
        if (ep > 0) ti__k512_epi(ep, bv, vlo, vhi, &x0, &x1);
        _mm512_mask_storeu_ps(c, m0, x0);
        _mm512_mask_storeu_ps(c + 16, m1, x1);
    }
}

/* One row of the tile: accumulators c<r>_0 and c<r>_1, live only when MR > r (MR is a
 * constant once inlined, so unused rows cost nothing); c<r>_1 only when NV == 2. */
#define TI__K512_FMA(r)                                                                     \
    if (MR > r) {                                                                           \
        __m512 ar = _mm512_set1_ps(ROWS ? a[(r) * lda] : a[r]);                             \
        c##r##_0 = _mm512_fmadd_ps(ar, b0, c##r##_0);                                       \
        if (NV > 1) c##r##_1 = _mm512_fmadd_ps(ar, b1, c##r##_1);                           \
    }
#define TI__K512_STORE(r)                                                                   \
    if (MR > r)                                                                             \
        ti__k512_row(c + (r) * ldc, c##r##_0, c##r##_1, scale, va, vb, beta, nc, m0, m1, ep, \
                     ep > 0 && bias != NULL ? bias[r] : 0.0f, vlo, vhi);

/* One k step: B's row p (one or two vectors), each row of A broadcast against it. */
#define TI__K512_STEP                                                                       \
    {                                                                                       \
        __m512 b0 = _mm512_loadu_ps(b), b1 = NV > 1 ? _mm512_loadu_ps(b + 16) : z;          \
        TI__K512_FMA(0) TI__K512_FMA(1) TI__K512_FMA(2) TI__K512_FMA(3) TI__K512_FMA(4)     \
        TI__K512_FMA(5) TI__K512_FMA(6) TI__K512_FMA(7) TI__K512_FMA(8) TI__K512_FMA(9)     \
        TI__K512_FMA(10) TI__K512_FMA(11) TI__K512_FMA(12) TI__K512_FMA(13)                 \
        a += astep;                                                                         \
        b += ldb;                                                                           \
    }

/* A is read where it lies: ROWS = 1: element (r, p) at a[r * lda + p] (A not transposed);
 * ROWS = 0: at a[p * lda + r] (A transposed). NV: vectors of 16 columns computed, 2, or 1
 * when nc <= 16 (the second half of the sliver is zero: its FMAs would be wasted, half of
 * the work on the last sliver of N = 196 or 49). MR, ROWS and NV are constants once
 * inlined. Line p < npf of pf is prefetched at step p (ti__sgemm_kernel_fn). */
TI__X86_INLINE TI__TARGET_AVX512 void ti__k512_tile(const int MR, const int ROWS, const int NV,
                                                    size_t kc,
                                                    const float *a, size_t lda, const float *b,
                                                    size_t ldb,
                                                    float *c, size_t ldc, int nc, float alpha,
                                                    float beta, int ep, const float *bias,
                                                    float lo, float hi, const float *pf,
                                                    size_t npf, int ahead) {
    size_t astep = ROWS ? 1 : lda;
    __m512 z = _mm512_setzero_ps();
    __m512 c0_0 = z, c0_1 = z, c1_0 = z, c1_1 = z, c2_0 = z, c2_1 = z, c3_0 = z, c3_1 = z;
    __m512 c4_0 = z, c4_1 = z, c5_0 = z, c5_1 = z, c6_0 = z, c6_1 = z, c7_0 = z, c7_1 = z;
    __m512 c8_0 = z, c8_1 = z, c9_0 = z, c9_1 = z, c10_0 = z, c10_1 = z, c11_0 = z;
    __m512 c11_1 = z, c12_0 = z, c12_1 = z, c13_0 = z, c13_1 = z;
    /* Row p + TI__K512_PFD of B asked for at step p (not past the block's kc rows) where the
     * hardware prefetchers do not bring it: B read in place, its rows a row of the input
     * apart (a page or more); with `ahead` (ti__sgemm_isa.kernel_l2) B's sliver and a packed
     * A, which come from L2 at every call in a workspace's long k blocks. */
    size_t pf_end = (ldb != TI__K512_NR || ahead) && kc > TI__K512_PFD ? kc - TI__K512_PFD : 0;
    /* the steps that prefetch, then the others without the tests */
    size_t p = 0, p1 = TI__MIN(kc, TI__MAX(npf, pf_end));
    for (; p < p1; p++) {
        if (p < npf) _mm_prefetch((const char *)(pf + p * 16), _MM_HINT_T1);
        if (p < pf_end) {
            _mm_prefetch((const char *)(b + TI__K512_PFD * ldb), _MM_HINT_T0);
            if (NV > 1) _mm_prefetch((const char *)(b + TI__K512_PFD * ldb + 16), _MM_HINT_T0);
            if (ahead && !ROWS) _mm_prefetch((const char *)(a + TI__K512_PFD * astep), _MM_HINT_T0);
        }
        TI__K512_STEP
    }
    for (; p < kc; p++) {
        TI__K512_STEP
    }
    __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
    int scale = alpha != 1.0f;
    __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
    __mmask16 m0 = (__mmask16)(nc >= 16 ? 0xffffu : (1u << nc) - 1u);
    __mmask16 m1 = (__mmask16)(nc >= 32 ? 0xffffu : nc > 16 ? (1u << (nc - 16)) - 1u : 0u);
    TI__K512_STORE(0) TI__K512_STORE(1) TI__K512_STORE(2) TI__K512_STORE(3)
    TI__K512_STORE(4) TI__K512_STORE(5) TI__K512_STORE(6) TI__K512_STORE(7)
    TI__K512_STORE(8) TI__K512_STORE(9) TI__K512_STORE(10) TI__K512_STORE(11)
    TI__K512_STORE(12) TI__K512_STORE(13)
}

/* One out-of-line function per row count and A layout, so each gets its own register
 * allocation; the kernel entry picks one. */
#define TI__K512_DEF(n)                                                                     \
    static __attribute__((noinline, unused)) TI__TARGET_AVX512 void ti__k512_m##n(           \
        int rows, size_t kc, const float *a, size_t lda, const float *b, size_t ldb,        \
        float *c, size_t ldc, int nc, float alpha, float beta, int ep, const float *bias,   \
        float lo, float hi, const float *pf, size_t npf, int ahead) {                       \
        if (ldb != TI__K512_NR) { /* B in place (nc is 32) */                             \
            if (rows) ti__k512_tile(n, 1, 2, kc, a, lda, b, ldb, c, ldc, nc, alpha, beta, ep, bias, lo, hi, pf, npf, ahead); \
            else ti__k512_tile(n, 0, 2, kc, a, lda, b, ldb, c, ldc, nc, alpha, beta, ep, bias, lo, hi, pf, npf, ahead); \
        } else if (nc > 16) { /* packed B: the stride a constant */                          \
            if (rows) ti__k512_tile(n, 1, 2, kc, a, lda, b, TI__K512_NR, c, ldc, nc, alpha, beta, ep, bias, lo, hi, pf, npf, ahead); \
            else ti__k512_tile(n, 0, 2, kc, a, lda, b, TI__K512_NR, c, ldc, nc, alpha, beta, ep, bias, lo, hi, pf, npf, ahead); \
        } else {                                                                            \
            if (rows) ti__k512_tile(n, 1, 1, kc, a, lda, b, TI__K512_NR, c, ldc, nc, alpha, beta, ep, bias, lo, hi, pf, npf, ahead); \
            else ti__k512_tile(n, 0, 1, kc, a, lda, b, TI__K512_NR, c, ldc, nc, alpha, beta, ep, bias, lo, hi, pf, npf, ahead); \
        }                                                                                   \
    }
TI__K512_DEF(1)
TI__K512_DEF(2)
TI__K512_DEF(3)
TI__K512_DEF(4)
TI__K512_DEF(5)
TI__K512_DEF(6)
TI__K512_DEF(7)
TI__K512_DEF(8)
TI__K512_DEF(9)
TI__K512_DEF(10)
TI__K512_DEF(11)
TI__K512_DEF(12)
TI__K512_DEF(13)
TI__K512_DEF(14)

/* The kernel with B's rows ldb floats apart, and the prefetch hint (ti__sgemm_kernel_fn). */
TI__X86_INLINE TI__TARGET_AVX512 void ti__k512_run(size_t kc, const float *a, size_t lda,
                                                   int a_rows, const float *b, size_t ldb,
                                                   float *c, size_t ldc, int mr, int nc,
                                                   float alpha, float beta,
                                                   const ti__gemm_epi *epi, const float *pf,
                                                   size_t npf, int ahead) {
    float lo, hi;
    int ep = ti__sgemm_kernel_epi(epi, &lo, &hi);
    const float *bias = ep > 0 ? epi->bias : NULL;
    TI_ASSERT(ep >= 0);
    switch (mr) {
#define TI__K512_CASE(n)                                                                    \
    case n: ti__k512_m##n(a_rows, kc, a, lda, b, ldb, c, ldc, nc, alpha, beta, ep, bias, lo, hi, pf, npf, ahead); break;
    TI__K512_CASE(1) TI__K512_CASE(2) TI__K512_CASE(3) TI__K512_CASE(4) TI__K512_CASE(5)
    TI__K512_CASE(6) TI__K512_CASE(7) TI__K512_CASE(8) TI__K512_CASE(9) TI__K512_CASE(10)
    TI__K512_CASE(11) TI__K512_CASE(12) TI__K512_CASE(13)
#undef TI__K512_CASE
    default: ti__k512_m14(a_rows, kc, a, lda, b, ldb, c, ldc, nc, alpha, beta, ep, bias, lo, hi, pf, npf, ahead); break;
    }
}

/* The kernel with B's rows ldb floats apart: packed (ldb 32, zero past nc), or read where it
 * lies (then nc must be 32: past nc, B is not read as zero). */
TI__PRIVATE TI__TARGET_AVX512 void ti__sgemm_kernel_avx512_ldb(size_t kc, const float *a,
                                                               size_t lda, int a_rows,
                                                               const float *b, size_t ldb,
                                                               float *c, size_t ldc, int mr,
                                                               int nc, float alpha, float beta,
                                                               const ti__gemm_epi *epi) {
    ti__k512_run(kc, a, lda, a_rows, b, ldb, c, ldc, mr, nc, alpha, beta, epi, NULL, 0, 0);
}

TI__PRIVATE TI__TARGET_AVX512 void ti__sgemm_kernel_avx512(size_t kc, const float *a,
                                                           size_t lda, int a_rows,
                                                           const float *b, float *c,
                                                           size_t ldc, int mr, int nc,
                                                           float alpha, float beta,
                                                           const ti__gemm_epi *epi,
                                                           const float *pf, size_t npf) {
    ti__k512_run(kc, a, lda, a_rows, b, TI__K512_NR, c, ldc, mr, nc, alpha, beta, epi, pf,
                 npf, 0);
}

/* ti__sgemm_isa.kernel_l2: the kernel prefetching its sliver of B and a packed A ahead. */
TI__PRIVATE TI__TARGET_AVX512 void ti__sgemm_kernel_avx512_l2(size_t kc, const float *a,
                                                              size_t lda, int a_rows,
                                                              const float *b, float *c,
                                                              size_t ldc, int mr, int nc,
                                                              float alpha, float beta,
                                                              const ti__gemm_epi *epi,
                                                              const float *pf, size_t npf) {
    ti__k512_run(kc, a, lda, a_rows, b, TI__K512_NR, c, ldc, mr, nc, alpha, beta, epi, pf,
                 npf, 1);
}

/* Packs B[0:kc, 0:w] (row-major, row stride ldb) as kc rows of 32 floats, zero past w. */
TI__PRIVATE TI__TARGET_AVX512 void ti__sgemm_pack_b_avx512(size_t kc, size_t w, const float *b,
                                                           size_t ldb, float *dst) {
    if (w == TI__K512_NR) {
        for (size_t p = 0; p < kc; p++, b += ldb, dst += TI__K512_NR) {
            _mm512_storeu_ps(dst, _mm512_loadu_ps(b));
            _mm512_storeu_ps(dst + 16, _mm512_loadu_ps(b + 16));
        }
        return;
    }
    __mmask16 m0 = (__mmask16)(w >= 16 ? 0xffffu : (1u << w) - 1u);
    __mmask16 m1 = (__mmask16)(w > 16 ? (1u << (w - 16)) - 1u : 0u);
    for (size_t p = 0; p < kc; p++, b += ldb, dst += TI__K512_NR) {
        _mm512_storeu_ps(dst, _mm512_maskz_loadu_ps(m0, b));
        _mm512_storeu_ps(dst + 16, _mm512_maskz_loadu_ps(m1, b + 16));
    }
}

/* DOT = 1: the sum of a[p] * b[p] for p < k; DOT = 0: the sum of a[p] (b unused). Four
 * vector accumulators, the tail masked, then summed in a fixed order (same inputs, same
 * bits). */
#define TI__SRED512_TERM(s, m, off)                                                         \
    s = DOT ? _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, a + (off)),                          \
                              _mm512_maskz_loadu_ps(m, b + (off)), s)                       \
            : _mm512_add_ps(s, _mm512_maskz_loadu_ps(m, a + (off)));
TI__X86_INLINE TI__TARGET_AVX512 float ti__sred512(const int DOT, const float *a, const float *b,
                                                   size_t k) {
    __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    const __mmask16 all = (__mmask16)0xffff;
    size_t p = 0;
    for (; p + 64 <= k; p += 64) {
        TI__SRED512_TERM(s0, all, p)
        TI__SRED512_TERM(s1, all, p + 16)
        TI__SRED512_TERM(s2, all, p + 32)
        TI__SRED512_TERM(s3, all, p + 48)
    }
    for (; p < k; p += 16) {
        __mmask16 m = k - p >= 16 ? all : (__mmask16)((1u << (k - p)) - 1u);
        TI__SRED512_TERM(s0, m, p)
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
}
#undef TI__SRED512_TERM
TI__PRIVATE TI__TARGET_AVX512 float ti__sdot_avx512(const float *a, const float *b, size_t k) {
    return ti__sred512(1, a, b, k);
}
/* ti__dw_sum_fn (the plane sums of cpu/pool.c and cpu/reduce.c) */
TI__PRIVATE TI__TARGET_AVX512 float ti__ssum_avx512(const float *x, size_t n) {
    return ti__sred512(0, x, NULL, n);
}

/* One column of C: c[r * ldc] = alpha * sum over p < k of op(A)[r, p] * b[p * ldb] + beta *
 * c[r * ldc] for r < m (beta == 0 does not read c). For a last column that would otherwise
 * take a whole 16-lane vector of the micro-kernel (N = 49 = 3 * 16 + 1): here it costs a
 * sixteenth of that. op(A)[r, p] is a[r * lda + p], or a[p * lda + r] when trans_a. */
TI__PRIVATE TI__TARGET_AVX512 void ti__sgemm_col_avx512(int trans_a, size_t m, size_t k,
                                                        const float *a, size_t lda,
                                                        const float *b, size_t ldb, float *c,
                                                        size_t ldc, float alpha, float beta) {
    if (!trans_a) { /* dot products of rows of A with the column, gathered 512 at a time */
        float col[512];
        for (size_t p0 = 0; p0 < k || p0 == 0; p0 += 512) {
            size_t len = k - p0 < 512 ? k - p0 : 512;
            for (size_t p = 0; p < len; p++) col[p] = b[(p0 + p) * ldb];
            for (size_t r = 0; r < m; r++) {
                float v = alpha * ti__sdot_avx512(a + r * lda + p0, col, len);
                float *cr = c + r * ldc;
                if (p0 > 0) *cr += v;
                else *cr = beta != 0.0f ? v + beta * *cr : v;
            }
            if (k == 0) break;
        }
        return;
    }
    float acc[256]; /* A transposed: rows of op(A) are contiguous in A; 256 rows at a time */
    for (size_t r0 = 0; r0 < m; r0 += 256) {
        size_t h = m - r0 < 256 ? m - r0 : 256;
        for (size_t r = 0; r < h; r++) acc[r] = 0.0f;
        for (size_t p = 0; p < k; p++) {
            __m512 bv = _mm512_set1_ps(b[p * ldb]);
            const float *ap = a + p * lda + r0;
            for (size_t r = 0; r < h; r += 16) {
                __mmask16 msk = h - r >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (h - r)) - 1u);
                __m512 x = _mm512_maskz_loadu_ps(msk, acc + r);
                x = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(msk, ap + r), bv, x);
                _mm512_mask_storeu_ps(acc + r, msk, x);
            }
        }
        for (size_t r = 0; r < h; r++) {
            float *cr = c + (r0 + r) * ldc, v = alpha * acc[r];
            *cr = beta != 0.0f ? v + beta * *cr : v;
        }
    }
}

/* ti__sgemm_isa.cols: the last 2 to 12 columns of C with the rows as lanes, two groups of
 * rows at a time (2 W accumulators), so a k step loads 2 + W values for 2 W FMAs. The
 * kernel's sliver of 16 columns took one broadcast of A a row and one B vector for 14 FMAs
 * of which W / 16 of the lanes counted: N = 196 (14 x 14 maps) 4 of 16, N = 169 (13 x 13)
 * 9 of 16, and on the Ice Lake VM loads, not FMAs, set the pace. Per-node minima, 1 thread,
 * 4 rounds alternating (bench/ab.py): MobileNetV2's three 96 -> 576 at 14 x 14 0.183-0.185
 * -> 0.172-0.174 ms; SqueezeNet's classifier 1.509 -> 1.494; whole models within noise. */
#define TI__K512_COLS_X12(S) S(0) S(1) S(2) S(3) S(4) S(5) S(6) S(7) S(8) S(9) S(10) S(11)
TI__X86_INLINE TI__TARGET_AVX512 void ti__k512_cols(const int W, const float *a, size_t astep,
                                                    size_t gstep, int gl, size_t m, size_t kc,
                                                    const float *b, size_t ldb, float *c,
                                                    size_t ldc, float alpha, float beta) {
    __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta), z = _mm512_setzero_ps();
    for (size_t r0 = 0, g = 0; r0 < m; r0 += 2 * (size_t)gl, g += 2) {
        size_t h[2];
        h[0] = m - r0 < (size_t)gl ? m - r0 : (size_t)gl;
        h[1] = m - r0 - h[0] < (size_t)gl ? m - r0 - h[0] : (size_t)gl;
        __mmask16 k0 = (__mmask16)((1u << h[0]) - 1u), k1 = (__mmask16)((1u << h[1]) - 1u);
        const float *a0 = a + g * gstep, *a1 = h[1] > 0 ? a0 + gstep : a0;
#define TI__K512_COLS_INIT(q) __m512 x##q = z, y##q = z;
        TI__K512_COLS_X12(TI__K512_COLS_INIT)
#undef TI__K512_COLS_INIT
        for (size_t p = 0; p < kc; p++) {
            __m512 v0 = _mm512_maskz_loadu_ps(k0, a0 + p * astep);
            __m512 v1 = _mm512_maskz_loadu_ps(k1, a1 + p * astep);
            const float *bp = b + p * ldb;
#define TI__K512_COLS_FMA(q)                                                                \
    if (W > q) {                                                                            \
        __m512 bq = _mm512_set1_ps(bp[q]);                                                  \
        x##q = _mm512_fmadd_ps(v0, bq, x##q);                                               \
        y##q = _mm512_fmadd_ps(v1, bq, y##q);                                               \
    }
            TI__K512_COLS_X12(TI__K512_COLS_FMA)
#undef TI__K512_COLS_FMA
        }
        /* alpha, then beta * C, as ti__k512_row does, on each group's W x 16 block
         * transposed in registers (ti__k512_transpose16): a row of C is W floats, one masked
         * load and store. The scalar copies through a buffer this replaces (3 W per row, at
         * each k block) held about a fifth of the tail's samples in SqueezeNet's classifier
         * (perf annotate). */
        __mmask16 wm = (__mmask16)((1u << W) - 1u);
        for (int s = 0; s < 2 && h[s] > 0; s++) {
            __m512 v[16], u[16];
#define TI__K512_COLS_PUT(q)                                                                \
    if (W > q) v[q] = s ? y##q : x##q;
            TI__K512_COLS_X12(TI__K512_COLS_PUT)
#undef TI__K512_COLS_PUT
            for (int q = W; q < 16; q++) v[q] = z;
            ti__k512_transpose16(v, u);
            for (size_t r = 0; r < h[s]; r++) {
                float *cr = c + (r0 + (size_t)s * (size_t)gl + r) * ldc;
                __m512 o = _mm512_mul_ps(u[r], va);
                if (beta != 0.0f) o = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(wm, cr), o);
                _mm512_mask_storeu_ps(cr, wm, o);
            }
        }
    }
}
#undef TI__K512_COLS_X12
#define TI__K512_COLS_DEF(w)                                                                \
    static __attribute__((noinline, unused)) TI__TARGET_AVX512 void ti__k512_cols##w(          \
        const float *a, size_t astep, size_t gstep, int gl, size_t m, size_t kc,            \
        const float *b, size_t ldb, float *c, size_t ldc, float alpha, float beta) {        \
        ti__k512_cols(w, a, astep, gstep, gl, m, kc, b, ldb, c, ldc, alpha, beta);          \
    }
TI__K512_COLS_DEF(2)
TI__K512_COLS_DEF(3)
TI__K512_COLS_DEF(4)
TI__K512_COLS_DEF(5)
TI__K512_COLS_DEF(6)
TI__K512_COLS_DEF(7)
TI__K512_COLS_DEF(8)
TI__K512_COLS_DEF(9)
TI__K512_COLS_DEF(10)
TI__K512_COLS_DEF(11)
TI__K512_COLS_DEF(12)
#undef TI__K512_COLS_DEF
TI__PRIVATE TI__TARGET_AVX512 void ti__sgemm_cols_avx512(const float *a, size_t astep,
                                                         size_t gstep, int gl, size_t m,
                                                         size_t kc, const float *b, size_t ldb,
                                                         int w, float *c, size_t ldc,
                                                         float alpha, float beta) {
    switch (w) {
#define TI__K512_COLS_CASE(n)                                                               \
    case n: ti__k512_cols##n(a, astep, gstep, gl, m, kc, b, ldb, c, ldc, alpha, beta); break;
    TI__K512_COLS_CASE(2) TI__K512_COLS_CASE(3) TI__K512_COLS_CASE(4) TI__K512_COLS_CASE(5)
    TI__K512_COLS_CASE(6) TI__K512_COLS_CASE(7) TI__K512_COLS_CASE(8) TI__K512_COLS_CASE(9)
    TI__K512_COLS_CASE(10) TI__K512_COLS_CASE(11) TI__K512_COLS_CASE(12)
#undef TI__K512_COLS_CASE
    default: TI_ASSERT(0); break;
    }
}

/* ti__sgemm_isa.store_t: blocks of 16 x 16 (rows past h zero) transposed in registers
 * (ti__k512_transpose16), each of a block's rows stored as its h floats after the epilogue
 * (ti__k512_epi, the kernels' own), after the sum with t's own values when sum (and c2's
 * block added to c's first, where given). In the
 * transposed GEMM the scalar loop (one 4-byte
 * store per float) was a fifth of a 1x1 conv of 160 -> 960 on a 7 x 7 map (perf), and the
 * epilogue's pass over Y after it another 7 %. */
TI__PRIVATE TI__TARGET_AVX512 void ti__sgemm_store_t_avx512(const float *c, const float *c2,
                                                           size_t ldc, size_t h, size_t w,
                                                           float *t, size_t ldt, int sum, int ep,
                                                           const float *bias, float lo,
                                                           float hi) {
    __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
    for (size_t r0 = 0; r0 < h; r0 += 16) {
        size_t hr = h - r0 < 16 ? h - r0 : 16;
        __mmask16 hm = (__mmask16)((1u << hr) - 1u);
        for (size_t q0 = 0; q0 < w; q0 += 16) {
            size_t wq = w - q0 < 16 ? w - q0 : 16;
            __mmask16 wm = (__mmask16)((1u << wq) - 1u);
            const float *cb = c + r0 * ldc + q0;
            __m512 x[16], u[16];
            for (size_t r = 0; r < 16; r++)
                x[r] = r < hr ? _mm512_maskz_loadu_ps(wm, cb + r * ldc) : _mm512_setzero_ps();
            if (c2 != NULL) /* another part's sums: c2 + c, as the GEMM adds a k block */
                for (size_t r = 0; r < hr; r++)
                    x[r] = _mm512_add_ps(
                        _mm512_maskz_loadu_ps(wm, c2 + (r0 + r) * ldc + q0), x[r]);
            ti__k512_transpose16(x, u);
            for (size_t q = 0; q < wq; q++) {
                __m512 v = u[q], v1 = v; /* v1: ti__k512_epi's second vector, unused */
                if (sum) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(hm, t + (q0 + q) * ldt + r0));
                if (ep > 0) ti__k512_epi(ep, bias != NULL ? bias[q0 + q] : 0.0f, vlo, vhi, &v, &v1);
                _mm512_mask_storeu_ps(t + (q0 + q) * ldt + r0, hm, v);
            }
        }
    }
}

/* ti__sgemm_isa.pack_a: op(A)[0:h, 0:kc] as dst[p * h + r], h <= 16. A not transposed: 16
 * x 16 blocks, each row read as one vector and the block transposed in registers, then
 * stored a column (h floats) at a time. The scalar gather it replaces read the h rows one
 * float each per column, with rows 4 KiB apart all on one L1 set: 8.4 % of SGEMM 1024^3's
 * samples (perf), this 5.5-7 % (it waits for A from memory); 1.5-3.8 % faster in four
 * alternating rounds on a Xeon, too noisy to tell on the Zen 4. */
TI__PRIVATE TI__TARGET_AVX512 void ti__sgemm_pack_a_avx512(const float *a, size_t lda,
                                                           int trans_a, size_t h, size_t kc,
                                                           float *dst) {
    __mmask16 hm = (__mmask16)((1u << h) - 1u);
    if (trans_a) { /* element (r, p) at a[p * lda + r]: a copy of h floats per p */
        for (size_t p = 0; p < kc; p++)
            _mm512_mask_storeu_ps(dst + p * h, hm, _mm512_maskz_loadu_ps(hm, a + p * lda));
        return;
    }
    for (size_t p0 = 0; p0 < kc; p0 += 16) {
        size_t pw = kc - p0 < 16 ? kc - p0 : 16;
        __mmask16 pm = (__mmask16)((1u << pw) - 1u);
        __m512 x[16], u[16];
        for (size_t r = 0; r < 16; r++)
            x[r] = r < h ? _mm512_maskz_loadu_ps(pm, a + r * lda + p0) : _mm512_setzero_ps();
        ti__k512_transpose16(x, u);
        for (size_t q = 0; q < pw; q++) _mm512_mask_storeu_ps(dst + (p0 + q) * h, hm, u[q]);
    }
}

TI__PRIVATE const ti__sgemm_isa *ti__sgemm_avx512_isa(void) {
    static const ti__sgemm_isa isa = {
        TI__ISA_AVX512, TI__K512_MR, TI__K512_NR, TI__K512_KC, TI__K512_MC,
        ti__sgemm_kernel_avx512, ti__sgemm_pack_b_avx512, ti__sdot_avx512,
        ti__sgemm_kernel_avx512_ldb, ti__sgemm_col_avx512, ti__sgemm_store_t_avx512,
        ti__sgemm_pack_a_avx512, ti__sgemm_kernel_avx512_l2, NULL, 0, TI__CONV_APANEL_MIN_K_512,
        ti__sgemm_cols_avx512};
    return &isa;
}
#endif /* TI__X86_SIMD */
