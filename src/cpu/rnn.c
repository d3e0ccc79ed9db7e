/* Recurrent layers: RNN, GRU and LSTM (ONNX opsets 7-22): forward, reverse and bidirectional,
 * layout 0/1, optional bias, sequence_lens, initial states, LSTM peepholes and input_forget,
 * GRU linear_before_reset, clip, and the activations / activation_alpha / activation_beta
 * attributes. Reference kernels for float32/float64/float16 computing in double.
 * Relies on internal.h and core/tensor.c. Must not allocate in a run function: the state
 * and gate vectors of one (direction, batch) sequence live in the scratch the op asks for. */

enum { TI__RNN_PLAIN, TI__RNN_GRU, TI__RNN_LSTM };

/* Activation functions of the recurrent ops (ONNX RNN spec, "activation functions"). */
enum {
    TI__RACT_RELU,
    TI__RACT_TANH,
    TI__RACT_SIGMOID,
    TI__RACT_AFFINE,
    TI__RACT_LEAKY_RELU,
    TI__RACT_THRESHOLDED_RELU,
    TI__RACT_SCALED_TANH,
    TI__RACT_HARD_SIGMOID,
    TI__RACT_ELU,
    TI__RACT_SOFTSIGN,
    TI__RACT_SOFTPLUS
};

typedef struct ti__ract {
    int kind;
    double alpha, beta;
} ti__ract;

TI__PRIVATE double ti__ract_apply(const ti__ract *a, double x) {
    switch (a->kind) {
    case TI__RACT_RELU: return x > 0.0 ? x : 0.0;
    case TI__RACT_TANH: return tanh(x);
    case TI__RACT_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case TI__RACT_AFFINE: return a->alpha * x + a->beta;
    case TI__RACT_LEAKY_RELU: return x >= 0.0 ? x : a->alpha * x;
    case TI__RACT_THRESHOLDED_RELU: return x > a->alpha ? x : 0.0;
    case TI__RACT_SCALED_TANH: return a->alpha * tanh(a->beta * x);
    case TI__RACT_HARD_SIGMOID: {
        double y = a->alpha * x + a->beta;
        return y < 0.0 ? 0.0 : (y > 1.0 ? 1.0 : y);
    }
    case TI__RACT_ELU: return x >= 0.0 ? x : a->alpha * (exp(x) - 1.0);
    case TI__RACT_SOFTSIGN: return x / (1.0 + fabs(x));
    case TI__RACT_SOFTPLUS: return log1p(exp(x));
    default: return x;
    }
}

/* Name (case-insensitive, as onnxruntime accepts) -> kind, default alpha/beta, and how many
 * of activation_alpha / activation_beta the function consumes. */
TI__PRIVATE int ti__ract_lookup(const char *name, ti__ract *a, int *n_alpha, int *n_beta) {
    static const struct {
        const char *name;
        int kind, n_alpha, n_beta;
        double alpha, beta;
    } tab[] = {
        {"relu", TI__RACT_RELU, 0, 0, 0.0, 0.0},
        {"tanh", TI__RACT_TANH, 0, 0, 0.0, 0.0},
        {"sigmoid", TI__RACT_SIGMOID, 0, 0, 0.0, 0.0},
        {"affine", TI__RACT_AFFINE, 1, 1, 1.0, 0.0},
        {"leakyrelu", TI__RACT_LEAKY_RELU, 1, 0, 0.01, 0.0},
        {"thresholdedrelu", TI__RACT_THRESHOLDED_RELU, 1, 0, 1.0, 0.0},
        {"scaledtanh", TI__RACT_SCALED_TANH, 1, 1, 1.0, 1.0},
        {"hardsigmoid", TI__RACT_HARD_SIGMOID, 1, 1, 0.2, 0.5},
        {"elu", TI__RACT_ELU, 1, 0, 1.0, 0.0},
        {"softsign", TI__RACT_SOFTSIGN, 0, 0, 0.0, 0.0},
        {"softplus", TI__RACT_SOFTPLUS, 0, 0, 0.0, 0.0},
    };
    char low[32];
    size_t n = strlen(name);
    if (n >= sizeof low) return 0;
    for (size_t i = 0; i <= n; i++) {
        char c = name[i];
        low[i] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
    }
    for (size_t i = 0; i < TI__COUNTOF(tab); i++) {
        if (strcmp(low, tab[i].name) == 0) {
            a->kind = tab[i].kind;
            a->alpha = tab[i].alpha;
            a->beta = tab[i].beta;
            *n_alpha = tab[i].n_alpha;
            *n_beta = tab[i].n_beta;
            return 1;
        }
    }
    return 0;
}

typedef struct ti__rnn {
    int kind;
    int g;      /* gates: 1 RNN, 3 GRU (z, r, h), 4 LSTM (i, o, f, c) */
    int n_act;  /* activations per direction: 1, 2, 3 */
    const ti_tensor *x, *w, *r, *bias, *seq, *h0, *c0, *peep;
    ti_tensor *y, *yh, *yc;
    int64_t s, b, in, h;
    int dirs;   /* 1 or 2 */
    int reverse; /* direction "reverse" (only with dirs == 1) */
    int layout;
    double clip; /* <= 0: none */
    int lbr;     /* GRU linear_before_reset */
    int input_forget;
    ti__ract act[2][3];
} ti__rnn;

TI__PRIVATE int ti__rnn_setup(ti__kctx *k, ti__rnn *p, int set_outputs) {
    memset(p, 0, sizeof *p);
    const ti__node *n = k->node;
    const char *op = n->op;
    p->kind = strcmp(op, "LSTM") == 0 ? TI__RNN_LSTM : strcmp(op, "GRU") == 0 ? TI__RNN_GRU
                                                                               : TI__RNN_PLAIN;
    p->g = p->kind == TI__RNN_LSTM ? 4 : p->kind == TI__RNN_GRU ? 3 : 1;
    p->n_act = p->kind == TI__RNN_LSTM ? 3 : p->kind == TI__RNN_GRU ? 2 : 1;
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    TI__REQUIRE_INPUT(k, 2);
    p->x = k->in[0];
    p->w = k->in[1];
    p->r = k->in[2];
    p->bias = k->n_in > 3 ? k->in[3] : NULL;
    p->seq = k->n_in > 4 ? k->in[4] : NULL;
    p->h0 = k->n_in > 5 ? k->in[5] : NULL;
    p->c0 = p->kind == TI__RNN_LSTM && k->n_in > 6 ? k->in[6] : NULL;
    p->peep = p->kind == TI__RNN_LSTM && k->n_in > 7 ? k->in[7] : NULL;
    p->y = k->n_out > 0 ? k->out[0] : NULL;
    p->yh = k->n_out > 1 ? k->out[1] : NULL;
    p->yc = p->kind == TI__RNN_LSTM && k->n_out > 2 ? k->out[2] : NULL;
    const ti_tensor *x = p->x;
    ti_dtype dt = x->dtype;
    if (dt != TI_DTYPE_F32 && dt != TI_DTYPE_F64 && dt != TI_DTYPE_F16)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "X dtype %s: float32, float64 or float16 only",
                         ti_dtype_name(dt));
    const ti_tensor *same[6];
    same[0] = p->w, same[1] = p->r, same[2] = p->bias, same[3] = p->h0, same[4] = p->c0,
    same[5] = p->peep;
    for (int i = 0; i < 6; i++)
        if (same[i] != NULL && same[i]->dtype != dt)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "input dtype %s differs from X dtype %s",
                             ti_dtype_name(same[i]->dtype), ti_dtype_name(dt));
    const char *dir = ti__attr_s(n, "direction", "forward");
    if (strcmp(dir, "forward") == 0) p->dirs = 1;
    else if (strcmp(dir, "reverse") == 0) p->dirs = 1, p->reverse = 1;
    else if (strcmp(dir, "bidirectional") == 0) p->dirs = 2;
    else
        return ti__kfail(k, TI_ERR_BAD_MODEL,
                         "direction '%s' is not forward, reverse or bidirectional", dir);
    int64_t layout = ti__attr_i(n, "layout", 0);
    if (layout != 0 && layout != 1)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "layout %lld is not 0 or 1", (long long)layout);
    p->layout = (int)layout;
    if (x->rank != 3)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "X has rank %d, expected 3", x->rank);
    p->s = p->layout ? x->shape[1] : x->shape[0];
    p->b = p->layout ? x->shape[0] : x->shape[1];
    p->in = x->shape[2];
    if (p->r->rank != 3)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "R has rank %d, expected 3", p->r->rank);
    p->h = ti__attr_i(n, "hidden_size", p->r->shape[2]);
    int64_t gh = p->g * p->h, dirs = p->dirs;
    if (p->h <= 0 || p->w->rank != 3 || p->w->shape[0] != dirs || p->w->shape[1] != gh ||
        p->w->shape[2] != p->in)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "W must have shape [%lld, %lld, %lld]",
                         (long long)dirs, (long long)gh, (long long)p->in);
    if (p->r->shape[0] != dirs || p->r->shape[1] != gh || p->r->shape[2] != p->h)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "R must have shape [%lld, %lld, %lld]",
                         (long long)dirs, (long long)gh, (long long)p->h);
    if (p->bias != NULL &&
        (p->bias->rank != 2 || p->bias->shape[0] != dirs || p->bias->shape[1] != 2 * gh))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "B must have shape [%lld, %lld]", (long long)dirs,
                         (long long)(2 * gh));
    if (p->seq != NULL &&
        (!ti__dtype_is_int(p->seq->dtype) || p->seq->rank != 1 || p->seq->shape[0] != p->b))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "sequence_lens must be integer [%lld]",
                         (long long)p->b);
    int64_t st[3];
    st[0] = p->layout ? p->b : dirs;
    st[1] = p->layout ? dirs : p->b;
    st[2] = p->h;
    const ti_tensor *states[2];
    states[0] = p->h0, states[1] = p->c0;
    for (int i = 0; i < 2; i++) {
        const ti_tensor *t = states[i];
        if (t != NULL && (t->rank != 3 || t->shape[0] != st[0] || t->shape[1] != st[1] ||
                          t->shape[2] != st[2]))
            return ti__kfail(k, TI_ERR_BAD_MODEL, "%s must have shape [%lld, %lld, %lld]",
                             i == 0 ? "initial_h" : "initial_c", (long long)st[0],
                             (long long)st[1], (long long)st[2]);
    }
    if (p->peep != NULL &&
        (p->peep->rank != 2 || p->peep->shape[0] != dirs || p->peep->shape[1] != 3 * p->h))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "P must have shape [%lld, %lld]", (long long)dirs,
                         (long long)(3 * p->h));
    p->clip = ti__attr_get(n, "clip") != NULL ? (double)ti__attr_f(n, "clip", 0.0f) : 0.0;
    if (ti__attr_get(n, "clip") != NULL && p->clip <= 0.0)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "clip %g must be positive", p->clip);
    p->lbr = ti__attr_i(n, "linear_before_reset", 0) != 0;
    p->input_forget = ti__attr_i(n, "input_forget", 0) != 0;

    /* activations: defaults f = Sigmoid (Tanh for RNN), g = h = Tanh */
    int na, nb;
    for (int d = 0; d < 2; d++)
        for (int i = 0; i < 3; i++) {
            ti__ract_lookup(p->kind != TI__RNN_PLAIN && i == 0 ? "Sigmoid" : "Tanh",
                            &p->act[d][i], &na, &nb);
        }
    const ti__attr *acts = ti__attr_get(n, "activations");
    if (acts != NULL && acts->type == TI__ATTR_STRINGS && acts->count > 0) {
        if (acts->count != p->n_act * p->dirs && acts->count != p->n_act)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "activations has %d names, expected %d",
                             acts->count, p->n_act * p->dirs);
        int n_alpha, n_beta, ai = 0, bi = 0;
        const float *alphas = ti__attr_floats(n, "activation_alpha", &n_alpha);
        const float *betas = ti__attr_floats(n, "activation_beta", &n_beta);
        for (int i = 0; i < acts->count; i++) {
            ti__ract *a = &p->act[i / p->n_act][i % p->n_act];
            if (!ti__ract_lookup(acts->strings[i], a, &na, &nb))
                return ti__kfail(k, TI_ERR_UNSUPPORTED, "activation '%s' is not supported",
                                 acts->strings[i]);
            if (na > 0 && ai < n_alpha) a->alpha = alphas[ai++];
            if (nb > 0 && bi < n_beta) a->beta = betas[bi++];
        }
        if (acts->count == p->n_act && p->dirs == 2)
            for (int i = 0; i < p->n_act; i++) p->act[1][i] = p->act[0][i];
    }
    if (!set_outputs) return TI_OK;
    int64_t yd[4];
    if (p->layout) yd[0] = p->b, yd[1] = p->s, yd[2] = dirs, yd[3] = p->h;
    else yd[0] = p->s, yd[1] = dirs, yd[2] = p->b, yd[3] = p->h;
    if (p->y != NULL && !ti__set_shape(p->y, dt, 4, yd))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid Y shape");
    if (p->yh != NULL && !ti__set_shape(p->yh, dt, 3, st))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid Y_h shape");
    if (p->yc != NULL && !ti__set_shape(p->yc, dt, 3, st))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid Y_c shape");
    return TI_OK;
}

TI__PRIVATE int ti__rnn_shape(ti__kctx *k) {
    ti__rnn p;
    return ti__rnn_setup(k, &p, 1);
}

/* Scratch in doubles: h, c, tmp (hidden each), gx, gh (gates * hidden each), x (input). */
TI__PRIVATE size_t ti__rnn_scratch_doubles(const ti__rnn *p) {
    return (size_t)(3 * p->h + 2 * p->g * p->h + p->in);
}

TI__PRIVATE size_t ti__rnn_scratch(ti__kctx *k) {
    ti__rnn p;
    if (ti__rnn_setup(k, &p, 0) != TI_OK) return 0;
    return ti__rnn_scratch_doubles(&p) * sizeof(double);
}

/* out[o] = sum_i m[(row0 + o) * cols + i] * v[i] for o < rows; m is [dirs, G*H, cols]. */
TI__PRIVATE void ti__rnn_matvec(const ti_tensor *m, size_t base, int64_t rows, int64_t cols,
                                const double *v, double *out) {
    for (int64_t o = 0; o < rows; o++) {
        size_t off = base + (size_t)(o * cols);
        double acc = 0.0;
        switch (m->dtype) {
        case TI_DTYPE_F32: {
            const float *w = (const float *)m->data + off;
            for (int64_t i = 0; i < cols; i++) acc += (double)w[i] * v[i];
            break;
        }
        case TI_DTYPE_F64: {
            const double *w = (const double *)m->data + off;
            for (int64_t i = 0; i < cols; i++) acc += w[i] * v[i];
            break;
        }
        default:
            for (int64_t i = 0; i < cols; i++) acc += ti__get_f64(m, off + (size_t)i) * v[i];
            break;
        }
        out[o] = acc;
    }
}

/* Offset of state (dir, batch, 0) in initial_h / Y_h-shaped tensors. */
TI__PRIVATE size_t ti__rnn_state_off(const ti__rnn *p, int d, int64_t b) {
    return p->layout ? (size_t)((b * p->dirs + d) * p->h) : (size_t)((d * p->b + b) * p->h);
}

TI__PRIVATE double ti__rnn_clip(const ti__rnn *p, double v) {
    if (p->clip > 0.0) v = v < -p->clip ? -p->clip : (v > p->clip ? p->clip : v);
    return v;
}

/* Runs one direction over one batch entry for len steps. */
TI__PRIVATE void ti__rnn_sequence(const ti__rnn *p, int d, int64_t b, int64_t len, double *buf) {
    const int64_t H = p->h, G = p->g, I = p->in;
    double *h = buf, *c = h + H, *tmp = c + H, *gx = tmp + H, *gh = gx + G * H, *xv = gh + G * H;
    int rev = p->dirs == 2 ? d == 1 : p->reverse;
    size_t so = ti__rnn_state_off(p, d, b);
    for (int64_t j = 0; j < H; j++) {
        h[j] = p->h0 != NULL ? ti__get_f64(p->h0, so + (size_t)j) : 0.0;
        c[j] = p->c0 != NULL ? ti__get_f64(p->c0, so + (size_t)j) : 0.0;
    }
    const ti__ract *f = &p->act[d][0], *g = &p->act[d][1 % p->n_act], *ha = &p->act[d][2 % p->n_act];
    size_t wbase = (size_t)(d * G * H * I), rbase = (size_t)(d * G * H * H);
    size_t bb = (size_t)(d * 2 * G * H), pb = (size_t)(d * 3 * H);
#define TI__RNN_WB(i) (p->bias != NULL ? ti__get_f64(p->bias, bb + (size_t)(i)) : 0.0)
#define TI__RNN_RB(i) (p->bias != NULL ? ti__get_f64(p->bias, bb + (size_t)(G * H + (i))) : 0.0)
    for (int64_t step = 0; step < len; step++) {
        int64_t t = rev ? len - 1 - step : step;
        size_t xo = p->layout ? (size_t)((b * p->s + t) * I) : (size_t)((t * p->b + b) * I);
        for (int64_t i = 0; i < I; i++) xv[i] = ti__get_f64(p->x, xo + (size_t)i);
        ti__rnn_matvec(p->w, wbase, G * H, I, xv, gx);
        if (p->kind == TI__RNN_PLAIN) {
            ti__rnn_matvec(p->r, rbase, H, H, h, gh);
            for (int64_t j = 0; j < H; j++)
                h[j] = ti__ract_apply(f, ti__rnn_clip(p, gx[j] + gh[j] + TI__RNN_WB(j) + TI__RNN_RB(j)));
        } else if (p->kind == TI__RNN_GRU) {
            /* gates z, r, h; R_h is applied to h (linear_before_reset) or to r * h */
            ti__rnn_matvec(p->r, rbase, (p->lbr ? 3 : 2) * H, H, h, gh);
            for (int64_t j = 0; j < 2 * H; j++)
                gx[j] = ti__ract_apply(f, ti__rnn_clip(p, gx[j] + gh[j] + TI__RNN_WB(j) + TI__RNN_RB(j)));
            const double *z = gx, *r = gx + H;
            if (!p->lbr) {
                for (int64_t j = 0; j < H; j++) tmp[j] = r[j] * h[j];
                ti__rnn_matvec(p->r, rbase + (size_t)(2 * H * H), H, H, tmp, gh + 2 * H);
            }
            for (int64_t j = 0; j < H; j++) {
                int64_t q = 2 * H + j;
                double pre = p->lbr ? gx[q] + TI__RNN_WB(q) + r[j] * (gh[q] + TI__RNN_RB(q))
                                    : gx[q] + TI__RNN_WB(q) + TI__RNN_RB(q) + gh[q];
                double hh = ti__ract_apply(g, ti__rnn_clip(p, pre));
                tmp[j] = (1.0 - z[j]) * hh + z[j] * h[j];
            }
            for (int64_t j = 0; j < H; j++) h[j] = tmp[j];
        } else {
            /* gates i, o, f, c; peepholes P = [Pi, Po, Pf] */
            ti__rnn_matvec(p->r, rbase, 4 * H, H, h, gh);
            for (int64_t j = 0; j < 4 * H; j++) gx[j] += gh[j] + TI__RNN_WB(j) + TI__RNN_RB(j);
            for (int64_t j = 0; j < H; j++) {
                double pi = p->peep != NULL ? ti__get_f64(p->peep, pb + (size_t)j) : 0.0;
                double po = p->peep != NULL ? ti__get_f64(p->peep, pb + (size_t)(H + j)) : 0.0;
                double pf = p->peep != NULL ? ti__get_f64(p->peep, pb + (size_t)(2 * H + j)) : 0.0;
                double ig = ti__ract_apply(f, ti__rnn_clip(p, gx[j] + pi * c[j]));
                double fg = p->input_forget
                                ? 1.0 - ig
                                : ti__ract_apply(f, ti__rnn_clip(p, gx[2 * H + j] + pf * c[j]));
                double cg = ti__ract_apply(g, ti__rnn_clip(p, gx[3 * H + j]));
                double cn = fg * c[j] + ig * cg;
                double og = ti__ract_apply(f, ti__rnn_clip(p, gx[H + j] + po * cn));
                c[j] = cn;
                h[j] = og * ti__ract_apply(ha, cn);
            }
        }
        if (p->y != NULL) {
            size_t yo = p->layout ? (size_t)(((b * p->s + t) * p->dirs + d) * H)
                                  : (size_t)(((t * p->dirs + d) * p->b + b) * H);
            for (int64_t j = 0; j < H; j++) ti__set_f64(p->y, yo + (size_t)j, h[j]);
        }
    }
#undef TI__RNN_WB
#undef TI__RNN_RB
    /* steps past this entry's length stay zero in Y */
    if (p->y != NULL)
        for (int64_t t = len; t < p->s; t++) {
            size_t yo = p->layout ? (size_t)(((b * p->s + t) * p->dirs + d) * H)
                                  : (size_t)(((t * p->dirs + d) * p->b + b) * H);
            for (int64_t j = 0; j < H; j++) ti__set_f64(p->y, yo + (size_t)j, 0.0);
        }
    for (int64_t j = 0; j < H; j++) {
        if (p->yh != NULL) ti__set_f64(p->yh, so + (size_t)j, h[j]);
        if (p->yc != NULL) ti__set_f64(p->yc, so + (size_t)j, c[j]);
    }
}

TI__PRIVATE ti_status ti__rnn_run(ti__kctx *k) {
    ti__rnn p;
    int st = ti__rnn_setup(k, &p, 0);
    if (st != TI_OK) return (ti_status)st;
    size_t need = ti__rnn_scratch_doubles(&p) * sizeof(double);
    if (k->scratch == NULL || k->scratch_bytes < need)
        return ti__kfail(k, TI_ERR_INVALID_ARGUMENT, "scratch of %zu bytes is too small (%zu)",
                         k->scratch_bytes, need);
    if (p.seq != NULL)
        for (int64_t b = 0; b < p.b; b++) {
            int64_t len = ti__get_i64(p.seq, (size_t)b);
            if (len < 0 || len > p.s)
                return ti__kfail(k, TI_ERR_INVALID_ARGUMENT,
                                 "sequence_lens[%lld] = %lld is outside [0, %lld]", (long long)b,
                                 (long long)len, (long long)p.s);
        }
    for (int d = 0; d < p.dirs; d++)
        for (int64_t b = 0; b < p.b; b++) {
            int64_t len = p.seq != NULL ? ti__get_i64(p.seq, (size_t)b) : p.s;
            ti__rnn_sequence(&p, d, b, len, (double *)k->scratch);
        }
    return TI_OK;
}

TI__PRIVATE const ti__op ti__ops_rnn[] = {
    {"RNN", ti__rnn_shape, ti__rnn_run, ti__rnn_scratch, 0},
    {"GRU", ti__rnn_shape, ti__rnn_run, ti__rnn_scratch, 0},
    {"LSTM", ti__rnn_shape, ti__rnn_run, ti__rnn_scratch, 0},
    {NULL, NULL, NULL, NULL, 0}
};
