/* Hand-made bad .tflite files, each with the error code it must get and a key part of the
 * message: wrong identifier and version, malformed flatbuffers (vector lengths and vtables
 * pointing outside the file), indices out of range (tensors, buffers, operator codes),
 * buffer sizes that do not match the tensor, sparse tensors, undefined inputs, two
 * producers, cycles, bad quantization; and what must load: operators out of execution
 * order (reordered), unknown builtin codes, a custom operator (the session then names it
 * and its node), buffers after the flatbuffer, misaligned buffers, variable tensors,
 * signature names. Also every allocation failing in turn while loading. The files are built
 * here with a small FlatBuffers writer, so no python runs at test time.
 * Run from the repository root (it reads tests/data/). */
#define TINYINFER_IMPLEMENTATION
#include "tinyinfer.h"
#include "ti_test.h"

/* ---- a FlatBuffers writer ---------------------------------------------------------------
 * Objects are described as a tree, then written front to back: a table's vtable, the table,
 * then its children (so every uoffset points forward, as it must). */
enum { FO_TABLE, FO_BYTES, FO_VEC };
typedef struct fobj fobj;
typedef struct ffield {
    int kind; /* 0 absent, 1 scalar, 2 object */
    int size; /* scalar bytes */
    uint64_t val;
    fobj *obj;
    size_t at; /* where the field was written */
} ffield;
struct fobj {
    int kind;
    ffield f[24]; /* FO_TABLE: by field id */
    unsigned char *bytes; /* FO_BYTES: a scalar vector or a string (with its NUL) */
    size_t len;
    uint32_t count;
    size_t align, misalign; /* data at (align * k + misalign) */
    fobj *items[64]; /* FO_VEC: a vector of tables */
    int n_items;
    size_t pos; /* where it was written (a table, or a vector's length word) */
};

static fobj *g_objs[1024];
static int g_n_objs;

static fobj *fo_new(int kind) {
    fobj *o = (fobj *)calloc(1, sizeof *o);
    if (o == NULL || g_n_objs == 1024) {
        printf("out of memory building a test file\n");
        exit(2);
    }
    o->kind = kind;
    g_objs[g_n_objs++] = o;
    return o;
}
static void fo_free_all(void) {
    for (int i = 0; i < g_n_objs; i++) {
        free(g_objs[i]->bytes);
        free(g_objs[i]);
    }
    g_n_objs = 0;
}
static fobj *T(void) { return fo_new(FO_TABLE); }
static void set_s(fobj *t, int id, int size, uint64_t v) {
    t->f[id].kind = 1;
    t->f[id].size = size;
    t->f[id].val = v;
}
static void set_o(fobj *t, int id, fobj *child) {
    t->f[id].kind = 2;
    t->f[id].obj = child;
}
static fobj *bytes_obj(const void *data, size_t len, uint32_t count, size_t align) {
    fobj *o = fo_new(FO_BYTES);
    o->bytes = (unsigned char *)malloc(len + 1);
    if (o->bytes == NULL) exit(2);
    if (len) memcpy(o->bytes, data, len);
    o->len = len;
    o->count = count;
    o->align = align;
    return o;
}
static fobj *str(const char *s) {
    return bytes_obj(s, strlen(s) + 1, (uint32_t)strlen(s), 4); /* with the NUL */
}
static fobj *vec_i32(int n, const int32_t *v) {
    unsigned char b[256];
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 4; k++) b[4 * i + k] = (unsigned char)((uint32_t)v[i] >> (8 * k));
    return bytes_obj(b, 4 * (size_t)n, (uint32_t)n, 4);
}
static fobj *vec_f32(int n, const float *v) {
    int32_t u[64];
    memcpy(u, v, 4 * (size_t)n);
    return vec_i32(n, u);
}
static fobj *vec_i64(int n, const int64_t *v) {
    unsigned char b[512];
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 8; k++) b[8 * i + k] = (unsigned char)((uint64_t)v[i] >> (8 * k));
    return bytes_obj(b, 8 * (size_t)n, (uint32_t)n, 8);
}
static fobj *vec(int n, fobj **items) {
    fobj *o = fo_new(FO_VEC);
    for (int i = 0; i < n; i++) o->items[i] = items[i];
    o->n_items = n;
    return o;
}

typedef struct wbuf {
    unsigned char *p;
    size_t n, cap;
} wbuf;
static void wb_put(wbuf *w, const void *data, size_t n) {
    if (w->n + n > w->cap) {
        size_t cap = w->cap ? w->cap : 1024;
        while (cap < w->n + n) cap *= 2;
        unsigned char *np = (unsigned char *)realloc(w->p, cap);
        if (np == NULL) exit(2);
        w->p = np;
        w->cap = cap;
    }
    if (n) memcpy(w->p + w->n, data, n);
    w->n += n;
}
static void wb_uint(wbuf *w, uint64_t v, int size) {
    unsigned char b[8];
    for (int i = 0; i < size; i++) b[i] = (unsigned char)(v >> (8 * i));
    wb_put(w, b, (size_t)size);
}
static void wb_pad(wbuf *w, size_t align, size_t rem) { /* until n % align == rem */
    while (w->n % align != rem) wb_uint(w, 0, 1);
}
static void wb_patch32(wbuf *w, size_t at, uint32_t v) {
    for (int i = 0; i < 4; i++) w->p[at + i] = (unsigned char)(v >> (8 * i));
}

static size_t emit(wbuf *w, fobj *o) {
    if (o->kind == FO_BYTES) { /* the data (after the length word) at align*k + misalign */
        size_t a = o->align < 4 ? 4 : o->align;
        wb_pad(w, a, (o->misalign + 4 * a - 4) % a); /* the length word 4 bytes before */
        o->pos = w->n;
        wb_uint(w, o->count, 4);
        wb_put(w, o->bytes, o->len);
        return o->pos;
    }
    if (o->kind == FO_VEC) {
        wb_pad(w, 4, 0);
        o->pos = w->n;
        wb_uint(w, (uint64_t)o->n_items, 4);
        size_t slots = w->n;
        for (int i = 0; i < o->n_items; i++) wb_uint(w, 0, 4);
        for (int i = 0; i < o->n_items; i++) {
            size_t c = emit(w, o->items[i]), slot = slots + 4 * (size_t)i;
            wb_patch32(w, slot, (uint32_t)(c - slot));
        }
        return o->pos;
    }
    /* table: layout, vtable, table, children */
    int nf = 0;
    size_t off[24], size = 4;
    for (int i = 0; i < 24; i++)
        if (o->f[i].kind) nf = i + 1;
    for (int i = 0; i < nf; i++) {
        if (!o->f[i].kind) continue;
        size_t s = o->f[i].kind == 2 ? 4 : (size_t)o->f[i].size;
        size = (size + s - 1) / s * s;
        off[i] = size;
        size += s;
    }
    wb_pad(w, 2, 0);
    size_t vt = w->n;
    wb_uint(w, 4 + 2 * (uint64_t)nf, 2);
    wb_uint(w, size, 2);
    for (int i = 0; i < nf; i++) wb_uint(w, o->f[i].kind ? off[i] : 0, 2);
    wb_pad(w, 8, 0);
    o->pos = w->n;
    wb_uint(w, o->pos - vt, 4);
    unsigned char zero[8] = {0};
    for (int i = 0; i < nf; i++) {
        if (!o->f[i].kind) continue;
        while (w->n < o->pos + off[i]) wb_put(w, zero, 1);
        o->f[i].at = w->n;
        if (o->f[i].kind == 1) wb_uint(w, o->f[i].val, o->f[i].size);
        else wb_uint(w, 0, 4);
    }
    while (w->n < o->pos + size) wb_put(w, zero, 1);
    for (int i = 0; i < nf; i++)
        if (o->f[i].kind == 2) {
            size_t c = emit(w, o->f[i].obj);
            wb_patch32(w, o->f[i].at, (uint32_t)(c - o->f[i].at));
        }
    return o->pos;
}

/* Writes a file: root offset, "TFL3", the model. */
static void emit_file(wbuf *w, fobj *model) {
    wb_uint(w, 0, 4);
    wb_put(w, "TFL3", 4);
    wb_patch32(w, 0, (uint32_t)emit(w, model));
}

/* ---- the test model ------------------------------------------------------------------
 * x (input, float32 [1,4]) -> ADD(x, w; RELU) -> y -> MUL(y, w) -> z (output); w is a
 * constant [1,4] = {1, 2, 3, 4} in buffer 1. Knobs make it bad in one way at a time. */
typedef struct spec {
    uint32_t version;       /* 3 */
    int w_len;              /* bytes in w's buffer: 16 */
    uint32_t w_buffer;      /* 1 */
    int w_type;             /* TensorType of w: 0 (FLOAT32) */
    int w_misalign;         /* w's data 2 bytes off a 4-byte boundary */
    int w_offset;           /* 1: w's data after the flatbuffer (offset/size); 2: offset too big */
    int w_variable;         /* w has no buffer and is_variable */
    int w_sparse;           /* w has sparsity parameters */
    int w_scales, w_zps, w_qdim; /* quantization of w (0 scales: none) */
    int w_dims[12], w_rank; /* shape of w: [1,4] */
    int add_in0;            /* ADD's first input: 0 (x) */
    int add_in0_extra;      /* 1: tensor 4 'u', which nothing produces */
    int mul_out;            /* MUL's output: 3 (z) */
    uint32_t mul_opcode;    /* 1 */
    int swap_ops;           /* MUL stored before ADD */
    int32_t code0_builtin, code0_deprecated; /* ADD: 0, 0 */
    const char *code0_custom; /* custom_code of operator code 0 */
    int custom_options;     /* ADD gets custom options "abc\0def" */
    int reshape_opts;       /* ADD gets ReshapeOptions {new_shape: [2, 2]} instead */
    int intermediates;      /* MUL gets intermediates [1, -1] */
    int no_subgraphs;
    int x_signature;        /* x has shape_signature [-1, 4] */
    int no_signature;
} spec;

static spec spec_default(void) {
    spec s;
    memset(&s, 0, sizeof s);
    s.version = 3;
    s.w_len = 16;
    s.w_buffer = 1;
    s.w_rank = 2;
    s.w_dims[0] = 1;
    s.w_dims[1] = 4;
    s.mul_out = 3;
    s.mul_opcode = 1;
    return s;
}

static fobj *tensor(const char *name, int type, uint32_t buffer, int rank, const int32_t *dims) {
    fobj *t = T();
    set_o(t, 0, vec_i32(rank, dims));
    set_s(t, 1, 1, (uint64_t)type);
    set_s(t, 2, 4, buffer);
    set_o(t, 3, str(name));
    return t;
}

/* Builds the model of spec s into w (caller frees w->p). */
static void build(const spec *s, wbuf *w) {
    static const int32_t d14[2] = {1, 4};
    float wv[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    fobj *model = T();
    set_s(model, 0, 4, s->version);
    /* operator codes */
    fobj *c0 = T(), *c1 = T();
    set_s(c0, 0, 1, (uint64_t)(uint8_t)(int8_t)s->code0_deprecated);
    set_s(c0, 3, 4, (uint64_t)(uint32_t)s->code0_builtin);
    if (s->code0_custom) set_o(c0, 1, str(s->code0_custom));
    set_s(c1, 0, 1, 18); /* MUL */
    set_s(c1, 3, 4, 18);
    fobj *codes[2] = {c0, c1};
    set_o(model, 1, vec(2, codes));
    /* tensors */
    int32_t wd[12];
    for (int i = 0; i < s->w_rank; i++) wd[i] = s->w_dims[i];
    fobj *tx = tensor("x", 0, 0, 2, d14);
    fobj *tw = tensor("w", s->w_type, s->w_variable ? 0 : s->w_buffer, s->w_rank, wd);
    fobj *ty = tensor("y", 0, 2, 2, d14);
    fobj *tz = tensor("z", 0, 0, 2, d14);
    fobj *tu = tensor("u", 0, 0, 2, d14);
    if (s->x_signature) {
        static const int32_t sig[2] = {-1, 4};
        set_o(tx, 7, vec_i32(2, sig));
    }
    if (s->w_variable) set_s(tw, 5, 1, 1);
    if (s->w_sparse) set_o(tw, 6, T());
    if (s->w_scales > 0) {
        fobj *q = T();
        float sc[16];
        int64_t zp[16];
        for (int i = 0; i < 16; i++) sc[i] = 0.5f * (float)(i + 1), zp[i] = -5 + i;
        set_o(q, 2, vec_f32(s->w_scales, sc));
        set_o(q, 3, vec_i64(s->w_zps, zp));
        set_s(q, 6, 4, (uint64_t)s->w_qdim);
        set_o(tw, 4, q);
    }
    fobj *tensors[5] = {tx, tw, ty, tz, tu};
    /* operators */
    int32_t add_in[2] = {s->add_in0_extra ? 4 : s->add_in0, 1}, add_out[1] = {2};
    int32_t mul_in[2] = {2, 1}, mul_out[1] = {s->mul_out};
    fobj *oa = T(), *om = T();
    set_s(oa, 0, 4, 0);
    set_o(oa, 1, vec_i32(2, add_in));
    set_o(oa, 2, vec_i32(1, add_out));
    if (s->reshape_opts) {
        static const int32_t ns[2] = {2, 2};
        fobj *ro = T();
        set_o(ro, 0, vec_i32(2, ns));
        set_s(oa, 3, 1, 17); /* ReshapeOptions */
        set_o(oa, 4, ro);
    } else {
        fobj *ao = T();
        set_s(ao, 0, 1, 1); /* fused_activation_function RELU */
        set_s(oa, 3, 1, 11); /* AddOptions */
        set_o(oa, 4, ao);
    }
    if (s->custom_options) set_o(oa, 5, bytes_obj("abc\0def", 7, 7, 4));
    set_s(om, 0, 4, s->mul_opcode);
    set_o(om, 1, vec_i32(2, mul_in));
    set_o(om, 2, vec_i32(1, mul_out));
    set_s(om, 3, 1, 21); /* MulOptions, empty */
    set_o(om, 4, T());
    if (s->intermediates) {
        static const int32_t im[2] = {1, -1};
        set_o(om, 8, vec_i32(2, im));
    }
    fobj *ops[2] = {s->swap_ops ? om : oa, s->swap_ops ? oa : om};
    /* subgraph */
    static const int32_t in[1] = {0}, out[1] = {3};
    fobj *sg = T();
    set_o(sg, 0, vec(s->add_in0_extra ? 5 : 4, tensors));
    set_o(sg, 1, vec_i32(1, in));
    set_o(sg, 2, vec_i32(1, out));
    set_o(sg, 3, vec(2, ops));
    set_o(sg, 4, str("main"));
    set_o(model, 2, vec(s->no_subgraphs ? 0 : 1, &sg));
    /* buffers: 0 empty, 1 w's data, 2 empty */
    fobj *b0 = T(), *b1 = T(), *b2 = T();
    fobj *wdata = NULL;
    if (s->w_offset) {
        set_s(b1, 1, 8, 0); /* patched below */
        set_s(b1, 2, 8, (uint64_t)s->w_len);
    } else {
        wdata = bytes_obj(wv, (size_t)s->w_len, (uint32_t)s->w_len, 16);
        if (s->w_misalign) wdata->misalign = 2;
        set_o(b1, 0, wdata);
    }
    fobj *bufs[3] = {b0, b1, b2};
    set_o(model, 4, vec(3, bufs));
    /* signature: x -> "in_x", z -> "out_z" */
    if (!s->no_signature) {
        fobj *sd = T(), *mi = T(), *mo = T();
        set_o(mi, 0, str("in_x"));
        set_s(mi, 1, 4, 0);
        set_o(mo, 0, str("out_z"));
        set_s(mo, 1, 4, 3);
        set_o(sd, 0, vec(1, &mi));
        set_o(sd, 1, vec(1, &mo));
        set_o(sd, 2, str("serving_default"));
        fobj *sds[1] = {sd};
        set_o(model, 7, vec(1, sds));
    }
    emit_file(w, model);
    if (s->w_offset) { /* the data after the flatbuffer, 16-aligned */
        wb_pad(w, 16, 0);
        size_t at = w->n;
        wb_put(w, wv, (size_t)s->w_len);
        uint64_t o = s->w_offset == 2 ? (uint64_t)w->n + 8 : (uint64_t)at;
        for (int i = 0; i < 8; i++) w->p[b1->f[1].at + (size_t)i] = (unsigned char)(o >> (8 * i));
    }
    fo_free_all();
}

/* Loads the model of spec s; returns the model (or NULL with err filled). */
static ti_model *load_spec(const spec *s, ti_error *err) {
    wbuf w = {0, 0, 0};
    build(s, &w);
    ti_model_desc md;
    memset(&md, 0, sizeof md);
    md.name = "m.tflite";
    ti_model *m = ti_model_load_memory(w.p, w.n, &md, err);
    free(w.p); /* the model must not point into the caller's bytes */
    return m;
}

/* Expects the load of spec s to fail with code and a message containing `part`. */
static void expect_fail(const spec *s, ti_status code, const char *part) {
    ti_error err;
    ti_model *m = load_spec(s, &err);
    TI_CHECK(m == NULL);
    ti_model_free(m);
    TI_CHECK_EQ_INT(err.code, code);
    TI_CHECK_STR_CONTAINS(err.message, "m.tflite: ");
    TI_CHECK_STR_CONTAINS(err.message, part);
}

/* ---- tests ---------------------------------------------------------------------------- */

TI_TEST(valid_model_loads) { /* the control: the writer makes files the library accepts */
    spec s = spec_default();
    ti_error err;
    ti_model *m = load_spec(&s, &err);
    if (m == NULL) printf("  %s\n", err.message);
    TI_REQUIRE(m != NULL);
    TI_CHECK_EQ_INT(ti_model_format(m), TI_FORMAT_TFLITE);
    TI_CHECK_EQ_INT(ti_model_num_inputs(m), 1);
    TI_CHECK_EQ_INT(ti_model_num_outputs(m), 1);
    TI_CHECK_EQ_INT(ti_model_num_nodes(m), 2);
    TI_CHECK_EQ_INT(ti_model_num_parameters(m), 4);
    ti_value_info vi;
    TI_CHECK_EQ_INT(ti_model_input_info(m, 0, &vi), TI_OK);
    TI_CHECK(vi.name != NULL && strcmp(vi.name, "in_x") == 0); /* the SignatureDef's name */
    TI_CHECK_EQ_INT(vi.dtype, TI_DTYPE_F32);
    TI_CHECK_EQ_INT(vi.rank, 2);
    TI_CHECK_EQ_INT(vi.shape[1], 4);
    TI_CHECK_EQ_INT(ti_model_output_info(m, 0, &vi), TI_OK);
    TI_CHECK(vi.name != NULL && strcmp(vi.name, "out_z") == 0);
    TI_CHECK(strcmp(ti_model_node_op(m, 0), "ADD") == 0);
    TI_CHECK(strcmp(ti_model_node_op(m, 1), "MUL") == 0);
    TI_CHECK(strcmp(ti_model_node_domain(m, 0), "tflite") == 0);
    TI_CHECK(strcmp(ti_model_node_name(m, 0), "y") == 0);
    TI_CHECK(strcmp(ti_model_node_name(m, 1), "out_z") == 0);
    /* internals: the attribute, the constant in place in the model's copy */
    TI_CHECK_EQ_INT(ti__attr_i(&m->nodes[0], "fused_activation_function", -1), 1);
    TI_CHECK_EQ_INT(m->nodes[1].n_attrs, 0);
    const ti__value *w = &m->values[1];
    TI_CHECK_EQ_INT(w->is_const, 1);
    TI_CHECK_EQ_INT(w->bytes, 16);
    TI_CHECK(((uintptr_t)w->data & 15) == 0);
    if (w->data != NULL) TI_CHECK_EQ_INT(((const float *)w->data)[3], 4);
    TI_CHECK_EQ_INT(m->values[2].is_const, 0); /* an empty buffer: an activation */

    ti_session *sess = ti_session_create(m, NULL, &err);
    if (ti_op_supported("tflite", "ADD") && ti_op_supported("tflite", "MUL")) {
        if (sess == NULL) printf("  %s\n", err.message);
        TI_REQUIRE(sess != NULL);
        ti_tensor *x = ti_session_input_by_name(sess, "in_x");
        TI_REQUIRE(x != NULL && x->size_bytes == 16);
        const float xs[4] = {-5, 0, 1, 2};
        memcpy(x->data, xs, 16);
        TI_CHECK_EQ_INT(ti_session_run(sess, &err), TI_OK);
        const ti_tensor *z = ti_session_output(sess, 0);
        const float want[4] = {0, 4, 12, 24}; /* relu(x + w) * w */
        for (int i = 0; i < 4 && z->data; i++) TI_CHECK_NEAR(((float *)z->data)[i], want[i], 0);
    } else {
        TI_CHECK(sess == NULL);
        TI_CHECK_EQ_INT(err.code, TI_ERR_UNSUPPORTED);
    }
    ti_session_destroy(sess);
    ti_model_free(m);
}

TI_TEST(not_a_tflite_file) {
    ti_model_desc md;
    memset(&md, 0, sizeof md);
    md.name = "m.tflite";
    md.format = TI_FORMAT_TFLITE;
    ti_error err;
    static const unsigned char wrong[16] = {12, 0, 0, 0, 'T', 'F', 'L', '2', 0};
    TI_CHECK(ti_model_load_memory(wrong, sizeof wrong, &md, &err) == NULL);
    TI_CHECK_EQ_INT(err.code, TI_ERR_BAD_MODEL);
    TI_CHECK_STR_CONTAINS(err.message, "m.tflite: not a TFLite model: file identifier is 'TFL2', expected 'TFL3'");
    TI_CHECK(ti_model_load_memory(wrong, 5, &md, &err) == NULL);
    TI_CHECK_EQ_INT(err.code, TI_ERR_BAD_MODEL);
    TI_CHECK_STR_CONTAINS(err.message, "5 bytes is too short");
    /* the identifier alone, then a root offset past the end */
    static const unsigned char root[8] = {0xff, 0xff, 0, 0, 'T', 'F', 'L', '3'};
    TI_CHECK(ti_model_load_memory(root, sizeof root, NULL, &err) == NULL);
    TI_CHECK_EQ_INT(err.code, TI_ERR_BAD_MODEL);
    TI_CHECK_STR_CONTAINS(err.message, "<memory>: malformed flatbuffer (model): table at byte 65535");
}

TI_TEST(schema_version) {
    spec s = spec_default();
    s.version = 2;
    expect_fail(&s, TI_ERR_UNSUPPORTED, "TFLite schema version 2 is not supported (expected 3)");
}

TI_TEST(malformed_flatbuffer) {
    spec s = spec_default();
    wbuf w = {0, 0, 0};
    ti_error err;
    build(&s, &w);
    /* the model table's soffset: its vtable far outside the file */
    size_t root = (size_t)w.p[0] | (size_t)w.p[1] << 8;
    unsigned char keep[4];
    memcpy(keep, w.p + root, 4);
    wb_patch32(&w, root, 0x80000000u);
    TI_CHECK(ti_model_load_memory(w.p, w.n, NULL, &err) == NULL);
    TI_CHECK_EQ_INT(err.code, TI_ERR_BAD_MODEL);
    TI_CHECK_STR_CONTAINS(err.message, "malformed flatbuffer (model): vtable");
    memcpy(w.p + root, keep, 4);
    /* a vtable entry beyond its table's size */
    size_t vt = root - ((size_t)w.p[root] | (size_t)w.p[root + 1] << 8);
    w.p[vt + 6] = 0xf0; /* field 1 (operator_codes) at offset 0xf0 of an 24-byte table */
    TI_CHECK(ti_model_load_memory(w.p, w.n, NULL, &err) == NULL);
    TI_CHECK_EQ_INT(err.code, TI_ERR_BAD_MODEL);
    TI_CHECK_STR_CONTAINS(err.message, "invalid field at byte");
    free(w.p);
    /* a vector length far past the end: the tensors vector of the subgraph */
    memset(&w, 0, sizeof w);
    build(&s, &w);
    { /* found with the library's own accessors: model.subgraphs[0].tensors */
        ti__fb b;
        ti__fb_table model, sg;
        ti__fb_vec sgs;
        ti__fb_init(&b, w.p, w.n);
        ti__fb_root(&b, &model);
        ti__fb_vector(&b, &model, 2, 4, &sgs);
        ti__fb_vec_table(&b, &sgs, 0, &sg);
        uint64_t at = ti__fb_deref(&b, &sg, 0, "vector");
        TI_REQUIRE(at != 0 && b.fault == 0);
        wb_patch32(&w, (size_t)at, 0x3fffffffu);
    }
    TI_CHECK(ti_model_load_memory(w.p, w.n, NULL, &err) == NULL);
    TI_CHECK_EQ_INT(err.code, TI_ERR_BAD_MODEL);
    TI_CHECK_STR_CONTAINS(err.message, "malformed flatbuffer (subgraph 0): vector at byte");
    TI_CHECK_STR_CONTAINS(err.message, "past the end of the");
    /* every truncation: a clean error */
    int bad = 0;
    for (size_t len = 0; len < w.n; len++) {
        unsigned char *cut = (unsigned char *)malloc(len ? len : 1);
        memcpy(cut, w.p, len);
        ti_model_desc md;
        memset(&md, 0, sizeof md);
        md.format = TI_FORMAT_TFLITE;
        ti_model *m = ti_model_load_memory(cut, len, &md, &err);
        /* only the last string's terminator and padding may go: the NUL is not needed */
        if ((m != NULL && len + 4 < w.n) || (m == NULL && err.code != TI_ERR_BAD_MODEL)) {
            if (bad++ < 5) printf("  cut to %zu of %zu bytes: %s\n", len, w.n, m ? "loads" : err.message);
        }
        ti_model_free(m);
        free(cut);
    }
    TI_CHECK_EQ_INT(bad, 0);
    free(w.p);
}

TI_TEST(no_subgraphs) {
    spec s = spec_default();
    s.no_subgraphs = 1;
    expect_fail(&s, TI_ERR_BAD_MODEL, "the model has no subgraphs");
}

TI_TEST(buffer_size_mismatch) {
    spec s = spec_default();
    s.w_len = 12;
    expect_fail(&s, TI_ERR_BAD_MODEL,
                "m.tflite: tensor 1 'w': buffer 1 has 12 bytes, expected 16 (float32 [1x4])");
}

TI_TEST(indices_out_of_range) {
    spec s = spec_default();
    s.w_buffer = 9;
    expect_fail(&s, TI_ERR_BAD_MODEL,
                "tensor 1 'w': buffer 9 is out of range (the model has 3 buffers)");
    s = spec_default();
    s.add_in0 = 7;
    expect_fail(&s, TI_ERR_BAD_MODEL,
                "operator 0 (ADD): input 0 is tensor 7, out of range (subgraph 0 has 4 tensors)");
    s = spec_default();
    s.add_in0 = -2;
    expect_fail(&s, TI_ERR_BAD_MODEL, "operator 0 (ADD): input 0 is tensor -2, out of range");
    s = spec_default();
    s.mul_out = 4;
    expect_fail(&s, TI_ERR_BAD_MODEL, "operator 1 (MUL): output 0 is tensor 4, out of range");
    s = spec_default();
    s.mul_opcode = 5;
    expect_fail(&s, TI_ERR_BAD_MODEL,
                "operator 1: opcode_index 5 is out of range (the model has 2 operator codes)");
}

TI_TEST(graph_errors) {
    ti_error err;
    spec s = spec_default();
    s.add_in0_extra = 1;
    expect_fail(&s, TI_ERR_BAD_MODEL,
                "m.tflite: node 'y' (ADD): input tensor 4 'u' is not a graph input, a constant "
                "or the output of any operator");
    ti_model_free(load_spec(&s, &err));
    TI_CHECK(strcmp(err.node, "y") == 0 && strcmp(err.op, "ADD") == 0);
    s = spec_default();
    s.add_in0 = 3; /* ADD reads z, which MUL makes from ADD's y */
    expect_fail(&s, TI_ERR_BAD_MODEL, "the graph has a cycle through this operator");
    s = spec_default();
    s.mul_out = 2; /* y made twice */
    expect_fail(&s, TI_ERR_BAD_MODEL,
                "node 'y' (MUL): output tensor 2 'y' is also operator 0 (ADD)");
    s = spec_default();
    s.mul_out = 1; /* into the constant */
    expect_fail(&s, TI_ERR_BAD_MODEL, "output tensor 1 'w' is also a constant");
    s = spec_default();
    s.mul_out = 0; /* into the graph input */
    expect_fail(&s, TI_ERR_BAD_MODEL, "output tensor 0 'in_x' is also a graph input");
}

TI_TEST(out_of_order_operators_are_reordered) {
    spec s = spec_default();
    s.swap_ops = 1;
    ti_error err;
    ti_model *m = load_spec(&s, &err);
    TI_REQUIRE(m != NULL);
    TI_CHECK(strcmp(ti_model_node_op(m, 0), "ADD") == 0);
    TI_CHECK(strcmp(ti_model_node_op(m, 1), "MUL") == 0);
    ti_model_free(m);
}

TI_TEST(sparse_tensor_unsupported) {
    spec s = spec_default();
    s.w_sparse = 1;
    expect_fail(&s, TI_ERR_UNSUPPORTED,
                "tensor 1 'w' is sparse (sparsity parameters are not supported)");
}

TI_TEST(operator_codes) {
    ti_error err;
    spec s = spec_default();
    s.code0_builtin = 250; /* a code newer than this reader: loads, the session refuses it */
    ti_model *m = load_spec(&s, &err);
    TI_REQUIRE(m != NULL);
    TI_CHECK(strcmp(ti_model_node_op(m, 0), "BUILTIN_250") == 0);
    ti_session *sess = ti_session_create(m, NULL, &err);
    TI_CHECK(sess == NULL);
    TI_CHECK_EQ_INT(err.code, TI_ERR_UNSUPPORTED);
    TI_CHECK_STR_CONTAINS(err.message,
                          "m.tflite: node 'y' (BUILTIN_250): op 'tflite.BUILTIN_250' is not supported");
    ti_session_destroy(sess);
    ti_model_free(m);
    /* the larger of deprecated_builtin_code and builtin_code, as TFLite reads them */
    s = spec_default();
    s.code0_deprecated = 127; /* PLACEHOLDER_FOR_GREATER_OP_CODES */
    s.code0_builtin = 150;
    m = load_spec(&s, &err);
    TI_REQUIRE(m != NULL);
    TI_CHECK(strcmp(ti_model_node_op(m, 0), "GELU") == 0);
    ti_model_free(m);
    s = spec_default();
    s.code0_deprecated = 41; /* old files: only the byte code */
    m = load_spec(&s, &err);
    TI_REQUIRE(m != NULL);
    TI_CHECK(strcmp(ti_model_node_op(m, 0), "SUB") == 0);
    ti_model_free(m);
    s = spec_default();
    s.code0_builtin = 32;
    s.code0_custom = "MyOp";
    s.custom_options = 1;
    m = load_spec(&s, &err);
    TI_REQUIRE(m != NULL);
    TI_CHECK(strcmp(ti_model_node_op(m, 0), "MyOp") == 0);
    const ti__attr *a = ti__attr_get(&m->nodes[0], "custom_options");
    TI_CHECK(a != NULL && a->type == TI__ATTR_STRING && a->s_len == 7 &&
             memcmp(a->s, "abc\0def", 8) == 0);
    ti_model_free(m);
    s.code0_custom = "";
    expect_fail(&s, TI_ERR_BAD_MODEL, "operator code 0 is CUSTOM but its custom_code is empty");
}

TI_TEST(custom_op_nobody_implements) {
    /* google-coral/test_data's model_invoking_error.tflite: one CUSTOM operator
     * 'fake-op-double' on unnamed tensors */
    const char *path = "tests/data/model_invoking_error.tflite";
    ti_error err;
    ti_model *m = ti_model_load_file(path, NULL, &err);
    if (m == NULL) printf("  %s\n", err.message);
    TI_REQUIRE(m != NULL);
    TI_CHECK_EQ_INT(ti_model_num_nodes(m), 1);
    TI_CHECK(strcmp(ti_model_node_op(m, 0), "fake-op-double") == 0);
    TI_CHECK(strcmp(ti_model_node_name(m, 0), "operator_0") == 0); /* no tensor name to use */
    const ti__attr *a = ti__attr_get(&m->nodes[0], "custom_options");
    TI_CHECK(a != NULL && a->s_len == 22 && memcmp(a->s, "throw_error", 11) == 0);
    ti_value_info vi;
    TI_CHECK_EQ_INT(ti_model_input_info(m, 0, &vi), TI_OK);
    TI_CHECK(strcmp(vi.name, "tensor_0") == 0);
    ti_session *s = ti_session_create(m, NULL, &err);
    TI_CHECK(s == NULL);
    TI_CHECK_EQ_INT(err.code, TI_ERR_UNSUPPORTED);
    TI_CHECK_EQ_INT(err.node_index, 0);
    TI_CHECK(strcmp(err.node, "operator_0") == 0);
    TI_CHECK(strcmp(err.op, "fake-op-double") == 0);
    TI_CHECK_STR_CONTAINS(err.message, "tests/data/model_invoking_error.tflite: node 'operator_0' "
                                       "(fake-op-double): op 'tflite.fake-op-double' is not "
                                       "supported");
    ti_session_destroy(s);
    ti_model_free(m);
}

TI_TEST(buffers_after_the_flatbuffer) {
    spec s = spec_default();
    s.w_offset = 1;
    ti_error err;
    ti_model *m = load_spec(&s, &err);
    if (m == NULL) printf("  %s\n", err.message);
    TI_REQUIRE(m != NULL);
    const ti__value *w = &m->values[1];
    TI_CHECK(w->is_const && w->bytes == 16 && ((uintptr_t)w->data & 15) == 0);
    if (w->data != NULL) TI_CHECK_EQ_INT(((const float *)w->data)[2], 3);
    ti_model_free(m);
    s.w_offset = 2;
    expect_fail(&s, TI_ERR_BAD_MODEL, "tensor 1 'w': buffer 1 (offset ");
    expect_fail(&s, TI_ERR_BAD_MODEL, "lies outside the");
}

TI_TEST(misaligned_buffer_is_copied) {
    spec s = spec_default();
    s.w_misalign = 1;
    ti_error err;
    ti_model *m = load_spec(&s, &err);
    TI_REQUIRE(m != NULL);
    const ti__value *w = &m->values[1];
    TI_CHECK(((uintptr_t)w->data & 3) == 0);
    if (w->data != NULL) TI_CHECK_EQ_INT(((const float *)w->data)[1], 2);
    ti_model_free(m);
}

TI_TEST(variable_tensor) {
    /* recurrent state: no buffer, is_variable; read as its reset value (TFLite zero-fills,
     * int8 with the zero point) */
    spec s = spec_default();
    s.w_variable = 1;
    ti_error err;
    ti_model *m = load_spec(&s, &err);
    TI_REQUIRE(m != NULL);
    const ti__value *w = &m->values[1];
    TI_CHECK(w->is_const && w->bytes == 16 && w->data != NULL);
    if (w->data != NULL) TI_CHECK_EQ_INT(((const float *)w->data)[3], 0);
    ti_model_free(m);
    s.w_type = 9; /* INT8, zero point -5 */
    s.w_scales = 1;
    s.w_zps = 1;
    m = load_spec(&s, &err);
    TI_REQUIRE(m != NULL);
    w = &m->values[1];
    TI_CHECK(w->dtype == TI_DTYPE_I8 && w->bytes == 4 && w->data != NULL);
    if (w->data != NULL) TI_CHECK_EQ_INT(((const int8_t *)w->data)[2], -5);
    ti_model_free(m);
}

TI_TEST(quantization) {
    ti_error err;
    spec s = spec_default();
    s.w_type = 9; /* INT8 [1,4]: 4 bytes, zero points -5..-2 */
    s.w_len = 4;
    s.w_scales = 4;
    s.w_zps = 4;
    s.w_qdim = 1;
    ti_model *m = load_spec(&s, &err);
    if (m == NULL) printf("  %s\n", err.message);
    TI_REQUIRE(m != NULL);
    const ti__value *w = &m->values[1];
    TI_CHECK_EQ_INT(w->quant.count, 4);
    TI_CHECK_EQ_INT(w->quant.axis, 1);
    TI_CHECK_NEAR(w->quant.scale[3], 2.0, 0);
    TI_CHECK_EQ_INT(w->quant.zero_point[3], -2);
    ti_model_free(m);
    s.w_scales = 3;
    s.w_zps = 3;
    expect_fail(&s, TI_ERR_BAD_MODEL, "tensor 1 'w' has 3 quantization scales but dim 1 is 4");
    s.w_qdim = 2;
    expect_fail(&s, TI_ERR_BAD_MODEL, "tensor 1 'w': quantized_dimension 2 is not a dim of its 2 dims");
    s.w_scales = 4;
    s.w_zps = 1;
    s.w_qdim = 1;
    expect_fail(&s, TI_ERR_BAD_MODEL, "tensor 1 'w' has 4 quantization scales and 1 zero points");
    s.w_zps = 4;
    s.w_type = 3; /* UINT8: a negative zero point is no uint8 value */
    expect_fail(&s, TI_ERR_BAD_MODEL,
                "tensor 1 'w': quantization 0 (scale 0.5, zero point -5) is out of range");
}

TI_TEST(shapes) {
    spec s = spec_default();
    s.w_rank = 9;
    for (int i = 0; i < 9; i++) s.w_dims[i] = 1;
    s.w_dims[8] = 4;
    expect_fail(&s, TI_ERR_BAD_MODEL, "tensor 1 'w' has 9 dims (limit 8)");
    s = spec_default();
    s.w_dims[0] = -1;
    expect_fail(&s, TI_ERR_BAD_MODEL, "tensor 1 'w' has data but dim 0 is -1");
    /* the caps: the constant's declared size is refused before anything is compared */
    s = spec_default();
    s.w_dims[0] = 1000000;
    s.w_dims[1] = 1000;
    expect_fail(&s, TI_ERR_OUT_OF_MEMORY, "tensor 'w' needs more than the limit");
    /* a free batch dim on the input (shape_signature -1) */
    s = spec_default();
    s.x_signature = 1;
    ti_error err;
    ti_model *m = load_spec(&s, &err);
    TI_REQUIRE(m != NULL);
    ti_value_info vi;
    ti_model_input_info(m, 0, &vi);
    TI_CHECK_EQ_INT(vi.shape[0], -1);
    TI_CHECK(vi.dim_names[0] != NULL);
    TI_CHECK_EQ_INT(vi.shape[1], 4);
    ti_model_free(m);
}

TI_TEST(attributes) {
    spec s = spec_default();
    s.reshape_opts = 1;
    s.intermediates = 1;
    s.no_signature = 1;
    ti_error err;
    ti_model *m = load_spec(&s, &err);
    TI_REQUIRE(m != NULL);
    int n = 0;
    const int64_t *ns = ti__attr_ints(&m->nodes[0], "new_shape", &n);
    TI_CHECK(ns != NULL && n == 2 && ns[0] == 2 && ns[1] == 2);
    TI_CHECK(ti__attr_get(&m->nodes[0], "fused_activation_function") == NULL);
    const int64_t *im = ti__attr_ints(&m->nodes[1], "intermediates", &n);
    TI_CHECK(im != NULL && n == 2 && im[0] == 1 && im[1] == -1);
    ti_value_info vi;
    ti_model_input_info(m, 0, &vi);
    TI_CHECK(strcmp(vi.name, "x") == 0); /* no signature: the tensor's name */
    TI_CHECK(strcmp(ti_model_node_name(m, 1), "z") == 0);
    ti_model_free(m);
}

/* Every allocation of a load failing in turn: TI_ERR_OUT_OF_MEMORY and nothing leaked. */
static void oom_sweep(const char *what, const unsigned char *bytes, size_t n) {
    ti_test_alloc c;
    ti_model_desc md;
    ti_error err;
    memset(&c, 0, sizeof c);
    memset(&md, 0, sizeof md);
    md.allocator = ti_test_allocator(&c);
    ti_model *m = ti_model_load_memory(bytes, n, &md, &err);
    TI_CHECK(m != NULL);
    ti_model_free(m);
    size_t allocs = c.allocs;
    int bad = 0;
    for (size_t k = 1; k <= allocs; k++) {
        memset(&c, 0, sizeof c);
        c.fail_at = k;
        m = ti_model_load_memory(bytes, n, &md, &err);
        if (m != NULL) ti_model_free(m);
        else if (err.code != TI_ERR_OUT_OF_MEMORY && bad++ < 5)
            printf("  %s: allocation %zu fails -> %s\n", what, k, err.message);
        if (!ti_test_alloc_balanced(&c) && bad++ < 5)
            printf("  %s: allocation %zu fails -> %zu allocs, %zu frees\n", what, k, c.allocs,
                   c.frees);
    }
    TI_CHECK_EQ_INT(bad, 0);
    printf("  %s: %zu allocations to load, each failed in turn\n", what, allocs);
}

TI_TEST(out_of_memory_everywhere) {
    static const char *const files[] = {"tests/data/split_concat.tflite",
                                        "tests/data/model_invoking_error.tflite",
                                        "tests/data/mobilenet_v1_0.25_128_quant.tflite"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        size_t n = 0;
        unsigned char *bytes = ti_test_read_file(files[i], &n);
        TI_CHECK(bytes != NULL);
        if (bytes != NULL) oom_sweep(files[i], bytes, n);
        free(bytes);
    }
    spec s = spec_default();
    s.w_variable = 1;
    s.intermediates = 1;
    s.custom_options = 1;
    wbuf w = {0, 0, 0};
    build(&s, &w);
    oom_sweep("a built model", w.p, w.n);
    free(w.p);
}

int main(void) {
    TI_RUN(valid_model_loads);
    TI_RUN(not_a_tflite_file);
    TI_RUN(schema_version);
    TI_RUN(malformed_flatbuffer);
    TI_RUN(no_subgraphs);
    TI_RUN(buffer_size_mismatch);
    TI_RUN(indices_out_of_range);
    TI_RUN(graph_errors);
    TI_RUN(out_of_order_operators_are_reordered);
    TI_RUN(sparse_tensor_unsupported);
    TI_RUN(operator_codes);
    TI_RUN(custom_op_nobody_implements);
    TI_RUN(buffers_after_the_flatbuffer);
    TI_RUN(misaligned_buffer_is_copied);
    TI_RUN(variable_tensor);
    TI_RUN(quantization);
    TI_RUN(shapes);
    TI_RUN(attributes);
    TI_RUN(out_of_memory_everywhere);
    return ti_test_summary();
}
