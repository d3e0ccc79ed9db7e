/* Reductions and scans: Reduce* (ten kinds), ArgMax / ArgMin, Softmax / LogSoftmax / Hardmax,
 * CumSum / CumProd and TopK. Scalar reference kernels over any numeric dtype: float types
 * accumulate in double, integer types in int64 (exact, wrapping on overflow as numpy does).
 * Relies on internal.h and the element helpers of core/tensor.c. Must not allocate in a run
 * function: TopK sorts, and Softmax keeps per-column sums, in the scratch they ask for. */

/* ---- shared helpers ------------------------------------------------------------------ */

/* Normalises axis a of a rank-r tensor to [0, r); returns -1 when out of range. */
TI__PRIVATE int ti__red_axis(int64_t a, int r) {
    if (a < -(int64_t)r || a >= (int64_t)r) return -1;
    return (int)(a < 0 ? a + r : a);
}

/* Loads n elements starting at element off, stride elements apart, as double. */
TI__PRIVATE void ti__red_load_f64(const ti_tensor *t, size_t off, int64_t stride, size_t n,
                                  double *buf) {
    size_t s = (size_t)stride;
    switch (t->dtype) {
    case TI_DTYPE_F32: {
        const float *p = (const float *)t->data + off;
        for (size_t i = 0; i < n; i++) buf[i] = p[i * s];
        break;
    }
    case TI_DTYPE_F64: {
        const double *p = (const double *)t->data + off;
        for (size_t i = 0; i < n; i++) buf[i] = p[i * s];
        break;
    }
    default:
        for (size_t i = 0; i < n; i++) buf[i] = ti__get_f64(t, off + i * s);
        break;
    }
}

/* Loads n elements as int64 (uint64 wraps above INT64_MAX). */
TI__PRIVATE void ti__red_load_i64(const ti_tensor *t, size_t off, int64_t stride, size_t n,
                                  int64_t *buf) {
    size_t s = (size_t)stride;
    switch (t->dtype) {
    case TI_DTYPE_I64: {
        const int64_t *p = (const int64_t *)t->data + off;
        for (size_t i = 0; i < n; i++) buf[i] = p[i * s];
        break;
    }
    case TI_DTYPE_I32: {
        const int32_t *p = (const int32_t *)t->data + off;
        for (size_t i = 0; i < n; i++) buf[i] = p[i * s];
        break;
    }
    default:
        for (size_t i = 0; i < n; i++) buf[i] = ti__get_i64(t, off + i * s);
        break;
    }
}

/* Smallest and largest value of an integer dtype (bool: 0 and 1). */
TI__PRIVATE void ti__red_int_range(ti_dtype dt, int64_t *lo, int64_t *hi) {
    switch (dt) {
    case TI_DTYPE_I8: *lo = INT8_MIN; *hi = INT8_MAX; break;
    case TI_DTYPE_U8: *lo = 0; *hi = UINT8_MAX; break;
    case TI_DTYPE_I16: *lo = INT16_MIN; *hi = INT16_MAX; break;
    case TI_DTYPE_U16: *lo = 0; *hi = UINT16_MAX; break;
    case TI_DTYPE_I32: *lo = INT32_MIN; *hi = INT32_MAX; break;
    case TI_DTYPE_U32: *lo = 0; *hi = UINT32_MAX; break;
    case TI_DTYPE_U64: *lo = 0; *hi = -1; break; /* UINT64_MAX, stored through int64 */
    case TI_DTYPE_BOOL: *lo = 0; *hi = 1; break;
    default: *lo = INT64_MIN; *hi = INT64_MAX; break;
    }
}

TI__PRIVATE int ti__red_numeric(ti_dtype dt) {
    return ti__dtype_is_float(dt) || ti__dtype_is_int(dt);
}

/* ---- Reduce* ---------------------------------------------------------------------------- */

typedef enum ti__red_kind {
    TI__RED_SUM,
    TI__RED_MEAN,
    TI__RED_MAX,
    TI__RED_MIN,
    TI__RED_PROD,
    TI__RED_L1,
    TI__RED_L2,
    TI__RED_LOGSUM,
    TI__RED_LOGSUMEXP,
    TI__RED_SUMSQUARE
} ti__red_kind;

TI__PRIVATE int ti__red_kind_of(const char *op) {
    static const char *const names[] = {"ReduceSum", "ReduceMean", "ReduceMax",
                                        "ReduceMin", "ReduceProd", "ReduceL1",
                                        "ReduceL2",  "ReduceLogSum", "ReduceLogSumExp",
                                        "ReduceSumSquare"};
    for (int i = 0; i < (int)TI__COUNTOF(names); i++)
        if (strcmp(op, names[i]) == 0) return i;
    return TI__RED_SUM;
}

/* The input seen as kept and reduced dim groups (adjacent dims of one kind merged, size-1
 * dims dropped), each with its stride in elements. Output order = kept dims in order. */
typedef struct ti__rplan {
    int nk, nr;
    int64_t kdim[TI_MAX_DIMS], kstr[TI_MAX_DIMS];
    int64_t rdim[TI_MAX_DIMS], rstr[TI_MAX_DIMS];
    size_t n_out, n_red;
} ti__rplan;

TI__PRIVATE void ti__rplan_make(int rank, const int64_t *dims, unsigned mask, ti__rplan *p) {
    int64_t str[TI_MAX_DIMS];
    ti__strides(rank, dims, str);
    memset(p, 0, sizeof *p);
    p->n_out = 1;
    p->n_red = 1;
    int last = -1; /* kind of the previous group: 0 kept, 1 reduced */
    for (int i = 0; i < rank; i++) {
        int red = (int)((mask >> i) & 1u);
        if (red) p->n_red *= (size_t)dims[i];
        else p->n_out *= (size_t)dims[i];
        if (dims[i] == 1) continue;
        int64_t *gd = red ? p->rdim : p->kdim, *gs = red ? p->rstr : p->kstr;
        int *gn = red ? &p->nr : &p->nk;
        if (last == red && *gn > 0) { /* merge: row-major, so the groups are contiguous */
            gd[*gn - 1] *= dims[i];
            gs[*gn - 1] = str[i];
        } else {
            gd[*gn] = dims[i];
            gs[*gn] = str[i];
            (*gn)++;
        }
        last = red;
    }
}

/* Reads the reduction axes (attribute before opset 13 for ReduceSum and 18 for the others,
 * an optional int64 input from then on) into a bit mask over the input's dims. */
TI__PRIVATE int ti__red_mask(ti__kctx *k, int rank, unsigned *mask) {
    const ti__node *n = k->node;
    int from_input = (strcmp(n->op, "ReduceSum") == 0) ? k->opset >= 13 : k->opset >= 18;
    int64_t noop = ti__attr_i(n, "noop_with_empty_axes", 0);
    const int64_t *attr_axes = NULL;
    int count = 0;
    const ti_tensor *ax = (k->n_in > 1) ? k->in[1] : NULL;
    if (from_input && ax != NULL) {
        TI__NEED(k, ax);
        if (ax->dtype != TI_DTYPE_I64 && ax->dtype != TI_DTYPE_I32)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "axes input has dtype %s, expected int64",
                             ti_dtype_name(ax->dtype));
        if (ax->rank > 1)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "axes input has rank %d, expected 1",
                             ax->rank);
        count = (int)TI__MIN(ti__numel(ax), (size_t)INT_MAX);
    } else {
        attr_axes = ti__attr_ints(n, "axes", &count);
        ax = NULL;
    }
    if (count == 0) {
        *mask = noop ? 0u : (rank >= 32 ? 0xffffffffu : ((1u << rank) - 1u));
        return TI_OK;
    }
    if (count > rank)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "%d axes given for an input of rank %d", count,
                         rank);
    unsigned m = 0;
    for (int i = 0; i < count; i++) {
        int64_t v = ax ? ti__get_i64(ax, (size_t)i) : attr_axes[i];
        int a = ti__red_axis(v, rank);
        if (a < 0)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "axis %lld out of range for rank %d",
                             (long long)v, rank);
        if (m & (1u << a))
            return ti__kfail(k, TI_ERR_BAD_MODEL, "axis %lld repeated in axes", (long long)v);
        m |= 1u << a;
    }
    *mask = m;
    return TI_OK;
}

TI__PRIVATE int ti__reduce_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    const ti_tensor *x = k->in[0];
    int kind = ti__red_kind_of(k->node->op);
    int bool_ok = kind == TI__RED_MAX || kind == TI__RED_MIN;
    if (!ti__red_numeric(x->dtype) && !(bool_ok && x->dtype == TI_DTYPE_BOOL))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "input dtype %s is not supported",
                         ti_dtype_name(x->dtype));
    unsigned mask;
    int st = ti__red_mask(k, x->rank, &mask);
    if (st != TI_OK) return st;
    int keep = ti__attr_i(k->node, "keepdims", 1) != 0;
    int64_t dims[TI_MAX_DIMS];
    int r = 0;
    for (int i = 0; i < x->rank; i++) {
        if (!((mask >> i) & 1u)) dims[r++] = x->shape[i];
        else if (keep) dims[r++] = 1;
    }
    if (!ti__set_shape(k->out[0], x->dtype, r, dims))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid output shape");
    return TI_OK;
}

typedef struct ti__red_job {
    const ti_tensor *x;
    ti_tensor *y;
    const ti__rplan *p;
    int kind;
} ti__red_job;

/* Rows (the innermost reduced group) are loaded into a stack buffer this many at a time. */
#define TI__RED_CHUNK 256

/* Input offset of reduced row number `row` of the output element whose first input element is
 * at offset base: row enumerates the outer reduced groups, row-major. */
TI__PRIVATE size_t ti__red_row_start(const ti__rplan *p, size_t base, size_t row) {
    size_t off = base;
    for (int d = p->nr - 2; d >= 0; d--) {
        size_t i = row % (size_t)p->rdim[d];
        row /= (size_t)p->rdim[d];
        off += i * (size_t)p->rstr[d];
    }
    return off;
}

/* Float reduction of one output element; accumulates in double. */
TI__PRIVATE double ti__red_one_f64(const ti__red_job *j, size_t base) {
    const ti__rplan *p = j->p;
    double buf[TI__RED_CHUNK];
    size_t len = p->nr > 0 ? (size_t)p->rdim[p->nr - 1] : 1;
    int64_t stride = p->nr > 0 ? p->rstr[p->nr - 1] : 1;
    size_t rows = len > 0 ? p->n_red / len : 0;
    int kind = j->kind;
    if (p->n_red == 0) {
        switch (kind) {
        case TI__RED_MAX: case TI__RED_LOGSUM: case TI__RED_LOGSUMEXP: return -INFINITY;
        case TI__RED_MIN: return INFINITY;
        case TI__RED_PROD: return 1.0;
        case TI__RED_MEAN: return NAN;
        default: return 0.0;
        }
    }
    double mx = -INFINITY;
    if (kind == TI__RED_LOGSUMEXP) { /* first pass: the max, for a stable exp */
        for (size_t r = 0; r < rows; r++) {
            size_t off = ti__red_row_start(p, base, r);
            for (size_t c = 0; c < len; c += TI__RED_CHUNK) {
                size_t n = TI__MIN(len - c, (size_t)TI__RED_CHUNK);
                ti__red_load_f64(j->x, off + c * (size_t)stride, stride, n, buf);
                for (size_t i = 0; i < n; i++)
                    if (buf[i] > mx || buf[i] != buf[i]) mx = buf[i];
            }
        }
        if (mx == INFINITY || mx == -INFINITY) mx = 0.0; /* exp(inf - inf) would be NaN */
    }
    double acc;
    switch (kind) {
    case TI__RED_MAX: acc = -INFINITY; break;
    case TI__RED_MIN: acc = INFINITY; break;
    case TI__RED_PROD: acc = 1.0; break;
    default: acc = 0.0; break;
    }
    for (size_t r = 0; r < rows; r++) {
        size_t off = ti__red_row_start(p, base, r);
        for (size_t c = 0; c < len; c += TI__RED_CHUNK) {
            size_t n = TI__MIN(len - c, (size_t)TI__RED_CHUNK);
            ti__red_load_f64(j->x, off + c * (size_t)stride, stride, n, buf);
            switch (kind) {
            case TI__RED_MAX: /* NaN propagates, as numpy's maximum */
                for (size_t i = 0; i < n; i++)
                    if (buf[i] > acc || buf[i] != buf[i]) acc = buf[i];
                break;
            case TI__RED_MIN:
                for (size_t i = 0; i < n; i++)
                    if (buf[i] < acc || buf[i] != buf[i]) acc = buf[i];
                break;
            case TI__RED_PROD:
                for (size_t i = 0; i < n; i++) acc *= buf[i];
                break;
            case TI__RED_L1:
                for (size_t i = 0; i < n; i++) acc += fabs(buf[i]);
                break;
            case TI__RED_L2:
            case TI__RED_SUMSQUARE:
                for (size_t i = 0; i < n; i++) acc += buf[i] * buf[i];
                break;
            case TI__RED_LOGSUMEXP:
                for (size_t i = 0; i < n; i++) acc += exp(buf[i] - mx);
                break;
            default: /* SUM, MEAN, LOGSUM */
                for (size_t i = 0; i < n; i++) acc += buf[i];
                break;
            }
        }
    }
    switch (kind) {
    case TI__RED_MEAN: return acc / (double)p->n_red;
    case TI__RED_L2: return sqrt(acc);
    case TI__RED_LOGSUM: return log(acc);
    case TI__RED_LOGSUMEXP: return log(acc) + mx;
    default: return acc;
    }
}

/* Integer reduction of one output element (SUM, MEAN, MAX, MIN, PROD, L1, SUMSQUARE):
 * exact in int64, wrapping like numpy on overflow (done in unsigned arithmetic). */
TI__PRIVATE int64_t ti__red_one_i64(const ti__red_job *j, size_t base) {
    const ti__rplan *p = j->p;
    int64_t buf[TI__RED_CHUNK];
    size_t len = p->nr > 0 ? (size_t)p->rdim[p->nr - 1] : 1;
    int64_t stride = p->nr > 0 ? p->rstr[p->nr - 1] : 1;
    size_t rows = len > 0 ? p->n_red / len : 0;
    int64_t lo, hi;
    ti__red_int_range(j->x->dtype, &lo, &hi);
    int kind = j->kind;
    int unsig = j->x->dtype == TI_DTYPE_U64;
    uint64_t acc;
    switch (kind) {
    case TI__RED_MAX: acc = (uint64_t)lo; break;
    case TI__RED_MIN: acc = (uint64_t)hi; break;
    case TI__RED_PROD: acc = 1; break;
    default: acc = 0; break;
    }
    for (size_t r = 0; r < rows; r++) {
        size_t off = ti__red_row_start(p, base, r);
        for (size_t c = 0; c < len; c += TI__RED_CHUNK) {
            size_t n = TI__MIN(len - c, (size_t)TI__RED_CHUNK);
            ti__red_load_i64(j->x, off + c * (size_t)stride, stride, n, buf);
            for (size_t i = 0; i < n; i++) {
                uint64_t v = (uint64_t)buf[i];
                switch (kind) {
                case TI__RED_MAX:
                    if (unsig ? v > acc : (int64_t)v > (int64_t)acc) acc = v;
                    break;
                case TI__RED_MIN:
                    if (unsig ? v < acc : (int64_t)v < (int64_t)acc) acc = v;
                    break;
                case TI__RED_PROD: acc *= v; break;
                case TI__RED_L1: acc += (!unsig && buf[i] < 0) ? (uint64_t)0 - v : v; break;
                case TI__RED_SUMSQUARE: acc += v * v; break;
                default: acc += v; break;
                }
            }
        }
    }
    if (kind == TI__RED_MEAN) {
        if (p->n_red == 0) return 0;
        if (unsig) return (int64_t)(acc / (uint64_t)p->n_red);
        return (int64_t)acc / (int64_t)p->n_red; /* truncates, as numpy's mean then cast */
    }
    return (int64_t)acc;
}

TI__PRIVATE void ti__reduce_range(void *ctx, size_t begin, size_t end) {
    const ti__red_job *j = (const ti__red_job *)ctx;
    const ti__rplan *p = j->p;
    ti_dtype dt = j->x->dtype;
    /* float math for float dtypes and for the kinds that are not closed over integers */
    int use_f64 = ti__dtype_is_float(dt) || j->kind == TI__RED_L2 ||
                  j->kind == TI__RED_LOGSUM || j->kind == TI__RED_LOGSUMEXP;
    /* float32 sums and means of one contiguous run per output (the spatial mean before a
     * classifier, LayerNorm's mean over the last axis): the vector sum of the depthwise ISA
     * table, in float as onnxruntime does; the double loop below took 6x onnxruntime's time
     * on MobileNetV2's head */
    const ti__dw_isa *fsum = NULL;
    if (dt == TI_DTYPE_F32 && (j->kind == TI__RED_SUM || j->kind == TI__RED_MEAN) &&
        p->nr == 1 && p->rstr[0] == 1 && p->n_red > 0)
        fsum = ti__dw_pick_isa();
    for (size_t o = begin; o < end; o++) {
        size_t base = 0, rem = o;
        for (int d = p->nk - 1; d >= 0; d--) {
            base += (rem % (size_t)p->kdim[d]) * (size_t)p->kstr[d];
            rem /= (size_t)p->kdim[d];
        }
        if (fsum != NULL) {
            double v = (double)fsum->sum((const float *)j->x->data + base, p->n_red);
            if (j->kind == TI__RED_MEAN) v /= (double)p->n_red;
            ((float *)j->y->data)[o] = (float)v;
        } else if (use_f64) {
            double v = ti__red_one_f64(j, base);
            if (dt == TI_DTYPE_F32) ((float *)j->y->data)[o] = (float)v;
            else ti__set_f64(j->y, o, v);
        } else {
            ti__set_i64(j->y, o, ti__red_one_i64(j, base));
        }
    }
}

TI__PRIVATE ti_status ti__reduce_run(ti__kctx *k) {
    const ti_tensor *x = k->in[0];
    unsigned mask;
    int st = ti__red_mask(k, x->rank, &mask);
    if (st != TI_OK)
        return st == TI__NEED_VALUE ? ti__kfail(k, TI_ERR_BAD_MODEL, "axes input has no value")
                                    : (ti_status)st;
    ti__rplan p;
    ti__rplan_make(x->rank, x->shape, mask, &p);
    ti__red_job j;
    j.x = x;
    j.y = k->out[0];
    j.p = &p;
    j.kind = ti__red_kind_of(k->node->op);
    if (p.n_out == 0) return TI_OK;
    size_t grain = p.n_red > 0 ? TI__MAX((size_t)1, (size_t)16384 / p.n_red) : 16384;
    ti__parallel_for(k->tp, p.n_out, grain, ti__reduce_range, &j);
    return TI_OK;
}

/* ---- ArgMax / ArgMin ---------------------------------------------------------------------- */

/* Splits a shape at axis into outer * n * inner elements. */
TI__PRIVATE void ti__red_split(const ti_tensor *x, int axis, size_t *outer, size_t *n,
                               size_t *inner) {
    *outer = ti__shape_numel(axis, x->shape);
    *n = (size_t)x->shape[axis];
    *inner = ti__shape_numel(x->rank - axis - 1, x->shape + axis + 1);
}

TI__PRIVATE int ti__argmax_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    const ti_tensor *x = k->in[0];
    if (!ti__red_numeric(x->dtype))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "input dtype %s is not supported",
                         ti_dtype_name(x->dtype));
    int64_t a = ti__attr_i(k->node, "axis", 0);
    int r = x->rank > 0 ? x->rank : 1; /* a scalar reduces like a one-element vector */
    int axis = ti__red_axis(a, r);
    if (axis < 0)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "axis %lld out of range for rank %d",
                         (long long)a, x->rank);
    if (x->rank > 0 && x->shape[axis] == 0) {
        size_t others = 1;
        for (int i = 0; i < x->rank; i++)
            if (i != axis) others *= (size_t)x->shape[i];
        if (others != 0)
            return ti__kfail(k, TI_ERR_INVALID_ARGUMENT,
                             "cannot take %s over axis %d of size 0", k->node->op, axis);
    }
    int keep = ti__attr_i(k->node, "keepdims", 1) != 0;
    int64_t dims[TI_MAX_DIMS];
    int rr = 0;
    for (int i = 0; i < x->rank; i++) {
        if (i != axis) dims[rr++] = x->shape[i];
        else if (keep) dims[rr++] = 1;
    }
    if (!ti__set_shape(k->out[0], TI_DTYPE_I64, rr, dims))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid output shape");
    return TI_OK;
}

TI__PRIVATE ti_status ti__argmax_run(ti__kctx *k) {
    const ti_tensor *x = k->in[0];
    int is_max = strcmp(k->node->op, "ArgMax") == 0;
    int last = ti__attr_i(k->node, "select_last_index", 0) != 0;
    int axis = x->rank > 0 ? ti__red_axis(ti__attr_i(k->node, "axis", 0), x->rank) : 0;
    size_t outer = 1, n = 1, inner = 1;
    if (x->rank > 0) ti__red_split(x, axis, &outer, &n, &inner);
    int64_t *y = (int64_t *)k->out[0]->data;
    int is_f = ti__dtype_is_float(x->dtype), unsig = x->dtype == TI_DTYPE_U64;
    for (size_t o = 0; o < outer; o++) {
        for (size_t i = 0; i < inner; i++) {
            size_t base = o * n * inner + i;
            size_t best = 0;
            if (is_f) {
                /* NaN counts as the extreme value (numpy's argmax / argmin) */
                double bv = 0.0;
                for (size_t j = 0; j < n; j++) {
                    double v = x->dtype == TI_DTYPE_F32
                                   ? (double)((const float *)x->data)[base + j * inner]
                                   : ti__get_f64(x, base + j * inner);
                    int better;
                    if (j == 0) better = 1;
                    else if (bv != bv) better = 0;
                    else if (v != v) better = 1;
                    else if (last) better = is_max ? v >= bv : v <= bv;
                    else better = is_max ? v > bv : v < bv;
                    if (better) { bv = v; best = j; }
                }
            } else {
                int64_t bv = 0;
                for (size_t j = 0; j < n; j++) {
                    int64_t v = ti__get_i64(x, base + j * inner);
                    int gt = unsig ? (uint64_t)v > (uint64_t)bv : v > bv;
                    int lt = unsig ? (uint64_t)v < (uint64_t)bv : v < bv;
                    int better = j == 0 || (is_max ? gt : lt) || (last && v == bv);
                    if (better) { bv = v; best = j; }
                }
            }
            y[o * inner + i] = (int64_t)best;
        }
    }
    return TI_OK;
}

/* ---- CumSum / CumProd ------------------------------------------------------------------- */

TI__PRIVATE int ti__cum_axis(ti__kctx *k, int *axis) {
    const ti_tensor *x = k->in[0], *a = k->in[1];
    if (a->data == NULL) return TI__NEED_VALUE;
    if (!ti__dtype_is_int(a->dtype) || ti__numel(a) != 1)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "axis input must be one int32/int64, got %s with "
                         "%zu elements", ti_dtype_name(a->dtype), ti__numel(a));
    int64_t v = ti__get_i64(a, 0);
    *axis = ti__red_axis(v, x->rank);
    if (*axis < 0)
        return ti__kfail(k, TI_ERR_INVALID_ARGUMENT, "axis %lld out of range for rank %d",
                         (long long)v, x->rank);
    return TI_OK;
}

TI__PRIVATE int ti__cum_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    const ti_tensor *x = k->in[0];
    if (!ti__red_numeric(x->dtype))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "input dtype %s is not supported",
                         ti_dtype_name(x->dtype));
    if (x->rank == 0) return ti__kfail(k, TI_ERR_BAD_MODEL, "input must have rank >= 1");
    if (k->in[1]->data != NULL) { /* the axis is checked early when known */
        int axis, st = ti__cum_axis(k, &axis);
        if (st != TI_OK) return st;
    }
    if (!ti__set_shape(k->out[0], x->dtype, x->rank, x->shape))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid output shape");
    return TI_OK;
}

TI__PRIVATE ti_status ti__cum_run(ti__kctx *k) {
    const ti_tensor *x = k->in[0];
    ti_tensor *y = k->out[0];
    int axis, st = ti__cum_axis(k, &axis);
    if (st != TI_OK)
        return st == TI__NEED_VALUE ? ti__kfail(k, TI_ERR_BAD_MODEL, "axis input has no value")
                                    : (ti_status)st;
    int prod = strcmp(k->node->op, "CumProd") == 0;
    int excl = ti__attr_i(k->node, "exclusive", 0) != 0;
    int rev = ti__attr_i(k->node, "reverse", 0) != 0;
    size_t outer, n, inner;
    ti__red_split(x, axis, &outer, &n, &inner);
    int is_f = ti__dtype_is_float(x->dtype);
    for (size_t o = 0; o < outer; o++) {
        for (size_t i = 0; i < inner; i++) {
            double fa = prod ? 1.0 : 0.0;
            uint64_t ia = prod ? 1u : 0u; /* integer scan wraps as numpy does */
            for (size_t s = 0; s < n; s++) {
                size_t j = rev ? n - 1 - s : s;
                size_t e = (o * n + j) * inner + i;
                if (is_f) {
                    double v = x->dtype == TI_DTYPE_F32 ? (double)((const float *)x->data)[e]
                                                       : ti__get_f64(x, e);
                    if (excl) ti__set_f64(y, e, fa);
                    fa = prod ? fa * v : fa + v;
                    if (!excl) ti__set_f64(y, e, fa);
                } else {
                    uint64_t v = (uint64_t)ti__get_i64(x, e);
                    if (excl) ti__set_i64(y, e, (int64_t)ia);
                    ia = prod ? ia * v : ia + v;
                    if (!excl) ti__set_i64(y, e, (int64_t)ia);
                }
            }
        }
    }
    return TI_OK;
}

/* ---- TopK ----------------------------------------------------------------------------- */

/* Reads K (the second input from opset 10, the attribute k before) and the axis. */
TI__PRIVATE int ti__topk_params(ti__kctx *k, int64_t *kk, int *axis) {
    const ti_tensor *x = k->in[0];
    int64_t a = ti__attr_i(k->node, "axis", -1);
    *axis = ti__red_axis(a, x->rank);
    if (*axis < 0)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "axis %lld out of range for rank %d",
                         (long long)a, x->rank);
    int64_t dim = x->shape[*axis];
    if (k->opset < 10 || k->n_in < 2 || k->in[1] == NULL) {
        if (ti__attr_get(k->node, "k") == NULL)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "K is neither an input nor an attribute");
        *kk = ti__attr_i(k->node, "k", 0);
        if (*kk < 0 || *kk > dim)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "k = %lld is outside [0, %lld]",
                             (long long)*kk, (long long)dim);
        return TI_OK;
    }
    const ti_tensor *kt = k->in[1];
    if (kt->data == NULL) return TI__NEED_VALUE;
    if (!ti__dtype_is_int(kt->dtype) || ti__numel(kt) != 1)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "K must be one int64, got %s with %zu elements",
                         ti_dtype_name(kt->dtype), ti__numel(kt));
    *kk = ti__get_i64(kt, 0);
    if (*kk < 0 || *kk > dim)
        return ti__kfail(k, TI_ERR_INVALID_ARGUMENT, "K = %lld is outside [0, %lld] (axis %d)",
                         (long long)*kk, (long long)dim, *axis);
    return TI_OK;
}

TI__PRIVATE int ti__topk_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    const ti_tensor *x = k->in[0];
    if (!ti__red_numeric(x->dtype))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "input dtype %s is not supported",
                         ti_dtype_name(x->dtype));
    if (x->rank == 0) return ti__kfail(k, TI_ERR_BAD_MODEL, "input must have rank >= 1");
    int64_t kk;
    int axis;
    int st = ti__topk_params(k, &kk, &axis);
    if (st != TI_OK) return st;
    int64_t dims[TI_MAX_DIMS];
    memcpy(dims, x->shape, sizeof(int64_t) * (size_t)x->rank);
    dims[axis] = kk;
    if (!ti__set_shape(k->out[0], x->dtype, x->rank, dims))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid output shape");
    if (k->n_out > 1 && k->out[1] != NULL && !ti__set_shape(k->out[1], TI_DTYPE_I64, x->rank, dims))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid output shape");
    return TI_OK;
}

/* Scratch: per slice, n sort keys (8 bytes) and two index arrays of n int64. */
TI__PRIVATE size_t ti__topk_scratch(ti__kctx *k) {
    const ti_tensor *x = k->in[0];
    int axis = ti__red_axis(ti__attr_i(k->node, "axis", -1), x->rank);
    if (axis < 0) return 0;
    size_t n = (size_t)x->shape[axis], b;
    if (!ti__mul_size(n, 24, &b)) return SIZE_MAX;
    return b;
}

/* Sort keys: floats as double (NaN ranks above +inf, as numpy's sort puts it last), integers
 * as int64 with uint64 offset into signed order. */
typedef struct ti__topk_keys {
    const double *f;
    const int64_t *i;
    int largest;
} ti__topk_keys;

/* 1 when element a must come strictly before element b. */
TI__PRIVATE int ti__topk_before(const ti__topk_keys *kk, int64_t a, int64_t b) {
    if (kk->f) {
        double va = kk->f[a], vb = kk->f[b];
        int na = va != va, nb = vb != vb;
        if (na || nb) return kk->largest ? (na && !nb) : (!na && nb);
        return kk->largest ? va > vb : va < vb;
    }
    return kk->largest ? kk->i[a] > kk->i[b] : kk->i[a] < kk->i[b];
}

/* Stable bottom-up merge sort of idx[0..n) (tmp: n more): equal keys keep index order, which
 * is the ONNX tie rule (lower index first). */
TI__PRIVATE void ti__topk_sort(const ti__topk_keys *kk, int64_t *idx, int64_t *tmp, size_t n) {
    int64_t *src = idx, *dst = tmp;
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = TI__MIN(lo + w, n), hi = TI__MIN(lo + 2 * w, n);
            size_t a = lo, b = mid, o = lo;
            while (a < mid && b < hi)
                dst[o++] = ti__topk_before(kk, src[b], src[a]) ? src[b++] : src[a++];
            while (a < mid) dst[o++] = src[a++];
            while (b < hi) dst[o++] = src[b++];
        }
        int64_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != idx) memcpy(idx, src, n * sizeof(int64_t));
}

TI__PRIVATE ti_status ti__topk_run(ti__kctx *k) {
    const ti_tensor *x = k->in[0];
    int64_t kk;
    int axis;
    int st = ti__topk_params(k, &kk, &axis);
    if (st != TI_OK)
        return st == TI__NEED_VALUE ? ti__kfail(k, TI_ERR_BAD_MODEL, "K has no value")
                                    : (ti_status)st;
    size_t outer, n, inner;
    ti__red_split(x, axis, &outer, &n, &inner);
    if (k->scratch_bytes < n * 24)
        return ti__kfail(k, TI_ERR_INVALID_ARGUMENT, "scratch of %zu bytes, need %zu",
                         k->scratch_bytes, n * 24);
    ti__topk_keys keys;
    keys.largest = ti__attr_i(k->node, "largest", 1) != 0;
    double *kf = (double *)k->scratch;
    int64_t *ki = (int64_t *)k->scratch;
    int is_f = ti__dtype_is_float(x->dtype);
    keys.f = is_f ? kf : NULL;
    keys.i = is_f ? NULL : ki;
    int64_t *idx = (int64_t *)k->scratch + n, *tmp = idx + n;
    ti_tensor *yv = k->out[0], *yi = (k->n_out > 1) ? k->out[1] : NULL;
    size_t kn = (size_t)kk;
    for (size_t o = 0; o < outer; o++) {
        for (size_t i = 0; i < inner; i++) {
            size_t base = o * n * inner + i;
            if (is_f) ti__red_load_f64(x, base, (int64_t)inner, n, kf);
            else {
                ti__red_load_i64(x, base, (int64_t)inner, n, ki);
                if (x->dtype == TI_DTYPE_U64) /* unsigned order as signed order */
                    for (size_t j = 0; j < n; j++) ki[j] = (int64_t)((uint64_t)ki[j] ^ ((uint64_t)1 << 63));
            }
            for (size_t j = 0; j < n; j++) idx[j] = (int64_t)j;
            ti__topk_sort(&keys, idx, tmp, n);
            size_t obase = o * kn * inner + i;
            for (size_t j = 0; j < kn; j++) {
                size_t src = base + (size_t)idx[j] * inner, dst = obase + j * inner;
                if (yv != NULL) {
                    size_t es = ti_dtype_size(x->dtype);
                    memcpy((char *)yv->data + dst * es, (const char *)x->data + src * es, es);
                }
                if (yi != NULL) ((int64_t *)yi->data)[dst] = idx[j];
            }
        }
    }
    return TI_OK;
}

/* ---- Softmax / LogSoftmax / Hardmax ------------------------------------------------------ */

typedef enum { TI__SM_SOFT, TI__SM_LOG, TI__SM_HARD } ti__sm_kind;

/* Before opset 13 the input is coerced to 2-D [prod(dims[:axis]), prod(dims[axis:])] and the
 * op runs over the second dim (default axis 1); from 13 it runs over one axis (default -1).
 * Output: outer rows of n elements, inner apart. */
TI__PRIVATE int ti__sm_layout(ti__kctx *k, size_t *outer, size_t *n, size_t *inner) {
    const ti_tensor *x = k->in[0];
    int old = k->opset < 13;
    int64_t a = ti__attr_i(k->node, "axis", old ? 1 : -1);
    int r = x->rank;
    int axis = (old && a == r) ? r : ti__red_axis(a, r); /* axis == rank: n = 1 (old form) */
    if (axis < 0)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "axis %lld out of range for rank %d",
                         (long long)a, r);
    *outer = ti__shape_numel(axis, x->shape);
    if (old) {
        *n = ti__shape_numel(r - axis, x->shape + axis);
        *inner = 1;
    } else {
        *n = (size_t)x->shape[axis];
        *inner = ti__shape_numel(r - axis - 1, x->shape + axis + 1);
    }
    return TI_OK;
}

TI__PRIVATE int ti__sm_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    const ti_tensor *x = k->in[0];
    if (!ti__dtype_is_float(x->dtype))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "input dtype %s is not supported (float only)",
                         ti_dtype_name(x->dtype));
    size_t outer, n, inner;
    int st = ti__sm_layout(k, &outer, &n, &inner);
    if (st != TI_OK) return st;
    if (!ti__set_shape(k->out[0], x->dtype, x->rank, x->shape))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid output shape");
    return TI_OK;
}

/* float32 columns (inner > 1): two float arrays of inner elements for the max and the sum. */
TI__PRIVATE size_t ti__sm_scratch(ti__kctx *k) {
    size_t outer, n, inner, b;
    if (k->in[0]->dtype != TI_DTYPE_F32 || ti__sm_layout(k, &outer, &n, &inner) != TI_OK ||
        inner <= 1)
        return 0;
    if (!ti__mul_size(inner, 2 * sizeof(float), &b)) return SIZE_MAX;
    return b;
}

typedef struct ti__sm_job {
    const float *x;
    float *y;
    size_t n;
    int kind;
} ti__sm_job;

/* float32, contiguous rows [begin, end) of n elements; subtracts the row max (stable). */
TI__PRIVATE void ti__sm_rows_f32(void *ctx, size_t begin, size_t end) {
    const ti__sm_job *j = (const ti__sm_job *)ctx;
    size_t n = j->n;
#ifdef TI__X86_SIMD
    int isa = j->kind == TI__SM_HARD ? 0 : ti__cpu_isa();
    if (isa >= TI__ISA_AVX2) {
        void (*row)(const float *, float *, size_t, int) =
            isa >= TI__ISA_AVX512 ? ti__softmax_row_avx512 : ti__softmax_row_avx2;
        for (size_t r = begin; r < end; r++)
            row(j->x + r * n, j->y + r * n, n, j->kind == TI__SM_LOG);
        return;
    }
#endif
    for (size_t r = begin; r < end; r++) {
        const float *x = j->x + r * n;
        float *y = j->y + r * n;
        float mx = x[0];
        size_t am = 0;
        for (size_t i = 1; i < n; i++)
            if (x[i] > mx) { mx = x[i]; am = i; }
        if (j->kind == TI__SM_HARD) {
            for (size_t i = 0; i < n; i++) y[i] = i == am ? 1.0f : 0.0f;
            continue;
        }
        double sum = 0.0;
        if (j->kind == TI__SM_SOFT) {
            for (size_t i = 0; i < n; i++) {
                float e = expf(x[i] - mx);
                y[i] = e;
                sum += e;
            }
            float inv = (float)(1.0 / sum);
            for (size_t i = 0; i < n; i++) y[i] *= inv;
        } else {
            for (size_t i = 0; i < n; i++) sum += expf(x[i] - mx);
            float ls = (float)log(sum);
            for (size_t i = 0; i < n; i++) y[i] = x[i] - mx - ls;
        }
    }
}

/* float32 columns: element (o, j, i) at (o * n + j) * inner + i; scratch holds the running max
 * and sum of each of the inner columns, so the rows are read in memory order. */
TI__PRIVATE void ti__sm_cols_f32(const float *x0, float *y0, size_t outer, size_t n, size_t inner,
                                 int kind, float *mx, float *sum) {
    for (size_t o = 0; o < outer; o++) {
        const float *x = x0 + o * n * inner;
        float *y = y0 + o * n * inner;
        for (size_t i = 0; i < inner; i++) mx[i] = x[i];
        for (size_t j = 1; j < n; j++)
            for (size_t i = 0; i < inner; i++)
                if (x[j * inner + i] > mx[i]) mx[i] = x[j * inner + i];
        for (size_t i = 0; i < inner; i++) sum[i] = 0.0f;
        for (size_t j = 0; j < n; j++)
            for (size_t i = 0; i < inner; i++) {
                float e = expf(x[j * inner + i] - mx[i]);
                if (kind == TI__SM_SOFT) y[j * inner + i] = e;
                sum[i] += e;
            }
        if (kind == TI__SM_SOFT) {
            for (size_t i = 0; i < inner; i++) sum[i] = 1.0f / sum[i];
            for (size_t j = 0; j < n; j++)
                for (size_t i = 0; i < inner; i++) y[j * inner + i] *= sum[i];
        } else {
            for (size_t i = 0; i < inner; i++) sum[i] = mx[i] + logf(sum[i]);
            for (size_t j = 0; j < n; j++)
                for (size_t i = 0; i < inner; i++) y[j * inner + i] = x[j * inner + i] - sum[i];
        }
    }
}

/* Rounds v to the precision of a half type. */
TI__PRIVATE float ti__sm_round(ti_dtype dt, float v) {
    return dt == TI_DTYPE_F16 ? ti__f16_to_f32(ti__f32_to_f16(v))
                              : ti__bf16_to_f32(ti__f32_to_bf16(v));
}

/* Softmax of float16 / bfloat16 in float with every step rounded to the type, as numpy does
 * on these types (the ONNX reference outputs are made that way): x - max, exp and the
 * quotient each round; the float16 sum accumulates in float, the bfloat16 one rounds at each
 * addition (ml_dtypes). */
TI__PRIVATE void ti__sm_half(const ti_tensor *x, ti_tensor *y, size_t outer, size_t n,
                             size_t inner) {
    ti_dtype dt = x->dtype;
    for (size_t o = 0; o < outer; o++) {
        for (size_t i = 0; i < inner; i++) {
            size_t base = o * n * inner + i;
            float mx = (float)ti__get_f64(x, base);
            for (size_t j = 1; j < n; j++) {
                float v = (float)ti__get_f64(x, base + j * inner);
                if (v > mx) mx = v;
            }
            float sum = 0.0f;
            for (size_t j = 0; j < n; j++) {
                size_t e = base + j * inner;
                float ev = ti__sm_round(dt, expf(ti__sm_round(dt, (float)ti__get_f64(x, e) - mx)));
                ti__set_f64(y, e, ev);
                sum = dt == TI_DTYPE_BF16 ? ti__sm_round(dt, sum + ev) : sum + ev;
            }
            sum = ti__sm_round(dt, sum);
            for (size_t j = 0; j < n; j++) {
                size_t e = base + j * inner;
                ti__set_f64(y, e, (double)((float)ti__get_f64(y, e) / sum));
            }
        }
    }
}

TI__PRIVATE ti_status ti__sm_run(ti__kctx *k) {
    const ti_tensor *x = k->in[0];
    ti_tensor *y = k->out[0];
    size_t outer, n, inner;
    int st = ti__sm_layout(k, &outer, &n, &inner);
    if (st != TI_OK) return (ti_status)st;
    const char *op = k->node->op;
    int kind = strcmp(op, "Softmax") == 0 ? TI__SM_SOFT
               : strcmp(op, "LogSoftmax") == 0 ? TI__SM_LOG : TI__SM_HARD;
    if (n == 0 || outer == 0 || inner == 0) return TI_OK;
    if (x->dtype == TI_DTYPE_F32 && inner == 1) {
        ti__sm_job j;
        j.x = (const float *)x->data;
        j.y = (float *)y->data;
        j.n = n;
        j.kind = kind;
        ti__parallel_for(k->tp, outer, TI__MAX((size_t)1, (size_t)4096 / n), ti__sm_rows_f32,
                         &j);
        return TI_OK;
    }
    if (x->dtype == TI_DTYPE_F32 && kind != TI__SM_HARD &&
        k->scratch_bytes >= inner * 2 * sizeof(float)) {
        float *mx = (float *)k->scratch;
        ti__sm_cols_f32((const float *)x->data, (float *)y->data, outer, n, inner, kind, mx,
                        mx + inner);
        return TI_OK;
    }
    if ((x->dtype == TI_DTYPE_F16 || x->dtype == TI_DTYPE_BF16) && kind == TI__SM_SOFT) {
        ti__sm_half(x, y, outer, n, inner);
        return TI_OK;
    }
    /* any float dtype, any layout: strided, in double */
    for (size_t o = 0; o < outer; o++) {
        for (size_t i = 0; i < inner; i++) {
            size_t base = o * n * inner + i;
            double mx = ti__get_f64(x, base);
            size_t am = 0;
            for (size_t j = 1; j < n; j++) {
                double v = ti__get_f64(x, base + j * inner);
                if (v > mx) { mx = v; am = j; }
            }
            double sum = 0.0;
            if (kind != TI__SM_HARD)
                for (size_t j = 0; j < n; j++) sum += exp(ti__get_f64(x, base + j * inner) - mx);
            for (size_t j = 0; j < n; j++) {
                size_t e = base + j * inner;
                double v = kind == TI__SM_HARD ? (j == am ? 1.0 : 0.0)
                           : kind == TI__SM_SOFT ? exp(ti__get_f64(x, e) - mx) / sum
                                                 : ti__get_f64(x, e) - mx - log(sum);
                ti__set_f64(y, e, v);
            }
        }
    }
    return TI_OK;
}

TI__PRIVATE const ti__op ti__ops_reduce[] = {
    {"ReduceSum", ti__reduce_shape, ti__reduce_run, NULL, 0},
    {"ReduceMean", ti__reduce_shape, ti__reduce_run, NULL, 0},
    {"ReduceMax", ti__reduce_shape, ti__reduce_run, NULL, 0},
    {"ReduceMin", ti__reduce_shape, ti__reduce_run, NULL, 0},
    {"ReduceProd", ti__reduce_shape, ti__reduce_run, NULL, 0},
    {"ReduceL1", ti__reduce_shape, ti__reduce_run, NULL, 0},
    {"ReduceL2", ti__reduce_shape, ti__reduce_run, NULL, 0},
    {"ReduceLogSum", ti__reduce_shape, ti__reduce_run, NULL, 0},
    {"ReduceLogSumExp", ti__reduce_shape, ti__reduce_run, NULL, 0},
    {"ReduceSumSquare", ti__reduce_shape, ti__reduce_run, NULL, 0},
    {"ArgMax", ti__argmax_shape, ti__argmax_run, NULL, 0},
    {"ArgMin", ti__argmax_shape, ti__argmax_run, NULL, 0},
    {"Softmax", ti__sm_shape, ti__sm_run, ti__sm_scratch, 0},
    {"LogSoftmax", ti__sm_shape, ti__sm_run, ti__sm_scratch, 0},
    {"Hardmax", ti__sm_shape, ti__sm_run, NULL, 0},
    {"CumSum", ti__cum_shape, ti__cum_run, NULL, 0},
    {"CumProd", ti__cum_shape, ti__cum_run, NULL, 0},
    {"TopK", ti__topk_shape, ti__topk_run, ti__topk_scratch, 0},
    {NULL, NULL, NULL, NULL, 0}
};
