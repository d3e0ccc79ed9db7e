/* The max-pooling row kernels (ti__maxpool_row_fn: cpu/conv_fast.c scalar, cpu/x86 AVX2
 * and AVX-512, each ISA forced) against a plain loop of MaxPool's rule (the first tap, then
 * a value only when greater): bit for bit, on random rows with NaN, +-0 and infinities, for
 * strides 1 and 2, kernel widths 1 to 7, 1 to 4 rows and lengths around the vector widths;
 * nothing written past the segment. (MaxPool through sessions, padding and ceil mode
 * included, is covered by the ONNX node suite in the conformance job.) */
#define TINYINFER_IMPLEMENTATION
#include "tinyinfer.h"
#include "ti_test.h"

static unsigned g_seed = 777u;
static unsigned urand(void) {
    g_seed = g_seed * 1664525u + 1013904223u;
    return g_seed >> 8;
}
static float frand(void) {
    unsigned u = urand();
    if (u % 23 == 0) return NAN;
    if (u % 29 == 0) return (u & 64) ? -0.0f : 0.0f;
    if (u % 31 == 0) return (u & 64) ? -INFINITY : INFINITY;
    return (float)(u & 0xffff) / 4096.0f - 8.0f;
}

TI_TEST(row_kernels_match_the_rule) {
    static const int isas[] = {TI__ISA_SCALAR, TI__ISA_AVX2, TI__ISA_AVX512};
    static const size_t lens[] = {1, 2, 7, 8, 9, 15, 16, 17, 31, 33, 55};
    enum { W = 2 * 55 + 8, CAP = 64 };
    float rows[4][W], y[CAP], ref[CAP];
    int ran = 0, cases = 0;
    for (int ii = 0; ii < 3; ii++) {
        if (ti__cpu_force_isa(isas[ii]) != isas[ii]) continue;
        ran++;
        const ti__dw_isa *isa = ti__dw_pick_isa();
        for (int S = 1; S <= 2; S++)
            for (int K = 1; K <= 7; K++)
                for (int nr = 1; nr <= 4; nr++)
                    for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
                        size_t n = lens[li];
                        const float *xr[4];
                        for (int r = 0; r < 4; r++) {
                            for (int i = 0; i < W; i++) rows[r][i] = frand();
                            xr[r] = rows[r];
                        }
                        for (size_t i = 0; i < CAP; i++) y[i] = ref[i] = 1234.5f;
                        for (size_t i = 0; i < n; i++) {
                            float m = xr[0][i * (size_t)S];
                            for (int r = 0; r < nr; r++)
                                for (int q = 0; q < K; q++) {
                                    float v = xr[r][i * (size_t)S + (size_t)q];
                                    if (v > m) m = v;
                                }
                            ref[i] = m;
                        }
                        isa->maxrow[S == 2](y, n, xr, nr, K);
                        int bad = 0;
                        for (size_t i = 0; i < CAP; i++)
                            if (memcmp(&y[i], &ref[i], sizeof(float)) != 0 && bad++ == 0)
                                printf("  %s S=%d K=%d rows=%d n=%zu: y[%zu] = %g, expected %g\n",
                                       ti__cpu_isa_name(isas[ii]), S, K, nr, n, i, y[i], ref[i]);
                        TI_CHECK_EQ_INT(bad, 0);
                        cases++;
                    }
    }
    ti__cpu_force_isa(-1);
    TI_CHECK(ran >= 1 && cases == ran * 2 * 7 * 4 * 11);
    printf("  ISAs run: %d, %d cases\n", ran, cases);
}

int main(void) {
    TI_RUN(row_kernels_match_the_rule);
    return ti_test_summary();
}
