/* ONNX reader: maps a serialized ModelProto onto the IR (values, nodes, attributes, graph
 * inputs and outputs), validates it (every node input defined, one producer per value, no
 * cycles) and leaves the nodes in topological order; also decodes lone TensorProto files.
 * Relies on formats/protobuf.c for the wire format and graph/ir.c for the builders. Must
 * not trust any count or length in the file, follow subgraphs, or read files outside the
 * model's directory. Everything it keeps lives in the model's pool or arrays. */
#ifndef TI_NO_ONNX

/* Per-node limits: far above any real model, low enough that int arithmetic is safe. */
#define TI__OX_MAX_NODE_IO 65536
#define TI__OX_MAX_ATTRS 4096

/* Message kinds, for naming fields in error messages. */
enum { TI__OX_MODEL, TI__OX_GRAPH, TI__OX_NODE, TI__OX_ATTR, TI__OX_TENSOR, TI__OX_OTHER };

TI__PRIVATE const char *ti__ox_field_name(int kind, uint32_t num) {
    static const char *const model[] = {"", "ir_version", "producer_name", "producer_version",
                                        "domain", "model_version", "doc_string", "graph",
                                        "opset_import"};
    static const char *const graph[] = {"", "node", "name", "", "", "initializer", "", "", "",
                                        "", "doc_string", "input", "output", "value_info",
                                        "quantization_annotation", "sparse_initializer"};
    static const char *const node[] = {"", "input", "output", "name", "op_type", "attribute",
                                       "doc_string", "domain", "overload"};
    static const char *const attr[] = {"", "name", "f", "i", "s", "t", "g", "floats", "ints",
                                       "strings", "tensors", "graphs", "", "doc_string", "tp",
                                       "type_protos", "", "", "", "", "type", "ref_attr_name",
                                       "sparse_tensor", "sparse_tensors"};
    static const char *const tensor[] = {"", "dims", "data_type", "segment", "float_data",
                                         "int32_data", "string_data", "int64_data", "name",
                                         "raw_data", "double_data", "uint64_data", "doc_string",
                                         "external_data", "data_location"};
#define TI__OX_PICK(t) return num < TI__COUNTOF(t) ? t[num] : NULL
    switch (kind) {
    case TI__OX_MODEL: TI__OX_PICK(model);
    case TI__OX_GRAPH: TI__OX_PICK(graph);
    case TI__OX_NODE: TI__OX_PICK(node);
    case TI__OX_ATTR: TI__OX_PICK(attr);
    case TI__OX_TENSOR: TI__OX_PICK(tensor);
    default: return NULL;
    }
#undef TI__OX_PICK
}

TI__PRIVATE const char *ti__ox_type_name(int64_t t) {
    static const char *const names[] = {
        "undefined", "float", "uint8", "int8", "uint16", "int16", "int32", "int64", "string",
        "bool", "float16", "double", "uint32", "uint64", "complex64", "complex128", "bfloat16",
        "float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz", "uint4", "int4",
        "float4e2m1", "float8e8m0", "uint2", "int2", "float6e2m3", "float6e3m2"};
    return t >= 0 && t < (int64_t)TI__COUNTOF(names) ? names[t] : "unknown";
}

/* TensorProto field that holds the values of data type t when raw_data is not used
 * (onnx.proto: int32_data also carries 8/16-bit integers, bool, float16 and bfloat16). */
TI__PRIVATE uint32_t ti__ox_data_field(int64_t t) {
    switch (t) {
    case 1: case 14: return 4;  /* float_data */
    case 7: return 7;           /* int64_data */
    case 8: return 6;           /* string_data */
    case 11: case 15: return 10; /* double_data */
    case 12: case 13: return 11; /* uint64_data */
    default: return 5;          /* int32_data */
    }
}

TI__PRIVATE int ti__ox_field_wire(uint32_t field) {
    return field == 4 ? 5 : field == 10 ? 1 : 0;
}

/* Parsing state. */
typedef struct ti__ox {
    ti_model *m; /* NULL while decoding a lone TensorProto */
    ti_error *err;
    const char *file;
    int max_rank;
    char *name_buf; /* NUL-terminated copy of a wire string, for lookups */
    size_t name_cap;
} ti__ox;

/* Copies a wire string into buf for messages: at most 80 bytes, control bytes as '?'. */
TI__PRIVATE void ti__ox_printable(char *buf, size_t cap, const uint8_t *s, size_t n) {
    size_t k = 0;
    for (size_t i = 0; i < n && k + 4 < cap && i < 80; i++)
        buf[k++] = s[i] < 0x20 || s[i] == 0x7f ? '?' : (char)s[i];
    if (n > 80 && k + 4 < cap) buf[k++] = '.', buf[k++] = '.', buf[k++] = '.';
    buf[k] = 0;
}

TI__PRIVATE ti_status ti__ox_wire_fail(ti__ox *x, const ti__pb *c, int kind, const char *what) {
    char d[200];
    ti__pb_describe(c, ti__ox_field_name(kind, c->fault_field), d, sizeof d);
    if (what == NULL)
        return ti__fail(x->err, TI_ERR_BAD_MODEL, x->file, "not an ONNX model: %s", d);
    return ti__fail(x->err, TI_ERR_BAD_MODEL, x->file, "malformed %s: %s", what, d);
}

TI__PRIVATE ti_status ti__ox_oom(ti__ox *x) {
    return ti__fail(x->err, TI_ERR_OUT_OF_MEMORY, x->file, "out of memory while reading the model");
}

/* A NUL-terminated copy of a wire string in x->name_buf (valid until the next call).
 * Names with a NUL byte inside are refused: they would alias shorter names. */
TI__PRIVATE ti_status ti__ox_cstr(ti__ox *x, const uint8_t *s, size_t n, const char *role,
                                  const char **out) {
    if (n > 0 && memchr(s, 0, n) != NULL) {
        char p[96];
        ti__ox_printable(p, sizeof p, s, n);
        return ti__fail(x->err, TI_ERR_BAD_MODEL, x->file, "%s name '%s' contains a NUL byte",
                        role, p);
    }
    if (n + 1 > x->name_cap) {
        size_t cap = x->name_cap ? x->name_cap : 256;
        while (cap < n + 1) cap *= 2;
        char *nb = (char *)ti__malloc(&x->m->al, cap);
        if (nb == NULL) return ti__ox_oom(x);
        ti__free(&x->m->al, x->name_buf, x->name_cap);
        x->name_buf = nb;
        x->name_cap = cap;
    }
    if (n) memcpy(x->name_buf, s, n);
    x->name_buf[n] = 0;
    *out = x->name_buf;
    return TI_OK;
}

TI__PRIVATE int ti__ox_streq(const uint8_t *s, size_t n, const char *lit) {
    size_t l = strlen(lit);
    return n == l && (n == 0 || memcmp(s, lit, n) == 0);
}

/* ---- TensorProto --------------------------------------------------------------------- */

/* What a first pass over a TensorProto finds; a second pass (ti__ox_tensor_fill) decodes. */
typedef struct ti__ox_tensor {
    ti__pb msg; /* the message, for the second pass */
    const uint8_t *name;
    size_t name_len;
    int64_t type;
    int rank;
    int64_t dims[TI_MAX_DIMS];
    const uint8_t *raw;
    size_t raw_len;
    int has_raw, has_segment;
    size_t count[12]; /* elements found per field number 4..11 */
    int64_t location; /* data_location: 1 = EXTERNAL */
    const uint8_t *ext[3]; /* external_data values: location, offset, length */
    size_t ext_len[3];
    int has_ext[3];
    char label[128]; /* "tensor 'W'" for messages */
} ti__ox_tensor;

/* One StringStringEntryProto of external_data. */
TI__PRIVATE ti_status ti__ox_ext_entry(ti__ox *x, ti__pb *parent, const ti__pb_field *ef,
                                       ti__ox_tensor *t, const char *what) {
    ti__pb c;
    ti__pb_field f;
    const uint8_t *key = NULL, *val = NULL;
    size_t key_len = 0, val_len = 0;
    if (!ti__pb_enter(parent, ef, &c)) return ti__ox_wire_fail(x, parent, TI__OX_TENSOR, what);
    while (ti__pb_next(&c, &f)) {
        if ((f.num == 1 || f.num == 2) && ti__pb_expect(&c, &f, 2)) {
            if (f.num == 1) key = f.data, key_len = f.len;
            else val = f.data, val_len = f.len;
        }
    }
    if (c.fault) return ti__ox_wire_fail(x, &c, TI__OX_OTHER, what);
    static const char *const keys[3] = {"location", "offset", "length"};
    for (int k = 0; k < 3; k++)
        if (key != NULL && ti__ox_streq(key, key_len, keys[k])) {
            t->ext[k] = val ? val : key; /* any non-NULL pointer for an empty value */
            t->ext_len[k] = val_len;
            t->has_ext[k] = 1;
        }
    return TI_OK;
}

/* First pass: dims, data type, name, where the data is and how many elements each field
 * holds. `what` names the tensor in messages until its own name is known. */
TI__PRIVATE ti_status ti__ox_tensor_scan(ti__ox *x, const ti__pb *msg, const char *what,
                                         ti__ox_tensor *t) {
    memset(t, 0, sizeof *t);
    t->msg = *msg;
    ti__pb c = *msg;
    ti__pb_field f;
    size_t ndims = 0;
    ti_status st = TI_OK;
    snprintf(t->label, sizeof t->label, "%s", what);
    while (st == TI_OK && ti__pb_next(&c, &f)) {
        switch (f.num) {
        case 1: { /* dims: repeated int64, packed or not */
            if (f.wire != 0 && f.wire != 2) {
                ti__pb_wrong_wire(&c, &f, 0);
                break;
            }
            ti__pb_scalars s;
            uint64_t v;
            ti__pb_scalars_init(&s, &c, &f, 0);
            while (ti__pb_scalars_next(&s, &v)) {
                if (ndims < TI_MAX_DIMS) t->dims[ndims] = ti__pb_as_i64(v);
                ndims++;
            }
            if (s.c.fault) {
                s.c.fault_field = 1;
                ti__pb_take_fault(&c, &s.c);
            }
            break;
        }
        case 2:
            if (ti__pb_expect(&c, &f, 0)) t->type = ti__pb_as_i64(f.u);
            break;
        case 3: t->has_segment = 1; break;
        case 4: case 5: case 7: case 10: case 11:
            t->count[f.num] += ti__pb_scalar_count(&c, &f, ti__ox_field_wire(f.num));
            break;
        case 6:
            if (ti__pb_expect(&c, &f, 2)) t->count[6]++;
            break;
        case 8:
            if (ti__pb_expect(&c, &f, 2)) {
                t->name = f.data;
                t->name_len = f.len;
                char p[96];
                ti__ox_printable(p, sizeof p, f.data, f.len);
                snprintf(t->label, sizeof t->label, "tensor '%s'", p);
            }
            break;
        case 9:
            if (ti__pb_expect(&c, &f, 2)) {
                t->raw = f.data;
                t->raw_len = f.len;
                t->has_raw = 1;
            }
            break;
        case 13: st = ti__ox_ext_entry(x, &c, &f, t, t->label); break;
        case 14:
            if (ti__pb_expect(&c, &f, 0)) t->location = ti__pb_as_i64(f.u);
            break;
        default: break; /* doc_string, metadata_props, fields of later versions */
        }
    }
    if (st != TI_OK) return st;
    if (c.fault) return ti__ox_wire_fail(x, &c, TI__OX_TENSOR, t->label);
    if (ndims > (size_t)x->max_rank)
        return ti__fail(x->err, TI_ERR_BAD_MODEL, x->file, "%s has %zu dims (limit %d)", t->label,
                        ndims, x->max_rank);
    t->rank = (int)ndims;
    for (int i = 0; i < t->rank; i++)
        if (t->dims[i] < 0)
            return ti__fail(x->err, TI_ERR_BAD_MODEL, x->file, "%s has a negative dim (%lld)",
                            t->label, (long long)t->dims[i]);
    if (t->has_segment)
        return ti__fail(x->err, TI_ERR_UNSUPPORTED, x->file,
                        "%s is a segment of a larger tensor (TensorProto.segment)", t->label);
    return TI_OK;
}

/* Checks that the data a tensor carries inline matches its dims: raw_data of exactly
 * `bytes`, or exactly `numel` values in the field its data type uses. */
TI__PRIVATE ti_status ti__ox_tensor_check(ti__ox *x, const ti__ox_tensor *t, size_t numel,
                                          size_t bytes) {
    size_t typed = 0;
    for (int k = 4; k < 12; k++) typed += t->count[k];
    if (t->location == 1) {
        if (t->has_raw || typed != 0)
            return ti__fail(x->err, TI_ERR_BAD_MODEL, x->file,
                            "%s has both external and inline data", t->label);
        if (!t->has_ext[0])
            return ti__fail(x->err, TI_ERR_BAD_MODEL, x->file,
                            "%s is stored externally but has no 'location'", t->label);
        return TI_OK;
    }
    if (t->has_raw) {
        if (typed != 0)
            return ti__fail(x->err, TI_ERR_BAD_MODEL, x->file,
                            "%s has both raw_data and typed data fields", t->label);
        if (t->raw_len != bytes)
            return ti__fail(x->err, TI_ERR_BAD_MODEL, x->file,
                            "%s has %zu bytes of raw_data, its dims need %zu (%zu %s elements)",
                            t->label, t->raw_len, bytes, numel, ti__ox_type_name(t->type));
        return TI_OK;
    }
    uint32_t field = ti__ox_data_field(t->type);
    if (t->count[field] != numel)
        return ti__fail(x->err, TI_ERR_BAD_MODEL, x->file,
                        "%s has %zu values in %s, its dims need %zu", t->label, t->count[field],
                        ti__ox_field_name(TI__OX_TENSOR, field), numel);
    return TI_OK;
}

TI__PRIVATE int ti__ox_big_endian(void) {
    uint16_t one = 1;
    uint8_t b;
    memcpy(&b, &one, 1);
    return b == 0;
}

/* raw_data and external data are little-endian; bools must be 0/1. */
TI__PRIVATE void ti__ox_fix_bytes(uint8_t *dst, size_t bytes, ti_dtype dt) {
    size_t es = ti_dtype_size(dt);
    if (dt == TI_DTYPE_BOOL)
        for (size_t i = 0; i < bytes; i++) dst[i] = dst[i] != 0;
    if (es > 1 && ti__ox_big_endian())
        for (size_t i = 0; i + es <= bytes; i += es)
            for (size_t a = 0, b = es - 1; a < b; a++, b--) {
                uint8_t tmp = dst[i + a];
                dst[i + a] = dst[i + b];
                dst[i + b] = tmp;
            }
}

/* Stores one decoded wire value as element i of dst (host order). Integer fields carry the
 * value truncated to the element width; float_data/double_data carry the IEEE bits. */
TI__PRIVATE void ti__ox_store(uint8_t *dst, size_t i, ti_dtype dt, uint64_t v) {
    switch (ti_dtype_size(dt)) {
    case 8: memcpy(dst + 8 * i, &v, 8); break;
    case 4: {
        uint32_t w = (uint32_t)v;
        memcpy(dst + 4 * i, &w, 4);
        break;
    }
    case 2: {
        uint16_t w = (uint16_t)v;
        memcpy(dst + 2 * i, &w, 2);
        break;
    }
    default: dst[i] = dt == TI_DTYPE_BOOL ? (uint8_t)(v != 0) : (uint8_t)v; break;
    }
}

#ifndef TI_NO_STDIO
/* Parses a decimal external_data value ("offset", "length"). */
TI__PRIVATE int ti__ox_parse_u64(const uint8_t *s, size_t n, uint64_t *out) {
    uint64_t v = 0;
    if (n == 0 || n > 20) return 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return 0;
        uint64_t d = (uint64_t)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10) return 0;
        v = v * 10 + d;
    }
    *out = v;
    return 1;
}

/* Reads a tensor's external data from a file beside the model. The location must be a
 * relative path without ".." components or backslashes, so that a model can only make the
 * library read files inside its own directory. */
TI__PRIVATE ti_status ti__ox_read_external(ti__ox *x, const ti__ox_tensor *t, uint8_t *dst,
                                           size_t bytes) {
    const uint8_t *loc = t->ext[0];
    size_t n = t->ext_len[0];
    char shown[96];
    ti__ox_printable(shown, sizeof shown, loc, n);
    const char *why = NULL;
    if (n == 0) why = "is empty";
    else if (memchr(loc, 0, n) != NULL) why = "contains a NUL byte";
    else if (loc[0] == '/' || (n >= 2 && loc[1] == ':')) why = "is an absolute path";
    else if (memchr(loc, '\\', n) != NULL) why = "contains a backslash";
    for (size_t i = 0; why == NULL && i < n;) { /* each '/'-separated component */
        size_t j = i;
        while (j < n && loc[j] != '/') j++;
        if (j - i == 2 && loc[i] == '.' && loc[i + 1] == '.') why = "contains a '..' component";
        i = j + 1;
    }
    if (why != NULL)
        return ti__fail(x->err, TI_ERR_BAD_MODEL, x->file,
                        "%s: external data location '%s' %s (only files inside the model's "
                        "directory are read)", t->label, shown, why);
    if (x->m == NULL || x->m->dir[0] == 0)
        return ti__fail(x->err, TI_ERR_UNSUPPORTED, x->file,
                        "%s: external data '%s' needs the model to be loaded from a file",
                        t->label, shown);
    uint64_t off = 0, len = 0;
    if (t->has_ext[1] && !ti__ox_parse_u64(t->ext[1], t->ext_len[1], &off))
        return ti__fail(x->err, TI_ERR_BAD_MODEL, x->file,
                        "%s: external data offset is not a decimal number", t->label);
    if (t->has_ext[2] && !ti__ox_parse_u64(t->ext[2], t->ext_len[2], &len))
        return ti__fail(x->err, TI_ERR_BAD_MODEL, x->file,
                        "%s: external data length is not a decimal number", t->label);
    char path[2048];
    size_t dl = strlen(x->m->dir);
    int slash = dl > 0 && x->m->dir[dl - 1] != '/' && x->m->dir[dl - 1] != '\\';
    if (dl + (size_t)slash + n + 1 > sizeof path)
        return ti__fail(x->err, TI_ERR_BAD_MODEL, x->file, "%s: external data path is too long",
                        t->label);
    memcpy(path, x->m->dir, dl);
    if (slash) path[dl++] = '/';
    memcpy(path + dl, loc, n);
    path[dl + n] = 0;
    FILE *fp = fopen(path, "rb");
    if (fp == NULL)
        return ti__fail(x->err, TI_ERR_IO, x->file, "%s: cannot open external data file '%s'",
                        t->label, path);
    long size = -1;
    if (fseek(fp, 0, SEEK_END) == 0) size = ftell(fp);
    ti_status st = TI_OK;
    if (size < 0) {
        st = ti__fail(x->err, TI_ERR_IO, x->file, "%s: cannot read the size of '%s'", t->label,
                      path);
    } else if (off > (uint64_t)size) {
        st = ti__fail(x->err, TI_ERR_BAD_MODEL, x->file,
                      "%s: external data offset %llu is past the end of '%s' (%ld bytes)",
                      t->label, (unsigned long long)off, path, size);
    } else {
        if (!t->has_ext[2]) len = (uint64_t)size - off;
        if (len > (uint64_t)size - off)
            st = ti__fail(x->err, TI_ERR_BAD_MODEL, x->file,
                          "%s: external data (offset %llu, length %llu) runs past the end of "
                          "'%s' (%ld bytes)", t->label, (unsigned long long)off,
                          (unsigned long long)len, path, size);
        else if (len != (uint64_t)bytes)
            st = ti__fail(x->err, TI_ERR_BAD_MODEL, x->file,
                          "%s: external data length %llu does not match its dims (%zu bytes)",
                          t->label, (unsigned long long)len, bytes);
        else if (fseek(fp, (long)off, SEEK_SET) != 0 ||
                 (bytes > 0 && fread(dst, 1, bytes, fp) != bytes))
            st = ti__fail(x->err, TI_ERR_IO, x->file, "%s: cannot read %zu bytes from '%s'",
                          t->label, bytes, path);
    }
    fclose(fp);
    return st;
}
#endif

/* Second pass: decodes the tensor's values into dst (bytes = numel * element size). */
TI__PRIVATE ti_status ti__ox_tensor_fill(ti__ox *x, const ti__ox_tensor *t, ti_dtype dt,
                                         size_t numel, uint8_t *dst, size_t bytes) {
    if (t->location == 1) {
#ifndef TI_NO_STDIO
        ti_status st = ti__ox_read_external(x, t, dst, bytes);
        if (st != TI_OK) return st;
        ti__ox_fix_bytes(dst, bytes, dt);
        return TI_OK;
#else
        return ti__fail(x->err, TI_ERR_UNSUPPORTED, x->file,
                        "%s: external data needs file access (built with TI_NO_STDIO)", t->label);
#endif
    }
    if (t->has_raw) {
        if (bytes) memcpy(dst, t->raw, bytes);
        ti__ox_fix_bytes(dst, bytes, dt);
        return TI_OK;
    }
    uint32_t field = ti__ox_data_field(t->type);
    int wire = ti__ox_field_wire(field);
    ti__pb c = t->msg;
    ti__pb_field f;
    size_t i = 0;
    while (ti__pb_next(&c, &f)) {
        if (f.num != field) continue;
        ti__pb_scalars s;
        uint64_t v;
        ti__pb_scalars_init(&s, &c, &f, wire);
        while (i < numel && ti__pb_scalars_next(&s, &v)) ti__ox_store(dst, i++, dt, v);
        if (s.c.fault) {
            s.c.fault_field = field;
            ti__pb_take_fault(&c, &s.c);
        }
    }
    if (c.fault) return ti__ox_wire_fail(x, &c, TI__OX_TENSOR, t->label);
    if (i != numel)
        return ti__fail(x->err, TI_ERR_BAD_MODEL, x->file, "%s: decoded %zu values, expected %zu",
                        t->label, i, numel);
    return TI_OK;
}

/* ---- public: a lone TensorProto ------------------------------------------------------ */

TI_API ti_status ti_tensor_decode_onnx(const void *bytes, size_t size, ti_tensor *out,
                                       ti_error *err) {
    ti__error_clear(err);
    if (out == NULL || (bytes == NULL && size > 0))
        return ti__fail(err, TI_ERR_INVALID_ARGUMENT, "<memory>",
                        "ti_tensor_decode_onnx: out or bytes is NULL");
    memset(out, 0, sizeof *out);
    ti__ox x;
    memset(&x, 0, sizeof x);
    x.err = err;
    x.file = "<memory>";
    x.max_rank = TI_MAX_DIMS;
    ti__pb c;
    ti__pb_init(&c, (const uint8_t *)bytes, size);
    ti__ox_tensor t;
    ti_status st = ti__ox_tensor_scan(&x, &c, "tensor", &t);
    if (st != TI_OK) return st;
    ti_dtype dt = ti__onnx_dtype(t.type);
    if (t.type == 0)
        return ti__fail(err, TI_ERR_BAD_MODEL, x.file, "%s has no data_type", t.label);
    if (dt == TI_DTYPE_UNKNOWN)
        return ti__fail(err, TI_ERR_UNSUPPORTED, x.file, "%s has data type %lld (%s)", t.label,
                        (long long)t.type, ti__ox_type_name(t.type));
    if (t.location == 1)
        return ti__fail(err, TI_ERR_UNSUPPORTED, x.file,
                        "%s is stored in an external file; lone tensors must carry their data",
                        t.label);
    size_t numel = 1, nbytes = 0;
    for (int i = 0; i < t.rank; i++)
        if (!ti__mul_size(numel, (size_t)t.dims[i], &numel))
            return ti__fail(err, TI_ERR_BAD_MODEL, x.file, "%s: element count overflows", t.label);
    if (!ti__mul_size(numel, ti_dtype_size(dt), &nbytes))
        return ti__fail(err, TI_ERR_BAD_MODEL, x.file, "%s: byte size overflows", t.label);
    if (dt == TI_DTYPE_STRING && t.count[6] != numel)
        return ti__fail(err, TI_ERR_BAD_MODEL, x.file, "%s has %zu strings, its dims need %zu",
                        t.label, t.count[6], numel);
    if (dt != TI_DTYPE_STRING && (st = ti__ox_tensor_check(&x, &t, numel, nbytes)) != TI_OK)
        return st;
    /* sizes are now bounded by the input: every element was counted in the bytes */
    char *name = (char *)TI_MALLOC(t.name_len + 1);
    uint8_t *data = dt == TI_DTYPE_STRING ? NULL : (uint8_t *)TI_MALLOC(nbytes ? nbytes : 1);
    if (name == NULL || (data == NULL && dt != TI_DTYPE_STRING)) {
        TI_FREE(name);
        TI_FREE(data);
        return ti__fail(err, TI_ERR_OUT_OF_MEMORY, x.file, "%s: cannot allocate %zu bytes",
                        t.label, nbytes);
    }
    if (t.name_len) memcpy(name, t.name, t.name_len);
    name[t.name_len] = 0;
    if (data != NULL && (st = ti__ox_tensor_fill(&x, &t, dt, numel, data, nbytes)) != TI_OK) {
        TI_FREE(name);
        TI_FREE(data);
        return st;
    }
    out->name = name;
    out->dtype = dt;
    out->rank = t.rank;
    for (int i = 0; i < t.rank; i++) out->shape[i] = t.dims[i];
    out->data = data; /* strings: no data (never computed on) */
    out->size_bytes = data ? nbytes : 0;
    return TI_OK;
}

/* ---- constants: initializers and tensor attributes ----------------------------------- */

/* Reads the TensorProto msg into a new constant value; *out: its index. Initializers
 * (gen_name NULL) are found by their name; attribute tensors get gen_name and stay out of
 * the name index, so no node output or input can collide with them. */
TI__PRIVATE ti_status ti__ox_const(ti__ox *x, const ti__pb *msg, const char *what,
                                   const char *gen_name, int *out) {
    ti_model *m = x->m;
    ti__ox_tensor t;
    ti_status st = ti__ox_tensor_scan(x, msg, what, &t);
    if (st != TI_OK) return st;
    int v;
    if (gen_name == NULL) {
        const char *name;
        if ((st = ti__ox_cstr(x, t.name, t.name_len, "initializer", &name)) != TI_OK) return st;
        if (name[0] != 0 && ti__model_find_value(m, name) >= 0)
            return ti__fail(x->err, TI_ERR_BAD_MODEL, x->file, "initializer '%s' appears twice",
                            name);
        v = ti__model_add_value(m, name);
    } else {
        v = ti__model_add_value(m, NULL);
        if (v >= 0) {
            m->values[v].name = ti__pool_strndup(&m->pool, gen_name, strlen(gen_name));
            if (m->values[v].name == NULL) v = -1;
        }
    }
    if (v < 0) return ti__ox_oom(x);
    ti_dtype dt = ti__onnx_dtype(t.type);
    m->values[v].dtype = dt;
    m->values[v].rank = t.rank;
    for (int i = 0; i < t.rank; i++) m->values[v].dims[i] = t.dims[i];
    m->values[v].is_const = 1;
    *out = v;
    size_t numel = ti__shape_numel(t.rank, t.dims), bytes = 0;
    if (dt == TI_DTYPE_UNKNOWN) return TI_OK; /* kept without data: ops refuse the dtype */
    if (dt == TI_DTYPE_STRING) {
        /* recognised, never computed on: only the count is checked */
        if ((st = ti__model_check_const(m, m->values[v].name, dt, t.rank, t.dims, &bytes,
                                        x->err)) != TI_OK)
            return st;
        if (t.count[6] != ti__shape_numel(t.rank, t.dims) && t.location != 1)
            return ti__fail(x->err, TI_ERR_BAD_MODEL, x->file,
                            "%s has %zu strings, its dims need %zu", t.label, t.count[6], numel);
        return TI_OK;
    }
    if ((st = ti__model_check_const(m, m->values[v].name, dt, t.rank, t.dims, &bytes,
                                    x->err)) != TI_OK)
        return st;
    if ((st = ti__ox_tensor_check(x, &t, numel, bytes)) != TI_OK) return st;
    /* 64-byte aligned in the pool (which aligns to 16) for the SIMD kernels */
    size_t alloc;
    if (!ti__add_size(bytes, 48, &alloc)) return ti__ox_oom(x);
    uint8_t *raw = (uint8_t *)ti__pool_alloc_raw(&m->pool, alloc); /* filled whole */
    if (raw == NULL)
        return ti__fail(x->err, TI_ERR_OUT_OF_MEMORY, x->file,
                        "%s: cannot allocate %zu bytes", t.label, bytes);
    uint8_t *data = raw + ((64 - ((uintptr_t)raw & 63)) & 63);
    if ((st = ti__ox_tensor_fill(x, &t, dt, numel, data, bytes)) != TI_OK) return st;
    m->values[v].data = data;
    m->values[v].bytes = bytes;
    return TI_OK;
}

/* ---- ValueInfoProto / TypeProto ------------------------------------------------------ */

enum { TI__OX_T_NONE, TI__OX_T_TENSOR, TI__OX_T_SEQUENCE, TI__OX_T_MAP, TI__OX_T_OPTIONAL,
       TI__OX_T_SPARSE, TI__OX_T_OPAQUE };

typedef struct ti__ox_vinfo {
    const uint8_t *name;
    size_t name_len;
    int kind; /* TI__OX_T_* */
    int64_t elem_type;
    int rank; /* -1: no shape */
    size_t ndims;
    int64_t dims[TI_MAX_DIMS];
    const uint8_t *param[TI_MAX_DIMS]; /* dim_param, NULL for none */
    size_t param_len[TI_MAX_DIMS];
} ti__ox_vinfo;

/* TypeProto.Tensor: elem_type and shape. */
TI__PRIVATE void ti__ox_tensor_type(ti__pb *c, ti__ox_vinfo *vi) {
    ti__pb_field f, sf, df;
    while (ti__pb_next(c, &f)) {
        if (f.num == 1 && ti__pb_expect(c, &f, 0)) vi->elem_type = ti__pb_as_i64(f.u);
        if (f.num != 2) continue;
        ti__pb shape, dim;
        if (!ti__pb_enter(c, &f, &shape)) return;
        vi->rank = 0;
        vi->ndims = 0;
        while (ti__pb_next(&shape, &sf)) {
            if (sf.num != 1) continue;
            if (!ti__pb_enter(&shape, &sf, &dim)) break;
            size_t d = vi->ndims++;
            if (d < TI_MAX_DIMS) {
                vi->dims[d] = -1;
                vi->param[d] = NULL;
            }
            while (ti__pb_next(&dim, &df)) {
                if (d >= TI_MAX_DIMS) continue;
                if (df.num == 1 && ti__pb_expect(&dim, &df, 0)) {
                    int64_t dv = ti__pb_as_i64(df.u);
                    vi->dims[d] = dv < 0 ? -1 : dv; /* some exporters write -1 for dynamic */
                    vi->param[d] = NULL;
                } else if (df.num == 2 && ti__pb_expect(&dim, &df, 2)) {
                    vi->dims[d] = -1;
                    vi->param[d] = df.data;
                    vi->param_len[d] = df.len;
                }
            }
            ti__pb_take_fault(&shape, &dim);
        }
        ti__pb_take_fault(c, &shape);
    }
}

/* Parses a ValueInfoProto; `what` names it in messages ("graph input 3"). */
TI__PRIVATE ti_status ti__ox_vinfo_parse(ti__ox *x, ti__pb *parent, const ti__pb_field *vf,
                                         const char *what, ti__ox_vinfo *vi) {
    ti__pb c, tc, sub;
    ti__pb_field f, tf;
    memset(vi, 0, sizeof *vi);
    vi->rank = -1;
    if (!ti__pb_enter(parent, vf, &c)) return ti__ox_wire_fail(x, parent, TI__OX_GRAPH, "graph");
    while (ti__pb_next(&c, &f)) {
        if (f.num == 1 && ti__pb_expect(&c, &f, 2)) {
            vi->name = f.data;
            vi->name_len = f.len;
        } else if (f.num == 2 && ti__pb_enter(&c, &f, &tc)) {
            while (ti__pb_next(&tc, &tf)) {
                int kind = tf.num == 1 ? TI__OX_T_TENSOR : tf.num == 4 ? TI__OX_T_SEQUENCE
                         : tf.num == 5 ? TI__OX_T_MAP : tf.num == 9 ? TI__OX_T_OPTIONAL
                         : tf.num == 8 ? TI__OX_T_SPARSE : tf.num == 7 ? TI__OX_T_OPAQUE : 0;
                if (kind == 0 || !ti__pb_enter(&tc, &tf, &sub)) continue;
                vi->kind = kind;
                if (kind == TI__OX_T_TENSOR) {
                    ti__ox_tensor_type(&sub, vi);
                    ti__pb_take_fault(&tc, &sub);
                }
            }
            ti__pb_take_fault(&c, &tc);
        }
    }
    if (c.fault) return ti__ox_wire_fail(x, &c, TI__OX_OTHER, what);
    return TI_OK;
}

/* Records vi's type on value v where the value does not know it yet. strict: refuse non-tensor
 * types and too many dims (graph inputs and outputs); otherwise ignore them (value_info). */
TI__PRIVATE ti_status ti__ox_vinfo_apply(ti__ox *x, int v, const ti__ox_vinfo *vi,
                                         const char *role, int strict) {
    ti_model *m = x->m;
    ti__value *val = &m->values[v];
    if (vi->kind != TI__OX_T_TENSOR && vi->kind != TI__OX_T_NONE) {
        static const char *const kinds[] = {"", "", "a sequence", "a map", "an optional",
                                            "a sparse tensor", "an opaque"};
        if (!strict) return TI_OK;
        return ti__fail(x->err, TI_ERR_UNSUPPORTED, x->file, "%s '%s' is %s type", role, val->name,
                        kinds[vi->kind]);
    }
    if (vi->rank >= 0 && vi->ndims > (size_t)x->max_rank) {
        if (!strict) return TI_OK;
        return ti__fail(x->err, TI_ERR_BAD_MODEL, x->file, "%s '%s' has rank %zu (limit %d)", role,
                        val->name, vi->ndims, x->max_rank);
    }
    if (val->dtype == TI_DTYPE_UNKNOWN) val->dtype = ti__onnx_dtype(vi->elem_type);
    if (val->rank < 0 && vi->rank >= 0) {
        for (size_t d = 0; d < vi->ndims; d++) {
            val->dims[d] = vi->dims[d];
            val->dim_names[d] = NULL;
            if (vi->param[d] != NULL) {
                val->dim_names[d] = ti__pool_strndup(&m->pool, (const char *)vi->param[d],
                                                     vi->param_len[d]);
                if (val->dim_names[d] == NULL) return ti__ox_oom(x);
            }
        }
        val->rank = (int)vi->ndims;
    }
    return TI_OK;
}

/* ---- AttributeProto ------------------------------------------------------------------ */

/* ti__fail_node for node i of the file; unnamed nodes get their position in the reason. */
TI__PRIVATE ti_status ti__ox_node_fail(ti__ox *x, ti_status code, int i, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(TI__PRINTF_FORMAT, 4, 5)))
#endif
    ;
TI__PRIVATE ti_status ti__ox_node_fail(ti__ox *x, ti_status code, int i, const char *fmt, ...) {
    const ti__node *n = &x->m->nodes[i];
    char reason[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    if (n->name[0] != 0)
        return ti__fail_node(x->err, code, x->file, i, n->name, n->op, "%s", reason);
    return ti__fail_node(x->err, code, x->file, i, n->name, n->op, "%s (node %d of the graph)",
                         reason, i);
}


TI__PRIVATE ti_status ti__ox_attr(ti__ox *x, ti__pb *parent, const ti__pb_field *af,
                                  int node_index, const ti__node *n, int k, ti__attr *a) {
    ti_model *m = x->m;
    ti__pb c0, c;
    ti__pb_field f;
    if (!ti__pb_enter(parent, af, &c0)) return ti__ox_wire_fail(x, parent, TI__OX_NODE, "node");
    const uint8_t *name = NULL, *ref = NULL;
    size_t name_len = 0;
    int64_t type = 0;
    int has[24] = {0};   /* per field number: present */
    size_t cnt[24] = {0}; /* per field number: elements (repeated fields) */
    ti__pb_field last[24]; /* per field number: last occurrence (singular fields) */
    memset(last, 0, sizeof last);
    c = c0;
    while (ti__pb_next(&c, &f)) {
        if (f.num >= 24) continue;
        switch (f.num) {
        case 1: case 4: case 5: case 6: case 9: case 10: case 11: case 21: case 22: case 23:
            if (!ti__pb_expect(&c, &f, 2)) continue;
            break;
        case 2: if (!ti__pb_expect(&c, &f, 5)) continue; break;
        case 3: case 20: if (!ti__pb_expect(&c, &f, 0)) continue; break;
        case 7: cnt[7] += ti__pb_scalar_count(&c, &f, 5); break;
        case 8: cnt[8] += ti__pb_scalar_count(&c, &f, 0); break;
        default: break;
        }
        has[f.num] = 1;
        last[f.num] = f;
        if (f.num == 9 || f.num == 10 || f.num == 11 || f.num == 23) cnt[f.num]++;
    }
    if (has[1]) name = last[1].data, name_len = last[1].len;
    char label[160], pname[96];
    ti__ox_printable(pname, sizeof pname, name ? name : (const uint8_t *)"", name_len);
    snprintf(label, sizeof label, "attribute %d ('%s') of node %d ('%s')", k, pname, node_index,
             n->name);
    if (c.fault) return ti__ox_wire_fail(x, &c, TI__OX_ATTR, label);
    a->name = ti__pool_strndup(&m->pool, name ? (const char *)name : "", name_len);
    if (a->name == NULL) return ti__ox_oom(x);
    if (has[21] && last[21].len > 0) {
        ref = last[21].data;
        char pref[96];
        ti__ox_printable(pref, sizeof pref, ref, last[21].len);
        return ti__ox_node_fail(x, TI_ERR_UNSUPPORTED, node_index,
                                "attribute '%s' refers to '%s' (ref_attr_name is only valid "
                                "inside functions)", a->name, pref);
    }
    if (has[20]) type = ti__pb_as_i64(last[20].u);
    if (type == 0) { /* old writers omit `type`: infer it from the field that is set */
        type = has[5] ? 4 : has[6] ? 5 : has[4] ? 3 : has[2] ? 1 : has[3] ? 2 : cnt[7] ? 6
             : cnt[8] ? 7 : cnt[9] ? 8 : cnt[10] ? 9 : cnt[11] ? 10 : has[22] ? 11
             : cnt[23] ? 12 : has[14] ? 13 : has[15] ? 14 : 0;
    }
    size_t count = 0;
    switch (type) {
    case 0: a->type = TI__ATTR_NONE; return TI_OK; /* no value at all: lookups use defaults */
    case 1: a->type = TI__ATTR_FLOAT; a->f = ti__pb_as_f32(last[2].u); return TI_OK;
    case 2: a->type = TI__ATTR_INT; a->i = ti__pb_as_i64(last[3].u); return TI_OK;
    case 3:
        a->type = TI__ATTR_STRING;
        a->s_len = last[4].len;
        a->s = ti__pool_strndup(&m->pool, has[4] ? (const char *)last[4].data : "", a->s_len);
        return a->s ? TI_OK : ti__ox_oom(x);
    case 5: a->type = TI__ATTR_GRAPH; a->count = 1; return TI_OK; /* never followed */
    case 10: a->type = TI__ATTR_GRAPHS; a->count = (int)TI__MIN(cnt[11], (size_t)INT_MAX);
        return TI_OK;
    case 11: case 12:
        return ti__ox_node_fail(x, TI_ERR_UNSUPPORTED, node_index,
                                "attribute '%s' is a sparse tensor", a->name);
    case 13: case 14: a->type = TI__ATTR_NONE; return TI_OK; /* type protos: no op we run */
    case 4: case 6: case 7: case 8: case 9: break;
    default:
        return ti__ox_node_fail(x, TI_ERR_BAD_MODEL, node_index,
                                "attribute '%s' has unknown type %lld", a->name, (long long)type);
    }
    count = type == 4 ? 1 : cnt[type + 1]; /* FLOATS 6 -> field 7, ..., TENSORS 9 -> field 10 */
    if (count > (size_t)INT_MAX / 16)
        return ti__ox_node_fail(x, TI_ERR_BAD_MODEL, node_index,
                                "attribute '%s' has %zu elements", a->name, count);
    if (type == 4 && !has[5])
        return ti__ox_node_fail(x, TI_ERR_BAD_MODEL, node_index,
                                "attribute '%s' of type TENSOR has no tensor", a->name);
    a->count = (int)count;
    a->type = type == 4 ? TI__ATTR_TENSOR : type == 6 ? TI__ATTR_FLOATS : type == 7
            ? TI__ATTR_INTS : type == 8 ? TI__ATTR_STRINGS : TI__ATTR_TENSORS;
    if (type == 6) a->floats = (const float *)ti__pool_alloc(&m->pool, sizeof(float) * count);
    if (type == 7) a->ints = (const int64_t *)ti__pool_alloc(&m->pool, sizeof(int64_t) * count);
    if (type == 8) a->strings = (const char **)ti__pool_alloc(&m->pool, sizeof(char *) * count);
    if ((type == 6 && !a->floats) || (type == 7 && !a->ints) || (type == 8 && !a->strings))
        return ti__ox_oom(x);
    size_t i = 0;
    c = c0;
    while (ti__pb_next(&c, &f)) {
        uint32_t want = type == 4 ? 5u : (uint32_t)type + 1;
        if (f.num != want || (type == 4 && f.data != last[5].data)) continue;
        if (type == 6 || type == 7) {
            ti__pb_scalars s;
            uint64_t v;
            ti__pb_scalars_init(&s, &c, &f, type == 6 ? 5 : 0);
            while (i < count && ti__pb_scalars_next(&s, &v)) {
                if (type == 6) ((float *)a->floats)[i++] = ti__pb_as_f32(v);
                else ((int64_t *)a->ints)[i++] = ti__pb_as_i64(v);
            }
            if (s.c.fault) {
                s.c.fault_field = want;
                ti__pb_take_fault(&c, &s.c);
            }
        } else if (type == 8) {
            a->strings[i] = ti__pool_strndup(&m->pool, (const char *)f.data, f.len);
            if (a->strings[i++] == NULL) return ti__ox_oom(x);
        } else { /* TENSOR, TENSORS: constants with consecutive value indices */
            char gen[200], what[200];
            ti__pb tc;
            if (type == 4) snprintf(gen, sizeof gen, "%s:%s", n->name[0] ? n->name : "node",
                                    a->name);
            else snprintf(gen, sizeof gen, "%s:%s[%zu]", n->name[0] ? n->name : "node", a->name, i);
            snprintf(what, sizeof what, "tensor of %s", label);
            int v = -1;
            if (!ti__pb_enter(&c, &f, &tc)) break;
            ti_status st = ti__ox_const(x, &tc, what, gen, &v);
            if (st != TI_OK) return st;
            if (i++ == 0) a->tensor = v;
        }
    }
    if (c.fault) return ti__ox_wire_fail(x, &c, TI__OX_ATTR, label);
    if (i != count)
        return ti__ox_node_fail(x, TI_ERR_BAD_MODEL, node_index,
                                "attribute '%s': decoded %zu of %zu values", a->name, i, count);
    return TI_OK;
}

/* ---- NodeProto ----------------------------------------------------------------------- */

TI__PRIVATE ti_status ti__ox_node(ti__ox *x, ti__pb *parent, const ti__pb_field *nf, int index) {
    ti_model *m = x->m;
    ti__pb c0, c;
    ti__pb_field f;
    ti_status st;
    if (!ti__pb_enter(parent, nf, &c0)) return ti__ox_wire_fail(x, parent, TI__OX_GRAPH, "graph");
    size_t n_in = 0, n_out = 0, n_attr = 0;
    const uint8_t *str[3] = {NULL, NULL, NULL}; /* name, op_type, domain */
    size_t str_len[3] = {0, 0, 0};
    c = c0;
    while (ti__pb_next(&c, &f)) {
        if (f.num > 7 || !((1u << f.num) & 0xbe) || !ti__pb_expect(&c, &f, 2)) continue;
        if (f.num == 1) n_in++;
        else if (f.num == 2) n_out++;
        else if (f.num == 5) n_attr++;
        else {
            int s = f.num == 3 ? 0 : f.num == 4 ? 1 : 2;
            str[s] = f.data;
            str_len[s] = f.len;
        }
    }
    char label[160], pname[96];
    ti__ox_printable(pname, sizeof pname, str[0] ? str[0] : (const uint8_t *)"", str_len[0]);
    snprintf(label, sizeof label, "node %d ('%s')", index, pname);
    if (c.fault) return ti__ox_wire_fail(x, &c, TI__OX_NODE, label);
    if (n_in > TI__OX_MAX_NODE_IO || n_out > TI__OX_MAX_NODE_IO || n_attr > TI__OX_MAX_ATTRS)
        return ti__fail(x->err, TI_ERR_BAD_MODEL, x->file,
                        "%s has %zu inputs, %zu outputs and %zu attributes (limits %d, %d, %d)",
                        label, n_in, n_out, n_attr, TI__OX_MAX_NODE_IO, TI__OX_MAX_NODE_IO,
                        TI__OX_MAX_ATTRS);
    if (str_len[1] == 0)
        return ti__fail(x->err, TI_ERR_BAD_MODEL, x->file, "%s has no op_type", label);
    ti__node *n = ti__model_add_node(m, (int)n_in, (int)n_out, (int)n_attr);
    if (n == NULL) return ti__ox_oom(x);
    /* the default domain is spelled "" or "ai.onnx"; kernels see "" */
    if (ti__ox_streq(str[2], str_len[2], "ai.onnx")) str_len[2] = 0;
    const char *s[3];
    for (int i = 0; i < 3; i++) {
        s[i] = str_len[i] ? ti__pool_strndup(&m->pool, (const char *)str[i], str_len[i]) : "";
        if (s[i] == NULL) return ti__ox_oom(x);
    }
    n->name = s[0];
    n->op = s[1];
    n->domain = s[2];
    int ii = 0, io = 0, ia = 0;
    c = c0;
    while (ti__pb_next(&c, &f)) {
        if (f.num == 1 || f.num == 2) {
            int v = -1; /* an empty name is an omitted optional input or output */
            if (f.len > 0) {
                const char *nm;
                st = ti__ox_cstr(x, f.data, f.len, f.num == 1 ? "node input" : "node output", &nm);
                if (st != TI_OK) return st;
                if ((v = ti__model_value(m, nm)) < 0) return ti__ox_oom(x);
            }
            if (f.num == 1) n->inputs[ii++] = v;
            else n->outputs[io++] = v;
        } else if (f.num == 5) {
            st = ti__ox_attr(x, &c, &f, index, n, ia, &n->attrs[ia]);
            if (st != TI_OK) return st;
            ia++;
        }
    }
    return TI_OK;
}

/* ---- validation and topological order ------------------------------------------------ */


/* Checks that every node input is defined and every value has one producer, then puts the
 * nodes in topological order (ti__model_order: kept as is when the file already has one),
 * and names what is wrong in ONNX's words. */
TI__PRIVATE ti_status ti__ox_validate(ti__ox *x) {
    ti_model *m = x->m;
    ti__order_bad b;
    char other[128] = "";
    switch (ti__model_order(m, &b)) {
    case TI__ORDER_OK:
        return TI_OK;
    case TI__ORDER_OOM:
        return ti__ox_oom(x);
    case TI__ORDER_TWICE:
        if (b.other >= 0)
            snprintf(other, sizeof other, " ('%s', %s)", m->nodes[b.other].name,
                     m->nodes[b.other].op);
        return ti__ox_node_fail(x, TI_ERR_BAD_MODEL, b.node, "output '%s' is also produced by %s%s",
                                m->values[b.value].name, b.other == -2 ? "a graph input"
                                : b.other == -3 ? "an initializer" : "another node", other);
    case TI__ORDER_NO_INPUT:
        return ti__ox_node_fail(x, TI_ERR_BAD_MODEL, b.node, "input '%s' is not produced by any "
                                "node, graph input or initializer", m->values[b.value].name);
    case TI__ORDER_NO_OUTPUT:
        return ti__fail(x->err, TI_ERR_BAD_MODEL, x->file, "graph output '%s' is not produced by "
                        "any node, graph input or initializer", m->values[b.value].name);
    default:
        return ti__ox_node_fail(x, TI_ERR_BAD_MODEL, b.node,
                                "the graph has a cycle through this node");
    }
}

/* ---- GraphProto and ModelProto ------------------------------------------------------- */

TI__PRIVATE ti_status ti__ox_graph(ti__ox *x, const ti__pb *g) {
    ti_model *m = x->m;
    ti__pb c;
    ti__pb_field f;
    ti_status st = TI_OK;
    ti__ox_vinfo vi;
    char what[64];
    /* pass 1: initializers (so that inputs naming them are known as constants); count nodes */
    int n_nodes = 0, n_init = 0;
    c = *g;
    while (st == TI_OK && ti__pb_next(&c, &f)) {
        if (f.num == 1) {
            if (++n_nodes > m->desc.max_nodes)
                return ti__fail(x->err, TI_ERR_OUT_OF_MEMORY, x->file,
                                "the graph has more than %d nodes (max_nodes)", m->desc.max_nodes);
        } else if (f.num == 5) {
            ti__pb t;
            if (!ti__pb_enter(&c, &f, &t)) break;
            int v;
            snprintf(what, sizeof what, "initializer %d", n_init++);
            st = ti__ox_const(x, &t, what, NULL, &v);
        } else if (f.num == 15) {
            return ti__fail(x->err, TI_ERR_UNSUPPORTED, x->file,
                            "the graph has sparse initializers (sparse_initializer)");
        }
    }
    if (st != TI_OK) return st;
    if (c.fault) return ti__ox_wire_fail(x, &c, TI__OX_GRAPH, "graph");
    if (!ti__grow(&m->al, (void **)&m->nodes, &m->cap_nodes, n_nodes, sizeof(ti__node)))
        return ti__ox_oom(x);
    /* pass 2: graph inputs that are not initializers */
    int k = 0;
    c = *g;
    while (ti__pb_next(&c, &f)) {
        if (f.num != 11) continue;
        snprintf(what, sizeof what, "graph input %d", k++);
        if ((st = ti__ox_vinfo_parse(x, &c, &f, what, &vi)) != TI_OK) return st;
        const char *name;
        if ((st = ti__ox_cstr(x, vi.name, vi.name_len, "graph input", &name)) != TI_OK) return st;
        if (name[0] == 0)
            return ti__fail(x->err, TI_ERR_BAD_MODEL, x->file, "%s has no name", what);
        int v = ti__model_find_value(m, name);
        if (v >= 0 && m->values[v].is_const) continue; /* old models list initializers too */
        if (v >= 0)
            return ti__fail(x->err, TI_ERR_BAD_MODEL, x->file, "graph input '%s' is listed twice",
                            name);
        if ((v = ti__model_add_value(m, name)) < 0 || !ti__model_add_input(m, v))
            return ti__ox_oom(x);
        if ((st = ti__ox_vinfo_apply(x, v, &vi, "graph input", 1)) != TI_OK) return st;
    }
    if (c.fault) return ti__ox_wire_fail(x, &c, TI__OX_GRAPH, "graph");
    /* pass 3: nodes */
    k = 0;
    c = *g;
    while (ti__pb_next(&c, &f))
        if (f.num == 1 && (st = ti__ox_node(x, &c, &f, k++)) != TI_OK) return st;
    if (c.fault) return ti__ox_wire_fail(x, &c, TI__OX_GRAPH, "graph");
    /* pass 4: outputs, then value_info (advisory: fills only what is not known) */
    for (int pass = 0; pass < 2; pass++) {
        k = 0;
        c = *g;
        while (ti__pb_next(&c, &f)) {
            if (f.num != (pass == 0 ? 12u : 13u)) continue;
            snprintf(what, sizeof what, "graph %s %d", pass == 0 ? "output" : "value_info", k++);
            if ((st = ti__ox_vinfo_parse(x, &c, &f, what, &vi)) != TI_OK) return st;
            const char *name;
            if ((st = ti__ox_cstr(x, vi.name, vi.name_len, what, &name)) != TI_OK) return st;
            int v = name[0] ? ti__model_find_value(m, name) : -1;
            if (pass == 1) {
                if (v >= 0 && (st = ti__ox_vinfo_apply(x, v, &vi, what, 0)) != TI_OK) return st;
                continue;
            }
            if (name[0] == 0)
                return ti__fail(x->err, TI_ERR_BAD_MODEL, x->file, "%s has no name", what);
            if (v < 0)
                return ti__fail(x->err, TI_ERR_BAD_MODEL, x->file,
                                "graph output '%s' is not produced by any node, graph input or "
                                "initializer", name);
            if (!ti__model_add_output(m, v)) return ti__ox_oom(x);
            if ((st = ti__ox_vinfo_apply(x, v, &vi, "graph output", 1)) != TI_OK) return st;
        }
        if (c.fault) return ti__ox_wire_fail(x, &c, TI__OX_GRAPH, "graph");
    }
    return ti__ox_validate(x);
}

TI__PRIVATE ti_status ti__ox_model(ti__ox *x, const uint8_t *data, size_t size) {
    ti_model *m = x->m;
    ti__pb c, oc, g;
    ti__pb_field f, of, gf;
    int64_t ir_version = 0, opset = 0;
    int n_graphs = 0, has_opset = 0;
    if (size == 0) return ti__fail(x->err, TI_ERR_BAD_MODEL, x->file, "not an ONNX model: empty");
    ti__pb_init(&c, data, size);
    memset(&gf, 0, sizeof gf);
    while (ti__pb_next(&c, &f)) {
        if (f.num == 1 && ti__pb_expect(&c, &f, 0)) ir_version = ti__pb_as_i64(f.u);
        else if (f.num == 7 && ti__pb_expect(&c, &f, 2)) gf = f, n_graphs++;
        else if (f.num == 8 && ti__pb_enter(&c, &f, &oc)) {
            const uint8_t *dom = NULL;
            size_t dom_len = 0;
            int64_t version = 0;
            while (ti__pb_next(&oc, &of)) {
                if (of.num == 1 && ti__pb_expect(&oc, &of, 2)) dom = of.data, dom_len = of.len;
                if (of.num == 2 && ti__pb_expect(&oc, &of, 0)) version = ti__pb_as_i64(of.u);
            }
            ti__pb_take_fault(&c, &oc);
            if (dom_len == 0 || ti__ox_streq(dom, dom_len, "ai.onnx")) {
                opset = version;
                has_opset = 1;
            }
        }
    }
    if (c.fault) return ti__ox_wire_fail(x, &c, TI__OX_MODEL, NULL);
    if (n_graphs == 0)
        return ti__fail(x->err, TI_ERR_BAD_MODEL, x->file, "not an ONNX model: no graph (field 7)");
    if (n_graphs > 1)
        return ti__fail(x->err, TI_ERR_BAD_MODEL, x->file, "the model has %d graphs", n_graphs);
    /* IR versions 1 and 2 predate opset_import and mean opset 1; newer opsets than the
     * kernels know are recorded as they are (kernels follow the latest semantics they know) */
    if (!has_opset) opset = ir_version < 3 ? 1 : 0;
    if ((has_opset && opset < 1) || opset > INT_MAX)
        return ti__fail(x->err, TI_ERR_BAD_MODEL, x->file, "opset version %lld is not valid",
                        (long long)opset);
    m->opset = (int)opset;
    m->format = TI_FORMAT_ONNX;
    ti__pb_init(&c, data, size);
    if (!ti__pb_enter(&c, &gf, &g)) return ti__ox_wire_fail(x, &c, TI__OX_MODEL, NULL);
    ti_status st = ti__ox_graph(x, &g);
    if (st != TI_OK) return st;
    if (m->opset == 0)
        for (int i = 0; i < m->n_nodes; i++)
            if (m->nodes[i].domain[0] == 0)
                return ti__ox_node_fail(x, TI_ERR_BAD_MODEL, i, "the model imports no opset of "
                                        "the default ONNX domain (opset_import)");
    return TI_OK;
}

TI__PRIVATE ti_status ti__onnx_parse(ti_model *m, const uint8_t *data, size_t size,
                                     ti_error *err) {
    ti__ox x;
    memset(&x, 0, sizeof x);
    x.m = m;
    x.err = err;
    x.file = m->name;
    x.max_rank = m->desc.max_rank > 0 && m->desc.max_rank < TI_MAX_DIMS ? m->desc.max_rank
                                                                        : TI_MAX_DIMS;
    ti_status st = ti__ox_model(&x, data, size);
    ti__free(&m->al, x.name_buf, x.name_cap);
    return st;
}
#endif /* TI_NO_ONNX */
