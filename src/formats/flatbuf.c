/* FlatBuffers binary-format accessors: the root offset, tables found through their vtables,
 * scalars with defaults, vectors, strings, nested tables and unions, each checked against
 * the buffer before it is read, with a sticky failure record like the protobuf cursor.
 * Relies on internal.h only; knows no schema (formats/tflite.c maps field ids to meaning).
 * Must never read outside [base, base + size), trust alignment (bytes are assembled
 * explicitly, little-endian), follow an offset before checking it, or allocate. */
#ifndef TI_NO_TFLITE

/* Why a buffer went bad; the first failure is kept. */
typedef enum ti__fb_fault {
    TI__FB_OK = 0,
    TI__FB_OUT_OF_BOUNDS, /* an offset, a table, a field or a vector's data leaves the buffer */
    TI__FB_BAD_VTABLE,    /* a vtable of fewer than 4 bytes, an odd size, or a field past its table */
    TI__FB_TOO_DEEP       /* tables nested deeper than TI_MAX_DEPTH */
} ti__fb_fault;

/* The whole buffer and its failure record. Every accessor returns a default (0, an absent
 * table, an empty vector) once `fault` is set, so callers check it once per record. */
typedef struct ti__fb {
    const uint8_t *base;
    size_t size;
    int fault;          /* ti__fb_fault */
    const char *what;   /* what was being read: "table", "vector", "string", "vtable", ... */
    uint64_t fault_at;  /* byte offset of the offending offset, table or vector */
    uint64_t fault_end; /* first byte past what it needed (OUT_OF_BOUNDS), or a bad value */
} ti__fb;

/* A table: its position, its vtable's position and sizes. pos == 0 means absent (no real
 * table starts at byte 0: the root offset lives there). */
typedef struct ti__fb_table {
    uint64_t pos, vt;
    uint32_t vt_size, tab_size; /* bytes of the vtable and of the table's inline part */
    int depth;                  /* 0 for the root */
} ti__fb_table;

/* A vector: the position of element 0, the element count and size. */
typedef struct ti__fb_vec {
    uint64_t pos;
    uint32_t len;
    uint32_t elem;
    int depth; /* of the table that holds it */
} ti__fb_vec;

TI__PRIVATE void ti__fb_init(ti__fb *b, const uint8_t *data, size_t size) {
    static const uint8_t empty[1] = {0};
    memset(b, 0, sizeof *b);
    b->base = data ? data : empty;
    b->size = data ? size : 0;
}

TI__PRIVATE void ti__fb_set_fault(ti__fb *b, int fault, const char *what, uint64_t at,
                                  uint64_t end) {
    if (b->fault) return; /* keep the first */
    b->fault = fault;
    b->what = what;
    b->fault_at = at;
    b->fault_end = end;
}

/* 1 when [pos, pos + n) lies in the buffer; marks the buffer bad otherwise. */
TI__PRIVATE int ti__fb_check(ti__fb *b, uint64_t pos, uint64_t n, const char *what) {
    if (b->fault) return 0;
    if (pos <= (uint64_t)b->size && n <= (uint64_t)b->size - pos) return 1;
    ti__fb_set_fault(b, TI__FB_OUT_OF_BOUNDS, what, pos, pos + n);
    return 0;
}

/* Raw little-endian reads at a position already checked. */
TI__PRIVATE uint32_t ti__fb_rd_u16(const ti__fb *b, uint64_t pos) {
    const uint8_t *p = b->base + pos;
    return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}
TI__PRIVATE uint32_t ti__fb_rd_u32(const ti__fb *b, uint64_t pos) {
    const uint8_t *p = b->base + pos;
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
TI__PRIVATE uint64_t ti__fb_rd_u64(const ti__fb *b, uint64_t pos) {
    return (uint64_t)ti__fb_rd_u32(b, pos) | (uint64_t)ti__fb_rd_u32(b, pos + 4) << 32;
}

/* Two's-complement views, without implementation-defined conversions. */
TI__PRIVATE int64_t ti__fb_sext(uint64_t u, int bits) {
    if (bits < 64 && (u >> (bits - 1)) & 1) u |= ~(uint64_t)0 << bits;
    int64_t r;
    memcpy(&r, &u, sizeof r);
    return r;
}

/* Opens the table at pos: reads its soffset, finds and checks its vtable. */
TI__PRIVATE int ti__fb_table_at(ti__fb *b, uint64_t pos, int depth, ti__fb_table *t) {
    memset(t, 0, sizeof *t);
    if (b->fault) return 0;
    if (depth > TI_MAX_DEPTH) {
        ti__fb_set_fault(b, TI__FB_TOO_DEEP, "table", pos, (uint64_t)depth);
        return 0;
    }
    if (pos < 4) { /* bytes 0..3 hold the root offset: no table starts there */
        ti__fb_set_fault(b, TI__FB_BAD_VTABLE, "table offset", pos, pos);
        return 0;
    }
    if (!ti__fb_check(b, pos, 4, "table")) return 0;
    /* vtable = table - soffset (the soffset is signed: the vtable may lie either side) */
    int64_t soff = ti__fb_sext(ti__fb_rd_u32(b, pos), 32);
    int64_t vt = (int64_t)pos - soff;
    if (vt < 0 || !ti__fb_check(b, (uint64_t)vt, 4, "vtable")) {
        if (vt < 0) ti__fb_set_fault(b, TI__FB_OUT_OF_BOUNDS, "vtable", pos, 0);
        return 0;
    }
    uint32_t vt_size = ti__fb_rd_u16(b, (uint64_t)vt), tab_size = ti__fb_rd_u16(b, (uint64_t)vt + 2);
    if (vt_size < 4 || (vt_size & 1) != 0 || tab_size < 4) {
        ti__fb_set_fault(b, TI__FB_BAD_VTABLE, "vtable", (uint64_t)vt, vt_size);
        return 0;
    }
    if (!ti__fb_check(b, (uint64_t)vt, vt_size, "vtable") ||
        !ti__fb_check(b, pos, tab_size, "table"))
        return 0;
    t->pos = pos;
    t->vt = (uint64_t)vt;
    t->vt_size = vt_size;
    t->tab_size = tab_size;
    t->depth = depth;
    return 1;
}

/* The root table: a uoffset at byte 0. */
TI__PRIVATE int ti__fb_root(ti__fb *b, ti__fb_table *t) {
    memset(t, 0, sizeof *t);
    if (!ti__fb_check(b, 0, 4, "root offset")) return 0;
    return ti__fb_table_at(b, ti__fb_rd_u32(b, 0), 0, t);
}

/* Position of field `id` (bytes wide) of table t, or 0 when the field is absent. A field
 * that does not fit in its table's inline part marks the buffer bad. */
TI__PRIVATE uint64_t ti__fb_field(ti__fb *b, const ti__fb_table *t, int id, uint32_t bytes) {
    if (b->fault || t->pos == 0 || id < 0) return 0;
    uint64_t slot = 4 + 2 * (uint64_t)id;
    if (slot + 2 > t->vt_size) return 0; /* older writers: a shorter vtable */
    uint32_t off = ti__fb_rd_u16(b, t->vt + slot);
    if (off == 0) return 0;
    if (off < 4 || (uint64_t)off + bytes > t->tab_size) {
        ti__fb_set_fault(b, TI__FB_BAD_VTABLE, "field", t->pos, off);
        return 0;
    }
    return t->pos + off; /* inside the table, already checked against the buffer */
}

/* Scalars: the field's value, or def when absent. */
TI__PRIVATE uint64_t ti__fb_u(ti__fb *b, const ti__fb_table *t, int id, uint32_t bytes,
                              uint64_t def) {
    uint64_t p = ti__fb_field(b, t, id, bytes);
    if (p == 0) return def;
    switch (bytes) {
    case 1: return b->base[p];
    case 2: return ti__fb_rd_u16(b, p);
    case 4: return ti__fb_rd_u32(b, p);
    default: return ti__fb_rd_u64(b, p);
    }
}
TI__PRIVATE int64_t ti__fb_i(ti__fb *b, const ti__fb_table *t, int id, uint32_t bytes,
                             int64_t def) {
    uint64_t p = ti__fb_field(b, t, id, bytes);
    if (p == 0) return def;
    uint64_t u = bytes == 1 ? b->base[p] : bytes == 2 ? ti__fb_rd_u16(b, p)
               : bytes == 4 ? ti__fb_rd_u32(b, p) : ti__fb_rd_u64(b, p);
    return ti__fb_sext(u, (int)bytes * 8);
}
TI__PRIVATE float ti__fb_f32(ti__fb *b, const ti__fb_table *t, int id, float def) {
    uint64_t p = ti__fb_field(b, t, id, 4);
    if (p == 0) return def;
    uint32_t u = ti__fb_rd_u32(b, p);
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Follows the uoffset stored at field `id`; returns the target position, 0 when absent. */
TI__PRIVATE uint64_t ti__fb_deref(ti__fb *b, const ti__fb_table *t, int id, const char *what) {
    uint64_t p = ti__fb_field(b, t, id, 4);
    if (p == 0) return 0;
    uint64_t target = p + ti__fb_rd_u32(b, p);
    if (!ti__fb_check(b, target, 4, what)) return 0;
    return target;
}

/* Vector at position pos (its length word), elements of elem bytes. */
TI__PRIVATE int ti__fb_vec_at(ti__fb *b, uint64_t pos, uint32_t elem, int depth, ti__fb_vec *v) {
    memset(v, 0, sizeof *v);
    if (!ti__fb_check(b, pos, 4, "vector")) return 0;
    uint32_t len = ti__fb_rd_u32(b, pos);
    /* len * elem fits in 64 bits: both are below 2^32 */
    uint64_t need = (uint64_t)len * elem;
    if (need > (uint64_t)b->size - (pos + 4)) {
        ti__fb_set_fault(b, TI__FB_OUT_OF_BOUNDS, "vector", pos, pos + 4 + need);
        return 0;
    }
    v->pos = pos + 4;
    v->len = len;
    v->elem = elem;
    v->depth = depth;
    return 1;
}

/* Vector field `id` of t with elements of elem bytes (4 for offsets to tables or strings).
 * Returns 1 when present (v filled), 0 when absent or bad (v empty; check b->fault). */
TI__PRIVATE int ti__fb_vector(ti__fb *b, const ti__fb_table *t, int id, uint32_t elem,
                              ti__fb_vec *v) {
    memset(v, 0, sizeof *v);
    uint64_t pos = ti__fb_deref(b, t, id, "vector");
    if (pos == 0) return 0;
    return ti__fb_vec_at(b, pos, elem, t->depth, v);
}

/* Element i of a scalar vector (i < v->len, checked). */
TI__PRIVATE uint64_t ti__fb_vec_u(ti__fb *b, const ti__fb_vec *v, uint32_t i) {
    if (b->fault || i >= v->len) return 0;
    uint64_t p = v->pos + (uint64_t)i * v->elem;
    switch (v->elem) {
    case 1: return b->base[p];
    case 2: return ti__fb_rd_u16(b, p);
    case 4: return ti__fb_rd_u32(b, p);
    default: return ti__fb_rd_u64(b, p);
    }
}
TI__PRIVATE int64_t ti__fb_vec_i(ti__fb *b, const ti__fb_vec *v, uint32_t i) {
    return ti__fb_sext(ti__fb_vec_u(b, v, i), (int)v->elem * 8);
}
TI__PRIVATE float ti__fb_vec_f32(ti__fb *b, const ti__fb_vec *v, uint32_t i) {
    uint32_t u = (uint32_t)ti__fb_vec_u(b, v, i);
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Table i of a vector of tables (elements are uoffsets relative to themselves). */
TI__PRIVATE int ti__fb_vec_table(ti__fb *b, const ti__fb_vec *v, uint32_t i, ti__fb_table *t) {
    memset(t, 0, sizeof *t);
    if (b->fault || i >= v->len || v->elem != 4) return 0;
    uint64_t p = v->pos + (uint64_t)i * 4;
    return ti__fb_table_at(b, p + ti__fb_rd_u32(b, p), v->depth + 1, t);
}

/* Nested table at field `id`; 0 when absent (t empty) or bad. */
TI__PRIVATE int ti__fb_subtable(ti__fb *b, const ti__fb_table *t, int id, ti__fb_table *child) {
    memset(child, 0, sizeof *child);
    uint64_t pos = ti__fb_deref(b, t, id, "table");
    if (pos == 0) return 0;
    return ti__fb_table_at(b, pos, t->depth + 1, child);
}

/* String at field `id`: its bytes (not NUL-terminated as far as the reader is concerned:
 * the terminator is not trusted) and length. 0 when absent (*s = "", *len = 0) or bad. */
TI__PRIVATE int ti__fb_string(ti__fb *b, const ti__fb_table *t, int id, const uint8_t **s,
                              size_t *len) {
    static const uint8_t empty[1] = {0};
    ti__fb_vec v;
    *s = empty;
    *len = 0;
    uint64_t pos = ti__fb_deref(b, t, id, "string");
    if (pos == 0 || !ti__fb_vec_at(b, pos, 1, t->depth, &v)) return 0;
    *s = b->base + v.pos;
    *len = v.len;
    return 1;
}

/* Union: the type at field type_id (a ubyte) and the table at type_id + 1. Returns the
 * type (0: NONE); *value is empty when the type is NONE or the value is absent. */
TI__PRIVATE unsigned ti__fb_union(ti__fb *b, const ti__fb_table *t, int type_id,
                                  ti__fb_table *value) {
    memset(value, 0, sizeof *value);
    unsigned type = (unsigned)ti__fb_u(b, t, type_id, 1, 0);
    if (type != 0) ti__fb_subtable(b, t, type_id + 1, value);
    return type;
}

/* Describes b's fault in words into buf. */
TI__PRIVATE void ti__fb_describe(const ti__fb *b, char *buf, size_t cap) {
    const char *w = b->what ? b->what : "data";
    switch (b->fault) {
    case TI__FB_OUT_OF_BOUNDS:
        if (b->fault_end > b->fault_at)
            snprintf(buf, cap, "%s at byte %llu needs bytes up to %llu, past the end of the "
                     "%zu-byte buffer", w, (unsigned long long)b->fault_at,
                     (unsigned long long)b->fault_end, b->size);
        else
            snprintf(buf, cap, "%s offset at byte %llu points outside the %zu-byte buffer", w,
                     (unsigned long long)b->fault_at, b->size);
        break;
    case TI__FB_BAD_VTABLE:
        snprintf(buf, cap, "invalid %s at byte %llu (value %llu)", w,
                 (unsigned long long)b->fault_at, (unsigned long long)b->fault_end);
        break;
    case TI__FB_TOO_DEEP:
        snprintf(buf, cap, "tables nest deeper than %d at byte %llu", TI_MAX_DEPTH,
                 (unsigned long long)b->fault_at);
        break;
    default: snprintf(buf, cap, "malformed data"); break;
    }
}
#endif /* TI_NO_TFLITE */
