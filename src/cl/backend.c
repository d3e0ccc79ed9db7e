/* The OpenCL backend of a session: places each planned node on the GPU or the CPU (with
 * the reason), lays out device memory (one activation buffer mirroring the CPU arena's
 * offsets, one buffer of constants and kernel parameter tables), builds the programs
 * (at creation, or on a background thread while the CPU serves runs), and runs the plan,
 * copying a tensor between host and device only where a CPU node and a GPU node meet.
 * Relies on cl/ops.c and cl/runtime.c. Must not allocate in ti__clplan_run. */
#ifndef TI_NO_OPENCL

/* ---- plan ---------------------------------------------------------------------------- */

/* Drops the buffer wrapping value v's caller memory (unmapped first when the host owns). */
TI__PRIVATE void ti__clplan_drop_bmem(ti__clplan *g, int v) {
    if (g->bmem == NULL || g->bmem[v] == NULL) return;
    if (g->mapped && g->rt.q) {
        g->rt.api.clEnqueueUnmapMemObject(g->rt.q, g->bmem[v], g->bptr[v], 0, NULL, NULL);
        g->rt.api.clFinish(g->rt.q);
    }
    g->rt.api.clReleaseMemObject(g->bmem[v]);
    g->bmem[v] = NULL;
    for (int i = 0; i < g->n_bvals; i++)
        if (g->bvals[i] == v) g->bvals[i--] = g->bvals[--g->n_bvals];
}

TI__PRIVATE void ti__clplan_release(ti__clplan *g) {
    if (g == NULL) return;
    if (g->pending && g->rt.q) g->rt.api.clFinish(g->rt.q); /* buffers are in use until then */
    g->pending = 0;
    while (g->n_bvals > 0) ti__clplan_drop_bmem(g, g->bvals[0]);
    g->bmem = NULL; /* the tables live in the plan pool */
    g->bptr = NULL;
    g->bbytes = NULL;
    g->bvals = NULL;
    if (g->mapped && g->act && g->rt.q) {
        g->rt.api.clEnqueueUnmapMemObject(g->rt.q, g->act, g->map_ptr, 0, NULL, NULL);
        g->rt.api.clFinish(g->rt.q);
    }
    g->mapped = g->zero_copy = 0;
    g->map_ptr = NULL;
    ti__clrt_ev_drop(&g->rt);
    g->rt.ev = NULL; /* the tables live in the plan pool */
    g->rt.ev_node = NULL;
    g->rt.ev_kind = NULL;
    g->rt.ev_cap = 0;
    if (g->act) g->rt.api.clReleaseMemObject(g->act);
    if (g->cst) g->rt.api.clReleaseMemObject(g->cst);
    if (g->part) g->rt.api.clReleaseMemObject(g->part);
    if (g->act16) g->rt.api.clReleaseMemObject(g->act16);
    g->act = g->cst = g->part = g->act16 = NULL;
    g->part_bytes = 0;
    g->active = 0;
    g->where = NULL; /* the rest lives in the session's plan pool */
    g->cst_off = NULL;
    g->gpu = NULL;
    g->why = NULL;
    g->par = NULL;
    g->npar = NULL;
    g->par_off = NULL;
    g->op = NULL;
    g->n_gpu = g->n_cpu = 0;
}

/* Zero copy: hands the arena to the host (mapped) or to the device (unmapped). The
 * mapped pointer must be the arena itself (CL_MEM_USE_HOST_PTR promises it). */
TI__PRIVATE cl_int ti__clplan_own(ti_session *s, ti__clplan *g, int host, cl_bool blocking) {
    if (!g->zero_copy || g->mapped == host) return CL_SUCCESS;
    const ti_cl_api *cl = &g->rt.api;
    cl_int e = CL_SUCCESS;
    cl_event *ev = ti__clrt_ev_slot(&g->rt);
    if (host) {
        void *p = cl->clEnqueueMapBuffer(g->rt.q, g->act, blocking, CL_MAP_READ | CL_MAP_WRITE, 0,
                                         g->act_bytes, 0, NULL, ev, &e);
        if (ev != NULL) ti__clrt_ev_keep(&g->rt, e, TI__CLEV_DOWNLOAD);
        if (e == CL_SUCCESS && p != (void *)s->arena) {
            cl->clEnqueueUnmapMemObject(g->rt.q, g->act, p, 0, NULL, NULL);
            e = CL_MAP_FAILURE;
        }
        if (e == CL_SUCCESS) {
            g->map_ptr = p;
            g->mapped = 1;
        }
        for (int i = 0; i < g->n_bvals && e == CL_SUCCESS; i++) { /* the caller's memory too */
            int v = g->bvals[i];
            void *q = cl->clEnqueueMapBuffer(g->rt.q, g->bmem[v], blocking, CL_MAP_READ | CL_MAP_WRITE, 0,
                                             g->bbytes[v], 0, NULL, NULL, &e);
            if (e == CL_SUCCESS && q != g->bptr[v]) e = CL_MAP_FAILURE; /* checked when made */
        }
    } else {
        for (int i = 0; i < g->n_bvals && e == CL_SUCCESS; i++)
            e = cl->clEnqueueUnmapMemObject(g->rt.q, g->bmem[g->bvals[i]], g->bptr[g->bvals[i]], 0, NULL, NULL);
        if (e == CL_SUCCESS) e = cl->clEnqueueUnmapMemObject(g->rt.q, g->act, g->map_ptr, 0, NULL, ev);
        if (ev != NULL) ti__clrt_ev_keep(&g->rt, e, TI__CLEV_UPLOAD);
        if (e == CL_SUCCESS) g->mapped = 0;
    }
    if (e == CL_SUCCESS) g->switches++;
    return e;
}

/* On a device that works in host memory (and unless desc.opencl_copy_io), replaces the
 * activation buffer by one wrapping the session's arena, mapped for the host. Keeps the
 * copying buffer when the driver will not map the arena in place. */
TI__PRIVATE void ti__clplan_zero_copy(ti_session *s, ti__clplan *g) {
    if (!g->rt.unified || s->desc.opencl_copy_io || s->arena == NULL || g->zero_copy) return;
    const ti_cl_api *cl = &g->rt.api;
    cl_int e = CL_SUCCESS;
    cl_mem plain = g->act;
    g->act = cl->clCreateBuffer(g->rt.ctx, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, g->act_bytes, s->arena, &e);
    if (g->act == NULL || e != CL_SUCCESS) {
        g->act = plain;
        return;
    }
    g->zero_copy = 1;
    g->mapped = 0;
    if (ti__clplan_own(s, g, 1, CL_TRUE) != CL_SUCCESS) {
        cl->clReleaseMemObject(g->act);
        g->act = plain;
        g->zero_copy = 0;
        return;
    }
    cl->clReleaseMemObject(plain);
}

/* Places the session's planned nodes; builds the programs they need; uploads constants.
 * Never fails the session: anything that cannot run on the GPU runs on the CPU, and
 * s->fallback says why when nothing could. Returns TI_ERR_OUT_OF_MEMORY only. */
TI__PRIVATE ti_status ti__clplan_build(ti_session *s, ti__clplan *g, char *fallback,
                                       size_t fallback_cap, ti_error *err) {
    ti__clplan_release(g);
    ti__pool *pool = &s->plan_pool;
    int nn = s->n_nodes, nv = s->n_values;
    g->where = (unsigned char *)ti__pool_alloc(pool, (size_t)nv + 1);
    g->cst_off = (size_t *)ti__pool_alloc(pool, sizeof(size_t) * ((size_t)nv + 1));
    g->gpu = (unsigned char *)ti__pool_alloc(pool, (size_t)nn + 1);
    g->why = (const char **)ti__pool_alloc(pool, sizeof(char *) * ((size_t)nn + 1));
    g->par = (int32_t **)ti__pool_alloc(pool, sizeof(int32_t *) * ((size_t)nn + 1));
    g->npar = (int *)ti__pool_alloc(pool, sizeof(int) * ((size_t)nn + 1));
    g->par_off = (size_t *)ti__pool_alloc(pool, sizeof(size_t) * ((size_t)nn + 1));
    g->op = (const ti__clop **)ti__pool_alloc(pool, sizeof(ti__clop *) * ((size_t)nn + 1));
    g->tunables = (const char **)ti__pool_alloc(pool, sizeof(char *) * ((size_t)nn + 1));
    g->tuned = (const char **)ti__pool_alloc(pool, sizeof(char *) * ((size_t)nn + 1));
    g->wg = (int *)ti__pool_alloc(pool, sizeof(int) * ((size_t)nn + 1));
    g->node_retries = (int *)ti__pool_alloc(pool, sizeof(int) * ((size_t)nn + 1));
    if (!g->where || !g->cst_off || !g->gpu || !g->why || !g->par || !g->npar || !g->par_off || !g->op ||
        !g->tunables || !g->tuned || !g->wg || !g->node_retries)
        return ti__fail(err, TI_ERR_OUT_OF_MEMORY, s->m->name, "out of memory planning OpenCL");
    if (g->rt.profiling) { /* room for every command of a run; more than that go unrecorded */
        int cap = 8 * nn + 2 * nv + 16;
        g->rt.ev = (cl_event *)ti__pool_alloc(pool, sizeof(cl_event) * (size_t)cap);
        g->rt.ev_node = (int *)ti__pool_alloc(pool, sizeof(int) * (size_t)cap);
        g->rt.ev_kind = (unsigned char *)ti__pool_alloc(pool, (size_t)cap);
        if (!g->rt.ev || !g->rt.ev_node || !g->rt.ev_kind)
            return ti__fail(err, TI_ERR_OUT_OF_MEMORY, s->m->name, "out of memory planning OpenCL");
        g->rt.ev_cap = cap;
        g->rt.ev_n = 0;
    }
    for (int v = 0; v < nv; v++) g->cst_off[v] = (size_t)-1;
    /* 1. which nodes can run there, and the programs they need */
    unsigned need = 0;
    for (int n = 0; n < nn; n++) {
        ti__clc c;
        ti__clc_init(&c, s, g, n);
        const ti__clop *op = g->op[n] = ti__cl_op_find(c.node);
        int ok = 0;
        const char *set = "";
        size_t set_len = 0;
        g->tunables[n] = "";
        g->tuned[n] = "";
        g->node_retries[n] = 0;
        if (ti__tune_find(s, n, c.node->name, &set, &set_len)) {
            g->tuned[n] = ti__pool_strndup(pool, set, set_len);
            if (g->tuned[n] == NULL) g->tuned[n] = "";
        }
        g->wg[n] = (int)ti__tune_get(g->tuned[n], strlen(g->tuned[n]), "wg");
        if (n >= s->first_dynamic) ti__clc_no(&c, "shapes known only at run time");
        else if (op == NULL) ti__clc_no(&c, "no OpenCL kernel for %s", c.node->op);
        else {
            ok = 1;
            for (int i = 0; i < c.n_out && ok; i++)
                if (c.out[i] != NULL && ti__numel(c.out[i]) == 0) ok = ti__clc_no(&c, "empty output");
            if (ok) ok = op->plan(&c);
            if (ok && g->tunables[n][0] == 0 && ti__cl_wg_tunable(op)) g->tunables[n] = ti__cl_tunables(&c, 0, 0);
        }
        g->gpu[n] = (unsigned char)ok;
        if (ok) need |= op->progs | c.progs;
        g->why[n] = ok ? "" : ti__pool_strndup(pool, c.why, strlen(c.why));
        if (g->why[n] == NULL) g->why[n] = "";
    }
    /* fp16 storage: the conversions at the host boundary are eltwise kernels */
    unsigned every = g->rt.f16 ? TI__CLM_ELTWISE : 0;
    if (need) need |= every;
    /* 2. programs (a program that fails to build sends its nodes to the CPU) */
    char fail[320] = "";
    for (int p = 0; p < TI__CLP_COUNT; p++) {
        if (!(need & (1u << p)) || g->rt.prog[p] != NULL) continue;
        char why[300];
        if (!ti__clrt_build(&g->rt, (ti__clp)p, why, sizeof why)) {
            need &= ~(1u << p);
            memcpy(fail, why, sizeof why);
        }
    }
    /* 3. constants and parameter tables in one buffer; activations mirror the arena */
    size_t cst = 0;
    g->n_gpu = g->n_cpu = 0;
    for (int n = 0; n < nn; n++) {
        const ti__clop *op = g->op[n];
        if (g->gpu[n] && (need & (op->progs | every)) != (op->progs | every)) {
            g->gpu[n] = 0;
            g->why[n] = ti__pool_strndup(pool, fail, strlen(fail));
            if (g->why[n] == NULL) g->why[n] = "";
        }
        if (!g->gpu[n]) {
            g->n_cpu++;
            continue;
        }
        g->n_gpu++;
        const ti__node *node = &s->nodes[n];
        for (int i = 0; i < node->n_inputs; i++) {
            int v = node->inputs[i];
            if (v < 0 || !s->vi[v].is_const || g->cst_off[v] != (size_t)-1) continue;
            g->cst_off[v] = cst;
            cst += (ti__clplan_cst_bytes(s, g, v) + 63) & ~(size_t)63;
        }
        g->par_off[n] = cst;
        cst += ((size_t)g->npar[n] * sizeof(int32_t) + 63) & ~(size_t)63;
    }
    if (g->n_gpu == 0) return TI_OK;
    const ti_cl_api *cl = &g->rt.api;
    unsigned char *host = (unsigned char *)ti__calloc(&s->al, cst + 64);
    if (host == NULL) return ti__fail(err, TI_ERR_OUT_OF_MEMORY, s->m->name, "out of memory staging constants");
    for (int v = 0; v < nv; v++)
        if (g->cst_off[v] != (size_t)-1 && s->t[v].size_bytes) ti__clplan_cst_fill(s, g, v, host + g->cst_off[v]);
    for (int n = 0; n < nn; n++)
        if (g->gpu[n] && g->npar[n]) memcpy(host + g->par_off[n], g->par[n], sizeof(int32_t) * (size_t)g->npar[n]);
    cl_int e1 = CL_SUCCESS, e2 = CL_SUCCESS;
    g->cst_bytes = cst + 64;
    g->cst = cl->clCreateBuffer(g->rt.ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, g->cst_bytes, host, &e1);
    ti__free(&s->al, host, cst + 64);
    g->act_bytes = s->arena_bytes ? s->arena_bytes : 64;
    g->act = cl->clCreateBuffer(g->rt.ctx, CL_MEM_READ_WRITE, g->act_bytes, NULL, &e2);
    if (e1 == CL_SUCCESS && e2 == CL_SUCCESS && g->part_bytes > 0)
        g->part = cl->clCreateBuffer(g->rt.ctx, CL_MEM_READ_WRITE, g->part_bytes, NULL, &e2);
    if (e1 == CL_SUCCESS && e2 == CL_SUCCESS) e2 = ti__clplan_make_act16(g);
    if (g->cst == NULL || g->act == NULL || (g->part_bytes > 0 && g->part == NULL) || e1 != CL_SUCCESS ||
        e2 != CL_SUCCESS) {
        snprintf(fallback, fallback_cap, "OpenCL device '%.160s': cannot allocate %zu + %zu + %zu%s bytes (%s)",
                 g->rt.name, g->cst_bytes, g->act_bytes, g->part_bytes, g->rt.f16 ? " + halves" : "",
                 ti_cl_error_string(e1 != CL_SUCCESS ? e1 : e2));
        ti__clplan_release(g);
        return TI_OK;
    }
    g->active = 1;
    /* zero copy is set up in the thread that runs the session: mapping the arena may copy
     * into it, which must not happen while a CPU run uses it (background build) */
    if (!g->building) ti__clplan_zero_copy(s, g);
    g->t_ready = ti__now_ms();
    return TI_OK;
}

/* ---- background build ------------------------------------------------------------- */

TI__PRIVATE void ti__clplan_init(ti__clplan *g) {
#ifndef TI_NO_THREADS
    ti__mutex_init(&g->mu);
#else
    (void)g;
#endif
}
TI__PRIVATE void ti__clplan_fini(ti__clplan *g) {
#ifndef TI_NO_THREADS
    ti__mutex_destroy(&g->mu);
#else
    (void)g;
#endif
}

#ifndef TI_NO_THREADS
TI__PRIVATE TI__THREAD_FN(ti__clplan_builder) {
    ti__clplan *g = (ti__clplan *)arg;
    ti_error err;
    memset(&err, 0, sizeof err);
    ti_status st = ti__clplan_build(g->bg_session, g, g->bg_why, sizeof g->bg_why, &err);
    if (g->t_ready == 0) g->t_ready = ti__now_ms();
    ti__mutex_lock(&g->mu);
    g->bg_status = st;
    if (st != TI_OK) snprintf(g->bg_why, sizeof g->bg_why, "%s", err.message);
    g->building = 2; /* done, not yet joined */
    ti__mutex_unlock(&g->mu);
    return TI__THREAD_RETURN;
}
#endif

/* Starts building the OpenCL plan on a thread; 0 when that is not possible here (then
 * the caller builds it at once). */
TI__PRIVATE int ti__clplan_start_background(ti_session *s, ti__clplan *g) {
#ifndef TI_NO_THREADS
    g->bg_session = s;
    g->bg_why[0] = 0;
    g->t_ready = 0;
    g->building = 1;
    g->cpu_runs = 0;
    if (ti__thread_start(&g->builder, ti__clplan_builder, g, 0) != 0) {
        g->building = 0;
        return 0;
    }
    return 1;
#else
    (void)s;
    (void)g;
    return 0;
#endif
}

TI__PRIVATE int ti__clplan_still_building(ti__clplan *g) {
#ifndef TI_NO_THREADS
    ti__mutex_lock(&g->mu);
    int b = g->building == 1;
    ti__mutex_unlock(&g->mu);
    return b;
#else
    (void)g;
    return 0;
#endif
}

/* Waits for the background build (if any) and takes its outcome: a failed build leaves
 * the session on the CPU with the reason. */
TI__PRIVATE void ti__clplan_join(ti__clplan *g) {
    if (g == NULL || !g->building) return;
#ifndef TI_NO_THREADS
    ti__thread_join(g->builder);
    g->building = 0;
    ti_session *s = g->bg_session;
    if (g->bg_status == TI_OK && g->active) ti__clplan_zero_copy(s, g);
    if (g->bg_status != TI_OK) {
        g->active = 0;
        snprintf(s->fallback, sizeof s->fallback, "%.300s", g->bg_why);
    } else if (g->bg_why[0]) {
        snprintf(s->fallback, sizeof s->fallback, "%.300s", g->bg_why);
    }
#endif
}

/* Makes value v's bytes current on the host (dir TI__CL_HOST) or the device. */
TI__PRIVATE cl_int ti__clplan_sync(ti_session *s, ti__clplan *g, int v, int dir) {
    if (v < 0 || (g->where[v] & dir) || s->t[v].size_bytes == 0) return CL_SUCCESS;
    if (g->cst_off[v] != (size_t)-1 || s->t[v].data == NULL) return CL_SUCCESS;
    if (dir == TI__CL_DEV && (g->where[v] & TI__CL_HALF)) return CL_SUCCESS; /* what kernels read */
    if (dir == TI__CL_HOST) { /* fp16 storage: the float copy from the half one first */
        cl_int e = ti__clplan_from_half(s, g, v);
        if (e != CL_SUCCESS) return e;
        if (g->where[v] & dir) return CL_SUCCESS;
    }
    if (ti__cl_bound_zc(s, g, v)) { /* caller memory <-> its arena slot, the host owning both */
        cl_int e = ti__clplan_own(s, g, 1, CL_TRUE);
        if (e != CL_SUCCESS) return e;
        if (dir == TI__CL_DEV) memcpy(s->bind_slot[v], s->t[v].data, s->t[v].size_bytes);
        else memcpy(s->t[v].data, s->bind_slot[v], s->t[v].size_bytes);
        g->where[v] |= (unsigned char)dir;
        return CL_SUCCESS;
    }
    if (g->zero_copy) return ti__clplan_own(s, g, dir == TI__CL_HOST, CL_TRUE);
    size_t off = ti__cl_off(s, v);
    cl_int e;
    cl_event *ev = ti__clrt_ev_slot(&g->rt);
    if (dir == TI__CL_HOST)
        e = g->rt.api.clEnqueueReadBuffer(g->rt.q, g->act, CL_TRUE, off, s->t[v].size_bytes,
                                          s->t[v].data, 0, NULL, ev);
    else
        e = g->rt.api.clEnqueueWriteBuffer(g->rt.q, g->act, CL_TRUE, off, s->t[v].size_bytes,
                                           s->t[v].data, 0, NULL, ev);
    if (ev != NULL) ti__clrt_ev_keep(&g->rt, e, dir == TI__CL_HOST ? TI__CLEV_DOWNLOAD : TI__CLEV_UPLOAD);
    if (e == CL_SUCCESS) {
        g->where[v] |= (unsigned char)dir;
        g->transfer_bytes += s->t[v].size_bytes;
        if (s->prof_bytes != NULL && g->rt.ev_cur >= 0) s->prof_bytes[g->rt.ev_cur] += s->t[v].size_bytes;
    }
    return e;
}

/* Reads the finished run's event times into the profile and releases the events. GPU
 * nodes get their kernels' device time, placed on the host timeline by aligning the
 * first event with the moment it was queued. */
TI__PRIVATE void ti__clplan_collect(ti_session *s, ti__clplan *g) {
    ti__clrt *rt = &g->rt;
    cl_ulong base = 0;
    for (int i = 0; i < rt->ev_n; i++) {
        cl_ulong a = 0, b = 0;
        if (rt->ev[i] == NULL) continue;
        cl_int e1 = rt->api.clGetEventProfilingInfo(rt->ev[i], CL_PROFILING_COMMAND_START, sizeof a, &a, NULL);
        cl_int e2 = rt->api.clGetEventProfilingInfo(rt->ev[i], CL_PROFILING_COMMAND_END, sizeof b, &b, NULL);
        if (i == 0) base = a;
        if (e1 != CL_SUCCESS || e2 != CL_SUCCESS || b < a || a < base) continue;
        double ms = (double)(b - a) * 1e-6, at = rt->ev_host0 + (double)(a - base) * 1e-6;
        int n = rt->ev_node[i], kind = rt->ev_kind[i];
        if (kind == TI__CLEV_UPLOAD) s->info.upload_ms += ms;
        else if (kind == TI__CLEV_DOWNLOAD) s->info.download_ms += ms;
        else s->info.kernel_ms += ms;
        if (kind == TI__CLEV_KERNEL && n >= 0 && n < s->n_nodes && s->prof_ms != NULL) {
            if (s->prof_t0[n] < 0) s->prof_t0[n] = at;
            s->prof_ms[n] += ms;
        }
    }
    ti__clrt_ev_drop(rt);
}

/* The run's end: times, the profile, the events released. */
TI__PRIVATE void ti__clplan_finish_run(ti_session *s, ti__clplan *g) {
    for (int i = 0; i < s->m->n_outputs; i++) { /* zero copy: bound outputs from their slots */
        int v = s->m->outputs[i];
        if (!(g->where[v] & TI__CL_SLOT)) continue;
        g->where[v] &= (unsigned char)~TI__CL_SLOT;
        if (ti__cl_bound_zc(s, g, v)) memcpy(s->t[v].data, s->bind_slot[v], s->t[v].size_bytes);
    }
    if (g->rt.ev != NULL) ti__clplan_collect(s, g);
    if (s->prof_ms != NULL) s->profiled = 1;
    s->info.run_ms = ti__now_ms() - s->t_run;
}

/* Can input i of s (linked to an output of another session) be copied on the device?
 * Both plans on one context, that output left on the device by a GPU run, and neither
 * session in host memory (zero copy: the host path is as cheap). */
TI__PRIVATE int ti__clplan_link_on_device(const ti_session *s, int i) {
    const ti_session *src = s->link_src ? s->link_src[i] : NULL;
    const ti__clplan *g = s->cl, *h = src ? src->cl : NULL;
    if (src == NULL || g == NULL || h == NULL || !g->active || g->building || !h->active || h->building ||
        !h->last_on_gpu || g->zero_copy || h->zero_copy || g->rt.ctx != h->rt.ctx)
        return 0;
    int v = s->m->inputs[i], sv = src->m->outputs[s->link_out[i]];
    return (h->where[sv] & TI__CL_DEV) && h->cst_off[sv] == (size_t)-1 && src->t[sv].data != NULL &&
           s->t[v].data != NULL && !src->vi[sv].heap && !s->vi[v].heap;
}

/* Makes value v (an output) current on the host after a GPU run that left it on the
 * device. */
TI__PRIVATE cl_int ti__clplan_fetch(ti_session *s, ti__clplan *g, int v) {
    if (g == NULL || !g->active || g->building || !g->last_on_gpu) return CL_SUCCESS;
    return ti__clplan_sync(s, g, v, TI__CL_HOST);
}

/* Zero copy and caller memory: wraps each bound value's memory in a buffer the kernels
 * use in place (made again when the binding changed). The arena is the host's between
 * runs, so a new buffer is mapped at once; where the driver will not map the caller's
 * memory in place (or will not wrap it) the value falls back to copies of its slot. */
TI__PRIVATE void ti__clplan_bind_bufs(ti_session *s, ti__clplan *g) {
    if (!g->zero_copy || !g->mapped || s->bind_slot == NULL) return;
    const ti_cl_api *cl = &g->rt.api;
    int nio = s->m->n_inputs + s->m->n_outputs;
    if (g->bmem == NULL) {
        size_t nv = (size_t)(s->n_values + 1);
        g->bmem = (cl_mem *)ti__pool_alloc(&s->plan_pool, sizeof(cl_mem) * nv);
        g->bptr = (void **)ti__pool_alloc(&s->plan_pool, sizeof(void *) * nv);
        g->bbytes = (size_t *)ti__pool_alloc(&s->plan_pool, sizeof(size_t) * nv);
        g->bvals = (int *)ti__pool_alloc(&s->plan_pool, sizeof(int) * (size_t)(nio + 1));
        if (!g->bmem || !g->bptr || !g->bbytes || !g->bvals) {
            g->bmem = NULL;
            return;
        }
        memset(g->bmem, 0, sizeof(cl_mem) * nv);
        g->n_bvals = 0;
    }
    for (int k = 0; k < nio; k++) {
        int v = k < s->m->n_inputs ? s->m->inputs[k] : s->m->outputs[k - s->m->n_inputs];
        ti_tensor *t = &s->t[v];
        int bound = s->bind_slot[v] != NULL && t->data != s->bind_slot[v] && t->size_bytes > 0;
        if (g->bmem[v] != NULL && (!bound || g->bptr[v] != t->data || g->bbytes[v] != t->size_bytes))
            ti__clplan_drop_bmem(g, v);
        if (!bound || g->bmem[v] != NULL) continue;
        cl_int e = CL_SUCCESS;
        cl_mem b = cl->clCreateBuffer(g->rt.ctx, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, t->size_bytes, t->data, &e);
        if (b == NULL || e != CL_SUCCESS) continue;
        void *q = cl->clEnqueueMapBuffer(g->rt.q, b, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, t->size_bytes, 0, NULL,
                                         NULL, &e);
        if (e != CL_SUCCESS || q != t->data) {
            if (e == CL_SUCCESS) cl->clEnqueueUnmapMemObject(g->rt.q, b, q, 0, NULL, NULL);
            cl->clFinish(g->rt.q);
            cl->clReleaseMemObject(b);
            continue;
        }
        g->bmem[v] = b;
        g->bptr[v] = t->data;
        g->bbytes[v] = t->size_bytes;
        g->bvals[g->n_bvals++] = v;
    }
}

/* Before binding k of s changes (ti_session_bind_*): its wrapping buffer goes. */
TI__PRIVATE void ti__clplan_unbind(ti_session *s, int v) {
    if (s->cl != NULL) ti__clplan_drop_bmem(s->cl, v);
}

TI__PRIVATE ti_status ti__clplan_run_nodes(ti_session *s, ti__clplan *g, int async, ti_error *err) {
    const ti_cl_api *cl = &g->rt.api;
    for (int v = 0; v < s->n_values; v++)
        g->where[v] = (unsigned char)(TI__CL_HOST | (g->cst_off[v] != (size_t)-1 ? TI__CL_DEV : 0));
    for (int n = 0; n < s->n_nodes; n++)
        for (int i = 0; i < s->nodes[n].n_outputs; i++)
            if (s->nodes[n].outputs[i] >= 0) g->where[s->nodes[n].outputs[i]] = 0;
    g->transfer_bytes = 0;
    g->switches = 0;
    ti__clplan_bind_bufs(s, g);
    for (int i = 0; s->link_src != NULL && i < s->m->n_inputs; i++) {
        if (!ti__clplan_link_on_device(s, i)) continue; /* done in host memory before */
        ti_session *src = s->link_src[i];
        int v = s->m->inputs[i], sv = src->m->outputs[s->link_out[i]];
        size_t from = ti__cl_off(src, sv), to = ti__cl_off(s, v);
        g->rt.ev_cur = -1;
        cl_event *ev = ti__clrt_ev_slot(&g->rt);
        cl_int e = cl->clEnqueueCopyBuffer(g->rt.q, src->cl->act, g->act, from, to, s->t[v].size_bytes, 0, NULL, ev);
        if (ev != NULL) ti__clrt_ev_keep(&g->rt, e, TI__CLEV_KERNEL);
        if (e != CL_SUCCESS)
            return ti__fail(err, TI_ERR_BACKEND, s->m->name, "copying input '%s' from the linked session on the device: %s",
                            s->t[v].name, ti_cl_error_string(e));
        g->where[v] = TI__CL_DEV;
    }
    for (int n = 0; n < s->n_nodes; n++) {
        const ti__node *node = &s->nodes[n];
        cl_int e = CL_SUCCESS;
        g->rt.ev_cur = n;
        if (g->gpu[n]) {
            for (int i = 0; i < node->n_inputs && e == CL_SUCCESS; i++)
                e = ti__clplan_sync(s, g, node->inputs[i], TI__CL_DEV);
            if (e == CL_SUCCESS) e = ti__clplan_own(s, g, 0, CL_TRUE); /* zero copy: the device's turn */
            for (int i = 0; i < node->n_inputs && e == CL_SUCCESS; i++)
                e = ti__clplan_to_half(s, g, node->inputs[i]); /* fp16 storage */
            if (e == CL_SUCCESS) {
                ti__clc c;
                ti__clc_init(&c, s, g, n);
                const ti__clop *op = g->op[n];
                int r0 = g->rt.retries;
                g->rt.node_wg = (size_t)g->wg[n];
                e = op->run ? op->run(&c) : ti__cl_run_copy_table(&c);
                g->rt.node_wg = 0;
                g->node_retries[n] += g->rt.retries - r0;
            }
            if (e == CL_SUCCESS) {
                for (int i = 0; i < node->n_outputs; i++)
                    if (node->outputs[i] >= 0)
                        g->where[node->outputs[i]] = ti__clplan_halved(s, g, node->outputs[i]) ? TI__CL_HALF : TI__CL_DEV;
                if (s->prof_gpu != NULL) s->prof_gpu[n] = 1;
                continue;
            }
            /* the device refused this node: it runs on the CPU from now on */
            char why[160];
            snprintf(why, sizeof why, "OpenCL launch failed (%s): moved to the CPU", ti_cl_error_string(e));
            const char *w = ti__pool_strndup(&s->plan_pool, why, strlen(why));
            g->why[n] = w ? w : "";
            g->gpu[n] = 0;
            g->n_gpu--;
            g->n_cpu++;
        }
        e = CL_SUCCESS; /* a node the device refused comes here with its error */
        for (int i = 0; i < node->n_inputs && e == CL_SUCCESS; i++)
            e = ti__clplan_from_half(s, g, node->inputs[i]); /* fp16 storage: floats for the CPU */
        if (e == CL_SUCCESS) e = ti__clplan_own(s, g, 1, CL_TRUE); /* zero copy: the host's turn (it writes too) */
        for (int i = 0; i < node->n_inputs && e == CL_SUCCESS; i++)
            e = ti__clplan_sync(s, g, node->inputs[i], TI__CL_HOST);
        if (e != CL_SUCCESS)
            return ti__fail_node(err, TI_ERR_BACKEND, s->m->name, n, node->name, node->op,
                                 "reading its inputs from the OpenCL device failed: %s",
                                 ti_cl_error_string(e));
        ti_status st = ti__session_run_node_cpu(s, n, err);
        if (st != TI_OK) return st;
        for (int i = 0; i < node->n_outputs; i++)
            if (node->outputs[i] >= 0) g->where[node->outputs[i]] = TI__CL_HOST;
    }
    g->rt.ev_cur = -1;
    for (int i = 0; i < s->m->n_outputs; i++) { /* fp16 storage: outputs as floats on the device */
        cl_int e = ti__clplan_from_half(s, g, s->m->outputs[i]);
        if (e != CL_SUCCESS)
            return ti__fail(err, TI_ERR_BACKEND, s->m->name, "converting output '%s' from fp16 on the OpenCL device failed: %s",
                            s->t[s->m->outputs[i]].name, ti_cl_error_string(e));
    }
    if (g->zero_copy) { /* outputs (and the inputs of the next run) are the host's */
        cl_int e = ti__clplan_own(s, g, 1, async ? CL_FALSE : CL_TRUE);
        if (e != CL_SUCCESS)
            return ti__fail(err, TI_ERR_BACKEND, s->m->name, "mapping the outputs of the OpenCL device failed: %s",
                            ti_cl_error_string(e));
        for (int i = 0; i < s->m->n_outputs; i++) {
            int v = s->m->outputs[i];
            /* bound to caller memory and left in the slot by a kernel: copied once mapped */
            if (ti__cl_bound_zc(s, g, v) && !(g->where[v] & TI__CL_HOST)) g->where[v] |= TI__CL_SLOT;
            g->where[v] |= TI__CL_HOST;
        }
    }
    for (int i = 0; i < s->m->n_outputs; i++) {
        int v = s->m->outputs[i];
        cl_int e = CL_SUCCESS;
        if (s->out_on_device != NULL && s->out_on_device[i]) continue; /* a linked session takes it */
        if (!(g->where[v] & TI__CL_HOST) && s->t[v].size_bytes && g->cst_off[v] == (size_t)-1) {
            size_t off = ti__cl_off(s, v);
            cl_event *ev = ti__clrt_ev_slot(&g->rt);
            e = cl->clEnqueueReadBuffer(g->rt.q, g->act, async ? CL_FALSE : CL_TRUE, off,
                                        s->t[v].size_bytes, s->t[v].data, 0, NULL, ev);
            if (ev != NULL) ti__clrt_ev_keep(&g->rt, e, TI__CLEV_DOWNLOAD);
            if (e == CL_SUCCESS) {
                g->where[v] |= TI__CL_HOST;
                g->transfer_bytes += s->t[v].size_bytes;
            }
        }
        if (e != CL_SUCCESS)
            return ti__fail(err, TI_ERR_BACKEND, s->m->name, "reading output '%s' from the OpenCL device failed: %s",
                            s->t[v].name, ti_cl_error_string(e));
    }
    s->info.transfer_bytes = g->transfer_bytes;
    return TI_OK;
}

/* Runs the plan; with async, the reads of the outputs are queued without waiting and the
 * queue is left running (g->pending): ti__clplan_wait finishes it. */
TI__PRIVATE ti_status ti__clplan_run(ti_session *s, ti__clplan *g, int async, ti_error *err) {
    const ti_cl_api *cl = &g->rt.api;
    g->rt.run_t0 = s->t_run;
    g->last_on_gpu = 1;
    ti__clrt_ev_drop(&g->rt);
    ti_status st = ti__clplan_run_nodes(s, g, async, err);
    if (st != TI_OK) {
        ti__clplan_own(s, g, 1, CL_TRUE); /* the user may write the inputs again */
        cl->clFinish(g->rt.q);             /* what was queued ends before its buffers are reused */
        ti__clrt_ev_drop(&g->rt);
        return st;
    }
    if (async) {
        cl->clFlush(g->rt.q); /* start the device now, not at the wait */
        g->pending = 1;
        return TI_OK;
    }
    cl_int e = cl->clFinish(g->rt.q);
    ti__clplan_finish_run(s, g);
    if (e != CL_SUCCESS)
        return ti__fail(err, TI_ERR_BACKEND, s->m->name, "OpenCL: clFinish: %s", ti_cl_error_string(e));
    return TI_OK;
}

TI__PRIVATE ti_status ti__clplan_wait(ti_session *s, ti__clplan *g, ti_error *err) {
    if (!g->pending) return TI_OK;
    g->pending = 0;
    cl_int e = g->rt.api.clFinish(g->rt.q);
    ti__clplan_finish_run(s, g);
    if (e != CL_SUCCESS)
        return ti__fail(err, TI_ERR_BACKEND, s->m->name, "OpenCL: clFinish: %s", ti_cl_error_string(e));
    return TI_OK;
}
#endif /* TI_NO_OPENCL */
