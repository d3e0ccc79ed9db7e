/* Load and session-creation time of one model, one process: the wall-clock milliseconds of
 * ti_model_load_file, ti_session_create (CPU backend), the first run and the median of the
 * runs after it. Each process starts cold, as an app does: run it several times, with
 * pauses, against the builds to compare (bench/results/load-2026-12-05-s54.md).
 *
 * Usage: bench_load MODEL [THREADS] [RUNS]   (THREADS default 1, RUNS default 20)
 * Prints: load L create C first F median M (ms) peak P (MiB: the process's peak resident set,
 * VmHWM, where /proc/self/status has it; -1 elsewhere) */
#define _POSIX_C_SOURCE 200809L
#define TINYINFER_IMPLEMENTATION
#include "tinyinfer.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + 1e-6 * (double)ts.tv_nsec;
}

/* VmHWM of /proc/self/status in MiB, or -1 */
static double peak_mib(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    double kib = -1;
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, "VmHWM:", 6) == 0) kib = atof(line + 6);
    if (f != NULL) fclose(f);
    return kib < 0 ? -1 : kib / 1024;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: bench_load MODEL [THREADS] [RUNS]\n");
        return 2;
    }
    int threads = argc > 2 ? atoi(argv[2]) : 1, runs = argc > 3 ? atoi(argv[3]) : 20;
    if (runs < 1 || runs > 1000) runs = 20;
    ti_error err;
    double t0 = now_ms();
    ti_model *m = ti_model_load_file(argv[1], NULL, &err);
    double t1 = now_ms();
    if (m == NULL) {
        fprintf(stderr, "bench_load: %s\n", err.message);
        return 1;
    }
    ti_session_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.num_threads = threads;
    desc.backend = TI_BACKEND_CPU;
    ti_session *s = ti_session_create(m, &desc, &err);
    double t2 = now_ms();
    if (s == NULL) {
        fprintf(stderr, "bench_load: %s\n", err.message);
        ti_model_free(m);
        return 1;
    }
    ti_status st = ti_session_run(s, &err);
    double t3 = now_ms(), times[1000];
    for (int r = 0; r < runs && st == TI_OK; r++) {
        double a = now_ms();
        st = ti_session_run(s, &err);
        times[r] = now_ms() - a;
    }
    if (st != TI_OK) fprintf(stderr, "bench_load: %s\n", err.message);
    else {
        qsort(times, (size_t)runs, sizeof times[0], cmp_double);
        printf("load %.1f create %.1f first %.1f median %.2f peak %.1f\n", t1 - t0, t2 - t1,
               t3 - t2, times[runs / 2], peak_mib());
    }
    ti_session_destroy(s);
    ti_model_free(m);
    return st == TI_OK ? 0 : 1;
}
