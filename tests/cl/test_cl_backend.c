/* The OpenCL backend against the CPU: every GPU kernel on random shapes (odd sizes, edges,
 * broadcasts, strides, pads, groups), each checked to run on the device and to match the
 * CPU within 1e-4 relative; per-op fallback inside one session; the program-binary cache
 * (built, then loaded, then a damaged file rebuilt); a driver that refuses work-group
 * sizes (the test hook) never reaching the user; device selection errors; no allocation
 * in ti_session_run. Skips when no OpenCL device can be used (PoCL in CI). */
#define _POSIX_C_SOURCE 200809L /* setenv, popen, truncate */
#define TINYINFER_IMPLEMENTATION
#include "tinyinfer.h"
#include "ti_test.h"
#include "onnx_build.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if !defined(_WIN32)
#include <unistd.h>
#endif

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void) {
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return (uint32_t)(g_rng >> 32);
}
static int rint_in(int lo, int hi) { return lo + (int)(rnd() % (uint32_t)(hi - lo + 1)); }
static float rfloat(void) { return (float)(rnd() % 20001) / 10000.0f - 1.0f; }
static float *rand_floats(size_t n) {
    float *p = (float *)malloc(n * sizeof(float) + 4);
    for (size_t i = 0; i < n; i++) p[i] = rfloat();
    return p;
}
static size_t numel(int rank, const int64_t *d) {
    size_t n = 1;
    for (int i = 0; i < rank; i++) n *= (size_t)d[i];
    return n;
}

static int g_have_device = 0;
static char g_cache_dir[256];
/* The OpenCL sessions' precision and the tolerances the tests allow it: the kernel tests
 * run once in fp32 (1e-4 relative to the output's largest value) and once with fp16
 * storage (2e-3: a half holds 11 significant bits, 4.9e-4 relative, and inputs, weights
 * and outputs are each rounded once). g_val_tol: per value, for outputs of order 1. */
static ti_precision g_prec = TI_PRECISION_DEFAULT;
static double g_tol = 1e-4, g_val_tol = 1e-5, g_worst = 0.0;

static ti_session *make(ti_model *m, ti_backend b, ti_error *err) {
    ti_session_desc d;
    memset(&d, 0, sizeof d);
    d.num_threads = 1;
    d.backend = b;
    d.precision = g_prec; /* the CPU backend ignores it */
    return ti_session_create(m, &d, err);
}

/* Runs the model on the CPU and on OpenCL with the same random inputs; checks that
 * node `gpu_op` (every node of that op) ran on the device and the outputs agree. */
static void compare(const unsigned char *bytes, size_t n, const char *what, const char *gpu_op) {
    ti_error err;
    ti_model *m = ti_model_load_memory(bytes, n, NULL, &err);
    if (m == NULL) {
        printf("%s: load: %s\n", what, err.message);
        TI_CHECK(m != NULL);
        return;
    }
    ti_session *c = make(m, TI_BACKEND_CPU, &err);
    ti_session *g = c ? make(m, TI_BACKEND_OPENCL, &err) : NULL;
    if (c == NULL || g == NULL) {
        printf("%s: session: %s\n", what, err.message);
        TI_CHECK(c != NULL && g != NULL);
        ti_session_destroy(c);
        ti_model_free(m);
        return;
    }
    for (int i = 0; i < ti_session_num_inputs(c); i++) {
        ti_tensor *a = ti_session_input(c, i), *b = ti_session_input(g, i);
        float *v = (float *)a->data;
        for (size_t j = 0; j < a->size_bytes / 4; j++) v[j] = rfloat();
        memcpy(b->data, a->data, a->size_bytes);
    }
    TI_CHECK(ti_session_run(c, &err) == TI_OK);
    ti_status st = ti_session_run(g, &err);
    if (st != TI_OK) printf("%s: OpenCL run: %s\n", what, err.message);
    TI_CHECK(st == TI_OK);
    /* after the run: a launch the device refused would have moved the node */
    int placed = 0, wanted = 0;
    for (int i = 0; i < ti_session_num_nodes(g); i++) {
        ti_node_info ni;
        if (ti_session_node_info(g, i, &ni) != TI_OK || strcmp(ni.op, gpu_op) != 0) continue;
        wanted++;
        if (ni.backend == TI_BACKEND_OPENCL) placed++;
        else printf("%s: node %d (%s) on the CPU: %s\n", what, i, ni.op, ni.placement);
    }
    TI_CHECK(wanted > 0 && placed == wanted);
    ti_session_info gi;
    TI_CHECK(ti_session_get_info(g, &gi) == TI_OK &&
             gi.precision == (g_prec == TI_PRECISION_FP16 ? TI_PRECISION_FP16 : TI_PRECISION_FP32));
    for (int i = 0; i < ti_session_num_outputs(c) && st == TI_OK; i++) {
        const ti_tensor *a = ti_session_output(c, i), *b = ti_session_output(g, i);
        TI_CHECK(a->size_bytes == b->size_bytes);
        double me = 0, mr = 0;
        for (size_t j = 0; j < a->size_bytes / 4; j++) {
            double x = ((const float *)a->data)[j], y = ((const float *)b->data)[j];
            double e = x > y ? x - y : y - x;
            if (!(e <= me)) me = e; /* NaN counts as an error */
            if ((x < 0 ? -x : x) > mr) mr = x < 0 ? -x : x;
        }
        /* fp16: inputs and weights (order 1 here) are rounded to half, an absolute error
         * that does not shrink with the output, so the scale is at least 1 */
        double scale = g_prec == TI_PRECISION_FP16 ? (mr > 1 ? mr : 1) : (mr > 0 ? mr : 1);
        int ok = me <= g_tol * scale;
        if (me / scale > g_worst) g_worst = me / scale;
        if (!ok) printf("%s: output %d: max |diff| %g, max |cpu| %g\n", what, i, me, mr);
        TI_CHECK(ok);
    }
    ti_session_destroy(g);
    ti_session_destroy(c);
    ti_model_free(m);
}

/* ---- per-kernel cases ---------------------------------------------------------------- */

static void conv_case_p(int64_t N, int64_t C, int64_t H, int64_t W, int64_t M, int64_t k, int64_t s,
                        int64_t d, int64_t p, int64_t g) {
    ob_model mb;
    ob_init(&mb, 13);
    if (H + 2 * p < (k - 1) * d + 1) H = (k - 1) * d + 1;
    if (W + 2 * p < (k - 1) * d + 1) W = (k - 1) * d + 1;
    int64_t xd[4] = {N, C, H, W}, wd[4] = {M, C / g, k, k}, bd[1] = {M};
    int64_t OH = (H + 2 * p - (k - 1) * d - 1) / s + 1, OW = (W + 2 * p - (k - 1) * d - 1) / s + 1;
    int64_t yd[4] = {N, M, OH, OW};
    float *w = rand_floats(numel(4, wd)), *b = rand_floats((size_t)M);
    ob_input(&mb, "x", OB_FLOAT, 4, xd);
    ob_init_f32(&mb, "w", 4, wd, w);
    ob_init_f32(&mb, "b", 1, bd, b);
    ob_buf at = {0, 0, 0};
    int64_t ks[2] = {k, k}, st[2] = {s, s}, dl[2] = {d, d}, pads[4] = {p, p, p, p};
    ob_attr_ints(&at, "kernel_shape", 2, ks);
    ob_attr_ints(&at, "strides", 2, st);
    ob_attr_ints(&at, "dilations", 2, dl);
    ob_attr_ints(&at, "pads", 4, pads);
    ob_attr_int(&at, "group", g);
    ob_node_attrs(&mb, "Conv", "conv", "x,w,b", "c", &at);
    ob_node(&mb, rnd() % 2 ? "Relu" : "Sigmoid", "act", "c", "y"); /* fused on both sides */
    ob_output(&mb, "y", OB_FLOAT, 4, yd);
    size_t n;
    unsigned char *bytes = ob_finish(&mb, &n);
    char what[160];
    snprintf(what, sizeof what, "Conv x[%lld,%lld,%lld,%lld] M %lld k %lld s %lld d %lld p %lld g %lld",
             (long long)N, (long long)C, (long long)H, (long long)W, (long long)M, (long long)k,
             (long long)s, (long long)d, (long long)p, (long long)g);
    compare(bytes, n, what, "Conv");
    free(bytes);
    free(w);
    free(b);
}

static void conv_case(int depthwise, int one_by_one) {
    int64_t N = rint_in(1, 2), C = rint_in(1, 9), H = rint_in(1, 19), W = rint_in(1, 23);
    int64_t k = one_by_one ? 1 : rint_in(1, 5), s = one_by_one ? 1 : rint_in(1, 3);
    int64_t d = one_by_one || k == 1 ? 1 : rint_in(1, 2), p = one_by_one ? 0 : rint_in(0, k / 2 + 1);
    int64_t g = 1, M;
    if (depthwise) {
        g = C;
        M = C;
    } else {
        g = (!one_by_one && C % 3 == 0 && rnd() % 2) ? 3 : 1;
        M = g * rint_in(1, 7);
    }
    conv_case_p(N, C, H, W, M, k, s, d, p, g);
}

TI_TEST(conv_kernels_match_the_cpu) {
    if (!g_have_device) TI_SKIP("no OpenCL device");
    for (int i = 0; i < 12; i++) conv_case(0, 0);
    /* the implicit GEMM at sizes with several 32 x 32 output blocks and edges in both
     * directions, split along k (few blocks, deep k) and not (many blocks) */
    conv_case_p(1, 64, 9, 9, 40, 3, 1, 1, 1, 1);  /* 81 pixels x 40 channels, k 576 */
    conv_case_p(1, 48, 4, 4, 8, 3, 1, 1, 1, 1);   /* one block, k 432: split */
    conv_case_p(2, 35, 13, 11, 70, 3, 2, 1, 1, 1); /* stride 2, batch 2, odd sizes */
    conv_case_p(1, 130, 7, 7, 33, 1, 1, 1, 0, 1); /* 1x1 */
    conv_case_p(1, 20, 15, 15, 36, 5, 1, 2, 2, 1); /* 5x5 dilated */
    for (int i = 0; i < 4; i++)
        conv_case_p(rint_in(1, 2), rint_in(16, 70), rint_in(3, 20), rint_in(3, 20), rint_in(20, 70),
                    rnd() % 2 ? 3 : 1, rint_in(1, 2), 1, 1, 1);
    for (int i = 0; i < 8; i++) conv_case(1, 0);
    for (int i = 0; i < 8; i++) conv_case(0, 1);
}

static void matmul_case(int gemv) {
    ob_model mb;
    ob_init(&mb, 13);
    int64_t M = rint_in(1, 70), K = rint_in(1, 90), N = rint_in(1, 75), B = rint_in(1, 3);
    if (gemv) { /* few rows, deep k: the matrix-vector kernel */
        M = rint_in(1, 4);
        K = rint_in(256, 700);
    }
    int bcast = rnd() % 2; /* B as a 2-D weight broadcast over the batch */
    int64_t ad[3] = {B, M, K}, bd3[3] = {B, K, N}, bd2[2] = {K, N}, yd[3] = {B, M, N};
    ob_input(&mb, "a", OB_FLOAT, 3, ad);
    float *w = NULL;
    if (bcast) {
        w = rand_floats(numel(2, bd2));
        ob_init_f32(&mb, "b", 2, bd2, w);
    } else {
        ob_input(&mb, "b", OB_FLOAT, 3, bd3);
    }
    ob_node(&mb, "MatMul", "mm", "a,b", "y");
    ob_output(&mb, "y", OB_FLOAT, 3, yd);
    size_t n;
    unsigned char *bytes = ob_finish(&mb, &n);
    char what[128];
    snprintf(what, sizeof what, "MatMul [%lld,%lld,%lld] x %s[%lld,%lld]", (long long)B, (long long)M,
             (long long)K, bcast ? "" : "batched ", (long long)K, (long long)N);
    compare(bytes, n, what, "MatMul");
    free(bytes);
    free(w);
}

static void gemm_case(int gemv) {
    ob_model mb;
    ob_init(&mb, 13);
    int64_t M = rint_in(1, 40), K = rint_in(1, 70), N = rint_in(1, 90);
    if (gemv) {
        M = rint_in(1, 4);
        K = rint_in(256, 2100);
    }
    int ta = rnd() % 2, tb = rnd() % 2, cform = rint_in(0, 2);
    int64_t ad[2] = {ta ? K : M, ta ? M : K}, bd[2] = {tb ? N : K, tb ? K : N}, yd[2] = {M, N};
    int64_t cd1[1] = {N}, cd2[2] = {M, 1};
    float *w = rand_floats(numel(2, bd)), *cv = rand_floats((size_t)(M * N));
    ob_input(&mb, "a", OB_FLOAT, 2, ad);
    ob_init_f32(&mb, "b", 2, bd, w);
    if (cform == 1) ob_init_f32(&mb, "c", 1, cd1, cv);
    if (cform == 2) ob_init_f32(&mb, "c", 2, cd2, cv);
    ob_buf at = {0, 0, 0};
    ob_attr_int(&at, "transA", ta);
    ob_attr_int(&at, "transB", tb);
    ob_attr_float(&at, "alpha", 0.75f);
    ob_attr_float(&at, "beta", 1.5f);
    ob_node_attrs(&mb, "Gemm", "gemm", cform ? "a,b,c" : "a,b", "y", &at);
    ob_output(&mb, "y", OB_FLOAT, 2, yd);
    size_t n;
    unsigned char *bytes = ob_finish(&mb, &n);
    char what[128];
    snprintf(what, sizeof what, "Gemm M %lld K %lld N %lld transA %d transB %d C form %d", (long long)M,
             (long long)K, (long long)N, ta, tb, cform);
    compare(bytes, n, what, "Gemm");
    free(bytes);
    free(w);
    free(cv);
}

TI_TEST(matmul_and_gemm_match_the_cpu) {
    if (!g_have_device) TI_SKIP("no OpenCL device");
    for (int i = 0; i < 12; i++) matmul_case(0);
    for (int i = 0; i < 10; i++) gemm_case(0);
    for (int i = 0; i < 4; i++) matmul_case(1);
    for (int i = 0; i < 6; i++) gemm_case(1);
}

/* Binary ops with numpy broadcasting: same shape, per-channel, and general. */
static void binary_case(const char *op, int form) {
    ob_model mb;
    ob_init(&mb, 13);
    int64_t yd[4] = {rint_in(1, 2), rint_in(1, 7), rint_in(1, 9), rint_in(1, 11)};
    int64_t bd[4];
    int br = 4;
    if (form == 0) memcpy(bd, yd, sizeof bd);
    else if (form == 1) { bd[0] = yd[1]; bd[1] = 1; bd[2] = 1; br = 3; }
    else { for (int i = 0; i < 4; i++) bd[i] = rnd() % 2 ? yd[i] : 1; }
    ob_input(&mb, "a", OB_FLOAT, 4, yd);
    ob_input(&mb, "b", OB_FLOAT, br, bd);
    int act = rnd() % 3 == 0; /* a Relu after it: fused into the op on both backends */
    ob_node(&mb, op, "op", (form == 1 && rnd() % 2 && (op[0] == 'A' || op[0] == 'M')) ? "b,a" : "a,b",
            act ? "v" : "y");
    if (act) ob_node(&mb, "Relu", "relu", "v", "y");
    ob_output(&mb, "y", OB_FLOAT, 4, yd);
    size_t n;
    unsigned char *bytes = ob_finish(&mb, &n);
    char what[96];
    snprintf(what, sizeof what, "%s form %d%s", op, form, act ? " + Relu" : "");
    compare(bytes, n, what, op);
    free(bytes);
}

TI_TEST(elementwise_ops_match_the_cpu) {
    if (!g_have_device) TI_SKIP("no OpenCL device");
    static const char *const ops[] = {"Add", "Sub", "Mul", "Div", "Max", "Min"};
    for (int i = 0; i < (int)(sizeof ops / sizeof ops[0]); i++)
        for (int form = 0; form < 3; form++) binary_case(ops[i], form);
    static const char *const un[] = {"Relu", "Sigmoid", "Tanh", "HardSwish", "Neg", "Abs", "Exp",
                                     "Erf", "Floor", "Ceil", "Softplus"};
    for (int i = 0; i < (int)(sizeof un / sizeof un[0]); i++) {
        /* a step function is as far off as a step where rounding the input to half moves
         * it across an integer (0.9999 -> 1): not a precision measure */
        if (g_prec == TI_PRECISION_FP16 && (strcmp(un[i], "Floor") == 0 || strcmp(un[i], "Ceil") == 0)) continue;
        ob_model mb;
        ob_init(&mb, 14);
        int64_t d[3] = {rint_in(1, 3), rint_in(1, 17), rint_in(1, 33)};
        ob_input(&mb, "x", OB_FLOAT, 3, d);
        ob_node(&mb, un[i], "u", "x", "y");
        ob_output(&mb, "y", OB_FLOAT, 3, d);
        size_t n;
        unsigned char *bytes = ob_finish(&mb, &n);
        compare(bytes, n, un[i], un[i]);
        free(bytes);
    }
}

static void pool_case(const char *op) {
    ob_model mb;
    ob_init(&mb, 13);
    int64_t N = rint_in(1, 2), C = rint_in(1, 5), H = rint_in(2, 17), W = rint_in(2, 19);
    int64_t k = rint_in(1, 3), s = rint_in(1, 2), p = rint_in(0, k / 2);
    int ceil_mode = rnd() % 2, incl = rnd() % 2;
    if (H < k) H = k;
    if (W < k) W = k;
    int64_t xd[4] = {N, C, H, W};
    ob_input(&mb, "x", OB_FLOAT, 4, xd);
    ob_buf at = {0, 0, 0};
    int64_t ks[2] = {k, k}, st[2] = {s, s}, pads[4] = {p, p, p, p};
    ob_attr_ints(&at, "kernel_shape", 2, ks);
    ob_attr_ints(&at, "strides", 2, st);
    ob_attr_ints(&at, "pads", 4, pads);
    ob_attr_int(&at, "ceil_mode", ceil_mode);
    if (strcmp(op, "AveragePool") == 0) ob_attr_int(&at, "count_include_pad", incl);
    ob_node_attrs(&mb, op, "pool", "x", "y", &at);
    int64_t OH = ceil_mode ? (H + 2 * p - k + s - 1) / s + 1 : (H + 2 * p - k) / s + 1;
    int64_t OW = ceil_mode ? (W + 2 * p - k + s - 1) / s + 1 : (W + 2 * p - k) / s + 1;
    if (ceil_mode && (OH - 1) * s >= H + p) OH--;
    if (ceil_mode && (OW - 1) * s >= W + p) OW--;
    int64_t yd[4] = {N, C, OH, OW};
    ob_output(&mb, "y", OB_FLOAT, 4, yd);
    size_t n;
    unsigned char *bytes = ob_finish(&mb, &n);
    char what[128];
    snprintf(what, sizeof what, "%s [%lld,%lld,%lld,%lld] k %lld s %lld p %lld ceil %d incl %d", op,
             (long long)N, (long long)C, (long long)H, (long long)W, (long long)k, (long long)s,
             (long long)p, ceil_mode, incl);
    compare(bytes, n, what, op);
    free(bytes);
}

TI_TEST(pooling_matches_the_cpu) {
    if (!g_have_device) TI_SKIP("no OpenCL device");
    for (int i = 0; i < 8; i++) pool_case("MaxPool");
    for (int i = 0; i < 8; i++) pool_case("AveragePool");
    for (int i = 0; i < 6; i++) {
        ob_model mb;
        ob_init(&mb, 13);
        int64_t xd[4] = {rint_in(1, 2), rint_in(1, 40), rint_in(1, 30), rint_in(1, 30)};
        int64_t yd[4] = {xd[0], xd[1], 1, 1};
        const char *op = i % 2 ? "GlobalMaxPool" : "GlobalAveragePool";
        ob_input(&mb, "x", OB_FLOAT, 4, xd);
        ob_node(&mb, op, "gp", "x", "y");
        ob_output(&mb, "y", OB_FLOAT, 4, yd);
        size_t n;
        unsigned char *bytes = ob_finish(&mb, &n);
        compare(bytes, n, op, op);
        free(bytes);
    }
}

TI_TEST(normalisation_and_movement_match_the_cpu) {
    if (!g_have_device) TI_SKIP("no OpenCL device");
    for (int i = 0; i < 6; i++) { /* Softmax on any axis (opset 13) */
        ob_model mb;
        ob_init(&mb, 13);
        int64_t d[3] = {rint_in(1, 5), rint_in(1, 40), rint_in(1, 9)};
        ob_input(&mb, "x", OB_FLOAT, 3, d);
        ob_buf at = {0, 0, 0};
        ob_attr_int(&at, "axis", rint_in(-3, 2));
        ob_node_attrs(&mb, i % 3 == 2 ? "LogSoftmax" : "Softmax", "sm", "x", "y", &at);
        ob_output(&mb, "y", OB_FLOAT, 3, d);
        size_t n;
        unsigned char *bytes = ob_finish(&mb, &n);
        compare(bytes, n, "Softmax", i % 3 == 2 ? "LogSoftmax" : "Softmax");
        free(bytes);
    }
    for (int i = 0; i < 4; i++) { /* LayerNormalization over the last dim(s) */
        ob_model mb;
        ob_init(&mb, 17);
        int64_t d[3] = {rint_in(1, 3), rint_in(1, 9), rint_in(1, 70)};
        int axis = 2 - (i % 2);
        int64_t sd[2] = {d[1], d[2]};
        float *sc = rand_floats(numel(2, sd)), *bi = rand_floats(numel(2, sd));
        ob_input(&mb, "x", OB_FLOAT, 3, d);
        ob_init_f32(&mb, "s", 3 - axis, sd + (axis - 1), sc);
        ob_init_f32(&mb, "b", 3 - axis, sd + (axis - 1), bi);
        ob_buf at = {0, 0, 0};
        ob_attr_int(&at, "axis", axis);
        ob_node_attrs(&mb, "LayerNormalization", "ln", "x,s,b", "y", &at);
        ob_output(&mb, "y", OB_FLOAT, 3, d);
        size_t n;
        unsigned char *bytes = ob_finish(&mb, &n);
        compare(bytes, n, "LayerNormalization", "LayerNormalization");
        free(bytes);
        free(sc);
        free(bi);
    }
    for (int i = 0; i < 6; i++) { /* Transpose with a random permutation */
        ob_model mb;
        ob_init(&mb, 13);
        int64_t d[4] = {rint_in(1, 4), rint_in(1, 6), rint_in(1, 7), rint_in(1, 8)}, perm[4] = {0, 1, 2, 3};
        for (int j = 3; j > 0; j--) {
            int r = rint_in(0, j);
            int64_t t = perm[j];
            perm[j] = perm[r];
            perm[r] = t;
        }
        int64_t yd[4] = {d[perm[0]], d[perm[1]], d[perm[2]], d[perm[3]]};
        ob_input(&mb, "x", OB_FLOAT, 4, d);
        ob_buf at = {0, 0, 0};
        ob_attr_ints(&at, "perm", 4, perm);
        ob_node_attrs(&mb, "Transpose", "t", "x", "y", &at);
        ob_output(&mb, "y", OB_FLOAT, 4, yd);
        size_t n;
        unsigned char *bytes = ob_finish(&mb, &n);
        compare(bytes, n, "Transpose", "Transpose");
        free(bytes);
    }
    for (int i = 0; i < 6; i++) { /* Concat of three inputs on a random axis, then Split back */
        ob_model mb;
        ob_init(&mb, 13);
        int axis = rint_in(0, 2);
        int64_t a[3] = {rint_in(1, 4), rint_in(1, 6), rint_in(1, 9)}, b[3], c[3], y[3];
        memcpy(b, a, sizeof a);
        memcpy(c, a, sizeof a);
        b[axis] = rint_in(1, 5);
        c[axis] = rint_in(1, 5);
        memcpy(y, a, sizeof a);
        y[axis] = a[axis] + b[axis] + c[axis];
        ob_input(&mb, "a", OB_FLOAT, 3, a);
        ob_input(&mb, "b", OB_FLOAT, 3, b);
        ob_input(&mb, "c", OB_FLOAT, 3, c);
        ob_buf at = {0, 0, 0};
        ob_attr_int(&at, "axis", axis);
        ob_node_attrs(&mb, "Concat", "cat", "a,b,c", "y", &at);
        int64_t parts[2] = {a[axis] + 1 <= y[axis] - 1 ? a[axis] + 1 : 1, 0}, pd[1] = {2};
        parts[1] = y[axis] - parts[0];
        if (parts[1] < 1) { parts[0] = y[axis] - 1; parts[1] = 1; }
        ob_init_i64(&mb, "sizes", 1, pd, parts);
        ob_buf at2 = {0, 0, 0};
        ob_attr_int(&at2, "axis", axis);
        ob_node_attrs(&mb, "Split", "split", "y,sizes", "s0,s1", &at2);
        int64_t s0[3], s1[3];
        memcpy(s0, y, sizeof y);
        memcpy(s1, y, sizeof y);
        s0[axis] = parts[0];
        s1[axis] = parts[1];
        ob_output(&mb, "y", OB_FLOAT, 3, y);
        ob_output(&mb, "s0", OB_FLOAT, 3, s0);
        ob_output(&mb, "s1", OB_FLOAT, 3, s1);
        size_t n;
        unsigned char *bytes = ob_finish(&mb, &n);
        if (y[axis] >= 2) {
            compare(bytes, n, "Concat", "Concat");
            compare(bytes, n, "Split", "Split");
        }
        free(bytes);
    }
}

/* x [1, 6, 9, 11] -> Relu (a) -> ReduceMax over axis 2, which has no OpenCL kernel (b)
 * -> Sigmoid -> y [1, 6, 1, 11]; with a_out, a is a model output too. */
static ti_model *relu_max_sigmoid(int a_out, ti_error *err) {
    ob_model mb;
    ob_init(&mb, 13);
    int64_t d[4] = {1, 6, 9, 11}, rd[4] = {1, 6, 1, 11};
    ob_input(&mb, "x", OB_FLOAT, 4, d);
    ob_node(&mb, "Relu", "r1", "x", "a");
    ob_buf at = {0, 0, 0};
    int64_t ax[1] = {2};
    ob_attr_ints(&at, "axes", 1, ax);
    ob_node_attrs(&mb, "ReduceMax", "max", "a", "b", &at); /* no OpenCL kernel */
    ob_node(&mb, "Sigmoid", "s2", "b", "y");
    ob_output(&mb, "y", OB_FLOAT, 4, rd);
    if (a_out) ob_output(&mb, "a", OB_FLOAT, 4, d);
    size_t n;
    unsigned char *bytes = ob_finish(&mb, &n);
    ti_model *m = ti_model_load_memory(bytes, n, NULL, err);
    free(bytes);
    return m;
}

/* Caller memory (ti_session_bind_input / _output) on OpenCL: x -> Relu (GPU) -> a (an
 * output, also read by the CPU node) -> ReduceMax (CPU) -> Sigmoid (GPU) -> y. With copies
 * (opencl_copy_io) the input goes up straight from the caller's memory and the outputs come
 * down straight into it: the bytes moved are those of an unbound session; on a device that
 * works in host memory (zero copy) the kernels use the caller's memory in place, each
 * bound tensor wrapped in a buffer of its own. Sync and async runs, both give
 * the outputs by hand, the tensors' data are the caller's, and x is left as it was. */
TI_TEST(bound_memory_on_opencl) {
    if (!g_have_device) TI_SKIP("no OpenCL device");
    ti_error err;
    ti_model *m = relu_max_sigmoid(1, &err);
    TI_REQUIRE(m != NULL);
    static float x1[594], x2[594], xkeep[594], y[66], a[594];
    for (int copy = 1; copy >= 0; copy--) {
        for (int async = 0; async < 2; async++) {
            ti_session_desc cd;
            memset(&cd, 0, sizeof cd);
            cd.backend = TI_BACKEND_OPENCL;
            cd.num_threads = 1;
            cd.opencl_copy_io = copy;
            cd.precision = g_prec;
            ti_session *g = ti_session_create(m, &cd, &err);
            TI_REQUIRE(g != NULL);
            ti_session_info info;
            ti_session_get_info(g, &info);
            TI_CHECK_EQ_INT(info.num_gpu_nodes, 2);
            TI_CHECK(ti_session_bind_output(g, 0, y, sizeof y, &err) == TI_OK);
            TI_CHECK(ti_session_bind_output(g, 1, a, sizeof a, &err) == TI_OK);
            for (int r = 0; r < 3; r++) { /* x1, x1 with new values, then x2 */
                float *x = r < 2 ? x1 : x2;
                if (r != 1) TI_CHECK(ti_session_bind_input(g, 0, x, sizeof x1, &err) == TI_OK);
                for (int j = 0; j < 594; j++) x[j] = xkeep[j] = rfloat();
                memset(y, 0, sizeof y);
                memset(a, 0, sizeof a);
                if (async) {
                    TI_CHECK(ti_session_run_async(g, &err) == TI_OK);
                    TI_CHECK(ti_session_wait(g, &err) == TI_OK);
                } else {
                    TI_CHECK(ti_session_run(g, &err) == TI_OK);
                }
                TI_CHECK(ti_session_input(g, 0)->data == (void *)x && ti_session_output(g, 0)->data == (void *)y &&
                         ti_session_output(g, 1)->data == (void *)a);
                TI_CHECK(memcmp(x, xkeep, sizeof xkeep) == 0);
                int bad = 0;
                for (int j = 0; j < 594; j++) /* exact in fp32; fp16: x rounded once */
                    bad += g_prec == TI_PRECISION_FP16 ? fabs(a[j] - (x[j] > 0 ? x[j] : 0.0f)) > 2.5e-4
                                                       : a[j] != (x[j] > 0 ? x[j] : 0.0f);
                for (int c = 0; c < 6; c++)
                    for (int w = 0; w < 11; w++) {
                        double mx = 0;
                        for (int h = 0; h < 9; h++) mx = fmax(mx, x[(c * 9 + h) * 11 + w]);
                        bad += fabs(1.0 / (1.0 + exp(-mx)) - y[c * 11 + w]) > g_val_tol;
                    }
                if (bad) printf("copy_io %d async %d run %d: %d wrong values\n", copy, async, r, bad);
                TI_CHECK_EQ_INT(bad, 0);
            }
            ti_session_get_info(g, &info);
            if (copy) /* x up, a down (the CPU node reads it: once), b up, y down */
                TI_CHECK(info.transfer_bytes == (size_t)(594 * 4 * 2 + 66 * 4 * 2));
            else if (info.zero_copy) /* kernels use the caller's memory in place (white box) */
                TI_CHECK(g->cl != NULL && g->cl->n_bvals == 3 && info.transfer_bytes == 0);
            ti_session_destroy(g);
        }
    }
    ti_model_free(m);
}

/* A graph with a node the device has no kernel for: that node runs on the CPU inside the
 * OpenCL session, the others on the device, with the reason recorded. */
TI_TEST(unsupported_nodes_fall_back_per_node) {
    if (!g_have_device) TI_SKIP("no OpenCL device");
    ti_error err;
    ti_model *m = relu_max_sigmoid(0, &err);
    TI_REQUIRE(m != NULL);
    ti_session_desc cd; /* copies between host and device, even on a host-memory device */
    memset(&cd, 0, sizeof cd);
    cd.backend = TI_BACKEND_OPENCL;
    cd.num_threads = 1;
    cd.opencl_copy_io = 1;
    ti_session *g = ti_session_create(m, &cd, &err);
    if (g == NULL) printf("session: %s\n", err.message);
    TI_REQUIRE(g != NULL);
    ti_session_info info;
    memset(&info, 0, sizeof info);
    TI_CHECK(ti_session_get_info(g, &info) == TI_OK);
    TI_CHECK_EQ_INT(info.backend, TI_BACKEND_OPENCL);
    TI_CHECK_EQ_INT(info.zero_copy, 0);
    TI_CHECK_EQ_INT(info.num_gpu_nodes, 2);
    TI_CHECK_EQ_INT(info.num_cpu_nodes, 1);
    ti_node_info ni;
    TI_CHECK(ti_session_node_info(g, 1, &ni) == TI_OK && ni.backend == TI_BACKEND_CPU);
    TI_CHECK_STR_CONTAINS(ni.placement, "no OpenCL kernel for ReduceMax");
    ti_tensor *x = ti_session_input(g, 0);
    float xv[594]; /* kept aside: the input's memory is reused once it is consumed */
    for (size_t j = 0; j < 594; j++) ((float *)x->data)[j] = xv[j] = rfloat();
    TI_CHECK(ti_session_run(g, &err) == TI_OK);
    const float *yv = (const float *)ti_session_output(g, 0)->data;
    int bad = 0;
    for (int c = 0; c < 6; c++)
        for (int w = 0; w < 11; w++) {
            double s = 0;
            for (int h = 0; h < 9; h++) {
                float v = xv[(c * 9 + h) * 11 + w];
                if (v > s) s = v; /* max of relu: never below 0 */
            }
            double want = 1.0 / (1.0 + exp(-s));
            if (fabs(want - yv[c * 11 + w]) > 1e-5) bad++;
        }
    TI_CHECK_EQ_INT(bad, 0);
    TI_CHECK(ti_session_get_info(g, &info) == TI_OK);
    /* x up; relu's output down; the max up; y down */
    TI_CHECK(info.transfer_bytes == (size_t)(594 * 4 * 2 + 66 * 4 * 2));
    ti_session_destroy(g);

    /* the same graph profiled: bytes per boundary, device and CPU times, the trace */
    ti_session_desc pd;
    memset(&pd, 0, sizeof pd);
    pd.backend = TI_BACKEND_OPENCL;
    pd.num_threads = 1;
    pd.profile = 1;
    pd.opencl_copy_io = 1;
    g = ti_session_create(m, &pd, &err);
    TI_REQUIRE(g != NULL);
    x = ti_session_input(g, 0);
    memcpy(x->data, xv, sizeof xv);
    TI_CHECK(ti_session_run(g, &err) == TI_OK);
    TI_CHECK(ti_session_get_info(g, &info) == TI_OK);
    size_t want_in[3] = {594 * 4, 594 * 4, 66 * 4}; /* x up, relu down, max up */
    double sum = 0.0;
    for (int i = 0; i < 3; i++) {
        TI_CHECK(ti_session_node_info(g, i, &ni) == TI_OK);
        TI_CHECK(ni.bytes_in == want_in[i]);
        TI_CHECK(ni.time_ms >= 0.0);
        TI_CHECK_EQ_INT(ni.backend, i == 1 ? TI_BACKEND_CPU : TI_BACKEND_OPENCL);
        sum += ni.time_ms;
    }
    TI_CHECK(info.kernel_ms > 0.0);
    TI_CHECK(info.upload_ms >= 0.0 && info.download_ms >= 0.0 && info.cpu_ms >= 0.0);
    TI_CHECK(sum <= info.run_ms * 1.01 + 0.01); /* a synchronous run contains its parts */
    printf("profile: kernels %.4f ms, CPU %.4f ms, upload %.4f ms, download %.4f ms, run %.4f ms\n",
           info.kernel_ms, info.cpu_ms, info.upload_ms, info.download_ms, info.run_ms);
    char path[300];
    snprintf(path, sizeof path, "%s-trace.json", g_cache_dir);
    TI_CHECK(ti_session_write_trace(g, path, &err) == TI_OK);
    FILE *f = fopen(path, "rb");
    TI_REQUIRE(f != NULL);
    char tr[4096];
    size_t tn = fread(tr, 1, sizeof tr - 1, f);
    fclose(f);
    remove(path);
    tr[tn] = 0;
    int gpu_ev = 0, cpu_ev = 0;
    for (const char *p = tr; (p = strstr(p, "\"ph\":\"X\",\"pid\":1,\"tid\":")) != NULL; p++)
        if (p[23] == '2') gpu_ev++;
        else cpu_ev++;
    TI_CHECK_EQ_INT(gpu_ev, 2);
    TI_CHECK_EQ_INT(cpu_ev, 1);
    ti_session_destroy(g);

    /* zero copy where the device works in host memory (PoCL's CPU device does): the same
     * outputs, nothing copied, the arena handed back and forth at each CPU/GPU boundary */
    g = make(m, TI_BACKEND_OPENCL, &err);
    TI_REQUIRE(g != NULL);
    TI_CHECK(ti_session_get_info(g, &info) == TI_OK);
    if (strstr(info.device, "Portable Computing Language") != NULL) TI_CHECK_EQ_INT(info.zero_copy, 1);
    for (int r = 0; r < 3; r++) { /* inputs rewritten between runs are seen by the device */
        x = ti_session_input(g, 0);
        for (size_t j = 0; j < 594; j++) ((float *)x->data)[j] = xv[j] * (float)(r + 1);
        TI_CHECK(r == 1 ? ti_session_run_async(g, &err) == TI_OK && ti_session_wait(g, &err) == TI_OK
                        : ti_session_run(g, &err) == TI_OK);
        yv = (const float *)ti_session_output(g, 0)->data;
        bad = 0;
        for (int cc = 0; cc < 6; cc++)
            for (int w = 0; w < 11; w++) {
                double s = 0;
                for (int h = 0; h < 9; h++) {
                    float v = xv[(cc * 9 + h) * 11 + w] * (float)(r + 1);
                    if (v > s) s = v;
                }
                if (fabs(1.0 / (1.0 + exp(-s)) - yv[cc * 11 + w]) > 1e-5) bad++;
            }
        TI_CHECK_EQ_INT(bad, 0);
        TI_CHECK(ti_session_get_info(g, &info) == TI_OK);
        if (info.zero_copy) TI_CHECK(info.transfer_bytes == 0);
    }
    ti_session_destroy(g);
    ti_model_free(m);
}

/* ---- linked sessions ---------------------------------------------------------------- */

/* x [1, C, 6, 6] -> Conv k x k (same padding) to M channels -> act -> y */
static unsigned char *conv_model(int64_t C, int64_t M, int64_t k, const char *act, size_t *n) {
    ob_model mb;
    ob_init(&mb, 13);
    int64_t xd[4] = {1, C, 6, 6}, wd[4] = {M, C, k, k}, yd[4] = {1, M, 6, 6};
    float *w = rand_floats(numel(4, wd));
    ob_input(&mb, "x", OB_FLOAT, 4, xd);
    ob_init_f32(&mb, "w", 4, wd, w);
    ob_buf at = {0, 0, 0};
    int64_t ks[2] = {k, k}, pads[4] = {k / 2, k / 2, k / 2, k / 2};
    ob_attr_ints(&at, "kernel_shape", 2, ks);
    ob_attr_ints(&at, "pads", 4, pads);
    ob_node_attrs(&mb, "Conv", "conv", "x,w", "c", &at);
    ob_node(&mb, act, "act", "c", "y");
    ob_output(&mb, "y", OB_FLOAT, 4, yd);
    unsigned char *bytes = ob_finish(&mb, n);
    free(w);
    return bytes;
}

static ti_session *make_io(ti_model *m, ti_backend b, int copy_io, ti_error *err) {
    ti_session_desc d;
    memset(&d, 0, sizeof d);
    d.num_threads = 1;
    d.backend = b;
    d.opencl_copy_io = copy_io;
    d.precision = g_prec;
    return ti_session_create(m, &d, err);
}

/* Model A's output feeds model B's input: on one OpenCL device it never visits the host
 * (A uploads x only, B downloads z only), fetch_output brings A's output back on demand,
 * and every backend gives the CPU's answer. Mismatched links are refused. */
TI_TEST(linked_sessions_keep_tensors_on_the_device) {
    if (!g_have_device) TI_SKIP("no OpenCL device");
    size_t na, nb;
    unsigned char *ba = conv_model(4, 8, 3, "Relu", &na), *bb = conv_model(8, 5, 1, "Sigmoid", &nb);
    ti_error err;
    ti_model *ma = ti_model_load_memory(ba, na, NULL, &err), *mbm = ti_model_load_memory(bb, nb, NULL, &err);
    free(ba);
    free(bb);
    TI_REQUIRE(ma != NULL && mbm != NULL);
    float xv[144], want_y[288], want_z[180];
    for (int j = 0; j < 144; j++) xv[j] = rfloat();
    { /* the reference: each model on the CPU, B fed by hand */
        ti_session *a = make(ma, TI_BACKEND_CPU, &err), *b = make(mbm, TI_BACKEND_CPU, &err);
        TI_REQUIRE(a != NULL && b != NULL);
        memcpy(ti_session_input(a, 0)->data, xv, sizeof xv);
        TI_CHECK(ti_session_run(a, &err) == TI_OK);
        memcpy(want_y, ti_session_output(a, 0)->data, sizeof want_y);
        memcpy(ti_session_input(b, 0)->data, want_y, sizeof want_y);
        TI_CHECK(ti_session_run(b, &err) == TI_OK);
        memcpy(want_z, ti_session_output(b, 0)->data, sizeof want_z);
        TI_CHECK(ti_session_link_input(b, 0, b, 0, &err) == TI_ERR_INVALID_ARGUMENT);
        TI_CHECK(ti_session_link_input(a, 0, b, 0, &err) == TI_ERR_INVALID_ARGUMENT); /* [1,5,..] vs [1,4,..] */
        TI_CHECK_STR_CONTAINS(err.message, "does not match");
        ti_session_destroy(a);
        ti_session_destroy(b);
    }
    for (int mode = 0; mode < 3; mode++) { /* OpenCL with copies, OpenCL default, CPU */
        ti_backend be = mode == 2 ? TI_BACKEND_CPU : TI_BACKEND_OPENCL;
        ti_session *a = make_io(ma, be, mode == 0, &err), *b = make_io(mbm, be, mode == 0, &err);
        TI_REQUIRE(a != NULL && b != NULL);
        TI_CHECK(ti_session_link_input(b, 0, a, 0, &err) == TI_OK);
        for (int r = 0; r < 2; r++) {
            memcpy(ti_session_input(a, 0)->data, xv, sizeof xv);
            TI_CHECK(r == 0 ? ti_session_run(a, &err) == TI_OK
                            : ti_session_run_async(a, &err) == TI_OK); /* b waits for it */
            memset(ti_session_input(b, 0)->data, 0, sizeof want_y);
            TI_CHECK(ti_session_run(b, &err) == TI_OK);
            const float *z = (const float *)ti_session_output(b, 0)->data;
            int bad = 0;
            for (int j = 0; j < 180; j++) bad += fabs(z[j] - want_z[j]) > g_val_tol * (1 + fabs(want_z[j]));
            TI_CHECK_EQ_INT(bad, 0);
            ti_session_info ia, ib;
            TI_CHECK(ti_session_get_info(a, &ia) == TI_OK && ti_session_get_info(b, &ib) == TI_OK);
            if (mode == 0) { /* x up, z down, nothing else crossed */
                TI_CHECK(ia.transfer_bytes == sizeof xv);
                TI_CHECK(ib.transfer_bytes == sizeof want_z);
            }
            TI_CHECK(ti_session_fetch_output(a, 0, &err) == TI_OK);
            const float *y = (const float *)ti_session_output(a, 0)->data;
            bad = 0;
            for (int j = 0; j < 288; j++) bad += fabs(y[j] - want_y[j]) > g_val_tol * (1 + fabs(want_y[j]));
            TI_CHECK_EQ_INT(bad, 0);
        }
        TI_CHECK(ti_session_link_input(b, 0, NULL, 0, &err) == TI_OK); /* unlinked: b's own input */
        memcpy(ti_session_input(b, 0)->data, want_y, sizeof want_y);
        TI_CHECK(ti_session_run(b, &err) == TI_OK);
        TI_CHECK(fabs(((const float *)ti_session_output(b, 0)->data)[7] - want_z[7]) < g_val_tol);
        ti_session_destroy(b);
        ti_session_destroy(a);
    }
    ti_model_free(ma);
    ti_model_free(mbm);
}

/* ---- the binary cache ------------------------------------------------------------------ */

static int count_cache_files(const char *dir, char *first, size_t cap) {
    char cmd[400];
    snprintf(cmd, sizeof cmd, "ls %.200s 2>/dev/null | grep -c 'clbin$'", dir);
    FILE *p = popen(cmd, "r");
    int n = 0;
    if (p != NULL) {
        if (fscanf(p, "%d", &n) != 1) n = 0;
        pclose(p);
    }
    snprintf(cmd, sizeof cmd, "ls %.200s 2>/dev/null | grep 'clbin$' | head -n 1", dir);
    p = popen(cmd, "r");
    first[0] = 0;
    if (p != NULL) {
        char name[200] = "";
        if (fgets(name, sizeof name, p) != NULL) {
            name[strcspn(name, "\n")] = 0;
            snprintf(first, cap, "%.190s/%.190s", dir, name);
        }
        pclose(p);
    }
    return n;
}

static ti_session *cached_session(ti_model *m, ti_session_info *info) {
    ti_session_desc d;
    memset(&d, 0, sizeof d);
    d.num_threads = 1;
    d.backend = TI_BACKEND_OPENCL;
    d.opencl_cache_dir = g_cache_dir;
    ti_error err;
    ti_session *s = ti_session_create(m, &d, &err);
    if (s == NULL) printf("session: %s\n", err.message);
    if (s != NULL) ti_session_get_info(s, info);
    return s;
}

static int output_matches_cpu(ti_model *m, ti_session *g) {
    ti_error err;
    ti_session *c = make(m, TI_BACKEND_CPU, &err);
    if (c == NULL) return 0;
    ti_tensor *a = ti_session_input(c, 0), *b = ti_session_input(g, 0);
    for (size_t j = 0; j < a->size_bytes / 4; j++) ((float *)a->data)[j] = rfloat();
    memcpy(b->data, a->data, a->size_bytes);
    int ok = ti_session_run(c, &err) == TI_OK && ti_session_run(g, &err) == TI_OK;
    const ti_tensor *x = ti_session_output(c, 0), *y = ti_session_output(g, 0);
    for (size_t j = 0; ok && j < x->size_bytes / 4; j++) {
        double e = ((const float *)x->data)[j] - ((const float *)y->data)[j];
        if (!(e < 1e-4 && e > -1e-4)) ok = 0;
    }
    ti_session_destroy(c);
    return ok;
}

/* ti_session_check_precision: the OpenCL session against the CPU per output and per node
 * output (the model outputs first), every row within 1e-4; on a CPU session every row is
 * exact; rows NULL counts; the checked session's own outputs are left as they were. */
TI_TEST(precision_check_per_layer) {
    if (!g_have_device) TI_SKIP("no OpenCL device");
    size_t n;
    unsigned char *bytes = conv_model(8, 24, 3, "Abs", &n); /* conv, then Abs: two nodes */
    ti_error err;
    ti_model *m = ti_model_load_memory(bytes, n, NULL, &err);
    free(bytes);
    TI_REQUIRE(m != NULL);
    for (int b = 0; b < 2; b++) {
        ti_session *s = make(m, b ? TI_BACKEND_OPENCL : TI_BACKEND_CPU, &err);
        TI_REQUIRE(s != NULL);
        ti_tensor *x = ti_session_input(s, 0);
        for (size_t j = 0; j < x->size_bytes / 4; j++) ((float *)x->data)[j] = rfloat();
        TI_REQUIRE(ti_session_run(s, &err) == TI_OK);
        const ti_tensor *y = ti_session_output(s, 0);
        float before[864];
        TI_REQUIRE(y->size_bytes == sizeof before);
        memcpy(before, y->data, sizeof before);
        int count = ti_session_check_precision(s, NULL, 0, &err);
        int nodes = ti_session_num_nodes(s);
        TI_CHECK_EQ_INT(count, 1 + nodes); /* the output, then each node's output */
        ti_precision_row rows[8];
        TI_REQUIRE(count > 0 && count <= 8);
        TI_CHECK_EQ_INT(ti_session_check_precision(s, rows, 8, &err), count);
        TI_CHECK(rows[0].node == -1 && strcmp(rows[0].name, "y") == 0 && rows[0].count == 864);
        int gpu_rows = 0;
        for (int i = 0; i < count; i++) {
            if (i > 0) TI_CHECK_EQ_INT(rows[i].node, i - 1);
            if (b) TI_CHECK(rows[i].max_rel < 1e-4);
            else TI_CHECK(rows[i].max_abs == 0.0 && rows[i].max_rel == 0.0);
            gpu_rows += rows[i].backend == TI_BACKEND_OPENCL;
        }
        TI_CHECK_EQ_INT(gpu_rows, b ? nodes : 0);
        if (b) printf("  precision check: output max |diff| %.3g, rel %.3g; node 0 (%s) rel %.3g\n", rows[0].max_abs,
                      rows[0].max_rel, rows[1].name, rows[1].max_rel);
        TI_CHECK(ti_session_output(s, 0) == y && memcmp(y->data, before, sizeof before) == 0);
        TI_CHECK_EQ_INT(ti_session_check_precision(NULL, rows, 8, &err), -1);
        ti_session_destroy(s);
    }
    ti_model_free(m);
}

TI_TEST(program_cache_is_used_and_survives_damage) {
    if (!g_have_device) TI_SKIP("no OpenCL device");
    ti_error err;
    ti_model *m = ti_model_load_file("tests/data/conv2d_padding.onnx", NULL, &err);
    TI_REQUIRE(m != NULL);
    char cmd[400], first[400];
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_cache_dir);
    TI_REQUIRE(system(cmd) == 0);
    ti_session_info info;
    memset(&info, 0, sizeof info);
    ti_session *s = cached_session(m, &info); /* empty cache: built from source */
    TI_REQUIRE(s != NULL);
    TI_CHECK(info.programs_built >= 1 && info.programs_cached == 0);
    int built = info.programs_built;
    TI_CHECK(output_matches_cpu(m, s));
    ti_session_destroy(s);
    TI_CHECK_EQ_INT(count_cache_files(g_cache_dir, first, sizeof first), built);

    s = cached_session(m, &info); /* warm: every program from the cache */
    TI_REQUIRE(s != NULL);
    TI_CHECK_EQ_INT(info.programs_built, 0);
    TI_CHECK_EQ_INT(info.programs_cached, built);
    TI_CHECK(output_matches_cpu(m, s));
    ti_session_destroy(s);

    /* damage: one byte of the binary flipped, then the file cut short */
    for (int damage = 0; damage < 2; damage++) {
        FILE *f = fopen(first, "r+b");
        TI_REQUIRE(f != NULL);
        fseek(f, 0, SEEK_END);
        long size = ftell(f);
        if (damage == 0) {
            fseek(f, size / 2, SEEK_SET);
            int ch = fgetc(f);
            fseek(f, size / 2, SEEK_SET);
            fputc(ch ^ 0x5a, f);
            fclose(f);
        } else {
            fclose(f);
#if !defined(_WIN32)
            TI_CHECK(truncate(first, size / 3) == 0);
#endif
        }
        s = cached_session(m, &info);
        TI_REQUIRE(s != NULL);
        TI_CHECK_EQ_INT(info.programs_built, 1); /* the damaged one, rebuilt */
        TI_CHECK_EQ_INT(info.programs_cached, built - 1);
        TI_CHECK(output_matches_cpu(m, s));
        ti_session_destroy(s);
        s = cached_session(m, &info); /* and rewritten whole */
        TI_REQUIRE(s != NULL);
        TI_CHECK_EQ_INT(info.programs_built, 0);
        ti_session_destroy(s);
    }
    ti_model_free(m);
}

/* The test hook makes the "driver" refuse any work group over N items: launches retry
 * smaller and the tiled matmul gives way to the plain one; the user sees no error. */
TI_TEST(refused_work_group_sizes_never_reach_the_user) {
    if (!g_have_device) TI_SKIP("no OpenCL device");
    const char *models[2] = {"tests/data/light_squeezenet.onnx", NULL};
    static const char *const limits[3] = {"7", "1", "32"};
    for (int l = 0; l < 3; l++) {
#if !defined(_WIN32)
        setenv("TINYINFER_OPENCL_FAKE_MAX_WG", limits[l], 1);
#endif
        for (int i = 0; models[i]; i++) {
            ti_error err;
            ti_model *m = ti_model_load_file(models[i], NULL, &err);
            TI_REQUIRE(m != NULL);
            ti_session *g = make(m, TI_BACKEND_OPENCL, &err);
            TI_REQUIRE(g != NULL);
            TI_CHECK(output_matches_cpu(m, g));
            ti_session_info info;
            memset(&info, 0, sizeof info);
            TI_CHECK(ti_session_get_info(g, &info) == TI_OK);
            TI_CHECK(info.launch_retries > 0);
            TI_CHECK_EQ_INT(info.num_cpu_nodes, 0); /* every node still on the device */
            ti_session_destroy(g);
            ti_model_free(m);
        }
    }
#if !defined(_WIN32)
    unsetenv("TINYINFER_OPENCL_FAKE_MAX_WG");
#endif
    /* a matmul big enough for the tiled kernel, under a limit below its 256 items */
    ob_model mb;
    ob_init(&mb, 13);
    int64_t ad[2] = {70, 50}, bd[2] = {50, 90}, yd[2] = {70, 90};
    ob_input(&mb, "a", OB_FLOAT, 2, ad);
    ob_input(&mb, "b", OB_FLOAT, 2, bd);
    ob_node(&mb, "MatMul", "mm", "a,b", "y");
    ob_output(&mb, "y", OB_FLOAT, 2, yd);
    size_t n;
    unsigned char *bytes = ob_finish(&mb, &n);
#if !defined(_WIN32)
    setenv("TINYINFER_OPENCL_FAKE_MAX_WG", "64", 1);
#endif
    compare(bytes, n, "MatMul under a 64-item limit", "MatMul");
    free(bytes);
    /* one row, deep k: the matrix-vector kernel's 64-item groups refused under 32 */
    ob_init(&mb, 13);
    int64_t vd[2] = {1, 300}, wd[2] = {300, 20}, od[2] = {1, 20};
    ob_input(&mb, "a", OB_FLOAT, 2, vd);
    ob_input(&mb, "b", OB_FLOAT, 2, wd);
    ob_node(&mb, "MatMul", "mm", "a,b", "y");
    ob_output(&mb, "y", OB_FLOAT, 2, od);
    bytes = ob_finish(&mb, &n);
#if !defined(_WIN32)
    setenv("TINYINFER_OPENCL_FAKE_MAX_WG", "32", 1);
#endif
    compare(bytes, n, "MatMul 1x300x20 (matrix-vector) under a 32-item limit", "MatMul");
#if !defined(_WIN32)
    unsetenv("TINYINFER_OPENCL_FAKE_MAX_WG");
#endif
    free(bytes);
}

TI_TEST(device_selection_and_auto) {
    if (!g_have_device) TI_SKIP("no OpenCL device");
    ti_error err;
    ti_model *m = ti_model_load_file("tests/data/conv2d_padding.onnx", NULL, &err);
    TI_REQUIRE(m != NULL);
    ti_session_desc d;
    memset(&d, 0, sizeof d);
    d.backend = TI_BACKEND_OPENCL;
    d.opencl_device = "no such device anywhere";
    TI_CHECK(ti_session_create(m, &d, &err) == NULL);
    TI_CHECK_EQ_INT(err.code, TI_ERR_BACKEND);
    TI_CHECK_STR_CONTAINS(err.message, "no OpenCL device matches 'no such device anywhere'");
    d.opencl_device = "0"; /* by index */
    ti_session *s = ti_session_create(m, &d, &err);
    TI_CHECK(s != NULL);
    ti_session_destroy(s);
    /* auto: a GPU when there is one, else the CPU with the reason */
    d.backend = TI_BACKEND_AUTO;
    d.opencl_device = NULL;
    s = ti_session_create(m, &d, &err);
    TI_REQUIRE(s != NULL);
    ti_session_info info;
    memset(&info, 0, sizeof info);
    TI_CHECK(ti_session_get_info(s, &info) == TI_OK);
    if (info.backend == TI_BACKEND_CPU && info.fallback_reason[0]) /* no GPU at all */
        TI_CHECK_STR_CONTAINS(info.fallback_reason, "is not a GPU");
    else /* a GPU: on it already, or building its programs while the CPU serves */
        TI_CHECK(info.device[0] != 0);
    ti_session_destroy(s);
    ti_model_free(m);
}

TI_TEST(run_does_not_allocate) {
    if (!g_have_device) TI_SKIP("no OpenCL device");
    ti_error err;
    ti_model *m = ti_model_load_file("tests/data/light_squeezenet.onnx", NULL, &err);
    TI_REQUIRE(m != NULL);
    ti_test_alloc ca;
    memset(&ca, 0, sizeof ca);
    ti_session_desc d;
    memset(&d, 0, sizeof d);
    d.backend = TI_BACKEND_OPENCL;
    d.num_threads = 1;
    d.precision = g_prec;
    d.allocator = ti_test_allocator(&ca);
    ti_session *s = ti_session_create(m, &d, &err);
    TI_REQUIRE(s != NULL);
    ca.forbid = 1;
    TI_CHECK(ti_session_run(s, &err) == TI_OK);
    TI_CHECK(ti_session_run(s, &err) == TI_OK);
    TI_CHECK_EQ_INT((int)ca.forbidden, 0);
    ca.forbid = 0;
    ti_session_destroy(s);
    TI_CHECK(ti_test_alloc_balanced(&ca));
    ti_model_free(m);
}

/* run_async returns with the GPU work queued; wait finishes it: the same outputs as a
 * plain run, on the OpenCL and the CPU backends, and a run while one is pending waits. */
TI_TEST(async_run_and_wait) {
    if (!g_have_device) TI_SKIP("no OpenCL device");
    ti_error err;
    ti_model *m = ti_model_load_file("tests/data/light_squeezenet.onnx", NULL, &err);
    TI_REQUIRE(m != NULL);
    for (int b = 0; b < 2; b++) {
        ti_session *s = make(m, b ? TI_BACKEND_CPU : TI_BACKEND_OPENCL, &err);
        TI_REQUIRE(s != NULL);
        ti_tensor *x = ti_session_input(s, 0);
        for (size_t j = 0; j < x->size_bytes / 4; j++) ((float *)x->data)[j] = rfloat();
        TI_CHECK(ti_session_wait(s, &err) == TI_OK); /* nothing pending */
        TI_CHECK(ti_session_run(s, &err) == TI_OK);
        const ti_tensor *y = ti_session_output(s, 0);
        float *want = (float *)malloc(y->size_bytes);
        memcpy(want, y->data, y->size_bytes);
        memset(y->data, 0, y->size_bytes);
        TI_CHECK(ti_session_run_async(s, &err) == TI_OK);
        TI_CHECK(ti_session_wait(s, &err) == TI_OK);
        TI_CHECK(memcmp(want, y->data, y->size_bytes) == 0);
        memset(y->data, 0, y->size_bytes);
        TI_CHECK(ti_session_run_async(s, &err) == TI_OK);
        TI_CHECK(ti_session_run_async(s, &err) == TI_OK); /* waits for the first */
        TI_CHECK(ti_session_run(s, &err) == TI_OK);
        TI_CHECK(memcmp(want, y->data, y->size_bytes) == 0);
        TI_CHECK(ti_session_run_async(s, &err) == TI_OK);
        ti_session_destroy(s); /* with a run pending: finishes it, frees everything */
        free(want);
    }
    ti_model_free(m);
}

/* backend AUTO builds the programs on a thread while the CPU serves runs, then moves to
 * the device; every run's output is right, before and after the switch. */
TI_TEST(auto_serves_on_the_cpu_while_programs_build) {
    if (!g_have_device) TI_SKIP("no OpenCL device");
    ti_error err;
    ti_model *m = ti_model_load_file("tests/data/light_squeezenet.onnx", NULL, &err);
    TI_REQUIRE(m != NULL);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s-bg", g_cache_dir);
    TI_REQUIRE(system(cmd) == 0);
    char dir[300];
    snprintf(dir, sizeof dir, "%s-bg", g_cache_dir);
    ti_session_desc d;
    memset(&d, 0, sizeof d);
    d.backend = TI_BACKEND_AUTO;
    d.opencl_device = "0"; /* named: AUTO takes it even when it is not a GPU (PoCL) */
    d.opencl_cache_dir = dir;
    d.num_threads = 1;
    ti_session *s = ti_session_create(m, &d, &err);
    TI_REQUIRE(s != NULL);
    ti_session_info info;
    memset(&info, 0, sizeof info);
    int runs = 0, bad = 0;
    for (; runs < 2000; runs++) {
        TI_CHECK(ti_session_get_info(s, &info) == TI_OK);
        if (info.backend == TI_BACKEND_OPENCL) break;
        if (!output_matches_cpu(m, s)) bad++;
    }
    TI_CHECK_EQ_INT(info.backend, TI_BACKEND_OPENCL);
    TI_CHECK_EQ_INT(bad, 0);
    TI_CHECK(output_matches_cpu(m, s));
    TI_CHECK(info.opencl_ready_ms > 0);
    TI_CHECK(info.cpu_runs_before_gpu <= runs);
    printf("  background build: ready after %.0f ms, %d run(s) served on the CPU meanwhile\n",
           info.opencl_ready_ms, info.cpu_runs_before_gpu);
    ti_session_destroy(s);
    /* destroyed while still building: joins the thread, leaks nothing */
    s = ti_session_create(m, &d, &err);
    TI_REQUIRE(s != NULL);
    ti_session_destroy(s);
    /* opencl_build_first: on the device from the first run */
    d.opencl_build_first = 1;
    s = ti_session_create(m, &d, &err);
    TI_REQUIRE(s != NULL);
    TI_CHECK(ti_session_get_info(s, &info) == TI_OK && info.backend == TI_BACKEND_OPENCL);
    ti_session_destroy(s);
    snprintf(cmd, sizeof cmd, "rm -rf %s-bg", g_cache_dir);
    TI_CHECK(system(cmd) == 0);
    ti_model_free(m);
}

/* The Android linker's refusal gets the manifest hint; other errors do not. */
TI_TEST(android_namespace_hint) {
    ti_cl_report rep;
    memset(&rep, 0, sizeof rep);
    rep.num_tried = 2;
    snprintf(rep.tried[0].error, sizeof rep.tried[0].error, "dlopen failed: not found");
    TI_CHECK(ti__cl_namespace_hint(&rep)[0] == 0);
    snprintf(rep.tried[1].error, sizeof rep.tried[1].error,
             "library \"/vendor/lib64/libOpenCL.so\" needed or dlopened by \"libnativeloader.so\" "
             "is not accessible for the namespace \"clns-4\"");
    TI_CHECK_STR_CONTAINS(ti__cl_namespace_hint(&rep),
                          "<uses-native-library android:name=\"libOpenCL.so\"");
}


/* ---- tuning ------------------------------------------------------------------------- */

static ti_session *make_tuned(ti_model *m, ti_backend b, const char *text, const char *file, ti_error *err) {
    ti_session_desc d;
    memset(&d, 0, sizeof d);
    d.num_threads = 1;
    d.backend = b;
    d.tuning = text;
    d.tuning_file = file;
    return ti_session_create(m, &d, err);
}

static int find_node(ti_session *s, const char *op, ti_node_info *ni) {
    for (int i = 0; i < ti_session_num_nodes(s); i++)
        if (ti_session_node_info(s, i, ni) == TI_OK && strcmp(ni->op, op) == 0) return i;
    return -1;
}

/* Malformed tuning text fails the session with its line; nodes it does not name are
 * left alone; a missing file names the path. Needs no device. */
TI_TEST(tuning_text_is_checked) {
    size_t n;
    unsigned char *bytes = conv_model(4, 8, 3, "Relu", &n);
    ti_error err;
    ti_model *m = ti_model_load_memory(bytes, n, NULL, &err);
    TI_REQUIRE(m != NULL);
    static const struct { const char *text, *want; } bad[] = {
        {"", "empty"},
        {"tinyinfer-tunings 1\n", "line 1: not a tuning file"},
        {"tinyinfer-tuning 2\n", "line 1: unsupported version"},
        {"tinyinfer-tuning 1\nnode conv wg=0\n", "line 2: value must be"},
        {"tinyinfer-tuning 1\n# ok\nnode conv wg=99999999\n", "line 3: value must be"},
        {"tinyinfer-tuning 1\nnode conv wq=32\n", "line 2: unknown key"},
        {"tinyinfer-tuning 1\nnode conv conv=fft\n", "line 2: conv must be"},
        {"tinyinfer-tuning 1\nnode conv wg\n", "line 2: expected key=value"},
        {"tinyinfer-tuning 1\nnode c%6 wg=32\n", "line 2: bad %XX escape"},
        {"tinyinfer-tuning 1\nnode\n", "line 2: node line without a name"},
        {"tinyinfer-tuning 1\nknob conv wg=32\n", "line 2: unknown line"},
        {"tinyinfer-tuning 1\nnode #x1 wg=32\n", "line 2: bad node index"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ti_session *s = make_tuned(m, TI_BACKEND_CPU, bad[i].text, NULL, &err);
        TI_CHECK(s == NULL);
        ti_session_destroy(s);
        TI_CHECK_EQ_INT(err.code, TI_ERR_INVALID_ARGUMENT);
        if (strstr(err.message, bad[i].want) == NULL) {
            printf("tuning case %zu: '%s' lacks '%s'\n", i, err.message, bad[i].want);
            TI_CHECK(0);
        }
    }
    ti_session *s = make_tuned(m, TI_BACKEND_CPU, "tinyinfer-tuning 1\r\ndevice x / y\nmodel abc\n"
                               "node absent conv=direct wg=auto\nnode conv splits=4\n", NULL, &err);
    TI_CHECK(s != NULL);
    ti_session_destroy(s);
    s = make_tuned(m, TI_BACKEND_CPU, NULL, "build/test/no/such/tuning.txt", &err);
    TI_CHECK(s == NULL);
    TI_CHECK_EQ_INT(err.code, TI_ERR_IO);
    TI_CHECK(strstr(err.message, "build/test/no/such/tuning.txt") != NULL);
    ti_model_free(m);
    free(bytes);
}

/* Every candidate a conv and an elementwise node list runs, is reported as applied and
 * gives the CPU's outputs; a local size over the device's limit is retried smaller and
 * counted against its node; a file and an escaped name work like the text. */
TI_TEST(tuning_candidates_apply_and_keep_outputs) {
    if (!g_have_device) TI_SKIP("no OpenCL device");
    size_t n;
    unsigned char *bytes = conv_model(16, 40, 3, "Abs", &n); /* K = 144: two splits; Abs stays a node */
    ti_error err;
    ti_model *m = ti_model_load_memory(bytes, n, NULL, &err);
    TI_REQUIRE(m != NULL);
    ti_session *s = make_tuned(m, TI_BACKEND_OPENCL, NULL, NULL, &err);
    TI_REQUIRE(s != NULL);
    ti_node_info ni;
    TI_REQUIRE(find_node(s, "Conv", &ni) >= 0);
    TI_CHECK(strncmp(ni.tunables, "conv=gemm splits=auto|conv=gemm splits=1|conv=gemm splits=2|", 60) == 0);
    TI_CHECK(strstr(ni.tunables, "|conv=direct wg=auto|conv=direct wg=16|") != NULL);
    TI_CHECK(strstr(ni.tunables, "splits=4") == NULL); /* K / 64 = 2 */
    TI_CHECK_EQ_INT((int)strlen(ni.tuning), 0);
    char conv_cands[640], elt_cands[640], elt_name[64], conv_name[64];
    snprintf(conv_cands, sizeof conv_cands, "%s", ni.tunables);
    snprintf(conv_name, sizeof conv_name, "%s", ni.name);
    ti_node_info ei;
    int have_elt = find_node(s, "Abs", &ei) >= 0;
    TI_CHECK(have_elt);
    if (have_elt) {
        snprintf(elt_cands, sizeof elt_cands, "%s", ei.tunables);
        snprintf(elt_name, sizeof elt_name, "%s", ei.name);
        TI_CHECK(strncmp(elt_cands, "wg=auto|wg=16|wg=32", 19) == 0);
    }
    ti_session_destroy(s);

    int tried = 0;
    for (int which = 0; which < 2; which++) {
        if (which == 1 && !have_elt) break;
        char *list = which == 0 ? conv_cands : elt_cands;
        const char *name = which == 0 ? conv_name : elt_name;
        for (char *c = list; c != NULL && *c;) {
            char *bar = strchr(c, '|');
            if (bar != NULL) *bar = 0;
            char text[800];
            snprintf(text, sizeof text, "tinyinfer-tuning 1\nnode %s %s\n", name, c);
            s = make_tuned(m, TI_BACKEND_OPENCL, text, NULL, &err);
            TI_CHECK(s != NULL);
            if (s != NULL) {
                TI_CHECK(find_node(s, which == 0 ? "Conv" : ei.op, &ni) >= 0);
                if (strcmp(ni.tuning, c) != 0) {
                    printf("tuning '%s': applied '%s'\n", c, ni.tuning);
                    TI_CHECK(0);
                }
                TI_CHECK(output_matches_cpu(m, s));
                TI_CHECK(find_node(s, which == 0 ? "Conv" : ei.op, &ni) >= 0);
                /* candidates go up to the device's largest group; a kernel whose own limit
                 * (registers) is lower refuses the largest: retried smaller and counted, so
                 * a tuner records it as invalid (seen on the H100 at 1024) */
                const char *w = strstr(c, "wg=");
                if (ni.launch_retries != 0 && !(w != NULL && atoi(w + 3) >= 512)) {
                    printf("tuning '%s': %d launches refused\n", c, ni.launch_retries);
                    TI_CHECK(0);
                }
                TI_CHECK_EQ_INT(ni.backend, TI_BACKEND_OPENCL);
                tried++;
            }
            ti_session_destroy(s);
            c = bar ? bar + 1 : NULL;
        }
    }
    TI_CHECK(tried >= 10);
    printf("tuning: %d candidate sessions matched the CPU (conv '%s', elementwise '%s')\n", tried, conv_name,
           have_elt ? elt_name : "(fused)");

    /* over the limit: retried smaller, counted on the node, outputs unchanged */
    char text[256];
    snprintf(text, sizeof text, "tinyinfer-tuning 1\nnode %s conv=direct wg=65536\n", conv_name);
    s = make_tuned(m, TI_BACKEND_OPENCL, text, NULL, &err);
    TI_REQUIRE(s != NULL);
    TI_CHECK(output_matches_cpu(m, s));
    TI_CHECK(find_node(s, "Conv", &ni) >= 0);
    TI_CHECK(ni.launch_retries >= 1);
    ti_session_info info;
    ti_session_get_info(s, &info);
    TI_CHECK(info.launch_retries >= ni.launch_retries);
    ti_session_destroy(s);

    /* the variant is really the one asked for: with a driver refusing groups over 32
     * items, the GEMM (64-item groups) is retried, the direct kernel at 16 is not */
    setenv("TINYINFER_OPENCL_FAKE_MAX_WG", "32", 1);
    for (int v = 0; v < 2; v++) {
        snprintf(text, sizeof text, "tinyinfer-tuning 1\nnode %s %s\n", conv_name,
                 v == 0 ? "conv=direct wg=16" : "conv=gemm splits=1");
        s = make_tuned(m, TI_BACKEND_OPENCL, text, NULL, &err);
        TI_REQUIRE(s != NULL);
        TI_CHECK(output_matches_cpu(m, s));
        TI_CHECK(find_node(s, "Conv", &ni) >= 0);
        if (v == 0) TI_CHECK_EQ_INT(ni.launch_retries, 0);
        else TI_CHECK(ni.launch_retries >= 1);
        ti_session_destroy(s);
    }
    unsetenv("TINYINFER_OPENCL_FAKE_MAX_WG");

    /* the GEMM's other block sizes: their program is built only when a tuning asks for one
     * (one program more than untuned), the outputs stay the CPU's, and the kernel that
     * runs is that block size's: refused 64-item groups name it (white box: the runtime's
     * last retry reason) */
    s = make_tuned(m, TI_BACKEND_OPENCL, NULL, NULL, &err);
    TI_REQUIRE(s != NULL);
    ti_session_get_info(s, &info);
    int progs_untuned = info.programs_built + info.programs_cached;
    ti_session_destroy(s);
    static const char *const tiles[2] = {"16", "64"};
    for (int t = 0; t < 2; t++) {
        snprintf(text, sizeof text, "tinyinfer-tuning 1\nnode %s conv=gemm tile=%s splits=1\n", conv_name, tiles[t]);
        s = make_tuned(m, TI_BACKEND_OPENCL, text, NULL, &err);
        TI_REQUIRE(s != NULL);
        ti_session_get_info(s, &info);
        TI_CHECK_EQ_INT(info.programs_built + info.programs_cached, progs_untuned + 1);
        TI_CHECK(output_matches_cpu(m, s));
        TI_CHECK(find_node(s, "Conv", &ni) >= 0);
        TI_CHECK_EQ_INT(ni.launch_retries, 0);
        ti_session_destroy(s);
        /* the elementwise node and the direct conv the GEMM falls back to at 16 items: the
         * GEMM's are the only refused groups */
        snprintf(text, sizeof text, "tinyinfer-tuning 1\nnode %s conv=gemm tile=%s splits=1 wg=16\nnode %s wg=16\n",
                 conv_name, tiles[t], have_elt ? elt_name : "none");
        setenv("TINYINFER_OPENCL_FAKE_MAX_WG", "32", 1);
        s = make_tuned(m, TI_BACKEND_OPENCL, text, NULL, &err);
        TI_REQUIRE(s != NULL);
        TI_CHECK(output_matches_cpu(m, s));
        TI_CHECK(find_node(s, "Conv", &ni) >= 0);
        TI_CHECK(ni.launch_retries >= 1);
        char want[64];
        snprintf(want, sizeof want, "ti_conv_gemm_t%s: 64-item groups refused", tiles[t]);
        TI_CHECK(s->cl != NULL && strstr(s->cl->rt.last_retry, want) == s->cl->rt.last_retry);
        if (s->cl != NULL && strstr(s->cl->rt.last_retry, want) != s->cl->rt.last_retry)
            printf("tile %s: last retry '%s'\n", tiles[t], s->cl->rt.last_retry);
        ti_session_destroy(s);
        unsetenv("TINYINFER_OPENCL_FAKE_MAX_WG");
    }
    /* a tile the GEMM has not: the session fails, naming the line */
    snprintf(text, sizeof text, "tinyinfer-tuning 1\nnode %s tile=48\n", conv_name);
    s = make_tuned(m, TI_BACKEND_OPENCL, text, NULL, &err);
    TI_CHECK(s == NULL);
    TI_CHECK_STR_CONTAINS(err.message, "tile must be 16, 32, 64 or auto");
    ti_session_destroy(s);

    /* by index (nameless nodes) */
    int ci = find_node(s = make_tuned(m, TI_BACKEND_OPENCL, NULL, NULL, &err), "Conv", &ni);
    ti_session_destroy(s);
    snprintf(text, sizeof text, "tinyinfer-tuning 1\nnode #%d conv=gemm splits=2\nnode #999 wg=16\n", ci);
    s = make_tuned(m, TI_BACKEND_OPENCL, text, NULL, &err);
    TI_REQUIRE(s != NULL);
    TI_CHECK(find_node(s, "Conv", &ni) >= 0);
    TI_CHECK(strcmp(ni.tuning, "conv=gemm splits=2") == 0);
    /* the split count really is the plan's (white box: the conv's parameter table holds
     * the kind, 15 shape ints, K, the depth per split, the splits, the block edge) */
    TI_CHECK(s->cl != NULL && s->cl->par[ci][0] == TI__CLCONV_GEMM && s->cl->par[ci][18] == 2 &&
             s->cl->par[ci][17] == 80 && s->cl->par[ci][19] == 32);
    ti_session_destroy(s);
    snprintf(text, sizeof text, "tinyinfer-tuning 1\nnode #%d conv=gemm splits=1 tile=64\n", ci);
    s = make_tuned(m, TI_BACKEND_OPENCL, text, NULL, &err);
    TI_REQUIRE(s != NULL);
    TI_CHECK(s->cl != NULL && s->cl->par[ci][18] == 1 && s->cl->par[ci][17] == 144 && s->cl->par[ci][19] == 64);
    ti_session_destroy(s);

    /* from a file, the name escaped (%6F is 'o') */
    const char *path = "build/test/cl/tuning-test.txt";
    FILE *f = fopen(path, "w");
    TI_REQUIRE(f != NULL);
    fprintf(f, "tinyinfer-tuning 1\nnode ");
    for (const char *p = conv_name; *p; p++) fprintf(f, *p == 'o' ? "%%6F" : "%c", *p);
    fprintf(f, " conv=direct wg=32\n");
    fclose(f);
    s = make_tuned(m, TI_BACKEND_OPENCL, NULL, path, &err);
    TI_REQUIRE(s != NULL);
    TI_CHECK(find_node(s, "Conv", &ni) >= 0);
    TI_CHECK(strcmp(ni.tuning, "conv=direct wg=32") == 0);
    TI_CHECK(output_matches_cpu(m, s));
    ti_session_destroy(s);
    remove(path);
    ti_model_free(m);
    free(bytes);
}

/* ---- fp16 storage (desc.precision TI_PRECISION_FP16) ---------------------------------- */

static void set_fp16(int on) {
    g_prec = on ? TI_PRECISION_FP16 : TI_PRECISION_DEFAULT;
    g_tol = on ? 2e-3 : 1e-4;
    g_val_tol = on ? 3e-3 : 1e-5;
}

/* Every kernel again with tensors stored as halves (PoCL has no cl_khr_fp16: storage
 * only, arithmetic in float), within 2e-3 of the output's scale; the worst case must
 * show a real fp16 error (above 1e-5), so the run cannot pass by staying in fp32. */
TI_TEST(fp16_storage_kernels_match_the_cpu) {
    if (!g_have_device) TI_SKIP("no OpenCL device");
    set_fp16(1);
    g_worst = 0.0;
    /* the same cases at every run: the tests before this one draw a varying number of
     * random values (the background-build test runs until the programs are ready) */
    g_rng = 0x2545f4914f6cdd1dull;
    conv_kernels_match_the_cpu();
    matmul_and_gemm_match_the_cpu();
    elementwise_ops_match_the_cpu();
    pooling_matches_the_cpu();
    normalisation_and_movement_match_the_cpu();
    printf("  fp16 storage: worst kernel case %.3g of the output's scale (bound %.0e)\n", g_worst, g_tol);
    TI_CHECK(g_worst > 1e-5 && g_worst <= 2e-3);
    set_fp16(0);
}

/* The host boundary in fp16: CPU fallback nodes between GPU ones, caller memory (copies
 * and zero copy), async runs, linked sessions, no allocation in a run; the same tests as
 * in fp32 with fp16 tolerances (the bytes moved between host and device are those of
 * fp32: the conversions happen on the device). */
TI_TEST(fp16_storage_at_the_host_boundary) {
    if (!g_have_device) TI_SKIP("no OpenCL device");
    set_fp16(1);
    bound_memory_on_opencl();
    linked_sessions_keep_tensors_on_the_device();
    run_does_not_allocate(); /* the conversions too */
    set_fp16(0);
}

/* Index of the largest of n floats. */
static size_t argmax(const float *v, size_t n) {
    size_t b = 0;
    for (size_t i = 1; i < n; i++)
        if (v[i] > v[b]) b = i;
    return b;
}

/* Real models with fp16 storage against the CPU in fp32 on the same random input: within
 * 1e-2 of the output's scale (mobilenet_v2 measures about 1e-3), the same top-1, and an
 * error that is not 0. The arch models are used when CI's generator has cached them. The
 * program cache keeps fp16 programs apart from fp32 ones (their build options differ).
 * light_squeezenet (random weights) reaches 1e9 in its activations, past half's 65504:
 * there the precision check must show the overflow, which is what it is for. */
TI_TEST(fp16_models_match_the_cpu) {
    if (!g_have_device) TI_SKIP("no OpenCL device");
    char paths[6][300];
    int np = 0;
    snprintf(paths[np++], sizeof paths[0], "tests/data/conv2d_padding.onnx");
    const char *home = getenv("HOME");
    static const char *const arch[] = {"mobilenet_v2", "squeezenet1_1", "resnet18", "efficientnet_b0"};
    for (int i = 0; i < 4 && home != NULL; i++) {
        snprintf(paths[np], sizeof paths[0], "%.200s/.cache/tinyinfer/arch/%s/model.onnx", home, arch[i]);
        FILE *f = fopen(paths[np], "rb");
        if (f != NULL) {
            fclose(f);
            np++;
        }
    }
    for (int k = 0; k < np; k++) {
        ti_error err;
        ti_model *m = ti_model_load_file(paths[k], NULL, &err);
        if (m == NULL) printf("%s: %s\n", paths[k], err.message);
        TI_REQUIRE(m != NULL);
        set_fp16(1);
        ti_session *c = make(m, TI_BACKEND_CPU, &err), *g = c ? make(m, TI_BACKEND_OPENCL, &err) : NULL;
        set_fp16(0);
        TI_REQUIRE(c != NULL && g != NULL);
        ti_session_info info;
        TI_CHECK(ti_session_get_info(g, &info) == TI_OK && info.precision == TI_PRECISION_FP16 &&
                 info.num_gpu_nodes > 0);
        TI_CHECK(ti_session_get_info(c, &info) == TI_OK && info.precision == TI_PRECISION_FP32);
        for (int i = 0; i < ti_session_num_inputs(c); i++) {
            ti_tensor *a = ti_session_input(c, i);
            for (size_t j = 0; j < a->size_bytes / 4; j++) ((float *)a->data)[j] = rfloat();
            memcpy(ti_session_input(g, i)->data, a->data, a->size_bytes);
        }
        TI_CHECK(ti_session_run(c, &err) == TI_OK);
        TI_CHECK(ti_session_run(g, &err) == TI_OK);
        const ti_tensor *a = ti_session_output(c, 0), *b = ti_session_output(g, 0);
        size_t n = a->size_bytes / 4;
        const float *x = (const float *)a->data, *y = (const float *)b->data;
        double me = 0, mr = 0;
        for (size_t j = 0; j < n; j++) {
            double e = fabs((double)x[j] - y[j]);
            if (!(e <= me)) me = e;
            if (fabs(x[j]) > mr) mr = fabs(x[j]);
        }
        double rel = me / (mr > 0 ? mr : 1);
        printf("  fp16 %s: output max |diff| %.3g, %.3g of its scale, top-1 %zu / %zu\n", paths[k], me, rel,
               argmax(x, n), argmax(y, n));
        TI_CHECK(rel > 0.0 && rel <= 1e-2);
        TI_CHECK(argmax(x, n) == argmax(y, n));
        ti_session_destroy(g);
        ti_session_destroy(c);
        ti_model_free(m);
    }
    ti_error err;
    ti_model *m = ti_model_load_file("tests/data/light_squeezenet.onnx", NULL, &err);
    TI_REQUIRE(m != NULL);
    set_fp16(1);
    ti_session *ls = make(m, TI_BACKEND_OPENCL, &err);
    set_fp16(0);
    TI_REQUIRE(ls != NULL);
    ti_tensor *lx = ti_session_input(ls, 0);
    for (size_t j = 0; j < lx->size_bytes / 4; j++) ((float *)lx->data)[j] = rfloat();
    ti_precision_row row;
    TI_CHECK(ti_session_check_precision(ls, &row, 1, &err) > 1);
    printf("  fp16 light_squeezenet (activations up to 1e9): output rel error %g\n", row.max_rel);
    TI_CHECK(row.node == -1 && !(row.max_rel < 1.0)); /* inf / NaN: flagged, not hidden */
    ti_session_destroy(ls);
    ti_model_free(m);
    /* the cache: fp32 programs written, then fp16 ones built (not loaded) beside them */
    m = ti_model_load_file("tests/data/conv2d_padding.onnx", NULL, &err);
    TI_REQUIRE(m != NULL);
    char dir[300], first[400];
    snprintf(dir, sizeof dir, "%.250s-fp16", g_cache_dir);
    ti_session_desc d;
    memset(&d, 0, sizeof d);
    d.num_threads = 1;
    d.backend = TI_BACKEND_OPENCL;
    d.opencl_cache_dir = dir;
    int counts[3];
    ti_session_info info[3];
    for (int r = 0; r < 3; r++) { /* fp32, fp16, fp16 again */
        d.precision = r == 0 ? TI_PRECISION_FP32 : TI_PRECISION_FP16;
        ti_session *s = ti_session_create(m, &d, &err);
        TI_REQUIRE(s != NULL);
        ti_session_get_info(s, &info[r]);
        counts[r] = count_cache_files(dir, first, sizeof first);
        ti_session_destroy(s);
    }
    TI_CHECK(info[0].programs_built > 0 && info[1].programs_built > 0 && info[1].programs_cached == 0);
    TI_CHECK(counts[1] > counts[0] && counts[2] == counts[1]);
    TI_CHECK(info[2].programs_built == 0 && info[2].programs_cached == info[1].programs_built);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) printf("could not remove %s\n", dir);
    ti_model_free(m);
}

/* ti_session_check_precision on an fp16 session reports the real loss: every row (the
 * output, the conv and the Abs after it, all on the device) above 0 and within 2e-3. */
TI_TEST(fp16_precision_check_reports_the_loss) {
    if (!g_have_device) TI_SKIP("no OpenCL device");
    size_t n;
    unsigned char *bytes = conv_model(8, 24, 3, "Abs", &n);
    ti_error err;
    ti_model *m = ti_model_load_memory(bytes, n, NULL, &err);
    free(bytes);
    TI_REQUIRE(m != NULL);
    set_fp16(1);
    ti_session *s = make(m, TI_BACKEND_OPENCL, &err);
    set_fp16(0);
    TI_REQUIRE(s != NULL);
    ti_tensor *x = ti_session_input(s, 0);
    for (size_t j = 0; j < x->size_bytes / 4; j++) ((float *)x->data)[j] = rfloat();
    ti_precision_row rows[8];
    int count = ti_session_check_precision(s, rows, 8, &err);
    TI_CHECK_EQ_INT(count, 1 + ti_session_num_nodes(s));
    for (int i = 0; i < count && i < 8; i++) {
        printf("  fp16 precision check: %-4s max |diff| %.3g, rel %.3g\n", rows[i].name, rows[i].max_abs,
               rows[i].max_rel);
        TI_CHECK(rows[i].max_rel > 0.0 && rows[i].max_rel < 2e-3);
        if (i > 0) TI_CHECK_EQ_INT(rows[i].backend, TI_BACKEND_OPENCL);
    }
    ti_session_destroy(s);
    ti_model_free(m);
}

/* TFLite's 8-bit ops on the device (cl/qops.c): the bundled uint8 MobileNet v1 and the
 * Coral int8 / uint8 MobileNet v2s when ../shared is there, with fp32 and fp16 storage
 * sessions: every CONV_2D, DEPTHWISE_CONV_2D, ADD, AVERAGE_POOL_2D and RESHAPE node on the
 * device, outputs the same bytes as the CPU's on random inputs, no allocation in a run. */
TI_TEST(tflite_8bit_models_on_the_device) {
    if (!g_have_device) TI_SKIP("no OpenCL device");
    static const char *const paths[] = {"tests/data/mobilenet_v1_0.25_128_quant.tflite",
                                        "../shared/models/coral/mobilenet_v2_1.0_224_quant.tflite",
                                        "../shared/models/coral/tf2_mobilenet_v2_1.0_224_ptq.tflite"};
    for (int k = 0; k < 3; k++) {
        FILE *f = fopen(paths[k], "rb");
        if (f == NULL) {
            printf("  %s: not here, skipped\n", paths[k]);
            continue;
        }
        fclose(f);
        ti_error err;
        ti_model *m = ti_model_load_file(paths[k], NULL, &err);
        TI_REQUIRE(m != NULL);
        for (int half = 0; half < 2; half++) {
            ti_test_alloc ca;
            memset(&ca, 0, sizeof ca);
            ti_session_desc d;
            memset(&d, 0, sizeof d);
            d.num_threads = 1;
            d.backend = TI_BACKEND_OPENCL;
            d.precision = half ? TI_PRECISION_FP16 : TI_PRECISION_FP32;
            d.allocator = ti_test_allocator(&ca);
            ti_session *g = ti_session_create(m, &d, &err), *c = make(m, TI_BACKEND_CPU, &err);
            TI_REQUIRE(g != NULL && c != NULL);
            int on = 0, want = 0;
            for (int i = 0; i < ti_session_num_nodes(g); i++) {
                ti_node_info ni;
                TI_REQUIRE(ti_session_node_info(g, i, &ni) == TI_OK);
                if (strcmp(ni.op, "CONV_2D") && strcmp(ni.op, "DEPTHWISE_CONV_2D") && strcmp(ni.op, "ADD") &&
                    strcmp(ni.op, "AVERAGE_POOL_2D") && strcmp(ni.op, "RESHAPE"))
                    continue;
                want++;
                if (ni.backend == TI_BACKEND_OPENCL) on++;
                else printf("  %s node %d (%s) on the CPU: %s\n", paths[k], i, ni.op, ni.placement);
            }
            TI_CHECK(want > 25 && on == want);
            for (int r = 0; r < 2; r++) {
                for (int i = 0; i < ti_session_num_inputs(c); i++) {
                    ti_tensor *a = ti_session_input(c, i);
                    for (size_t j = 0; j < a->size_bytes; j++) ((unsigned char *)a->data)[j] = (unsigned char)rnd();
                    memcpy(ti_session_input(g, i)->data, a->data, a->size_bytes);
                }
                TI_CHECK(ti_session_run(c, &err) == TI_OK);
                ca.forbid = 1;
                TI_CHECK(ti_session_run(g, &err) == TI_OK);
                ca.forbid = 0;
                const ti_tensor *a = ti_session_output(c, 0), *b = ti_session_output(g, 0);
                TI_CHECK(a->size_bytes == b->size_bytes && memcmp(a->data, b->data, a->size_bytes) == 0);
            }
            printf("  %s%s: %d of %d nodes on the device, outputs the CPU's bytes\n", paths[k],
                   half ? " (fp16 storage)" : "", on, ti_session_num_nodes(g));
            TI_CHECK_EQ_INT((int)ca.forbidden, 0);
            ti_session_destroy(g);
            ti_session_destroy(c);
            TI_CHECK(ti_test_alloc_balanced(&ca));
        }
        ti_model_free(m);
    }
}

/* Half arithmetic (-DTI_F16_ARITH): used exactly when the device reports cl_khr_fp16 (Intel's
 * CPU OpenCL here; build.sh's j_cl_intel sets TI_TEST_WANT_FP16_ARITH=1 so that it must be),
 * never where it does not (PoCL, the H100), and the models' fp16 results above hold with it. */
TI_TEST(fp16_arithmetic_where_the_device_has_it) {
    if (!g_have_device) TI_SKIP("no OpenCL device");
    ti_error err;
    ti_model *m = ti_model_load_file("tests/data/conv2d_padding.onnx", NULL, &err);
    TI_REQUIRE(m != NULL);
    set_fp16(1);
    ti_session *g = make(m, TI_BACKEND_OPENCL, &err);
    set_fp16(0);
    TI_REQUIRE(g != NULL);
    ti_session_info info;
    TI_REQUIRE(ti_session_get_info(g, &info) == TI_OK);
    const char *want = getenv("TI_TEST_WANT_FP16_ARITH");
    printf("  fp16 session on '%s': half arithmetic %s\n", info.device ? info.device : "?",
           info.fp16_arithmetic ? "on (cl_khr_fp16)" : "off");
    TI_CHECK(info.precision == TI_PRECISION_FP16);
    if (want != NULL) TI_CHECK_EQ_INT(info.fp16_arithmetic, atoi(want));
    ti_session_destroy(g);
    ti_model_free(m);
}

int main(void) {
    ti_error err;
    ti_model *m = ti_model_load_file("tests/data/conv2d_padding.onnx", NULL, &err);
    if (m != NULL) {
        ti_session *s = make(m, TI_BACKEND_OPENCL, &err);
        g_have_device = s != NULL;
        if (s == NULL) printf("no OpenCL device: %s\n", err.message);
        ti_session_destroy(s);
        ti_model_free(m);
    }
    snprintf(g_cache_dir, sizeof g_cache_dir, "build/test/cl/cache-%ld", (long)getpid());
    TI_RUN(android_namespace_hint);
    TI_RUN(conv_kernels_match_the_cpu);
    TI_RUN(matmul_and_gemm_match_the_cpu);
    TI_RUN(elementwise_ops_match_the_cpu);
    TI_RUN(pooling_matches_the_cpu);
    TI_RUN(normalisation_and_movement_match_the_cpu);
    TI_RUN(unsupported_nodes_fall_back_per_node);
    TI_RUN(bound_memory_on_opencl);
    TI_RUN(precision_check_per_layer);
    TI_RUN(linked_sessions_keep_tensors_on_the_device);
    TI_RUN(program_cache_is_used_and_survives_damage);
    TI_RUN(refused_work_group_sizes_never_reach_the_user);
    TI_RUN(device_selection_and_auto);
    TI_RUN(run_does_not_allocate);
    TI_RUN(async_run_and_wait);
    TI_RUN(auto_serves_on_the_cpu_while_programs_build);
    TI_RUN(tuning_text_is_checked);
    TI_RUN(tuning_candidates_apply_and_keep_outputs);
    TI_RUN(fp16_storage_kernels_match_the_cpu);
    TI_RUN(fp16_storage_at_the_host_boundary);
    TI_RUN(fp16_models_match_the_cpu);
    TI_RUN(fp16_precision_check_reports_the_loss);
    TI_RUN(tflite_8bit_models_on_the_device);
    TI_RUN(fp16_arithmetic_where_the_device_has_it);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_cache_dir);
    if (system(cmd) != 0) printf("could not remove %s\n", g_cache_dir);
    return ti_test_summary();
}
