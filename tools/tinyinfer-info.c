/* tinyinfer-info: describes a model file: format and opset, inputs and outputs with
 * symbolic dim names, node count, op histogram (ops this build cannot run are marked),
 * parameter count, and, from a one-thread session, the planned graph after folding and
 * fusion: node count, arena size and multiply-accumulates (MACs) per op type, with
 * --nodes a table of the planned nodes. Uses only the public API and tests/harness/testdir.h.
 * Build: cc -O2 -I. tools/tinyinfer-info.c -o tinyinfer-info -lm -lpthread */
#define _POSIX_C_SOURCE 200809L
#define TINYINFER_IMPLEMENTATION
#include "tinyinfer.h"
#include "tests/harness/testdir.h"

typedef struct op_count {
    char name[136];
    int count;
    int supported;
    uint64_t macs;
} op_count;

static int cmp_count(const void *a, const void *b)
{
    const op_count *x = (const op_count *)a, *y = (const op_count *)b;
    if (x->count != y->count) return y->count - x->count;
    return strcmp(x->name, y->name);
}

static void print_value_info(const char *kind, int i, const ti_value_info *vi)
{
    printf("  %s %d '%s' %s ", kind, i, vi->name ? vi->name : "", ti_dtype_name(vi->dtype));
    if (vi->rank < 0) {
        printf("[?] (rank unknown)\n");
        return;
    }
    printf("[");
    for (int d = 0; d < vi->rank; d++) {
        if (d) printf(", ");
        if (vi->dim_names[d] && vi->dim_names[d][0])
            printf("%s", vi->dim_names[d]);
        else if (vi->shape[d] < 0)
            printf("?");
        else
            printf("%lld", (long long)vi->shape[d]);
    }
    printf("]\n");
}

/* 1,234,567 */
static void fmt_count(uint64_t v, char *buf, size_t n)
{
    char tmp[32];
    int len = snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)v), w = 0;
    for (int i = 0; i < len && (size_t)w + 2 < n; i++) {
        if (i && (len - i) % 3 == 0) buf[w++] = ',';
        buf[w++] = tmp[i];
    }
    buf[w] = 0;
}

/* MACs of planned node i from its shapes (Conv, ConvTranspose, Gemm, MatMul; 0 for other
 * ops). Returns -1 when the shapes are known only at run time (dynamic region). */
static int64_t node_macs(const ti_session *s, int i, const char *op)
{
    const ti_tensor *a = ti_session_node_input(s, i, 0), *w = ti_session_node_input(s, i, 1);
    const ti_tensor *y = ti_session_node_output(s, i, 0);
    int conv = strcmp(op, "Conv") == 0, convt = strcmp(op, "ConvTranspose") == 0;
    int gemm = strcmp(op, "Gemm") == 0, matmul = strcmp(op, "MatMul") == 0;
    if (!conv && !convt && !gemm && !matmul) return 0;
    if (!a || !w || !y || y->dtype == TI_DTYPE_UNKNOWN || w->rank < 1 || a->rank < 1) return -1;
    uint64_t ny = ti_tensor_numel(y), na = ti_tensor_numel(a), nw = ti_tensor_numel(w);
    /* Conv W is [M, C/group, k...]: each output element reads C/group * k... weights.
     * ConvTranspose W is [C, M/group, k...]: each input element feeds M/group * k... outputs. */
    if (conv) return w->shape[0] > 0 ? (int64_t)(ny * (nw / (uint64_t)w->shape[0])) : 0;
    if (convt) return w->shape[0] > 0 ? (int64_t)(na * (nw / (uint64_t)w->shape[0])) : 0;
    if (gemm) /* Y is [M, N]; A is [M, K] or, with transA, [K, M]: K = numel(A) / M */
        return y->rank == 2 && y->shape[0] > 0 ? (int64_t)(ny * (na / (uint64_t)y->shape[0])) : 0;
    return (int64_t)(ny * (uint64_t)a->shape[a->rank - 1]); /* MatMul: K = A's last dim */
}

/* MACs of a conv that took the node after it in (a MaxPool or a depthwise conv: its output
 * is that node's, not the conv's): those of the Conv of that name in a plan without fusion;
 * -1 when there is none or the node has no name to find it by. */
static int64_t unfused_conv_macs(const ti_model *m, ti_session **plain, const char *name)
{
    if (name == NULL || name[0] == 0) return -1;
    if (*plain == NULL) {
        ti_session_desc desc;
        ti_error err;
        memset(&desc, 0, sizeof(desc));
        desc.num_threads = 1;
        desc.no_fusion = 1;
        *plain = ti_session_create(m, &desc, &err);
        if (*plain == NULL) return -1;
    }
    for (int i = 0; i < ti_session_num_nodes(*plain); i++) {
        ti_node_info ni;
        if (ti_session_node_info(*plain, i, &ni) == TI_OK && ni.name &&
            strcmp(ni.name, name) == 0 && strcmp(ni.op, "Conv") == 0)
            return node_macs(*plain, i, ni.op);
    }
    return -1;
}

/* MACs of a 1x1 conv that took the depthwise conv after it in (its output is that conv's;
 * its input 5 the taps, M x 1 x K x K): pw, those of the 1x1 conv itself, plus K K an
 * output; -1 when either is not known. */
static int64_t fused_dw_macs(const ti_session *s, int i, int64_t pw)
{
    const ti_tensor *w = ti_session_node_input(s, i, 5), *y = ti_session_node_output(s, i, 0);
    if (pw < 0 || !w || !y || y->dtype == TI_DTYPE_UNKNOWN || w->rank < 1 || w->shape[0] <= 0)
        return -1;
    return pw + (int64_t)(ti_tensor_numel(y) * (ti_tensor_numel(w) / (uint64_t)w->shape[0]));
}

/* Planned graph of a one-thread session: node count, folding/fusion, arena, MACs per op
 * type (and per node with show_nodes). hist (n_hist entries, zeroed counts) is reused for
 * the per-op sums. */
static void describe_plan(const ti_model *m, ti_session **sp, op_count *hist, int show_nodes)
{
    ti_error err;
    memset(&err, 0, sizeof(err));
    ti_session_desc desc;
    memset(&desc, 0, sizeof(desc));
    desc.num_threads = 1;
    ti_session *s = *sp = ti_session_create(m, &desc, &err);
    if (!s) {
        printf("session: cannot be created: %s\n",
               err.message[0] ? err.message : ti_status_string(err.code));
        return;
    }
    ti_session_info info;
    char cnt[48];
    memset(&info, 0, sizeof(info));
    ti_session_get_info(s, &info);
    fmt_count(info.arena_bytes, cnt, sizeof(cnt));
    printf("session (1 thread, symbolic dims = 1): %d nodes after %d folded and %d fused, "
           "arena %s bytes (%.2f MiB)%s\n",
           info.num_nodes, info.num_folded, info.num_fused, cnt,
           (double)info.arena_bytes / (1024.0 * 1024.0),
           info.dynamic ? ", shapes re-inferred at each run" : "");

    int n = ti_session_num_nodes(s), n_ops = 0, n_unknown = 0;
    uint64_t total = 0;
    ti_session *plain = NULL; /* without fusion, for convs that took a MaxPool in */
    if (show_nodes) printf("planned nodes:\n  %5s  %-20s %-10s %-24s %15s  %s\n", "#", "op", "fused", "output shape", "MACs", "name");
    for (int i = 0; i < n; i++) {
        ti_node_info ni;
        if (ti_session_node_info(s, i, &ni) != TI_OK) continue;
        int64_t macs;
        if (strstr(ni.fused, "DepthwiseConv") != NULL) /* a 1x1 conv with the one after it */
            macs = fused_dw_macs(s, i, unfused_conv_macs(m, &plain, ni.name));
        else if (strstr(ni.fused, "MaxPool") != NULL)
            macs = unfused_conv_macs(m, &plain, ni.name);
        else
            macs = node_macs(s, i, ni.op);
        if (macs < 0) n_unknown++;
        if (macs > 0) {
            int j = 0;
            while (j < n_ops && strcmp(hist[j].name, ni.op) != 0) j++;
            if (j == n_ops) snprintf(hist[n_ops++].name, sizeof(hist[j].name), "%s", ni.op);
            hist[j].macs += (uint64_t)macs;
            total += (uint64_t)macs;
        }
        if (!show_nodes) continue;
        const ti_tensor *y = ti_session_node_output(s, i, 0);
        char shp[128];
        if (y && y->dtype != TI_DTYPE_UNKNOWN)
            td_shape_str(y->rank, y->shape, shp, sizeof(shp));
        else
            snprintf(shp, sizeof(shp), "(at run time)");
        if (macs >= 0)
            fmt_count((uint64_t)macs, cnt, sizeof(cnt));
        else
            snprintf(cnt, sizeof(cnt), "?");
        printf("  %5d  %-20s %-10s %-24s %15s  %s\n", i, ni.op, ni.fused[0] ? ni.fused : "-", shp,
               cnt, ni.name ? ni.name : "");
    }
    ti_session_destroy(plain);
    fmt_count(total, cnt, sizeof(cnt));
    printf("MACs: %s", cnt);
    if (n_unknown)
        printf(" (without %d node%s whose shapes are known only at run time)", n_unknown,
               n_unknown == 1 ? "" : "s");
    printf("\n");
    for (int j = 0; j < n_ops; j++) {
        fmt_count(hist[j].macs, cnt, sizeof(cnt));
        printf("  %15s  %s\n", cnt, hist[j].name);
    }
}

/* Resources of one description, released by main. */
typedef struct info_state {
    ti_model *m;
    ti_session *s;
    op_count *hist;
} info_state;

/* Returns 0 on success, 1 after printing the reason. */
static int describe(const char *path, int show_nodes, info_state *st)
{
    ti_error err;
    memset(&err, 0, sizeof(err));
    ti_model *m = st->m = ti_model_load_file(path, NULL, &err);
    if (!m) {
        fprintf(stderr, "tinyinfer-info: %s\n", err.message[0] ? err.message : ti_status_string(err.code));
        return 1;
    }
    struct stat sb;
    printf("file: %s (%lld bytes)\n", path, stat(path, &sb) == 0 ? (long long)sb.st_size : -1LL);
    if (ti_model_format(m) == TI_FORMAT_ONNX)
        printf("format: ONNX, opset %d\n", ti_model_opset(m));
    else
        printf("format: %s\n", ti_model_format(m) == TI_FORMAT_TFLITE ? "TFLite" : "unknown");
    int n_in = ti_model_num_inputs(m), n_out = ti_model_num_outputs(m);
    printf("inputs: %d\n", n_in);
    for (int i = 0; i < n_in; i++) {
        ti_value_info vi;
        if (ti_model_input_info(m, i, &vi) == TI_OK) print_value_info("input ", i, &vi);
    }
    printf("outputs: %d\n", n_out);
    for (int i = 0; i < n_out; i++) {
        ti_value_info vi;
        if (ti_model_output_info(m, i, &vi) == TI_OK) print_value_info("output", i, &vi);
    }

    /* Op histogram; ops outside the default domain print as "domain:Op". */
    int n_nodes = ti_model_num_nodes(m), n_hist = 0, n_unsup = 0;
    op_count *hist = st->hist =
        (op_count *)calloc((size_t)(n_nodes > 0 ? n_nodes : 1), sizeof(op_count));
    if (!hist) {
        fprintf(stderr, "tinyinfer-info: out of memory\n");
        return 1;
    }
    for (int i = 0; i < n_nodes; i++) {
        const char *op = ti_model_node_op(m, i), *dom = ti_model_node_domain(m, i);
        if (!dom || strcmp(dom, "ai.onnx") == 0) dom = "";
        char name[136];
        snprintf(name, sizeof(name), "%s%s%s", dom, dom[0] ? ":" : "", op ? op : "?");
        int j = 0;
        while (j < n_hist && strcmp(hist[j].name, name) != 0) j++;
        if (j == n_hist) {
            snprintf(hist[j].name, sizeof(hist[j].name), "%s", name);
            hist[j].supported = op ? ti_op_supported(dom, op) : 0;
            n_unsup += !hist[j].supported;
            n_hist++;
        }
        hist[j].count++;
    }
    qsort(hist, (size_t)n_hist, sizeof(op_count), cmp_count);
    printf("nodes: %d (%d op types)\n", n_nodes, n_hist);
    for (int j = 0; j < n_hist; j++)
        printf("  %6d  %s%s\n", hist[j].count, hist[j].name,
               hist[j].supported ? "" : "  (not supported by this build)");
    char cnt[48];
    fmt_count(ti_model_num_parameters(m), cnt, sizeof(cnt));
    printf("parameters: %s\n", cnt);

    memset(hist, 0, (size_t)(n_nodes > 0 ? n_nodes : 1) * sizeof(op_count));
    describe_plan(m, &st->s, hist, show_nodes);
    if (n_unsup) printf("%d op type%s not supported by this build\n", n_unsup, n_unsup == 1 ? "" : "s");
    return 0;
}

int main(int argc, char **argv)
{
    const char *path = NULL;
    int show_nodes = 0, bad = argc < 2;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf("usage: tinyinfer-info MODEL [--nodes]\n"
                   "prints format, opset, inputs/outputs, op histogram, parameters, and the\n"
                   "planned graph: nodes, arena, MACs per op type (--nodes: per planned node)\n");
            return 0;
        }
        if (strcmp(argv[i], "--nodes") == 0)
            show_nodes = 1;
        else if (argv[i][0] == '-' || path)
            bad = 1;
        else
            path = argv[i];
    }
    if (bad || !path) {
        fprintf(stderr, "usage: tinyinfer-info MODEL [--nodes] (--help for more)\n");
        return 2;
    }
    info_state st;
    memset(&st, 0, sizeof(st));
    int rc = describe(path, show_nodes, &st);
    free(st.hist);
    ti_session_destroy(st.s);
    ti_model_free(st.m);
    return rc;
}
