/* Bias and fused activation over a block of a float32 output (ti__act_block_fn in
 * internal.h) for AVX-512F and AVX2: the expressions of ti__act_apply in vector form, so
 * ReLU, Clip and HardSwish give the same bits as the scalar loop (min / max take the
 * operand order that keeps the scalar answer for NaN and signed zeros). Sigmoid and SiLU
 * use a vector exp (below) within 2 ulp of expf and the division, so they agree with the
 * scalar loop to a few ulp, not bit for bit; infinities and NaN give the scalar answers.
 * They run four or eight vectors at a time where a block has them (ti__sigm512x4,
 * ti__sigm256x8). Used by the GEMM's epilogue, while a block of C is still in cache, by the
 * conv bias pass and by the depthwise outputs. Other activations are left to the scalar
 * loop (the functions return 0). Compiled with function-level target attributes, run only
 * when cpuid allows. Must not allocate. */
#ifdef TI__X86_SIMD
/* g++ (gcc 12, C++ mode, optimising) reports -Wuninitialized inside its own AVX-512
 * intrinsics (their "undefined" source operands) once inlined into our kernels. What
 * decides is the diagnostic state at the intrinsics header's lines, so it is set around
 * the header's first inclusion, which is this one (the cpu/x86 files come in name order
 * in the amalgamation), and restored after the last x86 file (cpu/x86/tfl_add_avx512.c). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

/* The scalar forms, element by element:
 *   RELU:       x > 0 ? x : 0      == max(x, 0): maxps gives its second operand (0) for NaN
 *                                     and for +-0 pairs, as the comparison does;
 *   CLIP:       x < a ? a : (x > b ? b : x) == min(b, max(a, x)) with the second operand
 *                                     returned for NaN and ties: x;
 *   HARD_SWISH: h = x * (1/6) + 0.5; x * min(1, max(0, h)) (h itself when NaN).
 * Additions, multiplications and divisions are the IEEE operations the scalar code does;
 * nothing is contracted into an FMA. */

/* exp(x): x = n ln2 + r with |r| <= ln2 / 2 (ln2 in two parts, so r is exact to about
 * 2^-32), exp(r) by its Taylor series to r^6 (truncation below 1.2e-7 relative), times 2^n.
 * Above 88.72 the result is +inf and below -103.9 it is 0, as expf's; NaN stays NaN. */
#define TI__EXP_HI     88.7228391f
#define TI__EXP_LO     -103.972084f
#define TI__EXP_LN2_HI 0.693145752f
#define TI__EXP_LN2_LO 1.42860677e-06f
#define TI__EXP_POLY(FMA, SET, r)                                                                  \
    FMA(FMA(FMA(FMA(FMA(FMA(SET(1.0f / 720.0f), r, SET(1.0f / 120.0f)), r, SET(1.0f / 24.0f)), r,  \
                    SET(1.0f / 6.0f)),                                                             \
                r, SET(0.5f)),                                                                     \
            r, SET(1.0f)),                                                                         \
        r, SET(1.0f))

TI__X86_INLINE TI__TARGET_AVX512 __m512 ti__exp512(__m512 x) {
    /* clamped so n stays small; NaN passes the max / min (second operand) */
    __m512 t = _mm512_min_ps(_mm512_set1_ps(100.0f), _mm512_max_ps(_mm512_set1_ps(-110.0f), x));
    __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(t, _mm512_set1_ps(1.44269504f)),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(TI__EXP_LN2_HI), t);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(TI__EXP_LN2_LO), r);
    __m512 e = _mm512_scalef_ps(TI__EXP_POLY(_mm512_fmadd_ps, _mm512_set1_ps, r), n);
    e = _mm512_mask_mov_ps(e, _mm512_cmp_ps_mask(x, _mm512_set1_ps(TI__EXP_HI), _CMP_GT_OQ),
                           _mm512_set1_ps(INFINITY));
    return _mm512_mask_mov_ps(e, _mm512_cmp_ps_mask(x, _mm512_set1_ps(TI__EXP_LO), _CMP_LT_OQ),
                              _mm512_setzero_ps());
}

TI__X86_INLINE TI__TARGET_AVX2 __m256 ti__exp256(__m256 x) {
    __m256 t = _mm256_min_ps(_mm256_set1_ps(100.0f), _mm256_max_ps(_mm256_set1_ps(-110.0f), x));
    __m256 n = _mm256_round_ps(_mm256_mul_ps(t, _mm256_set1_ps(1.44269504f)),
                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(TI__EXP_LN2_HI), t);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(TI__EXP_LN2_LO), r);
    /* 2^n as 2^h * 2^(n-h), h = floor(n / 2): each factor has a normal exponent field */
    __m256i ni = _mm256_cvtps_epi32(n), h = _mm256_srai_epi32(ni, 1);
    __m256i one = _mm256_set1_epi32(127);
    __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(h, one), 23));
    __m256 s2 =
        _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(_mm256_sub_epi32(ni, h), one), 23));
    __m256 e =
        _mm256_mul_ps(_mm256_mul_ps(TI__EXP_POLY(_mm256_fmadd_ps, _mm256_set1_ps, r), s1), s2);
    e = _mm256_blendv_ps(e, _mm256_set1_ps(INFINITY),
                         _mm256_cmp_ps(x, _mm256_set1_ps(TI__EXP_HI), _CMP_GT_OQ));
    return _mm256_blendv_ps(e, _mm256_setzero_ps(),
                            _mm256_cmp_ps(x, _mm256_set1_ps(TI__EXP_LO), _CMP_LT_OQ));
}

/* Sigmoid (SILU = 0) or SiLU (SILU = 1) of 16 lanes. Where every |x| <= 80 (the usual
 * case), exp(-x) lies in [e^-80, e^80], so the range checks of ti__exp512 are left out, and
 * exp(r) on |r| <= ln2 / 2 is a degree-5 polynomial fitted for least maximum relative error
 * (2.1e-7 evaluated in float, against 2.4e-7 for the degree-6 Taylor series), then the
 * division itself. The FMA units are what limits it on the Zen 4 (about 13 cycles a vector,
 * most of its operations theirs), and vdivps runs in a divider of its own: with a reciprocal
 * estimate (rcp14) and a Newton step instead, three more operations for those units, a SiLU
 * took 0.275 ns per element, 0.250 with the division (64 KiB in L2, best of 3000 calls, 2
 * alternating runs; both within 3e-7 of double precision). The polynomial replaced the
 * degree-6 Taylor series (with a Newton step on the quotient: 21 operations a vector):
 * 0.33-0.46 -> 0.28-0.40 ns. AVX2 takes the same polynomial. A vector with a
 * lane outside (or NaN) takes ti__exp512 and the division, so infinities, NaN and tiny
 * results keep the scalar answers. */
#define TI__SIGMOID_FAST_MAX 80.0f
#define TI__SIGM_POLY(FMA, SET, r)                                                          \
    FMA(FMA(FMA(FMA(FMA(SET(TI__SIGM_C5), r, SET(TI__SIGM_C4)), r, SET(TI__SIGM_C3)), r,     \
                SET(TI__SIGM_C2)),                                                          \
            r, SET(TI__SIGM_C1)),                                                           \
        r, SET(TI__SIGM_C0))
#define TI__SIGM_C5 0.00829766318f
#define TI__SIGM_C4 0.0419153827f
#define TI__SIGM_C3 0.166675746f
#define TI__SIGM_C2 0.499988955f
#define TI__SIGM_C1 0.999999690f
#define TI__SIGM_C0 1.00000007f
/* r = -x - n ln2 in one FMA with ln2 rounded to float (1.9e-9 off): |n| <= 116 here, so r is
 * off by 2.2e-7 at most, and at most 3.2e-7 relative in the result (test_act's sweep; 2.9e-7
 * with ln2 in two parts, as ti__exp512 has it). One FMA less: SiLU 0.210 -> 0.193 ns per
 * element (Zen 4, 64 KiB in L2, best of 3000 calls, 2 alternating runs). */
#define TI__SIGM_LN2 0.693147182f
/* ti__sigm512's fast path on vector k_ of x (TI__X4's steps, or one vector with k_ 0) */
#define TI__SIGM512_STEPS(X4, SILU, x)                                                      \
    {                                                                                       \
        const __m512 one_ = _mm512_set1_ps(1.0f);                                           \
        __m512 n_[4], r_[4], e_[4];                                                         \
        X4(n_[k_] = _mm512_roundscale_ps(_mm512_mul_ps(x[k_], _mm512_set1_ps(-1.44269504f)), \
                                         _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);)   \
        /* r = -x - n ln2 (TI__SIGM_LN2) */                                                 \
        X4(r_[k_] = _mm512_fnmsub_ps(n_[k_], _mm512_set1_ps(TI__SIGM_LN2), x[k_]);)         \
        X4(e_[k_] = _mm512_fmadd_ps(_mm512_set1_ps(TI__SIGM_C5), r_[k_],                    \
                                    _mm512_set1_ps(TI__SIGM_C4));)                          \
        X4(e_[k_] = _mm512_fmadd_ps(e_[k_], r_[k_], _mm512_set1_ps(TI__SIGM_C3));)          \
        X4(e_[k_] = _mm512_fmadd_ps(e_[k_], r_[k_], _mm512_set1_ps(TI__SIGM_C2));)          \
        X4(e_[k_] = _mm512_fmadd_ps(e_[k_], r_[k_], _mm512_set1_ps(TI__SIGM_C1));)          \
        X4(e_[k_] = _mm512_fmadd_ps(e_[k_], r_[k_], _mm512_set1_ps(TI__SIGM_C0));)          \
        X4(e_[k_] = _mm512_add_ps(one_, _mm512_scalef_ps(e_[k_], n_[k_]));) /* 1 + e^-x */  \
        X4(x[k_] = _mm512_div_ps(SILU ? x[k_] : one_, e_[k_]);)                             \
    }
#define TI__X1(S) { const int k_ = 0; S }
TI__X86_INLINE TI__TARGET_AVX512 __m512 ti__sigm512(const int SILU, __m512 x) {
    const __m512 one = _mm512_set1_ps(1.0f), zero = _mm512_setzero_ps();
    __m512 num = SILU ? x : one;
    __m512 ax = _mm512_castsi512_ps(
        _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(0x7fffffff)));
    if (_mm512_cmp_ps_mask(ax, _mm512_set1_ps(TI__SIGMOID_FAST_MAX), _CMP_NLE_UQ) != 0)
        return _mm512_div_ps(num, _mm512_add_ps(one, ti__exp512(_mm512_sub_ps(zero, x))));
    __m512 v[1] = {x};
    TI__SIGM512_STEPS(TI__X1, SILU, v)
    return v[0];
}

/* As ti__sigm512 for 8 lanes, with the cheaper operations of this ISA (the FP units of a
 * Zen 2 were the limit: SiLU 1.66 -> 1.2 ns per element, build/exp harness):
 * - n = round(-x log2 e) as the low bits of -x log2 e + 1.5 * 2^23 + 127 (one FMA rounds to
 *   an integer there), so 2^n is those bits shifted into the exponent field (|n| <= 116);
 * - the division itself: vdivps was faster than rcp_ps with Newton steps here. */
#define TI__SIGM256_MAGIC 12583039.0f /* 1.5 * 2^23 + 127 */
TI__X86_INLINE TI__TARGET_AVX2 __m256 ti__sigm256(const int SILU, __m256 x) {
    const __m256 one = _mm256_set1_ps(1.0f), zero = _mm256_setzero_ps();
    __m256 num = SILU ? x : one;
    __m256 ax = _mm256_and_ps(x, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff)));
    if (_mm256_movemask_ps(_mm256_cmp_ps(ax, _mm256_set1_ps(TI__SIGMOID_FAST_MAX), _CMP_NLE_UQ)))
        return _mm256_div_ps(num, _mm256_add_ps(one, ti__exp256(_mm256_sub_ps(zero, x))));
    const __m256 magic = _mm256_set1_ps(TI__SIGM256_MAGIC);
    __m256 nm = _mm256_fnmadd_ps(x, _mm256_set1_ps(1.44269504f), magic);
    __m256 n = _mm256_sub_ps(nm, magic);
    __m256 r = _mm256_fnmsub_ps(n, _mm256_set1_ps(TI__SIGM_LN2), x); /* -x - n ln2 */
    __m256 s2n = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_castps_si256(nm), 23));
    __m256 d = _mm256_add_ps(
        one, _mm256_mul_ps(TI__SIGM_POLY(_mm256_fmadd_ps, _mm256_set1_ps, r), s2n));
    return _mm256_div_ps(num, d);
}

/* A statement for each of four vectors, k_ = 0..3: a step of four dependency chains at a
 * time, so that they interleave (gcc does not reorder them on x86). */
#define TI__X4(S)                                                                                  \
    { const int k_ = 0; S } { const int k_ = 1; S } { const int k_ = 2; S } { const int k_ = 3; S }
#define TI__X8(S)                                                                           \
    TI__X4(S) { const int k_ = 4; S } { const int k_ = 5; S } { const int k_ = 6; S }        \
    { const int k_ = 7; S }

/* ti__sigm512 on four vectors, step by step across them: the same operations on each lane,
 * so the same bits. One vector at a time, its chain of about 90 cycles filled the FP
 * scheduler with operations waiting on each other (SiLU 2.1 ns per element on a Zen 2,
 * build/exp harness; it was a third of EfficientNet-B0's time, perf). */
TI__X86_INLINE TI__TARGET_AVX512 void ti__sigm512x4(const int SILU, __m512 *x) {
    const __m512i absm = _mm512_set1_epi32(0x7fffffff);
    __mmask16 beyond = 0;
    TI__X4(beyond |= _mm512_cmp_ps_mask(_mm512_castsi512_ps(_mm512_and_si512(
                                            _mm512_castps_si512(x[k_]), absm)),
                                        _mm512_set1_ps(TI__SIGMOID_FAST_MAX), _CMP_NLE_UQ);)
    if (beyond != 0) {
        TI__X4(x[k_] = ti__sigm512(SILU, x[k_]);)
        return;
    }
    TI__SIGM512_STEPS(TI__X4, SILU, x)
}

/* One activation on a vector (act is a constant once inlined, so the switch leaves the
 * loops: per vector, in the loop, it cost about a third of the epilogue's time, perf of
 * MobileNetV3-Small). */
TI__X86_INLINE TI__TARGET_AVX512 __m512 ti__act512(const int act, __m512 x, __m512 va,
                                                   __m512 vb) {
    const __m512 zero = _mm512_setzero_ps(), one = _mm512_set1_ps(1.0f);
    switch (act) {
    case TI__ACT_RELU: return _mm512_max_ps(x, zero);
    case TI__ACT_CLIP: return _mm512_min_ps(vb, _mm512_max_ps(va, x));
    case TI__ACT_HARD_SWISH: {
        __m512 h = _mm512_add_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.0f / 6.0f)),
                                 _mm512_set1_ps(0.5f));
        return _mm512_mul_ps(x, _mm512_min_ps(one, _mm512_max_ps(zero, h)));
    }
    case TI__ACT_SIGMOID: return ti__sigm512(0, x); /* 1 / (1 + exp(-x)) */
    case TI__ACT_SILU: return ti__sigm512(1, x);    /* x / (1 + exp(-x)) */
    default: return x;
    }
}

/* rows x cols of y (row stride ldy), bias per row (NULL: none), with one activation. */
/* As ti__act_col256 with 16 lanes. */
TI__X86_INLINE TI__TARGET_AVX512 void ti__act_col512(const int act, __m512 va, __m512 vb,
                                                     const float *bias, float *y, size_t n) {
    const __m512 zero = _mm512_setzero_ps();
    size_t i = 0;
    if (act == TI__ACT_SIGMOID || act == TI__ACT_SILU)
        for (; i + 64 <= n; i += 64) {
            __m512 x[4];
            TI__X4(x[k_] = _mm512_add_ps(_mm512_loadu_ps(y + i + 16 * k_),
                                         bias != NULL ? _mm512_loadu_ps(bias + i + 16 * k_)
                                                      : zero);)
            ti__sigm512x4(act == TI__ACT_SILU, x);
            TI__X4(_mm512_storeu_ps(y + i + 16 * k_, x[k_]);)
        }
    for (; i < n; i += 16) {
        __mmask16 m = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1u);
        __m512 x = _mm512_add_ps(_mm512_maskz_loadu_ps(m, y + i),
                                 bias != NULL ? _mm512_maskz_loadu_ps(m, bias + i) : zero);
        _mm512_mask_storeu_ps(y + i, m, ti__act512(act, x, va, vb));
    }
}

/* ti__act_rows512's queue: the vector at P (plus the row's bias) in, the four sigmoids or
 * SiLUs computed and stored once it holds four */
#define TI__ACT512_QUEUE(P)                                                                 \
    {                                                                                       \
        at[nq] = (P);                                                                       \
        xq[nq] = _mm512_add_ps(_mm512_loadu_ps(P), vbias);                                  \
        if (++nq == 4) {                                                                    \
            ti__sigm512x4(act == TI__ACT_SILU, xq);                                         \
            TI__X4(_mm512_storeu_ps(at[k_], xq[k_]);)                                       \
            nq = 0;                                                                         \
        }                                                                                   \
    }
TI__X86_INLINE TI__TARGET_AVX512 void ti__act_rows512(const int act, float a, float b,
                                                      const float *bias, float *y, size_t ldy,
                                                      size_t rows, size_t cols) {
    const __m512 va = _mm512_set1_ps(a), vb = _mm512_set1_ps(b);
    size_t full = cols & ~(size_t)15, tail = cols & 15;
    const int SIG = act == TI__ACT_SIGMOID || act == TI__ACT_SILU;
    float *at[4];
    __m512 xq[4];
    int nq = 0;
    if (cols == 1 && ldy == 1 && act != TI__ACT_NONE) {
        ti__act_col512(act, va, vb, bias, y, rows);
        return;
    }
    if (SIG && rows > 1 && ldy == cols && tail != 0) {
        /* Rows that lie end to end and end in a part vector (a 7 x 7 map's 49 floats: 3
         * vectors and one float): the bias by rows (0 without one, as below: -0 + 0 is
         * +0), then the sigmoid over them as one row, in whole vectors but the last. The
         * same operations on each float: the same bits. Row by row, the part vectors took
         * a quarter of the vectors and a chain each (1152 rows of 49, EfficientNet-B0's
         * 7 x 7 maps: 0.52 ns an element, rows of 672 0.25). The loop is ti__act_col512's
         * without its addition, which would turn a sum of -0 into +0. */
        for (size_t r = 0; r < rows; r++) {
            float *p = y + r * ldy;
            const __m512 vbias = _mm512_set1_ps(bias != NULL ? bias[r] : 0.0f);
            for (size_t i = 0; i < full; i += 16)
                _mm512_storeu_ps(p + i, _mm512_add_ps(_mm512_loadu_ps(p + i), vbias));
            __mmask16 tm = (__mmask16)((1u << tail) - 1u);
            _mm512_mask_storeu_ps(p + full, tm,
                                  _mm512_add_ps(_mm512_maskz_loadu_ps(tm, p + full), vbias));
        }
        size_t n = rows * cols, i = 0;
        for (; i + 64 <= n; i += 64) {
            __m512 x[4];
            TI__X4(x[k_] = _mm512_loadu_ps(y + i + 16 * k_);)
            ti__sigm512x4(act == TI__ACT_SILU, x);
            TI__X4(_mm512_storeu_ps(y + i + 16 * k_, x[k_]);)
        }
        for (; i < n; i += 16) {
            __mmask16 m = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1u);
            __m512 v = _mm512_maskz_loadu_ps(m, y + i);
            _mm512_mask_storeu_ps(y + i, m, ti__act512(act, v, va, vb));
        }
        return;
    }
    __mmask16 tm = (__mmask16)((1u << tail) - 1u);
    size_t r = 0;
    /* Rows of one or two whole vectors (a GEMM's slivers of 16 or 32 columns): four rows or
     * two at a time in registers, not through the queue below. EfficientNet-B0 (SiLU after
     * its 1x1 convs), per-node minima, 3 x 100 runs alternating, 1 thread, Zen 4: 16 -> 96 at
     * 112 x 112 with its depthwise conv 0.979 -> 0.897 ms, the sum 10.267 -> 10.036. */
    if (SIG && tail == 0 && (full == 16 || full == 32))
        for (; r + 64 / full <= rows; r += 64 / full) {
            __m512 x[4];
            size_t per = full / 16, row[4]; /* vectors a row; vector k_'s row */
            float *v[4];                    /* vector k_'s floats */
            TI__X4(row[k_] = r + (size_t)k_ / per; v[k_] = y + row[k_] * ldy + 16 * (k_ % per);)
            TI__X4(x[k_] = _mm512_add_ps(_mm512_loadu_ps(v[k_]),
                                         _mm512_set1_ps(bias ? bias[row[k_]] : 0.0f));)
            ti__sigm512x4(act == TI__ACT_SILU, x);
            TI__X4(_mm512_storeu_ps(v[k_], x[k_]);)
        }
    for (; r < rows; r++) {
        float bv = bias != NULL ? bias[r] : 0.0f;
        if (act == TI__ACT_NONE && bv == 0.0f) continue;
        const __m512 vbias = _mm512_set1_ps(bv);
        float *p = y + r * ldy;
        size_t i = 0;
        if (SIG) {
            /* whole vectors four at a time: the queue left by the rows before filled first,
             * then the row's own groups of four in registers, the rest queued (across rows:
             * a GEMM's slivers are rows of two vectors). The queue lives in memory: rows of
             * 1024 floats took a SiLU 0.250 ns per element through it, 0.210 in registers
             * (Zen 4, 64 KiB in L2, best of 3000 calls). */
            for (; i < full && nq != 0; i += 16) TI__ACT512_QUEUE(p + i);
            for (; i + 64 <= full; i += 64) {
                __m512 x[4];
                TI__X4(x[k_] = _mm512_add_ps(_mm512_loadu_ps(p + i + 16 * k_), vbias);)
                ti__sigm512x4(act == TI__ACT_SILU, x);
                TI__X4(_mm512_storeu_ps(p + i + 16 * k_, x[k_]);)
            }
            for (; i < full; i += 16) TI__ACT512_QUEUE(p + i);
        }
        for (; i < full; i += 16)
            _mm512_storeu_ps(p + i,
                             ti__act512(act, _mm512_add_ps(_mm512_loadu_ps(p + i), vbias), va, vb));
        if (tail != 0) {
            __m512 x = _mm512_add_ps(_mm512_maskz_loadu_ps(tm, p + full), vbias);
            _mm512_mask_storeu_ps(p + full, tm, ti__act512(act, x, va, vb));
        }
    }
    for (int q = 0; q < nq; q++) _mm512_storeu_ps(at[q], ti__act512(act, xq[q], va, vb));
}

/* ONNX Relu (cpu/unary.c): max_ps(0, x) is x unless 0 > x, so NaN and -0 come through as
 * the scalar rule x < 0 ? 0 : x leaves them (the conv epilogue's max_ps(x, 0) would make
 * NaN 0). The scalar loop compiled to a compare and branch per float: 0.31 ms for 75 264
 * floats of random sign (1 thread, Xeon), where this takes a few microseconds. */
TI__PRIVATE TI__TARGET_AVX512 void ti__relu_avx512(const float *x, float *y, size_t n) {
    const __m512 z = _mm512_setzero_ps();
    size_t i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, _mm512_max_ps(z, _mm512_loadu_ps(x + i)));
    if (i < n) {
        __mmask16 m = (__mmask16)((1u << (n - i)) - 1u);
        _mm512_mask_storeu_ps(y + i, m, _mm512_max_ps(z, _mm512_maskz_loadu_ps(m, x + i)));
    }
}

/* ONNX Erf (cpu/unary.c) by TI__ERF_P / TI__ERF_Q (core/internal.h): glibc's erff took
 * about 34 cycles a float (the erf of a small transformer's GELU, 2 x 4096 floats: 0.082
 * of its 0.19 ms, Xeon). min(4, x) and max(-4, .) keep NaN (max_ps / min_ps return their
 * second operand on NaN). */
TI__X86_INLINE TI__TARGET_AVX512 __m512 ti__erf512(__m512 x) {
    x = _mm512_max_ps(_mm512_set1_ps(-4.0f), _mm512_min_ps(_mm512_set1_ps(4.0f), x));
    __m512 t = _mm512_mul_ps(x, x);
    __m512 p = TI__ERF_POLY(_mm512_fmadd_ps, _mm512_set1_ps, t, P);
    __m512 q = TI__ERF_POLY(_mm512_fmadd_ps, _mm512_set1_ps, t, Q);
    __m512 y = _mm512_div_ps(_mm512_mul_ps(x, p), q);
    return _mm512_max_ps(_mm512_set1_ps(-1.0f), _mm512_min_ps(_mm512_set1_ps(1.0f), y));
}
TI__PRIVATE TI__TARGET_AVX512 void ti__erf_avx512(const float *x, float *y, size_t n) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, ti__erf512(_mm512_loadu_ps(x + i)));
    if (i < n) {
        __mmask16 m = (__mmask16)((1u << (n - i)) - 1u);
        _mm512_mask_storeu_ps(y + i, m, ti__erf512(_mm512_maskz_loadu_ps(m, x + i)));
    }
}

/* Softmax rows: expf per float, a branch per max compare and a double sum took 0.78 ms for
 * attention-like scores of 12 x 128 x 128 (onnxruntime: 0.068; 1 thread, Xeon). The max's
 * order does not change the output: a NaN anywhere makes every output NaN either way. */
TI__PRIVATE TI__TARGET_AVX512 void ti__softmax_row_avx512(const float *x, float *y, size_t n,
                                                         int log) {
    size_t full = n / 16 * 16, i;
    __mmask16 k = (__mmask16)((1u << (n - full)) - 1u);
    __m512 m = _mm512_set1_ps(x[0]);
    for (i = 0; i < full; i += 16) m = _mm512_max_ps(_mm512_loadu_ps(x + i), m);
    if (k) m = _mm512_mask_max_ps(m, k, _mm512_maskz_loadu_ps(k, x + full), m);
    float mx = _mm512_reduce_max_ps(m);
    __m512 vmx = _mm512_set1_ps(mx), s = _mm512_setzero_ps();
    for (i = 0; i < full; i += 16) {
        __m512 e = ti__exp512(_mm512_sub_ps(_mm512_loadu_ps(x + i), vmx));
        if (!log) _mm512_storeu_ps(y + i, e);
        s = _mm512_add_ps(s, e);
    }
    if (k) {
        __m512 e = ti__exp512(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + full), vmx));
        if (!log) _mm512_mask_storeu_ps(y + full, k, e);
        s = _mm512_mask_add_ps(s, k, s, e);
    }
    float sum = _mm512_reduce_add_ps(s);
    if (log) { /* y = x - max - log(sum), as the scalar rows */
        __m512 ls = _mm512_set1_ps(logf(sum));
        for (i = 0; i < full; i += 16)
            _mm512_storeu_ps(y + i, _mm512_sub_ps(_mm512_sub_ps(_mm512_loadu_ps(x + i), vmx), ls));
        if (k)
            _mm512_mask_storeu_ps(y + full, k,
                                  _mm512_sub_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + full),
                                                              vmx), ls));
        return;
    }
    __m512 inv = _mm512_set1_ps(1.0f / sum);
    for (i = 0; i < full; i += 16)
        _mm512_storeu_ps(y + i, _mm512_mul_ps(_mm512_loadu_ps(y + i), inv));
    if (k)
        _mm512_mask_storeu_ps(y + full, k,
                              _mm512_mul_ps(_mm512_maskz_loadu_ps(k, y + full), inv));
}

TI__PRIVATE TI__TARGET_AVX512 int ti__act_block_avx512(int act, float a, float b, const float *bias,
                                                       float *y, size_t ldy, size_t rows,
                                                       size_t cols) {
    if (act == TI__ACT_CLIP && !(a <= b)) return 0; /* min above max: the scalar order decides */
    switch (act) {
#define TI__ACT512_CASE(A)                                                                         \
    case A: ti__act_rows512(A, a, b, bias, y, ldy, rows, cols); return 1;
        TI__ACT512_CASE(TI__ACT_NONE)
        TI__ACT512_CASE(TI__ACT_RELU)
        TI__ACT512_CASE(TI__ACT_CLIP)
        TI__ACT512_CASE(TI__ACT_HARD_SWISH)
        TI__ACT512_CASE(TI__ACT_SIGMOID)
        TI__ACT512_CASE(TI__ACT_SILU)
#undef TI__ACT512_CASE
    default: return 0;
    }
}

/* ti__sigm256 on eight vectors, step by step across them (as ti__sigm512x4 on four): the
 * same bits. With four (about 60 cycles of dependent operations each), SiLU took 0.55 ns an
 * element on the Zen 3 (14 cycles a vector, a block of 128 x 16 in L1), the FP units mostly
 * waiting; with eight, EfficientNet-B0 at 1 thread 16.374 -> 16.012 ms (sums of per-node
 * minima, 3 x 20 runs alternating, bench/ab.py): its 16 -> 96 conv at 112 x 112 1.376 ->
 * 1.321, the depthwise 32 at 112 x 112 0.500 -> 0.455. */
TI__X86_INLINE TI__TARGET_AVX2 void ti__sigm256x8(const int SILU, __m256 *x) {
    const __m256 one = _mm256_set1_ps(1.0f), zero = _mm256_setzero_ps();
    const __m256 absm = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    const __m256 vfast = _mm256_set1_ps(TI__SIGMOID_FAST_MAX);
    const __m256 magic = _mm256_set1_ps(TI__SIGM256_MAGIC);
    __m256 beyond = zero;
    TI__X8(beyond = _mm256_or_ps(beyond, _mm256_cmp_ps(_mm256_and_ps(x[k_], absm), vfast,
                                                       _CMP_NLE_UQ));)
    if (_mm256_movemask_ps(beyond)) {
        TI__X8(x[k_] = ti__sigm256(SILU, x[k_]);)
        return;
    }
    __m256 nm[8], n[8], r[8], e[8];
    TI__X8(nm[k_] = _mm256_fnmadd_ps(x[k_], _mm256_set1_ps(1.44269504f), magic);)
    TI__X8(n[k_] = _mm256_sub_ps(nm[k_], magic);)
    TI__X8(r[k_] = _mm256_fnmsub_ps(n[k_], _mm256_set1_ps(TI__SIGM_LN2), x[k_]);)
    TI__X8(e[k_] = _mm256_fmadd_ps(_mm256_set1_ps(TI__SIGM_C5), r[k_],
                                   _mm256_set1_ps(TI__SIGM_C4));)
    TI__X8(e[k_] = _mm256_fmadd_ps(e[k_], r[k_], _mm256_set1_ps(TI__SIGM_C3));)
    TI__X8(e[k_] = _mm256_fmadd_ps(e[k_], r[k_], _mm256_set1_ps(TI__SIGM_C2));)
    TI__X8(e[k_] = _mm256_fmadd_ps(e[k_], r[k_], _mm256_set1_ps(TI__SIGM_C1));)
    TI__X8(e[k_] = _mm256_fmadd_ps(e[k_], r[k_], _mm256_set1_ps(TI__SIGM_C0));)
    TI__X8(e[k_] = _mm256_add_ps(one, _mm256_mul_ps(e[k_], _mm256_castsi256_ps(_mm256_slli_epi32(
                       _mm256_castps_si256(nm[k_]), 23))));)
    TI__X8(x[k_] = _mm256_div_ps(SILU ? x[k_] : one, e[k_]);)
}

TI__X86_INLINE TI__TARGET_AVX2 __m256 ti__act256(const int act, __m256 x, __m256 va, __m256 vb) {
    const __m256 zero = _mm256_setzero_ps(), one = _mm256_set1_ps(1.0f);
    switch (act) {
    case TI__ACT_RELU: return _mm256_max_ps(x, zero);
    case TI__ACT_CLIP: return _mm256_min_ps(vb, _mm256_max_ps(va, x));
    case TI__ACT_HARD_SWISH: {
        __m256 h = _mm256_add_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.0f / 6.0f)),
                                 _mm256_set1_ps(0.5f));
        return _mm256_mul_ps(x, _mm256_min_ps(one, _mm256_max_ps(zero, h)));
    }
    case TI__ACT_SIGMOID: return ti__sigm256(0, x); /* 1 / (1 + exp(-x)) */
    case TI__ACT_SILU: return ti__sigm256(1, x);    /* x / (1 + exp(-x)) */
    default: return x;
    }
}

/* One float per row, the rows adjacent (cols 1, ldy 1: a GEMM's single column, e.g. a conv
 * on a 1 x 1 map): whole vectors down the column with the bias loaded per element, the
 * operations of the row loop on each element, so the same bits. act is not NONE. */
TI__X86_INLINE TI__TARGET_AVX2 void ti__act_col256(const int act, __m256 va, __m256 vb,
                                                   const float *bias, float *y, size_t n) {
    const __m256 zero = _mm256_setzero_ps();
    size_t i = 0;
    if (act == TI__ACT_SIGMOID || act == TI__ACT_SILU)
        for (; i + 64 <= n; i += 64) {
            __m256 x[8];
            TI__X8(x[k_] = _mm256_add_ps(_mm256_loadu_ps(y + i + 8 * k_),
                                         bias != NULL ? _mm256_loadu_ps(bias + i + 8 * k_) : zero);)
            ti__sigm256x8(act == TI__ACT_SILU, x);
            TI__X8(_mm256_storeu_ps(y + i + 8 * k_, x[k_]);)
        }
    for (; i + 8 <= n; i += 8) {
        __m256 x = _mm256_add_ps(_mm256_loadu_ps(y + i),
                                 bias != NULL ? _mm256_loadu_ps(bias + i) : zero);
        _mm256_storeu_ps(y + i, ti__act256(act, x, va, vb));
    }
    if (i < n) {
        __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(n - i)),
                                       _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        __m256 x = _mm256_add_ps(_mm256_maskload_ps(y + i, m),
                                 bias != NULL ? _mm256_maskload_ps(bias + i, m) : zero);
        _mm256_maskstore_ps(y + i, m, ti__act256(act, x, va, vb));
    }
}

/* ti__act_rows256's queue (as TI__ACT512_QUEUE, eight vectors) */
#define TI__ACT256_QUEUE(P)                                                                 \
    {                                                                                       \
        at[nq] = (P);                                                                       \
        xq[nq] = _mm256_add_ps(_mm256_loadu_ps(P), vbias);                                  \
        if (++nq == 8) {                                                                    \
            ti__sigm256x8(act == TI__ACT_SILU, xq);                                         \
            TI__X8(_mm256_storeu_ps(at[k_], xq[k_]);)                                       \
            nq = 0;                                                                         \
        }                                                                                   \
    }
TI__X86_INLINE TI__TARGET_AVX2 void ti__act_rows256(const int act, float a, float b,
                                                    const float *bias, float *y, size_t ldy,
                                                    size_t rows, size_t cols) {
    const __m256 va = _mm256_set1_ps(a), vb = _mm256_set1_ps(b);
    const int SIG = act == TI__ACT_SIGMOID || act == TI__ACT_SILU;
    float *at[8];
    __m256 xq[8];
    int nq = 0;
    if (cols == 1 && ldy == 1 && act != TI__ACT_NONE) {
        ti__act_col256(act, va, vb, bias, y, rows);
        return;
    }
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    if (SIG && rows > 1 && ldy == cols && cols % 8 != 0) {
        /* rows end to end with a part vector each: as ti__act_rows512 */
        __m256i tm = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(cols % 8)), lane);
        size_t full = cols / 8 * 8;
        for (size_t r = 0; r < rows; r++) {
            float *p = y + r * ldy;
            const __m256 vbias = _mm256_set1_ps(bias != NULL ? bias[r] : 0.0f);
            for (size_t i = 0; i < full; i += 8)
                _mm256_storeu_ps(p + i, _mm256_add_ps(_mm256_loadu_ps(p + i), vbias));
            _mm256_maskstore_ps(p + full, tm,
                                _mm256_add_ps(_mm256_maskload_ps(p + full, tm), vbias));
        }
        size_t n = rows * cols, i = 0;
        for (; i + 64 <= n; i += 64) {
            __m256 x[8];
            TI__X8(x[k_] = _mm256_loadu_ps(y + i + 8 * k_);)
            ti__sigm256x8(act == TI__ACT_SILU, x);
            TI__X8(_mm256_storeu_ps(y + i + 8 * k_, x[k_]);)
        }
        for (; i < n; i += 8) {
            __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32(n - i >= 8 ? 8 : (int)(n - i)), lane);
            _mm256_maskstore_ps(y + i, m, ti__act256(act, _mm256_maskload_ps(y + i, m), va, vb));
        }
        return;
    }
    size_t r = 0, full = cols / 8 * 8;
    /* As ti__act_rows512: rows of one or two vectors eight or four at a time, and the row's
     * own groups of eight in registers. EfficientNet-B0 with AVX2 forced on the Zen 4,
     * per-node minima, 3 x 60 runs alternating, 1 thread: 12.537 -> 12.035 ms. */
    if (SIG && (cols == 8 || cols == 16))
        for (; r + 64 / cols <= rows; r += 64 / cols) {
            __m256 x[8];
            size_t per = cols / 8, row[8]; /* vectors a row; vector k_'s row */
            float *v[8];                   /* vector k_'s floats */
            TI__X8(row[k_] = r + (size_t)k_ / per; v[k_] = y + row[k_] * ldy + 8 * (k_ % per);)
            TI__X8(x[k_] = _mm256_add_ps(_mm256_loadu_ps(v[k_]),
                                         _mm256_set1_ps(bias ? bias[row[k_]] : 0.0f));)
            ti__sigm256x8(act == TI__ACT_SILU, x);
            TI__X8(_mm256_storeu_ps(v[k_], x[k_]);)
        }
    for (; r < rows; r++) {
        float bv = bias != NULL ? bias[r] : 0.0f;
        if (act == TI__ACT_NONE && bv == 0.0f) continue;
        const __m256 vbias = _mm256_set1_ps(bv);
        float *p = y + r * ldy;
        size_t i = 0;
        if (SIG) { /* the queue filled, the row's groups of eight, the rest queued */
            for (; i < full && nq != 0; i += 8) TI__ACT256_QUEUE(p + i);
            for (; i + 64 <= full; i += 64) {
                __m256 x[8];
                TI__X8(x[k_] = _mm256_add_ps(_mm256_loadu_ps(p + i + 8 * k_), vbias);)
                ti__sigm256x8(act == TI__ACT_SILU, x);
                TI__X8(_mm256_storeu_ps(p + i + 8 * k_, x[k_]);)
            }
            for (; i < full; i += 8) TI__ACT256_QUEUE(p + i);
        }
        for (; i + 8 <= cols; i += 8)
            _mm256_storeu_ps(p + i,
                             ti__act256(act, _mm256_add_ps(_mm256_loadu_ps(p + i), vbias), va, vb));
        if (i < cols) { /* the tail in a masked vector too: ti__act_apply inlined here, with
                         * act constant, would be contracted to FMAs by clang (other bits) */
            __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(cols - i)), lane);
            __m256 x = _mm256_add_ps(_mm256_maskload_ps(p + i, m), vbias);
            _mm256_maskstore_ps(p + i, m, ti__act256(act, x, va, vb));
        }
    }
    for (int q = 0; q < nq; q++) _mm256_storeu_ps(at[q], ti__act256(act, xq[q], va, vb));
}

TI__PRIVATE TI__TARGET_AVX2 void ti__relu_avx2(const float *x, float *y, size_t n) {
    const __m256 z = _mm256_setzero_ps();
    size_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_max_ps(z, _mm256_loadu_ps(x + i)));
    for (; i < n; i++) y[i] = x[i] < 0.0f ? 0.0f : x[i];
}

TI__X86_INLINE TI__TARGET_AVX2 __m256 ti__erf256(__m256 x) { /* as ti__erf512 */
    x = _mm256_max_ps(_mm256_set1_ps(-4.0f), _mm256_min_ps(_mm256_set1_ps(4.0f), x));
    __m256 t = _mm256_mul_ps(x, x);
    __m256 p = TI__ERF_POLY(_mm256_fmadd_ps, _mm256_set1_ps, t, P);
    __m256 q = TI__ERF_POLY(_mm256_fmadd_ps, _mm256_set1_ps, t, Q);
    __m256 y = _mm256_div_ps(_mm256_mul_ps(x, p), q);
    return _mm256_max_ps(_mm256_set1_ps(-1.0f), _mm256_min_ps(_mm256_set1_ps(1.0f), y));
}
TI__PRIVATE TI__TARGET_AVX2 void ti__erf_avx2(const float *x, float *y, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, ti__erf256(_mm256_loadu_ps(x + i)));
    if (i < n) { /* the last few through a vector on the stack */
        float t[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        for (size_t k = i; k < n; k++) t[k - i] = x[k];
        _mm256_storeu_ps(t, ti__erf256(_mm256_loadu_ps(t)));
        for (size_t k = i; k < n; k++) y[k] = t[k - i];
    }
}

TI__PRIVATE TI__TARGET_AVX2 void ti__softmax_row_avx2(const float *x, float *y, size_t n,
                                                     int log) { /* as the AVX-512 one */
    size_t full = n / 8 * 8, i;
    __m256 m = _mm256_set1_ps(x[0]);
    for (i = 0; i < full; i += 8) m = _mm256_max_ps(_mm256_loadu_ps(x + i), m);
    float lanes[8];
    _mm256_storeu_ps(lanes, m);
    float mx = lanes[0];
    for (i = 1; i < 8; i++) mx = lanes[i] > mx ? lanes[i] : mx;
    for (i = full; i < n; i++) mx = x[i] > mx ? x[i] : mx;
    __m256 vmx = _mm256_set1_ps(mx), s = _mm256_setzero_ps();
    for (i = 0; i < full; i += 8) {
        __m256 e = ti__exp256(_mm256_sub_ps(_mm256_loadu_ps(x + i), vmx));
        if (!log) _mm256_storeu_ps(y + i, e);
        s = _mm256_add_ps(s, e);
    }
    if (full < n) { /* the last few through a vector on the stack, padded with -inf (e 0) */
        float t[8];
        for (i = 0; i < 8; i++) t[i] = full + i < n ? x[full + i] : -INFINITY;
        __m256 e = ti__exp256(_mm256_sub_ps(_mm256_loadu_ps(t), vmx));
        _mm256_storeu_ps(t, e);
        if (!log)
            for (i = full; i < n; i++) y[i] = t[i - full];
        s = _mm256_add_ps(s, e);
    }
    _mm256_storeu_ps(lanes, s);
    float sum = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) +
                ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
    if (log) {
        float ls = logf(sum);
        for (i = 0; i < n; i++) y[i] = x[i] - mx - ls;
        return;
    }
    __m256 inv = _mm256_set1_ps(1.0f / sum);
    for (i = 0; i < full; i += 8)
        _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_loadu_ps(y + i), inv));
    for (i = full; i < n; i++) y[i] *= 1.0f / sum;
}

TI__PRIVATE TI__TARGET_AVX2 int ti__act_block_avx2(int act, float a, float b, const float *bias,
                                                   float *y, size_t ldy, size_t rows, size_t cols) {
    if (act == TI__ACT_CLIP && !(a <= b)) return 0; /* min above max: the scalar order decides */
    switch (act) {
#define TI__ACT256_CASE(A)                                                                         \
    case A: ti__act_rows256(A, a, b, bias, y, ldy, rows, cols); return 1;
        TI__ACT256_CASE(TI__ACT_NONE)
        TI__ACT256_CASE(TI__ACT_RELU)
        TI__ACT256_CASE(TI__ACT_CLIP)
        TI__ACT256_CASE(TI__ACT_HARD_SWISH)
        TI__ACT256_CASE(TI__ACT_SIGMOID)
        TI__ACT256_CASE(TI__ACT_SILU)
#undef TI__ACT256_CASE
    default: return 0;
    }
}
#undef TI__X4
#undef TI__ACT512_QUEUE
#undef TI__ACT256_QUEUE
#endif /* TI__X86_SIMD */
