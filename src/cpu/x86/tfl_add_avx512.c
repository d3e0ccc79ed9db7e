/* The vector lanes of TFLite's optimized 8-bit ADD (cpu/tfl_elementwise.c, ti__tfl_bin_q8)
 * in AVX-512, 16 elements at a time: the input terms (looked up in the job's 256-entry
 * tables, or computed by the steps that made them), their wrapping sum, the saturating rounding doubling high multiply by
 * the output multiplier, the rounding divide by a power of two, the int16 wrap of the zero
 * point's addition, and both clamps, step by step as the scalar code, so the bytes are the
 * same. Compiled with a function-level target attribute, run only when cpuid says AVX-512
 * F/BW/VL/VNNI (the level the 8-bit kernels use). Must not allocate. */
#if defined(TI__X86_SIMD) && defined(TI__X86_VNNI)
#include <immintrin.h>

/* x << n for n >= 0, else x >> -n (arithmetic), per lane as ti__tfl_vshl: counts of 32 or
 * more give 0, or the sign. */
TI__X86_INLINE TI__TARGET_AVX512VNNI __m512i ti__tfl_vshl512(__m512i x, int n) {
    return n >= 0 ? _mm512_sllv_epi32(x, _mm512_set1_epi32(n))
                  : _mm512_srav_epi32(x, _mm512_set1_epi32(-n));
}

/* y[i] for i < n - n % 16 from contiguous a[i], b[i]: the inputs' terms t1[a] + t2[b]
 * (modulo 2^32), times mo (ti__q_srdhm; mo != INT32_MIN, so no saturation), divided by 2^e
 * rounding half away from zero (ti__q_rdbypot, 0 <= e <= 31), plus out_off wrapped to
 * int16, clamped to the dtype (u8: [0, 255], else [-128, 127]) and then to [lo, hi].
 * COMPUTED = 0: the terms looked up in the tables t1, t2 (VPGATHERDD); 1: computed, t =
 * vshl(srdhm(vshl(x + off, pre), m), post) with x the byte as u8 says and the inputs'
 * parameters p = {off1, off2, pre1, pre2, m1, m2, post1, post2}: the steps that made the
 * tables (m1 and m2 not INT32_MIN, and |x + off| < 2^9: no lane saturates). The two gathers
 * a vector were most of the table form's time on the Zen 4. Returns how many were done. */
TI__X86_INLINE TI__TARGET_AVX512VNNI size_t ti__tfl_add8_lanes(
    const int COMPUTED, const uint8_t *a, const uint8_t *b, uint8_t *y, size_t n,
    const int32_t *t1, const int32_t *t2, const int32_t *p, int32_t mo, int e, int32_t out_off,
    int u8, int32_t lo, int32_t hi) {
    const __m512i vm = _mm512_set1_epi32(mo), mmo = _mm512_srli_epi64(vm, 32);
    const __m512i mask = _mm512_set1_epi32((int32_t)(((int64_t)1 << e) - 1));
    const __m512i half = _mm512_srai_epi32(mask, 1), ve = _mm512_set1_epi32(e);
    const __m512i voff = _mm512_set1_epi32(out_off);
    const __m512i dlo = _mm512_set1_epi32(u8 ? 0 : -128), dhi = _mm512_set1_epi32(u8 ? 255 : 127);
    const __m512i vlo = _mm512_set1_epi32(lo), vhi = _mm512_set1_epi32(hi);
    const __m512i z = _mm512_setzero_si512();
    const __m512i o1 = COMPUTED ? _mm512_set1_epi32(p[0]) : z;
    const __m512i o2 = COMPUTED ? _mm512_set1_epi32(p[1]) : z;
    const __m512i m1 = COMPUTED ? _mm512_set1_epi32(p[4]) : z;
    const __m512i m2 = COMPUTED ? _mm512_set1_epi32(p[5]) : z;
    const __m512i m1o = _mm512_srli_epi64(m1, 32), m2o = _mm512_srli_epi64(m2, 32);
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m128i ra = _mm_loadu_si128((const __m128i *)(const void *)(a + i));
        __m128i rb = _mm_loadu_si128((const __m128i *)(const void *)(b + i));
        __m512i xa, xb;
        if (COMPUTED) {
            xa = u8 ? _mm512_cvtepu8_epi32(ra) : _mm512_cvtepi8_epi32(ra);
            xb = u8 ? _mm512_cvtepu8_epi32(rb) : _mm512_cvtepi8_epi32(rb);
            xa = ti__tfl_vshl512(_mm512_add_epi32(xa, o1), p[2]);
            xb = ti__tfl_vshl512(_mm512_add_epi32(xb, o2), p[3]);
            xa = ti__tfl_vshl512(ti__qv_srdhm(xa, m1, m1o), p[6]);
            xb = ti__tfl_vshl512(ti__qv_srdhm(xb, m2, m2o), p[7]);
        } else {
            xa = _mm512_i32gather_epi32(_mm512_cvtepu8_epi32(ra), (const void *)t1, 4);
            xb = _mm512_i32gather_epi32(_mm512_cvtepu8_epi32(rb), (const void *)t2, 4);
        }
        /* ti__qv_rq_int: cpu/x86/qgemm_vnni.c */
        __m512i q = ti__qv_rq_int(_mm512_add_epi32(xa, xb), vm, mmo, ve, mask, half);
        q = _mm512_srai_epi32(_mm512_slli_epi32(_mm512_add_epi32(q, voff), 16), 16); /* int16 */
        q = _mm512_min_epi32(_mm512_max_epi32(q, dlo), dhi);
        q = _mm512_min_epi32(_mm512_max_epi32(q, vlo), vhi);
        _mm_storeu_si128((__m128i *)(void *)(y + i), _mm512_cvtepi32_epi8(q));
    }
    return i;
}

TI__PRIVATE TI__TARGET_AVX512VNNI size_t ti__tfl_add8_avx512(const uint8_t *a, const uint8_t *b,
                                                             uint8_t *y, size_t n,
                                                             const int32_t *t1, const int32_t *t2,
                                                             int32_t mo, int e, int32_t out_off,
                                                             int u8, int32_t lo, int32_t hi) {
    return ti__tfl_add8_lanes(0, a, b, y, n, t1, t2, NULL, mo, e, out_off, u8, lo, hi);
}

TI__PRIVATE TI__TARGET_AVX512VNNI size_t ti__tfl_add8c_avx512(const uint8_t *a, const uint8_t *b,
                                                              uint8_t *y, size_t n,
                                                              const int32_t *p, int32_t mo,
                                                              int e, int32_t out_off, int u8,
                                                              int32_t lo, int32_t hi) {
    return ti__tfl_add8_lanes(1, a, b, y, n, NULL, NULL, p, mo, e, out_off, u8, lo, hi);
}
#endif
#if defined(TI__X86_SIMD) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop /* pushed before <immintrin.h> in cpu/x86/act_x86.c */
#endif
