/* Sessions: fusion gives the same numbers as the unfused graph and as a direct reference,
 * ti_session_run never allocates on static graphs, the arena reuses memory, symbolic
 * dims bind and re-bind, value-dependent shapes re-plan, threads agree with one thread,
 * allocation failures at every point fail cleanly, errors name node and reason, and the
 * profile times every node; the inputs of a Concat are written in place. */
#include <unistd.h> /* getpid: a trace file name of its own */
#ifndef TI_TEST_SHARED_IMPL /* build.sh links one ASan build of the implementation */
#define TINYINFER_IMPLEMENTATION
#endif
#include "tinyinfer.h"
#ifdef __GLIBC__
#include <malloc.h> /* mallopt */
#endif
#include "onnx_build.h"
#include "ti_test.h"

static float frand(unsigned *s) {
    *s = *s * 1664525u + 1013904223u;
    return (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

/* The model built in mb, loaded (NULL, with the reason printed, when it does not load). */
static ti_model *load_built(ob_model *mb) {
    size_t n;
    unsigned char *bytes = ob_finish(mb, &n);
    ti_error err;
    ti_model *m = ti_model_load_memory(bytes, n, NULL, &err);
    if (m == NULL) printf("load: %s\n", err.message);
    free(bytes);
    return m;
}

/* Conv(3->4, 3x3, pad 1) + BatchNormalization + Relu on [1,3,6,5]. */
enum { CI = 3, CO = 4, H = 6, W = 5 };
static float g_w[CO * CI * 9], g_b[CO], g_scale[CO], g_beta[CO], g_mean[CO], g_var[CO];

static unsigned char *conv_bn_relu_model(size_t *size, const char *act) {
    unsigned seed = 7;
    for (int i = 0; i < CO * CI * 9; i++) g_w[i] = frand(&seed);
    for (int i = 0; i < CO; i++) {
        g_b[i] = frand(&seed);
        g_scale[i] = 1.0f + 0.5f * frand(&seed);
        g_beta[i] = frand(&seed);
        g_mean[i] = 0.3f * frand(&seed);
        g_var[i] = 1.0f + 0.4f * frand(&seed);
    }
    ob_model mb;
    ob_init(&mb, 13);
    int64_t xd[4] = {1, CI, H, W}, wd[4] = {CO, CI, 3, 3}, cd[1] = {CO}, yd[4] = {1, CO, H, W};
    ob_input(&mb, "x", OB_FLOAT, 4, xd);
    ob_init_f32(&mb, "w", 4, wd, g_w);
    ob_init_f32(&mb, "b", 1, cd, g_b);
    ob_init_f32(&mb, "scale", 1, cd, g_scale);
    ob_init_f32(&mb, "beta", 1, cd, g_beta);
    ob_init_f32(&mb, "mean", 1, cd, g_mean);
    ob_init_f32(&mb, "var", 1, cd, g_var);
    ob_buf a = {0, 0, 0};
    int64_t pads[4] = {1, 1, 1, 1};
    ob_attr_ints(&a, "pads", 4, pads);
    ob_node_attrs(&mb, "Conv", "conv_1", "x,w,b", "c", &a);
    ob_attr_float(&a, "epsilon", 1e-3f);
    ob_node_attrs(&mb, "BatchNormalization", "bn_1", "c,scale,beta,mean,var", "n", &a);
    ob_node(&mb, act, "act_1", "n", "y");
    ob_output(&mb, "y", OB_FLOAT, 4, yd);
    return ob_finish(&mb, size);
}

/* The same computation written out directly, in double. */
static void conv_bn_relu_ref(const float *x, float *y) {
    for (int o = 0; o < CO; o++)
        for (int i = 0; i < H; i++)
            for (int j = 0; j < W; j++) {
                double acc = g_b[o];
                for (int c = 0; c < CI; c++)
                    for (int ki = 0; ki < 3; ki++)
                        for (int kj = 0; kj < 3; kj++) {
                            int ii = i + ki - 1, jj = j + kj - 1;
                            if (ii < 0 || ii >= H || jj < 0 || jj >= W) continue;
                            acc += (double)g_w[((o * CI + c) * 3 + ki) * 3 + kj] * x[(c * H + ii) * W + jj];
                        }
                double v = (acc - g_mean[o]) / sqrt((double)g_var[o] + 1e-3) * g_scale[o] + g_beta[o];
                y[(o * H + i) * W + j] = (float)(v > 0 ? v : 0);
            }
}

/* A session of m on backend (NULL, with the reason printed, when it cannot be made). */
static ti_session *make_session(const ti_model *m, int no_fusion, int keep, int threads,
                                ti_backend backend) {
    ti_session_desc d;
    memset(&d, 0, sizeof d);
    d.no_fusion = no_fusion;
    d.keep_intermediates = keep;
    d.num_threads = threads;
    d.backend = backend;
    ti_error err;
    ti_session *s = ti_session_create(m, &d, &err);
    if (s == NULL) printf("session: %s\n", err.message);
    return s;
}

/* Input 0 from x, `runs` runs, output 0 into y, info (when not NULL), then s destroyed: 0
 * when a run fails (or s is NULL). */
static int run_session(ti_session *s, const float *x, int runs, float *y, ti_session_info *info) {
    if (s == NULL) return 0;
    ti_error err;
    ti_tensor *in = ti_session_input(s, 0);
    memcpy(in->data, x, in->size_bytes);
    int ok = 1;
    for (int r = 0; r < runs && ok; r++) ok = ti_session_run(s, &err) == TI_OK;
    if (!ok) printf("run: %s\n", err.message);
    ti_tensor *out = ti_session_output(s, 0);
    if (ok) memcpy(y, out->data, out->size_bytes);
    if (info) ti_session_get_info(s, info);
    ti_session_destroy(s);
    return ok;
}

static int run_conv_model(const ti_model *m, int no_fusion, int threads, const float *x, float *y,
                          ti_session_info *info) {
    return run_session(make_session(m, no_fusion, 0, threads, TI_BACKEND_AUTO), x, 1, y, info);
}

TI_TEST(fusion_matches_reference) {
    size_t n;
    unsigned char *bytes = conv_bn_relu_model(&n, "Relu");
    ti_error err;
    ti_model *m = ti_model_load_memory(bytes, n, NULL, &err);
    free(bytes);
    if (m == NULL) printf("load: %s\n", err.message);
    TI_REQUIRE(m != NULL);
    float x[CI * H * W], ref[CO * H * W], fused[CO * H * W], plain[CO * H * W], two[CO * H * W];
    unsigned seed = 3;
    for (int i = 0; i < CI * H * W; i++) x[i] = frand(&seed);
    conv_bn_relu_ref(x, ref);
    ti_session_info fi, pi;
    TI_REQUIRE(run_conv_model(m, 0, 1, x, fused, &fi));
    TI_REQUIRE(run_conv_model(m, 1, 1, x, plain, &pi));
    TI_REQUIRE(run_conv_model(m, 0, 2, x, two, NULL));
    TI_CHECK_EQ_INT(fi.num_fused, 2); /* BN and Relu folded into the Conv */
    TI_CHECK_EQ_INT(fi.num_nodes, 1);
    TI_CHECK_EQ_INT(pi.num_fused, 0);
    TI_CHECK_EQ_INT(pi.num_nodes, 3);
    double worst_f = 0, worst_p = 0, worst_t = 0;
    int positives = 0;
    for (int i = 0; i < CO * H * W; i++) {
        worst_f = fmax(worst_f, fabs(fused[i] - ref[i]));
        worst_p = fmax(worst_p, fabs(plain[i] - ref[i]));
        worst_t = fmax(worst_t, fabs(two[i] - fused[i]));
        positives += ref[i] > 0;
    }
    TI_CHECK(positives > 10 && positives < CO * H * W); /* the Relu is exercised */
    TI_CHECK(worst_f < 1e-4);
    TI_CHECK(worst_p < 1e-4);
    TI_CHECK(worst_t < 1e-5);
    ti_model_free(m);
}

TI_TEST(matmul_bias_activation_fusion) {
    /* [1,4,8] x [8,6] + b[6] -> Relu: the Add and the Relu fold into the MatMul */
    float w[8 * 6], b[6], x[4 * 8];
    unsigned seed = 11;
    for (int i = 0; i < 48; i++) w[i] = frand(&seed);
    for (int i = 0; i < 6; i++) b[i] = frand(&seed);
    for (int i = 0; i < 32; i++) x[i] = frand(&seed);
    ob_model mb;
    ob_init(&mb, 13);
    int64_t xd[3] = {1, 4, 8}, wd[2] = {8, 6}, bd[1] = {6}, yd[3] = {1, 4, 6};
    ob_input(&mb, "x", OB_FLOAT, 3, xd);
    ob_init_f32(&mb, "w", 2, wd, w);
    ob_init_f32(&mb, "b", 1, bd, b);
    ob_node(&mb, "MatMul", "mm", "x,w", "p");
    ob_node(&mb, "Add", "bias", "b,p", "q"); /* the constant first: order must not matter */
    ob_node(&mb, "Relu", "relu", "q", "y");
    ob_output(&mb, "y", OB_FLOAT, 3, yd);
    ti_error err;
    ti_model *m = load_built(&mb);
    TI_REQUIRE(m != NULL);
    ti_session *s = ti_session_create(m, NULL, &err);
    TI_REQUIRE(s != NULL);
    ti_session_info info;
    ti_session_get_info(s, &info);
    TI_CHECK_EQ_INT(info.num_fused, 2);
    TI_CHECK_EQ_INT(info.num_nodes, 1);
    ti_node_info ni;
    TI_CHECK(ti_session_node_info(s, 0, &ni) == TI_OK && strcmp(ni.fused, "Relu") == 0);
    memcpy(ti_session_input(s, 0)->data, x, sizeof x);
    TI_REQUIRE(ti_session_run(s, &err) == TI_OK);
    const float *y = (const float *)ti_session_output(s, 0)->data;
    double worst = 0;
    int zeros = 0;
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 6; c++) {
            double acc = b[c];
            for (int k = 0; k < 8; k++) acc += (double)x[r * 8 + k] * w[k * 6 + c];
            acc = acc > 0 ? acc : 0;
            zeros += acc == 0;
            worst = fmax(worst, fabs(acc - y[r * 6 + c]));
        }
    TI_CHECK(worst < 1e-5);
    TI_CHECK(zeros > 0 && zeros < 24);
    ti_session_destroy(s);
    ti_model_free(m);
}

/* A residual Add followed by Relu (or Clip): the activation folds into the Add, the CPU
 * applies it (on each thread's ranges as they are computed), and the numbers are those of
 * the unfused graph: a small tensor on one thread, and one of several ranges (39200 floats)
 * on two, b broadcast over the rows. */
TI_TEST(elementwise_activation_fusion) {
    for (int big = 0; big < 2; big++) {
        ob_model mb;
        ob_init(&mb, 13);
        int64_t d[4] = {1, 3, 5, 7}, db[4] = {1, 3, 5, 7};
        if (big) d[1] = 8, d[2] = 70, d[3] = 70, db[1] = 8, db[2] = 1, db[3] = 70;
        size_t n = (size_t)(d[0] * d[1] * d[2] * d[3]), nb = (size_t)(db[0] * db[1] * db[2] * db[3]);
        ob_input(&mb, "a", OB_FLOAT, 4, d);
        ob_input(&mb, "b", OB_FLOAT, 4, db);
        ob_node(&mb, "Add", "add", "a,b", "s");
        ob_node(&mb, "Relu", "relu", "s", "r");
        ob_node(&mb, "Mul", "mul", "r,a", "p");
        ob_node(&mb, "Sigmoid", "sig", "p", "y");
        ob_output(&mb, "y", OB_FLOAT, 4, d);
        ti_error err;
        ti_model *m = load_built(&mb);
        TI_REQUIRE(m != NULL);
        ti_session_desc dd;
        memset(&dd, 0, sizeof dd);
        dd.backend = TI_BACKEND_CPU;
        dd.num_threads = 1 + big;
        ti_session *s = ti_session_create(m, &dd, &err);
        dd.no_fusion = 1;
        ti_session *u = ti_session_create(m, &dd, &err);
        TI_REQUIRE(s != NULL && u != NULL);
        ti_session_info info;
        ti_session_get_info(s, &info);
        TI_CHECK_EQ_INT(info.num_nodes, 2);
        ti_node_info ni;
        TI_CHECK(ti_session_node_info(s, 0, &ni) == TI_OK && strcmp(ni.op, "Add") == 0 && strcmp(ni.fused, "Relu") == 0);
        TI_CHECK(ti_session_node_info(s, 1, &ni) == TI_OK && strcmp(ni.op, "Mul") == 0 && strcmp(ni.fused, "Sigmoid") == 0);
        unsigned seed = 5;
        for (int t = 0; t < 2; t++)
            for (size_t i = 0; i < (t ? nb : n); i++) {
                float v = frand(&seed);
                ((float *)ti_session_input(s, t)->data)[i] = v;
                ((float *)ti_session_input(u, t)->data)[i] = v;
            }
        TI_REQUIRE(ti_session_run(s, &err) == TI_OK && ti_session_run(u, &err) == TI_OK);
        TI_CHECK(memcmp(ti_session_output(s, 0)->data, ti_session_output(u, 0)->data, n * sizeof(float)) == 0);
        size_t half = 0; /* sigmoid(0) where the Relu cut */
        for (size_t i = 0; i < n; i++) half += ((const float *)ti_session_output(s, 0)->data)[i] == 0.5f;
        TI_CHECK(half > 0 && half < n);
        ti_session_destroy(s);
        ti_session_destroy(u);
        ti_model_free(m);
    }
}

/* The model in bytes (freed here) loaded through the counting allocator ca. */
static ti_model *load_counted(unsigned char *bytes, size_t n, ti_test_alloc *ca) {
    ti_model_desc md;
    memset(&md, 0, sizeof md);
    md.allocator = ti_test_allocator(ca);
    ti_error err;
    ti_model *m = ti_model_load_memory(bytes, n, &md, &err);
    free(bytes);
    return m;
}

/* A session of m on `threads` threads through ca, run `runs` times with every allocation
 * refused (its inputs as set by `set`, or zeros); returns it, or NULL (checks failed). */
static ti_session *run_counted(const ti_model *m, ti_test_alloc *ca, int threads, int runs,
                               const float *set) {
    ti_session_desc d;
    memset(&d, 0, sizeof d);
    d.allocator = ti_test_allocator(ca);
    d.num_threads = threads;
    /* the CPU's runs: with backend AUTO on a machine with an OpenCL GPU (the device tool's),
     * the session switched to it inside a run when its background build ended, and that
     * switch allocated (1 run in 3 failed here there) */
    d.backend = TI_BACKEND_CPU;
    ti_error err;
    ti_session *s = ti_session_create(m, &d, &err);
    TI_CHECK(s != NULL);
    if (s == NULL) return NULL;
    ti_tensor *in = ti_session_input(s, 0);
    if (set != NULL) memcpy(in->data, set, in->size_bytes);
    else memset(in->data, 0, in->size_bytes);
    size_t before = ca->calls;
    ca->forbid = 1;
    for (int r = 0; r < runs; r++) TI_CHECK(ti_session_run(s, &err) == TI_OK);
    ca->forbid = 0;
    TI_CHECK_EQ_INT(ca->calls - before, 0);
    TI_CHECK_EQ_INT(ca->forbidden, 0);
    return s;
}

/* A squeeze-and-excite gate: x [1, SC, SH, SW] -> GlobalAveragePool -> Conv 1x1 (SC -> 4)
 * + Relu -> Conv 1x1 (4 -> SC) + Sigmoid = g [1, SC, 1, 1]; Mul(x, g) (or Mul(g, x)) ->
 * Conv 1x1 (SC -> m) = y. The Mul's product also a graph output when gx_out. */
enum { SC = 24, SH = 16, SW = 16, SR = 4, SM_MAX = 32 };
static float g_sw1[SR * SC], g_sb1[SR], g_sw2[SC * SR], g_sb2[SC], g_sw3[SM_MAX * SC], g_sb3[SM_MAX];

static ti_model *se_model(int m, int gx_out, int gate_first) {
    unsigned seed = 11;
    for (int i = 0; i < SR * SC; i++) g_sw1[i] = frand(&seed);
    for (int i = 0; i < SR; i++) g_sb1[i] = frand(&seed);
    for (int i = 0; i < SC * SR; i++) g_sw2[i] = frand(&seed);
    for (int i = 0; i < SC; i++) g_sb2[i] = frand(&seed);
    for (int i = 0; i < SM_MAX * SC; i++) g_sw3[i] = frand(&seed);
    for (int i = 0; i < SM_MAX; i++) g_sb3[i] = frand(&seed);
    ob_model mb;
    ob_init(&mb, 13);
    int64_t xd[4] = {1, SC, SH, SW}, w1[4] = {SR, SC, 1, 1}, b1[1] = {SR}, w2[4] = {SC, SR, 1, 1};
    int64_t b2[1] = {SC}, w3[4] = {m, SC, 1, 1}, b3[1] = {m}, yd[4] = {1, m, SH, SW};
    ob_input(&mb, "x", OB_FLOAT, 4, xd);
    ob_init_f32(&mb, "w1", 4, w1, g_sw1);
    ob_init_f32(&mb, "b1", 1, b1, g_sb1);
    ob_init_f32(&mb, "w2", 4, w2, g_sw2);
    ob_init_f32(&mb, "b2", 1, b2, g_sb2);
    ob_init_f32(&mb, "w3", 4, w3, g_sw3);
    ob_init_f32(&mb, "b3", 1, b3, g_sb3);
    ob_node(&mb, "GlobalAveragePool", "gap", "x", "p");
    ob_node(&mb, "Conv", "reduce", "p,w1,b1", "r");
    ob_node(&mb, "Relu", "relu", "r", "rr");
    ob_node(&mb, "Conv", "expand", "rr,w2,b2", "e");
    ob_node(&mb, "Sigmoid", "sigmoid", "e", "g");
    ob_node(&mb, "Mul", "gate", gate_first ? "g,x" : "x,g", "gx");
    ob_node(&mb, "Conv", "project", "gx,w3,b3", "y");
    ob_output(&mb, "y", OB_FLOAT, 4, yd);
    if (gx_out) ob_output(&mb, "gx", OB_FLOAT, 4, xd);
    return load_built(&mb);
}

/* The same in double. */
static void se_ref(const float *x, int m, double *y) {
    double p[SC], r[SR], g[SC];
    for (int c = 0; c < SC; c++) {
        double s = 0;
        for (int i = 0; i < SH * SW; i++) s += x[c * SH * SW + i];
        p[c] = s / (SH * SW);
    }
    for (int o = 0; o < SR; o++) {
        double s = g_sb1[o];
        for (int c = 0; c < SC; c++) s += (double)g_sw1[o * SC + c] * p[c];
        r[o] = s > 0 ? s : 0;
    }
    for (int c = 0; c < SC; c++) {
        double s = g_sb2[c];
        for (int o = 0; o < SR; o++) s += (double)g_sw2[c * SR + o] * r[o];
        g[c] = 1.0 / (1.0 + exp(-s));
    }
    for (int o = 0; o < m; o++)
        for (int i = 0; i < SH * SW; i++) {
            double s = g_sb3[o];
            for (int c = 0; c < SC; c++) s += (double)g_sw3[o * SC + c] * (x[c * SH * SW + i] * g[c]);
            y[o * SH * SW + i] = s;
        }
}

/* The gate of a squeeze-and-excite block fuses into the 1x1 conv after it (which scales
 * its weights by the gate at each run): one node fewer than when the Mul's product is
 * also a graph output, with either operand order; not for 2 * 16 output channels on a
 * 16 x 16 map (the weights would cost more to scale than the Mul); the same numbers
 * fused and unfused, near a double reference, and on 2 threads the bits of 1. */
TI_TEST(gate_fuses_into_1x1_conv) {
    static float x[SC * SH * SW], y1[SM_MAX * SH * SW], y2[SM_MAX * SH * SW], yp[SM_MAX * SH * SW];
    static double ref[SM_MAX * SH * SW];
    unsigned seed = 5;
    for (int i = 0; i < SC * SH * SW; i++) x[i] = frand(&seed);
    static const int ms[3] = {8, 16, 32}; /* 8 * 16 and 16 * 16 <= 16 * 16 < 32 * 16 */
    for (int t = 0; t < 3; t++) {
        int m = ms[t], want_gate = m * 16 <= SH * SW;
        for (int order = 0; order < 2; order++) {
            ti_model *a = se_model(m, 0, order), *b = se_model(m, 1, order);
            TI_REQUIRE(a != NULL && b != NULL);
            ti_session_info fa, fb, pa;
            TI_REQUIRE(run_conv_model(a, 0, 1, x, y1, &fa));
            TI_REQUIRE(run_conv_model(a, 0, 2, x, y2, NULL));
            TI_REQUIRE(run_conv_model(a, 1, 1, x, yp, &pa));
            TI_REQUIRE(run_conv_model(b, 0, 1, x, yp + 0, &fb)); /* output 0 is y again */
            TI_CHECK_EQ_INT(fa.num_fused - fb.num_fused, want_gate);
            TI_CHECK_EQ_INT(fb.num_nodes - fa.num_nodes, want_gate);
            TI_CHECK_EQ_INT(pa.num_fused, 0);
            se_ref(x, m, ref);
            double worst_ref = 0, worst_plain = 0;
            TI_REQUIRE(run_conv_model(a, 1, 1, x, yp, NULL));
            for (int i = 0; i < m * SH * SW; i++) {
                worst_ref = fmax(worst_ref, fabs(y1[i] - ref[i]) / (1.0 + fabs(ref[i])));
                worst_plain = fmax(worst_plain, fabs(y1[i] - yp[i]) / (1.0 + fabs(yp[i])));
            }
            if (worst_ref >= 1e-5 || worst_plain >= 1e-5)
                printf("  m %d, order %d: rel. error %.3g against double, %.3g unfused\n", m,
                       order, worst_ref, worst_plain);
            TI_CHECK(worst_ref < 1e-5);
            TI_CHECK(worst_plain < 1e-5);
            TI_CHECK(memcmp(y1, y2, sizeof(float) * (size_t)(m * SH * SW)) == 0);
            ti_model_free(a);
            ti_model_free(b);
        }
    }
}

/* A Conv's attributes decoded once at planning (ti__conv_decode: the weight a constant)
 * give the bits that reading them by name at each run gives (the same Conv with its weight
 * a graph input), for each auto_pad mode, strides, dilations and groups; the plan's node
 * holds them. */
static unsigned char *attr_conv_model(int const_w, int c, int group, int k, const char *auto_pad,
                                      const int64_t *pads, const int64_t *strides,
                                      const int64_t *dils, const float *w, size_t *size) {
    ob_model mb;
    ob_init(&mb, 13);
    int64_t xd[4] = {1, c, 9, 11}, wd[4] = {6, c / group, k, k};
    ob_input(&mb, "x", OB_FLOAT, 4, xd);
    if (const_w) ob_init_f32(&mb, "w", 4, wd, w);
    else ob_input(&mb, "w", OB_FLOAT, 4, wd);
    ob_buf a = {0, 0, 0};
    if (auto_pad != NULL) ob_attr_string(&a, "auto_pad", auto_pad);
    if (pads != NULL) ob_attr_ints(&a, "pads", 4, pads);
    ob_attr_ints(&a, "strides", 2, strides);
    ob_attr_ints(&a, "dilations", 2, dils);
    ob_attr_int(&a, "group", group);
    int64_t ks[2] = {k, k};
    ob_attr_ints(&a, "kernel_shape", 2, ks);
    ob_node_attrs(&mb, "Conv", "conv", "x,w", "y", &a);
    ob_output(&mb, "y", OB_FLOAT, -1, NULL); /* no shape given: the attributes give it */
    return ob_finish(&mb, size);
}

TI_TEST(conv_attributes_decoded_at_planning) {
    static const struct {
        const char *auto_pad;
        int64_t pads[4], s[2], d[2];
        int group, k, pads_given;
    } cases[] = {
        {NULL, {1, 0, 1, 2}, {2, 2}, {1, 1}, 1, 3, 1},
        {"SAME_UPPER", {0}, {2, 2}, {1, 1}, 1, 3, 0},
        {"SAME_LOWER", {0}, {2, 1}, {2, 2}, 2, 3, 0},
        {"VALID", {0}, {1, 2}, {1, 1}, 1, 2, 0},
        {"NOTSET", {1, 1, 1, 1}, {1, 1}, {2, 1}, 2, 3, 1},
    };
    enum { C = 4 };
    float x[C * 9 * 11], w[6 * C * 3 * 3];
    unsigned seed = 7;
    for (size_t i = 0; i < sizeof x / sizeof x[0]; i++) x[i] = frand(&seed);
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) w[i] = frand(&seed);
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        ti_tensor *out[2] = {NULL, NULL};
        ti_session *ss[2] = {NULL, NULL};
        ti_model *ms[2] = {NULL, NULL};
        for (int cw = 0; cw < 2; cw++) {
            size_t n;
            unsigned char *bytes = attr_conv_model(
                cw, C, cases[ci].group, cases[ci].k, cases[ci].auto_pad,
                cases[ci].pads_given ? cases[ci].pads : NULL, cases[ci].s, cases[ci].d, w, &n);
            ti_error err;
            ms[cw] = ti_model_load_memory(bytes, n, NULL, &err);
            free(bytes);
            if (ms[cw] == NULL) printf("  case %zu: %s\n", ci, err.message);
            TI_REQUIRE(ms[cw] != NULL);
            ss[cw] = make_session(ms[cw], 0, 0, 1, TI_BACKEND_CPU);
            TI_REQUIRE(ss[cw] != NULL);
            memcpy(ti_session_input(ss[cw], 0)->data, x, sizeof x);
            if (!cw) { /* the weight fed at each run */
                ti_tensor *wt = ti_session_input(ss[cw], 1);
                TI_REQUIRE(wt->size_bytes == sizeof(float) * 6 * (C / cases[ci].group) *
                                                 cases[ci].k * cases[ci].k);
                memcpy(wt->data, w, wt->size_bytes);
            }
            TI_REQUIRE(ti_session_run(ss[cw], &err) == TI_OK);
            out[cw] = ti_session_output(ss[cw], 0);
#ifndef TI_TEST_SHARED_IMPL /* the plan's Conv: decoded where its weight is a constant */
            int decoded = 0;
            for (int i = 0; i < ss[cw]->n_nodes; i++)
                if (strcmp(ss[cw]->nodes[i].op, "Conv") == 0) decoded = ss[cw]->nodes[i].conv_nd;
            TI_CHECK_EQ_INT(decoded, cw ? 2 : 0);
#endif
        }
        TI_CHECK_EQ_INT(out[0]->rank, out[1]->rank);
        for (int i = 0; i < out[0]->rank; i++)
            TI_CHECK(out[0]->shape[i] == out[1]->shape[i]);
        TI_CHECK(out[0]->size_bytes == out[1]->size_bytes &&
                 memcmp(out[0]->data, out[1]->data, out[0]->size_bytes) == 0);
        for (int cw = 0; cw < 2; cw++) {
            ti_session_destroy(ss[cw]);
            ti_model_free(ms[cw]);
        }
    }
}

TI_TEST(run_does_not_allocate) {
    size_t n;
    ti_test_alloc ca;
    memset(&ca, 0, sizeof ca);
    unsigned char *bytes = conv_bn_relu_model(&n, "Sigmoid");
    ti_model *m = load_counted(bytes, n, &ca);
    TI_REQUIRE(m != NULL);
    for (int threads = 1; threads <= 2; threads++) {
        ti_session *s = run_counted(m, &ca, threads, 3, NULL);
        TI_REQUIRE(s != NULL);
        ti_session_destroy(s);
    }
    ti_model_free(m);
    TI_CHECK(ti_test_alloc_balanced(&ca));
}

/* MatMul and Gemm large enough for the GEMM's workspace path (its session scratch): x [300,
 * 1100] times w [1100, 200], and the Gemm with w given transposed plus a bias row, at 1 and
 * 2 threads, against double sums, and no allocation while running. */
TI_TEST(large_matmul_and_gemm_use_the_scratch) {
    enum { M = 300, K = 1100, N = 200 };
    float *x = (float *)malloc(sizeof(float) * M * K), *w = (float *)malloc(sizeof(float) * K * N);
    float *wt = (float *)malloc(sizeof(float) * K * N), c[N];
    TI_REQUIRE(x != NULL && w != NULL && wt != NULL);
    unsigned seed = 5;
    for (int i = 0; i < M * K; i++) x[i] = frand(&seed);
    for (int i = 0; i < K * N; i++) w[i] = frand(&seed);
    for (int p = 0; p < K; p++)
        for (int q = 0; q < N; q++) wt[q * K + p] = w[p * N + q];
    for (int q = 0; q < N; q++) c[q] = frand(&seed);
    ob_model mb;
    ob_init(&mb, 13);
    int64_t xd[2] = {M, K}, wd[2] = {K, N}, wtd[2] = {N, K}, cd[1] = {N}, yd[2] = {M, N};
    ob_input(&mb, "x", OB_FLOAT, 2, xd);
    ob_init_f32(&mb, "w", 2, wd, w);
    ob_init_f32(&mb, "wt", 2, wtd, wt);
    ob_init_f32(&mb, "c", 1, cd, c);
    ob_node(&mb, "MatMul", "mm", "x,w", "y1");
    ob_buf at = {0, 0, 0};
    ob_attr_int(&at, "transB", 1);
    ob_node_attrs(&mb, "Gemm", "gemm", "x,wt,c", "y2", &at);
    ob_output(&mb, "y1", OB_FLOAT, 2, yd);
    ob_output(&mb, "y2", OB_FLOAT, 2, yd);
    size_t n;
    unsigned char *bytes = ob_finish(&mb, &n);
    ti_test_alloc ca;
    memset(&ca, 0, sizeof ca);
    ti_model *m = load_counted(bytes, n, &ca);
    TI_REQUIRE(m != NULL);
    double *ref = (double *)malloc(sizeof(double) * M * N);
    TI_REQUIRE(ref != NULL);
    for (int i = 0; i < M; i++)
        for (int q = 0; q < N; q++) {
            double acc = 0;
            for (int p = 0; p < K; p++) acc += (double)x[i * K + p] * w[p * N + q];
            ref[i * N + q] = acc;
        }
    for (int threads = 1; threads <= 2; threads++) {
        ti_session *s = run_counted(m, &ca, threads, 1, x);
        TI_REQUIRE(s != NULL);
        const float *y1 = (const float *)ti_session_output(s, 0)->data;
        const float *y2 = (const float *)ti_session_output(s, 1)->data;
        double worst1 = 0, worst2 = 0; /* sums of 1100 products of values in [-1, 1] */
        for (int i = 0; i < M * N; i++) {
            worst1 = fmax(worst1, fabs(y1[i] - ref[i]));
            worst2 = fmax(worst2, fabs(y2[i] - (ref[i] + c[i % N])));
        }
        if (worst1 >= 1e-4 || worst2 >= 1e-4)
            printf("  %d threads: MatMul off by %g, Gemm by %g\n", threads, worst1, worst2);
        TI_CHECK(worst1 < 1e-4);
        TI_CHECK(worst2 < 1e-4);
        ti_session_destroy(s);
    }
    ti_model_free(m);
    TI_CHECK(ti_test_alloc_balanced(&ca));
    free(ref);
    free(x);
    free(w);
    free(wt);
}

TI_TEST(arena_reuses_memory) {
    /* ten Negs in a row on 1000 floats: the input keeps its buffer, the other ten take
     * turns in two more */
    ob_model mb;
    ob_init(&mb, 13);
    int64_t d[2] = {1, 1000};
    ob_input(&mb, "t0", OB_FLOAT, 2, d);
    char in[16], out[16];
    for (int i = 0; i < 10; i++) {
        snprintf(in, sizeof in, "t%d", i);
        snprintf(out, sizeof out, "t%d", i + 1);
        ob_node(&mb, "Neg", out, in, out);
    }
    ob_output(&mb, "t10", OB_FLOAT, 2, d);
    ti_error err;
    ti_model *m = load_built(&mb);
    TI_REQUIRE(m != NULL);
    ti_session *s = ti_session_create(m, NULL, &err);
    TI_REQUIRE(s != NULL);
    ti_session_info info;
    ti_session_get_info(s, &info);
    TI_CHECK(info.arena_bytes >= 3 * 4000);
    TI_CHECK(info.arena_bytes <= 3 * 4032); /* 11 tensors of 4000 bytes in three slots */
    float *x = (float *)ti_session_input(s, 0)->data;
    for (int i = 0; i < 1000; i++) x[i] = (float)(i - 500);
    TI_REQUIRE(ti_session_run(s, &err) == TI_OK);
    const float *y = (const float *)ti_session_output(s, 0)->data;
    /* an even number of negations */
    TI_CHECK_NEAR(y[0], -500.0f, 0);
    TI_CHECK_NEAR(y[999], 499.0f, 0);
    /* the input survives the run: a second run without writing it gives the same */
    TI_CHECK_NEAR(x[0], -500.0f, 0);
    TI_CHECK_NEAR(x[999], 499.0f, 0);
    TI_REQUIRE(ti_session_run(s, &err) == TI_OK);
    TI_CHECK_NEAR(y[0], -500.0f, 0);
    TI_CHECK_NEAR(y[999], 499.0f, 0);
    ti_session_destroy(s);
    ti_model_free(m);
}

#ifndef TI_TEST_SHARED_IMPL /* the plan's internals: only with the implementation here */
/* The value named name in s's plan, or -1. */
static int value_named(const ti_session *s, const char *name) {
    for (int v = 0; v < s->n_values; v++)
        if (s->t[v].name != NULL && strcmp(s->t[v].name, name) == 0) return v;
    return -1;
}
#endif

#if !defined(TI_TEST_SHARED_IMPL) && defined(TI__HUGE)
/* The VmFlags line of the mapping in /proc/self/smaps that holds p, into out; 0 when there is
 * none to read. */
static int vm_flags_of(const void *p, char *out, size_t cap) {
    FILE *f = fopen("/proc/self/smaps", "r");
    if (f == NULL) return 0;
    char line[512];
    int in = 0, found = 0;
    while (!found && fgets(line, sizeof line, f) != NULL) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
        else if (in && strncmp(line, "VmFlags:", 8) == 0)
            found = snprintf(out, cap, "%s", line) > 0;
    }
    fclose(f);
    return found;
}

#if defined(__GLIBC__) && defined(__GNUC__)
/* Blocks of 1 MiB and more in mappings of their own, unmapped when freed, from the start:
 * glibc otherwise raises its mmap threshold as blocks are freed, and later blocks come from
 * the heap's free chunks, whose pages keep the huge-page advice an earlier test's block had
 * (slow_huge_pages_not_advised then read another block's advice: it failed or passed with
 * the sizes of the tests before it). */
__attribute__((constructor)) static void fresh_big_blocks(void) {
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
}
#endif

/* 1 where p lies in a mapping of its own, not in the brk heap, whose free chunks keep the
 * advice their pages were given for an earlier block */
static int own_mapping(const void *p) {
    FILE *f = fopen("/proc/self/maps", "r");
    if (f == NULL) return 0;
    char line[512];
    int own = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && (uintptr_t)p >= lo && (uintptr_t)p < hi) {
            own = strstr(line, "[heap]") == NULL;
            break;
        }
    }
    fclose(f);
    return own;
}

/* 1 where /proc/self/smaps shows huge-page advice: x86-64 (build.sh runs aarch64 under
 * qemu-user, whose smaps shows none) with transparent huge pages in the kernel (without
 * them the advice is refused, and there is no such folder). */
static int advice_visible(void) {
#ifndef __x86_64__
    return 0;
#else
    FILE *thp = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (thp == NULL) return 0;
    fclose(thp);
    return 1;
#endif
}

/* x [1024, 1024] -> Neg -> Relu: the Neg's 4 MiB output lives in the session's arena. */
static ti_model *neg_relu_model(void) {
    ob_model mb;
    ob_init(&mb, 13);
    int64_t d[2] = {1024, 1024};
    ob_input(&mb, "x", OB_FLOAT, 2, d);
    ob_node(&mb, "Neg", "neg", "x", "n");
    ob_node(&mb, "Relu", "relu", "n", "y");
    ob_output(&mb, "y", OB_FLOAT, 2, d);
    return load_built(&mb);
}

/* Blocks of 2 MiB and more from the default allocator start on a 2 MiB boundary and their
 * mapping is advised huge pages ("hg" among its VmFlags), as is a session's arena of that
 * size (x [1024, 1024] -> Neg -> Relu: the Neg's 4 MiB output lives there) and a pool's slab;
 * small blocks keep their 64-byte alignment. */
TI_TEST(large_blocks_advised_huge_pages) {
    size_t big = TI__HUGE * 2 + 12345, small = 1000;
    /* every huge page counts as fast to fault in (this VM's are not: see the test after) */
    double slow_ms = ti__huge_slow_ms;
    ti__huge_slow_ms = 1e9;
    ti__atomic_store(&ti__huge_slow, 0);
    unsigned char *p = (unsigned char *)ti__malloc(NULL, big);
    unsigned char *q = (unsigned char *)ti__malloc(NULL, small);
    TI_REQUIRE(p != NULL && q != NULL);
    TI_CHECK((uintptr_t)p % TI__HUGE == 0);
    TI_CHECK((uintptr_t)q % 64 == 0);
    memset(p, 1, big);
    ti_model *m = neg_relu_model();
    TI_REQUIRE(m != NULL);
    ti_error err;
    ti_session *s = ti_session_create(m, NULL, &err);
    TI_REQUIRE(s != NULL);
    TI_CHECK(s->arena_bytes >= TI__HUGE && (uintptr_t)s->arena % TI__HUGE == 0);
    float *x = (float *)ti_session_input(s, 0)->data;
    for (int i = 0; i < 1024 * 1024; i++) x[i] = (float)(i % 7) - 3.0f;
    TI_REQUIRE(ti_session_run(s, &err) == TI_OK);
    const float *y = (const float *)ti_session_output(s, 0)->data;
    int bad = 0;
    for (int i = 0; i < 1024 * 1024; i++) bad += y[i] != (x[i] < 0 ? -x[i] : 0.0f);
    TI_CHECK_EQ_INT(bad, 0);
    /* a pool: requests of 300 KB stay in blocks of their own up to 2 MiB of them, then share
     * a slab (64-byte aligned, zeroed, advised too); a pool with the user's allocator has none */
    ti__pool pool, upool;
    memset(&pool, 0, sizeof pool);
    memset(&upool, 0, sizeof upool);
    ti_test_alloc ca;
    memset(&ca, 0, sizeof ca);
    upool.al = ti_test_allocator(&ca);
    unsigned char *r[12];
    int zero = 1;
    for (int i = 0; i < 12; i++) {
        size_t n = 300000 + 16 * (size_t)i;
        r[i] = (unsigned char *)ti__pool_alloc(&pool, n);
        TI_REQUIRE(r[i] != NULL && ti__pool_alloc(&upool, n) != NULL);
        for (size_t k = 0; k < n; k += 4096) zero &= r[i][k] == 0 && r[i][n - 1] == 0;
        memset(r[i], 0xab, n);
    }
    TI_CHECK(zero);
    TI_CHECK(pool.slabs != NULL && upool.slabs == NULL);
    TI_CHECK((uintptr_t)r[11] % 64 == 0 && (uintptr_t)r[10] % 64 == 0);
    TI_CHECK(r[11] > r[10] && r[11] - r[10] < (ptrdiff_t)(300000 + 16 * 10 + 64));
    char flags[256], aflags[256], sflags[256];
    int seen = advice_visible() && vm_flags_of(p, flags, sizeof flags) &&
               vm_flags_of(s->arena, aflags, sizeof aflags) &&
               vm_flags_of(r[11], sflags, sizeof sflags);
    if (seen) {
        TI_CHECK_STR_CONTAINS(flags, " hg");
        TI_CHECK_STR_CONTAINS(aflags, " hg");
        TI_CHECK_STR_CONTAINS(sflags, " hg");
    }
    /* the slab's later huge pages are advised as requests reach them, its tail is not */
    for (int i = 0; i < 20; i++) TI_REQUIRE(ti__pool_alloc(&pool, 300000) != NULL);
    unsigned char *slab = (unsigned char *)pool.slabs;
    char s1[256], s12[256];
    if (seen && vm_flags_of(slab + TI__HUGE, s1, sizeof s1) &&
        vm_flags_of(slab + 12 * TI__HUGE, s12, sizeof s12)) {
        TI_CHECK_STR_CONTAINS(s1, " hg"); /* about 7.5 MB of the 32 MiB used */
        TI_CHECK(strstr(s12, " hg") == NULL);
    }
    ti__pool_release(&pool);
    ti__pool_release(&upool);
    TI_CHECK(ti_test_alloc_balanced(&ca));
    ti__huge_slow_ms = slow_ms;
    ti_session_destroy(s);
    ti_model_free(m);
    ti__free(NULL, p, big);
    ti__free(NULL, q, small);
    if (!seen)
        TI_SKIP("no VmFlags to read, no THP in the kernel, or aarch64: the advice is not checked");
}

/* Where a huge page was slow to fault in (here: any, the threshold below zero), the block
 * keeps the advice on its first huge page only, the one timed, and later blocks of the
 * process get none; the blocks still work as memory. Once written, a block's whole huge
 * pages (and a pool's used ones, not a slab's untouched tail) are advised for khugepaged. */
TI_TEST(slow_huge_pages_not_advised) {
    double slow_ms = ti__huge_slow_ms;
    ti__huge_slow_ms = -1.0;
    ti__atomic_store(&ti__huge_slow, 0);
    size_t big = TI__HUGE * 3;
    unsigned char *p = (unsigned char *)ti__malloc(NULL, big);
    TI_REQUIRE(p != NULL);
    TI_CHECK(ti__atomic_load(&ti__huge_slow) == 1);
    unsigned char *q = (unsigned char *)ti__malloc(NULL, big);
    TI_REQUIRE(q != NULL);
    TI_CHECK((uintptr_t)p % TI__HUGE == 0 && (uintptr_t)q % TI__HUGE == 0);
    memset(p, 3, big);
    memset(q, 4, big);
    TI_CHECK(p[big - 1] == 3 && q[0] == 4);
    char first[256], rest[256], later[256];
    int seen = advice_visible() && vm_flags_of(p, first, sizeof first) &&
               vm_flags_of(p + TI__HUGE, rest, sizeof rest) &&
               vm_flags_of(q + TI__HUGE, later, sizeof later);
    if (seen) {
        TI_CHECK_STR_CONTAINS(first, " hg");
        if (own_mapping(p)) TI_CHECK(strstr(rest, " hg") == NULL);
        if (own_mapping(q)) TI_CHECK(strstr(later, " hg") == NULL);
    }
    /* written: advised after the fact, whole huge pages only */
    ti__huge_advise_filled(NULL, q + 100, big - 100);
    char q0[256], q1[256];
    if (seen && vm_flags_of(q, q0, sizeof q0) && vm_flags_of(q + TI__HUGE, q1, sizeof q1) &&
        own_mapping(q)) {
        TI_CHECK(strstr(q0, " hg") == NULL); /* [q + 100, q + 2 MiB) is no whole page */
        TI_CHECK_STR_CONTAINS(q1, " hg");
    }
    /* a pool's slab: its used huge pages, not its tail */
    ti__pool pool;
    memset(&pool, 0, sizeof pool);
    unsigned char *r = NULL;
    for (int i = 0; i < 30; i++) TI_REQUIRE((r = (unsigned char *)ti__pool_alloc(&pool, 300000)) != NULL);
    TI_REQUIRE(pool.slabs != NULL);
    ti__pool_advise_filled(&pool);
    unsigned char *slab = (unsigned char *)pool.slabs;
    char s0[256], s1[256];
    if (seen && vm_flags_of(slab + TI__HUGE, s0, sizeof s0) &&
        vm_flags_of(slab + 12 * TI__HUGE, s1, sizeof s1)) {
        TI_CHECK_STR_CONTAINS(s0, " hg");
        TI_CHECK(strstr(s1, " hg") == NULL); /* 30 x 300 KB of a 32 MiB slab used */
    }
    ti__pool_release(&pool);
    /* a session's arena (the Neg's 4 MiB output), advised once planned */
    ti_model *m = neg_relu_model();
    TI_REQUIRE(m != NULL);
    ti_error err;
    ti_session *ss = ti_session_create(m, NULL, &err);
    TI_REQUIRE(ss != NULL);
    TI_CHECK(ss->arena_bytes >= TI__HUGE && (uintptr_t)ss->arena % TI__HUGE == 0);
    char af[256];
    if (seen && vm_flags_of(ss->arena, af, sizeof af)) TI_CHECK_STR_CONTAINS(af, " hg");
    ti_session_destroy(ss);
    ti_model_free(m);
    ti__free(NULL, p, big);
    ti__free(NULL, q, big);
    ti__huge_slow_ms = slow_ms;
    ti__atomic_store(&ti__huge_slow, 0);
    if (!seen)
        TI_SKIP("no VmFlags to read, no THP in the kernel, or aarch64: the advice is not checked");
}
#endif

/* neg = Neg(x), abs = Abs(x), cat = Concat(neg, abs) on axis (nodes named as their outputs). */
static void neg_abs_concat(ob_model *mb, const char *x, const char *neg, const char *abs,
                           const char *cat, int64_t axis) {
    char ins[64];
    ob_buf a;
    memset(&a, 0, sizeof a);
    snprintf(ins, sizeof ins, "%s,%s", neg, abs);
    ob_node(mb, "Neg", neg, x, neg);
    ob_node(mb, "Abs", abs, x, abs);
    ob_attr_int(&a, "axis", axis);
    ob_node_attrs(mb, "Concat", cat, ins, cat, &a);
}

TI_TEST(concat_inputs_written_in_place) {
    /* a = Neg(x), b = Abs(x) into c = Concat(a, b) on axis 1 of [1, 16, 8] (blocks of 512
     * bytes): a and b are placed inside c (no copy); a is read again after the Concat
     * (Mul), and by a second Concat with the graph input x, which copies (x is the user's,
     * a already a view). Concats that must copy: blocks of 60 bytes (not 64-byte aligned)
     * and axis 2 of [1, 2, 4] (two blocks per input). */
    ob_model mb;
    ob_init(&mb, 13);
    int64_t d[3] = {1, 16, 8}, dc[3] = {1, 32, 8}, d2[3] = {1, 3, 5}, dc2[3] = {1, 6, 5};
    int64_t d3[3] = {1, 2, 4}, dc3[3] = {1, 2, 8};
    ob_input(&mb, "x", OB_FLOAT, 3, d);
    ob_input(&mb, "p", OB_FLOAT, 3, d2);
    ob_input(&mb, "q", OB_FLOAT, 3, d3);
    neg_abs_concat(&mb, "x", "a", "b", "c", 1);
    ob_node(&mb, "Relu", "relu", "c", "y");
    ob_node(&mb, "Mul", "mul", "a,a", "y2");
    ob_buf ax; /* ob_node_attrs takes (frees) the attributes */
    memset(&ax, 0, sizeof ax);
    ob_attr_int(&ax, "axis", 1);
    ob_node_attrs(&mb, "Concat", "cat_x", "x,a", "y3", &ax);
    neg_abs_concat(&mb, "p", "pn", "pa", "cp", 1);
    ob_node(&mb, "Neg", "y4", "cp", "y4");
    neg_abs_concat(&mb, "q", "qn", "qa", "cq", -1);
    ob_node(&mb, "Neg", "y5", "cq", "y5");
    ob_output(&mb, "y", OB_FLOAT, 3, dc);
    ob_output(&mb, "y2", OB_FLOAT, 3, d);
    ob_output(&mb, "y3", OB_FLOAT, 3, dc);
    ob_output(&mb, "y4", OB_FLOAT, 3, dc2);
    ob_output(&mb, "y5", OB_FLOAT, 3, dc3);
    ti_error err;
    ti_model *m = load_built(&mb);
    TI_REQUIRE(m != NULL);
    for (int threads = 1; threads <= 2; threads++) {
        ti_session_desc desc;
        memset(&desc, 0, sizeof desc);
        desc.num_threads = threads;
        desc.backend = TI_BACKEND_CPU;
        ti_session *s = ti_session_create(m, &desc, &err);
        TI_REQUIRE(s != NULL);
#ifndef TI_TEST_SHARED_IMPL
        int va = value_named(s, "a"), vb = value_named(s, "b"), vc = value_named(s, "c");
        TI_REQUIRE(va >= 0 && vb >= 0 && vc >= 0);
        TI_CHECK(s->t[va].data == s->t[vc].data);
        TI_CHECK((char *)s->t[vb].data == (char *)s->t[vc].data + 512);
        TI_CHECK_EQ_INT(s->vi[value_named(s, "x")].view_of, 0);
        TI_CHECK_EQ_INT(s->vi[value_named(s, "pn")].view_of, 0);
        TI_CHECK_EQ_INT(s->vi[value_named(s, "qa")].view_of, 0);
#endif
        for (int run = 0; run < 2; run++) {
            float *x = (float *)ti_session_input(s, 0)->data;
            float *pp = (float *)ti_session_input(s, 1)->data;
            float *qq = (float *)ti_session_input(s, 2)->data;
            for (int i = 0; i < 128; i++) x[i] = (float)(i % 13) - 6.0f + (float)run;
            for (int i = 0; i < 15; i++) pp[i] = (float)i - 7.5f;
            for (int i = 0; i < 8; i++) qq[i] = (float)i - 3.5f;
            TI_REQUIRE(ti_session_run(s, &err) == TI_OK);
            const float *y = (const float *)ti_session_output(s, 0)->data;
            const float *y2 = (const float *)ti_session_output(s, 1)->data;
            const float *y3 = (const float *)ti_session_output(s, 2)->data;
            const float *y4 = (const float *)ti_session_output(s, 3)->data;
            const float *y5 = (const float *)ti_session_output(s, 4)->data;
            int bad = 0;
            for (int i = 0; i < 128; i++) {
                float a = -x[i], b = fabsf(x[i]);
                bad += y[i] != (a > 0 ? a : 0.0f) || y[128 + i] != b || y2[i] != a * a;
                bad += y3[i] != x[i] || y3[128 + i] != a;
            }
            for (int i = 0; i < 15; i++) bad += y4[i] != pp[i] || y4[15 + i] != -fabsf(pp[i]);
            for (int r = 0; r < 2; r++)
                for (int i = 0; i < 4; i++) {
                    float v = qq[r * 4 + i];
                    bad += y5[r * 8 + i] != v || y5[r * 8 + 4 + i] != -fabsf(v);
                }
            TI_CHECK_EQ_INT(bad, 0);
        }
        ti_session_destroy(s);
    }
    ti_model_free(m);
}

TI_TEST(symbolic_dims_bind_and_rebind) {
    ob_model mb;
    ob_init(&mb, 13);
    int64_t d[2] = {-1, 4};
    ob_input(&mb, "x", OB_FLOAT, 2, d);
    ob_node(&mb, "Relu", "r", "x", "y");
    ob_output(&mb, "y", OB_FLOAT, 2, d);
    ti_error err;
    ti_model *m = load_built(&mb);
    TI_REQUIRE(m != NULL);
    ti_value_info vi;
    TI_CHECK(ti_model_input_info(m, 0, &vi) == TI_OK);
    TI_CHECK_EQ_INT(vi.shape[0], -1);
    TI_CHECK(vi.dim_names[0] != NULL && strcmp(vi.dim_names[0], "N0") == 0);
    ti_dim_binding b = {"N0", 3};
    ti_session_desc sd;
    memset(&sd, 0, sizeof sd);
    sd.dim_bindings = &b;
    sd.num_dim_bindings = 1;
    ti_session *s = ti_session_create(m, &sd, &err);
    TI_REQUIRE(s != NULL);
    TI_CHECK_EQ_INT(ti_session_input(s, 0)->shape[0], 3);
    TI_CHECK_EQ_INT(ti_session_output(s, 0)->shape[0], 3);
    int64_t nd[2] = {5, 4};
    TI_CHECK(ti_session_set_input_shape(s, 0, 2, nd, &err) == TI_OK);
    ti_tensor *in = ti_session_input(s, 0);
    TI_CHECK_EQ_INT(in->size_bytes, 5 * 4 * 4);
    for (int i = 0; i < 20; i++) ((float *)in->data)[i] = (float)(i % 3) - 1.0f;
    TI_CHECK(ti_session_run(s, &err) == TI_OK);
    TI_CHECK_EQ_INT(ti_session_output(s, 0)->shape[0], 5);
    TI_CHECK_NEAR(((float *)ti_session_output(s, 0)->data)[19], 0.0f, 0);
    /* the model fixes dim 1 to 4 */
    int64_t bad[2] = {5, 7};
    TI_CHECK(ti_session_set_input_shape(s, 0, 2, bad, &err) == TI_ERR_INVALID_ARGUMENT);
    TI_CHECK_STR_CONTAINS(err.message, "dim 1");
    ti_session_destroy(s);
    ti_model_free(m);
}

TI_TEST(value_dependent_shapes_replan_at_run) {
    /* Reshape whose target shape is a graph input: known only at run time */
    ob_model mb;
    ob_init(&mb, 13);
    int64_t xd[2] = {2, 6}, sd1[1] = {2}, yd[2] = {-1, -1};
    ob_input(&mb, "x", OB_FLOAT, 2, xd);
    ob_input(&mb, "shape", OB_INT64, 1, sd1);
    ob_node(&mb, "Reshape", "reshape_1", "x,shape", "r");
    ob_node(&mb, "Relu", "relu_1", "r", "y");
    ob_output(&mb, "y", OB_FLOAT, 2, yd);
    ti_error err;
    ti_model *m = load_built(&mb);
    TI_REQUIRE(m != NULL);
    ti_session *s = ti_session_create(m, NULL, &err);
    if (s == NULL) printf("%s\n", err.message);
    TI_REQUIRE(s != NULL);
    ti_session_info info;
    ti_session_get_info(s, &info);
    TI_CHECK_EQ_INT(info.dynamic, 1);
    for (int i = 0; i < 12; i++) ((float *)ti_session_input(s, 0)->data)[i] = (float)i;
    int64_t *shape = (int64_t *)ti_session_input(s, 1)->data;
    shape[0] = 3;
    shape[1] = -1;
    TI_REQUIRE(ti_session_run(s, &err) == TI_OK);
    ti_tensor *y = ti_session_output(s, 0);
    TI_CHECK_EQ_INT(y->rank, 2);
    TI_CHECK_EQ_INT(y->shape[0], 3);
    TI_CHECK_EQ_INT(y->shape[1], 4);
    TI_CHECK_NEAR(((float *)y->data)[11], 11.0f, 0);
    shape[0] = 4;
    shape[1] = 3;
    TI_REQUIRE(ti_session_run(s, &err) == TI_OK);
    y = ti_session_output(s, 0);
    TI_CHECK_EQ_INT(y->shape[0], 4);
    shape[0] = 5; /* 5 x 3 != 12 elements */
    TI_CHECK(ti_session_run(s, &err) != TI_OK);
    TI_CHECK_STR_CONTAINS(err.message, "reshape_1");
    ti_session_destroy(s);
    ti_model_free(m);
}

TI_TEST(constant_folding_of_shape_chains) {
    /* y = Reshape(x, Concat(Shape(x)[0:1], [-1])): the shape is folded at creation */
    ob_model mb;
    ob_init(&mb, 13);
    int64_t xd[3] = {2, 3, 4}, yd[2] = {2, 12}, one[1] = {1}, zero = 0, minus1 = -1, onev = 1;
    ob_input(&mb, "x", OB_FLOAT, 3, xd);
    ob_init_i64(&mb, "starts", 1, one, &zero);
    ob_init_i64(&mb, "ends", 1, one, &onev);
    ob_init_i64(&mb, "minus1", 1, one, &minus1);
    ob_node(&mb, "Shape", "shape_1", "x", "s");
    ob_node(&mb, "Slice", "slice_1", "s,starts,ends", "s0");
    ob_buf a = {0, 0, 0};
    ob_attr_int(&a, "axis", 0);
    ob_node_attrs(&mb, "Concat", "concat_1", "s0,minus1", "target", &a);
    ob_node(&mb, "Reshape", "reshape_1", "x,target", "y");
    ob_output(&mb, "y", OB_FLOAT, 2, yd);
    ti_error err;
    ti_model *m = load_built(&mb);
    TI_REQUIRE(m != NULL);
    ti_session *s = ti_session_create(m, NULL, &err);
    if (s == NULL) printf("%s\n", err.message);
    TI_REQUIRE(s != NULL);
    ti_session_info info;
    ti_session_get_info(s, &info);
    TI_CHECK_EQ_INT(info.num_folded, 3);
    TI_CHECK_EQ_INT(info.num_nodes, 1);
    TI_CHECK_EQ_INT(info.dynamic, 0);
    TI_CHECK_EQ_INT(ti_session_output(s, 0)->shape[1], 12);
    ti_session_destroy(s);
    ti_model_free(m);
}

TI_TEST(errors_name_file_node_and_reason) {
    ob_model mb;
    ob_init(&mb, 13);
    int64_t d[2] = {2, 3}, d2[2] = {4, 5};
    ob_input(&mb, "a", OB_FLOAT, 2, d);
    ob_input(&mb, "b", OB_FLOAT, 2, d2);
    ob_node(&mb, "Add", "add_7", "a,b", "c");
    ob_node(&mb, "FancyOp", "fancy_3", "c", "y");
    ob_output(&mb, "y", OB_FLOAT, 2, d);
    size_t n;
    unsigned char *bytes = ob_finish(&mb, &n);
    ti_error err;
    ti_model_desc md;
    memset(&md, 0, sizeof md);
    md.name = "two_errors.onnx";
    ti_model *m = ti_model_load_memory(bytes, n, &md, &err);
    free(bytes);
    TI_REQUIRE(m != NULL);
    ti_session *s = ti_session_create(m, NULL, &err);
    TI_CHECK(s == NULL);
    TI_CHECK_EQ_INT(err.code, TI_ERR_UNSUPPORTED);
    TI_CHECK_STR_CONTAINS(err.message, "two_errors.onnx: node 'fancy_3' (FancyOp)");
    TI_CHECK_STR_CONTAINS(err.op, "FancyOp");
    TI_CHECK(ti_op_supported("", "Conv") == 1);
    TI_CHECK(ti_op_supported("", "FancyOp") == 0);
    ti_model_free(m);

    /* the same graph without the unknown op: broadcasting [2,3] with [4,5] fails */
    ob_init(&mb, 13);
    ob_input(&mb, "a", OB_FLOAT, 2, d);
    ob_input(&mb, "b", OB_FLOAT, 2, d2);
    ob_node(&mb, "Add", "add_7", "a,b", "c");
    ob_output(&mb, "c", OB_FLOAT, 2, d);
    bytes = ob_finish(&mb, &n);
    m = ti_model_load_memory(bytes, n, &md, &err);
    free(bytes);
    TI_REQUIRE(m != NULL);
    s = ti_session_create(m, NULL, &err);
    TI_CHECK(s == NULL);
    TI_CHECK_EQ_INT(err.code, TI_ERR_BAD_MODEL);
    TI_CHECK_STR_CONTAINS(err.message, "two_errors.onnx: node 'add_7' (Add): ");
    TI_CHECK_EQ_INT(err.node_index, 0);
    ti_model_free(m);

    TI_CHECK(ti_session_create(NULL, NULL, &err) == NULL);
    TI_CHECK_EQ_INT(err.code, TI_ERR_INVALID_ARGUMENT);
    TI_CHECK(ti_model_load_file("/nonexistent/model.onnx", NULL, &err) == NULL);
    TI_CHECK_EQ_INT(err.code, TI_ERR_IO);
    TI_CHECK_STR_CONTAINS(err.message, "/nonexistent/model.onnx");
    TI_CHECK(strcmp(ti_status_string((ti_status)99), "unknown status") == 0);
}

/* Window attributes far out of range (kernels, strides, dilations, pads near 2^62, which
 * overflowed the output-size arithmetic: undefined behaviour, caught by UBSan) fail at
 * session creation with the node's name and a reason, for Conv (weight constant: decoded at
 * planning; weight an input: read at the run), ConvTranspose, the pools and MaxUnpool. */
typedef struct win_case {
    const char *op, *attr, *want;
    int n;
    int64_t v[4];
} win_case;

static unsigned char *win_model(const win_case *c, int const_w, size_t *size) {
    static const float w[2 * 2 * 3 * 3] = {0};
    ob_model mb;
    ob_init(&mb, 13);
    int64_t xd[4] = {1, 2, 8, 8}, wd[4] = {2, 2, 3, 3}, idx[4] = {1, 2, 8, 8};
    ob_input(&mb, "x", OB_FLOAT, 4, xd);
    ob_buf a = {0, 0, 0};
    ob_attr_ints(&a, c->attr, c->n, c->v);
    const char *ins = "x";
    if (strncmp(c->op, "Conv", 4) == 0) {
        if (const_w) ob_init_f32(&mb, "w", 4, wd, w);
        else ob_input(&mb, "w", OB_FLOAT, 4, wd);
        ins = "x,w";
    } else {
        int64_t ks[2] = {3, 3};
        if (strcmp(c->attr, "kernel_shape") != 0) ob_attr_ints(&a, "kernel_shape", 2, ks);
        if (strcmp(c->op, "MaxUnpool") == 0) {
            ob_input(&mb, "i", OB_INT64, 4, idx);
            ins = "x,i";
        }
    }
    ob_node_attrs(&mb, c->op, "win_node", ins, "y", &a);
    ob_output(&mb, "y", OB_FLOAT, -1, NULL);
    return ob_finish(&mb, size);
}

TI_TEST(window_attributes_out_of_range_fail_cleanly) {
    const int64_t big = (int64_t)1 << 62;
    const win_case cases[] = {
        {"Conv", "dilations", "dilation", 2, {big, 1}},
        {"Conv", "strides", "stride", 2, {1, -big}},
        {"Conv", "pads", "pads", 4, {big, big, 0, 0}},
        {"Conv", "pads", NULL, 4, {1, 1, 1, 1}}, /* NULL: a control, the model runs */
        {"ConvTranspose", "strides", "stride", 2, {big, big}},
        {"ConvTranspose", "output_padding", "output_padding", 2, {big, 0}},
        {"ConvTranspose", "output_shape", "output size", 2, {big, 4}},
        {"MaxPool", "kernel_shape", "kernel", 2, {0, 3}},
        {"MaxPool", "dilations", "dilation", 2, {big, big}},
        {"AveragePool", "pads", "pads", 4, {0, big, 0, big}},
        {"AveragePool", "strides", NULL, 2, {2, 2}},
        {"ConvTranspose", "output_shape", NULL, 2, {17, 17}},
        {"MaxUnpool", "strides", NULL, 2, {2, 2}},
        {"MaxUnpool", "strides", "stride", 2, {big, big}},
        {"MaxUnpool", "pads", "pads", 4, {-1, 0, 0, 0}},
    };
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        const win_case *c = &cases[ci];
        for (int cw = 0; cw < (strncmp(c->op, "Conv", 4) == 0 ? 2 : 1); cw++) {
            size_t n;
            unsigned char *bytes = win_model(c, cw, &n);
            ti_model_desc md;
            memset(&md, 0, sizeof md);
            md.name = "window.onnx";
            ti_error err;
            ti_model *m = ti_model_load_memory(bytes, n, &md, &err);
            free(bytes);
            TI_REQUIRE(m != NULL);
            ti_session *s = ti_session_create(m, NULL, &err);
            if (c->want == NULL) { /* the same builder with sane values makes a model that runs */
                if (s == NULL) printf("  control %s %s: %s\n", c->op, c->attr, err.message);
                TI_CHECK(s != NULL);
                if (s != NULL) {
                    for (int i = 0; i < ti_session_num_inputs(s); i++)
                        memset(ti_session_input(s, i)->data, 0, ti_session_input(s, i)->size_bytes);
                    TI_CHECK(ti_session_run(s, &err) == TI_OK);
                }
            } else {
                if (s == NULL) printf("  %s %s: %s\n", c->op, c->attr, err.message);
                TI_CHECK(s == NULL);
                TI_CHECK_EQ_INT(err.code, TI_ERR_BAD_MODEL);
                TI_CHECK_STR_CONTAINS(err.message, "window.onnx: node 'win_node'");
                TI_CHECK_STR_CONTAINS(err.message, c->want);
            }
            ti_session_destroy(s);
            ti_model_free(m);
        }
    }
}

TI_TEST(allocation_failure_at_every_step) {
    size_t n;
    unsigned char *bytes = conv_bn_relu_model(&n, "Relu");
    int failures = 0, successes = 0;
    for (size_t k = 1; k < 400; k++) {
        ti_test_alloc ca;
        memset(&ca, 0, sizeof ca);
        ca.fail_at = k;
        ti_model_desc md;
        memset(&md, 0, sizeof md);
        md.allocator = ti_test_allocator(&ca);
        ti_session_desc sd;
        memset(&sd, 0, sizeof sd);
        sd.allocator = md.allocator;
        sd.num_threads = 1;
        ti_error err;
        ti_model *m = ti_model_load_memory(bytes, n, &md, &err);
        ti_session *s = m ? ti_session_create(m, &sd, &err) : NULL;
        if (s != NULL) {
            memset(ti_session_input(s, 0)->data, 0, ti_session_input(s, 0)->size_bytes);
            TI_CHECK(ti_session_run(s, &err) == TI_OK);
            successes++;
        } else {
            failures++;
            TI_CHECK_EQ_INT(err.code, TI_ERR_OUT_OF_MEMORY);
        }
        ti_session_destroy(s);
        ti_model_free(m);
        TI_CHECK(ti_test_alloc_balanced(&ca));
        if (ca.failed_allocs == 0) break; /* past the last allocation */
    }
    TI_CHECK(failures > 5);
    TI_CHECK(successes >= 1);
    free(bytes);
}

/* Reads a whole small text file (the trace) into a NUL-terminated buffer; NULL on error. */
static char *read_text(const char *path) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) return NULL;
    char *buf = (char *)calloc(1, 1 << 20);
    size_t n = buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
    fclose(f);
    if (buf) buf[n] = 0;
    return buf;
}

static int count_str(const char *hay, const char *needle) {
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle)) n++;
    return n;
}

/* desc.profile: every node of the last run has a time, the times add up to (most of) the
 * run's wall time, profiling does not allocate in the run, and the Chrome trace has one
 * event per node. Without profile: time_ms is -1 and no trace can be written. */
TI_TEST(profile_times_every_node) {
    ti_error err;
    ti_model *m = ti_model_load_file("tests/data/light_squeezenet.onnx", NULL, &err);
    TI_REQUIRE(m != NULL);
    ti_test_alloc ca;
    memset(&ca, 0, sizeof ca);
    ti_session_desc d;
    memset(&d, 0, sizeof d);
    d.backend = TI_BACKEND_CPU;
    d.num_threads = 1;
    d.allocator = ti_test_allocator(&ca);
    ti_session *plain = ti_session_create(m, &d, &err);
    d.profile = 1;
    ti_session *s = ti_session_create(m, &d, &err);
    TI_REQUIRE(s != NULL && plain != NULL);
    ti_node_info ni;
    TI_CHECK(ti_session_run(plain, &err) == TI_OK);
    TI_CHECK(ti_session_node_info(plain, 0, &ni) == TI_OK && ni.time_ms == -1.0);
    TI_CHECK(ti_session_write_trace(plain, "build/test/no.json", &err) == TI_ERR_INVALID_ARGUMENT);
    TI_CHECK_STR_CONTAINS(err.message, "desc.profile");
    TI_CHECK(ti_session_node_info(s, 0, &ni) == TI_OK && ni.time_ms == -1.0); /* not run yet */
    ti_tensor *x = ti_session_input(s, 0);
    for (size_t j = 0; j < x->size_bytes / 4; j++) ((float *)x->data)[j] = (float)(j % 7) * 0.1f;
    ca.forbid = 1;
    TI_CHECK(ti_session_run(s, &err) == TI_OK);
    TI_CHECK(ti_session_run(s, &err) == TI_OK);
    ca.forbid = 0;
    TI_CHECK_EQ_INT((int)ca.forbidden, 0);
    ti_session_info info;
    TI_CHECK(ti_session_get_info(s, &info) == TI_OK);
    int nn = ti_session_num_nodes(s), timed = 0;
    double sum = 0.0;
    for (int i = 0; i < nn; i++) {
        TI_CHECK(ti_session_node_info(s, i, &ni) == TI_OK);
        if (ni.time_ms >= 0.0) timed++;
        sum += ni.time_ms;
        TI_CHECK(ni.bytes_in == 0); /* the CPU backend copies nothing */
    }
    TI_CHECK_EQ_INT(timed, nn);
    TI_CHECK(info.run_ms > 0.0);
    TI_CHECK(sum <= info.run_ms + 1e-6);
    TI_CHECK(sum >= 0.5 * info.run_ms); /* only the loop between nodes is outside them */
    TI_CHECK(fabs(info.cpu_ms - sum) < 1e-6);
    printf("profile: %d nodes, %.3f ms of %.3f ms run (%.1f%%)\n", nn, sum, info.run_ms,
           100.0 * sum / info.run_ms);
    char path[80];
    /* in the working directory, which build.sh's build/test need not be (a plain compile) */
    snprintf(path, sizeof path, "ti-test-profile-%ld.json", (long)getpid());
    TI_CHECK(ti_session_write_trace(s, path, &err) == TI_OK);
    char *tr = read_text(path);
    remove(path);
    TI_REQUIRE(tr != NULL);
    TI_CHECK(strncmp(tr, "{\"displayTimeUnit\"", 18) == 0);
    TI_CHECK_EQ_INT(count_str(tr, "\"ph\":\"X\""), nn);
    TI_CHECK_EQ_INT(count_str(tr, "\"tid\":2,\"ts\""), 0); /* nothing on the GPU track */
    free(tr);
    TI_CHECK(ti_session_write_trace(s, "build/test/no-such-dir/x.json", &err) == TI_ERR_IO);
    TI_CHECK_STR_CONTAINS(err.message, "no-such-dir");
    ti_session_destroy(s);
    ti_session_destroy(plain);
    TI_CHECK(ti_test_alloc_balanced(&ca));
    ti_model_free(m);
}

/* Three inverted-residual blocks and a last 1x1 conv: x [1, c, h, w]; block i: Conv 1x1
 * (c -> re) + Relu, Conv 1x1 (re -> c), Add of the block's input (operands in either
 * order), the last Add with a Relu: y1, y2, y3; out = Conv 1x1 (c -> c) of y3. y1 is also
 * a graph output when y1_out. The same weights in every block. */
enum { RC_MAX = 64, RE_MAX = 432, RH_MAX = 16 };
static int g_re = 64; /* res_model's expansion (the projections' K) */
static float g_rw0[RE_MAX * RC_MAX], g_rb0[RE_MAX], g_rw1[RC_MAX * RE_MAX], g_rb1[RC_MAX];
static float g_rw2[RC_MAX * RC_MAX], g_rb2[RC_MAX];

static ti_model *res_model(int c, int h, int w, int order, int y1_out) {
    const int RE = g_re;
    unsigned seed = 13;
    for (int i = 0; i < RE * c; i++) g_rw0[i] = frand(&seed) * 0.3f;
    for (int i = 0; i < RE; i++) g_rb0[i] = frand(&seed);
    /* the projections' sums of RE products as large for every RE */
    for (int i = 0; i < c * RE; i++) g_rw1[i] = frand(&seed) * 0.3f * sqrtf(64.0f / (float)RE);
    for (int i = 0; i < c; i++) g_rb1[i] = frand(&seed);
    for (int i = 0; i < c * c; i++) g_rw2[i] = frand(&seed) * 0.3f;
    for (int i = 0; i < c; i++) g_rb2[i] = frand(&seed);
    ob_model mb;
    ob_init(&mb, 13);
    int64_t xd[4] = {1, c, h, w}, w0[4] = {RE, c, 1, 1}, b0[1] = {RE}, w1[4] = {c, RE, 1, 1};
    int64_t b1[1] = {c}, w2[4] = {c, c, 1, 1};
    ob_input(&mb, "x", OB_FLOAT, 4, xd);
    ob_init_f32(&mb, "w0", 4, w0, g_rw0);
    ob_init_f32(&mb, "b0", 1, b0, g_rb0);
    ob_init_f32(&mb, "w1", 4, w1, g_rw1);
    ob_init_f32(&mb, "b1", 1, b1, g_rb1);
    ob_init_f32(&mb, "w2", 4, w2, g_rw2);
    ob_init_f32(&mb, "b2", 1, b1, g_rb2);
    static const char *const in[3] = {"x", "y1", "y2"}, *const out[3] = {"y1", "y2", "s3"};
    for (int b = 0; b < 3; b++) {
        char e[16], er[16], pr[16], ins[32], ein[32], pin[32];
        snprintf(e, sizeof e, "e%d", b);
        snprintf(er, sizeof er, "er%d", b);
        snprintf(pr, sizeof pr, "p%d", b);
        snprintf(ein, sizeof ein, "%s,w0,b0", in[b]);
        snprintf(pin, sizeof pin, "%s,w1,b1", er);
        if ((order + b) % 2) snprintf(ins, sizeof ins, "%s,%s", pr, in[b]);
        else snprintf(ins, sizeof ins, "%s,%s", in[b], pr);
        ob_node(&mb, "Conv", e, ein, e);
        ob_node(&mb, "Relu", er, e, er);
        ob_node(&mb, "Conv", pr, pin, pr);
        ob_node(&mb, "Add", out[b], ins, out[b]);
    }
    ob_node(&mb, "Relu", "y3", "s3", "y3");
    ob_node(&mb, "Conv", "last", "y3,w2,b2", "out");
    ob_output(&mb, "out", OB_FLOAT, 4, xd);
    if (y1_out) ob_output(&mb, "y1", OB_FLOAT, 4, xd);
    return load_built(&mb);
}

/* The same in double. */
static void res_ref(const float *x, int c, int h, int w, double *out) {
    static double y[RC_MAX * RH_MAX * RH_MAX], e[RE_MAX * RH_MAX * RH_MAX];
    const int RE = g_re;
    int sp = h * w;
    for (int i = 0; i < c * sp; i++) y[i] = x[i];
    for (int b = 0; b < 3; b++) {
        for (int o = 0; o < RE; o++)
            for (int i = 0; i < sp; i++) {
                double s = g_rb0[o];
                for (int q = 0; q < c; q++) s += (double)g_rw0[o * c + q] * y[q * sp + i];
                e[o * sp + i] = s > 0 ? s : 0;
            }
        for (int o = 0; o < c; o++)
            for (int i = 0; i < sp; i++) {
                double s = g_rb1[o];
                for (int q = 0; q < RE; q++) s += (double)g_rw1[o * RE + q] * e[q * sp + i];
                s += y[o * sp + i];
                y[o * sp + i] = b == 2 && s < 0 ? 0 : s;
            }
    }
    for (int o = 0; o < c; o++)
        for (int i = 0; i < sp; i++) {
            double s = g_rb2[o];
            for (int q = 0; q < c; q++) s += (double)g_rw2[o * c + q] * y[q * sp + i];
            out[o * sp + i] = s;
        }
}

/* out (output 0) of res_model on x: 0 when a step fails. Reports where y1 and y2 lie. */
static int run_res_model(const ti_model *m, int no_fusion, int keep, int threads, const float *x,
                         float *out, ti_session_info *info, int *y2_on_y1, int *y3_on_y1,
                         int *ct_sums) {
    ti_session *s = make_session(m, no_fusion, keep, threads, TI_BACKEND_CPU);
    if (s == NULL) return 0;
    *y2_on_y1 = *y3_on_y1 = *ct_sums = -1;
#ifndef TI_TEST_SHARED_IMPL
    *ct_sums = 0; /* fused sums on the transposed GEMM's panels */
    for (int n = 0; n < s->n_nodes; n++)
        *ct_sums += s->nodes[n].n_inputs > 4 && s->nodes[n].packed_kind == TI__PACK_BPANEL;
    int v1 = value_named(s, "y1"), v2 = value_named(s, "y2"), v3 = value_named(s, "y3");
    if (v1 >= 0 && v2 >= 0 && v3 >= 0) {
        *y2_on_y1 = s->t[v2].data == s->t[v1].data;
        *y3_on_y1 = s->t[v3].data == s->t[v1].data;
    }
#endif
    return run_session(s, x, 2, out, info); /* twice: Y lies on R */
}

/* A residual Add fuses into the 1x1 conv before it (whose GEMM adds onto the summand):
 * three fewer nodes, with either operand order and a Relu after the Add; each block's
 * output on its input's memory where that input has no reader after it (not on the graph
 * input x, not when y1 is a graph output too, not with keep_intermediates, which copies the
 * summand instead: the same bits); near a double reference and the unfused graph, with map
 * sizes whose columns end in a vector, one lone column, and 9 columns, and 64 channels at
 * 7 x 7 (the transposed GEMM, which adds as it stores Y, where the ISA has the kernels),
 * there also with projections of 256 -> 64 channels (summed in 2 parts of K, one a thread,
 * ti__conv_ct_parts) and of 432 -> 64 (3 parts of 144: the third added to Y with the
 * residual already in it); the same bits on 1, 2 and 3 threads. */
TI_TEST(residual_add_fuses_into_1x1_conv) {
    enum { NMAX = RC_MAX * RH_MAX * RH_MAX };
    static float x[NMAX], y1[NMAX], y2[NMAX], yp[NMAX], yk[NMAX];
    static double ref[NMAX];
    /* 256 columns, 225 (16 * 14 + 1), 169 (16 * 10 + 9); 49 with 64 channels */
    static const int hs[6] = {16, 15, 13, 7, 7, 7}, cs[6] = {24, 24, 24, 64, 64, 64};
    static const int res[6] = {64, 64, 64, 64, 256, 432};
    unsigned seed = 9;
    for (int i = 0; i < NMAX; i++) x[i] = frand(&seed);
    for (int t = 0; t < 6; t++) {
        int h = hs[t], c = cs[t], n = c * h * h;
        g_re = res[t];
        for (int v = 0; v < 4; v++) {
            int order = v % 2, y1_out = v / 2, on2, on3, d2, d3, ct;
            ti_model *m = res_model(c, h, h, order, y1_out);
            TI_REQUIRE(m != NULL);
            ti_session_info fa, pa, ka;
            TI_REQUIRE(run_res_model(m, 0, 0, 1, x, y1, &fa, &on2, &on3, &ct));
#ifndef TI_TEST_SHARED_IMPL
            TI_CHECK_EQ_INT(on2, !y1_out);
            TI_CHECK_EQ_INT(on3, !y1_out);
            /* AVX2 (16-column slivers) runs 7 x 7 by the plain GEMM (ti__conv_ct_ok) */
            int nr = ti__sgemm_panel_nr();
            TI_CHECK_EQ_INT(ct, c == 64 && nr > 0 && nr != 16 ? 3 : 0);
#endif
            TI_REQUIRE(run_res_model(m, 0, 0, 2, x, y2, NULL, &d2, &d3, &ct));
            TI_CHECK(memcmp(y1, y2, sizeof(float) * (size_t)n) == 0);
            TI_REQUIRE(run_res_model(m, 0, 0, 3, x, y2, NULL, &d2, &d3, &ct));
            TI_REQUIRE(run_res_model(m, 0, 1, 1, x, yk, &ka, &d2, &d3, &ct));
#ifndef TI_TEST_SHARED_IMPL
            TI_CHECK_EQ_INT(d2, 0);
            TI_CHECK_EQ_INT(d3, 0);
#endif
            TI_REQUIRE(run_res_model(m, 1, 0, 1, x, yp, &pa, &d2, &d3, &ct));
            TI_CHECK_EQ_INT(pa.num_nodes, 14);
            TI_CHECK_EQ_INT(fa.num_nodes, 7); /* 3 Relus after convs, 3 Adds, the Relu */
            TI_CHECK_EQ_INT(ka.num_nodes, 7);
            res_ref(x, c, h, h, ref);
            double worst_ref = 0, worst_plain = 0;
            for (int i = 0; i < n; i++) {
                worst_ref = fmax(worst_ref, fabs(y1[i] - ref[i]) / (1.0 + fabs(ref[i])));
                worst_plain = fmax(worst_plain, fabs(y1[i] - yp[i]) / (1.0 + fabs(yp[i])));
            }
            if (worst_ref >= 1e-5 || worst_plain >= 1e-5)
                printf("  %d x %dx%d, order %d, y1 out %d: rel. error %.3g against double, "
                       "%.3g unfused\n", c, h, h, order, y1_out, worst_ref, worst_plain);
            TI_CHECK(worst_ref < 1e-5);
            TI_CHECK(worst_plain < 1e-5);
            TI_CHECK(memcmp(y1, y2, sizeof(float) * (size_t)n) == 0);
            TI_CHECK(memcmp(y1, yk, sizeof(float) * (size_t)n) == 0);
            ti_model_free(m);
        }
    }
    g_re = 64;
}

/* Two residual blocks as ResNet's: x [1, BC, BH, BH]; block 1: Conv 3x3 + Relu, Conv 3x3,
 * Add of x, Relu = y1; block 2: Conv 3x3 + Relu, Conv 3x3 / 2 (BC -> BC2) = d, the shortcut
 * Conv 1x1 / 2 of y1 = sc, Add(d, sc) (or Add(sc, d)), Relu = out. */
enum { BC = 16, BC2 = 24, BH = 18, BH2 = 9 };
static float g_bw1[BC * BC * 9], g_bw2[BC * BC * 9], g_bw3[BC * BC * 9], g_bw4[BC2 * BC * 9];
static float g_bws[BC2 * BC], g_bb[4][BC2], g_bbs[BC2];

/* y (M x oh x oh) = conv of x (C x h x h), k x k, stride st, pad (k - 1) / 2, bias b, in
 * double; relu when asked; plus add (M x oh x oh) when not NULL, before the relu. */
static void block_conv_ref(const double *x, int C, int h, const float *w, const float *b, int M,
                           int k, int st, const double *add, int relu, double *y) {
    int pad = (k - 1) / 2, oh = (h + 2 * pad - k) / st + 1;
    for (int o = 0; o < M; o++)
        for (int i = 0; i < oh; i++)
            for (int q = 0; q < oh; q++) {
                double acc = b[o];
                for (int c = 0; c < C; c++)
                    for (int ki = 0; ki < k; ki++)
                        for (int kj = 0; kj < k; kj++) {
                            int ii = i * st + ki - pad, jj = q * st + kj - pad;
                            if (ii < 0 || ii >= h || jj < 0 || jj >= h) continue;
                            acc += (double)w[((o * C + c) * k + ki) * k + kj] * x[(c * h + ii) * h + jj];
                        }
                if (add != NULL) acc += add[(o * oh + i) * oh + q];
                y[(o * oh + i) * oh + q] = relu && acc < 0 ? 0 : acc;
            }
}

static ti_model *block_model(int order) {
    unsigned seed = 17;
    float *ws[4] = {g_bw1, g_bw2, g_bw3, g_bw4};
    for (int t = 0; t < 4; t++)
        for (int i = 0; i < (t == 3 ? BC2 : BC) * BC * 9; i++) ws[t][i] = frand(&seed) * 0.25f;
    for (int t = 0; t < 4; t++)
        for (int i = 0; i < BC2; i++) g_bb[t][i] = frand(&seed);
    for (int i = 0; i < BC2 * BC; i++) g_bws[i] = frand(&seed) * 0.25f;
    for (int i = 0; i < BC2; i++) g_bbs[i] = frand(&seed);
    ob_model mb;
    ob_init(&mb, 13);
    int64_t xd[4] = {1, BC, BH, BH}, od[4] = {1, BC2, BH2, BH2}, w3[4] = {BC, BC, 3, 3};
    int64_t w4[4] = {BC2, BC, 3, 3}, wsd[4] = {BC2, BC, 1, 1}, b1[1] = {BC}, b2[1] = {BC2};
    ob_input(&mb, "x", OB_FLOAT, 4, xd);
    ob_init_f32(&mb, "w1", 4, w3, g_bw1);
    ob_init_f32(&mb, "w2", 4, w3, g_bw2);
    ob_init_f32(&mb, "w3", 4, w3, g_bw3);
    ob_init_f32(&mb, "w4", 4, w4, g_bw4);
    ob_init_f32(&mb, "ws", 4, wsd, g_bws);
    ob_init_f32(&mb, "b1", 1, b1, g_bb[0]);
    ob_init_f32(&mb, "b2", 1, b1, g_bb[1]);
    ob_init_f32(&mb, "b3", 1, b1, g_bb[2]);
    ob_init_f32(&mb, "b4", 1, b2, g_bb[3]);
    ob_init_f32(&mb, "bs", 1, b2, g_bbs);
    int64_t pads[4] = {1, 1, 1, 1}, s2[2] = {2, 2};
    ob_buf a = {0, 0, 0};
    ob_attr_ints(&a, "pads", 4, pads);
    ob_node_attrs(&mb, "Conv", "c1", "x,w1,b1", "c1", &a);
    ob_node(&mb, "Relu", "r1", "c1", "r1");
    ob_attr_ints(&a, "pads", 4, pads);
    ob_node_attrs(&mb, "Conv", "c2", "r1,w2,b2", "c2", &a);
    ob_node(&mb, "Add", "s1", order ? "x,c2" : "c2,x", "s1");
    ob_node(&mb, "Relu", "y1", "s1", "y1");
    ob_attr_ints(&a, "pads", 4, pads);
    ob_node_attrs(&mb, "Conv", "c3", "y1,w3,b3", "c3", &a);
    ob_node(&mb, "Relu", "r3", "c3", "r3");
    ob_attr_ints(&a, "pads", 4, pads);
    ob_attr_ints(&a, "strides", 2, s2);
    ob_node_attrs(&mb, "Conv", "c4", "r3,w4,b4", "c4", &a);
    ob_attr_ints(&a, "strides", 2, s2);
    ob_node_attrs(&mb, "Conv", "sc", "y1,ws,bs", "sc", &a);
    ob_node(&mb, "Add", "s2", order ? "sc,c4" : "c4,sc", "s2");
    ob_node(&mb, "Relu", "out", "s2", "out");
    ob_output(&mb, "out", OB_FLOAT, 4, od);
    return load_built(&mb);
}

/* out of block_model on x, and which paths the fused sums took (bit 0: Winograd, 1: others). */
static int run_block_model(const ti_model *m, int no_fusion, int threads, const float *x,
                           float *out, ti_session_info *info, int *paths) {
    ti_session *s = make_session(m, no_fusion, 0, threads, TI_BACKEND_CPU);
    if (s == NULL) return 0;
    *paths = -1;
#ifndef TI_TEST_SHARED_IMPL
    *paths = 0;
    for (int n = 0; n < s->n_nodes; n++) {
        const ti__node *nd = &s->nodes[n];
        if (nd->n_inputs <= 4) continue;
        *paths |= nd->packed_kind == TI__PACK_WINO43 ? 1 : 2;
    }
#endif
    return run_session(s, x, 2, out, info);
}

/* A Conv of a model file with a fourth and fifth input (what the fusion passes give a
 * plan's Conv as its gate and its residual sum) fails at session creation, naming the node
 * and the reason, instead of being run as a gate and a sum. */
TI_TEST(conv_with_five_inputs_in_a_file_fails) {
    static const float w[4 * 4] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    static const float b[4] = {0, 0, 0, 0};
    ob_model mb;
    ob_init(&mb, 13);
    int64_t xd[4] = {1, 4, 4, 4}, wd[4] = {4, 4, 1, 1}, bd[1] = {4};
    ob_input(&mb, "x", OB_FLOAT, 4, xd);
    ob_init_f32(&mb, "w", 4, wd, w);
    ob_init_f32(&mb, "b", 1, bd, b);
    ob_node(&mb, "Conv", "conv_5in", "x,w,b,x,x", "y");
    ob_output(&mb, "y", OB_FLOAT, 4, xd);
    ti_model *m = load_built(&mb);
    TI_REQUIRE(m != NULL);
    ti_error err;
    ti_session *s = ti_session_create(m, NULL, &err);
    TI_CHECK(s == NULL);
    TI_CHECK_EQ_INT(err.code, TI_ERR_BAD_MODEL);
    TI_CHECK_STR_CONTAINS(err.message, "node 'conv_5in' (Conv)");
    TI_CHECK_STR_CONTAINS(err.message, "Conv takes at most 3");
    if (s != NULL) ti_session_destroy(s);
    ti_model_free(m);
}

/* ResNet's sums fuse too: into the Winograd 3x3 conv (whose SIMD store adds the summand,
 * here the graph input, copied to Y first, then applies the Relu; 18 x 18 has groups of 4
 * tiles, other whole tiles and cut ones) and into an im2col conv (the 3x3 / 2 or the 1x1 / 2
 * shortcut, by the Add's operand order), each with the Relu after the Add; five nodes of
 * eleven; near a double reference and the unfused graph; the same bits on 1 and 2
 * threads; under the best ISA, AVX2 and the portable kernels (each ISA's own store). */
TI_TEST(residual_add_fuses_into_3x3_conv) {
    static float x[BC * BH * BH], y1[BC2 * BH2 * BH2], y2[BC2 * BH2 * BH2], yp[BC2 * BH2 * BH2];
    static double xd[BC * BH * BH], t1[BC * BH * BH], t2[BC * BH * BH], t3[BC * BH * BH];
    static double sc[BC2 * BH2 * BH2], ref[BC2 * BH2 * BH2];
    unsigned seed = 21;
    for (int i = 0; i < BC * BH * BH; i++) xd[i] = x[i] = frand(&seed);
    for (int v = 0; v < 6; v++) {
        int order = v % 2;
#ifndef TI_TEST_SHARED_IMPL
        static const int isas[3] = {-1, TI__ISA_AVX2, TI__ISA_SCALAR};
        if (isas[v / 2] >= 0 && ti__cpu_force_isa(isas[v / 2]) != isas[v / 2]) continue;
#else
        if (v >= 2) break;
#endif
        ti_model *m = block_model(order);
        TI_REQUIRE(m != NULL);
        ti_session_info fa, pa;
        int paths, dummy;
        TI_REQUIRE(run_block_model(m, 0, 1, x, y1, &fa, &paths));
        TI_REQUIRE(run_block_model(m, 0, 2, x, y2, NULL, &dummy));
        TI_REQUIRE(run_block_model(m, 1, 1, x, yp, &pa, &dummy));
        TI_CHECK_EQ_INT(pa.num_nodes, 11);
        TI_CHECK_EQ_INT(fa.num_nodes, 5);
#ifndef TI_TEST_SHARED_IMPL
        TI_CHECK_EQ_INT(paths, 3);
#endif
        block_conv_ref(xd, BC, BH, g_bw1, g_bb[0], BC, 3, 1, NULL, 1, t1);
        block_conv_ref(t1, BC, BH, g_bw2, g_bb[1], BC, 3, 1, xd, 1, t2);
        block_conv_ref(t2, BC, BH, g_bw3, g_bb[2], BC, 3, 1, NULL, 1, t3);
        block_conv_ref(t2, BC, BH, g_bws, g_bbs, BC2, 1, 2, NULL, 0, sc);
        block_conv_ref(t3, BC, BH, g_bw4, g_bb[3], BC2, 3, 2, sc, 1, ref);
        double worst_ref = 0, worst_plain = 0;
        for (int i = 0; i < BC2 * BH2 * BH2; i++) {
            worst_ref = fmax(worst_ref, fabs(y1[i] - ref[i]) / (1.0 + fabs(ref[i])));
            worst_plain = fmax(worst_plain, fabs(y1[i] - yp[i]) / (1.0 + fabs(yp[i])));
        }
        if (worst_ref >= 1e-5 || worst_plain >= 1e-5)
            printf("  case %d: rel. error %.3g against double, %.3g unfused\n", v, worst_ref,
                   worst_plain);
        TI_CHECK(worst_ref < 1e-5);
        TI_CHECK(worst_plain < 1e-5);
        TI_CHECK(memcmp(y1, y2, sizeof y1) == 0);
        ti_model_free(m);
    }
#ifndef TI_TEST_SHARED_IMPL
    ti__cpu_force_isa(-1);
#endif
}

/* A network's stem: Conv (3 -> m channels, k x k / cs, pad cp) with an activation, then
 * MaxPool (pk x pk / ps, pads pp, ceil_mode), on [n, 3, h, w]. */
typedef struct stem_case {
    int n, h, w, m, k, cs, cp, pk, ps, pp, ceil;
    const char *act; /* "Relu", "Sigmoid" or NULL */
} stem_case;
enum { STM_MAX = 64, STX_MAX = 2 * 3 * 64 * 80, STY_MAX = 2 * 64 * 40 * 40 };
static float g_sw[STM_MAX * 3 * 49], g_sb[STM_MAX];

static void stem_out(const stem_case *c, int *oh, int *ow, int *ph, int *pw) {
    *oh = (c->h + 2 * c->cp - c->k) / c->cs + 1;
    *ow = (c->w + 2 * c->cp - c->k) / c->cs + 1;
    int sh = *oh + 2 * c->pp - c->pk, sw = *ow + 2 * c->pp - c->pk;
    *ph = (c->ceil ? (sh + c->ps - 1) : sh) / c->ps + 1;
    *pw = (c->ceil ? (sw + c->ps - 1) : sw) / c->ps + 1;
    if (c->ceil && (*ph - 1) * c->ps >= *oh + c->pp) (*ph)--;
    if (c->ceil && (*pw - 1) * c->ps >= *ow + c->pp) (*pw)--;
}

/* variant 1: the conv's output is a graph output too; 2: the MaxPool has its Indices
 * output; neither fuses */
static ti_model *stem_model(const stem_case *c, int variant) {
    unsigned seed = 31;
    for (int i = 0; i < c->m * 3 * c->k * c->k; i++) g_sw[i] = frand(&seed) * 0.4f;
    for (int i = 0; i < c->m; i++) g_sb[i] = frand(&seed) * 0.2f;
    int oh, ow, ph, pw;
    stem_out(c, &oh, &ow, &ph, &pw);
    ob_model mb;
    ob_init(&mb, 13);
    int64_t xd[4] = {c->n, 3, c->h, c->w}, wd[4] = {c->m, 3, c->k, c->k}, bd[1] = {c->m};
    int64_t yd[4] = {c->n, c->m, ph, pw}, cd[4] = {c->n, c->m, oh, ow};
    ob_input(&mb, "x", OB_FLOAT, 4, xd);
    ob_init_f32(&mb, "w", 4, wd, g_sw);
    ob_init_f32(&mb, "b", 1, bd, g_sb);
    ob_buf a = {0, 0, 0};
    int64_t ks[2] = {c->k, c->k}, st[2] = {c->cs, c->cs}, pd[4] = {c->cp, c->cp, c->cp, c->cp};
    ob_attr_ints(&a, "kernel_shape", 2, ks);
    ob_attr_ints(&a, "strides", 2, st);
    ob_attr_ints(&a, "pads", 4, pd);
    ob_node_attrs(&mb, "Conv", "stem", "x,w,b", c->act ? "c" : "r", &a);
    if (c->act) ob_node(&mb, c->act, "act", "c", "r");
    int64_t pk[2] = {c->pk, c->pk}, ps[2] = {c->ps, c->ps}, pp[4] = {c->pp, c->pp, c->pp, c->pp};
    ob_attr_ints(&a, "kernel_shape", 2, pk);
    ob_attr_ints(&a, "strides", 2, ps);
    ob_attr_ints(&a, "pads", 4, pp);
    ob_attr_int(&a, "ceil_mode", c->ceil);
    ob_node_attrs(&mb, "MaxPool", "pool", "r", variant == 2 ? "y,idx" : "y", &a);
    ob_output(&mb, "y", OB_FLOAT, 4, yd);
    if (variant == 1) ob_output(&mb, "r", OB_FLOAT, 4, cd);
    return load_built(&mb);
}

/* The same in double. */
static void stem_ref(const stem_case *c, const float *x, double *y) {
    static double cv[STY_MAX * 4];
    int oh, ow, ph, pw;
    stem_out(c, &oh, &ow, &ph, &pw);
    for (int n = 0; n < c->n; n++)
        for (int m = 0; m < c->m; m++)
            for (int i = 0; i < oh; i++)
                for (int j = 0; j < ow; j++) {
                    double v = g_sb[m];
                    for (int ch = 0; ch < 3; ch++)
                        for (int ky = 0; ky < c->k; ky++)
                            for (int kx = 0; kx < c->k; kx++) {
                                int iy = i * c->cs - c->cp + ky, ix = j * c->cs - c->cp + kx;
                                if (iy < 0 || iy >= c->h || ix < 0 || ix >= c->w) continue;
                                v += (double)g_sw[((m * 3 + ch) * c->k + ky) * c->k + kx] *
                                     x[((n * 3 + ch) * c->h + iy) * c->w + ix];
                            }
                    if (c->act && strcmp(c->act, "Relu") == 0) v = v > 0 ? v : 0;
                    if (c->act && strcmp(c->act, "Sigmoid") == 0) v = 1.0 / (1.0 + exp(-v));
                    cv[((n * c->m + m) * oh + i) * ow + j] = v;
                }
    for (int n = 0; n < c->n; n++)
        for (int m = 0; m < c->m; m++)
            for (int i = 0; i < ph; i++)
                for (int j = 0; j < pw; j++) {
                    double best = -INFINITY;
                    for (int ky = 0; ky < c->pk; ky++)
                        for (int kx = 0; kx < c->pk; kx++) {
                            int r = i * c->ps - c->pp + ky, q = j * c->ps - c->pp + kx;
                            if (r < 0 || r >= oh || q < 0 || q >= ow) continue;
                            best = fmax(best, cv[((n * c->m + m) * oh + r) * ow + q]);
                        }
                    y[((n * c->m + m) * ph + i) * pw + j] = best;
                }
}

/* A MaxPool after a few-channel conv fuses into it (SqueezeNet's 3x3 / 2 stem and pool,
 * ResNet's 7x7 / 2 and padded 3x3 / 2, 2 x 2 windows with ceil_mode, stride 1 windows,
 * 5 x 5 / 3 ones; one image and two; 16 to 64 channels, with maps whose pooled rows take
 * several groups of the conv's row block): one node fewer where the ISA has the
 * few-channel kernel, the same bits as the unfused graph (the same conv rows, the same
 * maxima), the same bits on 1 and 2 threads, near a double reference; run with the
 * portable kernel where the plan was made with a SIMD one (an ISA forced after planning);
 * not fused when the conv's output is a graph output too, or the pool has Indices. */
TI_TEST(maxpool_fuses_into_few_channel_conv) {
    static const stem_case cases[] = {
        {1, 36, 37, 24, 3, 2, 0, 3, 2, 0, 0, "Relu"},
        {2, 60, 70, 64, 7, 2, 3, 3, 2, 1, 0, "Relu"},
        {1, 33, 35, 20, 3, 1, 1, 2, 2, 0, 1, "Sigmoid"},
        {1, 64, 80, 64, 3, 2, 1, 3, 1, 1, 0, NULL},
        {1, 40, 40, 16, 5, 2, 2, 5, 3, 2, 0, "Relu"},
    };
    static float x[STX_MAX], y1[STY_MAX], y2[STY_MAX], yp[STY_MAX];
    static double ref[STY_MAX];
    unsigned seed = 41;
    for (int i = 0; i < STX_MAX; i++) x[i] = frand(&seed);
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        const stem_case *c = &cases[ci];
        int oh, ow, ph, pw;
        stem_out(c, &oh, &ow, &ph, &pw);
        int ny = c->n * c->m * ph * pw;
        TI_REQUIRE(ny <= STY_MAX && c->n * 3 * c->h * c->w <= STX_MAX);
        ti_model *m = stem_model(c, 0); /* sets the weights */
        TI_REQUIRE(m != NULL);
        stem_ref(c, x, ref);
        for (int v = 0; v < 3; v++) {
#ifndef TI_TEST_SHARED_IMPL
            static const int isas[3] = {-1, TI__ISA_AVX2, -1};
            if (isas[v] >= 0 && ti__cpu_force_isa(isas[v]) != isas[v]) continue;
            int fewc = ti__dw_pick_isa()->fewc[c->cs == 2] != NULL;
#else
            if (v > 0) break;
            int fewc = -1;
#endif
            ti_session_info fa, pa;
            ti_session *s = make_session(m, 0, 0, 1, TI_BACKEND_CPU);
#ifndef TI_TEST_SHARED_IMPL
            if (v == 2) { /* planned with the SIMD kernel, run with the portable one */
                if (!fewc) break;
                ti__cpu_force_isa(TI__ISA_SCALAR);
            }
#endif
            ti_node_info ni;
            TI_REQUIRE(ti_session_node_info(s, 0, &ni) == TI_OK);
            if (fewc == 1 && v < 2) /* the plan names what the conv took in */
                TI_CHECK(strcmp(ni.fused, c->act == NULL ? "MaxPool"
                                                         : strcmp(c->act, "Relu") == 0
                                                               ? "Relu+MaxPool"
                                                               : "Sigmoid+MaxPool") == 0);
            TI_REQUIRE(run_session(s, x, 2, y1, &fa));
            TI_REQUIRE(run_session(make_session(m, 0, 0, 2, TI_BACKEND_CPU), x, 1, y2, NULL));
            TI_REQUIRE(run_session(make_session(m, 1, 0, 1, TI_BACKEND_CPU), x, 1, yp, &pa));
            TI_CHECK_EQ_INT(pa.num_nodes, c->act ? 3 : 2);
            /* the activation fused into the conv, then the pool where the kernel is */
            if (fewc >= 0) TI_CHECK_EQ_INT(fa.num_nodes, fewc ? 1 : 2);
            double worst = 0;
            for (int i = 0; i < ny; i++)
                worst = fmax(worst, fabs(y1[i] - ref[i]) / (1.0 + fabs(ref[i])));
            if (worst >= 1e-5)
                printf("  case %d, variant %d: rel. error %.3g\n", (int)ci, v, worst);
            TI_CHECK(worst < 1e-5);
            if (v < 2) { /* the same kernels fused and not */
                TI_CHECK(memcmp(y1, yp, sizeof(float) * (size_t)ny) == 0);
                TI_CHECK(memcmp(y1, y2, sizeof(float) * (size_t)ny) == 0);
            }
#ifndef TI_TEST_SHARED_IMPL
            ti__cpu_force_isa(-1);
#endif
        }
        ti_model_free(m);
        if (ci > 0) continue;
        for (int variant = 1; variant <= 2; variant++) { /* what must not fuse */
            ti_model *mv = stem_model(c, variant);
            TI_REQUIRE(mv != NULL);
            ti_session_info fa, pa;
            TI_REQUIRE(run_session(make_session(mv, 0, 0, 1, TI_BACKEND_CPU), x, 1, y1, &fa));
            TI_REQUIRE(run_session(make_session(mv, 1, 0, 1, TI_BACKEND_CPU), x, 1, yp, &pa));
            TI_CHECK_EQ_INT(fa.num_nodes, pa.num_nodes - 1); /* the Relu only */
            TI_CHECK(memcmp(y1, yp, sizeof(float) * (size_t)ny) == 0);
            ti_model_free(mv);
        }
    }
}

/* ---- a depthwise conv fused into the 1x1 conv before it (ti__fuse_pw_dw) ---- */
typedef struct pwdw_case {
    int c, m, h, w, k, s, pt, pl, pb, pr;
    const char *pact, *dact; /* "Relu", "Clip" (0, 6), "Sigmoid" or NULL */
    int tail;                /* 1: a 1x1 conv reads the depthwise output (bands of rows) */
} pwdw_case;
enum { PW_XMAX = 16 * 100 * 100, PW_EMAX = 48 * 100 * 100, PW_YMAX = 48 * 100 * 100 };
static float g_pw[48 * 16], g_pb[48], g_dw[48 * 25], g_db[48], g_tw[8 * 48];

static int pwdw_out(int in, int k, int s, int p0, int p1) { return (in + p0 + p1 - k) / s + 1; }

static double pwdw_act(const char *act, double v) {
    if (act == NULL) return v;
    if (strcmp(act, "Relu") == 0) return v > 0 ? v : 0;
    if (strcmp(act, "Clip") == 0) return v < 0 ? 0 : (v > 6 ? 6 : v);
    return 1.0 / (1.0 + exp(-v));
}

/* X -> Conv 1x1 (c -> m) [-> act] -> depthwise K x K / S [-> act] [-> Conv 1x1 (m -> 8)].
 * variant 1: the 1x1 conv's output is a graph output too (not fused). */
static ti_model *pwdw_model(const pwdw_case *c, int variant) {
    unsigned seed = 77;
    for (int i = 0; i < c->m * c->c; i++) g_pw[i] = frand(&seed) * 0.5f;
    for (int i = 0; i < c->m; i++) g_pb[i] = frand(&seed) * 0.3f;
    for (int i = 0; i < c->m * c->k * c->k; i++) g_dw[i] = frand(&seed) * 0.4f;
    for (int i = 0; i < c->m; i++) g_db[i] = frand(&seed) * 0.2f;
    for (int i = 0; i < 8 * c->m; i++) g_tw[i] = frand(&seed) * 0.3f;
    int oh = pwdw_out(c->h, c->k, c->s, c->pt, c->pb);
    int ow = pwdw_out(c->w, c->k, c->s, c->pl, c->pr);
    ob_model mb;
    ob_init(&mb, 13);
    int64_t xd[4] = {1, c->c, c->h, c->w}, wd[4] = {c->m, c->c, 1, 1}, bd[1] = {c->m};
    int64_t dd[4] = {c->m, 1, c->k, c->k}, td[4] = {8, c->m, 1, 1};
    int64_t ed[4] = {1, c->m, c->h, c->w}, yd[4] = {1, c->tail ? 8 : c->m, oh, ow};
    static const float lo = 0.0f, hi = 6.0f;
    ob_input(&mb, "x", OB_FLOAT, 4, xd);
    ob_init_f32(&mb, "pw", 4, wd, g_pw);
    ob_init_f32(&mb, "pb", 1, bd, g_pb);
    ob_init_f32(&mb, "dw", 4, dd, g_dw);
    ob_init_f32(&mb, "db", 1, bd, g_db);
    ob_init_f32(&mb, "tw", 4, td, g_tw);
    ob_init_f32(&mb, "lo", 0, NULL, &lo);
    ob_init_f32(&mb, "hi", 0, NULL, &hi);
    ob_node(&mb, "Conv", "expand", "x,pw,pb", c->pact ? "e0" : "e");
    if (c->pact)
        ob_node(&mb, c->pact, "expand_act", strcmp(c->pact, "Clip") == 0 ? "e0,lo,hi" : "e0",
                "e");
    ob_buf a = {0, 0, 0};
    int64_t ks[2] = {c->k, c->k}, st[2] = {c->s, c->s}, pd[4] = {c->pt, c->pl, c->pb, c->pr};
    ob_attr_ints(&a, "kernel_shape", 2, ks);
    ob_attr_ints(&a, "strides", 2, st);
    ob_attr_ints(&a, "pads", 4, pd);
    ob_attr_int(&a, "group", c->m);
    const char *dout = c->dact ? "d0" : c->tail ? "d" : "y";
    ob_node_attrs(&mb, "Conv", "depthwise", "e,dw,db", dout, &a);
    if (c->dact)
        ob_node(&mb, c->dact, "depthwise_act", strcmp(c->dact, "Clip") == 0 ? "d0,lo,hi" : "d0",
                c->tail ? "d" : "y");
    if (c->tail) ob_node(&mb, "Conv", "project", "d,tw", "y");
    ob_output(&mb, "y", OB_FLOAT, 4, yd);
    if (variant == 1) ob_output(&mb, "e", OB_FLOAT, 4, ed);
    return load_built(&mb);
}

/* The same in double. */
static void pwdw_ref(const pwdw_case *c, const float *x, double *y) {
    static double e[PW_EMAX], d[PW_YMAX];
    int H = c->h, W = c->w, K = c->k;
    int oh = pwdw_out(H, K, c->s, c->pt, c->pb), ow = pwdw_out(W, K, c->s, c->pl, c->pr);
    for (int m = 0; m < c->m; m++)
        for (int i = 0; i < H * W; i++) {
            double v = g_pb[m];
            for (int ch = 0; ch < c->c; ch++) v += (double)g_pw[m * c->c + ch] * x[ch * H * W + i];
            e[m * H * W + i] = pwdw_act(c->pact, v);
        }
    for (int m = 0; m < c->m; m++)
        for (int i = 0; i < oh; i++)
            for (int j = 0; j < ow; j++) {
                double v = g_db[m];
                for (int ky = 0; ky < K; ky++)
                    for (int kx = 0; kx < K; kx++) {
                        int iy = i * c->s - c->pt + ky, ix = j * c->s - c->pl + kx;
                        if (iy >= 0 && iy < H && ix >= 0 && ix < W)
                            v += (double)g_dw[(m * K + ky) * K + kx] * e[(m * H + iy) * W + ix];
                    }
                d[(m * oh + i) * ow + j] = pwdw_act(c->dact, v);
            }
    if (!c->tail) {
        memcpy(y, d, sizeof(double) * (size_t)(c->m * oh * ow));
        return;
    }
    for (int o = 0; o < 8; o++)
        for (int i = 0; i < oh * ow; i++) {
            double v = 0;
            for (int m = 0; m < c->m; m++) v += (double)g_tw[o * c->m + m] * d[m * oh * ow + i];
            y[o * oh * ow + i] = v;
        }
}

/* MobileNetV2's first blocks in small: the 1x1 conv computes its rows into a ring a thread
 * and the depthwise conv runs on them there (expanded outputs of 1 MiB and more): one node,
 * named for both; within 1e-6 of the graph with the 1x1 conv's output kept (a graph output
 * too: not fused) and of itself on 2 threads (a band of rows a thread where a conv reads the
 * output, else a part of the channels): the GEMM then takes other runs of columns, and one
 * ending in a single column is a dot product in another order (ti__sgemm_isa.col); near a
 * double reference; under the best ISA, AVX2, and the portable kernels where the plan was
 * made with SIMD ones. A 5x5 / 2 depthwise conv is not fused (ti__fuse_pw_dw says why). */
TI_TEST(depthwise_fuses_into_1x1_conv) {
    static const pwdw_case cases[] = {
        {8, 32, 96, 96, 3, 1, 1, 1, 1, 1, "Clip", "Clip", 0},
        {12, 40, 83, 81, 3, 2, 1, 1, 1, 1, "Relu", NULL, 1},
        {8, 36, 90, 83, 5, 1, 2, 2, 2, 2, NULL, "Sigmoid", 0},
        {16, 48, 80, 80, 3, 2, 0, 0, 1, 1, "Relu", "Relu", 1},
        {8, 30, 100, 96, 3, 1, 1, 1, 1, 1, "Sigmoid", "Clip", 1},
        {8, 32, 96, 90, 5, 2, 1, 1, 2, 2, "Relu", "Clip", 1}, /* 5x5 / 2: not fused */
        /* tall, narrow maps of few channels: a step of hundreds of rows, more row-kernel
         * calls than ti__pwdw_items finds the rows of at once (TI__PWDW_QMAX) */
        {4, 8, 1200, 24, 3, 1, 1, 1, 1, 1, "Relu", "Relu", 0},
        {4, 8, 1100, 26, 3, 2, 1, 1, 1, 1, NULL, "Clip", 1},
        /* rows of 57 at stride 2: fused under AVX2 too, whose kernel takes 2 rows a call */
        {8, 32, 48, 114, 3, 2, 1, 1, 1, 1, "Relu", "Relu", 1},
    };
    static float x[PW_XMAX], y1[PW_YMAX], y2[PW_YMAX], yk[PW_YMAX];
    static double ref[PW_YMAX];
    unsigned seed = 43;
    for (int i = 0; i < PW_XMAX; i++) x[i] = frand(&seed);
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        const pwdw_case *c = &cases[ci];
        int oh = pwdw_out(c->h, c->k, c->s, c->pt, c->pb);
        int ow = pwdw_out(c->w, c->k, c->s, c->pl, c->pr);
        int ny = (c->tail ? 8 : c->m) * oh * ow;
        TI_REQUIRE(ny <= PW_YMAX && c->c * c->h * c->w <= PW_XMAX && c->m * c->h * c->w <= PW_EMAX);
        ti_model *m = pwdw_model(c, 0), *kept = pwdw_model(c, 1);
        TI_REQUIRE(m != NULL && kept != NULL);
        pwdw_ref(c, x, ref);
        char want[64];
        snprintf(want, sizeof want, "%s%sDepthwiseConv%s%s", c->pact ? c->pact : "",
                 c->pact ? "+" : "", c->dact ? "+" : "", c->dact ? c->dact : "");
        for (int v = 0; v < 3; v++) {
#ifndef TI_TEST_SHARED_IMPL
            static const int isas[3] = {-1, TI__ISA_AVX2, -1};
            if (isas[v] >= 0 && ti__cpu_force_isa(isas[v]) != isas[v]) continue;
            const ti__dw_isa *dwi = ti__dw_pick_isa();
            int rows = dwi->rows[c->s == 2] != NULL && ow >= dwi->rows_min &&
                       !(c->k == 5 && c->s == 2);
#else
            if (v > 0) break;
            int rows = -1;
#endif
            ti_session_info fa, ka;
            ti_session *s = make_session(m, 0, 0, 1, TI_BACKEND_CPU);
            TI_REQUIRE(s != NULL);
            ti_node_info ni;
            TI_REQUIRE(ti_session_node_info(s, 0, &ni) == TI_OK);
            if (rows == 1 && v < 2) TI_CHECK(strcmp(ni.fused, want) == 0);
#ifndef TI_TEST_SHARED_IMPL
            if (v == 2) { /* planned with the SIMD kernels, run with the portable ones */
                if (rows != 1) {
                    ti_session_destroy(s);
                    break;
                }
                ti__cpu_force_isa(TI__ISA_SCALAR);
            }
#endif
            TI_REQUIRE(run_session(s, x, 2, y1, &fa));
            TI_REQUIRE(run_session(make_session(m, 0, 0, 2, TI_BACKEND_CPU), x, 1, y2, NULL));
            TI_REQUIRE(run_session(make_session(kept, 0, 0, 1, TI_BACKEND_CPU), x, 1, yk, &ka));
            TI_CHECK_EQ_INT(ka.num_nodes, 2 + c->tail);
            if (rows >= 0) TI_CHECK_EQ_INT(fa.num_nodes, (rows ? 1 : 2) + c->tail);
            double worst = 0;
            for (int i = 0; i < ny; i++)
                worst = fmax(worst, fabs(y1[i] - ref[i]) / (1.0 + fabs(ref[i])));
            if (worst >= 1e-5)
                printf("  case %d, variant %d: rel. error %.3g\n", (int)ci, v, worst);
            TI_CHECK(worst < 1e-5);
            if (v < 2) { /* the same kernels fused and not, on 1 and 2 threads */
                double dk = 0, d2 = 0;
                for (int i = 0; i < ny; i++) {
                    dk = fmax(dk, fabs((double)y1[i] - yk[i]) / (1e-3 + fabs((double)yk[i])));
                    d2 = fmax(d2, fabs((double)y1[i] - y2[i]) / (1e-3 + fabs((double)yk[i])));
                }
                if (dk > 1e-6 || d2 > 1e-6)
                    printf("  case %d, variant %d: against unfused %.3g, 2 threads %.3g\n",
                           (int)ci, v, dk, d2);
                TI_CHECK(dk <= 1e-6 && d2 <= 1e-6);
            }
#ifndef TI_TEST_SHARED_IMPL
            ti__cpu_force_isa(-1);
#endif
        }
        ti_model_free(m);
        ti_model_free(kept);
    }
}

int main(void) {
    TI_RUN(fusion_matches_reference);
    TI_RUN(matmul_bias_activation_fusion);
    TI_RUN(elementwise_activation_fusion);
    TI_RUN(gate_fuses_into_1x1_conv);
    TI_RUN(residual_add_fuses_into_1x1_conv);
    TI_RUN(residual_add_fuses_into_3x3_conv);
    TI_RUN(conv_with_five_inputs_in_a_file_fails);
    TI_RUN(maxpool_fuses_into_few_channel_conv);
    TI_RUN(depthwise_fuses_into_1x1_conv);
    TI_RUN(conv_attributes_decoded_at_planning);
    TI_RUN(run_does_not_allocate);
    TI_RUN(large_matmul_and_gemm_use_the_scratch);
    TI_RUN(arena_reuses_memory);
    TI_RUN(concat_inputs_written_in_place);
    TI_RUN(symbolic_dims_bind_and_rebind);
    TI_RUN(value_dependent_shapes_replan_at_run);
    TI_RUN(constant_folding_of_shape_chains);
    TI_RUN(errors_name_file_node_and_reason);
    TI_RUN(window_attributes_out_of_range_fail_cleanly);
    TI_RUN(allocation_failure_at_every_step);
    TI_RUN(profile_times_every_node);
#if !defined(TI_TEST_SHARED_IMPL) && defined(TI__HUGE)
    TI_RUN(large_blocks_advised_huge_pages);
    TI_RUN(slow_huge_pages_not_advised);
#endif
    return ti_test_summary();
}
