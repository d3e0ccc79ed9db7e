/* Depthwise convolution and max-pooling kernels for aarch64 NEON (the ti__dw_isa of
 * cpu/conv_fast.c): the flat path's (at the end of this file), the row kernels for rows
 * too wide for it, and the stride-2 row copy of im2col. Rows: 16 outputs at a time (four
 * vectors, two FMA chains each: eight independent chains), then 4, then one by one. Stride
 * 2 deinterleaves with LD2; nothing outside the row is read: the last vector of a row and
 * the last outputs, where LD2 would read one float past the last tap, load exactly what they
 * need. Every output gets the same operations in the same order wherever it falls (the
 * scalar tail uses fmaf, which rounds as FMLA does), so the grouping changes no bit. Must
 * not allocate. */
#ifdef TI__ARM_NEON
#include <arm_neon.h>

/* Input lanes x[i * S] for 4 outputs from p. S = 2: `last` when p[7] may be past the row
 * (the row's last vector): then only p[0..6] are read. */
TI__ARM_INLINE float32x4_t ti__dwn_load(const int S, const float *p, int last) {
    if (S == 1) return vld1q_f32(p);
    if (!last) return vld2q_f32(p).val[0];
    float32x4_t lo = vld1q_f32(p), hi = vld1q_f32(p + 3); /* p0..p3, p3..p6 */
    return vcombine_f32(vget_low_f32(vuzp1q_f32(lo, lo)), vget_low_f32(vuzp2q_f32(hi, hi)));
}

/* scalar max(v, lo) then min(., hi) as the portable kernel: NaN gives lo */
TI__ARM_INLINE float32x4_t ti__dwn_clamp(float32x4_t v, float32x4_t vlo, float32x4_t vhi) {
    v = vbslq_f32(vcgtq_f32(v, vlo), v, vlo);
    return vbslq_f32(vcltq_f32(v, vhi), v, vhi);
}

/* nv vectors of 4 outputs starting at output i (nv 1 or 4): taps alternate between two
 * chains per vector, acc (starting at the bias) and acc2 (starting at 0), summed at the end */
TI__ARM_INLINE void ti__dwn_block(const int K, const int S, const int NV, float *y, size_t i,
                                  size_t n, const float *const *x, const float *const *w, int nr,
                                  float bias, int clamp, float32x4_t vlo, float32x4_t vhi) {
    float32x4_t a[4], b[4];
    for (int v = 0; v < NV; v++) {
        a[v] = vdupq_n_f32(bias);
        b[v] = vdupq_n_f32(0.0f);
    }
    for (int r = 0; r < nr; r++) {
        const float *xr = x[r] + i * (size_t)S, *wr = w[r];
        for (int q = 0; q < K; q++) {
            float32x4_t wq = vld1q_dup_f32(wr + q);
            for (int v = 0; v < NV; v++) {
                /* the row's last vector: its LD2 could read past the row */
                int last = i + 4 * (size_t)v + 4 >= n;
                float32x4_t xv = ti__dwn_load(S, xr + (size_t)(4 * v * S) + q, last);
                if (q & 1) b[v] = vfmaq_f32(b[v], wq, xv);
                else a[v] = vfmaq_f32(a[v], wq, xv);
            }
        }
    }
    for (int v = 0; v < NV; v++) {
        float32x4_t s = vaddq_f32(a[v], b[v]);
        if (clamp) s = ti__dwn_clamp(s, vlo, vhi);
        vst1q_f32(y + i + 4 * (size_t)v, s);
    }
}

TI__ARM_INLINE void ti__dwn_row(const int K, const int S, float *y, size_t n,
                                const float *const *x, const float *const *w, int nr,
                                float bias, int clamp, float lo, float hi) {
    float32x4_t vlo = vdupq_n_f32(lo), vhi = vdupq_n_f32(hi);
    size_t i = 0;
    for (; i + 16 <= n; i += 16) ti__dwn_block(K, S, 4, y, i, n, x, w, nr, bias, clamp, vlo, vhi);
    for (; i + 4 <= n; i += 4) ti__dwn_block(K, S, 1, y, i, n, x, w, nr, bias, clamp, vlo, vhi);
    for (; i < n; i++) { /* the same two chains, one output */
        float s = bias, s2 = 0.0f;
        for (int r = 0; r < nr; r++)
            for (int q = 0; q < K; q++) {
                float xv = x[r][i * (size_t)S + (size_t)q];
                if (q & 1) s2 = fmaf(w[r][q], xv, s2);
                else s = fmaf(w[r][q], xv, s);
            }
        s += s2;
        if (clamp) {
            s = s > lo ? s : lo;
            s = s < hi ? s : hi;
        }
        y[i] = s;
    }
}

#define TI__DWN_DEF(k, st)                                                                   \
    static __attribute__((noinline, unused)) void ti__dwn_k##k##s##st(                       \
        float *y, size_t n, const float *const *x, const float *const *w, int nr,           \
        float bias, int clamp, float lo, float hi) {                                        \
        ti__dwn_row(k, st, y, n, x, w, nr, bias, clamp, lo, hi);                             \
    }
TI__DWN_DEF(3, 1)
TI__DWN_DEF(3, 2)
TI__DWN_DEF(5, 1)
TI__DWN_DEF(5, 2)
#undef TI__DWN_DEF

/* Max pooling rows (ti__maxpool_row_fn): a lane takes v only when v > m, the scalar rule
 * for NaN and signed zeros too (FMAX would differ on both). */
TI__ARM_INLINE void ti__mpn_row(const int S, float *y, size_t n, const float *const *x, int nr,
                                int K) {
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        int last = i + 4 >= n;
        float32x4_t m = ti__dwn_load(S, x[0] + i * (size_t)S, last);
        for (int r = 0; r < nr; r++) {
            const float *xr = x[r] + i * (size_t)S;
            for (int q = 0; q < K; q++) {
                float32x4_t v = ti__dwn_load(S, xr + q, last);
                m = vbslq_f32(vcgtq_f32(v, m), v, m);
            }
        }
        vst1q_f32(y + i, m);
    }
    for (; i < n; i++) {
        float m = x[0][i * (size_t)S];
        for (int r = 0; r < nr; r++)
            for (int q = 0; q < K; q++) {
                float v = x[r][i * (size_t)S + (size_t)q];
                m = v > m ? v : m;
            }
        y[i] = m;
    }
}
/* 3 x 3 windows at stride 2 over whole rows of windows (ti__maxpool_k3s2_fn), 4 outputs at
 * a time: the even and odd columns by one de-interleaving load, the next even ones by a
 * second from column 2, taps in the rule's order with ti__mpn_row's select; the last
 * windows of a row (whose second load would pass column 2 n) one by one. */
static __attribute__((noinline, unused)) void ti__mpn_k3s2(float *y, size_t ldy, size_t n,
                                                           const float *x, size_t ldx,
                                                           size_t rows) {
    for (size_t r = 0; r < rows; r++, y += ldy, x += 2 * ldx) {
        size_t i = 0;
        for (; i + 5 <= n; i += 4) { /* columns 2 i .. 2 i + 9 */
            const float *p = x + 2 * i;
            float32x4_t m = vdupq_n_f32(0.0f);
            for (int t = 0; t < 3; t++) {
                float32x4x2_t a = vld2q_f32(p + (size_t)t * ldx);
                float32x4x2_t b = vld2q_f32(p + (size_t)t * ldx + 2);
                m = t == 0 ? a.val[0] : vbslq_f32(vcgtq_f32(a.val[0], m), a.val[0], m);
                m = vbslq_f32(vcgtq_f32(a.val[1], m), a.val[1], m);
                m = vbslq_f32(vcgtq_f32(b.val[0], m), b.val[0], m);
            }
            vst1q_f32(y + i, m);
        }
        for (; i < n; i++) {
            float m = x[2 * i];
            for (size_t t = 0; t < 3; t++)
                for (size_t q = 0; q < 3; q++) {
                    float v = x[t * ldx + 2 * i + q];
                    m = v > m ? v : m;
                }
            y[i] = m;
        }
    }
}
static __attribute__((noinline, unused)) void ti__mpn_s1(float *y, size_t n,
                                                         const float *const *x, int nr, int K) {
    ti__mpn_row(1, y, n, x, nr, K);
}
static __attribute__((noinline, unused)) void ti__mpn_s2(float *y, size_t n,
                                                         const float *const *x, int nr, int K) {
    ti__mpn_row(2, y, n, x, nr, K);
}

/* dst[t] = src[2 t] for t < n (im2col's stride-2 rows, cpu/conv.c); reads nothing past
 * src[2 (n - 1)]. */
TI__PRIVATE void ti__copy_s2_neon(float *dst, const float *src, size_t n) {
    size_t t = 0;
    for (; t + 4 <= n; t += 4) vst1q_f32(dst + t, ti__dwn_load(2, src + 2 * t, t + 4 >= n));
    for (; t < n; t++) dst[t] = src[2 * t];
}

/* The flat depthwise kernel (ti__dw_taps_fn): eight vectors of 4 at a time, each tap's
 * weight loaded once for the eight, then vector by vector; one chain per output, taps in
 * order. */
static __attribute__((noinline, unused)) void ti__dwn_taps(float *y, size_t n,
                                                           const float *const *x,
                                                           const float *w, int taps,
                                                           float bias, int clamp, float lo,
                                                           float hi) {
    float32x4_t vlo = vdupq_n_f32(lo), vhi = vdupq_n_f32(hi), vb = vdupq_n_f32(bias);
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        /* named sums: as an array inside the loops gcc -O2 kept them in memory, a load and a
         * store around every FMLA (as it did with conv_avx512.c's) */
        float32x4_t a0 = vb, a1 = vb, a2 = vb, a3 = vb, a4 = vb, a5 = vb, a6 = vb, a7 = vb;
        for (int t = 0; t < taps; t++) {
            const float *p = x[t] + i;
            float32x4_t wv = vld1q_dup_f32(w + t);
            a0 = vfmaq_f32(a0, wv, vld1q_f32(p));
            a1 = vfmaq_f32(a1, wv, vld1q_f32(p + 4));
            a2 = vfmaq_f32(a2, wv, vld1q_f32(p + 8));
            a3 = vfmaq_f32(a3, wv, vld1q_f32(p + 12));
            a4 = vfmaq_f32(a4, wv, vld1q_f32(p + 16));
            a5 = vfmaq_f32(a5, wv, vld1q_f32(p + 20));
            a6 = vfmaq_f32(a6, wv, vld1q_f32(p + 24));
            a7 = vfmaq_f32(a7, wv, vld1q_f32(p + 28));
        }
        if (clamp) {
            a0 = ti__dwn_clamp(a0, vlo, vhi);
            a1 = ti__dwn_clamp(a1, vlo, vhi);
            a2 = ti__dwn_clamp(a2, vlo, vhi);
            a3 = ti__dwn_clamp(a3, vlo, vhi);
            a4 = ti__dwn_clamp(a4, vlo, vhi);
            a5 = ti__dwn_clamp(a5, vlo, vhi);
            a6 = ti__dwn_clamp(a6, vlo, vhi);
            a7 = ti__dwn_clamp(a7, vlo, vhi);
        }
        vst1q_f32(y + i, a0);
        vst1q_f32(y + i + 4, a1);
        vst1q_f32(y + i + 8, a2);
        vst1q_f32(y + i + 12, a3);
        vst1q_f32(y + i + 16, a4);
        vst1q_f32(y + i + 20, a5);
        vst1q_f32(y + i + 24, a6);
        vst1q_f32(y + i + 28, a7);
    }
    for (; i < n; i += 4) {
        float32x4_t a = vb;
        for (int t = 0; t < taps; t++) a = vfmaq_f32(a, vld1q_dup_f32(w + t), vld1q_f32(x[t] + i));
        vst1q_f32(y + i, clamp ? ti__dwn_clamp(a, vlo, vhi) : a);
    }
}

/* ti__dw_copy_fn: 4 at a time, the last 4 again where n is not a multiple. */
static __attribute__((noinline, unused)) void ti__dwn_copy(float *d, size_t ld, const float *s,
                                                           size_t ls, size_t rows, size_t n) {
    for (size_t r = 0; r < rows; r++) {
        float *dr = d + r * ld;
        const float *sr = s + r * ls;
        size_t i = 0;
        if (n < 4) {
            for (; i < n; i++) dr[i] = sr[i];
            continue;
        }
        for (; i + 4 <= n; i += 4) vst1q_f32(dr + i, vld1q_f32(sr + i));
        if (i < n) vst1q_f32(dr + n - 4, vld1q_f32(sr + n - 4));
    }
}

/* ti__dw_split_fn: LD2 on 8 source floats at a time, the last 8 again from an even start,
 * and the last even one alone when n is odd. */
static __attribute__((noinline, unused)) void ti__dwn_split(float *const *d, size_t ld,
                                                            const float *s, size_t ls,
                                                            size_t rows, size_t n) {
    for (size_t r = 0; r < rows; r++) {
        float *er = d[2 * (r & 1)] + (r >> 1) * ld, *orow = d[2 * (r & 1) + 1] + (r >> 1) * ld;
        const float *sr = s + r * ls;
        size_t i = 0;
        for (; i + 8 <= n; i += 8) {
            float32x4x2_t v = vld2q_f32(sr + i);
            vst1q_f32(er + i / 2, v.val[0]);
            vst1q_f32(orow + i / 2, v.val[1]);
        }
        if (i == n) continue;
        if (n >= 8) {
            size_t j = (n - 8) & ~(size_t)1;
            float32x4x2_t v = vld2q_f32(sr + j);
            vst1q_f32(er + j / 2, v.val[0]);
            vst1q_f32(orow + j / 2, v.val[1]);
            if (n & 1) er[n / 2] = sr[n - 1];
        } else {
            for (; i < n; i++) (i & 1 ? orow : er)[i / 2] = sr[i];
        }
    }
}

/* The flat max pooling kernel (ti__dw_max_fn): a lane takes v only when v > m, the scalar
 * rule (FMAX would let NaN through); four vectors at a time, then one. */
static __attribute__((noinline, unused)) void ti__dwn_max(float *y, size_t n,
                                                          const float *const *x, int taps) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16) { /* named maxima, as in ti__dwn_taps */
        float32x4_t a0 = vld1q_f32(x[0] + i), a1 = vld1q_f32(x[0] + i + 4);
        float32x4_t a2 = vld1q_f32(x[0] + i + 8), a3 = vld1q_f32(x[0] + i + 12);
        for (int t = 1; t < taps; t++) {
            const float *p = x[t] + i;
            float32x4_t b0 = vld1q_f32(p), b1 = vld1q_f32(p + 4);
            float32x4_t b2 = vld1q_f32(p + 8), b3 = vld1q_f32(p + 12);
            a0 = vbslq_f32(vcgtq_f32(b0, a0), b0, a0);
            a1 = vbslq_f32(vcgtq_f32(b1, a1), b1, a1);
            a2 = vbslq_f32(vcgtq_f32(b2, a2), b2, a2);
            a3 = vbslq_f32(vcgtq_f32(b3, a3), b3, a3);
        }
        vst1q_f32(y + i, a0);
        vst1q_f32(y + i + 4, a1);
        vst1q_f32(y + i + 8, a2);
        vst1q_f32(y + i + 12, a3);
    }
    for (; i < n; i += 4) {
        float32x4_t a = vld1q_f32(x[0] + i);
        for (int t = 1; t < taps; t++) {
            float32x4_t b = vld1q_f32(x[t] + i);
            a = vbslq_f32(vcgtq_f32(b, a), b, a);
        }
        vst1q_f32(y + i, a);
    }
}

TI__PRIVATE const ti__dw_isa *ti__dw_neon_isa(void) {
    static const ti__dw_isa isa = {TI__ISA_NEON,
                                   {{ti__dwn_k3s1, ti__dwn_k3s2}, {ti__dwn_k5s1, ti__dwn_k5s2}},
                                   {ti__mpn_s1, ti__mpn_s2},
                                   ti__dwn_taps, ti__dwn_copy, ti__dwn_split,
                                   ti__dwn_max, ti__ssum_neon, NULL, NULL, {NULL, NULL},
                                   {NULL, NULL},
                                   ti__mpn_k3s2, 0, 0, 0, 0, 0};
    return &isa;
}
#endif /* TI__ARM_NEON */
