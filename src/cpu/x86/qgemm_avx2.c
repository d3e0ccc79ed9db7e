/* 8-bit GEMM micro-kernel for AVX2 (the kernel of core/qgemm.c's shared integer GEMM): 4 rows x 16
 * channels of uint32 accumulators, int16 operands (the 8-bit values with their zero points
 * added). Pairs of depths go through VPMADDWD: each int32 lane gets a[k]*b[k] + a[k+1]*b[k+1],
 * both products exact (|operand| <= 255), added to the accumulator modulo 2^32: the same
 * sums as the portable ti__qg_micro, bit for bit. The packed B holds pairs of depths per
 * channel (ti__qg_pack_range), so one load is VPMADDWD's operand for 8 channels in order.
 * Compiled with a function-level target attribute, run only when cpuid says AVX2
 * (cpu/x86/cpuid.c). Also the TFLite requantization of the GEMM's outputs, 8 channels at a
 * time. Must not allocate. */
#ifdef TI__X86_SIMD
#include <immintrin.h>

/* acc[r*ldacc + 0..16) += sum over p < kc of A[r][p] * B(p, q), r < 4; add 0: = instead of
 * += (the first depth panel: no clearing, no loads). The panel ap holds A in pairs of depths
 * per row (ti__qg_pairs_avx2's layout): row r's depths p, p + 1 are one 32-bit unit,
 * ap[p * 2 + r * 2 + 0 / 1], so each row's operand of VPMADDWD is a single broadcast load;
 * bp is the block's pairs from depth 0 of the panel (an odd kc's last pair: B's second depth
 * is the pack's 0, so A's other half is multiplied by 0, whatever it holds). Without the
 * [k][16] layout's two VPUNPCKs a pair and the store's permutes, the TF2 int8 MobileNetV2
 * took 3.7 % less at 1 thread on a Zen 3 (bench/results/ab-2026-12-02-zen3-s37.md). */
TI__PRIVATE TI__TARGET_AVX2 void ti__qg_micro_avx2_k(size_t kc, const int16_t *ap,
                                                     const int16_t *bp, uint32_t *acc,
                                                     size_t ldacc, int add) {
    /* per row: channels 0-7 (lo) and 8-15 (hi) */
    __m256i l0 = _mm256_setzero_si256(), h0 = l0, l1 = l0, h1 = l0, l2 = l0, h2 = l0;
    __m256i l3 = l0, h3 = l0;
    /* VBROADCASTSS reads the 32-bit units: a load, no shuffle, no aliasing through a cast */
    const float *apair = (const float *)(const void *)ap;
#define TI__QG_PAIR(r) _mm256_castps_si256(_mm256_broadcast_ss(a + (r)))
    for (size_t p = 0; p < kc; p += 2) {
        __m256i blo = _mm256_loadu_si256((const __m256i *)(bp + p * 16));
        __m256i bhi = _mm256_loadu_si256((const __m256i *)(bp + p * 16 + 16));
        const float *a = apair + p * 2;
        __m256i a0 = TI__QG_PAIR(0), a1 = TI__QG_PAIR(1), a2 = TI__QG_PAIR(2), a3 = TI__QG_PAIR(3);
        l0 = _mm256_add_epi32(l0, _mm256_madd_epi16(a0, blo));
        h0 = _mm256_add_epi32(h0, _mm256_madd_epi16(a0, bhi));
        l1 = _mm256_add_epi32(l1, _mm256_madd_epi16(a1, blo));
        h1 = _mm256_add_epi32(h1, _mm256_madd_epi16(a1, bhi));
        l2 = _mm256_add_epi32(l2, _mm256_madd_epi16(a2, blo));
        h2 = _mm256_add_epi32(h2, _mm256_madd_epi16(a2, bhi));
        l3 = _mm256_add_epi32(l3, _mm256_madd_epi16(a3, blo));
        h3 = _mm256_add_epi32(h3, _mm256_madd_epi16(a3, bhi));
    }
#undef TI__QG_PAIR
    __m256i lo[4] = {l0, l1, l2, l3}, hi[4] = {h0, h1, h2, h3};
    for (int r = 0; r < 4; r++) {
        uint32_t *c = acc + (size_t)r * ldacc;
        __m256i c07 = lo[r], c815 = hi[r];
        if (add) {
            c07 = _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)c), c07);
            c815 = _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)(c + 8)), c815);
        }
        _mm256_storeu_si256((__m256i *)c, c07);
        _mm256_storeu_si256((__m256i *)(c + 8), c815);
    }
}
/* ti__qg_micro_avx2_k for row 0 alone (a block of one row: a classifier's GEMV, a map's
 * last pixel), rows 1-3 of acc left alone: two pairs of depths a step into two sets of
 * accumulators (one set's madd-add chain would wait on its own latency). The 4-row kernel
 * on a 1-row block did four times the products, three of them on zero rows. */
TI__PRIVATE TI__TARGET_AVX2 void ti__qg_micro1_avx2_k(size_t kc, const int16_t *ap,
                                                      const int16_t *bp, uint32_t *acc, int add) {
    __m256i l0 = _mm256_setzero_si256(), h0 = l0, l1 = l0, h1 = l0;
    const float *apair = (const float *)(const void *)ap;
#define TI__QG_B(i) _mm256_loadu_si256((const __m256i *)(b + (i) * 16))
    size_t p = 0;
    for (; p + 4 <= kc; p += 4) {
        const int16_t *b = bp + p * 16;
        __m256i a0 = _mm256_castps_si256(_mm256_broadcast_ss(apair + p * 2));
        __m256i a1 = _mm256_castps_si256(_mm256_broadcast_ss(apair + p * 2 + 4));
        l0 = _mm256_add_epi32(l0, _mm256_madd_epi16(a0, TI__QG_B(0)));
        h0 = _mm256_add_epi32(h0, _mm256_madd_epi16(a0, TI__QG_B(1)));
        l1 = _mm256_add_epi32(l1, _mm256_madd_epi16(a1, TI__QG_B(2)));
        h1 = _mm256_add_epi32(h1, _mm256_madd_epi16(a1, TI__QG_B(3)));
    }
    for (; p < kc; p += 2) { /* a last pair (an odd kc's with B's 0) */
        const int16_t *b = bp + p * 16;
        __m256i a0 = _mm256_castps_si256(_mm256_broadcast_ss(apair + p * 2));
        l0 = _mm256_add_epi32(l0, _mm256_madd_epi16(a0, TI__QG_B(0)));
        h0 = _mm256_add_epi32(h0, _mm256_madd_epi16(a0, TI__QG_B(1)));
    }
#undef TI__QG_B
    __m256i c07 = _mm256_add_epi32(l0, l1), c815 = _mm256_add_epi32(h0, h1);
    if (add) {
        c07 = _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)acc), c07);
        c815 = _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)(acc + 8)), c815);
    }
    _mm256_storeu_si256((__m256i *)acc, c07);
    _mm256_storeu_si256((__m256i *)(acc + 8), c815);
}
TI__PRIVATE TI__TARGET_AVX2 void ti__qg_micro1_avx2(size_t kc, const int16_t *ap, const int16_t *bp,
                                                    uint32_t *acc, size_t ldacc) {
    (void)ldacc;
    ti__qg_micro1_avx2_k(kc, ap, bp, acc, 1);
}
TI__PRIVATE TI__TARGET_AVX2 void ti__qg_micro1_avx2_set(size_t kc, const int16_t *ap,
                                                        const int16_t *bp, uint32_t *acc,
                                                        size_t ldacc) {
    (void)ldacc;
    ti__qg_micro1_avx2_k(kc, ap, bp, acc, 0);
}
TI__PRIVATE TI__TARGET_AVX2 void ti__qg_micro_avx2(size_t kc, const int16_t *ap, const int16_t *bp,
                                                   uint32_t *acc, size_t ldacc) {
    ti__qg_micro_avx2_k(kc, ap, bp, acc, ldacc, 1);
}
TI__PRIVATE TI__TARGET_AVX2 void ti__qg_micro_avx2_set(size_t kc, const int16_t *ap,
                                                       const int16_t *bp, uint32_t *acc,
                                                       size_t ldacc) {
    ti__qg_micro_avx2_k(kc, ap, bp, acc, ldacc, 0);
}

/* TFLite's fixed-point steps on 8 lanes, shared by the requantizations below and the 8-bit
 * ADD (cpu/x86/tfl_add_avx2.c). A left shift by ls (>= 0) saturating to int32: VPSLLVD,
 * overflow where shifting back differs. */
TI__PRIVATE TI__TARGET_AVX2 __m256i ti__q_lshift_sat_avx2(__m256i v, __m256i ls) {
    __m256i y = _mm256_sllv_epi32(v, ls);
    __m256i ovf = _mm256_xor_si256(_mm256_cmpeq_epi32(_mm256_srav_epi32(y, ls), v),
                                   _mm256_set1_epi32(-1));
    __m256i sat = _mm256_xor_si256(_mm256_srai_epi32(v, 31), _mm256_set1_epi32(INT32_MAX));
    return _mm256_blendv_epi8(y, sat, ovf); /* INT32_MIN or _MAX where it overflowed */
}
/* ti__q_srdhm(v, m) then ti__q_rdbypot(., rs): the doubling high multiply is bits 31..62 of
 * v * m + 2^30 (VPMULDQ: even lanes shifted down, odd lanes, mo = m >> 32, shifted up by one;
 * m is never INT32_MIN, so nothing saturates), then the rounding right shift by rs with
 * TFLite's threshold half + (q < 0), mask = 2^rs - 1, half = mask >> 1. */
TI__PRIVATE TI__TARGET_AVX2 __m256i ti__q_mul_rshift_avx2(__m256i v, __m256i m, __m256i mo,
                                                          __m256i rs, __m256i mask, __m256i half) {
    const __m256i nudge = _mm256_set1_epi64x((int64_t)1 << 30);
    __m256i pe = _mm256_add_epi64(_mm256_mul_epi32(v, m), nudge);
    __m256i po = _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(v, 32), mo), nudge);
    __m256i q = _mm256_blend_epi32(_mm256_srli_epi64(pe, 31), _mm256_slli_epi64(po, 1), 0xAA);
    __m256i rem = _mm256_and_si256(q, mask);
    __m256i thr = _mm256_add_epi32(half, _mm256_srli_epi32(q, 31));
    return _mm256_sub_epi32(_mm256_srav_epi32(q, rs), _mm256_cmpgt_epi32(rem, thr));
}

/* TI__QRQ_32 on 8 lanes, the scalar loop of ti__qrq_n step by step: a positive shift
 * multiplies by 2^shift saturating to int32 (VPSLLVD, overflow when shifting back differs);
 * the doubling high multiply is round-half-away (ab +- 2^30) / 2^31 truncated, which equals
 * floor((ab + 2^30) / 2^31) for either sign, so a 64-bit add and a logical shift give its low
 * 32 bits (VPMULDQ on even and odd lanes); a negative shift is the rounding right shift with
 * TFLite's threshold (mask >> 1) + (q < 0). The zero point is added after clamping to
 * [lo - yo, hi - yo], which equals clamping q + yo without its int32 overflow. Shifts
 * outside [-31, 31] (ti__q_quantize_multiplier gives [-31, 30]) stop the loop. */
TI__PRIVATE TI__TARGET_AVX2 size_t ti__qrq32_avx2(const int32_t *x, const int32_t *mult,
                                                  const int32_t *shift, size_t n, int32_t yo,
                                                  int32_t lo, int32_t hi, int32_t *out) {
    int64_t l = (int64_t)lo - yo, h = (int64_t)hi - yo;
    if (l > INT32_MAX || h < INT32_MIN) return 0; /* every output lo (hi): the scalar code */
    const __m256i qlo = _mm256_set1_epi32(l < INT32_MIN ? INT32_MIN : (int32_t)l);
    const __m256i qhi = _mm256_set1_epi32(h > INT32_MAX ? INT32_MAX : (int32_t)h);
    const __m256i vyo = _mm256_set1_epi32(yo), zero = _mm256_setzero_si256();
    const __m256i one = _mm256_set1_epi32(1);
    const __m256i lim = _mm256_set1_epi32(31), nlim = _mm256_set1_epi32(-31);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i sh = _mm256_loadu_si256((const __m256i *)(shift + i));
        __m256i bad = _mm256_or_si256(_mm256_cmpgt_epi32(sh, lim), _mm256_cmpgt_epi32(nlim, sh));
        if (!_mm256_testz_si256(bad, bad)) break;
        __m256i v = _mm256_loadu_si256((const __m256i *)(x + i));
        __m256i m = _mm256_loadu_si256((const __m256i *)(mult + i));
        __m256i ls = _mm256_max_epi32(sh, zero), rs = _mm256_max_epi32(_mm256_sub_epi32(zero, sh), zero);
        __m256i mask = _mm256_sub_epi32(_mm256_sllv_epi32(one, rs), one);
        __m256i q = ti__q_mul_rshift_avx2(ti__q_lshift_sat_avx2(v, ls), m, _mm256_srli_epi64(m, 32),
                                          rs, mask, _mm256_srai_epi32(mask, 1));
        q = _mm256_min_epi32(_mm256_max_epi32(q, qlo), qhi);
        _mm256_storeu_si256((__m256i *)(out + i), _mm256_add_epi32(q, vyo));
    }
    return i;
}

/* The AVX2 micro-kernel's panel in place from the portable one: a[k * 4 + r], k < n, becomes
 * pairs of depths per row, a[(k / 2) * 8 + r * 2 + k % 2]. An odd n's last pair gets 0 as
 * its second depth (a holds at least (n + 1) / 2 * 8 elements). */
TI__PRIVATE TI__TARGET_AVX2 void ti__qg_pairs_avx2(int16_t *a, size_t n) {
    if (n & 1) memset(a + n * 4, 0, 4 * sizeof(int16_t));
    for (size_t j = 0; j < (n + 1) / 2; j++) { /* [k: r0..r3, k+1: r0..r3] -> [r0: k, k+1, ..] */
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(a + j * 8));
        __m128i pairs = _mm_unpacklo_epi16(v, _mm_srli_si128(v, 8));
        _mm_storeu_si128((__m128i *)(void *)(a + j * 8), pairs);
    }
}

/* Four rows' 8 depths (int16, one register each) as the AVX2 panel's 4 pairs of depths: a
 * 4 x 4 transpose of 32-bit units, dst[p * 8 + r * 2 + 0 / 1] = row r's depths 2p, 2p + 1. */
TI__X86_INLINE TI__TARGET_AVX2 void ti__qg_store_pairs4(int16_t *dst, __m128i a, __m128i b,
                                                        __m128i c, __m128i d) {
    __m128i ab0 = _mm_unpacklo_epi32(a, b), ab1 = _mm_unpackhi_epi32(a, b); /* a0 b0 a1 b1 */
    __m128i cd0 = _mm_unpacklo_epi32(c, d), cd1 = _mm_unpackhi_epi32(c, d);
    __m128i *o = (__m128i *)(void *)dst;
    _mm_storeu_si128(o, _mm_unpacklo_epi64(ab0, cd0)); /* pair 0 of rows a, b, c, d */
    _mm_storeu_si128(o + 1, _mm_unpackhi_epi64(ab0, cd0));
    _mm_storeu_si128(o + 2, _mm_unpacklo_epi64(ab1, cd1));
    _mm_storeu_si128(o + 3, _mm_unpackhi_epi64(ab1, cd1));
}

/* The AVX2 micro-kernel's panel from four contiguous rows of n depths (ti__qg_pairs_avx2's
 * layout): dst[(i / 2) * 8 + r * 2 + i % 2] = row r's [i], 0 past an odd n. */
TI__PRIVATE TI__TARGET_AVX2 void ti__qg_interleave4_avx2(int16_t *dst, const int16_t *r0,
                                                         const int16_t *r1, const int16_t *r2,
                                                         const int16_t *r3, size_t n) {
    const int16_t *rows[4] = {r0, r1, r2, r3};
    size_t i = 0;
    for (; i + 8 <= n; i += 8) { /* a 4 x 4 transpose of 32-bit units (pairs of depths) */
        __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(r0 + i));
        __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(r1 + i));
        __m128i c = _mm_loadu_si128((const __m128i *)(const void *)(r2 + i));
        __m128i d = _mm_loadu_si128((const __m128i *)(const void *)(r3 + i));
        ti__qg_store_pairs4(dst + i * 4, a, b, c, d);
    }
    for (; i < n; i++)
        for (int r = 0; r < 4; r++) dst[(i / 2) * 8 + (size_t)r * 2 + i % 2] = rows[r][i];
    if (n & 1)
        for (int r = 0; r < 4; r++) dst[(n / 2) * 8 + (size_t)r * 2 + 1] = 0;
}

/* The AVX2 micro-kernel's panel straight from four rows of 8-bit values (row r at x + r * rs,
 * uint8 for u8, else int8) plus off, n depths: ti__qg_interleave4_avx2 of the rows widened
 * by ti__q8_widen_avx2, without the rows in between. */
TI__PRIVATE TI__TARGET_AVX2 void ti__qg_widen4_avx2(int16_t *dst, const unsigned char *x, size_t rs,
                                                    size_t n, int u8, int32_t off) {
    const __m128i vo = _mm_set1_epi16((short)off);
    const unsigned char *r0 = x, *r1 = x + rs, *r2 = x + 2 * rs, *r3 = x + 3 * rs;
    size_t i = 0;
#define TI__QG_LD8(p) _mm_loadl_epi64((const __m128i *)(const void *)(p))
#define TI__QG_W4(CVT)                                                                       \
    for (; i + 8 <= n; i += 8) {                                                             \
        __m128i a = _mm_add_epi16(CVT(TI__QG_LD8(r0 + i)), vo);                              \
        __m128i b = _mm_add_epi16(CVT(TI__QG_LD8(r1 + i)), vo);                              \
        __m128i c = _mm_add_epi16(CVT(TI__QG_LD8(r2 + i)), vo);                              \
        __m128i d = _mm_add_epi16(CVT(TI__QG_LD8(r3 + i)), vo);                              \
        ti__qg_store_pairs4(dst + i * 4, a, b, c, d);                                        \
    }
    if (u8) {
        TI__QG_W4(_mm_cvtepu8_epi16)
    } else {
        TI__QG_W4(_mm_cvtepi8_epi16)
    }
#undef TI__QG_W4
#undef TI__QG_LD8
    for (; i < n; i++)
        for (size_t r = 0; r < 4; r++) {
            unsigned char v = x[r * rs + i];
            int32_t xv = u8 ? (int32_t)v : (int32_t)(signed char)v;
            dst[(i / 2) * 8 + r * 2 + i % 2] = (int16_t)(xv + off);
        }
    if (n & 1)
        for (size_t r = 0; r < 4; r++) dst[(n / 2) * 8 + r * 2 + 1] = 0;
}

/* dst[i] = x[i] + off for i < n, x uint8 (u8) or int8: 16 at a time. */
TI__PRIVATE TI__TARGET_AVX2 void ti__q8_widen_avx2(int16_t *dst, const void *x, size_t n, int u8,
                                                   int32_t off) {
    const unsigned char *xb = (const unsigned char *)x;
    const __m256i vo = _mm256_set1_epi16((short)off);
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(xb + i));
        __m256i w = u8 ? _mm256_cvtepu8_epi16(v) : _mm256_cvtepi8_epi16(v);
        _mm256_storeu_si256((__m256i *)(void *)(dst + i), _mm256_add_epi16(w, vo));
    }
    for (; i < n; i++) dst[i] = (int16_t)((u8 ? (int32_t)xb[i] : (int32_t)(int8_t)xb[i]) + off);
}

/* dst[i] = x[i] + off for i < 16, x uint8 (u8) or int8: one load, one store of 16. */
TI__PRIVATE TI__TARGET_AVX2 void ti__q8_widen16_avx2(int16_t *dst, const void *x, int u8,
                                                     int32_t off) {
    __m128i v = _mm_loadu_si128((const __m128i *)x);
    __m256i w = u8 ? _mm256_cvtepu8_epi16(v) : _mm256_cvtepi8_epi16(v);
    _mm256_storeu_si256((__m256i *)(void *)dst, _mm256_add_epi16(w, _mm256_set1_epi16((short)off)));
}

/* One row's 8 columns for ti__qrq_rows_avx2: sums d[0..m8) (0 past them) plus the column
 * and row terms, requantized to int32 before the zero point and the clamp. */
TI__X86_INLINE TI__TARGET_AVX2 __m256i ti__qrq_row8_avx2(const uint32_t *d, size_t m8,
                                                         __m256i cc, __m256i bb, int use_b,
                                                         const int32_t *row, size_t r, int pos,
                                                         __m256i ls, __m256i m, __m256i mo,
                                                         __m256i rs, __m256i mask, __m256i half) {
    __m256i v;
    if (m8 == 8) {
        v = _mm256_loadu_si256((const __m256i *)(const void *)d);
    } else {
        uint32_t td[8] = {0};
        memcpy(td, d, m8 * sizeof(uint32_t));
        v = _mm256_loadu_si256((const __m256i *)(const void *)td);
    }
    v = _mm256_add_epi32(v, cc);
    if (row != NULL) {
        __m256i rv = _mm256_set1_epi32(row[r]);
        v = _mm256_add_epi32(v, use_b ? _mm256_mullo_epi32(bb, rv) : rv);
    }
    if (pos) v = ti__q_lshift_sat_avx2(v, ls);
    return ti__q_mul_rshift_avx2(v, m, mo, rs, mask, half);
}

/* ti__qg8_rows8_vnni's contract in AVX2, for any number of rows: row r's sums dot[r * ldd +
 * c] + colc[c] + (bos ? bos[c] * row[r] : row[r]) (colc or row NULL: 0), requantized as
 * TI__QRQ_32 (ti__qrq32_avx2 above, step by step) to out[r * ldo + c], c < n (lo and hi
 * inside one byte type's range). Columns outer, rows inner: a column group's multipliers,
 * shifts and masks are set up once for all rows. Rows go in pairs: the two rows' int32
 * results are packed to int16 together (VPACKSSDW), the zero point added and the clamp
 * applied on int16 when the zero point is small (|yo| <= 2^14: saturating to int16 first
 * then changes no clamped result), else on int32; then to bytes with unsigned or signed
 * saturation by the range (exact: every value is in it). The caller checks the shifts
 * (ti__qrq_shifts: all in [-31, 31]; pos: whether any is positive) and the zero point
 * (ti__qrq_bytes_ok: lo - yo and hi - yo fit int32). */
TI__PRIVATE TI__TARGET_AVX2 void ti__qrq_rows_avx2(size_t nr, const uint32_t *dot, size_t ldd,
                                                   const int32_t *colc, const int32_t *bos,
                                                   const int32_t *row, size_t n,
                                                   const int32_t *mult, const int32_t *shift,
                                                   int pos, int32_t yo, int32_t lo, int32_t hi,
                                                   uint8_t *out, size_t ldo) {
    int64_t l = (int64_t)lo - yo, h = (int64_t)hi - yo;
    const __m256i qlo = _mm256_set1_epi32(l < INT32_MIN ? INT32_MIN : (int32_t)l);
    const __m256i qhi = _mm256_set1_epi32(h > INT32_MAX ? INT32_MAX : (int32_t)h);
    const __m256i vyo = _mm256_set1_epi32(yo), zero = _mm256_setzero_si256();
    const __m256i one = _mm256_set1_epi32(1);
    const int narrow = yo >= -16384 && yo <= 16384, unsig = lo >= 0;
    const __m256i yo16 = _mm256_set1_epi16((short)(narrow ? yo : 0));
    const __m256i lo16 = _mm256_set1_epi16((short)lo), hi16 = _mm256_set1_epi16((short)hi);
    int32_t tm[8], ts[8], tc[8], tb[8];
    for (size_t i = 0; i < n; i += 8) {
        size_t m8 = n - i < 8 ? n - i : 8;
        const int32_t *pm = mult + i, *ps = shift + i;
        const int32_t *pc = colc != NULL ? colc + i : NULL, *pb = bos != NULL ? bos + i : NULL;
        if (m8 < 8) { /* a last group of fewer than 8 columns: zero-padded copies */
            memset(tm, 0, sizeof tm), memset(ts, 0, sizeof ts);
            memset(tc, 0, sizeof tc), memset(tb, 0, sizeof tb);
            memcpy(tm, pm, m8 * sizeof(int32_t));
            memcpy(ts, ps, m8 * sizeof(int32_t));
            if (pc != NULL) memcpy(tc, pc, m8 * sizeof(int32_t)), pc = tc;
            if (pb != NULL) memcpy(tb, pb, m8 * sizeof(int32_t)), pb = tb;
            pm = tm, ps = ts;
        }
        __m256i sh = _mm256_loadu_si256((const __m256i *)ps);
        __m256i m = _mm256_loadu_si256((const __m256i *)pm), mo = _mm256_srli_epi64(m, 32);
        __m256i ls = _mm256_max_epi32(sh, zero), rs = _mm256_max_epi32(_mm256_sub_epi32(zero, sh), zero);
        __m256i mask = _mm256_sub_epi32(_mm256_sllv_epi32(one, rs), one);
        __m256i half = _mm256_srai_epi32(mask, 1);
        __m256i cc = pc != NULL ? _mm256_loadu_si256((const __m256i *)pc) : zero;
        __m256i bb = pb != NULL ? _mm256_loadu_si256((const __m256i *)pb) : zero;
        for (size_t r = 0; r < nr; r += 2) {
            __m256i q0 = ti__qrq_row8_avx2(dot + r * ldd + i, m8, cc, bb, pb != NULL, row, r, pos,
                                           ls, m, mo, rs, mask, half);
            __m256i q1 = q0; /* an odd last row: stored once */
            if (r + 1 < nr)
                q1 = ti__qrq_row8_avx2(dot + (r + 1) * ldd + i, m8, cc, bb, pb != NULL, row, r + 1,
                                       pos, ls, m, mo, rs, mask, half);
            __m256i p16; /* [r0 0-3, r1 0-3 | r0 4-7, r1 4-7] */
            if (narrow) {
                p16 = _mm256_adds_epi16(_mm256_packs_epi32(q0, q1), yo16);
                p16 = _mm256_min_epi16(_mm256_max_epi16(p16, lo16), hi16);
            } else {
                q0 = _mm256_add_epi32(_mm256_min_epi32(_mm256_max_epi32(q0, qlo), qhi), vyo);
                q1 = _mm256_add_epi32(_mm256_min_epi32(_mm256_max_epi32(q1, qlo), qhi), vyo);
                p16 = _mm256_packs_epi32(q0, q1);
            }
            __m128i l16 = _mm256_castsi256_si128(p16), h16 = _mm256_extracti128_si256(p16, 1);
            __m128i p8 = unsig ? _mm_packus_epi16(l16, h16) : _mm_packs_epi16(l16, h16);
            p8 = _mm_shuffle_epi32(p8, 0xD8); /* [r0 0-7, r1 0-7] */
            uint8_t *o0 = out + r * ldo + i;
            if (m8 == 8) {
                _mm_storel_epi64((__m128i *)(void *)o0, p8);
                if (r + 1 < nr) _mm_storeh_pd((double *)(void *)(o0 + ldo), _mm_castsi128_pd(p8));
            } else {
                uint8_t tmp[16];
                _mm_storeu_si128((__m128i *)(void *)tmp, p8);
                memcpy(o0, tmp, m8);
                if (r + 1 < nr) memcpy(o0 + ldo, tmp + 8, m8);
            }
        }
    }
}

/* The AVX2 depthwise path's weights (cpu/tfl_conv.c) of n <= 64 channels and nt taps, once
 * per chunk of channels: w'_t[c] = w[woff[t] + c] + wo as int16. Each whole group of 16
 * channels g gets its taps in pairs j, wp[(g * np + j) * 32 + 2 * i + 0 / 1] = (w'_2j,
 * w'_2j+1) of channel g * 16 + i in order (np = (nt + 1) / 2; 0 for an odd nt's missing
 * tap); the last n % 16 channels follow tap by tap, wp[n / 16 * np * 32 + t * 16 + c % 16].
 * ks[c] = xo * sum over t of w'_t[c] modulo 2^32: what the input offset adds to every sum. */
TI__PRIVATE TI__TARGET_AVX2 void ti__dwq_wprep_avx2(int u8, int16_t *wp, uint32_t *ks,
                                                    const void *w, const size_t *woff,
                                                    size_t nt, size_t n, int32_t xo,
                                                    int32_t wo) {
    const unsigned char *wb = (const unsigned char *)w;
    const size_t np = (nt + 1) / 2, n16 = n / 16 * 16;
    const __m128i vwo = _mm_set1_epi16((short)wo);
#define TI__DWQ_W8(p)                                                                       \
    _mm_add_epi16(u8 ? _mm_cvtepu8_epi16(_mm_loadl_epi64((const __m128i *)(const void *)(p)))  \
                     : _mm_cvtepi8_epi16(_mm_loadl_epi64((const __m128i *)(const void *)(p))), \
                  vwo)
    for (size_t c0 = 0; c0 < n16; c0 += 16)
        for (size_t j = 0; j < np; j++) {
            __m128i *o = (__m128i *)(void *)(wp + (c0 / 16 * np + j) * 32);
            for (size_t h = 0; h < 16; h += 8) { /* channels c0 + h .. + 8 */
                __m128i w0 = TI__DWQ_W8(wb + woff[2 * j] + c0 + h);
                __m128i w1 = 2 * j + 1 < nt ? TI__DWQ_W8(wb + woff[2 * j + 1] + c0 + h)
                                            : _mm_setzero_si128();
                _mm_storeu_si128(o + h / 4, _mm_unpacklo_epi16(w0, w1));
                _mm_storeu_si128(o + h / 4 + 1, _mm_unpackhi_epi16(w0, w1));
            }
        }
#undef TI__DWQ_W8
    int16_t *tail = wp + n16 / 16 * np * 32;
    for (size_t c = 0; c < n; c++) {
        uint32_t sum = 0;
        for (size_t t = 0; t < nt; t++) {
            unsigned char v = wb[woff[t] + c];
            int32_t wv = (u8 ? (int32_t)v : (int32_t)(signed char)v) + wo;
            sum += (uint32_t)wv;
            if (c >= n16) tail[t * 16 + (c - n16)] = (int16_t)wv;
        }
        ks[c] = sum * (uint32_t)xo;
    }
}

/* acc[c] = sum over taps t < nt of x_t[c] * w'_t[c] modulo 2^32, c < n (<= 64): x_t[c] =
 * xp[t][off + c] (uint8 for u8, else int8), w' as ti__dwq_wprep_avx2 laid it out; plus its ks,
 * the sum of (x + xo) * (w + wo). Per pair of taps and 16 channels: the two taps' bytes
 * interleaved (VPUNPCKLBW / HBW: channels stay in order), widened to int16, one VPMADDWD
 * per 8 channels (exact: each product at most 255^2). */
TI__PRIVATE TI__TARGET_AVX2 void ti__dwq_pix_avx2(int u8, uint32_t *acc,
                                                  const unsigned char *const *xp, size_t off,
                                                  size_t nt, const int16_t *wp, size_t n) {
    const size_t np = (nt + 1) / 2, n16 = n / 16 * 16;
#define TI__DWQ_PIX(CVT)                                                                    \
    for (size_t c0 = 0; c0 < n16; c0 += 16) {                                               \
        const __m256i *wv = (const __m256i *)(const void *)(wp + c0 / 16 * np * 32);        \
        __m256i s0 = _mm256_setzero_si256(), s1 = s0;                                       \
        for (size_t j = 0; j < np; j++) {                                                   \
            __m128i x0 = _mm_loadu_si128((const __m128i *)(const void *)(xp[2 * j] + off + c0)); \
            __m128i x1 = x0; /* an odd last tap: its partner's weight is 0 */               \
            if (2 * j + 1 < nt)                                                             \
                x1 = _mm_loadu_si128((const __m128i *)(const void *)(xp[2 * j + 1] + off + c0)); \
            __m256i lo = CVT(_mm_unpacklo_epi8(x0, x1)), hi = CVT(_mm_unpackhi_epi8(x0, x1)); \
            s0 = _mm256_add_epi32(s0, _mm256_madd_epi16(lo, _mm256_loadu_si256(wv + 2 * j)));      \
            s1 = _mm256_add_epi32(s1, _mm256_madd_epi16(hi, _mm256_loadu_si256(wv + 2 * j + 1)));  \
        }                                                                                   \
        _mm256_storeu_si256((__m256i *)(void *)(acc + c0), s0);                             \
        _mm256_storeu_si256((__m256i *)(void *)(acc + c0 + 8), s1);                         \
    }
    if (u8) {
        TI__DWQ_PIX(_mm256_cvtepu8_epi16)
    } else {
        TI__DWQ_PIX(_mm256_cvtepi8_epi16)
    }
#undef TI__DWQ_PIX
    const int16_t *tail = wp + n16 / 16 * np * 32;
    for (size_t c = n16; c < n; c++) {
        uint32_t s = 0;
        for (size_t t = 0; t < nt; t++) {
            unsigned char v = xp[t][off + c];
            s += (uint32_t)((u8 ? (int32_t)v : (int32_t)(signed char)v) * tail[t * 16 + (c - n16)]);
        }
        acc[c] = s;
    }
}

TI__PRIVATE TI__TARGET_AVX2 void ti__dwq_tap_avx2(int u8, uint32_t *acc, const void *x,
                                                  const void *w, size_t n, int32_t xo, int32_t wo) {
    const unsigned char *xb = (const unsigned char *)x, *wb = (const unsigned char *)w;
    const __m256i vxo = _mm256_set1_epi32(xo), vwo = _mm256_set1_epi32(wo);
    size_t c = 0;
    for (; c + 8 <= n; c += 8) {
        __m128i x8 = _mm_loadl_epi64((const __m128i *)(xb + c));
        __m128i w8 = _mm_loadl_epi64((const __m128i *)(wb + c));
        __m256i xv = u8 ? _mm256_cvtepu8_epi32(x8) : _mm256_cvtepi8_epi32(x8);
        __m256i wv = u8 ? _mm256_cvtepu8_epi32(w8) : _mm256_cvtepi8_epi32(w8);
        __m256i p = _mm256_mullo_epi32(_mm256_add_epi32(wv, vwo), _mm256_add_epi32(xv, vxo));
        __m256i a = _mm256_loadu_si256((const __m256i *)(acc + c));
        _mm256_storeu_si256((__m256i *)(acc + c), _mm256_add_epi32(a, p));
    }
    for (; c < n; c++) {
        int32_t xv = u8 ? (int32_t)xb[c] : (int32_t)(int8_t)xb[c];
        int32_t wv = u8 ? (int32_t)wb[c] : (int32_t)(int8_t)wb[c];
        acc[c] += (uint32_t)((wv + wo) * (xv + xo));
    }
}
#endif
