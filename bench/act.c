/* act: the fused activation pass (ti__act_block: bias per row, then the activation, in place)
 * alone, one thread, on each instruction set this CPU has (forced in turn), in nanoseconds
 * per element. Two layouts of 16384 floats: 16 rows of 1024 end to end (a depthwise conv's
 * planes, a row a call) and 512 rows of 32, 48 apart (the GEMM epilogue's slivers of a 1x1
 * conv's output: rows of two AVX-512 vectors that do not lie end to end). Sigmoid and SiLU are the expensive ones (an exp
 * and a division a float; EfficientNet-B0 spends about a seventh of its run there); HardSwish
 * and ReLU for scale. Inputs uniform in [-8, 8]. Best of REPEATS calls, each on a fresh copy
 * of the block (the copy not timed), by the wall clock: run it pinned (taskset -c N).
 * Build: cc -O2 -I. bench/act.c -o act -lm -ldl -pthread
 * Usage: act [REPEATS=3000] */
#define _POSIX_C_SOURCE 200112L /* clock_gettime */
#define TINYINFER_IMPLEMENTATION
#include "tinyinfer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return 1e9 * (double)ts.tv_sec + (double)ts.tv_nsec;
}

enum { ROWS_LONG = 16, COLS_LONG = 1024, ROWS_SLIVER = 512, COLS_SLIVER = 32, LD_SLIVER = 48 };
enum { N = ROWS_LONG * COLS_LONG, SPAN = (ROWS_SLIVER - 1) * LD_SLIVER + COLS_SLIVER };

/* best time of `repeats` calls, ns per element */
static double time_act(int act, const float *x, float *y, const float *bias, int sliver,
                       int repeats) {
    size_t rows = sliver ? ROWS_SLIVER : ROWS_LONG, cols = sliver ? COLS_SLIVER : COLS_LONG;
    size_t ldy = sliver ? LD_SLIVER : COLS_LONG;
    size_t span = (rows - 1) * ldy + cols;
    double best = 1e30;
    for (int r = 0; r < repeats; r++) {
        memcpy(y, x, span * sizeof(float));
        double t0 = now_ns();
        ti__act_block(act, 0.0f, 6.0f, bias, y, ldy, rows, cols);
        double t = now_ns() - t0;
        if (t < best) best = t;
    }
    return best / (double)(rows * cols);
}

int main(int argc, char **argv) {
    int repeats = argc > 1 ? atoi(argv[1]) : 3000;
    if (repeats < 1) repeats = 1;
    static const struct {
        int act;
        const char *name;
    } acts[] = {{TI__ACT_SILU, "SiLU"},
                {TI__ACT_SIGMOID, "Sigmoid"},
                {TI__ACT_HARD_SWISH, "HardSwish"},
                {TI__ACT_RELU, "ReLU"}};
    size_t span = SPAN > N ? SPAN : N;
    float *x = (float *)malloc(span * sizeof(float)), *y = (float *)malloc(span * sizeof(float));
    float bias[ROWS_SLIVER];
    if (x == NULL || y == NULL) return 1;
    unsigned s = 12345u;
    for (size_t i = 0; i < span; i++) {
        s = s * 1103515245u + 12345u;
        x[i] = ((float)(s >> 8) / 16777216.0f - 0.5f) * 16.0f;
    }
    for (int r = 0; r < ROWS_SLIVER; r++) bias[r] = 0.01f * (float)(r % 17);
    printf("activation pass, ns per element (best of %d calls, %d floats a call)\n", repeats, N);
    printf("%-10s %-10s %12s %12s\n", "isa", "act", "rows 1024", "rows 32");
    for (int isa = 0; isa <= TI__ISA_LAST; isa++) { /* each level this CPU has */
        if (ti__cpu_force_isa(isa) != isa) continue;
        for (size_t a = 0; a < sizeof acts / sizeof acts[0]; a++)
            printf("%-10s %-10s %12.3f %12.3f\n", ti__cpu_isa_name(isa), acts[a].name,
                   time_act(acts[a].act, x, y, NULL, 0, repeats),
                   time_act(acts[a].act, x, y, bias, 1, repeats));
    }
    ti__cpu_force_isa(-1);
    free(x);
    free(y);
    return 0;
}
