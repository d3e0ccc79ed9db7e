/* Builds small ONNX models in memory for tests, with a protobuf writer of a few lines, so
 * tests need no Python and no files: inputs, outputs, float/int64 initializers, nodes with
 * int / float / ints / string attributes. Field numbers follow onnx/onnx.proto.
 * Test-only code: aborts on out-of-memory (never used inside the library).
 *
 *     ob_model mb; ob_init(&mb, 13);
 *     int64_t d[2] = {1, 4};
 *     ob_input(&mb, "x", OB_FLOAT, 2, d);
 *     ob_node(&mb, "Relu", "r", "x", "y");         // one input, one output
 *     ob_output(&mb, "y", OB_FLOAT, 2, d);
 *     size_t n; unsigned char *bytes = ob_finish(&mb, &n);  // free() it */
#ifndef ONNX_BUILD_H
#define ONNX_BUILD_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#define OB__UNUSED __attribute__((unused))
#else
#define OB__UNUSED
#endif

enum { OB_FLOAT = 1, OB_UINT8 = 2, OB_INT8 = 3, OB_INT32 = 6, OB_INT64 = 7, OB_BOOL = 9 };

typedef struct ob_buf {
    unsigned char *p;
    size_t n, cap;
} ob_buf;

static OB__UNUSED void ob_put(ob_buf *b, const void *data, size_t n) {
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n) cap *= 2;
        b->p = (unsigned char *)realloc(b->p, cap);
        if (b->p == NULL) abort();
        b->cap = cap;
    }
    if (n) memcpy(b->p + b->n, data, n);
    b->n += n;
}
static OB__UNUSED void ob_varint(ob_buf *b, uint64_t v) {
    unsigned char c[10];
    int n = 0;
    do {
        c[n] = (unsigned char)(v & 0x7f);
        v >>= 7;
        if (v) c[n] |= 0x80;
        n++;
    } while (v);
    ob_put(b, c, (size_t)n);
}
static OB__UNUSED void ob_key(ob_buf *b, int field, int wire) { ob_varint(b, (uint64_t)field << 3 | (uint64_t)wire); }
static OB__UNUSED void ob_int(ob_buf *b, int field, int64_t v) {
    ob_key(b, field, 0);
    ob_varint(b, (uint64_t)v);
}
static OB__UNUSED void ob_bytes(ob_buf *b, int field, const void *data, size_t n) {
    ob_key(b, field, 2);
    ob_varint(b, n);
    ob_put(b, data, n);
}
static OB__UNUSED void ob_str(ob_buf *b, int field, const char *s) { ob_bytes(b, field, s, strlen(s)); }
/* Appends sub as a nested message and frees it. */
static OB__UNUSED void ob_msg(ob_buf *b, int field, ob_buf *sub) {
    ob_bytes(b, field, sub->p, sub->n);
    free(sub->p);
    memset(sub, 0, sizeof *sub);
}
static OB__UNUSED void ob_float(ob_buf *b, int field, float f) {
    unsigned char c[4];
    uint32_t u;
    memcpy(&u, &f, 4);
    for (int i = 0; i < 4; i++) c[i] = (unsigned char)(u >> (8 * i));
    ob_key(b, field, 5);
    ob_put(b, c, 4);
}

typedef struct ob_model {
    ob_buf graph;
    int opset;
} ob_model;

static OB__UNUSED void ob_init(ob_model *m, int opset) {
    memset(m, 0, sizeof *m);
    m->opset = opset;
    ob_str(&m->graph, 2, "test_graph");
}

/* ValueInfoProto with a tensor type; dims < 0 become dim_param "N<i>" (symbolic). */
static OB__UNUSED void ob__value_info(ob_buf *out, int field, const char *name, int elem, int rank,
                                      const int64_t *dims) {
    ob_buf vi = {0, 0, 0}, type = {0, 0, 0}, tt = {0, 0, 0}, shape = {0, 0, 0};
    ob_str(&vi, 1, name);
    ob_int(&tt, 1, elem);
    for (int i = 0; i < rank; i++) {
        ob_buf dim = {0, 0, 0};
        if (dims[i] >= 0) ob_int(&dim, 1, dims[i]);
        else {
            char p[16] = "N0";
            p[1] = (char)('0' + i);
            ob_str(&dim, 2, p);
        }
        ob_msg(&shape, 1, &dim);
    }
    if (rank >= 0) ob_msg(&tt, 2, &shape);
    ob_msg(&type, 1, &tt);
    ob_msg(&vi, 2, &type);
    ob_msg(out, field, &vi);
}
static OB__UNUSED void ob_input(ob_model *m, const char *name, int elem, int rank, const int64_t *dims) {
    ob__value_info(&m->graph, 11, name, elem, rank, dims);
}
static OB__UNUSED void ob_output(ob_model *m, const char *name, int elem, int rank, const int64_t *dims) {
    ob__value_info(&m->graph, 12, name, elem, rank, dims);
}

/* Initializers (raw_data, little-endian as on every machine the tests run on). */
static OB__UNUSED void ob__init(ob_model *m, const char *name, int elem, int rank, const int64_t *dims,
                                const void *data, size_t bytes) {
    ob_buf t = {0, 0, 0};
    for (int i = 0; i < rank; i++) ob_int(&t, 1, dims[i]);
    ob_int(&t, 2, elem);
    ob_str(&t, 8, name);
    ob_bytes(&t, 9, data, bytes);
    ob_msg(&m->graph, 5, &t);
}
static OB__UNUSED void ob_init_f32(ob_model *m, const char *name, int rank, const int64_t *dims,
                                   const float *data) {
    size_t n = 1;
    for (int i = 0; i < rank; i++) n *= (size_t)dims[i];
    ob__init(m, name, OB_FLOAT, rank, dims, data, n * 4);
}
static OB__UNUSED void ob_init_i64(ob_model *m, const char *name, int rank, const int64_t *dims,
                                   const int64_t *data) {
    size_t n = 1;
    for (int i = 0; i < rank; i++) n *= (size_t)dims[i];
    ob__init(m, name, OB_INT64, rank, dims, data, n * 8);
}

/* Attributes are collected in an ob_buf and passed to ob_node_attrs. */
static OB__UNUSED void ob_attr_int(ob_buf *attrs, const char *name, int64_t v) {
    ob_buf a = {0, 0, 0};
    ob_str(&a, 1, name);
    ob_int(&a, 3, v);
    ob_int(&a, 20, 2);
    ob_msg(attrs, 5, &a);
}
static OB__UNUSED void ob_attr_float(ob_buf *attrs, const char *name, float v) {
    ob_buf a = {0, 0, 0};
    ob_str(&a, 1, name);
    ob_float(&a, 2, v);
    ob_int(&a, 20, 1);
    ob_msg(attrs, 5, &a);
}
static OB__UNUSED void ob_attr_ints(ob_buf *attrs, const char *name, int n, const int64_t *v) {
    ob_buf a = {0, 0, 0};
    ob_str(&a, 1, name);
    for (int i = 0; i < n; i++) ob_int(&a, 8, v[i]);
    ob_int(&a, 20, 7);
    ob_msg(attrs, 5, &a);
}
static OB__UNUSED void ob_attr_string(ob_buf *attrs, const char *name, const char *s) {
    ob_buf a = {0, 0, 0};
    ob_str(&a, 1, name);
    ob_str(&a, 4, s);
    ob_int(&a, 20, 3);
    ob_msg(attrs, 5, &a);
}

/* A node with comma-separated input and output names ("x,w,b"; an empty name between
 * commas is an omitted optional input). attrs may be NULL; it is consumed. */
static OB__UNUSED void ob_node_attrs(ob_model *m, const char *op, const char *name, const char *inputs,
                                     const char *outputs, ob_buf *attrs) {
    ob_buf n = {0, 0, 0};
    const char *lists[2] = {inputs, outputs};
    for (int l = 0; l < 2; l++) {
        const char *s = lists[l];
        while (s != NULL && *s) {
            const char *e = strchr(s, ',');
            size_t len = e ? (size_t)(e - s) : strlen(s);
            ob_bytes(&n, l + 1, s, len);
            s = e ? e + 1 : NULL;
        }
    }
    ob_str(&n, 3, name);
    ob_str(&n, 4, op);
    if (attrs != NULL && attrs->n) ob_put(&n, attrs->p, attrs->n);
    if (attrs != NULL) {
        free(attrs->p);
        memset(attrs, 0, sizeof *attrs);
    }
    ob_msg(&m->graph, 1, &n);
}
static OB__UNUSED void ob_node(ob_model *m, const char *op, const char *name, const char *inputs,
                               const char *outputs) {
    ob_node_attrs(m, op, name, inputs, outputs, NULL);
}

/* The ModelProto bytes (malloc'd, the caller frees); the builder is emptied. */
static OB__UNUSED unsigned char *ob_finish(ob_model *m, size_t *size) {
    ob_buf model = {0, 0, 0}, opset = {0, 0, 0};
    ob_int(&model, 1, 8); /* ir_version */
    ob_str(&model, 2, "tinyinfer-tests");
    ob_str(&opset, 1, "");
    ob_int(&opset, 2, m->opset);
    ob_msg(&model, 8, &opset);
    ob_msg(&model, 7, &m->graph);
    *size = model.n;
    return model.p;
}

#endif /* ONNX_BUILD_H */
