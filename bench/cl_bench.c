/* OpenCL benchmark of tinyinfer: for each model, session creation + first run with an
 * empty program cache (cold) and with the cache filled (warm), then the steady latency of
 * ti_session_run (input upload and output readback included) over many runs, and the GPU
 * outputs against the CPU backend's. Also the cost of one empty kernel launch and of a
 * 4 KB blocking read on the same device, measured with the loader directly.
 * Usage: cl_bench [--device SEL] [--runs N] [--cache DIR] [--precision fp32|fp16] MODEL.onnx...
 * Prints one markdown table row per model (milliseconds). */
#define _POSIX_C_SOURCE 200809L
#define TINYINFER_IMPLEMENTATION
#include "tinyinfer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}
static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
static double pct(double *v, int n, double p) {
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    int i = (int)(p * (n - 1) + 0.5);
    return v[i];
}

static const char *g_device = NULL;
static char g_auto_rows[32][256];
static const char *g_cache = "/tmp/tinyinfer-cl-bench-cache";
static ti_precision g_precision = TI_PRECISION_DEFAULT; /* --precision fp16: OpenCL sessions */

static ti_session *create(ti_model *m, ti_backend b, ti_error *err) {
    ti_session_desc d;
    memset(&d, 0, sizeof d);
    d.backend = b;
    d.opencl_device = g_device;
    d.opencl_cache_dir = g_cache;
    d.num_threads = 0;
    if (b == TI_BACKEND_OPENCL) d.precision = g_precision;
    return ti_session_create(m, &d, err);
}

static void fill(ti_session *s, unsigned seed) {
    for (int i = 0; i < ti_session_num_inputs(s); i++) {
        ti_tensor *t = ti_session_input(s, i);
        if (t->dtype != TI_DTYPE_F32) continue;
        for (size_t j = 0; j < t->size_bytes / 4; j++) {
            seed = seed * 1103515245u + 12345u;
            ((float *)t->data)[j] = (float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
        }
    }
}

/* One empty kernel launch (enqueue + finish) and one 4 KB blocking read, median of n. */
static void launch_costs(double *empty_ms, double *read_ms) {
    *empty_ms = *read_ms = -1;
    ti_error err;
    (void)err;
    ti_cl_api cl;
    double t0 = now_ms();
    if (ti_cl_load(&cl, NULL, NULL) != TI_CL_OK) return;
    double t1 = now_ms();
    cl_platform_id plats[8];
    cl_uint np = 0;
    cl.clGetPlatformIDs(8, plats, &np);
    double t2 = now_ms();
    cl_device_id dev = NULL;
    cl_uint nd = 0;
    for (cl_uint i = 0; i < np && nd == 0; i++) cl.clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_GPU, 1, &dev, &nd);
    double t3 = now_ms();
    cl_int ce;
    cl_context ctx = nd ? cl.clCreateContext(NULL, 1, &dev, NULL, NULL, &ce) : NULL;
    double t4 = now_ms();
    if (ctx) cl.clReleaseContext(ctx);
    printf("first OpenCL use in the process: load %.1f ms, clGetPlatformIDs %.1f ms, "
           "clGetDeviceIDs %.1f ms, clCreateContext %.1f ms\n", t1 - t0, t2 - t1, t3 - t2, t4 - t3);
    ti__clrt rt;
    ti_session_desc d;
    memset(&d, 0, sizeof d);
    d.opencl_device = g_device;
    char why[256];
    if (!ti__clrt_init(&rt, &d, why, sizeof why)) return;
    const char *src = "__kernel void empty(__global float *x) { }\n";
    cl_int e;
    cl_program p = rt.api.clCreateProgramWithSource(rt.ctx, 1, &src, NULL, &e);
    if (p == NULL || rt.api.clBuildProgram(p, 1, &rt.dev, "", NULL, NULL) != CL_SUCCESS) return;
    cl_kernel k = rt.api.clCreateKernel(p, "empty", &e);
    cl_mem buf = rt.api.clCreateBuffer(rt.ctx, CL_MEM_READ_WRITE, 4096, NULL, &e);
    rt.api.clSetKernelArg(k, 0, sizeof buf, &buf);
    char host[4096];
    double t[200], r[200];
    size_t g = 1;
    for (int i = 0; i < 200; i++) {
        double t0 = now_ms();
        rt.api.clEnqueueNDRangeKernel(rt.q, k, 1, NULL, &g, NULL, 0, NULL, NULL);
        rt.api.clFinish(rt.q);
        double t1 = now_ms();
        rt.api.clEnqueueReadBuffer(rt.q, buf, CL_TRUE, 0, 4096, host, 0, NULL, NULL);
        double t2 = now_ms();
        t[i] = t1 - t0;
        r[i] = t2 - t1;
    }
    *empty_ms = pct(t + 20, 180, 0.5);
    *read_ms = pct(r + 20, 180, 0.5);
    rt.api.clReleaseMemObject(buf);
    rt.api.clReleaseKernel(k);
    rt.api.clReleaseProgram(p);
    ti__clrt_destroy(&rt);
}

int main(int argc, char **argv) {
    int runs = 50;
    const char *models[32];
    int nm = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) g_device = argv[++i];
        else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) runs = atoi(argv[++i]);
        else if (strcmp(argv[i], "--cache") == 0 && i + 1 < argc) g_cache = argv[++i];
        else if (strcmp(argv[i], "--precision") == 0 && i + 1 < argc)
            g_precision = strcmp(argv[++i], "fp16") == 0 ? TI_PRECISION_FP16 : TI_PRECISION_FP32;
        else if (nm < 32) models[nm++] = argv[i];
    }
    if (runs < 5) runs = 5;
    double empty_ms, read_ms;
    launch_costs(&empty_ms, &read_ms);
    printf("empty kernel launch + finish: median %.4f ms; 4 KB blocking read: median %.4f ms\n\n",
           empty_ms, read_ms);
    printf("| model | device | GPU nodes | cold create+run | warm create+run | steady median | "
           "steady p90 | CPU backend median | max rel err vs CPU |\n");
    printf("|---|---|---|---|---|---|---|---|---|\n");
    for (int mi = 0; mi < nm; mi++) {
        ti_error err;
        ti_model *m = ti_model_load_file(models[mi], NULL, &err);
        if (m == NULL) {
            printf("| %s | load failed: %s |\n", models[mi], err.message);
            continue;
        }
        char cmd[600];
        snprintf(cmd, sizeof cmd, "rm -rf %s", g_cache);
        if (system(cmd) != 0) fprintf(stderr, "cannot empty %s\n", g_cache);
        double t0 = now_ms();
        ti_session *g = create(m, TI_BACKEND_OPENCL, &err);
        if (g == NULL || (fill(g, 1), ti_session_run(g, &err)) != TI_OK) {
            printf("| %s | OpenCL failed: %s |\n", models[mi], err.message);
            ti_session_destroy(g);
            ti_model_free(m);
            continue;
        }
        double cold = now_ms() - t0;
        ti_session_destroy(g);
        t0 = now_ms();
        g = create(m, TI_BACKEND_OPENCL, &err);
        fill(g, 1);
        ti_session_run(g, &err);
        double warm = now_ms() - t0;
        ti_session_info info;
        ti_session_get_info(g, &info);
        double *t = (double *)malloc(sizeof(double) * (size_t)runs);
        for (int w = 0; w < 5; w++) ti_session_run(g, &err);
        for (int r = 0; r < runs; r++) {
            double a = now_ms();
            ti_session_run(g, &err);
            t[r] = now_ms() - a;
        }
        double med = pct(t, runs, 0.5), p90 = pct(t, runs, 0.9);
        /* the CPU backend on the same input, for the error and the ratio */
        ti_session *c = create(m, TI_BACKEND_CPU, &err);
        fill(c, 1);
        ti_session_run(c, &err);
        int cruns = runs < 20 ? runs : 20;
        for (int r = 0; r < cruns; r++) {
            double a = now_ms();
            ti_session_run(c, &err);
            t[r] = now_ms() - a;
        }
        double cmed = pct(t, cruns, 0.5);
        fill(g, 1);
        ti_session_run(g, &err);
        double me = 0, mr = 0;
        for (int o = 0; o < ti_session_num_outputs(c); o++) {
            const ti_tensor *x = ti_session_output(c, o), *y = ti_session_output(g, o);
            if (x->dtype != TI_DTYPE_F32) continue;
            for (size_t j = 0; j < x->size_bytes / 4; j++) {
                double a = ((const float *)x->data)[j], b = ((const float *)y->data)[j];
                if (fabs(a - b) > me || a != a || b != b) me = fabs(a - b);
                if (fabs(a) > mr) mr = fabs(a);
            }
        }
        /* start at once: backend AUTO, empty cache: the first runs on the CPU while the
         * programs build, then the switch */
        if (system(cmd) != 0) fprintf(stderr, "cannot empty %s\n", g_cache);
        ti_session_desc ad;
        memset(&ad, 0, sizeof ad);
        ad.opencl_device = g_device;
        ad.opencl_cache_dir = g_cache;
        ad.precision = g_precision;
        double a0 = now_ms();
        ti_session *as = ti_session_create(m, &ad, &err);
        double a_created = now_ms() - a0, a_first = -1, a_switch = -1, a_first_gpu = -1;
        int a_cpu_runs = 0;
        if (as != NULL) {
            fill(as, 1);
            for (int r = 0; r < 100000; r++) {
                double b0 = now_ms();
                ti_session_run(as, &err);
                double b1 = now_ms();
                if (r == 0) a_first = b1 - b0;
                ti_session_info ai;
                ti_session_get_info(as, &ai);
                if (ai.backend == TI_BACKEND_OPENCL) {
                    a_switch = ai.opencl_ready_ms;
                    a_first_gpu = b1 - a0;
                    a_cpu_runs = ai.cpu_runs_before_gpu;
                    break;
                }
                if (b1 - a0 > 20000) break;
            }
            ti_session_destroy(as);
        }
        snprintf(g_auto_rows[mi], sizeof g_auto_rows[mi],
                 "| %s | %.1f | %.3f | %.3f | %.1f | %d | %.1f |", strrchr(models[mi], '/') ? strrchr(models[mi], '/') + 1 : models[mi],
                 a_created, a_first, cmed, a_switch, a_cpu_runs, a_first_gpu);
        const char *name = strrchr(models[mi], '/');
        printf("| %s | %s | %d/%d | %.1f | %.1f | %.3f | %.3f | %.3f | %.2g |\n",
               name ? name + 1 : models[mi], info.device, info.num_gpu_nodes,
               info.num_gpu_nodes + info.num_cpu_nodes, cold, warm, med, p90, cmed,
               me / (mr > 0 ? mr : 1));
        fflush(stdout);
        free(t);
        ti_session_destroy(c);
        ti_session_destroy(g);
        ti_model_free(m);
    }
    printf("\nbackend AUTO with an empty cache (ms since ti_session_create was called): the "
           "session serves on the CPU while the programs build, then switches\n\n");
    printf("| model | create returned | first run (CPU) | CPU backend median | GPU plan ready | "
           "runs on the CPU meanwhile | first GPU run done |\n|---|---|---|---|---|---|---|\n");
    for (int mi = 0; mi < nm; mi++)
        if (g_auto_rows[mi][0]) printf("%s\n", g_auto_rows[mi]);
    return 0;
}
