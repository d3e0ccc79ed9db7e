/* 8-bit GEMM kernels for aarch64 with the dot-product instructions (the byte path of
 * core/qgemm.c's shared integer GEMM, as cpu/x86/qgemm_vnni.c is on x86): SDOT multiplies
 * signed bytes by signed bytes, four depths per int32 lane, and adds the four exact
 * products to the accumulator modulo 2^32. The byte path's A is unsigned (a_u); this
 * kernel feeds SDOT a_s = a_u ^ 0x80 = a_u - 128, so its sums are sum a_u b_s - 128 * sum
 * b_s, and core/qgemm.c adds 128 * sum b_s back per column (ti__qg8_isa's sdot): the same
 * int32 sums as the int16 kernels, bit for bit. Also the path's helpers: the byte copy with
 * the int8 -> uint8 flip that sums the bytes, and one output row's sums and requantization
 * (ti__qrq32_neon). Compiled with a function-level target attribute, run only when the OS
 * reports dotprod (cpu/arm/cpuinfo.c). Must not allocate. */
#if defined(TI__ARM_NEON) && defined(TI__ARM_DOTPROD)
#include <arm_neon.h>

/* Depth quad p + t for the four rows: the four column quads of B (16 bytes: 4 columns x
 * 4 depths each) times lane t of each row's A vector (4 bytes of depth quad p + t). */
#define TI__QD_ROW(r, t)                                                                    \
    c##r##_0 = vdotq_laneq_s32(c##r##_0, b0, a##r, t);                                      \
    c##r##_1 = vdotq_laneq_s32(c##r##_1, b1, a##r, t);                                      \
    c##r##_2 = vdotq_laneq_s32(c##r##_2, b2, a##r, t);                                      \
    c##r##_3 = vdotq_laneq_s32(c##r##_3, b3, a##r, t);
#define TI__QD_QUAD(t)                                                                      \
    {                                                                                       \
        const int8_t *bq = b + (p + (t)) * 64;                                              \
        int8x16_t b0 = vld1q_s8(bq), b1 = vld1q_s8(bq + 16), b2 = vld1q_s8(bq + 32);        \
        int8x16_t b3 = vld1q_s8(bq + 48);                                                   \
        TI__QD_ROW(0, t) TI__QD_ROW(1, t) TI__QD_ROW(2, t) TI__QD_ROW(3, t)                 \
    }
#define TI__QD_LOAD4(r) /* 16 bytes: depth quads p..p+3 of row r, flipped to signed */     \
    int8x16_t a##r = vreinterpretq_s8_u8(veorq_u8(vld1q_u8(a + (r) * lda + p * 4), flip));
#define TI__QD_LOAD1(r) /* 4 bytes: depth quad p of row r in lane 0 */                       \
    int8x16_t a##r;                                                                         \
    {                                                                                       \
        uint32_t w;                                                                         \
        memcpy(&w, a + (r) * lda + p * 4, 4);                                               \
        a##r = vreinterpretq_s8_u8(veorq_u8(vreinterpretq_u8_u32(vdupq_n_u32(w)), flip));   \
    }
#define TI__QD_STORE(r)                                                                     \
    {                                                                                       \
        uint32_t *o = acc + (size_t)(r) * ldacc;                                            \
        uint32x4_t s0 = vreinterpretq_u32_s32(c##r##_0), s1 = vreinterpretq_u32_s32(c##r##_1); \
        uint32x4_t s2 = vreinterpretq_u32_s32(c##r##_2), s3 = vreinterpretq_u32_s32(c##r##_3); \
        if (add) {                                                                          \
            s0 = vaddq_u32(s0, vld1q_u32(o));                                               \
            s1 = vaddq_u32(s1, vld1q_u32(o + 4));                                           \
            s2 = vaddq_u32(s2, vld1q_u32(o + 8));                                           \
            s3 = vaddq_u32(s3, vld1q_u32(o + 12));                                          \
        }                                                                                   \
        vst1q_u32(o, s0);                                                                   \
        vst1q_u32(o + 4, s1);                                                               \
        vst1q_u32(o + 8, s2);                                                               \
        vst1q_u32(o + 12, s3);                                                              \
    }

/* 4 rows x 16 channels: a: 4 rows of kq * 4 unsigned bytes lda apart, b: [kq][16][4]
 * signed bytes. acc[r * ldacc + 0..16) = (add ? acc : 0) + sum over the kq * 4 depths of
 * (a ^ 0x80) * b. 16 accumulators, 4 B vectors and 4 A vectors: 24 of the 32 registers. */
static __attribute__((noinline, unused)) TI__TARGET_DOTPROD void
ti__qd_tile(size_t kq, const uint8_t *a, size_t lda, const int8_t *b, uint32_t *acc,
            size_t ldacc, int add) {
    const uint8x16_t flip = vdupq_n_u8(0x80);
    int32x4_t z = vdupq_n_s32(0);
    int32x4_t c0_0 = z, c0_1 = z, c0_2 = z, c0_3 = z, c1_0 = z, c1_1 = z, c1_2 = z, c1_3 = z;
    int32x4_t c2_0 = z, c2_1 = z, c2_2 = z, c2_3 = z, c3_0 = z, c3_1 = z, c3_2 = z, c3_3 = z;
    size_t p = 0;
    for (; p + 4 <= kq; p += 4) {
        TI__QD_LOAD4(0) TI__QD_LOAD4(1) TI__QD_LOAD4(2) TI__QD_LOAD4(3)
        TI__QD_QUAD(0) TI__QD_QUAD(1) TI__QD_QUAD(2) TI__QD_QUAD(3)
    }
    for (; p < kq; p++) { /* the last quads: one at a time, reading nothing past them */
        TI__QD_LOAD1(0) TI__QD_LOAD1(1) TI__QD_LOAD1(2) TI__QD_LOAD1(3)
        TI__QD_QUAD(0)
    }
    TI__QD_STORE(0) TI__QD_STORE(1) TI__QD_STORE(2) TI__QD_STORE(3)
}
#undef TI__QD_ROW
#undef TI__QD_QUAD
#undef TI__QD_LOAD4
#undef TI__QD_LOAD1
#undef TI__QD_STORE

/* The micro-kernel of the byte path (ti__qg8_micro_vnni's contract, with A flipped): 8 rows
 * (kq * 4 unsigned bytes each, lda apart) x 16 * nb channels (nb blocks [kq][16][4] of
 * signed bytes, bs apart) to acc rows ldacc apart, added to them when add, else to init's
 * value per column (NULL: 0); the sums are of (a ^ 0x80) * b, the caller adds 128 * sum b
 * per column. */
TI__PRIVATE void ti__qg8_micro_neondot(size_t kq, const uint8_t *a, size_t lda, const int8_t *b,
                                       size_t bs, int nb, uint32_t *acc, size_t ldacc, int add,
                                       const int32_t *init) {
    for (int j = 0; j < nb; j++)
        for (size_t h = 0; h < 8; h += 4)
            ti__qd_tile(kq, a + h * lda, lda, b + (size_t)j * bs, acc + h * ldacc + (size_t)j * 16,
                        ldacc, add);
    if (add || init == NULL) return;
    for (size_t r = 0; r < 8; r++) /* the column terms, after the fact */
        for (int c = 0; c < 16 * nb; c += 4) {
            uint32_t *o = acc + r * ldacc + c;
            vst1q_u32(o, vaddq_u32(vld1q_u32(o), vreinterpretq_u32_s32(vld1q_s32(init + c))));
        }
}

/* dst[i] = src[i] ^ flip for i < n (flip 0x80 turns int8 into uint8 = int8 + 128); returns
 * the sum of the bytes written, modulo 2^32. */
TI__PRIVATE uint32_t ti__qg8_copy_neon(uint8_t *dst, const uint8_t *src, size_t n, uint8_t flip) {
    const uint8x16_t f = vdupq_n_u8(flip);
    uint32x4_t s = vdupq_n_u32(0);
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        uint8x16_t v = veorq_u8(vld1q_u8(src + i), f);
        vst1q_u8(dst + i, v);
        s = vpadalq_u16(s, vpaddlq_u8(v));
    }
    uint32_t sum = vaddvq_u32(s);
    for (; i < n; i++) {
        uint8_t v = (uint8_t)(src[i] ^ flip);
        dst[i] = v;
        sum += v;
    }
    return sum;
}

/* One output row of the byte path (ti__qg8_row_vnni's contract): x[c] = dot[c] + colc[c] +
 * bos[c] * row (bos NULL: + row) modulo 2^32 for c < n. mult == NULL: only those sums;
 * returns 0. Else TI__QRQ_32 by ti__qrq32_neon on them, in place, to out8 (bytes: every
 * value is in the 8-bit dtype's range after the clamp) when out8 != NULL, else to x;
 * returns how many were requantized (a multiple of 4, or fewer where a lane's shift or
 * multiplier is one ti__qrq32_neon leaves to the scalar loop): x[that..n) holds the sums
 * for the caller to finish. */
TI__PRIVATE size_t ti__qg8_row_neon(const uint32_t *dot, const int32_t *colc, const int32_t *bos,
                                    int32_t row, size_t n, const int32_t *mult,
                                    const int32_t *shift, int32_t yo, int32_t lo, int32_t hi,
                                    int32_t *x, uint8_t *out8) {
    const uint32x4_t rv = vdupq_n_u32((uint32_t)row);
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        uint32x4_t v = vaddq_u32(vld1q_u32(dot + i), vreinterpretq_u32_s32(vld1q_s32(colc + i)));
        uint32x4_t t = bos != NULL ? vmulq_u32(vreinterpretq_u32_s32(vld1q_s32(bos + i)), rv) : rv;
        v = vaddq_u32(v, t);
        vst1q_s32(x + i, vreinterpretq_s32_u32(v));
    }
    for (; i < n; i++)
        x[i] = (int32_t)(dot[i] + (uint32_t)colc[i] +
                         (bos != NULL ? (uint32_t)bos[i] * (uint32_t)row : (uint32_t)row));
    if (mult == NULL) return 0;
    size_t done = ti__qrq32_neon(x, mult, shift, n, yo, lo, hi, x);
    if (out8 != NULL)
        for (size_t j = 0; j < done; j++) out8[j] = (uint8_t)x[j];
    return done;
}
#endif /* TI__ARM_NEON && TI__ARM_DOTPROD */
