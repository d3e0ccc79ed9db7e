/* A tiny test harness for tinyinfer's test programs: checks that report file:line and keep
 * going, tests that can be skipped with a reason, one summary line
 * "N passed, N failed, N skipped" that build.sh adds up, and a counting allocator (a
 * ti_allocator) that counts allocations, can fail the Nth one, caps live bytes and can
 * forbid allocation altogether (to prove ti_session_run does not allocate).
 *
 * Use in exactly one .c file per test program (everything here is static):
 *
 *     #define TINYINFER_IMPLEMENTATION
 *     #include "tinyinfer.h"
 *     #include "ti_test.h"
 *
 *     TI_TEST(loads_the_model) {
 *         ti_error err;
 *         ti_model *m = ti_model_load_file("tests/data/light_squeezenet.onnx", NULL, &err);
 *         TI_REQUIRE(m != NULL);              // stops this test when false
 *         TI_CHECK_EQ_INT(ti_model_num_inputs(m), 1);
 *         ti_model_free(m);
 *     }
 *     int main(void) {
 *         TI_RUN(loads_the_model);
 *         return ti_test_summary();            // prints the line, returns the exit code
 *     }
 *
 * Counting: a test run with TI_RUN counts once (passed, failed when any of its checks
 * failed, or skipped when it called TI_SKIP). Checks made outside TI_RUN (in main, in loops
 * over many cases) count one each. Only failures and skips print, so output stays short.
 * The harness is not thread-safe: check from the main thread only. */
#ifndef TI_TEST_H
#define TI_TEST_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tinyinfer.h"

#if defined(__GNUC__) || defined(__clang__)
#define TI_TEST__UNUSED __attribute__((unused))
#else
#define TI_TEST__UNUSED
#endif

typedef struct ti_test_state {
    int passed, failed, skipped; /* totals */
    int in_test;                 /* inside TI_RUN */
    int cur_failed, cur_skipped; /* of the test in progress */
    const char *cur_name;
} ti_test_state;

static ti_test_state ti_test_g = {0, 0, 0, 0, 0, 0, NULL};

/* Records one check; prints the failure with its location. Returns ok. */
static TI_TEST__UNUSED int ti_test_record(int ok, const char *file, int line, const char *what) {
    if (ok) {
        if (!ti_test_g.in_test) ti_test_g.passed++;
        return 1;
    }
    if (ti_test_g.in_test) {
        ti_test_g.cur_failed++;
        printf("FAIL %s: %s:%d: %s\n", ti_test_g.cur_name, file, line, what);
    } else {
        ti_test_g.failed++;
        printf("FAIL %s:%d: %s\n", file, line, what);
    }
    fflush(stdout);
    return 0;
}

/* Each check evaluates its arguments once and yields 1 when it passed, 0 when it failed. */
#define TI_CHECK(cond) ti_test_record((cond) ? 1 : 0, __FILE__, __LINE__, #cond)

/* Like TI_CHECK, then returns from the current (void) test function when it failed. */
#define TI_REQUIRE(cond)                                                                    \
    do {                                                                                    \
        if (!TI_CHECK(cond)) return;                                                        \
    } while (0)

#define TI_CHECK_EQ_INT(a, b)                                                               \
    ti_test_eq_int((long long)(a), (long long)(b), #a, #b, __FILE__, __LINE__)
#define TI_CHECK_NEAR(a, b, tol)                                                            \
    ti_test_near((double)(a), (double)(b), (double)(tol), #a, #b, __FILE__, __LINE__)
/* haystack may be NULL (then the check fails). */
#define TI_CHECK_STR_CONTAINS(haystack, needle)                                             \
    ti_test_contains((haystack), (needle), #haystack, __FILE__, __LINE__)

/* Marks the current test skipped, prints the reason, and returns from it. Only inside a
 * test function run by TI_RUN. */
#define TI_SKIP(reason)                                                                     \
    do {                                                                                    \
        ti_test_skip_note((reason), __FILE__, __LINE__);                                    \
        return;                                                                             \
    } while (0)

/* Defines a test function; run it from main with TI_RUN(name). */
#define TI_TEST(name) static void name(void)
#define TI_RUN(name) ti_test_run_one(name, #name)

static TI_TEST__UNUSED int ti_test_eq_int(long long a, long long b, const char *ea, const char *eb,
                                          const char *file, int line) {
    char what[256];
    if (a == b) return ti_test_record(1, file, line, "");
    snprintf(what, sizeof what, "%s == %s (%lld vs %lld)", ea, eb, a, b);
    return ti_test_record(0, file, line, what);
}

static TI_TEST__UNUSED int ti_test_near(double a, double b, double tol, const char *ea,
                                        const char *eb, const char *file, int line) {
    char what[256];
    /* NaN never passes; equal infinities do. */
    int ok = (a == b) || fabs(a - b) <= tol;
    if (ok) return ti_test_record(1, file, line, "");
    snprintf(what, sizeof what, "%s ~= %s (%.9g vs %.9g, tolerance %g)", ea, eb, a, b, tol);
    return ti_test_record(0, file, line, what);
}

static TI_TEST__UNUSED int ti_test_contains(const char *hay, const char *needle, const char *ehay,
                                            const char *file, int line) {
    char what[512];
    if (hay != NULL && needle != NULL && strstr(hay, needle) != NULL)
        return ti_test_record(1, file, line, "");
    snprintf(what, sizeof what, "%s contains \"%s\" (it is \"%s\")", ehay, needle ? needle : "",
             hay ? hay : "(null)");
    return ti_test_record(0, file, line, what);
}

static TI_TEST__UNUSED void ti_test_skip_note(const char *reason, const char *file, int line) {
    if (ti_test_g.in_test) {
        ti_test_g.cur_skipped = 1;
        printf("SKIP %s: %s (%s:%d)\n", ti_test_g.cur_name, reason, file, line);
    } else {
        ti_test_g.skipped++;
        printf("SKIP %s (%s:%d)\n", reason, file, line);
    }
    fflush(stdout);
}

/* 1 when the test `name` is to run: always, unless TI_TEST_ONLY lists comma-separated parts
 * of names (then only tests whose name contains one of them run; the others are not
 * counted). build.sh uses it where a second device needs only some of a program's tests. */
static TI_TEST__UNUSED int ti_test_selected(const char *name) {
    const char *only = getenv("TI_TEST_ONLY");
    if (only == NULL || *only == '\0') return 1;
    while (*only != '\0') {
        const char *end = strchr(only, ',');
        size_t n = end != NULL ? (size_t)(end - only) : strlen(only);
        char part[128];
        if (n > 0 && n < sizeof part) {
            memcpy(part, only, n);
            part[n] = '\0';
            if (strstr(name, part) != NULL) return 1;
        }
        only += n;
        if (*only == ',') only++;
    }
    return 0;
}

static TI_TEST__UNUSED void ti_test_run_one(void (*fn)(void), const char *name) {
    if (!ti_test_selected(name)) {
        printf("not run (TI_TEST_ONLY): %s\n", name);
        return;
    }
    /* processor time of the test (all threads): slow tests say so, for the test budget */
    clock_t t0 = clock();
    ti_test_g.in_test = 1;
    ti_test_g.cur_failed = 0;
    ti_test_g.cur_skipped = 0;
    ti_test_g.cur_name = name;
    fn();
    if (ti_test_g.cur_failed) ti_test_g.failed++;
    else if (ti_test_g.cur_skipped) ti_test_g.skipped++;
    else ti_test_g.passed++;
    double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
    if (secs >= 5.0) printf("  (%s: %.1f s of processor time)\n", name, secs);
    fflush(stdout);
    ti_test_g.in_test = 0;
    ti_test_g.cur_name = NULL;
}

/* Prints "N passed, N failed, N skipped" and returns the process exit code (0 when nothing
 * failed). */
static TI_TEST__UNUSED int ti_test_summary(void) {
    printf("%d passed, %d failed, %d skipped\n", ti_test_g.passed, ti_test_g.failed,
           ti_test_g.skipped);
    fflush(stdout);
    return ti_test_g.failed ? 1 : 0;
}

/* Reads a whole file into malloc'd memory (caller frees). NULL when it cannot. */
static TI_TEST__UNUSED unsigned char *ti_test_read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    *size = 0;
    if (f == NULL) return NULL;
    size_t cap = 1 << 16, n = 0;
    unsigned char *buf = (unsigned char *)malloc(cap);
    while (buf != NULL) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap) break;
        unsigned char *nb = (unsigned char *)realloc(buf, cap * 2);
        if (nb == NULL) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = nb;
        cap *= 2;
    }
    if (buf != NULL && ferror(f)) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf != NULL) *size = n;
    return buf;
}

/* ---- counting allocator ------------------------------------------------------------ */
/* Zero-initialise, optionally set fail_at / limit_bytes / forbid, then pass
 * ti_test_allocator(&c) in a model or session desc. */
typedef struct ti_test_alloc {
    size_t allocs, frees;         /* successful allocations and frees                    */
    size_t failed_allocs;         /* requests answered with NULL                         */
    size_t live_bytes, peak_bytes;/* bytes asked for, outstanding and at most            */
    size_t total_bytes;           /* bytes asked for, all together                       */
    size_t bad_frees;             /* frees of foreign pointers or with a wrong size, and
                                     requests with an alignment not a power of two      */
    size_t calls;                 /* alloc requests so far (successful or not)           */
    size_t fail_at;               /* 0: never; N: the Nth request (1-based) returns NULL */
    int fail_after;               /* with fail_at: every request from the Nth on fails   */
    size_t limit_bytes;           /* 0: none; else a request that would take live_bytes
                                     above it returns NULL (keeps fuzzers out of OOM)    */
    int forbid;                   /* 1: every request fails and counts in forbidden      */
    size_t forbidden;             /* requests made while forbid was set                  */
} ti_test_alloc;

#define TI_TEST__MAGIC 0x7469616c6c6f63ULL /* "tialloc" */
/* Header before each block: the malloc'd pointer, the size asked for, a magic number. */
typedef struct ti_test__hdr {
    void *raw;
    size_t size;
    unsigned long long magic;
} ti_test__hdr;

static TI_TEST__UNUSED void *ti_test__alloc(size_t size, size_t align, void *user) {
    ti_test_alloc *c = (ti_test_alloc *)user;
    c->calls++;
    if (c->forbid) {
        c->forbidden++;
        c->failed_allocs++;
        return NULL;
    }
    if (c->fail_at != 0 && (c->calls == c->fail_at || (c->fail_after && c->calls > c->fail_at))) {
        c->failed_allocs++;
        return NULL;
    }
    if (c->limit_bytes != 0 && (size > c->limit_bytes || c->live_bytes > c->limit_bytes - size)) {
        c->failed_allocs++;
        return NULL;
    }
    if (align < sizeof(void *)) align = sizeof(void *);
    if ((align & (align - 1)) != 0) { /* not a power of two: a library bug */
        c->bad_frees++;
        return NULL;
    }
    size_t hdr = sizeof(ti_test__hdr);
    if (size > (size_t)-1 - hdr - align) {
        c->failed_allocs++;
        return NULL;
    }
    unsigned char *raw = (unsigned char *)malloc(size + hdr + align);
    if (raw == NULL) {
        c->failed_allocs++;
        return NULL;
    }
    uintptr_t p = ((uintptr_t)raw + hdr + align - 1) & ~(uintptr_t)(align - 1);
    ti_test__hdr h;
    h.raw = raw;
    h.size = size;
    h.magic = TI_TEST__MAGIC;
    memcpy((unsigned char *)p - hdr, &h, hdr);
    c->allocs++;
    c->live_bytes += size;
    c->total_bytes += size;
    if (c->live_bytes > c->peak_bytes) c->peak_bytes = c->live_bytes;
    return (void *)p;
}

static TI_TEST__UNUSED void ti_test__free(void *ptr, size_t size, void *user) {
    ti_test_alloc *c = (ti_test_alloc *)user;
    if (ptr == NULL) return;
    ti_test__hdr h;
    memcpy(&h, (unsigned char *)ptr - sizeof h, sizeof h);
    if (h.magic != TI_TEST__MAGIC) { /* not ours: leak it rather than corrupt the heap */
        c->bad_frees++;
        return;
    }
    if (h.size != size) c->bad_frees++;
    h.magic = 0;
    memcpy((unsigned char *)ptr - sizeof h, &h, sizeof h);
    c->frees++;
    c->live_bytes -= h.size;
    free(h.raw);
}

static TI_TEST__UNUSED ti_allocator ti_test_allocator(ti_test_alloc *c) {
    ti_allocator a;
    a.alloc = ti_test__alloc;
    a.free = ti_test__free;
    a.user = c;
    return a;
}

/* Zeroes the counters but keeps the settings (fail_at, fail_after, limit_bytes, forbid). */
static TI_TEST__UNUSED void ti_test_alloc_reset(ti_test_alloc *c) {
    ti_test_alloc keep = *c;
    memset(c, 0, sizeof *c);
    c->fail_at = keep.fail_at;
    c->fail_after = keep.fail_after;
    c->limit_bytes = keep.limit_bytes;
    c->forbid = keep.forbid;
}

/* 1 when everything allocated was freed, with the right sizes. */
static TI_TEST__UNUSED int ti_test_alloc_balanced(const ti_test_alloc *c) {
    return c->allocs == c->frees && c->live_bytes == 0 && c->bad_frees == 0;
}

#endif /* TI_TEST_H */
