/* The 8-bit GEMM micro-kernel of the TFLite convolutions (ti__qg_micro in
 * cpu/tfl_accum.c) against its SIMD variant (ti__qg_micro_avx2, cpu/x86/qgemm_avx2.c):
 * equal bit for bit on random int16 operands in the range the kernels feed (8-bit values
 * with zero points, |v| <= 255), on every int16 including -32768 (the sums wrap modulo
 * 2^32 in both), on odd and even depths around the unrolling, and on accumulators that
 * start non-zero (the kernel adds). The AVX2 TFLite requantization (ti__qrq32_avx2 inside
 * ti__qrq_n) against the scalar loop on random and extreme accumulators, multipliers, shifts
 * and clamp ranges. Then the whole quantized path (GEMM, requantization and the depthwise
 * taps of ti__dwq_tap_avx2): a uint8 CONV_2D model
 * from tests/ run with the AVX2 ISA and with the scalar ISA gives identical outputs.
 * The shared GEMM driver (core/qgemm.c) on random shapes under every ISA, the AVX512-VNNI
 * byte path included, against the scalar ISA: odd depths, rows and columns around the
 * kernels' blocks, zero points at the ends of their range, per-channel multipliers and
 * zero points, every requantization mode, bias int32 / int64 / none, strided outputs;
 * the AVX-512 depthwise pixel and the byte copy against plain loops; the AVX-512 lanes of
 * the 8-bit ADD against the scalar arithmetic; and the uint8 and int8 (per-channel)
 * MobileNets under each ISA, on 1 and 2 threads, also planned under the best ISA and run
 * under a lower one. On aarch64 the same tests force scalar, NEON (the int16 micro-kernel
 * ti__qg_micro_neon and ti__qrq32_neon) and NEON + dotprod (the SDOT byte path); x86-only
 * helpers are skipped there. */
#define TINYINFER_IMPLEMENTATION
#include <fenv.h>
#include "tinyinfer.h"
#include "ti_test.h"
#define TFL_DIR "tests/conformance/tflite/"

/* The levels of this CPU family (the ISA values of x86 and aarch64 coincide: 1 and 2 are
 * AVX2 / AVX-512 there, NEON / NEON + dotprod here): the int16 kernels' level, the byte
 * path's level, and every level to force, scalar first. */
#if defined(TI__ARM_NEON)
#define ISA_INT16 TI__ISA_NEON
#define ISA_INT16_NAME "NEON"
#define MICRO_SIMD ti__qg_micro_neon
#define ISA_BYTES TI__ISA_NEONDOT
static const int isas[] = {TI__ISA_SCALAR, TI__ISA_NEON, TI__ISA_NEONDOT};
#else
#define ISA_INT16 TI__ISA_AVX2
#define ISA_INT16_NAME "AVX2"
#define MICRO_SIMD ti__qg_micro_avx2
#define ISA_BYTES TI__ISA_AVX512VNNI
#ifdef TI__X86_AMX
static const int isas[] = {TI__ISA_SCALAR, TI__ISA_AVX2, TI__ISA_AVX512, TI__ISA_AVX512VNNI,
                           TI__ISA_AMX};
#else
static const int isas[] = {TI__ISA_SCALAR, TI__ISA_AVX2, TI__ISA_AVX512, TI__ISA_AVX512VNNI};
#endif
#endif
#define NISA ((int)(sizeof isas / sizeof isas[0]))

static unsigned g_seed = 777u;
static unsigned urand(void) {
    g_seed = g_seed * 1664525u + 1013904223u;
    return g_seed >> 8;
}

#define LD 40 /* accumulator row stride: 16 used, the rest must stay untouched */

static void run_case(size_t kc, int full_range) {
#if defined(TI__X86_SIMD) || defined(TI__ARM_NEON)
    int16_t *a = (int16_t *)malloc((kc + 1) * 4 * sizeof(int16_t));
    int16_t *b = (int16_t *)malloc((kc + 1) * 16 * sizeof(int16_t));
    uint32_t c_ref[4 * LD], c_simd[4 * LD];
    for (size_t i = 0; i < kc * 4; i++)
        a[i] = full_range ? (int16_t)(urand() & 0xffff) : (int16_t)((int)(urand() % 511) - 255);
    /* B as packed: pairs of depths per channel, an odd kc's last pair ending in 0 */
    for (size_t i = 0; i < (kc + 1) / 2 * 32; i++)
        b[i] = full_range ? (int16_t)(urand() & 0xffff) : (int16_t)((int)(urand() % 511) - 255);
    if (kc % 2 == 1)
        for (size_t q = 0; q < 16; q++) b[kc / 2 * 32 + 2 * q + 1] = 0;
    if (full_range && kc > 1) a[0] = a[4] = b[0] = b[1] = INT16_MIN; /* the madd edge case */
    for (int i = 0; i < 4 * LD; i++) c_ref[i] = c_simd[i] = urand() * 2654435761u;
    /* the SIMD kernel's panel: on x86 the same values in pairs of depths per row */
    int16_t *as = (int16_t *)malloc((kc + 1) * 4 * sizeof(int16_t));
    memcpy(as, a, kc * 4 * sizeof(int16_t));
#if defined(TI__X86_SIMD)
    ti__qg_pairs_avx2(as, kc);
#endif
    ti__qg_micro(kc, a, b, c_ref, LD);
    MICRO_SIMD(kc, as, b, c_simd, LD);
    int bad = 0;
    for (int i = 0; i < 4 * LD; i++)
        if (c_ref[i] != c_simd[i] && bad++ == 0)
            printf("  kc %zu%s: acc[%d] = %u, portable gives %u\n", kc,
                   full_range ? " (full int16 range)" : "", i, c_simd[i], c_ref[i]);
#if defined(TI__X86_SIMD)
    /* the storing variant (the first depth panel): the portable sums from zero, in the
     * block's 16 columns of each row, the rest of each row left alone */
    uint32_t c_set[4 * LD];
    for (int i = 0; i < 4 * LD; i++) c_set[i] = c_ref[i] = urand() * 2654435761u;
    for (int r = 0; r < 4; r++)
        for (int q = 0; q < 16; q++) c_ref[r * LD + q] = 0;
    ti__qg_micro(kc, a, b, c_ref, LD);
    ti__qg_micro_avx2_set(kc, as, b, c_set, LD);
    if (memcmp(c_ref, c_set, sizeof c_ref) != 0 && bad++ == 0)
        printf("  kc %zu: the storing micro-kernel differs from the portable one\n", kc);
#endif
    TI_CHECK_EQ_INT(bad, 0);
    free(as);
    free(a);
    free(b);
#else
    (void)kc;
    (void)full_range;
#endif
}

TI_TEST(micro_kernel_matches_portable) {
    if (ti__cpu_isa_best() < ISA_INT16) {
        TI_SKIP("this CPU has no " ISA_INT16_NAME);
        return;
    }
    static const size_t ks[] = {0, 1, 2, 3, 4, 7, 8, 9, 15, 16, 17, 27, 63, 144, 255, 256};
    for (size_t i = 0; i < sizeof(ks) / sizeof(ks[0]); i++) {
        run_case(ks[i], 0);
        run_case(ks[i], 1);
    }
    for (int r = 0; r < 50; r++) run_case(1 + urand() % 256, r & 1);
}

/* ti__qrq_n in TI__QRQ_32 mode under AVX2 (NEON) and under the scalar ISA: identical int32
 * outputs (int32 output dtype, so the clamp range is the test's) for every accumulator
 * pattern. */
TI_TEST(requant_simd_matches_scalar) {
    if (ti__cpu_isa_best() < ISA_INT16) {
        TI_SKIP("this CPU has no " ISA_INT16_NAME);
        return;
    }
    enum { N = 150 }; /* more than two chunks of TI__QG_CHUNK, with a tail */
    static const int32_t xs[] = {0, 1, -1, 2, -2, INT32_MAX, INT32_MIN, INT32_MAX - 1, INT32_MIN + 1,
                                 1 << 30, -(1 << 30), 12345, -12345, 65535, -65536};
    static const int32_t ms[] = {0, 1, INT32_MAX, 1 << 30, (1 << 30) + 1, 1518500250, 2147483000};
    int32_t mult[N], shift[N], y_ref[N], y_simd[N];
    int64_t acc[N];
    int bad = 0;
    for (int r = 0; r < 2000; r++) {
        for (int i = 0; i < N; i++) {
            unsigned u = urand() % 4;
            acc[i] = u == 0 ? (int64_t)xs[urand() % (sizeof xs / sizeof xs[0])]
                   : u == 1 ? (int64_t)(int32_t)(urand() * 2654435761u) + (int64_t)(urand() % 3) * 4294967296LL
                            : (int64_t)((int)(urand() % 200001) - 100000);
            mult[i] = urand() % 3 == 0 ? ms[urand() % (sizeof ms / sizeof ms[0])]
                                       : (int32_t)((1u << 30) + urand() % (1u << 24) * 64u);
            /* -31 .. 31 (ti__q_quantize_multiplier gives -31 .. 30; the scalar loop has no
             * defined result beyond) */
            shift[i] = (int32_t)(urand() % 63) - 31;
        }
        ti__qrq q;
        memset(&q, 0, sizeof q);
        q.mode = TI__QRQ_32;
        q.mult = mult;
        q.shift = shift;
        q.yo = r % 3 == 0 ? 0 : (int32_t)(urand() % 65536) - 32768;
        if (r % 5 == 0) q.yo = r & 8 ? INT32_MAX : INT32_MIN;
        q.lo = r % 4 == 0 ? INT32_MIN : -(int32_t)(urand() % 100000);
        q.hi = r % 4 == 1 ? INT32_MAX : (int32_t)(urand() % 100000);
        size_t c0 = 0, n = N - (size_t)(r % 9);
        ti__cpu_force_isa(TI__ISA_SCALAR);
        ti__qrq_n(&q, acc, c0, n, y_ref, TI_DTYPE_I32, 0, 1);
        ti__cpu_force_isa(ISA_INT16);
        ti__qrq_n(&q, acc, c0, n, y_simd, TI_DTYPE_I32, 0, 1);
        for (size_t i = 0; i < n; i++)
            if (y_ref[i] != y_simd[i] && bad++ < 3)
                printf("  acc %lld mult %d shift %d yo %d [%d, %d]: simd %d, scalar %d\n",
                       (long long)acc[i], mult[i], shift[i], q.yo, q.lo, q.hi, y_simd[i], y_ref[i]);
    }
    ti__cpu_force_isa(-1);
    TI_CHECK_EQ_INT(bad, 0);
}

/* Requantization edge cases shared by the tests below: n (EDGE_N) sums at and next to
 * +-2^k, the halves between multiples of 2^k (the ties of the rounding shift and of the
 * doubling high multiply), INT32_MIN / INT32_MAX, 0, then random ones; multipliers at their
 * ends, negative ones and INT32_MIN included. */
enum { EDGE_N = 480 }; /* 33 x 7 x 2 edge values, 0, then random ones */
static const int32_t edge_ms[] = {0, 1, 2, 1 << 30, (1 << 30) + 1, 1518500250, INT32_MAX - 1,
                                  INT32_MAX, -1, -(1 << 30), INT32_MIN + 1, INT32_MIN};
static void edge_sums(int64_t *acc) {
    size_t nx = 0;
    for (int k = 0; k <= 32; k++) {
        int64_t p = (int64_t)1 << (k < 32 ? k : 31), h = p / 2;
        const int64_t v[] = {p, p - 1, p + 1, p + h, p + h - 1, p + h + 1, 3 * p + h};
        for (int j = 0; j < 7; j++) {
            int64_t x = v[j] > INT32_MAX ? INT32_MAX : v[j];
            acc[nx++] = x;
            acc[nx++] = -x - (k == 32 && j == 0 ? 1 : 0); /* INT32_MIN at 2^31 */
        }
    }
    acc[nx++] = 0;
    while (nx < EDGE_N) acc[nx++] = (int32_t)(urand() * 2654435761u);
}

/* TFLite's requantization (TI__QRQ_32) with these multipliers, shifts and {yo, lo, hi}. */
static ti__qrq edge_qrq(const int32_t *mult, const int32_t *shift, const int32_t *yo_lo_hi) {
    ti__qrq q;
    memset(&q, 0, sizeof q);
    q.mode = TI__QRQ_32;
    q.mult = mult;
    q.shift = shift;
    q.yo = yo_lo_hi[0], q.lo = yo_lo_hi[1], q.hi = yo_lo_hi[2];
    return q;
}

/* The same on edge values, every combination: accumulators at and next to 0, +-2^k, the
 * halves between multiples of 2^k (the ties of the rounding shift and of the doubling high
 * multiply) and INT32_MIN / INT32_MAX; every shift -31..31; multipliers at their ends,
 * negative ones and INT32_MIN included (the SIMD code must hand those lanes to the scalar
 * loop or agree with it); zero points and clamp ranges at the int32 ends. Each row of N
 * holds one shift and one multiplier on every lane, so whole SIMD groups see them. */
TI_TEST(requant_simd_edges_match_scalar) {
    if (ti__cpu_isa_best() < ISA_INT16) {
        TI_SKIP("this CPU has no " ISA_INT16_NAME);
        return;
    }
    enum { NX = EDGE_N };
    static const int32_t *ms = edge_ms;
    static const int32_t yos[][3] = {{0, INT32_MIN, INT32_MAX}, {INT32_MAX, INT32_MIN, INT32_MAX},
                                     {INT32_MIN, INT32_MIN, INT32_MAX}, {-128, -128, 127},
                                     {200, 0, 255}, {-7, -100, 100}};
    int64_t acc[NX];
    int32_t mult[NX], shift[NX], y_ref[NX], y_simd[NX];
    edge_sums(acc);
    int bad = 0;
    for (size_t mi = 0; mi < sizeof edge_ms / sizeof edge_ms[0]; mi++)
        for (int sh = -31; sh <= 31; sh++)
            for (size_t z = 0; z < sizeof yos / sizeof yos[0]; z++) {
                for (size_t i = 0; i < NX; i++) mult[i] = ms[mi], shift[i] = sh;
                ti__qrq q = edge_qrq(mult, shift, yos[z]);
                ti__cpu_force_isa(TI__ISA_SCALAR);
                ti__qrq_n(&q, acc, 0, NX, y_ref, TI_DTYPE_I32, 0, 1);
                ti__cpu_force_isa(ISA_INT16);
                ti__qrq_n(&q, acc, 0, NX, y_simd, TI_DTYPE_I32, 0, 1);
                for (size_t i = 0; i < NX; i++)
                    if (y_ref[i] != y_simd[i] && bad++ < 5)
                        printf("  acc %lld mult %d shift %d yo %d [%d, %d]: simd %d, scalar %d\n",
                               (long long)acc[i], mult[i], sh, q.yo, q.lo, q.hi, y_simd[i],
                               y_ref[i]);
            }
    ti__cpu_force_isa(-1);
    TI_CHECK_EQ_INT(bad, 0);
}

/* ---- the whole GEMM driver on random shapes, each ISA against the scalar one ------------- */
/* A: rows x depth bytes (uint8 or int8) with zero point zp; the int16 path's gather gives
 * A' = a - zp, the byte path's the bytes as uint8 (int8 flipped) with a_off8 = -zp (-128). */
typedef struct tg_a {
    const unsigned char *a;
    int u8;
    size_t depth;
    int32_t zp;
} tg_a;

static void tg_gather(const void *ctx, size_t row, size_t k0, size_t k1, int16_t *dst) {
    const tg_a *t = (const tg_a *)ctx;
    for (size_t k = k0; k < k1; k++) {
        unsigned char v = t->a[row * t->depth + k];
        dst[(k - k0) * TI__QG_MR] = (int16_t)((t->u8 ? (int32_t)v : (int32_t)(signed char)v) - t->zp);
    }
}

static void tg_gather8(const void *ctx, size_t p0, size_t np, size_t k0, size_t k1, uint8_t *dst,
                       size_t ld, uint32_t *sums) {
    const tg_a *t = (const tg_a *)ctx;
    for (size_t r = 0; r < np; r++)
        for (size_t k = k0; k < k1; k++) {
            uint8_t v = (uint8_t)(t->a[(p0 + r) * t->depth + k] ^ (t->u8 ? 0 : 0x80));
            dst[r * ld + k - k0] = v;
            if (sums != NULL) sums[r] += v;
        }
}

static int32_t zp_extreme(int u8) {
    unsigned u = urand() % 4;
    if (u == 0) return u8 ? 0 : -128;
    if (u == 1) return u8 ? 255 : 127;
    return u8 ? (int32_t)(urand() % 256) : (int32_t)(urand() % 256) - 128;
}

/* A pool of 2 threads for gemm_case's int16 and byte paths: few rows split the columns
 * among the threads (ti__qg_split_cols), more rows the rows. */
static ti__threadpool *g_tp2;

/* 1: gemm_case makes what the byte path's tile and in-register requantizing kernels take
 * (A's rows in place, TFLite's requantization with right shifts to bytes, row-major,
 * int32 bias or none, one B offset); g_tile_cases counts those of them that AMX runs. */
static int g_tiles;
#ifdef TI__X86_AMX
static int g_tile_cases; /* where tiles are compiled in (x86-64) */
#endif

/* One random GEMM (case number r) under every ISA this CPU has, the int16 and byte paths
 * also on 2 threads; returns the mismatches. */
static int gemm_case(int r, size_t rows, size_t depth, size_t cols) {
    int a_u8 = (int)(urand() & 1), b_u8 = (int)(urand() & 1);
    size_t c0 = urand() % 3 == 0 ? 5 : 0, nch = c0 + cols;
    unsigned char *a = (unsigned char *)malloc(rows * depth + 1);
    unsigned char *b = (unsigned char *)malloc(cols * depth + 1);
    unsigned char *bzp = (unsigned char *)malloc(nch);
    int32_t *mult = (int32_t *)malloc(nch * sizeof(int32_t)), *shift = (int32_t *)malloc(nch * sizeof(int32_t));
    int32_t *b32 = (int32_t *)malloc(nch * sizeof(int32_t));
    int64_t *b64 = (int64_t *)malloc(nch * sizeof(int64_t));
    double *real = (double *)malloc(nch * sizeof(double));
    size_t ybytes = rows * cols * 4 + 4;
    unsigned char *yref = (unsigned char *)malloc(ybytes), *ysimd = (unsigned char *)malloc(ybytes);
    int16_t *bp = (int16_t *)malloc(ti__qg_packed_bytes(cols, depth) + 2);
    int8_t *bp8 = (int8_t *)malloc(ti__qg8_packed_bytes(cols, depth) + 64);
    tg_a ta = {a, a_u8, depth, zp_extreme(a_u8)};
    /* A: random, with runs of the zero point (the padding taps of a convolution) */
    for (size_t i = 0; i < rows * depth; i++)
        a[i] = urand() % 5 == 0 ? (unsigned char)ta.zp : (unsigned char)urand();
    for (size_t i = 0; i < cols * depth; i++) b[i] = (unsigned char)urand();
    if (urand() % 4 == 0) /* extreme weights */
        for (size_t i = 0; i < cols * depth; i++) b[i] = urand() & 1 ? 0x7f : 0x80;
    for (size_t c = 0; c < nch; c++) {
        bzp[c] = (unsigned char)zp_extreme(b_u8);
        mult[c] = urand() % 5 == 0 ? INT32_MAX : (int32_t)((1u << 30) + urand() % (1u << 24) * 64u);
        shift[c] = g_tiles ? -(int32_t)(1 + urand() % 31) : (int32_t)(urand() % 40) - 31; /* -31 .. 8 */
        b32[c] = urand() % 4 == 0 ? (int32_t)(urand() * 2654435761u) : (int32_t)(urand() % 200001) - 100000;
        b64[c] = (int64_t)b32[c] * 3;
        real[c] = (double)(urand() % 1000 + 1) * 1e-6;
    }
    ti__qgemm g;
    memset(&g, 0, sizeof g);
    ti__qrq q;
    memset(&q, 0, sizeof q);
    g.rows = rows;
    g.depth = depth;
    g.cols = cols;
    g.gather = tg_gather;
    g.gctx = &ta;
    g.b = b;
    g.b_u8 = b_u8;
    if (urand() & 1) { /* [cols][depth] (conv weights) or [depth][cols] (a MatMul's b) */
        g.b_cs = depth, g.b_ks = 1;
    } else {
        g.b_cs = 1, g.b_ks = cols;
    }
    unsigned bsel_zp = g_tiles ? 1 + urand() % 2 : urand() % 3;
    if (bsel_zp == 0) { /* ONNX: per-tensor or per-column zero points of B */
        g.b_zp = bzp;
        g.b_zp_n = urand() & 1 ? nch : 1;
    } else if (bsel_zp == 1 && !b_u8) { /* TFLite's int8 weights: zero point 0 */
        g.b_off = 0;
    } else { /* TFLite: -zero point as an offset */
        g.b_off = -zp_extreme(b_u8);
    }
    if (g_tiles || urand() & 1) { /* A's rows as they lie in memory (a 1x1 conv's input) */
        g.a8 = a;
        g.a8_rs = depth;
        g.a8_off = -ta.zp;
        g.a8_u8 = a_u8;
    }
    g.c0 = c0;
    int mode = g_tiles ? 0 : r % 6; /* three in six TI__QRQ_32, the common case */
    q.mode = mode < 3 ? TI__QRQ_32 : mode == 3 ? TI__QRQ_RAW : mode == 4 ? TI__QRQ_DOUBLE : TI__QRQ_ONNX;
    q.mult = mult;
    q.shift = shift;
    q.real = real;
    ti_dtype ydt = q.mode == TI__QRQ_RAW ? TI_DTYPE_I32 : (!g_tiles && urand() % 3 == 0 ? TI_DTYPE_I32 : urand() & 1 ? TI_DTYPE_U8 : TI_DTYPE_I8);
    q.lo = ydt == TI_DTYPE_U8 ? 0 : ydt == TI_DTYPE_I8 ? -128 : INT32_MIN;
    q.hi = ydt == TI_DTYPE_U8 ? 255 : ydt == TI_DTYPE_I8 ? 127 : INT32_MAX;
    if (urand() & 1 && ydt != TI_DTYPE_I32) q.lo += (int32_t)(urand() % 20), q.hi -= (int32_t)(urand() % 20); /* fused ReLU-like */
    q.yo = ydt == TI_DTYPE_I32 ? (int32_t)(urand() % 201) - 100 : (int32_t)(urand() % 256) - (ydt == TI_DTYPE_I8 ? 128 : 0);
    g.rq = &q;
    ti_tensor tb;
    memset(&tb, 0, sizeof tb);
    unsigned bsel = g_tiles ? urand() % 2 : urand() % 4;
    if (bsel > 0) {
        tb.dtype = bsel == 3 ? TI_DTYPE_I64 : TI_DTYPE_I32;
        tb.data = bsel == 3 ? (void *)b64 : (void *)b32;
        g.bias = &tb;
    }
    g.ydt = ydt;
    if (g_tiles || urand() & 1) { /* row-major, or channel planes (NCHW) */
        g.y_rs = cols, g.y_cs = 1;
    } else {
        g.y_rs = 1, g.y_cs = rows;
    }
    int bad = 0;
#ifdef TI__X86_AMX
    /* the tile path's conditions that this case controls (ti__qg8_range has the rest) */
    if (g_tiles && ti__cpu_isa_best() >= TI__ISA_AMX && rows >= 16 && depth % 4 == 0 &&
        ti__qg8_amx_step(depth / 4) != 0 && (a_u8 || !b_u8) && ydt != TI_DTYPE_I32)
        g_tile_cases++;
#endif
    for (int i = 0; i < NISA; i++) {
        if (ti__cpu_force_isa(isas[i]) != isas[i]) continue;
        unsigned char *y = i == 0 ? yref : ysimd;
        memset(y, 0xA5, ybytes);
        g.y = y;
        g.gather8 = NULL;
        g.bp8 = NULL;
        ti__qg_pack(&g, bp, NULL);
        if (isas[i] >= ISA_BYTES) {
            ti__qg8_pack(&g, bp8, NULL);
            g.gather8 = tg_gather8;
            g.a_off8 = -ta.zp - (a_u8 ? 0 : 128);
            TI_CHECK(ti__qg8_usable(&g));
        }
        int two = (isas[i] >= ISA_BYTES || isas[i] == ISA_INT16) && g_tp2 != NULL;
        for (int t = 0; t < (two ? 2 : 1); t++) {
            if (t > 0) memset(y, 0xA5, ybytes);
            ti__qg_compute(&g, t > 0 ? g_tp2 : NULL);
            if (i > 0 && memcmp(yref, ysimd, ybytes) != 0 && bad++ == 0)
                printf("  case %d (%zu x %zu x %zu, A %s zp %d, B %s, mode %d, y %s, bias %u): "
                       "%s%s differs from scalar\n", r, rows, depth, cols, a_u8 ? "u8" : "i8",
                       ta.zp, b_u8 ? "u8" : "i8", q.mode, ti_dtype_name(ydt), bsel,
                       ti__cpu_isa_name(isas[i]), t > 0 ? " on 2 threads" : "");
        }
    }
    ti__cpu_force_isa(-1);
    free(a), free(b), free(bzp), free(mult), free(shift), free(b32), free(b64), free(real);
    free(yref), free(ysimd), free(bp), free(bp8);
    return bad;
}

TI_TEST(gemm_each_isa_matches_scalar) {
    int bad = 0;
    g_tp2 = ti__threadpool_create(NULL, 2);
    /* edges: depths around 4 and the byte path's 1024-depth panels, columns around the
     * 16-column blocks, the 32-column tiles and the 256-column chunks, rows around 8 */
    static const size_t ds[] = {1, 2, 3, 4, 5, 7, 8, 9, 27, 255, 1023, 1024, 1025, 2051};
    static const size_t cs[] = {1, 15, 16, 17, 31, 32, 33, 255, 256, 257, 520};
    static const size_t rs[] = {1, 7, 8, 9, 17};
    int r = 0;
    for (size_t i = 0; i < sizeof ds / sizeof ds[0]; i++, r++)
        bad += gemm_case(r, rs[r % 5], ds[i], cs[r % 11]);
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++, r++)
        bad += gemm_case(r, rs[r % 5], 1 + urand() % 70, cs[i]);
    for (int n = 0; n < 150; n++, r++)
        bad += gemm_case(r, 1 + urand() % 30, 1 + urand() % 300, 1 + urand() % 80);
    /* one row past one panel: the one-row micro-kernel (an 8-bit classifier's 1 x 1280) */
    bad += gemm_case(r++, 1, 1025, 33);
    bad += gemm_case(r++, 1, 1280, 1001);
    bad += gemm_case(r++, 1, 2051, 17);
    /* rows enough for 2 threads to split them (64 and more), and the column split's bound */
    static const size_t many[] = {49, 63, 64, 65, 133};
    for (size_t i = 0; i < sizeof many / sizeof many[0]; i++, r++)
        bad += gemm_case(r, many[i], 1 + urand() % 200, 17 + urand() % 100);
    /* the tile path (AMX): 16 and 32 rows and tails past them, depths of whole tile steps
     * (and some without: the VNNI kernels), columns in odd and even blocks of 16 */
    g_tiles = 1;
    static const size_t trs[] = {16, 17, 31, 32, 33, 48, 56, 64, 100, 196};
    static const size_t tds[] = {16, 24, 32, 64, 68, 96, 144, 384, 960, 104};
    for (int n = 0; n < 60; n++, r++)
        bad += gemm_case(r, trs[n % 10], tds[n % 10 == 9 ? 9 : n % 9], 1 + urand() % 300);
    g_tiles = 0;
#ifdef TI__X86_AMX
    printf("  %d cases on AMX tiles\n", g_tile_cases);
    TI_CHECK(g_tile_cases > 20 || ti__cpu_isa_best() < TI__ISA_AMX);
#endif
    ti__threadpool_destroy(g_tp2);
    g_tp2 = NULL;
    TI_CHECK_EQ_INT(bad, 0);
}

#if defined(TI__X86_SIMD)
enum { DW_C = 300, DW_T = 25 };
typedef void (*dw_pixel_fn)(int u8, uint32_t *acc, const void *x, const void *w, const size_t *xoff,
                            const size_t *woff, size_t nt, size_t n, int32_t xo, int32_t wo);
/* One random depthwise pixel (u8 or int8 values in x and w, DW_C * DW_T bytes each, refilled;
 * extreme values one time in seven) through pixel against ti__dwq_tap_avx2 tap after tap;
 * *n_out gets its channel count. Returns 1 when they differ. */
static int dw_pixel_case(int u8, dw_pixel_fn pixel, unsigned char *x, unsigned char *w, size_t *n_out) {
    uint32_t a1[DW_C], a2[DW_C];
    size_t xoff[DW_T], woff[DW_T];
    size_t n = 1 + urand() % (DW_C - 1), nt = 1 + urand() % DW_T;
    int32_t xo = -zp_extreme(u8), wo = u8 ? -zp_extreme(1) : 0;
    for (size_t i = 0; i < DW_C * DW_T; i++) x[i] = (unsigned char)urand(), w[i] = (unsigned char)urand();
    if (urand() % 7 == 0)
        for (size_t i = 0; i < DW_C * DW_T; i++) x[i] = u8 ? 255 : 0x80, w[i] = u8 ? 0 : 0x80;
    for (size_t t = 0; t < nt; t++)
        xoff[t] = urand() % (DW_C * DW_T - n), woff[t] = urand() % (DW_C * DW_T - n);
    memset(a1, 0, sizeof a1);
    for (size_t t = 0; t < nt; t++) ti__dwq_tap_avx2(u8, a1, x + xoff[t], w + woff[t], n, xo, wo);
    for (size_t i = 0; i < DW_C; i++) a2[i] = i < n ? 12345u : a1[i];
    pixel(u8, a2, x, w, xoff, woff, nt, n, xo, wo);
    *n_out = n;
    if (memcmp(a1, a2, sizeof a1) == 0) return 0;
    printf("  depthwise pixel: %zu channels, %zu taps, %s: differs\n", n, nt, u8 ? "u8" : "i8");
    return 1;
}
#endif

#if defined(TI__X86_SIMD)
/* The AVX2 depthwise path's pixel as tfl_conv.c runs it: per chunk of up to 64 channels the
 * weights in pairs (ti__dwq_wprep_avx2), the taps against them (ti__dwq_pix_avx2), plus the
 * input offset's share ks. */
static void dw_pix_avx2(int u8, uint32_t *acc, const void *x, const void *w, const size_t *xoff,
                        const size_t *woff, size_t nt, size_t n, int32_t xo, int32_t wo) {
    int16_t wp[4 * (DW_T + 1) / 2 * 32 + DW_T * 16];
    uint32_t ks[64];
    const unsigned char *xp[DW_T];
    for (size_t c0 = 0; c0 < n; c0 += 64) {
        size_t cn = n - c0 < 64 ? n - c0 : 64;
        for (size_t t = 0; t < nt; t++) xp[t] = (const unsigned char *)x + xoff[t];
        ti__dwq_wprep_avx2(u8, wp, ks, (const unsigned char *)w + c0, woff, nt, cn, xo, wo);
        ti__dwq_pix_avx2(u8, acc + c0, xp, c0, nt, wp, cn); /* the chunk as an offset */
        for (size_t c = 0; c < cn; c++) acc[c0 + c] += ks[c];
    }
}
#endif

#if defined(TI__X86_SIMD) && defined(TI__X86_VNNI)
/* The AVX512-VNNI depthwise path's pixel as tfl_conv.c runs it: per chunk of up to 64
 * channels the weights in quads of taps (ti__dwq_wprep_vnni), the taps against them
 * (ti__dwq_pix_vnni, the quads' missing taps reading x), plus the input offset's share ks;
 * a weight offset bo outside int8 takes the per-pixel kernel, as tfl_conv.c does. Chunks of
 * 32 channels or more also check the two-pixel kernel (ti__dwq_pix2_vnni). */
static int dw_pair_bad; /* ti__dwq_pix2_vnni's differences from ti__dwq_pix_vnni */
static void dw_pix_vnni(int u8, uint32_t *acc, const void *x, const void *w, const size_t *xoff,
                        const size_t *woff, size_t nt, size_t n, int32_t xo, int32_t wo) {
    int8_t wp[2 * (DW_T + 3) / 4 * 128];
    uint32_t ks[64];
    const unsigned char *xp[DW_T + 3];
    int32_t bo = u8 ? 128 + wo : wo;
    if (bo < -128 || bo > 127) {
        ti__dwq_pixel_avx512(u8, acc, x, w, xoff, woff, nt, n, xo, wo);
        return;
    }
    for (size_t c0 = 0; c0 < n; c0 += 64) {
        size_t cn = n - c0 < 64 ? n - c0 : 64;
        for (size_t t = 0; t < (nt + 3) / 4 * 4; t++)
            xp[t] = (const unsigned char *)x + (t < nt ? xoff[t] : 0);
        ti__dwq_wprep_vnni(u8, wp, ks, (const unsigned char *)w + c0, woff, nt, cn, xo, wo);
        ti__dwq_pix_vnni(acc + c0, xp, c0, nt, wp, cn, u8 ? 0 : 0x80, bo); /* chunk: offset */
        if (cn >= 32) { /* the two-pixel kernel on the first 32 channels: this pixel and one
                           with its taps reversed, against the one-pixel kernel */
            const unsigned char *xr[DW_T + 3];
            uint32_t one[64], two[2 * 32];
            for (size_t t = 0; t < (nt + 3) / 4 * 4; t++) xr[t] = t < nt ? xp[nt - 1 - t] : xp[t];
            ti__dwq_pix_vnni(one, xr, c0, nt, wp, cn, u8 ? 0 : 0x80, bo);
            ti__dwq_pix2_vnni(two, two + 32, xp, c0, xr, c0, nt, wp, u8 ? 0 : 0x80, bo);
            if (memcmp(two, acc + c0, 32 * sizeof(uint32_t)) != 0 ||
                memcmp(two + 32, one, 32 * sizeof(uint32_t)) != 0)
                dw_pair_bad++;
        }
        for (size_t c = 0; c < cn; c++) acc[c0 + c] += ks[c];
    }
}
#endif

/* The AVX2 helpers of the depthwise path and of the int16 GEMM against plain loops: the
 * pixel (dw_pix_avx2) against ti__dwq_tap_avx2 tap after tap; the rows'
 * requantization to bytes against ti__qrq_one, on odd channel counts (the tails), shifts of
 * both signs, extreme multipliers, with and without the column and row terms; the panel's
 * interleave of four rows, the widening copy of its gather and the panel straight from byte
 * rows. */
TI_TEST(avx2_helpers_match_plain_loops) {
#if defined(TI__X86_SIMD)
    if (ti__cpu_isa_best() < TI__ISA_AVX2) {
        TI_SKIP("this CPU has no AVX2");
        return;
    }
    enum { C = DW_C, T = DW_T, R = 9 };
    unsigned char *x = (unsigned char *)malloc(C * T), *w = (unsigned char *)malloc(C * T);
    uint32_t dot[R * C];
    int32_t colc[C], bos[C], rowv[R], mult[C], shift[C];
    uint8_t o1[R * C], o2[R * C];
    int bad = 0;
    for (int r = 0; r < 300; r++) {
        size_t n;
        int u8 = r & 1;
        bad += dw_pixel_case(u8, dw_pix_avx2, x, w, &n);
        /* the rows: sums, per-column terms and multipliers as a GEMM's or a depthwise's */
        size_t nr = 1 + urand() % R, ldo = n + urand() % 5;
        int use_c = (int)(urand() % 3), use_b = urand() % 3 == 0, use_r = urand() & 1;
        for (size_t i = 0; i < R * C; i++) dot[i] = urand() * 2654435761u >> (urand() % 24);
        for (size_t c = 0; c < n; c++) {
            colc[c] = (int32_t)(urand() * 2246822519u) >> (urand() % 20);
            bos[c] = (int32_t)(urand() % 511) - 255;
            mult[c] = urand() % 5 == 0 ? INT32_MAX : (int32_t)((1u << 30) + urand() % (1u << 24) * 64u);
            shift[c] = urand() % 8 == 0 ? (int32_t)(urand() % 9) : -(int32_t)(urand() % 32); /* -31..8 */
        }
        for (size_t i = 0; i < nr; i++) rowv[i] = (int32_t)(urand() % 100001) - 50000;
        ti__qrq q;
        memset(&q, 0, sizeof q);
        q.mode = TI__QRQ_32;
        q.mult = mult;
        q.shift = shift;
        q.lo = u8 ? (int32_t)(urand() % 20) : -128 + (int32_t)(urand() % 20);
        q.hi = u8 ? 255 - (int32_t)(urand() % 20) : 127 - (int32_t)(urand() % 20);
        q.yo = (int32_t)(urand() % 256) - (u8 ? 0 : 128);
        if (r % 6 == 5) /* zero points far outside the bytes: the int32 clamp */
            q.yo = (r & 8 ? 1 : -1) * (int32_t)(16000 + urand() % 20000);
        memset(o1, 0xA5, sizeof o1);
        memset(o2, 0xA5, sizeof o2);
        for (size_t i = 0; i < nr; i++)
            for (size_t c = 0; c < n; c++) {
                uint32_t v = dot[i * C + c] + (use_c ? (uint32_t)colc[c] : 0u);
                if (use_r) v += use_b ? (uint32_t)bos[c] * (uint32_t)rowv[i] : (uint32_t)rowv[i];
                o1[i * ldo + c] = (uint8_t)ti__qrq_one(&q, (int32_t)v, c);
            }
        int pos = ti__qrq_shifts(shift, n);
        TI_CHECK(pos >= 0);
        ti__qrq_rows_avx2(nr, dot, C, use_c ? colc : NULL, use_b ? bos : NULL, use_r ? rowv : NULL,
                          n, mult, shift, pos, q.yo, q.lo, q.hi, o2, ldo);
        if (memcmp(o1, o2, sizeof o1) != 0 && bad++ == 0)
            printf("  rows: %zu x %zu, terms %d%d%d: differs\n", nr, n, use_c, use_b, use_r);
    }
    /* the panel's interleave of four rows, and the widening copy, on every length to 40 */
    int16_t rw[4][40], p1[4 * 41], p2[4 * 41], w1[41], w2[41];
    for (size_t n = 0; n <= 40; n++) {
        for (size_t i = 0; i < 4 * 40; i++) rw[i / 40][i % 40] = (int16_t)(urand() - (1u << 15));
        for (size_t i = 0; i < 4 * 41; i++) p1[i] = p2[i] = (int16_t)i;
        for (size_t i = 0; i < n; i++)
            for (int r = 0; r < 4; r++) p1[i * 4 + (size_t)r] = rw[r][i];
        ti__qg_pairs_avx2(p1, n); /* the micro-kernel test checks this one's layout */
        ti__qg_interleave4_avx2(p2, rw[0], rw[1], rw[2], rw[3], n);
        int u8 = (int)(n & 1);
        int32_t off = -zp_extreme(u8);
        for (size_t i = 0; i < 41; i++) w1[i] = w2[i] = -7;
        for (size_t i = 0; i < n; i++)
            w1[i] = (int16_t)((u8 ? (int32_t)x[i] : (int32_t)(int8_t)x[i]) + off);
        ti__q8_widen_avx2(w2, x, n, u8, off);
        if ((memcmp(p1, p2, sizeof p1) != 0 || memcmp(w1, w2, sizeof w1) != 0) && bad++ == 0)
            printf("  interleave or widen of %zu: differs\n", n);
        /* four byte rows 43 apart straight into the panel: the widened rows interleaved */
        int16_t wr[4][40], p3[4 * 41], p4[4 * 41];
        for (size_t r = 0; r < 4; r++)
            for (size_t i = 0; i < n; i++)
                wr[r][i] = (int16_t)((u8 ? (int32_t)x[r * 43 + i] : (int32_t)(int8_t)x[r * 43 + i]) + off);
        for (size_t i = 0; i < 4 * 41; i++) p3[i] = p4[i] = (int16_t)i;
        ti__qg_interleave4_avx2(p3, wr[0], wr[1], wr[2], wr[3], n);
        ti__qg_widen4_avx2(p4, x, 43, n, u8, off);
        if (memcmp(p3, p4, sizeof p3) != 0 && bad++ == 0)
            printf("  panel from byte rows, %zu depths: differs\n", n);
    }
    /* results just above the int16 range that a zero point of -32600 brings back into the
     * bytes (with mult 2^30 and shift 0 the result is dot / 2): saturating to int16 before
     * adding that zero point would lose them */
    {
        ti__qrq q;
        memset(&q, 0, sizeof q);
        q.mode = TI__QRQ_32;
        for (size_t c = 0; c < 40; c++) mult[c] = 1 << 30, shift[c] = 0;
        q.mult = mult, q.shift = shift, q.yo = -32600, q.lo = 0, q.hi = 255;
        for (size_t i = 0; i < 3; i++)
            for (size_t c = 0; c < 40; c++) dot[i * C + c] = (uint32_t)(2 * (32600 - 10 + (int)(i * 40 + c) * 2));
        memset(o1, 0, sizeof o1);
        memset(o2, 0, sizeof o2);
        for (size_t i = 0; i < 3; i++)
            for (size_t c = 0; c < 40; c++) o1[i * 40 + c] = (uint8_t)ti__qrq_one(&q, (int32_t)dot[i * C + c], c);
        ti__qrq_rows_avx2(3, dot, C, NULL, NULL, NULL, 40, mult, shift, 0, q.yo, q.lo, q.hi, o2, 40);
        TI_CHECK(memcmp(o1, o2, sizeof o1) == 0);
        TI_CHECK_EQ_INT(o1[100], 190); /* row 2, column 20: 32600 - 10 + 200 - 32600 */
    }
    /* the zero point's check: lo - yo or hi - yo outside int32 goes to the scalar code */
    ti__qrq zq;
    memset(&zq, 0, sizeof zq);
    zq.mode = TI__QRQ_32, zq.lo = 0, zq.hi = 255, zq.yo = 10;
    TI_CHECK(ti__qrq_bytes_ok(&zq));
    zq.yo = INT32_MIN; /* lo - yo = 2^31 */
    TI_CHECK(!ti__qrq_bytes_ok(&zq));
    zq.lo = -128, zq.hi = -2, zq.yo = INT32_MAX; /* hi - yo below INT32_MIN */
    TI_CHECK(!ti__qrq_bytes_ok(&zq));
    zq.lo = 5, zq.hi = 4, zq.yo = 0; /* an empty range */
    TI_CHECK(!ti__qrq_bytes_ok(&zq));
    /* the shifts' check: out of range anywhere, or the sign of the largest */
    shift[0] = -3, shift[1] = 0, shift[2] = -31;
    TI_CHECK_EQ_INT(ti__qrq_shifts(shift, 3), 0);
    shift[1] = 31;
    TI_CHECK_EQ_INT(ti__qrq_shifts(shift, 3), 1);
    shift[2] = -32;
    TI_CHECK_EQ_INT(ti__qrq_shifts(shift, 3), -1);
    shift[2] = 0, shift[0] = 32;
    TI_CHECK_EQ_INT(ti__qrq_shifts(shift, 3), -1);
    free(x);
    free(w);
    TI_CHECK_EQ_INT(bad, 0);
#endif
}

#if defined(TI__X86_SIMD) && defined(TI__X86_VNNI)
/* The 3 x 3 row kernel as tfl_conv.c runs it, against a plain loop: np (1..40) pixels of one
 * output row at stride 1 or 2, n (1..80) channels in blocks of 32 on the row layout
 * (ti__dwq_wprep_rows_vnni), each kernel row in the input or (one time in four) a row of the
 * input's zero point read with column step 0, 0-2 padded columns before the input's and
 * (one time in three) padding after a random number of them, plus the input offset's share
 * of the sums; zero points at the ends of their range, extreme values one time in seven. The
 * sums must equal sum (x + xo) (w + wo) modulo 2^32 (padding: x = -xo); each input row holds
 * its columns only (ASan sees a read past them). Returns 1 when they differ. */
static int dw_row_case(int u8) {
    enum { RC = 80, RP = 40, LDA = 96 };
    size_t n = 1 + urand() % RC, np = 1 + urand() % RP;
    int s2 = (int)(urand() % 2);
    size_t cols = (s2 ? 2 : 1) * (np - 1) + 3; /* of the windows, padding included */
    size_t lc = urand() % 3, nv = cols - lc; /* lc padded, then nv of the input's */
    if (urand() % 3 == 0) nv = urand() % (nv + 1);
    int32_t xo = -zp_extreme(u8), wo = u8 ? -zp_extreme(1) : 0;
    if (u8 && wo == 0) wo = -1; /* bo = 128 + wo must fit a byte (else no VNNI pack) */
    int32_t bo = u8 ? 128 + wo : wo, ao = u8 ? xo : xo - 128;
    uint8_t flip = u8 ? 0 : 0x80;
    unsigned char *rows[3], pad[RC + 32], w[9 * RC];
    int8_t wr[3 * TI__DWQ_ROW_BYTES];
    uint32_t want[RP * RC], *acc = (uint32_t *)malloc(RP * LDA * sizeof(uint32_t)), ks[RC];
    size_t cs[3], woff[9];
    int extreme = urand() % 7 == 0;
    memset(pad, (unsigned char)(-xo), sizeof pad);
    for (size_t i = 0; i < sizeof w; i++) w[i] = extreme ? (u8 ? 0 : 0x80) : (unsigned char)urand();
    for (int fy = 0; fy < 3; fy++) {
        rows[fy] = (unsigned char *)malloc(nv * n + 1);
        for (size_t i = 0; i < nv * n; i++)
            rows[fy][i] = extreme ? (u8 ? 255 : 0x80) : (unsigned char)urand();
    }
    for (size_t t = 0; t < 9; t++) woff[t] = t * RC;
    const unsigned char *r[3];
    for (int fy = 0; fy < 3; fy++) {
        int in = urand() % 4 != 0;
        r[fy] = in ? rows[fy] : pad;
        cs[fy] = in ? n : 0;
    }
    for (size_t c = 0; c < n; c++) {
        uint32_t sw = 0;
        for (size_t t = 0; t < 9; t++) {
            unsigned char q = w[woff[t] + c];
            sw += (uint32_t)((u8 ? (int32_t)q : (int32_t)(signed char)q) + wo);
        }
        ks[c] = sw * (uint32_t)ao;
    }
    for (size_t p = 0; p < np; p++)
        for (size_t c = 0; c < n; c++) {
            uint32_t s = 0;
            for (size_t t = 0; t < 9; t++) {
                size_t i = (s2 ? 2 : 1) * p + t % 3; /* the window's column */
                unsigned char v = i >= lc && i - lc < nv ? r[t / 3][(i - lc) * cs[t / 3] + c]
                                                         : pad[c];
                unsigned char q = w[woff[t] + c];
                s += (uint32_t)((u8 ? (int32_t)v : (int32_t)(signed char)v) + xo) *
                     (uint32_t)((u8 ? (int32_t)q : (int32_t)(signed char)q) + wo);
            }
            want[p * RC + c] = s;
        }
    for (size_t i = 0; i < RP * LDA; i++) acc[i] = 12345u;
    for (size_t c0 = 0; c0 < n; c0 += 32) {
        size_t cn = n - c0 < 32 ? n - c0 : 32;
        const unsigned char *rb[3] = {r[0] + c0, r[1] + c0, r[2] + c0};
        ti__dwq_wprep_rows_vnni(u8, wr + c0 / 32 * TI__DWQ_ROW_BYTES, w + c0, woff, cn, wo);
        ti__dwq_row3_vnni(acc + c0, LDA, rb, cs, np, s2, lc, nv, pad + c0,
                          wr + c0 / 32 * TI__DWQ_ROW_BYTES, cn, flip, bo);
    }
    int bad = 0;
    for (size_t p = 0; p < np; p++)
        for (size_t c = 0; c < n; c++) bad |= acc[p * LDA + c] + ks[c] != want[p * RC + c];
    if (bad)
        printf("  depthwise row: %zu pixels, stride %d, %zu channels, columns %zu + %zu, %s: "
               "differs\n", np, s2 + 1, n, lc, nv, u8 ? "u8" : "i8");
    /* The same windows requantized in the kernel (ti__dwq_row3_rq_vnni) against rows8 on
     * the sums: per-channel multipliers and right shifts (a quarter of the channels 2^30,
     * whose sums land exactly on the roundings' ties one time in 2^(rs + 1): the lanes the
     * float path hands to the integer chain), a bias, a zero point and clamp of the output
     * type; bytes past n untouched. */
    int32_t bias[RC], colc[RC], mult[RC], shift[RC];
    int32_t yo = u8 ? (int32_t)(urand() % 256) : (int32_t)(urand() % 256) - 128;
    int32_t lo = u8 ? (urand() % 2 ? 0 : yo) : -128, hi = u8 ? 255 : (urand() % 2 ? 127 : yo);
    uint8_t got[RP * LDA], ref[RP * LDA];
    for (size_t c = 0; c < n; c++) {
        bias[c] = (int32_t)(urand() % 20001) - 10000;
        colc[c] = (int32_t)((uint32_t)bias[c] + ks[c]);
        mult[c] = urand() % 4 == 0 ? 1 << 30 : (int32_t)(0x40000000u + urand() % 0x40000000u);
        shift[c] = -(int32_t)(8 + urand() % 6);
    }
    memset(got, 0xA5, sizeof got);
    memset(ref, 0xA5, sizeof ref);
    int fused = 1;
    for (size_t c0 = 0; c0 < n; c0 += 32) {
        size_t cn = n - c0 < 32 ? n - c0 : 32;
        const unsigned char *rb[3] = {r[0] + c0, r[1] + c0, r[2] + c0};
        ti__dwq_rq q;
        fused &= ti__dwq_rq_plan_vnni(&q, colc + c0, mult + c0, shift + c0, cn, yo, lo, hi);
        ti__dwq_row3_rq_vnni(got + c0, LDA, rb, cs, np, s2, lc, nv, pad + c0,
                             wr + c0 / 32 * TI__DWQ_ROW_BYTES, cn, flip, bo, &q);
    }
    fused &= ti__qg8_rows8_vnni(np, want, RC, bias, NULL, NULL, n, mult, shift, yo, lo, hi, ref,
                                LDA);
    if (!fused || memcmp(got, ref, sizeof got) != 0) {
        printf("  depthwise row requantized: %zu pixels, stride %d, %zu channels, %s: %s\n", np,
               s2 + 1, n, u8 ? "u8" : "i8", fused ? "differs" : "refused");
        bad = 1;
    }
    for (int fy = 0; fy < 3; fy++) free(rows[fy]);
    free(acc);
    return bad;
}

/* ti__dwq_rq_plan_vnni refuses what its float path cannot take: a shift that is not a right
 * shift of 1 to 31 or a negative multiplier in any of the n channels (past n: ignored), a
 * zero point more than 256 from 0 (ti__qv_pack_ok). Returns the number of wrong answers. */
static int dw_rq_plan_refusals(void) {
    int32_t colc[32] = {0}, mult[32], shift[32];
    ti__dwq_rq q;
    int wrong = 0;
    for (int c = 0; c < 32; c++) mult[c] = 1 << 30, shift[c] = -5;
    wrong += ti__dwq_rq_plan_vnni(&q, colc, mult, shift, 32, 0, -128, 127) != 1;
    wrong += ti__dwq_rq_plan_vnni(&q, colc, mult, shift, 32, 300, 0, 255) != 0;
    for (int c = 0; c < 32; c += 7) {
        shift[c] = 0;
        wrong += ti__dwq_rq_plan_vnni(&q, colc, mult, shift, 32, 0, -128, 127) != 0;
        wrong += ti__dwq_rq_plan_vnni(&q, colc, mult, shift, (size_t)c, 0, -128, 127) != (c > 0);
        shift[c] = -32;
        wrong += ti__dwq_rq_plan_vnni(&q, colc, mult, shift, 32, 0, -128, 127) != 0;
        shift[c] = -5;
        mult[c] = -1;
        wrong += ti__dwq_rq_plan_vnni(&q, colc, mult, shift, 32, 0, -128, 127) != 0;
        mult[c] = 1 << 30;
    }
    if (wrong) printf("  ti__dwq_rq_plan_vnni: %d wrong answers\n", wrong);
    return wrong;
}
#endif

/* The byte path's helpers against plain loops: the depthwise pixels (on weights in quads of
 * taps, and all taps in registers) against ti__dwq_tap_avx2 tap after tap, the 3 x 3 row
 * kernel (dw_row_case), and the flipping copy with its byte sum. */
TI_TEST(vnni_helpers_match_plain_loops) {
#if defined(TI__X86_SIMD) && defined(TI__X86_VNNI)
    if (ti__cpu_isa_best() < TI__ISA_AVX512VNNI) {
        TI_SKIP("this CPU has no AVX512-VNNI");
        return;
    }
    enum { C = DW_C, T = DW_T };
    unsigned char *x = (unsigned char *)malloc(C * T), *w = (unsigned char *)malloc(C * T);
    unsigned char d1[C], d2[C];
    int bad = 0;
    for (int r = 0; r < 300; r++) {
        size_t n;
        int u8 = r & 1;
        bad += dw_pixel_case(u8, dw_pix_vnni, x, w, &n);
        bad += dw_pixel_case(u8, ti__dwq_pixel_avx512, x, w, &n);
        bad += dw_row_case(u8);
        if (r == 0) bad += dw_rq_plan_refusals();
        uint8_t flip = u8 ? 0 : 0x80;
        uint32_t sum = 0;
        memset(d1, 7, sizeof d1);
        memset(d2, 7, sizeof d2);
        for (size_t i = 0; i < n; i++) sum += d1[i] = (unsigned char)(x[i] ^ flip);
        if (ti__qg8_copy_vnni(d2, x, n, flip) != sum || memcmp(d1, d2, sizeof d1) != 0)
            if (bad++ == 0) printf("  copy of %zu bytes: differs\n", n);
    }
    free(x);
    free(w);
    TI_CHECK_EQ_INT(bad, 0);
    TI_CHECK_EQ_INT(dw_pair_bad, 0);
#endif
}

/* The byte path's flipping copy (ti__qg8_copy: AVX-512 or NEON) against a plain loop: the
 * bytes written, the bytes around them left alone, and the sum modulo 2^32. */
/* The byte path's requantization of rows (ti__qg8_rows8_vnni) on edge values against
 * ti__qrq_one: sums at and next to +-2^k and the halves between (the ties of both roundings),
 * INT32_MIN / INT32_MAX; every shift -31..31; multipliers at their ends, negative ones
 * included (INT32_MIN must be refused); the byte ranges of uint8 and int8 with zero points at
 * their ends and a fused ReLU6-like clamp, and zero points that take the float path without
 * the 64-column packing (|yo| > 256) or leave it (|lo - yo| > 512); the column and row terms
 * 0, then random (the sums wrap). 140 columns: two packed blocks of 64 and a tail of 12. */
TI_TEST(rows8_requant_edges_match_scalar) {
#if defined(TI__X86_SIMD) && defined(TI__X86_VNNI)
    if (ti__cpu_isa_best() < TI__ISA_AVX512VNNI) {
        TI_SKIP("this CPU has no AVX512-VNNI");
        return;
    }
    enum { NC = 140, NR = 8 };
    static const int32_t yos[][3] = {{-128, -128, 127}, {0, 0, 255}, {200, 0, 255}, {127, -128, 127},
                                     {-7, -100, 100}, {255, 0, 255}, {-128, -128, -90},
                                     {300, 0, 255}, {-300, -128, 127}, {1000, 0, 255}};
    int64_t xs[EDGE_N];
    edge_sums(xs);
    uint32_t dot[NR * NC];
    int32_t mult[NC], shift[NC], colc[NC], rowv[NR];
    uint8_t o1[NR * NC], o2[NR * NC];
    int bad = 0;
    for (int terms = 0; terms < 2; terms++)
        for (size_t mi = 0; mi < sizeof edge_ms / sizeof edge_ms[0]; mi++)
            for (int sh = -31; sh <= 31; sh++)
                for (size_t z = 0; z < sizeof yos / sizeof yos[0]; z++) {
                    ti__qrq q = edge_qrq(mult, shift, yos[z]);
                    for (size_t c = 0; c < NC; c++) {
                        mult[c] = edge_ms[(mi + c * terms) % (sizeof edge_ms / sizeof edge_ms[0])];
                        shift[c] = terms ? (int32_t)(urand() % 63) - 31 : sh;
                        colc[c] = terms ? (int32_t)(urand() * 2654435761u) : 0;
                    }
                    for (size_t r = 0; r < NR; r++) rowv[r] = terms ? (int32_t)(urand() % 20001) - 10000 : 0;
                    for (size_t i = 0; i < NR * NC; i++)
                        dot[i] = (uint32_t)(int32_t)xs[(i + (size_t)sh + 31) % EDGE_N];
                    for (size_t r = 0; r < NR; r++)
                        for (size_t c = 0; c < NC; c++) {
                            uint32_t v = dot[r * NC + c] + (uint32_t)colc[c] + (uint32_t)rowv[r];
                            o1[r * NC + c] = (uint8_t)ti__qrq_one(&q, (int32_t)v, c);
                        }
                    memset(o2, 0xA5, sizeof o2);
                    int imin = 0; /* refused, and only then: the caller goes row by row */
                    for (size_t c = 0; c < NC; c++) imin |= mult[c] == INT32_MIN;
                    int done = ti__qg8_rows8_vnni(NR, dot, NC, colc, NULL, rowv, NC, mult, shift,
                                                  q.yo, q.lo, q.hi, o2, NC);
                    TI_CHECK_EQ_INT(done, !imin);
                    if (!done) continue;
                    for (size_t i = 0; i < NR * NC; i++)
                        if (o1[i] != o2[i] && bad++ < 5)
                            printf("  sum %u mult %d shift %d yo %d [%d, %d]: %d, scalar %d\n",
                                   dot[i] + (uint32_t)colc[i % NC] + (uint32_t)rowv[i / NC], mult[i % NC],
                                   shift[i % NC], q.yo, q.lo, q.hi, o2[i], o1[i]);
                }
    TI_CHECK_EQ_INT(bad, 0);
#endif
}

/* ti__qg8_rows8_vnni's float path where it is hardest: sums next to the points where TFLite's
 * result steps (t* = vm 2^-(31 + rs) +- 2^-(rs + 1) at a half-integer: v = (k + 1/2 -+ 2^-(rs
 * + 1)) 2^(31 + rs) / m, rounded, and its neighbours), for outputs k across the int8 and
 * uint8 ranges and a little past them, every right shift 1..31, multipliers from 0 to
 * INT32_MAX, widths 1..140; against ti__qrq_one, byte for byte, and the bytes past the width
 * untouched. Those within 2^-12 of a step take the integer redo; the rest test the float
 * result's margin (with a margin of 2^-24 instead, this test fails). */
TI_TEST(rows8_requant_near_steps_match_scalar) {
#if defined(TI__X86_SIMD) && defined(TI__X86_VNNI)
    if (ti__cpu_isa_best() < TI__ISA_AVX512VNNI) {
        TI_SKIP("this CPU has no AVX512-VNNI");
        return;
    }
    enum { NC = 140, NR = 8, NV = NC * NR }; /* two packed blocks of 64 and a tail of 12 */
    static const int32_t yos[][3] = {{0, -128, 127}, {128, 0, 255}, {-20, -128, 127},
                                     {300, 0, 255}};
    static const int32_t ms[] = {0,          1,          977,       1 << 30, (1 << 30) + 1,
                                 1518500250, 2038453294, INT32_MAX};
    uint32_t dot[NV];
    int32_t mult[NC], shift[NC], colc[NC] = {0}, rowv[NR] = {0};
    uint8_t o1[NV], o2[NV];
    int bad = 0;
    long checked = 0;
    for (int rs = 1; rs <= 31; rs++)
        for (size_t mi = 0; mi < sizeof ms / sizeof ms[0]; mi++) {
            /* every other pass with the program's rounding mode toward zero: the kernel's
             * float steps round to nearest whatever MXCSR says */
            fesetround((rs + (int)mi) % 2 ? FE_TOWARDZERO : FE_TONEAREST);
            for (size_t z = 0; z < sizeof yos / sizeof yos[0]; z++) {
                ti__qrq q = edge_qrq(mult, shift, yos[z]);
                /* one multiplier and shift per call (a random one on every third column) */
                for (size_t c = 0; c < NC; c++) {
                    mult[c] = c % 3 == 2 ? (int32_t)(urand() & 0x7fffffff) : ms[mi];
                    shift[c] = -rs;
                }
                size_t nv = 0;
                while (nv < NV) {
                    size_t c = nv % NC;
                    double m = mult[c] > 0 ? (double)mult[c] : 1.0;
                    int k = (int)(urand() % 601) - 300;
                    double sg = k > 0 ? -1.0 : 1.0; /* the side of 0 the step's sums are on */
                    double t = ((double)k - 0.5 + sg * ldexp(1.0, -(rs + 1))) *
                               ldexp(1.0, 31 + rs) / m;
                    t = floor(t + 0.5) + (double)((int)(urand() % 5) - 2);
                    if (t > 2147483647.0 || t < -2147483648.0)
                        t = (double)(int32_t)(urand() * 2654435761u);
                    dot[nv++] = (uint32_t)(int32_t)t;
                }
                /* every width from 1 to NC over the calls: whole and partial blocks of 64 and
                 * vectors of 16; nothing written past it */
                size_t nc = 1 + (size_t)(rs * 8 + (int)mi * 4 + (int)z) % NC;
                for (size_t i = 0; i < NV; i++)
                    o1[i] = i % NC < nc ? (uint8_t)ti__qrq_one(&q, (int32_t)dot[i], i % NC) : 0xA5;
                memset(o2, 0xA5, sizeof o2);
                TI_CHECK_EQ_INT(ti__qg8_rows8_vnni(NR, dot, NC, colc, NULL, rowv, nc, mult, shift,
                                                   q.yo, q.lo, q.hi, o2, NC), 1);
                for (size_t i = 0; i < NV; i++, checked++)
                    if (o1[i] != o2[i] && bad++ < 5)
                        printf("  sum %d mult %d shift %d yo %d: %d, scalar %d\n", (int32_t)dot[i],
                               mult[i % NC], shift[i % NC], q.yo, o2[i], o1[i]);
            }
        }
    fesetround(FE_TONEAREST);
    TI_CHECK(checked > 1000000);
    TI_CHECK_EQ_INT(bad, 0);
#endif
}

TI_TEST(byte_copy_matches_plain_loop) {
#ifdef TI__QG8
    if (ti__cpu_isa_best() < ISA_BYTES) {
        TI_SKIP("this CPU has no byte path");
        return;
    }
    enum { C = 300 };
    unsigned char x[C], d1[C + 2], d2[C + 2];
    int bad = 0;
    for (int r = 0; r < 400; r++) {
        size_t n = (size_t)(r < 40 ? r : (int)(urand() % C)), o = urand() % 2;
        uint8_t flip = r & 1 ? 0 : 0x80;
        for (size_t i = 0; i < C; i++) x[i] = r % 7 == 0 ? 0xff : (unsigned char)urand();
        memset(d1, 7, sizeof d1);
        memset(d2, 7, sizeof d2);
        uint32_t sum = 0;
        for (size_t i = 0; i < n; i++) sum += d1[o + i] = (unsigned char)(x[i] ^ flip);
        if (ti__qg8_copy(d2 + o, x, n, flip) != sum || memcmp(d1, d2, sizeof d1) != 0)
            if (bad++ == 0) printf("  copy of %zu bytes: differs\n", n);
    }
    TI_CHECK_EQ_INT(bad, 0);
#endif
}

/* The byte path's micro-kernels start their sums at init's column terms when not adding
 * (core/qgemm.c folds the column terms in there): the sums with init minus those without
 * are init, column by column, for one and two blocks of 16; adding ignores init; columns
 * past 16 * nb stay untouched. */
TI_TEST(byte_micro_starts_at_init) {
#ifdef TI__QG8
    const ti__qg8_isa *isa = ti__qg8_isa_now();
    if (isa == NULL) {
        TI_SKIP("this CPU has no byte path");
        return;
    }
    enum { KQ = 40, LDI = 48 };
    static uint8_t a[8 * KQ * 4];
    static int8_t b[2 * KQ * 64];
    uint32_t acc0[8 * LDI], acc1[8 * LDI], acc2[8 * LDI];
    int32_t init[32];
    int bad = 0;
    for (int r = 0; r < 60; r++) {
        size_t kq = 1 + urand() % KQ;
        int nb = 1 + r % 2, i8 = isa->micro_i8 != NULL && r % 4 >= 2;
        for (size_t i = 0; i < sizeof a; i++) a[i] = (uint8_t)urand();
        for (size_t i = 0; i < sizeof b; i++) b[i] = (int8_t)urand();
        for (int c = 0; c < 32; c++) init[c] = (int32_t)urand();
        memset(acc0, 0x5a, sizeof acc0);
        memset(acc1, 0x5a, sizeof acc1);
        if (i8) {
            isa->micro_i8(kq, a, kq * 4, b, KQ * 64, nb, acc0, LDI, NULL);
            isa->micro_i8(kq, a, kq * 4, b, KQ * 64, nb, acc1, LDI, init);
        } else {
            isa->micro(kq, a, kq * 4, b, KQ * 64, nb, acc0, LDI, 0, NULL);
            isa->micro(kq, a, kq * 4, b, KQ * 64, nb, acc1, LDI, 0, init);
        }
        memcpy(acc2, acc1, sizeof acc2);
        isa->micro(kq, a, kq * 4, b, KQ * 64, nb, acc2, LDI, 1, init); /* adds: init unused */
        for (int row = 0; row < 8; row++)
            for (int c = 0; c < LDI; c++) {
                size_t o = (size_t)row * LDI + (size_t)c;
                int ok = c < 16 * nb ? acc1[o] == acc0[o] + (uint32_t)init[c] &&
                                           (i8 || acc2[o] == acc1[o] + acc0[o])
                                     : acc1[o] == 0x5a5a5a5au;
                if (!ok && bad++ == 0)
                    printf("  kq %zu nb %d %s: row %d column %d differs\n", kq, nb,
                           i8 ? "int8 rows" : "uint8 rows", row, c);
            }
    }
    TI_CHECK_EQ_INT(bad, 0);
#endif
}

/* The micro-kernel that requantizes in its registers (x86 VNNI) against the storing one
 * followed by rows8: random bytes, column terms, row terms, multipliers and right shifts,
 * zero points and clamp ranges (uint8 and int8), 1..16 and 17..32 columns, 1..8 rows, A as
 * uint8 and int8 rows; bytes past the columns and rows untouched. Some 2^18 lanes, so rows
 * with a lane near a rounding step (about one in 64) take the kernel's integer path too
 * (reading the second block's multipliers for the first block's there fails it). */
TI_TEST(byte_micro_rq_matches_rows8) {
#ifdef TI__QG8
    const ti__qg8_isa *isa = ti__qg8_isa_now();
    if (isa == NULL || isa->micro_rq == NULL) {
        TI_SKIP("this CPU's byte path has no requantizing micro-kernel");
        return;
    }
    enum { KQ = 24, LDO = 40 };
    static uint8_t a[8 * KQ * 4];
    static int8_t b[2 * KQ * 64];
    uint32_t acc[8 * 32];
    int32_t colc[32], csum[32], bias[32], mult[32], shift[32], row[8];
    float fs[32], fe[32];
    uint8_t o1[8 * LDO], o2[8 * LDO];
    int bad = 0, planned = 0;
    for (int r = 0; r < 1200; r++) {
        size_t kq = 1 + urand() % KQ, nr = 1 + urand() % 8;
        int nb = 1 + r % 2, i8 = r % 4 >= 2, signed_out = r % 8 >= 4;
        size_t nc = nb == 1 ? 1 + urand() % 16 : 17 + urand() % 16;
        for (size_t i = 0; i < sizeof a; i++) a[i] = (uint8_t)urand();
        for (size_t i = 0; i < sizeof b; i++) b[i] = (int8_t)urand();
        for (int c = 0; c < 32; c++) {
            csum[c] = (int32_t)(urand() % 20000) - 10000;
            bias[c] = (int32_t)(urand() % 200000) - 100000;
            mult[c] = (int32_t)(urand() >> 1);
            shift[c] = -(int32_t)(1 + urand() % 12) - (r % 3 == 0 ? 0 : 6);
        }
        for (int i = 0; i < 8; i++) row[i] = (int32_t)(urand() % 4000) - 2000;
        int32_t yo = (int32_t)(urand() % 256) - (signed_out ? 128 : 0);
        int32_t lo = signed_out ? -128 : 0, hi = signed_out ? 127 : 255;
        if (r % 5 == 0) lo += 10, hi -= 20;
        const int32_t *rowp = r % 3 == 1 ? NULL : row;
        if (!isa->plan(nc, bias, csum, 3 - (int32_t)(r % 7), colc, mult, shift, yo, lo, hi, fs,
                       fe))
            continue;
        planned++;
        memset(o1, 0x33, sizeof o1);
        memset(o2, 0x33, sizeof o2);
        if (i8)
            isa->micro_i8(kq, a, kq * 4, b, KQ * 64, nb, acc, 32, colc);
        else
            isa->micro(kq, a, kq * 4, b, KQ * 64, nb, acc, 32, 0, colc);
        if (!isa->rows8(nr, acc, 32, NULL, NULL, rowp, nc, mult, shift, yo, lo, hi, o1, LDO)) {
            if (bad++ == 0) printf("  rows8 refused what the plan took\n");
            continue;
        }
        ti__qg8_rqt t = {fs, fe, mult, shift, yo, lo, hi};
        isa->micro_rq(kq, a, kq * 4, i8, b, KQ * 64, nb, colc, rowp, &t, nr, nc, o2, LDO);
        if (memcmp(o1, o2, sizeof o1) != 0 && bad++ == 0)
            printf("  kq %zu nb %d nc %zu rows %zu %s, %s out: differs\n", kq, nb, nc, nr,
                   i8 ? "int8" : "uint8", signed_out ? "int8" : "uint8");
    }
    TI_CHECK(planned > 1000);
    TI_CHECK_EQ_INT(bad, 0);
#endif
}

/* The tile path (AMX) against the VNNI micro-kernel that requantizes, byte for byte: 16 to
 * 64 rows, depths of one tile step (16 quads) and of several (up to 256 quads: 20 = 2 x 10,
 * 26 = 2 x 13, 36 = 3 x 12, 52 = 4 x 13, 240 = 15 x 16), columns 1..300 (one block of 16, an odd number of
 * them, many), int8 rows (TDPBSSD, its column terms + 128 sum b) and uint8 ones (TDPBUSD) with
 * row terms (their byte sums times a B offset) or none, uint8 and int8 outputs, clamps; A's rows wider than their depth. */
TI_TEST(amx_tiles_match_vnni) {
#ifdef TI__X86_AMX
    if (ti__cpu_isa_best() < TI__ISA_AMX) {
        TI_SKIP("this CPU or OS has no AMX (tiles of AMX-INT8)");
        return;
    }
    enum { NC = 300, KQ = 256, LDA = KQ * 4 + 12, NR = 64 };
    static const size_t kqs[] = {1, 15, 16, 17, 20, 24, 26, 36, 40, 52, 64, 240, 256};
    static uint8_t a[NR * LDA], o1[NR * NC], o2[NR * NC];
    static int8_t b[(NC + 15) / 16 * KQ * 64];
    int32_t colc[NC + 32], ini[NC + 32], csum[NC], bias[NC], mult[NC], shift[NC], row[NR];
    float fs[NC + 16], fe[NC + 16];
    int bad = 0, ran = 0;
    for (int r = 0; r < 200; r++) {
        size_t kq = kqs[r % (sizeof kqs / sizeof kqs[0])], sq = ti__qg8_amx_step(kq);
        size_t nr = 16 * (1 + urand() % 4), nc = r % 5 == 0 ? 16 : 1 + urand() % NC;
        size_t nblk = (nc + 15) / 16, bs = kq * 64;
        int i8 = r % 4 >= 2, signed_out = r % 8 >= 4;
        if (kq < 16 || kq == 17) {
            TI_CHECK_EQ_INT((int)sq, 0); /* depth under 64, or steps of 1 quad: refused */
            continue;
        }
        TI_CHECK(sq >= 1 && sq <= 16 && kq % sq == 0);
        for (size_t i = 0; i < sizeof a; i++) a[i] = (uint8_t)urand();
        memset(b, 0, sizeof b);
        for (size_t j = 0; j < nblk; j++) /* packed blocks, 0 past the last column */
            for (size_t p = 0; p < kq; p++)
                for (size_t c = 0; c < 16 && j * 16 + c < nc; c++)
                    for (size_t u = 0; u < 4; u++)
                        b[j * bs + p * 64 + c * 4 + u] = (int8_t)urand();
        if (r % 6 == 5) /* extreme bytes */
            for (size_t i = 0; i < sizeof a; i++) a[i] = i8 ? 0x80 : 0xff;
        for (size_t c = 0; c < NC; c++) {
            csum[c] = (int32_t)(urand() % 20000) - 10000;
            bias[c] = (int32_t)(urand() % 200000) - 100000;
            mult[c] = (int32_t)(urand() >> 1);
            shift[c] = -(int32_t)(1 + urand() % 12) - (r % 3 == 0 ? 0 : 6);
        }
        /* uint8 rows' terms: their bytes' sum times one B offset (TFLite's uint8 weights) */
        int32_t rowm = !i8 && r % 3 != 1 ? (int32_t)(urand() % 255) - 127 : 0;
        for (size_t i = 0; i < NR; i++) {
            uint32_t sa = 0;
            for (size_t k = 0; k < kq * 4; k++) sa += a[i * LDA + k];
            row[i] = (int32_t)(sa * (uint32_t)rowm);
        }
        int32_t yo = (int32_t)(urand() % 256) - (signed_out ? 128 : 0);
        int32_t lo = signed_out ? -128 : 0, hi = signed_out ? 127 : 255;
        if (r % 5 == 0) lo += 10, hi -= 20;
        const int32_t *rowp = rowm != 0 ? row : NULL;
        if (!ti__qg8_plan_vnni(nc, bias, csum, 3 - (int32_t)(r % 7), colc, mult, shift, yo, lo,
                               hi, fs, fe))
            continue;
        ran++;
        /* the int8 rows' terms: + 128 * sum over k of b (the VNNI kernel reads a + 128) */
        for (size_t c = 0; c < (nc + 31) / 32 * 32; c++) {
            uint32_t sb = 0;
            for (size_t p = 0; c < nc && p < kq; p++)
                for (size_t u = 0; u < 4; u++) sb += (uint32_t)(int32_t)b[c / 16 * bs + p * 64 + c % 16 * 4 + u];
            ini[c] = c >= nc ? 0 : i8 ? (int32_t)((uint32_t)colc[c] + 128u * sb) : colc[c];
        }
        memset(o1, 0x33, sizeof o1);
        memset(o2, 0x33, sizeof o2);
        for (size_t r0 = 0; r0 < nr; r0 += 8)
            for (size_t j = 0; j < nblk; j += 2) {
                ti__qg8_rqt t = {fs + j * 16, fe + j * 16, mult + j * 16, shift + j * 16, yo, lo, hi};
                ti__qg8_micro_rq_vnni(kq, a + r0 * LDA, LDA, i8, b + j * bs, bs,
                                      nblk - j > 1 ? 2 : 1, colc + j * 16,
                                      rowp != NULL ? rowp + r0 : NULL, &t, 8,
                                      TI__MIN(nc - j * 16, (size_t)32), o1 + r0 * NC + j * 16, NC);
            }
        ti__qg8_rqt t = {fs, fe, mult, shift, yo, lo, hi};
        ti__qg8_amx_rq(nr, kq, sq, a, LDA, i8, b, bs, nc, ini, rowm, &t, o2, NC);
        if (memcmp(o1, o2, sizeof o1) != 0 && bad++ < 3)
            printf("  kq %zu (steps of %zu) nc %zu rows %zu %s, %s out: differs\n", kq, sq, nc,
                   nr, i8 ? "int8" : "uint8", signed_out ? "int8" : "uint8");
    }
    TI_CHECK(ran > 100);
    TI_CHECK_EQ_INT(bad, 0);
#endif
}

/* The AVX2 and AVX-512 lanes of the 8-bit ADD against the scalar vector-lane arithmetic of
 * ti__tfl_bin_q8: random tables (extremes included), multipliers, shifts 0..31, zero
 * points and clamp ranges, uint8 and int8 outputs. */
TI_TEST(add8_simd_matches_scalar) {
#if defined(TI__X86_SIMD)
    if (ti__cpu_isa_best() < TI__ISA_AVX2) {
        TI_SKIP("this CPU has no AVX2");
        return;
    }
    int vnni = 0;
#ifdef TI__X86_VNNI
    vnni = ti__cpu_isa_best() >= TI__ISA_AVX512VNNI;
#endif
    enum { N = 100 };
    static int32_t t1[256], t2[256];
    unsigned char a[N], b[N], y1[N], y2[N];
    int bad = 0;
    for (int r = 0; r < 500; r++) {
        for (int v = 0; v < 256; v++) {
            unsigned u = urand() % 8;
            t1[v] = u == 0 ? INT32_MIN : u == 1 ? INT32_MAX : (int32_t)(urand() * 2654435761u) >> (urand() % 12);
            t2[v] = u == 2 ? INT32_MIN : (int32_t)(urand() * 2246822519u) >> (urand() % 12);
        }
        for (int i = 0; i < N; i++) a[i] = (unsigned char)urand(), b[i] = (unsigned char)urand();
        int32_t mo = r % 9 == 0 ? INT32_MAX : (int32_t)((1u << 30) + urand() % (1u << 30));
        int e = (int)(urand() % 32), u8 = r & 1;
        int32_t off = (int32_t)(urand() % 256) - (u8 ? 0 : 128);
        if (r % 7 == 0) off = (int32_t)(urand() % 70000) - 35000; /* the int16 wrap */
        int32_t lo = (u8 ? 0 : -128) + (int32_t)(urand() % 30), hi = (u8 ? 255 : 127) - (int32_t)(urand() % 30);
        size_t n = (size_t)(urand() % N);
        memset(y1, 0x5a, N);
        memset(y2, 0x5a, N);
        /* AVX2 on even rounds, AVX-512 (where the CPU has it) on odd ones */
        size_t lanes = 8, done = 0;
#ifdef TI__X86_VNNI
        if (vnni && (r & 2)) {
            lanes = 16;
            done = ti__tfl_add8_avx512(a, b, y2, n, t1, t2, mo, e, off, u8, lo, hi);
        }
#endif
        if (lanes == 8) done = ti__tfl_add8_avx2(a, b, y2, n, t1, t2, mo, e, off, u8, lo, hi);
        for (size_t i = 0; i < done; i++) {
            int32_t q = ti__q_rdbypot(ti__q_srdhm(ti__tfl_wadd(t1[a[i]], t2[b[i]]), mo), e);
            int16_t s16 = (int16_t)(uint16_t)((uint32_t)q + (uint32_t)off);
            y1[i] = (unsigned char)ti__tfl_clamp(ti__tfl_clamp(s16, u8 ? 0 : -128, u8 ? 255 : 127), lo, hi);
        }
        if (done != n - n % lanes || memcmp(y1, y2, N) != 0) bad++;
    }
    (void)vnni;
    TI_CHECK_EQ_INT(bad, 0);
#endif
}

/* The 8-bit ADD 64 lanes at a time on AVX512-VBMI (ti__tfl_add8v_avx512: terms looked up in
 * byte planes, the sum requantized in float) against the scalar vector-lane arithmetic:
 * tables whose sums stay inside its bound (extremes of the bound included), multipliers at
 * 2^30 one time in three (sums then land on the roundings' ties one time in 2^(e + 1): the
 * lanes redone in integers), every shift 1..12, zero points and clamps of both types,
 * lengths to 300; the bytes past the 64-blocks untouched. Then what it must refuse (returns
 * 0, writes nothing): a sum bound over 1000, shift 0, a negative multiplier, a zero point
 * past 256, a clamp range outside the type's. */
#if defined(TI__X86_SIMD) && defined(TI__X86_VNNI)
/* the VBMI lanes as the ADD runs them: planes made (or refused: 0 done), then the lanes */
static size_t add8v(const unsigned char *a, const unsigned char *b, unsigned char *y, size_t n,
                    const int32_t *t1, const int32_t *t2, int32_t mo, int e, int32_t off, int u8,
                    int32_t lo, int32_t hi) {
    static uint8_t pl[2 * 4 * 256];
    if (!ti__tfl_add8v_prep_avx512(pl, t1, t2, mo, e, off, u8, lo, hi)) return 0;
    return ti__tfl_add8v_avx512(a, b, y, n, pl, mo, e, off, u8, lo, hi);
}
#endif
TI_TEST(add8_vbmi_matches_scalar) {
#if defined(TI__X86_SIMD) && defined(TI__X86_VNNI)
    if (!ti__cpu_vbmi()) {
        TI_SKIP("this CPU has no AVX512-VBMI (or the ISA in effect is below AVX512VNNI)");
        return;
    }
    enum { N = 300 };
    static int32_t t1[256], t2[256];
    unsigned char a[N], b[N], y1[N], y2[N];
    int bad = 0, taken = 0;
    for (int r = 0; r < 600; r++) {
        int32_t mo = r % 3 == 0 ? 1 << 30 : (int32_t)((1u << 30) + urand() % (1u << 30));
        int e = 1 + (int)(urand() % 12), u8 = r & 1;
        /* each table within lim: the two sums' bound at most 1000 */
        double lim = 499.0 * 2147483648.0 * (double)(1u << e) / (double)mo;
        for (int v = 0; v < 256; v++) {
            unsigned u = urand() % 16;
            double f = u == 0 ? 1.0 : u == 1 ? -1.0 : ((double)(urand() % 20001) - 10000.0) / 10000.0;
            t1[v] = (int32_t)(f * lim);
            t2[v] = (int32_t)(((double)(urand() % 20001) - 10000.0) / 10000.0 * lim);
        }
        for (int i = 0; i < N; i++) a[i] = (unsigned char)urand(), b[i] = (unsigned char)urand();
        int32_t off = (int32_t)(urand() % 256) - (u8 ? 0 : 128);
        int32_t lo = (u8 ? 0 : -128) + (int32_t)(urand() % 30), hi = (u8 ? 255 : 127) - (int32_t)(urand() % 30);
        if (r % 5 == 0) lo -= 40, hi += 40; /* wider than the type: the type's clamp decides */
        size_t n = (size_t)(urand() % (N + 1));
        memset(y1, 0x5a, N);
        memset(y2, 0x5a, N);
        size_t done = add8v(a, b, y2, n, t1, t2, mo, e, off, u8, lo, hi);
        taken += done > 0;
        for (size_t i = 0; i < done; i++) {
            int32_t q = ti__q_rdbypot(ti__q_srdhm(ti__tfl_wadd(t1[a[i]], t2[b[i]]), mo), e);
            int16_t s16 = (int16_t)(uint16_t)((uint32_t)q + (uint32_t)off);
            y1[i] = (unsigned char)ti__tfl_clamp(ti__tfl_clamp(s16, u8 ? 0 : -128, u8 ? 255 : 127), lo, hi);
        }
        if (done != n - n % 64 || memcmp(y1, y2, N) != 0) {
            if (bad++ == 0)
                printf("  %zu elements (%zu done), mo %d, shift %d, %s: differs\n", n, done, (int)mo,
                       e, u8 ? "u8" : "i8");
        }
    }
    TI_CHECK(taken > 400);
    /* refusals, on tables of 1000 / 2000 steps */
    int32_t mo = 1 << 30;
    for (int v = 0; v < 256; v++) t1[v] = v * 4, t2[v] = -v * 4;
    memset(y2, 0x5a, N);
    int wrong = add8v(a, b, y2, N, t1, t2, mo, 1, 0, 1, 0, 255) != N - N % 64;
    t1[17] = 2 * 2001 + 4; /* (4006 + 1020) / 4: past the bound */
    wrong += add8v(a, b, y1, N, t1, t2, mo, 1, 0, 1, 0, 255) != 0;
    t1[17] = 0;
    wrong += add8v(a, b, y1, N, t1, t2, mo, 0, 0, 1, 0, 255) != 0;
    wrong += add8v(a, b, y1, N, t1, t2, -mo, 1, 0, 1, 0, 255) != 0;
    wrong += add8v(a, b, y1, N, t1, t2, mo, 1, 257, 1, 0, 255) != 0;
    wrong += add8v(a, b, y1, N, t1, t2, mo, 1, 0, 0, 128, 255) != 0;
    wrong += add8v(a, b, y1, 63, t1, t2, mo, 1, 0, 1, 0, 255) != 0;
    TI_CHECK_EQ_INT(wrong, 0);
    TI_CHECK_EQ_INT(bad, 0);
#endif
}

/* The ADD kernel takes the VBMI lanes (add_v) for the conformance models' 8-bit ADDs where
 * the CPU has VBMI, but for the generic broadcast, which TFLite's reference loop computes: a
 * speed switch, so no output comparison fails when it is never set. The OpenCL ADD's set-up
 * (cpu 0) builds no planes. The job is planned once, and a run's copy of it (at any
 * alignment) has the planes, tables and the run's tensors. */
TI_TEST(add8_models_take_vbmi_lanes) {
    static const char *cases[] = {"add_int8_same_relu", "add_uint8_same_relu", "add_int8_bcast"};
    static ti__tfl_bjob j;
    int vbmi = 0, ran = 0, taken = 0;
#if defined(TI__X86_SIMD) && defined(TI__X86_VNNI)
    vbmi = ti__cpu_vbmi();
#endif
    for (int c = 0; c < 3; c++) {
        char path[256];
        snprintf(path, sizeof path, TFL_DIR "%s/model.tflite", cases[c]);
        ti_error err;
        ti_model *m = ti_model_load_file(path, NULL, &err);
        if (!m) printf("  %s: %s\n", path, err.message);
        TI_REQUIRE(m != NULL);
        ti_session_desc sd;
        memset(&sd, 0, sizeof sd);
        sd.backend = TI_BACKEND_CPU;
        ti_session *s = ti_session_create(m, &sd, &err);
        TI_REQUIRE(s != NULL);
        for (int n = 0; n < s->n_nodes; n++) {
            if (strcmp(s->nodes[n].op, "ADD") != 0) continue;
            ti__kctx k;
            ti__kctx_init(s, &k, n, &err);
            TI_CHECK_EQ_INT(ti__tfl_bin_setup(&k, TI__TB_ADD, 1, &j), TI_OK);
            int want = vbmi && j.add_mode != TI__TFL_ADD_REF;
            TI_CHECK_EQ_INT(j.add_mode == TI__TFL_ADD_REF, c == 2);
            TI_CHECK_EQ_INT(j.add_v, want);
            taken += j.add_v;
            TI_CHECK_EQ_INT(ti__tfl_bin_setup(&k, TI__TB_ADD, 0, &j), TI_OK);
            TI_CHECK_EQ_INT(j.add_v, 0);
            ran++;
            /* planned once (ti__tfl_add_prepack); each run's copy finds the planes at its own
             * 64-byte boundary, wherever the copy lies */
            TI_CHECK_EQ_INT(s->nodes[n].packed_kind, TI__PACK_TFL_ADD);
            if (s->nodes[n].packed_kind != TI__PACK_TFL_ADD) continue;
            const ti__tfl_bjob *pj = (const ti__tfl_bjob *)s->nodes[n].packed;
            TI_CHECK_EQ_INT(pj->add_v, want);
            static uint64_t buf[sizeof(ti__tfl_bjob) / 8 + 16];
            unsigned char *base = (unsigned char *)buf + (64 - (uintptr_t)buf % 64) % 64;
            for (size_t off = 0; off < 64; off += 8) {
                ti__tfl_bjob *d = (ti__tfl_bjob *)(void *)(base + off);
                ti__tfl_add_unpack(&k, pj, d);
                TI_CHECK(memcmp(d->add_plm + ti__tfl_add_planes(d),
                                pj->add_plm + ti__tfl_add_planes(pj), 2 * 4 * 256) == 0);
                TI_CHECK(memcmp(d->t1, pj->t1, sizeof d->t1) == 0 && d->add_v == pj->add_v);
                TI_CHECK(d->b.in[0] == k.in[0]->data && d->b.in[1] == k.in[1]->data &&
                         d->b.out == k.out[0]->data);
            }
        }
        ti_session_destroy(s);
        ti_model_free(m);
    }
    TI_CHECK_EQ_INT(ran, 3);
    TI_CHECK_EQ_INT(taken, vbmi ? 2 : 0);
}

/* The AVX-512 ADD lanes with the input terms computed (ti__tfl_add8c_avx512) against the
 * same lanes on the terms tabulated by the scalar steps vshl(srdhm(vshl(x + off, pre), m),
 * post): TFLite's int8 elementwise form (pre 20 + shift, post 0) and its split form (pre 20,
 * post the shift), random zero points, multipliers (INT32_MAX included), output shifts and
 * clamps, uint8 and int8, every length to 100. */
TI_TEST(add8_computed_terms_match_tables) {
#if defined(TI__X86_SIMD) && defined(TI__X86_VNNI)
    if (ti__cpu_isa_best() < TI__ISA_AVX512VNNI) {
        TI_SKIP("this CPU has no AVX512-VNNI");
        return;
    }
    enum { N = 100 };
    static int32_t t1[256], t2[256];
    unsigned char a[N], b[N], y1[N], y2[N];
    int bad = 0;
    for (int r = 0; r < 600; r++) {
        int u8 = r & 1, split = (r >> 1) & 1;
        int32_t p[8];
        for (int q = 0; q < 2; q++) {
            int sh = -(int)(urand() % 32); /* the input's shift, right */
            /* minus the zero point: -255..0 for uint8, -127..128 for int8 */
            p[q] = u8 ? -(int32_t)(urand() % 256) : (int32_t)(urand() % 256) - 127;
            p[2 + q] = split ? 20 : 20 + sh;
            p[4 + q] = r % 11 == q ? INT32_MAX : (int32_t)((1u << 30) + urand() % (1u << 30));
            p[6 + q] = split ? sh : 0;
        }
        for (int v = 0; v < 256; v++) {
            int32_t raw = u8 ? v : (int32_t)(signed char)v;
            t1[v] = ti__tfl_vshl(ti__q_srdhm(ti__tfl_vshl(raw + p[0], p[2]), p[4]), p[6]);
            t2[v] = ti__tfl_vshl(ti__q_srdhm(ti__tfl_vshl(raw + p[1], p[3]), p[5]), p[7]);
        }
        for (int i = 0; i < N; i++) a[i] = (unsigned char)urand(), b[i] = (unsigned char)urand();
        int32_t mo = (int32_t)((1u << 30) + urand() % (1u << 30));
        int e = (int)(urand() % 32);
        int32_t off = (int32_t)(urand() % 256) - (u8 ? 0 : 128);
        int32_t lo = (u8 ? 0 : -128) + (int32_t)(urand() % 30);
        int32_t hi = (u8 ? 255 : 127) - (int32_t)(urand() % 30);
        size_t n = (size_t)(r % (N + 1));
        memset(y1, 0x5a, N);
        memset(y2, 0x5a, N);
        size_t d1 = ti__tfl_add8_avx512(a, b, y1, n, t1, t2, mo, e, off, u8, lo, hi);
        size_t d2 = ti__tfl_add8c_avx512(a, b, y2, n, p, mo, e, off, u8, lo, hi);
        if ((d1 != d2 || d2 != n - n % 16 || memcmp(y1, y2, N) != 0) && bad++ == 0)
            printf("  round %d (%s, %s): n %zu differs\n", r, u8 ? "uint8" : "int8",
                   split ? "split" : "elementwise", n);
    }
    TI_CHECK_EQ_INT(bad, 0);
#endif
}

/* Whether the ISA has the 8-bit GEMM's byte path (AVX512-VNNI, SDOT). */
static int has_byte_path(int isa) {
    int had = ti__cpu_isa(), has = ti__cpu_force_isa(isa) == isa && ti__qg8_isa_now() != NULL;
    ti__cpu_force_isa(had);
    return has;
}

/* Runs the model at path on a seeded random input with threads threads; the session is
 * created under ISA make_isa and run under run_isa (the packs made at planning serve every
 * ISA without the byte path; with it they hold B for that path alone, and a run under an
 * ISA without it fails, saying why: *st). Returns output 0's bytes (malloc), NULL when the
 * ISA is missing or the run failed. */
static unsigned char *model_out(ti_model *m, int make_isa, int run_isa, int threads, size_t *bytes,
                                ti_status *st, ti_error *err) {
    *st = TI_OK;
    if (ti__cpu_force_isa(make_isa) != make_isa || ti__cpu_force_isa(run_isa) != run_isa)
        return NULL;
    ti__cpu_force_isa(make_isa);
    ti_session_desc d;
    memset(&d, 0, sizeof d);
    d.backend = TI_BACKEND_CPU;
    d.num_threads = threads;
    ti_session *s = ti_session_create(m, &d, err);
    TI_CHECK(s != NULL);
    if (!s) return NULL;
    ti__cpu_force_isa(run_isa);
    ti_tensor *in = ti_session_input(s, 0);
    unsigned seed = 99u;
    for (size_t q = 0; q < in->size_bytes; q++) {
        seed = seed * 1664525u + 1013904223u;
        ((unsigned char *)in->data)[q] = (unsigned char)(seed >> 24);
    }
    *st = ti_session_run(s, err);
    if (*st != TI_OK) {
        ti_session_destroy(s);
        ti__cpu_force_isa(-1);
        return NULL;
    }
    const ti_tensor *out = ti_session_output(s, 0);
    unsigned char *o = (unsigned char *)malloc(out->size_bytes);
    memcpy(o, out->data, out->size_bytes);
    *bytes = out->size_bytes;
    ti_session_destroy(s);
    ti__cpu_force_isa(-1);
    return o;
}

/* A quantized MobileNet under each ISA, 1 and 2 threads, and planned under the best ISA
 * but run under each lower one: identical outputs. */
static void model_same_under_each_isa(const char *path) {
    ti_error err;
    ti_model *m = ti_model_load_file(path, NULL, &err);
    if (!m) {
        char why[160];
        snprintf(why, sizeof why, "%s not loadable", path);
        TI_SKIP(why);
        return;
    }
    int best = ti__cpu_isa_best();
    size_t ref_bytes = 0, bytes = 0;
    ti_status st;
    unsigned char *ref = model_out(m, TI__ISA_SCALAR, TI__ISA_SCALAR, 1, &ref_bytes, &st, &err);
    TI_CHECK(ref != NULL);
    for (int i = 0; i < NISA && ref != NULL; i++)
        for (int mode = 0; mode < 3; mode++) {
            int make = mode == 2 ? best : isas[i], threads = mode == 1 ? 2 : 1;
            unsigned char *o = model_out(m, make, isas[i], threads, &bytes, &st, &err);
            if (o == NULL && st == TI_OK) continue; /* the ISA is missing here */
            if (has_byte_path(make) && !has_byte_path(isas[i])) {
                /* B packed for the byte path alone: refused, saying why */
                printf("  planned under %s, run under %s: %s\n", ti__cpu_isa_name(make),
                       ti__cpu_isa_name(isas[i]), st == TI_OK ? "ran" : err.message);
                TI_CHECK(o == NULL && st == TI_ERR_UNSUPPORTED);
                if (st != TI_OK) TI_CHECK_STR_CONTAINS(err.message, "dot-product");
                free(o);
                continue;
            }
            TI_CHECK_EQ_INT(st, TI_OK);
            if (o == NULL) {
                printf("  planned under %s, run under %s: %s\n", ti__cpu_isa_name(make),
                       ti__cpu_isa_name(isas[i]), err.message);
                continue;
            }
            if (bytes != ref_bytes || memcmp(o, ref, ref_bytes) != 0)
                printf("  %s: planned under %s, run under %s, %d thread(s): differs from scalar\n",
                       path, ti__cpu_isa_name(make), ti__cpu_isa_name(isas[i]), threads);
            TI_CHECK(bytes == ref_bytes && memcmp(o, ref, ref_bytes) == 0);
            free(o);
        }
    free(ref);
    ti_model_free(m);
}

/* The bundled uint8 MobileNet (examples/data) and, where ../shared has it, the int8 one
 * (per-channel weights) of TensorFlow 2's post-training quantization. */
TI_TEST(quantized_model_same_under_each_isa) {
    model_same_under_each_isa("examples/data/mobilenet_v2_1.0_224_quant.tflite");
}
TI_TEST(int8_model_same_under_each_isa) {
    model_same_under_each_isa("../shared/models/coral/tf2_mobilenet_v2_1.0_224_ptq.tflite");
}

/* TFLite's int8 conv kernels ignore the weights' zero points, so a model with one that is not
 * 0 is refused at planning, naming the node and the channel (a run no longer checks them:
 * TI__WZP_CHECKED). One conformance model each for CONV_2D and DEPTHWISE_CONV_2D. */
/* The conv's weights in a one-conv model: the constant int8 value with n scales or more. */
static ti__value *int8_weights(ti_model *m, int n) {
    for (int i = 0; i < m->n_values; i++)
        if (m->values[i].is_const && m->values[i].dtype == TI_DTYPE_I8 &&
            m->values[i].quant.count >= n)
            return &m->values[i];
    return NULL;
}
static void weight_zero_point_refused(const char *path, int channel) {
    ti_error err;
    ti_model *m = ti_model_load_file(path, NULL, &err);
    if (!m) printf("  %s: %s\n", path, err.message);
    TI_REQUIRE(m != NULL);
    ti__value *w = int8_weights(m, channel + 1);
    TI_REQUIRE(w != NULL);
    const int64_t *saved = w->quant.zero_point;
    int64_t zp[64];
    TI_REQUIRE(w->quant.count <= 64);
    for (int c = 0; c < w->quant.count; c++) zp[c] = c == channel ? 3 : 0;
    w->quant.zero_point = zp;
    ti_session_desc sd;
    memset(&sd, 0, sizeof sd);
    sd.backend = TI_BACKEND_CPU;
    ti_session *s = ti_session_create(m, &sd, &err);
    char want[64];
    snprintf(want, sizeof want, "weights zero point 3 (channel %d) must be 0", channel);
    TI_CHECK(s == NULL);
    TI_CHECK_EQ_INT(err.code, TI_ERR_BAD_MODEL);
    TI_CHECK(strstr(err.message, want) != NULL);
    TI_CHECK(strstr(err.message, path) != NULL);
    if (s == NULL && strstr(err.message, want) == NULL) printf("  got: %s\n", err.message);
    ti_session_destroy(s);
    /* the control: the model's own zero points plan and run */
    w->quant.zero_point = saved;
    s = ti_session_create(m, &sd, &err);
    TI_CHECK(s != NULL);
    if (s != NULL) TI_CHECK_EQ_INT(ti_session_run(s, &err), TI_OK);
    ti_session_destroy(s);
    ti_model_free(m);
}
TI_TEST(int8_weight_zero_point_refused) {
    weight_zero_point_refused(TFL_DIR "conv_2d_int8_k3_s1_same_relu/model.tflite", 0);
    weight_zero_point_refused(TFL_DIR "conv_2d_int8_k3_s2_valid/model.tflite", 1);
    weight_zero_point_refused(TFL_DIR "depthwise_conv_2d_int8_m2_s2_valid/model.tflite", 1);
}

/* A depthwise conv with one channel's multiplier saturated (weight scale 1e12: the
 * multiplier's left shift at TFLite's clamp) runs the same bytes under each ISA as under the
 * scalar one, its channels' checks made at planning (ti__qpack's rq_checked); the
 * unchanged model as well. (A shift past 31 either way, which the SIMD paths refuse, does not
 * come out of ti__q_quantize_multiplier: that refusal is only a guard.) */
TI_TEST(int8_dw_saturated_multiplier_same_as_scalar) {
    const char *path = TFL_DIR "depthwise_conv_2d_int8_m1_s1_same_relu6/model.tflite";
    ti_error err;
    ti_model *m = ti_model_load_file(path, NULL, &err);
    if (!m) printf("  %s: %s\n", path, err.message);
    TI_REQUIRE(m != NULL);
    ti__value *w = int8_weights(m, 2);
    TI_REQUIRE(w != NULL && w->quant.count <= 64);
    const float *saved = w->quant.scale;
    float sc[64];
    for (int pass = 0; pass < 2; pass++) {
        memcpy(sc, saved, sizeof(float) * (size_t)w->quant.count);
        if (pass == 1) sc[1] = 1e12f;
        w->quant.scale = sc;
        size_t nref = 0, n = 0;
        ti_status st;
        unsigned char *ref = model_out(m, TI__ISA_SCALAR, TI__ISA_SCALAR, 1, &nref, &st, &err);
        TI_CHECK(ref != NULL);
        for (int i = 0; i < NISA && ref != NULL; i++) { /* each ISA this CPU has */
            unsigned char *o = model_out(m, isas[i], isas[i], 1, &n, &st, &err);
            TI_CHECK_EQ_INT(st, TI_OK);
            if (o == NULL) continue;
            if (n != nref || memcmp(ref, o, n) != 0)
                printf("  pass %d under %s: differs from scalar\n", pass,
                       ti__cpu_isa_name(isas[i]));
            TI_CHECK(n == nref && memcmp(ref, o, n) == 0);
            free(o);
        }
        free(ref);
    }
    w->quant.scale = saved;
    ti_model_free(m);
}

int main(void) {
    TI_RUN(micro_kernel_matches_portable);
    TI_RUN(requant_simd_matches_scalar);
    TI_RUN(requant_simd_edges_match_scalar);
    TI_RUN(gemm_each_isa_matches_scalar);
    TI_RUN(avx2_helpers_match_plain_loops);
    TI_RUN(vnni_helpers_match_plain_loops);
    TI_RUN(rows8_requant_edges_match_scalar);
    TI_RUN(rows8_requant_near_steps_match_scalar);
    TI_RUN(byte_copy_matches_plain_loop);
    TI_RUN(byte_micro_starts_at_init);
    TI_RUN(byte_micro_rq_matches_rows8);
    TI_RUN(amx_tiles_match_vnni);
    TI_RUN(add8_simd_matches_scalar);
    TI_RUN(add8_vbmi_matches_scalar);
    TI_RUN(add8_models_take_vbmi_lanes);
    TI_RUN(add8_computed_terms_match_tables);
    TI_RUN(quantized_model_same_under_each_isa);
    TI_RUN(int8_model_same_under_each_isa);
    TI_RUN(int8_weight_zero_point_refused);
    TI_RUN(int8_dw_saturated_multiplier_same_as_scalar);
    return ti_test_summary();
}
