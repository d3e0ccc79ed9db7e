/* The 8-bit GEMM micro-kernel of the TFLite convolutions (ti__qg_micro in
 * cpu/tfl_accum.c) against its SIMD variant (ti__qg_micro_avx2, cpu/x86/qgemm_avx2.c):
 * equal bit for bit on random int16 operands in the range the kernels feed (8-bit values
 * with zero points, |v| <= 255), on every int16 including -32768 (the sums wrap modulo
 * 2^32 in both), on odd and even depths around the unrolling, and on accumulators that
 * start non-zero (the kernel adds). Then the whole quantized path: a uint8 CONV_2D model
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
    TI_RUN(quantized_model_same_under_each_isa);
    return ti_test_summary();
}
