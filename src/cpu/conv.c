/* Convolutions: Conv, ConvTranspose (1-D to 3-D spatial, groups, dilations, strides, pads,
 * auto_pad) and ConvInteger. float32 Conv picks a path (ti__conv_path): a GEMM on X for
 * pointwise convs, a direct depthwise kernel or Winograd (conv_fast.c), im2col tiles that
 * stay in cache + ti__sgemm_ref (gemm.c), or a direct loop for other depthwise-like groups;
 * other float dtypes use a slow generic loop. Spatial shapes are handled as 3-D (D, H, W) with leading 1s, so 1-D and
 * 2-D are special cases. Must not allocate: tiles are sized to the scratch the session
 * gives (ti__conv_scratch). */

/* Defined in gemm.c, which comes later in the amalgamation. */
TI__PRIVATE void ti__sgemm_ref(int transA, int transB, size_t M, size_t N, size_t K, float alpha,
                               const float *A, size_t lda, const float *B, size_t ldb, float beta,
                               float *C, size_t ldc, ti__threadpool *tp);
TI__PRIVATE void ti__sgemm_ex(int transA, int transB, size_t M, size_t N, size_t K, float alpha,
                              const float *A, size_t lda, const float *B, size_t ldb, float beta,
                              float *C, size_t ldc, const ti__gemm_epi *epi, ti__threadpool *tp);
TI__PRIVATE void ti__sgemm_conv(int transA, size_t M, size_t N, size_t K, const float *A,
                                size_t lda, const float *apanel, int mr, const float *B,
                                size_t ldb, int b_input, float beta, float *C, size_t ldc,
                                const ti__gemm_epi *epi, float *ws, size_t ws_floats,
                                ti__threadpool *tp);
TI__PRIVATE size_t ti__sgemm_conv_ws_floats(size_t M, size_t N, size_t K, ti__threadpool *tp);
TI__PRIVATE size_t ti__sgemm_apanel_floats(size_t M, size_t K, size_t mr);
TI__PRIVATE void ti__sgemm_pack_apanel(int transA, size_t M, size_t K, const float *A,
                                       size_t lda, size_t mr, float *dst);
TI__PRIVATE int ti__sgemm_panel_mr(void);
TI__PRIVATE int ti__sgemm_set_conflicts(size_t stride);
TI__PRIVATE size_t ti__sgemm_bpanel_floats(size_t K, size_t N, size_t nr);
TI__PRIVATE int ti__sgemm_panel_nr(void);
TI__PRIVATE const ti__sgemm_isa *ti__sgemm_pick_isa(void);
TI__PRIVATE void ti__sgemm_pack_bpanel(int transB, size_t K, size_t N, const float *B,
                                       size_t ldb, size_t nr, float *dst);
TI__PRIVATE int ti__sgemm_bpanel(int transA, size_t M, size_t N, size_t K, const float *A,
                                 size_t lda, const float *bpanel, int nr, size_t kc, float *C,
                                 size_t ldc, float *ty, size_t ldty, const ti__gemm_epi *tepi,
                                 int ty_sum, ti__threadpool *tp);
TI__PRIVATE int ti__sgemm_bpanel_part(int transA, size_t M, size_t N, size_t K, const float *A,
                                      size_t lda, const float *bpanel, int nr, size_t kp,
                                      size_t k0, float *C, size_t ldc);
TI__PRIVATE void ti__sgemm_store_t_sum(const float *c, const float *c2, size_t ldc, size_t h,
                                       size_t w, float *t, size_t ldt, int sum,
                                       const ti__gemm_epi *epi);
/* Defined in conv_fast.c, which comes later in the amalgamation. */
struct ti__convp;
TI__PRIVATE int ti__conv_dw_ok(const struct ti__convp *p);
TI__PRIVATE void ti__conv_dw_run(ti__kctx *k, const struct ti__convp *p);
TI__PRIVATE int ti__conv_wino_ok(const struct ti__convp *p, int threads);
TI__PRIVATE int ti__wino_kind(int t);
TI__PRIVATE size_t ti__conv_wino_scratch(const ti__kctx *k, const struct ti__convp *p);
TI__PRIVATE int ti__conv_wino_run(ti__kctx *k, const struct ti__convp *p);
TI__PRIVATE int ti__conv_fewc_ok(const struct ti__convp *p);
TI__PRIVATE int ti__conv_apanel_ok(const struct ti__convp *p, int mr);
TI__PRIVATE int ti__conv_fewc_run(ti__kctx *k, const struct ti__convp *p);
TI__PRIVATE size_t ti__conv_fewc_scratch(const ti__kctx *k, const struct ti__convp *p);
TI__PRIVATE size_t ti__conv_pool_scratch(const ti__kctx *k, const struct ti__convp *p);
TI__PRIVATE size_t ti__conv_pwdw_scratch(const ti__kctx *k, const struct ti__convp *p);
TI__PRIVATE ti_status ti__conv_pwdw_run(ti__kctx *k, const struct ti__convp *p);
TI__PRIVATE ti_status ti__conv_pool_run(ti__kctx *k, const struct ti__convp *p);

/* Floats of im2col / col2im scratch to aim for (8 MiB): large tiles make large GEMMs, which
 * split well across threads, and few tiles mean few synchronisations. ConvTranspose, and
 * Conv when there are too few cache tiles to share among the threads. */
#define TI__CONV_TILE_FLOATS ((size_t)1 << 21)
/* Floats of one thread's im2col tile when each thread runs its own tiles (1 MiB: an L2 of
 * the machines measured): the GEMM reads the tile from the cache the copy left it in. */
#define TI__CONV_CTILE_FLOATS ((size_t)1 << 18)

/* Geometry of a (transposed) convolution, and of a pool's window (pool.c: n and c its input's,
 * m, group, cg and mg unused). Spatial arrays are D, H, W: slot 3 - nd + i holds spatial axis
 * i; unused leading slots are size 1, stride 1, no padding. */
typedef struct ti__convp {
    int nd;
    int64_t n, c, m, group, cg, mg; /* batch, in/out channels, groups, per group */
    int64_t in[3], k[3], s[3], d[3], pb[3], pe[3], out[3];
    size_t in_sp, out_sp, kprod; /* elements of one input / output plane, kernel volume */
} ti__convp;

/* ---- Sliding windows: what Conv, ConvTranspose and the pools (pool.c) share ----------- */

/* Bound of the window attributes (kernel, stride, dilation, pads): a larger one is no real
 * model's, and the bound keeps the output-size arithmetic below within int64_t. */
#define TI__WIN_MAX ((int64_t)1 << 31)

/* An INTS attribute of want values (2*nd for pads) or def for each; fails on a wrong count. */
TI__PRIVATE ti_status ti__win_ints(ti__kctx *k, const char *name, int want, int64_t def,
                                   int64_t *out) {
    int cnt;
    const int64_t *v = ti__attr_ints(k->node, name, &cnt);
    if (v != NULL && cnt != want)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "%s has %d values, expected %d", name, cnt, want);
    for (int i = 0; i < want; i++) out[i] = v != NULL ? v[i] : def;
    return TI_OK;
}

/* auto_pad as *mode: 0 NOTSET (or empty), 1 SAME_UPPER, 2 SAME_LOWER, 3 VALID. */
TI__PRIVATE ti_status ti__win_auto_pad(ti__kctx *k, int *mode) {
    const char *ap = ti__attr_s(k->node, "auto_pad", "NOTSET");
    if (strcmp(ap, "NOTSET") == 0 || ap[0] == 0) *mode = 0;
    else if (strcmp(ap, "SAME_UPPER") == 0) *mode = 1;
    else if (strcmp(ap, "SAME_LOWER") == 0) *mode = 2;
    else if (strcmp(ap, "VALID") == 0) *mode = 3;
    else return ti__kfail(k, TI_ERR_BAD_MODEL, "auto_pad '%s' is not one of NOTSET, SAME_UPPER, "
                          "SAME_LOWER, VALID", ap);
    return TI_OK;
}

/* Checks spatial axis i's kernel ks, stride st and dilation dl (1 .. TI__WIN_MAX) and its
 * pads pb, pe (0 .. TI__WIN_MAX). */
TI__PRIVATE ti_status ti__win_check(ti__kctx *k, int i, int64_t ks, int64_t st, int64_t dl,
                                    int64_t pb, int64_t pe) {
    if (ks < 1 || st < 1 || dl < 1 || ks > TI__WIN_MAX || st > TI__WIN_MAX || dl > TI__WIN_MAX)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "kernel %lld, stride %lld, dilation %lld on axis %d "
                         "must be 1 to 2^31", (long long)ks, (long long)st, (long long)dl, i);
    if (pb < 0 || pe < 0 || pb > TI__WIN_MAX || pe > TI__WIN_MAX)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "pads %lld+%lld on axis %d must be 0 to 2^31",
                         (long long)pb, (long long)pe, i);
    return TI_OK;
}

/* The error for an output size out < 1 on spatial axis i. */
TI__PRIVATE ti_status ti__win_empty(ti__kctx *k, int i, int64_t out, int64_t in, int64_t ks,
                                    int64_t st, int64_t dl, int64_t pb, int64_t pe) {
    return ti__kfail(k, TI_ERR_BAD_MODEL,
                     "output size on spatial axis %d would be %lld (input %lld, kernel %lld, "
                     "stride %lld, dilation %lld, pads %lld+%lld)",
                     i, (long long)out, (long long)in, (long long)ks, (long long)st, (long long)dl,
                     (long long)pb, (long long)pe);
}

/* Stores spatial axis i of p->nd (slot 3 - nd + i): input size, kernel, stride, dilation,
 * pads and output size. */
TI__PRIVATE void ti__win_set(ti__convp *p, int i, int64_t in, int64_t ks, int64_t st,
                             int64_t dl, int64_t pb, int64_t pe, int64_t out) {
    int j = 3 - p->nd + i;
    p->in[j] = in;
    p->k[j] = ks;
    p->s[j] = st;
    p->d[j] = dl;
    p->pb[j] = pb;
    p->pe[j] = pe;
    p->out[j] = out;
}

/* After ti__win_set on each axis: the unused leading slots (size 1, stride 1, no padding)
 * and the plane and kernel sizes. */
TI__PRIVATE void ti__win_done(ti__convp *p) {
    for (int j = 0; j < 3 - p->nd; j++) {
        p->in[j] = p->k[j] = p->s[j] = p->d[j] = p->out[j] = 1;
        p->pb[j] = p->pe[j] = 0;
    }
    p->in_sp = (size_t)(p->in[0] * p->in[1] * p->in[2]);
    p->out_sp = (size_t)(p->out[0] * p->out[1] * p->out[2]);
    p->kprod = (size_t)(p->k[0] * p->k[1] * p->k[2]);
}

/* Output size *out of spatial axis i of a Conv or pool window over in values (ONNX's rules,
 * ceil_mode for the pools; the arguments checked by ti__win_check). *pb, *pe hold the pads
 * attribute on entry and the pads used on return: SAME_* computes them, VALID drops them. */
TI__PRIVATE ti_status ti__win_axis(ti__kctx *k, int i, int64_t in, int64_t ks, int64_t st,
                                   int64_t dl, int mode, int ceil_mode, int64_t *pb,
                                   int64_t *pe, int64_t *out) {
    int64_t ek = (ks - 1) * dl + 1, o;
    if (mode == 1 || mode == 2) { /* the same for either ceil_mode */
        o = (in + st - 1) / st;
        int64_t tot = (o - 1) * st + ek - in;
        if (tot < 0) tot = 0;
        *pb = mode == 1 ? tot / 2 : tot - tot / 2;
        *pe = tot - *pb;
    } else {
        if (mode == 3) *pb = *pe = 0;
        int64_t span = in + *pb + *pe - ek;
        if (span < 0) o = 0;
        else if (!ceil_mode) o = span / st + 1;
        else {
            o = (span + st - 1) / st + 1;
            /* the last window must start inside the input or the left padding */
            if ((o - 1) * st >= in + *pb) o--;
        }
    }
    *out = o;
    return o > 0 ? TI_OK : ti__win_empty(k, i, o, in, ks, st, dl, *pb, *pe);
}

/* A Conv's attributes for nd spatial axes, checked: strides st, dilations dl, pads (nd
 * begins, then nd ends) and *mode, auto_pad's (0 NOTSET, 1 SAME_UPPER, 2 SAME_LOWER,
 * 3 VALID); kernel_shape, where given, must be W's. */
TI__PRIVATE ti_status ti__conv_attrs(ti__kctx *k, int nd, const ti_tensor *w, int64_t *st,
                                     int64_t *dl, int64_t *pads, int *mode) {
    ti_status e;
    if ((e = ti__win_ints(k, "strides", nd, 1, st)) != TI_OK) return e;
    if ((e = ti__win_ints(k, "dilations", nd, 1, dl)) != TI_OK) return e;
    if ((e = ti__win_ints(k, "pads", 2 * nd, 0, pads)) != TI_OK) return e;
    int kcnt;
    const int64_t *kattr = ti__attr_ints(k->node, "kernel_shape", &kcnt);
    if (kattr != NULL && kcnt != nd)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "kernel_shape has %d values, expected %d", kcnt,
                         nd);
    for (int i = 0; i < nd; i++) {
        if (kattr != NULL && kattr[i] != w->shape[2 + i])
            return ti__kfail(k, TI_ERR_BAD_MODEL,
                             "kernel_shape[%d] is %lld but the weight has %lld", i,
                             (long long)kattr[i], (long long)w->shape[2 + i]);
        if ((e = ti__win_check(k, i, w->shape[2 + i], st[i], dl[i], pads[i], pads[nd + i])) !=
            TI_OK)
            return e;
    }
    return ti__win_auto_pad(k, mode);
}

/* Planning (ti__pass_prepack): a Conv whose weight is a constant gets its attributes
 * decoded and checked once, into node->conv_*, so that runs look up no attribute by name
 * (strcmp through the list was 0.5 % of MobileNetV3-Small's run, perf). Attributes that
 * fail are left to each run to report, as before. */
TI__PRIVATE void ti__conv_decode(ti__kctx *k, ti__node *node) {
    const ti_tensor *w = k->n_in > 1 ? k->in[1] : NULL;
    node->conv_nd = 0;
    if (w == NULL || w->rank < 3 || w->rank > 5) return;
    int nd = w->rank - 2, mode;
    int64_t st[3] = {0, 0, 0}, dl[3] = {0, 0, 0}, pads[6] = {0, 0, 0, 0, 0, 0};
    ti_error quiet; /* a failure here is reported by the run */
    ti_error *err = k->err;
    k->err = &quiet;
    int64_t group = ti__attr_i(node, "group", 1);
    ti_status e = ti__conv_attrs(k, nd, w, st, dl, pads, &mode);
    k->err = err;
    if (e != TI_OK) return;
    memcpy(node->conv_st, st, sizeof st);
    memcpy(node->conv_dl, dl, sizeof dl);
    memcpy(node->conv_pads, pads, sizeof pads);
    node->conv_mode = mode;
    node->conv_group = group;
    node->conv_nd = nd;
}

/* Reads and checks the attributes and the X / W shapes; fills p. transpose: W is
 * [C, M/group, k...] (ConvTranspose) instead of [M, C/group, k...]. */
TI__PRIVATE ti_status ti__conv_params(ti__kctx *k, int transpose, ti__convp *p) {
    const ti_tensor *x = k->in[0], *w = k->in[1];
    memset(p, 0, sizeof *p);
    if (x->rank < 3)
        return ti__kfail(k, TI_ERR_BAD_MODEL,
                         "input has %d dims, expected at least 3 (N, C, spatial...)", x->rank);
    if (w->rank != x->rank)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "weight has %d dims, expected %d", w->rank,
                         x->rank);
    int nd = x->rank - 2;
    if (nd > 3)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "%d spatial dims (at most 3 are supported)", nd);
    p->nd = nd;
    const ti__node *cn = k->node;
    int cached = !transpose && cn->conv_nd == nd; /* decoded at planning: ti__conv_decode */
    p->group = cached ? cn->conv_group : ti__attr_i(cn, "group", 1);
    if (p->group < 1) return ti__kfail(k, TI_ERR_BAD_MODEL, "group is %lld", (long long)p->group);
    p->n = x->shape[0];
    p->c = x->shape[1];
    if (!transpose) {
        p->m = w->shape[0];
        if (w->shape[1] * p->group != p->c)
            return ti__kfail(k, TI_ERR_BAD_MODEL,
                             "input has %lld channels, weight expects %lld (W[1]=%lld x "
                             "group=%lld)",
                             (long long)p->c, (long long)(w->shape[1] * p->group),
                             (long long)w->shape[1], (long long)p->group);
        if (p->m % p->group != 0)
            return ti__kfail(k, TI_ERR_BAD_MODEL,
                             "weight has %lld output channels, not divisible by group %lld",
                             (long long)p->m, (long long)p->group);
    } else {
        if (w->shape[0] != p->c)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "input has %lld channels, weight has %lld",
                             (long long)p->c, (long long)w->shape[0]);
        if (p->c % p->group != 0)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "%lld input channels not divisible by group "
                             "%lld", (long long)p->c, (long long)p->group);
        p->m = w->shape[1] * p->group;
    }
    p->cg = p->c / p->group;
    p->mg = p->m / p->group;
    int64_t ks[3], st[3], dl[3], pads[6], opad[3], oshape[3];
    ti_status e;
    int mode; /* 0 NOTSET, 1 SAME_UPPER, 2 SAME_LOWER, 3 VALID */
    for (int i = 0; i < nd; i++) ks[i] = w->shape[2 + i];
    if (cached) {
        memcpy(st, cn->conv_st, sizeof st);
        memcpy(dl, cn->conv_dl, sizeof dl);
        memcpy(pads, cn->conv_pads, sizeof pads);
        mode = cn->conv_mode;
    } else if ((e = ti__conv_attrs(k, nd, w, st, dl, pads, &mode)) != TI_OK) {
        return e;
    }
    int ocnt = 0;
    const int64_t *os = NULL;
    if (transpose) {
        if ((e = ti__win_ints(k, "output_padding", nd, 0, opad)) != TI_OK) return e;
        os = ti__attr_ints(k->node, "output_shape", &ocnt);
        if (os != NULL && ocnt != nd && ocnt != nd + 2)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "output_shape has %d values, expected %d",
                             ocnt, nd);
        for (int i = 0; i < nd && os != NULL; i++) oshape[i] = os[ocnt - nd + i];
    }
    for (int i = 0; i < nd; i++) {
        int64_t in = x->shape[2 + i], ek = (ks[i] - 1) * dl[i] + 1, pb = pads[i], pe = pads[nd + i];
        int64_t out;
        if (!transpose) {
            if ((e = ti__win_axis(k, i, in, ks[i], st[i], dl[i], mode, 0, &pb, &pe, &out)) !=
                TI_OK)
                return e;
        } else {
            /* bounds that keep full and tot within int64_t: ek <= 2^62 (ti__win_check) */
            if (opad[i] < 0 || opad[i] > TI__WIN_MAX)
                return ti__kfail(k, TI_ERR_BAD_MODEL, "output_padding %lld on axis %d must be "
                                 "0 to 2^31", (long long)opad[i], i);
            if (in - 1 > INT64_MAX / 4 / st[i] ||
                (os != NULL && (oshape[i] < 1 || oshape[i] > INT64_MAX / 4)))
                return ti__kfail(k, TI_ERR_BAD_MODEL, "output size on spatial axis %d is out of "
                                 "range", i);
            int64_t full = st[i] * (in - 1) + opad[i] + ek;
            if (os != NULL || mode == 1 || mode == 2) { /* pads follow from the output shape */
                out = os != NULL ? oshape[i] : in * st[i];
                int64_t tot = full - out; /* negative: extra output at the end */
                int64_t half = tot >= 0 ? tot / 2 : -((-tot + 1) / 2); /* floor(tot / 2) */
                pb = mode == 1 ? half : tot - half; /* ConvTranspose spec */
                pe = tot - pb;
            } else {
                if (mode == 3) pb = pe = 0;
                out = full - pb - pe;
            }
            if (out <= 0) return ti__win_empty(k, i, out, in, ks[i], st[i], dl[i], pb, pe);
        }
        ti__win_set(p, i, in, ks[i], st[i], dl[i], pb, pe, out);
    }
    ti__win_done(p);
    return TI_OK;
}

/* Sets the output shape [N, M, out...] after checking the bias. */
TI__PRIVATE ti_status ti__conv_set_out(ti__kctx *k, const ti__convp *p, const ti_tensor *bias,
                                       ti_dtype dt) {
    if (bias != NULL && (bias->rank != 1 || bias->shape[0] != p->m))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "bias has %lld elements (rank %d), expected %lld",
                         (long long)(bias->rank == 1 ? bias->shape[0] : (int64_t)ti__numel(bias)),
                         bias->rank, (long long)p->m);
    int64_t dims[5];
    dims[0] = p->n;
    dims[1] = p->m;
    for (int i = 0; i < p->nd; i++) dims[2 + i] = p->out[3 - p->nd + i];
    if (!ti__set_shape(k->out[0], dt, p->nd + 2, dims))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid output shape");
    return TI_OK;
}

TI__PRIVATE int ti__conv_float_ok(ti_dtype t) {
    return t == TI_DTYPE_F32 || t == TI_DTYPE_F64 || t == TI_DTYPE_F16 || t == TI_DTYPE_BF16;
}

TI__PRIVATE int ti__conv_shape_common(ti__kctx *k, int transpose) {
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    const ti_tensor *x = k->in[0], *w = k->in[1], *b = k->n_in > 2 ? k->in[2] : NULL;
    if (!ti__conv_float_ok(x->dtype))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "dtype %s is not supported",
                         ti_dtype_name(x->dtype));
    if (w->dtype != x->dtype || (b != NULL && b->dtype != x->dtype))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "input %s, weight %s and bias dtypes differ",
                         ti_dtype_name(x->dtype), ti_dtype_name(w->dtype));
    ti__convp p;
    ti_status e = ti__conv_params(k, transpose, &p);
    if (e != TI_OK) return e;
    return ti__conv_set_out(k, &p, b, x->dtype);
}

TI__PRIVATE int ti__conv_shape(ti__kctx *k) {
    /* the fusion passes give a plan's Conv a gate (input 3) and a sum (input 4), after the
     * shapes are inferred; in a file they would be taken for those */
    if (k->n_in > 3)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "%d inputs, Conv takes at most 3 (X, W, B)",
                         k->n_in);
    return ti__conv_shape_common(k, 0);
}
TI__PRIVATE int ti__convtr_shape(ti__kctx *k) {
    return ti__conv_shape_common(k, 1);
}

/* Which float32 path a Conv takes:
 *   DW      depthwise 3x3 / 5x5, stride 1 / 2 (ti__conv_dw_ok): vectorised direct kernel
 *   DIRECT  other depthwise-like groups (GEMM rows < 4): a direct loop
 *   1X1     1x1, stride 1, no pads: one GEMM per group straight on X (no copy)
 *   WINO    3x3 stride 1 with enough channels and tiles (ti__conv_wino_ok) whose weights
 *           the plan transformed (node->packed): Winograd F(4x4, 3x3)
 *   FEWC    few products per output (ti__conv_fewc_ok: a first conv on 3 channels) with
 *           an ISA that has the kernel (AVX-512, AVX2): direct, 16 channels x up to 64
 *           positions
 *   IM2COL  anything else: im2col tiles + GEMM.
 * Tests and bench/conv.c force a path through ti__conv_run_path; IM2COL_BIG (never chosen)
 * is the im2col of before the cache tiles, one large tile shared by the threads, kept for
 * them to compare with. */
enum { TI__CONV_DIRECT, TI__CONV_1X1, TI__CONV_IM2COL, TI__CONV_DW, TI__CONV_WINO,
       TI__CONV_IM2COL_BIG, TI__CONV_FEWC };
/* 1 for a 1x1 conv with stride 1 and no pads: a GEMM on X as it lies (TI__CONV_1X1). */
TI__PRIVATE int ti__conv_pointwise(const ti__convp *p) {
    if (p->kprod != 1) return 0;
    for (int j = 0; j < 3; j++)
        if (p->s[j] != 1 || p->pb[j] != 0 || p->pe[j] != 0) return 0;
    return 1;
}

TI__PRIVATE int ti__conv_path(const ti__kctx *k, const ti__convp *p) {
    if (ti__conv_dw_ok(p)) return TI__CONV_DW;
    if (p->mg < 4) return TI__CONV_DIRECT;
    if (ti__conv_pointwise(p)) return TI__CONV_1X1;
    int wino = ti__conv_wino_ok(p, ti__threadpool_size(k->tp));
    if (wino != 0 && k->node->packed_kind == ti__wino_kind(wino)) return TI__CONV_WINO;
    if (ti__conv_fewc_ok(p)) return TI__CONV_FEWC;
    return TI__CONV_IM2COL;
}

/* The transposed GEMM ("CT"): for few output positions and many output channels, the
 * IM2COL and 1X1 paths compute Y^T = X^T W^T (output positions as the GEMM's rows, channels
 * as its columns) into scratch, then write Y with the bias and activation. The SIMD
 * kernels' columns are vector lanes: N = 49 positions (a 7 x 7 map) fill 32 + 16 + 1 lanes
 * on AVX-512 and left a third of the peak unused (ResNet-18's last convs: 512 x 49 x 4608
 * ran at 30 %, transposed at 60 %, bench/sgemm.c on a Xeon), while the channels fill
 * every lane. W^T is packed at planning as the kernels' B panel (TI__PACK_BPANEL), so the
 * run packs nothing, and the GEMM writes Y from each finished block of Y^T, so there is no
 * pass over Y after it. The same products summed in the same order as the plain GEMM, so the
 * same bits, but for the plain GEMM's last column when N % 16 == 1 on AVX-512 and AVX2 (a dot
 * product there, ti__sgemm_isa.col and ti__k256_col1). */
#define TI__CONV_CT_MIN_SP 4    /* positions: the SIMD GEMM's smallest row count */
#define TI__CONV_CT_MAX_SP 64   /* positions below this (8 x 8 maps and smaller), and */
/* from there up to WIDE_SP where the plain GEMM's slivers leave a tenth of their lanes idle
 * (14 x 14: 196 positions in 7 x 32 lanes on AVX-512) and K is from WIDE_K: MobileNetV2's
 * 1x1 convs at 14 x 14, per-node minima of 3 x 40 runs, 1 thread, Zen 4: 384 -> 64
 * 0.101-0.105 -> 0.092 ms, 576 -> 96 0.222-0.224 -> 0.204-0.205 (onnxruntime, whose
 * NCHWc kernels fill their lanes with channels: 0.092, 0.198-0.200); with K 64 / 96 (64 ->
 * 384, 96 -> 576) worse, 0.107 -> 0.112-0.138 and 0.237 -> 0.249: the store of Y^T weighs
 * more against fewer products. */
#define TI__CONV_CT_WIDE_SP 256
#define TI__CONV_CT_WIDE_K 256
/* and only for fewer output channels than this: with many, the plain GEMM's A panels
 * (the weights, packed at planning) run down many row slivers for each packed sliver of X,
 * and the transposed GEMM's Y^T is as large as Y. 1x1 convs at 13 x 13 and 14 x 14,
 * bench/conv.c (plain with its A panels), 1 thread, Intel Xeon (AVX-512, 2 FMA ports),
 * plain / transposed: 512 -> 64 1.05, -> 128 1.02, -> 256 0.96, -> 512 0.98, -> 1000 0.93,
 * 1024 -> 1000 0.95, 576 -> 96 1.08, 384 -> 64 1.10, 672 -> 112 1.03, 512 -> 384 1.00.
 * SqueezeNet's classifier (512 -> 1000 at 13 x 13) in the model, per-node minima of 4 x 100
 * runs alternating (bench/ab.py), two such A/B runs: 2 threads 0.583 / 0.587 -> 0.494 / 0.492
 * ms, 1 thread 0.991 / 1.086 -> 0.958 / 1.054 (onnxruntime 0.490 and 0.952); on a 16-core
 * Xeon 12-29 % faster at 4 and 8 threads, 3-10 % slower at 1 (bench/results/
 * ab-2026-12-04-s48.md). Not from 256: ResNet-18's 3x3 / 2 conv of 128 -> 256 (im2col, K
 * 1152, out 14 x 14) went 0.80 -> 0.97 ms on 1 thread and 0.47 -> 0.57 on 2 by the plain
 * GEMM (4 x 30 runs alternating). */
#define TI__CONV_CT_WIDE_MAX_M 512
#define TI__CONV_CT_MIN_M 64    /* output channels per group from this. On 7 x 7 maps,
                                   plain / transposed (bench/conv.c, AVX2, Zen 2): 1x1
                                   576 -> 160 1.29, 960 -> 160 1.34, 960 -> 320 1.33;
                                   3x3 64 -> 64 1.16 */
#define TI__CONV_CT_MIN_K 64    /* products per output from this. 1x1 on 7 x 7 maps, plain /
                                   transposed (bench/conv.c, 2026-11-24): AVX2 on a Zen 2
                                   96 -> 576 1.15, 160 -> 960 1.20, 192 -> 1152 1.22, on the
                                   Xeon 1.06, 1.28, 1.17; AVX-512 on the Xeon 0.82, 0.94,
                                   1.37, with the scalar store of Y^T then, so AVX-512 took
                                   it from K 256 until the vector store and the panel
                                   prefetch. Since: AVX-512 on a Zen 4 in the models, minima
                                   of 100 runs, three alternating runs: MobileNetV2's 160 ->
                                   960 0.22-0.23 -> 0.19-0.21 ms, EfficientNet-B0's 192 ->
                                   1152 0.33-0.36 -> 0.30-0.33 */

/* 1 when the conv's geometry suits the transposed GEMM with the kernels in use (the
 * prepack pass and the run both ask, so a session planned under another instruction set
 * finds no panels and runs the plain GEMM). */
TI__PRIVATE int ti__conv_ct_ok(const ti__convp *p) {
    int64_t kdim = p->cg * (int64_t)p->kprod, sp = (int64_t)p->out_sp;
    if (ti__conv_dw_ok(p) || p->mg < TI__CONV_CT_MIN_M || kdim < TI__CONV_CT_MIN_K ||
        sp < TI__CONV_CT_MIN_SP)
        return 0;
    int64_t nr = ti__sgemm_panel_nr();
    /* AVX2's plain GEMM computes a last sliver of one column as a column (ti__k256_col1):
     * 7 x 7's 49 columns cost about 3.1 slivers, and the weights stream once as A panels
     * while X stays in L1, against the transposed GEMM's store of Y^T (16 % of the conv,
     * perf) and its 49 rows in slivers of 5 and 6. MobileNetV2 on the Zen 3, 1 thread,
     * per-node minima of 3 x 40 runs alternating, transposed -> plain: 960 -> 320 0.461 ->
     * 0.380 ms, 960 -> 160 0.227 -> 0.194, 576 -> 160 0.137 -> 0.119 (onnxruntime 0.337,
     * 0.171, 0.106). Before the column kernel (a sliver of 8 lanes for the last column)
     * the plain GEMM won only below K 512. Other maps under 8 x 8 by the lanes they fill. */
    if (nr == 16 && sp < TI__CONV_CT_MAX_SP) {
        int64_t lanes = sp / 16 * 16 + (sp % 16 == 0 ? 0 : sp % 16 <= 8 ? 8 : 16);
        if (sp * 100 >= 85 * lanes) return 0;
    }
    if (sp < TI__CONV_CT_MAX_SP) return 1;
    return sp < TI__CONV_CT_WIDE_SP && kdim >= TI__CONV_CT_WIDE_K &&
           p->mg < TI__CONV_CT_WIDE_MAX_M && nr > 0 &&
           sp * 10 < 9 * ((sp + nr - 1) / nr * nr);
}

/* The node's B panels (group after group) when the transposed GEMM can run now: packed at
 * planning for this geometry and for the panel width of the kernels in use. NULL: not. */
TI__PRIVATE const float *ti__conv_ct_panels(const ti__kctx *k, const ti__convp *p) {
    const ti__node *node = k->node;
    int nr = ti__sgemm_panel_nr();
    if (node->packed_kind != TI__PACK_BPANEL || node->packed == NULL || nr <= 0 ||
        node->packed_arg != nr || !ti__conv_ct_ok(p))
        return NULL;
    size_t per = ti__sgemm_bpanel_floats((size_t)p->cg * p->kprod, (size_t)p->mg, (size_t)nr);
    if (node->packed_bytes != (size_t)p->group * per * sizeof(float)) return NULL;
    return (const float *)node->packed;
}

/* The weights as the prepack pass laid them out for the GEMM kernels' A panel (each
 * group's slivers of node->packed_arg rows, TI__PACK_APANEL), or NULL where they are not. */
TI__PRIVATE const float *ti__conv_apanels(const ti__kctx *k, const ti__convp *p) {
    const ti__node *node = k->node;
    int mr = node->packed_arg;
    if (node->packed_kind != TI__PACK_APANEL || node->packed == NULL || mr <= 0) return NULL;
    size_t per = ti__sgemm_apanel_floats((size_t)p->mg, (size_t)p->cg * p->kprod, (size_t)mr);
    return node->packed_bytes == (size_t)p->group * per * sizeof(float)
               ? (const float *)node->packed : NULL;
}

/* Y^T's row stride: the output channels rounded up to 16 floats, so that a row starts on a
 * 64-byte line. Threads take parts of its columns (ti__sgemm_split), and where rows were
 * mg floats apart the line at the parts' border held both threads' floats in every other
 * row, written by both at each k block: SqueezeNet's classifier (169 x 1000 x 512) on 2
 * threads, 0.664-0.691 ms alone, 0.598-0.629 with rows of 1008 (Xeon, best of 500). */
TI__PRIVATE size_t ti__conv_ct_ld(const ti__convp *p) { return ((size_t)p->mg + 15) / 16 * 16; }

/* Parts of K the transposed GEMM of a 1x1 conv sums, each as one k block (the GEMM's sums
 * run over a k block in one chain, then add onto what the blocks before left in Y^T):
 * for a projection (output channels at most half the input's), the fewest parts of equal
 * whole vectors of 16 channels, from 2, of TI__CONV_CT_PART_K to TI__CONV_CT_PART_MAX
 * channels each; else 1, the ISA's k blocks. On 1 thread the GEMM runs them as its k
 * blocks. On 2+ threads each thread takes a part (and a tile of its rows, where there are
 * more threads than parts), into a Y^T of its own, and the parts are added in order as Y
 * is stored (ti__conv_ct_sum): the same sums in the same order, so outputs do not depend
 * on the thread count. The layer before (a depthwise conv, by channel) left each thread's
 * part of X in its own core's caches; cut by rows of Y^T (positions) instead, every thread
 * read all channels of its positions, half of them from the other core, and all the
 * weights. MobileNetV2 on 2 threads (per-node minima, builds alternating, 3 x 100 runs,
 * bench/results/ab-2026-12-07-s65.md): 576 -> 96 at 14 x 14 0.091 -> 0.076 ms, 384 -> 64
 * 0.047 -> 0.039, 960 -> 160 at 7 x 7 0.068 -> 0.052, 960 -> 320 0.113 -> 0.102; 1 thread
 * unchanged. Not for expansions: MobileNetV2's 320 -> 1280 at 7 x 7 lost 10 % on 1 and 2
 * threads (Y^T 49 x 1280; its input not a layer's output cut by channel). */
#define TI__CONV_CT_PART_K 128
#define TI__CONV_CT_PART_MAX 512
TI__PRIVATE size_t ti__conv_ct_parts(const ti__convp *p) {
    size_t k = (size_t)p->cg;
    if (!ti__conv_pointwise(p) || p->group != 1 || 2 * p->mg > p->cg) return 1;
    for (size_t parts = 2; k / parts >= TI__CONV_CT_PART_K; parts++)
        if (k % (16 * parts) == 0 && k / parts <= TI__CONV_CT_PART_MAX) return parts;
    return 1;
}

/* The transposed GEMM's k block for a conv (ti__sgemm_bpanel's kc): its parts', or 0. */
TI__PRIVATE size_t ti__conv_ct_kc(const ti__convp *p) {
    size_t parts = ti__conv_ct_parts(p);
    return parts > 1 ? (size_t)p->cg / parts : 0;
}

/* Floats of scratch the transposed GEMM takes after the im2col columns: Y^T, a copy a part. */
TI__PRIVATE size_t ti__conv_ct_floats(const ti__convp *p, size_t parts) {
    return parts * p->out_sp * ti__conv_ct_ld(p);
}

/* Columns of one im2col / col2im tile, for rows elements per column. */
TI__PRIVATE size_t ti__conv_tile_cols(size_t rows, size_t cols) {
    size_t nt = TI__CONV_TILE_FLOATS / (rows ? rows : 1);
    if (nt < 64) nt = 64;
    if (nt >= cols) return cols;
    return nt > 16 ? nt / 16 * 16 : nt;
}

/* How the im2col path tiles a group's output positions: *nt columns a tile; *per_thread 1
 * when each thread copies and multiplies its own cache-sized tiles (one scratch slot each,
 * GEMMs on one thread), 0 when there are too few such tiles to keep the threads busy: then
 * one large tile at a time, copied by all threads, multiplied by the threaded GEMM. */
TI__PRIVATE void ti__conv_im2col_plan(size_t kdim, size_t cols, size_t threads, size_t *nt,
                                      int *per_thread) {
    size_t ct = TI__CONV_CTILE_FLOATS / (kdim ? kdim : 1) / 32 * 32;
    ct = TI__MAX(ct, (size_t)256); /* narrower: the weights would stream once per tile */
    ct = TI__MIN(ct, cols);
    size_t tiles = (cols + ct - 1) / ct;
    *per_thread = threads <= 1 || tiles >= 2 * threads;
    *nt = *per_thread ? ct : ti__conv_tile_cols(kdim, cols);
}

/* Scratch floats of the im2col path. */
TI__PRIVATE size_t ti__conv_im2col_floats(const ti__kctx *k, const ti__convp *p) {
    size_t kdim = (size_t)p->cg * p->kprod, nt, threads = (size_t)ti__threadpool_size(k->tp);
    int per_thread;
    ti__conv_im2col_plan(kdim, p->out_sp, threads, &nt, &per_thread);
    return kdim * nt * (per_thread ? threads : 1);
}

/* A gate fused into a 1x1 conv (input 3, ti__fuse_scale_conv) scales its weights at each
 * run, W'[m][c] = W[m][c] * s[c], into the scratch: W' as it lies, then, where the prepack
 * pass would have packed W as the GEMM's A panel, W' so packed, so that the GEMM runs as
 * it would unfused. ti__conv_gate_floats: the floats of scratch for both (0 without a
 * gate); ti__conv_gate_weights: fills them, or fails k and returns NULL when the node is
 * not what the fusion admits (a 1x1 conv of one group, batch 1, a float gate of C values,
 * not the transposed GEMM's) or the scratch is short. The same products on every pool,
 * so outputs stay bit-identical across thread counts. */
TI__PRIVATE size_t ti__conv_gate_floats(const ti__kctx *k, const ti__convp *p) {
    if (k->n_in <= 3 || k->in[3] == NULL) return 0;
    size_t m = (size_t)p->m, kdim = (size_t)p->cg * p->kprod, mr = (size_t)ti__sgemm_panel_mr();
    size_t pan = ti__conv_apanel_ok(p, (int)mr) ? ti__sgemm_apanel_floats(m, kdim, mr) + 16 : 0;
    return m * kdim + 16 + pan;
}

TI__PRIVATE float *ti__conv_gate_weights(ti__kctx *k, const ti__convp *p, int path,
                                         const float **panel, int *panel_mr) {
    const ti_tensor *g = k->in[3];
    size_t m = (size_t)p->m, c = (size_t)p->c, need = ti__conv_gate_floats(k, p);
    if (path != TI__CONV_1X1 || p->group != 1 || p->n != 1 || g->dtype != TI_DTYPE_F32 ||
        ti__numel(g) != c || g->data == NULL || ti__conv_ct_ok(p)) {
        ti__kfail(k, TI_ERR_INVALID_ARGUMENT,
                  "the fused gate (%zu values) does not fit this conv (%zu channels, %lld groups)",
                  ti__numel(g), c, (long long)p->group);
        return NULL;
    }
    if (k->scratch == NULL || k->scratch_bytes < need * sizeof(float)) {
        ti__kfail(k, TI_ERR_INVALID_ARGUMENT,
                  "scratch of %zu bytes is too small for the gated weights", k->scratch_bytes);
        return NULL;
    }
    float *ws = (float *)(void *)ti__align_up((uintptr_t)k->scratch, 64);
    const float *w = (const float *)k->in[1]->data, *s = (const float *)g->data;
    for (size_t o = 0; o < m; o++)
        for (size_t i = 0; i < c; i++) ws[o * c + i] = w[o * c + i] * s[i];
    int mr = ti__sgemm_panel_mr();
    *panel = NULL;
    *panel_mr = 0;
    if (ti__conv_apanel_ok(p, mr)) {
        float *pan = (float *)(void *)ti__align_up((uintptr_t)(ws + m * c), 64);
        ti__sgemm_pack_apanel(0, m, c, ws, c, (size_t)mr, pan);
        *panel = pan;
        *panel_mr = mr;
    }
    return ws;
}

/* A 1x1 conv's GEMM workspace (ti__sgemm_conv_ws_floats), 16 floats past the gate's in the
 * scratch (its weights start where the scratch is aligned: up to 15 floats on), so 16 more:
 * for one group, N of a vector or more, and no transposed GEMM. */
TI__PRIVATE size_t ti__conv_1x1_ws_floats(const ti__kctx *k, const ti__convp *p) {
    if (p->group != 1 || p->n != 1 || p->out_sp < 16 || ti__conv_ct_panels(k, p) != NULL)
        return 0;
    size_t f = ti__sgemm_conv_ws_floats((size_t)p->mg, p->out_sp, (size_t)p->cg, k->tp);
    return f > 0 ? f + 16 : 0;
}

TI__PRIVATE size_t ti__conv_scratch_common(ti__kctx *k, int transpose) {
    ti__convp p;
    if (k->in[0]->dtype != TI_DTYPE_F32) return 0;
    ti_error *saved = k->err, tmp; /* shapes were checked: a failure here means no scratch */
    k->err = &tmp;
    ti_status e = ti__conv_params(k, transpose, &p);
    k->err = saved;
    if (e != TI_OK) return 0;
    size_t rows, cols;
    if (!transpose) {
        if (k->node->pool_k[0] > 0) return ti__conv_pool_scratch(k, &p);
        if (k->node->dw_k > 0) return ti__conv_pwdw_scratch(k, &p);
        int path = ti__conv_path(k, &p);
        if (path == TI__CONV_WINO) return ti__conv_wino_scratch(k, &p);
        if (path == TI__CONV_FEWC) return ti__conv_fewc_scratch(k, &p);
        /* the transposed GEMM's Y^T at the end of the scratch */
        size_t parts = ti__threadpool_size(k->tp) > 1 ? ti__conv_ct_parts(&p) : 1;
        size_t ct = ti__conv_ct_panels(k, &p) != NULL ? ti__conv_ct_floats(&p, parts) : 0;
        if (path == TI__CONV_1X1)
            return (ct + ti__conv_gate_floats(k, &p) + ti__conv_1x1_ws_floats(k, &p)) *
                   sizeof(float);
        if (path != TI__CONV_IM2COL || p.cg == 0) return 0;
        return (ti__conv_im2col_floats(k, &p) + ct) * sizeof(float);
    } else {
        rows = (size_t)p.mg * p.kprod;
        cols = p.in_sp;
    }
    return rows * ti__conv_tile_cols(rows, cols) * sizeof(float);
}
TI__PRIVATE size_t ti__conv_scratch(ti__kctx *k) {
    return ti__conv_scratch_common(k, 0);
}
TI__PRIVATE size_t ti__convtr_scratch(ti__kctx *k) {
    return ti__conv_scratch_common(k, 1);
}

/* Output positions o in [lo, hi) of one axis where i = o*s - pad + kk*d is inside [0, n). */
TI__PRIVATE void ti__conv_valid(int64_t n, int64_t s, int64_t pad, int64_t kk, int64_t d,
                                int64_t nout, int64_t *lo, int64_t *hi) {
    int64_t off = kk * d - pad; /* i = o*s + off */
    int64_t a = off >= 0 ? 0 : (-off + s - 1) / s;
    int64_t b = n - off <= 0 ? 0 : (n - off - 1) / s + 1;
    *lo = TI__MIN(a, nout);
    *hi = TI__MAX(*lo, TI__MIN(b, nout));
}

/* ---- float32 Conv -------------------------------------------------------------------- */

typedef struct ti__conv_job {
    const ti__convp *p;
    const float *x, *w, *b;
    float *y, *col;
    size_t c0, nt; /* tile: output (or input, for ConvTranspose) positions c0 .. c0+nt */
    int act;
    float act_a, act_b;
    float beta; /* 1: Y holds a residual sum fused in (ti__conv_sum), the GEMMs add onto it */
} ti__conv_job;

/* The residual sum fused into a float32 Conv (its input 4, ti__fuse_conv_sum), or NULL. A
 * Conv of a model file has at most 3 inputs (ti__conv_shape). */
TI__PRIVATE const ti_tensor *ti__conv_sum(const ti__kctx *k) {
    return k->n_in > 4 ? k->in[4] : NULL;
}

/* dst[t] = src[2 t] for t < n, in vectors: the stride-2 rows of im2col, which element by
 * element were most of the first conv of MobileNetV3 and ResNet (perf). NULL where the CPU
 * has no such copy (then a scalar loop). Asked once per im2col call, not once per row. */
typedef void (*ti__copy_s2_fn)(float *dst, const float *src, size_t n);
TI__PRIVATE ti__copy_s2_fn ti__copy_s2_pick(void) {
#ifdef TI__X86_SIMD
    int isa = ti__cpu_isa();
    if (isa >= TI__ISA_AVX512) return ti__copy_s2_avx512;
    if (isa >= TI__ISA_AVX2) return ti__copy_s2_avx2;
#elif defined(TI__ARM_NEON)
    if (ti__cpu_isa() >= TI__ISA_NEON) return ti__copy_s2_neon;
#endif
    return NULL;
}

/* ev[t] = src[2 t], od[t] = src[2 t + 1] for w columns of src, in one pass: a stride-2 row
 * split into its two phases (cpu/conv_fast.c's few-channel conv). Reading each row once for
 * both, where two ti__copy_s2_fn calls (a half each) read it twice and zeroed the whole
 * buffer row first:
 * the 3x3 / 2 stems in the models, per-node minima, 1 thread, Zen 4, builds alternating,
 * MobileNetV3-Small 0.146 -> 0.138 ms (AVX2 forced 0.170 -> 0.146), MobileNetV2 0.261 ->
 * 0.251 (0.295 -> 0.281), EfficientNet-B0 0.387 -> 0.375. NULL where the CPU has none
 * (no few-channel kernel there either). */
typedef void (*ti__split_s2_fn)(float *ev, float *od, const float *src, size_t w);
TI__PRIVATE ti__split_s2_fn ti__split_s2_pick(void) {
#ifdef TI__X86_SIMD
    int isa = ti__cpu_isa();
    if (isa >= TI__ISA_AVX512) return ti__split_s2_avx512;
    if (isa >= TI__ISA_AVX2) return ti__split_s2_avx2;
#endif
    return NULL;
}

/* One output row of an im2col tile: columns [col, col + len) of the tile are output
 * positions (od, oh, ow ..). */
typedef struct ti__im2col_seg {
    size_t col, len;
    int64_t od, oh, ow;
} ti__im2col_seg;
#define TI__IM2COL_SEGS 64 /* output rows listed at a time */

/* Lists the output rows of tile columns from c (tile position c - c0) on, up to
 * TI__IM2COL_SEGS of them and not past c1; returns how many, *next: the first column not
 * listed. */
TI__PRIVATE size_t ti__im2col_segs(const ti__convp *p, size_t c0, size_t c, size_t c1,
                                   ti__im2col_seg *seg, size_t *next) {
    size_t ow_n = (size_t)p->out[2], oh_n = (size_t)p->out[1];
    size_t ow = c % ow_n, oh = c / ow_n % oh_n, od = c / (ow_n * oh_n), ns = 0;
    while (c < c1 && ns < TI__IM2COL_SEGS) {
        size_t len = TI__MIN(ow_n - ow, c1 - c);
        seg[ns].col = c - c0;
        seg[ns].len = len;
        seg[ns].od = (int64_t)od;
        seg[ns].oh = (int64_t)oh;
        seg[ns].ow = (int64_t)ow;
        ns++;
        c += len;
        ow = 0;
        if (++oh == oh_n) oh = 0, od++;
    }
    *next = c;
    return ns;
}

/* im2col rows [begin, end) of the tile: row r = (ic, kd, kh, kw) of the group's input x.
 * The tile's output rows are listed once for all its rows, and the rows of one input row
 * (kw = 0 ..) are copied together, segment by segment: a division per output row and tile
 * row, and the bounds of each, were most of the copy of ResNet-18's 3x3 / 2 convs, whose
 * output rows are 28, 14 and 7 long: their copies took 0.170, 0.171 and 0.178 ms of convs of
 * 0.95, 0.92 and 0.94 ms, with the rows listed 0.128, 0.105 and 0.143, copied together too
 * 0.122, 0.102 and 0.108; the convs 0.886, 0.848 and 0.846 (1 thread, Xeon, bench/conv.c;
 * copies alone: a harness of ti__conv_im2col on one tile, best of 300). */
#define TI__IM2COL_KW 16 /* widths of kernel copied together: up to this */
TI__PRIVATE void ti__conv_im2col(void *ctx, size_t begin, size_t end) {
    const ti__conv_job *j = (const ti__conv_job *)ctx;
    const ti__convp *p = j->p;
    ti__copy_s2_fn copy_s2 = p->s[2] == 2 ? ti__copy_s2_pick() : NULL;
    size_t kw_n = (size_t)p->k[2], kh_n = (size_t)p->k[1];
    int64_t sw = p->s[2], wlo[TI__IM2COL_KW], whi[TI__IM2COL_KW];
    size_t kwg = TI__MIN(kw_n, (size_t)TI__IM2COL_KW); /* rows a group at most */
    for (size_t q = 0; q < kwg; q++)
        ti__conv_valid(p->in[2], sw, p->pb[2], (int64_t)q, p->d[2], p->out[2], &wlo[q], &whi[q]);
    ti__im2col_seg seg[TI__IM2COL_SEGS];
    size_t c = j->c0, c1 = j->c0 + j->nt;
    while (c < c1) {
        size_t ns = ti__im2col_segs(p, j->c0, c, c1, seg, &c);
        for (size_t r = begin; r < end;) {
            /* rows r .. r + nk: kw = kw0 .. of one input row (ic, kd, kh) */
            size_t kw0 = r % kw_n, kh = r / kw_n % kh_n;
            size_t kd = r / (kw_n * kh_n) % (size_t)p->k[0], ic = r / p->kprod;
            size_t nk = TI__MIN(kw_n - kw0, end - r);
            if (kw_n > TI__IM2COL_KW) nk = 1;
            const float *xc = j->x + ic * p->in_sp;
            int64_t dd = (int64_t)kd * p->d[0] - p->pb[0], dh = (int64_t)kh * p->d[1] - p->pb[1];
            float *row = j->col + r * j->nt;
            for (size_t q = 0; q < ns; q++) {
                const ti__im2col_seg *g = &seg[q];
                int64_t len = (int64_t)g->len, ow = g->ow;
                int64_t id = g->od * p->s[0] + dd, ih = g->oh * p->s[1] + dh;
                if (id < 0 || id >= p->in[0] || ih < 0 || ih >= p->in[1]) {
                    for (size_t u = 0; u < nk; u++)
                        memset(row + u * j->nt + g->col, 0, (size_t)len * sizeof(float));
                    continue;
                }
                const float *src = xc + ((size_t)id * (size_t)p->in[1] + (size_t)ih) *
                                            (size_t)p->in[2];
                for (size_t u = 0; u < nk; u++) {
                    size_t kw = kw0 + u;
                    int64_t lo, hi;
                    if (kw < kwg) lo = wlo[kw], hi = whi[kw];
                    else ti__conv_valid(p->in[2], sw, p->pb[2], (int64_t)kw, p->d[2], p->out[2],
                                        &lo, &hi);
                    float *dst = row + u * j->nt + g->col;
                    /* t in [0, len): zeros, then the columns inside the row, then zeros (one
                     * test a segment, not one an element: the first conv of MobileNetV3
                     * spent a tenth of the model's time here) */
                    int64_t tlo = TI__MIN(TI__MAX(lo - ow, (int64_t)0), len);
                    int64_t thi = TI__MIN(TI__MAX(hi - ow, tlo), len);
                    for (int64_t t = 0; t < tlo; t++) dst[t] = 0.0f;
                    if (thi > tlo) { /* the first input column read, inside the row */
                        const float *s0 = src + ((ow + tlo) * sw + (int64_t)kw * p->d[2] - p->pb[2]);
                        if (sw == 1) memcpy(dst + tlo, s0, (size_t)(thi - tlo) * sizeof(float));
                        else if (copy_s2 != NULL) copy_s2(dst + tlo, s0, (size_t)(thi - tlo));
                        else
                            for (int64_t t = 0; t < thi - tlo; t++) dst[tlo + t] = s0[t * sw];
                    }
                    for (int64_t t = thi; t < len; t++) dst[t] = 0.0f;
                }
            }
            r += nk;
        }
    }
}

/* y[i] = act(y[i] + bias) for i < n: ti__act_apply's expressions, one loop per activation
 * so that the switch and the call leave the loop (per element they took a third of
 * MobileNetV2's time, perf: bench/results/cpu-2026-11-22.md). Same results bit for bit. */
TI__PRIVATE void ti__act_row(int act, float a, float b, float bias, float *y, size_t n) {
    switch (act) {
    case TI__ACT_NONE:
        if (bias != 0.0f)
            for (size_t i = 0; i < n; i++) y[i] += bias;
        return;
    case TI__ACT_RELU:
        for (size_t i = 0; i < n; i++) {
            float x = y[i] + bias;
            y[i] = x > 0.0f ? x : 0.0f;
        }
        return;
    case TI__ACT_CLIP:
        for (size_t i = 0; i < n; i++) {
            float x = y[i] + bias;
            y[i] = x < a ? a : (x > b ? b : x);
        }
        return;
    case TI__ACT_HARD_SWISH:
        for (size_t i = 0; i < n; i++) {
            const float sixth = 1.0f / 6.0f; /* in a float, then each operation rounded */
            float x = y[i] + bias, h = x * sixth; /* apart, as the vectors do, also on x87 */
            h = h + 0.5f;
            y[i] = x * (h < 0.0f ? 0.0f : (h > 1.0f ? 1.0f : h));
        }
        return;
    case TI__ACT_SILU:
        for (size_t i = 0; i < n; i++) {
            float x = y[i] + bias;
            y[i] = x / (1.0f + expf(-x));
        }
        return;
    case TI__ACT_SIGMOID:
        for (size_t i = 0; i < n; i++) y[i] = 1.0f / (1.0f + expf(-(y[i] + bias)));
        return;
    default:
        for (size_t i = 0; i < n; i++) y[i] = ti__act_apply(act, a, b, y[i] + bias);
        return;
    }
}

/* ti__act_block_fn (internal.h) with the widest vectors the CPU allows, else row by row. */
TI__PRIVATE void ti__act_block(int act, float a, float b, const float *bias, float *y,
                               size_t ldy, size_t rows, size_t cols) {
#ifdef TI__X86_SIMD
    int isa = ti__cpu_isa();
    if (isa >= TI__ISA_AVX512 && ti__act_block_avx512(act, a, b, bias, y, ldy, rows, cols))
        return;
    if (isa >= TI__ISA_AVX2 && ti__act_block_avx2(act, a, b, bias, y, ldy, rows, cols)) return;
#elif defined(TI__ARM_NEON)
    if (ti__cpu_isa() >= TI__ISA_NEON && ti__act_block_neon(act, a, b, bias, y, ldy, rows, cols))
        return;
#endif
    for (size_t r = 0; r < rows; r++)
        ti__act_row(act, a, b, bias != NULL ? bias[r] : 0.0f, y + r * ldy, cols);
}

/* Adds the bias and applies the fused activation on planes [begin, end) of y (n*M planes). */
TI__PRIVATE void ti__conv_bias_act(void *ctx, size_t begin, size_t end) {
    const ti__conv_job *j = (const ti__conv_job *)ctx;
    size_t sp = j->p->out_sp, m = (size_t)j->p->m;
    for (size_t pl = begin; pl < end; pl++)
        ti__act_block(j->act, j->act_a, j->act_b, j->b != NULL ? j->b + pl % m : NULL,
                      j->y + pl * sp, sp, 1, sp);
}

/* Direct convolution of planes [begin, end) (n*M output planes): for each weight tap,
 * a multiply-add of an input row segment into an output row. */
TI__PRIVATE void ti__conv_direct(void *ctx, size_t begin, size_t end) {
    const ti__conv_job *j = (const ti__conv_job *)ctx;
    const ti__convp *p = j->p;
    size_t ow_n = (size_t)p->out[2];
    for (size_t pl = begin; pl < end; pl++) {
        size_t n = pl / (size_t)p->m, m = pl % (size_t)p->m, g = m / (size_t)p->mg;
        float *y = j->y + pl * p->out_sp;
        for (size_t i = 0; i < p->out_sp; i++) y[i] = 0.0f;
        for (size_t ic = 0; ic < (size_t)p->cg; ic++) {
            const float *xc = j->x + (n * (size_t)p->c + g * (size_t)p->cg + ic) * p->in_sp;
            const float *wk = j->w + (m * (size_t)p->cg + ic) * p->kprod;
            for (int64_t kd = 0; kd < p->k[0]; kd++)
                for (int64_t kh = 0; kh < p->k[1]; kh++)
                    for (int64_t kw = 0; kw < p->k[2]; kw++) {
                        float wv = wk[(kd * p->k[1] + kh) * p->k[2] + kw];
                        int64_t dlo, dhi, hlo, hhi, wlo, whi;
                        ti__conv_valid(p->in[0], p->s[0], p->pb[0], kd, p->d[0], p->out[0],
                                       &dlo, &dhi);
                        ti__conv_valid(p->in[1], p->s[1], p->pb[1], kh, p->d[1], p->out[1],
                                       &hlo, &hhi);
                        ti__conv_valid(p->in[2], p->s[2], p->pb[2], kw, p->d[2], p->out[2],
                                       &wlo, &whi);
                        int64_t sw = p->s[2], woff = kw * p->d[2] - p->pb[2];
                        for (int64_t od = dlo; od < dhi; od++) {
                            int64_t id = od * p->s[0] - p->pb[0] + kd * p->d[0];
                            for (int64_t oh = hlo; oh < hhi; oh++) {
                                int64_t ih = oh * p->s[1] - p->pb[1] + kh * p->d[1];
                                const float *src = xc + ((size_t)id * (size_t)p->in[1] +
                                                         (size_t)ih) * (size_t)p->in[2];
                                float *dst =
                                    y + ((size_t)od * (size_t)p->out[1] + (size_t)oh) * ow_n;
                                if (sw == 1) {
                                    const float *s1 = src + woff;
                                    for (int64_t ow = wlo; ow < whi; ow++) dst[ow] += wv * s1[ow];
                                } else {
                                    for (int64_t ow = wlo; ow < whi; ow++)
                                        dst[ow] += wv * src[ow * sw + woff];
                                }
                            }
                        }
                    }
        }
    }
    ti__conv_bias_act(ctx, begin, end);
}

/* One thread's share of the per-thread im2col tiles: slots [begin, end), slot s takes
 * tiles s, s + slots, ... into its own part of the scratch. */
typedef struct ti__conv_tiles {
    const ti__conv_job *j;
    const float *w;
    float *y;
    size_t mg, kdim, nt, slots;
    int wt;     /* w is the prepacked transpose (TI__PACK_ATRANS): K x lw */
    size_t lw;  /* w's leading dimension */
    const float *wp; /* w as the GEMM's A panel for wp_mr rows (TI__PACK_APANEL), or NULL */
    int wp_mr;
    const ti__gemm_epi *epi; /* bias of the group's channels and the activation */
} ti__conv_tiles;

TI__PRIVATE void ti__conv_tile_slots(void *ctx, size_t begin, size_t end) {
    const ti__conv_tiles *t = (const ti__conv_tiles *)ctx;
    const ti__convp *p = t->j->p;
    for (size_t s = begin; s < end; s++) {
        ti__conv_job j = *t->j;
        j.col = t->j->col + s * t->kdim * t->nt;
        for (size_t c0 = s * t->nt; c0 < p->out_sp; c0 += t->slots * t->nt) {
            j.c0 = c0;
            j.nt = TI__MIN(t->nt, p->out_sp - c0);
            ti__conv_im2col(&j, 0, t->kdim);
            ti__sgemm_conv(t->wt, t->mg, j.nt, t->kdim, t->w, t->lw, t->wp, t->wp_mr, j.col,
                           j.nt, 0, j.beta, t->y + c0, p->out_sp, t->epi, NULL, 0, NULL);
        }
    }
}

/* The transposed GEMM of a 1x1 conv in parts of K (ti__conv_ct_parts) on 2+ threads: part
 * t's Y^T at yt - t * sp * ldt. */
typedef struct ti__conv_ct_job {
    const float *x, *w; /* X (kdim rows of sp floats: X^T as the GEMM's A) and its B panel */
    float *yt, *y;
    size_t sp, mg, kdim, nr, ldt, parts;
    size_t tiles;            /* of each part's rows (positions), one item each */
    int sum;                 /* Y holds a residual sum fused in: added */
    const ti__gemm_epi *epi; /* bias and activation, once the parts are added */
} ti__conv_ct_job;

/* Items [begin, end) of parts x tiles, part-major: part t's rows of tile i, so that on as
 * many threads as parts each thread takes one part, the channels the layer before left in
 * its caches. */
TI__PRIVATE void ti__conv_ct_part(void *ctx, int part, size_t begin, size_t end) {
    const ti__conv_ct_job *c = (const ti__conv_ct_job *)ctx;
    size_t kp = c->kdim / c->parts;
    (void)part;
    for (size_t it = begin; it < end; it++) {
        size_t t = it / c->tiles, i = it % c->tiles;
        size_t r0 = c->sp * i / c->tiles, r1 = c->sp * (i + 1) / c->tiles;
        int ok = ti__sgemm_bpanel_part(1, r1 - r0, c->mg, kp, c->x + t * kp * c->sp + r0, c->sp,
                                       c->w, (int)c->nr, c->kdim, t * kp,
                                       c->yt - t * c->sp * c->ldt + r0 * c->ldt, c->ldt);
        TI_ASSERT(ok); /* ti__conv_ct_panels checked the kernels and the panel */
        (void)ok;
    }
}

/* Y's channels [16 begin, 16 end): for each 16 of them, the parts of Y^T added in order
 * (as the GEMM's later k blocks add onto C: part t's sums + those before) and stored into
 * Y as the GEMM would store them (ti__sgemm_store_t_sum: the residual sum, the bias and
 * activation). The last part is added in the store; without a residual sum, the one before
 * too, onto Y (a + b is b + a: the same bits); other parts into part 0's Y^T first. */
TI__PRIVATE void ti__conv_ct_sum(void *ctx, size_t begin, size_t end) {
    const ti__conv_ct_job *c = (const ti__conv_ct_job *)ctx;
    size_t part = c->sp * c->ldt, last = c->parts - 1, lead = c->sum ? last : last - 1;
    for (size_t c0 = begin * 16; c0 < TI__MIN(end * 16, c->mg); c0 += 16) {
        size_t w = TI__MIN((size_t)16, c->mg - c0);
        ti__gemm_epi e = *c->epi;
        if (e.bias != NULL) e.bias += c0;
        float *y = c->y + c0 * c->sp, *y0 = c->yt + c0;
        for (size_t t = 1; t < lead; t++) { /* parts 1 .. lead - 1 onto part 0 */
            const float *src = y0 - t * part;
            float *dst = y0;
            for (size_t s = 0; s < c->sp; s++, src += c->ldt, dst += c->ldt)
                for (size_t q = 0; q < w; q++) dst[q] = src[q] + dst[q];
        }
        /* part lead added in the store (onto the residual sum in Y), then the last onto Y */
        ti__sgemm_store_t_sum(y0, lead > 0 ? y0 - lead * part : NULL, c->ldt, c->sp, w, y, c->sp,
                              c->sum, lead == last ? &e : NULL);
        if (lead < last)
            ti__sgemm_store_t_sum(y0 - last * part, NULL, c->ldt, c->sp, w, y, c->sp, 1, &e);
    }
}

/* The IM2COL or 1X1 path by the transposed GEMM (ti__conv_ct_ok) on the planned panels: Y^T
 * into the end of the scratch, and Y, transposed from it block by block while in cache,
 * with the bias and activation. Returns 0, having written nothing, when the scratch is too
 * small for it (ti__conv_ct_panels checked that the GEMM takes the panels). */
TI__PRIVATE int ti__conv_run_ct(ti__kctx *k, const ti__convp *p, const ti__conv_job *j,
                                int path, const float *panels) {
    size_t mg = (size_t)p->mg, cg = (size_t)p->cg, sp = p->out_sp, kdim = cg * p->kprod;
    size_t nr = (size_t)k->node->packed_arg, col = path == TI__CONV_1X1 ? 0 : kdim * sp;
    size_t have = k->scratch == NULL ? 0 : k->scratch_bytes / sizeof(float);
    size_t ldt = ti__conv_ct_ld(p);
    size_t threads = (size_t)ti__threadpool_size(k->tp);
    size_t parts = path == TI__CONV_1X1 && threads > 1 ? ti__conv_ct_parts(p) : 1;
    if (col + parts * sp * ldt > have) parts = 1; /* the GEMM of all parts: the same sums */
    if (col + sp * ldt > have) return 0;
    float *yt = (float *)k->scratch + (have - sp * ldt);
    for (size_t n = 0; n < (size_t)p->n; n++)
        for (size_t g = 0; g < (size_t)p->group; g++) {
            const float *x = j->x + (n * (size_t)p->c + g * cg) * p->in_sp;
            const float *a = x; /* X^T: the GEMM's A, transposed, sp floats a row */
            if (path != TI__CONV_1X1) {
                ti__conv_job jg = *j;
                jg.x = x;
                jg.col = (float *)k->scratch;
                jg.c0 = 0;
                jg.nt = sp;
                ti__parallel_for(k->tp, kdim, TI__MAX((size_t)1, 16384 / sp), ti__conv_im2col,
                                 &jg);
                a = jg.col;
            }
            const float *w = panels + g * ti__sgemm_bpanel_floats(kdim, mg, nr);
            ti__gemm_epi epi; /* Y = (Y^T)^T, written by the GEMM block by block */
            epi.bias = j->b != NULL ? j->b + g * mg : NULL;
            epi.act = j->act;
            epi.a = j->act_a;
            epi.b = j->act_b;
            float *y = j->y + (n * (size_t)p->m + g * mg) * sp;
            if (parts > 1) {
                ti__conv_ct_job c;
                c.x = a;
                c.w = w;
                c.yt = yt;
                c.y = y;
                c.sp = sp;
                c.mg = mg;
                c.kdim = kdim;
                c.nr = nr;
                c.ldt = ldt;
                c.parts = parts;
                /* each part's rows in tiles (of 16 or more), so that every thread takes as
                 * many: threads / parts where that divides, else threads */
                c.tiles = threads % parts == 0 ? threads / parts : threads;
                c.tiles = TI__MAX((size_t)1, TI__MIN(c.tiles, sp / 16));
                c.sum = j->beta != 0.0f;
                c.epi = &epi;
                ti__parallel_for_part(k->tp, parts * c.tiles, 1, ti__conv_ct_part, &c);
                ti__parallel_for(k->tp, (mg + 15) / 16, 1, ti__conv_ct_sum, &c);
                continue;
            }
            if (!ti__sgemm_bpanel(1, sp, mg, kdim, a, sp, w, (int)nr, ti__conv_ct_kc(p), yt,
                                  ldt, y, sp, &epi,
                                  j->beta != 0.0f, k->tp))
                return 0;
        }
    return 1;
}

/* float32 Conv by the given path (ti__conv_path chooses; tests and benchmarks force one).
 * DW, WINO and FEWC fall back to DIRECT, IM2COL and IM2COL where they cannot run the conv. */
TI__PRIVATE ti_status ti__conv_run_path(ti__kctx *k, const ti__convp *p, int path) {
    if (k->node->pool_k[0] > 0) return ti__conv_pool_run(k, p); /* its own path, whatever */
    if (k->node->dw_k > 0) return ti__conv_pwdw_run(k, p);
    ti__conv_job j;
    memset(&j, 0, sizeof j);
    j.p = p;
    j.x = (const float *)k->in[0]->data;
    j.w = (const float *)k->in[1]->data;
    j.b = k->n_in > 2 && k->in[2] != NULL ? (const float *)k->in[2]->data : NULL;
    j.y = (float *)k->out[0]->data;
    j.act = k->node->act;
    j.act_a = k->node->act_a;
    j.act_b = k->node->act_b;
    size_t planes = (size_t)(p->n * p->m), kdim = (size_t)p->cg * p->kprod;
    const float *gate_panel = NULL; /* a gate fused in (ti__fuse_scale_conv) */
    int gate_mr = 0;
    if (k->n_in > 3 && k->in[3] != NULL) {
        float *ws = ti__conv_gate_weights(k, p, path, &gate_panel, &gate_mr);
        if (ws == NULL) return TI_ERR_INVALID_ARGUMENT;
        j.w = ws;
    }
    /* a residual sum fused in (input 4, ti__fuse_conv_sum): Y starts as it (placed on it by
     * ti__session_sum_views, else copied) and the GEMM adds onto Y (beta 1; the transposed
     * GEMM as it stores Y), before the bias and the activation: act(W X + R + b) */
    const ti_tensor *r = ti__conv_sum(k);
    if (r != NULL) {
        int wino_act = path == TI__CONV_WINO && (j.act == TI__ACT_NONE || j.act == TI__ACT_RELU);
        if ((path != TI__CONV_1X1 && path != TI__CONV_IM2COL && path != TI__CONV_IM2COL_BIG &&
             !wino_act) ||
            r->dtype != TI_DTYPE_F32 || r->data == NULL || r->size_bytes != k->out[0]->size_bytes)
            return ti__kfail(k, TI_ERR_INVALID_ARGUMENT,
                             "the fused sum (%zu values) does not fit this conv (%zu outputs) "
                             "or its path", ti__numel(r), ti__numel(k->out[0]));
        if (r->data != k->out[0]->data) memcpy(j.y, r->data, r->size_bytes);
        j.beta = 1.0f;
    }
    if (path == TI__CONV_DW && ti__conv_dw_ok(p)) {
        ti__conv_dw_run(k, p);
        return TI_OK;
    }
    if (path == TI__CONV_WINO) {
        if (ti__conv_wino_run(k, p)) return TI_OK;
        path = TI__CONV_IM2COL;
    }
    if (path == TI__CONV_FEWC) {
        if (ti__conv_fewc_run(k, p)) return TI_OK;
        path = TI__CONV_IM2COL;
    }
    if (path == TI__CONV_DIRECT || path == TI__CONV_DW || kdim == 0) {
        /* kdim 0 (no input channels): bias only */
        size_t work = p->out_sp * kdim;
        ti__parallel_for(k->tp, planes, work > 65536 ? 1 : 65536 / (work + 1) + 1,
                         ti__conv_direct, &j);
        return TI_OK;
    }
    const float *panels = ti__conv_ct_panels(k, p);
    if (panels != NULL && (path == TI__CONV_1X1 || path == TI__CONV_IM2COL) &&
        ti__conv_run_ct(k, p, &j, path, panels))
        return TI_OK;
    size_t mg = (size_t)p->mg, cg = (size_t)p->cg, threads = (size_t)ti__threadpool_size(k->tp);
    size_t nt;
    int per_thread;
    ti__conv_im2col_plan(kdim, p->out_sp, threads, &nt, &per_thread);
    if (path == TI__CONV_IM2COL_BIG) {
        per_thread = 0;
        nt = ti__conv_tile_cols(kdim, p->out_sp);
    }
    size_t slots = per_thread ? threads : 1, have = k->scratch == NULL ? 0 : k->scratch_bytes;
    if (path != TI__CONV_1X1 && slots * nt * kdim * sizeof(float) > have) {
        /* less scratch than planned (a forced path): fewer slots, then narrower tiles */
        slots = TI__MAX((size_t)1, TI__MIN(slots, have / (nt * kdim * sizeof(float))));
        if (nt * kdim * sizeof(float) > have) nt = have / (kdim * sizeof(float));
        if (nt == 0)
            return ti__kfail(k, TI_ERR_INVALID_ARGUMENT,
                             "scratch of %zu bytes is too small for one im2col column",
                             k->scratch_bytes);
    }
    /* the weights as the prepack pass transposed them (rows free of L1 set conflicts, so
     * the GEMM reads them in place instead of repacking them on every call), or as given */
    size_t lw = kdim;
    int wt = 0;
    if (k->node->packed_kind == TI__PACK_ATRANS && k->node->packed != NULL &&
        kdim * (size_t)p->group > 0 &&
        k->node->packed_bytes % (kdim * (size_t)p->group * sizeof(float)) == 0) {
        lw = k->node->packed_bytes / (kdim * (size_t)p->group * sizeof(float));
        wt = lw >= mg;
        if (!wt) lw = kdim;
    }
    /* or as the GEMM kernels' A panel (one run per sliver of mr rows) */
    int wmr = k->node->packed_arg;
    const float *wpan = ti__conv_apanels(k, p);
    size_t wper = wpan != NULL ? ti__sgemm_apanel_floats(mg, kdim, (size_t)wmr) : 0;
    if (gate_panel != NULL) {
        wpan = gate_panel;
        wmr = gate_mr;
        wper = ti__sgemm_apanel_floats(mg, kdim, (size_t)wmr);
    }
    for (size_t n = 0; n < (size_t)p->n; n++)
        for (size_t g = 0; g < (size_t)p->group; g++) {
            const float *x = j.x + (n * (size_t)p->c + g * cg) * p->in_sp;
            const float *w = wt ? (const float *)k->node->packed + g * lw * kdim : j.w + g * mg * kdim;
            float *y = j.y + (n * (size_t)p->m + g * mg) * p->out_sp;
            const float *wp = wpan != NULL ? wpan + g * wper : NULL;
            /* bias and activation are applied by the GEMM, block by block while in cache */
            ti__gemm_epi epi;
            epi.bias = j.b != NULL ? j.b + g * mg : NULL;
            epi.act = j.act;
            epi.a = j.act_a;
            epi.b = j.act_b;
            if (path == TI__CONV_1X1) {
                /* its workspace after the gate's floats, where the scratch holds both */
                size_t gate = ti__conv_gate_floats(k, p), wsf = ti__conv_1x1_ws_floats(k, p);
                float *ws = NULL;
                if (wsf > 0 && k->scratch != NULL &&
                    k->scratch_bytes >= (gate + wsf) * sizeof(float))
                    ws = (float *)k->scratch + gate + 16;
                ti__sgemm_conv(wt, mg, p->out_sp, cg, w, lw, wp, wmr, x, p->in_sp, 1, j.beta, y,
                               p->out_sp, &epi, ws, ws != NULL ? wsf - 16 : 0, k->tp);
                continue;
            }
            ti__conv_job jg = j;
            jg.x = x;
            jg.col = (float *)k->scratch;
            if (per_thread) {
                ti__conv_tiles t;
                t.j = &jg;
                t.w = w;
                t.wt = wt;
                t.lw = lw;
                t.wp = wp;
                t.wp_mr = wmr;
                t.y = y;
                t.mg = mg;
                t.kdim = kdim;
                t.nt = nt;
                t.slots = TI__MIN(slots, (p->out_sp + nt - 1) / nt);
                t.epi = &epi;
                ti__parallel_for(k->tp, t.slots, 1, ti__conv_tile_slots, &t);
                continue;
            }
            for (size_t c0 = 0; c0 < p->out_sp; c0 += nt) {
                jg.c0 = c0;
                jg.nt = TI__MIN(nt, p->out_sp - c0);
                ti__parallel_for(k->tp, kdim, TI__MAX((size_t)1, 16384 / jg.nt),
                                 ti__conv_im2col, &jg);
                ti__sgemm_conv(wt, mg, jg.nt, kdim, w, lw, wp, wmr, jg.col, jg.nt, 0, j.beta,
                               y + c0, p->out_sp, &epi, NULL, 0, k->tp);
            }
        }
    return TI_OK;
}

TI__PRIVATE ti_status ti__conv_run_f32(ti__kctx *k, const ti__convp *p) {
    return ti__conv_run_path(k, p, ti__conv_path(k, p));
}

/* Any float dtype, one output element at a time in double. Slow; for rare dtypes. */
TI__PRIVATE void ti__conv_generic(const ti__kctx *k, const ti__convp *p) {
    const ti_tensor *x = k->in[0], *w = k->in[1], *b = k->n_in > 2 ? k->in[2] : NULL;
    ti_tensor *y = k->out[0];
    size_t o = 0;
    for (int64_t n = 0; n < p->n; n++)
        for (int64_t m = 0; m < p->m; m++) {
            int64_t g = m / p->mg;
            for (int64_t od = 0; od < p->out[0]; od++)
                for (int64_t oh = 0; oh < p->out[1]; oh++)
                    for (int64_t ow = 0; ow < p->out[2]; ow++, o++) {
                        double s = b != NULL ? ti__get_f64(b, (size_t)m) : 0.0;
                        for (int64_t ic = 0; ic < p->cg; ic++)
                            for (int64_t kd = 0; kd < p->k[0]; kd++) {
                                int64_t id = od * p->s[0] - p->pb[0] + kd * p->d[0];
                                if (id < 0 || id >= p->in[0]) continue;
                                for (int64_t kh = 0; kh < p->k[1]; kh++) {
                                    int64_t ih = oh * p->s[1] - p->pb[1] + kh * p->d[1];
                                    if (ih < 0 || ih >= p->in[1]) continue;
                                    for (int64_t kw = 0; kw < p->k[2]; kw++) {
                                        int64_t iw = ow * p->s[2] - p->pb[2] + kw * p->d[2];
                                        if (iw < 0 || iw >= p->in[2]) continue;
                                        size_t xi = (size_t)(n * p->c + g * p->cg + ic) *
                                                        p->in_sp +
                                                    (size_t)((id * p->in[1] + ih) * p->in[2] + iw);
                                        size_t wi = (size_t)(m * p->cg + ic) * p->kprod +
                                                    (size_t)((kd * p->k[1] + kh) * p->k[2] + kw);
                                        s += ti__get_f64(x, xi) * ti__get_f64(w, wi);
                                    }
                                }
                            }
                        if (k->node->act != TI__ACT_NONE)
                            s = ti__act_apply(k->node->act, k->node->act_a, k->node->act_b,
                                              (float)s);
                        ti__set_f64(y, o, s);
                    }
        }
}

TI__PRIVATE ti_status ti__conv_run(ti__kctx *k) {
    ti__convp p;
    ti_status e = ti__conv_params(k, 0, &p);
    if (e != TI_OK) return e;
    if (k->in[0]->dtype == TI_DTYPE_F32) return ti__conv_run_f32(k, &p);
    ti__conv_generic(k, &p);
    return TI_OK;
}

/* ---- ConvTranspose ------------------------------------------------------------------- */

/* col2im: adds rows of the tile for output channels [begin, end) of the group into y.
 * Row r = (m, kd, kh, kw); column = input position c0 + t. */
TI__PRIVATE void ti__convtr_col2im(void *ctx, size_t begin, size_t end) {
    const ti__conv_job *j = (const ti__conv_job *)ctx;
    const ti__convp *p = j->p;
    size_t iw_n = (size_t)p->in[2], ih_n = (size_t)p->in[1];
    for (size_t m = begin; m < end; m++) {
        float *ym = j->y + m * p->out_sp;
        for (size_t kr = 0; kr < p->kprod; kr++) {
            int64_t kw = (int64_t)(kr % (size_t)p->k[2]);
            int64_t kh = (int64_t)(kr / (size_t)p->k[2] % (size_t)p->k[1]);
            int64_t kd = (int64_t)(kr / (size_t)(p->k[2] * p->k[1]));
            /* input positions whose output o = i*s - pad + k*d lands inside [0, out) */
            int64_t wlo, whi, woff = kw * p->d[2] - p->pb[2];
            ti__conv_valid(p->out[2], p->s[2], p->pb[2], kw, p->d[2], p->in[2], &wlo, &whi);
            const float *src = j->col + (m * p->kprod + kr) * j->nt;
            size_t c = j->c0, c1 = j->c0 + j->nt;
            while (c < c1) {
                size_t iw = c % iw_n, ih = c / iw_n % ih_n, id = c / (iw_n * ih_n);
                size_t seg = TI__MIN(iw_n - iw, c1 - c);
                int64_t od = (int64_t)id * p->s[0] - p->pb[0] + kd * p->d[0];
                int64_t oh = (int64_t)ih * p->s[1] - p->pb[1] + kh * p->d[1];
                if (od >= 0 && od < p->out[0] && oh >= 0 && oh < p->out[1]) {
                    float *dst = ym + ((size_t)od * (size_t)p->out[1] + (size_t)oh) *
                                          (size_t)p->out[2];
                    int64_t lo = TI__MAX(wlo, (int64_t)iw), hi = TI__MIN(whi, (int64_t)(iw + seg));
                    for (int64_t i = lo; i < hi; i++)
                        dst[i * p->s[2] + woff] += src[(size_t)i - iw];
                }
                src += seg;
                c += seg;
            }
        }
    }
}

/* Fills planes [begin, end) of y with the bias (or zero). */
TI__PRIVATE void ti__convtr_fill(void *ctx, size_t begin, size_t end) {
    const ti__conv_job *j = (const ti__conv_job *)ctx;
    size_t sp = j->p->out_sp, m = (size_t)j->p->m;
    for (size_t pl = begin; pl < end; pl++) {
        float bv = j->b != NULL ? j->b[pl % m] : 0.0f, *y = j->y + pl * sp;
        for (size_t i = 0; i < sp; i++) y[i] = bv;
    }
}

TI__PRIVATE ti_status ti__convtr_run_f32(ti__kctx *k, const ti__convp *p) {
    ti__conv_job j;
    memset(&j, 0, sizeof j);
    j.p = p;
    const float *x = (const float *)k->in[0]->data, *w = (const float *)k->in[1]->data;
    j.b = k->n_in > 2 && k->in[2] != NULL ? (const float *)k->in[2]->data : NULL;
    float *y = (float *)k->out[0]->data;
    j.y = y;
    j.act = k->node->act;
    j.act_a = k->node->act_a;
    j.act_b = k->node->act_b;
    size_t planes = (size_t)(p->n * p->m), mg = (size_t)p->mg, cg = (size_t)p->cg;
    size_t rows = mg * p->kprod, grain = TI__MAX((size_t)1, 65536 / (p->out_sp + 1));
    ti__parallel_for(k->tp, planes, grain, ti__convtr_fill, &j);
    /* no input channels: the output is the bias alone */
    size_t nt = rows == 0 || cg == 0 ? 0 : ti__conv_tile_cols(rows, p->in_sp);
    if (nt != 0 && (nt * rows * sizeof(float) > k->scratch_bytes || k->scratch == NULL)) {
        nt = k->scratch_bytes / (rows * sizeof(float));
        if (nt == 0)
            return ti__kfail(k, TI_ERR_INVALID_ARGUMENT,
                             "scratch of %zu bytes is too small for one col2im column",
                             k->scratch_bytes);
    }
    j.col = (float *)k->scratch;
    for (size_t n = 0; n < (size_t)p->n && nt != 0; n++)
        for (size_t g = 0; g < (size_t)p->group; g++) {
            const float *xg = x + (n * (size_t)p->c + g * cg) * p->in_sp;
            const float *wg = w + g * cg * rows; /* cg x rows, row-major */
            j.y = y + (n * (size_t)p->m + g * mg) * p->out_sp;
            for (size_t c0 = 0; c0 < p->in_sp; c0 += nt) {
                j.c0 = c0;
                j.nt = TI__MIN(nt, p->in_sp - c0);
                /* col (rows x nt) = W_g^T (rows x cg) * X_g (cg x nt) */
                ti__sgemm_ref(1, 0, rows, j.nt, cg, 1.0f, wg, rows, xg + c0, p->in_sp, 0.0f,
                              j.col, j.nt, k->tp);
                ti__parallel_for(k->tp, mg, 1, ti__convtr_col2im, &j);
            }
        }
    if (j.act != TI__ACT_NONE) {
        j.y = y;
        j.b = NULL;
        ti__parallel_for(k->tp, planes, grain, ti__conv_bias_act, &j);
    }
    return TI_OK;
}

TI__PRIVATE void ti__convtr_generic(const ti__kctx *k, const ti__convp *p) {
    const ti_tensor *x = k->in[0], *w = k->in[1], *b = k->n_in > 2 ? k->in[2] : NULL;
    ti_tensor *y = k->out[0];
    size_t total = ti__numel(y);
    for (size_t i = 0; i < total; i++)
        ti__set_f64(y, i, b != NULL ? ti__get_f64(b, i / p->out_sp % (size_t)p->m) : 0.0);
    /* y is written in its own dtype after each add: for float16 that rounds the partial
     * sums, which the tolerance of float16 tests allows. */
    for (int64_t n = 0; n < p->n; n++)
        for (int64_t c = 0; c < p->c; c++) {
            int64_t g = c / p->cg;
            for (size_t i = 0; i < p->in_sp; i++) {
                int64_t iw = (int64_t)(i % (size_t)p->in[2]);
                int64_t ih = (int64_t)(i / (size_t)p->in[2] % (size_t)p->in[1]);
                int64_t id = (int64_t)(i / (size_t)(p->in[2] * p->in[1]));
                double xv = ti__get_f64(x, (size_t)(n * p->c + c) * p->in_sp + i);
                for (int64_t mm = 0; mm < p->mg; mm++)
                    for (size_t kr = 0; kr < p->kprod; kr++) {
                        int64_t kw = (int64_t)(kr % (size_t)p->k[2]);
                        int64_t kh = (int64_t)(kr / (size_t)p->k[2] % (size_t)p->k[1]);
                        int64_t kd = (int64_t)(kr / (size_t)(p->k[2] * p->k[1]));
                        int64_t od = id * p->s[0] - p->pb[0] + kd * p->d[0];
                        int64_t oh = ih * p->s[1] - p->pb[1] + kh * p->d[1];
                        int64_t ow = iw * p->s[2] - p->pb[2] + kw * p->d[2];
                        if (od < 0 || od >= p->out[0] || oh < 0 || oh >= p->out[1] || ow < 0 ||
                            ow >= p->out[2])
                            continue;
                        size_t yi = (size_t)(n * p->m + g * p->mg + mm) * p->out_sp +
                                    (size_t)((od * p->out[1] + oh) * p->out[2] + ow);
                        double wv = ti__get_f64(w, ((size_t)(c * p->mg + mm)) * p->kprod + kr);
                        ti__set_f64(y, yi, ti__get_f64(y, yi) + xv * wv);
                    }
            }
        }
    if (k->node->act != TI__ACT_NONE)
        for (size_t i = 0; i < total; i++)
            ti__set_f64(y, i, ti__act_apply(k->node->act, k->node->act_a, k->node->act_b,
                                            (float)ti__get_f64(y, i)));
}

TI__PRIVATE ti_status ti__convtr_run(ti__kctx *k) {
    ti__convp p;
    ti_status e = ti__conv_params(k, 1, &p);
    if (e != TI_OK) return e;
    if (k->in[0]->dtype == TI_DTYPE_F32) return ti__convtr_run_f32(k, &p);
    ti__convtr_generic(k, &p);
    return TI_OK;
}

/* ---- ConvInteger --------------------------------------------------------------------- */

TI__PRIVATE int ti__convint_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    const ti_tensor *x = k->in[0], *w = k->in[1];
    const ti_tensor *xz = k->n_in > 2 ? k->in[2] : NULL, *wz = k->n_in > 3 ? k->in[3] : NULL;
    if ((x->dtype != TI_DTYPE_U8 && x->dtype != TI_DTYPE_I8) ||
        (w->dtype != TI_DTYPE_U8 && w->dtype != TI_DTYPE_I8))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "inputs must be uint8 or int8, got %s and %s",
                         ti_dtype_name(x->dtype), ti_dtype_name(w->dtype));
    if ((xz != NULL && xz->dtype != x->dtype) || (wz != NULL && wz->dtype != w->dtype))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "zero point dtype differs from its input");
    ti__convp p;
    ti_status e = ti__conv_params(k, 0, &p);
    if (e != TI_OK) return e;
    if (xz != NULL && ti__numel(xz) != 1)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "x_zero_point must be a scalar, has %zu "
                         "elements", ti__numel(xz));
    if (wz != NULL && ti__numel(wz) != 1 && (int64_t)ti__numel(wz) != p.m)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "w_zero_point has %zu elements, expected 1 or "
                         "%lld", ti__numel(wz), (long long)p.m);
    return ti__conv_set_out(k, &p, NULL, TI_DTYPE_I32);
}

TI__PRIVATE size_t ti__convint_scratch(ti__kctx *k) {
    ti__convp p;
    ti_error *saved = k->err, tmp;
    k->err = &tmp;
    ti_status e = ti__conv_params(k, 0, &p);
    k->err = saved;
    if (e != TI_OK) return 0;
    size_t depth = (size_t)p.cg * p.kprod;
    if (ti__qpack_b(k->node, (size_t)p.group, (size_t)p.mg, depth, 0) != NULL) return 0; /* planning */
    return ti__qg_packed_bytes((size_t)p.mg, depth);
}

/* The prepack pass's entry for ConvInteger with constant w (and w_zero_point): w packed
 * once into pool for the shared 8-bit GEMM, as ti__q_conv_gemm packs it per run. */
TI__PRIVATE ti_status ti__convint_prepack(ti__kctx *k, ti__node *node, ti__pool *pool) {
    const ti_tensor *w = k->in[1], *wz = k->n_in > 3 ? k->in[3] : NULL;
    ti__convp p;
    ti_error *saved = k->err, tmp;
    k->err = &tmp;
    ti_status e = ti__conv_params(k, 0, &p);
    k->err = saved;
    if (e != TI_OK || w == NULL || w->data == NULL || (wz != NULL && wz->data == NULL) ||
        (w->dtype != TI_DTYPE_U8 && w->dtype != TI_DTYPE_I8) ||
        (wz != NULL && (wz->dtype != w->dtype ||
                        (ti__numel(wz) != 1 && (int64_t)ti__numel(wz) != p.m))))
        return TI_OK;
    size_t depth = (size_t)p.cg * p.kprod;
    if (depth == 0 || p.mg == 0) return TI_OK;
    ti__qgemm t;
    memset(&t, 0, sizeof t);
    ti__qg_onnx_b(&t, w, wz, (size_t)p.mg, depth, 1);
    if (ti__qpack_make(node, pool, k->tp, &t, (size_t)p.group, (size_t)p.mg * depth, 0, NULL) == NULL)
        return TI_ERR_OUT_OF_MEMORY;
    return TI_OK;
}

/* The shared integer GEMM (core/qgemm.c) with the raw int32 accumulator as output: the
 * sums wrap modulo 2^32, as the spec allows; padding holds x's zero point (adds 0). */
TI__PRIVATE ti_status ti__convint_run(ti__kctx *k) {
    const ti_tensor *x = k->in[0], *w = k->in[1];
    const ti_tensor *xz = k->n_in > 2 ? k->in[2] : NULL, *wz = k->n_in > 3 ? k->in[3] : NULL;
    ti__convp p;
    ti_status e = ti__conv_params(k, 0, &p);
    if (e != TI_OK) return e;
    int32_t zx = xz != NULL ? (int32_t)ti__get_i64(xz, 0) : 0;
    ti__qrq rq;
    memset(&rq, 0, sizeof rq);
    rq.mode = TI__QRQ_RAW;
    return ti__q_conv_gemm(k, x, w, wz, zx, NULL, &rq, k->out[0], p.n, p.c, p.m, p.group, p.in,
                           p.k, p.s, p.d, p.pb, p.out, 0);
}

TI__PRIVATE const ti__op ti__ops_conv[] = {
    {"Conv", ti__conv_shape, ti__conv_run, ti__conv_scratch, 0},
    {"ConvTranspose", ti__convtr_shape, ti__convtr_run, ti__convtr_scratch, 0},
    {"ConvInteger", ti__convint_shape, ti__convint_run, ti__convint_scratch, 0},
    {NULL, NULL, NULL, NULL, 0}
};
