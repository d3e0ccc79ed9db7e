/* A small thread pool of our own (no OpenMP): persistent workers that split a range
 * [0, n) into chunks. Each thread first takes the chunks of its own contiguous block, the
 * same part of the range job after job (so a layer reads what the same core wrote for the
 * layer before, from its own cache), then those others have left, from their blocks' ends
 * (so uneven cores, big.LITTLE or a core busy elsewhere, balance).
 * Relies on core/sync.c's threads (pthreads, or Windows') unless TI_NO_THREADS. Must not
 * allocate in ti__parallel_for. */
#if !defined(TI_NO_THREADS) && defined(_WIN32)
TI__EXTERN_C __declspec(dllimport) unsigned long __stdcall GetActiveProcessorCount(unsigned short);
#elif !defined(TI_NO_THREADS)
#include <unistd.h>
#endif

TI__PRIVATE int ti__cpu_count(void) {
#if !defined(TI_NO_THREADS) && defined(_WIN32)
    long n = (long)GetActiveProcessorCount(0xffff); /* ALL_PROCESSOR_GROUPS */
#elif !defined(TI_NO_THREADS) && defined(_SC_NPROCESSORS_ONLN)
    long n = sysconf(_SC_NPROCESSORS_ONLN);
#else
    long n = 1;
#endif
    return n < 1 ? 1 : (n > TI_MAX_THREADS ? TI_MAX_THREADS : (int)n);
}

/* Work shared out as ranges [begin, end) of indices, one a participant, each packed as
 * begin << 16 | end in one atomic int (indices below 2^15), `stride` bytes apart from
 * `first`, n of them: participant me takes the front of its own range, else the back of
 * another's, each by one compare-and-swap. The thread pool's chunks and the Winograd
 * convs' items (cpu/conv_fast.c) are taken so. Returns 0 when every range is empty; else 1,
 * with the index in *index and the range it came from in *owner (when not NULL). */
TI__PRIVATE int ti__range_take(ti__atomic_int *first, size_t stride, size_t n, size_t me,
                               size_t *owner, size_t *index) {
    for (size_t k = 0; k < n; k++) {
        size_t o = (me + k) % n;
        ti__atomic_int *r = (ti__atomic_int *)(void *)((char *)(void *)first + o * stride);
        for (;;) {
            unsigned v = (unsigned)ti__atomic_load(r), b = v >> 16, e = v & 0xffffu;
            if (b >= e) break;
            unsigned nv = o == me ? (b + 1) << 16 | e : b << 16 | (e - 1);
            if (ti__atomic_cas(r, (int)v, (int)nv)) {
                *index = o == me ? b : e - 1;
                if (owner != NULL) *owner = o;
                return 1;
            }
        }
    }
    return 0;
}

/* Wall-clock milliseconds (timings in ti_session_info and the profile). */
#include <time.h>
#if defined(_WIN32)
/* QueryPerformanceCounter/Frequency, declared with <windows.h>'s exact types (LARGE_INTEGER
 * is union _LARGE_INTEGER, 8 bytes) so that it may be included before or after */
union _LARGE_INTEGER;
TI__EXTERN_C __declspec(dllimport) int __stdcall QueryPerformanceCounter(union _LARGE_INTEGER *);
TI__EXTERN_C __declspec(dllimport) int __stdcall QueryPerformanceFrequency(union _LARGE_INTEGER *);
TI__PRIVATE double ti__now_ms(void) {
    long long count = 0, freq = 0;
    QueryPerformanceCounter((union _LARGE_INTEGER *)(void *)&count);
    QueryPerformanceFrequency((union _LARGE_INTEGER *)(void *)&freq);
    return freq > 0 ? (double)count * 1000.0 / (double)freq : 0.0;
}
#else
/* gettimeofday: declared by <sys/time.h> whatever feature macros the including file set
 * (clock_gettime needs _POSIX_C_SOURCE, which -std=c99 users do not define) */
#include <sys/time.h>
TI__PRIVATE double ti__now_ms(void) {
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec * 1e3 + (double)tv.tv_usec * 1e-3;
}
#endif

#ifndef TI_NO_THREADS
/* A participant's chunks not yet taken, [begin, end), as begin << 16 | end in one int, on
 * a cache line of its own: its owner takes from the front, others from the back, each by
 * one compare-and-swap (chunks are at most 4 a thread, TI_MAX_THREADS * 4 < 2^15). */
typedef struct ti__tp_slot {
    ti__atomic_int range;
    char pad[64 - sizeof(ti__atomic_int)];
} ti__tp_slot;

struct ti__threadpool {
    ti_allocator al;
    int n_workers; /* threads besides the caller */
    int n_alloc;   /* thread slots allocated */
    ti__thread *threads;
    /* Only for sleeping and waking: taking chunks and finishing them is lock-free. With a
     * mutex taken at a job's start and at each chunk's end, an empty job of 8 chunks on 2
     * threads cost 2.3 us, and past 8 threads the threads queued on it: MobileNetV3-small
     * (49 jobs a run) took a median 1.09 ms on 8 threads of a 16-core Xeon and 1.60 on 16;
     * lock-free 0.99 and 0.95 (bench/results/ab-2026-12-05-s52.md). */
    ti__mutex mu;
    ti__cond work_cv, done_cv;
    int started; /* workers that have taken their participant number (under mu) */
    /* The job in flight. Written by the caller before it publishes the chunks, read by a
     * participant only after it has taken one: the job cannot end, and the next be written,
     * before that chunk is counted done. */
    ti__range_fn fn;
    ti__range_part_fn part_fn; /* used instead of fn when not NULL */
    void *ctx;
    size_t n, chunk;
    /* chunk c is [c * chunk, min(n, (c + 1) * chunk)); participant p (0 the caller, workers
     * 1..n_workers) owns slot p's chunks */
    ti__tp_slot slot[TI_MAX_THREADS];
    /* Chunks of the job not yet done. The caller waits for this alone, not for every worker
     * to have looked at the job: a worker the OS has not scheduled (another process on the
     * core) takes no chunk, and the caller does the work itself instead of waiting a time
     * slice for it. With every worker counted, 2 threads on a 2-core machine with one core
     * busy elsewhere ran mobilenet_v3_small in 47 ms, not 4. */
    ti__atomic_int remaining;
    /* Bumped for each job (and at quit); workers poll it for a while, then sleep on work_cv
     * (counted in sleepers), since a MobileNet run is ~100 jobs of ~0.05 ms and a futex
     * wake-up costs about as much as a job. The caller polls remaining, then sleeps on
     * done_cv with caller_waits set. */
    ti__atomic_int generation, sleepers, caller_waits, quit;
};

/* Polls before sleeping: about this many pause instructions (tens of microseconds). */
#define TI__TP_SPINS 20000
#define TI__TP_STACK ((size_t)512 * 1024) /* bytes: a worker's stack at least */

TI__PRIVATE void ti__tp_relax(void) {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    __builtin_ia32_pause();
#elif defined(__GNUC__) && (defined(__aarch64__) || defined(__arm__))
    __asm__ __volatile__("yield");
#endif
}

/* Takes a chunk for participant me (ti__range_take over the slots' ranges); 0 when none
 * is left. */
TI__PRIVATE int ti__tp_take(ti__threadpool *tp, int me, size_t *chunk) {
    return ti__range_take(&tp->slot[0].range, sizeof(ti__tp_slot), (size_t)tp->n_workers + 1,
                          (size_t)me, NULL, chunk);
}

/* Runs chunk c of the job in flight on participant me. */
TI__PRIVATE void ti__tp_run_chunk(ti__threadpool *tp, int me, size_t c) {
    size_t b = c * tp->chunk, e = b + tp->chunk < tp->n ? b + tp->chunk : tp->n;
    if (tp->part_fn != NULL) tp->part_fn(tp->ctx, me, b, e);
    else tp->fn(tp->ctx, b, e);
}

/* Takes and runs chunks until none is left, then counts them done; the worker that counts
 * the last one wakes the caller if it sleeps. */
TI__PRIVATE void ti__tp_drain(ti__threadpool *tp, int me) {
    size_t c;
    int done = 0;
    while (ti__tp_take(tp, me, &c)) {
        ti__tp_run_chunk(tp, me, c);
        done++;
    }
    if (done > 0 && ti__atomic_add(&tp->remaining, -done) == 0 && me != 0 &&
        ti__atomic_load_sc(&tp->caller_waits)) {
        ti__mutex_lock(&tp->mu); /* the caller is in its wait or about to be */
        ti__cond_signal(&tp->done_cv);
        ti__mutex_unlock(&tp->mu);
    }
}

TI__PRIVATE TI__THREAD_FN(ti__tp_worker) {
    ti__threadpool *tp = (ti__threadpool *)arg;
    ti__mutex_lock(&tp->mu);
    int me = ++tp->started; /* 1..n_workers: its slot of every job */
    ti__mutex_unlock(&tp->mu);
    int seen = 0;
    for (;;) {
        for (int i = 0; i < TI__TP_SPINS && ti__atomic_load(&tp->generation) == seen; i++)
            ti__tp_relax(); /* poll a while for the next job */
        if (ti__atomic_load(&tp->generation) == seen) {
            ti__mutex_lock(&tp->mu);
            ti__atomic_add(&tp->sleepers, 1);
            while (ti__atomic_load_sc(&tp->generation) == seen)
                ti__cond_wait(&tp->work_cv, &tp->mu);
            ti__atomic_add(&tp->sleepers, -1);
            ti__mutex_unlock(&tp->mu);
        }
        if (ti__atomic_load(&tp->quit)) break;
        seen = ti__atomic_load(&tp->generation); /* a later job than it woke for, maybe */
        ti__tp_drain(tp, me);
    }
    return TI__THREAD_RETURN;
}

TI__PRIVATE ti__threadpool *ti__threadpool_create(const ti_allocator *al, int num_threads) {
#if !defined(TI__ATOMIC_GNU) && !defined(TI__ATOMIC_MSVC)
    num_threads = 1; /* no atomic compare-and-swap (core/sync.c): the calling thread alone */
#endif
    if (num_threads <= 1) return NULL;
    if (num_threads > TI_MAX_THREADS) num_threads = TI_MAX_THREADS;
    ti__threadpool *tp = (ti__threadpool *)ti__calloc(al, sizeof *tp);
    if (tp == NULL) return NULL;
    if (al) tp->al = *al;
    tp->threads = (ti__thread *)ti__calloc(al, sizeof(ti__thread) * (size_t)num_threads);
    if (tp->threads == NULL) {
        ti__free(al, tp, sizeof *tp);
        return NULL;
    }
    tp->n_alloc = num_threads;
    ti__mutex_init(&tp->mu);
    ti__cond_init(&tp->work_cv);
    ti__cond_init(&tp->done_cv);
    /* Workers get at least TI__TP_STACK bytes of stack: a run takes about 110 KiB of it
     * (the GEMM's packing buffers, the depthwise path's, the callers' frames: four models'
     * `tinyinfer-run` always passed under `ulimit -s 116`, not always under 112, README
     * "Threads"), where musl's default for a thread is 128 KiB and glibc's is `ulimit -s`. */
    for (int i = 0; i < num_threads - 1; i++) {
        if (ti__thread_start(&tp->threads[i], ti__tp_worker, tp, TI__TP_STACK) != 0) break;
        tp->n_workers++;
    }
    return tp;
}

TI__PRIVATE void ti__threadpool_destroy(ti__threadpool *tp) {
    if (tp == NULL) return;
    ti__atomic_store(&tp->quit, 1);
    ti__mutex_lock(&tp->mu);
    ti__atomic_add(&tp->generation, 1); /* pollers and sleepers see a change, then quit */
    ti__cond_broadcast(&tp->work_cv);
    ti__mutex_unlock(&tp->mu);
    for (int i = 0; i < tp->n_workers; i++) ti__thread_join(tp->threads[i]);
    ti__mutex_destroy(&tp->mu);
    ti__cond_destroy(&tp->work_cv);
    ti__cond_destroy(&tp->done_cv);
    ti_allocator al = tp->al;
    ti__free(&al, tp->threads, sizeof(ti__thread) * (size_t)tp->n_alloc);
    ti__free(&al, tp, sizeof *tp);
}

TI__PRIVATE int ti__threadpool_size(const ti__threadpool *tp) { return tp ? tp->n_workers + 1 : 1; }

/* Both entries: exactly one of fn and part_fn is not NULL. */
TI__PRIVATE void ti__parallel_run(ti__threadpool *tp, size_t n, size_t grain, ti__range_fn fn,
                                  ti__range_part_fn part_fn, void *ctx) {
    if (n == 0) return;
    if (grain == 0) grain = 1;
    if (tp == NULL || tp->n_workers == 0 || n <= grain) {
        if (part_fn != NULL) part_fn(ctx, 0, 0, n);
        else fn(ctx, 0, n);
        return;
    }
    size_t threads = (size_t)tp->n_workers + 1;
    /* about 4 chunks a thread, none smaller than grain */
    size_t chunk = (n + threads * 4 - 1) / (threads * 4);
    if (chunk < grain) chunk = grain;
    size_t chunks = (n + chunk - 1) / chunk;
    tp->fn = fn;
    tp->part_fn = part_fn;
    tp->ctx = ctx;
    tp->n = n;
    tp->chunk = chunk;
    ti__atomic_store(&tp->remaining, (int)chunks);
    /* block p: its share of the chunks, in order, rounded so that the caller's is never
     * empty; its first is taken here, so that consecutive jobs give each thread the same
     * part of the range */
    for (size_t p = 0; p < threads; p++) {
        size_t cb = (p * chunks + threads - 1) / threads + (p == 0);
        size_t ce = ((p + 1) * chunks + threads - 1) / threads;
        ti__atomic_store(&tp->slot[p].range, (int)(cb << 16 | ce));
    }
    ti__atomic_add(&tp->generation, 1); /* published: the workers may take chunks */
    if (ti__atomic_load_sc(&tp->sleepers) > 0) {
        ti__mutex_lock(&tp->mu);
        ti__cond_broadcast(&tp->work_cv);
        ti__mutex_unlock(&tp->mu);
    }
    ti__tp_run_chunk(tp, 0, 0);
    ti__atomic_add(&tp->remaining, -1);
    ti__tp_drain(tp, 0); /* returns when no chunk is left to take */
    for (int i = 0; i < TI__TP_SPINS && ti__atomic_load(&tp->remaining) > 0; i++)
        ti__tp_relax(); /* poll a while for the workers' chunks, then sleep */
    if (ti__atomic_load(&tp->remaining) > 0) {
        ti__mutex_lock(&tp->mu);
        ti__atomic_store_sc(&tp->caller_waits, 1);
        while (ti__atomic_load_sc(&tp->remaining) > 0) ti__cond_wait(&tp->done_cv, &tp->mu);
        ti__atomic_store(&tp->caller_waits, 0);
        ti__mutex_unlock(&tp->mu);
    }
}

TI__PRIVATE void ti__parallel_for(ti__threadpool *tp, size_t n, size_t grain, ti__range_fn fn,
                                  void *ctx) {
    ti__parallel_run(tp, n, grain, fn, NULL, ctx);
}

TI__PRIVATE void ti__parallel_for_part(ti__threadpool *tp, size_t n, size_t grain,
                                       ti__range_part_fn fn, void *ctx) {
    ti__parallel_run(tp, n, grain, NULL, fn, ctx);
}
#else
struct ti__threadpool {
    int unused;
};
TI__PRIVATE ti__threadpool *ti__threadpool_create(const ti_allocator *al, int num_threads) {
    (void)al;
    (void)num_threads;
    return NULL;
}
TI__PRIVATE void ti__threadpool_destroy(ti__threadpool *tp) { (void)tp; }
TI__PRIVATE int ti__threadpool_size(const ti__threadpool *tp) { (void)tp; return 1; }
TI__PRIVATE void ti__parallel_for(ti__threadpool *tp, size_t n, size_t grain, ti__range_fn fn,
                                  void *ctx) {
    (void)tp;
    (void)grain;
    if (n) fn(ctx, 0, n);
}
TI__PRIVATE void ti__parallel_for_part(ti__threadpool *tp, size_t n, size_t grain,
                                       ti__range_part_fn fn, void *ctx) {
    (void)tp;
    (void)grain;
    if (n) fn(ctx, 0, 0, n);
}
#endif
