/* tinyinfer-info: describes a model file: format (and for ONNX the IR version, producer and
 * opsets, read by a small top-level scan of the file), inputs and outputs with symbolic dim
 * names, node count, op histogram (ops this build cannot run are marked), parameter count,
 * and whether a session can be created (with its node count after folding and fusion and
 * its arena size). MACs need per-node shapes, which the public API does not give yet: "n/a".
 * Uses only the public API and tests/harness/testdir.h.
 * Build: cc -O2 -I. tools/tinyinfer-info.c -o tinyinfer-info -lm -lpthread */
#define _POSIX_C_SOURCE 200809L
#define TINYINFER_IMPLEMENTATION
#include "tinyinfer.h"
#include "tests/harness/testdir.h"

typedef struct op_count {
    char name[136];
    int count;
    int supported;
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

/* Resources of one description, released by main. */
typedef struct info_state {
    ti_model *m;
    ti_session *s;
    op_count *hist;
    td_onnx_info onnx;
} info_state;

/* Returns 0 on success, 1 after printing the reason. */
static int describe(const char *path, info_state *st)
{
    char msg[512];
    size_t size = 0;
    ti_model *m;
    ti_session *s;
    op_count *hist;
    td_onnx_info onnx;
    int is_onnx = 0;
    memset(&onnx, 0, sizeof(onnx));

    /* The format, from the bytes: TFLite files carry "TFL3" at offset 4. */
    char *bytes = td_read_file(path, &size, msg, sizeof(msg));
    if (!bytes) {
        fprintf(stderr, "tinyinfer-info: %s\n", msg);
        return 1;
    }
    printf("file: %s (%zu bytes)\n", path, size);
    if (size >= 8 && memcmp(bytes + 4, "TFL3", 4) == 0) {
        printf("format: TFLite\n");
    } else if (td_onnx_scan(bytes, size, &st->onnx)) {
        onnx = st->onnx;
        is_onnx = 1;
        printf("format: ONNX, IR version %lld", (long long)onnx.ir_version);
        if (onnx.producer[0])
            printf(", producer %s%s%s", onnx.producer, onnx.producer_version[0] ? " " : "",
                   onnx.producer_version);
        printf("\nopsets:");
        for (int i = 0; i < onnx.num_opsets; i++)
            printf("%s %s %lld", i ? "," : "", onnx.opset_domain[i][0] ? onnx.opset_domain[i] : "ai.onnx",
                   (long long)onnx.opset_version[i]);
        printf("%s\n", onnx.num_opsets ? "" : " none declared");
    } else {
        printf("format: unknown (neither TFLite nor a well-formed ONNX ModelProto)\n");
    }
    free(bytes);

    ti_error err;
    memset(&err, 0, sizeof(err));
    m = st->m = ti_model_load_file(path, NULL, &err);
    if (!m) {
        fprintf(stderr, "tinyinfer-info: %s\n", err.message[0] ? err.message : ti_status_string(err.code));
        return 1;
    }
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

    /* Op histogram from the loaded model; domains from the file scan when its node list
     * lines up with the model's (ops outside the default domain print as "domain:Op"). */
    int n_nodes = ti_model_num_nodes(m), n_hist = 0, n_unsup = 0;
    int domains_ok = is_onnx && onnx.num_nodes == n_nodes;
    for (int i = 0; domains_ok && i < n_nodes; i++) {
        const char *op = ti_model_node_op(m, i);
        domains_ok = op && strcmp(op, onnx.nodes[i].op) == 0;
    }
    hist = st->hist = (op_count *)calloc((size_t)(n_nodes > 0 ? n_nodes : 1), sizeof(op_count));
    if (!hist) {
        fprintf(stderr, "tinyinfer-info: out of memory\n");
        return 1;
    }
    for (int i = 0; i < n_nodes; i++) {
        const char *op = ti_model_node_op(m, i);
        const char *dom = domains_ok ? onnx.nodes[i].domain : "";
        int dflt = dom[0] == 0 || strcmp(dom, "ai.onnx") == 0;
        char name[136];
        snprintf(name, sizeof(name), "%s%s%s", dflt ? "" : dom, dflt ? "" : ":", op ? op : "?");
        int j = 0;
        while (j < n_hist && strcmp(hist[j].name, name) != 0) j++;
        if (j == n_hist) {
            snprintf(hist[j].name, sizeof(hist[j].name), "%s", name);
            hist[j].supported = op ? ti_op_supported(dflt ? "" : dom, op) : 0;
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
    printf("MACs: n/a (needs per-node shapes from the public API)\n");

    /* Can this build run it? Session with one thread, symbolic dims at their default 1. */
    ti_session_desc desc;
    memset(&desc, 0, sizeof(desc));
    desc.num_threads = 1;
    s = st->s = ti_session_create(m, &desc, &err);
    if (!s) {
        printf("session: cannot be created: %s\n",
               err.message[0] ? err.message : ti_status_string(err.code));
    } else {
        ti_session_info info;
        if (ti_session_get_info(s, &info) == TI_OK)
            printf("session (1 thread, symbolic dims = 1): %d nodes after %d folded and %d fused, "
                   "arena %.2f MiB%s\n",
                   info.num_nodes, info.num_folded, info.num_fused,
                   (double)info.arena_bytes / (1024.0 * 1024.0),
                   info.dynamic ? ", shapes re-inferred at each run" : "");
    }
    if (n_unsup) printf("%d op type%s not supported by this build\n", n_unsup, n_unsup == 1 ? "" : "s");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2 || argv[1][0] == '-') {
        fprintf(argc == 2 && strcmp(argv[1], "--help") == 0 ? stdout : stderr,
                "usage: tinyinfer-info MODEL\n"
                "prints format, opsets, inputs/outputs, node count, op histogram, parameters\n");
        return argc == 2 && strcmp(argv[1], "--help") == 0 ? 0 : 2;
    }
    info_state st;
    memset(&st, 0, sizeof(st));
    int rc = describe(argv[1], &st);
    free(st.hist);
    td_onnx_info_free(&st.onnx);
    ti_session_destroy(st.s);
    ti_model_free(st.m);
    return rc;
}
