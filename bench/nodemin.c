/* nodemin: each node's time over many runs of one model (minimum, median and 90th
 * percentile), for before / after comparisons of a kernel change inside a real model and
 * for bench/nodes_ort.py's side-by-side with onnxruntime. A whole run's time moves with
 * everything the machine does; a node's minimum over 30-200 runs is steadier, and building
 * the tool against two tinyinfer.h copies and running them alternately (old, new, old, new)
 * shows which nodes a change moved. After 5 runs not timed (the first touches the arena),
 * prints one line per node (index, op, minimum, median and p90 in ms, name), then the best
 * and median whole run and the sums of the nodes' minima and medians.
 * Inputs: float32 uniform in [-1, 1], 8-bit uniform bytes, from a fixed seed (the same for
 * every build); other dtypes are left zero.
 * Build: cc -O2 -I<dir with tinyinfer.h> bench/nodemin.c -o nodemin -lm -ldl -pthread
 * Usage: nodemin MODEL [THREADS=1] [RUNS=50] */
#define TINYINFER_IMPLEMENTATION
#include "tinyinfer.h"

#include <stdio.h>
#include <stdlib.h>

static unsigned long long g_seed = 0x9e3779b97f4a7c15ull;
static unsigned rnd(void)
{
    g_seed = g_seed * 6364136223846793005ull + 1442695040888963407ull;
    return (unsigned)(g_seed >> 33);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s MODEL [THREADS] [RUNS]\n", argv[0]);
        return 2;
    }
    int threads = argc > 2 ? atoi(argv[2]) : 1, runs = argc > 3 ? atoi(argv[3]) : 50;
    ti_error err;
    ti_model *m = ti_model_load_file(argv[1], NULL, &err);
    if (m == NULL) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    ti_session_desc d = {0};
    d.num_threads = threads;
    d.profile = 1;
    d.backend = TI_BACKEND_CPU;
    ti_session *s = ti_session_create(m, &d, &err);
    if (s == NULL) {
        fprintf(stderr, "%s\n", err.message);
        ti_model_free(m);
        return 1;
    }
    for (int i = 0; i < ti_session_num_inputs(s); i++) {
        ti_tensor *t = ti_session_input(s, i);
        size_t n = ti_tensor_numel(t);
        if (t->dtype == TI_DTYPE_F32)
            for (size_t k = 0; k < n; k++)
                ((float *)t->data)[k] = (float)(rnd() % 20001) / 10000.0f - 1.0f;
        else if (t->dtype == TI_DTYPE_U8 || t->dtype == TI_DTYPE_I8)
            for (size_t k = 0; k < n; k++) ((unsigned char *)t->data)[k] = (unsigned char)rnd();
    }
    int n = ti_session_num_nodes(s);
    if (runs < 1) runs = 1;
    size_t nn = (size_t)(n > 0 ? n : 1), nr = (size_t)runs;
    double *tt = (double *)malloc(sizeof(double) * nn * nr); /* node i's runs at i * nr */
    double *rt = (double *)malloc(sizeof(double) * nr);
    if (tt == NULL || rt == NULL) return 1;
    for (int r = -5; r < runs; r++) {
        double t0 = ti__now_ms();
        if (ti_session_run(s, &err) != TI_OK) {
            fprintf(stderr, "%s\n", err.message);
            return 1;
        }
        if (r < 0) continue;
        rt[r] = ti__now_ms() - t0;
        for (int i = 0; i < n; i++) {
            ti_node_info ni;
            ti_session_node_info(s, i, &ni);
            tt[(size_t)i * nr + (size_t)r] = ni.time_ms;
        }
    }
    double sum = 0, sum_med = 0;
    for (int i = 0; i < n; i++) {
        ti_node_info ni;
        double *v = tt + (size_t)i * nr;
        ti_session_node_info(s, i, &ni);
        qsort(v, nr, sizeof *v, cmp_double);
        printf("%3d %-18s %8.4f %8.4f %8.4f  %s\n", i, ni.op, v[0], v[nr / 2], v[nr * 9 / 10],
               ni.name);
        sum += v[0];
        sum_med += v[nr / 2];
    }
    qsort(rt, nr, sizeof *rt, cmp_double);
    printf("best run %.3f ms, median run %.3f ms, sum of node minima %.3f ms, of node medians "
           "%.3f ms (%d threads, %d runs)\n", rt[0], rt[nr / 2], sum, sum_med, threads, runs);
    free(tt);
    free(rt);
    ti_session_destroy(s);
    ti_model_free(m);
    return 0;
}
