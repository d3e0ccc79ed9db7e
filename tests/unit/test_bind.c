/* ti_session_bind_input / ti_session_bind_output on the CPU backend: runs read and write
 * the caller's memory in place (the tensors' data pointers are the caller's), outputs equal
 * an unbound session's, sizes are checked at each run (after a shape change too), unbinding
 * goes back to the session's buffers, constant and dynamic outputs are copied, a bound
 * input cannot be linked and the other way round. The OpenCL side is in
 * tests/cl/test_cl_backend.c. */
#define TINYINFER_IMPLEMENTATION
#include "tinyinfer.h"
#include "ti_test.h"
#include "onnx_build.h"
#include <stdlib.h>
#include <string.h>

static uint64_t g_rng = 12345;
static float rnd(void) {
    g_rng = g_rng * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((g_rng >> 40) & 0xffff) / 32768.0f - 1.0f;
}

/* x [1, 3, H, 5] (dim 2 symbolic) -> Relu -> a; y = Mul(a, x) + Shape(x) as a second output,
 * which constant folding turns into a constant. */
static ti_model *model(void) {
    ob_model mb;
    ob_init(&mb, 13);
    int64_t d[4] = {1, 3, -1, 5}, sd[1] = {4};
    ob_input(&mb, "x", OB_FLOAT, 4, d); /* dim 2 is symbolic: "N2" */
    ob_node(&mb, "Relu", "r", "x", "a");
    ob_node(&mb, "Mul", "m", "a,x", "y");
    ob_node(&mb, "Shape", "s", "x", "shape");
    ob_output(&mb, "y", OB_FLOAT, 4, d);
    ob_output(&mb, "shape", OB_INT64, 1, sd);
    size_t n;
    unsigned char *bytes = ob_finish(&mb, &n);
    ti_error err;
    ti_model *m = ti_model_load_memory(bytes, n, NULL, &err);
    if (m == NULL) printf("load: %s\n", err.message);
    free(bytes);
    return m;
}

static ti_session *session(ti_model *m, int64_t h) {
    ti_session_desc d;
    memset(&d, 0, sizeof d);
    d.backend = TI_BACKEND_CPU;
    d.num_threads = 1;
    ti_dim_binding b = {"N2", h};
    d.dim_bindings = &b;
    d.num_dim_bindings = 1;
    ti_error err;
    ti_session *s = ti_session_create(m, &d, &err);
    if (s == NULL) printf("session: %s\n", err.message);
    return s;
}

/* y of x, by hand: relu(x) * x, rounded to a float before the comparison (x87 compares
 * the wider product otherwise) */
static int y_ok(const float *x, const float *y, size_t n) {
    for (size_t i = 0; i < n; i++) {
        float want = (x[i] > 0 ? x[i] : 0.0f) * x[i];
        if (y[i] != want) return 0;
    }
    return 1;
}

TI_TEST(bound_memory_is_used_in_place) {
    ti_model *m = model();
    TI_REQUIRE(m != NULL);
    ti_session *s = session(m, 4);
    TI_REQUIRE(s != NULL);
    ti_error err;
    enum { N = 60 };
    float x[N], y[N + 4];
    int64_t shape[4] = {0, 0, 0, 0};
    for (int i = 0; i < N; i++) x[i] = rnd();
    memset(y, 0, sizeof y);
    TI_CHECK(ti_session_bind_input(s, 0, x, sizeof x, &err) == TI_OK);
    TI_CHECK(ti_session_bind_output(s, 0, y, sizeof y, &err) == TI_OK);
    TI_CHECK(ti_session_bind_output(s, 1, shape, sizeof shape, &err) == TI_OK);
    TI_CHECK(ti_session_input(s, 0)->data == (void *)x);
    TI_CHECK(ti_session_output(s, 0)->data == (void *)y);
    TI_REQUIRE(ti_session_run(s, &err) == TI_OK);
    TI_CHECK(ti_session_output(s, 0)->data == (void *)y); /* written in place */
    TI_CHECK(y_ok(x, y, N));
    TI_CHECK(y[N] == 0.0f); /* nothing past the tensor */
    TI_CHECK(shape[0] == 1 && shape[1] == 3 && shape[2] == 4 && shape[3] == 5); /* a constant: copied */
    /* new input values in the same memory: the next run reads them */
    for (int i = 0; i < N; i++) x[i] = rnd();
    TI_REQUIRE(ti_session_run(s, &err) == TI_OK);
    TI_CHECK(y_ok(x, y, N));
    /* the same as an unbound session on the same input */
    ti_session *u = session(m, 4);
    TI_REQUIRE(u != NULL);
    memcpy(ti_session_input(u, 0)->data, x, sizeof x);
    TI_REQUIRE(ti_session_run(u, &err) == TI_OK);
    TI_CHECK(memcmp(ti_session_output(u, 0)->data, y, N * sizeof(float)) == 0);
    ti_session_destroy(u);

    /* async: the same, finished by the wait */
    for (int i = 0; i < N; i++) x[i] = rnd();
    TI_REQUIRE(ti_session_run_async(s, &err) == TI_OK);
    TI_REQUIRE(ti_session_wait(s, &err) == TI_OK);
    TI_CHECK(y_ok(x, y, N));

    /* a larger shape: the bound memory is too small, the run fails naming the sizes */
    int64_t big[4] = {1, 3, 5, 5};
    TI_REQUIRE(ti_session_set_input_shape(s, 0, 4, big, &err) == TI_OK);
    TI_CHECK(ti_session_run(s, &err) == TI_ERR_INVALID_ARGUMENT);
    TI_CHECK_STR_CONTAINS(err.message, "input 0 'x' needs 300 bytes, its bound memory has 240");
    float x2[75], y2[75];
    for (int i = 0; i < 75; i++) x2[i] = rnd();
    TI_CHECK(ti_session_bind_input(s, 0, x2, sizeof x2, &err) == TI_OK);
    TI_CHECK(ti_session_run(s, &err) == TI_ERR_INVALID_ARGUMENT); /* the output still too small */
    TI_CHECK_STR_CONTAINS(err.message, "output 0 'y' needs 300 bytes");
    TI_CHECK(ti_session_bind_output(s, 0, y2, sizeof y2, &err) == TI_OK);
    TI_REQUIRE(ti_session_run(s, &err) == TI_OK);
    TI_CHECK(y_ok(x2, y2, 75));
    TI_CHECK(shape[2] == 5);

    /* unbound: the session's own buffers again, the caller's memory left alone */
    TI_CHECK(ti_session_bind_input(s, 0, NULL, 0, &err) == TI_OK);
    TI_CHECK(ti_session_bind_output(s, 0, NULL, 0, &err) == TI_OK);
    ti_tensor *xt = ti_session_input(s, 0);
    TI_CHECK(xt->data != (void *)x2);
    for (int i = 0; i < 75; i++) ((float *)xt->data)[i] = 2.0f;
    float keep[75];
    memcpy(keep, y2, sizeof keep);
    TI_REQUIRE(ti_session_run(s, &err) == TI_OK);
    TI_CHECK(ti_session_output(s, 0)->data != (void *)y2);
    TI_CHECK(((const float *)ti_session_output(s, 0)->data)[74] == 4.0f);
    TI_CHECK(memcmp(keep, y2, sizeof keep) == 0);

    /* bad arguments */
    TI_CHECK(ti_session_bind_input(s, 1, x, sizeof x, &err) == TI_ERR_INVALID_ARGUMENT);
    TI_CHECK_STR_CONTAINS(err.message, "input 1 out of range (1 inputs)");
    TI_CHECK(ti_session_bind_output(s, -1, y, sizeof y, &err) == TI_ERR_INVALID_ARGUMENT);
    TI_CHECK(ti_session_bind_input(NULL, 0, x, sizeof x, &err) == TI_ERR_INVALID_ARGUMENT);
    ti_session_destroy(s);
    ti_model_free(m);
}

/* A linked input cannot be bound, nor a bound input linked. */
TI_TEST(bound_and_linked_exclude_each_other) {
    ti_model *m = model();
    TI_REQUIRE(m != NULL);
    ti_session *a = session(m, 4), *b = session(m, 4);
    TI_REQUIRE(a != NULL && b != NULL);
    ti_error err;
    float x[60];
    TI_CHECK(ti_session_bind_input(b, 0, x, sizeof x, &err) == TI_OK);
    TI_CHECK(ti_session_link_input(b, 0, a, 0, &err) == TI_ERR_INVALID_ARGUMENT);
    TI_CHECK_STR_CONTAINS(err.message, "bound to caller memory");
    TI_CHECK(ti_session_bind_input(b, 0, NULL, 0, &err) == TI_OK);
    TI_CHECK(ti_session_link_input(b, 0, a, 0, &err) == TI_OK);
    TI_CHECK(ti_session_bind_input(b, 0, x, sizeof x, &err) == TI_ERR_INVALID_ARGUMENT);
    TI_CHECK_STR_CONTAINS(err.message, "is linked to another session's output");
    ti_session_destroy(b);
    ti_session_destroy(a);
    ti_model_free(m);
}

/* desc.keep_intermediates: after a run every node's output is still readable. */
TI_TEST(keep_intermediates_keeps_node_outputs) {
    ti_model *m = model();
    TI_REQUIRE(m != NULL);
    ti_session_desc d;
    memset(&d, 0, sizeof d);
    d.backend = TI_BACKEND_CPU;
    d.num_threads = 1;
    d.keep_intermediates = 1;
    ti_dim_binding b = {"N2", 4};
    d.dim_bindings = &b;
    d.num_dim_bindings = 1;
    ti_error err;
    ti_session *s = ti_session_create(m, &d, &err);
    TI_REQUIRE(s != NULL);
    float x[60];
    for (int i = 0; i < 60; i++) x[i] = rnd();
    memcpy(ti_session_input(s, 0)->data, x, sizeof x);
    TI_REQUIRE(ti_session_run(s, &err) == TI_OK);
    int found = 0;
    for (int i = 0; i < ti_session_num_nodes(s); i++) {
        ti_node_info ni;
        if (ti_session_node_info(s, i, &ni) != TI_OK || strcmp(ni.op, "Relu") != 0) continue;
        const ti_tensor *a = ti_session_node_output(s, i, 0);
        TI_REQUIRE(a != NULL && a->size_bytes == sizeof x);
        int bad = 0;
        for (int j = 0; j < 60; j++) bad += ((const float *)a->data)[j] != (x[j] > 0 ? x[j] : 0.0f);
        TI_CHECK_EQ_INT(bad, 0);
        found = 1;
    }
    TI_CHECK(found);
    ti_session_info info;
    ti_session_get_info(s, &info);
    ti_session_destroy(s);
    ti_model_free(m);
}

int main(void) {
    TI_RUN(bound_memory_is_used_in_place);
    TI_RUN(bound_and_linked_exclude_each_other);
    TI_RUN(keep_intermediates_keeps_node_outputs);
    return ti_test_summary();
}
