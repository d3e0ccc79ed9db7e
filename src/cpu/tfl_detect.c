/* TFLite custom op TFLite_Detection_PostProcess (SSD): decodes center-size box encodings
 * against anchors, then runs TFLite's fast (one NMS over each anchor's best classes) or
 * regular (per-class NMS, merged by score) non-maximum suppression, with TFLite's float
 * arithmetic, tie order and output layout (detection_postprocess.cc, single-threaded).
 * Options come from the node's "custom_options" attribute, a FlexBuffers map read by the
 * bounds-checked reader below (offsets from the file are never trusted). Relies on
 * internal.h. Must not allocate in run: all working arrays live in the scratch. */

/* ---- FlexBuffers: just enough to read a map of scalars ------------------------------- */
enum {
    TI__FBT_NULL = 0, TI__FBT_INT = 1, TI__FBT_UINT = 2, TI__FBT_FLOAT = 3, TI__FBT_KEY = 4,
    TI__FBT_INDIRECT_INT = 6, TI__FBT_INDIRECT_UINT = 7, TI__FBT_INDIRECT_FLOAT = 8,
    TI__FBT_MAP = 9, TI__FBT_BOOL = 26
};

/* A scalar found in the map: its FlexBuffers type, and the value in both forms. */
typedef struct ti__flex_val {
    int type; /* TI__FBT_NULL when the key is absent */
    int64_t i;
    double f;
} ti__flex_val;

/* [off, off + w) lies inside a buffer of n bytes. */
TI__PRIVATE int ti__flex_in(size_t n, size_t off, size_t w) { return off <= n && w <= n - off; }
/* Little-endian unsigned integer of width w (1, 2, 4 or 8) at buf[off]; 0 when out of bounds. */
TI__PRIVATE int ti__flex_u(const uint8_t *buf, size_t n, size_t off, int w, uint64_t *out) {
    if (!(w == 1 || w == 2 || w == 4 || w == 8) || !ti__flex_in(n, off, (size_t)w)) return 0;
    uint64_t v = 0;
    for (int b = w - 1; b >= 0; b--) v = (v << 8) | buf[off + (size_t)b];
    *out = v;
    return 1;
}
TI__PRIVATE int64_t ti__flex_sext(uint64_t v, int w) {
    if (w == 8) return v >= 0x8000000000000000ull ? -(int64_t)(~v) - 1 : (int64_t)v;
    uint64_t sign = 1ull << (8 * w - 1);
    return v & sign ? (int64_t)v - (int64_t)(sign << 1) : (int64_t)v;
}
/* offset - (unsigned at offset): FlexBuffers offsets point backwards. */
TI__PRIVATE int ti__flex_indirect(const uint8_t *buf, size_t n, size_t off, int w, size_t *out) {
    uint64_t d;
    if (!ti__flex_u(buf, n, off, w, &d) || d > off) return 0;
    *out = off - (size_t)d;
    return 1;
}
/* FlexBuffers ReadDouble: widths 1 and 2 hold integers (no 8/16-bit floats there). */
TI__PRIVATE int ti__flex_double(const uint8_t *buf, size_t n, size_t off, int w, double *out) {
    uint64_t v;
    if (!ti__flex_u(buf, n, off, w, &v)) return 0;
    if (w == 4) {
        uint32_t u = (uint32_t)v;
        float f;
        memcpy(&f, &u, 4);
        *out = f;
    } else if (w == 8) {
        memcpy(out, &v, 8);
    } else {
        *out = (double)ti__flex_sext(v, w);
    }
    return 1;
}

/* Looks `key` up in the root map of buf[0, n). Returns 0 on a malformed buffer or a value of
 * a non-scalar type; an absent key gives type TI__FBT_NULL. */
TI__PRIVATE int ti__flex_map_get(const uint8_t *buf, size_t n, const char *key, ti__flex_val *out) {
    memset(out, 0, sizeof *out);
    if (n < 3) return 0;
    int root_w = buf[n - 1], root_packed = buf[n - 2];
    if (!(root_w == 1 || root_w == 2 || root_w == 4 || root_w == 8) || (size_t)root_w > n - 2)
        return 0;
    size_t root = n - 2 - (size_t)root_w;
    if ((root_packed >> 2) != TI__FBT_MAP) return 0;
    int bw = 1 << (root_packed & 3); /* width of the map's elements */
    size_t data, keys_at, keys;
    uint64_t len, kw64, klen;
    if (!ti__flex_indirect(buf, n, root, root_w, &data)) return 0;
    if (data < 3 * (size_t)bw || !ti__flex_u(buf, n, data - (size_t)bw, bw, &len)) return 0;
    keys_at = data - 3 * (size_t)bw;
    if (!ti__flex_indirect(buf, n, keys_at, bw, &keys)) return 0;
    if (!ti__flex_u(buf, n, keys_at + (size_t)bw, bw, &kw64)) return 0;
    int kw = (int)kw64;
    if (!(kw == 1 || kw == 2 || kw == 4 || kw == 8) || keys < (size_t)kw) return 0;
    if (!ti__flex_u(buf, n, keys - (size_t)kw, kw, &klen) || klen != len) return 0;
    /* values: len elements of bw bytes, then len type bytes; keys: len offsets of kw bytes */
    if (len > n || !ti__flex_in(n, data, (size_t)len * (size_t)(bw + 1)) ||
        !ti__flex_in(n, keys, (size_t)len * (size_t)kw))
        return 0;
    for (size_t i = 0; i < (size_t)len; i++) {
        size_t s;
        if (!ti__flex_indirect(buf, n, keys + i * (size_t)kw, kw, &s)) return 0;
        size_t e = s;
        while (e < n && buf[e] != 0) e++;
        if (e >= n) return 0; /* unterminated key */
        if (strcmp((const char *)buf + s, key) != 0) continue;
        size_t at = data + i * (size_t)bw;
        int packed = buf[data + (size_t)len * (size_t)bw + i];
        int type = packed >> 2, ew = 1 << (packed & 3);
        uint64_t u;
        out->type = type;
        switch (type) {
        case TI__FBT_NULL: return 1;
        case TI__FBT_INT:
        case TI__FBT_UINT:
        case TI__FBT_BOOL:
            if (!ti__flex_u(buf, n, at, bw, &u)) return 0;
            out->i = type == TI__FBT_INT ? ti__flex_sext(u, bw) : (int64_t)u;
            out->f = type == TI__FBT_INT ? (double)out->i : (double)u;
            return 1;
        case TI__FBT_FLOAT:
            if (!ti__flex_double(buf, n, at, bw, &out->f)) return 0;
            break;
        case TI__FBT_INDIRECT_INT:
        case TI__FBT_INDIRECT_UINT:
        case TI__FBT_INDIRECT_FLOAT: {
            size_t p;
            if (!ti__flex_indirect(buf, n, at, bw, &p)) return 0;
            if (type == TI__FBT_INDIRECT_FLOAT) {
                if (!ti__flex_double(buf, n, p, ew, &out->f)) return 0;
                break;
            }
            if (!ti__flex_u(buf, n, p, ew, &u)) return 0;
            out->i = type == TI__FBT_INDIRECT_INT ? ti__flex_sext(u, ew) : (int64_t)u;
            out->f = type == TI__FBT_INDIRECT_INT ? (double)out->i : (double)u;
            return 1;
        }
        default: return 0;
        }
        /* floats: int conversions truncate, as static_cast does (range-checked here) */
        out->i = out->f > -9.2e18 && out->f < 9.2e18 ? (int64_t)out->f : 0;
        return 1;
    }
    return 1;
}

/* ---- options ------------------------------------------------------------------------- */
typedef struct ti__dpp_opts {
    int max_det, max_cls, per_class, num_classes, regular;
    float score_thr, iou_thr;
    float ys, xs, hs, ws;
} ti__dpp_opts;

TI__PRIVATE ti_status ti__dpp_opts_get(ti__kctx *k, ti__dpp_opts *o) {
    static const char *const keys[] = {"max_detections", "max_classes_per_detection",
                                       "detections_per_class", "use_regular_nms",
                                       "nms_score_threshold", "nms_iou_threshold",
                                       "num_classes", "y_scale", "x_scale", "h_scale", "w_scale"};
    ti__flex_val v[11];
    const ti__attr *a = ti__attr_get(k->node, "custom_options");
    if (a == NULL || a->type != TI__ATTR_STRING || a->s == NULL)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "custom_options (a FlexBuffers map) are missing");
    for (int i = 0; i < 11; i++) {
        if (!ti__flex_map_get((const uint8_t *)a->s, a->s_len, keys[i], &v[i]))
            return ti__kfail(k, TI_ERR_BAD_MODEL,
                             "custom_options: malformed FlexBuffers map or non-scalar '%s'", keys[i]);
    }
    /* AsInt32 of an absent key is 0; detections_per_class defaults to 100. */
    for (int i = 0; i < 7; i++)
        if (i != 3 && i != 4 && i != 5 && (v[i].i < INT32_MIN || v[i].i > INT32_MAX))
            return ti__kfail(k, TI_ERR_BAD_MODEL, "custom_options: %s = %lld out of range", keys[i],
                             (long long)v[i].i);
    o->max_det = (int)v[0].i;
    o->max_cls = (int)v[1].i;
    o->per_class = v[2].type == TI__FBT_NULL ? 100 : (int)v[2].i;
    o->regular = v[3].i != 0; /* AsBool */
    o->score_thr = (float)v[4].f;
    o->iou_thr = (float)v[5].f;
    o->num_classes = (int)v[6].i;
    o->ys = (float)v[7].f;
    o->xs = (float)v[8].f;
    o->hs = (float)v[9].f;
    o->ws = (float)v[10].f;
    if (o->max_det < 0 || o->max_cls < 1)
        return ti__kfail(k, TI_ERR_BAD_MODEL,
                         "max_detections %d must be >= 0 and max_classes_per_detection %d >= 1",
                         o->max_det, o->max_cls);
    if ((int64_t)o->max_det * o->max_cls > INT32_MAX / 4)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "max_detections %d x max_classes_per_detection %d too large",
                         o->max_det, o->max_cls);
    if (!(o->iou_thr > 0.0f && o->iou_thr <= 1.0f))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "nms_iou_threshold %g must be in (0, 1]", (double)o->iou_thr);
    if (o->regular && TI__MIN(o->per_class, o->max_det) <= 0)
        return ti__kfail(k, TI_ERR_BAD_MODEL,
                         "regular NMS needs detections_per_class %d and max_detections %d > 0",
                         o->per_class, o->max_det);
    return TI_OK;
}

/* Sizes from the inputs; validates dtypes and shapes. */
typedef struct ti__dpp_geom {
    int num_boxes, enc_len, ncwb, label_offset, num_cat;
} ti__dpp_geom;

TI__PRIVATE ti_status ti__dpp_geom_get(ti__kctx *k, const ti__dpp_opts *o, ti__dpp_geom *g) {
    if (k->n_in != 3 || k->in[0] == NULL || k->in[1] == NULL || k->in[2] == NULL)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "expects 3 inputs (box encodings, class predictions, anchors)");
    if (k->n_out != 4 || !k->out[0] || !k->out[1] || !k->out[2] || !k->out[3])
        return ti__kfail(k, TI_ERR_BAD_MODEL, "expects 4 outputs (boxes, classes, scores, count)");
    const ti_tensor *box = k->in[0], *cls = k->in[1], *anc = k->in[2];
    if (box->rank != 3 || cls->rank != 3 || anc->rank != 2)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "input ranks %d, %d, %d, expected 3, 3, 2", box->rank,
                         cls->rank, anc->rank);
    if (box->shape[0] != 1 || cls->shape[0] != 1)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "batch %lld, only batch 1 is supported",
                         (long long)box->shape[0]);
    if (box->shape[1] > INT32_MAX / 4 || box->shape[2] < 4 || box->shape[2] > INT32_MAX ||
        cls->shape[2] > INT32_MAX)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "box encodings must be [1, anchors, >= 4]");
    g->num_boxes = (int)box->shape[1];
    g->enc_len = (int)box->shape[2];
    if (cls->shape[1] != g->num_boxes)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "class predictions have %lld anchors, boxes %d",
                         (long long)cls->shape[1], g->num_boxes);
    if (anc->shape[0] < g->num_boxes || anc->shape[1] != 4)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "anchors [%lld, %lld], expected [%d, 4]",
                         (long long)anc->shape[0], (long long)anc->shape[1], g->num_boxes);
    g->ncwb = (int)cls->shape[2];
    g->label_offset = g->ncwb - o->num_classes;
    if (o->num_classes < 0 || g->label_offset < 0 || g->label_offset > 1)
        return ti__kfail(k, TI_ERR_BAD_MODEL,
                         "num_classes %d with %d class scores per anchor (expected equal or one "
                         "background more)", o->num_classes, g->ncwb);
    if (!o->regular && o->num_classes == 0)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "fast NMS needs num_classes > 0");
    g->num_cat = TI__MIN(o->max_cls, o->num_classes);
    if (box->dtype == TI_DTYPE_F32) {
        if (anc->dtype != TI_DTYPE_F32)
            return ti__kfail(k, TI_ERR_UNSUPPORTED, "float32 box encodings with %s anchors",
                             ti_dtype_name(anc->dtype));
    } else if (box->dtype == TI_DTYPE_U8) {
        if (anc->dtype != TI_DTYPE_U8)
            return ti__kfail(k, TI_ERR_UNSUPPORTED, "uint8 box encodings with %s anchors",
                             ti_dtype_name(anc->dtype));
        if (box->quant.count < 1 || anc->quant.count < 1)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "uint8 boxes/anchors without quantization");
    } else {
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "box encodings of type %s", ti_dtype_name(box->dtype));
    }
    if (cls->dtype == TI_DTYPE_U8) {
        if (cls->quant.count < 1)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "uint8 class predictions without quantization");
    } else if (cls->dtype != TI_DTYPE_F32) {
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "class predictions of type %s", ti_dtype_name(cls->dtype));
    }
    return TI_OK;
}

/* ---- scratch ------------------------------------------------------------------------- */
typedef struct ti__dpp_box_info {
    int index;
    float score;
} ti__dpp_box_info;

typedef struct ti__dpp_bufs {
    float *boxes;  /* decoded [num_boxes][ymin, xmin, ymax, xmax] */
    float *scores; /* dequantized class predictions (uint8 input only) */
    float *nms_scores;
    int *keep_idx, *sorted, *sort_tmp, *selected;
    float *keep_scores;
    unsigned char *active;
    int *row_perm, *top_cls;          /* fast NMS */
    ti__dpp_box_info *info, *info_tmp; /* regular NMS */
} ti__dpp_bufs;

TI__PRIVATE size_t ti__dpp_layout(const ti__kctx *k, const ti__dpp_opts *o, const ti__dpp_geom *g,
                                  unsigned char *base, ti__dpp_bufs *b) {
    size_t nb = (size_t)g->num_boxes, off = 0;
    size_t n_info = o->regular ? (size_t)o->max_det + (size_t)TI__MIN(o->per_class, o->max_det) : 0;
    size_t sizes[14] = {
        nb * 4 * sizeof(float),
        k->in[1]->dtype == TI_DTYPE_U8 ? nb * (size_t)g->ncwb * sizeof(float) : 0,
        nb * sizeof(float), nb * sizeof(int), nb * sizeof(int), nb * sizeof(int), nb * sizeof(int),
        nb * sizeof(float), nb,
        o->regular ? 0 : (size_t)o->num_classes * sizeof(int),
        o->regular ? 0 : nb * (size_t)g->num_cat * sizeof(int),
        n_info * sizeof(ti__dpp_box_info), n_info * sizeof(ti__dpp_box_info), 0};
    void *p[14];
    for (int i = 0; i < 14; i++) {
        p[i] = base != NULL ? (void *)(base + off) : NULL;
        off += (sizes[i] + 15) & ~(size_t)15;
    }
    if (b != NULL) {
        b->boxes = (float *)p[0];
        b->scores = (float *)p[1];
        b->nms_scores = (float *)p[2];
        b->keep_idx = (int *)p[3];
        b->sorted = (int *)p[4];
        b->sort_tmp = (int *)p[5];
        b->selected = (int *)p[6];
        b->keep_scores = (float *)p[7];
        b->active = (unsigned char *)p[8];
        b->row_perm = (int *)p[9];
        b->top_cls = (int *)p[10];
        b->info = (ti__dpp_box_info *)p[11];
        b->info_tmp = (ti__dpp_box_info *)p[12];
    }
    return off;
}

/* ---- sorting with TFLite's tie order ------------------------------------------------- */
/* std::stable_sort of idx[0, n) by decreasing v[idx]: a bottom-up merge sort. */
TI__PRIVATE void ti__dpp_stable_sort(int *idx, int *tmp, int n, const float *v) {
    for (int width = 1; width < n; width *= 2) {
        for (int lo = 0; lo < n - width; lo += 2 * width) {
            int mid = lo + width, hi = TI__MIN(lo + 2 * width, n), a = lo, b = mid, o = lo;
            while (a < mid && b < hi) tmp[o++] = v[idx[b]] > v[idx[a]] ? idx[b++] : idx[a++];
            while (a < mid) tmp[o++] = idx[a++];
            while (b < hi) tmp[o++] = idx[b++];
            memcpy(idx + lo, tmp + lo, (size_t)(hi - lo) * sizeof(int));
        }
    }
}

/* libstdc++'s std::partial_sort (heap select, then sort_heap) with comp(a, b) = v[a] > v[b],
 * step for step, so that tied scores come out in the order TFLite produces. */
#define TI__DPP_CMP(a, b) (v[(a)] > v[(b)])
TI__PRIVATE void ti__dpp_adjust_heap(int *f, int hole, int len, int value, const float *v) {
    int top = hole, child = hole;
    while (child < (len - 1) / 2) {
        child = 2 * (child + 1);
        if (TI__DPP_CMP(f[child], f[child - 1])) child--;
        f[hole] = f[child];
        hole = child;
    }
    if ((len & 1) == 0 && child == (len - 2) / 2) {
        child = 2 * (child + 1);
        f[hole] = f[child - 1];
        hole = child - 1;
    }
    int parent = (hole - 1) / 2; /* __push_heap */
    while (hole > top && TI__DPP_CMP(f[parent], value)) {
        f[hole] = f[parent];
        hole = parent;
        parent = (hole - 1) / 2;
    }
    f[hole] = value;
}
TI__PRIVATE void ti__dpp_partial_sort(int *f, int k, int n, const float *v) {
    if (k >= 2) { /* make_heap */
        for (int parent = (k - 2) / 2;; parent--) {
            ti__dpp_adjust_heap(f, parent, k, f[parent], v);
            if (parent == 0) break;
        }
    }
    for (int i = k; i < n; i++) { /* heap select: pop_heap(first, middle, i) */
        if (TI__DPP_CMP(f[i], f[0])) {
            int value = f[i];
            f[i] = f[0];
            ti__dpp_adjust_heap(f, 0, k, value, v);
        }
    }
    for (int last = k; last > 1;) { /* sort_heap */
        last--;
        int value = f[last];
        f[last] = f[0];
        ti__dpp_adjust_heap(f, 0, last, value, v);
    }
}
#undef TI__DPP_CMP

/* ArgMaxVector (float): first maximum, NaN candidates skipped. */
TI__PRIVATE int ti__dpp_argmax(const float *v, int n) {
    int best = 0;
    float m = v[0];
    for (int i = 1; i < n; i++)
        if (!(v[i] != v[i]) && ((m != m) || v[i] > m)) {
            m = v[i];
            best = i;
        }
    return m != m ? 0 : best;
}

/* ---- decoding and NMS ---------------------------------------------------------------- */
TI__PRIVATE void ti__dpp_decode(const ti__kctx *k, const ti__dpp_opts *o, const ti__dpp_geom *g,
                                float *out) {
    const ti_tensor *box = k->in[0], *anc = k->in[2];
    for (int i = 0; i < g->num_boxes; i++) {
        float e[4], a[4]; /* y, x, h, w */
        if (box->dtype == TI_DTYPE_U8) {
            /* TFLite's Dequantizer: (float(q) - int zero point) * scale, in float */
            const uint8_t *bq = (const uint8_t *)box->data + (size_t)i * (size_t)g->enc_len;
            const uint8_t *aq = (const uint8_t *)anc->data + (size_t)i * 4;
            int bzp = (int)(float)box->quant.zero_point[0], azp = (int)(float)anc->quant.zero_point[0];
            for (int c = 0; c < 4; c++) {
                e[c] = ((float)bq[c] - (float)bzp) * box->quant.scale[0];
                a[c] = ((float)aq[c] - (float)azp) * anc->quant.scale[0];
            }
        } else {
            const float *bf = (const float *)box->data + (size_t)i * (size_t)g->enc_len;
            const float *af = (const float *)anc->data + (size_t)i * 4;
            for (int c = 0; c < 4; c++) {
                e[c] = bf[c];
                a[c] = af[c];
            }
        }
        float yc = (float)((double)e[0] / (double)o->ys * (double)a[2] + (double)a[0]);
        float xc = (float)((double)e[1] / (double)o->xs * (double)a[3] + (double)a[1]);
        float hh = (float)(0.5 * exp((double)e[2] / (double)o->hs) * (double)a[2]);
        float hw = (float)(0.5 * exp((double)e[3] / (double)o->ws) * (double)a[3]);
        float *b = out + (size_t)i * 4;
        b[0] = yc - hh;
        b[1] = xc - hw;
        b[2] = yc + hh;
        b[3] = xc + hw;
    }
}

TI__PRIVATE float ti__dpp_iou(const float *bi, const float *bj) {
    float area_i = (bi[2] - bi[0]) * (bi[3] - bi[1]);
    float area_j = (bj[2] - bj[0]) * (bj[3] - bj[1]);
    if (area_i <= 0.0f || area_j <= 0.0f) return 0.0f;
    float ymin = TI__MAX(bi[0], bj[0]), xmin = TI__MAX(bi[1], bj[1]);
    float ymax = TI__MIN(bi[2], bj[2]), xmax = TI__MIN(bi[3], bj[3]);
    float inter = TI__MAX(ymax - ymin, 0.0f) * TI__MAX(xmax - xmin, 0.0f);
    return inter / (area_i + area_j - inter);
}

/* NonMaxSuppressionSingleClassHelper: returns how many anchors went to b->selected. */
TI__PRIVATE int ti__dpp_nms(const ti__dpp_opts *o, const ti__dpp_geom *g, ti__dpp_bufs *b,
                            const float *scores, int max_det) {
    int kept = 0;
    for (int i = 0; i < g->num_boxes; i++)
        if (scores[i] >= o->score_thr) {
            b->keep_scores[kept] = scores[i];
            b->keep_idx[kept++] = i;
        }
    for (int i = 0; i < kept; i++) b->sorted[i] = i;
    ti__dpp_stable_sort(b->sorted, b->sort_tmp, kept, b->keep_scores);
    int out_size = TI__MIN(kept, max_det), n_sel = 0, n_active = kept;
    if (kept > 0) memset(b->active, 1, (size_t)kept); /* kept >= 0: gcc cannot tell */
    for (int i = 0; i < kept; i++) {
        if (n_active == 0 || n_sel >= out_size) break;
        if (!b->active[i]) continue;
        int bi = b->keep_idx[b->sorted[i]];
        b->selected[n_sel++] = bi;
        b->active[i] = 0;
        n_active--;
        for (int j = i + 1; j < kept; j++) {
            if (!b->active[j]) continue;
            int bj = b->keep_idx[b->sorted[j]];
            if (ti__dpp_iou(b->boxes + (size_t)bi * 4, b->boxes + (size_t)bj * 4) > o->iou_thr) {
                b->active[j] = 0;
                n_active--;
            }
        }
    }
    return n_sel;
}

TI__PRIVATE void ti__dpp_write(ti__kctx *k, int slot, const float *box, int cls, float score) {
    float *ob = (float *)k->out[0]->data + (size_t)slot * 4;
    memcpy(ob, box, 4 * sizeof(float));
    ((float *)k->out[1]->data)[slot] = (float)cls;
    ((float *)k->out[2]->data)[slot] = score;
}

TI__PRIVATE void ti__dpp_fast(ti__kctx *k, const ti__dpp_opts *o, const ti__dpp_geom *g,
                              ti__dpp_bufs *b, const float *scores) {
    int nc = o->num_classes, ncat = g->num_cat;
    for (int row = 0; row < g->num_boxes; row++) {
        const float *bs = scores + (size_t)row * (size_t)g->ncwb + (size_t)g->label_offset;
        int *top = b->top_cls + (size_t)row * (size_t)ncat;
        if (ncat == 1) {
            top[0] = ti__dpp_argmax(bs, nc);
        } else {
            for (int c = 0; c < nc; c++) b->row_perm[c] = c;
            ti__dpp_partial_sort(b->row_perm, ncat, nc, bs);
            memcpy(top, b->row_perm, (size_t)ncat * sizeof(int));
        }
        b->nms_scores[row] = bs[top[0]];
    }
    int n_sel = ti__dpp_nms(o, g, b, b->nms_scores, o->max_det);
    for (int s = 0; s < n_sel; s++) {
        int a = b->selected[s];
        const float *bs = scores + (size_t)a * (size_t)g->ncwb + (size_t)g->label_offset;
        const int *top = b->top_cls + (size_t)a * (size_t)ncat;
        for (int c = 0; c < ncat; c++)
            ti__dpp_write(k, o->max_cls * s + c, b->boxes + (size_t)a * 4, top[c], bs[top[c]]);
    }
    ((float *)k->out[3]->data)[0] = (float)n_sel;
}

TI__PRIVATE void ti__dpp_regular(ti__kctx *k, const ti__dpp_opts *o, const ti__dpp_geom *g,
                                 ti__dpp_bufs *b, const float *scores) {
    int per_class = TI__MIN(o->per_class, o->max_det), size = 0;
    for (int col = 0; col < o->num_classes; col++) {
        for (int row = 0; row < g->num_boxes; row++)
            b->nms_scores[row] = scores[(size_t)row * (size_t)g->ncwb + (size_t)col + (size_t)g->label_offset];
        int n_sel = ti__dpp_nms(o, g, b, b->nms_scores, per_class);
        if (n_sel == 0) continue;
        for (int i = 0; i < n_sel; i++) {
            b->info[size + i].score = b->nms_scores[b->selected[i]];
            b->info[size + i].index = b->selected[i] * g->ncwb + col + g->label_offset;
        }
        /* std::inplace_merge of the two runs by decreasing score (stable) */
        int x = 0, y = size, end = size + n_sel, w = 0;
        while (x < size && y < end)
            b->info_tmp[w++] = b->info[y].score > b->info[x].score ? b->info[y++] : b->info[x++];
        while (x < size) b->info_tmp[w++] = b->info[x++];
        while (y < end) b->info_tmp[w++] = b->info[y++];
        memcpy(b->info, b->info_tmp, (size_t)end * sizeof(ti__dpp_box_info));
        size = TI__MIN(end, o->max_det);
    }
    for (int i = 0; i < size; i++) {
        int anchor = b->info[i].index / g->ncwb;
        int cls = b->info[i].index - anchor * g->ncwb - g->label_offset;
        ti__dpp_write(k, i, b->boxes + (size_t)anchor * 4, cls, b->info[i].score);
    }
    ((float *)k->out[3]->data)[0] = (float)size;
}

/* ---- op entry points ----------------------------------------------------------------- */
TI__PRIVATE int ti__tfl_detect_shape(ti__kctx *k) {
    ti__dpp_opts o;
    ti__dpp_geom g;
    ti_status st = ti__dpp_opts_get(k, &o);
    if (st == TI_OK) st = ti__dpp_geom_get(k, &o, &g);
    if (st != TI_OK) return st;
    int64_t n = (int64_t)o.max_det * o.max_cls;
    int64_t d3[3] = {1, n, 4}, d2[2] = {1, n}, d1[1] = {1};
    if (!ti__set_shape(k->out[0], TI_DTYPE_F32, 3, d3) || !ti__set_shape(k->out[1], TI_DTYPE_F32, 2, d2) ||
        !ti__set_shape(k->out[2], TI_DTYPE_F32, 2, d2) || !ti__set_shape(k->out[3], TI_DTYPE_F32, 1, d1))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "output shapes invalid");
    return TI_OK;
}

TI__PRIVATE size_t ti__tfl_detect_scratch(ti__kctx *k) {
    ti__dpp_opts o;
    ti__dpp_geom g;
    if (ti__dpp_opts_get(k, &o) != TI_OK || ti__dpp_geom_get(k, &o, &g) != TI_OK) return 0;
    return ti__dpp_layout(k, &o, &g, NULL, NULL);
}

TI__PRIVATE ti_status ti__tfl_detect_run(ti__kctx *k) {
    ti__dpp_opts o;
    ti__dpp_geom g;
    ti__dpp_bufs b;
    ti_status st = ti__dpp_opts_get(k, &o);
    if (st == TI_OK) st = ti__dpp_geom_get(k, &o, &g);
    if (st != TI_OK) return st;
    size_t need = ti__dpp_layout(k, &o, &g, NULL, NULL);
    if (k->scratch == NULL || k->scratch_bytes < need)
        return ti__kfail(k, TI_ERR_INVALID_ARGUMENT, "scratch of %zu bytes, need %zu", k->scratch_bytes, need);
    ti__dpp_layout(k, &o, &g, (unsigned char *)k->scratch, &b);
    for (int i = 0; i < 4; i++) memset(k->out[i]->data, 0, k->out[i]->size_bytes);

    ti__dpp_decode(k, &o, &g, b.boxes);
    /* TFLite's NMS helper refuses inverted boxes (NaN boxes pass). */
    if (!o.regular || o.num_classes > 0) {
        for (int i = 0; i < g.num_boxes; i++) {
            const float *bx = b.boxes + (size_t)i * 4;
            if (bx[0] > bx[2] || bx[1] > bx[3])
                return ti__kfail(k, TI_ERR_INVALID_ARGUMENT,
                                 "decoded box %d is inverted (ymin %g > ymax %g or xmin %g > xmax %g)",
                                 i, (double)bx[0], (double)bx[2], (double)bx[1], (double)bx[3]);
        }
    }
    const ti_tensor *cls = k->in[1];
    const float *scores = (const float *)cls->data;
    if (cls->dtype == TI_DTYPE_U8) {
        /* optimized_ops::Dequantize: float(double scale * (q - zero point)) */
        const uint8_t *q = (const uint8_t *)cls->data;
        double scale = (double)cls->quant.scale[0];
        int32_t zp = (int32_t)(float)cls->quant.zero_point[0];
        size_t n = (size_t)g.num_boxes * (size_t)g.ncwb;
        for (size_t i = 0; i < n; i++) b.scores[i] = (float)(scale * (double)((int32_t)q[i] - zp));
        scores = b.scores;
    }
    if (o.regular)
        ti__dpp_regular(k, &o, &g, &b, scores);
    else
        ti__dpp_fast(k, &o, &g, &b, scores);
    return TI_OK;
}

TI__PRIVATE const ti__op ti__ops_tfl_detect[] = {
    {"TFLite_Detection_PostProcess", ti__tfl_detect_shape, ti__tfl_detect_run, ti__tfl_detect_scratch, 0},
    {NULL, NULL, NULL, NULL, 0}
};
