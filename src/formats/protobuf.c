/* Protobuf wire-format decoder: a bounds-checked cursor with a sticky failure record,
 * field-by-field iteration, nested messages with a depth limit, and packed or unpacked
 * repeated scalars. Relies on internal.h only; knows no schema (formats/onnx.c maps field
 * numbers to meaning). Must never read outside [base, end), trust a length before checking
 * it against the bytes left, or allocate. */
#ifndef TI_NO_ONNX

/* Why a cursor went bad; the first failure is kept (the record is sticky). */
typedef enum ti__pb_fault {
    TI__PB_OK = 0,
    TI__PB_TRUNCATED,       /* a varint, fixed value or length-delimited field runs past the end */
    TI__PB_OVERLONG,        /* a varint of more than 10 bytes or above 64 bits */
    TI__PB_BAD_WIRE,        /* wire types 3/4 (groups), 6, 7 */
    TI__PB_BAD_FIELD,       /* field number 0 or above 2^29-1 */
    TI__PB_WRONG_WIRE,      /* a known field with a wire type its schema does not allow */
    TI__PB_BAD_PACKED,      /* a packed run whose length is not a whole number of elements */
    TI__PB_TOO_DEEP         /* nesting deeper than TI_MAX_DEPTH */
} ti__pb_fault;

typedef struct ti__pb {
    const uint8_t *p, *end; /* unread bytes of this message */
    const uint8_t *base;    /* start of the whole buffer, for byte offsets in messages */
    int depth;              /* nesting level of this message (0: the outermost) */
    int fault;              /* ti__pb_fault; non-zero makes every read return 0 */
    uint32_t fault_field;   /* field number involved, 0 if none */
    int fault_wire;         /* wire type found (BAD_WIRE, WRONG_WIRE) */
    int fault_expect;       /* wire type expected (WRONG_WIRE) */
    uint64_t fault_need;    /* bytes a field needs (TRUNCATED of a length-delimited field) */
    size_t fault_left;      /* bytes that were left */
    size_t fault_at;        /* byte offset from base where the problem starts */
} ti__pb;

/* One field as read from the wire. */
typedef struct ti__pb_field {
    uint32_t num;        /* field number */
    int wire;            /* 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32 */
    uint64_t u;          /* wire 0, 1, 5: the value (fixed values in host order) */
    const uint8_t *data; /* wire 2: the bytes, len of them, already checked to be in bounds */
    size_t len;
    size_t at;           /* byte offset of the field's key from base */
} ti__pb_field;

TI__PRIVATE void ti__pb_init(ti__pb *c, const uint8_t *data, size_t size) {
    static const uint8_t empty[1] = {0};
    if (data == NULL) data = empty, size = 0; /* NULL + 0 is undefined in C */
    memset(c, 0, sizeof *c);
    c->p = data;
    c->end = data + size;
    c->base = data;
}

TI__PRIVATE void ti__pb_set_fault(ti__pb *c, int fault, uint32_t field, const uint8_t *where) {
    if (c->fault) return; /* keep the first */
    c->fault = fault;
    c->fault_field = field;
    c->fault_at = (size_t)(where - c->base);
    c->fault_left = (size_t)(c->end - where);
}

/* Reads a base-128 varint: at most 10 bytes, and the 10th may only carry bit 63. */
TI__PRIVATE uint64_t ti__pb_varint(ti__pb *c) {
    if (c->fault) return 0;
    const uint8_t *start = c->p;
    uint64_t v = 0;
    for (int i = 0; i < 10; i++) {
        if (c->p >= c->end) {
            ti__pb_set_fault(c, TI__PB_TRUNCATED, 0, start);
            return 0;
        }
        uint8_t b = *c->p++;
        if (i == 9 && b > 1) break; /* bits above 63 */
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if ((b & 0x80) == 0) return v;
    }
    ti__pb_set_fault(c, TI__PB_OVERLONG, 0, start);
    return 0;
}

TI__PRIVATE uint32_t ti__pb_fixed32(ti__pb *c) {
    if (c->fault) return 0;
    if (c->end - c->p < 4) {
        ti__pb_set_fault(c, TI__PB_TRUNCATED, 0, c->p);
        return 0;
    }
    const uint8_t *b = c->p;
    uint32_t v = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    c->p += 4;
    return v;
}

TI__PRIVATE uint64_t ti__pb_fixed64(ti__pb *c) {
    if (c->fault) return 0;
    if (c->end - c->p < 8) {
        ti__pb_set_fault(c, TI__PB_TRUNCATED, 0, c->p);
        return 0;
    }
    const uint8_t *b = c->p;
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | b[i];
    c->p += 8;
    return v;
}

/* Reads the next field of the message. Returns 1 with *f filled, 0 at the end of the
 * message or when the cursor is (or becomes) bad: check c->fault after the loop. Unknown
 * fields need no special handling: the caller ignores numbers it does not know, and the
 * cursor has already stepped over their bytes. */
TI__PRIVATE int ti__pb_next(ti__pb *c, ti__pb_field *f) {
    if (c->fault || c->p >= c->end) return 0;
    const uint8_t *key_at = c->p;
    uint64_t key = ti__pb_varint(c);
    if (c->fault) return 0;
    memset(f, 0, sizeof *f);
    f->at = (size_t)(key_at - c->base);
    if ((key >> 3) == 0 || (key >> 3) > 0x1fffffff) {
        ti__pb_set_fault(c, TI__PB_BAD_FIELD, 0, key_at);
        c->fault_need = key >> 3;
        return 0;
    }
    f->num = (uint32_t)(key >> 3);
    f->wire = (int)(key & 7);
    const uint8_t *val_at = c->p;
    switch (f->wire) {
    case 0: f->u = ti__pb_varint(c); break;
    case 1: f->u = ti__pb_fixed64(c); break;
    case 5: f->u = ti__pb_fixed32(c); break;
    case 2: {
        uint64_t len = ti__pb_varint(c);
        if (c->fault) break;
        if (len > (uint64_t)(c->end - c->p)) {
            ti__pb_set_fault(c, TI__PB_TRUNCATED, f->num, c->p);
            c->fault_need = len;
            return 0;
        }
        f->data = c->p;
        f->len = (size_t)len;
        c->p += (size_t)len;
        break;
    }
    default: /* 3/4: groups (deprecated, never used by ONNX); 6/7: not defined */
        ti__pb_set_fault(c, TI__PB_BAD_WIRE, f->num, key_at);
        c->fault_wire = f->wire;
        return 0;
    }
    if (c->fault) {
        if (c->fault_field == 0) c->fault_field = f->num;
        (void)val_at;
        return 0;
    }
    return 1;
}

/* Marks the cursor bad because field f has a wire type the schema does not allow. */
TI__PRIVATE void ti__pb_wrong_wire(ti__pb *c, const ti__pb_field *f, int expect) {
    if (c->fault) return;
    c->fault = TI__PB_WRONG_WIRE;
    c->fault_field = f->num;
    c->fault_wire = f->wire;
    c->fault_expect = expect;
    c->fault_at = f->at;
    c->fault_left = (size_t)(c->end - c->p);
}

/* Checks that f has the wire type the schema says; marks c bad otherwise. */
TI__PRIVATE int ti__pb_expect(ti__pb *c, const ti__pb_field *f, int wire) {
    if (f->wire == wire) return 1;
    ti__pb_wrong_wire(c, f, wire);
    return 0;
}

/* Opens the length-delimited field f (read from parent) as a nested message. On a wrong
 * wire type or too deep a nesting, marks parent bad and returns 0 (child is then empty). */
TI__PRIVATE int ti__pb_enter(ti__pb *parent, const ti__pb_field *f, ti__pb *child) {
    memset(child, 0, sizeof *child);
    child->base = parent->base;
    child->p = child->end = parent->p;
    child->depth = parent->depth + 1;
    if (!ti__pb_expect(parent, f, 2)) return 0;
    if (child->depth > TI_MAX_DEPTH) {
        ti__pb_set_fault(parent, TI__PB_TOO_DEEP, f->num, parent->base + f->at);
        return 0;
    }
    child->p = f->data;
    child->end = f->data + f->len;
    return 1;
}

/* Copies a child's fault into its parent so that one cursor carries the report. */
TI__PRIVATE void ti__pb_take_fault(ti__pb *parent, const ti__pb *child) {
    if (parent->fault || !child->fault) return;
    int depth = parent->depth;
    const uint8_t *p = parent->p, *end = parent->end;
    *parent = *child;
    parent->depth = depth;
    parent->p = p;
    parent->end = end;
}

/* ---- repeated scalars: packed (one wire-2 field) or unpacked (one field per element) --- */

/* Elements field f contributes to a repeated scalar whose elements use wire type elem_wire
 * (0, 1 or 5). Marks c bad (and returns 0) on a wire type that fits neither form or a packed
 * run that is not a whole number of elements. For varints the count is the number of
 * terminating bytes; ti__pb_scalars_next re-checks every varint when decoding. */
TI__PRIVATE size_t ti__pb_scalar_count(ti__pb *c, const ti__pb_field *f, int elem_wire) {
    if (f->wire == elem_wire) return 1;
    if (f->wire != 2) {
        ti__pb_wrong_wire(c, f, elem_wire);
        return 0;
    }
    size_t size = elem_wire == 5 ? 4 : elem_wire == 1 ? 8 : 0, n = 0;
    if (size != 0) {
        if (f->len % size != 0) {
            ti__pb_set_fault(c, TI__PB_BAD_PACKED, f->num, c->base + f->at);
            c->fault_need = size;
            return 0;
        }
        return f->len / size;
    }
    for (size_t i = 0; i < f->len; i++) n += (f->data[i] & 0x80) == 0;
    if (f->len > 0 && (f->data[f->len - 1] & 0x80) != 0) {
        ti__pb_set_fault(c, TI__PB_TRUNCATED, f->num, c->base + f->at);
        return 0;
    }
    return n;
}

/* Iterates the elements of one occurrence of a repeated scalar field. */
typedef struct ti__pb_scalars {
    ti__pb c;      /* over the packed bytes; empty for an unpacked element */
    int elem_wire; /* 0, 1 or 5 */
    int single;    /* 1: an unpacked element not yet returned */
    uint64_t value;
} ti__pb_scalars;

TI__PRIVATE void ti__pb_scalars_init(ti__pb_scalars *s, const ti__pb *parent,
                                     const ti__pb_field *f, int elem_wire) {
    memset(s, 0, sizeof *s);
    s->elem_wire = elem_wire;
    s->c.base = parent->base;
    s->c.depth = parent->depth + 1;
    if (f->wire == 2) {
        s->c.p = f->data;
        s->c.end = f->data + f->len;
    } else if (f->wire == elem_wire) {
        s->single = 1;
        s->value = f->u;
    } /* else: empty; ti__pb_scalar_count has already reported the wire type */
}

/* Next element into *v; 0 at the end or on a malformed element (check s->c.fault). */
TI__PRIVATE int ti__pb_scalars_next(ti__pb_scalars *s, uint64_t *v) {
    if (s->single) {
        s->single = 0;
        *v = s->value;
        return 1;
    }
    if (s->c.fault || s->c.p >= s->c.end) return 0;
    switch (s->elem_wire) {
    case 0: *v = ti__pb_varint(&s->c); break;
    case 1: *v = ti__pb_fixed64(&s->c); break;
    default: *v = ti__pb_fixed32(&s->c); break;
    }
    return s->c.fault == 0;
}

/* Signed views of the raw values, as protobuf defines them (two's complement; zigzag for
 * sint32/sint64). */
TI__PRIVATE int64_t ti__pb_as_i64(uint64_t u) {
    int64_t r;
    memcpy(&r, &u, sizeof r);
    return r;
}
TI__PRIVATE int32_t ti__pb_as_i32(uint64_t u) {
    uint32_t lo = (uint32_t)u;
    int32_t r;
    memcpy(&r, &lo, sizeof r);
    return r;
}
TI__PRIVATE int64_t ti__pb_zigzag64(uint64_t u) {
    return ti__pb_as_i64((u >> 1) ^ (~(u & 1) + 1));
}
TI__PRIVATE float ti__pb_as_f32(uint64_t u) {
    uint32_t lo = (uint32_t)u;
    float r;
    memcpy(&r, &lo, sizeof r);
    return r;
}
TI__PRIVATE double ti__pb_as_f64(uint64_t u) {
    double r;
    memcpy(&r, &u, sizeof r);
    return r;
}

/* Describes c's fault in words ("field 9 is truncated (needs 4096 bytes, 100 left)") into
 * buf. `field_name` names c->fault_field when the caller knows the schema, else NULL. */
TI__PRIVATE void ti__pb_describe(const ti__pb *c, const char *field_name, char *buf, size_t cap) {
    char fld[96];
    if (c->fault_field == 0) snprintf(fld, sizeof fld, "a field key");
    else if (field_name != NULL && field_name[0] != 0)
        snprintf(fld, sizeof fld, "field %u '%s'", (unsigned)c->fault_field, field_name);
    else snprintf(fld, sizeof fld, "field %u", (unsigned)c->fault_field);
    switch (c->fault) {
    case TI__PB_TRUNCATED:
        if (c->fault_need != 0)
            snprintf(buf, cap, "truncated %s at byte %zu (needs %llu bytes, %zu left)", fld,
                     c->fault_at, (unsigned long long)c->fault_need, c->fault_left);
        else snprintf(buf, cap, "truncated %s at byte %zu", fld, c->fault_at);
        break;
    case TI__PB_OVERLONG:
        snprintf(buf, cap, "%s at byte %zu has a varint longer than 64 bits", fld, c->fault_at);
        break;
    case TI__PB_BAD_WIRE:
        snprintf(buf, cap, "%s has wire type %d at byte %zu", fld, c->fault_wire, c->fault_at);
        break;
    case TI__PB_BAD_FIELD:
        snprintf(buf, cap, "invalid field number %llu at byte %zu",
                 (unsigned long long)c->fault_need, c->fault_at);
        break;
    case TI__PB_WRONG_WIRE:
        snprintf(buf, cap, "%s has wire type %d, expected %d (byte %zu)", fld, c->fault_wire,
                 c->fault_expect, c->fault_at);
        break;
    case TI__PB_BAD_PACKED:
        snprintf(buf, cap, "packed %s at byte %zu is not a multiple of %llu bytes", fld,
                 c->fault_at, (unsigned long long)c->fault_need);
        break;
    case TI__PB_TOO_DEEP:
        snprintf(buf, cap, "%s at byte %zu nests deeper than %d messages", fld, c->fault_at,
                 TI_MAX_DEPTH);
        break;
    default: snprintf(buf, cap, "malformed data at byte %zu", c->fault_at); break;
    }
}
#endif /* TI_NO_ONNX */
