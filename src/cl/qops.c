/* The OpenCL side of TFLite's 8-bit ops (domain "tflite"): CONV_2D, DEPTHWISE_CONV_2D,
 * ADD, AVERAGE_POOL_2D, MAX_POOL_2D on uint8 (per-tensor) and int8 (per-channel) tensors,
 * and RESHAPE / SQUEEZE / EXPAND_DIMS of any dtype. The planners take their parameters from
 * the CPU kernels' own set-up (tfl_accum.c, tfl_elementwise.c, tfl_pool.c: geometry,
 * dtype checks, multipliers, clamp ranges, byte tables), so the device computes the same
 * bytes; anything those refuse, or that the kernels do not cover, stays on the CPU with
 * the reason. Relies on cl/ops.c (ti__clc, argument helpers). Must not allocate in a
 * launcher. */
#ifndef TI_NO_OPENCL

#define TI__CLM_QUANT (1u << TI__CLP_QUANT)

/* Where the kernels find a tensor's bytes: buffer and byte offset. 8-bit tensors are never
 * halved (fp16 storage converts float32 values only), so they sit in the float mirror at
 * their arena offset, or in the caller's memory when it is wrapped. */
TI__PRIVATE void ti__clc_loc8(const ti__clc *c, const ti_tensor *t, cl_mem *mem, size_t *off) {
    int v = (int)(t - c->s->t);
    if (c->g->cst_off[v] != (size_t)-1) {
        *mem = c->g->cst;
        *off = c->g->cst_off[v];
    } else if (!c->g->rt.f16 && c->g->bmem != NULL && c->g->bmem[v] != NULL) {
        *mem = c->g->bmem[v];
        *off = 0;
    } else {
        *mem = c->g->act;
        *off = ti__cl_off(c->s, v);
    }
}
TI__PRIVATE void ti__cla_t8(ti__clargs *a, const ti__clc *c, const ti_tensor *t) {
    cl_mem m;
    size_t off;
    ti__clc_loc8(c, t, &m, &off);
    ti__cla_mem(a, m, off);
}

/* A kernel context for the CPU set-up functions, their failures written to *e. */
TI__PRIVATE void ti__clc_kctx(const ti__clc *c, ti__kctx *k, ti_error *e) {
    memset(k, 0, sizeof *k);
    memset(e, 0, sizeof *e);
    k->model = c->s->m;
    k->node = c->node;
    k->node_index = c->n;
    k->in = c->in;
    k->n_in = c->n_in;
    k->out = c->out;
    k->n_out = c->n_out;
    k->opset = c->s->m->opset;
    k->err = e;
    k->file = "";
}

TI__PRIVATE int ti__cl_is8(const ti_tensor *t) {
    return t != NULL && (t->dtype == TI_DTYPE_U8 || t->dtype == TI_DTYPE_I8) && t->quant.count > 0;
}

/* ---- CONV_2D / DEPTHWISE_CONV_2D ------------------------------------------------------ */

/* Table entries before the per-channel multipliers (ti_qconv's p[24]). */
#define TI__CLQ_HEAD 24

TI__PRIVATE int ti__cl_plan_qconv_common(ti__clc *c, int dw) {
    ti__kctx k;
    ti_error e;
    ti__tfc_geo g;
    int kind;
    ti__clc_kctx(c, &k, &e);
    const ti_tensor *x = c->n_in > 0 ? c->in[0] : NULL, *w = c->n_in > 1 ? c->in[1] : NULL;
    const ti_tensor *b = c->n_in > 2 ? c->in[2] : NULL, *y = c->n_out > 0 ? c->out[0] : NULL;
    if (!ti__cl_is8(x) || !ti__cl_is8(w) || !ti__cl_is8(y))
        return ti__clc_no(c, "8-bit quantized tensors only on OpenCL (input %s)",
                          x ? ti_dtype_name(x->dtype) : "none");
    if (!c->s->vi[c->node->inputs[1]].is_const) return ti__clc_no(c, "weights computed at run time");
    if (b != NULL && (b->dtype != TI_DTYPE_I32 || !c->s->vi[c->node->inputs[2]].is_const))
        return ti__clc_no(c, "bias is not a constant int32 tensor");
    if (ti__tfc_geometry(&k, dw, &g) != TI_OK) return ti__clc_no(c, "%s", e.message);
    if (ti__tfc_check(&k, x, w, b, y, g.oc, dw ? 3 : 0, TI__WZP_ZERO, &kind) != TI_OK)
        return ti__clc_no(c, "%s", e.message);
    if (kind != TI__TFC_U8 && kind != TI__TFC_I8) return ti__clc_no(c, "16-bit activations not on OpenCL");
    int64_t pixels = g.n * g.oh * g.ow;
    if (pixels > INT32_MAX / 4 || g.oc > 65536 || (int64_t)ti__numel(x) > INT32_MAX ||
        (int64_t)ti__numel(y) > INT32_MAX)
        return ti__clc_no(c, "tensor too large for the OpenCL kernel's int indices");
    int32_t *p = ti__clc_params(c, TI__CLQ_HEAD + 2 * (int)g.oc);
    if (p == NULL) return ti__clc_no(c, "out of memory");
    /* the CPU run's requantization (the prepack pass's multipliers, else computed into the
     * table itself), then copied to the table: [oc] multipliers, then [oc] shifts */
    ti__qrq rq;
    memset(&rq, 0, sizeof rq);
    k.scratch = p + TI__CLQ_HEAD;
    k.scratch_bytes = sizeof(int32_t) * 2 * (size_t)g.oc;
    if (ti__tfc_requant_setup(&k, x, w, b, y, g.oc, x->dtype == TI_DTYPE_U8, &rq) != TI_OK)
        return ti__clc_no(c, "%s", e.message);
    if (rq.mode != TI__QRQ_32) return ti__clc_no(c, "requantization mode %d not on OpenCL", rq.mode);
    memmove(p + TI__CLQ_HEAD, rq.mult, sizeof(int32_t) * (size_t)g.oc);
    memmove(p + TI__CLQ_HEAD + g.oc, rq.shift, sizeof(int32_t) * (size_t)g.oc);
    int64_t v[TI__CLQ_HEAD] = {g.n, g.ih, g.iw, g.ic, g.oh, g.ow, g.oc, g.kh, g.kw, g.kc, g.sh, g.sw,
                               g.dh, g.dw, g.ph, g.pw, dw ? g.mult : g.opg, kind == TI__TFC_I8,
                               -(int64_t)x->quant.zero_point[0],
                               kind == TI__TFC_U8 ? -(int64_t)w->quant.zero_point[0] : 0,
                               rq.yo, rq.lo, rq.hi, 0};
    for (int i = 0; i < TI__CLQ_HEAD; i++) {
        if (v[i] > INT32_MAX || v[i] < INT32_MIN) return ti__clc_no(c, "parameter %d out of int range", i);
        p[i] = (int32_t)v[i];
    }
    return 1;
}
TI__PRIVATE int ti__cl_plan_qconv(ti__clc *c) { return ti__cl_plan_qconv_common(c, 0); }
TI__PRIVATE int ti__cl_plan_qdwconv(ti__clc *c) { return ti__cl_plan_qconv_common(c, 1); }

TI__PRIVATE cl_int ti__cl_run_qconv_common(ti__clc *c, ti__clk kern) {
    const ti_tensor *x = c->in[0], *w = c->in[1], *b = c->n_in > 2 ? c->in[2] : NULL, *y = c->out[0];
    const int32_t *p = c->g->par[c->n];
    ti__clargs a;
    ti__cla_begin(&a, &c->g->rt, kern);
    ti__cla_t8(&a, c, x);
    ti__cla_t8(&a, c, w);
    if (b != NULL) { /* int32 constant: element offset */
        ti__cla_buf(&a, c->g->cst, c->g->cst_off[c->node->inputs[2]]);
    } else {
        ti__cla_buf(&a, c->g->cst, c->g->par_off[c->n]);
    }
    ti__cla_int(&a, b != NULL);
    ti__cla_t8(&a, c, y);
    ti__cla_par(&a, c);
    if (a.err != CL_SUCCESS) return a.err;
    size_t g[2] = {(size_t)p[6], (size_t)p[0] * (size_t)p[4] * (size_t)p[5]};
    return ti__clrt_launch(&c->g->rt, kern, 2, g, NULL);
}
TI__PRIVATE cl_int ti__cl_run_qconv(ti__clc *c) { return ti__cl_run_qconv_common(c, TI__CLK_QCONV); }
TI__PRIVATE cl_int ti__cl_run_qdwconv(ti__clc *c) { return ti__cl_run_qconv_common(c, TI__CLK_QDWCONV); }

/* ---- ADD ------------------------------------------------------------------------------ */

#define TI__CLQ_ADD_TABLES 8    /* ti_qadd's p[8]: the byte tables */
#define TI__CLQ_ADD_BCAST 1032 /* ... p[1032]: rank, dims, strides */

TI__PRIVATE int ti__cl_plan_qadd(ti__clc *c) {
    const ti_tensor *a = c->n_in > 0 ? c->in[0] : NULL, *b = c->n_in > 1 ? c->in[1] : NULL;
    const ti_tensor *y = c->n_out > 0 ? c->out[0] : NULL;
    if (c->n_in != 2 || !ti__cl_is8(a) || !ti__cl_is8(b) || !ti__cl_is8(y) || a->dtype != b->dtype ||
        y->dtype != a->dtype)
        return ti__clc_no(c, "8-bit quantized ADD only on OpenCL");
    size_t n = ti__numel(y);
    if (n > (size_t)INT32_MAX || ti__numel(a) > (size_t)INT32_MAX || ti__numel(b) > (size_t)INT32_MAX)
        return ti__clc_no(c, "tensor too large for the OpenCL kernel");
    int same = ti__numel(a) == n && ti__numel(b) == n && a->rank == y->rank && b->rank == y->rank;
    ti__kctx k;
    ti_error e;
    ti__clc_kctx(c, &k, &e);
    ti__tfl_bjob *j = (ti__tfl_bjob *)ti__calloc(&c->s->al, sizeof *j);
    if (j == NULL) return ti__clc_no(c, "out of memory");
    int ok = ti__tfl_bin_setup(&k, TI__TB_ADD, 0, j) == TI_OK;
    if (!ok) ti__clc_no(c, "%s", e.message);
    else if (j->pot16 || !j->quant || j->b.fn != ti__tfl_bin_q8)
        ok = ti__clc_no(c, "this ADD does not take the 8-bit tables");
    int r = same ? 0 : (y->rank ? y->rank : 1);
    int32_t *p = ok ? ti__clc_params(c, TI__CLQ_ADD_BCAST + 1 + 3 * r) : NULL;
    if (ok && p == NULL) ok = ti__clc_no(c, "out of memory");
    if (ok) {
        size_t row = j->add_mode != TI__TFL_ADD_REF ? j->add_row : 0;
        p[0] = (int32_t)row;
        p[1] = y->dtype == TI_DTYPE_U8;
        p[2] = (int32_t)(row - row % (j->add_lanes ? j->add_lanes : 1));
        p[3] = j->mo;
        p[4] = j->so;
        p[5] = j->out_off;
        p[6] = j->lo;
        p[7] = j->hi;
        int32_t *t = p + TI__CLQ_ADD_TABLES;
        memcpy(t, j->t1[0], sizeof j->t1[0]);
        memcpy(t + 256, j->t1[1], sizeof j->t1[1]);
        memcpy(t + 512, j->t2[0], sizeof j->t2[0]);
        memcpy(t + 768, j->t2[1], sizeof j->t2[1]);
        p[TI__CLQ_ADD_BCAST] = r;
        if (r > 0) { /* broadcast: the output's dims and each input's strides in them */
            int64_t dims[TI_MAX_DIMS];
            for (int d = 0; d < r; d++) dims[d] = y->rank ? y->shape[d] : 1;
            for (int d = 0; d < r; d++) p[TI__CLQ_ADD_BCAST + 1 + d] = (int32_t)dims[d];
            ti__cl_bstrides(a, r, dims, p + TI__CLQ_ADD_BCAST + 1 + r);
            ti__cl_bstrides(b, r, dims, p + TI__CLQ_ADD_BCAST + 1 + 2 * r);
        }
    }
    ti__free(&c->s->al, j, sizeof *j);
    return ok;
}
TI__PRIVATE cl_int ti__cl_run_qadd(ti__clc *c) {
    size_t n = ti__numel(c->out[0]);
    ti__clargs a;
    ti__cla_begin(&a, &c->g->rt, TI__CLK_QADD);
    ti__cla_t8(&a, c, c->in[0]);
    ti__cla_t8(&a, c, c->in[1]);
    ti__cla_t8(&a, c, c->out[0]);
    ti__cla_par(&a, c);
    ti__cla_int(&a, (int64_t)n);
    if (a.err != CL_SUCCESS) return a.err;
    return ti__clrt_launch(&c->g->rt, TI__CLK_QADD, 1, &n, NULL);
}

/* ---- AVERAGE_POOL_2D / MAX_POOL_2D ------------------------------------------------------ */

TI__PRIVATE int ti__cl_plan_qpool(ti__clc *c) {
    const ti_tensor *x = c->n_in > 0 ? c->in[0] : NULL, *y = c->n_out > 0 ? c->out[0] : NULL;
    if (!ti__cl_is8(x) || !ti__cl_is8(y) || x->dtype != y->dtype)
        return ti__clc_no(c, "8-bit quantized pooling only on OpenCL");
    ti__kctx k;
    ti_error e;
    ti__tfp_geom g;
    float flo, fhi;
    int32_t lo = 0, hi = 0;
    ti__clc_kctx(c, &k, &e);
    if (ti__tfp_geometry(&k, &g) != TI_OK || ti__tfl_act_bounds(&k, y, &flo, &fhi, &lo, &hi) != TI_OK)
        return ti__clc_no(c, "%s", e.message);
    int mx = strcmp(c->node->op, "MAX_POOL_2D") == 0;
    /* a window that pools nothing is the CPU kernel's error to report */
    for (int64_t o = 0; !mx && o < g.oh; o++)
        if (TI__MIN(g.fh, g.ih - (o * g.sh - g.ph)) <= TI__MAX(0, -(o * g.sh - g.ph)))
            return ti__clc_no(c, "output row %lld pools no input", (long long)o);
    for (int64_t o = 0; !mx && o < g.ow; o++)
        if (TI__MIN(g.fw, g.iw - (o * g.sw - g.pw)) <= TI__MAX(0, -(o * g.sw - g.pw)))
            return ti__clc_no(c, "output column %lld pools no input", (long long)o);
    if (ti__numel(x) > (size_t)INT32_MAX || g.n * g.oh * g.ow > INT32_MAX / 4)
        return ti__clc_no(c, "tensor too large for the OpenCL kernel");
    int32_t *p = ti__clc_params(c, 16);
    if (p == NULL) return ti__clc_no(c, "out of memory");
    int64_t v[16] = {g.n, g.ih, g.iw, g.c, g.oh, g.ow, g.fh, g.fw, g.sh, g.sw, g.ph, g.pw,
                     x->dtype == TI_DTYPE_I8, mx, lo, hi};
    for (int i = 0; i < 16; i++) {
        if (v[i] > INT32_MAX || v[i] < INT32_MIN) return ti__clc_no(c, "parameter %d out of int range", i);
        p[i] = (int32_t)v[i];
    }
    return 1;
}
TI__PRIVATE cl_int ti__cl_run_qpool(ti__clc *c) {
    const int32_t *p = c->g->par[c->n];
    ti__clargs a;
    ti__cla_begin(&a, &c->g->rt, TI__CLK_QPOOL);
    ti__cla_t8(&a, c, c->in[0]);
    ti__cla_t8(&a, c, c->out[0]);
    ti__cla_par(&a, c);
    if (a.err != CL_SUCCESS) return a.err;
    size_t g[2] = {(size_t)p[3], (size_t)p[0] * (size_t)p[4] * (size_t)p[5]};
    return ti__clrt_launch(&c->g->rt, TI__CLK_QPOOL, 2, g, NULL);
}

/* ---- RESHAPE, SQUEEZE, EXPAND_DIMS: the bytes as they are ----------------------------- */

TI__PRIVATE int ti__cl_plan_tfl_alias(ti__clc *c) {
    const ti_tensor *x = c->n_in > 0 ? c->in[0] : NULL, *y = c->n_out > 0 ? c->out[0] : NULL;
    if (x == NULL || y == NULL || x->dtype != y->dtype || x->size_bytes != y->size_bytes)
        return ti__clc_no(c, "input and output differ in dtype or size");
    if (x->size_bytes > (size_t)INT32_MAX) return ti__clc_no(c, "tensor too large for the OpenCL kernel");
    if (x->dtype == TI_DTYPE_F32) c->progs |= TI__CLM_ELTWISE; /* ti_copy_flat, fp16 storage aware */
    return 1;
}
TI__PRIVATE cl_int ti__cl_run_tfl_alias(ti__clc *c) {
    if (c->in[0]->dtype == TI_DTYPE_F32) return ti__cl_run_alias(c); /* fp16 storage aware */
    size_t n = c->out[0]->size_bytes;
    ti__clargs a;
    ti__cla_begin(&a, &c->g->rt, TI__CLK_COPY_BYTES);
    ti__cla_t8(&a, c, c->in[0]);
    ti__cla_t8(&a, c, c->out[0]);
    ti__cla_int(&a, (int64_t)n);
    if (a.err != CL_SUCCESS) return a.err;
    return ti__clrt_launch(&c->g->rt, TI__CLK_COPY_BYTES, 1, &n, NULL);
}

/* ---- the table -------------------------------------------------------------------------- */
static const ti__clop ti__cl_tfl_ops[] = {
    {"CONV_2D", TI__CLM_QUANT, ti__cl_plan_qconv, ti__cl_run_qconv},
    {"DEPTHWISE_CONV_2D", TI__CLM_QUANT, ti__cl_plan_qdwconv, ti__cl_run_qdwconv},
    {"ADD", TI__CLM_QUANT, ti__cl_plan_qadd, ti__cl_run_qadd},
    {"AVERAGE_POOL_2D", TI__CLM_QUANT, ti__cl_plan_qpool, ti__cl_run_qpool},
    {"MAX_POOL_2D", TI__CLM_QUANT, ti__cl_plan_qpool, ti__cl_run_qpool},
    {"RESHAPE", TI__CLM_QUANT, ti__cl_plan_tfl_alias, ti__cl_run_tfl_alias},
    {"SQUEEZE", TI__CLM_QUANT, ti__cl_plan_tfl_alias, ti__cl_run_tfl_alias},
    {"EXPAND_DIMS", TI__CLM_QUANT, ti__cl_plan_tfl_alias, ti__cl_run_tfl_alias},
};

TI__PRIVATE const ti__clop *ti__cl_tfl_op_find(const ti__node *node) {
    for (size_t i = 0; i < TI__COUNTOF(ti__cl_tfl_ops); i++)
        if (strcmp(ti__cl_tfl_ops[i].name, node->op) == 0) return &ti__cl_tfl_ops[i];
    return NULL;
}

#endif /* TI_NO_OPENCL */
