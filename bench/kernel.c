/* kernel: the float32 GEMM micro-kernel alone, the best ISA's (ti__sgemm_pick_isa), one
 * thread, against the FMA peak this machine's core reaches. A whole tile (mr x nr) a call,
 * B's packed sliver of kc x nr floats in L1, A's sliver (kc x mr, the layout of a conv's
 * weights packed at planning) cycling through SLIVERS of them: 1 keeps A in L1, 41 is
 * MobileNetV2's 96 -> 576 weights (221 KiB, from L2), bias and ReLU at the store as a conv
 * asks. kc 96 against kc 384 shows what a call costs beyond its k steps (the store of the
 * tile, the loop's start and end). GFLOP/s: best of 7 repeats of enough calls to take
 * 5-20 ms, by the wall clock (run it pinned: taskset -c N).
 * Build: cc -O2 -I. bench/kernel.c -o kernel -lm -ldl -pthread
 * Usage: kernel [SLIVERS=41] [KC=96] */
#define _POSIX_C_SOURCE 200112L /* clock_gettime */
#define TINYINFER_IMPLEMENTATION
#include "tinyinfer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
    size_t slivers = argc > 1 ? (size_t)atol(argv[1]) : 41;
    size_t kc = argc > 2 ? (size_t)atol(argv[2]) : 96;
    const ti__sgemm_isa *isa = ti__sgemm_pick_isa();
    if (isa == NULL) {
        printf("kernel: no SIMD GEMM kernel on this CPU (the portable loop only)\n");
        return 0;
    }
    if (slivers < 1 || kc < 1 || kc > 4096) {
        fprintf(stderr, "usage: %s [SLIVERS >= 1] [KC 1..4096]\n", argv[0]);
        return 2;
    }
    size_t mr = (size_t)isa->mr, nr = (size_t)isa->nr, ldc = 196; /* C as a 14 x 14 map */
    size_t na = slivers * mr * kc, calls = 20000 * 96 / kc;
    float *a = (float *)malloc(na * sizeof(float)), *b = (float *)malloc(kc * nr * sizeof(float));
    float *c = (float *)malloc(mr * ldc * sizeof(float));
    float *bias = (float *)calloc(mr, sizeof(float));
    if (a == NULL || b == NULL || c == NULL || bias == NULL) {
        fprintf(stderr, "kernel: out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < na; i++) a[i] = (float)(i % 13) * 0.01f;
    for (size_t i = 0; i < kc * nr; i++) b[i] = (float)(i % 5) * 0.01f;
    ti__gemm_epi epi;
    memset(&epi, 0, sizeof epi);
    epi.bias = bias;
    epi.act = TI__ACT_RELU;
    double best = 1e30;
    for (int r = 0; r < 7; r++) {
        double t = now_s();
        for (size_t i = 0; i < calls; i++)
            isa->kernel(kc, a + i % slivers * mr * kc, mr, 0, b, c + i % (ldc / nr) * nr, ldc,
                        (int)mr, (int)nr, 1.0f, 0.0f, &epi, NULL, 0);
        t = now_s() - t;
        if (t < best) best = t;
    }
    double flops = 2.0 * (double)(mr * nr * kc) * (double)calls;
    printf("%s kernel %zu x %zu, kc %zu, %zu A slivers (%zu KiB): %.1f GFLOP/s (c[0] %g)\n",
           ti__cpu_isa_name(isa->isa), mr, nr, kc, slivers, na * sizeof(float) / 1024,
           flops / best / 1e9, (double)c[0]);
    free(a), free(b), free(c), free(bias);
    return 0;
}
