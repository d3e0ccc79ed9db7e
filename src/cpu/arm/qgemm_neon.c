/* 8-bit GEMM kernels for aarch64 NEON (the kernels of core/qgemm.c's shared integer GEMM):
 * the int16 micro-kernel (4 rows x 16 channels of uint32 accumulators, int16 operands: the
 * 8-bit values with their zero points added) by widening multiply-accumulate (SMLAL by
 * lane: each product exact in 32 bits, the adds wrap modulo 2^32 as the portable
 * ti__qg_micro's uint32 sums do), and the TFLite requantization of the GEMM's outputs, 4
 * channels at a time, bit for bit as the scalar loop of ti__qrq_n. NEON is architectural
 * on aarch64, so these run whenever the ISA in effect is NEON or above. Must not allocate. */
#ifdef TI__ARM_NEON
#include <arm_neon.h>

/* One depth of the micro-kernel for row r: the four channel quads of (b0, b1) times lane
 * r of a. */
#define TI__QN_MLAL(r, a, b0, b1)                                                          \
    c##r##_0 = vmlal_lane_s16(c##r##_0, vget_low_s16(b0), a, r);                            \
    c##r##_1 = vmlal_lane_s16(c##r##_1, vget_high_s16(b0), a, r);                           \
    c##r##_2 = vmlal_lane_s16(c##r##_2, vget_low_s16(b1), a, r);                            \
    c##r##_3 = vmlal_lane_s16(c##r##_3, vget_high_s16(b1), a, r);
#define TI__QN_DEPTH(a, b0, b1)                                                             \
    TI__QN_MLAL(0, a, b0, b1) TI__QN_MLAL(1, a, b0, b1) TI__QN_MLAL(2, a, b0, b1)            \
    TI__QN_MLAL(3, a, b0, b1)
#define TI__QN_STORE(r)                                                                     \
    {                                                                                       \
        uint32_t *o = acc + (size_t)(r) * ldacc;                                            \
        vst1q_u32(o, vaddq_u32(vld1q_u32(o), vreinterpretq_u32_s32(c##r##_0)));             \
        vst1q_u32(o + 4, vaddq_u32(vld1q_u32(o + 4), vreinterpretq_u32_s32(c##r##_1)));     \
        vst1q_u32(o + 8, vaddq_u32(vld1q_u32(o + 8), vreinterpretq_u32_s32(c##r##_2)));     \
        vst1q_u32(o + 12, vaddq_u32(vld1q_u32(o + 12), vreinterpretq_u32_s32(c##r##_3)));   \
    }
/* acc[r*ldacc + 0..16) += sum over p < kc of ap[p*4 + r] * B(p, q), r < 4, bp the block's
 * pairs of depths (core/qgemm.c ti__qg_pack_range): LD2 splits a pair of 8 channels into
 * the even depth's and the odd depth's vectors. 16 vector accumulators (4 rows x 4 channel
 * quads) summed from 0, added to acc at the end (the same sums modulo 2^32 as adding to acc
 * depth by depth). An odd kc's last depth alone (ap has no row past it). */
TI__PRIVATE void ti__qg_micro_neon(size_t kc, const int16_t *ap, const int16_t *bp, uint32_t *acc,
                                   size_t ldacc) {
    int32x4_t z = vdupq_n_s32(0);
    int32x4_t c0_0 = z, c0_1 = z, c0_2 = z, c0_3 = z, c1_0 = z, c1_1 = z, c1_2 = z, c1_3 = z;
    int32x4_t c2_0 = z, c2_1 = z, c2_2 = z, c2_3 = z, c3_0 = z, c3_1 = z, c3_2 = z, c3_3 = z;
    size_t p = 0;
    for (; p + 2 <= kc; p += 2, ap += 8, bp += 32) {
        int16x8x2_t lo = vld2q_s16(bp), hi = vld2q_s16(bp + 16); /* channels 0-7, 8-15 */
        int16x4_t a0 = vld1_s16(ap), a1 = vld1_s16(ap + 4);
        TI__QN_DEPTH(a0, lo.val[0], hi.val[0])
        TI__QN_DEPTH(a1, lo.val[1], hi.val[1])
    }
    if (p < kc) {
        int16x8x2_t lo = vld2q_s16(bp), hi = vld2q_s16(bp + 16);
        int16x4_t a0 = vld1_s16(ap);
        TI__QN_DEPTH(a0, lo.val[0], hi.val[0])
    }
    TI__QN_STORE(0) TI__QN_STORE(1) TI__QN_STORE(2) TI__QN_STORE(3)
}
#undef TI__QN_DEPTH
#undef TI__QN_MLAL
#undef TI__QN_STORE

/* TI__QRQ_32 on 4 lanes, the scalar loop of ti__qrq_n step by step (TFLite's
 * MultiplyByQuantizedMultiplier, core/qmath.c ti__q_mul):
 * - a positive shift multiplies by 2^shift saturating to int32: SQSHL by register does
 *   exactly that (shift 0 leaves the value);
 * - the doubling high multiply rounded half away from zero, (ab +- 2^30) / 2^31 truncated,
 *   equals floor((ab + 2^30) / 2^31) for either sign of ab = x * m (ti__qrq32_avx2 says
 *   why), which is SQRDMULH's floor((2ab + 2^31) / 2^32). The two differ only where SQRDMULH
 *   saturates, x = m = INT32_MIN (the scalar code wraps to INT32_MIN): a lane with m =
 *   INT32_MIN (ti__q_quantize_multiplier never gives a negative one) stops the loop;
 * - a negative shift e is RoundingDivideByPOT: q >> e, plus 1 when q's low e bits exceed
 *   (2^e - 1) / 2 + (q < 0), i.e. rounded half away from zero. SRSHL by -e rounds half up,
 *   floor((q + 2^(e-1)) / 2^e) with no intermediate overflow; taking 1 from a negative q
 *   first (gemmlowp's fixup; saturating, and INT32_MIN is a multiple of 2^e so its result
 *   does not change) turns a negative tie into rounding down and leaves every other value's
 *   rounding alone (q - 1 + 2^(e-1) reaches the next multiple of 2^e exactly when q passes
 *   the half). e = 0: no fixup (the mask of the shift is 0) and no shift.
 * The zero point is added after clamping to [lo - yo, hi - yo], which equals clamping q +
 * yo without its int32 overflow. Shifts outside [-31, 31] also stop the loop; returns how
 * many were done, a multiple of 4. out may be x. */
TI__PRIVATE size_t ti__qrq32_neon(const int32_t *x, const int32_t *mult, const int32_t *shift,
                                  size_t n, int32_t yo, int32_t lo, int32_t hi, int32_t *out) {
    int64_t l = (int64_t)lo - yo, h = (int64_t)hi - yo;
    if (l > INT32_MAX || h < INT32_MIN) return 0; /* every output lo (hi): the scalar code */
    const int32x4_t qlo = vdupq_n_s32(l < INT32_MIN ? INT32_MIN : (int32_t)l);
    const int32x4_t qhi = vdupq_n_s32(h > INT32_MAX ? INT32_MAX : (int32_t)h);
    const int32x4_t vyo = vdupq_n_s32(yo), zero = vdupq_n_s32(0);
    const int32x4_t lim = vdupq_n_s32(31), nlim = vdupq_n_s32(-31), mmin = vdupq_n_s32(INT32_MIN);
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        int32x4_t sh = vld1q_s32(shift + i), m = vld1q_s32(mult + i);
        uint32x4_t bad = vorrq_u32(vorrq_u32(vcgtq_s32(sh, lim), vcltq_s32(sh, nlim)),
                                   vceqq_s32(m, mmin));
        if (vmaxvq_u32(bad) != 0) break;
        int32x4_t v = vqshlq_s32(vld1q_s32(x + i), vmaxq_s32(sh, zero));
        int32x4_t q = vqrdmulhq_s32(v, m);
        int32x4_t ne = vminq_s32(sh, zero); /* -e */
        int32x4_t fix = vshrq_n_s32(vandq_s32(q, ne), 31); /* -1 where q < 0 and e > 0 */
        q = vrshlq_s32(vqaddq_s32(q, fix), ne);
        q = vminq_s32(vmaxq_s32(q, qlo), qhi);
        vst1q_s32(out + i, vaddq_s32(q, vyo));
    }
    return i;
}
/* One tap of the 8-bit depthwise kernel (cpu/tfl_conv.c; ti__dwq_tap_avx2's contract):
 * acc[c] += (w[c] + wo) * (x[c] + xo) modulo 2^32 for c < n, x and w both uint8 (u8) or
 * both int8. The zero-point-corrected values lie in [-255, 255] (the zero points are
 * checked to be values of their dtype), so they are exact in int16 and SMLAL's int32
 * products are exact; its adds wrap as the uint32 sums do. */
TI__PRIVATE void ti__dwq_tap_neon(int u8, uint32_t *acc, const void *x, const void *w, size_t n,
                                  int32_t xo, int32_t wo) {
    const unsigned char *xb = (const unsigned char *)x, *wb = (const unsigned char *)w;
    const int16x8_t vxo = vdupq_n_s16((int16_t)xo), vwo = vdupq_n_s16((int16_t)wo);
    size_t c = 0;
    for (; c + 8 <= n; c += 8) {
        uint8x8_t x8 = vld1_u8(xb + c), w8 = vld1_u8(wb + c);
        int16x8_t xv = u8 ? vreinterpretq_s16_u16(vmovl_u8(x8)) : vmovl_s8(vreinterpret_s8_u8(x8));
        int16x8_t wv = u8 ? vreinterpretq_s16_u16(vmovl_u8(w8)) : vmovl_s8(vreinterpret_s8_u8(w8));
        xv = vaddq_s16(xv, vxo);
        wv = vaddq_s16(wv, vwo);
        int32x4_t lo = vreinterpretq_s32_u32(vld1q_u32(acc + c));
        int32x4_t hi = vreinterpretq_s32_u32(vld1q_u32(acc + c + 4));
        lo = vmlal_s16(lo, vget_low_s16(wv), vget_low_s16(xv));
        hi = vmlal_s16(hi, vget_high_s16(wv), vget_high_s16(xv));
        vst1q_u32(acc + c, vreinterpretq_u32_s32(lo));
        vst1q_u32(acc + c + 4, vreinterpretq_u32_s32(hi));
    }
    for (; c < n; c++) {
        int32_t xv = u8 ? (int32_t)xb[c] : (int32_t)(int8_t)xb[c];
        int32_t wv = u8 ? (int32_t)wb[c] : (int32_t)(int8_t)wb[c];
        acc[c] += (uint32_t)((wv + wo) * (xv + xo));
    }
}
#endif /* TI__ARM_NEON */
