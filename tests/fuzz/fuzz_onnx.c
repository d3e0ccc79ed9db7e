/* libFuzzer target for the ONNX reader and everything a loaded model reaches: the bytes go
 * through ti_model_load_memory; a model that loads gets a one-thread session and one run on
 * zeroed inputs (when its inputs are at most 1 MB and its planned activations 8 MB: the time
 * of a run grows with them). Resource caps keep the fuzzer clear of out-of-memory: 16 MB per
 * constant, 64 MB of constants, 10,000 nodes, and an allocator that refuses to hold more than
 * 256 MB at once. The target aborts (a finding) when an error is malformed (no code, no
 * message, or a message not starting with the model name) or memory is not returned.
 * The work is fuzz_model.h's (shared with fuzz_tflite.c).
 * Build: ./build.sh fuzz (libFuzzer), or with tests/fuzz/replay_main.c to replay files. */
#ifndef TI_TEST_SHARED_IMPL /* build.sh links one ASan build of the implementation */
#define TINYINFER_IMPLEMENTATION
#endif
#include "tinyinfer.h"
#include "ti_test.h"
#include "fuzz_model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_model(data, size, "fuzz.onnx", TI_FORMAT_AUTO, TI_BACKEND_AUTO);
    return 0;
}
