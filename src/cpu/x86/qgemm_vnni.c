/* 8-bit GEMM kernels for AVX512-VNNI (the byte path of core/qgemm.c's shared integer GEMM):
 * VPDPBUSD multiplies unsigned bytes of A by signed bytes of B, four depths per int32 lane,
 * and adds the four exact products to the accumulator modulo 2^32 (no saturation), so the
 * sums equal the int16 kernels' bit for bit once core/qgemm.c adds its row and column
 * corrections. Also the helpers of that path: byte copies with the int8 -> uint8 flip
 * that also sum the bytes (the row sums), the TFLite requantization 16 channels at a time
 * with the byte store, and the depthwise taps of a whole output pixel. Compiled with a
 * function-level target attribute, run only when cpuid says AVX-512 F/BW/VL/VNNI
 * (cpu/x86/cpuid.c). Must not allocate. */
#if defined(TI__X86_SIMD) && defined(TI__X86_VNNI)
#include <immintrin.h>

/* acc rows of 8 x (16 * NB) channels: one broadcast of 4 bytes of A per row and depth
 * quad, NB B vectors (16 channels x 4 depths each). The flip is applied after the broadcast,
 * in the vector unit, so that the load, broadcast and xor are one VPXORD with an embedded
 * broadcast (a scalar xor then a broadcast from a general register took two more
 * instructions per row and quad: 2.5-3 % of the int8 MobileNetV2). */
#define TI__QV_ROW(r)                                                                       \
    {                                                                                       \
        uint32_t q;                                                                         \
        memcpy(&q, a + (r) * lda + p * 4, 4);                                               \
        __m512i av = _mm512_set1_epi32((int32_t)q);                                         \
        if (flip) av = _mm512_xor_si512(av, fv);                                            \
        c##r##_0 = _mm512_dpbusd_epi32(c##r##_0, av, b0);                                   \
        if (NB > 1) c##r##_1 = _mm512_dpbusd_epi32(c##r##_1, av, b1);                       \
    }
#define TI__QV_STORE(r)                                                                     \
    {                                                                                       \
        uint32_t *o = acc + (r) * ldacc;                                                    \
        if (add) c##r##_0 = _mm512_add_epi32(c##r##_0, _mm512_loadu_si512((const void *)o)); \
        _mm512_storeu_si512((void *)o, c##r##_0);                                           \
        if (NB > 1) {                                                                       \
            if (add)                                                                        \
                c##r##_1 = _mm512_add_epi32(c##r##_1, _mm512_loadu_si512((const void *)(o + 16))); \
            _mm512_storeu_si512((void *)(o + 16), c##r##_1);                                \
        }                                                                                   \
    }

/* The tile's sums c<r>_<j> of rows r < 8 and blocks j < NB, started at z (block 0) and z1
 * (block 1), over kq depth quads of a and b (the tile functions' arguments). */
#define TI__QV_ACCUMULATE                                                                   \
    __m512i c0_0 = z, c0_1 = z1, c1_0 = z, c1_1 = z1, c2_0 = z, c2_1 = z1, c3_0 = z, c3_1 = z1; \
    __m512i c4_0 = z, c4_1 = z1, c5_0 = z, c5_1 = z1, c6_0 = z, c6_1 = z1, c7_0 = z, c7_1 = z1; \
    const __m512i fv = _mm512_set1_epi32((int32_t)flip);                                    \
    for (size_t p = 0; p < kq; p++) {                                                       \
        __m512i b0 = _mm512_loadu_si512((const void *)(b + p * 64));                        \
        __m512i b1 = NB > 1 ? _mm512_loadu_si512((const void *)(b + bs + p * 64)) : b0;     \
        TI__QV_ROW(0)                                                                       \
        if (MR > 1) TI__QV_ROW(1)                                                           \
        if (MR > 2) TI__QV_ROW(2)                                                           \
        if (MR > 3) TI__QV_ROW(3)                                                           \
        if (MR > 4) TI__QV_ROW(4)                                                           \
        if (MR > 5) TI__QV_ROW(5)                                                           \
        if (MR > 6) TI__QV_ROW(6)                                                           \
        if (MR > 7) TI__QV_ROW(7)                                                           \
    }

/* a: MR rows (8, or 1) of kq * 4 bytes, lda apart, each byte xor flip's (0 or 0x80808080:
 * int8 rows as they lie read as uint8); b: NB blocks [kq][16][4] bs bytes apart. acc[r *
 * ldacc + 0..16 * NB) = (add ? acc : init ? init : 0) + the dot products (init: one value per
 * column), rows r < MR. */
TI__X86_INLINE TI__TARGET_AVX512VNNI void ti__qv_tile(const int MR, const int NB,
                                                      const uint32_t flip, size_t kq,
                                                      const uint8_t *a, size_t lda,
                                                      const int8_t *b, size_t bs, uint32_t *acc,
                                                      size_t ldacc, int add, const int32_t *init) {
    __m512i z = _mm512_setzero_si512(), z1 = z;
    if (init != NULL && !add) {
        z = _mm512_loadu_si512((const void *)init);
        if (NB > 1) z1 = _mm512_loadu_si512((const void *)(init + 16));
    }
    TI__QV_ACCUMULATE
    TI__QV_STORE(0)
    if (MR > 1) {
        TI__QV_STORE(1) TI__QV_STORE(2) TI__QV_STORE(3)
        TI__QV_STORE(4) TI__QV_STORE(5) TI__QV_STORE(6) TI__QV_STORE(7)
    }
}

#define TI__QV_TILE_FN(name, MR, NB, FLIP)                                                  \
    static __attribute__((noinline, unused)) TI__TARGET_AVX512VNNI void name(                 \
        size_t kq, const uint8_t *a, size_t lda, const int8_t *b, size_t bs, uint32_t *acc,  \
        size_t ldacc, int add, const int32_t *init) {                                       \
        ti__qv_tile(MR, NB, FLIP, kq, a, lda, b, bs, acc, ldacc, add, init);                \
    }
TI__QV_TILE_FN(ti__qv_tile1, 8, 1, 0)
TI__QV_TILE_FN(ti__qv_tile2, 8, 2, 0)
TI__QV_TILE_FN(ti__qv_tile1x, 8, 1, 0x80808080u)
TI__QV_TILE_FN(ti__qv_tile2x, 8, 2, 0x80808080u)
TI__QV_TILE_FN(ti__qv_tile1_1, 1, 1, 0)
TI__QV_TILE_FN(ti__qv_tile2_1, 1, 2, 0)
#undef TI__QV_TILE_FN

/* The micro-kernel: 8 rows x 16 * nb channels (nb 1 or 2); ti__qv_tile's add and init. */
TI__PRIVATE void ti__qg8_micro_vnni(size_t kq, const uint8_t *a, size_t lda, const int8_t *b,
                                    size_t bs, int nb, uint32_t *acc, size_t ldacc, int add,
                                    const int32_t *init) {
    if (nb > 1) ti__qv_tile2(kq, a, lda, b, bs, acc, ldacc, add, init);
    else ti__qv_tile1(kq, a, lda, b, bs, acc, ldacc, add, init);
}

/* The same for row 0 alone (acc's other rows untouched): a block of one row, such as the
 * classifier of an 8-bit MobileNet (1 x 1280 x 1001, depth past one panel, so not
 * requantized in registers), had multiplied 8. That conv's median 0.135-0.148 -> 0.101-0.112
 * ms, its minimum 0.083-0.094 -> 0.057-0.086 (four alternating runs, Zen 4, busy host). */
TI__PRIVATE void ti__qg8_micro1_vnni(size_t kq, const uint8_t *a, size_t lda, const int8_t *b,
                                     size_t bs, int nb, uint32_t *acc, size_t ldacc, int add,
                                     const int32_t *init) {
    if (nb > 1) ti__qv_tile2_1(kq, a, lda, b, bs, acc, ldacc, add, init);
    else ti__qv_tile1_1(kq, a, lda, b, bs, acc, ldacc, add, init);
}

/* The same on int8 rows as they lie: A's bytes flipped (int8 + 128) as they are read, so a
 * 1x1 conv's input needs no copy into a panel; stores (no add). */
TI__PRIVATE void ti__qg8_micro_vnni_i8(size_t kq, const uint8_t *a, size_t lda, const int8_t *b,
                                       size_t bs, int nb, uint32_t *acc, size_t ldacc,
                                       const int32_t *init) {
    if (nb > 1) ti__qv_tile2x(kq, a, lda, b, bs, acc, ldacc, 0, init);
    else ti__qv_tile1x(kq, a, lda, b, bs, acc, ldacc, 0, init);
}

/* dst[i] = src[i] ^ flip for i < n (flip 0x80 turns int8 into uint8 = int8 + 128); returns
 * the sum of the bytes written, modulo 2^32. dst NULL: only the sum (of src ^ flip). */
TI__PRIVATE TI__TARGET_AVX512VNNI uint32_t ti__qg8_copy_vnni(uint8_t *dst, const uint8_t *src,
                                                             size_t n, uint8_t flip) {
    const __m512i f = _mm512_set1_epi8((char)flip), z = _mm512_setzero_si512();
    __m512i s = z;
    size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        __m512i v = _mm512_xor_si512(_mm512_loadu_si512((const void *)(src + i)), f);
        if (dst != NULL) _mm512_storeu_si512((void *)(dst + i), v);
        s = _mm512_add_epi64(s, _mm512_sad_epu8(v, z));
    }
    if (i < n) {
        __mmask64 m = (__mmask64)(~0ULL >> (64 - (n - i)));
        __m512i v = _mm512_maskz_mov_epi8(m, _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, src + i), f));
        if (dst != NULL) _mm512_mask_storeu_epi8(dst + i, m, v);
        s = _mm512_add_epi64(s, _mm512_sad_epu8(v, z));
    }
    return (uint32_t)_mm512_reduce_add_epi64(s);
}

/* TFLite's positive shift of 16 sums: v << ls, saturating to int32. */
TI__X86_INLINE TI__TARGET_AVX512VNNI __m512i ti__qv_lshift(__m512i v, __m512i ls) {
    __m512i y = _mm512_sllv_epi32(v, ls);
    __mmask16 ovf = _mm512_cmpneq_epi32_mask(_mm512_srav_epi32(y, ls), v);
    __m512i sat = _mm512_xor_si512(_mm512_srai_epi32(v, 31), _mm512_set1_epi32(INT32_MAX));
    return _mm512_mask_mov_epi32(y, ovf, sat); /* INT32_MIN or INT32_MAX where it overflowed */
}

/* ti__q_srdhm(v, m) per lane, v and m never both INT32_MIN, mo = m's odd lanes (m >> 32 as
 * 64-bit lanes): floor((v m + 2^30) / 2^31), which equals TFLite's rounding of the doubling
 * high product. */
TI__X86_INLINE TI__TARGET_AVX512VNNI __m512i ti__qv_srdhm(__m512i v, __m512i m, __m512i mo) {
    const __m512i nudge = _mm512_set1_epi64((int64_t)1 << 30);
    __m512i pe = _mm512_add_epi64(_mm512_mul_epi32(v, m), nudge);
    __m512i po = _mm512_add_epi64(_mm512_mul_epi32(_mm512_srli_epi64(v, 32), mo), nudge);
    return _mm512_mask_blend_epi32((__mmask16)0xAAAA, _mm512_srli_epi64(pe, 31),
                                   _mm512_slli_epi64(po, 1));
}

/* The rest of TI__QRQ_32 on 16 sums (v = m = INT32_MIN excluded by the caller), before the
 * clamp: the doubling high multiply rounded half up as floor((vm + 2^30) / 2^31) (bits 31..62
 * of vm + 2^30: even lanes shifted down, the odd lanes' products, of the lanes' high halves,
 * shifted up by one into the high half), then the rounding right shift by rs with threshold
 * (mask >> 1) + (q < 0). mo = m >> 32 (64-bit lanes), mask = 2^rs - 1, half = mask >> 1. */
TI__X86_INLINE TI__TARGET_AVX512VNNI __m512i ti__qv_rq_int(__m512i v, __m512i m, __m512i mo,
                                                           __m512i rs, __m512i mask,
                                                           __m512i half) {
    __m512i q = ti__qv_srdhm(v, m, mo);
    __m512i rem = _mm512_and_si512(q, mask);
    __m512i thr = _mm512_add_epi32(half, _mm512_srli_epi32(q, 31));
    q = _mm512_srav_epi32(q, rs);
    return _mm512_mask_add_epi32(q, _mm512_cmpgt_epi32_mask(rem, thr), q, _mm512_set1_epi32(1));
}

/* ti__qv_rq_int on 16 sums v with their columns' multipliers and right shifts read from
 * mult and shift (k: the columns there are, the rest read as 0): shifts -31..-1 and
 * multipliers >= 0 (the float path's columns), TFLite's two roundings exactly. For
 * ti__qv_rq_float's rare lanes near a rounding step (rows8, the requantizing tile). */
TI__X86_INLINE TI__TARGET_AVX512VNNI __m512i ti__qv_rq_cols(__m512i v, const int32_t *mult,
                                                            const int32_t *shift, __mmask16 k) {
    const __m512i one = _mm512_set1_epi32(1);
    __m512i m = _mm512_maskz_loadu_epi32(k, mult);
    __m512i rs = _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_maskz_loadu_epi32(k, shift));
    __m512i mask = _mm512_sub_epi32(_mm512_sllv_epi32(one, rs), one);
    return ti__qv_rq_int(v, m, _mm512_srli_epi64(m, 32), rs, mask, _mm512_srai_epi32(mask, 1));
}

/* One output row of the byte path: x[c] = dot[c] + colc[c] + bos[c] * row (modulo 2^32, the
 * int32 sum of the int16 path plus bias) for c < n; bos NULL: x[c] = dot[c] + colc[c] + row
 * (the caller's row term when it is the same for every column). Then, when mult != NULL,
 * TFLite's TI__QRQ_32 as ti__qrq32_avx2 does it (the same steps on 16 lanes: a positive
 * shift saturating to int32, skipped where no lane has one; the doubling high multiply
 * rounded half away from zero as floor((ab + 2^30) / 2^31); the rounding right shift with
 * threshold (mask >> 1) + (q < 0); the clamp to [lo - yo, hi - yo] and yo added) to out8
 * (u8 or i8: every value is in the dtype's range after the clamp) when out8 != NULL, else
 * to x. Shifts outside [-31, 31] stop the requantization: returns how many channels were
 * requantized (a multiple of 16, or n); x[that..n) then holds the sums for the caller to
 * finish. mult == NULL, or lo - yo or hi - yo outside int32: only the sums, to x; returns 0. */
TI__PRIVATE TI__TARGET_AVX512VNNI size_t ti__qg8_row_vnni(const uint32_t *dot, const int32_t *colc,
                                                          const int32_t *bos, int32_t row,
                                                          size_t n, const int32_t *mult,
                                                          const int32_t *shift, int32_t yo,
                                                          int32_t lo, int32_t hi, int32_t *x,
                                                          uint8_t *out8) {
    const __m512i rv = _mm512_set1_epi32(row);
#define TI__QV_SUM(v, k)                                                                    \
    __m512i v = _mm512_maskz_loadu_epi32(k, dot + i);                                       \
    if (colc != NULL) v = _mm512_add_epi32(v, _mm512_maskz_loadu_epi32(k, colc + i));       \
    v = _mm512_add_epi32(v, bos != NULL ? _mm512_mullo_epi32(_mm512_maskz_loadu_epi32(k, bos + i), rv) \
                                        : rv);
    size_t i = 0;
    /* no multipliers, or a zero point that puts lo - yo or hi - yo outside int32 (every
     * output lo, or hi): only the sums, for the caller */
    if (mult == NULL || (int64_t)lo - yo > INT32_MAX || (int64_t)hi - yo < INT32_MIN) {
        for (; i < n; i += 16) {
            __mmask16 k = (__mmask16)(n - i >= 16 ? 0xffffu : (1u << (n - i)) - 1u);
            TI__QV_SUM(v, k)
            _mm512_mask_storeu_epi32(x + i, k, v);
        }
        return 0;
    }
    int64_t l = (int64_t)lo - yo, h = (int64_t)hi - yo;
    const __m512i qlo = _mm512_set1_epi32(l < INT32_MIN ? INT32_MIN : (int32_t)l);
    const __m512i qhi = _mm512_set1_epi32(h > INT32_MAX ? INT32_MAX : (int32_t)h);
    const __m512i vyo = _mm512_set1_epi32(yo), zero = _mm512_setzero_si512();
    const __m512i one = _mm512_set1_epi32(1), lim = _mm512_set1_epi32(31);
    const __m512i nlim = _mm512_set1_epi32(-31);
    for (; i < n; i += 16) {
        __mmask16 k = (__mmask16)(n - i >= 16 ? 0xffffu : (1u << (n - i)) - 1u);
        TI__QV_SUM(v, k)
        __m512i sh = _mm512_maskz_loadu_epi32(k, shift + i);
        __mmask16 bad = _mm512_cmpgt_epi32_mask(sh, lim) | _mm512_cmpgt_epi32_mask(nlim, sh);
        if (bad != 0) break;
        __m512i m = _mm512_maskz_loadu_epi32(k, mult + i);
        if (_mm512_cmpgt_epi32_mask(sh, zero) != 0)
            v = ti__qv_lshift(v, _mm512_max_epi32(sh, zero));
        /* v = m = INT32_MIN saturates to INT32_MAX in the doubling multiply: v = INT32_MIN + 1
         * gives that */
        v = _mm512_mask_max_epi32(v, _mm512_cmpeq_epi32_mask(m, _mm512_set1_epi32(INT32_MIN)), v,
                                  _mm512_set1_epi32(INT32_MIN + 1));
        __m512i rs = _mm512_max_epi32(_mm512_sub_epi32(zero, sh), zero);
        __m512i mask = _mm512_sub_epi32(_mm512_sllv_epi32(one, rs), one);
        __m512i q = ti__qv_rq_int(v, m, _mm512_srli_epi64(m, 32), rs, mask,
                                  _mm512_srai_epi32(mask, 1));
        q = _mm512_add_epi32(_mm512_min_epi32(_mm512_max_epi32(q, qlo), qhi), vyo);
        if (out8 != NULL) { /* VPMOVDB to a register, then the store: the masked VPMOVDB
                               to memory is microcoded on AMD Zen 4 (a fifth of this loop) */
            __m128i b8 = _mm512_cvtepi32_epi8(q);
            if (k == 0xffff) _mm_storeu_si128((__m128i *)(void *)(out8 + i), b8);
            else _mm_mask_storeu_epi8(out8 + i, k, b8);
        } else {
            _mm512_mask_storeu_epi32(x + i, k, q);
        }
    }
#undef TI__QV_SUM
    for (size_t j = i; j < n; j++) /* stopped early: the sums of the rest for the caller */
        x[j] = (int32_t)(dot[j] + (colc != NULL ? (uint32_t)colc[j] : 0u) +
                         (bos != NULL ? (uint32_t)bos[j] * (uint32_t)row : (uint32_t)row));
    return i < n ? i : n;
}

/* The mask of the first min(n, 16) lanes. */
TI__X86_INLINE __mmask16 ti__qv_mask16(size_t n) {
    return (__mmask16)(n >= 16 ? 0xffffu : (1u << n) - 1u);
}

/* Rounding to nearest even written into each instruction, whatever MXCSR says (a program
 * may have changed its rounding mode). */
#define TI__QV_RNE (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)

/* The float form of TI__QRQ_32 (rows8's fast path). With v the sum, m >= 0 the multiplier
 * and rs >= 1 the right shift, TFLite's double rounding (floor((vm + 2^30) / 2^31) =: q1, then
 * q1 / 2^rs rounded half up for q1 >= 0 and half down below) is one floor:
 *     q = floor(t* + 1/2),  t* = vm 2^-(31 + rs) + sign * 2^-(rs + 1),  sign = +1 if v >= 0
 * (floor((floor(x) + k) / 2^rs) = floor((x + k) / 2^rs) for integer k; q1 >= 0 iff vm >= -2^30,
 * and where v < 0 but q1 = 0 both signs give 0). This computes t = fl(fl(v) s + e), s =
 * fl(m) 2^-(31 + rs) and e = +-2^-(rs + 1) exact, so |t - t*| <= |r| 2^-22.4 + 2^-27 with r =
 * vm 2^-(31 + rs): under 2^-12 for |r| <= 1024. Where t is more than 2^-12 from a half-integer
 * (|t - RNE(t)| < 1/2 - 2^-12) RNE(t) is then q; a lane nearer sets *bad and the caller redoes
 * the 16 in integers (about one vector in 128). Beyond |r| = 1024 both are far past the clamp
 * (the callers keep |lo - yo| and |hi - yo| <= 512); |t| < 2^31 as |r| <= 2^30 (rs >= 1). */
/* The t above: fl(fl(v) s + es), es = e with v's sign (the requantizing tile takes it apart
 * from the check and the rounding, ti__qv_rq_float joins the three) */
TI__X86_INLINE TI__TARGET_AVX512VNNI __m512 ti__qv_rq_t(__m512i v, __m512 s, __m512 e) {
    __m512 f = _mm512_cvt_roundepi32_ps(v, TI__QV_RNE);
    /* e with f's sign: (f & sign bit) | e */
    const __m512i sign = _mm512_set1_epi32((int32_t)0x80000000u);
    __m512 es = _mm512_castsi512_ps(
        _mm512_ternarylogic_epi32(_mm512_castps_si512(f), _mm512_castps_si512(e), sign, 0xEC));
    return _mm512_fmadd_round_ps(f, s, es, TI__QV_RNE);
}
TI__X86_INLINE TI__TARGET_AVX512VNNI __m512i ti__qv_rq_float(__m512i v, __m512 s, __m512 e,
                                                             __mmask16 *bad) {
    __m512 t = ti__qv_rq_t(v, s, e);
    __m512 d = _mm512_abs_ps(_mm512_reduce_ps(t, 0)); /* |t - RNE(t)| */
    *bad |= _mm512_cmp_ps_mask(d, _mm512_set1_ps(0.5f - 1.0f / 4096.0f), _CMP_GE_OQ);
    return _mm512_cvt_roundps_epi32(t, TI__QV_RNE);
}

/* ti__qv_rq_float's scales of 16 columns (multipliers m, shifts sh = -rs; 0 past mask k,
 * which also keeps those lanes from being flagged): s = m 2^-(31 + rs), e = 2^-(rs + 1). */
TI__X86_INLINE TI__TARGET_AVX512VNNI void ti__qv_scales(__m512i m, __m512i sh, __mmask16 k,
                                                        __m512 *s, __m512 *e) {
    __m512 es = _mm512_cvtepi32_ps(_mm512_sub_epi32(sh, _mm512_set1_epi32(31))); /* -(31+rs) */
    __m512 ee = _mm512_cvtepi32_ps(_mm512_sub_epi32(sh, _mm512_set1_epi32(1)));  /* -(rs+1) */
    *s = _mm512_maskz_scalef_ps(k, _mm512_cvt_roundepi32_ps(m, TI__QV_RNE), es);
    *e = _mm512_maskz_scalef_ps(k, _mm512_set1_ps(1.0f), ee);
}

/* 32 sums (v0, v1; NB 1: v0's 16) requantized by ti__qv_rq_float's steps, with one compare
 * for both vectors (VRANGEPS takes the larger of their distances from a rounding step), or,
 * where a lane is near a step (about one in 64), in integers with mult / shift (lanes k0,
 * k1), as rows8; then VPACKSSDW and the zero point: int16, lane L holding v0's channels
 * 4 L..4 L + 3, then v1's. */
TI__X86_INLINE TI__TARGET_AVX512VNNI __m512i ti__qv_rq_w(const int NB, __m512i v0, __m512i v1,
                                                        __m512 s0, __m512 e0, __m512 s1,
                                                        __m512 e1, const int32_t *mult,
                                                        const int32_t *shift, __mmask16 k0,
                                                        __mmask16 k1, __m512i yo16) {
    __m512 t0 = ti__qv_rq_t(v0, s0, e0), t1 = NB > 1 ? ti__qv_rq_t(v1, s1, e1) : t0;
    __m512 d = _mm512_reduce_ps(t0, 0);
    d = NB > 1 ? _mm512_range_ps(d, _mm512_reduce_ps(t1, 0), 0x0B) : _mm512_abs_ps(d);
    __m512i q0, q1;
    if (_mm512_cmp_ps_mask(d, _mm512_set1_ps(0.5f - 1.0f / 4096.0f), _CMP_GE_OQ) != 0) {
        q0 = ti__qv_rq_cols(v0, mult, shift, k0);
        q1 = NB > 1 ? ti__qv_rq_cols(v1, mult + 16, shift + 16, k1) : q0;
    } else {
        q0 = _mm512_cvt_roundps_epi32(t0, TI__QV_RNE);
        q1 = NB > 1 ? _mm512_cvt_roundps_epi32(t1, TI__QV_RNE) : q0;
    }
    return _mm512_adds_epi16(_mm512_packs_epi32(q0, q1), yo16);
}

/* Two outputs' int16 vectors (ti__qv_rq_w) to bytes together, clamped to lo8..hi8 (unsigned
 * when upk), and put in order by perm: wa's 32 in the low 256 bits, wb's in the high. */
TI__X86_INLINE TI__TARGET_AVX512VNNI __m512i ti__qv_pack2(__m512i wa, __m512i wb, int upk,
                                                         __m512i lo8, __m512i hi8,
                                                         __m512i perm) {
    __m512i o = upk ? _mm512_min_epu8(_mm512_max_epu8(_mm512_packus_epi16(wa, wb), lo8), hi8)
                    : _mm512_min_epi8(_mm512_max_epi8(_mm512_packs_epi16(wa, wb), lo8), hi8);
    return _mm512_permutexvar_epi32(perm, o);
}

/* Whether the output range takes rows8's packed float path: |lo - yo| and |hi - yo| <= 512
 * (ti__qv_rq_float's bound), lo..hi inside uint8's or int8's range, and the zero point added
 * in int16 with saturation exact (|yo| <= 256: a saturated value stays past the clamp). */
TI__X86_INLINE int ti__qv_pack_ok(int32_t yo, int32_t lo, int32_t hi) {
    int64_t l = (int64_t)lo - yo, h = (int64_t)hi - yo;
    return l >= -512 && l <= 512 && h >= -512 && h <= 512 && yo >= -256 && yo <= 256 &&
           ((lo >= 0 && hi <= 255) || (lo >= -128 && hi <= 127));
}

/* ti__qg8_rows8_vnni's body; rt: 0 no row term, 1 row[r], 2 bos[c] * row[r]; hc: colc != NULL
 * (constants in the callers below but the last). */
TI__X86_INLINE TI__TARGET_AVX512VNNI int ti__qv_rows8(const int rt, const int hc, size_t nr,
                                                      const uint32_t *dot,
                                                      size_t ldd, const int32_t *colc,
                                                      const int32_t *bos, const int32_t *row,
                                                      size_t n, const int32_t *mult,
                                                      const int32_t *shift, int32_t yo, int32_t lo,
                                                      int32_t hi, uint8_t *out, size_t ldo) {
    const __m512i zero = _mm512_setzero_si512(), lim = _mm512_set1_epi32(31);
    const __m512i nlim = _mm512_set1_epi32(-31), one = _mm512_set1_epi32(1);
    __mmask16 pos = 0, nofloat = 0;
    if ((int64_t)lo - yo > INT32_MAX || (int64_t)hi - yo < INT32_MIN) return 0;
    for (size_t i = 0; i < n; i += 16) {
        __mmask16 k = (__mmask16)(n - i >= 16 ? 0xffffu : (1u << (n - i)) - 1u);
        __m512i sh = _mm512_maskz_loadu_epi32(k, shift + i);
        __m512i m = _mm512_maskz_loadu_epi32(k, mult + i);
        if ((_mm512_cmpgt_epi32_mask(sh, lim) | _mm512_cmpgt_epi32_mask(nlim, sh)) != 0) return 0;
        /* a multiplier of INT32_MIN (no TFLite scale gives one) saturates the doubling
         * multiply at v = INT32_MIN, which this function does not: row by row */
        if (_mm512_cmpeq_epi32_mask(m, _mm512_set1_epi32(INT32_MIN)) != 0) return 0;
        pos |= _mm512_cmpgt_epi32_mask(sh, zero);
        nofloat |= _mm512_mask_cmpgt_epi32_mask(k, sh, _mm512_set1_epi32(-1)) |
                   _mm512_cmplt_epi32_mask(m, zero);
    }
    int64_t l = (int64_t)lo - yo, h = (int64_t)hi - yo;
    const __m512i qlo = _mm512_set1_epi32(l < INT32_MIN ? INT32_MIN : (int32_t)l);
    const __m512i qhi = _mm512_set1_epi32(h > INT32_MAX ? INT32_MAX : (int32_t)h);
    const __m512i vyo = _mm512_set1_epi32(yo);
    const int fl = nofloat == 0 && l >= -512 && l <= 512 && h >= -512 && h <= 512;
    /* the 64-column packing (unsigned when lo..hi is inside uint8's range) */
    const int upk = lo >= 0 && hi <= 255, pk = fl && ti__qv_pack_ok(yo, lo, hi);
    const __m512i yo16 = _mm512_set1_epi16((short)yo);
    const __m512i lo8 = _mm512_set1_epi8((char)lo), hi8 = _mm512_set1_epi8((char)hi);
    /* the packs interleave the 4 vectors' 128-bit lanes: dword 4 L + j holds lane L of vector j */
    const __m512i perm = _mm512_set_epi32(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0);
    /* vector j of a block of 64 columns at i (mask k##j, 0 past n): the float path's s and e
     * and the column terms, once per block */
#define TI__QV_COLS(j)                                                                      \
    __m512i sh##j = _mm512_maskz_loadu_epi32(k##j, shift + i + 16 * j);                     \
    __m512i m##j = _mm512_maskz_loadu_epi32(k##j, mult + i + 16 * j);                       \
    __m512 s##j, e##j;                                                                      \
    ti__qv_scales(m##j, sh##j, k##j, &s##j, &e##j);                                         \
    __m512i cc##j = hc ? _mm512_maskz_loadu_epi32(k##j, colc + i + 16 * j) : zero;          \
    __m512i bb##j = rt == 2 ? _mm512_maskz_loadu_epi32(k##j, bos + i + 16 * j) : zero;
    /* row r's sums of vector j, requantized in float */
#define TI__QV_F(j)                                                                         \
    {                                                                                       \
        v##j = full ? _mm512_loadu_si512((const void *)(dot + r * ldd + i + 16 * j))          \
                    : _mm512_maskz_loadu_epi32(k##j, dot + r * ldd + i + 16 * j);            \
        if (hc) v##j = _mm512_add_epi32(v##j, cc##j);                                       \
        if (rt != 0) v##j = _mm512_add_epi32(v##j, rt == 2 ? _mm512_mullo_epi32(bb##j, rv) : rv); \
        q##j = ti__qv_rq_float(v##j, s##j, e##j, &bad);                                     \
    }
    /* the same in integers (a lane near a step), the multipliers and shifts read again */
#define TI__QV_I(j) q##j = ti__qv_rq_cols(v##j, mult + i + 16 * j, shift + i + 16 * j, k##j);
    /* a block of NV vectors (the last one's columns may end early; FULL: 64 columns, unmasked
     * loads and store): requantized, packed with saturation and the zero point, clamped,
     * stored (masked past n) */
#define TI__QV_BLOCK(NV, FULL)                                                              \
    {                                                                                       \
        const int full = FULL;                                                              \
        TI__QV_COLS(0) TI__QV_COLS(1) TI__QV_COLS(2) TI__QV_COLS(3)                         \
        for (size_t r = 0; r < nr; r++) {                                                   \
            __m512i rv = rt != 0 ? _mm512_set1_epi32(row[r]) : zero, o;                     \
            __m512i v0 = zero, v1 = zero, v2 = zero, v3 = zero;                             \
            __m512i q0 = zero, q1 = zero, q2 = zero, q3 = zero;                             \
            __mmask16 bad = 0;                                                              \
            TI__QV_F(0)                                                                     \
            if (NV > 1) TI__QV_F(1)                                                         \
            if (NV > 2) TI__QV_F(2)                                                         \
            if (NV > 3) TI__QV_F(3)                                                         \
            if (bad != 0) { /* about one block of 64 in 32 */                               \
                TI__QV_I(0)                                                                 \
                if (NV > 1) TI__QV_I(1)                                                     \
                if (NV > 2) TI__QV_I(2)                                                     \
                if (NV > 3) TI__QV_I(3)                                                     \
            }                                                                               \
            __m512i a = _mm512_adds_epi16(_mm512_packs_epi32(q0, q1), yo16);                \
            __m512i b = _mm512_adds_epi16(_mm512_packs_epi32(q2, q3), yo16);                \
            if (upk) o = _mm512_min_epu8(_mm512_max_epu8(_mm512_packus_epi16(a, b), lo8), hi8); \
            else o = _mm512_min_epi8(_mm512_max_epi8(_mm512_packs_epi16(a, b), lo8), hi8);  \
            o = _mm512_permutexvar_epi32(perm, o);                                          \
            if (full)                                                                       \
                _mm512_storeu_si512((void *)(out + r * ldo + i), o);                        \
            else                                                                            \
                _mm512_mask_storeu_epi8(out + r * ldo + i, ko, o);                          \
        }                                                                                   \
    }
    size_t i = 0;
    for (; pk && i + 16 < n; i += 64) { /* 16 or fewer left: VPMOVDB below is as fast */
        size_t left = n - i;
        __mmask16 k0 = ti__qv_mask16(left), k1 = ti__qv_mask16(left > 16 ? left - 16 : 0);
        __mmask16 k2 = ti__qv_mask16(left > 32 ? left - 32 : 0);
        __mmask16 k3 = ti__qv_mask16(left > 48 ? left - 48 : 0);
        __mmask64 ko = left >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << left) - 1;
        if (left >= 64) TI__QV_BLOCK(4, 1)
        else if (left > 48) TI__QV_BLOCK(4, 0)
        else if (left > 32) TI__QV_BLOCK(3, 0)
        else TI__QV_BLOCK(2, 0)
    }
    /* the last 16 columns or fewer; no packing (a zero point far from the clamp range, or a
     * clamp range outside bytes); or the integer path: 16 columns at a time */
    for (; i < n; i += 16) {
        __mmask16 k0 = ti__qv_mask16(n - i);
        const int full = 0;
        TI__QV_COLS(0)
        __m512i mo = _mm512_srli_epi64(m0, 32), ls = _mm512_max_epi32(sh0, zero);
        __m512i rs = _mm512_max_epi32(_mm512_sub_epi32(zero, sh0), zero);
        __m512i mask = _mm512_sub_epi32(_mm512_sllv_epi32(one, rs), one);
        __m512i half = _mm512_srai_epi32(mask, 1);
        for (size_t r = 0; r < nr; r++) {
            __m512i rv = rt != 0 ? _mm512_set1_epi32(row[r]) : zero, v0 = zero, q0 = zero;
            __mmask16 bad = 0;
            if (fl) {
                TI__QV_F(0)
            } else {
                v0 = _mm512_maskz_loadu_epi32(k0, dot + r * ldd + i);
                if (hc) v0 = _mm512_add_epi32(v0, cc0);
                if (rt != 0) v0 = _mm512_add_epi32(v0, rt == 2 ? _mm512_mullo_epi32(bb0, rv) : rv);
            }
            if (!fl || bad != 0)
                q0 = ti__qv_rq_int(pos != 0 ? ti__qv_lshift(v0, ls) : v0, m0, mo, rs, mask, half);
            q0 = _mm512_add_epi32(_mm512_min_epi32(_mm512_max_epi32(q0, qlo), qhi), vyo);
            /* VPMOVDB to a register, then the store (the masked VPMOVDB to memory is
             * microcoded on AMD Zen 4) */
            __m128i b8 = _mm512_cvtepi32_epi8(q0);
            if (k0 == 0xffff) _mm_storeu_si128((__m128i *)(void *)(out + r * ldo + i), b8);
            else _mm_mask_storeu_epi8(out + r * ldo + i, k0, b8);
        }
    }
#undef TI__QV_BLOCK
#undef TI__QV_COLS
#undef TI__QV_F
#undef TI__QV_I
    return 1;
}

#define TI__QV_ROWS8_FN(name, RT, HC)                                                       \
    static __attribute__((noinline, unused)) TI__TARGET_AVX512VNNI int name(                  \
        size_t nr, const uint32_t *dot, size_t ldd, const int32_t *colc, const int32_t *bos,  \
        const int32_t *row, size_t n, const int32_t *mult, const int32_t *shift, int32_t yo,  \
        int32_t lo, int32_t hi, uint8_t *out, size_t ldo) {                                 \
        return ti__qv_rows8(RT, HC, nr, dot, ldd, colc, bos, row, n, mult, shift, yo, lo, hi, \
                            out, ldo);                                                      \
    }
TI__QV_ROWS8_FN(ti__qv_rows8_r0, 0, 0) /* the GEMM's, int8 weights (column terms folded) */
TI__QV_ROWS8_FN(ti__qv_rows8_r0c, 0, 1) /* the depthwise path's */
TI__QV_ROWS8_FN(ti__qv_rows8_r1, 1, 0)  /* the GEMM's, uint8 weights */
TI__QV_ROWS8_FN(ti__qv_rows8_any, row == NULL ? 0 : bos == NULL ? 1 : 2, colc != NULL)
#undef TI__QV_ROWS8_FN

/* ti__qg8_row_vnni's requantization for nr rows at once, to bytes only: row r's sums
 * dot[r * ldd + c] + colc[c] + (bos ? bos[c] * row[r] : row[r]) (colc NULL: no column term;
 * row NULL: no row term),
 * requantized to out[r * ldo + c] for c < n. Columns outer, rows inner: the per-column
 * multipliers, shifts and masks are set up once for all rows, and the rows' chains overlap.
 * TFLite's usual case (right shifts, multipliers >= 0, a zero point near the clamp range)
 * goes through ti__qv_rq_float, 64 columns at a time packed to bytes with saturation
 * (VPACKSSDW, VPADDSW of the zero point, VPACKSSWB or VPACKUSWB, then the clamp on bytes);
 * the rest as ti__qg8_row_vnni does it. Returns 0, doing nothing, when a shift is outside
 * [-31, 31], a multiplier INT32_MIN, or lo - yo or hi - yo outside int32 (the caller then
 * goes row by row), else 1. */
TI__PRIVATE int ti__qg8_rows8_vnni(size_t nr, const uint32_t *dot, size_t ldd, const int32_t *colc,
                                   const int32_t *bos, const int32_t *row, size_t n,
                                   const int32_t *mult, const int32_t *shift, int32_t yo,
                                   int32_t lo, int32_t hi, uint8_t *out, size_t ldo) {
    if (row == NULL && colc == NULL)
        return ti__qv_rows8_r0(nr, dot, ldd, colc, bos, row, n, mult, shift, yo, lo, hi, out, ldo);
    if (row == NULL)
        return ti__qv_rows8_r0c(nr, dot, ldd, colc, bos, row, n, mult, shift, yo, lo, hi, out, ldo);
    if (bos == NULL && colc == NULL)
        return ti__qv_rows8_r1(nr, dot, ldd, colc, bos, row, n, mult, shift, yo, lo, hi, out, ldo);
    return ti__qv_rows8_any(nr, dot, ldd, colc, bos, row, n, mult, shift, yo, lo, hi, out, ldo);
}

/* A block of n columns planned once per row range: the column terms colc[c] = bias[c] (0
 * without bias) + ao * csum[c] modulo 2^32, 0 for c in [n, n16) (n16: n rounded up to 16);
 * with s != NULL, the float scales of rows8's fast path for ti__qg8_micro_rq_vnni: s[c] = m
 * 2^-(31 + rs), e[c] = 2^-(rs + 1) (ti__qv_rq_float), 0 in [n, n16). Returns 1 when s was
 * given and every column and the output range take rows8's packed float path (right
 * shifts 1..31, multipliers >= 0, ti__qv_pack_ok), else 0 (s and e then unset). */
TI__PRIVATE TI__TARGET_AVX512VNNI int ti__qg8_plan_vnni(size_t n, const int32_t *bias,
                                                        const int32_t *csum, int32_t ao,
                                                        int32_t *colc, const int32_t *mult,
                                                        const int32_t *shift, int32_t yo,
                                                        int32_t lo, int32_t hi, float *s,
                                                        float *e) {
    const __m512i vao = _mm512_set1_epi32(ao);
    for (size_t i = 0; i < n; i += 16) {
        __mmask16 k = ti__qv_mask16(n - i);
        __m512i c = _mm512_mullo_epi32(_mm512_maskz_loadu_epi32(k, csum + i), vao);
        if (bias != NULL) c = _mm512_add_epi32(c, _mm512_maskz_loadu_epi32(k, bias + i));
        _mm512_storeu_si512((void *)(colc + i), c);
    }
    if (s == NULL || !ti__qv_pack_ok(yo, lo, hi)) return 0;
    for (size_t i = 0; i < n; i += 16) {
        __mmask16 k = ti__qv_mask16(n - i);
        __m512i sh = _mm512_maskz_loadu_epi32(k, shift + i);
        __m512i m = _mm512_maskz_loadu_epi32(k, mult + i);
        if ((_mm512_mask_cmpgt_epi32_mask(k, sh, _mm512_set1_epi32(-1)) |
             _mm512_mask_cmplt_epi32_mask(k, sh, _mm512_set1_epi32(-31)) |
             _mm512_mask_cmplt_epi32_mask(k, m, _mm512_setzero_si512())) != 0)
            return 0;
        __m512 sv, ev;
        ti__qv_scales(m, sh, k, &sv, &ev);
        _mm512_storeu_ps(s + i, sv);
        _mm512_storeu_ps(e + i, ev);
    }
    return 1;
}

/* ti__qv_tile (init, no add) with rows8's packed float requantization in its registers:
 * row r < nr of the 8 gets its sums (plus row[r] when row != NULL) requantized by s and e
 * (ti__qg8_plan_vnni's, 16 * NB of them) and stored as bytes to out[r * ldo + c], c < nc
 * (<= 16 * NB). A row with a lane near a rounding step (ti__qv_rq_float's *bad) has its 16
 * or 32 sums requantized again in integers with t's multipliers and shifts, as rows8 does
 * (ti__qv_rq_cols; it used to spill the row for a call of rows8, 8 % of MobileNetV2 int8's
 * GEMM time: one row in 64 of them). */
TI__X86_INLINE TI__TARGET_AVX512VNNI void ti__qv_tile_rq(const int NB, const int MR,
                                                         const uint32_t flip,
                                                         size_t kq, const uint8_t *a, size_t lda,
                                                         const int8_t *b, size_t bs,
                                                         const int32_t *init, const int32_t *row,
                                                         const ti__qg8_rqt *t, size_t nr,
                                                         size_t nc, uint8_t *out, size_t ldo) {
    __m512i z = _mm512_loadu_si512((const void *)init), z1 = z;
    if (NB > 1) z1 = _mm512_loadu_si512((const void *)(init + 16));
    TI__QV_ACCUMULATE
    const __m512 s0 = _mm512_loadu_ps(t->s), e0 = _mm512_loadu_ps(t->e);
    const __m512 s1 = NB > 1 ? _mm512_loadu_ps(t->s + 16) : s0;
    const __m512 e1 = NB > 1 ? _mm512_loadu_ps(t->e + 16) : e0;
    const __m512i yo16 = _mm512_set1_epi16((short)t->yo);
    const __m512i lo8 = _mm512_set1_epi8((char)t->lo), hi8 = _mm512_set1_epi8((char)t->hi);
    /* after VPACKSSDW of each row's two vectors and VPACKUSWB of rows r and r + 1, dword
     * 4 L + j of lane L holds channels 4 L..4 L + 3 of vector j & 1 of row r + (j >> 1) */
    const __m512i perm = _mm512_set_epi32(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0);
    const int upk = t->lo >= 0 && t->hi <= 255;
    const __mmask32 km = (__mmask32)(nc >= 32 ? 0xffffffffu : (1u << nc) - 1u);
    const __mmask16 k1 = (__mmask16)(km >> 16); /* the second block's columns (NB 2) */
    (void)k1;
    /* row r's sums, with its row term: int16 o */
#define TI__QV_RQ16(r, o)                                                                   \
    {                                                                                       \
        __m512i v0 = c##r##_0, v1 = c##r##_1;                                               \
        if (row != NULL) {                                                                  \
            __m512i rv = _mm512_set1_epi32(row[r]);                                         \
            v0 = _mm512_add_epi32(v0, rv);                                                  \
            v1 = _mm512_add_epi32(v1, rv);                                                  \
        }                                                                                   \
        o = ti__qv_rq_w(NB, v0, v1, s0, e0, s1, e1, t->mult, t->shift, (__mmask16)km, k1,   \
                        yo16);                                                              \
    }
    /* rows r and r1 = r + 1 (when there) packed to bytes together and stored */
#define TI__QV_RQPAIR(r, r1)                                                                \
    if ((r) < MR && (r) < nr) {                                                             \
        __m512i oa, ob;                                                                     \
        TI__QV_RQ16(r, oa)                                                                  \
        const int two = (r1) < MR && (r1) < nr;                                             \
        ob = oa;                                                                            \
        if (two) TI__QV_RQ16(r1, ob)                                                        \
        __m512i o = ti__qv_pack2(oa, ob, upk, lo8, hi8, perm);                              \
        _mm256_mask_storeu_epi8(out + (r) * ldo, km, _mm512_castsi512_si256(o));            \
        if (two) _mm256_mask_storeu_epi8(out + (r1) * ldo, km, _mm512_extracti64x4_epi64(o, 1)); \
    }
    TI__QV_RQPAIR(0, 1) TI__QV_RQPAIR(2, 3) TI__QV_RQPAIR(4, 5) TI__QV_RQPAIR(6, 7)
#undef TI__QV_RQPAIR
#undef TI__QV_RQ16
}

#define TI__QV_TILE_RQ_FN(name, NB, MR, FLIP)                                               \
    static __attribute__((noinline, unused)) TI__TARGET_AVX512VNNI void name(                 \
        size_t kq, const uint8_t *a, size_t lda, const int8_t *b, size_t bs,                \
        const int32_t *init, const int32_t *row, const ti__qg8_rqt *t, size_t nr, size_t nc, \
        uint8_t *out, size_t ldo) {                                                         \
        ti__qv_tile_rq(NB, MR, FLIP, kq, a, lda, b, bs, init, row, t, nr, nc, out, ldo);    \
    }
TI__QV_TILE_RQ_FN(ti__qv_tile_rq1, 1, 8, 0)
TI__QV_TILE_RQ_FN(ti__qv_tile_rq2, 2, 8, 0)
TI__QV_TILE_RQ_FN(ti__qv_tile_rq1x, 1, 8, 0x80808080u)
TI__QV_TILE_RQ_FN(ti__qv_tile_rq2x, 2, 8, 0x80808080u)
TI__QV_TILE_RQ_FN(ti__qv_tile_rq1_4, 1, 4, 0)
TI__QV_TILE_RQ_FN(ti__qv_tile_rq2_4, 2, 4, 0)
TI__QV_TILE_RQ_FN(ti__qv_tile_rq1x_4, 1, 4, 0x80808080u)
TI__QV_TILE_RQ_FN(ti__qv_tile_rq2x_4, 2, 4, 0x80808080u)
TI__QV_TILE_RQ_FN(ti__qv_tile_rq1_1, 1, 1, 0)
TI__QV_TILE_RQ_FN(ti__qv_tile_rq2_1, 2, 1, 0)
TI__QV_TILE_RQ_FN(ti__qv_tile_rq1x_1, 1, 1, 0x80808080u)
TI__QV_TILE_RQ_FN(ti__qv_tile_rq2x_1, 2, 1, 0x80808080u)
#undef TI__QV_TILE_RQ_FN

/* The micro-kernel with the requantization (ti__qv_tile_rq) for nb blocks of 16 columns (1
 * or 2), A's rows uint8 or (i8) int8 as they lie. A block of 4 rows or fewer (the last of a
 * map whose pixels are not a multiple of 8: 7 x 7 = 6 x 8 + 1, 14 x 14 = 24 x 8 + 4) sums
 * only 4 rows, or its one row, not 8: MobileNetV2 int8's 1x1 convs at 7 x 7 did an eighth
 * of their work for rows that were not there. */
TI__PRIVATE void ti__qg8_micro_rq_vnni(size_t kq, const uint8_t *a, size_t lda, int i8,
                                       const int8_t *b, size_t bs, int nb, const int32_t *init,
                                       const int32_t *row, const ti__qg8_rqt *t, size_t nr,
                                       size_t nc, uint8_t *out, size_t ldo) {
    typedef void (*tile_fn)(size_t, const uint8_t *, size_t, const int8_t *, size_t,
                            const int32_t *, const int32_t *, const ti__qg8_rqt *, size_t, size_t,
                            uint8_t *, size_t);
    /* [rows 8, 4, 1][nb - 1][i8] */
    static const tile_fn tiles[3][2][2] = {
        {{ti__qv_tile_rq1, ti__qv_tile_rq1x}, {ti__qv_tile_rq2, ti__qv_tile_rq2x}},
        {{ti__qv_tile_rq1_4, ti__qv_tile_rq1x_4}, {ti__qv_tile_rq2_4, ti__qv_tile_rq2x_4}},
        {{ti__qv_tile_rq1_1, ti__qv_tile_rq1x_1}, {ti__qv_tile_rq2_1, ti__qv_tile_rq2x_1}}};
    tiles[nr <= 1 ? 2 : nr <= 4 ? 1 : 0][nb > 1][i8 != 0](kq, a, lda, b, bs, init, row, t, nr, nc,
                                                          out, ldo);
}

/* The VNNI depthwise path's weights (cpu/tfl_conv.c) of n <= 64 channels and nt taps, once
 * per chunk of channels, as signed bytes b_t[c] = w'_t[c] - bo (w' = w + wo; bo = wo for
 * int8 weights, 128 + wo for uint8, which keeps b in int8): per block of 32 channels and
 * quad of taps q, 128 bytes wp[((blk * nq + q) * 4 + i) * 32 + L * 16 + j * 4 + u] = b_(4q +
 * u)[32 blk + 16 L + 4 i + j] (ti__dwq_pix_vnni's lane order; nq = (nt + 3) / 4; 0 past nt
 * taps or n channels). ks[c] = ao * sum over t of w'_t[c] modulo 2^32, ao = xo for uint8
 * inputs and xo - 128 for int8 ones (read as uint8 a = x + 128): what the input offset adds
 * to every sum of a * w'. */
TI__PRIVATE void ti__dwq_wprep_vnni(int u8, int8_t *wp, uint32_t *ks, const void *w,
                                    const size_t *woff, size_t nt, size_t n, int32_t xo,
                                    int32_t wo) {
    const unsigned char *wb = (const unsigned char *)w;
    const size_t nq = (nt + 3) / 4;
    const int32_t bo = u8 ? 128 + wo : wo, ao = u8 ? xo : xo - 128;
    memset(wp, 0, (n + 31) / 32 * nq * 128);
    for (size_t c = 0; c < n; c++) {
        int8_t *d = wp + (c / 32 * nq * 4 + c % 16 / 4) * 32 + c % 32 / 16 * 16 + c % 4 * 4;
        uint32_t sum = 0;
        for (size_t t = 0; t < nt; t++) {
            int32_t v = (u8 ? (int32_t)wb[woff[t] + c] : (int32_t)(signed char)wb[woff[t] + c]) + wo;
            sum += (uint32_t)v;
            d[t / 4 * 128 + t % 4] = (int8_t)(v - bo);
        }
        ks[c] = sum * (uint32_t)ao;
    }
}

/* One quad of taps q (pointers P[4q..4q+3], bytes at off) of 32 channels into the sums A0..A3:
 * the four taps' bytes flipped, interleaved into each channel's lane, one VPDPBUSD per 8
 * channels (plus one with bo's bytes when bo != 0); ti__dwq_pix_vnni's lane order. Uses the
 * caller's q, nq, fv (the flip), bo, bof and bol (its bytes). */
/* What TI__DWV_QUAD uses, from nt, flip and bo: the quads, the flip's bytes, bo's bytes for
 * every tap of a whole quad and for the last quad's taps only. */
#define TI__DWV_CONSTS                                                                      \
    const size_t nq = (nt + 3) / 4;                                                         \
    const __m256i fv = _mm256_set1_epi8((char)flip);                                        \
    const __m256i bof = _mm256_set1_epi8((char)bo);                                         \
    const __m256i bol = _mm256_set1_epi32((int32_t)((0xffffffffu >> (8 * (4 * nq - nt))) & \
                                                    (0x01010101u * (uint8_t)bo)));
#define TI__DWV_LDX(ptr)                                                                    \
    _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(const void *)(ptr)), fv)
#define TI__DWV_QUAD(A0, A1, A2, A3, P, W, off)                                                \
    {                                                                                       \
        __m256i x0 = TI__DWV_LDX(P[4 * q] + (off));                                         \
        __m256i x1 = TI__DWV_LDX(P[4 * q + 1] + (off));                                     \
        __m256i x2 = TI__DWV_LDX(P[4 * q + 2] + (off));                                     \
        __m256i x3 = TI__DWV_LDX(P[4 * q + 3] + (off));                                     \
        __m256i l01 = _mm256_unpacklo_epi8(x0, x1), h01 = _mm256_unpackhi_epi8(x0, x1);    \
        __m256i l23 = _mm256_unpacklo_epi8(x2, x3), h23 = _mm256_unpackhi_epi8(x2, x3);    \
        __m256i y0 = _mm256_unpacklo_epi16(l01, l23), y1 = _mm256_unpackhi_epi16(l01, l23); \
        __m256i y2 = _mm256_unpacklo_epi16(h01, h23), y3 = _mm256_unpackhi_epi16(h01, h23); \
        A0 = _mm256_dpbusd_epi32(A0, y0, _mm256_loadu_si256(W + 4 * q));                    \
        A1 = _mm256_dpbusd_epi32(A1, y1, _mm256_loadu_si256(W + 4 * q + 1));                \
        A2 = _mm256_dpbusd_epi32(A2, y2, _mm256_loadu_si256(W + 4 * q + 2));                \
        A3 = _mm256_dpbusd_epi32(A3, y3, _mm256_loadu_si256(W + 4 * q + 3));                \
        if (bo != 0) {                                                                      \
            __m256i bb = q + 1 < nq ? bof : bol;                                            \
            A0 = _mm256_dpbusd_epi32(A0, y0, bb);                                           \
            A1 = _mm256_dpbusd_epi32(A1, y1, bb);                                           \
            A2 = _mm256_dpbusd_epi32(A2, y2, bb);                                           \
            A3 = _mm256_dpbusd_epi32(A3, y3, bb);                                           \
        }                                                                                   \
    }

/* The sums of 32 channels from the quads' lane order (a0 = channels 0-3 | 16-19, a1 = 4-7 |
 * 20-23, a2 = 8-11 | 24-27, a3 = 12-15 | 28-31) to o[0..32), in channel order. */
TI__X86_INLINE TI__TARGET_AVX512VNNI void ti__dwv_store32(uint32_t *o, __m256i a0, __m256i a1,
                                                         __m256i a2, __m256i a3) {
    _mm256_storeu_si256((__m256i *)(void *)o, _mm256_permute2x128_si256(a0, a1, 0x20));
    _mm256_storeu_si256((__m256i *)(void *)(o + 8), _mm256_permute2x128_si256(a2, a3, 0x20));
    _mm256_storeu_si256((__m256i *)(void *)(o + 16), _mm256_permute2x128_si256(a0, a1, 0x31));
    _mm256_storeu_si256((__m256i *)(void *)(o + 24), _mm256_permute2x128_si256(a2, a3, 0x31));
}

/* Two blocks of 32 channels in one pass over the quads, eight independent sums where one
 * block would chain four (inlined, so that a chunk's offsets are constants): block A's taps xpa[t] + offa against weights wa (one block of
 * ti__dwq_wprep_vnni's layout) to acca, block B's to accb; ti__dwq_pix_vnni's other
 * arguments. Two blocks of one pixel (a chunk of 64 channels) or one block of two pixels. */
TI__X86_INLINE TI__TARGET_AVX512VNNI void ti__dwq_two_blocks(uint32_t *acca, uint32_t *accb,
                                                             const unsigned char *const *xpa,
                                                             size_t offa,
                                                             const unsigned char *const *xpb,
                                                             size_t offb, size_t nt,
                                                             const int8_t *wa, const int8_t *wb,
                                                             uint8_t flip, int32_t bo) {
    TI__DWV_CONSTS
    const __m256i *wv = (const __m256i *)(const void *)wa, *wu = (const __m256i *)(const void *)wb;
    __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
    __m256i b0 = a0, b1 = a0, b2 = a0, b3 = a0;
    for (size_t q = 0; q < nq; q++) {
        TI__DWV_QUAD(a0, a1, a2, a3, xpa, wv, offa)
        TI__DWV_QUAD(b0, b1, b2, b3, xpb, wu, offb)
    }
    ti__dwv_store32(acca, a0, a1, a2, a3);
    ti__dwv_store32(accb, b0, b1, b2, b3);
}

/* ti__dwq_pix_vnni for two pixels (taps xpa[t] + offa, xpb[t] + offb; sums to acca, accb)
 * of exactly 32 channels: ti__dwq_two_blocks on one block of weights. */
TI__PRIVATE TI__TARGET_AVX512VNNI void ti__dwq_pix2_vnni(uint32_t *acca, uint32_t *accb,
                                                         const unsigned char *const *xpa,
                                                         size_t offa,
                                                         const unsigned char *const *xpb,
                                                         size_t offb, size_t nt, const int8_t *wp,
                                                         uint8_t flip, int32_t bo) {
    ti__dwq_two_blocks(acca, accb, xpa, offa, xpb, offb, nt, wp, wp, flip, bo);
}

/* acc[c] = sum over taps t < nt of a_t[c] * w'_t[c] modulo 2^32, c < n (<= 64): a_t[c] =
 * xp[t][off + c] ^ flip (flip 0x80 reads int8 as uint8), w'_t = b_t + bo with b as
 * ti__dwq_wprep_vnni laid it out; xp[nt .. 4 * nq) + off must be readable for n bytes
 * (their weights are 0). Per quad of taps and 32 channels: the four taps' bytes interleaved into
 * each channel's 32-bit lane (VPUNPCKL/HBW then VPUNPCKL/HWD, within 128-bit lanes: lane
 * order 16 L + 4 i + j), one VPDPBUSD per 8 channels (plus one with bo's bytes when bo !=
 * 0); VPERM2I128 puts the sums back in channel order. */
TI__PRIVATE TI__TARGET_AVX512VNNI void ti__dwq_pix_vnni(uint32_t *acc,
                                                        const unsigned char *const *xp,
                                                        size_t off, size_t nt, const int8_t *wp,
                                                        size_t n, uint8_t flip, int32_t bo) {
    TI__DWV_CONSTS
    size_t c0 = 0;
    if (n == 64) { /* a whole chunk: both blocks in one pass */
        ti__dwq_two_blocks(acc, acc + 32, xp, off, xp, off + 32, nt, wp, wp + nq * 128, flip,
                           bo);
        c0 = 64;
    }
    for (; c0 < n; c0 += 32) {
        size_t left = n - c0;
        __mmask32 k = (__mmask32)(left >= 32 ? 0xffffffffu : (1u << left) - 1u);
        const __m256i *wv = (const __m256i *)(const void *)(wp + c0 / 32 * nq * 128);
        __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
        for (size_t q = 0; q < nq; q++) {
            const unsigned char *const *p = xp + 4 * q;
#define TI__DWV_LD(i)                                                                       \
    _mm256_xor_si256(left >= 32                                                             \
                         ? _mm256_loadu_si256((const __m256i *)(const void *)(p[i] + off + c0)) \
                         : _mm256_maskz_loadu_epi8(k, p[i] + off + c0),                     \
                     fv)
            __m256i x0 = TI__DWV_LD(0), x1 = TI__DWV_LD(1), x2 = TI__DWV_LD(2), x3 = TI__DWV_LD(3);
#undef TI__DWV_LD
            __m256i l01 = _mm256_unpacklo_epi8(x0, x1), h01 = _mm256_unpackhi_epi8(x0, x1);
            __m256i l23 = _mm256_unpacklo_epi8(x2, x3), h23 = _mm256_unpackhi_epi8(x2, x3);
            __m256i y0 = _mm256_unpacklo_epi16(l01, l23), y1 = _mm256_unpackhi_epi16(l01, l23);
            __m256i y2 = _mm256_unpacklo_epi16(h01, h23), y3 = _mm256_unpackhi_epi16(h01, h23);
            a0 = _mm256_dpbusd_epi32(a0, y0, _mm256_loadu_si256(wv + 4 * q));
            a1 = _mm256_dpbusd_epi32(a1, y1, _mm256_loadu_si256(wv + 4 * q + 1));
            a2 = _mm256_dpbusd_epi32(a2, y2, _mm256_loadu_si256(wv + 4 * q + 2));
            a3 = _mm256_dpbusd_epi32(a3, y3, _mm256_loadu_si256(wv + 4 * q + 3));
            if (bo != 0) {
                __m256i b = q + 1 < nq ? bof : bol;
                a0 = _mm256_dpbusd_epi32(a0, y0, b);
                a1 = _mm256_dpbusd_epi32(a1, y1, b);
                a2 = _mm256_dpbusd_epi32(a2, y2, b);
                a3 = _mm256_dpbusd_epi32(a3, y3, b);
            }
        }
        /* a0 = channels 0-3 | 16-19, a1 = 4-7 | 20-23, a2 = 8-11 | 24-27, a3 = 12-15 | 28-31 */
        uint32_t *o = acc + c0;
        _mm256_mask_storeu_epi32(o, (__mmask8)k, _mm256_permute2x128_si256(a0, a1, 0x20));
        _mm256_mask_storeu_epi32(o + 8, (__mmask8)(k >> 8), _mm256_permute2x128_si256(a2, a3, 0x20));
        _mm256_mask_storeu_epi32(o + 16, (__mmask8)(k >> 16), _mm256_permute2x128_si256(a0, a1, 0x31));
        _mm256_mask_storeu_epi32(o + 24, (__mmask8)(k >> 24), _mm256_permute2x128_si256(a2, a3, 0x31));
    }
}

#undef TI__DWV_QUAD
#undef TI__DWV_LDX
#undef TI__DWV_CONSTS

/* The row layout of the VNNI depthwise path's 3 x 3 weights (cpu/tfl_conv.c), n <= 64
 * channels, once per chunk: per block of 32 channels and kernel row fy, two sets of four
 * vectors in ti__dwq_pix_vnni's lane order (wp[((blk * 3 + fy) * 2 + v) * 128 + i * 32 + L *
 * 16 + j * 4 + u] for channel 32 blk + 16 L + 4 i + j): v = 0 holds taps fx = 0, 1, 2 of the
 * row in bytes u = 0, 1, 2 and 0 in byte 3, v = 1 the same taps in bytes 1, 2, 3 and 0 in
 * byte 0: four adjacent input columns interleaved once serve the output pixel on the first
 * (v = 0) and at stride 1 the next one (v = 1). Bytes b = w' - bo as ti__dwq_wprep_vnni's;
 * 0 past n channels. */
TI__PRIVATE void ti__dwq_wprep_rows_vnni(int u8, int8_t *wp, const void *w, const size_t *woff,
                                         size_t n, int32_t wo) {
    const unsigned char *wb = (const unsigned char *)w;
    const int32_t bo = u8 ? 128 + wo : wo;
    memset(wp, 0, (n + 31) / 32 * TI__DWQ_ROW_BYTES);
    for (size_t c = 0; c < n; c++) {
        int8_t *d = wp + c / 32 * TI__DWQ_ROW_BYTES + c % 16 / 4 * 32 + c % 32 / 16 * 16 +
                    c % 4 * 4;
        for (size_t t = 0; t < 9; t++) {
            unsigned char q = wb[woff[t] + c];
            int32_t v = (u8 ? (int32_t)q : (int32_t)(signed char)q) + wo;
            d[t / 3 * 256 + t % 3] = (int8_t)(v - bo);
            d[t / 3 * 256 + 128 + t % 3 + 1] = (int8_t)(v - bo);
        }
    }
}

/* A block of n <= 32 channels' requantization for ti__dwq_row3_rq_vnni (ti__dwq_rq): colc,
 * mult and shift in channel order. Returns 0, leaving q unset, where the float path of
 * ti__qv_rq_float and the byte packing of rows8 do not apply (a shift that is not a right
 * shift of 1 to 31, a negative multiplier, a clamp range more than 512 from the zero point or
 * outside a byte's: ti__qv_pack_ok); the caller then sums and requantizes apart. */
TI__PRIVATE TI__TARGET_AVX512VNNI int ti__dwq_rq_plan_vnni(ti__dwq_rq *q, const int32_t *colc,
                                                          const int32_t *mult,
                                                          const int32_t *shift, size_t n,
                                                          int32_t yo, int32_t lo, int32_t hi) {
    if (n == 0 || n > 32 || !ti__qv_pack_ok(yo, lo, hi)) return 0;
    const __mmask16 k0 = ti__qv_mask16(n), k1 = ti__qv_mask16(n > 16 ? n - 16 : 0);
    const __m512i m0 = _mm512_maskz_loadu_epi32(k0, mult), m1 = _mm512_maskz_loadu_epi32(k1, mult + 16);
    const __m512i h0 = _mm512_maskz_loadu_epi32(k0, shift);
    const __m512i h1 = _mm512_maskz_loadu_epi32(k1, shift + 16);
    const __m512i zero = _mm512_setzero_si512(), m31 = _mm512_set1_epi32(-31);
    /* right shifts of 1 to 31 and multipliers >= 0 in the n channels (0 past them passes) */
    if ((_mm512_mask_cmpgt_epi32_mask(k0, h0, _mm512_set1_epi32(-1)) |
         _mm512_mask_cmpgt_epi32_mask(k1, h1, _mm512_set1_epi32(-1)) |
         _mm512_cmpgt_epi32_mask(m31, h0) | _mm512_cmpgt_epi32_mask(m31, h1) |
         _mm512_cmpgt_epi32_mask(zero, m0) | _mm512_cmpgt_epi32_mask(zero, m1)) != 0)
        return 0;
    __m512 s0, e0, s1, e1; /* ti__qv_scales: the same rounding as rows8's */
    ti__qv_scales(m0, h0, k0, &s0, &e0);
    ti__qv_scales(m1, h1, k1, &s1, &e1);
    /* channel order (0-15, 16-31) to the lane order: channels 0-3, 16-19, 4-7, 20-23, then
     * 8-11, 24-27, 12-15, 28-31 */
    const __m512i p0 = _mm512_set_epi32(23, 22, 21, 20, 7, 6, 5, 4, 19, 18, 17, 16, 3, 2, 1, 0);
    const __m512i p1 = _mm512_add_epi32(p0, _mm512_set1_epi32(8));
#define TI__DWQ_LANES(dst, a, b)                                                            \
    _mm512_storeu_si512((void *)(dst), _mm512_permutex2var_epi32(a, p0, b));                \
    _mm512_storeu_si512((void *)((dst) + 16), _mm512_permutex2var_epi32(a, p1, b));
    const __m512i c0 = _mm512_maskz_loadu_epi32(k0, colc), c1 = _mm512_maskz_loadu_epi32(k1, colc + 16);
    TI__DWQ_LANES(q->colc, c0, c1)
    TI__DWQ_LANES(q->mult, m0, m1)
    TI__DWQ_LANES(q->shift, h0, h1)
    TI__DWQ_LANES(q->s, _mm512_castps_si512(s0), _mm512_castps_si512(s1))
    TI__DWQ_LANES(q->e, _mm512_castps_si512(e0), _mm512_castps_si512(e1))
#undef TI__DWQ_LANES
    q->yo = yo;
    q->lo = lo;
    q->hi = hi;
    return 1;
}

/* The 3 x 3 depthwise sums along an output row on the row layout (ti__dwq_wprep_rows_vnni's
 * block wr), dilation 1, stride 1 (s2 0) or 2: for p < np and c < n (<= 32) the sums
 * S(p, c) = sum over fy, fx < 3 of a(fy, (s2 ? 2 : 1) p + fx)[c] * w'_(3 fy + fx)[c] modulo
 * 2^32. Column i of the windows (from the first pixel's first) is the input's for lc <= i <
 * lc + nv, a(fy, i)[c] = r[fy][(i - lc) * cs[fy] + c] ^ flip, and padding outside, pad[c] ^
 * flip (the input's zero point; cs 0: a whole row of it). Each step interleaves four
 * adjacent columns of the three rows (ti__dwq_pix_vnni's lane order) and feeds one pixel, at
 * stride 1 two; the next step starts from the last two columns' interleaving (carried), so
 * a column is loaded and interleaved once. Reads no column past the last pixel's window.
 * RQ 0: acc[p * lda + c] = S(p, c), 32 sums written per pixel. RQ 1: the sums start at q's
 * column terms and are requantized in registers (ti__qv_rq_float, rows8's packing) to the
 * bytes out[p * ldo + c], c < n; a pixel with a lane near a rounding step has its 32 sums
 * requantized again in integers (ti__qv_rq_cols, as rows8 and the requantizing tile). */
TI__X86_INLINE TI__TARGET_AVX512VNNI void ti__dwq_row3(const int RQ, uint32_t *acc, size_t lda,
                                                      uint8_t *out, size_t ldo,
                                                      const unsigned char *const *r,
                                                      const size_t *cs, size_t np, int s2,
                                                      size_t lc, size_t nv,
                                                      const unsigned char *pad,
                                                      const int8_t *wr, size_t n,
                                                      uint8_t flip, int32_t bo,
                                                      const ti__dwq_rq *q) {
    const __m256i fv = _mm256_set1_epi8((char)flip);
    const __mmask32 k = (__mmask32)(n >= 32 ? 0xffffffffu : (1u << n) - 1u);
    const uint32_t b3 = 0x00010101u * (uint8_t)bo;
    const __m256i boa = _mm256_set1_epi32((int32_t)b3), bob = _mm256_set1_epi32((int32_t)(b3 << 8));
    const __m256i *wv = (const __m256i *)(const void *)wr;
    const unsigned char *r0 = r[0], *r1 = r[1], *r2 = r[2];
    const size_t c0 = cs[0], c1 = cs[1], c2 = cs[2];
    /* RQ: the sums' starts (column terms), scales, and the packing's constants */
    const __m256i zero = _mm256_setzero_si256();
    const __m256i i0 = RQ ? _mm256_loadu_si256((const __m256i *)(const void *)q->colc) : zero;
    const __m256i i1 = RQ ? _mm256_loadu_si256((const __m256i *)(const void *)(q->colc + 8)) : zero;
    const __m256i i2 = RQ ? _mm256_loadu_si256((const __m256i *)(const void *)(q->colc + 16)) : zero;
    const __m256i i3 = RQ ? _mm256_loadu_si256((const __m256i *)(const void *)(q->colc + 24)) : zero;
    const __m512 s0 = RQ ? _mm512_loadu_ps(q->s) : _mm512_setzero_ps();
    const __m512 s1 = RQ ? _mm512_loadu_ps(q->s + 16) : s0;
    const __m512 e0 = RQ ? _mm512_loadu_ps(q->e) : s0, e1 = RQ ? _mm512_loadu_ps(q->e + 16) : s0;
    const int upk = RQ && q->lo >= 0 && q->hi <= 255;
    const __m512i yo16 = _mm512_set1_epi16((short)(RQ ? q->yo : 0));
    const __m512i lo8 = _mm512_set1_epi8((char)(RQ ? q->lo : 0));
    const __m512i hi8 = _mm512_set1_epi8((char)(RQ ? q->hi : 0));
    /* after VPACKSSDW of [a0 | a1] with [a2 | a3] and a byte pack of two pixels' of those,
     * dword 4 L + j of 128-bit lane L holds the first pixel's channels (j 0, 1; the second's
     * at j + 2): L 0 j 0: 0-3, j 1: 8-11; L 1: 16-19, 24-27; L 2: 4-7, 12-15; L 3: 20-23,
     * 28-31 */
    const __m512i perm = _mm512_set_epi32(15, 7, 14, 6, 11, 3, 10, 2, 13, 5, 12, 4, 9, 1, 8, 0);
    (void)acc, (void)lda, (void)out, (void)ldo;
#define TI__DWR_LD(ptr)                                                                     \
    _mm256_xor_si256(n >= 32 ? _mm256_loadu_si256((const __m256i *)(const void *)(ptr))     \
                             : _mm256_maskz_loadu_epi8(k, ptr),                             \
                     fv)
    /* the carried interleaving of columns col - 2 and col - 1 of each row */
    __m256i l0, h0, l1, h1, l2, h2;
    /* column I of row R (column step C), or the padding */
#define TI__DWR_COL(R, C, I) ((size_t)(I) - lc < nv ? TI__DWR_LD(R + ((I) - lc) * C) : padv)
#define TI__DWR_START(R, C, L, H)                                                           \
    {                                                                                       \
        __m256i x0 = TI__DWR_COL(R, C, 0), x1 = TI__DWR_COL(R, C, 1);                       \
        L = _mm256_unpacklo_epi8(x0, x1);                                                   \
        H = _mm256_unpackhi_epi8(x0, x1);                                                   \
    }
    const __m256i padv = TI__DWR_LD(pad);
    TI__DWR_START(r0, c0, l0, h0)
    TI__DWR_START(r1, c1, l1, h1)
    TI__DWR_START(r2, c2, l2, h2)
    /* one kernel row FY of a step: columns col, col + 1 (TAIL: col again, the window's
     * end) joined to the carry, into pixel p's sums A (and with TWO pixel p + 1's, B) */
#define TI__DWR_ROW(FY, R, C, L, H, TWO, TAIL)                                              \
    {                                                                                       \
        __m256i x2 = TI__DWR_COL(R, C, col);                                                \
        __m256i x3 = TAIL ? x2 : TI__DWR_COL(R, C, col + 1);                                \
        __m256i l23 = _mm256_unpacklo_epi8(x2, x3), h23 = _mm256_unpackhi_epi8(x2, x3);    \
        __m256i y0 = _mm256_unpacklo_epi16(L, l23), y1 = _mm256_unpackhi_epi16(L, l23);    \
        __m256i y2 = _mm256_unpacklo_epi16(H, h23), y3 = _mm256_unpackhi_epi16(H, h23);    \
        const __m256i *wa = wv + 8 * FY;                                                    \
        a0 = _mm256_dpbusd_epi32(a0, y0, _mm256_loadu_si256(wa));                           \
        a1 = _mm256_dpbusd_epi32(a1, y1, _mm256_loadu_si256(wa + 1));                       \
        a2 = _mm256_dpbusd_epi32(a2, y2, _mm256_loadu_si256(wa + 2));                       \
        a3 = _mm256_dpbusd_epi32(a3, y3, _mm256_loadu_si256(wa + 3));                       \
        if (TWO) {                                                                          \
            b0 = _mm256_dpbusd_epi32(b0, y0, _mm256_loadu_si256(wa + 4));                   \
            b1 = _mm256_dpbusd_epi32(b1, y1, _mm256_loadu_si256(wa + 5));                   \
            b2 = _mm256_dpbusd_epi32(b2, y2, _mm256_loadu_si256(wa + 6));                   \
            b3 = _mm256_dpbusd_epi32(b3, y3, _mm256_loadu_si256(wa + 7));                   \
        }                                                                                   \
        if (bo != 0) {                                                                      \
            a0 = _mm256_dpbusd_epi32(a0, y0, boa);                                          \
            a1 = _mm256_dpbusd_epi32(a1, y1, boa);                                          \
            a2 = _mm256_dpbusd_epi32(a2, y2, boa);                                          \
            a3 = _mm256_dpbusd_epi32(a3, y3, boa);                                          \
            if (TWO) {                                                                      \
                b0 = _mm256_dpbusd_epi32(b0, y0, bob);                                      \
                b1 = _mm256_dpbusd_epi32(b1, y1, bob);                                      \
                b2 = _mm256_dpbusd_epi32(b2, y2, bob);                                      \
                b3 = _mm256_dpbusd_epi32(b3, y3, bob);                                      \
            }                                                                               \
        }                                                                                   \
        L = l23;                                                                            \
        H = h23;                                                                            \
    }
    /* a pixel's sums A0..A3 requantized: int16 */
#define TI__DWR_W(A0, A1, A2, A3)                                                           \
    ti__qv_rq_w(2, _mm512_inserti64x4(_mm512_castsi256_si512(A0), A1, 1),                   \
                _mm512_inserti64x4(_mm512_castsi256_si512(A2), A3, 1), s0, e0, s1, e1,      \
                q->mult, q->shift, 0xffff, 0xffff, yo16)
    /* pixel p's sums a0..a3 and (TWO) pixel p + 1's b0..b3: to acc, or (RQ) requantized,
     * the two packed to bytes together, to out */
#define TI__DWR_OUT(TWO)                                                                    \
    if (!RQ) {                                                                              \
        ti__dwv_store32(acc + p * lda, a0, a1, a2, a3);                                     \
        if (TWO) ti__dwv_store32(acc + (p + 1) * lda, b0, b1, b2, b3);                      \
    } else {                                                                                \
        __m512i wa = TI__DWR_W(a0, a1, a2, a3), wb = TWO ? TI__DWR_W(b0, b1, b2, b3) : wa;  \
        __m512i o = ti__qv_pack2(wa, wb, upk, lo8, hi8, perm);                              \
        _mm256_mask_storeu_epi8(out + p * ldo, k, _mm512_castsi512_si256(o));               \
        if (TWO) _mm256_mask_storeu_epi8(out + (p + 1) * ldo, k, _mm512_extracti64x4_epi64(o, 1)); \
    }
#define TI__DWR_STEP(TWO, TAIL)                                                             \
    {                                                                                       \
        __m256i a0 = i0, a1 = i1, a2 = i2, a3 = i3;                                         \
        __m256i b0 = i0, b1 = i1, b2 = i2, b3 = i3;                                         \
        TI__DWR_ROW(0, r0, c0, l0, h0, TWO, TAIL)                                           \
        TI__DWR_ROW(1, r1, c1, l1, h1, TWO, TAIL)                                           \
        TI__DWR_ROW(2, r2, c2, l2, h2, TWO, TAIL)                                           \
        TI__DWR_OUT(TWO)                                                                    \
        (void)b0, (void)b1, (void)b2, (void)b3;                                             \
        p += TWO ? 2 : 1;                                                                   \
        col += 2;                                                                           \
    }
    size_t p = 0, col = 2;
    if (!s2) {
        while (p + 1 < np) TI__DWR_STEP(1, 0)
    } else {
        while (p + 1 < np) TI__DWR_STEP(0, 0)
    }
    if (p < np) TI__DWR_STEP(0, 1)
#undef TI__DWR_STEP
#undef TI__DWR_OUT
#undef TI__DWR_W
#undef TI__DWR_ROW
#undef TI__DWR_START
#undef TI__DWR_COL
#undef TI__DWR_LD
}

TI__PRIVATE TI__TARGET_AVX512VNNI void ti__dwq_row3_vnni(uint32_t *acc, size_t lda,
                                                         const unsigned char *const *r,
                                                         const size_t *cs, size_t np, int s2,
                                                         size_t lc, size_t nv,
                                                         const unsigned char *pad,
                                                         const int8_t *wr, size_t n,
                                                         uint8_t flip, int32_t bo) {
    ti__dwq_row3(0, acc, lda, NULL, 0, r, cs, np, s2, lc, nv, pad, wr, n, flip, bo, NULL);
}

/* ti__dwq_row3 with its requantization in registers (RQ 1, q from ti__dwq_rq_plan_vnni). */
TI__PRIVATE TI__TARGET_AVX512VNNI void ti__dwq_row3_rq_vnni(uint8_t *out, size_t ldo,
                                                            const unsigned char *const *r,
                                                            const size_t *cs, size_t np, int s2,
                                                            size_t lc, size_t nv,
                                                            const unsigned char *pad,
                                                            const int8_t *wr, size_t n,
                                                            uint8_t flip, int32_t bo,
                                                            const ti__dwq_rq *q) {
    ti__dwq_row3(1, NULL, 0, out, ldo, r, cs, np, s2, lc, nv, pad, wr, n, flip, bo, q);
}

/* One output pixel of the 8-bit depthwise kernel (cpu/tfl_conv.c, channel multiplier 1):
 * acc[c] = sum over taps t < nt of (w[woff[t] + c] + wo) * (x[xoff[t] + c] + xo) modulo
 * 2^32 for c < n. 32 channels at a time as int16 (each offset value fits: |v| <= 255), two
 * taps per VPMADDWD (x_t * w_t + x_t+1 * w_t+1 in each int32 lane, exact: at most 2 * 255^2);
 * a sum modulo 2^32 does not depend on its order, so this equals ti__dwq_tap_avx2 tap after
 * tap. VPUNPCKL/HWD pair the taps within 128-bit lanes, so the two accumulators hold
 * channels 8L..8L+3 and 8L+4..8L+7 of lane L; one VPERMT2Q per 16 channels restores order. */
TI__PRIVATE TI__TARGET_AVX512VNNI void ti__dwq_pixel_avx512(int u8, uint32_t *acc, const void *x,
                                                            const void *w, const size_t *xoff,
                                                            const size_t *woff, size_t nt,
                                                            size_t n, int32_t xo, int32_t wo) {
    const unsigned char *xb = (const unsigned char *)x, *wb = (const unsigned char *)w;
    const __m512i vxo = _mm512_set1_epi16((short)xo), vwo = _mm512_set1_epi16((short)wo);
    const __m512i z = _mm512_setzero_si512();
    const __m512i i0 = _mm512_set_epi64(11, 10, 3, 2, 9, 8, 1, 0);
    const __m512i i1 = _mm512_set_epi64(15, 14, 7, 6, 13, 12, 5, 4);
#define TI__DWQ_LD(p, off)                                                                  \
    (u8 ? _mm512_cvtepu8_epi16(_mm256_maskz_loadu_epi8(k, (p) + (off) + c0))                 \
        : _mm512_cvtepi8_epi16(_mm256_maskz_loadu_epi8(k, (p) + (off) + c0)))
    for (size_t c0 = 0; c0 < n; c0 += 32) {
        size_t left = n - c0;
        __mmask32 k = (__mmask32)(left >= 32 ? 0xffffffffu : (1u << left) - 1u);
        __m512i lo = z, hi = z;
        for (size_t t = 0; t < nt; t += 2) {
            __m512i x0 = _mm512_add_epi16(TI__DWQ_LD(xb, xoff[t]), vxo);
            __m512i w0 = _mm512_add_epi16(TI__DWQ_LD(wb, woff[t]), vwo);
            __m512i x1 = z, w1 = z; /* an odd last tap: paired with weight 0 */
            if (t + 1 < nt) {
                x1 = _mm512_add_epi16(TI__DWQ_LD(xb, xoff[t + 1]), vxo);
                w1 = _mm512_add_epi16(TI__DWQ_LD(wb, woff[t + 1]), vwo);
            }
            lo = _mm512_add_epi32(lo, _mm512_madd_epi16(_mm512_unpacklo_epi16(x0, x1),
                                                        _mm512_unpacklo_epi16(w0, w1)));
            hi = _mm512_add_epi32(hi, _mm512_madd_epi16(_mm512_unpackhi_epi16(x0, x1),
                                                        _mm512_unpackhi_epi16(w0, w1)));
        }
        _mm512_mask_storeu_epi32(acc + c0, (__mmask16)k, _mm512_permutex2var_epi64(lo, i0, hi));
        _mm512_mask_storeu_epi32(acc + c0 + 16, (__mmask16)(k >> 16), _mm512_permutex2var_epi64(lo, i1, hi));
    }
#undef TI__DWQ_LD
}
#endif
