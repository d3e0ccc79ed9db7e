/* Which CPU kernels a build picks: on x86 the detected ISA (scalar, AVX2 or AVX-512, at
 * most what TINYINFER_ISA allows); on every other architecture (aarch64 in build.sh's
 * cross build, run under qemu) the portable scalar kernels, since NEON kernels are not
 * written yet. Also runs one float model on that path so the kernels are exercised.
 * Prints "N passed, N failed, N skipped". */
#define TINYINFER_IMPLEMENTATION
#include "tinyinfer.h"
#include "ti_test.h"

int main(void) {
    int isa = ti__cpu_isa();
    printf("isa: %s\n", ti__cpu_isa_name(isa));
#if defined(__x86_64__) || defined(__i386__)
    TI_CHECK(isa >= TI__ISA_SCALAR && isa <= TI__ISA_AVX512VNNI);
#else
#ifdef TI__X86_SIMD
    TI_CHECK(!"TI__X86_SIMD is defined on a non-x86 target");
#endif
    TI_CHECK(isa == TI__ISA_SCALAR);
    TI_CHECK(ti__cpu_isa_best() == TI__ISA_SCALAR);
#endif
    TI_CHECK(ti__cpu_isa() == isa); /* chosen once, stable */
    ti_error err;
    ti_model *m = ti_model_load_file("tests/data/conv2d_padding.onnx", NULL, &err);
    TI_CHECK(m != NULL);
    ti_session *s = m ? ti_session_create(m, NULL, &err) : NULL;
    if (TI_CHECK(s != NULL)) {
        ti_tensor *in = ti_session_input(s, 0);
        for (size_t i = 0; i < ti_tensor_numel(in); i++) ((float *)in->data)[i] = 0.25f;
        TI_CHECK(ti_session_run(s, &err) == TI_OK);
    }
    ti_session_destroy(s);
    ti_model_free(m);
    return ti_test_summary();
}
