/* The float32 runs of the broadcast binary ops (ti__bin_f32, cpu/binary.c) with each ISA
 * forced (scalar, AVX2, AVX-512: the vector forms in cpu/x86/binary_x86.c; NEON on aarch64:
 * cpu/arm/binary_neon.c): Add, Sub, Mul,
 * Div, Sum and Mean, each input a run or one repeated value, bit for bit against the same
 * float operation done here, on random values and on the edges (+-0, +-inf, NaN,
 * subnormals), on lengths around the vector widths, in place too, and never writing past
 * the run. Then a whole Mul with a per-channel operand ([1,C,H,W] * [1,C,1,1], the
 * squeeze-excitation scale) on every ISA against the scalar answer. */
#define TINYINFER_IMPLEMENTATION
#include "tinyinfer.h"
#include "ti_test.h"

static unsigned g_seed = 777u;
static float frand(void) {
    g_seed = g_seed * 1664525u + 1013904223u;
    return (float)(g_seed >> 8) / 1048576.0f - 8.0f; /* [-8, 8) */
}

static float ref_op(int op, float x, float y) {
    switch (op) {
    case TI__BOP_SUB: return x - y;
    case TI__BOP_MUL: return x * y;
    case TI__BOP_DIV: return x / y;
    default: return x + y; /* Add, Sum, Mean */
    }
}

/* equal bits, or both NaN */
static int same(float a, float b) {
    return memcmp(&a, &b, sizeof a) == 0 || (isnan(a) && isnan(b));
}

TI_TEST(runs_match_reference_on_every_isa) {
    static const int ops[] = {TI__BOP_ADD, TI__BOP_SUB, TI__BOP_MUL, TI__BOP_DIV, TI__BOP_SUM,
                              TI__BOP_MEAN};
    static const int isas[] = {TI__ISA_SCALAR, TI__ISA_AVX2, TI__ISA_AVX512};
    static const size_t lens[] = {1, 7, 8, 9, 15, 16, 17, 31, 33, 47, 64, 101};
    static const float edges[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-40f, -3e-39f,
                                  3.4e38f, 1.0f, -1.0f};
    enum { CAP = 128, GUARD = 8 };
    float a[CAP], b[CAP], o[CAP + GUARD], ref[CAP];
    int ran = 0;
    for (int ii = 0; ii < 3; ii++) {
        if (ti__cpu_force_isa(isas[ii]) != isas[ii]) continue; /* not on this CPU */
        ran++;
        for (size_t oi = 0; oi < sizeof ops / sizeof ops[0]; oi++)
            for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
                for (int mode = 0; mode < 5; mode++) { /* sa/sb: 11, 10, 01, 00; 4: in place */
                    size_t n = lens[li];
                    int sa = mode == 4 || !(mode & 2), sb = mode == 4 || !(mode & 1);
                    for (size_t i = 0; i < CAP; i++) {
                        a[i] = frand();
                        b[i] = frand();
                    }
                    for (size_t i = 0; i < 10 && i < n; i++) {
                        a[(i * 7) % n] = edges[i];
                        b[(i * 3 + 1) % n] = edges[(i + 4) % 10];
                    }
                    for (size_t i = 0; i < n; i++)
                        ref[i] = ref_op(ops[oi], a[sa ? i : 0], b[sb ? i : 0]);
                    for (size_t i = 0; i < CAP + GUARD; i++) o[i] = 12345.0f;
                    ti__bjob j;
                    memset(&j, 0, sizeof j);
                    j.op = ops[oi];
                    j.in[0] = a;
                    j.in[1] = b;
                    float *out = o;
                    if (mode == 4) { /* o = a (in place) */
                        memcpy(o, a, sizeof a);
                        j.in[0] = o;
                    }
                    j.out = out;
                    size_t off[TI__BCAST_MAX_IN] = {0, 0, 0}, step[TI__BCAST_MAX_IN] = {0, 0, 0};
                    step[0] = (size_t)sa;
                    step[1] = (size_t)sb;
                    ti__bin_f32(&j, 0, off, step, n);
                    int bad = 0;
                    for (size_t i = 0; i < n; i++)
                        if (!same(out[i], ref[i]) && bad++ == 0)
                            printf("  %s op %d n %zu mode %d: o[%zu] = %.9g, expected %.9g\n",
                                   ti__cpu_isa_name(isas[ii]), ops[oi], n, mode, i, out[i],
                                   ref[i]);
                    for (size_t i = n; i < CAP + GUARD && mode != 4; i++)
                        if (o[i] != 12345.0f && bad++ == 0)
                            printf("  %s op %d n %zu: wrote o[%zu] past the run\n",
                                   ti__cpu_isa_name(isas[ii]), ops[oi], n, i);
                    if (mode == 4)
                        for (size_t i = n; i < CAP; i++)
                            if (!same(o[i], a[i]) && bad++ == 0)
                                printf("  %s op %d n %zu: in place, wrote o[%zu] past the run\n",
                                       ti__cpu_isa_name(isas[ii]), ops[oi], n, i);
                    TI_CHECK_EQ_INT(bad, 0);
                }
    }
    ti__cpu_force_isa(-1);
    TI_CHECK(ran >= 1);
    printf("  ISAs run: %d (best here: %s)\n", ran, ti__cpu_isa_name(ti__cpu_isa_best()));
}

/* [1,C,H,W] * [1,C,1,1] as the broadcast walk (ti__bcast_range) runs it: one call of the
 * inner function per channel run, ranges split inside a run as two threads would. */
TI_TEST(channel_scale_walk_on_every_isa) {
    static const int isas[] = {TI__ISA_SCALAR, TI__ISA_AVX2, TI__ISA_AVX512};
    enum { C = 13, HW = 7 * 5 };
    static float x[C * HW], s[C], y[C * HW], want[C * HW];
    for (int i = 0; i < C * HW; i++) x[i] = frand();
    for (int c = 0; c < C; c++) s[c] = frand();
    for (int c = 0; c < C; c++)
        for (int i = 0; i < HW; i++) want[c * HW + i] = x[c * HW + i] * s[c];
    for (int ii = 0; ii < 3; ii++) {
        if (ti__cpu_force_isa(isas[ii]) != isas[ii]) continue;
        ti__bjob j;
        memset(&j, 0, sizeof j);
        j.op = TI__BOP_MUL;
        j.fn = ti__bin_f32;
        j.in[0] = x;
        j.in[1] = s;
        j.out = y;
        j.bc.n_in = 2;
        j.bc.rank = 2; /* dims outer to inner: C, HW; s steps per channel only */
        j.bc.dims[0] = C;
        j.bc.dims[1] = HW;
        j.bc.str[0][0] = HW;
        j.bc.str[0][1] = 1;
        j.bc.str[1][0] = 1;
        j.bc.str[1][1] = 0;
        j.bc.total = (size_t)C * HW;
        memset(y, 0, sizeof y);
        /* two ranges, split inside a channel run, as two threads would */
        ti__bcast_range(&j, 0, 3 * HW + 11);
        ti__bcast_range(&j, 3 * HW + 11, (size_t)C * HW);
        int bad = 0;
        for (int i = 0; i < C * HW; i++)
            if (!same(y[i], want[i]) && bad++ == 0)
                printf("  %s: y[%d] = %.9g, expected %.9g\n", ti__cpu_isa_name(isas[ii]), i,
                       y[i], want[i]);
        TI_CHECK_EQ_INT(bad, 0);
    }
    ti__cpu_force_isa(-1);
}

int main(void) {
    TI_RUN(runs_match_reference_on_every_isa);
    TI_RUN(channel_scale_walk_on_every_isa);
    return ti_test_summary();
}
