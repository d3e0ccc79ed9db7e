/* Graph passes on a session's plan: dead-node removal, fusion of Conv / ConvTranspose /
 * Gemm / MatMul with a following bias Add, BatchNormalization and activation, of a
 * squeeze-and-excite gate into a 1x1 Conv and of a residual Add into the Conv before it,
 * and of QDQ patterns into QLinearConv / QLinearMatMul. Relies on
 * the session structures in internal.h. Must not modify the model: rewritten nodes and
 * the folded weights live in the session's plan pool. */

/* live[i] = 1 for model node i when some graph output depends on it. */
TI__PRIVATE int ti__pass_live_nodes(ti_session *s, char *live) {
    const ti_model *m = s->m;
    char *needed = (char *)ti__pool_alloc(&s->plan_pool, (size_t)m->n_values + 1);
    if (needed == NULL) return 0;
    for (int i = 0; i < m->n_outputs; i++) needed[m->outputs[i]] = 1;
    for (int n = m->n_nodes - 1; n >= 0; n--) {
        const ti__node *node = &m->nodes[n];
        live[n] = 0;
        for (int i = 0; i < node->n_outputs; i++)
            if (node->outputs[i] >= 0 && needed[node->outputs[i]]) live[n] = 1;
        if (!live[n]) continue;
        for (int i = 0; i < node->n_inputs; i++)
            if (node->inputs[i] >= 0) needed[node->inputs[i]] = 1;
    }
    return 1;
}

/* A constant float32 value with exactly n elements, or NULL. */
TI__PRIVATE const float *ti__fuse_const_f32(const ti_session *s, int v, size_t n) {
    if (v < 0 || !s->vi[v].is_const || s->t[v].dtype != TI_DTYPE_F32 || ti__numel(&s->t[v]) != n)
        return NULL;
    return (const float *)s->t[v].data;
}

/* A constant scalar (any numeric dtype) or def when v is absent; 0 when not constant. */
TI__PRIVATE int ti__fuse_const_scalar(const ti_session *s, int v, float def, float *out) {
    if (v < 0) {
        *out = def;
        return 1;
    }
    if (!s->vi[v].is_const || ti__numel(&s->t[v]) != 1 || !ti__dtype_is_float(s->t[v].dtype))
        return 0;
    *out = (float)ti__get_f64(&s->t[v], 0);
    return 1;
}

/* Makes a new constant float32 value shaped like value `like`, zeroed unless the caller
 * writes all of it (filled: a conv's weights with a BatchNorm folded in, which zeroing made
 * a pass over every weight of the model more at session creation). */
TI__PRIVATE int ti__fuse_new_const(ti_session *s, int like, float **data, int filled) {
    int v = ti__session_new_value(s, s->t[like].name);
    if (v < 0) return -1;
    ti_tensor *t = &s->t[v];
    ti__set_shape(t, TI_DTYPE_F32, s->t[like].rank, s->t[like].shape);
    t->data = filled ? ti__pool_alloc_raw(&s->plan_pool, t->size_bytes)
                     : ti__pool_alloc(&s->plan_pool, t->size_bytes);
    if (t->data == NULL) return -1;
    s->vi[v].is_const = 1;
    *data = (float *)t->data;
    return v;
}

/* Gives node a private copy of its inputs with room for `room` (at least its own). */
TI__PRIVATE int ti__fuse_own_inputs_n(ti_session *s, ti__node *node, int room) {
    int n = node->n_inputs < room ? room : node->n_inputs;
    int *in = (int *)ti__pool_alloc(&s->plan_pool, sizeof(int) * (size_t)n);
    int *out = (int *)ti__pool_alloc(&s->plan_pool, sizeof(int) * (size_t)(node->n_outputs + 1));
    if (in == NULL || out == NULL) return 0;
    for (int i = 0; i < n; i++) in[i] = i < node->n_inputs ? node->inputs[i] : -1;
    for (int i = 0; i < node->n_outputs; i++) out[i] = node->outputs[i];
    node->inputs = in;
    node->outputs = out;
    return 1;
}

/* Gives node a private copy of its inputs with room for 3 (X, W, B). */
TI__PRIVATE int ti__fuse_own_inputs(ti_session *s, ti__node *node) {
    return ti__fuse_own_inputs_n(s, node, 3);
}

/* Conv + BatchNormalization: W'[o] = W[o] * g, b'[o] = (b[o] - mean[o]) * g + beta[o] with
 * g = scale[o] / sqrt(var[o] + eps). Returns 1 when fused. */
TI__PRIVATE int ti__fuse_conv_bn(ti_session *s, ti__node *conv, const ti__node *bn) {
    int wv = conv->inputs[1];
    if (wv < 0 || !s->vi[wv].is_const || s->t[wv].dtype != TI_DTYPE_F32 || s->t[wv].rank < 3) return 0;
    size_t m = (size_t)s->t[wv].shape[0], per = ti__numel(&s->t[wv]) / (m ? m : 1);
    if (bn->n_inputs < 5 || ti__attr_i(bn, "training_mode", 0) != 0) return 0;
    for (int i = 1; i < bn->n_outputs; i++)
        if (bn->outputs[i] >= 0) return 0;
    if (s->m->opset < 9 && ti__attr_i(bn, "spatial", 1) != 1) return 0;
    const float *scale = ti__fuse_const_f32(s, bn->inputs[1], m);
    const float *beta = ti__fuse_const_f32(s, bn->inputs[2], m);
    const float *mean = ti__fuse_const_f32(s, bn->inputs[3], m);
    const float *var = ti__fuse_const_f32(s, bn->inputs[4], m);
    const float *bias = conv->n_inputs > 2 && conv->inputs[2] >= 0
                            ? ti__fuse_const_f32(s, conv->inputs[2], m) : NULL;
    if (!scale || !beta || !mean || !var) return 0;
    if (conv->n_inputs > 2 && conv->inputs[2] >= 0 && bias == NULL) return 0;
    float eps = ti__attr_f(bn, "epsilon", 1e-5f), *nw, *nb;
    int nwv = ti__fuse_new_const(s, wv, &nw, 1);
    int nbv = nwv < 0 ? -1 : ti__fuse_new_const(s, bn->inputs[1], &nb, 0);
    if (nbv < 0 || !ti__fuse_own_inputs(s, conv)) return 0;
    const float *w = (const float *)s->t[wv].data;
    for (size_t o = 0; o < m; o++) {
        float g = scale[o] / sqrtf(var[o] + eps);
        for (size_t i = 0; i < per; i++) nw[o * per + i] = w[o * per + i] * g;
        nb[o] = ((bias ? bias[o] : 0.0f) - mean[o]) * g + beta[o];
    }
    conv->inputs[1] = nwv;
    conv->inputs[2] = nbv;
    if (conv->n_inputs < 3) conv->n_inputs = 3;
    return 1;
}

/* Conv + Add of a per-output-channel constant ([M,1,1], [1,M,1,1], ...). */
TI__PRIVATE int ti__fuse_conv_add(ti_session *s, ti__node *conv, const ti__node *add, int y) {
    int wv = conv->inputs[1];
    if (add->n_inputs != 2 || wv < 0 || s->t[wv].rank < 3) return 0;
    int cv = add->inputs[0] == y ? add->inputs[1] : add->inputs[0];
    if (cv < 0 || cv == y || !s->vi[cv].is_const || s->t[cv].dtype != TI_DTYPE_F32) return 0;
    const ti_tensor *c = &s->t[cv], *yt = &s->t[y];
    size_t m = (size_t)s->t[wv].shape[0];
    if (c->rank > yt->rank || ti__numel(c) != m) return 0;
    for (int d = 0; d < c->rank; d++) { /* right-aligned: only the channel dim may be > 1 */
        int yd = yt->rank - c->rank + d;
        if (c->shape[d] != 1 && yd != 1) return 0;
    }
    if (conv->n_inputs > 2 && conv->inputs[2] >= 0 && !ti__fuse_const_f32(s, conv->inputs[2], m)) return 0;
    float *nb;
    int nbv = ti__fuse_new_const(s, cv, &nb, 0);
    if (nbv < 0 || !ti__fuse_own_inputs(s, conv)) return 0;
    s->t[nbv].rank = 1;
    s->t[nbv].shape[0] = (int64_t)m;
    const float *old = conv->inputs[2] >= 0 ? (const float *)s->t[conv->inputs[2]].data : NULL;
    const float *cd = (const float *)c->data;
    for (size_t o = 0; o < m; o++) nb[o] = cd[o] + (old ? old[o] : 0.0f);
    conv->inputs[2] = nbv;
    if (conv->n_inputs < 3) conv->n_inputs = 3;
    return 1;
}

/* Mul by a gate per channel (a squeeze-and-excite block's [1, C, 1, 1], computed at run
 * time) whose only reader is a 1x1 conv: the conv reads the Mul's other input X and takes
 * the gate as its input 3, and scales its weights by it at each run (W'[m][c] = W[m][c] *
 * s[c], and packs them as the GEMM's A panel, cpu/conv.c), so X * s is never written.
 * Only where M * 16 <= H * W: in the models a weight cost about 1.25 ns to scale and pack
 * and the Mul 0.15 ns an element, so MobileNetV3-small's 14 x 14 gates before 40 and 48
 * output channels (fused at M * 4 <= H * W) ran 3 % slower. And only where the conv takes
 * the plain 1x1 GEMM path: batch 1, one group, 4 output channels or more, not the
 * transposed GEMM. CPU sessions only. EfficientNet-B0's five gates at 112 x 112 to
 * 28 x 28, MobileNetV3-small's at 56 x 56: bench/results/ab-2026-12-05-s53.md. Returns 1
 * when fused. */
TI__PRIVATE int ti__fuse_scale_conv(ti_session *s, int n, const int *uses, const int *user) {
    ti__node *mul = &s->nodes[n];
    if (strcmp(mul->op, "Mul") != 0 || mul->domain[0] != 0 || mul->n_inputs != 2 ||
        mul->n_outputs != 1 || mul->act != TI__ACT_NONE)
        return 0;
    int y = mul->outputs[0];
    if (y < 0 || uses[y] != 1 || s->vi[y].is_output || user[y] <= n) return 0;
    int c = user[y];
    ti__node *conv = &s->nodes[c];
    if (strcmp(conv->op, "Conv") != 0 || conv->domain[0] != 0 || conv->n_inputs < 2 ||
        conv->n_inputs > 3 || conv->inputs[0] != y)
        return 0;
    const ti_tensor *yt = &s->t[y];
    if (yt->dtype != TI_DTYPE_F32 || yt->rank != 4 || yt->shape[0] != 1) return 0;
    int64_t C = yt->shape[1], hw = yt->shape[2] * yt->shape[3];
    for (int g = 0; g < 2; g++) {
        int xv = mul->inputs[1 - g], sv = mul->inputs[g];
        if (xv < 0 || sv < 0 || xv == sv) continue;
        const ti_tensor *xt = &s->t[xv], *st = &s->t[sv];
        if (xt->dtype != TI_DTYPE_F32 || st->dtype != TI_DTYPE_F32 || xt->rank != 4 ||
            st->rank > 4 || (int64_t)ti__numel(st) != C)
            continue;
        int same = 1;
        for (int d = 0; d < 4; d++) same &= xt->shape[d] == yt->shape[d];
        for (int d = 0; d < st->rank; d++) /* right-aligned: only the channel dim is C */
            if (st->shape[d] != 1 && 4 - st->rank + d != 1) same = 0;
        if (!same) continue;
        ti__kctx k;
        ti_error quiet;
        ti__convp p;
        ti__kctx_init(s, &k, c, &quiet);
        if (ti__conv_params(&k, 0, &p) != TI_OK || !ti__conv_pointwise(&p) || p.group != 1 ||
            p.n != 1 || p.c != C || p.mg < 4 || p.m * 16 > hw || ti__conv_ct_ok(&p))
            return 0;
        if (!ti__fuse_own_inputs_n(s, conv, 4)) return 0;
        conv->inputs[0] = xv;
        conv->inputs[3] = sv;
        conv->n_inputs = 4;
        mul->op = "";
        s->info.num_fused++;
        return 1;
    }
    return 0;
}

/* The live node that computes value v (-1: none), and in *readers how many of the live
 * nodes' inputs are v. */
TI__PRIVATE int ti__fuse_producer(const ti_session *s, int v, int *readers) {
    int c = -1;
    *readers = 0;
    for (int i = 0; i < s->n_nodes; i++) {
        const ti__node *nd = &s->nodes[i];
        if (nd->op[0] == 0) continue;
        for (int o = 0; o < nd->n_outputs; o++) c = nd->outputs[o] == v ? i : c;
        for (int o = 0; o < nd->n_inputs; o++) *readers += nd->inputs[o] == v;
    }
    return c;
}

/* A residual Add of a conv's output and a value R of the same shape (the inverted residual
 * blocks of MobileNetV2 and EfficientNet: the 1x1 projection conv, then the Add of the
 * block's input; ResNet's: a 3x3 conv or the 1x1 / 2 shortcut, then the Add, then a Relu):
 * the conv takes R as its input 4 and the Add's output and activation, and its GEMM adds
 * onto Y = R (beta 1, cpu/conv.c; Winograd's store adds what it finds in Y), so the sum is
 * no pass of its own over memory and no node of its own to dispatch. Where the conv is R's
 * last reader, Y lies on R's memory (ti__session_sum_views) and nothing is copied; else the
 * conv copies R to Y first. The fused node takes the Add's place in the plan, where R is computed (the conv's
 * own inputs were computed before it). Only a conv without an activation of its own that
 * takes a GEMM path (1x1 or im2col, plain or transposed, whose store of Y adds it then) or
 * Winograd's with no activation after the sum but a Relu (its SIMD store adds and clamps);
 * not the depthwise, direct or few-channel paths; one group, batch 1, float32, the conv's
 * output read by the Add alone; a gate fused before may be its input 3
 * (ti__fuse_scale_conv). CPU sessions only. Returns 1 when fused. */
TI__PRIVATE int ti__fuse_conv_sum(ti_session *s, int n) {
    ti__node *add = &s->nodes[n];
    if (strcmp(add->op, "Add") != 0 || add->domain[0] != 0 || add->n_inputs != 2 ||
        add->n_outputs != 1 || add->outputs[0] < 0)
        return 0;
    const ti_tensor *yt = &s->t[add->outputs[0]];
    if (yt->dtype != TI_DTYPE_F32) return 0;
    for (int g = 0; g < 2; g++) {
        int cv = add->inputs[g], rv = add->inputs[1 - g];
        if (cv < 0 || rv < 0 || cv == rv || s->vi[cv].is_output || s->vi[cv].is_const) continue;
        const ti_tensor *ct = &s->t[cv], *rt = &s->t[rv];
        int same = ct->dtype == TI_DTYPE_F32 && rt->dtype == TI_DTYPE_F32 &&
                   ct->rank == yt->rank && rt->rank == yt->rank;
        for (int d = 0; same && d < yt->rank; d++)
            same = ct->shape[d] == yt->shape[d] && rt->shape[d] == yt->shape[d];
        if (!same) continue;
        int readers, c = ti__fuse_producer(s, cv, &readers);
        if (c < 0 || c >= n || readers != 1) continue;
        ti__node *conv = &s->nodes[c];
        if (strcmp(conv->op, "Conv") != 0 || conv->domain[0] != 0 || conv->n_outputs != 1 ||
            conv->n_inputs < 2 || conv->n_inputs > 4 || conv->act != TI__ACT_NONE)
            continue;
        ti__kctx k;
        ti_error quiet;
        ti__convp p;
        if (!ti__session_bind_io(s, c)) return 0; /* its inputs as the passes above left them */
        ti__kctx_init(s, &k, c, &quiet);
        if (ti__conv_params(&k, 0, &p) != TI_OK || p.group != 1 || p.n != 1 || p.mg < 4 ||
            ti__conv_dw_ok(&p))
            continue;
        int wino = !ti__conv_pointwise(&p) && ti__conv_wino_ok(&p, ti__threadpool_size(s->tp));
        if (wino ? add->act != TI__ACT_NONE && add->act != TI__ACT_RELU
                 : !ti__conv_pointwise(&p) && ti__conv_fewc_ok(&p))
            continue;
        if (!ti__fuse_own_inputs_n(s, conv, 5)) return 0;
        conv->inputs[4] = rv;
        conv->n_inputs = 5;
        conv->outputs[0] = add->outputs[0];
        conv->act = add->act;
        conv->act_a = add->act_a;
        conv->act_b = add->act_b;
        s->nodes[n] = *conv;
        s->ops[n] = s->ops[c];
        conv->op = "";
        s->info.num_fused++;
        return 1;
    }
    return 0;
}

/* ti__node.fused_name of a node that took `what` in after its activation ("Clip+MaxPool",
 * "MaxPool" without one), then `after`'s activation if any ("Clip+DepthwiseConv+Clip"):
 * in the plan's pool, NULL when it is full (the name then says only the activation). */
TI__PRIVATE const char *ti__fused_name(ti_session *s, int act, const char *what, int after) {
    const char *a = ti__act_name(act), *b = ti__act_name(after);
    char *name = (char *)ti__pool_alloc(&s->plan_pool, 64);
    if (name != NULL)
        snprintf(name, 64, "%s%s%s%s%s", a, a[0] ? "+" : "", what, b[0] ? "+" : "", b);
    return name;
}

/* A MaxPool after a conv that takes the few-channel path (a network's stem: ResNet-18's
 * 7x7 / 2 on 3 channels, then 3x3 / 2; SqueezeNet's 3x3 / 2, then 3x3 / 2): the conv
 * computes its rows into a few rows of scratch a thread and pools them there (cpu/
 * conv_fast.c, ti__conv_pool_run), so its output, 3.2 MB in both, is not written to memory
 * and read back. The conv keeps its place and takes the pool's output, its window, strides
 * and pads (the end pads as the output size needs them, ceil_mode's included). Only a 2-D
 * MaxPool without dilations or the Indices output, windows of at most TI__POOL_FUSE_MAX
 * rows; the conv's output read by it alone, float32, not a graph output; the conv as the
 * few-channel path takes it (not a Winograd one), its activation any. CPU sessions only.
 * Returns 1 when fused. */
TI__PRIVATE int ti__fuse_conv_pool(ti_session *s, int n) {
    ti__node *pool = &s->nodes[n];
    if (strcmp(pool->op, "MaxPool") != 0 || pool->domain[0] != 0 || pool->n_inputs != 1 ||
        pool->n_outputs < 1 || pool->outputs[0] < 0 || (pool->n_outputs > 1 && pool->outputs[1] >= 0))
        return 0;
    int cv = pool->inputs[0];
    if (cv < 0 || s->vi[cv].is_output || s->vi[cv].is_const || s->t[cv].dtype != TI_DTYPE_F32 ||
        s->t[cv].rank != 4 || s->t[pool->outputs[0]].dtype != TI_DTYPE_F32)
        return 0;
    int readers, c = ti__fuse_producer(s, cv, &readers);
    if (c < 0 || c >= n || readers != 1) return 0;
    ti__node *conv = &s->nodes[c];
    if (strcmp(conv->op, "Conv") != 0 || conv->domain[0] != 0 || conv->n_outputs != 1 ||
        conv->n_inputs < 2 || conv->n_inputs > 3 || conv->pool_k[0] != 0)
        return 0;
    ti__kctx k;
    ti_error quiet;
    ti__convp p;
    ti__poolp pp;
    if (!ti__session_bind_io(s, c) || !ti__session_bind_io(s, n)) return 0;
    ti__kctx_init(s, &k, c, &quiet);
    if (ti__conv_params(&k, 0, &p) != TI_OK || p.group != 1 || p.mg < 4 || ti__conv_dw_ok(&p) ||
        ti__conv_pointwise(&p) || !ti__conv_fewc_ok(&p) ||
        ti__conv_wino_ok(&p, ti__threadpool_size(s->tp)))
        return 0;
    ti__kctx_init(s, &k, n, &quiet);
    if (ti__pool_params(&k, &pp) != TI_OK || pp.nd != 2 || pp.d[1] != 1 || pp.d[2] != 1 ||
        pp.in[1] != p.out[1] || pp.in[2] != p.out[2])
        return 0;
    for (int a = 0; a < 2; a++)
        if (pp.k[1 + a] > TI__POOL_FUSE_MAX || pp.out[1 + a] < 1) return 0;
    if (!ti__fuse_own_inputs(s, conv)) return 0;
    for (int a = 0; a < 2; a++) {
        int j = 1 + a;
        conv->pool_k[a] = (int)pp.k[j];
        conv->pool_s[a] = (int)pp.s[j];
        conv->pool_pb[a] = (int)pp.pb[j];
        /* the end pad that gives the output size by the floor rule */
        conv->pool_pe[a] = (int)((pp.out[j] - 1) * pp.s[j] + pp.k[j] - pp.in[j] - pp.pb[j]);
    }
    conv->fused_name = ti__fused_name(s, conv->act, "MaxPool", TI__ACT_NONE);
    conv->outputs[0] = pool->outputs[0];
    pool->op = "";
    s->info.num_fused++;
    return 1;
}

/* A 1x1 conv's output at least this large (bytes) is worth not writing out for the
 * depthwise conv after it (ti__fuse_pw_dw): about a quarter of the 2 MiB L2 of the core
 * measured. Pairs in the models, fused against not, per-node minima of 3 x 40 runs, 2-core
 * Xeon VM, 1 / 2 threads: MobileNetV2's 96 x 112 x 112 output (4.8 MB) -21 / -18 %, its 144
 * x 56 x 56 (1.8 MB) -5 / -15 % and -2 / -8 % (stride 1, 2), 192 x 28 x 28 (602 KB) -6 / 0,
 * -1 / -5 and -2 / -10 %; EfficientNet-B0's 96 x 112 x 112 -19 / -3 %, 240 x 28 x 28 (753
 * KB) -5 / +2 and -5 / -2 %; MobileNetV3-small's 72 x 56 x 56 (903 KB) +11 / -11 %.
 * EfficientNet-B0's 672 x 14 x 14 (527 KB) lost at 1 thread, +4 / -2 %: left out. */
#define TI__PWDW_MIN_BYTES ((size_t)576 * 1024)

/* A depthwise conv after a 1x1 conv (the expansion and depthwise convs of MobileNetV2's and
 * EfficientNet's inverted residual blocks): the 1x1 conv computes a few rows of its output
 * at a time into a ring of rows a thread, and the depthwise conv runs on them there
 * (cpu/conv_fast.c, ti__conv_pwdw_run), so the expanded tensor (MobileNetV2's 96 x 112 x
 * 112: 4.8 MB) is not written to memory and read back. The 1x1 conv keeps its place and
 * takes the depthwise conv's output, taps (input 5), bias (input 6), geometry and
 * activation. Only a 1x1 conv with stride 1, no pads, one group, batch 1, at most its
 * bias as a third input, whose float32 output the depthwise conv alone reads (not a graph
 * output) and is at least TI__PWDW_MIN_BYTES; a depthwise conv (one channel a group, as
 * many channels out) with constant taps and bias, square kernel and strides that the
 * ISA's row kernels take (ti__conv_dw_rows_ok: 3x3 or 5x5 at stride 1, 3x3 at 2; not 5x5
 * at 2, which AVX-512's take: EfficientNet-B0's 24 -> 144 at 56 x 56 with the 5x5 / 2 after
 * it ran 2-4 % slower fused than as two nodes, per-node minima, 1 / 2 threads, 2-core Zen 4
 * VM, session 66). CPU sessions only. Returns 1 when fused. */
TI__PRIVATE int ti__fuse_pw_dw(ti_session *s, int n) {
    ti__node *dw = &s->nodes[n];
    if (strcmp(dw->op, "Conv") != 0 || dw->domain[0] != 0 || dw->n_outputs != 1 ||
        dw->n_inputs < 2 || dw->n_inputs > 3 || dw->pool_k[0] != 0 || dw->dw_k != 0 ||
        dw->outputs[0] < 0)
        return 0;
    int ev = dw->inputs[0], wv = dw->inputs[1], bv = dw->n_inputs > 2 ? dw->inputs[2] : -1;
    if (ev < 0 || wv < 0 || s->vi[ev].is_output || s->vi[ev].is_const || !s->vi[wv].is_const ||
        (bv >= 0 && !s->vi[bv].is_const) || s->t[ev].dtype != TI_DTYPE_F32 ||
        s->t[dw->outputs[0]].dtype != TI_DTYPE_F32)
        return 0;
    int readers, c = ti__fuse_producer(s, ev, &readers);
    if (c < 0 || c >= n || readers != 1) return 0;
    ti__node *pw = &s->nodes[c];
    if (strcmp(pw->op, "Conv") != 0 || pw->domain[0] != 0 || pw->n_outputs != 1 ||
        pw->n_inputs < 2 || pw->n_inputs > 3 || pw->pool_k[0] != 0 || pw->dw_k != 0)
        return 0;
    ti__kctx k;
    ti_error quiet;
    ti__convp pp, dp;
    if (!ti__session_bind_io(s, c) || !ti__session_bind_io(s, n)) return 0;
    ti__kctx_init(s, &k, c, &quiet);
    if (ti__conv_params(&k, 0, &pp) != TI_OK || !ti__conv_pointwise(&pp) || pp.group != 1 ||
        pp.n != 1 || pp.mg < 4 || pp.out_sp * (size_t)pp.m * sizeof(float) < TI__PWDW_MIN_BYTES)
        return 0;
    ti__kctx_init(s, &k, n, &quiet);
    if (ti__conv_params(&k, 0, &dp) != TI_OK || !ti__conv_dw_ok(&dp) || dp.n != 1 ||
        dp.c != pp.m || dp.m != dp.c || dp.group != dp.c || dp.pb[1] < 0 || dp.pb[2] < 0 ||
        dp.out[1] < 1 || dp.out[2] < 1 || (dp.k[1] == 5 && dp.s[1] == 2) ||
        !ti__conv_dw_rows_ok(ti__dw_pick_isa(), &dp))
        return 0;
    if (!ti__fuse_own_inputs_n(s, pw, 7)) return 0;
    pw->inputs[5] = wv;
    pw->inputs[6] = bv;
    pw->n_inputs = 7;
    pw->dw_k = (int)dp.k[1];
    pw->dw_s = (int)dp.s[1];
    pw->dw_pt = (int)dp.pb[1];
    pw->dw_pl = (int)dp.pb[2];
    pw->dw_act = dw->act;
    pw->dw_act_a = dw->act_a;
    pw->dw_act_b = dw->act_b;
    pw->fused_name = ti__fused_name(s, pw->act, "DepthwiseConv", dw->act);
    pw->outputs[0] = dw->outputs[0];
    dw->op = "";
    s->info.num_fused++;
    return 1;
}

/* MatMul + Add of a constant row vector ([N], [1,N], [1,1,N]): the vector becomes the
 * MatMul's third input, a bias the kernel adds before the activation. */
TI__PRIVATE int ti__fuse_matmul_add(ti_session *s, ti__node *mm, const ti__node *add, int y) {
    if (add->n_inputs != 2 || mm->n_inputs != 2) return 0;
    int cv = add->inputs[0] == y ? add->inputs[1] : add->inputs[0];
    if (cv < 0 || cv == y || !s->vi[cv].is_const || s->t[cv].dtype != TI_DTYPE_F32) return 0;
    const ti_tensor *c = &s->t[cv], *yt = &s->t[y];
    if (yt->rank < 1 || c->rank > yt->rank || ti__numel(c) != (size_t)yt->shape[yt->rank - 1])
        return 0;
    for (int d = 0; d + 1 < c->rank; d++)
        if (c->shape[d] != 1) return 0;
    if (!ti__fuse_own_inputs(s, mm)) return 0;
    mm->inputs[2] = cv;
    mm->n_inputs = 3;
    return 1;
}

/* An activation node that can be folded into its producer: sets act, a, b. */
TI__PRIVATE int ti__fuse_act_of(const ti_session *s, const ti__node *n, int *act, float *a, float *b) {
    const char *op = n->op;
    *a = 0.0f;
    *b = 0.0f;
    if (n->n_outputs < 1) return 0;
    if (strcmp(op, "Relu") == 0) *act = TI__ACT_RELU;
    else if (strcmp(op, "Sigmoid") == 0) *act = TI__ACT_SIGMOID;
    else if (strcmp(op, "Tanh") == 0) *act = TI__ACT_TANH;
    else if (strcmp(op, "HardSwish") == 0) *act = TI__ACT_HARD_SWISH;
    else if (strcmp(op, "LeakyRelu") == 0) {
        *act = TI__ACT_LEAKY_RELU;
        *a = ti__attr_f(n, "alpha", 0.01f);
    } else if (strcmp(op, "HardSigmoid") == 0) {
        *act = TI__ACT_HARD_SIGMOID;
        *a = ti__attr_f(n, "alpha", 0.2f);
        *b = ti__attr_f(n, "beta", 0.5f);
    } else if (strcmp(op, "Clip") == 0) {
        *act = TI__ACT_CLIP;
        if (s->m->opset < 11) {
            *a = ti__attr_f(n, "min", -FLT_MAX);
            *b = ti__attr_f(n, "max", FLT_MAX);
        } else if (!ti__fuse_const_scalar(s, n->n_inputs > 1 ? n->inputs[1] : -1, -FLT_MAX, a) ||
                   !ti__fuse_const_scalar(s, n->n_inputs > 2 ? n->inputs[2] : -1, FLT_MAX, b))
            return 0;
    } else return 0;
    return 1;
}

/* ---- QDQ fusion --------------------------------------------------------------------- */
/* DequantizeLinear(x) and DequantizeLinear(w constant) [+ DequantizeLinear(int32 bias)] ->
 * Conv / MatMul / Gemm -> [Relu / Clip, already folded into act] -> QuantizeLinear becomes
 * one QLinearConv or QLinearMatMul on the integer tensors, as onnxruntime's QDQ
 * transformer does (its results for QDQ models come from its integer kernels). Only the
 * exact pattern is fused: the float intermediates have no other user and are not graph
 * outputs, scales and zero points are constants, activation scales are per tensor, the
 * weights per tensor or per output channel. The weights' DequantizeLinear was folded into
 * a float constant before fusion: its integer inputs are found on the model's node. */

/* A constant float32 scalar scale. */
TI__PRIVATE int ti__qdq_scale1(const ti_session *s, int v) {
    return v >= 0 && s->vi[v].is_const && s->t[v].dtype == TI_DTYPE_F32 && ti__numel(&s->t[v]) == 1;
}

/* Inputs of a DequantizeLinear / QuantizeLinear node, checked: q (dtype qt: uint8 or int8,
 * or int32 when bias), constant float32 scale of 1 value or (per_axis) nch values along
 * axis want_axis of a rank-`rank` q, zero point absent or constant of q's dtype and the
 * scale's size. Returns 1 when the node fits. */
TI__PRIVATE int ti__qdq_params(const ti_session *s, const ti__node *n, int is_q, int bias,
                               int per_axis, int want_axis, size_t nch) {
    if (n->n_inputs < 2 || n->n_outputs < 1 || n->inputs[1] < 0) return 0;
    if (ti__attr_i(n, "block_size", 0) != 0 || ti__attr_i(n, "output_dtype", 0) != 0 ||
        ti__attr_i(n, "precision", 0) != 0)
        return 0;
    int sv = n->inputs[1], zv = n->n_inputs > 2 ? n->inputs[2] : -1;
    int qv = is_q ? n->outputs[0] : n->inputs[0];
    if (qv < 0) return 0;
    ti_dtype qt = s->t[qv].dtype;
    if (bias ? qt != TI_DTYPE_I32 : (qt != TI_DTYPE_U8 && qt != TI_DTYPE_I8)) return 0;
    if (!s->vi[sv].is_const || s->t[sv].dtype != TI_DTYPE_F32) return 0;
    size_t ns = ti__numel(&s->t[sv]);
    if (ns != 1) {
        int64_t axis = ti__attr_i(n, "axis", 1), rank = s->t[qv].rank;
        if (axis < 0) axis += rank;
        if (!per_axis || ns != nch || s->t[sv].rank != 1 || axis != want_axis) return 0;
    }
    if (zv >= 0) {
        if (!s->vi[zv].is_const || s->t[zv].dtype != qt || ti__numel(&s->t[zv]) != ns) return 0;
        if (bias)
            for (size_t i = 0; i < ns; i++)
                if (((const int32_t *)s->t[zv].data)[i] != 0) return 0;
    }
    return 1;
}

/* The plan node before `before` whose output 0 is v; -1 when none. */
TI__PRIVATE int ti__qdq_producer(const ti_session *s, int v, int before) {
    for (int j = before - 1; j >= 0; j--) {
        const ti__node *n = &s->nodes[j];
        if (n->op[0] != 0 && n->n_outputs > 0 && n->outputs[0] == v) return j;
    }
    return -1;
}

/* The model's DequantizeLinear whose output is the folded constant v, all inputs constant. */
TI__PRIVATE const ti__node *ti__qdq_folded_dq(const ti_session *s, int v) {
    if (v < 0 || !s->vi[v].is_const) return NULL;
    for (int j = 0; j < s->m->n_nodes; j++) {
        const ti__node *n = &s->m->nodes[j];
        if (n->domain[0] != 0 || strcmp(n->op, "DequantizeLinear") != 0 || n->n_outputs < 1 ||
            n->outputs[0] != v)
            continue;
        for (int i = 0; i < n->n_inputs; i++)
            if (n->inputs[i] >= 0 && !s->vi[n->inputs[i]].is_const) return NULL;
        return n;
    }
    return NULL;
}

/* A new constant: w [r, c] (1-byte elements) transposed to [c, r]. */
TI__PRIVATE int ti__qdq_transposed(ti_session *s, int wv) {
    const ti_tensor *w = &s->t[wv];
    int v = ti__session_new_value(s, w->name);
    if (v < 0) return -1;
    ti_tensor *t = &s->t[v];
    int64_t dims[2] = {w->shape[1], w->shape[0]};
    if (!ti__set_shape(t, w->dtype, 2, dims)) return -1;
    unsigned char *d = (unsigned char *)ti__pool_alloc(&s->plan_pool, t->size_bytes + 1);
    if (d == NULL) return -1;
    const unsigned char *src = (const unsigned char *)w->data;
    size_t r = (size_t)w->shape[0], c = (size_t)w->shape[1];
    for (size_t i = 0; i < r; i++)
        for (size_t j = 0; j < c; j++) d[j * r + i] = src[i * c + j];
    t->data = d;
    s->vi[v].is_const = 1;
    return v;
}

/* Tries the QDQ pattern around plan node n (Conv, MatMul or Gemm); 1 when fused. */
TI__PRIVATE int ti__fuse_qdq(ti_session *s, int n, const int *uses, const int *user) {
    ti__node *a = &s->nodes[n];
    int conv = strcmp(a->op, "Conv") == 0, gemm = strcmp(a->op, "Gemm") == 0;
    /* (a Conv with a gate fused in, input 3, stays a float conv) */
    if (a->domain[0] != 0 || a->n_inputs < 2 || a->n_inputs > 3 || a->n_outputs != 1 ||
        a->outputs[0] < 0)
        return 0;
    if (a->act != TI__ACT_NONE && a->act != TI__ACT_RELU && a->act != TI__ACT_CLIP) return 0;
    int xv = a->inputs[0], wv = a->inputs[1], yv = a->outputs[0];
    int bv = a->n_inputs > 2 ? a->inputs[2] : -1;
    if (xv < 0 || wv < 0 || uses[xv] != 1 || s->vi[xv].is_output || uses[yv] != 1 ||
        s->vi[yv].is_output)
        return 0;
    if (!conv && !gemm && bv >= 0) return 0; /* MatMul with a fused bias Add */
    if (gemm && (bv >= 0 || ti__attr_i(a, "transA", 0) != 0 || ti__attr_f(a, "alpha", 1.0f) != 1.0f))
        return 0;
    int px = ti__qdq_producer(s, xv, n);
    if (px < 0) return 0;
    ti__node *dqx = &s->nodes[px], *q = &s->nodes[user[yv]];
    if (dqx->domain[0] != 0 || strcmp(dqx->op, "DequantizeLinear") != 0 ||
        !ti__qdq_params(s, dqx, 0, 0, 0, 0, 1))
        return 0;
    if (q->domain[0] != 0 || strcmp(q->op, "QuantizeLinear") != 0 || q->inputs[0] != yv ||
        q->n_outputs < 1 || !ti__qdq_params(s, q, 1, 0, 0, 0, 1))
        return 0;
    const ti__node *dqw = ti__qdq_folded_dq(s, wv);
    const ti_tensor *w = &s->t[wv];
    int trans_b = gemm && ti__attr_i(a, "transB", 0) != 0;
    if (dqw == NULL || (!conv && w->rank != 2) || (conv && w->rank < 3)) return 0;
    /* per output channel: axis 0 of conv weights, the column axis of MatMul / Gemm b */
    size_t nch = (size_t)w->shape[conv || trans_b ? 0 : w->rank - 1];
    if (!ti__qdq_params(s, dqw, 0, 0, 1, conv || trans_b ? 0 : w->rank - 1, nch)) return 0;
    int xq = dqx->inputs[0], wq = dqw->inputs[0];
    int yzv = q->n_inputs > 2 ? q->inputs[2] : -1;
    if (yzv < 0 && s->t[xq].dtype != TI_DTYPE_U8) return 0; /* QLinear*: y dtype is x's */
    /* bias: int32 DequantizeLinear with scale x_scale * w_scale (float32 product), zp 0 */
    const ti__node *dqb = NULL;
    if (bv >= 0) {
        dqb = ti__qdq_folded_dq(s, bv);
        if (dqb == NULL || !ti__qdq_params(s, dqb, 0, 1, 1, 0, nch)) return 0;
        if (s->t[dqb->inputs[0]].rank != 1 || (size_t)s->t[dqb->inputs[0]].shape[0] != nch)
            return 0;
        const ti_tensor *bs = &s->t[dqb->inputs[1]], *ws = &s->t[dqw->inputs[1]];
        float xs = *(const float *)s->t[dqx->inputs[1]].data;
        for (size_t c = 0; c < nch; c++) {
            float want = xs * ((const float *)ws->data)[ti__numel(ws) == 1 ? 0 : c];
            if (((const float *)bs->data)[ti__numel(bs) == 1 ? 0 : c] != want) return 0;
        }
    }
    int wt = wq;
    if (trans_b && (wt = ti__qdq_transposed(s, wq)) < 0) return 0;
    int ni = conv ? 9 : 8;
    int *in = (int *)ti__pool_alloc(&s->plan_pool, sizeof(int) * (size_t)ni);
    int *out = (int *)ti__pool_alloc(&s->plan_pool, sizeof(int) * 2);
    const ti__op *op = ti__op_find("", conv ? "QLinearConv" : "QLinearMatMul");
    if (in == NULL || out == NULL || op == NULL) return 0;
    in[0] = xq;
    in[1] = dqx->inputs[1];
    in[2] = dqx->n_inputs > 2 ? dqx->inputs[2] : -1;
    in[3] = wt;
    in[4] = dqw->inputs[1];
    in[5] = dqw->n_inputs > 2 ? dqw->inputs[2] : -1;
    in[6] = q->inputs[1];
    in[7] = yzv;
    if (conv) in[8] = dqb != NULL ? dqb->inputs[0] : -1;
    out[0] = q->outputs[0];
    a->op = conv ? "QLinearConv" : "QLinearMatMul";
    a->inputs = in;
    a->n_inputs = ni;
    a->outputs = out;
    s->ops[n] = op;
    dqx->op = "";
    q->op = "";
    s->info.num_fused += 2;
    return 1;
}

TI__PRIVATE ti_status ti__pass_fuse(ti_session *s, ti_error *err) {
    int nv = s->cap_values;
    int *uses = (int *)ti__pool_alloc(&s->plan_pool, sizeof(int) * (size_t)nv);
    int *user = (int *)ti__pool_alloc(&s->plan_pool, sizeof(int) * (size_t)nv);
    if (uses == NULL || user == NULL)
        return ti__fail(err, TI_ERR_OUT_OF_MEMORY, s->m->name, "out of memory in fusion");
    for (int n = 0; n < s->n_nodes; n++)
        for (int i = 0; i < s->nodes[n].n_inputs; i++) {
            int v = s->nodes[n].inputs[i];
            if (v < 0) continue;
            uses[v]++;
            user[v] = n;
        }
    for (int n = 0; n < s->n_nodes; n++) {
        ti__node *a = &s->nodes[n];
        if (a->domain[0] != 0) continue; /* ONNX ops only; TFLite kernels fuse on their own */
        int is_conv = strcmp(a->op, "Conv") == 0;
        /* elementwise Add/Sub/Mul/Div take an activation only (a residual Add + Relu) */
        int is_elt = strcmp(a->op, "Add") == 0 || strcmp(a->op, "Sub") == 0 || strcmp(a->op, "Mul") == 0 ||
                     strcmp(a->op, "Div") == 0;
        if (!is_conv && !is_elt && strcmp(a->op, "ConvTranspose") != 0 && strcmp(a->op, "Gemm") != 0 &&
            strcmp(a->op, "MatMul") != 0)
            continue;
        for (;;) {
            if (a->n_outputs != 1 || a->outputs[0] < 0) break;
            int y = a->outputs[0];
            if (s->vi[y].is_output || s->t[y].dtype != TI_DTYPE_F32 || a->act != TI__ACT_NONE) break;
            /* SiLU: y -> Sigmoid -> s; Mul(y, s) */
            if (uses[y] == 2 && !is_elt) {
                int sig = -1, mul = -1;
                for (int j = n + 1; j < s->n_nodes; j++) {
                    const ti__node *c = &s->nodes[j];
                    for (int i = 0; i < c->n_inputs; i++)
                        if (c->inputs[i] == y) {
                            if (strcmp(c->op, "Sigmoid") == 0 && sig < 0) sig = j;
                            else if (strcmp(c->op, "Mul") == 0) mul = j;
                        }
                }
                if (sig < 0 || mul < 0) break;
                ti__node *sn = &s->nodes[sig], *mn = &s->nodes[mul];
                int sv = sn->outputs[0];
                if (sv < 0 || uses[sv] != 1 || s->vi[sv].is_output || mn->n_inputs != 2 ||
                    !((mn->inputs[0] == y && mn->inputs[1] == sv) ||
                      (mn->inputs[1] == y && mn->inputs[0] == sv)))
                    break;
                if (!ti__fuse_own_inputs(s, a)) break;
                a->act = TI__ACT_SILU;
                a->outputs[0] = mn->outputs[0];
                sn->op = "";
                mn->op = "";
                s->info.num_fused += 2;
                break;
            }
            if (uses[y] != 1) break;
            ti__node *b = &s->nodes[user[y]];
            if (b->domain[0] != 0) break;
            int act;
            float aa, ab;
            int fused = 0;
            if (is_elt && (a->n_inputs != 2 || !(b->inputs[0] == y && ti__fuse_act_of(s, b, &act, &aa, &ab))))
                break;
            if (is_conv && strcmp(b->op, "BatchNormalization") == 0 && b->inputs[0] == y)
                fused = ti__fuse_conv_bn(s, a, b);
            else if (is_conv && strcmp(b->op, "Add") == 0)
                fused = ti__fuse_conv_add(s, a, b, y);
            else if (strcmp(a->op, "MatMul") == 0 && strcmp(b->op, "Add") == 0)
                fused = ti__fuse_matmul_add(s, a, b, y);
            else if (b->inputs[0] == y && ti__fuse_act_of(s, b, &act, &aa, &ab)) {
                fused = ti__fuse_own_inputs(s, a);
                if (fused) {
                    a->act = act;
                    a->act_a = aa;
                    a->act_b = ab;
                }
            }
            if (!fused) break;
            a->outputs[0] = b->outputs[0];
            b->op = "";
            s->info.num_fused++;
        }
    }
    /* gates into the 1x1 convs after them: after the convs' batch norms are folded */
    if (s->cl == NULL)
        for (int n = 0; n < s->n_nodes; n++) ti__fuse_scale_conv(s, n, uses, user);
    /* QDQ: after the activations are folded, so Conv + Relu + QuantizeLinear is one node */
    for (int n = 0; n < s->n_nodes; n++) {
        const char *op = s->nodes[n].op;
        if (strcmp(op, "Conv") == 0 || strcmp(op, "MatMul") == 0 || strcmp(op, "Gemm") == 0)
            ti__fuse_qdq(s, n, uses, user);
    }
    /* residual sums into the convs before them: after the gates (input 3) and QDQ */
    if (s->cl == NULL)
        for (int n = 0; n < s->n_nodes; n++) ti__fuse_conv_sum(s, n);
    /* a MaxPool into the few-channel conv before it */
    if (s->cl == NULL)
        for (int n = 0; n < s->n_nodes; n++) ti__fuse_conv_pool(s, n);
    /* a depthwise conv into the 1x1 conv before it */
    if (s->cl == NULL)
        for (int n = 0; n < s->n_nodes; n++) ti__fuse_pw_dw(s, n);
    /* compact, rebinding the tensors of rewritten nodes */
    int w = 0;
    for (int n = 0; n < s->n_nodes; n++) {
        if (s->nodes[n].op[0] == 0) continue;
        s->nodes[w] = s->nodes[n];
        s->ops[w] = s->ops[n];
        if (!ti__session_bind_io(s, w))
            return ti__fail(err, TI_ERR_OUT_OF_MEMORY, s->m->name, "out of memory in fusion");
        w++;
    }
    s->n_nodes = w;
    s->first_dynamic = w;
    return TI_OK;
}

/* Weight pre-packing (DESIGN.md "Passes at load"): for each static CPU node whose kernel
 * runs faster on weights laid out its own way, that layout is computed here, once, into the
 * plan's pool, and recorded on the plan's copy of the node. Today: Conv by Winograd
 * (cpu/conv_fast.c). After fusion, which rewrites Conv weights. */
/* Index of the weights input the prepack pass needs constant for node's op, -1 when it
 * packs nothing for it: Conv (Winograd), the 8-bit ONNX kernels on the shared GEMM, and
 * the quantized TFLite CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED. */
TI__PRIVATE int ti__prepack_weights(const ti__node *node) {
    static const char *const onnx1[] = {"Conv", "ConvInteger", "MatMulInteger"};
    static const char *const onnx3[] = {"QLinearConv", "QLinearMatMul"};
    static const char *const tfl1[] = {"CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED"};
    if (node->domain[0] == 0) {
        for (int i = 0; i < 3; i++)
            if (strcmp(node->op, onnx1[i]) == 0) return 1;
        for (int i = 0; i < 2; i++)
            if (strcmp(node->op, onnx3[i]) == 0) return 3;
    } else if (strcmp(node->domain, "tflite") == 0) {
        for (int i = 0; i < 3; i++)
            if (strcmp(node->op, tfl1[i]) == 0) return 1;
    }
    return -1;
}

TI__PRIVATE ti_status ti__pass_bands(ti_session *s, ti_error *err) {
    /* other[v]: a node that is not an ONNX Conv reads value v (the pool gives zeros) */
    int *other = (int *)ti__pool_alloc(&s->plan_pool, sizeof(int) * (size_t)s->cap_values);
    if (other == NULL)
        return ti__fail(err, TI_ERR_OUT_OF_MEMORY, s->m->name, "out of memory in planning");
    for (int n = 0; n < s->n_nodes; n++) {
        const ti__node *node = &s->nodes[n];
        int conv = node->domain[0] == 0 && strcmp(node->op, "Conv") == 0;
        for (int i = 0; i < node->n_inputs; i++)
            if (node->inputs[i] >= 0 && !conv) other[node->inputs[i]] = 1;
    }
    for (int n = 0; n < s->n_nodes; n++) {
        ti__node *node = &s->nodes[n];
        int y = node->n_outputs > 0 ? node->outputs[0] : -1;
        node->bands_ok = y >= 0 && !other[y] && !s->vi[y].is_output;
    }
    return TI_OK;
}

TI__PRIVATE ti_status ti__pass_prepack(ti_session *s, ti_error *err) {
    for (int n = 0; n < s->first_dynamic; n++) {
        ti__node *node = &s->nodes[n];
        if (strcmp(node->domain, "tflite") == 0 && strcmp(node->op, "ADD") == 0) {
            ti__kctx k;
            ti__kctx_init(s, &k, n, err);
            ti_status st = ti__tfl_add_prepack(&k, node, &s->plan_pool);
            if (st != TI_OK) return st;
            continue;
        }
        int wi = ti__prepack_weights(node);
        if (wi < 0 || node->n_inputs <= wi || node->inputs[wi] < 0 || !s->vi[node->inputs[wi]].is_const)
            continue;
        ti__kctx k;
        ti__kctx_init(s, &k, n, err);
        if (node->domain[0] == 0 && strcmp(node->op, "Conv") == 0) ti__conv_decode(&k, node);
        ti_status st;
        if (node->domain[0] != 0) st = ti__tfc_prepack(&k, node, &s->plan_pool);
        else if (strcmp(node->op, "Conv") == 0) st = ti__conv_prepack(&k, node, &s->plan_pool);
        else if (strcmp(node->op, "ConvInteger") == 0) st = ti__convint_prepack(&k, node, &s->plan_pool);
        else if (strcmp(node->op, "MatMulInteger") == 0) st = ti__matmulint_prepack(&k, node, &s->plan_pool);
        else if (strcmp(node->op, "QLinearConv") == 0) st = ti__qconv_prepack(&k, node, &s->plan_pool);
        else st = ti__qmm_prepack(&k, node, &s->plan_pool);
        if (st != TI_OK)
            return ti__fail(err, TI_ERR_OUT_OF_MEMORY, s->m->name,
                            "out of memory packing the weights of node '%s'", node->name);
    }
    return TI_OK;
}
