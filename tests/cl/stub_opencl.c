/* A stand-in OpenCL library for the loader tests, built as a shared object by build.sh:
 * by default it exports only clGetPlatformIDs (a library lacking required symbols); with
 * -DSTUB_COMPLETE it exports every table entry and reports zero platforms. Only
 * clGetPlatformIDs is ever called, with its real signature. */
#include "tinyinfer_cl.h"

cl_int clGetPlatformIDs(cl_uint n, cl_platform_id *platforms, cl_uint *num);
cl_int clGetPlatformIDs(cl_uint n, cl_platform_id *platforms, cl_uint *num) {
    (void)n;
    (void)platforms;
    if (num) *num = 0;
    return CL_PLATFORM_NOT_FOUND_KHR;
}

#ifdef STUB_COMPLETE
/* Every other entry as a data symbol: dlsym finds it, nobody calls it. The real
 * clGetPlatformIDs above is kept by renaming the X-macro's entry for it. */
#define clGetPlatformIDs ti_stub_unused_slot
#define STUB_DEF(req, ret, name, args) int name = 0;
TI_CL_FUNCS(STUB_DEF)
#undef clGetPlatformIDs
#endif
