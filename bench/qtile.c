/* qtile: the 8-bit GEMM's tile path (AMX, ti__qg8_amx_rq) against the VNNI kernel that
 * requantizes in registers (ti__qg8_micro_rq_vnni), on the 1x1 convs of MobileNetV2 (rows =
 * the map's pixels, depth, columns), one thread: the best of many passes over every row,
 * as core/qgemm.c drives them (tiles over blocks of 32 rows, VNNI over blocks of 8 rows and
 * 32 columns), and their ratio. Both read A in place and write bytes; the weights are packed
 * once. Run on a CPU with AMX (the tile path is not timed elsewhere).
 * Build: cc -O2 -I. bench/qtile.c -o qtile -lm -ldl -pthread
 * Usage: qtile [ROWSxDEPTHxCOLS ...] (default: MobileNetV2's shapes) */
#define TINYINFER_IMPLEMENTATION
#include "tinyinfer.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static unsigned g_seed = 12345u;
static unsigned rnd(void) {
    g_seed = g_seed * 1664525u + 1013904223u;
    return g_seed >> 8;
}

#if defined(TI__X86_AMX)
/* The best time in ms of passes repeated for about 0.3 s, of the tiles (amx 1) or VNNI. */
static double time_shape(int amx, size_t rows, size_t kd, size_t nc, const uint8_t *a,
                         const int8_t *b, const int32_t *colc, const int32_t *ini,
                         const ti__qg8_rqt *t, uint8_t *out) {
    size_t kq = kd / 4, sq = ti__qg8_amx_step(kq), bs = kq * 64, nblk = (nc + 15) / 16;
    double best = 1e9, t_end = now_s() + 0.3;
    for (int pass = 0; pass < 5 || now_s() < t_end; pass++) {
        double t0 = now_s();
        size_t r0 = 0;
        if (amx)
            for (; r0 < rows / 16 * 16; r0 = rows / 16 * 16)
                ti__qg8_amx_rq(rows / 16 * 16, kq, sq, a, kd, 1, b, bs, nc, ini, 0, t, out, nc);
        for (; r0 < rows; r0 += 8)
            for (size_t j = 0; j < nblk; j += 2) {
                ti__qg8_rqt tj = {t->s + j * 16, t->e + j * 16, t->mult + j * 16,
                                  t->shift + j * 16, t->yo, t->lo, t->hi};
                ti__qg8_micro_rq_vnni(kq, a + r0 * kd, kd, 1, b + j * bs, bs,
                                      nblk - j > 1 ? 2 : 1, colc + j * 16, NULL, &tj,
                                      TI__MIN((size_t)8, rows - r0),
                                      TI__MIN(nc - j * 16, (size_t)32), out + r0 * nc + j * 16,
                                      nc);
            }
        double dt = now_s() - t0;
        if (dt < best) best = dt;
    }
    return best * 1e3;
}
#endif

int main(int argc, char **argv) {
#if defined(TI__X86_AMX)
    static const char *dflt[] = {"12544x16x96", "3136x96x24",  "3136x24x144", "3136x144x24",
                                 "784x144x32",  "784x32x192",  "784x192x32",  "196x192x64",
                                 "196x64x384",  "196x384x64",  "196x384x96",  "196x96x576",
                                 "196x576x96",  "49x576x160",  "49x160x960",  "49x960x160",
                                 "49x960x320",  "49x320x1280"};
    if (ti__cpu_isa_best() < TI__ISA_AMX) {
        printf("this CPU or OS has no AMX: nothing to time\n");
        return 0;
    }
    int n = argc > 1 ? argc - 1 : (int)(sizeof dflt / sizeof dflt[0]);
    printf("| rows x depth x cols | VNNI ms | AMX ms | AMX / VNNI |\n|---|---:|---:|---:|\n");
    double sv = 0, sa = 0;
    for (int i = 0; i < n; i++) {
        const char *sh = argc > 1 ? argv[i + 1] : dflt[i];
        size_t rows, kd, nc;
        if (sscanf(sh, "%zux%zux%zu", &rows, &kd, &nc) != 3 || kd % 4 != 0 || nc > 1280 ||
            ti__qg8_amx_step(kd / 4) == 0) {
            printf("| %s | (not a tile shape: depth a multiple of 4 in whole steps, <= 1280 "
                   "columns) | | |\n", sh);
            continue;
        }
        size_t kq = kd / 4, nblk = (nc + 15) / 16, ncp = nblk * 16 + 32;
        uint8_t *a = (uint8_t *)malloc(rows * kd), *out = (uint8_t *)malloc(rows * nc);
        int8_t *b = (int8_t *)calloc(nblk * kq * 64, 1);
        int32_t *v = (int32_t *)calloc(ncp * 6, sizeof(int32_t));
        float *f = (float *)calloc(ncp * 2, sizeof(float));
        int32_t *colc = v, *ini = v + ncp, *csum = v + 2 * ncp, *bias = v + 3 * ncp;
        int32_t *mult = v + 4 * ncp, *shift = v + 5 * ncp;
        for (size_t k = 0; k < rows * kd; k++) a[k] = (uint8_t)rnd();
        for (size_t k = 0; k < nblk * kq * 64; k++) b[k] = (int8_t)(rnd() % 255 - 127);
        for (size_t c = 0; c < nc; c++) {
            csum[c] = (int32_t)(rnd() % 2000) - 1000;
            bias[c] = (int32_t)(rnd() % 2000) - 1000;
            mult[c] = (int32_t)(1u << 30) + (int32_t)(rnd() % 1000);
            shift[c] = -8;
        }
        ti__qg8_plan_vnni(nc, bias, csum, 0, colc, mult, shift, 0, -128, 127, f, f + ncp);
        for (size_t c = 0; c < nc; c++) ini[c] = colc[c]; /* timing only: no int8 term */
        ti__qg8_rqt t = {f, f + ncp, mult, shift, 0, -128, 127};
        double tv = time_shape(0, rows, kd, nc, a, b, colc, ini, &t, out);
        double ta = time_shape(1, rows, kd, nc, a, b, colc, ini, &t, out);
        sv += tv, sa += ta;
        printf("| %s | %.4f | %.4f | %.2f |\n", sh, tv, ta, ta / tv);
        free(a), free(out), free(b), free(v), free(f);
    }
    printf("| all | %.4f | %.4f | %.2f |\n", sv, sa, sa / sv);
#else
    (void)argc, (void)argv;
    printf("built without the AMX kernels (x86-64 Linux, GCC >= 11 or Clang >= 12)\n");
#endif
    return 0;
}
