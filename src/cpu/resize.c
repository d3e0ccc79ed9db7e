/* Resize (opsets 10 to 19) and the deprecated Upsample (7, 9) on one reference kernel: nearest,
 * N-linear and N-cubic interpolation, every coordinate transformation mode, antialiasing,
 * axes and keep_aspect_ratio_policy. Per resized axis the source taps and weights of each
 * output position are tabulated in scratch; each output element is the weighted sum over the
 * product of its axes' taps, accumulated in double. Relies on internal.h and core/tensor.c.
 * Follows the ONNX reference (onnx/reference/ops/op_resize.py) where the spec is silent.
 * Must not allocate in run: the tables live in the scratch its scratch function sizes. */

enum { TI__RS_NEAREST, TI__RS_LINEAR, TI__RS_CUBIC };
enum { /* coordinate transformation modes */
    TI__RS_HALF_PIXEL,
    TI__RS_HALF_PIXEL_SYM,
    TI__RS_PYTORCH_HALF_PIXEL,
    TI__RS_ALIGN_CORNERS,
    TI__RS_ASYMMETRIC,
    TI__RS_TF_CROP,
    TI__RS_TF_HALF_PIXEL_NN /* opset 11 only */
};
enum { /* nearest modes; SIMPLE is the Resize-10 / Upsample rule (ceil when downsampling) */
    TI__RS_ROUND_FLOOR,
    TI__RS_ROUND_CEIL,
    TI__RS_FLOOR,
    TI__RS_CEIL,
    TI__RS_SIMPLE
};

/* Everything the shape, scratch and run functions derive from attributes and inputs. */
typedef struct ti__rs_params {
    int rank, mode, ctm, nearest, antialias, exclude;
    double cubic_a, extrap;
    int n_axes;                     /* axes the roi refers to, in order */
    int axes[TI_MAX_DIMS];
    double scale[TI_MAX_DIMS];      /* per dim of X; 1 for dims not resized */
    int64_t out[TI_MAX_DIMS];
    int taps[TI_MAX_DIMS];          /* source taps per output position; 1 for identity */
    int identity[TI_MAX_DIMS];
} ti__rs_params;

TI__PRIVATE int ti__rs_pick(const char *s, const char *const *names, int n) {
    for (int i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0) return i;
    return -1;
}

/* Taps of the (antialiased) linear or cubic filter at scale s: the ONNX reference footprint. */
TI__PRIVATE int ti__rs_filter_taps(int mode, int antialias, double s) {
    if (mode == TI__RS_NEAREST) return 1;
    double half = mode == TI__RS_LINEAR ? 1.0 : 2.0; /* filter support radius */
    if (!antialias || s >= 1.0) return 2 * (int)half;
    double start = floor(-half / s) + 1.0;
    double t = 2.0 - 2.0 * start;
    return t > 1e6 ? -1 : (int)t; /* -1: a filter no table should hold */
}

TI__PRIVATE int ti__rs_params_get(ti__kctx *k, ti__rs_params *p) {
    const ti__node *n = k->node;
    const ti_tensor *x = k->in[0];
    int r = x->rank;
    int upsample = strcmp(n->op, "Upsample") == 0;
    int modern = !upsample && k->opset >= 11;
    memset(p, 0, sizeof *p);
    p->rank = r;
    if (r < 1) return ti__kfail(k, TI_ERR_BAD_MODEL, "input must have rank >= 1");

    static const char *const modes[] = {"nearest", "linear", "cubic", "bilinear"};
    const char *ms = ti__attr_s(n, "mode", "nearest");
    p->mode = ti__rs_pick(ms, modes, modern ? 3 : 4);
    if (p->mode == 3) p->mode = TI__RS_LINEAR; /* "bilinear": Upsample-1 spelling */
    if (p->mode < 0) return ti__kfail(k, TI_ERR_UNSUPPORTED, "mode '%s' is not supported", ms);
    if (modern) {
        static const char *const ctms[] = {"half_pixel", "half_pixel_symmetric",
                                           "pytorch_half_pixel", "align_corners", "asymmetric",
                                           "tf_crop_and_resize", "tf_half_pixel_for_nn"};
        static const char *const nms[] = {"round_prefer_floor", "round_prefer_ceil", "floor",
                                          "ceil"};
        const char *cs = ti__attr_s(n, "coordinate_transformation_mode", "half_pixel");
        const char *ns = ti__attr_s(n, "nearest_mode", "round_prefer_floor");
        p->ctm = ti__rs_pick(cs, ctms, 7);
        if (p->ctm < 0)
            return ti__kfail(k, TI_ERR_UNSUPPORTED,
                             "coordinate_transformation_mode '%s' is not supported", cs);
        p->nearest = ti__rs_pick(ns, nms, 4);
        if (p->nearest < 0)
            return ti__kfail(k, TI_ERR_UNSUPPORTED, "nearest_mode '%s' is not supported", ns);
        p->cubic_a = ti__attr_f(n, "cubic_coeff_a", -0.75f);
        p->exclude = ti__attr_i(n, "exclude_outside", 0) != 0;
        p->extrap = ti__attr_f(n, "extrapolation_value", 0.0f);
        p->antialias = ti__attr_i(n, "antialias", 0) != 0 && p->mode != TI__RS_NEAREST;
    } else { /* Resize-10 and Upsample: asymmetric coordinates (as onnxruntime does) */
        p->ctm = TI__RS_ASYMMETRIC;
        p->nearest = TI__RS_SIMPLE;
        p->cubic_a = -0.75;
    }

    /* axes (opset 18): which dims scales / sizes / roi refer to */
    int na = 0;
    const int64_t *axes = modern ? ti__attr_ints(n, "axes", &na) : NULL;
    if (axes == NULL) {
        na = r;
        for (int i = 0; i < r; i++) p->axes[i] = i;
    } else {
        if (na > r)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "%d axes for an input of rank %d", na, r);
        unsigned seen = 0;
        for (int i = 0; i < na; i++) {
            int64_t a = axes[i];
            if (a < -(int64_t)r || a >= (int64_t)r)
                return ti__kfail(k, TI_ERR_BAD_MODEL, "axis %lld out of range for rank %d",
                                 (long long)a, r);
            p->axes[i] = (int)(a < 0 ? a + r : a);
            if (seen & (1u << p->axes[i]))
                return ti__kfail(k, TI_ERR_BAD_MODEL, "axis %lld repeated", (long long)a);
            seen |= 1u << p->axes[i];
        }
    }
    p->n_axes = na;
    if (p->ctm == TI__RS_TF_CROP) {
        const ti_tensor *roi = k->n_in > 1 ? k->in[1] : NULL;
        if (roi == NULL || ti__numel(roi) != (size_t)(2 * na) || !ti__dtype_is_float(roi->dtype))
            return ti__kfail(k, TI_ERR_BAD_MODEL,
                             "tf_crop_and_resize needs a float roi of %d values, got %zu", 2 * na,
                             roi ? ti__numel(roi) : (size_t)0);
    }
    for (int d = 0; d < r; d++) {
        p->scale[d] = 1.0;
        p->out[d] = x->shape[d];
    }

    /* scales or sizes */
    const ti_tensor *scales = NULL, *sizes = NULL;
    int n_scales_attr = 0;
    const float *scales_attr = NULL;
    if (upsample && k->opset < 9) {
        scales_attr = ti__attr_floats(n, "scales", &n_scales_attr);
        if (scales_attr == NULL)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "attribute 'scales' is required");
    } else if (!modern) {
        TI__REQUIRE_INPUT(k, 1);
        scales = k->in[1];
    } else {
        scales = k->n_in > 2 ? k->in[2] : NULL;
        sizes = k->n_in > 3 ? k->in[3] : NULL;
        if (scales != NULL && ti__numel(scales) == 0) scales = NULL;
        if (sizes != NULL && ti__numel(sizes) == 0) sizes = NULL;
        if (scales != NULL && sizes != NULL)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "only one of scales and sizes may be given");
    }
    if (scales == NULL && sizes == NULL && scales_attr == NULL)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "one of scales and sizes must be given");
    TI__NEED(k, scales);
    TI__NEED(k, sizes);
    size_t cnt = scales_attr ? (size_t)n_scales_attr : ti__numel(scales ? scales : sizes);
    if (cnt != (size_t)na)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "%s has %zu values, expected %d",
                         sizes ? "sizes" : "scales", cnt, na);
    if (sizes != NULL) {
        if (!ti__dtype_is_int(sizes->dtype))
            return ti__kfail(k, TI_ERR_BAD_MODEL, "sizes has dtype %s, expected int64",
                             ti_dtype_name(sizes->dtype));
        static const char *const pols[] = {"stretch", "not_larger", "not_smaller"};
        const char *ps = ti__attr_s(n, "keep_aspect_ratio_policy", "stretch");
        int pol = ti__rs_pick(ps, pols, 3);
        if (pol < 0)
            return ti__kfail(k, TI_ERR_UNSUPPORTED,
                             "keep_aspect_ratio_policy '%s' is not supported", ps);
        double common = pol == 1 ? INFINITY : 0.0;
        for (int i = 0; i < na; i++) {
            int d = p->axes[i];
            int64_t s = ti__get_i64(sizes, (size_t)i);
            if (s < 0)
                return ti__kfail(k, TI_ERR_BAD_MODEL, "sizes[%d] = %lld is negative", i,
                                 (long long)s);
            if (x->shape[d] == 0 && s != 0)
                return ti__kfail(k, TI_ERR_BAD_MODEL, "cannot resize empty dim %d to %lld", d,
                                 (long long)s);
            p->out[d] = s;
            p->scale[d] = x->shape[d] ? (double)s / (double)x->shape[d] : 1.0;
            if (pol == 1) common = TI__MIN(common, p->scale[d]);
            if (pol == 2) common = TI__MAX(common, p->scale[d]);
        }
        if (pol != 0) { /* one scale for all the axes; round_int rounds halves up */
            for (int i = 0; i < na; i++) {
                int d = p->axes[i];
                p->scale[d] = common;
                double v = floor(common * (double)x->shape[d] + 0.5);
                if (!(v < 9e15)) return ti__kfail(k, TI_ERR_BAD_MODEL, "output size overflows");
                p->out[d] = (int64_t)v;
            }
        }
    } else {
        for (int i = 0; i < na; i++) {
            int d = p->axes[i];
            double s = scales_attr ? (double)scales_attr[i] : ti__get_f64(scales, (size_t)i);
            if (!(s > 0.0) || s == INFINITY)
                return ti__kfail(k, TI_ERR_BAD_MODEL, "scales[%d] = %g, expected > 0", i, s);
            double v = floor(s * (double)x->shape[d]);
            if (!(v < 9e15)) return ti__kfail(k, TI_ERR_BAD_MODEL, "output size overflows");
            p->scale[d] = s;
            p->out[d] = (int64_t)v;
        }
    }
    for (int d = 0; d < r; d++) {
        /* as the reference: a dim whose scale is 1 (to 1e-9) and size unchanged is copied.
         * A crop is never an identity (its roi moves the samples); with roi [0, 1] its
         * coordinates come out exact anyway. */
        p->identity[d] = fabs(p->scale[d] - 1.0) <= 1e-9 && p->out[d] == x->shape[d] &&
                         p->ctm != TI__RS_TF_CROP;
        p->taps[d] = p->identity[d] ? 1 : ti__rs_filter_taps(p->mode, p->antialias, p->scale[d]);
        if (p->taps[d] < 0)
            return ti__kfail(k, TI_ERR_UNSUPPORTED, "antialias filter for scale %g is too wide",
                             p->scale[d]);
    }
    return TI_OK;
}

TI__PRIVATE int ti__resize_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    const ti_tensor *x = k->in[0];
    if (!ti__dtype_is_float(x->dtype) && !ti__dtype_is_int(x->dtype))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "input dtype %s is not supported",
                         ti_dtype_name(x->dtype));
    ti__rs_params p;
    int st = ti__rs_params_get(k, &p);
    if (st != TI_OK) return st;
    if (!ti__set_shape(k->out[0], x->dtype, p.rank, p.out))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid output shape");
    return TI_OK;
}

/* Scratch layout, in bytes from the start (all 8-aligned): a row accumulator of out[last]
 * doubles; then per dim, out[d] * taps[d] weights (double) and as many source indices
 * (int64, clamped to the input); then one flag byte per output position of each dim (1: the
 * crop falls outside the input there). Returns SIZE_MAX on overflow. */
typedef struct ti__rs_layout {
    size_t acc, w[TI_MAX_DIMS], idx[TI_MAX_DIMS], flag[TI_MAX_DIMS], total;
} ti__rs_layout;

TI__PRIVATE void ti__rs_layout_make(const ti__rs_params *p, ti__rs_layout *l) {
    size_t off = 0, b = 0;
    int ok = 1;
    l->acc = 0;
    ok &= ti__mul_size((size_t)p->out[p->rank - 1], 8, &b) && ti__add_size(off, b, &off);
    for (int d = 0; d < p->rank; d++) {
        size_t n = 0;
        ok &= ti__mul_size((size_t)p->out[d], (size_t)p->taps[d], &n);
        ok &= ti__mul_size(n, 8, &b);
        l->w[d] = off;
        ok &= ti__add_size(off, b, &off);
        l->idx[d] = off;
        ok &= ti__add_size(off, b, &off);
    }
    for (int d = 0; d < p->rank; d++) {
        l->flag[d] = off;
        ok &= ti__add_size(off, ((size_t)p->out[d] + 7) & ~(size_t)7, &off);
    }
    l->total = ok ? off : SIZE_MAX;
}

TI__PRIVATE size_t ti__resize_scratch(ti__kctx *k) {
    ti__rs_params p;
    if (ti__rs_params_get(k, &p) != TI_OK) return 0;
    ti__rs_layout l;
    ti__rs_layout_make(&p, &l);
    return l.total;
}

/* Source coordinate of output position y along a dim (ONNX Resize spec, per mode). */
TI__PRIVATE double ti__rs_coord(int ctm, double y, double scale, int64_t in, int64_t out,
                                double roi0, double roi1) {
    double ow = scale * (double)in; /* output width before flooring: may be fractional */
    switch (ctm) {
    case TI__RS_ALIGN_CORNERS: return ow == 1.0 ? 0.0 : y * (double)(in - 1) / (ow - 1.0);
    case TI__RS_ASYMMETRIC: return y / scale;
    case TI__RS_TF_HALF_PIXEL_NN: return (y + 0.5) / scale;
    case TI__RS_TF_CROP: {
        /* roi1 - roi0 and roi0 * (in - 1) round to float, as the reference's float32 roi
         * does: it decides ties of the nearest mode */
        float rd = (float)roi1 - (float)roi0, r0 = (float)roi0 * (float)(in - 1);
        double x = ow == 1.0 ? (double)(rd * (float)(in - 1) / 2.0f)
                             : y * (double)rd * (double)(in - 1) / (ow - 1.0);
        return x + (double)r0;
    }
    case TI__RS_PYTORCH_HALF_PIXEL: return out > 1 ? (y + 0.5) / scale - 0.5 : 0.0;
    case TI__RS_HALF_PIXEL_SYM: {
        double adjust = (double)out / ow, center = (double)in / 2.0;
        return center * (1.0 - adjust) + (y + 0.5) / scale - 0.5;
    }
    default: return (y + 0.5) / scale - 0.5;
    }
}

/* Filter weight at distance t (in input pixels, already scaled for antialiasing). */
TI__PRIVATE double ti__rs_kernel(int mode, double a, double t) {
    t = fabs(t);
    if (mode == TI__RS_LINEAR) return t < 1.0 ? 1.0 - t : 0.0;
    if (t <= 1.0) return ((a + 2.0) * t - (a + 3.0)) * t * t + 1.0;
    if (t < 2.0) return ((a * t - 5.0 * a) * t + 8.0 * a) * t - 4.0 * a;
    return 0.0;
}

/* Fills the tables of dim d (see ti__rs_layout). */
TI__PRIVATE void ti__rs_table(const ti__rs_params *p, int d, int64_t in, double roi0,
                              double roi1, int identity, double *w, int64_t *idx,
                              uint8_t *flag) {
    int64_t out = p->out[d];
    int taps = p->taps[d];
    double s = p->scale[d];
    for (int64_t o = 0; o < out; o++) {
        double *wo = w + o * taps;
        int64_t *io = idx + o * taps;
        if (identity) {
            wo[0] = 1.0;
            io[0] = o;
            flag[o] = 0;
            continue;
        }
        double x = ti__rs_coord(p->ctm, (double)o, s, in, out, roi0, roi1);
        flag[o] = p->ctm == TI__RS_TF_CROP && (x < 0.0 || x > (double)(in - 1));
        double fl = floor(x), frac = x - fl;
        if (p->mode == TI__RS_NEAREST) {
            double v;
            switch (frac == 0.0 ? TI__RS_FLOOR : p->nearest) {
            case TI__RS_ROUND_FLOOR: v = frac <= 0.5 ? fl : fl + 1.0; break;
            case TI__RS_ROUND_CEIL: v = frac < 0.5 ? fl : fl + 1.0; break;
            case TI__RS_CEIL: v = fl + 1.0; break;
            case TI__RS_SIMPLE: v = s < 1.0 ? fl + 1.0 : fl; break;
            default: v = fl; break;
            }
            wo[0] = 1.0;
            io[0] = v < 0.0 ? 0 : v > (double)(in - 1) ? in - 1 : (int64_t)v;
            continue;
        }
        /* the taps nearest x, preferring the left one: as the reference's window */
        double start = frac == 0.0 ? fl - taps / 2 : fl - taps / 2 + 1;
        double fs = p->antialias ? TI__MIN(s, 1.0) : 1.0, sum = 0.0;
        for (int t = 0; t < taps; t++) {
            wo[t] = ti__rs_kernel(p->mode, p->cubic_a, (start + t - x) * fs);
            sum += wo[t];
        }
        if (p->antialias && sum != 0.0)
            for (int t = 0; t < taps; t++) wo[t] /= sum;
        if (p->exclude) {
            sum = 0.0;
            for (int t = 0; t < taps; t++) {
                double src = start + t;
                if (src < 0.0 || src > (double)(in - 1)) wo[t] = 0.0;
                sum += wo[t];
            }
            if (sum != 0.0)
                for (int t = 0; t < taps; t++) wo[t] /= sum;
        }
        for (int t = 0; t < taps; t++) {
            double src = start + t;
            io[t] = src < 0.0 ? 0 : src > (double)(in - 1) ? in - 1 : (int64_t)src;
        }
    }
}

TI__PRIVATE ti_status ti__resize_run(ti__kctx *k) {
    const ti_tensor *x = k->in[0];
    ti_tensor *y = k->out[0];
    ti__rs_params p;
    int st = ti__rs_params_get(k, &p);
    if (st != TI_OK)
        return st == TI__NEED_VALUE ? ti__kfail(k, TI_ERR_BAD_MODEL, "scales/sizes have no value")
                                    : (ti_status)st;
    int r = p.rank;
    if (ti__numel(y) == 0) return TI_OK;
    ti__rs_layout l;
    ti__rs_layout_make(&p, &l);
    if (l.total == SIZE_MAX || k->scratch_bytes < l.total)
        return ti__kfail(k, TI_ERR_INVALID_ARGUMENT, "scratch of %zu bytes, need %zu",
                         k->scratch_bytes, l.total);
    /* roi: [start..., end...] over the axes, normalised to the input */
    double roi0[TI_MAX_DIMS], roi1[TI_MAX_DIMS];
    for (int d = 0; d < r; d++) {
        roi0[d] = 0.0;
        roi1[d] = 1.0;
    }
    if (p.ctm == TI__RS_TF_CROP) {
        const ti_tensor *roi = k->in[1]; /* checked by ti__rs_params_get */
        for (int i = 0; i < p.n_axes; i++) {
            roi0[p.axes[i]] = ti__get_f64(roi, (size_t)i);
            roi1[p.axes[i]] = ti__get_f64(roi, (size_t)(p.n_axes + i));
        }
    }
    char *sc = (char *)k->scratch;
    double *acc = (double *)(sc + l.acc);
    int multi[TI_MAX_DIMS], n_multi = 0; /* outer dims with more than one tap */
    for (int d = 0; d < r; d++) {
        ti__rs_table(&p, d, x->shape[d], roi0[d], roi1[d], p.identity[d], (double *)(sc + l.w[d]),
                     (int64_t *)(sc + l.idx[d]), (uint8_t *)(sc + l.flag[d]));
        if (d < r - 1 && p.taps[d] > 1) multi[n_multi++] = d;
    }
    int64_t xs[TI_MAX_DIMS];
    ti__strides(r, x->shape, xs);
    int last = r - 1;
    int64_t W = p.out[last];
    int tl = p.taps[last];
    const double *wl = (const double *)(sc + l.w[last]);
    const int64_t *il = (const int64_t *)(sc + l.idx[last]);
    const uint8_t *fl = (const uint8_t *)(sc + l.flag[last]);
    size_t es = ti_dtype_size(x->dtype);
    int is_int = ti__dtype_is_int(x->dtype);
    int64_t lo = 0, hi = 0;
    if (is_int) { /* integer outputs round half to even and saturate, as the reference */
        switch (x->dtype) {
        case TI_DTYPE_I8: lo = INT8_MIN; hi = INT8_MAX; break;
        case TI_DTYPE_U8: lo = 0; hi = UINT8_MAX; break;
        case TI_DTYPE_I16: lo = INT16_MIN; hi = INT16_MAX; break;
        case TI_DTYPE_U16: lo = 0; hi = UINT16_MAX; break;
        case TI_DTYPE_I32: lo = INT32_MIN; hi = INT32_MAX; break;
        case TI_DTYPE_U32: lo = 0; hi = UINT32_MAX; break;
        default: lo = INT64_MIN; hi = INT64_MAX; break;
        }
    }
    size_t rows = ti__shape_numel(r - 1, p.out);
    int64_t ro[TI_MAX_DIMS] = {0}; /* output position of the current row, dims < last */
    for (size_t row = 0; row < rows; row++) {
        size_t ybase = row * (size_t)W;
        int ext = 0;
        size_t base = 0; /* input offset of the first tap of single-tap dims */
        for (int d = 0; d < last; d++) {
            ext |= ((const uint8_t *)(sc + l.flag[d]))[ro[d]];
            if (p.taps[d] == 1) base += (size_t)((const int64_t *)(sc + l.idx[d]))[ro[d]] * (size_t)xs[d];
        }
        if (!ext && n_multi == 0 && tl == 1) { /* nearest / copies: exact element moves */
            const char *src = (const char *)x->data + base * es;
            char *dst = (char *)y->data + ybase * es;
            if (es == 4) { /* float32 / int32: a typed gather */
                const uint32_t *s4 = (const uint32_t *)(const void *)src;
                uint32_t *d4 = (uint32_t *)(void *)dst;
                for (int64_t i = 0; i < W; i++) d4[i] = s4[il[i]];
            } else {
                for (int64_t i = 0; i < W; i++)
                    memcpy(dst + (size_t)i * es, src + (size_t)il[i] * es, es);
            }
            for (int64_t i = 0; i < W; i++) /* crop positions outside the input */
                if (fl[i]) ti__set_f64(y, ybase + (size_t)i, p.extrap);
        } else if (!ext) {
            for (int64_t i = 0; i < W; i++) acc[i] = 0.0;
            int64_t tap[TI_MAX_DIMS] = {0}; /* odometer over the taps of the multi-tap dims */
            for (;;) {
                double wo = 1.0;
                size_t off = base;
                for (int m = 0; m < n_multi; m++) {
                    int d = multi[m];
                    size_t e = (size_t)(ro[d] * p.taps[d] + tap[m]);
                    wo *= ((const double *)(sc + l.w[d]))[e];
                    off += (size_t)((const int64_t *)(sc + l.idx[d]))[e] * (size_t)xs[d];
                }
                if (wo != 0.0) {
                    for (int64_t i = 0; i < W; i++) {
                        const double *wi = wl + i * tl;
                        const int64_t *ii = il + i * tl;
                        double a = 0.0;
                        if (x->dtype == TI_DTYPE_F32) {
                            const float *xp = (const float *)x->data + off;
                            for (int t = 0; t < tl; t++) a += wi[t] * xp[ii[t] * xs[last]];
                        } else {
                            for (int t = 0; t < tl; t++)
                                a += wi[t] * ti__get_f64(x, off + (size_t)(ii[t] * xs[last]));
                        }
                        acc[i] += wo * a;
                    }
                }
                int m = n_multi - 1;
                for (; m >= 0; m--) {
                    if (++tap[m] < p.taps[multi[m]]) break;
                    tap[m] = 0;
                }
                if (m < 0) break;
            }
            for (int64_t i = 0; i < W; i++) {
                size_t e = ybase + (size_t)i;
                double v = fl[i] ? p.extrap : acc[i];
                if (x->dtype == TI_DTYPE_F32) ((float *)y->data)[e] = (float)v;
                else if (is_int) {
                    v = rint(v);
                    v = v < (double)lo ? (double)lo : v > (double)hi ? (double)hi : v;
                    ti__set_f64(y, e, v);
                } else ti__set_f64(y, e, v);
            }
        } else {
            for (int64_t i = 0; i < W; i++) ti__set_f64(y, ybase + (size_t)i, p.extrap);
        }
        for (int d = last - 1; d >= 0; d--) { /* next row */
            if (++ro[d] < p.out[d]) break;
            ro[d] = 0;
        }
    }
    return TI_OK;
}

TI__PRIVATE const ti__op ti__ops_resize[] = {
    {"Resize", ti__resize_shape, ti__resize_run, ti__resize_scratch, 0},
    {"Upsample", ti__resize_shape, ti__resize_run, ti__resize_scratch, 0},
    {NULL, NULL, NULL, NULL, 0}
};
