/* Depthwise convolution kernels for AVX2 + FMA: the flat path's (ti__dw_taps_fn, the row
 * copies and phase split, the max of MaxPool; cpu/conv_fast.c), then the row kernels for
 * rows too wide for it: 8 outputs of one row at a time, one FMA
 * per weight tap, input loaded unaligned (stride 1) or as two vectors deinterleaved with a
 * shuffle and a lane permute (stride 2); the last partial vector uses masked loads and
 * stores, so nothing outside the row is read or written. The loops around them are in
 * cpu/conv_fast.c. Compiled with a function-level target attribute, run only when cpuid
 * says AVX2 and FMA are usable. Must not allocate. */
#ifdef TI__X86_SIMD
#include <immintrin.h>

/* Lane masks for the first n of 8 floats (n may be <= 0 or >= 8). */
TI__X86_INLINE TI__TARGET_AVX2 __m256i ti__dw256_mask(long n) {
    int c = n < 0 ? 0 : n > 8 ? 8 : (int)n;
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(c), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* Input lanes x[i * S] for the m outputs i < m (m <= 8) from p; lanes past m are zero. */
TI__X86_INLINE TI__TARGET_AVX2 __m256 ti__dw256_load(const int S, const float *p, long m,
                                                    int more) {
    if (S == 1) return m >= 8 ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, ti__dw256_mask(m));
    __m256 a, b;
    if (more) { /* a later vector's loads reach p[16]: p[15] may be read whole */
        a = _mm256_loadu_ps(p);
        b = _mm256_loadu_ps(p + 8);
    } else { /* the row's last vector: only p[0] .. p[2(m-1)] (masked loads are slow on
              * AMD's Zen 2: two of them on every vector made im2col's stride-2 copy 27 %
              * of ResNet-18's first conv, perf) */
        long cnt = 2 * m - 1;
        a = _mm256_maskload_ps(p, ti__dw256_mask(cnt));
        b = _mm256_maskload_ps(p + 8, ti__dw256_mask(cnt - 8));
    }
    /* a0 a2 b0 b2 | a4 a6 b4 b6, then 64-bit lanes 0 2 1 3: a0 a2 a4 a6 b0 b2 b4 b6 */
    __m256 e = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), _MM_SHUFFLE(3, 1, 2, 0)));
}

/* The tap loops are unrolled by request (TI__UNROLL5): gcc -O2 kept them as loops with a
 * branch per tap, and unrolled, depthwise 3x3/1 144 @56 took 0.9-1.0 ms instead of 1.5 on
 * AMD Zen 2 (bench/conv.c). */
TI__X86_INLINE TI__TARGET_AVX2 void ti__dw256_row(const int K, const int S, float *y, size_t n,
                                                  const float *const *x, const float *const *w,
                                                  int nr, float bias, int clamp, float lo,
                                                  float hi) {
    __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi), vb = _mm256_set1_ps(bias);
    for (size_t i = 0; i < n; i += 8) {
        long m = (long)(n - i < 8 ? n - i : 8);
        __m256 acc = vb, acc2 = _mm256_setzero_ps(); /* two chains: taps alternate */
        TI__UNROLL5 for (int r = 0; r < nr; r++) {
            const float *xr = x[r] + i * (size_t)S, *wr = w[r];
            TI__UNROLL5 for (int q = 0; q < K; q++) {
                __m256 v = ti__dw256_load(S, xr + q, m, i + 8 < n);
                if (q & 1) acc2 = _mm256_fmadd_ps(_mm256_broadcast_ss(wr + q), v, acc2);
                else acc = _mm256_fmadd_ps(_mm256_broadcast_ss(wr + q), v, acc);
            }
        }
        acc = _mm256_add_ps(acc, acc2);
        if (clamp) acc = _mm256_min_ps(_mm256_max_ps(acc, vlo), vhi);
        if (m >= 8) _mm256_storeu_ps(y + i, acc);
        else _mm256_maskstore_ps(y + i, ti__dw256_mask(m), acc);
    }
}

#define TI__DW256_DEF(k, st)                                                                 \
    static __attribute__((noinline, unused)) TI__TARGET_AVX2 void ti__dw256_k##k##s##st(     \
        float *y, size_t n, const float *const *x, const float *const *w, int nr,           \
        float bias, int clamp, float lo, float hi) {                                        \
        ti__dw256_row(k, st, y, n, x, w, nr, bias, clamp, lo, hi);                           \
    }
TI__DW256_DEF(3, 1)
TI__DW256_DEF(3, 2)
TI__DW256_DEF(5, 1)
TI__DW256_DEF(5, 2)

/* The flat depthwise kernel (ti__dw_taps_fn): up to ten vectors at a time, each tap's
 * weight broadcast once for them and its inputs read as FMA operands (the chains cover the
 * FMA latency), eight while more than ten remain, the rest in one block. One chain per
 * output, taps in order. Eight, then four, then one at a time left a 5x5 conv's 7 x 7 plane
 * (80 flat outputs: 8 + 1 + 1 vectors) with two single chains of 25 FMAs each, bound by
 * their latency: MobileNetV3-small's 576-channel ones took 0.080 ms (onnxruntime 0.059). */
#define TI__DW256_X10(S) S(0) S(1) S(2) S(3) S(4) S(5) S(6) S(7) S(8) S(9)
/* NV (1 to 10, a constant once inlined) vectors of outputs from y + i; the sums are named
 * variables, used only when NV > v: an array indexed in a loop stays in memory at -O2 */
TI__X86_INLINE TI__TARGET_AVX2 void ti__dw256_block(const int NV, float *y, size_t i,
                                                    const float *const *x, const float *w,
                                                    int taps, __m256 vb, int clamp, __m256 vlo,
                                                    __m256 vhi) {
    __m256 a0 = vb, a1 = vb, a2 = vb, a3 = vb, a4 = vb, a5 = vb, a6 = vb, a7 = vb, a8 = vb;
    __m256 a9 = vb;
    for (int t = 0; t < taps; t++) {
        const float *p = x[t] + i;
        __m256 wv = _mm256_broadcast_ss(w + t);
#define TI__DW256_FMA(v) if (NV > v) a##v = _mm256_fmadd_ps(wv, _mm256_loadu_ps(p + 8 * v), a##v);
        TI__DW256_X10(TI__DW256_FMA)
#undef TI__DW256_FMA
    }
#define TI__DW256_STORE(v)                                                                   \
    if (NV > v)                                                                              \
        _mm256_storeu_ps(y + i + 8 * v,                                                      \
                         clamp ? _mm256_min_ps(_mm256_max_ps(a##v, vlo), vhi) : a##v);
    TI__DW256_X10(TI__DW256_STORE)
#undef TI__DW256_STORE
}
#undef TI__DW256_X10
static __attribute__((noinline, unused)) TI__TARGET_AVX2 void
ti__dw256_taps(float *y, size_t n, const float *const *x, const float *w, int taps, float bias,
               int clamp, float lo, float hi) {
    __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi), vb = _mm256_set1_ps(bias);
    size_t i = 0;
    for (; n - i > 80; i += 64) ti__dw256_block(8, y, i, x, w, taps, vb, clamp, vlo, vhi);
#define TI__DW256_REST(v)                                                                    \
    case v: ti__dw256_block(v, y, i, x, w, taps, vb, clamp, vlo, vhi); break;
    switch ((n - i + 7) / 8) {
        TI__DW256_REST(1) TI__DW256_REST(2) TI__DW256_REST(3) TI__DW256_REST(4)
        TI__DW256_REST(5) TI__DW256_REST(6) TI__DW256_REST(7) TI__DW256_REST(8)
        TI__DW256_REST(9) TI__DW256_REST(10)
    default: break; /* n == i */
    }
#undef TI__DW256_REST
}

/* One row of ti__dw_copy_fn: 8 at a time, the last 8 (or 4) again where n is not a
 * multiple; AVX-512 copies its whole vectors first and hands the rest here. */
TI__X86_INLINE TI__TARGET_AVX2 void ti__dw256_copy_row(float *d, const float *s, size_t i,
                                                       size_t n) {
    if (n >= 8) {
        for (; i + 8 <= n; i += 8) _mm256_storeu_ps(d + i, _mm256_loadu_ps(s + i));
        if (i < n) _mm256_storeu_ps(d + n - 8, _mm256_loadu_ps(s + n - 8));
    } else if (n >= 4) {
        _mm_storeu_ps(d, _mm_loadu_ps(s));
        _mm_storeu_ps(d + n - 4, _mm_loadu_ps(s + n - 4));
    } else {
        for (; i < n; i++) d[i] = s[i];
    }
}
static __attribute__((noinline, unused)) TI__TARGET_AVX2 void
ti__dw256_copy(float *d, size_t ld, const float *s, size_t ls, size_t rows, size_t n) {
    for (size_t r = 0; r < rows; r++) ti__dw256_copy_row(d + r * ld, s + r * ls, 0, n);
}

/* 8 floats from s into 4 even ones at e, 4 odd ones at o. */
TI__X86_INLINE TI__TARGET_AVX2 void ti__dw128_split8(float *e, float *o, const float *s) {
    __m128 a = _mm_loadu_ps(s), b = _mm_loadu_ps(s + 4);
    _mm_storeu_ps(e, _mm_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)));
    _mm_storeu_ps(o, _mm_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1)));
}

/* One row of ti__dw_split_fn from source float i (even) on: 16 at a time, then 8, then the
 * last 8 again from an even start, and the last even one alone when n is odd. */
TI__X86_INLINE TI__TARGET_AVX2 void ti__dw256_split_row(float *e, float *o, const float *s,
                                                        size_t i, size_t n) {
    for (; i + 16 <= n; i += 16) {
        __m256 a = _mm256_loadu_ps(s + i), b = _mm256_loadu_ps(s + i + 8);
        /* a0 a2 b0 b2 | a4 a6 b4 b6, then 64-bit lanes 0 2 1 3; the odd ones alike */
        __m256d ev = _mm256_castps_pd(_mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)));
        __m256d od = _mm256_castps_pd(_mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1)));
        _mm256_storeu_ps(e + i / 2,
                         _mm256_castpd_ps(_mm256_permute4x64_pd(ev, _MM_SHUFFLE(3, 1, 2, 0))));
        _mm256_storeu_ps(o + i / 2,
                         _mm256_castpd_ps(_mm256_permute4x64_pd(od, _MM_SHUFFLE(3, 1, 2, 0))));
    }
    for (; i + 8 <= n; i += 8) ti__dw128_split8(e + i / 2, o + i / 2, s + i);
    if (i == n) return;
    if (n >= 8) {
        size_t j = (n - 8) & ~(size_t)1;
        ti__dw128_split8(e + j / 2, o + j / 2, s + j);
        if (n & 1) e[n / 2] = s[n - 1];
    } else {
        for (; i < n; i++) (i & 1 ? o : e)[i / 2] = s[i];
    }
}
static __attribute__((noinline, unused)) TI__TARGET_AVX2 void
ti__dw256_split(float *const *d, size_t ld, const float *s, size_t ls, size_t rows, size_t n) {
    for (size_t r = 0; r < rows; r++)
        ti__dw256_split_row(d[2 * (r & 1)] + (r >> 1) * ld, d[2 * (r & 1) + 1] + (r >> 1) * ld,
                            s + r * ls, 0, n);
}

/* The flat max pooling kernel (ti__dw_max_fn): max_ps(v, m) is v > m ? v : m, the scalar
 * rule; four vectors at a time, then one. */
static __attribute__((noinline, unused)) TI__TARGET_AVX2 void
ti__dw256_max(float *y, size_t n, const float *const *x, int taps) {
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        const float *p = x[0] + i;
        __m256 a0 = _mm256_loadu_ps(p), a1 = _mm256_loadu_ps(p + 8);
        __m256 a2 = _mm256_loadu_ps(p + 16), a3 = _mm256_loadu_ps(p + 24);
        for (int t = 1; t < taps; t++) {
            p = x[t] + i;
            a0 = _mm256_max_ps(_mm256_loadu_ps(p), a0);
            a1 = _mm256_max_ps(_mm256_loadu_ps(p + 8), a1);
            a2 = _mm256_max_ps(_mm256_loadu_ps(p + 16), a2);
            a3 = _mm256_max_ps(_mm256_loadu_ps(p + 24), a3);
        }
        _mm256_storeu_ps(y + i, a0);
        _mm256_storeu_ps(y + i + 8, a1);
        _mm256_storeu_ps(y + i + 16, a2);
        _mm256_storeu_ps(y + i + 24, a3);
    }
    for (; i < n; i += 8) {
        __m256 a = _mm256_loadu_ps(x[0] + i);
        for (int t = 1; t < taps; t++) a = _mm256_max_ps(_mm256_loadu_ps(x[t] + i), a);
        _mm256_storeu_ps(y + i, a);
    }
}

/* Max pooling rows (ti__maxpool_row_fn): max_ps(v, m) returns m unless v > m, which is
 * the scalar rule for NaN and signed zeros too. */
TI__X86_INLINE TI__TARGET_AVX2 void ti__mp256_row(const int S, float *y, size_t n,
                                                  const float *const *x, int nr, int K) {
    for (size_t i = 0; i < n; i += 8) {
        long m = (long)(n - i < 8 ? n - i : 8);
        __m256 acc = ti__dw256_load(S, x[0] + i * (size_t)S, m, i + 8 < n);
        TI__UNROLL5 for (int r = 0; r < nr; r++) {
            const float *xr = x[r] + i * (size_t)S;
            TI__UNROLL5 for (int q = 0; q < K; q++)
                acc = _mm256_max_ps(ti__dw256_load(S, xr + q, m, i + 8 < n), acc);
        }
        if (m >= 8) _mm256_storeu_ps(y + i, acc);
        else _mm256_maskstore_ps(y + i, ti__dw256_mask(m), acc);
    }
}
static __attribute__((noinline, unused)) TI__TARGET_AVX2 void
ti__mp256_s1(float *y, size_t n, const float *const *x, int nr, int K) {
    ti__mp256_row(1, y, n, x, nr, K);
}
static __attribute__((noinline, unused)) TI__TARGET_AVX2 void
ti__mp256_s2(float *y, size_t n, const float *const *x, int nr, int K) {
    ti__mp256_row(2, y, n, x, nr, K);
}

/* 3 x 3 windows at stride 2 over whole rows of windows (ti__maxpool_k3s2_fn), 8 outputs at
 * a time, taps in the rule's order as AVX-512's ti__mp512_k3s2: the even and odd columns of
 * 16 and the even ones of 16 from column 2, each by one shuffle whose lane order (0 2 8 10
 * | 4 6 12 14) is the same for all three, so the maxima are put in order once, at the
 * store. Masked loads only on a row's last vector (slow on AMD's Zen 2). AVX2 forced on the
 * Xeon, 1 thread, alone (bench/nodemin.c, against the flat path or the row kernel before):
 * 64 x 111 x 111 0.188 -> 0.140-0.150 ms, 128 x 55 x 55 0.085 -> 0.077, 256 x 27 x 27 0.051
 * -> 0.041, ResNet-18's 64 x 112 x 112 padded 0.220 -> 0.175; 16 x 111 x 111 in cache
 * 0.034-0.041 either way. */
TI__X86_INLINE TI__TARGET_AVX2 __m256 ti__mp256_k3s2_tap(const float *x, long c, __m256 m,
                                                        int first) {
    __m256 lo, hi, lo2, hi2;
    if (c >= 18) { /* columns 0 .. 17 inside */
        lo = _mm256_loadu_ps(x);
        hi = _mm256_loadu_ps(x + 8);
        lo2 = _mm256_loadu_ps(x + 2);
        hi2 = _mm256_loadu_ps(x + 10);
    } else {
        lo = _mm256_maskload_ps(x, ti__dw256_mask(c));
        hi = _mm256_maskload_ps(x + 8, ti__dw256_mask(c - 8));
        lo2 = _mm256_maskload_ps(x + 2, ti__dw256_mask(c - 2));
        hi2 = _mm256_maskload_ps(x + 10, ti__dw256_mask(c - 10));
    }
    __m256 e = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0));
    __m256 o = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 3, 1));
    __m256 e2 = _mm256_shuffle_ps(lo2, hi2, _MM_SHUFFLE(2, 0, 2, 0));
    m = first ? e : _mm256_max_ps(e, m);
    m = _mm256_max_ps(o, m);
    return _mm256_max_ps(e2, m);
}

static __attribute__((noinline, unused)) TI__TARGET_AVX2 void
ti__mp256_k3s2(float *y, size_t ldy, size_t n, const float *x, size_t ldx, size_t rows) {
    long cols = (long)(2 * n + 1); /* columns 0 .. 2n are read */
    for (size_t r = 0; r < rows; r++, y += ldy, x += 2 * ldx)
        for (size_t i = 0; i < n; i += 8) {
            /* Past a row's end lie the rows below, which the later rows of windows read:
             * plain loads there where they stay inside those (their lanes give outputs past
             * n, not stored), masked loads in the last rows only. Per-node minima, 4 x 60
             * runs alternating, 1 thread, Zen 3: SqueezeNet's MaxPools 111 -> 55, 55 -> 27
             * and 27 -> 13 (half of whose vectors end a row) 0.153 / 0.080 / 0.059 ->
             * 0.129 / 0.069 / 0.046 ms. A load reads up to 2 n + 15 of the bottom row. */
            int below = r + 1 < rows && 2 * (rows - 1 - r) * ldx >= 16;
            long c = below ? 18 : cols - (long)(2 * i);
            const float *p = x + 2 * i;
            __m256 m = ti__mp256_k3s2_tap(p, c, _mm256_setzero_ps(), 1);
            m = ti__mp256_k3s2_tap(p + ldx, c, m, 0);
            m = ti__mp256_k3s2_tap(p + 2 * ldx, c, m, 0);
            m = _mm256_castpd_ps(
                _mm256_permute4x64_pd(_mm256_castps_pd(m), _MM_SHUFFLE(3, 1, 2, 0)));
            if (n - i >= 8) _mm256_storeu_ps(y + i, m);
            else _mm256_maskstore_ps(y + i, ti__dw256_mask((long)(n - i)), m);
        }
}

/* dst[t] = src[2 t] for t < n (the stride-2 rows of im2col, cpu/conv.c): 8 at a time by
 * the deinterleaving load above; reads nothing past src[2 (n - 1)]. */
TI__PRIVATE TI__TARGET_AVX2 void ti__copy_s2_avx2(float *dst, const float *src, size_t n) {
    for (size_t i = 0; i < n; i += 8) {
        long m = (long)(n - i < 8 ? n - i : 8);
        __m256 v = ti__dw256_load(2, src + 2 * i, m, i + 8 < n);
        if (m >= 8) _mm256_storeu_ps(dst + i, v);
        else _mm256_maskstore_ps(dst + i, ti__dw256_mask(m), v);
    }
}

/* ti__split_s2_avx512 (cpu/x86/conv_avx512.c) 8 at a time: a row split into its even and
 * odd columns in one pass; the last columns one by one. */
TI__PRIVATE TI__TARGET_AVX2 void ti__split_s2_avx2(float *ev, float *od, const float *src,
                                                   size_t w) {
    size_t i = 0;
    for (; 2 * i + 16 <= w; i += 8) {
        __m256 a = _mm256_loadu_ps(src + 2 * i), b = _mm256_loadu_ps(src + 2 * i + 8);
        /* a0 a2 b0 b2 | a4 a6 b4 b6, then the 64-bit pairs in order */
        __m256 e = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
        __m256 o = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
        e = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), _MM_SHUFFLE(3, 1, 2, 0)));
        o = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(o), _MM_SHUFFLE(3, 1, 2, 0)));
        _mm256_storeu_ps(ev + i, e);
        _mm256_storeu_ps(od + i, o);
    }
    for (; 2 * i < w; i++) {
        ev[i] = src[2 * i];
        if (2 * i + 1 < w) od[i] = src[2 * i + 1];
    }
}

/* ---- Winograd F(4x4, 3x3) transforms, 8 tiles side by side (cpu/conv_fast.c) -------- */

/* B^T along one axis on 8 lanes, output k stored at o + k * os: the operations of
 * conv_fast.c's ti__wino_bt in its order (the compiler may fuse a product and a sum into one
 * FMA here). Stored here, not returned through an array: that array went through the
 * stack and was copied out again, a fifth of the transform's instructions. */
TI__X86_INLINE TI__TARGET_AVX2 void ti__wino_bt256(__m256 d0, __m256 d1, __m256 d2, __m256 d3,
                                                  __m256 d4, __m256 d5, float *o, size_t os) {
    __m256 four = _mm256_set1_ps(4.0f), five = _mm256_set1_ps(5.0f), two = _mm256_set1_ps(2.0f);
    __m256 a = _mm256_sub_ps(d4, _mm256_mul_ps(four, d2));
    __m256 b = _mm256_sub_ps(d3, _mm256_mul_ps(four, d1));
    __m256 c = _mm256_sub_ps(d4, d2), e = _mm256_mul_ps(two, _mm256_sub_ps(d3, d1));
    _mm256_storeu_ps(o, _mm256_add_ps(_mm256_sub_ps(_mm256_mul_ps(four, d0),
                                                    _mm256_mul_ps(five, d2)), d4));
    _mm256_storeu_ps(o + os, _mm256_add_ps(a, b));
    _mm256_storeu_ps(o + 2 * os, _mm256_sub_ps(a, b));
    _mm256_storeu_ps(o + 3 * os, _mm256_add_ps(c, e));
    _mm256_storeu_ps(o + 4 * os, _mm256_sub_ps(c, e));
    _mm256_storeu_ps(o + 5 * os, _mm256_add_ps(_mm256_sub_ps(_mm256_mul_ps(four, d1),
                                                             _mm256_mul_ps(five, d3)), d5));
}

/* Input transform of 8 tiles of one channel (ti__wino_in_fn): rows[i] is input row i of
 * the tile row from the first tile's left column, 40 floats readable; tile l reads
 * columns 4 l .. 4 l + 5. The rows are combined first (whole vectors), then the columns:
 * each row's stride-4 phases for tiles 0..7 come from a 4 x 4 transpose of the two
 * 128-bit halves [tile l | tile l + 4]. */
TI__PRIVATE TI__TARGET_AVX2 void ti__wino_in8_avx2(const float *const *rows, float *out,
                                                   size_t os) {
    float r[6][40];
    for (int x = 0; x < 40; x += 8)
        ti__wino_bt256(_mm256_loadu_ps(rows[0] + x), _mm256_loadu_ps(rows[1] + x),
                       _mm256_loadu_ps(rows[2] + x), _mm256_loadu_ps(rows[3] + x),
                       _mm256_loadu_ps(rows[4] + x), _mm256_loadu_ps(rows[5] + x), r[0] + x, 40);
    for (int k = 0; k < 6; k++) {
        /* the row's vectors as stored (whole loads: no partial store forwarding), paired
         * into a_l = [floats 4 l .. 4 l + 3 | 4 l + 16 .. 4 l + 19] */
        __m256 x0 = _mm256_loadu_ps(r[k]), x1 = _mm256_loadu_ps(r[k] + 8);
        __m256 x2 = _mm256_loadu_ps(r[k] + 16), x3 = _mm256_loadu_ps(r[k] + 24);
        __m256 x4 = _mm256_loadu_ps(r[k] + 32);
        __m256 a0 = _mm256_permute2f128_ps(x0, x2, 0x20), a1 = _mm256_permute2f128_ps(x0, x2, 0x31);
        __m256 a2 = _mm256_permute2f128_ps(x1, x3, 0x20), a3 = _mm256_permute2f128_ps(x1, x3, 0x31);
        __m256 a4 = _mm256_permute2f128_ps(x2, x4, 0x20);
        __m256 l01 = _mm256_unpacklo_ps(a0, a1), h01 = _mm256_unpackhi_ps(a0, a1);
        __m256 l23 = _mm256_unpacklo_ps(a2, a3), h23 = _mm256_unpackhi_ps(a2, a3);
        __m256 l12 = _mm256_unpacklo_ps(a1, a2), l34 = _mm256_unpacklo_ps(a3, a4);
        ti__wino_bt256(_mm256_shuffle_ps(l01, l23, 0x44), _mm256_shuffle_ps(l01, l23, 0xee),
                       _mm256_shuffle_ps(h01, h23, 0x44), _mm256_shuffle_ps(h01, h23, 0xee),
                       _mm256_shuffle_ps(l12, l34, 0x44), _mm256_shuffle_ps(l12, l34, 0xee),
                       out + (size_t)k * 6 * os, os);
    }
}

/* A^T along one axis on 8 lanes: conv_fast.c's ti__wino_at, same operations and order. */
TI__X86_INLINE TI__TARGET_AVX2 void ti__wino_at256(const __m256 *m, size_t st, __m256 *o,
                                                  size_t ot) {
    __m256 two = _mm256_set1_ps(2.0f), four = _mm256_set1_ps(4.0f), eight = _mm256_set1_ps(8.0f);
    __m256 s12 = _mm256_add_ps(m[st], m[2 * st]), d12 = _mm256_sub_ps(m[st], m[2 * st]);
    __m256 s34 = _mm256_add_ps(m[3 * st], m[4 * st]), d34 = _mm256_sub_ps(m[3 * st], m[4 * st]);
    o[0] = _mm256_add_ps(_mm256_add_ps(m[0], s12), s34);
    o[ot] = _mm256_add_ps(d12, _mm256_mul_ps(two, d34));
    o[2 * ot] = _mm256_add_ps(s12, _mm256_mul_ps(four, s34));
    o[3 * ot] = _mm256_add_ps(_mm256_add_ps(d12, _mm256_mul_ps(eight, d34)), m[5 * st]);
}

/* Output transform of 8 tiles of one channel (ti__wino_out_fn): src + e * es holds the 8
 * tiles' products at position e (< 36); z[(4 i + q) * 8 + l] receives output (i, q) of
 * tile l, plus bias, then max(., 0) when relu (NaN gives 0, as the portable loop). */
TI__PRIVATE TI__TARGET_AVX2 void ti__wino_out8_avx2(const float *src, size_t es, int nv,
                                                    float bias, int relu, float *z) {
    __m256 s[36], r[24], o[16];
    (void)nv; /* all 8 lanes read: MemorySanitizer does not see unset ones through these */
    for (int e = 0; e < 36; e++) s[e] = _mm256_loadu_ps(src + (size_t)e * es);
    for (int i = 0; i < 6; i++) ti__wino_at256(s + i * 6, 1, r + i * 4, 1); /* rows: m A */
    for (int q = 0; q < 4; q++) ti__wino_at256(r + q, 4, o + q, 4);        /* A^T (m A) */
    __m256 vb = _mm256_set1_ps(bias), zero = _mm256_setzero_ps();
    for (int e = 0; e < 16; e++) {
        __m256 v = _mm256_add_ps(o[e], vb);
        if (relu) v = _mm256_max_ps(v, zero);
        _mm256_storeu_ps(z + e * 8, v);
    }
}

/* Stores the tiles of z (ti__wino_put_fn; z as ti__wino_out8_avx2 leaves it): each row i
 * is transposed once, w[g] = [tile g | tile g + 4], each outputs (i, 0..3); group h with
 * row4[h] gets 128-bit lane h of w[0..3] as one row of 16 floats, tile l with dst[l] lane
 * l / 4 of w[l % 4]. */
/* One row of 8 floats to d: with sum d's own added, with relu v < 0 ? 0 : v (max_ps(0, v)
 * keeps v when it is NaN or -0). */
TI__X86_INLINE TI__TARGET_AVX2 void ti__wino_st256(float *d, __m256 v, int sum, int relu) {
    if (sum) v = _mm256_add_ps(v, _mm256_loadu_ps(d));
    if (relu) v = _mm256_max_ps(_mm256_setzero_ps(), v);
    _mm256_storeu_ps(d, v);
}

TI__PRIVATE TI__TARGET_AVX2 void ti__wino_put_avx2(const float *z, float *const *row4,
                                                   float *const *dst, int n, size_t ldy,
                                                   int sum, int relu) {
    for (size_t i = 0; i < 4; i++) {
        const float *zi = z + i * 32; /* outputs (i, 0..3) of the 8 tiles */
        __m256 q0 = _mm256_loadu_ps(zi), q1 = _mm256_loadu_ps(zi + 8);
        __m256 q2 = _mm256_loadu_ps(zi + 16), q3 = _mm256_loadu_ps(zi + 24);
        __m256 l01 = _mm256_unpacklo_ps(q0, q1), h01 = _mm256_unpackhi_ps(q0, q1);
        __m256 l23 = _mm256_unpacklo_ps(q2, q3), h23 = _mm256_unpackhi_ps(q2, q3);
        __m256 w[4];
        w[0] = _mm256_shuffle_ps(l01, l23, 0x44);
        w[1] = _mm256_shuffle_ps(l01, l23, 0xee);
        w[2] = _mm256_shuffle_ps(h01, h23, 0x44);
        w[3] = _mm256_shuffle_ps(h01, h23, 0xee);
        if (row4[0] != NULL) {
            ti__wino_st256(row4[0] + i * ldy, _mm256_permute2f128_ps(w[0], w[1], 0x20), sum, relu);
            ti__wino_st256(row4[0] + i * ldy + 8, _mm256_permute2f128_ps(w[2], w[3], 0x20), sum,
                           relu);
        }
        if (row4[1] != NULL) {
            ti__wino_st256(row4[1] + i * ldy, _mm256_permute2f128_ps(w[0], w[1], 0x31), sum, relu);
            ti__wino_st256(row4[1] + i * ldy + 8, _mm256_permute2f128_ps(w[2], w[3], 0x31), sum,
                           relu);
        }
        for (int l = 0; l < n; l++) {
            if (dst[l] == NULL) continue;
            float *d = dst[l] + i * ldy;
            __m128 t = l < 4 ? _mm256_castps256_ps128(w[l]) : _mm256_extractf128_ps(w[l - 4], 1);
            if (sum) t = _mm_add_ps(t, _mm_loadu_ps(d));
            if (relu) t = _mm_max_ps(_mm_setzero_ps(), t);
            _mm_storeu_ps(d, t);
        }
    }
}

/* The few-channel conv kernel (ti__conv_fewc_fn), as conv_avx512.c's with vectors of 8:
 * the 16 positions are two vectors, and the 16 channels go in groups of at most 6 (12
 * accumulators, two input vectors and a broadcast weight: 15 of the 16 YMM registers), each
 * group running over all the taps (the inputs, in L1, are loaded again for each group;
 * stride 2: two loads and a shuffle a vector, ti__fc256_load). */
#define TI__FC256_X6(S) S(0) S(1) S(2) S(3) S(4) S(5)
/* Stride 2: the even floats of p[0 .. 16) by one in-lane shuffle, in the order 0 1 4 5 | 2 3
 * 6 7; every tap's inputs come in that order, so the sums are put in order once, at the
 * store (ti__fc256_order), not per tap. */
TI__X86_INLINE TI__TARGET_AVX2 __m256 ti__fc256_load(const int S, const float *p) {
    if (S == 1) return _mm256_loadu_ps(p);
    return _mm256_shuffle_ps(_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8), _MM_SHUFFLE(2, 0, 2, 0));
}
TI__X86_INLINE TI__TARGET_AVX2 __m256 ti__fc256_order(const int S, __m256 v) {
    if (S == 1) return v;
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(v), _MM_SHUFFLE(3, 1, 2, 0)));
}
/* Channels m0 .. m0 + G - 1 (G <= 6, a constant once inlined) of ti__fewc256's block */
TI__X86_INLINE TI__TARGET_AVX2 void ti__fc256_group(const int S, const int G, float *y,
                                                    size_t ldy, int mv, int np, const float *x,
                                                    const int32_t *off, int taps, const float *w,
                                                    const float *bias, int clamp, float lo,
                                                    float hi) {
#define TI__FC256_INIT(m) __m256 a##m = _mm256_setzero_ps(), b##m = a##m;               \
    if (G > m) a##m = b##m = _mm256_set1_ps(bias[m]);
    TI__FC256_X6(TI__FC256_INIT)
#undef TI__FC256_INIT
    for (int t = 0; t < taps; t++) {
        const float *xt = x + off[t], *wt = w + 16 * t;
        __m256 x0 = ti__fc256_load(S, xt), x1 = ti__fc256_load(S, xt + 8 * S);
#define TI__FC256_FMA(m)                                                                     \
    if (G > m) {                                                                             \
        __m256 wv = _mm256_broadcast_ss(wt + m);                                             \
        a##m = _mm256_fmadd_ps(wv, x0, a##m);                                                \
        b##m = _mm256_fmadd_ps(wv, x1, b##m);                                                \
    }
        TI__FC256_X6(TI__FC256_FMA)
#undef TI__FC256_FMA
    }
    __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
    __m256i k0 = ti__dw256_mask(np), k1 = ti__dw256_mask(np - 8);
#define TI__FC256_STORE(m)                                                                   \
    if (G > m && m < mv) {                                                                   \
        __m256 r0 = ti__fc256_order(S, a##m), r1 = ti__fc256_order(S, b##m);                 \
        if (clamp == 1) {                                                                    \
            r0 = _mm256_min_ps(_mm256_max_ps(r0, vlo), vhi);                                 \
            r1 = _mm256_min_ps(_mm256_max_ps(r1, vlo), vhi);                                 \
        } else if (clamp == 2) { /* HardSwish as ti__act256 */                               \
            r0 = ti__act256(TI__ACT_HARD_SWISH, r0, vlo, vhi);                               \
            r1 = ti__act256(TI__ACT_HARD_SWISH, r1, vlo, vhi);                               \
        }                                                                                    \
        if (np == 16) {                                                                      \
            _mm256_storeu_ps(y + m * ldy, r0);                                               \
            _mm256_storeu_ps(y + m * ldy + 8, r1);                                           \
        } else {                                                                             \
            _mm256_maskstore_ps(y + m * ldy, k0, r0);                                        \
            _mm256_maskstore_ps(y + m * ldy + 8, k1, r1);                                    \
        }                                                                                    \
    }
    TI__FC256_X6(TI__FC256_STORE)
#undef TI__FC256_STORE
}
#undef TI__FC256_X6
TI__X86_INLINE TI__TARGET_AVX2 void ti__fewc256(const int S, float *y, size_t ldy, int mv,
                                                int np, const float *x, const int32_t *off,
                                                int taps, const float *w, const float *bias,
                                                int clamp, float lo, float hi) {
    ti__fc256_group(S, 6, y, ldy, mv, np, x, off, taps, w, bias, clamp, lo, hi);
    if (mv > 6)
        ti__fc256_group(S, 6, y + 6 * ldy, ldy, mv - 6, np, x, off, taps, w + 6, bias + 6, clamp,
                        lo, hi);
    if (mv > 12)
        ti__fc256_group(S, 4, y + 12 * ldy, ldy, mv - 12, np, x, off, taps, w + 12, bias + 12,
                        clamp, lo, hi);
}
static __attribute__((noinline, unused)) TI__TARGET_AVX2 void
ti__fewc256_s1(float *y, size_t ldy, int mv, int np, const float *x, const int32_t *off,
               int taps, const float *w, const float *bias, int clamp, float lo, float hi) {
    ti__fewc256(1, y, ldy, mv, np, x, off, taps, w, bias, clamp, lo, hi);
}
static __attribute__((noinline, unused)) TI__TARGET_AVX2 void
ti__fewc256_s2(float *y, size_t ldy, int mv, int np, const float *x, const int32_t *off,
               int taps, const float *w, const float *bias, int clamp, float lo, float hi) {
    ti__fewc256(2, y, ldy, mv, np, x, off, taps, w, bias, clamp, lo, hi);
}

/* Lanes of columns c .. c + 7 inside a row of W floats, as a maskload mask. */
TI__X86_INLINE TI__TARGET_AVX2 __m256i ti__dw256_rmask(int64_t c, int64_t W) {
    int64_t lo = c < 0 ? -c : 0, hi = W - c; /* lanes [lo, hi) */
    return _mm256_andnot_si256(ti__dw256_mask((long)TI__MIN(lo, (int64_t)8)),
                               ti__dw256_mask((long)TI__MIN(hi, (int64_t)8)));
}
/* The stride-1 row kernel (ti__dw_rows_fn), as conv_avx512.c's with vectors of 8 and no
 * lane shifts: tap q of output vector v (outputs 8 v ..) is an unaligned load of input
 * columns 8 v - pl + q .. of each input row in place (masked to the row on a row's first
 * and last vectors, EDGE). Up to four output rows at a time, so each input row's loads
 * serve all the output rows it feeds: K loads an input row for K FMAs an output row it
 * feeds. The last vector of a row not a multiple of 8 is the row's last 8 outputs again
 * (the same bits twice): no masked store. One chain per output, taps in order from the
 * bias, as the flat path, so the same bits but for the sign of a zero sum: padding rows are
 * skipped where the flat path adds w * 0 (a bias of -0 with every product 0 stays -0).
 * The flat path copies each plane's rows into its padded buffer and the outputs back out
 * (ti__dw256_copy 5.6 % of MobileNetV2 at 1 thread, perf, where its loads from L2 wait).
 * Zen 3, rows of 56 outputs or more (ti__dw_isa.rows_min): MobileNetV2's 32 @ 112 in the
 * model 0.254 -> 0.183 ms, 144 @ 56 0.252 -> 0.203 (per-node minima, bench/ab.py); below
 * that the edge vectors' masked loads lose (bench/conv.c, in cache: 192 @ 28 0.086 ->
 * 0.108, 384 @ 14 0.054 -> 0.065, 5x5 672 @ 14 0.188 -> 0.222). */
#define TI__DWS1_FMA(k, q)                                                                   \
    if (R > k && r >= k && r - k < K)                                                        \
        a##k = _mm256_fmadd_ps(wv[(r - k) * K + q], t, a##k);
#define TI__DWS1_TAP(q)                                                                      \
    if (K > q) {                                                                             \
        __m256 t = EDGE ? _mm256_maskload_ps(p + s + q, m##q) : _mm256_loadu_ps(p + s + q);   \
        TI__DWS1_FMA(0, q) TI__DWS1_FMA(1, q) TI__DWS1_FMA(2, q) TI__DWS1_FMA(3, q)          \
    }
/* Output vector i .. i + 7 of R rows (EDGE: its loads masked to the row, its store to n). */
TI__X86_INLINE TI__TARGET_AVX2 void ti__dws1_vec256(const int K, const int R, const int EDGE,
                                                    float *y, size_t ldy, size_t n, size_t i,
                                                    const float *const *x, int64_t W,
                                                    int64_t pl, const __m256 *wv, __m256 vb,
                                                    int clamp, __m256 vlo, __m256 vhi) {
    int64_t s = (int64_t)i - pl;
    __m256i m0 = _mm256_setzero_si256(), m1 = m0, m2 = m0, m3 = m0, m4 = m0;
    if (EDGE) {
        m0 = ti__dw256_rmask(s, W), m1 = ti__dw256_rmask(s + 1, W);
        m2 = ti__dw256_rmask(s + 2, W), m3 = ti__dw256_rmask(s + 3, W);
        m4 = ti__dw256_rmask(s + 4, W);
    }
    __m256 a0 = vb, a1 = vb, a2 = vb, a3 = vb;
    TI__UNROLL8 for (int r = 0; r < R + K - 1; r++) {
        const float *p = x[r];
        if (p == NULL) continue; /* a padding row: its taps would add zeros */
        TI__DWS1_TAP(0) TI__DWS1_TAP(1) TI__DWS1_TAP(2) TI__DWS1_TAP(3) TI__DWS1_TAP(4)
    }
#define TI__DWS1_STORE(k)                                                                    \
    if (R > k) {                                                                             \
        __m256 o = clamp ? _mm256_min_ps(_mm256_max_ps(a##k, vlo), vhi) : a##k;              \
        if (EDGE && n - i < 8) _mm256_maskstore_ps(y + k * ldy + i, sm, o);                   \
        else _mm256_storeu_ps(y + k * ldy + i, o);                                           \
    }
    __m256i sm = ti__dw256_mask((long)(n - i));
    TI__DWS1_STORE(0) TI__DWS1_STORE(1) TI__DWS1_STORE(2) TI__DWS1_STORE(3)
#undef TI__DWS1_STORE
}
#undef TI__DWS1_TAP
#undef TI__DWS1_FMA
/* The vectors whose K loads lie inside the row (8 v - pl >= 0, 8 v - pl + 7 + K - 1 < W,
 * whole outputs) unmasked, the others masked. */
TI__X86_INLINE TI__TARGET_AVX2 void ti__dws1_rows256(const int K, const int R, float *y,
                                                     size_t ldy, size_t n,
                                                     const float *const *x, int64_t W,
                                                     int64_t pl, const float *w, __m256 vb,
                                                     int clamp, __m256 vlo, __m256 vhi) {
    __m256 wv[25]; /* the weights broadcast once a call */
    for (int t = 0; t < K * K; t++) wv[t] = _mm256_set1_ps(w[t]);
    for (size_t i = 0; i < n; i += 8) {
        if (n - i < 8 && n >= 8) i = n - 8; /* the last 8 again: no masked store */
        int64_t s = (int64_t)i - pl;
        if (s >= 0 && s + 7 + K - 1 < W && n - i >= 8)
            ti__dws1_vec256(K, R, 0, y, ldy, n, i, x, W, pl, wv, vb, clamp, vlo, vhi);
        else
            ti__dws1_vec256(K, R, 1, y, ldy, n, i, x, W, pl, wv, vb, clamp, vlo, vhi);
    }
}
#define TI__DWS1_CALL(k, r) ti__dws1_rows256(k, r, y, ldy, n, x, W, pl, w, vb, clamp, vlo, vhi)
static __attribute__((noinline, unused)) TI__TARGET_AVX2 void
ti__dw256_s1rows(float *y, size_t ldy, int K, int R, size_t n, const float *const *x,
                 int64_t W, int64_t pl, const float *w, float bias, int clamp, float lo,
                 float hi) {
    __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi), vb = _mm256_set1_ps(bias);
    TI__DWS1_DISPATCH(TI__DWS1_CALL);
}
#undef TI__DWS1_CALL

/* The stride-2 row kernel (ti__dw_rows_fn), 3x3, as conv_avx512.c's with vectors of 8:
 * output vector v (outputs 8 v ..) takes input columns 16 v .. 16 v + 15 of each input row
 * in place, two loads (masked past the row's end: those lanes read nothing and give zero)
 * deinterleaved by a shuffle and a 64-bit lane permute each into the even columns E and the
 * odd ones O. Tap q reads column 2 o + d, d = q - pl: E (d 0), O (d 1), or one of them
 * moved a lane by a permute and a blend: up (d -2, -1: the lane before from the previous
 * vector's, carried) or down (d 2: column 16 v + 16, loaded alone). Two output rows at a
 * time share their middle input row. One chain per output, taps in order from the bias. The
 * flat path splits each input row into phase planes first; on rows of 56 outputs and more
 * (ti__dw_isa.rows_min) this is faster, below it loses (cpu/conv_fast.c's row paths). */
#define TI__DWS2_TAP256(q)                                                                   \
    {                                                                                        \
        const int d = q - PL;                                                                \
        __m256 t = d == -2  ? _mm256_blend_ps(re, ce[r], 0x01)                               \
                   : d == -1 ? _mm256_blend_ps(ro, co[r], 0x01)                              \
                   : d == 0  ? e                                                             \
                   : d == 1  ? o                                                             \
                             : _mm256_blend_ps(ti__dws2_rot256(e, 1), ne, 0x80);             \
        if (r < 3) a = _mm256_fmadd_ps(wv[r * 3 + q], t, a);                                  \
        if (R > 1 && r >= 2) b = _mm256_fmadd_ps(wv[(r - 2) * 3 + q], t, b);                  \
    }
/* x's lanes rotated: lane l takes lane (l + k) % 8. */
TI__X86_INLINE TI__TARGET_AVX2 __m256 ti__dws2_rot256(__m256 x, int k) {
    return _mm256_permutevar8x32_ps(
        x, _mm256_and_si256(_mm256_add_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                                             _mm256_set1_epi32(k)),
                            _mm256_set1_epi32(7)));
}
TI__X86_INLINE TI__TARGET_AVX2 void ti__dws2_rows256(const int R, const int PL, float *y,
                                                     size_t ldy, size_t n,
                                                     const float *const *x, int64_t W,
                                                     const float *w, __m256 vb, int clamp,
                                                     __m256 vlo, __m256 vhi) {
    __m256 wv[9]; /* the weights broadcast once a call */
    for (int t = 0; t < 9; t++) wv[t] = _mm256_set1_ps(w[t]);
    /* each row's previous E and O rotated up a lane (lane 0: their last; zero before the
     * first vector: the padding) */
    __m256 ce[5], co[5];
    for (int r = 0; r < 5; r++) ce[r] = co[r] = _mm256_setzero_ps();
    for (size_t i = 0; i < n; i += 8) {
        int64_t s = 2 * (int64_t)i, left = W - s; /* the row's floats from column s */
        __m256i ma = _mm256_setzero_si256(), mb = ma; /* only where the loads pass the row */
        if (left < 16) ma = ti__dw256_mask((long)left), mb = ti__dw256_mask((long)(left - 8));
        __m256 a = vb, b = vb;
        TI__UNROLL5 for (int r = 0; r < 2 * R + 1; r++) {
            const float *p = x[r];
            if (p == NULL) continue; /* a padding row: its taps would add zeros */
            p += s;
            __m256 la = left >= 16 ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, ma);
            __m256 lb = left >= 16 ? _mm256_loadu_ps(p + 8) : _mm256_maskload_ps(p + 8, mb);
            /* a0 a2 b0 b2 | a4 a6 b4 b6, then 64-bit lanes 0 2 1 3 (E); the odd ones (O) */
            __m256 e = _mm256_castpd_ps(_mm256_permute4x64_pd(
                _mm256_castps_pd(_mm256_shuffle_ps(la, lb, _MM_SHUFFLE(2, 0, 2, 0))),
                _MM_SHUFFLE(3, 1, 2, 0)));
            __m256 o = _mm256_castpd_ps(_mm256_permute4x64_pd(
                _mm256_castps_pd(_mm256_shuffle_ps(la, lb, _MM_SHUFFLE(3, 1, 3, 1))),
                _MM_SHUFFLE(3, 1, 2, 0)));
            __m256 ne = _mm256_setzero_ps(), re = e, ro = o; /* re, ro: E and O up a lane */
            if (PL == 0 && left > 16) ne = _mm256_broadcast_ss(p + 16);
            if (PL >= 2) re = ti__dws2_rot256(e, 7);
            if (PL >= 1) ro = ti__dws2_rot256(o, 7);
            TI__DWS2_TAP256(0) TI__DWS2_TAP256(1) TI__DWS2_TAP256(2)
            ce[r] = re; /* lane 0: this vector's last, for the next one's d -2 and -1 */
            co[r] = ro;
        }
        if (clamp) {
            a = _mm256_min_ps(_mm256_max_ps(a, vlo), vhi);
            b = _mm256_min_ps(_mm256_max_ps(b, vlo), vhi);
        }
        if (n - i >= 8) {
            _mm256_storeu_ps(y + i, a);
            if (R > 1) _mm256_storeu_ps(y + ldy + i, b);
        } else {
            __m256i sm = ti__dw256_mask((long)(n - i));
            _mm256_maskstore_ps(y + i, sm, a);
            if (R > 1) _mm256_maskstore_ps(y + ldy + i, sm, b);
        }
    }
}
#undef TI__DWS2_TAP256
#define TI__DWS2_CALL256(R, PL) ti__dws2_rows256(R, PL, y, ldy, n, x, W, w, vb, clamp, vlo, vhi)
static __attribute__((noinline, unused)) TI__TARGET_AVX2 void
ti__dw256_s2rows(float *y, size_t ldy, int K, int R, size_t n, const float *const *x,
                 int64_t W, int64_t pl, const float *w, float bias, int clamp, float lo,
                 float hi) {
    __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi), vb = _mm256_set1_ps(bias);
    (void)K; /* 3, the only size ti__conv_dw_rows_ok gives it */
    TI__DWS2_DISPATCH(TI__DWS2_CALL256);
}
#undef TI__DWS2_CALL256

/* ---- the lane path (ti__dw_lanes_fn), 8 planes a call ----
 * As conv_avx512.c's: the 8 planes' inputs transposed (8 x 8 blocks in registers) into a
 * buffer of padded positions of 8 floats, up to 7 or 8 outputs of a row in registers, one FMA
 * a tap an output with the tap's 8 weights as one vector, the outputs transposed back. Whole
 * loads and stores but for a plane's last block of positions (masked ones are slow on AMD's
 * Zen 2 and 3, conv_avx2.c's row kernels say). */
TI__X86_INLINE TI__TARGET_AVX2 void ti__dw256_transpose8(__m256 *r) {
    __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
    __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
    __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
    __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
    /* s_e: column e of rows 0-3 | column e + 4 of rows 0-3 (s4..s7: rows 4-7) */
    __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    __m256 s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    __m256 s4 = _mm256_shuffle_ps(t4, t6, 0x44), s5 = _mm256_shuffle_ps(t4, t6, 0xEE);
    __m256 s6 = _mm256_shuffle_ps(t5, t7, 0x44), s7 = _mm256_shuffle_ps(t5, t7, 0xEE);
    r[0] = _mm256_permute2f128_ps(s0, s4, 0x20), r[4] = _mm256_permute2f128_ps(s0, s4, 0x31);
    r[1] = _mm256_permute2f128_ps(s1, s5, 0x20), r[5] = _mm256_permute2f128_ps(s1, s5, 0x31);
    r[2] = _mm256_permute2f128_ps(s2, s6, 0x20), r[6] = _mm256_permute2f128_ps(s2, s6, 0x31);
    r[3] = _mm256_permute2f128_ps(s3, s7, 0x20), r[7] = _mm256_permute2f128_ps(s3, s7, 0x31);
}

#define TI__DWL256_X8(S) S(0) S(1) S(2) S(3) S(4) S(5) S(6) S(7)
TI__X86_INLINE TI__TARGET_AVX2 void ti__dwl256_rows(const int K, const int S, const int NA,
                                                    const ti__dw_lane_geo *g, const float *in,
                                                    const float *wb, __m256 vb, int clamp,
                                                    __m256 vlo, __m256 vhi, float *out) {
    size_t wp = (size_t)g->Wp, ow = (size_t)g->OW;
    for (size_t oy = 0; oy < (size_t)g->OH; oy++)
        for (size_t ox = 0; ox < ow; ox += (size_t)NA) {
#define TI__DWL_INIT(i) __m256 a##i = vb;
            TI__DWL256_X8(TI__DWL_INIT)
#undef TI__DWL_INIT
            const float *r0 = in + (oy * (size_t)S * wp + ox * (size_t)S) * 8;
            TI__UNROLL5 for (int ky = 0; ky < K; ky++) {
                const float *r = r0 + (size_t)ky * wp * 8;
                TI__UNROLL5 for (int kx = 0; kx < K; kx++) {
                    __m256 w = _mm256_load_ps(wb + (ky * K + kx) * 8);
                    const float *p = r + kx * 8;
#define TI__DWL_FMA(i)                                                                       \
    if (NA > i) a##i = _mm256_fmadd_ps(w, _mm256_load_ps(p + (i) * S * 8), a##i);
                    TI__DWL256_X8(TI__DWL_FMA)
#undef TI__DWL_FMA
                }
            }
            float *o = out + (oy * ow + ox) * 8;
            size_t n = ow - ox;
#define TI__DWL_STORE(i)                                                                     \
    if (NA > (i) && n > (i))                                                                 \
        _mm256_store_ps(o + (i) * 8, clamp ? _mm256_min_ps(_mm256_max_ps(a##i, vlo), vhi) : a##i);
            TI__DWL256_X8(TI__DWL_STORE)
#undef TI__DWL_STORE
        }
}

/* 8 floats of plane c at q0 (fewer than 8 left: masked) */
#define TI__DWL256_LOAD(c, base, q0, n)                                                       \
    ((q0) + 8 <= (n) ? _mm256_loadu_ps((base) + (c) * sp + (q0))                             \
                     : _mm256_maskload_ps((base) + (c) * sp + (q0),                           \
                                          ti__dw256_mask((long)((n) - (q0)))))

static __attribute__((noinline, unused)) TI__TARGET_AVX2 void
ti__dw256_lanes(const ti__dw_lane_geo *g, float *y, const float *x, const float *w,
                const float *bias, int clamp, float lo, float hi, float *buf) {
    float *in = buf, *out = buf + TI__DWL_IN_FLOATS, *wb = out + TI__DWL_OUT_FLOATS;
    size_t kk = (size_t)(g->K * g->K), n = (size_t)(g->OH * g->OW), sp = kk;
    __m256 v[8];
    for (size_t t0 = 0; t0 < kk; t0 += 8) { /* the taps' weights, a vector of 8 planes each */
        TI__UNROLL8 for (size_t c = 0; c < 8; c++) v[c] = TI__DWL256_LOAD(c, w, t0, kk);
        ti__dw256_transpose8(v);
        for (size_t j = 0; j < 8 && t0 + j < kk; j++) _mm256_store_ps(wb + (t0 + j) * 8, v[j]);
    }
    /* the padded input: position (r, c) at in + (r Wp + c) 8, zero outside the map */
    const __m256 z = _mm256_setzero_ps();
    int64_t Wp = g->Wp, pt = g->pt, pl = g->pl, W = g->W;
    int64_t r1 = TI__MIN(g->Hp, pt + g->H), c1 = TI__MIN(Wp, pl + W);
    ti__dwl_zero_pad(g, in, 8);
    if (r1 > pt && c1 > pl) {
        size_t m = (size_t)((r1 - pt) * W);
        int64_t iy = 0, ix = 0;
        sp = g->in_sp;
        for (size_t q0 = 0; q0 < m; q0 += 8) {
            TI__UNROLL8 for (size_t c = 0; c < 8; c++) v[c] = TI__DWL256_LOAD(c, x, q0, m);
            ti__dw256_transpose8(v);
            TI__UNROLL8 for (size_t j = 0; j < 8; j++) {
                if (q0 + j >= m) break;
                if (pl + ix < c1)
                    _mm256_store_ps(in + (size_t)((pt + iy) * Wp + pl + ix) * 8, v[j]);
                if (++ix == W) ix = 0, iy++;
            }
        }
    }
    __m256 vb = bias != NULL ? _mm256_loadu_ps(bias) : _mm256_setzero_ps();
    __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
#define TI__DWL_CALL(k, s, na) ti__dwl256_rows(k, s, na, g, in, wb, vb, clamp, vlo, vhi, out)
    TI__DWL_DISPATCH(TI__DWL_CALL);
#undef TI__DWL_CALL
    for (size_t p0 = 0; p0 < n; p0 += 8) { /* the outputs back into the planes */
        size_t h = n - p0 < 8 ? n - p0 : 8;
        TI__UNROLL8 for (size_t r = 0; r < 8; r++)
            v[r] = r < h ? _mm256_load_ps(out + (p0 + r) * 8) : z;
        ti__dw256_transpose8(v);
        TI__UNROLL8 for (size_t c = 0; c < 8; c++) {
            if (h == 8) _mm256_storeu_ps(y + c * g->out_sp + p0, v[c]);
            else _mm256_maskstore_ps(y + c * g->out_sp + p0, ti__dw256_mask((long)h), v[c]);
        }
    }
}
#undef TI__DWL256_LOAD
#undef TI__DWL256_X8

TI__PRIVATE const ti__dw_isa *ti__dw_avx2_isa(void) {
    static const ti__dw_isa isa = {TI__ISA_AVX2,
                                   {{ti__dw256_k3s1, ti__dw256_k3s2},
                                    {ti__dw256_k5s1, ti__dw256_k5s2}},
                                   {ti__mp256_s1, ti__mp256_s2},
                                   ti__dw256_taps, ti__dw256_copy, ti__dw256_split,
                                   ti__dw256_max, ti__ssum_avx2, NULL, ti__dw256_lanes,
                                   {ti__fewc256_s1, ti__fewc256_s2},
                                   {ti__dw256_s1rows, ti__dw256_s2rows},
                                   ti__mp256_k3s2, 56, 8, 196, 16, 0};
    return &isa;
}

TI__PRIVATE const ti__wino_fns *ti__wino_avx2_fns(void) {
    static const ti__wino_fns fns = {8, ti__wino_in8_avx2, ti__wino_out8_avx2,
                                     ti__wino_put_avx2};
    return &fns;
}
#endif /* TI__X86_SIMD */
