/* The OpenCL runtime of a session: picks a device, makes the context and queue, builds
 * the programs a plan needs (from the on-disk binary cache when there is one), and
 * launches kernels with work-group sizes that fit the kernel and the device, retrying
 * smaller sizes, then no local size, when the driver refuses one. Relies on the loader
 * (cl/loader.c) and the kernel sources (cl/kernels.c). Must never print or abort: every
 * failure is a reason string the session turns into a CPU fallback or an error. */
#ifndef TI_NO_OPENCL

typedef enum ti__clp {
    TI__CLP_ELTWISE = 0,
    TI__CLP_CONV,
    TI__CLP_GEMM,
    TI__CLP_CONVT,
    TI__CLP_QUANT,
    TI__CLP_COUNT
} ti__clp;

/* X(id, program, kernel name) */
#define TI__CL_KERNELS(X)                                                                   \
    X(UNARY, ELTWISE, "ti_unary")                                                           \
    X(BINARY, ELTWISE, "ti_binary")                                                         \
    X(BINARY_SAME, ELTWISE, "ti_binary_same")                                               \
    X(BINARY_CHAN, ELTWISE, "ti_binary_chan")                                               \
    X(COPY, ELTWISE, "ti_copy")                                                             \
    X(COPY_FLAT, ELTWISE, "ti_copy_flat")                                                   \
    X(GPOOL, ELTWISE, "ti_gpool")                                                           \
    X(POOL2D, ELTWISE, "ti_pool2d")                                                         \
    X(SOFTMAX, ELTWISE, "ti_softmax")                                                       \
    X(LAYERNORM, ELTWISE, "ti_layernorm")                                                   \
    X(BATCHNORM, ELTWISE, "ti_batchnorm")                                                   \
    X(TO_HALF, ELTWISE, "ti_to_half")                                                       \
    X(FROM_HALF, ELTWISE, "ti_from_half")                                                   \
    X(CONV2D, CONV, "ti_conv2d")                                                            \
    X(DWCONV2D, CONV, "ti_dwconv2d")                                                        \
    X(CONV_GEMM, CONV, "ti_conv_gemm")                                                      \
    X(CONV_SPLITK, CONV, "ti_conv_splitk")                                                  \
    X(CONV_GEMM16, CONVT, "ti_conv_gemm_t16")                                               \
    X(CONV_GEMM64, CONVT, "ti_conv_gemm_t64")                                               \
    X(MATMUL, GEMM, "ti_matmul")                                                            \
    X(MATMUL_T, GEMM, "ti_matmul_t")                                                        \
    X(GEMV, GEMM, "ti_gemv")                                                                \
    X(QCONV, QUANT, "ti_qconv")                                                             \
    X(QDWCONV, QUANT, "ti_qdwconv")                                                         \
    X(QADD, QUANT, "ti_qadd")                                                               \
    X(QPOOL, QUANT, "ti_qpool")                                                             \
    X(COPY_BYTES, QUANT, "ti_copy_bytes")

typedef enum ti__clk {
#define TI__CLK_ENUM(id, prog, name) TI__CLK_##id,
    TI__CL_KERNELS(TI__CLK_ENUM)
#undef TI__CLK_ENUM
    TI__CLK_COUNT
} ti__clk;

static const struct {
    ti__clp prog;
    const char *name;
} ti__cl_kernel_table[TI__CLK_COUNT] = {
#define TI__CLK_ROW(id, prog, name) {TI__CLP_##prog, name},
    TI__CL_KERNELS(TI__CLK_ROW)
#undef TI__CLK_ROW
};

#define TI__CL_MM_TILE 16 /* TI_T of ti_matmul_t */

typedef struct ti__clrt {
    ti_cl_api api;
    cl_platform_id plat;
    cl_device_id dev;
    cl_context ctx;
    int ctx_shared; /* ctx belongs to the process-wide table below: never released */
    cl_command_queue q;
    char name[260];   /* "platform / device" */
    char ident[512];  /* platform, device, versions: part of the cache key */
    size_t max_wg, max_item[3];
    int compute_units;
    int unified; /* the device works in host memory (CL_DEVICE_HOST_UNIFIED_MEMORY) */
    cl_ulong local_mem;
    /* storage of the device's tensors: f16 (desc.precision FP16) keeps them as halves;
     * f16_arith when the device also has cl_khr_fp16 (the GEMM tiles in half too) */
    int f16, f16_arith;
    char opts[64]; /* clBuildProgram options, part of the cache key */
    cl_program prog[TI__CLP_COUNT];
    cl_kernel kern[TI__CLK_COUNT];
    size_t kern_wg[TI__CLK_COUNT]; /* CL_KERNEL_WORK_GROUP_SIZE on this device */
    unsigned need;                  /* programs the plan needs (bits of ti__clp) */
    char cache_dir[512];
    int built, cached;
    double build_ms;
    size_t fake_max_wg; /* test hook ($TINYINFER_OPENCL_FAKE_MAX_WG): groups larger than this
                         * are refused as a driver would (CL_INVALID_WORK_GROUP_SIZE) */
    int retries;        /* launches that needed a smaller or no local size */
    size_t node_wg;     /* the running node's tuned local size along dim 0 (0: ours) */
    char last_retry[160];
    /* profiling (desc.profile): the events of the run in flight, each with the node it
     * belongs to (-1: the final output reads) and its kind (TI__CLEV_*) */
    int profiling;
    cl_event *ev;
    int *ev_node;
    unsigned char *ev_kind;
    int ev_n, ev_cap, ev_cur;
    double run_t0;   /* host time at the start of the run (ti__now_ms) */
    double ev_host0; /* host time of the first event's enqueue, ms after the run began */
} ti__clrt;

enum { TI__CLEV_KERNEL, TI__CLEV_UPLOAD, TI__CLEV_DOWNLOAD };

/* Where the next command's event goes: NULL when not profiling (or the table is full).
 * The slot is kept only when the command was queued (ti__clrt_ev_keep). */
TI__PRIVATE cl_event *ti__clrt_ev_slot(ti__clrt *rt) {
    if (rt->ev == NULL || rt->ev_n >= rt->ev_cap) return NULL;
    rt->ev[rt->ev_n] = NULL;
    return &rt->ev[rt->ev_n];
}
TI__PRIVATE void ti__clrt_ev_keep(ti__clrt *rt, cl_int e, int kind) {
    if (rt->ev == NULL || rt->ev_n >= rt->ev_cap || e != CL_SUCCESS || rt->ev[rt->ev_n] == NULL) return;
    if (rt->ev_n == 0) rt->ev_host0 = ti__now_ms() - rt->run_t0;
    rt->ev_node[rt->ev_n] = rt->ev_cur;
    rt->ev_kind[rt->ev_n] = (unsigned char)kind;
    rt->ev_n++;
}
/* Releases the events not yet collected (a failed run, a plan released). */
TI__PRIVATE void ti__clrt_ev_drop(ti__clrt *rt) {
    for (int i = 0; i < rt->ev_n; i++)
        if (rt->ev[i] != NULL) rt->api.clReleaseEvent(rt->ev[i]);
    rt->ev_n = 0;
}

/* Does "platform / device" of device number idx (or of type) match the selector? */
TI__PRIVATE int ti__cl_matches(const char *sel, cl_device_type type, int idx, const char *name) {
    if (sel == NULL || sel[0] == 0) return 1;
    if (strcmp(sel, "gpu") == 0) return (type & CL_DEVICE_TYPE_GPU) != 0;
    if (strcmp(sel, "cpu") == 0) return (type & CL_DEVICE_TYPE_CPU) != 0;
    if (strcmp(sel, "accelerator") == 0) return (type & CL_DEVICE_TYPE_ACCELERATOR) != 0;
    int all_digits = 1;
    for (const char *c = sel; *c; c++)
        if (*c < '0' || *c > '9') all_digits = 0;
    if (all_digits) return atoi(sel) == idx;
    return strstr(name, sel) != NULL;
}

/* Picks the device: the selector's first match; with no selector, the first GPU, else the
 * first device. Fills rt->plat/dev/name. Returns 1 on success, else 0 with why. */
TI__PRIVATE int ti__cl_select(ti__clrt *rt, const char *sel, char *why, size_t whycap) {
    const ti_cl_api *cl = &rt->api;
    cl_platform_id plats[16];
    cl_uint np = 0;
    cl_int e = cl->clGetPlatformIDs(16, plats, &np);
    if (e != CL_SUCCESS || np == 0) {
        snprintf(why, whycap, "no OpenCL platform (clGetPlatformIDs: %s)",
                 e != CL_SUCCESS ? ti_cl_error_string(e) : "0 platforms");
        return 0;
    }
    if (np > 16) np = 16;
    int found = 0, idx = 0, n_dev = 0;
    for (int pass = 0; pass < 2 && !found; pass++) {
        idx = 0;
        for (cl_uint p = 0; p < np && !found; p++) {
            cl_device_id devs[16];
            cl_uint nd = 0;
            if (cl->clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 16, devs, &nd) != CL_SUCCESS)
                nd = 0;
            if (nd > 16) nd = 16;
            for (cl_uint d = 0; d < nd && !found; d++, idx++) {
                char pname[128] = "", dname[128] = "", full[260];
                cl_device_type type = 0;
                cl->clGetPlatformInfo(plats[p], CL_PLATFORM_NAME, sizeof pname - 1, pname, NULL);
                cl->clGetDeviceInfo(devs[d], CL_DEVICE_NAME, sizeof dname - 1, dname, NULL);
                cl->clGetDeviceInfo(devs[d], CL_DEVICE_TYPE, sizeof type, &type, NULL);
                snprintf(full, sizeof full, "%s / %s", pname, dname);
                if (pass == 0) n_dev++;
                int ok = (sel != NULL && sel[0]) ? ti__cl_matches(sel, type, idx, full)
                         : pass == 0             ? (type & CL_DEVICE_TYPE_GPU) != 0
                                                 : 1;
                if (!ok) continue;
                rt->plat = plats[p];
                rt->dev = devs[d];
                memcpy(rt->name, full, sizeof full);
                found = 1;
            }
        }
        if (sel != NULL && sel[0]) break; /* a selector is matched in one pass */
    }
    if (!found) {
        if (sel != NULL && sel[0])
            snprintf(why, whycap, "no OpenCL device matches '%s' (%d device(s) on %u platform(s))",
                     sel, n_dev, (unsigned)np);
        else
            snprintf(why, whycap, "%u OpenCL platform(s) but no device", (unsigned)np);
        return 0;
    }
    return 1;
}

/* One context per device for the whole process, made by the first session that uses the
 * device and kept (as the library stays loaded): creating one costs about 130 ms on the
 * NVIDIA driver, which every later session would pay again. Contexts are thread-safe;
 * each session still has its own queue, buffers and kernels. */
#define TI__CL_SHARED_MAX 8
static struct {
    void *create_fn; /* which library's clCreateContext: tables of two libraries differ */
    cl_device_id dev;
    cl_context ctx;
} ti__cl_shared[TI__CL_SHARED_MAX];
static int ti__cl_n_shared; /* both guarded by ti__global_lock (core/sync.c), which works
                              * with TI_NO_THREADS and on Windows too: users' threads */

TI__PRIVATE cl_context ti__cl_shared_context(ti__clrt *rt, cl_int *e) {
    void *fn = NULL;
    memcpy(&fn, &rt->api.clCreateContext, sizeof fn < sizeof rt->api.clCreateContext ? sizeof fn : sizeof rt->api.clCreateContext);
    cl_context ctx = NULL;
    ti__global_lock();
    for (int i = 0; i < ti__cl_n_shared && ctx == NULL; i++)
        if (ti__cl_shared[i].create_fn == fn && ti__cl_shared[i].dev == rt->dev) ctx = ti__cl_shared[i].ctx;
    if (ctx != NULL) {
        rt->ctx_shared = 1;
        *e = CL_SUCCESS;
    } else {
        ctx = rt->api.clCreateContext(NULL, 1, &rt->dev, NULL, NULL, e);
        if (ctx != NULL && *e == CL_SUCCESS && ti__cl_n_shared < TI__CL_SHARED_MAX) {
            ti__cl_shared[ti__cl_n_shared].create_fn = fn;
            ti__cl_shared[ti__cl_n_shared].dev = rt->dev;
            ti__cl_shared[ti__cl_n_shared].ctx = ctx;
            ti__cl_n_shared++;
            rt->ctx_shared = 1;
        }
    }
    ti__global_unlock();
    return ctx;
}

TI__PRIVATE void ti__clrt_destroy(ti__clrt *rt) {
    if (rt == NULL) return;
    for (int k = 0; k < TI__CLK_COUNT; k++)
        if (rt->kern[k]) rt->api.clReleaseKernel(rt->kern[k]);
    for (int p = 0; p < TI__CLP_COUNT; p++)
        if (rt->prog[p]) rt->api.clReleaseProgram(rt->prog[p]);
    if (rt->q) rt->api.clReleaseCommandQueue(rt->q);
    if (rt->ctx && !rt->ctx_shared) rt->api.clReleaseContext(rt->ctx);
    /* the library stays mapped (see cl/probe.c): drivers keep process-wide state */
    memset(rt, 0, sizeof *rt);
}

/* Android 7+ keeps apps out of vendor libraries unless the manifest asks for them: when
 * the linker says a library is not accessible for the app's namespace, say what to add. */
TI__PRIVATE const char *ti__cl_namespace_hint(const ti_cl_report *rep) {
    for (int i = 0; i < rep->num_tried && i < TI_CL_MAX_TRIED; i++)
        if (strstr(rep->tried[i].error, "namespace") != NULL)
            return "; Android: add <uses-native-library android:name=\"libOpenCL.so\" "
                   "android:required=\"false\"/> to AndroidManifest.xml's <application>";
    return "";
}

/* The storage precision and the build options that select it: FP16 is a loss the desc
 * has to allow. Half storage works on every device (vload_half / vstore_half are core
 * OpenCL C); half arithmetic only where the device reports cl_khr_fp16, and
 * $TINYINFER_OPENCL_NO_FP16_ARITH=1 turns it off (to compare the two on one device). */
TI__PRIVATE void ti__clrt_precision(ti__clrt *rt, const ti_session_desc *d) {
    rt->f16 = d->precision == TI_PRECISION_FP16;
    rt->f16_arith = 0;
    if (rt->f16) {
        char ext[2048] = "";
        rt->api.clGetDeviceInfo(rt->dev, CL_DEVICE_EXTENSIONS, sizeof ext - 1, ext, NULL);
        const char *off = getenv("TINYINFER_OPENCL_NO_FP16_ARITH");
        rt->f16_arith = strstr(ext, "cl_khr_fp16") != NULL && !(off != NULL && atoi(off) != 0);
    }
    snprintf(rt->opts, sizeof rt->opts, "-DTI_T=16%s%s", rt->f16 ? " -DTI_F16" : "",
             rt->f16_arith ? " -DTI_F16_ARITH" : "");
}

/* Loads OpenCL, picks the device, makes a context and an in-order queue. On failure
 * returns 0 with the reason in why and leaves rt empty. */
TI__PRIVATE int ti__clrt_init(ti__clrt *rt, const ti_session_desc *d, char *why, size_t whycap) {
    memset(rt, 0, sizeof *rt);
    ti_cl_report rep;
    ti_cl_status st = ti_cl_load(&rt->api, d->opencl_library, &rep);
    if (st == TI_CL_NOT_FOUND) {
        snprintf(why, whycap, "no OpenCL library (tried %d: '%.60s': %.60s%s)%s", rep.num_tried,
                 rep.tried[0].path, rep.tried[0].error, rep.num_tried > 1 ? ", ..." : "",
                 ti__cl_namespace_hint(&rep));
        return 0;
    }
    if (st == TI_CL_INCOMPLETE) {
        snprintf(why, whycap, "the OpenCL library '%s' lacks %s", rep.tried[0].path,
                 rep.missing_symbol);
        return 0;
    }
    const char *sel = d->opencl_device ? d->opencl_device : getenv("TINYINFER_OPENCL_DEVICE");
    if (!ti__cl_select(rt, sel, why, whycap)) {
        memset(rt, 0, sizeof *rt);
        return 0;
    }
    const ti_cl_api *cl = &rt->api;
    char drv[128] = "", ver[128] = "";
    cl->clGetDeviceInfo(rt->dev, CL_DRIVER_VERSION, sizeof drv - 1, drv, NULL);
    cl->clGetDeviceInfo(rt->dev, CL_DEVICE_VERSION, sizeof ver - 1, ver, NULL);
    snprintf(rt->ident, sizeof rt->ident, "%.250s|%.120s|%.120s", rt->name, drv, ver);
    cl->clGetDeviceInfo(rt->dev, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof rt->max_wg, &rt->max_wg, NULL);
    size_t items[16] = {0};
    cl->clGetDeviceInfo(rt->dev, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof items, items, NULL);
    for (int i = 0; i < 3; i++) rt->max_item[i] = items[i] ? items[i] : 1;
    cl->clGetDeviceInfo(rt->dev, CL_DEVICE_LOCAL_MEM_SIZE, sizeof rt->local_mem, &rt->local_mem, NULL);
    cl_uint cu = 0;
    cl->clGetDeviceInfo(rt->dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cu, &cu, NULL);
    rt->compute_units = cu > 0 && cu < 100000 ? (int)cu : 1;
    cl_bool um = CL_FALSE;
    cl->clGetDeviceInfo(rt->dev, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof um, &um, NULL);
    rt->unified = um == CL_TRUE;
    ti__clrt_precision(rt, d);
    if (rt->max_wg == 0) rt->max_wg = 1;
    const char *fake = getenv("TINYINFER_OPENCL_FAKE_MAX_WG");
    if (fake != NULL && atoi(fake) > 0) rt->fake_max_wg = (size_t)atoi(fake);
    cl_int e = CL_SUCCESS;
    rt->ctx = ti__cl_shared_context(rt, &e);
    if (rt->ctx == NULL || e != CL_SUCCESS) {
        snprintf(why, whycap, "OpenCL device '%s': clCreateContext: %s", rt->name, ti_cl_error_string(e));
        rt->ctx = NULL;
        ti__clrt_destroy(rt);
        return 0;
    }
    rt->profiling = d->profile != 0;
    cl_queue_properties qp[3] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
    if (cl->clCreateCommandQueueWithProperties != NULL) {
        rt->q = cl->clCreateCommandQueueWithProperties(rt->ctx, rt->dev, rt->profiling ? qp : NULL, &e);
    } else if (cl->clCreateCommandQueue != NULL) {
        rt->q = cl->clCreateCommandQueue(rt->ctx, rt->dev, rt->profiling ? CL_QUEUE_PROFILING_ENABLE : 0, &e);
    } else {
        e = CL_INVALID_OPERATION;
    }
    if (rt->q == NULL || e != CL_SUCCESS) {
        snprintf(why, whycap, "OpenCL device '%s': cannot create a command queue: %s", rt->name,
                 ti_cl_error_string(e));
        rt->q = NULL;
        ti__clrt_destroy(rt);
        return 0;
    }
    const char *dir = d->opencl_cache_dir ? d->opencl_cache_dir : getenv("TINYINFER_OPENCL_CACHE");
    if (dir != NULL && strlen(dir) < sizeof rt->cache_dir - 40)
        memcpy(rt->cache_dir, dir, strlen(dir) + 1);
    return 1;
}

/* ---- program binary cache ------------------------------------------------------------ */
/* One file per program: "ti-<key>.clbin" holding a header (magic, key, size, checksum of
 * the bytes) and the device binary. The key hashes the device identity (platform, device,
 * driver and OpenCL versions), the build options and the source, so a driver update or a
 * new library version never loads a stale binary. Damaged files fail the checks and are
 * rebuilt and rewritten; writes go to a temporary file renamed into place. */
#define TI__CL_CACHE_MAGIC "TICLBIN1"

TI__PRIVATE uint64_t ti__fnv1a(uint64_t h, const void *data, size_t n) {
    const unsigned char *p = (const unsigned char *)data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 1099511628211ULL;
    }
    return h;
}

TI__PRIVATE void ti__cl_cache_path(const ti__clrt *rt, uint64_t key, char *path, size_t cap) {
    snprintf(path, cap, "%.480s/ti-%08x%08x.clbin", rt->cache_dir, (unsigned)(key >> 32),
             (unsigned)(key & 0xffffffffu));
}

#if !defined(_WIN32)
#include <sys/stat.h>
#endif
TI__PRIVATE void ti__cl_mkdir(const char *dir) {
#if !defined(_WIN32)
    char tmp[512];
    size_t n = strlen(dir);
    if (n >= sizeof tmp) return;
    memcpy(tmp, dir, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (tmp[i] == '/' || tmp[i] == 0) {
            char c = tmp[i];
            tmp[i] = 0;
            mkdir(tmp, 0755);
            tmp[i] = c;
        }
    }
#else
    (void)dir;
#endif
}

/* Keeps the cache under TI_CL_CACHE_MAX_BYTES: the least recently written entries go
 * first (never `keep`, the one just written). Only our own ti-*.clbin files are touched. */
#ifndef TI_CL_CACHE_MAX_BYTES
#define TI_CL_CACHE_MAX_BYTES ((uint64_t)64 << 20)
#endif
#if !defined(_WIN32)
#include <dirent.h>
TI__PRIVATE void ti__cl_cache_trim(const char *dir, const char *keep) {
    struct {
        char path[600];
        uint64_t size;
        double mtime;
    } e[128];
    int n = 0;
    uint64_t total = 0;
    DIR *d = opendir(dir);
    if (d == NULL) return;
    struct dirent *de;
    while ((de = readdir(d)) != NULL && n < 128) {
        size_t len = strlen(de->d_name);
        if (len < 10 || strncmp(de->d_name, "ti-", 3) != 0 || strcmp(de->d_name + len - 6, ".clbin") != 0)
            continue;
        struct stat st;
        snprintf(e[n].path, sizeof e[n].path, "%.480s/%.100s", dir, de->d_name);
        if (stat(e[n].path, &st) != 0) continue;
        e[n].size = (uint64_t)st.st_size;
        e[n].mtime = (double)st.st_mtime;
        total += e[n].size;
        n++;
    }
    closedir(d);
    while (total > TI_CL_CACHE_MAX_BYTES) {
        int old = -1;
        for (int i = 0; i < n; i++)
            if (e[i].size != 0 && strcmp(e[i].path, keep) != 0 && (old < 0 || e[i].mtime < e[old].mtime))
                old = i;
        if (old < 0) break;
        remove(e[old].path);
        total -= e[old].size;
        e[old].size = 0;
    }
}
#else
TI__PRIVATE void ti__cl_cache_trim(const char *dir, const char *keep) {
    (void)dir;
    (void)keep;
}
#endif

/* Reads a cached binary into a malloc'd buffer (*bytes); NULL when absent or damaged. */
TI__PRIVATE unsigned char *ti__cl_cache_read(const char *path, uint64_t key, size_t *bytes) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) return NULL;
    unsigned char hdr[32];
    unsigned char *bin = NULL;
    if (fread(hdr, 1, sizeof hdr, f) == sizeof hdr && memcmp(hdr, TI__CL_CACHE_MAGIC, 8) == 0) {
        uint64_t k = 0, n = 0, sum = 0;
        for (int i = 7; i >= 0; i--) {
            k = k << 8 | hdr[8 + i];
            n = n << 8 | hdr[16 + i];
            sum = sum << 8 | hdr[24 + i];
        }
        if (k == key && n > 0 && n < ((uint64_t)256 << 20)) {
            bin = (unsigned char *)TI_MALLOC((size_t)n);
            if (bin != NULL && (fread(bin, 1, (size_t)n, f) != (size_t)n || fgetc(f) != EOF ||
                                ti__fnv1a(14695981039346656037ULL, bin, (size_t)n) != sum)) {
                TI_FREE(bin);
                bin = NULL;
            }
            if (bin != NULL) *bytes = (size_t)n;
        }
    }
    fclose(f);
    return bin;
}

TI__PRIVATE void ti__cl_cache_write(const ti__clrt *rt, const char *path, uint64_t key,
                                    const unsigned char *bin, size_t n) {
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%.560s.%08x.tmp", path,
             (unsigned)(((uintptr_t)&tmp ^ (uintptr_t)time(NULL) * 2654435761u) & 0xffffffffu));
    ti__cl_mkdir(rt->cache_dir);
    FILE *f = fopen(tmp, "wb");
    if (f == NULL) return;
    unsigned char hdr[32];
    uint64_t sum = ti__fnv1a(14695981039346656037ULL, bin, n), len = n;
    memcpy(hdr, TI__CL_CACHE_MAGIC, 8);
    for (int i = 0; i < 8; i++) {
        hdr[8 + i] = (unsigned char)(key >> (8 * i));
        hdr[16 + i] = (unsigned char)(len >> (8 * i));
        hdr[24 + i] = (unsigned char)(sum >> (8 * i));
    }
    int ok = fwrite(hdr, 1, sizeof hdr, f) == sizeof hdr && fwrite(bin, 1, n, f) == n;
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) remove(tmp);
    else ti__cl_cache_trim(rt->cache_dir, path);
}

/* The source of program p: the shared helpers, then the group's kernels (string arrays
 * ending in NULL: C99 compilers need not take string literals over 4095 bytes). */
TI__PRIVATE const char *const *ti__cl_prog_src(ti__clp p) {
    switch (p) {
    case TI__CLP_ELTWISE: return ti__cl_src_eltwise;
    case TI__CLP_CONV: return ti__cl_src_conv;
    case TI__CLP_CONVT: return ti__cl_src_conv_tiles;
    case TI__CLP_QUANT: return ti__cl_src_quant;
    default: return ti__cl_src_gemm;
    }
}

/* Builds program p (binary cache first). Returns 1, or 0 with why. */
TI__PRIVATE int ti__clrt_build(ti__clrt *rt, ti__clp p, char *why, size_t whycap) {
    const ti_cl_api *cl = &rt->api;
    const char *srcs[64];
    size_t lens[64];
    cl_uint ns = 0;
    for (const char *const *c = ti__cl_src_common; *c && ns < 64; c++) srcs[ns++] = *c;
    for (const char *const *c = ti__cl_prog_src(p); *c && ns < 64; c++) srcs[ns++] = *c;
    uint64_t key = 14695981039346656037ULL;
    key = ti__fnv1a(key, rt->ident, strlen(rt->ident) + 1);
    key = ti__fnv1a(key, rt->opts, strlen(rt->opts) + 1); /* fp16 programs: their own entries */
    for (cl_uint i = 0; i < ns; i++) {
        lens[i] = strlen(srcs[i]);
        key = ti__fnv1a(key, srcs[i], lens[i] + 1);
    }
    char path[600] = "";
    double t0 = ti__now_ms();
    cl_int e = CL_SUCCESS;
    cl_program prog = NULL;
    if (rt->cache_dir[0]) {
        ti__cl_cache_path(rt, key, path, sizeof path);
        size_t n = 0;
        unsigned char *bin = ti__cl_cache_read(path, key, &n);
        if (bin != NULL) {
            const unsigned char *b = bin;
            cl_int bst = CL_SUCCESS;
            prog = cl->clCreateProgramWithBinary(rt->ctx, 1, &rt->dev, &n, &b, &bst, &e);
            TI_FREE(bin);
            if (prog != NULL && (e != CL_SUCCESS || bst != CL_SUCCESS ||
                                 cl->clBuildProgram(prog, 1, &rt->dev, rt->opts, NULL,
                                                    NULL) != CL_SUCCESS)) {
                cl->clReleaseProgram(prog);
                prog = NULL;
            }
            if (prog != NULL) rt->cached++;
        }
    }
    if (prog == NULL) {
        prog = cl->clCreateProgramWithSource(rt->ctx, ns, srcs, lens, &e);
        if (prog == NULL || e != CL_SUCCESS) {
            snprintf(why, whycap, "clCreateProgramWithSource: %s", ti_cl_error_string(e));
            return 0;
        }
        e = cl->clBuildProgram(prog, 1, &rt->dev, rt->opts, NULL, NULL);
        if (e != CL_SUCCESS) {
            char log[256] = "";
            cl->clGetProgramBuildInfo(prog, rt->dev, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
            for (char *c = log; *c; c++)
                if (*c == '\n' || *c == '\r') *c = ' ';
            snprintf(why, whycap, "building OpenCL program %d failed (%s): %.160s", (int)p,
                     ti_cl_error_string(e), log);
            cl->clReleaseProgram(prog);
            return 0;
        }
        rt->built++;
        if (path[0]) {
            size_t n = 0;
            if (cl->clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof n, &n, NULL) == CL_SUCCESS &&
                n > 0 && n < ((size_t)256 << 20)) {
                unsigned char *bin = (unsigned char *)TI_MALLOC(n);
                unsigned char *bins[1] = {bin};
                if (bin != NULL &&
                    cl->clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bins, bins, NULL) == CL_SUCCESS)
                    ti__cl_cache_write(rt, path, key, bin, n);
                TI_FREE(bin);
            }
        }
    }
    rt->prog[p] = prog;
    for (int k = 0; k < TI__CLK_COUNT; k++) {
        if (ti__cl_kernel_table[k].prog != p) continue;
        rt->kern[k] = cl->clCreateKernel(prog, ti__cl_kernel_table[k].name, &e);
        if (rt->kern[k] == NULL || e != CL_SUCCESS) {
            rt->kern[k] = NULL;
            snprintf(why, whycap, "clCreateKernel(%s): %s", ti__cl_kernel_table[k].name,
                     ti_cl_error_string(e));
            return 0;
        }
        size_t wg = 0;
        if (cl->clGetKernelWorkGroupInfo(rt->kern[k], rt->dev, CL_KERNEL_WORK_GROUP_SIZE,
                                         sizeof wg, &wg, NULL) != CL_SUCCESS || wg == 0)
            wg = rt->max_wg;
        rt->kern_wg[k] = TI__MIN(wg, rt->max_wg);
    }
    rt->build_ms += ti__now_ms() - t0;
    return 1;
}

/* The largest local size a launch of kernel k may use, as the device and the compiled
 * kernel report it (register and local-memory use included). */
TI__PRIVATE size_t ti__clrt_wg_limit(const ti__clrt *rt, ti__clk k) {
    return rt->kern_wg[k] ? rt->kern_wg[k] : rt->max_wg;
}

/* clEnqueueNDRangeKernel, or the test hook's stand-in for a driver that refuses work
 * groups larger than it claims to take (TINYINFER_OPENCL_FAKE_MAX_WG=N). */
TI__PRIVATE cl_int ti__clrt_enqueue(ti__clrt *rt, ti__clk k, int dims, const size_t *gws,
                                    const size_t *lws) {
    if (rt->fake_max_wg && lws != NULL) {
        size_t prod = 1;
        for (int d = 0; d < dims; d++) prod *= lws[d];
        if (prod > rt->fake_max_wg) return CL_INVALID_WORK_GROUP_SIZE;
    }
    cl_event *ev = ti__clrt_ev_slot(rt);
    cl_int e = rt->api.clEnqueueNDRangeKernel(rt->q, rt->kern[k], (cl_uint)dims, NULL, gws, lws, 0,
                                              NULL, ev);
    if (ev != NULL) ti__clrt_ev_keep(rt, e, TI__CLEV_KERNEL);
    return e;
}

TI__PRIVATE int ti__cl_wg_error(cl_int e) {
    return e == CL_INVALID_WORK_GROUP_SIZE || e == CL_OUT_OF_RESOURCES ||
           e == CL_INVALID_WORK_ITEM_SIZE;
}

/* Enqueues kernel k over global[0..dims) (rounded up to the local size), with local
 * (NULL: chosen here). Sizes the driver refuses are retried halved along dim 0, then with
 * no local size; a fixed local size (reqd_work_group_size kernels) is not changed.
 * Returns the last CL error (CL_SUCCESS when it ran). */
TI__PRIVATE cl_int ti__clrt_launch(ti__clrt *rt, ti__clk k, int dims, const size_t *global,
                                   const size_t *fixed_local) {
    size_t lws[3] = {1, 1, 1}, gws[3] = {1, 1, 1};
    size_t limit = ti__clrt_wg_limit(rt, k);
    if (fixed_local != NULL) {
        size_t prod = 1;
        for (int d = 0; d < dims; d++) {
            lws[d] = fixed_local[d];
            prod *= lws[d];
            if (lws[d] > rt->max_item[d]) return CL_INVALID_WORK_GROUP_SIZE;
        }
        if (prod > limit) return CL_INVALID_WORK_GROUP_SIZE; /* known before the driver says so */
        for (int d = 0; d < dims; d++) gws[d] = (global[d] + lws[d] - 1) / lws[d] * lws[d];
        return ti__clrt_enqueue(rt, k, dims, gws, lws);
    }
    size_t most = TI__MIN(limit, rt->max_item[0]), l0 = most;
    if (rt->node_wg != 0) { /* a tuning file's size, as it is (invalid: retried smaller) */
        l0 = rt->node_wg;
        if (l0 > most) {
            rt->retries++;
            snprintf(rt->last_retry, sizeof rt->last_retry, "%s: tuned local size %zu over the limit %zu",
                     ti__cl_kernel_table[k].name, l0, most);
            while (l0 > most) l0 /= 2;
        }
    } else {
        if (l0 > 128) l0 = 128;
        while (l0 > 1 && l0 / 2 >= global[0]) l0 /= 2; /* small dim 0: do not waste items */
    }
    cl_int e = CL_SUCCESS;
    for (;;) {
        lws[0] = l0;
        for (int d = 0; d < dims; d++) gws[d] = (global[d] + lws[d] - 1) / lws[d] * lws[d];
        e = ti__clrt_enqueue(rt, k, dims, gws, lws);
        if (!ti__cl_wg_error(e)) return e;
        rt->retries++;
        snprintf(rt->last_retry, sizeof rt->last_retry, "%s: local size %zu refused (%s)",
                 ti__cl_kernel_table[k].name, l0, ti_cl_error_string(e));
        if (l0 == 1) break;
        l0 /= 2;
    }
    for (int d = 0; d < dims; d++) gws[d] = global[d];
    return ti__clrt_enqueue(rt, k, dims, gws, NULL);
}

/* Kernel arguments: buffer + element offset pairs, ints and floats, set in order. */
typedef struct ti__clargs {
    ti__clrt *rt;
    cl_kernel k;
    cl_uint i;
    cl_int err;
} ti__clargs;

TI__PRIVATE void ti__cla_begin(ti__clargs *a, ti__clrt *rt, ti__clk k) {
    a->rt = rt;
    a->k = rt->kern[k];
    a->i = 0;
    a->err = a->k != NULL ? CL_SUCCESS : CL_INVALID_KERNEL;
}
TI__PRIVATE void ti__cla_raw(ti__clargs *a, size_t size, const void *v) {
    if (a->err == CL_SUCCESS) a->err = a->rt->api.clSetKernelArg(a->k, a->i, size, v);
    a->i++;
}
TI__PRIVATE void ti__cla_int(ti__clargs *a, int64_t v) {
    cl_int x = (cl_int)v;
    ti__cla_raw(a, sizeof x, &x);
}
TI__PRIVATE void ti__cla_float(ti__clargs *a, float v) { ti__cla_raw(a, sizeof v, &v); }
TI__PRIVATE void ti__cla_mem(ti__clargs *a, cl_mem m, size_t off_elems) {
    cl_int o = (cl_int)off_elems;
    ti__cla_raw(a, sizeof m, &m);
    ti__cla_raw(a, sizeof o, &o);
}
/* A buffer of 4-byte elements (floats, parameter tables) at a byte offset. */
TI__PRIVATE void ti__cla_buf(ti__clargs *a, cl_mem m, size_t off_bytes) { ti__cla_mem(a, m, off_bytes / 4); }
#endif /* TI_NO_OPENCL */
