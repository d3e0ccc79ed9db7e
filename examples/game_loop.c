/* game_loop: a fixed-timestep game loop that runs a model every N frames without making
 * any frame wait for it, and what that costs the frames.
 *   game_loop [MODEL] [--fps F] [--frames N] [--every K] [--work-ms W] [--backend B]
 *             [--mode auto|thread|async]
 * Each frame does W ms of game work (a busy loop standing in for physics and drawing),
 * then sleeps to the next tick of 1000/F ms. The loop runs twice: N frames without the
 * model, then N frames that start an inference every K frames. How it runs off the frame:
 *   thread  a worker thread owns the session; the frame hands it a request and, later,
 *           picks up the result, touching only a mutex the worker holds for a few
 *           instructions (tried with pthread_mutex_trylock: never waited on);
 *   async   ti_session_run_async at the request, ti_session_wait only K-1 frames later,
 *           when the GPU has had K-1 ticks to finish (the OpenCL backend runs its GPU part
 *           after run_async returns; on the CPU the whole run is inside run_async, which
 *           would stall the frame, so this mode is for OpenCL);
 *   auto    (default) async when the session runs on OpenCL, thread otherwise.
 * A request that finds the previous inference still running is skipped, never waited for.
 * Every result is checked against the same input run once before the loop. Prints the
 * frame-time percentiles of both loops, the inference counts, and "blocked frames": frames
 * in which the main thread waited on the model (always 0 in thread mode by construction;
 * in async mode, frames whose ti_session_wait took over 1 ms or half a synchronous run,
 * whichever is less, and on the CPU backend frames whose ti_session_run_async did, the whole
 * run being inside it: a model faster than 1 ms still counts). The exit code is 1 when a
 * frame blocked, no result arrived or a result was wrong; build.sh asserts those, never
 * the timings (a loaded 2-core CI box misses ticks for reasons of its own).
 * POSIX (pthreads, clock_gettime, nanosleep). Build from the repository root:
 *   cc -O2 -I. examples/game_loop.c -o game_loop -lm -lpthread */
#define _POSIX_C_SOURCE 200809L
#define TINYINFER_IMPLEMENTATION
#include "tinyinfer.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static void sleep_until(double t_ms) {
    double left = t_ms - now_ms();
    if (left <= 0) return;
    struct timespec ts;
    ts.tv_sec = (time_t)(left / 1e3);
    ts.tv_nsec = (long)((left - (double)ts.tv_sec * 1e3) * 1e6);
    nanosleep(&ts, NULL);
}

/* W ms of stand-in game work; the result is kept so the compiler cannot drop the loop */
static volatile double g_sink;
static void game_work(double ms) {
    double end = now_ms() + ms, x = g_sink;
    while (now_ms() < end)
        for (int i = 0; i < 200; i++) x = x * 0.999 + 0.001;
    g_sink = x;
}

/* ---- thread mode: a worker that owns the session ---------------------------------------- */
typedef struct worker {
    ti_session *s;
    pthread_t th;
    pthread_mutex_t mu; /* held only to read or flip the fields below */
    pthread_cond_t cv;  /* the worker sleeps on it between requests */
    int request;        /* 1: the frame asked for a run (input written) */
    int busy;           /* 1: the worker is running the model */
    int done;           /* 1: a result is ready for the frame to take */
    int quit;
    ti_status status;
    ti_error err;
} worker;

static void *worker_main(void *arg) {
    worker *w = (worker *)arg;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->request && !w->quit) pthread_cond_wait(&w->cv, &w->mu);
        if (w->quit) break;
        w->request = 0;
        w->busy = 1;
        pthread_mutex_unlock(&w->mu);
        ti_status st = ti_session_run(w->s, &w->err); /* the frame never waits for this */
        pthread_mutex_lock(&w->mu);
        w->status = st;
        w->busy = 0;
        w->done = 1;
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

/* ---- percentiles ------------------------------------------------------------------------ */
static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void report(const char *what, double *t, int n, double budget) {
    int over = 0;
    for (int i = 0; i < n; i++) over += t[i] > budget;
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    printf("%-18s p50 %6.2f  p90 %6.2f  p99 %6.2f  max %6.2f ms; %d of %d frames over the "
           "%.2f ms budget\n", what, t[n / 2], t[(n * 9) / 10], t[(n * 99) / 100], t[n - 1], over,
           n, budget);
}

enum { NUM_INPUTS = 2 };

int main(int argc, char **argv) {
    const char *path = "tests/data/mobilenet_v1_0.25_128_quant.tflite";
    double fps = 60, work_ms = 2;
    int frames = 300, every = 6, mode = 0; /* 0 auto, 1 thread, 2 async */
    ti_backend backend = TI_BACKEND_AUTO;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--fps") == 0 && v) fps = atof(argv[++i]);
        else if (strcmp(a, "--frames") == 0 && v) frames = atoi(argv[++i]);
        else if (strcmp(a, "--every") == 0 && v) every = atoi(argv[++i]);
        else if (strcmp(a, "--work-ms") == 0 && v) work_ms = atof(argv[++i]);
        else if (strcmp(a, "--backend") == 0 && v) {
            i++;
            backend = strcmp(v, "cpu") == 0 ? TI_BACKEND_CPU
                      : strcmp(v, "opencl") == 0 ? TI_BACKEND_OPENCL : TI_BACKEND_AUTO;
        } else if (strcmp(a, "--mode") == 0 && v) {
            i++;
            mode = strcmp(v, "thread") == 0 ? 1 : strcmp(v, "async") == 0 ? 2 : 0;
        } else if (a[0] != '-') path = a;
        else {
            fprintf(stderr, "usage: game_loop [MODEL] [--fps F] [--frames N] [--every K] "
                            "[--work-ms W] [--backend auto|cpu|opencl] [--mode auto|thread|async]\n");
            return 2;
        }
    }
    if (!(fps > 0 && fps <= 1000) || frames < 10 || every < 2 || !(work_ms >= 0)) {
        fprintf(stderr, "--fps 1..1000, --frames at least 10, --every at least 2, --work-ms >= 0\n");
        return 2;
    }
    double budget = 1000.0 / fps;

    ti_error err;
    ti_model *m = ti_model_load_file(path, NULL, &err);
    ti_session *s = NULL;
    ti_session_desc d;
    memset(&d, 0, sizeof d);
    d.backend = backend;
    d.num_threads = 1; /* the game keeps the other cores */
    if (m == NULL || (s = ti_session_create(m, &d, &err)) == NULL) {
        fprintf(stderr, "%s\n", err.message);
        ti_model_free(m);
        return 1;
    }
    ti_session_info info;
    ti_session_get_info(s, &info);
    if (mode == 0) mode = info.backend == TI_BACKEND_OPENCL ? 2 : 1;
    ti_tensor *in = ti_session_input(s, 0);

    /* two "camera frames" and, for each, the reference output of a plain synchronous run */
    unsigned char *input[NUM_INPUTS], *ref[NUM_INPUTS];
    size_t out_bytes = 0;
    double sync_ms = 0;
    for (int k = 0; k < NUM_INPUTS; k++) {
        input[k] = (unsigned char *)malloc(in->size_bytes);
        if (input[k] == NULL) return 1;
        unsigned seed = 17u + 31u * (unsigned)k;
        for (size_t i = 0; i < in->size_bytes; i++) {
            seed = seed * 1664525u + 1013904223u;
            input[k][i] = (unsigned char)(seed >> 24);
        }
        if (in->dtype == TI_DTYPE_F32) /* floats in [-1, 1], not random bit patterns */
            for (size_t i = 0; i < in->size_bytes / 4; i++) {
                float f = (float)input[k][i * 4] / 127.5f - 1.0f;
                memcpy(input[k] + i * 4, &f, 4);
            }
        memcpy(in->data, input[k], in->size_bytes);
        double t0 = now_ms();
        if (ti_session_run(s, &err) != TI_OK) {
            fprintf(stderr, "%s\n", err.message);
            return 1;
        }
        sync_ms = now_ms() - t0;
        const ti_tensor *out = ti_session_output(s, 0);
        out_bytes = out->size_bytes;
        ref[k] = (unsigned char *)malloc(out_bytes);
        if (ref[k] == NULL) return 1;
        memcpy(ref[k], out->data, out_bytes);
    }
    /* a wait this long blocked the frame: 1 ms, or half a run of a faster model */
    const double block_ms = sync_ms / 2 < 1.0 ? sync_ms / 2 : 1.0;
    printf("%s on %s (%s mode), one run %.1f ms; %.0f fps (%.2f ms budget), %.1f ms of game "
           "work a frame, a run every %d frames\n", path,
           info.backend == TI_BACKEND_OPENCL ? "OpenCL" : "the CPU",
           mode == 1 ? "worker thread" : "run_async/wait", sync_ms, fps, budget, work_ms, every);

    worker w;
    memset(&w, 0, sizeof w);
    w.s = s;
    if (mode == 1) {
        pthread_mutex_init(&w.mu, NULL);
        pthread_cond_init(&w.cv, NULL);
        if (pthread_create(&w.th, NULL, worker_main, &w) != 0) {
            fprintf(stderr, "cannot start the worker thread\n");
            return 1;
        }
    }

    double *t_off = (double *)malloc(sizeof(double) * (size_t)frames);
    double *t_on = (double *)malloc(sizeof(double) * (size_t)frames);
    if (t_off == NULL || t_on == NULL) return 1;
    int started = 0, finished = 0, wrong = 0, skipped = 0, blocked = 0, failed_runs = 0;
    int pending = -1;      /* which input the inference in flight was given, -1: none */
    int pending_frame = 0; /* the frame it started in */
    long latency_frames = 0;
    double wait_ms_max = 0;
    for (int pass = 0; pass < 2; pass++) {
        double *t = pass ? t_on : t_off;
        double tick = now_ms();
        for (int f = 0; f < frames; f++) {
            double t0 = now_ms();
            game_work(work_ms);
            if (pass == 1) {
                /* 1. pick up a finished result, without waiting */
                if (pending >= 0 && mode == 1 && pthread_mutex_trylock(&w.mu) == 0) {
                    int done = w.done;
                    ti_status st = w.status;
                    w.done = 0;
                    pthread_mutex_unlock(&w.mu);
                    if (done) {
                        const ti_tensor *out = ti_session_output(s, 0);
                        if (st != TI_OK) failed_runs++;
                        else if (memcmp(out->data, ref[pending], out_bytes) != 0) wrong++;
                        finished++;
                        latency_frames += f - pending_frame;
                        pending = -1;
                    }
                } else if (pending >= 0 && mode == 2 && f - pending_frame >= every - 1) {
                    double w0 = now_ms();
                    ti_status st = ti_session_wait(s, &err);
                    double wm = now_ms() - w0;
                    if (wm > wait_ms_max) wait_ms_max = wm;
                    if (wm > block_ms) blocked++; /* the GPU was not done: this frame waited */
                    if (st != TI_OK) failed_runs++;
                    else if (memcmp(ti_session_output(s, 0)->data, ref[pending], out_bytes) != 0)
                        wrong++;
                    finished++;
                    latency_frames += f - pending_frame;
                    pending = -1;
                }
                /* 2. every K frames, a new request, unless the last one is still running */
                if (f % every == 0) {
                    if (pending >= 0) {
                        skipped++;
                    } else {
                        int k = (f / every) % NUM_INPUTS;
                        if (mode == 1) {
                            if (pthread_mutex_trylock(&w.mu) == 0) {
                                /* the worker is idle (pending < 0): the input is ours */
                                memcpy(in->data, input[k], in->size_bytes);
                                w.request = 1;
                                pthread_cond_signal(&w.cv);
                                pthread_mutex_unlock(&w.mu);
                                pending = k, pending_frame = f, started++;
                            } else {
                                skipped++;
                            }
                        } else {
                            memcpy(in->data, input[k], in->size_bytes);
                            double a0 = now_ms();
                            ti_status st = ti_session_run_async(s, &err);
                            /* on the CPU the whole run is in here: the frame blocked */
                            if (now_ms() - a0 > block_ms && info.backend != TI_BACKEND_OPENCL)
                                blocked++;
                            if (st != TI_OK) failed_runs++;
                            else pending = k, pending_frame = f, started++;
                        }
                    }
                }
            }
            t[f] = now_ms() - t0;
            tick += budget;
            if (now_ms() > tick + budget) tick = now_ms(); /* far behind: do not spiral */
            sleep_until(tick);
        }
    }
    if (mode == 1) { /* after the loop: the last inference may still be running */
        pthread_mutex_lock(&w.mu);
        w.quit = 1;
        pthread_cond_signal(&w.cv);
        pthread_mutex_unlock(&w.mu);
        pthread_join(w.th, NULL);
        pthread_mutex_destroy(&w.mu);
        pthread_cond_destroy(&w.cv);
    } else {
        ti_session_wait(s, NULL);
    }

    printf("frame time (game work + inference bookkeeping, without the sleep to the tick):\n");
    report("inference off:", t_off, frames, budget);
    report("inference on:", t_on, frames, budget);
    printf("inferences: %d started, %d finished (%d wrong, %d failed), %d requests skipped "
           "(the previous one still running), %.1f frames from request to result\n",
           started, finished, wrong, failed_runs, skipped,
           finished ? (double)latency_frames / finished : 0.0);
    printf("blocked frames (the main thread waited on the model): %d", blocked);
    if (mode == 2) printf(" (longest ti_session_wait %.2f ms)", wait_ms_max);
    printf("\n");

    int fails = (blocked != 0) + (finished == 0) + (wrong != 0) + (failed_runs != 0);
    printf("%d passed, %d failed\n", 4 - fails, fails);
    for (int k = 0; k < NUM_INPUTS; k++) {
        free(input[k]);
        free(ref[k]);
    }
    free(t_off);
    free(t_on);
    ti_session_destroy(s);
    ti_model_free(m);
    return fails ? 1 : 0;
}
