/* TFLite convolutions and matrix products on NHWC tensors: CONV_2D (groups, dilation),
 * DEPTHWISE_CONV_2D, TRANSPOSE_CONV, FULLY_CONNECTED and BATCH_MATMUL, in float32 and in
 * TFLite's quantized forms: uint8 per-tensor (TF1), int8 with per-channel weights and int32
 * bias (TF2), int16 activations with int8 weights and int64 (or int32) bias. Relies on
 * tfl_accum.c (checks, requantization, 8-bit GEMM) and ti__sgemm_ref (gemm.c). Must not
 * allocate in run: im2col tiles, packed weights and per-channel multipliers live in the
 * scratch the session gives (each op's scratch function). */

/* Floats of im2col scratch to aim for (8 MiB), as conv.c. */
#define TI__TFC_TILE_FLOATS ((size_t)1 << 21)

/* ---- CONV_2D ---------------------------------------------------------------------- */

TI__PRIVATE void ti__tfc_conv_q_range(void *ctx, size_t begin, size_t end) {
    const ti__tfc_job *j = (const ti__tfc_job *)ctx;
    const ti__tfc_geo *g = j->g;
    size_t kdim = (size_t)(g->kh * g->kw * g->kc);
    for (size_t p = begin; p < end; p++) {
        int64_t n, oy, ox, fy0, fy1, fx0, fx1;
        ti__tfc_pixel(g, p, &n, &oy, &ox);
        int64_t iy0 = oy * g->sh - g->ph, ix0 = ox * g->sw - g->pw;
        ti__tfc_taps(iy0, g->dh, g->kh, g->ih, &fy0, &fy1);
        ti__tfc_taps(ix0, g->dw, g->kw, g->iw, &fx0, &fx1);
        /* dilation 1, one group: the taps of a row are one contiguous run of input */
        int run = g->dw == 1 && g->groups == 1;
        for (int64_t oc = 0; oc < g->oc; oc++) {
            size_t xc = (size_t)((oc / g->opg) * g->kc), wo = (size_t)oc * kdim;
            int64_t acc = 0;
            for (int64_t fy = fy0; fy < fy1; fy++) {
                size_t xrow = (size_t)(((n * g->ih + iy0 + fy * g->dh) * g->iw) * g->ic);
                size_t wrow = wo + (size_t)(fy * g->kw * g->kc);
                if (run) {
                    if (fx1 > fx0)
                        acc += ti__tfc_dotq(j, xrow + (size_t)((ix0 + fx0) * g->ic),
                                            wrow + (size_t)(fx0 * g->kc), (size_t)((fx1 - fx0) * g->kc));
                    continue;
                }
                for (int64_t fx = fx0; fx < fx1; fx++)
                    acc += ti__tfc_dotq(j, xrow + (size_t)((ix0 + fx * g->dw) * g->ic) + xc,
                                        wrow + (size_t)(fx * g->kc), (size_t)g->kc);
            }
            acc += ti__tfc_bias(j->b, (size_t)oc);
            ti__qg_store(j->y, j->ydt, p * (size_t)g->oc + (size_t)oc,
                          ti__qrq_one(&j->rq, acc, (size_t)oc));
        }
    }
}

/* im2col rows [begin, end) of the tile: row r is output pixel p0 + r, columns (fy, fx, c)
 * of group grp; outside the input: 0. */
TI__PRIVATE void ti__tfc_im2col(void *ctx, size_t begin, size_t end) {
    const ti__tfc_job *j = (const ti__tfc_job *)ctx;
    const ti__tfc_geo *g = j->g;
    const float *x = (const float *)j->x;
    size_t kc = (size_t)g->kc;
    for (size_t r = begin; r < end; r++) {
        int64_t n, oy, ox;
        ti__tfc_pixel(g, j->p0 + r, &n, &oy, &ox);
        float *col = j->col + r * j->kdim;
        for (int64_t fy = 0; fy < g->kh; fy++) {
            int64_t iy = oy * g->sh - g->ph + fy * g->dh;
            for (int64_t fx = 0; fx < g->kw; fx++, col += kc) {
                int64_t ix = ox * g->sw - g->pw + fx * g->dw;
                if (iy < 0 || iy >= g->ih || ix < 0 || ix >= g->iw) {
                    memset(col, 0, kc * sizeof(float));
                    continue;
                }
                memcpy(col, x + (size_t)((n * g->ih + iy) * g->iw + ix) * (size_t)g->ic + j->grp * kc,
                       kc * sizeof(float));
            }
        }
    }
}

/* Adds the bias and clamps output pixels [begin, end) (float kernels). */
TI__PRIVATE void ti__tfc_bias_clamp(void *ctx, size_t begin, size_t end) {
    const ti__tfc_job *j = (const ti__tfc_job *)ctx;
    const float *b = j->b != NULL ? (const float *)j->b->data : NULL;
    size_t oc = (size_t)j->o;
    for (size_t p = begin; p < end; p++) {
        float *y = (float *)j->y + p * oc;
        for (size_t c = 0; c < oc; c++) {
            float v = y[c] + (b != NULL ? b[c] : 0.0f);
            y[c] = v < j->flo ? j->flo : (v > j->fhi ? j->fhi : v);
        }
    }
}

TI__PRIVATE size_t ti__tfc_conv_tile_rows(const ti__tfc_geo *g) {
    size_t kdim = (size_t)(g->kh * g->kw * g->kc), pixels = (size_t)(g->n * g->oh * g->ow);
    size_t nt = TI__TFC_TILE_FLOATS / (kdim ? kdim : 1);
    if (nt < 16) nt = 16;
    return nt < pixels ? nt : pixels;
}

TI__PRIVATE int ti__tfc_conv_shape_common(ti__kctx *k, int depthwise) {
    ti__tfc_geo g;
    ti_status st;
    int kind;
    if (k->n_out < 1 || k->out[0] == NULL) return ti__kfail(k, TI_ERR_BAD_MODEL, "output is required");
    if ((st = ti__tfc_geometry(k, depthwise, &g)) != TI_OK) return st;
    const ti_tensor *x = k->in[0], *b = ti__tfc_in(k, 2);
    ti_tensor *y = k->out[0];
    if ((st = ti__tfc_check(k, x, k->in[1], b, y, g.oc, depthwise ? 3 : 0, TI__WZP_ZERO,
                            &kind)) != TI_OK)
        return st;
    int64_t dims[4] = {g.n, g.oh, g.ow, g.oc};
    if (!ti__set_shape(y, x->dtype, 4, dims))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "output shape [%lld, %lld, %lld, %lld] is too large",
                         (long long)g.n, (long long)g.oh, (long long)g.ow, (long long)g.oc);
    float flo, fhi;
    int32_t qlo, qhi;
    return kind == TI__TFC_F32 ? ti__tfc_float_act(k, &flo, &fhi) : ti__tfc_quant_act(k, y, &qlo, &qhi);
}

TI__PRIVATE int ti__tfc_conv_shape(ti__kctx *k) { return ti__tfc_conv_shape_common(k, 0); }
TI__PRIVATE int ti__tfc_dwconv_shape(ti__kctx *k) { return ti__tfc_conv_shape_common(k, 1); }

/* Taps of one output pixel the SIMD depthwise path takes at most (3x3 and 5x5 fit). */
#define TI__TFC_DW_TAPS 64

/* int16 elements of one chunk of TI__TFC_DW_CHUNK channels' weights as ti__dwq_wprep_avx2
 * lays them out for nt taps (its tail of n % 16 channels included). */
TI__PRIVATE size_t ti__tfc_dw_chunk_elems(size_t nt) {
    return TI__TFC_DW_CHUNK / 16 * ((nt + 1) / 2) * 32 + nt * 16;
}

/* Scratch bytes the 8-bit depthwise path of AVX2 takes after the multipliers for its
 * weights prepared once per run (ti__tfc_dw_prep): a term per channel (int32), then each
 * chunk's weights; 0 where that path does not run. */
TI__PRIVATE size_t ti__tfc_dw_prep_bytes(const ti__kctx *k, const ti__tfc_geo *g) {
#ifdef TI__X86_SIMD
    ti_dtype t = k->in[0]->dtype;
    size_t oc = (size_t)g->oc, nt = (size_t)(g->kh * g->kw);
    if ((t == TI_DTYPE_U8 || t == TI_DTYPE_I8) && g->mult == 1 && nt <= TI__TFC_DW_TAPS)
        return oc * sizeof(int32_t) + (oc + TI__TFC_DW_CHUNK - 1) / TI__TFC_DW_CHUNK *
                                          ti__tfc_dw_chunk_elems(nt) * sizeof(int16_t);
#endif
    (void)k, (void)g;
    return 0;
}

/* Scratch of the conv-like ops: the float CONV_2D im2col tile, or the per-channel
 * multipliers of a quantized kernel (and the AVX2 depthwise path's prepared weights).
 * Shapes were checked: a failure here means none. */
TI__PRIVATE size_t ti__tfc_conv_scratch_common(ti__kctx *k, int depthwise) {
    ti_error *saved = k->err, tmp;
    ti__tfc_geo g;
    k->err = &tmp;
    ti_status st = ti__tfc_geometry(k, depthwise, &g);
    k->err = saved;
    if (st != TI_OK) return 0;
    if (k->in[0]->dtype != TI_DTYPE_F32) {
        size_t oc = (size_t)g.oc, kdim = (size_t)(g.kh * g.kw * g.kc);
        size_t rq = ti__qpack_rq(k->node, oc) != NULL ? 0 : oc * 2 * sizeof(int32_t);
        if (depthwise) return rq + ti__tfc_dw_prep_bytes(k, &g);
        if (k->in[0]->dtype == TI_DTYPE_I16 || g.groups != 1) return rq;
        if (ti__tfc_qgemm_packed(k->node, oc, kdim)) return rq; /* packed at planning */
        return ti__tfc_qgemm_offset(oc) + ti__tfc_qgemm_bytes(oc, kdim);
    }
    if (depthwise || ti__tfc_conv_is_1x1(&g)) return 0;
    return ti__tfc_conv_tile_rows(&g) * (size_t)(g.kh * g.kw * g.kc) * sizeof(float);
}
TI__PRIVATE size_t ti__tfc_conv_scratch(ti__kctx *k) { return ti__tfc_conv_scratch_common(k, 0); }
TI__PRIVATE size_t ti__tfc_dwconv_scratch(ti__kctx *k) { return ti__tfc_conv_scratch_common(k, 1); }

/* Common set-up of a run: geometry, kind, offsets, requantization or float clamp. */
TI__PRIVATE ti_status ti__tfc_job_init(ti__kctx *k, ti__tfc_job *j, const ti_tensor *x,
                                       const ti_tensor *w, const ti_tensor *b, int64_t oc,
                                       int w_axis, int wzp, int float_product) {
    ti_status st;
    ti_tensor *y = k->out[0];
    memset(j, 0, sizeof *j);
    if ((st = ti__tfc_check(k, x, w, b, y, oc, w_axis, wzp, &j->kind)) != TI_OK)
        return st;
    j->x = x->data;
    j->w = w->data;
    j->y = y->data;
    j->b = b;
    j->ydt = y->dtype;
    j->o = (size_t)oc;
    if (j->kind == TI__TFC_F32) return ti__tfc_float_act(k, &j->flo, &j->fhi);
    j->xo = -(int32_t)x->quant.zero_point[0];
    j->wo = j->kind == TI__TFC_U8 || wzp == TI__WZP_USED ? -(int32_t)w->quant.zero_point[0] : 0;
    return ti__tfc_requant_setup(k, x, w, b, y, oc, float_product, &j->rq);
}

TI__PRIVATE ti_status ti__tfc_conv_run(ti__kctx *k) {
    ti__tfc_geo g;
    ti__tfc_job j;
    ti_status st;
    if ((st = ti__tfc_geometry(k, 0, &g)) != TI_OK) return st;
    const ti_tensor *x = k->in[0], *w = k->in[1], *b = ti__tfc_in(k, 2);
    if ((st = ti__tfc_job_init(k, &j, x, w, b, g.oc, 0, TI__WZP_CHECKED,
                               x->dtype == TI_DTYPE_U8)) != TI_OK)
        return st;
    j.g = &g;
    size_t pixels = (size_t)(g.n * g.oh * g.ow), kdim = (size_t)(g.kh * g.kw * g.kc);
    size_t oc = (size_t)g.oc, opg = (size_t)g.opg;
    if (j.kind != TI__TFC_F32) {
        if (j.kind != TI__TFC_I16 && g.groups == 1) return ti__tfc_qgemm(k, &j, pixels, kdim, 0);
        ti__parallel_for(k->tp, pixels, ti__tfc_grain(oc * kdim), ti__tfc_conv_q_range, &j);
        return TI_OK;
    }
    /* float: Y[p, oc] = im2col(X)[p, :] . W[oc, :], a GEMM with W transposed */
    const float *wf = (const float *)w->data;
    float *yf = (float *)j.y;
    if (ti__tfc_conv_is_1x1(&g)) {
        ti__sgemm_ref(0, 1, pixels, oc, kdim, 1.0f, (const float *)x->data, kdim, wf, kdim, 0.0f,
                      yf, oc, k->tp);
    } else {
        size_t nt = ti__tfc_conv_tile_rows(&g);
        if (k->scratch == NULL || nt * kdim * sizeof(float) > k->scratch_bytes)
            nt = k->scratch == NULL ? 0 : k->scratch_bytes / (kdim * sizeof(float));
        if (nt == 0)
            return ti__kfail(k, TI_ERR_INVALID_ARGUMENT,
                             "scratch of %zu bytes is too small for one im2col row", k->scratch_bytes);
        j.col = (float *)k->scratch;
        j.kdim = kdim;
        for (size_t p0 = 0; p0 < pixels; p0 += nt) {
            size_t np = TI__MIN(nt, pixels - p0);
            j.p0 = p0;
            for (size_t grp = 0; grp < (size_t)g.groups; grp++) {
                j.grp = grp;
                ti__parallel_for(k->tp, np, ti__tfc_grain(kdim), ti__tfc_im2col, &j);
                ti__sgemm_ref(0, 1, np, opg, kdim, 1.0f, j.col, kdim, wf + grp * opg * kdim, kdim,
                              0.0f, yf + p0 * oc + grp * opg, oc, k->tp);
            }
        }
    }
    if (b != NULL || j.flo > -FLT_MAX || j.fhi < FLT_MAX)
        ti__parallel_for(k->tp, pixels, ti__tfc_grain(oc), ti__tfc_bias_clamp, &j);
    return TI_OK;
}

/* ---- DEPTHWISE_CONV_2D --------------------------------------------------------------- */

TI__PRIVATE void ti__tfc_dw_f32_range(void *ctx, size_t begin, size_t end) {
    const ti__tfc_job *j = (const ti__tfc_job *)ctx;
    const ti__tfc_geo *g = j->g;
    const float *x = (const float *)j->x, *w = (const float *)j->w;
    const float *b = j->b != NULL ? (const float *)j->b->data : NULL;
    size_t oc = (size_t)g->oc, ic = (size_t)g->ic, m = (size_t)g->mult;
    for (size_t p = begin; p < end; p++) {
        int64_t n, oy, ox, fy0, fy1, fx0, fx1;
        ti__tfc_pixel(g, p, &n, &oy, &ox);
        int64_t iy0 = oy * g->sh - g->ph, ix0 = ox * g->sw - g->pw;
        ti__tfc_taps(iy0, g->dh, g->kh, g->ih, &fy0, &fy1);
        ti__tfc_taps(ix0, g->dw, g->kw, g->iw, &fx0, &fx1);
        float *y = (float *)j->y + p * oc;
        for (size_t c = 0; c < oc; c++) y[c] = b != NULL ? b[c] : 0.0f;
        for (int64_t fy = fy0; fy < fy1; fy++)
            for (int64_t fx = fx0; fx < fx1; fx++) {
                const float *xp = x + (size_t)((n * g->ih + iy0 + fy * g->dh) * g->iw + ix0 + fx * g->dw) * ic;
                const float *wp = w + (size_t)(fy * g->kw + fx) * oc;
                if (m == 1) {
                    for (size_t c = 0; c < oc; c++) y[c] += xp[c] * wp[c];
                } else {
                    for (size_t c = 0; c < ic; c++)
                        for (size_t q = 0; q < m; q++) y[c * m + q] += xp[c] * wp[c * m + q];
                }
            }
        for (size_t c = 0; c < oc; c++) y[c] = y[c] < j->flo ? j->flo : (y[c] > j->fhi ? j->fhi : y[c]);
    }
}

#ifdef TI__X86_SIMD
/* Output pixels requantized together by the SIMD depthwise paths: the AVX-512 path on
 * offsets per pixel (ti__tfc_dw_q8_range), the paths on prepared weights
 * (ti__tfc_dw_q8_avx2; a requantization call's set-up per chunk of channels shared by more
 * pixels: 8 KiB of sums on the stack). */
#define TI__TFC_DW_PIX 8
#define TI__TFC_DW_PREP_PIX 32

/* The SIMD depthwise path's level under the ISA in effect: 2 AVX512-VNNI, 1 AVX2, 0 none. */
TI__PRIVATE int ti__tfc_dw_level(void) {
#ifdef TI__X86_VNNI
    if (ti__cpu_isa() >= TI__ISA_AVX512VNNI) return 2;
#endif
    return ti__cpu_isa() >= TI__ISA_AVX2;
}

/* Whether the SIMD depthwise path applies: channel multiplier 1, 8-bit input and output,
 * TFLite's int32 requantization with shifts in [-31, 31] (ti__qrq_bytes_ok), int32 bias or
 * none, taps that fit, AVX2 or better. */
TI__PRIVATE int ti__tfc_dw_q8_ok(const ti__tfc_job *j) {
    const ti__qrq *r = &j->rq;
    /* the input's zero point -xo is a value of its type (AVX2 pads with it) */
    int zp_ok = j->kind == TI__TFC_U8 ? j->xo <= 0 && j->xo >= -255 : j->xo >= -127 && j->xo <= 128;
    if (!(j->g->mult == 1 && j->kind != TI__TFC_I16 && ti__qrq_bytes_ok(r) && zp_ok &&
          (j->ydt == TI_DTYPE_U8 || j->ydt == TI_DTYPE_I8) &&
          (j->b == NULL || j->b->dtype == TI_DTYPE_I32) &&
          j->g->kh * j->g->kw <= TI__TFC_DW_TAPS && ti__tfc_dw_level() > 0))
        return 0;
    if (r->checked) return r->shifts_all >= 0; /* at planning */
    for (int64_t c = 0; c < j->g->oc; c++) /* ti__qg8_rows8_vnni refuses INT32_MIN */
        if (r->mult[c] == INT32_MIN) return 0;
    return ti__qrq_shifts(r->shift, (size_t)j->g->oc) >= 0;
}

TI__PRIVATE void ti__tfc_dw_q_range(void *ctx, size_t begin, size_t end);

/* Whether the VNNI depthwise path also takes the row kernel (ti__dwq_row3_vnni): 3 x 3,
 * columns not dilated, stride 1 or 2 along the row. */
TI__PRIVATE int ti__tfc_dw_rows_ok(const ti__tfc_geo *g) {
    return g->kh == 3 && g->kw == 3 && g->dw == 1 && (g->sw == 1 || g->sw == 2);
}

/* Bytes of the row layout of oc channels (ti__dwq_wprep_rows_vnni). */
TI__PRIVATE size_t ti__tfc_dw_rows_bytes(size_t oc) { return (oc + 31) / 32 * TI__DWQ_ROW_BYTES; }

/* The chunk of channels c0.. (cn of them) for ti__tfc_dw_q8_avx2: its weights to wp, in
 * pairs of taps as int16 (ti__dwq_wprep_avx2) or, with vnni, in quads of taps as bytes
 * (ti__dwq_wprep_vnni), each channel's bias plus the input offset's share of the sums (ks)
 * to colc. */
TI__PRIVATE void ti__tfc_dw_chunk_prep(const ti__tfc_job *j, int vnni, size_t c0, size_t cn,
                                       const size_t *woff, void *wp, int32_t *colc) {
    uint32_t ks[TI__TFC_DW_CHUNK];
    const int32_t *bias = j->b != NULL ? (const int32_t *)j->b->data : NULL;
    size_t nt = (size_t)(j->g->kh * j->g->kw);
    const unsigned char *w = (const unsigned char *)j->w + c0;
#ifdef TI__X86_VNNI
    if (vnni)
        ti__dwq_wprep_vnni(j->kind == TI__TFC_U8, (int8_t *)wp, ks, w, woff, nt, cn, j->xo, j->wo);
    else
#endif
        ti__dwq_wprep_avx2(j->kind == TI__TFC_U8, (int16_t *)wp, ks, w, woff, nt, cn, j->xo, j->wo);
    (void)vnni;
    for (size_t c = 0; c < cn; c++)
        colc[c] = (int32_t)(ks[c] + (bias != NULL ? (uint32_t)bias[c0 + c] : 0u));
}

/* Each channel's bias plus the input offset's share of its sums, then the weights of every
 * chunk, into mem (ti__tfc_dw_prep_bytes), for AVX2 (vnni 0: pairs of taps) or AVX512-VNNI
 * (quads); points j->dwc and j->dwp or j->dwv at them. Returns 0, doing nothing, when the
 * VNNI weight offset bo does not fit a byte. The VNNI layout's 128 bytes per quad of taps
 * and 32 channels take no more than the AVX2 one's 64 per pair. */
TI__PRIVATE int ti__tfc_dw_fill(ti__tfc_job *j, int vnni, void *mem) {
    const ti__tfc_geo *g = j->g;
    size_t oc = (size_t)g->oc, nt = (size_t)(g->kh * g->kw), woff[TI__TFC_DW_TAPS];
    int32_t bo = j->kind == TI__TFC_U8 ? 128 + j->wo : j->wo;
    if (vnni && (bo < -128 || bo > 127)) return 0;
    int32_t *colc = (int32_t *)mem;
    unsigned char *wp = (unsigned char *)(colc + oc);
    for (size_t t = 0; t < nt; t++) woff[t] = t * oc;
    for (size_t c0 = 0; c0 < oc; c0 += TI__TFC_DW_CHUNK)
        ti__tfc_dw_chunk_prep(j, vnni, c0, TI__MIN((size_t)TI__TFC_DW_CHUNK, oc - c0), woff,
                              wp + c0 / TI__TFC_DW_CHUNK * ti__tfc_dw_chunk_elems(nt) * sizeof(int16_t),
                              colc + c0);
    j->dwc = colc;
    if (vnni) {
        j->dwv = (const int8_t *)wp;
        j->dwbo = bo;
    } else {
        j->dwp = (const int16_t *)(const void *)wp;
    }
    return 1;
}

/* The weights of every chunk prepared for all of ti__tfc_dw_q8_avx2's ranges: on AVX512-VNNI
 * those the prepack pass made (the node's ti__qpack), else once per run into scratch after
 * the multipliers (rq_bytes). j->dwc and j->dwp / j->dwv stay NULL when the scratch is short
 * or bo does not fit (the ranges then run without). */
TI__PRIVATE void ti__tfc_dw_prep(ti__kctx *k, ti__tfc_job *j, size_t rq_bytes) {
    const ti__tfc_geo *g = j->g;
    int level = ti__tfc_dw_level(), vnni = level == 2;
    const ti__qpack *pk = ti__qpack_of(k->node);
    if (pk != NULL && pk->dw != NULL && pk->dw_level == level && pk->channels == (size_t)g->oc &&
        pk->dw_taps == (size_t)(g->kh * g->kw)) {
        j->dwc = pk->dw;
        if (vnni) {
            j->dwv = (const int8_t *)(const void *)(pk->dw + g->oc);
            j->dwbo = j->kind == TI__TFC_U8 ? 128 + j->wo : j->wo;
            j->dwr = pk->dw_rows; /* made for this 3 x 3 geometry, or NULL */
        } else {
            j->dwp = (const int16_t *)(const void *)(pk->dw + g->oc);
        }
        return;
    }
    if (k->scratch == NULL || k->scratch_bytes < rq_bytes + ti__tfc_dw_prep_bytes(k, g)) return;
    (void)ti__tfc_dw_fill(j, vnni, (unsigned char *)k->scratch + rq_bytes);
}

#ifdef TI__X86_VNNI
/* The sums of np output pixels from (*n, *oy, *ox) on, channels c0 .. c0 + cn of a chunk, to
 * a32 (TI__TFC_DW_CHUNK per pixel) through the 3 x 3 row kernel (j->dwr): one call per block
 * of 32 channels and part of an output row, the window's rows outside the input and its
 * columns outside it read from pad (the zero point). With dq (the chunk's blocks'
 * ti__dwq_rq) the kernel requantizes instead, pixel r's bytes to y + r * oc (a32 unused).
 * Steps the pixel on by np. */
TI__PRIVATE void ti__tfc_dw_rows_block(const ti__tfc_job *j, size_t c0, size_t cn, size_t np,
                                       int64_t *n, int64_t *oy, int64_t *ox,
                                       const unsigned char *pad, uint32_t *a32,
                                       const ti__dwq_rq *dq, uint8_t *y) {
    const ti__tfc_geo *g = j->g;
    const unsigned char *x = (const unsigned char *)j->x;
    for (size_t r = 0; r < np;) {
        size_t rn = TI__MIN(np - r, (size_t)(g->ow - *ox)); /* to the row's end */
        int64_t iy0 = *oy * g->sh - g->ph, ix0 = *ox * g->sw - g->pw;
        int64_t c1 = ix0 < 0 ? 0 : ix0; /* the first column inside */
        size_t lc = (size_t)(c1 - ix0), nv = c1 < g->iw ? (size_t)(g->iw - c1) : 0, cs[3];
        const unsigned char *rows[3];
        for (int fy = 0; fy < 3; fy++) {
            int64_t iy = iy0 + fy * g->dh;
            int in = iy >= 0 && iy < g->ih && nv > 0;
            size_t at = in ? (size_t)(((*n * g->ih + iy) * g->iw + c1) * g->ic) : 0;
            rows[fy] = in ? x + at + c0 : pad;
            cs[fy] = in ? (size_t)g->ic : 0;
        }
        for (size_t b = 0; b < cn; b += 32) {
            const unsigned char *rb[3] = {rows[0] + b, rows[1] + b, rows[2] + b};
            const int8_t *wr = j->dwr + (c0 + b) / 32 * TI__DWQ_ROW_BYTES;
            size_t bn = TI__MIN((size_t)32, cn - b);
            uint8_t flip = j->kind == TI__TFC_U8 ? 0 : 0x80;
            if (dq != NULL)
                ti__dwq_row3_rq_vnni(y + r * (size_t)g->oc + b, (size_t)g->oc, rb, cs, rn,
                                     g->sw == 2, lc, nv, pad + b, wr, bn, flip, j->dwbo,
                                     &dq[b / 32]);
            else
                ti__dwq_row3_vnni(a32 + r * TI__TFC_DW_CHUNK + b, TI__TFC_DW_CHUNK, rb, cs, rn,
                                  g->sw == 2, lc, nv, pad + b, wr, bn, flip, j->dwbo);
        }
        r += rn;
        *ox += (int64_t)rn;
        if (*ox == g->ow) {
            *ox = 0;
            if (++*oy == g->oh) *oy = 0, ++*n;
        }
    }
}
#endif

/* ti__tfc_dw_q8_range on prepared weights (once per run, ti__tfc_dw_prep): per chunk of
 * channels, in pairs of taps (AVX2, j->dwp) or quads (AVX512-VNNI, j->dwv); then per pixel
 * every tap of the window, a tap outside the input reading a row of the input's zero point
 * (x + xo = 0: TFLite's padding), so that all pixels share that layout. The input offset's
 * share of each sum joins the bias. */
TI__PRIVATE void ti__tfc_dw_q8_avx2(const ti__tfc_job *j, size_t begin, size_t end, int pos) {
    const ti__tfc_geo *g = j->g;
    const ti__qrq *rq = &j->rq;
    const size_t oc = (size_t)g->oc, ic = (size_t)g->ic, nt = (size_t)(g->kh * g->kw);
    uint32_t a32[TI__TFC_DW_PREP_PIX * TI__TFC_DW_CHUNK];
    unsigned char pad[TI__TFC_DW_CHUNK];
    /* Two sets of tap pointers: a pixel uses set ps[r] plus offset po[r]. The pixels of a run
     * along an output row with the whole window inside share the run's first pixel's set,
     * each sw * ic bytes further (no pointers written per pixel: that loop was a third of
     * this function's time, perf); any other pixel makes a set of its own, in the set its
     * predecessor (which VNNI may still pair with it) does not use. */
    const unsigned char *xps[2][TI__TFC_DW_TAPS];
    int ps[TI__TFC_DW_PREP_PIX];
    size_t po[TI__TFC_DW_PREP_PIX], toff[TI__TFC_DW_TAPS];
    const size_t step = (size_t)(g->sw * g->ic);
    const unsigned char *x = (const unsigned char *)j->x;
    const int u8 = j->kind == TI__TFC_U8;
    memset(pad, (unsigned char)(-j->xo), sizeof pad); /* 1-byte elements */
    const size_t nt4 = (nt + 3) / 4 * 4; /* VNNI's quads of taps */
    for (size_t t = 0; t < nt; t++) {
        int64_t fy = (int64_t)t / g->kw, fx = (int64_t)t % g->kw;
        toff[t] = (size_t)((fy * g->dh * g->iw + fx * g->dw) * g->ic);
    }
    for (size_t c0 = 0; c0 < oc; c0 += TI__TFC_DW_CHUNK) {
        size_t cn = TI__MIN((size_t)TI__TFC_DW_CHUNK, oc - c0);
        const size_t wo = c0 / TI__TFC_DW_CHUNK * ti__tfc_dw_chunk_elems(nt); /* int16s */
        const int16_t *wp = j->dwp != NULL ? j->dwp + wo : NULL;
#ifdef TI__X86_VNNI
        /* VNNI's quads of this chunk (the same offset in bytes: the layouts' sizes match) */
        const int8_t *wv = wp == NULL ? j->dwv + wo * sizeof(int16_t) : NULL;
#endif
        const int32_t *colc = j->dwc + c0;
#ifdef TI__X86_VNNI
        /* the row kernel requantizes in its registers where its blocks' scales allow and
         * output rows have 28 pixels or more: the sums' round trip through a32 and rows8
         * took as long as the sums (perf, tf2 int8 MobileNetV2). Per-node minima on a Zen 4,
         * that model's convs with 112 x 112 to 28 x 28 outputs 5-22 % faster at 1 and 2
         * threads; at 14 x 14 even at 1 thread, up to 20 % slower at 2; at 7 x 7 5-6 %
         * slower (each call's set-up for 7 pixels) */
        ti__dwq_rq dq[TI__TFC_DW_CHUNK / 32];
        int fused = j->dwr != NULL && g->ow >= 28;
        for (size_t b = 0; fused && b < cn; b += 32)
            fused = ti__dwq_rq_plan_vnni(&dq[b / 32], colc + b, rq->mult + c0 + b,
                                         rq->shift + c0 + b, TI__MIN((size_t)32, cn - b),
                                         rq->yo, rq->lo, rq->hi);
#endif
        int64_t n, oy, ox; /* pixel p0 + r, stepped along (no divisions per pixel) */
        ti__tfc_pixel(g, begin, &n, &oy, &ox);
        for (size_t p0 = begin; p0 < end; p0 += TI__TFC_DW_PREP_PIX) {
            size_t np = TI__MIN((size_t)TI__TFC_DW_PREP_PIX, end - p0);
            int run = 0; /* the previous pixel's set serves this one, one step on */
#ifdef TI__X86_VNNI
            if (fused) { /* the whole range through the row kernel, requantized there */
                ti__tfc_dw_rows_block(j, c0, cn, end - p0, &n, &oy, &ox, pad, NULL, dq,
                                      (uint8_t *)j->y + p0 * oc + c0);
                break;
            }
            if (j->dwr != NULL) /* every pixel through the row kernel, row by row */
                ti__tfc_dw_rows_block(j, c0, cn, np, &n, &oy, &ox, pad, a32, NULL, NULL);
#endif
            for (size_t r = 0; j->dwr == NULL && r < np; r++) {
                int64_t iy0 = oy * g->sh - g->ph, ix0 = ox * g->sw - g->pw;
                int inside = iy0 >= 0 && ix0 >= 0 && iy0 + (g->kh - 1) * g->dh < g->ih &&
                             ix0 + (g->kw - 1) * g->dw < g->iw; /* the whole window */
                if (run && inside && ox > 0) {
                    ps[r] = ps[r - 1];
                    po[r] = po[r - 1] + step;
                } else {
                    int sl = r > 0 ? 1 - ps[r - 1] : 0;
                    const unsigned char **xp = xps[sl];
                    ps[r] = sl;
                    po[r] = 0;
                    if (inside) {
                        const unsigned char *base =
                            x + (size_t)(((n * g->ih + iy0) * g->iw + ix0) * g->ic) + c0;
                        for (size_t t = 0; t < nt; t++) xp[t] = base + toff[t];
                        /* VNNI's taps past nt (weights 0): inside the input too, as the
                         * run's offsets would carry them past pad's end */
                        for (size_t t = nt; t < nt4; t++) xp[t] = base;
                    } else {
                        for (size_t t = nt; t < nt4; t++) xp[t] = pad;
                        size_t t = 0;
                        for (int64_t fy = 0; fy < g->kh; fy++) {
                            int64_t iy = iy0 + fy * g->dh;
                            if (iy < 0 || iy >= g->ih) { /* a row of the window outside */
                                for (int64_t fx = 0; fx < g->kw; fx++) xp[t++] = pad;
                                continue;
                            }
                            const unsigned char *xr =
                                x + (size_t)((n * g->ih + iy) * g->iw) * ic + c0;
                            for (int64_t fx = 0; fx < g->kw; fx++, t++) {
                                int64_t ix = ix0 + fx * g->dw;
                                xp[t] = ix >= 0 && ix < g->iw ? xr + (size_t)ix * ic : pad;
                            }
                        }
                    }
                    run = inside;
                }
                const unsigned char *const *xp = xps[ps[r]];
#ifdef TI__X86_VNNI
                uint32_t *acc = a32 + r * TI__TFC_DW_CHUNK;
                if (wp == NULL && cn == 32) { /* 32 channels: two pixels at a time */
                    if (r & 1)
                        ti__dwq_pix2_vnni(acc - TI__TFC_DW_CHUNK, acc, xps[ps[r - 1]], po[r - 1],
                                          xp, po[r], nt, wv, u8 ? 0 : 0x80, j->dwbo);
                    else if (r + 1 == np)
                        ti__dwq_pix_vnni(acc, xp, po[r], nt, wv, cn, u8 ? 0 : 0x80, j->dwbo);
                } else if (wp == NULL)
                    ti__dwq_pix_vnni(acc, xp, po[r], nt, wv, cn, u8 ? 0 : 0x80, j->dwbo);
                else
#endif
                    ti__dwq_pix_avx2(u8, a32 + r * TI__TFC_DW_CHUNK, xp, po[r], nt, wp, cn);
                if (++ox == g->ow) {
                    ox = 0;
                    if (++oy == g->oh) oy = 0, n++;
                }
            }
            uint8_t *y = (uint8_t *)j->y + p0 * oc + c0;
#ifdef TI__X86_VNNI
            /* refuses only what ti__tfc_dw_q8_ok turned away (shifts, zero point, INT32_MIN) */
            if (wp == NULL)
                (void)ti__qg8_rows8_vnni(np, a32, TI__TFC_DW_CHUNK, colc, NULL, NULL, cn,
                                         rq->mult + c0, rq->shift + c0, rq->yo, rq->lo, rq->hi,
                                         y, oc);
            else
#endif
                ti__qrq_rows_avx2(np, a32, TI__TFC_DW_CHUNK, colc, NULL, NULL, cn, rq->mult + c0,
                                  rq->shift + c0, pos, rq->yo, rq->lo, rq->hi, y, oc);
        }
    }
}

/* The SIMD depthwise path on pixels [begin, end): AVX2 as above; AVX512-VNNI TI__TFC_DW_PIX
 * pixels at a time, each pixel's taps inside the input summed in registers
 * (ti__dwq_pixel_avx512), then the block's uint32 sums plus bias requantized and stored as
 * bytes together (ti__qg8_rows8_vnni). Both give the same sums modulo 2^32 and the same
 * requantization as the scalar loop. */
TI__PRIVATE void ti__tfc_dw_q8_range(void *ctx, size_t begin, size_t end) {
    const ti__tfc_job *j = (const ti__tfc_job *)ctx;
    const int level = ti__tfc_dw_level();
    if (level == 0) { /* the ISA was lowered since the run looked (tests) */
        ti__tfc_dw_q_range(ctx, begin, end);
        return;
    }
    const ti__qrq *rq = &j->rq;
    const size_t oc = (size_t)j->g->oc;
    /* in range: ti__tfc_dw_q8_ok */
    const int pos = rq->checked ? rq->shifts_all : ti__qrq_shifts(rq->shift, oc);
    if (level == 1) { /* on the weights ti__tfc_dw_prep prepared, else tap by tap */
        if (j->dwp != NULL) ti__tfc_dw_q8_avx2(j, begin, end, pos);
        else ti__tfc_dw_q_range(ctx, begin, end);
        return;
    }
    if (j->dwv != NULL) { /* AVX512-VNNI on its prepared weights */
        ti__tfc_dw_q8_avx2(j, begin, end, pos);
        return;
    }
#ifdef TI__X86_VNNI
    static const int32_t zeros[TI__TFC_DW_CHUNK] = {0};
    const ti__tfc_geo *g = j->g;
    const size_t ic = (size_t)g->ic;
    size_t xoff[TI__TFC_DW_PIX][TI__TFC_DW_TAPS], woff[TI__TFC_DW_PIX][TI__TFC_DW_TAPS];
    size_t nt[TI__TFC_DW_PIX];
    uint32_t a32[TI__TFC_DW_PIX * TI__TFC_DW_CHUNK];
    const uint8_t *x = (const uint8_t *)j->x, *w = (const uint8_t *)j->w; /* 1-byte elements */
    const int u8 = j->kind == TI__TFC_U8;
    for (size_t p0 = begin; p0 < end; p0 += TI__TFC_DW_PIX) {
        size_t np = TI__MIN((size_t)TI__TFC_DW_PIX, end - p0);
        for (size_t r = 0; r < np; r++) {
            int64_t n, oy, ox, fy0, fy1, fx0, fx1;
            ti__tfc_pixel(g, p0 + r, &n, &oy, &ox);
            int64_t iy0 = oy * g->sh - g->ph, ix0 = ox * g->sw - g->pw;
            ti__tfc_taps(iy0, g->dh, g->kh, g->ih, &fy0, &fy1);
            ti__tfc_taps(ix0, g->dw, g->kw, g->iw, &fx0, &fx1);
            nt[r] = 0;
            for (int64_t fy = fy0; fy < fy1; fy++)
                for (int64_t fx = fx0; fx < fx1; fx++, nt[r]++) {
                    xoff[r][nt[r]] = (size_t)((n * g->ih + iy0 + fy * g->dh) * g->iw + ix0 + fx * g->dw) * ic;
                    woff[r][nt[r]] = (size_t)(fy * g->kw + fx) * oc;
                }
        }
        for (size_t c0 = 0; c0 < oc; c0 += TI__TFC_DW_CHUNK) {
            size_t cn = TI__MIN((size_t)TI__TFC_DW_CHUNK, oc - c0);
            const int32_t *bias = j->b != NULL ? (const int32_t *)j->b->data + c0 : zeros;
            uint8_t *y = (uint8_t *)j->y + p0 * oc + c0;
            for (size_t r = 0; r < np; r++)
                ti__dwq_pixel_avx512(u8, a32 + r * TI__TFC_DW_CHUNK, x + c0, w + c0, xoff[r],
                                     woff[r], nt[r], cn, j->xo, j->wo);
            /* refuses only what ti__tfc_dw_q8_ok turned away (shifts, zero point, INT32_MIN) */
            (void)ti__qg8_rows8_vnni(np, a32, TI__TFC_DW_CHUNK, bias, NULL, NULL, cn, rq->mult + c0,
                                     rq->shift + c0, rq->yo, rq->lo, rq->hi, y, oc);
        }
    }
#endif
}
#endif

/* Quantized depthwise: per output pixel, TI__TFC_DW_CHUNK channels at a time accumulated
 * over the taps, then requantized. */
TI__PRIVATE void ti__tfc_dw_q_range(void *ctx, size_t begin, size_t end) {
    const ti__tfc_job *j = (const ti__tfc_job *)ctx;
    const ti__tfc_geo *g = j->g;
    size_t oc = (size_t)g->oc, ic = (size_t)g->ic, m = (size_t)g->mult;
    int32_t xo = j->xo, wo = j->wo;
    /* one tap of TI__TFC_DW_CHUNK channels in SIMD (int32 sums modulo 2^32), or NULL */
    void (*tap)(int, uint32_t *, const void *, const void *, size_t, int32_t, int32_t) = NULL;
#if defined(TI__X86_SIMD)
    if (ti__cpu_isa() >= TI__ISA_AVX2) tap = ti__dwq_tap_avx2;
#elif defined(TI__ARM_NEON)
    if (ti__cpu_isa() >= TI__ISA_NEON) tap = ti__dwq_tap_neon;
#endif
    (void)tap;
    for (size_t p = begin; p < end; p++) {
        int64_t n, oy, ox, fy0, fy1, fx0, fx1;
        ti__tfc_pixel(g, p, &n, &oy, &ox);
        int64_t iy0 = oy * g->sh - g->ph, ix0 = ox * g->sw - g->pw;
        ti__tfc_taps(iy0, g->dh, g->kh, g->ih, &fy0, &fy1);
        ti__tfc_taps(ix0, g->dw, g->kw, g->iw, &fx0, &fx1);
        for (size_t c0 = 0; c0 < oc; c0 += TI__TFC_DW_CHUNK) {
            size_t cn = TI__MIN((size_t)TI__TFC_DW_CHUNK, oc - c0);
            int64_t acc[TI__TFC_DW_CHUNK];
            for (size_t c = 0; c < cn; c++) acc[c] = 0;
#if defined(TI__X86_SIMD) || defined(TI__ARM_NEON)
            if (m == 1 && j->kind != TI__TFC_I16 && tap != NULL) {
                /* int32 sums modulo 2^32, as TFLite's; requantization wraps them anyway */
                uint32_t a32[TI__TFC_DW_CHUNK];
                for (size_t c = 0; c < cn; c++) a32[c] = 0;
                for (int64_t fy = fy0; fy < fy1; fy++)
                    for (int64_t fx = fx0; fx < fx1; fx++) {
                        size_t xi = (size_t)((n * g->ih + iy0 + fy * g->dh) * g->iw + ix0 + fx * g->dw) * ic;
                        size_t wi = (size_t)(fy * g->kw + fx) * oc + c0;
                        tap(j->kind == TI__TFC_U8, a32, (const uint8_t *)j->x + xi + c0,
                            (const uint8_t *)j->w + wi, cn, xo, wo); /* 1-byte elements */
                    }
                if (ti__qrq_n_u32(&j->rq, j->b, a32, c0, cn, j->y, j->ydt, p * oc + c0, 1)) continue;
                for (size_t c = 0; c < cn; c++) acc[c] = (int32_t)a32[c];
                ti__qg_add_bias(j->b, c0, cn, acc);
                ti__qrq_n(&j->rq, acc, c0, cn, j->y, j->ydt, p * oc + c0, 1);
                continue;
            }
#endif
            for (int64_t fy = fy0; fy < fy1; fy++)
                for (int64_t fx = fx0; fx < fx1; fx++) {
                    size_t xi = (size_t)((n * g->ih + iy0 + fy * g->dh) * g->iw + ix0 + fx * g->dw) * ic;
                    size_t wi = (size_t)(fy * g->kw + fx) * oc + c0;
                    if (j->kind == TI__TFC_U8) {
                        const uint8_t *xp = (const uint8_t *)j->x + xi, *wp = (const uint8_t *)j->w + wi;
                        if (m == 1) {
                            xp += c0;
                            for (size_t c = 0; c < cn; c++)
                                acc[c] += ((int32_t)wp[c] + wo) * ((int32_t)xp[c] + xo);
                        } else {
                            for (size_t c = 0; c < cn; c++)
                                acc[c] += ((int32_t)wp[c] + wo) * ((int32_t)xp[(c0 + c) / m] + xo);
                        }
                    } else if (j->kind == TI__TFC_I8) {
                        const int8_t *xp = (const int8_t *)j->x + xi, *wp = (const int8_t *)j->w + wi;
                        if (m == 1) {
                            xp += c0;
                            for (size_t c = 0; c < cn; c++) acc[c] += (int32_t)wp[c] * ((int32_t)xp[c] + xo);
                        } else {
                            for (size_t c = 0; c < cn; c++)
                                acc[c] += (int32_t)wp[c] * ((int32_t)xp[(c0 + c) / m] + xo);
                        }
                    } else {
                        const int16_t *xp = (const int16_t *)j->x + xi;
                        const int8_t *wp = (const int8_t *)j->w + wi;
                        for (size_t c = 0; c < cn; c++) acc[c] += (int32_t)wp[c] * (int32_t)xp[(c0 + c) / m];
                    }
                }
            ti__qg_add_bias(j->b, c0, cn, acc);
            ti__qrq_n(&j->rq, acc, c0, cn, j->y, j->ydt, p * oc + c0, 1);
        }
    }
}

TI__PRIVATE ti_status ti__tfc_dwconv_run(ti__kctx *k) {
    ti__tfc_geo g;
    ti__tfc_job j;
    ti_status st;
    if ((st = ti__tfc_geometry(k, 1, &g)) != TI_OK) return st;
    const ti_tensor *x = k->in[0], *w = k->in[1], *b = ti__tfc_in(k, 2);
    if ((st = ti__tfc_job_init(k, &j, x, w, b, g.oc, 3, TI__WZP_CHECKED,
                               x->dtype == TI_DTYPE_U8)) != TI_OK)
        return st;
    j.g = &g;
    size_t pixels = (size_t)(g.n * g.oh * g.ow), work = (size_t)(g.oc * g.kh * g.kw);
    ti__range_fn fn = j.kind == TI__TFC_F32 ? ti__tfc_dw_f32_range : ti__tfc_dw_q_range;
#ifdef TI__X86_SIMD
    if (j.kind != TI__TFC_F32 && ti__tfc_dw_q8_ok(&j)) {
        fn = ti__tfc_dw_q8_range;
        size_t oc = (size_t)g.oc;
        size_t rq_bytes = ti__qpack_rq(k->node, oc) != NULL ? 0 : oc * 2 * sizeof(int32_t);
        ti__tfc_dw_prep(k, &j, rq_bytes); /* after the multipliers */
    }
#endif
    ti__parallel_for(k->tp, pixels, ti__tfc_grain(work), fn, &j);
    return TI_OK;
}

/* ---- TRANSPOSE_CONV ------------------------------------------------------------------- */
/* Inputs: output_shape (int32 [4]), weights [oc, kh, kw, ic], input [n, h, w, ic], bias?.
 * Computed as a gather: output (oy, ox) takes input (iy, ix) through tap (fy, fx) when
 * oy = iy * stride - pad + fy, the same sums as TFLite's scatter loop (exact in integers). */

TI__PRIVATE ti_status ti__tfc_tconv_geometry(ti__kctx *k, ti__tfc_geo *g) {
    const ti_tensor *os = ti__tfc_in(k, 0), *w = ti__tfc_in(k, 1), *x = ti__tfc_in(k, 2);
    ti_status st;
    int64_t padding, unused;
    if (os == NULL || w == NULL || x == NULL)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "output_shape, weights and input are required");
    if ((st = ti__tfc_rank4(k, x, "input")) != TI_OK) return st;
    if ((st = ti__tfc_rank4(k, w, "weights tensor")) != TI_OK) return st;
    if ((os->dtype != TI_DTYPE_I32 && os->dtype != TI_DTYPE_I64) || os->rank != 1 || os->shape[0] != 4)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "output_shape must be 4 int32 values (%s of rank %d)",
                         ti_dtype_name(os->dtype), os->rank);
    if ((st = ti__tfc_window(k, 0, g, &padding)) != TI_OK) return st;
    int64_t o[4];
    for (int i = 0; i < 4; i++) o[i] = ti__get_i64(os, (size_t)i);
    g->n = x->shape[0], g->ih = x->shape[1], g->iw = x->shape[2], g->ic = x->shape[3];
    g->oc = w->shape[0], g->kh = w->shape[1], g->kw = w->shape[2], g->kc = w->shape[3];
    g->groups = 1, g->opg = g->oc, g->mult = 1;
    if (g->kc != g->ic)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "weights have %lld input channels, the input %lld",
                         (long long)g->kc, (long long)g->ic);
    if (o[0] != g->n || o[3] != g->oc || o[1] < 1 || o[2] < 1 || o[1] > INT32_MAX || o[2] > INT32_MAX)
        return ti__kfail(k, TI_ERR_BAD_MODEL,
                         "output_shape [%lld, %lld, %lld, %lld] does not fit batch %lld and %lld "
                         "output channels", (long long)o[0], (long long)o[1], (long long)o[2],
                         (long long)o[3], (long long)g->n, (long long)g->oc);
    g->oh = o[1], g->ow = o[2];
    /* TFLite: the padding of a convolution from the output size back to the input */
    ti__tfc_pad(padding, g->oh, g->kh, g->sh, 1, &unused, &g->ph);
    ti__tfc_pad(padding, g->ow, g->kw, g->sw, 1, &unused, &g->pw);
    return TI_OK;
}

TI__PRIVATE int ti__tfc_tconv_shape(ti__kctx *k) {
    ti__tfc_geo g;
    ti_status st;
    int kind;
    if (k->n_out < 1 || k->out[0] == NULL) return ti__kfail(k, TI_ERR_BAD_MODEL, "output is required");
    if (k->n_in > 0 && k->in[0] != NULL) TI__NEED(k, k->in[0]);
    if ((st = ti__tfc_tconv_geometry(k, &g)) != TI_OK) return st;
    const ti_tensor *x = k->in[2], *b = ti__tfc_in(k, 3);
    ti_tensor *y = k->out[0];
    if ((st = ti__tfc_check(k, x, k->in[1], b, y, g.oc, 0, TI__WZP_ZERO, &kind)) != TI_OK)
        return st;
    int64_t dims[4] = {g.n, g.oh, g.ow, g.oc};
    if (!ti__set_shape(y, x->dtype, 4, dims))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "output shape is too large");
    float flo, fhi;
    int32_t qlo, qhi;
    return kind == TI__TFC_F32 ? ti__tfc_float_act(k, &flo, &fhi) : ti__tfc_quant_act(k, y, &qlo, &qhi);
}

TI__PRIVATE size_t ti__tfc_tconv_scratch(ti__kctx *k) {
    const ti_tensor *w = ti__tfc_in(k, 1), *x = ti__tfc_in(k, 2);
    if (w == NULL || x == NULL || x->dtype == TI_DTYPE_F32 || w->rank != 4) return 0;
    return (size_t)w->shape[0] * 2 * sizeof(int32_t);
}

/* Input taps [*t0, *t1) are not contiguous here: tap f feeds output o from input
 * (o + pad - f) / s when divisible; returns that input index or -1. */
TI__PRIVATE int64_t ti__tfc_tsrc(int64_t o, int64_t pad, int64_t f, int64_t s, int64_t in) {
    int64_t t = o + pad - f;
    if (t < 0 || t % s != 0 || t / s >= in) return -1;
    return t / s;
}

TI__PRIVATE void ti__tfc_tconv_range(void *ctx, size_t begin, size_t end) {
    const ti__tfc_job *j = (const ti__tfc_job *)ctx;
    const ti__tfc_geo *g = j->g;
    size_t oc = (size_t)g->oc, ic = (size_t)g->ic;
    for (size_t p = begin; p < end; p++) {
        int64_t n, oy, ox;
        ti__tfc_pixel(g, p, &n, &oy, &ox);
        if (j->kind == TI__TFC_F32) {
            const float *b = j->b != NULL ? (const float *)j->b->data : NULL;
            float *y = (float *)j->y + p * oc;
            for (size_t c = 0; c < oc; c++) {
                float acc = 0.0f;
                for (int64_t fy = 0; fy < g->kh; fy++) {
                    int64_t iy = ti__tfc_tsrc(oy, g->ph, fy, g->sh, g->ih);
                    if (iy < 0) continue;
                    for (int64_t fx = 0; fx < g->kw; fx++) {
                        int64_t ix = ti__tfc_tsrc(ox, g->pw, fx, g->sw, g->iw);
                        if (ix < 0) continue;
                        acc += ti__tfc_dotf((const float *)j->x + (size_t)((n * g->ih + iy) * g->iw + ix) * ic,
                                            (const float *)j->w + ((c * (size_t)g->kh + (size_t)fy) * (size_t)g->kw + (size_t)fx) * ic, ic);
                    }
                }
                float v = acc + (b != NULL ? b[c] : 0.0f);
                y[c] = v < j->flo ? j->flo : (v > j->fhi ? j->fhi : v);
            }
            continue;
        }
        for (size_t c = 0; c < oc; c++) {
            int64_t acc = 0;
            for (int64_t fy = 0; fy < g->kh; fy++) {
                int64_t iy = ti__tfc_tsrc(oy, g->ph, fy, g->sh, g->ih);
                if (iy < 0) continue;
                for (int64_t fx = 0; fx < g->kw; fx++) {
                    int64_t ix = ti__tfc_tsrc(ox, g->pw, fx, g->sw, g->iw);
                    if (ix < 0) continue;
                    acc += ti__tfc_dotq(j, (size_t)((n * g->ih + iy) * g->iw + ix) * ic,
                                        ((c * (size_t)g->kh + (size_t)fy) * (size_t)g->kw + (size_t)fx) * ic, ic);
                }
            }
            acc += ti__tfc_bias(j->b, c);
            ti__qg_store(j->y, j->ydt, p * oc + c, ti__qrq_one(&j->rq, acc, c));
        }
    }
}

TI__PRIVATE ti_status ti__tfc_tconv_run(ti__kctx *k) {
    ti__tfc_geo g;
    ti__tfc_job j;
    ti_status st;
    if ((st = ti__tfc_tconv_geometry(k, &g)) != TI_OK) return st;
    const ti_tensor *x = k->in[2], *w = k->in[1], *b = ti__tfc_in(k, 3);
    if ((st = ti__tfc_job_init(k, &j, x, w, b, g.oc, 0, TI__WZP_CHECKED,
                               x->dtype == TI_DTYPE_U8)) != TI_OK)
        return st;
    j.g = &g;
    size_t pixels = (size_t)(g.n * g.oh * g.ow);
    size_t taps = (size_t)(((g.kh + g.sh - 1) / g.sh) * ((g.kw + g.sw - 1) / g.sw));
    ti__parallel_for(k->tp, pixels, ti__tfc_grain((size_t)(g.oc * g.ic) * taps), ti__tfc_tconv_range, &j);
    return TI_OK;
}

/* ---- FULLY_CONNECTED ------------------------------------------------------------------ */
/* input [..., k] (any rank, flattened to [batch, k]), weights [units, k], bias? [units];
 * output [batch, units], or the input's shape with the last dim = units (keep_num_dims). */

TI__PRIVATE ti_status ti__tfc_fc_dims(ti__kctx *k, size_t *batch, size_t *depth, size_t *units) {
    const ti_tensor *x = ti__tfc_in(k, 0), *w = ti__tfc_in(k, 1);
    if (x == NULL || w == NULL) return ti__kfail(k, TI_ERR_BAD_MODEL, "input and weights are required");
    if (w->rank != 2)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "weights have rank %d, expected 2 ([units, depth])", w->rank);
    if (x->rank < 1) return ti__kfail(k, TI_ERR_BAD_MODEL, "input is a scalar");
    int64_t wf = ti__attr_i(k->node, "weights_format", 0);
    if (wf != 0)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "weights_format %lld is not supported (DEFAULT only)",
                         (long long)wf);
    *units = (size_t)w->shape[0];
    *depth = (size_t)w->shape[1];
    size_t nx = ti__numel(x);
    if (*depth == 0) {
        *batch = ti__shape_numel(x->rank - 1, x->shape);
    } else {
        if (nx % *depth != 0)
            return ti__kfail(k, TI_ERR_BAD_MODEL,
                             "input has %zu elements, not a multiple of the weights' depth %zu", nx, *depth);
        *batch = nx / *depth;
    }
    if (ti__attr_i(k->node, "keep_num_dims", 0) && x->shape[x->rank - 1] != (int64_t)*depth)
        return ti__kfail(k, TI_ERR_BAD_MODEL,
                         "keep_num_dims: input's last dim %lld differs from the weights' depth %zu",
                         (long long)x->shape[x->rank - 1], *depth);
    return TI_OK;
}

/* Output dtype: the input's, except uint8 input with an int16 output declared. */
TI__PRIVATE ti_dtype ti__tfc_fc_out_dtype(const ti__kctx *k) {
    ti_dtype xt = k->in[0]->dtype;
    return xt == TI_DTYPE_U8 && ti__tfc_declared(k) == TI_DTYPE_I16 ? TI_DTYPE_I16 : xt;
}

TI__PRIVATE int ti__tfc_fc_shape(ti__kctx *k) {
    size_t batch, depth, units;
    ti_status st;
    int kind;
    if (k->n_out < 1 || k->out[0] == NULL) return ti__kfail(k, TI_ERR_BAD_MODEL, "output is required");
    if ((st = ti__tfc_fc_dims(k, &batch, &depth, &units)) != TI_OK) return st;
    const ti_tensor *x = k->in[0];
    ti_tensor *y = k->out[0];
    if ((st = ti__tfc_check(k, x, k->in[1], ti__tfc_in(k, 2), y, (int64_t)units, 0,
                            TI__WZP_USED, &kind)) != TI_OK)
        return st;
    int64_t dims[TI_MAX_DIMS];
    int rank = 2;
    if (ti__attr_i(k->node, "keep_num_dims", 0)) {
        rank = x->rank;
        for (int d = 0; d < rank; d++) dims[d] = x->shape[d];
        dims[rank - 1] = (int64_t)units;
    } else {
        dims[0] = (int64_t)batch;
        dims[1] = (int64_t)units;
    }
    if (!ti__set_shape(y, ti__tfc_fc_out_dtype(k), rank, dims))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "output shape is too large");
    float flo, fhi;
    int32_t qlo, qhi;
    return kind == TI__TFC_F32 ? ti__tfc_float_act(k, &flo, &fhi) : ti__tfc_quant_act(k, y, &qlo, &qhi);
}

TI__PRIVATE size_t ti__tfc_fc_scratch(ti__kctx *k) {
    const ti_tensor *x = ti__tfc_in(k, 0), *w = ti__tfc_in(k, 1);
    if (x == NULL || w == NULL || x->dtype == TI_DTYPE_F32 || w->rank != 2) return 0;
    size_t oc = (size_t)w->shape[0], kdim = (size_t)w->shape[1];
    size_t rq = ti__qpack_rq(k->node, oc) != NULL ? 0 : oc * 2 * sizeof(int32_t);
    if (x->dtype == TI_DTYPE_I16) return rq;
    if (ti__tfc_qgemm_packed(k->node, oc, kdim)) return rq; /* packed at planning */
    return ti__tfc_qgemm_offset(oc) + ti__tfc_qgemm_bytes(oc, kdim);
}

TI__PRIVATE void ti__tfc_fc_q_range(void *ctx, size_t begin, size_t end) {
    const ti__tfc_job *j = (const ti__tfc_job *)ctx;
    for (size_t t = begin; t < end; t++) {
        size_t bi = t / j->o, o = t % j->o;
        int64_t acc = ti__tfc_dotq(j, bi * j->k, o * j->k, j->k) + ti__tfc_bias(j->b, o);
        ti__qg_store(j->y, j->ydt, t, ti__qrq_one(&j->rq, acc, o));
    }
}

TI__PRIVATE ti_status ti__tfc_fc_run(ti__kctx *k) {
    size_t batch, depth, units;
    ti__tfc_job j;
    ti_status st;
    if ((st = ti__tfc_fc_dims(k, &batch, &depth, &units)) != TI_OK) return st;
    const ti_tensor *x = k->in[0], *w = k->in[1], *b = ti__tfc_in(k, 2);
    if ((st = ti__tfc_job_init(k, &j, x, w, b, (int64_t)units, 0, TI__WZP_USED, 0)) != TI_OK)
        return st;
    j.k = depth;
    if (j.kind != TI__TFC_F32) {
        if (w->quant.count > 1) j.wo = 0; /* per-channel weights are symmetric */
        if (j.kind != TI__TFC_I16) return ti__tfc_qgemm(k, &j, batch, depth, 1);
        ti__parallel_for(k->tp, batch * units, ti__tfc_grain(depth), ti__tfc_fc_q_range, &j);
        return TI_OK;
    }
    if (depth == 0) memset(j.y, 0, batch * units * sizeof(float));
    else
        ti__sgemm_ref(0, 1, batch, units, depth, 1.0f, (const float *)x->data, depth,
                      (const float *)w->data, depth, 0.0f, (float *)j.y, units, k->tp);
    if (b != NULL || j.flo > -FLT_MAX || j.fhi < FLT_MAX)
        ti__parallel_for(k->tp, batch, ti__tfc_grain(units), ti__tfc_bias_clamp, &j);
    return TI_OK;
}

/* ---- BATCH_MATMUL --------------------------------------------------------------------- */
/* out[..., m, n] = op(a)[..., m, k] . op(b)[..., k, n], op = transpose of the last two dims
 * when adj_x / adj_y; batch dims broadcast (numpy rules, a dim of 1 repeats). */

typedef struct ti__tfc_bmm {
    int rank; /* output rank >= 2 */
    int64_t out[TI_MAX_DIMS], a[TI_MAX_DIMS], b[TI_MAX_DIMS]; /* a, b extended to rank */
    size_t m, n, k, batches;
    int adj_x, adj_y;
} ti__tfc_bmm;

TI__PRIVATE ti_status ti__tfc_bmm_dims(ti__kctx *k, ti__tfc_bmm *s) {
    const ti_tensor *a = ti__tfc_in(k, 0), *b = ti__tfc_in(k, 1);
    if (a == NULL || b == NULL) return ti__kfail(k, TI_ERR_BAD_MODEL, "two inputs are required");
    if (a->rank < 2 || b->rank < 2)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "inputs have ranks %d and %d, expected >= 2", a->rank, b->rank);
    s->rank = TI__MAX(a->rank, b->rank);
    s->adj_x = ti__attr_i(k->node, "adj_x", 0) != 0;
    s->adj_y = ti__attr_i(k->node, "adj_y", 0) != 0;
    for (int d = 0; d < s->rank; d++) {
        int da = d - (s->rank - a->rank), db = d - (s->rank - b->rank);
        s->a[d] = da >= 0 ? a->shape[da] : 1;
        s->b[d] = db >= 0 ? b->shape[db] : 1;
    }
    s->batches = 1;
    for (int d = 0; d < s->rank - 2; d++) {
        if (s->a[d] != s->b[d] && s->a[d] != 1 && s->b[d] != 1)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "batch dim %d: %lld and %lld do not broadcast", d,
                             (long long)s->a[d], (long long)s->b[d]);
        s->out[d] = s->a[d] == 1 ? s->b[d] : s->a[d];
        s->batches *= (size_t)s->out[d];
    }
    int r = s->rank;
    int64_t m = s->adj_x ? s->a[r - 1] : s->a[r - 2], ka = s->adj_x ? s->a[r - 2] : s->a[r - 1];
    int64_t kb = s->adj_y ? s->b[r - 1] : s->b[r - 2], n = s->adj_y ? s->b[r - 2] : s->b[r - 1];
    if (ka != kb)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "inner dims differ: %lld (x) and %lld (y)", (long long)ka,
                         (long long)kb);
    s->out[r - 2] = m, s->out[r - 1] = n;
    s->m = (size_t)m, s->n = (size_t)n, s->k = (size_t)ka;
    return TI_OK;
}

/* Element offsets of batch t's matrices in a and b. */
TI__PRIVATE void ti__tfc_bmm_offsets(const ti__tfc_bmm *s, size_t t, size_t *oa, size_t *ob) {
    size_t ia = 0, ib = 0, sa = s->m * s->k, sb = s->k * s->n;
    for (int d = s->rank - 3; d >= 0; d--) {
        size_t i = t % (size_t)s->out[d];
        t /= (size_t)s->out[d];
        if (s->a[d] != 1) ia += i * sa;
        if (s->b[d] != 1) ib += i * sb;
        sa *= (size_t)s->a[d];
        sb *= (size_t)s->b[d];
    }
    *oa = ia;
    *ob = ib;
}

TI__PRIVATE ti_status ti__tfc_bmm_types(ti__kctx *k, ti_dtype *yt) {
    const ti_tensor *a = k->in[0], *b = k->in[1];
    ti_dtype at = a->dtype, bt = b->dtype;
    ti_status st;
    if (at == TI_DTYPE_F32 && bt == TI_DTYPE_F32) {
        *yt = TI_DTYPE_F32;
        return TI_OK;
    }
    if (at == TI_DTYPE_F32 && bt == TI_DTYPE_I8)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "hybrid quantization (float32 x int8) is not supported");
    if (!((at == TI_DTYPE_I8 && bt == TI_DTYPE_I8) ||
          (at == TI_DTYPE_I16 && (bt == TI_DTYPE_I16 || bt == TI_DTYPE_I8))))
        return ti__kfail(k, TI_ERR_UNSUPPORTED,
                         "%s x %s is not supported (float32, int8 x int8, int16 x int16 / int8)",
                         ti_dtype_name(at), ti_dtype_name(bt));
    *yt = at == TI_DTYPE_I8 && ti__tfc_declared(k) == TI_DTYPE_I32 ? TI_DTYPE_I32 : at;
    if ((st = ti__tfc_need_quant(k, a, "input x")) != TI_OK) return st;
    if ((st = ti__tfc_need_quant(k, b, "input y")) != TI_OK) return st;
    if (*yt != TI_DTYPE_I32 && (st = ti__tfc_need_quant(k, k->out[0], "output")) != TI_OK) return st;
    if (a->quant.count > 1 || b->quant.count > 1)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "per-channel quantized inputs are not supported");
    if (at == TI_DTYPE_I16 &&
        (a->quant.zero_point[0] != 0 || b->quant.zero_point[0] != 0 || k->out[0]->quant.zero_point[0] != 0))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "int16 inputs and output must have zero point 0");
    return TI_OK;
}

TI__PRIVATE int ti__tfc_bmm_shape(ti__kctx *k) {
    ti__tfc_bmm s;
    ti_status st;
    ti_dtype yt;
    if (k->n_out < 1 || k->out[0] == NULL) return ti__kfail(k, TI_ERR_BAD_MODEL, "output is required");
    if ((st = ti__tfc_bmm_dims(k, &s)) != TI_OK) return st;
    if ((st = ti__tfc_bmm_types(k, &yt)) != TI_OK) return st;
    if (!ti__set_shape(k->out[0], yt, s.rank, s.out))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "output shape is too large");
    return TI_OK;
}

TI__PRIVATE size_t ti__tfc_bmm_scratch(ti__kctx *k) {
    (void)k;
    return 2 * sizeof(int32_t); /* one multiplier (quantized) */
}

typedef struct ti__tfc_bmm_job {
    const ti__tfc_bmm *s;
    const void *a, *b;
    void *y;
    ti_dtype at, bt, yt;
    int32_t ao, bo; /* -zero points */
    ti__qrq rq;
    ti__threadpool *tp;
} ti__tfc_bmm_job;

TI__PRIVATE int32_t ti__tfc_ld(const void *p, ti_dtype t, size_t i) {
    return t == TI_DTYPE_I16 ? ((const int16_t *)p)[i] : ((const int8_t *)p)[i];
}

TI__PRIVATE void ti__tfc_bmm_q_range(void *ctx, size_t begin, size_t end) {
    const ti__tfc_bmm_job *j = (const ti__tfc_bmm_job *)ctx;
    const ti__tfc_bmm *s = j->s;
    size_t mn = s->m * s->n;
    for (size_t t = begin; t < end; t++) {
        size_t bt = t / mn, i = t % mn / s->n, c = t % s->n, oa, ob;
        ti__tfc_bmm_offsets(s, bt, &oa, &ob);
        int64_t acc = 0;
        for (size_t q = 0; q < s->k; q++) {
            size_t ia = oa + (s->adj_x ? q * s->m + i : i * s->k + q);
            size_t ib = ob + (s->adj_y ? c * s->k + q : q * s->n + c);
            int32_t av = ti__tfc_ld(j->a, j->at, ia), bv = ti__tfc_ld(j->b, j->bt, ib);
            if (j->yt == TI_DTYPE_I32) acc += (int64_t)av * bv; /* TFLite: raw products */
            else acc += (int64_t)(av + j->ao) * (bv + j->bo);
        }
        if (j->yt == TI_DTYPE_I32) ((int32_t *)j->y)[t] = (int32_t)(uint32_t)(uint64_t)acc;
        else ti__qg_store(j->y, j->yt, t, ti__qrq_one(&j->rq, acc, 0));
    }
}

TI__PRIVATE void ti__tfc_bmm_f32_range(void *ctx, size_t begin, size_t end) {
    const ti__tfc_bmm_job *j = (const ti__tfc_bmm_job *)ctx;
    const ti__tfc_bmm *s = j->s;
    for (size_t t = begin; t < end; t++) {
        size_t oa, ob;
        ti__tfc_bmm_offsets(s, t, &oa, &ob);
        ti__sgemm_ref(s->adj_x, s->adj_y, s->m, s->n, s->k, 1.0f, (const float *)j->a + oa,
                      s->adj_x ? s->m : s->k, (const float *)j->b + ob, s->adj_y ? s->k : s->n, 0.0f,
                      (float *)j->y + t * s->m * s->n, s->n, j->tp);
    }
}

TI__PRIVATE ti_status ti__tfc_bmm_run(ti__kctx *k) {
    ti__tfc_bmm s;
    ti__tfc_bmm_job j;
    ti_status st;
    ti_dtype yt;
    if ((st = ti__tfc_bmm_dims(k, &s)) != TI_OK) return st;
    if ((st = ti__tfc_bmm_types(k, &yt)) != TI_OK) return st;
    const ti_tensor *a = k->in[0], *b = k->in[1];
    memset(&j, 0, sizeof j);
    j.s = &s;
    j.a = a->data;
    j.b = b->data;
    j.y = k->out[0]->data;
    j.at = a->dtype, j.bt = b->dtype, j.yt = yt;
    if (yt == TI_DTYPE_F32) {
        size_t work = s.m * s.n * (s.k + 1);
        if (s.batches > 1 && work < ((size_t)1 << 18)) { /* small matrices: batches in parallel */
            ti__parallel_for(k->tp, s.batches, ti__tfc_grain(work), ti__tfc_bmm_f32_range, &j);
        } else {
            j.tp = k->tp;
            ti__tfc_bmm_f32_range(&j, 0, s.batches);
        }
        return TI_OK;
    }
    j.ao = -(int32_t)a->quant.zero_point[0];
    j.bo = -(int32_t)b->quant.zero_point[0];
    if (yt != TI_DTYPE_I32) {
        if ((st = ti__tfc_requant_setup(k, a, b, NULL, k->out[0], 1, 1, &j.rq)) != TI_OK) return st;
        /* TFLite accumulates 16-bit products in int64 */
        j.rq.mode = a->dtype == TI_DTYPE_I16 ? TI__QRQ_64 : TI__QRQ_32;
    }
    ti__parallel_for(k->tp, s.batches * s.m * s.n, ti__tfc_grain(s.k), ti__tfc_bmm_q_range, &j);
    return TI_OK;
}

/* ---- weights packed once at planning ---------------------------------------------------- */
/* Called by the prepack pass for quantized CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED
 * nodes whose weights are constants: the per-channel requantization multipliers (which
 * depend on quantization parameters only), and for the kernels on the shared 8-bit GEMM
 * (uint8 / int8 CONV_2D without groups, FULLY_CONNECTED) the weights packed as
 * ti__tfc_qgemm packs them, both into pool as the node's ti__qpack. A node that fails the
 * checks gets no pack: its run reports the error. Returns TI_ERR_OUT_OF_MEMORY only. */
TI__PRIVATE ti_status ti__tfc_prepack(ti__kctx *k, ti__node *node, ti__pool *pool) {
    int conv = strcmp(node->op, "CONV_2D") == 0, dw = strcmp(node->op, "DEPTHWISE_CONV_2D") == 0;
    int fc = strcmp(node->op, "FULLY_CONNECTED") == 0;
    const ti_tensor *x = ti__tfc_in(k, 0), *w = ti__tfc_in(k, 1), *b = ti__tfc_in(k, 2);
    if ((!conv && !dw && !fc) || x == NULL || w == NULL || w->data == NULL || k->n_out < 1 ||
        k->out[0] == NULL || x->dtype == TI_DTYPE_F32)
        return TI_OK;
    ti_error *saved = k->err, tmp;
    k->err = &tmp;
    ti__tfc_geo g;
    ti__tfc_job j;
    memset(&g, 0, sizeof g);
    memset(&j, 0, sizeof j);
    size_t oc = 0, kdim = 0;
    int gemm = 0;
    ti_status st;
    if (fc) {
        size_t batch;
        st = ti__tfc_fc_dims(k, &batch, &kdim, &oc);
        if (st == TI_OK)
            st = ti__tfc_check(k, x, w, b, k->out[0], (int64_t)oc, 0, TI__WZP_USED, &j.kind);
    } else {
        st = ti__tfc_geometry(k, dw, &g);
        if (st == TI_OK) {
            oc = (size_t)g.oc;
            kdim = (size_t)(g.kh * g.kw * g.kc);
            st = ti__tfc_check(k, x, w, b, k->out[0], g.oc, dw ? 3 : 0, TI__WZP_ZERO, &j.kind);
        }
    }
    k->err = saved;
    if (st != TI_OK || j.kind == TI__TFC_F32 || oc == 0) return TI_OK;
    gemm = j.kind != TI__TFC_I16 && kdim > 0 && (fc || (conv && g.groups == 1));
    /* the B of ti__tfc_qgemm: [oc][kdim] plus weights_offset (ti__tfc_job_init, fc_run) */
    ti__qgemm t;
    memset(&t, 0, sizeof t);
    t.cols = oc;
    t.depth = kdim;
    t.b = w->data;
    t.b_u8 = j.kind == TI__TFC_U8;
    t.b_cs = kdim;
    t.b_ks = 1;
    /* ti__tfc_qgemm has the byte path's gather, and takes that path whenever the ISA has it
     * where ti__tfc_zp_is_byte holds */
    t.want8 = ti__tfc_zp_is_byte(j.kind, -j.xo) ? 2 : 1;
    if (j.kind == TI__TFC_U8 || (fc && w->quant.count == 1))
        t.b_off = -(int32_t)w->quant.zero_point[0];
    void *rq_mem = NULL;
    ti__qpack *pk = ti__qpack_make(node, pool, k->tp, &t, gemm ? 1 : 0, 0, oc, &rq_mem);
    if (pk == NULL) return TI_ERR_OUT_OF_MEMORY;
    ti__qrq r;
    memset(&r, 0, sizeof r);
    ti__tfc_requant_fill(k, x, w, b, k->out[0], (int64_t)oc, conv || dw ? x->dtype == TI_DTYPE_U8 : 0,
                         rq_mem, &r);
    pk->mode = r.mode;
    if (r.mode == TI__QRQ_32) {
        pk->rq_shifts = ti__qrq_shifts(r.shift, oc);
        for (size_t c = 0; c < oc; c++)
            if (r.mult[c] == INT32_MIN) pk->rq_shifts = -1;
        pk->rq_checked = 1;
    }
#ifdef TI__X86_SIMD
    /* the 8-bit depthwise's weights in pairs of taps (AVX2) or quads (AVX512-VNNI), with
     * each channel's bias and input offset term (constants too): ti__tfc_dw_fill, once
     * (per run, this took 0.85 % of the TF2 int8 MobileNetV2 on a Zen 3, on one thread
     * while the other waited) */
    int level = ti__tfc_dw_level();
    if (dw && level > 0 && (b == NULL || b->data != NULL)) {
        k->err = &tmp;
        st = ti__tfc_job_init(k, &j, x, w, b, g.oc, 3, TI__WZP_CHECKED, x->dtype == TI_DTYPE_U8);
        k->err = saved;
        j.g = &g;
        size_t bytes = ti__tfc_dw_prep_bytes(k, &g);
        if (st == TI_OK && j.kind != TI__TFC_F32 && bytes > 0 && ti__tfc_dw_q8_ok(&j)) {
            void *mem = ti__pool_alloc(pool, bytes);
            if (mem == NULL) return TI_ERR_OUT_OF_MEMORY;
            if (ti__tfc_dw_fill(&j, level == 2, mem)) {
                pk->dw = (const int32_t *)mem;
                pk->dw_taps = (size_t)(g.kh * g.kw);
                pk->dw_level = level;
#ifdef TI__X86_VNNI
                if (level == 2 && ti__tfc_dw_rows_ok(&g)) { /* and the row kernel's layout */
                    int8_t *rw = (int8_t *)ti__pool_alloc(pool, ti__tfc_dw_rows_bytes((size_t)oc));
                    if (rw == NULL) return TI_ERR_OUT_OF_MEMORY;
                    size_t woff[9];
                    for (size_t t = 0; t < 9; t++) woff[t] = t * (size_t)oc;
                    for (size_t c0 = 0; c0 < (size_t)oc; c0 += 32)
                        ti__dwq_wprep_rows_vnni(j.kind == TI__TFC_U8,
                                                rw + c0 / 32 * TI__DWQ_ROW_BYTES,
                                                (const unsigned char *)j.w + c0, woff,
                                                TI__MIN((size_t)32, (size_t)oc - c0), j.wo);
                    pk->dw_rows = rw;
                }
#endif
            }
        }
    }
#endif
    return TI_OK;
}

TI__PRIVATE const ti__op ti__ops_tfl_conv[] = {
    {"CONV_2D", ti__tfc_conv_shape, ti__tfc_conv_run, ti__tfc_conv_scratch, 0},
    {"DEPTHWISE_CONV_2D", ti__tfc_dwconv_shape, ti__tfc_dwconv_run, ti__tfc_dwconv_scratch, 0},
    {"TRANSPOSE_CONV", ti__tfc_tconv_shape, ti__tfc_tconv_run, ti__tfc_tconv_scratch, 0},
    {"FULLY_CONNECTED", ti__tfc_fc_shape, ti__tfc_fc_run, ti__tfc_fc_scratch, 0},
    {"BATCH_MATMUL", ti__tfc_bmm_shape, ti__tfc_bmm_run, ti__tfc_bmm_scratch, 0},
    {NULL, NULL, NULL, NULL, 0}
};
