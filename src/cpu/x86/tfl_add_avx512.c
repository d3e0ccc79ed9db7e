/* The vector lanes of TFLite's optimized 8-bit ADD (cpu/tfl_elementwise.c, ti__tfl_bin_q8)
 * in AVX-512, 16 elements at a time: the tabulated input terms (VPGATHERDD from the job's
 * 256-entry tables), their wrapping sum, the saturating rounding doubling high multiply by
 * the output multiplier, the rounding divide by a power of two, the int16 wrap of the zero
 * point's addition, and both clamps, step by step as the scalar code, so the bytes are the
 * same. Compiled with a function-level target attribute, run only when cpuid says AVX-512
 * F/BW/VL/VNNI (the level the 8-bit kernels use). Must not allocate. */
#if defined(TI__X86_SIMD) && defined(TI__X86_VNNI)
#include <immintrin.h>

/* y[i] for i < n - n % 16 from contiguous a[i], b[i]: t1[a] + t2[b] (modulo 2^32), times mo
 * (ti__q_srdhm; mo != INT32_MIN, so no saturation), divided by 2^e rounding half away from
 * zero (ti__q_rdbypot, 0 <= e <= 31), plus out_off wrapped to int16, clamped to the dtype
 * (u8: [0, 255], else [-128, 127]) and then to [lo, hi]. Returns how many were done. */
TI__PRIVATE TI__TARGET_AVX512VNNI size_t ti__tfl_add8_avx512(const uint8_t *a, const uint8_t *b,
                                                             uint8_t *y, size_t n,
                                                             const int32_t *t1, const int32_t *t2,
                                                             int32_t mo, int e, int32_t out_off,
                                                             int u8, int32_t lo, int32_t hi) {
    const __m512i vm = _mm512_set1_epi32(mo), mmo = _mm512_srli_epi64(vm, 32);
    const __m512i mask = _mm512_set1_epi32((int32_t)(((int64_t)1 << e) - 1));
    const __m512i half = _mm512_srai_epi32(mask, 1), ve = _mm512_set1_epi32(e);
    const __m512i voff = _mm512_set1_epi32(out_off);
    const __m512i dlo = _mm512_set1_epi32(u8 ? 0 : -128), dhi = _mm512_set1_epi32(u8 ? 255 : 127);
    const __m512i vlo = _mm512_set1_epi32(lo), vhi = _mm512_set1_epi32(hi);
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512i ia = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(const void *)(a + i)));
        __m512i ib = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(const void *)(b + i)));
        __m512i s = _mm512_add_epi32(_mm512_i32gather_epi32(ia, (const void *)t1, 4),
                                     _mm512_i32gather_epi32(ib, (const void *)t2, 4));
        __m512i q = ti__qv_rq_int(s, vm, mmo, ve, mask, half); /* cpu/x86/qgemm_vnni.c */
        q = _mm512_srai_epi32(_mm512_slli_epi32(_mm512_add_epi32(q, voff), 16), 16); /* int16 */
        q = _mm512_min_epi32(_mm512_max_epi32(q, dlo), dhi);
        q = _mm512_min_epi32(_mm512_max_epi32(q, vlo), vhi);
        _mm_storeu_si128((__m128i *)(void *)(y + i), _mm512_cvtepi32_epi8(q));
    }
    return i;
}
#endif
#if defined(TI__X86_SIMD) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop /* pushed before <immintrin.h> in cpu/x86/act_x86.c */
#endif
