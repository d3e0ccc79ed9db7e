/* Sessions: bind input shapes, remove dead nodes, infer shapes, fold constants, fuse,
 * plan one arena from tensor lifetimes, and run. Relies on the op registry (graph/ops.c)
 * and the passes (graph/passes.c). Must not allocate in ti_session_run when every shape
 * is known at creation; must leave the model untouched (sessions share it). */

TI__PRIVATE ti_session_desc ti__session_desc_defaults(const ti_session_desc *in) {
    ti_session_desc d;
    if (in != NULL) d = *in;
    else memset(&d, 0, sizeof d);
    if (d.num_threads <= 0) {
        d.num_threads = ti__cpu_count();
        if (d.num_threads > 8) d.num_threads = 8;
    }
    if (d.num_threads > TI_MAX_THREADS) d.num_threads = TI_MAX_THREADS;
    if (d.precision == TI_PRECISION_DEFAULT) d.precision = TI_PRECISION_FP32;
    return d;
}

TI__PRIVATE void ti__session_bound_copies(ti_session *s);

TI__PRIVATE void ti__log(const ti_session *s, ti_log_level level, const char *msg) {
    if (s->desc.log != NULL) s->desc.log(level, msg, s->desc.log_user);
}

/* Frees what a plan owns (not the tensor table, which survives re-planning). */
TI__PRIVATE void ti__session_unplan(ti_session *s) {
#ifndef TI_NO_OPENCL
    ti__clplan_join(s->cl);
    ti__clplan_release(s->cl);
#endif
    for (int v = 0; v < s->n_values; v++) {
        if (s->vi != NULL && s->vi[v].heap) ti__free(&s->al, s->t[v].data, s->vi[v].heap_bytes);
    }
    ti__pool_release(&s->plan_pool);
    ti__free(&s->al, s->arena, s->arena_bytes);
    ti__free(&s->al, s->scratch, s->scratch_bytes);
    s->arena = NULL;
    s->arena_bytes = 0;
    s->scratch = NULL;
    s->scratch_bytes = 0;
    s->nodes = NULL;
    s->ops = NULL;
    s->io = NULL;
    s->prof_t0 = s->prof_ms = NULL;
    s->prof_bytes = NULL;
    s->prof_gpu = NULL;
    s->profiled = 0;
    s->n_nodes = 0;
    s->planned = 0;
    s->bind_slot = NULL; /* lived in the plan pool */
}

/* Adds a value (for constants made by passes). Returns -1 when the table is full. */
TI__PRIVATE int ti__session_new_value(ti_session *s, const char *name) {
    if (s->n_values >= s->cap_values) return -1;
    int v = s->n_values++;
    memset(&s->t[v], 0, sizeof s->t[v]);
    memset(&s->vi[v], 0, sizeof s->vi[v]);
    s->t[v].name = name;
    return v;
}

/* Shapes of graph inputs: the user's, else the model's with symbolic dims bound. */
TI__PRIVATE ti_status ti__bind_inputs(ti_session *s, ti_error *err) {
    const ti_model *m = s->m;
    for (int i = 0; i < m->n_inputs; i++) {
        int v = m->inputs[i];
        const ti__value *mv = &m->values[v];
        ti_tensor *t = &s->t[v];
        s->vi[v].is_input = 1;
        if (s->input_ranks[i] >= 0) {
            if (!ti__set_shape(t, mv->dtype, s->input_ranks[i], s->input_shapes[i]))
                return ti__fail(err, TI_ERR_INVALID_ARGUMENT, m->name,
                                "input '%s': invalid shape", mv->name);
            continue;
        }
        if (mv->rank < 0) {
            snprintf(s->unplanned_reason, sizeof s->unplanned_reason,
                     "input '%s' has no declared shape: call ti_session_set_input_shape",
                     mv->name);
            return TI_OK; /* planned later, once the user gives the shape */
        }
        int64_t dims[TI_MAX_DIMS];
        for (int d = 0; d < mv->rank; d++) {
            dims[d] = mv->dims[d];
            if (dims[d] >= 0) continue;
            dims[d] = 1; /* unbound symbolic dims default to 1 */
            for (int b = 0; b < s->desc.num_dim_bindings; b++) {
                const ti_dim_binding *db = &s->desc.dim_bindings[b];
                if (db->name != NULL && mv->dim_names[d] != NULL &&
                    strcmp(db->name, mv->dim_names[d]) == 0) {
                    if (db->value < 0)
                        return ti__fail(err, TI_ERR_INVALID_ARGUMENT, m->name,
                                        "dim binding '%s' = %lld is negative", db->name,
                                        (long long)db->value);
                    dims[d] = db->value;
                }
            }
        }
        if (mv->dtype == TI_DTYPE_UNKNOWN || mv->dtype == TI_DTYPE_STRING)
            return ti__fail(err, TI_ERR_UNSUPPORTED, m->name, "input '%s' has dtype %s",
                            mv->name, ti_dtype_name(mv->dtype));
        /* dims are >= 0 here and the rank within TI_MAX_DIMS: only the size can fail */
        if (!ti__set_shape(t, mv->dtype, mv->rank, dims))
            return ti__fail(err, TI_ERR_OUT_OF_MEMORY, m->name,
                            "input '%s': its shape is too large to allocate on this host",
                            mv->name);
    }
    return TI_OK;
}

TI__PRIVATE void ti__kctx_init(ti_session *s, ti__kctx *k, int n, ti_error *err) {
    const ti__node *node = &s->nodes[n];
    memset(k, 0, sizeof *k);
    k->model = s->m;
    k->node = node;
    k->node_index = n;
    k->in = s->io[n];
    k->n_in = node->n_inputs;
    k->out = s->io[n] + node->n_inputs;
    k->n_out = node->n_outputs;
    k->opset = s->m->opset;
    k->err = err;
    k->file = s->m->name;
    k->scratch = s->scratch;
    k->scratch_bytes = s->scratch_bytes;
    k->tp = s->tp;
}

/* Builds s->io for node n from its value indices. */
TI__PRIVATE int ti__session_bind_io(ti_session *s, int n) {
    const ti__node *node = &s->nodes[n];
    int cnt = node->n_inputs + node->n_outputs;
    ti_tensor **io = (ti_tensor **)ti__pool_alloc(&s->plan_pool, sizeof(ti_tensor *) * (size_t)(cnt + 1));
    if (io == NULL) return 0;
    for (int i = 0; i < node->n_inputs; i++)
        io[i] = node->inputs[i] >= 0 ? &s->t[node->inputs[i]] : NULL;
    for (int i = 0; i < node->n_outputs; i++)
        io[node->n_inputs + i] = node->outputs[i] >= 0 ? &s->t[node->outputs[i]] : NULL;
    s->io[n] = io;
    return 1;
}

/* Zero-copy Concat: where every dim before the axis is 1, each input of an ONNX Concat is
 * one contiguous block of its output, so the input is placed there (a view: view_of,
 * view_off) and the producer writes it in place; the Concat then copies nothing
 * (ti__concat_run skips a block already where it belongs). SqueezeNet 1.1's eight Concats
 * copied 0.16 ms of its 6 ms (1 thread), and did not get faster on 2 threads. The output
 * then lives from its first input's producer to the last reader of it or of any input.
 * Only arena values produced by earlier nodes of the static region, each once, in blocks
 * 64-byte aligned as the arena's; not an input that is itself such an output, nor with an
 * OpenCL plan (its buffers are its own). */
TI__PRIVATE void ti__session_concat_views(ti_session *s) {
    if (s->cl != NULL) return;
    for (int n = 0; n < s->first_dynamic; n++) {
        const ti__node *nd = &s->nodes[n];
        if (strcmp(nd->op, "Concat") != 0 || nd->domain[0] != 0 || nd->n_outputs < 1) continue;
        int o = nd->outputs[0];
        if (o < 0) continue;
        ti__vinfo *vo = &s->vi[o];
        const ti_tensor *y = &s->t[o];
        if (vo->is_const || vo->is_input || vo->is_output || vo->heap || vo->view_of ||
            y->size_bytes == 0)
            continue;
        int64_t axis = ti__attr_i(nd, "axis", 0);
        if (axis < 0) axis += y->rank;
        if (axis < 0 || axis >= y->rank) continue;
        int ok = 1;
        for (int64_t d = 0; d < axis; d++) ok = ok && y->shape[d] == 1;
        size_t at = 0;
        for (int j = 0; j < nd->n_inputs && ok; j++) {
            int v = nd->inputs[j];
            const ti__vinfo *vi = v >= 0 ? &s->vi[v] : NULL;
            ok = vi != NULL && v != o && !vi->is_const && !vi->is_input && !vi->is_output &&
                 !vi->heap && !vi->view_of && !vi->has_views && vi->first >= 0 &&
                 vi->first < n && s->t[v].dtype == y->dtype && at % 64 == 0;
            for (int i = 0; i < j && ok; i++) ok = nd->inputs[i] != v;
            if (ok) at += s->t[v].size_bytes;
        }
        if (!ok || at != y->size_bytes) continue;
        at = 0;
        for (int j = 0; j < nd->n_inputs; j++) {
            int v = nd->inputs[j];
            ti__vinfo *vi = &s->vi[v];
            vi->view_of = o + 1;
            vi->view_off = at;
            at += s->t[v].size_bytes;
            if (vi->first < vo->first) vo->first = vi->first;
            if (vi->last > vo->last) vo->last = vi->last;
        }
        vo->has_views = 1;
    }
}

/* A conv with a residual sum fused in (its input 4, ti__fuse_conv_sum) whose summand R
 * has no reader after it: its output Y is placed on R's memory (a view of the value whose
 * memory that is, for a chain of such blocks, which then lives as long as Y), and the
 * conv's GEMM adds onto it in place (cpu/conv.c). Not with keep_intermediates (R must stay
 * readable), nor for graph inputs, outputs, constants or Concat views, nor where the conv
 * reads R as another input too. */
TI__PRIVATE void ti__session_sum_views(ti_session *s) {
    if (s->cl != NULL || s->desc.keep_intermediates) return;
    for (int n = 0; n < s->first_dynamic; n++) {
        const ti__node *nd = &s->nodes[n];
        if (strcmp(nd->op, "Conv") != 0 || nd->domain[0] != 0 || nd->n_inputs < 5 ||
            nd->n_outputs != 1 || nd->inputs[4] < 0 || nd->outputs[0] < 0)
            continue;
        int r = nd->inputs[4], y = nd->outputs[0], other = r == y;
        for (int i = 0; i < 4; i++) other |= nd->inputs[i] == r;
        ti__vinfo *vr = &s->vi[r], *vy = &s->vi[y];
        int root = vr->view_of && vr->view_sum ? vr->view_of - 1 : r;
        ti__vinfo *vo = &s->vi[root];
        if (other || vr->last != n || (vr->view_of && !vr->view_sum) || vo->is_const ||
            vo->is_input || vo->is_output || vo->heap || vo->has_views || vo->view_of ||
            vy->is_const || vy->is_input || vy->is_output || vy->heap || vy->view_of ||
            vy->has_views || s->t[y].dtype != s->t[r].dtype ||
            s->t[y].size_bytes != s->t[r].size_bytes || s->t[y].size_bytes == 0)
            continue;
        vy->view_of = root + 1;
        vy->view_off = vr->view_off;
        vy->view_sum = 1;
        if (vy->last > vo->last) vo->last = vy->last;
    }
}

/* Greedy arena placement, largest first: each tensor goes to the lowest offset that
 * does not overlap, in both address and lifetime, a tensor placed before it. Views
 * (ti__session_concat_views) then point into the value they are part of. */
TI__PRIVATE ti_status ti__session_place(ti_session *s, size_t *offsets, ti_error *err) {
    int n = 0;
    int *order = (int *)ti__pool_alloc(&s->plan_pool, sizeof(int) * (size_t)(s->n_values + 1));
    int *placed = (int *)ti__pool_alloc(&s->plan_pool, sizeof(int) * (size_t)(s->n_values + 1));
    if (order == NULL || placed == NULL)
        return ti__fail(err, TI_ERR_OUT_OF_MEMORY, s->m->name, "out of memory planning the arena");
    for (int v = 0; v < s->n_values; v++) {
        const ti__vinfo *vi = &s->vi[v];
        if (vi->is_const || vi->heap || vi->view_of || vi->first > vi->last) continue;
        if (s->t[v].dtype == TI_DTYPE_UNKNOWN) continue;
        order[n++] = v;
    }
    /* insertion sort by size, descending (n is small: hundreds) */
    for (int i = 1; i < n; i++) {
        int v = order[i], j = i - 1;
        while (j >= 0 && s->t[order[j]].size_bytes < s->t[v].size_bytes) {
            order[j + 1] = order[j];
            j--;
        }
        order[j + 1] = v;
    }
    size_t total = 0;
    int n_placed = 0;
    for (int i = 0; i < n; i++) {
        int v = order[i];
        size_t size = (size_t)ti__align_up(s->t[v].size_bytes, 64), off = 0;
        if (size == 0) size = 64;
        for (;;) {
            int moved = 0;
            for (int j = 0; j < n_placed; j++) {
                int u = placed[j];
                if (!s->desc.keep_intermediates &&
                    (s->vi[u].last < s->vi[v].first || s->vi[v].last < s->vi[u].first))
                    continue;
                size_t usize = (size_t)ti__align_up(s->t[u].size_bytes, 64);
                if (usize == 0) usize = 64;
                if (off < offsets[u] + usize && offsets[u] < off + size) {
                    off = offsets[u] + usize;
                    moved = 1;
                }
            }
            if (!moved) break;
        }
        offsets[v] = off;
        placed[n_placed++] = v;
        if (off + size > total) total = off + size;
    }
    s->arena_bytes = total;
    if (total > 0) {
        s->arena = (unsigned char *)ti__calloc(&s->al, total);
        if (s->arena == NULL)
            return ti__fail(err, TI_ERR_OUT_OF_MEMORY, s->m->name,
                            "cannot allocate the %zu-byte activation arena", total);
    }
    for (int i = 0; i < n_placed; i++) s->t[placed[i]].data = s->arena + offsets[placed[i]];
    for (int v = 0; v < s->n_values; v++)
        if (s->vi[v].view_of)
            s->t[v].data = (unsigned char *)s->t[s->vi[v].view_of - 1].data + s->vi[v].view_off;
    return TI_OK;
}

#ifndef TI_NO_OPENCL
/* The session's info once the OpenCL plan is built. */
TI__PRIVATE void ti__session_cl_info(ti_session *s) {
    ti__clplan *g = s->cl;
    s->info.device = g->rt.name;
    s->info.programs_built = g->rt.built;
    s->info.programs_cached = g->rt.cached;
    s->info.build_ms = g->rt.build_ms;
    s->info.opencl_ready_ms = g->t_ready - g->t_start;
    s->info.zero_copy = g->active && g->zero_copy;
    s->info.cpu_runs_before_gpu = g->cpu_runs;
    s->info.precision = g->active && g->rt.f16 ? TI_PRECISION_FP16 : TI_PRECISION_FP32;
    s->info.fp16_arithmetic = g->active && g->rt.f16_arith;
    if (g->active) {
        s->info.backend = TI_BACKEND_OPENCL;
        s->info.num_gpu_nodes = g->n_gpu;
        s->info.num_cpu_nodes = g->n_cpu;
        s->fallback[0] = 0;
    } else if (s->fallback[0] == 0) {
        if (s->n_nodes > 0)
            snprintf(s->fallback, sizeof s->fallback,
                     "no node can run on OpenCL device '%.80s' (node 0 '%.40s' (%.30s): %.80s)",
                     g->rt.name, s->nodes[0].name, s->nodes[0].op, g->why ? g->why[0] : "");
        else
            snprintf(s->fallback, sizeof s->fallback, "no node to run on OpenCL device '%.200s'",
                     g->rt.name);
    }
}
#endif

TI__PRIVATE ti_status ti__session_plan(ti_session *s, ti_error *err) {
    const ti_model *m = s->m;
    ti_status st;
    ti__session_unplan(s);
    s->unplanned_reason[0] = 0;
    memset(&s->info, 0, sizeof s->info);
    /* values: constants from the model, everything else unknown until inferred */
    s->n_values = m->n_values;
    for (int v = 0; v < m->n_values; v++) {
        const ti__value *mv = &m->values[v];
        ti_tensor *t = &s->t[v];
        memset(t, 0, sizeof *t);
        memset(&s->vi[v], 0, sizeof s->vi[v]);
        t->name = mv->name;
        t->quant = mv->quant;
        s->vi[v].first = INT_MAX;
        s->vi[v].last = -1;
        if (mv->is_const) {
            t->dtype = mv->dtype;
            t->rank = mv->rank;
            for (int d = 0; d < mv->rank && d < TI_MAX_DIMS; d++) t->shape[d] = mv->dims[d];
            t->data = (void *)mv->data;
            t->size_bytes = mv->bytes;
            s->vi[v].is_const = 1;
        }
    }
    for (int i = 0; i < m->n_outputs; i++) s->vi[m->outputs[i]].is_output = 1;
    if ((st = ti__bind_inputs(s, err)) != TI_OK) return st;
    if (s->unplanned_reason[0]) return TI_OK;

    /* live nodes, copied so passes can rewrite them */
    s->nodes = (ti__node *)ti__pool_alloc(&s->plan_pool, sizeof(ti__node) * (size_t)(m->n_nodes + 1));
    s->ops = (const ti__op **)ti__pool_alloc(&s->plan_pool, sizeof(void *) * (size_t)(m->n_nodes + 1));
    s->io = (ti_tensor ***)ti__pool_alloc(&s->plan_pool, sizeof(void *) * (size_t)(m->n_nodes + 1));
    char *live = (char *)ti__pool_alloc(&s->plan_pool, (size_t)m->n_nodes + 1);
    if (!s->nodes || !s->ops || !s->io || !live)
        return ti__fail(err, TI_ERR_OUT_OF_MEMORY, m->name, "out of memory planning the session");
    if (!ti__pass_live_nodes(s, live))
        return ti__fail(err, TI_ERR_OUT_OF_MEMORY, m->name, "out of memory planning the session");
    s->n_nodes = 0;
    for (int i = 0; i < m->n_nodes; i++)
        if (live[i]) s->nodes[s->n_nodes++] = m->nodes[i];

    /* every op must be known before any work: the first error is the unsupported op */
    for (int n = 0; n < s->n_nodes; n++) {
        const ti__node *node = &s->nodes[n];
        s->ops[n] = ti__op_find(node->domain, node->op);
        if (s->ops[n] == NULL)
            return ti__fail_node(err, TI_ERR_UNSUPPORTED, m->name, n, node->name, node->op,
                                 "op '%s%s%s' is not supported", node->domain,
                                 node->domain[0] ? "." : "", node->op);
        if (!ti__session_bind_io(s, n))
            return ti__fail(err, TI_ERR_OUT_OF_MEMORY, m->name, "out of memory planning the session");
    }

    /* shape inference with constant folding, in topological order */
    s->first_dynamic = s->n_nodes;
    for (int n = 0; n < s->n_nodes; n++) {
        ti__node *node = &s->nodes[n];
        const ti__op *op = s->ops[n];
        if (s->first_dynamic < s->n_nodes) continue; /* past a dynamic node: shapes at run */
        for (int i = 0; i < node->n_inputs; i++) {
            int v = node->inputs[i];
            if (v >= 0 && s->t[v].dtype == TI_DTYPE_UNKNOWN && !s->vi[v].is_input)
                return ti__fail_node(err, TI_ERR_BAD_MODEL, m->name, n, node->name, node->op,
                                     "input '%s' has no value", s->t[v].name);
            if (v >= 0 && (s->t[v].dtype == TI_DTYPE_UNKNOWN || s->t[v].dtype == TI_DTYPE_STRING))
                return ti__fail_node(err, TI_ERR_UNSUPPORTED, m->name, n, node->name, node->op,
                                     "input '%s' has dtype %s", s->t[v].name,
                                     ti_dtype_name(s->t[v].dtype));
        }
        ti__kctx k;
        ti__kctx_init(s, &k, n, err);
        int r = op->shape(&k);
        if (r == TI__NEED_VALUE) {
            s->first_dynamic = n;
            continue;
        }
        if (r != TI_OK) return (ti_status)r;
        int foldable = !s->desc.no_constant_folding && !(op->flags & TI__OP_NO_FOLD);
        for (int i = 0; i < node->n_inputs && foldable && !(op->flags & TI__OP_SHAPE_ONLY); i++)
            if (node->inputs[i] >= 0 && !s->vi[node->inputs[i]].is_const) foldable = 0;
        if (!foldable) continue;
        /* every input is known: compute the outputs now, they become constants */
        for (int i = 0; i < node->n_outputs; i++) {
            int v = node->outputs[i];
            if (v < 0) continue;
            s->t[v].data = ti__pool_alloc(&s->plan_pool, s->t[v].size_bytes);
            if (s->t[v].data == NULL)
                return ti__fail(err, TI_ERR_OUT_OF_MEMORY, m->name, "out of memory folding constants");
        }
        size_t need = op->scratch ? op->scratch(&k) : 0;
        if (need > 0) {
            k.scratch = ti__pool_alloc(&s->plan_pool, need);
            k.scratch_bytes = need;
            if (k.scratch == NULL)
                return ti__fail(err, TI_ERR_OUT_OF_MEMORY, m->name, "out of memory folding constants");
        }
        if ((st = op->run(&k)) != TI_OK) return st;
        for (int i = 0; i < node->n_outputs; i++)
            if (node->outputs[i] >= 0) s->vi[node->outputs[i]].is_const = 1;
        node->op = ""; /* folded: removed below */
        s->info.num_folded++;
    }

    /* drop folded nodes, then fuse (the fused weights are constants of the plan) */
    int w = 0;
    for (int n = 0; n < s->n_nodes; n++) {
        if (s->nodes[n].op[0] == 0) continue;
        s->nodes[w] = s->nodes[n];
        s->ops[w] = s->ops[n];
        s->io[w] = s->io[n];
        if (n == s->first_dynamic) s->first_dynamic = w;
        w++;
    }
    if (s->first_dynamic >= s->n_nodes) s->first_dynamic = w;
    s->n_nodes = w;
    if (!s->desc.no_fusion && s->first_dynamic == s->n_nodes) {
        if ((st = ti__pass_fuse(s, err)) != TI_OK) return st;
    }
    if (s->cl == NULL && (st = ti__pass_bands(s, err)) != TI_OK) return st;
    if (s->cl == NULL && (st = ti__pass_prepack(s, err)) != TI_OK) return st;

    /* lifetimes: a value lives from its producer to its last consumer */
    for (int n = 0; n < s->n_nodes; n++) {
        const ti__node *node = &s->nodes[n];
        for (int i = 0; i < node->n_inputs; i++) {
            int v = node->inputs[i];
            if (v >= 0 && s->vi[v].last < n) s->vi[v].last = n;
        }
        for (int i = 0; i < node->n_outputs; i++) {
            int v = node->outputs[i];
            if (v < 0) continue;
            if (s->vi[v].first > n) s->vi[v].first = n;
            if (s->vi[v].last < n) s->vi[v].last = n;
            if (n >= s->first_dynamic) s->vi[v].heap = 1;
        }
    }
    for (int v = 0; v < s->n_values; v++) {
        ti__vinfo *vi = &s->vi[v];
        /* inputs keep their memory for the whole run: the values the user wrote stay
         * there for the next run (the usual pattern: write once, run many times) */
        if (vi->is_input) vi->first = -1;
        if (vi->is_input) vi->last = s->n_nodes;
        /* outputs, and values the dynamic region reads, live to the end */
        if (vi->is_output || (vi->last >= s->first_dynamic && s->first_dynamic < s->n_nodes))
            vi->last = s->n_nodes;
    }
    size_t *offsets = (size_t *)ti__pool_alloc(&s->plan_pool, sizeof(size_t) * (size_t)(s->n_values + 1));
    if (offsets == NULL) return ti__fail(err, TI_ERR_OUT_OF_MEMORY, m->name, "out of memory");
    for (int v = 0; v < s->n_values; v++)
        if (s->vi[v].heap) s->t[v].data = NULL;
    ti__session_concat_views(s);
    ti__session_sum_views(s);
    if ((st = ti__session_place(s, offsets, err)) != TI_OK) return st;

    /* scratch: the largest any static node asks for */
    size_t scratch = 0;
    for (int n = 0; n < s->first_dynamic; n++) {
        if (s->ops[n]->scratch == NULL) continue;
        ti__kctx k;
        ti__kctx_init(s, &k, n, err);
        size_t need = s->ops[n]->scratch(&k);
        if (need > scratch) scratch = need;
    }
    if (scratch > 0) {
        s->scratch = ti__malloc(&s->al, scratch);
        if (s->scratch == NULL)
            return ti__fail(err, TI_ERR_OUT_OF_MEMORY, m->name, "cannot allocate %zu bytes of scratch", scratch);
        s->scratch_bytes = scratch;
    }
    if (s->desc.profile) {
        size_t nn = (size_t)s->n_nodes + 1;
        s->prof_t0 = (double *)ti__pool_alloc(&s->plan_pool, sizeof(double) * nn);
        s->prof_ms = (double *)ti__pool_alloc(&s->plan_pool, sizeof(double) * nn);
        s->prof_bytes = (size_t *)ti__pool_alloc(&s->plan_pool, sizeof(size_t) * nn);
        s->prof_gpu = (unsigned char *)ti__pool_alloc(&s->plan_pool, nn);
        if (!s->prof_t0 || !s->prof_ms || !s->prof_bytes || !s->prof_gpu)
            return ti__fail(err, TI_ERR_OUT_OF_MEMORY, m->name, "out of memory for the profile");
    }
    s->profiled = 0;
    s->planned = 1;
    /* packed weights, arena and scratch written: where huge pages were slow to fault in,
     * advised now for the background (core/alloc.c) */
    ti__pool_advise_filled(&s->plan_pool);
    ti__huge_advise_filled(&s->al, s->arena, s->arena_bytes);
    ti__huge_advise_filled(&s->al, s->scratch, s->scratch_bytes);
    s->info.backend = TI_BACKEND_CPU;
    s->info.precision = TI_PRECISION_FP32;
    s->info.fallback_reason = s->fallback;
    s->info.device = "";
    s->info.num_cpu_nodes = s->n_nodes;
#ifndef TI_NO_OPENCL
    if (s->cl != NULL) {
        ti__clplan *g = s->cl;
        s->info.device = g->rt.name;
        if (s->desc.backend == TI_BACKEND_AUTO && !s->desc.opencl_build_first &&
            ti__clplan_start_background(s, g)) {
            /* the CPU serves runs until the programs are built (ti__session_cl_switch) */
        } else {
            if ((st = ti__clplan_build(s, g, s->fallback, sizeof s->fallback, err)) != TI_OK) return st;
            ti__session_cl_info(s);
        }
    }
#endif
    s->info.num_threads = ti__threadpool_size(s->tp);
    s->info.num_nodes = s->n_nodes;
    s->info.arena_bytes = s->arena_bytes;
    s->info.dynamic = s->first_dynamic < s->n_nodes;
    return TI_OK;
}

TI_API ti_session *ti_session_create(const ti_model *m, const ti_session_desc *desc, ti_error *err) {
    ti__error_clear(err);
    if (m == NULL) {
        ti__fail(err, TI_ERR_INVALID_ARGUMENT, "<session>", "model is NULL");
        return NULL;
    }
    ti_session_desc d = ti__session_desc_defaults(desc);
#ifndef TI_NO_OPENCL
    double t_create = ti__now_ms();
#endif
    if (!ti__allocator_valid(&d.allocator)) {
        ti__fail(err, TI_ERR_INVALID_ARGUMENT, m->name, "allocator: set both alloc and free, or neither");
        return NULL;
    }
    if (d.num_dim_bindings < 0 || (d.num_dim_bindings > 0 && d.dim_bindings == NULL)) {
        ti__fail(err, TI_ERR_INVALID_ARGUMENT, m->name, "dim_bindings is NULL but num_dim_bindings is %d",
                 d.num_dim_bindings);
        return NULL;
    }
    char fallback[320] = "";
    struct ti__clplan *gpu = NULL;
    if (d.backend != TI_BACKEND_CPU) {
#ifndef TI_NO_OPENCL
        gpu = (ti__clplan *)ti__calloc(&d.allocator, sizeof *gpu);
        if (gpu == NULL) {
            ti__fail(err, TI_ERR_OUT_OF_MEMORY, m->name, "out of memory creating a session");
            return NULL;
        }
        if (!ti__clrt_init(&gpu->rt, &d, fallback, sizeof fallback)) {
            ti__free(&d.allocator, gpu, sizeof *gpu);
            gpu = NULL;
        } else if (d.backend == TI_BACKEND_AUTO && d.opencl_device == NULL &&
                   getenv("TINYINFER_OPENCL_DEVICE") == NULL) {
            cl_device_type type = 0;
            gpu->rt.api.clGetDeviceInfo(gpu->rt.dev, CL_DEVICE_TYPE, sizeof type, &type, NULL);
            if (!(type & CL_DEVICE_TYPE_GPU)) { /* auto means a GPU; PoCL on the CPU is slower */
                snprintf(fallback, sizeof fallback,
                         "OpenCL device '%.200s' is not a GPU (backend OpenCL or opencl_device "
                         "selects it)", gpu->rt.name);
                ti__clrt_destroy(&gpu->rt);
                ti__free(&d.allocator, gpu, sizeof *gpu);
                gpu = NULL;
            }
        }
#else
        snprintf(fallback, sizeof fallback, "OpenCL was compiled out (TI_NO_OPENCL)");
#endif
        if (gpu == NULL && d.backend == TI_BACKEND_OPENCL) { /* asked for: an error, not a fallback */
            ti__fail(err, TI_ERR_BACKEND, m->name, "backend OpenCL: %s", fallback);
            return NULL;
        }
    }
    ti_session *s = (ti_session *)ti__calloc(&d.allocator, sizeof *s);
    if (s == NULL) {
#ifndef TI_NO_OPENCL
        if (gpu != NULL) ti__clrt_destroy(&gpu->rt);
        ti__free(&d.allocator, gpu, sizeof *gpu);
#endif
        ti__fail(err, TI_ERR_OUT_OF_MEMORY, m->name, "out of memory creating a session");
        return NULL;
    }
    s->cl = gpu;
#ifndef TI_NO_OPENCL
    if (gpu != NULL) {
        ti__clplan_init(gpu);
        gpu->t_start = t_create;
    }
#endif
    s->al = d.allocator;
    s->plan_pool.al = d.allocator;
    memcpy(s->fallback, fallback, sizeof fallback);
    s->m = m;
    s->desc = d;
    /* room for the constants fusion makes: two a node at most (weight, bias) */
    s->cap_values = m->n_values + 2 * m->n_nodes + 1;
    s->t = (ti_tensor *)ti__calloc(&s->al, sizeof(ti_tensor) * (size_t)s->cap_values);
    s->vi = (ti__vinfo *)ti__calloc(&s->al, sizeof(ti__vinfo) * (size_t)s->cap_values);
    s->input_ranks = (int *)ti__calloc(&s->al, sizeof(int) * (size_t)(m->n_inputs + 1));
    s->input_shapes = (int64_t(*)[TI_MAX_DIMS])ti__calloc(
        &s->al, sizeof(int64_t) * TI_MAX_DIMS * (size_t)(m->n_inputs + 1));
    if (!s->t || !s->vi || !s->input_ranks || !s->input_shapes) {
        ti_session_destroy(s);
        ti__fail(err, TI_ERR_OUT_OF_MEMORY, m->name, "out of memory creating a session");
        return NULL;
    }
    for (int i = 0; i < m->n_inputs; i++) s->input_ranks[i] = -1;
    if (d.num_threads > 1) s->tp = ti__threadpool_create(&s->al, d.num_threads);
    if (ti__tune_load(s, err) != TI_OK || ti__session_plan(s, err) != TI_OK) {
        ti_session_destroy(s);
        return NULL;
    }
    if (s->info.fallback_reason && s->info.fallback_reason[0])
        ti__log(s, TI_LOG_INFO, s->info.fallback_reason);
    return s;
}

TI_API void ti_session_destroy(ti_session *s) {
    if (s == NULL) return;
    ti_allocator al = s->al;
    const ti_model *m = s->m;
    if (s->vi != NULL) ti__session_unplan(s);
    ti__threadpool_destroy(s->tp);
#ifndef TI_NO_OPENCL
    if (s->cl != NULL) {
        ti__clplan_join(s->cl);
        ti__clplan_release(s->cl);
        ti__clplan_fini(s->cl);
        ti__clrt_destroy(&s->cl->rt);
        ti__free(&al, s->cl, sizeof *s->cl);
    }
#endif
    ti__tune_free(s);
    ti__free(&al, s->t, sizeof(ti_tensor) * (size_t)s->cap_values);
    ti__free(&al, s->vi, sizeof(ti__vinfo) * (size_t)s->cap_values);
    ti__free(&al, s->input_ranks, sizeof(int) * (size_t)(m->n_inputs + 1));
    ti__free(&al, s->link_src, sizeof(ti_session *) * (size_t)(m->n_inputs + 1));
    ti__free(&al, s->link_out, sizeof(int) * (size_t)(m->n_inputs + 1));
    ti__free(&al, s->out_on_device, (size_t)m->n_outputs + 1);
    ti__free(&al, s->bind_in, sizeof(void *) * (size_t)(m->n_inputs + m->n_outputs + 2));
    ti__free(&al, s->bind_in_bytes, sizeof(size_t) * (size_t)(m->n_inputs + m->n_outputs + 2));
    ti__free(&al, s->input_shapes, sizeof(int64_t) * TI_MAX_DIMS * (size_t)(m->n_inputs + 1));
    ti__free(&al, s, sizeof *s);
}

TI_API int ti_session_num_inputs(const ti_session *s) { return s ? s->m->n_inputs : 0; }
TI_API int ti_session_num_outputs(const ti_session *s) { return s ? s->m->n_outputs : 0; }

TI_API ti_tensor *ti_session_input(ti_session *s, int i) {
    if (s == NULL || i < 0 || i >= s->m->n_inputs) return NULL;
    return &s->t[s->m->inputs[i]];
}
TI_API ti_tensor *ti_session_output(ti_session *s, int i) {
    if (s == NULL || i < 0 || i >= s->m->n_outputs) return NULL;
    return &s->t[s->m->outputs[i]];
}
TI_API ti_tensor *ti_session_input_by_name(ti_session *s, const char *name) {
    if (s == NULL || name == NULL) return NULL;
    for (int i = 0; i < s->m->n_inputs; i++)
        if (strcmp(s->m->values[s->m->inputs[i]].name, name) == 0) return ti_session_input(s, i);
    return NULL;
}
TI_API ti_tensor *ti_session_output_by_name(ti_session *s, const char *name) {
    if (s == NULL || name == NULL) return NULL;
    for (int i = 0; i < s->m->n_outputs; i++)
        if (strcmp(s->m->values[s->m->outputs[i]].name, name) == 0) return ti_session_output(s, i);
    return NULL;
}

TI_API ti_status ti_session_set_input_shape(ti_session *s, int i, int rank, const int64_t *shape,
                                            ti_error *err) {
    ti__error_clear(err);
    if (s == NULL || i < 0 || i >= s->m->n_inputs || rank < 0 || rank > TI_MAX_DIMS ||
        (rank > 0 && shape == NULL))
        return ti__fail(err, TI_ERR_INVALID_ARGUMENT, s ? s->m->name : "<session>",
                        "ti_session_set_input_shape: bad input index %d or rank %d", i, rank);
    const ti__value *mv = &s->m->values[s->m->inputs[i]];
    if (mv->rank >= 0 && mv->rank != rank)
        return ti__fail(err, TI_ERR_INVALID_ARGUMENT, s->m->name,
                        "input '%s' has rank %d, the new shape has rank %d", mv->name, mv->rank, rank);
    for (int d = 0; d < rank; d++) {
        if (shape[d] < 0)
            return ti__fail(err, TI_ERR_INVALID_ARGUMENT, s->m->name,
                            "input '%s': dim %d is negative (%lld)", mv->name, d, (long long)shape[d]);
        if (mv->rank >= 0 && mv->dims[d] >= 0 && mv->dims[d] != shape[d])
            return ti__fail(err, TI_ERR_INVALID_ARGUMENT, s->m->name,
                            "input '%s': dim %d is fixed to %lld by the model, got %lld", mv->name, d,
                            (long long)mv->dims[d], (long long)shape[d]);
    }
    ti_status st = ti_session_wait(s, err);
    if (st != TI_OK) return st;
    s->input_ranks[i] = rank;
    for (int d = 0; d < rank; d++) s->input_shapes[i][d] = shape[d];
    return ti__session_plan(s, err);
}

/* Runs node n of the dynamic region: shapes from the actual values, buffers grown. */
TI__PRIVATE ti_status ti__session_run_dynamic(ti_session *s, int n, ti_error *err) {
    ti__kctx k;
    ti__kctx_init(s, &k, n, err);
    const ti__op *op = s->ops[n];
    int r = op->shape(&k);
    if (r == TI__NEED_VALUE)
        return ti__fail_node(err, TI_ERR_BAD_MODEL, s->m->name, n, s->nodes[n].name, s->nodes[n].op,
                             "output shape depends on a value that is not available");
    if (r != TI_OK) return (ti_status)r;
    for (int i = 0; i < k.n_out; i++) {
        ti_tensor *t = k.out[i];
        if (t == NULL) continue;
        int v = s->nodes[n].outputs[i];
        ti__vinfo *vi = &s->vi[v];
        if (t->size_bytes > vi->heap_bytes || t->data == NULL) {
            ti__free(&s->al, t->data, vi->heap_bytes);
            vi->heap_bytes = t->size_bytes ? t->size_bytes : 1;
            t->data = ti__malloc(&s->al, vi->heap_bytes);
            if (t->data == NULL) {
                vi->heap_bytes = 0;
                return ti__fail(err, TI_ERR_OUT_OF_MEMORY, s->m->name, "out of memory for '%s'", t->name);
            }
        }
    }
    size_t need = op->scratch ? op->scratch(&k) : 0;
    if (need > s->scratch_bytes) {
        ti__free(&s->al, s->scratch, s->scratch_bytes);
        s->scratch = ti__malloc(&s->al, need);
        s->scratch_bytes = s->scratch ? need : 0;
        if (s->scratch == NULL)
            return ti__fail(err, TI_ERR_OUT_OF_MEMORY, s->m->name, "out of memory for scratch");
        k.scratch = s->scratch;
        k.scratch_bytes = need;
    }
    return op->run(&k);
}

TI_API ti_status ti_session_wait(ti_session *s, ti_error *err) {
    ti__error_clear(err);
    if (s == NULL) return ti__fail(err, TI_ERR_INVALID_ARGUMENT, "<session>", "session is NULL");
#ifndef TI_NO_OPENCL
    if (s->cl != NULL) {
        ti_status st = ti__clplan_wait(s, s->cl, err);
        if (st == TI_OK) ti__session_bound_copies(s); /* an async run's outputs bound by copy */
        return st;
    }
#endif
    return TI_OK;
}

/* Linked inputs (ti_session_link_input): checks each still matches its source and copies
 * it in host memory unless the OpenCL run will copy it on the device. */
TI__PRIVATE ti_status ti__session_pull_links(ti_session *s, ti_error *err) {
    for (int i = 0; s->link_src != NULL && i < s->m->n_inputs; i++) {
        ti_session *src = s->link_src[i];
        if (src == NULL) continue;
        ti_status st = ti_session_wait(src, err);
        if (st != TI_OK) return st;
        int v = s->m->inputs[i], sv = src->m->outputs[s->link_out[i]];
        const ti_tensor *a = &src->t[sv], *b = &s->t[v];
        if (!src->planned || a->dtype != b->dtype || a->size_bytes != b->size_bytes || a->data == NULL)
            return ti__fail(err, TI_ERR_INVALID_ARGUMENT, s->m->name,
                            "input %d '%s' is linked to output %d '%s' of '%s', which no longer matches it "
                            "(%s, %zu bytes vs %s, %zu bytes)",
                            i, b->name, s->link_out[i], a->name, src->m->name, ti_dtype_name(a->dtype),
                            a->size_bytes, ti_dtype_name(b->dtype), b->size_bytes);
#ifndef TI_NO_OPENCL
        if (ti__clplan_link_on_device(s, i)) continue;
        cl_int e = ti__clplan_fetch(src, src->cl, sv);
        if (e != CL_SUCCESS)
            return ti__fail(err, TI_ERR_BACKEND, src->m->name, "reading output '%s' from the OpenCL device: %s",
                            a->name, ti_cl_error_string(e));
#endif
        if (b->size_bytes) memcpy(b->data, a->data, b->size_bytes);
    }
    return TI_OK;
}

TI_API ti_status ti_session_link_input(ti_session *s, int i, ti_session *src, int j, ti_error *err) {
    ti__error_clear(err);
    if (s == NULL) return ti__fail(err, TI_ERR_INVALID_ARGUMENT, "<session>", "session is NULL");
    if (i < 0 || i >= s->m->n_inputs)
        return ti__fail(err, TI_ERR_INVALID_ARGUMENT, s->m->name, "input %d out of range (%d inputs)", i,
                        s->m->n_inputs);
    if (src == NULL) {
        if (s->link_src != NULL) s->link_src[i] = NULL;
        return TI_OK;
    }
    if (src == s) return ti__fail(err, TI_ERR_INVALID_ARGUMENT, s->m->name, "a session cannot feed itself");
    if (s->bind_in != NULL && s->bind_in[i] != NULL)
        return ti__fail(err, TI_ERR_INVALID_ARGUMENT, s->m->name,
                        "input %d is bound to caller memory: unbind it before linking", i);
    if (j < 0 || j >= src->m->n_outputs)
        return ti__fail(err, TI_ERR_INVALID_ARGUMENT, src->m->name, "output %d out of range (%d outputs)", j,
                        src->m->n_outputs);
    if (!s->planned || !src->planned)
        return ti__fail(err, TI_ERR_INVALID_ARGUMENT, s->m->name, "both sessions need a plan (set input shapes first)");
    const ti_tensor *a = &src->t[src->m->outputs[j]], *b = &s->t[s->m->inputs[i]];
    int same = a->dtype == b->dtype && a->rank == b->rank;
    for (int d = 0; same && d < a->rank; d++) same = a->shape[d] == b->shape[d];
    if (!same)
        return ti__fail(err, TI_ERR_INVALID_ARGUMENT, s->m->name,
                        "input %d '%s' (%s, rank %d) does not match output %d '%s' of '%s' (%s, rank %d) in "
                        "dtype or shape",
                        i, b->name, ti_dtype_name(b->dtype), b->rank, j, a->name, src->m->name,
                        ti_dtype_name(a->dtype), a->rank);
    if (s->link_src == NULL) {
        s->link_src = (ti_session **)ti__calloc(&s->al, sizeof(ti_session *) * (size_t)(s->m->n_inputs + 1));
        s->link_out = (int *)ti__calloc(&s->al, sizeof(int) * (size_t)(s->m->n_inputs + 1));
        if (s->link_src == NULL || s->link_out == NULL) {
            ti__free(&s->al, s->link_src, sizeof(ti_session *) * (size_t)(s->m->n_inputs + 1));
            ti__free(&s->al, s->link_out, sizeof(int) * (size_t)(s->m->n_inputs + 1));
            s->link_src = NULL;
            s->link_out = NULL;
            return ti__fail(err, TI_ERR_OUT_OF_MEMORY, s->m->name, "out of memory linking inputs");
        }
    }
    if (src->out_on_device == NULL) {
        src->out_on_device = (unsigned char *)ti__calloc(&src->al, (size_t)src->m->n_outputs + 1);
        if (src->out_on_device == NULL)
            return ti__fail(err, TI_ERR_OUT_OF_MEMORY, src->m->name, "out of memory linking outputs");
    }
    s->link_src[i] = src;
    s->link_out[i] = j;
    src->out_on_device[j] = 1;
    return TI_OK;
}

/* ---- caller memory (ti_session_bind_input / _output) ----------------------------------
 * A bound value normally lives in the arena: its data pointer is switched to the caller's
 * memory before each run (the arena slot kept in bind_slot, where the OpenCL backend still
 * places it on the device), so CPU kernels read and write the caller's memory in place.
 * A value that is not an arena one (a constant, a value of the dynamic region, an output
 * that is also an input or bound twice) is copied instead: inputs before the run,
 * outputs after it (ti__session_bound_copies). */

TI__PRIVATE int ti__session_in_arena(const ti_session *s, const void *p) {
    const unsigned char *c = (const unsigned char *)p;
    return s->arena != NULL && c >= s->arena && c < s->arena + s->arena_bytes;
}

/* Output j's value is shared (a model input, or an earlier output's value): copied. */
TI__PRIVATE int ti__session_out_shared(const ti_session *s, int j) {
    int v = s->m->outputs[j];
    for (int i = 0; i < s->m->n_inputs; i++)
        if (s->m->inputs[i] == v) return 1;
    for (int k = 0; k < j; k++)
        if (s->m->outputs[k] == v && s->bind_out[k] != NULL) return 1;
    return 0;
}

/* The per-value slot table of this plan (plan pool, zeroed); 0 when out of memory. */
TI__PRIVATE int ti__session_bind_slots(ti_session *s) {
    if (s->bind_slot != NULL) return 1;
    size_t n = sizeof(unsigned char *) * (size_t)(s->n_values + 1);
    s->bind_slot = (unsigned char **)ti__pool_alloc(&s->plan_pool, n);
    if (s->bind_slot != NULL) memset(s->bind_slot, 0, n);
    return s->bind_slot != NULL;
}

/* Applies binding k (inputs, then outputs) to its value: points an arena value at the
 * caller's memory, copies a bound input that is not one in. -1 when the memory is too
 * small (nothing done), 1 when an output needs a copy after the run, else 0. */
TI__PRIVATE int ti__session_apply_one(ti_session *s, int k) {
    const ti_model *m = s->m;
    int is_in = k < m->n_inputs, j = is_in ? k : k - m->n_inputs;
    void *p = is_in ? s->bind_in[j] : s->bind_out[j];
    size_t cap = is_in ? s->bind_in_bytes[j] : s->bind_out_bytes[j];
    if (p == NULL) return 0;
    int v = is_in ? m->inputs[j] : m->outputs[j];
    ti_tensor *t = &s->t[v];
    if (t->size_bytes > cap) return -1;
    int shared = !is_in && ti__session_out_shared(s, j);
    if (!shared && s->bind_slot[v] == NULL && ti__session_in_arena(s, t->data)) s->bind_slot[v] = (unsigned char *)t->data;
    if (!shared && s->bind_slot[v] != NULL) {
        t->data = p;
        return 0;
    }
    if (!is_in) return 1;
    if (t->size_bytes && t->data != p) memcpy(t->data, p, t->size_bytes);
    return 0;
}

/* Before a run: every binding applied, each size checked. */
TI__PRIVATE ti_status ti__session_apply_bindings(ti_session *s, ti_error *err) {
    s->bind_copy_pending = 0;
    if (s->bind_in == NULL) return TI_OK;
    const ti_model *m = s->m;
    if (!ti__session_bind_slots(s)) return ti__fail(err, TI_ERR_OUT_OF_MEMORY, m->name, "out of memory binding tensors");
    for (int k = 0; k < m->n_inputs + m->n_outputs; k++) {
        int r = ti__session_apply_one(s, k);
        if (r > 0) s->bind_copy_pending = 1;
        if (r < 0) {
            int is_in = k < m->n_inputs, j = is_in ? k : k - m->n_inputs;
            const ti_tensor *t = &s->t[is_in ? m->inputs[j] : m->outputs[j]];
            return ti__fail(err, TI_ERR_INVALID_ARGUMENT, m->name, "%s %d '%s' needs %zu bytes, its bound memory has %zu",
                            is_in ? "input" : "output", j, t->name, t->size_bytes,
                            is_in ? s->bind_in_bytes[j] : s->bind_out_bytes[j]);
        }
    }
    return TI_OK;
}

/* After a run (its wait, when async): outputs bound by copy get their bytes. */
TI__PRIVATE void ti__session_bound_copies(ti_session *s) {
    if (!s->bind_copy_pending) return;
    s->bind_copy_pending = 0;
    for (int j = 0; j < s->m->n_outputs; j++) {
        int v = s->m->outputs[j];
        const ti_tensor *t = &s->t[v];
        if (s->bind_out[j] == NULL || t->data == s->bind_out[j] || t->data == NULL) continue;
        if (t->size_bytes) memcpy(s->bind_out[j], t->data, t->size_bytes);
    }
}

TI__PRIVATE ti_status ti__session_bind(ti_session *s, int is_in, int i, void *data, size_t bytes, ti_error *err) {
    ti__error_clear(err);
    if (s == NULL) return ti__fail(err, TI_ERR_INVALID_ARGUMENT, "<session>", "session is NULL");
    const ti_model *m = s->m;
    int n = is_in ? m->n_inputs : m->n_outputs;
    if (i < 0 || i >= n)
        return ti__fail(err, TI_ERR_INVALID_ARGUMENT, m->name, "%s %d out of range (%d %ss)", is_in ? "input" : "output",
                        i, n, is_in ? "input" : "output");
    if (is_in && data != NULL && s->link_src != NULL && s->link_src[i] != NULL)
        return ti__fail(err, TI_ERR_INVALID_ARGUMENT, m->name,
                        "input %d is linked to another session's output: unlink it before binding memory", i);
    ti_status st = ti_session_wait(s, err); /* a pending run still uses the old memory */
    if (st != TI_OK) return st;
    if (s->bind_in == NULL) {
        if (data == NULL) return TI_OK;
        size_t k = (size_t)(m->n_inputs + m->n_outputs + 2);
        s->bind_in = (void **)ti__calloc(&s->al, sizeof(void *) * k);
        s->bind_in_bytes = (size_t *)ti__calloc(&s->al, sizeof(size_t) * k);
        if (s->bind_in == NULL || s->bind_in_bytes == NULL) {
            ti__free(&s->al, s->bind_in, sizeof(void *) * k);
            ti__free(&s->al, s->bind_in_bytes, sizeof(size_t) * k);
            s->bind_in = NULL;
            s->bind_in_bytes = NULL;
            return ti__fail(err, TI_ERR_OUT_OF_MEMORY, m->name, "out of memory binding tensors");
        }
        s->bind_out = s->bind_in + m->n_inputs + 1; /* one array: inputs, then outputs */
        s->bind_out_bytes = s->bind_in_bytes + m->n_inputs + 1;
    }
    void **slot = is_in ? &s->bind_in[i] : &s->bind_out[i];
    int v = is_in ? m->inputs[i] : m->outputs[i];
#ifndef TI_NO_OPENCL
    ti__clplan_unbind(s, v); /* a device buffer wrapping the old memory */
#endif
    if (data == NULL && *slot != NULL && s->bind_slot != NULL && s->bind_slot[v] != NULL &&
        s->t[v].data == *slot) { /* back to the arena slot */
        s->t[v].data = s->bind_slot[v];
        s->bind_slot[v] = NULL;
    }
    *slot = data;
    (is_in ? s->bind_in_bytes : s->bind_out_bytes)[i] = data != NULL ? bytes : 0;
    if (data != NULL && s->planned) { /* t->data is the caller's at once (when it fits) */
        if (!ti__session_bind_slots(s)) return ti__fail(err, TI_ERR_OUT_OF_MEMORY, m->name, "out of memory binding tensors");
        (void)ti__session_apply_one(s, is_in ? i : m->n_inputs + i);
    }
    return TI_OK;
}

TI_API ti_status ti_session_bind_input(ti_session *s, int i, void *data, size_t bytes, ti_error *err) {
    return ti__session_bind(s, 1, i, data, bytes, err);
}
TI_API ti_status ti_session_bind_output(ti_session *s, int j, void *data, size_t bytes, ti_error *err) {
    return ti__session_bind(s, 0, j, data, bytes, err);
}

TI_API ti_status ti_session_fetch_output(ti_session *s, int j, ti_error *err) {
    ti__error_clear(err);
    if (s == NULL) return ti__fail(err, TI_ERR_INVALID_ARGUMENT, "<session>", "session is NULL");
    if (j < 0 || j >= s->m->n_outputs)
        return ti__fail(err, TI_ERR_INVALID_ARGUMENT, s->m->name, "output %d out of range (%d outputs)", j,
                        s->m->n_outputs);
    ti_status st = ti_session_wait(s, err);
    if (st != TI_OK || !s->planned) return st;
#ifndef TI_NO_OPENCL
    cl_int e = ti__clplan_fetch(s, s->cl, s->m->outputs[j]);
    if (e != CL_SUCCESS)
        return ti__fail(err, TI_ERR_BACKEND, s->m->name, "reading output %d from the OpenCL device: %s", j,
                        ti_cl_error_string(e));
#endif
    return TI_OK;
}

/* Clears the last run's times (and the profile) before a run. */
TI__PRIVATE void ti__session_prof_reset(ti_session *s) {
    s->t_run = ti__now_ms();
    s->info.upload_ms = s->info.kernel_ms = s->info.download_ms = s->info.cpu_ms = 0.0;
    if (s->prof_ms == NULL) return;
    for (int n = 0; n < s->n_nodes; n++) {
        s->prof_t0[n] = -1.0;
        s->prof_ms[n] = 0.0;
        s->prof_bytes[n] = 0;
        s->prof_gpu[n] = 0;
    }
}

TI__PRIVATE ti_status ti__session_run_node_cpu(ti_session *s, int n, ti_error *err) {
    double t0 = s->prof_ms != NULL ? ti__now_ms() : 0.0;
    ti_status st;
    if (n >= s->first_dynamic) {
        st = ti__session_run_dynamic(s, n, err);
    } else {
        ti__kctx k;
        ti__kctx_init(s, &k, n, err);
        st = s->ops[n]->run(&k);
    }
    if (st != TI_OK) return st;
    if (s->prof_ms != NULL) {
        double t1 = ti__now_ms();
        s->prof_t0[n] = t0 - s->t_run;
        s->prof_ms[n] = t1 - t0;
        s->prof_gpu[n] = 0;
        s->info.cpu_ms += t1 - t0;
    }
    return TI_OK;
}

TI__PRIVATE ti_status ti__session_run(ti_session *s, int async, ti_error *err) {
    ti__error_clear(err);
    if (s == NULL) return ti__fail(err, TI_ERR_INVALID_ARGUMENT, "<session>", "session is NULL");
    ti_status st = ti_session_wait(s, err); /* a pending run finishes first */
    if (st != TI_OK) return st;
    if (!s->planned)
        return ti__fail(err, TI_ERR_INVALID_ARGUMENT, s->m->name, "%s",
                        s->unplanned_reason[0] ? s->unplanned_reason : "session has no plan");
    ti__session_prof_reset(s);
#ifndef TI_NO_OPENCL
    if (s->cl != NULL && s->cl->building && !ti__clplan_still_building(s->cl)) {
        ti__clplan_join(s->cl); /* the programs are ready: from this run on, the GPU */
        ti__session_cl_info(s);
    }
#endif
    if ((st = ti__session_pull_links(s, err)) != TI_OK) return st;
    if ((st = ti__session_apply_bindings(s, err)) != TI_OK) return st;
#ifndef TI_NO_OPENCL
    if (s->cl != NULL && s->cl->building) s->cl->cpu_runs++;
    else if (s->cl != NULL && s->cl->active) {
        st = ti__clplan_run(s, s->cl, async, err);
        if (st == TI_OK && !async) ti__session_bound_copies(s);
        return st;
    }
    if (s->cl != NULL) s->cl->last_on_gpu = 0;
#endif
    (void)async;
    for (int n = 0; n < s->n_nodes; n++)
        if ((st = ti__session_run_node_cpu(s, n, err)) != TI_OK) return st;
    if (s->prof_ms != NULL) s->profiled = 1;
    s->info.run_ms = ti__now_ms() - s->t_run;
    ti__session_bound_copies(s);
    return TI_OK;
}

TI_API ti_status ti_session_run(ti_session *s, ti_error *err) { return ti__session_run(s, 0, err); }

TI_API ti_status ti_session_run_async(ti_session *s, ti_error *err) {
    return ti__session_run(s, 1, err);
}

TI_API ti_status ti_session_get_info(const ti_session *s, ti_session_info *out) {
    if (s == NULL || out == NULL) return TI_ERR_INVALID_ARGUMENT;
    *out = s->info;
#ifndef TI_NO_OPENCL
    if (s->cl != NULL && !s->cl->building && s->cl->active) {
        out->launch_retries = s->cl->rt.retries;
        out->num_gpu_nodes = s->cl->n_gpu;
        out->num_cpu_nodes = s->cl->n_cpu;
    }
#endif
    return TI_OK;
}

TI_API int ti_op_supported(const char *domain, const char *op) {
    return op != NULL && ti__op_find(domain ? domain : "", op) != NULL;
}

TI_API int ti_session_num_nodes(const ti_session *s) { return s && s->planned ? s->n_nodes : 0; }

TI_API ti_status ti_session_node_info(const ti_session *s, int i, ti_node_info *out) {
    if (s == NULL || out == NULL || !s->planned || i < 0 || i >= s->n_nodes)
        return TI_ERR_INVALID_ARGUMENT;
    const ti__node *n = &s->nodes[i];
    out->name = n->name;
    out->op = n->op;
    out->fused = n->fused_name != NULL ? n->fused_name : ti__act_name(n->act);
    out->num_inputs = n->n_inputs;
    out->num_outputs = n->n_outputs;
    out->backend = TI_BACKEND_CPU;
    out->placement = "";
    out->time_ms = s->profiled ? s->prof_ms[i] : -1.0;
    out->bytes_in = s->profiled ? s->prof_bytes[i] : 0;
    out->tunables = "";
    out->tuning = "";
    out->launch_retries = 0;
#ifndef TI_NO_OPENCL
    if (s->cl != NULL && !s->cl->building && s->cl->gpu != NULL) {
        const ti__clplan *g = s->cl;
        out->backend = g->gpu[i] ? TI_BACKEND_OPENCL : TI_BACKEND_CPU;
        out->placement = g->why[i];
        if (g->gpu[i]) {
            out->tunables = g->tunables[i];
            out->tuning = g->tuned[i];
        }
        out->launch_retries = g->node_retries[i];
    }
#endif
    return TI_OK;
}

TI_API const ti_tensor *ti_session_node_input(const ti_session *s, int i, int j) {
    if (s == NULL || !s->planned || i < 0 || i >= s->n_nodes || j < 0 || j >= s->nodes[i].n_inputs)
        return NULL;
    return s->io[i][j];
}

TI_API const ti_tensor *ti_session_node_output(const ti_session *s, int i, int j) {
    if (s == NULL || !s->planned || i < 0 || i >= s->n_nodes || j < 0 || j >= s->nodes[i].n_outputs)
        return NULL;
    return s->io[i][s->nodes[i].n_inputs + j];
}

/* ---- precision check (ti_session_check_precision) --------------------------------------- */

/* Makes value v of s current on the host (a GPU run may have left it on the device). */
TI__PRIVATE int ti__session_value_on_host(ti_session *s, int v) {
#ifndef TI_NO_OPENCL
    if (s->cl != NULL && ti__clplan_fetch(s, s->cl, v) != CL_SUCCESS) return 0;
#endif
    (void)s;
    (void)v;
    return 1;
}

/* Compares value v of a (checked) and b (the CPU's) into row r; 0 when they differ in
 * dtype or size (not comparable). */
TI__PRIVATE int ti__precision_compare(ti_session *a, ti_session *b, int v, ti_precision_row *r) {
    const ti_tensor *x = &a->t[v], *y = &b->t[v];
    if (x->dtype != y->dtype || x->size_bytes != y->size_bytes || x->data == NULL || y->data == NULL ||
        x->dtype == TI_DTYPE_STRING || x->dtype == TI_DTYPE_UNKNOWN)
        return 0;
    if (!ti__session_value_on_host(a, v)) return 0;
    size_t n = ti__numel(x);
    double most = 0.0, diff = 0.0;
    for (size_t i = 0; i < n; i++) {
        double p = ti__get_f64(x, i), q = ti__get_f64(y, i), d = fabs(p - q);
        if (d != d) d = p == q || (p != p && q != q) ? 0.0 : HUGE_VAL; /* NaN in one only */
        if (d > diff) diff = d;
        if (fabs(q) > most) most = fabs(q);
    }
    r->name = x->name;
    r->count = n;
    r->max_abs = diff;
    r->max_rel = diff == 0.0 ? 0.0 : most > 0.0 ? diff / most : HUGE_VAL;
    return 1;
}

TI_API int ti_session_check_precision(ti_session *s, ti_precision_row *rows, int max_rows, ti_error *err) {
    ti__error_clear(err);
    if (s == NULL) return ti__fail(err, TI_ERR_INVALID_ARGUMENT, "<session>", "session is NULL"), -1;
    if (ti_session_wait(s, err) != TI_OK) return -1;
    if (!s->planned)
        return ti__fail(err, TI_ERR_INVALID_ARGUMENT, s->m->name, "the session has no plan: %s", s->unplanned_reason), -1;
    ti_session_desc d = s->desc;
    d.keep_intermediates = 1;
    d.profile = 0;
    d.opencl_build_first = 1; /* the checked backend from the first run, not the CPU meanwhile */
    d.log = NULL;
#ifndef TI_NO_OPENCL
    d.backend = s->cl != NULL && s->cl->active && !s->cl->building ? TI_BACKEND_OPENCL : TI_BACKEND_CPU;
#else
    d.backend = TI_BACKEND_CPU;
#endif
    ti_session *t[2] = {NULL, NULL};
    int count = -1;
    for (int k = 0; k < 2; k++) {
        if (k == 1) d.backend = TI_BACKEND_CPU;
        t[k] = ti_session_create(s->m, &d, err);
        if (t[k] == NULL) goto done;
        for (int i = 0; i < s->m->n_inputs; i++) {
            if (s->input_ranks[i] >= 0 &&
                ti_session_set_input_shape(t[k], i, s->input_ranks[i], s->input_shapes[i], err) != TI_OK)
                goto done;
            const ti_tensor *from = &s->t[s->m->inputs[i]];
            ti_tensor *to = ti_session_input(t[k], i);
            if (to->size_bytes != from->size_bytes) {
                ti__fail(err, TI_ERR_INVALID_ARGUMENT, s->m->name, "input %d: %zu bytes in the check's session, %zu in the session",
                         i, to->size_bytes, from->size_bytes);
                goto done;
            }
            if (from->size_bytes) memcpy(to->data, from->data, from->size_bytes);
        }
        if (ti_session_run(t[k], err) != TI_OK) goto done;
    }
    count = 0;
    for (int pass = 0; pass < 2; pass++) {
        int nn = pass == 0 ? s->m->n_outputs : t[0]->n_nodes;
        for (int i = 0; i < nn; i++) {
            int no = pass == 0 ? 1 : t[0]->nodes[i].n_outputs;
            for (int j = 0; j < no; j++) {
                int v = pass == 0 ? s->m->outputs[i] : t[0]->nodes[i].outputs[j];
                if (v < 0 || v >= s->m->n_values || v >= t[1]->n_values) continue; /* made by a pass */
                ti_precision_row r;
                memset(&r, 0, sizeof r);
                if (!ti__precision_compare(t[0], t[1], v, &r)) continue;
                r.node = pass == 0 ? -1 : i;
                r.backend = TI_BACKEND_CPU;
#ifndef TI_NO_OPENCL
                if (pass == 1 && t[0]->cl != NULL && t[0]->cl->gpu != NULL && t[0]->cl->gpu[i]) r.backend = TI_BACKEND_OPENCL;
#endif
                if (rows != NULL && count < max_rows) rows[count] = r;
                count++;
            }
        }
    }
done:
    ti_session_destroy(t[0]);
    ti_session_destroy(t[1]);
    return count;
}

#ifndef TI_NO_STDIO
/* Formats into a line buffer and writes it to the file (the library prints nowhere: this
 * only ever writes the file the user named). Lines here are short; longer ones are cut. */
TI__PRIVATE void ti__fput_fmt(FILE *f, const char *fmt, ...) {
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    fwrite(line, 1, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1, f);
}

/* Writes s as a JSON string body (quotes and control characters escaped). */
TI__PRIVATE void ti__json_str(FILE *f, const char *s) {
    for (; s != NULL && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') ti__fput_fmt(f, "\\%c", c);
        else if (c < 0x20) ti__fput_fmt(f, "\\u%04x", c);
        else fputc(c, f);
    }
}

TI_API ti_status ti_session_write_trace(const ti_session *s, const char *path, ti_error *err) {
    ti__error_clear(err);
    if (s == NULL || path == NULL)
        return ti__fail(err, TI_ERR_INVALID_ARGUMENT, "<session>", "session or path is NULL");
    if (!s->profiled)
        return ti__fail(err, TI_ERR_INVALID_ARGUMENT, s->m->name,
                        "no profile to write: create the session with desc.profile = 1 and run it");
    FILE *f = fopen(path, "w");
    if (f == NULL) return ti__fail(err, TI_ERR_IO, path, "cannot open the trace file for writing");
    /* one process, two tracks: tid 1 the CPU, tid 2 the OpenCL device; times in us */
    ti__fput_fmt(f, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n"
               "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":1,\"args\":{\"name\":\"");
    ti__json_str(f, s->m->name);
    ti__fput_fmt(f, "\"}},\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":1,\"args\":{\"name\":\"CPU\"}},\n"
               "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":2,\"args\":{\"name\":\"");
    ti__json_str(f, s->info.device && s->info.device[0] ? s->info.device : "GPU");
    ti__fput_fmt(f, "\"}}");
    for (int n = 0; n < s->n_nodes; n++) {
        if (s->prof_t0[n] < 0) continue; /* did not run (or its events were not recorded) */
        ti__fput_fmt(f, ",\n{\"name\":\"");
        ti__json_str(f, s->nodes[n].name[0] ? s->nodes[n].name : s->nodes[n].op);
        ti__fput_fmt(f, "\",\"cat\":\"");
        ti__json_str(f, s->nodes[n].op);
        ti__fput_fmt(f, "\",\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,"
                   "\"args\":{\"node\":%d,\"bytes_in\":%zu}}",
                s->prof_gpu[n] ? 2 : 1, s->prof_t0[n] * 1e3, s->prof_ms[n] * 1e3, n, s->prof_bytes[n]);
    }
    ti__fput_fmt(f, "\n]}\n");
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) return ti__fail(err, TI_ERR_IO, path, "writing the trace file failed");
    return TI_OK;
}
#else
TI_API ti_status ti_session_write_trace(const ti_session *s, const char *path, ti_error *err) {
    (void)s;
    (void)path;
    return ti__fail(err, TI_ERR_UNSUPPORTED, "<session>", "built with TI_NO_STDIO: no file access");
}
#endif
