/* Many sessions on one model in many threads: the model is loaded once and shared
 * read-only; each of T threads (default 8) creates its own session at the same moment
 * (so the lazy process-wide init, the ISA detection in cpu/isa.c, is first reached by
 * all of them together) and runs it R times (default 1,000) on inputs that change from
 * run to run. Every output must be byte-identical to what one session on one thread
 * computes for the same input, afterwards, on the main thread. Two of the sessions use a
 * thread pool of 2, so pools run side by side with single-threaded sessions.
 *   test_threads [--threads T] [--runs R] [MODEL...]   (default: the bundled MobileNet)
 * build.sh runs it plainly (8 x 1,000 on mobilenet_v1_0.25_128_quant.tflite, 8 x 25 on
 * light_squeezenet.onnx, a float model 5x slower) and under ThreadSanitizer with fewer runs
 * (TSan makes each run 5-15x slower; races show on the first runs, not the thousandth).
 * --own-stacks: the test's threads (and main's work) get 8 MiB stacks of their own, the
 * thread pools' workers whatever the library gives them: build.sh runs it so under
 * `ulimit -s 48`, where glibc's default thread stack is 48 KiB, less than a run takes
 * (about 110 KiB): workers with the default crash; the pool asks for 512 KiB.
 * Prints "N passed, N failed, N skipped". */
#define _POSIX_C_SOURCE 200809L
#define TINYINFER_IMPLEMENTATION
#include "tinyinfer.h"
#include "ti_test.h"

#include <pthread.h>

enum { MAX_THREADS = 64, NUM_INPUTS = 4 };
static pthread_attr_t *g_attr; /* the test's own threads: NULL (the default) or 8 MiB */

typedef struct shared {
    const ti_model *model;
    int runs;
    int n_threads;
    unsigned char *inputs[NUM_INPUTS]; /* input 0's bytes, one per variant */
    size_t in_bytes;
    pthread_mutex_t mu; /* start barrier */
    pthread_cond_t cv;
    int waiting, go;
} shared;

typedef struct worker {
    shared *sh;
    int index;
    /* results, read by the main thread after the join */
    int created, runs_done, run_errors, mismatches, wrong_size, threads_got;
    char error[320];
    unsigned char *first[NUM_INPUTS]; /* output 0 of the first run on each input variant */
    size_t out_bytes;
} worker;

static unsigned rnd(unsigned *s) {
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

/* Fills buf (a tensor of dtype dt, n bytes) with seeded values a model can take. */
static void fill(unsigned char *buf, size_t n, ti_dtype dt, unsigned seed) {
    if (dt == TI_DTYPE_F32) {
        for (size_t i = 0; i + 4 <= n; i += 4) {
            float v = (float)(rnd(&seed) & 0xffff) / 32768.0f - 1.0f;
            memcpy(buf + i, &v, 4);
        }
    } else {
        for (size_t i = 0; i < n; i++) buf[i] = (unsigned char)rnd(&seed);
    }
}

static void *work(void *arg) {
    worker *w = (worker *)arg;
    shared *sh = w->sh;
    ti_error err;
    ti_session_desc d;
    memset(&d, 0, sizeof d);
    d.backend = TI_BACKEND_CPU;
    d.num_threads = w->index < 2 ? 2 : 1;

    pthread_mutex_lock(&sh->mu); /* all threads create their sessions together */
    if (++sh->waiting == sh->n_threads) {
        sh->go = 1;
        pthread_cond_broadcast(&sh->cv);
    }
    while (!sh->go) pthread_cond_wait(&sh->cv, &sh->mu);
    pthread_mutex_unlock(&sh->mu);

    ti_session *s = ti_session_create(sh->model, &d, &err);
    if (s == NULL) {
        memcpy(w->error, err.message, sizeof w->error);
        return NULL;
    }
    w->created = 1;
    ti_session_info info; /* the pool started every thread asked for (Windows' too) */
    w->threads_got = ti_session_get_info(s, &info) == TI_OK ? info.num_threads : -1;
    ti_tensor *in = ti_session_input(s, 0);
    if (in == NULL || in->size_bytes != sh->in_bytes) {
        w->wrong_size = 1;
        ti_session_destroy(s);
        return NULL;
    }
    for (int r = 0; r < sh->runs; r++) {
        int k = (w->index + r) % NUM_INPUTS;
        memcpy(in->data, sh->inputs[k], sh->in_bytes);
        if (ti_session_run(s, &err) != TI_OK) {
            if (w->run_errors++ == 0) memcpy(w->error, err.message, sizeof w->error);
            continue;
        }
        const ti_tensor *out = ti_session_output(s, 0);
        if (w->out_bytes == 0) w->out_bytes = out->size_bytes;
        if (out->size_bytes != w->out_bytes) {
            w->wrong_size = 1;
            continue;
        }
        if (w->first[k] == NULL) {
            w->first[k] = (unsigned char *)malloc(w->out_bytes);
            if (w->first[k] == NULL) {
                w->run_errors++;
                continue;
            }
            memcpy(w->first[k], out->data, w->out_bytes);
        } else if (memcmp(w->first[k], out->data, w->out_bytes) != 0) {
            w->mismatches++;
        }
        w->runs_done++;
    }
    ti_session_destroy(s);
    return NULL;
}

static void test_model(const char *path, int n_threads, int runs) {
    printf("%s: %d sessions on %d threads, %d runs each\n", path, n_threads, n_threads, runs);
    fflush(stdout);
    ti_error err;
    ti_model *m = ti_model_load_file(path, NULL, &err);
    if (!TI_CHECK(m != NULL)) {
        printf("  %s\n", err.message);
        return;
    }
    shared sh;
    memset(&sh, 0, sizeof sh);
    sh.model = m;
    sh.runs = runs;
    sh.n_threads = n_threads;
    pthread_mutex_init(&sh.mu, NULL);
    pthread_cond_init(&sh.cv, NULL);
    ti_value_info vi;
    TI_CHECK(ti_model_input_info(m, 0, &vi) == TI_OK);
    size_t numel = 1;
    for (int i = 0; i < vi.rank; i++) numel *= vi.shape[i] > 0 ? (size_t)vi.shape[i] : 1;
    sh.in_bytes = numel * ti_dtype_size(vi.dtype);
    int inputs_ok = sh.in_bytes > 0;
    for (int k = 0; k < NUM_INPUTS && inputs_ok; k++) {
        sh.inputs[k] = (unsigned char *)malloc(sh.in_bytes);
        if (sh.inputs[k] == NULL) inputs_ok = 0;
        else fill(sh.inputs[k], sh.in_bytes, vi.dtype, 1234u + 977u * (unsigned)k);
    }
    worker w[MAX_THREADS];
    pthread_t th[MAX_THREADS];
    int started = 0;
    memset(w, 0, sizeof w);
    if (TI_CHECK(inputs_ok)) {
        for (int t = 0; t < n_threads; t++) {
            w[t].sh = &sh;
            w[t].index = t;
            if (pthread_create(&th[t], g_attr, work, &w[t]) != 0) break;
            started++;
        }
        if (started < n_threads) { /* release the ones waiting at the barrier */
            pthread_mutex_lock(&sh.mu);
            sh.go = 1;
            pthread_cond_broadcast(&sh.cv);
            pthread_mutex_unlock(&sh.mu);
        }
        for (int t = 0; t < started; t++) pthread_join(th[t], NULL);
        TI_CHECK(started == n_threads);
    }

    /* the reference: one session, one thread, after all the others are gone */
    ti_session_desc d;
    memset(&d, 0, sizeof d);
    d.backend = TI_BACKEND_CPU;
    d.num_threads = 1;
    ti_session *ref = inputs_ok ? ti_session_create(m, &d, &err) : NULL;
    int ref_ok = TI_CHECK(ref != NULL);
    long total_runs = 0, mismatches = 0, errors = 0;
    for (int k = 0; k < NUM_INPUTS && ref_ok; k++) {
        memcpy(ti_session_input(ref, 0)->data, sh.inputs[k], sh.in_bytes);
        if (!TI_CHECK(ti_session_run(ref, &err) == TI_OK)) {
            printf("  reference run: %s\n", err.message);
            break;
        }
        const ti_tensor *out = ti_session_output(ref, 0);
        for (int t = 0; t < started; t++) {
            if (w[t].first[k] == NULL) continue;
            if (w[t].out_bytes != out->size_bytes ||
                memcmp(w[t].first[k], out->data, out->size_bytes) != 0) {
                printf("  thread %d, input %d: output differs from the single-threaded run\n",
                       t, k);
                mismatches++;
            }
        }
    }
    for (int t = 0; t < started; t++) {
        if (!w[t].created) printf("  thread %d: ti_session_create failed: %s\n", t, w[t].error);
        if (w[t].run_errors) printf("  thread %d: %d failed runs: %s\n", t, w[t].run_errors, w[t].error);
        if (w[t].mismatches) printf("  thread %d: %d runs differ from its earlier runs\n", t, w[t].mismatches);
        if (w[t].wrong_size) printf("  thread %d: a tensor had an unexpected size\n", t);
        int want = t < 2 ? 2 : 1; /* the workers' num_threads */
        if (w[t].created && w[t].threads_got != want)
            printf("  thread %d: a session of %d threads reports %d\n", t, want, w[t].threads_got);
        total_runs += w[t].runs_done;
        mismatches += w[t].mismatches;
        errors += w[t].run_errors + !w[t].created + w[t].wrong_size +
                  (w[t].created && w[t].threads_got != want);
        for (int k = 0; k < NUM_INPUTS; k++) free(w[t].first[k]);
    }
    TI_CHECK(errors == 0);
    TI_CHECK(mismatches == 0);
    TI_CHECK(total_runs == (long)n_threads * runs); /* every run happened and was compared */
    printf("  %ld runs, %ld differing from the single-threaded reference\n", total_runs,
           mismatches);
    ti_session_destroy(ref);
    for (int k = 0; k < NUM_INPUTS; k++) free(sh.inputs[k]);
    pthread_mutex_destroy(&sh.mu);
    pthread_cond_destroy(&sh.cv);
    ti_model_free(m);
}

typedef struct run_args {
    const char **models;
    int n_models, n_threads, runs;
} run_args;
static void *run_all(void *arg) {
    const run_args *a = (const run_args *)arg;
    for (int i = 0; i < a->n_models; i++) test_model(a->models[i], a->n_threads, a->runs);
    return NULL;
}

int main(int argc, char **argv) {
    int n_threads = 8, runs = 1000, n_models = 0, own_stacks = 0;
    const char *models[16];
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--own-stacks") == 0) {
            own_stacks = 1;
        } else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            n_threads = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
            runs = atoi(argv[++i]);
        } else if (argv[i][0] == '-' || n_models == 16) {
            fprintf(stderr, "usage: test_threads [--threads T] [--runs R] [--own-stacks] "
                            "[MODEL...]\n");
            return 2;
        } else {
            models[n_models++] = argv[i];
        }
    }
    if (n_threads < 1 || n_threads > MAX_THREADS || runs < 1) {
        fprintf(stderr, "--threads: 1..%d, --runs: at least 1\n", MAX_THREADS);
        return 2;
    }
    if (n_models == 0) models[n_models++] = "tests/data/mobilenet_v1_0.25_128_quant.tflite";
    run_args a;
    a.models = models;
    a.n_models = n_models;
    a.n_threads = n_threads;
    a.runs = runs;
    pthread_attr_t attr;
    pthread_t main_work;
    if (own_stacks && TI_CHECK(pthread_attr_init(&attr) == 0)) {
        TI_CHECK(pthread_attr_setstacksize(&attr, (size_t)8 << 20) == 0);
        g_attr = &attr;
        if (TI_CHECK(pthread_create(&main_work, &attr, run_all, &a) == 0))
            pthread_join(main_work, NULL);
        pthread_attr_destroy(&attr);
    } else {
        run_all(&a);
    }
    return ti_test_summary();
}
