/* float32 Conv paths, one thread: the conv layers of MobileNetV2 and ResNet-18 at 224x224
 * (and a few sizes around the Winograd threshold), each run by every path that can run it:
 * the old ones (im2col with one large shared tile; the per-tap direct loop for depthwise;
 * 1x1 GEMM) and the new ones (im2col in per-thread cache tiles, direct depthwise, Winograd
 * F(4x4,3x3) on weights packed beforehand, as the planner does). Time is the calling
 * thread's CPU time, median of many runs; each path's ratio is old / new (above 1: faster).
 * The path the library picks is marked with *.
 * Usage: bench_conv [REPORT.md|-] [FILTER] (appends a markdown table to REPORT.md, or
 * prints it; FILTER: only the layers whose net or name contains it, e.g. resnet18). */
#define _POSIX_C_SOURCE 200809L
#define TINYINFER_IMPLEMENTATION
#include "tinyinfer.h"

#include <time.h>

static double thread_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct shape {
    const char *net, *what;
    int64_t c, m, h, w, k, s, pad, group;
} shape;

static const shape SHAPES[] = {
    {"mobilenet_v2", "conv 3x3/2 3->32 @224", 3, 32, 224, 224, 3, 2, 1, 1},
    {"mobilenet_v2", "dw 3x3/1 32 @112", 32, 32, 112, 112, 3, 1, 1, 32},
    {"mobilenet_v2", "dw 3x3/2 96 @112", 96, 96, 112, 112, 3, 2, 1, 96},
    {"mobilenet_v2", "dw 3x3/1 144 @56", 144, 144, 56, 56, 3, 1, 1, 144},
    {"mobilenet_v2", "dw 3x3/2 144 @56", 144, 144, 56, 56, 3, 2, 1, 144},
    {"mobilenet_v2", "dw 3x3/1 192 @28", 192, 192, 28, 28, 3, 1, 1, 192},
    {"mobilenet_v2", "dw 3x3/2 192 @28", 192, 192, 28, 28, 3, 2, 1, 192},
    {"mobilenet_v2", "dw 3x3/1 384 @14", 384, 384, 14, 14, 3, 1, 1, 384},
    {"mobilenet_v2", "dw 3x3/1 576 @14", 576, 576, 14, 14, 3, 1, 1, 576},
    {"mobilenet_v2", "dw 3x3/2 576 @14", 576, 576, 14, 14, 3, 2, 1, 576},
    {"mobilenet_v2", "dw 3x3/1 960 @7", 960, 960, 7, 7, 3, 1, 1, 960},
    {"mobilenet_v2", "pw 1x1 16->96 @112", 16, 96, 112, 112, 1, 1, 0, 1},
    {"mobilenet_v2", "pw 1x1 144->24 @56", 144, 24, 56, 56, 1, 1, 0, 1},
    {"mobilenet_v2", "pw 1x1 160->960 @7", 160, 960, 7, 7, 1, 1, 0, 1},
    {"mobilenet_v2", "pw 1x1 320->1280 @7", 320, 1280, 7, 7, 1, 1, 0, 1},
    {"mobilenet_v2", "pw 1x1 576->160 @7", 576, 160, 7, 7, 1, 1, 0, 1},
    {"mobilenet_v2", "pw 1x1 960->160 @7", 960, 160, 7, 7, 1, 1, 0, 1},
    {"mobilenet_v2", "pw 1x1 960->320 @7", 960, 320, 7, 7, 1, 1, 0, 1},
    {"mobilenet_v3", "pw 1x1 96->576 @7", 96, 576, 7, 7, 1, 1, 0, 1},
    {"mobilenet_v2", "pw 1x1 96->24 @56", 96, 24, 56, 56, 1, 1, 0, 1},
    {"efficientnet", "pw 1x1 240->40 @28", 240, 40, 28, 28, 1, 1, 0, 1},
    {"efficientnet", "pw 1x1 192->1152 @7", 192, 1152, 7, 7, 1, 1, 0, 1},
    {"efficientnet", "pw 1x1 112->672 @14", 112, 672, 14, 14, 1, 1, 0, 1},
    {"efficientnet", "pw 1x1 80->480 @14", 80, 480, 14, 14, 1, 1, 0, 1},
    {"mobilenet_v2", "pw 1x1 96->576 @14", 96, 576, 14, 14, 1, 1, 0, 1},
    {"efficientnet", "pw 1x1 40->240 @28", 40, 240, 28, 28, 1, 1, 0, 1},
    {"efficientnet", "dw 5x5/1 240 @28", 240, 240, 28, 28, 5, 1, 2, 240},
    {"efficientnet", "dw 5x5/2 144 @56", 144, 144, 56, 56, 5, 2, 2, 144},
    {"efficientnet", "dw 5x5/1 672 @14", 672, 672, 14, 14, 5, 1, 2, 672},
    {"efficientnet", "dw 5x5/1 1152 @7", 1152, 1152, 7, 7, 5, 1, 2, 1152},
    {"efficientnet", "dw 5x5/2 672 @14", 672, 672, 14, 14, 5, 2, 2, 672},
    {"mobilenet_v3", "dw 5x5/2 288 @14", 288, 288, 14, 14, 5, 2, 2, 288},
    {"mobilenet_v3", "dw 5x5/2 96 @28", 96, 96, 28, 28, 5, 2, 2, 96},
    {"mobilenet_v3", "dw 5x5/1 576 @7", 576, 576, 7, 7, 5, 1, 2, 576},
    {"resnet18", "conv 7x7/2 3->64 @224", 3, 64, 224, 224, 7, 2, 3, 1},
    {"resnet18", "conv 3x3/1 64->64 @56", 64, 64, 56, 56, 3, 1, 1, 1},
    {"resnet18", "conv 3x3/2 64->128 @56", 64, 128, 56, 56, 3, 2, 1, 1},
    {"resnet18", "conv 3x3/1 128->128 @28", 128, 128, 28, 28, 3, 1, 1, 1},
    {"resnet18", "conv 3x3/2 128->256 @28", 128, 256, 28, 28, 3, 2, 1, 1},
    {"resnet18", "conv 3x3/1 256->256 @14", 256, 256, 14, 14, 3, 1, 1, 1},
    {"resnet18", "conv 3x3/2 256->512 @14", 256, 512, 14, 14, 3, 2, 1, 1},
    {"resnet18", "conv 3x3/1 512->512 @7", 512, 512, 7, 7, 3, 1, 1, 1},
    {"resnet18", "conv 1x1/2 64->128 @56", 64, 128, 56, 56, 1, 2, 0, 1},
    {"resnet18", "conv 1x1/2 128->256 @28", 128, 256, 28, 28, 1, 2, 0, 1},
    {"resnet18", "conv 1x1/2 256->512 @14", 256, 512, 14, 14, 1, 2, 0, 1},
    {"squeezenet", "conv 3x3/1 16->64 @55", 16, 64, 55, 55, 3, 1, 1, 1},
    {"squeezenet", "conv 3x3/1 32->128 @27", 32, 128, 27, 27, 3, 1, 1, 1},
    {"squeezenet", "conv 3x3/1 48->192 @13", 48, 192, 13, 13, 3, 1, 1, 1},
    {"squeezenet", "conv 3x3/1 64->256 @13", 64, 256, 13, 13, 3, 1, 1, 1},
    {"squeezenet", "pw 1x1 128->16 @55", 128, 16, 55, 55, 1, 1, 0, 1},
    {"squeezenet", "pw 1x1 16->64 @55", 16, 64, 55, 55, 1, 1, 0, 1},
    {"squeezenet", "pw 1x1 64->16 @55", 64, 16, 55, 55, 1, 1, 0, 1},
    {"squeezenet", "pw 1x1 512->1000 @13", 512, 1000, 13, 13, 1, 1, 0, 1},
    {"threshold", "conv 3x3/1 8->8 @56", 8, 8, 56, 56, 3, 1, 1, 1},
    {"threshold", "conv 3x3/1 16->16 @56", 16, 16, 56, 56, 3, 1, 1, 1},
    {"threshold", "conv 3x3/1 32->32 @28", 32, 32, 28, 28, 3, 1, 1, 1},
    {"threshold", "conv 3x3/1 64->64 @14", 64, 64, 14, 14, 3, 1, 1, 1},
    {"threshold", "conv 3x3/1 64->64 @7", 64, 64, 7, 7, 3, 1, 1, 1},
    {"threshold", "conv 3x3/1 256->256 @7", 256, 256, 7, 7, 3, 1, 1, 1},
};

typedef struct rig {
    ti__attr attrs[3];
    int64_t strides[2], pads[4];
    ti__node node;
    ti_tensor x, w, b, y;
    ti_tensor *in[3], *out[1];
    ti__kctx k;
    ti_error err;
    ti__convp p;
    float *u;      /* Winograd weights, where the shape fits */
    float *panels; /* W^T as the GEMM's B panels, where the transposed GEMM suits the shape */
    float *apanel; /* W as the plain GEMM's A panels, where the planner would pack them */
    int apanel_mr;
    float *fewc; /* W for the few-channel kernel, where it can run the shape */
    void *scratch;
} rig;

static int rig_init(rig *r, const shape *sh) {
    memset(r, 0, sizeof *r);
    r->strides[0] = r->strides[1] = sh->s;
    for (int i = 0; i < 4; i++) r->pads[i] = sh->pad;
    r->attrs[0].name = "strides", r->attrs[0].type = TI__ATTR_INTS;
    r->attrs[0].ints = r->strides, r->attrs[0].count = 2;
    r->attrs[1].name = "pads", r->attrs[1].type = TI__ATTR_INTS;
    r->attrs[1].ints = r->pads, r->attrs[1].count = 4;
    r->attrs[2].name = "group", r->attrs[2].type = TI__ATTR_INT, r->attrs[2].i = sh->group;
    r->node.name = "conv", r->node.op = "Conv", r->node.domain = "";
    r->node.n_inputs = 3, r->node.n_outputs = 1, r->node.n_attrs = 3, r->node.attrs = r->attrs;
    r->node.act = TI__ACT_RELU; /* as fused in the models */
    int64_t xs[4] = {1, sh->c, sh->h, sh->w}, ws[4] = {sh->m, sh->c / sh->group, sh->k, sh->k};
    int64_t bs[1] = {sh->m};
    ti__set_shape(&r->x, TI_DTYPE_F32, 4, xs);
    ti__set_shape(&r->w, TI_DTYPE_F32, 4, ws);
    ti__set_shape(&r->b, TI_DTYPE_F32, 1, bs);
    r->x.data = malloc(r->x.size_bytes);
    r->w.data = malloc(r->w.size_bytes);
    r->b.data = malloc(r->b.size_bytes);
    if (!r->x.data || !r->w.data || !r->b.data) return 0;
    unsigned seed = 7u;
    float *f[3] = {(float *)r->x.data, (float *)r->w.data, (float *)r->b.data};
    size_t nf[3] = {ti__numel(&r->x), ti__numel(&r->w), ti__numel(&r->b)};
    for (int t = 0; t < 3; t++)
        for (size_t i = 0; i < nf[t]; i++) {
            seed = seed * 1664525u + 1013904223u;
            f[t][i] = (float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
        }
    r->in[0] = &r->x, r->in[1] = &r->w, r->in[2] = &r->b, r->out[0] = &r->y;
    r->k.node = &r->node, r->k.in = r->in, r->k.n_in = 3, r->k.out = r->out, r->k.n_out = 1;
    r->k.opset = 13, r->k.err = &r->err, r->k.file = "bench";
    if (ti__conv_shape(&r->k) != TI_OK || ti__conv_params(&r->k, 0, &r->p) != TI_OK) return 0;
    r->y.data = malloc(r->y.size_bytes);
    if (ti__conv_wino_fits(&r->p)) { /* what the planner does once */
        int t = ti__conv_wino_ok(&r->p, 1);
        if (t == 0) t = 4;
        size_t bytes = ti__wino_u_bytes(&r->p, t);
        r->u = (float *)malloc(bytes);
        if (r->u == NULL) return 0;
        r->node.packed_arg = ti__wino_pack(&r->p, t, (const float *)r->w.data, r->u);
        r->node.packed_kind = ti__wino_kind(t), r->node.packed = r->u, r->node.packed_bytes = bytes;
    }
    int nr = ti__sgemm_panel_nr();
    if (ti__conv_ct_ok(&r->p) && nr > 0) { /* as ti__conv_prepack_bpanel (one group) */
        size_t kdim = (size_t)r->p.cg * r->p.kprod;
        r->panels = (float *)malloc(ti__sgemm_bpanel_floats(kdim, (size_t)r->p.mg, (size_t)nr) * 4);
        if (r->panels == NULL || r->p.group != 1) return 0;
        ti__sgemm_pack_bpanel(1, kdim, (size_t)r->p.mg, (const float *)r->w.data, kdim,
                              (size_t)nr, r->panels);
    }
    /* the plain GEMM's A panels where ti__conv_prepack would pack them (but for the
     * transposed GEMM's choice, timed on its own) */
    int mr = ti__sgemm_panel_mr();
    size_t kd = (size_t)r->p.cg * r->p.kprod;
    if (r->p.group == 1 && ti__conv_apanel_ok(&r->p, mr)) {
        r->apanel = (float *)malloc(ti__sgemm_apanel_floats((size_t)r->p.mg, kd, (size_t)mr) * 4);
        if (r->apanel == NULL) return 0;
        ti__sgemm_pack_apanel(0, (size_t)r->p.mg, kd, (const float *)r->w.data, kd, (size_t)mr,
                              r->apanel);
        r->apanel_mr = mr;
    }
    if (ti__conv_fewc_ok(&r->p)) { /* as ti__conv_prepack packs them for that path */
        r->fewc = (float *)malloc(ti__conv_fewc_wfloats(&r->p) * sizeof(float));
        if (r->fewc == NULL) return 0;
        ti__conv_fewc_pack(&r->p, (const float *)r->w.data, r->fewc);
    }
    return r->y.data != NULL;
}

static void rig_free(rig *r) {
    free(r->x.data), free(r->w.data), free(r->b.data), free(r->y.data), free(r->u);
    free(r->panels), free(r->apanel), free(r->fewc);
}

/* Median thread CPU seconds of one run of the path; ct: IM2COL or 1X1 by the transposed
 * GEMM on the B panels. -1 when the path failed (its message on stderr). */
static double time_path(rig *r, int path, int ct) {
    size_t kdim = (size_t)r->p.cg * r->p.kprod, need = 0;
    const void *packed = r->node.packed;
    int kind = r->node.packed_kind, arg = r->node.packed_arg;
    size_t packed_bytes = r->node.packed_bytes;
    if (!ct && r->apanel != NULL && (path == TI__CONV_1X1 || path == TI__CONV_IM2COL)) {
        r->node.packed_kind = TI__PACK_APANEL, r->node.packed = r->apanel;
        r->node.packed_arg = r->apanel_mr;
        r->node.packed_bytes = ti__sgemm_apanel_floats((size_t)r->p.mg, kdim,
                                                       (size_t)r->apanel_mr) * 4;
    }
    if (path == TI__CONV_FEWC && r->fewc != NULL) {
        r->node.packed_kind = TI__PACK_FEWC, r->node.packed = r->fewc, r->node.packed_arg = 16;
        r->node.packed_bytes = ti__conv_fewc_wfloats(&r->p) * sizeof(float);
    }
    if (ct) {
        int nr = ti__sgemm_panel_nr();
        r->node.packed_kind = TI__PACK_BPANEL, r->node.packed = r->panels;
        r->node.packed_arg = nr;
        r->node.packed_bytes = ti__sgemm_bpanel_floats(kdim, (size_t)r->p.mg, (size_t)nr) * 4;
        need = ti__conv_ct_floats(&r->p, 1) * sizeof(float);
    }
    if (path == TI__CONV_IM2COL) need += ti__conv_im2col_floats(&r->k, &r->p) * sizeof(float);
    if (path == TI__CONV_IM2COL_BIG) need = kdim * ti__conv_tile_cols(kdim, r->p.out_sp) * 4;
    if (path == TI__CONV_WINO) need = ti__conv_wino_scratch(&r->k, &r->p);
    r->k.scratch = need ? malloc(need) : NULL;
    r->k.scratch_bytes = need;
    double t[64], total = 0;
    int n = 0;
    if (ti__conv_run_path(&r->k, &r->p, path) != TI_OK) { /* warm-up */
        fprintf(stderr, "bench_conv: %s\n", r->err.message);
        n = -1;
    }
    while (n >= 0 && n < 64 && (n < 7 || total < 0.4)) {
        double t0 = thread_now();
        ti__conv_run_path(&r->k, &r->p, path);
        t[n] = thread_now() - t0;
        total += t[n++];
    }
    free(r->k.scratch);
    r->node.packed_kind = kind, r->node.packed = packed, r->node.packed_bytes = packed_bytes;
    r->node.packed_arg = arg;
    if (n < 0) return -1.0;
    qsort(t, (size_t)n, sizeof(double), cmp_double);
    return t[n / 2];
}

int main(int argc, char **argv) {
    FILE *out = stdout;
    const char *only = argc > 2 ? argv[2] : NULL; /* layers whose net or name has this */
    if (argc > 1 && strcmp(argv[1], "-") != 0 && (out = fopen(argv[1], "a")) == NULL) {
        fprintf(stderr, "cannot open %s\n", argv[1]);
        return 1;
    }
    fprintf(out, "\n### Conv paths, 1 thread, ISA %s (thread CPU time, median, ms)\n\n",
            ti__cpu_isa_name(ti__cpu_isa()));
    fprintf(out, "| net | layer | old path | old ms | new path | new ms | old/new |\n");
    fprintf(out, "|---|---|---|---:|---|---:|---:|\n");
    static const char *names[] = {"direct", "1x1 gemm", "im2col tiles", "depthwise",
                                  "winograd", "im2col (8 MiB)", "few channels"};
    for (size_t i = 0; i < sizeof SHAPES / sizeof SHAPES[0]; i++) {
        const shape *sh = &SHAPES[i];
        if (only != NULL && strstr(sh->net, only) == NULL && strstr(sh->what, only) == NULL)
            continue;
        rig r;
        if (!rig_init(&r, sh)) {
            fprintf(stderr, "%s: set-up failed\n", sh->what);
            rig_free(&r);
            continue;
        }
        int picked = ti__conv_path(&r.k, &r.p);
        if (picked == TI__CONV_WINO && !ti__conv_wino_ok(&r.p, 1)) picked = TI__CONV_IM2COL;
        /* without the threshold the planner would not have packed: */
        if (!ti__conv_wino_ok(&r.p, 1) && picked == TI__CONV_WINO) picked = TI__CONV_IM2COL;
        int old = r.p.mg < 4 ? TI__CONV_DIRECT : picked == TI__CONV_1X1 ? TI__CONV_1X1
                                                                        : TI__CONV_IM2COL_BIG;
        int news[4], cts[4] = {0, 0, 0, 0}, nn = 0;
        if (ti__conv_dw_ok(&r.p)) news[nn++] = TI__CONV_DW;
        else if (old == TI__CONV_1X1) news[nn++] = TI__CONV_1X1;
        else if (old == TI__CONV_IM2COL_BIG) {
            news[nn++] = TI__CONV_IM2COL;
            if (ti__conv_wino_fits(&r.p)) news[nn++] = TI__CONV_WINO;
            if (ti__conv_fewc_ok(&r.p)) news[nn++] = TI__CONV_FEWC;
        }
        if (r.panels != NULL && (picked == TI__CONV_1X1 || picked == TI__CONV_IM2COL)) {
            cts[nn] = 1; /* the planner packs the panels: this is the path it takes */
            news[nn++] = picked;
        }
        double t_old = time_path(&r, old, 0);
        for (int q = 0; q < nn; q++) {
            double t_new = news[q] == old && !cts[q] ? t_old : time_path(&r, news[q], cts[q]);
            int mark = news[q] == picked && cts[q] == (r.panels != NULL);
            if (t_old < 0 || t_new < 0) { /* a path failed: its message is on stderr */
                fprintf(out, "| %s | %s | %s | %s | %s | %s | - |\n", sh->net, sh->what,
                        names[old], t_old < 0 ? "failed" : "", names[news[q]],
                        t_new < 0 ? "failed" : "");
                continue;
            }
            fprintf(out, "| %s | %s | %s | %.3f | %s%s%s | %.3f | %.2f |\n", sh->net, sh->what,
                    names[old], 1e3 * t_old, names[news[q]], cts[q] ? ", transposed" : "",
                    mark ? " *" : "", 1e3 * t_new, t_old / t_new);
            fflush(out);
        }
        rig_free(&r);
    }
    if (out != stdout) fclose(out);
    return 0;
}
