/* Fast float32 Conv paths that conv.c picks (ti__conv_path): a direct depthwise kernel for
 * 3x3 / 5x5, stride 1 / 2 (the flat path below, which cpu/pool.c's MaxPool shares, and
 * with AVX-512 the small-plane path for 7 x 7 maps; their kernels and the row kernels for
 * rows too wide for the flat path in cpu/x86/conv_*.c,
 * cpu/arm/conv_neon.c, or the portable ones here, chosen at run time by ti__cpu_isa()),
 * and Winograd F(4x4, 3x3) for 3x3 stride-1 convs
 * with enough channels: weights transformed once at planning (ti__conv_prepack, called by
 * the prepack pass), input and output transforms here (cpu/x86/conv_avx2.c's with AVX2),
 * the 36 products on the float GEMM's micro-kernel. Both fuse bias and activation. Relies on conv.c's ti__convp. Must not
 * allocate at run time: Winograd works in the scratch the session gives
 * (ti__conv_wino_scratch), one slot per thread. */

/* ---- depthwise --------------------------------------------------------------------- */

/* Portable row kernels: the same contract as the SIMD ones (ti__dw_row_fn). */
TI__PRIVATE void ti__dw_row_c(int K, int S, float *y, size_t n, const float *const *x,
                              const float *const *w, int nr, float bias, int clamp, float lo,
                              float hi) {
    for (size_t i = 0; i < n; i++) y[i] = bias;
    for (int r = 0; r < nr; r++)
        for (int q = 0; q < K; q++) {
            const float *xr = x[r] + q;
            float wv = w[r][q];
            for (size_t i = 0; i < n; i++) y[i] += wv * xr[i * (size_t)S];
        }
    if (clamp)
        for (size_t i = 0; i < n; i++) {
            float v = y[i] > lo ? y[i] : lo; /* as SIMD max(v, lo): NaN gives lo */
            y[i] = v < hi ? v : hi;
        }
}
#define TI__DW_C_DEF(k, st)                                                                  \
    TI__PRIVATE void ti__dw_c_k##k##s##st(float *y, size_t n, const float *const *x,         \
                                         const float *const *w, int nr, float bias,         \
                                         int clamp, float lo, float hi) {                   \
        ti__dw_row_c(k, st, y, n, x, w, nr, bias, clamp, lo, hi);                            \
    }
TI__DW_C_DEF(3, 1)
TI__DW_C_DEF(3, 2)
TI__DW_C_DEF(5, 1)
TI__DW_C_DEF(5, 2)
#undef TI__DW_C_DEF

TI__PRIVATE void ti__dw_taps_c(float *y, size_t n, const float *const *x, const float *w,
                               int taps, float bias, int clamp, float lo, float hi) {
    for (size_t i = 0; i < n; i++) y[i] = bias;
    for (int t = 0; t < taps; t++) {
        const float *xt = x[t];
        float wt = w[t];
        for (size_t i = 0; i < n; i++) y[i] += wt * xt[i];
    }
    if (clamp)
        for (size_t i = 0; i < n; i++) {
            float v = y[i] > lo ? y[i] : lo;
            y[i] = v < hi ? v : hi;
        }
}

TI__PRIVATE void ti__dw_max_c(float *y, size_t n, const float *const *x, int taps) {
    for (size_t i = 0; i < n; i++) y[i] = x[0][i];
    for (int t = 1; t < taps; t++)
        for (size_t i = 0; i < n; i++) y[i] = x[t][i] > y[i] ? x[t][i] : y[i];
}

TI__PRIVATE float ti__dw_sum_c(const float *x, size_t n) {
    float s0 = 0, s1 = 0, s2 = 0, s3 = 0; /* four chains */
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += x[i];
        s1 += x[i + 1];
        s2 += x[i + 2];
        s3 += x[i + 3];
    }
    for (; i < n; i++) s0 += x[i];
    return (s0 + s1) + (s2 + s3);
}

TI__PRIVATE void ti__dw_copy_c(float *d, size_t ld, const float *s, size_t ls, size_t rows,
                               size_t n) {
    for (size_t r = 0; r < rows; r++)
        for (size_t i = 0; i < n; i++) d[r * ld + i] = s[r * ls + i];
}
TI__PRIVATE void ti__dw_split_c(float *const *d, size_t ld, const float *s, size_t ls,
                                size_t rows, size_t n) {
    for (size_t r = 0; r < rows; r++)
        for (size_t i = 0; i < n; i++) d[2 * (r & 1) + (i & 1)][(r >> 1) * ld + i / 2] = s[r * ls + i];
}

TI__PRIVATE void ti__mp_row_c(int S, float *y, size_t n, const float *const *x, int nr, int K) {
    for (size_t i = 0; i < n; i++) {
        float m = x[0][i * (size_t)S];
        for (int r = 0; r < nr; r++)
            for (int q = 0; q < K; q++) {
                float v = x[r][i * (size_t)S + (size_t)q];
                m = v > m ? v : m;
            }
        y[i] = m;
    }
}
TI__PRIVATE void ti__mp_c_s1(float *y, size_t n, const float *const *x, int nr, int K) {
    ti__mp_row_c(1, y, n, x, nr, K);
}
TI__PRIVATE void ti__mp_c_s2(float *y, size_t n, const float *const *x, int nr, int K) {
    ti__mp_row_c(2, y, n, x, nr, K);
}

TI__PRIVATE const ti__dw_isa *ti__dw_pick_isa(void) {
    static const ti__dw_isa scalar = {TI__ISA_SCALAR,
                                      {{ti__dw_c_k3s1, ti__dw_c_k3s2},
                                       {ti__dw_c_k5s1, ti__dw_c_k5s2}},
                                      {ti__mp_c_s1, ti__mp_c_s2},
                                      ti__dw_taps_c, ti__dw_copy_c, ti__dw_split_c,
                                      ti__dw_max_c, ti__dw_sum_c, NULL, NULL, {NULL, NULL},
                                      {NULL, NULL}, NULL, 0, 0, 0, 0, 0};
#ifdef TI__X86_SIMD
    int isa = ti__cpu_isa();
    if (isa >= TI__ISA_AVX512) return ti__dw_avx512_isa();
    if (isa >= TI__ISA_AVX2) return ti__dw_avx2_isa();
#elif defined(TI__ARM_NEON)
    if (ti__cpu_isa() >= TI__ISA_NEON) return ti__dw_neon_isa();
#endif
    return &scalar;
}

/* 1 when the direct depthwise kernel takes the conv: one input and one output channel per
 * group, 2-D, square 3x3 or 5x5 kernel, equal strides 1 or 2, no dilation. */
TI__PRIVATE int ti__conv_dw_ok(const ti__convp *p) {
    return p->cg == 1 && p->mg == 1 && p->in[0] == 1 && p->k[0] == 1 && p->out[0] == 1 &&
           p->k[1] == p->k[2] && (p->k[1] == 3 || p->k[1] == 5) && p->s[1] == p->s[2] &&
           (p->s[1] == 1 || p->s[1] == 2) && p->d[1] == 1 && p->d[2] == 1;
}

/* The small-plane path's plan (below, ti__dw_small_plan), made once per run */
#define TI__DW_SMALL_VEC 16      /* vectors of 16 outputs in a plane, at most: stride 2 */
#define TI__DW_SMALL_VEC_S1 4    /* and stride 1 (at 14 x 14 the flat path was as fast) */
#define TI__DW_SMALL_FLOATS 2048 /* the input buffer: 8 KiB */
#define TI__DW_SMALL_GROUP 16    /* planes per call of a separate activation */

typedef struct ti__dw_small {
    int64_t n, nv, taps; /* outputs of a plane, their vectors of 16, taps */
    int64_t at;          /* where the input plane starts in the buffer */
    int64_t pstride;     /* stride 2: floats from one phase plane to the next */
    int32_t off[25];     /* tap t (dy * K + dx) reads x[i + off[t]] */
} ti__dw_small;

typedef struct ti__dw_job {
    const ti__convp *p;
    const float *x, *w, *b;
    float *y;
    ti__dw_row_fn row;
    const ti__dw_isa *isa;
    int act, clamp;
    float act_a, act_b, lo, hi;
    int small; /* 1: the small-plane path, planned in sp, with the taps' masks */
    int rows; /* 1: a row path (ti__conv_dw_rows_ok) */
    int lanes; /* 1: the lane path (ti__conv_dw_lanes_ok): items are blocks of planes */
    ti__dw_lane_geo lg;
    size_t bands; /* the row path's bands of output rows a plane (ti__conv_dw_bands) */
    int64_t band_row[TI_MAX_THREADS + 1]; /* band b: output rows [band_row[b], band_row[b+1]) */
    ti__dw_small sp;
    uint16_t mask[TI__DW_SMALL_VEC * 25];
} ti__dw_job;

/* ---- the flat path ----
 * The input rows a strip of output rows needs are copied, with their zero padding, into
 * one buffer of rows of P floats. In that buffer output (oy, ox) reads input at
 * oy * P + ox + dy * P + dx for tap (dy, dx), so the whole strip is one 1-D sum over the
 * flat index i = oy * P + ox of K * K shifted copies: out[i] = bias + sum w[t] x[i + off[t]]
 * (ti__dw_taps_fn), computed for every i, the P - OW columns past each row's end too, which
 * are dropped when the strip's rows are copied out. No row is short, so no masked loads
 * or stores and no per-row calls: on 7 x 7 and 14 x 14 maps, and at stride 2, the row
 * kernels spent most of their time in those (MobileNetV2's depthwise convs took 2-10x
 * onnxruntime's, 2026-11-23).
 * Stride 2: the padded input is split into four phase planes, plane (a, b) holding the
 * padded rows 2r + a and columns 2c + b, each of pitch P; tap (dy, dx) then reads plane
 * (dy & 1, dx & 1) at i + (dy >> 1) * P + (dx >> 1), again shifted unit-stride copies.
 * The buffer is on the stack; maps too wide for even one output row take the row path.
 * cpu/pool.c's 2-D MaxPool runs the same way with -inf as the padding (ti__dw_flat_run
 * takes the padding value and the operation). */
#define TI__DW_FLAT_FLOATS 5120 /* 20 KiB */
#define TI__DW_FLAT_SLACK 32    /* floats past the input planes: the taps' reach past n */

typedef struct ti__dw_flat {
    /* the geometry (equal kernel sizes and strides on both axes): kernel, stride, input
     * and output sizes, top and left padding, floats of an input and an output plane */
    int64_t K, S, H, W, OH, OW, pt, pl;
    size_t in_sp, out_sp;
    /* the plan (ti__dw_flat_plan) */
    int64_t P, R, prow; /* pitch, output rows per strip, rows of one input plane */
    int64_t pstride;    /* floats from one phase plane to the next */
    int64_t Wc;         /* input columns copied: padded [pl, pl + Wc) */
    int64_t out_at, slot; /* a slot's outputs (from its start); floats of one slot */
    int64_t batch;        /* slots: planes in flight at once (1: strips of rows) */
    int64_t xoff[25];     /* the taps' planes from a slot's start, order dy, dx */
} ti__dw_flat;

#define TI__ROUND16(v) (((v) + 15) / 16 * 16)
#define TI__DW_FLAT_BATCH 16 /* planes at most in one batch */

/* Plans the buffer for the geometry in f (K <= 5, S 1 or 2); 0 when one output row does
 * not fit it. */
TI__PRIVATE int ti__dw_flat_plan(ti__dw_flat *f) {
    int64_t K = f->K, S = f->S, OW = f->OW, OH = f->OH, pl = f->pl;
    int64_t h = (K - 1) / 2, planes = S == 1 ? 1 : 4;
    if (K < 1 || K > 5 || (S != 1 && S != 2) || OW <= 0 || OH <= 0 || pl < 0 ||
        OW > TI__DW_FLAT_FLOATS)
        return 0;
    int64_t P = S == 1 ? OW + K - 1 : OW + h; /* the columns the outputs reach (of a phase) */
    int64_t extra = S == 1 ? K - 1 : h; /* rows of a plane past the strip's output rows */
    int64_t fixed = planes * extra * P + TI__DW_FLAT_SLACK + 15;
    int64_t R = (TI__DW_FLAT_FLOATS - fixed) / ((planes + 1) * P);
    if (R < 1) return 0;
    f->P = P;
    f->R = R = TI__MIN(R, OH);
    f->prow = R + extra;
    f->pstride = f->prow * P;
    f->Wc = TI__MAX((int64_t)0, TI__MIN(f->W, S * P - pl));
    f->out_at = planes * f->pstride + TI__DW_FLAT_SLACK;
    f->slot = TI__ROUND16(f->out_at + TI__ROUND16(R * P));
    f->batch = R == OH ? TI__MIN(TI__DW_FLAT_FLOATS / f->slot, (int64_t)TI__DW_FLAT_BATCH) : 1;
    for (int64_t dy = 0; dy < K; dy++)
        for (int64_t dx = 0; dx < K; dx++)
            f->xoff[dy * K + dx] = S == 1 ? dy * P + dx
                                          : ((dy & 1) * 2 + (dx & 1)) * f->pstride +
                                                (dy >> 1) * P + (dx >> 1);
    return 1;
}

TI__PRIVATE void ti__dw_fill_value(float *d, size_t n, float v) {
    if (v == 0.0f) memset(d, 0, n * sizeof(float)); /* +0: all bits zero */
    else
        for (size_t i = 0; i < n; i++) d[i] = v;
}

/* Input rows [0, rin) of the strip's padded plane (input row oy0 * S - pt + r) into the
 * slot at in: the data columns of the rows inside the input; in strips (`clear`) the
 * others' data columns are set to pad, the padding columns stay as set at the start.
 * Stride 2 splits rows into the column phases straight from the input: x[2k] and
 * x[2k + 1] land in the phase planes of padded columns pl + 2k and pl + 2k + 1. */
TI__PRIVATE void ti__dw_flat_fill(const ti__dw_flat *f, const ti__dw_isa *isa, float *in,
                                  const float *xp, int64_t oy0, int64_t rin, int clear,
                                  float pad) {
    int64_t S = f->S, H = f->H, W = f->W, pl = f->pl, P = f->P, Wc = f->Wc;
    int64_t ih0 = oy0 * S - f->pt;
    int64_t lo = TI__MAX((int64_t)0, -ih0), hi = TI__MIN(rin, H - ih0); /* rows inside */
    if (clear)
        for (int64_t r = 0; r < rin; r++) {
            if (r == lo && hi > lo) r = hi;
            if (r >= rin) break;
            if (S == 1) {
                ti__dw_fill_value(in + r * P + pl, (size_t)Wc, pad);
                continue;
            }
            float *row = in + (r & 1) * 2 * f->pstride + (r >> 1) * P;
            ti__dw_fill_value(row + (pl & 1) * f->pstride + (pl >> 1), (size_t)(Wc + 1) / 2, pad);
            ti__dw_fill_value(row + ((pl + 1) & 1) * f->pstride + ((pl + 1) >> 1), (size_t)Wc / 2,
                              pad);
        }
    if (hi <= lo || Wc == 0) return;
    const float *src = xp + (ih0 + lo) * W;
    if (S == 1) {
        isa->copy(in + lo * P + pl, (size_t)P, src, (size_t)W, (size_t)(hi - lo), (size_t)Wc);
        return;
    }
    /* from an even padded row (an odd first one alone): phase planes a = 0, 1 by row parity,
     * input column 2k to column phase pl & 1 at pl / 2 + k, 2k + 1 to the other */
    for (int64_t r = lo; r < hi;) {
        int64_t rows = r & 1 ? 1 : hi - r;
        float *d[4];
        for (int a = 0; a < 2; a++) {
            float *row = in + ((r + a) & 1) * 2 * f->pstride + ((r + a) >> 1) * P;
            d[2 * a] = row + (pl & 1) * f->pstride + (pl >> 1);
            d[2 * a + 1] = row + ((pl + 1) & 1) * f->pstride + ((pl + 1) >> 1);
        }
        isa->split(d, (size_t)P, xp + (ih0 + r) * W, (size_t)W, (size_t)rows, (size_t)Wc);
        r += rows;
    }
}

/* What the flat path computes: the n flat outputs of plane `plane` into out, from the
 * K * K taps' planes x (ti__dw_taps_fn or ti__dw_max_fn with the plane's parameters). */
typedef void (*ti__dw_flat_op)(void *ctx, size_t plane, float *out, size_t n,
                               const float *const *x);
/* Optional: what is applied to n adjacent outputs once they are in y (an activation, on
 * the outputs alone rather than on the flat columns past the rows' ends too). */
typedef void (*ti__dw_flat_post)(void *ctx, float *y, size_t n);

/* Planes [begin, end) of x into y by the flat path, padding with `pad`: batches of whole
 * planes (filled, then computed, then copied out: a vector load right after the scalar
 * stores it spans waits for them, which on 7 x 7 maps cost more than the arithmetic), or
 * one plane at a time in strips of rows when a plane does not fit the buffer. */
TI__PRIVATE void ti__dw_flat_run(const ti__dw_flat *f, const ti__dw_isa *isa, float pad,
                                 const float *x, float *y, float *buf, size_t begin,
                                 size_t end, ti__dw_flat_op op, ti__dw_flat_post post,
                                 void *ctx) {
    int64_t K = f->K, S = f->S, OH = f->OH, OW = f->OW, P = f->P;
    ti__dw_fill_value(buf, (size_t)(f->batch * f->slot), pad); /* the padding, once */
    for (size_t b0 = begin; b0 < end; b0 += (size_t)f->batch) {
        size_t nb = TI__MIN((size_t)f->batch, end - b0);
        for (int64_t oy0 = 0; oy0 < OH; oy0 += f->R) {
            int64_t rs = TI__MIN(f->R, OH - oy0), rin = (rs - 1) * S + K;
            for (size_t q = 0; q < nb; q++)
                ti__dw_flat_fill(f, isa, buf + (int64_t)q * f->slot, x + (b0 + q) * f->in_sp,
                                 oy0, rin, f->R < OH, pad);
            size_t n = (size_t)TI__ROUND16(rs * P);
            for (size_t q = 0; q < nb; q++) {
                float *sl = buf + (int64_t)q * f->slot;
                const float *xt[25];
                for (int t = 0; t < K * K; t++) xt[t] = sl + f->xoff[t];
                op(ctx, b0 + q, sl + f->out_at, n, xt);
            }
            for (size_t q = 0; q < nb; q++)
                isa->copy(y + (b0 + q) * f->out_sp + oy0 * OW, (size_t)OW,
                          buf + (int64_t)q * f->slot + f->out_at, (size_t)P, (size_t)rs,
                          (size_t)OW);
            if (post == NULL) continue;
            if (f->R == OH) /* whole planes: the batch's outputs are adjacent */
                post(ctx, y + b0 * f->out_sp, nb * f->out_sp);
            else
                for (size_t q = 0; q < nb; q++)
                    post(ctx, y + (b0 + q) * f->out_sp + oy0 * OW, (size_t)(rs * OW));
        }
    }
}

/* The depthwise conv's ti__dw_flat_op: taps with the channel's weights, bias and clamp. */
TI__PRIVATE void ti__conv_dw_op(void *ctx, size_t plane, float *out, size_t n,
                                const float *const *x) {
    const ti__dw_job *j = (const ti__dw_job *)ctx;
    int64_t K = j->p->k[1];
    size_t m = plane % (size_t)j->p->m;
    j->isa->taps(out, n, x, j->w + m * (size_t)(K * K), (int)(K * K),
                 j->b != NULL ? j->b[m] : 0.0f, j->clamp, j->lo, j->hi);
}

/* Its ti__dw_flat_post: an activation other than a clamp, on the outputs in y. In the
 * buffer it ran on the flat columns past the rows' ends too, 1.6x the outputs on 7 x 7
 * maps with 5x5 kernels (80 for 49), and SiLU there cost more than the taps. */
TI__PRIVATE void ti__conv_dw_post(void *ctx, float *y, size_t n) {
    const ti__dw_job *j = (const ti__dw_job *)ctx;
    ti__act_block(j->act, j->act_a, j->act_b, NULL, y, n, 1, n);
}

/* ---- the small-plane path ----
 * Planes of a few vectors of outputs (7 x 7 maps; 14 x 14 at stride 2) with an ISA that
 * has masked loads: there the flat path's padded buffer cost more than the taps
 * (a 3x3 depthwise of 960 channels at 7 x 7 spent 23 % of its time copying rows of 7 in
 * and out and 11 % clearing the padding; one of 576 channels at 14 x 14, stride 2, 39 %
 * splitting rows of 14; perf). Here the input plane is copied unpadded, stride 2 split
 * into its four phase planes, with the output's row pitch OW: tap t of output
 * i = oy * OW + ox then reads x[i + off[t]], and the reads that would land in the padding
 * are masked off (ti__dw_small_fn: a mask per 16 outputs and tap, made once per run).
 * The outputs go straight into y. The same taps in the same order as the flat path, so
 * the same bits. Single-conv models, tinyinfer-run --repeat 1000, best of 3 alternating
 * runs, 1 thread: 3x3 960 @ 7 0.048 -> 0.035 ms, 5x5 1152 @ 7 0.139 -> 0.083, 3x3 576 / 2 @ 14
 * 0.050 -> 0.039, 5x5 672 / 2 @ 14 0.080 -> 0.070. At 28 x 28 outputs it was slower (3x3 192
 * 0.059 -> 0.090): there every tap's masked load splits cache lines, where the flat kernel
 * shifts registers. */
/* Plans the small-plane path for j's geometry into s; 0 when it does not apply (no masked
 * loads, a plane too large, stride 1 with OW != W, pads of K or more). */
TI__PRIVATE int ti__dw_small_plan(const ti__dw_job *j, ti__dw_small *s) {
    const ti__convp *p = j->p;
    int64_t K = p->k[1], S = p->s[1], H = p->in[1], W = p->in[2], OH = p->out[1];
    int64_t OW = p->out[2], pt = p->pb[1], pl = p->pb[2], data;
    if (j->isa->small == NULL || K < 1 || K > 5 || (S != 1 && S != 2) || pt < 0 || pl < 0 ||
        pt >= K || pl >= K || H <= 0 || W <= 0 || OH <= 0 || OW <= 0 ||
        OH * OW > 16 * (S == 1 ? TI__DW_SMALL_VEC_S1 : TI__DW_SMALL_VEC))
        return 0;
    s->n = OH * OW;
    s->nv = (s->n + 15) / 16;
    s->taps = K * K;
    if (S == 1) { /* the input rows' pitch must be the outputs' */
        if (OW != W) return 0;
        s->pstride = 0;
        data = H * W;
    } else { /* phase planes of (H + 1) / 2 rows of up to (W + 1) / 2 columns, pitch OW */
        if ((W + 1) / 2 > OW) return 0;
        s->pstride = (H + 1) / 2 * OW;
        data = 4 * s->pstride;
    }
    int64_t lo = 0, hi = data;
    for (int64_t dy = 0; dy < K; dy++)
        for (int64_t dx = 0; dx < K; dx++) {
            int64_t o;
            if (S == 1) o = (dy - pt) * W + (dx - pl);
            else { /* input row 2 oy + dy - pt: phase a, row oy + sy of it (floor) */
                int64_t ry = dy - pt, rx = dx - pl, a = ry & 1, b = rx & 1;
                o = (2 * a + b) * s->pstride + (ry - a) / 2 * OW + (rx - b) / 2;
            }
            s->off[dy * K + dx] = (int32_t)o;
            lo = TI__MIN(lo, o);
            hi = TI__MAX(hi, o + 16 * s->nv);
        }
    s->at = TI__ROUND16(-lo);
    return s->at + hi <= TI__DW_SMALL_FLOATS;
}

/* The taps' masks for the plan s: bit i % 16 of mask[i / 16 * taps + t] is set where tap t
 * of output i reads inside the input. */
TI__PRIVATE void ti__dw_small_masks(const ti__convp *p, const ti__dw_small *s, uint16_t *mask) {
    int64_t K = p->k[1], S = p->s[1], H = p->in[1], W = p->in[2], OW = p->out[2];
    int64_t pt = p->pb[1], pl = p->pb[2], taps = s->taps;
    memset(mask, 0, (size_t)(s->nv * taps) * sizeof mask[0]);
    for (int64_t i = 0; i < s->n; i++) {
        int64_t oy = i / OW, ox = i % OW;
        for (int64_t dy = 0; dy < K; dy++) {
            int64_t iy = oy * S + dy - pt;
            if (iy < 0 || iy >= H) continue;
            for (int64_t dx = 0; dx < K; dx++) {
                int64_t ix = ox * S + dx - pl;
                if (ix >= 0 && ix < W)
                    mask[i / 16 * taps + dy * K + dx] |= (uint16_t)(1u << (i % 16));
            }
        }
    }
}

/* Output planes [begin, end) by the small-plane path planned in j->sp. */
TI__PRIVATE void ti__conv_dw_small(const ti__dw_job *j, size_t begin, size_t end) {
    const ti__convp *p = j->p;
    const ti__dw_small *s = &j->sp;
    int64_t S = p->s[1], H = p->in[1], W = p->in[2], OW = p->out[2], taps = s->taps;
    float buf[TI__DW_SMALL_FLOATS], *in = buf + s->at;
    int post = j->act != TI__ACT_NONE && !j->clamp;
    size_t g0 = begin;
    for (size_t pln = begin; pln < end; pln++) {
        size_t m = pln % (size_t)p->m;
        const float *xp = j->x + pln * p->in_sp;
        if (S == 1)
            memcpy(in, xp, (size_t)(H * W) * sizeof(float));
        else {
            float *d[4] = {in, in + s->pstride, in + 2 * s->pstride, in + 3 * s->pstride};
            j->isa->split(d, (size_t)OW, xp, (size_t)W, (size_t)H, (size_t)W);
        }
        j->isa->small(j->y + pln * p->out_sp, (size_t)s->n, in, s->off, j->mask,
                      j->w + m * (size_t)taps, (int)taps, j->b != NULL ? j->b[m] : 0.0f,
                      j->clamp, j->lo, j->hi);
        if (post && (pln + 1 - g0 == TI__DW_SMALL_GROUP || pln + 1 == end)) {
            ti__conv_dw_post((void *)j, j->y + g0 * p->out_sp, (pln + 1 - g0) * p->out_sp);
            g0 = pln + 1;
        }
    }
}

/* ---- the row paths ----
 * Depthwise planes whose ISA has the row kernel of their stride (ti__dw_rows_fn): a few
 * output rows at a time straight from the input rows they read (rows in the padding
 * passed as NULL), the stride-2 kernel deinterleaving them in registers. bench/conv.c, 1
 * thread, against the flat path:
 * - stride 2, 3x3 with a left pad of 0 to 2 and rows of the ISA's rows_min outputs or more,
 *   two output rows a call (AVX-512: four, below). AVX-512 from 12: MobileNetV2's 96 @ 112
 *   0.225 -> 0.140 ms, 144 @ 56 0.084 -> 0.054, 192 @ 28 (from the small-plane path) 0.038 ->
 *   0.025; at rows of 7 the small-plane path stays (576 @ 14: 0.041 there, 0.051 by rows). AVX2
 *   from 56 (per-node minima in the models, AVX2 forced on the Zen 4, 4 alternating rounds:
 *   MobileNetV2's 96 @ 112 0.253 -> 0.182, EfficientNet-B0's 0.383 -> 0.286, MobileNetV3's 16 @
 *   112 0.039 -> 0.029; on the device tool's Xeon, MobileNetV2's 0.306 -> 0.237; at 28 outputs
 *   a row it lost to the flat path, 144 @ 56 0.085 -> 0.098, and at 14 to the lane path,
 *   192 @ 28 0.035 -> 0.044: each row's last vector is masked);
 * - stride 2 on AVX-512 (its rows_s2_k5r4): 3x3 and 5x5 with a left pad of 0 to 2 from 12
 *   outputs a row, four output rows a call: one chain of K K FMAs an output row, so four in
 *   flight (two left the FMAs waiting on each other). Single-conv models, per-node minima of
 *   3 x 1000-1500 runs alternating, 1 thread, 2-core Zen 4 VM (session 66); 5x5, from the
 *   small-plane path: MobileNetV3's 96 @ 28 0.035 -> 0.018 ms; from the flat path:
 *   EfficientNet-B0's 144 @ 56 0.138 -> 0.097, 64 @ 112 0.246 -> 0.162, 32 @ 224 0.505 ->
 *   0.280; 3x3 against two rows a call: MobileNetV2's 96 @ 112 0.119 -> 0.113, 192 @ 28
 *   0.024 -> 0.020, MobileNetV3's 16 @ 112 0.019 -> 0.018;
 * - stride 1, 3x3 and 5x5 with rows of the ISA's rows_min outputs or more, four output
 *   rows a call from the K + 3 input rows they read. AVX-512 from 12: MobileNetV2's 32 @ 112
 *   0.157 -> 0.107 ms, 144 @ 56 0.174 -> 0.135, 192 @ 28 0.059 -> 0.048, 384 @ 14 0.037 ->
 *   0.030, 576 @ 14 0.056 -> 0.046; EfficientNet-B0's 5x5: 240 @ 28 0.163 -> 0.120, 672 @
 *   14 0.153 -> 0.095. At 7 x 7 about as the small-plane path (3x3 960: 0.035-0.039 both),
 *   which keeps those. AVX2 from 56 (conv_avx2.c's kernel says why). */
TI__PRIVATE int ti__conv_dw_rows_ok(const ti__dw_isa *isa, const ti__convp *p) {
    int64_t K = p->k[1], pl = p->pb[2];
    if (p->s[1] == 2)
        return isa->rows[1] != NULL && p->out[2] >= isa->rows_min && pl >= 0 && pl <= 2 &&
               (K == 3 || isa->rows_s2_k5r4);
    return isa->rows[0] != NULL && p->out[2] >= isa->rows_min && pl >= 0 && pl < K;
}

/* The first output row of band b of `bands` (b <= bands) on OH rows of OW floats: the row
 * nearest b / bands of the map that starts a 64-byte line (a multiple of 16 floats), within
 * OH / (8 bands) rows of it; -1 where none is. Two cores writing one line each plane (a
 * band's last row and the next one's first) cost more than the bands gained: 28 x 28 maps,
 * rows 0-13 and 14-27, ran 1.1-1.5 times slower than whole planes. */
TI__PRIVATE int64_t ti__dw_band_row(int64_t OH, int64_t OW, size_t b, size_t bands) {
    int64_t mid = OH * (int64_t)b / (int64_t)bands, dev = OH / (8 * (int64_t)bands);
    for (int64_t d = 0; d <= dev; d++) {
        if (mid - d >= 0 && (mid - d) * OW % 16 == 0) return mid - d;
        if (mid + d <= OH && (mid + d) * OW % 16 == 0) return mid + d;
    }
    return -1;
}

/* The row path's bands of output rows on `threads` threads, their first rows to row[0..
 * bands] (row[bands] = OH; row holds TI_MAX_THREADS + 1): one a thread where each keeps 8
 * rows or more and every band starts a 64-byte line (ti__dw_band_row; planes of whole
 * lines), else 1. The pool's items are then (band, plane) with the band outer, so that each
 * thread's contiguous block is one band of every plane: the rows of the map that the 1x1
 * conv after it reads on that thread's core when its GEMM cuts the columns into one band a
 * thread (ti__sgemm_split), and that the conv before it wrote there. By whole planes, half
 * of what such a band reads came from the other core's cache: MobileNetV2 on 2 threads
 * (Xeon, per-node minima of 60 runs) ran its 1x1 convs at 56 x 56 1.24-1.49 times faster
 * than on 1 thread where onnxruntime's ran 1.70-1.76 times; in bands, the node sums of 4
 * alternating rounds 2.961 -> 2.886 ms (project 144 -> 24 at 56 x 56: 0.119 -> 0.082). Only
 * where every consumer is a conv (the node's bands_ok): EfficientNet-B0's depthwise outputs
 * go to a GlobalAveragePool and a Mul by channel, which then read across cores (its sum
 * 5.637 -> 5.725 with bands everywhere). */
TI__PRIVATE size_t ti__conv_dw_bands(const ti__convp *p, size_t threads, int64_t *row) {
    int64_t OH = p->out[1], OW = p->out[2];
    row[0] = 0;
    row[1] = OH;
    if (threads <= 1 || threads > TI_MAX_THREADS || OH < 8 * (int64_t)threads ||
        p->out_sp % 16 != 0)
        return 1;
    for (size_t b = 1; b < threads; b++)
        if ((row[b] = ti__dw_band_row(OH, OW, b, threads)) < 0) {
            row[1] = OH;
            return 1;
        }
    row[threads] = OH;
    return threads;
}

/* Outputs of the row path that take their activation together (ti__conv_dw_rows) */
#define TI__DW_ACT_FLOATS 1024
/* Output rows a call of the ISA's row kernel at stride S takes: 4 (TI__DW_ROWS_MAX), 2 at
 * stride 2 where it takes no more (its rows_s2_k5r4 0). */
#define TI__DW_ROWS_MAX 4
TI__PRIVATE int ti__dw_rows_per_call(const ti__dw_isa *isa, int64_t S) {
    return S == 1 || isa->rows_s2_k5r4 ? TI__DW_ROWS_MAX : 2;
}

/* Items [begin, end) by the row kernel of their stride, item i being band i / P of plane
 * i % P (P = n * M planes; j->bands bands, rows j->band_row): ti__dw_rows_per_call rows a
 * call. */
TI__PRIVATE void ti__conv_dw_rows(const ti__dw_job *j, size_t begin, size_t end) {
    const ti__convp *p = j->p;
    int64_t H = p->in[1], W = p->in[2], OW = p->out[2], pt = p->pb[1];
    int K = (int)p->k[1], S = (int)p->s[1], group = ti__dw_rows_per_call(j->isa, S);
    size_t planes = (size_t)(p->n * p->m);
    ti__dw_rows_fn fn = j->isa->rows[S == 2];
    for (size_t it = begin; it < end; it++) {
        size_t pln = it % planes, band = it / planes, m = pln % (size_t)p->m;
        int64_t oy0 = j->band_row[band], oy1 = j->band_row[band + 1];
        const float *xp = j->x + pln * p->in_sp;
        float bv = j->b != NULL ? j->b[m] : 0.0f, *yp = j->y + pln * p->out_sp;
        int64_t act_row = oy0; /* rows from here on still lack the activation */
        for (int64_t oy = oy0; oy < oy1; oy += group) {
            int R = (int)TI__MIN((int64_t)group, oy1 - oy);
            const float *xr[12];
            for (int r = 0; r < S * (R - 1) + K; r++) {
                int64_t ih = S * oy - pt + r;
                xr[r] = ih >= 0 && ih < H ? xp + ih * W : NULL;
            }
            fn(yp + oy * OW, (size_t)OW, K, R, (size_t)OW, xr, W, p->pb[2],
               j->w + m * (size_t)(K * K), bv, j->clamp, j->lo, j->hi);
            /* The activation on the rows once there are TI__DW_ACT_FLOATS of them, still in
             * L1; over a whole band it read them from L2 in large maps, and on each call's
             * few rows of a small map it ran on pieces too short for its vector loops. */
            int64_t done = oy + R;
            if (j->act != TI__ACT_NONE && !j->clamp &&
                ((done - act_row) * OW >= TI__DW_ACT_FLOATS || done == oy1)) {
                ti__conv_dw_post((void *)j, yp + act_row * OW, (size_t)((done - act_row) * OW));
                act_row = done;
            }
        }
    }
}

/* Output planes [begin, end) (n * M of them; the row path's items, ti__conv_dw_rows): by a
 * row path or the small-plane path where one applies, else the flat path where a row fits
 * its buffer, else ti__conv_dw_planes_wide. */
TI__PRIVATE void ti__conv_dw_planes_wide(const ti__dw_job *j, size_t begin, size_t end);
TI__PRIVATE void ti__conv_dw_lanes(const ti__dw_job *j, size_t begin, size_t end);
TI__PRIVATE void ti__conv_dw_planes(void *ctx, size_t begin, size_t end) {
    const ti__dw_job *j = (const ti__dw_job *)ctx;
    const ti__convp *p = j->p;
    if (j->lanes) {
        ti__conv_dw_lanes(j, begin, end);
        return;
    }
    if (j->rows) {
        ti__conv_dw_rows(j, begin, end);
        return;
    }
    if (j->small) {
        ti__conv_dw_small(j, begin, end);
        return;
    }
    float buf[TI__DW_FLAT_FLOATS];
    ti__dw_flat f;
    memset(&f, 0, sizeof f);
    f.K = p->k[1], f.S = p->s[1], f.H = p->in[1], f.W = p->in[2], f.OH = p->out[1];
    f.OW = p->out[2], f.pt = p->pb[1], f.pl = p->pb[2], f.in_sp = p->in_sp, f.out_sp = p->out_sp;
    if (ti__dw_flat_plan(&f))
        ti__dw_flat_run(&f, j->isa, 0.0f, j->x, j->y, buf, begin, end, ti__conv_dw_op,
                        j->act != TI__ACT_NONE && !j->clamp ? ti__conv_dw_post : NULL, ctx);
    else
        ti__conv_dw_planes_wide(j, begin, end);
}

/* ---- the lane path ----
 * L planes at once, a plane in each lane of a vector (ti__dw_lanes_fn; L = 16 on AVX-512, 8
 * on AVX2), where the outputs of a plane are few (the ISA's lane_out_max) and the padded
 * inputs and the outputs fit the kernel's buffers: on AVX-512 7 x 7 maps and 14 x 14 inputs
 * at stride 2; on AVX2 also 14 x 14 maps at stride 1, which its row kernel leaves to the flat
 * path (single convs, AVX2 forced on a Zen 4, minima of 3 alternating rounds: 5x5 672 @14
 * 0.158 -> 0.109 ms, 3x3 576 @14 0.058 -> 0.053). On AVX-512 the row path keeps those (lane
 * path 0.097 and 0.050 against 0.091 and 0.045: a 64 KiB buffer there). A last block of
 * fewer than L planes takes the plane-by-plane paths. */
TI__PRIVATE int ti__conv_dw_lanes_ok(const ti__dw_isa *isa, const ti__convp *p,
                                     ti__dw_lane_geo *g) {
    memset(g, 0, sizeof *g);
    g->K = (int)p->k[1], g->S = (int)p->s[1], g->H = p->in[1], g->W = p->in[2];
    g->OH = p->out[1], g->OW = p->out[2], g->pt = p->pb[1], g->pl = p->pb[2];
    g->Hp = (g->OH - 1) * g->S + g->K, g->Wp = (g->OW - 1) * g->S + g->K;
    g->in_sp = p->in_sp, g->out_sp = p->out_sp;
    int64_t L = isa->lane_planes;
    return isa->lanes != NULL && p->m >= L && g->OH > 0 && g->OW > 0 &&
           g->OH * g->OW <= isa->lane_out_max && g->OH * g->OW * L <= TI__DWL_OUT_FLOATS &&
           g->pt >= 0 && g->pl >= 0 && g->pt < g->K && g->pl < g->K &&
           (g->Hp * g->Wp + 8 * g->S) * L <= TI__DWL_IN_FLOATS;
}

TI__PRIVATE void ti__dwl_zero_pad(const ti__dw_lane_geo *g, float *in, size_t L) {
    int64_t Hp = g->Hp, Wp = g->Wp, pt = g->pt, pl = g->pl;
    int64_t r1 = TI__MIN(Hp, pt + g->H), c1 = TI__MIN(Wp, pl + g->W); /* map rows, columns */
    for (int64_t r = 0; r < Hp; r++) { /* runs of positions [a, b) */
        int64_t a = r * Wp, b = r + 1 < Hp ? a + Wp : a + Wp + 8 * g->S;
        if (r >= pt && r < r1) { /* a map row: its left pad, then its right pad and beyond */
            memset(in + (size_t)a * L, 0, (size_t)pl * L * sizeof(float));
            a += c1;
        }
        if (b > a) memset(in + (size_t)a * L, 0, (size_t)(b - a) * L * sizeof(float));
    }
}

/* Items [begin, end): block i is planes [L b, L b + L) of image i / B (B = ceil(M / L)
 * blocks an image, b = i % B), the last one of an image maybe fewer. */
TI__PRIVATE void ti__conv_dw_lanes(const ti__dw_job *j, size_t begin, size_t end) {
    const ti__convp *p = j->p;
    size_t L = (size_t)j->isa->lane_planes, M = (size_t)p->m, B = (M + L - 1) / L;
    size_t kk = (size_t)(p->k[1] * p->k[1]);
    float buf[TI__DWL_IN_FLOATS + TI__DWL_OUT_FLOATS + 16 * 25 + 16];
    float *al = (float *)(void *)ti__align_up((uintptr_t)buf, 64);
    int post = j->act != TI__ACT_NONE && !j->clamp;
    for (size_t it = begin; it < end; it++) {
        size_t m0 = it % B * L, pln = it / B * M + m0, np = TI__MIN(L, M - m0);
        float *y = j->y + pln * p->out_sp;
        if (np < L) { /* a part block: plane by plane */
            ti__dw_job one = *j;
            one.lanes = 0;
            ti__conv_dw_planes(&one, pln, pln + np);
            continue;
        }
        j->isa->lanes(&j->lg, y, j->x + pln * p->in_sp, j->w + m0 * kk,
                      j->b != NULL ? j->b + m0 : NULL, j->clamp, j->lo, j->hi, al);
        if (post) ti__conv_dw_post((void *)j, y, L * p->out_sp);
    }
}

/* Rows too wide for the flat path's buffer (about 1200 outputs at 3x3 / 1, 380 at 5x5 / 2):
 * per output row, the interior columns (every tap inside the row) through the row kernel,
 * the few columns at either end with bounds checks. */
TI__PRIVATE void ti__conv_dw_planes_wide(const ti__dw_job *j, size_t begin, size_t end) {
    const ti__convp *p = j->p;
    int64_t K = p->k[1], S = p->s[1], H = p->in[1], W = p->in[2], OH = p->out[1];
    int64_t OW = p->out[2], pt = p->pb[1], pl = p->pb[2];
    /* interior columns [lo, hi): ow*S - pl >= 0 and ow*S - pl + K - 1 <= W - 1 */
    int64_t lo = (pl + S - 1) / S, hi = W - K + pl >= 0 ? (W - K + pl) / S + 1 : 0;
    hi = TI__MIN(hi, OW);
    lo = TI__MIN(lo, hi);
    for (size_t pln = begin; pln < end; pln++) {
        size_t m = pln % (size_t)p->m;
        const float *xp = j->x + pln * p->in_sp, *wk = j->w + m * (size_t)(K * K);
        float bv = j->b != NULL ? j->b[m] : 0.0f, *yp = j->y + pln * p->out_sp;
        for (int64_t oh = 0; oh < OH; oh++) {
            const float *xr[5], *wr[5], *xs[5];
            int nr = 0;
            for (int64_t kh = 0; kh < K; kh++) {
                int64_t ih = oh * S - pt + kh;
                if (ih < 0 || ih >= H) continue;
                xr[nr] = xp + ih * W;
                wr[nr] = wk + kh * K;
                xs[nr] = xr[nr] + lo * S - pl;
                nr++;
            }
            float *yr = yp + oh * OW;
            if (hi > lo) {
                j->row(yr + lo, (size_t)(hi - lo), xs, wr, nr, bv, j->clamp, j->lo, j->hi);
                if (j->act != TI__ACT_NONE && !j->clamp)
                    ti__act_row(j->act, j->act_a, j->act_b, 0.0f, yr + lo, (size_t)(hi - lo));
            }
            for (int64_t ow = 0; ow < OW; ow++) {
                if (ow == lo) ow = hi; /* the interior is done */
                if (ow >= OW) break;
                float s = bv;
                for (int r = 0; r < nr; r++)
                    for (int64_t q = 0; q < K; q++) {
                        int64_t iw = ow * S - pl + q;
                        if (iw >= 0 && iw < W) s += wr[r][q] * xr[r][iw];
                    }
                yr[ow] = j->act != TI__ACT_NONE ? ti__act_apply(j->act, j->act_a, j->act_b, s) : s;
            }
        }
    }
}

/* The node's activation as the direct kernels' clamp: ReLU and Clip are clamped in
 * registers (1, with their bounds); any other runs after them (0; lo, hi = -inf, inf). */
TI__PRIVATE int ti__conv_act_clamp(const ti__node *nd, float *lo, float *hi) {
    *lo = -INFINITY;
    *hi = INFINITY;
    if (nd->act == TI__ACT_RELU) {
        *lo = 0.0f;
        return 1;
    }
    if (nd->act == TI__ACT_CLIP) {
        *lo = nd->act_a;
        *hi = nd->act_b;
        return 1;
    }
    return 0;
}

TI__PRIVATE void ti__conv_dw_run(ti__kctx *k, const ti__convp *p) {
    ti__dw_job j;
    memset(&j, 0, sizeof j);
    j.p = p;
    j.x = (const float *)k->in[0]->data;
    j.w = (const float *)k->in[1]->data;
    j.b = k->n_in > 2 && k->in[2] != NULL ? (const float *)k->in[2]->data : NULL;
    j.y = (float *)k->out[0]->data;
    j.act = k->node->act;
    j.act_a = k->node->act_a;
    j.act_b = k->node->act_b;
    j.clamp = ti__conv_act_clamp(k->node, &j.lo, &j.hi);
    const ti__dw_isa *isa = ti__dw_pick_isa();
    j.row = isa->row[p->k[1] == 5][p->s[1] == 2];
    j.isa = isa;
    j.rows = ti__conv_dw_rows_ok(isa, p);
    j.lanes = !j.rows && ti__conv_dw_lanes_ok(isa, p, &j.lg);
    j.small = !j.rows && ti__dw_small_plan(&j, &j.sp); /* and the lane path's part blocks */
    if (j.small) ti__dw_small_masks(p, &j.sp, j.mask);
    size_t threads = j.rows && k->node->bands_ok ? (size_t)ti__threadpool_size(k->tp) : 1;
    j.bands = ti__conv_dw_bands(p, threads, j.band_row);
    size_t items = (size_t)(p->n * p->m) * j.bands, work = p->out_sp / j.bands * p->kprod;
    if (j.lanes) { /* blocks of lane_planes planes */
        size_t L = (size_t)isa->lane_planes;
        items = (size_t)p->n * (((size_t)p->m + L - 1) / L);
        work *= L;
    }
    ti__parallel_for(k->tp, items, work > 65536 ? 1 : 65536 / (work + 1) + 1, ti__conv_dw_planes,
                     &j);
}

/* ---- few channels ---------------------------------------------------------------------
 * A conv with at most TI__FEWC_MAX_K products per output (a network's first conv: 3
 * channels, 3x3, stride 2: 27; ResNet's 7x7: 147) where the ISA has a few-channel kernel
 * (AVX-512, AVX2): output row by output row, the C x KH input rows it reads are copied
 * with their padding into a buffer, and the kernel computes 16 channels x up to fewc_np
 * positions (16 AVX2, 64 AVX-512) at a time straight from it into Y (ti__conv_fewc_fn), the
 * weights laid out as [block][tap][16] once at planning (TI__PACK_FEWC), or at each run into
 * the scratch where the planner did not (weights that are not constant). No im2col tile and
 * no packing for the GEMM, which were a third of such a conv. */
#define TI__FEWC_MAX_K 160      /* products per output (ResNet-18's stem conv, 7x7 on 3
                                   channels: 2.9 -> 2.3 ms, where 3x3 ones run at 90 % of
                                   the FMA peak, 7x7 ones at half: the 147 taps' weights
                                   and rows outgrow L1). AVX2, Zen 3, per-node minima of 4
                                   x 10 runs against im2col: 3.58 -> 3.20 ms at 1 thread,
                                   2.12 -> 1.60 at 2 */
#define TI__FEWC_MAX_M 64       /* output channels */
#define TI__POOL_FUSE_MAX 8     /* a fused MaxPool's window rows at most */
#define TI__FEWC_FLOATS 7168    /* the rows' buffer: 28 KiB (ResNet's 7x7 / 2 stem with 48
                                   positions a call: 3 x 7 rows of 312) */

/* Floats from one buffered input row to the next for kernels of NP positions a call; 0
 * when the conv's shape does not suit the path. */
TI__PRIVATE int64_t ti__conv_fewc_pitch_np(const ti__convp *p, int64_t NP) {
    int64_t S = p->s[2], KH = p->k[1], KW = p->k[2], OW = p->out[2];
    if (p->group != 1 || p->in[0] != 1 || p->k[0] != 1 || p->out[0] != 1 || p->d[1] != 1 ||
        p->d[2] != 1 || (S != 1 && S != 2) || p->cg * (int64_t)p->kprod > TI__FEWC_MAX_K ||
        p->cg < 1 || p->mg < 1 || p->mg > TI__FEWC_MAX_M || OW < 16 || p->out[1] < 1)
        return 0;
    /* the kernel reads NP S floats from S ox0 + kx, ox0 up to the last block's start; split
     * stride-2 rows (ti__conv_fewc_run) NP from ox0 + kx / 2 in halves of P / 2 */
    int64_t P = TI__MAX(S * ((OW + NP - 1) / NP * NP) + KW + 16, p->pb[2] + p->in[2]);
    P += P & 1;
    return p->cg * KH * P <= TI__FEWC_FLOATS ? P : 0;
}
/* The same for the ISA in use; 0 where it has no few-channel kernel. */
TI__PRIVATE int64_t ti__conv_fewc_pitch(const ti__convp *p) {
    const ti__dw_isa *isa = ti__dw_pick_isa();
    if (isa->fewc[p->s[2] == 2] == NULL) return 0;
    return ti__conv_fewc_pitch_np(p, isa->fewc_np);
}
TI__PRIVATE int ti__conv_fewc_ok(const ti__convp *p) {
    return ti__conv_fewc_pitch(p) > 0;
}

/* Floats of W as the kernel reads it: [block][tap][16], ceil(M / 16) blocks. */
TI__PRIVATE size_t ti__conv_fewc_wfloats(const ti__convp *p) {
    return (size_t)((p->mg + 15) / 16) * 16 * (size_t)p->cg * (size_t)p->kprod;
}
/* W (M x taps) into wt (ti__conv_fewc_wfloats), output channels past M as zeros. */
TI__PRIVATE void ti__conv_fewc_pack(const ti__convp *p, const float *w, float *wt) {
    int64_t M = p->mg, taps = p->cg * (int64_t)p->kprod, nb = (M + 15) / 16;
    for (int64_t blk = 0; blk < nb; blk++)
        for (int64_t t = 0; t < taps; t++)
            for (int64_t l = 0; l < 16; l++) {
                int64_t m = blk * 16 + l;
                wt[(blk * taps + t) * 16 + l] = m < M ? w[m * taps + t] : 0.0f;
            }
}
/* The planner's TI__PACK_FEWC weights for this conv, or NULL. */
TI__PRIVATE const float *ti__conv_fewc_packed(const ti__node *node, const ti__convp *p) {
    if (node->packed_kind != TI__PACK_FEWC || node->packed == NULL ||
        node->packed_bytes != ti__conv_fewc_wfloats(p) * sizeof(float))
        return NULL;
    return (const float *)node->packed;
}
/* Scratch bytes of the few-channel path: the weights' layout where not packed at planning. */
TI__PRIVATE size_t ti__conv_fewc_scratch(const ti__kctx *k, const ti__convp *p) {
    return ti__conv_fewc_packed(k->node, p) != NULL ? 0 : ti__conv_fewc_wfloats(p) * sizeof(float);
}

typedef struct ti__fewc_job {
    const ti__convp *p;
    const float *x, *wt; /* weights [block][tap][16] */
    float bias[TI__FEWC_MAX_M + 16]; /* padded to the blocks */
    float *y;
    ti__conv_fewc_fn fn;
    int64_t P, np; /* the rows' pitch in the buffer; positions a call */
    int split; /* stride 2, rows buffered as their even columns then their odd ones */
    ti__split_s2_fn split_s2; /* splits them, both halves in one pass */
    int act, clamp;
    float act_a, act_b, lo, hi;
} ti__fewc_job;

/* The few-channel path's input rows of one thread: C x KH rows of P floats, a ring per
 * channel (input row iy of channel c in row c KH + (iy + pt) % KH), and which row of which
 * image each holds (have, -1: none), so that the rows an output row shares with the one
 * before (KH - SY of them) are not copied again: a 3x3 / 2 stem copied each input row 1.5
 * times, ResNet-18's 7x7 / 2 one 3.5 times. */
typedef struct ti__fewc_rows_buf {
    float buf[TI__FEWC_FLOATS];
    int64_t have[TI__FEWC_MAX_K];
} ti__fewc_rows_buf;
TI__PRIVATE void ti__fewc_rows_reset(ti__fewc_rows_buf *b) {
    for (size_t i = 0; i < TI__FEWC_MAX_K; i++) b->have[i] = -1;
}

/* Conv output row oy of image nn, all M channels, to y (channel m's OW values at
 * y + m ldy), through rb: the C x KH input rows it reads, copied with their padding where
 * rb does not hold them yet, then the kernel on 16 channels x up to np positions at a time,
 * then the activation the kernel does not apply. */
TI__PRIVATE void ti__fewc_row(const ti__fewc_job *j, int64_t nn, int64_t oy,
                              ti__fewc_rows_buf *rb, float *y, size_t ldy) {
    const ti__convp *p = j->p;
    int64_t C = p->cg, M = p->mg, H = p->in[1], W = p->in[2], OW = p->out[2];
    int64_t KH = p->k[1], KW = p->k[2], SY = p->s[1], S = p->s[2], P = j->P;
    int64_t pt = p->pb[1], pl = p->pb[2], taps = C * KH * KW;
    int64_t span = (p->out[1] - 1) * SY + KH; /* padded input rows an image's windows read */
    int64_t r0 = oy * SY % KH;                /* window row 0's place in each ring */
    float *buf = rb->buf;
    /* tap (c, ky, kx) at off[t] in buf, made here without divisions (a few a tap were 13 %
     * of a 3x3 / 2 stem's time): slot P + kx, or with split rows
     * slot P + (kx & 1) P / 2 + kx / 2 */
    int32_t off[TI__FEWC_MAX_K];
    for (int64_t c = 0, t = 0; c < C; c++)
        for (int64_t ky = 0; ky < KH; ky++) {
            int64_t iy = oy * SY - pt + ky, key = nn * span + iy + pt;
            int64_t slot = c * KH + (r0 + ky < KH ? r0 + ky : r0 + ky - KH);
            for (int64_t kx = 0; kx < KW; kx++, t++)
                off[t] = (int32_t)(slot * P + (j->split ? (kx & 1) * (P / 2) + kx / 2 : kx));
            if (rb->have[slot] == key) continue; /* held since the row before */
            rb->have[slot] = key;
            float *row = buf + slot * P;
            if (iy < 0 || iy >= H) {
                memset(row, 0, (size_t)P * sizeof(float));
                continue;
            }
            const float *src = j->x + ((size_t)(nn * p->c + c) * (size_t)H + (size_t)iy) * W;
            if (j->split) { /* src's even columns go to half pl & 1 from pl / 2, its odd
                               ones to the other from (pl + 1) / 2, zeros around them */
                int64_t hw = P / 2, ne = (W + 1) / 2, no = W / 2, pe = pl / 2, po = (pl + 1) / 2;
                float *he = row + (pl & 1) * hw, *ho = row + ((pl + 1) & 1) * hw;
                j->split_s2(he + pe, ho + po, src, (size_t)W);
                memset(he, 0, (size_t)pe * sizeof(float));
                memset(he + pe + ne, 0, (size_t)(hw - pe - ne) * sizeof(float));
                memset(ho, 0, (size_t)po * sizeof(float));
                memset(ho + po + no, 0, (size_t)(hw - po - no) * sizeof(float));
                continue;
            }
            memset(row, 0, (size_t)pl * sizeof(float));
            memcpy(row + pl, src, (size_t)W * sizeof(float));
            memset(row + pl + W, 0, (size_t)(P - pl - W) * sizeof(float));
        }
    for (int64_t m0 = 0; m0 < M; m0 += 16) {
        const float *wb = j->wt + m0 * taps;
        for (int64_t ox0 = 0; ox0 < OW; ox0 += j->np)
            j->fn(y + (size_t)m0 * ldy + ox0, ldy, (int)TI__MIN(16, M - m0),
                  (int)TI__MIN(j->np, OW - ox0), buf + (j->split ? 1 : S) * ox0, off,
                  (int)taps, wb, j->bias + m0, j->clamp, j->lo, j->hi);
    }
    if (j->act != TI__ACT_NONE && !j->clamp) /* the row's M runs of OW, in vectors */
        ti__act_block(j->act, j->act_a, j->act_b, NULL, y, ldy, (size_t)M, (size_t)OW);
}

/* Output rows [begin, end) of all images (row q: image q / OH, row q % OH). */
TI__PRIVATE void ti__conv_fewc_rows(void *ctx, size_t begin, size_t end) {
    const ti__fewc_job *j = (const ti__fewc_job *)ctx;
    const ti__convp *p = j->p;
    int64_t OH = p->out[1], OW = p->out[2];
    ti__fewc_rows_buf rb;
    ti__fewc_rows_reset(&rb);
    for (size_t q = begin; q < end; q++) {
        int64_t nn = (int64_t)q / OH, oy = (int64_t)q % OH;
        ti__fewc_row(j, nn, oy, &rb, j->y + (size_t)nn * p->m * p->out_sp + (size_t)(oy * OW),
                     p->out_sp);
    }
}

/* The portable few-channel kernels, by ti__conv_fewc_fn's contract: a fused MaxPool's
 * conv (ti__conv_pool_run), planned where the ISA had a kernel, still runs where the ISA
 * in use has none (tests force one). */
TI__PRIVATE void ti__fewc_ref(int S, float *y, size_t ldy, int mv, int np, const float *x,
                              const int32_t *off, int taps, const float *w, const float *bias,
                              int clamp, float lo, float hi) {
    for (int m = 0; m < mv; m++)
        for (int r = 0; r < np; r++) {
            float v = bias[m];
            for (int t = 0; t < taps; t++) v += w[t * 16 + m] * x[off[t] + r * S];
            if (clamp == 1) v = TI__MIN(TI__MAX(v, lo), hi);
            else if (clamp == 2) v = ti__act_apply(TI__ACT_HARD_SWISH, 0.0f, 0.0f, v);
            y[(size_t)m * ldy + (size_t)r] = v;
        }
}
TI__PRIVATE void ti__fewc_ref1(float *y, size_t ldy, int mv, int np, const float *x,
                               const int32_t *off, int taps, const float *w, const float *bias,
                               int clamp, float lo, float hi) {
    ti__fewc_ref(1, y, ldy, mv, np, x, off, taps, w, bias, clamp, lo, hi);
}
TI__PRIVATE void ti__fewc_ref2(float *y, size_t ldy, int mv, int np, const float *x,
                               const int32_t *off, int taps, const float *w, const float *bias,
                               int clamp, float lo, float hi) {
    ti__fewc_ref(2, y, ldy, mv, np, x, off, taps, w, bias, clamp, lo, hi);
}

/* The few-channel job of the conv in j (weights packed at planning, or laid out at the
 * scratch's start); with `portable`, the portable kernels where the ISA has none. 0 when
 * the conv cannot take the path. */
TI__PRIVATE int ti__fewc_setup(ti__kctx *k, const ti__convp *p, int portable, ti__fewc_job *j) {
    const ti__dw_isa *isa = ti__dw_pick_isa();
    int simd = isa->fewc[p->s[2] == 2] != NULL;
    if (!simd && !portable) return 0;
    int64_t P = simd ? ti__conv_fewc_pitch(p) : ti__conv_fewc_pitch_np(p, 16);
    if (P == 0) return 0;
    int64_t M = p->mg, nb = (M + 15) / 16;
    const float *b = k->n_in > 2 && k->in[2] != NULL ? (const float *)k->in[2]->data : NULL;
    const float *wt = ti__conv_fewc_packed(k->node, p);
    if (wt == NULL) { /* weights that were not constant at planning: laid out in the scratch */
        if (k->scratch == NULL || k->scratch_bytes < ti__conv_fewc_wfloats(p) * sizeof(float))
            return 0;
        ti__conv_fewc_pack(p, (const float *)k->in[1]->data, (float *)k->scratch);
        wt = (const float *)k->scratch;
    }
    memset(j, 0, sizeof *j);
    for (int64_t m = 0; m < nb * 16; m++) j->bias[m] = b != NULL && m < M ? b[m] : 0.0f;
    j->p = p;
    j->x = (const float *)k->in[0]->data;
    j->y = (float *)k->out[0]->data;
    j->wt = wt;
    j->P = P;
    if (simd) {
        j->fn = isa->fewc[p->s[2] == 2];
        /* Stride 2 with the stride-1 kernel on rows split into their even and odd columns
         * (ti__conv_fewc_pitch leaves room for both halves), where the stride-2 kernel
         * split each tap's two loads with a permute: 16 FMAs and a permute a tap on the two
         * ports that do both. Thread CPU time, median, 1 thread, Xeon, builds alternating:
         * ResNet-18's 7x7 / 2 stem 1.64-1.66 -> 1.47-1.51 ms (AVX2 forced 2.41-2.42 ->
         * 2.25-2.29), MobileNetV2's 3x3 / 2 0.183-0.187 -> 0.180-0.188; the stem in the
         * model, per-node minima of 4 x 30 runs alternating (bench/ab.py), 1.504 -> 1.448
         * ms. */
        j->split_s2 = ti__split_s2_pick(); /* there wherever a few-channel kernel is */
        j->split = p->s[2] == 2 && isa->fewc[0] != NULL && j->split_s2 != NULL;
        if (j->split) j->fn = isa->fewc[0];
        j->np = isa->fewc_np;
    } else {
        j->fn = p->s[2] == 2 ? ti__fewc_ref2 : ti__fewc_ref1;
        j->np = 16;
    }
    j->act = k->node->act;
    j->act_a = k->node->act_a;
    j->act_b = k->node->act_b;
    j->clamp = ti__conv_act_clamp(k->node, &j->lo, &j->hi);
    /* HardSwish in the kernels too, not in a pass over each row after them (MobileNetV3's
     * stem: that pass was 0.8 % of the model, perf) */
    if (j->act == TI__ACT_HARD_SWISH) j->clamp = 2;
    return 1;
}

/* The conv by the few-channel path; 0 (nothing done) when it cannot take it. */
TI__PRIVATE int ti__conv_fewc_run(ti__kctx *k, const ti__convp *p) {
    ti__fewc_job j;
    if (!ti__fewc_setup(k, p, 0, &j)) return 0;
    int64_t taps = p->cg * (int64_t)p->kprod;
    size_t rows = (size_t)(p->n * p->out[1]), work = (size_t)(p->out[2] * p->mg * taps);
    ti__parallel_for(k->tp, rows, work > 65536 ? 1 : 65536 / (work + 1) + 1, ti__conv_fewc_rows,
                     &j);
    return 1;
}

/* ---- a MaxPool fused into the few-channel conv -----------------------------------------
 * A network's stem: a conv of few channels, then a MaxPool (ResNet-18's 7x7 / 2 conv on 3
 * channels, 64 x 112 x 112, then 3x3 / 2 to 56 x 56; SqueezeNet's 3x3 / 2, 64 x 111 x 111,
 * then 3x3 / 2 to 55 x 55). Fused (ti__fuse_conv_pool), the conv writes its rows into a
 * block of scratch a thread (R rows of M x ldr floats, about 256 KiB) and the pool reads
 * them there: the conv's output (3.2 MB in both), which the caches do not keep, is never
 * written to memory and read back. Each thread takes one band of the pool's output rows,
 * G of them at a time, computing each conv row their windows need once (rows two groups
 * share are moved, not computed again). The same conv rows and the same running maximum as
 * the two nodes, so the same bits. A first version kept a ring of KH rows and pooled every
 * window by the stride-2 row kernel: 37 % of its time, slower than the separate pool. */
typedef struct ti__cpool_job {
    ti__fewc_job f;
    int64_t kh, kw, sh, sw, pt, pl, PH, PW;
    int64_t G, R;       /* the pool's rows a group, conv rows of the group's block */
    int64_t clo, chi;   /* the pool's columns whose windows lie inside a conv row */
    ti__maxpool_row_fn maxrow;  /* those columns' kernel (strides 1 and 2), or NULL */
    ti__maxpool_k3s2_fn k3s2;   /* 3 x 3 / 2 windows inside the map, or NULL */
    float *blocks;      /* participant q's at blocks + q * block_floats */
    size_t block_floats, ldr, bands;
} ti__cpool_job;

/* Floats of a conv row in the block (the row's OW rounded up to whole vectors). */
TI__PRIVATE size_t ti__conv_pool_ldr(const ti__convp *p) {
    return (size_t)(p->out[2] + 15) / 16 * 16;
}
/* The pool's rows a group *G, and the conv rows of a group's block (returned): a block of
 * about TI__CPOOL_FLOATS floats a thread (256 KiB: in L2), 1 group row at least. */
#define TI__CPOOL_FLOATS 65536
TI__PRIVATE int64_t ti__conv_pool_rows(const ti__convp *p, const ti__node *nd, int64_t *G) {
    int64_t row = p->mg * (int64_t)ti__conv_pool_ldr(p), fit = TI__CPOOL_FLOATS / row;
    int64_t kh = nd->pool_k[0], sh = nd->pool_s[0];
    *G = fit > kh ? (fit - kh) / sh + 1 : 1;
    return (*G - 1) * sh + kh;
}

/* Scratch floats of the fused conv: *wfl for the weights' layout where the plan did not
 * pack them, *blk for each thread's block (with room for its alignment); returns the total
 * for `threads` threads. */
TI__PRIVATE size_t ti__conv_pool_floats(const ti__node *nd, const ti__convp *p, size_t threads,
                                        size_t *wfl, size_t *blk) {
    int64_t G, R = ti__conv_pool_rows(p, nd, &G);
    *wfl = ti__conv_fewc_packed(nd, p) != NULL ? 0 : ti__conv_fewc_wfloats(p);
    *blk = (size_t)R * (size_t)p->mg * ti__conv_pool_ldr(p) + 16;
    return *wfl + 16 + *blk * threads;
}

/* The largest of the window's values, rows xr[0 .. nr) at columns [c0, c1): the first,
 * then only larger ones (MaxPool's scalar rule); 0 for a window with no value. */
TI__PRIVATE float ti__cpool_max(const float *const *xr, int64_t nr, int64_t c0, int64_t c1) {
    if (nr <= 0 || c1 <= c0) return 0.0f;
    float m = xr[0][c0];
    for (int64_t r = 0; r < nr; r++)
        for (int64_t c = c0; c < c1; c++) m = xr[r][c] > m ? xr[r][c] : m;
    return m;
}

/* Band b of the pool's output rows (all images' rows, in bands of equal length), G of them
 * at a time: the conv rows their windows read computed into the block (channel m's rows
 * R ldr floats from the block's start, row r of the map at (r - lo) ldr), those the next
 * group reads again moved to its front, then each channel's rows pooled. */
TI__PRIVATE void ti__conv_pool_bands(void *ctx, int part, size_t begin, size_t end) {
    const ti__cpool_job *j = (const ti__cpool_job *)ctx;
    const ti__convp *p = j->f.p;
    int64_t OH = p->out[1], OW = p->out[2], M = p->mg, PH = j->PH, PW = j->PW, KH = j->kh;
    size_t rows = (size_t)p->n * (size_t)PH, plane = (size_t)(PH * PW), ldr = j->ldr;
    size_t ldm = (size_t)j->R * ldr; /* from one channel's rows to the next's */
    float *blk = j->blocks + (size_t)part * j->block_floats;
    ti__fewc_rows_buf rb;
    ti__fewc_rows_reset(&rb);
    for (size_t b = begin; b < end; b++) {
        int64_t img = -1, lo = 0, hi = 0; /* the block holds conv rows [lo, hi) of image img */
        size_t q1 = rows * (b + 1) / j->bands;
        for (size_t q = rows * b / j->bands; q < q1;) {
            int64_t nn = (int64_t)q / PH, py0 = (int64_t)q % PH;
            int64_t g = TI__MIN(TI__MIN(j->G, PH - py0), (int64_t)(q1 - q));
            int64_t a = TI__MAX(py0 * j->sh - j->pt, (int64_t)0);
            int64_t e = TI__MIN((py0 + g - 1) * j->sh - j->pt + KH, OH);
            if (nn == img && a >= lo && a < hi) { /* rows [a, hi) kept: to the front */
                if (a > lo)
                    for (int64_t m = 0; m < M; m++)
                        memmove(blk + (size_t)m * ldm, blk + (size_t)m * ldm + (size_t)(a - lo) * ldr,
                                (size_t)(hi - a) * ldr * sizeof(float));
                lo = a;
            } else {
                img = nn, lo = hi = a;
            }
            for (; hi < e; hi++)
                ti__fewc_row(&j->f, nn, hi, &rb, blk + (size_t)(hi - lo) * ldr, ldm);
            float *yrow = j->f.y + (size_t)nn * (size_t)p->m * plane;
            /* the group's rows whose windows lie inside the map: [ka, kb) */
            int64_t ka = py0, kb = py0;
            if (j->k3s2 != NULL) {
                while (ka < py0 + g && ka * j->sh - j->pt < 0) ka++;
                kb = ka;
                while (kb < py0 + g && kb * j->sh - j->pt + KH <= OH) kb++;
            }
            for (int64_t m = 0; m < M; m++) {
                const float *base = blk + (size_t)m * ldm;
                float *ym = yrow + (size_t)m * plane;
                if (kb > ka && j->chi > j->clo)
                    j->k3s2(ym + ka * PW + j->clo, (size_t)PW, (size_t)(j->chi - j->clo),
                            base + (size_t)(ka * j->sh - j->pt - lo) * ldr +
                                (size_t)(j->clo * j->sw - j->pl),
                            ldr, (size_t)(kb - ka));
                for (int64_t py = py0; py < py0 + g; py++) {
                    int64_t r0 = py * j->sh - j->pt, rlo = TI__MAX(r0, (int64_t)0);
                    int64_t nr = TI__MIN(r0 + KH, OH) - rlo;
                    const float *xr[TI__POOL_FUSE_MAX], *xs[TI__POOL_FUSE_MAX];
                    for (int64_t r = 0; r < nr; r++) {
                        xr[r] = base + (size_t)(rlo + r - lo) * ldr;
                        xs[r] = xr[r] + j->clo * j->sw - j->pl;
                    }
                    float *y = ym + py * PW;
                    int inner = py >= ka && py < kb && j->chi > j->clo; /* done by k3s2 */
                    int vec = !inner && j->maxrow != NULL && nr > 0 && j->chi > j->clo;
                    if (vec)
                        j->maxrow(y + j->clo, (size_t)(j->chi - j->clo), xs, (int)nr, (int)j->kw);
                    for (int64_t px = 0; px < PW; px++) {
                        if ((vec || inner) && px == j->clo) px = j->chi;
                        if (px >= PW) break;
                        int64_t c0 = px * j->sw - j->pl;
                        y[px] = ti__cpool_max(xr, nr, TI__MAX(c0, (int64_t)0),
                                              TI__MIN(c0 + j->kw, OW));
                    }
                }
            }
            q += (size_t)g;
        }
    }
}

/* Scratch of a conv with a MaxPool fused in: the weights' layout where not packed at
 * planning, then a block of conv rows a thread. */
TI__PRIVATE size_t ti__conv_pool_scratch(const ti__kctx *k, const ti__convp *p) {
    size_t wfl, blk;
    return ti__conv_pool_floats(k->node, p, (size_t)ti__threadpool_size(k->tp), &wfl, &blk) *
           sizeof(float);
}

/* The conv and the MaxPool fused after it (k->node->pool_k[0] > 0). */
TI__PRIVATE ti_status ti__conv_pool_run(ti__kctx *k, const ti__convp *p) {
    const ti__node *nd = k->node;
    ti__cpool_job j;
    memset(&j, 0, sizeof j);
    j.kh = nd->pool_k[0], j.kw = nd->pool_k[1], j.sh = nd->pool_s[0], j.sw = nd->pool_s[1];
    j.pt = nd->pool_pb[0], j.pl = nd->pool_pb[1];
    int64_t OH = p->out[1], OW = p->out[2];
    j.PH = j.sh > 0 ? (OH + j.pt + nd->pool_pe[0] - j.kh) / j.sh + 1 : 0;
    j.PW = j.sw > 0 ? (OW + j.pl + nd->pool_pe[1] - j.kw) / j.sw + 1 : 0;
    j.R = ti__conv_pool_rows(p, nd, &j.G);
    const ti_tensor *y = k->out[0];
    size_t threads = (size_t)ti__threadpool_size(k->tp), wfl;
    size_t need = ti__conv_pool_floats(nd, p, threads, &wfl, &j.block_floats);
    j.ldr = ti__conv_pool_ldr(p);
    if (j.kh < 1 || j.kh > TI__POOL_FUSE_MAX || j.kw < 1 || j.sh < 1 || j.sw < 1 || j.PH < 1 ||
        j.PW < 1 || y->dtype != TI_DTYPE_F32 || y->rank != 4 || y->shape[0] != p->n ||
        y->shape[1] != p->m || y->shape[2] != j.PH || y->shape[3] != j.PW || p->group != 1 ||
        k->scratch == NULL || k->scratch_bytes < need * sizeof(float) ||
        !ti__fewc_setup(k, p, 1, &j.f))
        return ti__kfail(k, TI_ERR_INVALID_ARGUMENT,
                         "the fused MaxPool (%lldx%lld / %lld) does not fit this conv's output",
                         (long long)j.kh, (long long)j.kw, (long long)j.sh);
    j.blocks = (float *)(void *)ti__align_up((uintptr_t)((float *)k->scratch + wfl), 64);
    /* the pool's columns whose whole window lies in the row: [clo, chi) */
    j.clo = TI__MIN((j.pl + j.sw - 1) / j.sw, j.PW);
    j.chi = OW - j.kw + j.pl >= 0 ? TI__MIN((OW - j.kw + j.pl) / j.sw + 1, j.PW) : 0;
    if (j.chi < j.clo) j.chi = j.clo;
    const ti__dw_isa *isa = ti__dw_pick_isa();
    if (j.sw <= 2) j.maxrow = isa->maxrow[j.sw == 2];
    if (j.kh == 3 && j.kw == 3 && j.sh == 2 && j.sw == 2) j.k3s2 = isa->mp_k3s2;
    size_t rows = (size_t)(p->n * j.PH);
    j.bands = TI__MIN(threads, rows);
    ti__parallel_for_part(k->tp, j.bands, 1, ti__conv_pool_bands, &j);
    return TI_OK;
}

/* ---- a 1x1 conv with the depthwise conv after it fused in (ti__fuse_pw_dw) ------------
 * Each thread takes a band of the depthwise conv's output rows (or a part of the channels).
 * The thread's ring holds RR rows of each channel of the 1x1 conv's output (row r in slot
 * r % RR; about TI__PWDW_RING_BYTES in all). A step is G output rows, as many as the ring
 * holds the window of: the rows that window reads and the ring does not hold yet are
 * computed into it by the GEMM (as many more as fit), then the row kernel runs each
 * channel's G rows, R a call (4 at stride 1, 2 at stride 2). Rows a step computes take the
 * slots of rows no later step reads. With a step of R rows (a GEMM call and a pass over the
 * channels for every 4 rows), MobileNetV2's pairs at 56 x 56 ran 0 to 4 % slower than
 * unfused at 1 thread, with steps of G 4 % faster. The GEMM runs on other columns than the
 * 1x1 conv alone (a run ending in one column is a dot product in another order): the same
 * values within a few ulp. */
typedef struct ti__pwdw_job {
    const ti__convp *p;      /* the 1x1 conv */
    const float *x, *w;      /* its input (C x H W) and weights (M x C) */
    ti__gemm_epi epi;        /* its bias and activation */
    const float *panel;      /* its weights as the transposed GEMM's B panel, or NULL */
    int nr;                  /* the panel's width */
    const float *apanel;     /* or as the GEMM's A panel in slivers of amr rows, or NULL */
    int amr;
    size_t ldt;              /* rows of Y^T (ti__conv_ct_ld) */
    const float *dw, *dwb;   /* the depthwise taps (M x K x K) and bias (or NULL) */
    float *y;                /* M x OH x OW */
    float *rings;            /* ring_floats a participant, then its Y^T where panel is set */
    size_t ring_floats;
    size_t bands, parts; /* the items: bands of output rows x parts of the channels */
    size_t split[TI_MAX_THREADS + 1]; /* part c: channels [split[c], split[c + 1]) */
    int64_t H, W, OH, OW, K, S, pt, pl, RR, R, G; /* G: output rows a step, R a call */
    int clamp, act;
    float lo, hi, act_a, act_b;
    ti__dw_rows_fn fn;
} ti__pwdw_job;

#ifndef TI__PWDW_RING_BYTES
#define TI__PWDW_RING_BYTES ((size_t)512 * 1024)
#endif
/* Rows of the ring (RR) for kernel K, stride S, M channels of H x W: the window of a
 * row-kernel call of the most rows any ISA's takes at least (the ISA in use may take fewer:
 * ti__conv_pwdw_run), as many as TI__PWDW_RING_BYTES holds, at most the map. */
TI__PRIVATE int64_t ti__pwdw_ring_rows(int64_t K, int64_t S, int64_t M, int64_t H, int64_t W) {
    int64_t win = S * (TI__DW_ROWS_MAX - 1) + K;
    int64_t fit = (int64_t)(TI__PWDW_RING_BYTES / sizeof(float)) / TI__MAX(M * W, (int64_t)1);
    return TI__MAX(win, TI__MIN(fit, H));
}

/* Floats of scratch a thread of the fused node takes, 64-byte aligned: its ring and, where
 * the 1x1 conv's weights were packed for the transposed GEMM, the Y^T of a ring's rows. */
TI__PRIVATE size_t ti__pwdw_ring_floats(const ti__kctx *k, const ti__convp *p) {
    int64_t RR = ti__pwdw_ring_rows(k->node->dw_k, k->node->dw_s, p->m, p->in[1], p->in[2]);
    size_t cols = (size_t)RR * (size_t)p->in[2];
    size_t t = ti__conv_ct_panels(k, p) != NULL ? cols * ti__conv_ct_ld(p) : 0;
    return TI__ROUND16((size_t)p->m * cols + t);
}
TI__PRIVATE size_t ti__conv_pwdw_scratch(const ti__kctx *k, const ti__convp *p) {
    return (ti__pwdw_ring_floats(k, p) * (size_t)ti__threadpool_size(k->tp) + 16) *
           sizeof(float);
}

/* ti__dw_rows_fn in plain C at stride S, any K: the fused path's where the ISA in use has
 * no row kernel (one forced after planning). */
TI__PRIVATE void ti__dw_rows_ref(int S, float *y, size_t ldy, int K, int R, size_t n,
                                 const float *const *x, int64_t W, int64_t pl, const float *w,
                                 float bias, int clamp, float lo, float hi) {
    for (int k = 0; k < R; k++)
        for (size_t o = 0; o < n; o++) {
            float acc = bias;
            for (int r = 0; r < K; r++) {
                const float *xr = x[S * k + r];
                for (int q = 0; q < K && xr != NULL; q++) {
                    int64_t c = S * (int64_t)o - pl + q;
                    if (c >= 0 && c < W) acc += w[K * r + q] * xr[c];
                }
            }
            y[(size_t)k * ldy + o] = clamp ? (acc < lo ? lo : (acc > hi ? hi : acc)) : acc;
        }
}
TI__PRIVATE void ti__dw_rows_ref1(float *y, size_t ldy, int K, int R, size_t n,
                                  const float *const *x, int64_t W, int64_t pl, const float *w,
                                  float bias, int clamp, float lo, float hi) {
    ti__dw_rows_ref(1, y, ldy, K, R, n, x, W, pl, w, bias, clamp, lo, hi);
}
TI__PRIVATE void ti__dw_rows_ref2(float *y, size_t ldy, int K, int R, size_t n,
                                  const float *const *x, int64_t W, int64_t pl, const float *w,
                                  float bias, int clamp, float lo, float hi) {
    ti__dw_rows_ref(2, y, ldy, K, R, n, x, W, pl, w, bias, clamp, lo, hi);
}

/* The 1x1 conv's rows [r0, r1) of channels [m0, m1) into the ring (at most RR rows). */
TI__PRIVATE void ti__pwdw_rows(const ti__pwdw_job *j, float *ring, int64_t r0, int64_t r1,
                               size_t m0, size_t m1) {
    const ti__convp *p = j->p;
    size_t W = (size_t)j->W, ldm = (size_t)j->RR * W, C = (size_t)p->c, M = (size_t)p->m;
    ti__gemm_epi epi = j->epi;
    if (epi.bias != NULL) epi.bias += m0;
    /* the weights of those channels: a part of the panels starts on a sliver (the split
     * puts it there), else the rows as given */
    int nr = j->panel != NULL && m0 % (size_t)j->nr == 0 ? j->nr : 0;
    int amr = j->apanel != NULL && m0 % (size_t)j->amr == 0 ? j->amr : 0;
    const float *bp = nr ? j->panel + m0 / (size_t)nr * C * (size_t)nr : NULL;
    const float *ap = amr ? j->apanel + m0 / (size_t)amr * C * (size_t)amr : NULL;
    while (r0 < r1) { /* runs of rows whose slots follow each other */
        int64_t slot = r0 % j->RR, n = TI__MIN(r1 - r0, j->RR - slot);
        float *c = ring + m0 * ldm + (size_t)slot * W;
        const float *x = j->x + (size_t)r0 * W;
        /* as the 1x1 conv alone: by the transposed GEMM (Y^T = X^T W^T) where the plan
         * packed W^T for it (its Y^T after the ring), else by the plain one */
        if (bp == NULL || !ti__sgemm_bpanel(1, (size_t)n * W, m1 - m0, C, x, p->in_sp, bp, nr,
                                            ti__conv_ct_kc(p), ring + ldm * M, j->ldt, c, ldm,
                                            &epi, 0, NULL))
            ti__sgemm_conv(0, m1 - m0, (size_t)n * W, C, j->w + m0 * C, C, ap, amr, x, p->in_sp,
                           0, 0.0f, c, ldm, &epi, NULL, 0, NULL);
        r0 += n;
    }
}

#define TI__PWDW_QMAX 32 /* row-kernel calls whose rows ti__pwdw_items finds at once */

/* Items [begin, end): item i is band i / parts of the output rows (bands of them) and
 * part i % parts of the channels (parts of them, at sliver boundaries: ti__pwdw_split). */
TI__PRIVATE void ti__pwdw_items(void *ctx, int part, size_t begin, size_t end) {
    const ti__pwdw_job *j = (const ti__pwdw_job *)ctx;
    int64_t W = j->W, OW = j->OW, K = j->K, S = j->S;
    size_t ldm = (size_t)(j->RR * W), out_sp = (size_t)(j->OH * OW);
    float *ring = j->rings + (size_t)part * j->ring_floats;
    for (size_t it = begin; it < end; it++) {
        size_t b = it / j->parts, c = it % j->parts, m0 = j->split[c], m1 = j->split[c + 1];
        int64_t oy0 = j->OH * (int64_t)b / (int64_t)j->bands;
        int64_t oy1 = j->OH * (int64_t)(b + 1) / (int64_t)j->bands;
        int64_t hi = -1; /* rows below hi are computed (the last RR of them in the ring) */
        int64_t last = TI__MIN(j->H, (oy1 - 1) * S - j->pt + K); /* the band reads below */
        for (int64_t oy = oy0; oy < oy1; oy += j->G) { /* G rows: a step */
            int64_t G = TI__MIN(j->G, oy1 - oy), a = S * oy - j->pt;
            int64_t ca = TI__MAX(a, (int64_t)0), ce = TI__MIN(a + S * (G - 1) + K, j->H);
            if (hi < ca) hi = ca;
            if (ce > hi) { /* as many as the ring holds from the window on */
                int64_t to = TI__MAX(ce, TI__MIN(last, ca + j->RR));
                ti__pwdw_rows(j, ring, hi, to, m0, m1);
                hi = to;
            }
            /* a channel's G rows, R a call; the calls' rows in the ring (-1: padding) are
             * the same for every channel, found once for up to QMAX calls (a division
             * each: 5 % of MobileNetV3-Small's 16 -> 72 at 56 x 56 pair when done for each
             * channel, perf) */
            for (int64_t q0 = oy; q0 < oy + G; q0 += TI__PWDW_QMAX * j->R) {
                int64_t q1 = TI__MIN(oy + G, q0 + TI__PWDW_QMAX * j->R), off[TI__PWDW_QMAX][12];
                for (int64_t q = q0; q < q1; q += j->R) {
                    int R = (int)TI__MIN(j->R, oy + G - q), taps = (int)(S * (R - 1) + K);
                    for (int r = 0; r < taps; r++) {
                        int64_t ih = S * q - j->pt + r;
                        off[(q - q0) / j->R][r] = ih >= 0 && ih < j->H ? ih % j->RR * W : -1;
                    }
                }
                for (size_t m = m0; m < m1; m++) {
                    const float *base = ring + m * ldm;
                    for (int64_t q = q0; q < q1; q += j->R) {
                        int R = (int)TI__MIN(j->R, oy + G - q), taps = (int)(S * (R - 1) + K);
                        const int64_t *o = off[(q - q0) / j->R];
                        const float *xr[12];
                        for (int r = 0; r < taps; r++) xr[r] = o[r] >= 0 ? base + o[r] : NULL;
                        j->fn(j->y + m * out_sp + (size_t)(q * OW), (size_t)OW, (int)K, R,
                              (size_t)OW, xr, W, j->pl, j->dw + m * (size_t)(K * K),
                              j->dwb != NULL ? j->dwb[m] : 0.0f, j->clamp, j->lo, j->hi);
                    }
                }
            }
            if (j->act != TI__ACT_NONE && !j->clamp)
                ti__act_block(j->act, j->act_a, j->act_b, NULL,
                              j->y + m0 * out_sp + (size_t)(oy * OW), out_sp, m1 - m0,
                              (size_t)G * (size_t)OW);
        }
    }
}

/* The channels' split into `parts` parts (split[0 .. parts]): at multiples of the weights'
 * slivers where they are packed (the transposed GEMM's panel width, else the A panel's),
 * else of 16. */
TI__PRIVATE size_t ti__pwdw_split(const ti__pwdw_job *j, size_t parts, size_t *split) {
    size_t M = (size_t)j->p->m, unit = j->panel != NULL ? (size_t)j->nr
                                       : j->apanel != NULL ? (size_t)j->amr : 16;
    size_t units = (M + unit - 1) / unit;
    parts = TI__MAX((size_t)1, TI__MIN(parts, units));
    for (size_t c = 0; c <= parts; c++) split[c] = TI__MIN(M, units * c / parts * unit);
    split[parts] = M;
    return parts;
}

/* The 1x1 conv and the depthwise conv fused after it (k->node->dw_k > 0). */
TI__PRIVATE ti_status ti__conv_pwdw_run(ti__kctx *k, const ti__convp *p) {
    const ti__node *nd = k->node;
    const ti_tensor *y = k->out[0], *dw = k->n_in > 5 ? k->in[5] : NULL;
    const ti_tensor *dwb = k->n_in > 6 ? k->in[6] : NULL;
    const ti__dw_isa *isa = ti__dw_pick_isa();
    ti__pwdw_job j;
    memset(&j, 0, sizeof j);
    j.p = p;
    j.K = nd->dw_k, j.S = nd->dw_s, j.pt = nd->dw_pt, j.pl = nd->dw_pl;
    j.H = p->in[1], j.W = p->in[2];
    j.RR = ti__pwdw_ring_rows(j.K, j.S, p->m, j.H, j.W);
    size_t threads = (size_t)ti__threadpool_size(k->tp);
    j.ring_floats = ti__pwdw_ring_floats(k, p);
    j.panel = ti__conv_ct_panels(k, p);
    j.nr = nd->packed_arg;
    j.ldt = ti__conv_ct_ld(p);
    j.apanel = ti__conv_apanels(k, p); /* or in the A panel's slivers, as the 1x1 conv */
    j.amr = nd->packed_arg;
    j.fn = (j.S == 1 || j.S == 2) ? isa->rows[j.S == 2] : NULL;
    if (j.fn == NULL && (j.S == 1 || j.S == 2)) /* an ISA forced after planning */
        j.fn = j.S == 1 ? ti__dw_rows_ref1 : ti__dw_rows_ref2;
    /* as many rows a call as the depthwise conv alone: 4 at stride 2 on AVX-512 (2 before)
     * halved the calls, MobileNetV2's stride-2 pairs, per-node minima, 1 thread, Zen 4,
     * builds alternating: 16 -> 96 at 112 x 112 0.623 -> 0.613 ms, 24 -> 144 at 56 x 56
     * 0.310 -> 0.303 */
    j.R = ti__dw_rows_per_call(isa, j.S);
    j.G = TI__MAX(j.R, ((j.RR - j.K) / j.S + 1) / j.R * j.R); /* whose window the ring holds */
    int ok = y->dtype == TI_DTYPE_F32 && y->rank == 4 && y->shape[0] == 1 &&
             y->shape[1] == p->m && y->shape[2] >= 1 && y->shape[3] >= 1 && p->n == 1 &&
             p->group == 1 && p->in[0] == 1 && dw != NULL && dw->dtype == TI_DTYPE_F32 &&
             dw->data != NULL && ti__numel(dw) == (size_t)(p->m * j.K * j.K) &&
             (dwb == NULL || (dwb->dtype == TI_DTYPE_F32 && ti__numel(dwb) == (size_t)p->m)) &&
             j.fn != NULL && j.pt >= 0 && j.pl >= 0 &&
             (j.S == 1 ? (j.K == 3 || j.K == 5) && j.pl < j.K : j.K == 3 && j.pl <= 2) &&
             k->scratch != NULL && k->scratch_bytes >= ti__conv_pwdw_scratch(k, p);
    if (!ok)
        return ti__kfail(k, TI_ERR_INVALID_ARGUMENT,
                         "the fused depthwise conv (%lldx%lld / %lld) does not fit this 1x1 "
                         "conv's output or the scratch",
                         (long long)j.K, (long long)j.K, (long long)j.S);
    j.OH = y->shape[2], j.OW = y->shape[3];
    j.x = (const float *)k->in[0]->data;
    j.w = (const float *)k->in[1]->data;
    j.epi.bias = k->n_in > 2 && k->in[2] != NULL ? (const float *)k->in[2]->data : NULL;
    j.epi.act = nd->act;
    j.epi.a = nd->act_a;
    j.epi.b = nd->act_b;
    j.dw = (const float *)dw->data;
    j.dwb = dwb != NULL ? (const float *)dwb->data : NULL;
    j.y = (float *)y->data;
    j.rings = (float *)(void *)ti__align_up((uintptr_t)k->scratch, 64);
    j.act = nd->dw_act, j.act_a = nd->dw_act_a, j.act_b = nd->dw_act_b;
    j.lo = -INFINITY, j.hi = INFINITY;
    if (j.act == TI__ACT_RELU) j.clamp = 1, j.lo = 0.0f;
    else if (j.act == TI__ACT_CLIP) j.clamp = 1, j.lo = j.act_a, j.hi = j.act_b;
    /* A band of rows a thread where only convs read the output (bands_ok): each reads
     * the rows its core wrote, as with the depthwise row path alone (ti__conv_dw_bands);
     * else a part of the channels a thread, for the pools and products by channel after it
     * (EfficientNet-B0's squeeze-and-excite: on 2 threads its sum of node minima went 4.15
     * -> 4.40 ms with bands there, 2-core Xeon VM). */
    int by_rows = nd->bands_ok || threads <= 1;
    j.bands = by_rows ? TI__MIN(threads, (size_t)j.OH) : 1;
    j.parts = by_rows ? 1 : ti__pwdw_split(&j, TI__MIN(threads, (size_t)TI_MAX_THREADS), j.split);
    if (by_rows) j.split[0] = 0, j.split[1] = (size_t)p->m;
    ti__parallel_for_part(k->tp, j.bands * j.parts, 1, ti__pwdw_items, &j);
    return TI_OK;
}

/* ---- Winograd F(4x4, 3x3) and F(2x2, 3x3) ------------------------------------------- */
/* Y = A^T [(G g G^T) . (B^T d B)] A on 6x6 input tiles d that step by 4, g the 3x3 kernel:
 * each 4x4 output tile costs 36 multiplies per channel pair instead of 144. The products
 * for all tiles and channels are 36 GEMMs U[pos] (M x C) * V[pos] (C x tiles).
 * F(2x2, 3x3) takes maps too small for F(4x4) to fill the GEMM's columns (ti__conv_wino_ok):
 * 4x4 tiles stepping by 2, 16 GEMMs, 16 multiplies per 4 outputs instead of 36, points 0, 1,
 * -1 and infinity (exact in float but for G's halves). A variant is the output tile t (4 or
 * 2): alpha = t + 2 input rows and columns per tile, alpha^2 positions. F(4x4): points
 * 0, 1, -1, 2, -2 and infinity; the transforms' entries up to 8 cost about two decimal
 * digits of float32 accuracy against im2col (tested in tests/unit/test_conv.c). */

/* Tiles per block: V (36 x C x tb) and the products (36 x M x tb) of one block aim at 1 MiB
 * (an L2); a multiple of 32, the column tile of the AVX-512 GEMM kernel. */
#define TI__WINO_BLOCK_BYTES ((size_t)1 << 20)
#define TI__WINO_MAX_TB 128 /* tiles a block at most (ti__wino_block) */

/* The Winograd path is worth it from these sizes up. With 16 tiles (a 14 x 14 map) and
 * more, and from 8 input and output channels, it beat im2col at every size bench/conv.c has
 * (bench/results/conv-2026-11-23-b.md), on a Zen 2 (AVX2) and a Xeon (AVX-512): 8 -> 8 @56
 * 1.33x and 1.04x, 16 -> 16 @56 1.67x and 1.53x, 256 -> 256 @14 3.1x and 2.7x. At 7 x 7 (4
 * tiles) F(4x4)'s products are GEMMs of 4 columns, and the transposed im2col GEMM beat it
 * (512 -> 512 @7: 1.3x and 2.1x); F(2x2) has 16 tiles there (TI__WINO23_MIN_CH). */
#define TI__WINO_MIN_CH 8           /* input and output channels */
#define TI__WINO_MIN_TILES 16       /* output tiles per image */
/* F(2x2, 3x3) where F(4x4) has too few tiles, from this many input and output channels:
 * ResNet-18's 512 -> 512 convs at 7 x 7 (16 tiles of 2 x 2) read 16.8 MB of U where the
 * transposed im2col GEMM reads 9.4 MB of weights, and still take 1.52-1.60 ms instead of
 * 2.48-2.62 (per-node minima in the model, Zen 4, 1 thread; 1.11-1.15 instead of 1.69-1.81
 * on 2). Few channels leave the transforms a larger share; 128 is the smallest count
 * measured. */
#define TI__WINO23_MIN_CH 128

/* Output tiles of t x t per image. */
TI__PRIVATE size_t ti__wino_tiles(const ti__convp *p, int t) {
    return (size_t)((p->out[1] + t - 1) / t) * (size_t)((p->out[2] + t - 1) / t);
}

/* The GEMM kernel's columns for the Winograd path (ti__wino_geometry's nr). */
TI__PRIVATE size_t ti__wino_nr(void) {
    int nr = ti__sgemm_panel_nr();
    return nr > 0 ? (size_t)nr : 16;
}

/* How threads share an image's tiles: in `ranges` ranges of whole slivers of nr tiles (the
 * last takes the rest), one per thread, when each gets at least a sliver; else one range,
 * and threads split each block's output channels instead (ti__wino_job.mparts). Splitting
 * 16 tiles (ResNet-18's 14 x 14) ran the kernel half empty and had each thread stream all
 * of U: 256 -> 256 @14 took 2.65 ms on 2 threads where 1 took 2.8; by channels, 1.65. */
TI__PRIVATE size_t ti__wino_ranges(size_t tiles, size_t threads, size_t nr) {
    return threads > 1 && tiles >= threads * nr ? threads : 1;
}

/* Tiles [*t0, *t1) of range r. */
TI__PRIVATE void ti__wino_range(size_t tiles, size_t ranges, size_t nr, size_t r, size_t *t0,
                                size_t *t1) {
    size_t ns = (tiles + nr - 1) / nr;
    *t0 = TI__MIN(tiles, ns * r / ranges * nr);
    *t1 = r + 1 == ranges ? tiles : TI__MIN(tiles, ns * (r + 1) / ranges * nr);
}

/* Tiles in the longest range. */
TI__PRIVATE size_t ti__wino_longest(size_t tiles, size_t ranges, size_t nr) {
    size_t most = 0, t0, t1;
    for (size_t r = 0; r < ranges; r++) {
        ti__wino_range(tiles, ranges, nr, r, &t0, &t1);
        most = TI__MAX(most, t1 - t0);
    }
    return most;
}

/* Tiles per block: V and O of a block in about TI__WINO_BLOCK_BYTES, whole slivers of nr
 * tiles, at most a range. */
TI__PRIVATE size_t ti__wino_block(const ti__convp *p, int t, size_t threads) {
    size_t per = (size_t)(t + 2) * (size_t)(t + 2) * (size_t)(p->c + p->m) * sizeof(float);
    size_t nr = ti__wino_nr(), tb = TI__WINO_BLOCK_BYTES / per;
    tb = TI__MIN(TI__MAX(tb, (size_t)32), (size_t)TI__WINO_MAX_TB) / nr * nr;
    size_t n = ti__wino_tiles(p, t), ranges = ti__wino_ranges(n, threads, nr);
    return TI__MIN(TI__MAX(tb, nr), ti__wino_longest(n, ranges, nr));
}

/* 1 when the conv's geometry allows Winograd (either variant): 2-D, 3x3, stride 1, no
 * dilation, one group, any pads. */
TI__PRIVATE int ti__conv_wino_fits(const ti__convp *p) {
    return p->group == 1 && p->in[0] == 1 && p->k[0] == 1 && p->out[0] == 1 && p->k[1] == 3 &&
           p->k[2] == 3 && p->s[1] == 1 && p->s[2] == 1 && p->d[1] == 1 && p->d[2] == 1 &&
           p->c > 0;
}

/* The variant (output tile 4 or 2) when it fits and its size makes it pay on `threads`
 * threads (what planning packs weights for), else 0. */
TI__PRIVATE int ti__conv_wino_ok(const ti__convp *p, int threads) {
    (void)threads; /* the same sizes pay on any count (ti__wino_block) */
    if (!ti__conv_wino_fits(p) || p->c < TI__WINO_MIN_CH || p->m < TI__WINO_MIN_CH) return 0;
    if (ti__wino_tiles(p, 4) >= TI__WINO_MIN_TILES) return 4;
    if (p->c >= TI__WINO23_MIN_CH && p->m >= TI__WINO23_MIN_CH &&
        ti__wino_tiles(p, 2) >= TI__WINO_MIN_TILES)
        return 2;
    return 0;
}

/* The plan's kind of packed weights for variant t, and back */
TI__PRIVATE int ti__wino_kind(int t) { return t == 2 ? TI__PACK_WINO23 : TI__PACK_WINO43; }
TI__PRIVATE int ti__wino_kind_tile(int kind) {
    return kind == TI__PACK_WINO23 ? 2 : kind == TI__PACK_WINO43 ? 4 : 0;
}

/* The GEMM between the transforms multiplies, for each of the 36 positions, U[pos] (M x C)
 * by V[pos] (C x tiles) with the SIMD micro-kernel of cpu/gemm.c called directly on operands
 * already in its layouts, so nothing is packed at run time:
 *   U  at planning, in the order the GEMM reads it: for each position, blocks of kc input
 *      channels, in each the slivers of mr output channels (nms = ceil(M / mr) of them, zero
 *      past M), each kc x mr (ti__wino_uoff); packed_arg records mr and kc. Slivers
 *      [(pos * nms + s) * C + c] * mr, each C long, had the GEMM jump 4 KiB pages every
 *      kc rows: U of a 256 -> 256 conv at 14 x 14 (9.4 MB) comes from DRAM in a ResNet-18
 *      run, and its 36 GEMMs took 1.58 ms so, 0.81 read in order (bench of the GEMM alone
 *      on 8 copies of U, 93 GFLOP/s: as fast as with U in L3);
 *   V  by the input transform, slivers of nr tiles: tile j of the block, channel c at
 *      v[pos * vs + (j / nr) * C nr + c nr + j % nr] (vs = C tbp + 16, tbp = tb rounded up
 *      to nr);
 *   O  the products, o[pos * os + m ldo + j] (os = M ldo + 16), read back by the output
 *      transform.
 * The 16 floats between positions: the transforms touch the 36 positions one after another,
 * and a stride of a multiple of 4 KiB would put all 36 in one set of the L1 (36 lines in 8
 * ways: the input transform of 64 channels at 56 x 56 took 1.25 ms so, 0.91 without).
 * Without a SIMD kernel the same layouts with mr 4, nr 16 and a loop the compiler
 * vectorises. */
typedef struct ti__wino_geo {
    const ti__sgemm_isa *isa; /* NULL: the portable loop */
    size_t mr, nr, kc;        /* register tile and k block */
    size_t lanes;             /* tiles per transform call: simd->lanes or TI__WINO_LANES */
    const ti__wino_fns *simd; /* F(4x4)'s x86 transforms; NULL: the portable loops */
    int t, a;                 /* output tile, input tile (t + 2) */
    size_t np;                /* positions, a * a */
} ti__wino_geo;

/* The transforms run on groups of TI__WINO_LANES tiles at once, each value an array over
 * the group: loops of a fixed count with no dependence between lanes, which compilers turn
 * into vector code at -O2 on any target (gcc 12+, clang). On x86 F(4x4)'s transforms are
 * intrinsics: cpu/x86/conv_avx512.c's on 16 tiles, or conv_avx2.c's on 8 with AVX2 only. */
#define TI__WINO_LANES 16

TI__PRIVATE void ti__wino_geometry(ti__wino_geo *g, int t) {
    g->isa = ti__sgemm_pick_isa();
    g->mr = g->isa != NULL ? (size_t)g->isa->mr : 4;
    g->nr = ti__wino_nr();
    g->kc = g->isa != NULL ? (size_t)g->isa->kc : 256;
    g->lanes = TI__WINO_LANES;
    g->t = t;
    g->a = t + 2;
    g->np = (size_t)(g->a * g->a);
    g->simd = NULL;
#ifdef TI__X86_SIMD
    if (t == 4 && ti__cpu_isa() >= TI__ISA_AVX512) g->simd = ti__wino_avx512_fns();
    else if (t == 4 && ti__cpu_isa() >= TI__ISA_AVX2) g->simd = ti__wino_avx2_fns();
    if (g->simd != NULL) g->lanes = g->simd->lanes;
#endif
}

/* packed_arg of U packed for geometry g: its sliver height and k block */
TI__PRIVATE int ti__wino_arg(const ti__wino_geo *g) { return (int)(g->kc * 64 + g->mr); }

/* Offset in one position's U of sliver s's rows for input channels [pc, pc + kc), pc a
 * multiple of kc. */
TI__PRIVATE size_t ti__wino_uoff(const ti__wino_geo *g, size_t nms, size_t C, size_t s,
                                 size_t pc) {
    return pc * nms * g->mr + s * g->mr * TI__MIN(g->kc, C - pc);
}

/* Bytes of variant t's packed weights for the ISA in use. */
TI__PRIVATE size_t ti__wino_u_bytes(const ti__convp *p, int t) {
    ti__wino_geo g;
    ti__wino_geometry(&g, t);
    return g.np * (((size_t)p->m + g.mr - 1) / g.mr * g.mr) * (size_t)p->c * sizeof(float);
}

/* Row i of G for F(2x2, 3x3) times (g0, g1, g2): g0, (g0 + g1 + g2) / 2, (g0 - g1 + g2) / 2,
 * g2. */
TI__PRIVATE float ti__wino23_g(int i, float g0, float g1, float g2) {
    return i == 0 ? g0 : i == 1 ? (g0 + g1 + g2) * 0.5f : i == 2 ? (g0 - g1 + g2) * 0.5f : g2;
}

/* Row i of G for F(4x4, 3x3) times (g0, g1, g2). */
TI__PRIVATE float ti__wino43_g(int i, float g0, float g1, float g2) {
    switch (i) {
    case 0: return g0 / 4;
    case 1: return -(g0 + g1 + g2) / 6;
    case 2: return -(g0 - g1 + g2) / 6;
    case 3: return g0 / 24 + g1 / 12 + g2 / 6;
    case 4: return g0 / 24 - g1 / 12 + g2 / 6;
    default: return g2;
    }
}

/* Packs U = G g G^T of variant t for every kernel g = W[m][c] in the layout above, for the
 * ISA in use (ti__wino_u_bytes bytes at u); returns the packed_arg to record
 * (ti__wino_arg). Each entry of G g is computed where G g G^T needs it, in registers: an
 * array of G g written by columns and read by rows stalled on store forwarding, half of
 * packing ResNet-18's weights. */
TI__PRIVATE int ti__wino_pack(const ti__convp *p, int t_out, const float *w, float *u) {
    ti__wino_geo geo;
    ti__wino_geometry(&geo, t_out);
    size_t M = (size_t)p->m, C = (size_t)p->c, mr = geo.mr, nms = (M + mr - 1) / mr;
    size_t ps = nms * mr * C; /* floats from one position's U to the next */
    int a = t_out + 2;        /* alpha: U is a x a */
    memset(u, 0, geo.np * ps * sizeof(float));
    for (size_t m = 0; m < M; m++)
        for (size_t c = 0; c < C; c++) {
            const float *g = w + (m * C + c) * 9;
            size_t at = ti__wino_uoff(&geo, nms, C, m / mr, c / geo.kc * geo.kc) +
                        c % geo.kc * mr + m % mr;
            for (int i = 0; i < a; i++) { /* row i of G g, then of (G g) G^T */
                float t0, t1, t2;
                if (t_out == 2) {
                    t0 = ti__wino23_g(i, g[0], g[3], g[6]);
                    t1 = ti__wino23_g(i, g[1], g[4], g[7]);
                    t2 = ti__wino23_g(i, g[2], g[5], g[8]);
                    for (int k = 0; k < 4; k++)
                        u[(size_t)(4 * i + k) * ps + at] = ti__wino23_g(k, t0, t1, t2);
                } else {
                    t0 = ti__wino43_g(i, g[0], g[3], g[6]);
                    t1 = ti__wino43_g(i, g[1], g[4], g[7]);
                    t2 = ti__wino43_g(i, g[2], g[5], g[8]);
                    for (int k = 0; k < 6; k++)
                        u[(size_t)(6 * i + k) * ps + at] = ti__wino43_g(k, t0, t1, t2);
                }
            }
        }
    return ti__wino_arg(&geo);
}

/* A slot's scratch (one thread's block), in floats: V, O, then the padded input strip. */
typedef struct ti__wino_slot {
    size_t tb, tbp, ldo; /* tiles per block; V's and O's columns */
    size_t vs, os;       /* floats from one position to the next in V and in O */
    size_t sw, sr;       /* strip: floats per row, rows at most */
    size_t v, o, strip;  /* floats of each part */
} ti__wino_slot;

TI__PRIVATE void ti__wino_slot_size(const ti__convp *p, int t, size_t threads,
                                    ti__wino_slot *s) {
    ti__wino_geo g;
    ti__wino_geometry(&g, t);
    size_t T = (size_t)t, twn = (size_t)((p->out[2] + t - 1) / t);
    s->tb = ti__wino_block(p, t, threads);
    s->tbp = (s->tb + g.nr - 1) / g.nr * g.nr;
    s->ldo = (s->tb + TI__WINO_LANES - 1) / TI__WINO_LANES * TI__WINO_LANES;
    /* a call reads t (lanes - 1) + alpha floats of a row from a tile's left column, the SIMD
     * ones whole vectors (AVX-512: 80 floats for 66); rows of all the tile rows a block
     * touches */
    s->sw = T * twn + T * g.lanes + 16;
    s->sr = T * (s->tb / twn + 2) + (size_t)g.a;
    s->vs = (size_t)p->c * s->tbp + 16;
    s->os = (size_t)p->m * s->ldo + 16;
    s->v = g.np * s->vs;
    s->o = g.np * s->os;
    s->strip = s->sw * s->sr;
}

TI__PRIVATE size_t ti__wino_slot_floats(const ti__convp *p, int t, size_t threads) {
    ti__wino_slot s;
    ti__wino_slot_size(p, t, threads, &s);
    return s.v + s.o + s.strip;
}

/* Scratch for the variant the node's weights were packed for (F(4x4) when none). */
TI__PRIVATE size_t ti__conv_wino_scratch(const ti__kctx *k, const ti__convp *p) {
    size_t slots = (size_t)ti__threadpool_size(k->tp);
    int t = ti__wino_kind_tile(k->node->packed_kind);
    return slots * ti__wino_slot_floats(p, t ? t : 4, slots) * sizeof(float);
}

/* B^T applied along one axis: out[k] = (B^T in)[k], in[k] at in + k * is, out[k] at
 * out + k * os, each TI__WINO_LANES floats. */
TI__PRIVATE void ti__wino_bt(const float *in, size_t is, float *out, size_t os) {
    const float *d0 = in, *d1 = in + is, *d2 = in + 2 * is, *d3 = in + 3 * is;
    const float *d4 = in + 4 * is, *d5 = in + 5 * is;
    float *o0 = out, *o1 = out + os, *o2 = out + 2 * os, *o3 = out + 3 * os, *o4 = out + 4 * os;
    float *o5 = out + 5 * os;
    for (int l = 0; l < TI__WINO_LANES; l++) {
        float a = d4[l] - 4.0f * d2[l], b = d3[l] - 4.0f * d1[l];
        float c = d4[l] - d2[l], e = 2.0f * (d3[l] - d1[l]);
        o0[l] = 4.0f * d0[l] - 5.0f * d2[l] + d4[l];
        o1[l] = a + b;
        o2[l] = a - b;
        o3[l] = c + e;
        o4[l] = c - e;
        o5[l] = 4.0f * d1[l] - 5.0f * d3[l] + d5[l];
    }
}

/* A^T applied along one axis: 6 rows in, 4 out. */
TI__PRIVATE void ti__wino_at(const float *in, size_t is, float *out, size_t os) {
    const float *m0 = in, *m1 = in + is, *m2 = in + 2 * is, *m3 = in + 3 * is;
    const float *m4 = in + 4 * is, *m5 = in + 5 * is;
    float *o0 = out, *o1 = out + os, *o2 = out + 2 * os, *o3 = out + 3 * os;
    for (int l = 0; l < TI__WINO_LANES; l++) {
        float s12 = m1[l] + m2[l], d12 = m1[l] - m2[l], s34 = m3[l] + m4[l], d34 = m3[l] - m4[l];
        o0[l] = m0[l] + s12 + s34;
        o1[l] = d12 + 2.0f * d34;
        o2[l] = s12 + 4.0f * s34;
        o3[l] = d12 + 8.0f * d34 + m5[l];
    }
}

/* Input transform of TI__WINO_LANES tiles side by side, one channel: rows[i] (i < 6) is
 * input row i of the tile row from the first tile's left column (tile l reads columns
 * 4 l .. 4 l + 5); out + e * os receives position e's values, e = 6 i + q for (B^T d B)[i][q],
 * one per tile. */
TI__PRIVATE void ti__wino_in_lanes(const float *const *rows, float *out, size_t os) {
    enum { L = TI__WINO_LANES };
    float d[36][L], r[36][L], o[36][L]; /* [row * 6 + col][lane] */
    for (int i = 0; i < 6; i++)
        for (int q = 0; q < 6; q++)
            for (int l = 0; l < L; l++) d[i * 6 + q][l] = rows[i][4 * l + q];
    for (int q = 0; q < 6; q++) ti__wino_bt(d[q], 6 * L, r[q], 6 * L); /* B^T d */
    for (int i = 0; i < 6; i++) ti__wino_bt(r[i * 6], L, o[i * 6], L); /* (B^T d) B */
    for (int e = 0; e < 36; e++) memcpy(out + (size_t)e * os, o[e], sizeof o[e]);
}

/* Output transform of TI__WINO_LANES tiles, one channel: src + e * es holds the tiles'
 * products at position e; z[(4 i + q) * L + l] receives output (i, q) of tile l plus bias,
 * then max(., 0) when relu (NaN gives 0). */
TI__PRIVATE void ti__wino_out_lanes(const float *src, size_t es, float bias, int relu, float *z) {
    enum { L = TI__WINO_LANES };
    float s[36][L], r[24][L];
    for (int e = 0; e < 36; e++) memcpy(s[e], src + (size_t)e * es, sizeof s[e]);
    for (int i = 0; i < 6; i++) ti__wino_at(s[i * 6], L, r[i * 4], L); /* rows: m A */
    for (int q = 0; q < 4; q++) ti__wino_at(r[q], 4 * L, z + q * L, 4 * L); /* A^T (m A) */
    for (int e = 0; e < 16 * L; e++) z[e] += bias;
    if (relu)
        for (int e = 0; e < 16 * L; e++) z[e] = z[e] > 0.0f ? z[e] : 0.0f;
}

/* F(2x2, 3x3) input transform of TI__WINO_LANES tiles, one channel: tile l's 4 x 4 inputs
 * from tl[l], rows sw floats apart (any tiles: a 7 x 7 map's tile rows hold 4, where the
 * F(4x4) transforms take a run within one tile row); out + e * os receives position
 * e = 4 i + q of (B^T d B), one per tile. B^T = (1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1). */
TI__PRIVATE void ti__wino23_in_lanes(const float *const *tl, size_t sw, float *out, size_t os) {
    enum { L = TI__WINO_LANES };
    float r[16][L];
    for (int i = 0; i < 4; i++) { /* along the row: d B */
        for (int l = 0; l < L; l++) {
            const float *x = tl[l] + (size_t)i * sw;
            float d0 = x[0], d1 = x[1], d2 = x[2], d3 = x[3];
            r[i * 4][l] = d0 - d2;
            r[i * 4 + 1][l] = d1 + d2;
            r[i * 4 + 2][l] = d2 - d1;
            r[i * 4 + 3][l] = d1 - d3;
        }
    }
    for (int q = 0; q < 4; q++) { /* down the columns: B^T (d B) */
        float *o0 = out + (size_t)q * os, *o1 = o0 + 4 * os, *o2 = o0 + 8 * os, *o3 = o0 + 12 * os;
        for (int l = 0; l < L; l++) {
            float d0 = r[q][l], d1 = r[4 + q][l], d2 = r[8 + q][l], d3 = r[12 + q][l];
            o0[l] = d0 - d2;
            o1[l] = d1 + d2;
            o2[l] = d2 - d1;
            o3[l] = d1 - d3;
        }
    }
}

/* F(2x2, 3x3) output transform of TI__WINO_LANES tiles, one channel: src + e * es holds the
 * tiles' products at position e; z[(2 i + q) * L + l] receives output (i, q) of tile l plus
 * bias, then max(., 0) when relu. A^T = (1 1 1 0; 0 1 -1 -1). */
TI__PRIVATE void ti__wino23_out_lanes(const float *src, size_t es, float bias, int relu,
                                      float *z) {
    enum { L = TI__WINO_LANES };
    float r[8][L]; /* (A^T m): row i (< 2), column q (< 4) at r[i * 4 + q] */
    for (int q = 0; q < 4; q++) {
        const float *m0 = src + (size_t)q * es, *m1 = m0 + 4 * es, *m2 = m0 + 8 * es;
        const float *m3 = m0 + 12 * es;
        for (int l = 0; l < L; l++) {
            r[q][l] = m0[l] + m1[l] + m2[l];
            r[4 + q][l] = m1[l] - m2[l] - m3[l];
        }
    }
    for (int i = 0; i < 2; i++)
        for (int l = 0; l < L; l++) {
            float a = r[i * 4][l] + r[i * 4 + 1][l] + r[i * 4 + 2][l] + bias;
            float b = r[i * 4 + 1][l] - r[i * 4 + 2][l] - r[i * 4 + 3][l] + bias;
            z[(2 * i) * L + l] = relu ? (a > 0.0f ? a : 0.0f) : a;
            z[(2 * i + 1) * L + l] = relu ? (b > 0.0f ? b : 0.0f) : b;
        }
}

typedef struct ti__wino_job {
    const ti__convp *p;
    ti__wino_geo geo;
    ti__wino_slot sl;
    const float *x, *u, *b;
    float *y, *scratch;
    size_t ranges, bpr;      /* tile ranges per image (ti__wino_ranges), blocks per range */
    size_t nitems, slots;    /* (image, block, channel part) items; threads' slots */
    size_t mparts;           /* parts of the output channels per block */
    size_t cparts;           /* shared input transform (ti__wino_shared): its channel parts */
    int act;
    float act_a, act_b;
    int sum; /* Y holds a residual sum fused in (ti__fuse_conv_sum): added, then act (Relu) */
    /* ti__wino_slots' items not yet taken, per slot: [begin, end) of its sequence (slot s's
     * k-th item is s + k * slots) as begin << 16 | end */
    ti__atomic_int left[TI_MAX_THREADS];
} ti__wino_job;

/* Copies the input rows that tiles [t0, t0 + tb) read, of channel plane xc, into the strip:
 * zero outside the plane, so the transforms read no bounds. Strip row r is input row
 * 4 th0 - pad_top + r; strip column x is input column x - pad_left. */
TI__PRIVATE void ti__wino_strip(const ti__wino_job *j, const float *xc, size_t th0, size_t th1,
                                float *strip) {
    const ti__convp *p = j->p;
    int64_t H = p->in[1], W = p->in[2], pl = p->pb[2], sw = (int64_t)j->sl.sw;
    int64_t x0 = TI__MAX(pl, (int64_t)0), x1 = TI__MIN(pl + W, sw); /* columns with data */
    int64_t t = j->geo.t;
    size_t rows = (size_t)t * (th1 - th0) + (size_t)j->geo.a;
    for (size_t r = 0; r < rows; r++) {
        float *d = strip + r * (size_t)sw;
        int64_t ih = t * (int64_t)th0 - p->pb[1] + (int64_t)r;
        if (ih < 0 || ih >= H || x1 <= x0) {
            memset(d, 0, (size_t)sw * sizeof(float));
            continue;
        }
        memset(d, 0, (size_t)x0 * sizeof(float));
        memcpy(d + x0, xc + ih * W + (x0 - pl), (size_t)(x1 - x0) * sizeof(float));
        memset(d + x1, 0, (size_t)(sw - x1) * sizeof(float));
    }
}

/* The input transform of the block's tiles [t0, t0 + tb) of image x into V, input
 * channels [c0, c1). */
TI__PRIVATE void ti__wino_input(const ti__wino_job *j, const float *x, size_t t0, size_t tb,
                                size_t c0, size_t c1, float *v, float *strip) {
    enum { L = TI__WINO_LANES };
    const ti__convp *p = j->p;
    size_t T = (size_t)j->geo.t, np = j->geo.np;
    size_t C = (size_t)p->c, twn = (size_t)((p->out[2] + j->geo.t - 1) / j->geo.t), nr = j->geo.nr;
    size_t lanes = j->geo.lanes, sw = j->sl.sw, tbp = j->sl.tbp, vs = j->sl.vs;
    size_t th0 = t0 / twn, th1 = (t0 + tb - 1) / twn;
    float tmp[36][2 * L]; /* a chunk's tiles, lane l at tmp[e][l]; room for a call's overrun */
    for (size_t c = c0; c < c1; c++) {
        ti__wino_strip(j, x + c * p->in_sp, th0, th1, strip);
        for (size_t jc = 0; jc < tbp; jc += lanes) { /* a chunk of V's columns */
            size_t nv = jc < tb ? TI__MIN(lanes, tb - jc) : 0;
            if (T == 2) { /* the chunk's tiles wherever they lie (none: zeros below) */
                const float *tl[L];
                if (nv > 0) {
                    for (size_t l = 0; l < L; l++) {
                        size_t t = t0 + jc + TI__MIN(l, nv - 1), th = t / twn, tw = t % twn;
                        tl[l] = strip + 2 * (th - th0) * sw + 2 * tw;
                    }
                    ti__wino23_in_lanes(tl, sw, &tmp[0][0], 2 * L);
                }
            } else {
                /* The transform's output: tmp, or V itself (a call's tiles straight into V, not
                 * through tmp and 36 copies of 8 floats a chunk: a third of this function's
                 * time in ResNet-18, perf). Each call writes all its lanes from its run's first
                 * tile: a run short of the chunk's end writes lanes the next run or the next
                 * chunk overwrites, so for V the chunk must be whole and, unless one run
                 * covers it, not the last of its sliver (past it lies the next channel's
                 * row, or the next sliver's). bench/conv.c, 1 thread, Xeon, builds
                 * alternating three times: 64 -> 64 @56 0.88-0.92 -> 0.76-0.82 ms, 256 ->
                 * 256 @14 0.81-0.84 -> 0.77-0.80, 16 -> 16 @56 0.131-0.134 -> 0.115-0.120,
                 * 128 -> 128 @28 within noise. */
                float *out = &tmp[0][0];
                size_t os = 2 * L, off = jc % nr, tw0 = (t0 + jc) % twn;
                int direct = j->geo.simd != NULL && nv == lanes && off + lanes <= nr &&
                             (tw0 + lanes <= twn || off + lanes < nr);
                if (direct) {
                    out = v + (jc / nr) * C * nr + c * nr + off;
                    os = vs;
                }
                for (size_t l = 0; l < nv;) { /* runs of tiles within one tile row */
                    size_t t = t0 + jc + l, th = t / twn, tw = t % twn;
                    size_t run = TI__MIN(nv - l, twn - tw);
                    const float *rows[6];
                    for (int i = 0; i < 6; i++)
                        rows[i] = strip + (4 * (th - th0) + (size_t)i) * sw + 4 * tw;
                    if (j->geo.simd != NULL) j->geo.simd->in(rows, out + l, os);
                    else ti__wino_in_lanes(rows, out + l, os);
                    l += run;
                }
                if (direct) continue;
            }
            for (size_t e = 0; e < np; e++)
                for (size_t l = nv; l < lanes; l++) tmp[e][l] = 0.0f;
            /* to V, in pieces that stay within one sliver of nr columns */
            for (size_t l = 0; l < lanes && jc + l < tbp;) {
                size_t col = jc + l, off = col % nr, n = TI__MIN(lanes - l, nr - off);
                n = TI__MIN(n, tbp - col);
                float *dst = v + (col / nr) * C * nr + c * nr + off;
                if (n == 8) /* a constant size: copied inline, not by a call */
                    for (size_t e = 0; e < np; e++)
                        memcpy(dst + e * vs, &tmp[e][l], 8 * sizeof(float));
                else if (n == 16)
                    for (size_t e = 0; e < np; e++)
                        memcpy(dst + e * vs, &tmp[e][l], 16 * sizeof(float));
                else
                    for (size_t e = 0; e < np; e++)
                        memcpy(dst + e * vs, &tmp[e][l], n * sizeof(float));
                l += n;
            }
        }
    }
}

/* The portable micro-kernel: c[r * ldc + q] (r < h, q < w) = sum over p < kc of
 * a[p * 4 + r] * b[p * 16 + q], plus c's value when acc. */
TI__PRIVATE void ti__wino_micro(size_t kc, const float *a, const float *b, float *c, size_t ldc,
                                size_t h, size_t w, int acc) {
    float s[4][16];
    memset(s, 0, sizeof s);
    for (size_t p = 0; p < kc; p++, a += 4, b += 16)
        for (int r = 0; r < 4; r++)
            for (int q = 0; q < 16; q++) s[r][q] += a[r] * b[q];
    for (size_t r = 0; r < h; r++)
        for (size_t q = 0; q < w; q++) c[r * ldc + q] = acc ? c[r * ldc + q] + s[r][q] : s[r][q];
}

/* The sliver of U that ti__wino_gemm's call after (pos, jr, pc, s) reads: its offset in U,
 * and in *lines the 64-byte lines to ask for (at most the call's kc; 0: none). It is the
 * next sliver of the range, of the next k block, or of the next position; none when the
 * next call reads U[pos] again for the next tiles (it is still in L2) or there is none. */
TI__PRIVATE size_t ti__wino_next(const ti__wino_geo *g, size_t M, size_t C, size_t tb,
                                 size_t s0, size_t s1, size_t pos, size_t jr, size_t pc,
                                 size_t s, size_t *lines) {
    size_t mr = g->mr, nms = (M + mr - 1) / mr, kc = TI__MIN(g->kc, C - pc), nkc, at;
    size_t up = pos * nms * mr * C;
    *lines = 0;
    if (s + 1 < s1) {
        nkc = kc;
        at = up + ti__wino_uoff(g, nms, C, s + 1, pc);
    } else if (pc + kc < C) {
        nkc = TI__MIN(g->kc, C - pc - kc);
        at = up + ti__wino_uoff(g, nms, C, s0, pc + kc);
    } else if (jr + g->nr >= tb && pos + 1 < g->np) {
        nkc = TI__MIN(g->kc, C);
        at = up + nms * mr * C + ti__wino_uoff(g, nms, C, s0, 0);
    } else {
        return 0;
    }
    *lines = TI__MIN(kc, (nkc * mr + 15) / 16);
    return at;
}

/* O[pos] = U[pos] V[pos] for the block's tb tiles, rows of U's slivers [s0, s1). Each
 * kernel call asks for the sliver of U the next one reads (ti__sgemm_kernel_fn's hint): U
 * comes from memory in a model (9.4 MB for a 256 -> 256 conv at 14 x 14, 16.8 MB at 512 ->
 * 512 @7 by F(2x2)), and each sliver is used by 16 tiles only. Twelve such 14 x 14 convs in
 * a row took 1.58-1.60 ms each without, 0.93-1.00 with; eight 7 x 7 ones 2.55-2.61 ->
 * 1.40-1.58 (Xeon, 1 thread, bench/results/ab-2026-12-01-xeon-s31.md). */
TI__PRIVATE void ti__wino_gemm(const ti__wino_job *j, size_t tb, size_t s0, size_t s1,
                               const float *v, float *o) {
    const ti__convp *p = j->p;
    const ti__wino_geo *g = &j->geo;
    size_t M = (size_t)p->m, C = (size_t)p->c, mr = g->mr, nr = g->nr, nms = (M + mr - 1) / mr;
    size_t ldo = j->sl.ldo, vs = j->sl.vs;
    for (size_t pos = 0; pos < g->np; pos++) {
        const float *up = j->u + pos * nms * mr * C, *vp = v + pos * vs;
        float *op = o + pos * j->sl.os;
        for (size_t jr = 0; jr < tb; jr += nr) {
            size_t w = TI__MIN(nr, tb - jr);
            const float *bs = vp + jr / nr * C * nr;
            for (size_t pc = 0; pc < C; pc += g->kc) {
                size_t kc = TI__MIN(g->kc, C - pc);
                for (size_t s = s0; s < s1; s++) {
                    size_t h = TI__MIN(mr, M - s * mr);
                    const float *a = up + ti__wino_uoff(g, nms, C, s, pc);
                    float *c = op + s * mr * ldo + jr;
                    size_t npf, nx = ti__wino_next(g, M, C, tb, s0, s1, pos, jr, pc, s, &npf);
                    if (g->isa != NULL)
                        g->isa->kernel(kc, a, mr, 0, bs + pc * nr, c, ldo, (int)h, (int)w, 1.0f,
                                       pc > 0 ? 1.0f : 0.0f, NULL, npf > 0 ? j->u + nx : NULL,
                                       npf);
                    else
                        ti__wino_micro(kc, a, bs + pc * nr, c, ldo, h, w, pc > 0);
                }
            }
        }
    }
}

/* Where output tile t goes in a plane: offset, rows hn and columns wn inside the map, and
 * put4: 1 when it starts 4 whole tiles in one tile row that the SIMD put stores as rows
 * of 16 floats (bi, its index in the block, a multiple of 4, and the block has 4 from it). */
typedef struct ti__wino_place {
    size_t off;
    int hn, wn, put4;
} ti__wino_place;

TI__PRIVATE void ti__wino_place_at(const ti__wino_job *j, size_t t, size_t bi, size_t tb,
                                   ti__wino_place *w) {
    int64_t T = j->geo.t, OH = j->p->out[1], OW = j->p->out[2];
    size_t twn = (size_t)((OW + T - 1) / T), th = t / twn, tw = t % twn;
    int64_t oh0 = (int64_t)th * T, ow0 = (int64_t)tw * T;
    w->off = (size_t)(oh0 * OW + ow0);
    w->hn = (int)TI__MIN(T, OH - oh0);
    w->wn = (int)TI__MIN(T, OW - ow0);
    w->put4 = T == 4 && bi % 4 == 0 && bi + 4 <= tb && tw + 4 <= twn && oh0 + 4 <= OH &&
              ow0 + 16 <= OW;
}

/* Output tiles [t0, t0 + tb) of image planes y, channels [m0, m1), from O. Where each tile
 * goes is worked out once for the block, not per channel: a 64-bit division a tile and
 * channel before (SqueezeNet's 3x3 convs at 13 x 13 3-4 % faster without it, per-node minima
 * on a Zen 4; the others within their noise). */
TI__PRIVATE void ti__wino_output(const ti__wino_job *j, const float *o, size_t t0, size_t tb,
                                 size_t m0, size_t m1, float *y) {
    enum { L = TI__WINO_LANES };
    const ti__convp *p = j->p;
    int64_t T = j->geo.t, OW = p->out[2];
    size_t ldo = j->sl.ldo, lanes = j->geo.lanes;
    /* ReLU in the transform, else after it; with a sum in Y, at the store after the sum */
    int relu = j->act == TI__ACT_RELU && !j->sum, relu_st = j->act == TI__ACT_RELU && j->sum;
    float z[16 * L];
    ti__wino_place tab[TI__WINO_MAX_TB];
    TI_ASSERT(tb <= TI__WINO_MAX_TB);
    for (size_t b = 0; b < tb; b++) ti__wino_place_at(j, t0 + b, b, tb, &tab[b]);
    for (size_t m = m0; m < m1; m++) {
        float bv = j->b != NULL ? j->b[m] : 0.0f, *ym = y + m * p->out_sp;
        for (size_t jc = 0; jc < tb; jc += lanes) {
            size_t nv = TI__MIN(lanes, tb - jc);
            const float *src = o + m * ldo + jc;
            if (T == 2) ti__wino23_out_lanes(src, j->sl.os, bv, relu, z);
            else if (j->geo.simd != NULL) j->geo.simd->out(src, j->sl.os, (int)nv, bv, relu, z);
            else ti__wino_out_lanes(src, j->sl.os, bv, relu, z);
            /* T * T rows of nv tiles, lanes apart */
            if (j->act != TI__ACT_NONE && !relu && !j->sum)
                ti__act_block(j->act, j->act_a, j->act_b, NULL, z, lanes, (size_t)(T * T), nv);
            /* SIMD F(4x4): groups of 4 tiles stored as rows of 16 floats (row4), other
             * tiles whole in the map (whole), both by one simd->put */
            float *whole[16], *row4[4] = {NULL, NULL, NULL, NULL};
            int nwhole = 0, nrow4 = 0;
            for (size_t l = 0; l < nv;) {
                const ti__wino_place *w = &tab[jc + l];
                float *yt = ym + w->off;
                if (j->geo.simd != NULL) {
                    if (w->put4) {
                        row4[l / 4] = yt, nrow4++;
                        for (size_t e = l; e < l + 4; e++) whole[e] = NULL;
                        l += 4;
                        continue;
                    }
                    /* any other whole tile: a row of 4 floats at a time */
                    whole[l] = w->hn == 4 && w->wn == 4 ? yt : NULL;
                    if (whole[l] != NULL) {
                        nwhole = (int)l + 1;
                        l++;
                        continue;
                    }
                }
                for (int i = 0; i < w->hn; i++)
                    for (int q = 0; q < w->wn; q++) {
                        float v = z[(i * T + q) * (int64_t)lanes + l];
                        if (j->sum) v += yt[i * OW + q];
                        yt[i * OW + q] = relu_st && v < 0.0f ? 0.0f : v;
                    }
                l++;
            }
            if (nwhole > 0 || nrow4 > 0)
                j->geo.simd->put(z, row4, whole, nwhole, (size_t)OW, j->sum, relu_st);
        }
    }
}

/* Block blk's image n and tiles [*t0, *t0 + *nt); 0 when the block is past its range. */
TI__PRIVATE int ti__wino_blk(const ti__wino_job *j, size_t blk, size_t *n, size_t *t0,
                             size_t *nt) {
    size_t T = ti__wino_tiles(j->p, j->geo.t), r = blk % j->ranges, r0, r1;
    size_t i = blk / j->ranges % j->bpr;
    *n = blk / j->ranges / j->bpr;
    ti__wino_range(T, j->ranges, j->geo.nr, r, &r0, &r1);
    *t0 = r0 + i * j->sl.tb;
    if (*t0 >= r1) return 0;
    *nt = TI__MIN(j->sl.tb, r1 - *t0);
    return 1;
}

/* Slot s of the scratch: V, then O, then the strip. */
TI__PRIVATE float *ti__wino_slot_at(const ti__wino_job *j, size_t s) {
    return j->scratch + s * (j->sl.v + j->sl.o + j->sl.strip);
}

/* Output channel part q of the block at (n, t0, nt) from its V: the GEMM into O, then the
 * output transform to Y. */
TI__PRIVATE void ti__wino_mul(const ti__wino_job *j, size_t n, size_t t0, size_t nt, size_t q,
                              const float *v, float *o) {
    size_t M = (size_t)j->p->m, mr = j->geo.mr, nms = (M + mr - 1) / mr;
    size_t s0 = nms * q / j->mparts, s1 = nms * (q + 1) / j->mparts; /* U's slivers */
    ti__wino_gemm(j, nt, s0, s1, v, o);
    ti__wino_output(j, o, t0, nt, s0 * mr, TI__MIN(M, s1 * mr), j->y + n * M * j->p->out_sp);
}
/* Fewer blocks than threads, every thread with a slot (ti__conv_wino_run): each block's
 * input transform is shared, split by input channels (ti__wino_shared_in, V in slot blk),
 * then each (block, output channel part) item multiplies and transforms back
 * (ti__wino_shared_mul, O in the thread's slot). Each thread transformed the whole block
 * before: on 2 threads that was a fifth of ResNet-18's 256 -> 256 convs at 14 x 14. */
TI__PRIVATE void ti__wino_shared_in(void *ctx, int part, size_t begin, size_t end) {
    const ti__wino_job *j = (const ti__wino_job *)ctx;
    size_t C = (size_t)j->p->c, n, t0, nt;
    float *strip = ti__wino_slot_at(j, (size_t)part) + j->sl.v + j->sl.o;
    for (size_t item = begin; item < end; item++) {
        size_t blk = item / j->cparts, q = item % j->cparts;
        if (!ti__wino_blk(j, blk, &n, &t0, &nt)) continue;
        ti__wino_input(j, j->x + n * C * j->p->in_sp, t0, nt, C * q / j->cparts,
                       C * (q + 1) / j->cparts, ti__wino_slot_at(j, blk), strip);
    }
}
TI__PRIVATE void ti__wino_shared_mul(void *ctx, int part, size_t begin, size_t end) {
    const ti__wino_job *j = (const ti__wino_job *)ctx;
    size_t n, t0, nt;
    float *o = ti__wino_slot_at(j, (size_t)part) + j->sl.v;
    for (size_t item = begin; item < end; item++) {
        size_t blk = item / j->mparts;
        if (ti__wino_blk(j, blk, &n, &t0, &nt))
            ti__wino_mul(j, n, t0, nt, item % j->mparts, ti__wino_slot_at(j, blk), o);
    }
}

/* Takes the next item for slot s: the front of its own sequence, else the back of another
 * slot's (ti__range_take); returns 0 when none is left. */
TI__PRIVATE int ti__wino_take(ti__wino_job *j, size_t s, size_t *item) {
    size_t o, k;
    if (!ti__range_take(&j->left[0], sizeof j->left[0], j->slots, s, &o, &k)) return 0;
    *item = o + k * j->slots;
    return 1;
}

/* Runs item on slot s's scratch (v, o, strip); *have: the block whose V is in the slot. */
TI__PRIVATE void ti__wino_item(const ti__wino_job *j, size_t item, float *v, size_t *have) {
    size_t n, t0, nt, blk = item / j->mparts, C = (size_t)j->p->c;
    float *o = v + j->sl.v, *strip = o + j->sl.o;
    if (!ti__wino_blk(j, blk, &n, &t0, &nt)) return;
    if (blk != *have) ti__wino_input(j, j->x + n * C * j->p->in_sp, t0, nt, 0, C, v, strip);
    *have = blk;
    ti__wino_mul(j, n, t0, nt, item % j->mparts, v, o);
}

/* Slots [begin, end), each its own items only (more than 32767 a slot). */
TI__PRIVATE void ti__wino_slots_static(void *ctx, size_t begin, size_t end) {
    const ti__wino_job *j = (const ti__wino_job *)ctx;
    for (size_t s = begin; s < end; s++) {
        size_t have = (size_t)-1;
        for (size_t item = s; item < j->nitems; item += j->slots)
            ti__wino_item(j, item, ti__wino_slot_at(j, s), &have);
    }
}

/* Slots [begin, end): slot s takes items s, s + slots, ... with its own scratch, then those
 * other slots have left, from their ends. Items go channel part fastest, then range, so
 * that with one range per thread each thread keeps to its own range; the stealing evens
 * out a core that runs slower (a core busy elsewhere, big.LITTLE): ResNet-18's and
 * SqueezeNet's Winograd convs on 2 threads, the caller waited 2.3 % of a run for the
 * worker's last items (bench/results/ab-2026-12-05-s53.md). Any slot computes an item to
 * the same bits. */
TI__PRIVATE void ti__wino_slots(void *ctx, size_t begin, size_t end) {
    ti__wino_job *j = (ti__wino_job *)ctx;
    for (size_t s = begin; s < end; s++) {
        size_t have = (size_t)-1, item;
        while (ti__wino_take(j, s, &item)) ti__wino_item(j, item, ti__wino_slot_at(j, s), &have);
    }
}

/* Runs the conv by Winograd when the plan packed its weights for it, for the ISA in use; 0
 * when it did not (the caller then takes another path). */
TI__PRIVATE int ti__conv_wino_run(ti__kctx *k, const ti__convp *p) {
    const ti__node *nd = k->node;
    ti__wino_job j;
    memset(&j, 0, sizeof j);
    int t = ti__wino_kind_tile(nd->packed_kind);
    if (t == 0) return 0;
    ti__wino_geometry(&j.geo, t);
    if (nd->packed == NULL || nd->packed_arg != ti__wino_arg(&j.geo) ||
        nd->packed_bytes != ti__wino_u_bytes(p, t) || !ti__conv_wino_fits(p))
        return 0;
    size_t threads = (size_t)ti__threadpool_size(k->tp);
    size_t slot_bytes = ti__wino_slot_floats(p, t, threads) * sizeof(float);
    size_t slots = TI__MIN(threads, k->scratch_bytes / slot_bytes);
    if (k->scratch == NULL || slots == 0) return 0;
    j.p = p;
    ti__wino_slot_size(p, t, threads, &j.sl);
    j.x = (const float *)k->in[0]->data;
    j.u = (const float *)nd->packed;
    j.b = k->n_in > 2 && k->in[2] != NULL ? (const float *)k->in[2]->data : NULL;
    j.y = (float *)k->out[0]->data;
    j.scratch = (float *)k->scratch;
    size_t T = ti__wino_tiles(p, t);
    j.ranges = ti__wino_ranges(T, threads, j.geo.nr);
    j.bpr = (ti__wino_longest(T, j.ranges, j.geo.nr) + j.sl.tb - 1) / j.sl.tb;
    size_t nblk = j.bpr * j.ranges * (size_t)p->n;
    /* fewer blocks than threads: each block's output channels in parts, one per thread
     * (each of them transforms the block's input) */
    size_t nms = ((size_t)p->m + j.geo.mr - 1) / j.geo.mr;
    j.mparts = nblk < slots ? TI__MIN((slots + nblk - 1) / nblk, nms) : 1;
    j.nitems = nblk * j.mparts;
    j.slots = TI__MIN(slots, j.nitems);
    j.act = nd->act;
    j.act_a = nd->act_a;
    j.act_b = nd->act_b;
    j.sum = ti__conv_sum(k) != NULL; /* Y prefilled by ti__conv_run_path */
    if (j.mparts > 1 && slots == threads) {
        j.cparts = TI__MIN((size_t)p->c, (threads + nblk - 1) / nblk * 4);
        ti__parallel_for_part(k->tp, nblk * j.cparts, 1, ti__wino_shared_in, &j);
        ti__parallel_for_part(k->tp, j.nitems, 1, ti__wino_shared_mul, &j);
        return 1;
    }
    size_t per = (j.nitems + j.slots - 1) / j.slots; /* items of slot 0, the most */
    if (per > 0x7fff) {
        ti__parallel_for(k->tp, j.slots, 1, ti__wino_slots_static, &j);
        return 1;
    }
    for (size_t sl = 0; sl < j.slots; sl++)
        ti__atomic_store(&j.left[sl], (int)((j.nitems - sl + j.slots - 1) / j.slots));
    ti__parallel_for(k->tp, j.slots, 1, ti__wino_slots, &j);
    return 1;
}

/* Planning: packs the weights of a Conv that will run by Winograd into pool memory and
 * records them on the plan's node. Anything it cannot use is left unpacked (not an error):
 * the kernel then takes im2col. Returns TI_ERR_OUT_OF_MEMORY only. */
/* A conv that runs as a GEMM on its weights (pointwise or im2col paths) whose weight rows
 * (K floats each) fall into too few L1 sets: the GEMM would repack the weights on every
 * call, one cache-missing load per element (a third of ResNet-18's time, perf). Stored
 * transposed once instead, with a row stride that avoids the conflicts, the GEMM reads
 * them in place. Costs the weights' size again in the plan. */
TI__PRIVATE ti_status ti__conv_prepack_atrans(ti__node *node, ti__pool *pool, const ti__convp *p,
                                              const float *w) {
    size_t mg = (size_t)p->mg, kdim = (size_t)p->cg * p->kprod, groups = (size_t)p->group;
    if (ti__conv_dw_ok(p) || p->mg < 4 || kdim == 0 || !ti__sgemm_set_conflicts(kdim))
        return TI_OK;
    size_t ld = mg;
    for (int tries = 0; tries < 16 && ti__sgemm_set_conflicts(ld); tries++) ld += 16;
    size_t bytes = groups * kdim * ld * sizeof(float);
    float *t = (float *)ti__pool_alloc_raw(pool, bytes); /* every float written below */
    if (t == NULL) return TI_ERR_OUT_OF_MEMORY;
    for (size_t g = 0; g < groups; g++) {
        const float *wg = w + g * mg * kdim;
        float *tg = t + g * kdim * ld;
        for (size_t q = 0; q < kdim; q++)
            for (size_t r = 0; r < ld; r++) tg[q * ld + r] = r < mg ? wg[r * kdim + q] : 0.0f;
    }
    node->packed_kind = TI__PACK_ATRANS;
    node->packed = t;
    node->packed_bytes = bytes;
    return TI_OK;
}

/* Records weights packed at planning on the plan's node (ti__node.packed_*). */
TI__PRIVATE void ti__conv_set_packed(ti__node *node, int kind, const void *data, size_t bytes,
                                     int arg) {
    node->packed_kind = kind;
    node->packed = data;
    node->packed_bytes = bytes;
    node->packed_arg = arg;
}

/* Products per output from which the weights are packed as A panels (ti__sgemm_isa's
 * apanel_min_k, which the ISAs' tables set from these): with fewer, A's rows
 * lie within a few lines anyway, and the panel lost 3-5 % (Zen 3, AVX2, 1 thread, best of
 * 1200 runs: 16 -> 96 at 112 x 112 0.717 -> 0.754 ms, 24 -> 144 at 56 x 56 0.344 -> 0.352),
 * while 512 -> 1000 at 13 x 13 went 2.54-2.66 -> 2.19-2.26 and 96 -> 576 at 14 x 14 0.297-
 * 0.303 -> 0.283-0.285. */
#define TI__CONV_APANEL_MIN_K 64
/* With AVX-512's kernels (14-row slivers) from 16: the panel won there. Xeon (SPR class),
 * per-node minima in the models, 4 x 40 runs alternating (bench/ab.py), 64 -> 16, 1 thread:
 * MobileNetV2's 16 -> 96 at 112 x 112 0.340 -> 0.306 ms, its 24 -> 144 at 56 x 56 0.154 /
 * 0.156 -> 0.140 / 0.143, 32 -> 192 at 28 x 28 0.065 -> 0.056 (x3), the model's sum 0.973x;
 * EfficientNet-B0's 16 -> 96 0.683 -> 0.636, sum 0.982x; on 2 threads MobileNetV2's 16 ->
 * 96 0.197 -> 0.178. Alone (bench/conv.c): 40 -> 240 at 28 x 28 0.099-0.101 -> 0.085-0.096. */
#define TI__CONV_APANEL_MIN_K_512 16

/* Not for at most two slivers of rows whose second would have 1 to TI__CONV_APANEL_THIN
 * rows: the panel's slivers are fixed (mr rows, then the rest), and a kernel call of 1 to 3
 * rows has 2 to 6 accumulators, too few to cover the FMA's latency on two ports, where the
 * GEMM without a panel splits the rows evenly (16 as 8 + 8). SqueezeNet's 128 -> 16 at 55 x
 * 55 (AVX-512: 14 + 2 rows), per-node minima of 4 x 60 runs alternating (bench/ab.py), 1
 * thread, Xeon: 0.152 -> 0.123 ms; alone (bench/conv.c) 0.100-0.106 -> 0.096-0.099, its 64 ->
 * 16 0.048-0.050 -> 0.047. With a second sliver of 4 rows and more the panel stays: 96 -> 24
 * at 56 x 56 (14 + 10) took 0.094-0.099 ms with it, 0.103-0.105 split as 12 + 12. */
#define TI__CONV_APANEL_THIN 3

/* 1 when the planner packs the weights as A panels of mr rows for the plain GEMM (a GEMM
 * path that is not the transposed one: not depthwise, not few-channel, enough products);
 * bench/conv.c asks too, to time the plain GEMM as the planner runs it. */
TI__PRIVATE int ti__conv_apanel_ok(const ti__convp *p, int mr) {
    if (mr <= 0 || p->mg < mr) return 0;
    int64_t rest = p->mg % mr;
    if (p->mg <= 2 * (int64_t)mr && rest > 0 && rest <= TI__CONV_APANEL_THIN) return 0;
    const ti__sgemm_isa *gi = ti__sgemm_pick_isa();
    int64_t kmin = gi != NULL && gi->mr == mr ? gi->apanel_min_k : TI__CONV_APANEL_MIN_K;
    return (int64_t)p->cg * (int64_t)p->kprod >= kmin && !ti__conv_dw_ok(p) &&
           (ti__conv_pointwise(p) || !ti__conv_fewc_ok(p));
}

/* Each group's W as the SIMD GEMM's A panel, for the plain GEMM of the 1x1 and im2col paths:
 * the kernel reads a sliver of mr rows as one run of K x mr floats, not mr rows a row
 * stride apart, and no weight rows conflict in L1 (what ti__conv_prepack_atrans is for).
 * Costs the weights' size again in the plan. */
TI__PRIVATE ti_status ti__conv_prepack_apanel(ti__node *node, ti__pool *pool, const ti__convp *p,
                                              const float *w, int mr) {
    size_t mg = (size_t)p->mg, kdim = (size_t)p->cg * p->kprod, groups = (size_t)p->group;
    size_t per = ti__sgemm_apanel_floats(mg, kdim, (size_t)mr);
    /* on cache lines of their own (the pool aligns to 16 bytes): every thread of the pool
     * reads them for the whole conv, so no line of theirs is one a thread writes (a plan's
     * other allocations). Not measured to matter: a 24 -> 144 conv at 56 x 56 on 2 threads
     * ran 0.18-0.20 or 0.27-0.30 ms by process with and without panels. */
    char *raw = (char *)ti__pool_alloc_raw(pool, groups * per * sizeof(float) + 128);
    if (raw == NULL) return TI_ERR_OUT_OF_MEMORY;
    float *panels = (float *)(raw + (64 - (uintptr_t)raw % 64)); /* all written: zero past M */
    for (size_t g = 0; g < groups; g++)
        ti__sgemm_pack_apanel(0, mg, kdim, w + g * mg * kdim, kdim, (size_t)mr, panels + g * per);
    ti__conv_set_packed(node, TI__PACK_APANEL, panels, groups * per * sizeof(float), mr);
    return TI_OK;
}

/* Each group's W^T as the SIMD GEMM's B panel, for the transposed GEMM (ti__conv_ct_ok). */
TI__PRIVATE ti_status ti__conv_prepack_bpanel(ti__node *node, ti__pool *pool, const ti__convp *p,
                                              const float *w) {
    size_t mg = (size_t)p->mg, kdim = (size_t)p->cg * p->kprod, groups = (size_t)p->group;
    int nr = ti__sgemm_panel_nr();
    size_t per = ti__sgemm_bpanel_floats(kdim, mg, (size_t)nr);
    float *panels = (float *)ti__pool_alloc_raw(pool, groups * per * sizeof(float));
    if (panels == NULL) return TI_ERR_OUT_OF_MEMORY;
    for (size_t g = 0; g < groups; g++) /* W_g is mg x kdim: W^T is op(B) with transB */
        ti__sgemm_pack_bpanel(1, kdim, mg, w + g * mg * kdim, kdim, (size_t)nr, panels + g * per);
    ti__conv_set_packed(node, TI__PACK_BPANEL, panels, groups * per * sizeof(float), nr);
    return TI_OK;
}

TI__PRIVATE ti_status ti__conv_prepack(ti__kctx *k, ti__node *node, ti__pool *pool) {
    ti__convp p;
    if (k->n_in < 2 || k->in[0] == NULL || k->in[1] == NULL || k->in[1]->data == NULL ||
        k->in[0]->dtype != TI_DTYPE_F32 || k->in[1]->dtype != TI_DTYPE_F32)
        return TI_OK;
    if (k->n_in > 3 && k->in[3] != NULL) return TI_OK; /* a gate scales W at each run */
    ti_error *saved = k->err, tmp;
    k->err = &tmp;
    ti_status e = ti__conv_params(k, 0, &p);
    k->err = saved;
    if (e != TI_OK) return TI_OK;
    const float *w = (const float *)k->in[1]->data;
    /* a GEMM path: B panels for the transposed GEMM, A panels for the plain one (the paths
     * ti__conv_path takes to a GEMM: not depthwise, few-channel or too few channels), or
     * A^T without SIMD kernels */
    int t = ti__conv_wino_ok(&p, ti__threadpool_size(k->tp));
    if (t == 0) {
        if (ti__conv_fewc_ok(&p)) { /* the path ti__conv_path takes next */
            size_t bytes = ti__conv_fewc_wfloats(&p) * sizeof(float);
            float *wt = (float *)ti__pool_alloc_raw(pool, bytes);
            if (wt == NULL) return TI_ERR_OUT_OF_MEMORY;
            ti__conv_fewc_pack(&p, w, wt);
            ti__conv_set_packed(node, TI__PACK_FEWC, wt, bytes, 16);
            return TI_OK;
        }
        if (ti__conv_ct_ok(&p) && ti__sgemm_panel_nr() > 0)
            return ti__conv_prepack_bpanel(node, pool, &p, w);
        int mr = ti__sgemm_panel_mr();
        if (ti__conv_apanel_ok(&p, mr)) return ti__conv_prepack_apanel(node, pool, &p, w, mr);
        return ti__conv_prepack_atrans(node, pool, &p, w);
    }
    size_t bytes = ti__wino_u_bytes(&p, t);
    float *u = (float *)ti__pool_alloc_raw(pool, bytes); /* ti__wino_pack zeroes it first */
    if (u == NULL) return TI_ERR_OUT_OF_MEMORY;
    node->packed_arg = ti__wino_pack(&p, t, w, u);
    node->packed_kind = ti__wino_kind(t);
    node->packed = u;
    node->packed_bytes = bytes;
    return TI_OK;
}
