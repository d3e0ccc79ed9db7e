/* The body shared by the model-reader fuzz targets (fuzz_onnx.c, fuzz_tflite.c): load the
 * bytes under resource caps (16 MB per constant, 64 MB of constants, 10,000 nodes, an
 * allocator that refuses to hold more than 256 MB at once), then a one-thread session and
 * one run on zeroed inputs when its inputs are at most 1 MB and its planned activations 8 MB
 * (the time of a run grows with them: a mutated LSTM over 1.8 million steps is correct but
 * takes minutes). Aborts (a finding) when an error is malformed (no code, no message, or a
 * message not starting with the model name) or memory is not returned. Include after
 * tinyinfer.h and ti_test.h. */
#ifndef TI_FUZZ_MODEL_H
#define TI_FUZZ_MODEL_H
#include <stdlib.h>
#include <string.h>

#define FUZZ_RUN_INPUT_BYTES ((size_t)1 << 20)
#define FUZZ_RUN_ARENA_BYTES ((size_t)8 << 20)

static void fuzz_check_error(const ti_error *err, const char *name) {
    size_t n = strlen(name);
    if (err->code <= TI_OK || err->code >= TI_STATUS_COUNT) abort();
    if (memchr(err->message, 0, sizeof err->message) == NULL) abort(); /* terminated */
    if (strncmp(err->message, name, n) != 0 || strncmp(err->message + n, ": ", 2) != 0) abort();
    if (err->message[n + 2] == 0) abort(); /* a reason must follow the name */
}

/* Loads data as model `name` (format: TI_FORMAT_AUTO or forced) and runs it as above. */
static void fuzz_model(const uint8_t *data, size_t size, const char *name, ti_format format,
                       ti_backend backend) {
    ti_test_alloc counts;
    memset(&counts, 0, sizeof counts);
    counts.limit_bytes = (size_t)256 << 20;
    ti_model_desc md;
    memset(&md, 0, sizeof md);
    md.name = name;
    md.format = format;
    md.allocator = ti_test_allocator(&counts);
    md.max_tensor_bytes = (uint64_t)16 << 20;
    md.max_total_bytes = (uint64_t)64 << 20;
    md.max_nodes = 10000;
    ti_error err;
    ti_model *m = ti_model_load_memory(data, size, &md, &err);
    if (m == NULL) {
        fuzz_check_error(&err, name);
    } else {
        ti_session_desc sd;
        memset(&sd, 0, sizeof sd);
        sd.num_threads = 1;
        sd.backend = backend;
        sd.allocator = ti_test_allocator(&counts);
        ti_session *s = ti_session_create(m, &sd, &err);
        if (s == NULL) {
            fuzz_check_error(&err, name);
        } else {
            size_t in_bytes = 0;
            for (int i = 0; i < ti_session_num_inputs(s); i++) {
                ti_tensor *t = ti_session_input(s, i);
                if (t == NULL) abort();
                if (t->data != NULL) memset(t->data, 0, t->size_bytes);
                in_bytes += t->size_bytes;
            }
            ti_session_info info;
            if (ti_session_get_info(s, &info) != TI_OK) abort();
            if (in_bytes <= FUZZ_RUN_INPUT_BYTES && info.arena_bytes <= FUZZ_RUN_ARENA_BYTES &&
                ti_session_run(s, &err) != TI_OK)
                fuzz_check_error(&err, name);
            ti_session_destroy(s);
        }
        ti_model_free(m);
    }
    if (!ti_test_alloc_balanced(&counts)) abort(); /* leak, double free or wrong size */
}
#endif
