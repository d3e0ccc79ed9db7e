/* The ONNX integer ops on the shared integer GEMM (core/qgemm.c) against plain scalar loops
 * written from the spec (the loops these kernels used before): QLinearConv and ConvInteger
 * with 1 to 3 spatial dims, groups (depthwise included), strides, dilations, padding,
 * per-tensor and per-channel weight scales / zero points, every uint8 / int8 mix of x and
 * w, bias; QLinearMatMul and MatMulInteger with broadcast batches, per-column b and
 * per-row a zero points. Random odd and even sizes around the GEMM's blocking (4 rows, 16
 * columns, 256 depths). Outputs must be equal bit for bit, with the AVX2 micro-kernel and
 * with the portable one, on 1 and 3 threads. Each case runs twice: weights packed per run
 * in scratch, and packed once beforehand by the op's prepack entry (as the session's
 * prepack pass does; then the scratch must not grow): both outputs must be equal. The
 * kernels are called directly on hand-made tensors (the implementation is compiled into
 * this file). */
#define TINYINFER_IMPLEMENTATION
#include "tinyinfer.h"
#include "ti_test.h"

static unsigned g_seed = 4242u;
static unsigned urand(void) {
    g_seed = g_seed * 1664525u + 1013904223u;
    return g_seed >> 8;
}
static long g_outputs, g_packed;
static int rnd(int lo, int hi) { return lo + (int)(urand() % (unsigned)(hi - lo + 1)); }

static ti_tensor mk(ti_dtype dt, int rank, const int64_t *dims) {
    ti_tensor t;
    memset(&t, 0, sizeof t);
    ti__set_shape(&t, dt, rank, dims);
    t.data = calloc(t.size_bytes + 1, 1);
    return t;
}
static void fill_q(ti_tensor *t) { /* full range of uint8 / int8, int32 bias in +-5000 */
    for (size_t i = 0; i < ti_tensor_numel(t); i++)
        ti__set_i64(t, i, t->dtype == TI_DTYPE_U8 ? rnd(0, 255) : t->dtype == TI_DTYPE_I8 ? rnd(-128, 127) : rnd(-5000, 5000));
}
static ti_tensor scalar_f(float v) {
    ti_tensor t = mk(TI_DTYPE_F32, 0, NULL);
    ((float *)t.data)[0] = v;
    return t;
}

/* Runs op (shape, scratch, run) on the inputs; returns the status. */
static ti_status run_op(const ti__op *op, ti__node *nd, ti_tensor **in, int n_in, ti_tensor *out,
                        ti__threadpool *tp) {
    ti__kctx k;
    ti_error err;
    memset(&k, 0, sizeof k);
    k.node = nd;
    k.in = in;
    k.n_in = n_in;
    k.out = &out;
    k.n_out = 1;
    k.opset = 21;
    k.err = &err;
    k.file = "test";
    k.tp = tp;
    ti_status st = (ti_status)op->shape(&k);
    if (st != TI_OK) {
        printf("  shape: %s\n", err.message);
        return st;
    }
    if (out->data == NULL) out->data = calloc(out->size_bytes + 1, 1);
    k.scratch_bytes = op->scratch ? op->scratch(&k) : 0;
    k.scratch = k.scratch_bytes ? malloc(k.scratch_bytes) : NULL;
    st = op->run(&k);
    if (st != TI_OK) printf("  run: %s\n", err.message);
    free(k.scratch);
    if (st != TI_OK) return st;
    /* again on weights (and multipliers) packed once by the prepack entry */
    size_t plain_scratch = k.scratch_bytes;
    ti__pool pool;
    memset(&pool, 0, sizeof pool);
    ti_status ps;
    if (strcmp(nd->op, "QLinearConv") == 0) ps = ti__qconv_prepack(&k, nd, &pool);
    else if (strcmp(nd->op, "QLinearMatMul") == 0) ps = ti__qmm_prepack(&k, nd, &pool);
    else if (strcmp(nd->op, "ConvInteger") == 0) ps = ti__convint_prepack(&k, nd, &pool);
    else ps = ti__matmulint_prepack(&k, nd, &pool);
    TI_CHECK_EQ_INT(ps, TI_OK);
    if (nd->packed_kind == TI__PACK_QGEMM) g_packed++;
    void *first = malloc(out->size_bytes + 1);
    memcpy(first, out->data, out->size_bytes);
    memset(out->data, 0x5a, out->size_bytes);
    k.scratch_bytes = op->scratch ? op->scratch(&k) : 0;
    TI_CHECK(k.scratch_bytes <= plain_scratch);
    k.scratch = k.scratch_bytes ? malloc(k.scratch_bytes) : NULL;
    st = op->run(&k);
    if (st != TI_OK) printf("  run (prepacked): %s\n", err.message);
    TI_CHECK(memcmp(first, out->data, out->size_bytes) == 0);
    free(k.scratch);
    free(first);
    nd->packed_kind = TI__PACK_NONE;
    nd->packed = NULL;
    nd->packed_bytes = 0;
    ti__pool_release(&pool);
    return st;
}

static double rnd_f(ti_dtype sd, double v) { return sd == TI_DTYPE_F32 ? (double)(float)v : v; }

static int64_t sat(double v, int64_t lo, int64_t hi) {
    v = nearbyint(v);
    return v <= (double)lo ? lo : v >= (double)hi ? hi : (int64_t)v;
}

static void conv_case(int qlinear, ti__threadpool *tp) {
    int sr = rnd(1, 3), group = rnd(0, 3) == 0 ? 1 : rnd(1, 4);
    int depthwise = rnd(0, 4) == 0;
    int64_t n = rnd(1, 2), cg = depthwise ? 1 : rnd(1, 9), mg = depthwise ? 1 : rnd(1, 20);
    if (depthwise) group = rnd(2, 17);
    int64_t c = cg * group, m = mg * group;
    int64_t xd[5] = {n, c}, wd[5] = {m, cg}, ks[3], st[3], dl[3], pd[6];
    for (int i = 0; i < sr; i++) {
        ks[i] = rnd(1, 3);
        st[i] = rnd(1, 2);
        dl[i] = rnd(1, 2);
        pd[i] = rnd(0, 1);
        pd[i + sr] = rnd(0, 2);
        int64_t ext = (ks[i] - 1) * dl[i] + 1;
        xd[2 + i] = ext + rnd(0, sr == 3 ? 3 : 9);
        wd[2 + i] = ks[i];
    }
    ti_dtype xt = rnd(0, 1) ? TI_DTYPE_U8 : TI_DTYPE_I8, wt = rnd(0, 1) ? TI_DTYPE_U8 : TI_DTYPE_I8;
    int per_ch = rnd(0, 1);
    ti_tensor x = mk(xt, 2 + sr, xd), w = mk(wt, 2 + sr, wd);
    fill_q(&x);
    fill_q(&w);
    int64_t one = 1, md = m;
    ti_tensor xz = mk(xt, 0, NULL), wz = mk(wt, 1, per_ch ? &md : &one), yz = mk(rnd(0, 1) ? TI_DTYPE_U8 : TI_DTYPE_I8, 0, NULL);
    fill_q(&xz);
    fill_q(&wz);
    fill_q(&yz);
    ti_tensor xs = scalar_f(0.01f + (float)rnd(0, 100) / 1000.0f), ys = scalar_f(0.05f + (float)rnd(0, 100) / 100.0f);
    ti_tensor ws = mk(TI_DTYPE_F32, 1, per_ch ? &md : &one), bias = mk(TI_DTYPE_I32, 1, &md);
    for (size_t i = 0; i < ti_tensor_numel(&ws); i++) ((float *)ws.data)[i] = 0.001f + (float)rnd(0, 100) / 5000.0f;
    fill_q(&bias);
    int has_bias = rnd(0, 1);
    ti__attr at[4];
    memset(at, 0, sizeof at);
    at[0].name = "group", at[0].type = TI__ATTR_INT, at[0].i = group;
    at[1].name = "strides", at[1].type = TI__ATTR_INTS, at[1].ints = st, at[1].count = sr;
    at[2].name = "dilations", at[2].type = TI__ATTR_INTS, at[2].ints = dl, at[2].count = sr;
    at[3].name = "pads", at[3].type = TI__ATTR_INTS, at[3].ints = pd, at[3].count = 2 * sr;
    ti__node nd;
    memset(&nd, 0, sizeof nd);
    nd.name = "t";
    nd.op = qlinear ? "QLinearConv" : "ConvInteger";
    nd.domain = "";
    nd.attrs = at;
    nd.n_attrs = 4;
    ti_tensor y;
    memset(&y, 0, sizeof y);
    ti_tensor *in9[9] = {&x, &xs, &xz, &w, &ws, &wz, &ys, &yz, has_bias ? &bias : NULL};
    ti_tensor *in4[4] = {&x, &w, &xz, &wz};
    ti_status s = qlinear ? run_op(ti__op_find("", "QLinearConv"), &nd, in9, 9, &y, tp)
                          : run_op(ti__op_find("", "ConvInteger"), &nd, in4, 4, &y, tp);
    TI_CHECK_EQ_INT(s, TI_OK);
    if (s != TI_OK) return;
    /* reference: direct loops over taps inside the input (padding adds nothing) */
    int64_t od[3] = {1, 1, 1}, id3[3] = {1, 1, 1}, k3[3] = {1, 1, 1}, s3[3] = {1, 1, 1}, d3[3] = {1, 1, 1}, p3[3] = {0, 0, 0};
    for (int i = 0; i < sr; i++) {
        int o = 3 - sr + i;
        id3[o] = xd[2 + i], k3[o] = ks[i], s3[o] = st[i], d3[o] = dl[i], p3[o] = pd[i];
        od[o] = y.shape[2 + i];
    }
    int64_t lo, hi;
    ti__q_range(y.dtype, &lo, &hi);
    int bad = 0;
    size_t oi = 0;
    int64_t x0 = ti__get_i64(&xz, 0);
    for (int64_t b = 0; b < n; b++)
        for (int64_t mm = 0; mm < m; mm++) {
            int64_t g = mm / mg, w0 = ti__get_i64(&wz, per_ch ? (size_t)mm : 0);
            double mult = rnd_f(TI_DTYPE_F32, rnd_f(TI_DTYPE_F32, ti__get_f64(&xs, 0) * ti__get_f64(&ws, per_ch ? (size_t)mm : 0)) / ti__get_f64(&ys, 0));
            for (int64_t a0 = 0; a0 < od[0]; a0++)
                for (int64_t a1 = 0; a1 < od[1]; a1++)
                    for (int64_t a2 = 0; a2 < od[2]; a2++, oi++) {
                        int64_t acc = qlinear && has_bias ? ((const int32_t *)bias.data)[mm] : 0;
                        for (int64_t ci = 0; ci < cg; ci++)
                            for (int64_t q0 = 0; q0 < k3[0]; q0++)
                                for (int64_t q1 = 0; q1 < k3[1]; q1++)
                                    for (int64_t q2 = 0; q2 < k3[2]; q2++) {
                                        int64_t i0 = a0 * s3[0] - p3[0] + q0 * d3[0];
                                        int64_t i1 = a1 * s3[1] - p3[1] + q1 * d3[1];
                                        int64_t i2 = a2 * s3[2] - p3[2] + q2 * d3[2];
                                        if (i0 < 0 || i0 >= id3[0] || i1 < 0 || i1 >= id3[1] || i2 < 0 || i2 >= id3[2]) continue;
                                        size_t xi = (size_t)(((b * c + g * cg + ci) * id3[0] + i0) * id3[1] + i1) * (size_t)id3[2] + (size_t)i2;
                                        size_t wi = (size_t)(((mm * cg + ci) * k3[0] + q0) * k3[1] + q1) * (size_t)k3[2] + (size_t)q2;
                                        acc += (ti__get_i64(&x, xi) - x0) * (ti__get_i64(&w, wi) - w0);
                                    }
                        int64_t want = qlinear ? sat((double)acc * mult + (double)ti__get_i64(&yz, 0), lo, hi) : (int64_t)(int32_t)acc;
                        if (ti__get_i64(&y, oi) != want && bad++ == 0)
                            printf("  %s sr %d group %d c %lld m %lld: y[%zu] = %lld, expected %lld\n", nd.op, sr, group,
                                   (long long)c, (long long)m, oi, (long long)ti__get_i64(&y, oi), (long long)want);
                    }
        }
    g_outputs += (long)oi;
    TI_CHECK_EQ_INT(bad, 0);
    ti_tensor *all[] = {&x, &w, &xz, &wz, &yz, &xs, &ys, &ws, &bias, &y};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) free(all[i]->data);
}

static void matmul_case(int qlinear, ti__threadpool *tp) {
    int64_t m = rnd(1, 13), k = rnd(0, 9) == 0 ? 0 : rnd(1, 300), n = rnd(1, 40), nb = rnd(1, 3);
    int b_batched = rnd(0, 1);
    int64_t ad[3] = {nb, m, k}, bd[3] = {nb, k, n}, one = 1;
    ti_dtype at = rnd(0, 1) ? TI_DTYPE_U8 : TI_DTYPE_I8, bt = rnd(0, 1) ? TI_DTYPE_U8 : TI_DTYPE_I8;
    ti_tensor a = mk(at, 3, ad), b = b_batched ? mk(bt, 3, bd) : mk(bt, 2, bd + 1);
    fill_q(&a);
    fill_q(&b);
    int per_col = rnd(0, 1), per_row = !qlinear && rnd(0, 1);
    ti_tensor az = mk(at, per_row ? 1 : 0, &m), bz = mk(bt, 1, per_col ? &n : &one);
    ti_tensor yz = mk(rnd(0, 1) ? TI_DTYPE_U8 : TI_DTYPE_I8, 0, NULL);
    fill_q(&az);
    fill_q(&bz);
    fill_q(&yz);
    ti_tensor as = scalar_f(0.02f + (float)rnd(0, 50) / 1000.0f), ys = scalar_f(0.5f + (float)rnd(0, 100) / 20.0f);
    ti_tensor bs = mk(TI_DTYPE_F32, 1, per_col ? &n : &one);
    for (size_t i = 0; i < ti_tensor_numel(&bs); i++) ((float *)bs.data)[i] = 0.001f + (float)rnd(0, 100) / 3000.0f;
    ti__node nd;
    memset(&nd, 0, sizeof nd);
    nd.name = "t";
    nd.op = qlinear ? "QLinearMatMul" : "MatMulInteger";
    nd.domain = "";
    ti_tensor y;
    memset(&y, 0, sizeof y);
    ti_tensor *in8[8] = {&a, &as, &az, &b, &bs, &bz, &ys, &yz};
    ti_tensor *in4[4] = {&a, &b, &az, &bz};
    ti_status s = qlinear ? run_op(ti__op_find("", "QLinearMatMul"), &nd, in8, 8, &y, tp)
                          : run_op(ti__op_find("", "MatMulInteger"), &nd, in4, 4, &y, tp);
    TI_CHECK_EQ_INT(s, TI_OK);
    if (s != TI_OK) return;
    int64_t lo, hi;
    ti__q_range(y.dtype, &lo, &hi);
    int bad = 0;
    for (int64_t t = 0; t < nb; t++)
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                int64_t a0 = ti__get_i64(&az, per_row ? (size_t)i : 0), b0 = ti__get_i64(&bz, per_col ? (size_t)j : 0);
                int64_t acc = 0;
                for (int64_t p = 0; p < k; p++)
                    acc += (ti__get_i64(&a, (size_t)((t * m + i) * k + p)) - a0) *
                           (ti__get_i64(&b, (size_t)(((b_batched ? t : 0) * k + p) * n + j)) - b0);
                double mult = rnd_f(TI_DTYPE_F32, rnd_f(TI_DTYPE_F32, ti__get_f64(&as, 0) * ti__get_f64(&bs, per_col ? (size_t)j : 0)) / ti__get_f64(&ys, 0));
                int64_t want = qlinear ? sat((double)acc * mult + (double)ti__get_i64(&yz, 0), lo, hi) : (int64_t)(int32_t)acc;
                size_t yi = (size_t)((t * m + i) * n + j);
                if (ti__get_i64(&y, yi) != want && bad++ == 0)
                    printf("  %s m %lld k %lld n %lld: y[%zu] = %lld, expected %lld\n", nd.op, (long long)m, (long long)k,
                           (long long)n, yi, (long long)ti__get_i64(&y, yi), (long long)want);
            }
    g_outputs += (long)(nb * m * n);
    TI_CHECK_EQ_INT(bad, 0);
    ti_tensor *all[] = {&a, &b, &az, &bz, &yz, &as, &ys, &bs, &y};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) free(all[i]->data);
}

TI_TEST(onnx_integer_ops_match_scalar_loops) {
    ti_allocator al;
    memset(&al, 0, sizeof al);
    ti__threadpool *tp = ti__threadpool_create(&al, 3);
    int isas[2] = {TI__ISA_AVX2, TI__ISA_SCALAR};
    for (int v = 0; v < 2; v++) {
        if (isas[v] > ti__cpu_isa_best()) continue;
        ti__cpu_force_isa(isas[v]);
        for (int r = 0; r < 100; r++) {
            conv_case(r & 1, (r & 2) ? tp : NULL);
            matmul_case(r & 1, (r & 2) ? tp : NULL);
        }
    }
    ti__cpu_force_isa(ti__cpu_isa_best());
    ti__threadpool_destroy(tp);
    printf("  %ld outputs compared, %ld cases on prepacked weights\n", g_outputs, g_packed);
    TI_CHECK(g_outputs > 10000);
    TI_CHECK(g_packed > 100);
}

int main(void) {
    TI_RUN(onnx_integer_ops_match_scalar_loops);
    return ti_test_summary();
}
