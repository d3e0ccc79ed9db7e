/* tinyinfer_cl.h: the OpenCL loader of tinyinfer on its own. It declares the OpenCL types,
 * constants and a function table (ti_cl_api) that ti_cl_load fills with dlopen/dlsym, so
 * no OpenCL header or library is needed at build time. Define TINYINFER_CL_IMPLEMENTATION
 * in one file before including it. tinyinfer.h already contains this text: a program that
 * implements tinyinfer.h needs no TINYINFER_CL_IMPLEMENTATION. Generated from src/cl/ by
 * tools/amalgamate: edit src/, not this file. MIT licence: see the end of the file. */
/* ==== begin src/cl/cl_api.h ================================================================= */
/* The OpenCL loader's public part: the CL types and constants tinyinfer uses, a function
 * table filled at run time with dlopen/dlsym (LoadLibrary/GetProcAddress on Windows), and
 * ti_cl_load/ti_cl_unload. No CL header is needed at build time; when the user included
 * Khronos' <CL/cl.h> first (CL_VERSION_1_0 defined), its types and constants are used.
 * This text is both tinyinfer_cl.h (on its own) and a part of tinyinfer.h; the shared
 * guard TINYINFER_CL_H makes including both harmless. Must not link anything. */
#ifndef TINYINFER_CL_H
#define TINYINFER_CL_H

#include <stddef.h>
#include <stdint.h>

#ifndef TI_CL_API
#if defined(TI_API) /* inside tinyinfer.h: the same linkage as the rest of the API */
#define TI_CL_API TI_API
#elif defined(TI_STATIC)
#define TI_CL_API static
#else
#define TI_CL_API extern
#endif
#endif

/* The calling convention of CL entry points and callbacks. */
#if defined(_WIN32) && !defined(_WIN64)
#define TI_CL_CALL __stdcall
#else
#define TI_CL_CALL
#endif

#ifndef CL_VERSION_1_0
/* Types as in Khronos' cl_platform.h / cl.h. The struct tags are Khronos' own, so that
 * pointers pass between this header and code built with the real headers. */
typedef int32_t cl_int;
typedef uint32_t cl_uint;
typedef int64_t cl_long;
typedef uint64_t cl_ulong;
typedef cl_uint cl_bool;
typedef cl_ulong cl_bitfield;
typedef cl_bitfield cl_device_type;
typedef cl_uint cl_platform_info;
typedef cl_uint cl_device_info;
typedef cl_bitfield cl_command_queue_properties;
typedef cl_bitfield cl_queue_properties;
typedef intptr_t cl_context_properties;
typedef cl_uint cl_context_info;
typedef cl_bitfield cl_mem_flags;
typedef cl_bitfield cl_map_flags;
typedef cl_uint cl_program_info;
typedef cl_uint cl_program_build_info;
typedef cl_int cl_build_status;
typedef cl_uint cl_kernel_work_group_info;
typedef cl_uint cl_event_info;
typedef cl_uint cl_profiling_info;
typedef struct _cl_platform_id *cl_platform_id;
typedef struct _cl_device_id *cl_device_id;
typedef struct _cl_context *cl_context;
typedef struct _cl_command_queue *cl_command_queue;
typedef struct _cl_mem *cl_mem;
typedef struct _cl_program *cl_program;
typedef struct _cl_kernel *cl_kernel;
typedef struct _cl_event *cl_event;

#define CL_SUCCESS 0
#define CL_DEVICE_NOT_FOUND -1
#define CL_DEVICE_NOT_AVAILABLE -2
#define CL_COMPILER_NOT_AVAILABLE -3
#define CL_MEM_OBJECT_ALLOCATION_FAILURE -4
#define CL_OUT_OF_RESOURCES -5
#define CL_OUT_OF_HOST_MEMORY -6
#define CL_PROFILING_INFO_NOT_AVAILABLE -7
#define CL_BUILD_PROGRAM_FAILURE -11
#define CL_MAP_FAILURE -12
#define CL_INVALID_VALUE -30
#define CL_INVALID_DEVICE_TYPE -31
#define CL_INVALID_PLATFORM -32
#define CL_INVALID_DEVICE -33
#define CL_INVALID_CONTEXT -34
#define CL_INVALID_COMMAND_QUEUE -36
#define CL_INVALID_MEM_OBJECT -38
#define CL_INVALID_BINARY -42
#define CL_INVALID_BUILD_OPTIONS -43
#define CL_INVALID_PROGRAM -44
#define CL_INVALID_PROGRAM_EXECUTABLE -45
#define CL_INVALID_KERNEL_NAME -46
#define CL_INVALID_KERNEL -48
#define CL_INVALID_ARG_INDEX -49
#define CL_INVALID_ARG_VALUE -50
#define CL_INVALID_ARG_SIZE -51
#define CL_INVALID_KERNEL_ARGS -52
#define CL_INVALID_WORK_DIMENSION -53
#define CL_INVALID_WORK_GROUP_SIZE -54
#define CL_INVALID_WORK_ITEM_SIZE -55
#define CL_INVALID_GLOBAL_OFFSET -56
#define CL_INVALID_EVENT_WAIT_LIST -57
#define CL_INVALID_EVENT -58
#define CL_INVALID_OPERATION -59
#define CL_INVALID_BUFFER_SIZE -61
#define CL_INVALID_GLOBAL_WORK_SIZE -63
#define CL_PLATFORM_NOT_FOUND_KHR -1001

#define CL_FALSE 0
#define CL_TRUE 1

#define CL_PLATFORM_PROFILE 0x0900
#define CL_PLATFORM_VERSION 0x0901
#define CL_PLATFORM_NAME 0x0902
#define CL_PLATFORM_VENDOR 0x0903
#define CL_PLATFORM_EXTENSIONS 0x0904

#define CL_DEVICE_TYPE_DEFAULT (1 << 0)
#define CL_DEVICE_TYPE_CPU (1 << 1)
#define CL_DEVICE_TYPE_GPU (1 << 2)
#define CL_DEVICE_TYPE_ACCELERATOR (1 << 3)
#define CL_DEVICE_TYPE_ALL 0xFFFFFFFF

#define CL_DEVICE_TYPE 0x1000
#define CL_DEVICE_MAX_COMPUTE_UNITS 0x1002
#define CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS 0x1003
#define CL_DEVICE_MAX_WORK_GROUP_SIZE 0x1004
#define CL_DEVICE_MAX_WORK_ITEM_SIZES 0x1005
#define CL_DEVICE_MAX_CLOCK_FREQUENCY 0x100C
#define CL_DEVICE_MAX_MEM_ALLOC_SIZE 0x1010
#define CL_DEVICE_GLOBAL_MEM_SIZE 0x101F
#define CL_DEVICE_LOCAL_MEM_SIZE 0x1023
#define CL_DEVICE_HOST_UNIFIED_MEMORY 0x1035
#define CL_DEVICE_NAME 0x102B
#define CL_DEVICE_VENDOR 0x102C
#define CL_DRIVER_VERSION 0x102D
#define CL_DEVICE_VERSION 0x102F
#define CL_DEVICE_EXTENSIONS 0x1030

#define CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE (1 << 0)
#define CL_QUEUE_PROFILING_ENABLE (1 << 1)
#define CL_QUEUE_PROPERTIES 0x1093

#define CL_MEM_READ_WRITE (1 << 0)
#define CL_MEM_WRITE_ONLY (1 << 1)
#define CL_MEM_READ_ONLY (1 << 2)
#define CL_MEM_USE_HOST_PTR (1 << 3)
#define CL_MEM_ALLOC_HOST_PTR (1 << 4)
#define CL_MEM_COPY_HOST_PTR (1 << 5)

#define CL_MAP_READ (1 << 0)
#define CL_MAP_WRITE (1 << 1)
#define CL_MAP_WRITE_INVALIDATE_REGION (1 << 2)

#define CL_PROGRAM_NUM_DEVICES 0x1162
#define CL_PROGRAM_DEVICES 0x1163
#define CL_PROGRAM_BINARY_SIZES 0x1165
#define CL_PROGRAM_BINARIES 0x1166
#define CL_PROGRAM_BUILD_STATUS 0x1181
#define CL_PROGRAM_BUILD_OPTIONS 0x1182
#define CL_PROGRAM_BUILD_LOG 0x1183
#define CL_BUILD_SUCCESS 0
#define CL_BUILD_NONE -1
#define CL_BUILD_ERROR -2
#define CL_BUILD_IN_PROGRESS -3

#define CL_KERNEL_WORK_GROUP_SIZE 0x11B0
#define CL_KERNEL_COMPILE_WORK_GROUP_SIZE 0x11B1
#define CL_KERNEL_LOCAL_MEM_SIZE 0x11B2
#define CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE 0x11B3
#define CL_KERNEL_PRIVATE_MEM_SIZE 0x11B4

#define CL_EVENT_COMMAND_EXECUTION_STATUS 0x11D3
#define CL_COMPLETE 0x0
#define CL_RUNNING 0x1
#define CL_SUBMITTED 0x2
#define CL_QUEUED 0x3

#define CL_PROFILING_COMMAND_QUEUED 0x1280
#define CL_PROFILING_COMMAND_SUBMIT 0x1281
#define CL_PROFILING_COMMAND_START 0x1282
#define CL_PROFILING_COMMAND_END 0x1283
#endif /* CL_VERSION_1_0 */

/* X(required, return type, name, parameter list): drives the table fields, the loading
 * loop and the header cross-check test. Optional entries (CL 1.1+, 2.0) may stay NULL. */
#define TI_CL_FUNCS(X)                                                                         \
    X(1, cl_int, clGetPlatformIDs, (cl_uint, cl_platform_id *, cl_uint *))                      \
    X(1, cl_int, clGetPlatformInfo, (cl_platform_id, cl_platform_info, size_t, void *, size_t *)) \
    X(1, cl_int, clGetDeviceIDs, (cl_platform_id, cl_device_type, cl_uint, cl_device_id *, cl_uint *)) \
    X(1, cl_int, clGetDeviceInfo, (cl_device_id, cl_device_info, size_t, void *, size_t *))     \
    X(1, cl_context, clCreateContext,                                                          \
      (const cl_context_properties *, cl_uint, const cl_device_id *,                           \
       void(TI_CL_CALL *)(const char *, const void *, size_t, void *), void *, cl_int *))       \
    X(1, cl_int, clReleaseContext, (cl_context))                                               \
    X(0, cl_command_queue, clCreateCommandQueue,                                               \
      (cl_context, cl_device_id, cl_command_queue_properties, cl_int *))                       \
    X(0, cl_command_queue, clCreateCommandQueueWithProperties,                                 \
      (cl_context, cl_device_id, const cl_queue_properties *, cl_int *))                       \
    X(1, cl_int, clReleaseCommandQueue, (cl_command_queue))                                    \
    X(1, cl_mem, clCreateBuffer, (cl_context, cl_mem_flags, size_t, void *, cl_int *))          \
    X(1, cl_int, clReleaseMemObject, (cl_mem))                                                 \
    X(1, cl_program, clCreateProgramWithSource,                                                \
      (cl_context, cl_uint, const char **, const size_t *, cl_int *))                          \
    X(1, cl_program, clCreateProgramWithBinary,                                                \
      (cl_context, cl_uint, const cl_device_id *, const size_t *, const unsigned char **,       \
       cl_int *, cl_int *))                                                                    \
    X(1, cl_int, clBuildProgram,                                                               \
      (cl_program, cl_uint, const cl_device_id *, const char *,                                \
       void(TI_CL_CALL *)(cl_program, void *), void *))                                        \
    X(1, cl_int, clGetProgramInfo, (cl_program, cl_program_info, size_t, void *, size_t *))     \
    X(1, cl_int, clGetProgramBuildInfo,                                                        \
      (cl_program, cl_device_id, cl_program_build_info, size_t, void *, size_t *))             \
    X(1, cl_int, clReleaseProgram, (cl_program))                                               \
    X(1, cl_kernel, clCreateKernel, (cl_program, const char *, cl_int *))                      \
    X(1, cl_int, clReleaseKernel, (cl_kernel))                                                 \
    X(1, cl_int, clSetKernelArg, (cl_kernel, cl_uint, size_t, const void *))                   \
    X(1, cl_int, clGetKernelWorkGroupInfo,                                                     \
      (cl_kernel, cl_device_id, cl_kernel_work_group_info, size_t, void *, size_t *))          \
    X(1, cl_int, clEnqueueNDRangeKernel,                                                       \
      (cl_command_queue, cl_kernel, cl_uint, const size_t *, const size_t *, const size_t *,   \
       cl_uint, const cl_event *, cl_event *))                                                 \
    X(1, cl_int, clEnqueueReadBuffer,                                                          \
      (cl_command_queue, cl_mem, cl_bool, size_t, size_t, void *, cl_uint, const cl_event *,   \
       cl_event *))                                                                            \
    X(1, cl_int, clEnqueueWriteBuffer,                                                         \
      (cl_command_queue, cl_mem, cl_bool, size_t, size_t, const void *, cl_uint,               \
       const cl_event *, cl_event *))                                                          \
    X(1, cl_int, clEnqueueCopyBuffer,                                                          \
      (cl_command_queue, cl_mem, cl_mem, size_t, size_t, size_t, cl_uint, const cl_event *,    \
       cl_event *))                                                                            \
    X(1, void *, clEnqueueMapBuffer,                                                           \
      (cl_command_queue, cl_mem, cl_bool, cl_map_flags, size_t, size_t, cl_uint,               \
       const cl_event *, cl_event *, cl_int *))                                                \
    X(1, cl_int, clEnqueueUnmapMemObject,                                                      \
      (cl_command_queue, cl_mem, void *, cl_uint, const cl_event *, cl_event *))               \
    X(1, cl_int, clFlush, (cl_command_queue))                                                  \
    X(1, cl_int, clFinish, (cl_command_queue))                                                 \
    X(1, cl_int, clWaitForEvents, (cl_uint, const cl_event *))                                 \
    X(1, cl_int, clGetEventInfo, (cl_event, cl_event_info, size_t, void *, size_t *))           \
    X(1, cl_int, clGetEventProfilingInfo, (cl_event, cl_profiling_info, size_t, void *, size_t *)) \
    X(1, cl_int, clReleaseEvent, (cl_event))                                                   \
    X(0, cl_int, clSetEventCallback,                                                           \
      (cl_event, cl_int, void(TI_CL_CALL *)(cl_event, cl_int, void *), void *))                \
    X(0, cl_int, clEnqueueFillBuffer,                                                          \
      (cl_command_queue, cl_mem, const void *, size_t, size_t, size_t, cl_uint,                \
       const cl_event *, cl_event *))

/* The function table: never globals named clXxx, so it can sit beside a linked OpenCL. */
typedef struct ti_cl_api {
    void *lib; /* the dlopen handle; NULL when not loaded */
#define TI__CL_FIELD(req, ret, name, args) ret(TI_CL_CALL *name) args;
    TI_CL_FUNCS(TI__CL_FIELD)
#undef TI__CL_FIELD
} ti_cl_api;

typedef enum ti_cl_status {
    TI_CL_OK = 0,
    TI_CL_NOT_FOUND,  /* no candidate library could be opened */
    TI_CL_INCOMPLETE  /* a library opened but lacks a required symbol */
} ti_cl_status;

#define TI_CL_MAX_TRIED 24
/* What ti_cl_load tried: every candidate with the loader's error text, the first required
 * symbol that was missing, and the library that was loaded. */
typedef struct ti_cl_report {
    int num_tried;
    struct {
        char path[96];
        char error[160]; /* "" for the one that loaded */
    } tried[TI_CL_MAX_TRIED];
    char missing_symbol[64];
    char loaded[96];
} ti_cl_report;

#ifdef __cplusplus
extern "C" {
#endif
/* Opens the OpenCL library and fills *api. With library_path (or, when it is NULL, the
 * environment variable TINYINFER_OPENCL_LIBRARY) only that file is tried; otherwise the
 * platform's usual names and vendor paths (Android vendor libraries, libOpenCL.so.1, the
 * macOS framework, OpenCL.dll). report may be NULL. On failure *api is zeroed. */
TI_CL_API ti_cl_status ti_cl_load(ti_cl_api *api, const char *library_path, ti_cl_report *report);
/* Closes the library and zeroes the table. NULL and unloaded tables are fine. */
TI_CL_API void ti_cl_unload(ti_cl_api *api);
/* "CL_INVALID_WORK_GROUP_SIZE" for -54, ...; never NULL. */
TI_CL_API const char *ti_cl_error_string(cl_int code);
#ifdef __cplusplus
}
#endif

#endif /* TINYINFER_CL_H */
/* ==== end src/cl/cl_api.h =================================================================== */

#if defined(TINYINFER_CL_IMPLEMENTATION) || defined(TINYINFER_IMPLEMENTATION)
/* ==== begin src/cl/loader.c ================================================================= */
/* The OpenCL loader: opens the vendor library at run time and fills the function table,
 * reporting every candidate it tried. Relies on dlopen/dlsym (LoadLibraryA/GetProcAddress
 * on Windows, declared here instead of including <windows.h>). Must not abort or print:
 * a missing or broken library is a report, and callers fall back to the CPU. */
#if !defined(TINYINFER_CL_IMPLEMENTATION_DONE) && !defined(TI_NO_OPENCL)
#define TINYINFER_CL_IMPLEMENTATION_DONE
#include <stdlib.h>
#include <string.h>
#ifdef _WIN32
/* the exact types of <windows.h> (HMODULE, FARPROC), so that it may come before or after */
typedef struct HINSTANCE__ *ti__cl_hmodule;
typedef intptr_t(__stdcall *ti__cl_farproc)();
#ifdef __cplusplus
extern "C" { /* as <windows.h> declares them */
#endif
__declspec(dllimport) ti__cl_hmodule __stdcall LoadLibraryA(const char *);
__declspec(dllimport) ti__cl_farproc __stdcall GetProcAddress(ti__cl_hmodule, const char *);
__declspec(dllimport) int __stdcall FreeLibrary(ti__cl_hmodule);
__declspec(dllimport) unsigned long __stdcall GetLastError(void);
__declspec(dllimport) unsigned int __stdcall SetErrorMode(unsigned int);
#ifdef __cplusplus
}
#endif
#else
#include <dlfcn.h>
#endif

static void ti__cl_copy(char *dst, size_t cap, const char *src) {
    size_t n = src ? strlen(src) : 0;
    if (n >= cap) n = cap - 1;
    if (n) memcpy(dst, src, n);
    dst[n] = 0;
}

/* Opens one candidate; on failure writes the loader's reason into err. */
static void *ti__cl_open(const char *path, char *err, size_t errcap) {
#ifdef _WIN32
    unsigned int old = SetErrorMode(0x8001); /* no "DLL not found" dialog boxes */
    void *h = (void *)LoadLibraryA(path);
    SetErrorMode(old);
    if (h == NULL) {
        unsigned long e = GetLastError(), d = 1000000000UL;
        char num[16], *p = num;
        while (d > 1 && d > e) d /= 10;
        for (; d > 0; d /= 10) *p++ = (char)('0' + (e / d) % 10);
        *p = 0;
        ti__cl_copy(err, errcap, "LoadLibrary failed, error ");
        ti__cl_copy(err + strlen(err), errcap - strlen(err), num);
    }
    return h;
#else
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        const char *e = dlerror();
        ti__cl_copy(err, errcap, e ? e : "dlopen failed");
    }
    return h;
#endif
}

static void *ti__cl_symbol(void *lib, const char *name) {
#ifdef _WIN32
    ti__cl_farproc f = GetProcAddress((ti__cl_hmodule)lib, name);
    void *p;
    memcpy(&p, &f, sizeof p); /* a function pointer as the table's void * (ISO C has no cast) */
    return p;
#else
    return dlsym(lib, name);
#endif
}

static void ti__cl_close(void *lib) {
    if (lib == NULL) return;
#ifdef _WIN32
    FreeLibrary((ti__cl_hmodule)lib);
#elif defined(__ANDROID__)
    /* Android before API 28 may crash unloading vendor GPU drivers: keep it mapped. */
    (void)lib;
#else
    dlclose(lib);
#endif
}

/* The usual places, most specific first. */
static const char *const ti__cl_candidates[] = {
#if defined(__ANDROID__)
    "libOpenCL.so",
#if defined(__LP64__)
    "/vendor/lib64/libOpenCL.so", "/system/vendor/lib64/libOpenCL.so",
    "/system/lib64/libOpenCL.so", "/vendor/lib64/libOpenCL_adreno.so",
    "/vendor/lib64/egl/libGLES_mali.so", "/system/vendor/lib64/egl/libGLES_mali.so",
    "/vendor/lib64/libmali.so", "/vendor/lib64/libPVROCL.so",
#else
    "/vendor/lib/libOpenCL.so", "/system/vendor/lib/libOpenCL.so", "/system/lib/libOpenCL.so",
    "/vendor/lib/libOpenCL_adreno.so", "/vendor/lib/egl/libGLES_mali.so",
    "/system/vendor/lib/egl/libGLES_mali.so", "/vendor/lib/libmali.so",
    "/vendor/lib/libPVROCL.so",
#endif
    "libOpenCL_adreno.so", "libmali.so", "libGLES_mali.so", "libPVROCL.so",
#elif defined(__APPLE__)
    "/System/Library/Frameworks/OpenCL.framework/OpenCL", "libOpenCL.dylib",
#elif defined(_WIN32)
    "OpenCL.dll",
#else
    "libOpenCL.so.1", "libOpenCL.so",
#endif
};

/* Fills the table from lib; returns the first missing required symbol, or NULL. */
static const char *ti__cl_fill(ti_cl_api *api, void *lib) {
    void *sym;
    typedef char ti__cl_fnptr_is_data_sized[sizeof(sym) == sizeof(api->clFinish) ? 1 : -1];
    (void)sizeof(ti__cl_fnptr_is_data_sized);
    memset(api, 0, sizeof *api);
    api->lib = lib;
    /* dlsym returns data pointers; copying the bits is the portable, pedantic-clean way */
#define TI__CL_LOAD(req, ret, name, args)                                                     \
    sym = ti__cl_symbol(lib, #name);                                                           \
    if (sym == NULL && (req)) return #name;                                                    \
    memcpy(&api->name, &sym, sizeof sym);
    TI_CL_FUNCS(TI__CL_LOAD)
#undef TI__CL_LOAD
    if (api->clCreateCommandQueue == NULL && api->clCreateCommandQueueWithProperties == NULL)
        return "clCreateCommandQueue";
    return NULL;
}

TI_CL_API ti_cl_status ti_cl_load(ti_cl_api *api, const char *library_path, ti_cl_report *report) {
    ti_cl_report local;
    if (report == NULL) report = &local;
    memset(report, 0, sizeof *report);
    if (api == NULL) return TI_CL_NOT_FOUND;
    memset(api, 0, sizeof *api);
    const char *explicit_path = library_path;
    if (explicit_path == NULL || explicit_path[0] == 0) explicit_path = getenv("TINYINFER_OPENCL_LIBRARY");
    const char *const *list = ti__cl_candidates;
    size_t n = sizeof ti__cl_candidates / sizeof ti__cl_candidates[0];
    if (explicit_path != NULL && explicit_path[0] != 0) { /* the user's choice, and only it */
        list = &explicit_path;
        n = 1;
    }
    ti_cl_status status = TI_CL_NOT_FOUND;
    for (size_t i = 0; i < n; i++) {
        int slot = report->num_tried < TI_CL_MAX_TRIED ? report->num_tried++ : TI_CL_MAX_TRIED - 1;
        ti__cl_copy(report->tried[slot].path, sizeof report->tried[slot].path, list[i]);
        void *lib = ti__cl_open(list[i], report->tried[slot].error, sizeof report->tried[slot].error);
        if (lib == NULL) continue;
        const char *missing = ti__cl_fill(api, lib);
        if (missing == NULL) {
            ti__cl_copy(report->loaded, sizeof report->loaded, list[i]);
            return TI_CL_OK;
        }
        /* keep looking: another candidate may be complete */
        ti__cl_copy(report->tried[slot].error, sizeof report->tried[slot].error, "lacks ");
        ti__cl_copy(report->tried[slot].error + 6, sizeof report->tried[slot].error - 6, missing);
        if (report->missing_symbol[0] == 0)
            ti__cl_copy(report->missing_symbol, sizeof report->missing_symbol, missing);
        memset(api, 0, sizeof *api);
        ti__cl_close(lib);
        status = TI_CL_INCOMPLETE;
    }
    return status;
}

TI_CL_API void ti_cl_unload(ti_cl_api *api) {
    if (api == NULL) return;
    ti__cl_close(api->lib);
    memset(api, 0, sizeof *api);
}

TI_CL_API const char *ti_cl_error_string(cl_int code) {
    switch (code) {
#define TI__CL_ERR(c) case c: return #c;
    TI__CL_ERR(CL_SUCCESS) TI__CL_ERR(CL_DEVICE_NOT_FOUND) TI__CL_ERR(CL_DEVICE_NOT_AVAILABLE)
    TI__CL_ERR(CL_COMPILER_NOT_AVAILABLE) TI__CL_ERR(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    TI__CL_ERR(CL_OUT_OF_RESOURCES) TI__CL_ERR(CL_OUT_OF_HOST_MEMORY)
    TI__CL_ERR(CL_PROFILING_INFO_NOT_AVAILABLE) TI__CL_ERR(CL_BUILD_PROGRAM_FAILURE)
    TI__CL_ERR(CL_MAP_FAILURE) TI__CL_ERR(CL_INVALID_VALUE) TI__CL_ERR(CL_INVALID_DEVICE_TYPE)
    TI__CL_ERR(CL_INVALID_PLATFORM) TI__CL_ERR(CL_INVALID_DEVICE) TI__CL_ERR(CL_INVALID_CONTEXT)
    TI__CL_ERR(CL_INVALID_COMMAND_QUEUE) TI__CL_ERR(CL_INVALID_MEM_OBJECT)
    TI__CL_ERR(CL_INVALID_BINARY) TI__CL_ERR(CL_INVALID_BUILD_OPTIONS)
    TI__CL_ERR(CL_INVALID_PROGRAM) TI__CL_ERR(CL_INVALID_PROGRAM_EXECUTABLE)
    TI__CL_ERR(CL_INVALID_KERNEL_NAME) TI__CL_ERR(CL_INVALID_KERNEL)
    TI__CL_ERR(CL_INVALID_ARG_INDEX) TI__CL_ERR(CL_INVALID_ARG_VALUE)
    TI__CL_ERR(CL_INVALID_ARG_SIZE) TI__CL_ERR(CL_INVALID_KERNEL_ARGS)
    TI__CL_ERR(CL_INVALID_WORK_DIMENSION) TI__CL_ERR(CL_INVALID_WORK_GROUP_SIZE)
    TI__CL_ERR(CL_INVALID_WORK_ITEM_SIZE) TI__CL_ERR(CL_INVALID_GLOBAL_OFFSET)
    TI__CL_ERR(CL_INVALID_EVENT_WAIT_LIST) TI__CL_ERR(CL_INVALID_EVENT)
    TI__CL_ERR(CL_INVALID_OPERATION) TI__CL_ERR(CL_INVALID_BUFFER_SIZE)
    TI__CL_ERR(CL_INVALID_GLOBAL_WORK_SIZE) TI__CL_ERR(CL_PLATFORM_NOT_FOUND_KHR)
#undef TI__CL_ERR
    default: return "unknown OpenCL error";
    }
}
#endif /* TINYINFER_CL_IMPLEMENTATION_DONE */
/* ==== end src/cl/loader.c =================================================================== */

#endif

/*
------------------------------------------------------------------------------
tinyinfer is available under the MIT License:

    MIT License

    Copyright (c) 2026 the tinyinfer authors

    Permission is hereby granted, free of charge, to any person obtaining a copy
    of this software and associated documentation files (the "Software"), to deal
    in the Software without restriction, including without limitation the rights
    to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
    copies of the Software, and to permit persons to whom the Software is
    furnished to do so, subject to the following conditions:

    The above copyright notice and this permission notice shall be included in all
    copies or substantial portions of the Software.

    THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
    IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
    FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
    AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
    LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
    OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
    SOFTWARE.
------------------------------------------------------------------------------
*/
