/* The integer GEMM and output pipeline shared by every 8-bit matrix kernel of both formats:
 * TFLite CONV_2D / FULLY_CONNECTED (cpu/tfl_accum.c) and ONNX QLinearConv, QLinearMatMul,
 * ConvInteger, MatMulInteger (cpu/quant.c, cpu/conv.c, cpu/gemm.c). Accumulators are
 * int32 sums (modulo 2^32) of zero-point-corrected products; the requantization turns them
 * into outputs by the mode the caller picks: TFLite's fixed-point multiplier, its double
 * rescale, ONNX's float multiplier rounded half to even, or the raw int32. Relies on
 * qmath.c and the SIMD kernels (cpu/x86/qgemm_*.c, cpu/arm/qgemm_*.c, declared in
 * internal.h). Must not allocate at run time: constant weights are packed once at planning
 * into the plan pool (ti__qpack, TI__PACK_QGEMM on the node), others per run into the
 * caller's scratch; panels live on the stack. */

/* Channels requantized at once (stack arrays of this many accumulators). */
#define TI__QG_CHUNK 64

/* TFLite MultiplyByQuantizedMultiplier for int64 accumulators (16x8 kernels, double
 * rounding build): the multiplier is first rounded to 16 bits, then one rounding shift.
 * TFLite's contract is |x| < 2^47 and shift < 8; values outside are clamped, not UB. */
TI__PRIVATE int32_t ti__qg_mul64(int64_t x, int32_t multiplier, int shift) {
    const int64_t lim = (int64_t)1 << 47;
    if (x >= lim) x = lim - 1;
    if (x < -lim) x = -lim;
    if (shift > 14) shift = 14;
    int64_t reduced = multiplier < 0x7FFF0000 ? (multiplier + (1 << 15)) >> 16 : 0x7FFF;
    int total = 15 - shift;
    int64_t r = x * reduced + ((int64_t)1 << (total - 1));
    r = r >= 0 ? r >> total : -((-r - 1) >> total) - 1; /* arithmetic shift, portably */
    return (int32_t)(r > INT32_MAX ? INT32_MAX : (r < INT32_MIN ? INT32_MIN : r));
}

/* How accumulators become outputs. */
enum {
    TI__QRQ_32 = 0, /* TFLite: int32 accumulator (wrapping modulo 2^32), MultiplyByQuantizedMultiplier */
    TI__QRQ_64,     /* TFLite int16 kernels with int64 bias: int64 accumulator and its multiply */
    TI__QRQ_DOUBLE, /* TFLite FULLY_CONNECTED: round(acc * real) in double, half away from
                       zero, as the reference FullyConnected kernels (ai-edge-litert 2.x) do */
    TI__QRQ_DOUBLE64, /* the same with the int64 accumulator of int16 input and int64 bias */
    TI__QRQ_ONNX,   /* ONNX QLinear*: acc * real + zero point in double, rounded half to even
                       (nearbyint), saturated; the accumulator is not wrapped */
    TI__QRQ_RAW     /* ConvInteger / MatMulInteger: the int32 accumulator itself */
};

/* Requantization of integer accumulators to the output. */
typedef struct ti__qrq {
    const int32_t *mult, *shift; /* TI__QRQ_32 / _64: per output channel, in scratch */
    const double *real;          /* TI__QRQ_DOUBLE* / _ONNX: per channel multiplier, in scratch */
    int32_t yo, lo, hi;          /* output zero point, clamp range */
    int mode;
    /* checked 1: every channel checked at planning (ti__qpack's rq_checked): shifts_all is
     * ti__qrq_shifts of them, or -1 where a multiplier is INT32_MIN (the byte kernels
     * refuse it) */
    int checked, shifts_all;
} ti__qrq;

TI__PRIVATE int32_t ti__qrq_one(const ti__qrq *r, int64_t acc, size_t c) {
    int64_t v;
    if (r->mode == TI__QRQ_RAW) return (int32_t)(uint32_t)(uint64_t)acc;
    if (r->mode == TI__QRQ_ONNX) {
        double d = (double)acc * r->real[c] + (double)r->yo;
        if (d != d) return r->lo; /* NaN (a zero scale): numpy's cast, then clip */
        d = nearbyint(d);
        return d <= (double)r->lo ? r->lo : (d >= (double)r->hi ? r->hi : (int32_t)d);
    }
    if (r->mode == TI__QRQ_64) {
        v = ti__qg_mul64(acc, r->mult[c], (int)r->shift[c]);
    } else if (r->mode == TI__QRQ_DOUBLE || r->mode == TI__QRQ_DOUBLE64) {
        if (r->mode == TI__QRQ_DOUBLE) acc = (int32_t)(uint32_t)(uint64_t)acc;
        double d = round((double)acc * r->real[c]);
        v = d > INT32_MAX ? INT32_MAX : (d < INT32_MIN ? INT32_MIN : (int64_t)d);
    } else {
        v = ti__q_mul((int32_t)(uint32_t)(uint64_t)acc, r->mult[c], (int)r->shift[c]);
    }
    v += r->yo;
    return (int32_t)(v < r->lo ? r->lo : (v > r->hi ? r->hi : v));
}

TI__PRIVATE void ti__qg_store(void *y, ti_dtype t, size_t i, int32_t v) {
    switch (t) {
    case TI_DTYPE_U8: ((uint8_t *)y)[i] = (uint8_t)v; break;
    case TI_DTYPE_I8: ((int8_t *)y)[i] = (int8_t)v; break;
    case TI_DTYPE_I16: ((int16_t *)y)[i] = (int16_t)v; break;
    default: ((int32_t *)y)[i] = v; break;
    }
}

/* Stores v[0..m) to y[o + i * ys] of dtype t (the switch outside the loops). */
TI__PRIVATE void ti__qg_store_n(void *y, ti_dtype t, size_t o, size_t ys, const int32_t *v, size_t m) {
    switch (t) {
    case TI_DTYPE_U8: for (size_t i = 0; i < m; i++) ((uint8_t *)y)[o + i * ys] = (uint8_t)v[i]; break;
    case TI_DTYPE_I8: for (size_t i = 0; i < m; i++) ((int8_t *)y)[o + i * ys] = (int8_t)v[i]; break;
    case TI_DTYPE_I16: for (size_t i = 0; i < m; i++) ((int16_t *)y)[o + i * ys] = (int16_t)v[i]; break;
    default: for (size_t i = 0; i < m; i++) ((int32_t *)y)[o + i * ys] = v[i]; break;
    }
}

/* The SIMD TI__QRQ_32 of the ISA in effect (ti__qrq32_avx2's contract: whole groups of 4
 * or 8 done, the count returned), or NULL for the scalar loop. */
typedef size_t (*ti__qrq32_fn)(const int32_t *x, const int32_t *mult, const int32_t *shift,
                               size_t n, int32_t yo, int32_t lo, int32_t hi, int32_t *out);
TI__PRIVATE ti__qrq32_fn ti__qrq32_simd(void) {
#if defined(TI__X86_SIMD)
    if (ti__cpu_isa() >= TI__ISA_AVX2) return ti__qrq32_avx2;
#elif defined(TI__ARM_NEON)
    if (ti__cpu_isa() >= TI__ISA_NEON) return ti__qrq32_neon;
#endif
    return NULL;
}

/* acc[0..n) of channels c0.. (bias included) to outputs y[yi + i * ys] of dtype t: the
 * common TFLite int32 case in one tight loop, the store's dtype switch outside it. */
TI__PRIVATE void ti__qrq_n(const ti__qrq *r, const int64_t *acc, size_t c0, size_t n, void *y,
                           ti_dtype t, size_t yi, size_t ys) {
    int32_t v[TI__QG_CHUNK];
    for (size_t i0 = 0; i0 < n; i0 += TI__QG_CHUNK) {
        size_t m = TI__MIN((size_t)TI__QG_CHUNK, n - i0);
        if (r->mode == TI__QRQ_32) {
            size_t done = 0;
            ti__qrq32_fn simd = r->lo <= r->hi ? ti__qrq32_simd() : NULL;
            if (simd != NULL) {
                int32_t x[TI__QG_CHUNK]; /* the int32 accumulators (modulo 2^32) */
                for (size_t i = 0; i < m; i++) x[i] = (int32_t)(uint32_t)(uint64_t)acc[i0 + i];
                done = simd(x, r->mult + c0 + i0, r->shift + c0 + i0, m, r->yo, r->lo, r->hi, v);
            }
            /* ti__q_mul written out so that it inlines: the hot loop of every 8-bit kernel */
            for (size_t i = done; i < m; i++) {
                size_t c = c0 + i0 + i;
                int sh = (int)r->shift[c], e = sh > 0 ? 0 : -sh;
                int64_t x = (int32_t)(uint32_t)(uint64_t)acc[i0 + i];
                if (sh > 0) {
                    x *= (int64_t)1 << sh;
                    x = x > INT32_MAX ? INT32_MAX : (x < INT32_MIN ? INT32_MIN : x);
                }
                int64_t ab = x * r->mult[c]; /* multiplier >= 0: no INT32_MIN * INT32_MIN */
                int32_t q = (int32_t)((ab + (ab >= 0 ? (1LL << 30) : 1 - (1LL << 30))) / (1LL << 31));
                if (e > 0) {
                    int32_t mask = (int32_t)((1LL << e) - 1), rem = q & mask;
                    q = (q >> e) + (rem > (mask >> 1) + (q < 0 ? 1 : 0) ? 1 : 0);
                }
                int64_t u = (int64_t)q + r->yo;
                v[i] = (int32_t)(u < r->lo ? r->lo : (u > r->hi ? r->hi : u));
            }
        } else {
            for (size_t i = 0; i < m; i++) v[i] = ti__qrq_one(r, acc[i0 + i], c0 + i0 + i);
        }
        ti__qg_store_n(y, t, yi + i0 * ys, ys, v, m);
    }
}

/* The common TFLite case without int64: uint32 sums acc[0..n) of channels c0.. plus an
 * int32 bias (or none), modulo 2^32, requantized in SIMD (TI__QRQ_32: AVX2 or NEON) to y as
 * ti__qrq_n would. Returns 0, doing nothing, where that does not apply (other modes or bias
 * dtypes, no SIMD): the caller then takes the int64 path. */
TI__PRIVATE int ti__qrq_n_u32(const ti__qrq *r, const ti_tensor *bias, const uint32_t *acc,
                              size_t c0, size_t n, void *y, ti_dtype t, size_t yi, size_t ys) {
#if defined(TI__X86_SIMD) || defined(TI__ARM_NEON)
    ti__qrq32_fn simd = ti__qrq32_simd();
    if (r->mode != TI__QRQ_32 || r->lo > r->hi || (bias != NULL && bias->dtype != TI_DTYPE_I32) ||
        simd == NULL)
        return 0;
    const int32_t *bv = bias != NULL ? (const int32_t *)bias->data + c0 : NULL;
    int32_t x[TI__QG_CHUNK], v[TI__QG_CHUNK];
    for (size_t i0 = 0; i0 < n; i0 += TI__QG_CHUNK) {
        size_t m = TI__MIN((size_t)TI__QG_CHUNK, n - i0);
        if (bv != NULL)
            for (size_t i = 0; i < m; i++) x[i] = (int32_t)(acc[i0 + i] + (uint32_t)bv[i0 + i]);
        else
            for (size_t i = 0; i < m; i++) x[i] = (int32_t)acc[i0 + i];
        size_t done = simd(x, r->mult + c0 + i0, r->shift + c0 + i0, m, r->yo, r->lo, r->hi, v);
        for (size_t i = done; i < m; i++) v[i] = ti__qrq_one(r, x[i], c0 + i0 + i);
        ti__qg_store_n(y, t, yi + i0 * ys, ys, v, m);
    }
    return 1;
#else
    (void)r, (void)bias, (void)acc, (void)c0, (void)n, (void)y, (void)t, (void)yi, (void)ys;
    return 0;
#endif
}

/* The SIMD requantizations' check of shifts[0..n): -1 when one is outside [-31, 31] (the
 * scalar code then takes them), else whether any is positive (a left shift). */
TI__PRIVATE int ti__qrq_shifts(const int32_t *shift, size_t n) {
    int pos = 0;
    for (size_t i = 0; i < n; i++) {
        if (shift[i] > 31 || shift[i] < -31) return -1;
        pos |= shift[i] > 0;
    }
    return pos;
}

/* Whether the SIMD requantizations to bytes take r: TI__QRQ_32, lo <= hi, and lo - yo and
 * hi - yo inside int32 (the clamp is done before adding yo; a zero point far outside the
 * output's range, which only a hostile model has, goes to the scalar code). */
TI__PRIVATE int ti__qrq_bytes_ok(const ti__qrq *r) {
    return r->mode == TI__QRQ_32 && r->lo <= r->hi && (int64_t)r->lo - r->yo <= INT32_MAX &&
           (int64_t)r->hi - r->yo >= INT32_MIN;
}

/* Adds bias channels c0..c0+n (int32 or int64) to acc. */
TI__PRIVATE void ti__qg_add_bias(const ti_tensor *b, size_t c0, size_t n, int64_t *acc) {
    if (b == NULL) return;
    if (b->dtype == TI_DTYPE_I64) {
        const int64_t *bv = (const int64_t *)b->data + c0;
        for (size_t i = 0; i < n; i++) acc[i] += bv[i];
    } else {
        const int32_t *bv = (const int32_t *)b->data + c0;
        for (size_t i = 0; i < n; i++) acc[i] += bv[i];
    }
}

/* ---- the 8-bit GEMM ------------------------------------------------------------------- */
/* acc[r][c] = sum over k of A'[r][k] * B'[k][c], A' and B' the 8-bit operands with their
 * zero points subtracted, widened to int16 (|v| <= 255 for any uint8 / int8 mix), so a
 * tap of a convolution outside its input is a 0: the same sum as loops that skip it. B is
 * packed once (at planning, or per run into scratch) in blocks of TI__QG_NR columns, each
 * holding pairs of depths: (k, c) at [(k / 2) * 2 NR + 2 c + k % 2], the depth rounded up to
 * even with 0s (ti__qg_depth2): AVX2's VPMADDWD and NEON's LD2 take a pair of depths of 8
 * columns in one load, the portable kernel indexes it. TI__QG_MR
 * rows of A are gathered at a time (by the caller's function, which knows the layout:
 * im2col of NHWC or NCHW, plain rows) into a stack panel of TI__QG_KC depths. The
 * accumulators are uint32: the int32 sum modulo 2^32 without signed overflow. */
#define TI__QG_MR 4
#define TI__QG_NR 16
#define TI__QG_KC 256 /* even: every k block starts on a pair of packed B */
#define TI__QG_OCC 512 /* columns accumulated at once: MR x OCC uint32 on the stack */

/* Writes depths [k0, k1) of A' row `row` to dst[(k - k0) * TI__QG_MR]. */
typedef void (*ti__qg_gather_fn)(const void *ctx, size_t row, size_t k0, size_t k1, int16_t *dst);
/* The same depths to dst[k - k0], contiguous: where the caller has one, the SIMD drivers
 * gather the block's rows this way and interleave them into the panel at once. It may
 * write up to TI__QG_GROW_PAST elements past k1 - k0 (whole vectors), not read back. */
#define TI__QG_GROW_PAST 16
typedef void (*ti__qg_grow_fn)(const void *ctx, size_t row, size_t k0, size_t k1, int16_t *dst);
/* The byte path's gather: depths [k0, k1) of rows p0 .. p0 + np - 1 as unsigned bytes a_u,
 * row r's to dst[r * ld + k - k0] (a tap outside the input: the zero point's byte, so that A'
 * is 0), adding each row's sum to sums[r] (modulo 2^32; sums NULL: no sums). A block at
 * once: a conv's gather steps from pixel to pixel instead of dividing its index for each. */
typedef void (*ti__qg_gather8_fn)(const void *ctx, size_t p0, size_t np, size_t k0, size_t k1,
                                  uint8_t *dst, size_t ld, uint32_t *sums);

typedef struct ti__qgemm {
    size_t rows, depth, cols;
    ti__qg_gather_fn gather; /* A: rows, zero points applied */
    ti__qg_grow_fn gather_row; /* or NULL: A's rows contiguously (the same values) */
    const unsigned char *a8; /* or NULL: A's rows as they lie in memory, 8-bit values (uint8
                                when a8_u8, else int8) row p at a8 + p * a8_rs, A' = value +
                                a8_off; AVX2 widens four at a time into its panel */
    size_t a8_rs;
    int32_t a8_off;
    int a8_u8;
    const void *gctx;
    const void *b;           /* B: element (k, c) at b[c * b_cs + k * b_ks], uint8 or int8 */
    int b_u8;
    size_t b_cs, b_ks;
    int32_t b_off;           /* added to every element of B (TFLite: -zero point) */
    const void *b_zp;        /* or NULL: zero points per channel (dtype of B), subtracted */
    size_t b_zp_n;           /* 1 (per tensor) or the channel count */
    size_t c0;               /* channel of column 0: index of bias, b_zp, rq multipliers */
    const ti_tensor *bias;   /* int32 / int64 per channel, or NULL */
    const ti__qrq *rq;
    void *y;                 /* output (row, col) at y[y0 + row * y_rs + col * y_cs] */
    ti_dtype ydt;
    size_t y0, y_rs, y_cs;
    const int16_t *bp;       /* packed B read by the compute: ti__qg_packed_bytes(cols, depth) */
    int16_t *bp_dst;         /* where ti__qg_pack writes it (scratch, or the plan pool) */
    /* The byte path (AVX512-VNNI, aarch64 SDOT), taken when gather8 and bp8 are set and the
     * CPU has it: A as unsigned bytes a_u (uint8 as is, int8 + 128), A' = a_u + a_off8; B
     * packed once at planning by ti__qg8_pack (ti__qg8_set points these at it). */
    ti__qg_gather8_fn gather8;
    int32_t a_off8;
    const int8_t *bp8;       /* blocks of 16 columns [depth / 4][16][4], signed bytes b_s */
    const int32_t *csum8;    /* per column: sum over k of B' (0 past the last column) */
    const int32_t *bos8;     /* per column: B' - b_s */
    int bos8_same;           /* 1: every column's bos8 is bos8[0] (TFLite's weights) */
    int8_t *bp8_dst;
    int want8;               /* planning (ti__qpack_make): 1, the caller has a byte-path
                                gather, so pack B for it too; 2, and it takes the byte path
                                whenever the ISA has it, so B for the byte path alone */
} ti__qgemm;

/* The depth of packed B: rounded up to a whole pair. */
TI__PRIVATE size_t ti__qg_depth2(size_t depth) { return (depth + 1) / 2 * 2; }

TI__PRIVATE size_t ti__qg_packed_bytes(size_t cols, size_t depth) {
    return (cols + TI__QG_NR - 1) / TI__QG_NR * TI__QG_NR * ti__qg_depth2(depth) * sizeof(int16_t);
}

/* B of the ONNX integer ops: w (uint8 or int8) as cols x depth with its zero points zp
 * (NULL, one, or one per column). Conv weights [M][C/group * kernel] hold a column's depth
 * contiguously (conv = 1); a MatMul's b [K][N] holds a row of columns (conv = 0). */
TI__PRIVATE void ti__qg_onnx_b(ti__qgemm *g, const ti_tensor *w, const ti_tensor *zp, size_t cols,
                               size_t depth, int conv) {
    g->cols = cols;
    g->depth = depth;
    g->b = w->data;
    g->b_u8 = w->dtype == TI_DTYPE_U8;
    g->b_cs = conv ? depth : 1;
    g->b_ks = conv ? 1 : cols;
    g->b_zp = zp != NULL ? zp->data : NULL;
    g->b_zp_n = zp != NULL ? ti__numel(zp) : 0;
}
/* Bytes of scratch before the packed B where callers keep per-channel multipliers (two
 * int32 or one double per channel), rounded to a cache line. */
TI__PRIVATE size_t ti__qg_rq_bytes(size_t channels) {
    return (channels * 2 * sizeof(int32_t) + 63) / 64 * 64;
}

/* acc[r][0..NR) += sum_p ap[p][r] * B(p, 0..NR) for r < MR, B a block in pairs of depths;
 * acc rows ldacc apart. The same separate-rows form as ti__sgemm_micro. */
TI__PRIVATE void ti__qg_micro(size_t kc, const int16_t *ap, const int16_t *bp, uint32_t *acc,
                              size_t ldacc) {
    uint32_t c0[TI__QG_NR], c1[TI__QG_NR], c2[TI__QG_NR], c3[TI__QG_NR];
    for (int q = 0; q < TI__QG_NR; q++) {
        c0[q] = acc[q];
        c1[q] = acc[ldacc + q];
        c2[q] = acc[2 * ldacc + q];
        c3[q] = acc[3 * ldacc + q];
    }
    for (size_t p = 0; p < kc; p++) {
        const int16_t *b = bp + p / 2 * 2 * TI__QG_NR + p % 2, *a = ap + p * TI__QG_MR;
        int32_t a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3];
        for (int q = 0; q < TI__QG_NR; q++) {
            int32_t bq = b[2 * q];
            c0[q] += (uint32_t)(a0 * bq);
            c1[q] += (uint32_t)(a1 * bq);
            c2[q] += (uint32_t)(a2 * bq);
            c3[q] += (uint32_t)(a3 * bq);
        }
    }
    for (int q = 0; q < TI__QG_NR; q++) {
        acc[q] = c0[q];
        acc[ldacc + q] = c1[q];
        acc[2 * ldacc + q] = c2[q];
        acc[3 * ldacc + q] = c3[q];
    }
}

/* Packs column blocks [begin, end): block b holds columns b*NR.. in pairs of depths, B'
 * values, 0 past the last column and the last depth. */
TI__PRIVATE void ti__qg_pack_range(void *ctx, size_t begin, size_t end) {
    const ti__qgemm *g = (const ti__qgemm *)ctx;
    size_t kd = g->depth, kd2 = ti__qg_depth2(kd);
    for (size_t b = begin; b < end; b++) {
        for (size_t q = 0; q < TI__QG_NR; q++) {
            /* column q of the block: depth i at dst[(i / 2) * 2 NR + i % 2] */
            int16_t *dst = g->bp_dst + b * kd2 * TI__QG_NR + 2 * q;
            size_t c = b * TI__QG_NR + q;
            if (kd2 > kd) dst[kd / 2 * 2 * TI__QG_NR + 1] = 0;
            if (c >= g->cols) {
                for (size_t i = 0; i < kd; i++) dst[i / 2 * 2 * TI__QG_NR + i % 2] = 0;
                continue;
            }
            int32_t off = g->b_off;
            if (g->b_zp != NULL) {
                size_t zi = g->b_zp_n > 1 ? g->c0 + c : 0;
                off -= g->b_u8 ? (int32_t)((const uint8_t *)g->b_zp)[zi]
                               : (int32_t)((const int8_t *)g->b_zp)[zi];
            }
            if (g->b_u8) {
                const uint8_t *w = (const uint8_t *)g->b + c * g->b_cs;
                for (size_t i = 0; i < kd; i++)
                    dst[i / 2 * 2 * TI__QG_NR + i % 2] = (int16_t)(w[i * g->b_ks] + off);
            } else {
                const int8_t *w = (const int8_t *)g->b + c * g->b_cs;
                for (size_t i = 0; i < kd; i++)
                    dst[i / 2 * 2 * TI__QG_NR + i % 2] = (int16_t)(w[i * g->b_ks] + off);
            }
        }
    }
}

/* Row blocks [begin, end) of MR rows: every column of those rows. */
TI__PRIVATE void ti__qg_range(void *ctx, size_t begin, size_t end) {
    const ti__qgemm *g = (const ti__qgemm *)ctx;
    int16_t a[TI__QG_KC * TI__QG_MR];
    uint32_t acc[TI__QG_MR * TI__QG_OCC];
    size_t kd = g->depth, kd2 = ti__qg_depth2(kd), oc = g->cols;
    /* the same sums either way (int32 products, uint32 wrap); AVX2 pairs depths in VPMADDWD,
     * NEON multiplies by lane (SMLAL) */
    void (*micro)(size_t, const int16_t *, const int16_t *, uint32_t *, size_t) = ti__qg_micro;
    /* or NULL: the micro-kernel that stores the first depth panel's sums (no clearing) */
    void (*first)(size_t, const int16_t *, const int16_t *, uint32_t *, size_t) = NULL;
    /* AVX2: the kernels of a block of one row */
    void (*micro1)(size_t, const int16_t *, const int16_t *, uint32_t *, size_t) = NULL;
    void (*first1)(size_t, const int16_t *, const int16_t *, uint32_t *, size_t) = NULL;
#if defined(TI__X86_SIMD)
    if (ti__cpu_isa() >= TI__ISA_AVX2) {
        micro = ti__qg_micro_avx2, first = ti__qg_micro_avx2_set;
        micro1 = ti__qg_micro1_avx2, first1 = ti__qg_micro1_avx2_set;
    }
#elif defined(TI__ARM_NEON)
    if (ti__cpu_isa() >= TI__ISA_NEON) micro = ti__qg_micro_neon;
#endif
    /* AVX2: TFLite's common case (int32 requantization to bytes, int32 bias or none) for
     * the block's rows together, anything else row by row; rows gathered contiguously and
     * interleaved at once where the caller has gather_row */
    const ti__qrq *rq = g->rq;
    int rows_simd = 0, pos = 0, row_gather = 0, pairs = 0;
#if defined(TI__X86_SIMD)
    int16_t rows[TI__QG_MR][TI__QG_KC + TI__QG_GROW_PAST];
    if (ti__cpu_isa() >= TI__ISA_AVX2) {
        pairs = micro == ti__qg_micro_avx2;
        rows_simd = ti__qrq_bytes_ok(rq) && (g->bias == NULL || g->bias->dtype == TI_DTYPE_I32) &&
                    g->y_cs == 1 && (g->ydt == TI_DTYPE_U8 || g->ydt == TI_DTYPE_I8) &&
                    (pos = ti__qrq_shifts(rq->shift + g->c0, oc)) >= 0;
        row_gather = pairs && g->gather_row != NULL; /* interleave4 writes pairs */
    }
#endif
    (void)rows_simd, (void)pos, (void)rq, (void)pairs;
    for (size_t blk = begin; blk < end; blk++) {
        size_t p0 = blk * TI__QG_MR, np = TI__MIN((size_t)TI__QG_MR, g->rows - p0);
        for (size_t oc0 = 0; oc0 < oc; oc0 += TI__QG_OCC) {
            size_t occ = TI__MIN((size_t)TI__QG_OCC, oc - oc0);
            size_t nb = (occ + TI__QG_NR - 1) / TI__QG_NR;
            if (first == NULL || kd == 0)
                for (size_t r = 0; r < TI__QG_MR; r++)
                    memset(acc + r * TI__QG_OCC, 0, nb * TI__QG_NR * sizeof(uint32_t));
            for (size_t k0 = 0; k0 < kd; k0 += TI__QG_KC) {
                size_t k1 = TI__MIN(kd, k0 + TI__QG_KC);
                if (pairs && g->a8 != NULL && np == TI__QG_MR) {
#if defined(TI__X86_SIMD)
                    ti__qg_widen4_avx2(a, g->a8 + p0 * g->a8_rs + k0, g->a8_rs, k1 - k0, g->a8_u8,
                                       g->a8_off);
#endif
                } else if (row_gather) { /* rows contiguously, then interleaved at once */
#if defined(TI__X86_SIMD)
                    for (size_t r = 0; r < TI__QG_MR; r++) {
                        if (r < np) g->gather_row(g->gctx, p0 + r, k0, k1, rows[r]);
                        else memset(rows[r], 0, (k1 - k0) * sizeof(int16_t));
                    }
                    ti__qg_interleave4_avx2(a, rows[0], rows[1], rows[2], rows[3], k1 - k0);
#endif
                } else {
                    for (size_t r = 0; r < TI__QG_MR; r++) {
                        if (r < np) {
                            g->gather(g->gctx, p0 + r, k0, k1, a + r);
                        } else {
                            for (size_t i = 0; i < k1 - k0; i++) a[i * TI__QG_MR + r] = 0;
                        }
                    }
#if defined(TI__X86_SIMD)
                    if (pairs) ti__qg_pairs_avx2(a, k1 - k0); /* the AVX2 kernel's layout */
#endif
                }
                int one = np == 1 && micro1 != NULL;
                void (*mk)(size_t, const int16_t *, const int16_t *, uint32_t *, size_t) =
                    k0 == 0 && first != NULL ? (one ? first1 : first) : (one ? micro1 : micro);
                for (size_t b = 0; b < nb; b++)
                    mk(k1 - k0, a, g->bp + ((oc0 / TI__QG_NR + b) * kd2 + k0) * TI__QG_NR,
                       acc + b * TI__QG_NR, TI__QG_OCC);
            }
#if defined(TI__X86_SIMD)
            if (rows_simd) {
                ti__qrq_rows_avx2(np, acc, TI__QG_OCC,
                                  g->bias != NULL ? (const int32_t *)g->bias->data + g->c0 + oc0 : NULL,
                                  NULL, NULL, occ, rq->mult + g->c0 + oc0, rq->shift + g->c0 + oc0,
                                  pos, rq->yo, rq->lo, rq->hi,
                                  (uint8_t *)g->y + g->y0 + p0 * g->y_rs + oc0, g->y_rs);
                continue;
            }
#endif
            for (size_t r = 0; r < np; r++) {
                size_t yo = g->y0 + (p0 + r) * g->y_rs + oc0 * g->y_cs;
                if (ti__qrq_n_u32(g->rq, g->bias, acc + r * TI__QG_OCC, g->c0 + oc0, occ, g->y,
                                  g->ydt, yo, g->y_cs))
                    continue;
                for (size_t c = 0; c < occ; c += TI__QG_CHUNK) {
                    int64_t v[TI__QG_CHUNK];
                    size_t m = TI__MIN((size_t)TI__QG_CHUNK, occ - c);
                    for (size_t i = 0; i < m; i++) v[i] = (int32_t)acc[r * TI__QG_OCC + c + i];
                    ti__qg_add_bias(g->bias, g->c0 + oc0 + c, m, v);
                    ti__qrq_n(g->rq, v, g->c0 + oc0 + c, m, g->y, g->ydt,
                              g->y0 + (p0 + r) * g->y_rs + (oc0 + c) * g->y_cs, g->y_cs);
                }
            }
        }
    }
}

/* ---- the byte path: AVX512-VNNI, aarch64 SDOT ----------------------------------------- */
/* With a_u = A' - a_off8 (unsigned bytes) and b_s = B' - bos (signed bytes, per column),
 *   sum_k A' B' = sum_k a_u b_s + bos * sum_k a_u + a_off8 * sum_k B'
 * (expand (a_u + a_off8)(b_s + bos) and collect sum_k (b_s + bos) = sum_k B'), all modulo
 * 2^32: the same int32 sums as the int16 kernels, bit for bit. VPDPBUSD gives the first
 * term; SDOT gives sum_k (a_u - 128) b_s, and 128 * sum_k b_s per column (from the pack's
 * sums) completes it. The row sums come from the gathered bytes, the column sums from the
 * pack. Depth is padded to a multiple of 4 with zero bytes on both sides, which add nothing
 * (SDOT's padded A bytes become -128, times the padded B's 0). */
#define TI__QG8_MR 8
#define TI__QG8_KC 1024 /* depths per A panel (a multiple of 4): MR x KC bytes on the stack */
#define TI__QG8_OCC 256 /* columns accumulated at once: MR x OCC uint32 on the stack */
#define TI__QG8_PLANNED 1280 /* columns whose blocks' terms are planned once per range: 15 KiB */

TI__PRIVATE size_t ti__qg8_depth4(size_t depth) { return (depth + 3) / 4 * 4; }

/* Bytes of the byte path's packed B: the blocks, then csum8 and bos8 (int32 per column),
 * then bos8_same (one int32: ti__qg8_pack looks once, where a run's check of every column
 * was 0.7 % of MobileNetV2 int8, perf, its B offsets out of cache by then). */
TI__PRIVATE size_t ti__qg8_packed_bytes(size_t cols, size_t depth) {
    size_t nc = (cols + TI__QG_NR - 1) / TI__QG_NR * TI__QG_NR;
    return nc * ti__qg8_depth4(depth) + (2 * nc + 1) * sizeof(int32_t);
}

/* Points the byte path's fields of g at a pack of ti__qg8_packed_bytes at base. */
TI__PRIVATE void ti__qg8_set(ti__qgemm *g, const int8_t *base) {
    size_t nc = (g->cols + TI__QG_NR - 1) / TI__QG_NR * TI__QG_NR;
    g->bp8 = base;
    g->csum8 = (const int32_t *)(const void *)(base + nc * ti__qg8_depth4(g->depth));
    g->bos8 = g->csum8 + nc;
    g->bos8_same = g->bos8[nc];
}

/* Column c's depths [0, kd) of B in place (b_ks 1) into the byte path's layout: each quad
 * of bytes one 32-bit move (uint8 made signed by flipping the top bit: v ^ 0x80 = v - 128),
 * zeros past kd. Returns the sum of the column's values. Element by element, the Coral
 * MobileNetV2's weights took 12 ms of its 19 ms session creation to pack. */
TI__PRIVATE uint32_t ti__qg8_pack_col(const ti__qgemm *g, size_t c, int8_t *dst) {
    const unsigned char *w = (const unsigned char *)g->b + c * g->b_cs;
    size_t kd = g->depth, i = 0;
    /* u: the bytes' sum as unsigned values, of the word itself for uint8 and of the word
     * with the top bits flipped for int8 (v ^ 0x80 = v + 128 as unsigned), a word's four in
     * a few operations (a byte's loop was most of the time) */
    uint32_t flip = g->b_u8 ? 0x80808080u : 0u, usum = g->b_u8 ? 0u : 0x80808080u, u = 0, q;
    for (; i + 4 <= kd; i += 4, dst += 64) {
        memcpy(&q, w + i, 4);
        uint32_t v = q ^ usum, h = (v & 0x00ff00ffu) + ((v >> 8) & 0x00ff00ffu);
        u += (h & 0xffffu) + (h >> 16);
        q ^= flip;
        memcpy(dst, &q, 4);
    }
    if (i < kd) {
        unsigned char t[4] = {0, 0, 0, 0};
        for (size_t r = 0; i + r < kd; r++) {
            t[r] = (unsigned char)(w[i + r] ^ (flip & 0xff));
            u += (uint32_t)(w[i + r] ^ (usum & 0xff));
        }
        memcpy(dst, t, 4);
    }
    return g->b_u8 ? u : u - 128u * (uint32_t)kd; /* int8: each value counted 128 high */
}

/* Packs column blocks [begin, end) of B for the byte path into g->bp8_dst (whose csum8 and
 * bos8 follow as ti__qg8_set says). */
TI__PRIVATE void ti__qg8_pack_range(void *ctx, size_t begin, size_t end) {
    const ti__qgemm *g = (const ti__qgemm *)ctx;
    size_t kd = g->depth, kp = ti__qg8_depth4(kd);
    size_t nc = (g->cols + TI__QG_NR - 1) / TI__QG_NR * TI__QG_NR;
    int32_t *csum = (int32_t *)(void *)(g->bp8_dst + nc * kp), *bos = csum + nc;
    for (size_t b = begin; b < end; b++) {
        int8_t *dst = g->bp8_dst + b * kp * TI__QG_NR;
        for (size_t q = 0; q < TI__QG_NR; q++) {
            size_t c = b * TI__QG_NR + q;
            int8_t *col = dst + q * 4; /* the column's depth i at col[i / 4 * 64 + i % 4] */
            if (c >= g->cols) {        /* the last block's padding: zeros, sums 0 */
                for (size_t i = 0; i < kp; i++) col[i / 4 * 64 + i % 4] = 0;
                csum[c] = bos[c] = 0;
                continue;
            }
            int32_t off = g->b_off;
            if (g->b_zp != NULL) {
                size_t zi = g->b_zp_n > 1 ? g->c0 + c : 0;
                off -= g->b_u8 ? (int32_t)((const uint8_t *)g->b_zp)[zi]
                               : (int32_t)((const int8_t *)g->b_zp)[zi];
            }
            /* sum of (v + off) over the column: the values' sum plus kd offsets */
            uint32_t sum = (uint32_t)off * (uint32_t)kd;
            if (g->b_ks == 1) {
                sum += ti__qg8_pack_col(g, c, col);
            } else {
                const size_t base = c * g->b_cs;
                for (size_t i = 0; i < kd; i++) {
                    int32_t v = g->b_u8 ? (int32_t)((const uint8_t *)g->b)[base + i * g->b_ks]
                                        : (int32_t)((const int8_t *)g->b)[base + i * g->b_ks];
                    col[i / 4 * 64 + i % 4] = (int8_t)(g->b_u8 ? v - 128 : v);
                    sum += (uint32_t)v;
                }
                for (size_t i = kd; i < kp; i++) col[i / 4 * 64 + i % 4] = 0;
            }
            csum[c] = (int32_t)sum;
            bos[c] = off + (g->b_u8 ? 128 : 0);
        }
    }
}

/* Packs B for the byte path into dst (ti__qg8_packed_bytes) and points g at it. */
TI__PRIVATE void ti__qg8_pack(ti__qgemm *g, int8_t *dst, ti__threadpool *tp) {
    size_t nblk = (g->cols + TI__QG_NR - 1) / TI__QG_NR;
    g->bp8_dst = dst;
    ti__parallel_for(tp, nblk, TI__MAX((size_t)1, (size_t)32768 / (g->depth * TI__QG_NR + 1)),
                     ti__qg8_pack_range, g);
    size_t nc = nblk * TI__QG_NR;
    int32_t *bos = (int32_t *)(void *)(dst + nc * ti__qg8_depth4(g->depth)) + nc;
    int same = 1;
    for (size_t c = 1; c < g->cols && same; c++) same = bos[c] == bos[0];
    bos[nc] = same;
    ti__qg8_set(g, dst);
}

/* The byte path's kernels of one ISA: the micro-kernel (8 rows x 16 * nb columns of depth
 * quads), one output row's sums and requantization, up to 8 rows of them to bytes (NULL:
 * row by row). sdot: the micro-kernel multiplies signed A bytes a_u ^ 0x80 = a_u - 128
 * (SDOT is signed x signed, VPDPBUSD unsigned x signed), so its sums lack 128 * sum_k b_s
 * per column, which the driver adds to the column terms. */
typedef struct ti__qg8_isa {
    void (*micro)(size_t kq, const uint8_t *a, size_t lda, const int8_t *b, size_t bs, int nb,
                  uint32_t *acc, size_t ldacc, int add, const int32_t *init);
    size_t (*row)(const uint32_t *dot, const int32_t *colc, const int32_t *bos, int32_t row,
                  size_t n, const int32_t *mult, const int32_t *shift, int32_t yo, int32_t lo,
                  int32_t hi, int32_t *x, uint8_t *out8);
    int (*rows8)(size_t nr, const uint32_t *dot, size_t ldd, const int32_t *colc,
                 const int32_t *bos, const int32_t *row, size_t n, const int32_t *mult,
                 const int32_t *shift, int32_t yo, int32_t lo, int32_t hi, uint8_t *out,
                 size_t ldo);
    int sdot;
    /* or NULL: the micro-kernel on int8 rows of A as they lie (a_u = int8 + 128 made as it
     * reads them), storing; uint8 rows as they lie go to micro itself */
    void (*micro_i8)(size_t kq, const uint8_t *a, size_t lda, const int8_t *b, size_t bs, int nb,
                     uint32_t *acc, size_t ldacc, const int32_t *init);
    /* or NULL: the byte copy (ti__qg8_copy's contract, dst NULL: the sum only) where rows
     * read in place need their sums */
    uint32_t (*copy)(uint8_t *dst, const uint8_t *src, size_t n, uint8_t flip);
    /* or NULL: a block of columns planned (ti__qg8_plan_vnni: the column terms, and the float
     * scales where the micro-kernel below can take them) and the micro-kernel that
     * requantizes in its registers, storing bytes */
    int (*plan)(size_t n, const int32_t *bias, const int32_t *csum, int32_t ao, int32_t *colc,
                const int32_t *mult, const int32_t *shift, int32_t yo, int32_t lo, int32_t hi,
                float *s, float *e);
    void (*micro_rq)(size_t kq, const uint8_t *a, size_t lda, int i8, const int8_t *b, size_t bs,
                     int nb, const int32_t *init, const int32_t *row, const ti__qg8_rqt *t,
                     size_t nr, size_t nc, uint8_t *out, size_t ldo);
    /* or NULL: micro for row 0 alone (a block of one row; the other rows' sums unset) */
    void (*micro1)(size_t kq, const uint8_t *a, size_t lda, const int8_t *b, size_t bs, int nb,
                   uint32_t *acc, size_t ldacc, int add, const int32_t *init);
} ti__qg8_isa;

/* The byte path's kernels under the ISA in effect, or NULL where it has none. */
TI__PRIVATE const ti__qg8_isa *ti__qg8_isa_now(void) {
#if defined(TI__X86_VNNI)
    static const ti__qg8_isa vnni = {ti__qg8_micro_vnni,    ti__qg8_row_vnni,
                                     ti__qg8_rows8_vnni,    0,
                                     ti__qg8_micro_vnni_i8, ti__qg8_copy_vnni,
                                     ti__qg8_plan_vnni,     ti__qg8_micro_rq_vnni,
                                     ti__qg8_micro1_vnni};
    if (ti__cpu_isa() >= TI__ISA_AVX512VNNI) return &vnni;
#elif defined(TI__ARM_DOTPROD)
    static const ti__qg8_isa dot = {ti__qg8_micro_neondot, ti__qg8_row_neon, NULL, 1, NULL, NULL,
                                    NULL, NULL, NULL};
    if (ti__cpu_isa() >= TI__ISA_NEONDOT) return &dot;
#endif
    return NULL;
}

#ifdef TI__QG8
/* The byte path's gathers' copy: dst[i] = src[i] ^ flip for i < n, returning the bytes' sum
 * modulo 2^32 (only called where the byte path runs). */
TI__PRIVATE uint32_t ti__qg8_copy(uint8_t *dst, const uint8_t *src, size_t n, uint8_t flip) {
#if defined(TI__X86_VNNI)
    return ti__qg8_copy_vnni(dst, src, n, flip);
#else
    return ti__qg8_copy_neon(dst, src, n, flip);
#endif
}

/* The row terms of the 8 rows of a block: the rows' byte sums times the one B offset (same),
 * else the sums as they are (the per-column offsets multiply them later). */
TI__PRIVATE void ti__qg8_rowterms(int32_t *dst, const uint32_t *rowsum, int same, int32_t bos0) {
    for (size_t r = 0; r < TI__QG8_MR; r++)
        dst[r] = (int32_t)(same ? rowsum[r] * (uint32_t)bos0 : rowsum[r]);
}

/* isa->micro_rq over a column block (columns oc0.. of g, occ of them), two blocks of 16 at a
 * time: kq depth quads of the 8 rows at ap (lda apart; i8: int8 rows as they lie), the
 * block's column terms, float scales (rqs, rqe) and row terms (rowp, or NULL); rows p0..p0 +
 * np requantized to bytes in g's output. */
TI__PRIVATE void ti__qg8_rq_block(const ti__qg8_isa *isa, const ti__qgemm *g, size_t oc0,
                                  size_t occ, const int32_t *colc, const float *rqs,
                                  const float *rqe, const int32_t *rowp, size_t kq,
                                  const uint8_t *ap, size_t lda, int i8, size_t p0, size_t np) {
    const ti__qrq *rq = g->rq;
    size_t kp = ti__qg8_depth4(g->depth), nb = (occ + TI__QG_NR - 1) / TI__QG_NR;
    for (size_t b = 0; b < nb; b += 2) {
        size_t c = b * TI__QG_NR;
        ti__qg8_rqt t = {rqs + c,        rqe + c, rq->mult + g->c0 + oc0 + c,
                         rq->shift + g->c0 + oc0 + c, rq->yo,  rq->lo,
                         rq->hi};
        isa->micro_rq(kq, ap, lda, i8, g->bp8 + (oc0 / TI__QG_NR + b) * kp * TI__QG_NR,
                      kp * TI__QG_NR, nb - b > 1 ? 2 : 1, colc + c, rowp, &t, np,
                      TI__MIN(occ - c, 2 * TI__QG_NR),
                      (uint8_t *)g->y + g->y0 + p0 * g->y_rs + oc0 + c, g->y_rs);
    }
}

/* Row blocks [begin, end) of TI__QG8_MR rows on the byte path: every column of them. */
TI__PRIVATE void ti__qg8_range(void *ctx, size_t begin, size_t end) {
    const ti__qgemm *g = (const ti__qgemm *)ctx;
    const ti__qg8_isa *isa = ti__qg8_isa_now();
    if (isa == NULL) { /* the ISA was lowered since ti__qg_compute looked (tests): int16 path */
        size_t b4 = (g->rows + TI__QG_MR - 1) / TI__QG_MR;
        ti__qg_range(ctx, TI__MIN(b4, begin * (TI__QG8_MR / TI__QG_MR)),
                     TI__MIN(b4, end * (TI__QG8_MR / TI__QG_MR)));
        return;
    }
    uint8_t a[TI__QG8_MR * TI__QG8_KC];
    uint32_t acc[TI__QG8_MR * TI__QG8_OCC], rowsum[TI__QG8_MR];
    int32_t rowv[TI__QG8_MR]; /* the row terms */
    int32_t x[TI__QG8_OCC];
    size_t kd = g->depth, kp = ti__qg8_depth4(kd), oc = g->cols;
    const ti__qrq *rq = g->rq;
    /* TFLite's common case in one pass: bias folded into the column terms, requantized in
     * AVX-512 and stored as bytes; anything else as the int16 path finishes its sums */
    int fused = rq->mode == TI__QRQ_32 && rq->lo <= rq->hi &&
                (g->bias == NULL || g->bias->dtype == TI_DTYPE_I32);
    int bytes = fused && g->y_cs == 1 && (g->ydt == TI_DTYPE_U8 || g->ydt == TI_DTYPE_I8);
    const int32_t *bv = fused && g->bias != NULL ? (const int32_t *)g->bias->data + g->c0 : NULL;
    /* one B offset for every column (TFLite): the row term is one number per row */
    const int same = g->bos8_same;
    const int32_t *bos = same ? NULL : g->bos8;
    /* depths that fit one A panel: the rows are gathered once per row block, not once per
     * column block (an expand conv of 960 channels has four) */
    const int one_panel = kd <= TI__QG8_KC;
    /* rows as they lie (a 1x1 conv's or an FC's input) of whole depth quads: the micro-kernel
     * reads full row blocks in place instead of their copy into the panel, int8 ones when
     * there is no row term (B' = b_s: TFLite's int8 weights), uint8 ones with their sums
     * taken in place when there is one (one B offset: TFLite's uint8 weights) */
    const int in_place = g->a8 != NULL && kd > 0 && kd % 4 == 0 && oc > 0 && bos == NULL &&
                         (g->a8_u8 ? g->bos8[0] == 0 || isa->copy != NULL
                                   : g->bos8[0] == 0 && isa->micro_i8 != NULL) &&
                         g->a_off8 == (g->a8_u8 ? g->a8_off : g->a8_off - 128);
    const int in_place_sums = in_place && g->bos8[0] != 0;
    /* bytes through rows8: the column terms start the micro-kernel's sums (one add fewer per
     * 16 sums in rows8), so rows8 and the row-by-row fallback take none */
    const int fold = bytes && isa->rows8 != NULL;
    /* and where the ISA can, and the requantization of every column of the block allows, the
     * micro-kernel requantizes in its registers (one depth panel, one row term per row) */
    const int rq_ok = fold && isa->micro_rq != NULL && one_panel && kd > 0 && bos == NULL;
    int rqf = 0;                                      /* colc's block takes micro_rq */
    const int32_t *rowp = same && g->bos8[0] == 0 ? NULL : rowv; /* NULL: none */
    size_t colc_at = SIZE_MAX; /* the column block whose terms colc holds */
    /* Up to TI__QG8_PLANNED columns: every column block planned once for the whole range,
     * not again for each row block (with more than TI__QG8_OCC columns the block changes
     * every row block: ti__qg8_plan_vnni was 1.4 % of MobileNetV2 int8, perf). Otherwise
     * the block in use is planned at the arrays' start. colc, rqs, rqe: the block at colc_at. */
    int32_t colc_all[TI__QG8_PLANNED], *colc = colc_all;
    float rqs_all[TI__QG8_PLANNED], rqe_all[TI__QG8_PLANNED], *rqs = rqs_all, *rqe = rqe_all;
    int rqf_all[TI__QG8_PLANNED / TI__QG8_OCC];
#ifdef TI__X86_AMX
    /* The tile path (AMX, cpu/x86/qgemm_vnni_amx.c): rows as they lie, requantized in
     * registers, in blocks of 32 or 16 whole rows (the rest as below) against every column
     * at once, on depths that split into whole tile steps; with every column block planned
     * up front, small ones too, and the column terms of the signed A (int8 rows) plus 128 *
     * sum_k b_s, the terms of B' = b_s + bos being sum_k B' - depth * bos. */
    size_t amx_sq = in_place && rq_ok && oc <= TI__QG8_PLANNED && ti__cpu_isa() >= TI__ISA_AMX
                        ? ti__qg8_amx_step(kd / 4)
                        : 0;
    int32_t amx_init[TI__QG8_PLANNED + 32];
#else
    const size_t amx_sq = 0;
#endif
    const int planned =
        isa->plan != NULL && oc <= TI__QG8_PLANNED && (oc > TI__QG8_OCC || amx_sq != 0);
    for (size_t oc0 = 0; planned && oc0 < oc; oc0 += TI__QG8_OCC)
        rqf_all[oc0 / TI__QG8_OCC] =
            isa->plan(TI__MIN((size_t)TI__QG8_OCC, oc - oc0), bv != NULL ? bv + oc0 : NULL,
                      g->csum8 + oc0, g->a_off8, colc_all + oc0, rq->mult + g->c0 + oc0,
                      rq->shift + g->c0 + oc0, rq->yo, rq->lo, rq->hi,
                      rq_ok ? rqs_all + oc0 : NULL, rqe_all + oc0);
#ifdef TI__X86_AMX
    for (size_t oc0 = 0; amx_sq != 0 && oc0 < oc; oc0 += TI__QG8_OCC)
        if (!rqf_all[oc0 / TI__QG8_OCC]) amx_sq = 0; /* a block's scales refused */
    for (size_t c = 0; amx_sq != 0 && c < (oc + 31) / 32 * 32; c++)
        amx_init[c] = c >= oc      ? 0
                      : g->a8_u8 ? colc_all[c]
                                 : (int32_t)((uint32_t)colc_all[c] +
                                             128u * ((uint32_t)g->csum8[c] -
                                                     (uint32_t)kd * (uint32_t)g->bos8[0]));
#endif
    for (size_t blk = begin; blk < end; blk++) {
        size_t p0 = blk * TI__QG8_MR, np = TI__MIN((size_t)TI__QG8_MR, g->rows - p0);
#ifdef TI__X86_AMX
        /* whole blocks of 16 rows left in the range */
        size_t amx_nr = amx_sq == 0 ? 0 : (TI__MIN(end * TI__QG8_MR, g->rows) - p0) / 16 * 16;
        if (amx_nr != 0) {
            ti__qg8_rqt t = {rqs_all, rqe_all, rq->mult + g->c0, rq->shift + g->c0,
                             rq->yo,  rq->lo,  rq->hi};
            ti__qg8_amx_rq(amx_nr, kd / 4, amx_sq, g->a8 + p0 * g->a8_rs, g->a8_rs, !g->a8_u8,
                           g->bp8, kp * TI__QG_NR, oc, amx_init,
                           in_place_sums ? g->bos8[0] : 0, &t,
                           (uint8_t *)g->y + g->y0 + p0 * g->y_rs, g->y_rs);
            blk += amx_nr / TI__QG8_MR - 1;
            continue;
        }
#endif
        const int direct = in_place && np == TI__QG8_MR;
        for (size_t oc0 = 0; oc0 < oc; oc0 += TI__QG8_OCC) {
            size_t occ = TI__MIN((size_t)TI__QG8_OCC, oc - oc0);
            size_t nb = (occ + TI__QG_NR - 1) / TI__QG_NR;
            if (colc_at != oc0 && planned) { /* planned above */
                colc = colc_all + oc0;
                rqs = rqs_all + oc0;
                rqe = rqe_all + oc0;
                rqf = rqf_all[oc0 / TI__QG8_OCC];
                colc_at = oc0;
            } else if (colc_at != oc0 && isa->plan != NULL) { /* when the column block changes */
                rqf = isa->plan(occ, bv != NULL ? bv + oc0 : NULL, g->csum8 + oc0, g->a_off8, colc,
                                rq->mult + g->c0 + oc0, rq->shift + g->c0 + oc0, rq->yo, rq->lo,
                                rq->hi, rq_ok ? rqs : NULL, rqe);
                colc_at = oc0;
            } else if (colc_at != oc0) { /* the same in plain loops (and SDOT's term) */
                for (size_t i = 0; i < occ; i++)
                    colc[i] = (int32_t)((bv != NULL ? (uint32_t)bv[oc0 + i] : 0u) +
                                        (uint32_t)g->a_off8 * (uint32_t)g->csum8[oc0 + i]);
                if (isa->sdot) /* + 128 * sum_k b_s, sum_k b_s = sum_k B' - depth * bos */
                    for (size_t i = 0; i < occ; i++)
                        colc[i] = (int32_t)((uint32_t)colc[i] +
                                            128u * ((uint32_t)g->csum8[oc0 + i] -
                                                    (uint32_t)kd * (uint32_t)g->bos8[oc0 + i]));
                for (size_t i = occ; i < nb * TI__QG_NR; i++) colc[i] = 0; /* micro's init */
                colc_at = oc0;
            }
            const int gather = !direct && (!one_panel || oc0 == 0);
            if (gather || direct)
                for (size_t r = 0; r < TI__QG8_MR; r++) rowsum[r] = 0;
            for (size_t r = 0; direct && in_place_sums && r < TI__QG8_MR; r++)
                rowsum[r] = isa->copy(NULL, g->a8 + (p0 + r) * g->a8_rs, kd, 0);
            if (kd == 0)
                for (size_t r = 0; r < TI__QG8_MR; r++)
                    for (size_t i = 0; i < nb * TI__QG_NR; i++)
                        acc[r * TI__QG8_OCC + i] = fold ? (uint32_t)colc[i] : 0u;
            if (direct && rqf) {
                ti__qg8_rowterms(rowv, rowsum, same, g->bos8[0]);
                ti__qg8_rq_block(isa, g, oc0, occ, colc, rqs, rqe, rowp, kd / 4,
                                 g->a8 + p0 * g->a8_rs, g->a8_rs, !g->a8_u8, p0, np);
            }
            for (size_t b = 0; direct && !rqf && b < nb; b += 2) {
                const uint8_t *ar = g->a8 + p0 * g->a8_rs;
                const int8_t *bb = g->bp8 + (oc0 / TI__QG_NR + b) * kp * TI__QG_NR;
                int n2 = nb - b > 1 ? 2 : 1;
                const int32_t *init = fold ? colc + b * TI__QG_NR : NULL;
                if (g->a8_u8)
                    isa->micro(kd / 4, ar, g->a8_rs, bb, kp * TI__QG_NR, n2, acc + b * TI__QG_NR,
                               TI__QG8_OCC, 0, init);
                else
                    isa->micro_i8(kd / 4, ar, g->a8_rs, bb, kp * TI__QG_NR, n2,
                                  acc + b * TI__QG_NR, TI__QG8_OCC, init);
            }
            for (size_t k0 = 0; !direct && k0 < kd; k0 += TI__QG8_KC) {
                size_t k1 = TI__MIN(kd, k0 + TI__QG8_KC), kc4 = ti__qg8_depth4(k1 - k0);
                if (gather) /* the row sums only where a row term uses them */
                    g->gather8(g->gctx, p0, np, k0, k1, a, TI__QG8_KC,
                               same && g->bos8[0] == 0 ? NULL : rowsum);
                for (size_t r = 0; gather && r < TI__QG8_MR; r++) {
                    uint8_t *row = a + r * TI__QG8_KC;
                    if (r < np)
                        for (size_t i = k1 - k0; i < kc4; i++) row[i] = 0;
                    else
                        memset(row, 0, kc4);
                }
                if (rqf) { /* one panel (k0 0); the row sums are the panel's */
                    ti__qg8_rowterms(rowv, rowsum, same, g->bos8[0]);
                    ti__qg8_rq_block(isa, g, oc0, occ, colc, rqs, rqe, rowp, kc4 / 4, a,
                                     TI__QG8_KC, 0, p0, np);
                }
                for (size_t b = 0; !rqf && b < nb; b += 2)
                    (np == 1 && isa->micro1 != NULL ? isa->micro1 : isa->micro)(
                        kc4 / 4, a, TI__QG8_KC,
                        g->bp8 + ((oc0 / TI__QG_NR + b) * kp + k0) * TI__QG_NR, kp * TI__QG_NR,
                        nb - b > 1 ? 2 : 1, acc + b * TI__QG_NR, TI__QG8_OCC, k0 > 0,
                        fold ? colc + b * TI__QG_NR : NULL);
            }
            if (rqf) continue; /* stored by micro_rq */
            ti__qg8_rowterms(rowv, rowsum, same, g->bos8[0]);
            if (bytes && isa->rows8 != NULL &&
                isa->rows8(np, acc, TI__QG8_OCC, NULL, bos != NULL ? bos + oc0 : NULL,
                           same && g->bos8[0] == 0 ? NULL : rowv, occ,
                           rq->mult + g->c0 + oc0, rq->shift + g->c0 + oc0, rq->yo, rq->lo,
                           rq->hi, (uint8_t *)g->y + g->y0 + p0 * g->y_rs + oc0, g->y_rs))
                continue;
            for (size_t r = 0; r < np; r++) {
                size_t yo = g->y0 + (p0 + r) * g->y_rs + oc0 * g->y_cs;
                const uint32_t *dot = acc + r * TI__QG8_OCC;
                size_t done = 0;
                if (fused) {
                    done = isa->row(dot, fold ? NULL : colc, bos != NULL ? bos + oc0 : NULL,
                                    rowv[r], occ,
                                            rq->mult + g->c0 + oc0, rq->shift + g->c0 + oc0,
                                            rq->yo, rq->lo, rq->hi, x,
                                            bytes ? (uint8_t *)g->y + yo : NULL);
                    if (!bytes) ti__qg_store_n(g->y, g->ydt, yo, g->y_cs, x, done);
                    for (size_t i = done; i < occ; i++)
                        ti__qg_store(g->y, g->ydt, yo + i * g->y_cs,
                                     ti__qrq_one(rq, x[i], g->c0 + oc0 + i));
                    continue;
                }
                /* the int16 path's finish: int32 sums (colc without bias), bias in int64 */
                isa->row(dot, colc, bos != NULL ? bos + oc0 : NULL, rowv[r], occ, NULL, NULL, 0,
                                 0, 0, x, NULL);
                for (size_t c = 0; c < occ; c += TI__QG_CHUNK) {
                    int64_t v[TI__QG_CHUNK];
                    size_t m = TI__MIN((size_t)TI__QG_CHUNK, occ - c);
                    for (size_t i = 0; i < m; i++) v[i] = x[c + i];
                    ti__qg_add_bias(g->bias, g->c0 + oc0 + c, m, v);
                    ti__qrq_n(rq, v, g->c0 + oc0 + c, m, g->y, g->ydt, yo + c * g->y_cs, g->y_cs);
                }
            }
        }
    }
}
#endif

/* Whether ti__qg_compute takes the byte path for g now. */
TI__PRIVATE int ti__qg8_usable(const ti__qgemm *g) {
#ifdef TI__QG8
    return g->gather8 != NULL && g->bp8 != NULL && ti__qg8_isa_now() != NULL;
#else
    (void)g;
    return 0;
#endif
}

TI__PRIVATE size_t ti__qg_grain(size_t work_per_item) {
    return TI__MAX((size_t)1, (size_t)32768 / (work_per_item + 1));
}

/* Packs B into dst (ti__qg_packed_bytes(cols, depth)) and points g->bp at it (once per B:
 * a caller that keeps B may run several A's on it). */
TI__PRIVATE void ti__qg_pack(ti__qgemm *g, int16_t *dst, ti__threadpool *tp) {
    size_t nblk = (g->cols + TI__QG_NR - 1) / TI__QG_NR;
    g->bp_dst = dst;
    g->bp = dst;
    if (g->depth == 0 || dst == NULL) return; /* nothing to pack: every sum is 0 */
    ti__parallel_for(tp, nblk, ti__qg_grain(g->depth * TI__QG_NR), ti__qg_pack_range, g);
}

/* Whether g's rows are so few that the threads split its columns: under four row blocks of
 * 8 a thread (a classifier's one row, the 49 of a 7 x 7 map), where splitting the rows
 * would leave a thread idle or unbalanced, and at least two groups of 16 columns each. Each
 * thread then reads only its columns' part of B. */
TI__PRIVATE int ti__qg_split_cols(const ti__qgemm *g, const ti__threadpool *tp) {
    size_t threads = (size_t)ti__threadpool_size(tp);
    size_t groups = (g->cols + TI__QG_NR - 1) / TI__QG_NR;
    return threads > 1 && (g->rows + 7) / 8 < 4 * threads && groups >= 2 * threads;
}

/* g's column groups [begin, end) of 16 as a GEMM of their own, every row: B's blocks (of
 * either path, where packed), the byte path's column terms, channels and outputs offset. */
TI__PRIVATE ti__qgemm ti__qg_cols_part(const ti__qgemm *g, size_t begin, size_t end) {
    size_t c0 = begin * TI__QG_NR, c1 = TI__MIN(end * TI__QG_NR, g->cols);
    ti__qgemm s = *g;
    s.cols = c1 - c0;
    s.c0 = g->c0 + c0;
    s.bp = g->bp != NULL ? g->bp + c0 * ti__qg_depth2(g->depth) : NULL;
    s.bp8 = g->bp8 != NULL ? g->bp8 + c0 * ti__qg8_depth4(g->depth) : NULL;
    s.csum8 = g->csum8 != NULL ? g->csum8 + c0 : NULL;
    s.bos8 = g->bos8 != NULL ? g->bos8 + c0 : NULL;
    s.y0 = g->y0 + c0 * g->y_cs;
    return s;
}

/* The int16 path on the column groups [begin, end) of 16. */
TI__PRIVATE void ti__qg_cols_range(void *ctx, size_t begin, size_t end) {
    const ti__qgemm *g = (const ti__qgemm *)ctx;
    ti__qgemm s = ti__qg_cols_part(g, begin, end);
    ti__qg_range(&s, 0, (g->rows + TI__QG_MR - 1) / TI__QG_MR);
}

#ifdef TI__QG8
/* The byte path on the column groups [begin, end) of 16. */
TI__PRIVATE void ti__qg8_cols_range(void *ctx, size_t begin, size_t end) {
    const ti__qgemm *g = (const ti__qgemm *)ctx;
    ti__qgemm s = ti__qg_cols_part(g, begin, end);
    ti__qg8_range(&s, 0, (g->rows + TI__QG8_MR - 1) / TI__QG8_MR);
}
#endif

#if defined(TI__QG8) && defined(TI__X86_AMX)
/* The byte path over pairs of row blocks [begin, end) (16 rows each, the last maybe 8): the
 * threads' split when the tile path may run, whose tiles take whole blocks of 16 rows (split
 * by single blocks, a chunk of an odd count left one to the VNNI kernels). */
TI__PRIVATE void ti__qg8_range_pairs(void *ctx, size_t begin, size_t end) {
    const ti__qgemm *g = (const ti__qgemm *)ctx;
    ti__qg8_range(ctx, 2 * begin, TI__MIN(2 * end, (g->rows + TI__QG8_MR - 1) / TI__QG8_MR));
}
#endif

/* Runs the GEMM on packed B: requantized outputs for every row and column, the rows split
 * among the threads, or the columns where there are few rows (ti__qg_split_cols). */
TI__PRIVATE void ti__qg_compute(ti__qgemm *g, ti__threadpool *tp) {
    size_t groups = (g->cols + TI__QG_NR - 1) / TI__QG_NR;
#ifdef TI__QG8
    if (ti__qg8_usable(g)) {
        size_t blocks8 = (g->rows + TI__QG8_MR - 1) / TI__QG8_MR;
        if (ti__qg_split_cols(g, tp)) {
            ti__parallel_for(tp, groups, ti__qg_grain(g->rows * g->depth * TI__QG_NR / 4),
                             ti__qg8_cols_range, g);
            return;
        }
#ifdef TI__X86_AMX
        if (ti__cpu_isa() >= TI__ISA_AMX && g->a8 != NULL && g->depth % 4 == 0 &&
            ti__qg8_amx_step(g->depth / 4) != 0) {
            ti__parallel_for(tp, (blocks8 + 1) / 2,
                             ti__qg_grain(2 * TI__QG8_MR * g->depth * g->cols / 4),
                             ti__qg8_range_pairs, g);
            return;
        }
#endif
        ti__parallel_for(tp, blocks8, ti__qg_grain(TI__QG8_MR * g->depth * g->cols / 4),
                         ti__qg8_range, g);
        return;
    }
#endif
    if (ti__qg_split_cols(g, tp)) {
        size_t grain = ti__qg_grain(g->rows * g->depth * TI__QG_NR);
        ti__parallel_for(tp, groups, grain, ti__qg_cols_range, g);
        return;
    }
    size_t blocks = (g->rows + TI__QG_MR - 1) / TI__QG_MR;
    ti__parallel_for(tp, blocks, ti__qg_grain(TI__QG_MR * g->depth * g->cols), ti__qg_range, g);
}

/* ---- weights packed once at planning (TI__PACK_QGEMM) --------------------------------- */
/* The prepack pass (graph/passes.c, through each op's ti__*_prepack) packs the constant B
 * of an 8-bit kernel once into the session's plan pool, as ti__qg_pack would per run, and
 * where the scales are constants too, the per-channel requantization multipliers. The
 * node's copy in the plan points at it (packed, packed_bytes: every byte allocated); runs
 * only read it, so sessions and threads never share writable state. A kernel that finds
 * no pack, or one of other dimensions, takes the per-run path in scratch. */
typedef struct ti__qpack {
    size_t groups, cols, depth; /* bp: groups blocks of ti__qg_packed_bytes(cols, depth);
                                   groups 0: no packed B (requantization only) */
    const int16_t *bp;
    const int8_t *bp8;          /* or NULL: groups blocks of ti__qg8_packed_bytes(cols, depth),
                                   B for the byte path, made when the ISA at planning has it
                                   (then bp may be NULL: ti__qpack_make's want8) */
    size_t channels;            /* requantization multipliers of this many channels, or 0 */
    int mode;                   /* their TI__QRQ_ mode */
    const int32_t *mult, *shift; /* TI__QRQ_32 / _64 */
    const double *real;          /* TI__QRQ_DOUBLE* / _ONNX (the same bytes as mult) */
    const int32_t *dw;           /* or NULL: TFLite's 8-bit depthwise on AVX2 or AVX512-VNNI,
                                    `channels` terms then the weights (cpu/tfl_conv.c
                                    ti__tfc_dw_fill) */
    size_t dw_taps;              /* of this many taps */
    int dw_level;                /* laid out for ti__tfc_dw_level 1 (AVX2) or 2 (VNNI) */
    const int8_t *dw_rows;       /* or NULL: its 3 x 3 weights in the row layout too
                                    (ti__dwq_wprep_rows_vnni, one chunk after another) */
    int rq_checked, rq_shifts; /* ti__qrq's checked and shifts_all: a run's loops over the
                                  channels were 0.3 % of MobileNetV2 int8 (perf) */
} ti__qpack;

/* The node's pack, when it is one (NULL otherwise). */
TI__PRIVATE const ti__qpack *ti__qpack_of(const ti__node *nd) {
    if (nd == NULL || nd->packed_kind != TI__PACK_QGEMM || nd->packed == NULL ||
        nd->packed_bytes < sizeof(ti__qpack))
        return NULL;
    return (const ti__qpack *)nd->packed;
}

/* The packed B of group g when the node's pack has these dimensions, else NULL. */
TI__PRIVATE const int16_t *ti__qpack_b(const ti__node *nd, size_t groups, size_t cols, size_t depth,
                                       size_t g) {
    const ti__qpack *p = ti__qpack_of(nd);
    if (p == NULL || p->bp == NULL || p->groups != groups || p->cols != cols || p->depth != depth ||
        g >= groups)
        return NULL;
    return p->bp + g * (ti__qg_packed_bytes(cols, depth) / sizeof(int16_t));
}

/* The byte path's packed B of group g (ti__qg8_set's base) when the node's pack has these
 * dimensions and one, else NULL. */
TI__PRIVATE const int8_t *ti__qpack_b8(const ti__node *nd, size_t groups, size_t cols, size_t depth,
                                       size_t g) {
    const ti__qpack *p = ti__qpack_of(nd);
    if (p == NULL || p->bp8 == NULL || p->groups != groups || p->cols != cols ||
        p->depth != depth || g >= groups)
        return NULL;
    return p->bp8 + g * ((ti__qg8_packed_bytes(cols, depth) + 63) / 64 * 64);
}

/* The node's pack when it holds the multipliers of `channels` channels, else NULL. */
TI__PRIVATE const ti__qpack *ti__qpack_rq(const ti__node *nd, size_t channels) {
    const ti__qpack *p = ti__qpack_of(nd);
    return p != NULL && p->channels == channels && p->mult != NULL ? p : NULL;
}

/* Allocates a pack in pool and packs B of `groups` groups into it: the group's columns c0 =
 * g * cols.. at element offset g * b_gs of b (the rest of *tmpl: strides, offsets, zero
 * points as for ti__qg_pack); with tmpl->want8, under an ISA with the byte path, B for the
 * byte path as well, or instead (want8 2: the int16 B would never be read, and cost twice
 * the weights' bytes of memory and most of a quantized model's session creation: the Coral
 * MobileNetV2's 3.4 MB of weights took 6.8 MB more). rq_channels > 0 also reserves
 * ti__qg_rq_bytes of them for the caller to fill (*rq_mem, then the pack's mode). Sets the
 * node's packed fields. Returns the pack, NULL on OOM. */
TI__PRIVATE ti__qpack *ti__qpack_make(ti__node *node, ti__pool *pool, ti__threadpool *tp,
                               const ti__qgemm *tmpl, size_t groups, size_t b_gs,
                               size_t rq_channels, void **rq_mem) {
    size_t pb = groups > 0 ? ti__qg_packed_bytes(tmpl->cols, tmpl->depth) : 0;
    size_t rqb = rq_channels > 0 ? ti__qg_rq_bytes(rq_channels) : 0;
    /* the byte path's B when the ISA in effect has it (the ISA is chosen once a process, so
     * it is the run's too; only ti__cpu_force_isa, a test hook, changes it after planning) */
    size_t pb8 = pb > 0 && tmpl->want8 && ti__qg8_isa_now() != NULL
                     ? (ti__qg8_packed_bytes(tmpl->cols, tmpl->depth) + 63) / 64 * 64 : 0;
    size_t pb16 = pb8 > 0 && tmpl->want8 == 2 ? 0 : pb;
    ti__qpack *p = (ti__qpack *)ti__pool_alloc(pool, sizeof(ti__qpack));
    int16_t *bp = pb16 > 0 ? (int16_t *)ti__pool_alloc(pool, pb16 * groups) : NULL;
    int8_t *bp8 = pb8 > 0 ? (int8_t *)ti__pool_alloc(pool, pb8 * groups) : NULL;
    void *rq = rqb > 0 ? ti__pool_alloc(pool, rqb) : NULL;
    if (p == NULL || (pb16 > 0 && bp == NULL) || (pb8 > 0 && bp8 == NULL) ||
        (rqb > 0 && rq == NULL))
        return NULL;
    if (bp != NULL || bp8 != NULL) {
        ti__qgemm g = *tmpl;
        for (size_t gi = 0; gi < groups; gi++) {
            g.c0 = gi * tmpl->cols;
            g.b = (const unsigned char *)tmpl->b + gi * b_gs; /* 1-byte elements */
            if (bp != NULL) ti__qg_pack(&g, bp + gi * (pb / sizeof(int16_t)), tp);
            if (bp8 != NULL) ti__qg8_pack(&g, bp8 + gi * pb8, tp);
        }
    }
    p->groups = bp != NULL || bp8 != NULL ? groups : 0;
    p->cols = tmpl->cols;
    p->depth = tmpl->depth;
    p->bp = bp;
    p->bp8 = bp8;
    p->channels = rq != NULL ? rq_channels : 0;
    p->mult = (const int32_t *)rq;
    p->shift = rq != NULL ? (const int32_t *)rq + rq_channels : NULL;
    p->real = (const double *)rq;
    p->dw = NULL;
    p->dw_taps = 0;
    p->dw_level = 0;
    p->dw_rows = NULL;
    p->rq_checked = p->rq_shifts = 0;
    if (rq_mem != NULL) *rq_mem = rq;
    node->packed_kind = TI__PACK_QGEMM;
    node->packed = p;
    node->packed_bytes = sizeof(ti__qpack) + pb16 * groups + pb8 * groups + rqb;
    return p;
}

/* ---- gathers of ONNX operands ----------------------------------------------------------- */

/* Plain rows: A' (row, k) = a[row * lda + k] + off - zp[row] (zp per row: MatMulInteger). */
typedef struct ti__qg_rows {
    const void *a;
    int u8;
    size_t lda;
    int32_t off;
    const void *zp; /* dtype of a, zp_n values; NULL: none */
    size_t zp_n;
} ti__qg_rows;

TI__PRIVATE void ti__qg_rows_gather(const void *ctx, size_t row, size_t k0, size_t k1, int16_t *dst) {
    const ti__qg_rows *r = (const ti__qg_rows *)ctx;
    int32_t off = r->off;
    if (r->zp != NULL) {
        size_t zi = r->zp_n > 1 ? row : 0;
        off -= r->u8 ? (int32_t)((const uint8_t *)r->zp)[zi] : (int32_t)((const int8_t *)r->zp)[zi];
    }
    size_t n = k1 - k0;
    if (r->u8) {
        const uint8_t *x = (const uint8_t *)r->a + row * r->lda + k0;
        for (size_t i = 0; i < n; i++) dst[i * TI__QG_MR] = (int16_t)(x[i] + off);
    } else {
        const int8_t *x = (const int8_t *)r->a + row * r->lda + k0;
        for (size_t i = 0; i < n; i++) dst[i * TI__QG_MR] = (int16_t)(x[i] + off);
    }
}

/* im2col of one NCHW image and group: row = output pixel (od, oh, ow) of the image, depth
 * k = (c, kd, kh, kw) over the group's channels; 1 and 2 spatial dims come as 3-D with
 * leading size-1 dims. Outside the input the value is x's zero point, so A' is 0. */
typedef struct ti__qg_nchw {
    const void *x; /* the image's first channel of the group */
    int u8;
    int32_t off;   /* -zero point of x */
    size_t plane;  /* elements of one input channel plane */
    int64_t in[3], ker[3], str[3], dil[3], pad[3], out[3];
} ti__qg_nchw;

TI__PRIVATE void ti__qg_nchw_gather(const void *ctx, size_t row, size_t k0, size_t k1, int16_t *dst) {
    const ti__qg_nchw *g = (const ti__qg_nchw *)ctx;
    int64_t ow = (int64_t)(row % (size_t)g->out[2]), t = (int64_t)(row / (size_t)g->out[2]);
    int64_t oh = t % g->out[1], od = t / g->out[1];
    int64_t b0 = od * g->str[0] - g->pad[0], b1 = oh * g->str[1] - g->pad[1];
    int64_t b2 = ow * g->str[2] - g->pad[2];
    size_t kprod = (size_t)(g->ker[0] * g->ker[1] * g->ker[2]);
    size_t c = k0 / kprod, rem = k0 % kprod;
    int64_t kw = (int64_t)(rem % (size_t)g->ker[2]);
    int64_t kh = (int64_t)(rem / (size_t)g->ker[2] % (size_t)g->ker[1]);
    int64_t kd = (int64_t)(rem / (size_t)(g->ker[2] * g->ker[1]));
    for (size_t k = k0; k < k1; k++, dst += TI__QG_MR) {
        int64_t id = b0 + kd * g->dil[0], ih = b1 + kh * g->dil[1], iw = b2 + kw * g->dil[2];
        if (id < 0 || id >= g->in[0] || ih < 0 || ih >= g->in[1] || iw < 0 || iw >= g->in[2]) {
            *dst = 0;
        } else {
            size_t xi = c * g->plane + (size_t)((id * g->in[1] + ih) * g->in[2] + iw);
            *dst = (int16_t)((g->u8 ? (int32_t)((const uint8_t *)g->x)[xi]
                                    : (int32_t)((const int8_t *)g->x)[xi]) + g->off);
        }
        if (++kw == g->ker[2]) {
            kw = 0;
            if (++kh == g->ker[1]) {
                kh = 0;
                if (++kd == g->ker[0]) {
                    kd = 0;
                    c++;
                }
            }
        }
    }
}

/* ---- drivers of the ONNX ops (QLinearConv / ConvInteger, QLinearMatMul / MatMulInteger) --- */

/* Fills the shared NCHW gather of image n, group g of an ONNX convolution. */
TI__PRIVATE void ti__q_nchw_setup(ti__qg_nchw *q, const ti_tensor *x, int64_t n, int64_t g,
                                  int64_t c, int64_t cg, int32_t xzp, const int64_t *in,
                                  const int64_t *ker, const int64_t *str, const int64_t *dil,
                                  const int64_t *pad, const int64_t *out) {
    size_t plane = (size_t)(in[0] * in[1] * in[2]);
    size_t first = (size_t)(n * c + g * cg) * plane;
    q->u8 = x->dtype == TI_DTYPE_U8;
    q->x = (const unsigned char *)x->data + first; /* 1-byte elements */
    q->off = -xzp;
    q->plane = plane;
    for (int i = 0; i < 3; i++) {
        q->in[i] = in[i], q->ker[i] = ker[i], q->str[i] = str[i];
        q->dil[i] = dil[i], q->pad[i] = pad[i], q->out[i] = out[i];
    }
}

/* Runs an ONNX NCHW convolution of 8-bit x and w on the shared GEMM: per group, the
 * weights [mg][cg * kvol] packed (at planning when the node has a pack, else here once per
 * run), then one GEMM per image with rows = output pixels. zw: w's zero points (NULL: 0),
 * rq the requantization, bias int32 or NULL; rq_bytes: scratch before the packed weights
 * the caller uses for multipliers. */
TI__PRIVATE ti_status ti__q_conv_gemm(ti__kctx *k, const ti_tensor *x, const ti_tensor *w,
                                      const ti_tensor *zw, int32_t zx, const ti_tensor *bias,
                                      const ti__qrq *rq, ti_tensor *y, int64_t nimg, int64_t c,
                                      int64_t m, int64_t group, const int64_t *in,
                                      const int64_t *ker, const int64_t *str, const int64_t *dil,
                                      const int64_t *pad, const int64_t *out, size_t rq_bytes) {
    int64_t cg = c / group, mg = m / group;
    size_t kvol = (size_t)(ker[0] * ker[1] * ker[2]), depth = (size_t)cg * kvol;
    size_t plane = (size_t)(out[0] * out[1] * out[2]);
    int prepacked = ti__qpack_b(k->node, (size_t)group, (size_t)mg, depth, 0) != NULL;
    size_t need = rq_bytes + (prepacked ? 0 : ti__qg_packed_bytes((size_t)mg, depth));
    if (need > 0 && (k->scratch == NULL || k->scratch_bytes < need))
        return ti__kfail(k, TI_ERR_INVALID_ARGUMENT,
                         "scratch of %zu bytes is too small for the packed weights", k->scratch_bytes);
    ti__qg_nchw q;
    ti__qgemm g;
    memset(&g, 0, sizeof g);
    g.rows = plane;
    ti__qg_onnx_b(&g, w, zw, (size_t)mg, depth, 1);
    g.gather = ti__qg_nchw_gather;
    g.gctx = &q;
    g.bias = bias;
    g.rq = rq;
    g.y = y->data;
    g.ydt = y->dtype;
    g.y_rs = 1;
    g.y_cs = plane;
    int16_t *bp = need > rq_bytes ? (int16_t *)((unsigned char *)k->scratch + rq_bytes) : NULL; /* empty B: unused */
    for (int64_t gi = 0; gi < group; gi++) {
        g.c0 = (size_t)(gi * mg);
        g.b = (const unsigned char *)w->data + g.c0 * depth;
        if (prepacked)
            g.bp = ti__qpack_b(k->node, (size_t)group, (size_t)mg, depth, (size_t)gi);
        else
            ti__qg_pack(&g, bp, k->tp);
        for (int64_t n = 0; n < nimg; n++) {
            ti__q_nchw_setup(&q, x, n, gi, c, cg, zx, in, ker, str, dil, pad, out);
            g.y0 = (size_t)(n * m + gi * mg) * plane;
            ti__qg_compute(&g, k->tp);
        }
    }
    return TI_OK;
}

/* Runs numpy-matmul batches of 8-bit a [.., m, kd] and b [.., kd, n] on the shared GEMM:
 * B packed once per distinct b matrix, a's rows gathered in place. za: a's zero point
 * (scalar or per row, NULL: 0), zb: b's (scalar or per column, NULL: 0). Output batch bi,
 * row r, column c at y[bi * m * n + r * n + c]. */
TI__PRIVATE ti_status ti__q_matmul_gemm(ti__kctx *k, const ti_tensor *a, const ti_tensor *za,
                                        const ti_tensor *b, const ti_tensor *zb, const ti__qrq *rq,
                                        ti_tensor *y, int64_t m, int64_t kd, int64_t n, int nb,
                                        const int64_t *batch, const int64_t *astr,
                                        const int64_t *bstr, size_t rq_bytes) {
    /* a pack (planning) holds b when b is one matrix: every batch stride of b is 0 */
    const int16_t *pre = ti__qpack_b(k->node, 1, (size_t)n, (size_t)kd, 0);
    for (int i = 0; i < nb && pre != NULL; i++)
        if (bstr[i] != 0) pre = NULL;
    size_t need = rq_bytes + (pre != NULL ? 0 : ti__qg_packed_bytes((size_t)n, (size_t)kd));
    if (need > 0 && (k->scratch == NULL || k->scratch_bytes < need))
        return ti__kfail(k, TI_ERR_INVALID_ARGUMENT,
                         "scratch of %zu bytes is too small for the packed matrix", k->scratch_bytes);
    ti__qg_rows ar;
    ti__qgemm g;
    memset(&ar, 0, sizeof ar);
    memset(&g, 0, sizeof g);
    ar.u8 = a->dtype == TI_DTYPE_U8;
    ar.lda = (size_t)kd;
    ar.zp = za != NULL ? za->data : NULL;
    ar.zp_n = za != NULL ? ti__numel(za) : 0;
    g.rows = (size_t)m;
    ti__qg_onnx_b(&g, b, zb, (size_t)n, (size_t)kd, 0);
    g.gather = ti__qg_rows_gather;
    g.gctx = &ar;
    g.rq = rq;
    g.y = y->data;
    g.ydt = y->dtype;
    g.y_rs = (size_t)n;
    g.y_cs = 1;
    int16_t *bp = need > rq_bytes ? (int16_t *)((unsigned char *)k->scratch + rq_bytes) : NULL; /* empty B: unused */
    if (pre != NULL) {
        g.bp = pre;
        g.b = b->data;
    }
    size_t nbatch = ti__shape_numel(nb, batch), mk = (size_t)(m * kd), kn = (size_t)(kd * n);
    size_t mn = (size_t)(m * n), packed = (size_t)-1;
    int64_t idx[TI_MAX_DIMS];
    for (int i = 0; i < nb; i++) idx[i] = 0;
    for (size_t bi = 0; bi < nbatch; bi++) {
        size_t ao = 0, bo = 0;
        for (int i = 0; i < nb; i++) {
            ao += (size_t)(idx[i] * astr[i]) * mk;
            bo += (size_t)(idx[i] * bstr[i]) * kn;
        }
        if (pre == NULL && bo != packed) { /* a broadcast b is packed once */
            g.b = (const unsigned char *)b->data + bo; /* 1-byte elements */
            ti__qg_pack(&g, bp, k->tp);
            packed = bo;
        }
        ar.a = (const unsigned char *)a->data + ao;
        g.y0 = bi * mn;
        ti__qg_compute(&g, k->tp);
        for (int i = nb - 1; i >= 0; i--) {
            if (++idx[i] < batch[i]) break;
            idx[i] = 0;
        }
    }
    return TI_OK;
}
