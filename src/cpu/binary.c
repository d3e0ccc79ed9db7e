/* Elementwise ops of two or more inputs with numpy (multidirectional) broadcasting:
 * arithmetic, Min/Max/Sum/Mean, comparisons, logical and bitwise ops, Where, PRelu.
 * Broadcasting never allocates: each input gets element strides over the output dims (0 on
 * broadcast dims), adjacent dims that stay contiguous for every input are merged, and a
 * walker hands the kernels runs of the innermost dim. float32 arithmetic has typed loops;
 * other dtypes move through chunks of double / int64 / uint64 values. Relies on tensor.c.
 * Also defines the dtype masks and the value-carrier helpers that unary.c (Cast) reuses:
 * this file comes first in the amalgamation. */

/* dtype sets, as bit masks over ti_dtype */
#define TI__EDT(t) (1u << (unsigned)(t))
#define TI__EDT_FLOAT                                                                          \
    (TI__EDT(TI_DTYPE_F32) | TI__EDT(TI_DTYPE_F64) | TI__EDT(TI_DTYPE_F16) | TI__EDT(TI_DTYPE_BF16))
#define TI__EDT_SINT                                                                           \
    (TI__EDT(TI_DTYPE_I8) | TI__EDT(TI_DTYPE_I16) | TI__EDT(TI_DTYPE_I32) | TI__EDT(TI_DTYPE_I64))
#define TI__EDT_UINT                                                                           \
    (TI__EDT(TI_DTYPE_U8) | TI__EDT(TI_DTYPE_U16) | TI__EDT(TI_DTYPE_U32) | TI__EDT(TI_DTYPE_U64))
#define TI__EDT_INT (TI__EDT_SINT | TI__EDT_UINT)
#define TI__EDT_NUM (TI__EDT_FLOAT | TI__EDT_INT)
#define TI__EDT_BOOL TI__EDT(TI_DTYPE_BOOL)
#define TI__EDT_ALL (TI__EDT_NUM | TI__EDT_BOOL)
#define TI__EDT_IN(t, mask) ((unsigned)(t) < 32 && (TI__EDT(t) & (mask)) != 0)

#define TI__ELEMWISE_GRAIN 16384 /* elements per thread-pool task */

/* ---- value carriers ------------------------------------------------------------------ */
/* Values of any dtype are computed on as double (float dtypes), int64 (signed and bool) or
 * uint64 (unsigned); each is exact for the dtypes it carries. */
enum { TI__CARRY_F, TI__CARRY_I, TI__CARRY_U };
#define TI__CARRY_CHUNK 256

TI__PRIVATE int ti__carry_unsigned(ti_dtype t) { return TI__EDT_IN(t, TI__EDT_UINT); }
TI__PRIVATE int ti__carry_of(ti_dtype t) {
    return ti__dtype_is_float(t) ? TI__CARRY_F : ti__carry_unsigned(t) ? TI__CARRY_U : TI__CARRY_I;
}

/* float -> integer: truncate toward zero; NaN gives 0; values past the int64 (uint64) range
 * saturate; narrower types then wrap, as C conversions of int64 do. */
TI__PRIVATE int64_t ti__carry_d2i(double v) {
    if (v != v) return 0;
    if (v >= 9223372036854775807.0) return INT64_MAX;
    if (v <= -9223372036854775808.0) return INT64_MIN;
    return (int64_t)v;
}
TI__PRIVATE uint64_t ti__carry_d2u(double v) {
    if (v != v) return 0;
    if (v >= 18446744073709551615.0) return UINT64_MAX;
    if (v >= 9223372036854775808.0) return (uint64_t)v;
    return (uint64_t)ti__carry_d2i(v); /* negative values wrap, as numpy does on x86 */
}

/* Loads n elements src[off + i * step] of dtype dt, converted by CONV, into dst. */
#define TI__CARRY_LOAD(DST, CONV)                                                             \
    switch (dt) {                                                                             \
    case TI_DTYPE_F32: TI__CARRY_LOOP(DST, CONV, const float, (double)); break;               \
    case TI_DTYPE_F64: TI__CARRY_LOOP(DST, CONV, const double, (double)); break;              \
    case TI_DTYPE_F16: TI__CARRY_LOOP(DST, CONV, const uint16_t, (double)ti__f16_to_f32); break; \
    case TI_DTYPE_BF16: TI__CARRY_LOOP(DST, CONV, const uint16_t, (double)ti__bf16_to_f32); break; \
    case TI_DTYPE_I8: TI__CARRY_LOOP(DST, , const int8_t, ); break;                          \
    case TI_DTYPE_I16: TI__CARRY_LOOP(DST, , const int16_t, ); break;                        \
    case TI_DTYPE_I32: TI__CARRY_LOOP(DST, , const int32_t, ); break;                        \
    case TI_DTYPE_I64: TI__CARRY_LOOP(DST, , const int64_t, ); break;                        \
    case TI_DTYPE_U8: TI__CARRY_LOOP(DST, , const uint8_t, ); break;                         \
    case TI_DTYPE_U16: TI__CARRY_LOOP(DST, , const uint16_t, ); break;                       \
    case TI_DTYPE_U32: TI__CARRY_LOOP(DST, , const uint32_t, ); break;                       \
    case TI_DTYPE_U64: TI__CARRY_LOOP(DST, , const uint64_t, ); break;                       \
    case TI_DTYPE_BOOL: TI__CARRY_LOOP(DST, , const uint8_t, 0 != ); break;                   \
    default: for (size_t i = 0; i < n; i++) (DST)[i] = 0; break;                             \
    }
/* T: source C type; PRE: applied to the raw element; CONV: applied to floats only */
#define TI__CARRY_LOOP(DST, CONV, T, PRE)                                                     \
    do {                                                                                      \
        T *s_ = (T *)src + off;                                                               \
        for (size_t i = 0; i < n; i++) (DST)[i] = CONV(PRE(s_[i * step]));                    \
    } while (0)

TI__PRIVATE void ti__carry_load_f(const void *src, ti_dtype dt, size_t off, size_t step,
                                  size_t n, double *dst) {
    TI__CARRY_LOAD(dst, (double))
}
TI__PRIVATE void ti__carry_load_i(const void *src, ti_dtype dt, size_t off, size_t step,
                                  size_t n, int64_t *dst) {
    TI__CARRY_LOAD(dst, ti__carry_d2i)
}
TI__PRIVATE void ti__carry_load_u(const void *src, ti_dtype dt, size_t off, size_t step,
                                  size_t n, uint64_t *dst) {
    TI__CARRY_LOAD(dst, ti__carry_d2u)
}

/* Stores n values v[i] at dst[off + i] as dtype dt. TOI / TOU turn a value into int64 /
 * uint64 for integer targets (float carriers need the defined conversions). */
#define TI__CARRY_PUT(T, E) for (i = 0; i < n; i++) ((T *)dst)[off + i] = (T)(E)
#define TI__CARRY_STORE(TOI, TOU)                                                             \
    switch (dt) {                                                                             \
    case TI_DTYPE_F32: TI__CARRY_PUT(float, v[i]); break;                                     \
    case TI_DTYPE_F64: TI__CARRY_PUT(double, v[i]); break;                                    \
    case TI_DTYPE_F16: TI__CARRY_PUT(uint16_t, ti__f32_to_f16((float)v[i])); break;           \
    case TI_DTYPE_BF16: TI__CARRY_PUT(uint16_t, ti__f32_to_bf16((float)v[i])); break;         \
    case TI_DTYPE_BOOL: TI__CARRY_PUT(uint8_t, v[i] != 0); break;                             \
    case TI_DTYPE_I8: TI__CARRY_PUT(int8_t, TOI(v[i])); break;                                \
    case TI_DTYPE_I16: TI__CARRY_PUT(int16_t, TOI(v[i])); break;                              \
    case TI_DTYPE_I32: TI__CARRY_PUT(int32_t, TOI(v[i])); break;                              \
    case TI_DTYPE_I64: TI__CARRY_PUT(int64_t, TOI(v[i])); break;                              \
    case TI_DTYPE_U8: TI__CARRY_PUT(uint8_t, TOU(v[i])); break;                               \
    case TI_DTYPE_U16: TI__CARRY_PUT(uint16_t, TOU(v[i])); break;                             \
    case TI_DTYPE_U32: TI__CARRY_PUT(uint32_t, TOU(v[i])); break;                             \
    case TI_DTYPE_U64: TI__CARRY_PUT(uint64_t, TOU(v[i])); break;                             \
    default: break;                                                                           \
    }

TI__PRIVATE void ti__carry_store_f(void *dst, ti_dtype dt, size_t off, size_t n, const double *v) {
    size_t i;
    TI__CARRY_STORE(ti__carry_d2i, ti__carry_d2u)
}
TI__PRIVATE void ti__carry_store_i(void *dst, ti_dtype dt, size_t off, size_t n,
                                   const int64_t *v) {
    size_t i;
    TI__CARRY_STORE(, )
}
TI__PRIVATE void ti__carry_store_u(void *dst, ti_dtype dt, size_t off, size_t n,
                                   const uint64_t *v) {
    size_t i;
    TI__CARRY_STORE(, )
}

/* ---- broadcasting -------------------------------------------------------------------- */
#define TI__BCAST_MAX_IN 3

typedef struct ti__bcast {
    int rank;    /* merged dims, >= 1 */
    int n_in;
    size_t total; /* output elements */
    size_t dims[TI_MAX_DIMS];
    size_t str[TI__BCAST_MAX_IN][TI_MAX_DIMS]; /* element strides; 0 on broadcast dims */
} ti__bcast;

/* in[j]: shapes that broadcast to out_shape (checked by the shape functions). */
TI__PRIVATE void ti__bcast_init(ti__bcast *bc, int n_in, const ti_tensor *const *in,
                                int out_rank, const int64_t *out_shape) {
    size_t rd[TI_MAX_DIMS], rs[TI__BCAST_MAX_IN][TI_MAX_DIMS], run[TI__BCAST_MAX_IN];
    int m = 0;
    bc->n_in = n_in;
    bc->total = ti__shape_numel(out_rank, out_shape);
    for (int j = 0; j < n_in; j++) run[j] = 1;
    /* innermost first, so each dim can join the one inside it */
    for (int d = out_rank - 1; d >= 0; d--) {
        size_t od = (size_t)out_shape[d], s[TI__BCAST_MAX_IN];
        int merge = m > 0;
        for (int j = 0; j < n_in; j++) {
            int id = d - (out_rank - in[j]->rank);
            size_t idim = id >= 0 ? (size_t)in[j]->shape[id] : 1;
            s[j] = idim == 1 ? 0 : run[j];
            run[j] *= idim;
            if (m > 0 && s[j] != rs[j][m - 1] * rd[m - 1]) merge = 0;
        }
        if (od == 1) continue;
        if (merge) {
            rd[m - 1] *= od;
        } else {
            rd[m] = od;
            for (int j = 0; j < n_in; j++) rs[j][m] = s[j];
            m++;
        }
    }
    if (m == 0) { /* every dim is 1: a single element */
        rd[0] = 1;
        for (int j = 0; j < n_in; j++) rs[j][0] = 0;
        m = 1;
    }
    bc->rank = m;
    for (int d = 0; d < m; d++) {
        bc->dims[d] = rd[m - 1 - d];
        for (int j = 0; j < n_in; j++) bc->str[j][d] = rs[j][m - 1 - d];
    }
}

typedef struct ti__bjob ti__bjob;
/* Computes n outputs from out index o; input j starts at element off[j] and moves by
 * step[j] (0 or 1) per output. */
typedef void (*ti__bin_inner)(const ti__bjob *j, size_t o, const size_t *off,
                              const size_t *step, size_t n);

struct ti__bjob {
    ti__bcast bc;
    ti__bin_inner fn;
    int op;
    int carry;                       /* TI__CARRY_* the generic path computes in */
    int width;                       /* BitShift: bits of the dtype */
    const void *in[TI__BCAST_MAX_IN];
    ti_dtype in_dt[TI__BCAST_MAX_IN];
    void *out;
    ti_dtype out_dt;
    size_t grain; /* elements per thread-pool task; 0: TI__ELEMWISE_GRAIN */
    /* the node's fused activation (TI__ACT_*, 0: none) on each range of a float32 output
     * once computed, by the thread that computed it (ti__bin_pass) */
    int act;
    float act_a, act_b;
};

TI__PRIVATE void ti__act_block(int act, float a, float b, const float *bias, float *y,
                               size_t ldy, size_t rows, size_t cols); /* conv.c */

/* Visits output elements [begin, end) as runs along the innermost merged dim, then applies
 * j->act to them. */
TI__PRIVATE void ti__bcast_range(void *ctx, size_t begin, size_t end) {
    const ti__bjob *j = (const ti__bjob *)ctx;
    const ti__bcast *bc = &j->bc;
    const int r = bc->rank, nj = bc->n_in;
    size_t idx[TI_MAX_DIMS], off[TI__BCAST_MAX_IN] = {0, 0, 0}, step[TI__BCAST_MAX_IN];
    size_t rem = begin;
    for (int d = r - 1; d >= 0; d--) {
        idx[d] = rem % bc->dims[d];
        rem /= bc->dims[d];
        for (int i = 0; i < nj; i++) off[i] += idx[d] * bc->str[i][d];
    }
    for (int i = 0; i < nj; i++) step[i] = bc->str[i][r - 1];
    size_t pos = begin;
    while (pos < end) {
        size_t n = TI__MIN(bc->dims[r - 1] - idx[r - 1], end - pos);
        j->fn(j, pos, off, step, n);
        pos += n;
        idx[r - 1] += n;
        for (int i = 0; i < nj; i++) off[i] += n * step[i];
        for (int d = r - 1; d > 0 && idx[d] == bc->dims[d]; d--) { /* carry */
            idx[d] = 0;
            idx[d - 1]++;
            for (int i = 0; i < nj; i++)
                off[i] = off[i] - bc->dims[d] * bc->str[i][d] + bc->str[i][d - 1];
        }
    }
    if (j->act != TI__ACT_NONE && end > begin) /* set for float32 outputs only */
        ti__act_block(j->act, j->act_a, j->act_b, NULL, (float *)j->out + begin, end - begin, 1,
                      end - begin);
}

TI__PRIVATE void ti__bcast_run(ti__kctx *k, ti__bjob *j) {
    if (j->bc.total != 0)
        ti__parallel_for(k->tp, j->bc.total, j->grain ? j->grain : TI__ELEMWISE_GRAIN,
                         ti__bcast_range, j);
}

/* "[2,3,4]" into buf */
TI__PRIVATE const char *ti__bin_shape_str(char *buf, size_t cap, int rank, const int64_t *dims) {
    size_t len = 0;
    buf[0] = 0;
    len += (size_t)snprintf(buf, cap, "[");
    for (int i = 0; i < rank && len < cap; i++)
        len += (size_t)snprintf(buf + len, cap - len, i ? ",%lld" : "%lld", (long long)dims[i]);
    if (len < cap) snprintf(buf + len, cap - len, "]");
    return buf;
}

/* ---- the ops ------------------------------------------------------------------------- */
enum {
    TI__BOP_ADD, TI__BOP_SUB, TI__BOP_MUL, TI__BOP_DIV, TI__BOP_POW, TI__BOP_MOD,
    TI__BOP_FMOD, TI__BOP_MIN, TI__BOP_MAX, TI__BOP_SUM, TI__BOP_MEAN, TI__BOP_PRELU,
    TI__BOP_EQ, TI__BOP_GT, TI__BOP_LT, TI__BOP_GE, TI__BOP_LE,
    TI__BOP_AND, TI__BOP_OR, TI__BOP_XOR, TI__BOP_SHL, TI__BOP_SHR,
    TI__BOP_BAND, TI__BOP_BOR, TI__BOP_BXOR, TI__BOP_SHIFT
};
enum { TI__BIN_BOOL_OUT = 1, TI__BIN_VARIADIC = 2, TI__BIN_ANY_B = 4 };

typedef struct ti__bin_info {
    unsigned mask;  /* dtypes of input 0 */
    unsigned flags;
} ti__bin_info;

/* indexed by TI__BOP_*; MOD covers FMOD and SHIFT covers SHL/SHR at shape time */
static const ti__bin_info ti__bin_infos[] = {
    {TI__EDT_NUM, 0},                          /* Add */
    {TI__EDT_NUM, 0},                          /* Sub */
    {TI__EDT_NUM, 0},                          /* Mul */
    {TI__EDT_NUM, 0},                          /* Div */
    {TI__EDT_NUM, TI__BIN_ANY_B},              /* Pow: exponent of any numeric dtype */
    {TI__EDT_NUM, 0},                          /* Mod */
    {TI__EDT_NUM, 0},                          /* (fmod) */
    {TI__EDT_NUM, TI__BIN_VARIADIC},           /* Min */
    {TI__EDT_NUM, TI__BIN_VARIADIC},           /* Max */
    {TI__EDT_FLOAT, TI__BIN_VARIADIC},         /* Sum */
    {TI__EDT_FLOAT, TI__BIN_VARIADIC},         /* Mean */
    {TI__EDT_FLOAT | TI__EDT_INT, 0},           /* PRelu */
    {TI__EDT_ALL, TI__BIN_BOOL_OUT},           /* Equal */
    {TI__EDT_NUM, TI__BIN_BOOL_OUT},           /* Greater */
    {TI__EDT_NUM, TI__BIN_BOOL_OUT},           /* Less */
    {TI__EDT_NUM, TI__BIN_BOOL_OUT},           /* GreaterOrEqual */
    {TI__EDT_NUM, TI__BIN_BOOL_OUT},           /* LessOrEqual */
    {TI__EDT_BOOL, TI__BIN_BOOL_OUT},          /* And */
    {TI__EDT_BOOL, TI__BIN_BOOL_OUT},          /* Or */
    {TI__EDT_BOOL, TI__BIN_BOOL_OUT},          /* Xor */
    {TI__EDT_INT, 0},                          /* (shift left) */
    {TI__EDT_INT, 0},                          /* (shift right) */
    {TI__EDT_INT, 0},                          /* BitwiseAnd */
    {TI__EDT_INT, 0},                          /* BitwiseOr */
    {TI__EDT_INT, 0},                          /* BitwiseXor */
    {TI__EDT_INT, 0},                          /* BitShift */
};

/* float32 loops for the common arithmetic ops; x, y are the two operands. */
#define TI__BIN_F32_LOOP(EXPR)                                                                \
    do {                                                                                      \
        if (sa && sb) {                                                                       \
            for (size_t i = 0; i < n; i++) {                                                  \
                const float x = a[i], y = b[i];                                               \
                o[i] = (EXPR);                                                                \
            }                                                                                 \
        } else if (sa) {                                                                      \
            const float y = b[0];                                                             \
            for (size_t i = 0; i < n; i++) {                                                  \
                const float x = a[i];                                                         \
                o[i] = (EXPR);                                                                \
            }                                                                                 \
        } else if (sb) {                                                                      \
            const float x = a[0];                                                             \
            for (size_t i = 0; i < n; i++) {                                                  \
                const float y = b[i];                                                         \
                o[i] = (EXPR);                                                                \
            }                                                                                 \
        } else {                                                                              \
            const float x = a[0], y = b[0], v = (EXPR);                                       \
            for (size_t i = 0; i < n; i++) o[i] = v;                                          \
        }                                                                                     \
    } while (0)

TI__PRIVATE void ti__bin_f32(const ti__bjob *j, size_t oi, const size_t *off,
                             const size_t *step, size_t n) {
    const float *a = (const float *)j->in[0] + off[0], *b = (const float *)j->in[1] + off[1];
    float *o = (float *)j->out + oi;
    const int sa = step[0] != 0, sb = step[1] != 0;
#ifdef TI__X86_SIMD
    if (n >= 8) { /* Add, Sub, Mul, Div in vectors: the same bits (cpu/x86/binary_x86.c) */
        int isa = ti__cpu_isa();
        if (isa >= TI__ISA_AVX512 && ti__bin_f32_avx512(j->op, a, sa, b, sb, o, n)) return;
        if (isa >= TI__ISA_AVX2 && ti__bin_f32_avx2(j->op, a, sa, b, sb, o, n)) return;
    }
#elif defined(TI__ARM_NEON)
    if (n >= 4 && ti__cpu_isa() >= TI__ISA_NEON && ti__bin_f32_neon(j->op, a, sa, b, sb, o, n))
        return; /* the same bits (cpu/arm/binary_neon.c) */
#endif
    switch (j->op) {
    case TI__BOP_ADD: case TI__BOP_SUM: case TI__BOP_MEAN: TI__BIN_F32_LOOP(x + y); break;
    case TI__BOP_SUB: TI__BIN_F32_LOOP(x - y); break;
    case TI__BOP_MUL: TI__BIN_F32_LOOP(x * y); break;
    case TI__BOP_DIV: TI__BIN_F32_LOOP(x / y); break;
    case TI__BOP_POW: TI__BIN_F32_LOOP(powf(x, y)); break;
    /* Min/Max propagate NaN as numpy.minimum/maximum do */
    case TI__BOP_MIN: TI__BIN_F32_LOOP((x < y || x != x) ? x : y); break;
    case TI__BOP_MAX: TI__BIN_F32_LOOP((x > y || x != x) ? x : y); break;
    case TI__BOP_PRELU: TI__BIN_F32_LOOP(x < 0.0f ? x * y : x); break;
    default: break;
    }
}

/* x mod y with the sign of the divisor (numpy.mod / Python %) */
TI__PRIVATE double ti__mod_floor_d(double x, double y) {
    double r = fmod(x, y);
    if (r != 0.0) {
        if ((r < 0.0) != (y < 0.0)) r += y;
    } else {
        r = y < 0.0 ? -0.0 : 0.0;
    }
    return r;
}

TI__PRIVATE void ti__bin_op_f(int op, double *a, const double *b, size_t n) {
    size_t i;
    switch (op) {
    case TI__BOP_ADD: case TI__BOP_SUM: case TI__BOP_MEAN:
        for (i = 0; i < n; i++) a[i] += b[i];
        break;
    case TI__BOP_SUB: for (i = 0; i < n; i++) a[i] -= b[i]; break;
    case TI__BOP_MUL: for (i = 0; i < n; i++) a[i] *= b[i]; break;
    case TI__BOP_DIV: for (i = 0; i < n; i++) a[i] /= b[i]; break;
    case TI__BOP_POW: for (i = 0; i < n; i++) a[i] = pow(a[i], b[i]); break;
    case TI__BOP_MOD: for (i = 0; i < n; i++) a[i] = ti__mod_floor_d(a[i], b[i]); break;
    case TI__BOP_FMOD: for (i = 0; i < n; i++) a[i] = fmod(a[i], b[i]); break;
    case TI__BOP_MIN:
        for (i = 0; i < n; i++) a[i] = (a[i] < b[i] || a[i] != a[i]) ? a[i] : b[i];
        break;
    case TI__BOP_MAX:
        for (i = 0; i < n; i++) a[i] = (a[i] > b[i] || a[i] != a[i]) ? a[i] : b[i];
        break;
    case TI__BOP_PRELU: for (i = 0; i < n; i++) a[i] = a[i] < 0.0 ? a[i] * b[i] : a[i]; break;
    case TI__BOP_EQ: for (i = 0; i < n; i++) a[i] = a[i] == b[i]; break;
    case TI__BOP_GT: for (i = 0; i < n; i++) a[i] = a[i] > b[i]; break;
    case TI__BOP_LT: for (i = 0; i < n; i++) a[i] = a[i] < b[i]; break;
    case TI__BOP_GE: for (i = 0; i < n; i++) a[i] = a[i] >= b[i]; break;
    case TI__BOP_LE: for (i = 0; i < n; i++) a[i] = a[i] <= b[i]; break;
    default: break;
    }
}

/* x^y for integers, wrapping like the narrow type; negative y gives 0 unless |x| == 1 */
TI__PRIVATE uint64_t ti__ipow(uint64_t x, int64_t y, int is_signed) {
    if (y < 0) {
        if (x == 1) return 1;
        if (is_signed && x == (uint64_t)-1) return (y & 1) ? x : 1;
        return 0;
    }
    uint64_t r = 1;
    while (y) {
        if (y & 1) r *= x;
        x *= x;
        y >>= 1;
    }
    return r;
}

/* Signed integer ops on int64 values; arithmetic wraps through uint64 (no UB), and so
 * wraps like the narrow dtype once stored. Divisors were checked for zero before. */
TI__PRIVATE void ti__bin_op_i(int op, int width, int64_t *a, const int64_t *b, size_t n) {
    size_t i;
    switch (op) {
    case TI__BOP_ADD:
        for (i = 0; i < n; i++) a[i] = (int64_t)((uint64_t)a[i] + (uint64_t)b[i]);
        break;
    case TI__BOP_SUB:
        for (i = 0; i < n; i++) a[i] = (int64_t)((uint64_t)a[i] - (uint64_t)b[i]);
        break;
    case TI__BOP_MUL:
        for (i = 0; i < n; i++) a[i] = (int64_t)((uint64_t)a[i] * (uint64_t)b[i]);
        break;
    case TI__BOP_DIV: /* C division truncates toward zero */
        for (i = 0; i < n; i++)
            a[i] = b[i] == 0 ? 0 : (b[i] == -1 ? (int64_t)(0u - (uint64_t)a[i]) : a[i] / b[i]);
        break;
    case TI__BOP_FMOD:
        for (i = 0; i < n; i++) a[i] = (b[i] == 0 || b[i] == -1) ? 0 : a[i] % b[i];
        break;
    case TI__BOP_MOD:
        for (i = 0; i < n; i++) {
            int64_t r = (b[i] == 0 || b[i] == -1) ? 0 : a[i] % b[i];
            if (r != 0 && ((r < 0) != (b[i] < 0))) r += b[i];
            a[i] = r;
        }
        break;
    case TI__BOP_POW:
        for (i = 0; i < n; i++) a[i] = (int64_t)ti__ipow((uint64_t)a[i], b[i], 1);
        break;
    case TI__BOP_MIN: for (i = 0; i < n; i++) a[i] = a[i] < b[i] ? a[i] : b[i]; break;
    case TI__BOP_MAX: for (i = 0; i < n; i++) a[i] = a[i] > b[i] ? a[i] : b[i]; break;
    case TI__BOP_PRELU:
        for (i = 0; i < n; i++) a[i] = a[i] < 0 ? (int64_t)((uint64_t)a[i] * (uint64_t)b[i]) : a[i];
        break;
    case TI__BOP_EQ: for (i = 0; i < n; i++) a[i] = a[i] == b[i]; break;
    case TI__BOP_GT: for (i = 0; i < n; i++) a[i] = a[i] > b[i]; break;
    case TI__BOP_LT: for (i = 0; i < n; i++) a[i] = a[i] < b[i]; break;
    case TI__BOP_GE: for (i = 0; i < n; i++) a[i] = a[i] >= b[i]; break;
    case TI__BOP_LE: for (i = 0; i < n; i++) a[i] = a[i] <= b[i]; break;
    case TI__BOP_AND: for (i = 0; i < n; i++) a[i] = a[i] != 0 && b[i] != 0; break;
    case TI__BOP_OR: for (i = 0; i < n; i++) a[i] = a[i] != 0 || b[i] != 0; break;
    case TI__BOP_XOR: for (i = 0; i < n; i++) a[i] = (a[i] != 0) != (b[i] != 0); break;
    case TI__BOP_BAND: for (i = 0; i < n; i++) a[i] &= b[i]; break;
    case TI__BOP_BOR: for (i = 0; i < n; i++) a[i] |= b[i]; break;
    case TI__BOP_BXOR: for (i = 0; i < n; i++) a[i] ^= b[i]; break;
    /* shifts by a negative count or by the width or more: 0 (left), the sign fill (right),
     * as the ONNX reference does */
    case TI__BOP_SHL:
        for (i = 0; i < n; i++)
            a[i] = (b[i] < 0 || b[i] >= width) ? 0 : (int64_t)((uint64_t)a[i] << b[i]);
        break;
    case TI__BOP_SHR:
        for (i = 0; i < n; i++) {
            int64_t s = (b[i] < 0 || b[i] >= width) ? 63 : b[i];
            a[i] = a[i] < 0 ? ~(~a[i] >> s) : a[i] >> s; /* arithmetic shift, portably */
        }
        break;
    default: break;
    }
}

TI__PRIVATE void ti__bin_op_u(int op, int width, uint64_t *a, const uint64_t *b, size_t n) {
    size_t i;
    switch (op) {
    case TI__BOP_ADD: for (i = 0; i < n; i++) a[i] += b[i]; break;
    case TI__BOP_SUB: for (i = 0; i < n; i++) a[i] -= b[i]; break;
    case TI__BOP_MUL: for (i = 0; i < n; i++) a[i] *= b[i]; break;
    case TI__BOP_DIV: for (i = 0; i < n; i++) a[i] = b[i] == 0 ? 0 : a[i] / b[i]; break;
    case TI__BOP_MOD: case TI__BOP_FMOD:
        for (i = 0; i < n; i++) a[i] = b[i] == 0 ? 0 : a[i] % b[i];
        break;
    case TI__BOP_POW: for (i = 0; i < n; i++) a[i] = ti__ipow(a[i], (int64_t)b[i], 0); break;
    case TI__BOP_MIN: for (i = 0; i < n; i++) a[i] = a[i] < b[i] ? a[i] : b[i]; break;
    case TI__BOP_MAX: for (i = 0; i < n; i++) a[i] = a[i] > b[i] ? a[i] : b[i]; break;
    case TI__BOP_PRELU: break; /* never negative */
    case TI__BOP_EQ: for (i = 0; i < n; i++) a[i] = a[i] == b[i]; break;
    case TI__BOP_GT: for (i = 0; i < n; i++) a[i] = a[i] > b[i]; break;
    case TI__BOP_LT: for (i = 0; i < n; i++) a[i] = a[i] < b[i]; break;
    case TI__BOP_GE: for (i = 0; i < n; i++) a[i] = a[i] >= b[i]; break;
    case TI__BOP_LE: for (i = 0; i < n; i++) a[i] = a[i] <= b[i]; break;
    case TI__BOP_BAND: for (i = 0; i < n; i++) a[i] &= b[i]; break;
    case TI__BOP_BOR: for (i = 0; i < n; i++) a[i] |= b[i]; break;
    case TI__BOP_BXOR: for (i = 0; i < n; i++) a[i] ^= b[i]; break;
    case TI__BOP_SHL:
        for (i = 0; i < n; i++) a[i] = b[i] >= (uint64_t)width ? 0 : a[i] << b[i];
        break;
    case TI__BOP_SHR:
        for (i = 0; i < n; i++) a[i] = b[i] >= (uint64_t)width ? 0 : a[i] >> b[i];
        break;
    default: break;
    }
}

/* Any dtype: chunks of carried values. */
TI__PRIVATE void ti__bin_generic(const ti__bjob *j, size_t oi, const size_t *off,
                                 const size_t *step, size_t n) {
    union {
        double f[TI__CARRY_CHUNK];
        int64_t i[TI__CARRY_CHUNK];
        uint64_t u[TI__CARRY_CHUNK];
    } a, b;
    for (size_t c = 0; c < n; c += TI__CARRY_CHUNK) {
        const size_t m = TI__MIN((size_t)TI__CARRY_CHUNK, n - c);
        const size_t o0 = off[0] + c * step[0], o1 = off[1] + c * step[1];
        switch (j->carry) {
        case TI__CARRY_F:
            ti__carry_load_f(j->in[0], j->in_dt[0], o0, step[0], m, a.f);
            ti__carry_load_f(j->in[1], j->in_dt[1], o1, step[1], m, b.f);
            ti__bin_op_f(j->op, a.f, b.f, m);
            ti__carry_store_f(j->out, j->out_dt, oi + c, m, a.f);
            break;
        case TI__CARRY_I:
            ti__carry_load_i(j->in[0], j->in_dt[0], o0, step[0], m, a.i);
            ti__carry_load_i(j->in[1], j->in_dt[1], o1, step[1], m, b.i);
            ti__bin_op_i(j->op, j->width, a.i, b.i, m);
            ti__carry_store_i(j->out, j->out_dt, oi + c, m, a.i);
            break;
        default:
            ti__carry_load_u(j->in[0], j->in_dt[0], o0, step[0], m, a.u);
            ti__carry_load_u(j->in[1], j->in_dt[1], o1, step[1], m, b.u);
            ti__bin_op_u(j->op, j->width, a.u, b.u, m);
            ti__carry_store_u(j->out, j->out_dt, oi + c, m, a.u);
            break;
        }
    }
}

/* ---- shape and run -------------------------------------------------------------------- */
/* PRelu before opset 7 applied a 1-D slope of X.shape[1] values per channel; later opsets
 * broadcast it numpy-style. Returns the slope with the shape it broadcasts with ([C,1,..]
 * in the old case, a view in *tmp sharing the data). */
TI__PRIVATE const ti_tensor *ti__prelu_slope(const ti__kctx *k, ti_tensor *tmp) {
    const ti_tensor *x = k->in[0], *s = k->in[1];
    if (k->opset >= 7 || s->rank != 1 || x->rank < 2 || s->shape[0] != x->shape[1] ||
        s->shape[0] == 1)
        return s;
    *tmp = *s;
    tmp->rank = x->rank - 1;
    for (int d = 1; d < tmp->rank; d++) tmp->shape[d] = 1;
    return tmp;
}

TI__PRIVATE int ti__bin_shape_op(ti__kctx *k, int op) {
    const ti__bin_info *info = &ti__bin_infos[op];
    if (op == TI__BOP_SHIFT) {
        const char *dir = ti__attr_s(k->node, "direction", "");
        if (strcmp(dir, "LEFT") != 0 && strcmp(dir, "RIGHT") != 0)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "direction '%s' is not 'LEFT' or 'RIGHT'", dir);
    }
    const int variadic = (info->flags & TI__BIN_VARIADIC) != 0;
    const int n = variadic ? k->n_in : 2;
    if (n < 1) return ti__kfail(k, TI_ERR_BAD_MODEL, "at least one input is required");
    for (int i = 0; i < n; i++) TI__REQUIRE_INPUT(k, i);
    if (k->n_out < 1 || k->out[0] == NULL)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "output 0 is required");
    const ti_tensor *a = k->in[0];
    if (!TI__EDT_IN(a->dtype, info->mask))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "dtype %s is not supported",
                         ti_dtype_name(a->dtype));
    int rank = a->rank;
    int64_t dims[TI_MAX_DIMS];
    for (int d = 0; d < rank; d++) dims[d] = a->shape[d];
    for (int i = 1; i < n; i++) {
        ti_tensor slope;
        const ti_tensor *b = k->in[i];
        if (op == TI__BOP_PRELU) b = ti__prelu_slope(k, &slope);
        if (info->flags & TI__BIN_ANY_B) {
            if (!TI__EDT_IN(b->dtype, TI__EDT_NUM))
                return ti__kfail(k, TI_ERR_UNSUPPORTED, "dtype %s of input %d is not supported",
                                 ti_dtype_name(b->dtype), i);
        } else if (b->dtype != a->dtype) {
            return ti__kfail(k, TI_ERR_BAD_MODEL, "input %d has dtype %s, input 0 has %s", i,
                             ti_dtype_name(b->dtype), ti_dtype_name(a->dtype));
        }
        int64_t nd[TI_MAX_DIMS];
        int nr;
        if (!ti__broadcast_shape(rank, dims, b->rank, b->shape, &nr, nd)) {
            char s1[128], s2[128];
            return ti__kfail(k, TI_ERR_BAD_MODEL, "shapes %s and %s do not broadcast",
                             ti__bin_shape_str(s1, sizeof s1, rank, dims),
                             ti__bin_shape_str(s2, sizeof s2, b->rank, b->shape));
        }
        if (op == TI__BOP_PRELU && (nr != rank || memcmp(nd, dims, sizeof(int64_t) * (size_t)nr))) {
            char s1[128], s2[128];
            return ti__kfail(k, TI_ERR_BAD_MODEL, "slope shape %s does not broadcast to X shape %s",
                             ti__bin_shape_str(s2, sizeof s2, b->rank, b->shape),
                             ti__bin_shape_str(s1, sizeof s1, rank, dims));
        }
        rank = nr;
        memcpy(dims, nd, sizeof(int64_t) * (size_t)nr);
    }
    const ti_dtype odt = (info->flags & TI__BIN_BOOL_OUT) ? TI_DTYPE_BOOL : a->dtype;
    if (!ti__set_shape(k->out[0], odt, rank, dims))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "output shape is invalid");
    return TI_OK;
}

/* One broadcast pass: out = a (op) b, then the node's fused activation when with_act. */
TI__PRIVATE void ti__bin_pass(ti__kctx *k, int op, const ti_tensor *a, const ti_tensor *b,
                              int width, int with_act) {
    ti_tensor *y = k->out[0];
    ti__bjob j;
    memset(&j, 0, sizeof j); /* grain 0: the default (left unset, it split nothing: below) */
    const ti_tensor *ins[2];
    ins[0] = a;
    ins[1] = b;
    ti__bcast_init(&j.bc, 2, ins, y->rank, y->shape);
    j.op = op;
    j.width = width;
    j.in[0] = a->data;
    j.in[1] = b->data;
    j.in[2] = NULL;
    j.in_dt[0] = a->dtype;
    j.in_dt[1] = b->dtype;
    j.in_dt[2] = TI_DTYPE_UNKNOWN;
    j.out = y->data;
    j.out_dt = y->dtype;
    /* Pow with one float operand computes in double; otherwise the operands' carrier */
    j.carry = ti__carry_of(a->dtype);
    if (op == TI__BOP_POW && ti__dtype_is_float(b->dtype)) j.carry = TI__CARRY_F;
    const int fast = a->dtype == TI_DTYPE_F32 && b->dtype == TI_DTYPE_F32 &&
                     y->dtype == TI_DTYPE_F32 && op != TI__BOP_MOD && op != TI__BOP_FMOD;
    j.fn = fast ? ti__bin_f32 : ti__bin_generic;
    if (with_act && y->dtype == TI_DTYPE_F32) {
        j.act = k->node->act;
        j.act_a = k->node->act_a;
        j.act_b = k->node->act_b;
    }
    ti__bcast_run(k, &j);
}

TI__PRIVATE ti_status ti__bin_run_op(ti__kctx *k, int op) {
    const ti_tensor *a = k->in[0];
    ti_tensor *y = k->out[0];
    int width = (int)(8 * ti_dtype_size(a->dtype));
    if (op == TI__BOP_SHIFT) /* direction checked by the shape function */
        op = strcmp(ti__attr_s(k->node, "direction", ""), "LEFT") == 0 ? TI__BOP_SHL : TI__BOP_SHR;
    if (op == TI__BOP_MOD && ti__attr_i(k->node, "fmod", 0) != 0) op = TI__BOP_FMOD;
    if ((op == TI__BOP_DIV || op == TI__BOP_MOD || op == TI__BOP_FMOD) &&
        !ti__dtype_is_float(a->dtype)) {
        const ti_tensor *b = k->in[1];
        const size_t nb = ti__numel(b);
        for (size_t i = 0; i < nb; i++)
            if (ti__get_i64(b, i) == 0)
                return ti__kfail(k, TI_ERR_INVALID_ARGUMENT,
                                 "integer division by zero (divisor element %zu)", i);
    }
    if (!(ti__bin_infos[op].flags & TI__BIN_VARIADIC)) {
        ti_tensor slope;
        /* the fused activation (a residual Add + Relu) on each range as it is computed, on
         * the threads that computed it: after the whole pass, on one thread, it was a
         * second pass over y. ResNet-18's Add + Relu on 2 threads, per-node minima of 4 x 30
         * runs alternating (bench/ab.py), Xeon: 64 x 56 x 56 0.056 -> 0.036 ms, 128 x 28 x 28
         * 0.028 -> 0.020 */
        const ti_tensor *b = op == TI__BOP_PRELU ? ti__prelu_slope(k, &slope) : k->in[1];
        ti__bin_pass(k, op, a, b, width, 1);
        return TI_OK;
    }
    /* variadic: out = in0 op in1, then out = out op in_i */
    if (k->n_in == 1) {
        memcpy(y->data, a->data, y->size_bytes);
    } else {
        ti__bin_pass(k, op, a, k->in[1], width, 0);
        for (int i = 2; i < k->n_in; i++) ti__bin_pass(k, op, y, k->in[i], width, 0);
    }
    if (op == TI__BOP_MEAN && k->n_in > 1) {
        const size_t n = ti__numel(y);
        const double inv = 1.0 / k->n_in;
        if (y->dtype == TI_DTYPE_F32) {
            float *p = (float *)y->data, s = (float)inv;
            for (size_t i = 0; i < n; i++) p[i] *= s;
        } else {
            for (size_t i = 0; i < n; i++) ti__set_f64(y, i, ti__get_f64(y, i) / k->n_in);
        }
    }
    return TI_OK;
}

#define TI__BIN_WRAP(NAME, OP)                                                                \
    TI__PRIVATE int ti__bin_##NAME##_shape(ti__kctx *k) { return ti__bin_shape_op(k, OP); }   \
    TI__PRIVATE ti_status ti__bin_##NAME##_run(ti__kctx *k) { return ti__bin_run_op(k, OP); }
TI__BIN_WRAP(add, TI__BOP_ADD)
TI__BIN_WRAP(sub, TI__BOP_SUB)
TI__BIN_WRAP(mul, TI__BOP_MUL)
TI__BIN_WRAP(div, TI__BOP_DIV)
TI__BIN_WRAP(pow, TI__BOP_POW)
TI__BIN_WRAP(mod, TI__BOP_MOD)
TI__BIN_WRAP(min, TI__BOP_MIN)
TI__BIN_WRAP(max, TI__BOP_MAX)
TI__BIN_WRAP(sum, TI__BOP_SUM)
TI__BIN_WRAP(mean, TI__BOP_MEAN)
TI__BIN_WRAP(prelu, TI__BOP_PRELU)
TI__BIN_WRAP(equal, TI__BOP_EQ)
TI__BIN_WRAP(greater, TI__BOP_GT)
TI__BIN_WRAP(less, TI__BOP_LT)
TI__BIN_WRAP(greater_equal, TI__BOP_GE)
TI__BIN_WRAP(less_equal, TI__BOP_LE)
TI__BIN_WRAP(and, TI__BOP_AND)
TI__BIN_WRAP(or, TI__BOP_OR)
TI__BIN_WRAP(xor, TI__BOP_XOR)
TI__BIN_WRAP(bitshift, TI__BOP_SHIFT)
TI__BIN_WRAP(bitwise_and, TI__BOP_BAND)
TI__BIN_WRAP(bitwise_or, TI__BOP_BOR)
TI__BIN_WRAP(bitwise_xor, TI__BOP_BXOR)

/* ---- Where: out = cond ? x : y, three-way broadcast, any dtype (copied by size) ------- */
TI__PRIVATE int ti__where_shape(ti__kctx *k) {
    for (int i = 0; i < 3; i++) TI__REQUIRE_INPUT(k, i);
    if (k->n_out < 1 || k->out[0] == NULL)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "output 0 is required");
    const ti_tensor *c = k->in[0], *x = k->in[1], *y = k->in[2];
    if (c->dtype != TI_DTYPE_BOOL)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "condition has dtype %s, expected bool",
                         ti_dtype_name(c->dtype));
    if (!TI__EDT_IN(x->dtype, TI__EDT_ALL))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "dtype %s is not supported",
                         ti_dtype_name(x->dtype));
    if (x->dtype != y->dtype)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "X has dtype %s, Y has %s",
                         ti_dtype_name(x->dtype), ti_dtype_name(y->dtype));
    int64_t d1[TI_MAX_DIMS], d2[TI_MAX_DIMS];
    int r1, r2;
    char s1[128], s2[128];
    if (!ti__broadcast_shape(c->rank, c->shape, x->rank, x->shape, &r1, d1))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "condition shape %s and X shape %s do not broadcast",
                         ti__bin_shape_str(s1, sizeof s1, c->rank, c->shape),
                         ti__bin_shape_str(s2, sizeof s2, x->rank, x->shape));
    if (!ti__broadcast_shape(r1, d1, y->rank, y->shape, &r2, d2))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "shapes %s and Y shape %s do not broadcast",
                         ti__bin_shape_str(s1, sizeof s1, r1, d1),
                         ti__bin_shape_str(s2, sizeof s2, y->rank, y->shape));
    if (!ti__set_shape(k->out[0], x->dtype, r2, d2))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "output shape is invalid");
    return TI_OK;
}

#define TI__WHERE_LOOP(T)                                                                     \
    do {                                                                                      \
        const T *x = (const T *)j->in[1] + off[1], *y = (const T *)j->in[2] + off[2];         \
        T *o = (T *)j->out + oi;                                                              \
        const size_t sx = step[1], sy = step[2];                                              \
        for (size_t i = 0; i < n; i++) o[i] = c[i * sc] ? x[i * sx] : y[i * sy];              \
    } while (0)

TI__PRIVATE void ti__where_inner(const ti__bjob *j, size_t oi, const size_t *off,
                                 const size_t *step, size_t n) {
    const uint8_t *c = (const uint8_t *)j->in[0] + off[0];
    const size_t sc = step[0];
    switch (ti_dtype_size(j->out_dt)) {
    case 1: TI__WHERE_LOOP(uint8_t); break;
    case 2: TI__WHERE_LOOP(uint16_t); break;
    case 4: TI__WHERE_LOOP(uint32_t); break;
    case 8: TI__WHERE_LOOP(uint64_t); break;
    default: break;
    }
}

TI__PRIVATE ti_status ti__where_run(ti__kctx *k) {
    ti_tensor *out = k->out[0];
    ti__bjob j;
    memset(&j, 0, sizeof j);
    const ti_tensor *ins[3];
    for (int i = 0; i < 3; i++) {
        ins[i] = k->in[i];
        j.in[i] = k->in[i]->data;
        j.in_dt[i] = k->in[i]->dtype;
    }
    ti__bcast_init(&j.bc, 3, ins, out->rank, out->shape);
    j.out = out->data;
    j.out_dt = out->dtype;
    j.fn = ti__where_inner;
    ti__bcast_run(k, &j);
    return TI_OK;
}

TI__PRIVATE const ti__op ti__ops_binary[] = {
    {"Add", ti__bin_add_shape, ti__bin_add_run, NULL, 0},
    {"Sub", ti__bin_sub_shape, ti__bin_sub_run, NULL, 0},
    {"Mul", ti__bin_mul_shape, ti__bin_mul_run, NULL, 0},
    {"Div", ti__bin_div_shape, ti__bin_div_run, NULL, 0},
    {"Pow", ti__bin_pow_shape, ti__bin_pow_run, NULL, 0},
    {"Mod", ti__bin_mod_shape, ti__bin_mod_run, NULL, 0},
    {"Min", ti__bin_min_shape, ti__bin_min_run, NULL, 0},
    {"Max", ti__bin_max_shape, ti__bin_max_run, NULL, 0},
    {"Sum", ti__bin_sum_shape, ti__bin_sum_run, NULL, 0},
    {"Mean", ti__bin_mean_shape, ti__bin_mean_run, NULL, 0},
    {"PRelu", ti__bin_prelu_shape, ti__bin_prelu_run, NULL, 0},
    {"Equal", ti__bin_equal_shape, ti__bin_equal_run, NULL, 0},
    {"Greater", ti__bin_greater_shape, ti__bin_greater_run, NULL, 0},
    {"Less", ti__bin_less_shape, ti__bin_less_run, NULL, 0},
    {"GreaterOrEqual", ti__bin_greater_equal_shape, ti__bin_greater_equal_run, NULL, 0},
    {"LessOrEqual", ti__bin_less_equal_shape, ti__bin_less_equal_run, NULL, 0},
    {"And", ti__bin_and_shape, ti__bin_and_run, NULL, 0},
    {"Or", ti__bin_or_shape, ti__bin_or_run, NULL, 0},
    {"Xor", ti__bin_xor_shape, ti__bin_xor_run, NULL, 0},
    {"BitShift", ti__bin_bitshift_shape, ti__bin_bitshift_run, NULL, 0},
    {"BitwiseAnd", ti__bin_bitwise_and_shape, ti__bin_bitwise_and_run, NULL, 0},
    {"BitwiseOr", ti__bin_bitwise_or_shape, ti__bin_bitwise_or_run, NULL, 0},
    {"BitwiseXor", ti__bin_bitwise_xor_shape, ti__bin_bitwise_xor_run, NULL, 0},
    {"Where", ti__where_shape, ti__where_run, NULL, 0},
    {NULL, NULL, NULL, NULL, 0}
};
