/* libFuzzer target for the ONNX reader and everything a loaded model reaches: the bytes go
 * through ti_model_load_memory; a model that loads gets a one-thread session and one run on
 * zeroed inputs (when its inputs are at most 1 MB and its planned activations 8 MB: the time
 * of a run grows with them). Resource caps keep the fuzzer clear of out-of-memory: 16 MB per
 * constant, 64 MB of constants, 10,000 nodes, and an allocator that refuses to hold more than
 * 256 MB at once. The target aborts (a finding) when an error is malformed (no code, no
 * message, or a message not starting with the model name) or memory is not returned.
 * Build: ./build.sh fuzz (libFuzzer), or with tests/fuzz/replay_main.c to replay files. */
#define TINYINFER_IMPLEMENTATION
#include "tinyinfer.h"
#include "ti_test.h"

#include <stdlib.h>
#include <string.h>

#define FUZZ_NAME "fuzz.onnx"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A session is run when its inputs and its planned activations stay under these. */
#define FUZZ_RUN_INPUT_BYTES ((size_t)1 << 20)
#define FUZZ_RUN_ARENA_BYTES ((size_t)8 << 20)

static void fuzz_check_error(const ti_error *err) {
    size_t n = strlen(FUZZ_NAME);
    if (err->code <= TI_OK || err->code >= TI_STATUS_COUNT) abort();
    if (memchr(err->message, 0, sizeof err->message) == NULL) abort(); /* terminated */
    if (strncmp(err->message, FUZZ_NAME ": ", n + 2) != 0) abort();
    if (err->message[n + 2] == 0) abort(); /* a reason must follow the name */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    ti_test_alloc counts;
    memset(&counts, 0, sizeof counts);
    counts.limit_bytes = (size_t)256 << 20;

    ti_model_desc md;
    memset(&md, 0, sizeof md);
    md.name = FUZZ_NAME;
    md.allocator = ti_test_allocator(&counts);
    md.max_tensor_bytes = (uint64_t)16 << 20;
    md.max_total_bytes = (uint64_t)64 << 20;
    md.max_nodes = 10000;

    ti_error err;
    ti_model *m = ti_model_load_memory(data, size, &md, &err);
    if (m == NULL) {
        fuzz_check_error(&err);
    } else {
        ti_session_desc sd;
        memset(&sd, 0, sizeof sd);
        sd.num_threads = 1;
        sd.allocator = ti_test_allocator(&counts);
        ti_session *s = ti_session_create(m, &sd, &err);
        if (s == NULL) {
            fuzz_check_error(&err);
        } else {
            size_t in_bytes = 0;
            for (int i = 0; i < ti_session_num_inputs(s); i++) {
                ti_tensor *t = ti_session_input(s, i);
                if (t == NULL) abort();
                if (t->data != NULL) memset(t->data, 0, t->size_bytes);
                in_bytes += t->size_bytes;
            }
            /* run only models of a sane size: work grows with the tensors, and a mutated
             * shape (an LSTM over 1.8 million steps) is correct but takes minutes */
            ti_session_info info;
            if (ti_session_get_info(s, &info) != TI_OK) abort();
            if (in_bytes <= FUZZ_RUN_INPUT_BYTES && info.arena_bytes <= FUZZ_RUN_ARENA_BYTES &&
                ti_session_run(s, &err) != TI_OK)
                fuzz_check_error(&err);
            ti_session_destroy(s);
        }
        ti_model_free(m);
    }
    if (!ti_test_alloc_balanced(&counts)) abort(); /* leak, double free or wrong size */
    return 0;
}
