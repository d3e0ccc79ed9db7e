/* The float32 GEMM (ti__sgemm_ref) under each instruction set forced in turn (scalar, AVX2,
 * AVX-512 on x86; scalar, NEON, NEON with dotprod on aarch64; one the CPU lacks is a skip), against a double-precision loop: random and edge
 * shapes, every trans_a/trans_b combination, alpha/beta variants (beta 0 must not read C:
 * C starts as NaN), padded leading dimensions whose padding must stay untouched, one and
 * two threads. Then a whole model (light_squeezenet.onnx) under each ISA against the
 * scalar ISA, and the TINYINFER_ISA names. Also the thread pool's split of a range. */
#define TINYINFER_IMPLEMENTATION
#include "tinyinfer.h"
#include "ti_test.h"
#ifndef TI_NO_THREADS
#include <pthread.h> /* the pool tests' own bookkeeping (MinGW-w64's winpthreads on Windows) */
#endif

static unsigned g_seed = 12345u;
static unsigned urand(void) {
    g_seed = g_seed * 1664525u + 1013904223u;
    return g_seed >> 8;
}
static float frand(void) { return (float)(urand() & 0xffff) / 32768.0f - 1.0f; }
static size_t dim(size_t lo, size_t hi) { return lo + urand() % (hi - lo + 1); }

static const float SENTINEL = 1234.5f; /* in the padding of C: must survive */

typedef struct gcase {
    int ta, tb;
    size_t m, n, k, lda, ldb, ldc;
    float alpha, beta;
    float *a, *b, *c0; /* inputs; c0: C before the call */
    double *ref, *scale; /* expected C, and sum of |terms| per element (error scale) */
} gcase;

/* When at least A's row length: A's row stride (a multiple of 128 floats puts A's rows on
 * a few L1 sets: the GEMM then packs A, ti__sgemm_isa.pack_a) */
static size_t g_lda = 0;

/* run_case through ti__sgemm_ws: 1 with the workspace ti__sgemm_ws_floats asks for, 2 one
 * float short of it (the stack path must take over); g_ws_planned counts the runs that
 * were given one (ti__sgemm_ws_floats > 0) */
static int g_ws = 0, g_ws_planned = 0;

static int make_case(gcase *g, int ta, int tb, size_t m, size_t n, size_t k, float alpha,
                     float beta) {
    g->ta = ta;
    g->tb = tb;
    g->m = m;
    g->n = n;
    g->k = k;
    g->alpha = alpha;
    g->beta = beta;
    size_t ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
    g->lda = g_lda >= ac ? g_lda : ac + (urand() % 3 == 0 ? urand() % 5 : 0);
    g->ldb = bc + (urand() % 3 == 0 ? urand() % 5 : 0);
    g->ldc = n + (urand() % 2 == 0 ? 1 + urand() % 7 : 0);
    g->a = (float *)malloc(sizeof(float) * (ar * g->lda + 1));
    g->b = (float *)malloc(sizeof(float) * (br * g->ldb + 1));
    g->c0 = (float *)malloc(sizeof(float) * m * g->ldc);
    g->ref = (double *)malloc(sizeof(double) * m * n);
    g->scale = (double *)malloc(sizeof(double) * m * n);
    if (!g->a || !g->b || !g->c0 || !g->ref || !g->scale) return 0;
    for (size_t i = 0; i < ar * g->lda + 1; i++) g->a[i] = frand();
    for (size_t i = 0; i < br * g->ldb + 1; i++) g->b[i] = frand();
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < g->ldc; j++)
            g->c0[i * g->ldc + j] = j >= n ? SENTINEL : beta == 0.0f ? NAN : frand();
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            double s = 0, sa = 0;
            for (size_t p = 0; p < k; p++) {
                double x = g->a[ta ? p * g->lda + i : i * g->lda + p];
                double y = g->b[tb ? j * g->ldb + p : p * g->ldb + j];
                s += x * y;
                sa += fabs(x * y);
            }
            double c = beta == 0.0f ? 0.0 : (double)beta * g->c0[i * g->ldc + j];
            g->ref[i * n + j] = alpha * s + c;
            g->scale[i * n + j] = fabs(alpha) * sa + fabs(c);
        }
    return 1;
}

static void free_case(gcase *g) {
    free(g->a);
    free(g->b);
    free(g->c0);
    free(g->ref);
    free(g->scale);
}

/* Runs the case under the current ISA; returns the number of wrong elements (and prints the
 * first). Bound: float accumulation of K products, 2.5e-7 * (K + 4) of the sum of |terms|. */
static int run_case(const gcase *g, ti__threadpool *tp, const char *isa) {
    float *c = (float *)malloc(sizeof(float) * g->m * g->ldc);
    if (c == NULL) return 1;
    memcpy(c, g->c0, sizeof(float) * g->m * g->ldc);
    int bad = 0;
    if (g_ws) {
        size_t wsn = ti__sgemm_ws_floats(g->ta, g->tb, g->m, g->n, g->k, g->lda, tp);
        if (wsn > 0) g_ws_planned++;
        if (wsn > 0 && g_ws == 2) wsn--;
        float *ws = (float *)malloc(sizeof(float) * (wsn + 64));
        if (ws == NULL) {
            free(c);
            return 1;
        }
        for (size_t i = 0; i < wsn + 64; i++) ws[i] = SENTINEL;
        ti__sgemm_ws(g->ta, g->tb, g->m, g->n, g->k, g->alpha, g->a, g->lda, g->b, g->ldb,
                     g->beta, c, g->ldc, NULL, tp, ws, wsn);
        for (size_t i = wsn; i < wsn + 64; i++)
            if (ws[i] != SENTINEL && bad++ == 0) printf("  %s: written past the workspace\n", isa);
        free(ws);
    } else {
        ti__sgemm_ref(g->ta, g->tb, g->m, g->n, g->k, g->alpha, g->a, g->lda, g->b, g->ldb,
                      g->beta, c, g->ldc, tp);
    }
    for (size_t i = 0; i < g->m; i++)
        for (size_t j = 0; j < g->ldc; j++) {
            float got = c[i * g->ldc + j];
            int ok;
            double want;
            if (j >= g->n) {
                want = SENTINEL;
                ok = got == SENTINEL;
            } else {
                want = g->ref[i * g->n + j];
                double tol = 2.5e-7 * (double)(g->k + 4) * g->scale[i * g->n + j] + 1e-30;
                ok = fabs((double)got - want) <= tol; /* NaN fails */
            }
            if (!ok && bad++ == 0)
                printf("  %s: M=%zu N=%zu K=%zu ta=%d tb=%d alpha=%g beta=%g lda=%zu ldb=%zu "
                       "ldc=%zu threads=%d: C[%zu,%zu] = %.9g, expected %.9g\n",
                       isa, g->m, g->n, g->k, g->ta, g->tb, g->alpha, g->beta, g->lda, g->ldb,
                       g->ldc, ti__threadpool_size(tp), i, j, got, want);
        }
    free(c);
    return bad;
}

static const int ISAS[3] = {TI__ISA_SCALAR, TI__ISA_AVX2, TI__ISA_AVX512};

/* Checks one case under every ISA the CPU has, serial and with tp. */
static void check_case(int ta, int tb, size_t m, size_t n, size_t k, float alpha, float beta,
                       ti__threadpool *tp) {
    gcase g;
    memset(&g, 0, sizeof g);
    if (!make_case(&g, ta, tb, m, n, k, alpha, beta)) {
        TI_CHECK(!"out of memory");
        free_case(&g);
        return;
    }
    for (int i = 0; i < 3; i++) {
        if (ti__cpu_force_isa(ISAS[i]) != ISAS[i]) continue;
        const char *name = ti__cpu_isa_name(ISAS[i]);
        TI_CHECK_EQ_INT(run_case(&g, NULL, name), 0);
        if (tp != NULL) TI_CHECK_EQ_INT(run_case(&g, tp, name), 0);
    }
    ti__cpu_force_isa(-1);
    free_case(&g);
}

/* ti__sgemm_bpanel: B packed once (ti__sgemm_pack_bpanel, from B or B^T) for the panel
 * width of each SIMD ISA forced in turn, C = op(A) * B at one and two threads against the
 * reference, and bit for bit equal to ti__sgemm_ref on B as given (same kernels, same order
 * of products) but for AVX-512's separate last column; C's padding untouched; C^T stored
 * beside it with a bias per column of C and ReLU (or nothing), exactly, onto a summand
 * there or not, its padding untouched. Declines (returns 0, C untouched) for another panel
 * width and for fewer rows than the micro-kernel's. Random shapes: N across and off the
 * panel widths, K across the k blocks, and 0. */
static void bpanel_case(size_t m, size_t n, size_t k, ti__threadpool *tp) {
    gcase g;
    memset(&g, 0, sizeof g);
    int ta = (int)(urand() % 2), tb = (int)(urand() % 2);
    size_t cn;
    float *c = NULL, *plain = NULL, *panel = NULL;
    if (!make_case(&g, ta, tb, m, n, k, 1.0f, 0.0f)) {
        TI_CHECK(!"out of memory");
        free_case(&g);
        return;
    }
    cn = m * g.ldc;
    size_t ldt = m + urand() % 3; /* C^T's rows, padded or not */
    c = (float *)malloc(sizeof(float) * cn);
    plain = (float *)malloc(sizeof(float) * cn);
    float *ty = (float *)malloc(sizeof(float) * (n * ldt + 1));
    float *tys = (float *)malloc(sizeof(float) * (n * ldt + 1));
    float *bias = (float *)malloc(sizeof(float) * n);
    TI_REQUIRE(c != NULL && plain != NULL && ty != NULL && tys != NULL && bias != NULL);
    for (size_t q = 0; q < n; q++) bias[q] = frand();
    for (int i = 1; i < 3; i++) {
        if (ti__cpu_force_isa(ISAS[i]) != ISAS[i]) continue;
        const char *name = ti__cpu_isa_name(ISAS[i]);
        int nr = ti__sgemm_panel_nr();
        TI_CHECK(nr > 0);
        panel = (float *)malloc(sizeof(float) * (ti__sgemm_bpanel_floats(k, n, (size_t)nr) + 1));
        TI_REQUIRE(panel != NULL);
        ti__sgemm_pack_bpanel(tb, k, n, g.b, g.ldb, (size_t)nr, panel);
        for (int tt = 0; tt < 4; tt++) {
            int t = tt % 2, sum = tt >= 2; /* sum: ty holds a summand (a fused residual) */
            ti__threadpool *use = t ? tp : NULL;
            memcpy(plain, g.c0, sizeof(float) * cn);
            ti__sgemm_ref(ta, tb, m, n, k, 1.0f, g.a, g.lda, g.b, g.ldb, 0.0f, plain, g.ldc, use);
            memcpy(c, g.c0, sizeof(float) * cn);
            for (size_t i = 0; i < n * ldt + 1; i++)
                ty[i] = tys[i] = sum && i < n * ldt && i % ldt < m ? frand() : SENTINEL;
            ti__gemm_epi e; /* on C^T: bias per column of C, then ReLU (t = 1) or none */
            e.bias = bias;
            e.act = t ? TI__ACT_RELU : TI__ACT_NONE;
            e.a = e.b = 0.0f;
            TI_CHECK_EQ_INT(ti__sgemm_bpanel(ta, m, n, k, g.a, g.lda, panel, nr, 0, c, g.ldc,
                                             ty, ldt, &e, sum, use), 1);
            /* ty = act(C^T + bias), or act(C^T + summand + bias), exactly; its padding and
             * end untouched */
            int tbad = 0;
            for (size_t q = 0; q < n; q++)
                for (size_t r = 0; r < ldt; r++) {
                    float want = SENTINEL;
                    if (r < m) {
                        want = c[r * g.ldc + q];
                        if (sum) want += tys[q * ldt + r];
                        want += bias[q];
                        if (t && !(want > 0.0f)) want = 0.0f;
                    }
                    if (memcmp(&ty[q * ldt + r], &want, sizeof want) != 0 && tbad++ == 0)
                        printf("  %s bpanel C^T M=%zu N=%zu K=%zu: ty[%zu,%zu] = %.9g, expected "
                               "%.9g\n", name, m, n, k, q, r, ty[q * ldt + r], want);
                }
            TI_CHECK_EQ_INT(tbad, 0);
            TI_CHECK(ty[n * ldt] == SENTINEL);
            int bad = 0;
            for (size_t r = 0; r < m; r++)
                for (size_t q = 0; q < g.ldc; q++) {
                    float got = c[r * g.ldc + q];
                    int ok = q >= n ? got == SENTINEL
                                    : fabs((double)got - g.ref[r * n + q]) <=
                                          2.5e-7 * (double)(k + 4) * g.scale[r * n + q] + 1e-30;
                    if (!ok && bad++ == 0)
                        printf("  %s bpanel M=%zu N=%zu K=%zu ta=%d tb=%d threads=%d: C[%zu,%zu] "
                               "= %.9g, expected %.9g\n", name, m, n, k, ta, tb, t + 1, r, q,
                               got, q < n ? g.ref[r * n + q] : SENTINEL);
                }
            TI_CHECK_EQ_INT(bad, 0);
            /* the plain GEMM's bits, except where it computes a column by dot products:
             * N = 1 (ti__sgemm_gemv) and, on AVX-512, a last column on its own (N % 16 ==
             * 1); there within the bound above */
            if (n != 1 && (n % 16 != 1 || n < 16 || ISAS[i] != TI__ISA_AVX512))
                TI_CHECK(memcmp(c, plain, sizeof(float) * cn) == 0);
        }
        memcpy(c, g.c0, sizeof(float) * cn); /* declines: C stays as it was */
        TI_CHECK_EQ_INT(ti__sgemm_bpanel(ta, m, n, k, g.a, g.lda, panel, nr + 1, 0, c, g.ldc,
                                         NULL, 0, NULL, 0, tp), 0);
        TI_CHECK_EQ_INT(ti__sgemm_bpanel(ta, 3, n, k, g.a, g.lda, panel, nr, 0, c, g.ldc, NULL,
                                         0, NULL, 0, NULL), 0);
        TI_CHECK(memcmp(c, g.c0, sizeof(float) * cn) == 0); /* bytes: NaNs compare equal */
        free(panel);
        panel = NULL;
    }
    ti__cpu_force_isa(-1);
    free(c);
    free(plain);
    free(ty);
    free(tys);
    free(bias);
    free_case(&g);
}

TI_TEST(b_panel_prepacked) {
    ti__threadpool *tp = ti__threadpool_create(NULL, 2);
    static const size_t ns[] = {1, 11, 12, 16, 17, 31, 32, 33, 49, 64, 100};
    for (int it = 0; it < 24; it++) {
        size_t k = it == 0 ? 0 : it % 4 == 1 ? dim(250, 300) : dim(1, 140);
        bpanel_case(dim(4, 60), ns[it % 11], k, tp);
    }
    ti__threadpool_destroy(tp);
    ti__cpu_force_isa(-1);
}

/* ti__sgemm_conv with op(A) packed as an A panel (ti__sgemm_pack_apanel, a conv's weights
 * at planning): the same bits as ti__sgemm_ex on A as it lies, under each SIMD ISA, one and
 * two threads (by rows and by columns: tiles start on slivers), with the bias and
 * activation in the kernel; M around the slivers (the last one partial), K across k blocks,
 * N with half-width and one-column slivers, beta 0 and 1 (a residual sum fused in). A panel
 * for another ISA's rows is not used. */
TI_TEST(a_panel_prepacked) {
    ti__threadpool *tp = ti__threadpool_create(NULL, 2);
    TI_REQUIRE(tp != NULL);
    static const size_t ms[] = {6, 7, 13, 14, 15, 29, 64, 131, 300};
    static const size_t ns[] = {1, 8, 9, 17, 49, 64, 169, 600};
    int ran = 0;
    for (int it = 0; it < 32; it++) {
        size_t m = ms[it % 9], n = ns[(it * 5) % 8], k = it % 5 == 0 ? dim(257, 600) : dim(1, 200);
        int ta = it % 3 == 0;
        if (it >= 30) /* several row blocks of the panel, k blocks, and 9 last columns */
            m = 1100, n = 169, k = 300, ta = it == 31;
        float beta = it % 4 >= 2 ? 1.0f : 0.0f; /* 1: a residual sum fused in (C is R) */
        gcase g;
        memset(&g, 0, sizeof g);
        if (!make_case(&g, ta, 0, m, n, k, 1.0f, beta)) {
            TI_CHECK(!"out of memory");
            free_case(&g);
            continue;
        }
        size_t cn = m * g.ldc;
        float *want = (float *)malloc(sizeof(float) * cn);
        float *got = (float *)malloc(sizeof(float) * cn);
        float *bias = (float *)malloc(sizeof(float) * m);
        float *panel = (float *)malloc(sizeof(float) * ((m + 16) * k + 1)); /* any mr <= 16 */
        TI_REQUIRE(want != NULL && got != NULL && bias != NULL && panel != NULL);
        for (size_t i = 0; i < m; i++) bias[i] = frand();
        ti__gemm_epi e;
        e.bias = bias;
        e.act = it % 2 ? TI__ACT_RELU : TI__ACT_CLIP;
        e.a = -0.5f;
        e.b = 0.5f;
        for (int i = 1; i < 3; i++) {
            if (ti__cpu_force_isa(ISAS[i]) != ISAS[i]) continue;
            int mr = ti__sgemm_panel_mr();
            TI_CHECK(mr > 0 && mr <= 16);
            TI_CHECK(ti__sgemm_apanel_floats(m, k, (size_t)mr) <= (m + 16) * k);
            ti__sgemm_pack_apanel(ta, m, k, g.a, g.lda, (size_t)mr, panel);
            for (int t = 0; t < 4; t++) { /* 1, 2 threads; t >= 2: a panel of other rows */
                ti__threadpool *use = t % 2 ? tp : NULL;
                memcpy(want, g.c0, sizeof(float) * cn);
                memcpy(got, g.c0, sizeof(float) * cn);
                ti__sgemm_ex(ta, 0, m, n, k, 1.0f, g.a, g.lda, g.b, g.ldb, beta, want, g.ldc,
                             &e, use);
                ti__sgemm_conv(ta, m, n, k, g.a, g.lda, panel, t >= 2 ? mr + 1 : mr, g.b, g.ldb,
                               t % 2, beta, got, g.ldc, &e, NULL, 0, use);
                int bad = 0;
                for (size_t q = 0; q < cn; q++)
                    if (memcmp(&got[q], &want[q], sizeof(float)) != 0 && bad++ == 0)
                        printf("  %s A panel M=%zu N=%zu K=%zu ta=%d t=%d: C[%zu] = %.9g, "
                               "expected %.9g\n", ti__cpu_isa_name(ISAS[i]), m, n, k, ta, t, q,
                               got[q], want[q]);
                TI_CHECK_EQ_INT(bad, 0);
                ran++;
            }
        }
        ti__cpu_force_isa(-1);
        free(want), free(got), free(bias), free(panel);
        free_case(&g);
    }
    ti__threadpool_destroy(tp);
    if (ran == 0) TI_SKIP("no SIMD GEMM kernels here");
}

/* ti__sgemm_isa.store_t (the transposed GEMM's Y) under each ISA that has one, against its
 * definition: the scalar transpose, then ti__act_block with a bias per row of t, bit for bit
 * (what the GEMM did before the epilogue moved into the store): every h up to 36 (blocks of
 * 16 rows and their ends; the kernels give at most 14) and w up to 40, padded leading
 * dimensions, each epilogue the kernels take, with and without a bias, with and without a
 * summand in t (a residual fused into the conv: added before the epilogue), with and without
 * a second block c2 added to c first (a part of K's sums, cpu/conv.c ti__conv_ct_sum);
 * nothing else of t written. */
TI_TEST(transposed_store) {
    enum { HMAX = 36, WMAX = 40, LD = 48, TN = WMAX * LD + 16 };
    static float c[HMAX * LD], c2[HMAX * LD], t[TN], want[TN], bias[WMAX];
    static const int acts[] = {TI__ACT_NONE, TI__ACT_RELU, TI__ACT_CLIP, TI__ACT_HARD_SWISH};
    int ran = 0;
    for (size_t i = 0; i < HMAX * LD; i++) c[i] = 4.0f * frand();
    for (size_t i = 0; i < HMAX * LD; i++) c2[i] = 4.0f * frand();
    for (size_t i = 0; i < WMAX; i++) bias[i] = frand();
    for (int i = 1; i < 3; i++) {
        if (ti__cpu_force_isa(ISAS[i]) != ISAS[i]) continue;
        const ti__sgemm_isa *isa = ti__sgemm_pick_isa();
        if (isa == NULL || isa->store_t == NULL) continue;
        int bad = 0;
        for (size_t h = 1; h <= HMAX; h++)
            for (size_t w = 1; w <= WMAX; w++) {
                size_t ldc = w + h % 3, ldt = h + w % 4;
                int v = (int)((h * 7 + w) % 9); /* 0: none; else act v / 2 with bias if odd */
                ti__gemm_epi e;
                memset(&e, 0, sizeof e);
                e.act = acts[v / 2 % 4];
                e.bias = v % 2 ? bias : NULL;
                e.a = -0.5f;
                e.b = 0.75f;
                float lo = 0.0f, hi = 0.0f;
                int ep = v == 0 ? 0 : ti__sgemm_kernel_epi(&e, &lo, &hi);
                int sum = (int)((h + w / 3) % 2); /* t holds a summand: added first */
                /* another part of K's sums in c2, added to c before all else */
                const float *two = (h * 3 + w) % 4 == 1 ? c2 : NULL;
                for (size_t q = 0; q < TN; q++) t[q] = want[q] = SENTINEL;
                for (size_t r = 0; r < h; r++)
                    for (size_t q = 0; q < w; q++) {
                        float s = sum ? 2.0f * frand() : 0.0f;
                        float v = two != NULL ? two[r * ldc + q] + c[r * ldc + q] : c[r * ldc + q];
                        if (sum) t[q * ldt + r] = s;
                        want[q * ldt + r] = sum ? v + s : v;
                    }
                if (ep > 0 && (e.bias != NULL || e.act != TI__ACT_NONE))
                    ti__act_block(e.act, e.a, e.b, e.bias, want, ldt, w, h);
                isa->store_t(c, two, ldc, h, w, t, ldt, sum, ep, e.bias, lo, hi);
                for (size_t q = 0; q < TN; q++)
                    if (memcmp(&t[q], &want[q], sizeof(float)) != 0 && bad++ == 0)
                        printf("  %s store_t h=%zu w=%zu sum=%d ep=%d bias=%d c2=%d: t[%zu] = "
                               "%.9g, expected %.9g\n", ti__cpu_isa_name(ISAS[i]), h, w, sum, ep,
                               e.bias != NULL, two != NULL, q, t[q], want[q]);
            }
        TI_CHECK_EQ_INT(bad, 0);
        ran++;
    }
    ti__cpu_force_isa(-1);
#if defined(TI__X86_SIMD)
    TI_CHECK(ran > 0 || ti__cpu_isa_best() < TI__ISA_AVX512); /* AVX-512 has one */
#else
    (void)ran;
#endif
}

static void isa_report(void) {
    int best = ti__cpu_isa_best();
    printf("best ISA here: %s\n", ti__cpu_isa_name(best));
    for (int i = 0; i < 3; i++)
        if (ISAS[i] > best) {
            char why[96];
            snprintf(why, sizeof why, "%s: this CPU or OS lacks it (its cases ran as %s)",
                     ti__cpu_isa_name(ISAS[i]), ti__cpu_isa_name(best));
            ti_test_skip_note(why, __FILE__, __LINE__);
        }
}

TI_TEST(forcing_an_isa) {
    int best = ti__cpu_isa_best();
    TI_CHECK_EQ_INT(ti__cpu_force_isa(TI__ISA_SCALAR), TI__ISA_SCALAR);
    TI_CHECK_EQ_INT(ti__cpu_isa(), TI__ISA_SCALAR);
    /* more than the CPU has: the best it has */
    TI_CHECK_EQ_INT(ti__cpu_force_isa(TI__ISA_AVX512 + 5), best);
    int back = ti__cpu_force_isa(-1); /* apart: an argument order of the macro's choosing
                                        * read ti__cpu_isa() first under TINYINFER_ISA */
    TI_CHECK_EQ_INT(back, ti__cpu_isa());
    TI_CHECK(strcmp(ti__cpu_isa_name(TI__ISA_SCALAR), "scalar") == 0);
#if defined(TI__ARM_NEON)
    TI_CHECK(strcmp(ti__cpu_isa_name(TI__ISA_NEON), "neon") == 0);
    TI_CHECK(strcmp(ti__cpu_isa_name(TI__ISA_NEONDOT), "neondot") == 0);
    TI_CHECK(best == TI__ISA_NEON || best == TI__ISA_NEONDOT); /* NEON: every aarch64 CPU */
#else
    TI_CHECK(strcmp(ti__cpu_isa_name(TI__ISA_AVX2), "avx2") == 0);
    TI_CHECK(strcmp(ti__cpu_isa_name(TI__ISA_AVX512), "avx512") == 0);
#endif
#if !defined(TI__X86_SIMD) && !defined(TI__ARM_NEON)
    TI_CHECK_EQ_INT(best, TI__ISA_SCALAR);
#endif
}

TI_TEST(edge_shapes) {
    /* sizes around every register tile and block edge: 1, mr +- 1, nr +- 1, kc +- 1 (x86:
     * 14 x 32 and 6 x 16 tiles, kc 128; NEON: 8 x 12, kc 256) */
    static const size_t e[] = {1, 2, 3, 5, 6, 7, 8, 9, 11, 12, 13, 14, 15, 16, 17, 25, 31, 32,
                               33, 129, 255, 257};
    size_t ne = sizeof e / sizeof e[0];
    for (int t = 0; t < 4; t++)
        for (size_t i = 0; i < ne; i++) {
            size_t m = e[i], n = e[(i * 7 + 3) % ne], k = e[(i * 5 + t) % ne];
            check_case(t & 1, t >> 1, m, n, k, 1.0f, 0.0f, NULL);
            check_case(t & 1, t >> 1, n, k, m, 0.5f, 1.0f, NULL);
        }
    for (int t = 0; t < 4; t++) check_case(t & 1, t >> 1, 9, 20, 0, 1.0f, 0.5f, NULL); /* K=0 */
}

TI_TEST(random_shapes) {
    ti__threadpool *tp = ti__threadpool_create(NULL, 2);
    static const float alphas[] = {1.0f, 0.5f, -2.0f}, betas[] = {0.0f, 1.0f, 0.25f};
    for (int it = 0; it < 48; it++) {
        int small = it % 4 != 0;
        size_t m = small ? dim(1, 40) : dim(1, 300), n = small ? dim(1, 70) : dim(1, 300);
        size_t k = small ? dim(1, 60) : dim(1, 300);
        check_case(it & 1, (it >> 1) & 1, m, n, k, alphas[urand() % 3], betas[urand() % 3],
                   it % 3 == 0 ? tp : NULL);
    }
    ti__threadpool_destroy(tp);
}

TI_TEST(big_shapes) {
    ti__threadpool *tp = ti__threadpool_create(NULL, 2);
    for (int t = 0; t < 4; t++) check_case(t & 1, t >> 1, 197, 255, 513, 1.0f, 0.0f, tp);
    check_case(0, 0, 16, 3136, 32, 1.0f, 0.0f, tp); /* a pointwise conv: few rows, long N */
    check_case(0, 1, 300, 64, 700, -1.0f, 1.0f, NULL);
    /* N = 16 * q + 1: the last column on its own (AVX-512), A as it is and transposed (the
     * 1x1 convs' weights), K past the 512-element chunks, M past the 256-row chunks */
    check_case(1, 0, 160, 49, 576, 1.0f, 0.0f, NULL);
    check_case(0, 0, 70, 49, 1100, 0.5f, 0.25f, NULL);
    check_case(1, 0, 300, 33, 40, -2.0f, 1.0f, NULL);
    /* the last 2-12 columns (isa->cols) of A^T's rows, row block by row block, k blocks */
    check_case(1, 0, 600, 169, 300, 1.0f, 0.5f, NULL);
    check_case(1, 0, 530, 196, 140, 1.0f, 0.0f, tp);
    check_case(0, 0, 300, 17, 3, 1.0f, 0.0f, tp);
    /* small K, rows past two slivers: slivers of B packed several at a time (K 16: 8 of 32
     * columns), each row sliver run along them, a part group last (1041 = 4 * 256 + 17) */
    check_case(1, 0, 96, 1041, 16, 1.0f, 0.0f, NULL);
    check_case(0, 0, 50, 777, 40, 0.5f, 0.25f, tp);
    /* A's rows 512 or 1024 floats apart: A packed (each ISA's pack_a), row blocks of A
     * across the buffer's capacity, K past a k block and not a multiple of 16 */
    for (int t = 0; t < 4; t++) {
        g_lda = t < 2 ? 512 : 1024;
        check_case(t & 1, t >> 1, 150 + (size_t)t * 61, 70, 300, 1.0f, t == 1 ? 0.5f : 0.0f,
                   t == 3 ? tp : NULL);
    }
    g_lda = 0;
    ti__threadpool_destroy(tp);
}

/* The threads' parts (ti__sgemm_split_cols) on the shapes it was measured on: AVX-512's
 * 14 x 32 tiles on 2 threads cut SqueezeNet's 48 x 169 x 256 squeeze conv (weights as A,
 * the input as B) by columns and its transposed 169 x 64 x 384 GEMM (B a packed panel) by
 * rows, MobileNetV2's 576 x 196 x 96 by rows and its transposed 49 x 960 x 160 by
 * columns. Whatever the cut, each element is the
 * same sum: 2 and 3 threads give 1 thread's bits, on every ISA. */
static size_t plan_rows(int ta, size_t m, size_t n, size_t k, const float *bpanel,
                        size_t threads) {
    ti__sgemm_job j;
    ti__sgemm_job_init(&j, ta, 0, m, n, k, 1.0f, NULL, ta ? m : k, NULL, n, 0.0f, NULL, n,
                       NULL);
    j.bpanel = bpanel;
    ti__sgemm_plan(&j, threads);
    return j.mt;
}

TI_TEST(thread_parts_by_cost) {
    ti__cpu_force_isa(TI__ISA_AVX512);
    const ti__sgemm_isa *gi = ti__sgemm_pick_isa();
    if (gi != NULL && gi->mr == 14 && gi->nr == 32) { /* AVX-512's tiles; elsewhere none */
        static const float panel[1] = {0.0f}; /* only its presence is planned on */
        TI_CHECK_EQ_INT((int)plan_rows(1, 48, 169, 256, NULL, 2), 48); /* columns */
        TI_CHECK_EQ_INT((int)plan_rows(1, 169, 64, 384, panel, 2), 98); /* rows: 7 slivers */
        TI_CHECK_EQ_INT((int)plan_rows(1, 576, 196, 96, NULL, 2), 294); /* rows */
        /* transposed 1x1 convs at 7 x 7 (the weights a panel) by columns, so that no thread
         * streams all the weights (the panel's reads counted): MobileNetV2's 160 -> 960 on 4
         * threads (on 2 its 960 columns alone send it there), its 960 -> 320 and
         * EfficientNet-B0's 1152 -> 192 on 2 */
        TI_CHECK_EQ_INT((int)plan_rows(1, 49, 960, 160, panel, 2), 49);
        TI_CHECK_EQ_INT((int)plan_rows(1, 49, 960, 160, panel, 4), 49);
        TI_CHECK_EQ_INT((int)plan_rows(1, 49, 320, 960, panel, 2), 49);
        TI_CHECK_EQ_INT((int)plan_rows(1, 49, 192, 1152, panel, 2), 49);
    }
    ti__cpu_force_isa(TI__ISA_AVX2);
    gi = ti__sgemm_pick_isa();
    if (gi != NULL && gi->mr == 6 && gi->nr == 16) { /* AVX2's tiles */
        /* a 7 x 7 map's 1x1 conv by the plain GEMM: by rows, not each thread all weights */
        TI_CHECK_EQ_INT((int)plan_rows(0, 1280, 49, 320, NULL, 2), 642);
        /* 960 -> 160 at 7 x 7: by rows, the one-column sliver counted as none (col1_cheap);
         * by columns one thread took 2 slivers, the other 1 and the column */
        TI_CHECK_EQ_INT((int)plan_rows(0, 160, 49, 960, NULL, 2), 84);
        TI_CHECK_EQ_INT((int)plan_rows(0, 48, 169, 256, NULL, 2), 48); /* columns */
    }
    ti__cpu_force_isa(-1);
    static const size_t shapes[][3] = {{48, 169, 256}, {40, 196, 240}, {64, 196, 192},
                                       {169, 64, 384}, {120, 196, 40}, {13, 700, 33}};
    ti__threadpool *tp2 = ti__threadpool_create(NULL, 2), *tp3 = ti__threadpool_create(NULL, 3);
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        size_t m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
        float *a = (float *)malloc(sizeof(float) * m * k);
        float *b = (float *)malloc(sizeof(float) * k * n);
        float *c1 = (float *)malloc(sizeof(float) * m * n);
        float *cx = (float *)malloc(sizeof(float) * m * n);
        if (!a || !b || !c1 || !cx || !tp2 || !tp3) {
            TI_CHECK(!"out of memory");
            free(a), free(b), free(c1), free(cx);
            break;
        }
        for (size_t i = 0; i < m * k; i++) a[i] = frand();
        for (size_t i = 0; i < k * n; i++) b[i] = frand();
        for (int i = 0; i < 4; i++) { /* each ISA forced, then the best (NEON on aarch64) */
            int isa = i < 3 ? ISAS[i] : ti__cpu_force_isa(-1);
            if (ti__cpu_force_isa(i < 3 ? isa : -1) != isa) continue;
            for (int ta = 0; ta < 2; ta++) {
                size_t lda = ta ? m : k;
                ti__sgemm_ref(ta, 0, m, n, k, 1.0f, a, lda, b, n, 0.0f, c1, n, NULL);
                for (int t = 0; t < 2; t++) {
                    ti__sgemm_ref(ta, 0, m, n, k, 1.0f, a, lda, b, n, 0.0f, cx, n,
                                  t ? tp3 : tp2);
                    int same = memcmp(c1, cx, sizeof(float) * m * n) == 0;
                    if (!same)
                        printf("  %s M=%zu N=%zu K=%zu ta=%d threads=%d: not 1 thread's bits\n",
                               ti__cpu_isa_name(isa), m, n, k, ta, t ? 3 : 2);
                    TI_CHECK(same);
                }
            }
        }
        ti__cpu_force_isa(-1);
        free(a), free(b), free(c1), free(cx);
    }
    ti__threadpool_destroy(tp2);
    ti__threadpool_destroy(tp3);
}

/* The parts of an ISA's table that only some shapes reach: the grouped call (kernel_run:
 * small K, whole packed slivers) and the kernel's one-column slivers (col1_cheap: N = 16 q
 * + 1, computed as a column inside it). A counting copy of the table shows the grouped call
 * ran and one-column slivers reached the kernel on the shapes they are for; C is bit for
 * bit the one-sliver-a-call kernel's (the table without kernel_run) and within the
 * reference's tolerance, with and without an epilogue in the kernel, on 1 and 2 threads: a
 * planning change that stops using them fails here rather than going unseen. Mutations that
 * failed it: the grouped call never planned; its last sliver skipped (not the same bits). */
static const ti__sgemm_isa *g_real;
static int g_runs, g_cols;
static void count_run(size_t kc, const float *a, size_t lda, int a_rows, const float *b,
                      size_t bstep, int slivers, float *c, size_t ldc, int mr, float alpha,
                      float beta, const ti__gemm_epi *epi) {
    g_runs++;
    g_real->kernel_run(kc, a, lda, a_rows, b, bstep, slivers, c, ldc, mr, alpha, beta, epi);
}
static void count_kernel(size_t kc, const float *a, size_t lda, int a_rows, const float *b,
                         float *c, size_t ldc, int mr, int nc, float alpha, float beta,
                         const ti__gemm_epi *epi, const float *pf, size_t pf_lines) {
    if (nc == 1) g_cols++;
    g_real->kernel(kc, a, lda, a_rows, b, c, ldc, mr, nc, alpha, beta, epi, pf, pf_lines);
}
static void run_with_isa(const ti__sgemm_isa *isa, const gcase *g, float *c,
                         const ti__gemm_epi *epi, ti__threadpool *tp) {
    ti__sgemm_job j;
    memcpy(c, g->c0, sizeof(float) * g->m * g->ldc);
    ti__sgemm_job_init(&j, g->ta, 0, g->m, g->n, g->k, 1.0f, g->a, g->lda, g->b, g->ldb, 0.0f,
                       c, g->ldc, epi);
    j.isa = isa;
    ti__sgemm_go(&j, tp);
}

TI_TEST(optional_kernels_run_where_planned) {
    /* {M, N, K, trans_a}: 1x1 convs of few input channels on long rows (groups of slivers),
     * then 7 x 7 maps (N = 49) with A as it lies and transposed, and N = 33 */
    static const size_t shapes[][4] = {{96, 784, 16, 0}, {24, 784, 32, 0}, {13, 517, 24, 1},
                                       {160, 49, 96, 0}, {64, 49, 40, 1},  {7, 33, 300, 0}};
    ti__threadpool *tp = ti__threadpool_create(NULL, 2);
    int saw_run = 0, saw_col = 0;
    for (size_t i = 0; i < sizeof ISAS / sizeof ISAS[0]; i++) {
        if (ti__cpu_force_isa(ISAS[i]) != ISAS[i]) continue;
        g_real = ti__sgemm_pick_isa();
        if (g_real == NULL || (g_real->kernel_run == NULL && !g_real->col1_cheap)) continue;
        ti__sgemm_isa counting = *g_real, plain = *g_real;
        if (counting.kernel_run != NULL) counting.kernel_run = count_run;
        counting.kernel = count_kernel;
        plain.kernel_run = NULL;
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            size_t m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
            int small_k = k <= 32, col = n > 16 && n % 16 == 1;
            gcase g;
            float *bias = (float *)malloc(sizeof(float) * m);
            float *c = (float *)malloc(sizeof(float) * m * n * 2 + 64);
            float *c1 = (float *)malloc(sizeof(float) * m * n * 2 + 64);
            if (!make_case(&g, (int)shapes[s][3], 0, m, n, k, 1.0f, 0.0f) || !bias || !c ||
                !c1) {
                TI_CHECK(!"out of memory");
                free_case(&g), free(bias), free(c), free(c1);
                break;
            }
            for (size_t q = 0; q < m; q++) bias[q] = frand();
            for (int e = 0; e < 2; e++) {
                ti__gemm_epi epi; /* a bias per row of C and ReLU, in the kernel */
                epi.bias = bias;
                epi.act = TI__ACT_RELU;
                epi.a = epi.b = 0.0f;
                for (int t = 0; t < 2; t++) {
                    g_runs = g_cols = 0;
                    run_with_isa(&counting, &g, c, e ? &epi : NULL, t ? tp : NULL);
                    int runs = g_runs, cols = g_cols, bad = 0;
                    run_with_isa(&plain, &g, c1, e ? &epi : NULL, t ? tp : NULL);
                    int same = !memcmp(c, c1, sizeof(float) * m * g.ldc);
                    for (size_t r = 0; r < m; r++)
                        for (size_t q = 0; q < g.ldc; q++) {
                            double want = q >= n ? SENTINEL : g.ref[r * n + q];
                            double tol = 0.0;
                            if (q < n) {
                                tol = 2.5e-7 * (double)(k + 4) * (g.scale[r * n + q] + 1.0);
                                if (e) want = want + bias[r] > 0.0 ? want + bias[r] : 0.0;
                            }
                            bad += !(fabs((double)c[r * g.ldc + q] - want) <= tol);
                        }
                    if ((small_k && g_real->kernel_run != NULL && runs == 0) ||
                        (col && g_real->col1_cheap && cols == 0) || !same || bad)
                        printf("  %s %zux%zux%zu ta=%d epilogue=%d threads=%d: %d grouped "
                               "calls, %d one-column calls, %s the one-sliver kernel's bits, "
                               "%d wrong\n",
                               ti__cpu_isa_name(ISAS[i]), m, n, k, g.ta, e, t ? 2 : 1, runs,
                               cols, same ? "same as" : "not", bad);
                    if (small_k && g_real->kernel_run != NULL) TI_CHECK(runs > 0);
                    if (col && g_real->col1_cheap) TI_CHECK(cols > 0);
                    saw_run += runs > 0;
                    saw_col += cols > 0;
                    TI_CHECK(same);
                    TI_CHECK_EQ_INT(bad, 0);
                }
            }
            free_case(&g), free(bias), free(c), free(c1);
        }
    }
    ti__cpu_force_isa(-1);
    ti__threadpool_destroy(tp);
    if (saw_run == 0 && saw_col == 0) TI_SKIP("no ISA here has a grouped call or column kernel");
}

/* The workspace path (ti__sgemm_ws): k blocks of up to 512 and the tile's B panel packed
 * once, for the products that ask for one: more rows than a packed A block (rows 1024 floats
 * apart) or the stack's 256-row block, K past one and two k blocks (3 x 367), N past a
 * tile's 1024 columns and 16 * q + 1 (the last column on its own), every transposition,
 * alpha and beta, each ISA, 1 and 2 threads; then each one float short of its workspace
 * (the stack buffers take over), and the epilogue in the kernel against a pass after it. */
TI_TEST(workspace_path) {
    ti__threadpool *tp = ti__threadpool_create(NULL, 2);
    static const size_t shapes[][3] = {{300, 200, 1100}, {600, 1100, 130}, {70, 97, 520},
                                       {290, 1041, 300}, {57, 33, 700}};
    for (g_ws = 1; g_ws <= 2; g_ws++) {
        g_ws_planned = 0;
        for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
            int t = (int)si % 4;
            check_case(t & 1, t >> 1, shapes[si][0], shapes[si][1], shapes[si][2],
                       si == 2 ? 0.5f : 1.0f, si % 2 ? 0.25f : 0.0f, tp);
        }
        for (int t = 0; t < 4; t++) { /* A packed: its rows 1024 floats apart */
            g_lda = 1024;
            check_case(t & 1, t >> 1, 150 + (size_t)t * 61, 70, 300, -1.0f, t == 1 ? 1.0f : 0.0f,
                       t == 3 ? tp : NULL);
        }
        g_lda = 0;
        /* each SIMD ISA: 5 shapes x 2 runs + 4; plus the scalar ISA's (no workspace) */
        printf("  workspace %s: %d runs given one\n", g_ws == 1 ? "exact" : "one short",
               g_ws_planned);
        TI_CHECK(g_ws_planned >= 14);
    }
    g_ws = 0;
    /* bias and ReLU in the kernel at the last k block, against the product then one pass */
    gcase g;
    memset(&g, 0, sizeof g);
    TI_REQUIRE(make_case(&g, 0, 0, 300, 190, 1100, 1.0f, 0.0f));
    float *bias = (float *)malloc(sizeof(float) * g.m);
    float *want = (float *)malloc(sizeof(float) * g.m * g.ldc);
    float *got = (float *)malloc(sizeof(float) * g.m * g.ldc);
    TI_REQUIRE(bias != NULL && want != NULL && got != NULL);
    for (size_t i = 0; i < g.m; i++) bias[i] = frand();
    ti__gemm_epi epi;
    epi.bias = bias;
    epi.act = TI__ACT_RELU;
    epi.a = epi.b = 0.0f;
    for (int i = 1; i < 3; i++) {
        if (ti__cpu_force_isa(ISAS[i]) != ISAS[i]) continue;
        size_t wsn = ti__sgemm_ws_floats(0, 0, g.m, g.n, g.k, g.lda, NULL);
        float *ws = (float *)malloc(sizeof(float) * (wsn + 1));
        TI_REQUIRE(ws != NULL);
        TI_CHECK(wsn > 0);
        memcpy(want, g.c0, sizeof(float) * g.m * g.ldc);
        memcpy(got, g.c0, sizeof(float) * g.m * g.ldc);
        ti__sgemm_ws(0, 0, g.m, g.n, g.k, 1.0f, g.a, g.lda, g.b, g.ldb, 0.0f, want, g.ldc, NULL,
                     NULL, ws, wsn);
        ti__act_block(epi.act, epi.a, epi.b, epi.bias, want, g.ldc, g.m, g.n);
        ti__sgemm_ws(0, 0, g.m, g.n, g.k, 1.0f, g.a, g.lda, g.b, g.ldb, 0.0f, got, g.ldc, &epi,
                     NULL, ws, wsn);
        TI_CHECK(memcmp(want, got, sizeof(float) * g.m * g.ldc) == 0);
        free(ws);
    }
    ti__cpu_force_isa(-1);
    free(bias);
    free(want);
    free(got);
    free_case(&g);
    ti__threadpool_destroy(tp);
}

/* light_squeezenet under `isa` (2 threads); out receives the first output. */
static int run_model(int isa, float **out, size_t *n) {
    ti_error err;
    *out = NULL;
    ti_model *m = ti_model_load_file("tests/data/light_squeezenet.onnx", NULL, &err);
    if (m == NULL) return 0;
    ti_session_desc d;
    memset(&d, 0, sizeof d);
    d.num_threads = 2;
    ti__cpu_force_isa(isa);
    ti_session *s = ti_session_create(m, &d, &err);
    int ok = 0;
    if (s != NULL) {
        ti_tensor *x = ti_session_input(s, 0);
        unsigned seed = 99u;
        for (size_t i = 0; i < ti_tensor_numel(x); i++) {
            seed = seed * 1664525u + 1013904223u;
            ((float *)x->data)[i] = (float)((seed >> 8) & 0xffff) / 65536.0f;
        }
        if (ti_session_run(s, &err) == TI_OK) {
            ti_tensor *y = ti_session_output(s, 0);
            *n = ti_tensor_numel(y);
            *out = (float *)malloc(sizeof(float) * *n);
            if (*out != NULL) memcpy(*out, y->data, sizeof(float) * *n), ok = 1;
        } else {
            printf("  run: %s\n", err.message);
        }
    } else {
        printf("  session: %s\n", err.message);
    }
    ti_session_destroy(s);
    ti_model_free(m);
    ti__cpu_force_isa(-1);
    return ok;
}

TI_TEST(model_agrees_across_isas) {
    float *ref = NULL;
    size_t nref = 0;
    TI_REQUIRE(run_model(TI__ISA_SCALAR, &ref, &nref));
    double amax = 0;
    for (size_t i = 0; i < nref; i++) amax = fmax(amax, fabs(ref[i]));
    TI_CHECK(amax > 0); /* a non-trivial output */
    for (int i = 1; i < 3; i++) {
        if (ISAS[i] > ti__cpu_isa_best()) continue;
        float *y = NULL;
        size_t ny = 0;
        TI_CHECK(run_model(ISAS[i], &y, &ny));
        TI_CHECK_EQ_INT(ny, nref);
        int bad = 0;
        for (size_t q = 0; y != NULL && q < ny && q < nref; q++) {
            double tol = 1e-4 * fmax(fabs(ref[q]), amax * 1e-2);
            if (!(fabs((double)y[q] - ref[q]) <= tol) && bad++ == 0)
                printf("  %s: output[%zu] = %.9g, scalar gives %.9g\n",
                       ti__cpu_isa_name(ISAS[i]), q, y[q], ref[q]);
        }
        TI_CHECK_EQ_INT(bad, 0);
        free(y);
    }
    free(ref);
}

/* The epilogue (bias per row of C and a fused activation, applied by ti__sgemm_ex block by
 * block) gives the same bits as the plain GEMM followed by one pass of ti__act_block over
 * C, on every ISA, serial and threaded, for every path: few rows (M < MR), the SIMD tiles
 * with several k blocks, K = 0; padding columns of C untouched. */
TI_TEST(epilogue_equals_gemm_then_activation) {
    static const int acts[] = {TI__ACT_NONE, TI__ACT_RELU, TI__ACT_CLIP, TI__ACT_HARD_SWISH,
                               TI__ACT_SILU};
    static const size_t shapes[][3] = {{3, 37, 20}, {17, 45, 300}, {40, 600, 33}, {9, 7, 0},
                                       {64, 129, 513}, {1, 1000, 64},
                                       {160, 49, 576}, {48, 1, 200}, {37, 1, 1152},
                                       {96, 530, 16}};
    ti__threadpool *tp = ti__threadpool_create(NULL, 2);
    TI_REQUIRE(tp != NULL);
    int runs = 0;
    for (size_t si = 0; si < sizeof(shapes) / sizeof(shapes[0]); si++)
        for (size_t ai = 0; ai < sizeof(acts) / sizeof(acts[0]); ai++)
            for (int with_bias = 0; with_bias < 2; with_bias++) {
                gcase g;
                memset(&g, 0, sizeof g);
                size_t m = shapes[si][0], n = shapes[si][1], k = shapes[si][2];
                /* A transposed for some: N = 1 has a path for each (ti__sgemm_gemv, _t) */
                if (!make_case(&g, (int)((ai >> 1) & 1), (int)(ai & 1), m, n, k, 1.0f, 0.0f)) {
                    TI_CHECK(!"out of memory");
                    free_case(&g);
                    continue;
                }
                float *bias = (float *)malloc(sizeof(float) * m);
                float *want = (float *)malloc(sizeof(float) * m * g.ldc);
                float *got = (float *)malloc(sizeof(float) * m * g.ldc);
                TI_REQUIRE(bias != NULL && want != NULL && got != NULL);
                for (size_t i = 0; i < m; i++) bias[i] = frand();
                ti__gemm_epi epi;
                epi.bias = with_bias ? bias : NULL;
                epi.act = acts[ai];
                epi.a = -0.25f;
                epi.b = 0.5f;
                for (int i = 0; i < 3; i++) {
                    if (ti__cpu_force_isa(ISAS[i]) != ISAS[i]) continue;
                    for (int threaded = 0; threaded < 2; threaded++) {
                        ti__threadpool *t = threaded ? tp : NULL;
                        memcpy(want, g.c0, sizeof(float) * m * g.ldc);
                        memcpy(got, g.c0, sizeof(float) * m * g.ldc);
                        ti__sgemm_ref(g.ta, g.tb, m, n, k, 1.0f, g.a, g.lda, g.b, g.ldb, 0.0f,
                                      want, g.ldc, t);
                        ti__act_block(epi.act, epi.a, epi.b, epi.bias, want, g.ldc, m, n);
                        ti__sgemm_ex(g.ta, g.tb, m, n, k, 1.0f, g.a, g.lda, g.b, g.ldb, 0.0f, got,
                                     g.ldc, &epi, t);
                        int bad = 0;
                        for (size_t e = 0; e < m * g.ldc; e++)
                            if (memcmp(&got[e], &want[e], sizeof(float)) != 0 && bad++ == 0)
                                printf("  %s threads=%d M=%zu N=%zu K=%zu act=%d bias=%d: "
                                       "C[%zu,%zu] = %.9g, expected %.9g\n",
                                       ti__cpu_isa_name(ISAS[i]), threaded ? 2 : 1, m, n, k,
                                       acts[ai], with_bias, e / g.ldc, e % g.ldc, got[e],
                                       want[e]);
                        TI_CHECK_EQ_INT(bad, 0);
                        runs++;
                    }
                }
                ti__cpu_force_isa(-1);
                free(bias);
                free(want);
                free(got);
                free_case(&g);
            }
    ti__threadpool_destroy(tp);
    TI_CHECK(runs >= 9 * 5 * 2 * 2);
}

/* The thread pool's split: every index of [0, n) in exactly one range, for pools of 2 to 4
 * threads and many sizes and grains; the caller always runs the first chunk (its own block
 * starts there, taken before the workers can take anything), so consecutive jobs give the
 * same thread the same part of the range. ti__parallel_for_part (every other job): each
 * range told a participant number below the pool's size, 0 on the caller, and never two
 * ranges at once with the same number (the GEMM gives each number its own workspace). */
#ifndef TI_NO_THREADS
typedef struct pool_job {
    unsigned char *hits;
    pthread_t caller;
    int first_by_caller;
    int threads, bad_part;
    pthread_mutex_t mu;
    pthread_t owner[TI_MAX_THREADS]; /* the thread seen with each participant number */
    int owned[TI_MAX_THREADS];
} pool_job;
static void pool_range(void *ctx, size_t b, size_t e) {
    pool_job *j = (pool_job *)ctx;
    for (size_t i = b; i < e; i++) j->hits[i]++;
    if (b == 0) j->first_by_caller = pthread_equal(pthread_self(), j->caller) != 0;
}
static void pool_part_range(void *ctx, int part, size_t b, size_t e) {
    pool_job *j = (pool_job *)ctx;
    if (part < 0 || part >= j->threads) {
        j->bad_part = 1;
        return;
    }
    pthread_mutex_lock(&j->mu);
    if (!j->owned[part]) {
        j->owner[part] = pthread_self();
        j->owned[part] = 1;
    } else if (!pthread_equal(j->owner[part], pthread_self())) {
        j->bad_part = 1; /* two threads with one number: they could run at once */
    }
    if ((pthread_equal(pthread_self(), j->caller) != 0) != (part == 0)) j->bad_part = 1;
    pthread_mutex_unlock(&j->mu);
    pool_range(ctx, b, e);
    for (volatile int spin = 0; spin < 20000; spin++) {
    } /* some microseconds: long enough for every worker to take a range */
}
#endif
/* The caller's first chunk waits (up to 20 s) for a range run by another thread, which
 * only a worker of the pool can be: 1 when one came. Timing-free: however the threads are
 * scheduled, the caller cannot finish the job alone while it waits. */
typedef struct worker_probe {
    pthread_t caller;
    int seen; /* set by a worker (__atomic: a test of the pool, not of core/sync.c) */
} worker_probe;
static void probe_range(void *ctx, size_t b, size_t e) {
    worker_probe *w = (worker_probe *)ctx;
    (void)e;
    if (!pthread_equal(pthread_self(), w->caller)) {
        __atomic_store_n(&w->seen, 1, __ATOMIC_RELEASE);
        return;
    }
    if (b != 0) return;
    double t0 = ti__now_ms();
    while (!__atomic_load_n(&w->seen, __ATOMIC_ACQUIRE) && ti__now_ms() - t0 < 20000.0) {
    }
}
static int pool_worker_runs(ti__threadpool *tp) {
    worker_probe w;
    w.caller = pthread_self();
    w.seen = 0;
    ti__parallel_for(tp, (size_t)ti__threadpool_size(tp) * 4, 1, probe_range, &w);
    return __atomic_load_n(&w.seen, __ATOMIC_ACQUIRE);
}
TI_TEST(thread_pool_covers_each_index_once) {
#ifdef TI_NO_THREADS
    TI_SKIP("TI_NO_THREADS: no pool");
#else
    enum { NMAX = 5000 };
    unsigned char *hits = (unsigned char *)malloc(NMAX);
    int bad = 0;
    for (int threads = 2; threads <= 4; threads++) {
        ti__threadpool *tp = ti__threadpool_create(NULL, threads);
        TI_CHECK(tp != NULL);
        if (tp == NULL) break;
        /* every worker started (on Windows too: its own threads, core/sync.c), and one
         * runs a range while the caller waits in its own (not the caller alone) */
        TI_CHECK_EQ_INT(ti__threadpool_size(tp), threads);
        TI_CHECK(pool_worker_runs(tp));
        for (int r = 0; r < 300; r++) {
            size_t n = 1 + urand() % (r < 100 ? 40 : NMAX), grain = 1 + urand() % (r % 3 == 0 ? 3 : 200);
            pool_job j;
            memset(&j, 0, sizeof j);
            memset(hits, 0, NMAX);
            j.hits = hits;
            j.caller = pthread_self();
            j.first_by_caller = -1;
            j.threads = ti__threadpool_size(tp);
            pthread_mutex_init(&j.mu, NULL);
            if (r % 2) ti__parallel_for_part(tp, n, grain, pool_part_range, &j);
            else ti__parallel_for(tp, n, grain, pool_range, &j);
            if (j.bad_part && bad++ == 0)
                printf("  %d threads, n %zu, grain %zu: a participant number out of range, "
                       "on the caller and a worker, or on two workers\n", threads, n, grain);
            pthread_mutex_destroy(&j.mu);
            for (size_t i = 0; i < n; i++)
                if (hits[i] != 1 && bad++ == 0)
                    printf("  %d threads, n %zu, grain %zu: index %zu run %d times\n", threads, n,
                           grain, i, hits[i]);
            if (j.first_by_caller != 1 && bad++ == 0)
                printf("  %d threads, n %zu, grain %zu: chunk 0 not on the caller\n", threads, n, grain);
        }
        ti__threadpool_destroy(tp);
    }
    free(hits);
    TI_CHECK_EQ_INT(bad, 0);
#endif
}

/* ti__sgemm_split, the SIMD tiles on 2-4 threads: C cut along one dimension into at most
 * one band a thread, each band `part` consecutive tiles (columns: tiles of whole slivers no
 * wider than one thread's 512; rows: whole slivers of mr, tiles as wide as one thread's),
 * each band ceil(slivers / threads) slivers, less than a sliver a tile more, but for the
 * last; the pool, given the band as its grain, runs each band in one call; and GEMMs so
 * cut on 3 and 4 threads right (the other tests run 2). */
#ifndef TI_NO_THREADS
typedef struct band_rec {
    pthread_mutex_t mu;
    size_t part, tiles;
    int calls, bad;
} band_rec;
static void band_range(void *ctx, int part, size_t b, size_t e) {
    band_rec *r = (band_rec *)ctx;
    (void)part;
    pthread_mutex_lock(&r->mu);
    r->calls++;
    if (b % r->part != 0 || e != TI__MIN(b + r->part, r->tiles)) r->bad = 1;
    pthread_mutex_unlock(&r->mu);
}
#endif
TI_TEST(threads_take_one_band_each) {
#ifdef TI_NO_THREADS
    TI_SKIP("TI_NO_THREADS: no pool");
#else
    /* MobileNetV2's 1x1 convs (channels x positions) and its transposed ones (positions x
     * channels), then random */
    static const size_t shapes[][2] = {{16, 12544}, {96, 12544}, {144, 3136}, {192, 784},
                                       {576, 196}, {96, 196}, {196, 96}, {49, 1280},
                                       {49, 320}, {5, 40}, {1000, 1000}};
    int bad = 0, simd = 0;
    for (int i = 1; i < 3; i++) {
        if (ti__cpu_force_isa(ISAS[i]) != ISAS[i]) continue;
        for (int threads = 2; threads <= 4; threads++) {
            ti__threadpool *tp = ti__threadpool_create(NULL, threads);
            TI_CHECK(tp != NULL);
            if (tp == NULL) break;
            for (int c = 0; c < 60; c++) {
                size_t ns = sizeof shapes / sizeof shapes[0];
                size_t M = c < (int)ns ? shapes[c][0] : dim(4, 700);
                size_t N = c < (int)ns ? shapes[c][1] : dim(2, 4000);
                ti__sgemm_job j;
                ti__sgemm_job_init(&j, 0, 0, M, N, 64, 1.0f, NULL, 64, NULL, N, 0.0f, NULL, N,
                                   NULL);
                if (j.isa == NULL || ti__sgemm_plan(&j, (size_t)threads) != TI__SG_TILES) {
                    if (bad++ == 0) printf("  %zu x %zu: not the SIMD tiles\n", M, N);
                    continue;
                }
                simd = 1;
                size_t mr = (size_t)j.isa->mr, nr = (size_t)j.isa->nr;
                size_t tiles = (M + j.mt - 1) / j.mt * j.n_tiles_n, part = j.part;
                size_t bands = part > 0 ? (tiles + part - 1) / part : 0;
                int ok = part > 0 && bands <= (size_t)threads;
                if (ok && j.mt >= M) { /* columns */
                    size_t sl = (N + nr - 1) / nr, per = (sl + threads - 1) / threads;
                    size_t w = j.nt / nr, band = w * part; /* slivers a tile, a band */
                    ok = j.nt % nr == 0 && j.nt <= 512 && band >= per && band < per + part &&
                         bands == (sl + band - 1) / band;
                    /* MobileNetV2's: the last band within a tile of the others (12544
                     * columns: not 13 tiles of 16 slivers a band, 208 + 184 slivers) */
                    if (c < (int)ns && bands > 1 && sl - (bands - 1) * band + w < band) ok = 0;
                } else if (ok) { /* rows */
                    size_t rs = (M + mr - 1) / mr;
                    ok = j.mt == (rs + threads - 1) / threads * mr && part == j.n_tiles_n;
                }
                if (!ok && bad++ == 0)
                    printf("  %s, %d threads, %zu x %zu: tiles %zu x %zu (%zu), part %zu\n",
                           ti__cpu_isa_name(ISAS[i]), threads, M, N, j.mt, j.nt, tiles, part);
                band_rec r;
                memset(&r, 0, sizeof r);
                pthread_mutex_init(&r.mu, NULL);
                r.part = part > 0 ? part : 1;
                r.tiles = tiles;
                ti__parallel_for_part(tp, tiles, r.part, band_range, &r);
                if ((r.bad || r.calls != (int)((tiles + r.part - 1) / r.part)) && bad++ == 0)
                    printf("  %d threads, %zu tiles in bands of %zu: %d calls, not one a band\n",
                           threads, tiles, r.part, r.calls);
                pthread_mutex_destroy(&r.mu);
            }
            ti__threadpool_destroy(tp);
        }
    }
    ti__cpu_force_isa(-1);
    TI_CHECK_EQ_INT(bad, 0);
    if (!simd) TI_SKIP("no SIMD GEMM kernels on this CPU: nothing is cut so");
    static const size_t prods[][3] = {{100, 1100, 20}, {600, 60, 30}, {49, 700, 70}, {30, 5, 9}};
    for (int threads = 3; threads <= 4; threads++) {
        ti__threadpool *tp = ti__threadpool_create(NULL, threads);
        for (size_t c = 0; c < sizeof prods / sizeof prods[0]; c++)
            check_case((int)c & 1, 0, prods[c][0], prods[c][1], prods[c][2], 1.0f, 0.0f, tp);
        ti__threadpool_destroy(tp);
    }
#endif
}

int main(void) {
    isa_report();
    TI_RUN(thread_pool_covers_each_index_once);
    TI_RUN(threads_take_one_band_each);
    TI_RUN(forcing_an_isa);
    TI_RUN(edge_shapes);
    TI_RUN(random_shapes);
    TI_RUN(big_shapes);
    TI_RUN(thread_parts_by_cost);
    TI_RUN(optional_kernels_run_where_planned);
    TI_RUN(workspace_path);
    TI_RUN(model_agrees_across_isas);
    TI_RUN(epilogue_equals_gemm_then_activation);
    TI_RUN(b_panel_prepacked);
    TI_RUN(a_panel_prepacked);
    TI_RUN(transposed_store);
    return ti_test_summary();
}
