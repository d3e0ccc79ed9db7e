/* The vector lanes of TFLite's optimized 8-bit ADD (cpu/tfl_elementwise.c, ti__tfl_bin_q8)
 * in AVX2, 8 elements at a time: ti__tfl_add8_avx512's steps (cpu/x86/tfl_add_avx512.c)
 * with VPGATHERDD on 8 lanes and the fixed-point steps of cpu/x86/qgemm_avx2.c, so the
 * bytes are the same as the scalar code's. Compiled with
 * a function-level target attribute, run only when cpuid says AVX2. Must not allocate. */
#ifdef TI__X86_SIMD
#include <immintrin.h>

/* ti__tfl_add8_avx512's contract, n - n % 8 elements: returns how many were done. */
TI__PRIVATE TI__TARGET_AVX2 size_t ti__tfl_add8_avx2(const uint8_t *a, const uint8_t *b, uint8_t *y,
                                                     size_t n, const int32_t *t1, const int32_t *t2,
                                                     int32_t mo, int e, int32_t out_off, int u8,
                                                     int32_t lo, int32_t hi) {
    const __m256i vm = _mm256_set1_epi32(mo), mmo = _mm256_srli_epi64(vm, 32);
    const __m256i mask = _mm256_set1_epi32((int32_t)(((int64_t)1 << e) - 1));
    const __m256i half = _mm256_srai_epi32(mask, 1), rs = _mm256_set1_epi32(e);
    const __m256i voff = _mm256_set1_epi32(out_off);
    const __m256i dlo = _mm256_set1_epi32(u8 ? 0 : -128), dhi = _mm256_set1_epi32(u8 ? 255 : 127);
    const __m256i vlo = _mm256_set1_epi32(lo), vhi = _mm256_set1_epi32(hi);
    const __m256i low8 = _mm256_set1_epi32(0xFF);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i ia = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(a + i)));
        __m256i ib = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(b + i)));
        __m256i s = _mm256_add_epi32(_mm256_i32gather_epi32((const int *)(const void *)t1, ia, 4),
                                     _mm256_i32gather_epi32((const int *)(const void *)t2, ib, 4));
        __m256i q = ti__q_mul_rshift_avx2(s, vm, mmo, rs, mask, half); /* cpu/x86/qgemm_avx2.c */
        q = _mm256_srai_epi32(_mm256_slli_epi32(_mm256_add_epi32(q, voff), 16), 16); /* int16 */
        q = _mm256_min_epi32(_mm256_max_epi32(q, dlo), dhi);
        q = _mm256_min_epi32(_mm256_max_epi32(q, vlo), vhi);
        q = _mm256_and_si256(q, low8); /* the low byte, in order */
        __m128i p16 = _mm_packus_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
        _mm_storel_epi64((__m128i *)(void *)(y + i), _mm_packus_epi16(p16, p16));
    }
    return i;
}
#endif
