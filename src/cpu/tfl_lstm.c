/* TFLite UNIDIRECTIONAL_SEQUENCE_LSTM (domain "tflite"): float32, hybrid (float activations,
 * int8 weights, inputs quantized per step) and TFLite's integer 8x8_16 kernel (int8 input and
 * output state, int16 cell state and gates, int32 biases); CIFG, peepholes, projection, layer
 * norm, clipping, batch- or time-major. Bit for bit with lstm_eval.cc and TFLite's portable
 * tensor_utils; gemmlowp's 16-bit logistic/tanh are re-implemented here. Relies on qmath.c.
 * A run processes the whole sequence from the state inputs (TFLite variable tensors, which
 * the reader gives their reset value) and keeps the state in scratch: it never writes its
 * inputs and never allocates. */

/* Input slots of the op (TFLite lstm_shared.h). The operator's 5 intermediates (quantization
 * of the gate pre-activations and of the hidden state) come as the node's "intermediates"
 * attribute (value indices) or as extra inputs 24..28. */
enum {
    TI__LSTM_X = 0,
    TI__LSTM_I2I, TI__LSTM_I2F, TI__LSTM_I2C, TI__LSTM_I2O,
    TI__LSTM_R2I, TI__LSTM_R2F, TI__LSTM_R2C, TI__LSTM_R2O,
    TI__LSTM_C2I, TI__LSTM_C2F, TI__LSTM_C2O,
    TI__LSTM_BI, TI__LSTM_BF, TI__LSTM_BC, TI__LSTM_BO,
    TI__LSTM_PW, TI__LSTM_PB,
    TI__LSTM_H, TI__LSTM_C,
    TI__LSTM_LNI, TI__LSTM_LNF, TI__LSTM_LNC, TI__LSTM_LNO,
    TI__LSTM_INTER = 24 /* 5 intermediates: 4 gates, then the hidden state */
};

static const char *const ti__lstm_names[24] = {
    "input", "input_to_input_weights", "input_to_forget_weights", "input_to_cell_weights",
    "input_to_output_weights", "recurrent_to_input_weights", "recurrent_to_forget_weights",
    "recurrent_to_cell_weights", "recurrent_to_output_weights", "cell_to_input_weights",
    "cell_to_forget_weights", "cell_to_output_weights", "input_gate_bias", "forget_gate_bias",
    "cell_gate_bias", "output_gate_bias", "projection_weights", "projection_bias",
    "output_state", "cell_state", "input_layer_norm_coefficients",
    "forget_layer_norm_coefficients", "cell_layer_norm_coefficients",
    "output_layer_norm_coefficients"};

typedef struct ti__lstm_geom {
    int n_batch, max_time, n_input, n_cell, n_output;
    int time_major, cifg, peephole, projection, layer_norm;
    int diag[4]; /* recurrent weights given as a diagonal [n_cell] (float only) */
    int integer; /* the 8x8_16 kernel */
    int hybrid;  /* float activations, int8 weights quantized on the fly per step */
    int asym;    /* hybrid: asymmetric_quantize_inputs */
} ti__lstm_geom;

TI__PRIVATE const ti_tensor *ti__lstm_in(const ti__kctx *k, int i) {
    return i < k->n_in ? k->in[i] : NULL;
}

/* Checks an optional input: rank (1 or 2), dims and dtype. */
TI__PRIVATE ti_status ti__lstm_check(ti__kctx *k, int i, int rank, int64_t d0, int64_t d1,
                                     ti_dtype dt) {
    const ti_tensor *t = ti__lstm_in(k, i);
    if (t == NULL) return TI_OK;
    if (t->rank != rank || t->shape[0] != d0 || (rank == 2 && t->shape[1] != d1)) {
        if (rank == 1)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "%s has rank %d (first dim %lld), expected [%lld]",
                             ti__lstm_names[i], t->rank, t->rank > 0 ? (long long)t->shape[0] : -1LL,
                             (long long)d0);
        return ti__kfail(k, TI_ERR_BAD_MODEL, "%s has rank %d, expected [%lld, %lld]",
                         ti__lstm_names[i], t->rank, (long long)d0, (long long)d1);
    }
    if (t->dtype != dt)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "%s is %s, expected %s for a %s LSTM",
                         ti__lstm_names[i], ti_dtype_name(t->dtype), ti_dtype_name(dt),
                         ti_dtype_name(k->in[0]->dtype));
    return TI_OK;
}

/* Sizes and variant of the node; validates everything shape and dtype related. */
TI__PRIVATE ti_status ti__lstm_geom_get(ti__kctx *k, ti__lstm_geom *g) {
    static const int required[] = {TI__LSTM_X, TI__LSTM_I2F, TI__LSTM_I2C, TI__LSTM_I2O,
                                   TI__LSTM_R2F, TI__LSTM_R2C, TI__LSTM_R2O, TI__LSTM_BF,
                                   TI__LSTM_BC, TI__LSTM_BO, TI__LSTM_H, TI__LSTM_C};
    memset(g, 0, sizeof *g);
    if (k->n_in != 20 && k->n_in < 24)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "expects 20 or 24 inputs, got %d", k->n_in);
    for (size_t r = 0; r < TI__COUNTOF(required); r++)
        if (ti__lstm_in(k, required[r]) == NULL)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "input %d (%s) is required", required[r],
                             ti__lstm_names[required[r]]);
    if (k->n_out < 1 || k->out[0] == NULL)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "output 0 is required");
    const ti_tensor *x = k->in[TI__LSTM_X], *w_io = k->in[TI__LSTM_I2O],
                    *w_ro = k->in[TI__LSTM_R2O];
    g->time_major = ti__attr_i(k->node, "time_major", 0) != 0;
    /* TFLite's Prepare reads dims[2]: only rank 3 works there ([B, T, I] or [T, B, I]). */
    if (x->rank != 3)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "input has rank %d, expected 3", x->rank);
    g->max_time = (int)(g->time_major ? x->shape[0] : x->shape[1]);
    g->n_batch = (int)(g->time_major ? x->shape[1] : x->shape[0]);
    if (x->shape[0] > INT32_MAX || x->shape[1] > INT32_MAX || x->shape[2] > INT32_MAX)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "input dims too large");
    g->n_input = (int)x->shape[2];
    if (w_io->rank != 2 || w_io->shape[1] != g->n_input || w_io->shape[0] > INT32_MAX)
        return ti__kfail(k, TI_ERR_BAD_MODEL,
                         "input_to_output_weights must be [n_cell, %d] (rank %d found)",
                         g->n_input, w_io->rank);
    g->n_cell = (int)w_io->shape[0];
    if (w_ro->rank == 1) {
        g->n_output = (int)w_ro->shape[0];
    } else if (w_ro->rank == 2 && w_ro->shape[0] == g->n_cell && w_ro->shape[1] <= INT32_MAX) {
        g->n_output = (int)w_ro->shape[1];
    } else {
        return ti__kfail(k, TI_ERR_BAD_MODEL,
                         "recurrent_to_output_weights must be [%d, n_output] (rank %d found)",
                         g->n_cell, w_ro->rank);
    }
    if (g->n_cell <= 0 || g->n_output <= 0 || g->n_input <= 0)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "empty LSTM: n_input %d, n_cell %d, n_output %d",
                         g->n_input, g->n_cell, g->n_output);

    /* Variant: float32; integer (int8 input, int8 weights, int16 cell state); or hybrid
     * (float32 input and states, int8 weights). */
    ti_dtype wdt = w_io->dtype;
    if (x->dtype == TI_DTYPE_I8 && wdt == TI_DTYPE_I8) {
        g->integer = 1;
    } else if (x->dtype == TI_DTYPE_F32 && wdt == TI_DTYPE_I8) {
        g->hybrid = 1;
        g->asym = ti__attr_i(k->node, "asymmetric_quantize_inputs", 0) != 0;
    } else if (!(x->dtype == TI_DTYPE_F32 && wdt == TI_DTYPE_F32)) {
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "input %s with %s weights is not supported",
                         ti_dtype_name(x->dtype), ti_dtype_name(wdt));
    }
    ti_dtype fdt = g->integer || g->hybrid ? TI_DTYPE_I8 : TI_DTYPE_F32; /* weights */
    ti_dtype bdt = g->integer ? TI_DTYPE_I32 : TI_DTYPE_F32;             /* biases */
    ti_dtype pdt = g->integer ? TI_DTYPE_I16 : TI_DTYPE_F32;             /* layer norm */
    ti_dtype cdt = g->integer ? TI_DTYPE_I16 : fdt;                      /* peepholes */
    ti_dtype hdt = g->integer ? TI_DTYPE_I8 : TI_DTYPE_F32;              /* output state */

    g->cifg = ti__lstm_in(k, TI__LSTM_I2I) == NULL;
    if (g->cifg != (ti__lstm_in(k, TI__LSTM_R2I) == NULL))
        return ti__kfail(k, TI_ERR_BAD_MODEL,
                         "input_to_input_weights and recurrent_to_input_weights must be both "
                         "present or both absent (CIFG)");
    if (g->cifg != (ti__lstm_in(k, TI__LSTM_BI) == NULL))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "input_gate_bias must be present exactly when "
                                              "the input gate weights are");
    ti_status st;
    for (int i = TI__LSTM_I2I; i <= TI__LSTM_I2O; i++)
        if ((st = ti__lstm_check(k, i, 2, g->n_cell, g->n_input, fdt)) != TI_OK) return st;
    for (int i = TI__LSTM_R2I; i <= TI__LSTM_R2O; i++) {
        const ti_tensor *t = ti__lstm_in(k, i);
        g->diag[i - TI__LSTM_R2I] = t != NULL && t->rank == 1;
        if (t != NULL && t->rank == 1) {
            if (g->integer || g->hybrid || g->n_output != g->n_cell)
                return ti__kfail(k, TI_ERR_UNSUPPORTED,
                                 "diagonal %s needs a float LSTM with n_output == n_cell",
                                 ti__lstm_names[i]);
            st = ti__lstm_check(k, i, 1, g->n_cell, 0, fdt);
        } else {
            st = ti__lstm_check(k, i, 2, g->n_cell, g->n_output, fdt);
        }
        if (st != TI_OK) return st;
    }
    for (int i = TI__LSTM_C2I; i <= TI__LSTM_C2O; i++)
        if ((st = ti__lstm_check(k, i, 1, g->n_cell, 0, cdt)) != TI_OK) return st;
    int has_ci = ti__lstm_in(k, TI__LSTM_C2I) != NULL, has_cf = ti__lstm_in(k, TI__LSTM_C2F) != NULL;
    g->peephole = ti__lstm_in(k, TI__LSTM_C2O) != NULL;
    if (!(((has_ci || g->cifg) && has_cf && g->peephole) || (!has_ci && !has_cf && !g->peephole)))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "peephole weights must be all present or all absent");
    if (g->integer && g->peephole && g->n_output != g->n_cell)
        return ti__kfail(k, TI_ERR_UNSUPPORTED,
                         "integer peepholes with n_output %d != n_cell %d (TFLite indexes them "
                         "by n_output)", g->n_output, g->n_cell);
    for (int i = TI__LSTM_BI; i <= TI__LSTM_BO; i++)
        if ((st = ti__lstm_check(k, i, 1, g->n_cell, 0, bdt)) != TI_OK) return st;
    g->projection = ti__lstm_in(k, TI__LSTM_PW) != NULL;
    if (!g->projection && ti__lstm_in(k, TI__LSTM_PB) != NULL)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "projection_bias without projection_weights");
    if (!g->projection && g->n_output != g->n_cell)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "n_output %d != n_cell %d without a projection",
                         g->n_output, g->n_cell);
    if ((st = ti__lstm_check(k, TI__LSTM_PW, 2, g->n_output, g->n_cell, fdt)) != TI_OK) return st;
    if ((st = ti__lstm_check(k, TI__LSTM_PB, 1, g->n_output, 0, bdt)) != TI_OK) return st;
    g->layer_norm = k->n_in >= 24 && ti__lstm_in(k, TI__LSTM_LNF) != NULL;
    if (g->layer_norm) {
        if (g->cifg != (ti__lstm_in(k, TI__LSTM_LNI) == NULL) || !ti__lstm_in(k, TI__LSTM_LNC) ||
            !ti__lstm_in(k, TI__LSTM_LNO))
            return ti__kfail(k, TI_ERR_BAD_MODEL, "layer norm coefficients incomplete");
        for (int i = TI__LSTM_LNI; i <= TI__LSTM_LNO; i++)
            if ((st = ti__lstm_check(k, i, 1, g->n_cell, 0, pdt)) != TI_OK) return st;
    }
    const ti_tensor *h = k->in[TI__LSTM_H], *c = k->in[TI__LSTM_C];
    if (ti__numel(h) != (size_t)g->n_batch * (size_t)g->n_output ||
        ti__numel(c) != (size_t)g->n_batch * (size_t)g->n_cell)
        return ti__kfail(k, TI_ERR_BAD_MODEL,
                         "state sizes %zu (output) and %zu (cell), expected %d x %d and %d x %d",
                         ti__numel(h), ti__numel(c), g->n_batch, g->n_output, g->n_batch, g->n_cell);
    if (h->dtype != hdt || c->dtype != pdt)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "states are %s / %s, expected %s / %s",
                         ti_dtype_name(h->dtype), ti_dtype_name(c->dtype), ti_dtype_name(hdt),
                         ti_dtype_name(pdt));
    if (g->hybrid) {
        /* TFLite scales each int8 weight tensor by its one scale (GetTensorScale). */
        static const int quantized[] = {TI__LSTM_I2I, TI__LSTM_I2F, TI__LSTM_I2C, TI__LSTM_I2O,
                                        TI__LSTM_R2I, TI__LSTM_R2F, TI__LSTM_R2C, TI__LSTM_R2O,
                                        TI__LSTM_C2I, TI__LSTM_C2F, TI__LSTM_C2O, TI__LSTM_PW};
        for (size_t q = 0; q < TI__COUNTOF(quantized); q++) {
            const ti_tensor *t = ti__lstm_in(k, quantized[q]);
            if (t != NULL && t->quant.count != 1)
                return ti__kfail(k, t->quant.count == 0 ? TI_ERR_BAD_MODEL : TI_ERR_UNSUPPORTED,
                                 "%s needs one quantization scale, has %d",
                                 ti__lstm_names[quantized[q]], t->quant.count);
        }
    }
    if (g->integer) {
        /* TFLite reads one scale per tensor (params.scale); per-channel would read 0. */
        static const int quantized[] = {TI__LSTM_X, TI__LSTM_I2I, TI__LSTM_I2F, TI__LSTM_I2C,
                                        TI__LSTM_I2O, TI__LSTM_R2I, TI__LSTM_R2F, TI__LSTM_R2C,
                                        TI__LSTM_R2O, TI__LSTM_C2I, TI__LSTM_C2F, TI__LSTM_C2O,
                                        TI__LSTM_PW, TI__LSTM_H, TI__LSTM_C, TI__LSTM_LNI,
                                        TI__LSTM_LNF, TI__LSTM_LNC, TI__LSTM_LNO};
        for (size_t q = 0; q < TI__COUNTOF(quantized); q++) {
            const ti_tensor *t = ti__lstm_in(k, quantized[q]);
            if (quantized[q] >= TI__LSTM_LNI && !g->layer_norm) continue;
            if (t != NULL && t->quant.count != 1)
                return ti__kfail(k, t->quant.count == 0 ? TI_ERR_BAD_MODEL : TI_ERR_UNSUPPORTED,
                                 "%s needs one quantization scale, has %d",
                                 ti__lstm_names[quantized[q]], t->quant.count);
        }
    }
    return TI_OK;
}

/* ---- gemmlowp 16-bit fixed point (FixedPoint<int16_t, N>), bit exact ------------------ */
/* Raw int16 arithmetic wraps like the C++ casts in gemmlowp; only the named saturating
 * helpers saturate. */
TI__PRIVATE int16_t ti__w16(int32_t x) {
    int32_t u = x & 0xFFFF;
    return (int16_t)(u >= 0x8000 ? u - 0x10000 : u);
}
TI__PRIVATE int16_t ti__sat16(int32_t x) {
    return (int16_t)(x > 32767 ? 32767 : (x < -32768 ? -32768 : x));
}
TI__PRIVATE int16_t ti__fx16_mul(int16_t a, int16_t b) { /* SaturatingRoundingDoublingHighMul */
    if (a == b && a == INT16_MIN) return INT16_MAX;
    int32_t ab = (int32_t)a * (int32_t)b;
    int32_t nudge = ab >= 0 ? (1 << 14) : (1 - (1 << 14));
    return (int16_t)((ab + nudge) / (1 << 15));
}
TI__PRIVATE int16_t ti__fx16_rdiv(int16_t x, int e) { /* RoundingDivideByPOT */
    int32_t mask = (1 << e) - 1;
    int32_t rem = (int32_t)x & mask;
    int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
    return ti__w16(((int32_t)x >> e) + (rem > threshold ? 1 : 0));
}
TI__PRIVATE int16_t ti__fx16_pot(int16_t x, int e) { /* SaturatingRoundingMultiplyByPOT */
    if (e < 0) return ti__fx16_rdiv(x, -e);
    if (e == 0) return x;
    int32_t threshold = (1 << (15 - e)) - 1;
    if (x > threshold) return INT16_MAX;
    if (x < -threshold) return INT16_MIN;
    return ti__w16((int32_t)x * (1 << e));
}
/* A constant given as its int32 Q0.31-style raw value, rounded to 16 bits. */
TI__PRIVATE int16_t ti__fx16_const(int32_t raw32) { return (int16_t)ti__q_rdbypot(raw32, 16); }

/* exp(a) for a in [-1/4, 0), Q0.15 in and out. */
TI__PRIVATE int16_t ti__fx16_exp_quarter(int16_t a) {
    const int16_t c = ti__fx16_const(1895147668), third = ti__fx16_const(715827883);
    int16_t x = ti__w16(a + (1 << 12)); /* a + 1/8 */
    int16_t x2 = ti__fx16_mul(x, x), x3 = ti__fx16_mul(x2, x), x4 = ti__fx16_mul(x2, x2);
    int16_t x4_4 = ti__fx16_pot(x4, -2);
    int16_t poly = ti__fx16_pot(ti__w16(ti__fx16_mul(ti__w16(x4_4 + x3), third) + x2), -1);
    return ti__sat16(c + ti__fx16_mul(c, ti__w16(x + poly)));
}

/* exp(a) for a <= 0 with `ib` integer bits in a; Q0.15 result. */
TI__PRIVATE int16_t ti__fx16_exp_neg(int16_t a, int ib) {
    static const int32_t mult[7] = {1672461947, 1302514674, 790015084, 290630308,
                                    39332535,   720401,     242}; /* exp(-2^e), e = -2..4 */
    const int fb = 15 - ib;
    const int16_t quarter = (int16_t)(1 << (fb - 2));
    int16_t amq = ti__w16(((int32_t)a & (quarter - 1)) - quarter);
    int16_t result = ti__fx16_exp_quarter(ti__fx16_pot(amq, ib));
    int16_t rem = ti__w16(amq - a);
    for (int e = -2; e <= 4; e++)
        if (ib > e && ((int32_t)rem & (int32_t)ti__w16(1 << (fb + e))) != 0)
            result = ti__fx16_mul(result, ti__fx16_const(mult[e + 2]));
    if (ib > 5 && a < ti__fx16_const(-(1 << (36 - ib)))) result = 0;
    if (a == 0) result = INT16_MAX;
    return result;
}

/* Newton-Raphson 1/(1+a) (or (1-a)/(1+a) when minus) for a in (0, 1), Q0.15. */
TI__PRIVATE int16_t ti__fx16_recip(int16_t a, int minus) {
    int32_t sum = (int32_t)a + INT16_MAX;
    int16_t half_den = (int16_t)((sum + (sum >= 0 ? 1 : -1)) / 2); /* RoundingHalfSum */
    const int16_t c48 = ti__fx16_const(1515870810), cm32 = ti__fx16_const(-1010580540);
    int16_t x = ti__w16(c48 + ti__fx16_mul(half_den, cm32)); /* Q2.13 */
    for (int i = 0; i < 3; i++) {
        int16_t one_minus = ti__w16((1 << 13) - ti__fx16_mul(half_den, x));
        x = ti__w16(x + ti__fx16_pot(ti__fx16_mul(x, one_minus), 2));
    }
    return minus ? ti__fx16_pot(ti__w16(x - (1 << 13)), 2) : ti__fx16_pot(x, 1);
}

/* gemmlowp::logistic and gemmlowp::tanh of FixedPoint<int16_t, ib>, Q0.15 results. */
TI__PRIVATE int16_t ti__fx16_logistic(int16_t a, int ib) {
    if (a == 0) return 1 << 14;
    int16_t abs_a = a > 0 ? a : ti__w16(-(int32_t)a);
    int16_t pos = ti__fx16_recip(ti__fx16_exp_neg(ti__w16(-(int32_t)abs_a), ib), 0);
    return a > 0 ? pos : ti__w16(INT16_MAX - pos);
}
TI__PRIVATE int16_t ti__fx16_tanh(int16_t a, int ib) {
    if (a == 0) return 0;
    int16_t n = a < 0 ? a : ti__w16(-(int32_t)a);
    int16_t t = ti__fx16_recip(ti__fx16_exp_neg(n, ib + 1), 1);
    return a < 0 ? ti__w16(-(int32_t)t) : t;
}

/* ---- integer kernel ------------------------------------------------------------------ */
typedef struct ti__lstm_qgate {
    const int8_t *wx, *wh; /* input / recurrent weights */
    const int16_t *wc;     /* peephole, NULL when absent */
    const int16_t *ln;     /* layer norm coefficients, NULL when absent */
    const int32_t *bias;   /* the gate bias (used by layer norm only) */
    int32_t *bx, *bh;      /* effective biases: bias + zero point * row sums */
    int32_t mx, mh, mc, mln; /* multipliers of the matmuls, peephole, layer norm */
    int sx, sh, sc, sln;
    int32_t guard;           /* layer norm variance guard */
} ti__lstm_qgate;

typedef struct ti__lstm_qparams {
    ti__lstm_qgate g[4]; /* input, forget, cell, output */
    int cell_scale;      /* log2 of the cell state scale */
    int16_t cell_clip;
    int8_t proj_clip;
    int32_t hidden_m, proj_m;
    int hidden_s, proj_s;
    int32_t hidden_zp, out_zp;
    const int8_t *wp;
    int32_t *bp; /* projection effective bias */
} ti__lstm_qparams;

/* TFLite CheckedLog2. */
TI__PRIVATE int ti__lstm_log2(float x, int *out) {
    float l = logf(x) * (1.0f / logf(2.0f));
    float r = (float)ti__q_round(l);
    *out = (int)r;
    return fabsf(l - r) < 1e-3f;
}

TI__PRIVATE void ti__lstm_qmult(double real, int32_t *m, int *s) { ti__q_quantize_multiplier(real, m, s); }

TI__PRIVATE float ti__lstm_scale(const ti__kctx *k, int i) {
    const ti_tensor *t = ti__lstm_in(k, i);
    return t != NULL && t->quant.count > 0 ? t->quant.scale[0] : 1.0f;
}

/* bias[r] + zp * sum_c w[r][c] (PrecomputeZeroPointTimesWeightWithBias). */
TI__PRIVATE void ti__lstm_eff_bias(const int8_t *w, const int32_t *bias, int32_t zp, int rows,
                                   int cols, int32_t *out) {
    for (int r = 0; r < rows; r++) {
        int32_t sum = 0;
        for (int c = 0; c < cols; c++) sum += w[(size_t)r * (size_t)cols + (size_t)c];
        out[r] = (bias != NULL ? bias[r] : 0) + sum * zp;
    }
}

/* Quantization of the op's intermediate tensor i (0..3: gate pre-activations, 4: hidden
 * state): an extra input 24 + i, or the value the "intermediates" attribute (value indices,
 * set by the TFLite reader) names. NULL when there is none. */
TI__PRIVATE const ti_quant *ti__lstm_inter_quant(const ti__kctx *k, int i) {
    const ti_tensor *t = ti__lstm_in(k, TI__LSTM_INTER + i);
    if (t != NULL) return t->quant.count > 0 ? &t->quant : NULL;
    int n = 0;
    const int64_t *v = ti__attr_ints(k->node, "intermediates", &n);
    if (v == NULL || i >= n || k->model == NULL || v[i] < 0 || v[i] >= k->model->n_values)
        return NULL;
    const ti_quant *q = &k->model->values[v[i]].quant;
    return q->count > 0 && q->scale != NULL && q->zero_point != NULL ? q : NULL;
}

/* Fills the parameters the way PopulateQuantizedLstmParams8x8_16 does; eff holds the
 * 8 * n_cell + n_output effective biases. */
TI__PRIVATE ti_status ti__lstm_qparams_get(ti__kctx *k, const ti__lstm_geom *g,
                                           ti__lstm_qparams *p, int32_t *eff) {
    memset(p, 0, sizeof *p);
    const ti_tensor *cs = k->in[TI__LSTM_C], *hs = k->in[TI__LSTM_H], *out = k->out[0];
    if (!ti__lstm_log2(cs->quant.scale[0], &p->cell_scale))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "cell_state scale %g is not a power of two",
                         (double)cs->quant.scale[0]);
    /* tanh of the cell state has 15 + cell_scale integer bits; TFLite handles 0..6. */
    if (p->cell_scale < -15 || p->cell_scale > -9)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "cell_state scale 2^%d, expected 2^-15..2^-9",
                         p->cell_scale);
    float cell_clip = ti__attr_f(k->node, "cell_clip", 0.0f);
    float proj_clip = ti__attr_f(k->node, "proj_clip", 0.0f);
    if (cell_clip < 0.0f || proj_clip < 0.0f)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "negative cell_clip %g or proj_clip %g",
                         (double)cell_clip, (double)proj_clip);
    if (cell_clip > 0.0f) {
        float q = cell_clip / cs->quant.scale[0];
        p->cell_clip = (int16_t)(q < -32768.0f ? -32768.0f : (q > 32767.0f ? 32767.0f : q));
    }
    if (proj_clip > 0.0f) {
        if (out->quant.count < 1)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "output has no quantization scale");
        float q = proj_clip / out->quant.scale[0];
        p->proj_clip = (int8_t)(q < -128.0f ? -128.0f : (q > 127.0f ? 127.0f : q));
    }

    /* Gate pre-activations: Q3.12 unless layer norm, which takes the intermediates' scales. */
    float inter[5];
    int32_t inter_zp4 = 0;
    for (int i = 0; i < 5; i++) {
        const ti_quant *q = ti__lstm_inter_quant(k, i);
        int need = i == 4 ? 1 : g->layer_norm;
        inter[i] = i == 4 ? 1.0f : 1.0f / 4096.0f;
        if (!need) continue;
        if (q != NULL) {
            inter[i] = q->scale[0];
            if (i == 4) inter_zp4 = (int32_t)q->zero_point[0];
        } else if (i == 4 && !g->projection) {
            /* Without a projection the hidden state is the output state; TFLite's converter
             * gives this intermediate the output state's quantization. */
            inter[i] = hs->quant.scale[0];
            inter_zp4 = (int32_t)hs->quant.zero_point[0];
        } else {
            return ti__kfail(k, TI_ERR_BAD_MODEL,
                             "integer LSTM needs the quantization of intermediate tensor %d", i);
        }
    }
    float in_scale = ti__lstm_scale(k, TI__LSTM_X), h_scale = hs->quant.scale[0];
    int32_t in_zp = (int32_t)k->in[TI__LSTM_X]->quant.zero_point[0];
    p->out_zp = (int32_t)hs->quant.zero_point[0];
    p->hidden_zp = inter_zp4;
    if (in_zp < -128 || in_zp > 127 || p->out_zp < -128 || p->out_zp > 127 || inter_zp4 < -128 ||
        inter_zp4 > 127)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "int8 zero points %d / %d / %d out of range",
                         (int)in_zp, (int)p->out_zp, (int)inter_zp4);
    for (int gi = 0; gi < 4; gi++) {
        ti__lstm_qgate *q = &p->g[gi];
        if (gi == 0 && g->cifg) continue;
        const ti_tensor *wx = ti__lstm_in(k, TI__LSTM_I2I + gi), *wh = ti__lstm_in(k, TI__LSTM_R2I + gi);
        const ti_tensor *wc = gi == 2 ? NULL : ti__lstm_in(k, TI__LSTM_C2I + (gi == 3 ? 2 : gi));
        const ti_tensor *ln = g->layer_norm ? ti__lstm_in(k, TI__LSTM_LNI + gi) : NULL;
        const ti_tensor *b = ti__lstm_in(k, TI__LSTM_BI + gi);
        q->wx = (const int8_t *)wx->data;
        q->wh = (const int8_t *)wh->data;
        q->wc = wc != NULL && g->peephole ? (const int16_t *)wc->data : NULL;
        q->ln = ln != NULL ? (const int16_t *)ln->data : NULL;
        q->bias = (const int32_t *)b->data;
        /* float arithmetic as TFLite: w_scale * in_scale / intermediate_scale */
        float ex = wx->quant.scale[0] * in_scale / inter[gi];
        float eh = wh->quant.scale[0] * h_scale / inter[gi];
        ti__lstm_qmult(ex, &q->mx, &q->sx);
        ti__lstm_qmult(eh, &q->mh, &q->sh);
        if (q->wc != NULL) {
            float ec = (float)(ldexp(1.0, p->cell_scale) * (double)wc->quant.scale[0] / (double)inter[gi]);
            ti__lstm_qmult(ec, &q->mc, &q->sc);
        }
        float ln_scale = ln != NULL ? ln->quant.scale[0] : 1.0f;
        ti__lstm_qmult(ln_scale, &q->mln, &q->sln);
        int32_t guard = (int32_t)(10000.0f * ln_scale);
        q->guard = guard > 1 ? guard : 1;
        q->bx = eff + (size_t)gi * 2 * (size_t)g->n_cell;
        q->bh = q->bx + g->n_cell;
        ti__lstm_eff_bias(q->wx, g->layer_norm ? NULL : q->bias, -in_zp, g->n_cell, g->n_input, q->bx);
        ti__lstm_eff_bias(q->wh, NULL, -p->out_zp, g->n_cell, g->n_output, q->bh);
    }
    float eff_hidden = (float)(ldexp(1.0, -15) / (double)inter[4] * ldexp(1.0, -15));
    ti__lstm_qmult(eff_hidden, &p->hidden_m, &p->hidden_s);
    if (g->projection) {
        const ti_tensor *pw = k->in[TI__LSTM_PW], *pb = ti__lstm_in(k, TI__LSTM_PB);
        float ep = pw->quant.scale[0] * inter[4] / h_scale;
        ti__lstm_qmult(ep, &p->proj_m, &p->proj_s);
        p->wp = (const int8_t *)pw->data;
        p->bp = eff + 8 * (size_t)g->n_cell;
        ti__lstm_eff_bias(p->wp, pb != NULL ? (const int32_t *)pb->data : NULL, inter_zp4,
                          g->n_output, g->n_cell, p->bp);
    }
    return TI_OK;
}

/* TFLite's GetInvSqrtQuantizedMultiplierExp with reverse_shift -1 (32-bit gemmlowp math). */
TI__PRIVATE int32_t ti__fx32_pot(int32_t x, int e) { /* SaturatingRoundingMultiplyByPOT, e > 0 */
    int64_t threshold = ((int64_t)1 << (31 - e)) - 1;
    if (x > threshold) return INT32_MAX;
    if (x < -threshold) return INT32_MIN;
    return (int32_t)((int64_t)x * ((int64_t)1 << e));
}
TI__PRIVATE int32_t ti__w32(int64_t x) {
    uint32_t u = (uint32_t)((uint64_t)x & 0xFFFFFFFFu);
    return u >= 0x80000000u ? (int32_t)(u - 0x80000000u) + INT32_MIN : (int32_t)u;
}
TI__PRIVATE void ti__lstm_inv_sqrt(int32_t input, int32_t *m, int *shift) {
    if (input <= 1) {
        *m = INT32_MAX;
        *shift = 0;
        return;
    }
    int s = 11;
    while (input >= (1 << 29)) {
        input /= 4;
        s++;
    }
    int lz = 0;
    for (uint32_t v = (uint32_t)input; (v & 0x80000000u) == 0; v <<= 1) lz++;
    int pairs = (lz - 1) / 2 - 1;
    s -= pairs;
    input <<= 2 * pairs;
    int32_t fx = input >> 1;                       /* Q3.28 */
    int32_t half = ti__q_rdbypot(fx, 1);
    const int32_t half_three = (1 << 28) + (1 << 27); /* 1.5 */
    int32_t x = 1 << 28;                           /* 1.0 */
    for (int i = 0; i < 5; i++) {
        int32_t x3 = ti__fx32_pot(ti__q_srdhm(ti__q_srdhm(x, x), x), 6);
        x = ti__fx32_pot(ti__w32((int64_t)ti__q_srdhm(half_three, x) - ti__q_srdhm(half, x3)), 3);
    }
    x = ti__q_srdhm(x, 1518500250); /* sqrt(2) / 2 */
    if (s < 0) {
        x = ti__w32((int64_t)x * ((int64_t)1 << -s));
        s = 0;
    }
    *m = x;
    *shift = -s;
}

/* PortableApplyLayerNorm on one row. */
TI__PRIVATE void ti__lstm_layer_norm(int16_t *v, const ti__lstm_qgate *q, int n) {
    int64_t sum = 0, sum_sq = 0;
    for (int j = 0; j < n; j++) {
        sum += v[j];
        sum_sq += (int64_t)v[j] * v[j];
    }
    int32_t mean = (int32_t)(sum * 1024 / n);
    int32_t temp = (1 << 20) / n; /* exact for power-of-two n only, as in TFLite */
    int64_t variance = sum_sq * temp - (int64_t)mean * (int64_t)mean;
    int32_t var2 = (int32_t)(variance / (1 << 20));
    if (var2 < 1) var2 = q->guard;
    int32_t inv_m;
    int inv_s;
    ti__lstm_inv_sqrt(var2, &inv_m, &inv_s);
    for (int j = 0; j < n; j++) {
        int32_t shifted = ti__w32(1024 * (int64_t)v[j] - mean);
        int32_t rescaled = ti__q_mul(shifted, inv_m, inv_s);
        int64_t val3 = ti__w32((int64_t)rescaled * q->ln[j] + q->bias[j]);
        int32_t val4 = (int32_t)((val3 > 0 ? val3 + 512 : val3 - 512) / 1024);
        v[j] = ti__sat16(ti__q_mul(val4, q->mln, q->sln + 12));
    }
}

/* acc16[r] = sat16(acc16[r] + MultiplyByQuantizedMultiplier(bias[r] + w[r] . v, m, s)). */
TI__PRIVATE void ti__lstm_qmatvec(const int8_t *w, const int32_t *bias, const int8_t *v, int rows,
                                  int cols, int32_t m, int s, int16_t *acc16) {
    for (int r = 0; r < rows; r++) {
        const int8_t *wr = w + (size_t)r * (size_t)cols;
        int32_t acc = bias[r];
        for (int c = 0; c < cols; c++) acc += (int32_t)wr[c] * (int32_t)v[c];
        acc16[r] = ti__sat16(ti__q_mul(acc, m, s) + acc16[r]);
    }
}

/* One gate (CalculateLstmGateInteger8x8_16) for one batch row. */
TI__PRIVATE void ti__lstm_qgate_run(const ti__lstm_qgate *q, const ti__lstm_geom *g, const int8_t *x,
                                    const int8_t *h, const int16_t *c, int is_cell, int16_t *gate) {
    int n = g->n_cell;
    for (int r = 0; r < n; r++) gate[r] = 0;
    ti__lstm_qmatvec(q->wx, q->bx, x, n, g->n_input, q->mx, q->sx, gate);
    ti__lstm_qmatvec(q->wh, q->bh, h, n, g->n_output, q->mh, q->sh, gate);
    if (q->wc != NULL)
        for (int r = 0; r < n; r++)
            gate[r] = ti__sat16(ti__q_mul((int32_t)q->wc[r] * c[r], q->mc, q->sc) + gate[r]);
    if (q->ln != NULL) ti__lstm_layer_norm(gate, q, n);
    for (int r = 0; r < n; r++)
        gate[r] = is_cell ? ti__fx16_tanh(gate[r], 3) : ti__fx16_logistic(gate[r], 3);
}

/* Carves the scratch: integer or float buffers, each 16-byte aligned. */
typedef struct ti__lstm_bufs {
    void *gate[4], *cell, *tmp, *hstate, *hidden;
    int32_t *eff;        /* integer: effective biases; hybrid: weight row sums */
    int8_t *qx, *qh;     /* hybrid: this step's quantized input and output state */
} ti__lstm_bufs;

TI__PRIVATE size_t ti__lstm_layout(const ti__lstm_geom *g, unsigned char *base, ti__lstm_bufs *b) {
    size_t esz = g->integer ? sizeof(int16_t) : sizeof(float);
    size_t hsz = g->integer ? sizeof(int8_t) : sizeof(float);
    size_t sizes[11], off = 0;
    for (int i = 0; i < 6; i++) sizes[i] = (size_t)g->n_cell * esz; /* 4 gates, cell, tmp */
    sizes[6] = (size_t)g->n_output * hsz;                           /* output state */
    sizes[7] = (size_t)g->n_cell * (g->hybrid ? 1 : hsz);           /* int8 hidden */
    sizes[8] = g->integer || g->hybrid
                   ? (8 * (size_t)g->n_cell + (size_t)g->n_output) * sizeof(int32_t) : 0;
    sizes[9] = g->hybrid ? (size_t)g->n_input : 0;
    sizes[10] = g->hybrid ? (size_t)g->n_output : 0;
    void *ptr[11];
    for (int i = 0; i < 11; i++) {
        ptr[i] = base != NULL ? (void *)(base + off) : NULL;
        off += (sizes[i] + 15) & ~(size_t)15;
    }
    if (b != NULL) {
        for (int i = 0; i < 4; i++) b->gate[i] = ptr[i];
        b->cell = ptr[4];
        b->tmp = ptr[5];
        b->hstate = ptr[6];
        b->hidden = ptr[7];
        b->eff = (int32_t *)ptr[8];
        b->qx = (int8_t *)ptr[9];
        b->qh = (int8_t *)ptr[10];
    }
    return off;
}

/* Offset (in elements) of step t of batch row b in a [T, B, n] or [B, T, n] tensor. */
TI__PRIVATE size_t ti__lstm_row(const ti__lstm_geom *g, int b, int t, int n) {
    size_t row = g->time_major ? (size_t)t * (size_t)g->n_batch + (size_t)b
                               : (size_t)b * (size_t)g->max_time + (size_t)t;
    return row * (size_t)n;
}

TI__PRIVATE ti_status ti__lstm_run_int(ti__kctx *k, const ti__lstm_geom *g, ti__lstm_bufs *bf) {
    ti__lstm_qparams p;
    ti_status st = ti__lstm_qparams_get(k, g, &p, bf->eff);
    if (st != TI_OK) return st;
    const int8_t *x = (const int8_t *)k->in[TI__LSTM_X]->data;
    const int8_t *h0 = (const int8_t *)k->in[TI__LSTM_H]->data;
    const int16_t *c0 = (const int16_t *)k->in[TI__LSTM_C]->data;
    int8_t *y = (int8_t *)k->out[0]->data;
    int16_t *gi = (int16_t *)bf->gate[0], *gf = (int16_t *)bf->gate[1];
    int16_t *gc = (int16_t *)bf->gate[2], *go = (int16_t *)bf->gate[3];
    int16_t *cell = (int16_t *)bf->cell, *tmp = (int16_t *)bf->tmp;
    int8_t *h = (int8_t *)bf->hstate, *hid = (int8_t *)bf->hidden;
    int nc = g->n_cell, no = g->n_output;
    for (int b = 0; b < g->n_batch; b++) {
        /* A state without data starts as TFLite resets variable tensors: int8 at the zero
         * point (real 0), int16 at 0. */
        for (int j = 0; j < no; j++) h[j] = h0 != NULL ? h0[(size_t)b * no + j] : (int8_t)p.out_zp;
        for (int j = 0; j < nc; j++) cell[j] = c0 != NULL ? c0[(size_t)b * nc + j] : 0;
        for (int t = 0; t < g->max_time; t++) {
            const int8_t *xt = x + ti__lstm_row(g, b, t, g->n_input);
            if (!g->cifg) ti__lstm_qgate_run(&p.g[0], g, xt, h, cell, 0, gi);
            ti__lstm_qgate_run(&p.g[1], g, xt, h, cell, 0, gf);
            ti__lstm_qgate_run(&p.g[2], g, xt, h, cell, 1, gc);
            /* UpdateLstmCellInteger: c = f*c + i*g (i = 1 - f with CIFG), then clip */
            for (int j = 0; j < nc; j++) {
                int16_t fc = ti__w16(ti__q_rdbypot((int32_t)gf[j] * cell[j], 15));
                int16_t ig = g->cifg ? ti__w16(INT16_MAX - gf[j]) : gi[j];
                int16_t add = ti__w16(ti__q_rdbypot((int32_t)ig * gc[j], 30 + p.cell_scale));
                int16_t v = ti__sat16((int32_t)fc + add);
                if (p.cell_clip > 0)
                    v = v > p.cell_clip ? p.cell_clip : (v < -p.cell_clip ? (int16_t)-p.cell_clip : v);
                cell[j] = v;
            }
            ti__lstm_qgate_run(&p.g[3], g, xt, h, cell, 0, go);
            /* CalculateLstmOutputInteger8x8_16: hidden = o * tanh(c), requantized */
            for (int j = 0; j < nc; j++) tmp[j] = ti__fx16_tanh(cell[j], 15 + p.cell_scale);
            int8_t *dst = g->projection ? hid : h;
            /* TFLite passes -hidden_zp on the projection path (b/246629213). */
            int32_t zp = g->projection ? -p.hidden_zp : p.hidden_zp;
            for (int j = 0; j < nc; j++) {
                int32_t v = ti__q_mul((int32_t)go[j] * tmp[j], p.hidden_m, p.hidden_s) + zp;
                dst[j] = (int8_t)(v < -128 ? -128 : (v > 127 ? 127 : v));
            }
            if (g->projection) {
                for (int r = 0; r < no; r++) {
                    const int8_t *wr = p.wp + (size_t)r * (size_t)nc;
                    int32_t acc = p.bp[r];
                    for (int c = 0; c < nc; c++) acc += (int32_t)wr[c] * hid[c];
                    acc = ti__q_mul(acc, p.proj_m, p.proj_s) + p.out_zp;
                    acc = acc < -128 ? -128 : (acc > 127 ? 127 : acc);
                    if (p.proj_clip > 0)
                        acc = acc > p.proj_clip ? p.proj_clip : (acc < -p.proj_clip ? -p.proj_clip : acc);
                    h[r] = (int8_t)acc;
                }
            }
            memcpy(y + ti__lstm_row(g, b, t, no), h, (size_t)no);
        }
    }
    return TI_OK;
}

/* ---- float and hybrid kernels --------------------------------------------------------- */
TI__PRIVATE float ti__lstm_act(int act, float v) {
    switch (act) {
    case TI__TFL_ACT_RELU: return v > 0.0f ? v : 0.0f;
    case TI__TFL_ACT_RELU_N1_TO_1: return v < -1.0f ? -1.0f : (v > 1.0f ? 1.0f : v);
    case TI__TFL_ACT_RELU6: return v < 0.0f ? 0.0f : (v > 6.0f ? 6.0f : v);
    case TI__TFL_ACT_TANH: return tanhf(v);
    case TI__TFL_ACT_SIGN_BIT: return signbit(v) ? 1.0f : 0.0f;
    default: return 1.0f / (1.0f + expf(-v)); /* sigmoid, the gates' activation */
    }
}
enum { TI__LSTM_SIGMOID = 100 };

/* Hybrid: quantizes one float vector to int8 per TFLite's BatchQuantizeFloats (symmetric:
 * scale max|x| / 127, zero point 0; asymmetric: min/max with a nudged zero point). */
TI__PRIVATE void ti__lstm_hquant(const float *x, int n, int asym, int8_t *q, float *sf, int32_t *zp) {
    float lo = x[0], hi = x[0];
    for (int i = 1; i < n; i++) { /* std::minmax_element */
        if (x[i] < lo) lo = x[i];
        if (!(x[i] < hi)) hi = x[i];
    }
    *zp = 0;
    if (!asym) {
        float range = TI__MAX(fabsf(lo), fabsf(hi));
        if (range == 0.0f) {
            memset(q, 0, (size_t)n);
            *sf = 1.0f;
            return;
        }
        *sf = range / 127.0f;
        float inv = 127.0f / range;
        for (int i = 0; i < n; i++) {
            int32_t v = (int32_t)roundf(x[i] * inv);
            q[i] = (int8_t)(v > 127 ? 127 : (v < -127 ? -127 : v));
        }
        return;
    }
    double rmin = (double)TI__MIN(0.0f, lo), rmax = (double)TI__MAX(0.0f, hi);
    if (rmin == rmax) {
        memset(q, 0, (size_t)n);
        *sf = 1.0f;
        return;
    }
    double scale = (rmax - rmin) / 255.0;
    double zmin = -128.0 - rmin / scale, zmax = 127.0 - rmax / scale;
    double zd = 128.0 + fabs(rmin / scale) < 127.0 + fabs(rmax / scale) ? zmin : zmax;
    *zp = zd <= -128.0 ? -128 : (zd >= 127.0 ? 127 : (int32_t)(int8_t)round(zd));
    *sf = (float)scale;
    float inv = 1.0f / *sf;
    for (int i = 0; i < n; i++) {
        int32_t v = (int32_t)roundf((float)*zp + x[i] * inv);
        q[i] = (int8_t)(v > 127 ? 127 : (v < -128 ? -128 : v));
    }
}

/* Hybrid matmul: acc[r] += float(w[r] . q - row_sum[r] * zp) * (vector_scale * w_scale). */
TI__PRIVATE void ti__lstm_hmatvec(const ti_tensor *w, const int8_t *q, float sf, int32_t zp,
                                  const int32_t *row_sums, int rows, int cols, float *acc) {
    const int8_t *wd = (const int8_t *)w->data;
    float scale = sf * w->quant.scale[0];
    for (int r = 0; r < rows; r++) {
        const int8_t *wr = wd + (size_t)r * (size_t)cols;
        int32_t dot = 0;
        for (int c = 0; c < cols; c++) dot += (int32_t)wr[c] * (int32_t)q[c];
        if (row_sums != NULL) dot -= row_sums[r] * zp;
        acc[r] += (float)dot * scale;
    }
}

TI__PRIVATE int ti__lstm_all_zero(const float *v, int n) {
    for (int i = 0; i < n; i++)
        if (v[i] != 0.0f) return 0;
    return 1;
}

/* The quantized vectors of one hybrid step (NULL when the vector is all zeros). */
typedef struct ti__lstm_hstep {
    const int8_t *qx, *qh;
    float sx, sh;
    int32_t zx, zh;
    const int32_t *row_sums; /* [gate][x | h][n_cell], asymmetric only */
} ti__lstm_hstep;

/* One gate (CalculateLstmGateFloat / CalculateLstmGateHybrid) for one batch row. */
TI__PRIVATE void ti__lstm_fgate(const ti__kctx *k, const ti__lstm_geom *g, int gi, const float *x,
                                const float *h, const float *c, int act,
                                const ti__lstm_hstep *hs, float *gate) {
    const ti_tensor *wxt = k->in[TI__LSTM_I2I + gi], *wht = k->in[TI__LSTM_R2I + gi];
    const ti_tensor *wct = gi == 2 ? NULL : ti__lstm_in(k, TI__LSTM_C2I + (gi == 3 ? 2 : gi));
    if (!g->peephole || c == NULL) wct = NULL;
    const ti_tensor *lnt = g->layer_norm ? ti__lstm_in(k, TI__LSTM_LNI + gi) : NULL;
    const float *bias = (const float *)k->in[TI__LSTM_BI + gi]->data;
    int n = g->n_cell;
    for (int r = 0; r < n; r++) gate[r] = lnt != NULL ? 0.0f : bias[r];
    if (g->hybrid) {
        const int32_t *rs = hs->row_sums != NULL ? hs->row_sums + (size_t)gi * 2 * (size_t)n : NULL;
        if (hs->qx != NULL) ti__lstm_hmatvec(wxt, hs->qx, hs->sx, hs->zx, rs, n, g->n_input, gate);
        if (hs->qh != NULL)
            ti__lstm_hmatvec(wht, hs->qh, hs->sh, hs->zh, rs != NULL ? rs + n : NULL, n, g->n_output, gate);
        if (wct != NULL) {
            const int8_t *wc = (const int8_t *)wct->data;
            for (int r = 0; r < n; r++) gate[r] += (wct->quant.scale[0] * (float)wc[r]) * c[r];
        }
    } else {
        const float *wx = (const float *)wxt->data, *wh = (const float *)wht->data;
        for (int r = 0; r < n; r++) {
            const float *wr = wx + (size_t)r * (size_t)g->n_input;
            float dot = 0.0f;
            for (int j = 0; j < g->n_input; j++) dot += wr[j] * x[j];
            float acc = gate[r] + dot;
            if (g->diag[gi]) {
                acc += wh[r] * h[r];
            } else {
                const float *hr = wh + (size_t)r * (size_t)g->n_output;
                float dh = 0.0f;
                for (int j = 0; j < g->n_output; j++) dh += hr[j] * h[j];
                acc += dh;
            }
            if (wct != NULL) acc += ((const float *)wct->data)[r] * c[r];
            gate[r] = acc;
        }
    }
    if (lnt != NULL) { /* MeanStddevNormalization, coefficients, then the bias */
        const float *ln = (const float *)lnt->data;
        float sum = 0.0f, sq = 0.0f;
        for (int r = 0; r < n; r++) sum += gate[r];
        float mean = sum / (float)n;
        for (int r = 0; r < n; r++) sq += (gate[r] - mean) * (gate[r] - mean);
        float inv = 1.0f / sqrtf(sq / (float)n + 1e-8f);
        for (int r = 0; r < n; r++) gate[r] = (gate[r] - mean) * inv * ln[r] + bias[r];
    }
    for (int r = 0; r < n; r++) gate[r] = ti__lstm_act(act, gate[r]);
}

/* Row sums of an int8 [rows, cols] weight (asymmetric hybrid inputs). */
TI__PRIVATE void ti__lstm_row_sums(const ti_tensor *w, int rows, int cols, int32_t *out) {
    if (w == NULL) return;
    ti__lstm_eff_bias((const int8_t *)w->data, NULL, 1, rows, cols, out);
}

TI__PRIVATE ti_status ti__lstm_run_float(ti__kctx *k, const ti__lstm_geom *g, ti__lstm_bufs *bf) {
    int act = (int)ti__attr_i(k->node, "fused_activation_function", TI__TFL_ACT_TANH);
    float cell_clip = ti__attr_f(k->node, "cell_clip", 0.0f);
    float proj_clip = ti__attr_f(k->node, "proj_clip", 0.0f);
    const float *x = (const float *)k->in[TI__LSTM_X]->data;
    const float *h0 = (const float *)k->in[TI__LSTM_H]->data;
    const float *c0 = (const float *)k->in[TI__LSTM_C]->data;
    const ti_tensor *pbt = ti__lstm_in(k, TI__LSTM_PB), *pwt = ti__lstm_in(k, TI__LSTM_PW);
    const float *pb = pbt != NULL ? (const float *)pbt->data : NULL;
    float *y = (float *)k->out[0]->data;
    float *gi = (float *)bf->gate[0], *gf = (float *)bf->gate[1];
    float *gc = (float *)bf->gate[2], *go = (float *)bf->gate[3];
    float *cell = (float *)bf->cell, *tmp = (float *)bf->tmp, *h = (float *)bf->hstate;
    int nc = g->n_cell, no = g->n_output;
    ti__lstm_hstep hs;
    memset(&hs, 0, sizeof hs);
    const int32_t *proj_rs = NULL;
    if (g->hybrid && g->asym) { /* row sums: [gate][input | recurrent][n_cell], projection */
        for (int q = 0; q < 4; q++) {
            if (q == 0 && g->cifg) continue;
            ti__lstm_row_sums(k->in[TI__LSTM_I2I + q], nc, g->n_input, bf->eff + (size_t)q * 2 * nc);
            ti__lstm_row_sums(k->in[TI__LSTM_R2I + q], nc, no, bf->eff + ((size_t)q * 2 + 1) * nc);
        }
        ti__lstm_row_sums(pwt, no, nc, bf->eff + 8 * (size_t)nc);
        hs.row_sums = bf->eff;
        proj_rs = bf->eff + 8 * (size_t)nc;
    }
    for (int b = 0; b < g->n_batch; b++) {
        for (int j = 0; j < no; j++) h[j] = h0 != NULL ? h0[(size_t)b * no + j] : 0.0f;
        for (int j = 0; j < nc; j++) cell[j] = c0 != NULL ? c0[(size_t)b * nc + j] : 0.0f;
        for (int t = 0; t < g->max_time; t++) {
            const float *xt = x + ti__lstm_row(g, b, t, g->n_input);
            if (g->hybrid) { /* all-zero vectors skip their matmuls, as in TFLite */
                hs.qx = hs.qh = NULL;
                if (!ti__lstm_all_zero(xt, g->n_input)) {
                    ti__lstm_hquant(xt, g->n_input, g->asym, bf->qx, &hs.sx, &hs.zx);
                    hs.qx = bf->qx;
                }
                if (!ti__lstm_all_zero(h, no)) {
                    ti__lstm_hquant(h, no, g->asym, bf->qh, &hs.sh, &hs.zh);
                    hs.qh = bf->qh;
                }
            }
            if (!g->cifg) ti__lstm_fgate(k, g, 0, xt, h, cell, TI__LSTM_SIGMOID, &hs, gi);
            ti__lstm_fgate(k, g, 1, xt, h, cell, TI__LSTM_SIGMOID, &hs, gf);
            ti__lstm_fgate(k, g, 2, xt, h, NULL, act, &hs, gc);
            for (int j = 0; j < nc; j++) {
                float v = gf[j] * cell[j] + gc[j] * (g->cifg ? 1.0f - gf[j] : gi[j]);
                if (cell_clip > 0.0f) v = v > cell_clip ? cell_clip : (v < -cell_clip ? -cell_clip : v);
                cell[j] = v;
            }
            ti__lstm_fgate(k, g, 3, xt, h, cell, TI__LSTM_SIGMOID, &hs, go);
            for (int j = 0; j < nc; j++) tmp[j] = go[j] * ti__lstm_act(act, cell[j]);
            if (pwt != NULL) {
                for (int r = 0; r < no; r++) h[r] = pb != NULL ? pb[r] : 0.0f;
                if (g->hybrid) {
                    if (!ti__lstm_all_zero(tmp, nc)) {
                        float sf;
                        int32_t zp;
                        int8_t *qhid = (int8_t *)bf->hidden;
                        ti__lstm_hquant(tmp, nc, g->asym, qhid, &sf, &zp);
                        ti__lstm_hmatvec(pwt, qhid, sf, zp, proj_rs, no, nc, h);
                    }
                } else {
                    const float *pw = (const float *)pwt->data;
                    for (int r = 0; r < no; r++) {
                        const float *wr = pw + (size_t)r * (size_t)nc;
                        float dot = 0.0f;
                        for (int j = 0; j < nc; j++) dot += wr[j] * tmp[j];
                        h[r] += dot;
                    }
                }
                if (proj_clip > 0.0f)
                    for (int r = 0; r < no; r++)
                        h[r] = h[r] > proj_clip ? proj_clip : (h[r] < -proj_clip ? -proj_clip : h[r]);
            } else {
                memcpy(h, tmp, (size_t)no * sizeof(float));
            }
            memcpy(y + ti__lstm_row(g, b, t, no), h, (size_t)no * sizeof(float));
        }
    }
    return TI_OK;
}

/* ---- op entry points ----------------------------------------------------------------- */
TI__PRIVATE int ti__tfl_lstm_shape(ti__kctx *k) {
    ti__lstm_geom g;
    ti_status st = ti__lstm_geom_get(k, &g);
    if (st != TI_OK) return st;
    if (!g.integer) {
        /* float and hybrid apply the activation to the cell gate and the cell state */
        int act = (int)ti__attr_i(k->node, "fused_activation_function", TI__TFL_ACT_TANH);
        /* NONE leaves TFLite's gate buffers unwritten; other values are not activations. */
        if (act < TI__TFL_ACT_RELU || act > TI__TFL_ACT_SIGN_BIT)
            return ti__kfail(k, TI_ERR_UNSUPPORTED, "fused_activation_function %d", act);
    }
    if (ti__attr_f(k->node, "cell_clip", 0.0f) < 0.0f || ti__attr_f(k->node, "proj_clip", 0.0f) < 0.0f)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "cell_clip and proj_clip must be >= 0");
    const ti_tensor *x = k->in[TI__LSTM_X];
    int64_t dims[3];
    for (int i = 0; i < x->rank; i++) dims[i] = x->shape[i];
    dims[x->rank - 1] = g.n_output;
    if (!ti__set_shape(k->out[0], x->dtype, x->rank, dims))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "output shape is invalid");
    return TI_OK;
}

TI__PRIVATE size_t ti__tfl_lstm_scratch(ti__kctx *k) {
    ti__lstm_geom g;
    if (ti__lstm_geom_get(k, &g) != TI_OK) return 0;
    return ti__lstm_layout(&g, NULL, NULL);
}

TI__PRIVATE ti_status ti__tfl_lstm_run(ti__kctx *k) {
    ti__lstm_geom g;
    ti_status st = ti__lstm_geom_get(k, &g);
    if (st != TI_OK) return st;
    ti__lstm_bufs bf;
    size_t need = ti__lstm_layout(&g, NULL, NULL);
    if (k->scratch == NULL || k->scratch_bytes < need)
        return ti__kfail(k, TI_ERR_INVALID_ARGUMENT, "scratch of %zu bytes, need %zu",
                         k->scratch_bytes, need);
    ti__lstm_layout(&g, (unsigned char *)k->scratch, &bf);
    return g.integer ? ti__lstm_run_int(k, &g, &bf) : ti__lstm_run_float(k, &g, &bf);
}

TI__PRIVATE const ti__op ti__ops_tfl_lstm[] = {
    {"UNIDIRECTIONAL_SEQUENCE_LSTM", ti__tfl_lstm_shape, ti__tfl_lstm_run, ti__tfl_lstm_scratch, 0},
    {NULL, NULL, NULL, NULL, 0}
};
