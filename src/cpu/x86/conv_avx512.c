/* Depthwise convolution kernels for AVX-512F: the flat path's (as conv_avx2.c's), then the
 * row kernels for rows too wide for it: 16 outputs of one row at a time, one FMA
 * per weight tap, input loaded unaligned (stride 1) or as two vectors deinterleaved with a
 * two-source permute (stride 2); the last partial vector uses masked loads and stores, so
 * nothing outside the row is read or written. The loops around them (rows, padding at the
 * row ends, threads) are in cpu/conv_fast.c. Compiled with a function-level target
 * attribute, run only when cpuid says AVX-512F is usable. Must not allocate. */
#ifdef TI__X86_SIMD
#include <immintrin.h>

/* Mask of the first n of 16 lanes (n may be <= 0 or >= 16). */
TI__X86_INLINE TI__TARGET_AVX512 __mmask16 ti__dw512_mask(long n) {
    return n <= 0 ? (__mmask16)0 : n >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << n) - 1u);
}

/* Input lanes x[i * S] for the m outputs i < m (m <= 16) from p; lanes past m are zero. */
TI__X86_INLINE TI__TARGET_AVX512 __m512 ti__dw512_load(const int S, const float *p, long m,
                                                       __m512i even) {
    if (S == 1) return m >= 16 ? _mm512_loadu_ps(p) : _mm512_maskz_loadu_ps(ti__dw512_mask(m), p);
    long cnt = 2 * m - 1; /* floats spanned: p[0] .. p[2(m-1)] */
    __m512 a = _mm512_maskz_loadu_ps(ti__dw512_mask(cnt), p);
    __m512 b = _mm512_maskz_loadu_ps(ti__dw512_mask(cnt - 16), p + 16);
    return _mm512_permutex2var_ps(a, even, b);
}

/* The tap loops are unrolled by request, as in conv_avx2.c. */
TI__X86_INLINE TI__TARGET_AVX512 void ti__dw512_row(const int K, const int S, float *y, size_t n,
                                                    const float *const *x,
                                                    const float *const *w, int nr, float bias,
                                                    int clamp, float lo, float hi) {
    __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi), vb = _mm512_set1_ps(bias);
    for (size_t i = 0; i < n; i += 16) {
        long m = (long)(n - i < 16 ? n - i : 16);
        __m512 acc = vb, acc2 = _mm512_setzero_ps(); /* two chains: taps alternate */
        TI__UNROLL5 for (int r = 0; r < nr; r++) {
            const float *xr = x[r] + i * (size_t)S, *wr = w[r];
            TI__UNROLL5 for (int q = 0; q < K; q++) {
                __m512 v = ti__dw512_load(S, xr + q, m, even);
                if (q & 1) acc2 = _mm512_fmadd_ps(_mm512_set1_ps(wr[q]), v, acc2);
                else acc = _mm512_fmadd_ps(_mm512_set1_ps(wr[q]), v, acc);
            }
        }
        acc = _mm512_add_ps(acc, acc2);
        if (clamp) /* maskz forms: g++ warns that the plain ones' undefined source may be
                    * used uninitialized */
            acc = _mm512_maskz_min_ps(0xffff, _mm512_maskz_max_ps(0xffff, acc, vlo), vhi);
        if (m >= 16) _mm512_storeu_ps(y + i, acc);
        else _mm512_mask_storeu_ps(y + i, ti__dw512_mask(m), acc);
    }
}

#define TI__DW512_DEF(k, st)                                                                 \
    static __attribute__((noinline, unused)) TI__TARGET_AVX512 void ti__dw512_k##k##s##st(   \
        float *y, size_t n, const float *const *x, const float *const *w, int nr,           \
        float bias, int clamp, float lo, float hi) {                                        \
        ti__dw512_row(k, st, y, n, x, w, nr, bias, clamp, lo, hi);                           \
    }
TI__DW512_DEF(3, 1)
TI__DW512_DEF(3, 2)
TI__DW512_DEF(5, 1)
TI__DW512_DEF(5, 2)

/* The flat depthwise kernel (ti__dw_taps_fn), as conv_avx2.c's: eight vectors of 16 at a
 * time, then four (7 x 7 and 14 x 14 planes are 4 to 14 vectors), then one; one chain per
 * output, taps in order. */
TI__X86_INLINE TI__TARGET_AVX512 __m512 ti__dw512_clamp(__m512 v, __m512 vlo, __m512 vhi) {
    /* maskz forms: g++ warns that the plain ones' undefined source may be used uninitialized */
    return _mm512_maskz_min_ps(0xffff, _mm512_maskz_max_ps(0xffff, v, vlo), vhi);
}
#define TI__DW512_X8(S) S(0) S(1) S(2) S(3) S(4) S(5) S(6) S(7)
/* NV (8, 4 or 1, a constant once inlined) vectors of outputs from y + i; the sums are named
 * variables, used only when NV > v: as an array indexed in a loop gcc -O2 kept them on the
 * stack, a store and a reload around every FMA (MobileNetV2's depthwise convs took 2.5x
 * onnxruntime's on a Zen 4) */
TI__X86_INLINE TI__TARGET_AVX512 void ti__dw512_block(const int NV, float *y, size_t i,
                                                      const float *const *x, const float *w,
                                                      int taps, __m512 vb, int clamp,
                                                      __m512 vlo, __m512 vhi) {
    __m512 a0 = vb, a1 = vb, a2 = vb, a3 = vb, a4 = vb, a5 = vb, a6 = vb, a7 = vb;
    for (int t = 0; t < taps; t++) {
        const float *p = x[t] + i;
        __m512 wv = _mm512_set1_ps(w[t]);
#define TI__DW512_FMA(v) if (NV > v) a##v = _mm512_fmadd_ps(wv, _mm512_loadu_ps(p + 16 * v), a##v);
        TI__DW512_X8(TI__DW512_FMA)
#undef TI__DW512_FMA
    }
#define TI__DW512_STORE(v)                                                                   \
    if (NV > v) _mm512_storeu_ps(y + i + 16 * v, clamp ? ti__dw512_clamp(a##v, vlo, vhi) : a##v);
    TI__DW512_X8(TI__DW512_STORE)
#undef TI__DW512_STORE
}
#undef TI__DW512_X8
static __attribute__((noinline, unused)) TI__TARGET_AVX512 void
ti__dw512_taps(float *y, size_t n, const float *const *x, const float *w, int taps, float bias,
               int clamp, float lo, float hi) {
    __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi), vb = _mm512_set1_ps(bias);
    size_t i = 0;
    for (; i + 128 <= n; i += 128) ti__dw512_block(8, y, i, x, w, taps, vb, clamp, vlo, vhi);
    for (; i + 64 <= n; i += 64) ti__dw512_block(4, y, i, x, w, taps, vb, clamp, vlo, vhi);
    for (; i < n; i += 16) ti__dw512_block(1, y, i, x, w, taps, vb, clamp, vlo, vhi);
}

/* ti__dw_copy_fn and ti__dw_split_fn: whole vectors of 16 (of 32 source floats), the rest
 * of each row as conv_avx2.c's. */
static __attribute__((noinline, unused)) TI__TARGET_AVX512 void
ti__dw512_copy(float *d, size_t ld, const float *s, size_t ls, size_t rows, size_t n) {
    for (size_t r = 0; r < rows; r++) {
        float *dr = d + r * ld;
        const float *sr = s + r * ls;
        size_t i = 0;
        for (; i + 16 <= n; i += 16) _mm512_storeu_ps(dr + i, _mm512_loadu_ps(sr + i));
        ti__dw256_copy_row(dr, sr, i, n);
    }
}
static __attribute__((noinline, unused)) TI__TARGET_AVX512 void
ti__dw512_split(float *const *d, size_t ld, const float *s, size_t ls, size_t rows, size_t n) {
    __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
    for (size_t r = 0; r < rows; r++) {
        float *er = d[2 * (r & 1)] + (r >> 1) * ld, *orow = d[2 * (r & 1) + 1] + (r >> 1) * ld;
        const float *sr = s + r * ls;
        size_t i = 0;
        for (; i + 32 <= n; i += 32) {
            __m512 a = _mm512_loadu_ps(sr + i), b = _mm512_loadu_ps(sr + i + 16);
            _mm512_storeu_ps(er + i / 2, _mm512_permutex2var_ps(a, even, b));
            _mm512_storeu_ps(orow + i / 2, _mm512_permutex2var_ps(a, odd, b));
        }
        ti__dw256_split_row(er, orow, sr, i, n);
    }
}

/* The flat max pooling kernel (ti__dw_max_fn), as conv_avx2.c's with vectors of 16. */
static __attribute__((noinline, unused)) TI__TARGET_AVX512 void
ti__dw512_max(float *y, size_t n, const float *const *x, int taps) {
    size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        __m512 a0 = _mm512_loadu_ps(x[0] + i), a1 = _mm512_loadu_ps(x[0] + i + 16);
        __m512 a2 = _mm512_loadu_ps(x[0] + i + 32), a3 = _mm512_loadu_ps(x[0] + i + 48);
        for (int t = 1; t < taps; t++) { /* named maxima, as in ti__dw512_block */
            const float *p = x[t] + i;
            a0 = _mm512_maskz_max_ps(0xffff, _mm512_loadu_ps(p), a0);
            a1 = _mm512_maskz_max_ps(0xffff, _mm512_loadu_ps(p + 16), a1);
            a2 = _mm512_maskz_max_ps(0xffff, _mm512_loadu_ps(p + 32), a2);
            a3 = _mm512_maskz_max_ps(0xffff, _mm512_loadu_ps(p + 48), a3);
        }
        _mm512_storeu_ps(y + i, a0);
        _mm512_storeu_ps(y + i + 16, a1);
        _mm512_storeu_ps(y + i + 32, a2);
        _mm512_storeu_ps(y + i + 48, a3);
    }
    for (; i < n; i += 16) {
        __m512 a = _mm512_loadu_ps(x[0] + i);
        for (int t = 1; t < taps; t++)
            a = _mm512_maskz_max_ps(0xffff, _mm512_loadu_ps(x[t] + i), a);
        _mm512_storeu_ps(y + i, a);
    }
}

/* Max pooling rows (ti__maxpool_row_fn): max_ps(v, m) returns m unless v > m, which is
 * the scalar rule for NaN and signed zeros too. */
TI__X86_INLINE TI__TARGET_AVX512 void ti__mp512_row(const int S, float *y, size_t n,
                                                    const float *const *x, int nr, int K) {
    __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    for (size_t i = 0; i < n; i += 16) {
        long m = (long)(n - i < 16 ? n - i : 16);
        __m512 acc = ti__dw512_load(S, x[0] + i * (size_t)S, m, even);
        TI__UNROLL5 for (int r = 0; r < nr; r++) {
            const float *xr = x[r] + i * (size_t)S;
            TI__UNROLL5 for (int q = 0; q < K; q++)
                acc = _mm512_max_ps(ti__dw512_load(S, xr + q, m, even), acc);
        }
        if (m >= 16) _mm512_storeu_ps(y + i, acc);
        else _mm512_mask_storeu_ps(y + i, ti__dw512_mask(m), acc);
    }
}
static __attribute__((noinline, unused)) TI__TARGET_AVX512 void
ti__mp512_s1(float *y, size_t n, const float *const *x, int nr, int K) {
    ti__mp512_row(1, y, n, x, nr, K);
}
static __attribute__((noinline, unused)) TI__TARGET_AVX512 void
ti__mp512_s2(float *y, size_t n, const float *const *x, int nr, int K) {
    ti__mp512_row(2, y, n, x, nr, K);
}

/* dst[t] = src[2 t] for t < n (the stride-2 rows of im2col, cpu/conv.c): 16 at a time by
 * the deinterleaving load above; reads nothing past src[2 (n - 1)]. */
TI__PRIVATE TI__TARGET_AVX512 void ti__copy_s2_avx512(float *dst, const float *src, size_t n) {
    __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    for (size_t i = 0; i < n; i += 16) {
        long m = (long)(n - i < 16 ? n - i : 16);
        __m512 v = ti__dw512_load(2, src + 2 * i, m, even);
        if (m >= 16) _mm512_storeu_ps(dst + i, v);
        else _mm512_mask_storeu_ps(dst + i, ti__dw512_mask(m), v);
    }
}

TI__PRIVATE const ti__dw_isa *ti__dw_avx512_isa(void) {
    static const ti__dw_isa isa = {TI__ISA_AVX512,
                                   {{ti__dw512_k3s1, ti__dw512_k3s2},
                                    {ti__dw512_k5s1, ti__dw512_k5s2}},
                                   {ti__mp512_s1, ti__mp512_s2},
                                   ti__dw512_taps, ti__dw512_copy, ti__dw512_split,
                                   ti__dw512_max, ti__ssum_avx512};
    return &isa;
}
#endif /* TI__X86_SIMD */
