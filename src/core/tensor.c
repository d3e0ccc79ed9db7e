/* Tensors: dtype tables, shapes, broadcasting, element access of any dtype and the
 * half-precision conversions. Relies on internal.h. Must not allocate. */

static const struct {
    const char *name;
    size_t size;
} ti__dtype_table[TI_DTYPE_COUNT] = {
    {"unknown", 0}, {"float32", 4}, {"float16", 2}, {"float64", 8}, {"int8", 1},
    {"uint8", 1},   {"int16", 2},   {"uint16", 2},  {"int32", 4},   {"uint32", 4},
    {"int64", 8},   {"uint64", 8},  {"bool", 1},    {"bfloat16", 2}, {"string", 0},
};

TI_API const char *ti_dtype_name(ti_dtype t) {
    return (unsigned)t < TI_DTYPE_COUNT ? ti__dtype_table[t].name : "unknown";
}
TI_API size_t ti_dtype_size(ti_dtype t) {
    return (unsigned)t < TI_DTYPE_COUNT ? ti__dtype_table[t].size : 0;
}

TI__PRIVATE int ti__dtype_is_float(ti_dtype t) {
    return t == TI_DTYPE_F32 || t == TI_DTYPE_F16 || t == TI_DTYPE_F64 || t == TI_DTYPE_BF16;
}
TI__PRIVATE int ti__dtype_is_int(ti_dtype t) {
    return t == TI_DTYPE_I8 || t == TI_DTYPE_U8 || t == TI_DTYPE_I16 || t == TI_DTYPE_U16 ||
           t == TI_DTYPE_I32 || t == TI_DTYPE_U32 || t == TI_DTYPE_I64 || t == TI_DTYPE_U64;
}

/* ONNX TensorProto.DataType -> ti_dtype; TI_DTYPE_UNKNOWN for the types tinyinfer has no
 * dtype for (complex, float8, int4, ...). Shared by the reader and by the kernels that
 * take a dtype attribute (Cast, EyeLike, QuantizeLinear); those refuse STRING themselves. */
TI__PRIVATE ti_dtype ti__onnx_dtype(int64_t t) {
    switch (t) {
    case 1: return TI_DTYPE_F32;
    case 2: return TI_DTYPE_U8;
    case 3: return TI_DTYPE_I8;
    case 4: return TI_DTYPE_U16;
    case 5: return TI_DTYPE_I16;
    case 6: return TI_DTYPE_I32;
    case 7: return TI_DTYPE_I64;
    case 8: return TI_DTYPE_STRING;
    case 9: return TI_DTYPE_BOOL;
    case 10: return TI_DTYPE_F16;
    case 11: return TI_DTYPE_F64;
    case 12: return TI_DTYPE_U32;
    case 13: return TI_DTYPE_U64;
    case 16: return TI_DTYPE_BF16;
    default: return TI_DTYPE_UNKNOWN;
    }
}

TI__PRIVATE size_t ti__shape_numel(int rank, const int64_t *dims) {
    size_t n = 1;
    for (int i = 0; i < rank; i++) n *= (size_t)(dims[i] < 0 ? 0 : dims[i]);
    return n;
}
TI__PRIVATE size_t ti__numel(const ti_tensor *t) { return ti__shape_numel(t->rank, t->shape); }
TI_API size_t ti_tensor_numel(const ti_tensor *t) { return t ? ti__numel(t) : 0; }

TI__PRIVATE int ti__dims_numel(int rank, const int64_t *dims, size_t *numel) {
    size_t n = 1;
    for (int i = 0; i < rank; i++) {
        /* a dim past size_t (32-bit hosts) would wrap in the cast: 2^32 + 1 as 1 */
        if (dims[i] < 0 || (uint64_t)(size_t)dims[i] != (uint64_t)dims[i] ||
            !ti__mul_size(n, (size_t)dims[i], &n))
            return 0;
    }
    *numel = n;
    return 1;
}

TI__PRIVATE int ti__set_shape(ti_tensor *t, ti_dtype dt, int rank, const int64_t *dims) {
    size_t n;
    if (rank < 0 || rank > TI_MAX_DIMS || !ti__dims_numel(rank, dims, &n)) return 0;
    size_t bytes;
    if (!ti__mul_size(n, ti_dtype_size(dt), &bytes)) return 0;
    if (bytes >> 23 >> 23) return 0; /* no sane tensor is 64 TiB (2^46 bytes; in two shifts,
                                        which 32-bit hosts also allow) */
    t->dtype = dt;
    t->rank = rank;
    for (int i = 0; i < rank; i++) t->shape[i] = dims[i];
    for (int i = rank; i < TI_MAX_DIMS; i++) t->shape[i] = 0;
    t->size_bytes = bytes;
    return 1;
}

TI__PRIVATE void ti__strides(int rank, const int64_t *dims, int64_t *strides) {
    int64_t s = 1;
    for (int i = rank - 1; i >= 0; i--) {
        strides[i] = s;
        s *= dims[i];
    }
}

TI__PRIVATE int ti__broadcast_shape(int ra, const int64_t *a, int rb, const int64_t *b, int *rout,
                                    int64_t *out) {
    int r = ra > rb ? ra : rb;
    if (r > TI_MAX_DIMS) return 0;
    for (int i = 0; i < r; i++) {
        int64_t da = i < r - ra ? 1 : a[i - (r - ra)];
        int64_t db = i < r - rb ? 1 : b[i - (r - rb)];
        if (da == db || db == 1) out[i] = da;
        else if (da == 1) out[i] = db;
        else return 0;
    }
    *rout = r;
    return 1;
}

/* IEEE half <-> float, round to nearest even. */
TI__PRIVATE float ti__f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
    if (exp == 0) {
        if (man == 0) bits = sign;
        else { /* subnormal: normalise */
            int e = -1;
            do { e++; man <<= 1; } while ((man & 0x400) == 0);
            bits = sign | ((uint32_t)(127 - 15 - e) << 23) | ((man & 0x3ff) << 13);
        }
    } else if (exp == 31) bits = sign | 0x7f800000u | (man << 13);
    else bits = sign | ((exp + 112) << 23) | (man << 13);
    float f;
    memcpy(&f, &bits, 4);
    return f;
}
TI__PRIVATE uint16_t ti__f32_to_f16(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000, absx = x & 0x7fffffffu;
    if (absx >= 0x7f800000u) return (uint16_t)(sign | 0x7c00 | (absx > 0x7f800000u ? 0x200 : 0));
    if (absx >= 0x477ff000u) return (uint16_t)(sign | 0x7c00); /* overflow to inf */
    if (absx < 0x38800000u) { /* subnormal or zero in half */
        if (absx < 0x33000000u) return (uint16_t)sign;
        uint32_t e = absx >> 23, man = (absx & 0x7fffff) | 0x800000;
        int shift = (int)(126 - e); /* value = man * 2^(e-150); half's unit is 2^-24 */
        uint32_t r = man >> shift, rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (r & 1))) r++;
        return (uint16_t)(sign | r);
    }
    uint32_t r = ((absx - 0x38000000u) >> 13), rem = absx & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (r & 1))) r++;
    return (uint16_t)(sign | r);
}
TI__PRIVATE float ti__bf16_to_f32(uint16_t h) {
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}
TI__PRIVATE uint16_t ti__f32_to_bf16(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40);
    x += 0x7fff + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}

TI__PRIVATE double ti__get_f64(const ti_tensor *t, size_t i) {
    const void *d = t->data;
    switch (t->dtype) {
    case TI_DTYPE_F32: return ((const float *)d)[i];
    case TI_DTYPE_F64: return ((const double *)d)[i];
    case TI_DTYPE_F16: return ti__f16_to_f32(((const uint16_t *)d)[i]);
    case TI_DTYPE_BF16: return ti__bf16_to_f32(((const uint16_t *)d)[i]);
    case TI_DTYPE_I8: return ((const int8_t *)d)[i];
    case TI_DTYPE_U8: return ((const uint8_t *)d)[i];
    case TI_DTYPE_BOOL: return ((const uint8_t *)d)[i] != 0;
    case TI_DTYPE_I16: return ((const int16_t *)d)[i];
    case TI_DTYPE_U16: return ((const uint16_t *)d)[i];
    case TI_DTYPE_I32: return ((const int32_t *)d)[i];
    case TI_DTYPE_U32: return ((const uint32_t *)d)[i];
    case TI_DTYPE_I64: return (double)((const int64_t *)d)[i];
    case TI_DTYPE_U64: return (double)((const uint64_t *)d)[i];
    default: return 0.0;
    }
}

TI__PRIVATE int64_t ti__get_i64(const ti_tensor *t, size_t i) {
    const void *d = t->data;
    switch (t->dtype) {
    case TI_DTYPE_I64: return ((const int64_t *)d)[i];
    case TI_DTYPE_I32: return ((const int32_t *)d)[i];
    case TI_DTYPE_U64: return (int64_t)((const uint64_t *)d)[i];
    case TI_DTYPE_U32: return ((const uint32_t *)d)[i];
    case TI_DTYPE_I16: return ((const int16_t *)d)[i];
    case TI_DTYPE_U16: return ((const uint16_t *)d)[i];
    case TI_DTYPE_I8: return ((const int8_t *)d)[i];
    case TI_DTYPE_U8: return ((const uint8_t *)d)[i];
    case TI_DTYPE_BOOL: return ((const uint8_t *)d)[i] != 0;
    default: {
        double v = ti__get_f64(t, i);
        if (v != v) return 0;
        if (v >= 9.2e18) return INT64_MAX;
        if (v <= -9.2e18) return INT64_MIN;
        return (int64_t)v;
    }
    }
}

TI__PRIVATE void ti__set_f64(ti_tensor *t, size_t i, double v) {
    void *d = t->data;
    switch (t->dtype) {
    case TI_DTYPE_F32: ((float *)d)[i] = (float)v; break;
    case TI_DTYPE_F64: ((double *)d)[i] = v; break;
    case TI_DTYPE_F16: ((uint16_t *)d)[i] = ti__f32_to_f16((float)v); break;
    case TI_DTYPE_BF16: ((uint16_t *)d)[i] = ti__f32_to_bf16((float)v); break;
    case TI_DTYPE_BOOL: ((uint8_t *)d)[i] = v != 0.0; break;
    default: ti__set_i64(t, i, (v != v) ? 0 : v >= 9.2e18 ? INT64_MAX : v <= -9.2e18 ? INT64_MIN : (int64_t)v); break;
    }
}

TI__PRIVATE void ti__set_i64(ti_tensor *t, size_t i, int64_t v) {
    void *d = t->data;
    switch (t->dtype) {
    case TI_DTYPE_I64: ((int64_t *)d)[i] = v; break;
    case TI_DTYPE_I32: ((int32_t *)d)[i] = (int32_t)v; break;
    case TI_DTYPE_U64: ((uint64_t *)d)[i] = (uint64_t)v; break;
    case TI_DTYPE_U32: ((uint32_t *)d)[i] = (uint32_t)v; break;
    case TI_DTYPE_I16: ((int16_t *)d)[i] = (int16_t)v; break;
    case TI_DTYPE_U16: ((uint16_t *)d)[i] = (uint16_t)v; break;
    case TI_DTYPE_I8: ((int8_t *)d)[i] = (int8_t)v; break;
    case TI_DTYPE_U8: ((uint8_t *)d)[i] = (uint8_t)v; break;
    case TI_DTYPE_BOOL: ((uint8_t *)d)[i] = v != 0; break;
    case TI_DTYPE_F32: case TI_DTYPE_F64: case TI_DTYPE_F16: case TI_DTYPE_BF16:
        ti__set_f64(t, i, (double)v);
        break;
    default: break;
    }
}

TI_API void ti_tensor_release(ti_tensor *t) {
    if (t == NULL) return;
    TI_FREE(t->data);
    TI_FREE((void *)t->name);
    memset(t, 0, sizeof *t);
}
