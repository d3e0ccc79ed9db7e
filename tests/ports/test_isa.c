/* Which CPU kernels a build picks: on x86 the detected ISA (scalar, AVX2 or AVX-512, at
 * most what TINYINFER_ISA allows); on aarch64 (build.sh's cross build, run under qemu) NEON,
 * or NEON with dotprod when the CPU has it (qemu -cpu cortex-a57 has not, cortex-a76 has);
 * elsewhere the portable scalar kernels. TI_TEST_WANT_ISA=name makes the detected ISA part
 * of the check. Then runs one float model under every level the CPU has, each against the
 * scalar one. Prints "N passed, N failed, N skipped". */
#define TINYINFER_IMPLEMENTATION
#include "tinyinfer.h"
#include "ti_test.h"

/* conv2d_padding.onnx under `isa`; out receives its output (the caller frees it) */
static int run_model(int isa, float **out, size_t *n) {
    ti_error err;
    *out = NULL;
    if (ti__cpu_force_isa(isa) != isa) return 0;
    ti_model *m = ti_model_load_file("tests/data/conv2d_padding.onnx", NULL, &err);
    ti_session *s = m ? ti_session_create(m, NULL, &err) : NULL;
    int ok = 0;
    if (s != NULL) {
        ti_tensor *in = ti_session_input(s, 0);
        for (size_t i = 0; i < ti_tensor_numel(in); i++)
            ((float *)in->data)[i] = 0.25f + 0.01f * (float)(i % 37);
        if (ti_session_run(s, &err) == TI_OK) {
            const ti_tensor *y = ti_session_output(s, 0);
            *n = ti_tensor_numel(y);
            *out = (float *)malloc(sizeof(float) * *n);
            if (*out != NULL) {
                memcpy(*out, y->data, sizeof(float) * *n);
                ok = 1;
            }
        }
    }
    if (!ok) printf("  %s: %s\n", ti__cpu_isa_name(isa), err.message);
    ti_session_destroy(s);
    ti_model_free(m);
    return ok;
}

int main(void) {
    int isa = ti__cpu_isa();
    const char *want = getenv("TI_TEST_WANT_ISA");
    printf("isa: %s (best %s)\n", ti__cpu_isa_name(isa), ti__cpu_isa_name(ti__cpu_isa_best()));
#if defined(__x86_64__) || defined(__i386__)
    TI_CHECK(isa >= TI__ISA_SCALAR && isa <= TI__ISA_AMX);
#elif defined(__aarch64__) && !defined(TI_NO_SIMD)
#ifndef TI__ARM_NEON
    TI_CHECK(!"TI__ARM_NEON is not defined on an aarch64 GCC or Clang build");
#endif
    TI_CHECK(ti__cpu_isa_best() == TI__ISA_NEON || ti__cpu_isa_best() == TI__ISA_NEONDOT);
#else
#if defined(TI__X86_SIMD) || defined(TI__ARM_NEON)
    TI_CHECK(!"a SIMD family is compiled in on a CPU it is not for");
#endif
    TI_CHECK(isa == TI__ISA_SCALAR);
    TI_CHECK(ti__cpu_isa_best() == TI__ISA_SCALAR);
#endif
    if (want != NULL) TI_CHECK(strcmp(ti__cpu_isa_name(ti__cpu_isa_best()), want) == 0);
    TI_CHECK(ti__cpu_isa() == isa); /* chosen once, stable */
    float *ref = NULL;
    size_t nref = 0;
    TI_CHECK(run_model(TI__ISA_SCALAR, &ref, &nref));
    for (int i = TI__ISA_SCALAR + 1; ref != NULL && i <= ti__cpu_isa_best(); i++) {
        float *y = NULL;
        size_t ny = 0;
        if (!TI_CHECK(run_model(i, &y, &ny)) || !TI_CHECK(ny == nref)) {
            free(y);
            continue;
        }
        double worst = 0;
        for (size_t q = 0; q < ny; q++) {
            double d = fabs((double)y[q] - ref[q]) / (fabs((double)ref[q]) + 1e-3);
            if (d > worst) worst = d;
        }
        printf("  %s against scalar: worst relative difference %.3g\n", ti__cpu_isa_name(i),
               worst);
        TI_CHECK(worst <= 1e-4);
        free(y);
    }
    free(ref);
    ti__cpu_force_isa(-1);
    return ti_test_summary();
}
