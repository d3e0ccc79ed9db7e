/* fp16 storage on OpenCL (desc.precision TI_PRECISION_FP16): the kernels keep activations
 * and float constants as IEEE halves, computing in float (cl/kernels.c, -DTI_F16). The
 * host boundary stays float: model inputs and outputs, nodes that run on the CPU, memory
 * bound by the caller, zero copy and linked sessions all use the float mirror (act) as in
 * fp32, and the conversion kernels (ti_to_half, ti_from_half) move a value between it and
 * the half buffer (act16) on the device, where converting costs a fraction of a copy.
 * Constants are converted once, on the host, when they are uploaded. Relies on
 * cl/ops.c; used by cl/backend.c. Must not allocate: the conversions run inside
 * ti_session_run. */
#ifndef TI_NO_OPENCL

/* Bytes constant value v takes in the constant buffer: float ones as halves. */
TI__PRIVATE size_t ti__clplan_cst_bytes(const ti_session *s, const ti__clplan *g, int v) {
    const ti_tensor *t = &s->t[v];
    if (g->rt.f16 && t->dtype == TI_DTYPE_F32) return ti__numel(t) * 2;
    return t->size_bytes;
}

/* Writes constant value v into the staging copy of the constant buffer at dst. */
TI__PRIVATE void ti__clplan_cst_fill(const ti_session *s, const ti__clplan *g, int v,
                                     unsigned char *dst) {
    const ti_tensor *t = &s->t[v];
    if (!(g->rt.f16 && t->dtype == TI_DTYPE_F32)) {
        memcpy(dst, t->data, t->size_bytes);
        return;
    }
    const float *x = (const float *)t->data;
    size_t n = ti__numel(t);
    for (size_t i = 0; i < n; i++) { /* little-endian halves, as the device reads them */
        uint16_t h = ti__f32_to_f16(x[i]);
        dst[2 * i] = (unsigned char)(h & 0xff);
        dst[2 * i + 1] = (unsigned char)(h >> 8);
    }
}

/* The half buffer: one half for each float of the arena (value v at the same element
 * index), made with the plan. Returns the CL error. */
TI__PRIVATE cl_int ti__clplan_make_act16(ti__clplan *g) {
    if (!g->rt.f16) return CL_SUCCESS;
    cl_int e = CL_SUCCESS;
    g->act16 =
        g->rt.api.clCreateBuffer(g->rt.ctx, CL_MEM_READ_WRITE, g->act_bytes / 2 + 64, NULL, &e);
    if (g->act16 == NULL && e == CL_SUCCESS) e = CL_OUT_OF_RESOURCES;
    return e;
}

/* The float copy of value v on the device: the caller's memory wrapped in a buffer, or
 * the arena mirror at v's slot (offset in floats). */
TI__PRIVATE void ti__clplan_f32_loc(const ti_session *s, const ti__clplan *g, int v, cl_mem *mem,
                                    size_t *off) {
    if (g->bmem != NULL && g->bmem[v] != NULL) {
        *mem = g->bmem[v];
        *off = 0;
    } else {
        *mem = g->act;
        *off = ti__cl_off(s, v) / 4;
    }
}

/* Converts value v between its float copy and its half copy on the device (to_half: the
 * float one is current). The device must own the arena (zero copy: unmapped). */
TI__PRIVATE cl_int ti__clplan_convert(ti_session *s, ti__clplan *g, int v, int to_half) {
    ti__clrt *rt = &g->rt;
    ti__clk k = to_half ? TI__CLK_TO_HALF : TI__CLK_FROM_HALF;
    size_t n = ti__numel(&s->t[v]);
    cl_mem fm;
    size_t fo;
    ti__clplan_f32_loc(s, g, v, &fm, &fo);
    ti__clargs a;
    ti__cla_begin(&a, rt, k);
    if (to_half) {
        ti__cla_mem(&a, fm, fo);
        ti__cla_mem(&a, g->act16, ti__cl_off(s, v) / 4);
    } else {
        ti__cla_mem(&a, g->act16, ti__cl_off(s, v) / 4);
        ti__cla_mem(&a, fm, fo);
    }
    ti__cla_int(&a, (int64_t)n);
    if (a.err != CL_SUCCESS) return a.err;
    return ti__clrt_launch(rt, k, 1, &n, NULL);
}

/* Is value v one the conversions apply to (a float activation, not a constant)? */
TI__PRIVATE int ti__clplan_halved(const ti_session *s, const ti__clplan *g, int v) {
    return g->rt.f16 && v >= 0 && s->t[v].dtype == TI_DTYPE_F32 && s->t[v].size_bytes > 0 &&
           s->t[v].data != NULL && g->cst_off[v] == (size_t)-1;
}

/* Before a GPU node: input v in the half buffer. Its float copy is current on the device
 * (ti__clplan_sync ran) and the device owns the arena. */
TI__PRIVATE cl_int ti__clplan_to_half(ti_session *s, ti__clplan *g, int v) {
    if (!ti__clplan_halved(s, g, v) || (g->where[v] & TI__CL_HALF)) return CL_SUCCESS;
    cl_int e = ti__clplan_convert(s, g, v, 1);
    if (e == CL_SUCCESS) g->where[v] |= TI__CL_HALF;
    return e;
}

TI__PRIVATE cl_int ti__clplan_own(ti_session *s, ti__clplan *g, int host, cl_bool blocking);

/* Before the host (a CPU node, the run's end, a fetch) or a linked session reads value v:
 * its float copy on the device made current from the half one when only that is. */
TI__PRIVATE cl_int ti__clplan_from_half(ti_session *s, ti__clplan *g, int v) {
    if (!ti__clplan_halved(s, g, v) || (g->where[v] & (TI__CL_HOST | TI__CL_DEV)) ||
        !(g->where[v] & TI__CL_HALF))
        return CL_SUCCESS;
    cl_int e = ti__clplan_own(s, g, 0, CL_TRUE); /* zero copy: the device writes the arena */
    if (e == CL_SUCCESS) e = ti__clplan_convert(s, g, v, 0);
    if (e == CL_SUCCESS) g->where[v] |= TI__CL_DEV;
    return e;
}
#endif /* TI_NO_OPENCL */
