/* Truncations and random mutations of real ONNX files through load, session creation and
 * a run, under tight resource caps. Each model is cut at every byte length, then mutated
 * 10,000 times from a fixed seed (bit flips, byte overwrites, inserts, deletes, copied
 * chunks, and rewritten varints: message lengths and dims). Whatever happens, a failure
 * must be a ti_error with a code and a message "<desc.name>: <reason>", and the counting
 * allocator must get every byte back. Built under ASan+UBSan by ./build.sh test.
 * Usage: test_mutations [--cases N] [--seed S] [MODEL.onnx...]
 * (default: tests/data/conv2d_padding.onnx tests/data/operator_params.onnx, 10,000 cases) */
#ifndef TI_TEST_SHARED_IMPL /* build.sh links one ASan build of the implementation */
#define TINYINFER_IMPLEMENTATION
#endif
#include "tinyinfer.h"
#include "ti_test.h"

typedef struct stats {
    int ok, load_failed, session_failed, run_failed, bad; /* bad: malformed error or leak */
    int by_code[TI_STATUS_COUNT];
} stats;

/* xorshift64*: a small generator, the same sequence on every platform */
static uint64_t rng_state;
static uint64_t rng(void) {
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1DULL;
}
static size_t rng_below(size_t n) { return n ? (size_t)(rng() % n) : 0; }

/* Checks one failure; prints the first few problems. */
static void check_error(stats *st, const ti_error *err, const char *name, const char *what,
                        const char *stage) {
    size_t n = strlen(name);
    int ok = err->code > TI_OK && err->code < TI_STATUS_COUNT &&
             memchr(err->message, 0, sizeof err->message) != NULL &&
             strncmp(err->message, name, n) == 0 && strncmp(err->message + n, ": ", 2) == 0 &&
             err->message[n + 2] != 0;
    if (err->code > TI_OK && err->code < TI_STATUS_COUNT) st->by_code[err->code]++;
    if (!ok) {
        if (st->bad++ < 10)
            printf("BAD %s (%s): code %d, message \"%.320s\"\n", what, stage, (int)err->code,
                   err->message);
    }
}

/* One case: the bytes through load, session and run. */
static void run_case(stats *st, const unsigned char *bytes, size_t n, const char *name,
                     const char *what) {
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
        sd.allocator = ti_test_allocator(&c);
        ti_session *s = ti_session_create(m, &sd, &err);
        if (s == NULL) {
            st->session_failed++;
            check_error(st, &err, name, what, "session");
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
    if (!ti_test_alloc_balanced(&c)) {
        if (st->bad++ < 10)
            printf("LEAK %s: %zu allocations, %zu frees, %zu bytes live, %zu bad frees\n", what,
                   c.allocs, c.frees, c.live_bytes, c.bad_frees);
    }
}

/* Writes a varint at out (at most 10 bytes); returns its length. */
static size_t put_varint(unsigned char *out, uint64_t v) {
    size_t n = 0;
    do {
        out[n] = (unsigned char)(v & 0x7f);
        v >>= 7;
        if (v) out[n] |= 0x80;
        n++;
    } while (v);
    return n;
}

/* Replaces buf[pos .. pos+old_len) with rep[0 .. rep_len); keeps *n <= cap. */
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

/* Values that stress lengths and dims when written as varints. */
static uint64_t interesting_varint(uint64_t old) {
    switch (rng_below(10)) {
    case 0: return 0;
    case 1: return old + 1;
    case 2: return old ? old - 1 : 0;
    case 3: return old * 2 + 1;
    case 4: return 0x7f;
    case 5: return (uint64_t)1 << 31;
    case 6: return 0xffffffffULL;
    case 7: return (uint64_t)1 << 62;
    case 8: return ~(uint64_t)0; /* -1 as an int64 */
    default: return rng() >> rng_below(64);
    }
}

/* Applies one random mutation to buf (n bytes, capacity cap). */
static void mutate_once(unsigned char *buf, size_t *n, size_t cap) {
    static const unsigned char special[] = {0x00, 0x01, 0x7f, 0x80, 0xff, 0x08, 0x0a, 0x12};
    unsigned char tmp[64];
    size_t pos = rng_below(*n + 1);
    switch (rng_below(8)) {
    case 0: /* flip a bit */
        if (*n) buf[rng_below(*n)] ^= (unsigned char)(1u << rng_below(8));
        break;
    case 1: /* overwrite a byte */
        if (*n)
            buf[rng_below(*n)] =
                rng_below(2) ? special[rng_below(sizeof special)] : (unsigned char)rng();
        break;
    case 2: { /* insert 1..4 random bytes */
        size_t k = 1 + rng_below(4);
        for (size_t i = 0; i < k; i++) tmp[i] = (unsigned char)rng();
        splice(buf, n, cap, pos, 0, tmp, k);
        break;
    }
    case 3: /* delete 1..16 bytes */
        splice(buf, n, cap, pos, 1 + rng_below(16), tmp, 0);
        break;
    case 4: { /* copy a chunk of the file somewhere else (repeated fields, nested messages) */
        if (*n == 0) break;
        size_t from = rng_below(*n), len = 1 + rng_below(32);
        if (len > *n - from) len = *n - from;
        memcpy(tmp, buf + from, len);
        splice(buf, n, cap, pos, 0, tmp, len);
        break;
    }
    case 5:
    case 6: { /* rewrite the varint after a tag: a length (wire type 2) or a value (type 0) */
        int want = rng_below(2) ? 2 : 0;
        for (size_t tries = 0; tries < 64 && *n > 1; tries++) {
            size_t p = rng_below(*n - 1);
            if ((buf[p] & 7) != want || (buf[p] >> 3) == 0) continue;
            size_t q = p + 1, len = 0;
            uint64_t old = 0;
            while (q + len < *n && len < 10) {
                old |= (uint64_t)(buf[q + len] & 0x7f) << (7 * len);
                if ((buf[q + len++] & 0x80) == 0) break;
            }
            size_t k = put_varint(tmp, interesting_varint(old));
            splice(buf, n, cap, q, len, tmp, k);
            break;
        }
        break;
    }
    default: /* an over-long varint: 10 continuation bytes */
        memset(tmp, 0xff, 10);
        tmp[10] = 0x01;
        splice(buf, n, cap, pos, rng_below(3), tmp, 11);
        break;
    }
}

static void report(const char *what, const char *name, int cases, const stats *st) {
    printf("%s %s: %d cases: %d ran, %d refused at load, %d at session, %d at run "
           "(bad model %d, unsupported %d, out of memory %d, invalid argument %d); %d bad\n",
           name, what, cases, st->ok, st->load_failed, st->session_failed, st->run_failed,
           st->by_code[TI_ERR_BAD_MODEL], st->by_code[TI_ERR_UNSUPPORTED],
           st->by_code[TI_ERR_OUT_OF_MEMORY], st->by_code[TI_ERR_INVALID_ARGUMENT], st->bad);
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
    char what[96];

    /* the control: the file itself loads and runs */
    stats full;
    memset(&full, 0, sizeof full);
    run_case(&full, orig, n, name, "the whole file");
    if (full.ok != 1) printf("%s: the unmodified file does not run\n", name);
    TI_CHECK(full.ok == 1);

    /* every truncation, each in an exact-size buffer so ASan sees reads past its end */
    stats cut;
    memset(&cut, 0, sizeof cut);
    for (size_t len = 0; len < n; len++) {
        unsigned char *b = (unsigned char *)malloc(len ? len : 1);
        if (b == NULL) break;
        memcpy(b, orig, len);
        snprintf(what, sizeof what, "%s cut to %zu bytes", name, len);
        run_case(&cut, b, len, name, what);
        free(b);
    }
    report("truncations", name, (int)n, &cut);
    TI_CHECK_EQ_INT(cut.bad, 0);

    /* mutations */
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
        run_case(&mut, b, len, name, what);
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
        else if (n_models < 16) models[n_models++] = argv[i];
    }
    if (n_models == 0) {
        models[n_models++] = "tests/data/conv2d_padding.onnx";
        models[n_models++] = "tests/data/operator_params.onnx";
    }
    for (int i = 0; i < n_models; i++) test_model(models[i], cases, seed);
    return ti_test_summary();
}
