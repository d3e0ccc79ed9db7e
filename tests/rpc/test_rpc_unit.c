/* Unit tests of tools/rpc/ti_rpc.h: SHA-256 (FIPS 180-2 appendix B / NIST CAVP examples) and
 * HMAC-SHA256 (RFC 4231 test cases 1, 2, 3, 6, 7) vectors; every encoder/decoder round trip;
 * every decoder on each truncation of a valid payload and on random bytes; the frame
 * header; the server's dispatch on a memory connection (upload, run against a local run,
 * hash mismatch, oversized length, unknown type); the handshake over a socketpair with the
 * right and a wrong token. Run from the repository root. Built with and without ASan/UBSan
 * by build.sh (j_rpc, j_rpc_asan). */
#define _POSIX_C_SOURCE 200809L
/* no OpenCL: INFO in the memory dispatch would load the driver into this process, and PoCL's
 * process-wide allocations (freed by no one, and from an unloaded module by exit) would fail
 * LeakSanitizer; OpenCL through the server is test_rpc.sh opencl */
#define TI_NO_OPENCL
#ifndef TI_TEST_SHARED_IMPL /* build.sh links one ASan build of the implementation */
#define TINYINFER_IMPLEMENTATION
#endif
#include "tinyinfer.h"
#define TI_RPC_IMPLEMENTATION
#include "tools/rpc/ti_rpc.h"
#include "ti_test.h"

static void hex_of(const uint8_t *d, size_t n, char *out) { tirpc_hex(d, n, out); }

static int sha_is(const void *msg, size_t n, const char *want)
{
    uint8_t out[32];
    char hex[65];
    tirpc_sha256_once(msg, n, out);
    hex_of(out, 32, hex);
    if (strcmp(hex, want) != 0) printf("  sha256 got  %s\n  sha256 want %s\n", hex, want);
    return strcmp(hex, want) == 0;
}

TI_TEST(sha256_vectors)
{
    TI_CHECK(sha_is("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
    TI_CHECK(sha_is("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
    TI_CHECK(sha_is("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56,
                    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"));
    static const char two_block[] = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
                                    "hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
    TI_CHECK(sha_is(two_block, 112, "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"));
    char *a = (char *)malloc(1000000);
    TI_REQUIRE(a != NULL);
    memset(a, 'a', 1000000);
    TI_CHECK(sha_is(a, 1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"));
    /* fed in odd pieces: the same digest as in one piece */
    tirpc_sha256 s;
    uint8_t one[32], many[32];
    tirpc_sha256_once(a, 1000, one);
    tirpc_sha256_init(&s);
    for (size_t off = 0, step = 1; off < 1000; off += step, step = step * 3 % 67 + 1)
        tirpc_sha256_update(&s, a + off, off + step > 1000 ? 1000 - off : step);
    tirpc_sha256_final(&s, many);
    TI_CHECK(memcmp(one, many, 32) == 0);
    free(a);
}

static int hmac_is(const void *key, size_t kn, const void *msg, size_t n, const char *want)
{
    uint8_t out[32];
    char hex[65];
    tirpc_hmac_sha256(key, kn, msg, n, out);
    hex_of(out, 32, hex);
    if (strcmp(hex, want) != 0) printf("  hmac got  %s\n  hmac want %s\n", hex, want);
    return strcmp(hex, want) == 0;
}

TI_TEST(hmac_rfc4231)
{
    uint8_t k[131], d[50];
    memset(k, 0x0b, 20);
    TI_CHECK(hmac_is(k, 20, "Hi There", 8, "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"));
    TI_CHECK(hmac_is("Jefe", 4, "what do ya want for nothing?", 28,
                     "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"));
    memset(k, 0xaa, 20);
    memset(d, 0xdd, 50);
    TI_CHECK(hmac_is(k, 20, d, 50, "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"));
    memset(k, 0xaa, 131); /* keys longer than a block are hashed first */
    TI_CHECK(hmac_is(k, 131, "Test Using Larger Than Block-Size Key - Hash Key First", 54,
                     "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"));
    static const char tc7[] = "This is a test using a larger than block-size key and a larger than "
                              "block-size data. The key needs to be hashed before being used by the "
                              "HMAC algorithm.";
    TI_CHECK(hmac_is(k, 131, tc7, strlen(tc7), "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"));
}

TI_TEST(frame_header)
{
    tirpc_buf b = {0, 0, 0, 0};
    int type;
    uint32_t len;
    char why[256];
    tirpc_frame(&b, TIRPC_MSG_RUN, "xyz", 3);
    TI_REQUIRE(!b.bad && b.len == 15);
    TI_CHECK(memcmp(b.p, "TIRP\x01\x0a\x00\x00\x03\x00\x00\x00xyz", 15) == 0);
    TI_CHECK(tirpc_parse_header(b.p, &type, &len, why, sizeof(why)) == 0 && type == TIRPC_MSG_RUN && len == 3);
    uint8_t h[12];
    memcpy(h, b.p, 12);
    h[0] = 'X';
    TI_CHECK(tirpc_parse_header(h, &type, &len, why, sizeof(why)) == TIRPC_ERR_BAD_FRAME);
    TI_CHECK_STR_CONTAINS(why, "bad magic");
    memcpy(h, b.p, 12);
    h[4] = 2;
    TI_CHECK(tirpc_parse_header(h, &type, &len, why, sizeof(why)) == TIRPC_ERR_BAD_FRAME);
    TI_CHECK_STR_CONTAINS(why, "version 2");
    memcpy(h, b.p, 12);
    h[7] = 1;
    TI_CHECK(tirpc_parse_header(h, &type, &len, why, sizeof(why)) == TIRPC_ERR_BAD_FRAME);
    memcpy(h, b.p, 12);
    h[8] = h[9] = h[10] = 0xff, h[11] = 0x7f; /* 2 GiB: parses; the receiver's limit refuses it */
    TI_CHECK(tirpc_parse_header(h, &type, &len, why, sizeof(why)) == 0 && len == 0x7fffffffu);
    tirpc_buf_free(&b);
}

/* A sample of every payload, for the round trips and the truncation tests. */
typedef struct sample { int type; tirpc_buf b; } sample;
static uint8_t g_in0[2 * 3 * 4], g_out0[6 * 2];

static tirpc_run_res sample_result(void)
{
    static tirpc_tensor outs[2];
    static double times[3] = {1.5, 2.25, 1.75};
    static tirpc_node nodes[2];
    static char tun[] = "wg=8|wg=16|wg=32";
    tirpc_run_res r;
    memset(&r, 0, sizeof(r));
    snprintf(r.backend, sizeof(r.backend), "opencl");
    snprintf(r.device, sizeof(r.device), "Portable / cpu");
    r.launch_retries = 2;
    memset(outs, 0, sizeof(outs));
    snprintf(outs[0].name, sizeof(outs[0].name), "y");
    outs[0].dtype = TI_DTYPE_I16, outs[0].rank = 2, outs[0].shape[0] = 6, outs[0].shape[1] = 1;
    outs[0].data = g_out0, outs[0].bytes = sizeof(g_out0);
    snprintf(outs[1].name, sizeof(outs[1].name), "empty");
    outs[1].dtype = TI_DTYPE_F32, outs[1].rank = 1, outs[1].shape[0] = 0;
    r.n_outputs = 2, r.outputs = outs;
    r.n_times = 3, r.times_ms = times;
    memset(nodes, 0, sizeof(nodes));
    snprintf(nodes[0].name, sizeof(nodes[0].name), "conv_1");
    snprintf(nodes[0].op, sizeof(nodes[0].op), "Conv");
    nodes[0].backend = TI_BACKEND_OPENCL, nodes[0].time_ms = 0.75, nodes[0].launch_retries = 1;
    snprintf(nodes[0].tuning, sizeof(nodes[0].tuning), "wg=16");
    nodes[0].tunables = tun;
    snprintf(nodes[1].name, sizeof(nodes[1].name), "relu");
    snprintf(nodes[1].op, sizeof(nodes[1].op), "Relu");
    nodes[1].backend = TI_BACKEND_CPU, nodes[1].time_ms = 0.125;
    r.n_nodes = 2, r.nodes = nodes;
    return r;
}

static tirpc_run_req sample_req(tirpc_tensor *in)
{
    tirpc_run_req q;
    memset(&q, 0, sizeof(q));
    memset(in, 0, sizeof(*in));
    snprintf(in->name, sizeof(in->name), "x");
    in->dtype = TI_DTYPE_F32, in->rank = 3, in->shape[0] = 2, in->shape[1] = 3, in->shape[2] = 1;
    in->data = g_in0, in->bytes = sizeof(g_in0);
    q.backend = TI_BACKEND_OPENCL, q.threads = 3, q.warmup = 2, q.repeat = 5, q.profile = 1;
    q.seed = 0x1234567890abcdefull;
    q.device = "gpu";
    q.tuning = "conv_1 wg=16\n";
    q.model_name = "m.onnx";
    q.n_inputs = 1, q.inputs = in;
    return q;
}

static int make_samples(sample *s)
{
    static const uint8_t sha[32] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
                                    17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32};
    int n = 0;
    tirpc_hello h;
    memset(&h, 0, sizeof(h));
    h.version = 1;
    memset(h.nonce, 0x5a, 32);
    snprintf(h.name, sizeof(h.name), "phone");
    tirpc_auth a;
    memset(a.nonce, 0x11, 32);
    memset(a.mac, 0x22, 32);
    memset(s, 0, 9 * sizeof(sample));
    s[n].type = TIRPC_MSG_HELLO, tirpc_enc_hello(&s[n++].b, &h);
    s[n].type = TIRPC_MSG_AUTH, tirpc_enc_auth(&s[n++].b, &a);
    s[n].type = TIRPC_MSG_ERROR, tirpc_enc_error(&s[n++].b, 7, "no such thing");
    s[n].type = TIRPC_MSG_INFO_REPLY, tirpc_enc_text(&s[n++].b, "host: x\n");
    s[n].type = TIRPC_MSG_HAS_MODEL, tirpc_enc_sha(&s[n++].b, sha);
    s[n].type = TIRPC_MSG_MODEL_STATUS, tirpc_enc_status(&s[n++].b, sha, 1);
    s[n].type = TIRPC_MSG_PUT_MODEL, tirpc_enc_put(&s[n++].b, sha, "model bytes", 11);
    tirpc_tensor in;
    tirpc_run_req q = sample_req(&in);
    s[n].type = TIRPC_MSG_RUN, tirpc_enc_run(&s[n++].b, sha, &q);
    tirpc_run_res r = sample_result();
    s[n].type = TIRPC_MSG_RESULT, tirpc_enc_result(&s[n++].b, &r);
    return n;
}

/* decodes p as the payload of type; 0 on success (all memory released) */
static int decode_any(int type, const uint8_t *p, size_t n)
{
    char why[256];
    int rc = -1, present;
    uint8_t sha[32];
    switch (type) {
    case TIRPC_MSG_HELLO: { tirpc_hello m; rc = tirpc_dec_hello(p, n, &m, why, sizeof(why)); break; }
    case TIRPC_MSG_AUTH: { tirpc_auth m; rc = tirpc_dec_auth(p, n, &m, why, sizeof(why)); break; }
    case TIRPC_MSG_ERROR: { tirpc_errmsg m; rc = tirpc_dec_error(p, n, &m, why, sizeof(why)); break; }
    case TIRPC_MSG_INFO_REPLY: {
        char *t;
        rc = tirpc_dec_text(p, n, &t, why, sizeof(why));
        if (rc == 0) free(t);
        break;
    }
    case TIRPC_MSG_HAS_MODEL: rc = tirpc_dec_sha(p, n, sha, why, sizeof(why)); break;
    case TIRPC_MSG_MODEL_STATUS: rc = tirpc_dec_status(p, n, sha, &present, why, sizeof(why)); break;
    case TIRPC_MSG_PUT_MODEL: { tirpc_put m; rc = tirpc_dec_put(p, n, &m, why, sizeof(why)); break; }
    case TIRPC_MSG_RUN: {
        tirpc_run_wire w;
        rc = tirpc_dec_run(p, n, &w, why, sizeof(why));
        if (rc == 0) tirpc_run_wire_free(&w);
        break;
    }
    case TIRPC_MSG_RESULT: {
        tirpc_run_res r;
        rc = tirpc_dec_result(p, n, &r, why, sizeof(why));
        if (rc == 0) tirpc_run_res_free(&r);
        break;
    }
    }
    return rc;
}

TI_TEST(round_trips)
{
    sample s[9];
    char why[256];
    int n = make_samples(s);
    TI_REQUIRE(n == 9);
    {
        tirpc_hello h;
        TI_REQUIRE(tirpc_dec_hello(s[0].b.p, s[0].b.len, &h, why, sizeof(why)) == 0);
        TI_CHECK(h.version == 1 && h.nonce[31] == 0x5a && strcmp(h.name, "phone") == 0);
        tirpc_auth a;
        TI_REQUIRE(tirpc_dec_auth(s[1].b.p, s[1].b.len, &a, why, sizeof(why)) == 0);
        TI_CHECK(a.nonce[0] == 0x11 && a.mac[31] == 0x22);
        tirpc_errmsg e;
        TI_REQUIRE(tirpc_dec_error(s[2].b.p, s[2].b.len, &e, why, sizeof(why)) == 0);
        TI_CHECK(e.code == 7 && strcmp(e.message, "no such thing") == 0);
        char *t = NULL;
        TI_REQUIRE(tirpc_dec_text(s[3].b.p, s[3].b.len, &t, why, sizeof(why)) == 0);
        TI_CHECK(strcmp(t, "host: x\n") == 0);
        free(t);
        uint8_t sha[32];
        int present = 0;
        TI_CHECK(tirpc_dec_sha(s[4].b.p, s[4].b.len, sha, why, sizeof(why)) == 0 && sha[0] == 1 && sha[31] == 32);
        TI_CHECK(tirpc_dec_status(s[5].b.p, s[5].b.len, sha, &present, why, sizeof(why)) == 0 && present == 1);
        tirpc_put put;
        TI_REQUIRE(tirpc_dec_put(s[6].b.p, s[6].b.len, &put, why, sizeof(why)) == 0);
        TI_CHECK(put.size == 11 && memcmp(put.data, "model bytes", 11) == 0 && put.sha[5] == 6);
    }
    for (size_t i = 0; i < sizeof(g_in0); i++) g_in0[i] = (uint8_t)(i * 7 + 1);
    tirpc_run_wire w;
    TI_REQUIRE(tirpc_dec_run(s[7].b.p, s[7].b.len, &w, why, sizeof(why)) == 0);
    TI_CHECK(w.sha[0] == 1 && w.req.backend == TI_BACKEND_OPENCL && w.req.threads == 3);
    TI_CHECK(w.req.warmup == 2 && w.req.repeat == 5 && w.req.profile == 1 && w.req.seed == 0x1234567890abcdefull);
    TI_CHECK(strcmp(w.req.device, "gpu") == 0 && strcmp(w.req.tuning, "conv_1 wg=16\n") == 0);
    TI_CHECK(strcmp(w.req.model_name, "m.onnx") == 0 && w.req.n_inputs == 1);
    TI_CHECK(strcmp(w.inputs[0].name, "x") == 0 && w.inputs[0].dtype == TI_DTYPE_F32 && w.inputs[0].rank == 3);
    TI_CHECK(w.inputs[0].shape[1] == 3 && w.inputs[0].bytes == sizeof(g_in0));
    tirpc_run_wire_free(&w);
    for (size_t i = 0; i < sizeof(g_out0); i++) g_out0[i] = (uint8_t)(255 - i);
    tirpc_buf_free(&s[8].b);
    tirpc_run_res r0 = sample_result(), r;
    tirpc_enc_result(&s[8].b, &r0);
    TI_REQUIRE(tirpc_dec_result(s[8].b.p, s[8].b.len, &r, why, sizeof(why)) == 0);
    TI_CHECK(r.status == 0 && strcmp(r.backend, "opencl") == 0 && strcmp(r.device, "Portable / cpu") == 0);
    TI_CHECK(r.launch_retries == 2 && r.n_outputs == 2 && r.n_times == 3 && r.n_nodes == 2);
    TI_CHECK(r.outputs[0].dtype == TI_DTYPE_I16 && r.outputs[0].bytes == 12 &&
             memcmp(r.outputs[0].data, g_out0, 12) == 0 && r.outputs[1].bytes == 0);
    TI_CHECK(r.times_ms[1] == 2.25 && r.median_ms == 1.75 && r.min_ms == 1.5 && r.p90_ms == 2.25);
    TI_CHECK(strcmp(r.nodes[0].name, "conv_1") == 0 && strcmp(r.nodes[0].tuning, "wg=16") == 0);
    TI_CHECK(strcmp(r.nodes[0].tunables, "wg=8|wg=16|wg=32") == 0 && r.nodes[0].launch_retries == 1);
    TI_CHECK(r.nodes[1].backend == TI_BACKEND_CPU && r.nodes[1].time_ms == 0.125 && r.nodes[1].tunables[0] == 0);
    tirpc_run_res_free(&r);
    for (int i = 0; i < n; i++) tirpc_buf_free(&s[i].b);
}

/* splitmix64: the random bytes of the garbage test */
static uint64_t next_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* every strict prefix of every payload is refused, and so is a byte more (all but INFO and
 * the ones with a trailing blob are exact-length); random bytes never crash */
static void truncations_and_garbage(void)
{
    sample s[9];
    int n = make_samples(s), bad_prefix = 0, bad_long = 0;
    for (int i = 0; i < n; i++) {
        for (size_t k = 0; k < s[i].b.len; k++) {
            uint8_t *copy = (uint8_t *)malloc(k ? k : 1); /* exact size: ASan sees overreads */
            memcpy(copy, s[i].b.p, k);
            if (decode_any(s[i].type, copy, k) == 0) {
                bad_prefix++;
                printf("  type %d: a %zu-byte prefix of %zu decoded\n", s[i].type, k, s[i].b.len);
            }
            free(copy);
        }
        uint8_t *longer = (uint8_t *)malloc(s[i].b.len + 1);
        memcpy(longer, s[i].b.p, s[i].b.len);
        longer[s[i].b.len] = 0;
        if (decode_any(s[i].type, longer, s[i].b.len + 1) == 0) {
            bad_long++;
            printf("  type %d: a trailing byte was accepted\n", s[i].type);
        }
        free(longer);
        TI_CHECK(decode_any(s[i].type, s[i].b.p, s[i].b.len) == 0);
    }
    TI_CHECK(bad_prefix == 0);
    TI_CHECK(bad_long == 0);
    uint64_t st = 42;
    for (int round = 0; round < 3000; round++) {
        size_t len = (size_t)(next_rand(&st) % 200);
        uint8_t *g = (uint8_t *)malloc(len ? len : 1);
        for (size_t k = 0; k < len; k++) g[k] = (uint8_t)next_rand(&st);
        if (round % 2 && len > 8) { /* plausible counts: small little-endian values */
            for (size_t k = 0; k + 4 < len; k += 9) g[k + 1] = g[k + 2] = g[k + 3] = 0;
        }
        for (int t = TIRPC_MSG_HELLO; t <= TIRPC_MSG_RESULT; t++) decode_any(t, g, len);
        free(g);
    }
    /* mutations of valid payloads: one byte changed at each position */
    for (int i = 0; i < n; i++)
        for (size_t k = 0; k < s[i].b.len; k++) {
            uint8_t *m = (uint8_t *)malloc(s[i].b.len);
            memcpy(m, s[i].b.p, s[i].b.len);
            m[k] ^= 0xff;
            decode_any(s[i].type, m, s[i].b.len);
            free(m);
        }
    TI_CHECK(1); /* reaching here without a sanitizer report is the check */
    for (int i = 0; i < n; i++) tirpc_buf_free(&s[i].b);
}

/* a counted RUN of conv2d_padding.onnx on the server through a memory connection against a
 * local session fed the same seeded random input */
static char g_cache[256];

static void frames_in(const tirpc_buf *out, int *types, int max, int *count)
{
    size_t off = 0;
    *count = 0;
    while (off + 12 <= out->len && *count < max) {
        int type;
        uint32_t len;
        char why[128];
        if (tirpc_parse_header(out->p + off, &type, &len, why, sizeof(why)) != 0) break;
        types[(*count)++] = type;
        off += 12 + len;
    }
}

static const uint8_t *frame_payload(const tirpc_buf *out, int index, uint32_t *len)
{
    size_t off = 0;
    for (int i = 0; off + 12 <= out->len; i++) {
        int type;
        char why[128];
        tirpc_parse_header(out->p + off, &type, len, why, sizeof(why));
        if (i == index) return out->p + off + 12;
        off += 12 + *len;
    }
    return NULL;
}

TI_TEST(server_dispatch_memory)
{
    char msg[256], why[256];
    size_t size;
    char *model = td_read_file("tests/data/conv2d_padding.onnx", &size, msg, sizeof(msg));
    TI_REQUIRE(model != NULL);
    uint8_t sha[32], bad[32];
    tirpc_sha256_once(model, size, sha);
    memcpy(bad, sha, 32);
    bad[0] ^= 1;
    tirpc_buf in = {0, 0, 0, 0}, p = {0, 0, 0, 0}, out = {0, 0, 0, 0};
    tirpc_enc_put(&p, bad, model, size); /* hash mismatch: ERROR, the session goes on */
    tirpc_frame(&in, TIRPC_MSG_PUT_MODEL, p.p, p.len);
    tirpc_buf_free(&p);
    tirpc_enc_sha(&p, sha);
    tirpc_frame(&in, TIRPC_MSG_HAS_MODEL, p.p, p.len);
    tirpc_buf_free(&p);
    tirpc_enc_put(&p, sha, model, size);
    tirpc_frame(&in, TIRPC_MSG_PUT_MODEL, p.p, p.len);
    tirpc_buf_free(&p);
    tirpc_run_req q;
    memset(&q, 0, sizeof(q));
    q.backend = TI_BACKEND_CPU, q.threads = 1, q.repeat = 2, q.profile = 1, q.seed = 7;
    tirpc_enc_run(&p, sha, &q);
    tirpc_frame(&in, TIRPC_MSG_RUN, p.p, p.len);
    tirpc_buf_free(&p);
    tirpc_frame(&in, 99, NULL, 0); /* unknown type: ERROR, the session goes on */
    tirpc_frame(&in, TIRPC_MSG_INFO, NULL, 0);
    uint8_t huge[12] = {'T', 'I', 'R', 'P', 1, TIRPC_MSG_PUT_MODEL, 0, 0, 0xff, 0xff, 0xff, 0x7f};
    tirpc__put(&in, huge, 12); /* 2 GiB: ERROR, then the session ends */
    tirpc_server srv;
    memset(&srv, 0, sizeof(srv));
    srv.token = "t", srv.cache_dir = g_cache, srv.skip_auth = 1, srv.no_heartbeat = 1;
    srv.max_message = 1 << 20;
    tirpc_conn *c = tirpc_conn_memory(in.p, in.len, &out);
    TI_REQUIRE(c != NULL);
    TI_CHECK(tirpc_serve_conn(&srv, c) == 1);
    tirpc_close(c);
    int types[16], count;
    frames_in(&out, types, 16, &count);
    TI_REQUIRE(count == 7);
    TI_CHECK(types[0] == TIRPC_MSG_ERROR && types[1] == TIRPC_MSG_MODEL_STATUS &&
             types[2] == TIRPC_MSG_MODEL_STATUS && types[3] == TIRPC_MSG_RESULT &&
             types[4] == TIRPC_MSG_ERROR && types[5] == TIRPC_MSG_INFO_REPLY && types[6] == TIRPC_MSG_ERROR);
    uint32_t len;
    const uint8_t *pl = frame_payload(&out, 0, &len);
    tirpc_errmsg e;
    TI_CHECK(tirpc_dec_error(pl, len, &e, why, sizeof(why)) == 0 && e.code == TIRPC_ERR_HASH_MISMATCH);
    pl = frame_payload(&out, 6, &len);
    TI_CHECK(tirpc_dec_error(pl, len, &e, why, sizeof(why)) == 0 && e.code == TIRPC_ERR_TOO_LARGE);
    TI_CHECK_STR_CONTAINS(e.message, "over the limit");
    pl = frame_payload(&out, 3, &len);
    tirpc_run_res r;
    TI_REQUIRE(tirpc_dec_result(pl, len, &r, why, sizeof(why)) == 0);
    TI_CHECK(r.status == 0 && r.n_outputs == 1 && r.n_times == 2 && r.n_nodes >= 1);
    /* the same input locally: seed 7, tinyinfer-run's fill */
    ti_model *m = ti_model_load_memory(model, size, NULL, NULL);
    ti_session_desc d;
    memset(&d, 0, sizeof(d));
    d.backend = TI_BACKEND_CPU, d.num_threads = 1;
    ti_session *s = m ? ti_session_create(m, &d, NULL) : NULL;
    TI_REQUIRE(s != NULL);
    uint64_t st = 7;
    td_fill_random(ti_session_input(s, 0), &st);
    TI_REQUIRE(ti_session_run(s, NULL) == TI_OK);
    const ti_tensor *y = ti_session_output(s, 0);
    TI_CHECK(r.n_outputs == 1 && y->size_bytes == r.outputs[0].bytes &&
             memcmp(y->data, r.outputs[0].data, y->size_bytes) == 0);
    ti_session_destroy(s);
    ti_model_free(m);
    tirpc_run_res_free(&r);
    tirpc_buf_free(&in);
    tirpc_buf_free(&out);
    free(model);
}

/* the handshake over a socketpair: server in a child process */
static int handshake_with(const char *server_token, const char *client_token, char *why, size_t wn)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return -2;
    pid_t pid = fork();
    if (pid == 0) {
        close(sv[0]);
        tirpc_server srv;
        memset(&srv, 0, sizeof(srv));
        srv.token = server_token, srv.cache_dir = g_cache, srv.read_timeout_s = 5;
        tirpc_conn *c = tirpc_conn_fds(sv[1], sv[1], 1, 5);
        int rc = tirpc_serve_conn(&srv, c);
        tirpc_close(c);
        _exit(rc);
    }
    close(sv[1]);
    tirpc_conn *c = tirpc_conn_fds(sv[0], sv[0], 1, 5);
    c->no_bye = 0;
    int rc = tirpc__client_handshake(c, client_token, why, wn);
    char *text = NULL;
    if (rc == 0) rc = tirpc_info(c, &text, why, wn);
    if (rc == 0 && !strstr(text, "tinyinfer: ")) rc = -3;
    free(text);
    tirpc_close(c);
    int st;
    waitpid(pid, &st, 0);
    return rc;
}

/* CRASH_REPORT codec, the run key, and CRASH_QUERY answered from <cache>/crashes.log */
TI_TEST(crash_records)
{
    char why[256];
    uint8_t model_sha[32], k1[32], k2[32], k3[32], k4[32], k5[32], got[32];
    for (int i = 0; i < 32; i++) model_sha[i] = (uint8_t)(i * 3);
    tirpc_run_key(model_sha, TI_BACKEND_OPENCL, "ab", "c", k1);
    tirpc_run_key(model_sha, TI_BACKEND_OPENCL, "a", "bc", k2); /* same bytes, split elsewhere */
    tirpc_run_key(model_sha, TI_BACKEND_CPU, "ab", "c", k3);
    tirpc_run_key(model_sha, TI_BACKEND_OPENCL, NULL, NULL, k4);
    tirpc_run_key(model_sha, TI_BACKEND_OPENCL, "", "", k5);
    TI_CHECK(memcmp(k1, k2, 32) != 0 && memcmp(k1, k3, 32) != 0 && memcmp(k4, k5, 32) == 0);
    tirpc_buf b = {0, 0, 0, 0};
    int sig = -1;
    tirpc_enc_crash_report(&b, k1, 11);
    TI_REQUIRE(b.len == 36);
    TI_CHECK(tirpc_dec_crash_report(b.p, b.len, got, &sig, why, sizeof(why)) == 0 && sig == 11 &&
             memcmp(got, k1, 32) == 0);
    TI_CHECK(tirpc_dec_crash_report(b.p, 35, got, &sig, why, sizeof(why)) != 0); /* short */
    b.p[34] = 1; /* signal 65547: out of range */
    TI_CHECK(tirpc_dec_crash_report(b.p, b.len, got, &sig, why, sizeof(why)) != 0);
    tirpc_buf_free(&b);

    /* a record for k1 (the latest line wins), another key, a damaged line */
    char path[600], hex[65];
    snprintf(path, sizeof(path), "%s/crashes.log", g_cache);
    FILE *f = fopen(path, "wb");
    TI_REQUIRE(f != NULL);
    tirpc_hex(k1, 32, hex);
    fprintf(f, "%s 6\n%.40s\n", hex, hex);
    tirpc_hex(k3, 32, hex);
    fprintf(f, "%s 7\n", hex);
    tirpc_hex(k1, 32, hex);
    fprintf(f, "%s 11\n", hex);
    fclose(f);
    tirpc_buf in = {0, 0, 0, 0}, p = {0, 0, 0, 0}, out = {0, 0, 0, 0};
    tirpc_enc_sha(&p, k1);
    tirpc_frame(&in, TIRPC_MSG_CRASH_QUERY, p.p, p.len);
    tirpc_buf_free(&p);
    tirpc_enc_sha(&p, k2);
    tirpc_frame(&in, TIRPC_MSG_CRASH_QUERY, p.p, p.len);
    tirpc_buf_free(&p);
    tirpc_frame(&in, TIRPC_MSG_CRASH_QUERY, k1, 31); /* malformed: ERROR, the session ends */
    tirpc_server srv;
    memset(&srv, 0, sizeof(srv));
    srv.token = "t", srv.cache_dir = g_cache, srv.skip_auth = 1, srv.no_heartbeat = 1;
    tirpc_conn *c = tirpc_conn_memory(in.p, in.len, &out);
    TI_REQUIRE(c != NULL);
    TI_CHECK(tirpc_serve_conn(&srv, c) == 1);
    tirpc_close(c);
    int types[8], count;
    frames_in(&out, types, 8, &count);
    TI_REQUIRE(count == 3);
    TI_CHECK(types[0] == TIRPC_MSG_CRASH_REPORT && types[1] == TIRPC_MSG_CRASH_REPORT &&
             types[2] == TIRPC_MSG_ERROR);
    uint32_t len;
    const uint8_t *pl = frame_payload(&out, 0, &len);
    TI_CHECK(tirpc_dec_crash_report(pl, len, got, &sig, why, sizeof(why)) == 0 && sig == 11 &&
             memcmp(got, k1, 32) == 0);
    pl = frame_payload(&out, 1, &len);
    TI_CHECK(tirpc_dec_crash_report(pl, len, got, &sig, why, sizeof(why)) == 0 && sig == 0 &&
             memcmp(got, k2, 32) == 0);
    remove(path);
    tirpc_buf_free(&in);
    tirpc_buf_free(&out);
}

TI_TEST(handshake)
{
    char why[512];
    TI_CHECK(handshake_with("s3cret", "s3cret", why, sizeof(why)) == 0);
    TI_CHECK(handshake_with("s3cret", "wrong", why, sizeof(why)) == -1);
    TI_CHECK_STR_CONTAINS(why, "authentication failed");
}

int main(void)
{
    snprintf(g_cache, sizeof(g_cache), "/tmp/tirpc_unit_cache.%ld", (long)getpid());
    TI_RUN(sha256_vectors);
    TI_RUN(hmac_rfc4231);
    TI_RUN(frame_header);
    TI_RUN(round_trips);
    truncations_and_garbage();
    TI_RUN(server_dispatch_memory);
    TI_RUN(crash_records);
    TI_RUN(handshake);
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g_cache);
    if (system(cmd) != 0) printf("could not remove %s\n", g_cache);
    return ti_test_summary();
}
