/* Looks for a usable OpenCL device at session creation and says, in one line, what it
 * found: the reason a session runs on the CPU. Relies on the loader (cl/loader.c). Must
 * leave nothing loaded behind and never fail a session that may fall back. */
#ifndef TI_NO_OPENCL

/* Picks a device, GPUs first: *name gets "platform / device". Returns 1 when one exists. */
TI__PRIVATE int ti__cl_pick(const ti_cl_api *cl, char *name, size_t cap, char *why, size_t whycap) {
    cl_platform_id plats[16];
    cl_uint np = 0;
    cl_int e = cl->clGetPlatformIDs(16, plats, &np);
    if (e != CL_SUCCESS || np == 0) {
        snprintf(why, whycap, "no OpenCL platform (clGetPlatformIDs: %s)",
                 e != CL_SUCCESS ? ti_cl_error_string(e) : "0 platforms");
        return 0;
    }
    if (np > 16) np = 16;
    static const cl_device_type order[2] = {CL_DEVICE_TYPE_GPU, CL_DEVICE_TYPE_ALL};
    for (int pass = 0; pass < 2; pass++)
        for (cl_uint p = 0; p < np; p++) {
            cl_device_id dev;
            cl_uint nd = 0;
            if (cl->clGetDeviceIDs(plats[p], order[pass], 1, &dev, &nd) != CL_SUCCESS || nd == 0)
                continue;
            char pname[128] = "", dname[128] = "";
            cl->clGetPlatformInfo(plats[p], CL_PLATFORM_NAME, sizeof pname - 1, pname, NULL);
            cl->clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof dname - 1, dname, NULL);
            snprintf(name, cap, "%s / %s", pname, dname);
            return 1;
        }
    snprintf(why, whycap, "%u OpenCL platform(s) but no device", (unsigned)np);
    return 0;
}

/* Fills reason with what OpenCL offers; returns 1 when a device was found. */
TI__PRIVATE int ti__cl_probe(const char *library, char *reason, size_t cap) {
    ti_cl_api cl;
    ti_cl_report rep;
    ti_cl_status st = ti_cl_load(&cl, library, &rep);
    if (st == TI_CL_NOT_FOUND) {
        snprintf(reason, cap, "no OpenCL library (tried %d: '%s': %s%s)", rep.num_tried,
                 rep.tried[0].path, rep.tried[0].error, rep.num_tried > 1 ? ", ..." : "");
        return 0;
    }
    if (st == TI_CL_INCOMPLETE) {
        snprintf(reason, cap, "the OpenCL library '%s' lacks %s", rep.tried[0].path,
                 rep.missing_symbol);
        return 0;
    }
    char dev[260] = "", why[160] = "";
    int found = ti__cl_pick(&cl, dev, sizeof dev, why, sizeof why);
    if (found)
        snprintf(reason, cap, "OpenCL device '%s' (%s) found, but this version has no OpenCL "
                 "kernels yet (issue #5)", dev, rep.loaded);
    else
        snprintf(reason, cap, "%s (%s)", why, rep.loaded);
    /* Keep the library mapped: ICD loaders and drivers (PoCL, NVIDIA) keep process-wide
     * state from clGetPlatformIDs on and do not all survive being unloaded; a later dlopen
     * of the same file only bumps its reference count. */
    memset(&cl, 0, sizeof cl);
    return found;
}
#endif /* TI_NO_OPENCL */
