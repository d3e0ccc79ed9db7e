/* ti_bench: times one model through the public tinyinfer API for bench/peers.py, which
 * runs it in its own process so that the peak RSS it reports belongs to one model only.
 * Loads the model, creates a CPU session with the given thread count, feeds the input from
 * a .npy file (same bytes every peer gets), runs --warmup untimed runs, then --runs timed
 * ones, optionally saves output 0 as .npy, and prints one JSON line on stdout:
 *   {"peer":"tinyinfer","threads":T,"load_ms":L,"times_ms":[...],"median_ms":M,
 *    "p90_ms":P,"rss_kb":R,"rss_base_kb":B,"cpu_median_ms":C}
 * cpu_median_ms: the median CPU time of the calling thread per run (CLOCK_THREAD_CPUTIME_ID):
 * at 1 thread the run's own work, without the time other processes held the core, which
 * is what to compare on a shared machine; at more threads only the caller's share.
 * rss_kb is the peak resident set (VmHWM of /proc/self/status; getrusage's ru_maxrss where
 * there is no /proc, but on Linux that one carries the parent's peak through fork and exec,
 * which would charge bench/peers.py's Python process to every model); rss_base_kb is the
 * resident set before the model was read (the process without tinyinfer's data). Errors: message on
 * stderr, exit 1; usage: exit 2.
 * Build: cc -O2 -I. -Itests/harness bench/ti_bench.c -o build/ti_bench -lm -pthread */
#define _POSIX_C_SOURCE 200809L
#define TINYINFER_IMPLEMENTATION
#include "tinyinfer.h"
#include "testdir.h"

#include <sys/resource.h>
#include <time.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static double thread_cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Resident set now, in KiB (Linux /proc/self/statm; 0 elsewhere). */
static long rss_now_kb(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long size = 0, res = 0;
    if (!f) return 0;
    if (fscanf(f, "%ld %ld", &size, &res) != 2) res = 0;
    fclose(f);
    return res * 4; /* pages of 4 KiB on x86-64 and aarch64 Linux defaults */
}

/* Peak resident set, in KiB: VmHWM, which exec resets, else ru_maxrss. */
static long rss_peak_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof(line), f))
        if (strncmp(line, "VmHWM:", 6) == 0) kb = atol(line + 6);
    if (f) fclose(f);
    if (kb < 0) {
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        kb = (long)ru.ru_maxrss;
    }
    return kb;
}

/* Nearest-rank quantile of sorted v[0..n-1], q in [0, 1]. */
static double quantile(const double *v, int n, double q)
{
    int k = (int)(q * (double)n + 0.999999) - 1;
    if (k < 0) k = 0;
    if (k >= n) k = n - 1;
    return v[k];
}

static void usage(void)
{
    fprintf(stderr, "usage: ti_bench MODEL --input X.npy [--threads N] [--warmup W] [--runs R]\n"
                    "                [--save-output Y.npy]\n");
}

int main(int argc, char **argv)
{
    const char *model_path = NULL, *input_path = NULL, *save_path = NULL;
    int threads = 1, warmup = 5, runs = 50;
    for (int i = 1; i < argc; i++) {
        int v = i + 1 < argc;
        if (strcmp(argv[i], "--threads") == 0 && v) threads = atoi(argv[++i]);
        else if (strcmp(argv[i], "--warmup") == 0 && v) warmup = atoi(argv[++i]);
        else if (strcmp(argv[i], "--runs") == 0 && v) runs = atoi(argv[++i]);
        else if (strcmp(argv[i], "--input") == 0 && v) input_path = argv[++i];
        else if (strcmp(argv[i], "--save-output") == 0 && v) save_path = argv[++i];
        else if (argv[i][0] != '-' && !model_path) model_path = argv[i];
        else {
            usage();
            return 2;
        }
    }
    if (!model_path || !input_path || threads < 1 || warmup < 0 || runs < 1) {
        usage();
        return 2;
    }

    long rss_base = rss_now_kb();
    ti_error err;
    memset(&err, 0, sizeof(err));
    char msg[512];
    td_tensor in_file;
    memset(&in_file, 0, sizeof(in_file));
    ti_model *m = NULL;
    ti_session *s = NULL;
    double *times = NULL;
    int rc = 1;

    double t0 = now_ms();
    m = ti_model_load_file(model_path, NULL, &err);
    if (!m) goto fail;
    ti_session_desc desc;
    memset(&desc, 0, sizeof(desc));
    desc.backend = TI_BACKEND_CPU;
    desc.num_threads = threads;
    s = ti_session_create(m, &desc, &err);
    if (!s) goto fail;
    double load_ms = now_ms() - t0;

    if (td_load_tensor(input_path, &in_file, msg, sizeof(msg)) != TI_OK) {
        fprintf(stderr, "ti_bench: %s\n", msg);
        goto done;
    }
    ti_tensor *in = ti_session_input(s, 0);
    if (!in || in->dtype != in_file.t.dtype || in->size_bytes != in_file.t.size_bytes) {
        fprintf(stderr, "ti_bench: %s: input 0 is %s with %zu bytes, %s holds %s with %zu\n",
                model_path, in ? ti_dtype_name(in->dtype) : "?", in ? in->size_bytes : 0,
                input_path, ti_dtype_name(in_file.t.dtype), in_file.t.size_bytes);
        goto done;
    }
    memcpy(in->data, in_file.t.data, in->size_bytes);

    times = (double *)malloc((size_t)runs * 2 * sizeof(double));
    if (!times) {
        fprintf(stderr, "ti_bench: out of memory\n");
        goto done;
    }
    for (int r = 0; r < warmup; r++)
        if (ti_session_run(s, &err) != TI_OK) goto fail;
    for (int r = 0; r < runs; r++) {
        double a = now_ms(), ca = thread_cpu_ms();
        if (ti_session_run(s, &err) != TI_OK) goto fail;
        times[r] = now_ms() - a;
        times[runs + r] = thread_cpu_ms() - ca;
    }
    if (save_path) {
        const ti_tensor *out = ti_session_output(s, 0);
        if (!out || !td_save_npy(save_path, out, msg, sizeof(msg))) {
            fprintf(stderr, "ti_bench: %s\n", out ? msg : "no output 0");
            goto done;
        }
    }
    ti_session_info info;
    int nthreads = ti_session_get_info(s, &info) == TI_OK ? info.num_threads : threads;

    printf("{\"peer\":\"tinyinfer\",\"threads\":%d,\"load_ms\":%.3f,\"times_ms\":[", nthreads,
           load_ms);
    for (int r = 0; r < runs; r++) printf("%s%.4f", r ? "," : "", times[r]);
    qsort(times, (size_t)runs, sizeof(double), cmp_double);
    qsort(times + runs, (size_t)runs, sizeof(double), cmp_double);
    printf("],\"median_ms\":%.4f,\"p90_ms\":%.4f,\"rss_kb\":%ld,\"rss_base_kb\":%ld,"
           "\"cpu_median_ms\":%.4f}\n",
           quantile(times, runs, 0.5), quantile(times, runs, 0.9), rss_peak_kb(), rss_base,
           quantile(times + runs, runs, 0.5));
    rc = 0;
    goto done;
fail:
    fprintf(stderr, "ti_bench: %s\n", err.message[0] ? err.message : ti_status_string(err.code));
done:
    free(times);
    td_tensor_free(&in_file);
    ti_session_destroy(s);
    ti_model_free(m);
    return rc;
}
