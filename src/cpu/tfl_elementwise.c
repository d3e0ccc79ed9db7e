/* TFLite elementwise ops of two or more inputs (domain "tflite"): ADD, SUB, MUL, DIV,
 * MAXIMUM, MINIMUM, SQUARED_DIFFERENCE, POW, PRELU, FLOOR_DIV, FLOOR_MOD, LOGICAL_AND/OR,
 * the six comparisons, SELECT, SELECT_V2 and ADD_N, with TFLite's broadcasting; and the op
 * table of every TFLite elementwise op (the one-input ops are in tfl_activation.c).
 * Quantized (uint8, int8, int16) arithmetic repeats TFLite's integer kernels bit for bit.
 * Relies on binary.c's broadcast walker (ti__bcast_*) and value carriers, qmath.c, the
 * helpers of tfl_activation.c and, for the 8-bit ADD's vector lanes on AVX-512,
 * cpu/x86/tfl_add_avx512.c. Must not allocate: the walker runs on stack chunks. */

enum {
    TI__TB_ADD, TI__TB_SUB, TI__TB_MUL, TI__TB_DIV, TI__TB_MAX, TI__TB_MIN, TI__TB_SQDIFF,
    TI__TB_POW, TI__TB_PRELU, TI__TB_FLOOR_DIV, TI__TB_FLOOR_MOD, TI__TB_AND, TI__TB_OR,
    TI__TB_EQ, TI__TB_NE, TI__TB_LT, TI__TB_LE, TI__TB_GT, TI__TB_GE
};
#define TI__TB_F TI__EDT(TI_DTYPE_F32)
#define TI__TB_I32 TI__EDT(TI_DTYPE_I32)
#define TI__TB_I64 TI__EDT(TI_DTYPE_I64)
#define TI__TB_I16 TI__EDT(TI_DTYPE_I16)
#define TI__TB_Q (TI__EDT(TI_DTYPE_U8) | TI__EDT(TI_DTYPE_I8) | TI__EDT(TI_DTYPE_I16))
/* raw: dtypes computed on as plain values; quant: dtypes that need quantization parameters
 * (int16 in both: quantized when the tensor carries parameters). Indexed by TI__TB_*. */
static const struct {
    unsigned raw, quant;
    int act; /* has fused_activation_function */
} ti__tfl_bin_types[] = {
    {TI__TB_F | TI__TB_I32 | TI__TB_I64 | TI__TB_I16, TI__TB_Q, 1},    /* ADD */
    {TI__TB_F | TI__TB_I32 | TI__TB_I64, TI__TB_Q, 1},                 /* SUB */
    {TI__TB_F | TI__TB_I32 | TI__TB_I64 | TI__TB_I16, TI__TB_Q, 1},    /* MUL */
    {TI__TB_F | TI__TB_I32, TI__TB_Q, 1},                              /* DIV */
    {TI__TB_F | TI__TB_I32 | TI__TB_I64 | TI__TB_Q, 0, 0},             /* MAXIMUM: raw values */
    {TI__TB_F | TI__TB_I32 | TI__TB_I64 | TI__TB_Q, 0, 0},             /* MINIMUM */
    {TI__TB_F | TI__TB_I32, TI__EDT(TI_DTYPE_I8), 0},                  /* SQUARED_DIFFERENCE */
    {TI__TB_F | TI__TB_I32, 0, 0},                                     /* POW */
    {TI__TB_F, TI__TB_Q, 0},                                           /* PRELU */
    {TI__TB_F | TI__TB_I32 | TI__TB_I16 | TI__EDT(TI_DTYPE_I8), 0, 0}, /* FLOOR_DIV: raw */
    {TI__TB_F | TI__TB_I32 | TI__TB_I64 | TI__TB_I16 | TI__EDT(TI_DTYPE_I8), 0, 0}, /* FLOOR_MOD */
    {TI__EDT_BOOL, 0, 0},                                              /* LOGICAL_AND */
    {TI__EDT_BOOL, 0, 0},                                              /* LOGICAL_OR */
    {TI__EDT_BOOL | TI__TB_F | TI__TB_I32 | TI__TB_I64 | TI__TB_I16, TI__TB_Q, 0}, /* EQUAL */
    {TI__EDT_BOOL | TI__TB_F | TI__TB_I32 | TI__TB_I64 | TI__TB_I16, TI__TB_Q, 0}, /* NOT_EQUAL */
    {TI__TB_F | TI__TB_I32 | TI__TB_I64 | TI__TB_I16, TI__TB_Q, 0},    /* LESS */
    {TI__TB_F | TI__TB_I32 | TI__TB_I64 | TI__TB_I16, TI__TB_Q, 0},    /* LESS_EQUAL */
    {TI__TB_F | TI__TB_I32 | TI__TB_I64 | TI__TB_I16, TI__TB_Q, 0},    /* GREATER */
    {TI__TB_F | TI__TB_I32 | TI__TB_I64 | TI__TB_I16, TI__TB_Q, 0},    /* GREATER_EQUAL */
};
#define TI__TB_BOOL_OUT(op) ((op) >= TI__TB_AND)

/* A broadcast job: binary.c's walker job first (it hands that pointer back), then the
 * parameters of TFLite's kernels. */
typedef struct ti__tfl_bjob {
    ti__bjob b;
    int op, quant;
    int pot16;                      /* int16 ADD/SUB with power-of-two scales */
    int32_t off1, off2, out_off;    /* -zero_point of the inputs, +zero_point of the output */
    int32_t m1, m2, mo;             /* input and output multipliers */
    int s1, s2, so, ls;             /* their shifts; left_shift of ADD/SUB/compare */
    int32_t lo, hi;                 /* clamp of integer outputs */
    float flo, fhi;                 /* clamp of float outputs */
    size_t es;                      /* SELECT: element bytes */
    int add_mode;                   /* 8-bit ADD: TI__TFL_ADD_* of the vector lanes */
    size_t add_row, add_lanes;      /* ... which are the first row - row % lanes of a row */
    /* the vector lanes' input terms as steps (ti__tfl_add8c_avx512): off1, off2, pre1, pre2,
     * m1, m2, post1, post2; add_c 1 when they apply (neither multiplier INT32_MIN) */
    int32_t add_p[8];
    int add_c;
    /* 8-bit ADD / SUB / MUL / comparisons: per input byte, the offset (and rescaled) value,
     * for TFLite's scalar code [0] and its vector loop [1] (ti__tfl_bin_q8) */
    int32_t t1[2][256], t2[2][256];
    /* 8-bit ADD on AVX512-VBMI: t1[1] and t2[1] as byte planes at add_plm's first 64-byte
     * boundary (ti__tfl_add_planes), add_v 1 where they apply (ti__tfl_add8v_prep_avx512).
     * Planes straddling cache lines made its ADDs 13 % slower (tf2 int8 MobileNetV2, Zen 4). */
    int add_v;
    uint8_t add_plm[2 * 4 * 256 + 63];
} ti__tfl_bjob;

/* Where in add_plm the planes start: its first 64-byte boundary. */
TI__PRIVATE size_t ti__tfl_add_planes(const ti__tfl_bjob *j) {
    return (64 - (uintptr_t)j->add_plm % 64) % 64;
}

/* TFLite's optimized 8-bit ADD, as every x86 and ARM build compiles it (x86 through
 * NEON_2_SSE), computes most elements in vector loops whose rounding differs from the
 * reference kernel; the leftover elements of each loop use the reference arithmetic.
 * ELEM8: int8 elementwise, one rounding after a combined shift (x << (20 + shift)).
 * SPLIT: uint8, and int8 scalar broadcast: rounding multiply, then a truncating shift. */
enum { TI__TFL_ADD_REF, TI__TFL_ADD_ELEM8, TI__TFL_ADD_SPLIT };

/* TFLite's ProcessBroadcastShapes and BinaryBroadcastFiveFold: which loop computes each
 * output element. Sets the mode and the row length of the vector loops. */
TI__PRIVATE void ti__tfl_add_lanes(ti__tfl_bjob *j, const ti_tensor *a, const ti_tensor *b,
                                   size_t total) {
    const int r = TI__MAX(a->rank, b->rank);
    int64_t ea[TI_MAX_DIMS], eb[TI_MAX_DIMS], y[5] = {1, 1, 1, 1, 1};
    int cat = 0, i, same = 1; /* cat: 1 first input broadcasts fast, 2 second, 3 generic */
    for (i = 0; i < r; i++) {
        ea[i] = i < r - a->rank ? 1 : a->shape[i - (r - a->rank)];
        eb[i] = i < r - b->rank ? 1 : b->shape[i - (r - b->rank)];
        same = same && ea[i] == eb[i];
    }
    j->add_lanes = a->dtype == TI_DTYPE_I8 ? 16 : 8;
    j->add_mode = a->dtype == TI_DTYPE_I8 ? TI__TFL_ADD_ELEM8 : TI__TFL_ADD_SPLIT;
    j->add_row = total;
    if (same) return;
    for (i = r - 1; i >= 0 && cat == 0; i--) {
        if (ea[i] == eb[i]) continue;
        cat = ea[i] == 1 ? 1 : (eb[i] == 1 ? 2 : 3);
    }
    if (cat != 3) {
        const int64_t *A = cat == 2 ? eb : ea, *B = cat == 2 ? ea : eb;
        i = r - 1;
        while (i >= 0 && A[i] == B[i]) y[4] *= B[i--];
        while (i >= 0 && A[i] == 1) y[3] *= B[i--];
        while (i >= 0 && A[i] == B[i]) y[2] *= A[i--];
        while (i >= 0 && B[i] == 1) y[1] *= A[i--];
        while (i >= 0 && A[i] == B[i]) y[0] *= B[i--];
        if (i >= 0) cat = 3;
    }
    if (cat == 3) { /* generic broadcast: the reference kernel throughout */
        j->add_mode = TI__TFL_ADD_REF;
        return;
    }
    if (y[4] > 1) {
        j->add_row = (size_t)y[4];
    } else { /* rows of a broadcast scalar: 8 lanes, split rounding */
        j->add_row = (size_t)y[3];
        j->add_lanes = 8;
        j->add_mode = TI__TFL_ADD_SPLIT;
    }
}

/* vshlq_s32: a negative count shifts right, truncating */
TI__PRIVATE int32_t ti__tfl_vshl(int32_t x, int n) {
    if (n >= 32 || n <= -32) return n > 0 ? 0 : (x < 0 ? -1 : 0);
    return n >= 0 ? (int32_t)((uint32_t)x << n) : x >> -n;
}

/* One 8-bit ADD element of a vector lane (see TI__TFL_ADD_*). */
TI__PRIVATE int32_t ti__tfl_add_vec(const ti__tfl_bjob *j, int32_t x, int32_t y, int is_u8) {
    int32_t sx, sy;
    if (j->add_mode == TI__TFL_ADD_ELEM8) {
        sx = ti__q_srdhm(ti__tfl_vshl(x, j->ls + j->s1), j->m1);
        sy = ti__q_srdhm(ti__tfl_vshl(y, j->ls + j->s2), j->m2);
    } else {
        sx = ti__tfl_vshl(ti__q_srdhm(ti__tfl_vshl(x, j->ls), j->m1), j->s1);
        sy = ti__tfl_vshl(ti__q_srdhm(ti__tfl_vshl(y, j->ls), j->m2), j->s2);
    }
    const int32_t r = ti__q_rdbypot(ti__q_srdhm(ti__tfl_wadd(sx, sy), j->mo), -j->so);
    /* narrowed to int16 (truncating), offset added in int16, then saturated to 8 bits */
    const int16_t s = (int16_t)(uint16_t)((uint32_t)r + (uint32_t)j->out_off);
    const int32_t v = is_u8 ? ti__tfl_clamp(s, 0, 255) : ti__tfl_clamp(s, -128, 127);
    return ti__tfl_clamp(v, j->lo, j->hi);
}

/* TFLite's RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(x, m), -shift) where DIV
 * can ask for a right shift past 31: the int32 shift then wraps modulo 32, as the compiled
 * kernel does on x86 and ARM64 (the mask is all ones, the remainder is x itself). */
TI__PRIVATE int32_t ti__tfl_div_requant(int32_t x, int32_t m, int shift) {
    const int32_t p = ti__q_srdhm(x, m);
    if (shift > 0) return ti__tfl_qm(x, m, shift);
    if (-shift <= 31) return ti__q_rdbypot(p, -shift);
    return (p >> ((-shift) & 31)) + (p > (p < 0 ? 0 : -1) ? 1 : 0);
}

TI__PRIVATE int ti__tfl_quantized(const ti_tensor *t, unsigned raw, unsigned quant) {
    return TI__EDT_IN(t->dtype, quant) && (t->quant.count > 0 || !TI__EDT_IN(t->dtype, raw));
}

/* int64 -> the value the dtype stores (wraps as C++ integer arithmetic does in practice) */
TI__PRIVATE int64_t ti__tfl_wrap(int64_t v, ti_dtype t) {
    switch (t) {
    case TI_DTYPE_I8: return (int8_t)(uint8_t)(uint64_t)v;
    case TI_DTYPE_U8: return (uint8_t)(uint64_t)v;
    case TI_DTYPE_I16: return (int16_t)(uint16_t)(uint64_t)v;
    case TI_DTYPE_I32: return (int32_t)(uint32_t)(uint64_t)v;
    default: return v;
    }
}

/* ---- float32 ------------------------------------------------------------------------- */
#define TI__TB_F32(EXPR)                                                                      \
    for (size_t i = 0; i < n; i++) {                                                          \
        const float x = a[i * sa], y = c[i * sb];                                             \
        const float r = (EXPR);                                                               \
        of[i] = r < lo ? lo : (r > hi ? hi : r);                                              \
    }
#define TI__TB_F32_NC(EXPR)                                                                   \
    for (size_t i = 0; i < n; i++) {                                                          \
        const float x = a[i * sa], y = c[i * sb];                                             \
        of[i] = (EXPR);                                                                       \
    }
#define TI__TB_F32_B(EXPR)                                                                    \
    for (size_t i = 0; i < n; i++) {                                                          \
        const float x = a[i * sa], y = c[i * sb];                                             \
        ob[i] = (uint8_t)((EXPR) ? 1 : 0);                                                    \
    }

TI__PRIVATE float ti__tfl_floor_modf(float x, float y) {
    const float t = fmodf(x, y);
    return (t != 0.0f && ((y < 0.0f) != (t < 0.0f))) ? t + y : t;
}

TI__PRIVATE void ti__tfl_bin_f32(const ti__bjob *jb, size_t o, const size_t *off,
                                 const size_t *step, size_t n) {
    const ti__tfl_bjob *j = (const ti__tfl_bjob *)jb;
    const float *a = (const float *)jb->in[0] + off[0], *c = (const float *)jb->in[1] + off[1];
    const size_t sa = step[0], sb = step[1];
    float *of = (float *)jb->out + o;
    uint8_t *ob = (uint8_t *)jb->out + o;
    const float lo = j->flo, hi = j->fhi; /* TFLite clamps even without activation */
    switch (j->op) {
    case TI__TB_ADD: TI__TB_F32(x + y); break;
    case TI__TB_SUB: TI__TB_F32(x - y); break;
    case TI__TB_MUL: TI__TB_F32(x * y); break;
    case TI__TB_DIV: TI__TB_F32(x / y); break;
    case TI__TB_MAX: TI__TB_F32_NC(x > y ? x : y); break;
    case TI__TB_MIN: TI__TB_F32_NC(x < y ? x : y); break;
    case TI__TB_SQDIFF: TI__TB_F32_NC((x - y) * (x - y)); break;
    case TI__TB_POW: TI__TB_F32_NC(powf(x, y)); break;
    case TI__TB_PRELU: TI__TB_F32_NC(x >= 0.0f ? x : x * y); break;
    case TI__TB_FLOOR_DIV: TI__TB_F32_NC((float)floor((double)x / (double)y)); break;
    case TI__TB_FLOOR_MOD: TI__TB_F32_NC(ti__tfl_floor_modf(x, y)); break;
    case TI__TB_EQ: TI__TB_F32_B(x == y); break;
    case TI__TB_NE: TI__TB_F32_B(x != y); break;
    case TI__TB_LT: TI__TB_F32_B(x < y); break;
    case TI__TB_LE: TI__TB_F32_B(x <= y); break;
    case TI__TB_GT: TI__TB_F32_B(x > y); break;
    case TI__TB_GE: TI__TB_F32_B(x >= y); break;
    default: break;
    }
}

/* ---- quantized ----------------------------------------------------------------------- */
/* a[i] = op(a[i], c[i]) on raw quantized values, as TFLite's integer kernels. */
TI__PRIVATE void ti__tfl_bin_q_op(const ti__tfl_bjob *j, int64_t *a, const int64_t *c, size_t n,
                                  size_t o) {
    const int op = j->op;
    for (size_t i = 0; i < n; i++) {
        const int32_t x = j->off1 + (int32_t)a[i], y = j->off2 + (int32_t)c[i];
        int64_t r = 0;
        switch (op) {
        case TI__TB_ADD: case TI__TB_SUB:
            if (j->add_mode != TI__TFL_ADD_REF && op == TI__TB_ADD) {
                const size_t p = (o + i) % j->add_row;
                if (p < j->add_row - j->add_row % j->add_lanes) {
                    a[i] = ti__tfl_add_vec(j, x, y, j->b.out_dt == TI_DTYPE_U8);
                    continue;
                }
            }
            if (j->pot16) { /* int16 with power-of-two scales: one input shifted, saturating */
                const int32_t sx = ti__tfl_rdbypot16((int16_t)x, -j->s1);
                const int32_t sy = ti__tfl_rdbypot16((int16_t)y, -j->s2);
                r = op == TI__TB_ADD ? ti__tfl_clamp((int64_t)sx + sy, INT16_MIN, INT16_MAX)
                                     : (int64_t)sx - sy;
            } else {
                const int32_t sx = ti__tfl_qm(x * (1 << j->ls), j->m1, j->s1);
                const int32_t sy = ti__tfl_qm(y * (1 << j->ls), j->m2, j->s2);
                const int32_t sum = op == TI__TB_ADD ? ti__tfl_wadd(sx, sy) : ti__tfl_wsub(sx, sy);
                r = (int64_t)ti__tfl_qm(sum, j->mo, j->so) + j->out_off;
            }
            break;
        case TI__TB_MUL:
            r = (int64_t)ti__tfl_qm((int32_t)ti__tfl_clamp((int64_t)x * y, INT32_MIN, INT32_MAX),
                                    j->mo, j->so) + j->out_off;
            break;
        case TI__TB_DIV: { /* TFLite DivElementwise: reciprocal of the divisor in fixed point */
            int32_t p = x, q = y, rs;
            if (q < 0) {
                p = -p;
                q = -q;
            }
            const int32_t inv = ti__tfl_reciprocal(q, &rs);
            const int head = p == 0 ? 31 : (p > 0 ? ti__tfl_clz32((uint32_t)p) - 1
                                                  : ti__tfl_clz32(~(uint32_t)p) - 1);
            const int32_t uq = ti__q_srdhm((int32_t)((uint32_t)p << head), inv);
            r = (int64_t)ti__tfl_div_requant(uq, j->mo, j->so - rs - head) + j->out_off;
            break;
        }
        case TI__TB_SQDIFF: {
            const int32_t d = ti__tfl_wsub(ti__tfl_qm(x * (1 << j->ls), j->m1, j->s1),
                                           ti__tfl_qm(y * (1 << j->ls), j->m2, j->s2));
            r = (int64_t)ti__tfl_qm((int32_t)ti__tfl_clamp((int64_t)d * d, INT32_MIN, INT32_MAX),
                                    j->mo, j->so) + j->out_off;
            break;
        }
        case TI__TB_PRELU:
            r = x >= 0 ? ti__tfl_qm(x, j->m1, j->s1) : ti__tfl_qm(x * y, j->m2, j->s2);
            r += j->out_off;
            break;
        default: { /* comparisons on both inputs rescaled to a common scale */
            const int32_t sx = ti__tfl_qm(x * (1 << j->ls), j->m1, j->s1);
            const int32_t sy = ti__tfl_qm(y * (1 << j->ls), j->m2, j->s2);
            a[i] = op == TI__TB_EQ ? sx == sy : op == TI__TB_NE ? sx != sy : op == TI__TB_LT ? sx < sy
                   : op == TI__TB_LE ? sx <= sy : op == TI__TB_GT ? sx > sy : sx >= sy;
            continue;
        }
        }
        a[i] = ti__tfl_clamp(r, j->lo, j->hi);
    }
}

/* 8-bit ADD, SUB, MUL and comparisons with tabulated input terms. Same results as
 * ti__tfl_bin_q_op, several times faster. */
TI__PRIVATE void ti__tfl_bin_q8(const ti__bjob *jb, size_t o, const size_t *off,
                                const size_t *step, size_t n) {
    const ti__tfl_bjob *j = (const ti__tfl_bjob *)jb;
    const uint8_t *a = (const uint8_t *)jb->in[0] + off[0], *c = (const uint8_t *)jb->in[1] + off[1];
    const size_t sa = step[0], sb = step[1];
    uint8_t *y = (uint8_t *)jb->out + o;
    const int op = j->op, u8 = jb->out_dt == TI_DTYPE_U8;
    const int32_t lo = j->lo, hi = j->hi;
    switch (op) {
    case TI__TB_ADD: case TI__TB_SUB: {
        const size_t row = j->add_mode != TI__TFL_ADD_REF ? j->add_row : 0;
        const size_t vec_end = row - row % (j->add_lanes ? j->add_lanes : 1);
        size_t p = row ? o % row : 0;
#ifdef TI__X86_SIMD
        /* AVX-512 for runs of 16 vector-lane elements of contiguous inputs, AVX2 for runs of 8 */
        typedef size_t (*add8_fn)(const uint8_t *, const uint8_t *, uint8_t *, size_t,
                                  const int32_t *, const int32_t *, int32_t, int, int32_t, int,
                                  int32_t, int32_t);
        add8_fn add8 = NULL;
        size_t lanes = 8;
        if (sa == 1 && sb == 1 && row > 0 && lo <= hi && j->mo != INT32_MIN && j->so >= -31) {
#ifdef TI__X86_VNNI
            if (ti__cpu_isa() >= TI__ISA_AVX512VNNI) add8 = ti__tfl_add8_avx512, lanes = 16;
#endif
            if (add8 == NULL && ti__cpu_isa() >= TI__ISA_AVX2) add8 = ti__tfl_add8_avx2;
        }
#endif
        for (size_t i = 0; i < n; i++) {
#ifdef TI__X86_SIMD
            if (add8 != NULL && p < vec_end && vec_end - p >= lanes && n - i >= lanes) {
                size_t d = 0, run = TI__MIN(vec_end - p, n - i);
                int e = j->so < 0 ? -j->so : 0;
#ifdef TI__X86_VNNI
                if (lanes == 16 && j->add_v) /* 64 at a time, the terms looked up in registers */
                    d = ti__tfl_add8v_avx512(a + i, c + i, y + i, run,
                                             j->add_plm + ti__tfl_add_planes(j), j->mo, e,
                                             j->out_off, u8, lo, hi);
                if (lanes == 16 && j->add_c && jb->in_dt[0] == jb->out_dt) /* no gathers */
                    d += ti__tfl_add8c_avx512(a + i + d, c + i + d, y + i + d, run - d, j->add_p,
                                              j->mo, e, j->out_off, u8, lo, hi);
                else
#endif
                    d += add8(a + i + d, c + i + d, y + i + d, run - d, j->t1[1], j->t2[1], j->mo,
                              e, j->out_off, u8, lo, hi);
                i += d;
                p += d;
                if (p == row) p = 0;
                if (i >= n) break;
            }
#endif
            const int vec = p < vec_end;
            if (row && ++p == row) p = 0;
            const int32_t sx = j->t1[vec][a[i * sa]], sy = j->t2[vec][c[i * sb]];
            int32_t v;
            if (vec) {
                const int32_t r = ti__q_rdbypot(ti__q_srdhm(ti__tfl_wadd(sx, sy), j->mo), -j->so);
                const int16_t s16 = (int16_t)(uint16_t)((uint32_t)r + (uint32_t)j->out_off);
                v = ti__tfl_clamp(ti__tfl_clamp(s16, u8 ? 0 : -128, u8 ? 255 : 127), lo, hi);
            } else {
                const int32_t sum = op == TI__TB_ADD ? ti__tfl_wadd(sx, sy) : ti__tfl_wsub(sx, sy);
                v = ti__tfl_clamp((int64_t)ti__tfl_qm(sum, j->mo, j->so) + j->out_off, lo, hi);
            }
            y[i] = (uint8_t)v;
        }
        break;
    }
    case TI__TB_MUL:
        for (size_t i = 0; i < n; i++) {
            const int32_t prod = j->t1[0][a[i * sa]] * j->t2[0][c[i * sb]];
            y[i] = (uint8_t)ti__tfl_clamp((int64_t)ti__tfl_qm(prod, j->mo, j->so) + j->out_off, lo, hi);
        }
        break;
    default: /* comparisons of the rescaled inputs */
        for (size_t i = 0; i < n; i++) {
            const int32_t sx = j->t1[0][a[i * sa]], sy = j->t2[0][c[i * sb]];
            y[i] = (uint8_t)(op == TI__TB_EQ ? sx == sy : op == TI__TB_NE ? sx != sy
                             : op == TI__TB_LT ? sx < sy : op == TI__TB_LE ? sx <= sy
                             : op == TI__TB_GT ? sx > sy : sx >= sy);
        }
        break;
    }
}

/* Fills j->t1 / t2 for ti__tfl_bin_q8 and selects it; the ops' parameters are set. cpu: the
 * CPU kernel will run it (0: the OpenCL ADD takes the tables alone, so no VBMI planes). */
TI__PRIVATE void ti__tfl_bin_q8_tables(ti__tfl_bjob *j, ti_dtype dt, int cpu) {
    (void)cpu; /* read on x86 with VNNI only */
    for (int v = 0; v < 256; v++) {
        const int32_t raw = dt == TI_DTYPE_I8 ? (int32_t)(int8_t)v : v;
        const int32_t x = j->off1 + raw, y = j->off2 + raw;
        if (j->op == TI__TB_MUL) {
            j->t1[0][v] = x;
            j->t2[0][v] = y;
            continue;
        }
        j->t1[0][v] = ti__tfl_qm(x * (1 << j->ls), j->m1, j->s1);
        j->t2[0][v] = ti__tfl_qm(y * (1 << j->ls), j->m2, j->s2);
        if (j->add_mode == TI__TFL_ADD_ELEM8) {
            j->t1[1][v] = ti__q_srdhm(ti__tfl_vshl(x, j->ls + j->s1), j->m1);
            j->t2[1][v] = ti__q_srdhm(ti__tfl_vshl(y, j->ls + j->s2), j->m2);
        } else if (j->add_mode == TI__TFL_ADD_SPLIT) {
            j->t1[1][v] = ti__tfl_vshl(ti__q_srdhm(ti__tfl_vshl(x, j->ls), j->m1), j->s1);
            j->t2[1][v] = ti__tfl_vshl(ti__q_srdhm(ti__tfl_vshl(y, j->ls), j->m2), j->s2);
        }
    }
    if (j->add_mode == TI__TFL_ADD_ELEM8 || j->add_mode == TI__TFL_ADD_SPLIT) {
        const int elem = j->add_mode == TI__TFL_ADD_ELEM8;
        int32_t prm[8] = {j->off1, j->off2, elem ? j->ls + j->s1 : j->ls,
                          elem ? j->ls + j->s2 : j->ls, j->m1, j->m2, elem ? 0 : j->s1,
                          elem ? 0 : j->s2};
        memcpy(j->add_p, prm, sizeof prm);
        j->add_c = j->m1 != INT32_MIN && j->m2 != INT32_MIN;
#if defined(TI__X86_SIMD) && defined(TI__X86_VNNI)
        if (cpu && j->op == TI__TB_ADD && ti__cpu_vbmi() && j->mo != INT32_MIN && j->so >= -31)
            j->add_v = ti__tfl_add8v_prep_avx512(j->add_plm + ti__tfl_add_planes(j), j->t1[1],
                                                 j->t2[1], j->mo, j->so < 0 ? -j->so : 0,
                                                 j->out_off, j->b.out_dt == TI_DTYPE_U8, j->lo,
                                                 j->hi);
#endif
    }
    j->b.fn = ti__tfl_bin_q8;
}

/* ---- plain integers and bool --------------------------------------------------------- */
TI__PRIVATE void ti__tfl_bin_i_op(const ti__tfl_bjob *j, int64_t *a, const int64_t *c, size_t n) {
    const ti_dtype t = j->b.in_dt[0];
    for (size_t i = 0; i < n; i++) {
        const int64_t x = a[i], y = c[i];
        int64_t r;
        switch (j->op) {
        case TI__TB_ADD: r = (int64_t)((uint64_t)x + (uint64_t)y); break;
        case TI__TB_SUB: r = (int64_t)((uint64_t)x - (uint64_t)y); break;
        case TI__TB_MUL: r = (int64_t)((uint64_t)x * (uint64_t)y); break;
        case TI__TB_DIV: r = y == -1 ? (int64_t)(0u - (uint64_t)x) : (y == 0 ? 0 : x / y); break;
        case TI__TB_MAX: r = x > y ? x : y; break;
        case TI__TB_MIN: r = x < y ? x : y; break;
        case TI__TB_SQDIFF: {
            const int64_t d = ti__tfl_wrap((int64_t)((uint64_t)x - (uint64_t)y), t);
            r = (int64_t)((uint64_t)d * (uint64_t)d);
            break;
        }
        case TI__TB_POW: r = ti__tfl_f2i(pow((double)x, (double)y)); break;
        case TI__TB_FLOOR_DIV: r = y == 0 ? 0 : ti__carry_d2i(floor((double)x / (double)y)); break;
        case TI__TB_FLOOR_MOD: {
            const int64_t m = (y == 0 || y == -1) ? 0 : x % y;
            r = (m != 0 && ((y < 0) != (m < 0))) ? m + y : m;
            break;
        }
        case TI__TB_AND: r = x && y; break;
        case TI__TB_OR: r = x || y; break;
        case TI__TB_EQ: r = x == y; break;
        case TI__TB_NE: r = x != y; break;
        case TI__TB_LT: r = x < y; break;
        case TI__TB_LE: r = x <= y; break;
        case TI__TB_GT: r = x > y; break;
        default: r = x >= y; break;
        }
        if (j->op <= TI__TB_DIV) { /* fused activation on the stored value */
            r = ti__tfl_wrap(r, t);
            r = r < j->lo && j->lo != INT32_MIN ? j->lo : (r > j->hi && j->hi != INT32_MAX ? j->hi : r);
        }
        a[i] = r;
    }
}

/* Integer and quantized ops: chunks of int64 values (binary.c's carriers). */
TI__PRIVATE void ti__tfl_bin_int(const ti__bjob *jb, size_t o, const size_t *off,
                                 const size_t *step, size_t n) {
    const ti__tfl_bjob *j = (const ti__tfl_bjob *)jb;
    int64_t a[TI__CARRY_CHUNK], c[TI__CARRY_CHUNK];
    for (size_t d = 0; d < n; d += TI__CARRY_CHUNK) {
        const size_t m = TI__MIN((size_t)TI__CARRY_CHUNK, n - d);
        ti__carry_load_i(jb->in[0], jb->in_dt[0], off[0] + d * step[0], step[0], m, a);
        ti__carry_load_i(jb->in[1], jb->in_dt[1], off[1] + d * step[1], step[1], m, c);
        if (j->quant) ti__tfl_bin_q_op(j, a, c, m, o + d);
        else ti__tfl_bin_i_op(j, a, c, m);
        ti__carry_store_i(jb->out, jb->out_dt, o + d, m, a);
    }
}

/* ---- shapes -------------------------------------------------------------------------- */
TI__PRIVATE int ti__tfl_bcast2(ti__kctx *k, const ti_tensor *a, const ti_tensor *b, int *rank,
                               int64_t *dims) {
    if (!ti__broadcast_shape(a->rank, a->shape, b->rank, b->shape, rank, dims)) {
        char sa[96], sb[96];
        return ti__kfail(k, TI_ERR_BAD_MODEL, "shapes %s and %s do not broadcast",
                         ti__bin_shape_str(sa, sizeof sa, a->rank, a->shape),
                         ti__bin_shape_str(sb, sizeof sb, b->rank, b->shape));
    }
    return TI_OK;
}

TI__PRIVATE int ti__tfl_bin_shape(ti__kctx *k, int op) {
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    if (k->n_out < 1 || k->out[0] == NULL)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "output 0 is required");
    const ti_tensor *a = k->in[0], *b = k->in[1];
    ti_tensor *y = k->out[0];
    const unsigned raw = ti__tfl_bin_types[op].raw, quant = ti__tfl_bin_types[op].quant;
    int rank, r;
    int64_t dims[TI_MAX_DIMS];
    if (!TI__EDT_IN(a->dtype, raw | quant))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "input dtype %s is not supported",
                         ti_dtype_name(a->dtype));
    const int int16_prelu = op == TI__TB_PRELU && a->dtype == TI_DTYPE_I16 && b->dtype == TI_DTYPE_I8;
    if (a->dtype != b->dtype && !int16_prelu)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "inputs have dtypes %s and %s; expected equal dtypes",
                         ti_dtype_name(a->dtype), ti_dtype_name(b->dtype));
    if ((r = ti__tfl_bcast2(k, a, b, &rank, dims)) != TI_OK) return r;
    if (op == TI__TB_PRELU && (rank != a->rank || ti__shape_numel(rank, dims) != ti__numel(a)))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "alpha must broadcast to the input's shape");
    if (ti__tfl_quantized(a, raw, quant)) {
        if ((r = ti__tfl_qcheck(k, a, a->dtype, "input 0")) != TI_OK) return r;
        if ((r = ti__tfl_qcheck(k, b, b->dtype, "input 1")) != TI_OK) return r;
        if (a->quant.count > 1 || b->quant.count > 1)
            return ti__kfail(k, TI_ERR_UNSUPPORTED, "per-channel quantized inputs are not supported");
        if (!TI__TB_BOOL_OUT(op) && (r = ti__tfl_qcheck(k, y, a->dtype, "output")) != TI_OK) return r;
        float sc;
        int32_t z1 = 0, z2 = 0, zo = 0;
        ti__tfl_q(a, &sc, &z1);
        ti__tfl_q(b, &sc, &z2);
        ti__tfl_q(y, &sc, &zo);
        if (op == TI__TB_MUL && a->dtype == TI_DTYPE_I16 && (z1 != 0 || z2 != 0 || zo != 0))
            return ti__kfail(k, TI_ERR_UNSUPPORTED, "int16 MUL needs zero points 0, got %d, %d "
                             "and %d", (int)z1, (int)z2, (int)zo);
    }
    const ti_dtype yt = TI__TB_BOOL_OUT(op) ? TI_DTYPE_BOOL : a->dtype;
    if ((r = ti__tfl_check_out_dtype(k, yt)) != TI_OK) return r;
    if (!ti__set_shape(y, yt, rank, dims))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "output shape is invalid");
    return TI_OK;
}

/* TFLite CheckedLog2: log2 of a power-of-two scale, in float */
TI__PRIVATE int ti__tfl_log2(float x, int *l) {
    const float v = logf(x) * (1.0f / logf(2.0f)), r = roundf(v);
    *l = (int)r;
    return fabsf(v - r) < 1e-3f;
}

/* Input multipliers of ADD / SUB / SQUARED_DIFFERENCE relative to twice the larger input
 * scale, after a left shift; output multiplier for (2 max)^power / (2^(ls * power) out). */
TI__PRIVATE void ti__tfl_rescale_params(ti__tfl_bjob *j, float s1, float s2, float so, int ls,
                                        int squared) {
    const double twice = (double)(2.0f * (s1 > s2 ? s1 : s2));
    j->ls = ls;
    ti__q_quantize_multiplier((double)s1 / twice, &j->m1, &j->s1);
    ti__q_quantize_multiplier((double)s2 / twice, &j->m2, &j->s2);
    if (squared)
        ti__q_quantize_multiplier(twice * twice / (double)((float)(1 << (2 * ls)) * so), &j->mo, &j->so);
    else
        ti__q_quantize_multiplier(twice / (double)((float)(1 << ls) * so), &j->mo, &j->so);
}

/* Fills job *jp of binary op `op` on node k: broadcast walk, clamps, and the quantized
 * ops' multipliers and byte tables. Also what the OpenCL 8-bit ADD takes its parameters
 * from (cl/qops.c, cpu 0: nothing only the CPU kernels read), so both compute the same
 * bytes. */
TI__PRIVATE ti_status ti__tfl_bin_setup(ti__kctx *k, int op, int cpu, ti__tfl_bjob *jp) {
    const ti_tensor *a = k->in[0], *b = k->in[1];
    ti_tensor *y = k->out[0];
    ti__tfl_bjob *j = jp;
    memset(j, 0, sizeof *j);
    j->op = op;
    j->quant = ti__tfl_quantized(a, ti__tfl_bin_types[op].raw, ti__tfl_bin_types[op].quant);
    const int act = ti__tfl_bin_types[op].act
                        ? (int)ti__attr_i(k->node, "fused_activation_function", TI__TFL_ACT_NONE)
                        : TI__TFL_ACT_NONE;
    const size_t nb = ti__numel(b);
    /* divisors and exponents TFLite refuses at run time */
    if (op == TI__TB_DIV || op == TI__TB_FLOOR_DIV || op == TI__TB_FLOOR_MOD || op == TI__TB_POW) {
        float bs = 0.0f;
        int32_t bz = 0;
        if (j->quant) ti__tfl_q(b, &bs, &bz);
        for (size_t i = 0; i < nb; i++) {
            const int is_f = b->dtype == TI_DTYPE_F32;
            const double v = is_f ? (double)((const float *)b->data)[i] : (double)ti__get_i64(b, i);
            if (op == TI__TB_POW ? (!is_f && v < 0) : (op == TI__TB_DIV ? (!is_f && v == (double)bz)
                                                       : (op == TI__TB_FLOOR_DIV || !is_f) && v == 0.0))
                return ti__kfail(k, TI_ERR_INVALID_ARGUMENT, op == TI__TB_POW
                                     ? "negative exponent %g at element %zu of input 1"
                                     : "division by zero (value %g at element %zu of input 1)",
                                 v, i);
        }
    }
    ti_tensor *ins[2];
    ins[0] = (ti_tensor *)a;
    ins[1] = (ti_tensor *)b;
    ti__bcast_init(&j->b.bc, 2, (const ti_tensor *const *)ins, y->rank, y->shape);
    j->b.in[0] = a->data;
    j->b.in[1] = b->data;
    j->b.in_dt[0] = a->dtype;
    j->b.in_dt[1] = b->dtype;
    j->b.out = y->data;
    j->b.out_dt = y->dtype;
    j->b.fn = (a->dtype == TI_DTYPE_F32 && !j->quant) ? ti__tfl_bin_f32 : ti__tfl_bin_int;
    ti__tfl_act_f(act, &j->flo, &j->fhi);
    if (!ti__tfl_qrange(a->dtype, &j->lo, &j->hi)) { /* int64, bool: no clamp */
        j->lo = INT32_MIN;
        j->hi = INT32_MAX;
    }
    if (!j->quant && TI__EDT_IN(a->dtype, TI__TB_I32 | TI__TB_I16 | TI__TB_I64) &&
        act != TI__TFL_ACT_NONE) {
        /* CalculateActivationRange<int>: RELU [0, max], RELU6 [0, 6], RELU_N1_TO_1 [-1, 1] */
        if (act == TI__TFL_ACT_RELU || act == TI__TFL_ACT_RELU6) j->lo = 0;
        if (act == TI__TFL_ACT_RELU6) j->hi = 6;
        if (act == TI__TFL_ACT_RELU_N1_TO_1) {
            j->lo = -1;
            j->hi = 1;
        }
    }
    if (j->quant) {
        float s1 = 0.0f, s2 = 0.0f, so = 0.0f;
        int32_t z1 = 0, z2 = 0, zo = 0;
        ti__tfl_q(a, &s1, &z1);
        ti__tfl_q(b, &s2, &z2);
        if (!TI__TB_BOOL_OUT(op)) {
            ti__tfl_q(y, &so, &zo);
            ti__tfl_act_q(act, so, zo, j->lo, j->hi, &j->lo, &j->hi);
        }
        j->off1 = -z1;
        j->off2 = -z2;
        j->out_off = zo;
        switch (op) {
        case TI__TB_ADD: case TI__TB_SUB: {
            int l1, l2, lo;
            if (a->dtype == TI_DTYPE_I16 && z1 == 0 && z2 == 0 && zo == 0 &&
                ti__attr_i(k->node, "pot_scale_int16", 1) && ti__tfl_log2(s1, &l1) &&
                ti__tfl_log2(s2, &l2) && ti__tfl_log2(so, &lo)) {
                j->pot16 = 1;
                j->s1 = l1 - lo;
                j->s2 = l2 - lo;
                if ((j->s1 != 0 && j->s2 != 0) || j->s1 > 0 || j->s2 > 0)
                    return ti__kfail(k, TI_ERR_UNSUPPORTED,
                                     "int16 power-of-two scales %g, %g -> %g need one input at "
                                     "the output's scale and the other finer",
                                     (double)s1, (double)s2, (double)so);
            } else {
                ti__tfl_rescale_params(j, s1, s2, so, a->dtype == TI_DTYPE_I16 ? 15 : 20, 0);
                if (op == TI__TB_ADD && a->dtype != TI_DTYPE_I16)
                    ti__tfl_add_lanes(j, a, b, ti__numel(y));
            }
            break;
        }
        case TI__TB_SQDIFF: ti__tfl_rescale_params(j, s1, s2, so, 7, 1); break;
        case TI__TB_MUL: ti__q_quantize_multiplier((double)(s1 * s2 / so), &j->mo, &j->so); break;
        case TI__TB_DIV: ti__q_quantize_multiplier((double)(s1 / (s2 * so)), &j->mo, &j->so); break;
        case TI__TB_PRELU:
            ti__q_quantize_multiplier((double)(s1 / so), &j->m1, &j->s1);
            ti__q_quantize_multiplier((double)(s1 * s2 / so), &j->m2, &j->s2);
            ti__tfl_qrange(y->dtype, &j->lo, &j->hi);
            break;
        default: /* comparisons: each input times its scale, after a left shift of 8 */
            j->ls = 8;
            ti__q_quantize_multiplier((double)s1, &j->m1, &j->s1);
            ti__q_quantize_multiplier((double)s2, &j->m2, &j->s2);
            break;
        }
    }
    if (j->quant && TI__EDT_IN(a->dtype, TI__TQ8) && b->dtype == a->dtype && !j->pot16 &&
        (op == TI__TB_ADD || op == TI__TB_SUB || op == TI__TB_MUL || TI__TB_BOOL_OUT(op)))
        ti__tfl_bin_q8_tables(j, a->dtype, cpu);
    return TI_OK;
}

/* Elements per thread-pool task of the 8-bit and 16-bit ops: their integer rescaling costs
 * about 0.8 ns an element (ADD, AVX-512, Zen 4), ten times a float add, so the float ops'
 * grain left the 12544 elements of a 14 x 14 x 64 ADD (10 us) on one thread. */
#define TI__TFL_QBIN_GRAIN 4096

/* An 8-bit ADD's job set up once at planning (the prepack pass): its byte tables took 512
 * ti__q_mul a run, 0.7 % of tf2 int8 MobileNetV2's samples with the planes' set-up (perf).
 * Nothing of it reads the tensors' values (their data pointers are set at each run); an
 * ADD that does not take the byte tables is left to set itself up. */
TI__PRIVATE ti_status ti__tfl_add_prepack(ti__kctx *k, ti__node *node, ti__pool *pool) {
    ti__tfl_bjob *j = (ti__tfl_bjob *)ti__pool_alloc(pool, sizeof *j);
    if (j == NULL) return ti__kfail(k, TI_ERR_OUT_OF_MEMORY, "out of memory packing the ADD");
    ti_error tmp, *saved = k->err; /* a refusal is the run's to report */
    k->err = &tmp;
    ti_status st = ti__tfl_bin_setup(k, TI__TB_ADD, 1, j);
    k->err = saved;
    if (st == TI_OK && j->quant && j->b.fn == ti__tfl_bin_q8) {
        node->packed_kind = TI__PACK_TFL_ADD;
        node->packed = j;
        node->packed_bytes = sizeof *j;
    }
    return TI_OK;
}

/* The planned job p for this run: copied, its planes moved to the copy's 64-byte boundary
 * (ti__tfl_add_planes), the tensors' data pointers and the ISA's VBMI choice of now. */
TI__PRIVATE void ti__tfl_add_unpack(const ti__kctx *k, const ti__tfl_bjob *p, ti__tfl_bjob *j) {
    memcpy(j, p, sizeof *j);
    size_t from = ti__tfl_add_planes(p), to = ti__tfl_add_planes(j);
    if (from != to) memmove(j->add_plm + to, j->add_plm + from, 2 * 4 * 256);
    j->b.in[0] = k->in[0]->data;
    j->b.in[1] = k->in[1]->data;
    j->b.out = k->out[0]->data;
#if defined(TI__X86_SIMD) && defined(TI__X86_VNNI)
    j->add_v = j->add_v && ti__cpu_vbmi();
#else
    j->add_v = 0;
#endif
}

TI__PRIVATE ti_status ti__tfl_bin_run(ti__kctx *k, int op) {
    ti__tfl_bjob j;
    const ti__node *nd = k->node;
    ti_status st = TI_OK;
    if (op == TI__TB_ADD && nd->packed_kind == TI__PACK_TFL_ADD && nd->packed != NULL &&
        nd->packed_bytes == sizeof j)
        ti__tfl_add_unpack(k, (const ti__tfl_bjob *)nd->packed, &j);
    else
        st = ti__tfl_bin_setup(k, op, 1, &j);
    if (st != TI_OK) return st;
    if (j.quant) j.b.grain = TI__TFL_QBIN_GRAIN;
    ti__bcast_run(k, &j.b);
    return TI_OK;
}

/* ---- SELECT, SELECT_V2 --------------------------------------------------------------- */
TI__PRIVATE int ti__tfl_select_shape(ti__kctx *k, int v2) {
    for (int i = 0; i < 3; i++) TI__REQUIRE_INPUT(k, i);
    if (k->n_out < 1 || k->out[0] == NULL)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "output 0 is required");
    const ti_tensor *c = k->in[0], *x = k->in[1], *y = k->in[2];
    int rank = x->rank, r;
    int64_t dims[TI_MAX_DIMS];
    if (c->dtype != TI_DTYPE_BOOL)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "condition has dtype %s; expected bool",
                         ti_dtype_name(c->dtype));
    if (x->dtype != y->dtype || ti_dtype_size(x->dtype) == 0)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "inputs 1 and 2 have dtypes %s and %s; expected "
                         "one numeric dtype", ti_dtype_name(x->dtype), ti_dtype_name(y->dtype));
    memcpy(dims, x->shape, sizeof dims);
    if (v2) {
        int r1;
        int64_t d1[TI_MAX_DIMS];
        if ((r = ti__tfl_bcast2(k, c, x, &r1, d1)) != TI_OK) return r;
        ti_tensor t;
        memset(&t, 0, sizeof t);
        t.rank = r1;
        memcpy(t.shape, d1, sizeof d1);
        if ((r = ti__tfl_bcast2(k, &t, y, &rank, dims)) != TI_OK) return r;
    } else {
        int same = x->rank == y->rank && c->rank == x->rank;
        for (int d = 0; same && d < x->rank; d++)
            same = x->shape[d] == y->shape[d] && c->shape[d] == x->shape[d];
        if (!same && ti__numel(c) == 1 && ti__numel(x) == 1 && ti__numel(y) == 1) same = 1;
        if (!same) {
            int ok = x->rank == y->rank;
            for (int d = 0; ok && d < x->rank; d++) ok = x->shape[d] == y->shape[d];
            if (!ok || !(c->rank == 0 || (c->rank == 1 && x->rank >= 1 && c->shape[0] == x->shape[0])))
                return ti__kfail(k, TI_ERR_BAD_MODEL,
                                 "SELECT needs x and y of one shape and a condition of that "
                                 "shape, a scalar, or a vector over dim 0 (use SELECT_V2 to "
                                 "broadcast)");
        }
    }
    if ((r = ti__tfl_check_out_dtype(k, x->dtype)) != TI_OK) return r;
    if (!ti__set_shape(k->out[0], x->dtype, rank, dims))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "output shape is invalid");
    return TI_OK;
}

TI__PRIVATE void ti__tfl_select_inner(const ti__bjob *jb, size_t o, const size_t *off,
                                      const size_t *step, size_t n) {
    const size_t es = ((const ti__tfl_bjob *)jb)->es;
    const uint8_t *c = (const uint8_t *)jb->in[0];
    const unsigned char *x = (const unsigned char *)jb->in[1], *y = (const unsigned char *)jb->in[2];
    unsigned char *out = (unsigned char *)jb->out + o * es;
    for (size_t i = 0; i < n; i++) {
        const unsigned char *src = c[off[0] + i * step[0]] ? x + (off[1] + i * step[1]) * es
                                                           : y + (off[2] + i * step[2]) * es;
        memcpy(out + i * es, src, es);
    }
}

TI__PRIVATE ti_status ti__tfl_select_run(ti__kctx *k, int v2) {
    ti_tensor *y = k->out[0];
    ti_tensor cond = *k->in[0];
    ti__tfl_bjob j;
    memset(&j, 0, sizeof j);
    if (!v2 && cond.rank == 1 && y->rank > 1) { /* SELECT's vector condition picks rows */
        cond.rank = y->rank;
        for (int d = 1; d < y->rank; d++) cond.shape[d] = 1;
    }
    ti_tensor *ins[3];
    ins[0] = &cond;
    ins[1] = k->in[1];
    ins[2] = k->in[2];
    ti__bcast_init(&j.b.bc, 3, (const ti_tensor *const *)ins, y->rank, y->shape);
    for (int i = 0; i < 3; i++) {
        j.b.in[i] = ins[i]->data;
        j.b.in_dt[i] = ins[i]->dtype;
    }
    j.b.out = y->data;
    j.b.out_dt = y->dtype;
    j.b.fn = ti__tfl_select_inner;
    j.es = ti_dtype_size(y->dtype);
    ti__bcast_run(k, &j.b);
    return TI_OK;
}
TI__PRIVATE int ti__tfl_select_v1_shape(ti__kctx *k) { return ti__tfl_select_shape(k, 0); }
TI__PRIVATE int ti__tfl_select_v2_shape(ti__kctx *k) { return ti__tfl_select_shape(k, 1); }
TI__PRIVATE ti_status ti__tfl_select_v1_run(ti__kctx *k) { return ti__tfl_select_run(k, 0); }
TI__PRIVATE ti_status ti__tfl_select_v2_run(ti__kctx *k) { return ti__tfl_select_run(k, 1); }

/* ---- ADD_N: inputs of one shape, float32 or int32 ------------------------------------- */
TI__PRIVATE int ti__tfl_add_n_shape(ti__kctx *k) {
    if (k->n_in < 2)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "ADD_N needs at least 2 inputs, got %d", k->n_in);
    for (int i = 0; i < k->n_in; i++) TI__REQUIRE_INPUT(k, i);
    if (k->n_out < 1 || k->out[0] == NULL)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "output 0 is required");
    const ti_tensor *a = k->in[0];
    if (a->dtype != TI_DTYPE_F32 && a->dtype != TI_DTYPE_I32)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "input dtype %s is not supported (float32, "
                         "int32)", ti_dtype_name(a->dtype));
    for (int i = 1; i < k->n_in; i++) {
        const ti_tensor *t = k->in[i];
        int same = t->dtype == a->dtype && t->rank == a->rank;
        for (int d = 0; same && d < a->rank; d++) same = t->shape[d] == a->shape[d];
        if (!same) {
            char sa[96], sb[96];
            return ti__kfail(k, TI_ERR_BAD_MODEL, "input %d is %s %s; input 0 is %s %s", i,
                             ti_dtype_name(t->dtype), ti__bin_shape_str(sa, sizeof sa, t->rank, t->shape),
                             ti_dtype_name(a->dtype), ti__bin_shape_str(sb, sizeof sb, a->rank, a->shape));
        }
    }
    const int r = ti__tfl_check_out_dtype(k, a->dtype);
    if (r != TI_OK) return r;
    if (!ti__set_shape(k->out[0], a->dtype, a->rank, a->shape))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "output shape is invalid");
    return TI_OK;
}

TI__PRIVATE ti_status ti__tfl_add_n_run(ti__kctx *k) {
    const size_t n = ti__numel(k->in[0]);
    if (k->in[0]->dtype == TI_DTYPE_F32) {
        float *o = (float *)k->out[0]->data;
        memcpy(o, k->in[0]->data, n * sizeof(float));
        for (int i = 1; i < k->n_in; i++) {
            const float *x = (const float *)k->in[i]->data;
            for (size_t e = 0; e < n; e++) o[e] += x[e];
        }
    } else {
        int32_t *o = (int32_t *)k->out[0]->data;
        memcpy(o, k->in[0]->data, n * sizeof(int32_t));
        for (int i = 1; i < k->n_in; i++) {
            const int32_t *x = (const int32_t *)k->in[i]->data;
            for (size_t e = 0; e < n; e++) o[e] = (int32_t)((uint32_t)o[e] + (uint32_t)x[e]);
        }
    }
    return TI_OK;
}

#define TI__TFL_BINARY(NAME, CODE)                                                            \
    TI__PRIVATE int ti__tfl_##NAME##_shape(ti__kctx *k) { return ti__tfl_bin_shape(k, CODE); } \
    TI__PRIVATE ti_status ti__tfl_##NAME##_run(ti__kctx *k) { return ti__tfl_bin_run(k, CODE); }
TI__TFL_BINARY(add, TI__TB_ADD)
TI__TFL_BINARY(sub, TI__TB_SUB)
TI__TFL_BINARY(mul, TI__TB_MUL)
TI__TFL_BINARY(div, TI__TB_DIV)
TI__TFL_BINARY(maximum, TI__TB_MAX)
TI__TFL_BINARY(minimum, TI__TB_MIN)
TI__TFL_BINARY(squared_difference, TI__TB_SQDIFF)
TI__TFL_BINARY(pow, TI__TB_POW)
TI__TFL_BINARY(prelu, TI__TB_PRELU)
TI__TFL_BINARY(floor_div, TI__TB_FLOOR_DIV)
TI__TFL_BINARY(floor_mod, TI__TB_FLOOR_MOD)
TI__TFL_BINARY(logical_and, TI__TB_AND)
TI__TFL_BINARY(logical_or, TI__TB_OR)
TI__TFL_BINARY(equal, TI__TB_EQ)
TI__TFL_BINARY(not_equal, TI__TB_NE)
TI__TFL_BINARY(less, TI__TB_LT)
TI__TFL_BINARY(less_equal, TI__TB_LE)
TI__TFL_BINARY(greater, TI__TB_GT)
TI__TFL_BINARY(greater_equal, TI__TB_GE)
#undef TI__TFL_BINARY

TI__PRIVATE const ti__op ti__ops_tfl_elementwise[] = {
    {"ADD", ti__tfl_add_shape, ti__tfl_add_run, NULL, 0},
    {"SUB", ti__tfl_sub_shape, ti__tfl_sub_run, NULL, 0},
    {"MUL", ti__tfl_mul_shape, ti__tfl_mul_run, NULL, 0},
    {"DIV", ti__tfl_div_shape, ti__tfl_div_run, NULL, 0},
    {"MAXIMUM", ti__tfl_maximum_shape, ti__tfl_maximum_run, NULL, 0},
    {"MINIMUM", ti__tfl_minimum_shape, ti__tfl_minimum_run, NULL, 0},
    {"SQUARED_DIFFERENCE", ti__tfl_squared_difference_shape, ti__tfl_squared_difference_run, NULL, 0},
    {"POW", ti__tfl_pow_shape, ti__tfl_pow_run, NULL, 0},
    {"PRELU", ti__tfl_prelu_shape, ti__tfl_prelu_run, NULL, 0},
    {"FLOOR_DIV", ti__tfl_floor_div_shape, ti__tfl_floor_div_run, NULL, 0},
    {"FLOOR_MOD", ti__tfl_floor_mod_shape, ti__tfl_floor_mod_run, NULL, 0},
    {"LOGICAL_AND", ti__tfl_logical_and_shape, ti__tfl_logical_and_run, NULL, 0},
    {"LOGICAL_OR", ti__tfl_logical_or_shape, ti__tfl_logical_or_run, NULL, 0},
    {"EQUAL", ti__tfl_equal_shape, ti__tfl_equal_run, NULL, 0},
    {"NOT_EQUAL", ti__tfl_not_equal_shape, ti__tfl_not_equal_run, NULL, 0},
    {"LESS", ti__tfl_less_shape, ti__tfl_less_run, NULL, 0},
    {"LESS_EQUAL", ti__tfl_less_equal_shape, ti__tfl_less_equal_run, NULL, 0},
    {"GREATER", ti__tfl_greater_shape, ti__tfl_greater_run, NULL, 0},
    {"GREATER_EQUAL", ti__tfl_greater_equal_shape, ti__tfl_greater_equal_run, NULL, 0},
    {"SELECT", ti__tfl_select_v1_shape, ti__tfl_select_v1_run, NULL, 0},
    {"SELECT_V2", ti__tfl_select_v2_shape, ti__tfl_select_v2_run, NULL, 0},
    {"ADD_N", ti__tfl_add_n_shape, ti__tfl_add_n_run, NULL, 0},
    {"LOGISTIC", ti__tfl_logistic_shape, ti__tfl_logistic_run, ti__tfl_un_scratch, 0},
    {"TANH", ti__tfl_tanh_shape, ti__tfl_tanh_run, ti__tfl_un_scratch, 0},
    {"RELU", ti__tfl_relu_shape, ti__tfl_relu_run, ti__tfl_un_scratch, 0},
    {"RELU6", ti__tfl_relu6_shape, ti__tfl_relu6_run, ti__tfl_un_scratch, 0},
    {"RELU_N1_TO_1", ti__tfl_relu_n1_to_1_shape, ti__tfl_relu_n1_to_1_run, ti__tfl_un_scratch, 0},
    {"RELU_0_TO_1", ti__tfl_relu_0_to_1_shape, ti__tfl_relu_0_to_1_run, ti__tfl_un_scratch, 0},
    {"LEAKY_RELU", ti__tfl_leaky_relu_shape, ti__tfl_leaky_relu_run, ti__tfl_un_scratch, 0},
    {"HARD_SWISH", ti__tfl_hard_swish_shape, ti__tfl_hard_swish_run, ti__tfl_un_scratch, 0},
    {"ELU", ti__tfl_elu_shape, ti__tfl_elu_run, ti__tfl_un_scratch, 0},
    {"GELU", ti__tfl_gelu_shape, ti__tfl_gelu_run, ti__tfl_un_scratch, 0},
    {"EXP", ti__tfl_exp_shape, ti__tfl_exp_run, ti__tfl_un_scratch, 0},
    {"LOG", ti__tfl_log_shape, ti__tfl_log_run, ti__tfl_un_scratch, 0},
    {"SQRT", ti__tfl_sqrt_shape, ti__tfl_sqrt_run, ti__tfl_un_scratch, 0},
    {"RSQRT", ti__tfl_rsqrt_shape, ti__tfl_rsqrt_run, ti__tfl_un_scratch, 0},
    {"SQUARE", ti__tfl_square_shape, ti__tfl_square_run, ti__tfl_un_scratch, 0},
    {"ABS", ti__tfl_abs_shape, ti__tfl_abs_run, ti__tfl_un_scratch, 0},
    {"NEG", ti__tfl_neg_shape, ti__tfl_neg_run, ti__tfl_un_scratch, 0},
    {"FLOOR", ti__tfl_floor_shape, ti__tfl_floor_run, ti__tfl_un_scratch, 0},
    {"CEIL", ti__tfl_ceil_shape, ti__tfl_ceil_run, ti__tfl_un_scratch, 0},
    {"ROUND", ti__tfl_round_shape, ti__tfl_round_run, ti__tfl_un_scratch, 0},
    {"SIN", ti__tfl_sin_shape, ti__tfl_sin_run, ti__tfl_un_scratch, 0},
    {"COS", ti__tfl_cos_shape, ti__tfl_cos_run, ti__tfl_un_scratch, 0},
    {"QUANTIZE", ti__tfl_quantize_shape, ti__tfl_quantize_run, ti__tfl_un_scratch, 0},
    {"DEQUANTIZE", ti__tfl_dequantize_shape, ti__tfl_dequantize_run, ti__tfl_un_scratch, 0},
    {"CAST", ti__tfl_cast_shape, ti__tfl_cast_run, ti__tfl_un_scratch, 0},
    {"LOGICAL_NOT", ti__tfl_logical_not_shape, ti__tfl_logical_not_run, ti__tfl_un_scratch, 0},
    {NULL, NULL, NULL, NULL, 0}
};
