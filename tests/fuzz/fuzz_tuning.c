/* libFuzzer target for the tuning-file reader (src/core/tuning.c): the bytes are a
 * session's desc.tuning over a small model ($TI_FUZZ_MODEL, default
 * tests/data/conv2d_padding.onnx from the repository root, loaded once). A session that is created gets one
 * run. The target aborts (a finding) on a malformed error (no code, a message without the
 * source and a reason) or on memory not returned.
 * Build: with libFuzzer (./build.sh test's short run) or tests/fuzz/replay_main.c. */
#ifndef TI_TEST_SHARED_IMPL /* build.sh links one ASan build of the implementation */
#define TINYINFER_IMPLEMENTATION
#endif
#include "tinyinfer.h"
#include "ti_test.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static ti_model *g_model;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (g_model == NULL) {
        ti_error err;
        const char *path = getenv("TI_FUZZ_MODEL");
        g_model = ti_model_load_file(path ? path : "tests/data/conv2d_padding.onnx", NULL, &err);
        if (g_model == NULL) abort(); /* run from the repository root, or set TI_FUZZ_MODEL */
    }
    char *text = (char *)malloc(size + 1);
    if (text == NULL) return 0;
    memcpy(text, data, size);
    text[size] = 0; /* the API takes a C string: bytes after a NUL are not seen */
    ti_test_alloc counts;
    memset(&counts, 0, sizeof counts);
    counts.limit_bytes = (size_t)64 << 20;
    ti_session_desc d;
    memset(&d, 0, sizeof d);
    d.backend = TI_BACKEND_CPU;
    d.num_threads = 1;
    d.tuning = text;
    d.allocator = ti_test_allocator(&counts);
    ti_error err;
    ti_session *s = ti_session_create(g_model, &d, &err);
    if (s == NULL) {
        if (err.code <= TI_OK || err.code >= TI_STATUS_COUNT) abort();
        if (strncmp(err.message, "<desc.tuning>: ", 15) != 0 || err.message[15] == 0) abort();
    } else {
        if (ti_session_run(s, &err) != TI_OK) abort();
        ti_session_destroy(s);
    }
    if (!ti_test_alloc_balanced(&counts)) abort();
    free(text);
    return 0;
}
