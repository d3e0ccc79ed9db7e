/* tinyinfer-run: runs a model once or --repeat times on random inputs (seeded) or on given
 * .pb (onnx.TensorProto) / .npy files; prints every input and output (name, dtype, shape),
 * a summary of each output (min, max, mean, first values), the median run time, and can
 * save the outputs as .npy. Exits 1 with the library's message on any failure, 2 on usage.
 * Uses only the public API and tests/harness/testdir.h.
 * Build: cc -O2 -I. tools/tinyinfer-run.c -o tinyinfer-run -lm -lpthread */
#define _POSIX_C_SOURCE 200809L
#define TINYINFER_IMPLEMENTATION
#include "tinyinfer.h"
#include "tests/harness/testdir.h"

#include <time.h>
#ifdef _WIN32 /* MinGW-w64 / MSVC: _mkdir takes no mode */
#include <direct.h>
#define run_mkdir(path) _mkdir(path)
#else
#define run_mkdir(path) mkdir(path, 0777)
#endif

#define MAX_FILES 64
#define MAX_DIMS_BOUND 64

typedef struct run_opts {
    const char *model;
    int threads;
    ti_backend backend;
    const char *device;
    int placement;
    ti_precision precision;
    int profile;
    int check_precision;
    const char *trace;
    const char *tuning;
    const char *inputs[MAX_FILES];
    int n_inputs;
    int repeat;
    uint64_t seed;
    ti_dim_binding dims[MAX_DIMS_BOUND];
    int n_dims;
    const char *save_dir;
} run_opts;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: tinyinfer-run MODEL [--threads N] [--input FILE]... [--repeat N] [--seed S]\n"
            "                     [--dim NAME=VALUE]... [--save-outputs DIR]\n"
            "                     [--backend auto|cpu|opencl] [--device SEL] [--placement]\n"
            "                     [--profile] [--trace FILE] [--tuning FILE] [--check-precision]\n"
            "                     [--precision fp32|fp16]\n"
            "--input FILE       .npy or .pb (TensorProto) data for the next model input; a file\n"
            "                   whose tensor name matches an input feeds that input instead\n"
            "                   (inputs without a file get seeded random data: floats uniform\n"
            "                   in [-1, 1], integers in [0, 3], bools 0/1)\n"
            "--threads N        0 (default): the library's choice; 1: no worker threads\n"
            "--backend B        auto (default: an OpenCL GPU when there is one), cpu or opencl\n"
            "                   (any OpenCL device; an error when none can be used)\n"
            "--device SEL       OpenCL device: gpu, cpu, an index or a part of its name\n"
            "--placement        print where each node runs (CPU or OpenCL) and why\n"
            "--precision P      fp32 (default) or fp16: allow the OpenCL backend to store\n"
            "                   tensors as halves (and compute in half where the device can)\n"
            "--profile          time every node of the last run (device times on OpenCL) and\n"
            "                   print them, with the time per op type and the transfers\n"
            "--trace FILE       write the last run's profile as Chrome trace JSON (Perfetto)\n"
            "--tuning FILE      per-node OpenCL launch settings written by tinyinfer-tune\n"
            "--check-precision  compare the backend (OpenCL, in the precision the session\n"
            "                   allows) with the CPU in fp32 on these inputs: each output and\n"
            "                   the 10 layers with the largest relative error\n"
            "--repeat N         run N times and report the median time (default 1)\n"
            "--seed S           random seed (default 1)\n"
            "--dim NAME=VALUE   bind a symbolic input dim (unbound ones default to 1)\n"
            "--save-outputs DIR write each output to DIR/<name>.npy\n");
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* --check-precision: the outputs, then the worst layers by relative error. */
static int cmp_rel(const void *a, const void *b) {
    double x = ((const ti_precision_row *)a)->max_rel, y = ((const ti_precision_row *)b)->max_rel;
    return x < y ? 1 : x > y ? -1 : 0;
}
static int print_precision(ti_session *s) {
    ti_error err;
    int n = ti_session_check_precision(s, NULL, 0, &err);
    ti_precision_row *rows = n > 0 ? (ti_precision_row *)calloc((size_t)n, sizeof *rows) : NULL;
    if (n < 0 || (n > 0 && rows == NULL) || ti_session_check_precision(s, rows, n, &err) != n) {
        fprintf(stderr, "tinyinfer-run: precision check: %s\n", n < 0 ? err.message : "out of memory");
        free(rows);
        return 1;
    }
    printf("precision check (this backend vs the CPU in fp32, same inputs):\n");
    int no = 0;
    for (int i = 0; i < n && rows[i].node < 0; i++, no++)
        printf("  output %-30s max |diff| %.3g, / max |cpu| %.3g (%zu values)\n", rows[i].name, rows[i].max_abs,
               rows[i].max_rel, rows[i].count);
    qsort(rows + no, (size_t)(n - no), sizeof *rows, cmp_rel);
    for (int i = no; i < n && i < no + 10; i++)
        printf("  node %4d %-6s %-30s max |diff| %.3g, / max |cpu| %.3g\n", rows[i].node,
               rows[i].backend == TI_BACKEND_OPENCL ? "opencl" : "cpu", rows[i].name, rows[i].max_abs, rows[i].max_rel);
    free(rows);
    return 0;
}

/* The last run's profile: one line per node, then the time per op type (largest first),
 * then where the run's time went. */
#define MAX_OP_TYPES 128
static int print_profile(const ti_session *s)
{
    ti_session_info info;
    int nn = ti_session_num_nodes(s);
    const char *ops[MAX_OP_TYPES];
    double op_ms[MAX_OP_TYPES];
    int op_n[MAX_OP_TYPES], n_ops = 0;
    double sum = 0.0;
    if (ti_session_get_info(s, &info) != TI_OK) return 1;
    for (int i = 0; i < nn; i++) {
        ti_node_info ni;
        if (ti_session_node_info(s, i, &ni) == TI_OK && ni.time_ms > 0) sum += ni.time_ms;
    }
    printf("profile of the last run (%s times):\n", info.backend == TI_BACKEND_OPENCL ? "device kernel / CPU wall" : "CPU wall");
    printf("  %4s %-6s %-22s %9s %6s %10s  %s\n", "node", "where", "op", "ms", "%", "bytes in", "name");
    for (int i = 0; i < nn; i++) {
        ti_node_info ni;
        if (ti_session_node_info(s, i, &ni) != TI_OK) continue;
        double ms = ni.time_ms > 0 ? ni.time_ms : 0.0;
        printf("  %4d %-6s %-22s %9.4f %5.1f%% %10zu  %s\n", i,
               ni.backend == TI_BACKEND_OPENCL ? "opencl" : "cpu", ni.op, ms,
               sum > 0 ? 100.0 * ms / sum : 0.0, ni.bytes_in, ni.name);
        int k = 0;
        while (k < n_ops && strcmp(ops[k], ni.op) != 0) k++;
        if (k == n_ops && n_ops < MAX_OP_TYPES) {
            ops[n_ops] = ni.op;
            op_ms[n_ops] = 0.0;
            op_n[n_ops++] = 0;
        }
        if (k < n_ops) {
            op_ms[k] += ms;
            op_n[k]++;
        }
    }
    printf("  by op type:\n");
    for (int done = 0; done < n_ops; done++) { /* selection: largest remaining first */
        int best = done;
        for (int k = done + 1; k < n_ops; k++)
            if (op_ms[k] > op_ms[best]) best = k;
        const char *to = ops[done];
        double tm = op_ms[done];
        int tn = op_n[done];
        ops[done] = ops[best], op_ms[done] = op_ms[best], op_n[done] = op_n[best];
        ops[best] = to, op_ms[best] = tm, op_n[best] = tn;
        printf("    %-22s %4d nodes %9.4f ms %5.1f%%\n", ops[done], op_n[done], op_ms[done],
               sum > 0 ? 100.0 * op_ms[done] / sum : 0.0);
    }
    printf("  run %.4f ms: nodes %.4f ms", info.run_ms, sum);
    if (info.backend == TI_BACKEND_OPENCL)
        printf(" (kernels %.4f, CPU nodes %.4f); upload %.4f ms, download %.4f ms, %zu bytes moved",
               info.kernel_ms, info.cpu_ms, info.upload_ms, info.download_ms, info.transfer_bytes);
    printf("\n");
    return 0;
}

static void print_value_info(const char *kind, int i, const ti_value_info *vi)
{
    printf("  %s %d '%s' %s ", kind, i, vi->name ? vi->name : "", ti_dtype_name(vi->dtype));
    if (vi->rank < 0) {
        printf("[?]\n");
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

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* DIR/<name with odd characters replaced>.npy */
static void output_path(char *buf, size_t n, const char *dir, const char *name, int k)
{
    char clean[200];
    size_t j = 0;
    for (const char *p = name ? name : ""; *p && j + 1 < sizeof(clean); p++) {
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

static int parse_args(int argc, char **argv, run_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->repeat = 1;
    o->seed = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int has_val = i + 1 < argc;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            exit(0);
        } else if (strcmp(a, "--threads") == 0 && has_val) {
            o->threads = atoi(argv[++i]);
        } else if (strcmp(a, "--backend") == 0 && has_val) {
            const char *b = argv[++i];
            if (strcmp(b, "auto") == 0) o->backend = TI_BACKEND_AUTO;
            else if (strcmp(b, "cpu") == 0) o->backend = TI_BACKEND_CPU;
            else if (strcmp(b, "opencl") == 0) o->backend = TI_BACKEND_OPENCL;
            else {
                fprintf(stderr, "tinyinfer-run: --backend wants auto, cpu or opencl, not '%s'\n", b);
                return 0;
            }
        } else if (strcmp(a, "--precision") == 0 && has_val) {
            const char *p = argv[++i];
            if (strcmp(p, "fp32") == 0) o->precision = TI_PRECISION_FP32;
            else if (strcmp(p, "fp16") == 0) o->precision = TI_PRECISION_FP16;
            else {
                fprintf(stderr, "tinyinfer-run: --precision wants fp32 or fp16, not '%s'\n", p);
                return 0;
            }
        } else if (strcmp(a, "--device") == 0 && has_val) {
            o->device = argv[++i];
        } else if (strcmp(a, "--placement") == 0) {
            o->placement = 1;
        } else if (strcmp(a, "--check-precision") == 0) {
            o->check_precision = 1;
        } else if (strcmp(a, "--profile") == 0) {
            o->profile = 1;
        } else if (strcmp(a, "--trace") == 0 && has_val) {
            o->trace = argv[++i];
        } else if (strcmp(a, "--tuning") == 0 && has_val) {
            o->tuning = argv[++i];
        } else if (strcmp(a, "--input") == 0 && has_val) {
            if (o->n_inputs == MAX_FILES) {
                fprintf(stderr, "tinyinfer-run: at most %d --input files\n", MAX_FILES);
                return 0;
            }
            o->inputs[o->n_inputs++] = argv[++i];
        } else if (strcmp(a, "--repeat") == 0 && has_val) {
            o->repeat = atoi(argv[++i]);
            if (o->repeat < 1) o->repeat = 1;
        } else if (strcmp(a, "--seed") == 0 && has_val) {
            o->seed = (uint64_t)strtoull(argv[++i], NULL, 10);
        } else if (strcmp(a, "--dim") == 0 && has_val) {
            char *v = argv[++i], *eq = strchr(v, '=');
            char *end = NULL;
            if (!eq || eq == v || o->n_dims == MAX_DIMS_BOUND) {
                fprintf(stderr, "tinyinfer-run: --dim wants NAME=VALUE, got '%s'\n", v);
                return 0;
            }
            *eq = 0; /* argv strings are writable */
            long long val = strtoll(eq + 1, &end, 10);
            if (!end || *end || val < 0) {
                fprintf(stderr, "tinyinfer-run: --dim %s: bad value '%s'\n", v, eq + 1);
                return 0;
            }
            o->dims[o->n_dims].name = v;
            o->dims[o->n_dims].value = val;
            o->n_dims++;
        } else if (strcmp(a, "--save-outputs") == 0 && has_val) {
            o->save_dir = argv[++i];
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "tinyinfer-run: unknown or incomplete option '%s'\n", a);
            return 0;
        } else if (!o->model) {
            o->model = a;
        } else {
            fprintf(stderr, "tinyinfer-run: more than one model given ('%s', '%s')\n", o->model, a);
            return 0;
        }
    }
    if (!o->model) {
        fprintf(stderr, "tinyinfer-run: no model given\n");
        return 0;
    }
    return 1;
}

static const char *err_text(const ti_error *e)
{
    return e->message[0] ? e->message : ti_status_string(e->code);
}

/* Resources of one run, released by main whatever happens. */
typedef struct run_state {
    ti_model *m;
    ti_session *s;
    td_tensor files[MAX_FILES];
    int file_input[MAX_FILES]; /* model input index each file feeds */
    int n_loaded;
    double *times;
} run_state;

/* Returns 0 on success, 1 after printing the reason. */
static int run(const run_opts *op, run_state *rs)
{
    const run_opts o = *op;
    ti_error err;
    memset(&err, 0, sizeof(err));
    char msg[512];
    td_tensor *files = rs->files;
    int *file_input = rs->file_input;
    ti_model *m;
    ti_session *s;
    double *times;

    double t_load = now_ms();
    m = rs->m = ti_model_load_file(o.model, NULL, &err);
    t_load = now_ms() - t_load;
    if (!m) {
        fprintf(stderr, "tinyinfer-run: %s\n", err_text(&err));
        return 1;
    }
    int n_in = ti_model_num_inputs(m), n_out = ti_model_num_outputs(m);
    printf("model: %s (%d nodes, %llu parameters), loaded in %.1f ms\n", o.model,
           ti_model_num_nodes(m), (unsigned long long)ti_model_num_parameters(m), t_load);
    printf("inputs (declared):\n");
    for (int i = 0; i < n_in; i++) {
        ti_value_info vi;
        if (ti_model_input_info(m, i, &vi) == TI_OK) print_value_info("input ", i, &vi);
    }
    printf("outputs (declared):\n");
    for (int i = 0; i < n_out; i++) {
        ti_value_info vi;
        if (ti_model_output_info(m, i, &vi) == TI_OK) print_value_info("output", i, &vi);
    }

    /* Input files: matched by tensor name when it names a model input, else by position. */
    if (o.n_inputs > n_in) {
        fprintf(stderr, "tinyinfer-run: %d --input files for a model with %d inputs\n", o.n_inputs,
                n_in);
        return 1;
    }
    for (int k = 0; k < o.n_inputs; k++) {
        ti_status st = td_load_tensor(o.inputs[k], &files[k], msg, sizeof(msg));
        if (st != TI_OK) {
            fprintf(stderr, "tinyinfer-run: %s\n", msg);
            return 1;
        }
        rs->n_loaded++;
        int idx = k;
        const char *fname = files[k].t.name;
        for (int i = 0; fname && fname[0] && i < n_in; i++) {
            ti_value_info vi;
            if (ti_model_input_info(m, i, &vi) == TI_OK && vi.name && strcmp(vi.name, fname) == 0)
                idx = i;
        }
        for (int j = 0; j < k; j++) {
            if (file_input[j] == idx) {
                fprintf(stderr, "tinyinfer-run: %s and %s both feed input %d\n", o.inputs[j],
                        o.inputs[k], idx);
                return 1;
            }
        }
        file_input[k] = idx;
    }

    /* Symbolic dims: --dim first, then the shapes of the given files. */
    ti_dim_binding binds[MAX_DIMS_BOUND];
    int nb = 0;
    for (int i = 0; i < o.n_dims; i++) binds[nb++] = o.dims[i];
    for (int k = 0; k < rs->n_loaded; k++) {
        ti_value_info vi;
        if (ti_model_input_info(m, file_input[k], &vi) != TI_OK || vi.rank != files[k].t.rank)
            continue;
        for (int d = 0; d < vi.rank; d++) {
            if (!vi.dim_names[d] || !vi.dim_names[d][0] || nb == MAX_DIMS_BOUND) continue;
            int dup = 0;
            for (int b = 0; b < nb; b++) dup |= strcmp(binds[b].name, vi.dim_names[d]) == 0;
            if (dup) continue;
            binds[nb].name = vi.dim_names[d];
            binds[nb].value = files[k].t.shape[d];
            nb++;
        }
    }
    ti_session_desc desc;
    memset(&desc, 0, sizeof(desc));
    desc.num_threads = o.threads;
    desc.backend = o.backend;
    desc.precision = o.precision;
    desc.opencl_device = o.device;
    desc.profile = o.profile || o.trace != NULL;
    desc.tuning_file = o.tuning;
    desc.dim_bindings = nb ? binds : NULL;
    desc.num_dim_bindings = nb;
    double t_create = now_ms();
    s = rs->s = ti_session_create(m, &desc, &err);
    t_create = now_ms() - t_create;
    if (!s) {
        fprintf(stderr, "tinyinfer-run: %s\n", err_text(&err));
        return 1;
    }
    for (int k = 0; k < rs->n_loaded; k++) {
        const ti_tensor *f = &files[k].t;
        ti_tensor *t = ti_session_input(s, file_input[k]);
        if (!t) {
            fprintf(stderr, "tinyinfer-run: the session has no input %d\n", file_input[k]);
            return 1;
        }
        int same = t->rank == f->rank;
        for (int d = 0; same && d < f->rank; d++) same = t->shape[d] == f->shape[d];
        if (!same && ti_session_set_input_shape(s, file_input[k], f->rank, f->shape, &err) != TI_OK) {
            fprintf(stderr, "tinyinfer-run: %s: %s\n", o.inputs[k], err_text(&err));
            return 1;
        }
    }
    uint64_t state = o.seed;
    int ns_in = ti_session_num_inputs(s);
    printf("inputs (fed):\n");
    for (int i = 0; i < ns_in; i++) {
        ti_tensor *t = ti_session_input(s, i);
        if (!t) continue;
        int k = -1;
        for (int j = 0; j < rs->n_loaded; j++)
            if (file_input[j] == i) k = j;
        char shp[256];
        td_shape_str(t->rank, t->shape, shp, sizeof(shp));
        size_t n = ti_tensor_numel(t);
        if (n && !t->data) {
            fprintf(stderr, "tinyinfer-run: input %d '%s' has no memory\n", i, t->name ? t->name : "");
            return 1;
        }
        if (k < 0) {
            if (t->dtype == TI_DTYPE_STRING || ti_dtype_size(t->dtype) == 0) {
                fprintf(stderr, "tinyinfer-run: input %d '%s' is %s: give it with --input\n", i,
                        t->name ? t->name : "", ti_dtype_name(t->dtype));
                return 1;
            }
            td_fill_random(t, &state);
            printf("  input  %d '%s' %s %s: random (seed %llu)\n", i, t->name ? t->name : "",
                   ti_dtype_name(t->dtype), shp, (unsigned long long)o.seed);
            continue;
        }
        const ti_tensor *f = &files[k].t;
        if (f->dtype == t->dtype) {
            if (f->size_bytes != t->size_bytes) {
                fprintf(stderr, "tinyinfer-run: %s holds %zu bytes, input '%s' wants %zu\n",
                        o.inputs[k], f->size_bytes, t->name ? t->name : "", t->size_bytes);
                return 1;
            }
            if (f->size_bytes) memcpy(t->data, f->data, f->size_bytes);
            printf("  input  %d '%s' %s %s: %s\n", i, t->name ? t->name : "", ti_dtype_name(t->dtype),
                   shp, o.inputs[k]);
        } else if (ti_dtype_size(f->dtype) && ti_dtype_size(t->dtype) && f->dtype != TI_DTYPE_STRING &&
                   ti_tensor_numel(f) == n) {
            for (size_t e = 0; e < n; e++) td_set(t, e, td_get(f, e));
            printf("  input  %d '%s' %s %s: %s (converted from %s)\n", i, t->name ? t->name : "",
                   ti_dtype_name(t->dtype), shp, o.inputs[k], ti_dtype_name(f->dtype));
        } else {
            fprintf(stderr, "tinyinfer-run: %s is %s, input '%s' is %s\n", o.inputs[k],
                    ti_dtype_name(f->dtype), t->name ? t->name : "", ti_dtype_name(t->dtype));
            return 1;
        }
    }

    times = rs->times = (double *)malloc((size_t)o.repeat * sizeof(double));
    if (!times) {
        fprintf(stderr, "tinyinfer-run: out of memory\n");
        return 1;
    }
    for (int r = 0; r < o.repeat; r++) {
        double t0 = now_ms();
        if (ti_session_run(s, &err) != TI_OK) {
            fprintf(stderr, "tinyinfer-run: %s\n", err_text(&err));
            return 1;
        }
        times[r] = now_ms() - t0;
    }
    ti_session_info info;
    if (ti_session_get_info(s, &info) == TI_OK) {
        printf("session: %d threads, %d nodes (%d fused, %d folded), arena %.2f MiB, created in "
               "%.1f ms%s%s%s\n",
               info.num_threads, info.num_nodes, info.num_fused, info.num_folded,
               (double)info.arena_bytes / (1024.0 * 1024.0), t_create,
               info.dynamic ? ", dynamic shapes" : "",
               info.fallback_reason && info.fallback_reason[0] ? ", fallback: " : "",
               info.fallback_reason && info.fallback_reason[0] ? info.fallback_reason : "");
        if (info.backend == TI_BACKEND_OPENCL)
            printf("opencl: %s: %d nodes on the device, %d on the CPU; programs: %d built, %d from "
                   "the cache, %.1f ms; %zu bytes moved between host and device in the last run%s; "
                   "tensors stored in %s%s\n",
                   info.device, info.num_gpu_nodes, info.num_cpu_nodes, info.programs_built,
                   info.programs_cached, info.build_ms, info.transfer_bytes,
                   info.zero_copy ? " (zero copy: the device works in the session's memory)" : "",
                   info.precision == TI_PRECISION_FP16 ? "fp16" : "fp32",
                   info.precision != TI_PRECISION_FP16 ? ""
                   : info.fp16_arithmetic ? " (half arithmetic: cl_khr_fp16)"
                                          : " (computed in fp32: no cl_khr_fp16)");
    }
    if (o.placement) {
        int nn = ti_session_num_nodes(s);
        for (int i = 0; i < nn; i++) {
            ti_node_info ni;
            if (ti_session_node_info(s, i, &ni) != TI_OK) continue;
            printf("  %4d %-6s %-20s %s%s%s\n", i, ni.backend == TI_BACKEND_OPENCL ? "opencl" : "cpu",
                   ni.op, ni.name, ni.placement[0] ? ": " : "", ni.placement);
        }
    }
    if (o.profile && print_profile(s) != 0) return 1;
    if (o.check_precision && print_precision(s) != 0) return 1;
    if (o.trace) {
        if (ti_session_write_trace(s, o.trace, &err) != TI_OK) {
            fprintf(stderr, "tinyinfer-run: %s\n", err_text(&err));
            return 1;
        }
        printf("trace: %s\n", o.trace);
    }
    printf("outputs:\n");
    int ns_out = ti_session_num_outputs(s);
    for (int i = 0; i < ns_out; i++) {
        const ti_tensor *t = ti_session_output(s, i);
        if (t) td_print_summary(t);
    }
    double first = times[0];
    qsort(times, (size_t)o.repeat, sizeof(double), cmp_double);
    double median = o.repeat % 2 ? times[o.repeat / 2]
                                 : 0.5 * (times[o.repeat / 2 - 1] + times[o.repeat / 2]);
    if (o.repeat == 1)
        printf("time: %.3f ms (1 run)\n", median);
    else
        printf("time: median %.3f ms over %d runs (min %.3f, max %.3f, first %.3f)\n", median,
               o.repeat, times[0], times[o.repeat - 1], first);

    if (o.save_dir) {
        if (run_mkdir(o.save_dir) != 0 && errno != EEXIST) {
            fprintf(stderr, "tinyinfer-run: cannot create %s: %s\n", o.save_dir, strerror(errno));
            return 1;
        }
        for (int i = 0; i < ns_out; i++) {
            const ti_tensor *t = ti_session_output(s, i);
            char path[1200];
            if (!t) continue;
            output_path(path, sizeof(path), o.save_dir, t->name, i);
            if (!td_save_npy(path, t, msg, sizeof(msg))) {
                fprintf(stderr, "tinyinfer-run: %s\n", msg);
                return 1;
            }
            printf("saved %s\n", path);
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    run_opts o;
    if (!parse_args(argc, argv, &o)) {
        usage(stderr);
        return 2;
    }
    run_state rs;
    memset(&rs, 0, sizeof(rs));
    int rc = run(&o, &rs);
    free(rs.times);
    for (int k = 0; k < rs.n_loaded; k++) td_tensor_free(&rs.files[k]);
    ti_session_destroy(rs.s);
    ti_model_free(rs.m);
    return rc;
}
