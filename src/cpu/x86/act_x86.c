/* Bias and fused activation over a block of a float32 output (ti__act_block_fn in
 * internal.h) for AVX-512F and AVX2: the expressions of ti__act_apply in vector form, so
 * the results are the same bit for bit as the scalar loop (min / max take the operand
 * order that keeps the scalar answer for NaN and signed zeros). Used by the GEMM's
 * epilogue, while a block of C is still in cache, and by the conv bias pass. Activations
 * with a transcendental function (sigmoid, SiLU, tanh) are left to the scalar loop (the
 * functions return 0). Compiled with function-level target attributes, run only when
 * cpuid allows. Must not allocate. */
#ifdef TI__X86_SIMD
#include <immintrin.h>

/* The scalar forms, element by element:
 *   RELU:       x > 0 ? x : 0      == max(x, 0): maxps gives its second operand (0) for NaN
 *                                     and for +-0 pairs, as the comparison does;
 *   CLIP:       x < a ? a : (x > b ? b : x) == min(b, max(a, x)) with the second operand
 *                                     returned for NaN and ties: x;
 *   HARD_SWISH: h = x / 6 + 0.5; x * min(1, max(0, h)) (h itself when NaN).
 * Division, addition and multiplication are the IEEE operations the scalar code does;
 * nothing is contracted into an FMA. */

TI__PRIVATE TI__TARGET_AVX512 int ti__act_block_avx512(int act, float a, float b,
                                                       const float *bias, float *y, size_t ldy,
                                                       size_t rows, size_t cols) {
    if ((act != TI__ACT_NONE && act != TI__ACT_RELU && act != TI__ACT_CLIP &&
         act != TI__ACT_HARD_SWISH) ||
        (act == TI__ACT_CLIP && !(a <= b))) /* min above max: the scalar order decides */
        return 0;
    const __m512 va = _mm512_set1_ps(a), vb = _mm512_set1_ps(b), zero = _mm512_setzero_ps();
    const __m512 one = _mm512_set1_ps(1.0f), six = _mm512_set1_ps(6.0f),
                 half = _mm512_set1_ps(0.5f);
    size_t tail = cols & 15;
    __mmask16 tm = (__mmask16)((1u << tail) - 1u);
    for (size_t r = 0; r < rows; r++) {
        float bv = bias != NULL ? bias[r] : 0.0f;
        if (act == TI__ACT_NONE && bv == 0.0f) continue;
        const __m512 vbias = _mm512_set1_ps(bv);
        float *p = y + r * ldy;
        for (size_t i = 0; i < cols; i += 16) {
            __mmask16 m = i + 16 <= cols ? (__mmask16)0xffff : tm;
            __m512 x = _mm512_add_ps(_mm512_maskz_loadu_ps(m, p + i), vbias);
            switch (act) {
            case TI__ACT_RELU: x = _mm512_max_ps(x, zero); break;
            case TI__ACT_CLIP: x = _mm512_min_ps(vb, _mm512_max_ps(va, x)); break;
            case TI__ACT_HARD_SWISH: {
                __m512 h = _mm512_add_ps(_mm512_div_ps(x, six), half);
                x = _mm512_mul_ps(x, _mm512_min_ps(one, _mm512_max_ps(zero, h)));
                break;
            }
            default: break;
            }
            _mm512_mask_storeu_ps(p + i, m, x);
        }
    }
    return 1;
}

TI__PRIVATE TI__TARGET_AVX2 int ti__act_block_avx2(int act, float a, float b, const float *bias,
                                                   float *y, size_t ldy, size_t rows,
                                                   size_t cols) {
    if ((act != TI__ACT_NONE && act != TI__ACT_RELU && act != TI__ACT_CLIP &&
         act != TI__ACT_HARD_SWISH) ||
        (act == TI__ACT_CLIP && !(a <= b))) /* min above max: the scalar order decides */
        return 0;
    const __m256 va = _mm256_set1_ps(a), vb = _mm256_set1_ps(b), zero = _mm256_setzero_ps();
    const __m256 one = _mm256_set1_ps(1.0f), six = _mm256_set1_ps(6.0f),
                 half = _mm256_set1_ps(0.5f);
    for (size_t r = 0; r < rows; r++) {
        float bv = bias != NULL ? bias[r] : 0.0f;
        if (act == TI__ACT_NONE && bv == 0.0f) continue;
        const __m256 vbias = _mm256_set1_ps(bv);
        float *p = y + r * ldy;
        size_t i = 0;
        for (; i + 8 <= cols; i += 8) {
            __m256 x = _mm256_add_ps(_mm256_loadu_ps(p + i), vbias);
            switch (act) {
            case TI__ACT_RELU: x = _mm256_max_ps(x, zero); break;
            case TI__ACT_CLIP: x = _mm256_min_ps(vb, _mm256_max_ps(va, x)); break;
            case TI__ACT_HARD_SWISH: {
                __m256 h = _mm256_add_ps(_mm256_div_ps(x, six), half);
                x = _mm256_mul_ps(x, _mm256_min_ps(one, _mm256_max_ps(zero, h)));
                break;
            }
            default: break;
            }
            _mm256_storeu_ps(p + i, x);
        }
        for (; i < cols; i++) p[i] = ti__act_apply(act, a, b, p[i] + bv);
    }
    return 1;
}
#endif /* TI__X86_SIMD */
