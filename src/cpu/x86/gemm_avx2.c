/* float32 GEMM micro-kernel for AVX2 + FMA: a 6 x 16 register tile (12 YMM accumulators, two
 * B vectors, one broadcast of A: 15 of the 16 YMM registers), smaller row counts for edges,
 * masked loads and stores for the last columns. The blocking around it (packing, cache
 * blocks, threads) is in cpu/gemm.c; this file only provides the kernel and the B-panel
 * packer. Compiled with a function-level target attribute, run only when cpuid says AVX2
 * and FMA are usable (cpu/x86/cpuid.c). Must not allocate. */
#ifdef TI__X86_SIMD
#include <immintrin.h>

#define TI__K256_MR 6
#define TI__K256_NR 16
#define TI__K256_KC 256 /* B sliver 256 x 16 floats = 16 KiB: half of a 32 KiB L1 */
#define TI__K256_MC 128 /* A block 128 x 256 floats = 128 KiB: a part of L2 */

/* Lane masks for the first n of 8 floats (n may be <= 0 or >= 8). */
TI__X86_INLINE TI__TARGET_AVX2 __m256i ti__k256_mask(int n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* The epilogue ep (ti__sgemm_kernel_epi: 1 bias, 2 ReLU, 3 Clip, 4 HardSwish) on one row's
 * vectors, with ti__act_block's operations and operand order, so the same bits. */
TI__X86_INLINE TI__TARGET_AVX2 void ti__k256_epi(int ep, float bv, __m256 vlo, __m256 vhi,
                                                 __m256 *x0, __m256 *x1) {
    if (ep == 1 && bv == 0.0f) return; /* no bias, no activation: left as it is */
    __m256 vbias = _mm256_set1_ps(bv), zero = _mm256_setzero_ps();
    __m256 y0 = _mm256_add_ps(*x0, vbias), y1 = _mm256_add_ps(*x1, vbias);
    if (ep == 2) {
        y0 = _mm256_max_ps(y0, zero);
        y1 = _mm256_max_ps(y1, zero);
    } else if (ep == 3) {
        y0 = _mm256_min_ps(vhi, _mm256_max_ps(vlo, y0));
        y1 = _mm256_min_ps(vhi, _mm256_max_ps(vlo, y1));
    } else if (ep == 4) { /* x * min(1, max(0, x * (1/6) + 0.5)) */
        __m256 one = _mm256_set1_ps(1.0f), sixth = _mm256_set1_ps(1.0f / 6.0f);
        __m256 half = _mm256_set1_ps(0.5f);
        __m256 h0 = _mm256_add_ps(_mm256_mul_ps(y0, sixth), half);
        __m256 h1 = _mm256_add_ps(_mm256_mul_ps(y1, sixth), half);
        y0 = _mm256_mul_ps(y0, _mm256_min_ps(one, _mm256_max_ps(zero, h0)));
        y1 = _mm256_mul_ps(y1, _mm256_min_ps(one, _mm256_max_ps(zero, h1)));
    }
    *x0 = y0;
    *x1 = y1;
}

/* c[0:nc] = epi(alpha * (x0|x1) + beta * c[0:nc]); beta == 0 does not read c. */
TI__X86_INLINE TI__TARGET_AVX2 void ti__k256_row(float *c, __m256 x0, __m256 x1, __m256 va,
                                                 __m256 vb, float beta, int nc, __m256i m0,
                                                 __m256i m1, int ep, float bv, __m256 vlo,
                                                 __m256 vhi) {
    x0 = _mm256_mul_ps(x0, va);
    x1 = _mm256_mul_ps(x1, va);
    if (nc == TI__K256_NR) {
        if (beta != 0.0f) {
            x0 = _mm256_fmadd_ps(vb, _mm256_loadu_ps(c), x0);
            x1 = _mm256_fmadd_ps(vb, _mm256_loadu_ps(c + 8), x1);
        }
        if (ep > 0) ti__k256_epi(ep, bv, vlo, vhi, &x0, &x1);
        _mm256_storeu_ps(c, x0);
        _mm256_storeu_ps(c + 8, x1);
    } else if (nc == 1) { /* one float: a scalar load and store (masked ones are slow on AMD) */
        __m128 s = _mm256_castps256_ps128(x0);
        if (beta != 0.0f) s = _mm_fmadd_ss(_mm256_castps256_ps128(vb), _mm_load_ss(c), s);
        if (ep > 0) {
            x0 = _mm256_castps128_ps256(s);
            ti__k256_epi(ep, bv, vlo, vhi, &x0, &x1);
            s = _mm256_castps256_ps128(x0);
        }
        _mm_store_ss(c, s);
    } else { /* masked lanes are neither read nor written; none of the second vector's
              * when nc <= 8 */
        if (beta != 0.0f) {
            x0 = _mm256_fmadd_ps(vb, _mm256_maskload_ps(c, m0), x0);
            if (nc > 8) x1 = _mm256_fmadd_ps(vb, _mm256_maskload_ps(c + 8, m1), x1);
        }
        if (ep > 0) ti__k256_epi(ep, bv, vlo, vhi, &x0, &x1);
        _mm256_maskstore_ps(c, m0, x0);
        if (nc > 8) _mm256_maskstore_ps(c + 8, m1, x1);
    }
}

#define TI__K256_FMA(r)                                                                     \
    if (MR > r) {                                                                           \
        __m256 ar = _mm256_broadcast_ss(ROWS ? a + (r) * lda : a + (r));                   \
        c##r##_0 = _mm256_fmadd_ps(ar, b0, c##r##_0);                                       \
        if (NV > 1) c##r##_1 = _mm256_fmadd_ps(ar, b1, c##r##_1);                           \
    }
#define TI__K256_STORE(r)                                                                   \
    if (MR > r)                                                                             \
        ti__k256_row(c + (r) * ldc, c##r##_0, c##r##_1, va, vb, beta, nc, m0, m1, ep,       \
                     ep > 0 && bias != NULL ? bias[r] : 0.0f, vlo, vhi);

/* A is read where it lies: ROWS = 1: element (r, p) at a[r * lda + p] (A not transposed);
 * ROWS = 0: at a[p * lda + r] (A transposed). NV: B vectors used, 2, or 1 when at most 8
 * columns are stored (the second vector's products would all be dropped; one column goes
 * to ti__k256_col1 instead). MR, ROWS and NV are constants once inlined. Line p < npf of pf
 * is prefetched at step p (ti__sgemm_kernel_fn). */
TI__X86_INLINE TI__TARGET_AVX2 void ti__k256_tile(const int MR, const int ROWS, const int NV,
                                                  size_t kc,
                                                  const float *a, size_t lda, const float *b,
                                                  float *c, size_t ldc, int nc, float alpha,
                                                  float beta, int ep, const float *bias,
                                                  float lo, float hi, const float *pf,
                                                  size_t npf) {
    size_t astep = ROWS ? 1 : lda;
    __m256 z = _mm256_setzero_ps();
    __m256 c0_0 = z, c0_1 = z, c1_0 = z, c1_1 = z, c2_0 = z, c2_1 = z;
    __m256 c3_0 = z, c3_1 = z, c4_0 = z, c4_1 = z, c5_0 = z, c5_1 = z;
    for (size_t p = 0; p < kc; p++) {
        if (p < npf) _mm_prefetch((const char *)(pf + p * 16), _MM_HINT_T1);
        __m256 b0 = _mm256_loadu_ps(b), b1 = NV > 1 ? _mm256_loadu_ps(b + 8) : z;
        TI__K256_FMA(0) TI__K256_FMA(1) TI__K256_FMA(2)
        TI__K256_FMA(3) TI__K256_FMA(4) TI__K256_FMA(5)
        a += astep;
        b += TI__K256_NR;
    }
    __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
    __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
    __m256i m0 = ti__k256_mask(nc), m1 = ti__k256_mask(nc - 8);
    TI__K256_STORE(0) TI__K256_STORE(1) TI__K256_STORE(2)
    TI__K256_STORE(3) TI__K256_STORE(4) TI__K256_STORE(5)
}

#define TI__K256_ARGS kc, a, lda, b, c, ldc, nc, alpha, beta, ep, bias, lo, hi, pf, npf
#define TI__K256_DEF(n)                                                                     \
    static __attribute__((noinline, unused)) TI__TARGET_AVX2 void ti__k256_m##n(             \
        int rows, size_t kc, const float *a, size_t lda, const float *b, float *c,          \
        size_t ldc, int nc, float alpha, float beta, int ep, const float *bias, float lo,   \
        float hi, const float *pf, size_t npf) {                                            \
        if (nc > 8 && rows) ti__k256_tile(n, 1, 2, TI__K256_ARGS);                          \
        else if (nc > 8) ti__k256_tile(n, 0, 2, TI__K256_ARGS);                             \
        else if (rows) ti__k256_tile(n, 1, 1, TI__K256_ARGS);                               \
        else ti__k256_tile(n, 0, 1, TI__K256_ARGS);                                         \
    }
TI__K256_DEF(1)
TI__K256_DEF(2)
TI__K256_DEF(3)
TI__K256_DEF(4)
TI__K256_DEF(5)
TI__K256_DEF(6)

/* A last sliver of one column (N = 49 = 3 * 16 + 1: 7 x 7 maps; 55 x 55): the tile above
 * ran it as one vector of 8 lanes, 6 FMA chains of one product a k step each, bound by the
 * FMA latency: about 2/3 of a whole sliver's time for 1/16 of its columns (1280 x 49 x 320,
 * A as rows, bench/sgemm.c: 76 % of the FMA peak, 80 % at N = 48). Here the vector's lanes
 * are A's rows, four chains take the k steps in turn (step p into chain p % 4), and the
 * chains are summed (0 + 1) + (2 + 3): the same bits whether A is transposed (a k step's
 * rows lie side by side) or not (8 k steps of the rows transposed in registers), so a
 * conv's weights give the same output packed or not. Same epilogue as the tile. */
TI__X86_INLINE TI__TARGET_AVX2 __m256 ti__k256_col1_fma(__m256 acc, __m256 av, const float *b) {
    return _mm256_fmadd_ps(av, _mm256_broadcast_ss(b), acc);
}
TI__X86_INLINE TI__TARGET_AVX2 void ti__k256_col1(int mr, int rows, size_t kc, const float *a,
                                                  size_t lda, const float *b, float *c,
                                                  size_t ldc, float alpha, float beta, int ep,
                                                  const float *bias, float lo, float hi) {
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    __m256i m = ti__k256_mask(mr);
    size_t p = 0;
    if (rows) {
        /* rows r < mr of k steps p .. p + 7, transposed; named vectors, not arrays: gcc
         * kept arrays of them on the stack */
        __m256 z = _mm256_setzero_ps();
        for (; p + 8 <= kc; p += 8) {
            const float *ap = a + p;
            __m256 x0 = _mm256_loadu_ps(ap), x1 = mr > 1 ? _mm256_loadu_ps(ap + lda) : z;
            __m256 x2 = mr > 2 ? _mm256_loadu_ps(ap + 2 * lda) : z;
            __m256 x3 = mr > 3 ? _mm256_loadu_ps(ap + 3 * lda) : z;
            __m256 x4 = mr > 4 ? _mm256_loadu_ps(ap + 4 * lda) : z;
            __m256 x5 = mr > 5 ? _mm256_loadu_ps(ap + 5 * lda) : z;
            /* pairs of rows interleaved: t01 = r0 r1 of steps 0 1 | 4 5, h01 of 2 3 | 6 7 */
            __m256 t01 = _mm256_unpacklo_ps(x0, x1), h01 = _mm256_unpackhi_ps(x0, x1);
            __m256 t23 = _mm256_unpacklo_ps(x2, x3), h23 = _mm256_unpackhi_ps(x2, x3);
            __m256 t45 = _mm256_unpacklo_ps(x4, x5), h45 = _mm256_unpackhi_ps(x4, x5);
            /* rows 0-3 of step e | e + 4, and rows 4, 5 (6, 7 zero) */
            __m256 q0 = _mm256_shuffle_ps(t01, t23, 0x44), q1 = _mm256_shuffle_ps(t01, t23, 0xee);
            __m256 q2 = _mm256_shuffle_ps(h01, h23, 0x44), q3 = _mm256_shuffle_ps(h01, h23, 0xee);
            __m256 w0 = _mm256_shuffle_ps(t45, z, 0x44), w1 = _mm256_shuffle_ps(t45, z, 0xee);
            __m256 w2 = _mm256_shuffle_ps(h45, z, 0x44), w3 = _mm256_shuffle_ps(h45, z, 0xee);
            const float *bp = b + p * TI__K256_NR;
            s0 = ti__k256_col1_fma(s0, _mm256_permute2f128_ps(q0, w0, 0x20), bp);
            s1 = ti__k256_col1_fma(s1, _mm256_permute2f128_ps(q1, w1, 0x20), bp + 16);
            s2 = ti__k256_col1_fma(s2, _mm256_permute2f128_ps(q2, w2, 0x20), bp + 32);
            s3 = ti__k256_col1_fma(s3, _mm256_permute2f128_ps(q3, w3, 0x20), bp + 48);
            s0 = ti__k256_col1_fma(s0, _mm256_permute2f128_ps(q0, w0, 0x31), bp + 64);
            s1 = ti__k256_col1_fma(s1, _mm256_permute2f128_ps(q1, w1, 0x31), bp + 80);
            s2 = ti__k256_col1_fma(s2, _mm256_permute2f128_ps(q2, w2, 0x31), bp + 96);
            s3 = ti__k256_col1_fma(s3, _mm256_permute2f128_ps(q3, w3, 0x31), bp + 112);
        }
    } else if (kc > 0) {
        /* whole loads while they end inside what the tile reads (a[(kc - 1) * lda + mr - 1]
         * is its last float), masked ones after */
        size_t end = (kc - 1) * lda + (size_t)mr;
        for (; p + 4 <= kc && (p + 3) * lda + 8 <= end; p += 4) {
            const float *ap = a + p * lda, *bp = b + p * TI__K256_NR;
            s0 = ti__k256_col1_fma(s0, _mm256_loadu_ps(ap), bp);
            s1 = ti__k256_col1_fma(s1, _mm256_loadu_ps(ap + lda), bp + 16);
            s2 = ti__k256_col1_fma(s2, _mm256_loadu_ps(ap + 2 * lda), bp + 32);
            s3 = ti__k256_col1_fma(s3, _mm256_loadu_ps(ap + 3 * lda), bp + 48);
        }
    }
    for (; p < kc; p++) { /* the last steps, each into its chain */
        __m256 av;
        if (rows) {
            float t[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
            for (int r = 0; r < mr; r++) t[r] = a[(size_t)r * lda + p];
            av = _mm256_loadu_ps(t);
        } else {
            av = _mm256_maskload_ps(a + p * lda, m);
        }
        const float *bp = b + p * TI__K256_NR;
        if (p % 4 == 0) s0 = ti__k256_col1_fma(s0, av, bp);
        else if (p % 4 == 1) s1 = ti__k256_col1_fma(s1, av, bp);
        else if (p % 4 == 2) s2 = ti__k256_col1_fma(s2, av, bp);
        else s3 = ti__k256_col1_fma(s3, av, bp);
    }
    float s[8];
    _mm256_storeu_ps(s, _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
    __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
    __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
    __m256i m0 = ti__k256_mask(1), m1 = ti__k256_mask(-7);
    for (int r = 0; r < mr; r++) {
        __m256 x = _mm256_set1_ps(s[r]);
        ti__k256_row(c + (size_t)r * ldc, x, x, va, vb, beta, 1, m0, m1, ep,
                     bias != NULL ? bias[r] : 0.0f, vlo, vhi);
    }
}
static __attribute__((noinline, unused)) TI__TARGET_AVX2 void
ti__k256_col1_rows(int mr, size_t kc, const float *a, size_t lda, const float *b, float *c,
                   size_t ldc, float alpha, float beta, int ep, const float *bias, float lo,
                   float hi) {
    ti__k256_col1(mr, 1, kc, a, lda, b, c, ldc, alpha, beta, ep, bias, lo, hi);
}
static __attribute__((noinline, unused)) TI__TARGET_AVX2 void
ti__k256_col1_t(int mr, size_t kc, const float *a, size_t lda, const float *b, float *c,
                size_t ldc, float alpha, float beta, int ep, const float *bias, float lo,
                float hi) {
    ti__k256_col1(mr, 0, kc, a, lda, b, c, ldc, alpha, beta, ep, bias, lo, hi);
}

TI__PRIVATE TI__TARGET_AVX2 void ti__sgemm_kernel_avx2(size_t kc, const float *a, size_t lda,
                                                       int a_rows, const float *b, float *c,
                                                       size_t ldc, int mr, int nc, float alpha,
                                                       float beta, const ti__gemm_epi *epi,
                                                       const float *pf, size_t npf) {
    float lo, hi;
    int ep = ti__sgemm_kernel_epi(epi, &lo, &hi);
    const float *bias = ep > 0 ? epi->bias : NULL;
    TI_ASSERT(ep >= 0);
    if (nc == 1 && mr <= TI__K256_MR) {
        (a_rows ? ti__k256_col1_rows : ti__k256_col1_t)(mr, kc, a, lda, b, c, ldc, alpha, beta,
                                                        ep, bias, lo, hi);
        return;
    }
    switch (mr) {
#define TI__K256_CASE(n)                                                                    \
    case n: ti__k256_m##n(a_rows, kc, a, lda, b, c, ldc, nc, alpha, beta, ep, bias, lo, hi, pf, npf); break;
    TI__K256_CASE(1) TI__K256_CASE(2) TI__K256_CASE(3) TI__K256_CASE(4) TI__K256_CASE(5)
#undef TI__K256_CASE
    default: ti__k256_m6(a_rows, kc, a, lda, b, c, ldc, nc, alpha, beta, ep, bias, lo, hi, pf, npf); break;
    }
}

/* ti__sgemm_isa.kernel_run: the tile along `slivers` whole slivers of B in one call (a
 * small K's tiles are short: 96 x 12544 x 16, a call a sliver, spent about 12 % of its time
 * in the blocking loop's per-call work and the kernel's dispatch, perf). bench/sgemm.c, Zen
 * 3, 1 thread: 96 x 12544 x 16 60 -> 65 % of the FMA peak, 16 x 12544 x 32 55 -> 60 %, 24 x
 * 3136 x 96 70 -> 73 %; MobileNetV2 (bench/ab.py, per-node minima, alternating) 9.959 ->
 * 9.568 ms at 1 thread (16 -> 96 at 112 x 112 0.730 -> 0.649), 5.106 -> 4.927 at 2. */
#define TI__K256_RUN_DEF(n)                                                                 \
    static __attribute__((noinline, unused)) TI__TARGET_AVX2 void ti__k256_run##n(           \
        int rows, size_t kc, const float *a, size_t lda, const float *b, size_t bstep,       \
        int slivers, float *c, size_t ldc, float alpha, float beta, int ep,                 \
        const float *bias, float lo, float hi) {                                            \
        for (int g = 0; g < slivers; g++, b += bstep, c += TI__K256_NR) {                     \
            if (rows)                                                                       \
                ti__k256_tile(n, 1, 2, kc, a, lda, b, c, ldc, TI__K256_NR, alpha, beta, ep,  \
                              bias, lo, hi, NULL, 0);                                       \
            else                                                                            \
                ti__k256_tile(n, 0, 2, kc, a, lda, b, c, ldc, TI__K256_NR, alpha, beta, ep,  \
                              bias, lo, hi, NULL, 0);                                       \
        }                                                                                   \
    }
TI__K256_RUN_DEF(1)
TI__K256_RUN_DEF(2)
TI__K256_RUN_DEF(3)
TI__K256_RUN_DEF(4)
TI__K256_RUN_DEF(5)
TI__K256_RUN_DEF(6)
#undef TI__K256_RUN_DEF

TI__PRIVATE TI__TARGET_AVX2 void ti__sgemm_kernel_run_avx2(size_t kc, const float *a,
                                                           size_t lda, int a_rows,
                                                           const float *b, size_t bstep,
                                                           int slivers, float *c, size_t ldc,
                                                           int mr, float alpha, float beta,
                                                           const ti__gemm_epi *epi) {
    float lo, hi;
    int ep = ti__sgemm_kernel_epi(epi, &lo, &hi);
    const float *bias = ep > 0 ? epi->bias : NULL;
    TI_ASSERT(ep >= 0);
    switch (mr) {
#define TI__K256_RUN_ARGS                                                                   \
    a_rows, kc, a, lda, b, bstep, slivers, c, ldc, alpha, beta, ep, bias, lo, hi
    case 1: ti__k256_run1(TI__K256_RUN_ARGS); break;
    case 2: ti__k256_run2(TI__K256_RUN_ARGS); break;
    case 3: ti__k256_run3(TI__K256_RUN_ARGS); break;
    case 4: ti__k256_run4(TI__K256_RUN_ARGS); break;
    case 5: ti__k256_run5(TI__K256_RUN_ARGS); break;
    default: ti__k256_run6(TI__K256_RUN_ARGS); break;
#undef TI__K256_RUN_ARGS
    }
}

/* Packs B[0:kc, 0:w] (row-major, row stride ldb) as kc rows of 16 floats, zero past w. */
TI__PRIVATE TI__TARGET_AVX2 void ti__sgemm_pack_b_avx2(size_t kc, size_t w, const float *b,
                                                       size_t ldb, float *dst) {
    if (w == TI__K256_NR) {
        for (size_t p = 0; p < kc; p++, b += ldb, dst += TI__K256_NR) {
            _mm256_storeu_ps(dst, _mm256_loadu_ps(b));
            _mm256_storeu_ps(dst + 8, _mm256_loadu_ps(b + 8));
        }
        return;
    }
    __m256i m0 = ti__k256_mask((int)w), m1 = ti__k256_mask((int)w - 8);
    for (size_t p = 0; p < kc; p++, b += ldb, dst += TI__K256_NR) {
        _mm256_storeu_ps(dst, _mm256_maskload_ps(b, m0));
        _mm256_storeu_ps(dst + 8, _mm256_maskload_ps(b + 8, m1));
    }
}

/* sum of a[p] * b[p] for p < k: four vector accumulators, the tail in scalar, then summed
 * in a fixed order. */
/* DOT = 1: the sum of a[p] * b[p] for p < k; DOT = 0: the sum of a[p] (b unused). Four
 * vector accumulators, the last floats one by one, in a fixed order. */
#define TI__SRED256_TERM(s, off)                                                            \
    s = DOT ? _mm256_fmadd_ps(_mm256_loadu_ps(a + (off)), _mm256_loadu_ps(b + (off)), s)    \
            : _mm256_add_ps(s, _mm256_loadu_ps(a + (off)));
TI__X86_INLINE TI__TARGET_AVX2 float ti__sred256(const int DOT, const float *a, const float *b,
                                                 size_t k) {
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    size_t p = 0;
    for (; p + 32 <= k; p += 32) {
        TI__SRED256_TERM(s0, p)
        TI__SRED256_TERM(s1, p + 8)
        TI__SRED256_TERM(s2, p + 16)
        TI__SRED256_TERM(s3, p + 24)
    }
    for (; p + 8 <= k; p += 8) TI__SRED256_TERM(s0, p)
    __m256 s = _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3));
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    h = _mm_add_ss(h, _mm_movehdup_ps(h));
    float r = _mm_cvtss_f32(h), t = 0.0f;
    for (; p < k; p++) t += DOT ? a[p] * b[p] : a[p];
    return r + t;
}
#undef TI__SRED256_TERM
TI__PRIVATE TI__TARGET_AVX2 float ti__sdot_avx2(const float *a, const float *b, size_t k) {
    return ti__sred256(1, a, b, k);
}
/* ti__dw_sum_fn (the plane sums of cpu/pool.c and cpu/reduce.c) */
TI__PRIVATE TI__TARGET_AVX2 float ti__ssum_avx2(const float *x, size_t n) {
    return ti__sred256(0, x, NULL, n);
}

TI__PRIVATE const ti__sgemm_isa *ti__sgemm_avx2_isa(void) {
    static const ti__sgemm_isa isa = {TI__ISA_AVX2, TI__K256_MR, TI__K256_NR, TI__K256_KC, TI__K256_MC,
                                      ti__sgemm_kernel_avx2, ti__sgemm_pack_b_avx2, ti__sdot_avx2, NULL, NULL, NULL,
                                      NULL, NULL, ti__sgemm_kernel_run_avx2, 1, TI__CONV_APANEL_MIN_K, NULL};
    return &isa;
}
#endif /* TI__X86_SIMD */
