/* The OpenCL side of each op: a planner that says whether a node can run on the device
 * (or why not) and writes its parameter table, and a launcher that sets the kernel's
 * arguments and enqueues it; the op table that maps op types to both. Also the plan's
 * state (ti__clplan) that cl/backend.c fills and runs. Relies on cl/runtime.c and the CPU
 * kernels' parameter readers (conv.c, pool.c, gemm.c, reduce.c). Must not allocate in a
 * launcher: launchers run inside ti_session_run. */
#ifndef TI_NO_OPENCL

#define TI__CL_HOST 1 /* value's bytes are current in host memory */
#define TI__CL_DEV 2  /* ... in device memory */
#define TI__CL_SLOT 4 /* a bound output to copy from its arena slot when the run ends */
#define TI__CL_HALF 8 /* ... in the half buffer (fp16 storage), which kernels use */

typedef struct ti__clplan {
    ti__clrt rt;
    int active;           /* 1 when a plan exists with at least one GPU node */
    cl_mem act, cst;      /* activations (arena mirror), constants + parameter tables */
    size_t act_bytes, cst_bytes;
    /* fp16 storage (rt.f16): the kernels' activations as halves, value v at element
     * ti__cl_off(v) / 4 (the arena's float index, so every value keeps its place); act
     * stays the float mirror that the host, bound memory and linked sessions see */
    cl_mem act16;
    /* zero copy (a device that works in host memory): act wraps the session's arena
     * (CL_MEM_USE_HOST_PTR) and the host and the device take turns owning it: mapped while
     * the host (CPU nodes, the user between runs) uses it, unmapped while kernels run */
    int zero_copy, mapped;
    void *map_ptr;
    /* zero copy and caller memory (ti_session_bind_*): per value, a buffer wrapping the
     * caller's memory (CL_MEM_USE_HOST_PTR) that kernels use in place, mapped and unmapped
     * with the arena; bvals lists the values that have one (plan pool; NULL until used) */
    cl_mem *bmem;
    void **bptr;
    size_t *bbytes;
    int *bvals, n_bvals;
    int switches; /* ownership changes in the last run */
    int last_on_gpu; /* the last run ran this plan (not the CPU during a background build) */
    cl_mem part;          /* split-K partial sums of the conv GEMMs (NULL when none split) */
    size_t part_bytes;    /* the largest any node needs, found at planning */
    unsigned char *where; /* per value, during a run */
    size_t *cst_off;      /* per value: byte offset in cst, (size_t)-1 when not there */
    unsigned char *gpu;   /* per node */
    const struct ti__clop **op; /* per node: its OpenCL op, found once at planning */
    const char **why;     /* per node: reason for the CPU ("" on the GPU) */
    int32_t **par;        /* per node: parameter table (host copy), or NULL */
    const char **tunables; /* per node: its candidate settings ("" when none) */
    const char **tuned;   /* per node: the tuning file's setting ("" when none) */
    int *wg;              /* per node: tuned local size (0: ours) */
    int *node_retries;    /* per node: launches retried smaller since planning */
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
    ti__thread builder;
    ti__mutex mu;
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
    unsigned progs; /* programs this node needs beyond its op's (a tuned conv block size) */
    char why[160];
} ti__clc;

TI__PRIVATE int ti__clc_no(ti__clc *c, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(TI__PRINTF_FORMAT, 2, 3)))
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
/* Byte offset of value v in the activation buffer: its arena slot (for a value bound to
 * caller memory, the slot it would use: the device keeps it there). */
TI__PRIVATE size_t ti__cl_off(const ti_session *s, int v) {
    const unsigned char *p = s->bind_slot != NULL && s->bind_slot[v] != NULL ? s->bind_slot[v]
                                                                            : (const unsigned char *)s->t[v].data;
    return (size_t)(p - s->arena);
}
/* A bound value in a device that works in host memory: the device uses the arena slot,
 * the host the caller's memory, so the two are copied (ti__clplan_sync). */
TI__PRIVATE int ti__cl_bound_zc(const ti_session *s, const ti__clplan *g, int v) {
    return g->zero_copy && s->bind_slot != NULL && s->bind_slot[v] != NULL && s->t[v].data != s->bind_slot[v] &&
           (g->bmem == NULL || g->bmem[v] == NULL);
}
/* Where the kernels find a tensor: buffer and offset in elements of the storage type
 * (floats, or halves with fp16 storage: constants then sit at cst_off / 2, activations
 * in act16, never in the caller's memory, which stays float). */
TI__PRIVATE void ti__clc_loc(const ti__clc *c, const ti_tensor *t, cl_mem *mem, size_t *off) {
    int v = (int)(t - c->s->t);
    size_t es = c->g->rt.f16 ? 2 : 4;
    if (c->g->cst_off[v] != (size_t)-1) {
        *mem = c->g->cst;
        *off = c->g->cst_off[v] / es;
    } else if (c->g->rt.f16) {
        *mem = c->g->act16;
        *off = ti__cl_off(c->s, v) / 4;
    } else if (c->g->bmem != NULL && c->g->bmem[v] != NULL) { /* the caller's memory itself */
        *mem = c->g->bmem[v];
        *off = 0;
    } else {
        *mem = c->g->act;
        *off = ti__cl_off(c->s, v) / 4;
    }
}
TI__PRIVATE void ti__cla_t(ti__clargs *a, const ti__clc *c, const ti_tensor *t) {
    cl_mem m;
    size_t off;
    ti__clc_loc(c, t, &m, &off);
    ti__cla_mem(a, m, off);
}
TI__PRIVATE void ti__cla_par(ti__clargs *a, const ti__clc *c) {
    ti__cla_buf(a, c->g->cst, c->g->par_off[c->n]);
}
/* An optional bias: the tensor (any valid buffer when absent) and a has-bias flag. */
TI__PRIVATE void ti__cla_bias(ti__clargs *a, const ti__clc *c, const ti_tensor *b, const ti_tensor *other) {
    ti__cla_t(a, c, b ? b : other);
    ti__cla_int(a, b != NULL);
}
/* The node's fused activation: code, then its two parameters (ti_act in the kernels). */
TI__PRIVATE void ti__cla_act(ti__clargs *a, const ti__clc *c) {
    ti__cla_int(a, c->node->act);
    ti__cla_float(a, c->node->act_a);
    ti__cla_float(a, c->node->act_b);
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
    ti__cla_act(&x, c);
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
        size_t slice = (size_t)(pos * bs[axis]); /* elements */
        pos += t->shape[axis];
        if (n == 0) continue;
        cl_mem bm, tm;
        size_t bo, to;
        ti__clc_loc(c, big, &bm, &bo);
        ti__clc_loc(c, t, &tm, &to);
        ti__clargs x;
        ti__cla_begin(&x, &c->g->rt, TI__CLK_COPY);
        if (concat) {
            ti__cla_mem(&x, tm, to);
            ti__cla_mem(&x, bm, bo + slice);
        } else {
            ti__cla_mem(&x, bm, bo + slice);
            ti__cla_mem(&x, tm, to);
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
    int gemv = mm->m <= 4 && mm->k >= 256; /* tiles would be mostly empty rows */
    int tiled = gemv || (mm->m * mm->n >= 1024 && mm->k >= 8);
    for (int attempt = 0; attempt < 2; attempt++) {
        ti__clk k = tiled && attempt == 0 ? (gemv ? TI__CLK_GEMV : TI__CLK_MATMUL_T) : TI__CLK_MATMUL;
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
        ti__cla_act(&x, c);
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
        } else if (k == TI__CLK_GEMV) {
            size_t g[3] = {(size_t)mm->n * 64, (size_t)mm->m, mm->batches}, l[3] = {64, 1, 1};
            e = ti__clrt_launch(rt, k, 3, g, l);
            if (ti__cl_wg_error(e)) {
                rt->retries++;
                snprintf(rt->last_retry, sizeof rt->last_retry,
                         "ti_gemv: 64-item groups refused (%s), plain kernel used", ti_cl_error_string(e));
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

/* Conv: ungrouped ones (1x1 included) as an implicit GEMM (ti_conv_gemm, split along k
 * when its 32 x 32 output blocks alone would not fill the device; 16 x 16 or 64 x 64
 * blocks when a tuning file says tile=16|64); depthwise: its own
 * kernel; other grouped convs, and devices that refuse the GEMM's 64-item groups: the
 * direct kernel. $TINYINFER_OPENCL_CONV=direct (for benchmarks) turns the GEMM off. */
typedef enum { TI__CLCONV_DW = 1, TI__CLCONV_DIRECT, TI__CLCONV_GEMM } ti__clconv_kind;
#define TI__CL_CONV_PARAMS 19 /* after the kind: 15 shape ints, then K, k per split, splits,
                               * the block edge (16, 32, 64) */

/* Splits of k for a conv GEMM with `blocks` output blocks: enough groups for
 * about eight per compute unit (tinyinfer-tune on the H100 chose 8-32 splits for
 * resnet18's 3x3 convs, about 8-12 groups per SM, where two per unit gave 1.8x its time),
 * each split at least 64 deep (a multiple of the 16-deep slice), or a tuning file's count
 * (at least 16 deep). Returns the splits; *kc gets the depth of each. */
TI__PRIVATE int ti__cl_conv_splits(const ti__clrt *rt, int64_t blocks, int64_t K, int64_t tuned,
                                   int64_t *kc) {
    int64_t want = 8 * (int64_t)rt->compute_units, s = 1;
    if (blocks < want) s = (want + blocks - 1) / blocks;
    int64_t most = K / 64;
    if (s > most) s = most;
    if (tuned > 0) s = TI__MIN(tuned, (K + 15) / 16); /* a tuning file's, at least 16 deep */
    if (s < 1) s = 1;
    int64_t depth = (K + s - 1) / s;
    depth = (depth + 15) / 16 * 16;
    s = (K + depth - 1) / depth; /* no empty split after rounding */
    *kc = depth;
    return (int)s;
}

/* Appends to buf[0..cap) at *at, never past the end (cap > 0). */
TI__PRIVATE void ti__cl_cat(char *buf, size_t cap, size_t *at, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(TI__PRINTF_FORMAT, 4, 5)))
#endif
    ;
TI__PRIVATE void ti__cl_cat(char *buf, size_t cap, size_t *at, const char *fmt, ...) {
    if (*at >= cap - 1) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *at, cap - *at, fmt, ap);
    va_end(ap);
    if (n > 0) *at = TI__MIN(*at + (size_t)n, cap - 1);
}
/* The tuning candidates of a node: local sizes along dim 0 (powers of two from 16 up to
 * what the device takes), each after the prefix (a conv's "conv=direct "). */
TI__PRIVATE void ti__cl_wg_candidates(const ti__clrt *rt, const char *prefix, char *buf, size_t cap,
                                      size_t *at) {
    size_t most = TI__MIN(rt->max_wg, rt->max_item[0]);
    ti__cl_cat(buf, cap, at, "%s%swg=auto", *at ? "|" : "", prefix);
    for (size_t w = 16; w <= most && w <= 1024; w *= 2) ti__cl_cat(buf, cap, at, "|%swg=%zu", prefix, w);
}
TI__PRIVATE const char *ti__cl_pool_str(ti__clc *c, const char *buf, size_t n) {
    const char *r = ti__pool_strndup(&c->s->plan_pool, buf, n);
    return r ? r : "";
}
/* A node's candidates: for a conv the GEMM can run, its k splits and other block sizes,
 * then the direct kernel's local sizes; for the others, the local sizes. The default
 * comes first. */
TI__PRIVATE const char *ti__cl_tunables(ti__clc *c, int conv_gemm_ok, int64_t K) {
    char buf[640];
    size_t at = 0;
    buf[0] = 0;
    if (conv_gemm_ok) {
        ti__cl_cat(buf, sizeof buf, &at, "conv=gemm splits=auto");
        for (int64_t sp = 1; sp <= 32 && (sp == 1 || sp * 64 <= K); sp *= 2)
            ti__cl_cat(buf, sizeof buf, &at, "|conv=gemm splits=%d", (int)sp);
        ti__cl_cat(buf, sizeof buf, &at, "|conv=gemm tile=16|conv=gemm tile=64");
    }
    ti__cl_wg_candidates(&c->g->rt, conv_gemm_ok ? "conv=direct " : "", buf, sizeof buf, &at);
    return ti__cl_pool_str(c, buf, at);
}

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
    const char *mode = getenv("TINYINFER_OPENCL_CONV"), *set = c->g->tuned[c->n];
    int direct_only = mode != NULL && strcmp(mode, "direct") == 0;
    size_t set_len = strlen(set);
    int64_t want = ti__tune_get(set, set_len, "conv"), want_splits = ti__tune_get(set, set_len, "splits");
    int64_t tile = ti__tune_get(set, set_len, "tile");
    if (tile != 16 && tile != 64) tile = 32;
    int32_t *p = ti__clc_params(c, 1 + TI__CL_CONV_PARAMS);
    if (p == NULL) return ti__clc_no(c, "out of memory");
    p[0] = (cp.group == cp.c && cp.group == cp.m) ? TI__CLCONV_DW : TI__CLCONV_DIRECT;
    int32_t v[15] = {(int32_t)cp.c,     (int32_t)cp.in[1], (int32_t)cp.in[2], (int32_t)cp.m,
                     (int32_t)cp.out[1], (int32_t)cp.out[2], (int32_t)cp.k[1], (int32_t)cp.k[2],
                     (int32_t)cp.s[1],  (int32_t)cp.s[2],  (int32_t)cp.pb[1], (int32_t)cp.pb[2],
                     (int32_t)cp.d[1],  (int32_t)cp.d[2],  (int32_t)cp.group};
    memcpy(p + 1, v, sizeof v);
    int64_t K = cp.c * cp.k[1] * cp.k[2], P = cp.out[1] * cp.out[2];
    int gemm_ok = cp.group == 1 && !direct_only;
    c->g->tunables[c->n] = ti__cl_tunables(c, gemm_ok, K);
    if (gemm_ok && want != 2) {
        int64_t kc, blocks = (P + tile - 1) / tile * ((cp.m + tile - 1) / tile) * cp.n;
        int splits = ti__cl_conv_splits(&c->g->rt, blocks, K, want_splits, &kc);
        p[0] = TI__CLCONV_GEMM;
        p[16] = (int32_t)K;
        p[17] = (int32_t)kc;
        p[18] = splits;
        p[19] = (int32_t)tile;
        if (tile != 32) c->progs |= 1u << TI__CLP_CONVT;
        size_t part = splits > 1 ? (size_t)splits * (size_t)(cp.m * P * cp.n) * sizeof(float) : 0;
        if (part > c->g->part_bytes) c->g->part_bytes = part;
    }
    return 1;
}
/* The implicit-GEMM conv (and its split-K sum when p[18] > 1). */
TI__PRIVATE cl_int ti__cl_run_conv_gemm(ti__clc *c, const ti_tensor *x, const ti_tensor *w,
                                        const ti_tensor *b, const ti_tensor *y, const int32_t *p) {
    ti__clrt *rt = &c->g->rt;
    int splits = p[18];
    size_t T = (size_t)p[19];
    if (splits > 1 && c->g->part == NULL) return CL_INVALID_MEM_OBJECT;
    /* a tuned block size whose program did not build: the default one (the split of k
     * and its buffer hold for any block size) */
    ti__clk kern = T == 16 ? TI__CLK_CONV_GEMM16 : T == 64 ? TI__CLK_CONV_GEMM64 : TI__CLK_CONV_GEMM;
    if (rt->kern[kern] == NULL) kern = TI__CLK_CONV_GEMM, T = 32;
    ti__clargs a;
    ti__cla_begin(&a, rt, kern);
    ti__cla_t(&a, c, x);
    ti__cla_t(&a, c, w);
    ti__cla_bias(&a, c, b, w);
    ti__cla_t(&a, c, y);
    cl_mem part = c->g->part ? c->g->part : c->g->act; /* unused when not split */
    ti__cla_raw(&a, sizeof part, &part);
    ti__cla_buf(&a, c->g->cst, c->g->par_off[c->n] + sizeof(int32_t));
    ti__cla_act(&a, c);
    if (a.err != CL_SUCCESS) return a.err;
    size_t P = (size_t)(y->shape[2] * y->shape[3]), M = (size_t)y->shape[1];
    size_t g[3] = {(P + T - 1) / T * 64, (M + T - 1) / T, (size_t)splits * (size_t)y->shape[0]};
    size_t l[3] = {64, 1, 1};
    cl_int e = ti__clrt_launch(rt, kern, 3, g, l);
    if (ti__cl_wg_error(e)) {
        rt->retries++;
        snprintf(rt->last_retry, sizeof rt->last_retry,
                 "%s: 64-item groups refused (%s), direct conv used", ti__cl_kernel_table[kern].name,
                 ti_cl_error_string(e));
    }
    if (e != CL_SUCCESS || splits == 1) return e;
    ti__cla_begin(&a, rt, TI__CLK_CONV_SPLITK);
    ti__cla_raw(&a, sizeof part, &part);
    ti__cla_bias(&a, c, b, w);
    ti__cla_t(&a, c, y);
    ti__cla_int(&a, (int64_t)M);
    ti__cla_int(&a, (int64_t)P);
    ti__cla_int(&a, splits);
    ti__cla_act(&a, c);
    if (a.err != CL_SUCCESS) return a.err;
    size_t g2[2] = {M * P, (size_t)y->shape[0]};
    return ti__clrt_launch(rt, TI__CLK_CONV_SPLITK, 2, g2, NULL);
}

TI__PRIVATE cl_int ti__cl_run_conv(ti__clc *c) {
    const ti_tensor *x = c->in[0], *w = c->in[1], *y = c->out[0];
    const ti_tensor *b = c->n_in > 2 ? c->in[2] : NULL;
    if (b != NULL && ti__numel(b) == 0) b = NULL;
    const int32_t *p = c->g->par[c->n];
    if (p[0] == TI__CLCONV_GEMM) {
        cl_int e = ti__cl_run_conv_gemm(c, x, w, b, y, p);
        if (!ti__cl_wg_error(e)) return e;
        /* a device that refuses 64-item groups for it: the direct kernel, from now on */
        c->g->par[c->n][0] = TI__CLCONV_DIRECT;
    }
    ti__clk k = p[0] == TI__CLCONV_DW ? TI__CLK_DWCONV2D : TI__CLK_CONV2D;
    ti__clargs a;
    ti__cla_begin(&a, &c->g->rt, k);
    ti__cla_t(&a, c, x);
    ti__cla_t(&a, c, w);
    ti__cla_bias(&a, c, b, w);
    ti__cla_t(&a, c, y);
    ti__cla_buf(&a, c->g->cst, c->g->par_off[c->n] + sizeof(int32_t));
    ti__cla_act(&a, c);
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
    {"Conv", TI__CLM_CONV, ti__cl_plan_conv, ti__cl_run_conv},
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

/* 1 when the op's kernels take their local size from ti__clrt_launch (so a tuned one
 * applies): not the aliases (no kernel), nor the matmuls and global pools (sizes fixed by
 * their tiles); convs list their own candidates. */
TI__PRIVATE int ti__cl_wg_tunable(const ti__clop *op) {
    return op->run != ti__cl_run_alias && op->run != ti__cl_run_gemm && op->run != ti__cl_run_matmul &&
           op->run != ti__cl_run_gpool && op->run != ti__cl_run_conv;
}

TI__PRIVATE const ti__clop *ti__cl_tfl_op_find(const ti__node *node); /* cl/qops.c */

TI__PRIVATE const ti__clop *ti__cl_op_find(const ti__node *node) {
    if (strcmp(node->domain, "tflite") == 0) return ti__cl_tfl_op_find(node);
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
    c->progs = 0;
    c->why[0] = 0;
}

#endif /* TI_NO_OPENCL */
