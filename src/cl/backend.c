/* The OpenCL backend of a session: places each planned node on the GPU or the CPU (with
 * the reason), lays out device memory (one activation buffer mirroring the CPU arena's
 * offsets, one buffer of constants and kernel parameter tables), and runs the plan,
 * copying a tensor between host and device only where a CPU node and a GPU node meet.
 * Relies on cl/runtime.c, the CPU kernels' parameter readers (conv.c, pool.c, gemm.c,
 * reduce.c) and the session. Must not allocate in ti__clplan_run. */
#ifndef TI_NO_OPENCL

#define TI__CL_HOST 1 /* value's bytes are current in host memory */
#define TI__CL_DEV 2  /* ... in device memory */

typedef struct ti__clplan {
    ti__clrt rt;
    int active;           /* 1 when a plan exists with at least one GPU node */
    cl_mem act, cst;      /* activations (arena mirror), constants + parameter tables */
    size_t act_bytes, cst_bytes;
    unsigned char *where; /* per value, during a run */
    size_t *cst_off;      /* per value: byte offset in cst, (size_t)-1 when not there */
    unsigned char *gpu;   /* per node */
    const char **why;     /* per node: reason for the CPU ("" on the GPU) */
    int32_t **par;        /* per node: parameter table (host copy), or NULL */
    int *npar;
    size_t *par_off;      /* per node: byte offset of its table in cst */
    int n_gpu, n_cpu;
    size_t transfer_bytes;
    int pending; /* an async run's work is still queued */
    /* background build (backend AUTO): the CPU serves runs until it is done */
    int building, cpu_runs;
    double t_start, t_ready;
    ti_status bg_status;
    char bg_why[320];
#ifndef TI_NO_THREADS
    pthread_t builder;
    pthread_mutex_t mu;
    ti_session *bg_session;
#endif
} ti__clplan;

/* What an op's GPU planner and launcher see. */
typedef struct ti__clc {
    ti_session *s;
    ti__clplan *g;
    int n;
    const ti__node *node;
    ti_tensor **in, **out;
    int n_in, n_out;
    char why[160];
} ti__clc;

TI__PRIVATE int ti__clc_no(ti__clc *c, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
TI__PRIVATE int ti__clc_no(ti__clc *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->why, sizeof c->why, fmt, ap);
    va_end(ap);
    return 0;
}

/* Parameter table of the node being planned: n ints, zeroed; NULL on OOM. */
TI__PRIVATE int32_t *ti__clc_params(ti__clc *c, int n) {
    int32_t *p = (int32_t *)ti__pool_alloc(&c->s->plan_pool, sizeof(int32_t) * (size_t)(n + 1));
    c->g->par[c->n] = p;
    c->g->npar[c->n] = p ? n : 0;
    return p;
}

/* The device buffer and byte offset of a tensor of node c. */
TI__PRIVATE void ti__clc_loc(const ti__clc *c, const ti_tensor *t, cl_mem *mem, size_t *off) {
    int v = (int)(t - c->s->t);
    if (c->g->cst_off[v] != (size_t)-1) {
        *mem = c->g->cst;
        *off = c->g->cst_off[v];
    } else {
        *mem = c->g->act;
        *off = (size_t)((const unsigned char *)t->data - c->s->arena);
    }
}
TI__PRIVATE void ti__cla_t(ti__clargs *a, const ti__clc *c, const ti_tensor *t) {
    cl_mem m;
    size_t off;
    ti__clc_loc(c, t, &m, &off);
    ti__cla_buf(a, m, off);
}
TI__PRIVATE void ti__cla_par(ti__clargs *a, const ti__clc *c) {
    ti__cla_buf(a, c->g->cst, c->g->par_off[c->n]);
}

TI__PRIVATE int ti__cl_f32(const ti_tensor *t) { return t != NULL && t->dtype == TI_DTYPE_F32; }

/* ---- elementwise -------------------------------------------------------------------- */

/* Unary op code of the ti_unary kernel: ti__act codes, 100+ for the others, 0 = copy. */
TI__PRIVATE int ti__cl_unary_code(const ti__clc *c, float *a, float *b) {
    const char *op = c->node->op;
    *a = 0.0f;
    *b = 0.0f;
    if (strcmp(op, "Relu") == 0) return TI__ACT_RELU;
    if (strcmp(op, "Sigmoid") == 0) return TI__ACT_SIGMOID;
    if (strcmp(op, "Tanh") == 0) return TI__ACT_TANH;
    if (strcmp(op, "HardSwish") == 0) return TI__ACT_HARD_SWISH;
    if (strcmp(op, "LeakyRelu") == 0) {
        *a = ti__attr_f(c->node, "alpha", 0.01f);
        return TI__ACT_LEAKY_RELU;
    }
    if (strcmp(op, "HardSigmoid") == 0) {
        *a = ti__attr_f(c->node, "alpha", 0.2f);
        *b = ti__attr_f(c->node, "beta", 0.5f);
        return TI__ACT_HARD_SIGMOID;
    }
    if (strcmp(op, "Clip") == 0) {
        *a = -FLT_MAX;
        *b = FLT_MAX;
        if (c->s->m->opset < 11) {
            *a = ti__attr_f(c->node, "min", -FLT_MAX);
            *b = ti__attr_f(c->node, "max", FLT_MAX);
            return TI__ACT_CLIP;
        }
        for (int i = 1; i < 3 && i < c->n_in; i++) {
            const ti_tensor *t = c->in[i];
            if (t == NULL || ti__numel(t) == 0) continue;
            if (!c->s->vi[c->node->inputs[i]].is_const || !ti__cl_f32(t)) return -1;
            if (i == 1) *a = ((const float *)t->data)[0];
            else *b = ((const float *)t->data)[0];
        }
        return TI__ACT_CLIP;
    }
    if (strcmp(op, "Elu") == 0) {
        *a = ti__attr_f(c->node, "alpha", 1.0f);
        return 108;
    }
    if (strcmp(op, "Gelu") == 0)
        return strcmp(ti__attr_s(c->node, "approximate", "none"), "none") == 0 ? 107 : -1;
    static const char *const names[] = {"Neg", "Abs", "Exp", "Sqrt", "Erf", "Log", "Reciprocal",
                                        "", "", "Floor", "Ceil", "", "Softplus"};
    for (int i = 0; i < (int)TI__COUNTOF(names); i++)
        if (names[i][0] && strcmp(op, names[i]) == 0) return 100 + i;
    return -1;
}

TI__PRIVATE int ti__cl_plan_unary(ti__clc *c) {
    float a, b;
    if (c->n_out != 1 || !ti__cl_f32(c->in[0]) || !ti__cl_f32(c->out[0]))
        return ti__clc_no(c, "float32 only on OpenCL");
    if (ti__cl_unary_code(c, &a, &b) < 0) return ti__clc_no(c, "attributes not supported on OpenCL");
    return 1;
}
TI__PRIVATE cl_int ti__cl_run_unary(ti__clc *c) {
    float a, b;
    int code = ti__cl_unary_code(c, &a, &b);
    size_t n = ti__numel(c->out[0]);
    ti__clargs x;
    ti__cla_begin(&x, &c->g->rt, TI__CLK_UNARY);
    ti__cla_t(&x, c, c->in[0]);
    ti__cla_t(&x, c, c->out[0]);
    ti__cla_int(&x, (int64_t)n);
    ti__cla_int(&x, code);
    ti__cla_float(&x, a);
    ti__cla_float(&x, b);
    if (x.err != CL_SUCCESS) return x.err;
    return ti__clrt_launch(&c->g->rt, TI__CLK_UNARY, 1, &n, NULL);
}

/* Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout (inference): the bytes as they
 * are. */
TI__PRIVATE int ti__cl_plan_alias(ti__clc *c) {
    if (!ti__cl_f32(c->in[0]) || !ti__cl_f32(c->out[0]))
        return ti__clc_no(c, "float32 only on OpenCL");
    if (strcmp(c->node->op, "Dropout") == 0) { /* the identity unless training_mode is true */
        const ti_tensor *tm = c->n_in > 2 ? c->in[2] : NULL;
        if (tm != NULL && (!c->s->vi[c->node->inputs[2]].is_const || ti__get_i64(tm, 0) != 0))
            return ti__clc_no(c, "training_mode Dropout not on OpenCL");
        if (c->n_out > 1 && c->out[1] != NULL && c->s->vi[c->node->outputs[1]].last <= c->n &&
            !c->s->vi[c->node->outputs[1]].is_output)
            return 1; /* a mask nobody reads: left unwritten */
    }
    for (int i = 1; i < c->n_out; i++)
        if (c->out[i] != NULL) return ti__clc_no(c, "second output not supported on OpenCL");
    return 1;
}
TI__PRIVATE cl_int ti__cl_run_alias(ti__clc *c) {
    size_t n = ti__numel(c->out[0]);
    ti__clargs x;
    ti__cla_begin(&x, &c->g->rt, TI__CLK_COPY_FLAT);
    ti__cla_t(&x, c, c->in[0]);
    ti__cla_t(&x, c, c->out[0]);
    ti__cla_int(&x, (int64_t)n);
    if (x.err != CL_SUCCESS) return x.err;
    return ti__clrt_launch(&c->g->rt, TI__CLK_COPY_FLAT, 1, &n, NULL);
}

TI__PRIVATE int ti__cl_binop_code(const char *op) {
    static const char *const names[] = {"Add", "Sub", "Mul", "Div", "Max", "Min", "Pow"};
    for (int i = 0; i < (int)TI__COUNTOF(names); i++)
        if (strcmp(op, names[i]) == 0) return i;
    return -1;
}

/* Right-aligned strides of t inside the broadcast output shape (0 on broadcast dims). */
TI__PRIVATE void ti__cl_bstrides(const ti_tensor *t, int rank, const int64_t *dims, int32_t *st) {
    int64_t s = 1;
    for (int d = rank - 1; d >= 0; d--) {
        int td = d - (rank - t->rank);
        int64_t dim = td >= 0 ? t->shape[td] : 1;
        st[d] = (dim == 1 && dims[d] != 1) ? 0 : (int32_t)s;
        s *= dim;
    }
}

/* 1 when t is a per-channel vector of y (y rank 4, t's only non-1 dim is y's dim 1). */
TI__PRIVATE int ti__cl_is_chan(const ti_tensor *t, const ti_tensor *y) {
    if (y->rank != 4 || t->rank > 4 || t->rank < 3) return 0;
    int64_t c = y->shape[1];
    for (int d = 0; d < t->rank; d++) {
        int yd = d + (4 - t->rank);
        int64_t want = yd == 1 ? c : 1;
        if (t->shape[d] != want) return 0;
    }
    return 1;
}

TI__PRIVATE int ti__cl_plan_binary(ti__clc *c) {
    const ti_tensor *a = c->in[0], *b = c->n_in > 1 ? c->in[1] : NULL, *y = c->out[0];
    if (c->n_in != 2 || b == NULL) return ti__clc_no(c, "%d inputs (OpenCL: 2)", c->n_in);
    if (!ti__cl_f32(a) || !ti__cl_f32(b) || !ti__cl_f32(y))
        return ti__clc_no(c, "float32 only on OpenCL");
    size_t n = ti__numel(y);
    if (ti__numel(a) == n && ti__numel(b) == n && a->rank == y->rank && b->rank == y->rank)
        return 1; /* same shape */
    if (ti__cl_is_chan(b, y) && ti__numel(a) == n) return 1;
    int op = ti__cl_binop_code(c->node->op);
    if (ti__cl_is_chan(a, y) && ti__numel(b) == n && (op == 0 || op == 2 || op == 4 || op == 5))
        return 1;
    int32_t *p = ti__clc_params(c, 1 + 3 * TI_MAX_DIMS);
    if (p == NULL) return ti__clc_no(c, "out of memory");
    int r = y->rank ? y->rank : 1;
    int64_t dims[TI_MAX_DIMS];
    for (int d = 0; d < r; d++) dims[d] = y->rank ? y->shape[d] : 1;
    p[0] = r;
    for (int d = 0; d < r; d++) p[1 + d] = (int32_t)dims[d];
    ti__cl_bstrides(a, r, dims, p + 1 + r);
    ti__cl_bstrides(b, r, dims, p + 1 + 2 * r);
    return 1;
}
TI__PRIVATE cl_int ti__cl_run_binary(ti__clc *c) {
    const ti_tensor *a = c->in[0], *b = c->in[1], *y = c->out[0];
    int op = ti__cl_binop_code(c->node->op);
    size_t n = ti__numel(y);
    ti__clargs x;
    ti__clk k;
    if (c->g->par[c->n] != NULL) {
        k = TI__CLK_BINARY;
        ti__cla_begin(&x, &c->g->rt, k);
        ti__cla_t(&x, c, a);
        ti__cla_t(&x, c, b);
        ti__cla_t(&x, c, y);
        ti__cla_par(&x, c);
        ti__cla_int(&x, (int64_t)n);
    } else if (ti__numel(a) == n && ti__numel(b) == n && a->rank == y->rank && b->rank == y->rank) {
        k = TI__CLK_BINARY_SAME;
        ti__cla_begin(&x, &c->g->rt, k);
        ti__cla_t(&x, c, a);
        ti__cla_t(&x, c, b);
        ti__cla_t(&x, c, y);
        ti__cla_int(&x, (int64_t)n);
    } else {
        int swap = !ti__cl_is_chan(b, y) || ti__numel(a) != n;
        k = TI__CLK_BINARY_CHAN;
        ti__cla_begin(&x, &c->g->rt, k);
        ti__cla_t(&x, c, swap ? b : a);
        ti__cla_t(&x, c, swap ? a : b);
        ti__cla_t(&x, c, y);
        ti__cla_int(&x, (int64_t)n);
        ti__cla_int(&x, y->shape[2] * y->shape[3]);
        ti__cla_int(&x, y->shape[1]);
    }
    ti__cla_int(&x, op);
    ti__cla_int(&x, c->node->act);
    ti__cla_float(&x, c->node->act_a);
    ti__cla_float(&x, c->node->act_b);
    if (x.err != CL_SUCCESS) return x.err;
    return ti__clrt_launch(&c->g->rt, k, 1, &n, NULL);
}

/* ---- strided copies: Transpose, Concat, Split ---------------------------------------- */

/* Fills a ti_copy table: rank, dims, x strides, y strides. */
TI__PRIVATE void ti__cl_copy_table(int32_t *p, int rank, const int64_t *dims, const int64_t *xs,
                                   const int64_t *ys) {
    p[0] = rank;
    for (int d = 0; d < rank; d++) {
        p[1 + d] = (int32_t)dims[d];
        p[1 + rank + d] = (int32_t)xs[d];
        p[1 + 2 * rank + d] = (int32_t)ys[d];
    }
}
#define TI__CL_COPY_INTS (1 + 3 * TI_MAX_DIMS)

TI__PRIVATE int ti__cl_plan_transpose(ti__clc *c) {
    const ti_tensor *x = c->in[0], *y = c->out[0];
    if (!ti__cl_f32(x) || !ti__cl_f32(y)) return ti__clc_no(c, "float32 only on OpenCL");
    int cnt = 0, r = x->rank;
    const int64_t *perm = ti__attr_ints(c->node, "perm", &cnt);
    if (r < 1) return ti__clc_no(c, "rank 0");
    int32_t *p = ti__clc_params(c, TI__CL_COPY_INTS);
    if (p == NULL) return ti__clc_no(c, "out of memory");
    int64_t xs[TI_MAX_DIMS], ys[TI_MAX_DIMS], xsp[TI_MAX_DIMS];
    ti__strides(r, x->shape, xs);
    ti__strides(r, y->shape, ys);
    for (int d = 0; d < r; d++) xsp[d] = xs[perm != NULL && cnt == r ? perm[d] : r - 1 - d];
    ti__cl_copy_table(p, r, y->shape, xsp, ys);
    return 1;
}

/* Concat (input i into a slice of y) and Split (slice i of x into output i): one launch
 * per part, each with its table at par + part * TI__CL_COPY_INTS. */
TI__PRIVATE int ti__cl_concat_axis(const ti__clc *c, int rank) {
    int64_t axis = ti__attr_i(c->node, "axis", 0);
    if (axis < 0) axis += rank;
    return (int)axis;
}
TI__PRIVATE int ti__cl_plan_parts(ti__clc *c) {
    int concat = strcmp(c->node->op, "Concat") == 0;
    const ti_tensor *big = concat ? c->out[0] : c->in[0];
    int parts = concat ? c->n_in : c->n_out;
    if (!ti__cl_f32(big)) return ti__clc_no(c, "float32 only on OpenCL");
    int r = big->rank, axis = ti__cl_concat_axis(c, r);
    if (r < 1 || axis < 0 || axis >= r) return ti__clc_no(c, "axis out of range");
    int32_t *p = ti__clc_params(c, TI__CL_COPY_INTS * parts);
    if (p == NULL) return ti__clc_no(c, "out of memory");
    int64_t bs[TI_MAX_DIMS];
    ti__strides(r, big->shape, bs);
    for (int i = 0; i < parts; i++) {
        const ti_tensor *t = concat ? c->in[i] : c->out[i];
        if (t == NULL) continue;
        if (!ti__cl_f32(t) || t->rank != r) return ti__clc_no(c, "part %d: float32 of rank %d only", i, r);
        int64_t ts[TI_MAX_DIMS];
        ti__strides(r, t->shape, ts);
        ti__cl_copy_table(p + TI__CL_COPY_INTS * i, r, t->shape, concat ? ts : bs, concat ? bs : ts);
    }
    return 1;
}
TI__PRIVATE cl_int ti__cl_run_parts(ti__clc *c) {
    int concat = strcmp(c->node->op, "Concat") == 0;
    const ti_tensor *big = concat ? c->out[0] : c->in[0];
    int parts = concat ? c->n_in : c->n_out, r = big->rank, axis = ti__cl_concat_axis(c, r);
    int64_t bs[TI_MAX_DIMS], pos = 0;
    ti__strides(r, big->shape, bs);
    for (int i = 0; i < parts; i++) {
        const ti_tensor *t = concat ? c->in[i] : c->out[i];
        if (t == NULL) continue;
        size_t n = ti__numel(t);
        size_t slice = (size_t)(pos * bs[axis]) * 4;
        pos += t->shape[axis];
        if (n == 0) continue;
        cl_mem bm, tm;
        size_t bo, to;
        ti__clc_loc(c, big, &bm, &bo);
        ti__clc_loc(c, t, &tm, &to);
        ti__clargs x;
        ti__cla_begin(&x, &c->g->rt, TI__CLK_COPY);
        if (concat) {
            ti__cla_buf(&x, tm, to);
            ti__cla_buf(&x, bm, bo + slice);
        } else {
            ti__cla_buf(&x, bm, bo + slice);
            ti__cla_buf(&x, tm, to);
        }
        ti__cla_buf(&x, c->g->cst, c->g->par_off[c->n] + sizeof(int32_t) * TI__CL_COPY_INTS * (size_t)i);
        ti__cla_int(&x, (int64_t)n);
        if (x.err != CL_SUCCESS) return x.err;
        cl_int e = ti__clrt_launch(&c->g->rt, TI__CLK_COPY, 1, &n, NULL);
        if (e != CL_SUCCESS) return e;
    }
    return CL_SUCCESS;
}

/* ---- pooling and normalisation ------------------------------------------------------ */

TI__PRIVATE int ti__cl_plan_gpool(ti__clc *c) {
    if (!ti__cl_f32(c->in[0]) || !ti__cl_f32(c->out[0]) || c->in[0]->rank < 3)
        return ti__clc_no(c, "float32 with spatial dims only on OpenCL");
    return 1;
}
TI__PRIVATE cl_int ti__cl_run_gpool(ti__clc *c) {
    const ti_tensor *x = c->in[0];
    size_t planes = (size_t)(x->shape[0] * x->shape[1]), hw = ti__numel(x) / (planes ? planes : 1);
    ti__clrt *rt = &c->g->rt;
    size_t ls = 1, lim = TI__MIN(ti__clrt_wg_limit(rt, TI__CLK_GPOOL), rt->max_item[0]);
    while (ls * 2 <= lim && ls * 2 <= 256 && ls < hw) ls *= 2;
    for (;; ls /= 2) {
        ti__clargs a;
        ti__cla_begin(&a, rt, TI__CLK_GPOOL);
        ti__cla_t(&a, c, x);
        ti__cla_t(&a, c, c->out[0]);
        ti__cla_int(&a, (int64_t)planes);
        ti__cla_int(&a, (int64_t)hw);
        ti__cla_int(&a, strcmp(c->node->op, "GlobalMaxPool") == 0);
        ti__cla_raw(&a, ls * sizeof(float), NULL);
        if (a.err != CL_SUCCESS) return a.err;
        size_t g = planes * ls;
        cl_int e = ti__clrt_launch(rt, TI__CLK_GPOOL, 1, &g, &ls);
        if (!ti__cl_wg_error(e) || ls == 1) return e;
        rt->retries++;
        snprintf(rt->last_retry, sizeof rt->last_retry, "ti_gpool: local size %zu refused (%s)",
                 ls, ti_cl_error_string(e));
    }
}

TI__PRIVATE int ti__cl_plan_pool(ti__clc *c) {
    const ti_tensor *x = c->in[0];
    if (!ti__cl_f32(x) || x->rank != 4) return ti__clc_no(c, "2-D float32 pooling only on OpenCL");
    if (c->n_out > 1 && c->out[1] != NULL) return ti__clc_no(c, "MaxPool indices not on OpenCL");
    ti__kctx k;
    ti_error err;
    ti__kctx_init(c->s, &k, c->n, &err);
    ti__poolp pp;
    if (ti__pool_params(&k, &pp) != TI_OK) return ti__clc_no(c, "pool attributes");
    int32_t *p = ti__clc_params(c, 16);
    if (p == NULL) return ti__clc_no(c, "out of memory");
    int32_t v[15] = {(int32_t)pp.in[1], (int32_t)pp.in[2], (int32_t)pp.out[1], (int32_t)pp.out[2],
                     (int32_t)pp.k[1],  (int32_t)pp.k[2],  (int32_t)pp.s[1],   (int32_t)pp.s[2],
                     (int32_t)pp.pb[1], (int32_t)pp.pb[2], (int32_t)pp.d[1],   (int32_t)pp.d[2],
                     (int32_t)(ti__attr_i(c->node, "count_include_pad", 0) != 0),
                     (int32_t)pp.pe[1], (int32_t)pp.pe[2]};
    memcpy(p, v, sizeof v);
    return 1;
}
TI__PRIVATE cl_int ti__cl_run_pool(ti__clc *c) {
    size_t n = ti__numel(c->out[0]);
    ti__clargs a;
    ti__cla_begin(&a, &c->g->rt, TI__CLK_POOL2D);
    ti__cla_t(&a, c, c->in[0]);
    ti__cla_t(&a, c, c->out[0]);
    ti__cla_par(&a, c);
    ti__cla_int(&a, (int64_t)n);
    ti__cla_int(&a, strcmp(c->node->op, "AveragePool") == 0);
    if (a.err != CL_SUCCESS) return a.err;
    return ti__clrt_launch(&c->g->rt, TI__CLK_POOL2D, 1, &n, NULL);
}

TI__PRIVATE int ti__cl_plan_softmax(ti__clc *c) {
    if (!ti__cl_f32(c->in[0]) || !ti__cl_f32(c->out[0])) return ti__clc_no(c, "float32 only on OpenCL");
    ti__kctx k;
    ti_error err;
    ti__kctx_init(c->s, &k, c->n, &err);
    size_t outer, len, inner;
    if (ti__sm_layout(&k, &outer, &len, &inner) != TI_OK || len == 0)
        return ti__clc_no(c, "softmax layout");
    int32_t *p = ti__clc_params(c, 3);
    if (p == NULL) return ti__clc_no(c, "out of memory");
    p[0] = (int32_t)(outer * inner);
    p[1] = (int32_t)len;
    p[2] = (int32_t)inner;
    return 1;
}
TI__PRIVATE cl_int ti__cl_run_softmax(ti__clc *c) {
    const int32_t *p = c->g->par[c->n];
    size_t rows = (size_t)p[0];
    ti__clargs a;
    ti__cla_begin(&a, &c->g->rt, TI__CLK_SOFTMAX);
    ti__cla_t(&a, c, c->in[0]);
    ti__cla_t(&a, c, c->out[0]);
    ti__cla_int(&a, p[0]);
    ti__cla_int(&a, p[1]);
    ti__cla_int(&a, p[2]);
    ti__cla_int(&a, strcmp(c->node->op, "LogSoftmax") == 0);
    if (a.err != CL_SUCCESS) return a.err;
    return ti__clrt_launch(&c->g->rt, TI__CLK_SOFTMAX, 1, &rows, NULL);
}

TI__PRIVATE int ti__cl_plan_layernorm(ti__clc *c) {
    const ti_tensor *x = c->in[0];
    if (!ti__cl_f32(x) || !ti__cl_f32(c->out[0]) || c->n_in < 2 || !ti__cl_f32(c->in[1]))
        return ti__clc_no(c, "float32 only on OpenCL");
    for (int i = 1; i < c->n_out; i++)
        if (c->out[i] != NULL) return ti__clc_no(c, "Mean/InvStdDev outputs not on OpenCL");
    int64_t axis = ti__attr_i(c->node, "axis", -1);
    if (axis < 0) axis += x->rank;
    if (axis < 0 || axis >= x->rank) return ti__clc_no(c, "axis out of range");
    size_t len = 1;
    for (int d = (int)axis; d < x->rank; d++) len *= (size_t)x->shape[d];
    if (ti__numel(c->in[1]) != len) return ti__clc_no(c, "scale does not cover the normalised dims");
    if (c->n_in > 2 && c->in[2] != NULL && (!ti__cl_f32(c->in[2]) || ti__numel(c->in[2]) != len))
        return ti__clc_no(c, "bias does not cover the normalised dims");
    int32_t *p = ti__clc_params(c, 2);
    if (p == NULL || len == 0) return ti__clc_no(c, "empty");
    p[0] = (int32_t)(ti__numel(x) / len);
    p[1] = (int32_t)len;
    return 1;
}
TI__PRIVATE cl_int ti__cl_run_layernorm(ti__clc *c) {
    const int32_t *p = c->g->par[c->n];
    size_t rows = (size_t)p[0];
    int has_b = c->n_in > 2 && c->in[2] != NULL;
    ti__clargs a;
    ti__cla_begin(&a, &c->g->rt, TI__CLK_LAYERNORM);
    ti__cla_t(&a, c, c->in[0]);
    ti__cla_t(&a, c, c->in[1]);
    ti__cla_t(&a, c, has_b ? c->in[2] : c->in[1]);
    ti__cla_int(&a, has_b);
    ti__cla_t(&a, c, c->out[0]);
    ti__cla_int(&a, p[0]);
    ti__cla_int(&a, p[1]);
    ti__cla_float(&a, ti__attr_f(c->node, "epsilon", 1e-5f));
    if (a.err != CL_SUCCESS) return a.err;
    return ti__clrt_launch(&c->g->rt, TI__CLK_LAYERNORM, 1, &rows, NULL);
}

TI__PRIVATE int ti__cl_plan_batchnorm(ti__clc *c) {
    const ti_tensor *x = c->in[0];
    if (c->n_in != 5 || x->rank < 2) return ti__clc_no(c, "BatchNormalization form");
    for (int i = 0; i < 5; i++)
        if (!ti__cl_f32(c->in[i])) return ti__clc_no(c, "float32 only on OpenCL");
    for (int i = 1; i < c->n_out; i++)
        if (c->out[i] != NULL) return ti__clc_no(c, "training outputs not on OpenCL");
    for (int i = 1; i < 5; i++)
        if (ti__numel(c->in[i]) != (size_t)x->shape[1]) return ti__clc_no(c, "per-channel inputs");
    return 1;
}
TI__PRIVATE cl_int ti__cl_run_batchnorm(ti__clc *c) {
    const ti_tensor *x = c->in[0];
    size_t n = ti__numel(x), ch = (size_t)x->shape[1];
    size_t planes = (size_t)x->shape[0] * ch, hw = planes != 0 ? n / planes : 1;
    ti__clargs a;
    ti__cla_begin(&a, &c->g->rt, TI__CLK_BATCHNORM);
    for (int i = 0; i < 5; i++) ti__cla_t(&a, c, c->in[i]);
    ti__cla_t(&a, c, c->out[0]);
    ti__cla_int(&a, (int64_t)n);
    ti__cla_int(&a, (int64_t)hw);
    ti__cla_int(&a, (int64_t)ch);
    ti__cla_float(&a, ti__attr_f(c->node, "epsilon", 1e-5f));
    if (a.err != CL_SUCCESS) return a.err;
    return ti__clrt_launch(&c->g->rt, TI__CLK_BATCHNORM, 1, &n, NULL);
}

/* ---- matrix products and convolutions ------------------------------------------------ */

/* One matmul launch description (the ti_matmul argument list). The batch table (3 ints a
 * batch: offsets of A, B, Y in elements) is the node's parameter table. */
typedef struct ti__clmm {
    const ti_tensor *a, *b, *bias, *y;
    int64_t m, n, k, sam, sak, sbk, sbn, bsm, bsn;
    float alpha, beta;
    size_t batches;
} ti__clmm;

TI__PRIVATE cl_int ti__cl_run_mm(ti__clc *c, const ti__clmm *mm) {
    ti__clrt *rt = &c->g->rt;
    /* tiles pay off once there are a few of them; a device that cannot run 16 x 16
     * groups (or refuses them) gets the plain kernel */
    int tiled = mm->m * mm->n >= 1024 && mm->k >= 8;
    for (int attempt = 0; attempt < 2; attempt++) {
        ti__clk k = tiled && attempt == 0 ? TI__CLK_MATMUL_T : TI__CLK_MATMUL;
        if (!tiled && attempt == 1) break;
        ti__clargs x;
        ti__cla_begin(&x, rt, k);
        ti__cla_t(&x, c, mm->a);
        ti__cla_t(&x, c, mm->b);
        ti__cla_t(&x, c, mm->bias ? mm->bias : mm->a);
        ti__cla_int(&x, mm->bias != NULL);
        ti__cla_t(&x, c, mm->y);
        ti__cla_par(&x, c);
        ti__cla_int(&x, mm->m);
        ti__cla_int(&x, mm->n);
        ti__cla_int(&x, mm->k);
        ti__cla_int(&x, mm->sam);
        ti__cla_int(&x, mm->sak);
        ti__cla_int(&x, mm->sbk);
        ti__cla_int(&x, mm->sbn);
        ti__cla_int(&x, mm->bsm);
        ti__cla_int(&x, mm->bsn);
        ti__cla_float(&x, mm->alpha);
        ti__cla_float(&x, mm->beta);
        ti__cla_int(&x, c->node->act);
        ti__cla_float(&x, c->node->act_a);
        ti__cla_float(&x, c->node->act_b);
        if (x.err != CL_SUCCESS) return x.err;
        cl_int e;
        if (k == TI__CLK_MATMUL_T) {
            size_t t = TI__CL_MM_TILE;
            size_t g[3] = {((size_t)mm->n + t * 4 - 1) / (t * 4) * t, (size_t)mm->m, mm->batches};
            size_t l[3] = {t, t, 1};
            e = ti__clrt_launch(rt, k, 3, g, l);
            if (ti__cl_wg_error(e)) {
                rt->retries++;
                snprintf(rt->last_retry, sizeof rt->last_retry,
                         "ti_matmul_t: 16x16 groups refused (%s), plain kernel used",
                         ti_cl_error_string(e));
                continue;
            }
        } else {
            size_t g[3] = {(size_t)mm->n, (size_t)mm->m, mm->batches};
            e = ti__clrt_launch(rt, k, 3, g, NULL);
        }
        return e;
    }
    return CL_INVALID_WORK_GROUP_SIZE;
}

TI__PRIVATE int ti__cl_plan_gemm(ti__clc *c) {
    const ti_tensor *a = c->in[0], *b = c->in[1], *y = c->out[0];
    const ti_tensor *cc = c->n_in > 2 ? c->in[2] : NULL;
    if (!ti__cl_f32(a) || !ti__cl_f32(b) || !ti__cl_f32(y) || (cc && !ti__cl_f32(cc)))
        return ti__clc_no(c, "float32 only on OpenCL");
    int32_t *p = ti__clc_params(c, 3);
    return p != NULL ? 1 : ti__clc_no(c, "out of memory");
}
TI__PRIVATE cl_int ti__cl_run_gemm(ti__clc *c) {
    const ti_tensor *a = c->in[0], *b = c->in[1], *y = c->out[0];
    const ti_tensor *cc = c->n_in > 2 ? c->in[2] : NULL;
    int ta = ti__attr_i(c->node, "transA", 0) != 0, tb = ti__attr_i(c->node, "transB", 0) != 0;
    ti__clmm mm;
    memset(&mm, 0, sizeof mm);
    mm.a = a;
    mm.b = b;
    mm.y = y;
    mm.m = y->shape[0];
    mm.n = y->shape[1];
    mm.k = ta ? a->shape[0] : a->shape[1];
    mm.sam = ta ? 1 : a->shape[1];
    mm.sak = ta ? a->shape[1] : 1;
    mm.sbk = tb ? 1 : b->shape[1];
    mm.sbn = tb ? b->shape[1] : 1;
    mm.alpha = ti__attr_f(c->node, "alpha", 1.0f);
    mm.beta = ti__attr_f(c->node, "beta", 1.0f);
    mm.batches = 1;
    size_t sm = 0, sn = 0;
    if (cc != NULL && ti__numel(cc) > 0 && mm.beta != 0.0f && ti__gemm_c_strides(cc, mm.m, mm.n, &sm, &sn)) {
        mm.bias = cc;
        mm.bsm = (int64_t)sm;
        mm.bsn = (int64_t)sn;
    }
    return ti__cl_run_mm(c, &mm);
}

TI__PRIVATE int ti__cl_plan_matmul(ti__clc *c) {
    const ti_tensor *a = c->in[0], *b = c->in[1], *y = c->out[0];
    if (!ti__cl_f32(a) || !ti__cl_f32(b) || !ti__cl_f32(y)) return ti__clc_no(c, "float32 only on OpenCL");
    ti__kctx k;
    ti_error err;
    ti__kctx_init(c->s, &k, c->n, &err);
    ti__mm_shape sh;
    if (ti__mm_infer(&k, a, b, &sh) != TI_OK) return ti__clc_no(c, "matmul shapes");
    if (sh.n_batch == 0 || sh.n_batch > 65536) return ti__clc_no(c, "%zu batches", sh.n_batch);
    int32_t *p = ti__clc_params(c, 3 * (int)sh.n_batch);
    if (p == NULL) return ti__clc_no(c, "out of memory");
    for (size_t t = 0; t < sh.n_batch; t++) {
        size_t oa, ob;
        ti__mm_offsets(&sh, t, &oa, &ob);
        p[3 * t] = (int32_t)(oa * (size_t)(sh.m * sh.k));
        p[3 * t + 1] = (int32_t)(ob * (size_t)(sh.k * sh.n));
        p[3 * t + 2] = (int32_t)(t * (size_t)(sh.m * sh.n));
    }
    return 1;
}
TI__PRIVATE cl_int ti__cl_run_matmul(ti__clc *c) {
    const ti_tensor *a = c->in[0], *b = c->in[1], *y = c->out[0];
    ti__kctx k;
    ti_error err;
    ti__kctx_init(c->s, &k, c->n, &err);
    ti__mm_shape sh;
    ti__mm_infer(&k, a, b, &sh);
    ti__clmm mm;
    memset(&mm, 0, sizeof mm);
    mm.a = a;
    mm.b = b;
    mm.y = y;
    mm.m = sh.m;
    mm.n = sh.n;
    mm.k = sh.k;
    mm.sam = sh.k;
    mm.sak = 1;
    mm.sbk = sh.n;
    mm.sbn = 1;
    mm.alpha = 1.0f;
    mm.beta = 1.0f;
    mm.batches = sh.n_batch;
    if (c->n_in > 2 && c->in[2] != NULL) { /* fused row-vector bias */
        mm.bias = c->in[2];
        mm.bsm = 0;
        mm.bsn = 1;
    }
    return ti__cl_run_mm(c, &mm);
}

/* Conv: 1x1 stride 1 unpadded, ungrouped: a matmul per image; depthwise: its own kernel;
 * any other 2-D conv: the direct kernel. */
typedef enum { TI__CLCONV_MM = 1, TI__CLCONV_DW, TI__CLCONV_DIRECT } ti__clconv_kind;

TI__PRIVATE int ti__cl_plan_conv(ti__clc *c) {
    const ti_tensor *x = c->in[0], *w = c->in[1], *y = c->out[0];
    const ti_tensor *b = c->n_in > 2 ? c->in[2] : NULL;
    if (!ti__cl_f32(x) || !ti__cl_f32(w) || !ti__cl_f32(y) || (b && !ti__cl_f32(b)))
        return ti__clc_no(c, "float32 only on OpenCL");
    if (x->rank != 4) return ti__clc_no(c, "%d-D conv (OpenCL: 2-D)", x->rank - 2);
    ti__kctx k;
    ti_error err;
    ti__kctx_init(c->s, &k, c->n, &err);
    ti__convp cp;
    if (ti__conv_params(&k, 0, &cp) != TI_OK) return ti__clc_no(c, "conv attributes");
    int32_t *p;
    if (cp.group == 1 && cp.k[1] == 1 && cp.k[2] == 1 && cp.s[1] == 1 && cp.s[2] == 1 &&
        cp.pb[1] == 0 && cp.pb[2] == 0 && cp.pe[1] == 0 && cp.pe[2] == 0) {
        p = ti__clc_params(c, 1 + 3 * (int)cp.n);
        if (p == NULL) return ti__clc_no(c, "out of memory");
        p[0] = TI__CLCONV_MM;
        for (int64_t i = 0; i < cp.n; i++) {
            p[1 + 3 * i] = 0;
            p[2 + 3 * i] = (int32_t)(i * cp.c * (int64_t)cp.in_sp);
            p[3 + 3 * i] = (int32_t)(i * cp.m * (int64_t)cp.out_sp);
        }
        return 1;
    }
    p = ti__clc_params(c, 16);
    if (p == NULL) return ti__clc_no(c, "out of memory");
    p[0] = (cp.group == cp.c && cp.group == cp.m) ? TI__CLCONV_DW : TI__CLCONV_DIRECT;
    int32_t v[15] = {(int32_t)cp.c,     (int32_t)cp.in[1], (int32_t)cp.in[2], (int32_t)cp.m,
                     (int32_t)cp.out[1], (int32_t)cp.out[2], (int32_t)cp.k[1], (int32_t)cp.k[2],
                     (int32_t)cp.s[1],  (int32_t)cp.s[2],  (int32_t)cp.pb[1], (int32_t)cp.pb[2],
                     (int32_t)cp.d[1],  (int32_t)cp.d[2],  (int32_t)cp.group};
    memcpy(p + 1, v, sizeof v);
    return 1;
}
TI__PRIVATE cl_int ti__cl_run_conv(ti__clc *c) {
    const ti_tensor *x = c->in[0], *w = c->in[1], *y = c->out[0];
    const ti_tensor *b = c->n_in > 2 ? c->in[2] : NULL;
    if (b != NULL && ti__numel(b) == 0) b = NULL;
    const int32_t *p = c->g->par[c->n];
    if (p[0] == TI__CLCONV_MM) {
        ti__clmm mm;
        memset(&mm, 0, sizeof mm);
        mm.a = w;
        mm.b = x;
        mm.y = y;
        mm.m = y->shape[1];
        mm.n = y->shape[2] * y->shape[3];
        mm.k = x->shape[1];
        mm.sam = mm.k;
        mm.sak = 1;
        mm.sbk = mm.n;
        mm.sbn = 1;
        mm.alpha = 1.0f;
        mm.beta = 1.0f;
        mm.batches = (size_t)x->shape[0];
        if (b != NULL) {
            mm.bias = b;
            mm.bsm = 1;
            mm.bsn = 0;
        }
        /* the table starts after the kind: shift the parameter offset by one int */
        size_t keep = c->g->par_off[c->n];
        c->g->par_off[c->n] = keep + sizeof(int32_t);
        cl_int e = ti__cl_run_mm(c, &mm);
        c->g->par_off[c->n] = keep;
        return e;
    }
    ti__clk k = p[0] == TI__CLCONV_DW ? TI__CLK_DWCONV2D : TI__CLK_CONV2D;
    ti__clargs a;
    ti__cla_begin(&a, &c->g->rt, k);
    ti__cla_t(&a, c, x);
    ti__cla_t(&a, c, w);
    ti__cla_t(&a, c, b ? b : w);
    ti__cla_int(&a, b != NULL);
    ti__cla_t(&a, c, y);
    ti__cla_buf(&a, c->g->cst, c->g->par_off[c->n] + sizeof(int32_t));
    ti__cla_int(&a, c->node->act);
    ti__cla_float(&a, c->node->act_a);
    ti__cla_float(&a, c->node->act_b);
    if (a.err != CL_SUCCESS) return a.err;
    size_t g[3] = {(size_t)(y->shape[2] * y->shape[3]), (size_t)y->shape[1], (size_t)y->shape[0]};
    return ti__clrt_launch(&c->g->rt, k, 3, g, NULL);
}

/* ---- the op table ------------------------------------------------------------------- */
typedef struct ti__clop {
    const char *name;
    unsigned progs; /* programs (bits of ti__clp) its kernels come from */
    int (*plan)(ti__clc *c);
    cl_int (*run)(ti__clc *c);
} ti__clop;

#define TI__CLM_ELTWISE (1u << TI__CLP_ELTWISE)
#define TI__CLM_CONV (1u << TI__CLP_CONV)
#define TI__CLM_GEMM (1u << TI__CLP_GEMM)
static const ti__clop ti__cl_ops[] = {
    {"Conv", TI__CLM_CONV | TI__CLM_GEMM, ti__cl_plan_conv, ti__cl_run_conv},
    {"Gemm", TI__CLM_GEMM, ti__cl_plan_gemm, ti__cl_run_gemm},
    {"MatMul", TI__CLM_GEMM, ti__cl_plan_matmul, ti__cl_run_matmul},
    {"Add", TI__CLM_ELTWISE, ti__cl_plan_binary, ti__cl_run_binary},
    {"Sub", TI__CLM_ELTWISE, ti__cl_plan_binary, ti__cl_run_binary},
    {"Mul", TI__CLM_ELTWISE, ti__cl_plan_binary, ti__cl_run_binary},
    {"Div", TI__CLM_ELTWISE, ti__cl_plan_binary, ti__cl_run_binary},
    {"Max", TI__CLM_ELTWISE, ti__cl_plan_binary, ti__cl_run_binary},
    {"Min", TI__CLM_ELTWISE, ti__cl_plan_binary, ti__cl_run_binary},
    {"Pow", TI__CLM_ELTWISE, ti__cl_plan_binary, ti__cl_run_binary},
    {"Relu", TI__CLM_ELTWISE, ti__cl_plan_unary, ti__cl_run_unary},
    {"Sigmoid", TI__CLM_ELTWISE, ti__cl_plan_unary, ti__cl_run_unary},
    {"Tanh", TI__CLM_ELTWISE, ti__cl_plan_unary, ti__cl_run_unary},
    {"Clip", TI__CLM_ELTWISE, ti__cl_plan_unary, ti__cl_run_unary},
    {"LeakyRelu", TI__CLM_ELTWISE, ti__cl_plan_unary, ti__cl_run_unary},
    {"HardSigmoid", TI__CLM_ELTWISE, ti__cl_plan_unary, ti__cl_run_unary},
    {"HardSwish", TI__CLM_ELTWISE, ti__cl_plan_unary, ti__cl_run_unary},
    {"Elu", TI__CLM_ELTWISE, ti__cl_plan_unary, ti__cl_run_unary},
    {"Gelu", TI__CLM_ELTWISE, ti__cl_plan_unary, ti__cl_run_unary},
    {"Neg", TI__CLM_ELTWISE, ti__cl_plan_unary, ti__cl_run_unary},
    {"Abs", TI__CLM_ELTWISE, ti__cl_plan_unary, ti__cl_run_unary},
    {"Exp", TI__CLM_ELTWISE, ti__cl_plan_unary, ti__cl_run_unary},
    {"Sqrt", TI__CLM_ELTWISE, ti__cl_plan_unary, ti__cl_run_unary},
    {"Erf", TI__CLM_ELTWISE, ti__cl_plan_unary, ti__cl_run_unary},
    {"Log", TI__CLM_ELTWISE, ti__cl_plan_unary, ti__cl_run_unary},
    {"Reciprocal", TI__CLM_ELTWISE, ti__cl_plan_unary, ti__cl_run_unary},
    {"Floor", TI__CLM_ELTWISE, ti__cl_plan_unary, ti__cl_run_unary},
    {"Ceil", TI__CLM_ELTWISE, ti__cl_plan_unary, ti__cl_run_unary},
    {"Softplus", TI__CLM_ELTWISE, ti__cl_plan_unary, ti__cl_run_unary},
    {"Reshape", TI__CLM_ELTWISE, ti__cl_plan_alias, ti__cl_run_alias},
    {"Flatten", TI__CLM_ELTWISE, ti__cl_plan_alias, ti__cl_run_alias},
    {"Squeeze", TI__CLM_ELTWISE, ti__cl_plan_alias, ti__cl_run_alias},
    {"Unsqueeze", TI__CLM_ELTWISE, ti__cl_plan_alias, ti__cl_run_alias},
    {"Identity", TI__CLM_ELTWISE, ti__cl_plan_alias, ti__cl_run_alias},
    {"Dropout", TI__CLM_ELTWISE, ti__cl_plan_alias, ti__cl_run_alias},
    {"Transpose", TI__CLM_ELTWISE, ti__cl_plan_transpose, NULL},
    {"Concat", TI__CLM_ELTWISE, ti__cl_plan_parts, ti__cl_run_parts},
    {"Split", TI__CLM_ELTWISE, ti__cl_plan_parts, ti__cl_run_parts},
    {"GlobalAveragePool", TI__CLM_ELTWISE, ti__cl_plan_gpool, ti__cl_run_gpool},
    {"GlobalMaxPool", TI__CLM_ELTWISE, ti__cl_plan_gpool, ti__cl_run_gpool},
    {"MaxPool", TI__CLM_ELTWISE, ti__cl_plan_pool, ti__cl_run_pool},
    {"AveragePool", TI__CLM_ELTWISE, ti__cl_plan_pool, ti__cl_run_pool},
    {"Softmax", TI__CLM_ELTWISE, ti__cl_plan_softmax, ti__cl_run_softmax},
    {"LogSoftmax", TI__CLM_ELTWISE, ti__cl_plan_softmax, ti__cl_run_softmax},
    {"LayerNormalization", TI__CLM_ELTWISE, ti__cl_plan_layernorm, ti__cl_run_layernorm},
    {"BatchNormalization", TI__CLM_ELTWISE, ti__cl_plan_batchnorm, ti__cl_run_batchnorm},
};

/* Transpose runs the copy kernel with its one table. */
TI__PRIVATE cl_int ti__cl_run_copy_table(ti__clc *c) {
    size_t n = ti__numel(c->out[0]);
    ti__clargs x;
    ti__cla_begin(&x, &c->g->rt, TI__CLK_COPY);
    ti__cla_t(&x, c, c->in[0]);
    ti__cla_t(&x, c, c->out[0]);
    ti__cla_par(&x, c);
    ti__cla_int(&x, (int64_t)n);
    if (x.err != CL_SUCCESS) return x.err;
    return ti__clrt_launch(&c->g->rt, TI__CLK_COPY, 1, &n, NULL);
}

TI__PRIVATE const ti__clop *ti__cl_op_find(const ti__node *node) {
    if (node->domain[0] && strcmp(node->domain, "ai.onnx") != 0) return NULL;
    for (size_t i = 0; i < TI__COUNTOF(ti__cl_ops); i++)
        if (strcmp(ti__cl_ops[i].name, node->op) == 0) return &ti__cl_ops[i];
    return NULL;
}

TI__PRIVATE void ti__clc_init(ti__clc *c, ti_session *s, ti__clplan *g, int n) {
    c->s = s;
    c->g = g;
    c->n = n;
    c->node = &s->nodes[n];
    c->in = s->io[n];
    c->n_in = c->node->n_inputs;
    c->out = s->io[n] + c->node->n_inputs;
    c->n_out = c->node->n_outputs;
    c->why[0] = 0;
}

/* ---- plan ---------------------------------------------------------------------------- */

TI__PRIVATE void ti__clplan_release(ti__clplan *g) {
    if (g == NULL) return;
    if (g->pending && g->rt.q) g->rt.api.clFinish(g->rt.q); /* buffers are in use until then */
    g->pending = 0;
    if (g->act) g->rt.api.clReleaseMemObject(g->act);
    if (g->cst) g->rt.api.clReleaseMemObject(g->cst);
    g->act = g->cst = NULL;
    g->active = 0;
    g->where = NULL; /* the rest lives in the session's plan pool */
    g->cst_off = NULL;
    g->gpu = NULL;
    g->why = NULL;
    g->par = NULL;
    g->npar = NULL;
    g->par_off = NULL;
    g->n_gpu = g->n_cpu = 0;
}

/* Places the session's planned nodes; builds the programs they need; uploads constants.
 * Never fails the session: anything that cannot run on the GPU runs on the CPU, and
 * s->fallback says why when nothing could. Returns TI_ERR_OUT_OF_MEMORY only. */
TI__PRIVATE ti_status ti__clplan_build(ti_session *s, ti__clplan *g, char *fallback,
                                       size_t fallback_cap, ti_error *err) {
    ti__clplan_release(g);
    ti__pool *pool = &s->plan_pool;
    int nn = s->n_nodes, nv = s->n_values;
    g->where = (unsigned char *)ti__pool_alloc(pool, (size_t)nv + 1);
    g->cst_off = (size_t *)ti__pool_alloc(pool, sizeof(size_t) * ((size_t)nv + 1));
    g->gpu = (unsigned char *)ti__pool_alloc(pool, (size_t)nn + 1);
    g->why = (const char **)ti__pool_alloc(pool, sizeof(char *) * ((size_t)nn + 1));
    g->par = (int32_t **)ti__pool_alloc(pool, sizeof(int32_t *) * ((size_t)nn + 1));
    g->npar = (int *)ti__pool_alloc(pool, sizeof(int) * ((size_t)nn + 1));
    g->par_off = (size_t *)ti__pool_alloc(pool, sizeof(size_t) * ((size_t)nn + 1));
    if (!g->where || !g->cst_off || !g->gpu || !g->why || !g->par || !g->npar || !g->par_off)
        return ti__fail(err, TI_ERR_OUT_OF_MEMORY, s->m->name, "out of memory planning OpenCL");
    for (int v = 0; v < nv; v++) g->cst_off[v] = (size_t)-1;
    /* 1. which nodes can run there, and the programs they need */
    unsigned need = 0;
    for (int n = 0; n < nn; n++) {
        ti__clc c;
        ti__clc_init(&c, s, g, n);
        const ti__clop *op = ti__cl_op_find(c.node);
        int ok = 0;
        if (n >= s->first_dynamic) ti__clc_no(&c, "shapes known only at run time");
        else if (op == NULL) ti__clc_no(&c, "no OpenCL kernel for %s", c.node->op);
        else {
            ok = 1;
            for (int i = 0; i < c.n_out && ok; i++)
                if (c.out[i] != NULL && ti__numel(c.out[i]) == 0) ok = ti__clc_no(&c, "empty output");
            if (ok) ok = op->plan(&c);
        }
        g->gpu[n] = (unsigned char)ok;
        if (ok) need |= op->progs;
        g->why[n] = ok ? "" : ti__pool_strndup(pool, c.why, strlen(c.why));
        if (g->why[n] == NULL) g->why[n] = "";
    }
    /* 2. programs (a program that fails to build sends its nodes to the CPU) */
    char fail[320] = "";
    for (int p = 0; p < TI__CLP_COUNT; p++) {
        if (!(need & (1u << p)) || g->rt.prog[p] != NULL) continue;
        char why[300];
        if (!ti__clrt_build(&g->rt, (ti__clp)p, why, sizeof why)) {
            need &= ~(1u << p);
            memcpy(fail, why, sizeof why);
        }
    }
    /* 3. constants and parameter tables in one buffer; activations mirror the arena */
    size_t cst = 0;
    g->n_gpu = g->n_cpu = 0;
    for (int n = 0; n < nn; n++) {
        const ti__clop *op = ti__cl_op_find(&s->nodes[n]);
        if (g->gpu[n] && (need & op->progs) != op->progs) {
            g->gpu[n] = 0;
            g->why[n] = ti__pool_strndup(pool, fail, strlen(fail));
            if (g->why[n] == NULL) g->why[n] = "";
        }
        if (!g->gpu[n]) {
            g->n_cpu++;
            continue;
        }
        g->n_gpu++;
        const ti__node *node = &s->nodes[n];
        for (int i = 0; i < node->n_inputs; i++) {
            int v = node->inputs[i];
            if (v < 0 || !s->vi[v].is_const || g->cst_off[v] != (size_t)-1) continue;
            g->cst_off[v] = cst;
            cst += (s->t[v].size_bytes + 63) & ~(size_t)63;
        }
        g->par_off[n] = cst;
        cst += ((size_t)g->npar[n] * sizeof(int32_t) + 63) & ~(size_t)63;
    }
    if (g->n_gpu == 0) return TI_OK;
    const ti_cl_api *cl = &g->rt.api;
    unsigned char *host = (unsigned char *)ti__calloc(&s->al, cst + 64);
    if (host == NULL) return ti__fail(err, TI_ERR_OUT_OF_MEMORY, s->m->name, "out of memory staging constants");
    for (int v = 0; v < nv; v++)
        if (g->cst_off[v] != (size_t)-1 && s->t[v].size_bytes)
            memcpy(host + g->cst_off[v], s->t[v].data, s->t[v].size_bytes);
    for (int n = 0; n < nn; n++)
        if (g->gpu[n] && g->npar[n]) memcpy(host + g->par_off[n], g->par[n], sizeof(int32_t) * (size_t)g->npar[n]);
    cl_int e1 = CL_SUCCESS, e2 = CL_SUCCESS;
    g->cst_bytes = cst + 64;
    g->cst = cl->clCreateBuffer(g->rt.ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, g->cst_bytes, host, &e1);
    ti__free(&s->al, host, cst + 64);
    g->act_bytes = s->arena_bytes ? s->arena_bytes : 64;
    g->act = cl->clCreateBuffer(g->rt.ctx, CL_MEM_READ_WRITE, g->act_bytes, NULL, &e2);
    if (g->cst == NULL || g->act == NULL || e1 != CL_SUCCESS || e2 != CL_SUCCESS) {
        snprintf(fallback, fallback_cap, "OpenCL device '%s': cannot allocate %zu + %zu bytes (%s)",
                 g->rt.name, g->cst_bytes, g->act_bytes, ti_cl_error_string(e1 != CL_SUCCESS ? e1 : e2));
        ti__clplan_release(g);
        return TI_OK;
    }
    g->active = 1;
    g->t_ready = ti__cl_now_ms();
    return TI_OK;
}

/* ---- background build ------------------------------------------------------------- */

TI__PRIVATE void ti__clplan_init(ti__clplan *g) {
#ifndef TI_NO_THREADS
    pthread_mutex_init(&g->mu, NULL);
#else
    (void)g;
#endif
}
TI__PRIVATE void ti__clplan_fini(ti__clplan *g) {
#ifndef TI_NO_THREADS
    pthread_mutex_destroy(&g->mu);
#else
    (void)g;
#endif
}

#ifndef TI_NO_THREADS
TI__PRIVATE void *ti__clplan_builder(void *arg) {
    ti__clplan *g = (ti__clplan *)arg;
    ti_error err;
    memset(&err, 0, sizeof err);
    ti_status st = ti__clplan_build(g->bg_session, g, g->bg_why, sizeof g->bg_why, &err);
    if (g->t_ready == 0) g->t_ready = ti__cl_now_ms();
    pthread_mutex_lock(&g->mu);
    g->bg_status = st;
    if (st != TI_OK) snprintf(g->bg_why, sizeof g->bg_why, "%s", err.message);
    g->building = 2; /* done, not yet joined */
    pthread_mutex_unlock(&g->mu);
    return NULL;
}
#endif

/* Starts building the OpenCL plan on a thread; 0 when that is not possible here (then
 * the caller builds it at once). */
TI__PRIVATE int ti__clplan_start_background(ti_session *s, ti__clplan *g) {
#ifndef TI_NO_THREADS
    g->bg_session = s;
    g->bg_why[0] = 0;
    g->t_ready = 0;
    g->building = 1;
    g->cpu_runs = 0;
    if (pthread_create(&g->builder, NULL, ti__clplan_builder, g) != 0) {
        g->building = 0;
        return 0;
    }
    return 1;
#else
    (void)s;
    (void)g;
    return 0;
#endif
}

TI__PRIVATE int ti__clplan_still_building(ti__clplan *g) {
#ifndef TI_NO_THREADS
    pthread_mutex_lock(&g->mu);
    int b = g->building == 1;
    pthread_mutex_unlock(&g->mu);
    return b;
#else
    (void)g;
    return 0;
#endif
}

/* Waits for the background build (if any) and takes its outcome: a failed build leaves
 * the session on the CPU with the reason. */
TI__PRIVATE void ti__clplan_join(ti__clplan *g) {
    if (g == NULL || !g->building) return;
#ifndef TI_NO_THREADS
    pthread_join(g->builder, NULL);
    g->building = 0;
    ti_session *s = g->bg_session;
    if (g->bg_status != TI_OK) {
        g->active = 0;
        snprintf(s->fallback, sizeof s->fallback, "%.300s", g->bg_why);
    } else if (g->bg_why[0]) {
        snprintf(s->fallback, sizeof s->fallback, "%.300s", g->bg_why);
    }
#endif
}

/* Makes value v's bytes current on the host (dir TI__CL_HOST) or the device. */
TI__PRIVATE cl_int ti__clplan_sync(ti_session *s, ti__clplan *g, int v, int dir) {
    if (v < 0 || (g->where[v] & dir) || s->t[v].size_bytes == 0) return CL_SUCCESS;
    if (g->cst_off[v] != (size_t)-1 || s->t[v].data == NULL) return CL_SUCCESS;
    size_t off = (size_t)((unsigned char *)s->t[v].data - s->arena);
    cl_int e;
    if (dir == TI__CL_HOST)
        e = g->rt.api.clEnqueueReadBuffer(g->rt.q, g->act, CL_TRUE, off, s->t[v].size_bytes,
                                          s->t[v].data, 0, NULL, NULL);
    else
        e = g->rt.api.clEnqueueWriteBuffer(g->rt.q, g->act, CL_TRUE, off, s->t[v].size_bytes,
                                           s->t[v].data, 0, NULL, NULL);
    if (e == CL_SUCCESS) {
        g->where[v] |= (unsigned char)dir;
        g->transfer_bytes += s->t[v].size_bytes;
    }
    return e;
}

/* Runs the plan; with async, the reads of the outputs are queued without waiting and the
 * queue is left running (g->pending): ti__clplan_wait finishes it. */
TI__PRIVATE ti_status ti__clplan_run(ti_session *s, ti__clplan *g, int async, ti_error *err) {
    const ti_cl_api *cl = &g->rt.api;
    for (int v = 0; v < s->n_values; v++)
        g->where[v] = (unsigned char)(TI__CL_HOST | (g->cst_off[v] != (size_t)-1 ? TI__CL_DEV : 0));
    for (int n = 0; n < s->n_nodes; n++)
        for (int i = 0; i < s->nodes[n].n_outputs; i++)
            if (s->nodes[n].outputs[i] >= 0) g->where[s->nodes[n].outputs[i]] = 0;
    g->transfer_bytes = 0;
    for (int n = 0; n < s->n_nodes; n++) {
        const ti__node *node = &s->nodes[n];
        cl_int e = CL_SUCCESS;
        if (g->gpu[n]) {
            for (int i = 0; i < node->n_inputs && e == CL_SUCCESS; i++)
                e = ti__clplan_sync(s, g, node->inputs[i], TI__CL_DEV);
            if (e == CL_SUCCESS) {
                ti__clc c;
                ti__clc_init(&c, s, g, n);
                const ti__clop *op = ti__cl_op_find(node);
                e = op->run ? op->run(&c) : ti__cl_run_copy_table(&c);
            }
            if (e == CL_SUCCESS) {
                for (int i = 0; i < node->n_outputs; i++)
                    if (node->outputs[i] >= 0) g->where[node->outputs[i]] = TI__CL_DEV;
                continue;
            }
            /* the device refused this node: it runs on the CPU from now on */
            char why[160];
            snprintf(why, sizeof why, "OpenCL launch failed (%s): moved to the CPU", ti_cl_error_string(e));
            const char *w = ti__pool_strndup(&s->plan_pool, why, strlen(why));
            g->why[n] = w ? w : "";
            g->gpu[n] = 0;
            g->n_gpu--;
            g->n_cpu++;
        }
        e = CL_SUCCESS;
        for (int i = 0; i < node->n_inputs && e == CL_SUCCESS; i++)
            e = ti__clplan_sync(s, g, node->inputs[i], TI__CL_HOST);
        if (e != CL_SUCCESS)
            return ti__fail_node(err, TI_ERR_BACKEND, s->m->name, n, node->name, node->op,
                                 "reading its inputs from the OpenCL device failed: %s",
                                 ti_cl_error_string(e));
        ti_status st;
        if (n >= s->first_dynamic) {
            st = ti__session_run_dynamic(s, n, err);
        } else {
            ti__kctx k;
            ti__kctx_init(s, &k, n, err);
            st = s->ops[n]->run(&k);
        }
        if (st != TI_OK) return st;
        for (int i = 0; i < node->n_outputs; i++)
            if (node->outputs[i] >= 0) g->where[node->outputs[i]] = TI__CL_HOST;
    }
    for (int i = 0; i < s->m->n_outputs; i++) {
        int v = s->m->outputs[i];
        cl_int e = CL_SUCCESS;
        if (!(g->where[v] & TI__CL_HOST) && s->t[v].size_bytes && g->cst_off[v] == (size_t)-1) {
            size_t off = (size_t)((unsigned char *)s->t[v].data - s->arena);
            e = cl->clEnqueueReadBuffer(g->rt.q, g->act, async ? CL_FALSE : CL_TRUE, off,
                                        s->t[v].size_bytes, s->t[v].data, 0, NULL, NULL);
            if (e == CL_SUCCESS) {
                g->where[v] |= TI__CL_HOST;
                g->transfer_bytes += s->t[v].size_bytes;
            }
        }
        if (e != CL_SUCCESS)
            return ti__fail(err, TI_ERR_BACKEND, s->m->name, "reading output '%s' from the OpenCL device failed: %s",
                            s->t[v].name, ti_cl_error_string(e));
    }
    s->info.transfer_bytes = g->transfer_bytes;
    if (async) {
        cl->clFlush(g->rt.q); /* start the device now, not at the wait */
        g->pending = 1;
        return TI_OK;
    }
    cl_int e = cl->clFinish(g->rt.q);
    if (e != CL_SUCCESS)
        return ti__fail(err, TI_ERR_BACKEND, s->m->name, "OpenCL: clFinish: %s", ti_cl_error_string(e));
    return TI_OK;
}

TI__PRIVATE ti_status ti__clplan_wait(ti_session *s, ti__clplan *g, ti_error *err) {
    if (!g->pending) return TI_OK;
    g->pending = 0;
    cl_int e = g->rt.api.clFinish(g->rt.q);
    if (e != CL_SUCCESS)
        return ti__fail(err, TI_ERR_BACKEND, s->m->name, "OpenCL: clFinish: %s", ti_cl_error_string(e));
    return TI_OK;
}
#endif /* TI_NO_OPENCL */
