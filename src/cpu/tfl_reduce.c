/* TFLite reductions over an axis tensor: MEAN, SUM, REDUCE_MAX, REDUCE_MIN, REDUCE_PROD,
 * REDUCE_ANY, REDUCE_ALL (keep_dims), and ARG_MAX / ARG_MIN (output_type). Registered by the
 * table in tfl_pool.c. Each output element folds its inputs in increasing memory order, the
 * order of TFLite's optimized reducer, so float sums round identically; quantized MEAN / SUM
 * / PROD reproduce TFLite's builtin kernels bit for bit (the uint8 4-D height-width MEAN with
 * its float-derived multiplier, the general integer MEAN, the float-rescaled SUM, the
 * rescaled running PROD). Relies on core/qmath.c and the helpers at the top of tfl_pool.c. Must not
 * allocate in a run function; parallel over output elements. */

/* Reduction plan: input dims without the size-1 ones, neighbours of the same kind merged
 * (TFLite reduce_utils::ResolveAxis). Kept groups enumerate the outputs in order; reduced
 * groups are walked in memory order, the innermost one as a strided run. */
typedef struct ti__tfr_plan {
    int nk, nr;
    int64_t kd[TI_MAX_DIMS], ks[TI_MAX_DIMS]; /* kept group sizes and input strides */
    int64_t rd[TI_MAX_DIMS], rs[TI_MAX_DIMS]; /* reduced group sizes and input strides */
    size_t n_out, n_red;
    int out_rank;
    int64_t out_dims[TI_MAX_DIMS];
} ti__tfr_plan;

/* Resolves the axis input (TFLite: negative axes wrap, duplicates ignored) and builds the
 * plan and the output shape. */
TI__PRIVATE int ti__tfr_plan_make(ti__kctx *k, ti__tfr_plan *p) {
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    const ti_tensor *x = k->in[0], *ax = k->in[1];
    if (ax->dtype != TI_DTYPE_I32 && ax->dtype != TI_DTYPE_I64)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "axis has dtype %s, expected int32",
                         ti_dtype_name(ax->dtype));
    if (ax->rank > 1)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "axis has %d dims, expected 0 or 1", ax->rank);
    TI__NEED(k, ax);
    int rank = x->rank;
    int red[TI_MAX_DIMS] = {0};
    size_t na = ti__numel(ax);
    for (size_t i = 0; i < na && rank > 0; i++) {
        int64_t a = ti__get_i64(ax, i);
        if (a < -(int64_t)rank || a >= (int64_t)rank)
            return ti__kfail(k, TI_ERR_INVALID_ARGUMENT,
                             "axis %lld is out of range for an input of %d dims", (long long)a,
                             rank);
        red[a < 0 ? a + rank : a] = 1;
    }
    int keep = ti__attr_i(k->node, "keep_dims", 0) != 0;
    memset(p, 0, sizeof *p);
    p->n_out = p->n_red = 1;
    int64_t stride = 1;
    /* inner to outer, so each group's stride is that of its innermost dim */
    int prev = -1; /* kind of the group being built: 0 kept, 1 reduced */
    int64_t gk[TI_MAX_DIMS], gks[TI_MAX_DIMS], gr[TI_MAX_DIMS], grs[TI_MAX_DIMS];
    int nk = 0, nr = 0;
    for (int d = rank - 1; d >= 0; d--) {
        int64_t n = x->shape[d];
        if (red[d])
            p->n_red *= (size_t)n;
        else
            p->n_out *= (size_t)n;
        if (n != 1) {
            if (red[d]) {
                if (prev == 1)
                    gr[nr - 1] *= n;
                else {
                    gr[nr] = n;
                    grs[nr] = stride;
                    nr++;
                }
            } else {
                if (prev == 0)
                    gk[nk - 1] *= n;
                else {
                    gk[nk] = n;
                    gks[nk] = stride;
                    nk++;
                }
            }
            prev = red[d];
        }
        stride *= n;
    }
    /* store outer to inner */
    for (int i = 0; i < nk; i++) {
        p->kd[i] = gk[nk - 1 - i];
        p->ks[i] = gks[nk - 1 - i];
    }
    for (int i = 0; i < nr; i++) {
        p->rd[i] = gr[nr - 1 - i];
        p->rs[i] = grs[nr - 1 - i];
    }
    p->nk = nk;
    p->nr = nr;
    for (int d = 0; d < rank; d++) {
        if (!red[d])
            p->out_dims[p->out_rank++] = x->shape[d];
        else if (keep)
            p->out_dims[p->out_rank++] = 1;
    }
    return TI_OK;
}

/* Input offset of output element o (row-major over the kept groups). */
TI__PRIVATE size_t ti__tfr_base(const ti__tfr_plan *p, size_t o) {
    size_t off = 0;
    for (int i = p->nk - 1; i >= 0; i--) {
        off += (o % (size_t)p->kd[i]) * (size_t)p->ks[i];
        o /= (size_t)p->kd[i];
    }
    return off;
}

/* Offset of run r (all reduced groups but the innermost). */
TI__PRIVATE size_t ti__tfr_run(const ti__tfr_plan *p, size_t r) {
    size_t off = 0;
    for (int i = p->nr - 2; i >= 0; i--) {
        off += (r % (size_t)p->rd[i]) * (size_t)p->rs[i];
        r /= (size_t)p->rd[i];
    }
    return off;
}

typedef enum {
    TI__TFR_SUM,
    TI__TFR_PROD,
    TI__TFR_MAX,
    TI__TFR_MIN,
    TI__TFR_MEAN,
    TI__TFR_ANY,
    TI__TFR_ALL
} ti__tfr_kind;

static const char *const ti__tfr_names[] = {"SUM",  "REDUCE_PROD", "REDUCE_MAX", "REDUCE_MIN",
                                            "MEAN", "REDUCE_ANY",  "REDUCE_ALL"};

/* How the kind/dtype pair is computed. */
typedef enum {
    TI__TFR_FLOAT, /* float32 arithmetic */
    TI__TFR_INT,   /* raw integers, wrapping like TFLite's T arithmetic */
    TI__TFR_BOOL,
    TI__TFR_QSUM,    /* optimized QuantizedMeanOrSum(compute_sum): float rescale */
    TI__TFR_QMEAN4D, /* uint8 4-D height-width MEAN (TFLite reference_ops::Mean) */
    TI__TFR_QMEAN,   /* reference QuantizedMeanOrSum: integer rescale */
    TI__TFR_QPROD    /* QuantizedReduceProd */
} ti__tfr_mode;

TI__PRIVATE int ti__tfr_is_q(ti_dtype t) {
    return t == TI_DTYPE_U8 || t == TI_DTYPE_I8 || t == TI_DTYPE_I16;
}

TI__PRIVATE int ti__tfr_mode_of(ti__tfr_kind kind, const ti_tensor *x, ti__tfr_mode *m) {
    ti_dtype t = x->dtype;
    if (kind == TI__TFR_ANY || kind == TI__TFR_ALL) {
        *m = TI__TFR_BOOL;
        return t == TI_DTYPE_BOOL;
    }
    if (t == TI_DTYPE_F32)
        *m = TI__TFR_FLOAT;
    else if (t == TI_DTYPE_I32 || t == TI_DTYPE_I64)
        *m = TI__TFR_INT;
    else if (ti__tfr_is_q(t)) {
        if (kind == TI__TFR_SUM)
            *m = TI__TFR_QSUM;
        else if (kind == TI__TFR_MEAN)
            *m = TI__TFR_QMEAN;
        else if (kind == TI__TFR_PROD && x->quant.count > 0) {
            *m = TI__TFR_QPROD;
            return t != TI_DTYPE_U8; /* TFLite: quantized PROD is int8/int16 only */
        } else
            *m = TI__TFR_INT;
    } else
        return 0;
    return 1;
}

TI__PRIVATE int ti__tfr_reduce_shape(ti__kctx *k) {
    ti__tfr_plan p;
    int e = ti__tfr_plan_make(k, &p);
    if (e != TI_OK) return e;
    const ti_tensor *x = k->in[0];
    if (x->dtype == TI_DTYPE_BOOL) {
        const char *op = k->node->op;
        if (strcmp(op, "REDUCE_ANY") != 0 && strcmp(op, "REDUCE_ALL") != 0)
            return ti__kfail(k, TI_ERR_UNSUPPORTED, "dtype bool is not supported");
    } else if (x->dtype != TI_DTYPE_F32 && x->dtype != TI_DTYPE_I32 && x->dtype != TI_DTYPE_I64 &&
               !ti__tfr_is_q(x->dtype)) {
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "dtype %s is not supported",
                         ti_dtype_name(x->dtype));
    }
    if (!ti__set_shape(k->out[0], x->dtype, p.out_rank, p.out_dims))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid output shape");
    return TI_OK;
}

typedef struct ti__tfr_job {
    ti__tfr_plan p;
    ti__tfr_kind kind;
    ti__tfr_mode mode;
    const ti_tensor *x;
    ti_tensor *y;
    int32_t in_zp, out_zp, qlo, qhi;
    int32_t mult;
    int shift;
    int32_t bias;        /* QMEAN4D */
    size_t depth;        /* QMEAN4D: channels */
    float fscale, fbias; /* QSUM */
} ti__tfr_job;

/* TFLite MultiplyByQuantizedMultiplier for int64 x (double-rounding build): the multiplier
 * is reduced to 16 bits first. Used by the quantized PROD. */
TI__PRIVATE int32_t ti__tfr_mul64(int64_t x, int32_t qm, int shift) {
    int32_t reduced = qm < 0x7FFF0000 ? ((qm + (1 << 15)) >> 16) : 0x7FFF;
    int total = 15 - shift;
    if (total < 1) total = 1; /* TFLite requires shift < 8 */
    if (total > 62) total = 62;
    int64_t v = x * (int64_t)reduced + ((int64_t)1 << (total - 1));
    return (int32_t)(v >> total);
}

TI__PRIVATE int64_t ti__tfr_load_i(const ti_tensor *t, size_t i) {
    switch (t->dtype) {
    case TI_DTYPE_I32: return ((const int32_t *)t->data)[i];
    case TI_DTYPE_I64: return ((const int64_t *)t->data)[i];
    default: return ti__tfq_load(t->data, t->dtype, i);
    }
}

/* Stores v truncated to the dtype (two's complement wrap). */
TI__PRIVATE void ti__tfr_store_i(ti_tensor *t, size_t i, int64_t v) {
    switch (t->dtype) {
    case TI_DTYPE_I32: ((int32_t *)t->data)[i] = (int32_t)(uint32_t)(uint64_t)v; break;
    case TI_DTYPE_I64: ((int64_t *)t->data)[i] = v; break;
    case TI_DTYPE_U8: ((uint8_t *)t->data)[i] = (uint8_t)(uint64_t)v; break;
    case TI_DTYPE_I8: ((int8_t *)t->data)[i] = (int8_t)(uint8_t)(uint64_t)v; break;
    default: ((int16_t *)t->data)[i] = (int16_t)(uint16_t)(uint64_t)v; break;
    }
}

/* Outputs adjacent in the input (the innermost kept group has stride 1: the channels of an
 * NHWC MEAN or SUM) whose quantized sums one pass over the reduced positions makes, a
 * vector of outputs per position: the generic loop, an output at a time with a dtype switch
 * per element, took 2 % of a MobileNetV2 int8 run for its 1280 channels x 49 pixels. */
#define TI__TFR_QBLOCK 256

/* The sums (wrapping in 32 bits, as the generic loop) of the nb outputs from input offset
 * base on, over the plan's runs of in_n positions in_s apart; uint8 or int8 input. */
TI__PRIVATE void ti__tfr_qsums(const ti__tfr_job *j, size_t base, size_t nb, size_t runs,
                               int64_t in_n, size_t in_s, uint32_t *sums) {
    for (size_t b = 0; b < nb; b++) sums[b] = 0;
    for (size_t r = 0; r < runs; r++) {
        size_t off = base + ti__tfr_run(&j->p, r);
        for (int64_t i = 0; i < in_n; i++) {
            size_t at = off + (size_t)i * in_s;
            if (j->x->dtype == TI_DTYPE_U8) {
                const uint8_t *x = (const uint8_t *)j->x->data + at;
                for (size_t b = 0; b < nb; b++) sums[b] += x[b];
            } else {
                const int8_t *x = (const int8_t *)j->x->data + at;
                for (size_t b = 0; b < nb; b++) sums[b] += (uint32_t)(int32_t)x[b];
            }
        }
    }
}

/* Output o of the quantized sum or mean from its raw sum. */
TI__PRIVATE TI__TFL_NOFMA_FN void ti__tfr_qout(const ti__tfr_job *j, size_t o, int32_t sum) {
    TI__TFL_NOFMA
    int32_t out;
    if (j->mode == TI__TFR_QSUM) {
        float v = roundf((float)sum * j->fscale + j->fbias);
        out = (int32_t)v + j->out_zp;
    } else if (j->mode == TI__TFR_QMEAN4D) {
        /* TFLite's reference kernel (BUILTIN_REF, the oracle): the scalar
         * MultiplyByQuantizedMultiplier for every channel. (Its optimized x86 build rounds
         * channel blocks of 16 half up instead, through NEON_2_SSE.) */
        out = ti__q_mul(sum, j->mult, j->shift);
        out += j->bias;
    } else {
        int32_t shifted = (int32_t)(uint32_t)(uint64_t)((int64_t)sum -
                                                        (int64_t)j->in_zp * (int64_t)j->p.n_red);
        out = ti__q_mul(shifted, j->mult, j->shift) + j->out_zp;
    }
    ti__tfq_store(j->y->data, j->y->dtype, o, ti__tfq_clamp(out, j->qlo, j->qhi));
}

TI__PRIVATE TI__TFL_NOFMA_FN void ti__tfr_outputs(void *ctx, size_t begin, size_t end) {
    TI__TFL_NOFMA
    const ti__tfr_job *j = (const ti__tfr_job *)ctx;
    const ti__tfr_plan *p = &j->p;
    int64_t in_n = p->nr > 0 ? p->rd[p->nr - 1] : 1;
    size_t in_s = p->nr > 0 ? (size_t)p->rs[p->nr - 1] : 0;
    size_t runs = p->n_red / (size_t)in_n;
    ti__tfr_kind kind = j->kind;
    const int qblk = (j->x->dtype == TI_DTYPE_U8 || j->x->dtype == TI_DTYPE_I8) && p->nk > 0 &&
                     p->ks[p->nk - 1] == 1;
    for (size_t o = begin; o < end; o++) {
        size_t base = ti__tfr_base(p, o);
        int first = 1;
        switch (j->mode) {
        case TI__TFR_FLOAT: {
            const float *x = (const float *)j->x->data;
            float acc = 0.0f;
            for (size_t r = 0; r < runs; r++) {
                const float *xp = x + base + ti__tfr_run(p, r);
                for (int64_t i = 0; i < in_n; i++) {
                    float v = xp[(size_t)i * in_s];
                    if (first) {
                        acc = v;
                        first = 0;
                        continue;
                    }
                    switch (kind) {
                    case TI__TFR_PROD: acc *= v; break;
                    case TI__TFR_MAX: acc = acc > v ? acc : v; break;
                    case TI__TFR_MIN: acc = acc < v ? acc : v; break;
                    default: acc += v; break;
                    }
                }
            }
            if (kind == TI__TFR_MEAN) acc = acc / (float)p->n_red;
            ((float *)j->y->data)[o] = acc;
            break;
        }
        case TI__TFR_INT: {
            uint64_t acc = 0; /* sums and products wrap; max/min compare as signed */
            for (size_t r = 0; r < runs; r++) {
                size_t off = base + ti__tfr_run(p, r);
                for (int64_t i = 0; i < in_n; i++) {
                    int64_t v = ti__tfr_load_i(j->x, off + (size_t)i * in_s);
                    if (first) {
                        acc = (uint64_t)v;
                        first = 0;
                        continue;
                    }
                    switch (kind) {
                    case TI__TFR_PROD: acc *= (uint64_t)v; break;
                    case TI__TFR_MAX:
                        if (v > (int64_t)acc) acc = (uint64_t)v;
                        break;
                    case TI__TFR_MIN:
                        if (v < (int64_t)acc) acc = (uint64_t)v;
                        break;
                    default: acc += (uint64_t)v; break;
                    }
                }
            }
            int64_t r64 = (int64_t)acc;
            if (kind == TI__TFR_SUM || kind == TI__TFR_PROD) {
                /* TFLite accumulates in the dtype itself: wrap to 32 bits for int32 */
                if (j->x->dtype == TI_DTYPE_I32) r64 = (int32_t)(uint32_t)acc;
            } else if (kind == TI__TFR_MEAN) {
                if (j->x->dtype == TI_DTYPE_I64)
                    r64 = r64 / (int64_t)p->n_red;
                else
                    r64 = (int64_t)acc / (int64_t)p->n_red; /* int32 sums in int64 */
            }
            ti__tfr_store_i(j->y, o, r64);
            break;
        }
        case TI__TFR_BOOL: {
            const uint8_t *x = (const uint8_t *)j->x->data;
            int acc = kind == TI__TFR_ALL;
            for (size_t r = 0; r < runs; r++) {
                const uint8_t *xp = x + base + ti__tfr_run(p, r);
                for (int64_t i = 0; i < in_n; i++) {
                    int v = xp[(size_t)i * in_s] != 0;
                    acc = kind == TI__TFR_ALL ? (acc && v) : (acc || v);
                }
            }
            ((uint8_t *)j->y->data)[o] = (uint8_t)acc;
            break;
        }
        case TI__TFR_QPROD: {
            int32_t acc = 0;
            for (size_t r = 0; r < runs; r++) {
                size_t off = base + ti__tfr_run(p, r);
                for (int64_t i = 0; i < in_n; i++) {
                    int32_t v =
                        ti__tfq_load(j->x->data, j->x->dtype, off + (size_t)i * in_s) - j->in_zp;
                    if (first) {
                        acc = v;
                        first = 0;
                        continue;
                    }
                    acc = ti__tfr_mul64((int64_t)acc * v, j->mult, j->shift);
                }
            }
            int32_t out;
            if (p->nr == 0) /* TFLite copies when every reduced dim has size 1 */
                out = ti__tfq_load(j->x->data, j->x->dtype, base);
            else
                out = ti__tfq_clamp(ti__tfr_mul64(acc, j->mult, j->shift) + j->out_zp, j->qlo,
                                    j->qhi);
            ti__tfq_store(j->y->data, j->y->dtype, o, out);
            break;
        }
        default: { /* quantized sums: int32 accumulator of raw values */
            if (qblk) { /* a block of adjacent outputs at once (ti__tfr_qsums) */
                size_t nb = TI__MIN(end - o, (size_t)TI__TFR_QBLOCK);
                nb = TI__MIN(nb, (size_t)p->kd[p->nk - 1] - o % (size_t)p->kd[p->nk - 1]);
                uint32_t sums[TI__TFR_QBLOCK];
                ti__tfr_qsums(j, base, nb, runs, in_n, in_s, sums);
                for (size_t b = 0; b < nb; b++) ti__tfr_qout(j, o + b, (int32_t)sums[b]);
                o += nb - 1;
                break;
            }
            uint32_t acc = 0;
            for (size_t r = 0; r < runs; r++) {
                size_t off = base + ti__tfr_run(p, r);
                for (int64_t i = 0; i < in_n; i++)
                    acc += (uint32_t)ti__tfq_load(j->x->data, j->x->dtype, off + (size_t)i * in_s);
            }
            ti__tfr_qout(j, o, (int32_t)acc);
            break;
        }
        }
    }
}

/* Output of a reduction over nothing (an input dim of size 0). */
TI__PRIVATE void ti__tfr_fill_empty(const ti__tfr_job *j) {
    size_t n = ti__numel(j->y);
    for (size_t i = 0; i < n; i++) {
        switch (j->y->dtype) {
        case TI_DTYPE_F32: {
            float v = 0.0f;
            if (j->kind == TI__TFR_PROD)
                v = 1.0f;
            else if (j->kind == TI__TFR_MAX)
                v = -FLT_MAX;
            else if (j->kind == TI__TFR_MIN)
                v = FLT_MAX;
            else if (j->kind == TI__TFR_MEAN)
                v = (float)NAN;
            ((float *)j->y->data)[i] = v;
            break;
        }
        case TI_DTYPE_BOOL: ((uint8_t *)j->y->data)[i] = (uint8_t)(j->kind == TI__TFR_ALL); break;
        default: {
            int64_t v = 0;
            int32_t lo = 0, hi = 0;
            int64_t tmin = j->y->dtype == TI_DTYPE_I64 ? INT64_MIN : INT32_MIN;
            int64_t tmax = j->y->dtype == TI_DTYPE_I64 ? INT64_MAX : INT32_MAX;
            if (ti__tfq_range(j->y->dtype, &lo, &hi)) {
                tmin = lo;
                tmax = hi;
            }
            if (j->mode == TI__TFR_QSUM || j->mode == TI__TFR_QPROD)
                v = j->out_zp;
            else if (j->kind == TI__TFR_PROD)
                v = 1;
            else if (j->kind == TI__TFR_MAX)
                v = tmin;
            else if (j->kind == TI__TFR_MIN)
                v = tmax;
            ti__tfr_store_i(j->y, i, v);
            break;
        }
        }
    }
}

TI__PRIVATE TI__TFL_NOFMA_FN ti_status ti__tfr_run_kind(ti__kctx *k, ti__tfr_kind kind) {
    TI__TFL_NOFMA
    ti__tfr_job j;
    memset(&j, 0, sizeof j);
    int e = ti__tfr_plan_make(k, &j.p);
    if (e != TI_OK) return (ti_status)e;
    j.kind = kind;
    j.x = k->in[0];
    j.y = k->out[0];
    if (!ti__tfr_mode_of(kind, j.x, &j.mode))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "%s does not support %s%s", ti__tfr_names[kind],
                         j.x->quant.count > 0 ? "quantized " : "", ti_dtype_name(j.x->dtype));
    if (j.y->dtype != j.x->dtype || ti__numel(j.y) != j.p.n_out)
        return ti__kfail(k, TI_ERR_INVALID_ARGUMENT, "output does not match the planned shape");
    ti__tfq qi = ti__tfq_of(j.x), qo = ti__tfq_of(j.y);
    j.in_zp = qi.zp;
    j.out_zp = qo.zp;
    ti__tfq_range(j.x->dtype, &j.qlo, &j.qhi);
    if (j.mode == TI__TFR_INT && ti__tfr_is_q(j.x->dtype) && kind != TI__TFR_PROD &&
        (qi.scale != qo.scale || qi.zp != qo.zp))
        return ti__kfail(k, TI_ERR_UNSUPPORTED,
                         "%s needs equal input and output quantization (scale %g zero point "
                         "%d vs %g, %d)",
                         ti__tfr_names[kind], (double)qi.scale, (int)qi.zp, (double)qo.scale,
                         (int)qo.zp);
    if (j.x->dtype == TI_DTYPE_I16 &&
        (j.mode == TI__TFR_QSUM || j.mode == TI__TFR_QMEAN || j.mode == TI__TFR_QPROD) &&
        (qi.zp != 0 || qo.zp != 0))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "int16 %s needs zero points 0 (got %d, %d)",
                         ti__tfr_names[kind], (int)qi.zp, (int)qo.zp);
    if (j.p.n_out == 0) return TI_OK;
    if (j.p.n_red == 0) {
        ti__tfr_fill_empty(&j);
        return TI_OK;
    }
    if (j.mode == TI__TFR_QSUM) {
        /* optimized QuantizedMeanOrSum: scale and bias in float */
        j.fscale = qi.scale / qo.scale;
        j.fbias = (float)(-qi.zp) * j.fscale * (float)j.p.n_red;
    } else if (j.mode == TI__TFR_QMEAN) {
        const ti_tensor *x = j.x;
        int four_d = 0;
        if (ti__attr_i(k->node, "keep_dims", 0) != 0 && x->rank == 4 && x->dtype == TI_DTYPE_U8) {
            /* TFLite's reference uint8 4-D path: exactly the axes {1, 2} (after wrapping and
             * dedup). Its int8 and int16 4-D path (reference_integer_ops::Mean) subtracts the
             * input zero point before one rescale, as the general path here does: through
             * the uint8 arithmetic (two roundings), 46-62 of the 1280 int8 MEAN outputs of
             * tf2_mobilenet_v2_1.0_224_ptq were 1 above BUILTIN_REF's, now none. */
            int seen[4] = {0, 0, 0, 0}, n = 0;
            for (size_t i = 0; i < ti__numel(k->in[1]); i++) {
                int64_t a = ti__get_i64(k->in[1], i);
                a = a < 0 ? a + 4 : a;
                if (!seen[a]) {
                    seen[a] = 1;
                    n++;
                }
            }
            four_d = n == 2 && seen[1] && seen[2];
        }
        if (four_d) {
            j.mode = TI__TFR_QMEAN4D;
            j.depth = (size_t)x->shape[3];
            float temp = (float)qi.zp * qi.scale / qo.scale;
            temp = temp > 0 ? temp + 0.5f : temp - 0.5f;
            j.bias = qo.zp - (int32_t)temp;
            float count = (float)(int32_t)(x->shape[1] * x->shape[2]);
            float real = qi.scale / (count * qo.scale);
            ti__q_quantize_multiplier((double)real, &j.mult, &j.shift);
        } else {
            ti__q_quantize_multiplier((double)qi.scale / (double)qo.scale, &j.mult, &j.shift);
            /* fold 1/n into the multiplier (reference QuantizedMeanOrSum) */
            int sh = 0;
            for (uint64_t n = (uint64_t)j.p.n_red; n > 1; n >>= 1) sh++;
            sh = TI__MIN(sh, 32);
            sh = TI__MIN(sh, 31 + j.shift);
            if (sh < 0) sh = 0;
            j.mult = (int32_t)(((int64_t)j.mult << sh) / (int64_t)j.p.n_red);
            j.shift -= sh;
        }
    } else if (j.mode == TI__TFR_QPROD) {
        size_t n_in = ti__numel(j.x);
        int64_t red = (int64_t)(n_in / j.p.n_out);
        double scaling = (double)qi.scale / pow((double)qo.scale, 1.0 / (double)red);
        ti__q_quantize_multiplier(scaling, &j.mult, &j.shift);
    }
    size_t grain = TI__MAX((size_t)1, (size_t)16384 / (j.p.n_red + 1));
    ti__parallel_for(k->tp, j.p.n_out, grain, ti__tfr_outputs, &j);
    return TI_OK;
}

TI__PRIVATE ti_status ti__tfr_mean_run(ti__kctx *k) {
    return ti__tfr_run_kind(k, TI__TFR_MEAN);
}
TI__PRIVATE ti_status ti__tfr_sum_run(ti__kctx *k) {
    return ti__tfr_run_kind(k, TI__TFR_SUM);
}
TI__PRIVATE ti_status ti__tfr_max_run(ti__kctx *k) {
    return ti__tfr_run_kind(k, TI__TFR_MAX);
}
TI__PRIVATE ti_status ti__tfr_min_run(ti__kctx *k) {
    return ti__tfr_run_kind(k, TI__TFR_MIN);
}
TI__PRIVATE ti_status ti__tfr_prod_run(ti__kctx *k) {
    return ti__tfr_run_kind(k, TI__TFR_PROD);
}
TI__PRIVATE ti_status ti__tfr_any_run(ti__kctx *k) {
    return ti__tfr_run_kind(k, TI__TFR_ANY);
}
TI__PRIVATE ti_status ti__tfr_all_run(ti__kctx *k) {
    return ti__tfr_run_kind(k, TI__TFR_ALL);
}

/* ---- ARG_MAX / ARG_MIN ------------------------------------------------------------------ */

TI__PRIVATE int ti__tfr_arg_axis(ti__kctx *k, int *axis) {
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    const ti_tensor *x = k->in[0], *ax = k->in[1];
    if (x->rank < 1) return ti__kfail(k, TI_ERR_BAD_MODEL, "input must have at least 1 dim");
    if ((ax->dtype != TI_DTYPE_I32 && ax->dtype != TI_DTYPE_I64) || ti__numel(ax) != 1)
        return ti__kfail(k, TI_ERR_BAD_MODEL,
                         "axis must be one int32 or int64 value (got %s "
                         "with %zu values)",
                         ti_dtype_name(ax->dtype), ti__numel(ax));
    TI__NEED(k, ax);
    int64_t a = ti__get_i64(ax, 0);
    if (a < -(int64_t)x->rank || a >= (int64_t)x->rank)
        return ti__kfail(k, TI_ERR_INVALID_ARGUMENT, "axis %lld is out of range for %d dims",
                         (long long)a, x->rank);
    *axis = (int)(a < 0 ? a + x->rank : a);
    if (x->shape[*axis] <= 0)
        return ti__kfail(k, TI_ERR_INVALID_ARGUMENT,
                         "cannot take the arg min/max over an "
                         "empty axis %d",
                         *axis);
    return TI_OK;
}

TI__PRIVATE int ti__tfr_argminmax_shape(ti__kctx *k) {
    int axis;
    int e = ti__tfr_arg_axis(k, &axis);
    if (e != TI_OK) return e;
    const ti_tensor *x = k->in[0];
    ti_dtype t = x->dtype;
    if (t != TI_DTYPE_F32 && t != TI_DTYPE_U8 && t != TI_DTYPE_I8 && t != TI_DTYPE_I16 &&
        t != TI_DTYPE_I32 && t != TI_DTYPE_I64 && t != TI_DTYPE_BOOL)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "dtype %s is not supported", ti_dtype_name(t));
    /* output_type is a TensorType: INT32 = 2, INT64 = 4 */
    const ti__attr *ot = ti__attr_get(k->node, "output_type");
    ti_dtype odt;
    if (ot == NULL)
        odt = ti__tfl_declared_dtype(k, 0, TI_DTYPE_UNKNOWN);
    else
        odt = ot->i == 2 ? TI_DTYPE_I32 : (ot->i == 4 ? TI_DTYPE_I64 : TI_DTYPE_UNKNOWN);
    if (odt != TI_DTYPE_I32 && odt != TI_DTYPE_I64)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "output_type %lld is not INT32 (2) or INT64 (4)",
                         ot != NULL ? (long long)ot->i : -1LL);
    int64_t dims[TI_MAX_DIMS];
    int r = 0;
    for (int d = 0; d < x->rank; d++)
        if (d != axis) dims[r++] = x->shape[d];
    if (!ti__set_shape(k->out[0], odt, r, dims))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid output shape");
    return TI_OK;
}

typedef struct ti__tfr_arg_job {
    const ti_tensor *x;
    ti_tensor *y;
    size_t n, inner;
    int is_max;
} ti__tfr_arg_job;

/* Outputs [begin, end) of [outer * inner]: the first index of the max (min) along the axis. */
TI__PRIVATE void ti__tfr_arg_range(void *ctx, size_t begin, size_t end) {
    const ti__tfr_arg_job *j = (const ti__tfr_arg_job *)ctx;
    const ti_tensor *x = j->x;
    size_t n = j->n, inner = j->inner;
    int is_max = j->is_max;
    for (size_t oi = begin; oi < end; oi++) {
        size_t base = (oi / inner) * n * inner + oi % inner, best = 0;
        if (x->dtype == TI_DTYPE_F32) {
            /* NaN never wins; a number replaces a NaN (TFLite's NaN-aware compare) */
            const float *p = (const float *)x->data + base;
            float bv = p[0];
            for (size_t a = 1; a < n; a++) {
                float v = p[a * inner];
                if (v != v) continue;
                if (bv != bv || (is_max ? v > bv : v < bv)) {
                    bv = v;
                    best = a;
                }
            }
        } else if (x->dtype == TI_DTYPE_BOOL) {
            const uint8_t *p = (const uint8_t *)x->data + base;
            int bv = p[0] != 0;
            for (size_t a = 1; a < n; a++) {
                int v = p[a * inner] != 0;
                if (is_max ? v > bv : v < bv) {
                    bv = v;
                    best = a;
                }
            }
        } else {
            int64_t bv = ti__tfr_load_i(x, base);
            for (size_t a = 1; a < n; a++) {
                int64_t v = ti__tfr_load_i(x, base + a * inner);
                if (is_max ? v > bv : v < bv) {
                    bv = v;
                    best = a;
                }
            }
        }
        if (j->y->dtype == TI_DTYPE_I32)
            ((int32_t *)j->y->data)[oi] = (int32_t)best;
        else
            ((int64_t *)j->y->data)[oi] = (int64_t)best;
    }
}

TI__PRIVATE ti_status ti__tfr_argminmax_run(ti__kctx *k, int is_max) {
    int axis;
    int e = ti__tfr_arg_axis(k, &axis);
    if (e != TI_OK) return (ti_status)e;
    ti__tfr_arg_job j;
    j.x = k->in[0];
    j.y = k->out[0];
    j.is_max = is_max;
    j.n = (size_t)j.x->shape[axis];
    j.inner = 1;
    size_t outer = 1;
    for (int d = 0; d < axis; d++) outer *= (size_t)j.x->shape[d];
    for (int d = axis + 1; d < j.x->rank; d++) j.inner *= (size_t)j.x->shape[d];
    if (ti__numel(j.y) != outer * j.inner ||
        (j.y->dtype != TI_DTYPE_I32 && j.y->dtype != TI_DTYPE_I64))
        return ti__kfail(k, TI_ERR_INVALID_ARGUMENT, "output does not match the planned shape");
    if (outer * j.inner == 0) return TI_OK;
    ti__parallel_for(k->tp, outer * j.inner, TI__MAX((size_t)1, 16384 / j.n), ti__tfr_arg_range,
                     &j);
    return TI_OK;
}
TI__PRIVATE ti_status ti__tfr_argmax_run(ti__kctx *k) {
    return ti__tfr_argminmax_run(k, 1);
}
TI__PRIVATE ti_status ti__tfr_argmin_run(ti__kctx *k) {
    return ti__tfr_argminmax_run(k, 0);
}
