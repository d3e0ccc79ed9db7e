/* Shared machinery of the TFLite convolution and matrix-product kernels (tfl_conv.c):
 * dtype and quantization checks, the output pipeline that turns integer accumulators into
 * uint8 / int8 / int16 outputs bit for bit as TFLite's reference kernels do (with
 * qmath.c and core/qgemm.c), the NHWC window geometry with TFLite's padding rules, and the
 * NHWC gather of the shared 8-bit GEMM (core/qgemm.c) for CONV_2D and FULLY_CONNECTED.
 * Comes before tfl_conv.c in the amalgamation (name order).
 * Must not allocate: buffers are the caller's scratch, the plan's packs (ti__qpack, made at
 * planning by tfl_conv.c's ti__tfc_prepack) or small stack panels. */

/* Kernel kinds, from the input dtype. */
enum { TI__TFC_F32 = 0, TI__TFC_U8, TI__TFC_I8, TI__TFC_I16 };
/* ti__tfc_check's wzp: what the kernel makes of the weights' zero points */
enum {
    TI__WZP_USED = 0,    /* subtracted (uint8, FULLY_CONNECTED): any value */
    TI__WZP_ZERO = 1,    /* ignored, as TFLite's int8 conv kernels do: each must be 0 */
    TI__WZP_CHECKED = 2  /* as TI__WZP_ZERO, and already checked at planning */
};

/* 1 where zx, the input's zero point, is one of the 8-bit kind's values (any valid model's):
 * the byte path of ti__tfc_qgemm pads with it, so takes that path only then, and the
 * prepack (tfl_conv.c) leaves out the int16 B only then. One rule for both, or a run would
 * look for a B that was not packed. */
TI__PRIVATE int ti__tfc_zp_is_byte(int kind, int32_t zx) {
    return kind == TI__TFC_U8 ? zx >= 0 && zx <= 255 : kind == TI__TFC_I8 && zx >= -128 && zx <= 127;
}

/* Output channels accumulated at once by the quantized depthwise kernel (stack array). */
#define TI__TFC_DW_CHUNK TI__QG_CHUNK

/* Input i, or NULL when absent. */
TI__PRIVATE const ti_tensor *ti__tfc_in(const ti__kctx *k, int i) {
    return i < k->n_in ? k->in[i] : NULL;
}

/* Dtype the model declares for output 0 (TI_DTYPE_UNKNOWN when it gives none): uint8
 * FULLY_CONNECTED may write int16 and int8 BATCH_MATMUL int32. */
TI__PRIVATE ti_dtype ti__tfc_declared(const ti__kctx *k) {
    if (k->model == NULL || k->node->n_outputs < 1) return TI_DTYPE_UNKNOWN;
    int v = k->node->outputs[0];
    return v >= 0 && v < k->model->n_values ? k->model->values[v].dtype : TI_DTYPE_UNKNOWN;
}

TI__PRIVATE int64_t ti__tfc_bias(const ti_tensor *b, size_t c) {
    if (b == NULL) return 0;
    return b->dtype == TI_DTYPE_I64 ? ((const int64_t *)b->data)[c] : ((const int32_t *)b->data)[c];
}

/* sum (w[i] + wo) * (x[i] + xo) over 8-bit x and w (both uint8 or both int8), modulo 2^32
 * like TFLite's int32 accumulator; each product fits in int32. */
TI__PRIVATE uint32_t ti__tfc_dot8(const void *x, const void *w, int is_u8, int32_t xo, int32_t wo,
                                  size_t n) {
    uint32_t acc = 0;
    if (is_u8) {
        const uint8_t *a = (const uint8_t *)x, *b = (const uint8_t *)w;
        for (size_t i = 0; i < n; i++)
            acc += (uint32_t)(((int32_t)b[i] + wo) * ((int32_t)a[i] + xo));
    } else {
        const int8_t *a = (const int8_t *)x, *b = (const int8_t *)w;
        for (size_t i = 0; i < n; i++)
            acc += (uint32_t)(((int32_t)b[i] + wo) * ((int32_t)a[i] + xo));
    }
    return acc;
}

/* sum w[i] * x[i] for int16 x and int8 w (zero points are 0 in 16x8 quantization). */
TI__PRIVATE int64_t ti__tfc_dot16(const int16_t *x, const int8_t *w, size_t n) {
    int64_t acc = 0;
    for (size_t i = 0; i < n; i++) acc += (int32_t)w[i] * (int32_t)x[i];
    return acc;
}

TI__PRIVATE float ti__tfc_dotf(const float *x, const float *w, size_t n) {
    float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += x[i] * w[i];
        s1 += x[i + 1] * w[i + 1];
        s2 += x[i + 2] * w[i + 2];
        s3 += x[i + 3] * w[i + 3];
    }
    for (; i < n; i++) s0 += x[i] * w[i];
    return (s0 + s1) + (s2 + s3);
}

/* ---- checks shared by the ops ------------------------------------------------------- */

TI__PRIVATE ti_status ti__tfc_float_act(ti__kctx *k, float *lo, float *hi) {
    int64_t act = ti__attr_i(k->node, "fused_activation_function", TI__TFL_ACT_NONE);
    if (act < 0 || act > 100 || !ti__f_act_range((int)act, lo, hi))
        return ti__kfail(k, TI_ERR_UNSUPPORTED,
                         "fused_activation_function %lld is not supported (NONE, RELU, "
                         "RELU_N1_TO_1, RELU6)", (long long)act);
    return TI_OK;
}

/* Clamp range of the fused activation on quantized output y (TFLite
 * CalculateActivationRangeQuantized). */
TI__PRIVATE ti_status ti__tfc_quant_act(ti__kctx *k, const ti_tensor *y, int32_t *lo, int32_t *hi) {
    int32_t qmin = INT32_MIN, qmax = INT32_MAX;
    if (y->dtype == TI_DTYPE_U8) qmin = 0, qmax = 255;
    else if (y->dtype == TI_DTYPE_I8) qmin = -128, qmax = 127;
    else if (y->dtype == TI_DTYPE_I16) qmin = -32768, qmax = 32767;
    int64_t act = ti__attr_i(k->node, "fused_activation_function", TI__TFL_ACT_NONE);
    if (act < 0 || act > 100 ||
        !ti__q_act_range((int)act, y->quant.scale[0], y->quant.zero_point[0], qmin, qmax, lo, hi))
        return ti__kfail(k, TI_ERR_UNSUPPORTED,
                         "fused_activation_function %lld is not supported on a quantized output "
                         "(NONE, RELU, RELU_N1_TO_1, RELU6)", (long long)act);
    return TI_OK;
}

TI__PRIVATE ti_status ti__tfc_need_quant(ti__kctx *k, const ti_tensor *t, const char *what) {
    if (t->quant.count < 1 || t->quant.scale == NULL || t->quant.zero_point == NULL)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "%s (%s) has no quantization parameters", what,
                         ti_dtype_name(t->dtype));
    return TI_OK;
}

/* Checks the dtypes and quantization of input x, weights w (per-channel scales along
 * w_axis, oc output channels), optional bias b and output y, and sets *kind. wzp: TI__WZP_*
 * above; int16 kernels need every zero point 0 whatever wzp says. TI__WZP_CHECKED: the shape
 * function checked the zero points at planning (they are the model's), so a run does not
 * read them again (that loop over a conv's channels, their zero points out of cache by
 * then, was 1 % of MobileNetV2 int8, perf). */
TI__PRIVATE ti_status ti__tfc_check(ti__kctx *k, const ti_tensor *x, const ti_tensor *w,
                                    const ti_tensor *b, const ti_tensor *y, int64_t oc, int w_axis,
                                    int wzp, int *kind) {
    ti_dtype xt = x->dtype, wt = w->dtype;
    ti_status st;
    if (b != NULL && (int64_t)ti__numel(b) != oc)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "bias has %zu elements, expected %lld (output channels)",
                         ti__numel(b), (long long)oc);
    if (xt == TI_DTYPE_F32) {
        if (wt != TI_DTYPE_F32)
            return ti__kfail(k, TI_ERR_UNSUPPORTED,
                             "hybrid quantization (float32 input, %s weights) is not supported",
                             ti_dtype_name(wt));
        if (b != NULL && b->dtype != TI_DTYPE_F32)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "bias is %s, expected float32", ti_dtype_name(b->dtype));
        *kind = TI__TFC_F32;
        return TI_OK;
    }
    if (xt != TI_DTYPE_U8 && xt != TI_DTYPE_I8 && xt != TI_DTYPE_I16)
        return ti__kfail(k, TI_ERR_UNSUPPORTED,
                         "input dtype %s is not supported (float32, uint8, int8, int16)",
                         ti_dtype_name(xt));
    ti_dtype want_w = xt == TI_DTYPE_U8 ? TI_DTYPE_U8 : TI_DTYPE_I8;
    if (wt != want_w)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "%s input with %s weights is not supported (expected %s)",
                         ti_dtype_name(xt), ti_dtype_name(wt), ti_dtype_name(want_w));
    if (b != NULL && b->dtype != TI_DTYPE_I32 && !(xt == TI_DTYPE_I16 && b->dtype == TI_DTYPE_I64))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "bias is %s, expected %s", ti_dtype_name(b->dtype),
                         xt == TI_DTYPE_I16 ? "int64 or int32" : "int32");
    if ((st = ti__tfc_need_quant(k, x, "input")) != TI_OK) return st;
    if ((st = ti__tfc_need_quant(k, w, "weights")) != TI_OK) return st;
    if ((st = ti__tfc_need_quant(k, y, "output")) != TI_OK) return st;
    int wc = w->quant.count;
    if (wc != 1 && (int64_t)wc != oc)
        return ti__kfail(k, TI_ERR_BAD_MODEL,
                         "weights have %d quantization scales, expected 1 or %lld (output channels)",
                         wc, (long long)oc);
    if (wc > 1 && xt == TI_DTYPE_U8)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "per-channel quantized uint8 weights are not supported");
    if (wc > 1 && w->quant.axis != w_axis)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "weights are quantized along axis %d, expected %d",
                         w->quant.axis, w_axis);
    int check_wzp = wzp == TI__WZP_ZERO || (wzp == TI__WZP_USED && xt == TI_DTYPE_I16);
    for (int i = 0; check_wzp && xt != TI_DTYPE_U8 && i < wc; i++)
        if (w->quant.zero_point[i] != 0)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "weights zero point %lld (channel %d) must be 0",
                             (long long)w->quant.zero_point[i], i);
    if (xt == TI_DTYPE_I16 && (x->quant.zero_point[0] != 0 || y->quant.zero_point[0] != 0))
        return ti__kfail(k, TI_ERR_BAD_MODEL,
                         "int16 input and output must have zero point 0 (found %lld and %lld)",
                         (long long)x->quant.zero_point[0], (long long)y->quant.zero_point[0]);
    *kind = xt == TI_DTYPE_U8 ? TI__TFC_U8 : (xt == TI_DTYPE_I8 ? TI__TFC_I8 : TI__TFC_I16);
    return TI_OK;
}

/* Computes the requantization mode and the multipliers of oc output channels into mem
 * (ti__qg_rq_bytes(oc) bytes: two int32 or one double per channel) and points r at them.
 * real = s_x * s_w[c] / s_y. float_product: s_x * s_w is rounded to float first, as
 * TFLite's GetQuantizedConvolutionMultipler does for uint8 kernels and BATCH_MATMUL;
 * PopulateConvolutionQuantizationParams multiplies in double. 16x8 kernels: the
 * accumulator is int64 unless the bias (or, without bias, the quantized_bias_type option)
 * is int32. FULLY_CONNECTED rescales in double (TI__QRQ_DOUBLE). Depends on quantization
 * parameters only, so the prepack pass runs it once at planning (tfl_conv.c). */
TI__PRIVATE void ti__tfc_requant_fill(const ti__kctx *k, const ti_tensor *x, const ti_tensor *w,
                                      const ti_tensor *b, const ti_tensor *y, int64_t oc,
                                      int float_product, void *mem, ti__qrq *r) {
    int32_t *mult = (int32_t *)mem, *shift = mult + oc;
    double *reals = (double *)mem; /* TI__QRQ_DOUBLE*: the same bytes */
    float sx = x->quant.scale[0], sy = y->quant.scale[0];
    r->mode = TI__QRQ_32;
    if (x->dtype == TI_DTYPE_I16)
        r->mode = (b != NULL ? b->dtype != TI_DTYPE_I32
                             : ti__attr_i(k->node, "quantized_bias_type", 0) != 2 /* INT32 */)
                      ? TI__QRQ_64 : TI__QRQ_32;
    if (strcmp(k->node->op, "FULLY_CONNECTED") == 0)
        r->mode = r->mode == TI__QRQ_64 ? TI__QRQ_DOUBLE64 : TI__QRQ_DOUBLE;
    for (int64_t c = 0; c < oc; c++) {
        float sw = w->quant.scale[w->quant.count > 1 ? c : 0];
        double real;
        if (r->mode >= TI__QRQ_DOUBLE) {
            reals[c] = (double)sx * (double)sw / (double)sy;
            continue;
        }
        if (float_product) {
            float prod = sx * sw;
            real = (double)prod / (double)sy;
        } else {
            real = (double)sx * (double)sw / (double)sy;
        }
        int sh;
        ti__q_quantize_multiplier(real, &mult[c], &sh);
        shift[c] = sh;
    }
    r->mult = mult;
    r->shift = shift;
    r->real = reals;
}

/* Fills the requantization of oc output channels into r: the multipliers the prepack
 * pass computed (the node's ti__qpack), else computed now into scratch. */
TI__PRIVATE ti_status ti__tfc_requant_setup(ti__kctx *k, const ti_tensor *x, const ti_tensor *w,
                                            const ti_tensor *b, const ti_tensor *y, int64_t oc,
                                            int float_product, ti__qrq *r) {
    const ti__qpack *pk = oc > 0 ? ti__qpack_rq(k->node, (size_t)oc) : NULL;
    if (pk != NULL) {
        r->mode = pk->mode;
        r->mult = pk->mult;
        r->shift = pk->shift;
        r->real = pk->real;
        r->checked = pk->rq_checked;
        r->shifts_all = pk->rq_shifts;
    } else {
        if (oc > 0 && (k->scratch == NULL || k->scratch_bytes < (size_t)oc * 2 * sizeof(int32_t)))
            return ti__kfail(k, TI_ERR_INVALID_ARGUMENT,
                             "scratch of %zu bytes is too small for %lld channel multipliers",
                             k->scratch_bytes, (long long)oc);
        ti__tfc_requant_fill(k, x, w, b, y, oc, float_product, k->scratch, r);
    }
    r->yo = (int32_t)y->quant.zero_point[0];
    return ti__tfc_quant_act(k, y, &r->lo, &r->hi); /* BATCH_MATMUL has none: dtype range */
}

/* ---- geometry of CONV_2D / DEPTHWISE_CONV_2D / TRANSPOSE_CONV --------------------------- */

typedef struct ti__tfc_geo {
    int64_t n, ih, iw, ic; /* input [n, ih, iw, ic] */
    int64_t oh, ow, oc;    /* output [n, oh, ow, oc] */
    int64_t kh, kw, kc;    /* filter taps, input channels per tap (per group) */
    int64_t groups, opg;   /* CONV_2D groups and output channels per group */
    int64_t mult;          /* DEPTHWISE_CONV_2D output channels per input channel */
    int64_t sh, sw, dh, dw, ph, pw; /* strides, dilations, leading padding */
} ti__tfc_geo;

/* TFLite ComputeOutSize and ComputePaddingWithOffset along one axis (padding SAME = 0,
 * VALID = 1): the output size and the leading padding; the odd pixel goes at the end. */
TI__PRIVATE void ti__tfc_pad(int64_t padding, int64_t in, int64_t k, int64_t s, int64_t d,
                             int64_t *out, int64_t *pad) {
    int64_t eff = (k - 1) * d + 1;
    *out = padding == 0 ? (in + s - 1) / s : (in + s - eff) / s;
    int64_t total = (*out - 1) * s + eff - in;
    *pad = total > 0 ? total / 2 : 0;
}

TI__PRIVATE ti_status ti__tfc_window(ti__kctx *k, int dilated, ti__tfc_geo *g, int64_t *padding) {
    const ti__node *nd = k->node;
    g->sh = ti__attr_i(nd, "stride_h", 1);
    g->sw = ti__attr_i(nd, "stride_w", 1);
    g->dh = dilated ? ti__attr_i(nd, "dilation_h_factor", 1) : 1;
    g->dw = dilated ? ti__attr_i(nd, "dilation_w_factor", 1) : 1;
    *padding = ti__attr_i(nd, "padding", 0);
    if (g->sh < 1 || g->sw < 1 || g->sh > INT32_MAX || g->sw > INT32_MAX)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "strides (%lld, %lld) must be positive",
                         (long long)g->sh, (long long)g->sw);
    if (g->dh < 1 || g->dw < 1 || g->dh > INT32_MAX || g->dw > INT32_MAX)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "dilations (%lld, %lld) must be positive",
                         (long long)g->dh, (long long)g->dw);
    if (*padding != 0 && *padding != 1)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "padding %lld is not SAME (0) or VALID (1)",
                         (long long)*padding);
    return TI_OK;
}

TI__PRIVATE ti_status ti__tfc_rank4(ti__kctx *k, const ti_tensor *t, const char *what) {
    if (t->rank != 4)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "%s has rank %d, expected 4", what, t->rank);
    for (int d = 0; d < 4; d++)
        if (t->shape[d] < 1 || t->shape[d] > INT32_MAX)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "%s dim %d is %lld, expected >= 1", what, d,
                             (long long)t->shape[d]);
    return TI_OK;
}

/* CONV_2D (weights OHWI [oc, kh, kw, ic / groups]) or DEPTHWISE_CONV_2D (weights
 * [1, kh, kw, oc], oc a multiple of ic). */
TI__PRIVATE ti_status ti__tfc_geometry(ti__kctx *k, int depthwise, ti__tfc_geo *g) {
    const ti_tensor *x = ti__tfc_in(k, 0), *w = ti__tfc_in(k, 1);
    if (x == NULL || w == NULL)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "input and weights are required");
    ti_status st;
    int64_t padding;
    if ((st = ti__tfc_rank4(k, x, "input")) != TI_OK) return st;
    if ((st = ti__tfc_rank4(k, w, "weights tensor")) != TI_OK) return st;
    if ((st = ti__tfc_window(k, 1, g, &padding)) != TI_OK) return st;
    g->n = x->shape[0], g->ih = x->shape[1], g->iw = x->shape[2], g->ic = x->shape[3];
    g->kh = w->shape[1], g->kw = w->shape[2];
    if (depthwise) {
        if (w->shape[0] != 1)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "weights dim 0 is %lld, expected 1 ([1, kh, kw, oc])",
                             (long long)w->shape[0]);
        g->oc = w->shape[3];
        if (g->oc % g->ic != 0)
            return ti__kfail(k, TI_ERR_BAD_MODEL,
                             "weights have %lld channels, not a multiple of the input's %lld",
                             (long long)g->oc, (long long)g->ic);
        g->mult = g->oc / g->ic, g->kc = 1, g->groups = g->ic, g->opg = g->mult;
    } else {
        g->oc = w->shape[0], g->kc = w->shape[3], g->mult = 1;
        if (g->ic % g->kc != 0)
            return ti__kfail(k, TI_ERR_BAD_MODEL,
                             "input has %lld channels, not a multiple of the weights' %lld",
                             (long long)g->ic, (long long)g->kc);
        g->groups = g->ic / g->kc;
        if (g->oc % g->groups != 0)
            return ti__kfail(k, TI_ERR_BAD_MODEL,
                             "%lld output channels do not split into %lld groups",
                             (long long)g->oc, (long long)g->groups);
        g->opg = g->oc / g->groups;
    }
    ti__tfc_pad(padding, g->ih, g->kh, g->sh, g->dh, &g->oh, &g->ph);
    ti__tfc_pad(padding, g->iw, g->kw, g->sw, g->dw, &g->ow, &g->pw);
    if (g->oh < 1 || g->ow < 1)
        return ti__kfail(k, TI_ERR_BAD_MODEL,
                         "VALID window %lldx%lld (dilated) does not fit the %lldx%lld input",
                         (long long)((g->kh - 1) * g->dh + 1), (long long)((g->kw - 1) * g->dw + 1),
                         (long long)g->ih, (long long)g->iw);
    return TI_OK;
}

TI__PRIVATE int ti__tfc_conv_is_1x1(const ti__tfc_geo *g) {
    return g->kh == 1 && g->kw == 1 && g->sh == 1 && g->sw == 1 && g->ph == 0 && g->pw == 0 &&
           g->groups == 1;
}

/* The work of one run, shared by the parallel range functions. */
typedef struct ti__tfc_job {
    const ti__tfc_geo *g;
    const void *x, *w;
    void *y;
    const ti_tensor *b;
    int kind;
    ti_dtype ydt;
    int32_t xo, wo; /* input_offset = -zp_x, weights_offset = -zp_w (uint8 only) */
    ti__qrq rq;
    float flo, fhi; /* float clamp */
    float *col;     /* im2col tile: rows of kdim floats */
    size_t p0, kdim, grp;
    size_t k, o;    /* FULLY_CONNECTED: depth, units */
    size_t rows;    /* 8-bit GEMM: output pixels (CONV_2D) or batch rows (FULLY_CONNECTED) */
    int fc;         /* 8-bit GEMM: rows are FULLY_CONNECTED input rows, not im2col rows */
    const int16_t *dwp; /* 8-bit depthwise on AVX2: the weights prepared once per run in scratch */
    const int32_t *dwc; /* (ti__tfc_dw_prep) and each channel's bias plus offset term, or NULL */
    const int8_t *dwv;  /* or on AVX512-VNNI these weights (dwp NULL) */
    int32_t dwbo;       /* and their offset (ti__dwq_wprep_vnni's bo) */
    const int8_t *dwr;  /* and on AVX512-VNNI the 3 x 3 row layout (ti__tfc_dw_rows_ok), or NULL */
} ti__tfc_job;

/* Dot of n elements of the job's input (from element xi) and weights (from wi). 8-bit
 * kinds return the uint32 accumulator, whose sums are taken modulo 2^32 in ti__qrq_one. */
TI__PRIVATE int64_t ti__tfc_dotq(const ti__tfc_job *j, size_t xi, size_t wi, size_t n) {
    if (j->kind == TI__TFC_I16)
        return ti__tfc_dot16((const int16_t *)j->x + xi, (const int8_t *)j->w + wi, n);
    return (int64_t)ti__tfc_dot8((const uint8_t *)j->x + xi, (const uint8_t *)j->w + wi,
                                 j->kind == TI__TFC_U8, j->xo, j->wo, n);
}

/* Pixel p of the output: batch, row, column. */
TI__PRIVATE void ti__tfc_pixel(const ti__tfc_geo *g, size_t p, int64_t *n, int64_t *oy, int64_t *ox) {
    *ox = (int64_t)(p % (size_t)g->ow);
    size_t t = p / (size_t)g->ow;
    *oy = (int64_t)(t % (size_t)g->oh);
    *n = (int64_t)(t / (size_t)g->oh);
}

/* Taps [*f0, *f1) of one axis whose input position o*s - pad + f*d lies in [0, in). */
TI__PRIVATE void ti__tfc_taps(int64_t start, int64_t d, int64_t k, int64_t in, int64_t *f0, int64_t *f1) {
    int64_t lo = 0, hi = k;
    if (start < 0) lo = (-start + d - 1) / d;
    if (start + (k - 1) * d >= in) hi = start >= in ? 0 : (in - 1 - start) / d + 1;
    if (hi < lo) hi = lo;
    *f0 = lo;
    *f1 = hi;
}

TI__PRIVATE size_t ti__tfc_grain(size_t work_per_item) {
    return TI__MAX((size_t)1, (size_t)32768 / (work_per_item + 1));
}

/* ---- 8-bit GEMM of CONV_2D (one group) and FULLY_CONNECTED --------------------------- */
/* The shared integer GEMM (core/qgemm.c) with this file's gather: row p is an output
 * pixel's NHWC im2col row (k runs over fy, fx, c) or a FULLY_CONNECTED batch row, the
 * weights [oc][k] with weights_offset added. Requantization: the job's (TFLite modes). */

/* Bytes before the packed weights in scratch (the per-channel multipliers), and the
 * packed weights' bytes. */
TI__PRIVATE size_t ti__tfc_qgemm_offset(size_t oc) { return ti__qg_rq_bytes(oc); }
TI__PRIVATE size_t ti__tfc_qgemm_bytes(size_t oc, size_t kdim) { return ti__qg_packed_bytes(oc, kdim); }

/* Whether the prepack pass packed the node's weights, for either path: its run then needs
 * no scratch for them. */
TI__PRIVATE int ti__tfc_qgemm_packed(const ti__node *nd, size_t oc, size_t kdim) {
    return ti__qpack_b(nd, 1, oc, kdim, 0) != NULL || ti__qpack_b8(nd, 1, oc, kdim, 0) != NULL;
}

/* Copies n input values from element si, zero point applied, to dst[i * stride]: stride
 * TI__QG_MR, a column of the panel; 1, contiguous (AVX2's widening copy where it runs). */
TI__PRIVATE void ti__tfc_qcopy(const ti__tfc_job *j, size_t si, size_t n, int16_t *dst, size_t stride) {
#if defined(TI__X86_SIMD)
    if (stride == 1 && ti__cpu_isa() >= TI__ISA_AVX2) {
        ti__q8_widen_avx2(dst, (const uint8_t *)j->x + si, n, j->kind == TI__TFC_U8, j->xo);
        return;
    }
#endif
    if (j->kind == TI__TFC_U8) {
        const uint8_t *x = (const uint8_t *)j->x + si;
        for (size_t i = 0; i < n; i++) dst[i * stride] = (int16_t)(x[i] + j->xo);
    } else {
        const int8_t *x = (const int8_t *)j->x + si;
        for (size_t i = 0; i < n; i++) dst[i * stride] = (int16_t)(x[i] + j->xo);
    }
}

/* Depths [k0, k1) of row p (an output pixel's im2col row, or an FC input row) to
 * a[(k - k0) * stride], taps outside the input as 0. */
TI__PRIVATE void ti__tfc_qwalk(const ti__tfc_job *j, size_t p, size_t k0, size_t k1, int16_t *a,
                               size_t stride) {
    if (j->fc) {
        ti__tfc_qcopy(j, p * j->kdim + k0, k1 - k0, a, stride);
        return;
    }
    const ti__tfc_geo *g = j->g;
    int64_t n, oy, ox;
    ti__tfc_pixel(g, p, &n, &oy, &ox);
    size_t ic = (size_t)g->ic, kw = (size_t)g->kw, t = k0 / ic, c = k0 % ic;
#if defined(TI__X86_SIMD)
    /* A whole row whose window lies inside the input, undilated along x, filter rows of at
     * most 16 bytes (a first layer's 3 x 3 x 3): one 16-byte widening per filter row, each
     * writing past its row into the next (written after it) and up to 16 past the last (the
     * ti__qg_grow_fn contract), where the scalar walk went element by element. The last
     * load must end inside the input. */
    int64_t iy0 = oy * g->sh - g->ph, ix0 = ox * g->sw - g->pw, run = g->kw * g->ic;
    if (stride == 1 && k0 == 0 && k1 == j->kdim && g->dw == 1 && run <= 16 && iy0 >= 0 &&
        ix0 >= 0 && iy0 + (g->kh - 1) * g->dh < g->ih && ix0 + g->kw <= g->iw &&
        (j->kind == TI__TFC_U8 || j->kind == TI__TFC_I8) && ti__cpu_isa() >= TI__ISA_AVX2 &&
        ((n * g->ih + iy0 + (g->kh - 1) * g->dh) * g->iw + ix0) * g->ic + 16 <=
            g->n * g->ih * g->iw * g->ic) {
        const uint8_t *x = (const uint8_t *)j->x;
        for (int64_t fy = 0; fy < g->kh; fy++) {
            size_t at = (size_t)(((n * g->ih + iy0 + fy * g->dh) * g->iw + ix0) * g->ic);
            ti__q8_widen16_avx2(a + fy * run, x + at, j->kind == TI__TFC_U8, j->xo);
        }
        return;
    }
#endif
    for (size_t k = k0; k < k1; c = 0) {
        size_t cnt = TI__MIN(ic - c, k1 - k), fx = t % kw, taps = 1;
        int64_t iy = oy * g->sh - g->ph + (int64_t)(t / kw) * g->dh;
        int64_t ix = ox * g->sw - g->pw + (int64_t)fx * g->dw;
        int16_t *dst = a + (k - k0) * stride;
        if (iy < 0 || iy >= g->ih || ix < 0 || ix >= g->iw) {
            for (size_t i = 0; i < cnt; i++) dst[i * stride] = 0;
        } else {
            /* undilated: the next taps of this filter row that lie inside the input follow
             * this one in memory; one copy for the run (the first layers' few channels) */
            while (g->dw == 1 && fx + taps < kw && ix + (int64_t)taps < g->iw && k + cnt < k1) {
                cnt = TI__MIN(cnt + ic, k1 - k);
                taps++;
            }
            ti__tfc_qcopy(j, (size_t)((n * g->ih + iy) * g->iw + ix) * ic + c, cnt, dst, stride);
        }
        k += cnt;
        t += taps;
    }
}

/* Column r of the panel: depths [k0, k1) of row p (a ti__qg_gather_fn on the job). */
TI__PRIVATE void ti__tfc_qgather(const void *ctx, size_t p, size_t k0, size_t k1, int16_t *a) {
    ti__tfc_qwalk((const ti__tfc_job *)ctx, p, k0, k1, a, TI__QG_MR);
}

#if defined(TI__X86_SIMD)
/* The same depths to a[k - k0], contiguous (a ti__qg_grow_fn; ti__qg_range calls it under
 * AVX2), with ti__tfc_qwalk's 16-byte widenings where a window lies inside the input. */
TI__PRIVATE void ti__tfc_qgather_row(const void *ctx, size_t p, size_t k0, size_t k1, int16_t *a) {
    ti__tfc_qwalk((const ti__tfc_job *)ctx, p, k0, k1, a, 1);
}
#endif

#ifdef TI__QG8
/* The sum of n bytes (modulo 2^32), eight at a time in a word: four 16-bit sums of byte
 * pairs, folded every 64 words (each gains at most 510 a word). For the gather's 16-byte
 * moves, whose bytes past a filter row are not the row's. */
TI__PRIVATE uint32_t ti__tfc_sum8(const uint8_t *p, size_t n) {
    uint32_t sum = 0;
    size_t i = 0;
    while (i + 8 <= n) {
        uint64_t h = 0, v;
        for (size_t w = 0; w < 64 && i + 8 <= n; w++, i += 8) {
            memcpy(&v, p + i, 8);
            h += (v & 0x00ff00ff00ff00ffull) + ((v >> 8) & 0x00ff00ff00ff00ffull);
        }
        sum += (uint32_t)(h & 0xffff) + (uint32_t)((h >> 16) & 0xffff) +
               (uint32_t)((h >> 32) & 0xffff) + (uint32_t)(h >> 48);
    }
    for (; i < n; i++) sum += p[i];
    return sum;
}

/* The byte path's gather (ti__qg_gather8_fn): depths [k0, k1) of rows p0 .. p0 + np - 1 as
 * unsigned bytes (int8 + 128 by flipping the top bit), taps outside the input as the zero
 * point's byte; each row's sum added to sums[r] (sums NULL: not summed). The pixel of p0 is
 * found once and stepped along the rows. */
TI__PRIVATE void ti__tfc_qgather8(const void *ctx, size_t p0, size_t np, size_t k0, size_t k1,
                                  uint8_t *dst, size_t ld, uint32_t *sums) {
    const ti__tfc_job *j = (const ti__tfc_job *)ctx;
    uint8_t flip = j->kind == TI__TFC_I8 ? 0x80 : 0;
    const uint8_t *x = (const uint8_t *)j->x; /* 1-byte elements */
    if (j->fc) {
        for (size_t r = 0; r < np; r++) {
            uint32_t sum = ti__qg8_copy(dst + r * ld, x + (p0 + r) * j->kdim + k0, k1 - k0, flip);
            if (sums != NULL) sums[r] += sum;
        }
        return;
    }
    const ti__tfc_geo *g = j->g;
    uint8_t pad = (uint8_t)((uint8_t)(-j->xo) ^ flip); /* zero point in range: checked */
    const uint8_t *xend = x + (size_t)(g->n * g->ih * g->iw * g->ic);
    int64_t n, oy, ox;
    ti__tfc_pixel(g, p0, &n, &oy, &ox);
    const size_t ic = (size_t)g->ic, kw = (size_t)g->kw;
    const size_t t0 = k0 / ic, c0 = k0 % ic, fy0 = t0 / kw, fx0 = t0 % kw; /* k0's tap */
    /* an image's first conv (a filter row's taps at most 16 bytes, undilated along it), the
     * whole row of taps: per filter row one 16-byte copy where the window lies inside */
    const size_t run = kw * ic;
    const int short_rows = g->dw == 1 && run <= 16 && k0 == 0 && k1 == (size_t)g->kh * run &&
                           run * (size_t)(g->kh - 1) + 16 <= ld;
    for (size_t r = 0; r < np; r++) {
        uint8_t *a = dst + r * ld;
        size_t c = c0, fy = fy0, fx = fx0; /* the tap, stepped without dividing per tap */
        int64_t iy0 = oy * g->sh - g->ph, ix0 = ox * g->sw - g->pw;
        size_t k = k0;
        uint32_t sum = 0;
        if (short_rows && iy0 >= 0 && ix0 >= 0 && iy0 + (g->kh - 1) * g->dh < g->ih &&
            ix0 + g->kw <= g->iw) {
            const uint8_t *base = x + (size_t)((n * g->ih + iy0) * g->iw + ix0) * ic;
            const size_t step = (size_t)(g->dh * g->iw) * ic;
            for (int64_t y = 0; y < g->kh; y++) {
                const uint8_t *src = base + (size_t)y * step;
                uint8_t *d = a + (size_t)y * run;
                if (src + 16 <= xend) { /* 16 bytes: those past run are the next filter row's,
                                           or past k1 where the caller zeroes the panel */
                    uint64_t v[2];
                    memcpy(v, src, 16);
                    v[0] ^= 0x0101010101010101ull * flip;
                    v[1] ^= 0x0101010101010101ull * flip;
                    memcpy(d, v, 16);
                } else {
                    for (size_t i = 0; i < run; i++) d[i] = (uint8_t)(src[i] ^ flip);
                }
            }
            if (sums != NULL) sum = ti__tfc_sum8(a, k1 - k0); /* the row's bytes */
            k = k1;
        }
        for (; k < k1; c = 0) {
            size_t cnt = TI__MIN(ic - c, k1 - k), taps = 1;
            int64_t iy = oy * g->sh - g->ph + (int64_t)fy * g->dh;
            int64_t ix = ox * g->sw - g->pw + (int64_t)fx * g->dw;
            if (iy < 0 || iy >= g->ih || ix < 0 || ix >= g->iw) {
                memset(a + (k - k0), pad, cnt);
                sum += (uint32_t)pad * (uint32_t)cnt;
            } else {
                /* undilated: the next taps of this filter row inside the input follow in
                 * memory (ti__tfc_qwalk's run) */
                while (g->dw == 1 && fx + taps < kw && ix + (int64_t)taps < g->iw && k + cnt < k1) {
                    cnt = TI__MIN(cnt + ic, k1 - k);
                    taps++;
                }
                const uint8_t *src = x + (size_t)((n * g->ih + iy) * g->iw + ix) * ic + c;
                uint8_t *d = a + (k - k0);
                if (cnt < 16) { /* a few bytes: cheaper than the vector copy's masks */
                    for (size_t i = 0; i < cnt; i++) sum += d[i] = (uint8_t)(src[i] ^ flip);
                } else {
                    sum += ti__qg8_copy(d, src, cnt, flip); /* summed as it copies */
                }
            }
            k += cnt;
            fx += taps; /* fx + taps <= kw */
            if (fx == kw) {
                fx = 0;
                fy++;
            }
        }
        if (sums != NULL) sums[r] += sum;
        if (++ox == g->ow) { /* the next row's pixel */
            ox = 0;
            if (++oy == g->oh) oy = 0, n++;
        }
    }
}
#endif

/* Runs the 8-bit GEMM of a job whose requantization is set up: on the weights the prepack
 * pass packed (the node's ti__qpack), else packed now into scratch after the multipliers.
 * With the byte path's pack (AVX512-VNNI or SDOT at planning), on that when the ISA now
 * has it and the input's zero point is one of its dtype's values (the padding byte); the
 * pack then has no int16 B where that zero point is (ti__qpack_make's want8 2). */
TI__PRIVATE ti_status ti__tfc_qgemm(ti__kctx *k, ti__tfc_job *j, size_t rows, size_t kdim, int fc) {
    size_t off = ti__tfc_qgemm_offset(j->o);
    const int16_t *pre = ti__qpack_b(k->node, 1, j->o, kdim, 0);
    const int8_t *pre8 = NULL;
#ifdef TI__QG8
    if (ti__tfc_zp_is_byte(j->kind, -j->xo)) pre8 = ti__qpack_b8(k->node, 1, j->o, kdim, 0);
    if (ti__qg8_isa_now() == NULL) pre8 = NULL;
#endif
    if (pre == NULL && pre8 == NULL && k->scratch_bytes < off + ti__tfc_qgemm_bytes(j->o, kdim)) {
        if (ti__qpack_b8(k->node, 1, j->o, kdim, 0) != NULL) /* only ti__cpu_force_isa */
            return ti__kfail(k, TI_ERR_UNSUPPORTED,
                             "the weights were packed for the 8-bit dot-product instructions of "
                             "the ISA at session creation, which the ISA now lacks");
        return ti__kfail(k, TI_ERR_INVALID_ARGUMENT,
                         "scratch of %zu bytes is too small for the packed weights", k->scratch_bytes);
    }
    j->rows = rows;
    j->kdim = kdim;
    j->fc = fc;
    ti__qgemm g;
    memset(&g, 0, sizeof g);
    g.rows = rows;
    g.depth = kdim;
    g.cols = j->o;
    g.gather = ti__tfc_qgather;
#if defined(TI__X86_SIMD)
    if (j->kind == TI__TFC_U8 || j->kind == TI__TFC_I8) {
        g.gather_row = ti__tfc_qgather_row;
        if (fc || ti__tfc_conv_is_1x1(j->g)) { /* row p is input row (pixel) p as it lies */
            g.a8 = (const unsigned char *)j->x;
            g.a8_rs = kdim;
            g.a8_off = j->xo;
            g.a8_u8 = j->kind == TI__TFC_U8;
        }
    }
#endif
    g.gctx = j;
    g.b = j->w;
    g.b_u8 = j->kind == TI__TFC_U8;
    g.b_cs = kdim;
    g.b_ks = 1;
    g.b_off = j->wo;
    g.bias = j->b;
    g.rq = &j->rq;
    g.y = j->y;
    g.ydt = j->ydt;
    g.y_rs = j->o;
    g.y_cs = 1;
    if (pre != NULL)
        g.bp = pre;
    else if (pre8 == NULL)
        ti__qg_pack(&g, (int16_t *)((unsigned char *)k->scratch + off), k->tp);
#ifdef TI__QG8
    if (pre8 != NULL) {
        g.gather8 = ti__tfc_qgather8;
        g.a_off8 = j->kind == TI__TFC_U8 ? j->xo : j->xo - 128;
        ti__qg8_set(&g, pre8);
    }
#endif
    ti__qg_compute(&g, k->tp);
    return TI_OK;
}
