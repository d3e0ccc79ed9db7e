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

/* 64 bytes of a 256-entry byte table (4 registers' worth at plane) looked up by x's bytes:
 * VPERMI2B on the low 7 bits from the first or the second pair, bit 7 (hi) choosing. */
TI__X86_INLINE TI__TARGET_AVX512VBMI __m512i ti__tfl_vlut8(__m512i x, __mmask64 hi,
                                                          const uint8_t *plane) {
    __m512i l = _mm512_permutex2var_epi8(_mm512_loadu_si512((const void *)plane), x,
                                         _mm512_loadu_si512((const void *)(plane + 64)));
    __m512i h = _mm512_permutex2var_epi8(_mm512_loadu_si512((const void *)(plane + 128)), x,
                                         _mm512_loadu_si512((const void *)(plane + 192)));
    return _mm512_mask_blend_epi8(hi, l, h);
}

/* The int32 terms t[x] of 64 bytes x from t's four byte planes pl (bits 0-7, 8-15, 16-23,
 * 24-31 of each term, 256 bytes each): d[0..3], the planes interleaved by bytes then words,
 * so that d[k] holds elements 16 L + 4 k .. 16 L + 4 k + 3 in 128-bit lane L, the order in
 * which VPACKSSDW (d0, d1), (d2, d3) and then VPACKSSWB put them back in line. */
TI__X86_INLINE TI__TARGET_AVX512VBMI void ti__tfl_terms64(__m512i x, const uint8_t *pl,
                                                          __m512i *d) {
    __mmask64 hi = _mm512_movepi8_mask(x);
    __m512i p0 = ti__tfl_vlut8(x, hi, pl), p1 = ti__tfl_vlut8(x, hi, pl + 256);
    __m512i p2 = ti__tfl_vlut8(x, hi, pl + 512), p3 = ti__tfl_vlut8(x, hi, pl + 768);
    __m512i l01 = _mm512_unpacklo_epi8(p0, p1), h01 = _mm512_unpackhi_epi8(p0, p1);
    __m512i l23 = _mm512_unpacklo_epi8(p2, p3), h23 = _mm512_unpackhi_epi8(p2, p3);
    d[0] = _mm512_unpacklo_epi16(l01, l23);
    d[1] = _mm512_unpackhi_epi16(l01, l23);
    d[2] = _mm512_unpacklo_epi16(h01, h23);
    d[3] = _mm512_unpackhi_epi16(h01, h23);
}

/* Where ti__tfl_add8v_avx512 computes ti__tfl_add8_avx512's bytes for every input, fills pl
 * (2 x 4 x 256 bytes: each table t1, t2 as four byte planes, bits 0-7, 8-15, 16-23, 24-31 of
 * each term) and returns 1; else returns 0. It applies where the float path is exact for
 * every sum the tables can make: (max |t1| + max |t2|) * mo * 2^-(31 + e) <= 1000 (so the
 * zero point's int16 wrap never happens either), 1 <= e <= 31, mo >= 0, |out_off| <= 256,
 * and [lo, hi] meeting the dtype's range. Depends on the tables and parameters only: called
 * once a run by the ADD's set-up (ti__tfl_bin_setup), not per call of the lanes, which a
 * broadcast ADD makes per row. */
TI__PRIVATE TI__TARGET_AVX512VBMI int ti__tfl_add8v_prep_avx512(uint8_t *pl, const int32_t *t1,
                                                                const int32_t *t2, int32_t mo,
                                                                int e, int32_t out_off, int u8,
                                                                int32_t lo, int32_t hi) {
    int32_t clo = TI__MAX(lo, u8 ? 0 : -128), chi = TI__MIN(hi, u8 ? 255 : 127);
    if (e < 1 || e > 31 || mo < 0 || out_off < -256 || out_off > 256 || clo > chi) return 0;
    __m512i m1 = _mm512_setzero_si512(), m2 = m1;
    for (int i = 0; i < 256; i += 16) {
        __m512i v1 = _mm512_loadu_si512((const void *)(t1 + i));
        __m512i v2 = _mm512_loadu_si512((const void *)(t2 + i));
        m1 = _mm512_max_epu32(m1, _mm512_abs_epi32(v1)); /* |INT32_MIN| as 2^31 unsigned */
        m2 = _mm512_max_epu32(m2, _mm512_abs_epi32(v2));
        for (int k = 0; k < 4; k++) {
            _mm_storeu_si128((__m128i *)(void *)(pl + 256 * k + i),
                             _mm512_cvtepi32_epi8(_mm512_srli_epi32(v1, 8 * k)));
            _mm_storeu_si128((__m128i *)(void *)(pl + 1024 + 256 * k + i),
                             _mm512_cvtepi32_epi8(_mm512_srli_epi32(v2, 8 * k)));
        }
    }
    double bound = ((double)_mm512_reduce_max_epu32(m1) + (double)_mm512_reduce_max_epu32(m2)) *
                   (double)mo / ((double)(1u << 31) * (double)(1u << (e - 1)) * 2.0);
    return bound <= 1000.0;
}

/* ti__tfl_add8_avx512's result 64 elements at a time on AVX512-VBMI (ti__cpu_vbmi), for
 * i < n - n % 64, the same bytes, on planes pl that ti__tfl_add8v_prep_avx512 accepted for
 * these parameters: the inputs' terms looked up in the planes (ti__tfl_terms64: 13
 * instructions for 64 terms, where the computed terms took about 10 for 16 and the gathers
 * were slower), their sum requantized in float (ti__qv_rq_float) with a lane near a rounding
 * step done again in integers (ti__qv_rq_int), the zero point added and both clamps applied
 * on the packed words. Returns how many were done. */
TI__PRIVATE TI__TARGET_AVX512VBMI size_t ti__tfl_add8v_avx512(const uint8_t *a, const uint8_t *b,
                                                              uint8_t *y, size_t n,
                                                              const uint8_t *pl, int32_t mo,
                                                              int e, int32_t out_off, int u8,
                                                              int32_t lo, int32_t hi) {
    if (n < 64) return 0;
    int32_t clo = TI__MAX(lo, u8 ? 0 : -128), chi = TI__MIN(hi, u8 ? 255 : 127);
    __m512 s, ef;
    ti__qv_scales(_mm512_set1_epi32(mo), _mm512_set1_epi32(-e), 0xffff, &s, &ef);
    const __m512i vm = _mm512_set1_epi32(mo), mmo = _mm512_srli_epi64(vm, 32);
    const __m512i mask = _mm512_set1_epi32((int32_t)(((int64_t)1 << e) - 1));
    const __m512i half = _mm512_srai_epi32(mask, 1), ve = _mm512_set1_epi32(e);
    const __m512i off16 = _mm512_set1_epi16((short)out_off);
    const __m512i lo16 = _mm512_set1_epi16((short)clo), hi16 = _mm512_set1_epi16((short)chi);
    size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        __m512i ta[4], tb[4], q[4];
        ti__tfl_terms64(_mm512_loadu_si512((const void *)(a + i)), pl, ta);
        ti__tfl_terms64(_mm512_loadu_si512((const void *)(b + i)), pl + 1024, tb);
        __mmask16 bad = 0;
        for (int k = 0; k < 4; k++) {
            ta[k] = _mm512_add_epi32(ta[k], tb[k]); /* modulo 2^32, as ti__tfl_wadd */
            q[k] = ti__qv_rq_float(ta[k], s, ef, &bad);
        }
        if (bad != 0) /* about one block in 32 */
            for (int k = 0; k < 4; k++) q[k] = ti__qv_rq_int(ta[k], vm, mmo, ve, mask, half);
        __m512i w01 = _mm512_adds_epi16(_mm512_packs_epi32(q[0], q[1]), off16);
        __m512i w23 = _mm512_adds_epi16(_mm512_packs_epi32(q[2], q[3]), off16);
        w01 = _mm512_min_epi16(_mm512_max_epi16(w01, lo16), hi16);
        w23 = _mm512_min_epi16(_mm512_max_epi16(w23, lo16), hi16);
        __m512i o = u8 ? _mm512_packus_epi16(w01, w23) : _mm512_packs_epi16(w01, w23);
        _mm512_storeu_si512((void *)(y + i), o);
    }
    return i;
}
#endif
#if defined(TI__X86_SIMD) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop /* pushed before <immintrin.h> in cpu/x86/act_x86.c */
#endif
