/* tinyinfer-tune: measures every node's candidate launch settings (ti_node_info.tunables:
 * the conv variant, its k splits, local sizes) of a model on a device, locally or on a
 * remote tinyinfer-rpc server, and writes the fastest as a tuning file that sessions load
 * with desc.tuning_file (tinyinfer-run --tuning FILE).
 *
 * Never loses work: each trial is written to a journal before it is launched and its
 * result after (one checksummed, fsync'd line each), so a rerun resumes where the last
 * one stopped, repeating no finished trial. A trial whose run crashed the server's session
 * (a fault signal: the server records the run's key before dying, CRASH_QUERY) is recorded
 * as crashed after that one launch and never tried again; a trial cut with no such record
 * (the server killed from outside, the device or the tuner gone) is run once more, and cut
 * twice it is recorded as crashed too; damaged or partial lines are skipped. When the server is lost the tuner
 * waits and reconnects with back-off, up to --reconnect-limit seconds.
 *
 * Search: trial 0 runs every node's default; trial t gives each node the t-th of its
 * candidates in an order drawn from --seed (nodes with fewer candidates run their default),
 * so one trial measures one candidate of every node at once, each timed by the per-node
 * profile (median of --repeat runs). A node keeps its default unless a candidate beats it
 * by --min-gain percent; the result is then checked against the untuned model as a whole.
 *
 * Build: cc -O2 -I. tools/tinyinfer-tune.c -o tinyinfer-tune -lm -lpthread */
#define _POSIX_C_SOURCE 200809L
#define TINYINFER_IMPLEMENTATION
#include "tinyinfer.h"
#define TI_RPC_IMPLEMENTATION
#include "rpc/ti_rpc.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#ifdef _WIN32 /* MinGW: the few POSIX calls this tool uses, by their Windows names */
#include <io.h>
#define fsync(fd) _commit(fd)
#define setenv(name, value, overwrite) _putenv_s(name, value)
#define rename(from, to) (MoveFileExA(from, to, MOVEFILE_REPLACE_EXISTING) ? 0 : -1)
static ssize_t pread(int fd, void *buf, size_t n, off_t at) {
    if (_lseeki64(fd, at, SEEK_SET) < 0) return -1;
    return (ssize_t)_read(fd, buf, (unsigned)n);
}
#endif
#ifndef O_BINARY
#define O_BINARY 0 /* Windows: no \r\n translation in the journal */
#endif

#define MAX_CAND 64   /* candidates a node may list */
#define LINE_MAX_ 8192 /* one journal line */

typedef struct opts {
    const char *model, *remote, *listen, *via, *out, *journal, *device, *token, *server_cmd;
    ti_backend backend;
    int threads, repeat, warmup, max_trials, quiet;
    uint64_t seed;
    double reconnect_limit, min_gain, timeout;
} opts;

typedef struct tnode {
    char name[256]; /* as the profile names it */
    char key[800];  /* how the tuning file names it: the escaped name, or #index when the
                     * name is empty or not unique */
    int index; /* in the session's plan */
    int n_cand;
    char *cand[MAX_CAND];
    int order[MAX_CAND]; /* order[t]: the candidate trial t gives it */
} tnode;

typedef struct trial {
    int begins, done, valid, crashed; /* crashed: the server recorded it dying of a fault
                                       * signal, or cut twice; never run again */
    double total_ms;
    double *ms; /* per tunable node; < 0: not valid for that node */
} trial;

typedef struct tuner {
    opts o;
    unsigned char *model;
    size_t model_size;
    char sha[65];
    uint8_t sha_raw[32];
    int no_crash_records; /* the server answered CRASH_QUERY with "unknown message" */
    tirpc_conn *conn;
    int listen_fd;
    char device[256];
    tnode *nodes;
    int n_nodes, n_trials;
    trial *trials;
    int jfd;
    char header[LINE_MAX_];
    int reconnects;
} tuner;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_s(double s) {
    struct timespec ts;
    ts.tv_sec = (time_t)s;
    ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

static void usage(FILE *f) {
    fprintf(f,
            "usage: tinyinfer-tune MODEL [--remote HOST:PORT | --listen [HOST:]PORT | --via COMMAND]\n"
            "                      [--backend opencl|cpu|auto] [--device SEL] [--threads N]\n"
            "                      [--out FILE] [--journal FILE] [--seed S] [--repeat N] [--warmup N]\n"
            "                      [--max-trials N] [--min-gain PERCENT] [--reconnect-limit SECONDS]\n"
            "                      [--timeout SECONDS] [--token T | --token-file FILE] [--quiet]\n"
            "Where it runs (default: locally, in a child `tinyinfer-rpc serve --stdio` beside this\n"
            "program, so a candidate that crashes cannot take the tuner down):\n"
            "--remote HOST:PORT   a server started with `tinyinfer-rpc serve --port PORT`\n"
            "--listen [HOST:]PORT wait for a server that dials in (`serve --connect HOST:PORT`)\n"
            "--via COMMAND        spawn COMMAND (`ssh phone tinyinfer-rpc serve --stdio`) and talk\n"
            "                     over its stdin/stdout\n"
            "--server-cmd CMD     the local server command (default: DIR/tinyinfer-rpc serve --stdio)\n"
            "--backend B          opencl (default), cpu or auto\n"
            "--out FILE           the tuning file (default MODEL.tuning), written atomically\n"
            "--journal FILE       the trial journal (default OUT.journal); a rerun resumes from it\n"
            "--seed S             order of the candidates (default 1): same seed, same trials\n"
            "--repeat N           timed runs per trial (default 10), after --warmup N (default 2)\n"
            "--max-trials N       at most N trials (default: enough for every candidate)\n"
            "--min-gain P         a node leaves its default only for a P %% faster candidate (2)\n"
            "--reconnect-limit S  how long to keep reconnecting to a lost server (default 600)\n"
            "--timeout S          silence that means the connection is lost (default 60)\n"
            "--token T, --token-file FILE  the server's shared token (else $TINYINFER_RPC_TOKEN)\n");
}

/* ---- CRC-32 and the journal ----------------------------------------------------------- */

static uint32_t crc32_of(const char *p, size_t n) {
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        c ^= (unsigned char)p[i];
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
    }
    return ~c;
}

/* Appends "CONTENT #crc\n" and fsyncs; -1 on failure (disk full: the tuner stops). */
static int journal_put(tuner *t, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static int journal_put(tuner *t, const char *fmt, ...) {
    char line[LINE_MAX_];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 16, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof line - 16) return -1;
    n += snprintf(line + n, 16, " #%08x\n", (unsigned)crc32_of(line, (size_t)n));
    for (int off = 0; off < n;) {
        ssize_t w = write(t->jfd, line + off, (size_t)(n - off));
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        off += (int)w;
    }
    return fsync(t->jfd);
}

/* The content of a journal line whose checksum holds (the line is cut there); NULL else. */
static char *journal_check(char *line) {
    size_t n = strlen(line);
    if (n < 11 || line[n - 10] != ' ' || line[n - 9] != '#') return NULL;
    char *end;
    unsigned long want = strtoul(line + n - 8, &end, 16);
    if (*end != 0) return NULL;
    if (crc32_of(line, n - 10) != (uint32_t)want) return NULL;
    line[n - 10] = 0;
    return line;
}

/* Spaces and control bytes as %XX (names and reasons in one token). */
static void escape(const char *s, char *out, size_t cap) {
    size_t o = 0;
    for (; *s && o + 4 < cap; s++) {
        unsigned char c = (unsigned char)*s;
        if (c <= ' ' || c >= 0x7f || c == '%' || c == '#') o += (size_t)snprintf(out + o, cap - o, "%%%02X", c);
        else out[o++] = (char)c;
    }
    out[o] = 0;
}

/* ---- connections ------------------------------------------------------------------- */

static tirpc_conn *connect_once(tuner *t, double wait_s, char *why, size_t n) {
    const opts *o = &t->o;
    const char *token = getenv("TINYINFER_RPC_TOKEN");
    if (o->remote) return tirpc_dial(o->remote, token, o->timeout, why, n);
    if (o->listen) {
        if (t->listen_fd < 0) t->listen_fd = tirpc_listen(o->listen, why, n);
        if (t->listen_fd < 0) return NULL;
        return tirpc_accept(t->listen_fd, token, wait_s > 0.5 ? wait_s : 0.5, why, n);
    }
    tirpc_conn *c = tirpc_spawn(o->via ? o->via : o->server_cmd, token, why, n);
    if (c != NULL) tirpc_set_timeout(c, o->timeout);
    return c;
}

/* Connects, retrying with back-off (0.2 s doubling to 5 s) up to --reconnect-limit. */
static int ensure_connected(tuner *t) {
    if (t->conn != NULL) return 0;
    double t0 = now_s(), back = 0.2;
    char why[512] = "";
    for (int attempt = 0;; attempt++) {
        double left = t->o.reconnect_limit - (now_s() - t0);
        t->conn = connect_once(t, left < 5 ? left : 5, why, sizeof why);
        if (t->conn != NULL) {
            if (attempt > 0 && !t->o.quiet) fprintf(stderr, "tinyinfer-tune: reconnected after %.1f s\n", now_s() - t0);
            return 0;
        }
        if (now_s() - t0 >= t->o.reconnect_limit) {
            fprintf(stderr, "tinyinfer-tune: no server after %.0f s (%s); the journal keeps every finished "
                            "trial: rerun to resume\n", t->o.reconnect_limit, why);
            return -1;
        }
        if (attempt == 0 && !t->o.quiet) fprintf(stderr, "tinyinfer-tune: cannot reach the server (%s); retrying\n", why);
        sleep_s(back);
        back = back * 2 > 5 ? 5 : back * 2;
    }
}

/* One RUN, reconnecting first when needed. 0: a reply (res filled); -1: the connection was
 * lost during it (the caller decides whether to retry); -2: no server within the limit. */
static int remote_run(tuner *t, const char *tuning, int profile, int repeat, tirpc_run_res *res) {
    if (ensure_connected(t) != 0) return -2;
    tirpc_run_req q;
    memset(&q, 0, sizeof q);
    q.model = t->model;
    q.model_size = t->model_size;
    q.backend = t->o.backend;
    q.threads = t->o.threads;
    q.warmup = t->o.warmup;
    q.repeat = repeat;
    q.profile = profile;
    q.seed = 1;
    q.device = t->o.device;
    q.tuning = tuning;
    q.model_name = t->o.model;
    char why[512];
    memset(res, 0, sizeof *res);
    if (tirpc_run(t->conn, &q, res, why, sizeof why) == 0 && res->rpc_error == 0) return 0;
    if (!t->o.quiet) fprintf(stderr, "\ntinyinfer-tune: connection lost (%s)\n", res->rpc_error ? res->error : why);
    tirpc_run_res_free(res);
    tirpc_close(t->conn);
    t->conn = NULL;
    t->reconnects++;
    return -1;
}

/* ---- the plan of trials ------------------------------------------------------------- */

static uint64_t splitmix(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The tunable nodes of the probe run and each one's seeded order of candidates. */
static int make_plan(tuner *t, const tirpc_run_res *probe) {
    t->nodes = (tnode *)calloc((size_t)probe->n_nodes + 1, sizeof *t->nodes);
    if (t->nodes == NULL) return -1;
    for (int i = 0; i < probe->n_nodes; i++) {
        const tirpc_node *pn = &probe->nodes[i];
        if (pn->tunables == NULL || pn->tunables[0] == 0 || strchr(pn->tunables, '|') == NULL) continue;
        tnode *nd = &t->nodes[t->n_nodes];
        snprintf(nd->name, sizeof nd->name, "%s", pn->name);
        nd->index = i;
        int unique = pn->name[0] != 0;
        for (int j = 0; j < probe->n_nodes && unique; j++)
            if (j != i && strcmp(probe->nodes[j].name, pn->name) == 0) unique = 0;
        if (unique) escape(pn->name, nd->key, sizeof nd->key);
        else snprintf(nd->key, sizeof nd->key, "#%d", i);
        for (const char *c = pn->tunables; c && nd->n_cand < MAX_CAND;) {
            const char *bar = strchr(c, '|');
            size_t len = bar ? (size_t)(bar - c) : strlen(c);
            nd->cand[nd->n_cand] = (char *)malloc(len + 1);
            if (nd->cand[nd->n_cand] == NULL) return -1;
            memcpy(nd->cand[nd->n_cand], c, len);
            nd->cand[nd->n_cand++][len] = 0;
            c = bar ? bar + 1 : NULL;
        }
        uint64_t x = t->o.seed ^ ((uint64_t)crc32_of(nd->name, strlen(nd->name)) << 20);
        for (int k = 0; k < nd->n_cand; k++) nd->order[k] = k;
        for (int k = nd->n_cand - 1; k > 1; k--) { /* Fisher-Yates over 1..n-1: 0 stays first */
            int j = 1 + (int)(splitmix(&x) % (uint64_t)k);
            int tmp = nd->order[k];
            nd->order[k] = nd->order[j];
            nd->order[j] = tmp;
        }
        if (nd->n_cand > t->n_trials) t->n_trials = nd->n_cand;
        t->n_nodes++;
    }
    if (t->o.max_trials > 0 && t->n_trials > t->o.max_trials) t->n_trials = t->o.max_trials;
    t->trials = (trial *)calloc((size_t)t->n_trials + 1, sizeof *t->trials);
    if (t->trials == NULL) return -1;
    for (int k = 0; k < t->n_trials; k++) {
        t->trials[k].ms = (double *)malloc(sizeof(double) * ((size_t)t->n_nodes + 1));
        if (t->trials[k].ms == NULL) return -1;
        for (int i = 0; i < t->n_nodes; i++) t->trials[k].ms[i] = -1;
    }
    return 0;
}

/* The candidate node i runs in trial k. */
static int cand_of(const tuner *t, int i, int k) {
    const tnode *nd = &t->nodes[i];
    return k < nd->n_cand ? nd->order[k] : 0;
}

/* Tuning text giving node i candidate pick(i) (-1: the default, no line). */
static char *tuning_text(const tuner *t, int k, const int *pick, int with_header_lines) {
    size_t cap = 1024;
    for (int i = 0; i < t->n_nodes; i++) cap += strlen(t->nodes[i].key) + 300;
    char *s = (char *)malloc(cap);
    if (s == NULL) return NULL;
    size_t at = (size_t)snprintf(s, cap, "tinyinfer-tuning 1\n");
    if (with_header_lines) at += (size_t)snprintf(s + at, cap - at, "device %s\nmodel %s\n", t->device, t->sha);
    for (int i = 0; i < t->n_nodes; i++) {
        int c = pick ? pick[i] : cand_of(t, i, k);
        if (c <= 0) continue;
        at += (size_t)snprintf(s + at, cap - at, "node %s %s\n", t->nodes[i].key, t->nodes[i].cand[c]);
    }
    return s;
}

/* ---- resume ------------------------------------------------------------------------- */

/* Reads the journal: the header must be ours; B and R lines fill the trials. Lines whose
 * checksum fails (a cut write, damage) are skipped. */
static int journal_open(tuner *t) {
    const char *path = t->o.journal;
    FILE *f = fopen(path, "rb");
    int have_header = 0, skipped = 0, results = 0;
    if (f != NULL) {
        char *line = (char *)malloc(1 << 20);
        if (line == NULL) {
            fclose(f);
            return -1;
        }
        while (fgets(line, 1 << 20, f) != NULL) {
            size_t n = strlen(line);
            if (n == 0 || line[n - 1] != '\n') { /* cut short: the last write of a killed run */
                skipped++;
                continue;
            }
            line[n - 1] = 0;
            char *c = journal_check(line);
            if (c == NULL) {
                skipped++;
                continue;
            }
            if (c[0] == 'H') {
                if (strcmp(c, t->header) != 0) {
                    fprintf(stderr,
                            "tinyinfer-tune: %s was written for another model, device, plan or seed:\n"
                            "  journal: %s\n  now:     %s\nremove it or give another --journal\n",
                            path, c, t->header);
                    free(line);
                    fclose(f);
                    return -1;
                }
                have_header = 1;
                continue;
            }
            int k = -1, off = 0;
            if (sscanf(c + 1, " %d%n", &k, &off) != 1 || k < 0 || k >= t->n_trials || !have_header) {
                skipped++;
                continue;
            }
            trial *tr = &t->trials[k];
            const char *rest = c + 1 + off;
            if (c[0] == 'B') {
                tr->begins++;
            } else if (c[0] == 'R' && !tr->done) {
                if (strncmp(rest, " ok ", 4) == 0) {
                    char *p = (char *)rest + 4, *e;
                    tr->total_ms = strtod(p, &e);
                    int i = 0;
                    for (p = e; i < t->n_nodes; i++) {
                        while (*p == ' ') p++;
                        if (*p == 'x') {
                            tr->ms[i] = -1;
                            p++;
                        } else {
                            tr->ms[i] = strtod(p, &e);
                            if (e == p) break;
                            p = e;
                        }
                    }
                    if (i < t->n_nodes) { /* a well-formed checksum over a short line: not ours */
                        skipped++;
                        continue;
                    }
                    tr->valid = 1;
                } else {
                    tr->valid = 0;
                    tr->crashed = strncmp(rest, " invalid crashed", 16) == 0;
                }
                tr->done = 1;
                results++;
            }
        }
        free(line);
        fclose(f);
    }
    t->jfd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_BINARY, 0644);
    if (t->jfd < 0) {
        fprintf(stderr, "tinyinfer-tune: cannot open the journal %s: %s\n", path, strerror(errno));
        return -1;
    }
    /* a line cut by a kill has no newline: end it, so the next line starts clean */
    struct stat st;
    if (fstat(t->jfd, &st) == 0 && st.st_size > 0) {
        int rfd = open(path, O_RDONLY | O_BINARY);
        char last = '\n';
        if (rfd >= 0) {
            if (pread(rfd, &last, 1, st.st_size - 1) != 1) last = '\n';
            close(rfd);
        }
        if (last != '\n' && write(t->jfd, "\n", 1) != 1) return -1;
    }
    if (!have_header && journal_put(t, "%s", t->header) != 0) return -1;
    if (results > 0 || skipped > 0)
        printf("journal %s: %d of %d trials done before, %d damaged line(s) skipped\n", path, results,
               t->n_trials, skipped);
    return 0;
}

/* ---- trials ------------------------------------------------------------------------- */

static void progress(const tuner *t, int done, double t0, int done0) {
    if (t->o.quiet) return;
    if (!isatty(2)) return;
    int width = 30, fill = t->n_trials ? done * width / t->n_trials : width;
    double el = now_s() - t0, eta = done > done0 ? el / (done - done0) * (t->n_trials - done) : 0;
    char bar[64];
    for (int i = 0; i < width; i++) bar[i] = i < fill ? '#' : '.';
    bar[width] = 0;
    fprintf(stderr, "\r[%s] %d/%d trials  ETA %dm%02ds ", bar, done, t->n_trials, (int)eta / 60, (int)eta % 60);
    if (done == t->n_trials) fprintf(stderr, "\n");
}

/* Asks the server whether trial k's run died of a fault signal in a session (the server
 * records that before dying; a server killed from outside leaves no record). The signal, 0
 * when there is no record (or the server keeps none), -1 when no server comes back. */
static int crash_record(tuner *t, int k) {
    if (t->no_crash_records) return 0;
    for (int attempt = 0; attempt < 3; attempt++) {
        if (ensure_connected(t) != 0) return -1;
        char *text = tuning_text(t, k, NULL, 0);
        if (text == NULL) return -1;
        uint8_t key[32];
        tirpc_run_key(t->sha_raw, (int)t->o.backend, t->o.device, text, key);
        free(text);
        int sig = 0;
        char why[512];
        int r = tirpc_crash_query(t->conn, key, &sig, why, sizeof why);
        if (r == 0) return sig;
        if (r > 0) { /* ERROR: a server that keeps no crash records (5), or refused the query */
            if (!t->o.quiet) fprintf(stderr, "\ntinyinfer-tune: the server keeps no crash records (%s): a trial cut twice counts as crashed\n", why);
            t->no_crash_records = 1;
            return 0;
        }
        tirpc_close(t->conn); /* lost while asking: reconnect and ask again */
        t->conn = NULL;
        t->reconnects++;
    }
    return 0;
}

/* Runs the trials the journal lacks. 0 when all are done; -1 when the server is gone. */
static int run_trials(tuner *t) {
    int done = 0;
    for (int k = 0; k < t->n_trials; k++) done += t->trials[k].done;
    int done0 = done;
    double t0 = now_s();
    progress(t, done, t0, done0);
    for (int k = 0; k < t->n_trials; k++) {
        trial *tr = &t->trials[k];
        while (!tr->done) {
            if (tr->begins >= 1) { /* begun before without a result: did it crash the server? */
                int sig = crash_record(t, k);
                if (sig < 0) return -1;
                if (sig > 0) {
                    if (journal_put(t, "R %d invalid crashed signal %d", k, sig) != 0) return -1;
                    tr->done = tr->crashed = 1;
                    if (!t->o.quiet) fprintf(stderr, "\ntrial %d: crashed the server (signal %d): not run again\n", k, sig);
                    break;
                }
            }
            if (tr->begins >= 2) { /* cut twice with no record (the server, device or tuner
                                    * died whole, or an old server): never again */
                if (journal_put(t, "R %d invalid crashed-twice", k) != 0) return -1;
                tr->done = tr->crashed = 1;
                break;
            }
            if (ensure_connected(t) != 0) return -1;
            char *text = tuning_text(t, k, NULL, 0);
            if (text == NULL) return -1;
            if (journal_put(t, "B %d", k) != 0) {
                free(text);
                return -1;
            }
            tr->begins++;
            tirpc_run_res res;
            int r = remote_run(t, text, 1, t->o.repeat, &res);
            free(text);
            if (r == -2) return -1;
            if (r == -1) continue; /* lost mid-trial: the next pass retries it (or calls it crashed) */
            int ok = res.status == 0 && res.n_nodes > 0;
            char line[LINE_MAX_];
            size_t at = 0;
            if (ok) {
                at += (size_t)snprintf(line, sizeof line, "R %d ok %.6f", k, res.median_ms);
                for (int i = 0; i < t->n_nodes && at < sizeof line - 32; i++) {
                    const tnode *nd = &t->nodes[i];
                    const tirpc_node *rn = nd->index < res.n_nodes ? &res.nodes[nd->index] : NULL;
                    int good = rn != NULL && strcmp(rn->name, nd->name) == 0 && rn->launch_retries == 0 &&
                               rn->time_ms >= 0;
                    tr->ms[i] = good ? rn->time_ms : -1;
                    at += good ? (size_t)snprintf(line + at, sizeof line - at, " %.6f", rn->time_ms)
                               : (size_t)snprintf(line + at, sizeof line - at, " x");
                }
                tr->total_ms = res.median_ms;
            } else {
                char why[600];
                escape(res.error[0] ? res.error : "no profile in the reply", why, sizeof why);
                snprintf(line, sizeof line, "R %d invalid %s", k, why);
            }
            tirpc_run_res_free(&res);
            if (journal_put(t, "%s", line) != 0) return -1;
            tr->done = 1;
            tr->valid = ok;
            if (!ok && !t->o.quiet) fprintf(stderr, "\ntrial %d: invalid: %s\n", k, line);
        }
        done++;
        progress(t, done, t0, done0);
    }
    return 0;
}

/* ---- choosing and checking ---------------------------------------------------------- */

/* Per node, the candidate with the lowest time over the valid trials; the default unless
 * another is min_gain percent faster. pick[i] = -1 (default) or the candidate index. */
static void choose(const tuner *t, int *pick, double *gain_ms) {
    *gain_ms = 0;
    for (int i = 0; i < t->n_nodes; i++) {
        const tnode *nd = &t->nodes[i];
        double best[MAX_CAND];
        for (int c = 0; c < nd->n_cand; c++) best[c] = -1;
        for (int k = 0; k < t->n_trials; k++) {
            const trial *tr = &t->trials[k];
            if (!tr->valid || tr->ms[i] < 0) continue;
            int c = cand_of(t, i, k);
            if (best[c] < 0 || tr->ms[i] < best[c]) best[c] = tr->ms[i];
        }
        int b = 0;
        for (int c = 1; c < nd->n_cand; c++)
            if (best[c] >= 0 && (best[b] < 0 || best[c] < best[b])) b = c;
        pick[i] = -1;
        if (b > 0 && best[0] >= 0 && best[b] < best[0] * (1.0 - t->o.min_gain / 100.0)) {
            pick[i] = b;
            *gain_ms += best[0] - best[b];
        }
    }
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The whole model, untuned and tuned, in alternating rounds: medians of the rounds'
 * medians. 0 and *untuned_ms, *tuned_ms; -1 when the server is gone. */
static int confirm(tuner *t, const char *tuned, double *untuned_ms, double *tuned_ms) {
    enum { ROUNDS = 5 };
    double u[ROUNDS], v[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
        for (int which = 0; which < 2; which++) {
            for (;;) {
                tirpc_run_res res;
                int e = remote_run(t, which ? tuned : NULL, 0, t->o.repeat, &res);
                if (e == -2) return -1;
                if (e == -1) continue;
                double ms = res.median_ms;
                int ok = res.status == 0;
                if (!ok) fprintf(stderr, "tinyinfer-tune: the %s model failed: %s\n", which ? "tuned" : "untuned", res.error);
                tirpc_run_res_free(&res);
                if (!ok) return -1;
                (which ? v : u)[r] = ms;
                break;
            }
        }
    }
    qsort(u, ROUNDS, sizeof u[0], cmp_double);
    qsort(v, ROUNDS, sizeof v[0], cmp_double);
    *untuned_ms = u[ROUNDS / 2];
    *tuned_ms = v[ROUNDS / 2];
    return 0;
}

static int write_atomically(const char *path, const char *text) {
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (f == NULL) return -1;
    int ok = fputs(text, f) >= 0;
    ok = fflush(f) == 0 && ok;
    ok = fsync(fileno(f)) == 0 && ok;
    ok = fclose(f) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        remove(tmp);
        return -1;
    }
    return 0;
}

/* ---- main --------------------------------------------------------------------------- */

static int parse_args(int argc, char **argv, opts *o) {
    memset(o, 0, sizeof *o);
    o->backend = TI_BACKEND_OPENCL;
    o->repeat = 10;
    o->warmup = 2;
    o->seed = 1;
    o->reconnect_limit = 600;
    o->min_gain = 2;
    o->timeout = 60;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int val = 1;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            exit(0);
        } else if (strcmp(a, "--quiet") == 0) {
            o->quiet = 1;
            val = 0;
        } else if (a[0] != '-') {
            if (o->model != NULL) return -1;
            o->model = a;
            val = 0;
        } else if (v == NULL) {
            return -1;
        } else if (strcmp(a, "--remote") == 0) o->remote = v;
        else if (strcmp(a, "--listen") == 0) o->listen = v;
        else if (strcmp(a, "--via") == 0) o->via = v;
        else if (strcmp(a, "--server-cmd") == 0) o->server_cmd = v;
        else if (strcmp(a, "--out") == 0) o->out = v;
        else if (strcmp(a, "--journal") == 0) o->journal = v;
        else if (strcmp(a, "--device") == 0) o->device = v;
        else if (strcmp(a, "--token") == 0) o->token = v;
        else if (strcmp(a, "--token-file") == 0) {
            char msg[600];
            size_t n;
            char *tok = td_read_file(v, &n, msg, sizeof msg); /* NUL-terminated */
            if (tok == NULL) {
                fprintf(stderr, "tinyinfer-tune: %s\n", msg);
                return -1;
            }
            while (n > 0 && (tok[n - 1] == '\n' || tok[n - 1] == '\r')) n--;
            tok[n] = 0;
            o->token = tok; /* lives until exit */
        } else if (strcmp(a, "--backend") == 0) {
            if (strcmp(v, "opencl") == 0) o->backend = TI_BACKEND_OPENCL;
            else if (strcmp(v, "cpu") == 0) o->backend = TI_BACKEND_CPU;
            else if (strcmp(v, "auto") == 0) o->backend = TI_BACKEND_AUTO;
            else return -1;
        } else if (strcmp(a, "--threads") == 0) o->threads = atoi(v);
        else if (strcmp(a, "--repeat") == 0) o->repeat = atoi(v);
        else if (strcmp(a, "--warmup") == 0) o->warmup = atoi(v);
        else if (strcmp(a, "--max-trials") == 0) o->max_trials = atoi(v);
        else if (strcmp(a, "--seed") == 0) o->seed = strtoull(v, NULL, 10);
        else if (strcmp(a, "--min-gain") == 0) o->min_gain = atof(v);
        else if (strcmp(a, "--reconnect-limit") == 0) o->reconnect_limit = atof(v);
        else if (strcmp(a, "--timeout") == 0) o->timeout = atof(v);
        else return -1;
        i += val;
    }
    if (o->model == NULL || o->repeat < 1 || o->warmup < 0 || o->reconnect_limit < 0 || o->timeout <= 0)
        return -1;
    if ((o->remote != NULL) + (o->listen != NULL) + (o->via != NULL) > 1) return -1;
    return 0;
}

int main(int argc, char **argv) {
    tuner t;
    memset(&t, 0, sizeof t);
    t.listen_fd = -1;
    t.jfd = -1;
    if (parse_args(argc, argv, &t.o) != 0) {
        usage(stderr);
        return 2;
    }
    opts *o = &t.o;
#ifdef SIGPIPE
    signal(SIGPIPE, SIG_IGN); /* a lost server shows as an error, not a signal */
#endif
    char out_default[4096], journal_default[4200], server_default[4400];
    if (o->out == NULL) {
        snprintf(out_default, sizeof out_default, "%s.tuning", o->model);
        o->out = out_default;
    }
    if (o->journal == NULL) {
        snprintf(journal_default, sizeof journal_default, "%s.journal", o->out);
        o->journal = journal_default;
    }
    if (o->token != NULL) setenv("TINYINFER_RPC_TOKEN", o->token, 1);
#ifdef _WIN32
    if (!o->remote && !o->listen) { /* no child servers over pipes here (tirpc_spawn) */
        fprintf(stderr, "tinyinfer-tune: on Windows start `tinyinfer-rpc serve --port P` and give "
                        "--remote 127.0.0.1:P (or --listen)\n");
        return 2;
    }
#endif
    if (!o->remote && !o->listen && !o->via) {
        if (o->server_cmd == NULL) { /* tinyinfer-rpc beside this program */
            char dir[4096];
            snprintf(dir, sizeof dir, "%s", argv[0]);
            char *slash = strrchr(dir, '/');
            if (slash != NULL) *slash = 0;
            else snprintf(dir, sizeof dir, ".");
            snprintf(server_default, sizeof server_default, "'%s/tinyinfer-rpc' serve --stdio", dir);
            o->server_cmd = server_default;
        }
        if (getenv("TINYINFER_RPC_TOKEN") == NULL) { /* a local child: a fresh random token */
            uint8_t r[16];
            char hex[33];
            FILE *f = fopen("/dev/urandom", "rb");
            if (f == NULL || fread(r, 1, sizeof r, f) != sizeof r) {
                if (f) fclose(f);
                fprintf(stderr, "tinyinfer-tune: cannot read /dev/urandom\n");
                return 1;
            }
            fclose(f);
            tirpc_hex(r, sizeof r, hex);
            setenv("TINYINFER_RPC_TOKEN", hex, 1);
        }
    } else if (getenv("TINYINFER_RPC_TOKEN") == NULL) {
        fprintf(stderr, "tinyinfer-tune: no token: give --token, --token-file or $TINYINFER_RPC_TOKEN\n");
        return 2;
    }
    char msg[600];
    t.model = (unsigned char *)td_read_file(o->model, &t.model_size, msg, sizeof msg);
    if (t.model == NULL) {
        fprintf(stderr, "tinyinfer-tune: %s\n", msg);
        return 1;
    }
    uint8_t sha[32];
    tirpc_sha256_once(t.model, t.model_size, sha);
    tirpc_hex(sha, sizeof sha, t.sha);
    memcpy(t.sha_raw, sha, sizeof sha);

    /* the probe: one profiled untuned run lists the nodes and their candidates */
    tirpc_run_res probe;
    for (;;) {
        int e = remote_run(&t, NULL, 1, 1, &probe);
        if (e == -2) return 1;
        if (e == 0) break;
    }
    if (probe.status != 0) {
        fprintf(stderr, "tinyinfer-tune: %s does not run there: %s\n", o->model, probe.error);
        return 1;
    }
    snprintf(t.device, sizeof t.device, "%s", probe.device[0] ? probe.device : probe.backend);
    if (make_plan(&t, &probe) != 0) {
        fprintf(stderr, "tinyinfer-tune: out of memory\n");
        return 1;
    }
    uint32_t plan = 0;
    for (int i = 0; i < t.n_nodes; i++) {
        char buf[LINE_MAX_];
        snprintf(buf, sizeof buf, "%08x %d %s", (unsigned)plan, t.nodes[i].index, probe.nodes[t.nodes[i].index].tunables);
        plan = crc32_of(buf, strlen(buf)) ^ crc32_of(t.nodes[i].name, strlen(t.nodes[i].name));
    }
    tirpc_run_res_free(&probe);
    char dev[600];
    escape(t.device, dev, sizeof dev);
    snprintf(t.header, sizeof t.header,
             "H tinyinfer-tune 1 model=%s backend=%d device=%s threads=%d seed=%llu repeat=%d warmup=%d "
             "trials=%d nodes=%d plan=%08x",
             t.sha, (int)o->backend, dev, o->threads, (unsigned long long)o->seed, o->repeat, o->warmup,
             t.n_trials, t.n_nodes, (unsigned)plan);
    printf("tuning %s on %s: %d tunable nodes, %d trials (journal %s)\n", o->model, t.device, t.n_nodes,
           t.n_trials, o->journal);
    if (journal_open(&t) != 0) return 1;
    if (run_trials(&t) != 0) return 1;

    int *pick = (int *)calloc((size_t)t.n_nodes + 1, sizeof(int));
    if (pick == NULL) return 1;
    double gain;
    choose(&t, pick, &gain);
    int changed = 0;
    for (int i = 0; i < t.n_nodes; i++) changed += pick[i] > 0;
    char *tuned = tuning_text(&t, 0, pick, 1);
    if (tuned == NULL) return 1;
    double u = 0, v = 0;
    if (changed > 0) {
        if (confirm(&t, tuned, &u, &v) != 0) return 1;
        printf("whole model: untuned %.4f ms, tuned %.4f ms (%.3fx) over 5 alternating rounds of %d runs\n", u, v,
               v > 0 ? u / v : 0.0, o->repeat);
        if (v > u) { /* the per-node gains did not add up: keep the defaults */
            printf("the tuned settings were not faster as a whole: the tuning file keeps the defaults\n");
            for (int i = 0; i < t.n_nodes; i++) pick[i] = -1;
            free(tuned);
            tuned = tuning_text(&t, 0, pick, 1);
            if (tuned == NULL) return 1;
            changed = 0;
        }
    }
    if (write_atomically(o->out, tuned) != 0) {
        fprintf(stderr, "tinyinfer-tune: cannot write %s: %s\n", o->out, strerror(errno));
        return 1;
    }
    int crashed = 0, invalid = 0;
    for (int k = 0; k < t.n_trials; k++) {
        invalid += !t.trials[k].valid;
        crashed += t.trials[k].crashed;
    }
    printf("wrote %s: %d of %d nodes off their default (per-node gain %.4f ms); %d trials, %d invalid, "
           "%d crashed, %d reconnects\n",
           o->out, changed, t.n_nodes, gain, t.n_trials, invalid, crashed, t.reconnects);
    free(tuned);
    free(pick);
    tirpc_close(t.conn);
    close(t.jfd);
    for (int i = 0; i < t.n_nodes; i++)
        for (int c = 0; c < t.nodes[i].n_cand; c++) free(t.nodes[i].cand[c]);
    for (int k = 0; k < t.n_trials; k++) free(t.trials[k].ms);
    free(t.trials);
    free(t.nodes);
    free(t.model);
    return 0;
}
