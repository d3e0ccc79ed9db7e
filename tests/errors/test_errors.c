/* Hand-made bad ONNX files, each with the error code it must get and a key part of the
 * message: garbage and wrong magic, truncation, huge dims (refused by the caps, never
 * allocated), a cyclic graph, an unknown op, a missing input, external data that leaves
 * the model's directory; also caller misuse, and every allocation failing in turn during
 * load and session creation (no leak, TI_ERR_OUT_OF_MEMORY), and no allocation in a run.
 * The files are built here with a small protobuf writer, so no python runs at test time.
 * Run from the repository root (it reads tests/data/ and writes under build/). */
#define _POSIX_C_SOURCE 200809L
#ifndef TI_TEST_SHARED_IMPL /* build.sh links one ASan build of the implementation */
#define TINYINFER_IMPLEMENTATION
#endif
#include "tinyinfer.h"
#include "ti_test.h"

#include <ctype.h>
#include <errno.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* ---- a protobuf writer --------------------------------------------------------------- */
typedef struct pb {
    unsigned char *p;
    size_t n, cap;
} pb;

static void pb_raw(pb *b, const void *data, size_t n) {
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n) cap *= 2;
        unsigned char *np = (unsigned char *)realloc(b->p, cap);
        if (np == NULL) {
            printf("out of memory building a test file\n");
            exit(2);
        }
        b->p = np;
        b->cap = cap;
    }
    if (n) memcpy(b->p + b->n, data, n);
    b->n += n;
}
static void pb_varint(pb *b, uint64_t v) {
    unsigned char t[10];
    size_t n = 0;
    do {
        t[n] = (unsigned char)(v & 0x7f);
        v >>= 7;
        if (v) t[n] |= 0x80;
        n++;
    } while (v);
    pb_raw(b, t, n);
}
static void pb_tag(pb *b, int field, int wire) {
    pb_varint(b, (uint64_t)field << 3 | (uint64_t)wire);
}
static void pb_int(pb *b, int field, int64_t v) {
    pb_tag(b, field, 0);
    pb_varint(b, (uint64_t)v);
}
static void pb_bytes(pb *b, int field, const void *data, size_t n) {
    pb_tag(b, field, 2);
    pb_varint(b, n);
    pb_raw(b, data, n);
}
static void pb_str(pb *b, int field, const char *s) { pb_bytes(b, field, s, strlen(s)); }
static void pb_msg(pb *b, int field, pb *sub) { /* appends sub and frees it */
    pb_bytes(b, field, sub->p, sub->n);
    free(sub->p);
    memset(sub, 0, sizeof *sub);
}
static void pb_free(pb *b) {
    free(b->p);
    memset(b, 0, sizeof *b);
}

/* ---- ONNX messages (field numbers from onnx.proto) ---------------------------------- */
enum { ONNX_FLOAT = 1, ONNX_INT64 = 7 };

/* ValueInfoProto{name, type{tensor_type{elem_type, shape{dim{dim_value}...}}}} */
static void onnx_value_info(pb *graph, int field, const char *name, int elem, int rank,
                            const int64_t *dims) {
    pb shape = {0}, tensor = {0}, type = {0}, vi = {0};
    for (int i = 0; i < rank; i++) {
        pb dim = {0};
        pb_int(&dim, 1, dims[i]);
        pb_msg(&shape, 1, &dim);
    }
    pb_int(&tensor, 1, elem);
    pb_msg(&tensor, 2, &shape);
    pb_msg(&type, 1, &tensor);
    pb_str(&vi, 1, name);
    pb_msg(&vi, 2, &type);
    pb_msg(graph, field, &vi);
}
static void onnx_input(pb *g, const char *name, int rank, const int64_t *dims) {
    onnx_value_info(g, 11, name, ONNX_FLOAT, rank, dims);
}
static void onnx_output(pb *g, const char *name, int rank, const int64_t *dims) {
    onnx_value_info(g, 12, name, ONNX_FLOAT, rank, dims);
}

/* NodeProto{input..., output..., name, op_type}; ins/outs: NULL-terminated lists. */
static void onnx_node(pb *g, const char *op, const char *name, const char *const *ins,
                      const char *const *outs) {
    pb node = {0};
    for (int i = 0; ins[i] != NULL; i++) pb_str(&node, 1, ins[i]);
    for (int i = 0; outs[i] != NULL; i++) pb_str(&node, 2, outs[i]);
    pb_str(&node, 3, name);
    pb_str(&node, 4, op);
    pb_msg(g, 1, &node);
}

/* TensorProto initializer: dims, data_type float, name, raw_data (raw may be NULL), and
 * for external data a location (then data_location = EXTERNAL). */
static void onnx_initializer(pb *g, const char *name, int rank, const int64_t *dims,
                             const void *raw, size_t raw_bytes, const char *location) {
    pb t = {0};
    for (int i = 0; i < rank; i++) pb_int(&t, 1, dims[i]);
    pb_int(&t, 2, ONNX_FLOAT);
    pb_str(&t, 8, name);
    if (raw != NULL) pb_bytes(&t, 9, raw, raw_bytes);
    if (location != NULL) {
        pb kv = {0};
        pb_str(&kv, 1, "location");
        pb_str(&kv, 2, location);
        pb_msg(&t, 13, &kv);
        pb_int(&t, 14, 1);
    }
    pb_msg(g, 5, &t);
}

/* ModelProto{ir_version 8, producer, graph, opset_import{"" 13}}; frees the graph. */
static pb onnx_model(pb *graph) {
    pb m = {0}, opset = {0};
    pb_int(&m, 1, 8);
    pb_str(&m, 2, "tinyinfer test_errors");
    pb_str(graph, 2, "g");
    pb_msg(&m, 7, graph);
    pb_str(&opset, 1, "");
    pb_int(&opset, 2, 13);
    pb_msg(&m, 8, &opset);
    return m;
}

/* A valid model: y = Relu(x + w), x and w float [2,3], w an initializer. */
static pb valid_model(void) {
    static const int64_t d[2] = {2, 3};
    static const float w[6] = {1, -2, 3, -4, 5, -6};
    static const char *const add_in[] = {"x", "w", NULL}, *const add_out[] = {"s", NULL};
    static const char *const relu_in[] = {"s", NULL}, *const relu_out[] = {"y", NULL};
    pb g = {0};
    onnx_node(&g, "Add", "add_1", add_in, add_out);
    onnx_node(&g, "Relu", "relu_1", relu_in, relu_out);
    onnx_initializer(&g, "w", 2, d, w, sizeof w, NULL);
    onnx_input(&g, "x", 2, d);
    onnx_output(&g, "y", 2, d);
    return onnx_model(&g);
}

/* ---- helpers -------------------------------------------------------------------------- */
#define NAME "bad.onnx"

/* Case-insensitive substring test. */
static int contains_ci(const char *hay, const char *needle) {
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] &&
               tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == n) return 1;
    }
    return n == 0;
}

/* Loads bytes (memory, named NAME) and, when that works, creates a session and runs it on
 * zeroed inputs. Returns the first failure's status (TI_OK when all worked); err has it.
 * Checks on the way that the allocator got every byte back. */
static ti_status load_and_run(const void *bytes, size_t n, ti_error *err, ti_test_alloc *c) {
    ti_test_alloc local;
    if (c == NULL) {
        memset(&local, 0, sizeof local);
        c = &local;
    }
    ti_model_desc md;
    memset(&md, 0, sizeof md);
    md.name = NAME;
    md.allocator = ti_test_allocator(c);
    memset(err, 0, sizeof *err);
    ti_status st = TI_OK;
    ti_model *m = ti_model_load_memory(bytes, n, &md, err);
    if (m == NULL) {
        st = err->code;
        TI_CHECK(st != TI_OK);
    } else {
        ti_session_desc sd;
        memset(&sd, 0, sizeof sd);
        sd.num_threads = 1;
        sd.allocator = ti_test_allocator(c);
        ti_session *s = ti_session_create(m, &sd, err);
        if (s == NULL) {
            st = err->code;
            TI_CHECK(st != TI_OK);
        } else {
            for (int i = 0; i < ti_session_num_inputs(s); i++) {
                ti_tensor *t = ti_session_input(s, i);
                if (t != NULL && t->data != NULL) memset(t->data, 0, t->size_bytes);
            }
            st = ti_session_run(s, err);
            ti_session_destroy(s);
        }
        ti_model_free(m);
    }
    TI_CHECK(ti_test_alloc_balanced(c));
    return st;
}

/* The message starts with the model name and has a reason after it. */
static void check_message_prefix(const ti_error *err) {
    TI_CHECK(strncmp(err->message, NAME ": ", strlen(NAME) + 2) == 0);
    TI_CHECK(strlen(err->message) > strlen(NAME) + 2);
}

/* Expects load_and_run to fail with code; prints the message (for a reader of the log)
 * and checks its prefix. */
static void expect_fail(const pb *model, ti_status code, ti_error *err) {
    ti_status st = load_and_run(model->p, model->n, err, NULL);
    printf("  %-22s -> %s: %s\n", ti_test_g.cur_name ? ti_test_g.cur_name : "",
           ti_status_string(st), err->message);
    TI_CHECK_EQ_INT(st, code);
    if (st != TI_OK) check_message_prefix(err);
}

/* ---- the cases ------------------------------------------------------------------------ */
TI_TEST(valid_model_runs) { /* the control: the builder makes files the library accepts */
    pb m = valid_model();
    ti_error err;
    ti_status st = load_and_run(m.p, m.n, &err, NULL);
    if (st != TI_OK) printf("  valid model failed: %s\n", err.message);
    TI_CHECK_EQ_INT(st, TI_OK);
    pb_free(&m);
}

TI_TEST(garbage) {
    static const char text[] = "this is not a model, it is a sentence.";
    static const unsigned char zeros[64] = {0};
    static const unsigned char ff[16] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                         0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    ti_error err;
    pb b = {0};
    pb_raw(&b, text, sizeof text - 1);
    expect_fail(&b, TI_ERR_BAD_MODEL, &err);
    pb_free(&b);
    pb_raw(&b, ff, sizeof ff);
    expect_fail(&b, TI_ERR_BAD_MODEL, &err);
    pb_free(&b);
    /* zeros: field number 0 is invalid protobuf */
    pb_raw(&b, zeros, sizeof zeros);
    expect_fail(&b, TI_ERR_BAD_MODEL, &err);
    pb_free(&b);
}

TI_TEST(wrong_magic) {
    /* a TFLite file's start ("TFL3" at offset 4) and a PNG header: not ONNX */
    static const unsigned char tfl[16] = {0x18, 0, 0, 0, 'T', 'F', 'L', '3',
                                          0,    0, 0, 0, 0,   0,   0,   0};
    static const unsigned char png[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    ti_error err;
    pb b = {0};
    pb_raw(&b, tfl, sizeof tfl);
    ti_status st = load_and_run(b.p, b.n, &err, NULL);
    printf("  tflite magic -> %s: %s\n", ti_status_string(st), err.message);
    /* TFLite may be unsupported in this build or malformed as a flatbuffer: either way no model */
    TI_CHECK(st == TI_ERR_BAD_MODEL || st == TI_ERR_UNSUPPORTED);
    if (st != TI_OK) check_message_prefix(&err);
    pb_free(&b);
    pb_raw(&b, png, sizeof png);
    expect_fail(&b, TI_ERR_BAD_MODEL, &err);
    pb_free(&b);
}

TI_TEST(empty_and_no_graph) {
    ti_error err;
    pb b = {0};
    ti_status st = load_and_run("", 0, &err, NULL);
    printf("  empty -> %s: %s\n", ti_status_string(st), err.message);
    TI_CHECK(st == TI_ERR_BAD_MODEL || st == TI_ERR_INVALID_ARGUMENT);
    /* a ModelProto with an ir_version and nothing else: there is no graph */
    pb_int(&b, 1, 8);
    expect_fail(&b, TI_ERR_BAD_MODEL, &err);
    TI_CHECK(contains_ci(err.message, "graph"));
    pb_free(&b);
}

TI_TEST(truncated) {
    pb m = valid_model();
    ti_error err;
    /* cut inside the graph message: its length says more bytes than there are */
    pb cut = {0};
    pb_raw(&cut, m.p, m.n / 2);
    expect_fail(&cut, TI_ERR_BAD_MODEL, &err);
    pb_free(&cut);
    /* cut inside the final varint */
    pb_raw(&cut, m.p, m.n - 1);
    ti_status st = load_and_run(cut.p, cut.n, &err, NULL);
    TI_CHECK(st != TI_OK);
    pb_free(&cut);
    /* a length that runs far past the end: graph field claiming 2^31 bytes */
    pb_int(&cut, 1, 8);
    pb_tag(&cut, 7, 2);
    pb_varint(&cut, (uint64_t)1 << 31);
    pb_raw(&cut, "\x0a\x00", 2);
    expect_fail(&cut, TI_ERR_BAD_MODEL, &err);
    pb_free(&cut);
    pb_free(&m);
}

/* y = x [2, 3] + huge_w, huge_w declared with rank dims but holding one float. */
static pb add_huge_w(int rank, const int64_t *dims) {
    static const int64_t x[2] = {2, 3};
    static const char *const in[] = {"x", "huge_w", NULL}, *const out[] = {"y", NULL};
    static const float one[1] = {1.0f};
    pb g = {0};
    onnx_node(&g, "Add", "add_1", in, out);
    onnx_initializer(&g, "huge_w", rank, dims, one, sizeof one, NULL);
    onnx_input(&g, "x", 2, x);
    onnx_output(&g, "y", 2, x);
    return onnx_model(&g);
}

TI_TEST(huge_dims_refused_by_cap) {
    static const int64_t huge[2] = {(int64_t)1 << 20, (int64_t)1 << 20}; /* 2^40 floats */
    static const char *const out[] = {"y", NULL};
    pb g, m = add_huge_w(2, huge);
    ti_test_alloc c;
    memset(&c, 0, sizeof c);
    ti_error err;
    ti_status st = load_and_run(m.p, m.n, &err, &c);
    printf("  2^40 floats -> %s: %s (peak %zu bytes allocated)\n", ti_status_string(st),
           err.message, c.peak_bytes);
    TI_CHECK_EQ_INT(st, TI_ERR_OUT_OF_MEMORY);
    check_message_prefix(&err);
    TI_CHECK_STR_CONTAINS(err.message, "huge_w");
    TI_CHECK_STR_CONTAINS(err.message, "limit");
    TI_CHECK(c.peak_bytes < ((size_t)16 << 20)); /* refused, never handed to the allocator */
    pb_free(&m);

    /* dims whose product overflows 64 bits */
    static const int64_t over[3] = {(int64_t)1 << 40, (int64_t)1 << 40, (int64_t)1 << 40};
    m = add_huge_w(3, over);
    st = load_and_run(m.p, m.n, &err, NULL);
    printf("  2^120 floats -> %s: %s\n", ti_status_string(st), err.message);
    TI_CHECK(st == TI_ERR_OUT_OF_MEMORY || st == TI_ERR_BAD_MODEL);
    TI_CHECK_STR_CONTAINS(err.message, "huge_w");
    pb_free(&m);

    /* one dim of 2^32 + 1 with the data of one float: on a 32-bit host the dim would wrap
     * to 1 in size_t and the 4 bytes pass for the tensor (j_i686 runs this there) */
    static const int64_t wrap[1] = {((int64_t)1 << 32) + 1};
    m = add_huge_w(1, wrap);
    st = load_and_run(m.p, m.n, &err, NULL);
    printf("  2^32 + 1 floats -> %s: %s\n", ti_status_string(st), err.message);
    TI_CHECK_EQ_INT(st, TI_ERR_OUT_OF_MEMORY);
    TI_CHECK_STR_CONTAINS(err.message, "huge_w");
    pb_free(&m);

    /* the input itself declares 2^40 elements: the session's arena cannot be planned (on a
     * 32-bit host, its shape cannot even be set) */
    static const int64_t big_in[2] = {(int64_t)1 << 20, (int64_t)1 << 20};
    static const char *const relu_in[] = {"x", NULL};
    g = (pb){0};
    onnx_node(&g, "Relu", "relu_1", relu_in, out);
    onnx_input(&g, "x", 2, big_in);
    onnx_output(&g, "y", 2, big_in);
    m = onnx_model(&g);
    memset(&c, 0, sizeof c);
    c.limit_bytes = (size_t)256 << 20;
    st = load_and_run(m.p, m.n, &err, &c);
    printf("  2^40-element input -> %s: %s\n", ti_status_string(st), err.message);
    TI_CHECK_EQ_INT(st, TI_ERR_OUT_OF_MEMORY);
    check_message_prefix(&err);
    pb_free(&m);
}

TI_TEST(negative_dim_and_rank) {
    static const int64_t neg[2] = {2, -3};
    static const int64_t x[2] = {2, 3};
    static const char *const in[] = {"x", "w", NULL}, *const out[] = {"y", NULL};
    pb g = {0};
    onnx_node(&g, "Add", "add_1", in, out);
    onnx_initializer(&g, "w", 2, neg, NULL, 0, NULL);
    onnx_input(&g, "x", 2, x);
    onnx_output(&g, "y", 2, x);
    pb m = onnx_model(&g);
    ti_error err;
    expect_fail(&m, TI_ERR_BAD_MODEL, &err);
    TI_CHECK_STR_CONTAINS(err.message, "'w'");
    pb_free(&m);

    /* rank above TI_MAX_DIMS */
    int64_t many[TI_MAX_DIMS + 1];
    for (int i = 0; i <= TI_MAX_DIMS; i++) many[i] = 1;
    static const char *const relu_in[] = {"x", NULL};
    g = (pb){0};
    onnx_node(&g, "Relu", "relu_1", relu_in, out);
    onnx_input(&g, "x", TI_MAX_DIMS + 1, many);
    onnx_output(&g, "y", TI_MAX_DIMS + 1, many);
    m = onnx_model(&g);
    ti_status st = load_and_run(m.p, m.n, &err, NULL);
    printf("  rank %d -> %s: %s\n", TI_MAX_DIMS + 1, ti_status_string(st), err.message);
    TI_CHECK(st == TI_ERR_BAD_MODEL || st == TI_ERR_UNSUPPORTED);
    TI_CHECK(contains_ci(err.message, "rank") || contains_ci(err.message, "dims"));
    pb_free(&m);
}

TI_TEST(cyclic_graph) {
    /* a = Relu(b), b = Relu(a), y = Relu(a): no order computes a or b first */
    static const int64_t d[1] = {4};
    static const char *const n1_in[] = {"b", NULL}, *const n1_out[] = {"a", NULL};
    static const char *const n2_in[] = {"a", NULL}, *const n2_out[] = {"b", NULL};
    static const char *const n3_in[] = {"a", NULL}, *const n3_out[] = {"y", NULL};
    pb g = {0};
    onnx_node(&g, "Relu", "n1", n1_in, n1_out);
    onnx_node(&g, "Relu", "n2", n2_in, n2_out);
    onnx_node(&g, "Relu", "n3", n3_in, n3_out);
    onnx_input(&g, "x", 1, d);
    onnx_output(&g, "y", 1, d);
    pb m = onnx_model(&g);
    ti_error err;
    expect_fail(&m, TI_ERR_BAD_MODEL, &err);
    TI_CHECK(contains_ci(err.message, "cycl"));
    TI_CHECK(contains_ci(err.message, "'n1'") || contains_ci(err.message, "'n2'"));
    pb_free(&m);

    /* a node that reads its own output */
    static const char *const self_in[] = {"y", NULL}, *const self_out[] = {"y", NULL};
    g = (pb){0};
    onnx_node(&g, "Relu", "self", self_in, self_out);
    onnx_input(&g, "x", 1, d);
    onnx_output(&g, "y", 1, d);
    m = onnx_model(&g);
    expect_fail(&m, TI_ERR_BAD_MODEL, &err);
    pb_free(&m);
}

/* Nodes listed after their consumers load in an order that computes each value before it is
 * read: the lowest file index first among those ready, so the file's order stays where it
 * can; the run gives the graph's values. */
TI_TEST(out_of_order_nodes_are_sorted) {
    /* listed: y = Add(b, c), c = Neg(a), b = Relu(a), a = Neg(x); sorted: a, c, b, y */
    static const int64_t d[1] = {4};
    static const char *const y_in[] = {"b", "c", NULL}, *const y_out[] = {"y", NULL};
    static const char *const c_in[] = {"a", NULL}, *const c_out[] = {"c", NULL};
    static const char *const b_in[] = {"a", NULL}, *const b_out[] = {"b", NULL};
    static const char *const a_in[] = {"x", NULL}, *const a_out[] = {"a", NULL};
    pb g = {0};
    onnx_node(&g, "Add", "node_y", y_in, y_out);
    onnx_node(&g, "Neg", "node_c", c_in, c_out);
    onnx_node(&g, "Relu", "node_b", b_in, b_out);
    onnx_node(&g, "Neg", "node_a", a_in, a_out);
    onnx_input(&g, "x", 1, d);
    onnx_output(&g, "y", 1, d);
    pb m = onnx_model(&g);
    ti_error err;
    ti_test_alloc c;
    memset(&c, 0, sizeof c);
    ti_model_desc md;
    memset(&md, 0, sizeof md);
    md.name = NAME;
    md.allocator = ti_test_allocator(&c);
    ti_model *mdl = ti_model_load_memory(m.p, m.n, &md, &err);
    TI_REQUIRE(mdl != NULL);
    static const char *const want[4] = {"node_a", "node_c", "node_b", "node_y"};
    TI_CHECK_EQ_INT(ti_model_num_nodes(mdl), 4);
    for (int i = 0; i < 4 && i < ti_model_num_nodes(mdl); i++)
        TI_CHECK(strcmp(ti_model_node_name(mdl, i), want[i]) == 0);
    ti_session *s = ti_session_create(mdl, NULL, &err);
    TI_REQUIRE(s != NULL);
    static const float x[4] = {-2.0f, -0.5f, 0.0f, 3.0f};
    memcpy(ti_session_input(s, 0)->data, x, sizeof x);
    TI_CHECK_EQ_INT(ti_session_run(s, &err), TI_OK);
    const float *y = (const float *)ti_session_output(s, 0)->data;
    for (int i = 0; i < 4; i++) { /* relu(-x) + x */
        float a = -x[i];
        TI_CHECK(y[i] == (a > 0.0f ? a : 0.0f) - a);
    }
    ti_session_destroy(s);
    ti_model_free(mdl);
    TI_CHECK_EQ_INT(c.live_bytes, 0);
    /* each allocation of the load failed in turn (the sort's among them): out of memory,
     * nothing leaked */
    memset(&c, 0, sizeof c);
    mdl = ti_model_load_memory(m.p, m.n, &md, &err);
    TI_REQUIRE(mdl != NULL);
    size_t load_allocs = c.allocs;
    ti_model_free(mdl);
    for (size_t k = 1; k <= load_allocs; k++) {
        memset(&c, 0, sizeof c);
        c.fail_at = k;
        mdl = ti_model_load_memory(m.p, m.n, &md, &err);
        if (mdl != NULL) ti_model_free(mdl); /* an optional allocation */
        else TI_CHECK_EQ_INT(err.code, TI_ERR_OUT_OF_MEMORY);
        TI_CHECK(ti_test_alloc_balanced(&c));
    }
    pb_free(&m);
}

TI_TEST(unknown_op) {
    static const int64_t d[1] = {4};
    static const char *const in[] = {"x", NULL}, *const out[] = {"y", NULL};
    pb g = {0};
    onnx_node(&g, "FrobnicateTensor", "my_node", in, out);
    onnx_input(&g, "x", 1, d);
    onnx_output(&g, "y", 1, d);
    pb m = onnx_model(&g);
    ti_error err;
    expect_fail(&m, TI_ERR_UNSUPPORTED, &err);
    TI_CHECK_STR_CONTAINS(err.message, "FrobnicateTensor");
    TI_CHECK_STR_CONTAINS(err.message, "my_node");
    TI_CHECK_STR_CONTAINS(err.op, "FrobnicateTensor");
    TI_CHECK_STR_CONTAINS(err.node, "my_node");
    TI_CHECK(err.node_index == 0);
    pb_free(&m);
    /* a node name of 400 characters (TensorFlow's fused names run to several hundred): cut
     * short in the message, whose reason is still whole */
    char longname[401];
    memset(longname, 'n', 400);
    memcpy(longname, "my_node", 7);
    longname[400] = 0;
    const char *const in2[] = {"x", NULL};
    pb g2 = {0};
    onnx_node(&g2, "FrobnicateTensor", longname, in2, out);
    onnx_input(&g2, "x", 1, d);
    onnx_output(&g2, "y", 1, d);
    m = onnx_model(&g2);
    expect_fail(&m, TI_ERR_UNSUPPORTED, &err);
    printf("  a 400-character node name: %s\n", err.message);
    TI_CHECK_STR_CONTAINS(err.message, "my_nodennn");
    TI_CHECK_STR_CONTAINS(err.message, "...' (FrobnicateTensor): ");
    TI_CHECK(contains_ci(err.message, "not supported") || contains_ci(err.message, "unsupported"));
    TI_CHECK(strlen(err.message) < sizeof err.message - 1);
    /* the prefix (file, node, op) leaves the reason 128 bytes, its NUL included */
    const char *reason = strstr(err.message, "(FrobnicateTensor): ");
    if (TI_CHECK(reason != NULL)) {
        reason += strlen("(FrobnicateTensor): ");
        TI_CHECK_EQ_INT((int)(sizeof err.message - (size_t)(reason - err.message)), 128);
    }
    pb_free(&m);
    TI_CHECK(!ti_op_supported("", "FrobnicateTensor"));
    TI_CHECK(ti_op_supported("", "Relu"));
}

TI_TEST(missing_input) {
    static const int64_t d[1] = {4};
    static const char *const in[] = {"x", "nowhere", NULL}, *const out[] = {"y", NULL};
    pb g = {0};
    onnx_node(&g, "Add", "add_1", in, out);
    onnx_input(&g, "x", 1, d);
    onnx_output(&g, "y", 1, d);
    pb m = onnx_model(&g);
    ti_error err;
    expect_fail(&m, TI_ERR_BAD_MODEL, &err);
    TI_CHECK_STR_CONTAINS(err.message, "nowhere");
    pb_free(&m);

    /* a graph output nothing produces */
    static const char *const relu_in[] = {"x", NULL}, *const relu_out[] = {"y", NULL};
    g = (pb){0};
    onnx_node(&g, "Relu", "relu_1", relu_in, relu_out);
    onnx_input(&g, "x", 1, d);
    onnx_output(&g, "ghost", 1, d);
    m = onnx_model(&g);
    expect_fail(&m, TI_ERR_BAD_MODEL, &err);
    TI_CHECK_STR_CONTAINS(err.message, "ghost");
    pb_free(&m);
}

/* A value made twice: a node's output named like a graph input, an initializer, or another
 * node's output. The message names the second node and the first producer. */
TI_TEST(value_made_twice) {
    static const int64_t d[1] = {4};
    static const float w[4] = {1, 2, 3, 4};
    static const struct {
        const char *out, *want;
    } cases[] = {
        {"x", "'n2' (Relu): output 'x' is also produced by a graph input"},
        {"w", "'n2' (Relu): output 'w' is also produced by an initializer"},
        {"a", "'n2' (Relu): output 'a' is also produced by another node ('n1', Neg)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *const n1_in[] = {"x", NULL}, *const n1_out[] = {"a", NULL};
        const char *const n2_in[] = {"a", NULL}, *const n2_out[] = {cases[i].out, NULL};
        const char *const n3_in[] = {cases[i].out, "w", NULL}, *const n3_out[] = {"y", NULL};
        pb g = {0};
        onnx_node(&g, "Neg", "n1", n1_in, n1_out);
        onnx_node(&g, "Relu", "n2", n2_in, n2_out);
        onnx_node(&g, "Add", "n3", n3_in, n3_out);
        onnx_initializer(&g, "w", 1, d, w, sizeof w, NULL);
        onnx_input(&g, "x", 1, d);
        onnx_output(&g, "y", 1, d);
        pb m = onnx_model(&g);
        ti_error err;
        expect_fail(&m, TI_ERR_BAD_MODEL, &err);
        TI_CHECK_STR_CONTAINS(err.message, cases[i].want);
        pb_free(&m);
    }
}

/* Writes bytes to path; 1 on success. */
static int write_file(const char *path, const void *data, size_t n) {
    FILE *f = fopen(path, "wb");
    if (f == NULL) return 0;
    size_t w = fwrite(data, 1, n, f);
    return fclose(f) == 0 && w == n;
}

/* A model whose initializer w [2,3] lives in external data at `location`. */
static pb external_model(const char *location) {
    static const int64_t d[2] = {2, 3};
    static const char *const in[] = {"x", "w", NULL}, *const out[] = {"y", NULL};
    pb g = {0};
    onnx_node(&g, "Add", "add_1", in, out);
    onnx_initializer(&g, "w", 2, d, NULL, 0, location);
    onnx_input(&g, "x", 2, d);
    onnx_output(&g, "y", 2, d);
    return onnx_model(&g);
}

/* Loads the model file at path with a counting allocator; with check set, also runs
 * y = Relu(x + w) of valid_model() on x = 0.5 and checks y. The allocator must get every
 * byte back. Returns the load's status. */
static ti_status load_file_with(const char *path, int check, ti_error *err) {
    static const float w[6] = {1, -2, 3, -4, 5, -6};
    ti_test_alloc c;
    memset(&c, 0, sizeof c);
    ti_model_desc md;
    memset(&md, 0, sizeof md);
    md.name = check ? NULL : NAME;
    md.allocator = ti_test_allocator(&c);
    ti_model *m = ti_model_load_file(path, &md, err);
    ti_status st = m ? TI_OK : err->code;
    TI_CHECK(m != NULL || st != TI_OK);
    if (m != NULL && check) {
        ti_session *s = ti_session_create(m, NULL, err);
        ti_tensor *x = s ? ti_session_input(s, 0) : NULL;
        if (TI_CHECK(x != NULL && x->size_bytes == sizeof w)) {
            for (int i = 0; i < 6; i++) ((float *)x->data)[i] = 0.5f;
            TI_CHECK_EQ_INT(ti_session_run(s, err), TI_OK);
            const float *y = (const float *)ti_session_output(s, 0)->data;
            for (int i = 0; i < 6; i++) TI_CHECK(y[i] == (w[i] + 0.5f > 0 ? w[i] + 0.5f : 0.0f));
        }
        ti_session_destroy(s);
    }
    ti_model_free(m);
    TI_CHECK(ti_test_alloc_balanced(&c));
    return st;
}
static ti_status load_file_named(const char *path, ti_error *err) {
    return load_file_with(path, 0, err);
}

TI_TEST(external_data_confined) {
    /* build/test/errors_ext/x (outside) and build/test/errors_ext/model/ (the model's dir) */
    const char *root = "build/test/errors_ext", *dir = "build/test/errors_ext/model";
    mkdir("build", 0755);
    mkdir("build/test", 0755);
    mkdir(root, 0755);
    mkdir(dir, 0755);
    static const float w[6] = {1, 2, 3, 4, 5, 6};
    TI_REQUIRE(write_file("build/test/errors_ext/x", w, sizeof w));
    TI_REQUIRE(write_file("build/test/errors_ext/model/w.bin", w, sizeof w));
    ti_error err;
    const char *path = "build/test/errors_ext/model/model.onnx";

    /* the control: data beside the model loads */
    pb m = external_model("w.bin");
    TI_REQUIRE(write_file(path, m.p, m.n));
    ti_status st = load_file_named(path, &err);
    if (st != TI_OK) printf("  external w.bin failed: %s\n", err.message);
    TI_CHECK_EQ_INT(st, TI_OK);
    pb_free(&m);

    static const char *const escapes[] = {"../x", "/etc/passwd", "sub/../../x",
                                          "./../model/../../x", NULL};
    for (int i = 0; escapes[i] != NULL; i++) {
        m = external_model(escapes[i]);
        TI_REQUIRE(write_file(path, m.p, m.n));
        st = load_file_named(path, &err);
        printf("  external '%s' -> %s: %s\n", escapes[i], ti_status_string(st), err.message);
        TI_CHECK_EQ_INT(st, TI_ERR_BAD_MODEL);
        TI_CHECK_STR_CONTAINS(err.message, escapes[i]);
        check_message_prefix(&err);
        pb_free(&m);
    }

    /* from memory there is no directory: external data cannot be read */
    m = external_model("w.bin");
    st = load_and_run(m.p, m.n, &err, NULL);
    printf("  external from memory -> %s: %s\n", ti_status_string(st), err.message);
    TI_CHECK(st != TI_OK);
    TI_CHECK(contains_ci(err.message, "external"));
    pb_free(&m);
}

static ti_status load_file_and_check(const char *path, ti_error *err) {
    return load_file_with(path, 1, err);
}

/* Loads path, which is no regular file (what: how the log names it): an i/o error at once,
 * its message containing want. */
static void expect_io_error(const char *path, const char *what, const char *want) {
    ti_error err;
    ti_status st = load_file_and_check(path, &err);
    printf("  %s -> %s: %s\n", what, ti_status_string(st), err.message);
    TI_CHECK_EQ_INT(st, TI_ERR_IO);
    TI_CHECK_STR_CONTAINS(err.message, want);
}

/* Model files as a user's program meets them: the whole file, cut short, empty, a
 * directory, a device. POSIX builds map the file, TI_NO_MMAP ones read it (build.sh runs
 * this program both ways); the outcomes must be the same. */
TI_TEST(model_files) {
    const char *dir = "build/test/errors_files", *path = "build/test/errors_files/m.onnx";
    mkdir("build", 0755);
    mkdir("build/test", 0755);
    mkdir(dir, 0755);
    pb m = valid_model();
    ti_error err;
    TI_REQUIRE(write_file(path, m.p, m.n));
    TI_CHECK_EQ_INT(load_file_and_check(path, &err), TI_OK);

    /* cut short at three places: bad model, the file named */
    size_t cuts[3] = {1, m.n / 2, m.n - 1};
    for (int i = 0; i < 3; i++) {
        TI_REQUIRE(write_file(path, m.p, cuts[i]));
        ti_status st = load_file_and_check(path, &err);
        printf("  %zu of %zu bytes -> %s: %s\n", cuts[i], m.n, ti_status_string(st), err.message);
        TI_CHECK_EQ_INT(st, TI_ERR_BAD_MODEL);
        TI_CHECK_STR_CONTAINS(err.message, "m.onnx");
    }
    /* the whole file again after the cut ones (a stale size or mapping would show here) */
    TI_REQUIRE(write_file(path, m.p, m.n));
    TI_CHECK_EQ_INT(load_file_and_check(path, &err), TI_OK);

    TI_REQUIRE(write_file(path, m.p, 0));
    ti_status st = load_file_and_check(path, &err);
    printf("  empty file -> %s: %s\n", ti_status_string(st), err.message);
    TI_CHECK_EQ_INT(st, TI_ERR_BAD_MODEL);
    TI_CHECK(contains_ci(err.message, "empty"));
    TI_CHECK_STR_CONTAINS(err.message, "m.onnx");

    st = load_file_and_check(dir, &err);
    printf("  a directory -> %s: %s\n", ti_status_string(st), err.message);
    TI_CHECK(st == TI_ERR_IO || st == TI_ERR_BAD_MODEL);
    TI_CHECK_STR_CONTAINS(err.message, "errors_files");

    /* a device: no size, nothing to map; read, it is empty */
    st = load_file_and_check("/dev/null", &err);
    printf("  /dev/null -> %s: %s\n", ti_status_string(st), err.message);
    TI_CHECK(st == TI_ERR_BAD_MODEL || st == TI_ERR_IO);
    TI_CHECK_STR_CONTAINS(err.message, "/dev/null");

#ifndef TI_NO_MMAP
    /* a named pipe with no writer: refused at once (reading it would wait forever) */
    const char *fifo = "build/test/errors_files/pipe";
    remove(fifo);
    if (mkfifo(fifo, 0600) == 0) expect_io_error(fifo, "a named pipe", "pipe");
    else printf("  (no named pipe here: mkfifo failed)\n");
    remove(fifo);
#endif
    /* a Unix socket's path: it does not open; an i/o error naming it, at once */
    const char *sock = "build/test/errors_files/sock";
    remove(sock);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    memcpy(sa.sun_path, sock, strlen(sock) + 1);
    if (fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0)
        expect_io_error(sock, "a socket", "sock");
    else printf("  (no Unix socket here: socket or bind failed)\n");
    remove(sock);
    if (fd >= 0) close(fd);
    pb_free(&m);
}

TI_TEST(caller_misuse) {
    ti_error err;
    TI_CHECK(ti_model_load_memory(NULL, 10, NULL, &err) == NULL);
    TI_CHECK_EQ_INT(err.code, TI_ERR_INVALID_ARGUMENT);
    TI_CHECK(ti_model_load_file(NULL, NULL, &err) == NULL);
    TI_CHECK_EQ_INT(err.code, TI_ERR_INVALID_ARGUMENT);
    TI_CHECK(ti_model_load_file("build/test/no/such/file.onnx", NULL, &err) == NULL);
    TI_CHECK_EQ_INT(err.code, TI_ERR_IO);
    TI_CHECK_STR_CONTAINS(err.message, "file.onnx");
    TI_CHECK(ti_session_create(NULL, NULL, &err) == NULL);
    TI_CHECK_EQ_INT(err.code, TI_ERR_INVALID_ARGUMENT);
    TI_CHECK(ti_session_run(NULL, &err) == TI_ERR_INVALID_ARGUMENT);
    TI_CHECK(ti_session_input(NULL, 0) == NULL);
    TI_CHECK(ti_session_output(NULL, 0) == NULL);

    /* an allocator with alloc but no free */
    pb mb = valid_model();
    ti_test_alloc c;
    memset(&c, 0, sizeof c);
    ti_model_desc md;
    memset(&md, 0, sizeof md);
    md.allocator = ti_test_allocator(&c);
    md.allocator.free = NULL;
    TI_CHECK(ti_model_load_memory(mb.p, mb.n, &md, &err) == NULL);
    TI_CHECK_EQ_INT(err.code, TI_ERR_INVALID_ARGUMENT);
    TI_CHECK_STR_CONTAINS(err.message, "<memory>");
    TI_CHECK_EQ_INT(c.allocs, 0);

    ti_model *m = ti_model_load_memory(mb.p, mb.n, NULL, &err);
    TI_REQUIRE(m != NULL);
    ti_session_desc sd;
    memset(&sd, 0, sizeof sd);
    sd.allocator.free = ti_test_allocator(&c).free;
    TI_CHECK(ti_session_create(m, &sd, &err) == NULL);
    TI_CHECK_EQ_INT(err.code, TI_ERR_INVALID_ARGUMENT);
    ti_session *s = ti_session_create(m, NULL, NULL); /* err may be NULL */
    TI_CHECK(s != NULL);
    ti_session_destroy(s);
    s = ti_session_create(m, NULL, &err);
    TI_REQUIRE(s != NULL);
    TI_CHECK(ti_session_input(s, -1) == NULL);
    TI_CHECK(ti_session_input(s, 1) == NULL);
    TI_CHECK(ti_session_output(s, 5) == NULL);
    TI_CHECK(ti_session_input_by_name(s, "nope") == NULL);
    TI_CHECK(ti_session_input_by_name(s, "x") != NULL);
    TI_CHECK(ti_session_output_by_name(s, "y") != NULL);
    ti_session_destroy(s);
    ti_model_free(m);
    pb_free(&mb);
}

/* Every allocation of load, then of session creation, fails in turn: each must give
 * TI_ERR_OUT_OF_MEMORY (never a crash), with everything freed. Then a run with every
 * allocation forbidden must work: ti_session_run does not allocate. */
static void oom_sweep(const char *path) {
    size_t n = 0;
    unsigned char *bytes = ti_test_read_file(path, &n);
    if (bytes == NULL) {
        TI_CHECK(!"cannot read the model");
        printf("  cannot read %s\n", path);
        return;
    }
    ti_test_alloc c;
    memset(&c, 0, sizeof c);
    ti_model_desc md;
    memset(&md, 0, sizeof md);
    md.allocator = ti_test_allocator(&c);
    ti_error err;
    ti_model *m = ti_model_load_memory(bytes, n, &md, &err);
    if (m == NULL) printf("  %s: %s\n", path, err.message);
    TI_CHECK(m != NULL);
    if (m == NULL) {
        free(bytes);
        return;
    }
    size_t load_allocs = c.allocs;
    ti_model_free(m);
    int bad = 0;
    for (size_t k = 1; k <= load_allocs; k++) {
        memset(&c, 0, sizeof c);
        c.fail_at = k;
        m = ti_model_load_memory(bytes, n, &md, &err);
        if (m != NULL) { /* the failed allocation was optional: fine, if nothing leaks */
            ti_model_free(m);
        } else if (err.code != TI_ERR_OUT_OF_MEMORY) {
            if (bad++ < 5) printf("  load, allocation %zu fails -> %s\n", k, err.message);
        }
        if (!ti_test_alloc_balanced(&c) && bad++ < 5)
            printf("  load, allocation %zu fails -> %zu allocs, %zu frees\n", k, c.allocs, c.frees);
    }
    TI_CHECK_EQ_INT(bad, 0);

    /* the session: the model loads with malloc, the session uses the counting allocator */
    m = ti_model_load_memory(bytes, n, NULL, &err);
    if (m == NULL) {
        free(bytes);
        return;
    }
    ti_session_desc sd;
    memset(&sd, 0, sizeof sd);
    sd.num_threads = 1;
    sd.allocator = ti_test_allocator(&c);
    sd.backend = TI_BACKEND_CPU; /* AUTO may switch to a GPU inside a run (test_session) */
    memset(&c, 0, sizeof c);
    ti_session *s = ti_session_create(m, &sd, &err);
    TI_CHECK(s != NULL);
    size_t create_allocs = c.allocs;
    if (s != NULL) {
        c.forbid = 1; /* a run must not allocate */
        for (int i = 0; i < ti_session_num_inputs(s); i++) {
            ti_tensor *t = ti_session_input(s, i);
            memset(t->data, 0, t->size_bytes);
        }
        ti_status st = ti_session_run(s, &err);
        if (st != TI_OK) printf("  %s: run: %s\n", path, err.message);
        TI_CHECK_EQ_INT(st, TI_OK);
        TI_CHECK_EQ_INT(c.forbidden, 0);
        st = ti_session_run(s, &err); /* and again */
        TI_CHECK_EQ_INT(st, TI_OK);
        TI_CHECK_EQ_INT(c.forbidden, 0);
        c.forbid = 0;
        ti_session_destroy(s);
    }
    TI_CHECK(ti_test_alloc_balanced(&c));
    bad = 0;
    for (size_t k = 1; k <= create_allocs; k++) {
        memset(&c, 0, sizeof c);
        c.fail_at = k;
        s = ti_session_create(m, &sd, &err);
        if (s != NULL) {
            ti_session_destroy(s);
        } else if (err.code != TI_ERR_OUT_OF_MEMORY) {
            if (bad++ < 5) printf("  session, allocation %zu fails -> %s\n", k, err.message);
        }
        if (!ti_test_alloc_balanced(&c) && bad++ < 5)
            printf("  session, allocation %zu fails -> %zu allocs, %zu frees\n", k, c.allocs,
                   c.frees);
    }
    TI_CHECK_EQ_INT(bad, 0);
    printf("  %s: %zu allocations to load, %zu to create a session, each failed in turn\n", path,
           load_allocs, create_allocs);
    ti_model_free(m);
    free(bytes);
}

TI_TEST(out_of_memory_everywhere) {
    oom_sweep("tests/data/conv2d_padding.onnx");
    oom_sweep("tests/data/operator_params.onnx");
    oom_sweep("tests/data/light_squeezenet.onnx");
}

int main(void) {
    TI_RUN(valid_model_runs);
    TI_RUN(garbage);
    TI_RUN(wrong_magic);
    TI_RUN(empty_and_no_graph);
    TI_RUN(truncated);
    TI_RUN(huge_dims_refused_by_cap);
    TI_RUN(negative_dim_and_rank);
    TI_RUN(cyclic_graph);
    TI_RUN(out_of_order_nodes_are_sorted);
    TI_RUN(unknown_op);
    TI_RUN(missing_input);
    TI_RUN(value_made_twice);
    TI_RUN(external_data_confined);
    TI_RUN(model_files);
    TI_RUN(caller_misuse);
    TI_RUN(out_of_memory_everywhere);
    return ti_test_summary();
}
