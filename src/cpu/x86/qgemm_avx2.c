/* 8-bit GEMM micro-kernel for AVX2 (the kernel of core/qgemm.c's shared integer GEMM): 4 rows x 16
 * channels of uint32 accumulators, int16 operands (the 8-bit values with their zero points
 * added). Pairs of depths go through VPMADDWD: each int32 lane gets a[k]*b[k] + a[k+1]*b[k+1],
 * both products exact (|operand| <= 255), added to the accumulator modulo 2^32: the same
 * sums as the portable ti__qg_micro, bit for bit. The packed B rows stay as they are
 * ([k][16] int16); two rows are interleaved in registers (VPUNPCK), which permutes the
 * channels inside each 128-bit lane; the permutation is undone at the store. Compiled with a
 * function-level target attribute, run only when cpuid says AVX2 (cpu/x86/cpuid.c).
 * Also the TFLite requantization of the GEMM's outputs, 8 channels at a time.
 * Must not allocate. */
#ifdef TI__X86_SIMD
#include <immintrin.h>

/* acc[r*ldacc + 0..16) += sum over p < kc of ap[p*4 + r] * bp[p*16 + q], r < 4. */
TI__PRIVATE TI__TARGET_AVX2 void ti__qg_micro_avx2(size_t kc, const int16_t *ap,
                                                     const int16_t *bp, uint32_t *acc,
                                                     size_t ldacc) {
    /* lo: channels 0-3 | 8-11, hi: 4-7 | 12-15 (the unpack order), per row */
    __m256i l0 = _mm256_setzero_si256(), h0 = l0, l1 = l0, h1 = l0, l2 = l0, h2 = l0;
    __m256i l3 = l0, h3 = l0;
    size_t p = 0;
    for (; p + 2 <= kc; p += 2) {
        __m256i b0 = _mm256_loadu_si256((const __m256i *)(bp + p * 16));
        __m256i b1 = _mm256_loadu_si256((const __m256i *)(bp + p * 16 + 16));
        __m256i blo = _mm256_unpacklo_epi16(b0, b1), bhi = _mm256_unpackhi_epi16(b0, b1);
        const int16_t *a = ap + p * 4;
        /* (a[k][r], a[k+1][r]) as one int32: low half depth k, as in the unpacked B */
        __m256i a0 = _mm256_set1_epi32((int32_t)((uint32_t)(uint16_t)a[0] | (uint32_t)(uint16_t)a[4] << 16));
        __m256i a1 = _mm256_set1_epi32((int32_t)((uint32_t)(uint16_t)a[1] | (uint32_t)(uint16_t)a[5] << 16));
        __m256i a2 = _mm256_set1_epi32((int32_t)((uint32_t)(uint16_t)a[2] | (uint32_t)(uint16_t)a[6] << 16));
        __m256i a3 = _mm256_set1_epi32((int32_t)((uint32_t)(uint16_t)a[3] | (uint32_t)(uint16_t)a[7] << 16));
        l0 = _mm256_add_epi32(l0, _mm256_madd_epi16(a0, blo));
        h0 = _mm256_add_epi32(h0, _mm256_madd_epi16(a0, bhi));
        l1 = _mm256_add_epi32(l1, _mm256_madd_epi16(a1, blo));
        h1 = _mm256_add_epi32(h1, _mm256_madd_epi16(a1, bhi));
        l2 = _mm256_add_epi32(l2, _mm256_madd_epi16(a2, blo));
        h2 = _mm256_add_epi32(h2, _mm256_madd_epi16(a2, bhi));
        l3 = _mm256_add_epi32(l3, _mm256_madd_epi16(a3, blo));
        h3 = _mm256_add_epi32(h3, _mm256_madd_epi16(a3, bhi));
    }
    if (p < kc) { /* odd kc: the last depth paired with a zero row */
        __m256i b0 = _mm256_loadu_si256((const __m256i *)(bp + p * 16));
        __m256i z = _mm256_setzero_si256();
        __m256i blo = _mm256_unpacklo_epi16(b0, z), bhi = _mm256_unpackhi_epi16(b0, z);
        const int16_t *a = ap + p * 4;
        __m256i a0 = _mm256_set1_epi32((int32_t)(uint32_t)(uint16_t)a[0]);
        __m256i a1 = _mm256_set1_epi32((int32_t)(uint32_t)(uint16_t)a[1]);
        __m256i a2 = _mm256_set1_epi32((int32_t)(uint32_t)(uint16_t)a[2]);
        __m256i a3 = _mm256_set1_epi32((int32_t)(uint32_t)(uint16_t)a[3]);
        l0 = _mm256_add_epi32(l0, _mm256_madd_epi16(a0, blo));
        h0 = _mm256_add_epi32(h0, _mm256_madd_epi16(a0, bhi));
        l1 = _mm256_add_epi32(l1, _mm256_madd_epi16(a1, blo));
        h1 = _mm256_add_epi32(h1, _mm256_madd_epi16(a1, bhi));
        l2 = _mm256_add_epi32(l2, _mm256_madd_epi16(a2, blo));
        h2 = _mm256_add_epi32(h2, _mm256_madd_epi16(a2, bhi));
        l3 = _mm256_add_epi32(l3, _mm256_madd_epi16(a3, blo));
        h3 = _mm256_add_epi32(h3, _mm256_madd_epi16(a3, bhi));
    }
    /* lo = [0-3 | 8-11], hi = [4-7 | 12-15]: channels 0-7 = (lo.low, hi.low), 8-15 = highs */
    __m256i lo[4] = {l0, l1, l2, l3}, hi[4] = {h0, h1, h2, h3};
    for (int r = 0; r < 4; r++) {
        uint32_t *c = acc + (size_t)r * ldacc;
        __m256i c07 = _mm256_permute2x128_si256(lo[r], hi[r], 0x20);
        __m256i c815 = _mm256_permute2x128_si256(lo[r], hi[r], 0x31);
        _mm256_storeu_si256((__m256i *)c,
                            _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)c), c07));
        _mm256_storeu_si256((__m256i *)(c + 8),
                            _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)(c + 8)), c815));
    }
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
    const __m256i qlo = _mm256_set1_epi32(l < INT32_MIN ? INT32_MIN : (int32_t)l);
    const __m256i qhi = _mm256_set1_epi32(h > INT32_MAX ? INT32_MAX : (int32_t)h);
    const __m256i vyo = _mm256_set1_epi32(yo), zero = _mm256_setzero_si256();
    const __m256i one = _mm256_set1_epi32(1), ones = _mm256_set1_epi32(-1);
    const __m256i lim = _mm256_set1_epi32(31), nlim = _mm256_set1_epi32(-31);
    const __m256i nudge = _mm256_set1_epi64x((int64_t)1 << 30), imax = _mm256_set1_epi32(INT32_MAX);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i sh = _mm256_loadu_si256((const __m256i *)(shift + i));
        __m256i bad = _mm256_or_si256(_mm256_cmpgt_epi32(sh, lim), _mm256_cmpgt_epi32(nlim, sh));
        if (!_mm256_testz_si256(bad, bad)) break;
        __m256i v = _mm256_loadu_si256((const __m256i *)(x + i));
        __m256i m = _mm256_loadu_si256((const __m256i *)(mult + i));
        __m256i ls = _mm256_max_epi32(sh, zero), rs = _mm256_max_epi32(_mm256_sub_epi32(zero, sh), zero);
        __m256i y = _mm256_sllv_epi32(v, ls);
        __m256i ovf = _mm256_xor_si256(_mm256_cmpeq_epi32(_mm256_srav_epi32(y, ls), v), ones);
        __m256i sat = _mm256_xor_si256(_mm256_srai_epi32(v, 31), imax); /* INT32_MIN or _MAX */
        v = _mm256_blendv_epi8(y, sat, ovf);
        __m256i pe = _mm256_add_epi64(_mm256_mul_epi32(v, m), nudge);
        __m256i po = _mm256_add_epi64(
            _mm256_mul_epi32(_mm256_srli_epi64(v, 32), _mm256_srli_epi64(m, 32)), nudge);
        pe = _mm256_srli_epi64(pe, 31);
        po = _mm256_slli_epi64(_mm256_srli_epi64(po, 31), 32);
        __m256i q = _mm256_blend_epi32(pe, po, 0xAA);
        __m256i mask = _mm256_sub_epi32(_mm256_sllv_epi32(one, rs), one);
        __m256i rem = _mm256_and_si256(q, mask);
        __m256i thr = _mm256_add_epi32(_mm256_srai_epi32(mask, 1), _mm256_srli_epi32(q, 31));
        q = _mm256_sub_epi32(_mm256_srav_epi32(q, rs), _mm256_cmpgt_epi32(rem, thr));
        q = _mm256_min_epi32(_mm256_max_epi32(q, qlo), qhi);
        _mm256_storeu_si256((__m256i *)(out + i), _mm256_add_epi32(q, vyo));
    }
    return i;
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
