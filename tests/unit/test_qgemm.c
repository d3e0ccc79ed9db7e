/* The 8-bit GEMM micro-kernel of the TFLite convolutions (ti__qg_micro in
 * cpu/tfl_accum.c) against its SIMD variant (ti__qg_micro_avx2, cpu/x86/qgemm_avx2.c):
 * equal bit for bit on random int16 operands in the range the kernels feed (8-bit values
 * with zero points, |v| <= 255), on every int16 including -32768 (the sums wrap modulo
 * 2^32 in both), on odd and even depths around the unrolling, and on accumulators that
 * start non-zero (the kernel adds). The AVX2 TFLite requantization (ti__qrq32_avx2 inside
 * ti__qrq_n) against the scalar loop on random and extreme accumulators, multipliers, shifts
 * and clamp ranges. Then the whole quantized path (GEMM, requantization and the depthwise
 * taps of ti__dwq_tap_avx2): a uint8 CONV_2D model
 * from tests/ run with the AVX2 ISA and with the scalar ISA gives identical outputs. */
#define TINYINFER_IMPLEMENTATION
#include "tinyinfer.h"
#include "ti_test.h"

static unsigned g_seed = 777u;
static unsigned urand(void) {
    g_seed = g_seed * 1664525u + 1013904223u;
    return g_seed >> 8;
}

#define LD 40 /* accumulator row stride: 16 used, the rest must stay untouched */

static void run_case(size_t kc, int full_range) {
#ifdef TI__X86_SIMD
    int16_t *a = (int16_t *)malloc((kc + 1) * 4 * sizeof(int16_t));
    int16_t *b = (int16_t *)malloc((kc + 1) * 16 * sizeof(int16_t));
    uint32_t c_ref[4 * LD], c_simd[4 * LD];
    for (size_t i = 0; i < kc * 4; i++)
        a[i] = full_range ? (int16_t)(urand() & 0xffff) : (int16_t)((int)(urand() % 511) - 255);
    for (size_t i = 0; i < kc * 16; i++)
        b[i] = full_range ? (int16_t)(urand() & 0xffff) : (int16_t)((int)(urand() % 511) - 255);
    if (full_range && kc > 1) a[0] = a[4] = b[0] = b[16] = INT16_MIN; /* the madd edge case */
    for (int i = 0; i < 4 * LD; i++) c_ref[i] = c_simd[i] = urand() * 2654435761u;
    ti__qg_micro(kc, a, b, c_ref, LD);
    ti__qg_micro_avx2(kc, a, b, c_simd, LD);
    int bad = 0;
    for (int i = 0; i < 4 * LD; i++)
        if (c_ref[i] != c_simd[i] && bad++ == 0)
            printf("  kc %zu%s: acc[%d] = %u, portable gives %u\n", kc,
                   full_range ? " (full int16 range)" : "", i, c_simd[i], c_ref[i]);
    TI_CHECK_EQ_INT(bad, 0);
    free(a);
    free(b);
#else
    (void)kc;
    (void)full_range;
#endif
}

TI_TEST(micro_kernel_matches_portable) {
    if (ti__cpu_isa_best() < TI__ISA_AVX2) {
        TI_SKIP("this CPU has no AVX2");
        return;
    }
    static const size_t ks[] = {0, 1, 2, 3, 4, 7, 8, 9, 15, 16, 17, 27, 63, 144, 255, 256};
    for (size_t i = 0; i < sizeof(ks) / sizeof(ks[0]); i++) {
        run_case(ks[i], 0);
        run_case(ks[i], 1);
    }
    for (int r = 0; r < 50; r++) run_case(1 + urand() % 256, r & 1);
}

/* ti__qrq_n in TI__QRQ_32 mode under AVX2 and under the scalar ISA: identical int32 outputs
 * (int32 output dtype, so the clamp range is the test's) for every accumulator pattern. */
TI_TEST(requant_avx2_matches_scalar) {
    if (ti__cpu_isa_best() < TI__ISA_AVX2) {
        TI_SKIP("this CPU has no AVX2");
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
        ti__cpu_force_isa(TI__ISA_AVX2);
        ti__qrq_n(&q, acc, c0, n, y_simd, TI_DTYPE_I32, 0, 1);
        for (size_t i = 0; i < n; i++)
            if (y_ref[i] != y_simd[i] && bad++ < 3)
                printf("  acc %lld mult %d shift %d yo %d [%d, %d]: avx2 %d, scalar %d\n",
                       (long long)acc[i], mult[i], shift[i], q.yo, q.lo, q.hi, y_simd[i], y_ref[i]);
    }
    ti__cpu_force_isa(-1);
    TI_CHECK_EQ_INT(bad, 0);
}

/* The bundled uint8 MobileNet (examples/data) under each ISA: identical outputs. */
TI_TEST(quantized_model_same_under_each_isa) {
    const char *path = "examples/data/mobilenet_v2_1.0_224_quant.tflite";
    ti_error err;
    ti_model *m = ti_model_load_file(path, NULL, &err);
    if (!m) {
        TI_SKIP("examples/data/mobilenet_v2_1.0_224_quant.tflite not loadable");
        return;
    }
    static const int isas[] = {TI__ISA_SCALAR, TI__ISA_AVX2, TI__ISA_AVX512};
    unsigned char *ref = NULL;
    size_t ref_bytes = 0;
    for (int i = 0; i < 3; i++) {
        if (ti__cpu_force_isa(isas[i]) != isas[i]) continue;
        for (int threads = 1; threads <= 2; threads++) {
            ti_session_desc d;
            memset(&d, 0, sizeof d);
            d.backend = TI_BACKEND_CPU;
            d.num_threads = threads;
            ti_session *s = ti_session_create(m, &d, &err);
            TI_CHECK(s != NULL);
            if (!s) continue;
            ti_tensor *in = ti_session_input(s, 0);
            unsigned seed = 99u;
            for (size_t q = 0; q < in->size_bytes; q++) {
                seed = seed * 1664525u + 1013904223u;
                ((unsigned char *)in->data)[q] = (unsigned char)(seed >> 24);
            }
            TI_CHECK_EQ_INT(ti_session_run(s, &err), TI_OK);
            const ti_tensor *out = ti_session_output(s, 0);
            if (!ref) {
                ref_bytes = out->size_bytes;
                ref = (unsigned char *)malloc(ref_bytes);
                memcpy(ref, out->data, ref_bytes);
            } else {
                TI_CHECK(out->size_bytes == ref_bytes && memcmp(out->data, ref, ref_bytes) == 0);
            }
            ti_session_destroy(s);
        }
    }
    ti__cpu_force_isa(-1);
    free(ref);
    ti_model_free(m);
}

int main(void) {
    TI_RUN(micro_kernel_matches_portable);
    TI_RUN(requant_avx2_matches_scalar);
    TI_RUN(quantized_model_same_under_each_isa);
    return ti_test_summary();
}
