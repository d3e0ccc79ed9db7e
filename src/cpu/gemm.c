/* Matrix products: Gemm, MatMul (numpy semantics: 1-D promotion, batch broadcast) and
 * MatMulInteger, plus the blocked float32 GEMM (ti__sgemm_ref) that conv.c also calls.
 * float32 runs the blocked GEMM: SIMD micro-kernels (cpu/x86/) chosen at run time by
 * ti__cpu_isa() (cpu/isa.c), or the portable micro-kernel below; other dtypes run a plain
 * generic loop. Relies on tensor.c element access and the thread pool. Must not allocate:
 * GEMM packing buffers live on the stack (at most about 80 KiB, so small worker-thread
 * stacks suffice), and large products also use a workspace their caller gives
 * (ti__sgemm_ws: MatMul and Gemm take it from the session's scratch, sized at planning by
 * ti__sgemm_ws_floats), one part per thread. */

/* Register tile of the micro-kernel (MR rows x NR columns of C held in accumulators) and
 * the cache blocks: a KC x NC panel of B is packed once and reused for every MR rows. */
#define TI__SG_MR 4 /* ti__sgemm_micro is written for 4 */
#define TI__SG_NR 16
#define TI__SG_KC 128
#define TI__SG_NC 64

/* acc[MR][NR] = ap(kc x MR, p-major) * bp(kc x NR, p-major). Written as MR separate
 * accumulator rows with the column loop innermost: the form gcc and clang both turn into
 * broadcast + vector multiply-add at -O2 (a 2-D accumulator array is not vectorised well). */
TI__PRIVATE void ti__sgemm_micro(size_t kc, const float *ap, const float *bp, float *acc) {
    float c0[TI__SG_NR], c1[TI__SG_NR], c2[TI__SG_NR], c3[TI__SG_NR];
    for (int j = 0; j < TI__SG_NR; j++) c0[j] = c1[j] = c2[j] = c3[j] = 0.0f;
    for (size_t p = 0; p < kc; p++) {
        const float *b = bp + p * TI__SG_NR, *a = ap + p * TI__SG_MR;
        float a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3];
        for (int j = 0; j < TI__SG_NR; j++) {
            float bj = b[j];
            c0[j] += a0 * bj;
            c1[j] += a1 * bj;
            c2[j] += a2 * bj;
            c3[j] += a3 * bj;
        }
    }
    for (int j = 0; j < TI__SG_NR; j++) {
        acc[j] = c0[j];
        acc[TI__SG_NR + j] = c1[j];
        acc[2 * TI__SG_NR + j] = c2[j];
        acc[3 * TI__SG_NR + j] = c3[j];
    }
}

typedef struct ti__sgemm_job {
    int trans_a, trans_b;
    size_t m, n, k;
    float alpha, beta;
    const float *a, *b;
    size_t lda, ldb, ldc;
    float *c;
    size_t mt, nt;    /* task tile: rows x columns of C */
    size_t n_tiles_n; /* tiles along N */
    size_t part;      /* tiles in each thread's part (ti__sgemm_split), 0: any split */
    const ti__sgemm_isa *isa; /* SIMD kernels, or NULL: the portable micro-kernel */
    const float *bpanel;      /* op(B) packed by ti__sgemm_pack_bpanel for isa->nr, or NULL */
    /* rows of each sliver of bpanel: k, or more where the job takes k of them from its
     * first (a part of K, ti__sgemm_bpanel_part) */
    size_t kp;
    /* the k block with a B panel (0: the ISA's kc): the sums over k as the caller wants
     * them cut (cpu/conv.c ti__conv_ct_parts) */
    size_t kc;
    /* op(A) packed by ti__sgemm_pack_apanel for isa->mr, or NULL; a is still op(A) as it
     * lies, for the paths that take no panel (few rows, one column) */
    const float *apanel;
    float *ty;                /* C^T is also stored here (rows ldty apart), or NULL */
    size_t ldty;
    const ti__gemm_epi *tepi; /* applied to ty: bias per row of ty, i.e. per column of C */
    int ty_sum;               /* 1: ty holds a summand, C^T is added to it before tepi */
    /* ty's epilogue as the ISA's store_t applies it (ti__sgemm_kernel_epi's kind, 0 none,
     * with its bounds), or -1: tepi by ti__sgemm_epilogue after the store */
    int ty_ep;
    float ty_lo, ty_hi;
    const ti__gemm_epi *epi; /* bias and activation for finished blocks of C, or NULL */
    /* The caller's workspace (ti__sgemm_ws_floats), ws_part floats for each participant of
     * the thread pool, or NULL: the packing buffers are then on the stack only */
    float *ws;
    size_t ws_part;
    int ws_sized; /* tiles planned for a workspace (ti__sgemm_ws_floats, ti__sgemm_ws) */
    /* 1: every tile takes the workspace, small ones too (ti__sgemm_conv): the same k blocks
     * on any pool, so the same bits at any thread count */
    int ws_all;
    /* 1: that operand is a layer's input, which every thread of the pool wrote a part of in
     * the layer before (the conv paths say so); with 2+ threads it is then packed, not read
     * where it lies (ti__sgemm_tile_simd) */
    int a_input, b_input;
    int threads; /* of the pool that runs the job (ti__sgemm_go) */
} ti__sgemm_job;

/* The finished block C[r0:r0+h, c0:c0+w] stored transposed into ty while in L1; c2 (NULL:
 * none), a block as C's (ldc apart), added to it first. */
TI__PRIVATE void ti__sgemm_store_t(const ti__sgemm_job *j, const float *c2, size_t r0, size_t h,
                                   size_t c0, size_t w) {
    float *t = j->ty + c0 * j->ldty + r0;
    const float *c = j->c + r0 * j->ldc + c0;
    if (j->isa != NULL && j->isa->store_t != NULL) {
        const float *bias = j->tepi != NULL && j->tepi->bias != NULL ? j->tepi->bias + c0 : NULL;
        j->isa->store_t(c, c2, j->ldc, h, w, t, j->ldty, j->ty_sum, j->ty_ep > 0 ? j->ty_ep : 0,
                        bias, j->ty_lo, j->ty_hi);
        return;
    }
    for (size_t r = 0; r < h; r++, c += j->ldc, c2 = c2 != NULL ? c2 + j->ldc : NULL)
        for (size_t q = 0; q < w; q++) {
            float v = c2 != NULL ? c2[q] + c[q] : c[q];
            t[q * j->ldty + r] = j->ty_sum ? v + t[q * j->ldty + r] : v;
        }
}

/* The job's epilogue on the finished block C[r0:r0+h, c0:c0+w], and tepi on its copy in ty
 * when there is one. */
TI__PRIVATE void ti__sgemm_epilogue(const ti__sgemm_job *j, size_t r0, size_t h, size_t c0,
                                    size_t w) {
    const ti__gemm_epi *e = j->epi;
    if (e != NULL && (e->bias != NULL || e->act != TI__ACT_NONE))
        ti__act_block(e->act, e->a, e->b, e->bias != NULL ? e->bias + r0 : NULL,
                      j->c + r0 * j->ldc + c0, j->ldc, h, w);
    e = j->tepi;
    if (j->ty != NULL && j->ty_ep < 0 && e != NULL && (e->bias != NULL || e->act != TI__ACT_NONE))
        ti__act_block(e->act, e->a, e->b, e->bias != NULL ? e->bias + c0 : NULL,
                      j->ty + c0 * j->ldty + r0, j->ldty, w, h);
}

/* ---- SIMD path: A read in place x packed B sliver, micro-kernel from cpu/x86 ---------- */

/* B is packed one sliver of kc x nr floats at a time (16 KiB): it stays in L1 while the
 * kernel runs down an mc x kc block of A, which stays in L2 for the next sliver. A is read
 * where it lies, unless its rows are a multiple of about 4 KiB apart: then the rows of a
 * sliver share a few L1 sets and evict each other and B, so the block is packed into a
 * stack buffer (64 KiB; mc shrinks to fit: 126 rows at kc 128, where 32 KiB held 56 and each
 * packed sliver of B served 4 kernel calls; SGEMM 1024^3, 1 thread, bench/sgemm.c, old and
 * new alternating: about 74 -> 73-82 GFLOP/s, where single runs of one build swing 63-83 on
 * a shared machine). At most about 80 KiB of stack in all. */
#define TI__SGX_BCAP 4096 /* floats: kc * nr of every ISA fits */
#define TI__SGX_ACAP 16384 /* floats of packed A */
/* Columns of C per task tile with one thread: a B panel of kc x NT floats stays in L2 across
 * the row blocks. */
#define TI__SGX_NT 512
/* Slivers of B packed side by side at most (ti__sgemm_tile_simd's groups) */
#define TI__SGX_GROUP 8
/* With a workspace (ti__sgemm_ws_floats): k blocks of at most WKC, K split evenly, and row
 * blocks of WMR row slivers when A is packed. At 1024^3 (1 thread, bench/sgemm.c) the stack
 * buffers' k block of 128 made 8 passes over C, whose rows, 4 KiB apart, share two L1 sets:
 * 1024 x 512 x 128 ran at 89 % of the FMA peak with C's rows 2 KiB apart, 77-80 % with
 * 4 KiB; and the 64 KiB A buffer held 126 rows, so each B sliver was packed 9 times. Here
 * B's kc x cols panel of the tile is packed once per k block and C passed K / 512 times:
 * k blocks of 128 / 256 / 512 / 1024 ran at 75 / 81 / 86 / 88 % (two runs each, within a
 * point); row blocks of 28, 56 or 112 rows within a point of each other. */
#define TI__SGX_WKC 512
#define TI__SGX_WMR 8
/* Columns of a tile with one thread and a workspace: with 1024 (B's panel 2 MiB at kc 512,
 * past the 1 MiB L2 of the Zen 4 measured) A is packed once, not twice: 1024^3 at 86 / 86 /
 * 86 % of the FMA peak with 512 columns, 88 / 88 / 88 % with 1024, alternating runs. */
#define TI__SGX_WNT 1024

/* 1 when rows `stride` floats apart fall into too few of the 64 sets of a 32 KiB, 8-way L1
 * (64-byte lines): fewer than 12 distinct sets among 16 rows. */
TI__PRIVATE int ti__sgemm_set_conflicts(size_t stride) {
    unsigned long long seen = 0;
    int distinct = 0;
    for (size_t r = 0; r < 16; r++) {
        unsigned set = (unsigned)((r * stride * sizeof(float) / 64) % 64);
        if (!(seen >> set & 1)) distinct++;
        seen |= 1ULL << set;
    }
    return distinct < 12;
}

/* Packs op(A)[r0:r0+h, p0:p0+kc] as kc x h, element (r, p) at dst[p * h + r]: the layout
 * of a transposed A with leading dimension h, which the kernels read. */
TI__PRIVATE void ti__sgemm_pack_a(const ti__sgemm_job *j, size_t r0, size_t h, size_t p0,
                                  size_t kc, float *dst) {
    if (j->isa->pack_a != NULL) {
        const float *a = j->trans_a ? j->a + p0 * j->lda + r0 : j->a + r0 * j->lda + p0;
        j->isa->pack_a(a, j->lda, j->trans_a, h, kc, dst);
        return;
    }
    if (j->trans_a) {
        const float *s = j->a + p0 * j->lda + r0;
        for (size_t p = 0; p < kc; p++, s += j->lda, dst += h)
            for (size_t r = 0; r < h; r++) dst[r] = s[r];
        return;
    }
    /* p outer: h loads a row stride apart, then h contiguous stores. (Row by row, each load
     * would share its low 12 address bits with one of the strided stores still in flight,
     * which the CPU treats as a possible dependency: several times slower.) */
    const float *s = j->a + r0 * j->lda + p0;
    size_t lda = j->lda;
    for (size_t p = 0; p < kc; p++, s++, dst += h)
        for (size_t r = 0; r < h; r++) dst[r] = s[r * lda];
}

TI__PRIVATE float *ti__align64(float *p) {
    return (float *)(void *)ti__align_up((uintptr_t)p, 64);
}

/* Packs op(B)[p0:p0+kc, q0:q0+w] as kc rows of nr floats, zero past w. */
TI__PRIVATE void ti__sgemm_pack_b(const ti__sgemm_job *j, const ti__sgemm_isa *isa, size_t p0,
                                  size_t kc, size_t q0, size_t w, float *dst) {
    size_t nr = (size_t)isa->nr;
    if (!j->trans_b) {
        isa->pack_b(kc, w, j->b + p0 * j->ldb + q0, j->ldb, dst);
        return;
    }
    /* op(B)[p, q] = b[q * ldb + p]: column q of the sliver is a contiguous run of B */
    for (size_t q = 0; q < w; q++) {
        const float *s = j->b + (q0 + q) * j->ldb + p0;
        for (size_t p = 0; p < kc; p++) dst[p * nr + q] = s[p];
    }
    for (size_t q = w; q < nr; q++)
        for (size_t p = 0; p < kc; p++) dst[p * nr + q] = 0.0f;
}

/* Asks for op(B)[p0:p1, q0:q0+w] to be brought into the caches (a hint: no fault, no
 * effect on results). */
TI__PRIVATE void ti__sgemm_prefetch_b(const ti__sgemm_job *j, size_t p0, size_t p1, size_t q0,
                                      size_t w) {
#if defined(__GNUC__) || defined(__clang__)
    if (j->trans_b) return; /* columns of op(B) are contiguous runs: prefetched in hardware */
    for (size_t p = p0; p < p1; p++) {
        const float *s = j->b + p * j->ldb + q0;
        for (size_t q = 0; q < w; q += 16) __builtin_prefetch(s + q, 0, 2);
        __builtin_prefetch(s + w - 1, 0, 2);
    }
#else
    (void)j, (void)p0, (void)p1, (void)q0, (void)w;
#endif
}

/* Asks for floats [f0, f1) of the panel block at p to be brought into the caches (a hint). */
TI__PRIVATE void ti__sgemm_prefetch_run(const float *p, size_t f0, size_t f1) {
#if defined(__GNUC__) || defined(__clang__)
    for (size_t f = f0 / 16 * 16; f < f1; f += 16) __builtin_prefetch(p + f, 0, 2);
#else
    (void)p, (void)f0, (void)f1;
#endif
}

/* Asks for op(A)[r0:r1, p0:p0+kc] to be brought into the caches (a hint). */
TI__PRIVATE void ti__sgemm_prefetch_a(const ti__sgemm_job *j, size_t r0, size_t r1, size_t p0,
                                      size_t kc) {
#if defined(__GNUC__) || defined(__clang__)
    if (j->trans_a) return; /* rows of op(A) are columns of A: read as contiguous runs */
    for (size_t r = r0; r < r1; r++) {
        const float *s = j->a + r * j->lda + p0;
        for (size_t p = 0; p < kc; p += 16) __builtin_prefetch(s + p, 0, 2);
        __builtin_prefetch(s + kc - 1, 0, 2);
    }
#else
    (void)j, (void)r0, (void)r1, (void)p0, (void)kc;
#endif
}

/* The workspace path's k block: K in equal blocks of at most TI__SGX_WKC. */
TI__PRIVATE size_t ti__sgemm_ws_kc(size_t K) {
    size_t blocks = (K + TI__SGX_WKC - 1) / TI__SGX_WKC;
    return blocks > 0 ? (K + blocks - 1) / blocks : 0;
}

/* Floats of workspace (ti__sgemm_job.ws) a tile of rows x cols of C runs with, 0 when it
 * runs on the stack buffers: a B panel packed at planning, B read in place, or each sliver
 * of B packed once anyway and either one k block or a few row slivers (each packed sliver
 * of B, hot in L1, serves 2-4 kernel calls: 32 x 784 x 144 and 32 x 784 x 192 ran at 87 /
 * 85 and 88 / 86 % of the FMA peak so, 84 / 84 % with the panel packed whole; 64 x 196 x
 * 384 and 96 x 196 x 576, 5 and 7 row slivers, 80-81 and 86-87 % either way), or no k. */
TI__PRIVATE size_t ti__sgemm_ws_need(const ti__sgemm_job *j, const ti__sgemm_isa *isa,
                                     size_t rows, size_t cols) {
    if (isa == NULL || j->bpanel != NULL || j->k == 0 ||
        (rows <= 2 * (size_t)isa->mr && !j->ws_all))
        return 0;
    int pack_a = j->apanel == NULL && ti__sgemm_set_conflicts(j->lda);
    size_t mc_stack = (size_t)isa->mc, kc = TI__MIN((size_t)isa->kc, j->k);
    if (pack_a) mc_stack = TI__MIN(mc_stack, TI__SGX_ACAP / kc / (size_t)isa->mr * isa->mr);
    if (rows <= mc_stack && (j->k <= (size_t)isa->kc || rows <= 4 * (size_t)isa->mr) &&
        !j->ws_all)
        return 0;
    size_t nr = (size_t)isa->nr, kcw = ti__sgemm_ws_kc(j->k);
    size_t need = 16 + kcw * ((cols + nr - 1) / nr * nr); /* 16: to align to 64 bytes */
    if (pack_a) need += TI__SGX_WMR * (size_t)isa->mr * kcw;
    return need;
}

/* C[m0:m1, n0:n1] of the job with the ISA's micro-kernel. Loops: k blocks (kc), then row
 * blocks of C (at most mc rows, split evenly), then slivers of nr columns, then slivers of
 * at most mr rows, also split evenly so that, for example, 16 rows run as 2 x 8 rather than
 * 14 + 2. */
TI__PRIVATE void ti__sgemm_tile_simd(const ti__sgemm_job *j, const ti__sgemm_isa *isa,
                                     size_t m0, size_t m1, size_t n0, size_t n1, float *ws) {
    float bbuf[TI__SGX_BCAP + 16], abuf[TI__SGX_ACAP + 16];
    float *bp = ti__align64(bbuf), *ap = ti__align64(abuf);
    size_t mr = (size_t)isa->mr, nr = (size_t)isa->nr, kcmax = (size_t)isa->kc;
    if (j->bpanel != NULL && j->kc > 0) kcmax = j->kc; /* no B is packed: any block */
    size_t rows = m1 - m0, acap = TI__SGX_ACAP;
    /* A layer's input on 2+ threads: half of it (or more) is in the other cores' caches. Read
     * in place, the kernel asks for its lines a k step at a time and waits on each (a
     * transposed A: a sliver's floats a row of X apart; B: kc rows of 32 floats, a row of X
     * apart); packing reads them in long runs, which the prefetchers follow. Per-node
     * minima, Xeon, 2 threads, builds alternating, 2-3 x 200 runs: MobileNetV2's 14 x 14
     * projections (A, transposed GEMM) 576 -> 96 0.111 -> 0.090 ms, 384 -> 64 0.054 ->
     * 0.045, SqueezeNet's classifier 0.741 -> 0.677; its 64 -> 16 squeeze at 55 x 55 (B)
     * 0.089 -> 0.068, MobileNetV2's 144 -> 24 at 56 x 56 0.084 -> 0.063. With 1 thread the
     * same A reads lost 10-18 % packed (0.060 -> 0.070 ms, 0.134 -> 0.146): in place there,
     * where the layer before left the input in this core's caches. */
    int shared = j->threads > 1;
    /* A packed at planning (weights): fixed slivers of mr rows, each K x mr floats in a row,
     * read where they lie. The tile must start on a sliver (ti__sgemm_plan's tiles do). */
    const float *apanel = j->apanel != NULL && m0 % mr == 0 ? j->apanel : NULL;
    size_t unit = apanel != NULL ? mr : 1; /* row blocks start on multiples of this */
    int pack_a = apanel == NULL && ((j->a_input && shared) || ti__sgemm_set_conflicts(j->lda));
    /* With the workspace: B's panel of the tile (kc x its slivers) at wsb, A's block after,
     * the kernel asking for its slivers ahead (1024^3, 1 thread, Xeon, bench/sgemm.c, medians
     * of 10 runs alternating with the plain kernel: 147.0 -> 153.3 GFLOP/s) */
    ti__sgemm_kernel_fn kern = isa->kernel;
    float *wsb = NULL;
    size_t ws_need = ti__sgemm_ws_need(j, isa, rows, n1 - n0);
    if (ws != NULL && ws_need > 0 && ws_need <= j->ws_part) {
        kcmax = ti__sgemm_ws_kc(j->k);
        wsb = ti__align64(ws);
        ap = wsb + kcmax * ((n1 - n0 + nr - 1) / nr * nr);
        acap = TI__SGX_WMR * mr * kcmax;
        if (isa->kernel_l2 != NULL) kern = isa->kernel_l2;
    }
    /* bias and ReLU / Clip / HardSwish in the kernel, before C is stored (a pass over C
     * after it was 6% of MobileNetV2, perf); others in ti__sgemm_epilogue after the kernel */
    float lo, hi;
    int in_kernel = j->epi != NULL && ti__sgemm_kernel_epi(j->epi, &lo, &hi) >= 0 &&
                    (j->epi->bias != NULL || j->epi->act != TI__ACT_NONE);
    ti__gemm_epi ke;
    memset(&ke, 0, sizeof ke);
    if (in_kernel) ke = *j->epi;
    TI_ASSERT(wsb != NULL ||
              ((j->bpanel != NULL || kcmax * nr <= TI__SGX_BCAP) && kcmax * mr <= TI__SGX_ACAP));
    /* a last column computed on its own, not as a sliver of 1 / nr useful columns */
    size_t tail = isa->col != NULL && !j->trans_b && j->bpanel == NULL && n1 - n0 > 16 &&
                  (n1 - n0) % 16 == 1;
    n1 -= tail;
    /* the last 2 to 12 columns past whole vectors of 16 by isa->cols, the rows as lanes (A
     * transposed or in panels: a row group's values contiguous at each k), where the kernel
     * would compute a vector of 16 for them; same bits. MobileNetV2's 1x1 convs at 14 x 14
     * (N = 196: 4 columns) and SqueezeNet's at 13 x 13 (N = 169: 9) */
    size_t ntail = 0;
    if (isa->cols != NULL && !tail && !j->trans_b && j->bpanel == NULL && j->ty == NULL &&
        (apanel != NULL || j->trans_a) && n1 - n0 > 16 && (n1 - n0) % 16 >= 2 &&
        (n1 - n0) % 16 <= 12)
        ntail = (n1 - n0) % 16;
    n1 -= ntail;
    /* B read where it lies, not packed, when each sliver of B would serve at most 2 kernel
     * calls (M up to 2 row slivers, e.g. 24 x 3136 x 144): packing it cost about 20 % there
     * (perf). Full slivers only: the kernel reads 32 columns. */
    int b_in_place = isa->kernel_ldb != NULL && !j->trans_b && j->bpanel == NULL &&
                     rows <= 2 * mr && !(j->b_input && shared);
    for (size_t pc = 0; pc < j->k || pc == 0; pc += kcmax) {
        size_t kc = TI__MIN(kcmax, j->k - pc);
        float beta = pc == 0 ? j->beta : 1.0f; /* later k blocks add to C */
        size_t mc_cap = (size_t)isa->mc;
        if (pack_a) mc_cap = TI__MIN(mc_cap, acap / (kc ? kc : 1) / mr * mr);
        if (wsb != NULL) /* the whole panel of this k block, once */
            for (size_t jr = n0; jr < n1; jr += nr)
                ti__sgemm_pack_b(j, isa, pc, kc, jr, TI__MIN(nr, n1 - jr), wsb + (jr - n0) * kc);
        size_t nblk = (rows + mc_cap - 1) / mc_cap, units = (rows + unit - 1) / unit;
        for (size_t ib = 0; ib < nblk; ib++) {
            size_t ic = m0 + units * ib / nblk * unit;
            size_t mc = TI__MIN(m1, m0 + units * (ib + 1) / nblk * unit) - ic;
            size_t ns = (mc + mr - 1) / mr; /* row slivers, each mc / ns or one more */
            if (pack_a)
                for (size_t s = 0; s < ns; s++) {
                    size_t r0 = mc * s / ns, h = mc * (s + 1) / ns - r0;
                    ti__sgemm_pack_a(j, ic + r0, h, pc, kc, ap + r0 * kc);
                }
            /* the next block of A (to be packed after this one), a share per sliver of B */
            size_t nx0 = m0 + rows * (ib + 1) / nblk, nx1 = m0 + rows * (ib + 2) / nblk;
            size_t njr = (n1 - n0 + nr - 1) / nr;
            if (!pack_a || ib + 1 >= nblk) nx1 = nx0;
            /* Slivers of B are taken grp at a time (packed side by side: kc x nr x grp floats,
             * the 16 KiB of one sliver at kc 128), and each row sliver runs along the whole
             * group, so a row of C is stored grp * nr floats in a row. With small K, one
             * sliver at a time stored every few FMAs to all mc rows of C, a row stride
             * apart (a 1x1 conv of 16 to 96 channels at 112 x 112: kc 16, 96 rows 49 KiB
             * apart); with groups of 8 that conv in MobileNetV2 went 0.77 -> 0.59 ms
             * (tinyinfer-run --profile, 1 thread). Same kernel calls, same bits. */
            size_t grp = kc > 0 ? TI__MIN(TI__SGX_BCAP / (kc * nr), (size_t)TI__SGX_GROUP) : 1;
            if (grp == 0) grp = 1; /* the workspace's k blocks: one sliver is 16-64 KiB */
            for (size_t jg = n0; jg < n1; jg += grp * nr) {
                size_t ge = TI__MIN(n1, jg + grp * nr), gn = (ge - jg + nr - 1) / nr;
                const float *bsl[TI__SGX_GROUP]; /* each sliver as the kernels read it */
                size_t bstr[TI__SGX_GROUP];
                for (size_t g = 0; g < gn; g++) {
                    size_t jr = jg + g * nr, w = TI__MIN(nr, n1 - jr), t = (jr - n0) / nr;
                    bsl[g] = bp + g * kc * nr;
                    bstr[g] = nr;
                    if (wsb != NULL) { /* packed for this k block */
                        bsl[g] = wsb + (jr - n0) * kc;
                    } else if (j->bpanel != NULL) { /* packed at planning: sliver jr / nr, rows pc.. */
                        bsl[g] = j->bpanel + (jr / nr * j->kp + pc) * nr;
                    } else if (b_in_place && w == nr) {
                        bsl[g] = j->b + pc * j->ldb + jr;
                        bstr[g] = j->ldb;
                    } else {
                        ti__sgemm_pack_b(j, isa, pc, kc, jr, w, bp + g * kc * nr);
                    }
                    if (nx1 > nx0)
                        ti__sgemm_prefetch_a(j, nx0 + (nx1 - nx0) * t / njr,
                                             nx0 + (nx1 - nx0) * (t + 1) / njr, pc, kc);
                }
                /* The next group of B: kc rows a row stride apart, each on its own page when
                 * B is wide, which the hardware prefetchers do not follow; fetched into the
                 * caches a share per kernel call, while the kernels run. */
                size_t jn = ge < n1 && j->bpanel == NULL && wsb == NULL ? ge : (size_t)-1;
                /* With a panel packed at planning (weights, often not in any cache: a model's
                 * layers run one after the other), the block of kc rows of the sliver that
                 * comes next, a share per kernel call: the slivers' blocks lie K * nr floats
                 * apart, a jump the hardware prefetchers do not follow from one to the next.
                 * MobileNetV2's 1x1 conv of 320 -> 1280 at 7 x 7, minimum of 100 runs in
                 * the model, three alternating runs: 0.539 / 0.545 / 0.552 -> 0.483 / 0.536 /
                 * 0.489 ms. The kernel asks for up to kc lines of the share, one per k step
                 * (ti__sgemm_kernel_fn), the rest is asked for before it: all at once, the
                 * requests filled the line buffers and the loads behind them waited (a
                 * quarter of the time of ResNet-18's 512 -> 512 convs at 7 x 7 by the
                 * transposed im2col GEMM, 2.39 ms each in a chain of eight; spread, 1.87). */
                size_t nq = ge < n1 ? ge : n0, pq = ge < n1 || ib + 1 < nblk ? pc : pc + kc;
                size_t pn_floats = 0; /* of each sliver's block in the next group */
                if (j->bpanel != NULL && pq < j->k) pn_floats = TI__MIN(kcmax, j->k - pq) * nr;
                /* whole slivers packed here side by side, nothing stored transposed: one
                 * kernel call for the group (ti__sgemm_isa.kernel_run) */
                int run = isa->kernel_run != NULL && gn > 1 && wsb == NULL &&
                          j->bpanel == NULL && j->ty == NULL && jg + gn * nr <= n1;
                for (size_t g = 0; run && g < gn; g++)
                    run = bstr[g] == nr && bsl[g] == bp + g * kc * nr;
                for (size_t s = 0; s < ns; s++) {
                    size_t r0 = mc * s / ns, h = mc * (s + 1) / ns - r0;
                    if (apanel != NULL) r0 = s * mr, h = TI__MIN(mr, mc - r0);
                    const float *a = ap + r0 * kc; /* packed: transposed layout, lda h */
                    size_t lda = h;
                    int a_rows = 0;
                    if (apanel != NULL) {
                        a = apanel + ((ic + r0) / mr * j->k + pc) * mr;
                        lda = mr;
                    } else if (!pack_a) {
                        a_rows = !j->trans_a;
                        a = a_rows ? j->a + (ic + r0) * j->lda + pc : j->a + pc * j->lda + ic + r0;
                        lda = j->lda;
                    }
                    const ti__gemm_epi *kepi = NULL;
                    if (in_kernel && pc + kc >= j->k) { /* the last k block: C is complete */
                        ke.bias = j->epi->bias != NULL ? j->epi->bias + ic + r0 : NULL;
                        kepi = &ke;
                    }
                    if (run) { /* the group's whole packed slivers in one call */
                        if (jn != (size_t)-1)
                            for (size_t g = 0; g < gn && jn + g * nr < n1; g++)
                                ti__sgemm_prefetch_b(j, pc + kc * s / ns, pc + kc * (s + 1) / ns,
                                                     jn + g * nr, TI__MIN(nr, n1 - jn - g * nr));
                        isa->kernel_run(kc, a, lda, a_rows, bsl[0], kc * nr, (int)gn,
                                        j->c + (ic + r0) * j->ldc + jg, j->ldc, (int)h, j->alpha,
                                        beta, kepi);
                        continue;
                    }
                    for (size_t g = 0; g < gn; g++) {
                        size_t jr = jg + g * nr, w = TI__MIN(nr, n1 - jr);
                        const float *pf = NULL; /* the share of it the kernel asks for */
                        size_t npf = 0;
                        if (pn_floats > 0 && nq + g * nr < n1) {
                            size_t f0 = pn_floats * s / ns / 16 * 16, f1 = pn_floats * (s + 1) / ns;
                            pf = j->bpanel + ((nq / nr + g) * j->kp + pq) * nr;
                            if (bstr[g] == nr) npf = TI__MIN(kc, (f1 - f0 + 15) / 16);
                            ti__sgemm_prefetch_run(pf, f0 + npf * 16, f1); /* the rest */
                            pf += f0;
                        }
                        if (jn != (size_t)-1 && jn + g * nr < n1)
                            ti__sgemm_prefetch_b(j, pc + kc * s / ns, pc + kc * (s + 1) / ns,
                                                 jn + g * nr, TI__MIN(nr, n1 - jn - g * nr));
                        float *c = j->c + (ic + r0) * j->ldc + jr;
                        if (bstr[g] != nr)
                            isa->kernel_ldb(kc, a, lda, a_rows, bsl[g], bstr[g], c, j->ldc,
                                            (int)h, (int)w, j->alpha, beta, kepi);
                        else
                            kern(kc, a, lda, a_rows, bsl[g], c, j->ldc, (int)h, (int)w, j->alpha,
                                 beta, kepi, pf, npf);
                        if (pc + kc >= j->k && j->ty != NULL)
                            ti__sgemm_store_t(j, NULL, ic + r0, h, jr, w);
                    }
                }
                /* the activations not in the kernel on the block's slivers (mc x nr each, in
                 * L1 or L2), and on its copy in ty, once: per kernel call (6 x 16, or 16 x 6
                 * in ty: one masked vector a row) SiLU cost a third more, or three times
                 * (build/exp) */
                if (pc + kc >= j->k && !in_kernel) /* in_kernel is 0 with ty: no epi */
                    for (size_t g = 0; g < gn; g++) {
                        size_t jr = jg + g * nr;
                        ti__sgemm_epilogue(j, ic, mc, jr, TI__MIN(nr, n1 - jr));
                    }
            }
            /* The last columns (ntail) of these rows by isa->cols while the block of A is in
             * L2: run after all k blocks, the tail read all of A once more from L3 or memory
             * (its two A loads held 45 % of its samples in SqueezeNet's 1000 x 169 x 512
             * classifier, 2 MiB of weights; perf annotate). A is the panel's slivers of mr
             * rows (row blocks start on one), or A^T's rows in groups of 16 from ic. Same
             * bits. */
            if (ntail > 0) {
                /* A's rows of the block: its first value, floats from one k to the next,
                 * from one row group to the next, and rows a group */
                const float *ta;
                size_t tstep, tgroup;
                int trows;
                if (apanel != NULL) { /* the panel's slivers of mr rows */
                    ta = apanel + (ic / mr * j->k + pc) * mr;
                    tstep = mr;
                    tgroup = j->k * mr;
                    trows = (int)mr;
                } else { /* A^T: groups of 16 rows from ic */
                    ta = j->a + pc * j->lda + ic;
                    tstep = j->lda;
                    tgroup = 16;
                    trows = 16;
                }
                isa->cols(ta, tstep, tgroup, trows, mc, kc, j->b + pc * j->ldb + n1, j->ldb,
                          (int)ntail, j->c + ic * j->ldc + n1, j->ldc, j->alpha, beta);
                if (pc + kc >= j->k) ti__sgemm_epilogue(j, ic, mc, n1, ntail);
            }
        }
        if (j->k == 0) break;
    }
    if (tail) {
        const float *a = j->trans_a ? j->a + m0 : j->a + m0 * j->lda;
        isa->col(j->trans_a, rows, j->k, a, j->lda, j->b + n1, j->ldb, j->c + m0 * j->ldc + n1,
                 j->ldc, j->alpha, j->beta);
        ti__sgemm_epilogue(j, m0, rows, n1, 1);
    }
}

/* The SIMD micro-kernel set for the ISA in use, or NULL for the portable path. */
TI__PRIVATE const ti__sgemm_isa *ti__sgemm_pick_isa(void) {
#ifdef TI__X86_SIMD
    int isa = ti__cpu_isa();
    if (isa >= TI__ISA_AVX512) return ti__sgemm_avx512_isa();
    if (isa >= TI__ISA_AVX2) return ti__sgemm_avx2_isa();
#elif defined(TI__ARM_NEON)
    if (ti__cpu_isa() >= TI__ISA_NEON) return ti__sgemm_neon_isa();
#endif
    return NULL;
}

/* C[m0:m1, n0:n1] of the job, with stack-packed panels. */
TI__PRIVATE void ti__sgemm_tile(const ti__sgemm_job *j, size_t m0, size_t m1, size_t n0,
                                size_t n1) {
    float bp[TI__SG_KC * TI__SG_NC]; /* B panel: NC/NR panels of kc x NR */
    float ap[TI__SG_KC * TI__SG_MR]; /* A panel: kc x MR, alpha applied */
    float acc[TI__SG_MR * TI__SG_NR];
    const float *A = j->a, *B = j->b;
    for (size_t jc = n0; jc < n1; jc += TI__SG_NC) {
        size_t nc = TI__MIN((size_t)TI__SG_NC, n1 - jc);
        for (size_t pc = 0; pc < j->k || pc == 0; pc += TI__SG_KC) {
            size_t kc = TI__MIN((size_t)TI__SG_KC, j->k - pc);
            /* pack B[pc:pc+kc, jc:jc+nc]; columns past nc are zero */
            for (size_t jr = 0; jr < nc; jr += TI__SG_NR) {
                float *dst = bp + jr * kc;
                size_t w = TI__MIN((size_t)TI__SG_NR, nc - jr);
                for (size_t p = 0; p < kc; p++) {
                    float *d = dst + p * TI__SG_NR;
                    size_t q = 0;
                    if (!j->trans_b) {
                        const float *s = B + (pc + p) * j->ldb + jc + jr;
                        for (; q < w; q++) d[q] = s[q];
                    } else {
                        const float *s = B + (jc + jr) * j->ldb + pc + p;
                        for (; q < w; q++) d[q] = s[q * j->ldb];
                    }
                    for (; q < TI__SG_NR; q++) d[q] = 0.0f;
                }
            }
            int first = pc == 0;
            for (size_t ir = m0; ir < m1; ir += TI__SG_MR) {
                size_t h = TI__MIN((size_t)TI__SG_MR, m1 - ir);
                /* pack alpha * A[ir:ir+h, pc:pc+kc] as kc x MR */
                for (size_t p = 0; p < kc; p++) {
                    size_t r = 0;
                    if (!j->trans_a) {
                        const float *s = A + ir * j->lda + pc + p;
                        for (; r < h; r++) ap[p * TI__SG_MR + r] = j->alpha * s[r * j->lda];
                    } else {
                        const float *s = A + (pc + p) * j->lda + ir;
                        for (; r < h; r++) ap[p * TI__SG_MR + r] = j->alpha * s[r];
                    }
                    for (; r < TI__SG_MR; r++) ap[p * TI__SG_MR + r] = 0.0f;
                }
                for (size_t jr = 0; jr < nc; jr += TI__SG_NR) {
                    size_t w = TI__MIN((size_t)TI__SG_NR, nc - jr);
                    ti__sgemm_micro(kc, ap, bp + jr * kc, acc);
                    for (size_t r = 0; r < h; r++) {
                        float *cr = j->c + (ir + r) * j->ldc + jc + jr;
                        const float *ar = acc + r * TI__SG_NR;
                        if (!first) {
                            for (size_t q = 0; q < w; q++) cr[q] += ar[q];
                        } else if (j->beta == 0.0f) { /* C may hold garbage: never read it */
                            for (size_t q = 0; q < w; q++) cr[q] = ar[q];
                        } else if (j->beta == 1.0f) {
                            for (size_t q = 0; q < w; q++) cr[q] += ar[q];
                        } else {
                            for (size_t q = 0; q < w; q++) cr[q] = j->beta * cr[q] + ar[q];
                        }
                    }
                }
            }
            if (j->k == 0) break;
        }
        ti__sgemm_epilogue(j, m0, m1 - m0, jc, nc);
    }
}

TI__PRIVATE void ti__sgemm_range(void *ctx, int part, size_t begin, size_t end) {
    const ti__sgemm_job *j = (const ti__sgemm_job *)ctx;
    float *ws = j->ws != NULL ? j->ws + (size_t)part * j->ws_part : NULL;
    for (size_t t = begin; t < end; t++) {
        size_t tm = t / j->n_tiles_n, tn = t % j->n_tiles_n;
        size_t m0 = tm * j->mt, n0 = tn * j->nt;
        size_t m1 = TI__MIN(m0 + j->mt, j->m), n1 = TI__MIN(n0 + j->nt, j->n);
        if (j->isa != NULL) ti__sgemm_tile_simd(j, j->isa, m0, m1, n0, n1, ws);
        else ti__sgemm_tile(j, m0, m1, n0, n1);
    }
}

/* Few rows (M < MR): one dot product or axpy per row, over a range of columns. */
TI__PRIVATE void ti__sgemm_small_m(void *ctx, size_t begin, size_t end) {
    const ti__sgemm_job *j = (const ti__sgemm_job *)ctx;
    size_t n0 = begin * j->nt, n1 = TI__MIN(end * j->nt, j->n);
    for (size_t i = 0; i < j->m; i++) {
        float *c = j->c + i * j->ldc;
        for (size_t q = n0; q < n1; q++)
            c[q] = j->beta == 0.0f ? 0.0f : (j->beta == 1.0f ? c[q] : j->beta * c[q]);
        if (j->trans_b) { /* B is N x K: contiguous dots */
            for (size_t q = n0; q < n1; q++) {
                const float *b = j->b + q * j->ldb;
                float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
                size_t p = 0;
                if (!j->trans_a && j->isa != NULL) { /* the classifier's Gemm: 1 x 1000 x 1280 */
                    c[q] += j->alpha * j->isa->dot(j->a + i * j->lda, b, j->k);
                    continue;
                }
                if (!j->trans_a) {
                    const float *a = j->a + i * j->lda;
                    for (; p + 4 <= j->k; p += 4) {
                        s0 += a[p] * b[p];
                        s1 += a[p + 1] * b[p + 1];
                        s2 += a[p + 2] * b[p + 2];
                        s3 += a[p + 3] * b[p + 3];
                    }
                    for (; p < j->k; p++) s0 += a[p] * b[p];
                } else {
                    for (; p < j->k; p++) s0 += j->a[p * j->lda + i] * b[p];
                }
                c[q] += j->alpha * ((s0 + s1) + (s2 + s3));
            }
        } else { /* B is K x N: rows scaled by A[i, p] */
            for (size_t p = 0; p < j->k; p++) {
                float av = j->alpha * (j->trans_a ? j->a[p * j->lda + i] : j->a[i * j->lda + p]);
                const float *b = j->b + p * j->ldb;
                for (size_t q = n0; q < n1; q++) c[q] += av * b[q];
            }
        }
        if (n1 > n0) ti__sgemm_epilogue(j, i, 1, n0, n1 - n0);
    }
}

/* One column (N = 1, A not transposed, the column of op(B) contiguous): rows [begin,
 * end) of C as dot products, then the epilogue on them. A conv on a 1 x 1 map (the
 * squeeze-and-excitation convs of EfficientNet, 1152 x 1 x 48) ran as slivers of 16
 * columns with 15 unused: 3-5x onnxruntime's time. */
TI__PRIVATE void ti__sgemm_gemv(void *ctx, size_t begin, size_t end) {
    const ti__sgemm_job *j = (const ti__sgemm_job *)ctx;
    for (size_t i = begin; i < end; i++) {
        float *c = j->c + i * j->ldc;
        float d = j->alpha * j->isa->dot(j->a + i * j->lda, j->b, j->k);
        *c = j->beta == 0.0f ? d : (j->beta == 1.0f ? *c + d : j->beta * *c + d);
    }
    if (end > begin) ti__sgemm_epilogue(j, begin, end - begin, 0, 1);
}

/* As ti__sgemm_gemv with A transposed (K x M, rows lda apart: the conv weights the prepack
 * pass transposed) and C's column contiguous (ldc 1): C[begin:end] summed over the rows of
 * A^T, 16 columns at a time in a local block (no aliasing with C, so the compiler keeps
 * it in registers). */
TI__PRIVATE void ti__sgemm_gemv_t(void *ctx, size_t begin, size_t end) {
    const ti__sgemm_job *j = (const ti__sgemm_job *)ctx;
    for (size_t i0 = begin; i0 < end; i0 += 16) {
        size_t w = TI__MIN((size_t)16, end - i0);
        float acc[16] = {0};
        for (size_t p = 0; p < j->k; p++) {
            const float *a = j->a + p * j->lda + i0;
            float bv = j->b[j->trans_b ? p : p * j->ldb];
            if (w == 16)
                for (size_t q = 0; q < 16; q++) acc[q] += bv * a[q];
            else
                for (size_t q = 0; q < w; q++) acc[q] += bv * a[q];
        }
        float *c = j->c + i0;
        for (size_t q = 0; q < w; q++) {
            float d = j->alpha * acc[q];
            c[q] = j->beta == 0.0f ? d : (j->beta == 1.0f ? c[q] + d : j->beta * c[q] + d);
        }
    }
    if (end > begin) ti__sgemm_epilogue(j, begin, end - begin, 0, 1);
}

/* ti__sgemm_gemv_t over blocks [begin, end) of 16 rows of C (the threads' unit). */
TI__PRIVATE void ti__sgemm_gemv_t_blocks(void *ctx, size_t begin, size_t end) {
    const ti__sgemm_job *j = (const ti__sgemm_job *)ctx;
    ti__sgemm_gemv_t(ctx, begin * 16, TI__MIN(end * 16, j->m));
}

/* How ti__sgemm_go runs a job */
enum { TI__SG_TILES, TI__SG_GEMV, TI__SG_GEMV_T, TI__SG_SMALL_M };

/* A float of the operand a thread reads weighs as this many multiply-adds in
 * ti__sgemm_split_cols: up to 4 the transposed 169 x 64 GEMMs below would go by columns
 * (measured 35 % slower), from 8 to 15 the models' choices are those measured there. */
#define TI__SG_SPLIT_READ 8

/* 1 when ti__sgemm_split cuts C by columns: always where each part keeps 8 slivers of nr
 * columns or where there are fewer row slivers than threads, never where there are fewer
 * column slivers than threads. Between, whichever asks less of the busiest thread: its
 * multiply-adds in whole slivers, plus the floats it reads of the operand that is not a
 * panel packed at planning (B, or A where B is one: in a conv that is the activations,
 * which the other core wrote; without a panel, A's too, at half weight). By rows each
 * thread reads all of B and its rows of A; by
 * columns its columns of B and all of A. SqueezeNet's squeeze convs at 13 x 13 (48 x 169 x
 * 256 and x 384) on 2 threads, whole rows of slivers (28 + 20) reading all of the input
 * each: 0.034 and 0.049 ms, by columns (96 + 73) 0.024 and 0.036; MobileNetV3-small's 40 x
 * 196 x 240: 0.031 -> 0.023 (minima of 3 x 150 runs in the models, Xeon, alternating). The
 * transposed GEMMs (169 x 64 x 384 and x 512, A the activations) stay on rows: by columns
 * each thread packs all of A, 0.055 -> 0.074 ms. */
TI__PRIVATE int ti__sgemm_split_cols(const ti__sgemm_job *j, size_t threads) {
    size_t M = j->m, N = j->n, mr = (size_t)j->isa->mr, nr = (size_t)j->isa->nr;
    size_t row_slivers = (M + mr - 1) / mr, col_slivers = (N + nr - 1) / nr;
    if (N >= threads * 8 * nr || row_slivers < threads) return 1;
    if (col_slivers < threads) return 0;
    /* A last sliver of one column that the kernel computes as a column (col1_cheap; AVX2's
     * takes about an eighth of a sliver's time) counts as none. A 7 x 7 map's 960 -> 160
     * (160 x 49 x 960) went by columns on AVX2 without this (one thread 2 slivers, the
     * other 1 and the column): 0.121 -> 0.154 ms against the transposed GEMM it took
     * before; by rows 0.107 -> 0.104 (another run; Zen 3, 2 threads, per-node minima of 3 x
     * 40 runs alternating) */
    size_t work_slivers = col_slivers;
    if (j->isa->col1_cheap && N > nr && N % nr == 1) work_slivers--;
    double K = (double)j->k, w = TI__SG_SPLIT_READ;
    double rows = (double)((row_slivers + threads - 1) / threads * mr);
    double cols = (double)((work_slivers + threads - 1) / threads * nr);
    double by_rows = rows * (double)(work_slivers * nr) * K;
    double by_cols = (double)(row_slivers * mr) * cols * K;
    if (j->bpanel == NULL) {
        /* and A, read where it lies (a conv's weights), at half that weight: by columns each
         * thread reads all of it. A 7 x 7 map's 1x1 conv by the plain GEMM, 1280 x 49 x 320
         * on AVX2, went by columns without it: each thread read all 1.6 MB of weights */
        by_rows += w * K * (double)N + w / 2 * K * rows;
        by_cols += w * K * cols + w / 2 * K * (double)M;
    } else {
        /* and B's panel (a conv's weights, packed at planning) at a quarter of that weight:
         * by rows each thread streams all of it. Transposed GEMMs of 1x1 convs on 7 x 7
         * maps that went by rows without it, every thread reading all the weights, and now
         * go by columns (per-node minima in the models, alternating rounds): on 2 threads of
         * a Zen 4, MobileNetV2's 960 -> 320 0.159-0.160 -> 0.149-0.150 ms, EfficientNet-B0's
         * 1152 -> 192 0.117 -> 0.109 and 1152 -> 320 0.191 -> 0.176; on 4 threads of a
         * 16-core Xeon, MobileNetV2's 160 -> 960 0.073-0.080 -> 0.060-0.062 */
        by_rows += w * K * rows + w / 4 * K * (double)(work_slivers * nr);
        by_cols += w * K * (double)M + w / 4 * K * cols;
    }
    return by_cols < by_rows;
}

/* The SIMD path's tiles on more than one thread: C cut along one dimension into one part a
 * thread, each part as large as one thread's product would be cut (columns in tiles of at
 * most nt, rows whole), so that the pool's contiguous blocks of tiles give every thread one
 * band of C, by columns or by rows as ti__sgemm_split_cols decides, rows in whole slivers
 * of mr. MobileNetV2's 1x1 convs on 2 threads, parts against smaller tiles (minima of 6
 * alternating rounds in the model): 56 x 56 24 -> 144 (columns) 0.138 -> 0.116 ms, 14 x 14
 * 96 -> 576 (rows) 0.130 -> 0.125, the transposed GEMMs of 7 x 7 320 -> 1280 0.269 ->
 * 0.226 and 14 x 14 576 -> 96 0.082 -> 0.072, where
 * tiles of a quarter of a thread's share, taken by row of tiles, gave each thread parts
 * of several bands and cost each tile its own start (the next sliver of B not yet
 * prefetched). A thread the OS has not scheduled leaves its part to the others whole:
 * coarser balance than four tiles a thread, on the threads' count the desc asked for. */
TI__PRIVATE void ti__sgemm_split(ti__sgemm_job *j, size_t threads) {
    size_t M = j->m, N = j->n, mr = (size_t)j->isa->mr, nr = (size_t)j->isa->nr;
    size_t row_slivers = (M + mr - 1) / mr;
    if (ti__sgemm_split_cols(j, threads)) {
        /* a part's slivers in the fewest tiles of at most nt columns that cover it with
         * the least excess (tiles are all one width: an excess moves the next part's
         * start); 12544 columns on 2 threads: 14 tiles of 14 slivers a part, not 13 of 16 */
        size_t part = ((N + nr - 1) / nr + threads - 1) / threads;
        size_t cap = TI__MAX((size_t)1, j->nt / nr), p0 = (part + cap - 1) / cap;
        size_t best = p0, excess = (part + p0 - 1) / p0 * p0 - part;
        for (size_t p = p0 + 1; p < 2 * p0 && excess > 0; p++)
            if ((part + p - 1) / p * p - part < excess) {
                best = p;
                excess = (part + p - 1) / p * p - part;
            }
        j->nt = (part + best - 1) / best * nr;
        j->part = best;
    } else {
        j->mt = (row_slivers + threads - 1) / threads * mr;
        j->part = (N + j->nt - 1) / j->nt;
    }
}

/* Chooses the job's path and, for tiles, their size (mt x nt, n_tiles_n) for `threads`. */
TI__PRIVATE int ti__sgemm_plan(ti__sgemm_job *j, size_t threads) {
    size_t M = j->m, N = j->n;
    if (N == 1 && j->isa != NULL && j->bpanel == NULL && !j->trans_a &&
        (j->trans_b || j->ldb == 1))
        return TI__SG_GEMV;
    if (N == 1 && j->isa != NULL && j->bpanel == NULL && j->trans_a && j->ldc == 1 &&
        (j->trans_b || j->ldb == 1))
        return TI__SG_GEMV_T;
    if (M < TI__SG_MR) { /* never with a B panel: ti__sgemm_bpanel declines */
        j->nt = 256;
        return TI__SG_SMALL_M;
    }
    /* The portable path: tiles as large as possible while leaving about 4 per thread. The
     * SIMD path blocks for the caches inside a tile: one thread takes the whole product in
     * tiles of NT (WNT) columns; more take one part each (ti__sgemm_split). */
    j->mt = j->ws_sized ? 256 : 128;
    j->nt = 512;
    if (j->isa != NULL) {
        j->mt = M;
        j->nt = j->ws_sized ? TI__SGX_WNT : TI__SGX_NT;
        if (threads > 1) ti__sgemm_split(j, threads);
    }
    while (j->isa == NULL) {
        size_t tiles = ((M + j->mt - 1) / j->mt) * ((N + j->nt - 1) / j->nt);
        if (tiles >= 4 * threads || (j->mt <= 16 && j->nt <= 64)) break;
        if (j->nt > 64 && (j->nt >= 4 * j->mt || j->mt <= 16)) j->nt /= 2;
        else j->mt /= 2;
    }
    if (j->isa != NULL && j->mt < M) { /* whole row slivers in all tiles but the last */
        size_t mr = (size_t)j->isa->mr;
        j->mt = TI__MAX(mr, (j->mt + mr / 2) / mr * mr);
    }
    if (j->bpanel != NULL) { /* a tile starts on a sliver of the panel */
        size_t nr = (size_t)j->isa->nr;
        j->nt = TI__MAX(nr, j->nt / nr * nr);
    }
    j->n_tiles_n = (N + j->nt - 1) / j->nt;
    return TI__SG_TILES;
}

/* Runs the job: parallel over tiles of C when tp is not NULL. */
TI__PRIVATE void ti__sgemm_go(ti__sgemm_job *j, ti__threadpool *tp) {
    size_t M = j->m, N = j->n, K = j->k;
    j->threads = ti__threadpool_size(tp);
    size_t flops = M * N * (K + 1);
    switch (ti__sgemm_plan(j, (size_t)j->threads)) {
    case TI__SG_GEMV:
        ti__parallel_for(tp, M, TI__MAX((size_t)16, 65536 / (K + 1)), ti__sgemm_gemv, j);
        return;
    case TI__SG_GEMV_T:
        ti__parallel_for(tp, (M + 15) / 16, TI__MAX((size_t)1, 4096 / (K + 1)),
                         ti__sgemm_gemv_t_blocks, j);
        return;
    case TI__SG_SMALL_M: {
        size_t tiles = (N + j->nt - 1) / j->nt;
        ti__parallel_for(tp, tiles, flops < 65536 ? tiles : 1, ti__sgemm_small_m, j);
        return;
    }
    default: {
        size_t tiles = ((M + j->mt - 1) / j->mt) * j->n_tiles_n;
        /* a thread's part as one chunk of the pool (its tiles are consecutive) */
        size_t grain = j->part > 0 ? j->part : 1;
        ti__parallel_for_part(tp, tiles, flops < 262144 ? tiles : grain, ti__sgemm_range, j);
    }
    }
}

TI__PRIVATE void ti__sgemm_job_init(ti__sgemm_job *j, int transA, int transB, size_t M, size_t N,
                                    size_t K, float alpha, const float *A, size_t lda,
                                    const float *B, size_t ldb, float beta, float *C, size_t ldc,
                                    const ti__gemm_epi *epi) {
    memset(j, 0, sizeof *j);
    j->epi = epi;
    j->trans_a = transA;
    j->trans_b = transB;
    j->m = M;
    j->n = N;
    j->k = K;
    j->kp = K;
    j->alpha = alpha;
    j->beta = beta;
    j->a = A;
    j->b = B;
    j->lda = lda;
    j->ldb = ldb;
    j->ldc = ldc;
    j->c = C;
    j->isa = ti__sgemm_pick_isa();
    j->ty_ep = -1;
}

/* C = alpha * op(A) * op(B) + beta * C, row-major; op(A) is M x K, op(B) K x N, then the
 * epilogue epi (NULL: none) on each finished block. beta == 0 never reads C. Parallel over
 * tiles of C when tp is not NULL. */
TI__PRIVATE void ti__sgemm_ex(int transA, int transB, size_t M, size_t N, size_t K, float alpha,
                              const float *A, size_t lda, const float *B, size_t ldb, float beta,
                              float *C, size_t ldc, const ti__gemm_epi *epi, ti__threadpool *tp) {
    if (M == 0 || N == 0) return;
    ti__sgemm_job j;
    ti__sgemm_job_init(&j, transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, epi);
    ti__sgemm_go(&j, tp);
}

/* ti__sgemm_ex (alpha 1, B as it is) for a conv: A its weights, also as an A panel
 * (ti__sgemm_pack_apanel for mr rows) or NULL; b_input: B is a layer's input that the
 * pool's threads wrote (a 1x1 conv's X), packed on 2+ threads (ti__sgemm_tile_simd). A
 * panel for other kernels' rows (an instruction set forced after planning) is not used.
 * ws: ws_floats floats, ti__sgemm_conv_ws_floats(M, N, K, tp) as the caller asked it with
 * this pool, or NULL and 0: the stack buffers (a tile whose need is past its part runs on
 * them too). */
TI__PRIVATE void ti__sgemm_conv(int transA, size_t M, size_t N, size_t K, const float *A,
                                size_t lda, const float *apanel, int mr, const float *B,
                                size_t ldb, int b_input, float beta, float *C, size_t ldc,
                                const ti__gemm_epi *epi, float *ws, size_t ws_floats,
                                ti__threadpool *tp) {
    if (M == 0 || N == 0) return;
    ti__sgemm_job j;
    ti__sgemm_job_init(&j, transA, 0, M, N, K, 1.0f, A, lda, B, ldb, beta, C, ldc, epi);
    j.b_input = b_input;
    if (j.isa != NULL && j.isa->mr == mr) j.apanel = apanel;
    if (ws != NULL && ws_floats > 0) { /* planned by ti__sgemm_conv_ws_floats */
        j.ws = ws;
        j.ws_sized = j.ws_all = 1;
        j.ws_part = ws_floats / (size_t)ti__threadpool_size(tp);
    }
    ti__sgemm_go(&j, tp);
}

/* The workspace of a job set up with no operands (ws_all as the caller set it): its tiles
 * planned for a workspace on tp's threads, the first tile's need times the threads; 0 off
 * the tiled path. */
TI__PRIVATE size_t ti__sgemm_ws_plan(ti__sgemm_job *j, ti__threadpool *tp) {
    j->ws_sized = 1;
    size_t threads = (size_t)ti__threadpool_size(tp);
    if (ti__sgemm_plan(j, threads) != TI__SG_TILES) return 0;
    /* the first tile is the largest; a smaller one needs no more (fewer columns), or, where
     * it would need a workspace the first does not, runs on the stack (but with ws_all) */
    return ti__sgemm_ws_need(j, j->isa, TI__MIN(j->mt, j->m), TI__MIN(j->nt, j->n)) * threads;
}

/* Floats of workspace with which ti__sgemm_ws runs this product on tp's threads faster than
 * on its stack buffers (the large products: more rows than a packed block of A holds, or K
 * past one k block), 0 when it would not use one. */
TI__PRIVATE size_t ti__sgemm_ws_floats(int transA, int transB, size_t M, size_t N, size_t K,
                                       size_t lda, ti__threadpool *tp) {
    if (M == 0 || N == 0) return 0;
    ti__sgemm_job j;
    ti__sgemm_job_init(&j, transA, transB, M, N, K, 1.0f, NULL, lda, NULL, 0, 0.0f, NULL, 0,
                       NULL);
    return ti__sgemm_ws_plan(&j, tp);
}

/* The workspace of ti__sgemm_conv for a conv's GEMM of M x N x K (A as its weights lie, B
 * its input) on tp's threads, for K past one k block of the stack buffers and M past one row
 * block, else 0: C is then passed once per workspace k block, not once per 128 steps, and
 * B packed once per k block, not once per row block. Every tile takes it (ws_all), so the
 * choice depends on the shape alone, not on the threads. SqueezeNet's classifier (1000 x
 * 169 x 512) alone, device tool's Xeon, 1 thread, minima of 200 runs, 8 rounds alternating:
 * 1.141-1.245 -> 1.097-1.108 ms. With its squeeze convs (16-64 rows, K 256-512) taking it
 * too, the model at 2 threads was slower in 7 rounds of 8 (medians 3.06-4.45 -> 4.26-4.93
 * ms): there a packed sliver of B serves 2-4 kernel calls, and a whole panel packed first
 * does not pay (ti__sgemm_ws_need). */
TI__PRIVATE size_t ti__sgemm_conv_ws_floats(size_t M, size_t N, size_t K, ti__threadpool *tp) {
    ti__sgemm_job j;
    /* lda 1024: rows that share L1 sets, so A's packed block is counted too (a conv's
     * weights transposed at planning are packed when their rows do), the most a tile takes */
    ti__sgemm_job_init(&j, 0, 0, M, N, K, 1.0f, NULL, 1024, NULL, 0, 0.0f, NULL, 0, NULL);
    if (j.isa == NULL || N == 0 || K <= (size_t)j.isa->kc || M <= (size_t)j.isa->mc) return 0;
    j.ws_all = 1;
    return ti__sgemm_ws_plan(&j, tp);
}

/* ti__sgemm_ex with a workspace of ws_floats floats (ti__sgemm_ws_floats for the same
 * product and thread pool). With less (a session's scratch sized for another node), or ws
 * NULL, or a product that asks for none: exactly ti__sgemm_ex, the stack buffers and their
 * tiles. Same results within float rounding: the k blocks differ, so the sums' order does. */
TI__PRIVATE void ti__sgemm_ws(int transA, int transB, size_t M, size_t N, size_t K, float alpha,
                              const float *A, size_t lda, const float *B, size_t ldb, float beta,
                              float *C, size_t ldc, const ti__gemm_epi *epi, ti__threadpool *tp,
                              float *ws, size_t ws_floats) {
    if (M == 0 || N == 0) return;
    size_t need = ws != NULL ? ti__sgemm_ws_floats(transA, transB, M, N, K, lda, tp) : 0;
    ti__sgemm_job j;
    ti__sgemm_job_init(&j, transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, epi);
    if (need > 0 && ws_floats >= need) { /* planned as ti__sgemm_ws_floats planned it */
        j.ws = ws;
        j.ws_sized = 1;
        j.ws_part = need / (size_t)ti__threadpool_size(tp);
    }
    ti__sgemm_go(&j, tp);
}

/* Floats of a B panel of K x N for slivers of nr columns (ti__sgemm_pack_bpanel). */
TI__PRIVATE size_t ti__sgemm_bpanel_floats(size_t K, size_t N, size_t nr) {
    return K * ((N + nr - 1) / nr * nr);
}

/* Packs op(B) (K x N; B[p * ldb + q], or B[q * ldb + p] when transB) once, for the SIMD
 * kernels of panel width nr: sliver s (columns s*nr ..) is K rows of nr floats, zero past N,
 * at dst + s * K * nr. ti__sgemm_tile_simd then reads each sliver where it lies instead of
 * packing it on every call: weights packed at planning. */
TI__PRIVATE void ti__sgemm_pack_bpanel(int transB, size_t K, size_t N, const float *B,
                                       size_t ldb, size_t nr, float *dst) {
    for (size_t q0 = 0; q0 < N; q0 += nr)
        for (size_t p = 0; p < K; p++, dst += nr)
            for (size_t q = 0; q < nr; q++)
                dst[q] = q0 + q >= N ? 0.0f : transB ? B[(q0 + q) * ldb + p] : B[p * ldb + q0 + q];
}

/* Floats of an A panel of M x K for slivers of mr rows (ti__sgemm_pack_apanel). */
TI__PRIVATE size_t ti__sgemm_apanel_floats(size_t M, size_t K, size_t mr) {
    return (M + mr - 1) / mr * mr * K;
}

/* Packs op(A) (M x K; A[r * lda + p], or A[p * lda + r] when transA) once, for the SIMD
 * kernels of mr rows: sliver s (rows s*mr ..) is K steps of mr floats, zero past M, at dst
 * + s * K * mr: the layout the kernels read as a transposed A of leading dimension mr. So a
 * conv's weights are read as one run, not mr rows a row stride apart (SqueezeNet's
 * classifier, 1000 x 169 x 512 on AVX2, Zen 3: 84.0 -> 96.3 GFLOP/s, s35). */
TI__PRIVATE void ti__sgemm_pack_apanel(int transA, size_t M, size_t K, const float *A,
                                       size_t lda, size_t mr, float *dst) {
    for (size_t r0 = 0; r0 < M; r0 += mr)
        for (size_t p = 0; p < K; p++, dst += mr)
            for (size_t r = 0; r < mr; r++)
                dst[r] = r0 + r >= M ? 0.0f : transA ? A[p * lda + r0 + r] : A[(r0 + r) * lda + p];
}

/* The SIMD kernels' rows (ti__sgemm_pack_apanel's mr), 0 without SIMD kernels. */
TI__PRIVATE int ti__sgemm_panel_mr(void) {
    const ti__sgemm_isa *isa = ti__sgemm_pick_isa();
    return isa != NULL ? isa->mr : 0;
}

/* The SIMD kernels' panel width (ti__sgemm_pack_bpanel's nr), 0 without SIMD kernels. */
TI__PRIVATE int ti__sgemm_panel_nr(void) {
    const ti__sgemm_isa *isa = ti__sgemm_pick_isa();
    return isa != NULL ? isa->nr : 0;
}

/* The job of ti__sgemm_bpanel and ti__sgemm_bpanel_part (no ty yet), or 0 where they
 * decline: no kernels of panel width nr, M below the micro-kernel's rows, no panel. */
TI__PRIVATE int ti__sgemm_bpanel_job(ti__sgemm_job *j, int transA, size_t M, size_t N,
                                     size_t K, const float *A, size_t lda, const float *bpanel,
                                     int nr, size_t kc, float *C, size_t ldc) {
    ti__sgemm_job_init(j, transA, 0, M, N, K, 1.0f, A, lda, NULL, 0, 0.0f, C, ldc, NULL);
    if (j->isa == NULL || j->isa->nr != nr || M < TI__SG_MR || bpanel == NULL) return 0;
    j->bpanel = bpanel;
    j->kc = kc;
    return 1;
}

/* C = op(A) * B for B packed by ti__sgemm_pack_bpanel with panel width nr (C M x N, ldc;
 * beta 0). When ty is not NULL, C^T is also stored there (N rows ldty apart), with the
 * epilogue tepi (NULL: none) applied to it, block by block as C is finished: its bias is
 * per column of C. Returns 0, having done nothing, when it cannot run it: the kernels in
 * use have another panel width (an instruction set forced after planning) or none, or M is
 * below the micro-kernel's rows. The caller then runs ti__sgemm_ex on B as given. kc: the k
 * block (0: the ISA's; at most TI__SGX_ACAP / mr), which decides the order of the sums. */
TI__PRIVATE int ti__sgemm_bpanel(int transA, size_t M, size_t N, size_t K, const float *A,
                                 size_t lda, const float *bpanel, int nr, size_t kc, float *C,
                                 size_t ldc, float *ty, size_t ldty, const ti__gemm_epi *tepi,
                                 int ty_sum, ti__threadpool *tp) {
    ti__sgemm_job j;
    if (!ti__sgemm_bpanel_job(&j, transA, M, N, K, A, lda, bpanel, nr, kc, C, ldc)) return 0;
    if (N == 0) return 1;
    j.a_input = 1; /* X^T */
    j.ty = ty;
    j.ldty = ldty;
    j.tepi = tepi;
    j.ty_sum = ty != NULL && ty_sum;
    if (ty != NULL && j.isa->store_t != NULL) /* the epilogue in the store where it can be */
        j.ty_ep = tepi == NULL ? 0 : ti__sgemm_kernel_epi(tepi, &j.ty_lo, &j.ty_hi);
    ti__sgemm_go(&j, tp);
    return 1;
}

/* C = op(A) * B[k0:k0 + K, :] on the calling thread as one k block (the sums over the
 * part in one chain each), for B packed by ti__sgemm_pack_bpanel with kp rows a sliver
 * (kp >= k0 + K; bpanel is the whole panel): a part of K, as the transposed GEMM of a 1x1
 * conv takes it (cpu/conv.c ti__conv_ct_parts). A is op(A)'s columns from k0 on (lda as
 * ever). Returns 0, having done nothing, where ti__sgemm_bpanel would. */
TI__PRIVATE int ti__sgemm_bpanel_part(int transA, size_t M, size_t N, size_t K, const float *A,
                                      size_t lda, const float *bpanel, int nr, size_t kp,
                                      size_t k0, float *C, size_t ldc) {
    ti__sgemm_job j;
    if (k0 + K > kp || bpanel == NULL ||
        !ti__sgemm_bpanel_job(&j, transA, M, N, K, A, lda, bpanel + k0 * (size_t)nr, nr, K, C,
                              ldc))
        return 0;
    if (N == 0) return 1;
    j.kp = kp;
    ti__sgemm_go(&j, NULL);
    return 1;
}

/* t[q * ldt + r] = c[r * ldc + q] for r < h, q < w (c2[r * ldc + q] + c[r * ldc + q] where
 * c2 is not NULL), added to t's own value when sum, then epi (NULL: none; its bias per row
 * of t) applied: the store of a transposed GEMM's finished block (ti__sgemm_isa.store_t
 * where the ISA has it), the same operations as the GEMM's own store (ti__sgemm_bpanel with
 * ty), for a caller that sums parts of K itself. */
TI__PRIVATE void ti__sgemm_store_t_sum(const float *c, const float *c2, size_t ldc, size_t h,
                                       size_t w, float *t, size_t ldt, int sum,
                                       const ti__gemm_epi *epi) {
    ti__sgemm_job j;
    ti__sgemm_job_init(&j, 0, 0, h, w, 0, 1.0f, NULL, 0, NULL, 0, 0.0f, (float *)(uintptr_t)c,
                       ldc, NULL);
    j.ty = t;
    j.ldty = ldt;
    j.ty_sum = sum;
    j.tepi = epi;
    if (j.isa != NULL && j.isa->store_t != NULL)
        j.ty_ep = epi == NULL ? 0 : ti__sgemm_kernel_epi(epi, &j.ty_lo, &j.ty_hi);
    ti__sgemm_store_t(&j, c2, 0, h, 0, w);
    ti__sgemm_epilogue(&j, 0, h, 0, w); /* tepi where the store did not apply it */
}

TI__PRIVATE void ti__sgemm_ref(int transA, int transB, size_t M, size_t N, size_t K, float alpha,
                               const float *A, size_t lda, const float *B, size_t ldb, float beta,
                               float *C, size_t ldc, ti__threadpool *tp) {
    ti__sgemm_ex(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, NULL, tp);
}

/* Applies the node's fused activation to n floats. */
TI__PRIVATE void ti__gemm_act(const ti__kctx *k, float *y, size_t n) {
    int act = k->node->act;
    if (act == TI__ACT_NONE || n == 0) return;
    /* in vectors where the ISA has them (ReLU, Clip, HardSwish bit for bit with the scalar
     * expressions): a call of ti__act_apply per element made the Add + ReLU of ResNet-18's
     * blocks 6 % of its run (perf) */
    ti__act_block(act, k->node->act_a, k->node->act_b, NULL, y, n, 1, n);
}

TI__PRIVATE int ti__gemm_dtype_ok(ti_dtype t) {
    return t == TI_DTYPE_F32 || t == TI_DTYPE_F64 || t == TI_DTYPE_F16 || t == TI_DTYPE_BF16 ||
           t == TI_DTYPE_I32 || t == TI_DTYPE_I64 || t == TI_DTYPE_U32 || t == TI_DTYPE_U64;
}

/* ---- Gemm ---------------------------------------------------------------------------- */

/* C's broadcast strides onto [M, N] (0 along a broadcast axis); 0 if not broadcastable. */
TI__PRIVATE int ti__gemm_c_strides(const ti_tensor *c, int64_t m, int64_t n, size_t *sm,
                                   size_t *sn) {
    int64_t d0 = 1, d1 = 1;
    if (c->rank > 2) return 0;
    if (c->rank == 1) d1 = c->shape[0];
    if (c->rank == 2) {
        d0 = c->shape[0];
        d1 = c->shape[1];
    }
    if ((d0 != 1 && d0 != m) || (d1 != 1 && d1 != n)) return 0;
    *sn = d1 == 1 ? 0 : 1;
    *sm = d0 == 1 ? 0 : (size_t)d1;
    return 1;
}

TI__PRIVATE int ti__gemm_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    const ti_tensor *a = k->in[0], *b = k->in[1];
    const ti_tensor *c = k->n_in > 2 ? k->in[2] : NULL;
    if (!ti__gemm_dtype_ok(a->dtype))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "dtype %s is not supported",
                         ti_dtype_name(a->dtype));
    if (b->dtype != a->dtype || (c != NULL && c->dtype != a->dtype))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "inputs have different dtypes (%s, %s)",
                         ti_dtype_name(a->dtype), ti_dtype_name(b->dtype));
    if (a->rank != 2 || b->rank != 2)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "A and B must have 2 dims, got %d and %d",
                         a->rank, b->rank);
    int ta = ti__attr_i(k->node, "transA", 0) != 0, tb = ti__attr_i(k->node, "transB", 0) != 0;
    int64_t m = ta ? a->shape[1] : a->shape[0], ka = ta ? a->shape[0] : a->shape[1];
    int64_t kb = tb ? b->shape[1] : b->shape[0], n = tb ? b->shape[0] : b->shape[1];
    if (ka != kb)
        return ti__kfail(k, TI_ERR_BAD_MODEL,
                         "inner dimensions differ: A gives K=%lld, B gives K=%lld (transA=%d, "
                         "transB=%d)",
                         (long long)ka, (long long)kb, ta, tb);
    size_t sm, sn;
    if (c != NULL && !ti__gemm_c_strides(c, m, n, &sm, &sn))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "C (rank %d) does not broadcast to [%lld, %lld]",
                         c->rank, (long long)m, (long long)n);
    int64_t dims[2] = {m, n};
    if (!ti__set_shape(k->out[0], a->dtype, 2, dims))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid output shape");
    return TI_OK;
}

TI__PRIVATE ti_status ti__gemm_run(ti__kctx *k) {
    const ti_tensor *a = k->in[0], *b = k->in[1];
    const ti_tensor *c = k->n_in > 2 ? k->in[2] : NULL;
    ti_tensor *y = k->out[0];
    int ta = ti__attr_i(k->node, "transA", 0) != 0, tb = ti__attr_i(k->node, "transB", 0) != 0;
    float alpha = ti__attr_f(k->node, "alpha", 1.0f), beta = ti__attr_f(k->node, "beta", 1.0f);
    size_t m = (size_t)y->shape[0], n = (size_t)y->shape[1];
    size_t kk = (size_t)(ta ? a->shape[0] : a->shape[1]);
    size_t sm = 0, sn = 0;
    if (c != NULL && beta != 0.0f) ti__gemm_c_strides(c, (int64_t)m, (int64_t)n, &sm, &sn);
    else c = NULL;
    if (a->dtype == TI_DTYPE_F32) {
        float *yd = (float *)y->data;
        if (c != NULL) {
            const float *cd = (const float *)c->data;
            for (size_t i = 0; i < m; i++)
                for (size_t q = 0; q < n; q++) yd[i * n + q] = beta * cd[i * sm + q * sn];
        }
        ti__sgemm_ws(ta, tb, m, n, kk, alpha, (const float *)a->data, (size_t)a->shape[1],
                     (const float *)b->data, (size_t)b->shape[1], c != NULL ? 1.0f : 0.0f, yd,
                     n, NULL, k->tp, (float *)k->scratch, k->scratch_bytes / sizeof(float));
        ti__gemm_act(k, yd, m * n);
        return TI_OK;
    }
    /* generic: double accumulation for floats, int64 (wrapping) for integers */
    size_t lda = (size_t)a->shape[1], ldb = (size_t)b->shape[1];
    int is_int = ti__dtype_is_int(a->dtype);
    for (size_t i = 0; i < m; i++)
        for (size_t q = 0; q < n; q++) {
            if (is_int) {
                uint64_t s = 0;
                for (size_t p = 0; p < kk; p++)
                    s += (uint64_t)ti__get_i64(a, ta ? p * lda + i : i * lda + p) *
                         (uint64_t)ti__get_i64(b, tb ? q * ldb + p : p * ldb + q);
                int64_t v = (int64_t)((uint64_t)(int64_t)alpha * s);
                if (c != NULL) v += (int64_t)beta * ti__get_i64(c, i * sm + q * sn);
                ti__set_i64(y, i * n + q, v);
            } else {
                double s = 0;
                for (size_t p = 0; p < kk; p++)
                    s += ti__get_f64(a, ta ? p * lda + i : i * lda + p) *
                         ti__get_f64(b, tb ? q * ldb + p : p * ldb + q);
                double v = alpha * s;
                if (c != NULL) v += beta * ti__get_f64(c, i * sm + q * sn);
                if (k->node->act != TI__ACT_NONE)
                    v = ti__act_apply(k->node->act, k->node->act_a, k->node->act_b, (float)v);
                ti__set_f64(y, i * n + q, v);
            }
        }
    return TI_OK;
}

/* The workspace of the float GEMM (ti__sgemm_ws_floats), in bytes. */
TI__PRIVATE size_t ti__gemm_scratch(ti__kctx *k) {
    const ti_tensor *a = k->in[0], *y = k->out[0];
    if (a->dtype != TI_DTYPE_F32 || a->rank != 2 || y->rank != 2) return 0;
    int ta = ti__attr_i(k->node, "transA", 0) != 0, tb = ti__attr_i(k->node, "transB", 0) != 0;
    size_t m = (size_t)y->shape[0], n = (size_t)y->shape[1];
    size_t kk = (size_t)(ta ? a->shape[0] : a->shape[1]);
    return sizeof(float) * ti__sgemm_ws_floats(ta, tb, m, n, kk, (size_t)a->shape[1], k->tp);
}

/* ---- MatMul and MatMulInteger: numpy matmul shapes ----------------------------------- */

/* Shapes of a numpy matmul: a, b promoted to rank >= 2, broadcast batch dims. */
typedef struct ti__mm_shape {
    int64_t m, n, k;
    int batch_rank;
    int64_t batch[TI_MAX_DIMS];                 /* output batch dims */
    int64_t a_stride[TI_MAX_DIMS], b_stride[TI_MAX_DIMS]; /* in matrices; 0 when broadcast */
    size_t n_batch;
    int out_rank;
    int64_t out[TI_MAX_DIMS];
} ti__mm_shape;

TI__PRIVATE ti_status ti__mm_infer(ti__kctx *k, const ti_tensor *a, const ti_tensor *b,
                                   ti__mm_shape *s) {
    if (a->rank < 1 || b->rank < 1)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "inputs must have at least 1 dim, got %d and %d",
                         a->rank, b->rank);
    int64_t ad[TI_MAX_DIMS + 1], bd[TI_MAX_DIMS + 1];
    int ar = a->rank, br = b->rank;
    if (ar == 1) {
        ad[0] = 1;
        ad[1] = a->shape[0];
        ar = 2;
    } else {
        for (int i = 0; i < ar; i++) ad[i] = a->shape[i];
    }
    if (br == 1) {
        bd[0] = b->shape[0];
        bd[1] = 1;
        br = 2;
    } else {
        for (int i = 0; i < br; i++) bd[i] = b->shape[i];
    }
    s->m = ad[ar - 2];
    s->k = ad[ar - 1];
    s->n = bd[br - 1];
    if (bd[br - 2] != s->k)
        return ti__kfail(k, TI_ERR_BAD_MODEL,
                         "inner dimensions differ: A has K=%lld, B has K=%lld",
                         (long long)s->k, (long long)bd[br - 2]);
    int r;
    if (!ti__broadcast_shape(ar - 2, ad, br - 2, bd, &r, s->batch))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "batch dims of A (rank %d) and B (rank %d) do "
                         "not broadcast", a->rank, b->rank);
    s->batch_rank = r;
    /* strides in units of whole matrices, right-aligned */
    int64_t sa = 1, sb = 1;
    s->n_batch = 1;
    for (int i = r - 1; i >= 0; i--) {
        int ia = i - (r - (ar - 2)), ib = i - (r - (br - 2));
        int64_t da = ia >= 0 ? ad[ia] : 1, db = ib >= 0 ? bd[ib] : 1;
        s->a_stride[i] = da == 1 ? 0 : sa;
        s->b_stride[i] = db == 1 ? 0 : sb;
        sa *= da;
        sb *= db;
        s->n_batch *= (size_t)s->batch[i];
    }
    s->out_rank = 0;
    for (int i = 0; i < r; i++) s->out[s->out_rank++] = s->batch[i];
    if (a->rank > 1) s->out[s->out_rank++] = s->m;
    if (b->rank > 1) s->out[s->out_rank++] = s->n;
    if (s->out_rank > TI_MAX_DIMS)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "output rank %d exceeds %d", s->out_rank,
                         TI_MAX_DIMS);
    return TI_OK;
}

/* ti__mm_infer at planning (the scratch and prepack entries): an error is not reported
 * there, the shape function has done that. */
TI__PRIVATE ti_status ti__mm_infer_quiet(ti__kctx *k, const ti_tensor *a, const ti_tensor *b,
                                         ti__mm_shape *s) {
    ti_error *saved = k->err, tmp;
    k->err = &tmp;
    ti_status st = ti__mm_infer(k, a, b, s);
    k->err = saved;
    return st;
}

/* Offsets (in matrices) of A and B for output batch index t. */
TI__PRIVATE void ti__mm_offsets(const ti__mm_shape *s, size_t t, size_t *oa, size_t *ob) {
    size_t a = 0, b = 0;
    for (int i = s->batch_rank - 1; i >= 0; i--) {
        size_t d = (size_t)s->batch[i], idx = t % d;
        t /= d;
        a += idx * (size_t)s->a_stride[i];
        b += idx * (size_t)s->b_stride[i];
    }
    *oa = a;
    *ob = b;
}

TI__PRIVATE int ti__matmul_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    const ti_tensor *a = k->in[0], *b = k->in[1];
    if (!ti__gemm_dtype_ok(a->dtype))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "dtype %s is not supported",
                         ti_dtype_name(a->dtype));
    if (b->dtype != a->dtype)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "inputs have different dtypes (%s, %s)",
                         ti_dtype_name(a->dtype), ti_dtype_name(b->dtype));
    ti__mm_shape s;
    ti_status st = ti__mm_infer(k, a, b, &s);
    if (st != TI_OK) return st;
    if (!ti__set_shape(k->out[0], a->dtype, s.out_rank, s.out))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid output shape");
    /* a third input only comes from fusion (MatMul + Add): a float32 bias of length N */
    if (k->n_in > 2 && k->in[2] != NULL &&
        (a->dtype != TI_DTYPE_F32 || k->in[2]->dtype != TI_DTYPE_F32 ||
         ti__numel(k->in[2]) != (size_t)s.n))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "fused bias must be float32 with %lld elements",
                         (long long)s.n);
    return TI_OK;
}

typedef struct ti__mm_job {
    const ti__mm_shape *s;
    const float *a, *b;
    float *y;
} ti__mm_job;

/* A range of batch matrices, each with a serial GEMM. */
TI__PRIVATE void ti__matmul_batches(void *ctx, size_t begin, size_t end) {
    const ti__mm_job *j = (const ti__mm_job *)ctx;
    const ti__mm_shape *s = j->s;
    size_t mk = (size_t)(s->m * s->k), kn = (size_t)(s->k * s->n), mn = (size_t)(s->m * s->n);
    for (size_t t = begin; t < end; t++) {
        size_t oa, ob;
        ti__mm_offsets(s, t, &oa, &ob);
        ti__sgemm_ref(0, 0, (size_t)s->m, (size_t)s->n, (size_t)s->k, 1.0f, j->a + oa * mk,
                      (size_t)s->k, j->b + ob * kn, (size_t)s->n, 0.0f, j->y + t * mn,
                      (size_t)s->n, NULL);
    }
}

/* Rows of A in each of a float MatMul's GEMMs, run on the pool: the whole batch as one
 * GEMM when B is one matrix and A is not broadcast, else one batch matrix's; 0 when the
 * batch matrices are as many as 2 a thread or more: each then a serial GEMM, in parallel. */
TI__PRIVATE size_t ti__matmul_rows(const ti__mm_shape *s, size_t threads) {
    int b_shared = 1, a_full = 1; /* B one matrix for all; A not broadcast */
    for (int i = 0; i < s->batch_rank; i++) {
        if (s->b_stride[i] != 0 && s->batch[i] != 1) b_shared = 0;
        if (s->a_stride[i] == 0 && s->batch[i] != 1) a_full = 0;
    }
    if (b_shared && a_full) return s->n_batch * (size_t)s->m;
    return s->n_batch >= 2 * threads ? 0 : (size_t)s->m;
}

/* The float GEMM's workspace (ti__sgemm_ws_floats), in bytes. */
TI__PRIVATE size_t ti__matmul_scratch(ti__kctx *k) {
    ti__mm_shape s;
    ti_status st = ti__mm_infer_quiet(k, k->in[0], k->in[1], &s);
    if (st != TI_OK || k->in[0]->dtype != TI_DTYPE_F32) return 0;
    size_t rows = ti__matmul_rows(&s, (size_t)ti__threadpool_size(k->tp));
    if (rows == 0) return 0;
    return sizeof(float) * ti__sgemm_ws_floats(0, 0, rows, (size_t)s.n, (size_t)s.k,
                                               (size_t)s.k, k->tp);
}

TI__PRIVATE ti_status ti__matmul_run(ti__kctx *k) {
    const ti_tensor *a = k->in[0], *b = k->in[1];
    ti_tensor *y = k->out[0];
    ti__mm_shape s;
    ti_status st = ti__mm_infer(k, a, b, &s);
    if (st != TI_OK) return st;
    size_t m = (size_t)s.m, n = (size_t)s.n, kk = (size_t)s.k;
    if (a->dtype == TI_DTYPE_F32) {
        const float *ad = (const float *)a->data, *bd = (const float *)b->data;
        float *yd = (float *)y->data;
        float *ws = (float *)k->scratch;
        size_t wsn = k->scratch_bytes / sizeof(float);
        size_t rows = ti__matmul_rows(&s, (size_t)ti__threadpool_size(k->tp));
        if (rows == s.n_batch * m) { /* fold the batch into M: one large GEMM */
            ti__sgemm_ws(0, 0, s.n_batch * m, n, kk, 1.0f, ad, kk, bd, n, 0.0f, yd, n, NULL,
                         k->tp, ws, wsn);
        } else {
            ti__mm_job j;
            j.s = &s;
            j.a = ad;
            j.b = bd;
            j.y = yd;
            if (rows == 0) {
                ti__parallel_for(k->tp, s.n_batch, 1, ti__matmul_batches, &j);
            } else {
                for (size_t t = 0; t < s.n_batch; t++) {
                    size_t oa, ob;
                    ti__mm_offsets(&s, t, &oa, &ob);
                    ti__sgemm_ws(0, 0, m, n, kk, 1.0f, ad + oa * m * kk, kk, bd + ob * kk * n,
                                 n, 0.0f, yd + t * m * n, n, NULL, k->tp, ws, wsn);
                }
            }
        }
        if (k->n_in > 2 && k->in[2] != NULL) { /* fused bias, one value per column */
            const float *bias = (const float *)k->in[2]->data;
            for (size_t r = 0; r < s.n_batch * m; r++)
                for (size_t q = 0; q < n; q++) yd[r * n + q] += bias[q];
        }
        ti__gemm_act(k, yd, s.n_batch * m * n);
        return TI_OK;
    }
    int is_int = ti__dtype_is_int(a->dtype);
    for (size_t t = 0; t < s.n_batch; t++) {
        size_t oa, ob;
        ti__mm_offsets(&s, t, &oa, &ob);
        oa *= m * kk;
        ob *= kk * n;
        for (size_t i = 0; i < m; i++)
            for (size_t q = 0; q < n; q++) {
                size_t yo = t * m * n + i * n + q;
                if (is_int) {
                    uint64_t acc = 0;
                    for (size_t p = 0; p < kk; p++)
                        acc += (uint64_t)ti__get_i64(a, oa + i * kk + p) *
                               (uint64_t)ti__get_i64(b, ob + p * n + q);
                    ti__set_i64(y, yo, (int64_t)acc);
                } else {
                    double acc = 0;
                    for (size_t p = 0; p < kk; p++)
                        acc += ti__get_f64(a, oa + i * kk + p) * ti__get_f64(b, ob + p * n + q);
                    if (k->node->act != TI__ACT_NONE)
                        acc = ti__act_apply(k->node->act, k->node->act_a, k->node->act_b,
                                            (float)acc);
                    ti__set_f64(y, yo, acc);
                }
            }
    }
    return TI_OK;
}

/* Zero point of a MatMulInteger operand: absent, a scalar (one element) or a vector along
 * rows of A / columns of B (len elements). Returns 0 when the shape is none of those. */
TI__PRIVATE int ti__mmi_zp_ok(const ti_tensor *zp, int64_t len) {
    if (zp == NULL) return 1;
    size_t n = ti__numel(zp);
    if (n == 1) return 1;
    return (int64_t)n == len;
}

TI__PRIVATE int ti__matmulint_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    const ti_tensor *a = k->in[0], *b = k->in[1];
    const ti_tensor *za = k->n_in > 2 ? k->in[2] : NULL, *zb = k->n_in > 3 ? k->in[3] : NULL;
    if ((a->dtype != TI_DTYPE_U8 && a->dtype != TI_DTYPE_I8) ||
        (b->dtype != TI_DTYPE_U8 && b->dtype != TI_DTYPE_I8))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "inputs must be uint8 or int8, got %s and %s",
                         ti_dtype_name(a->dtype), ti_dtype_name(b->dtype));
    if ((za != NULL && za->dtype != a->dtype) || (zb != NULL && zb->dtype != b->dtype))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "zero point dtype differs from its input");
    ti__mm_shape s;
    ti_status st = ti__mm_infer(k, a, b, &s);
    if (st != TI_OK) return st;
    if (!ti__mmi_zp_ok(za, s.m) || !ti__mmi_zp_ok(zb, s.n))
        return ti__kfail(k, TI_ERR_UNSUPPORTED,
                         "zero points must be scalars or per-row (A) / per-column (B) vectors");
    if (!ti__set_shape(k->out[0], TI_DTYPE_I32, s.out_rank, s.out))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid output shape");
    return TI_OK;
}

TI__PRIVATE size_t ti__matmulint_scratch(ti__kctx *k) {
    ti__mm_shape s;
    ti_status st = ti__mm_infer_quiet(k, k->in[0], k->in[1], &s);
    if (st != TI_OK) return 0;
    int one_b = 1; /* b is one matrix: packed at planning when it is a constant */
    for (int i = 0; i < s.batch_rank; i++)
        if (s.b_stride[i] != 0) one_b = 0;
    if (one_b && ti__qpack_b(k->node, 1, (size_t)s.n, (size_t)s.k, 0) != NULL) return 0;
    return ti__qg_packed_bytes((size_t)s.n, (size_t)s.k);
}

/* The prepack pass's entry for MatMulInteger with a constant b (and b_zero_point) that is
 * one matrix: packed once into pool for the shared 8-bit GEMM. */
TI__PRIVATE ti_status ti__matmulint_prepack(ti__kctx *k, ti__node *node, ti__pool *pool) {
    const ti_tensor *a = k->in[0], *b = k->in[1], *zb = k->n_in > 3 ? k->in[3] : NULL;
    ti__mm_shape s;
    if (a == NULL || b == NULL || b->data == NULL || (zb != NULL && zb->data == NULL) ||
        (b->dtype != TI_DTYPE_U8 && b->dtype != TI_DTYPE_I8) || (zb != NULL && zb->dtype != b->dtype))
        return TI_OK;
    ti_status st = ti__mm_infer_quiet(k, a, b, &s);
    if (st != TI_OK || s.n == 0 || s.k == 0 || !ti__mmi_zp_ok(zb, s.n)) return TI_OK;
    for (int i = 0; i < s.batch_rank; i++)
        if (s.b_stride[i] != 0) return TI_OK; /* b has several matrices */
    ti__qgemm t;
    memset(&t, 0, sizeof t);
    ti__qg_onnx_b(&t, b, zb, (size_t)s.n, (size_t)s.k, 0);
    if (ti__qpack_make(node, pool, k->tp, &t, 1, 0, 0, NULL) == NULL) return TI_ERR_OUT_OF_MEMORY;
    return TI_OK;
}

/* The shared integer GEMM (core/qgemm.c), raw int32 output: the spec lets the 32-bit
 * accumulation wrap; zero points per tensor, per row of A or per column of B. */
TI__PRIVATE ti_status ti__matmulint_run(ti__kctx *k) {
    const ti_tensor *a = k->in[0], *b = k->in[1];
    const ti_tensor *za = k->n_in > 2 ? k->in[2] : NULL, *zb = k->n_in > 3 ? k->in[3] : NULL;
    ti__mm_shape s;
    ti_status st = ti__mm_infer(k, a, b, &s);
    if (st != TI_OK) return st;
    ti__qrq rq;
    memset(&rq, 0, sizeof rq);
    rq.mode = TI__QRQ_RAW;
    return ti__q_matmul_gemm(k, a, za, b, zb, &rq, k->out[0], s.m, s.k, s.n, s.batch_rank,
                             s.batch, s.a_stride, s.b_stride, 0);
}

TI__PRIVATE const ti__op ti__ops_gemm[] = {
    {"Gemm", ti__gemm_shape, ti__gemm_run, ti__gemm_scratch, 0},
    {"MatMul", ti__matmul_shape, ti__matmul_run, ti__matmul_scratch, 0},
    {"MatMulInteger", ti__matmulint_shape, ti__matmulint_run, ti__matmulint_scratch, 0},
    {NULL, NULL, NULL, NULL, 0}
};
