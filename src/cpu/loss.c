/* Loss functions: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (ONNX opset 12+).
 * Scalar reference kernels for float32/float64/float16/bfloat16 scores with int32/int64
 * targets; sums accumulate in double. Relies on internal.h and the element helpers of
 * core/tensor.c. Must not allocate in a run function; a target outside [0, C) that is not
 * ignore_index is a run-time error (TI_ERR_INVALID_ARGUMENT), never an out-of-bounds read. */

enum { TI__LOSS_NONE, TI__LOSS_SUM, TI__LOSS_MEAN };

/* The input seen as [N, C, D] (D = product of the trailing dims, 1 when rank 2). */
typedef struct ti__loss_geom {
    int64_t n, c, d;
    int reduction;
    int has_ignore;
    int64_t ignore_index;
} ti__loss_geom;

/* Shared validation and output shapes: out[0] is the loss, out[1] (SCE only) log_prob. */
TI__PRIVATE int ti__loss_setup(ti__kctx *k, ti__loss_geom *g) {
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    const ti_tensor *x = k->in[0], *t = k->in[1];
    const ti_tensor *w = k->n_in > 2 ? k->in[2] : NULL;
    if (!ti__dtype_is_float(x->dtype))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "input dtype %s is not supported (float only)",
                         ti_dtype_name(x->dtype));
    if (t->dtype != TI_DTYPE_I32 && t->dtype != TI_DTYPE_I64)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "target dtype %s, expected int32 or int64",
                         ti_dtype_name(t->dtype));
    if (x->rank < 2)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "input has rank %d, expected at least 2 (N, C, ...)",
                         x->rank);
    if (t->rank != x->rank - 1)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "target has rank %d, expected %d (input rank - 1)",
                         t->rank, x->rank - 1);
    if (t->shape[0] != x->shape[0])
        return ti__kfail(k, TI_ERR_BAD_MODEL, "target dim 0 is %lld, input batch is %lld",
                         (long long)t->shape[0], (long long)x->shape[0]);
    g->d = 1;
    for (int i = 2; i < x->rank; i++) {
        if (t->shape[i - 1] != x->shape[i])
            return ti__kfail(k, TI_ERR_BAD_MODEL, "target dim %d is %lld, input dim %d is %lld",
                             i - 1, (long long)t->shape[i - 1], i, (long long)x->shape[i]);
        g->d *= x->shape[i];
    }
    g->n = x->shape[0];
    g->c = x->shape[1];
    if (w != NULL) {
        if (w->dtype != x->dtype)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "weight dtype %s differs from input dtype %s",
                             ti_dtype_name(w->dtype), ti_dtype_name(x->dtype));
        if (w->rank != 1 || w->shape[0] != g->c)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "weight must have shape [%lld] (C)",
                             (long long)g->c);
    }
    const char *red = ti__attr_s(k->node, "reduction", "mean");
    if (strcmp(red, "none") == 0) g->reduction = TI__LOSS_NONE;
    else if (strcmp(red, "sum") == 0) g->reduction = TI__LOSS_SUM;
    else if (strcmp(red, "mean") == 0) g->reduction = TI__LOSS_MEAN;
    else
        return ti__kfail(k, TI_ERR_BAD_MODEL,
                         "reduction '%s' is not one of 'none', 'sum', 'mean'", red);
    g->has_ignore = ti__attr_get(k->node, "ignore_index") != NULL;
    g->ignore_index = ti__attr_i(k->node, "ignore_index", 0);

    if (k->n_out > 0 && k->out[0] != NULL) {
        int ok = g->reduction == TI__LOSS_NONE ? ti__set_shape(k->out[0], x->dtype, t->rank, t->shape)
                                               : ti__set_shape(k->out[0], x->dtype, 0, NULL);
        if (!ok) return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid output shape");
    }
    if (k->n_out > 1 && k->out[1] != NULL &&
        !ti__set_shape(k->out[1], x->dtype, x->rank, x->shape))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid log_prob shape");
    return TI_OK;
}

/* Class index of sample (n, d), or -1 when ignored; -2 when out of range. */
TI__PRIVATE int64_t ti__loss_class(const ti_tensor *t, const ti__loss_geom *g, size_t i) {
    int64_t c = t->dtype == TI_DTYPE_I64 ? ((const int64_t *)t->data)[i]
                                         : (int64_t)((const int32_t *)t->data)[i];
    if (g->has_ignore && c == g->ignore_index) return -1;
    if (c < 0 || c >= g->c) return -2;
    return c;
}

/* Given per-sample log-probabilities lp(n, c, d) (x itself for NLL, the log-softmax for SCE,
 * read through get), writes the (reduced) loss. */
typedef double (*ti__loss_get_fn)(void *ctx, int64_t n, int64_t c, int64_t d);

TI__PRIVATE ti_status ti__loss_finish(ti__kctx *k, const ti__loss_geom *g, ti__loss_get_fn get,
                                      void *ctx) {
    const ti_tensor *t = k->in[1];
    const ti_tensor *w = k->n_in > 2 ? k->in[2] : NULL;
    ti_tensor *y = k->n_out > 0 ? k->out[0] : NULL;
    double sum = 0.0, wsum = 0.0;
    for (int64_t n = 0; n < g->n; n++) {
        for (int64_t d = 0; d < g->d; d++) {
            size_t i = (size_t)(n * g->d + d);
            int64_t c = ti__loss_class(t, g, i);
            if (c == -2)
                return ti__kfail(k, TI_ERR_INVALID_ARGUMENT,
                                 "target value %lld at index %zu is outside [0, %lld)",
                                 (long long)ti__get_i64(t, i), i, (long long)g->c);
            double l = 0.0, wt = 0.0;
            if (c >= 0) {
                wt = w != NULL ? ti__get_f64(w, (size_t)c) : 1.0;
                l = -get(ctx, n, c, d) * wt;
            }
            if (g->reduction == TI__LOSS_NONE) {
                if (y != NULL) ti__set_f64(y, i, l);
            } else {
                sum += l;
                wsum += wt;
            }
        }
    }
    if (y == NULL || g->reduction == TI__LOSS_NONE) return TI_OK;
    /* mean: sum over weights of the samples not ignored (1 each without a weight input),
     * as the ONNX reference does; 0/0 gives NaN like numpy. */
    ti__set_f64(y, 0, g->reduction == TI__LOSS_SUM ? sum : sum / wsum);
    return TI_OK;
}

/* ---- NegativeLogLikelihoodLoss ------------------------------------------------------- */

TI__PRIVATE int ti__nll_shape(ti__kctx *k) {
    ti__loss_geom g;
    return ti__loss_setup(k, &g);
}

typedef struct ti__nll_ctx {
    const ti_tensor *x;
    const ti__loss_geom *g;
} ti__nll_ctx;

TI__PRIVATE double ti__nll_get(void *ctx, int64_t n, int64_t c, int64_t d) {
    const ti__nll_ctx *p = (const ti__nll_ctx *)ctx;
    return ti__get_f64(p->x, (size_t)((n * p->g->c + c) * p->g->d + d));
}

TI__PRIVATE ti_status ti__nll_run(ti__kctx *k) {
    ti__loss_geom g;
    int r = ti__loss_setup(k, &g);
    if (r != TI_OK) return (ti_status)r;
    ti__nll_ctx ctx;
    ctx.x = k->in[0];
    ctx.g = &g;
    return ti__loss_finish(k, &g, ti__nll_get, &ctx);
}

/* ---- SoftmaxCrossEntropyLoss --------------------------------------------------------- */
/* Log-softmax over axis 1 (classes, stride D). With the log_prob output the whole tensor is
 * written there and read back; without it, each needed value is computed on the fly from
 * the per-(n, d) max and log-sum-exp, which costs one pass over C per sample. */

TI__PRIVATE int ti__sce_shape(ti__kctx *k) {
    ti__loss_geom g;
    return ti__loss_setup(k, &g);
}

typedef struct ti__sce_ctx {
    const ti_tensor *x;
    const ti_tensor *logp; /* NULL: compute on the fly */
    const ti__loss_geom *g;
} ti__sce_ctx;

/* max and log(sum(exp(x - max))) over classes of sample (n, d). */
TI__PRIVATE void ti__sce_stats(const ti_tensor *x, const ti__loss_geom *g, int64_t n, int64_t d,
                               double *mx, double *lse) {
    size_t base = (size_t)(n * g->c * g->d + d), s = (size_t)g->d;
    double m = -HUGE_VAL;
    for (int64_t c = 0; c < g->c; c++) {
        double v = ti__get_f64(x, base + (size_t)c * s);
        if (v > m) m = v;
    }
    double sum = 0.0;
    for (int64_t c = 0; c < g->c; c++) sum += exp(ti__get_f64(x, base + (size_t)c * s) - m);
    *mx = m;
    *lse = log(sum);
}

TI__PRIVATE double ti__sce_get(void *ctx, int64_t n, int64_t c, int64_t d) {
    const ti__sce_ctx *p = (const ti__sce_ctx *)ctx;
    size_t i = (size_t)((n * p->g->c + c) * p->g->d + d);
    if (p->logp != NULL) return ti__get_f64(p->logp, i);
    double m, lse;
    ti__sce_stats(p->x, p->g, n, d, &m, &lse);
    return ti__get_f64(p->x, i) - m - lse;
}

TI__PRIVATE ti_status ti__sce_run(ti__kctx *k) {
    ti__loss_geom g;
    int r = ti__loss_setup(k, &g);
    if (r != TI_OK) return (ti_status)r;
    const ti_tensor *x = k->in[0];
    ti_tensor *logp = k->n_out > 1 ? k->out[1] : NULL;
    if (logp != NULL) {
        for (int64_t n = 0; n < g.n; n++) {
            for (int64_t d = 0; d < g.d; d++) {
                double m, lse;
                ti__sce_stats(x, &g, n, d, &m, &lse);
                for (int64_t c = 0; c < g.c; c++) {
                    size_t i = (size_t)((n * g.c + c) * g.d + d);
                    ti__set_f64(logp, i, ti__get_f64(x, i) - m - lse);
                }
            }
        }
    }
    ti__sce_ctx ctx;
    ctx.x = x;
    ctx.logp = logp;
    ctx.g = &g;
    return ti__loss_finish(k, &g, ti__sce_get, &ctx);
}

TI__PRIVATE const ti__op ti__ops_loss[] = {
    {"NegativeLogLikelihoodLoss", ti__nll_shape, ti__nll_run, NULL, 0},
    {"SoftmaxCrossEntropyLoss", ti__sce_shape, ti__sce_run, NULL, 0},
    {NULL, NULL, NULL, NULL, 0}
};
