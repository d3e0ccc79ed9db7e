/* The fused-activation row loop of the float32 Conv paths (ti__act_row, cpu/conv.c)
 * against the per-element reference ti__act_apply (core/internal.h): bit for bit, for
 * every activation, with and without a bias, on random values and on the edges (+-0,
 * +-inf, NaN, values around the clamp bounds), and on lengths around vector widths. */
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

int main(void) {
    TI_RUN(row_matches_reference);
    return ti_test_summary();
}
