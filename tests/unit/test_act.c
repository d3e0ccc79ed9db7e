/* The fused-activation loops of the float32 Conv and GEMM paths against the per-element
 * reference ti__act_apply (core/internal.h): the row loop ti__act_row and the block
 * function ti__act_block (cpu/conv.c; its AVX2 and AVX-512 versions in cpu/x86/act_x86.c,
 * NEON in cpu/arm/act_neon.c,
 * each ISA forced), bit for bit, for every activation, with and without a bias (one per
 * row for blocks), on random values and on the edges (+-0, +-inf, NaN, values around the
 * clamp bounds, a Clip whose minimum is above its maximum), on lengths around vector
 * widths, and never writing outside the block (row stride wider than the columns); the
 * vector sigmoid and SiLU (vector exp) within a few ulp, checked on a dense sweep. */
#define TINYINFER_IMPLEMENTATION
#include "tinyinfer.h"
#include "ti_test.h"

static unsigned g_seed = 4242u;
static float frand(void) {
    g_seed = g_seed * 1664525u + 1013904223u;
    return (float)(g_seed >> 8) / 1048576.0f - 8.0f; /* [-8, 8) */
}

TI_TEST(row_matches_reference) {
    static const int acts[] = {TI__ACT_NONE, TI__ACT_RELU, TI__ACT_CLIP, TI__ACT_LEAKY_RELU,
                               TI__ACT_SIGMOID, TI__ACT_HARD_SIGMOID, TI__ACT_HARD_SWISH,
                               TI__ACT_TANH, TI__ACT_SILU};
    static const float biases[] = {0.0f, 0.75f, -1.5f};
    static const size_t lens[] = {0, 1, 3, 7, 8, 9, 15, 16, 17, 33, 100};
    float x[100], y[100], ref[100];
    for (size_t ai = 0; ai < sizeof(acts) / sizeof(acts[0]); ai++)
        for (size_t bi = 0; bi < 3; bi++)
            for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
                size_t n = lens[li];
                float a = acts[ai] == TI__ACT_CLIP ? 0.0f : 0.2f;
                float b = acts[ai] == TI__ACT_CLIP ? 6.0f : 0.5f;
                for (size_t i = 0; i < n; i++) x[i] = frand();
                static const float edges[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 6.0f,
                                              -3.0f, 3.0f, 100.0f, -100.0f};
                for (size_t i = 0; i < n && i < 10; i++) x[i * 7 % n] = edges[i];
                for (size_t i = 0; i < n; i++) {
                    y[i] = x[i];
                    /* no activation and no bias: left as it is (-0 stays -0) */
                    ref[i] = acts[ai] == TI__ACT_NONE && biases[bi] == 0.0f
                                 ? x[i]
                                 : ti__act_apply(acts[ai], a, b, x[i] + biases[bi]);
                }
                ti__act_row(acts[ai], a, b, biases[bi], y, n);
                int bad = 0;
                for (size_t i = 0; i < n; i++)
                    if (memcmp(&y[i], &ref[i], sizeof(float)) != 0 && bad++ == 0)
                        printf("  act %d bias %g n %zu: y[%zu] = %.9g, reference %.9g (x %.9g)\n",
                               acts[ai], biases[bi], n, i, y[i], ref[i], x[i]);
                TI_CHECK_EQ_INT(bad, 0);
            }
}

/* Equal within 8 ulp-ish (6e-7 relative, 1e-37 absolute), both NaN, or equal infinities. */
static int close_enough(float got, float want) {
    if (isnan(want)) return isnan(got);
    if (isinf(want) || isinf(got)) return got == want;
    return fabs((double)got - (double)want) <= 6e-7 * fabs((double)want) + 1e-37;
}

/* Sigmoid and SiLU over a dense sweep of x in [-120, 100] (and the special values) on every
 * ISA against double precision: 6e-7 relative plus 1e-34 absolute (x / (1 + exp(-x)) is -0 once
 * exp(-x) overflows, as with expf). */
TI_TEST(sigmoid_and_silu_accuracy) {
    static const int isas[] = {TI__ISA_SCALAR, TI__ISA_AVX2, TI__ISA_AVX512};
    enum { N = 22001 };
    static float x[N], y[N];
    for (int ii = 0; ii < 3; ii++) {
        if (ti__cpu_force_isa(isas[ii]) != isas[ii]) continue;
        for (int act = 0; act < 2; act++) {
            int a = act ? TI__ACT_SILU : TI__ACT_SIGMOID;
            for (int i = 0; i < N; i++) x[i] = y[i] = -120.0f + 0.01f * (float)i + frand() * 1e-3f;
            y[0] = x[0] = NAN;
            y[1] = x[1] = INFINITY;
            y[2] = x[2] = -INFINITY;
            y[3] = x[3] = 0.0f;
            y[4] = x[4] = -0.0f;
            ti__act_block(a, 0.0f, 0.0f, NULL, y, N, 1, N);
            int bad = 0;
            double worst = 0;
            for (int i = 0; i < N; i++) {
                double xv = x[i], s = 1.0 / (1.0 + exp(-xv));
                double want = act ? xv * s : s;
                if (isnan(xv) || (act && isinf(xv) && xv < 0)) { /* NaN; SiLU(-inf): -inf/inf */
                    if (!isnan(y[i]) && bad++ == 0) printf("  x %g: %g, expected NaN\n", xv, y[i]);
                    continue;
                }
                if (isinf(want)) {
                    if (y[i] != want && bad++ == 0) printf("  x %g: %g, expected %g\n", xv, y[i], want);
                    continue;
                }
                double err = fabs((double)y[i] - want), tol = 6e-7 * fabs(want) + 1e-34;
                if (fabs(want) > 1e-30) worst = fmax(worst, err / fabs(want));
                if (!(err <= tol) && bad++ == 0)
                    printf("  %s %s: x %.9g: %.9g, expected %.9g\n", ti__cpu_isa_name(isas[ii]),
                           act ? "SiLU" : "sigmoid", xv, y[i], want);
            }
            printf("  %s %s: worst relative error %.2g\n", ti__cpu_isa_name(isas[ii]),
                   act ? "SiLU" : "sigmoid", worst);
            TI_CHECK_EQ_INT(bad, 0);
        }
    }
    ti__cpu_force_isa(-1);
}

/* The SIMD sigmoid and SiLU run four (AVX-512) or eight (AVX2) vectors at a time where a
 * block has them (queued across rows) and one at a time for the rest: both give the same bits for the same value,
 * so a result does not depend on where in a block the value lies. */
TI_TEST(sigmoid_grouped_same_bits_as_single) {
    static const int isas[] = {TI__ISA_AVX2, TI__ISA_AVX512};
    enum { N = 4096 };
    static float x[N], grouped[N], single[N];
    for (int ii = 0; ii < 2; ii++) {
        if (ti__cpu_force_isa(isas[ii]) != isas[ii]) continue;
        int w = isas[ii] == TI__ISA_AVX512 ? 16 : 8;
        for (int act = 0; act < 2; act++) {
            int a = act ? TI__ACT_SILU : TI__ACT_SIGMOID;
            for (int i = 0; i < N; i++) /* mostly |x| <= 80, a few beyond */
                x[i] = grouped[i] = single[i] = i % 97 == 5 ? 90.0f * frand() : 10.0f * frand();
            ti__act_block(a, 0.0f, 0.0f, NULL, grouped, N, 1, N);
            for (int i = 0; i < N; i += w) /* one vector a call: never grouped */
                ti__act_block(a, 0.0f, 0.0f, NULL, single + i, (size_t)w, 1, (size_t)w);
            int bad = 0;
            for (int i = 0; i < N; i++)
                if (memcmp(&grouped[i], &single[i], sizeof(float)) != 0 && bad++ == 0)
                    printf("  %s act %d: x %.9g: grouped %.9g, single %.9g\n",
                           ti__cpu_isa_name(isas[ii]), a, x[i], grouped[i], single[i]);
            TI_CHECK_EQ_INT(bad, 0);
        }
    }
    ti__cpu_force_isa(-1);
}

/* Sigmoid and SiLU on rows of 8, 16 or 32 floats a row stride apart (a GEMM's slivers, which
 * ti__act_rows512 takes four or two rows at a time where they are one or two vectors, and
 * ti__act_rows256 eight or four), with a bias per row or none, every row count from 1 to 9:
 * each float the same bits as when computed a vector a call (16 floats, or 8: AVX2's, or
 * AVX-512's masked one), past the fast range too (a vector takes ti__sigm512 / 256 there),
 * and the floats between the rows untouched. AVX2 and AVX-512 each forced. */
TI_TEST(sigmoid_sliver_rows_same_bits_as_single) {
    static const int isas[] = {TI__ISA_AVX2, TI__ISA_AVX512};
    enum { LD = 40, MAXR = 9 };
    static float x[MAXR * LD], y[MAXR * LD], one[MAXR * LD], bias[MAXR];
    int ran = 0;
    for (size_t ii = 0; ii < 2; ii++) {
        if (ti__cpu_force_isa(isas[ii]) != isas[ii]) continue;
        ran++;
        for (int act = TI__ACT_SIGMOID; act <= TI__ACT_SILU; act += TI__ACT_SILU - TI__ACT_SIGMOID)
            for (size_t cols = 8; cols <= 32; cols *= 2)
                for (size_t rows = 1; rows <= MAXR; rows++)
                    for (int with_bias = 0; with_bias < 2; with_bias++) {
                        size_t w = isas[ii] == TI__ISA_AVX512 && cols >= 16 ? 16 : 8;
                        for (size_t i = 0; i < MAXR * LD; i++)
                            x[i] = y[i] = one[i] = i % 61 == 3 ? 95.0f * frand() : 6.0f * frand();
                        for (size_t r = 0; r < MAXR; r++) bias[r] = frand();
                        const float *bp = with_bias ? bias : NULL;
                        ti__act_block(act, 0.0f, 0.0f, bp, y, LD, rows, cols);
                        for (size_t r = 0; r < rows; r++)
                            for (size_t c = 0; c < cols; c += w) /* a vector a call */
                                ti__act_block(act, 0.0f, 0.0f, bp != NULL ? bp + r : NULL,
                                              one + r * LD + c, w, 1, w);
                        int bad = 0;
                        for (size_t i = 0; i < MAXR * LD; i++) {
                            int inside = i / LD < rows && i % LD < cols;
                            float want = inside ? one[i] : x[i];
                            if (memcmp(&y[i], &want, sizeof want) != 0 && bad++ == 0)
                                printf("  %s act %d rows %zu cols %zu bias %d: [%zu] %.9g, "
                                       "expected %.9g\n",
                                       ti__cpu_isa_name(isas[ii]), act, rows, cols, with_bias,
                                       i, y[i], want);
                        }
                        TI_CHECK_EQ_INT(bad, 0);
                    }
    }
    ti__cpu_force_isa(-1);
    if (ran == 0) printf("  (no SIMD ISA here: nothing to compare)\n");
}

/* A block of one column with adjacent rows (cols 1, ldy 1: a GEMM's single column) runs
 * down the column in vectors, a bias per element: the per-row answers all the same, bit for
 * bit (sigmoid and SiLU within a few ulp of the scalar ones), on every ISA. */
TI_TEST(column_block_matches_reference) {
    static const int acts[] = {TI__ACT_NONE, TI__ACT_RELU, TI__ACT_CLIP, TI__ACT_LEAKY_RELU,
                               TI__ACT_SIGMOID, TI__ACT_HARD_SWISH, TI__ACT_SILU};
    static const size_t lens[] = {1, 7, 8, 9, 31, 32, 33, 63, 64, 65, 100, 129};
    static const int isas[] = {TI__ISA_SCALAR, TI__ISA_AVX2, TI__ISA_AVX512};
    float x[130], y[130], ref[130], bias[130];
    for (size_t ii = 0; ii < 3; ii++) {
        if (ti__cpu_force_isa(isas[ii]) != isas[ii]) continue;
        for (size_t ai = 0; ai < sizeof(acts) / sizeof(acts[0]); ai++)
            for (int with_bias = 0; with_bias < 2; with_bias++)
                for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
                    size_t n = lens[li];
                    int act = acts[ai];
                    for (size_t i = 0; i < 130; i++) {
                        x[i] = i % 11 == 3 ? 90.0f * frand() : frand();
                        bias[i] = i % 5 == 1 ? 0.0f : frand() * 0.25f;
                        y[i] = x[i];
                        float bv = with_bias ? bias[i] : 0.0f;
                        ref[i] = i >= n || (act == TI__ACT_NONE && bv == 0.0f)
                                     ? x[i]
                                     : ti__act_apply(act, 0.0f, 6.0f, x[i] + bv);
                    }
                    x[n / 2] = y[n / 2] = -0.0f; /* kept as -0 where nothing applies */
                    if (act == TI__ACT_NONE && (!with_bias || bias[n / 2] == 0.0f))
                        ref[n / 2] = -0.0f;
                    else
                        ref[n / 2] = ti__act_apply(act, 0.0f, 6.0f,
                                                   -0.0f + (with_bias ? bias[n / 2] : 0.0f));
                    ti__act_block(act, 0.0f, 6.0f, with_bias ? bias : NULL, y, 1, n, 1);
                    int approx = isas[ii] != TI__ISA_SCALAR &&
                                 (act == TI__ACT_SIGMOID || act == TI__ACT_SILU);
                    int bad = 0;
                    for (size_t i = 0; i < 130; i++)
                        if (memcmp(&y[i], &ref[i], sizeof(float)) != 0 &&
                            !(approx && i < n && close_enough(y[i], ref[i])) && bad++ == 0)
                            printf("  %s act %d bias %d n %zu: y[%zu] = %.9g, reference %.9g\n",
                                   ti__cpu_isa_name(isas[ii]), act, with_bias, n, i, y[i],
                                   ref[i]);
                    TI_CHECK_EQ_INT(bad, 0);
                }
    }
    ti__cpu_force_isa(-1);
}

/* y: rows x ld floats (cols used), bias per row or none; every ISA this CPU has. */
TI_TEST(block_matches_reference_on_every_isa) {
    static const int acts[] = {TI__ACT_NONE, TI__ACT_RELU, TI__ACT_CLIP, TI__ACT_LEAKY_RELU,
                               TI__ACT_SIGMOID, TI__ACT_HARD_SIGMOID, TI__ACT_HARD_SWISH,
                               TI__ACT_TANH, TI__ACT_SILU};
    static const size_t cols_list[] = {1, 5, 8, 15, 16, 17, 31, 32, 40};
    static const int isas[] = {TI__ISA_SCALAR, TI__ISA_AVX2, TI__ISA_AVX512};
    enum { ROWS = 5, LD = 48 };
    float x[ROWS * LD], y[ROWS * LD], ref[ROWS * LD], bias[ROWS];
    int ran = 0;
    for (size_t ii = 0; ii < 3; ii++) {
        if (ti__cpu_force_isa(isas[ii]) != isas[ii]) continue; /* not on this CPU */
        ran++;
        for (size_t ai = 0; ai < sizeof(acts) / sizeof(acts[0]); ai++)
            for (int with_bias = 0; with_bias < 2; with_bias++)
                for (int inverted = 0; inverted < 2; inverted++)
                    for (size_t ci = 0; ci < sizeof(cols_list) / sizeof(cols_list[0]); ci++) {
                        size_t cols = cols_list[ci];
                        int act = acts[ai];
                        float a = act == TI__ACT_CLIP ? (inverted ? 2.0f : -0.5f) : 0.2f;
                        float b = act == TI__ACT_CLIP ? (inverted ? -1.0f : 6.0f) : 0.5f;
                        for (size_t i = 0; i < ROWS * LD; i++) x[i] = frand();
                        static const float edges[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN,
                                                      6.0f, -0.5f, 3.0f, -3.0f, 100.0f};
                        for (size_t i = 0; i < 10; i++) x[(i * 37) % (ROWS * LD)] = edges[i];
                        for (int r = 0; r < ROWS; r++) /* row 1: bias 0 */
                            bias[r] = r == 1 ? 0.0f : (r == 3 ? -0.0f : frand() * 0.25f);
                        for (int r = 0; r < ROWS; r++)
                            for (size_t i = 0; i < LD; i++) {
                                size_t e = (size_t)r * LD + i;
                                float bv = with_bias ? bias[r] : 0.0f;
                                y[e] = x[e];
                                ref[e] = i >= cols || (act == TI__ACT_NONE && bv == 0.0f)
                                             ? x[e]
                                             : ti__act_apply(act, a, b, x[e] + bv);
                            }
                        ti__act_block(act, a, b, with_bias ? bias : NULL, y, LD, ROWS, cols);
                        /* sigmoid and SiLU through the vector exp: within a few ulp (NaN
                         * and infinities as the scalar loop) */
                        int approx = isas[ii] != TI__ISA_SCALAR &&
                                     (act == TI__ACT_SIGMOID || act == TI__ACT_SILU);
                        int bad = 0;
                        for (size_t e = 0; e < ROWS * LD; e++)
                            if (memcmp(&y[e], &ref[e], sizeof(float)) != 0 &&
                                !(approx && close_enough(y[e], ref[e])) && bad++ == 0)
                                printf("  %s act %d bias %d cols %zu: y[%zu][%zu] = %.9g, "
                                       "reference %.9g (x %.9g)\n",
                                       ti__cpu_isa_name(isas[ii]), act, with_bias, cols,
                                       e / LD, e % LD, y[e], ref[e], x[e]);
                        TI_CHECK_EQ_INT(bad, 0);
                    }
    }
    ti__cpu_force_isa(-1);
    TI_CHECK(ran >= 1);
    printf("  ISAs run: %d (best here: %s)\n", ran, ti__cpu_isa_name(ti__cpu_isa_best()));
}

/* Sigmoid and SiLU on rows that lie end to end (ldy == cols) and end in a part vector: the
 * x86 blocks add the bias by rows, then take the rows as one (ti__act_rows512 / 256). Within
 * a few ulp of the scalar rule (NaN and infinities as it), the floats after the block
 * untouched; where every input is in the fast range (|x| <= 80), the same bits as the same
 * rows apart (the row-by-row path), -0 in without a bias included (both add 0: +0). A vector
 * holding a float past the fast range takes the exact-range path (ti__sigm512), whose bits
 * may differ by an ulp, and the vectors hold other floats in the two layouts. AVX2 and
 * AVX-512 each forced. */
TI_TEST(sigmoid_rows_end_to_end_same_bits) {
    static const int isas[] = {TI__ISA_AVX2, TI__ISA_AVX512};
    static const size_t cols_list[] = {2, 5, 7, 9, 17, 31, 49, 196};
    static const size_t rows_list[] = {2, 3, 7, 33};
    enum { MAXN = 33 * 196, PAD = 5 };
    static float x[MAXN], flat[MAXN + 16], apart[33 * (196 + PAD)], bias[33];
    int ran = 0;
    for (size_t ii = 0; ii < 2; ii++) {
        if (ti__cpu_force_isa(isas[ii]) != isas[ii]) continue;
        ran++;
        for (int act = TI__ACT_SIGMOID; act <= TI__ACT_SILU; act += TI__ACT_SILU - TI__ACT_SIGMOID)
            for (size_t ci = 0; ci < sizeof cols_list / sizeof cols_list[0]; ci++)
                for (size_t ri = 0; ri < sizeof rows_list / sizeof rows_list[0]; ri++)
                    for (int mode = 0; mode < 4; mode++) { /* bias: mode & 1; wide: mode & 2 */
                        int with_bias = mode & 1, wide = mode & 2;
                        size_t cols = cols_list[ci], rows = rows_list[ri], n = rows * cols;
                        size_t ld = cols + PAD;
                        for (size_t i = 0; i < n; i++) /* wide: some past the fast range */
                            x[i] = wide && i % 53 == 7 ? 12.0f * frand() : 1.5f * frand();
                        if (wide && n > 40) x[40] = NAN, x[n - 1] = -INFINITY;
                        x[n / 2] = -0.0f; /* without a bias the row path adds 0: +0 in */
                        for (size_t r = 0; r < rows; r++) bias[r] = frand() * 0.5f;
                        for (size_t i = 0; i < n; i++) {
                            flat[i] = x[i];
                            apart[i / cols * ld + i % cols] = x[i];
                        }
                        for (size_t i = n; i < n + 16; i++) flat[i] = 7.0f;
                        const float *bp = with_bias ? bias : NULL;
                        ti__act_block(act, 0.0f, 0.0f, bp, flat, cols, rows, cols);
                        ti__act_block(act, 0.0f, 0.0f, bp, apart, ld, rows, cols);
                        int bad = 0;
                        for (size_t i = 0; i < n; i++) {
                            float a = apart[i / cols * ld + i % cols];
                            float want = ti__act_apply(act, 0.0f, 0.0f,
                                                       x[i] + (bp != NULL ? bp[i / cols] : 0.0f));
                            int same = wide || memcmp(&flat[i], &a, sizeof a) == 0;
                            if ((!same || !(close_enough(flat[i], want) ||
                                            memcmp(&flat[i], &want, sizeof want) == 0)) &&
                                bad++ == 0)
                                printf("  %s act %d rows %zu cols %zu: [%zu] %.9g, apart %.9g, "
                                       "scalar %.9g\n",
                                       ti__cpu_isa_name(isas[ii]), act, rows, cols, i,
                                       flat[i], a, want);
                        }
                        for (size_t i = n; i < n + 16; i++) bad += flat[i] != 7.0f;
                        TI_CHECK_EQ_INT(bad, 0);
                    }
    }
    ti__cpu_force_isa(-1);
    if (ran == 0) printf("  no AVX2 here: nothing to compare\n");
}

/* The float32 Relu op (cpu/unary.c, ti__unary_relu_vec: AVX-512, AVX2 or NEON, each ISA
 * forced, then the best) against its rule x < 0 ? 0 : x, bit for bit: NaN (both signs) and
 * -0 stay, +-inf, random values; lengths 0 to 70 from unaligned starts, in place and out
 * of place; nothing written past the run. */
TI_TEST(unary_relu_keeps_nan_and_signed_zero) {
    static const int isas[] = {TI__ISA_SCALAR, TI__ISA_AVX2, TI__ISA_AVX512, -1};
    float x[80], y[80];
    int cases = 0;
    for (int ii = 0; ii < 4; ii++) {
        int isa = ti__cpu_force_isa(isas[ii]);
        if (isas[ii] >= 0 && isa != isas[ii]) continue;
        for (size_t n = 0; n <= 70; n++)
            for (int inplace = 0; inplace < 2; inplace++) {
                size_t off = n % 3;
                for (size_t i = 0; i < 80; i++) {
                    float v = frand();
                    unsigned u = g_seed >> 20;
                    if (u % 11 == 0) v = u & 1 ? -NAN : NAN;
                    else if (u % 13 == 0) v = u & 1 ? -0.0f : 0.0f;
                    else if (u % 17 == 0) v = u & 1 ? -INFINITY : INFINITY;
                    x[i] = v;
                    y[i] = inplace ? v : 1234.5f;
                }
                float want[80];
                for (size_t i = 0; i < 80; i++) {
                    int in = i >= off && i < off + n;
                    want[i] = in ? (x[i] < 0.0f ? 0.0f : x[i]) : y[i];
                }
                ti__ujob j;
                memset(&j, 0, sizeof j);
                j.x = inplace ? (const void *)y : (const void *)x;
                j.y = y;
                ti__unary_relu_vec(&j, off, off + n);
                int bad = 0;
                for (size_t i = 0; i < 80; i++)
                    if (memcmp(&y[i], &want[i], sizeof(float)) != 0 && bad++ == 0)
                        printf("  isa %d n=%zu inplace=%d: y[%zu] = %g, expected %g\n", isa, n,
                               inplace, i, y[i], want[i]);
                TI_CHECK_EQ_INT(bad, 0);
                cases++;
            }
    }
    ti__cpu_force_isa(-1);
    TI_CHECK(cases >= 2 * 71 * 2);
}

/* The float32 Erf op (cpu/unary.c, ti__unary_erf_vec: the vector erf of AVX-512, AVX2 or
 * NEON, each ISA forced, then the best; erff on none) against double erf: within 4e-7
 * relative on a dense sweep of [-5, 5] and on tiny values (the fit's bound is 3.2e-7),
 * odd (erf(-x) = -erf(x) bit for bit), NaN kept, -0 kept, +-inf and |x| > 4 giving +-1;
 * lengths 0 to 40 from unaligned starts touching nothing past the run. */
TI_TEST(unary_erf_within_bound) {
    static const int isas[] = {TI__ISA_SCALAR, TI__ISA_AVX2, TI__ISA_AVX512, -1};
    enum { N = 4096 };
    static float x[N], y[N];
    int ran = 0;
    for (int ii = 0; ii < 4; ii++) {
        int isa = ti__cpu_force_isa(isas[ii]);
        if (isas[ii] >= 0 && isa != isas[ii]) continue;
        ran++;
        double worst = 0.0;
        for (int pass = 0; pass < 3; pass++) {
            for (int i = 0; i < N; i++) {
                if (pass == 0) x[i] = -5.0f + 10.0f * (float)i / (float)(N - 1);
                else if (pass == 1)
                    x[i] = (i & 1 ? -1.0f : 1.0f) * ldexpf(1.0f, -(i % 120)) *
                           (1.0f + (float)i / N);
                else x[i] = frand() * 0.6f;
            }
            ti__ujob j;
            memset(&j, 0, sizeof j);
            j.x = x;
            j.y = y;
            ti__unary_erf_vec(&j, 0, N);
            for (int i = 0; i < N; i++) {
                double ref = erf((double)x[i]);
                double rel = fabs((double)y[i] - ref) / (fabs(ref) > 1e-38 ? fabs(ref) : 1e-38);
                if (rel > worst) worst = rel;
                if (rel > 4e-7) {
                    printf("  isa %d: erf(%.9g) = %.9g, expected %.9g\n", isa, x[i], y[i], ref);
                    TI_CHECK(rel <= 4e-7);
                    break;
                }
            }
        }
        printf("  isa %d: worst relative error %.3g\n", isa, worst);
        /* odd: erf(-x) = -erf(x) exactly */
        for (int i = 0; i < 64; i++) x[i] = frand(), x[64 + i] = -x[i];
        ti__ujob j;
        memset(&j, 0, sizeof j);
        j.x = x;
        j.y = y;
        ti__unary_erf_vec(&j, 0, 128);
        int odd = 1;
        for (int i = 0; i < 64; i++) odd &= y[64 + i] == -y[i];
        TI_CHECK(odd);
        /* edges */
        static const float ex[] = {NAN,       -NAN, -0.0f,  0.0f, INFINITY,
                                   -INFINITY, 4.5f, -30.0f, 1e-30f};
        float ey[9];
        j.x = ex;
        j.y = ey;
        ti__unary_erf_vec(&j, 0, 9);
        TI_CHECK(ey[0] != ey[0] && ey[1] != ey[1]);
        TI_CHECK(ey[2] == 0.0f && signbit(ey[2]) && ey[3] == 0.0f && !signbit(ey[3]));
        TI_CHECK(ey[4] == 1.0f && ey[5] == -1.0f && ey[6] == 1.0f && ey[7] == -1.0f);
        TI_CHECK(fabs(ey[8] - 1.1283791670955126e-30) <= 4e-7 * 1.1283791670955126e-30);
        /* tails: nothing written past the run */
        for (size_t n = 0; n <= 40; n++) {
            size_t off = n % 5;
            for (int i = 0; i < 64; i++) x[i] = frand(), y[i] = 1234.5f;
            j.x = x;
            j.y = y;
            ti__unary_erf_vec(&j, off, off + n);
            int bad = 0;
            for (size_t i = 0; i < 64; i++) {
                int in = i >= off && i < off + n;
                if (in ? fabs(y[i] - erf((double)x[i])) > 4e-7 * fabs(erf((double)x[i])) + 1e-37
                       : y[i] != 1234.5f)
                    bad++;
            }
            TI_CHECK_EQ_INT(bad, 0);
        }
    }
    ti__cpu_force_isa(-1);
    TI_CHECK(ran >= 2);
}

/* Softmax and LogSoftmax rows of float32 (cpu/reduce.c, ti__sm_rows_f32: the vector rows of
 * AVX-512 and AVX2 with their vector exp, each ISA forced, else the scalar rows) against
 * double: within 2e-6 relative (Softmax) or 2e-6 (1 + |y|) (LogSoftmax), on rows of 1 to
 * 70 values of spread 0.1 to 60 (large ones: no overflow after the max), rows with -inf
 * (exp 0), and a row with a NaN (all NaN); rows around it untouched. */
TI_TEST(softmax_rows_within_bound) {
    static const int isas[] = {TI__ISA_SCALAR, TI__ISA_AVX2, TI__ISA_AVX512, -1};
    float x[3 * 72], y[3 * 72];
    int ran = 0;
    for (int ii = 0; ii < 4; ii++) {
        int isa = ti__cpu_force_isa(isas[ii]);
        if (isas[ii] >= 0 && isa != isas[ii]) continue;
        ran++;
        for (int kind = TI__SM_SOFT; kind <= TI__SM_LOG; kind++)
            for (size_t n = 1; n <= 70; n++)
                for (int mode = 0; mode < 4; mode++) {
                    float spread = mode == 0 ? 0.1f : mode == 1 ? 8.0f : 60.0f;
                    for (size_t i = 0; i < 3 * n; i++)
                        x[i] = frand() * spread / 8.0f, y[i] = 1234.5f;
                    if (mode == 3) { /* -inf entries, and a NaN in the third row */
                        x[n + (size_t)(g_seed >> 9) % n] = -INFINITY;
                        x[2 * n + (size_t)(g_seed >> 13) % n] = NAN;
                    }
                    ti__sm_job j;
                    j.x = x;
                    j.y = y;
                    j.n = n;
                    j.kind = kind;
                    ti__sm_rows_f32(&j, 1, mode == 3 ? 3 : 2); /* row 0 stays untouched */
                    int bad = 0;
                    for (size_t i = 0; i < n; i++) bad += y[i] != 1234.5f;
                    for (size_t r = 1; r < 2; r++) {
                        const float *xr = x + r * n, *yr = y + r * n;
                        double mx = -INFINITY, sum = 0.0;
                        for (size_t i = 0; i < n; i++) mx = xr[i] > mx ? xr[i] : mx;
                        for (size_t i = 0; i < n; i++) sum += exp((double)xr[i] - mx);
                        for (size_t i = 0; i < n; i++) {
                            double want = kind == TI__SM_SOFT ? exp((double)xr[i] - mx) / sum
                                                              : (double)xr[i] - mx - log(sum);
                            /* float x - max costs |x - max| 2^-23 relative in exp */
                            double d = fabs((double)xr[i] - mx);
                            double tol = kind == TI__SM_SOFT ? (2e-6 + 1.2e-7 * d) * want + 1e-30
                                                             : 2e-6 * (1.0 + fabs(want));
                            int ok = want != want   ? yr[i] != yr[i] /* a row of one -inf */
                                     : isinf(want) || want == 0.0 ? yr[i] == want
                                                   : fabs(yr[i] - want) <= tol;
                            if (!ok) {
                                if (bad++ == 0)
                                    printf("  isa %d kind %d n=%zu mode %d: y[%zu] = %.9g, "
                                           "expected %.9g\n",
                                           isa, kind, n, mode, i, yr[i], want);
                            }
                        }
                    }
                    if (mode == 3)
                        for (size_t i = 0; i < n; i++) bad += !(y[2 * n + i] != y[2 * n + i]);
                    TI_CHECK_EQ_INT(bad, 0);
                }
    }
    ti__cpu_force_isa(-1);
    TI_CHECK(ran >= 2);
}

int main(void) {
    TI_RUN(row_matches_reference);
    TI_RUN(block_matches_reference_on_every_isa);
    TI_RUN(sigmoid_grouped_same_bits_as_single);
    TI_RUN(sigmoid_rows_end_to_end_same_bits);
    TI_RUN(sigmoid_sliver_rows_same_bits_as_single);
    TI_RUN(column_block_matches_reference);
    TI_RUN(sigmoid_and_silu_accuracy);
    TI_RUN(unary_relu_keeps_nan_and_signed_zero);
    TI_RUN(unary_erf_within_bound);
    TI_RUN(softmax_rows_within_bound);
    return ti_test_summary();
}
