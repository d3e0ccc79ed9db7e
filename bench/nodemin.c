/* nodemin: each node's shortest time over many runs of one model, for before / after
 * comparisons of a kernel change inside a real model. A whole run's time moves with
 * everything the machine does; a node's minimum over 30-200 runs is steadier, and building
 * the tool against two tinyinfer.h copies and running them alternately (old, new, old, new)
 * shows which nodes a change moved. Prints one line per node (index, op, minimum ms, name),
 * then the best whole run and the sum of the minima.
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
    double *mn = (double *)malloc(sizeof(double) * (size_t)(n > 0 ? n : 1)), best = 1e30;
    if (mn == NULL) return 1;
    for (int i = 0; i < n; i++) mn[i] = 1e30;
    for (int r = 0; r < runs; r++) {
        double t0 = ti__now_ms();
        if (ti_session_run(s, &err) != TI_OK) {
            fprintf(stderr, "%s\n", err.message);
            return 1;
        }
        double t = ti__now_ms() - t0;
        if (t < best) best = t;
        for (int i = 0; i < n; i++) {
            ti_node_info ni;
            ti_session_node_info(s, i, &ni);
            if (ni.time_ms < mn[i]) mn[i] = ni.time_ms;
        }
    }
    double sum = 0;
    for (int i = 0; i < n; i++) {
        ti_node_info ni;
        ti_session_node_info(s, i, &ni);
        printf("%3d %-18s %8.4f  %.60s\n", i, ni.op, mn[i], ni.name);
        sum += mn[i];
    }
    printf("best run %.3f ms, sum of node minima %.3f ms (%d threads, %d runs)\n", best, sum,
           threads, runs);
    free(mn);
    ti_session_destroy(s);
    ti_model_free(m);
    return 0;
}
