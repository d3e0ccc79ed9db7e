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

/* Transposes the 16 x 16 block x (x[r] holds row r) into u (u[q] holds column q): pairs of
 * rows interleaved, then quads, then the 128-bit lanes twice. x is overwritten. Here for the
 * lane path below and for gemm_avx512.c's transposed store and A packing (after this file). */
TI__X86_INLINE TI__TARGET_AVX512 void ti__k512_transpose16(__m512 *x, __m512 *u) {
    /* unrolled, so that x and u stay in registers (as loops, the lane path spent a third of its
     * time storing and reloading them) */
    TI__UNROLL8 for (int i = 0; i < 8; i++) { /* lane L: rows 2i, 2i + 1, columns 4L .. 4L + 3 */
        u[2 * i] = _mm512_unpacklo_ps(x[2 * i], x[2 * i + 1]);
        u[2 * i + 1] = _mm512_unpackhi_ps(x[2 * i], x[2 * i + 1]);
    }
    TI__UNROLL8 for (int i = 0; i < 4; i++) { /* x[4i + e], lane L: rows 4i .. 4i + 3, col 4L + e */
        x[4 * i] = _mm512_shuffle_ps(u[4 * i], u[4 * i + 2], 0x44);
        x[4 * i + 1] = _mm512_shuffle_ps(u[4 * i], u[4 * i + 2], 0xEE);
        x[4 * i + 2] = _mm512_shuffle_ps(u[4 * i + 1], u[4 * i + 3], 0x44);
        x[4 * i + 3] = _mm512_shuffle_ps(u[4 * i + 1], u[4 * i + 3], 0xEE);
    }
    TI__UNROLL8 for (int e = 0; e < 4; e++) { /* column 4L + e: lane L of x[e], x[4 + e], .. */
        __m512 a = _mm512_shuffle_f32x4(x[e], x[4 + e], 0x88);
        __m512 b = _mm512_shuffle_f32x4(x[e], x[4 + e], 0xDD);
        __m512 g = _mm512_shuffle_f32x4(x[8 + e], x[12 + e], 0x88);
        __m512 d = _mm512_shuffle_f32x4(x[8 + e], x[12 + e], 0xDD);
        u[e] = _mm512_shuffle_f32x4(a, g, 0x88);
        u[8 + e] = _mm512_shuffle_f32x4(a, g, 0xDD);
        u[4 + e] = _mm512_shuffle_f32x4(b, d, 0x88);
        u[12 + e] = _mm512_shuffle_f32x4(b, d, 0xDD);
    }
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
/* the NV sums a0.. (clamped when asked) to y + i: the end of both block kernels */
#define TI__DW512_STORE(v)                                                                   \
    if (NV > v) _mm512_storeu_ps(y + i + 16 * v, clamp ? ti__dw512_clamp(a##v, vlo, vhi) : a##v);
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
    TI__DW512_X8(TI__DW512_STORE)
}
/* As ti__dw512_block when the K taps of each kernel row are K adjacent floats (stride 1):
 * per kernel row NV + 1 loads, and the vectors shifted by q floats made from two adjacent
 * ones (valignd), where each tap's unaligned load of each output vector split two cache
 * lines K - 1 times in K (loads were the limit: a 3x3 depthwise conv at 112 x 112 took 3x
 * its FMA time, perf; 0.17 -> 0.15 ms, tinyinfer-run, 1 thread). The same FMAs in the same
 * order, so the same bits; reads up to 15 floats past the row's last tap's n, inside the
 * flat buffer's slack. At stride 2 the same with the phase planes' two runs a row was
 * slower (perf samples in the kernel, 1.2x), so that keeps ti__dw512_block. */
#define TI__DW512_SH(lo_, hi_, sh)                                                           \
    ((sh) == 0 ? lo_ : _mm512_castsi512_ps(_mm512_alignr_epi32(                                \
                           _mm512_castps_si512(hi_), _mm512_castps_si512(lo_), (sh))))
#define TI__DW512_LOADS(l, p)                                                                \
    __m512 l##0 = _mm512_loadu_ps(p), l##1 = _mm512_loadu_ps(p + 16);                        \
    __m512 l##2 = NV > 1 ? _mm512_loadu_ps(p + 32) : l##1;                                   \
    __m512 l##3 = NV > 2 ? _mm512_loadu_ps(p + 48) : l##1;                                   \
    __m512 l##4 = NV > 3 ? _mm512_loadu_ps(p + 64) : l##1;                                   \
    __m512 l##5 = NV > 4 ? _mm512_loadu_ps(p + 80) : l##1;                                   \
    __m512 l##6 = NV > 5 ? _mm512_loadu_ps(p + 96) : l##1;                                   \
    __m512 l##7 = NV > 6 ? _mm512_loadu_ps(p + 112) : l##1;                                  \
    __m512 l##8 = NV > 7 ? _mm512_loadu_ps(p + 128) : l##1;
#define TI__DW512_RFMA(v, l, v1, sh)                                                         \
    if (NV > v) a##v = _mm512_fmadd_ps(wv, TI__DW512_SH(l##v, l##v1, sh), a##v);
/* tap q of the row: run l shifted by sh floats */
#define TI__DW512_TAP(q, l, sh)                                                              \
    if (K > q) {                                                                             \
        __m512 wv = _mm512_set1_ps(w[r * K + q]);                                            \
        TI__DW512_RFMA(0, l, 1, sh) TI__DW512_RFMA(1, l, 2, sh) TI__DW512_RFMA(2, l, 3, sh)  \
        TI__DW512_RFMA(3, l, 4, sh) TI__DW512_RFMA(4, l, 5, sh) TI__DW512_RFMA(5, l, 6, sh)  \
        TI__DW512_RFMA(6, l, 7, sh) TI__DW512_RFMA(7, l, 8, sh)                              \
    }
TI__X86_INLINE TI__TARGET_AVX512 void ti__dw512_block_rows(const int NV, const int K,
                                                           float *y, size_t i,
                                                           const float *const *x,
                                                           const float *w, __m512 vb, int clamp,
                                                           __m512 vlo, __m512 vhi) {
    __m512 a0 = vb, a1 = vb, a2 = vb, a3 = vb, a4 = vb, a5 = vb, a6 = vb, a7 = vb;
    for (int r = 0; r < K; r++) {
        const float *p = x[r * K] + i;
        TI__DW512_LOADS(e, p)
        TI__DW512_TAP(0, e, 0) TI__DW512_TAP(1, e, 1) TI__DW512_TAP(2, e, 2)
        TI__DW512_TAP(3, e, 3) TI__DW512_TAP(4, e, 4)
    }
    TI__DW512_X8(TI__DW512_STORE)
}
#undef TI__DW512_STORE
#undef TI__DW512_X8
#undef TI__DW512_TAP
#undef TI__DW512_RFMA
#undef TI__DW512_LOADS
#undef TI__DW512_SH
/* K (3 or 5) when the taps are K rows of K adjacent floats (ti__dw512_block_rows), else 0. */
TI__X86_INLINE int ti__dw512_rows_k(const float *const *x, int taps) {
    int K = taps == 9 ? 3 : taps == 25 ? 5 : 0;
    for (int t = 0; K > 0 && t < taps; t++)
        if (x[t] != x[t / K * K] + t % K) K = 0;
    return K;
}
static __attribute__((noinline, unused)) TI__TARGET_AVX512 void
ti__dw512_taps(float *y, size_t n, const float *const *x, const float *w, int taps, float bias,
               int clamp, float lo, float hi) {
    __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi), vb = _mm512_set1_ps(bias);
    size_t i = 0;
    int K = ti__dw512_rows_k(x, taps);
#define TI__DW512_ROWS(k)                                                                    \
    if (K == k) {                                                                            \
        for (; i + 128 <= n; i += 128) ti__dw512_block_rows(8, k, y, i, x, w, vb, clamp, vlo, vhi); \
        for (; i < n; i += 16) ti__dw512_block_rows(1, k, y, i, x, w, vb, clamp, vlo, vhi);  \
        return;                                                                              \
    }
    TI__DW512_ROWS(3) TI__DW512_ROWS(5)
#undef TI__DW512_ROWS
    for (; i + 128 <= n; i += 128) ti__dw512_block(8, y, i, x, w, taps, vb, clamp, vlo, vhi);
    for (; i + 64 <= n; i += 64) ti__dw512_block(4, y, i, x, w, taps, vb, clamp, vlo, vhi);
    for (; i < n; i += 16) ti__dw512_block(1, y, i, x, w, taps, vb, clamp, vlo, vhi);
}

/* The small-plane kernel (ti__dw_small_fn): four vectors of 16 outputs at a time, then
 * one; every tap a masked load (lanes in the padding read nothing and give zero), one
 * chain per output, taps in order, as the flat kernels, so the same bits. */
#define TI__DWS512_X4(S) S(0) S(1) S(2) S(3)
TI__X86_INLINE TI__TARGET_AVX512 void ti__dws512_block(const int NV, float *y, size_t n,
                                                       size_t v, const float *x,
                                                       const int32_t *off, const uint16_t *mask,
                                                       const float *w, int taps, __m512 vb,
                                                       int clamp, __m512 vlo, __m512 vhi) {
    __m512 a0 = vb, a1 = vb, a2 = vb, a3 = vb;
    const uint16_t *m = mask + v * (size_t)taps;
    const float *p = x + 16 * v;
    for (int t = 0; t < taps; t++) {
        __m512 wv = _mm512_set1_ps(w[t]);
        const float *pt = p + off[t];
#define TI__DWS512_FMA(u)                                                                    \
    if (NV > u)                                                                              \
        a##u = _mm512_fmadd_ps(wv, _mm512_maskz_loadu_ps(m[u * taps + t], pt + 16 * u), a##u);
        TI__DWS512_X4(TI__DWS512_FMA)
#undef TI__DWS512_FMA
    }
#define TI__DWS512_STORE(u)                                                                  \
    if (NV > u) {                                                                            \
        __m512 r = clamp ? ti__dw512_clamp(a##u, vlo, vhi) : a##u;                           \
        size_t i = 16 * (v + u);                                                             \
        if (i + 16 <= n) _mm512_storeu_ps(y + i, r);                                         \
        else _mm512_mask_storeu_ps(y + i, ti__dw512_mask((long)(n - i)), r);                 \
    }
    TI__DWS512_X4(TI__DWS512_STORE)
#undef TI__DWS512_STORE
}
#undef TI__DWS512_X4
static __attribute__((noinline, unused)) TI__TARGET_AVX512 void
ti__dw512_small(float *y, size_t n, const float *x, const int32_t *off, const uint16_t *mask,
                const float *w, int taps, float bias, int clamp, float lo, float hi) {
    __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi), vb = _mm512_set1_ps(bias);
    size_t nv = (n + 15) / 16, v = 0;
    for (; v + 4 <= nv; v += 4)
        ti__dws512_block(4, y, n, v, x, off, mask, w, taps, vb, clamp, vlo, vhi);
    for (; v < nv; v++) ti__dws512_block(1, y, n, v, x, off, mask, w, taps, vb, clamp, vlo, vhi);
}

/* The few-channel conv kernel (ti__conv_fewc_fn): 16 output channels of up to 64 positions.
 * Per tap one vector of inputs a 16 positions (stride 2: two loads deinterleaved), then an
 * FMA into each channel with its weight broadcast. The im2col path copied every tap's
 * inputs to a tile and packed them for the GEMM: with 27 products per output (a 3-channel
 * 3x3 stem conv) that was a third of its time (perf). */
#define TI__FC512_X8(S) S(0) S(1) S(2) S(3) S(4) S(5) S(6) S(7)
#define TI__FC512_X16(S) TI__FC512_X8(S) S(8) S(9) S(10) S(11) S(12) S(13) S(14) S(15)
TI__X86_INLINE TI__TARGET_AVX512 __m512 ti__fc512_load(const int S, const float *p) {
    __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    if (S == 1) return _mm512_loadu_ps(p);
    return _mm512_permutex2var_ps(_mm512_loadu_ps(p), even, _mm512_loadu_ps(p + 16));
}
/* A sum's activation by ti__conv_fewc_fn's clamp: 1 the clamp, 2 HardSwish as ti__act512. */
TI__X86_INLINE TI__TARGET_AVX512 __m512 ti__fc512_act(int clamp, __m512 v, __m512 vlo,
                                                     __m512 vhi) {
    if (clamp == 1) return ti__dw512_clamp(v, vlo, vhi);
    if (clamp == 2) return ti__act512(TI__ACT_HARD_SWISH, v, vlo, vhi);
    return v;
}
/* G channels (16, 8, 6 or 4) of NV input vectors (1, 3 or 4) a call, each channel's weight
 * broadcast once a tap for its NV FMAs: up to 16 positions, one vector and all 16 channels
 * (17 loads a tap for 16 FMAs); 17 to 48, three vectors and the channels in two calls of 8
 * (11 loads for 24 FMAs); 49 to 64, four vectors and the channels in calls of 6, 6 and 4
 * (10 loads for 24 FMAs, 8 for 16). On an Ice Lake VM (session 56) the one-vector form ran at
 * 16.7 cycles a tap with everything in L1: loads, not FMAs, set its pace. Single-conv models
 * (+ ReLU), tinyinfer-run, 1 thread, min of 300 runs, 16 / 48 positions a call: SqueezeNet's
 * 3x3 / 2 stem (3 -> 64 at 224) 0.636 / 0.475 ms, MobileNetV2's (3 -> 32) 0.310 / 0.243,
 * ResNet-18's 7x7 / 2 (3 -> 64) 3.03 / 1.93; onnxruntime 0.672, 0.364, 1.843. On the device
 * tool's 16-core Xeon, which ran the 16-position kernel near its FMA rate, about even: 0.333 /
 * 0.350, 0.174 / 0.178, 1.54 / 1.51 (bench/results/fewc-2026-12-05-h100host-s56.md). With 48
 * at most, a stem's row of 111-112 outputs ended in a one-vector call; with 64 it is 64 + 48:
 * the same Ice Lake VM (session 58), min of 200 runs, five rounds alternating, each round
 * faster: 0.455-0.506 -> 0.428-0.476, 0.236 -> 0.221-0.222, 1.908-1.961 -> 1.770-1.813
 * (bench/results/fewc-2026-12-06-icx-s58.md). */
TI__X86_INLINE TI__TARGET_AVX512 void ti__fc512_blk(const int S, const int G, const int NV,
                                                    float *y, size_t ldy, int mv, int np,
                                                    const float *x, const int32_t *off, int taps,
                                                    const float *w, const float *bias, int clamp,
                                                    float lo, float hi) {
    __m512 z = _mm512_setzero_ps();
#define TI__FC512_INIT(m)                                                                    \
    __m512 a##m = G > m ? _mm512_set1_ps(bias[m]) : z, b##m = a##m, c##m = a##m, d##m = a##m;
    TI__FC512_X16(TI__FC512_INIT)
#undef TI__FC512_INIT
    for (int t = 0; t < taps; t++) {
        const float *xt = x + off[t], *wt = w + 16 * t;
        __m512 x0 = ti__fc512_load(S, xt);
        __m512 x1 = NV > 1 ? ti__fc512_load(S, xt + 16 * S) : z;
        __m512 x2 = NV > 2 ? ti__fc512_load(S, xt + 32 * S) : z;
        __m512 x3 = NV > 3 ? ti__fc512_load(S, xt + 48 * S) : z;
#define TI__FC512_FMA(m)                                                                     \
    if (G > m) {                                                                             \
        __m512 wv = _mm512_set1_ps(wt[m]);                                                   \
        a##m = _mm512_fmadd_ps(wv, x0, a##m);                                                \
        if (NV > 1) b##m = _mm512_fmadd_ps(wv, x1, b##m);                                    \
        if (NV > 2) c##m = _mm512_fmadd_ps(wv, x2, c##m);                                    \
        if (NV > 3) d##m = _mm512_fmadd_ps(wv, x3, d##m);                                    \
    }
        TI__FC512_X16(TI__FC512_FMA)
#undef TI__FC512_FMA
    }
    __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
    __mmask16 k0 = ti__dw512_mask(np), k1 = ti__dw512_mask(np - 16), k2 = ti__dw512_mask(np - 32);
    __mmask16 k3 = ti__dw512_mask(np - 48);
#define TI__FC512_STORE(m)                                                                   \
    if (G > m && m < mv) {                                                                   \
        float *ym = y + m * ldy;                                                             \
        __m512 r0 = ti__fc512_act(clamp, a##m, vlo, vhi);                                    \
        if (np >= 16) _mm512_storeu_ps(ym, r0);                                              \
        else _mm512_mask_storeu_ps(ym, k0, r0);                                              \
        if (NV > 1) _mm512_mask_storeu_ps(ym + 16, k1, ti__fc512_act(clamp, b##m, vlo, vhi)); \
        if (NV > 2) _mm512_mask_storeu_ps(ym + 32, k2, ti__fc512_act(clamp, c##m, vlo, vhi)); \
        if (NV > 3) _mm512_mask_storeu_ps(ym + 48, k3, ti__fc512_act(clamp, d##m, vlo, vhi)); \
    }
    TI__FC512_X16(TI__FC512_STORE)
#undef TI__FC512_STORE
}
TI__X86_INLINE TI__TARGET_AVX512 void ti__fewc512(const int S, float *y, size_t ldy, int mv,
                                                  int np, const float *x, const int32_t *off,
                                                  int taps, const float *w, const float *bias,
                                                  int clamp, float lo, float hi) {
    if (np <= 16) {
        ti__fc512_blk(S, 16, 1, y, ldy, mv, np, x, off, taps, w, bias, clamp, lo, hi);
        return;
    }
    if (np <= 48) {
        ti__fc512_blk(S, 8, 3, y, ldy, mv, np, x, off, taps, w, bias, clamp, lo, hi);
        if (mv > 8)
            ti__fc512_blk(S, 8, 3, y + 8 * ldy, ldy, mv - 8, np, x, off, taps, w + 8, bias + 8,
                          clamp, lo, hi);
        return;
    }
    ti__fc512_blk(S, 6, 4, y, ldy, mv, np, x, off, taps, w, bias, clamp, lo, hi);
    if (mv > 6)
        ti__fc512_blk(S, 6, 4, y + 6 * ldy, ldy, mv - 6, np, x, off, taps, w + 6, bias + 6,
                      clamp, lo, hi);
    if (mv > 12)
        ti__fc512_blk(S, 4, 4, y + 12 * ldy, ldy, mv - 12, np, x, off, taps, w + 12, bias + 12,
                      clamp, lo, hi);
}
#undef TI__FC512_X16
#undef TI__FC512_X8
static __attribute__((noinline, unused)) TI__TARGET_AVX512 void
ti__fewc512_s1(float *y, size_t ldy, int mv, int np, const float *x, const int32_t *off,
               int taps, const float *w, const float *bias, int clamp, float lo, float hi) {
    ti__fewc512(1, y, ldy, mv, np, x, off, taps, w, bias, clamp, lo, hi);
}
static __attribute__((noinline, unused)) TI__TARGET_AVX512 void
ti__fewc512_s2(float *y, size_t ldy, int mv, int np, const float *x, const int32_t *off,
               int taps, const float *w, const float *bias, int clamp, float lo, float hi) {
    ti__fewc512(2, y, ldy, mv, np, x, off, taps, w, bias, clamp, lo, hi);
}

/* ti__dw_copy_fn and ti__dw_split_fn: whole vectors of 16 (of 32 source floats), the rest
 * of each row as conv_avx2.c's (masked loads and stores there were slower: a stride-2
 * depthwise conv at 14 x 14, rows of 14, 0.041 -> 0.045 ms, tinyinfer-run, 1 thread). */
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

/* 3 x 3 windows at stride 2 (MaxPool of ResNet, SqueezeNet, GoogLeNet; ti__maxpool_k3s2_fn),
 * 16 outputs at a time: of each input row the even, odd and next even columns (two
 * permutes of 32 columns and an align with the 33rd), taken tap by tap in the scalar rule's
 * order, so NaN and signed zeros come out as there with no check. The column-first kernel
 * before it (three vertical maxima, then three horizontal, a NaN or -0 check on every load)
 * ran a 3 x 3 / 2 MaxPool of 16 x 111 x 111 in cache in 0.040 ms, this one 0.022, where
 * onnxruntime takes 0.014-0.016; 256 x 27 x 27 (rows of 13: two rows at a time) 0.054 by
 * the flat path, 0.029 one row at a time, 0.025 two (Xeon, 1 thread, bench/nodemin.c). */
TI__X86_INLINE TI__TARGET_AVX512 __m512 ti__mp512_k3s2_tap(const float *x, long cols,
                                                          __m512i even, __m512i odd, __m512 m,
                                                          int first) {
    __m512 lo, hi, nx;
    if (cols > 32) { /* whole vectors, and column 32 */
        lo = _mm512_loadu_ps(x);
        hi = _mm512_loadu_ps(x + 16);
        nx = _mm512_castps128_ps512(_mm_load_ss(x + 32));
    } else {
        lo = _mm512_maskz_loadu_ps(ti__dw512_mask(cols), x);
        hi = _mm512_maskz_loadu_ps(ti__dw512_mask(cols - 16), x + 16);
        nx = _mm512_setzero_ps();
    }
    __m512 e = _mm512_permutex2var_ps(lo, even, hi), o = _mm512_permutex2var_ps(lo, odd, hi);
    __m512 e2 = _mm512_castsi512_ps(
        _mm512_alignr_epi32(_mm512_castps_si512(nx), _mm512_castps_si512(e), 1));
    m = first ? e : _mm512_max_ps(e, m);
    m = _mm512_max_ps(o, m);
    return _mm512_max_ps(e2, m);
}

static __attribute__((noinline, unused)) TI__TARGET_AVX512 void
ti__mp512_k3s2(float *y, size_t ldy, size_t n, const float *x, size_t ldx, size_t rows) {
    const __m512i even =
        _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
    long cols = (long)(2 * n + 1); /* columns 0 .. 2n are read */
    size_t r = 0;
    if (n <= 16) /* one vector a row: two rows at a time, two chains of maxima */
        for (; r + 2 <= rows; r += 2, y += 2 * ldy, x += 4 * ldx) {
            const float *q = x + 2 * ldx;
            __m512 m = ti__mp512_k3s2_tap(x, cols, even, odd, _mm512_setzero_ps(), 1);
            __m512 u = ti__mp512_k3s2_tap(q, cols, even, odd, _mm512_setzero_ps(), 1);
            m = ti__mp512_k3s2_tap(x + ldx, cols, even, odd, m, 0);
            u = ti__mp512_k3s2_tap(q + ldx, cols, even, odd, u, 0);
            m = ti__mp512_k3s2_tap(x + 2 * ldx, cols, even, odd, m, 0);
            u = ti__mp512_k3s2_tap(q + 2 * ldx, cols, even, odd, u, 0);
            __mmask16 k = ti__dw512_mask((long)n);
            _mm512_mask_storeu_ps(y, k, m);
            _mm512_mask_storeu_ps(y + ldy, k, u);
        }
    for (; r < rows; r++, y += ldy, x += 2 * ldx)
        for (size_t i = 0; i < n; i += 16) {
            long c = cols - (long)(2 * i);
            const float *p = x + 2 * i;
            __m512 m = ti__mp512_k3s2_tap(p, c, even, odd, _mm512_setzero_ps(), 1);
            m = ti__mp512_k3s2_tap(p + ldx, c, even, odd, m, 0);
            m = ti__mp512_k3s2_tap(p + 2 * ldx, c, even, odd, m, 0);
            if (n - i >= 16) _mm512_storeu_ps(y + i, m);
            else _mm512_mask_storeu_ps(y + i, ti__dw512_mask((long)(n - i)), m);
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
    size_t i = 0;
    /* plain loads while src[2 i + 31] is inside (up to src[2 (n - 1)]); masked ones for the
     * rest: with masked loads throughout this copy was 18 % of MobileNetV2's stem conv */
    for (; i + 17 <= n; i += 16)
        _mm512_storeu_ps(dst + i, _mm512_permutex2var_ps(_mm512_loadu_ps(src + 2 * i), even,
                                                         _mm512_loadu_ps(src + 2 * i + 16)));
    for (; i < n; i += 16) {
        long m = (long)(n - i < 16 ? n - i : 16);
        __m512 v = ti__dw512_load(2, src + 2 * i, m, even);
        if (m >= 16) _mm512_storeu_ps(dst + i, v);
        else _mm512_mask_storeu_ps(dst + i, ti__dw512_mask(m), v);
    }
}

/* ev[t] = src[2 t] for t < (w + 1) / 2, od[t] = src[2 t + 1] for t < w / 2: a row split into
 * its even and odd columns in one pass (the few-channel conv's stride-2 rows, conv_fast.c),
 * two loads and two permutes for 16 of each; reads nothing past src[w - 1]. */
TI__PRIVATE TI__TARGET_AVX512 void ti__split_s2_avx512(float *ev, float *od, const float *src,
                                                       size_t w) {
    __m512i ie = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    __m512i io = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    size_t i = 0;
    for (; 2 * i + 32 <= w; i += 16) {
        __m512 a = _mm512_loadu_ps(src + 2 * i), b = _mm512_loadu_ps(src + 2 * i + 16);
        _mm512_storeu_ps(ev + i, _mm512_permutex2var_ps(a, ie, b));
        _mm512_storeu_ps(od + i, _mm512_permutex2var_ps(a, io, b));
    }
    if (2 * i < w) { /* the last m < 32 columns, masked */
        unsigned m = (unsigned)(w - 2 * i), ne = (m + 1) / 2, no = m / 2;
        __mmask16 ma = (__mmask16)(m >= 16 ? 0xffffu : (1u << m) - 1u);
        __mmask16 mb = (__mmask16)(m > 16 ? (1u << (m - 16)) - 1u : 0u);
        __m512 a = _mm512_maskz_loadu_ps(ma, src + 2 * i);
        __m512 b = _mm512_maskz_loadu_ps(mb, src + 2 * i + 16);
        __mmask16 me = (__mmask16)((1u << ne) - 1u), mo = (__mmask16)((1u << no) - 1u);
        _mm512_mask_storeu_ps(ev + i, me, _mm512_permutex2var_ps(a, ie, b));
        _mm512_mask_storeu_ps(od + i, mo, _mm512_permutex2var_ps(a, io, b));
    }
}

/* The stride-2 row kernel (ti__dw_rows_fn), 3x3 and 5x5: output vector v of a row (outputs
 * 16 v ..) takes input columns 32 v .. 32 v + 31 of each input row in place, two loads
 * (masked past the row's end: those lanes read nothing and give zero) deinterleaved by two
 * two-source permutes into the even columns E and the odd ones O. Tap q reads column
 * 2 o + d, d = q - pl: E (d 0), O (d 1), or one of them moved with valignd: up a lane
 * (d -2, -1: the lane before from the previous vector's, carried) or down (d 2, 3: a lane,
 * d 4: two, from columns 32 v + 32 .. 35, loaded alone). Up to four output rows at a time
 * (they share input rows): each output row is one chain of K K dependent FMAs, and with
 * two in flight the FMAs waited on each other (perf: the time spread over the FMAs). With
 * four, MobileNetV3's 5x5 96 @ 28 took 0.018 ms, 0.021 with two, EfficientNet-B0's 144 @ 56
 * 0.097 and 0.112; 3x3: MobileNetV2's 96 @ 112 0.113 and 0.119, 192 @ 28 0.020 and 0.024
 * (single-conv models, per-node minima, 1 thread; cpu/conv_fast.c's row paths say more). One
 * chain per output, taps in order from the bias, as the flat path, so the same bits. The
 * flat path split every input row into phase planes first, 43 % of the time of
 * MobileNetV2's 96-channel stride-2 conv at 112 x 112 (perf). */
#define TI__DWS2_UP(cur, prev)                                                               \
    _mm512_castsi512_ps(                                                                     \
        _mm512_alignr_epi32(_mm512_castps_si512(cur), _mm512_castps_si512(prev), 15))
#define TI__DWS2_DOWN(next, cur, sh)                                                         \
    _mm512_castsi512_ps(                                                                     \
        _mm512_alignr_epi32(_mm512_castps_si512(next), _mm512_castps_si512(cur), sh))
#define TI__DWS2_FMA(k, q)                                                                   \
    if (R > k && r >= 2 * k && r - 2 * k < K)                                                \
        a##k = _mm512_fmadd_ps(_mm512_set1_ps(w[(r - 2 * k) * K + (q)]), t, a##k);
#define TI__DWS2_TAP(q)                                                                      \
    if (K > q) {                                                                             \
        const int d = q - PL;                                                                \
        __m512 t = d == -2  ? TI__DWS2_UP(e, ce[r])                                          \
                   : d == -1 ? TI__DWS2_UP(o, co[r])                                         \
                   : d == 0  ? e                                                             \
                   : d == 1  ? o                                                             \
                   : d == 2  ? TI__DWS2_DOWN(ne, e, 1)                                       \
                   : d == 3  ? TI__DWS2_DOWN(no, o, 1)                                       \
                             : TI__DWS2_DOWN(ne, e, 2);                                      \
        TI__DWS2_FMA(0, q) TI__DWS2_FMA(1, q) TI__DWS2_FMA(2, q) TI__DWS2_FMA(3, q)          \
    }
TI__X86_INLINE TI__TARGET_AVX512 void ti__dws2_rows(const int K, const int R, const int PL,
                                                    float *y, size_t ldy, size_t n,
                                                    const float *const *x, int64_t W,
                                                    const float *w, __m512 vb, int clamp,
                                                    __m512 vlo, __m512 vhi) {
    const __m512i even =
        _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odd =
        _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    __m512 ce[11], co[11]; /* each row's previous E and O (zero before the first: padding) */
    TI__UNROLL16 for (int r = 0; r < 2 * R + K - 2; r++) ce[r] = co[r] = _mm512_setzero_ps();
    for (size_t i = 0; i < n; i += 16) {
        int64_t s = 2 * (int64_t)i, left = W - s; /* the row's floats from column s */
        __mmask16 ma = ti__dw512_mask((long)left), mb = ti__dw512_mask((long)(left - 16));
        __m512 a0 = vb, a1 = vb, a2 = vb, a3 = vb;
        TI__UNROLL16 for (int r = 0; r < 2 * R + K - 2; r++) {
            const float *p = x[r];
            if (p == NULL) continue; /* a padding row: its taps would add zeros */
            p += s;
            __m512 la = left >= 32 ? _mm512_loadu_ps(p) : _mm512_maskz_loadu_ps(ma, p);
            __m512 lb = left >= 32 ? _mm512_loadu_ps(p + 16) : _mm512_maskz_loadu_ps(mb, p + 16);
            __m512 e = _mm512_permutex2var_ps(la, even, lb);
            __m512 o = _mm512_permutex2var_ps(la, odd, lb);
            /* past the vector: columns s + 32 and s + 34 in ne, s + 33 and s + 35 in no, where
             * a tap reads them (d 2 to 4) */
            __m512 ne = _mm512_setzero_ps(), no = _mm512_setzero_ps();
            if (K - 1 - PL == 2 && left > 32) ne = _mm512_castps128_ps512(_mm_load_ss(p + 32));
            if (K - 1 - PL > 2 && left > 32) {
                __m512 nx = _mm512_maskz_loadu_ps(ti__dw512_mask(left - 32 < 4 ? (long)left - 32 : 4),
                                                  p + 32);
                ne = _mm512_permutexvar_ps(even, nx);
                no = _mm512_permutexvar_ps(odd, nx);
            }
            TI__DWS2_TAP(0) TI__DWS2_TAP(1) TI__DWS2_TAP(2) TI__DWS2_TAP(3) TI__DWS2_TAP(4)
            ce[r] = e;
            co[r] = o;
        }
        __mmask16 sm = ti__dw512_mask((long)(n - i));
#define TI__DWS2_STORE(k)                                                                    \
    if (R > k)                                                                               \
        _mm512_mask_storeu_ps(y + k * ldy + i, sm, clamp ? ti__dw512_clamp(a##k, vlo, vhi) : a##k);
        TI__DWS2_STORE(0) TI__DWS2_STORE(1) TI__DWS2_STORE(2) TI__DWS2_STORE(3)
#undef TI__DWS2_STORE
    }
}
#undef TI__DWS2_TAP
#undef TI__DWS2_FMA
#undef TI__DWS2_DOWN
#undef TI__DWS2_UP
#define TI__DWS2_CALL(K, R, PL) ti__dws2_rows(K, R, PL, y, ldy, n, x, W, w, vb, clamp, vlo, vhi)
#define TI__DWS2_CALL_R(K, PL)                                                               \
    do {                                                                                     \
        if (r == 4) TI__DWS2_CALL(K, 4, PL);                                                 \
        else if (r == 2) TI__DWS2_CALL(K, 2, PL);                                            \
        else TI__DWS2_CALL(K, 1, PL);                                                        \
    } while (0)
static __attribute__((noinline, unused)) TI__TARGET_AVX512 void
ti__dw512_s2rows(float *y, size_t ldy, int K, int R, size_t n, const float *const *x,
                 int64_t W, int64_t pl, const float *w, float bias, int clamp, float lo,
                 float hi) {
    __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi), vb = _mm512_set1_ps(bias);
    while (R > 0) { /* 4 rows a pass, else 2, then 1 (3 as 2 + 1: fewer inlined copies) */
        int r = R >= 4 ? 4 : R >= 2 ? 2 : 1;
        if (K == 5 && pl == 0) TI__DWS2_CALL_R(5, 0);
        else if (K == 5 && pl == 1) TI__DWS2_CALL_R(5, 1);
        else if (K == 5) TI__DWS2_CALL_R(5, 2);
        else if (pl == 0) TI__DWS2_CALL_R(3, 0);
        else if (pl == 1) TI__DWS2_CALL_R(3, 1);
        else TI__DWS2_CALL_R(3, 2);
        R -= r, y += (size_t)r * ldy, x += 2 * r;
    }
}
#undef TI__DWS2_CALL_R
#undef TI__DWS2_CALL

/* Mask of the lanes of columns c .. c + 15 inside a row of W floats. */
TI__X86_INLINE TI__TARGET_AVX512 __mmask16 ti__dw512_rmask(int64_t c, int64_t W) {
    int64_t lo = c < 0 ? -c : 0, hi = W - c; /* lanes [lo, hi) */
    if (hi > 16) hi = 16;
    if (hi <= lo) return 0;
    return (__mmask16)(ti__dw512_mask((long)hi) & ~ti__dw512_mask((long)lo));
}
/* The stride-1 row kernel (ti__dw_rows_fn): output vector v of a row (outputs 16 v ..)
 * takes input columns 16 v - pl .. + 31 of each input row in place, two loads masked to
 * the row (lanes outside it read nothing and give zero); tap q is them moved by q lanes
 * (valignd). Up to four output rows at a time, so each input row is loaded once for all
 * the output rows it feeds: per vector 2 loads and K - 1 shifts an input row for K FMAs
 * an output row it feeds. The flat path copied the rows into its padded buffer and its
 * outputs back out, and shifted each row's vectors for every output row. One chain per
 * output, taps in order from the bias, as the flat path, so the same bits. */
#define TI__DWS1_FMA(k, q)                                                                   \
    if (R > k && r >= k && r - k < K)                                                        \
        a##k = _mm512_fmadd_ps(_mm512_set1_ps(w[(r - k) * K + q]), t, a##k);
#define TI__DWS1_TAP(q)                                                                      \
    if (K > q) {                                                                             \
        __m512 t = (q) == 0 ? l0                                                             \
                            : _mm512_castsi512_ps(_mm512_alignr_epi32(                         \
                                  _mm512_castps_si512(l1), _mm512_castps_si512(l0), (q)));   \
        TI__DWS1_FMA(0, q) TI__DWS1_FMA(1, q) TI__DWS1_FMA(2, q) TI__DWS1_FMA(3, q)          \
    }
TI__X86_INLINE TI__TARGET_AVX512 void ti__dws1_rows(const int K, const int R, float *y,
                                                    size_t ldy, size_t n,
                                                    const float *const *x, int64_t W,
                                                    int64_t pl, const float *w, __m512 vb,
                                                    int clamp, __m512 vlo, __m512 vhi) {
    for (size_t i = 0; i < n; i += 16) {
        int64_t s = (int64_t)i - pl;
        __mmask16 m0 = ti__dw512_rmask(s, W), m1 = ti__dw512_rmask(s + 16, W);
        __m512 a0 = vb, a1 = vb, a2 = vb, a3 = vb;
        TI__UNROLL8 for (int r = 0; r < R + K - 1; r++) {
            const float *p = x[r];
            if (p == NULL) continue; /* a padding row: its taps would add zeros */
            __m512 l0 = _mm512_maskz_loadu_ps(m0, p + s);
            __m512 l1 = _mm512_maskz_loadu_ps(m1, p + s + 16);
            TI__DWS1_TAP(0) TI__DWS1_TAP(1) TI__DWS1_TAP(2) TI__DWS1_TAP(3) TI__DWS1_TAP(4)
        }
        __mmask16 sm = ti__dw512_mask((long)(n - i));
#define TI__DWS1_STORE(k)                                                                    \
    if (R > k)                                                                               \
        _mm512_mask_storeu_ps(y + k * ldy + i, sm, clamp ? ti__dw512_clamp(a##k, vlo, vhi) : a##k);
        TI__DWS1_STORE(0) TI__DWS1_STORE(1) TI__DWS1_STORE(2) TI__DWS1_STORE(3)
#undef TI__DWS1_STORE
    }
}
#undef TI__DWS1_TAP
#undef TI__DWS1_FMA
#define TI__DWS1_CALL(k, r) ti__dws1_rows(k, r, y, ldy, n, x, W, pl, w, vb, clamp, vlo, vhi)
static __attribute__((noinline, unused)) TI__TARGET_AVX512 void
ti__dw512_s1rows(float *y, size_t ldy, int K, int R, size_t n, const float *const *x,
                 int64_t W, int64_t pl, const float *w, float bias, int clamp, float lo,
                 float hi) {
    __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi), vb = _mm512_set1_ps(bias);
    TI__DWS1_DISPATCH(TI__DWS1_CALL);
}
#undef TI__DWS1_CALL

/* ---- the lane path (ti__dw_lanes_fn) ----
 * Sixteen planes of a small map at once, plane c in lane c: their inputs transposed (16 x 16
 * blocks in registers) into a buffer of padded positions of 16 floats, then up to 8 outputs
 * of a row in registers, each tap one FMA an output with the tap's 16 weights as one vector
 * (no masks, no broadcasts), then the outputs transposed back into the planes. The
 * plane-by-plane small path (ti__dw512_small) fills a vector with positions of one plane: at
 * 7 x 7 outputs 49 of 64 lanes, every tap's load masked and split across lines. */
#define TI__DWL_X8(S) S(0) S(1) S(2) S(3) S(4) S(5) S(6) S(7)
/* NA outputs of a row a pass (7: rows of 7, else 8; a last pass of 8 reads past the row) */
TI__X86_INLINE TI__TARGET_AVX512 void ti__dwl512_rows(const int K, const int S, const int NA,
                                                      const ti__dw_lane_geo *g, const float *in,
                                                      const __m512 *wv, __m512 vb, int clamp,
                                                      __m512 vlo, __m512 vhi, float *out) {
    size_t wp = (size_t)g->Wp, ow = (size_t)g->OW;
    for (size_t oy = 0; oy < (size_t)g->OH; oy++)
        for (size_t ox = 0; ox < ow; ox += (size_t)NA) {
#define TI__DWL_INIT(i) __m512 a##i = vb;
            TI__DWL_X8(TI__DWL_INIT)
#undef TI__DWL_INIT
            const float *r0 = in + (oy * (size_t)S * wp + ox * (size_t)S) * 16;
            TI__UNROLL5 for (int ky = 0; ky < K; ky++) {
                const float *r = r0 + (size_t)ky * wp * 16;
                TI__UNROLL5 for (int kx = 0; kx < K; kx++) {
                    __m512 w = wv[ky * K + kx];
                    const float *p = r + kx * 16;
#define TI__DWL_FMA(i)                                                                       \
    if (NA > i) a##i = _mm512_fmadd_ps(w, _mm512_load_ps(p + (i) * S * 16), a##i);
                    TI__DWL_X8(TI__DWL_FMA)
#undef TI__DWL_FMA
                }
            }
            float *o = out + (oy * ow + ox) * 16;
            size_t n = ow - ox;
#define TI__DWL_STORE(i)                                                                     \
    if (NA > (i) && n > (i))                                                                 \
        _mm512_store_ps(o + (i) * 16, clamp ? ti__dw512_clamp(a##i, vlo, vhi) : a##i);
            TI__DWL_X8(TI__DWL_STORE)
#undef TI__DWL_STORE
        }
}
#undef TI__DWL_X8

/* The padded input of the 16 planes at x into in: position (r, c) of the Hp x Wp padding at
 * in + (r Wp + c) 16, zero outside the map, and the 8 S positions after the last zero. */
TI__X86_INLINE TI__TARGET_AVX512 void ti__dwl512_fill(const ti__dw_lane_geo *g, const float *x,
                                                      float *in) {
    int64_t Wp = g->Wp, pt = g->pt, pl = g->pl, W = g->W;
    int64_t r1 = TI__MIN(g->Hp, pt + g->H), c1 = TI__MIN(Wp, pl + W); /* map rows, columns */
    ti__dwl_zero_pad(g, in, 16);
    if (r1 <= pt || c1 <= pl) return;
    size_t n = (size_t)((r1 - pt) * W); /* the map's rows that the taps read, whole */
    int64_t iy = 0, ix = 0;
    for (size_t q0 = 0; q0 < n; q0 += 16) {
        __mmask16 m = ti__dw512_mask((long)(n - q0));
        __m512 v[16], u[16];
        TI__UNROLL16 for (size_t c = 0; c < 16; c++)
            v[c] = _mm512_maskz_loadu_ps(m, x + c * g->in_sp + q0);
        ti__k512_transpose16(v, u);
        TI__UNROLL16 for (size_t j = 0; j < 16; j++) {
            if (q0 + j >= n) break;
            if (pl + ix < c1) _mm512_store_ps(in + (size_t)((pt + iy) * Wp + pl + ix) * 16, u[j]);
            if (++ix == W) ix = 0, iy++;
        }
    }
}

static __attribute__((noinline, unused)) TI__TARGET_AVX512 void
ti__dw512_lanes(const ti__dw_lane_geo *g, float *y, const float *x, const float *w,
                const float *bias, int clamp, float lo, float hi, float *buf) {
    float *in = buf, *out = buf + TI__DWL_IN_FLOATS, *wb = out + TI__DWL_OUT_FLOATS;
    size_t kk = (size_t)(g->K * g->K), n = (size_t)(g->OH * g->OW);
    __m512 v[16], u[16];
    for (size_t t0 = 0; t0 < kk; t0 += 16) { /* the taps' weights, a vector of 16 planes each */
        __mmask16 m = ti__dw512_mask((long)(kk - t0));
        TI__UNROLL16 for (size_t c = 0; c < 16; c++)
            v[c] = _mm512_maskz_loadu_ps(m, w + c * kk + t0);
        ti__k512_transpose16(v, u);
        for (size_t j = 0; j < 16 && t0 + j < kk; j++) _mm512_store_ps(wb + (t0 + j) * 16, u[j]);
    }
    ti__dwl512_fill(g, x, in);
    __m512 vb = bias != NULL ? _mm512_loadu_ps(bias) : _mm512_setzero_ps();
    __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
    const __m512 *wv = (const __m512 *)(const void *)wb;
#define TI__DWL_CALL(k, s, na) ti__dwl512_rows(k, s, na, g, in, wv, vb, clamp, vlo, vhi, out)
    TI__DWL_DISPATCH(TI__DWL_CALL);
#undef TI__DWL_CALL
    for (size_t p0 = 0; p0 < n; p0 += 16) { /* the outputs back into the planes */
        size_t h = n - p0 < 16 ? n - p0 : 16;
        TI__UNROLL16 for (size_t r = 0; r < 16; r++)
            v[r] = r < h ? _mm512_load_ps(out + (p0 + r) * 16) : _mm512_setzero_ps();
        ti__k512_transpose16(v, u);
        __mmask16 m = ti__dw512_mask((long)h);
        TI__UNROLL16 for (size_t c = 0; c < 16; c++)
            _mm512_mask_storeu_ps(y + c * g->out_sp + p0, m, u[c]);
    }
}

/* ---- Winograd F(4x4, 3x3) transforms, 16 tiles side by side (cpu/conv_fast.c) ------- */
/* conv_avx2.c's 8-tile transforms on vectors of 16: the same operations in the same order.
 * In SqueezeNet's 16 -> 64 conv at 55 x 55 the 8-tile output transform and its stores took
 * 44 % of the conv's time and the input transform 19 %, against 34 % for the products
 * (perf, 1 thread, Ice Lake Xeon), but they wait on their loads (O and the strip from L2)
 * more than they compute, so twice the lanes gained little: per-node minima in the models, 4
 * rounds alternating (bench/ab.py, 1 thread, the same Xeon), ResNet-18 24.72 -> 24.08 ms
 * (its 128 -> 128 convs at 28 x 28 5-7 % faster, 64 -> 64 at 56 x 56 4 % slower),
 * SqueezeNet 6.37 -> 6.28 (within its noise). */

/* B^T along one axis on 16 lanes, output k stored at o + k * os. */
TI__X86_INLINE TI__TARGET_AVX512 void ti__wino_bt512(__m512 d0, __m512 d1, __m512 d2, __m512 d3,
                                                    __m512 d4, __m512 d5, float *o, size_t os) {
    __m512 four = _mm512_set1_ps(4.0f), five = _mm512_set1_ps(5.0f), two = _mm512_set1_ps(2.0f);
    __m512 a = _mm512_sub_ps(d4, _mm512_mul_ps(four, d2));
    __m512 b = _mm512_sub_ps(d3, _mm512_mul_ps(four, d1));
    __m512 c = _mm512_sub_ps(d4, d2), e = _mm512_mul_ps(two, _mm512_sub_ps(d3, d1));
    _mm512_storeu_ps(o, _mm512_add_ps(_mm512_sub_ps(_mm512_mul_ps(four, d0),
                                                    _mm512_mul_ps(five, d2)), d4));
    _mm512_storeu_ps(o + os, _mm512_add_ps(a, b));
    _mm512_storeu_ps(o + 2 * os, _mm512_sub_ps(a, b));
    _mm512_storeu_ps(o + 3 * os, _mm512_add_ps(c, e));
    _mm512_storeu_ps(o + 4 * os, _mm512_sub_ps(c, e));
    _mm512_storeu_ps(o + 5 * os, _mm512_add_ps(_mm512_sub_ps(_mm512_mul_ps(four, d1),
                                                             _mm512_mul_ps(five, d3)), d5));
}

/* Input transform of 16 tiles of one channel (ti__wino_in_fn): rows[i] is input row i of
 * the tile row from the first tile's left column, 80 floats readable; tile l reads columns
 * 4 l .. 4 l + 5. The rows are combined first (whole vectors), then the columns: phase q < 4
 * of a row (column 4 l + q for tile l) is two two-source permutes of its first 64 floats and
 * a 256-bit shuffle; phases 4 and 5 are phases 0 and 1 moved one tile on. */
TI__PRIVATE TI__TARGET_AVX512 void ti__wino_in16_avx512(const float *const *rows, float *out,
                                                       size_t os) {
    float r[6][80];
    for (int x = 0; x < 80; x += 16)
        ti__wino_bt512(_mm512_loadu_ps(rows[0] + x), _mm512_loadu_ps(rows[1] + x),
                       _mm512_loadu_ps(rows[2] + x), _mm512_loadu_ps(rows[3] + x),
                       _mm512_loadu_ps(rows[4] + x), _mm512_loadu_ps(rows[5] + x), r[0] + x, 80);
    /* lane l < 8: float 4 l + q of the pair (x0, x1) */
    const __m512i i0 = _mm512_set_epi32(0, 0, 0, 0, 0, 0, 0, 0, 28, 24, 20, 16, 12, 8, 4, 0);
    const __m512i i1 = _mm512_add_epi32(i0, _mm512_set1_epi32(1));
    const __m512i i2 = _mm512_add_epi32(i0, _mm512_set1_epi32(2));
    const __m512i i3 = _mm512_add_epi32(i0, _mm512_set1_epi32(3));
    for (int k = 0; k < 6; k++) {
        __m512 x0 = _mm512_loadu_ps(r[k]), x1 = _mm512_loadu_ps(r[k] + 16);
        __m512 x2 = _mm512_loadu_ps(r[k] + 32), x3 = _mm512_loadu_ps(r[k] + 48);
        __m512i x4 = _mm512_castps_si512(_mm512_loadu_ps(r[k] + 64));
        __m512 p0 = _mm512_shuffle_f32x4(_mm512_permutex2var_ps(x0, i0, x1),
                                         _mm512_permutex2var_ps(x2, i0, x3), 0x44);
        __m512 p1 = _mm512_shuffle_f32x4(_mm512_permutex2var_ps(x0, i1, x1),
                                         _mm512_permutex2var_ps(x2, i1, x3), 0x44);
        __m512 p2 = _mm512_shuffle_f32x4(_mm512_permutex2var_ps(x0, i2, x1),
                                         _mm512_permutex2var_ps(x2, i2, x3), 0x44);
        __m512 p3 = _mm512_shuffle_f32x4(_mm512_permutex2var_ps(x0, i3, x1),
                                         _mm512_permutex2var_ps(x2, i3, x3), 0x44);
        /* [p lanes 1 .. 15, float 64 (+ 1)] */
        __m512 p4 = _mm512_castsi512_ps(_mm512_alignr_epi32(x4, _mm512_castps_si512(p0), 1));
        __m512 p5 = _mm512_castsi512_ps(
            _mm512_alignr_epi32(_mm512_alignr_epi32(x4, x4, 1), _mm512_castps_si512(p1), 1));
        ti__wino_bt512(p0, p1, p2, p3, p4, p5, out + (size_t)k * 6 * os, os);
    }
}

/* A^T along one axis on 16 lanes: conv_fast.c's ti__wino_at, same operations and order. */
TI__X86_INLINE TI__TARGET_AVX512 void ti__wino_at512(const __m512 *m, size_t st, __m512 *o,
                                                    size_t ot) {
    __m512 two = _mm512_set1_ps(2.0f), four = _mm512_set1_ps(4.0f), eight = _mm512_set1_ps(8.0f);
    __m512 s12 = _mm512_add_ps(m[st], m[2 * st]), d12 = _mm512_sub_ps(m[st], m[2 * st]);
    __m512 s34 = _mm512_add_ps(m[3 * st], m[4 * st]), d34 = _mm512_sub_ps(m[3 * st], m[4 * st]);
    o[0] = _mm512_add_ps(_mm512_add_ps(m[0], s12), s34);
    o[ot] = _mm512_add_ps(d12, _mm512_mul_ps(two, d34));
    o[2 * ot] = _mm512_add_ps(s12, _mm512_mul_ps(four, s34));
    o[3 * ot] = _mm512_add_ps(_mm512_add_ps(d12, _mm512_mul_ps(eight, d34)), m[5 * st]);
}

/* Output transform of 16 tiles of one channel (ti__wino_out_fn): src + e * es holds the
 * tiles' products at position e (< 36), the first nv of 16 set (the others are read as 0:
 * past the block's last tile O holds whatever was there, maybe nothing ever written, which
 * MemorySanitizer reports once it reaches the max below); z[(4 i + q) * 16 + l] receives
 * output (i, q) of tile l, plus bias, then max(., 0) when relu (NaN gives 0, as the
 * portable loop). */
TI__PRIVATE TI__TARGET_AVX512 void ti__wino_out16_avx512(const float *src, size_t es, int nv,
                                                        float bias, int relu, float *z) {
    __m512 s[36], r[24], o[16];
    __mmask16 m = ti__dw512_mask(nv);
    for (int e = 0; e < 36; e++) s[e] = _mm512_maskz_loadu_ps(m, src + (size_t)e * es);
    for (int i = 0; i < 6; i++) ti__wino_at512(s + i * 6, 1, r + i * 4, 1); /* rows: m A */
    for (int q = 0; q < 4; q++) ti__wino_at512(r + q, 4, o + q, 4);        /* A^T (m A) */
    __m512 vb = _mm512_set1_ps(bias), zero = _mm512_setzero_ps();
    for (int e = 0; e < 16; e++) {
        __m512 v = _mm512_add_ps(o[e], vb);
        if (relu) v = _mm512_max_ps(v, zero);
        _mm512_storeu_ps(z + e * 16, v);
    }
}

/* Row i of z (as ti__wino_out16_avx512 leaves it) as 4 x 4 blocks: w[g], 128-bit lane h,
 * holds outputs (i, 0..3) of tile 4 h + g. */
TI__X86_INLINE TI__TARGET_AVX512 void ti__wino_zrow512(const float *z, int i, __m512 *w) {
    const float *zi = z + i * 64; /* outputs (i, 0..3) of the 16 tiles */
    __m512 q0 = _mm512_loadu_ps(zi), q1 = _mm512_loadu_ps(zi + 16);
    __m512 q2 = _mm512_loadu_ps(zi + 32), q3 = _mm512_loadu_ps(zi + 48);
    __m512 l01 = _mm512_unpacklo_ps(q0, q1), h01 = _mm512_unpackhi_ps(q0, q1);
    __m512 l23 = _mm512_unpacklo_ps(q2, q3), h23 = _mm512_unpackhi_ps(q2, q3);
    w[0] = _mm512_shuffle_ps(l01, l23, 0x44);
    w[1] = _mm512_shuffle_ps(l01, l23, 0xee);
    w[2] = _mm512_shuffle_ps(h01, h23, 0x44);
    w[3] = _mm512_shuffle_ps(h01, h23, 0xee);
}

/* Stores the tiles of z (ti__wino_put_fn): for each row i the 4 x 4 transposes of
 * ti__wino_zrow512 are done once, then each group h with row4[h] gets its 4 tiles as one
 * row of 16 floats (a 4 x 4 transpose of the 128-bit lanes of w), and each tile l with
 * dst[l] its 4 floats (lane l / 4 of w[l % 4]). A call per group transposed the row again
 * for every group (session 61). */
TI__PRIVATE TI__TARGET_AVX512 void ti__wino_put_avx512(const float *z, float *const *row4,
                                                      float *const *dst, int n, size_t ldy,
                                                      int sum, int relu) {
    int groups = (row4[0] != NULL) | (row4[1] != NULL) | (row4[2] != NULL) | (row4[3] != NULL);
    __m512 zero = _mm512_setzero_ps(); /* max_ps(0, v): v when v is NaN or -0, as v < 0 ? 0 : v */
    for (size_t i = 0; i < 4; i++) {
        __m512 w[4];
        ti__wino_zrow512(z, (int)i, w);
        if (groups) {
            /* t0 = [w0.0 w0.1 w1.0 w1.1], t1 = [w0.2 w0.3 w1.2 w1.3], t2, t3 the same of
             * w2, w3; group h = [w0.h w1.h w2.h w3.h] */
            __m512 t0 = _mm512_shuffle_f32x4(w[0], w[1], 0x44);
            __m512 t1 = _mm512_shuffle_f32x4(w[0], w[1], 0xee);
            __m512 t2 = _mm512_shuffle_f32x4(w[2], w[3], 0x44);
            __m512 t3 = _mm512_shuffle_f32x4(w[2], w[3], 0xee);
            __m512 g[4];
            g[0] = _mm512_shuffle_f32x4(t0, t2, 0x88), g[1] = _mm512_shuffle_f32x4(t0, t2, 0xdd);
            g[2] = _mm512_shuffle_f32x4(t1, t3, 0x88), g[3] = _mm512_shuffle_f32x4(t1, t3, 0xdd);
            for (int h = 0; h < 4; h++) {
                if (row4[h] == NULL) continue;
                float *d = row4[h] + i * ldy;
                if (sum) g[h] = _mm512_add_ps(g[h], _mm512_loadu_ps(d));
                if (relu) g[h] = _mm512_max_ps(zero, g[h]);
                _mm512_storeu_ps(d, g[h]);
            }
        }
        for (int l = 0; l < n; l++) {
            if (dst[l] == NULL) continue;
            __m512 v = w[l & 3];
            __m128 t;
            switch (l >> 2) { /* 128-bit lane l / 4 of w[l % 4] */
            case 0: t = _mm512_castps512_ps128(v); break;
            case 1: t = _mm512_extractf32x4_ps(v, 1); break;
            case 2: t = _mm512_extractf32x4_ps(v, 2); break;
            default: t = _mm512_extractf32x4_ps(v, 3); break;
            }
            if (sum) t = _mm_add_ps(t, _mm_loadu_ps(dst[l] + i * ldy));
            if (relu) t = _mm_max_ps(_mm512_castps512_ps128(zero), t);
            _mm_storeu_ps(dst[l] + i * ldy, t);
        }
    }
}

TI__PRIVATE const ti__dw_isa *ti__dw_avx512_isa(void) {
    static const ti__dw_isa isa = {TI__ISA_AVX512,
                                   {{ti__dw512_k3s1, ti__dw512_k3s2},
                                    {ti__dw512_k5s1, ti__dw512_k5s2}},
                                   {ti__mp512_s1, ti__mp512_s2},
                                   ti__dw512_taps, ti__dw512_copy, ti__dw512_split,
                                   ti__dw512_max, ti__ssum_avx512, ti__dw512_small,
                                   ti__dw512_lanes,
                                   {ti__fewc512_s1, ti__fewc512_s2},
                                   {ti__dw512_s1rows, ti__dw512_s2rows},
                                   ti__mp512_k3s2, 12, 16, 64, 64, 1};
    return &isa;
}

TI__PRIVATE const ti__wino_fns *ti__wino_avx512_fns(void) {
    static const ti__wino_fns fns = {16, ti__wino_in16_avx512, ti__wino_out16_avx512,
                                     ti__wino_put_avx512};
    return &fns;
}
#endif /* TI__X86_SIMD */
