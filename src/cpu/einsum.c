/* Einsum: parses the equation (explicit or implicit output, '...', repeated labels within an
 * operand for diagonals, numpy-style broadcasting of size-1 dims), then either a general
 * odometer over every label (any operand count, any dtype; accumulates in double or int64) or,
 * for two float32 operands, a batched-matmul loop over tabulated offsets (batch, m, n and
 * summed label groups). Relies on internal.h and core/tensor.c. Must not allocate in run: the
 * offset tables of the fast path live in scratch. */

#define TI__EIN_MAX_OPS 16
#define TI__EIN_LETTERS 52                             /* 'A'-'Z' = 0-25, 'a'-'z' = 26-51 */
#define TI__EIN_LABELS (TI__EIN_LETTERS + TI_MAX_DIMS) /* then the ellipsis dims */
#define TI__EIN_MAX_EQ 512

/* The parsed equation bound to the input shapes. Labels are codes in [0, TI__EIN_LABELS):
 * letters in ASCII order (the implicit output sorts by it), then the broadcast ellipsis dims. */
typedef struct ti__ein {
    int n_ops;
    int used[TI__EIN_LABELS];  /* label appears in some operand */
    int64_t size[TI__EIN_LABELS];
    int64_t lstr[TI__EIN_MAX_OPS][TI__EIN_LABELS]; /* element stride of a label in an operand:
                                                      the sum over its dims (diagonals), 0
                                                      where absent or broadcast */
    int in_op[TI__EIN_MAX_OPS][TI__EIN_LABELS];
    int n_out, out[TI__EIN_LABELS];
    int n_sum, sum[TI__EIN_LABELS];
} ti__ein;

TI__PRIVATE char ti__ein_char(int c) { return (char)(c < 26 ? 'A' + c : 'a' + (c - 26)); }

TI__PRIVATE int ti__ein_code(char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return 26 + (c - 'a');
    return -1;
}

/* Parses one term ("bij", "...ii") into codes; -2 marks the ellipsis. Returns the count or
 * -1 when malformed. */
TI__PRIVATE int ti__ein_term(const char *s, size_t len, int *codes) {
    int n = 0, ell = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '.') {
            if (ell || i + 2 >= len || s[i + 1] != '.' || s[i + 2] != '.') return -1;
            ell = 1;
            codes[n++] = -2;
            i += 2;
            continue;
        }
        int c = ti__ein_code(s[i]);
        if (c < 0 || n >= TI_MAX_DIMS + 1) return -1;
        codes[n++] = c;
    }
    return n;
}

TI__PRIVATE int ti__ein_parse(ti__kctx *k, ti__ein *e) {
    const char *eq = ti__attr_s(k->node, "equation", NULL);
    if (eq == NULL) return ti__kfail(k, TI_ERR_BAD_MODEL, "attribute 'equation' is required");
    char buf[TI__EIN_MAX_EQ];
    size_t len = 0;
    for (const char *c = eq; *c; c++) {
        if (*c == ' ' || *c == '\t') continue;
        if (ti__ein_code(*c) < 0 && *c != ',' && *c != '.' && *c != '-' && *c != '>')
            return ti__kfail(k, TI_ERR_BAD_MODEL, "bad character '%c' in equation '%s'", *c, eq);
        if (len + 1 >= sizeof buf)
            return ti__kfail(k, TI_ERR_UNSUPPORTED, "equation '%.40s...' is too long", eq);
        buf[len++] = *c;
    }
    buf[len] = 0;
    const char *arrow = strstr(buf, "->");
    size_t lhs_len = arrow ? (size_t)(arrow - buf) : len;
    for (size_t i = 0; i < len; i++) /* '-' and '>' only as the one arrow */
        if ((buf[i] == '-' || buf[i] == '>') && !(arrow && (buf + i == arrow || buf + i == arrow + 1)))
            return ti__kfail(k, TI_ERR_BAD_MODEL, "misplaced '%c' in equation '%s'", buf[i], eq);
    memset(e, 0, sizeof *e);
    e->n_ops = k->n_in;
    if (k->n_in < 1 || k->n_in > TI__EIN_MAX_OPS)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "%d operands (1 to %d supported)", k->n_in,
                         TI__EIN_MAX_OPS);
    /* terms of the left side */
    int codes[TI__EIN_MAX_OPS][TI_MAX_DIMS + 1], nc[TI__EIN_MAX_OPS];
    int op = 0, count[TI__EIN_LABELS] = {0}, ell_rank = 0;
    size_t start = 0;
    for (size_t i = 0; i <= lhs_len; i++) {
        if (i < lhs_len && buf[i] != ',') continue;
        if (op >= k->n_in)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "equation '%s' has more terms than the %d inputs",
                             eq, k->n_in);
        nc[op] = ti__ein_term(buf + start, i - start, codes[op]);
        if (nc[op] < 0)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "malformed term %d in equation '%s'", op, eq);
        op++;
        start = i + 1;
    }
    if (op != k->n_in)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "equation '%s' has %d terms for %d inputs", eq, op,
                         k->n_in);
    for (int o = 0; o < e->n_ops; o++) {
        const ti_tensor *t = k->in[o];
        if (t == NULL) return ti__kfail(k, TI_ERR_BAD_MODEL, "input %d is missing", o);
        int letters = 0, has_ell = 0;
        for (int j = 0; j < nc[o]; j++) {
            if (codes[o][j] == -2) has_ell = 1;
            else letters++;
        }
        int ne = t->rank - letters;
        if (has_ell ? ne < 0 : ne != 0)
            return ti__kfail(k, TI_ERR_BAD_MODEL,
                             "operand %d has rank %d but its term in '%s' names %d dims", o,
                             t->rank, eq, letters);
        if (has_ell && ne > ell_rank) ell_rank = ne;
    }
    /* bind dims to labels: sizes must agree or be 1 (broadcast, as numpy) */
    for (int o = 0; o < e->n_ops; o++) {
        const ti_tensor *t = k->in[o];
        int64_t str[TI_MAX_DIMS];
        ti__strides(t->rank, t->shape, str);
        int letters = 0;
        for (int j = 0; j < nc[o]; j++) letters += codes[o][j] != -2;
        int ne = t->rank - letters, d = 0;
        for (int j = 0; j < nc[o]; j++) {
            int lab[TI_MAX_DIMS], nl = 0;
            if (codes[o][j] == -2)
                for (int q = 0; q < ne; q++) lab[nl++] = TI__EIN_LETTERS + ell_rank - ne + q;
            else lab[nl++] = codes[o][j];
            for (int q = 0; q < nl; q++, d++) {
                int c = lab[q];
                int64_t s = t->shape[d];
                if (!e->used[c] || e->size[c] == 1) e->size[c] = s;
                else if (s != e->size[c] && s != 1) {
                    if (c < TI__EIN_LETTERS)
                        return ti__kfail(k, TI_ERR_BAD_MODEL,
                                         "label '%c' is %lld in operand %d but %lld before, "
                                         "equation '%s'", ti__ein_char(c), (long long)s, o, (long long)e->size[c], eq);
                    return ti__kfail(k, TI_ERR_BAD_MODEL,
                                     "'...' dims of operand %d do not broadcast (%lld vs %lld), "
                                     "equation '%s'", o, (long long)s, (long long)e->size[c], eq);
                }
                e->used[c] = 1;
                e->in_op[o][c] = 1;
                if (c < TI__EIN_LETTERS) count[c]++;
            }
        }
    }
    /* strides, now that broadcast sizes are known */
    for (int o = 0; o < e->n_ops; o++) {
        const ti_tensor *t = k->in[o];
        int64_t str[TI_MAX_DIMS];
        ti__strides(t->rank, t->shape, str);
        int letters = 0;
        for (int j = 0; j < nc[o]; j++) letters += codes[o][j] != -2;
        int ne = t->rank - letters, d = 0;
        for (int j = 0; j < nc[o]; j++) {
            int first = codes[o][j] == -2 ? TI__EIN_LETTERS + ell_rank - ne : codes[o][j];
            int n = codes[o][j] == -2 ? ne : 1;
            for (int q = 0; q < n; q++, d++)
                if (t->shape[d] != 1 || e->size[first + q] == 1)
                    e->lstr[o][first + q] += str[d];
        }
    }
    /* output labels */
    if (arrow) {
        int oc[TI_MAX_DIMS + 1];
        const char *rhs = arrow + 2;
        int n = ti__ein_term(rhs, strlen(rhs), oc);
        if (n < 0) return ti__kfail(k, TI_ERR_BAD_MODEL, "malformed output in equation '%s'", eq);
        int seen[TI__EIN_LABELS] = {0}, out_ell = 0;
        for (int j = 0; j < n; j++) {
            if (oc[j] == -2) {
                out_ell = 1;
                for (int q = 0; q < ell_rank; q++) e->out[e->n_out++] = TI__EIN_LETTERS + q;
                continue;
            }
            int c = oc[j];
            if (!e->used[c])
                return ti__kfail(k, TI_ERR_BAD_MODEL,
                                 "output label '%c' of equation '%s' is in no input",
                                 ti__ein_char(c), eq);
            if (seen[c])
                return ti__kfail(k, TI_ERR_BAD_MODEL,
                                 "output label '%c' repeated in equation '%s'",
                                 ti__ein_char(c), eq);
            seen[c] = 1;
            e->out[e->n_out++] = c;
        }
        if (ell_rank > 0 && !out_ell)
            return ti__kfail(k, TI_ERR_BAD_MODEL,
                             "equation '%s' drops the '...' dims from its output", eq);
    } else { /* implicit: the '...' dims, then labels seen once, in ASCII order */
        for (int q = 0; q < ell_rank; q++) e->out[e->n_out++] = TI__EIN_LETTERS + q;
        for (int c = 0; c < TI__EIN_LETTERS; c++)
            if (count[c] == 1) e->out[e->n_out++] = c;
    }
    if (e->n_out > TI_MAX_DIMS)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "output of rank %d (limit %d)", e->n_out,
                         TI_MAX_DIMS);
    int in_out[TI__EIN_LABELS] = {0};
    for (int j = 0; j < e->n_out; j++) in_out[e->out[j]] = 1;
    for (int c = 0; c < TI__EIN_LABELS; c++)
        if (e->used[c] && !in_out[c]) e->sum[e->n_sum++] = c;
    return TI_OK;
}

TI__PRIVATE int ti__einsum_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    ti_dtype dt = k->in[0]->dtype;
    for (int i = 0; i < k->n_in; i++) {
        if (k->in[i] == NULL) continue;
        if (k->in[i]->dtype != dt)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "input %d is %s, input 0 is %s", i,
                             ti_dtype_name(k->in[i]->dtype), ti_dtype_name(dt));
    }
    if (!ti__dtype_is_float(dt) && !ti__dtype_is_int(dt))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "input dtype %s is not supported",
                         ti_dtype_name(dt));
    ti__ein e;
    int st = ti__ein_parse(k, &e);
    if (st != TI_OK) return st;
    int64_t dims[TI_MAX_DIMS];
    for (int j = 0; j < e.n_out; j++) dims[j] = e.size[e.out[j]];
    if (!ti__set_shape(k->out[0], dt, e.n_out, dims))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid output shape");
    return TI_OK;
}

/* ---- fast path: two float32 operands as a batched matmul -------------------------------- */

/* Label groups of A (operand 0), B (operand 1) and the output O: batch = in A, B and O;
 * m = in A and O only; n = in B and O only; k = summed (absent operands contribute stride 0).
 * Per group, a table of (A, B, O) offsets per combination of its labels. */
enum { TI__EIN_G_BATCH, TI__EIN_G_M, TI__EIN_G_N, TI__EIN_G_K, TI__EIN_G_COUNT };

typedef struct ti__ein_groups {
    int nl[TI__EIN_G_COUNT], lab[TI__EIN_G_COUNT][TI__EIN_LABELS];
    size_t count[TI__EIN_G_COUNT];
    int64_t ostr[TI__EIN_LABELS];
} ti__ein_groups;

TI__PRIVATE int ti__ein_grouping(const ti__ein *e, ti__ein_groups *g) {
    memset(g, 0, sizeof *g);
    int64_t s = 1;
    for (int j = e->n_out - 1; j >= 0; j--) {
        g->ostr[e->out[j]] = s;
        s *= e->size[e->out[j]];
    }
    for (int j = 0; j < e->n_out; j++) {
        int c = e->out[j], a = e->in_op[0][c], b = e->in_op[1][c];
        int grp = a && b ? TI__EIN_G_BATCH : a ? TI__EIN_G_M : TI__EIN_G_N;
        g->lab[grp][g->nl[grp]++] = c;
    }
    for (int j = 0; j < e->n_sum; j++) g->lab[TI__EIN_G_K][g->nl[TI__EIN_G_K]++] = e->sum[j];
    for (int q = 0; q < TI__EIN_G_COUNT; q++) {
        g->count[q] = 1;
        for (int j = 0; j < g->nl[q]; j++) {
            if (!ti__mul_size(g->count[q], (size_t)e->size[g->lab[q][j]], &g->count[q])) return 0;
        }
    }
    return 1;
}

TI__PRIVATE int ti__ein_fast_ok(const ti__kctx *k) {
    return k->n_in == 2 && k->in[0]->dtype == TI_DTYPE_F32;
}

TI__PRIVATE size_t ti__einsum_scratch(ti__kctx *k) {
    if (!ti__ein_fast_ok(k)) return 0;
    ti__ein e;
    ti__ein_groups g;
    if (ti__ein_parse(k, &e) != TI_OK) return 0;
    if (!ti__ein_grouping(&e, &g)) return SIZE_MAX;
    size_t total = 0, b;
    for (int q = 0; q < TI__EIN_G_COUNT; q++)
        if (!ti__mul_size(g.count[q], 3 * sizeof(int64_t), &b) || !ti__add_size(total, b, &total))
            return SIZE_MAX;
    return total;
}

/* Fills tab[3 * i + {0,1,2}] with the A, B and O offsets of combination i of a group. */
TI__PRIVATE void ti__ein_table(const ti__ein *e, const ti__ein_groups *g, int q, int64_t *tab) {
    int64_t idx[TI__EIN_LABELS] = {0}, off[3] = {0, 0, 0};
    int nl = g->nl[q];
    const int *lab = g->lab[q];
    for (size_t i = 0; i < g->count[q]; i++) {
        tab[3 * i] = off[0];
        tab[3 * i + 1] = off[1];
        tab[3 * i + 2] = off[2];
        for (int j = nl - 1; j >= 0; j--) {
            int c = lab[j];
            off[0] += e->lstr[0][c];
            off[1] += e->lstr[1][c];
            off[2] += g->ostr[c];
            if (++idx[j] < e->size[c]) break;
            off[0] -= e->lstr[0][c] * e->size[c];
            off[1] -= e->lstr[1][c] * e->size[c];
            off[2] -= g->ostr[c] * e->size[c];
            idx[j] = 0;
        }
    }
}

typedef struct ti__ein_job {
    const float *a, *b;
    float *o;
    const int64_t *tb, *tm, *tn, *tk;
    size_t m, n, kk;
    int64_t bstep, ostep; /* n offsets are j * step in B and O; 0 when not affine */
    int kdot;             /* k offsets are q in both A and B (contiguous summed labels) */
} ti__ein_job;

/* rows [begin, end) of batch * m: O[b, i, :] = sum over k of A[b, i, k] * B[b, k, :] */
TI__PRIVATE void ti__ein_rows(void *ctx, size_t begin, size_t end) {
    const ti__ein_job *j = (const ti__ein_job *)ctx;
    for (size_t r = begin; r < end; r++) {
        size_t bi = r / j->m, mi = r % j->m;
        const int64_t *tb = j->tb + 3 * bi, *tm = j->tm + 3 * mi;
        float *o = j->o + tb[2] + tm[2];
        if (j->kdot) { /* summed labels contiguous in A and B: dot products */
            const float *a = j->a + tb[0] + tm[0];
            for (size_t n = 0; n < j->n; n++) {
                const float *b = j->b + tb[1] + j->tn[3 * n + 1];
                float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0}; /* 8 lanes: vectorisable */
                size_t q = 0;
                for (; q + 8 <= j->kk; q += 8)
                    for (int l = 0; l < 8; l++) acc[l] += a[q + l] * b[q + l];
                for (; q < j->kk; q++) acc[0] += a[q] * b[q];
                o[j->tn[3 * n + 2]] = ((acc[0] + acc[4]) + (acc[1] + acc[5])) +
                                      ((acc[2] + acc[6]) + (acc[3] + acc[7]));
            }
        } else if (j->ostep == 1 && j->bstep == 1) {
            for (size_t n = 0; n < j->n; n++) o[n] = 0.0f;
            for (size_t q = 0; q < j->kk; q++) {
                const int64_t *tk = j->tk + 3 * q;
                float a = j->a[tb[0] + tm[0] + tk[0]];
                const float *b = j->b + tb[1] + tk[1];
                for (size_t n = 0; n < j->n; n++) o[n] += a * b[n];
            }
        } else {
            for (size_t n = 0; n < j->n; n++) o[j->tn[3 * n + 2]] = 0.0f;
            for (size_t q = 0; q < j->kk; q++) {
                const int64_t *tk = j->tk + 3 * q;
                float a = j->a[tb[0] + tm[0] + tk[0]];
                const float *b = j->b + tb[1] + tk[1];
                for (size_t n = 0; n < j->n; n++) o[j->tn[3 * n + 2]] += a * b[j->tn[3 * n + 1]];
            }
        }
    }
}

/* Returns TI_OK when done, TI_ERR_UNSUPPORTED (no message) when the scratch does not fit and
 * the general path must run instead. */
TI__PRIVATE ti_status ti__ein_fast(ti__kctx *k, const ti__ein *e) {
    ti__ein_groups g;
    if (!ti__ein_grouping(e, &g)) return TI_ERR_UNSUPPORTED;
    int64_t *tab[TI__EIN_G_COUNT];
    int64_t *p = (int64_t *)k->scratch;
    size_t need = 0;
    for (int q = 0; q < TI__EIN_G_COUNT; q++) need += g.count[q] * 3 * sizeof(int64_t);
    if (k->scratch == NULL || k->scratch_bytes < need) return TI_ERR_UNSUPPORTED;
    for (int q = 0; q < TI__EIN_G_COUNT; q++) {
        tab[q] = p;
        ti__ein_table(e, &g, q, p);
        p += 3 * g.count[q];
    }
    ti__ein_job j;
    j.a = (const float *)k->in[0]->data;
    j.b = (const float *)k->in[1]->data;
    j.o = (float *)k->out[0]->data;
    j.tb = tab[TI__EIN_G_BATCH];
    j.tm = tab[TI__EIN_G_M];
    j.tn = tab[TI__EIN_G_N];
    j.tk = tab[TI__EIN_G_K];
    j.m = g.count[TI__EIN_G_M];
    j.n = g.count[TI__EIN_G_N];
    j.kk = g.count[TI__EIN_G_K];
    j.bstep = j.ostep = 1; /* contiguous n in B and O: the vectorisable loop */
    for (size_t n = 0; n < j.n; n++)
        if (j.tn[3 * n + 1] != (int64_t)n || j.tn[3 * n + 2] != (int64_t)n) j.bstep = j.ostep = 0;
    j.kdot = j.kk > 1;
    for (size_t q = 0; q < j.kk && j.kdot; q++)
        if (j.tk[3 * q] != (int64_t)q || j.tk[3 * q + 1] != (int64_t)q) j.kdot = 0;
    if (j.bstep == 1 && j.kk < 16) j.kdot = 0; /* short sums: the row form vectorises better */
    size_t rows = g.count[TI__EIN_G_BATCH] * j.m;
    if (rows == 0 || j.n == 0) return TI_OK;
    size_t work = j.n * (j.kk ? j.kk : 1);
    ti__parallel_for(k->tp, rows, TI__MAX((size_t)1, (size_t)32768 / work), ti__ein_rows, &j);
    return TI_OK;
}

/* ---- general path: an odometer over the output labels, then the summed ones ----------- */

TI__PRIVATE ti_status ti__einsum_run(ti__kctx *k) {
    ti__ein e;
    int st = ti__ein_parse(k, &e);
    if (st != TI_OK) return (ti_status)st;
    ti_tensor *y = k->out[0];
    size_t n_out = ti__numel(y);
    if (n_out == 0) return TI_OK;
    if (ti__ein_fast_ok(k) && ti__ein_fast(k, &e) == TI_OK) return TI_OK;
    int order[TI__EIN_LABELS], nl = 0;
    for (int j = 0; j < e.n_out; j++) order[nl++] = e.out[j];
    for (int j = 0; j < e.n_sum; j++) order[nl++] = e.sum[j];
    size_t n_sum = 1;
    for (int j = 0; j < e.n_sum; j++) n_sum *= (size_t)e.size[e.sum[j]];
    int64_t idx[TI__EIN_LABELS] = {0};
    size_t off[TI__EIN_MAX_OPS] = {0};
    int is_f = ti__dtype_is_float(y->dtype), nops = e.n_ops;
    for (size_t o = 0; o < n_out; o++) {
        double facc = 0.0;
        uint64_t iacc = 0; /* integer math wraps, as numpy's */
        for (size_t s = 0; s < n_sum; s++) {
            if (is_f) {
                double v = 1.0;
                for (int q = 0; q < nops; q++) {
                    const ti_tensor *t = k->in[q];
                    v *= t->dtype == TI_DTYPE_F32 ? (double)((const float *)t->data)[off[q]]
                                                  : ti__get_f64(t, off[q]);
                }
                facc += v;
            } else {
                uint64_t v = 1;
                for (int q = 0; q < nops; q++) v *= (uint64_t)ti__get_i64(k->in[q], off[q]);
                iacc += v;
            }
            for (int j = nl - 1; j >= e.n_out; j--) { /* next summed combination */
                int c = order[j];
                for (int q = 0; q < nops; q++) off[q] += (size_t)e.lstr[q][c];
                if (++idx[j] < e.size[c]) break;
                for (int q = 0; q < nops; q++) off[q] -= (size_t)(e.lstr[q][c] * e.size[c]);
                idx[j] = 0;
            }
        }
        if (y->dtype == TI_DTYPE_F32) ((float *)y->data)[o] = (float)facc;
        else if (is_f) ti__set_f64(y, o, facc);
        else ti__set_i64(y, o, (int64_t)iacc);
        for (int j = e.n_out - 1; j >= 0; j--) { /* next output element */
            int c = order[j];
            for (int q = 0; q < nops; q++) off[q] += (size_t)e.lstr[q][c];
            if (++idx[j] < e.size[c]) break;
            for (int q = 0; q < nops; q++) off[q] -= (size_t)(e.lstr[q][c] * e.size[c]);
            idx[j] = 0;
        }
    }
    return TI_OK;
}

TI__PRIVATE const ti__op ti__ops_einsum[] = {
    {"Einsum", ti__einsum_shape, ti__einsum_run, ti__einsum_scratch, 0},
    {NULL, NULL, NULL, NULL, 0}
};
