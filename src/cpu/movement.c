/* Data-movement kernels: Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout (inference),
 * Transpose, Concat, Split, Slice, Expand, Tile, Pad, CenterCropPad, DepthToSpace,
 * SpaceToDepth, Trilu, ReverseSequence and Col2Im. They move whole elements (ti_dtype_size
 * bytes), so every dtype with a size works; only Col2Im does arithmetic (float dtypes).
 * Relies on internal.h (kernel context, attributes, tensor helpers). Must not allocate in a
 * run function, nor read outside an input: shapes are validated in the shape functions. */

#define TI__MV_DIMS TI_MAX_DIMS
#define TI__MV_MAXR (2 * TI_MAX_DIMS) /* Tile gathers over [rep, dim] pairs */

/* ---- helpers --------------------------------------------------------------------------- */

/* Element size of t's dtype, or a failure for dtypes that have none (string, unknown). */
TI__PRIVATE ti_status ti__mv_esize(ti__kctx *k, const ti_tensor *t, size_t *es) {
    *es = ti_dtype_size(t->dtype);
    if (*es == 0)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "dtype %s is not supported",
                         ti_dtype_name(t->dtype));
    return TI_OK;
}

/* Normalises axis into [0, rank); 0 when out of range. */
TI__PRIVATE int ti__mv_axis(int64_t axis, int rank, int *out) {
    if (axis < -(int64_t)rank || axis >= rank) return 0;
    *out = (int)(axis < 0 ? axis + rank : axis);
    return 1;
}

/* Reads the values of an integer tensor of any rank into v (at most cap); -1 when longer. */
TI__PRIVATE int ti__mv_read_ints(const ti_tensor *t, int64_t *v, int cap) {
    size_t n = ti__numel(t);
    if (n > (size_t)cap) return -1;
    for (size_t i = 0; i < n; i++) v[i] = ti__get_i64(t, i);
    return (int)n;
}

/* Gets an integer list from input `idx` when present, else from attribute `name`.
 * Returns the count, -1 when absent, -2 when longer than cap. */
TI__PRIVATE int ti__mv_ints_arg(ti__kctx *k, int idx, const char *name, int64_t *v, int cap) {
    if (idx < k->n_in && k->in[idx] != NULL) {
        int n = ti__mv_read_ints(k->in[idx], v, cap);
        return n < 0 ? -2 : n;
    }
    int n = 0;
    const int64_t *a = name ? ti__attr_ints(k->node, name, &n) : NULL;
    if (a == NULL) return -1;
    if (n > cap) return -2;
    for (int i = 0; i < n; i++) v[i] = a[i];
    return n;
}

TI__PRIVATE void ti__mv_copy_elems(void *dst, const void *src, size_t n, size_t es) {
    if (n != 0) memcpy(dst, src, n * es);
}

/* Fills n elements of es bytes with the element at val. */
TI__PRIVATE void ti__mv_fill(void *dst, size_t n, const unsigned char *val, size_t es) {
    int zero = 1;
    for (size_t b = 0; b < es; b++) zero &= val[b] == 0;
    if (zero) {
        if (n != 0) memset(dst, 0, n * es);
        return;
    }
    unsigned char *d = (unsigned char *)dst;
    for (size_t i = 0; i < n; i++) memcpy(d + i * es, val, es);
}

/* Strided gather: dst (contiguous, shape dims) = src[off + sum(idx[i] * str[i])], strides in
 * elements. Serves Transpose, Slice, Expand, Tile, DepthToSpace and SpaceToDepth. */
typedef struct ti__mv_strided {
    unsigned char *dst;
    const unsigned char *src;
    size_t es;
    int rank; /* >= 1 after simplification */
    int64_t dims[TI__MV_MAXR], str[TI__MV_MAXR];
    int64_t off;
} ti__mv_strided;

TI__PRIVATE void ti__mv_strided_rows(void *ctx, size_t begin, size_t end) {
    const ti__mv_strided *s = (const ti__mv_strided *)ctx;
    int r = s->rank;
    int64_t n = s->dims[r - 1], is = s->str[r - 1], idx[TI__MV_MAXR];
    size_t es = s->es;
    /* position of row `begin` in the outer dims, and its source offset */
    int64_t off = s->off, rem = (int64_t)begin;
    for (int i = r - 2; i >= 0; i--) {
        idx[i] = rem % s->dims[i];
        rem /= s->dims[i];
        off += idx[i] * s->str[i];
    }
    unsigned char *d = s->dst + begin * (size_t)n * es;
    for (size_t row = begin; row < end; row++) {
        const unsigned char *p = s->src + off * (int64_t)es;
        if (is == 1) memcpy(d, p, (size_t)n * es);
        else if (es == 4) {
            uint32_t *o = (uint32_t *)(void *)d;
            for (int64_t j = 0; j < n; j++) memcpy(o + j, p + j * is * 4, 4);
        } else if (es == 2) {
            uint16_t *o = (uint16_t *)(void *)d;
            for (int64_t j = 0; j < n; j++) memcpy(o + j, p + j * is * 2, 2);
        } else if (es == 1) {
            for (int64_t j = 0; j < n; j++) d[j] = p[j * is];
        } else {
            for (int64_t j = 0; j < n; j++)
                memcpy(d + j * (int64_t)es, p + j * is * (int64_t)es, es);
        }
        d += (size_t)n * es;
        /* advance the outer index */
        for (int i = r - 2; i >= 0; i--) {
            off += s->str[i];
            if (++idx[i] < s->dims[i]) break;
            off -= idx[i] * s->str[i];
            idx[i] = 0;
        }
    }
}

TI__PRIVATE void ti__mv_strided_copy(ti__kctx *k, void *dst, const void *src, size_t es, int rank,
                                     const int64_t *dims, const int64_t *str, int64_t off) {
    ti__mv_strided s;
    s.dst = (unsigned char *)dst;
    s.src = (const unsigned char *)src;
    s.es = es;
    s.off = off;
    s.rank = 0;
    /* drop unit dims and merge dims that are contiguous in the source */
    for (int i = 0; i < rank; i++) {
        if (dims[i] == 0) return;
        if (dims[i] == 1) continue;
        if (s.rank > 0 && s.str[s.rank - 1] == str[i] * dims[i]) {
            s.dims[s.rank - 1] *= dims[i];
            s.str[s.rank - 1] = str[i];
            continue;
        }
        s.dims[s.rank] = dims[i];
        s.str[s.rank] = str[i];
        s.rank++;
    }
    if (s.rank == 0) {
        s.dims[0] = 1;
        s.str[0] = 1;
        s.rank = 1;
    }
    size_t rows = 1;
    for (int i = 0; i < s.rank - 1; i++) rows *= (size_t)s.dims[i];
    size_t n = (size_t)s.dims[s.rank - 1];
    ti__parallel_for(k->tp, rows, n >= 16384 ? 1 : 16384 / n, ti__mv_strided_rows, &s);
}

TI__PRIVATE ti_status ti__mv_set(ti__kctx *k, int i, ti_dtype dt, int rank, const int64_t *dims) {
    if (i >= k->n_out || k->out[i] == NULL) return TI_OK;
    if (!ti__set_shape(k->out[i], dt, rank, dims))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "output %d: rank %d or size is too large", i,
                         rank);
    return TI_OK;
}

/* Run of every op whose output is its input's bytes (Reshape, Flatten, Squeeze, ...). */
TI__PRIVATE ti_status ti__mv_copy_run(ti__kctx *k) {
    if (k->in[0]->size_bytes != 0) memcpy(k->out[0]->data, k->in[0]->data, k->in[0]->size_bytes);
    return TI_OK;
}

/* ---- Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout ---------------------------- */

TI__PRIVATE int ti__reshape_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    const ti_tensor *x = k->in[0];
    int64_t v[TI__MV_DIMS];
    if (k->n_in > 1 && k->in[1] != NULL) {
        TI__NEED(k, k->in[1]);
        if (k->in[1]->rank != 1)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "shape input has rank %d, expected 1",
                             k->in[1]->rank);
    }
    int n = ti__mv_ints_arg(k, 1, "shape", v, TI__MV_DIMS);
    if (n == -1) return ti__kfail(k, TI_ERR_BAD_MODEL, "no shape input or attribute");
    if (n == -2) return ti__kfail(k, TI_ERR_UNSUPPORTED, "target rank above %d", TI__MV_DIMS);
    int allowzero = (int)ti__attr_i(k->node, "allowzero", 0);
    int infer = -1;
    size_t known = 1, total = ti__numel(x);
    for (int i = 0; i < n; i++) {
        if (v[i] == 0 && !allowzero) {
            if (i >= x->rank)
                return ti__kfail(k, TI_ERR_BAD_MODEL,
                                 "shape[%d] = 0 copies input dim %d, but the input has rank %d",
                                 i, i, x->rank);
            v[i] = x->shape[i];
        }
        if (v[i] == -1) {
            if (infer >= 0)
                return ti__kfail(k, TI_ERR_BAD_MODEL, "shape has more than one -1 (at %d and %d)",
                                 infer, i);
            infer = i;
            continue;
        }
        if (v[i] < 0)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "shape[%d] = %lld is negative", i,
                             (long long)v[i]);
        if (!ti__mul_size(known, (size_t)v[i], &known))
            return ti__kfail(k, TI_ERR_BAD_MODEL, "shape overflows");
    }
    if (infer >= 0) {
        if (known == 0 || total % known != 0)
            return ti__kfail(k, TI_ERR_BAD_MODEL,
                             "cannot infer the -1 dim: %zu elements into a product of %zu", total,
                             known);
        v[infer] = (int64_t)(total / known);
    } else if (known != total) {
        return ti__kfail(k, TI_ERR_BAD_MODEL, "shape has %zu elements, the input has %zu", known,
                         total);
    }
    return ti__mv_set(k, 0, x->dtype, n, v);
}

TI__PRIVATE int ti__flatten_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    const ti_tensor *x = k->in[0];
    int64_t axis = ti__attr_i(k->node, "axis", 1);
    if (axis < 0) axis += x->rank;
    if (axis < 0 || axis > x->rank)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "axis %lld is out of range for rank %d",
                         (long long)ti__attr_i(k->node, "axis", 1), x->rank);
    int64_t d[2] = {1, 1};
    for (int i = 0; i < x->rank; i++) d[i < axis ? 0 : 1] *= x->shape[i];
    return ti__mv_set(k, 0, x->dtype, 2, d);
}

/* Axes of Squeeze / Unsqueeze: input 1 (opset >= 13) or attribute "axes". */
TI__PRIVATE int ti__mv_axes_arg(ti__kctx *k, int64_t *v, int *n) {
    if (k->n_in > 1 && k->in[1] != NULL) TI__NEED(k, k->in[1]);
    *n = ti__mv_ints_arg(k, 1, "axes", v, TI__MV_DIMS);
    if (*n == -2) return ti__kfail(k, TI_ERR_BAD_MODEL, "more than %d axes", TI__MV_DIMS);
    return TI_OK;
}

TI__PRIVATE int ti__squeeze_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    const ti_tensor *x = k->in[0];
    int64_t v[TI__MV_DIMS], d[TI__MV_DIMS];
    int n, st = ti__mv_axes_arg(k, v, &n), drop[TI__MV_DIMS] = {0}, r = 0;
    if (st != TI_OK) return st;
    if (n < 0) { /* no axes: every dim of size 1 */
        for (int i = 0; i < x->rank; i++) drop[i] = x->shape[i] == 1;
    }
    for (int i = 0; i < n; i++) {
        int a;
        if (!ti__mv_axis(v[i], x->rank, &a))
            return ti__kfail(k, TI_ERR_BAD_MODEL, "axis %lld is out of range for rank %d",
                             (long long)v[i], x->rank);
        if (x->shape[a] != 1)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "cannot squeeze axis %d of size %lld", a,
                             (long long)x->shape[a]);
        drop[a] = 1;
    }
    for (int i = 0; i < x->rank; i++)
        if (!drop[i]) d[r++] = x->shape[i];
    return ti__mv_set(k, 0, x->dtype, r, d);
}

TI__PRIVATE int ti__unsqueeze_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    const ti_tensor *x = k->in[0];
    int64_t v[TI__MV_DIMS], d[TI__MV_DIMS];
    int n, st = ti__mv_axes_arg(k, v, &n), ins[TI__MV_DIMS] = {0};
    if (st != TI_OK) return st;
    if (n < 0) return ti__kfail(k, TI_ERR_BAD_MODEL, "no axes input or attribute");
    int r = x->rank + n;
    if (r > TI__MV_DIMS) return ti__kfail(k, TI_ERR_UNSUPPORTED, "output rank %d above %d", r,
                                          TI__MV_DIMS);
    for (int i = 0; i < n; i++) {
        int a;
        if (!ti__mv_axis(v[i], r, &a))
            return ti__kfail(k, TI_ERR_BAD_MODEL, "axis %lld is out of range for output rank %d",
                             (long long)v[i], r);
        if (ins[a]) return ti__kfail(k, TI_ERR_BAD_MODEL, "axis %d is repeated", a);
        ins[a] = 1;
    }
    for (int i = 0, j = 0; i < r; i++) d[i] = ins[i] ? 1 : x->shape[j++];
    return ti__mv_set(k, 0, x->dtype, r, d);
}

TI__PRIVATE int ti__identity_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    size_t es;
    ti_status st = ti__mv_esize(k, k->in[0], &es);
    if (st != TI_OK) return st;
    return ti__mv_set(k, 0, k->in[0]->dtype, k->in[0]->rank, k->in[0]->shape);
}

/* Dropout at inference: y = x; the optional mask is all true (nothing dropped). Training mode
 * with a non-zero ratio (a random mask) is refused; with ratio 0 it drops nothing either. */
TI__PRIVATE int ti__dropout_training(ti__kctx *k) {
    const ti_tensor *t = k->n_in > 2 ? k->in[2] : NULL, *r = k->n_in > 1 ? k->in[1] : NULL;
    if (t == NULL || t->data == NULL || ti__numel(t) == 0 || ti__get_f64(t, 0) == 0.0) return 0;
    /* the default ratio is 0.5; an absent or unknown ratio counts as non-zero */
    return r == NULL || r->data == NULL || ti__numel(r) == 0 || ti__get_f64(r, 0) != 0.0;
}

TI__PRIVATE int ti__dropout_shape(ti__kctx *k) {
    int st = ti__identity_shape(k);
    if (st != TI_OK) return st;
    if (ti__dropout_training(k))
        return ti__kfail(k, TI_ERR_UNSUPPORTED,
                         "training_mode = true with a non-zero ratio (random dropout)");
    /* the mask is bool from opset 10, the input's dtype before */
    const ti_tensor *x = k->in[0];
    return ti__mv_set(k, 1, k->opset >= 10 ? TI_DTYPE_BOOL : x->dtype, x->rank, x->shape);
}

TI__PRIVATE ti_status ti__dropout_run(ti__kctx *k) {
    if (ti__dropout_training(k))
        return ti__kfail(k, TI_ERR_UNSUPPORTED,
                         "training_mode = true with a non-zero ratio (random dropout)");
    ti__mv_copy_run(k);
    if (k->n_out > 1 && k->out[1] != NULL) {
        ti_tensor *m = k->out[1];
        size_t n = ti__numel(m);
        for (size_t i = 0; i < n; i++) ti__set_f64(m, i, 1.0);
    }
    return TI_OK;
}

/* ---- Transpose ------------------------------------------------------------------------- */

TI__PRIVATE int ti__transpose_perm(ti__kctx *k, int *perm) {
    const ti_tensor *x = k->in[0];
    int n, seen[TI__MV_DIMS] = {0};
    const int64_t *p = ti__attr_ints(k->node, "perm", &n);
    if (p == NULL) {
        for (int i = 0; i < x->rank; i++) perm[i] = x->rank - 1 - i;
        return TI_OK;
    }
    if (n != x->rank)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "perm has %d entries, the input has rank %d", n,
                         x->rank);
    for (int i = 0; i < n; i++) {
        if (p[i] < 0 || p[i] >= n || seen[p[i]])
            return ti__kfail(k, TI_ERR_BAD_MODEL, "perm[%d] = %lld is not a permutation of 0..%d",
                             i, (long long)p[i], n - 1);
        seen[p[i]] = 1;
        perm[i] = (int)p[i];
    }
    return TI_OK;
}

TI__PRIVATE int ti__transpose_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    const ti_tensor *x = k->in[0];
    int perm[TI__MV_DIMS];
    int64_t d[TI__MV_DIMS];
    size_t es;
    ti_status st = ti__mv_esize(k, x, &es);
    if (st == TI_OK) st = (ti_status)ti__transpose_perm(k, perm);
    if (st != TI_OK) return st;
    for (int i = 0; i < x->rank; i++) d[i] = x->shape[perm[i]];
    return ti__mv_set(k, 0, x->dtype, x->rank, d);
}

TI__PRIVATE ti_status ti__transpose_run(ti__kctx *k) {
    const ti_tensor *x = k->in[0];
    int perm[TI__MV_DIMS];
    int64_t str[TI__MV_DIMS], d[TI__MV_DIMS], ps[TI__MV_DIMS];
    ti_status st = (ti_status)ti__transpose_perm(k, perm);
    if (st != TI_OK) return st;
    ti__strides(x->rank, x->shape, str);
    for (int i = 0; i < x->rank; i++) {
        d[i] = x->shape[perm[i]];
        ps[i] = str[perm[i]];
    }
    ti__mv_strided_copy(k, k->out[0]->data, x->data, ti_dtype_size(x->dtype), x->rank, d, ps, 0);
    return TI_OK;
}

/* ---- Concat, Split --------------------------------------------------------------------- */

TI__PRIVATE int ti__concat_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    const ti_tensor *x = k->in[0];
    size_t es;
    ti_status st = ti__mv_esize(k, x, &es);
    if (st != TI_OK) return st;
    int axis = 0;
    int64_t a = ti__attr_i(k->node, "axis", 0), d[TI__MV_DIMS];
    if (!ti__mv_axis(a, x->rank, &axis))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "axis %lld is out of range for rank %d",
                         (long long)a, x->rank);
    for (int i = 0; i < x->rank; i++) d[i] = x->shape[i];
    d[axis] = 0;
    for (int j = 0; j < k->n_in; j++) {
        const ti_tensor *t = k->in[j];
        if (t == NULL) return ti__kfail(k, TI_ERR_BAD_MODEL, "input %d is missing", j);
        if (t->dtype != x->dtype || t->rank != x->rank)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "input %d is %s rank %d, input 0 is %s rank %d",
                             j, ti_dtype_name(t->dtype), t->rank, ti_dtype_name(x->dtype),
                             x->rank);
        for (int i = 0; i < x->rank; i++)
            if (i != axis && t->shape[i] != x->shape[i])
                return ti__kfail(k, TI_ERR_BAD_MODEL,
                                 "input %d has dim %d = %lld, input 0 has %lld", j, i,
                                 (long long)t->shape[i], (long long)x->shape[i]);
        d[axis] += t->shape[axis];
    }
    return ti__mv_set(k, 0, x->dtype, x->rank, d);
}

TI__PRIVATE ti_status ti__concat_run(ti__kctx *k) {
    const ti_tensor *y = k->out[0];
    int axis = 0;
    ti__mv_axis(ti__attr_i(k->node, "axis", 0), y->rank, &axis);
    size_t es = ti_dtype_size(y->dtype), outer = 1, inner = 1;
    for (int i = 0; i < axis; i++) outer *= (size_t)y->shape[i];
    for (int i = axis + 1; i < y->rank; i++) inner *= (size_t)y->shape[i];
    size_t row_bytes = (size_t)y->shape[axis] * inner * es; /* one outer step of the output */
    size_t at = 0;
    for (int j = 0; j < k->n_in; j++) {
        const ti_tensor *t = k->in[j];
        size_t chunk = (size_t)t->shape[axis] * inner * es;
        unsigned char *dst = (unsigned char *)y->data + at;
        int placed = outer == 1 && dst == (const unsigned char *)t->data; /* a view: written */
        for (size_t o = 0; o < outer && chunk != 0 && !placed; o++)
            memcpy(dst + o * row_bytes, (const unsigned char *)t->data + o * chunk, chunk);
        at += chunk;
    }
    return TI_OK;
}

/* Length of output i of Split along a dim of size d. */
TI__PRIVATE ti_status ti__split_len(ti__kctx *k, int64_t d, int i, int64_t *len) {
    const ti_tensor *s = k->n_in > 1 ? k->in[1] : NULL;
    int cnt;
    const int64_t *a = ti__attr_ints(k->node, "split", &cnt);
    if (s != NULL || a != NULL) {
        size_t n = s != NULL ? ti__numel(s) : (size_t)cnt;
        if (n != (size_t)k->n_out)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "split has %zu entries for %d outputs", n,
                             k->n_out);
        *len = s != NULL ? ti__get_i64(s, (size_t)i) : a[i];
        if (*len < 0)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "split[%d] = %lld is negative", i,
                             (long long)*len);
        return TI_OK;
    }
    int64_t parts = ti__attr_i(k->node, "num_outputs", 0);
    if (parts > 0) { /* opset 18: ceil-sized chunks, the last one smaller */
        if (parts != k->n_out)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "num_outputs = %lld but the node has %d outputs",
                             (long long)parts, k->n_out);
        int64_t chunk = (d + parts - 1) / parts, start = chunk * i;
        *len = start >= d ? 0 : TI__MIN(chunk, d - start);
        return TI_OK;
    }
    if (k->n_out <= 0 || d % k->n_out != 0)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "dim %lld does not split into %d equal parts",
                         (long long)d, k->n_out);
    *len = d / k->n_out;
    return TI_OK;
}

TI__PRIVATE int ti__split_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    const ti_tensor *x = k->in[0];
    size_t es;
    ti_status st = ti__mv_esize(k, x, &es);
    if (st != TI_OK) return st;
    if (k->n_in > 1 && k->in[1] != NULL) TI__NEED(k, k->in[1]);
    int axis = 0;
    int64_t a = ti__attr_i(k->node, "axis", 0), d[TI__MV_DIMS], sum = 0;
    if (!ti__mv_axis(a, x->rank, &axis))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "axis %lld is out of range for rank %d",
                         (long long)a, x->rank);
    for (int i = 0; i < x->rank; i++) d[i] = x->shape[i];
    for (int j = 0; j < k->n_out; j++) {
        st = ti__split_len(k, x->shape[axis], j, &d[axis]);
        if (st != TI_OK) return st;
        sum += d[axis];
        st = ti__mv_set(k, j, x->dtype, x->rank, d);
        if (st != TI_OK) return st;
    }
    if (sum != x->shape[axis])
        return ti__kfail(k, TI_ERR_BAD_MODEL, "split sizes add up to %lld, the dim is %lld",
                         (long long)sum, (long long)x->shape[axis]);
    return TI_OK;
}

TI__PRIVATE ti_status ti__split_run(ti__kctx *k) {
    const ti_tensor *x = k->in[0];
    int axis = 0;
    ti__mv_axis(ti__attr_i(k->node, "axis", 0), x->rank, &axis);
    size_t es = ti_dtype_size(x->dtype), outer = 1, inner = 1;
    for (int i = 0; i < axis; i++) outer *= (size_t)x->shape[i];
    for (int i = axis + 1; i < x->rank; i++) inner *= (size_t)x->shape[i];
    size_t row_bytes = (size_t)x->shape[axis] * inner * es, at = 0;
    for (int j = 0; j < k->n_out; j++) {
        int64_t len;
        ti_status st = ti__split_len(k, x->shape[axis], j, &len);
        if (st != TI_OK) return st;
        size_t chunk = (size_t)len * inner * es;
        if (k->out[j] != NULL)
            for (size_t o = 0; o < outer && chunk != 0; o++)
                memcpy((unsigned char *)k->out[j]->data + o * chunk,
                       (const unsigned char *)x->data + o * row_bytes + at, chunk);
        at += chunk;
    }
    return TI_OK;
}

/* ---- Slice ----------------------------------------------------------------------------- */

/* Per-axis start and step, and the output shape. Inputs (opset >= 10) or attributes. */
TI__PRIVATE int ti__slice_params(ti__kctx *k, int64_t *start, int64_t *step, int64_t *d) {
    const ti_tensor *x = k->in[0];
    int64_t st[TI__MV_DIMS], en[TI__MV_DIMS], ax[TI__MV_DIMS], sp[TI__MV_DIMS];
    for (int i = 1; i < 5 && i < k->n_in; i++) TI__NEED(k, k->in[i]);
    int ns = ti__mv_ints_arg(k, 1, "starts", st, TI__MV_DIMS);
    int ne = ti__mv_ints_arg(k, 2, "ends", en, TI__MV_DIMS);
    int na = ti__mv_ints_arg(k, 3, "axes", ax, TI__MV_DIMS);
    int np = k->n_in > 4 && k->in[4] != NULL ? ti__mv_read_ints(k->in[4], sp, TI__MV_DIMS) : -1;
    if (ns < 0 || ne != ns)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "starts (%d values) and ends (%d values) must be "
                         "given with the same length, at most %d", ns, ne, TI__MV_DIMS);
    if (k->n_in > 4 && k->in[4] != NULL && np < 0) np = -2; /* steps longer than the rank */
    if ((na >= 0 && na != ns) || (np != -1 && np != ns) || na == -2)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "axes (%d) / steps (%d) length differs from "
                         "starts (%d)", na, np, ns);
    int used[TI__MV_DIMS] = {0};
    for (int i = 0; i < x->rank; i++) {
        start[i] = 0;
        step[i] = 1;
        d[i] = x->shape[i];
    }
    for (int i = 0; i < ns; i++) {
        int a;
        int64_t axis = na >= 0 ? ax[i] : i;
        if (!ti__mv_axis(axis, x->rank, &a))
            return ti__kfail(k, TI_ERR_BAD_MODEL, "axis %lld is out of range for rank %d",
                             (long long)axis, x->rank);
        if (used[a]) return ti__kfail(k, TI_ERR_BAD_MODEL, "axis %d is repeated", a);
        used[a] = 1;
        int64_t dim = x->shape[a], s = st[i], e = en[i], p = np >= 0 ? sp[i] : 1, n;
        if (p == 0) return ti__kfail(k, TI_ERR_BAD_MODEL, "step of axis %d is 0", a);
        if (s < 0) s += dim;
        if (e < 0) e += dim;
        if (p > 0) { /* clamp into [0, dim] */
            s = s < 0 ? 0 : (s > dim ? dim : s);
            e = e < 0 ? 0 : (e > dim ? dim : e);
            n = e > s ? (e - s + p - 1) / p : 0;
        } else { /* clamp start into [0, dim-1], end into [-1, dim-1] */
            s = s < 0 ? 0 : (s > dim - 1 ? dim - 1 : s);
            e = e < -1 ? -1 : (e > dim - 1 ? dim - 1 : e);
            n = s > e ? (s - e + (-p) - 1) / (-p) : 0;
        }
        start[a] = n > 0 ? s : 0;
        step[a] = p;
        d[a] = n;
    }
    return TI_OK;
}

TI__PRIVATE int ti__slice_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    const ti_tensor *x = k->in[0];
    int64_t start[TI__MV_DIMS], step[TI__MV_DIMS], d[TI__MV_DIMS];
    size_t es;
    int st = ti__mv_esize(k, x, &es);
    if (st == TI_OK) st = ti__slice_params(k, start, step, d);
    if (st != TI_OK) return st;
    return ti__mv_set(k, 0, x->dtype, x->rank, d);
}

TI__PRIVATE ti_status ti__slice_run(ti__kctx *k) {
    const ti_tensor *x = k->in[0];
    int64_t start[TI__MV_DIMS], step[TI__MV_DIMS], d[TI__MV_DIMS], str[TI__MV_DIMS], off = 0;
    int st = ti__slice_params(k, start, step, d);
    if (st != TI_OK) return (ti_status)st;
    ti__strides(x->rank, x->shape, str);
    for (int i = 0; i < x->rank; i++) {
        off += start[i] * str[i];
        str[i] *= step[i];
    }
    ti__mv_strided_copy(k, k->out[0]->data, x->data, ti_dtype_size(x->dtype), x->rank, d, str,
                        off);
    return TI_OK;
}

/* ---- Expand, Tile ---------------------------------------------------------------------- */

TI__PRIVATE int ti__expand_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    const ti_tensor *x = k->in[0];
    size_t es;
    ti_status st = ti__mv_esize(k, x, &es);
    if (st != TI_OK) return st;
    TI__NEED(k, k->in[1]);
    int64_t v[TI__MV_DIMS], d[TI__MV_DIMS];
    int n = ti__mv_read_ints(k->in[1], v, TI__MV_DIMS), r;
    if (n < 0 || k->in[1]->rank != 1)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "shape input must be 1-D with at most %d values",
                         TI__MV_DIMS);
    for (int i = 0; i < n; i++)
        if (v[i] < 0)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "shape[%d] = %lld is negative", i,
                             (long long)v[i]);
    if (!ti__broadcast_shape(x->rank, x->shape, n, v, &r, d))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "input shape does not broadcast to the shape given");
    return ti__mv_set(k, 0, x->dtype, r, d);
}

TI__PRIVATE ti_status ti__expand_run(ti__kctx *k) {
    const ti_tensor *x = k->in[0], *y = k->out[0];
    int64_t str[TI__MV_DIMS], bs[TI__MV_DIMS];
    int lead = y->rank - x->rank;
    ti__strides(x->rank, x->shape, str);
    for (int i = 0; i < y->rank; i++) {
        int j = i - lead;
        bs[i] = j < 0 || x->shape[j] != y->shape[i] ? 0 : str[j];
    }
    ti__mv_strided_copy(k, y->data, x->data, ti_dtype_size(x->dtype), y->rank, y->shape, bs, 0);
    return TI_OK;
}

TI__PRIVATE int ti__tile_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    const ti_tensor *x = k->in[0];
    size_t es;
    ti_status st = ti__mv_esize(k, x, &es);
    if (st != TI_OK) return st;
    TI__NEED(k, k->in[1]);
    int64_t v[TI__MV_DIMS], d[TI__MV_DIMS];
    int n = ti__mv_read_ints(k->in[1], v, TI__MV_DIMS);
    if (n != x->rank)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "repeats has %d values, the input has rank %d", n,
                         x->rank);
    for (int i = 0; i < n; i++) {
        if (v[i] < 0)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "repeats[%d] = %lld is negative", i,
                             (long long)v[i]);
        if (v[i] != 0 && x->shape[i] > INT64_MAX / v[i])
            return ti__kfail(k, TI_ERR_BAD_MODEL, "repeats[%d] overflows", i);
        d[i] = x->shape[i] * v[i];
    }
    return ti__mv_set(k, 0, x->dtype, n, d);
}

TI__PRIVATE ti_status ti__tile_run(ti__kctx *k) {
    const ti_tensor *x = k->in[0], *y = k->out[0];
    int64_t str[TI__MV_DIMS], d[TI__MV_MAXR], s[TI__MV_MAXR];
    ti__strides(x->rank, x->shape, str);
    /* as a gather of shape [rep0, d0, rep1, d1, ...] with zero stride on the repeats */
    for (int i = 0; i < x->rank; i++) {
        d[2 * i] = x->shape[i] == 0 ? 0 : y->shape[i] / x->shape[i];
        s[2 * i] = 0;
        d[2 * i + 1] = x->shape[i];
        s[2 * i + 1] = str[i];
    }
    ti__mv_strided_copy(k, y->data, x->data, ti_dtype_size(x->dtype), 2 * x->rank, d, s, 0);
    return TI_OK;
}

/* ---- Pad, CenterCropPad ---------------------------------------------------------------- */

enum { TI__MV_PAD_CONSTANT, TI__MV_PAD_REFLECT, TI__MV_PAD_EDGE, TI__MV_PAD_WRAP };

/* What Pad needs at run time: pads per axis (negative crops), the mode and the fill value. */
typedef struct ti__pad_plan {
    int64_t pb[TI__MV_DIMS], pe[TI__MV_DIMS];
    int mode;
    unsigned char value[8];
} ti__pad_plan;

TI__PRIVATE int ti__pad_params(ti__kctx *k, ti__pad_plan *p) {
    const ti_tensor *x = k->in[0];
    int64_t pads[2 * TI__MV_DIMS], ax[TI__MV_DIMS];
    size_t es;
    ti_status st = ti__mv_esize(k, x, &es);
    if (st != TI_OK) return st;
    const char *mode = ti__attr_s(k->node, "mode", "constant");
    if (strcmp(mode, "constant") == 0) p->mode = TI__MV_PAD_CONSTANT;
    else if (strcmp(mode, "reflect") == 0) p->mode = TI__MV_PAD_REFLECT;
    else if (strcmp(mode, "edge") == 0) p->mode = TI__MV_PAD_EDGE;
    else if (strcmp(mode, "wrap") == 0) p->mode = TI__MV_PAD_WRAP;
    else return ti__kfail(k, TI_ERR_UNSUPPORTED, "mode '%s' is not supported", mode);
    if (k->n_in > 1 && k->in[1] != NULL) TI__NEED(k, k->in[1]);
    if (k->n_in > 3 && k->in[3] != NULL) TI__NEED(k, k->in[3]);
    int np = ti__mv_ints_arg(k, 1, "pads", pads, 2 * TI__MV_DIMS);
    if (np == -1) np = ti__mv_ints_arg(k, 99, "paddings", pads, 2 * TI__MV_DIMS); /* opset 1 */
    if (np < 0) return ti__kfail(k, TI_ERR_BAD_MODEL, "pads missing or longer than %d",
                                 2 * TI__MV_DIMS);
    int na = x->rank;
    if (k->n_in > 3 && k->in[3] != NULL) {
        na = ti__mv_read_ints(k->in[3], ax, TI__MV_DIMS);
        if (na < 0) return ti__kfail(k, TI_ERR_BAD_MODEL, "more than %d axes", TI__MV_DIMS);
    } else {
        for (int i = 0; i < na; i++) ax[i] = i;
    }
    if (np != 2 * na)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "pads has %d values, expected %d (2 x %d axes)",
                         np, 2 * na, na);
    for (int i = 0; i < x->rank; i++) p->pb[i] = p->pe[i] = 0;
    for (int i = 0; i < na; i++) {
        int a;
        if (!ti__mv_axis(ax[i], x->rank, &a))
            return ti__kfail(k, TI_ERR_BAD_MODEL, "axis %lld is out of range for rank %d",
                             (long long)ax[i], x->rank);
        p->pb[a] = pads[i];
        p->pe[a] = pads[na + i];
    }
    for (int i = 0; i < x->rank; i++) {
        int64_t d = x->shape[i], pb = p->pb[i], pe = p->pe[i];
        int64_t big = (int64_t)1 << 40;
        if (pb > big || pe > big || pb < -big || pe < -big || d + pb + pe < 0)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "pads %lld, %lld on axis %d of size %lld",
                             (long long)pb, (long long)pe, i, (long long)d);
        int64_t kept = d - TI__MAX(0, -pb) - TI__MAX(0, -pe); /* size after cropping */
        if (p->mode != TI__MV_PAD_CONSTANT && kept <= 0 && (pb > 0 || pe > 0))
            return ti__kfail(k, TI_ERR_INVALID_ARGUMENT,
                             "cannot pad an empty axis %d in mode '%s'", i, mode);
    }
    /* the fill value: input 2 (opset >= 11) or attribute "value", in the input's dtype */
    memset(p->value, 0, sizeof p->value);
    const ti_tensor *cv = k->n_in > 2 ? k->in[2] : NULL;
    if (cv != NULL && cv->data != NULL && ti__numel(cv) > 0) {
        if (cv->dtype != x->dtype)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "constant_value is %s, the input is %s",
                             ti_dtype_name(cv->dtype), ti_dtype_name(x->dtype));
        memcpy(p->value, cv->data, es);
    } else if (cv == NULL) {
        ti_tensor t;
        memset(&t, 0, sizeof t);
        t.dtype = x->dtype;
        t.data = p->value;
        ti__set_f64(&t, 0, (double)ti__attr_f(k->node, "value", 0.0f));
    }
    return TI_OK;
}

/* Maps an input coordinate c outside [lo, hi) (the part kept after cropping) into it. */
TI__PRIVATE int64_t ti__pad_map(int mode, int64_t c, int64_t lo, int64_t hi) {
    int64_t n = hi - lo, rel = c - lo;
    if (mode == TI__MV_PAD_EDGE) return rel < 0 ? lo : hi - 1;
    if (mode == TI__MV_PAD_WRAP) return lo + ((rel % n) + n) % n;
    if (n == 1) return lo; /* reflect */
    int64_t period = 2 * (n - 1);
    rel = ((rel % period) + period) % period;
    return lo + (rel >= n ? period - rel : rel);
}

TI__PRIVATE ti_status ti__pad_exec(ti__kctx *k, const ti__pad_plan *p) {
    const ti_tensor *x = k->in[0], *y = k->out[0];
    size_t es = ti_dtype_size(x->dtype), total = ti__numel(y);
    const unsigned char *src = (const unsigned char *)x->data;
    unsigned char *dst = (unsigned char *)y->data;
    int r = x->rank;
    if (total == 0) return TI_OK;
    if (r == 0) {
        memcpy(dst, src, es);
        return TI_OK;
    }
    int64_t str[TI__MV_DIMS], lo[TI__MV_DIMS], hi[TI__MV_DIMS], idx[TI__MV_DIMS];
    ti__strides(r, x->shape, str);
    for (int i = 0; i < r; i++) {
        lo[i] = TI__MAX(0, -p->pb[i]);
        hi[i] = x->shape[i] - TI__MAX(0, -p->pe[i]);
        idx[i] = 0;
    }
    int64_t n = y->shape[r - 1], pb = p->pb[r - 1];
    size_t rows = total / (size_t)n;
    for (size_t row = 0; row < rows; row++) {
        unsigned char *d = dst + row * (size_t)n * es;
        /* the input row of this output row, or none (constant fill) */
        int64_t off = 0;
        int fill = 0;
        for (int i = 0; i < r - 1; i++) {
            int64_t c = idx[i] - p->pb[i];
            if (c < lo[i] || c >= hi[i]) {
                if (p->mode == TI__MV_PAD_CONSTANT) fill = 1;
                else c = ti__pad_map(p->mode, c, lo[i], hi[i]);
            }
            off += c * str[i];
        }
        if (fill) {
            ti__mv_fill(d, (size_t)n, p->value, es);
        } else {
            const unsigned char *s = src + off * (int64_t)es;
            int64_t a = TI__MAX(0, lo[r - 1] + pb), b = TI__MIN(n, hi[r - 1] + pb); /* copied */
            if (b > a)
                memcpy(d + a * (int64_t)es, s + (a - pb) * (int64_t)es, (size_t)(b - a) * es);
            else
                a = b = 0;
            for (int64_t j = 0; j < n; j++) {
                if (j == a && b > a) j = b;
                if (j >= n) break;
                if (p->mode == TI__MV_PAD_CONSTANT) memcpy(d + j * (int64_t)es, p->value, es);
                else memcpy(d + j * (int64_t)es,
                            s + ti__pad_map(p->mode, j - pb, lo[r - 1], hi[r - 1]) * (int64_t)es,
                            es);
            }
        }
        for (int i = r - 2; i >= 0; i--) {
            if (++idx[i] < y->shape[i]) break;
            idx[i] = 0;
        }
    }
    return TI_OK;
}

TI__PRIVATE int ti__pad_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    ti__pad_plan p;
    int st = ti__pad_params(k, &p);
    if (st != TI_OK) return st;
    const ti_tensor *x = k->in[0];
    int64_t d[TI__MV_DIMS];
    for (int i = 0; i < x->rank; i++) d[i] = x->shape[i] + p.pb[i] + p.pe[i];
    return ti__mv_set(k, 0, x->dtype, x->rank, d);
}

TI__PRIVATE ti_status ti__pad_run(ti__kctx *k) {
    ti__pad_plan p;
    int st = ti__pad_params(k, &p);
    if (st != TI_OK) return (ti_status)st;
    return ti__pad_exec(k, &p);
}

/* CenterCropPad: a Pad with zeros whose pads centre the input (floor on the leading side). */
TI__PRIVATE int ti__ccp_params(ti__kctx *k, ti__pad_plan *p) {
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    const ti_tensor *x = k->in[0];
    size_t es;
    ti_status st = ti__mv_esize(k, x, &es);
    if (st != TI_OK) return st;
    TI__NEED(k, k->in[1]);
    int64_t v[TI__MV_DIMS], ax[TI__MV_DIMS];
    int n = ti__mv_read_ints(k->in[1], v, TI__MV_DIMS), na;
    const int64_t *a = ti__attr_ints(k->node, "axes", &na);
    if (a == NULL) {
        na = x->rank;
        for (int i = 0; i < na; i++) ax[i] = i;
    } else if (na <= TI__MV_DIMS) {
        for (int i = 0; i < na; i++) ax[i] = a[i];
    }
    if (n < 0 || na != n)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "shape has %d values for %d axes", n, na);
    memset(p, 0, sizeof *p);
    p->mode = TI__MV_PAD_CONSTANT;
    for (int i = 0; i < n; i++) {
        int axis = 0;
        if (!ti__mv_axis(ax[i], x->rank, &axis))
            return ti__kfail(k, TI_ERR_BAD_MODEL, "axis %lld is out of range for rank %d",
                             (long long)ax[i], x->rank);
        if (v[i] < 0)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "shape[%d] = %lld is negative", i,
                             (long long)v[i]);
        int64_t dim = x->shape[axis];
        p->pb[axis] = v[i] < dim ? -((dim - v[i]) / 2) : (v[i] - dim) / 2;
        p->pe[axis] = v[i] - dim - p->pb[axis];
    }
    return TI_OK;
}

TI__PRIVATE int ti__ccp_shape(ti__kctx *k) {
    ti__pad_plan p;
    int st = ti__ccp_params(k, &p);
    if (st != TI_OK) return st;
    const ti_tensor *x = k->in[0];
    int64_t d[TI__MV_DIMS];
    for (int i = 0; i < x->rank; i++) d[i] = x->shape[i] + p.pb[i] + p.pe[i];
    return ti__mv_set(k, 0, x->dtype, x->rank, d);
}

TI__PRIVATE ti_status ti__ccp_run(ti__kctx *k) {
    ti__pad_plan p;
    int st = ti__ccp_params(k, &p);
    if (st != TI_OK) return (ti_status)st;
    return ti__pad_exec(k, &p);
}

/* ---- DepthToSpace, SpaceToDepth -------------------------------------------------------- */

/* Both as a 6-D strided gather over the output. crd: the CRD channel order. */
TI__PRIVATE int ti__d2s_check(ti__kctx *k, int64_t *bs, int *crd) {
    TI__REQUIRE_INPUT(k, 0);
    const ti_tensor *x = k->in[0];
    size_t es;
    ti_status st = ti__mv_esize(k, x, &es);
    if (st != TI_OK) return st;
    if (x->rank != 4)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "input has rank %d, expected 4", x->rank);
    *bs = ti__attr_i(k->node, "blocksize", 0);
    if (*bs <= 0 || *bs > 65536)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "blocksize %lld is not positive",
                         (long long)*bs);
    const char *mode = ti__attr_s(k->node, "mode", "DCR");
    if (strcmp(mode, "DCR") != 0 && strcmp(mode, "CRD") != 0)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "mode '%s' is not supported", mode);
    *crd = strcmp(mode, "CRD") == 0;
    return TI_OK;
}

TI__PRIVATE int ti__d2s_shape(ti__kctx *k) {
    int64_t bs = 0;
    int crd, st = ti__d2s_check(k, &bs, &crd);
    if (st != TI_OK) return st;
    const int64_t *s = k->in[0]->shape;
    if (s[1] % (bs * bs) != 0)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "channels %lld are not a multiple of %lld",
                         (long long)s[1], (long long)(bs * bs));
    int64_t d[4] = {s[0], s[1] / (bs * bs), s[2] * bs, s[3] * bs};
    return ti__mv_set(k, 0, k->in[0]->dtype, 4, d);
}

TI__PRIVATE ti_status ti__d2s_run(ti__kctx *k) {
    int64_t bs = 0;
    int crd;
    ti__d2s_check(k, &bs, &crd);
    const ti_tensor *x = k->in[0];
    const int64_t *s = x->shape;
    int64_t c = s[1] / (bs * bs), sc = s[2] * s[3];
    /* output viewed as [n, c, h, b1, w, b2]; the input channel is (b1*bs + b2)*c + ci (DCR)
     * or ci*bs*bs + b1*bs + b2 (CRD) */
    int64_t d[6] = {s[0], c, s[2], bs, s[3], bs};
    int64_t st[6] = {s[1] * sc, crd ? bs * bs * sc : sc, s[3], crd ? bs * sc : bs * c * sc,
                     1, crd ? sc : c * sc};
    ti__mv_strided_copy(k, k->out[0]->data, x->data, ti_dtype_size(x->dtype), 6, d, st, 0);
    return TI_OK;
}

TI__PRIVATE int ti__s2d_shape(ti__kctx *k) {
    int64_t bs = 0;
    int crd, st = ti__d2s_check(k, &bs, &crd);
    if (st != TI_OK) return st;
    const int64_t *s = k->in[0]->shape;
    if (s[2] % bs != 0 || s[3] % bs != 0)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "spatial dims %lld x %lld are not multiples of %lld",
                         (long long)s[2], (long long)s[3], (long long)bs);
    int64_t d[4] = {s[0], s[1] * bs * bs, s[2] / bs, s[3] / bs};
    return ti__mv_set(k, 0, k->in[0]->dtype, 4, d);
}

TI__PRIVATE ti_status ti__s2d_run(ti__kctx *k) {
    int64_t bs = 0;
    int crd;
    ti__d2s_check(k, &bs, &crd);
    const ti_tensor *x = k->in[0];
    const int64_t *s = x->shape;
    int64_t sc = s[2] * s[3], sh = s[3];
    /* output viewed as [n, b1, b2, c, h', w'] (DCR) or [n, c, b1, b2, h', w'] (CRD) */
    int64_t d[6], st[6];
    d[0] = s[0];
    st[0] = s[1] * sc;
    int cpos = crd ? 1 : 3, b1 = crd ? 2 : 1;
    d[cpos] = s[1];
    st[cpos] = sc;
    d[b1] = bs;
    st[b1] = sh;
    d[b1 + 1] = bs;
    st[b1 + 1] = 1;
    d[4] = s[2] / bs;
    st[4] = bs * sh;
    d[5] = s[3] / bs;
    st[5] = bs;
    ti__mv_strided_copy(k, k->out[0]->data, x->data, ti_dtype_size(x->dtype), 6, d, st, 0);
    return TI_OK;
}

/* ---- Trilu, ReverseSequence ------------------------------------------------------------ */

TI__PRIVATE int ti__trilu_shape(ti__kctx *k) {
    int st = ti__identity_shape(k);
    if (st != TI_OK) return st;
    if (k->in[0]->rank < 2)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "input has rank %d, expected at least 2",
                         k->in[0]->rank);
    return TI_OK;
}

TI__PRIVATE ti_status ti__trilu_run(ti__kctx *k) {
    const ti_tensor *x = k->in[0];
    int r = x->rank;
    int64_t rows = x->shape[r - 2], cols = x->shape[r - 1], kk = 0;
    if (k->n_in > 1 && k->in[1] != NULL && ti__numel(k->in[1]) > 0) kk = ti__get_i64(k->in[1], 0);
    int upper = ti__attr_i(k->node, "upper", 1) != 0;
    int64_t lim = rows + cols + 1; /* clamp k so that i + k cannot overflow */
    kk = kk < -lim ? -lim : (kk > lim ? lim : kk);
    size_t es = ti_dtype_size(x->dtype);
    size_t mats = rows * cols == 0 ? 0 : ti__numel(x) / (size_t)(rows * cols);
    ti__mv_copy_run(k);
    unsigned char *y = (unsigned char *)k->out[0]->data;
    for (size_t m = 0; m < mats; m++)
        for (int64_t i = 0; i < rows; i++) {
            unsigned char *row = y + ((int64_t)m * rows + i) * cols * (int64_t)es;
            /* upper keeps j >= i + k; lower keeps j <= i + k */
            int64_t a = upper ? 0 : TI__MAX(0, i + kk + 1);
            int64_t b = upper ? TI__MIN(cols, TI__MAX(0, i + kk)) : cols;
            if (b > a) memset(row + a * (int64_t)es, 0, (size_t)(b - a) * es);
        }
    return TI_OK;
}

TI__PRIVATE int ti__revseq_axes(ti__kctx *k, int *ba, int *ta) {
    int64_t b = ti__attr_i(k->node, "batch_axis", 1), t = ti__attr_i(k->node, "time_axis", 0);
    if ((b != 0 && b != 1) || (t != 0 && t != 1) || b == t)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "batch_axis %lld and time_axis %lld must be 0 and "
                         "1 in some order", (long long)b, (long long)t);
    *ba = (int)b;
    *ta = (int)t;
    return TI_OK;
}

TI__PRIVATE int ti__revseq_shape(ti__kctx *k) {
    int st = ti__identity_shape(k), ba = 0, ta = 0;
    if (st == TI_OK) st = ti__revseq_axes(k, &ba, &ta);
    if (st != TI_OK) return st;
    TI__REQUIRE_INPUT(k, 1);
    const ti_tensor *x = k->in[0];
    if (x->rank < 2 || k->in[1]->rank != 1 || k->in[1]->shape[0] != x->shape[ba])
        return ti__kfail(k, TI_ERR_BAD_MODEL, "input rank %d or sequence_lens shape does not "
                         "match the batch dim", x->rank);
    return TI_OK;
}

TI__PRIVATE ti_status ti__revseq_run(ti__kctx *k) {
    const ti_tensor *x = k->in[0], *lens = k->in[1];
    int ba = 0, ta = 0;
    ti__revseq_axes(k, &ba, &ta);
    int64_t batch = x->shape[ba], time = x->shape[ta];
    size_t es = ti_dtype_size(x->dtype), inner = 1;
    for (int i = 2; i < x->rank; i++) inner *= (size_t)x->shape[i];
    for (int64_t b = 0; b < batch; b++) {
        int64_t len = ti__get_i64(lens, (size_t)b);
        if (len < 0 || len > time)
            return ti__kfail(k, TI_ERR_INVALID_ARGUMENT, "sequence_lens[%lld] = %lld is outside "
                             "[0, %lld]", (long long)b, (long long)len, (long long)time);
    }
    /* rows of `inner` elements at (b, t); row index = d0 * shape[1] + d1 */
    for (int64_t b = 0; b < batch; b++) {
        int64_t len = ti__get_i64(lens, (size_t)b);
        for (int64_t t = 0; t < time; t++) {
            int64_t ts = t < len ? len - 1 - t : t;
            int64_t dro = ta == 0 ? t * batch + b : b * time + t;
            int64_t sro = ta == 0 ? ts * batch + b : b * time + ts;
            ti__mv_copy_elems((unsigned char *)k->out[0]->data + (size_t)dro * inner * es,
                              (const unsigned char *)x->data + (size_t)sro * inner * es, inner, es);
        }
    }
    return TI_OK;
}

/* ---- Col2Im ---------------------------------------------------------------------------- */

/* input [N, C * prod(block), L] -> output [N, C, image...], summing overlapping blocks. */
typedef struct ti__col2im_plan {
    int ns; /* spatial dims */
    int64_t img[TI__MV_DIMS], blk[TI__MV_DIMS], dil[TI__MV_DIMS], str[TI__MV_DIMS];
    int64_t pad[TI__MV_DIMS], cnt[TI__MV_DIMS]; /* block positions per dim */
    int64_t c, blocks, l;
} ti__col2im_plan;

TI__PRIVATE int ti__col2im_params(ti__kctx *k, ti__col2im_plan *p) {
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    TI__REQUIRE_INPUT(k, 2);
    const ti_tensor *x = k->in[0];
    if (!ti__dtype_is_float(x->dtype))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "dtype %s is not supported",
                         ti_dtype_name(x->dtype));
    TI__NEED(k, k->in[1]);
    TI__NEED(k, k->in[2]);
    int ni = ti__mv_read_ints(k->in[1], p->img, TI__MV_DIMS - 2);
    int nb = ti__mv_read_ints(k->in[2], p->blk, TI__MV_DIMS - 2);
    if (ni <= 0 || ni != nb || x->rank != 3)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "image_shape (%d) and block_shape (%d) must have "
                         "the same length, input rank %d must be 3", ni, nb, x->rank);
    p->ns = ni;
    int nd, nst, np;
    const int64_t *dil = ti__attr_ints(k->node, "dilations", &nd);
    const int64_t *str = ti__attr_ints(k->node, "strides", &nst);
    const int64_t *pad = ti__attr_ints(k->node, "pads", &np);
    if ((dil && nd != ni) || (str && nst != ni) || (pad && np != 2 * ni))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "dilations/strides/pads lengths do not match %d "
                         "spatial dims", ni);
    p->blocks = 1;
    p->l = 1;
    for (int i = 0; i < ni; i++) {
        p->dil[i] = dil ? dil[i] : 1;
        p->str[i] = str ? str[i] : 1;
        p->pad[i] = pad ? pad[i] : 0;
        int64_t pe = pad ? pad[ni + i] : 0;
        if (p->dil[i] <= 0 || p->str[i] <= 0 || p->img[i] <= 0 || p->blk[i] <= 0 ||
            p->pad[i] < 0 || pe < 0 || p->img[i] > ((int64_t)1 << 40) ||
            p->blk[i] > ((int64_t)1 << 20) || p->dil[i] > ((int64_t)1 << 20))
            return ti__kfail(k, TI_ERR_BAD_MODEL, "bad image/block/stride/dilation/pad on "
                             "spatial dim %d", i);
        int64_t span = p->dil[i] * (p->blk[i] - 1) + 1;
        int64_t room = p->img[i] + p->pad[i] + pe - span;
        p->cnt[i] = room < 0 ? 0 : room / p->str[i] + 1;
        p->blocks *= p->blk[i];
        p->l *= p->cnt[i];
    }
    if (x->shape[1] % p->blocks != 0 || x->shape[2] != p->l)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "input shape [%lld, %lld, %lld] does not match "
                         "%lld block elements and %lld block positions", (long long)x->shape[0],
                         (long long)x->shape[1], (long long)x->shape[2], (long long)p->blocks,
                         (long long)p->l);
    p->c = x->shape[1] / p->blocks;
    return TI_OK;
}

TI__PRIVATE int ti__col2im_shape(ti__kctx *k) {
    ti__col2im_plan p;
    int st = ti__col2im_params(k, &p);
    if (st != TI_OK) return st;
    int64_t d[TI__MV_DIMS];
    d[0] = k->in[0]->shape[0];
    d[1] = p.c;
    for (int i = 0; i < p.ns; i++) d[2 + i] = p.img[i];
    return ti__mv_set(k, 0, k->in[0]->dtype, 2 + p.ns, d);
}

TI__PRIVATE ti_status ti__col2im_run(ti__kctx *k) {
    ti__col2im_plan p;
    int st = ti__col2im_params(k, &p);
    if (st != TI_OK) return (ti_status)st;
    const ti_tensor *x = k->in[0];
    ti_tensor *y = k->out[0];
    size_t total = ti__numel(y), img = 1;
    for (int i = 0; i < p.ns; i++) img *= (size_t)p.img[i];
    for (size_t i = 0; i < total; i++) ti__set_f64(y, i, 0.0);
    int f32 = x->dtype == TI_DTYPE_F32;
    size_t planes = (size_t)x->shape[0] * (size_t)p.c, src = 0;
    for (size_t nc = 0; nc < planes; nc++) {
        size_t base = nc * img;
        for (int64_t b = 0; b < p.blocks; b++) {
            int64_t bi[TI__MV_DIMS], rem = b;
            for (int i = p.ns - 1; i >= 0; i--) {
                bi[i] = rem % p.blk[i];
                rem /= p.blk[i];
            }
            for (int64_t l = 0; l < p.l; l++, src++) {
                int64_t li = l, off = 0, mul = 1;
                int inside = 1;
                for (int i = p.ns - 1; i >= 0; i--) {
                    int64_t pos = (li % p.cnt[i]) * p.str[i] - p.pad[i] + bi[i] * p.dil[i];
                    li /= p.cnt[i];
                    if (pos < 0 || pos >= p.img[i]) inside = 0;
                    off += pos * mul;
                    mul *= p.img[i];
                }
                if (!inside) continue;
                if (f32) ((float *)y->data)[base + (size_t)off] += ((const float *)x->data)[src];
                else ti__set_f64(y, base + (size_t)off,
                                 ti__get_f64(y, base + (size_t)off) + ti__get_f64(x, src));
            }
        }
    }
    return TI_OK;
}

TI__PRIVATE const ti__op ti__ops_movement[] = {
    {"Reshape", ti__reshape_shape, ti__mv_copy_run, NULL, 0},
    {"Flatten", ti__flatten_shape, ti__mv_copy_run, NULL, 0},
    {"Squeeze", ti__squeeze_shape, ti__mv_copy_run, NULL, 0},
    {"Unsqueeze", ti__unsqueeze_shape, ti__mv_copy_run, NULL, 0},
    {"Identity", ti__identity_shape, ti__mv_copy_run, NULL, 0},
    {"Dropout", ti__dropout_shape, ti__dropout_run, NULL, 0},
    {"Transpose", ti__transpose_shape, ti__transpose_run, NULL, 0},
    {"Concat", ti__concat_shape, ti__concat_run, NULL, 0},
    {"Split", ti__split_shape, ti__split_run, NULL, 0},
    {"Slice", ti__slice_shape, ti__slice_run, NULL, 0},
    {"Expand", ti__expand_shape, ti__expand_run, NULL, 0},
    {"Tile", ti__tile_shape, ti__tile_run, NULL, 0},
    {"Pad", ti__pad_shape, ti__pad_run, NULL, 0},
    {"CenterCropPad", ti__ccp_shape, ti__ccp_run, NULL, 0},
    {"DepthToSpace", ti__d2s_shape, ti__d2s_run, NULL, 0},
    {"SpaceToDepth", ti__s2d_shape, ti__s2d_run, NULL, 0},
    {"Trilu", ti__trilu_shape, ti__trilu_run, NULL, 0},
    {"ReverseSequence", ti__revseq_shape, ti__revseq_run, NULL, 0},
    {"Col2Im", ti__col2im_shape, ti__col2im_run, NULL, 0},
    {NULL, NULL, NULL, NULL, 0}
};
