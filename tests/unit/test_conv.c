/* The float32 Conv paths (cpu/conv.c, cpu/conv_fast.c) against a double-precision reference
 * convolution: each path forced in turn (direct, 1x1 GEMM, im2col tiles shared or per
 * thread, depthwise, Winograd F(4x4,3x3)) under each instruction set forced in turn
 * (scalar, AVX2, AVX-512 on x86; scalar, NEON, NEON + dotprod on aarch64; one the CPU lacks
 * runs as the best it has and says so), one and
 * two threads, on random and edge shapes: odd sizes, images smaller than the kernel,
 * asymmetric pads, strides 1-3, dilation, groups, channel counts around the vector widths,
 * batch 2, every fused activation kind. Outputs start as NaN, so an element a path forgets
 * fails. Scratch is exactly what the path's scratch function asks for (ASan sees overruns),
 * and once much less (the im2col path must shrink its tiles). Then whole sessions: the
 * prepack pass packs Winograd weights (and, for GEMM convs whose weight rows conflict in
 * L1, transposed weights) at planning and the session's output matches. Last, the stride-2
 * row copy of im2col on its own, each ISA forced. */
#define TINYINFER_IMPLEMENTATION
#include "tinyinfer.h"
#include "ti_test.h"
#include "onnx_build.h"

static unsigned g_seed = 2024u;
static unsigned urand(void) {
    g_seed = g_seed * 1664525u + 1013904223u;
    return g_seed >> 8;
}
static float frand(void) { return (float)(urand() & 0xffff) / 32768.0f - 1.0f; }
static int64_t irand(int64_t lo, int64_t hi) { return lo + (int64_t)(urand() % (unsigned)(hi - lo + 1)); }

typedef struct ccase {
    int64_t n, c, h, w, m, group, k[2], s[2], d[2], pads[4]; /* pads: top, left, bottom, right */
    int bias, act;
    float act_a, act_b;
} ccase;

static const int ISAS[3] = {TI__ISA_SCALAR, TI__ISA_AVX2, TI__ISA_AVX512};
static const char *PATH_NAMES[] = {"direct",   "1x1",        "im2col",      "depthwise",
                                    "winograd", "im2col big", "few channels"};

/* Error bounds, as a multiple of sum |x * w| + |b| of the element (the size of its terms).
 * Paths that sum products in float: 2.5e-7 * (K + 4), K the products summed (as
 * test_sgemm.c; these shapes reach 5.8e-8). Winograd rounds in the transformed domain: the
 * input transform sums up to 10 |d| per axis (B^T row 4, -5, 1), the output transform up to
 * 19 terms with weights up to 8 per axis, so its rounding error is larger by the growth of
 * those sums, not by K: measured up to 2.3e-7 * (K + 4) here, so the bound is 10x the
 * direct one, 2.5e-6. Every path is also held to the model tests' criterion,
 * max |error| <= 1e-4 max |y|. */
static double tol_factor(int path) { return path == TI__CONV_WINO ? 2.5e-6 : 2.5e-7; }

typedef struct conv_rig {
    ccase cc;
    ti__attr attrs[4];
    int64_t strides[2], dil[2], pads[4];
    ti__node node;
    ti_tensor x, w, b, y;
    ti_tensor *in[3], *out[1];
    ti__kctx k;
    ti_error err;
    ti__convp p;
    double *ref, *scale;
    double pre_max; /* max |output| before the activation */
    float *wino_u; /* Winograd weights, packed as the planner would */
} conv_rig;

static size_t numel4(const int64_t *s) { return (size_t)(s[0] * s[1] * s[2] * s[3]); }

static void rig_free(conv_rig *r) {
    free(r->x.data);
    free(r->w.data);
    free(r->b.data);
    free(r->y.data);
    free(r->ref);
    free(r->scale);
    free(r->wino_u);
}

/* Sets up tensors, node and context; computes the reference. 0 when the geometry is
 * invalid (no output) or memory runs out. */
static int rig_init(conv_rig *r, const ccase *cc) {
    memset(r, 0, sizeof *r);
    r->cc = *cc;
    r->strides[0] = cc->s[0], r->strides[1] = cc->s[1];
    r->dil[0] = cc->d[0], r->dil[1] = cc->d[1];
    r->pads[0] = cc->pads[0], r->pads[1] = cc->pads[1];
    r->pads[2] = cc->pads[2], r->pads[3] = cc->pads[3];
    ti__attr *a = r->attrs;
    a[0].name = "strides", a[0].type = TI__ATTR_INTS, a[0].ints = r->strides, a[0].count = 2;
    a[1].name = "dilations", a[1].type = TI__ATTR_INTS, a[1].ints = r->dil, a[1].count = 2;
    a[2].name = "pads", a[2].type = TI__ATTR_INTS, a[2].ints = r->pads, a[2].count = 4;
    a[3].name = "group", a[3].type = TI__ATTR_INT, a[3].i = cc->group;
    for (int i = 0; i < 4; i++) a[i].tensor = -1;
    r->node.name = "conv";
    r->node.op = "Conv";
    r->node.domain = "";
    r->node.n_inputs = 3;
    r->node.n_outputs = 1;
    r->node.n_attrs = 4;
    r->node.attrs = a;
    r->node.act = cc->act;
    r->node.act_a = cc->act_a;
    r->node.act_b = cc->act_b;
    r->node.bands_ok = 1; /* as if a conv read the output: the depthwise path may use bands */
    int64_t xs[4] = {cc->n, cc->c, cc->h, cc->w};
    int64_t ws[4] = {cc->m, cc->c / cc->group, cc->k[0], cc->k[1]}, bs[1] = {cc->m};
    ti__set_shape(&r->x, TI_DTYPE_F32, 4, xs);
    ti__set_shape(&r->w, TI_DTYPE_F32, 4, ws);
    ti__set_shape(&r->b, TI_DTYPE_F32, 1, bs);
    r->x.data = malloc(r->x.size_bytes + 4);
    r->w.data = malloc(r->w.size_bytes + 4);
    r->b.data = malloc(r->b.size_bytes + 4);
    if (!r->x.data || !r->w.data || !r->b.data) return 0;
    for (size_t i = 0; i < numel4(xs); i++) ((float *)r->x.data)[i] = frand();
    for (size_t i = 0; i < numel4(ws); i++) ((float *)r->w.data)[i] = frand();
    for (int64_t i = 0; i < cc->m; i++) ((float *)r->b.data)[i] = frand();
    r->in[0] = &r->x;
    r->in[1] = &r->w;
    r->in[2] = cc->bias ? &r->b : NULL;
    r->out[0] = &r->y;
    r->k.node = &r->node;
    r->k.in = r->in;
    r->k.n_in = 3;
    r->k.out = r->out;
    r->k.n_out = 1;
    r->k.opset = 13;
    r->k.err = &r->err;
    r->k.file = "test_conv";
    if (ti__conv_shape(&r->k) != TI_OK) return 0;
    if (ti__conv_params(&r->k, 0, &r->p) != TI_OK) return 0;
    r->y.data = malloc(r->y.size_bytes + 4);
    size_t ny = ti__numel(&r->y);
    r->ref = (double *)malloc(sizeof(double) * (ny + 1));
    r->scale = (double *)malloc(sizeof(double) * (ny + 1));
    if (!r->y.data || !r->ref || !r->scale) return 0;
    const float *x = (const float *)r->x.data, *w = (const float *)r->w.data;
    const float *b = (const float *)r->b.data;
    int64_t OH = r->y.shape[2], OW = r->y.shape[3], cg = cc->c / cc->group, mg = cc->m / cc->group;
    size_t o = 0;
    for (int64_t n = 0; n < cc->n; n++)
        for (int64_t m = 0; m < cc->m; m++)
            for (int64_t oh = 0; oh < OH; oh++)
                for (int64_t ow = 0; ow < OW; ow++, o++) {
                    double s = cc->bias ? b[m] : 0.0, sa = fabs(s);
                    for (int64_t ic = 0; ic < cg; ic++)
                        for (int64_t kh = 0; kh < cc->k[0]; kh++)
                            for (int64_t kw = 0; kw < cc->k[1]; kw++) {
                                int64_t ih = oh * cc->s[0] - cc->pads[0] + kh * cc->d[0];
                                int64_t iw = ow * cc->s[1] - cc->pads[1] + kw * cc->d[1];
                                if (ih < 0 || ih >= cc->h || iw < 0 || iw >= cc->w) continue;
                                double t = (double)x[((n * cc->c + m / mg * cg + ic) * cc->h + ih) *
                                                         cc->w + iw] *
                                           w[((m * cg + ic) * cc->k[0] + kh) * cc->k[1] + kw];
                                s += t;
                                sa += fabs(t);
                            }
                    r->ref[o] = cc->act != TI__ACT_NONE
                                    ? ti__act_apply(cc->act, cc->act_a, cc->act_b, (float)s)
                                    : s;
                    r->scale[o] = sa + 1e-30;
                    r->pre_max = fmax(r->pre_max, fabs(s));
                }
    return 1;
}

/* Scratch bytes the path asks for. */
static size_t path_scratch(conv_rig *r, int path) {
    size_t col = ti__conv_im2col_floats(&r->k, &r->p) * sizeof(float);
    /* FEWC: the weights' layout (not packed here), or im2col's, which it falls back to on
     * an ISA without its kernel */
    if (path == TI__CONV_FEWC) return TI__MAX(col, ti__conv_fewc_scratch(&r->k, &r->p));
    if (path == TI__CONV_IM2COL) return col;
    if (path == TI__CONV_WINO) return ti__conv_wino_scratch(&r->k, &r->p);
    return 0;
}

/* Runs the path; returns the number of wrong elements (printing the first). */
static int run_path(conv_rig *r, int path, ti__threadpool *tp, size_t scratch_bytes,
                    const char *isa) {
    size_t ny = ti__numel(&r->y);
    float *y = (float *)r->y.data;
    for (size_t i = 0; i < ny; i++) y[i] = NAN;
    void *scratch = scratch_bytes ? malloc(scratch_bytes) : NULL;
    r->k.tp = tp;
    r->k.scratch = scratch;
    r->k.scratch_bytes = scratch_bytes;
    ti_status st = ti__conv_run_path(&r->k, &r->p, path);
    free(scratch);
    if (st != TI_OK) {
        printf("  %s %s: status %d: %s\n", isa, PATH_NAMES[path], (int)st, r->err.message);
        return 1;
    }
    /* relative to the larger of the outputs and their values before the activation: a
     * Clip to [-0.25, 0.5] or a sigmoid bounds max |y| however large the sums are, and
     * their rounding errors pass through (slope at most 1.5, hard-swish) */
    double amax = r->pre_max, emax = 0;
    for (size_t i = 0; i < ny; i++) amax = fmax(amax, fabs(r->ref[i]));
    size_t K = (size_t)(r->p.cg * (int64_t)r->p.kprod);
    int bad = 0;
    for (size_t i = 0; i < ny; i++) {
        double e = fabs((double)y[i] - r->ref[i]);
        /* plus two units in the last place of the output: an activation that moves it far
         * from its input (a sigmoid's 0.5 at 0) rounds on its own scale, not the sum's */
        double tol = tol_factor(path) * (double)(K + 4) * r->scale[i] + 2.4e-7 * fabs(r->ref[i]);
        if (!(e <= tol) && bad++ == 0) /* NaN fails */
            printf("  %s %s threads=%d: N=%lld C=%lld %lldx%lld M=%lld g=%lld k=%lldx%lld "
                   "s=%lld,%lld d=%lld,%lld pads=%lld,%lld,%lld,%lld act=%d: y[%zu] = %.9g, "
                   "expected %.9g (tol %.3g)\n",
                   isa, PATH_NAMES[path], ti__threadpool_size(tp), (long long)r->cc.n,
                   (long long)r->cc.c, (long long)r->cc.h, (long long)r->cc.w, (long long)r->cc.m,
                   (long long)r->cc.group, (long long)r->cc.k[0], (long long)r->cc.k[1],
                   (long long)r->cc.s[0], (long long)r->cc.s[1], (long long)r->cc.d[0],
                   (long long)r->cc.d[1], (long long)r->cc.pads[0], (long long)r->cc.pads[1],
                   (long long)r->cc.pads[2], (long long)r->cc.pads[3], r->cc.act, i, y[i],
                   r->ref[i], tol);
        if (e > emax || e != e) emax = e;
    }
    if (!(emax <= 1e-4 * amax + 1e-30) && bad++ == 0)
        printf("  %s %s: max |error| %.3g > 1e-4 * max |y| (%.3g)\n", isa, PATH_NAMES[path],
               emax, amax);
    return bad;
}

static int g_paths_run[7];
static int g_ct_runs; /* transposed GEMM runs on panels of the ISA in use */
static int g_wino23_runs; /* cases run by Winograd F(2x2, 3x3) */

/* Packs the rig's weights for Winograd with output tile t (4 or 2) as the planner would, for
 * the ISA's micro-kernel, and checks that the path then runs rather than falling back. */
static void wino_pack(conv_rig *r, int t) {
    size_t bytes = ti__wino_u_bytes(&r->p, t);
    free(r->wino_u);
    r->wino_u = (float *)malloc(bytes);
    TI_REQUIRE(r->wino_u != NULL);
    r->node.packed_arg = ti__wino_pack(&r->p, t, (const float *)r->w.data, r->wino_u);
    r->node.packed_kind = ti__wino_kind(t);
    r->node.packed = r->wino_u;
    r->node.packed_bytes = bytes;
    r->k.tp = NULL;
    size_t need = ti__conv_wino_scratch(&r->k, &r->p);
    r->k.scratch = malloc(need);
    r->k.scratch_bytes = need;
    TI_REQUIRE(r->k.scratch != NULL);
    TI_CHECK_EQ_INT(ti__conv_wino_run(&r->k, &r->p), 1);
    free(r->k.scratch);
    r->k.scratch = NULL;
    r->k.scratch_bytes = 0;
}

/* Every path that can run the case, under every ISA, one and two threads. */
static void check_case(const ccase *cc, ti__threadpool *tp) {
    conv_rig r;
    if (!rig_init(&r, cc)) {
        TI_CHECK(!"case set-up failed");
        printf("  set-up: %s\n", r.err.message);
        rig_free(&r);
        return;
    }
    int paths[6], np = 0;
    paths[np++] = TI__CONV_DIRECT;
    paths[np++] = TI__CONV_IM2COL;
    r.k.tp = NULL;
    if (ti__conv_path(&r.k, &r.p) == TI__CONV_1X1) paths[np++] = TI__CONV_1X1;
    if (ti__conv_dw_ok(&r.p)) paths[np++] = TI__CONV_DW;
    if (ti__conv_fewc_ok(&r.p)) paths[np++] = TI__CONV_FEWC; /* AVX-512: falls back below */
    int wino = ti__conv_wino_fits(&r.p);
    if (wino) paths[np++] = TI__CONV_WINO;
    for (int i = 0; i < 3; i++) {
        int isa = ti__cpu_force_isa(ISAS[i]);
        if (isa != ISAS[i] && i > 0) continue; /* ran as a lower ISA already */
        const char *name = ti__cpu_isa_name(isa);
        if (wino) wino_pack(&r, 4);
        for (int q = 0; q < np; q++) {
            int path = paths[q];
            r.k.tp = NULL;
            TI_CHECK_EQ_INT(run_path(&r, path, NULL, path_scratch(&r, path), name), 0);
            if (tp != NULL) {
                r.k.tp = tp;
                TI_CHECK_EQ_INT(run_path(&r, path, tp, path_scratch(&r, path), name), 0);
            }
            g_paths_run[path]++;
        }
        if (wino) { /* F(2x2, 3x3) too, whatever the size (the planner takes it for few tiles) */
            wino_pack(&r, 2);
            TI_CHECK_EQ_INT(run_path(&r, TI__CONV_WINO, NULL, path_scratch(&r, TI__CONV_WINO), name), 0);
            if (tp != NULL) {
                r.k.tp = tp; /* scratch for a slot per thread: the shared input transform */
                TI_CHECK_EQ_INT(run_path(&r, TI__CONV_WINO, tp, path_scratch(&r, TI__CONV_WINO), name), 0);
            }
            g_wino23_runs++;
        }
        if (ti__conv_fewc_ok(&r.p) && ti__dw_pick_isa()->fewc[0] != NULL) {
            /* weights packed as the planner would: no scratch at all, so a fall back to
             * im2col would fail */
            size_t bytes = ti__conv_fewc_wfloats(&r.p) * sizeof(float);
            float *wt = (float *)malloc(bytes);
            TI_REQUIRE(wt != NULL);
            ti__conv_fewc_pack(&r.p, (const float *)r.w.data, wt);
            ti__node saved = r.node;
            r.node.packed_kind = TI__PACK_FEWC, r.node.packed = wt, r.node.packed_bytes = bytes;
            r.k.tp = tp;
            TI_CHECK_EQ_INT(ti__conv_scratch(&r.k), 0);
            TI_CHECK_EQ_INT(run_path(&r, TI__CONV_FEWC, tp, 0, name), 0);
            r.node = saved;
            free(wt);
        }
        /* the path the kernel picks, with the scratch its scratch function asks for */
        r.k.tp = tp;
        size_t need = ti__conv_scratch(&r.k);
        TI_CHECK_EQ_INT(run_path(&r, ti__conv_path(&r.k, &r.p), tp, need, name), 0);
        /* im2col with less scratch than planned: narrower tiles, same result */
        size_t full = path_scratch(&r, TI__CONV_IM2COL), col = (size_t)(r.p.cg * (int64_t)r.p.kprod) * 4;
        if (full / 3 >= col) TI_CHECK_EQ_INT(run_path(&r, TI__CONV_IM2COL, tp, full / 3, name), 0);
    }
    ti__cpu_force_isa(-1);
    rig_free(&r);
}

static void random_act(ccase *c) {
    static const int acts[] = {TI__ACT_NONE, TI__ACT_RELU, TI__ACT_CLIP, TI__ACT_LEAKY_RELU,
                               TI__ACT_HARD_SWISH, TI__ACT_SIGMOID, TI__ACT_SILU};
    c->act = acts[urand() % 7];
    c->act_a = c->act == TI__ACT_CLIP ? -0.25f : 0.1f;
    c->act_b = c->act == TI__ACT_CLIP ? 0.5f : 0.0f;
    c->bias = urand() % 4 != 0;
}

static void isa_report(void) {
    int best = ti__cpu_isa_best();
    printf("best ISA here: %s\n", ti__cpu_isa_name(best));
    for (int i = 0; i < 3; i++)
        if (ISAS[i] > best) {
            char why[96];
            snprintf(why, sizeof why, "%s: this CPU or OS lacks it (its cases ran as %s)",
                     ti__cpu_isa_name(ISAS[i]), ti__cpu_isa_name(best));
            ti_test_skip_note(why, __FILE__, __LINE__);
        }
}

/* A depthwise case from a row {channels, h, w, K, S, pads top, left, bottom, right}, batch
 * n, with a random activation. */
static ccase dw_case(const int64_t *row, int64_t n) {
    ccase c;
    memset(&c, 0, sizeof c);
    c.n = n;
    c.c = c.m = c.group = row[0];
    c.h = row[1];
    c.w = row[2];
    c.k[0] = c.k[1] = row[3];
    c.s[0] = c.s[1] = row[4];
    c.d[0] = c.d[1] = 1;
    for (int i = 0; i < 4; i++) c.pads[i] = row[5 + i];
    random_act(&c);
    return c;
}

TI_TEST(depthwise_shapes) {
    ti__threadpool *tp = ti__threadpool_create(NULL, 2);
    for (int it = 0; it < 60; it++) {
        ccase c;
        memset(&c, 0, sizeof c);
        int64_t K = urand() % 2 ? 3 : 5, S = urand() % 2 ? 1 : 2;
        c.n = irand(1, 2);
        c.c = c.m = c.group = it < 4 ? (int64_t)(it == 0 ? 1 : 7 + 8 * it) : irand(1, 37);
        c.h = irand(1, 30);
        c.w = irand(1, 45); /* rows past 16 and 32 floats, and shorter than a vector */
        c.k[0] = c.k[1] = K;
        c.s[0] = c.s[1] = S;
        c.d[0] = c.d[1] = 1;
        for (int i = 0; i < 4; i++) c.pads[i] = irand(0, K - 1);
        if ((c.h + c.pads[0] + c.pads[2] < K) || (c.w + c.pads[1] + c.pads[3] < K)) {
            c.pads[0] = c.pads[2] = c.pads[1] = c.pads[3] = K - 1; /* tiny images */
        }
        random_act(&c);
        check_case(&c, it % 2 ? tp : NULL);
    }
    /* c, h, w, K, S, pads top, left, bottom, right: first maps whose planes do not fit the
     * flat path's buffer at once (strips of rows), and rows too wide for it (the row path);
     * then the row kernels' edges (cpu/x86/conv_avx512.c): stride 2 with left pad 0, where a
     * vector's last output reads the column after its 32 (rows of 35 and 67 floats: that
     * column inside the row; 64: past it), each left pad at both strides, odd row counts
     * (a last group of fewer output rows), pads of a whole kernel row at top and bottom */
    static const int64_t fixed[][9] = {{3, 160, 61, 3, 1, 1, 1, 1, 1},
                                       {2, 90, 150, 5, 2, 2, 2, 1, 1},
                                       {3, 75, 97, 5, 1, 0, 3, 4, 2},
                                       {2, 41, 170, 3, 2, 0, 1, 1, 0},
                                       {2, 4, 1300, 3, 1, 1, 1, 1, 1},
                                       {2, 7, 900, 5, 2, 2, 2, 2, 2},
                                       {3, 9, 35, 3, 2, 0, 0, 1, 1},
                                       {2, 8, 67, 3, 2, 1, 0, 0, 1},
                                       {2, 6, 64, 3, 2, 0, 0, 1, 1},
                                       {2, 11, 40, 3, 2, 2, 1, 2, 1},
                                       {2, 10, 41, 3, 2, 1, 2, 0, 0},
                                       {2, 13, 29, 3, 1, 0, 0, 2, 2},
                                       {2, 7, 33, 3, 1, 2, 2, 1, 0},
                                       {2, 9, 30, 5, 1, 4, 3, 0, 1},
                                       {2, 6, 47, 5, 1, 0, 0, 4, 4}};
    for (int it = 0; it < (int)(sizeof fixed / sizeof fixed[0]); it++) {
        ccase c = dw_case(fixed[it], 1);
        check_case(&c, it % 2 ? tp : NULL);
    }
    ti__threadpool_destroy(tp);
    TI_CHECK(g_paths_run[TI__CONV_DW] > 0);
}

TI_TEST(winograd_shapes) {
    ti__threadpool *tp = ti__threadpool_create(NULL, 2);
    for (int it = 0; it < 40; it++) {
        ccase c;
        memset(&c, 0, sizeof c);
        c.n = irand(1, 2);
        c.group = 1;
        c.c = irand(1, 40);
        c.m = irand(1, 40);
        c.h = irand(1, 30);
        c.w = irand(1, 30);
        c.k[0] = c.k[1] = 3;
        c.s[0] = c.s[1] = 1;
        c.d[0] = c.d[1] = 1;
        for (int i = 0; i < 4; i++) c.pads[i] = irand(0, 2);
        if (c.h + c.pads[0] + c.pads[2] < 3) c.pads[0] = c.pads[2] = 1, c.h = TI__MAX(c.h, 1);
        if (c.w + c.pads[1] + c.pads[3] < 3) c.pads[1] = c.pads[3] = 1;
        if (c.h < 2) c.h = 2;
        if (c.w < 2) c.w = 2;
        random_act(&c);
        check_case(&c, it % 2 ? tp : NULL);
    }
    /* sizes a model has: several tile blocks, two images; channel counts around 16 and 32 */
    static const int64_t big[][4] = {{64, 64, 28, 28}, {33, 17, 37, 23}, {16, 48, 57, 9},
                                     {128, 96, 14, 14}};
    for (size_t i = 0; i < sizeof big / sizeof big[0]; i++) {
        ccase c;
        memset(&c, 0, sizeof c);
        c.n = i == 1 ? 2 : 1;
        c.group = 1;
        c.c = big[i][0];
        c.m = big[i][1];
        c.h = big[i][2];
        c.w = big[i][3];
        c.k[0] = c.k[1] = 3;
        c.s[0] = c.s[1] = c.d[0] = c.d[1] = 1;
        c.pads[0] = c.pads[1] = c.pads[2] = c.pads[3] = 1;
        random_act(&c);
        check_case(&c, tp);
    }
    ti__threadpool_destroy(tp);
    TI_CHECK(g_paths_run[TI__CONV_WINO] > 0);
    TI_CHECK(g_wino23_runs > 0);
}

TI_TEST(general_shapes) {
    ti__threadpool *tp = ti__threadpool_create(NULL, 2);
    for (int it = 0; it < 50; it++) {
        ccase c;
        memset(&c, 0, sizeof c);
        c.n = irand(1, 2);
        c.group = irand(1, 3);
        c.c = c.group * irand(1, 12);
        c.m = c.group * irand(1, 12);
        c.k[0] = irand(1, 5);
        c.k[1] = irand(1, 5);
        c.s[0] = irand(1, 3);
        c.s[1] = irand(1, 3);
        c.d[0] = irand(1, 2);
        c.d[1] = irand(1, 2);
        c.h = irand(1, 24);
        c.w = irand(1, 24);
        for (int i = 0; i < 4; i++) c.pads[i] = irand(0, 2);
        if (it % 5 == 0) { /* pointwise: 1x1, stride 1, no pads (the GEMM-on-X path) */
            c.k[0] = c.k[1] = c.s[0] = c.s[1] = 1;
            c.pads[0] = c.pads[1] = c.pads[2] = c.pads[3] = 0;
        }
        int64_t eh = (c.k[0] - 1) * c.d[0] + 1, ew = (c.k[1] - 1) * c.d[1] + 1;
        if (c.h + c.pads[0] + c.pads[2] < eh) c.h = eh;
        if (c.w + c.pads[1] + c.pads[3] < ew) c.w = ew;
        random_act(&c);
        check_case(&c, it % 2 ? tp : NULL);
    }
    /* im2col with more columns than one cache tile (per-thread tiles, two threads) */
    ccase c;
    memset(&c, 0, sizeof c);
    c.n = 1, c.group = 1, c.c = 24, c.m = 20, c.h = 61, c.w = 67;
    c.k[0] = c.k[1] = 3, c.s[0] = c.s[1] = 2, c.d[0] = c.d[1] = 1;
    c.pads[0] = c.pads[1] = c.pads[2] = c.pads[3] = 1;
    c.bias = 1;
    check_case(&c, tp);
    /* kernels wider than im2col copies together (TI__IM2COL_KW): those rows one by one;
     * strides 1 and 2, dilated, padded past the kernel's reach on one side */
    for (int it = 0; it < 2; it++) {
        memset(&c, 0, sizeof c);
        c.n = 1, c.group = 1, c.c = 3, c.m = 5, c.h = 6, c.w = 45;
        c.k[0] = 2, c.k[1] = TI__IM2COL_KW + 3, c.s[0] = 1, c.s[1] = 1 + it, c.d[0] = 1;
        c.d[1] = 1 + it;
        c.pads[0] = 1, c.pads[1] = 2 + 5 * it, c.pads[2] = 0, c.pads[3] = 19;
        c.bias = 1;
        check_case(&c, it ? tp : NULL);
    }
    ti__threadpool_destroy(tp);
    TI_CHECK(g_paths_run[TI__CONV_1X1] > 0);
}

/* The transposed GEMM of few positions and many channels (ti__conv_ct_ok: Y^T = X^T W^T on
 * W^T packed as the SIMD kernels' B panel). For each SIMD ISA forced: the panels packed
 * for it, the IM2COL path (and 1X1 for pointwise cases) at one and two threads with the
 * scratch ti__conv_scratch asks for, against the reference and bit for bit against the
 * plain GEMM (same products, same order; but for AVX-512's separate last column of
 * N % 16 == 1 positions); then with panels of another ISA's width (an ISA
 * forced after planning) and with too little scratch for Y^T, where the plain GEMM runs.
 * wide: a map of 64 positions or more, which the transposed GEMM takes only under the ISAs
 * whose column slivers it leaves a tenth idle (AVX-512's 32 lanes; run under those only).
 * Under AVX2 the maps whose positions fill 85 % of its plain GEMM's lanes (a last sliver of
 * at most 8 columns is one vector), K below 512, go by the plain GEMM: skipped there. */
static int g_ct_wide_runs; /* of the wide cases, under AVX-512 */
static int g_ct_col_own; /* runs where a GEMM's last column is summed in its own order */
#ifdef TI__X86_SIMD
static int g_ct_avx2_runs, g_ct_avx2_plain; /* narrow cases under AVX2: transposed, plain */
static int avx2_plain(const ti__convp *p) {
    int64_t sp = (int64_t)p->out_sp, lanes = (sp + 7) / 8 * 8, full = (sp + 15) / 16 * 16;
    if (sp % 16 > 8 || sp % 16 == 0) lanes = full;
    return sp < 64 && sp * 100 >= 85 * lanes;
}
#endif
static int g_ct_thread_checks; /* transposed runs on a pool compared with 1 thread's bits */
static void ct_case(const ccase *cc, ti__threadpool *tp, int wide) {
    conv_rig r;
    if (!rig_init(&r, cc)) {
        TI_CHECK(!"case set-up failed");
        rig_free(&r);
        return;
    }
    TI_CHECK(wide || ti__conv_ct_ok(&r.p) || ti__sgemm_panel_nr() == 16);
    size_t ny = ti__numel(&r.y), kdim = (size_t)(r.p.cg * (int64_t)r.p.kprod);
    float *plain = (float *)malloc(ny * sizeof(float) + 4);
    float *one = (float *)malloc(ny * sizeof(float) + 4); /* the transposed path, 1 thread */
    float *panels[3] = {NULL, NULL, NULL};
    int nrs[3] = {0, 0, 0};
    TI_REQUIRE(plain != NULL && one != NULL);
    for (int i = 1; i < 3; i++) { /* panels for each SIMD ISA the CPU has */
        if (ti__cpu_force_isa(ISAS[i]) != ISAS[i]) continue;
        nrs[i] = ti__sgemm_panel_nr();
        size_t per = ti__sgemm_bpanel_floats(kdim, (size_t)r.p.mg, (size_t)nrs[i]);
        panels[i] = (float *)malloc((size_t)r.p.group * per * sizeof(float));
        TI_REQUIRE(panels[i] != NULL);
        for (int64_t g = 0; g < r.p.group; g++)
            ti__sgemm_pack_bpanel(1, kdim, (size_t)r.p.mg,
                                  (const float *)r.w.data + (size_t)g * (size_t)r.p.mg * kdim, kdim,
                                  (size_t)nrs[i], panels[i] + (size_t)g * per);
    }
    for (int i = 1; i < 3; i++) {
        if (panels[i] == NULL) continue;
        ti__cpu_force_isa(ISAS[i]);
        const char *name = ti__cpu_isa_name(ISAS[i]);
        if (wide) { /* AVX-512 (x86): the only kernels of 32 lanes (AVX2 16, NEON 12) */
#ifdef TI__X86_SIMD
            TI_CHECK_EQ_INT(ti__conv_ct_ok(&r.p), ISAS[i] == TI__ISA_AVX512);
#else
            TI_CHECK_EQ_INT(ti__conv_ct_ok(&r.p), 0);
#endif
            if (!ti__conv_ct_ok(&r.p)) continue;
            g_ct_wide_runs++;
        }
#ifdef TI__X86_SIMD
        if (!wide && ISAS[i] == TI__ISA_AVX2) {
            TI_CHECK_EQ_INT(ti__conv_ct_ok(&r.p), !avx2_plain(&r.p));
            if (!ti__conv_ct_ok(&r.p)) {
                g_ct_avx2_plain++;
                continue;
            }
            g_ct_avx2_runs++;
        }
#endif
        int path = ti__conv_path(&r.k, &r.p);
        for (int t = 0; t < 2; t++) {
            ti__threadpool *use = t ? tp : NULL;
            r.k.tp = use;
            r.node.packed_kind = TI__PACK_NONE;
            r.node.packed = NULL;
            /* the plain GEMM without the workspace a 1x1 conv deeper than a k block takes:
             * the stack buffers' k blocks then, which are the transposed GEMM's, so the
             * same sums in the same order */
            size_t plain_need = ti__conv_scratch(&r.k);
            if (path == TI__CONV_1X1)
                plain_need -= ti__conv_1x1_ws_floats(&r.k, &r.p) * sizeof(float);
            TI_CHECK_EQ_INT(run_path(&r, path, use, plain_need, name), 0);
            memcpy(plain, r.y.data, ny * sizeof(float));
            for (int j = 1; j < 3; j++) { /* the panels of this ISA, then of the other */
                if (panels[j] == NULL) continue;
                r.node.packed_kind = TI__PACK_BPANEL;
                r.node.packed = panels[j];
                r.node.packed_arg = nrs[j];
                r.node.packed_bytes = (size_t)r.p.group *
                                      ti__sgemm_bpanel_floats(kdim, (size_t)r.p.mg, (size_t)nrs[j]) *
                                      sizeof(float);
                TI_CHECK_EQ_INT(ti__conv_ct_panels(&r.k, &r.p) != NULL, nrs[j] == nrs[i]);
                size_t need = ti__conv_scratch(&r.k);
                TI_CHECK(need >= plain_need + ny / (size_t)r.p.n / (size_t)r.p.group * sizeof(float) ||
                         nrs[j] != nrs[i]);
                if (path == TI__CONV_1X1) /* the other width's panels: the plain GEMM, as above */
                    need -= ti__conv_1x1_ws_floats(&r.k, &r.p) * sizeof(float);
                TI_CHECK_EQ_INT(run_path(&r, path, use, need, name), 0);
                /* the plain GEMM's bits, except where one of the two GEMMs computes a last
                 * column of its own in another order of sums: AVX-512 the plain one's (N =
                 * positions, N % 16 == 1) by a dot product, AVX2 either one's in four
                 * chains over k (ti__k256_col1: positions, or channels for the transposed
                 * GEMM, = 16 q + 1); there run_path's bound holds */
                int col_own = ISAS[i] == TI__ISA_AVX512
                                  ? r.p.out_sp % 16 == 1 && r.p.out_sp >= 16
                                  : (r.p.out_sp % 16 == 1 && r.p.out_sp >= 16) ||
                                        (r.p.mg % 16 == 1 && r.p.mg >= 16);
                /* and a projection summed in parts of K, whose k blocks are the parts' */
                if (path == TI__CONV_1X1 && ti__conv_ct_parts(&r.p) > 1) col_own = 1;
                if (!col_own) TI_CHECK(memcmp(plain, r.y.data, ny * sizeof(float)) == 0);
                g_ct_col_own += col_own;
                /* and on threads the bits of 1 thread: the thread count changes no sum */
                if (j == i && t == 0) memcpy(one, r.y.data, ny * sizeof(float));
                if (j == i && t == 1) {
                    TI_CHECK(memcmp(one, r.y.data, ny * sizeof(float)) == 0);
                    g_ct_thread_checks++;
                }
                if (path == TI__CONV_IM2COL) { /* no room for Y^T: the plain GEMM */
                    TI_CHECK_EQ_INT(run_path(&r, path, use, plain_need, name), 0);
                    TI_CHECK(memcmp(plain, r.y.data, ny * sizeof(float)) == 0);
                }
                g_ct_runs += nrs[j] == nrs[i];
            }
        }
    }
    ti__cpu_force_isa(-1);
    r.node.packed_kind = TI__PACK_NONE;
    r.node.packed = NULL;
    for (int i = 0; i < 3; i++) free(panels[i]);
    free(plain);
    free(one);
    rig_free(&r);
}

TI_TEST(transposed_gemm_few_positions) {
    ti__threadpool *tp = ti__threadpool_create(NULL, 2);
    for (int it = 0; it < 8; it++) {
        ccase c;
        memset(&c, 0, sizeof c);
        c.n = irand(1, 2);
        c.group = it == 3 ? 2 : 1;
        c.k[0] = c.k[1] = it % 3 == 0 ? 1 : 3;
        /* K >= 64 (TI__CONV_CT_MIN_K), the odd cases below 256 */
        c.c = c.group * (c.k[0] == 1 ? (it == 0 ? irand(256, 300) : irand(64, 255)) : irand(8, 40));
        c.m = c.group * (it % 2 ? 256 : irand(256, 300));
        c.s[0] = c.s[1] = c.d[0] = c.d[1] = 1;
        if (c.k[0] == 3)
            for (int i = 0; i < 4; i++) c.pads[i] = irand(0, 1);
        c.h = irand(2, 7);
        c.w = irand(2, 9);
        int64_t oh = c.h + c.pads[0] + c.pads[2] - c.k[0] + 1;
        int64_t ow = c.w + c.pads[1] + c.pads[3] - c.k[1] + 1;
        if (oh * ow < 4 || oh * ow >= 64) {
            c.h = c.k[0] == 3 ? 7 : 5;
            c.w = 7;
            for (int i = 0; i < 4; i++) c.pads[i] = c.k[0] == 3;
        }
        random_act(&c);
        ct_case(&c, tp, 0);
    }
    { /* 289 channels (16 q + 1): the transposed GEMM's last column by AVX2's column kernel
       * (found on a Xeon, where the draws above gave it); its own draws, the later ones kept */
        unsigned seed = g_seed;
        ccase c;
        memset(&c, 0, sizeof c);
        c.n = 2, c.group = 1, c.c = 177, c.m = 289, c.h = 3, c.w = 6;
        c.k[0] = c.k[1] = c.s[0] = c.s[1] = c.d[0] = c.d[1] = 1;
        ct_case(&c, tp, 0);
        g_seed = seed;
    }
    /* wider maps (TI__CONV_CT_WIDE_SP): 1x1 and 3x3 / 2 (as ResNet-18's 128 -> 256) with K
     * from 256, out 14 x 14, 13 x 13 and 9 x 15 positions, where AVX-512's slivers of 32
     * positions leave a tenth of their lanes idle */
    for (int it = 0; it < 4; it++) {
        ccase c;
        memset(&c, 0, sizeof c);
        c.n = irand(1, 2);
        c.group = it == 3 ? 2 : 1;
        c.k[0] = c.k[1] = it % 2 ? 3 : 1;
        c.c = c.group * (c.k[0] == 1 ? irand(256, 300) : irand(29, 40));
        c.m = c.group * irand(64, 150);
        c.s[0] = c.s[1] = c.k[0] == 3 ? 2 : 1;
        c.d[0] = c.d[1] = 1;
        for (int i = 0; i < 4; i++) c.pads[i] = c.k[0] == 3;
        int oh = it < 2 ? 14 : it == 2 ? 13 : 9, ow = it < 2 ? 14 : it == 2 ? 13 : 15;
        c.h = c.k[0] == 3 ? 2 * oh - 1 : oh;
        c.w = c.k[0] == 3 ? 2 * ow - 1 : ow;
        random_act(&c);
        ct_case(&c, tp, 1);
    }
    /* many output channels on a wide map go by the plain GEMM (TI__CONV_CT_WIDE_MAX_M):
     * SqueezeNet's classifier, 512 -> 1000 at 13 x 13, and the edge, 511 and 512 */
    for (int i = 0; i < 3; i++) {
        static const int64_t ms[3] = {511, 512, 1000};
        ccase c;
        memset(&c, 0, sizeof c);
        c.n = 1, c.group = 1, c.c = 512, c.m = ms[i], c.h = c.w = 13;
        c.k[0] = c.k[1] = c.s[0] = c.s[1] = c.d[0] = c.d[1] = 1;
        conv_rig r;
        if (!rig_init(&r, &c)) {
            TI_CHECK(!"case set-up failed");
            rig_free(&r);
            continue;
        }
#ifdef TI__X86_SIMD
        if (ti__cpu_force_isa(TI__ISA_AVX512) == TI__ISA_AVX512)
            TI_CHECK_EQ_INT(ti__conv_ct_ok(&r.p), ms[i] < 512);
        ti__cpu_force_isa(-1);
#endif
        rig_free(&r);
    }
    ti__threadpool_destroy(tp);
    /* on a CPU without SIMD kernels nothing packs panels: the count stays 0 */
    TI_CHECK(g_ct_runs > 0 || ti__cpu_isa_best() == TI__ISA_SCALAR);
#ifdef TI__X86_SIMD
    TI_CHECK(g_ct_wide_runs > 0 || ti__cpu_isa_best() < TI__ISA_AVX512);
    /* AVX2 kept both kinds of narrow map */
    TI_CHECK((g_ct_avx2_runs > 0 && g_ct_avx2_plain > 0) || ti__cpu_isa_best() < TI__ISA_AVX2);
    TI_CHECK(g_ct_col_own > 0 || ti__cpu_isa_best() < TI__ISA_AVX2); /* the 289 channels */
#endif
}

/* A projection's transposed GEMM in parts of K (ti__conv_ct_parts): how many parts each
 * shape takes (2 and 3 equal parts of whole vectors, none where K does not split so, for
 * expansions, or below 128 channels a part); then, for each SIMD ISA with panels, the 1X1
 * path on pools of 1 to 4 threads (parts on a thread each, and row tiles of them on 3 and
 * 4), every activation: near the reference (run_path) and the same bits on every pool
 * (the parts are the 1-thread GEMM's k blocks, summed in the same order), also with scratch
 * for one part's Y^T only (then the threaded GEMM of all parts). */
static int g_parts_runs;
TI_TEST(transposed_gemm_parts_of_k) {
    static const struct { int64_t c, m, h, parts; } cases[] = {
        {256, 64, 7, 2},    /* MobileNetV2-like projections: 7 x 7, 14 x 14, 13 x 13 */
        {384, 96, 14, 2},   {576, 160, 13, 2}, {1152, 192, 7, 3}, /* 3 parts of 384 */
        {2048, 96, 5, 4},   /* 4 of 512 */
        {300, 64, 7, 1},    /* 300 = 2 x 150: not whole vectors of 16 */
        {256, 129, 7, 1},   /* an expansion: more than half the input channels out */
        {224, 64, 7, 1},    /* 2 x 112: below 128 a part */
    };
    ti__threadpool *pools[5] = {NULL, NULL, NULL, NULL, NULL};
    for (int t = 2; t <= 4; t++) pools[t] = ti__threadpool_create(NULL, t);
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        ccase cc;
        memset(&cc, 0, sizeof cc);
        cc.n = 1, cc.group = 1, cc.c = cases[ci].c, cc.m = cases[ci].m;
        cc.h = cc.w = cases[ci].h;
        cc.k[0] = cc.k[1] = cc.s[0] = cc.s[1] = cc.d[0] = cc.d[1] = 1;
        cc.bias = (int)(ci % 2 == 0);
        static const int acts[] = {TI__ACT_NONE, TI__ACT_RELU, TI__ACT_CLIP, TI__ACT_SILU,
                                   TI__ACT_HARD_SWISH};
        cc.act = acts[ci % 5];
        cc.act_a = cc.act == TI__ACT_CLIP ? -0.25f : 0.0f;
        cc.act_b = cc.act == TI__ACT_CLIP ? 0.5f : 0.0f;
        conv_rig r;
        if (!rig_init(&r, &cc)) {
            TI_CHECK(!"case set-up failed");
            rig_free(&r);
            continue;
        }
        TI_CHECK_EQ_INT(ti__conv_ct_parts(&r.p), cases[ci].parts);
        size_t ny = ti__numel(&r.y), kdim = (size_t)r.p.cg;
        float *one = (float *)malloc(ny * sizeof(float) + 4), *panel = NULL;
        TI_REQUIRE(one != NULL);
        for (int i = 1; i < 3; i++) {
            if (ti__cpu_force_isa(ISAS[i]) != ISAS[i]) continue;
            int nr = ti__sgemm_panel_nr();
            size_t per = ti__sgemm_bpanel_floats(kdim, (size_t)r.p.mg, (size_t)nr);
            free(panel);
            panel = (float *)malloc(per * sizeof(float));
            TI_REQUIRE(panel != NULL);
            ti__sgemm_pack_bpanel(1, kdim, (size_t)r.p.mg, (const float *)r.w.data, kdim,
                                  (size_t)nr, panel);
            r.node.packed_kind = TI__PACK_BPANEL;
            r.node.packed = panel;
            r.node.packed_arg = nr;
            r.node.packed_bytes = per * sizeof(float);
            if (ti__conv_ct_panels(&r.k, &r.p) == NULL) continue; /* AVX2 on 7 x 7: plain */
            const char *name = ti__cpu_isa_name(ISAS[i]);
            for (int t = 1; t <= 4; t++) {
                r.k.tp = pools[t];
                size_t need = ti__conv_scratch(&r.k);
                TI_CHECK_EQ_INT(run_path(&r, TI__CONV_1X1, pools[t], need, name), 0);
                if (t == 1) memcpy(one, r.y.data, ny * sizeof(float));
                else if (memcmp(one, r.y.data, ny * sizeof(float)) != 0) {
                    TI_CHECK(!"parts of K: other bits than on 1 thread");
                    printf("  %s %lld -> %lld at %lldx%lld, %d threads\n", name,
                           (long long)cc.c, (long long)cc.m, (long long)cc.h, (long long)cc.w,
                           t);
                }
                g_parts_runs += cases[ci].parts > 1 && t > 1;
                if (cases[ci].parts > 1 && t == 2) { /* scratch for one Y^T: all parts in one
                                                       threaded GEMM, the same sums */
                    size_t one_part = r.p.out_sp * ti__conv_ct_ld(&r.p) * sizeof(float);
                    TI_CHECK(need >= (size_t)cases[ci].parts * one_part);
                    TI_CHECK_EQ_INT(run_path(&r, TI__CONV_1X1, pools[t],
                                             need - (size_t)(cases[ci].parts - 1) * one_part,
                                             name), 0);
                    TI_CHECK(memcmp(one, r.y.data, ny * sizeof(float)) == 0);
                }
            }
        }
        ti__cpu_force_isa(-1);
        r.node.packed_kind = TI__PACK_NONE;
        r.node.packed = NULL;
        free(panel);
        free(one);
        rig_free(&r);
    }
    for (int t = 2; t <= 4; t++) ti__threadpool_destroy(pools[t]);
    TI_CHECK(g_parts_runs > 0 || ti__cpu_isa_best() == TI__ISA_SCALAR);
}

/* A Conv node with pads 1 on every side and `group` groups (its kernel from the weights). */
static void conv3_node(ob_model *mb, const char *name, const char *in, const char *out,
                       int64_t group) {
    ob_buf at = {0, 0, 0};
    int64_t pads[4] = {1, 1, 1, 1};
    ob_attr_ints(&at, "pads", 4, pads);
    ob_attr_int(&at, "group", group);
    ob_node_attrs(mb, "Conv", name, in, out, &at);
}

/* A Conv (3x3, pads 1) + Relu model, and a depthwise one, through sessions at 1 and 2
 * threads: the plan packs the Winograd weights (and only for the 3x3 conv), the outputs
 * match the reference. */
static unsigned char *conv_model(int64_t c, int64_t m, int64_t h, int64_t w, int64_t group,
                                 const float *wt, const float *bias, size_t *size) {
    ob_model mb;
    ob_init(&mb, 13);
    int64_t xd[4] = {1, c, h, w}, wd[4] = {m, c / group, 3, 3}, bd[1] = {m}, yd[4] = {1, m, h, w};
    ob_input(&mb, "x", OB_FLOAT, 4, xd);
    ob_init_f32(&mb, "w", 4, wd, wt);
    ob_init_f32(&mb, "b", 1, bd, bias);
    conv3_node(&mb, "conv", "x,w,b", "t", group);
    ob_node(&mb, "Relu", "relu", "t", "y");
    ob_output(&mb, "y", OB_FLOAT, 4, yd);
    return ob_finish(&mb, size);
}

/* expect: the TI__PACK_* kind the planner gives the conv (TI__PACK_NONE: none) */
static void session_case(int64_t c, int64_t m, int64_t h, int64_t w, int64_t group,
                         int expect) {
    int expect_wino = expect == TI__PACK_WINO43 || expect == TI__PACK_WINO23;
    ccase cc;
    memset(&cc, 0, sizeof cc);
    cc.n = 1, cc.c = c, cc.m = m, cc.h = h, cc.w = w, cc.group = group;
    cc.k[0] = cc.k[1] = 3, cc.s[0] = cc.s[1] = cc.d[0] = cc.d[1] = 1;
    cc.pads[0] = cc.pads[1] = cc.pads[2] = cc.pads[3] = 1;
    cc.bias = 1;
    cc.act = TI__ACT_RELU;
    conv_rig r;
    TI_REQUIRE(rig_init(&r, &cc));
    size_t size;
    unsigned char *bytes = conv_model(c, m, h, w, group, (const float *)r.w.data,
                                      (const float *)r.b.data, &size);
    ti_error err;
    ti_model *mod = ti_model_load_memory(bytes, size, NULL, &err);
    TI_REQUIRE(mod != NULL);
    for (int threads = 1; threads <= 2; threads++) {
        ti_session_desc d;
        memset(&d, 0, sizeof d);
        d.num_threads = threads;
        d.backend = TI_BACKEND_CPU;
        ti_session *s = ti_session_create(mod, &d, &err);
        TI_CHECK(s != NULL);
        if (s == NULL) {
            printf("  session: %s\n", err.message);
            continue;
        }
        int packed = 0, kind = TI__PACK_NONE;
        for (int n = 0; n < s->n_nodes; n++)
            if (s->nodes[n].packed_kind != TI__PACK_NONE) {
                packed++;
                kind = s->nodes[n].packed_kind;
            }
        TI_CHECK_EQ_INT(packed, expect != TI__PACK_NONE);
        TI_CHECK_EQ_INT(kind, expect);
        memcpy(ti_session_input(s, 0)->data, r.x.data, r.x.size_bytes);
        TI_CHECK_EQ_INT(ti_session_run(s, &err), TI_OK);
        const float *y = (const float *)ti_session_output(s, 0)->data;
        size_t ny = ti__numel(&r.y), K = (size_t)(c / group) * 9;
        int bad = 0;
        for (size_t i = 0; i < ny; i++) {
            double tol = tol_factor(expect_wino ? TI__CONV_WINO : TI__CONV_IM2COL) *
                             (double)(K + 4) * r.scale[i] + 2.4e-7 * fabs(r.ref[i]);
            if (!(fabs((double)y[i] - r.ref[i]) <= tol) && bad++ == 0)
                printf("  session C=%lld M=%lld g=%lld threads=%d: y[%zu] = %.9g, expected %.9g\n",
                       (long long)c, (long long)m, (long long)group, threads, i, y[i], r.ref[i]);
        }
        TI_CHECK_EQ_INT(bad, 0);
        ti_session_destroy(s);
    }
    ti_model_free(mod);
    free(bytes);
    rig_free(&r);
}

/* 1 when a group of mg output channels gets A panels of mr-row slivers: at least one
 * sliver, and not two whose second has 1 to 3 rows (ti__conv_apanel_ok's rule). */
static int panel_rows(int64_t mg, int mr) {
    return mr > 0 && mg >= mr && !(mg <= 2 * mr && mg % mr != 0 && mg % mr <= 3);
}

TI_TEST(sessions_pack_and_match) {
    session_case(64, 64, 29, 31, 1, TI__PACK_WINO43); /* Winograd: packed at planning */
    session_case(32, 24, 29, 31, 1, TI__PACK_WINO43); /* from 8 channels */
    /* F(2x2, 3x3) where F(4x4) has 4 tiles, from 128 channels (ResNet-18's last convs) */
    session_case(128, 144, 7, 7, 1, TI__PACK_WINO23);
    /* below the channel threshold: the few-channel kernel on weights packed at planning
     * where the ISA has one (AVX-512, AVX2), else im2col */
    session_case(6, 24, 29, 31, 1,
                 ti__dw_pick_isa()->fewc[0] != NULL ? TI__PACK_FEWC : TI__PACK_NONE);
    session_case(24, 24, 19, 21, 24, TI__PACK_NONE);   /* depthwise */
    /* im2col with weight rows of 1152 floats (L1 set conflicts): packed at planning as the
     * SIMD GEMM's A panel (slivers of its rows: 6 AVX2, 14 AVX-512, 8 NEON) where a group
     * has that many output channels, else transposed; one group and two (each group's block
     * on its own: 8 channels a group) */
    /* no panel where its second sliver would have 1 to 3 rows (16 = 14 + 2 on AVX-512, 8 =
     * 6 + 2 on AVX2): the GEMM reads the weights in place, 8 + 8 rows; with 4 and more (24 =
     * 14 + 10; AVX2's 6 + 6 + 4; NEON's 8 + 8) the panel */
    int mr = ti__sgemm_panel_mr();
    session_case(128, 40, 5, 7, 1, panel_rows(40, mr) ? TI__PACK_APANEL : TI__PACK_ATRANS);
    session_case(256, 16, 6, 5, 2, panel_rows(8, mr) ? TI__PACK_APANEL : TI__PACK_ATRANS);
    int rows_conflict = ti__sgemm_set_conflicts(16 * 9) ? TI__PACK_ATRANS : TI__PACK_NONE;
    session_case(16, 16, 6, 5, 1, panel_rows(16, mr) ? TI__PACK_APANEL : rows_conflict);
    session_case(16, 24, 6, 5, 1, panel_rows(24, mr) ? TI__PACK_APANEL : rows_conflict);
    /* few products (K 18): a panel with AVX-512's kernels only (TI__CONV_APANEL_MIN_K_512),
     * the weights as they are (or transposed where their rows conflict) with the others' */
    const ti__sgemm_isa *gi = ti__sgemm_pick_isa();
    int k18 = ti__sgemm_set_conflicts(18) ? TI__PACK_ATRANS : TI__PACK_NONE;
    session_case(2, 28, 6, 5, 1, gi != NULL && gi->isa == TI__ISA_AVX512 ? TI__PACK_APANEL : k18);
    /* 7 x 7 and 6 x 5 maps of 64 channels a group and more: W^T packed as the SIMD GEMM's B panel
     * for the transposed GEMM (without SIMD kernels: no panel, and 288-float rows are free
     * of conflicts, so nothing) */
    int nr = ti__sgemm_panel_nr(), ct = nr > 0 ? TI__PACK_BPANEL : TI__PACK_NONE;
    /* AVX2 (16 columns a sliver, a last one of one column as a column) runs these three by
     * the plain GEMM on an A panel: 49 and 30 positions fill 49 and 32 of its lanes */
    int avx2_plain = nr == 16 ? TI__PACK_APANEL : ct;
    session_case(32, 256, 7, 7, 1, avx2_plain);
    session_case(64, 512, 6, 5, 2, avx2_plain);
    session_case(96, 64, 7, 7, 1, avx2_plain); /* from 64; K 864 */
    session_case(32, 256, 5, 5, 1, ct); /* 25 positions: 32 lanes of AVX2's plain GEMM */
}

/* The stride-2 row copy of im2col (ti__copy_s2_pick; AVX2 and AVX-512 forms in cpu/x86/conv_*.c,
 * NEON in cpu/arm/conv_neon.c)
 * with each ISA forced: dst[t] = src[2 t] for every length 0..70, from a source of exactly
 * 2 (n - 1) + 1 floats on the heap (so ASan sees a read past it) into a destination with a
 * guard after it. The scalar ISA has none (NULL) and leaves the copy to the caller's loop. */
TI_TEST(stride2_copy_on_every_isa) {
    for (int ii = 0; ii < 3; ii++) {
        if (ti__cpu_force_isa(ISAS[ii]) != ISAS[ii]) continue;
        for (size_t n = 0; n <= 70; n++) {
            size_t ns = n ? 2 * (n - 1) + 1 : 1;
            float *src = (float *)malloc(ns * sizeof(float));
            float *dst = (float *)malloc((n + 4) * sizeof(float));
            TI_REQUIRE(src != NULL && dst != NULL);
            for (size_t i = 0; i < ns; i++) src[i] = frand();
            for (size_t i = 0; i < n + 4; i++) dst[i] = -7.0f;
            ti__copy_s2_fn copy = ti__copy_s2_pick();
            TI_CHECK_EQ_INT(copy != NULL, ISAS[ii] != TI__ISA_SCALAR);
            if (copy != NULL) copy(dst, src, n);
            else
                for (size_t t = 0; t < n; t++) dst[t] = src[2 * t];
            int bad = 0;
            for (size_t t = 0; t < n; t++)
                if (dst[t] != src[2 * t] && bad++ == 0)
                    printf("  %s n %zu: dst[%zu] = %g, expected %g\n", ti__cpu_isa_name(ISAS[ii]),
                           n, t, dst[t], src[2 * t]);
            for (size_t t = n; t < n + 4; t++)
                if (dst[t] != -7.0f && bad++ == 0)
                    printf("  %s n %zu: wrote dst[%zu]\n", ti__cpu_isa_name(ISAS[ii]), n, t);
            TI_CHECK_EQ_INT(bad, 0);
            free(src);
            free(dst);
        }
    }
    ti__cpu_force_isa(-1);
}

/* The flat path's tap kernel (ti__dw_taps_fn) on its own, each ISA forced: every n its
 * contract allows up to 256 (multiples of 16), so every block a call can end on (AVX2:
 * blocks of 8 vectors of 8, then one of 2 to 10), 9 and 25 taps at scattered offsets, with
 * and without the clamp, against a double sum within the float bound; nothing past n
 * written. A block size no model reaches would otherwise go untested. */
TI_TEST(flat_taps_every_block_count) {
    enum { CAP = 256, SPAN = CAP + 64 };
    float *in = (float *)malloc(SPAN * 25 * sizeof(float));
    float *y = (float *)malloc((CAP + 16) * sizeof(float));
    TI_REQUIRE(in != NULL && y != NULL);
    for (size_t i = 0; i < SPAN * 25; i++) in[i] = frand();
    for (int ii = 0; ii < 3; ii++) {
        if (ti__cpu_force_isa(ISAS[ii]) != ISAS[ii]) continue;
        const ti__dw_isa *isa = ti__dw_pick_isa();
        for (int taps = 9; taps <= 25; taps += 16)
            for (int clamp = 0; clamp < 2; clamp++)
                for (size_t n = 16; n <= CAP; n += 16) {
                    const float *x[25];
                    float w[25], bias = frand(), lo = -0.5f, hi = 0.75f;
                    for (int t = 0; t < taps; t++) {
                        x[t] = in + (size_t)t * SPAN + urand() % 61;
                        w[t] = frand();
                    }
                    for (size_t i = 0; i < CAP + 16; i++) y[i] = 1234.5f;
                    isa->taps(y, n, x, w, taps, bias, clamp, lo, hi);
                    int bad = 0;
                    for (size_t i = 0; i < CAP + 16; i++) {
                        double want = 1234.5, scale = 0.0;
                        if (i < n) {
                            want = bias, scale = fabs(bias);
                            for (int t = 0; t < taps; t++) {
                                want += (double)w[t] * x[t][i];
                                scale += fabs((double)w[t] * x[t][i]);
                            }
                            if (clamp) want = want < lo ? lo : want > hi ? hi : want;
                        }
                        double tol = 2.5e-7 * (taps + 4) * scale;
                        if (!(fabs((double)y[i] - want) <= tol) && bad++ == 0)
                            printf("  %s taps %d clamp %d n %zu: y[%zu] = %.9g, expected %.9g\n",
                                   ti__cpu_isa_name(ISAS[ii]), taps, clamp, n, i, y[i], want);
                    }
                    TI_CHECK_EQ_INT(bad, 0);
                }
    }
    ti__cpu_force_isa(-1);
    free(in);
    free(y);
}

/* The depthwise row kernels (ti__dw_rows_fn, the ISAs that have them: AVX2 and AVX-512,
 * both strides) on their own, against a double sum within the float bound: every
 * row width from 1 to 70 and 112, K 3 and 5, R 1 to 4 output rows (stride 2: K 3 and R 1
 * and 2 where the ISA's rows_s2_k5r4 is 0), every left pad the contract allows, padding rows (NULL) at the top or bottom,
 * clamp on and off; nothing written past n outputs of a row nor in the rows between. */
TI_TEST(depthwise_row_kernels_every_width) {
    enum { WMAX = 112, LDY = WMAX + 24 };
    float *xin = (float *)malloc(11 * WMAX * sizeof(float));
    float *y = (float *)malloc(4 * LDY * sizeof(float));
    TI_REQUIRE(xin != NULL && y != NULL);
    for (int i = 0; i < 11 * WMAX; i++) xin[i] = frand();
    int ran = 0;
    for (int ii = 1; ii < 3; ii++) {
        if (ti__cpu_force_isa(ISAS[ii]) != ISAS[ii]) continue;
        const ti__dw_isa *isa = ti__dw_pick_isa();
        for (int S = 1; S <= 2; S++) {
            ti__dw_rows_fn fn = isa->rows[S == 2];
            if (fn == NULL) continue;
            ran++;
            for (int K = 3; K <= (S == 1 || isa->rows_s2_k5r4 ? 5 : 3); K += 2)
                for (int R = 1; R <= (S == 1 || isa->rows_s2_k5r4 ? 4 : 2); R++)
                    for (int64_t W = 1; W <= WMAX;
                         W = W < 70 ? W + 1 : W < WMAX ? WMAX : WMAX + 1)
                        for (int64_t pl = 0; pl < (S == 1 ? K : 3); pl++) {
                            int64_t n = (W + 2 * pl - K) / S + 1;
                            if (n < 1) continue;
                            int nrows = S * (R - 1) + K, pad = (int)(urand() % 3);
                            const float *xr[11];
                            for (int r = 0; r < nrows; r++) { /* 1: top row, 2: bottom row */
                                int none = (pad == 1 && r == 0) || (pad == 2 && r == nrows - 1);
                                xr[r] = none ? NULL : xin + (size_t)r * WMAX;
                            }
                            float w[25], bias = frand(), lo = -0.6f, hi = 0.7f;
                            for (int t = 0; t < K * K; t++) w[t] = frand();
                            int clamp = (int)(urand() % 2);
                            for (int i = 0; i < 4 * LDY; i++) y[i] = 1234.5f;
                            fn(y, LDY, K, R, (size_t)n, xr, W, pl, w, bias, clamp, lo, hi);
                            int bad = 0;
                            for (int k = 0; k < 4; k++)
                                for (int64_t o = 0; o < LDY; o++) {
                                    double want = 1234.5, scale = 0.0;
                                    if (k < R && o < n) {
                                        want = bias, scale = fabs(bias);
                                        for (int r = 0; r < K; r++)
                                            for (int q = 0; q < K; q++) {
                                                const float *row = xr[S * k + r];
                                                int64_t col = S * o - pl + q;
                                                if (row == NULL || col < 0 || col >= W) continue;
                                                double v = (double)w[r * K + q] * row[col];
                                                want += v;
                                                scale += fabs(v);
                                            }
                                        if (clamp) want = want < lo ? lo : want > hi ? hi : want;
                                    }
                                    double got = y[k * LDY + o];
                                    if (!(fabs(got - want) <= 2.5e-7 * (K * K + 4) * scale) &&
                                        bad++ == 0)
                                        printf("  %s S %d K %d R %d W %lld pl %lld pad %d: "
                                               "y[%d][%lld] = %.9g, expected %.9g\n",
                                               ti__cpu_isa_name(ISAS[ii]), S, K, R, (long long)W,
                                               (long long)pl, pad, k, (long long)o, got, want);
                                }
                            TI_CHECK_EQ_INT(bad, 0);
                        }
        }
    }
    ti__cpu_force_isa(-1);
    free(xin);
    free(y);
    if (ran == 0) TI_SKIP("no depthwise row kernels on this CPU");
}

/* The small-plane path (cpu/conv_fast.c; AVX-512's masked loads): 7 x 7-ish maps at
 * stride 1 with OW == W, up to 256 outputs at stride 2, symmetric and TF-SAME pads, odd
 * sizes, 1 x 1 and one-row maps, and shapes just past what it takes (the flat path then).
 * Checked on every ISA as above; under AVX-512 each case must take the path it is listed
 * for. c, h, w, K, S, pads top, left, bottom, right, small (1: the small path) */
TI_TEST(depthwise_small_planes) {
    static const int64_t cases[][10] = {
        {19, 7, 7, 3, 1, 1, 1, 1, 1, 1},   {17, 7, 7, 5, 1, 2, 2, 2, 2, 1},
        {5, 8, 8, 3, 1, 0, 2, 2, 0, 1},    {3, 5, 9, 5, 1, 4, 1, 0, 3, 1},
        {2, 1, 1, 3, 1, 1, 1, 1, 1, 1},    {3, 1, 13, 5, 1, 2, 2, 2, 2, 1},
        {4, 6, 10, 3, 1, 2, 1, 0, 1, 1},   {21, 14, 14, 3, 2, 1, 1, 1, 1, 1},
        {20, 14, 14, 5, 2, 2, 2, 2, 2, 1}, {9, 14, 14, 3, 2, 0, 0, 1, 1, 1},
        {6, 13, 13, 3, 2, 1, 1, 1, 1, 1},  {5, 15, 9, 5, 2, 0, 3, 4, 1, 1},
        {3, 28, 28, 3, 2, 1, 1, 1, 1, 1},  {2, 3, 31, 3, 2, 2, 1, 0, 1, 1},
        {4, 2, 2, 5, 2, 2, 2, 2, 2, 1},    {3, 8, 9, 3, 1, 1, 1, 1, 1, 0},
        {3, 7, 7, 3, 1, 1, 0, 1, 1, 0},    {2, 34, 34, 3, 2, 1, 1, 1, 1, 0},
        {2, 14, 14, 3, 2, 1, 0, 1, 0, 0},  {2, 7, 7, 3, 1, 0, 0, 0, 0, 0}};
    ti__threadpool *tp = ti__threadpool_create(NULL, 2);
    /* level 2 is AVX-512 on x86 and NEON dot products on aarch64 (no small path there) */
    int small_runs = 0, have512 = ti__cpu_force_isa(TI__ISA_AVX512) == TI__ISA_AVX512 &&
                                  ti__dw_pick_isa()->small != NULL;
    ti__cpu_force_isa(-1);
    for (int it = 0; it < (int)(sizeof cases / sizeof cases[0]); it++) {
        ccase c = dw_case(cases[it], 1 + it % 2);
        if (have512) { /* the path the case is listed for */
            conv_rig r;
            TI_REQUIRE(rig_init(&r, &c));
            ti__cpu_force_isa(TI__ISA_AVX512);
            ti__dw_job j;
            ti__dw_small sp;
            memset(&j, 0, sizeof j);
            j.p = &r.p;
            j.isa = ti__dw_pick_isa();
            int got = ti__dw_small_plan(&j, &sp);
            if (got != (int)cases[it][9])
                printf("  case %d (%lld x %lld, K %lld, S %lld): small path %d, expected %d\n",
                       it, (long long)c.h, (long long)c.w, (long long)c.k[0], (long long)c.s[0],
                       got, (int)cases[it][9]);
            TI_CHECK_EQ_INT(got, (int)cases[it][9]);
            small_runs += got;
            ti__cpu_force_isa(-1);
            rig_free(&r);
        }
        check_case(&c, it % 2 ? tp : NULL);
    }
    ti__threadpool_destroy(tp);
    if (have512) TI_CHECK(small_runs > 0);
    else
        ti_test_skip_note("no AVX-512 here: the small-plane path did not run", __FILE__,
                          __LINE__);
}

/* The lane path (a plane a lane: 16 planes at once on AVX-512, 8 on AVX2): whole blocks and
 * part blocks after them (9, 17, 33, 40 channels; batch 2 on every other case, so that a
 * part block sits between the images' planes), 3x3 and 5x5 at strides 1 and 2, pads of 0 to
 * K - 1 on every side, inputs whose last rows and columns no tap reads (10 x 10 at 3x3 / 2
 * without pads), 1 x 1 and 2 x 2 maps, and AVX2's 14 x 14 outputs. Last two columns: whether
 * the geometry fits the path on AVX-512 and on AVX2 (not: more outputs than the ISA's
 * lane_out_max, a padded input past the buffer at 16 floats a position); under each the
 * planner must take it exactly where it fits and there are as many planes as a call takes.
 * Checked on every ISA by check_case. c, h, w, K, S, pads top, left, bottom, right, fits */
TI_TEST(depthwise_lane_blocks) {
    static const int64_t cases[][11] = {
        {16, 7, 7, 3, 1, 1, 1, 1, 1, 1, 1},   {33, 7, 7, 5, 1, 2, 2, 2, 2, 1, 1},
        {40, 14, 14, 5, 2, 2, 2, 2, 2, 1, 1}, {17, 14, 14, 3, 2, 0, 0, 1, 1, 1, 1},
        {20, 13, 13, 3, 2, 1, 1, 1, 1, 1, 1}, {16, 8, 8, 3, 1, 0, 2, 2, 0, 1, 1},
        {18, 5, 9, 5, 1, 4, 1, 0, 3, 1, 1},   {16, 1, 1, 3, 1, 1, 1, 1, 1, 1, 1},
        {16, 2, 2, 5, 2, 2, 2, 2, 2, 1, 1},   {24, 15, 9, 5, 2, 0, 3, 4, 1, 1, 1},
        {16, 10, 10, 3, 2, 0, 0, 0, 0, 1, 1}, {32, 7, 7, 5, 1, 0, 0, 4, 4, 1, 1},
        {16, 9, 9, 3, 1, 1, 1, 1, 1, 0, 1},   {15, 7, 7, 3, 1, 1, 1, 1, 1, 1, 1},
        {9, 14, 14, 5, 2, 2, 2, 2, 2, 1, 1},  {16, 16, 16, 5, 2, 2, 2, 2, 2, 0, 1},
        {20, 14, 14, 5, 1, 2, 2, 2, 2, 0, 1}, {17, 14, 14, 3, 1, 1, 1, 1, 1, 0, 1},
        {16, 15, 15, 3, 1, 1, 1, 1, 1, 0, 0}};
    static const int lane_isas[2] = {TI__ISA_AVX512, TI__ISA_AVX2};
    ti__threadpool *tp = ti__threadpool_create(NULL, 2);
    int lane_runs[2] = {0, 0}, have[2];
    for (int i = 0; i < 2; i++) {
        have[i] = ti__cpu_force_isa(lane_isas[i]) == lane_isas[i] &&
                  ti__dw_pick_isa()->lanes != NULL;
        ti__cpu_force_isa(-1);
    }
    for (int it = 0; it < (int)(sizeof cases / sizeof cases[0]); it++) {
        ccase c = dw_case(cases[it], 1 + it % 2);
        conv_rig r;
        TI_REQUIRE(rig_init(&r, &c));
        for (int i = 0; i < 2; i++) { /* the path the case is listed for */
            if (!have[i]) continue;
            ti__cpu_force_isa(lane_isas[i]);
            const ti__dw_isa *isa = ti__dw_pick_isa();
            ti__dw_lane_geo g;
            int got = ti__conv_dw_lanes_ok(isa, &r.p, &g);
            int want = (int)cases[it][9 + i] && c.c >= isa->lane_planes;
            if (got != want)
                printf("  case %d (%lld x %lld x %lld, K %lld, S %lld) on %s: lane path %d, "
                       "expected %d\n", it, (long long)c.c, (long long)c.h, (long long)c.w,
                       (long long)c.k[0], (long long)c.s[0], ti__cpu_isa_name(lane_isas[i]),
                       got, want);
            TI_CHECK_EQ_INT(got, want);
            lane_runs[i] += got;
            ti__cpu_force_isa(-1);
        }
        rig_free(&r);
        check_case(&c, it % 2 ? tp : NULL);
    }
    ti__threadpool_destroy(tp);
    for (int i = 0; i < 2; i++) {
        if (have[i]) TI_CHECK(lane_runs[i] > 0);
        else
            ti_test_skip_note(i == 0 ? "no AVX-512 here: its lane path did not run"
                                     : "no AVX2 here: its lane path did not run",
                              __FILE__, __LINE__);
    }
}

/* The row paths as the planner takes them (ti__conv_dw_rows_ok with the ISA's rows_min):
 * stride 2 on rows of 56 outputs and more on AVX2 (112 x 112 inputs, pads 0 to 2), of 12 and
 * more on AVX-512, 5x5 / 2 there only (pads 0 to 2: PyTorch's, TF's SAME and VALID; not 3);
 * stride 1 by the same minimum. Each case is also run
 * through the planner on every ISA against the scalar reference (check_case). c, h, w, K,
 * S, pads top, left, bottom, right, row path on AVX-512, on AVX2 */
TI_TEST(depthwise_row_path_choice) {
    static const int64_t cases[][11] = {
        {8, 112, 112, 3, 2, 1, 1, 1, 1, 1, 1}, {8, 56, 56, 3, 2, 1, 1, 1, 1, 1, 0},
        {8, 111, 111, 3, 2, 0, 0, 0, 0, 1, 0}, {8, 113, 113, 3, 2, 2, 2, 2, 2, 1, 1},
        {8, 114, 114, 3, 2, 0, 0, 1, 1, 1, 1}, {8, 112, 112, 5, 2, 2, 2, 2, 2, 1, 0},
        {8, 28, 28, 5, 2, 2, 2, 2, 2, 1, 0},     {8, 28, 28, 5, 2, 1, 1, 2, 2, 1, 0},
        {8, 29, 29, 5, 2, 0, 0, 0, 0, 1, 0},     {8, 30, 30, 5, 2, 3, 3, 3, 3, 0, 0},
        {8, 14, 14, 5, 2, 2, 2, 2, 2, 0, 0},     {8, 24, 27, 5, 2, 1, 2, 0, 1, 1, 0},
        {8, 112, 112, 3, 1, 1, 1, 1, 1, 1, 1}, {8, 28, 28, 3, 1, 1, 1, 1, 1, 1, 0}};
    static const int row_isas[2] = {TI__ISA_AVX512, TI__ISA_AVX2};
    ti__threadpool *tp = ti__threadpool_create(NULL, 2);
    int have[2];
    for (int i = 0; i < 2; i++) {
        /* the ISA numbers are per architecture: on aarch64 2 and 1 are NEON-dot and NEON */
#ifdef TI__X86_SIMD
        have[i] = ti__cpu_force_isa(row_isas[i]) == row_isas[i];
#else
        have[i] = 0;
#endif
        ti__cpu_force_isa(-1);
    }
    for (int it = 0; it < (int)(sizeof cases / sizeof cases[0]); it++) {
        ccase c = dw_case(cases[it], 1);
        conv_rig r;
        TI_REQUIRE(rig_init(&r, &c));
        for (int i = 0; i < 2; i++) {
            if (!have[i]) continue;
            ti__cpu_force_isa(row_isas[i]);
            int got = ti__conv_dw_rows_ok(ti__dw_pick_isa(), &r.p), want = (int)cases[it][9 + i];
            if (got != want)
                printf("  case %d (%lld x %lld, K %lld, S %lld, pad %lld) on %s: row path %d, "
                       "expected %d\n", it, (long long)c.h, (long long)c.w, (long long)c.k[0],
                       (long long)c.s[0], (long long)c.pads[1], ti__cpu_isa_name(row_isas[i]),
                       got, want);
            TI_CHECK_EQ_INT(got, want);
            ti__cpu_force_isa(-1);
        }
        rig_free(&r);
        check_case(&c, it % 2 ? tp : NULL);
    }
    ti__threadpool_destroy(tp);
    if (!have[0] && !have[1]) TI_SKIP("no AVX2 or AVX-512 here: no row paths to choose");
}

/* The few-channel path (AVX-512, AVX2): first convs on 1 to 4 channels, 3x3 / 5x5 / 7x7 / 1x7,
 * strides 1 and 2 (and 3 across rows), output channel counts that leave a part block (20,
 * 33, 40) or fill four (64), rows of exactly 16 positions and one past, pads of every side;
 * stride 2 across columns (rows buffered split into even and odd columns) with left pads of
 * 0 to 3, odd and even widths, an even kernel width; rows of 100, 49 (stride 2), 48 and
 * 112 (ResNet's 7x7 / 2 stem on 3 -> 64) outputs: AVX-512 computes up to 48 positions a
 * call, 16 in the last part of a row; input widths of 57 and 62 for the row split's last
 * 17 to 31 columns (ti__split_s2_avx512's masked tail).
 * Checked on every ISA as above (scalar runs im2col); under AVX-512 and AVX2 each case must
 * take the path or not as its last column says (not: 196 products per output, 65 channels).
 * c, m, h, w, kh, kw, sy, sx, pads top, left, bottom, right, few-channel path */
TI_TEST(few_channel_shapes) {
    static const int64_t cases[][13] = {
        {3, 32, 40, 40, 3, 3, 2, 2, 1, 1, 1, 1, 1}, {3, 16, 37, 33, 3, 3, 2, 2, 0, 0, 1, 1, 1},
        {3, 20, 20, 31, 3, 3, 1, 1, 1, 1, 1, 1, 1}, {1, 40, 18, 18, 5, 5, 1, 1, 2, 2, 2, 2, 1},
        {2, 64, 9, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1},  {3, 8, 12, 34, 3, 3, 2, 2, 2, 0, 0, 2, 1},
        {1, 24, 14, 22, 1, 7, 3, 1, 0, 3, 0, 3, 1}, {3, 33, 7, 17, 3, 3, 1, 1, 0, 1, 1, 1, 1},
        {4, 16, 10, 40, 3, 3, 1, 2, 1, 1, 1, 1, 1}, {3, 24, 23, 45, 7, 7, 2, 2, 3, 3, 2, 2, 1},
        {4, 16, 16, 36, 7, 7, 2, 2, 3, 3, 3, 3, 0}, {3, 65, 8, 20, 3, 3, 1, 1, 1, 1, 1, 1, 0},
        {2, 16, 11, 39, 5, 5, 2, 2, 2, 2, 1, 2, 1}, {3, 20, 9, 34, 3, 4, 2, 2, 1, 3, 0, 0, 1},
        {3, 24, 6, 100, 3, 3, 1, 1, 1, 1, 1, 1, 1}, {3, 16, 5, 98, 3, 3, 2, 2, 1, 1, 1, 1, 1},
        {2, 40, 5, 48, 3, 3, 1, 1, 1, 1, 1, 1, 1},  {3, 64, 9, 224, 7, 7, 2, 2, 3, 3, 3, 3, 1},
        {3, 16, 7, 57, 3, 3, 2, 2, 1, 1, 1, 1, 1},  {2, 16, 6, 62, 3, 3, 2, 2, 0, 1, 0, 1, 1}};
    ti__threadpool *tp = ti__threadpool_create(NULL, 2);
    /* the SIMD ISAs here with a few-channel kernel (AVX-512, AVX2) */
    int fisa[2], nf = 0;
    static const int cand[2] = {TI__ISA_AVX512, TI__ISA_AVX2};
    for (int i = 0; i < 2; i++)
        if (ti__cpu_force_isa(cand[i]) == cand[i] && ti__dw_pick_isa()->fewc[0] != NULL)
            fisa[nf++] = cand[i];
    ti__cpu_force_isa(-1);
    int have = nf > 0;
    int before = g_paths_run[TI__CONV_FEWC];
    for (int it = 0; it < (int)(sizeof cases / sizeof cases[0]); it++) {
        const int64_t *r = cases[it];
        ccase c;
        memset(&c, 0, sizeof c);
        c.n = 1 + it % 2;
        c.group = 1;
        c.c = r[0];
        c.m = r[1];
        c.h = r[2];
        c.w = r[3];
        c.k[0] = r[4];
        c.k[1] = r[5];
        c.s[0] = r[6];
        c.s[1] = r[7];
        c.d[0] = c.d[1] = 1;
        for (int i = 0; i < 4; i++) c.pads[i] = r[8 + i];
        random_act(&c);
        if (have) {
            conv_rig rg;
            TI_REQUIRE(rig_init(&rg, &c));
            for (int i = 0; i < nf; i++) {
                ti__cpu_force_isa(fisa[i]);
                int want = (int)r[12], got = ti__conv_fewc_ok(&rg.p);
                if (got != want)
                    printf("  case %d, %s: few-channel path %d, expected %d\n", it,
                           ti__cpu_isa_name(fisa[i]), got, want);
                TI_CHECK_EQ_INT(got, want);
            }
            ti__cpu_force_isa(-1);
            rig_free(&rg);
        }
        check_case(&c, it % 2 ? tp : NULL);
    }
    ti__threadpool_destroy(tp);
    if (have) TI_CHECK(g_paths_run[TI__CONV_FEWC] > before);
    else
        ti_test_skip_note("no AVX2 or AVX-512 here: the few-channel kernel did not run", __FILE__,
                          __LINE__);
}

/* The depthwise row path in bands of output rows, one a thread (ti__conv_dw_bands): where
 * bands start (64-byte lines, near the even split), that maps of 2 and 3 bands match the
 * reference on every ISA (the row kernels then start and end mid-plane: R < 4 rows at a
 * band's end, the padding rows at its top or bottom), and that planning allows bands only
 * for a conv whose consumers are all convs. */
static unsigned char *dw_then(const char *next, size_t *size) {
    ob_model mb;
    ob_init(&mb, 13);
    int64_t xd[4] = {1, 8, 32, 32}, wd[4] = {8, 1, 3, 3}, pd[4] = {8, 8, 1, 1};
    int64_t yd[4] = {1, 8, 32, 32};
    float wt[72], pw[64];
    for (int i = 0; i < 72; i++) wt[i] = (float)(i % 5) * 0.25f - 0.5f;
    for (int i = 0; i < 64; i++) pw[i] = (float)(i % 3) * 0.5f - 0.5f;
    ob_input(&mb, "x", OB_FLOAT, 4, xd);
    ob_init_f32(&mb, "w", 4, wd, wt);
    ob_init_f32(&mb, "pw", 4, pd, pw);
    conv3_node(&mb, "dw", "x,w", "t", 8);
    if (strcmp(next, "Conv") == 0) {
        ob_node(&mb, "Conv", "pw", "t,pw", "y");
    } else {
        ob_node(&mb, next, "next", "t", "y");
        yd[2] = yd[3] = 1;
    }
    ob_output(&mb, "y", OB_FLOAT, 4, yd);
    return ob_finish(&mb, size);
}

TI_TEST(depthwise_row_bands) {
    TI_CHECK_EQ_INT(ti__dw_band_row(56, 56, 1, 2), 28);
    TI_CHECK_EQ_INT(ti__dw_band_row(112, 112, 1, 2), 56);
    TI_CHECK_EQ_INT(ti__dw_band_row(28, 28, 1, 2), -1); /* row 14 starts mid-line */
    TI_CHECK_EQ_INT(ti__dw_band_row(48, 48, 1, 3), 16);
    TI_CHECK_EQ_INT(ti__dw_band_row(48, 48, 2, 3), 32);
    TI_CHECK_EQ_INT(ti__dw_band_row(48, 48, 3, 3), 48);
    TI_CHECK_EQ_INT(ti__dw_band_row(33, 16, 1, 2), 16); /* the nearest row on a line */
    /* c, h, w, K, S, pads top, left, bottom, right */
    static const int64_t cases[][9] = {{3, 32, 32, 3, 1, 1, 1, 1, 1},
                                       {2, 64, 48, 3, 2, 0, 1, 1, 0},
                                       {2, 40, 40, 5, 1, 2, 2, 2, 2},
                                       {5, 48, 48, 3, 1, 1, 1, 1, 1},
                                       {2, 34, 16, 3, 1, 0, 1, 0, 1}};
    ti__threadpool *tps[2] = {ti__threadpool_create(NULL, 2), ti__threadpool_create(NULL, 3)};
    int ran = 0; /* cases the depthwise path ran (bands where the ISA has a row kernel) */
    for (int it = 0; it < (int)(sizeof cases / sizeof cases[0]); it++) {
        ccase c = dw_case(cases[it], 1 + it % 2);
        conv_rig r;
        TI_REQUIRE(rig_init(&r, &c));
        size_t want = it == 3 ? 3 : 2;
        int64_t rows[TI_MAX_THREADS + 1];
        TI_CHECK_EQ_INT((int)ti__conv_dw_bands(&r.p, want, rows), (int)want);
        TI_CHECK(rows[0] == 0 && rows[want] == r.p.out[1] && rows[1] > 0 && rows[1] < rows[2]);
        TI_CHECK_EQ_INT((int)ti__conv_dw_bands(&r.p, 1, rows), 1);
        TI_CHECK(rows[0] == 0 && rows[1] == r.p.out[1]);
        rig_free(&r);
        int before = g_paths_run[TI__CONV_DW];
        check_case(&c, tps[it == 3]);
        ran += g_paths_run[TI__CONV_DW] > before;
    }
    TI_CHECK_EQ_INT(ran, (int)(sizeof cases / sizeof cases[0]));
    ti__threadpool_destroy(tps[0]);
    ti__threadpool_destroy(tps[1]);
    /* planning: bands for a depthwise conv read by a conv only */
    static const char *next[3] = {"Conv", "GlobalAveragePool", "Relu"};
    for (int i = 0; i < 3; i++) {
        size_t size;
        unsigned char *bytes = dw_then(next[i], &size);
        ti_error err;
        ti_model *mod = ti_model_load_memory(bytes, size, NULL, &err);
        TI_REQUIRE(mod != NULL);
        ti_session_desc d;
        memset(&d, 0, sizeof d);
        d.num_threads = 2;
        d.backend = TI_BACKEND_CPU;
        ti_session *s = ti_session_create(mod, &d, &err);
        TI_REQUIRE(s != NULL);
        int dw = -1;
        for (int n = 0; n < s->n_nodes; n++)
            if (strcmp(s->nodes[n].name, "dw") == 0) dw = n;
        TI_REQUIRE(dw >= 0);
        /* a Relu after the conv is fused into it: the dw's output is then the graph's */
        TI_CHECK_EQ_INT(s->nodes[dw].bands_ok, i == 0);
        TI_CHECK_EQ_INT(s->nodes[s->n_nodes - 1].bands_ok, 0); /* a graph output */
        TI_CHECK_EQ_INT(ti_session_run(s, &err), TI_OK);
        ti_session_destroy(s);
        ti_model_free(mod);
        free(bytes);
    }
}

/* The 1X1 path's transposed GEMM on 2 and 3 threads gives the bits of 1 thread (ct_case),
 * on each SIMD ISA, with activations: 7 x 7, 6 x 8 and 5 x 5 maps (AVX2 runs only the last
 * transposed) of 160 to 576 channels. Its input
 * channels once went in parts, one a thread, summed after: faster on 2 threads (MobileNetV2
 * -5.6 %) but another rounding for each thread count. */
TI_TEST(transposed_gemm_threads_same_bits) {
    ti__threadpool *tps[2] = {ti__threadpool_create(NULL, 2), ti__threadpool_create(NULL, 3)};
    int before = g_ct_thread_checks;
    static const int64_t cases[][4] = {{160, 64, 7, 7}, {256, 96, 6, 8}, {200, 72, 5, 5},
                                       {576, 160, 7, 7}};
    for (int it = 0; it < 8; it++) {
        ccase c;
        memset(&c, 0, sizeof c);
        c.n = 1 + it % 2;
        c.group = 1;
        const int64_t *row = cases[it % 4];
        c.c = row[0], c.m = row[1], c.h = row[2], c.w = row[3];
        c.k[0] = c.k[1] = c.s[0] = c.s[1] = c.d[0] = c.d[1] = 1;
        c.bias = it % 3 != 0;
        random_act(&c);
        ct_case(&c, tps[it / 4], 0);
    }
    ti__threadpool_destroy(tps[0]);
    ti__threadpool_destroy(tps[1]);
    TI_CHECK(g_ct_thread_checks > before || ti__sgemm_pick_isa() == NULL);
}

/* A 1x1 conv of few output channels (at most two row slivers) reads X where it lies on 1
 * thread and packs it on 2+ (ti__sgemm_input_b: X was written by every thread of the layer
 * before): on each SIMD ISA forced, 2, 3 and 8 threads give 1 thread's bits, and all are
 * within the reference's bound. Maps wide enough for each thread to take many slivers. */
TI_TEST(pointwise_input_threads_same_bits) {
    ti__threadpool *tps[3] = {ti__threadpool_create(NULL, 2), ti__threadpool_create(NULL, 3),
                              ti__threadpool_create(NULL, 8)};
    /* the last four deeper than a k block of the stack buffers (128); those of more rows
     * than a row block (256) take a workspace in the scratch (ti__conv_1x1_ws_floats) on
     * every tile of every pool, even the 2-3 row slivers each of 8 threads takes of 270 x 16
     * (alone those would run on the stack buffers' k blocks); N = 169 ends in 9 columns,
     * N = 81 in one */
    static const int64_t cases[][4] = {{64, 16, 55, 55}, {144, 24, 56, 56}, {96, 28, 17, 19},
                                       {40, 20, 33, 40}, {300, 100, 13, 13}, {200, 270, 9, 9},
                                       {520, 1000, 13, 13}, {300, 270, 4, 4}};
    int checks = 0, ws_runs = 0;
    for (int ci = 0; ci < 8; ci++) {
        ccase c;
        memset(&c, 0, sizeof c);
        c.n = 1, c.group = 1;
        c.c = cases[ci][0], c.m = cases[ci][1], c.h = cases[ci][2], c.w = cases[ci][3];
        c.k[0] = c.k[1] = c.s[0] = c.s[1] = c.d[0] = c.d[1] = 1;
        c.bias = ci % 2 == 0;
        random_act(&c);
        conv_rig r;
        if (!rig_init(&r, &c)) {
            TI_CHECK(!"case set-up failed");
            rig_free(&r);
            continue;
        }
        size_t ny = ti__numel(&r.y);
        float *one = (float *)malloc(ny * sizeof(float) + 4);
        TI_REQUIRE(one != NULL);
        for (int i = 0; i < 3; i++) {
            if (ti__cpu_force_isa(ISAS[i]) != ISAS[i]) continue;
            const char *name = ti__cpu_isa_name(ISAS[i]);
            TI_CHECK_EQ_INT(ti__conv_path(&r.k, &r.p), TI__CONV_1X1);
            for (int t = 0; t < 4; t++) {
                ti__threadpool *use = t ? tps[t - 1] : NULL;
                r.k.tp = use;
                size_t scratch = ti__conv_scratch(&r.k);
                const ti__sgemm_isa *gi = ti__sgemm_pick_isa();
                if (gi != NULL && r.p.cg > gi->kc && r.p.mg > gi->mc) {
                    TI_CHECK(scratch > 0);
                    ws_runs += scratch > 0;
                }
                TI_CHECK_EQ_INT(run_path(&r, TI__CONV_1X1, use, scratch, name), 0);
                if (t == 0) {
                    memcpy(one, r.y.data, ny * sizeof(float));
                } else {
                    TI_CHECK(memcmp(one, r.y.data, ny * sizeof(float)) == 0);
                    checks++;
                }
            }
        }
        ti__cpu_force_isa(-1);
        free(one);
        rig_free(&r);
    }
    for (int t = 0; t < 3; t++) ti__threadpool_destroy(tps[t]);
    TI_CHECK(checks >= 24); /* the scalar ISA at least, 3 pools x 8 cases */
#ifdef TI__X86_SIMD
    TI_CHECK(ws_runs > 0);
#endif
}

/* The prefetch hint of the Winograd GEMM (ti__wino_next): walking the calls in
 * ti__wino_gemm's order, each call's hint names the sliver the next call reads, except
 * where that call reads U[pos] again for the next tiles (none) and after the last; the lines
 * asked for stay inside that sliver and inside U. Register tiles of AVX-512, AVX2 and the
 * portable loop; whole ranges of slivers and the parts of 2 threads; k blocks that divide C
 * and that do not. */
TI_TEST(winograd_prefetch_hint) {
    static const size_t geos[3][3] = {{14, 32, 128}, {6, 16, 256}, {4, 16, 256}}; /* mr nr kc */
    static const size_t shapes[][4] = {/* C, M, tiles, np */
                                       {256, 256, 16, 36}, {512, 512, 16, 16}, {64, 64, 100, 36},
                                       {300, 100, 49, 16}, {3, 5, 17, 36}, {129, 40, 33, 16}};
    int calls = 0, hints = 0;
    for (int gi = 0; gi < 3; gi++)
        for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
            for (int part = 0; part < 3; part++) {
                ti__wino_geo g;
                memset(&g, 0, sizeof g);
                g.mr = geos[gi][0], g.nr = geos[gi][1], g.kc = geos[gi][2], g.np = shapes[si][3];
                size_t C = shapes[si][0], M = shapes[si][1], tb = shapes[si][2];
                size_t nms = (M + g.mr - 1) / g.mr, ufloats = g.np * nms * g.mr * C;
                size_t s0 = part == 2 ? nms / 2 : 0, s1 = part == 1 ? nms / 2 : nms;
                if (s0 >= s1) continue;
                /* the calls in order: offset in U, floats read, position, tile block */
                size_t n = 0, cap = g.np * ((tb + g.nr - 1) / g.nr) * ((C + g.kc - 1) / g.kc) *
                                    (s1 - s0);
                size_t(*cl)[4] = (size_t(*)[4])malloc(cap * sizeof *cl);
                TI_REQUIRE(cl != NULL);
                for (size_t pos = 0; pos < g.np; pos++)
                    for (size_t jr = 0; jr < tb; jr += g.nr)
                        for (size_t pc = 0; pc < C; pc += g.kc)
                            for (size_t s = s0; s < s1; s++, n++) {
                                size_t kc = TI__MIN(g.kc, C - pc);
                                cl[n][0] = pos * nms * g.mr * C + ti__wino_uoff(&g, nms, C, s, pc);
                                cl[n][1] = kc * g.mr, cl[n][2] = pos, cl[n][3] = jr;
                            }
                TI_REQUIRE(n == cap);
                n = 0;
                for (size_t pos = 0; pos < g.np; pos++)
                    for (size_t jr = 0; jr < tb; jr += g.nr)
                        for (size_t pc = 0; pc < C; pc += g.kc)
                            for (size_t s = s0; s < s1; s++, n++) {
                                size_t lines, at = ti__wino_next(&g, M, C, tb, s0, s1, pos, jr,
                                                                 pc, s, &lines);
                                int want = n + 1 < cap && (cl[n + 1][2] != pos ||
                                                           cl[n + 1][3] == jr);
                                calls++;
                                TI_CHECK_EQ_INT(lines > 0, want);
                                if (!want || lines == 0) continue;
                                hints++;
                                TI_CHECK(at == cl[n + 1][0]);
                                TI_CHECK(lines <= TI__MIN(g.kc, C - pc));
                                TI_CHECK((lines - 1) * 16 < cl[n + 1][1]);
                                TI_CHECK(at + cl[n + 1][1] <= ufloats);
                            }
                free(cl);
            }
    TI_CHECK(hints > 0 && hints < calls);
}

int main(void) {
    isa_report();
    TI_RUN(depthwise_shapes);
    TI_RUN(winograd_shapes);
    TI_RUN(general_shapes);
    TI_RUN(sessions_pack_and_match);
    TI_RUN(stride2_copy_on_every_isa);
    TI_RUN(transposed_gemm_few_positions); /* after those: they keep their random draws */
    TI_RUN(depthwise_small_planes);
    TI_RUN(few_channel_shapes);
    TI_RUN(depthwise_row_bands);
    TI_RUN(transposed_gemm_threads_same_bits);
    TI_RUN(pointwise_input_threads_same_bits);
    TI_RUN(winograd_prefetch_hint);
    TI_RUN(flat_taps_every_block_count); /* last: the others keep their random draws */
    TI_RUN(depthwise_row_kernels_every_width);
    TI_RUN(depthwise_lane_blocks);
    TI_RUN(depthwise_row_path_choice);
    TI_RUN(transposed_gemm_parts_of_k); /* last: the draws above stay as they were */
    printf("path runs: direct %d, 1x1 %d, im2col %d, depthwise %d, winograd %d (F(2x2) %d), few "
           "channels %d; transposed GEMM %d\n", g_paths_run[0], g_paths_run[1], g_paths_run[2],
           g_paths_run[3], g_paths_run[4], g_wino23_runs, g_paths_run[TI__CONV_FEWC], g_ct_runs);
    return ti_test_summary();
}
