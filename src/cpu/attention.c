/* Attention (ONNX opset 23-25: MHA/GQA/MQA, masks, causal and sliding-window masking, softcap,
 * KV cache with past/present, nonpad_kv_seqlen, qk_matmul_output, softmax_precision) and
 * RotaryEmbedding (opset 23). Reference kernels for float32/float64/float16/bfloat16 that
 * compute in double and round to the tensor type at the same points as the ONNX reference
 * (scaled Q and K, QK, softcap, bias add, softmax, output), so low-precision results match.
 * Relies on internal.h, core/tensor.c and the thread pool. Must not allocate in a run
 * function: per (batch, head) rows of scores live in the scratch memory the op asks for. */

/* ---- shared helpers ------------------------------------------------------------------ */

/* v rounded to the precision of float dtype dt (double stays exact). */
TI__PRIVATE double ti__attn_rnd(ti_dtype dt, double v) {
    switch (dt) {
    case TI_DTYPE_F32: return (double)(float)v;
    case TI_DTYPE_F16: return ti__f16_to_f32(ti__f32_to_f16((float)v));
    case TI_DTYPE_BF16: return ti__bf16_to_f32(ti__f32_to_bf16((float)v));
    default: return v;
    }
}

/* Element i of float data p of dtype dt. */
TI__PRIVATE double ti__attn_ld(ti_dtype dt, const void *p, size_t i) {
    switch (dt) {
    case TI_DTYPE_F32: return ((const float *)p)[i];
    case TI_DTYPE_F64: return ((const double *)p)[i];
    case TI_DTYPE_F16: return ti__f16_to_f32(((const uint16_t *)p)[i]);
    case TI_DTYPE_BF16: return ti__bf16_to_f32(((const uint16_t *)p)[i]);
    default: return 0.0;
    }
}

/* ---- Attention ----------------------------------------------------------------------- */
/* Inputs: Q, K, V, attn_mask, past_key, past_value, nonpad_kv_seqlen.
 * Outputs: Y, present_key, present_value, qk_matmul_output.
 * Inner layout: Q [b, hq, sq, dk], K [b, hkv, t, dk], V [b, hkv, t, dv] with t = p + skv
 * (past rows first); 3-D inputs are read in place as [b, s, heads * d]. Query head h uses
 * KV head h / (hq / hkv), the interleaved repeat of the spec. */

typedef struct ti__attn {
    const ti_tensor *q, *k, *v, *mask, *pk, *pv, *nonpad;
    ti_tensor *y, *pres_k, *pres_v, *qk;
    int rank; /* 3 or 4, the same for Q, K and V */
    int64_t b, hq, hkv, sq, skv, p, t, dk, dv;
    ti_dtype t1;       /* Q's dtype: Y, qk_matmul_output and the intermediate precision */
    ti_dtype sm;       /* softmax precision */
    double scale_sqrt; /* sqrt(scale) rounded to T1: Q and K are each scaled by it */
    double softcap;    /* <= 0: none */
    int causal, mode;
    int64_t left, right; /* window bounds, -1: unbounded */
    int64_t mstr[4];     /* mask strides over (b, h, i, j) in elements, 0 where broadcast */
    int64_t mlast;       /* mask's last dim; keys at or past it are masked (-inf padding) */
    size_t row_doubles;  /* scratch per (batch, head) task */
    double *scratch;
} ti__attn;

TI__PRIVATE int ti__attn_setup(ti__kctx *k, ti__attn *a, int set_outputs) {
    memset(a, 0, sizeof *a);
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    TI__REQUIRE_INPUT(k, 2);
    a->q = k->in[0];
    a->k = k->in[1];
    a->v = k->in[2];
    a->mask = k->n_in > 3 ? k->in[3] : NULL;
    a->pk = k->n_in > 4 ? k->in[4] : NULL;
    a->pv = k->n_in > 5 ? k->in[5] : NULL;
    a->nonpad = k->n_in > 6 ? k->in[6] : NULL;
    a->y = k->n_out > 0 ? k->out[0] : NULL;
    a->pres_k = k->n_out > 1 ? k->out[1] : NULL;
    a->pres_v = k->n_out > 2 ? k->out[2] : NULL;
    a->qk = k->n_out > 3 ? k->out[3] : NULL;
    const ti_tensor *q = a->q, *kk = a->k, *v = a->v;
    const ti__node *n = k->node;
    if (!ti__dtype_is_float(q->dtype) || !ti__dtype_is_float(kk->dtype) ||
        !ti__dtype_is_float(v->dtype))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "Q/K/V dtypes %s/%s/%s: float types only",
                         ti_dtype_name(q->dtype), ti_dtype_name(kk->dtype),
                         ti_dtype_name(v->dtype));
    if (kk->dtype != q->dtype)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "K dtype %s differs from Q dtype %s",
                         ti_dtype_name(kk->dtype), ti_dtype_name(q->dtype));
    a->t1 = q->dtype;
    a->rank = q->rank;
    if ((q->rank != 3 && q->rank != 4) || kk->rank != q->rank || v->rank != q->rank)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "Q, K, V ranks are %d, %d, %d: expected all 3 or all 4",
                         q->rank, kk->rank, v->rank);
    a->b = q->shape[0];
    if (kk->shape[0] != a->b || v->shape[0] != a->b)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "batch sizes differ: Q %lld, K %lld, V %lld",
                         (long long)a->b, (long long)kk->shape[0], (long long)v->shape[0]);
    int64_t qh_attr = ti__attr_i(n, "q_num_heads", 0), kvh_attr = ti__attr_i(n, "kv_num_heads", 0);
    if (q->rank == 3) {
        if (qh_attr <= 0 || kvh_attr <= 0)
            return ti__kfail(k, TI_ERR_BAD_MODEL,
                             "3-D inputs need q_num_heads and kv_num_heads > 0 (got %lld, %lld)",
                             (long long)qh_attr, (long long)kvh_attr);
        a->hq = qh_attr;
        a->hkv = kvh_attr;
        if (q->shape[2] % a->hq != 0 || kk->shape[2] % a->hkv != 0 || v->shape[2] % a->hkv != 0)
            return ti__kfail(k, TI_ERR_BAD_MODEL,
                             "hidden sizes Q %lld, K %lld, V %lld are not multiples of the head "
                             "counts %lld (Q) and %lld (KV)",
                             (long long)q->shape[2], (long long)kk->shape[2],
                             (long long)v->shape[2], (long long)a->hq, (long long)a->hkv);
        a->sq = q->shape[1];
        a->skv = kk->shape[1];
        a->dk = q->shape[2] / a->hq;
        if (kk->shape[2] / a->hkv != a->dk)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "K head size %lld differs from Q head size %lld",
                             (long long)(kk->shape[2] / a->hkv), (long long)a->dk);
        a->dv = v->shape[2] / a->hkv;
        if (v->shape[1] != a->skv)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "K has %lld positions, V has %lld",
                             (long long)a->skv, (long long)v->shape[1]);
    } else {
        a->hq = q->shape[1];
        a->hkv = kk->shape[1];
        a->sq = q->shape[2];
        a->skv = kk->shape[2];
        a->dk = q->shape[3];
        a->dv = v->shape[3];
        if ((qh_attr > 0 && qh_attr != a->hq) || (kvh_attr > 0 && kvh_attr != a->hkv))
            return ti__kfail(k, TI_ERR_BAD_MODEL,
                             "q_num_heads %lld / kv_num_heads %lld disagree with 4-D shapes "
                             "(%lld / %lld heads)",
                             (long long)qh_attr, (long long)kvh_attr, (long long)a->hq,
                             (long long)a->hkv);
        if (kk->shape[3] != a->dk)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "K head size %lld differs from Q head size %lld",
                             (long long)kk->shape[3], (long long)a->dk);
        if (v->shape[1] != a->hkv || v->shape[2] != a->skv)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "V shape does not match K (heads %lld, length %lld)",
                             (long long)a->hkv, (long long)a->skv);
    }
    if (a->hkv <= 0 || a->hq % a->hkv != 0)
        return ti__kfail(k, TI_ERR_BAD_MODEL,
                         "q heads (%lld) must be a multiple of kv heads (%lld)", (long long)a->hq,
                         (long long)a->hkv);
    if ((a->pk == NULL) != (a->pv == NULL))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "past_key and past_value must be given together");
    if (a->pk != NULL) {
        const ti_tensor *pk = a->pk, *pv = a->pv;
        if (pk->dtype != kk->dtype || pv->dtype != v->dtype)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "past_key/past_value dtypes differ from K/V");
        if (pk->rank != 4 || pk->shape[0] != a->b || pk->shape[1] != a->hkv ||
            pk->shape[3] != a->dk)
            return ti__kfail(k, TI_ERR_BAD_MODEL,
                             "past_key must have shape [%lld, %lld, P, %lld]", (long long)a->b,
                             (long long)a->hkv, (long long)a->dk);
        a->p = pk->shape[2];
        if (pv->rank != 4 || pv->shape[0] != a->b || pv->shape[1] != a->hkv ||
            pv->shape[2] != a->p || pv->shape[3] != a->dv)
            return ti__kfail(k, TI_ERR_BAD_MODEL,
                             "past_value must have shape [%lld, %lld, %lld, %lld]", (long long)a->b,
                             (long long)a->hkv, (long long)a->p, (long long)a->dv);
    }
    a->t = a->p + a->skv;
    if (a->nonpad != NULL) {
        if (a->nonpad->dtype != TI_DTYPE_I64 || a->nonpad->rank != 1 ||
            a->nonpad->shape[0] != a->b)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "nonpad_kv_seqlen must be int64 [%lld]",
                             (long long)a->b);
        if (a->pk != NULL)
            return ti__kfail(k, TI_ERR_BAD_MODEL,
                             "nonpad_kv_seqlen cannot be combined with past_key/past_value");
    }
    if (a->mask != NULL) {
        const ti_tensor *m = a->mask;
        if (m->dtype != TI_DTYPE_BOOL && !ti__dtype_is_float(m->dtype))
            return ti__kfail(k, TI_ERR_UNSUPPORTED, "attn_mask dtype %s: bool or float only",
                             ti_dtype_name(m->dtype));
        if (m->rank < 1 || m->rank > 4)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "attn_mask has rank %d, expected 1 to 4", m->rank);
        int64_t full[4], str[TI_MAX_DIMS];
        full[0] = a->b;
        full[1] = a->hq;
        full[2] = a->sq;
        full[3] = a->t;
        ti__strides(m->rank, m->shape, str);
        for (int ax = 0; ax < 4; ax++) {
            int md = ax - (4 - m->rank);
            a->mstr[ax] = 0;
            if (md < 0) continue;
            int64_t d = m->shape[md];
            if (ax == 3) {
                /* a shorter key axis is padded with -inf (False), never broadcast */
                if (d > a->t)
                    return ti__kfail(k, TI_ERR_BAD_MODEL,
                                     "attn_mask's last dim %lld exceeds the %lld keys",
                                     (long long)d, (long long)a->t);
                a->mlast = d;
                a->mstr[ax] = str[md];
            } else if (d == full[ax]) {
                a->mstr[ax] = d == 1 ? 0 : str[md];
            } else if (d != 1) {
                return ti__kfail(k, TI_ERR_BAD_MODEL,
                                 "attn_mask dim %d is %lld, not broadcastable to %lld", md,
                                 (long long)d, (long long)full[ax]);
            }
        }
    }
    a->scale_sqrt = 0.0;
    const ti__attr *sc = ti__attr_get(n, "scale");
    double scale = sc != NULL ? (double)sc->f : 1.0 / sqrt((double)(a->dk > 0 ? a->dk : 1));
    a->scale_sqrt = ti__attn_rnd(a->t1, sqrt(scale));
    a->softcap = ti__attn_rnd(a->t1, (double)ti__attr_f(n, "softcap", 0.0f));
    a->causal = ti__attr_i(n, "is_causal", 0) != 0;
    int64_t mode = ti__attr_i(n, "qk_matmul_output_mode", 0);
    if (mode < 0 || mode > 3)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "qk_matmul_output_mode %lld is not 0..3",
                         (long long)mode);
    a->mode = (int)mode;
    a->left = ti__attr_i(n, "left_window_size", -1);
    a->right = ti__attr_i(n, "right_window_size", -1);
    if (a->left < -1 || a->right < -1)
        return ti__kfail(k, TI_ERR_BAD_MODEL,
                         "left/right_window_size %lld/%lld: expected -1 or nonnegative",
                         (long long)a->left, (long long)a->right);
    a->sm = a->t1;
    if (ti__attr_get(n, "softmax_precision") != NULL) {
        int64_t sp = ti__attr_i(n, "softmax_precision", 1);
        switch (sp) {
        case 1: a->sm = TI_DTYPE_F32; break;
        case 10: a->sm = TI_DTYPE_F16; break;
        case 11: a->sm = TI_DTYPE_F64; break;
        case 16: a->sm = TI_DTYPE_BF16; break;
        default:
            return ti__kfail(k, TI_ERR_UNSUPPORTED,
                             "softmax_precision %lld: expected 1, 10, 11 or 16", (long long)sp);
        }
    }
    a->row_doubles = (size_t)(a->dk + a->t + a->dv);
    if (!set_outputs) return TI_OK;
    int64_t d[4];
    if (a->y != NULL) {
        int ok;
        if (a->rank == 4) {
            d[0] = a->b, d[1] = a->hq, d[2] = a->sq, d[3] = a->dv;
            ok = ti__set_shape(a->y, a->t1, 4, d);
        } else {
            d[0] = a->b, d[1] = a->sq, d[2] = a->hq * a->dv;
            ok = ti__set_shape(a->y, a->t1, 3, d);
        }
        if (!ok) return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid Y shape");
    }
    d[0] = a->b, d[1] = a->hkv, d[2] = a->t, d[3] = a->dk;
    if (a->pres_k != NULL && !ti__set_shape(a->pres_k, kk->dtype, 4, d))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid present_key shape");
    d[3] = a->dv;
    if (a->pres_v != NULL && !ti__set_shape(a->pres_v, v->dtype, 4, d))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid present_value shape");
    d[1] = a->hq, d[2] = a->sq, d[3] = a->t;
    if (a->qk != NULL && !ti__set_shape(a->qk, a->t1, 4, d))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid qk_matmul_output shape");
    return TI_OK;
}

TI__PRIVATE int ti__attn_shape(ti__kctx *k) {
    ti__attn a;
    return ti__attn_setup(k, &a, 1);
}

TI__PRIVATE size_t ti__attn_scratch(ti__kctx *k) {
    ti__attn a;
    if (ti__attn_setup(k, &a, 0) != TI_OK) return 0;
    size_t n;
    if (!ti__mul_size((size_t)(a.b * a.hq), a.row_doubles, &n) ||
        !ti__mul_size(n, sizeof(double), &n))
        return 0;
    return n;
}

/* Element offset of row (b, head, pos) of a Q/K/V-like input (row = head_size elements). */
TI__PRIVATE size_t ti__attn_row(int rank, int64_t b, int64_t heads, int64_t seq, int64_t hs,
                                int64_t head, int64_t pos) {
    if (rank == 4) return (size_t)(((b * heads + head) * seq + pos) * hs);
    return (size_t)((b * seq + pos) * heads * hs + head * hs);
}

/* K or V row of key position j (0 <= j < t): the past cache first, then the new rows. */
TI__PRIVATE const void *ti__attn_kv_row(const ti__attn *a, int is_v, int64_t b, int64_t g,
                                        int64_t j, size_t *off) {
    int64_t hs = is_v ? a->dv : a->dk;
    if (j < a->p) {
        *off = (size_t)(((b * a->hkv + g) * a->p + j) * hs);
        return is_v ? a->pv->data : a->pk->data;
    }
    *off = ti__attn_row(a->rank, b, a->hkv, a->skv, hs, g, j - a->p);
    return is_v ? a->v->data : a->k->data;
}

/* One (batch, query head): every query row, its scores, softmax and output. */
TI__PRIVATE void ti__attn_task(const ti__attn *a, int64_t b, int64_t h, double *buf) {
    double *qs = buf, *sc = buf + a->dk, *acc = sc + a->t;
    const int64_t g = h / (a->hq / a->hkv);
    const ti_dtype t1 = a->t1, sm = a->sm, kdt = a->k->dtype, vdt = a->v->dtype;
    const double s = a->scale_sqrt, cap = a->softcap, ninf = -HUGE_VAL;
    int64_t off = a->p; /* keys before this query block: past cache or external cache */
    if (a->nonpad != NULL) off = ((const int64_t *)a->nonpad->data)[b] - a->sq;
    int64_t valid = a->t;
    if (a->nonpad != NULL) valid = ((const int64_t *)a->nonpad->data)[b];
    for (int64_t i = 0; i < a->sq; i++) {
        size_t qo = ti__attn_row(a->rank, b, a->hq, a->sq, a->dk, h, i);
        for (int64_t d = 0; d < a->dk; d++)
            qs[d] = ti__attn_rnd(t1, ti__attn_ld(t1, a->q->data, qo + (size_t)d) * s);
        size_t qk_off = (size_t)(((b * a->hq + h) * a->sq + i) * a->t);
        size_t moff = 0;
        if (a->mask != NULL)
            moff = (size_t)(b * a->mstr[0] + h * a->mstr[1] + i * a->mstr[2]);
        int all_masked = 1, has_nan = 0;
        double mx = ninf;
        for (int64_t j = 0; j < a->t; j++) {
            size_t ko;
            const void *kd = ti__attn_kv_row(a, 0, b, g, j, &ko);
            double dot = 0.0;
            for (int64_t d = 0; d < a->dk; d++)
                dot += qs[d] * ti__attn_rnd(t1, ti__attn_ld(kdt, kd, ko + (size_t)d) * s);
            double x = ti__attn_rnd(t1, dot);
            if (a->qk != NULL && a->mode == 0) ti__set_f64(a->qk, qk_off + (size_t)j, x);
            if (cap > 0.0)
                x = ti__attn_rnd(t1, ti__attn_rnd(t1, tanh(ti__attn_rnd(t1, x / cap))) * cap);
            if (a->qk != NULL && a->mode == 1) ti__set_f64(a->qk, qk_off + (size_t)j, x);
            /* additive bias: mask (bool -> 0 / -inf, padded with -inf), causal frontier
             * j <= i + off, sliding window around i + off, and the nonpad key count */
            double bias = 0.0;
            if (a->mask != NULL) {
                if (j >= a->mlast) bias = ninf;
                else {
                    size_t mi = moff + (size_t)(j * a->mstr[3]);
                    if (a->mask->dtype == TI_DTYPE_BOOL)
                        bias = ((const uint8_t *)a->mask->data)[mi] ? 0.0 : ninf;
                    else bias = ti__attn_ld(a->mask->dtype, a->mask->data, mi);
                }
            }
            int64_t diff = i + off - j;
            if (a->causal && diff < 0) bias += ninf;
            if (a->left >= 0 && diff > a->left) bias += ninf;
            if (a->right >= 0 && -diff > a->right) bias += ninf;
            if (j >= valid) bias += ninf;
            if (!(bias == ninf)) all_masked = 0;
            x = ti__attn_rnd(t1, x + bias);
            if (a->qk != NULL && a->mode == 2) ti__set_f64(a->qk, qk_off + (size_t)j, x);
            x = ti__attn_rnd(sm, x);
            if (x != x) has_nan = 1;
            else if (x > mx) mx = x;
            sc[j] = x;
        }
        /* softmax in precision sm; a row whose bias is -inf everywhere gives zeros */
        if (all_masked) {
            for (int64_t j = 0; j < a->t; j++) sc[j] = 0.0;
        } else if (has_nan) {
            for (int64_t j = 0; j < a->t; j++) sc[j] = NAN;
        } else {
            double m = mx == ninf ? 0.0 : mx, sum = 0.0;
            for (int64_t j = 0; j < a->t; j++) {
                sc[j] = ti__attn_rnd(sm, exp(ti__attn_rnd(sm, sc[j] - m)));
                sum += sc[j];
            }
            sum = ti__attn_rnd(sm, sum);
            if (sum == 0.0) sum = 1.0;
            for (int64_t j = 0; j < a->t; j++)
                sc[j] = ti__attn_rnd(t1, ti__attn_rnd(sm, sc[j] / sum));
        }
        if (a->qk != NULL && a->mode == 3)
            for (int64_t j = 0; j < a->t; j++) ti__set_f64(a->qk, qk_off + (size_t)j, sc[j]);
        if (a->y == NULL) continue;
        for (int64_t d = 0; d < a->dv; d++) acc[d] = 0.0;
        for (int64_t j = 0; j < a->t; j++) {
            size_t vo;
            const void *vd = ti__attn_kv_row(a, 1, b, g, j, &vo);
            double pj = sc[j];
            for (int64_t d = 0; d < a->dv; d++) acc[d] += pj * ti__attn_ld(vdt, vd, vo + (size_t)d);
        }
        size_t yo = ti__attn_row(a->rank, b, a->hq, a->sq, a->dv, h, i);
        for (int64_t d = 0; d < a->dv; d++) ti__set_f64(a->y, yo + (size_t)d, acc[d]);
    }
}

TI__PRIVATE void ti__attn_range(void *ctx, size_t begin, size_t end) {
    const ti__attn *a = (const ti__attn *)ctx;
    for (size_t t = begin; t < end; t++)
        ti__attn_task(a, (int64_t)t / a->hq, (int64_t)t % a->hq, a->scratch + t * a->row_doubles);
}

/* present = concat(past, new) along the sequence axis, always [b, hkv, t, hs]. */
TI__PRIVATE void ti__attn_present(const ti__attn *a, int is_v, ti_tensor *out) {
    size_t es = ti_dtype_size(out->dtype);
    int64_t hs = is_v ? a->dv : a->dk;
    size_t row_bytes = (size_t)hs * es;
    unsigned char *dst = (unsigned char *)out->data;
    for (int64_t b = 0; b < a->b; b++)
        for (int64_t g = 0; g < a->hkv; g++)
            for (int64_t j = 0; j < a->t; j++) {
                size_t off;
                const unsigned char *src = (const unsigned char *)ti__attn_kv_row(a, is_v, b, g, j, &off);
                memcpy(dst, src + off * es, row_bytes);
                dst += row_bytes;
            }
}

TI__PRIVATE ti_status ti__attn_run(ti__kctx *k) {
    ti__attn a;
    int r = ti__attn_setup(k, &a, 0);
    if (r != TI_OK) return (ti_status)r;
    size_t tasks = (size_t)(a.b * a.hq);
    size_t need = tasks * a.row_doubles * sizeof(double);
    if (need > 0 && (k->scratch == NULL || k->scratch_bytes < need))
        return ti__kfail(k, TI_ERR_INVALID_ARGUMENT, "scratch of %zu bytes is too small (%zu)",
                         k->scratch_bytes, need);
    a.scratch = (double *)k->scratch;
    if (a.pres_k != NULL) ti__attn_present(&a, 0, a.pres_k);
    if (a.pres_v != NULL) ti__attn_present(&a, 1, a.pres_v);
    if (a.y == NULL && a.qk == NULL) return TI_OK;
    size_t work = (size_t)(a.sq * a.t * (a.dk + a.dv));
    ti__parallel_for(k->tp, tasks, work > 4096 ? 1 : tasks, ti__attn_range, &a);
    return TI_OK;
}

/* ---- RotaryEmbedding ----------------------------------------------------------------- */
/* Inputs: X [b, h, s, d] or [b, s, h * d] (num_heads attribute), cos_cache and sin_cache
 * ([max_pos, rd / 2] indexed by position_ids [b, s], or [b, s, rd / 2] without them).
 * The first rd values of each head are rotated as pairs (x[k], x[k + rd/2]), or
 * (x[2k], x[2k+1]) when interleaved; the rest are copied. */

typedef struct ti__rope {
    const ti_tensor *x, *cosc, *sinc, *pos;
    int64_t b, h, s, d, rd;
    int interleaved;
} ti__rope;

TI__PRIVATE int ti__rope_setup(ti__kctx *k, ti__rope *r) {
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    TI__REQUIRE_INPUT(k, 2);
    r->x = k->in[0];
    r->cosc = k->in[1];
    r->sinc = k->in[2];
    r->pos = k->n_in > 3 ? k->in[3] : NULL;
    const ti_tensor *x = r->x;
    if (!ti__dtype_is_float(x->dtype))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "input dtype %s: float types only",
                         ti_dtype_name(x->dtype));
    if (r->cosc->dtype != x->dtype || r->sinc->dtype != x->dtype)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "cos_cache/sin_cache dtypes differ from the input");
    r->b = x->shape[0];
    if (x->rank == 4) {
        r->h = x->shape[1];
        r->s = x->shape[2];
        r->d = x->shape[3];
    } else if (x->rank == 3) {
        int64_t nh = ti__attr_i(k->node, "num_heads", 0);
        if (nh <= 0 || x->shape[2] % nh != 0)
            return ti__kfail(k, TI_ERR_BAD_MODEL,
                             "3-D input needs num_heads > 0 dividing hidden size %lld (got %lld)",
                             (long long)x->shape[2], (long long)nh);
        r->h = nh;
        r->s = x->shape[1];
        r->d = x->shape[2] / nh;
    } else {
        return ti__kfail(k, TI_ERR_BAD_MODEL, "input has rank %d, expected 3 or 4", x->rank);
    }
    r->rd = ti__attr_i(k->node, "rotary_embedding_dim", 0);
    if (r->rd == 0) r->rd = r->d;
    if (r->rd < 0 || r->rd > r->d || r->rd % 2 != 0)
        return ti__kfail(k, TI_ERR_BAD_MODEL,
                         "rotary_embedding_dim %lld must be even and at most the head size %lld",
                         (long long)r->rd, (long long)r->d);
    r->interleaved = ti__attr_i(k->node, "interleaved", 0) != 0;
    int64_t half = r->rd / 2;
    const ti_tensor *cs[2];
    cs[0] = r->cosc;
    cs[1] = r->sinc;
    for (int c = 0; c < 2; c++) {
        const ti_tensor *t = cs[c];
        int ok;
        if (r->pos != NULL) ok = t->rank == 2 && t->shape[1] == half;
        else ok = t->rank == 3 && t->shape[0] == r->b && t->shape[1] == r->s && t->shape[2] == half;
        if (!ok)
            return ti__kfail(k, TI_ERR_BAD_MODEL,
                             "%s must have shape %s with last dim %lld (rotary_embedding_dim / 2)",
                             c == 0 ? "cos_cache" : "sin_cache",
                             r->pos != NULL ? "[max_position, d]" : "[batch, seq, d]",
                             (long long)half);
    }
    if (r->pos != NULL) {
        if (!ti__dtype_is_int(r->pos->dtype) || r->pos->rank != 2 || r->pos->shape[0] != r->b ||
            r->pos->shape[1] != r->s)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "position_ids must be integer [%lld, %lld]",
                             (long long)r->b, (long long)r->s);
        if (r->cosc->shape[0] != r->sinc->shape[0])
            return ti__kfail(k, TI_ERR_BAD_MODEL, "cos_cache and sin_cache lengths differ");
    }
    if (k->n_out > 0 && k->out[0] != NULL &&
        !ti__set_shape(k->out[0], x->dtype, x->rank, x->shape))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid output shape");
    return TI_OK;
}

TI__PRIVATE int ti__rope_shape(ti__kctx *k) {
    ti__rope r;
    return ti__rope_setup(k, &r);
}

TI__PRIVATE ti_status ti__rope_run(ti__kctx *k) {
    ti__rope r;
    int st = ti__rope_setup(k, &r);
    if (st != TI_OK) return (ti_status)st;
    ti_tensor *y = k->n_out > 0 ? k->out[0] : NULL;
    if (y == NULL) return TI_OK;
    const ti_dtype dt = r.x->dtype;
    const int64_t half = r.rd / 2;
    for (int64_t b = 0; b < r.b; b++) {
        for (int64_t s = 0; s < r.s; s++) {
            size_t co; /* offset of this position's cos/sin row */
            if (r.pos != NULL) {
                int64_t p = ti__get_i64(r.pos, (size_t)(b * r.s + s));
                if (p < 0 || p >= r.cosc->shape[0])
                    return ti__kfail(k, TI_ERR_INVALID_ARGUMENT,
                                     "position id %lld is outside [0, %lld)", (long long)p,
                                     (long long)r.cosc->shape[0]);
                co = (size_t)(p * half);
            } else {
                co = (size_t)((b * r.s + s) * half);
            }
            for (int64_t h = 0; h < r.h; h++) {
                size_t xo = ti__attn_row(r.x->rank, b, r.h, r.s, r.d, h, s);
                for (int64_t i = 0; i < half; i++) {
                    size_t i1 = r.interleaved ? (size_t)(2 * i) : (size_t)i;
                    size_t i2 = r.interleaved ? (size_t)(2 * i + 1) : (size_t)(i + half);
                    double c = ti__attn_ld(dt, r.cosc->data, co + (size_t)i);
                    double sn = ti__attn_ld(dt, r.sinc->data, co + (size_t)i);
                    double x1 = ti__attn_ld(dt, r.x->data, xo + i1);
                    double x2 = ti__attn_ld(dt, r.x->data, xo + i2);
                    double re = ti__attn_rnd(dt, c * x1) - ti__attn_rnd(dt, sn * x2);
                    double im = ti__attn_rnd(dt, sn * x1) + ti__attn_rnd(dt, c * x2);
                    ti__set_f64(y, xo + i1, re);
                    ti__set_f64(y, xo + i2, im);
                }
                for (int64_t i = r.rd; i < r.d; i++)
                    ti__set_f64(y, xo + (size_t)i, ti__attn_ld(dt, r.x->data, xo + (size_t)i));
            }
        }
    }
    return TI_OK;
}

TI__PRIVATE const ti__op ti__ops_attention[] = {
    {"Attention", ti__attn_shape, ti__attn_run, ti__attn_scratch, 0},
    {"RotaryEmbedding", ti__rope_shape, ti__rope_run, NULL, 0},
    {NULL, NULL, NULL, NULL, 0}
};
