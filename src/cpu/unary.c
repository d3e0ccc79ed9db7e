/* Elementwise one-input ops: math functions, activations, Clip, Cast/CastLike, logical and
 * bitwise Not, IsNaN/IsInf. float32 runs typed loops split over the thread pool; float64
 * computes in double; float16/bfloat16 compute in float; integer ops go through int64 /
 * uint64 values. Relies on tensor.c, ir.c, and binary.c (earlier in the amalgamation) for
 * the dtype masks TI__EDT_* and the value carriers. Must not allocate: every run writes
 * the planned output. */

#define TI__UNARY_GRAIN 16384 /* elements per thread-pool task for float32 loops */

/* Checks that input 0 exists and has a dtype in `mask`, then gives output 0 its shape with
 * dtype out_dt (TI_DTYPE_UNKNOWN: the input's dtype). */
TI__PRIVATE int ti__unary_check(ti__kctx *k, unsigned mask, ti_dtype out_dt) {
    TI__REQUIRE_INPUT(k, 0);
    const ti_tensor *x = k->in[0];
    if (!TI__EDT_IN(x->dtype, mask))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "dtype %s is not supported",
                         ti_dtype_name(x->dtype));
    if (k->n_out < 1 || k->out[0] == NULL)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "output 0 is required");
    if (!ti__set_shape(k->out[0], out_dt == TI_DTYPE_UNKNOWN ? x->dtype : out_dt, x->rank,
                       x->shape))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "output shape is invalid");
    return TI_OK;
}

/* ---- scalar helpers ---------------------------------------------------------------- */
/* Round half to even without relying on the floating-point environment. */
TI__PRIVATE float ti__round_even_f(float x) {
    float r = floorf(x), d = x - r;
    if (d > 0.5f || (d == 0.5f && fmodf(r, 2.0f) != 0.0f)) r += 1.0f;
    return r;
}
TI__PRIVATE double ti__round_even_d(double x) {
    double r = floor(x), d = x - r;
    if (d > 0.5 || (d == 0.5 && fmod(r, 2.0) != 0.0)) r += 1.0;
    return r;
}
/* log(1 + exp(x)) without overflow for large x */
TI__PRIVATE float ti__softplus_f(float x) {
    return x > 0.0f ? x + log1pf(expf(-x)) : log1pf(expf(x));
}
TI__PRIVATE double ti__softplus_d(double x) {
    return x > 0.0 ? x + log1p(exp(-x)) : log1p(exp(x));
}
/* 1 / (1 + exp(-x)), the same formula as the fused TI__ACT_SIGMOID. Below x = -88, exp(-x)
 * overflows to inf and the result is 0 (the true value is under 1e-38). */
TI__PRIVATE float ti__sigmoid_f(float x) { return 1.0f / (1.0f + expf(-x)); }
TI__PRIVATE double ti__sigmoid_d(double x) { return 1.0 / (1.0 + exp(-x)); }
/* Gelu: mode 0 exact (erf), mode 1 the tanh approximation. */
TI__PRIVATE float ti__gelu_f(float x, int mode) {
    if (mode == 1) {
        float u = 0.7978845608028654f * (x + 0.044715f * x * x * x); /* sqrt(2/pi) */
        return 0.5f * x * (1.0f + tanhf(u));
    }
    return 0.5f * x * (1.0f + erff(x * 0.7071067811865476f));
}
TI__PRIVATE double ti__gelu_d(double x, int mode) {
    if (mode == 1) {
        double u = 0.7978845608028654 * (x + 0.044715 * x * x * x);
        return 0.5 * x * (1.0 + tanh(u));
    }
    return 0.5 * x * (1.0 + erf(x * 0.7071067811865476));
}
TI__PRIVATE float ti__sign_f(float x) { return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : x); }
TI__PRIVATE double ti__sign_d(double x) { return x > 0.0 ? 1.0 : (x < 0.0 ? -1.0 : x); }

/* ---- float ops: one macro per op makes the float32 range loop and the dtype switch ---- */
/* Attribute values of the op, read once per run. */
typedef struct ti__uprm {
    double a, b; /* alpha/beta, gamma, lambd/bias, clip bounds */
    int mode;    /* Gelu approximation; IsInf flags */
} ti__uprm;

typedef struct ti__ujob {
    const void *x;
    void *y;
    ti__uprm p;
} ti__ujob;

/* FEXPR computes a float from float `x`, DEXPR a double from double `x`; both may use the
 * parameters pa, pb (converted to the compute type) and pm (int). */
#define TI__UNARY_FLOAT_OP(NAME, FEXPR, DEXPR)                                                \
    TI__PRIVATE void ti__unary_##NAME##_f32(void *ctx, size_t begin, size_t end) {            \
        const ti__ujob *j = (const ti__ujob *)ctx;                                            \
        const float *xs = (const float *)j->x;                                                \
        float *ys = (float *)j->y;                                                            \
        const float pa = (float)j->p.a, pb = (float)j->p.b;                                   \
        const int pm = j->p.mode;                                                             \
        (void)pa, (void)pb, (void)pm;                                                         \
        for (size_t i = begin; i < end; i++) {                                                \
            const float x = xs[i];                                                            \
            ys[i] = (FEXPR);                                                                  \
        }                                                                                     \
    }                                                                                         \
    TI__PRIVATE void ti__unary_##NAME##_float(ti__kctx *k, const ti__uprm *p) {               \
        ti__ujob j;                                                                           \
        j.x = k->in[0]->data;                                                                 \
        j.y = k->out[0]->data;                                                                \
        j.p = *p;                                                                             \
        const size_t n = ti__numel(k->in[0]);                                                 \
        const float pa = (float)p->a, pb = (float)p->b;                                       \
        const int pm = p->mode;                                                               \
        (void)pa, (void)pb, (void)pm;                                                         \
        switch (k->in[0]->dtype) {                                                            \
        case TI_DTYPE_F32:                                                                    \
            ti__parallel_for(k->tp, n, TI__UNARY_GRAIN, ti__unary_##NAME##_f32, &j);          \
            break;                                                                            \
        case TI_DTYPE_F64: {                                                                  \
            const double *xs = (const double *)j.x;                                           \
            double *ys = (double *)j.y;                                                       \
            const double da = p->a, db = p->b;                                                \
            (void)da, (void)db;                                                               \
            for (size_t i = 0; i < n; i++) {                                                  \
                const double x = xs[i];                                                       \
                ys[i] = (DEXPR);                                                              \
            }                                                                                 \
        } break;                                                                              \
        case TI_DTYPE_F16: {                                                                  \
            const uint16_t *xs = (const uint16_t *)j.x;                                       \
            uint16_t *ys = (uint16_t *)j.y;                                                   \
            for (size_t i = 0; i < n; i++) {                                                  \
                const float x = ti__f16_to_f32(xs[i]);                                        \
                ys[i] = ti__f32_to_f16(FEXPR);                                                \
            }                                                                                 \
        } break;                                                                              \
        case TI_DTYPE_BF16: {                                                                 \
            const uint16_t *xs = (const uint16_t *)j.x;                                       \
            uint16_t *ys = (uint16_t *)j.y;                                                   \
            for (size_t i = 0; i < n; i++) {                                                  \
                const float x = ti__bf16_to_f32(xs[i]);                                       \
                ys[i] = ti__f32_to_bf16(FEXPR);                                               \
            }                                                                                 \
        } break;                                                                              \
        default: break;                                                                       \
        }                                                                                     \
    }

/* In DEXPR the parameters are da, db (double) and pm. */
TI__UNARY_FLOAT_OP(abs, fabsf(x), fabs(x))
TI__UNARY_FLOAT_OP(neg, -x, -x)
TI__UNARY_FLOAT_OP(sign, ti__sign_f(x), ti__sign_d(x))
TI__UNARY_FLOAT_OP(relu, x < 0.0f ? 0.0f : x, x < 0.0 ? 0.0 : x) /* NaN stays NaN */
TI__UNARY_FLOAT_OP(reciprocal, 1.0f / x, 1.0 / x)
TI__UNARY_FLOAT_OP(sqrt, sqrtf(x), sqrt(x))
TI__UNARY_FLOAT_OP(exp, expf(x), exp(x))
TI__UNARY_FLOAT_OP(log, logf(x), log(x))
TI__UNARY_FLOAT_OP(ceil, ceilf(x), ceil(x))
TI__UNARY_FLOAT_OP(floor, floorf(x), floor(x))
TI__UNARY_FLOAT_OP(round, ti__round_even_f(x), ti__round_even_d(x))
TI__UNARY_FLOAT_OP(sin, sinf(x), sin(x))
TI__UNARY_FLOAT_OP(cos, cosf(x), cos(x))
TI__UNARY_FLOAT_OP(tan, tanf(x), tan(x))
TI__UNARY_FLOAT_OP(asin, asinf(x), asin(x))
TI__UNARY_FLOAT_OP(acos, acosf(x), acos(x))
TI__UNARY_FLOAT_OP(atan, atanf(x), atan(x))
TI__UNARY_FLOAT_OP(sinh, sinhf(x), sinh(x))
TI__UNARY_FLOAT_OP(cosh, coshf(x), cosh(x))
TI__UNARY_FLOAT_OP(asinh, asinhf(x), asinh(x))
TI__UNARY_FLOAT_OP(acosh, acoshf(x), acosh(x))
TI__UNARY_FLOAT_OP(atanh, atanhf(x), atanh(x))
TI__UNARY_FLOAT_OP(erf, erff(x), erf(x))
TI__UNARY_FLOAT_OP(tanh, tanhf(x), tanh(x))
TI__UNARY_FLOAT_OP(sigmoid, ti__sigmoid_f(x), ti__sigmoid_d(x))
TI__UNARY_FLOAT_OP(softplus, ti__softplus_f(x), ti__softplus_d(x))
TI__UNARY_FLOAT_OP(softsign, x / (1.0f + fabsf(x)), x / (1.0 + fabs(x)))
TI__UNARY_FLOAT_OP(mish, x * tanhf(ti__softplus_f(x)), x * tanh(ti__softplus_d(x)))
TI__UNARY_FLOAT_OP(gelu, ti__gelu_f(x, pm), ti__gelu_d(x, pm))
TI__UNARY_FLOAT_OP(leaky_relu, x >= 0.0f ? x : pa * x, x >= 0.0 ? x : da * x)
TI__UNARY_FLOAT_OP(elu, x >= 0.0f ? x : pa * expm1f(x), x >= 0.0 ? x : da * expm1(x))
/* Selu: pa = alpha, pb = gamma */
TI__UNARY_FLOAT_OP(selu, x > 0.0f ? pb * x : pb * pa * expm1f(x),
                   x > 0.0 ? db * x : db * da * expm1(x))
TI__UNARY_FLOAT_OP(celu, x >= 0.0f ? x : pa * expm1f(x / pa), x >= 0.0 ? x : da * expm1(x / da))
/* HardSigmoid: max(0, min(1, alpha * x + beta)) */
TI__UNARY_FLOAT_OP(hard_sigmoid, TI__MAX(0.0f, TI__MIN(1.0f, pa * x + pb)),
                   TI__MAX(0.0, TI__MIN(1.0, da * x + db)))
TI__UNARY_FLOAT_OP(hard_swish, x * TI__MAX(0.0f, TI__MIN(1.0f, x * (1.0f / 6.0f) + 0.5f)),
                   x * TI__MAX(0.0, TI__MIN(1.0, x * (1.0 / 6.0) + 0.5)))
TI__UNARY_FLOAT_OP(thresholded_relu, x > pa ? x : 0.0f, x > da ? x : 0.0)
/* Shrink: pa = lambd, pb = bias */
TI__UNARY_FLOAT_OP(shrink, x < -pa ? x + pb : (x > pa ? x - pb : 0.0f),
                   x < -da ? x + db : (x > da ? x - db : 0.0))
TI__UNARY_FLOAT_OP(swish, x * ti__sigmoid_f(pa * x), x * ti__sigmoid_d(da * x))
/* Clip: pa = min, pb = max; min > max gives max, as the spec says */
TI__UNARY_FLOAT_OP(clip, (x < pa ? pa : x) > pb ? pb : (x < pa ? pa : x),
                   (x < da ? da : x) > db ? db : (x < da ? da : x))

/* Fills the attribute parameters of the ops that have them (defaults from the spec). */
TI__PRIVATE void ti__unary_params(const ti__kctx *k, ti__uprm *p) {
    const ti__node *n = k->node;
    const char *op = n->op;
    p->a = 0.0;
    p->b = 0.0;
    p->mode = 0;
    if (strcmp(op, "LeakyRelu") == 0) p->a = ti__attr_f(n, "alpha", 0.01f);
    else if (strcmp(op, "Elu") == 0 || strcmp(op, "Celu") == 0 ||
             strcmp(op, "ThresholdedRelu") == 0 || strcmp(op, "Swish") == 0)
        p->a = ti__attr_f(n, "alpha", 1.0f);
    else if (strcmp(op, "Selu") == 0) {
        p->a = ti__attr_f(n, "alpha", 1.67326319217681884765625f);
        p->b = ti__attr_f(n, "gamma", 1.05070102214813232421875f);
    } else if (strcmp(op, "HardSigmoid") == 0) {
        p->a = ti__attr_f(n, "alpha", 0.2f);
        p->b = ti__attr_f(n, "beta", 0.5f);
    } else if (strcmp(op, "Shrink") == 0) {
        p->a = ti__attr_f(n, "lambd", 0.5f);
        p->b = ti__attr_f(n, "bias", 0.0f);
    } else if (strcmp(op, "Gelu") == 0) {
        p->mode = strcmp(ti__attr_s(n, "approximate", "none"), "tanh") == 0;
    }
}

TI__PRIVATE int ti__unary_float_shape(ti__kctx *k) {
    return ti__unary_check(k, TI__EDT_FLOAT, TI_DTYPE_UNKNOWN);
}

#define TI__UNARY_FLOAT_RUN(NAME)                                                             \
    TI__PRIVATE ti_status ti__unary_##NAME##_run(ti__kctx *k) {                               \
        ti__uprm p;                                                                           \
        ti__unary_params(k, &p);                                                              \
        ti__unary_##NAME##_float(k, &p);                                                      \
        return TI_OK;                                                                         \
    }
TI__UNARY_FLOAT_RUN(reciprocal)
TI__UNARY_FLOAT_RUN(sqrt)
TI__UNARY_FLOAT_RUN(exp)
TI__UNARY_FLOAT_RUN(log)
TI__UNARY_FLOAT_RUN(ceil)
TI__UNARY_FLOAT_RUN(floor)
TI__UNARY_FLOAT_RUN(round)
TI__UNARY_FLOAT_RUN(sin)
TI__UNARY_FLOAT_RUN(cos)
TI__UNARY_FLOAT_RUN(tan)
TI__UNARY_FLOAT_RUN(asin)
TI__UNARY_FLOAT_RUN(acos)
TI__UNARY_FLOAT_RUN(atan)
TI__UNARY_FLOAT_RUN(sinh)
TI__UNARY_FLOAT_RUN(cosh)
TI__UNARY_FLOAT_RUN(asinh)
TI__UNARY_FLOAT_RUN(acosh)
TI__UNARY_FLOAT_RUN(atanh)
/* float32 over [begin, end) of a job by ti__NAME_avx512, _avx2 or _neon (the widest the CPU
 * allows: cpu/x86/act_x86.c, cpu/arm/act_neon.c), else by the scalar loop
 * ti__unary_NAME_f32. */
#ifdef TI__X86_SIMD
#define TI__UNARY_VEC_BODY(NAME)                                                              \
    int isa = ti__cpu_isa();                                                                  \
    if (isa >= TI__ISA_AVX512) {                                                              \
        ti__##NAME##_avx512(x, y, end - begin);                                               \
        return;                                                                               \
    }                                                                                         \
    if (isa >= TI__ISA_AVX2) {                                                                \
        ti__##NAME##_avx2(x, y, end - begin);                                                 \
        return;                                                                               \
    }
#elif defined(TI__ARM_NEON)
#define TI__UNARY_VEC_BODY(NAME)                                                              \
    if (ti__cpu_isa() >= TI__ISA_NEON) {                                                      \
        ti__##NAME##_neon(x, y, end - begin);                                                 \
        return;                                                                               \
    }
#else
#define TI__UNARY_VEC_BODY(NAME)
#endif
#define TI__UNARY_VEC_OP(NAME)                                                                \
    TI__PRIVATE void ti__unary_##NAME##_vec(void *ctx, size_t begin, size_t end) {            \
        const ti__ujob *j = (const ti__ujob *)ctx;                                            \
        const float *x = (const float *)j->x + begin;                                         \
        float *y = (float *)j->y + begin;                                                     \
        (void)x, (void)y;                                                                     \
        TI__UNARY_VEC_BODY(NAME)                                                              \
        ti__unary_##NAME##_f32(ctx, begin, end);                                              \
    }

/* Runs a float32 unary op over the whole tensor by fn (a ti__unary_NAME_vec). */
TI__PRIVATE void ti__unary_vec_go(ti__kctx *k, const ti__uprm *p, ti__range_fn fn) {
    ti__ujob j;
    j.x = k->in[0]->data;
    j.y = k->out[0]->data;
    j.p = *p;
    ti__parallel_for(k->tp, ti__numel(k->in[0]), TI__UNARY_GRAIN, fn, &j);
}

/* Erf: TI__ERF_P / Q, within 3.2e-7 relative of erf, where erff is within an ulp */
TI__UNARY_VEC_OP(erf)
TI__PRIVATE ti_status ti__unary_erf_run(ti__kctx *k) {
    ti__uprm p;
    ti__unary_params(k, &p);
    if (k->in[0]->dtype == TI_DTYPE_F32) ti__unary_vec_go(k, &p, ti__unary_erf_vec);
    else ti__unary_erf_float(k, &p);
    return TI_OK;
}
TI__UNARY_FLOAT_RUN(tanh)
TI__UNARY_FLOAT_RUN(softplus)
TI__UNARY_FLOAT_RUN(softsign)
TI__UNARY_FLOAT_RUN(mish)
TI__UNARY_FLOAT_RUN(gelu)
TI__UNARY_FLOAT_RUN(leaky_relu)
TI__UNARY_FLOAT_RUN(elu)
TI__UNARY_FLOAT_RUN(selu)
TI__UNARY_FLOAT_RUN(celu)
TI__UNARY_FLOAT_RUN(hard_sigmoid)
TI__UNARY_FLOAT_RUN(hard_swish)
TI__UNARY_FLOAT_RUN(thresholded_relu)
TI__UNARY_FLOAT_RUN(shrink)
TI__UNARY_FLOAT_RUN(swish)

/* Sigmoid on float32 by ti__act_block: the vector arithmetic (a few ulp from expf) that the
 * fused TI__ACT_SIGMOID of Conv, Gemm, MatMul, Add and Mul runs, so that fusing a Sigmoid
 * does not change its bits (the scalar 1 / (1 + expf(-x)) here made the fused and unfused
 * graphs depend on the vector form matching expf's rounding). */
TI__PRIVATE void ti__unary_sigmoid_vec(void *ctx, size_t begin, size_t end) {
    const ti__ujob *j = (const ti__ujob *)ctx;
    const float *xs = (const float *)j->x + begin;
    float *ys = (float *)j->y + begin;
    if (ys != xs) memcpy(ys, xs, (end - begin) * sizeof(float));
    ti__act_block(TI__ACT_SIGMOID, 0.0f, 0.0f, NULL, ys, end - begin, 1, end - begin);
}

TI__PRIVATE ti_status ti__unary_sigmoid_run(ti__kctx *k) {
    if (k->in[0]->dtype == TI_DTYPE_F32) {
        ti__ujob j;
        memset(&j, 0, sizeof j);
        j.x = k->in[0]->data;
        j.y = k->out[0]->data;
        ti__parallel_for(k->tp, ti__numel(k->in[0]), TI__UNARY_GRAIN, ti__unary_sigmoid_vec, &j);
        return TI_OK;
    }
    ti__uprm p;
    ti__unary_params(k, &p);
    ti__unary_sigmoid_float(k, &p);
    return TI_OK;
}

TI__PRIVATE int ti__unary_gelu_shape(ti__kctx *k) {
    const char *mode = ti__attr_s(k->node, "approximate", "none");
    if (strcmp(mode, "none") != 0 && strcmp(mode, "tanh") != 0)
        return ti__kfail(k, TI_ERR_UNSUPPORTED,
                         "approximate='%s' is not supported (expected 'none' or 'tanh')", mode);
    return ti__unary_float_shape(k);
}

TI__PRIVATE int ti__unary_celu_shape(ti__kctx *k) {
    if (ti__attr_f(k->node, "alpha", 1.0f) == 0.0f)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "alpha must not be 0");
    return ti__unary_float_shape(k);
}

/* ---- ops that also take integers --------------------------------------------------- */
enum { TI__IOP_ABS, TI__IOP_NEG, TI__IOP_SIGN, TI__IOP_RELU, TI__IOP_BITNOT };

/* Integer path of Abs/Neg/Sign/Relu/BitwiseNot: signed types through int64, unsigned through
 * uint64; negation wraps (two's complement) as it does in the narrow type. */
TI__PRIVATE void ti__unary_int(ti__kctx *k, int op) {
    const ti_tensor *x = k->in[0];
    ti_tensor *y = k->out[0];
    const size_t n = ti__numel(x);
    const int is_unsigned = ti__carry_unsigned(x->dtype);
    for (size_t i = 0; i < n; i++) {
        uint64_t u = (uint64_t)ti__get_i64(x, i), r = u;
        int64_t s = (int64_t)u;
        switch (op) {
        case TI__IOP_ABS: r = (is_unsigned || s >= 0) ? u : 0u - u; break;
        case TI__IOP_NEG: r = 0u - u; break;
        case TI__IOP_SIGN:
            r = is_unsigned ? (u != 0) : (uint64_t)(int64_t)((s > 0) - (s < 0));
            break;
        case TI__IOP_RELU: r = (is_unsigned || s > 0) ? u : 0u; break;
        case TI__IOP_BITNOT: r = ~u; break;
        default: break;
        }
        ti__set_i64(y, i, (int64_t)r);
    }
}

TI__PRIVATE int ti__unary_abs_shape(ti__kctx *k) {
    return ti__unary_check(k, TI__EDT_NUM, TI_DTYPE_UNKNOWN);
}
TI__PRIVATE int ti__unary_sign_shape(ti__kctx *k) {
    return ti__unary_check(k, TI__EDT_NUM, TI_DTYPE_UNKNOWN);
}
TI__PRIVATE int ti__unary_neg_shape(ti__kctx *k) {
    return ti__unary_check(k, TI__EDT_FLOAT | TI__EDT_SINT, TI_DTYPE_UNKNOWN);
}
TI__PRIVATE int ti__unary_relu_shape(ti__kctx *k) {
    return ti__unary_check(k, TI__EDT_FLOAT | TI__EDT_SINT, TI_DTYPE_UNKNOWN);
}
TI__PRIVATE int ti__unary_bitnot_shape(ti__kctx *k) {
    return ti__unary_check(k, TI__EDT_INT, TI_DTYPE_UNKNOWN);
}

TI__PRIVATE ti_status ti__unary_abs_run(ti__kctx *k) {
    ti__uprm p = {0.0, 0.0, 0};
    if (ti__dtype_is_float(k->in[0]->dtype)) ti__unary_abs_float(k, &p);
    else ti__unary_int(k, TI__IOP_ABS);
    return TI_OK;
}
TI__PRIVATE ti_status ti__unary_neg_run(ti__kctx *k) {
    ti__uprm p = {0.0, 0.0, 0};
    if (ti__dtype_is_float(k->in[0]->dtype)) ti__unary_neg_float(k, &p);
    else ti__unary_int(k, TI__IOP_NEG);
    return TI_OK;
}
TI__PRIVATE ti_status ti__unary_sign_run(ti__kctx *k) {
    ti__uprm p = {0.0, 0.0, 0};
    if (ti__dtype_is_float(k->in[0]->dtype)) ti__unary_sign_float(k, &p);
    else ti__unary_int(k, TI__IOP_SIGN);
    return TI_OK;
}
/* Relu: the same bits as the scalar rule (only x < 0 becomes 0) */
TI__UNARY_VEC_OP(relu)

TI__PRIVATE ti_status ti__unary_relu_run(ti__kctx *k) {
    ti__uprm p = {0.0, 0.0, 0};
    if (k->in[0]->dtype == TI_DTYPE_F32) ti__unary_vec_go(k, &p, ti__unary_relu_vec);
    else if (ti__dtype_is_float(k->in[0]->dtype)) ti__unary_relu_float(k, &p);
    else ti__unary_int(k, TI__IOP_RELU);
    return TI_OK;
}
TI__PRIVATE ti_status ti__unary_bitnot_run(ti__kctx *k) {
    ti__unary_int(k, TI__IOP_BITNOT);
    return TI_OK;
}

/* Not: bool -> bool */
TI__PRIVATE int ti__unary_not_shape(ti__kctx *k) {
    return ti__unary_check(k, TI__EDT_BOOL, TI_DTYPE_UNKNOWN);
}
TI__PRIVATE ti_status ti__unary_not_run(ti__kctx *k) {
    const uint8_t *x = (const uint8_t *)k->in[0]->data;
    uint8_t *y = (uint8_t *)k->out[0]->data;
    const size_t n = ti__numel(k->in[0]);
    for (size_t i = 0; i < n; i++) y[i] = x[i] == 0;
    return TI_OK;
}

/* IsNaN / IsInf: float -> bool. IsInf flags: bit 0 detect_positive, bit 1 detect_negative. */
TI__PRIVATE int ti__unary_isnan_shape(ti__kctx *k) {
    return ti__unary_check(k, TI__EDT_FLOAT, TI_DTYPE_BOOL);
}
TI__PRIVATE void ti__unary_classify(ti__kctx *k, int isinf, int flags) {
    const ti_tensor *x = k->in[0];
    uint8_t *y = (uint8_t *)k->out[0]->data;
    const size_t n = ti__numel(x);
    for (size_t i = 0; i < n; i++) {
        double v = ti__get_f64(x, i); /* exact for every float dtype */
        if (!isinf) y[i] = v != v;
        else y[i] = (v == HUGE_VAL && (flags & 1)) || (v == -HUGE_VAL && (flags & 2));
    }
}
TI__PRIVATE ti_status ti__unary_isnan_run(ti__kctx *k) {
    ti__unary_classify(k, 0, 0);
    return TI_OK;
}
TI__PRIVATE ti_status ti__unary_isinf_run(ti__kctx *k) {
    int flags = (ti__attr_i(k->node, "detect_positive", 1) != 0) |
                (ti__attr_i(k->node, "detect_negative", 1) != 0) << 1;
    ti__unary_classify(k, 1, flags);
    return TI_OK;
}

/* ---- Clip ---------------------------------------------------------------------------- */
/* Opset < 11: bounds are the float attributes min/max. Opset >= 11: optional scalar inputs
 * 1 (min) and 2 (max) of the input's dtype; integer dtypes allowed from opset 12. */
TI__PRIVATE int ti__clip_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    if (k->opset >= 11) {
        for (int i = 1; i < k->n_in && i < 3; i++) {
            const ti_tensor *b = k->in[i];
            if (b == NULL) continue;
            if (b->dtype != k->in[0]->dtype)
                return ti__kfail(k, TI_ERR_BAD_MODEL, "%s has dtype %s, input has %s",
                                 i == 1 ? "min" : "max", ti_dtype_name(b->dtype),
                                 ti_dtype_name(k->in[0]->dtype));
            if (ti__numel(b) > 1)
                return ti__kfail(k, TI_ERR_BAD_MODEL, "%s has %zu elements, expected a scalar",
                                 i == 1 ? "min" : "max", ti__numel(b));
        }
    }
    return ti__unary_check(k, k->opset >= 12 ? TI__EDT_NUM : TI__EDT_FLOAT, TI_DTYPE_UNKNOWN);
}

TI__PRIVATE ti_status ti__clip_run(ti__kctx *k) {
    const ti_tensor *x = k->in[0];
    const ti_tensor *lo = k->opset >= 11 && k->n_in > 1 ? k->in[1] : NULL;
    const ti_tensor *hi = k->opset >= 11 && k->n_in > 2 ? k->in[2] : NULL;
    if (lo != NULL && ti__numel(lo) == 0) lo = NULL; /* an empty tensor stands for absent */
    if (hi != NULL && ti__numel(hi) == 0) hi = NULL;
    if (ti__dtype_is_float(x->dtype)) {
        ti__uprm p;
        p.mode = 0;
        if (k->opset < 11) {
            p.a = ti__attr_f(k->node, "min", -FLT_MAX);
            p.b = ti__attr_f(k->node, "max", FLT_MAX);
        } else {
            p.a = lo ? ti__get_f64(lo, 0) : -HUGE_VAL;
            p.b = hi ? ti__get_f64(hi, 0) : HUGE_VAL;
        }
        ti__unary_clip_float(k, &p);
        return TI_OK;
    }
    ti_tensor *y = k->out[0];
    const size_t n = ti__numel(x);
    if (ti__carry_unsigned(x->dtype)) {
        uint64_t a = lo ? (uint64_t)ti__get_i64(lo, 0) : 0u;
        uint64_t b = hi ? (uint64_t)ti__get_i64(hi, 0) : UINT64_MAX;
        for (size_t i = 0; i < n; i++) {
            uint64_t v = (uint64_t)ti__get_i64(x, i);
            v = v < a ? a : v;
            ti__set_i64(y, i, (int64_t)(v > b ? b : v));
        }
    } else {
        int64_t a = lo ? ti__get_i64(lo, 0) : INT64_MIN;
        int64_t b = hi ? ti__get_i64(hi, 0) : INT64_MAX;
        for (size_t i = 0; i < n; i++) {
            int64_t v = ti__get_i64(x, i);
            v = v < a ? a : v;
            ti__set_i64(y, i, v > b ? b : v);
        }
    }
    return TI_OK;
}

/* ---- Cast / CastLike ------------------------------------------------------------------ */
TI__PRIVATE int ti__cast_shape_to(ti__kctx *k, ti_dtype to) {
    TI__REQUIRE_INPUT(k, 0);
    if (to == TI_DTYPE_UNKNOWN || to == TI_DTYPE_STRING)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "target dtype %s is not supported",
                         ti_dtype_name(to));
    return ti__unary_check(k, TI__EDT_ALL, to);
}
TI__PRIVATE int ti__cast_shape(ti__kctx *k) {
    const ti__attr *a = ti__attr_get(k->node, "to");
    if (a == NULL) return ti__kfail(k, TI_ERR_BAD_MODEL, "attribute 'to' is required");
    int64_t to = ti__attr_i(k->node, "to", 0);
    ti_dtype dt = ti__onnx_dtype(to);
    if (dt == TI_DTYPE_UNKNOWN || dt == TI_DTYPE_STRING)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "target ONNX type %lld is not supported",
                         (long long)to);
    return ti__cast_shape_to(k, dt);
}
TI__PRIVATE int ti__castlike_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 1);
    return ti__cast_shape_to(k, k->in[1]->dtype);
}

/* Values move in chunks through the carrier of the source dtype (binary.c): double for
 * floats, int64 for signed and bool, uint64 for unsigned; each is exact for its sources.
 * float -> integer truncates toward zero, NaN gives 0 (ti__carry_d2i / ti__carry_d2u). */
TI__PRIVATE ti_status ti__cast_run(ti__kctx *k) {
    const ti_tensor *x = k->in[0];
    ti_tensor *y = k->out[0];
    const size_t n = ti__numel(x);
    const ti_dtype sd = x->dtype, dd = y->dtype;
    if (sd == dd) {
        memcpy(y->data, x->data, n * ti_dtype_size(sd));
        return TI_OK;
    }
    if (sd == TI_DTYPE_F32 && dd == TI_DTYPE_F16) { /* the common mixed-precision pair */
        const float *s = (const float *)x->data;
        uint16_t *d = (uint16_t *)y->data;
        for (size_t i = 0; i < n; i++) d[i] = ti__f32_to_f16(s[i]);
        return TI_OK;
    }
    const int carry = ti__carry_of(sd);
    union {
        double f[TI__CARRY_CHUNK];
        int64_t i[TI__CARRY_CHUNK];
        uint64_t u[TI__CARRY_CHUNK];
    } v;
    for (size_t off = 0; off < n; off += TI__CARRY_CHUNK) {
        const size_t m = TI__MIN((size_t)TI__CARRY_CHUNK, n - off);
        if (carry == TI__CARRY_F) {
            ti__carry_load_f(x->data, sd, off, 1, m, v.f);
            ti__carry_store_f(y->data, dd, off, m, v.f);
        } else if (carry == TI__CARRY_I) {
            ti__carry_load_i(x->data, sd, off, 1, m, v.i);
            ti__carry_store_i(y->data, dd, off, m, v.i);
        } else {
            ti__carry_load_u(x->data, sd, off, 1, m, v.u);
            ti__carry_store_u(y->data, dd, off, m, v.u);
        }
    }
    return TI_OK;
}

TI__PRIVATE const ti__op ti__ops_unary[] = {
    {"Abs", ti__unary_abs_shape, ti__unary_abs_run, NULL, 0},
    {"Neg", ti__unary_neg_shape, ti__unary_neg_run, NULL, 0},
    {"Sign", ti__unary_sign_shape, ti__unary_sign_run, NULL, 0},
    {"Relu", ti__unary_relu_shape, ti__unary_relu_run, NULL, 0},
    {"BitwiseNot", ti__unary_bitnot_shape, ti__unary_bitnot_run, NULL, 0},
    {"Not", ti__unary_not_shape, ti__unary_not_run, NULL, 0},
    {"IsNaN", ti__unary_isnan_shape, ti__unary_isnan_run, NULL, 0},
    {"IsInf", ti__unary_isnan_shape, ti__unary_isinf_run, NULL, 0},
    {"Reciprocal", ti__unary_float_shape, ti__unary_reciprocal_run, NULL, 0},
    {"Sqrt", ti__unary_float_shape, ti__unary_sqrt_run, NULL, 0},
    {"Exp", ti__unary_float_shape, ti__unary_exp_run, NULL, 0},
    {"Log", ti__unary_float_shape, ti__unary_log_run, NULL, 0},
    {"Ceil", ti__unary_float_shape, ti__unary_ceil_run, NULL, 0},
    {"Floor", ti__unary_float_shape, ti__unary_floor_run, NULL, 0},
    {"Round", ti__unary_float_shape, ti__unary_round_run, NULL, 0},
    {"Sin", ti__unary_float_shape, ti__unary_sin_run, NULL, 0},
    {"Cos", ti__unary_float_shape, ti__unary_cos_run, NULL, 0},
    {"Tan", ti__unary_float_shape, ti__unary_tan_run, NULL, 0},
    {"Asin", ti__unary_float_shape, ti__unary_asin_run, NULL, 0},
    {"Acos", ti__unary_float_shape, ti__unary_acos_run, NULL, 0},
    {"Atan", ti__unary_float_shape, ti__unary_atan_run, NULL, 0},
    {"Sinh", ti__unary_float_shape, ti__unary_sinh_run, NULL, 0},
    {"Cosh", ti__unary_float_shape, ti__unary_cosh_run, NULL, 0},
    {"Asinh", ti__unary_float_shape, ti__unary_asinh_run, NULL, 0},
    {"Acosh", ti__unary_float_shape, ti__unary_acosh_run, NULL, 0},
    {"Atanh", ti__unary_float_shape, ti__unary_atanh_run, NULL, 0},
    {"Erf", ti__unary_float_shape, ti__unary_erf_run, NULL, 0},
    {"Tanh", ti__unary_float_shape, ti__unary_tanh_run, NULL, 0},
    {"Sigmoid", ti__unary_float_shape, ti__unary_sigmoid_run, NULL, 0},
    {"Softplus", ti__unary_float_shape, ti__unary_softplus_run, NULL, 0},
    {"Softsign", ti__unary_float_shape, ti__unary_softsign_run, NULL, 0},
    {"Mish", ti__unary_float_shape, ti__unary_mish_run, NULL, 0},
    {"Gelu", ti__unary_gelu_shape, ti__unary_gelu_run, NULL, 0},
    {"LeakyRelu", ti__unary_float_shape, ti__unary_leaky_relu_run, NULL, 0},
    {"Elu", ti__unary_float_shape, ti__unary_elu_run, NULL, 0},
    {"Selu", ti__unary_float_shape, ti__unary_selu_run, NULL, 0},
    {"Celu", ti__unary_celu_shape, ti__unary_celu_run, NULL, 0},
    {"HardSigmoid", ti__unary_float_shape, ti__unary_hard_sigmoid_run, NULL, 0},
    {"HardSwish", ti__unary_float_shape, ti__unary_hard_swish_run, NULL, 0},
    {"ThresholdedRelu", ti__unary_float_shape, ti__unary_thresholded_relu_run, NULL, 0},
    {"Shrink", ti__unary_float_shape, ti__unary_shrink_run, NULL, 0},
    {"Swish", ti__unary_float_shape, ti__unary_swish_run, NULL, 0},
    {"Clip", ti__clip_shape, ti__clip_run, NULL, 0},
    {"Cast", ti__cast_shape, ti__cast_run, NULL, 0},
    {"CastLike", ti__castlike_shape, ti__cast_run, NULL, 0},
    {NULL, NULL, NULL, NULL, 0}
};
