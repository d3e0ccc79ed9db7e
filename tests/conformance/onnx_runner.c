/* onnx_runner: runs ONNX backend conformance tests and TFLite op/model tests on tinyinfer
 * and reports each test as PASSED, FAILED or UNSUPPORTED, with totals per suite and per op
 * type (TFLite tests count under their builtin names, e.g. CONV_2D).
 * Layouts read: a test dir (model.onnx, model.tflite, or one *.onnx / *.tflite, plus
 * test_data_set_N/input_K.pb and output_K.pb, optional tolerance.txt "rtol atol" and
 * UNSUPPORTED_DATA), a suite root whose subdirectories are test dirs, and the flat `light`
 * layout (light_X.onnx + light_X_output_K.pb, no stored input: fed arange(n)/n as float32,
 * as onnx's backend runner does with generate_dummy_data(random=False)). Integer outputs may
 * differ by atol when tolerance.txt gives atol >= 1 (quantized outputs: "0 1" = one unit;
 * TFLite integer outputs that are not quantized stay exact). --check-argmax and
 * --min-argmax-agree compare the argmax over the last axis (top-1 of classifiers, the class
 * of each pixel of segmenters). Uses only the public API and testdir.h.
 * Build: cc -O2 -I. tests/conformance/onnx_runner.c -o onnx_runner -lm -lpthread */
#define _POSIX_C_SOURCE 200809L
#define TINYINFER_IMPLEMENTATION
#include "tinyinfer.h"
#include "tests/harness/testdir.h"

#include <signal.h>
#include <time.h>
#include <unistd.h>

#define PATH_LEN 1024
#define REASON_LEN 768
#define MAX_BINDINGS 64

enum { R_PASSED = 0, R_FAILED, R_UNSUPPORTED, R_COUNT };
static const char *const result_names[R_COUNT] = {"PASSED", "FAILED", "UNSUPPORTED"};

typedef struct options {
    int threads;
    ti_backend backend;
    const char *filter;
    double max_rel; /* < 0: per-element rtol/atol */
    const char *table;
    const char *ops_file;
    int verbose;
    int expect_pass;
    double min_agree; /* < 0: off; share of argmax positions that must agree */
    int check_argmax; /* --check-argmax: min_agree 1 with "top-1" wording */
    int same_as_cpu;  /* --same-as-cpu: outputs also equal a CPU session's */
    const char *device_ops; /* --device-ops: ",OP,OP," that must run on the asked backend */
} options;

typedef struct test_case {
    char suite[128];
    char name[256];
    char dir[PATH_LEN];   /* test dir, or the suite dir for the flat layout */
    char model[PATH_LEN]; /* the .onnx or .tflite file */
    int flat;             /* outputs are <model without .onnx>_output_K.pb */
    int tflite;           /* the model is a .tflite */
} test_case;

typedef struct op_stat {
    char name[136]; /* "Conv", or "domain:Op" outside the default domain */
    int count[R_COUNT];
    int supported;
} op_stat;

typedef struct suite_stat {
    char name[128];
    int count[R_COUNT];
} suite_stat;

typedef struct test_rec { /* non-passing tests, for the table */
    char *id;
    char *reason;
    int result;
} test_rec;

static op_stat *g_ops;
static int g_nops, g_capops;
static suite_stat *g_suites;
static int g_nsuites, g_capsuites;
static test_rec *g_recs;
static int g_nrecs, g_caprecs;
static int g_total[R_COUNT];
static int g_skipped_dirs;
static const char *g_kind = "ONNX"; /* "TFLite" when every test is a .tflite model */

/* ---- crash reporting: the library must not crash, but if it does, say where ------------ */

static char g_current[PATH_LEN + 64];

static void on_signal(int sig)
{
    static const char pre[] = "\nonnx_runner: crashed (signal ";
    char num[16];
    int n = 0, v = sig;
    char tmp[16];
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v && n < 15);
    for (int i = 0; i < n; i++) num[i] = tmp[n - 1 - i];
    ssize_t r = write(2, pre, sizeof(pre) - 1);
    r = write(2, num, (size_t)n);
    r = write(2, ") in test ", 10);
    r = write(2, g_current, strlen(g_current));
    r = write(2, "\n", 1);
    (void)r;
    signal(sig, SIG_DFL);
    raise(sig);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static char *dup_str(const char *s)
{
    size_t n = strlen(s);
    char *d = (char *)malloc(n + 1);
    if (d) memcpy(d, s, n + 1);
    return d;
}

/* ---- statistics ----------------------------------------------------------------------- */

static op_stat *op_get(const char *name, int supported)
{
    for (int i = 0; i < g_nops; i++)
        if (strcmp(g_ops[i].name, name) == 0) return &g_ops[i];
    if (g_nops == g_capops) {
        int nc = g_capops ? g_capops * 2 : 256;
        op_stat *n = (op_stat *)realloc(g_ops, (size_t)nc * sizeof(op_stat));
        if (!n) return NULL;
        g_ops = n;
        g_capops = nc;
    }
    op_stat *o = &g_ops[g_nops++];
    memset(o, 0, sizeof(*o));
    snprintf(o->name, sizeof(o->name), "%s", name);
    o->supported = supported;
    return o;
}

static suite_stat *suite_get(const char *name)
{
    for (int i = 0; i < g_nsuites; i++)
        if (strcmp(g_suites[i].name, name) == 0) return &g_suites[i];
    if (g_nsuites == g_capsuites) {
        int nc = g_capsuites ? g_capsuites * 2 : 16;
        suite_stat *n = (suite_stat *)realloc(g_suites, (size_t)nc * sizeof(suite_stat));
        if (!n) return NULL;
        g_suites = n;
        g_capsuites = nc;
    }
    suite_stat *s = &g_suites[g_nsuites++];
    memset(s, 0, sizeof(*s));
    snprintf(s->name, sizeof(s->name), "%s", name);
    return s;
}

static void rec_add(const char *id, const char *reason, int result)
{
    if (g_nrecs == g_caprecs) {
        int nc = g_caprecs ? g_caprecs * 2 : 256;
        test_rec *n = (test_rec *)realloc(g_recs, (size_t)nc * sizeof(test_rec));
        if (!n) return;
        g_recs = n;
        g_caprecs = nc;
    }
    test_rec *r = &g_recs[g_nrecs++];
    r->id = dup_str(id);
    r->reason = dup_str(reason);
    r->result = result;
}

/* ---- the ops of a test's model -------------------------------------------------------- */

typedef struct op_set {
    char (*names)[136];
    int *supported;
    int n;
} op_set;

static void op_set_free(op_set *s)
{
    free(s->names);
    free(s->supported);
    memset(s, 0, sizeof(*s));
}

static void op_set_add(op_set *s, const char *domain, const char *op)
{
    int dflt = domain[0] == 0 || strcmp(domain, "ai.onnx") == 0;
    char name[136];
    if (dflt || strcmp(domain, "tflite") == 0) /* TFLite names (CONV_2D) stand alone */
        snprintf(name, sizeof(name), "%s", op);
    else
        snprintf(name, sizeof(name), "%s:%s", domain, op);
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->names[i], name) == 0) return;
    char(*nn)[136] = (char(*)[136])realloc(s->names, (size_t)(s->n + 1) * sizeof(*nn));
    if (!nn) return;
    s->names = nn;
    int *ns = (int *)realloc(s->supported, (size_t)(s->n + 1) * sizeof(int));
    if (!ns) return;
    s->supported = ns;
    memcpy(s->names[s->n], name, sizeof(name));
    s->supported[s->n] = ti_op_supported(dflt ? "" : domain, op);
    s->n++;
}

/* ---- one test ------------------------------------------------------------------------- */

static void read_tolerance(const char *dir, double *rtol, double *atol)
{
    char path[PATH_LEN];
    if (!td_join(path, sizeof(path), dir, "tolerance.txt")) return;
    FILE *f = fopen(path, "r");
    if (!f) return;
    double r, a;
    if (fscanf(f, "%lf %lf", &r, &a) == 2) {
        *rtol = r;
        *atol = a;
    }
    fclose(f);
}

/* Names of the test_data_set_N subdirectories, sorted by N. */
static int cmp_data_sets(const void *a, const void *b)
{
    long x = strtol(*(char *const *)a + 14, NULL, 10), y = strtol(*(char *const *)b + 14, NULL, 10);
    return x < y ? -1 : x > y;
}

/* Loads PREFIX_0.pb, PREFIX_1.pb, ... while they exist. Returns the count, or -1 with the
 * status in *st and the reason in msg. */
static int load_series(const char *dir, const char *prefix, td_tensor **out, ti_status *st,
                       char *msg, size_t msgn)
{
    *out = NULL;
    int n = 0;
    for (;;) {
        char name[PATH_LEN], path[PATH_LEN];
        snprintf(name, sizeof(name), "%s_%d.pb", prefix, n);
        if (!td_join(path, sizeof(path), dir, name) || !td_is_file(path)) break;
        td_tensor *nt = (td_tensor *)realloc(*out, (size_t)(n + 1) * sizeof(td_tensor));
        if (!nt) {
            *st = TI_ERR_OUT_OF_MEMORY;
            td_msg(msg, msgn, "out of memory");
            goto fail;
        }
        *out = nt;
        *st = td_load_pb(path, &nt[n], msg, msgn);
        if (*st != TI_OK) goto fail;
        n++;
    }
    return n;
fail:
    for (int i = 0; i < n; i++) td_tensor_free(&(*out)[i]);
    free(*out);
    *out = NULL;
    return -1;
}

static void free_series(td_tensor *t, int n)
{
    for (int i = 0; i < n; i++) td_tensor_free(&t[i]);
    free(t);
}

static int session_input_index(ti_session *s, const char *name)
{
    int n = ti_session_num_inputs(s);
    for (int i = 0; i < n; i++) {
        ti_tensor *t = ti_session_input(s, i);
        if (t && t->name && name && strcmp(t->name, name) == 0) return i;
    }
    return -1;
}

static int session_output_index(ti_session *s, const char *name)
{
    int n = ti_session_num_outputs(s);
    for (int i = 0; i < n; i++) {
        ti_tensor *t = ti_session_output(s, i);
        if (t && t->name && name && strcmp(t->name, name) == 0) return i;
    }
    return -1;
}

static int classify_error(const ti_error *err)
{
    return err->code == TI_ERR_UNSUPPORTED ? R_UNSUPPORTED : R_FAILED;
}

/* The light layout's input: arange(n)/n in float32, unknown dims taken as 1. */
static ti_status make_flat_inputs(const ti_model *m, td_tensor **out, int *n_out, char *msg,
                                  size_t msgn)
{
    int n = ti_model_num_inputs(m);
    *out = (td_tensor *)calloc((size_t)(n > 0 ? n : 1), sizeof(td_tensor));
    *n_out = 0;
    if (!*out) return TI_ERR_OUT_OF_MEMORY;
    for (int i = 0; i < n; i++) {
        ti_value_info vi;
        if (ti_model_input_info(m, i, &vi) != TI_OK || vi.rank < 0) {
            td_msg(msg, msgn, "input %d: no declared shape to generate data from", i);
            return TI_ERR_BAD_MODEL;
        }
        if (vi.dtype != TI_DTYPE_F32) {
            td_msg(msg, msgn, "input %d '%s' is %s; generated inputs are float32 only", i,
                   vi.name ? vi.name : "", ti_dtype_name(vi.dtype));
            return TI_ERR_UNSUPPORTED;
        }
        td_tensor *t = &(*out)[i];
        t->t.dtype = TI_DTYPE_F32;
        t->t.rank = vi.rank;
        size_t numel = 1;
        for (int d = 0; d < vi.rank; d++) {
            t->t.shape[d] = vi.shape[d] >= 0 ? vi.shape[d] : 1;
            numel *= (size_t)t->t.shape[d];
        }
        t->t.size_bytes = numel * 4;
        t->t.data = malloc(numel ? numel * 4 : 1);
        (*n_out)++;
        if (!t->t.data) return TI_ERR_OUT_OF_MEMORY;
        float *p = (float *)t->t.data;
        for (size_t k = 0; k < numel; k++) p[k] = (float)((double)k / (double)numel);
    }
    return TI_OK;
}

/* Outputs of the flat layout: <model without .onnx>_output_K.pb. */
static int load_flat_outputs(const test_case *tc, td_tensor **out, ti_status *st, char *msg,
                             size_t msgn)
{
    char prefix[PATH_LEN];
    const char *base = strrchr(tc->model, '/');
    base = base ? base + 1 : tc->model;
    snprintf(prefix, sizeof(prefix), "%.*s_output", (int)(strlen(base) - 5), base);
    return load_series(tc->dir, prefix, out, st, msg, msgn);
}

/* Argmax over the last axis, position by position: the share that agrees must reach
 * min_share. top1: name it "top-1" (classifier outputs). 1 when it does, else 0 with the
 * first disagreement in msg; on a pass msg gives the agreement. */
static int check_argmax(const ti_tensor *got, const ti_tensor *want, double min_share, int top1,
                        char *msg, size_t msgn)
{
    int64_t last = want->shape[want->rank - 1];
    size_t rows = last > 0 ? ti_tensor_numel(want) / (size_t)last : 0, agree = 0, first = 0;
    int64_t fg = 0, fw = 0;
    for (size_t r = 0; r < rows; r++) {
        int64_t g = td_argmax_row(got, r), w = td_argmax_row(want, r);
        if (g == w) {
            agree++;
        } else if (agree == r) { /* the first disagreement */
            first = r;
            fg = g;
            fw = w;
        }
    }
    double share = rows ? (double)agree / (double)rows : 1.0;
    if (share + 1e-12 >= min_share) {
        if (top1 && rows == 1)
            td_msg(msg, msgn, "top-1 %lld identical", (long long)td_argmax_row(want, 0));
        else
            td_msg(msg, msgn, "%s agrees on %zu of %zu positions (%.3f%%)",
                   top1 ? "top-1" : "argmax", agree, rows, 100.0 * share);
        return 1;
    }
    char gv[64], wv[64], gw[64];
    size_t base = first * (size_t)last;
    td_fmt_elem(got, base + (size_t)fg, gv, sizeof(gv));
    td_fmt_elem(want, base + (size_t)fw, wv, sizeof(wv));
    td_fmt_elem(got, base + (size_t)fw, gw, sizeof(gw));
    td_msg(msg, msgn,
           "%s agrees on %zu of %zu positions (%.3f%%, need %.3f%%); first differs at row %zu: "
           "got index %lld (value %s), expected %lld (value %s; got has %s there)",
           top1 ? "top-1" : "argmax", agree, rows, 100.0 * share, 100.0 * min_share, first,
           (long long)fg, gv, (long long)fw, wv, gw);
    return 0;
}

/* An integer output that is not quantized (a label map such as a segmenter's ARG_MAX):
 * the share of equal elements must reach min_share. */
static int check_label_map(const ti_tensor *got, const ti_tensor *want, double min_share,
                           char *msg, size_t msgn)
{
    char gs[64], ws[64];
    int same = got->dtype == want->dtype && got->rank == want->rank;
    for (int d = 0; same && d < got->rank; d++) same = got->shape[d] == want->shape[d];
    if (!same) {
        td_shape_str(got->rank, got->shape, gs, sizeof(gs));
        td_shape_str(want->rank, want->shape, ws, sizeof(ws));
        td_msg(msg, msgn, "%s %s, expected %s %s", ti_dtype_name(got->dtype), gs,
               ti_dtype_name(want->dtype), ws);
        return 0;
    }
    size_t n = ti_tensor_numel(want), agree = 0;
    if (n && (!got->data || !want->data)) {
        td_msg(msg, msgn, "no data (got %p, expected %p)", got->data, want->data);
        return 0;
    }
    for (size_t i = 0; i < n; i++) agree += td_get_i64(got, i) == td_get_i64(want, i);
    double share = n ? (double)agree / (double)n : 1.0;
    td_msg(msg, msgn, "labels agree on %zu of %zu elements (%.3f%%%s%.3f%%)", agree, n,
           100.0 * share, share + 1e-12 >= min_share ? ", need " : ", below the needed ",
           100.0 * min_share);
    return share + 1e-12 >= min_share;
}

/* Feeds one data set into the session (creating it on the first), runs, compares. Returns
 * R_PASSED or the failure class with the reason in msg. */
/* --device-ops: every node of a listed op type runs on the backend asked for. */
static int check_device_ops(const options *o, ti_session *s, char *msg, size_t msgn)
{
    if (!o->device_ops) return 1;
    int n = ti_session_num_nodes(s);
    for (int i = 0; i < n; i++) {
        ti_node_info ni;
        if (ti_session_node_info(s, i, &ni) != TI_OK) continue;
        char key[128];
        snprintf(key, sizeof(key), ",%s,", ni.op ? ni.op : "");
        if (!strstr(o->device_ops, key) || ni.backend == o->backend) continue;
        td_msg(msg, msgn, "node %d '%s' (%s) ran on the CPU: %s", i, ni.name ? ni.name : "", ni.op,
               ni.placement ? ni.placement : "");
        return 0;
    }
    return 1;
}

/* --same-as-cpu: a CPU session fed the same inputs gives the same outputs: the same bytes
 * for integer outputs, floats within --max-rel (1e-4 when not given). */
static int check_same_as_cpu(const options *o, const ti_model *m, ti_session *s, char *msg,
                             size_t msgn)
{
    if (!o->same_as_cpu || o->backend == TI_BACKEND_CPU) return 1;
    ti_session_desc desc;
    ti_error err;
    memset(&desc, 0, sizeof(desc));
    memset(&err, 0, sizeof(err));
    desc.num_threads = o->threads;
    desc.backend = TI_BACKEND_CPU;
    ti_session *c = ti_session_create(m, &desc, &err);
    int ok = c != NULL;
    if (!ok) td_msg(msg, msgn, "CPU session: %s", err.message);
    /* the same shapes first (setting one re-plans, and input data does not survive that),
     * then the same bytes */
    for (int k = 0; ok && k < ti_session_num_inputs(s); k++) {
        const ti_tensor *a = ti_session_input(s, k), *b = ti_session_input(c, k);
        if (b->rank != a->rank || memcmp(b->shape, a->shape, sizeof(a->shape[0]) * (size_t)a->rank))
            ok = ti_session_set_input_shape(c, k, a->rank, a->shape, &err) == TI_OK;
        if (!ok) td_msg(msg, msgn, "CPU session input %d: %s", k, err.message);
    }
    for (int k = 0; ok && k < ti_session_num_inputs(s); k++) {
        const ti_tensor *a = ti_session_input(s, k);
        ti_tensor *b = ti_session_input(c, k);
        ok = b->size_bytes == a->size_bytes;
        if (ok) memcpy(b->data, a->data, a->size_bytes);
        else td_msg(msg, msgn, "CPU session input %d holds %zu bytes", k, b->size_bytes);
    }
    if (ok && ti_session_run(c, &err) != TI_OK) {
        ok = 0;
        td_msg(msg, msgn, "CPU run: %s", err.message);
    }
    for (int k = 0; ok && k < ti_session_num_outputs(s); k++) {
        const ti_tensor *g = ti_session_output(s, k), *w = ti_session_output(c, k);
        char why[REASON_LEN] = "";
        if (td_is_float(g->dtype)) {
            ok = td_compare_ex(g, w, 0, 0, o->max_rel >= 0 ? o->max_rel : 1e-4, 0, why, sizeof(why));
        } else {
            ok = g->size_bytes == w->size_bytes && g->dtype == w->dtype &&
                 memcmp(g->data, w->data, g->size_bytes) == 0;
            size_t i = 0;
            while (!ok && i < g->size_bytes && i < w->size_bytes &&
                   ((const unsigned char *)g->data)[i] == ((const unsigned char *)w->data)[i])
                i++;
            if (!ok) snprintf(why, sizeof(why), "bytes differ from byte %zu", i);
        }
        if (!ok) td_msg(msg, msgn, "output %d differs from the CPU's: %s", k, why);
    }
    ti_session_destroy(c);
    return ok;
}

static int run_data_set(const test_case *tc, const options *o, const ti_model *m,
                        ti_session **sp, const char *set_name, td_tensor *ins, int n_in,
                        td_tensor *outs, int n_outs, double rtol, double atol, char *msg,
                        size_t msgn)
{
    ti_error err;
    memset(&err, 0, sizeof(err));
    if (!*sp) {
        /* Bind the model's symbolic dims to the first data set's shapes. */
        ti_dim_binding binds[MAX_BINDINGS];
        int nb = 0, nmi = ti_model_num_inputs(m);
        for (int k = 0; k < n_in && k < nmi; k++) {
            ti_value_info vi;
            if (ti_model_input_info(m, k, &vi) != TI_OK || vi.rank != ins[k].t.rank) continue;
            for (int d = 0; d < vi.rank; d++) {
                if (!vi.dim_names[d] || !vi.dim_names[d][0] || nb >= MAX_BINDINGS) continue;
                int dup = 0;
                for (int b = 0; b < nb; b++) dup |= strcmp(binds[b].name, vi.dim_names[d]) == 0;
                if (dup) continue;
                binds[nb].name = vi.dim_names[d];
                binds[nb].value = ins[k].t.shape[d];
                nb++;
            }
        }
        ti_session_desc desc;
        memset(&desc, 0, sizeof(desc));
        desc.num_threads = o->threads;
        desc.backend = o->backend;
        desc.dim_bindings = nb ? binds : NULL;
        desc.num_dim_bindings = nb;
        *sp = ti_session_create(m, &desc, &err);
        if (!*sp) {
            td_msg(msg, msgn, "session: %s", err.message[0] ? err.message : ti_status_string(err.code));
            return classify_error(&err);
        }
    }
    ti_session *s = *sp;
    int ns_in = ti_session_num_inputs(s);
    if (ns_in != n_in) {
        td_msg(msg, msgn, "%s: the session has %d inputs, the data set %d", set_name, ns_in, n_in);
        return R_FAILED;
    }
    /* Match files to inputs: by name when the file names one, else by position. */
    int map[256];
    if (n_in > 256) {
        td_msg(msg, msgn, "%s: %d inputs, more than the runner handles (256)", set_name, n_in);
        return R_FAILED;
    }
    for (int k = 0; k < n_in; k++) {
        int idx = -1;
        if (ins[k].t.name && ins[k].t.name[0]) idx = session_input_index(s, ins[k].t.name);
        if (idx < 0) idx = k;
        for (int j = 0; j < k; j++) {
            if (map[j] == idx) {
                td_msg(msg, msgn, "%s: input_%d.pb and input_%d.pb both feed input %d", set_name,
                       j, k, idx);
                return R_FAILED;
            }
        }
        map[k] = idx;
    }
    for (int k = 0; k < n_in; k++) {
        ti_tensor *t = ti_session_input(s, map[k]);
        const ti_tensor *f = &ins[k].t;
        if (!t) {
            td_msg(msg, msgn, "%s: ti_session_input(%d) returned NULL", set_name, map[k]);
            return R_FAILED;
        }
        int same = t->rank == f->rank;
        for (int d = 0; same && d < f->rank; d++) same = t->shape[d] == f->shape[d];
        if (same) continue;
        if (ti_session_set_input_shape(s, map[k], f->rank, f->shape, &err) != TI_OK) {
            char shp[128];
            td_shape_str(f->rank, f->shape, shp, sizeof(shp));
            td_msg(msg, msgn, "%s: set_input_shape(%d, %s): %s", set_name, map[k], shp,
                   err.message[0] ? err.message : ti_status_string(err.code));
            return classify_error(&err);
        }
    }
    for (int k = 0; k < n_in; k++) {
        ti_tensor *t = ti_session_input(s, map[k]);
        const ti_tensor *f = &ins[k].t;
        if (!t) {
            td_msg(msg, msgn, "%s: ti_session_input(%d) returned NULL", set_name, map[k]);
            return R_FAILED;
        }
        if (t->dtype != f->dtype) {
            td_msg(msg, msgn, "%s: input_%d.pb is %s, session input %d '%s' is %s", set_name, k,
                   ti_dtype_name(f->dtype), map[k], t->name ? t->name : "",
                   ti_dtype_name(t->dtype));
            return R_FAILED;
        }
        if (t->size_bytes != f->size_bytes || (f->size_bytes && !t->data)) {
            td_msg(msg, msgn, "%s: input %d '%s' holds %zu bytes (data %p), the file %zu", set_name,
                   map[k], t->name ? t->name : "", t->size_bytes, t->data, f->size_bytes);
            return R_FAILED;
        }
        if (f->size_bytes) memcpy(t->data, f->data, f->size_bytes);
    }
    if (ti_session_run(s, &err) != TI_OK) {
        td_msg(msg, msgn, "%s: run: %s", set_name,
               err.message[0] ? err.message : ti_status_string(err.code));
        return classify_error(&err);
    }
    int ns_out = ti_session_num_outputs(s);
    if (ns_out != n_outs) {
        td_msg(msg, msgn, "%s: the session has %d outputs, the data set %d", set_name, ns_out,
               n_outs);
        return R_FAILED;
    }
    for (int k = 0; k < n_outs; k++) {
        const ti_tensor *want = &outs[k].t;
        int idx = -1;
        if (want->name && want->name[0]) idx = session_output_index(s, want->name);
        if (idx < 0) idx = k;
        const ti_tensor *got = ti_session_output(s, idx);
        if (!got) {
            td_msg(msg, msgn, "%s: ti_session_output(%d) returned NULL", set_name, idx);
            return R_FAILED;
        }
        char why[REASON_LEN];
        why[0] = 0;
        /* Integer tolerance: quantized outputs may be atol units off; a TFLite integer
         * output without quantization (ARG_MAX, SHAPE, a label map) is exact. */
        int64_t int_atol = atol >= 1 ? (int64_t)atol : 0;
        if (tc->tflite && got->quant.count == 0) int_atol = 0;
        int label_map = o->min_agree >= 0 && !td_is_float(want->dtype) &&
                        want->dtype != TI_DTYPE_BOOL && got->quant.count == 0;
        int ok;
        if (label_map) {
            ok = check_label_map(got, want, o->min_agree, why, sizeof(why));
        } else {
            ok = td_compare_ex(got, want, rtol, atol, o->max_rel, int_atol, why, sizeof(why));
            if (ok && o->min_agree >= 0 && want->rank >= 1 && want->shape[want->rank - 1] > 1) {
                char why2[REASON_LEN / 2];
                ok = check_argmax(got, want, o->min_agree, o->check_argmax, why2, sizeof(why2));
                size_t l = ok && why[0] ? strlen(why) : 0; /* keep the compare's note too */
                if (l + 2 + strlen(why2) < sizeof(why)) {
                    if (l) {
                        memcpy(why + l, "; ", 2);
                        l += 2;
                    }
                    memcpy(why + l, why2, strlen(why2) + 1);
                }
            }
        }
        if (!ok) {
            td_msg(msg, msgn, "%s: output %d '%s': %s", set_name, idx, got->name ? got->name : "",
                   why);
            return R_FAILED;
        }
        if (why[0]) { /* the measured error, values off, argmax agreement: kept for -v */
            size_t l = strlen(msg);
            if (l + 8 < msgn)
                snprintf(msg + l, msgn - l, "%soutput %d: %s", l ? "; " : "", idx, why);
        }
    }
    if (!check_device_ops(o, s, msg, msgn) || !check_same_as_cpu(o, m, s, msg, msgn))
        return R_FAILED;
    return R_PASSED;
}

static int run_test(const test_case *tc, const options *o, op_set *ops, char *msg, size_t msgn)
{
    int result = R_FAILED;
    char path[PATH_LEN];
    char **sets = NULL;
    int nsets = 0;
    ti_model *m = NULL;
    ti_session *s = NULL;
    ti_error err;
    memset(&err, 0, sizeof(err));
    msg[0] = 0;

    /* The op set is recorded before any early return, so that UNSUPPORTED_DATA tests and
     * unsupported ops still count under their op types; a load error is reported after. */
    m = ti_model_load_file(tc->model, NULL, &err);
    for (int i = 0, nn = ti_model_num_nodes(m); i < nn; i++) {
        const char *op = ti_model_node_op(m, i), *dom = ti_model_node_domain(m, i);
        if (op) op_set_add(ops, dom ? dom : "", op);
    }

    if (!tc->flat && td_join(path, sizeof(path), tc->dir, "UNSUPPORTED_DATA") && td_is_file(path)) {
        size_t n = 0;
        char *why = td_read_file(path, &n, msg, msgn);
        if (why) {
            char *nl = strchr(why, '\n');
            if (nl) *nl = 0;
            td_msg(msg, msgn, "UNSUPPORTED_DATA: %s", why);
            free(why);
        }
        ti_model_free(m);
        return R_UNSUPPORTED;
    }
    {
        size_t w = 0;
        for (int i = 0; i < ops->n; i++) {
            if (ops->supported[i]) continue;
            w += (size_t)snprintf(msg + w, w < msgn ? msgn - w : 0, "%s%s", w ? ", " : "op not supported: ",
                                  ops->names[i]);
            if (w >= msgn) break;
        }
        if (w) {
            ti_model_free(m);
            return R_UNSUPPORTED;
        }
    }
    if (!m) {
        td_msg(msg, msgn, "load: %s", err.message[0] ? err.message : ti_status_string(err.code));
        return classify_error(&err);
    }

    double rtol = 1e-3, atol = 1e-7; /* onnx.backend.test.loader defaults */
    if (!tc->flat) read_tolerance(tc->dir, &rtol, &atol);
    if (tc->flat) {
        td_tensor *ins = NULL, *outs = NULL;
        int n_in = 0, n_out;
        ti_status st = make_flat_inputs(m, &ins, &n_in, msg, msgn);
        if (st != TI_OK) {
            result = st == TI_ERR_UNSUPPORTED ? R_UNSUPPORTED : R_FAILED;
        } else if ((n_out = load_flat_outputs(tc, &outs, &st, msg, msgn)) < 0) {
            result = st == TI_ERR_UNSUPPORTED ? R_UNSUPPORTED : R_FAILED;
        } else {
            result = run_data_set(tc, o, m, &s, "generated input", ins, n_in, outs, n_out, rtol,
                                  atol, msg, msgn);
            free_series(outs, n_out);
        }
        free_series(ins, n_in);
        goto done;
    }

    {
        char **names = NULL;
        int n = td_list_dir(tc->dir, &names);
        for (int i = 0; i < n; i++) {
            char p2[PATH_LEN];
            if (strncmp(names[i], "test_data_set_", 14) == 0 &&
                td_join(p2, sizeof(p2), tc->dir, names[i]) && td_is_dir(p2)) {
                names[nsets++] = names[i];
                names[i] = NULL;
            } else {
                free(names[i]);
                names[i] = NULL;
            }
        }
        sets = names;
        if (nsets > 1) qsort(sets, (size_t)nsets, sizeof(char *), cmp_data_sets);
    }
    if (nsets == 0) {
        td_msg(msg, msgn, "no test_data_set_N directory");
        result = R_FAILED;
        goto done;
    }
    result = R_PASSED;
    for (int k = 0; k < nsets && result == R_PASSED; k++) {
        char sd[PATH_LEN];
        td_tensor *ins = NULL, *outs = NULL;
        int n_in, n_out = -1;
        ti_status st = TI_OK;
        if (!td_join(sd, sizeof(sd), tc->dir, sets[k])) {
            td_msg(msg, msgn, "path too long");
            result = R_FAILED;
            break;
        }
        n_in = load_series(sd, "input", &ins, &st, msg, msgn);
        if (n_in >= 0) n_out = load_series(sd, "output", &outs, &st, msg, msgn);
        if (n_in < 0 || n_out < 0) {
            result = st == TI_ERR_UNSUPPORTED ? R_UNSUPPORTED : R_FAILED;
        } else if (n_out == 0) {
            td_msg(msg, msgn, "%s: no output_0.pb", sets[k]);
            result = R_FAILED;
        } else {
            result = run_data_set(tc, o, m, &s, sets[k], ins, n_in, outs, n_out, rtol, atol, msg,
                                  msgn);
        }
        if (n_in > 0) free_series(ins, n_in);
        if (n_out > 0) free_series(outs, n_out);
    }
done:
    for (int i = 0; i < nsets; i++) free(sets[i]);
    free(sets);
    ti_session_destroy(s);
    ti_model_free(m);
    return result;
}

/* ---- discovery ------------------------------------------------------------------------ */

/* A test dir: model.onnx or model.tflite, or exactly one *.onnx or *.tflite beside
 * test_data_set_N/. */
static int find_model(const char *dir, char *out, size_t n)
{
    if (td_join(out, n, dir, "model.onnx") && td_is_file(out)) return 1;
    if (td_join(out, n, dir, "model.tflite") && td_is_file(out)) return 1;
    char **names = NULL;
    int cnt = td_list_dir(dir, &names), n_onnx = 0, has_sets = 0, which = -1;
    for (int i = 0; i < cnt; i++) {
        if (td_ends_with(names[i], ".onnx") || td_ends_with(names[i], ".tflite")) {
            n_onnx++;
            which = i;
        }
        has_sets |= strncmp(names[i], "test_data_set_", 14) == 0;
    }
    int ok = n_onnx == 1 && has_sets && td_join(out, n, dir, names[which]) && td_is_file(out);
    td_free_names(names, cnt);
    return ok;
}

static void base_name(const char *path, char *out, size_t n)
{
    char tmp[PATH_LEN];
    snprintf(tmp, sizeof(tmp), "%s", path);
    size_t l = strlen(tmp);
    while (l > 1 && tmp[l - 1] == '/') tmp[--l] = 0;
    const char *b = strrchr(tmp, '/');
    snprintf(out, n, "%s", b ? b + 1 : tmp);
}

static void parent_name(const char *path, char *out, size_t n)
{
    char tmp[PATH_LEN];
    snprintf(tmp, sizeof(tmp), "%s", path);
    size_t l = strlen(tmp);
    while (l > 1 && tmp[l - 1] == '/') tmp[--l] = 0;
    char *b = strrchr(tmp, '/');
    if (!b) {
        char cwd[PATH_LEN];
        if (getcwd(cwd, sizeof(cwd))) {
            base_name(cwd, out, n);
            return;
        }
        snprintf(out, n, ".");
        return;
    }
    *b = 0;
    base_name(tmp[0] ? tmp : "/", out, n);
}

typedef struct case_list {
    test_case *v;
    int n, cap;
} case_list;

static test_case *case_add(case_list *l)
{
    if (l->n == l->cap) {
        int nc = l->cap ? l->cap * 2 : 256;
        test_case *nv = (test_case *)realloc(l->v, (size_t)nc * sizeof(test_case));
        if (!nv) return NULL;
        l->v = nv;
        l->cap = nc;
    }
    test_case *t = &l->v[l->n++];
    memset(t, 0, sizeof(*t));
    return t;
}

static int matches(const options *o, const char *suite, const char *name)
{
    if (!o->filter) return 1;
    char id[512];
    snprintf(id, sizeof(id), "%s/%s", suite, name);
    return strstr(id, o->filter) != NULL;
}

/* Adds the tests of one command-line DIR. Returns 0 when DIR is not a directory. */
static int collect(const char *dir, const options *o, case_list *l)
{
    char model[PATH_LEN];
    if (!td_is_dir(dir)) return 0;
    if (find_model(dir, model, sizeof(model))) {
        char suite[128], name[256];
        parent_name(dir, suite, sizeof(suite));
        base_name(dir, name, sizeof(name));
        if (!matches(o, suite, name)) return 1;
        test_case *t = case_add(l);
        if (!t) return 1;
        snprintf(t->suite, sizeof(t->suite), "%s", suite);
        snprintf(t->name, sizeof(t->name), "%s", name);
        snprintf(t->dir, sizeof(t->dir), "%s", dir);
        snprintf(t->model, sizeof(t->model), "%s", model);
        t->tflite = td_ends_with(model, ".tflite");
        return 1;
    }
    char suite[128];
    base_name(dir, suite, sizeof(suite));
    char **names = NULL;
    int cnt = td_list_dir(dir, &names);
    for (int i = 0; i < cnt; i++) {
        char p[PATH_LEN];
        if (!td_join(p, sizeof(p), dir, names[i])) continue;
        if (td_is_dir(p)) {
            if (!find_model(p, model, sizeof(model))) {
                g_skipped_dirs++;
                if (o->verbose) printf("skipped     %s/%s: no model with test_data_set_N\n", suite, names[i]);
                continue;
            }
            if (!matches(o, suite, names[i])) continue;
            test_case *t = case_add(l);
            if (!t) break;
            snprintf(t->suite, sizeof(t->suite), "%s", suite);
            snprintf(t->name, sizeof(t->name), "%s", names[i]);
            snprintf(t->dir, sizeof(t->dir), "%s", p);
            snprintf(t->model, sizeof(t->model), "%s", model);
            t->tflite = td_ends_with(model, ".tflite");
        } else if (td_ends_with(names[i], ".onnx")) {
            /* flat layout: X.onnx beside X_output_0.pb */
            char out0[PATH_LEN], stem[256];
            snprintf(stem, sizeof(stem), "%.*s", (int)(strlen(names[i]) - 5), names[i]);
            snprintf(out0, sizeof(out0), "%s_output_0.pb", stem);
            char po[PATH_LEN];
            if (!td_join(po, sizeof(po), dir, out0) || !td_is_file(po)) continue;
            if (!matches(o, suite, stem)) continue;
            test_case *t = case_add(l);
            if (!t) break;
            snprintf(t->suite, sizeof(t->suite), "%s", suite);
            snprintf(t->name, sizeof(t->name), "%s", stem);
            snprintf(t->dir, sizeof(t->dir), "%s", dir);
            snprintf(t->model, sizeof(t->model), "%s", p);
            t->flat = 1;
        }
    }
    td_free_names(names, cnt);
    return 1;
}

/* ---- the ONNX op list (ops.txt from gen_onnx_suite.py) -------------------------------- */

typedef struct onnx_ops {
    char (*names)[64];
    int n;
    char domain[32]; /* "" (ONNX) or "tflite": from a "# domain: NAME" line */
} onnx_ops;

static int load_ops(const char *path, onnx_ops *ops)
{
    size_t size = 0;
    char msg[256];
    char *text = td_read_file(path, &size, msg, sizeof(msg));
    if (!text) return 0;
    int cap = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (strncmp(line, "# domain:", 9) == 0) {
            const char *d = line + 9;
            while (*d == ' ') d++;
            snprintf(ops->domain, sizeof(ops->domain), "%.*s", (int)strcspn(d, " \t\r"), d);
            continue;
        }
        if (line[0] == '#' || line[0] == 0) continue;
        size_t l = strcspn(line, " \t\r");
        if (l == 0 || l >= 64) continue;
        if (ops->n == cap) {
            int nc = cap ? cap * 2 : 256;
            char(*nn)[64] = (char(*)[64])realloc(ops->names, (size_t)nc * 64);
            if (!nn) break;
            ops->names = nn;
            cap = nc;
        }
        memcpy(ops->names[ops->n], line, l);
        ops->names[ops->n][l] = 0;
        ops->n++;
    }
    free(text);
    return ops->n > 0;
}

/* ops.txt from --ops, else beside, above or two above each DIR. */
static int find_ops(const options *o, char **dirs, int ndirs, onnx_ops *ops, char *found,
                    size_t n)
{
    if (o->ops_file) {
        snprintf(found, n, "%s", o->ops_file);
        return load_ops(o->ops_file, ops);
    }
    static const char *const rel[] = {"ops.txt", "../ops.txt", "../../ops.txt"};
    for (int i = 0; i < ndirs; i++) {
        for (int r = 0; r < 3; r++) {
            if (td_join(found, n, dirs[i], rel[r]) && td_is_file(found)) return load_ops(found, ops);
        }
    }
    return 0;
}

/* ---- report --------------------------------------------------------------------------- */

static int cmp_ops(const void *a, const void *b)
{
    return strcmp(((const op_stat *)a)->name, ((const op_stat *)b)->name);
}

static void md_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '|' || *s == '`' || *s == '*' || *s == '<' || *s == '>')
            fputc('\\', f);
        if (*s == '\n') {
            fputc(' ', f);
            continue;
        }
        fputc(*s, f);
    }
}

static int write_table(const char *path, const options *o, const onnx_ops *ops, int n_sup,
                       int argc, char **argv)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "onnx_runner: cannot write %s: %s\n", path, strerror(errno));
        return 0;
    }
    fprintf(f, "# %s conformance of tinyinfer %s\n\n", g_kind, TINYINFER_VERSION_STRING);
    fprintf(f, "Command: `");
    for (int i = 0; i < argc; i++) fprintf(f, "%s%s", i ? " " : "", argv[i]);
    fprintf(f, "`  \nComparison: %s; threads: %d.\n\n",
            o->max_rel >= 0 ? "max|a-b| <= X * max|b| (--max-rel)"
                            : "|a-b| <= atol + rtol*|b| (tolerance.txt, else rtol 1e-3 atol 1e-7); "
                              "integers: exact, or |a-b| <= atol for quantized outputs when atol >= 1",
            o->threads);
    if (o->max_rel >= 0) fprintf(f, "X = %g.\n\n", o->max_rel);
    fprintf(f, "## Totals\n\n| suite | tests | passed | failed | unsupported |\n|---|---:|---:|---:|---:|\n");
    for (int i = 0; i < g_nsuites; i++) {
        const suite_stat *s = &g_suites[i];
        fprintf(f, "| %s | %d | %d | %d | %d |\n", s->name,
                s->count[0] + s->count[1] + s->count[2], s->count[R_PASSED], s->count[R_FAILED],
                s->count[R_UNSUPPORTED]);
    }
    fprintf(f, "| **all** | %d | %d | %d | %d |\n\n", g_total[0] + g_total[1] + g_total[2],
            g_total[R_PASSED], g_total[R_FAILED], g_total[R_UNSUPPORTED]);
    if (ops->n)
        fprintf(f, "%s op types that `ti_op_supported` accepts: **%d of %d**.\n\n",
                ops->domain[0] ? ops->domain : "ONNX (default domain)", n_sup, ops->n);

    qsort(g_ops, (size_t)g_nops, sizeof(op_stat), cmp_ops);
    fprintf(f, "## Per op type\n\nA test counts under every op type in its model.\n\n");
    fprintf(f, "| op | tests | passed | failed | unsupported | tinyinfer |\n|---|---:|---:|---:|---:|---|\n");
    for (int i = 0; i < g_nops; i++) {
        const op_stat *s = &g_ops[i];
        fprintf(f, "| ");
        md_text(f, s->name);
        fprintf(f, " | %d | %d | %d | %d | %s |\n", s->count[0] + s->count[1] + s->count[2],
                s->count[R_PASSED], s->count[R_FAILED], s->count[R_UNSUPPORTED],
                s->supported ? "yes" : "no");
    }
    for (int pass = 0; pass < 2; pass++) {
        int want = pass == 0 ? R_FAILED : R_UNSUPPORTED;
        int cnt = 0;
        for (int i = 0; i < g_nrecs; i++) cnt += g_recs[i].result == want;
        fprintf(f, "\n## %s tests (%d)\n\n", pass == 0 ? "Failing" : "Unsupported", cnt);
        for (int i = 0; i < g_nrecs; i++) {
            if (g_recs[i].result != want) continue;
            fprintf(f, "- `%s`: ", g_recs[i].id);
            md_text(f, g_recs[i].reason);
            fputc('\n', f);
        }
    }
    if (ops->n) {
        fprintf(f, "\n## %s op types tinyinfer does not support (%d)\n\n",
                ops->domain[0] ? ops->domain : "ONNX", ops->n - n_sup);
        int first = 1;
        for (int i = 0; i < ops->n; i++) {
            if (ti_op_supported(ops->domain, ops->names[i])) continue;
            fprintf(f, "%s%s", first ? "" : ", ", ops->names[i]);
            first = 0;
        }
        fprintf(f, "\n");
    }
    int ok = fclose(f) == 0;
    if (!ok) fprintf(stderr, "onnx_runner: write error on %s\n", path);
    return ok;
}

/* ---- main ----------------------------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: onnx_runner [--threads N] [--backend cpu|opencl|auto] [--filter SUBSTR]\n"
            "                   [--max-rel X] [--table OUT.md]\n"
            "                   [--ops ops.txt] [--verbose] [--expect-pass] [--check-argmax]\n"
            "                   [--min-argmax-agree X] [--same-as-cpu] [--device-ops A,B] DIR...\n"
            "DIR: a test dir (model.onnx or model.tflite + test_data_set_N/), a suite root\n"
            "     holding test dirs, or the flat light layout (X.onnx + X_output_0.pb).\n"
            "--backend B      the session's backend (default auto); opencl fails a test when\n"
            "                 no OpenCL device can be used\n"
            "--filter SUBSTR  run only tests whose \"suite/name\" contains SUBSTR\n"
            "--max-rel X      pass when max|a-b| <= X * max|b| (instead of rtol/atol)\n"
            "--table OUT.md   write totals per suite and op type and the failing tests\n"
            "--ops FILE       list of op names (default: ops.txt beside or above DIR; a line\n"
            "                 \"# domain: tflite\" makes them TFLite builtin names)\n"
            "--expect-pass    exit 1 when any test FAILED\n"
            "--check-argmax   also require the argmax over the last axis of every output to\n"
            "                 equal the reference's at every position (classifiers: top-1)\n"
            "--min-argmax-agree X  require that share (0..1) of positions to agree instead;\n"
            "                 integer outputs without quantization (label maps) are then\n"
            "                 compared by the share of equal elements\n"
            "--same-as-cpu    also run a CPU session on the same inputs: integer outputs must\n"
            "                 be the same bytes, floats within --max-rel (default 1e-4)\n"
            "--device-ops A,B every node of these op types must run on the --backend asked\n"
            "--verbose        print every test, with the measured error / agreement\n");
}

int main(int argc, char **argv)
{
    options o;
    memset(&o, 0, sizeof(o));
    o.threads = 1;
    o.max_rel = -1;
    o.min_agree = -1;
    char **dirs = (char **)calloc((size_t)argc, sizeof(char *));
    int ndirs = 0;
    if (!dirs) return 2;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int has_val = i + 1 < argc;
        if (strcmp(a, "--threads") == 0 && has_val) {
            o.threads = atoi(argv[++i]);
        } else if (strcmp(a, "--backend") == 0 && has_val) {
            const char *b = argv[++i];
            o.backend = strcmp(b, "opencl") == 0 ? TI_BACKEND_OPENCL
                        : strcmp(b, "cpu") == 0  ? TI_BACKEND_CPU
                                                 : TI_BACKEND_AUTO;
        } else if (strcmp(a, "--filter") == 0 && has_val) {
            o.filter = argv[++i];
        } else if (strcmp(a, "--max-rel") == 0 && has_val) {
            o.max_rel = atof(argv[++i]);
            if (o.max_rel < 0) o.max_rel = 0;
        } else if (strcmp(a, "--table") == 0 && has_val) {
            o.table = argv[++i];
        } else if (strcmp(a, "--ops") == 0 && has_val) {
            o.ops_file = argv[++i];
        } else if (strcmp(a, "--verbose") == 0 || strcmp(a, "-v") == 0) {
            o.verbose = 1;
        } else if (strcmp(a, "--expect-pass") == 0) {
            o.expect_pass = 1;
        } else if (strcmp(a, "--same-as-cpu") == 0) {
            o.same_as_cpu = 1;
        } else if (strcmp(a, "--device-ops") == 0 && has_val) {
            static char ops_list[1024];
            snprintf(ops_list, sizeof(ops_list), ",%s,", argv[++i]);
            o.device_ops = ops_list;
        } else if (strcmp(a, "--check-argmax") == 0) {
            o.check_argmax = 1;
            o.min_agree = 1.0;
        } else if (strcmp(a, "--min-argmax-agree") == 0 && has_val) {
            char *end;
            o.min_agree = strtod(argv[++i], &end);
            if (*end || !(o.min_agree >= 0 && o.min_agree <= 1)) {
                fprintf(stderr, "onnx_runner: --min-argmax-agree wants a share in [0, 1], not '%s'\n",
                        argv[i]);
                free(dirs);
                return 2;
            }
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            free(dirs);
            return 0;
        } else if (a[0] == '-') {
            fprintf(stderr, "onnx_runner: unknown or incomplete option '%s'\n", a);
            usage(stderr);
            free(dirs);
            return 2;
        } else {
            dirs[ndirs++] = argv[i];
        }
    }
    if (ndirs == 0) {
        usage(stderr);
        free(dirs);
        return 2;
    }
    case_list cases;
    memset(&cases, 0, sizeof(cases));
    for (int i = 0; i < ndirs; i++) {
        if (!collect(dirs[i], &o, &cases)) {
            fprintf(stderr, "onnx_runner: %s: not a directory\n", dirs[i]);
            free(cases.v);
            free(dirs);
            return 2;
        }
    }
    int n_tflite = 0;
    for (int i = 0; i < cases.n; i++) n_tflite += cases.v[i].tflite;
    if (cases.n > 0 && n_tflite == cases.n) g_kind = "TFLite";
    else if (n_tflite > 0) g_kind = "ONNX and TFLite";
    signal(SIGSEGV, on_signal);
    signal(SIGBUS, on_signal);
    signal(SIGFPE, on_signal);
    signal(SIGILL, on_signal);
    signal(SIGABRT, on_signal);

    char msg[REASON_LEN];
    for (int i = 0; i < cases.n; i++) {
        const test_case *tc = &cases.v[i];
        snprintf(g_current, sizeof(g_current), "%s/%s", tc->suite, tc->name);
        op_set ops;
        memset(&ops, 0, sizeof(ops));
        double t0 = now_ms();
        int r = run_test(tc, &o, &ops, msg, sizeof(msg));
        double ms = now_ms() - t0;
        g_total[r]++;
        suite_stat *ss = suite_get(tc->suite);
        if (ss) ss->count[r]++;
        for (int k = 0; k < ops.n; k++) {
            op_stat *os = op_get(ops.names[k], ops.supported[k]);
            if (os) os->count[r]++;
        }
        op_set_free(&ops);
        if (r != R_PASSED) rec_add(g_current, msg, r);
        int detail = msg[0] && (o.max_rel >= 0 || o.min_agree >= 0);
        if (r != R_PASSED || o.verbose || detail) {
            printf("%-11s %s", result_names[r], g_current);
            if (msg[0]) printf(": %s", msg);
            if (o.verbose) printf(" (%.1f ms)", ms);
            printf("\n");
            fflush(stdout);
        }
    }

    onnx_ops all;
    memset(&all, 0, sizeof(all));
    char ops_path[PATH_LEN];
    int have_ops = find_ops(&o, dirs, ndirs, &all, ops_path, sizeof(ops_path));
    int n_sup = 0;
    for (int i = 0; i < all.n; i++) n_sup += ti_op_supported(all.domain, all.names[i]) != 0;
    int all_pass_ops = 0;
    for (int i = 0; i < g_nops; i++)
        all_pass_ops += g_ops[i].count[R_PASSED] > 0 && g_ops[i].count[R_FAILED] == 0 &&
                        g_ops[i].count[R_UNSUPPORTED] == 0;
    int total = g_total[0] + g_total[1] + g_total[2];
    printf("%s conformance: %d passed, %d failed, %d unsupported (of %d tests); op types: ",
           g_kind, g_total[R_PASSED], g_total[R_FAILED], g_total[R_UNSUPPORTED], total);
    if (have_ops)
        printf("%d supported (ti_op_supported) of %d %s ops", n_sup, all.n,
               all.domain[0] ? all.domain : "ONNX");
    else
        printf("ops.txt not found (pass --ops)");
    printf("; %d op types in these tests, %d with every test passing\n", g_nops, all_pass_ops);
    if (g_skipped_dirs)
        printf("(%d directories without a model and test_data_set_N were skipped)\n", g_skipped_dirs);

    int rc = 0;
    if (o.table && !write_table(o.table, &o, &all, n_sup, argc, argv)) rc = 2;
    if (o.expect_pass && g_total[R_FAILED] > 0) rc = 1;
    if (total == 0) {
        fprintf(stderr, "onnx_runner: no tests found%s\n", o.filter ? " (check --filter)" : "");
        if (!rc) rc = 2;
    }

    free(all.names);
    for (int i = 0; i < g_nrecs; i++) {
        free(g_recs[i].id);
        free(g_recs[i].reason);
    }
    free(g_recs);
    free(g_ops);
    free(g_suites);
    free(cases.v);
    free(dirs);
    return rc;
}
