/* Quantized ONNX models, one thread: the median wall time of ti_session_run on each model
 * given, with fusion (QDQ patterns become QLinearConv / QLinearMatMul) and without it (the
 * float Conv / MatMul between DequantizeLinear and QuantizeLinear). Compile it against two
 * headers (before / after a change) to compare them. The models come from
 * `python3 tests/models/gen_qdq_models.py --bench DIR` (bench_qdq.onnx: QDQ format;
 * bench_qop.onnx: QLinearConv / QLinearMatMul operators).
 * Usage: bench_qdq MODEL... (prints one line per model and mode). */
#define _POSIX_C_SOURCE 200809L
#define TINYINFER_IMPLEMENTATION
#include "tinyinfer.h"

#include <time.h>

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return 1e3 * (double)ts.tv_sec + 1e-6 * (double)ts.tv_nsec;
}
static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void bench(const char *path, int no_fusion) {
    ti_error err;
    ti_model *m = ti_model_load_file(path, NULL, &err);
    if (m == NULL) {
        printf("%s: %s\n", path, err.message);
        return;
    }
    ti_session_desc d;
    memset(&d, 0, sizeof d);
    d.backend = TI_BACKEND_CPU;
    d.num_threads = 1;
    d.no_fusion = no_fusion;
    ti_session *s = ti_session_create(m, &d, &err);
    if (s == NULL) {
        printf("%s: %s\n", path, err.message);
        ti_model_free(m);
        return;
    }
    ti_tensor *x = ti_session_input(s, 0);
    for (size_t i = 0; i < ti_tensor_numel(x); i++) ((float *)x->data)[i] = (float)((i * 7919) % 200) / 100.0f - 1.0f;
    double t[15];
    int n = 15;
    for (int r = 0; r < n; r++) {
        double t0 = now_ms();
        if (ti_session_run(s, &err) != TI_OK) {
            printf("%s: %s\n", path, err.message);
            break;
        }
        t[r] = now_ms() - t0;
    }
    qsort(t, (size_t)n, sizeof t[0], cmp_double);
    int q = 0;
    for (int i = 0; i < ti_session_num_nodes(s); i++) {
        ti_node_info ni;
        if (ti_session_node_info(s, i, &ni) == TI_OK && strncmp(ni.op, "QLinear", 7) == 0) q++;
    }
    printf("%-40s %-10s %2d QLinear* nodes  median %8.2f ms  (min %.2f)\n", path,
           no_fusion ? "no fusion" : "fusion", q, t[n / 2], t[0]);
    ti_session_destroy(s);
    ti_model_free(m);
}

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        bench(argv[i], 0);
        bench(argv[i], 1);
    }
    return 0;
}
