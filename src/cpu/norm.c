/* Normalisations: BatchNormalization (inference), InstanceNormalization,
 * LayerNormalization, GroupNormalization, RMSNormalization, LRN, LpNormalization and
 * MeanVarianceNormalization. Statistics accumulate in double (two passes: mean, then
 * squared deviations). float32 data is read directly, other float dtypes through
 * ti__get_f64. Relies on tensor.c and the thread pool. Must not allocate. */

TI__PRIVATE int ti__norm_float_ok(ti_dtype t) {
    return t == TI_DTYPE_F32 || t == TI_DTYPE_F64 || t == TI_DTYPE_F16 || t == TI_DTYPE_BF16;
}

/* Element i of a float tensor (fast for float32). */
TI__PRIVATE double ti__norm_ld(const ti_tensor *t, size_t i) {
    return t->dtype == TI_DTYPE_F32 ? (double)((const float *)t->data)[i] : ti__get_f64(t, i);
}
TI__PRIVATE void ti__norm_st(ti_tensor *t, size_t i, double v) {
    if (t->dtype == TI_DTYPE_F32) ((float *)t->data)[i] = (float)v;
    else ti__set_f64(t, i, v);
}

TI__PRIVATE ti_status ti__norm_check_x(ti__kctx *k, int min_rank) {
    TI__REQUIRE_INPUT(k, 0);
    const ti_tensor *x = k->in[0];
    if (!ti__norm_float_ok(x->dtype))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "dtype %s is not supported",
                         ti_dtype_name(x->dtype));
    if (x->rank < min_rank)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "input has %d dims, expected at least %d", x->rank,
                         min_rank);
    return TI_OK;
}

/* A parameter input (float dtype) of exactly `want` elements. */
TI__PRIVATE ti_status ti__norm_check_param(ti__kctx *k, int i, const char *name, size_t want) {
    TI__REQUIRE_INPUT(k, i);
    const ti_tensor *t = k->in[i];
    if (!ti__norm_float_ok(t->dtype))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "%s has dtype %s", name, ti_dtype_name(t->dtype));
    if (ti__numel(t) != want)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "%s has %zu elements, expected %zu", name,
                         ti__numel(t), want);
    return TI_OK;
}

TI__PRIVATE ti_status ti__norm_same_shape(ti__kctx *k) {
    const ti_tensor *x = k->in[0];
    if (!ti__set_shape(k->out[0], x->dtype, x->rank, x->shape))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid output shape");
    return TI_OK;
}

/* Elements of dims [from, rank). */
TI__PRIVATE size_t ti__norm_inner(const ti_tensor *x, int from) {
    size_t n = 1;
    for (int i = from; i < x->rank; i++) n *= (size_t)x->shape[i];
    return n;
}

/* ---- BatchNormalization ------------------------------------------------------------- */

TI__PRIVATE int ti__bn_shape(ti__kctx *k) {
    ti_status e = ti__norm_check_x(k, 2);
    if (e != TI_OK) return e;
    if (ti__attr_i(k->node, "training_mode", 0) != 0)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "training_mode=1 is not supported");
    for (int i = 1; i < k->n_out; i++)
        if (k->out[i] != NULL)
            return ti__kfail(k, TI_ERR_UNSUPPORTED,
                             "training outputs (running mean / variance) are not supported");
    const ti_tensor *x = k->in[0];
    /* per channel; opset < 9 with spatial=0 has one value per (C, D1, ...) element */
    size_t want = ti__attr_i(k->node, "spatial", 1) == 0 ? ti__norm_inner(x, 1)
                                                          : (size_t)x->shape[1];
    static const char *const names[5] = {"", "scale", "B", "mean", "var"};
    for (int i = 1; i <= 4; i++)
        if ((e = ti__norm_check_param(k, i, names[i], want)) != TI_OK) return e;
    return ti__norm_same_shape(k);
}

typedef struct ti__norm_job {
    const ti__kctx *k;
    const ti_tensor *x, *scale, *bias;
    ti_tensor *y;
    size_t outer, inner, c; /* planes / lines, elements each, channels */
    double eps;
    int per_element; /* BatchNormalization spatial=0 */
    size_t groups;   /* GroupNormalization */
    int per_group_affine;
} ti__norm_job;

TI__PRIVATE void ti__bn_planes(void *ctx, size_t begin, size_t end) {
    const ti__norm_job *j = (const ti__norm_job *)ctx;
    ti_tensor *const *in = j->k->in;
    for (size_t pl = begin; pl < end; pl++) {
        size_t c = pl % j->c, o = pl * j->inner;
        if (!j->per_element) {
            double a = ti__norm_ld(in[1], c) / sqrt(ti__norm_ld(in[4], c) + j->eps);
            double b = ti__norm_ld(in[2], c) - ti__norm_ld(in[3], c) * a;
            if (j->x->dtype == TI_DTYPE_F32) {
                const float *x = (const float *)j->x->data + o;
                float *y = (float *)j->y->data + o, af = (float)a, bf = (float)b;
                for (size_t i = 0; i < j->inner; i++) y[i] = x[i] * af + bf;
            } else {
                for (size_t i = 0; i < j->inner; i++)
                    ti__set_f64(j->y, o + i, ti__get_f64(j->x, o + i) * a + b);
            }
        } else {
            size_t po = c * j->inner;
            for (size_t i = 0; i < j->inner; i++) {
                double a = ti__norm_ld(in[1], po + i) / sqrt(ti__norm_ld(in[4], po + i) + j->eps);
                double b = ti__norm_ld(in[2], po + i) - ti__norm_ld(in[3], po + i) * a;
                ti__norm_st(j->y, o + i, ti__norm_ld(j->x, o + i) * a + b);
            }
        }
    }
}

TI__PRIVATE ti_status ti__bn_run(ti__kctx *k) {
    ti__norm_job j;
    memset(&j, 0, sizeof j);
    j.k = k;
    j.x = k->in[0];
    j.y = k->out[0];
    j.c = (size_t)j.x->shape[1];
    j.inner = ti__norm_inner(j.x, 2);
    j.outer = (size_t)j.x->shape[0] * j.c;
    j.eps = ti__attr_f(k->node, "epsilon", 1e-5f);
    j.per_element = ti__attr_i(k->node, "spatial", 1) == 0 && j.inner > 1;
    ti__parallel_for(k->tp, j.outer, TI__MAX((size_t)1, 65536 / (j.inner + 1)), ti__bn_planes, &j);
    return TI_OK;
}

/* ---- Instance / Group normalisation: statistics over contiguous blocks --------------- */

/* Mean and population variance of n elements at offset o. */
TI__PRIVATE void ti__norm_stats(const ti_tensor *x, size_t o, size_t n, double *mean, double *var) {
    double s = 0, q = 0;
    if (x->dtype == TI_DTYPE_F32) {
        const float *p = (const float *)x->data + o;
        for (size_t i = 0; i < n; i++) s += p[i];
        double m = n ? s / (double)n : 0.0;
        for (size_t i = 0; i < n; i++) {
            double d = p[i] - m;
            q += d * d;
        }
        *mean = m;
    } else {
        for (size_t i = 0; i < n; i++) s += ti__get_f64(x, o + i);
        double m = n ? s / (double)n : 0.0;
        for (size_t i = 0; i < n; i++) {
            double d = ti__get_f64(x, o + i) - m;
            q += d * d;
        }
        *mean = m;
    }
    *var = n ? q / (double)n : 0.0;
}

/* y = (x - mean) * a + b on n elements at offset o, with a = scale * invstd folded in. */
TI__PRIVATE void ti__norm_affine(const ti_tensor *x, ti_tensor *y, size_t o, size_t n, double a,
                                 double b) {
    if (x->dtype == TI_DTYPE_F32) {
        const float *xp = (const float *)x->data + o;
        float *yp = (float *)y->data + o, af = (float)a, bf = (float)b;
        for (size_t i = 0; i < n; i++) yp[i] = xp[i] * af + bf;
    } else {
        for (size_t i = 0; i < n; i++) ti__set_f64(y, o + i, ti__get_f64(x, o + i) * a + b);
    }
}

TI__PRIVATE int ti__instnorm_shape(ti__kctx *k) {
    ti_status e = ti__norm_check_x(k, 3);
    if (e != TI_OK) return e;
    size_t c = (size_t)k->in[0]->shape[1];
    if ((e = ti__norm_check_param(k, 1, "scale", c)) != TI_OK) return e;
    if ((e = ti__norm_check_param(k, 2, "B", c)) != TI_OK) return e;
    return ti__norm_same_shape(k);
}

/* One (n, group) block per index: groups == C for InstanceNormalization. */
TI__PRIVATE void ti__groupnorm_blocks(void *ctx, size_t begin, size_t end) {
    const ti__norm_job *j = (const ti__norm_job *)ctx;
    size_t cpg = j->c / j->groups; /* channels per group */
    for (size_t bl = begin; bl < end; bl++) {
        size_t g = bl % j->groups, o = bl * cpg * j->inner;
        double mean, var;
        ti__norm_stats(j->x, o, cpg * j->inner, &mean, &var);
        double inv = 1.0 / sqrt(var + j->eps);
        for (size_t ci = 0; ci < cpg; ci++) {
            size_t c = g * cpg + ci, pi = j->per_group_affine ? g : c;
            double a = ti__norm_ld(j->scale, pi) * inv;
            double b = ti__norm_ld(j->bias, pi) - mean * a;
            ti__norm_affine(j->x, j->y, o + ci * j->inner, j->inner, a, b);
        }
    }
}

TI__PRIVATE ti_status ti__instnorm_run(ti__kctx *k) {
    ti__norm_job j;
    memset(&j, 0, sizeof j);
    j.k = k;
    j.x = k->in[0];
    j.y = k->out[0];
    j.scale = k->in[1];
    j.bias = k->in[2];
    j.c = (size_t)j.x->shape[1];
    j.groups = j.c;
    j.inner = ti__norm_inner(j.x, 2);
    j.eps = ti__attr_f(k->node, "epsilon", 1e-5f);
    size_t blocks = (size_t)j.x->shape[0] * j.c;
    ti__parallel_for(k->tp, blocks, TI__MAX((size_t)1, 16384 / (j.inner + 1)),
                     ti__groupnorm_blocks, &j);
    return TI_OK;
}

TI__PRIVATE int ti__groupnorm_shape(ti__kctx *k) {
    ti_status e = ti__norm_check_x(k, 2);
    if (e != TI_OK) return e;
    const ti_tensor *x = k->in[0];
    int64_t g = ti__attr_i(k->node, "num_groups", 0), c = x->shape[1];
    if (g < 1 || c % g != 0)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "num_groups %lld does not divide %lld channels",
                         (long long)g, (long long)c);
    /* opset 18: scale and bias per group; opset 21: per channel */
    size_t want = (size_t)(k->opset >= 21 ? c : g);
    TI__REQUIRE_INPUT(k, 1);
    if (ti__numel(k->in[1]) == (size_t)c) want = (size_t)c;
    if ((e = ti__norm_check_param(k, 1, "scale", want)) != TI_OK) return e;
    if ((e = ti__norm_check_param(k, 2, "bias", want)) != TI_OK) return e;
    return ti__norm_same_shape(k);
}

TI__PRIVATE ti_status ti__groupnorm_run(ti__kctx *k) {
    ti__norm_job j;
    memset(&j, 0, sizeof j);
    j.k = k;
    j.x = k->in[0];
    j.y = k->out[0];
    j.scale = k->in[1];
    j.bias = k->in[2];
    j.c = (size_t)j.x->shape[1];
    j.groups = (size_t)ti__attr_i(k->node, "num_groups", 1);
    j.per_group_affine = ti__numel(j.scale) != j.c;
    j.inner = ti__norm_inner(j.x, 2);
    j.eps = ti__attr_f(k->node, "epsilon", 1e-5f);
    size_t blocks = (size_t)j.x->shape[0] * j.groups;
    ti__parallel_for(k->tp, blocks, 1, ti__groupnorm_blocks, &j);
    return TI_OK;
}

/* ---- LayerNormalization and RMSNormalization: over the trailing dims from axis ------- */

/* Strides of a parameter (Scale, B) broadcast onto X's shape; 0 if not broadcastable. */
TI__PRIVATE int ti__norm_bcast(const ti_tensor *x, const ti_tensor *t, int64_t *st) {
    if (t->rank > x->rank) return 0;
    int64_t s = 1;
    for (int i = x->rank - 1; i >= 0; i--) {
        int ti = i - (x->rank - t->rank);
        int64_t d = ti >= 0 ? t->shape[ti] : 1;
        if (d != 1 && d != x->shape[i]) return 0;
        st[i] = d == 1 ? 0 : s;
        s *= d;
    }
    return 1;
}

/* ONNX TensorProto data type of stash_type to a dtype (float types only). */
TI__PRIVATE ti_dtype ti__norm_stash_dtype(int64_t t) {
    switch (t) {
    case 1: return TI_DTYPE_F32;
    case 10: return TI_DTYPE_F16;
    case 11: return TI_DTYPE_F64;
    case 16: return TI_DTYPE_BF16;
    default: return TI_DTYPE_UNKNOWN;
    }
}

TI__PRIVATE ti_status ti__norm_axis(ti__kctx *k, int *axis) {
    int r = k->in[0]->rank;
    int64_t a = ti__attr_i(k->node, "axis", -1);
    if (a < -r || a >= r)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "axis %lld is out of range for rank %d",
                         (long long)a, r);
    *axis = (int)(a < 0 ? a + r : a);
    return TI_OK;
}

TI__PRIVATE int ti__layernorm_shape_common(ti__kctx *k, int rms) {
    ti_status e = ti__norm_check_x(k, 1);
    if (e != TI_OK) return e;
    const ti_tensor *x = k->in[0];
    int axis = 0;
    if ((e = ti__norm_axis(k, &axis)) != TI_OK) return e;
    int64_t st[TI_MAX_DIMS];
    for (int i = 1; i <= (rms ? 1 : 2); i++) {
        if (i == 1) TI__REQUIRE_INPUT(k, 1);
        if (i >= k->n_in || k->in[i] == NULL) continue;
        if (!ti__norm_float_ok(k->in[i]->dtype))
            return ti__kfail(k, TI_ERR_UNSUPPORTED, "%s has dtype %s", i == 1 ? "Scale" : "B",
                             ti_dtype_name(k->in[i]->dtype));
        if (!ti__norm_bcast(x, k->in[i], st))
            return ti__kfail(k, TI_ERR_BAD_MODEL, "%s (rank %d) does not broadcast to X",
                             i == 1 ? "Scale" : "B", k->in[i]->rank);
    }
    if ((e = ti__norm_same_shape(k)) != TI_OK) return e;
    if (!rms && k->n_out > 1) { /* Mean, InvStdDev: [d0 .. d(axis-1), 1, ..., 1] */
        ti_dtype sd = ti__norm_stash_dtype(ti__attr_i(k->node, "stash_type", 1));
        if (sd == TI_DTYPE_UNKNOWN)
            return ti__kfail(k, TI_ERR_UNSUPPORTED, "stash_type %lld is not supported",
                             (long long)ti__attr_i(k->node, "stash_type", 1));
        int64_t dims[TI_MAX_DIMS];
        for (int i = 0; i < x->rank; i++) dims[i] = i < axis ? x->shape[i] : 1;
        for (int i = 1; i < k->n_out && i < 3; i++)
            if (k->out[i] != NULL && !ti__set_shape(k->out[i], sd, x->rank, dims))
                return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid output shape");
    }
    return TI_OK;
}
TI__PRIVATE int ti__layernorm_shape(ti__kctx *k) {
    return ti__layernorm_shape_common(k, 0);
}
TI__PRIVATE int ti__rmsnorm_shape(ti__kctx *k) {
    return ti__layernorm_shape_common(k, 1);
}

typedef struct ti__ln_job {
    const ti_tensor *x, *scale, *bias;
    ti_tensor *y, *mean, *inv;
    size_t inner;
    int rank;
    int64_t ss[TI_MAX_DIMS], bs[TI_MAX_DIMS]; /* broadcast strides of scale, bias */
    int fast;        /* scale / bias cover exactly the normalised dims, contiguous */
    double eps;
    int rms;
} ti__ln_job;

/* Offset of parameter element for X element i (general broadcast). */
TI__PRIVATE size_t ti__ln_param_off(const ti__ln_job *j, const int64_t *st, size_t i) {
    size_t off = 0;
    for (int d = j->rank - 1; d >= 0; d--) {
        size_t dim = (size_t)j->x->shape[d];
        off += (i % dim) * (size_t)st[d];
        i /= dim;
    }
    return off;
}

TI__PRIVATE void ti__ln_lines(void *ctx, size_t begin, size_t end) {
    const ti__ln_job *j = (const ti__ln_job *)ctx;
    size_t n = j->inner;
    for (size_t l = begin; l < end; l++) {
        size_t o = l * n;
        double mean = 0, var;
        if (j->rms) {
            double q = 0;
            for (size_t i = 0; i < n; i++) {
                double v = ti__norm_ld(j->x, o + i);
                q += v * v;
            }
            var = n ? q / (double)n : 0.0;
        } else {
            ti__norm_stats(j->x, o, n, &mean, &var);
        }
        double inv = 1.0 / sqrt(var + j->eps);
        if (j->mean != NULL) ti__set_f64(j->mean, l, mean);
        if (j->inv != NULL) ti__set_f64(j->inv, l, inv);
        if (j->fast && j->x->dtype == TI_DTYPE_F32 && j->scale->dtype == TI_DTYPE_F32 &&
            (j->bias == NULL || j->bias->dtype == TI_DTYPE_F32)) {
            const float *x = (const float *)j->x->data + o, *s = (const float *)j->scale->data;
            const float *b = j->bias != NULL ? (const float *)j->bias->data : NULL;
            float *y = (float *)j->y->data + o, m = (float)mean, iv = (float)inv;
            if (b != NULL)
                for (size_t i = 0; i < n; i++) y[i] = (x[i] - m) * iv * s[i] + b[i];
            else
                for (size_t i = 0; i < n; i++) y[i] = (x[i] - m) * iv * s[i];
            continue;
        }
        for (size_t i = 0; i < n; i++) {
            size_t e = o + i;
            size_t so = j->fast ? i : ti__ln_param_off(j, j->ss, e);
            double v = (ti__norm_ld(j->x, e) - mean) * inv * ti__norm_ld(j->scale, so);
            if (j->bias != NULL)
                v += ti__norm_ld(j->bias, j->fast ? i : ti__ln_param_off(j, j->bs, e));
            ti__norm_st(j->y, e, v);
        }
    }
}

TI__PRIVATE ti_status ti__layernorm_run_common(ti__kctx *k, int rms) {
    ti__ln_job j;
    memset(&j, 0, sizeof j);
    int axis = 0;
    ti_status e = ti__norm_axis(k, &axis);
    if (e != TI_OK) return e;
    j.x = k->in[0];
    j.y = k->out[0];
    j.scale = k->in[1];
    j.bias = !rms && k->n_in > 2 ? k->in[2] : NULL;
    j.mean = !rms && k->n_out > 1 ? k->out[1] : NULL;
    j.inv = !rms && k->n_out > 2 ? k->out[2] : NULL;
    j.rank = j.x->rank;
    j.inner = ti__norm_inner(j.x, axis);
    j.eps = ti__attr_f(k->node, "epsilon", 1e-5f);
    j.rms = rms;
    ti__norm_bcast(j.x, j.scale, j.ss);
    if (j.bias != NULL) ti__norm_bcast(j.x, j.bias, j.bs);
    /* fast: parameters vary along the normalised dims only, and along all of them */
    j.fast = ti__numel(j.scale) == j.inner && (j.bias == NULL || ti__numel(j.bias) == j.inner);
    for (int d = 0; d < axis && j.fast; d++)
        if (j.ss[d] != 0 || (j.bias != NULL && j.bs[d] != 0)) j.fast = 0;
    size_t lines = j.inner ? ti__numel(j.x) / j.inner : 0;
    ti__parallel_for(k->tp, lines, TI__MAX((size_t)1, 16384 / (j.inner + 1)), ti__ln_lines, &j);
    return TI_OK;
}
TI__PRIVATE ti_status ti__layernorm_run(ti__kctx *k) {
    return ti__layernorm_run_common(k, 0);
}
TI__PRIVATE ti_status ti__rmsnorm_run(ti__kctx *k) {
    return ti__layernorm_run_common(k, 1);
}

/* ---- LRN ----------------------------------------------------------------------------- */

TI__PRIVATE int ti__lrn_shape(ti__kctx *k) {
    ti_status e = ti__norm_check_x(k, 2);
    if (e != TI_OK) return e;
    if (ti__attr_i(k->node, "size", 0) < 1)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "size is %lld, expected >= 1",
                         (long long)ti__attr_i(k->node, "size", 0));
    return ti__norm_same_shape(k);
}

typedef struct ti__lrn_job {
    const ti_tensor *x;
    ti_tensor *y;
    size_t c, inner;
    int64_t size;
    double alpha, beta, bias;
} ti__lrn_job;

TI__PRIVATE void ti__lrn_planes(void *ctx, size_t begin, size_t end) {
    const ti__lrn_job *j = (const ti__lrn_job *)ctx;
    int64_t lo_off = (j->size - 1) / 2, hi_off = j->size / 2; /* floor and ceil of (size-1)/2 */
    for (size_t pl = begin; pl < end; pl++) {
        int64_t c = (int64_t)(pl % j->c);
        size_t base = (pl - (size_t)c) * j->inner; /* channel 0 of this sample */
        int64_t lo = TI__MAX((int64_t)0, c - lo_off), hi = TI__MIN((int64_t)j->c - 1, c + hi_off);
        for (size_t i = 0; i < j->inner; i++) {
            double sq = 0;
            for (int64_t cc = lo; cc <= hi; cc++) {
                double v = ti__norm_ld(j->x, base + (size_t)cc * j->inner + i);
                sq += v * v;
            }
            size_t e = base + (size_t)c * j->inner + i;
            double den = pow(j->bias + j->alpha / (double)j->size * sq, j->beta);
            ti__norm_st(j->y, e, ti__norm_ld(j->x, e) / den);
        }
    }
}

TI__PRIVATE ti_status ti__lrn_run(ti__kctx *k) {
    ti__lrn_job j;
    j.x = k->in[0];
    j.y = k->out[0];
    j.c = (size_t)j.x->shape[1];
    j.inner = ti__norm_inner(j.x, 2);
    j.size = ti__attr_i(k->node, "size", 1);
    j.alpha = ti__attr_f(k->node, "alpha", 1e-4f);
    j.beta = ti__attr_f(k->node, "beta", 0.75f);
    j.bias = ti__attr_f(k->node, "bias", 1.0f);
    size_t planes = (size_t)j.x->shape[0] * j.c;
    ti__parallel_for(k->tp, planes, TI__MAX((size_t)1, 4096 / (j.inner + 1)), ti__lrn_planes, &j);
    return TI_OK;
}

/* ---- LpNormalization ----------------------------------------------------------------- */

TI__PRIVATE int ti__lpnorm_shape(ti__kctx *k) {
    ti_status e = ti__norm_check_x(k, 1);
    if (e != TI_OK) return e;
    int axis = 0;
    if ((e = ti__norm_axis(k, &axis)) != TI_OK) return e;
    int64_t p = ti__attr_i(k->node, "p", 2);
    if (p != 1 && p != 2)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "p is %lld, only 1 and 2 are defined",
                         (long long)p);
    return ti__norm_same_shape(k);
}

typedef struct ti__lpn_job {
    const ti_tensor *x;
    ti_tensor *y;
    size_t len, inner; /* axis length; elements after the axis (its stride) */
    int p;
} ti__lpn_job;

TI__PRIVATE void ti__lpnorm_lines(void *ctx, size_t begin, size_t end) {
    const ti__lpn_job *j = (const ti__lpn_job *)ctx;
    for (size_t l = begin; l < end; l++) {
        size_t o = (l / j->inner) * j->len * j->inner + l % j->inner;
        double s = 0;
        for (size_t i = 0; i < j->len; i++) {
            double v = ti__norm_ld(j->x, o + i * j->inner);
            s += j->p == 1 ? fabs(v) : v * v;
        }
        double norm = j->p == 1 ? s : sqrt(s);
        for (size_t i = 0; i < j->len; i++) {
            size_t e = o + i * j->inner;
            ti__norm_st(j->y, e, norm == 0.0 ? 0.0 : ti__norm_ld(j->x, e) / norm);
        }
    }
}

TI__PRIVATE ti_status ti__lpnorm_run(ti__kctx *k) {
    int axis = 0;
    ti_status e = ti__norm_axis(k, &axis);
    if (e != TI_OK) return e;
    ti__lpn_job j;
    j.x = k->in[0];
    j.y = k->out[0];
    j.len = (size_t)j.x->shape[axis];
    j.inner = ti__norm_inner(j.x, axis + 1);
    j.p = (int)ti__attr_i(k->node, "p", 2);
    size_t lines = j.len ? ti__numel(j.x) / j.len : 0;
    ti__parallel_for(k->tp, lines, TI__MAX((size_t)1, 16384 / (j.len + 1)), ti__lpnorm_lines, &j);
    return TI_OK;
}

/* ---- MeanVarianceNormalization: (X - E[X]) / (sqrt(E[X^2] - E[X]^2) + 1e-9) over axes -- */

typedef struct ti__mvn_job {
    const ti_tensor *x;
    ti_tensor *y;
    int rank;
    unsigned reduced; /* bit per axis */
    size_t red_n;     /* elements reduced per output group */
} ti__mvn_job;

TI__PRIVATE ti_status ti__mvn_axes(ti__kctx *k, unsigned *mask) {
    int r = k->in[0]->rank, cnt;
    const int64_t *ax = ti__attr_ints(k->node, "axes", &cnt);
    static const int64_t def[3] = {0, 2, 3};
    if (ax == NULL) {
        ax = def;
        cnt = 3;
    }
    *mask = 0;
    for (int i = 0; i < cnt; i++) {
        int64_t a = ax[i] < 0 ? ax[i] + r : ax[i];
        if (a < 0 || a >= r)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "axis %lld is out of range for rank %d",
                             (long long)ax[i], r);
        *mask |= 1u << a;
    }
    return TI_OK;
}

TI__PRIVATE int ti__mvn_shape(ti__kctx *k) {
    ti_status e = ti__norm_check_x(k, 1);
    if (e != TI_OK) return e;
    unsigned mask;
    if ((e = ti__mvn_axes(k, &mask)) != TI_OK) return e;
    return ti__norm_same_shape(k);
}

/* Offset of the g-th kept position plus the t-th reduced position. */
TI__PRIVATE size_t ti__mvn_off(const ti__mvn_job *j, size_t g, size_t t) {
    size_t off = 0, mul = 1;
    for (int d = j->rank - 1; d >= 0; d--) {
        size_t dim = (size_t)j->x->shape[d], c;
        if (j->reduced & (1u << d)) {
            c = t % dim;
            t /= dim;
        } else {
            c = g % dim;
            g /= dim;
        }
        off += c * mul;
        mul *= dim;
    }
    return off;
}

TI__PRIVATE void ti__mvn_groups(void *ctx, size_t begin, size_t end) {
    const ti__mvn_job *j = (const ti__mvn_job *)ctx;
    for (size_t g = begin; g < end; g++) {
        double s = 0, q = 0;
        for (size_t t = 0; t < j->red_n; t++) {
            double v = ti__norm_ld(j->x, ti__mvn_off(j, g, t));
            s += v;
            q += v * v;
        }
        double mean = s / (double)j->red_n, var = q / (double)j->red_n - mean * mean;
        double den = sqrt(var > 0 ? var : 0) + 1e-9;
        for (size_t t = 0; t < j->red_n; t++) {
            size_t e = ti__mvn_off(j, g, t);
            ti__norm_st(j->y, e, (ti__norm_ld(j->x, e) - mean) / den);
        }
    }
}

TI__PRIVATE ti_status ti__mvn_run(ti__kctx *k) {
    ti__mvn_job j;
    j.x = k->in[0];
    j.y = k->out[0];
    j.rank = j.x->rank;
    ti_status e = ti__mvn_axes(k, &j.reduced);
    if (e != TI_OK) return e;
    j.red_n = 1;
    size_t groups = 1;
    for (int d = 0; d < j.rank; d++) {
        if (j.reduced & (1u << d)) j.red_n *= (size_t)j.x->shape[d];
        else groups *= (size_t)j.x->shape[d];
    }
    if (j.red_n == 0 || ti__numel(j.x) == 0) return TI_OK;
    ti__parallel_for(k->tp, groups, TI__MAX((size_t)1, 16384 / (j.red_n + 1)), ti__mvn_groups, &j);
    return TI_OK;
}

TI__PRIVATE const ti__op ti__ops_norm[] = {
    {"BatchNormalization", ti__bn_shape, ti__bn_run, NULL, 0},
    {"InstanceNormalization", ti__instnorm_shape, ti__instnorm_run, NULL, 0},
    {"LayerNormalization", ti__layernorm_shape, ti__layernorm_run, NULL, 0},
    {"GroupNormalization", ti__groupnorm_shape, ti__groupnorm_run, NULL, 0},
    {"RMSNormalization", ti__rmsnorm_shape, ti__rmsnorm_run, NULL, 0},
    {"LRN", ti__lrn_shape, ti__lrn_run, NULL, 0},
    {"LpNormalization", ti__lpnorm_shape, ti__lpnorm_run, NULL, 0},
    {"MeanVarianceNormalization", ti__mvn_shape, ti__mvn_run, NULL, 0},
    {NULL, NULL, NULL, NULL, 0}
};
