/* The OpenCL loader and the CPU fallback: a missing library, one lacking symbols, one
 * complete but without platforms, the environment override, and the real library when
 * there is one (PoCL in CI): a kernel built and run through the table. Sessions with
 * backend AUTO run on the CPU and say why; backend OPENCL fails with the reason.
 * Usage: test_cl_loader STUB_INCOMPLETE.so STUB_COMPLETE.so */
#define _POSIX_C_SOURCE 200809L /* setenv */
#ifndef TI_TEST_SHARED_IMPL /* build.sh's CI run links one ASan build of the implementation */
#define TINYINFER_IMPLEMENTATION
#endif
#include "tinyinfer.h"
#include "ti_test.h"

static const char *g_incomplete, *g_complete;

TI_TEST(missing_library_is_reported) {
    ti_cl_api cl;
    ti_cl_report rep;
    TI_CHECK_EQ_INT(ti_cl_load(&cl, "/nonexistent/libOpenCL.so", &rep), TI_CL_NOT_FOUND);
    TI_CHECK_EQ_INT(rep.num_tried, 1); /* an explicit path is the only candidate */
    TI_CHECK_STR_CONTAINS(rep.tried[0].path, "/nonexistent/libOpenCL.so");
    TI_CHECK(rep.tried[0].error[0] != 0);
    TI_CHECK(cl.lib == NULL && cl.clGetPlatformIDs == NULL);
    TI_CHECK(ti_cl_load(NULL, NULL, NULL) == TI_CL_NOT_FOUND);
    ti_cl_unload(NULL);
    TI_CHECK(strcmp(ti_cl_error_string(-54), "CL_INVALID_WORK_GROUP_SIZE") == 0);
    TI_CHECK(strcmp(ti_cl_error_string(12345), "unknown OpenCL error") == 0);
}

TI_TEST(environment_override) {
    ti_cl_api cl;
    ti_cl_report rep;
    setenv("TINYINFER_OPENCL_LIBRARY", "/nonexistent/from-env.so", 1);
    TI_CHECK_EQ_INT(ti_cl_load(&cl, NULL, &rep), TI_CL_NOT_FOUND);
    TI_CHECK_STR_CONTAINS(rep.tried[0].path, "from-env.so");
    /* the desc's path wins over the environment */
    TI_CHECK_EQ_INT(ti_cl_load(&cl, g_incomplete, &rep), TI_CL_INCOMPLETE);
    unsetenv("TINYINFER_OPENCL_LIBRARY");
}

TI_TEST(incomplete_library_is_refused) {
    ti_cl_api cl;
    ti_cl_report rep;
    TI_CHECK_EQ_INT(ti_cl_load(&cl, g_incomplete, &rep), TI_CL_INCOMPLETE);
    TI_CHECK(strcmp(rep.missing_symbol, "clGetPlatformInfo") == 0);
    TI_CHECK_STR_CONTAINS(rep.tried[0].error, "lacks clGetPlatformInfo");
    TI_CHECK(cl.lib == NULL && cl.clGetPlatformIDs == NULL); /* nothing half-filled */
}

TI_TEST(complete_library_loads_and_unloads) {
    ti_cl_api cl;
    ti_cl_report rep;
    TI_REQUIRE(ti_cl_load(&cl, g_complete, &rep) == TI_CL_OK);
    TI_CHECK(cl.lib != NULL && cl.clFinish != NULL && cl.clEnqueueFillBuffer != NULL);
    TI_CHECK_STR_CONTAINS(rep.loaded, "stub");
    cl_uint n = 7;
    TI_CHECK_EQ_INT(cl.clGetPlatformIDs(0, NULL, &n), CL_PLATFORM_NOT_FOUND_KHR);
    TI_CHECK_EQ_INT(n, 0);
    ti_cl_unload(&cl);
    TI_CHECK(cl.lib == NULL && cl.clFinish == NULL);
}

static ti_model *small_model(void) {
    ti_error err;
    ti_model *m = ti_model_load_file("tests/data/conv2d_padding.onnx", NULL, &err);
    if (m == NULL) printf("load: %s\n", err.message);
    return m;
}

TI_TEST(sessions_fall_back_and_say_why) {
    ti_model *m = small_model();
    TI_REQUIRE(m != NULL);
    const char *libs[3] = {"/nonexistent/libOpenCL.so", NULL, NULL};
    const char *why[3] = {"no OpenCL library", "lacks clGetPlatformInfo", "no OpenCL platform"};
    libs[1] = g_incomplete;
    libs[2] = g_complete;
    for (int i = 0; i < 3; i++) {
        ti_test_alloc ca;
        memset(&ca, 0, sizeof ca);
        ti_session_desc d;
        memset(&d, 0, sizeof d);
        d.opencl_library = libs[i];
        d.allocator = ti_test_allocator(&ca);
        ti_error err;
        ti_session *s = ti_session_create(m, &d, &err); /* backend AUTO */
        TI_REQUIRE(s != NULL);
        ti_session_info info;
        memset(&info, 0, sizeof info);
        TI_CHECK(ti_session_get_info(s, &info) == TI_OK);
        TI_CHECK_EQ_INT(info.backend, TI_BACKEND_CPU);
        TI_CHECK_STR_CONTAINS(info.fallback_reason, why[i]);
        memset(ti_session_input(s, 0)->data, 0, ti_session_input(s, 0)->size_bytes);
        TI_CHECK(ti_session_run(s, &err) == TI_OK);
        ti_session_destroy(s);
        d.backend = TI_BACKEND_OPENCL; /* asked for explicitly: an error naming the reason */
        TI_CHECK(ti_session_create(m, &d, &err) == NULL);
        TI_CHECK_EQ_INT(err.code, TI_ERR_BACKEND);
        TI_CHECK_STR_CONTAINS(err.message, why[i]);
        TI_CHECK(ti_test_alloc_balanced(&ca));
        /* the CPU backend never looks for OpenCL */
        d.backend = TI_BACKEND_CPU;
        s = ti_session_create(m, &d, &err);
        TI_REQUIRE(s != NULL);
        TI_CHECK(ti_session_get_info(s, &info) == TI_OK && info.fallback_reason[0] == 0);
        ti_session_destroy(s);
    }
    ti_model_free(m);
}

static const char *g_kernel =
    "__kernel void axpb(__global const float *x, __global float *y, float a, float b) {\n"
    "    size_t i = get_global_id(0);\n"
    "    y[i] = a * x[i] + b;\n"
    "}\n";

TI_TEST(real_library_runs_a_kernel) {
    ti_cl_api cl;
    ti_cl_report rep;
    if (ti_cl_load(&cl, NULL, &rep) != TI_CL_OK) {
        TI_SKIP("no OpenCL library on this machine");
    }
    cl_platform_id plat[8];
    cl_uint np = 0;
    if (cl.clGetPlatformIDs(8, plat, &np) != CL_SUCCESS || np == 0) {
        memset(&cl, 0, sizeof cl);
        TI_SKIP("OpenCL library without platforms");
    }
    cl_device_id dev = NULL;
    cl_uint nd = 0;
    for (cl_uint p = 0; p < np && nd == 0; p++)
        cl.clGetDeviceIDs(plat[p], CL_DEVICE_TYPE_ALL, 1, &dev, &nd);
    TI_REQUIRE(nd == 1);
    cl_int e;
    cl_context ctx = cl.clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
    TI_REQUIRE(e == CL_SUCCESS);
    cl_command_queue q = cl.clCreateCommandQueueWithProperties
                             ? cl.clCreateCommandQueueWithProperties(ctx, dev, NULL, &e)
                             : cl.clCreateCommandQueue(ctx, dev, 0, &e);
    TI_REQUIRE(e == CL_SUCCESS);
    cl_program prog = cl.clCreateProgramWithSource(ctx, 1, &g_kernel, NULL, &e);
    TI_REQUIRE(e == CL_SUCCESS);
    e = cl.clBuildProgram(prog, 1, &dev, "", NULL, NULL);
    TI_CHECK_EQ_INT(e, CL_SUCCESS);
    cl_kernel k = cl.clCreateKernel(prog, "axpb", &e);
    TI_REQUIRE(e == CL_SUCCESS);
    enum { N = 1000 };
    float x[N], y[N];
    for (int i = 0; i < N; i++) x[i] = (float)i;
    cl_mem bx = cl.clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof x, x, &e);
    cl_mem by = cl.clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, sizeof y, NULL, &e);
    float a = 2.0f, b = 1.0f;
    cl.clSetKernelArg(k, 0, sizeof bx, &bx);
    cl.clSetKernelArg(k, 1, sizeof by, &by);
    cl.clSetKernelArg(k, 2, sizeof a, &a);
    cl.clSetKernelArg(k, 3, sizeof b, &b);
    size_t gsz = N, wg = 0;
    TI_CHECK_EQ_INT(cl.clGetKernelWorkGroupInfo(k, dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL),
                    CL_SUCCESS);
    TI_CHECK(wg >= 1);
    TI_CHECK_EQ_INT(cl.clEnqueueNDRangeKernel(q, k, 1, NULL, &gsz, NULL, 0, NULL, NULL), CL_SUCCESS);
    TI_CHECK_EQ_INT(cl.clEnqueueReadBuffer(q, by, CL_TRUE, 0, sizeof y, y, 0, NULL, NULL), CL_SUCCESS);
    int bad = 0;
    for (int i = 0; i < N; i++) bad += y[i] != 2.0f * (float)i + 1.0f;
    TI_CHECK_EQ_INT(bad, 0);
    cl.clReleaseMemObject(bx);
    cl.clReleaseMemObject(by);
    cl.clReleaseKernel(k);
    cl.clReleaseProgram(prog);
    cl.clReleaseCommandQueue(q);
    cl.clReleaseContext(ctx);
    printf("ran a kernel on '%s'\n", rep.loaded);
    /* drivers keep process-wide state: keep the library mapped (see cl/probe.c) */
    memset(&cl, 0, sizeof cl);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        printf("usage: test_cl_loader STUB_INCOMPLETE.so STUB_COMPLETE.so\n");
        return 2;
    }
    g_incomplete = argv[1];
    g_complete = argv[2];
    TI_RUN(missing_library_is_reported);
    TI_RUN(environment_override);
    TI_RUN(incomplete_library_is_refused);
    TI_RUN(complete_library_loads_and_unloads);
    TI_RUN(sessions_fall_back_and_say_why);
    TI_RUN(real_library_runs_a_kernel);
    return ti_test_summary();
}
