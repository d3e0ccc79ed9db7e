/* ---- tuning: per-node launch settings chosen by measurement ---------------------------
 * tools/tinyinfer-tune measures the candidate settings of every node on a device and
 * writes the fastest as a text file that sessions read through desc.tuning_file (or the
 * text itself, desc.tuning):
 *
 *   tinyinfer-tuning 1
 *   # anything after '#' at the start of a line is a comment
 *   device NVIDIA CUDA / NVIDIA H100 80GB HBM3     (what it was tuned on; informational)
 *   model 3f1c...                                  (informational)
 *   node conv_12 conv=gemm splits=4
 *   node relu%207 wg=64
 *
 * A node line names a planned node: by its name (ti_node_info.name) with bytes <= ' ', '%',
 * '#' and bytes >= 0x7f written as %XX, or as #I, its index in the plan (for nameless and
 * duplicate names), then key=value settings: conv=gemm|direct, splits=N (k splits of
 * the conv GEMM), tile=16|32|64 (its output block edge), wg=N (local size of the node's
 * kernels along dim 0); "auto" is the
 * library's own choice. ti_node_info.tunables lists a node's candidates. Lines naming no
 * node of the plan are ignored (a file tuned for one input size still loads for another);
 * a malformed line fails the session with its line number. */

#define TI__TUNE_MAX_BYTES (1u << 20)

TI__PRIVATE int ti__tune_hex(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* Compares a %XX-escaped token with a raw name. */
TI__PRIVATE int ti__tune_name_eq(const char *tok, size_t len, const char *name) {
    size_t i = 0;
    for (; i < len; name++) {
        int c = (unsigned char)tok[i];
        if (c == '%') {
            if (i + 2 >= len) return 0;
            unsigned v = 0;
            for (int k = 1; k <= 2; k++) {
                int h = (unsigned char)tok[i + (size_t)k];
                v = v * 16u + (unsigned)(h <= '9' ? h - '0' : (h | 32) - 'a' + 10);
            }
            c = (int)v;
            i += 3;
        } else {
            i++;
        }
        if (*name == 0 || (unsigned char)*name != (unsigned)c) return 0;
    }
    return *name == 0;
}

/* Next whitespace-separated token of [*p, end) on the current line; 0 at the line's end. */
TI__PRIVATE int ti__tune_token(const char **p, const char *end, const char **tok, size_t *len) {
    const char *q = *p;
    while (q < end && (*q == ' ' || *q == '\t' || *q == '\r')) q++;
    *tok = q;
    while (q < end && *q != ' ' && *q != '\t' && *q != '\r' && *q != '\n') q++;
    *len = (size_t)(q - *tok);
    *p = q;
    return *len > 0;
}

TI__PRIVATE int ti__tune_tok_is(const char *tok, size_t len, const char *word) {
    return strlen(word) == len && memcmp(tok, word, len) == 0;
}

/* "auto" (0) or a positive integer up to 65536; -1 when neither. */
TI__PRIVATE int64_t ti__tune_number(const char *v, size_t len) {
    if (ti__tune_tok_is(v, len, "auto")) return 0;
    if (len == 0 || len > 6) return -1;
    int64_t x = 0;
    for (size_t i = 0; i < len; i++) {
        if (v[i] < '0' || v[i] > '9') return -1;
        x = x * 10 + (v[i] - '0');
    }
    return x >= 1 && x <= 65536 ? x : -1;
}

/* 1 when the token is #I with I == index. */
TI__PRIVATE int ti__tune_index_eq(const char *tok, size_t len, int index) {
    if (len < 2 || tok[0] != '#') return 0;
    int64_t v = 0;
    for (size_t i = 1; i < len; i++) {
        if (tok[i] < '0' || tok[i] > '9' || v > 100000000) return 0;
        v = v * 10 + (tok[i] - '0');
    }
    return v == index;
}

/* Checks one setting token; returns a reason, or NULL when it is fine. */
TI__PRIVATE const char *ti__tune_check_setting(const char *tok, size_t len) {
    const char *eq = (const char *)memchr(tok, '=', len);
    if (eq == NULL) return "expected key=value";
    size_t kl = (size_t)(eq - tok), vl = len - kl - 1;
    const char *v = eq + 1;
    if (ti__tune_tok_is(tok, kl, "conv")) {
        if (ti__tune_tok_is(v, vl, "gemm") || ti__tune_tok_is(v, vl, "direct") ||
            ti__tune_tok_is(v, vl, "auto"))
            return NULL;
        return "conv must be gemm, direct or auto";
    }
    if (ti__tune_tok_is(tok, kl, "wg") || ti__tune_tok_is(tok, kl, "splits"))
        return ti__tune_number(v, vl) >= 0 ? NULL : "value must be auto or a number in 1..65536";
    if (ti__tune_tok_is(tok, kl, "tile")) {
        int64_t t = ti__tune_number(v, vl);
        return t == 0 || t == 16 || t == 32 || t == 64 ? NULL : "tile must be 16, 32, 64 or auto";
    }
    return "unknown key (known: conv, splits, tile, wg)";
}

/* Validates the text: the header, then comment, device, model and node lines. */
TI__PRIVATE ti_status ti__tune_validate(const char *text, size_t n, const char *src, ti_error *err) {
    const char *p = text, *end = text + n;
    int line = 0;
    while (p < end) {
        const char *eol = (const char *)memchr(p, '\n', (size_t)(end - p));
        if (eol == NULL) eol = end;
        line++;
        const char *q = p, *tok;
        size_t len;
        const char *why = NULL;
        if (memchr(p, 0, (size_t)(eol - p)) != NULL) {
            why = "NUL byte";
        } else if (line == 1) {
            const char *t2;
            size_t l2;
            if (!ti__tune_token(&q, eol, &tok, &len) || !ti__tune_tok_is(tok, len, "tinyinfer-tuning"))
                why = "not a tuning file (the first line must be 'tinyinfer-tuning 1')";
            else if (!ti__tune_token(&q, eol, &t2, &l2) || !ti__tune_tok_is(t2, l2, "1"))
                why = "unsupported version (this library reads version 1)";
        } else if (ti__tune_token(&q, eol, &tok, &len) && tok[0] != '#' &&
                   !ti__tune_tok_is(tok, len, "device") && !ti__tune_tok_is(tok, len, "model")) {
            if (!ti__tune_tok_is(tok, len, "node")) {
                why = "unknown line (expected node, device, model or #)";
            } else if (!ti__tune_token(&q, eol, &tok, &len)) {
                why = "node line without a name";
            } else {
                if (tok[0] == '#' && (len > 10 || !ti__tune_index_eq(tok, len, atoi(tok + 1))))
                    why = "bad node index (#I, or escape '#' as %23)";
                for (size_t i = 0; i < len && why == NULL; i++)
                    if (tok[i] == '%' && (i + 2 >= len || !ti__tune_hex(tok[i + 1]) ||
                                          !ti__tune_hex(tok[i + 2])))
                        why = "bad %XX escape in the node name";
                while (why == NULL && ti__tune_token(&q, eol, &tok, &len))
                    why = ti__tune_check_setting(tok, len);
            }
        }
        if (why != NULL)
            return ti__fail(err, TI_ERR_INVALID_ARGUMENT, src, "tuning line %d: %s", line, why);
        p = eol < end ? eol + 1 : end;
    }
    if (line == 0) return ti__fail(err, TI_ERR_INVALID_ARGUMENT, src, "tuning: empty");
    return TI_OK;
}

/* Reads desc.tuning, else desc.tuning_file, else $TINYINFER_TUNING_FILE into s->tune. */
TI__PRIVATE ti_status ti__tune_load(ti_session *s, ti_error *err) {
    const char *text = s->desc.tuning, *path = s->desc.tuning_file;
    if (text == NULL && path == NULL) path = getenv("TINYINFER_TUNING_FILE");
    if (text == NULL && (path == NULL || path[0] == 0)) return TI_OK;
    size_t n = 0;
    char *buf = NULL;
    const char *src = text != NULL ? "<desc.tuning>" : path;
    if (text != NULL) {
        n = strlen(text);
        if (n > TI__TUNE_MAX_BYTES) return ti__fail(err, TI_ERR_INVALID_ARGUMENT, src, "tuning: over 1 MiB");
        buf = (char *)ti__malloc(&s->al, n + 1);
        if (buf == NULL) return ti__fail(err, TI_ERR_OUT_OF_MEMORY, src, "out of memory reading tuning");
        memcpy(buf, text, n);
    } else {
#ifndef TI_NO_STDIO
        FILE *f = fopen(path, "rb");
        if (f == NULL) return ti__fail(err, TI_ERR_IO, path, "cannot open the tuning file");
        buf = (char *)ti__malloc(&s->al, TI__TUNE_MAX_BYTES + 1);
        if (buf == NULL) {
            fclose(f);
            return ti__fail(err, TI_ERR_OUT_OF_MEMORY, path, "out of memory reading tuning");
        }
        n = fread(buf, 1, TI__TUNE_MAX_BYTES + 1, f);
        int bad = ferror(f);
        fclose(f);
        if (bad || n > TI__TUNE_MAX_BYTES) {
            ti__free(&s->al, buf, TI__TUNE_MAX_BYTES + 1);
            return ti__fail(err, TI_ERR_IO, path, bad ? "cannot read the tuning file" : "tuning: over 1 MiB");
        }
        /* keep only what was read */
        char *fit = (char *)ti__malloc(&s->al, n + 1);
        if (fit != NULL) memcpy(fit, buf, n);
        ti__free(&s->al, buf, TI__TUNE_MAX_BYTES + 1);
        buf = fit;
        if (buf == NULL) return ti__fail(err, TI_ERR_OUT_OF_MEMORY, path, "out of memory reading tuning");
#else
        return ti__fail(err, TI_ERR_UNSUPPORTED, path, "built with TI_NO_STDIO: use desc.tuning");
#endif
    }
    buf[n] = 0;
    ti_status st = ti__tune_validate(buf, n, src, err);
    if (st != TI_OK) {
        ti__free(&s->al, buf, n + 1);
        return st;
    }
    s->tune = buf;
    s->tune_len = n;
    return TI_OK;
}

TI__PRIVATE void ti__tune_free(ti_session *s) {
    if (s->tune != NULL) ti__free(&s->al, s->tune, s->tune_len + 1);
    s->tune = NULL;
    s->tune_len = 0;
}

/* The settings of the last line naming node `index` (its name, or #index):
 * [*set, *set + *len); 0 when none. */
TI__PRIVATE int ti__tune_find(const ti_session *s, int index, const char *name, const char **set,
                              size_t *len) {
    if (s->tune == NULL) return 0; /* (NULL + 0 is undefined) */
    const char *p = s->tune, *end = s->tune + s->tune_len;
    int found = 0;
    while (p < end) {
        const char *eol = (const char *)memchr(p, '\n', (size_t)(end - p));
        if (eol == NULL) eol = end;
        const char *q = p, *tok;
        size_t tl;
        if (ti__tune_token(&q, eol, &tok, &tl) && ti__tune_tok_is(tok, tl, "node") &&
            ti__tune_token(&q, eol, &tok, &tl) &&
            (tok[0] == '#' ? ti__tune_index_eq(tok, tl, index) : ti__tune_name_eq(tok, tl, name))) {
            while (q < eol && (*q == ' ' || *q == '\t')) q++;
            const char *e = eol;
            while (e > q && (e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t')) e--;
            *set = q;
            *len = (size_t)(e - q);
            found = 1;
        }
        p = eol < end ? eol + 1 : end;
    }
    return found;
}

/* The value of key in a node's settings: "auto" and absent give 0 and return 0. For
 * conv: 1 gemm, 2 direct. */
TI__PRIVATE int64_t ti__tune_get(const char *set, size_t len, const char *key) {
    const char *p = set, *end = set + len, *tok;
    size_t tl, kl = strlen(key);
    int64_t v = 0;
    while (ti__tune_token(&p, end, &tok, &tl)) {
        if (tl <= kl || tok[kl] != '=' || memcmp(tok, key, kl) != 0) continue;
        const char *val = tok + kl + 1;
        size_t vl = tl - kl - 1;
        if (strcmp(key, "conv") == 0) v = ti__tune_tok_is(val, vl, "gemm") ? 1 : ti__tune_tok_is(val, vl, "direct") ? 2 : 0;
        else v = ti__tune_number(val, vl);
        if (v < 0) v = 0;
    }
    return v;
}
