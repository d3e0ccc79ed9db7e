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
