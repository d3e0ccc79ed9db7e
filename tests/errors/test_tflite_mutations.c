/* Truncations and random mutations of real .tflite files through load, session creation
 * and a run, under tight resource caps (the TFLite twin of test_mutations.c). Each model is
 * cut at every byte length, then mutated 10,000 times from a fixed seed: bit flips, byte and
 * word overwrites with values that stress FlatBuffers offsets, vtable entries and vector
 * lengths, inserts, deletes and copied chunks. Most mutations aim at the flatbuffer's
 * structure rather than the weight bytes (found with the library's own verified accessors),
 * since a changed weight only changes the output. Whatever happens, a failure must be a
 * ti_error with a code and a message "<desc.name>: <reason>", and the counting allocator
 * must get every byte back. Built under ASan+UBSan by ./build.sh test.
 * Usage: test_tflite_mutations [--cases N] [--seed S] [--no-run] [--verbose] [MODEL.tflite...]
 * (default: tests/data/mobilenet_v1_0.25_128_quant.tflite tests/data/split_concat.tflite) */
#define TINYINFER_IMPLEMENTATION
#include "tinyinfer.h"
#include "ti_test.h"

/* Under AddressSanitizer, truncations poison the cut-off tail of one buffer instead of
 * copying every prefix into a buffer of its own: the same detection of reads past the end,
 * without half a million allocations of up to the whole file. */
#if defined(__SANITIZE_ADDRESS__)
#define TI_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TI_TEST_ASAN 1
#endif
#endif
#ifdef TI_TEST_ASAN
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

typedef struct stats {
    int ok, load_failed, session_failed, run_failed, bad; /* bad: malformed error or leak */
    int by_code[TI_STATUS_COUNT];
} stats;

static int g_no_run;  /* --no-run: stop after the session (for quick local runs) */
static int g_verbose; /* --verbose: print every error message */

/* xorshift64*: a small generator, the same sequence on every platform */
static uint64_t rng_state;
static uint64_t rng(void) {
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1DULL;
}
static size_t rng_below(size_t n) { return n ? (size_t)(rng() % n) : 0; }

static void check_error(stats *st, const ti_error *err, const char *name, const char *what,
                        const char *stage) {
    size_t n = strlen(name);
    int ok = err->code > TI_OK && err->code < TI_STATUS_COUNT &&
             memchr(err->message, 0, sizeof err->message) != NULL &&
             strncmp(err->message, name, n) == 0 && strncmp(err->message + n, ": ", 2) == 0 &&
             err->message[n + 2] != 0;
    if (err->code > TI_OK && err->code < TI_STATUS_COUNT) st->by_code[err->code]++;
    if (g_verbose) printf("%s (%s): %s\n", what, stage, err->message);
    if (!ok && st->bad++ < 10)
        printf("BAD %s (%s): code %d, message \"%.320s\"\n", what, stage, (int)err->code,
               err->message);
}

/* One case: the bytes through load, session and (when do_run) a run. */
static void run_case(stats *st, const unsigned char *bytes, size_t n, const char *name,
                     const char *what, int do_run) {
    ti_test_alloc c;
    memset(&c, 0, sizeof c);
    c.limit_bytes = (size_t)64 << 20; /* activations too: a mutated dim must not OOM us */

    ti_model_desc md;
    memset(&md, 0, sizeof md);
    md.name = name;
    md.allocator = ti_test_allocator(&c);
    md.max_tensor_bytes = (uint64_t)1 << 20;
    md.max_total_bytes = (uint64_t)4 << 20;
    md.max_nodes = 1000;

    ti_error err;
    memset(&err, 0, sizeof err);
    ti_model *m = ti_model_load_memory(bytes, n, &md, &err);
    if (m == NULL) {
        st->load_failed++;
        check_error(st, &err, name, what, "load");
    } else {
        ti_session_desc sd;
        memset(&sd, 0, sizeof sd);
        sd.num_threads = 1;
        sd.backend = TI_BACKEND_CPU; /* the reader and kernels are under test, not a GPU probe */
        sd.allocator = ti_test_allocator(&c);
        ti_session *s = ti_session_create(m, &sd, &err);
        if (s == NULL) {
            st->session_failed++;
            check_error(st, &err, name, what, "session");
        } else if (g_no_run || !do_run) {
            st->ok++;
            ti_session_destroy(s);
        } else {
            for (int i = 0; i < ti_session_num_inputs(s); i++) {
                ti_tensor *t = ti_session_input(s, i);
                if (t != NULL && t->data != NULL) memset(t->data, 0, t->size_bytes);
            }
            if (ti_session_run(s, &err) != TI_OK) {
                st->run_failed++;
                check_error(st, &err, name, what, "run");
            } else {
                st->ok++;
            }
            ti_session_destroy(s);
        }
        ti_model_free(m);
    }
    if (!ti_test_alloc_balanced(&c) && st->bad++ < 10)
        printf("LEAK %s: %zu allocations, %zu frees, %zu bytes live, %zu bad frees\n", what,
               c.allocs, c.frees, c.live_bytes, c.bad_frees);
}

/* ---- where the weights are: byte ranges of buffer data, to aim mutations elsewhere ---- */
typedef struct range {
    size_t lo, hi;
} range;
static range g_data[4096];
static int g_n_data;

static void find_data_ranges(const unsigned char *bytes, size_t n) {
    ti__fb b;
    ti__fb_table model, bt;
    ti__fb_vec bufs, dv;
    g_n_data = 0;
    ti__fb_init(&b, bytes, n);
    ti__fb_root(&b, &model);
    ti__fb_vector(&b, &model, 4, 4, &bufs);
    for (uint32_t i = 0; i < bufs.len && !b.fault && g_n_data < 4096; i++) {
        ti__fb_vec_table(&b, &bufs, i, &bt);
        if (ti__fb_vector(&b, &bt, 0, 1, &dv) && dv.len > 64) {
            g_data[g_n_data].lo = (size_t)dv.pos;
            g_data[g_n_data].hi = (size_t)dv.pos + dv.len;
            g_n_data++;
        }
    }
}
static int in_data(size_t pos) {
    for (int i = 0; i < g_n_data; i++)
        if (pos >= g_data[i].lo && pos < g_data[i].hi) return 1;
    return 0;
}
/* A position: in the flatbuffer's structure 7 times out of 8 (while the file still has the
 * original layout, that is before inserts and deletes), else anywhere. */
static size_t pick(size_t n) {
    if (n == 0) return 0;
    size_t pos = rng_below(n);
    if (rng_below(8) == 0) return pos;
    for (int tries = 0; tries < 64 && in_data(pos); tries++) pos = rng_below(n);
    return pos;
}

static void splice(unsigned char *buf, size_t *n, size_t cap, size_t pos, size_t old_len,
                   const unsigned char *rep, size_t rep_len) {
    if (pos > *n) pos = *n;
    if (old_len > *n - pos) old_len = *n - pos;
    size_t tail = *n - pos - old_len;
    if (pos + rep_len + tail > cap) return;
    memmove(buf + pos + rep_len, buf + pos + old_len, tail);
    memcpy(buf + pos, rep, rep_len);
    *n = pos + rep_len + tail;
}

static uint32_t get32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static void put32(unsigned char *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}

/* Values that stress uoffsets, soffsets, vector lengths, indices and scalars. */
static uint32_t interesting32(uint32_t old, size_t n) {
    switch (rng_below(14)) {
    case 0: return 0;
    case 1: return old + 1;
    case 2: return old - 1;
    case 3: return old + 4;
    case 4: return old - 4;
    case 5: return old * 2 + 1;
    case 6: return 0x7fffffffu;
    case 7: return 0x80000000u;
    case 8: return 0xffffffffu; /* -1 as an index */
    case 9: return (uint32_t)n;
    case 10: return (uint32_t)n - 4;
    case 11: return (uint32_t)rng_below(n + 1);
    case 12: return (uint32_t)rng_below(256);
    default: return (uint32_t)rng();
    }
}

/* One mutation. Shifting bytes (insert, delete, chunk copy) breaks every offset that
 * crosses the point, so it is one choice in ten; word overwrites reach deeper. */
static void mutate_once(unsigned char *buf, size_t *n, size_t cap) {
    static const unsigned char special[] = {0x00, 0x01, 0x02, 0x03, 0x04, 0x7f, 0x80, 0xff, 0x20};
    static const unsigned pick16[] = {0, 2, 3, 4, 6, 0xfffe, 0xffff, 0x8000};
    unsigned char tmp[64];
    switch (rng_below(10)) {
    case 0: /* flip a bit */
        if (*n) buf[pick(*n)] ^= (unsigned char)(1u << rng_below(8));
        break;
    case 1:
    case 2: /* overwrite a byte: enum values, bools, small counts */
        if (*n)
            buf[pick(*n)] = rng_below(2) ? special[rng_below(sizeof special)] : (unsigned char)rng();
        break;
    case 3:
    case 4:
    case 5: { /* an aligned 32-bit word: offsets, lengths, indices */
        if (*n < 4) break;
        size_t p = pick(*n - 3) & ~(size_t)3;
        put32(buf + p, interesting32(get32(buf + p), *n));
        break;
    }
    case 6: { /* an aligned 16-bit word: vtable sizes and field offsets */
        if (*n < 2) break;
        size_t p = pick(*n - 1) & ~(size_t)1;
        unsigned v = (unsigned)buf[p] | (unsigned)buf[p + 1] << 8;
        v = rng_below(2) ? pick16[rng_below(8)] : (v + (unsigned)rng_below(9) - 4) & 0xffff;
        buf[p] = (unsigned char)v;
        buf[p + 1] = (unsigned char)(v >> 8);
        break;
    }
    case 7: { /* copy a 4- or 8-byte word over another: an offset now points elsewhere */
        if (*n < 16) break;
        size_t len = rng_below(2) ? 4 : 8;
        size_t from = pick(*n - len) & ~(size_t)3, to = pick(*n - len) & ~(size_t)3;
        memmove(buf + to, buf + from, len);
        break;
    }
    case 8: /* a weight byte: loads, and the run sees other values */
        if (*n) buf[rng_below(*n)] = (unsigned char)rng();
        break;
    default: { /* shift: insert 1..4 random bytes, delete 1..16, or copy a chunk */
        size_t at = pick(*n + 1), k = 0;
        switch (rng_below(3)) {
        case 0:
            k = 1 + rng_below(4);
            for (size_t i = 0; i < k; i++) tmp[i] = (unsigned char)rng();
            splice(buf, n, cap, at, 0, tmp, k);
            break;
        case 1: splice(buf, n, cap, at, 1 + rng_below(16), tmp, 0); break;
        default:
            if (*n == 0) break;
            {
                size_t from = pick(*n), len = 1 + rng_below(32);
                if (len > *n - from) len = *n - from;
                memcpy(tmp, buf + from, len);
                splice(buf, n, cap, at, 0, tmp, len);
            }
            break;
        }
        break;
    }
    }
}

static void report(const char *what, const char *name, int cases, const stats *st) {
    printf("%s %s: %d cases: %d ran, %d refused at load, %d at session, %d at run "
           "(bad model %d, unsupported %d, out of memory %d, invalid argument %d); %d bad\n",
           name, what, cases, st->ok, st->load_failed, st->session_failed, st->run_failed,
           st->by_code[TI_ERR_BAD_MODEL], st->by_code[TI_ERR_UNSUPPORTED],
           st->by_code[TI_ERR_OUT_OF_MEMORY], st->by_code[TI_ERR_INVALID_ARGUMENT], st->bad);
    fflush(stdout);
}

static void test_model(const char *path, int cases, uint64_t seed) {
    size_t n = 0;
    unsigned char *orig = ti_test_read_file(path, &n);
    if (orig == NULL) {
        printf("cannot read %s\n", path);
        TI_CHECK(orig != NULL);
        return;
    }
    const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    char what[128];
    find_data_ranges(orig, n);

    /* the control: the file itself loads; the session runs it, or (while kernels are
     * missing) refuses it as unsupported */
    stats full;
    memset(&full, 0, sizeof full);
    run_case(&full, orig, n, name, "the whole file", 1);
    TI_CHECK_EQ_INT(full.load_failed, 0);
    TI_CHECK(full.ok == 1 || full.by_code[TI_ERR_UNSUPPORTED] == 1);
    report("unmodified", name, 1, &full);

    /* every truncation, longest first; the bytes past the cut are poisoned (under ASan) so
     * that a read past the end of the truncated file is caught. A file may carry bytes the
     * reader never reads (mobilenet_v1's labels, a zip appended after the flatbuffer): cut
     * there, it loads the same model as the whole file, so only the first such cut is run
     * (the others load and plan a session) */
    stats cut;
    memset(&cut, 0, sizeof cut);
    unsigned char *whole = (unsigned char *)malloc(n ? n : 1);
    int ran = 0;
    if (whole != NULL) {
        memcpy(whole, orig, n);
        for (size_t len = n; len-- > 0;) {
            POISON(whole + len, 1);
            snprintf(what, sizeof what, "%s cut to %zu bytes", name, len);
            int before = cut.load_failed;
            run_case(&cut, whole, len, name, what, !ran);
            if (cut.load_failed == before) ran = 1;
        }
        UNPOISON(whole, n);
        free(whole);
    }
    report("truncations", name, (int)n, &cut);
    TI_CHECK_EQ_INT(cut.bad, 0);

    stats mut;
    memset(&mut, 0, sizeof mut);
    size_t cap = n + 256;
    unsigned char *work = (unsigned char *)malloc(cap);
    rng_state = seed ^ (0x9E3779B97F4A7C15ULL * (uint64_t)(n + 1));
    if (rng_state == 0) rng_state = 1;
    for (int i = 0; work != NULL && i < cases; i++) {
        size_t len = n;
        memcpy(work, orig, n);
        int k = 1 + (int)rng_below(4);
        for (int j = 0; j < k; j++) mutate_once(work, &len, cap);
        unsigned char *b = (unsigned char *)malloc(len ? len : 1);
        if (b == NULL) break;
        memcpy(b, work, len);
        snprintf(what, sizeof what, "%s mutation %d (seed %llu)", name, i,
                 (unsigned long long)seed);
        run_case(&mut, b, len, name, what, 1);
        free(b);
    }
    report("mutations", name, cases, &mut);
    TI_CHECK_EQ_INT(mut.bad, 0);
    free(work);
    free(orig);
}

int main(int argc, char **argv) {
    int cases = 10000;
    uint64_t seed = 20260101;
    const char *models[16];
    int n_models = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--cases") == 0 && i + 1 < argc) cases = atoi(argv[++i]);
        else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--no-run") == 0) g_no_run = 1;
        else if (strcmp(argv[i], "--verbose") == 0) g_verbose = 1;
        else if (n_models < 16) models[n_models++] = argv[i];
    }
    if (n_models == 0) {
        models[n_models++] = "tests/data/mobilenet_v1_0.25_128_quant.tflite";
        models[n_models++] = "tests/data/split_concat.tflite";
    }
    for (int i = 0; i < n_models; i++) test_model(models[i], cases, seed);
    return ti_test_summary();
}
