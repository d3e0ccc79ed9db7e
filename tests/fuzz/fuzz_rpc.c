/* libFuzzer target for the RPC protocol (tools/rpc/ti_rpc.h): the input is fed to
 * 1. the frame-header parser (its first 12 bytes) and every message decoder (the whole input
 *    as each type's payload, the client's RESULT decoder included);
 * 2. the server's session loop on a memory connection, as the byte stream a client sent:
 *    without authentication (requests straight to the dispatch: HAS_MODEL, PUT_MODEL into a
 *    scratch cache, RUN of what was put, INFO, unknown types, oversized lengths), then with
 *    it (HELLO is sent, AUTH read and refused).
 * No network, no OpenCL (TI_NO_OPENCL: INFO and RUN stay on the CPU), repeats capped at 2.
 * Seeds: tests/fuzz/corpus/rpc (tests/fuzz/gen_rpc_corpus.c). Replayed under ASan by
 * ./build.sh (j_fuzz_replay) with tests/fuzz/replay_main.c. */
#define _POSIX_C_SOURCE 200809L
#define TI_NO_OPENCL
#ifndef TI_TEST_SHARED_IMPL /* build.sh links one ASan build of the implementation */
#define TINYINFER_IMPLEMENTATION
#endif
#include "tinyinfer.h"
#define TI_RPC_IMPLEMENTATION
#include "tools/rpc/ti_rpc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char g_cache[128];

static void remove_cache(void)
{
    char cmd[200];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g_cache);
    if (system(cmd) != 0) g_cache[0] = 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char why[256];
    if (!g_cache[0]) {
        snprintf(g_cache, sizeof(g_cache), "/tmp/tirpc_fuzz_cache.%ld", (long)getpid());
        atexit(remove_cache);
    }
    if (size >= TIRPC_HEADER_BYTES) {
        int type;
        uint32_t len;
        tirpc_parse_header(data, &type, &len, why, sizeof(why));
    }
    { /* every decoder */
        tirpc_hello h;
        tirpc_auth a;
        tirpc_errmsg e;
        tirpc_put p;
        tirpc_run_wire w;
        tirpc_run_res r;
        char *text;
        uint8_t sha[32];
        int present;
        tirpc_dec_hello(data, size, &h, why, sizeof(why));
        tirpc_dec_auth(data, size, &a, why, sizeof(why));
        tirpc_dec_error(data, size, &e, why, sizeof(why));
        tirpc_dec_put(data, size, &p, why, sizeof(why));
        tirpc_dec_sha(data, size, sha, why, sizeof(why));
        tirpc_dec_status(data, size, sha, &present, why, sizeof(why));
        if (tirpc_dec_text(data, size, &text, why, sizeof(why)) == 0) free(text);
        if (tirpc_dec_run(data, size, &w, why, sizeof(why)) == 0) tirpc_run_wire_free(&w);
        if (tirpc_dec_result(data, size, &r, why, sizeof(why)) == 0) tirpc_run_res_free(&r);
        int sig;
        tirpc_dec_crash_report(data, size, sha, &sig, why, sizeof(why));
    }
    for (int auth = 0; auth < 2; auth++) { /* the server on a fake connection */
        tirpc_server srv;
        tirpc_buf out = {0, 0, 0, 0};
        memset(&srv, 0, sizeof(srv));
        srv.token = "fuzz-token";
        srv.cache_dir = g_cache;
        srv.skip_auth = !auth;
        srv.no_heartbeat = 1;
        srv.max_message = 1u << 20;
        srv.max_repeat = 2;
        tirpc_conn *c = tirpc_conn_memory(data, size, &out);
        if (c) tirpc_serve_conn(&srv, c);
        tirpc_close(c);
        tirpc_buf_free(&out);
    }
    return 0;
}
