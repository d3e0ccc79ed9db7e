/* Writes the seed corpus of tests/fuzz/fuzz_rpc.c into DIR (tests/fuzz/corpus/rpc): client
 * byte streams the server's session loop reads (upload + run + info + bye, a run of an
 * unknown model, a hash-mismatched upload, a 2 GiB length, a truncated frame, an unknown
 * type, an AUTH) and single payloads for the decoders (RUN with inputs, RESULT with outputs
 * and a profile, HELLO, ERROR). Run from the repository root:
 *     cc -I. -Itests/harness tests/fuzz/gen_rpc_corpus.c -o gen -lm -lpthread && ./gen tests/fuzz/corpus/rpc */
#define _POSIX_C_SOURCE 200809L
#define TI_NO_OPENCL
#define TINYINFER_IMPLEMENTATION
#include "tinyinfer.h"
#define TI_RPC_IMPLEMENTATION
#include "tools/rpc/ti_rpc.h"

static const char *g_dir;

static void save(const char *name, const tirpc_buf *b)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", g_dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(b->p, 1, b->len, f) != b->len) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(1);
    }
    fclose(f);
}

static void add(tirpc_buf *stream, int type, tirpc_buf *payload)
{
    tirpc_frame(stream, type, payload ? payload->p : NULL, payload ? payload->len : 0);
    if (payload) tirpc_buf_free(payload);
}

int main(int argc, char **argv)
{
    char msg[256];
    size_t size;
    if (argc != 2) {
        fprintf(stderr, "usage: gen_rpc_corpus DIR\n");
        return 2;
    }
    g_dir = argv[1];
    char *model = td_read_file("tests/data/conv2d_padding.onnx", &size, msg, sizeof(msg));
    if (!model) {
        fprintf(stderr, "%s\n", msg);
        return 1;
    }
    uint8_t sha[32], bad[32];
    tirpc_sha256_once(model, size, sha);
    memset(bad, 0xab, 32);
    float x[2 * 3 * 6 * 6];
    for (int i = 0; i < 2 * 3 * 6 * 6; i++) x[i] = (float)i / 100.0f;
    tirpc_tensor in;
    memset(&in, 0, sizeof(in));
    snprintf(in.name, sizeof(in.name), "input");
    in.dtype = TI_DTYPE_F32, in.rank = 4, in.shape[0] = 2, in.shape[1] = 3, in.shape[2] = 6, in.shape[3] = 6;
    in.data = x, in.bytes = sizeof(x);
    tirpc_run_req q;
    memset(&q, 0, sizeof(q));
    q.backend = TI_BACKEND_CPU, q.threads = 1, q.repeat = 2, q.warmup = 1, q.profile = 1, q.seed = 9;
    q.model_name = "conv2d_padding.onnx", q.tuning = "n0 wg=8\n";

    tirpc_buf s = {0, 0, 0, 0}, p = {0, 0, 0, 0};
    tirpc_enc_sha(&p, sha), add(&s, TIRPC_MSG_HAS_MODEL, &p);
    tirpc_enc_put(&p, sha, model, size), add(&s, TIRPC_MSG_PUT_MODEL, &p);
    tirpc_enc_run(&p, sha, &q), add(&s, TIRPC_MSG_RUN, &p);
    q.n_inputs = 1, q.inputs = &in;
    tirpc_enc_run(&p, sha, &q), add(&s, TIRPC_MSG_RUN, &p);
    add(&s, TIRPC_MSG_INFO, NULL);
    add(&s, TIRPC_MSG_BYE, NULL);
    save("upload_run_info_bye", &s);
    tirpc_buf_free(&s);

    tirpc_enc_run(&p, bad, &q), add(&s, TIRPC_MSG_RUN, &p);
    tirpc_enc_put(&p, bad, model, size), add(&s, TIRPC_MSG_PUT_MODEL, &p);
    add(&s, 77, NULL);
    save("unknown_model_mismatch_unknown_type", &s);
    tirpc_buf_free(&s);

    uint8_t key[32];
    tirpc_run_key(sha, TI_BACKEND_CPU, NULL, q.tuning, key);
    tirpc_enc_sha(&p, key), add(&s, TIRPC_MSG_CRASH_QUERY, &p);
    tirpc_enc_sha(&p, bad), add(&s, TIRPC_MSG_CRASH_QUERY, &p);
    save("crash_query", &s);
    tirpc_buf_free(&s);
    tirpc_enc_crash_report(&p, key, 11);
    save("payload_crash_report", &p);
    tirpc_buf_free(&p);

    static const uint8_t huge[12] = {'T', 'I', 'R', 'P', 1, TIRPC_MSG_PUT_MODEL, 0, 0, 0xff, 0xff, 0xff, 0x7f};
    tirpc__put(&s, huge, 12);
    save("huge_length", &s);
    tirpc_buf_free(&s);
    tirpc_enc_sha(&p, sha), add(&s, TIRPC_MSG_HAS_MODEL, &p);
    s.len -= 7; /* cut inside the payload */
    save("truncated", &s);
    tirpc_buf_free(&s);
    tirpc_auth a;
    memset(&a, 0x42, sizeof(a));
    tirpc_enc_auth(&p, &a), add(&s, TIRPC_MSG_AUTH, &p);
    save("auth", &s);
    tirpc_buf_free(&s);

    /* single payloads */
    tirpc_enc_run(&p, sha, &q);
    save("payload_run", &p);
    tirpc_buf_free(&p);
    tirpc_run_res r;
    memset(&r, 0, sizeof(r));
    double times[2] = {1.25, 1.5};
    tirpc_node nodes[1];
    memset(nodes, 0, sizeof(nodes));
    snprintf(nodes[0].name, sizeof(nodes[0].name), "n0");
    snprintf(nodes[0].op, sizeof(nodes[0].op), "Conv");
    nodes[0].time_ms = 1.0;
    nodes[0].tunables = (char *)"wg=8|wg=16";
    snprintf(r.backend, sizeof(r.backend), "cpu");
    r.n_outputs = 1, r.outputs = &in, r.n_times = 2, r.times_ms = times, r.n_nodes = 1, r.nodes = nodes;
    r.n_node_sums = 2, r.node_sums_ms = times;
    tirpc_enc_result(&p, &r);
    save("payload_result", &p);
    tirpc_buf_free(&p);
    tirpc_hello h;
    memset(&h, 0, sizeof(h));
    h.version = 1;
    snprintf(h.name, sizeof(h.name), "device");
    tirpc_enc_hello(&p, &h);
    save("payload_hello", &p);
    tirpc_buf_free(&p);
    tirpc_enc_error(&p, TIRPC_ERR_NO_MODEL, "not here");
    save("payload_error", &p);
    tirpc_buf_free(&p);
    free(model);
    printf("wrote the seed corpus to %s\n", g_dir);
    return 0;
}
