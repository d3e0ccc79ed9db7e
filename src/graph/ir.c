/* The IR: a model's values (tensors) and nodes, built by the format readers, with a name
 * index and the attribute lookups kernels use. Relies on alloc.c for the pool and arrays.
 * Must not know any file format or backend. */

TI__PRIVATE uint32_t ti__hash_str(const char *s) {
    uint32_t h = 2166136261u; /* FNV-1a */
    while (*s) h = (h ^ (uint8_t)*s++) * 16777619u;
    return h;
}

TI__PRIVATE int ti__model_find_value(const ti_model *m, const char *name) {
    if (m->hash_cap == 0 || name == NULL) return -1;
    uint32_t mask = (uint32_t)m->hash_cap - 1, i = ti__hash_str(name) & mask;
    for (;;) {
        int v = m->hash[i];
        if (v < 0) return -1;
        if (strcmp(m->values[v].name, name) == 0) return v;
        i = (i + 1) & mask;
    }
}

TI__PRIVATE int ti__model_hash_insert(ti_model *m, int v) {
    if ((m->n_values + 1) * 2 > m->hash_cap) { /* rehash at half full */
        int ncap = m->hash_cap ? m->hash_cap * 2 : 64;
        int *nh = (int *)ti__malloc(&m->al, sizeof(int) * (size_t)ncap);
        if (nh == NULL) return 0;
        for (int i = 0; i < ncap; i++) nh[i] = -1;
        int *old = m->hash, oldcap = m->hash_cap;
        m->hash = nh;
        m->hash_cap = ncap;
        for (int i = 0; i < oldcap; i++)
            if (old[i] >= 0) {
                uint32_t j = ti__hash_str(m->values[old[i]].name) & (uint32_t)(ncap - 1);
                while (nh[j] >= 0) j = (j + 1) & (uint32_t)(ncap - 1);
                nh[j] = old[i];
            }
        ti__free(&m->al, old, sizeof(int) * (size_t)oldcap);
    }
    uint32_t mask = (uint32_t)m->hash_cap - 1, j = ti__hash_str(m->values[v].name) & mask;
    while (m->hash[j] >= 0) j = (j + 1) & mask;
    m->hash[j] = v;
    return 1;
}

TI__PRIVATE int ti__model_add_value(ti_model *m, const char *name) {
    if (!ti__grow(&m->al, (void **)&m->values, &m->cap_values, m->n_values + 1, sizeof(ti__value)))
        return -1;
    int v = m->n_values;
    ti__value *val = &m->values[v];
    memset(val, 0, sizeof *val);
    val->name = ti__pool_strndup(&m->pool, name ? name : "", name ? strlen(name) : 0);
    if (val->name == NULL) return -1;
    val->rank = -1;
    /* an unnamed value is never looked up; a repeated name keeps its first index */
    if (name != NULL && name[0] != 0 && ti__model_find_value(m, name) < 0) {
        if (!ti__model_hash_insert(m, v)) return -1;
    }
    m->n_values++;
    return v;
}

TI__PRIVATE int ti__model_value(ti_model *m, const char *name) {
    int v = ti__model_find_value(m, name);
    return v >= 0 ? v : ti__model_add_value(m, name);
}

TI__PRIVATE ti__node *ti__model_add_node(ti_model *m, int n_inputs, int n_outputs, int n_attrs) {
    if (n_inputs < 0 || n_outputs < 0 || n_attrs < 0) return NULL;
    if (!ti__grow(&m->al, (void **)&m->nodes, &m->cap_nodes, m->n_nodes + 1, sizeof(ti__node)))
        return NULL;
    ti__node *n = &m->nodes[m->n_nodes];
    memset(n, 0, sizeof *n);
    n->name = "";
    n->op = "";
    n->domain = "";
    n->n_inputs = n_inputs;
    n->n_outputs = n_outputs;
    n->n_attrs = n_attrs;
    n->inputs = (int *)ti__pool_alloc(&m->pool, sizeof(int) * (size_t)(n_inputs + 1));
    n->outputs = (int *)ti__pool_alloc(&m->pool, sizeof(int) * (size_t)(n_outputs + 1));
    n->attrs = (ti__attr *)ti__pool_alloc(&m->pool, sizeof(ti__attr) * (size_t)(n_attrs + 1));
    if (!n->inputs || !n->outputs || !n->attrs) return NULL;
    for (int i = 0; i < n_inputs; i++) n->inputs[i] = -1;
    for (int i = 0; i < n_outputs; i++) n->outputs[i] = -1;
    for (int i = 0; i < n_attrs; i++) n->attrs[i].tensor = -1;
    m->n_nodes++;
    return n;
}

TI__PRIVATE int ti__model_add_input(ti_model *m, int value) {
    if (!ti__grow(&m->al, (void **)&m->inputs, &m->cap_inputs, m->n_inputs + 1, sizeof(int)))
        return 0;
    m->inputs[m->n_inputs++] = value;
    return 1;
}

TI__PRIVATE int ti__model_add_output(ti_model *m, int value) {
    if (!ti__grow(&m->al, (void **)&m->outputs, &m->cap_outputs, m->n_outputs + 1, sizeof(int)))
        return 0;
    m->outputs[m->n_outputs++] = value;
    return 1;
}

/* Puts m's nodes in topological order: Kahn's algorithm, taking the lowest index among the
 * nodes ready, so the order stays close to the file's. prod: each value's producer (a node
 * index, or negative: a graph input, a constant, none); edges: how many node inputs are
 * some node's output. Returns 0 when sorted, -1 out of memory (the nodes untouched), or 1
 * when the nodes hold a cycle, with a node on it in *cycle_node (the nodes untouched). For
 * ti__model_order, below. */
TI__PRIVATE int ti__model_toposort(ti_model *m, const int *prod, size_t edges, int *cycle_node) {
    const ti_allocator *al = &m->al;
    int nn = m->n_nodes, ret = 0;
    size_t nn1 = (size_t)nn + 1;
    /* indeg: producers not yet scheduled; consumers of p in cons[start[p] .. start[p + 1]) */
    int *indeg = (int *)ti__calloc(al, sizeof(int) * nn1);
    size_t *start = (size_t *)ti__calloc(al, sizeof(size_t) * (nn1 + 1));
    int *cons = (int *)ti__malloc(al, sizeof(int) * (edges + 1));
    int *heap = (int *)ti__malloc(al, sizeof(int) * nn1);
    int *order = (int *)ti__malloc(al, sizeof(int) * nn1);
    ti__node *nodes = (ti__node *)ti__malloc(al, sizeof(ti__node) * nn1);
    if (!indeg || !start || !cons || !heap || !order || !nodes) ret = -1;
    for (int i = 0; i < nn && ret == 0; i++)
        for (int k = 0; k < m->nodes[i].n_inputs; k++) {
            int v = m->nodes[i].inputs[k];
            if (v >= 0 && prod[v] >= 0) {
                indeg[i]++;
                start[prod[v] + 2]++;
            }
        }
    if (ret == 0) {
        for (int i = 0; i < nn; i++) start[i + 2] += start[i + 1];
        /* start[p + 1] is now where producer p's consumers begin; filling advances it */
        for (int i = 0; i < nn; i++)
            for (int k = 0; k < m->nodes[i].n_inputs; k++) {
                int v = m->nodes[i].inputs[k];
                if (v >= 0 && prod[v] >= 0) cons[start[prod[v] + 1]++] = i;
            }
        int hn = 0, done = 0;
        for (int i = 0; i < nn; i++)
            if (indeg[i] == 0) heap[hn++] = i; /* ascending: already a min-heap */
        while (hn > 0) {
            int u = heap[0];
            heap[0] = heap[--hn];
            for (int j = 0;;) { /* sift down */
                int l = 2 * j + 1, r = l + 1, s = j;
                if (l < hn && heap[l] < heap[s]) s = l;
                if (r < hn && heap[r] < heap[s]) s = r;
                if (s == j) break;
                int tmp = heap[j];
                heap[j] = heap[s];
                heap[s] = tmp;
                j = s;
            }
            order[done++] = u;
            for (size_t e = start[u]; e < start[u + 1]; e++) {
                int w = cons[e];
                if (--indeg[w] != 0) continue;
                int j = hn++; /* sift up */
                heap[j] = w;
                while (j > 0 && heap[(j - 1) / 2] > heap[j]) {
                    int pj = (j - 1) / 2, tmp = heap[pj];
                    heap[pj] = heap[j];
                    heap[j] = tmp;
                    j = pj;
                }
            }
        }
        if (done < nn) {
            /* walk back through unscheduled producers: after nn steps the walk is on a cycle */
            int u = 0;
            while (indeg[u] == 0) u++;
            for (int step = 0; step < nn; step++) {
                const ti__node *n = &m->nodes[u];
                for (int k = 0; k < n->n_inputs; k++) {
                    int v = n->inputs[k];
                    if (v >= 0 && prod[v] >= 0 && indeg[prod[v]] > 0) {
                        u = prod[v];
                        break;
                    }
                }
            }
            *cycle_node = u;
            ret = 1;
        } else {
            for (int i = 0; i < nn; i++) nodes[i] = m->nodes[order[i]];
            ti__free(al, m->nodes, sizeof(ti__node) * (size_t)m->cap_nodes);
            m->nodes = nodes;
            m->cap_nodes = (int)nn1;
            nodes = NULL;
        }
    }
    ti__free(al, indeg, sizeof(int) * nn1);
    ti__free(al, start, sizeof(size_t) * (nn1 + 1));
    ti__free(al, cons, sizeof(int) * (edges + 1));
    ti__free(al, heap, sizeof(int) * nn1);
    ti__free(al, order, sizeof(int) * nn1);
    ti__free(al, nodes, sizeof(ti__node) * nn1);
    return ret;
}

/* What ti__model_order found: TI__ORDER_OK, or what is wrong, and where. */
enum {
    TI__ORDER_OK,
    TI__ORDER_OOM,
    TI__ORDER_TWICE,     /* node's output value already made by other */
    TI__ORDER_NO_INPUT,  /* node's input value made by nothing */
    TI__ORDER_NO_OUTPUT, /* graph output value made by nothing */
    TI__ORDER_CYCLE      /* node on a cycle */
};
typedef struct ti__order_bad {
    int node, value;
    int other; /* TWICE: the first producer, a node index, -2 a graph input, -3 a constant */
} ti__order_bad;

/* Checks m's links, the ONNX and TFLite readers' rules: no value is made twice (by two
 * nodes, or by a node and the graph's inputs or constants), every node input and graph output
 * is made, and puts the nodes in topological order when they are not (ti__model_toposort).
 * Returns a TI__ORDER_* code, the first problem's place in *bad, for each reader to name in
 * its own words. */
TI__PRIVATE int ti__model_order(ti_model *m, ti__order_bad *bad) {
    const ti_allocator *al = &m->al;
    int nv = m->n_values, nn = m->n_nodes, ret = TI__ORDER_OK;
    bad->node = bad->value = bad->other = -1;
    /* producer of each value: node index, or -1 none, -2 graph input, -3 constant */
    int *prod = (int *)ti__malloc(al, sizeof(int) * ((size_t)nv + 1));
    if (prod == NULL) return TI__ORDER_OOM;
    for (int v = 0; v < nv; v++) prod[v] = m->values[v].is_const ? -3 : -1;
    for (int i = 0; i < m->n_inputs; i++) prod[m->inputs[i]] = -2;
    int sorted = 1;
    size_t edges = 0;
    for (int i = 0; i < nn && ret == TI__ORDER_OK; i++)
        for (int o = 0; o < m->nodes[i].n_outputs; o++) {
            int v = m->nodes[i].outputs[o];
            if (v < 0) continue;
            if (prod[v] != -1) {
                bad->node = i, bad->value = v, bad->other = prod[v];
                ret = TI__ORDER_TWICE;
                break;
            }
            prod[v] = i;
        }
    for (int i = 0; i < nn && ret == TI__ORDER_OK; i++)
        for (int k = 0; k < m->nodes[i].n_inputs; k++) {
            int v = m->nodes[i].inputs[k];
            if (v < 0) continue;
            if (prod[v] == -1) {
                bad->node = i, bad->value = v;
                ret = TI__ORDER_NO_INPUT;
                break;
            }
            if (prod[v] >= 0) edges++;
            if (prod[v] >= i) sorted = 0;
        }
    for (int i = 0; i < m->n_outputs && ret == TI__ORDER_OK; i++)
        if (prod[m->outputs[i]] == -1) {
            bad->value = m->outputs[i];
            ret = TI__ORDER_NO_OUTPUT;
        }
    if (ret == TI__ORDER_OK && !sorted) {
        int r = ti__model_toposort(m, prod, edges, &bad->node);
        ret = r < 0 ? TI__ORDER_OOM : r > 0 ? TI__ORDER_CYCLE : TI__ORDER_OK;
    }
    ti__free(al, prod, sizeof(int) * ((size_t)nv + 1));
    return ret;
}

TI__PRIVATE ti_status ti__model_check_const(ti_model *m, const char *what, ti_dtype dt, int rank,
                                            const int64_t *dims, size_t *bytes, ti_error *err) {
    if (rank < 0 || rank > m->desc.max_rank)
        return ti__fail(err, TI_ERR_BAD_MODEL, m->name, "tensor '%s' has rank %d (limit %d)",
                        what, rank, m->desc.max_rank);
    for (int i = 0; i < rank; i++)
        if (dims[i] < 0)
            return ti__fail(err, TI_ERR_BAD_MODEL, m->name, "tensor '%s' has negative dim %lld",
                            what, (long long)dims[i]);
    size_t n; /* no dim wrapped to fit a 32-bit size_t: 4 bytes never pass for 2^32 + 1 floats */
    if (!ti__dims_numel(rank, dims, &n))
        return ti__fail(err, TI_ERR_OUT_OF_MEMORY, m->name,
                        "tensor '%s' is larger than this host can address (limit %llu bytes)",
                        what, (unsigned long long)m->desc.max_tensor_bytes);
    size_t b;
    if (!ti__mul_size(n, ti_dtype_size(dt), &b) || (uint64_t)b > m->desc.max_tensor_bytes)
        return ti__fail(err, TI_ERR_OUT_OF_MEMORY, m->name,
                        "tensor '%s' needs more than the limit of %llu bytes", what,
                        (unsigned long long)m->desc.max_tensor_bytes);
    if (m->const_bytes + b > m->desc.max_total_bytes)
        return ti__fail(err, TI_ERR_OUT_OF_MEMORY, m->name,
                        "constants exceed the limit of %llu bytes at tensor '%s'",
                        (unsigned long long)m->desc.max_total_bytes, what);
    m->const_bytes += b;
    *bytes = b;
    return TI_OK;
}

/* ---- attributes ---- */
TI__PRIVATE const ti__attr *ti__attr_get(const ti__node *n, const char *name) {
    for (int i = 0; i < n->n_attrs; i++)
        if (n->attrs[i].name != NULL && strcmp(n->attrs[i].name, name) == 0) return &n->attrs[i];
    return NULL;
}
TI__PRIVATE int64_t ti__attr_i(const ti__node *n, const char *name, int64_t def) {
    const ti__attr *a = ti__attr_get(n, name);
    if (a == NULL) return def;
    if (a->type == TI__ATTR_INT) return a->i;
    if (a->type == TI__ATTR_FLOAT) return (int64_t)a->f;
    return def;
}
TI__PRIVATE float ti__attr_f(const ti__node *n, const char *name, float def) {
    const ti__attr *a = ti__attr_get(n, name);
    if (a == NULL) return def;
    if (a->type == TI__ATTR_FLOAT) return a->f;
    if (a->type == TI__ATTR_INT) return (float)a->i;
    return def;
}
TI__PRIVATE const char *ti__attr_s(const ti__node *n, const char *name, const char *def) {
    const ti__attr *a = ti__attr_get(n, name);
    return a != NULL && a->type == TI__ATTR_STRING ? a->s : def;
}
TI__PRIVATE const int64_t *ti__attr_ints(const ti__node *n, const char *name, int *count) {
    const ti__attr *a = ti__attr_get(n, name);
    if (a == NULL || a->type != TI__ATTR_INTS) {
        *count = 0;
        return NULL;
    }
    *count = a->count;
    return a->ints;
}
TI__PRIVATE const float *ti__attr_floats(const ti__node *n, const char *name, int *count) {
    const ti__attr *a = ti__attr_get(n, name);
    if (a == NULL || a->type != TI__ATTR_FLOATS) {
        *count = 0;
        return NULL;
    }
    *count = a->count;
    return a->floats;
}
