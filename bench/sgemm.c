/* Float32 GEMM benchmark, one thread: this machine's FMA peak by a probe (independent FMA
 * chains on AVX2 and AVX-512, flops/s), then ti__sgemm_ws, with the workspace a session
 * gives a MatMul or Gemm node (ti__sgemm_ws_floats), on 1024^3 (and 1024^3 without it, the
 * stack buffers only) and on the pointwise (1x1) convolutions of MobileNetV2 with conv.c's
 * shapes (M = output channels, N = H*W, K = input channels), under each instruction set
 * this CPU has. Each figure is the median of many runs by the thread's CPU time (the
 * machines are shared: medians and CPU time resist other people's builds), with the
 * wall-clock median beside it. Run by ./build.sh bench.
 *
 * Usage: bench_sgemm [REPORT.md|-] [SHAPES] [N]
 *   REPORT.md  also write the Markdown report there ("-" or nothing: stdout only)
 *   SHAPES     only the shapes whose name contains it (`- 1024`), or the one shape MxNxK
 *              (`- 64x448x576`); MxNxKt: A given transposed, as conv.c's planner packs
 *              conv weights (`- 512x49x4608t`)
 *   N          only the N best instruction sets */
#define _POSIX_C_SOURCE 200112L /* clock_gettime, CLOCK_THREAD_CPUTIME_ID */
#define TINYINFER_IMPLEMENTATION
#include "tinyinfer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double clock_s(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static double now_s(void) { return clock_s(CLOCK_MONOTONIC); }
/* CPU time of this thread: on a shared machine, time when another process had the core is
 * not counted (caches and memory are still shared, so it is not a clean room either). */
static double cpu_s(void) { return clock_s(CLOCK_THREAD_CPUTIME_ID); }

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static volatile float g_sink;

#ifdef TI__X86_SIMD
/* 12 independent chains c = c * x + y: enough to cover FMA latency x throughput on current
 * x86 cores (4 cycles x 2 pipes). */
#define FMA12(f)                                                                            \
    c0 = f(c0, x, y); c1 = f(c1, x, y); c2 = f(c2, x, y); c3 = f(c3, x, y);                   \
    c4 = f(c4, x, y); c5 = f(c5, x, y); c6 = f(c6, x, y); c7 = f(c7, x, y);                   \
    c8 = f(c8, x, y); c9 = f(c9, x, y); c10 = f(c10, x, y); c11 = f(c11, x, y);

static TI__TARGET_AVX512 __attribute__((noinline)) void probe_avx512(long iters) {
    __m512 x = _mm512_set1_ps(0.999999f), y = _mm512_set1_ps(1e-6f);
    /* distinct starting values, so that no two chains are the same computation */
    __m512 c0 = _mm512_set1_ps(0.50f), c1 = _mm512_set1_ps(0.51f), c2 = _mm512_set1_ps(0.52f);
    __m512 c3 = _mm512_set1_ps(0.53f), c4 = _mm512_set1_ps(0.54f), c5 = _mm512_set1_ps(0.55f);
    __m512 c6 = _mm512_set1_ps(0.56f), c7 = _mm512_set1_ps(0.57f), c8 = _mm512_set1_ps(0.58f);
    __m512 c9 = _mm512_set1_ps(0.59f), c10 = _mm512_set1_ps(0.60f), c11 = _mm512_set1_ps(0.61f);
    for (long i = 0; i < iters; i++) {
        FMA12(_mm512_fmadd_ps)
        /* opaque to the optimiser: every chain must really run */
        __asm__ __volatile__("" : "+v"(c0), "+v"(c1), "+v"(c2), "+v"(c3), "+v"(c4), "+v"(c5));
        __asm__ __volatile__("" : "+v"(c6), "+v"(c7), "+v"(c8), "+v"(c9), "+v"(c10), "+v"(c11));
    }
    __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(c0, c1), _mm512_add_ps(c2, c3)),
                             _mm512_add_ps(_mm512_add_ps(c4, c5), _mm512_add_ps(c6, c7)));
    s = _mm512_add_ps(s, _mm512_add_ps(_mm512_add_ps(c8, c9), _mm512_add_ps(c10, c11)));
    g_sink = _mm512_reduce_add_ps(s);
}

static TI__TARGET_AVX2 __attribute__((noinline)) void probe_avx2(long iters) {
    __m256 x = _mm256_set1_ps(0.999999f), y = _mm256_set1_ps(1e-6f);
    /* distinct starting values, so that no two chains are the same computation */
    __m256 c0 = _mm256_set1_ps(0.50f), c1 = _mm256_set1_ps(0.51f), c2 = _mm256_set1_ps(0.52f);
    __m256 c3 = _mm256_set1_ps(0.53f), c4 = _mm256_set1_ps(0.54f), c5 = _mm256_set1_ps(0.55f);
    __m256 c6 = _mm256_set1_ps(0.56f), c7 = _mm256_set1_ps(0.57f), c8 = _mm256_set1_ps(0.58f);
    __m256 c9 = _mm256_set1_ps(0.59f), c10 = _mm256_set1_ps(0.60f), c11 = _mm256_set1_ps(0.61f);
    for (long i = 0; i < iters; i++) {
        FMA12(_mm256_fmadd_ps)
        /* opaque to the optimiser: every chain must really run */
        __asm__ __volatile__("" : "+x"(c0), "+x"(c1), "+x"(c2), "+x"(c3), "+x"(c4), "+x"(c5));
        __asm__ __volatile__("" : "+x"(c6), "+x"(c7), "+x"(c8), "+x"(c9), "+x"(c10), "+x"(c11));
    }
    __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(c0, c1), _mm256_add_ps(c2, c3)),
                             _mm256_add_ps(_mm256_add_ps(c4, c5), _mm256_add_ps(c6, c7)));
    s = _mm256_add_ps(s, _mm256_add_ps(_mm256_add_ps(c8, c9), _mm256_add_ps(c10, c11)));
    float v[8];
    _mm256_storeu_ps(v, s);
    g_sink = v[0] + v[7];
}
#endif

/* Best of `reps` timings of the FMA probe of isa, in flop/s (0 when the CPU lacks it). */
static double probe_peak(int isa, int reps) {
#ifdef TI__X86_SIMD
    if (isa > ti__cpu_isa_best() || isa == TI__ISA_SCALAR) return 0;
    long iters = 20000000;
    double lanes = isa == TI__ISA_AVX512 ? 16 : 8, best = 0;
    for (int r = 0; r < reps; r++) {
        double t0 = cpu_s();
        if (isa == TI__ISA_AVX512) probe_avx512(iters);
        else probe_avx2(iters);
        double f = (double)iters * 12 * lanes * 2 / (cpu_s() - t0);
        if (f > best) best = f;
    }
    return best;
#else
    (void)isa;
    (void)reps;
    return 0;
#endif
}

typedef struct shape {
    const char *name;
    size_t m, n, k;
    int pointwise;
    int at; /* 1: A given transposed (K rows of lda floats), as conv.c's planner packs conv
             * weights: lda is M, or more where rows M floats apart share L1 sets */
    int no_ws; /* 1: without the workspace (the stack buffers only, as ti__sgemm_ref) */
} shape;

static const shape SHAPES[] = {
    {"1024^3", 1024, 1024, 1024, 0, 0, 0},
    {"1024^3 without workspace", 1024, 1024, 1024, 0, 0, 1},
    {"pw 112x112x32->16", 16, 12544, 32, 1, 0, 0},
    {"pw 112x112x16->96", 96, 12544, 16, 1, 0, 0},
    {"pw 56x56x96->24", 24, 3136, 96, 1, 0, 0},
    {"pw 56x56x24->144", 144, 3136, 24, 1, 0, 0},
    {"pw 56x56x144->24", 24, 3136, 144, 1, 0, 0},
    {"pw 28x28x144->32", 32, 784, 144, 1, 0, 0},
    {"pw 28x28x192->32", 32, 784, 192, 1, 0, 0},
    {"pw 14x14x384->64", 64, 196, 384, 1, 0, 0},
    {"pw 14x14x64->384", 384, 196, 64, 1, 0, 0},
    {"pw 14x14x576->96", 96, 196, 576, 1, 0, 0},
    {"pw 7x7x576->160", 160, 49, 576, 1, 0, 0},
    {"pw 7x7x960->160", 160, 49, 960, 1, 0, 0},
    {"pw 7x7x960->320", 320, 49, 960, 1, 0, 0},
    {"pw 7x7x320->1280", 1280, 49, 320, 1, 0, 0},
};
#define NSHAPES (sizeof SHAPES / sizeof SHAPES[0])
#define MAXRUNS 401

/* Median seconds of one GEMM shape under the current ISA, 1 thread, by thread CPU time
 * (cpu) and by the wall clock (wall): runs until about `budget` seconds have passed, at
 * least 7 and at most MAXRUNS times. */
static void time_shape(const shape *s, double budget, double *cpu, double *wall) {
    size_t lda = s->k;
    if (s->at)
        for (lda = s->m; ti__sgemm_set_conflicts(lda) && lda < s->m + 256;) lda += 16;
    float *a = (float *)malloc(sizeof(float) * (s->at ? lda * s->k : s->m * s->k));
    float *b = (float *)malloc(sizeof(float) * s->k * s->n);
    float *c = (float *)malloc(sizeof(float) * s->m * s->n);
    /* the workspace a session gives a MatMul or Gemm node of this shape (its scratch) */
    size_t wsn = s->no_ws ? 0 : ti__sgemm_ws_floats(s->at, 0, s->m, s->n, s->k, lda, NULL);
    float *ws = wsn > 0 ? (float *)malloc(sizeof(float) * wsn) : NULL;
    static double tc[MAXRUNS], tw[MAXRUNS];
    if (!a || !b || !c || (wsn > 0 && ws == NULL)) {
        *cpu = *wall = 0;
        free(a), free(b), free(c), free(ws);
        return;
    }
    for (size_t i = 0; i < (s->at ? lda * s->k : s->m * s->k); i++)
        a[i] = (float)(i % 17) * 0.01f - 0.08f;
    for (size_t i = 0; i < s->k * s->n; i++) b[i] = (float)(i % 13) * 0.01f - 0.06f;
    ti__sgemm_ws(s->at, 0, s->m, s->n, s->k, 1.0f, a, lda, b, s->n, 0.0f, c, s->n, NULL, NULL,
                 ws, wsn);
    int n = 0;
    double start = now_s();
    while (n < MAXRUNS && (n < 7 || now_s() - start < budget)) {
        double t0 = now_s(), c0 = cpu_s();
        ti__sgemm_ws(s->at, 0, s->m, s->n, s->k, 1.0f, a, lda, b, s->n, 0.0f, c, s->n, NULL,
                     NULL, ws, wsn);
        tc[n] = cpu_s() - c0;
        tw[n++] = now_s() - t0;
    }
    qsort(tc, (size_t)n, sizeof tc[0], cmp_double);
    qsort(tw, (size_t)n, sizeof tw[0], cmp_double);
    *cpu = tc[n / 2];
    *wall = tw[n / 2];
    g_sink = c[s->m * s->n / 2];
    free(a), free(b), free(c), free(ws);
}

/* The 1-minute load average (Linux), or -1: says how busy the shared machine was. */
static double load_average(void) {
    double v = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f != NULL) {
        if (fscanf(f, "%lf", &v) != 1) v = -1;
        fclose(f);
    }
    return v;
}

int main(int argc, char **argv) {
    const char *path = argc > 1 && strcmp(argv[1], "-") != 0 ? argv[1] : NULL;
    const char *only = argc > 2 ? argv[2] : NULL; /* shapes whose name contains this */
    shape custom = {"custom", 0, 0, 0, 0, 0, 0};
    char t = 0;
    size_t cm = 0, cn = 0, ck = 0; /* a partial match (`1024`) must not set the custom shape */
    if (only != NULL && sscanf(only, "%zux%zux%zu%c", &cm, &cn, &ck, &t) >= 3) {
        custom.m = cm, custom.n = cn, custom.k = ck;
        custom.name = only;
        custom.at = t == 't';
        only = NULL;
    }
    static char rep[16384];
    size_t len = 0, shown = 0;
#define OUT(...) (len += (size_t)snprintf(rep + len, len < sizeof rep ? sizeof rep - len : 0, __VA_ARGS__))
    int best = ti__cpu_isa_best();
    double load0 = load_average();
    double pk2 = probe_peak(TI__ISA_AVX2, 5), pk512 = probe_peak(TI__ISA_AVX512, 5);
    double peak = pk2 > pk512 ? pk2 : pk512;
    time_t now = time(NULL);
    char date[32];
    strftime(date, sizeof date, "%Y-%m-%d %H:%M", localtime(&now));
    OUT("# SGEMM benchmark, %s\n\n", date);
    OUT("One thread, row-major C = A * B (trans 0/0, alpha 1, beta 0) through ti__sgemm_ws "
        "with the workspace a session gives a MatMul or Gemm node of the shape "
        "(ti__sgemm_ws_floats; none where it asks for none), or without one where the row "
        "says so (the stack buffers only, as ti__sgemm_ref). GFLOP/s = 2*M*N*K / median time of many runs, by the thread's CPU time (the wall "
        "clock's median in brackets: lower when other processes took the core); %% of peak "
        "from the CPU-time median. Best ISA of this CPU: %s. Built and run by "
        "./build.sh bench (bench/sgemm.c).\n\n", ti__cpu_isa_name(best));
    OUT("FMA peak probe (12 independent FMA chains, 1 thread, best of 5 by CPU time): AVX2 "
        "%.1f GFLOP/s, AVX-512 %.1f GFLOP/s; peak used below: %.1f GFLOP/s.\n\n", pk2 * 1e-9,
        pk512 * 1e-9, peak * 1e-9);
    /* best down to scalar; the float kernels of amx are avx512vnni's (and avx512's) */
    int isas[TI__ISA_LAST + 1], nisa = 0;
    for (int i = best < TI__ISA_AVX512VNNI ? best : TI__ISA_AVX512VNNI; i >= TI__ISA_SCALAR; i--)
        isas[nisa++] = i;
    if (argc > 3 && atoi(argv[3]) > 0 && atoi(argv[3]) < nisa) nisa = atoi(argv[3]);
    OUT("| shape (M x N x K) |");
    for (int i = 0; i < nisa; i++) OUT(" %s GFLOP/s | %% peak |", ti__cpu_isa_name(isas[i]));
    OUT("\n|---|");
    for (int i = 0; i < nisa; i++) OUT("---:|---:|");
    OUT("\n");
    double pw_flops = 0, pw_time[TI__ISA_LAST + 1] = {0};
    for (size_t si = 0; si < NSHAPES; si++) {
        const shape *s = custom.m > 0 ? &custom : &SHAPES[si];
        if (custom.m > 0 && si > 0) break;
        if (only != NULL && strstr(s->name, only) == NULL) continue;
        double flops = 2.0 * (double)s->m * (double)s->n * (double)s->k;
        OUT("| %s (%zu x %zu x %zu) |", s->name, s->m, s->n, s->k);
        for (int i = 0; i < nisa; i++) {
            ti__cpu_force_isa(isas[i]);
            double med, wall;
            time_shape(s, isas[i] == TI__ISA_SCALAR ? 0.3 : 0.6, &med, &wall);
            OUT(" %.1f [%.1f] | %.0f%% |", flops / med * 1e-9, flops / wall * 1e-9,
                peak > 0 ? 100 * flops / med / peak : 0);
            if (s->pointwise) pw_time[i] += med;
        }
        if (s->pointwise) pw_flops += flops;
        OUT("\n");
        fputs(rep + shown, stdout); /* progress: what was added */
        fflush(stdout);
        shown = len < sizeof rep ? len : sizeof rep - 1;
    }
    ti__cpu_force_isa(-1);
    if (pw_flops > 0) {
        OUT("| all pointwise shapes together (sum of medians) |");
        for (int i = 0; i < nisa; i++)
            OUT(" %.1f | %.0f%% |", pw_flops / pw_time[i] * 1e-9,
                peak > 0 ? 100 * pw_flops / pw_time[i] / peak : 0);
        OUT("\n");
    }
    if (load0 >= 0)
        OUT("\nLoad average (1 min) at the start: %.2f, at the end: %.2f, on %d CPUs; a load "
            "above 1 means other processes shared the CPUs, caches and memory.\n", load0,
            load_average(), ti__cpu_count());
    fputs(rep + shown, stdout);
    if (path != NULL) { /* the whole report, into the file */
        FILE *f = fopen(path, "w");
        if (f == NULL || fputs(rep, f) < 0) {
            fprintf(stderr, "cannot write %s\n", path);
            if (f != NULL) fclose(f);
            return 1;
        }
        fclose(f);
    }
    return 0;
}
