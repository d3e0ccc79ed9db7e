/* Pooling: MaxPool (with optional Indices), AveragePool, LpPool over 1-D to 3-D spatial
 * windows (pads, auto_pad, strides, dilations, ceil_mode), their Global* forms, and
 * MaxUnpool. Spatial shapes are handled as 3-D (D, H, W) with leading 1s. Parallel over
 * the N*C planes. float32 reads its data directly; other dtypes go through ti__get_f64.
 * Must not allocate. */

typedef enum { TI__POOL_MAX, TI__POOL_AVG, TI__POOL_LP } ti__pool_kind;

/* Window geometry: a Conv's (conv.c), of which pools use nd, n, c and the spatial arrays. */
typedef ti__convp ti__poolp;

/* Reads kernel_shape, strides, dilations, pads, auto_pad, ceil_mode; computes the output
 * spatial shape (ONNX MaxPool / AveragePool output-shape rules). */
TI__PRIVATE ti_status ti__pool_params(ti__kctx *k, ti__poolp *p) {
    const ti_tensor *x = k->in[0];
    memset(p, 0, sizeof *p);
    if (x->rank < 3)
        return ti__kfail(k, TI_ERR_BAD_MODEL,
                         "input has %d dims, expected at least 3 (N, C, spatial...)", x->rank);
    int nd = x->rank - 2;
    if (nd > 3)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "%d spatial dims (at most 3 are supported)", nd);
    int kc;
    const int64_t *ks = ti__attr_ints(k->node, "kernel_shape", &kc);
    if (ks == NULL) return ti__kfail(k, TI_ERR_BAD_MODEL, "kernel_shape is required");
    if (kc != nd)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "kernel_shape has %d values but the input has %d "
                         "spatial dims", kc, nd);
    int64_t st[3], dl[3], pads[6];
    ti_status e;
    if ((e = ti__win_ints(k, "strides", nd, 1, st)) != TI_OK) return e;
    if ((e = ti__win_ints(k, "dilations", nd, 1, dl)) != TI_OK) return e;
    if ((e = ti__win_ints(k, "pads", 2 * nd, 0, pads)) != TI_OK) return e;
    int ceil_mode = ti__attr_i(k->node, "ceil_mode", 0) != 0, mode;
    if ((e = ti__win_auto_pad(k, &mode)) != TI_OK) return e;
    p->nd = nd;
    p->n = x->shape[0];
    p->c = x->shape[1];
    for (int i = 0; i < nd; i++) {
        int64_t in = x->shape[2 + i], pb = pads[i], pe = pads[nd + i], out;
        if ((e = ti__win_check(k, i, ks[i], st[i], dl[i], pb, pe)) != TI_OK ||
            (e = ti__win_axis(k, i, in, ks[i], st[i], dl[i], mode, ceil_mode, &pb, &pe, &out)) !=
                TI_OK)
            return e;
        ti__win_set(p, i, in, ks[i], st[i], dl[i], pb, pe, out);
    }
    ti__win_done(p);
    return TI_OK;
}

TI__PRIVATE int ti__pool_float_ok(ti_dtype t) {
    return t == TI_DTYPE_F32 || t == TI_DTYPE_F64 || t == TI_DTYPE_F16 || t == TI_DTYPE_BF16;
}

TI__PRIVATE int ti__pool_shape_common(ti__kctx *k, ti__pool_kind kind) {
    TI__REQUIRE_INPUT(k, 0);
    const ti_tensor *x = k->in[0];
    int ok = ti__pool_float_ok(x->dtype) ||
             (kind == TI__POOL_MAX && (x->dtype == TI_DTYPE_U8 || x->dtype == TI_DTYPE_I8));
    if (!ok)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "dtype %s is not supported",
                         ti_dtype_name(x->dtype));
    ti__poolp p;
    ti_status e = ti__pool_params(k, &p);
    if (e != TI_OK) return e;
    int64_t dims[5];
    dims[0] = x->shape[0];
    dims[1] = x->shape[1];
    for (int i = 0; i < p.nd; i++) dims[2 + i] = p.out[3 - p.nd + i];
    if (!ti__set_shape(k->out[0], x->dtype, x->rank, dims))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid output shape");
    if (kind == TI__POOL_MAX && k->n_out > 1 && k->out[1] != NULL) {
        int64_t so = ti__attr_i(k->node, "storage_order", 0);
        if (so != 0 && so != 1)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "storage_order is %lld, expected 0 or 1",
                             (long long)so);
        if (!ti__set_shape(k->out[1], TI_DTYPE_I64, x->rank, dims))
            return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid indices shape");
    }
    return TI_OK;
}
TI__PRIVATE int ti__maxpool_shape(ti__kctx *k) {
    return ti__pool_shape_common(k, TI__POOL_MAX);
}
TI__PRIVATE int ti__avgpool_shape(ti__kctx *k) {
    return ti__pool_shape_common(k, TI__POOL_AVG);
}
TI__PRIVATE int ti__lppool_shape(ti__kctx *k) {
    return ti__pool_shape_common(k, TI__POOL_LP);
}

typedef struct ti__pool_job {
    const ti__poolp *p;
    ti__pool_kind kind;
    const ti_tensor *x;
    ti_tensor *y;
    int64_t *idx;  /* MaxPool indices, or NULL */
    int col_major; /* storage_order 1 */
    int include_pad;
    double lp;
} ti__pool_job;

/* Kernel taps kk in [lo, hi) of one axis whose position o*s - pb + kk*d lies in [0, n);
 * *hi_pad: taps inside the explicitly padded extent [-pb, n + pe). */
TI__PRIVATE void ti__pool_taps(const ti__poolp *p, int j, int64_t o, int64_t *lo, int64_t *hi,
                               int64_t *hi_pad) {
    int64_t start = o * p->s[j] - p->pb[j], d = p->d[j], n = p->in[j];
    int64_t a = start >= 0 ? 0 : (-start + d - 1) / d;
    int64_t b = n - start <= 0 ? 0 : (n - start + d - 1) / d;
    int64_t c = n + p->pe[j] - start <= 0 ? 0 : (n + p->pe[j] - start + d - 1) / d;
    *lo = TI__MIN(a, p->k[j]);
    *hi = TI__MAX(*lo, TI__MIN(b, p->k[j]));
    *hi_pad = TI__MIN(c, p->k[j]);
}

/* One MaxPool output of a 2-D float32 plane x by the scalar rule: the first tap inside
 * the input, then only larger ones (NaN never replaces); 0 for a window in padding only. */
TI__PRIVATE float ti__pool_max_one(const ti__poolp *p, const float *x, int64_t oh, int64_t ow) {
    int64_t hlo, hhi, hpad, wlo, whi, wpad;
    ti__pool_taps(p, 1, oh, &hlo, &hhi, &hpad);
    ti__pool_taps(p, 2, ow, &wlo, &whi, &wpad);
    if (hlo >= hhi || wlo >= whi) return 0.0f;
    int64_t ih0 = oh * p->s[1] - p->pb[1], iw0 = ow * p->s[2] - p->pb[2], W = p->in[2];
    float m = x[(ih0 + hlo) * W + iw0 + wlo];
    for (int64_t kh = hlo; kh < hhi; kh++) {
        const float *row = x + (ih0 + kh) * W + iw0;
        for (int64_t kw = wlo; kw < whi; kw++) m = row[kw] > m ? row[kw] : m;
    }
    return m;
}

typedef struct ti__maxpool_flat_job {
    const ti__dw_isa *isa;
    int taps;
} ti__maxpool_flat_job;

TI__PRIVATE void ti__maxpool_flat_op(void *ctx, size_t plane, float *out, size_t n,
                                     const float *const *x) {
    const ti__maxpool_flat_job *j = (const ti__maxpool_flat_job *)ctx;
    (void)plane;
    j->isa->pool_max(out, n, x, j->taps);
}

/* 2-D max pooling, square kernel up to 5 x 5, equal strides 1 or 2, no dilation, by the
 * depthwise conv's flat path (cpu/conv_fast.c) with -inf as the padding: the windows
 * whose first tap is inside the input give the scalar rule's bits (padding never
 * replaces: -inf > m is never true, nor for m NaN); the others (top rows and left columns
 * over the padding, and any window starting past the input) are then done one by one.
 * Returns 0, having done nothing, when the geometry or the buffer does not allow it. */
TI__PRIVATE int ti__maxpool_flat(const ti__pool_job *j, size_t begin, size_t end) {
    const ti__poolp *p = j->p;
    if (j->kind != TI__POOL_MAX || p->k[1] != p->k[2] || p->s[1] != p->s[2]) return 0;
    ti__dw_flat f;
    memset(&f, 0, sizeof f);
    f.K = p->k[1], f.S = p->s[1], f.H = p->in[1], f.W = p->in[2], f.OH = p->out[1];
    f.OW = p->out[2], f.pt = p->pb[1], f.pl = p->pb[2], f.in_sp = p->in_sp, f.out_sp = p->out_sp;
    if (!ti__dw_flat_plan(&f)) return 0;
    float buf[TI__DW_FLAT_FLOATS];
    ti__maxpool_flat_job mj;
    mj.isa = ti__dw_pick_isa();
    mj.taps = (int)(f.K * f.K);
    const float *x = (const float *)j->x->data;
    float *y = (float *)j->y->data;
    ti__dw_flat_run(&f, mj.isa, -INFINITY, x, y, buf, begin, end, ti__maxpool_flat_op, NULL,
                    &mj);
    /* columns [0, c_lo) start left of the input, [c_hi, OW) right of it. Such a window
     * that overlaps the input has the scalar rule's answer already unless its first tap
     * inside the input is NaN (which the scalar rule keeps, and the flat path, starting
     * from the padding's -inf, skips): only those, and windows over padding alone, are
     * redone one by one (all of them were: 39 % of a 3x3 / 2 MaxPool on 112 x 112, perf) */
    int64_t c_lo = TI__MIN(f.OW, (f.pl + f.S - 1) / f.S);
    int64_t c_hi = TI__MIN(f.OW, TI__MAX(c_lo, (f.W + f.pl + f.S - 1) / f.S));
    for (size_t pln = begin; pln < end; pln++) {
        const float *xp = x + pln * p->in_sp;
        float *yp = y + pln * p->out_sp;
        for (int64_t oh = 0; oh < f.OH; oh++) {
            int64_t ih = oh * f.S - f.pt;
            int whole = ih < 0 || ih >= f.H; /* the row starts above or below the input */
            for (int64_t ow = 0; ow < f.OW; ow++) {
                if (!whole && ow == c_lo) ow = c_hi;
                if (ow >= f.OW) break;
                int64_t iw = ow * f.S - f.pl;
                if (ih < f.H && ih + f.K > 0 && iw < f.W && iw + f.K > 0) {
                    float first = xp[TI__MAX(ih, (int64_t)0) * f.W + TI__MAX(iw, (int64_t)0)];
                    if (first == first) continue;
                }
                yp[oh * f.OW + ow] = ti__pool_max_one(p, xp, oh, ow);
            }
        }
    }
    return 1;
}

/* Output columns, and rows, whose tap ranges ti__pool_planes_f32 keeps on the stack (6 KiB
 * each). */
#define TI__POOL_COLS 512

/* The tap ranges (lo, hi, hi_pad of ti__pool_taps) of every output along axis j into t;
 * 0, having written nothing, when there are more than TI__POOL_COLS outputs. */
TI__PRIVATE int ti__pool_tap_table(const ti__poolp *p, int j, int32_t (*t)[3]) {
    if (p->out[j] > TI__POOL_COLS) return 0;
    for (int64_t o = 0; o < p->out[j]; o++) {
        int64_t lo, hi, pad;
        ti__pool_taps(p, j, o, &lo, &hi, &pad);
        t[o][0] = (int32_t)lo;
        t[o][1] = (int32_t)hi;
        t[o][2] = (int32_t)pad;
    }
    return 1;
}

/* float32 MaxPool / AveragePool over up to 2 spatial dims, undilated, no Indices output:
 * the windows' tap ranges found once per row and column, float compares for max (exact),
 * a double sum for the average (as the general path, so both give the same bits). */
TI__PRIVATE void ti__pool_planes_f32(const ti__pool_job *j, size_t begin, size_t end) {
    const ti__poolp *p = j->p;
    const float *xf = (const float *)j->x->data;
    float *yf = (float *)j->y->data;
    int64_t oh_n = p->out[1], ow_n = p->out[2], iw_n = p->in[2];
    /* the columns' and rows' tap ranges, the same for every plane: found once (three
     * divisions each, which cost more than a 3x3 window) when there are not too many */
    int32_t cols[TI__POOL_COLS][3], rows[TI__POOL_COLS][3];
    int have_cols = ti__pool_tap_table(p, 2, cols), have_rows = ti__pool_tap_table(p, 1, rows);
    /* max pooling, stride 1 or 2: the columns whose window lies inside the row, [clo, chi),
     * go through the vector row kernel of the depthwise convolution's ISA set; for 3 x 3
     * windows at stride 2, the rows whose windows lie inside the plane too, [rlo, rhi),
     * through its kernel for whole rows of windows, once a plane */
    int64_t clo = 0, chi = 0, rlo = 0, rhi = 0, kw_n = p->k[2], sw = p->s[2];
    ti__maxpool_row_fn maxrow = NULL;
    ti__maxpool_k3s2_fn k3s2 = NULL;
    if (have_cols && j->kind == TI__POOL_MAX && (sw == 1 || sw == 2) && p->k[1] <= 16) {
        while (clo < ow_n && !(cols[clo][0] == 0 && cols[clo][1] == kw_n)) clo++;
        chi = clo;
        while (chi < ow_n && cols[chi][0] == 0 && cols[chi][1] == kw_n) chi++;
        if (chi > clo) maxrow = ti__dw_pick_isa()->maxrow[sw == 2];
        if (maxrow != NULL && have_rows && kw_n == 3 && sw == 2 && p->k[1] == 3 &&
            p->s[1] == 2) {
            while (rlo < oh_n && !(rows[rlo][0] == 0 && rows[rlo][1] == 3)) rlo++;
            rhi = rlo;
            while (rhi < oh_n && rows[rhi][0] == 0 && rows[rhi][1] == 3) rhi++;
            if (rhi > rlo) k3s2 = ti__dw_pick_isa()->mp_k3s2;
        }
    }
    for (size_t pl = begin; pl < end; pl++) {
        const float *x = xf + pl * p->in_sp;
        float *y = yf + pl * p->out_sp;
        if (k3s2 != NULL)
            k3s2(y + rlo * ow_n + clo, (size_t)ow_n, (size_t)(chi - clo),
                 x + (rlo * 2 - p->pb[1]) * iw_n + clo * 2 - p->pb[2], (size_t)iw_n,
                 (size_t)(rhi - rlo));
        for (int64_t oh = 0; oh < oh_n; oh++) {
            int64_t hlo, hhi, hpad;
            if (have_rows) {
                hlo = rows[oh][0];
                hhi = rows[oh][1];
                hpad = rows[oh][2];
            } else {
                ti__pool_taps(p, 1, oh, &hlo, &hhi, &hpad);
            }
            int64_t ih0 = oh * p->s[1] - p->pb[1];
            int vec = maxrow != NULL && hlo < hhi;
            if (vec && k3s2 != NULL && oh >= rlo && oh < rhi) {
                if (clo == 0 && chi == ow_n) continue; /* the whole row is done */
            } else if (vec) {
                const float *xr[16];
                for (int64_t r = 0; r < hhi - hlo; r++)
                    xr[r] = x + (ih0 + hlo + r) * iw_n + clo * sw - p->pb[2];
                maxrow(y + oh * ow_n + clo, (size_t)(chi - clo), xr, (int)(hhi - hlo), (int)kw_n);
            }
            for (int64_t ow = 0; ow < ow_n; ow++) {
                int64_t wlo, whi, wpad;
                if (vec && ow == clo) ow = chi; /* done by the row kernel */
                if (ow >= ow_n) break;
                if (have_cols) {
                    wlo = cols[ow][0];
                    whi = cols[ow][1];
                    wpad = cols[ow][2];
                } else {
                    ti__pool_taps(p, 2, ow, &wlo, &whi, &wpad);
                }
                int64_t iw0 = ow * p->s[2] - p->pb[2];
                float out;
                if (j->kind == TI__POOL_MAX) { /* the first tap, then only larger ones (NaN: never) */
                    out = 0.0f;                  /* a window entirely in padding */
                    if (hlo < hhi && wlo < whi) {
                        float m = x[(ih0 + hlo) * iw_n + iw0 + wlo];
                        for (int64_t kh = hlo; kh < hhi; kh++) {
                            const float *row = x + (ih0 + kh) * iw_n + iw0;
                            for (int64_t kw = wlo; kw < whi; kw++) m = row[kw] > m ? row[kw] : m;
                        }
                        out = m;
                    }
                } else {
                    double acc = 0.0;
                    for (int64_t kh = hlo; kh < hhi; kh++) {
                        const float *row = x + (ih0 + kh) * iw_n + iw0;
                        for (int64_t kw = wlo; kw < whi; kw++) acc += (double)row[kw];
                    }
                    int64_t cnt = j->include_pad ? hpad * wpad : (hhi - hlo) * (whi - wlo);
                    out = cnt > 0 ? (float)(acc / (double)cnt) : 0.0f;
                }
                y[oh * ow_n + ow] = out;
            }
        }
    }
}

/* 1 when a MaxPool goes by rows (ti__pool_planes_f32) though the flat path could take it:
 * 3 x 3 windows at stride 2 where the ISA has a kernel for whole rows of them and the tap
 * tables fit. Per-node minima in the models, Xeon, AVX-512, alternating runs
 * (bench/nodemin.c), against the flat path on rows of 27 and 13 and the column-first row
 * kernel on longer ones before: SqueezeNet's 64 @ 111, 128 @ 55 and 256 @ 27 0.202 / 0.093
 * / 0.063 -> 0.131 / 0.063 / 0.029 ms on 1 thread, 0.136 / 0.066 / 0.049 -> 0.090 / 0.048
 * / 0.030 on 2; ResNet-18's 64 @ 112 (padded) 0.281 -> 0.212 and 0.155 -> 0.116. */
TI__PRIVATE int ti__pool_rows_first(const ti__pool_job *j) {
    const ti__poolp *p = j->p;
    return j->kind == TI__POOL_MAX && p->k[1] == 3 && p->k[2] == 3 && p->s[1] == 2 &&
           p->s[2] == 2 && p->out[1] <= TI__POOL_COLS && p->out[2] <= TI__POOL_COLS &&
           ti__dw_pick_isa()->mp_k3s2 != NULL;
}

TI__PRIVATE void ti__pool_planes(void *ctx, size_t begin, size_t end) {
    const ti__pool_job *j = (const ti__pool_job *)ctx;
    const ti__poolp *p = j->p;
    if (j->x->dtype == TI_DTYPE_F32 && j->y->dtype == TI_DTYPE_F32 && j->idx == NULL && j->kind != TI__POOL_LP &&
        p->out[0] == 1 && p->in[0] == 1 && p->k[0] == 1 && p->pb[0] == 0 && p->d[1] == 1 && p->d[2] == 1) {
        if (!ti__pool_rows_first(j) && ti__maxpool_flat(j, begin, end)) return;
        ti__pool_planes_f32(j, begin, end);
        return;
    }
    const float *xf = j->x->dtype == TI_DTYPE_F32 ? (const float *)j->x->data : NULL;
    float *yf = j->y->dtype == TI_DTYPE_F32 ? (float *)j->y->data : NULL;
    for (size_t pl = begin; pl < end; pl++) {
        size_t xo = pl * p->in_sp, yo = pl * p->out_sp;
        for (int64_t od = 0; od < p->out[0]; od++) {
            int64_t dlo, dhi, dpad;
            ti__pool_taps(p, 0, od, &dlo, &dhi, &dpad);
            for (int64_t oh = 0; oh < p->out[1]; oh++) {
                int64_t hlo, hhi, hpad;
                ti__pool_taps(p, 1, oh, &hlo, &hhi, &hpad);
                for (int64_t ow = 0; ow < p->out[2]; ow++, yo++) {
                    int64_t wlo, whi, wpad;
                    ti__pool_taps(p, 2, ow, &wlo, &whi, &wpad);
                    double acc = j->kind == TI__POOL_MAX ? -HUGE_VAL : 0.0;
                    int64_t best = -1;
                    for (int64_t kd = dlo; kd < dhi; kd++) {
                        int64_t id = od * p->s[0] - p->pb[0] + kd * p->d[0];
                        for (int64_t kh = hlo; kh < hhi; kh++) {
                            int64_t ih = oh * p->s[1] - p->pb[1] + kh * p->d[1];
                            size_t row = (size_t)((id * p->in[1] + ih) * p->in[2]);
                            for (int64_t kw = wlo; kw < whi; kw++) {
                                int64_t iw = ow * p->s[2] - p->pb[2] + kw * p->d[2];
                                size_t xi = row + (size_t)iw;
                                double v = xf != NULL ? (double)xf[xo + xi]
                                                      : ti__get_f64(j->x, xo + xi);
                                if (j->kind == TI__POOL_MAX) {
                                    if (v > acc || best < 0) {
                                        acc = v;
                                        /* storage_order 1: column-major spatial index */
                                        best = !j->col_major ? (int64_t)xi
                                               : p->nd == 1  ? iw
                                               : p->nd == 2  ? ih + iw * p->in[1]
                                                             : id + (ih + iw * p->in[1]) * p->in[0];
                                    }
                                } else if (j->kind == TI__POOL_AVG) {
                                    acc += v;
                                } else {
                                    acc += pow(fabs(v), j->lp);
                                }
                            }
                        }
                    }
                    if (j->kind == TI__POOL_AVG) {
                        int64_t cnt = j->include_pad ? dpad * hpad * wpad
                                                     : (dhi - dlo) * (hhi - hlo) * (whi - wlo);
                        acc = cnt > 0 ? acc / (double)cnt : 0.0;
                    } else if (j->kind == TI__POOL_LP) {
                        acc = pow(acc, 1.0 / j->lp);
                    } else if (best < 0) {
                        acc = 0.0; /* a window entirely in padding */
                    }
                    if (yf != NULL) yf[yo] = (float)acc;
                    else ti__set_f64(j->y, yo, acc);
                    if (j->idx != NULL) j->idx[yo] = best < 0 ? -1 : (int64_t)xo + best;
                }
            }
        }
    }
}

TI__PRIVATE ti_status ti__pool_run_common(ti__kctx *k, ti__pool_kind kind) {
    ti__poolp p;
    ti_status e = ti__pool_params(k, &p);
    if (e != TI_OK) return e;
    ti__pool_job j;
    memset(&j, 0, sizeof j);
    j.p = &p;
    j.kind = kind;
    j.x = k->in[0];
    j.y = k->out[0];
    if (kind == TI__POOL_MAX && k->n_out > 1 && k->out[1] != NULL) {
        j.idx = (int64_t *)k->out[1]->data;
        j.col_major = ti__attr_i(k->node, "storage_order", 0) == 1;
    }
    j.include_pad = ti__attr_i(k->node, "count_include_pad", 0) != 0;
    j.lp = ti__attr_f(k->node, "p", 2.0f);
    if (kind == TI__POOL_LP && !(j.lp > 0.0))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "p is %g, expected > 0", j.lp);
    size_t work = p.out_sp * (size_t)(p.k[0] * p.k[1] * p.k[2]);
    ti__parallel_for(k->tp, (size_t)(p.n * p.c), TI__MAX((size_t)1, 65536 / (work + 1)),
                     ti__pool_planes, &j);
    return TI_OK;
}
TI__PRIVATE ti_status ti__maxpool_run(ti__kctx *k) {
    return ti__pool_run_common(k, TI__POOL_MAX);
}
TI__PRIVATE ti_status ti__avgpool_run(ti__kctx *k) {
    return ti__pool_run_common(k, TI__POOL_AVG);
}
TI__PRIVATE ti_status ti__lppool_run(ti__kctx *k) {
    return ti__pool_run_common(k, TI__POOL_LP);
}

/* ---- GlobalAveragePool, GlobalMaxPool, GlobalLpPool --------------------------------- */

TI__PRIVATE int ti__gpool_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    const ti_tensor *x = k->in[0];
    if (!ti__pool_float_ok(x->dtype))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "dtype %s is not supported",
                         ti_dtype_name(x->dtype));
    if (x->rank < 2)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "input has %d dims, expected at least 2 (N, C)",
                         x->rank);
    int64_t dims[TI_MAX_DIMS];
    for (int i = 0; i < x->rank; i++) dims[i] = i < 2 ? x->shape[i] : 1;
    if (!ti__set_shape(k->out[0], x->dtype, x->rank, dims))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid output shape");
    return TI_OK;
}

typedef struct ti__gpool_job {
    const ti_tensor *x;
    ti_tensor *y;
    size_t sp;
    int kind;
    double lp;
    const ti__dw_isa *isa; /* float32 averages: its plane sum */
} ti__gpool_job;

TI__PRIVATE void ti__gpool_planes(void *ctx, size_t begin, size_t end) {
    const ti__gpool_job *j = (const ti__gpool_job *)ctx;
    const float *xf = j->x->dtype == TI_DTYPE_F32 ? (const float *)j->x->data : NULL;
    for (size_t pl = begin; pl < end; pl++) {
        size_t o = pl * j->sp;
        double acc = j->kind == TI__POOL_MAX ? -HUGE_VAL : 0.0;
        if (xf != NULL && j->kind == TI__POOL_AVG) {
            acc = (double)j->isa->sum(xf + o, j->sp);
        } else {
            for (size_t i = 0; i < j->sp; i++) {
                double v = xf != NULL ? (double)xf[o + i] : ti__get_f64(j->x, o + i);
                if (j->kind == TI__POOL_MAX) acc = (v > acc || i == 0) ? v : acc;
                else if (j->kind == TI__POOL_AVG) acc += v;
                else acc += pow(fabs(v), j->lp);
            }
        }
        if (j->kind == TI__POOL_AVG) acc = j->sp ? acc / (double)j->sp : 0.0;
        else if (j->kind == TI__POOL_LP) acc = pow(acc, 1.0 / j->lp);
        ti__set_f64(j->y, pl, acc);
    }
}

TI__PRIVATE ti_status ti__gpool_run_common(ti__kctx *k, ti__pool_kind kind) {
    ti__gpool_job j;
    j.x = k->in[0];
    j.y = k->out[0];
    j.kind = (int)kind;
    j.lp = ti__attr_f(k->node, "p", 2.0f);
    j.isa = ti__dw_pick_isa();
    if (kind == TI__POOL_LP && !(j.lp > 0.0))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "p is %g, expected > 0", j.lp);
    size_t planes = (size_t)(j.x->shape[0] * j.x->shape[1]);
    j.sp = planes ? ti__numel(j.x) / planes : 0;
    /* Split from about 4096 elements a chunk, not 65536: the squeeze-and-excite pools of
     * MobileNetV3 and EfficientNet (16 planes of 56 x 56, 96 of 14 x 14, ...) then run on
     * each thread over the planes the depthwise conv before them wrote there; on the
     * caller alone, half their input came from the other core's cache. On 2 threads
     * (2-core Xeon VM, bench/ab.py, node minima) each such pool ran 0.005 -> 0.002-0.003 ms
     * and whole sums went 0.951 -> 0.921 ms (MobileNetV3-small) and 5.301 -> 5.138
     * (EfficientNet-B0); MobileNetV2 and SqueezeNet unchanged. */
    ti__parallel_for(k->tp, planes, TI__MAX((size_t)1, 4096 / (j.sp + 1)), ti__gpool_planes, &j);
    return TI_OK;
}
TI__PRIVATE ti_status ti__gavgpool_run(ti__kctx *k) {
    return ti__gpool_run_common(k, TI__POOL_AVG);
}
TI__PRIVATE ti_status ti__gmaxpool_run(ti__kctx *k) {
    return ti__gpool_run_common(k, TI__POOL_MAX);
}
TI__PRIVATE ti_status ti__glppool_run(ti__kctx *k) {
    return ti__gpool_run_common(k, TI__POOL_LP);
}

/* ---- MaxUnpool ----------------------------------------------------------------------- */

/* The unpooled shape implied by the attributes: (in - 1) * stride - pads + kernel. */
TI__PRIVATE ti_status ti__unpool_inferred(ti__kctx *k, int64_t *dims) {
    const ti_tensor *x = k->in[0];
    if (x->rank < 3)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "input has %d dims, expected at least 3", x->rank);
    int nd = x->rank - 2, kc;
    const int64_t *ks = ti__attr_ints(k->node, "kernel_shape", &kc);
    if (ks == NULL || kc != nd)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "kernel_shape has %d values, expected %d", kc, nd);
    int64_t st[TI_MAX_DIMS], pads[2 * TI_MAX_DIMS];
    ti_status e;
    if ((e = ti__win_ints(k, "strides", nd, 1, st)) != TI_OK) return e;
    if ((e = ti__win_ints(k, "pads", 2 * nd, 0, pads)) != TI_OK) return e;
    dims[0] = x->shape[0];
    dims[1] = x->shape[1];
    for (int i = 0; i < nd; i++) {
        if ((e = ti__win_check(k, i, ks[i], st[i], 1, pads[i], pads[nd + i])) != TI_OK) return e;
        if (x->shape[2 + i] - 1 > INT64_MAX / 4 / st[i])
            return ti__kfail(k, TI_ERR_BAD_MODEL, "unpooled dim %d is out of range", i);
        dims[2 + i] = (x->shape[2 + i] - 1) * st[i] - pads[i] - pads[nd + i] + ks[i];
        if (dims[2 + i] <= 0)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "unpooled dim %d would be %lld", i,
                             (long long)dims[2 + i]);
    }
    return TI_OK;
}

TI__PRIVATE int ti__unpool_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    const ti_tensor *x = k->in[0], *ind = k->in[1];
    const ti_tensor *os = k->n_in > 2 ? k->in[2] : NULL;
    if (!ti__pool_float_ok(x->dtype))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "dtype %s is not supported",
                         ti_dtype_name(x->dtype));
    if (ind->dtype != TI_DTYPE_I64 || ti__numel(ind) != ti__numel(x))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "indices must be int64 with the shape of X");
    int64_t dims[TI_MAX_DIMS];
    ti_status e = ti__unpool_inferred(k, dims);
    if (e != TI_OK) return e;
    if (os != NULL) {
        TI__NEED(k, os);
        if ((int)ti__numel(os) != x->rank)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "output_shape has %zu values, expected %d",
                             ti__numel(os), x->rank);
        for (int i = 0; i < x->rank; i++) {
            int64_t v = ti__get_i64(os, (size_t)i);
            if (i < 2 ? v != dims[i] : v < dims[i])
                return ti__kfail(k, TI_ERR_UNSUPPORTED,
                                 "output_shape[%d] = %lld, expected %s %lld", i, (long long)v,
                                 i < 2 ? "" : ">=", (long long)dims[i]);
            dims[i] = v;
        }
    }
    if (!ti__set_shape(k->out[0], x->dtype, x->rank, dims))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid output shape");
    return TI_OK;
}

TI__PRIVATE ti_status ti__unpool_run(ti__kctx *k) {
    const ti_tensor *x = k->in[0], *ind = k->in[1];
    ti_tensor *y = k->out[0];
    int64_t inf[TI_MAX_DIMS];
    ti_status e = ti__unpool_inferred(k, inf);
    if (e != TI_OK) return e;
    memset(y->data, 0, y->size_bytes);
    /* Indices address the inferred shape (as MaxPool produced them); an output_shape larger
     * than that keeps each element at the same coordinates (ONNX reference behaviour). */
    size_t total = ti__shape_numel(x->rank, inf), n = ti__numel(x);
    const int64_t *id = (const int64_t *)ind->data;
    for (size_t i = 0; i < n; i++) {
        int64_t v = id[i];
        if (v < 0 || (uint64_t)v >= total)
            return ti__kfail(k, TI_ERR_INVALID_ARGUMENT, "index %lld at %zu is outside [0, %zu)",
                             (long long)v, i, total);
        size_t rem = (size_t)v, off = 0, mul = 1;
        for (int d = x->rank - 1; d >= 0; d--) {
            size_t c = rem % (size_t)inf[d];
            rem /= (size_t)inf[d];
            off += c * mul;
            mul *= (size_t)y->shape[d];
        }
        ti__set_f64(y, off, ti__get_f64(x, i));
    }
    return TI_OK;
}

TI__PRIVATE const ti__op ti__ops_pool[] = {
    {"MaxPool", ti__maxpool_shape, ti__maxpool_run, NULL, 0},
    {"AveragePool", ti__avgpool_shape, ti__avgpool_run, NULL, 0},
    {"LpPool", ti__lppool_shape, ti__lppool_run, NULL, 0},
    {"GlobalAveragePool", ti__gpool_shape, ti__gavgpool_run, NULL, 0},
    {"GlobalMaxPool", ti__gpool_shape, ti__gmaxpool_run, NULL, 0},
    {"GlobalLpPool", ti__gpool_shape, ti__glppool_run, NULL, 0},
    {"MaxUnpool", ti__unpool_shape, ti__unpool_run, NULL, 0},
    {NULL, NULL, NULL, NULL, 0}
};
