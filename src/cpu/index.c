/* Indexing kernels: Gather, GatherElements, GatherND, ScatterElements (and the deprecated
 * Scatter), ScatterND, OneHot, Compress and NonZero. Data moves as whole elements of
 * ti_dtype_size bytes; scatter reductions compute in int64 for integer dtypes and in double
 * for floats. Relies on internal.h. Index values come from inputs: every one is checked
 * before use and an out-of-range index fails the run (TI_ERR_INVALID_ARGUMENT); a run never
 * reads or writes outside a tensor and never allocates. */

/* ---- helpers --------------------------------------------------------------------------- */

TI__PRIVATE ti_status ti__ix_esize(ti__kctx *k, const ti_tensor *t, size_t *es) {
    *es = ti_dtype_size(t->dtype);
    if (*es == 0)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "dtype %s is not supported",
                         ti_dtype_name(t->dtype));
    return TI_OK;
}

TI__PRIVATE ti_status ti__ix_int_input(ti__kctx *k, int i, const char *what) {
    if (!ti__dtype_is_int(k->in[i]->dtype))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "%s must be an integer tensor, got %s", what,
                         ti_dtype_name(k->in[i]->dtype));
    return TI_OK;
}

TI__PRIVATE int ti__ix_axis(int64_t axis, int rank, int *out) {
    if (axis < -(int64_t)rank || axis >= rank) return 0;
    *out = (int)(axis < 0 ? axis + rank : axis);
    return 1;
}

TI__PRIVATE ti_status ti__ix_set(ti__kctx *k, int i, ti_dtype dt, int rank, const int64_t *dims) {
    if (i >= k->n_out || k->out[i] == NULL) return TI_OK;
    if (!ti__set_shape(k->out[i], dt, rank, dims))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "output %d: rank %d or size is too large", i,
                         rank);
    return TI_OK;
}

/* Index i of t, wrapped once when negative; fails when outside [-dim, dim). */
TI__PRIVATE ti_status ti__ix_index(ti__kctx *k, const ti_tensor *t, size_t i, int64_t dim,
                                   int64_t *out) {
    int64_t v = ti__get_i64(t, i);
    if (v < -dim || v >= dim)
        return ti__kfail(k, TI_ERR_INVALID_ARGUMENT, "index %lld is out of range [%lld, %lld)",
                         (long long)v, (long long)-dim, (long long)dim);
    *out = v < 0 ? v + dim : v;
    return TI_OK;
}

/* Scatter reductions (attribute "reduction", opset 16/18). */
enum { TI__IX_RED_NONE, TI__IX_RED_ADD, TI__IX_RED_MUL, TI__IX_RED_MAX, TI__IX_RED_MIN };

TI__PRIVATE ti_status ti__ix_reduction(ti__kctx *k, int *red) {
    const char *s = ti__attr_s(k->node, "reduction", "none");
    if (strcmp(s, "none") == 0) *red = TI__IX_RED_NONE;
    else if (strcmp(s, "add") == 0) *red = TI__IX_RED_ADD;
    else if (strcmp(s, "mul") == 0) *red = TI__IX_RED_MUL;
    else if (strcmp(s, "max") == 0) *red = TI__IX_RED_MAX;
    else if (strcmp(s, "min") == 0) *red = TI__IX_RED_MIN;
    else return ti__kfail(k, TI_ERR_UNSUPPORTED, "reduction '%s' is not supported", s);
    return TI_OK;
}

/* out[o] = reduce(out[o], upd[u]). */
TI__PRIVATE void ti__ix_apply(ti_tensor *out, size_t o, const ti_tensor *upd, size_t u, int red,
                              size_t es) {
    if (red == TI__IX_RED_NONE) {
        memcpy((unsigned char *)out->data + o * es, (const unsigned char *)upd->data + u * es, es);
    } else if (ti__dtype_is_int(out->dtype) || out->dtype == TI_DTYPE_BOOL) {
        int64_t a = ti__get_i64(out, o), b = ti__get_i64(upd, u), r;
        /* wrap-around like the fixed-width integer arithmetic of the reference */
        if (red == TI__IX_RED_ADD) r = (int64_t)((uint64_t)a + (uint64_t)b);
        else if (red == TI__IX_RED_MUL) r = (int64_t)((uint64_t)a * (uint64_t)b);
        else if (red == TI__IX_RED_MAX) r = a > b ? a : b;
        else r = a < b ? a : b;
        ti__set_i64(out, o, r);
    } else {
        double a = ti__get_f64(out, o), b = ti__get_f64(upd, u), r;
        if (red == TI__IX_RED_ADD) r = a + b;
        else if (red == TI__IX_RED_MUL) r = a * b;
        else if (red == TI__IX_RED_MAX) r = a > b || a != a ? a : b;
        else r = a < b || a != a ? a : b;
        ti__set_f64(out, o, r);
    }
}

TI__PRIVATE void ti__ix_copy_input0(ti__kctx *k) {
    if (k->in[0]->size_bytes != 0) memcpy(k->out[0]->data, k->in[0]->data, k->in[0]->size_bytes);
}

/* ---- Gather ---------------------------------------------------------------------------- */

TI__PRIVATE int ti__gather_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    const ti_tensor *x = k->in[0], *ix = k->in[1];
    size_t es;
    ti_status st = ti__ix_esize(k, x, &es);
    if (st == TI_OK) st = ti__ix_int_input(k, 1, "indices");
    if (st != TI_OK) return st;
    int axis, r = 0;
    int64_t a = ti__attr_i(k->node, "axis", 0), d[TI_MAX_DIMS];
    if (!ti__ix_axis(a, x->rank, &axis))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "axis %lld is out of range for rank %d",
                         (long long)a, x->rank);
    if (x->rank - 1 + ix->rank > TI_MAX_DIMS)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "output rank %d above %d",
                         x->rank - 1 + ix->rank, TI_MAX_DIMS);
    for (int i = 0; i < axis; i++) d[r++] = x->shape[i];
    for (int i = 0; i < ix->rank; i++) d[r++] = ix->shape[i];
    for (int i = axis + 1; i < x->rank; i++) d[r++] = x->shape[i];
    return ti__ix_set(k, 0, x->dtype, r, d);
}

TI__PRIVATE ti_status ti__gather_run(ti__kctx *k) {
    const ti_tensor *x = k->in[0], *ix = k->in[1];
    int axis = 0;
    ti__ix_axis(ti__attr_i(k->node, "axis", 0), x->rank, &axis);
    size_t es = ti_dtype_size(x->dtype), outer = 1, inner = 1, n = ti__numel(ix);
    for (int i = 0; i < axis; i++) outer *= (size_t)x->shape[i];
    for (int i = axis + 1; i < x->rank; i++) inner *= (size_t)x->shape[i];
    int64_t dim = x->shape[axis];
    size_t chunk = inner * es;
    for (size_t j = 0; j < n; j++) { /* validate every index first */
        int64_t v = 0;
        ti_status st = ti__ix_index(k, ix, j, dim, &v);
        if (st != TI_OK) return st;
    }
    const unsigned char *src = (const unsigned char *)x->data;
    unsigned char *dst = (unsigned char *)k->out[0]->data;
    for (size_t o = 0; o < outer; o++)
        for (size_t j = 0; j < n; j++) {
            int64_t v = ti__get_i64(ix, j);
            if (v < 0) v += dim;
            if (chunk != 0) memcpy(dst, src + (o * (size_t)dim + (size_t)v) * chunk, chunk);
            dst += chunk;
        }
    return TI_OK;
}

/* ---- GatherElements, ScatterElements --------------------------------------------------- */

/* data and indices share a rank; indices' dims may not exceed data's off the axis.
 * updates (scatter) has indices' shape. */
TI__PRIVATE int ti__ix_elements_check(ti__kctx *k, int scatter, int *axis) {
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    if (scatter) TI__REQUIRE_INPUT(k, 2);
    const ti_tensor *x = k->in[0], *ix = k->in[1];
    size_t es;
    ti_status st = ti__ix_esize(k, x, &es);
    if (st == TI_OK) st = ti__ix_int_input(k, 1, "indices");
    if (st != TI_OK) return st;
    int64_t a = ti__attr_i(k->node, "axis", 0);
    if (!ti__ix_axis(a, x->rank, axis))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "axis %lld is out of range for rank %d",
                         (long long)a, x->rank);
    if (ix->rank != x->rank)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "indices have rank %d, data has rank %d",
                         ix->rank, x->rank);
    for (int i = 0; i < x->rank; i++)
        if (i != *axis && ix->shape[i] > x->shape[i])
            return ti__kfail(k, TI_ERR_BAD_MODEL, "indices dim %d = %lld exceeds data's %lld", i,
                             (long long)ix->shape[i], (long long)x->shape[i]);
    if (scatter) {
        const ti_tensor *u = k->in[2];
        if (u->dtype != x->dtype || u->rank != ix->rank)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "updates must have data's dtype and indices' "
                             "shape");
        for (int i = 0; i < ix->rank; i++)
            if (u->shape[i] != ix->shape[i])
                return ti__kfail(k, TI_ERR_BAD_MODEL, "updates dim %d = %lld, indices have "
                                 "%lld", i, (long long)u->shape[i], (long long)ix->shape[i]);
    }
    return TI_OK;
}

/* Calls back for each element of indices with (element, data offset). Returns the first
 * failure. `scatter`: 1 for ScatterElements, 0 for GatherElements. */
TI__PRIVATE ti_status ti__ix_elements_walk(ti__kctx *k, int axis, int scatter, int red) {
    const ti_tensor *x = k->in[0], *ix = k->in[1];
    ti_tensor *y = k->out[0];
    int r = x->rank;
    int64_t str[TI_MAX_DIMS], idx[TI_MAX_DIMS], off = 0;
    size_t n = ti__numel(ix), es = ti_dtype_size(x->dtype);
    ti__strides(r, x->shape, str);
    for (int i = 0; i < r; i++) idx[i] = 0;
    for (size_t j = 0; j < n; j++) {
        int64_t v = 0;
        ti_status st = ti__ix_index(k, ix, j, x->shape[axis], &v);
        if (st != TI_OK) return st;
        size_t o = (size_t)(off + v * str[axis]);
        if (scatter) ti__ix_apply(y, o, k->in[2], j, red, es);
        else memcpy((unsigned char *)y->data + j * es, (const unsigned char *)x->data + o * es, es);
        for (int i = r - 1; i >= 0; i--) { /* next index position; off excludes the axis */
            if (i != axis) off += str[i];
            if (++idx[i] < ix->shape[i]) break;
            if (i != axis) off -= idx[i] * str[i];
            idx[i] = 0;
        }
    }
    return TI_OK;
}

TI__PRIVATE int ti__gather_el_shape(ti__kctx *k) {
    int axis, st = ti__ix_elements_check(k, 0, &axis);
    if (st != TI_OK) return st;
    return ti__ix_set(k, 0, k->in[0]->dtype, k->in[1]->rank, k->in[1]->shape);
}

TI__PRIVATE ti_status ti__gather_el_run(ti__kctx *k) {
    int axis = 0;
    ti__ix_axis(ti__attr_i(k->node, "axis", 0), k->in[0]->rank, &axis);
    return ti__ix_elements_walk(k, axis, 0, TI__IX_RED_NONE);
}

TI__PRIVATE int ti__scatter_el_shape(ti__kctx *k) {
    int axis, red, st = ti__ix_elements_check(k, 1, &axis);
    if (st == TI_OK) st = ti__ix_reduction(k, &red);
    if (st != TI_OK) return st;
    return ti__ix_set(k, 0, k->in[0]->dtype, k->in[0]->rank, k->in[0]->shape);
}

TI__PRIVATE ti_status ti__scatter_el_run(ti__kctx *k) {
    int axis = 0, red = 0;
    ti_status st = ti__ix_reduction(k, &red);
    if (st != TI_OK) return st;
    ti__ix_axis(ti__attr_i(k->node, "axis", 0), k->in[0]->rank, &axis);
    ti__ix_copy_input0(k);
    return ti__ix_elements_walk(k, axis, 1, red);
}

/* ---- GatherND, ScatterND --------------------------------------------------------------- */

/* Shared layout: data [batch..., idx dims (m)..., slice...], indices [batch..., tuples..., m].
 * batch: batch_dims (GatherND only), m: indices' last dim. */
typedef struct ti__nd_plan {
    int b, m;
    size_t batches, tuples, slice; /* elements per slice */
    int64_t str[TI_MAX_DIMS];      /* data strides */
} ti__nd_plan;

TI__PRIVATE int ti__nd_plan_make(ti__kctx *k, int b, ti__nd_plan *p) {
    const ti_tensor *x = k->in[0], *ix = k->in[1];
    size_t es;
    ti_status st = ti__ix_esize(k, x, &es);
    if (st == TI_OK) st = ti__ix_int_input(k, 1, "indices");
    if (st != TI_OK) return st;
    if (ix->rank < 1 || b < 0 || b >= ix->rank || b >= x->rank)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "indices rank %d, data rank %d and batch_dims %d "
                         "do not fit", ix->rank, x->rank, b);
    int64_t m = ix->shape[ix->rank - 1];
    if (m < 1 || m > x->rank - b)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "indices' last dim %lld must be in [1, %d]",
                         (long long)m, x->rank - b);
    p->b = b;
    p->m = (int)m;
    p->batches = 1;
    for (int i = 0; i < b; i++) {
        if (ix->shape[i] != x->shape[i])
            return ti__kfail(k, TI_ERR_BAD_MODEL, "batch dim %d: indices %lld, data %lld", i,
                             (long long)ix->shape[i], (long long)x->shape[i]);
        p->batches *= (size_t)x->shape[i];
    }
    p->tuples = 1;
    for (int i = b; i < ix->rank - 1; i++) p->tuples *= (size_t)ix->shape[i];
    p->slice = 1;
    for (int i = b + p->m; i < x->rank; i++) p->slice *= (size_t)x->shape[i];
    ti__strides(x->rank, x->shape, p->str);
    return TI_OK;
}

/* Data offset (elements, within the batch) of tuple t of batch bt. */
TI__PRIVATE ti_status ti__nd_offset(ti__kctx *k, const ti__nd_plan *p, size_t bt, size_t t,
                                    size_t *off) {
    const ti_tensor *x = k->in[0], *ix = k->in[1];
    size_t base = (bt * p->tuples + t) * (size_t)p->m, o = 0;
    for (int j = 0; j < p->m; j++) {
        int64_t v = 0;
        ti_status st = ti__ix_index(k, ix, base + (size_t)j, x->shape[p->b + j], &v);
        if (st != TI_OK) return st;
        o += (size_t)v * (size_t)p->str[p->b + j];
    }
    *off = o;
    return TI_OK;
}

TI__PRIVATE int ti__gather_nd_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    ti__nd_plan p;
    const ti_tensor *x = k->in[0], *ix = k->in[1];
    int st = ti__nd_plan_make(k, (int)ti__attr_i(k->node, "batch_dims", 0), &p);
    if (st != TI_OK) return st;
    int64_t d[TI_MAX_DIMS];
    int r = 0;
    if (ix->rank - 1 + x->rank - p.b - p.m > TI_MAX_DIMS)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "output rank above %d", TI_MAX_DIMS);
    for (int i = 0; i < ix->rank - 1; i++) d[r++] = ix->shape[i];
    for (int i = p.b + p.m; i < x->rank; i++) d[r++] = x->shape[i];
    return ti__ix_set(k, 0, x->dtype, r, d);
}

TI__PRIVATE ti_status ti__gather_nd_run(ti__kctx *k) {
    ti__nd_plan p;
    const ti_tensor *x = k->in[0];
    int st = ti__nd_plan_make(k, (int)ti__attr_i(k->node, "batch_dims", 0), &p);
    if (st != TI_OK) return (ti_status)st;
    size_t es = ti_dtype_size(x->dtype), chunk = p.slice * es;
    size_t batch_elems = p.b > 0 ? (size_t)p.str[p.b - 1] : ti__numel(x);
    unsigned char *dst = (unsigned char *)k->out[0]->data;
    for (size_t bt = 0; bt < p.batches; bt++)
        for (size_t t = 0; t < p.tuples; t++) {
            size_t off;
            st = ti__nd_offset(k, &p, bt, t, &off);
            if (st != TI_OK) return (ti_status)st;
            if (chunk != 0)
                memcpy(dst, (const unsigned char *)x->data + (bt * batch_elems + off) * es, chunk);
            dst += chunk;
        }
    return TI_OK;
}

/* ScatterND: updates has shape indices.shape[:-1] + data.shape[m:]. */
TI__PRIVATE int ti__scatter_nd_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    TI__REQUIRE_INPUT(k, 2);
    ti__nd_plan p;
    const ti_tensor *x = k->in[0], *ix = k->in[1], *u = k->in[2];
    int red, st = ti__nd_plan_make(k, 0, &p);
    if (st == TI_OK) st = ti__ix_reduction(k, &red);
    if (st != TI_OK) return st;
    int ok = u->dtype == x->dtype && u->rank == ix->rank - 1 + x->rank - p.m;
    for (int i = 0; ok && i < ix->rank - 1; i++) ok = u->shape[i] == ix->shape[i];
    for (int i = p.m; ok && i < x->rank; i++) ok = u->shape[ix->rank - 1 + i - p.m] == x->shape[i];
    if (!ok)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "updates (rank %d) must have data's dtype and "
                         "shape indices.shape[:-1] + data.shape[%d:]", u->rank, p.m);
    return ti__ix_set(k, 0, x->dtype, x->rank, x->shape);
}

TI__PRIVATE ti_status ti__scatter_nd_run(ti__kctx *k) {
    ti__nd_plan p;
    int red, st = ti__nd_plan_make(k, 0, &p);
    if (st == TI_OK) st = ti__ix_reduction(k, &red);
    if (st != TI_OK) return (ti_status)st;
    size_t es = ti_dtype_size(k->in[0]->dtype);
    for (size_t t = 0; t < p.tuples; t++) { /* validate every index first */
        size_t off;
        st = ti__nd_offset(k, &p, 0, t, &off);
        if (st != TI_OK) return (ti_status)st;
    }
    ti__ix_copy_input0(k);
    for (size_t t = 0; t < p.tuples; t++) {
        size_t off;
        ti__nd_offset(k, &p, 0, t, &off);
        for (size_t e = 0; e < p.slice; e++)
            ti__ix_apply(k->out[0], off + e, k->in[2], t * p.slice + e, red, es);
    }
    return TI_OK;
}

/* ---- OneHot ---------------------------------------------------------------------------- */

TI__PRIVATE int ti__onehot_params(ti__kctx *k, int *axis, int64_t *depth) {
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    TI__REQUIRE_INPUT(k, 2);
    const ti_tensor *ix = k->in[0], *dp = k->in[1], *val = k->in[2];
    size_t es;
    ti_status st = ti__ix_esize(k, val, &es);
    if (st != TI_OK) return st;
    if (ti__numel(val) != 2 || ti__numel(dp) != 1 || ti_dtype_size(ix->dtype) == 0 ||
        ti_dtype_size(dp->dtype) == 0)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "depth must have one value and values two (got "
                         "%zu and %zu)", ti__numel(dp), ti__numel(val));
    int64_t a = ti__attr_i(k->node, "axis", -1);
    if (!ti__ix_axis(a, ix->rank + 1, axis))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "axis %lld is out of range for output rank %d",
                         (long long)a, ix->rank + 1);
    if (ix->rank + 1 > TI_MAX_DIMS)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "output rank above %d", TI_MAX_DIMS);
    TI__NEED(k, dp);
    double dv = ti__get_f64(dp, 0);
    if (!(dv >= 1.0 && dv < 9.0e15))
        return ti__kfail(k, TI_ERR_INVALID_ARGUMENT, "depth %g must be a positive count", dv);
    *depth = (int64_t)dv;
    return TI_OK;
}

TI__PRIVATE int ti__onehot_shape(ti__kctx *k) {
    int axis = 0;
    int64_t depth, d[TI_MAX_DIMS];
    int st = ti__onehot_params(k, &axis, &depth);
    if (st != TI_OK) return st;
    const ti_tensor *ix = k->in[0];
    for (int i = 0, j = 0; i <= ix->rank; i++) d[i] = i == axis ? depth : ix->shape[j++];
    return ti__ix_set(k, 0, k->in[2]->dtype, ix->rank + 1, d);
}

TI__PRIVATE ti_status ti__onehot_run(ti__kctx *k) {
    int axis = 0;
    int64_t depth;
    int st = ti__onehot_params(k, &axis, &depth);
    if (st != TI_OK) return (ti_status)st;
    const ti_tensor *ix = k->in[0], *val = k->in[2];
    ti_tensor *y = k->out[0];
    size_t es = ti_dtype_size(val->dtype), inner = 1, n = ti__numel(ix), total = ti__numel(y);
    for (int i = axis; i < ix->rank; i++) inner *= (size_t)ix->shape[i];
    const unsigned char *off_v = (const unsigned char *)val->data, *on_v = off_v + es;
    unsigned char *dst = (unsigned char *)y->data;
    for (size_t i = 0; i < total; i++) memcpy(dst + i * es, off_v, es);
    /* out[o, d, i] with o = outer position, i = inner position of the index */
    for (size_t j = 0; j < n; j++) {
        int64_t v = ti__get_i64(ix, j);
        if (v < 0) v += depth;
        if (v < 0 || v >= depth) continue; /* spec: all off_value */
        size_t o = j / inner, i = j % inner;
        memcpy(dst + ((o * (size_t)depth + (size_t)v) * inner + i) * es, on_v, es);
    }
    return TI_OK;
}

/* ---- Compress, NonZero ----------------------------------------------------------------- */

/* Compress: axis (or the flattened input when absent); kept = count of true conditions
 * within the axis length. */
TI__PRIVATE int ti__compress_params(ti__kctx *k, int *axis, int64_t *len, size_t *kept) {
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    const ti_tensor *x = k->in[0], *c = k->in[1];
    size_t es;
    ti_status st = ti__ix_esize(k, x, &es);
    if (st != TI_OK) return st;
    if (c->rank != 1 || ti_dtype_size(c->dtype) == 0)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "condition must be 1-D (rank %d)", c->rank);
    const ti__attr *a = ti__attr_get(k->node, "axis");
    *axis = -1;
    *len = (int64_t)ti__numel(x);
    if (a != NULL) {
        if (!ti__ix_axis(a->i, x->rank, axis))
            return ti__kfail(k, TI_ERR_BAD_MODEL, "axis %lld is out of range for rank %d",
                             (long long)a->i, x->rank);
        *len = x->shape[*axis];
    }
    TI__NEED(k, c);
    size_t n = TI__MIN(ti__numel(c), (size_t)*len);
    *kept = 0;
    for (size_t i = 0; i < n; i++) *kept += ti__get_f64(c, i) != 0.0;
    return TI_OK;
}

TI__PRIVATE int ti__compress_shape(ti__kctx *k) {
    int axis = 0;
    int64_t len, d[TI_MAX_DIMS];
    size_t kept = 0;
    int st = ti__compress_params(k, &axis, &len, &kept);
    if (st != TI_OK) return st;
    const ti_tensor *x = k->in[0];
    if (axis < 0) {
        d[0] = (int64_t)kept;
        return ti__ix_set(k, 0, x->dtype, 1, d);
    }
    for (int i = 0; i < x->rank; i++) d[i] = x->shape[i];
    d[axis] = (int64_t)kept;
    return ti__ix_set(k, 0, x->dtype, x->rank, d);
}

TI__PRIVATE ti_status ti__compress_run(ti__kctx *k) {
    int axis = 0;
    int64_t len = 0;
    size_t kept = 0;
    int st = ti__compress_params(k, &axis, &len, &kept);
    if (st != TI_OK) return (ti_status)st;
    const ti_tensor *x = k->in[0], *c = k->in[1];
    size_t es = ti_dtype_size(x->dtype), outer = 1, inner = 1;
    if (axis >= 0) {
        for (int i = 0; i < axis; i++) outer *= (size_t)x->shape[i];
        for (int i = axis + 1; i < x->rank; i++) inner *= (size_t)x->shape[i];
    }
    size_t n = TI__MIN(ti__numel(c), (size_t)len), chunk = inner * es;
    const unsigned char *src = (const unsigned char *)x->data;
    unsigned char *dst = (unsigned char *)k->out[0]->data;
    for (size_t o = 0; o < outer; o++)
        for (size_t i = 0; i < n; i++)
            if (ti__get_f64(c, i) != 0.0) {
                memcpy(dst, src + (o * (size_t)len + i) * chunk, chunk);
                dst += chunk;
            }
    return TI_OK;
}

/* NonZero: int64 [rank, count] of the coordinates of non-zero elements, row-major order.
 * A scalar counts as a 1-D tensor of one element (numpy's behaviour). */
TI__PRIVATE int ti__nonzero_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    const ti_tensor *x = k->in[0];
    size_t es;
    ti_status st = ti__ix_esize(k, x, &es);
    if (st != TI_OK) return st;
    TI__NEED(k, x);
    size_t n = ti__numel(x), cnt = 0;
    for (size_t i = 0; i < n; i++) cnt += ti__get_f64(x, i) != 0.0;
    int64_t d[2] = {x->rank > 0 ? x->rank : 1, (int64_t)cnt};
    return ti__ix_set(k, 0, TI_DTYPE_I64, 2, d);
}

TI__PRIVATE ti_status ti__nonzero_run(ti__kctx *k) {
    const ti_tensor *x = k->in[0];
    int64_t *y = (int64_t *)k->out[0]->data, idx[TI_MAX_DIMS];
    size_t n = ti__numel(x), cnt = (size_t)k->out[0]->shape[1], j = 0;
    int r = x->rank;
    for (int i = 0; i < r; i++) idx[i] = 0;
    for (size_t i = 0; i < n; i++) {
        if (ti__get_f64(x, i) != 0.0 && j < cnt) {
            if (r == 0) y[j] = 0;
            for (int d = 0; d < r; d++) y[(size_t)d * cnt + j] = idx[d];
            j++;
        }
        for (int d = r - 1; d >= 0; d--) {
            if (++idx[d] < x->shape[d]) break;
            idx[d] = 0;
        }
    }
    return TI_OK;
}

TI__PRIVATE const ti__op ti__ops_index[] = {
    {"Gather", ti__gather_shape, ti__gather_run, NULL, 0},
    {"GatherElements", ti__gather_el_shape, ti__gather_el_run, NULL, 0},
    {"GatherND", ti__gather_nd_shape, ti__gather_nd_run, NULL, 0},
    {"ScatterElements", ti__scatter_el_shape, ti__scatter_el_run, NULL, 0},
    {"Scatter", ti__scatter_el_shape, ti__scatter_el_run, NULL, 0},
    {"ScatterND", ti__scatter_nd_shape, ti__scatter_nd_run, NULL, 0},
    {"OneHot", ti__onehot_shape, ti__onehot_run, NULL, 0},
    {"Compress", ti__compress_shape, ti__compress_run, NULL, 0},
    {"NonZero", ti__nonzero_shape, ti__nonzero_run, NULL, 0},
    {NULL, NULL, NULL, NULL, 0}
};
