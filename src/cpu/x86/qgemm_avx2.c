/* 8-bit GEMM micro-kernel for AVX2 (the kernel of core/qgemm.c's shared integer GEMM): 4 rows x 16
 * channels of uint32 accumulators, int16 operands (the 8-bit values with their zero points
 * added). Pairs of depths go through VPMADDWD: each int32 lane gets a[k]*b[k] + a[k+1]*b[k+1],
 * both products exact (|operand| <= 255), added to the accumulator modulo 2^32: the same
 * sums as the portable ti__qg_micro, bit for bit. The packed B rows stay as they are
 * ([k][16] int16); two rows are interleaved in registers (VPUNPCK), which permutes the
 * channels inside each 128-bit lane; the permutation is undone at the store. Compiled with a
 * function-level target attribute, run only when cpuid says AVX2 (cpu/x86/cpuid.c).
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
#endif
