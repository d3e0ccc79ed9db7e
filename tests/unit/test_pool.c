/* The max-pooling row kernels (ti__maxpool_row_fn: cpu/conv_fast.c scalar, cpu/x86 AVX2
 * and AVX-512, each ISA forced) against a plain loop of MaxPool's rule (the first tap, then
 * a value only when greater): bit for bit, on random rows with NaN, +-0 and infinities, for
 * strides 1 and 2, kernel widths 1 to 7, 1 to 4 rows and lengths around the vector widths;
 * nothing written past the segment. Then whole planes (the flat path of cpu/pool.c) the
 * same way; and the plane sums of GlobalAveragePool, also ReduceMean / ReduceSum's over
 * contiguous runs (through sessions). (MaxPool through sessions, padding and ceil mode
 * included, is covered by the ONNX node suite in the conformance job.) */
#define TINYINFER_IMPLEMENTATION
#include "tinyinfer.h"
#include "ti_test.h"
#include "onnx_build.h"

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

/* As frand without NaN and -0: rows where any order of the taps gives the rule's bits, and
 * then (mode 2) one such value at a random place, which only the rule's order handles. */
static float frand_clean(void) {
    float v = frand();
    return v != v || (v == 0.0f && signbit(v)) ? 1.5f : v;
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
        /* rows: 0 random with NaN, +-0 and infinities everywhere; 1 none of NaN and -0;
         * 2 as 1 with one NaN or -0 at a random place */
        for (int mode = 0; mode < 3; mode++)
        for (int S = 1; S <= 2; S++)
            for (int K = 1; K <= 7; K++)
                for (int nr = 1; nr <= 4; nr++)
                    for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
                        size_t n = lens[li];
                        const float *xr[4];
                        for (int r = 0; r < 4; r++) {
                            for (int i = 0; i < W; i++) rows[r][i] = mode ? frand_clean() : frand();
                            xr[r] = rows[r];
                        }
                        if (mode == 2)
                            rows[urand() % (unsigned)nr][urand() % (2 * n + 1)] =
                                urand() % 2 ? NAN : -0.0f;
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
    TI_CHECK(ran >= 1 && cases == ran * 3 * 2 * 7 * 4 * 11);
    printf("  ISAs run: %d, %d cases\n", ran, cases);
}

/* The kernels for whole rows of 3 x 3 windows at stride 2 (ti__maxpool_k3s2_fn, where an ISA
 * has one) against the rule, bit for bit: 1 to 5 rows of windows, 1 to 40 a row (one vector
 * and several, whole and partial), rows of x and y with padding between them; the padding
 * of y and the floats after it keep their value; x ends where the last row read ends, so
 * AddressSanitizer sees a read past column 2 n. */
TI_TEST(k3s2_rows_match_the_rule) {
    static const int isas[] = {TI__ISA_SCALAR, TI__ISA_AVX2, TI__ISA_AVX512};
    int ran = 0, cases = 0;
    for (int ii = 0; ii < 3; ii++) {
        if (ti__cpu_force_isa(isas[ii]) != isas[ii]) continue;
        ti__maxpool_k3s2_fn k3s2 = ti__dw_pick_isa()->mp_k3s2;
        if (k3s2 == NULL) continue;
        ran++;
        for (int it = 0; it < 400; it++) {
            size_t n = 1 + urand() % 40, rows = 1 + urand() % 5;
            size_t ldx = 2 * n + 1 + urand() % 5, ldy = n + urand() % 4;
            size_t nx = (2 * rows) * ldx + 2 * n + 1, ny = rows * ldy + 16;
            float *x = (float *)malloc(nx * sizeof(float));
            float *y = (float *)malloc(ny * sizeof(float));
            if (!x || !y) {
                TI_CHECK(!"out of memory");
                free(x), free(y);
                break;
            }
            int mode = it % 3;
            for (size_t i = 0; i < nx; i++) x[i] = mode ? frand_clean() : frand();
            if (mode == 2) x[urand() % nx] = urand() % 2 ? NAN : -0.0f;
            for (size_t i = 0; i < ny; i++) y[i] = 1234.5f;
            k3s2(y, ldy, n, x, ldx, rows);
            int bad = 0;
            for (size_t r = 0; r < rows; r++)
                for (size_t i = 0; i < ldy; i++) {
                    float want = 1234.5f;
                    if (i < n) {
                        want = x[2 * r * ldx + 2 * i];
                        for (size_t t = 0; t < 3; t++)
                            for (size_t q = 0; q < 3; q++) {
                                float v = x[(2 * r + t) * ldx + 2 * i + q];
                                if (v > want) want = v;
                            }
                    }
                    if (memcmp(&y[r * ldy + i], &want, sizeof want) != 0 && bad++ == 0)
                        printf("  %s n=%zu rows=%zu: y[%zu][%zu] = %g, expected %g\n",
                               ti__cpu_isa_name(isas[ii]), n, rows, r, i, y[r * ldy + i], want);
                }
            for (size_t i = rows * ldy; i < ny; i++) bad += y[i] != 1234.5f;
            TI_CHECK_EQ_INT(bad, 0);
            cases++;
            free(x), free(y);
        }
    }
    ti__cpu_force_isa(-1);
    printf("  ISAs with the kernel: %d, %d cases\n", ran, cases);
    TI_CHECK(cases == ran * 400);
#if defined(TI__X86_SIMD)
    if (ti__cpu_isa() >= TI__ISA_AVX512) TI_CHECK(ran >= 1); /* AVX-512 has one */
#endif
}

/* Whole 2-D MaxPool planes through ti__pool_planes (the flat path of cpu/pool.c where the
 * geometry allows it, the row path where not) against the rule, bit for bit: random planes
 * with NaN, +-0 and infinities, square kernels 1 to 6, strides 1 and 2, pads up to K - 1 on
 * each side, a ceil-mode extra row and column at times, maps up to 150 rows (strips) and
 * a few too wide for the flat buffer; nothing written past the planes. */
TI_TEST(maxpool_planes_match_the_rule) {
    static const int isas[] = {TI__ISA_SCALAR, TI__ISA_AVX2, TI__ISA_AVX512};
    int ran = 0, cases = 0;
    for (int ii = 0; ii < 3; ii++) {
        if (ti__cpu_force_isa(isas[ii]) != isas[ii]) continue;
        ran++;
        for (int it = 0; it < 120; it++) {
            ti__poolp p;
            memset(&p, 0, sizeof p);
            /* every third plane 3 x 3 at stride 2 (ti__maxpool_k3s2_fn where the ISA has it) */
            int64_t K = it % 3 == 2 ? 3 : 1 + (int64_t)(urand() % 6);
            int64_t S = it % 3 == 2 ? 2 : 1 + (int64_t)(urand() % 2);
            int64_t H = 1 + (int64_t)(urand() % (it % 10 == 0 ? 150 : 40));
            int64_t W = it % 40 == 1 ? 1300 + (int64_t)(urand() % 200) : 1 + (int64_t)(urand() % 60);
            int64_t pt = (int64_t)(urand() % (unsigned)K), pl = (int64_t)(urand() % (unsigned)K);
            int64_t pb = (int64_t)(urand() % (unsigned)K), pr = (int64_t)(urand() % (unsigned)K);
            if (H + pt + pb < K) pb = K - H - pt;
            if (W + pl + pr < K) pr = K - W - pl;
            int64_t OH = (H + pt + pb - K) / S + 1 + (urand() % 4 == 0);
            int64_t OW = (W + pl + pr - K) / S + 1 + (urand() % 4 == 0);
            p.nd = 2;
            p.n = 1;
            p.c = 1 + (int64_t)(urand() % 3);
            p.in[0] = p.k[0] = p.s[0] = p.d[0] = p.out[0] = 1;
            p.in[1] = H, p.in[2] = W, p.k[1] = p.k[2] = K, p.s[1] = p.s[2] = S;
            p.d[1] = p.d[2] = 1, p.pb[1] = pt, p.pb[2] = pl, p.pe[1] = pb, p.pe[2] = pr;
            p.out[1] = OH, p.out[2] = OW;
            p.in_sp = (size_t)(H * W), p.out_sp = (size_t)(OH * OW);
            size_t nx = (size_t)p.c * p.in_sp, ny = (size_t)p.c * p.out_sp;
            float *x = (float *)malloc(nx * sizeof(float));
            float *y = (float *)malloc((ny + 16) * sizeof(float));
            float *ref = (float *)malloc(ny * sizeof(float));
            if (!x || !y || !ref) {
                TI_CHECK(!"out of memory");
                free(x), free(y), free(ref);
                break;
            }
            for (size_t i = 0; i < nx; i++) x[i] = frand();
            for (size_t i = 0; i < ny + 16; i++) y[i] = 1234.5f;
            for (int64_t c = 0; c < p.c; c++)
                for (int64_t oh = 0; oh < OH; oh++)
                    for (int64_t ow = 0; ow < OW; ow++) {
                        float m = 0.0f;
                        int first = 1;
                        for (int64_t kh = 0; kh < K; kh++)
                            for (int64_t kw = 0; kw < K; kw++) {
                                int64_t ih = oh * S - pt + kh, iw = ow * S - pl + kw;
                                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                                float v = x[(size_t)c * p.in_sp + (size_t)(ih * W + iw)];
                                if (first || v > m) m = v;
                                first = 0;
                            }
                        ref[(size_t)c * p.out_sp + (size_t)(oh * OW + ow)] = m;
                    }
            ti_tensor tx, ty;
            memset(&tx, 0, sizeof tx);
            memset(&ty, 0, sizeof ty);
            tx.dtype = ty.dtype = TI_DTYPE_F32;
            tx.data = x, ty.data = y;
            ti__pool_job j;
            memset(&j, 0, sizeof j);
            j.p = &p, j.kind = TI__POOL_MAX, j.x = &tx, j.y = &ty;
            ti__pool_planes(&j, 0, (size_t)p.c);
            int bad = 0;
            for (size_t i = 0; i < ny; i++)
                if (memcmp(&y[i], &ref[i], sizeof(float)) != 0 && bad++ == 0)
                    printf("  %s K=%lld S=%lld %lldx%lld pads %lld,%lld,%lld,%lld out %lldx%lld: "
                           "y[%zu] = %g, expected %g\n",
                           ti__cpu_isa_name(isas[ii]), (long long)K, (long long)S, (long long)H,
                           (long long)W, (long long)pt, (long long)pl, (long long)pb,
                           (long long)pr, (long long)OH, (long long)OW, i, y[i], ref[i]);
            for (size_t i = ny; i < ny + 16; i++) bad += y[i] != 1234.5f;
            TI_CHECK_EQ_INT(bad, 0);
            cases++;
            free(x), free(y), free(ref);
        }
    }
    ti__cpu_force_isa(-1);
    TI_CHECK(ran >= 1 && cases == ran * 120);
    printf("  ISAs run: %d, %d planes cases\n", ran, cases);
}

/* The plane sums of GlobalAveragePool (ti__dw_sum_fn) against a double sum, each ISA forced:
 * every length 0 to 300 and a few long ones, from an unaligned start, values of magnitude 1
 * to 2 with random signs. The bound is the worst case of float additions, (n + 1) * 2^-24 *
 * sum |x|, far below 1: an element missed or added twice is caught at every length. The
 * buffer ends where the sum ends, so AddressSanitizer sees a read past it. */
TI_TEST(plane_sums_match_a_double_sum) {
    static const int isas[] = {TI__ISA_SCALAR, TI__ISA_AVX2, TI__ISA_AVX512};
    int ran = 0, cases = 0;
    for (int ii = 0; ii < 3; ii++) {
        if (ti__cpu_force_isa(isas[ii]) != isas[ii]) continue;
        ran++;
        const ti__dw_isa *isa = ti__dw_pick_isa();
        for (size_t n = 0; n <= 1000; n = n < 300 ? n + 1 : n + 233) {
            float *buf = (float *)malloc((n + 1) * sizeof(float));
            TI_REQUIRE(buf != NULL);
            float *x = buf + 1; /* 4 bytes past an aligned start */
            double ref = 0.0, mag = 0.0;
            for (size_t i = 0; i < n; i++) {
                unsigned u = urand();
                x[i] = (1.0f + (float)(u & 0xfff) / 4096.0f) * ((u & 0x1000) ? -1.0f : 1.0f);
                ref += x[i];
                mag += fabs(x[i]);
            }
            double got = isa->sum(x, n), tol = (double)(n + 1) * ldexp(1.0, -24) * mag;
            if (!(fabs(got - ref) <= tol))
                printf("  %s n=%zu: sum %.9g, expected %.9g (tolerance %.3g)\n",
                       ti__cpu_isa_name(isas[ii]), n, got, ref, tol);
            TI_CHECK(fabs(got - ref) <= tol);
            free(buf);
            cases++;
        }
    }
    ti__cpu_force_isa(-1);
    TI_CHECK(ran >= 1 && cases == ran * 304);
    printf("  ISAs run: %d, %d lengths each\n", ran, cases / (ran ? ran : 1));
}

/* ReduceMean and ReduceSum through a session on x [3, 7, 45]: over axes {2} and {1, 2} the
 * reduced elements of each output are one contiguous run (cpu/reduce.c's float32 fast path,
 * the plane sum), over {1} they are not (the double loop); each ISA forced, 1 and 2
 * threads, against double sums with the float bound of plane_sums_match_a_double_sum. */
TI_TEST(reduce_mean_and_sum_over_runs) {
    static const int isas[] = {TI__ISA_SCALAR, TI__ISA_AVX2, TI__ISA_AVX512};
    enum { A = 3, B = 7, C = 45 };
    static const int64_t axes_sets[3][2] = {{2, -1}, {1, 2}, {1, -1}};
    float x[A * B * C];
    for (int i = 0; i < A * B * C; i++) {
        unsigned u = urand();
        x[i] = (1.0f + (float)(u & 0xfff) / 4096.0f) * ((u & 0x1000) ? -1.0f : 1.0f);
    }
    int cases = 0;
    for (int op = 0; op < 2; op++)
        for (int as = 0; as < 3; as++) {
            int nax = axes_sets[as][1] < 0 ? 1 : 2;
            int64_t dx[3] = {A, B, C}, dy[3] = {A, B, C};
            for (int q = 0; q < nax; q++) dy[axes_sets[as][q]] = 1;
            ob_model mb;
            ob_init(&mb, 13);
            ob_input(&mb, "x", OB_FLOAT, 3, dx);
            ob_buf at;
            memset(&at, 0, sizeof at);
            ob_attr_ints(&at, "axes", nax, axes_sets[as]);
            if (op == 0) {
                ob_node_attrs(&mb, "ReduceMean", "r", "x", "y", &at);
            } else { /* ReduceSum (opset 13): axes as an input */
                int64_t na = nax;
                ob_init_i64(&mb, "axes", 1, &na, axes_sets[as]);
                ob_node(&mb, "ReduceSum", "r", "x,axes", "y");
                free(at.p);
            }
            ob_output(&mb, "y", OB_FLOAT, 3, dy);
            size_t size;
            unsigned char *bytes = ob_finish(&mb, &size);
            ti_error err;
            ti_model *mod = ti_model_load_memory(bytes, size, NULL, &err);
            TI_REQUIRE(mod != NULL);
            for (int ii = 0; ii < 3; ii++) {
                if (ti__cpu_force_isa(isas[ii]) != isas[ii]) continue;
                for (int threads = 1; threads <= 2; threads++) {
                    ti_session_desc d;
                    memset(&d, 0, sizeof d);
                    d.num_threads = threads;
                    d.backend = TI_BACKEND_CPU;
                    ti_session *s = ti_session_create(mod, &d, &err);
                    TI_REQUIRE(s != NULL);
                    memcpy(ti_session_input(s, 0)->data, x, sizeof x);
                    TI_CHECK_EQ_INT(ti_session_run(s, &err), TI_OK);
                    const float *y = (const float *)ti_session_output(s, 0)->data;
                    int bad = 0;
                    for (int64_t a = 0; a < dy[0]; a++)
                        for (int64_t b = 0; b < dy[1]; b++)
                            for (int64_t c = 0; c < dy[2]; c++) {
                                double ref = 0.0, mag = 0.0;
                                size_t n = 0;
                                for (int64_t i = 0; i < A; i++)
                                    for (int64_t j = 0; j < B; j++)
                                        for (int64_t k = 0; k < C; k++) {
                                            if ((dy[0] == A && i != a) || (dy[1] == B && j != b) ||
                                                (dy[2] == C && k != c))
                                                continue;
                                            double v = x[(i * B + j) * C + k];
                                            ref += v;
                                            mag += fabs(v);
                                            n++;
                                        }
                                double tol = (double)(n + 1) * ldexp(1.0, -24) * mag;
                                if (op == 0) {
                                    ref /= (double)n;
                                    tol /= (double)n;
                                }
                                tol += fabs(ref) * ldexp(1.0, -24); /* the float result */
                                double got = y[(a * dy[1] + b) * dy[2] + c];
                                if (!(fabs(got - ref) <= tol) && bad++ == 0)
                                    printf("  %s axes set %d %s threads %d: y[%lld,%lld,%lld] = "
                                           "%.9g, expected %.9g\n",
                                           op ? "ReduceSum" : "ReduceMean", as,
                                           ti__cpu_isa_name(isas[ii]), threads, (long long)a,
                                           (long long)b, (long long)c, got, ref);
                            }
                    TI_CHECK_EQ_INT(bad, 0);
                    ti_session_destroy(s);
                    cases++;
                }
            }
            ti__cpu_force_isa(-1);
            ti_model_free(mod);
            free(bytes);
        }
    TI_CHECK(cases >= 12);
    printf("  %d sessions\n", cases);
}

int main(void) {
    TI_RUN(row_kernels_match_the_rule);
    TI_RUN(k3s2_rows_match_the_rule);
    TI_RUN(maxpool_planes_match_the_rule);
    TI_RUN(plane_sums_match_a_double_sum);
    TI_RUN(reduce_mean_and_sum_over_runs);
    return ti_test_summary();
}
