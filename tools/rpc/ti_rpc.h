/* ti_rpc.h: tinyinfer's remote-run protocol (tools/rpc/PROTOCOL.md) in one header: SHA-256
 * and HMAC-SHA256 (FIPS 180-4, RFC 2104), the frame and message codecs (every read
 * bounds-checked), transports (TCP, a pair of fds, a spawned command's pipes), the
 * challenge-response authentication, the client API and the server's session loop.
 * Relies on tinyinfer.h (include it first, with TINYINFER_IMPLEMENTATION in the same TU as
 * TI_RPC_IMPLEMENTATION), tests/harness/testdir.h and POSIX sockets (Winsock on _WIN32).
 * Tool code: it may print (the server logs to a FILE it is given). Only models are ever
 * executed; nothing a peer sends is run as code.
 *
 *     #define _POSIX_C_SOURCE 200809L
 *     #define TINYINFER_IMPLEMENTATION
 *     #include "tinyinfer.h"
 *     #define TI_RPC_IMPLEMENTATION
 *     #include "rpc/ti_rpc.h"            (from tools/; build with -I.)
 *
 * Names: tirpc_ public, tirpc__ internal (static). */
#ifndef TI_RPC_H
#define TI_RPC_H

#include "tinyinfer.h"
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define TIRPC_VERSION 1
#define TIRPC_HEADER_BYTES 12
#define TIRPC_NONCE_BYTES 32
#define TIRPC_MAX_MESSAGE_DEFAULT (256u << 20) /* server: --max-message default, bytes */
#define TIRPC_CLIENT_MAX_MESSAGE (1u << 30)    /* client: largest reply it reads, bytes */
#define TIRPC_MAX_TENSORS 4096                 /* inputs of a RUN, outputs of a RESULT */
#define TIRPC_MAX_REPEAT 100000                /* repeat and warmup counts of a RUN */

/* Frame types (the u8 after the version). */
enum {
    TIRPC_MSG_HELLO = 1,        /* server -> client: version, nonce, name               */
    TIRPC_MSG_AUTH = 2,         /* client: nonce + HMAC                                 */
    TIRPC_MSG_AUTH_OK = 3,      /* server: its own HMAC                                 */
    TIRPC_MSG_ERROR = 4,        /* either way: code + message                           */
    TIRPC_MSG_INFO = 5,         /* client: empty                                        */
    TIRPC_MSG_INFO_REPLY = 6,   /* server: text                                         */
    TIRPC_MSG_HAS_MODEL = 7,    /* client: sha256                                       */
    TIRPC_MSG_MODEL_STATUS = 8, /* server: sha256 + present flag                        */
    TIRPC_MSG_PUT_MODEL = 9,    /* client: sha256 + bytes                               */
    TIRPC_MSG_RUN = 10,         /* client: the run request                              */
    TIRPC_MSG_RESULT = 11,      /* server: the run result                               */
    TIRPC_MSG_BYE = 12,         /* client: end of session                               */
    TIRPC_MSG_PROGRESS = 13,    /* server, during a RUN, every second: "still running"  */
    TIRPC_MSG_CRASH_QUERY = 14, /* client: a run key: did a run with it crash a session? */
    TIRPC_MSG_CRASH_REPORT = 15,/* server: the key and the fault signal (0: none known) */
    TIRPC_MSG_COUNT
};

/* ERROR codes. */
enum {
    TIRPC_ERR_BAD_FRAME = 1,    /* bad magic, version or reserved field; truncated      */
    TIRPC_ERR_TOO_LARGE = 2,    /* length above the receiver's limit                    */
    TIRPC_ERR_AUTH = 3,         /* authentication failed                                */
    TIRPC_ERR_BAD_MESSAGE = 4,  /* a payload that does not decode                       */
    TIRPC_ERR_UNKNOWN_TYPE = 5, /* a frame type the receiver does not handle here       */
    TIRPC_ERR_NO_MODEL = 6,     /* RUN of a model the server does not hold              */
    TIRPC_ERR_HASH_MISMATCH = 7,/* PUT_MODEL bytes do not have the SHA-256 given        */
    TIRPC_ERR_STORAGE = 8,      /* the server could not store or read the model         */
    TIRPC_ERR_TIMEOUT = 9,      /* a peer stalled                                       */
    TIRPC_ERR_INTERNAL = 10,    /* out of memory and the like                           */
    TIRPC_ERR_BUSY = 11         /* too many sessions at once                            */
};

#ifdef __cplusplus
extern "C" {
#endif

/* ---- SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104) ---------------------------------- */
typedef struct tirpc_sha256 {
    uint32_t h[8];
    uint64_t bytes; /* message length so far */
    uint8_t block[64];
    size_t fill; /* bytes in block */
} tirpc_sha256;
void tirpc_sha256_init(tirpc_sha256 *s);
void tirpc_sha256_update(tirpc_sha256 *s, const void *data, size_t n);
void tirpc_sha256_final(tirpc_sha256 *s, uint8_t out[32]);
void tirpc_sha256_once(const void *data, size_t n, uint8_t out[32]);
void tirpc_hmac_sha256(const void *key, size_t key_n, const void *msg, size_t n, uint8_t out[32]);
void tirpc_hex(const uint8_t *bytes, size_t n, char *out); /* out: 2n + 1 chars */

/* ---- client API ------------------------------------------------------------------------ */
typedef struct tirpc_conn tirpc_conn;
/* All return NULL / -1 and write a reason into why[0..n) on failure. timeout_s bounds the
 * connect, the handshake and every later read: a server sends PROGRESS every second while a
 * model runs, so silence for timeout_s means the connection is lost (<= 0: 30 s). */
tirpc_conn *tirpc_dial(const char *host_port, const char *token, double timeout_s, char *why, size_t n);
tirpc_conn *tirpc_spawn(const char *command, const char *token, char *why, size_t n); /* sh -c COMMAND, its stdin/stdout */
int tirpc_listen(const char *host_port, char *why, size_t n);              /* listening fd (reverse dial) */
tirpc_conn *tirpc_accept(int listen_fd, const char *token, double timeout_s, char *why, size_t n);
void tirpc_close(tirpc_conn *c);                                            /* NULL ok; kills/waits a spawned child */
/* Per-read timeout of an open connection (tirpc_spawn starts with 60 s: ssh and adb are slow
 * to start). */
void tirpc_set_timeout(tirpc_conn *c, double timeout_s);
/* The server's name from its HELLO ("" before). */
const char *tirpc_server_name(const tirpc_conn *c);

typedef struct tirpc_tensor { char name[128]; ti_dtype dtype; int rank; int64_t shape[8]; void *data; size_t bytes; } tirpc_tensor;
typedef struct tirpc_run_req {
    const void *model; size_t model_size;   /* uploaded only when the server lacks its SHA-256 */
    ti_backend backend; int threads; int warmup; int repeat; int profile; uint64_t seed;
    const char *device;                     /* OpenCL device selector, NULL: default */
    const char *tuning;                     /* tuning text for ti_session_desc.tuning, NULL: none */
    int n_inputs; const tirpc_tensor *inputs;
    const char *model_name;                 /* name in the server's error messages, NULL: "<hex>.model" */
} tirpc_run_req;
typedef struct tirpc_node { char name[256]; char op[64]; ti_backend backend; double time_ms; int launch_retries; char tuning[256]; char *tunables; } tirpc_node;
typedef struct tirpc_run_res {
    int status; char error[1024];           /* status: ti_status of the model's failure, 0 when it ran */
    char backend[16]; char device[256]; int launch_retries;
    int n_outputs; tirpc_tensor *outputs;
    int n_times; double *times_ms;          /* wall time of each repeat */
    double median_ms, p90_ms, min_ms;
    int n_nodes; tirpc_node *nodes;         /* with profile */
    int uploaded;                           /* 1: this call uploaded the model (the server lacked it) */
    int rpc_error;                          /* the server's ERROR code when it refused the RUN, else 0 */
    int n_node_sums; double *node_sums_ms;  /* with profile: each repeat's sum of node times */
} tirpc_run_res;
/* 0: a reply came (res->status tells whether the model ran); -1: the connection is lost or
 * the reply was malformed (reconnect). */
int tirpc_run(tirpc_conn *c, const tirpc_run_req *req, tirpc_run_res *res, char *why, size_t n);
void tirpc_run_res_free(tirpc_run_res *res);
int tirpc_info(tirpc_conn *c, char **text, char *why, size_t n);            /* malloc'd text */
/* The key a server files a crashed run under: SHA-256 over a label, the model's SHA-256, the
 * backend, the device selector and the tuning text (NULL strings count as ""). */
void tirpc_run_key(const uint8_t model_sha[32], int backend, const char *device, const char *tuning,
                   uint8_t key[32]);
/* Asks whether a run with this key killed a session of the server with a fault signal
 * (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, ...). 0: answered, *signo the signal or 0 when
 * the server knows of no such crash; -1: the connection is lost; > 0: the server's ERROR code
 * (5: a server without crash records). */
int tirpc_crash_query(tirpc_conn *c, const uint8_t key[32], int *signo, char *why, size_t n);

/* ---- frames and messages (used by the tool, the tests and the fuzz target) ------------- */
/* A growable output buffer; bad is set (and stays) when an allocation failed. */
typedef struct tirpc_buf { uint8_t *p; size_t len, cap; int bad; } tirpc_buf;
void tirpc_buf_free(tirpc_buf *b);
/* Reads a 12-byte header. 0: *type and *len set; else a TIRPC_ERR_* code with why. */
int tirpc_parse_header(const uint8_t h[TIRPC_HEADER_BYTES], int *type, uint32_t *len,
                       char *why, size_t n);
/* Appends one whole frame (header + payload) to b. */
void tirpc_frame(tirpc_buf *b, int type, const void *payload, size_t n);

typedef struct tirpc_hello { uint32_t version; uint8_t nonce[32]; char name[256]; } tirpc_hello;
typedef struct tirpc_auth { uint8_t nonce[32]; uint8_t mac[32]; } tirpc_auth;
typedef struct tirpc_errmsg { uint32_t code; char message[1024]; } tirpc_errmsg;
typedef struct tirpc_put { uint8_t sha[32]; const uint8_t *data; size_t size; } tirpc_put; /* data: in the payload */
/* A decoded RUN: req's strings and inputs point into this struct and the payload. */
typedef struct tirpc_run_wire {
    uint8_t sha[32];
    tirpc_run_req req;
    char device[256];
    char model_name[256];
    char *tuning;          /* malloc'd */
    tirpc_tensor *inputs;  /* malloc'd array; data points into the payload */
} tirpc_run_wire;

/* Encoders append a payload (not a frame) to b. */
void tirpc_enc_hello(tirpc_buf *b, const tirpc_hello *m);
void tirpc_enc_auth(tirpc_buf *b, const tirpc_auth *m);
void tirpc_enc_error(tirpc_buf *b, uint32_t code, const char *message);
void tirpc_enc_text(tirpc_buf *b, const char *text);       /* INFO_REPLY */
void tirpc_enc_sha(tirpc_buf *b, const uint8_t sha[32]);   /* HAS_MODEL, AUTH_OK */
void tirpc_enc_status(tirpc_buf *b, const uint8_t sha[32], int present); /* MODEL_STATUS */
void tirpc_enc_put(tirpc_buf *b, const uint8_t sha[32], const void *data, size_t size);
void tirpc_enc_run(tirpc_buf *b, const uint8_t sha[32], const tirpc_run_req *r);
void tirpc_enc_result(tirpc_buf *b, const tirpc_run_res *r);
void tirpc_enc_crash_report(tirpc_buf *b, const uint8_t key[32], int signo); /* CRASH_REPORT */
/* Decoders: 0 on success; -1 with why on a malformed payload (nothing left allocated). */
int tirpc_dec_hello(const uint8_t *p, size_t n, tirpc_hello *m, char *why, size_t wn);
int tirpc_dec_auth(const uint8_t *p, size_t n, tirpc_auth *m, char *why, size_t wn);
int tirpc_dec_error(const uint8_t *p, size_t n, tirpc_errmsg *m, char *why, size_t wn);
int tirpc_dec_text(const uint8_t *p, size_t n, char **text, char *why, size_t wn);
int tirpc_dec_sha(const uint8_t *p, size_t n, uint8_t sha[32], char *why, size_t wn);
int tirpc_dec_status(const uint8_t *p, size_t n, uint8_t sha[32], int *present, char *why, size_t wn);
int tirpc_dec_put(const uint8_t *p, size_t n, tirpc_put *m, char *why, size_t wn);
int tirpc_dec_run(const uint8_t *p, size_t n, tirpc_run_wire *m, char *why, size_t wn);
void tirpc_run_wire_free(tirpc_run_wire *m);
int tirpc_dec_result(const uint8_t *p, size_t n, tirpc_run_res *r, char *why, size_t wn);
int tirpc_dec_crash_report(const uint8_t *p, size_t n, uint8_t key[32], int *signo, char *why, size_t wn);
/* median, p90 (nearest rank) and min of res->times_ms into res. */
void tirpc_latency_stats(tirpc_run_res *r);

/* ---- server ---------------------------------------------------------------------------- */
typedef struct tirpc_server {
    const char *token;          /* required */
    const char *cache_dir;      /* models as <hex>.model; required */
    const char *name;           /* sent in HELLO; 0: the host name */
    uint32_t max_message;       /* 0: TIRPC_MAX_MESSAGE_DEFAULT */
    double idle_timeout_s;      /* wait for the next request; 0: 600 s */
    double read_timeout_s;      /* within a frame and for AUTH; 0: 30 s */
    int fake_timing;            /* TEST HOOK: deterministic times (PROTOCOL.md, --fake-timing) */
    const char *crash_on;       /* TEST HOOK: a RUN whose tuning text holds this raises SIGSEGV */
    int crash_records;          /* 1: a fault signal during a RUN is recorded (the tool sets it;
                                 * fuzz targets and tests leave the signals to the sanitizers) */
    int max_repeat;             /* 0: TIRPC_MAX_REPEAT (the fuzz target sets a small cap) */
    int skip_auth;              /* fuzz target only: no HELLO/AUTH */
    int no_heartbeat;           /* 1: no PROGRESS thread (memory connections) */
    FILE *log;                  /* 0: silent */
    const char *log_prefix;     /* "tinyinfer-rpc serve" */
} tirpc_server;
/* Serves one session on c (handshake, then requests until BYE, EOF or an error). Returns 0
 * when it ended with BYE or EOF, 1 after a protocol error (logged, ERROR sent). */
int tirpc_serve_conn(const tirpc_server *srv, tirpc_conn *c);
/* Connections over file descriptors and memory (the server's side and the tests'). */
tirpc_conn *tirpc_conn_fds(int rfd, int wfd, int is_socket, double timeout_s);
tirpc_conn *tirpc_conn_memory(const uint8_t *in, size_t n, tirpc_buf *out); /* out may be NULL */
/* The device description INFO replies with (malloc'd). */
char *tirpc_info_text(const tirpc_server *srv);

#ifdef __cplusplus
}
#endif
#endif /* TI_RPC_H */

/* ======================================================================================== */
#if defined(TI_RPC_IMPLEMENTATION) && !defined(TI_RPC_IMPLEMENTATION_DONE)
#define TI_RPC_IMPLEMENTATION_DONE

#include "tests/harness/testdir.h"
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef _WIN32
/* Winsock: untested here (no Windows CI); the POSIX branches are the tested ones. */
#include <winsock2.h>
#include <ws2tcpip.h>
#include <windows.h>
#include <io.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <direct.h>
#include <process.h>
typedef SOCKET tirpc__sock;
#define TIRPC__BADSOCK INVALID_SOCKET
#define tirpc__closesock closesocket
#define tirpc__poll WSAPoll
#define tirpc__sockerr() WSAGetLastError()
#define TIRPC__CAN_POLL(c) ((c)->is_socket) /* WSAPoll takes sockets only: pipes block */
/* RtlGenRandom, exported by advapi32 as SystemFunction036 */
BOOLEAN NTAPI SystemFunction036(PVOID buffer, ULONG length);
#else
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
typedef int tirpc__sock;
#define TIRPC__BADSOCK (-1)
#define tirpc__closesock close
#define tirpc__poll poll
#define tirpc__sockerr() errno
#define TIRPC__CAN_POLL(c) 1
#endif

#if defined(__GNUC__) || defined(__clang__)
#define TIRPC__PRIVATE static __attribute__((unused))
#else
#define TIRPC__PRIVATE static
#endif

#define TIRPC__MAX_STR (1u << 20) /* a name or message string; text and tuning use the payload bound */

TIRPC__PRIVATE void tirpc__why(char *why, size_t n, const char *fmt, ...)
{
    va_list ap;
    if (!why || n == 0) return;
    va_start(ap, fmt);
    vsnprintf(why, n, fmt, ap);
    va_end(ap);
}

TIRPC__PRIVATE double tirpc__now(void)
{
#ifdef _WIN32
    LARGE_INTEGER count, freq;
    QueryPerformanceCounter(&count);
    QueryPerformanceFrequency(&freq);
    return freq.QuadPart > 0 ? (double)count.QuadPart / (double)freq.QuadPart : 0.0;
#else
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
#endif
}

/* ---- SHA-256: FIPS 180-4 section 6.2 ------------------------------------------------------ */
static const uint32_t tirpc__k[64] = { /* 4.2.2: cube roots of the first 64 primes */
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

#define TIRPC__ROTR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

void tirpc_sha256_init(tirpc_sha256 *s)
{
    static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19}; /* 5.3.3 */
    memcpy(s->h, h0, sizeof(h0));
    s->bytes = 0;
    s->fill = 0;
}

static void tirpc__sha256_block(uint32_t h[8], const uint8_t *p)
{
    uint32_t w[64];
    for (int t = 0; t < 16; t++)
        w[t] = (uint32_t)p[4 * t] << 24 | (uint32_t)p[4 * t + 1] << 16 | (uint32_t)p[4 * t + 2] << 8 |
               (uint32_t)p[4 * t + 3];
    for (int t = 16; t < 64; t++) {
        uint32_t s0 = TIRPC__ROTR(w[t - 15], 7) ^ TIRPC__ROTR(w[t - 15], 18) ^ (w[t - 15] >> 3);
        uint32_t s1 = TIRPC__ROTR(w[t - 2], 17) ^ TIRPC__ROTR(w[t - 2], 19) ^ (w[t - 2] >> 10);
        w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
    for (int t = 0; t < 64; t++) {
        uint32_t S1 = TIRPC__ROTR(e, 6) ^ TIRPC__ROTR(e, 11) ^ TIRPC__ROTR(e, 25);
        uint32_t ch = (e & f) ^ (~e & g);
        uint32_t t1 = hh + S1 + ch + tirpc__k[t] + w[t];
        uint32_t S0 = TIRPC__ROTR(a, 2) ^ TIRPC__ROTR(a, 13) ^ TIRPC__ROTR(a, 22);
        uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
        uint32_t t2 = S0 + maj;
        hh = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
    }
    h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += hh;
}

void tirpc_sha256_update(tirpc_sha256 *s, const void *data, size_t n)
{
    const uint8_t *p = (const uint8_t *)data;
    s->bytes += n;
    while (n > 0) {
        if (s->fill == 0 && n >= 64) { /* whole blocks straight from the input */
            tirpc__sha256_block(s->h, p);
            p += 64, n -= 64;
            continue;
        }
        size_t take = 64 - s->fill < n ? 64 - s->fill : n;
        memcpy(s->block + s->fill, p, take);
        s->fill += take, p += take, n -= take;
        if (s->fill == 64) {
            tirpc__sha256_block(s->h, s->block);
            s->fill = 0;
        }
    }
}

void tirpc_sha256_final(tirpc_sha256 *s, uint8_t out[32])
{
    uint64_t bits = s->bytes * 8; /* 5.1.1: 1 bit, zeros, 64-bit big-endian length */
    uint8_t pad[72];
    size_t np = (s->fill < 56 ? 56 - s->fill : 120 - s->fill);
    memset(pad, 0, sizeof(pad));
    pad[0] = 0x80;
    for (int i = 0; i < 8; i++) pad[np + (size_t)i] = (uint8_t)(bits >> (56 - 8 * i));
    uint64_t keep = s->bytes;
    tirpc_sha256_update(s, pad, np + 8);
    s->bytes = keep;
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (uint8_t)(s->h[i] >> 24);
        out[4 * i + 1] = (uint8_t)(s->h[i] >> 16);
        out[4 * i + 2] = (uint8_t)(s->h[i] >> 8);
        out[4 * i + 3] = (uint8_t)s->h[i];
    }
}

void tirpc_sha256_once(const void *data, size_t n, uint8_t out[32])
{
    tirpc_sha256 s;
    tirpc_sha256_init(&s);
    tirpc_sha256_update(&s, data, n);
    tirpc_sha256_final(&s, out);
}

/* RFC 2104: H(K ^ opad || H(K ^ ipad || text)), keys longer than the block hashed first */
void tirpc_hmac_sha256(const void *key, size_t key_n, const void *msg, size_t n, uint8_t out[32])
{
    uint8_t k[64], pad[64], inner[32];
    memset(k, 0, sizeof(k));
    if (key_n > 64)
        tirpc_sha256_once(key, key_n, k);
    else if (key_n)
        memcpy(k, key, key_n);
    tirpc_sha256 s;
    for (int i = 0; i < 64; i++) pad[i] = (uint8_t)(k[i] ^ 0x36);
    tirpc_sha256_init(&s);
    tirpc_sha256_update(&s, pad, 64);
    tirpc_sha256_update(&s, msg, n);
    tirpc_sha256_final(&s, inner);
    for (int i = 0; i < 64; i++) pad[i] = (uint8_t)(k[i] ^ 0x5c);
    tirpc_sha256_init(&s);
    tirpc_sha256_update(&s, pad, 64);
    tirpc_sha256_update(&s, inner, 32);
    tirpc_sha256_final(&s, out);
}

void tirpc_hex(const uint8_t *bytes, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[bytes[i] >> 4];
        out[2 * i + 1] = digits[bytes[i] & 15];
    }
    out[2 * n] = 0;
}

/* constant time: the time does not depend on where the MACs differ */
TIRPC__PRIVATE int tirpc__same32(const uint8_t *a, const uint8_t *b)
{
    unsigned d = 0;
    for (int i = 0; i < 32; i++) d |= (unsigned)(a[i] ^ b[i]);
    return d == 0;
}

TIRPC__PRIVATE int tirpc__random(uint8_t *out, size_t n)
{
#ifdef _WIN32
    return SystemFunction036(out, (ULONG)n) ? 0 : -1;
#else
    int fd = open("/dev/urandom", O_RDONLY);
    if (fd < 0) return -1;
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, out + got, n - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += (size_t)r;
    }
    close(fd);
    return got == n ? 0 : -1;
#endif
}

/* mac = HMAC(token, label || first || second): label "tirp-client" (client nonce after the
 * server's) or "tirp-server" (the nonces swapped), so neither proof can be replayed as the
 * other. */
TIRPC__PRIVATE void tirpc__proof(const char *token, const char *label, const uint8_t *first,
                                 const uint8_t *second, uint8_t mac[32])
{
    uint8_t msg[11 + 64];
    memcpy(msg, label, 11);
    memcpy(msg + 11, first, 32);
    memcpy(msg + 43, second, 32);
    tirpc_hmac_sha256(token, strlen(token), msg, sizeof(msg), mac);
}

/* ---- writer and cursor ---------------------------------------------------------------- */
void tirpc_buf_free(tirpc_buf *b)
{
    if (!b) return;
    free(b->p);
    memset(b, 0, sizeof(*b));
}

TIRPC__PRIVATE void tirpc__put(tirpc_buf *b, const void *d, size_t n)
{
    if (b->bad || n == 0) return;
    if (n > SIZE_MAX / 2 - b->len) {
        b->bad = 1;
        return;
    }
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n) cap *= 2;
        uint8_t *p = (uint8_t *)realloc(b->p, cap);
        if (!p) {
            b->bad = 1;
            return;
        }
        b->p = p, b->cap = cap;
    }
    memcpy(b->p + b->len, d, n);
    b->len += n;
}

TIRPC__PRIVATE void tirpc__u8(tirpc_buf *b, unsigned v)
{
    uint8_t x = (uint8_t)v;
    tirpc__put(b, &x, 1);
}
TIRPC__PRIVATE void tirpc__u16(tirpc_buf *b, unsigned v)
{
    uint8_t x[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
    tirpc__put(b, x, 2);
}
TIRPC__PRIVATE void tirpc__u32(tirpc_buf *b, uint32_t v)
{
    uint8_t x[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    tirpc__put(b, x, 4);
}
TIRPC__PRIVATE void tirpc__u64(tirpc_buf *b, uint64_t v)
{
    tirpc__u32(b, (uint32_t)v);
    tirpc__u32(b, (uint32_t)(v >> 32));
}
TIRPC__PRIVATE void tirpc__f64(tirpc_buf *b, double v)
{
    uint64_t u;
    memcpy(&u, &v, 8);
    tirpc__u64(b, u);
}
/* u32 length + bytes; strings longer than the bound are cut (names are bounded fields) */
TIRPC__PRIVATE void tirpc__str(tirpc_buf *b, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n > TIRPC__MAX_STR) n = TIRPC__MAX_STR;
    tirpc__u32(b, (uint32_t)n);
    tirpc__put(b, s, n);
}
TIRPC__PRIVATE void tirpc__longstr(tirpc_buf *b, const char *s) /* text, tuning: any length */
{
    size_t n = s ? strlen(s) : 0;
    if (n > UINT32_MAX) {
        b->bad = 1;
        return;
    }
    tirpc__u32(b, (uint32_t)n);
    tirpc__put(b, s, n);
}

typedef struct tirpc__cur { const uint8_t *p, *end; int bad; } tirpc__cur;

TIRPC__PRIVATE const uint8_t *tirpc__take(tirpc__cur *c, size_t n)
{
    if (c->bad || (size_t)(c->end - c->p) < n) {
        c->bad = 1;
        return NULL;
    }
    const uint8_t *p = c->p;
    c->p += n;
    return p;
}
TIRPC__PRIVATE unsigned tirpc__r8(tirpc__cur *c)
{
    const uint8_t *p = tirpc__take(c, 1);
    return p ? p[0] : 0;
}
TIRPC__PRIVATE uint32_t tirpc__r32(tirpc__cur *c)
{
    const uint8_t *p = tirpc__take(c, 4);
    return p ? (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24 : 0;
}
TIRPC__PRIVATE uint64_t tirpc__r64(tirpc__cur *c)
{
    uint64_t lo = tirpc__r32(c);
    return lo | (uint64_t)tirpc__r32(c) << 32;
}
TIRPC__PRIVATE double tirpc__rf64(tirpc__cur *c)
{
    uint64_t u = tirpc__r64(c);
    double v;
    memcpy(&v, &u, 8);
    return v;
}
/* a string into a fixed buffer: the bytes must be in the payload; longer ones are cut,
 * embedded NULs end the string */
TIRPC__PRIVATE void tirpc__rstr(tirpc__cur *c, char *out, size_t cap)
{
    uint32_t n = tirpc__r32(c);
    const uint8_t *p = tirpc__take(c, n);
    out[0] = 0;
    if (!p) return;
    size_t k = n < cap - 1 ? n : cap - 1;
    memcpy(out, p, k);
    out[k] = 0;
}
/* a string of any length (bounded by the payload), malloc'd; NULL with c->bad on failure */
TIRPC__PRIVATE char *tirpc__rlongstr(tirpc__cur *c)
{
    uint32_t n = tirpc__r32(c);
    const uint8_t *p = tirpc__take(c, n);
    if (!p) return NULL;
    char *s = (char *)malloc((size_t)n + 1);
    if (!s) {
        c->bad = 1;
        return NULL;
    }
    memcpy(s, p, n);
    s[n] = 0;
    return s;
}

/* ---- frames ---------------------------------------------------------------------------- */
int tirpc_parse_header(const uint8_t h[TIRPC_HEADER_BYTES], int *type, uint32_t *len, char *why,
                       size_t n)
{
    *type = 0, *len = 0;
    if (memcmp(h, "TIRP", 4) != 0) {
        tirpc__why(why, n, "bad magic %02x %02x %02x %02x (expected \"TIRP\")", h[0], h[1], h[2], h[3]);
        return TIRPC_ERR_BAD_FRAME;
    }
    if (h[4] != TIRPC_VERSION) {
        tirpc__why(why, n, "protocol version %u, this side speaks %u", h[4], TIRPC_VERSION);
        return TIRPC_ERR_BAD_FRAME;
    }
    if (h[6] != 0 || h[7] != 0) {
        tirpc__why(why, n, "reserved header field is %u, not 0", (unsigned)h[6] | (unsigned)h[7] << 8);
        return TIRPC_ERR_BAD_FRAME;
    }
    *type = h[5];
    *len = (uint32_t)h[8] | (uint32_t)h[9] << 8 | (uint32_t)h[10] << 16 | (uint32_t)h[11] << 24;
    return 0;
}

void tirpc_frame(tirpc_buf *b, int type, const void *payload, size_t n)
{
    if (n > UINT32_MAX) {
        b->bad = 1;
        return;
    }
    tirpc__put(b, "TIRP", 4);
    tirpc__u8(b, TIRPC_VERSION);
    tirpc__u8(b, (unsigned)type);
    tirpc__u16(b, 0);
    tirpc__u32(b, (uint32_t)n);
    tirpc__put(b, payload, n);
}

/* ---- message codecs -------------------------------------------------------------------- */
void tirpc_enc_hello(tirpc_buf *b, const tirpc_hello *m)
{
    tirpc__u32(b, m->version);
    tirpc__put(b, m->nonce, 32);
    tirpc__str(b, m->name);
}
void tirpc_enc_auth(tirpc_buf *b, const tirpc_auth *m)
{
    tirpc__put(b, m->nonce, 32);
    tirpc__put(b, m->mac, 32);
}
void tirpc_enc_error(tirpc_buf *b, uint32_t code, const char *message)
{
    tirpc__u32(b, code);
    tirpc__str(b, message);
}
void tirpc_enc_text(tirpc_buf *b, const char *text) { tirpc__longstr(b, text); }
void tirpc_enc_sha(tirpc_buf *b, const uint8_t sha[32]) { tirpc__put(b, sha, 32); }
void tirpc_enc_status(tirpc_buf *b, const uint8_t sha[32], int present)
{
    tirpc__put(b, sha, 32);
    tirpc__u8(b, present ? 1u : 0u);
}
void tirpc_enc_put(tirpc_buf *b, const uint8_t sha[32], const void *data, size_t size)
{
    tirpc__put(b, sha, 32);
    tirpc__u64(b, (uint64_t)size);
    tirpc__put(b, data, size);
}

/* tensor: str name, u8 dtype, u8 rank, rank x i64 dims, u64 bytes, bytes */
TIRPC__PRIVATE void tirpc__tensor(tirpc_buf *b, const tirpc_tensor *t)
{
    int rank = t->rank < 0 ? 0 : t->rank > 8 ? 8 : t->rank;
    tirpc__str(b, t->name);
    tirpc__u8(b, (unsigned)t->dtype);
    tirpc__u8(b, (unsigned)rank);
    for (int d = 0; d < rank; d++) tirpc__u64(b, (uint64_t)t->shape[d]);
    tirpc__u64(b, (uint64_t)t->bytes);
    tirpc__put(b, t->data, t->bytes);
}

/* Reads a tensor; data points into the payload. Checks dtype, rank, dims and that the byte
 * count is numel * element size (overflow-checked). */
TIRPC__PRIVATE int tirpc__rtensor(tirpc__cur *c, tirpc_tensor *t, char *why, size_t wn)
{
    memset(t, 0, sizeof(*t));
    tirpc__rstr(c, t->name, sizeof(t->name));
    unsigned dt = tirpc__r8(c), rank = tirpc__r8(c);
    if (c->bad) goto truncated;
    if (dt == TI_DTYPE_UNKNOWN || dt >= TI_DTYPE_COUNT || dt == TI_DTYPE_STRING) {
        tirpc__why(why, wn, "tensor '%s': dtype %u cannot be sent", t->name, dt);
        return -1;
    }
    if (rank > 8) {
        tirpc__why(why, wn, "tensor '%s': rank %u (at most 8)", t->name, rank);
        return -1;
    }
    t->dtype = (ti_dtype)dt;
    t->rank = (int)rank;
    uint64_t numel = 1;
    for (unsigned d = 0; d < rank; d++) {
        uint64_t v = tirpc__r64(c);
        if (c->bad) goto truncated;
        if (v > (uint64_t)INT64_MAX / 2) {
            tirpc__why(why, wn, "tensor '%s': dim %u is %llu", t->name, d, (unsigned long long)v);
            return -1;
        }
        t->shape[d] = (int64_t)v;
        if (v != 0 && numel > UINT64_MAX / v) {
            tirpc__why(why, wn, "tensor '%s': element count overflows", t->name);
            return -1;
        }
        numel *= v;
    }
    uint64_t bytes = tirpc__r64(c);
    if (c->bad) goto truncated;
    size_t es = ti_dtype_size(t->dtype);
    if (numel > UINT64_MAX / es || numel * es != bytes) {
        tirpc__why(why, wn, "tensor '%s': %llu data bytes, its shape and dtype need %llu",
                   t->name, (unsigned long long)bytes,
                   numel > UINT64_MAX / es ? 0ull : (unsigned long long)(numel * es));
        return -1;
    }
    if (bytes > (uint64_t)(c->end - c->p)) goto truncated;
    t->bytes = (size_t)bytes;
    t->data = (void *)(uintptr_t)tirpc__take(c, t->bytes); /* borrowed from the payload */
    return 0;
truncated:
    tirpc__why(why, wn, "tensor '%s': truncated", t->name);
    c->bad = 1;
    return -1;
}

void tirpc_enc_run(tirpc_buf *b, const uint8_t sha[32], const tirpc_run_req *r)
{
    tirpc__put(b, sha, 32);
    tirpc__str(b, r->model_name);
    tirpc__u8(b, (unsigned)r->backend);
    tirpc__u32(b, (uint32_t)(r->threads < 0 ? 0 : r->threads));
    tirpc__u32(b, (uint32_t)(r->warmup < 0 ? 0 : r->warmup));
    tirpc__u32(b, (uint32_t)(r->repeat < 1 ? 1 : r->repeat));
    tirpc__u8(b, r->profile ? 1u : 0u);
    tirpc__u64(b, r->seed);
    tirpc__str(b, r->device);
    tirpc__longstr(b, r->tuning);
    int n = r->n_inputs < 0 ? 0 : r->n_inputs;
    tirpc__u32(b, (uint32_t)n);
    for (int i = 0; i < n; i++) tirpc__tensor(b, &r->inputs[i]);
}

void tirpc_run_wire_free(tirpc_run_wire *m)
{
    if (!m) return;
    free(m->tuning);
    free(m->inputs);
    memset(m, 0, sizeof(*m));
}

int tirpc_dec_run(const uint8_t *p, size_t n, tirpc_run_wire *m, char *why, size_t wn)
{
    tirpc__cur c = {p, p + n, 0};
    memset(m, 0, sizeof(*m));
    const uint8_t *sha = tirpc__take(&c, 32);
    if (sha) memcpy(m->sha, sha, 32);
    tirpc__rstr(&c, m->model_name, sizeof(m->model_name));
    unsigned backend = tirpc__r8(&c);
    uint32_t threads = tirpc__r32(&c), warmup = tirpc__r32(&c), repeat = tirpc__r32(&c);
    unsigned profile = tirpc__r8(&c);
    uint64_t seed = tirpc__r64(&c);
    tirpc__rstr(&c, m->device, sizeof(m->device));
    m->tuning = tirpc__rlongstr(&c);
    uint32_t count = tirpc__r32(&c);
    if (c.bad) {
        tirpc__why(why, wn, "RUN: truncated request");
        goto fail;
    }
    if (backend > TI_BACKEND_OPENCL || threads > 1024 || warmup > TIRPC_MAX_REPEAT ||
        repeat < 1 || repeat > TIRPC_MAX_REPEAT || profile > 1) {
        tirpc__why(why, wn, "RUN: backend %u, threads %u, warmup %u, repeat %u, profile %u out of range",
                   backend, threads, warmup, repeat, profile);
        goto fail;
    }
    /* each tensor takes at least 4 + 1 + 1 + 8 bytes: a count larger than the payload could
     * hold is refused before anything is allocated for it */
    if (count > TIRPC_MAX_TENSORS || count > (size_t)(c.end - c.p) / 14) {
        tirpc__why(why, wn, "RUN: %u inputs in a %zu-byte request", count, n);
        goto fail;
    }
    if (count) {
        m->inputs = (tirpc_tensor *)calloc(count, sizeof(tirpc_tensor));
        if (!m->inputs) {
            tirpc__why(why, wn, "RUN: out of memory");
            goto fail;
        }
    }
    for (uint32_t i = 0; i < count; i++)
        if (tirpc__rtensor(&c, &m->inputs[i], why, wn) != 0) goto fail;
    if (c.p != c.end) {
        tirpc__why(why, wn, "RUN: %zu bytes after the request", (size_t)(c.end - c.p));
        goto fail;
    }
    m->req.backend = (ti_backend)backend;
    m->req.threads = (int)threads;
    m->req.warmup = (int)warmup;
    m->req.repeat = (int)repeat;
    m->req.profile = (int)profile;
    m->req.seed = seed;
    m->req.device = m->device[0] ? m->device : NULL;
    m->req.tuning = m->tuning && m->tuning[0] ? m->tuning : NULL;
    m->req.model_name = m->model_name[0] ? m->model_name : NULL;
    m->req.n_inputs = (int)count;
    m->req.inputs = m->inputs;
    return 0;
fail:
    tirpc_run_wire_free(m);
    return -1;
}

/* RESULT: i32 status, str error, str backend, str device, i32 launch_retries, u32 n_outputs +
 * tensors, u32 n_times + f64 each, u32 n_nodes + nodes (str name, str op, u8 backend,
 * f64 time_ms, i32 launch_retries, str tuning, str tunables) */
void tirpc_enc_result(tirpc_buf *b, const tirpc_run_res *r)
{
    tirpc__u32(b, (uint32_t)r->status);
    tirpc__str(b, r->error);
    tirpc__str(b, r->backend);
    tirpc__str(b, r->device);
    tirpc__u32(b, (uint32_t)r->launch_retries);
    tirpc__u32(b, (uint32_t)(r->n_outputs > 0 ? r->n_outputs : 0));
    for (int i = 0; i < r->n_outputs; i++) tirpc__tensor(b, &r->outputs[i]);
    tirpc__u32(b, (uint32_t)(r->n_times > 0 ? r->n_times : 0));
    for (int i = 0; i < r->n_times; i++) tirpc__f64(b, r->times_ms[i]);
    tirpc__u32(b, (uint32_t)(r->n_nodes > 0 ? r->n_nodes : 0));
    for (int i = 0; i < r->n_nodes; i++) {
        const tirpc_node *nd = &r->nodes[i];
        tirpc__str(b, nd->name);
        tirpc__str(b, nd->op);
        tirpc__u8(b, (unsigned)nd->backend);
        tirpc__f64(b, nd->time_ms);
        tirpc__u32(b, (uint32_t)nd->launch_retries);
        tirpc__str(b, nd->tuning);
        tirpc__longstr(b, nd->tunables);
    }
    tirpc__u32(b, (uint32_t)(r->n_node_sums > 0 ? r->n_node_sums : 0));
    for (int i = 0; i < r->n_node_sums; i++) tirpc__f64(b, r->node_sums_ms[i]);
}

void tirpc_run_res_free(tirpc_run_res *r)
{
    if (!r) return;
    for (int i = 0; r->outputs && i < r->n_outputs; i++) free(r->outputs[i].data);
    for (int i = 0; r->nodes && i < r->n_nodes; i++) free(r->nodes[i].tunables);
    free(r->outputs);
    free(r->times_ms);
    free(r->nodes);
    free(r->node_sums_ms);
    memset(r, 0, sizeof(*r));
}

static int tirpc__cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void tirpc_latency_stats(tirpc_run_res *r)
{
    r->median_ms = r->p90_ms = r->min_ms = 0;
    if (r->n_times <= 0 || !r->times_ms) return;
    double *s = (double *)malloc((size_t)r->n_times * sizeof(double));
    if (!s) return;
    memcpy(s, r->times_ms, (size_t)r->n_times * sizeof(double));
    qsort(s, (size_t)r->n_times, sizeof(double), tirpc__cmp_double);
    int n = r->n_times;
    r->median_ms = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
    int k = (int)((9 * (long)n + 9) / 10); /* nearest rank: ceil(0.9 n) */
    r->p90_ms = s[(k < 1 ? 1 : k) - 1];
    r->min_ms = s[0];
    free(s);
}

int tirpc_dec_result(const uint8_t *p, size_t n, tirpc_run_res *r, char *why, size_t wn)
{
    tirpc__cur c = {p, p + n, 0};
    memset(r, 0, sizeof(*r));
    r->status = (int)tirpc__r32(&c);
    tirpc__rstr(&c, r->error, sizeof(r->error));
    tirpc__rstr(&c, r->backend, sizeof(r->backend));
    tirpc__rstr(&c, r->device, sizeof(r->device));
    r->launch_retries = (int)tirpc__r32(&c);
    uint32_t count = tirpc__r32(&c);
    if (c.bad) goto truncated;
    if (r->status < 0 || r->status >= TI_STATUS_COUNT) {
        tirpc__why(why, wn, "RESULT: status %d is not a ti_status", r->status);
        goto fail;
    }
    if (count > TIRPC_MAX_TENSORS || count > (size_t)(c.end - c.p) / 14) {
        tirpc__why(why, wn, "RESULT: %u outputs in a %zu-byte reply", count, n);
        goto fail;
    }
    if (count) {
        r->outputs = (tirpc_tensor *)calloc(count, sizeof(tirpc_tensor));
        if (!r->outputs) goto oom;
    }
    for (uint32_t i = 0; i < count; i++) {
        tirpc_tensor t;
        if (tirpc__rtensor(&c, &t, why, wn) != 0) goto fail;
        void *copy = malloc(t.bytes ? t.bytes : 1);
        if (!copy) goto oom;
        if (t.bytes) memcpy(copy, t.data, t.bytes);
        t.data = copy;
        r->outputs[i] = t;
        r->n_outputs = (int)i + 1;
    }
    uint32_t nt = tirpc__r32(&c);
    if (c.bad) goto truncated;
    if (nt > TIRPC_MAX_REPEAT || nt > (size_t)(c.end - c.p) / 8) {
        tirpc__why(why, wn, "RESULT: %u times in a %zu-byte reply", nt, n);
        goto fail;
    }
    if (nt) {
        r->times_ms = (double *)malloc(nt * sizeof(double));
        if (!r->times_ms) goto oom;
    }
    for (uint32_t i = 0; i < nt; i++) r->times_ms[i] = tirpc__rf64(&c);
    r->n_times = (int)nt;
    uint32_t nn = tirpc__r32(&c);
    if (c.bad) goto truncated;
    /* a node takes at least 4 + 4 + 1 + 8 + 4 + 4 + 4 bytes */
    if (nn > (size_t)(c.end - c.p) / 29) {
        tirpc__why(why, wn, "RESULT: %u nodes in a %zu-byte reply", nn, n);
        goto fail;
    }
    if (nn) {
        r->nodes = (tirpc_node *)calloc(nn, sizeof(tirpc_node));
        if (!r->nodes) goto oom;
    }
    for (uint32_t i = 0; i < nn; i++) {
        tirpc_node *nd = &r->nodes[i];
        r->n_nodes = (int)i + 1;
        tirpc__rstr(&c, nd->name, sizeof(nd->name));
        tirpc__rstr(&c, nd->op, sizeof(nd->op));
        unsigned be = tirpc__r8(&c);
        nd->backend = be <= TI_BACKEND_OPENCL ? (ti_backend)be : TI_BACKEND_CPU;
        nd->time_ms = tirpc__rf64(&c);
        nd->launch_retries = (int)tirpc__r32(&c);
        tirpc__rstr(&c, nd->tuning, sizeof(nd->tuning));
        nd->tunables = tirpc__rlongstr(&c);
        if (c.bad) goto truncated;
    }
    uint32_t ns = tirpc__r32(&c);
    if (c.bad) goto truncated;
    if (ns > TIRPC_MAX_REPEAT || ns > (size_t)(c.end - c.p) / 8) {
        tirpc__why(why, wn, "RESULT: %u node sums in a %zu-byte reply", ns, n);
        goto fail;
    }
    if (ns) {
        r->node_sums_ms = (double *)malloc(ns * sizeof(double));
        if (!r->node_sums_ms) goto oom;
    }
    for (uint32_t i = 0; i < ns; i++) r->node_sums_ms[i] = tirpc__rf64(&c);
    r->n_node_sums = (int)ns;
    if (c.p != c.end) {
        tirpc__why(why, wn, "RESULT: %zu bytes after the reply", (size_t)(c.end - c.p));
        goto fail;
    }
    tirpc_latency_stats(r);
    return 0;
truncated:
    tirpc__why(why, wn, "RESULT: truncated reply");
    goto fail;
oom:
    tirpc__why(why, wn, "RESULT: out of memory");
fail:
    tirpc_run_res_free(r);
    return -1;
}

int tirpc_dec_hello(const uint8_t *p, size_t n, tirpc_hello *m, char *why, size_t wn)
{
    tirpc__cur c = {p, p + n, 0};
    memset(m, 0, sizeof(*m));
    m->version = tirpc__r32(&c);
    const uint8_t *nonce = tirpc__take(&c, 32);
    if (nonce) memcpy(m->nonce, nonce, 32);
    tirpc__rstr(&c, m->name, sizeof(m->name));
    if (c.bad || c.p != c.end) {
        tirpc__why(why, wn, "HELLO: %zu bytes do not make a HELLO", n);
        return -1;
    }
    return 0;
}

int tirpc_dec_auth(const uint8_t *p, size_t n, tirpc_auth *m, char *why, size_t wn)
{
    if (n != 64) {
        tirpc__why(why, wn, "AUTH: %zu bytes, expected 64", n);
        return -1;
    }
    memcpy(m->nonce, p, 32);
    memcpy(m->mac, p + 32, 32);
    return 0;
}

int tirpc_dec_error(const uint8_t *p, size_t n, tirpc_errmsg *m, char *why, size_t wn)
{
    tirpc__cur c = {p, p + n, 0};
    memset(m, 0, sizeof(*m));
    m->code = tirpc__r32(&c);
    tirpc__rstr(&c, m->message, sizeof(m->message));
    if (c.bad || c.p != c.end) {
        tirpc__why(why, wn, "ERROR: %zu bytes do not make an ERROR", n);
        return -1;
    }
    return 0;
}

int tirpc_dec_text(const uint8_t *p, size_t n, char **text, char *why, size_t wn)
{
    tirpc__cur c = {p, p + n, 0};
    *text = tirpc__rlongstr(&c);
    if (c.bad || c.p != c.end) {
        free(*text);
        *text = NULL;
        tirpc__why(why, wn, "text: %zu bytes do not make a text reply", n);
        return -1;
    }
    return 0;
}

int tirpc_dec_sha(const uint8_t *p, size_t n, uint8_t sha[32], char *why, size_t wn)
{
    if (n != 32) {
        tirpc__why(why, wn, "%zu bytes where a SHA-256 (32) was expected", n);
        return -1;
    }
    memcpy(sha, p, 32);
    return 0;
}

int tirpc_dec_status(const uint8_t *p, size_t n, uint8_t sha[32], int *present, char *why, size_t wn)
{
    if (n != 33 || p[32] > 1) {
        tirpc__why(why, wn, "MODEL_STATUS: %zu bytes, expected 33 ending in 0 or 1", n);
        return -1;
    }
    memcpy(sha, p, 32);
    *present = p[32];
    return 0;
}

void tirpc_enc_crash_report(tirpc_buf *b, const uint8_t key[32], int signo)
{
    tirpc__put(b, key, 32);
    tirpc__u32(b, (uint32_t)signo);
}

int tirpc_dec_crash_report(const uint8_t *p, size_t n, uint8_t key[32], int *signo, char *why, size_t wn)
{
    if (n != 36) {
        tirpc__why(why, wn, "CRASH_REPORT: %zu bytes, expected 36", n);
        return -1;
    }
    memcpy(key, p, 32);
    uint32_t v = (uint32_t)p[32] | (uint32_t)p[33] << 8 | (uint32_t)p[34] << 16 | (uint32_t)p[35] << 24;
    if (v > 255) {
        tirpc__why(why, wn, "CRASH_REPORT: signal %u is out of range", v);
        return -1;
    }
    *signo = (int)v;
    return 0;
}

int tirpc_dec_put(const uint8_t *p, size_t n, tirpc_put *m, char *why, size_t wn)
{
    tirpc__cur c = {p, p + n, 0};
    memset(m, 0, sizeof(*m));
    const uint8_t *sha = tirpc__take(&c, 32);
    uint64_t size = tirpc__r64(&c);
    if (c.bad || size != (uint64_t)(c.end - c.p)) {
        tirpc__why(why, wn, "PUT_MODEL: %zu-byte message does not hold the %llu model bytes it announces",
                   n, (unsigned long long)size);
        return -1;
    }
    memcpy(m->sha, sha, 32);
    m->size = (size_t)size;
    m->data = c.p;
    return 0;
}

/* ---- connections --------------------------------------------------------------------- */
struct tirpc_conn {
    tirpc__sock rfd, wfd; /* the same socket, or a pipe pair / stdin+stdout */
    int is_socket;
    double timeout_s;   /* per read; <= 0: none */
    uint32_t max_in;    /* largest payload read */
    long pid;           /* spawned child (0: none) */
    const uint8_t *mem; /* memory connection (the fuzz target): input bytes */
    size_t mem_n, mem_pos;
    int is_mem;
    int no_bye;         /* the server's side: closing sends no BYE */
    tirpc_buf *mem_out;
    char server[256];   /* from HELLO */
#ifndef _WIN32
    pthread_mutex_t wlock; /* the RUN heartbeat thread writes too */
#endif
};

TIRPC__PRIVATE tirpc_conn *tirpc__conn_new(void)
{
    tirpc_conn *c = (tirpc_conn *)calloc(1, sizeof(tirpc_conn));
    if (!c) return NULL;
    c->rfd = c->wfd = TIRPC__BADSOCK;
    c->timeout_s = 30;
    c->max_in = TIRPC_CLIENT_MAX_MESSAGE;
#ifndef _WIN32
    pthread_mutex_init(&c->wlock, NULL);
#endif
    return c;
}

tirpc_conn *tirpc_conn_fds(int rfd, int wfd, int is_socket, double timeout_s)
{
    tirpc_conn *c = tirpc__conn_new();
    if (!c) return NULL;
    c->rfd = (tirpc__sock)rfd, c->wfd = (tirpc__sock)wfd;
    c->is_socket = is_socket;
    c->timeout_s = timeout_s;
    c->no_bye = 1;
    return c;
}

tirpc_conn *tirpc_conn_memory(const uint8_t *in, size_t n, tirpc_buf *out)
{
    tirpc_conn *c = tirpc__conn_new();
    if (!c) return NULL;
    c->is_mem = 1;
    c->mem = in, c->mem_n = n;
    c->mem_out = out;
    return c;
}

void tirpc_set_timeout(tirpc_conn *c, double timeout_s)
{
    if (c) c->timeout_s = timeout_s;
}

const char *tirpc_server_name(const tirpc_conn *c) { return c ? c->server : ""; }

/* waits until fd is readable (events POLLIN) or writable; 0 ok, -1 timeout/error */
TIRPC__PRIVATE int tirpc__wait(tirpc__sock fd, int for_write, double timeout_s)
{
    for (;;) {
        struct pollfd pf;
        pf.fd = fd;
        pf.events = (short)(for_write ? POLLOUT : POLLIN);
        pf.revents = 0;
        int ms = timeout_s > 0 ? (timeout_s > 2e6 ? 2000000000 : (int)(timeout_s * 1000.0)) : -1;
        int r = tirpc__poll(&pf, 1, ms);
        if (r > 0) return 0;
        if (r == 0) return -1;
#ifndef _WIN32
        if (errno == EINTR) continue;
#endif
        return -1;
    }
}

/* Reads exactly n bytes. 0 ok; -2 EOF before the first byte; -1 error/timeout/EOF inside. */
TIRPC__PRIVATE int tirpc__read(tirpc_conn *c, void *buf, size_t n, double timeout_s, char *why, size_t wn)
{
    uint8_t *p = (uint8_t *)buf;
    size_t got = 0;
    if (c->is_mem) {
        if (c->mem_pos == c->mem_n && n) return -2;
        size_t have = c->mem_n - c->mem_pos;
        if (have < n) {
            c->mem_pos = c->mem_n;
            tirpc__why(why, wn, "connection closed after %zu of %zu bytes", have, n);
            return -1;
        }
        memcpy(p, c->mem + c->mem_pos, n);
        c->mem_pos += n;
        return 0;
    }
    while (got < n) {
        if (TIRPC__CAN_POLL(c) && tirpc__wait(c->rfd, 0, timeout_s) != 0) {
            tirpc__why(why, wn, "no data for %.0f s (after %zu of %zu bytes): timed out", timeout_s, got, n);
            return -1;
        }
        long r;
#ifdef _WIN32
        r = c->is_socket ? recv(c->rfd, (char *)p + got, (int)(n - got > 65536 ? 65536 : n - got), 0)
                         : _read((int)c->rfd, p + got, (unsigned)(n - got > 65536 ? 65536 : n - got));
#else
        r = c->is_socket ? (long)recv(c->rfd, p + got, n - got, 0) : (long)read(c->rfd, p + got, n - got);
        if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
#endif
        if (r == 0 && got == 0) {
            tirpc__why(why, wn, "connection closed by the peer");
            return -2;
        }
        if (r <= 0) {
            tirpc__why(why, wn, r == 0 ? "connection closed after %zu of %zu bytes"
                                       : "read failed after %zu of %zu bytes: %s",
                       got, n, strerror(tirpc__sockerr()));
            return -1;
        }
        got += (size_t)r;
    }
    return 0;
}

TIRPC__PRIVATE int tirpc__write(tirpc_conn *c, const void *buf, size_t n, char *why, size_t wn)
{
    const uint8_t *p = (const uint8_t *)buf;
    size_t done = 0;
    if (c->is_mem) {
        if (c->mem_out) tirpc__put(c->mem_out, buf, n);
        return 0;
    }
    while (done < n) {
        double t = c->timeout_s > 0 ? c->timeout_s : 30;
        if (TIRPC__CAN_POLL(c) && tirpc__wait(c->wfd, 1, t) != 0) {
            tirpc__why(why, wn, "the peer took no data for %.0f s: timed out", t);
            return -1;
        }
        long r;
        size_t chunk = n - done > (1u << 20) ? (1u << 20) : n - done;
#ifdef _WIN32
        r = c->is_socket ? send(c->wfd, (const char *)p + done, (int)chunk, 0)
                         : _write((int)c->wfd, p + done, (unsigned)chunk);
#else
        r = c->is_socket ? (long)send(c->wfd, p + done, chunk, MSG_NOSIGNAL) : (long)write(c->wfd, p + done, chunk);
        if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
#endif
        if (r <= 0) {
            tirpc__why(why, wn, "write failed: %s", strerror(tirpc__sockerr()));
            return -1;
        }
        done += (size_t)r;
    }
    return 0;
}

/* Sends one frame. 0 ok, -1 with why. */
TIRPC__PRIVATE int tirpc__send(tirpc_conn *c, int type, const tirpc_buf *payload, char *why, size_t wn)
{
    tirpc_buf f = {0, 0, 0, 0};
    if (payload && payload->bad) {
        tirpc__why(why, wn, "out of memory encoding a message");
        return -1;
    }
    tirpc_frame(&f, type, payload ? payload->p : NULL, payload ? payload->len : 0);
    if (f.bad) {
        tirpc_buf_free(&f);
        tirpc__why(why, wn, "out of memory encoding a message");
        return -1;
    }
#ifndef _WIN32
    pthread_mutex_lock(&c->wlock);
#endif
    int rc = tirpc__write(c, f.p, f.len, why, wn);
#ifndef _WIN32
    pthread_mutex_unlock(&c->wlock);
#endif
    tirpc_buf_free(&f);
    return rc;
}

/* Receives one frame into *payload (malloc'd, NULL when empty). Returns 0, -2 on EOF before
 * a frame, -1 on I/O failure, or a TIRPC_ERR_* code (> 0) for a bad header or a length over
 * max: then the payload is not read. first_timeout_s bounds the wait for the header's first
 * byte (the idle time), the connection's timeout every later read. */
TIRPC__PRIVATE int tirpc__recv(tirpc_conn *c, int *type, uint8_t **payload, size_t *len,
                               uint32_t max, double first_timeout_s, char *why, size_t wn)
{
    uint8_t h[TIRPC_HEADER_BYTES];
    uint32_t n;
    *payload = NULL, *len = 0, *type = 0;
    int rc = tirpc__read(c, h, 1, first_timeout_s, why, wn);
    if (rc != 0) return rc;
    rc = tirpc__read(c, h + 1, sizeof(h) - 1, c->timeout_s, why, wn);
    if (rc != 0) return -1;
    rc = tirpc_parse_header(h, type, &n, why, wn);
    if (rc != 0) return rc;
    if (n > max) {
        tirpc__why(why, wn, "message type %d of %lu bytes is over the limit of %lu bytes", *type,
                   (unsigned long)n, (unsigned long)max);
        return TIRPC_ERR_TOO_LARGE;
    }
    if (n == 0) return 0;
    uint8_t *p = (uint8_t *)malloc(n);
    if (!p) {
        tirpc__why(why, wn, "out of memory for a %lu-byte message", (unsigned long)n);
        return TIRPC_ERR_INTERNAL;
    }
    rc = tirpc__read(c, p, n, c->timeout_s, why, wn);
    if (rc != 0) {
        free(p);
        if (rc == -2) tirpc__why(why, wn, "connection closed inside a %lu-byte message", (unsigned long)n);
        return -1;
    }
    *payload = p, *len = n;
    return 0;
}

TIRPC__PRIVATE int tirpc__send_error(tirpc_conn *c, uint32_t code, const char *msg)
{
    tirpc_buf b = {0, 0, 0, 0};
    char why[64];
    tirpc_enc_error(&b, code, msg);
    int rc = tirpc__send(c, TIRPC_MSG_ERROR, &b, why, sizeof(why));
    tirpc_buf_free(&b);
    return rc;
}

/* After refusing a frame: stop sending, then read and drop what the peer still sends for up
 * to 2 s (64 MiB at most), so that a client in the middle of writing a large frame finishes
 * and reads the ERROR instead of meeting a reset connection. */
TIRPC__PRIVATE void tirpc__linger(tirpc_conn *c)
{
    if (c->is_mem || !c->is_socket) return;
#ifdef _WIN32
    shutdown(c->wfd, SD_SEND);
#else
    shutdown(c->wfd, SHUT_WR);
#endif
    double t0 = tirpc__now();
    size_t dropped = 0;
    char buf[16384];
    while (dropped < (64u << 20)) {
        double left = 2.0 - (tirpc__now() - t0);
        if (left <= 0 || tirpc__wait(c->rfd, 0, left) != 0) break;
        long r = (long)recv(c->rfd, buf, sizeof(buf), 0);
        if (r <= 0) break;
        dropped += (size_t)r;
    }
}

/* ---- client side ------------------------------------------------------------------------ */
/* reads the next frame that is not PROGRESS */
TIRPC__PRIVATE int tirpc__recv_reply(tirpc_conn *c, int *type, uint8_t **p, size_t *n, char *why, size_t wn)
{
    for (;;) {
        int rc = tirpc__recv(c, type, p, n, c->max_in, c->timeout_s, why, wn);
        if (rc == -2) tirpc__why(why, wn, "the server closed the connection");
        if (rc != 0) return -1;
        if (*type != TIRPC_MSG_PROGRESS) return 0;
        free(*p);
        *p = NULL;
    }
}

/* formats an ERROR payload as why; returns its code (0 if it does not decode) */
TIRPC__PRIVATE int tirpc__error_reply(const uint8_t *p, size_t n, char *why, size_t wn)
{
    tirpc_errmsg e;
    if (tirpc_dec_error(p, n, &e, why, wn) != 0) return 0;
    tirpc__why(why, wn, "server: %s", e.message);
    return (int)e.code ? (int)e.code : TIRPC_ERR_INTERNAL;
}

TIRPC__PRIVATE int tirpc__client_handshake(tirpc_conn *c, const char *token, char *why, size_t wn)
{
    int type;
    uint8_t *p;
    size_t n;
    if (!token || !token[0]) {
        tirpc__why(why, wn, "no token (--token, --token-file or TINYINFER_RPC_TOKEN)");
        return -1;
    }
    if (tirpc__recv_reply(c, &type, &p, &n, why, wn) != 0) return -1;
    tirpc_hello h;
    if (type == TIRPC_MSG_ERROR) {
        tirpc__error_reply(p, n, why, wn);
        free(p);
        return -1;
    }
    if (type != TIRPC_MSG_HELLO || tirpc_dec_hello(p, n, &h, why, wn) != 0) {
        if (type != TIRPC_MSG_HELLO) tirpc__why(why, wn, "expected HELLO, got message type %d", type);
        free(p);
        return -1;
    }
    free(p);
    if (h.version != TIRPC_VERSION) {
        tirpc__why(why, wn, "server speaks protocol %u, this client %u", h.version, TIRPC_VERSION);
        return -1;
    }
    snprintf(c->server, sizeof(c->server), "%s", h.name);
    tirpc_auth a;
    if (tirpc__random(a.nonce, 32) != 0) {
        tirpc__why(why, wn, "no random bytes for the nonce");
        return -1;
    }
    tirpc__proof(token, "tirp-client", h.nonce, a.nonce, a.mac);
    tirpc_buf b = {0, 0, 0, 0};
    tirpc_enc_auth(&b, &a);
    int rc = tirpc__send(c, TIRPC_MSG_AUTH, &b, why, wn);
    tirpc_buf_free(&b);
    if (rc != 0) return -1;
    if (tirpc__recv_reply(c, &type, &p, &n, why, wn) != 0) return -1;
    uint8_t mac[32], want[32];
    if (type == TIRPC_MSG_ERROR) {
        tirpc__error_reply(p, n, why, wn);
        free(p);
        return -1;
    }
    if (type != TIRPC_MSG_AUTH_OK || tirpc_dec_sha(p, n, mac, why, wn) != 0) {
        if (type != TIRPC_MSG_AUTH_OK) tirpc__why(why, wn, "expected AUTH_OK, got message type %d", type);
        free(p);
        return -1;
    }
    free(p);
    tirpc__proof(token, "tirp-server", a.nonce, h.nonce, want);
    if (!tirpc__same32(mac, want)) {
        tirpc__why(why, wn, "the server's proof is wrong: it does not know the token");
        return -1;
    }
    return 0;
}

#ifdef _WIN32
TIRPC__PRIVATE int tirpc__wsa(void)
{
    static int done;
    WSADATA d;
    if (!done && WSAStartup(MAKEWORD(2, 2), &d) != 0) return -1;
    done = 1;
    return 0;
}
#else
TIRPC__PRIVATE int tirpc__wsa(void) { return 0; }
#endif

/* "host:port", "[v6]:port", ":port" or "port" into host (empty: any/localhost) and port */
TIRPC__PRIVATE int tirpc__split(const char *hp, char *host, size_t hn, char *port, size_t pn)
{
    const char *colon;
    host[0] = port[0] = 0;
    if (!hp) return -1;
    if (hp[0] == '[') {
        const char *end = strchr(hp, ']');
        if (!end || end[1] != ':') return -1;
        snprintf(host, hn, "%.*s", (int)(end - hp - 1), hp + 1);
        snprintf(port, pn, "%s", end + 2);
    } else if ((colon = strrchr(hp, ':')) != NULL) {
        snprintf(host, hn, "%.*s", (int)(colon - hp), hp);
        snprintf(port, pn, "%s", colon + 1);
    } else {
        snprintf(port, pn, "%s", hp);
    }
    if (!port[0]) return -1;
    for (const char *q = port; *q; q++)
        if (*q < '0' || *q > '9') return -1;
    return 0;
}

TIRPC__PRIVATE void tirpc__sock_opts(tirpc__sock s)
{
    int one = 1;
    setsockopt(s, IPPROTO_TCP, TCP_NODELAY, (const char *)&one, sizeof(one));
    setsockopt(s, SOL_SOCKET, SO_KEEPALIVE, (const char *)&one, sizeof(one));
}

/* A connected TCP socket, or TIRPC__BADSOCK with why. */
TIRPC__PRIVATE tirpc__sock tirpc__connect(const char *host_port, double timeout_s, char *why, size_t wn)
{
    char host[256], port[16];
    if (tirpc__wsa() != 0 || tirpc__split(host_port, host, sizeof(host), port, sizeof(port)) != 0) {
        tirpc__why(why, wn, "'%s' is not HOST:PORT", host_port ? host_port : "");
        return TIRPC__BADSOCK;
    }
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int e = getaddrinfo(host[0] ? host : "localhost", port, &hints, &res);
    if (e != 0) {
        tirpc__why(why, wn, "%s: %s", host_port, gai_strerror(e));
        return TIRPC__BADSOCK;
    }
    tirpc__sock s = TIRPC__BADSOCK;
    tirpc__why(why, wn, "%s: no address", host_port);
    for (struct addrinfo *a = res; a; a = a->ai_next) {
        s = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
        if (s == TIRPC__BADSOCK) continue;
#ifdef _WIN32
        u_long nb = 1;
        ioctlsocket(s, FIONBIO, &nb);
#else
        int fl = fcntl(s, F_GETFL, 0);
        fcntl(s, F_SETFL, fl | O_NONBLOCK);
#endif
        int r = connect(s, a->ai_addr, (int)a->ai_addrlen);
        int err = 0;
        if (r != 0) {
#ifdef _WIN32
            int pending = WSAGetLastError() == WSAEWOULDBLOCK;
#else
            int pending = errno == EINPROGRESS;
#endif
            err = tirpc__sockerr();
            if (pending) {
                if (tirpc__wait(s, 1, timeout_s) != 0) {
                    err = ETIMEDOUT;
                } else {
                    socklen_t len = sizeof(err);
                    getsockopt(s, SOL_SOCKET, SO_ERROR, (char *)&err, &len);
                }
            }
        }
        if (err == 0) {
#ifdef _WIN32
            nb = 0;
            ioctlsocket(s, FIONBIO, &nb);
#else
            fcntl(s, F_SETFL, fl);
#endif
            tirpc__sock_opts(s);
            break;
        }
        tirpc__why(why, wn, "connect to %s: %s", host_port, err == ETIMEDOUT ? "timed out" : strerror(err));
        tirpc__closesock(s);
        s = TIRPC__BADSOCK;
    }
    freeaddrinfo(res);
    return s;
}

tirpc_conn *tirpc_dial(const char *host_port, const char *token, double timeout_s, char *why, size_t n)
{
    if (timeout_s <= 0) timeout_s = 30;
    tirpc__sock s = tirpc__connect(host_port, timeout_s, why, n);
    if (s == TIRPC__BADSOCK) return NULL;
    tirpc_conn *c = tirpc__conn_new();
    if (!c) {
        tirpc__closesock(s);
        tirpc__why(why, n, "out of memory");
        return NULL;
    }
    c->rfd = c->wfd = s;
    c->is_socket = 1;
    c->timeout_s = timeout_s;
    if (tirpc__client_handshake(c, token, why, n) != 0) {
        tirpc_close(c);
        return NULL;
    }
    return c;
}

tirpc_conn *tirpc_spawn(const char *command, const char *token, char *why, size_t n)
{
#ifdef _WIN32
    (void)command, (void)token;
    tirpc__why(why, n, "--via is not supported on Windows yet");
    return NULL;
#else
    int to_child[2], from_child[2];
    if (!command || !command[0]) {
        tirpc__why(why, n, "no command to spawn");
        return NULL;
    }
    if (pipe(to_child) != 0) {
        tirpc__why(why, n, "pipe: %s", strerror(errno));
        return NULL;
    }
    if (pipe(from_child) != 0) {
        tirpc__why(why, n, "pipe: %s", strerror(errno));
        close(to_child[0]), close(to_child[1]);
        return NULL;
    }
    /* a child that exits makes our next write fail with EPIPE instead of killing us */
    struct sigaction sa;
    if (sigaction(SIGPIPE, NULL, &sa) == 0 && sa.sa_handler == SIG_DFL) {
        sa.sa_handler = SIG_IGN;
        sigaction(SIGPIPE, &sa, NULL);
    }
    pid_t pid = fork();
    if (pid < 0) {
        tirpc__why(why, n, "fork: %s", strerror(errno));
        close(to_child[0]), close(to_child[1]), close(from_child[0]), close(from_child[1]);
        return NULL;
    }
    if (pid == 0) {
        dup2(to_child[0], 0);
        dup2(from_child[1], 1);
        close(to_child[0]), close(to_child[1]), close(from_child[0]), close(from_child[1]);
        execl("/bin/sh", "sh", "-c", command, (char *)NULL);
        _exit(127);
    }
    close(to_child[0]);
    close(from_child[1]);
    fcntl(to_child[1], F_SETFD, FD_CLOEXEC);
    fcntl(from_child[0], F_SETFD, FD_CLOEXEC);
    tirpc_conn *c = tirpc__conn_new();
    if (!c) {
        close(to_child[1]), close(from_child[0]);
        kill(pid, SIGTERM);
        waitpid(pid, NULL, 0);
        tirpc__why(why, n, "out of memory");
        return NULL;
    }
    c->rfd = from_child[0], c->wfd = to_child[1];
    c->pid = (long)pid;
    c->timeout_s = 60;
    if (tirpc__client_handshake(c, token, why, n) != 0) {
        size_t k = strlen(why);
        int st = 0;
        if (waitpid(pid, &st, WNOHANG) == pid) { /* say how the command ended, if it did */
            c->pid = 0;
            if (WIFEXITED(st))
                tirpc__why(why + k, n - k, " (the command exited with status %d)", WEXITSTATUS(st));
        }
        tirpc_close(c);
        return NULL;
    }
    return c;
#endif
}

int tirpc_listen(const char *host_port, char *why, size_t n)
{
    char host[256], port[16];
    if (tirpc__wsa() != 0 || tirpc__split(host_port, host, sizeof(host), port, sizeof(port)) != 0) {
        tirpc__why(why, n, "'%s' is not PORT or HOST:PORT", host_port ? host_port : "");
        return -1;
    }
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = host[0] ? AF_UNSPEC : AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    int e = getaddrinfo(host[0] ? host : NULL, port, &hints, &res);
    if (e != 0) {
        tirpc__why(why, n, "%s: %s", host_port, gai_strerror(e));
        return -1;
    }
    tirpc__sock s = TIRPC__BADSOCK;
    tirpc__why(why, n, "%s: no address to listen on", host_port);
    for (struct addrinfo *a = res; a; a = a->ai_next) {
        s = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
        if (s == TIRPC__BADSOCK) continue;
        int one = 1;
        setsockopt(s, SOL_SOCKET, SO_REUSEADDR, (const char *)&one, sizeof(one));
        if (bind(s, a->ai_addr, (int)a->ai_addrlen) == 0 && listen(s, 16) == 0) break;
        tirpc__why(why, n, "listen on %s: %s", host_port, strerror(tirpc__sockerr()));
        tirpc__closesock(s);
        s = TIRPC__BADSOCK;
    }
    freeaddrinfo(res);
#ifndef _WIN32
    if (s != TIRPC__BADSOCK) fcntl(s, F_SETFD, FD_CLOEXEC);
#endif
    return s == TIRPC__BADSOCK ? -1 : (int)s;
}

tirpc_conn *tirpc_accept(int listen_fd, const char *token, double timeout_s, char *why, size_t n)
{
    if (timeout_s <= 0) timeout_s = 30;
    if (tirpc__wait((tirpc__sock)listen_fd, 0, timeout_s) != 0) {
        tirpc__why(why, n, "no server dialled in within %.0f s", timeout_s);
        return NULL;
    }
    tirpc__sock s = accept((tirpc__sock)listen_fd, NULL, NULL);
    if (s == TIRPC__BADSOCK) {
        tirpc__why(why, n, "accept: %s", strerror(tirpc__sockerr()));
        return NULL;
    }
    tirpc__sock_opts(s);
    tirpc_conn *c = tirpc__conn_new();
    if (!c) {
        tirpc__closesock(s);
        tirpc__why(why, n, "out of memory");
        return NULL;
    }
    c->rfd = c->wfd = s;
    c->is_socket = 1;
    c->timeout_s = timeout_s;
    if (tirpc__client_handshake(c, token, why, n) != 0) {
        tirpc_close(c);
        return NULL;
    }
    return c;
}

void tirpc_close(tirpc_conn *c)
{
    if (!c) return;
    if (!c->is_mem && !c->no_bye && c->wfd != TIRPC__BADSOCK) {
        /* BYE, best effort and without waiting long: the peer may be gone */
        char why[32];
        double keep = c->timeout_s;
        c->timeout_s = 1;
        tirpc__send(c, TIRPC_MSG_BYE, NULL, why, sizeof(why));
        c->timeout_s = keep;
    }
    if (!c->is_mem) {
        if (c->rfd != TIRPC__BADSOCK) tirpc__closesock(c->rfd);
        if (c->wfd != TIRPC__BADSOCK && c->wfd != c->rfd) tirpc__closesock(c->wfd);
    }
#ifndef _WIN32
    if (c->pid > 0) { /* the command should end once its stdin closes; else it is ended */
        pid_t pid = (pid_t)c->pid;
        int st;
        double t0 = tirpc__now();
        while (waitpid(pid, &st, WNOHANG) == 0) {
            if (tirpc__now() - t0 > 2.0) {
                kill(pid, SIGTERM);
                if (tirpc__now() - t0 > 4.0) kill(pid, SIGKILL);
            }
            struct timespec ts = {0, 20 * 1000 * 1000};
            nanosleep(&ts, NULL);
            if (tirpc__now() - t0 > 6.0) break;
        }
    }
    pthread_mutex_destroy(&c->wlock);
#endif
    free(c);
}

int tirpc_info(tirpc_conn *c, char **text, char *why, size_t n)
{
    int type;
    uint8_t *p;
    size_t len;
    *text = NULL;
    if (!c) {
        tirpc__why(why, n, "no connection");
        return -1;
    }
    if (tirpc__send(c, TIRPC_MSG_INFO, NULL, why, n) != 0) return -1;
    if (tirpc__recv_reply(c, &type, &p, &len, why, n) != 0) return -1;
    int rc = -1;
    if (type == TIRPC_MSG_INFO_REPLY)
        rc = tirpc_dec_text(p, len, text, why, n);
    else if (type == TIRPC_MSG_ERROR)
        tirpc__error_reply(p, len, why, n);
    else
        tirpc__why(why, n, "expected INFO_REPLY, got message type %d", type);
    free(p);
    return rc;
}

void tirpc_run_key(const uint8_t model_sha[32], int backend, const char *device, const char *tuning,
                   uint8_t key[32])
{
    tirpc_sha256 h;
    uint8_t be = (uint8_t)backend, zero = 0;
    tirpc_sha256_init(&h);
    tirpc_sha256_update(&h, "tirp-run-key", 12);
    tirpc_sha256_update(&h, model_sha, 32);
    tirpc_sha256_update(&h, &be, 1);
    if (device) tirpc_sha256_update(&h, device, strlen(device));
    tirpc_sha256_update(&h, &zero, 1); /* the device ends here: no two splits hash alike */
    if (tuning) tirpc_sha256_update(&h, tuning, strlen(tuning));
    tirpc_sha256_final(&h, key);
}

int tirpc_crash_query(tirpc_conn *c, const uint8_t key[32], int *signo, char *why, size_t n)
{
    int type;
    uint8_t *p;
    size_t len;
    *signo = 0;
    if (!c) {
        tirpc__why(why, n, "no connection");
        return -1;
    }
    tirpc_buf b = {0, 0, 0, 0};
    tirpc_enc_sha(&b, key);
    int rc = b.bad ? -1 : tirpc__send(c, TIRPC_MSG_CRASH_QUERY, &b, why, n);
    tirpc_buf_free(&b);
    if (rc != 0) return -1;
    if (tirpc__recv_reply(c, &type, &p, &len, why, n) != 0) return -1;
    rc = -1;
    if (type == TIRPC_MSG_CRASH_REPORT) {
        uint8_t got[32];
        if (tirpc_dec_crash_report(p, len, got, signo, why, n) == 0) {
            if (tirpc__same32(got, key)) rc = 0;
            else tirpc__why(why, n, "CRASH_REPORT for another run key");
        }
    } else if (type == TIRPC_MSG_ERROR) {
        rc = tirpc__error_reply(p, len, why, n);
        if (rc == 0) rc = -1; /* an ERROR that does not decode */
    } else {
        tirpc__why(why, n, "expected CRASH_REPORT, got message type %d", type);
    }
    free(p);
    return rc;
}

/* HAS_MODEL, then PUT_MODEL when the server lacks it. 0 ok (*uploaded set), -1 lost, > 0 an
 * ERROR code from the server (why says it). */
TIRPC__PRIVATE int tirpc__ensure_model(tirpc_conn *c, const uint8_t sha[32], const void *model,
                                       size_t size, int force, int *uploaded, char *why, size_t n)
{
    int type, present = 0;
    uint8_t *p, got[32];
    size_t len;
    tirpc_buf b = {0, 0, 0, 0};
    if (!force) {
        tirpc_enc_sha(&b, sha);
        int rc = tirpc__send(c, TIRPC_MSG_HAS_MODEL, &b, why, n);
        tirpc_buf_free(&b);
        if (rc != 0 || tirpc__recv_reply(c, &type, &p, &len, why, n) != 0) return -1;
        if (type == TIRPC_MSG_ERROR) {
            rc = tirpc__error_reply(p, len, why, n);
            free(p);
            return rc ? rc : -1;
        }
        rc = type == TIRPC_MSG_MODEL_STATUS ? tirpc_dec_status(p, len, got, &present, why, n) : -1;
        free(p);
        if (rc != 0 || memcmp(got, sha, 32) != 0) {
            if (type != TIRPC_MSG_MODEL_STATUS) tirpc__why(why, n, "expected MODEL_STATUS, got type %d", type);
            return -1;
        }
        if (present) return 0;
    }
    tirpc_enc_put(&b, sha, model, size);
    int rc = tirpc__send(c, TIRPC_MSG_PUT_MODEL, &b, why, n);
    tirpc_buf_free(&b);
    if (rc != 0) { /* the server may have refused it (too large) before the write failed */
        char keep[256];
        snprintf(keep, sizeof(keep), "%s", why);
        if (tirpc__recv(c, &type, &p, &len, 1u << 16, 2.0, why, n) == 0 && type == TIRPC_MSG_ERROR) {
            rc = tirpc__error_reply(p, len, why, n);
            free(p);
            return rc ? rc : -1;
        }
        free(p);
        tirpc__why(why, n, "%s", keep);
        return -1;
    }
    if (tirpc__recv_reply(c, &type, &p, &len, why, n) != 0) return -1;
    if (type == TIRPC_MSG_ERROR) {
        rc = tirpc__error_reply(p, len, why, n);
        free(p);
        return rc ? rc : -1;
    }
    rc = type == TIRPC_MSG_MODEL_STATUS ? tirpc_dec_status(p, len, got, &present, why, n) : -1;
    free(p);
    if (rc != 0 || !present || memcmp(got, sha, 32) != 0) {
        if (rc == 0) tirpc__why(why, n, "the server did not store the model");
        return -1;
    }
    *uploaded = 1;
    return 0;
}

int tirpc_run(tirpc_conn *c, const tirpc_run_req *req, tirpc_run_res *res, char *why, size_t n)
{
    uint8_t sha[32];
    memset(res, 0, sizeof(*res));
    if (!c || !req || !req->model || req->model_size == 0) {
        tirpc__why(why, n, "tirpc_run: no connection or no model");
        return -1;
    }
    tirpc_sha256_once(req->model, req->model_size, sha);
    int uploaded = 0;
    for (int attempt = 0; attempt < 2; attempt++) {
        int rc = tirpc__ensure_model(c, sha, req->model, req->model_size, attempt > 0, &uploaded, why, n);
        if (rc < 0) return -1;
        if (rc > 0) { /* the server refused the model: a reply, not a lost connection */
            res->status = TI_ERR_INVALID_ARGUMENT;
            res->rpc_error = rc;
            snprintf(res->error, sizeof(res->error), "%s", why);
            res->uploaded = uploaded;
            return 0;
        }
        tirpc_buf b = {0, 0, 0, 0};
        tirpc_enc_run(&b, sha, req);
        rc = tirpc__send(c, TIRPC_MSG_RUN, &b, why, n);
        tirpc_buf_free(&b);
        int type;
        uint8_t *p;
        size_t len;
        if (rc != 0 || tirpc__recv_reply(c, &type, &p, &len, why, n) != 0) return -1;
        if (type == TIRPC_MSG_RESULT) {
            rc = tirpc_dec_result(p, len, res, why, n);
            free(p);
            res->uploaded = uploaded;
            return rc;
        }
        if (type != TIRPC_MSG_ERROR) {
            free(p);
            tirpc__why(why, n, "expected RESULT, got message type %d", type);
            return -1;
        }
        rc = tirpc__error_reply(p, len, why, n);
        free(p);
        if (rc == TIRPC_ERR_NO_MODEL && attempt == 0) continue; /* its cached copy went bad */
        res->status = TI_ERR_INVALID_ARGUMENT;
        res->rpc_error = rc ? rc : TIRPC_ERR_BAD_MESSAGE;
        snprintf(res->error, sizeof(res->error), "%s", why);
        res->uploaded = uploaded;
        return 0;
    }
    return -1;
}

/* ---- server side ------------------------------------------------------------------------ */
#define TIRPC__LOG(srv, ...) tirpc__log(srv, __VA_ARGS__)
TIRPC__PRIVATE void tirpc__log(const tirpc_server *srv, const char *fmt, ...)
{
    va_list ap;
    if (!srv->log) return;
    fprintf(srv->log, "%s[%ld]: ", srv->log_prefix ? srv->log_prefix : "tinyinfer-rpc",
#ifdef _WIN32
            (long)_getpid()
#else
            (long)getpid()
#endif
    );
    va_start(ap, fmt);
    vfprintf(srv->log, fmt, ap);
    va_end(ap);
    fputc('\n', srv->log);
    fflush(srv->log);
}

TIRPC__PRIVATE void tirpc__model_path(const tirpc_server *srv, const uint8_t sha[32], char *out, size_t n)
{
    char hex[65];
    tirpc_hex(sha, 32, hex);
    snprintf(out, n, "%s/%s.model", srv->cache_dir, hex);
}

/* mkdir -p */
TIRPC__PRIVATE int tirpc__mkdirs(const char *dir)
{
    char tmp[1024];
    if (snprintf(tmp, sizeof(tmp), "%s", dir) >= (int)sizeof(tmp)) return -1;
    for (char *q = tmp + 1; *q; q++) {
        if (*q != '/') continue;
        *q = 0;
#ifdef _WIN32
        _mkdir(tmp);
#else
        mkdir(tmp, 0700);
#endif
        *q = '/';
    }
#ifdef _WIN32
    return _mkdir(tmp) == 0 || errno == EEXIST ? 0 : -1;
#else
    return mkdir(tmp, 0700) == 0 || errno == EEXIST ? 0 : -1;
#endif
}

/* ---- crash records --------------------------------------------------------------------
 * While a RUN executes, a fault signal (the model, the library or the driver crashing the
 * session) first appends "<run key hex> <signal>" to <cache>/crashes.log, then kills the
 * process with the default action as before. A later session answers CRASH_QUERY from that
 * file, so a tuner can tell a candidate that crashed the server from a server killed from
 * outside (SIGKILL, SIGTERM, power: no record, the run is simply lost). The handler only
 * calls write(), signal()/sigaction() and raise(): async-signal-safe. The file is cut to
 * nothing when it passes 1 MiB (old records are then forgotten). */
#define TIRPC__CRASH_LOG "crashes.log"
#define TIRPC__CRASH_LOG_MAX (1 << 20)
static int tirpc__crash_fd = -1;
static char tirpc__crash_line[80]; /* "<64 hex> " */
#ifdef _WIN32
static const int tirpc__fault_sigs[] = {SIGSEGV, SIGILL, SIGFPE, SIGABRT};
static void (*tirpc__fault_old[4])(int);
#else
static const int tirpc__fault_sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGSYS, SIGTRAP};
static struct sigaction tirpc__fault_old[7];
#endif
#define TIRPC__N_FAULT_SIGS ((int)(sizeof(tirpc__fault_sigs) / sizeof(tirpc__fault_sigs[0])))

static void tirpc__on_fault(int sig)
{
    char b[96];
    size_t n = 0;
    while (tirpc__crash_line[n] && n < 70) b[n] = tirpc__crash_line[n], n++;
    char d[4];
    int nd = 0, v = sig > 0 && sig < 1000 ? sig : 0;
    do d[nd++] = (char)('0' + v % 10), v /= 10; while (v && nd < 3);
    while (nd) b[n++] = d[--nd];
    b[n++] = '\n';
    if (tirpc__crash_fd >= 0) {
#ifdef _WIN32
        (void)!_write(tirpc__crash_fd, b, (unsigned)n);
#else
        (void)!write(tirpc__crash_fd, b, n);
#endif
    }
    signal(sig, SIG_DFL); /* then die of it, as without the record */
    raise(sig);
}

TIRPC__PRIVATE void tirpc__crash_path(const tirpc_server *srv, char *out, size_t n)
{
    snprintf(out, n, "%s/%s", srv->cache_dir, TIRPC__CRASH_LOG);
}

/* Records key as the running RUN until tirpc__crash_disarm. Best effort: without the file
 * the server still serves; the client then sees a lost session and no record. */
TIRPC__PRIVATE void tirpc__crash_arm(const tirpc_server *srv, const uint8_t key[32])
{
    char path[1200];
    tirpc__crash_path(srv, path, sizeof(path));
#ifdef _WIN32
    int fd = _open(path, _O_WRONLY | _O_APPEND | _O_CREAT | _O_BINARY, _S_IREAD | _S_IWRITE);
#else
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
#endif
    if (fd < 0) return;
    struct stat st;
    if (fstat(fd, &st) == 0 && st.st_size > TIRPC__CRASH_LOG_MAX) {
#ifdef _WIN32
        (void)!_chsize(fd, 0);
#else
        (void)!ftruncate(fd, 0);
#endif
    }
    tirpc_hex(key, 32, tirpc__crash_line);
    tirpc__crash_line[64] = ' ', tirpc__crash_line[65] = 0;
    tirpc__crash_fd = fd;
    for (int i = 0; i < TIRPC__N_FAULT_SIGS; i++) {
#ifdef _WIN32
        tirpc__fault_old[i] = signal(tirpc__fault_sigs[i], tirpc__on_fault);
#else
        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = tirpc__on_fault;
        sa.sa_flags = (int)(SA_RESETHAND | SA_NODEFER);
        sigaction(tirpc__fault_sigs[i], &sa, &tirpc__fault_old[i]);
#endif
    }
}

TIRPC__PRIVATE void tirpc__crash_disarm(void)
{
    if (tirpc__crash_fd < 0) return;
    for (int i = 0; i < TIRPC__N_FAULT_SIGS; i++) {
#ifdef _WIN32
        signal(tirpc__fault_sigs[i], tirpc__fault_old[i]);
#else
        sigaction(tirpc__fault_sigs[i], &tirpc__fault_old[i], NULL);
#endif
    }
#ifdef _WIN32
    _close(tirpc__crash_fd);
#else
    close(tirpc__crash_fd);
#endif
    tirpc__crash_fd = -1;
}

/* The signal a recorded crash of this run key died of (the latest record), 0 when none. */
TIRPC__PRIVATE int tirpc__crash_lookup(const tirpc_server *srv, const uint8_t key[32])
{
    char path[1200], hex[65], line[128];
    tirpc__crash_path(srv, path, sizeof(path));
    tirpc_hex(key, 32, hex);
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    int sig = 0;
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, hex, 64) != 0 || line[64] != ' ') continue;
        int v = atoi(line + 65);
        if (v > 0 && v < 256) sig = v;
    }
    fclose(f);
    return sig;
}

TIRPC__PRIVATE int tirpc__has_model(const tirpc_server *srv, const uint8_t sha[32])
{
    char path[1200];
    struct stat st;
    tirpc__model_path(srv, sha, path, sizeof(path));
    return stat(path, &st) == 0 && st.st_size > 0;
}

/* Writes the model as <hex>.model.tmp.<pid>, flushes it, renames it into place: a reader
 * never sees a partial file. */
TIRPC__PRIVATE int tirpc__store(const tirpc_server *srv, const tirpc_put *m, char *why, size_t wn)
{
    char path[1200], tmp[1300];
    if (tirpc__mkdirs(srv->cache_dir) != 0) {
        tirpc__why(why, wn, "cannot create the cache directory %s: %s", srv->cache_dir, strerror(errno));
        return -1;
    }
    tirpc__model_path(srv, m->sha, path, sizeof(path));
#ifdef _WIN32
    snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)_getpid());
#else
    snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
#endif
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        tirpc__why(why, wn, "cannot write %s: %s", tmp, strerror(errno));
        return -1;
    }
    int ok = fwrite(m->data, 1, m->size, f) == m->size && fflush(f) == 0;
#ifndef _WIN32
    ok = ok && fsync(fileno(f)) == 0;
#endif
    ok = fclose(f) == 0 && ok;
#ifdef _WIN32
    if (ok) remove(path); /* rename does not replace on Windows */
#endif
    if (!ok || rename(tmp, path) != 0) {
        tirpc__why(why, wn, "cannot store %s: %s", path, strerror(errno));
        remove(tmp);
        return -1;
    }
    return 0;
}

/* TEST HOOK (--fake-timing): a node's time from a hash of its name and tuning setting,
 * 0.05 to 10.05 ms, so a tuner sees the same numbers on every run and machine. */
TIRPC__PRIVATE double tirpc__fake_ms(const char *name, const char *tuning)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a 64 */
    for (const char *q = name ? name : ""; *q; q++) h = (h ^ (uint8_t)*q) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull;
    for (const char *q = tuning ? tuning : ""; *q; q++) h = (h ^ (uint8_t)*q) * 1099511628211ull;
    return 0.05 + (double)(h % 10000) / 1000.0;
}

#ifndef _WIN32
/* PROGRESS frames every second while a model runs, so a client can tell a slow model from a
 * lost connection */
typedef struct tirpc__beat {
    tirpc_conn *c;
    pthread_mutex_t m;
    pthread_cond_t cv;
    int stop;
} tirpc__beat;

static void *tirpc__beat_main(void *arg)
{
    tirpc__beat *b = (tirpc__beat *)arg;
    pthread_mutex_lock(&b->m);
    while (!b->stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 1;
        pthread_cond_timedwait(&b->cv, &b->m, &ts);
        if (b->stop) break;
        pthread_mutex_unlock(&b->m);
        char why[64];
        int rc = tirpc__send(b->c, TIRPC_MSG_PROGRESS, NULL, why, sizeof(why));
        pthread_mutex_lock(&b->m);
        if (rc != 0) break;
    }
    pthread_mutex_unlock(&b->m);
    return NULL;
}
#endif

/* Fills res from one RUN; res->status/error say how the model did. Returns -1 only when
 * memory ran out building the result. */
TIRPC__PRIVATE void tirpc__execute(const tirpc_server *srv, const tirpc_run_wire *w, const uint8_t *model,
                                   size_t model_size, tirpc_run_res *res)
{
    ti_error err;
    ti_model *m = NULL;
    ti_session *s = NULL;
    double *node_ms = NULL;
    const tirpc_run_req *q = &w->req;
    int file_input[64];
    char name[300];
    memset(&err, 0, sizeof(err));
    if (q->model_name)
        snprintf(name, sizeof(name), "%s", q->model_name);
    else {
        char hex[65];
        tirpc_hex(w->sha, 32, hex);
        snprintf(name, sizeof(name), "%.16s.model", hex);
    }
#define TIRPC__FAIL(code, ...)                                                                 \
    do {                                                                                       \
        res->status = (code);                                                                  \
        snprintf(res->error, sizeof(res->error), __VA_ARGS__);                                 \
        goto done;                                                                             \
    } while (0)
    ti_model_desc md;
    memset(&md, 0, sizeof(md));
    md.name = name;
    m = ti_model_load_memory(model, model_size, &md, &err);
    if (!m) TIRPC__FAIL(err.code, "%s", err.message[0] ? err.message : ti_status_string(err.code));
    int n_in = ti_model_num_inputs(m);
    if (q->n_inputs > n_in || q->n_inputs > 64)
        TIRPC__FAIL(TI_ERR_INVALID_ARGUMENT, "%s: %d inputs given, the model has %d", name, q->n_inputs, n_in);
    /* like tinyinfer-run: an input whose name names a model input feeds it, else by position */
    for (int k = 0; k < q->n_inputs; k++) {
        int idx = k;
        for (int i = 0; q->inputs[k].name[0] && i < n_in; i++) {
            ti_value_info vi;
            if (ti_model_input_info(m, i, &vi) == TI_OK && vi.name && strcmp(vi.name, q->inputs[k].name) == 0)
                idx = i;
        }
        for (int j = 0; j < k; j++)
            if (file_input[j] == idx)
                TIRPC__FAIL(TI_ERR_INVALID_ARGUMENT, "%s: two given inputs feed input %d", name, idx);
        file_input[k] = idx;
    }
    ti_dim_binding binds[64];
    int nb = 0;
    for (int k = 0; k < q->n_inputs; k++) { /* symbolic dims from the given shapes */
        ti_value_info vi;
        if (ti_model_input_info(m, file_input[k], &vi) != TI_OK || vi.rank != q->inputs[k].rank) continue;
        for (int d = 0; d < vi.rank; d++) {
            if (!vi.dim_names[d] || !vi.dim_names[d][0] || nb == 64) continue;
            int dup = 0;
            for (int b = 0; b < nb; b++) dup |= strcmp(binds[b].name, vi.dim_names[d]) == 0;
            if (dup) continue;
            binds[nb].name = vi.dim_names[d];
            binds[nb].value = q->inputs[k].shape[d];
            nb++;
        }
    }
    ti_session_desc desc;
    memset(&desc, 0, sizeof(desc));
    desc.backend = q->backend;
    desc.num_threads = q->threads;
    desc.opencl_device = q->device;
    desc.profile = q->profile || srv->fake_timing;
    desc.dim_bindings = nb ? binds : NULL;
    desc.num_dim_bindings = nb;
    desc.tuning = q->tuning; /* NULL: the library's own choices */
    s = ti_session_create(m, &desc, &err);
    if (!s) TIRPC__FAIL(err.code, "%s", err.message[0] ? err.message : ti_status_string(err.code));
    for (int k = 0; k < q->n_inputs; k++) {
        const tirpc_tensor *f = &q->inputs[k];
        ti_tensor *t = ti_session_input(s, file_input[k]);
        if (!t) TIRPC__FAIL(TI_ERR_INVALID_ARGUMENT, "%s: the session has no input %d", name, file_input[k]);
        int same = t->rank == f->rank;
        for (int d = 0; same && d < f->rank; d++) same = t->shape[d] == f->shape[d];
        if (!same && ti_session_set_input_shape(s, file_input[k], f->rank, f->shape, &err) != TI_OK)
            TIRPC__FAIL(err.code, "%s: input '%s': %s", name, f->name, err.message);
    }
    uint64_t state = q->seed;
    int ns_in = ti_session_num_inputs(s);
    for (int i = 0; i < ns_in; i++) {
        ti_tensor *t = ti_session_input(s, i);
        if (!t) continue;
        int k = -1;
        for (int j = 0; j < q->n_inputs; j++)
            if (file_input[j] == i) k = j;
        size_t n = ti_tensor_numel(t);
        if (n && !t->data) TIRPC__FAIL(TI_ERR_INVALID_ARGUMENT, "%s: input %d has no memory", name, i);
        if (k < 0) {
            if (t->dtype == TI_DTYPE_STRING || ti_dtype_size(t->dtype) == 0)
                TIRPC__FAIL(TI_ERR_INVALID_ARGUMENT, "%s: input %d '%s' is %s: it must be given", name, i,
                            t->name ? t->name : "", ti_dtype_name(t->dtype));
            td_fill_random(t, &state);
            continue;
        }
        const tirpc_tensor *f = &q->inputs[k];
        if (f->dtype == t->dtype) {
            if (f->bytes != t->size_bytes)
                TIRPC__FAIL(TI_ERR_INVALID_ARGUMENT, "%s: input '%s' holds %zu bytes, the model wants %zu",
                            name, f->name, f->bytes, t->size_bytes);
            if (f->bytes) memcpy(t->data, f->data, f->bytes);
        } else {
            ti_tensor view;
            memset(&view, 0, sizeof(view));
            view.dtype = f->dtype, view.rank = f->rank, view.data = f->data, view.size_bytes = f->bytes;
            memcpy(view.shape, f->shape, sizeof(view.shape));
            if (ti_tensor_numel(&view) != n)
                TIRPC__FAIL(TI_ERR_INVALID_ARGUMENT, "%s: input '%s' is %s with %zu elements, the model wants %s",
                            name, f->name, ti_dtype_name(f->dtype), ti_tensor_numel(&view), ti_dtype_name(t->dtype));
            for (size_t e = 0; e < n; e++) td_set(t, e, td_get(&view, e));
        }
    }
    int max_repeat = srv->max_repeat > 0 ? srv->max_repeat : TIRPC_MAX_REPEAT;
    int repeat = q->repeat < 1 ? 1 : q->repeat > max_repeat ? max_repeat : q->repeat;
    int warmup = q->warmup > max_repeat ? max_repeat : q->warmup;
    int nn = ti_session_num_nodes(s);
    res->times_ms = (double *)calloc((size_t)repeat, sizeof(double));
    if (q->profile && nn > 0) {
        if ((size_t)nn > SIZE_MAX / sizeof(double) / (size_t)repeat)
            TIRPC__FAIL(TI_ERR_OUT_OF_MEMORY, "%s: profile of %d nodes x %d runs is too large", name, nn, repeat);
        node_ms = (double *)malloc((size_t)nn * (size_t)repeat * sizeof(double));
        res->node_sums_ms = (double *)calloc((size_t)repeat, sizeof(double));
        if (!res->node_sums_ms) TIRPC__FAIL(TI_ERR_OUT_OF_MEMORY, "%s: out of memory for %d runs' times", name, repeat);
        res->n_node_sums = repeat;
    }
    if (!res->times_ms || (q->profile && nn > 0 && !node_ms))
        TIRPC__FAIL(TI_ERR_OUT_OF_MEMORY, "%s: out of memory for %d runs' times", name, repeat);
    for (int r = 0; r < warmup; r++)
        if (ti_session_run(s, &err) != TI_OK)
            TIRPC__FAIL(err.code, "%s", err.message[0] ? err.message : ti_status_string(err.code));
    for (int r = 0; r < repeat; r++) {
        double t0 = tirpc__now();
        if (ti_session_run(s, &err) != TI_OK)
            TIRPC__FAIL(err.code, "%s", err.message[0] ? err.message : ti_status_string(err.code));
        res->times_ms[r] = (tirpc__now() - t0) * 1e3;
        double fake_sum = 0;
        for (int i = 0; i < nn && (node_ms || srv->fake_timing); i++) {
            ti_node_info ni;
            double ms = 0;
            if (ti_session_node_info(s, i, &ni) == TI_OK) {
                ms = srv->fake_timing ? tirpc__fake_ms(ni.name, ni.tuning)
                                      : ni.time_ms > 0 ? ni.time_ms : 0;
            }
            fake_sum += ms;
            if (node_ms) node_ms[(size_t)i * (size_t)repeat + (size_t)r] = ms;
        }
        if (srv->fake_timing) res->times_ms[r] = fake_sum;
        if (res->node_sums_ms) res->node_sums_ms[r] = fake_sum;
    }
    res->n_times = repeat;
    ti_session_info info;
    if (ti_session_get_info(s, &info) == TI_OK) {
        snprintf(res->backend, sizeof(res->backend), "%s", info.backend == TI_BACKEND_OPENCL ? "opencl" : "cpu");
        snprintf(res->device, sizeof(res->device), "%s", info.device ? info.device : "");
        res->launch_retries = info.launch_retries;
    }
    int n_out = ti_session_num_outputs(s);
    if (n_out > TIRPC_MAX_TENSORS) n_out = TIRPC_MAX_TENSORS;
    if (n_out > 0) {
        res->outputs = (tirpc_tensor *)calloc((size_t)n_out, sizeof(tirpc_tensor));
        if (!res->outputs) TIRPC__FAIL(TI_ERR_OUT_OF_MEMORY, "%s: out of memory for the outputs", name);
    }
    for (int i = 0; i < n_out; i++) {
        const ti_tensor *t = ti_session_output(s, i);
        tirpc_tensor *o = &res->outputs[i];
        res->n_outputs = i + 1;
        if (!t) continue;
        snprintf(o->name, sizeof(o->name), "%s", t->name ? t->name : "");
        o->dtype = t->dtype;
        o->rank = t->rank > 8 ? 8 : t->rank;
        memcpy(o->shape, t->shape, sizeof(int64_t) * (size_t)o->rank);
        if (t->dtype == TI_DTYPE_STRING || ti_dtype_size(t->dtype) == 0 || (!t->data && t->size_bytes)) {
            o->dtype = TI_DTYPE_U8; /* values that cannot be sent: an empty tensor */
            o->rank = 1, o->shape[0] = 0;
            continue;
        }
        o->data = malloc(t->size_bytes ? t->size_bytes : 1);
        if (!o->data) TIRPC__FAIL(TI_ERR_OUT_OF_MEMORY, "%s: out of memory for output %d", name, i);
        if (t->size_bytes) memcpy(o->data, t->data, t->size_bytes);
        o->bytes = t->size_bytes;
    }
    if (q->profile && nn > 0) {
        res->nodes = (tirpc_node *)calloc((size_t)nn, sizeof(tirpc_node));
        if (!res->nodes) TIRPC__FAIL(TI_ERR_OUT_OF_MEMORY, "%s: out of memory for the profile", name);
        res->n_nodes = nn;
        for (int i = 0; i < nn; i++) {
            ti_node_info ni;
            tirpc_node *nd = &res->nodes[i];
            double *col = node_ms + (size_t)i * (size_t)repeat;
            qsort(col, (size_t)repeat, sizeof(double), tirpc__cmp_double);
            nd->time_ms = repeat % 2 ? col[repeat / 2] : 0.5 * (col[repeat / 2 - 1] + col[repeat / 2]);
            if (ti_session_node_info(s, i, &ni) != TI_OK) continue;
            snprintf(nd->name, sizeof(nd->name), "%s", ni.name ? ni.name : "");
            snprintf(nd->op, sizeof(nd->op), "%s", ni.op ? ni.op : "");
            nd->backend = ni.backend;
            nd->launch_retries = ni.launch_retries;
            snprintf(nd->tuning, sizeof(nd->tuning), "%s", ni.tuning ? ni.tuning : "");
            nd->tunables = (char *)malloc(strlen(ni.tunables ? ni.tunables : "") + 1);
            if (!nd->tunables) TIRPC__FAIL(TI_ERR_OUT_OF_MEMORY, "%s: out of memory for the profile", name);
            strcpy(nd->tunables, ni.tunables ? ni.tunables : "");
        }
    }
    res->status = 0;
done:
#undef TIRPC__FAIL
    if (res->status != 0) { /* a failed run reports no partial numbers */
        free(res->times_ms);
        res->times_ms = NULL;
        res->n_times = 0;
        for (int i = 0; res->outputs && i < res->n_outputs; i++) free(res->outputs[i].data);
        free(res->outputs);
        res->outputs = NULL;
        res->n_outputs = 0;
        for (int i = 0; res->nodes && i < res->n_nodes; i++) free(res->nodes[i].tunables);
        free(res->nodes);
        res->nodes = NULL;
        res->n_nodes = 0;
        free(res->node_sums_ms);
        res->node_sums_ms = NULL;
        res->n_node_sums = 0;
    }
    free(node_ms);
    ti_session_destroy(s);
    ti_model_free(m);
}

/* Reads a cached model and checks its hash. 0 ok; -1 absent or damaged (removed then). */
TIRPC__PRIVATE int tirpc__load_cached(const tirpc_server *srv, const uint8_t sha[32], uint8_t **data,
                                      size_t *size, char *why, size_t wn)
{
    char path[1200];
    uint8_t got[32];
    tirpc__model_path(srv, sha, path, sizeof(path));
    char *bytes = td_read_file(path, size, why, wn);
    if (!bytes) return -1;
    tirpc_sha256_once(bytes, *size, got);
    if (memcmp(got, sha, 32) != 0) {
        free(bytes);
        remove(path);
        tirpc__why(why, wn, "the cached copy of the model was damaged (removed): upload it again");
        return -1;
    }
    *data = (uint8_t *)bytes;
    return 0;
}

/* One request. 0: go on; 1: the client said BYE; -1: close the connection. */
TIRPC__PRIVATE int tirpc__dispatch(const tirpc_server *srv, tirpc_conn *c, int type, const uint8_t *p,
                                   size_t n)
{
    char why[512];
    tirpc_buf b = {0, 0, 0, 0};
    int rc = 0;
    switch (type) {
    case TIRPC_MSG_BYE:
        return 1;
    case TIRPC_MSG_INFO: {
        char *text = tirpc_info_text(srv);
        if (!text) return tirpc__send_error(c, TIRPC_ERR_INTERNAL, "out of memory"), -1;
        tirpc_enc_text(&b, text);
        free(text);
        rc = tirpc__send(c, TIRPC_MSG_INFO_REPLY, &b, why, sizeof(why));
        break;
    }
    case TIRPC_MSG_HAS_MODEL: {
        uint8_t sha[32];
        if (tirpc_dec_sha(p, n, sha, why, sizeof(why)) != 0) {
            TIRPC__LOG(srv, "bad HAS_MODEL: %s", why);
            tirpc__send_error(c, TIRPC_ERR_BAD_MESSAGE, why);
            return -1;
        }
        int present = tirpc__has_model(srv, sha);
        char hex[65];
        tirpc_hex(sha, 32, hex);
        TIRPC__LOG(srv, "HAS_MODEL %.16s: %s", hex, present ? "cached" : "absent");
        tirpc_enc_status(&b, sha, present);
        rc = tirpc__send(c, TIRPC_MSG_MODEL_STATUS, &b, why, sizeof(why));
        break;
    }
    case TIRPC_MSG_PUT_MODEL: {
        tirpc_put m;
        uint8_t got[32];
        char hex[65];
        if (tirpc_dec_put(p, n, &m, why, sizeof(why)) != 0) {
            TIRPC__LOG(srv, "bad PUT_MODEL: %s", why);
            tirpc__send_error(c, TIRPC_ERR_BAD_MESSAGE, why);
            return -1;
        }
        tirpc_sha256_once(m.data, m.size, got);
        tirpc_hex(m.sha, 32, hex);
        if (memcmp(got, m.sha, 32) != 0) {
            char ghex[65];
            tirpc_hex(got, 32, ghex);
            snprintf(why, sizeof(why), "PUT_MODEL: the %zu bytes hash to %.16s..., not %.16s...: not stored",
                     m.size, ghex, hex);
            TIRPC__LOG(srv, "%s", why);
            rc = tirpc__send_error(c, TIRPC_ERR_HASH_MISMATCH, why);
            break; /* the framing is intact: the session goes on */
        }
        if (tirpc__store(srv, &m, why, sizeof(why)) != 0) {
            TIRPC__LOG(srv, "PUT_MODEL %.16s: %s", hex, why);
            rc = tirpc__send_error(c, TIRPC_ERR_STORAGE, why);
            break;
        }
        TIRPC__LOG(srv, "PUT_MODEL %.16s: stored %zu bytes (uploaded)", hex, m.size);
        tirpc_enc_status(&b, m.sha, 1);
        rc = tirpc__send(c, TIRPC_MSG_MODEL_STATUS, &b, why, sizeof(why));
        break;
    }
    case TIRPC_MSG_RUN: {
        tirpc_run_wire w;
        uint8_t *model = NULL;
        size_t model_size = 0;
        char hex[65];
        if (tirpc_dec_run(p, n, &w, why, sizeof(why)) != 0) {
            TIRPC__LOG(srv, "bad RUN: %s", why);
            tirpc__send_error(c, TIRPC_ERR_BAD_MESSAGE, why);
            return -1;
        }
        tirpc_hex(w.sha, 32, hex);
        if (tirpc__load_cached(srv, w.sha, &model, &model_size, why, sizeof(why)) != 0) {
            char msg[700];
            snprintf(msg, sizeof(msg), "RUN: model %.16s... is not on this server (%s): PUT_MODEL it first", hex, why);
            TIRPC__LOG(srv, "%s", msg);
            rc = tirpc__send_error(c, TIRPC_ERR_NO_MODEL, msg);
            tirpc_run_wire_free(&w);
            break;
        }
        tirpc_run_res res;
        memset(&res, 0, sizeof(res));
#ifndef _WIN32
        tirpc__beat beat;
        pthread_t th;
        int beating = 0;
        if (!srv->no_heartbeat && !c->is_mem) {
            memset(&beat, 0, sizeof(beat));
            beat.c = c;
            pthread_mutex_init(&beat.m, NULL);
            pthread_cond_init(&beat.cv, NULL);
            beating = pthread_create(&th, NULL, tirpc__beat_main, &beat) == 0;
            if (!beating) pthread_mutex_destroy(&beat.m), pthread_cond_destroy(&beat.cv);
        }
#endif
        uint8_t key[32];
        tirpc_run_key(w.sha, (int)w.req.backend, w.req.device, w.req.tuning, key);
        if (srv->crash_records) tirpc__crash_arm(srv, key);
        if (srv->crash_on && srv->crash_on[0] && w.req.tuning && strstr(w.req.tuning, srv->crash_on)) {
            TIRPC__LOG(srv, "RUN %.16s: --crash-on '%s' matches the tuning: raising SIGSEGV (TEST HOOK)", hex,
                       srv->crash_on);
            raise(SIGSEGV);
        }
        double t0 = tirpc__now();
        tirpc__execute(srv, &w, model, model_size, &res);
        tirpc__crash_disarm();
#ifndef _WIN32
        if (beating) {
            pthread_mutex_lock(&beat.m);
            beat.stop = 1;
            pthread_cond_signal(&beat.cv);
            pthread_mutex_unlock(&beat.m);
            pthread_join(th, NULL);
            pthread_mutex_destroy(&beat.m);
            pthread_cond_destroy(&beat.cv);
        }
#endif
        tirpc_latency_stats(&res);
        if (res.status == 0)
            TIRPC__LOG(srv, "RUN %.16s: %s, %d runs, median %.3f ms (%.1f s in all)", hex, res.backend,
                       res.n_times, res.median_ms, tirpc__now() - t0);
        else
            TIRPC__LOG(srv, "RUN %.16s: failed: %s", hex, res.error);
        tirpc_enc_result(&b, &res);
        if (b.bad || b.len > UINT32_MAX) {
            tirpc_buf_free(&b);
            rc = tirpc__send_error(c, TIRPC_ERR_INTERNAL, "the result is too large to send");
        } else {
            rc = tirpc__send(c, TIRPC_MSG_RESULT, &b, why, sizeof(why));
        }
        tirpc_run_res_free(&res);
        tirpc_run_wire_free(&w);
        free(model);
        break;
    }
    case TIRPC_MSG_CRASH_QUERY: {
        uint8_t key[32];
        char hex[65];
        if (tirpc_dec_sha(p, n, key, why, sizeof(why)) != 0) {
            TIRPC__LOG(srv, "bad CRASH_QUERY: %s", why);
            tirpc__send_error(c, TIRPC_ERR_BAD_MESSAGE, why);
            return -1;
        }
        int sig = tirpc__crash_lookup(srv, key);
        tirpc_hex(key, 32, hex);
        TIRPC__LOG(srv, "CRASH_QUERY %.16s: %s%d", hex, sig ? "crashed, signal " : "no record ", sig);
        tirpc_enc_crash_report(&b, key, sig);
        rc = tirpc__send(c, TIRPC_MSG_CRASH_REPORT, &b, why, sizeof(why));
        break;
    }
    default: {
        snprintf(why, sizeof(why), "message type %d is not a request", type);
        TIRPC__LOG(srv, "%s", why);
        rc = tirpc__send_error(c, TIRPC_ERR_UNKNOWN_TYPE, why);
        break;
    }
    }
    tirpc_buf_free(&b);
    return rc == 0 ? 0 : -1;
}

int tirpc_serve_conn(const tirpc_server *srv, tirpc_conn *c)
{
    char why[512];
    int type;
    uint8_t *p;
    size_t n;
    uint32_t max = srv->max_message ? srv->max_message : TIRPC_MAX_MESSAGE_DEFAULT;
    double idle = srv->idle_timeout_s > 0 ? srv->idle_timeout_s : 600;
    double rt = srv->read_timeout_s > 0 ? srv->read_timeout_s : 30;
    c->timeout_s = rt;
    if (!srv->skip_auth) {
        tirpc_hello h;
        tirpc_auth a;
        memset(&h, 0, sizeof(h));
        h.version = TIRPC_VERSION;
        if (tirpc__random(h.nonce, 32) != 0) {
            TIRPC__LOG(srv, "no random bytes for the nonce: session refused");
            tirpc__send_error(c, TIRPC_ERR_INTERNAL, "the server has no random source");
            return 1;
        }
        if (srv->name) snprintf(h.name, sizeof(h.name), "%s", srv->name);
#ifndef _WIN32
        else if (gethostname(h.name, sizeof(h.name) - 1) != 0) h.name[0] = 0;
#endif
        tirpc_buf b = {0, 0, 0, 0};
        tirpc_enc_hello(&b, &h);
        int rc = tirpc__send(c, TIRPC_MSG_HELLO, &b, why, sizeof(why));
        tirpc_buf_free(&b);
        if (rc != 0) {
            TIRPC__LOG(srv, "HELLO: %s", why);
            return 1;
        }
        /* AUTH is small: a client gets 128 bytes and read_timeout_s to send it */
        rc = tirpc__recv(c, &type, &p, &n, 128, rt, why, sizeof(why));
        if (rc != 0 || type != TIRPC_MSG_AUTH || tirpc_dec_auth(p, n, &a, why, sizeof(why)) != 0) {
            if (rc == 0 && type != TIRPC_MSG_AUTH) snprintf(why, sizeof(why), "message type %d before AUTH", type);
            TIRPC__LOG(srv, "authentication: %s", why);
            free(p);
            if (rc != -1 && rc != -2) {
                tirpc__send_error(c, rc > 0 ? (uint32_t)rc : TIRPC_ERR_AUTH, why);
                tirpc__linger(c);
            }
            return 1;
        }
        free(p);
        uint8_t want[32];
        tirpc__proof(srv->token, "tirp-client", h.nonce, a.nonce, want);
        if (!tirpc__same32(want, a.mac)) {
            TIRPC__LOG(srv, "authentication failed: wrong token");
            tirpc__send_error(c, TIRPC_ERR_AUTH, "authentication failed: wrong token");
            return 1;
        }
        tirpc__proof(srv->token, "tirp-server", a.nonce, h.nonce, want);
        tirpc_enc_sha(&b, want);
        rc = tirpc__send(c, TIRPC_MSG_AUTH_OK, &b, why, sizeof(why));
        tirpc_buf_free(&b);
        if (rc != 0) return 1;
        TIRPC__LOG(srv, "authenticated");
    }
    for (;;) {
        int rc = tirpc__recv(c, &type, &p, &n, max, idle, why, sizeof(why));
        if (rc == -2) return 0; /* the client went away between requests */
        if (rc != 0) {
            TIRPC__LOG(srv, "closing the connection: %s", why);
            if (rc > 0) {
                tirpc__send_error(c, (uint32_t)rc, why);
                tirpc__linger(c);
            }
            return 1;
        }
        rc = tirpc__dispatch(srv, c, type, p, n);
        free(p);
        if (rc == 1) return 0;
        if (rc < 0) return 1;
    }
}

/* ---- INFO ------------------------------------------------------------------------------- */
TIRPC__PRIVATE void tirpc__cat(tirpc_buf *b, const char *fmt, ...)
{
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (k < 0) return;
    tirpc__put(b, line, (size_t)k < sizeof(line) ? (size_t)k : sizeof(line) - 1);
}

/* CPU model and the SIMD flags tinyinfer cares about, from /proc/cpuinfo (Linux, Android) */
TIRPC__PRIVATE void tirpc__cpu_lines(tirpc_buf *b)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[8192], model[256] = "", flags[512] = "";
    static const char *const wanted[] = {"sse4_1", "sse4_2", "avx", "avx2", "fma", "f16c",
                                         "avx512f", "avx512bw", "avx512vl", "avx512_vnni",
                                         "avx512_bf16", "amx_tile", "neon", "asimd", "asimdhp",
                                         "asimddp", "fphp", "sve", "sve2", "i8mm", "bf16"};
    if (!f) {
        tirpc__cat(b, "cpu: (no /proc/cpuinfo)\n");
        return;
    }
    while (fgets(line, sizeof(line), f)) {
        char *colon = strchr(line, ':');
        if (!colon) continue;
        char *v = colon + 1;
        while (*v == ' ' || *v == '\t') v++;
        v[strcspn(v, "\n")] = 0;
        if (!model[0] && (strncmp(line, "model name", 10) == 0 || strncmp(line, "Hardware", 8) == 0))
            snprintf(model, sizeof(model), "%s", v);
        if (!flags[0] && (strncmp(line, "flags", 5) == 0 || strncmp(line, "Features", 8) == 0)) {
            size_t used = 0;
            for (size_t w = 0; w < sizeof(wanted) / sizeof(wanted[0]); w++) {
                const char *hit = v;
                size_t wl = strlen(wanted[w]);
                while ((hit = strstr(hit, wanted[w])) != NULL) {
                    int starts = hit == v || hit[-1] == ' ', ends = hit[wl] == 0 || hit[wl] == ' ';
                    if (starts && ends) break;
                    hit += wl;
                }
                if (hit && used + wl + 2 < sizeof(flags)) {
                    used += (size_t)snprintf(flags + used, sizeof(flags) - used, "%s%s", used ? " " : "", wanted[w]);
                }
            }
            if (!used) snprintf(flags, sizeof(flags), "(none of the SIMD flags tinyinfer uses)");
        }
    }
    fclose(f);
    tirpc__cat(b, "cpu: %s\n", model[0] ? model : "(unknown model)");
    tirpc__cat(b, "cpu features: %s\n", flags[0] ? flags : "(not listed)");
}

/* every OpenCL device, in the library's index order (platforms, then devices) */
TIRPC__PRIVATE void tirpc__cl_lines(tirpc_buf *b)
{
#ifdef TI_NO_OPENCL
    tirpc__cat(b, "backends: cpu (built without OpenCL)\n");
#else
    ti_cl_api cl;
    ti_cl_report rep;
    if (ti_cl_load(&cl, NULL, &rep) != TI_CL_OK) {
        tirpc__cat(b, "backends: cpu (no OpenCL library: %s)\n",
                   rep.missing_symbol[0] ? rep.missing_symbol : "none of the usual names loaded");
        return;
    }
    cl_platform_id plat[16];
    cl_uint np = 0;
    if (cl.clGetPlatformIDs(16, plat, &np) != CL_SUCCESS) np = 0;
    if (np > 16) np = 16;
    tirpc__cat(b, "backends: cpu, opencl (%s)\n", rep.loaded);
    int index = 0;
    tirpc__cat(b, "opencl devices:%s\n", np == 0 ? " none (no platform)" : "");
    for (cl_uint pi = 0; pi < np; pi++) {
        char pname[256] = "";
        cl_device_id dev[32];
        cl_uint nd = 0;
        cl.clGetPlatformInfo(plat[pi], CL_PLATFORM_NAME, sizeof(pname) - 1, pname, NULL);
        if (cl.clGetDeviceIDs(plat[pi], CL_DEVICE_TYPE_ALL, 32, dev, &nd) != CL_SUCCESS) nd = 0;
        if (nd > 32) nd = 32;
        for (cl_uint di = 0; di < nd; di++) {
            char dname[256] = "", ver[256] = "";
            cl_device_type type = 0;
            cl_uint cus = 0;
            cl.clGetDeviceInfo(dev[di], CL_DEVICE_NAME, sizeof(dname) - 1, dname, NULL);
            cl.clGetDeviceInfo(dev[di], CL_DEVICE_VERSION, sizeof(ver) - 1, ver, NULL);
            cl.clGetDeviceInfo(dev[di], CL_DEVICE_TYPE, sizeof(type), &type, NULL);
            cl.clGetDeviceInfo(dev[di], CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(cus), &cus, NULL);
            tirpc__cat(b, "  %d: %s / %s (%s, %u compute units, %s)\n", index++, pname, dname,
                       (type & CL_DEVICE_TYPE_GPU) ? "gpu" : (type & CL_DEVICE_TYPE_CPU) ? "cpu" : "other",
                       cus, ver);
        }
    }
    ti_cl_unload(&cl);
#endif
}

char *tirpc_info_text(const tirpc_server *srv)
{
    tirpc_buf b = {0, 0, 0, 0};
    char host[256] = "";
#ifdef _WIN32
    DWORD hn = sizeof(host);
    GetComputerNameA(host, &hn);
    tirpc__cat(&b, "host: %s\nos: Windows\n", host);
#else
    struct utsname u;
    if (gethostname(host, sizeof(host) - 1) != 0) host[0] = 0;
    tirpc__cat(&b, "host: %s\n", host);
    if (uname(&u) == 0) tirpc__cat(&b, "os: %s %s %s\n", u.sysname, u.release, u.machine);
#endif
    tirpc__cat(&b, "tinyinfer: %s, protocol %d\n", TINYINFER_VERSION_STRING, TIRPC_VERSION);
    tirpc__cpu_lines(&b);
#ifndef _WIN32
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    tirpc__cat(&b, "cpus online: %ld\n", cpus);
#endif
    tirpc__cl_lines(&b);
    tirpc__cat(&b, "cache: %s\nmax message: %lu bytes\n", srv->cache_dir,
               (unsigned long)(srv->max_message ? srv->max_message : TIRPC_MAX_MESSAGE_DEFAULT));
    if (srv->fake_timing) tirpc__cat(&b, "fake timing: on (TEST HOOK: times are made up)\n");
    tirpc__u8(&b, 0);
    if (b.bad) {
        tirpc_buf_free(&b);
        return NULL;
    }
    return (char *)b.p;
}

#endif /* TI_RPC_IMPLEMENTATION */
