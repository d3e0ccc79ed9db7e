/* tinyinfer-rpc: runs and profiles a model on another machine (a phone, a GPU box) from this
 * one. `serve` runs on the device: it listens on TCP, dials out to the laptop (--connect), or
 * serves one session on stdin/stdout (--stdio, carried by ssh or adb shell). `info`, `run`
 * and `bench` run on the laptop: they upload the model once (cached on the device by
 * SHA-256), run it there and print outputs, latency and the per-layer profile. The protocol
 * is tools/rpc/PROTOCOL.md; the code is tools/rpc/ti_rpc.h. Only models are ever executed.
 * Exit status: 0 ok, 1 on a failure (the reason on stderr), 2 on a usage error.
 * Build: cc -O2 -I. tools/tinyinfer-rpc.c -o tinyinfer-rpc -lm -lpthread */
#define _POSIX_C_SOURCE 200809L
#define TINYINFER_IMPLEMENTATION
#include "tinyinfer.h"
#define TI_RPC_IMPLEMENTATION
#include "rpc/ti_rpc.h"

#include <signal.h>
#ifdef _WIN32 /* no fork: each session is served in this process, one at a time */
#include <fcntl.h>
#define rpc_mkdir(path) _mkdir(path)
#else
#define rpc_mkdir(path) mkdir(path, 0777)
#endif

#define MAX_FILES 64

static void usage(FILE *f)
{
    fprintf(f,
        "usage: tinyinfer-rpc serve [--port P | --listen HOST:PORT | --connect HOST:PORT | --stdio]\n"
        "                           [--cache DIR] [--max-message BYTES] [--idle-timeout S]\n"
        "                           [--name NAME] [--fake-timing] [--crash-on TEXT]\n"
        "       tinyinfer-rpc info  WHERE\n"
        "       tinyinfer-rpc run   MODEL WHERE [--input FILE]... [--backend auto|cpu|opencl]\n"
        "                           [--device SEL] [--threads N] [--repeat N] [--warmup N]\n"
        "                           [--profile] [--trace FILE] [--save-outputs DIR] [--seed S]\n"
        "       tinyinfer-rpc bench MODEL WHERE [--repeat N] [--warmup N] [--backend B] [--threads N]\n"
        "WHERE (the laptop side) is one of:\n"
        "  --remote HOST:PORT    dial a server started with `serve --port`\n"
        "  --listen PORT         wait for a server started with `serve --connect` to dial in\n"
        "                        (port 0: any; the port is printed on stderr)\n"
        "  --via \"COMMAND\"       run COMMAND (e.g. \"ssh phone tinyinfer-rpc serve --stdio\",\n"
        "                        \"adb shell /data/local/tmp/tinyinfer-rpc serve --stdio\") and\n"
        "                        talk over its stdin/stdout\n"
        "Token (both sides; never sent in clear, a challenge-response proves it): --token T,\n"
        "  --token-file FILE (first line) or the environment variable TINYINFER_RPC_TOKEN.\n"
        "serve:\n"
        "  --port P              listen on all addresses, port P (default 7390; 0: any, the port\n"
        "                        is printed on stdout as `listening on PORT`)\n"
        "  --listen HOST:PORT    listen on one address\n"
        "  --connect HOST:PORT   dial out to a laptop running `--listen`, again after each\n"
        "                        session and after failures (back-off 0.5 s to 5 s)\n"
        "  --stdio               serve one session on stdin/stdout (logs go to stderr)\n"
        "  --cache DIR           model cache (default ~/.cache/tinyinfer/rpc), <sha256>.model\n"
        "  --max-message BYTES   largest message accepted (default 268435456); larger ones are\n"
        "                        refused before they are read\n"
        "  --idle-timeout S      close a session idle for S seconds (default 600)\n"
        "  --read-timeout S      close a session that stalls inside a message (default 30)\n"
        "  --fake-timing         TEST HOOK, for tinyinfer-tune's determinism test only: runs\n"
        "                        the model but reports made-up times (a hash of each node's\n"
        "                        name and tuning setting; wall times are their sum). Never use\n"
        "                        it to measure anything.\n"
        "  --crash-on TEXT       TEST HOOK, for tinyinfer-tune's crash test only: a RUN whose\n"
        "                        tuning text contains TEXT raises SIGSEGV in the session (as a\n"
        "                        crashing kernel would), after the crash record is armed\n"
        "run and bench:\n"
        "  --input FILE          .npy or .pb for the next input (a file whose tensor name\n"
        "                        matches an input feeds that one); inputs without a file get\n"
        "                        seeded random data exactly as tinyinfer-run makes it\n"
        "  --repeat N            timed runs (default 1; bench 20), --warmup N untimed first\n"
        "  --profile             per-node times (the median over the repeats) and per op type\n"
        "  --trace FILE          the profile as Chrome trace JSON (implies --profile)\n"
        "  --save-outputs DIR    each output as DIR/<name>.npy\n"
        "  --tuning FILE         a tuning file (tinyinfer-tune) sent to the server for the session\n"
        "  --timeout S           connection lost after S seconds without a byte (default 30)\n");
}

static int fail_usage(const char *fmt, const char *arg)
{
    fprintf(stderr, "tinyinfer-rpc: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (--help for usage)\n");
    return 2;
}

/* ---- options shared by both sides --------------------------------------------------------- */
typedef struct opts {
    const char *cmd;
    const char *model;
    const char *token, *token_file;
    const char *remote, *listen_port, *via;
    const char *port, *listen_addr, *connect;
    int stdio_mode;
    const char *cache;
    unsigned long max_message;
    double idle_timeout, read_timeout, timeout;
    int fake_timing;
    const char *crash_on;
    const char *name;
    const char *inputs[MAX_FILES];
    int n_inputs;
    ti_backend backend;
    const char *device;
    int threads, repeat, warmup, profile;
    const char *trace, *save_dir, *tuning_file;
    uint64_t seed;
} opts;

static char g_token[4096];

/* --token, else --token-file's first line, else $TINYINFER_RPC_TOKEN */
static const char *find_token(const opts *o)
{
    if (o->token) return o->token;
    if (o->token_file) {
        FILE *f = fopen(o->token_file, "r");
        if (!f) {
            fprintf(stderr, "tinyinfer-rpc: cannot read the token file %s: %s\n", o->token_file, strerror(errno));
            return NULL;
        }
        if (!fgets(g_token, sizeof(g_token), f)) g_token[0] = 0;
        fclose(f);
        g_token[strcspn(g_token, "\r\n")] = 0;
        if (!g_token[0]) {
            fprintf(stderr, "tinyinfer-rpc: the token file %s is empty\n", o->token_file);
            return NULL;
        }
        return g_token;
    }
    const char *e = getenv("TINYINFER_RPC_TOKEN");
    if (e && e[0]) return e;
    fprintf(stderr, "tinyinfer-rpc: no token: give --token, --token-file or TINYINFER_RPC_TOKEN\n");
    return NULL;
}

static int parse(int argc, char **argv, opts *o)
{
    memset(o, 0, sizeof(*o));
    o->repeat = -1;
    o->warmup = -1;
    o->seed = 1;
    o->timeout = 30;
    if (argc < 2) return fail_usage("no command given%s", "");
    o->cmd = argv[1];
    if (strcmp(o->cmd, "--help") == 0 || strcmp(o->cmd, "-h") == 0 || strcmp(o->cmd, "help") == 0) {
        usage(stdout);
        exit(0);
    }
    if (strcmp(o->cmd, "serve") && strcmp(o->cmd, "info") && strcmp(o->cmd, "run") && strcmp(o->cmd, "bench"))
        return fail_usage("unknown command '%s'", o->cmd);
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        int v = i + 1 < argc;
#define OPT(s) (strcmp(a, s) == 0 && v)
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            exit(0);
        } else if (OPT("--token")) o->token = argv[++i];
        else if (OPT("--token-file")) o->token_file = argv[++i];
        else if (OPT("--remote")) o->remote = argv[++i];
        else if (OPT("--via")) o->via = argv[++i];
        else if (OPT("--listen")) {
            if (strcmp(o->cmd, "serve") == 0) o->listen_addr = argv[++i];
            else o->listen_port = argv[++i];
        } else if (OPT("--port")) o->port = argv[++i];
        else if (OPT("--connect")) o->connect = argv[++i];
        else if (strcmp(a, "--stdio") == 0) o->stdio_mode = 1;
        else if (OPT("--cache")) o->cache = argv[++i];
        else if (OPT("--max-message")) {
            char *end;
            o->max_message = strtoul(argv[++i], &end, 10);
            if (*end || o->max_message < 1024 || o->max_message > 0xffffffffUL)
                return fail_usage("--max-message wants 1024 to 4294967295 bytes, not '%s'", argv[i]);
        } else if (OPT("--idle-timeout")) o->idle_timeout = atof(argv[++i]);
        else if (OPT("--read-timeout")) o->read_timeout = atof(argv[++i]);
        else if (OPT("--timeout")) o->timeout = atof(argv[++i]);
        else if (strcmp(a, "--fake-timing") == 0) o->fake_timing = 1;
        else if (OPT("--crash-on")) o->crash_on = argv[++i];
        else if (OPT("--name")) o->name = argv[++i];
        else if (OPT("--input")) {
            if (o->n_inputs == MAX_FILES) return fail_usage("at most 64 --input files%s", "");
            o->inputs[o->n_inputs++] = argv[++i];
        } else if (OPT("--backend")) {
            const char *b = argv[++i];
            if (strcmp(b, "auto") == 0) o->backend = TI_BACKEND_AUTO;
            else if (strcmp(b, "cpu") == 0) o->backend = TI_BACKEND_CPU;
            else if (strcmp(b, "opencl") == 0) o->backend = TI_BACKEND_OPENCL;
            else return fail_usage("--backend wants auto, cpu or opencl, not '%s'", b);
        } else if (OPT("--device")) o->device = argv[++i];
        else if (OPT("--threads")) o->threads = atoi(argv[++i]);
        else if (OPT("--repeat")) o->repeat = atoi(argv[++i]);
        else if (OPT("--warmup")) o->warmup = atoi(argv[++i]);
        else if (strcmp(a, "--profile") == 0) o->profile = 1;
        else if (OPT("--trace")) o->trace = argv[++i];
        else if (OPT("--save-outputs")) o->save_dir = argv[++i];
        else if (OPT("--tuning")) o->tuning_file = argv[++i];
        else if (OPT("--seed")) o->seed = (uint64_t)strtoull(argv[++i], NULL, 10);
        else if (a[0] == '-' && a[1]) return fail_usage("unknown or incomplete option '%s'", a);
        else if (!o->model && (strcmp(o->cmd, "run") == 0 || strcmp(o->cmd, "bench") == 0)) o->model = a;
        else return fail_usage("unexpected argument '%s'", a);
#undef OPT
    }
    if ((strcmp(o->cmd, "run") == 0 || strcmp(o->cmd, "bench") == 0) && !o->model)
        return fail_usage("%s: no model given", o->cmd);
    if (strcmp(o->cmd, "serve") != 0) {
        int ways = !!o->remote + !!o->listen_port + !!o->via;
        if (ways != 1) return fail_usage("%s: give exactly one of --remote, --listen, --via", o->cmd);
    } else {
        int ways = !!o->port + !!o->listen_addr + !!o->connect + o->stdio_mode;
        if (ways > 1) return fail_usage("serve: give one of --port, --listen, --connect, --stdio%s", "");
    }
    if (o->repeat < 0) o->repeat = strcmp(o->cmd, "bench") == 0 ? 20 : 1;
    if (o->repeat < 1) o->repeat = 1;
    if (o->warmup < 0) o->warmup = strcmp(o->cmd, "bench") == 0 ? 2 : 0;
    if (o->trace) o->profile = 1;
    return 0;
}

/* ---- server ------------------------------------------------------------------------------- */
static volatile sig_atomic_t g_stop;
static void on_term(int sig)
{
    (void)sig;
    g_stop = 1;
}

static void sleep_s(double s)
{
    struct timespec ts;
    ts.tv_sec = (time_t)s;
    ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
    nanosleep(&ts, NULL);
}

#ifdef _WIN32

/* Serves socket s in this process (Windows has no fork: a crash in a session ends the
 * server). Returns a pseudo pid: 0, the session having ended. */
static pid_t serve_forked(const tirpc_server *srv, int s, int listen_fd)
{
    (void)listen_fd;
    tirpc_conn *c = tirpc_conn_fds(s, s, 1, srv->read_timeout_s);
    int rc = c ? tirpc_serve_conn(srv, c) : 1;
    if (c) tirpc_close(c);
    else tirpc__closesock((tirpc__sock)s);
    if (rc > 1) tirpc__log(srv, "session ended with status %d; still serving", rc);
    return 0;
}
#define close_sock_parent(s) ((void)0) /* the session closed it */
#else
#define close_sock_parent(s) close(s)
/* logs how a session's child ended when it was not a normal exit */
static void log_child(const tirpc_server *srv, pid_t pid, int st)
{
    if (WIFSIGNALED(st))
        tirpc__log(srv, "session %ld ended by signal %d (a crash in the model, the library or the "
                        "driver); still serving", (long)pid, WTERMSIG(st));
    else if (WIFEXITED(st) && WEXITSTATUS(st) > 1)
        tirpc__log(srv, "session %ld exited with status %d; still serving", (long)pid, WEXITSTATUS(st));
}

/* Serves socket s in a forked child: the parent never loads a model or OpenCL, so a crash
 * there kills only that session. Returns the child's pid (or -1). */
static pid_t serve_forked(const tirpc_server *srv, int s, int listen_fd)
{
    pid_t pid = fork();
    if (pid != 0) return pid;
    if (listen_fd >= 0) close(listen_fd);
    signal(SIGTERM, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    tirpc_conn *c = tirpc_conn_fds(s, s, 1, srv->read_timeout_s);
    int rc = c ? tirpc_serve_conn(srv, c) : 1;
    tirpc_close(c);
    _exit(rc);
}
#endif

static int serve_tcp(const tirpc_server *srv, const char *addr)
{
    char why[512];
    int fd = tirpc_listen(addr, why, sizeof(why));
    if (fd < 0) {
        fprintf(stderr, "tinyinfer-rpc serve: %s\n", why);
        return 1;
    }
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    int port = 0;
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
        port = ss.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
                                        : ntohs(((struct sockaddr_in *)&ss)->sin_port);
    printf("listening on %d\n", port);
    fflush(stdout);
    tirpc__log(srv, "listening on %s (port %d), cache %s", addr, port, srv->cache_dir);
    int children = 0;
    while (!g_stop) {
#ifndef _WIN32
        int st;
        pid_t done;
        while ((done = waitpid(-1, &st, WNOHANG)) > 0) {
            children--;
            log_child(srv, done, st);
        }
#endif
        struct pollfd pf;
        memset(&pf, 0, sizeof(pf));
        pf.fd = (tirpc__sock)fd;
        pf.events = POLLIN;
        if (tirpc__poll(&pf, 1, 500) <= 0) continue;
        struct sockaddr_storage peer;
        socklen_t pl = sizeof(peer);
        tirpc__sock as = accept((tirpc__sock)fd, (struct sockaddr *)&peer, &pl);
        if (as == TIRPC__BADSOCK) continue;
        int s = (int)as; /* the API's descriptors are ints (Winsock's handles fit) */
        char host[128] = "?", serv[16] = "?";
        getnameinfo((struct sockaddr *)&peer, pl, host, sizeof(host), serv, sizeof(serv),
                    NI_NUMERICHOST | NI_NUMERICSERV);
        if (children >= 32) {
            tirpc_conn *c = tirpc_conn_fds(s, s, 1, 1);
            if (c) tirpc__send_error(c, TIRPC_ERR_BUSY, "the server has 32 sessions open: try again later");
            tirpc_close(c);
            tirpc__log(srv, "refused %s:%s: 32 sessions open", host, serv);
            continue;
        }
#ifdef _WIN32
        tirpc__log(srv, "session: %s:%s", host, serv);
#endif
        pid_t pid = serve_forked(srv, s, fd);
        close_sock_parent(s);
        if (pid < 0) {
            tirpc__log(srv, "fork: %s", strerror(errno));
            continue;
        }
#ifndef _WIN32
        children++;
        tirpc__log(srv, "session %ld: %s:%s", (long)pid, host, serv);
#endif
    }
    tirpc__closesock((tirpc__sock)fd);
    return 0;
}

/* Dials the laptop, serves the session in a child, dials again: forever, with back-off after
 * failures (0.5 s doubling to 5 s) and a short pause after a session. */
static int serve_connect(const tirpc_server *srv, const char *addr)
{
    double backoff = 0.5;
    char why[512];
    while (!g_stop) {
        int s = (int)tirpc__connect(addr, 10, why, sizeof(why));
        if (s < 0) {
            tirpc__log(srv, "dial %s: %s (again in %.1f s)", addr, why, backoff);
            sleep_s(backoff);
            backoff = backoff * 2 > 5 ? 5 : backoff * 2;
            continue;
        }
        tirpc__log(srv, "dialled %s", addr);
        pid_t pid = serve_forked(srv, s, -1);
        close_sock_parent(s);
        if (pid < 0) {
            tirpc__log(srv, "fork: %s", strerror(errno));
            sleep_s(backoff);
            continue;
        }
#ifdef _WIN32
        backoff = 0.5;
#else
        int st = 0;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR && !g_stop) {
        }
        log_child(srv, pid, st);
        backoff = WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0.5 : (backoff * 2 > 5 ? 5 : backoff * 2);
#endif
        sleep_s(0.5);
    }
    return 0;
}

static int serve_stdio(const tirpc_server *srv)
{
    /* the protocol owns the real stdout; anything else printed goes to stderr */
    int out = dup(1);
    if (out < 0 || dup2(2, 1) < 0) {
        fprintf(stderr, "tinyinfer-rpc serve: cannot set up stdout: %s\n", strerror(errno));
        return 1;
    }
#ifdef _WIN32
    _setmode(0, _O_BINARY);
    _setmode(out, _O_BINARY);
#else
    fcntl(out, F_SETFD, FD_CLOEXEC);
#endif
    tirpc_conn *c = tirpc_conn_fds(0, out, 0, srv->read_timeout_s);
    if (!c) return 1;
    tirpc__log(srv, "serving one session on stdin/stdout, cache %s", srv->cache_dir);
    int rc = tirpc_serve_conn(srv, c);
    tirpc_close(c); /* closes 0 and out */
    return rc;
}

static int cmd_serve(const opts *o)
{
    static char cache[1024];
    tirpc_server srv;
    memset(&srv, 0, sizeof(srv));
    srv.token = find_token(o);
    if (!srv.token) return 1;
    if (o->cache) {
        snprintf(cache, sizeof(cache), "%s", o->cache);
    } else {
        const char *home = getenv("HOME");
        snprintf(cache, sizeof(cache), "%s/.cache/tinyinfer/rpc", home && home[0] ? home : ".");
    }
    if (tirpc__mkdirs(cache) != 0) {
        fprintf(stderr, "tinyinfer-rpc serve: cannot create the cache directory %s: %s\n", cache, strerror(errno));
        return 1;
    }
    srv.cache_dir = cache;
    srv.name = o->name;
    srv.max_message = (uint32_t)o->max_message;
    srv.idle_timeout_s = o->idle_timeout;
    srv.read_timeout_s = o->read_timeout > 0 ? o->read_timeout : 30;
    srv.fake_timing = o->fake_timing;
    srv.crash_on = o->crash_on;
    srv.crash_records = 1;
    srv.log = stderr;
    srv.log_prefix = "tinyinfer-rpc serve";
    if (srv.fake_timing) tirpc__log(&srv, "--fake-timing: TEST HOOK, every reported time is made up");
    if (srv.crash_on) tirpc__log(&srv, "--crash-on '%s': TEST HOOK, runs with it in their tuning crash", srv.crash_on);
#ifdef _WIN32
    signal(SIGINT, on_term);
    signal(SIGTERM, on_term);
#else
    signal(SIGPIPE, SIG_IGN);
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_term;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
#endif
    if (o->stdio_mode) return serve_stdio(&srv);
    if (o->connect) return serve_connect(&srv, o->connect);
    char addr[300];
    if (o->listen_addr)
        snprintf(addr, sizeof(addr), "%s", o->listen_addr);
    else
        snprintf(addr, sizeof(addr), "%s", o->port ? o->port : "7390");
    return serve_tcp(&srv, addr);
}

/* ---- client ------------------------------------------------------------------------------- */
static tirpc_conn *connect_to(const opts *o, const char *token, char *where, size_t wn)
{
    char why[1024];
    tirpc_conn *c = NULL;
    if (o->remote) {
        snprintf(where, wn, "%s", o->remote);
        c = tirpc_dial(o->remote, token, o->timeout, why, sizeof(why));
    } else if (o->via) {
        snprintf(where, wn, "via `%s`", o->via);
        c = tirpc_spawn(o->via, token, why, sizeof(why));
        if (c) tirpc_set_timeout(c, o->timeout > 60 ? o->timeout : 60);
    } else {
        int fd = tirpc_listen(o->listen_port, why, sizeof(why));
        if (fd >= 0) {
            struct sockaddr_storage ss;
            socklen_t sl = sizeof(ss);
            int port = 0;
            if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
                port = ss.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
                                                : ntohs(((struct sockaddr_in *)&ss)->sin_port);
            fprintf(stderr, "tinyinfer-rpc: waiting for a server to dial in on port %d\n", port);
            snprintf(where, wn, "dialled in on port %d", port);
            /* a server redials at most every 5 s: wait for it at least a minute */
            c = tirpc_accept(fd, token, o->timeout > 60 ? o->timeout : 60, why, sizeof(why));
            close(fd);
            if (c) tirpc_set_timeout(c, o->timeout);
        }
    }
    if (!c) fprintf(stderr, "tinyinfer-rpc: %s\n", why);
    return c;
}

static int cmd_info(const opts *o)
{
    const char *token = find_token(o);
    char where[300], why[1024];
    if (!token) return 1;
    tirpc_conn *c = connect_to(o, token, where, sizeof(where));
    if (!c) return 1;
    char *text = NULL;
    int rc = tirpc_info(c, &text, why, sizeof(why));
    if (rc == 0) {
        printf("server: %s (%s)\n%s", tirpc_server_name(c), where, text);
    } else {
        fprintf(stderr, "tinyinfer-rpc: info: %s\n", why);
    }
    free(text);
    tirpc_close(c);
    return rc == 0 ? 0 : 1;
}

static void print_summary(const tirpc_tensor *o)
{
    ti_tensor t;
    memset(&t, 0, sizeof(t));
    t.name = o->name, t.dtype = o->dtype, t.rank = o->rank, t.data = o->data, t.size_bytes = o->bytes;
    memcpy(t.shape, o->shape, sizeof(t.shape));
    td_print_summary(&t);
}

/* the per-node table, the time per op type, and how the sum compares with the latency */
static void print_profile(const tirpc_run_res *r)
{
    double sum = 0;
    for (int i = 0; i < r->n_nodes; i++) sum += r->nodes[i].time_ms > 0 ? r->nodes[i].time_ms : 0;
    printf("profile (median of %d runs per node; %s times):\n", r->n_times,
           strcmp(r->backend, "opencl") == 0 ? "device kernel / CPU wall" : "CPU wall");
    printf("  %4s %-6s %-22s %9s %6s  %s\n", "node", "where", "op", "ms", "%", "name");
    for (int i = 0; i < r->n_nodes; i++) {
        const tirpc_node *nd = &r->nodes[i];
        printf("  %4d %-6s %-22s %9.4f %5.1f%%  %s%s%s%s\n", i,
               nd->backend == TI_BACKEND_OPENCL ? "opencl" : "cpu", nd->op, nd->time_ms,
               sum > 0 ? 100.0 * nd->time_ms / sum : 0.0, nd->name, nd->tuning[0] ? " [" : "",
               nd->tuning, nd->tuning[0] ? "]" : "");
    }
    printf("  by op type:\n");
    char (*ops)[64] = (char (*)[64])calloc((size_t)(r->n_nodes ? r->n_nodes : 1), 64);
    double *ms = (double *)calloc((size_t)(r->n_nodes ? r->n_nodes : 1), sizeof(double));
    int *cnt = (int *)calloc((size_t)(r->n_nodes ? r->n_nodes : 1), sizeof(int));
    int n_ops = 0;
    for (int i = 0; ops && ms && cnt && i < r->n_nodes; i++) {
        int k = 0;
        while (k < n_ops && strcmp(ops[k], r->nodes[i].op) != 0) k++;
        if (k == n_ops) snprintf(ops[n_ops++], 64, "%s", r->nodes[i].op);
        ms[k] += r->nodes[i].time_ms > 0 ? r->nodes[i].time_ms : 0;
        cnt[k]++;
    }
    for (int done = 0; done < n_ops; done++) { /* largest first */
        int best = done;
        for (int k = done + 1; k < n_ops; k++)
            if (ms[k] > ms[best]) best = k;
        char to[64];
        memcpy(to, ops[done], 64), memcpy(ops[done], ops[best], 64), memcpy(ops[best], to, 64);
        double tm = ms[done];
        ms[done] = ms[best], ms[best] = tm;
        int tc = cnt[done];
        cnt[done] = cnt[best], cnt[best] = tc;
        printf("    %-22s %4d nodes %9.4f ms %5.1f%%\n", ops[done], cnt[done], ms[done],
               sum > 0 ? 100.0 * ms[done] / sum : 0.0);
    }
    free(ops), free(ms), free(cnt);
    /* the check of the profile: each run's sum of node times, their median against the
     * median wall time of the runs (the per-node medians' sum is printed too; on a loaded
     * machine it runs lower, as medians drop each node's slow outliers) */
    tirpc_run_res sums;
    memset(&sums, 0, sizeof(sums));
    sums.n_times = r->n_node_sums, sums.times_ms = r->node_sums_ms;
    tirpc_latency_stats(&sums);
    printf("profile: nodes sum %.4f ms (median over the runs of each run's node sum; the per-node "
           "medians add up to %.4f ms) = %.1f%% of the median latency %.4f ms\n",
           sums.median_ms, sum, r->median_ms > 0 ? 100.0 * sums.median_ms / r->median_ms : 0.0,
           r->median_ms);
}

/* Chrome trace events: nodes back to back on one track per backend, from their medians */
static int write_trace(const char *path, const tirpc_run_res *r)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "tinyinfer-rpc: cannot write %s: %s\n", path, strerror(errno));
        return 1;
    }
    double ts = 0;
    fprintf(f, "{\"traceEvents\":[\n");
    for (int i = 0; i < r->n_nodes; i++) {
        const tirpc_node *nd = &r->nodes[i];
        char name[600];
        size_t j = 0;
        for (const char *p = nd->name; *p && j + 2 < sizeof(name); p++) { /* JSON-escape */
            unsigned char ch = (unsigned char)*p;
            if (ch == '"' || ch == '\\') name[j++] = '\\';
            name[j++] = ch < 0x20 ? '?' : (char)ch;
        }
        name[j] = 0;
        double dur = nd->time_ms > 0 ? nd->time_ms * 1e3 : 0;
        fprintf(f, "%s{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,\"pid\":1,\"tid\":%d}\n",
                i ? "," : "", name, nd->op, ts, dur, nd->backend == TI_BACKEND_OPENCL ? 2 : 1);
        ts += dur;
    }
    fprintf(f, "],\"displayTimeUnit\":\"ms\"}\n");
    if (fclose(f) != 0) {
        fprintf(stderr, "tinyinfer-rpc: cannot write %s\n", path);
        return 1;
    }
    printf("trace: %s\n", path);
    return 0;
}

/* DIR/<name with odd characters replaced>.npy, as tinyinfer-run names them */
static void output_path(char *buf, size_t n, const char *dir, const char *name, int k)
{
    char clean[200];
    size_t j = 0;
    for (const char *p = name; *p && j + 1 < sizeof(clean); p++) {
        char c = *p;
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '-' || c == '_' || c == '.';
        clean[j++] = ok ? c : '_';
    }
    clean[j] = 0;
    if (j == 0 || strcmp(clean, ".") == 0 || strcmp(clean, "..") == 0)
        snprintf(clean, sizeof(clean), "output_%d", k);
    snprintf(buf, n, "%s/%s.npy", dir, clean);
}

static int cmd_run(const opts *o, int bench)
{
    const char *token = find_token(o);
    char where[300], why[1024], msg[512];
    td_tensor files[MAX_FILES];
    tirpc_tensor inputs[MAX_FILES];
    int n_loaded = 0, rc = 1;
    size_t model_size = 0;
    char *model = NULL, *tuning = NULL;
    tirpc_conn *c = NULL;
    tirpc_run_res res;
    memset(&res, 0, sizeof(res));
    if (!token) return 1;
    model = td_read_file(o->model, &model_size, msg, sizeof(msg));
    if (!model) {
        fprintf(stderr, "tinyinfer-rpc: %s\n", msg);
        return 1;
    }
    if (model_size == 0) {
        fprintf(stderr, "tinyinfer-rpc: %s is empty\n", o->model);
        goto out;
    }
    for (int k = 0; k < o->n_inputs; k++) {
        if (td_load_tensor(o->inputs[k], &files[k], msg, sizeof(msg)) != TI_OK) {
            fprintf(stderr, "tinyinfer-rpc: %s\n", msg);
            goto out;
        }
        n_loaded++;
        const ti_tensor *t = &files[k].t;
        if (t->rank > 8 || t->dtype == TI_DTYPE_STRING || ti_dtype_size(t->dtype) == 0) {
            fprintf(stderr, "tinyinfer-rpc: %s: %s of rank %d cannot be sent\n", o->inputs[k],
                    ti_dtype_name(t->dtype), t->rank);
            goto out;
        }
        memset(&inputs[k], 0, sizeof(inputs[k]));
        snprintf(inputs[k].name, sizeof(inputs[k].name), "%s", t->name ? t->name : "");
        inputs[k].dtype = t->dtype;
        inputs[k].rank = t->rank;
        memcpy(inputs[k].shape, t->shape, sizeof(int64_t) * (size_t)t->rank);
        inputs[k].data = t->data;
        inputs[k].bytes = t->size_bytes;
    }
    c = connect_to(o, token, where, sizeof(where));
    if (!c) goto out;
    const char *base = strrchr(o->model, '/');
    tirpc_run_req req;
    memset(&req, 0, sizeof(req));
    req.model = model, req.model_size = model_size;
    req.model_name = base ? base + 1 : o->model;
    req.backend = o->backend, req.threads = o->threads;
    req.warmup = o->warmup, req.repeat = o->repeat;
    req.profile = o->profile && !bench;
    req.seed = o->seed;
    req.device = o->device;
    req.n_inputs = n_loaded, req.inputs = inputs;
    if (o->tuning_file) {
        size_t tn;
        tuning = td_read_file(o->tuning_file, &tn, msg, sizeof(msg));
        if (!tuning) {
            fprintf(stderr, "tinyinfer-rpc: %s\n", msg);
            goto out;
        }
        req.tuning = tuning;
    }
    if (tirpc_run(c, &req, &res, why, sizeof(why)) != 0) {
        fprintf(stderr, "tinyinfer-rpc: %s: the connection was lost: %s\n", where, why);
        goto out;
    }
    uint8_t sha[32];
    char hex[65];
    tirpc_sha256_once(model, model_size, sha);
    tirpc_hex(sha, 32, hex);
    printf("server: %s (%s)\n", tirpc_server_name(c), where);
    printf("model: %s (%zu bytes, sha256 %.16s...): %s\n", o->model, model_size, hex,
           res.uploaded ? "uploaded" : "already cached on the server");
    if (res.status != 0) {
        fprintf(stderr, "tinyinfer-rpc: remote %s: %s\n", res.rpc_error ? "refused" : "run failed", res.error);
        goto out;
    }
    printf("session: backend %s%s%s, launch retries %d\n", res.backend, res.device[0] ? ", device " : "",
           res.device, res.launch_retries);
    if (!bench) {
        printf("outputs:\n");
        for (int i = 0; i < res.n_outputs; i++) print_summary(&res.outputs[i]);
        if (o->profile) print_profile(&res);
        if (o->trace && write_trace(o->trace, &res) != 0) goto out;
    }
    printf("latency: median %.3f ms, p90 %.3f ms, min %.3f ms over %d run%s (after %d warmup)\n",
           res.median_ms, res.p90_ms, res.min_ms, res.n_times, res.n_times == 1 ? "" : "s", o->warmup);
    if (o->save_dir && !bench) {
        if (rpc_mkdir(o->save_dir) != 0 && errno != EEXIST) {
            fprintf(stderr, "tinyinfer-rpc: cannot create %s: %s\n", o->save_dir, strerror(errno));
            goto out;
        }
        for (int i = 0; i < res.n_outputs; i++) {
            const tirpc_tensor *t = &res.outputs[i];
            ti_tensor v;
            char path[1200];
            memset(&v, 0, sizeof(v));
            v.name = t->name, v.dtype = t->dtype, v.rank = t->rank, v.data = t->data, v.size_bytes = t->bytes;
            memcpy(v.shape, t->shape, sizeof(v.shape));
            output_path(path, sizeof(path), o->save_dir, t->name, i);
            if (!td_save_npy(path, &v, msg, sizeof(msg))) {
                fprintf(stderr, "tinyinfer-rpc: %s\n", msg);
                goto out;
            }
            printf("saved %s\n", path);
        }
    }
    rc = 0;
out:
    tirpc_run_res_free(&res);
    tirpc_close(c);
    for (int k = 0; k < n_loaded; k++) td_tensor_free(&files[k]);
    free(model);
    free(tuning);
    return rc;
}

int main(int argc, char **argv)
{
    opts o;
    int rc = parse(argc, argv, &o);
    if (rc != 0) return rc;
    if (strcmp(o.cmd, "serve") == 0) return cmd_serve(&o);
#ifdef SIGPIPE
    signal(SIGPIPE, SIG_IGN);
#endif
    if (strcmp(o.cmd, "info") == 0) return cmd_info(&o);
    return cmd_run(&o, strcmp(o.cmd, "bench") == 0);
}
