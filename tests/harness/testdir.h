/* testdir.h: helpers shared by tests/conformance/onnx_runner.c and the programs in tools/.
 * Reads whole files and directories, loads tensors from .pb (onnx.TensorProto, through
 * ti_tensor_decode_onnx) and .npy files, writes .npy, converts f16/bf16, compares tensors
 * with tolerances. Model facts (format, opset, node domains) come from the library's API.
 * Uses only the public tinyinfer API: include tinyinfer.h first. Needs POSIX <dirent.h> and
 * <sys/stat.h>: define _POSIX_C_SOURCE before any system header. Little-endian host only
 * (.npy and TensorProto raw data are little-endian; checked at run time). Tool code: it may
 * print; the library it tests never does. All functions are static (prefix td_). */
#ifndef TI_TESTDIR_H
#define TI_TESTDIR_H

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#if defined(__GNUC__) || defined(__clang__)
#define TD_UNUSED __attribute__((unused))
#else
#define TD_UNUSED
#endif

/* ---- small utilities ------------------------------------------------------------------ */

TD_UNUSED static void td_msg(char *msg, size_t n, const char *fmt, ...)
{
    if (!msg || n == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, n, fmt, ap);
    va_end(ap);
}

TD_UNUSED static int td_host_little_endian(void)
{
    const uint16_t one = 1;
    unsigned char b[2];
    memcpy(b, &one, 2);
    return b[0] == 1;
}

TD_UNUSED static int td_is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

TD_UNUSED static int td_is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

TD_UNUSED static int td_ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* Joins a directory and a name into buf; 0 when it does not fit. */
TD_UNUSED static int td_join(char *buf, size_t n, const char *dir, const char *name)
{
    size_t dl = strlen(dir);
    int sep = dl > 0 && dir[dl - 1] != '/';
    int w = snprintf(buf, n, "%s%s%s", dir, sep ? "/" : "", name);
    return w >= 0 && (size_t)w < n;
}

/* Whole file into a malloc'd buffer (one extra NUL byte after the data). NULL on failure
 * with the reason in msg. */
TD_UNUSED static char *td_read_file(const char *path, size_t *size, char *msg, size_t msgn)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        td_msg(msg, msgn, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = (char *)malloc(cap + 1);
    while (buf) {
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (len < cap) break;
        char *nb = (char *)realloc(buf, cap * 2 + 1);
        if (!nb) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = nb;
        cap *= 2;
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf) {
        td_msg(msg, msgn, "%s: out of memory reading the file", path);
        return NULL;
    }
    if (bad) {
        free(buf);
        td_msg(msg, msgn, "%s: read error", path);
        return NULL;
    }
    buf[len] = 0;
    *size = len;
    return buf;
}

static int td_cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names in dir (without "." and ".."). Returns the count, -1 when dir cannot be
 * opened. Free with td_free_names. */
TD_UNUSED static int td_list_dir(const char *dir, char ***names_out)
{
    *names_out = NULL;
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0, cap = 0;
    char **names = NULL;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        if (n == cap) {
            int nc = cap ? cap * 2 : 64;
            char **nn = (char **)realloc(names, (size_t)nc * sizeof(char *));
            if (!nn) break;
            names = nn;
            cap = nc;
        }
        size_t l = strlen(e->d_name);
        char *s = (char *)malloc(l + 1);
        if (!s) break;
        memcpy(s, e->d_name, l + 1);
        names[n++] = s;
    }
    closedir(d);
    if (n > 1) qsort(names, (size_t)n, sizeof(char *), td_cmp_names);
    *names_out = names;
    return n;
}

TD_UNUSED static void td_free_names(char **names, int n)
{
    for (int i = 0; i < n; i++) free(names[i]);
    free(names);
}

TD_UNUSED static void td_shape_str(int rank, const int64_t *shape, char *buf, size_t n)
{
    size_t w = 0;
    if (n == 0) return;
    buf[0] = 0;
    if (rank < 0) {
        snprintf(buf, n, "[?]");
        return;
    }
    w += (size_t)snprintf(buf + w, n - w, "[");
    for (int i = 0; i < rank && w < n; i++)
        w += (size_t)snprintf(buf + w, n - w, "%s%lld", i ? ", " : "", (long long)shape[i]);
    if (w < n) snprintf(buf + w, n - w, "]");
}

/* ---- half precision ------------------------------------------------------------------- */

TD_UNUSED static float td_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (man << 13);
    } else if (exp == 0) {
        if (man == 0) {
            bits = sign;
        } else { /* subnormal: normalise */
            int e = -1;
            do {
                man <<= 1;
                e++;
            } while (!(man & 0x400));
            bits = sign | ((uint32_t)(127 - 15 - e) << 23) | ((man & 0x3ff) << 13);
        }
    } else {
        bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

/* Round to nearest even, overflow to inf, NaN kept quiet. */
TD_UNUSED static uint16_t td_f32_to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000, exp = (x >> 23) & 0xff, man = x & 0x7fffff;
    if (exp == 0xff) return (uint16_t)(sign | 0x7c00 | (man ? 0x200 : 0));
    int e = (int)exp - 127 + 15;
    if (e >= 0x1f) return (uint16_t)(sign | 0x7c00);
    if (e <= 0) {
        if (e < -10) return (uint16_t)sign;
        man |= 0x800000;
        int shift = 14 - e;
        uint32_t h = man >> shift, rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (h & 1))) h++;
        return (uint16_t)(sign | h);
    }
    uint32_t h = ((uint32_t)e << 10) | (man >> 13), rem = man & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) h++; /* may carry into inf: correct */
    return (uint16_t)(sign | h);
}

TD_UNUSED static float td_bf16_to_f32(uint16_t b)
{
    uint32_t bits = (uint32_t)b << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

TD_UNUSED static uint16_t td_f32_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40);
    x += 0x7fff + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}

/* ---- element access ------------------------------------------------------------------- */

TD_UNUSED static int td_is_float(ti_dtype t)
{
    return t == TI_DTYPE_F32 || t == TI_DTYPE_F64 || t == TI_DTYPE_F16 || t == TI_DTYPE_BF16;
}

TD_UNUSED static int td_is_unsigned(ti_dtype t)
{
    return t == TI_DTYPE_U8 || t == TI_DTYPE_U16 || t == TI_DTYPE_U32 || t == TI_DTYPE_U64 ||
           t == TI_DTYPE_BOOL;
}

/* Element i as double (int64 beyond 2^53 loses precision: display only). */
TD_UNUSED static double td_get(const ti_tensor *t, size_t i)
{
    const unsigned char *p = (const unsigned char *)t->data;
    switch (t->dtype) {
    case TI_DTYPE_F32: { float v; memcpy(&v, p + i * 4, 4); return v; }
    case TI_DTYPE_F64: { double v; memcpy(&v, p + i * 8, 8); return v; }
    case TI_DTYPE_F16: { uint16_t v; memcpy(&v, p + i * 2, 2); return td_f16_to_f32(v); }
    case TI_DTYPE_BF16: { uint16_t v; memcpy(&v, p + i * 2, 2); return td_bf16_to_f32(v); }
    case TI_DTYPE_I8: return (double)((const int8_t *)t->data)[i];
    case TI_DTYPE_U8: return (double)p[i];
    case TI_DTYPE_BOOL: return p[i] ? 1.0 : 0.0;
    case TI_DTYPE_I16: { int16_t v; memcpy(&v, p + i * 2, 2); return v; }
    case TI_DTYPE_U16: { uint16_t v; memcpy(&v, p + i * 2, 2); return v; }
    case TI_DTYPE_I32: { int32_t v; memcpy(&v, p + i * 4, 4); return v; }
    case TI_DTYPE_U32: { uint32_t v; memcpy(&v, p + i * 4, 4); return v; }
    case TI_DTYPE_I64: { int64_t v; memcpy(&v, p + i * 8, 8); return (double)v; }
    case TI_DTYPE_U64: { uint64_t v; memcpy(&v, p + i * 8, 8); return (double)v; }
    default: return 0.0;
    }
}

/* Integer element i exactly (unsigned 64-bit values above INT64_MAX wrap; compare bits). */
TD_UNUSED static int64_t td_get_i64(const ti_tensor *t, size_t i)
{
    const unsigned char *p = (const unsigned char *)t->data;
    switch (t->dtype) {
    case TI_DTYPE_I64: { int64_t v; memcpy(&v, p + i * 8, 8); return v; }
    case TI_DTYPE_U64: { uint64_t v; memcpy(&v, p + i * 8, 8); return (int64_t)v; }
    case TI_DTYPE_I32: { int32_t v; memcpy(&v, p + i * 4, 4); return v; }
    case TI_DTYPE_U32: { uint32_t v; memcpy(&v, p + i * 4, 4); return v; }
    case TI_DTYPE_I16: { int16_t v; memcpy(&v, p + i * 2, 2); return v; }
    case TI_DTYPE_U16: { uint16_t v; memcpy(&v, p + i * 2, 2); return v; }
    case TI_DTYPE_I8: return ((const int8_t *)t->data)[i];
    case TI_DTYPE_U8: return p[i];
    case TI_DTYPE_BOOL: return p[i] != 0;
    default: return (int64_t)td_get(t, i);
    }
}

/* Stores v (converted, integers truncated toward zero) as element i. */
TD_UNUSED static void td_set(ti_tensor *t, size_t i, double v)
{
    unsigned char *p = (unsigned char *)t->data;
    switch (t->dtype) {
    case TI_DTYPE_F32: { float x = (float)v; memcpy(p + i * 4, &x, 4); break; }
    case TI_DTYPE_F64: memcpy(p + i * 8, &v, 8); break;
    case TI_DTYPE_F16: { uint16_t x = td_f32_to_f16((float)v); memcpy(p + i * 2, &x, 2); break; }
    case TI_DTYPE_BF16: { uint16_t x = td_f32_to_bf16((float)v); memcpy(p + i * 2, &x, 2); break; }
    case TI_DTYPE_I8: ((int8_t *)t->data)[i] = (int8_t)v; break;
    case TI_DTYPE_U8: p[i] = (unsigned char)v; break;
    case TI_DTYPE_BOOL: p[i] = v != 0.0; break;
    case TI_DTYPE_I16: { int16_t x = (int16_t)v; memcpy(p + i * 2, &x, 2); break; }
    case TI_DTYPE_U16: { uint16_t x = (uint16_t)v; memcpy(p + i * 2, &x, 2); break; }
    case TI_DTYPE_I32: { int32_t x = (int32_t)v; memcpy(p + i * 4, &x, 4); break; }
    case TI_DTYPE_U32: { uint32_t x = (uint32_t)v; memcpy(p + i * 4, &x, 4); break; }
    case TI_DTYPE_I64: { int64_t x = (int64_t)v; memcpy(p + i * 8, &x, 8); break; }
    case TI_DTYPE_U64: { uint64_t x = (uint64_t)v; memcpy(p + i * 8, &x, 8); break; }
    default: break;
    }
}

/* Element i as text ("nan", "-1.25e-05", "42", "true"). */
TD_UNUSED static void td_fmt_elem(const ti_tensor *t, size_t i, char *buf, size_t n)
{
    if (td_is_float(t->dtype)) {
        snprintf(buf, n, "%.9g", td_get(t, i));
    } else if (t->dtype == TI_DTYPE_BOOL) {
        snprintf(buf, n, "%s", ((const unsigned char *)t->data)[i] ? "true" : "false");
    } else if (t->dtype == TI_DTYPE_U64) {
        snprintf(buf, n, "%llu", (unsigned long long)td_get_i64(t, i));
    } else {
        snprintf(buf, n, "%lld", (long long)td_get_i64(t, i));
    }
}

/* The tools' seeded input data (tinyinfer-run, tinyinfer-rpc): splitmix64 from *state, in
 * element order: floats uniform in [-1, 1), bools 0/1, other integers 0..3 (valid as an
 * index into most dims). */
TD_UNUSED static void td_fill_random(ti_tensor *t, uint64_t *state)
{
    size_t n = ti_tensor_numel(t);
    for (size_t i = 0; i < n; i++) {
        uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        uint64_t r = z ^ (z >> 31);
        double v;
        if (td_is_float(t->dtype)) v = (double)(r >> 11) * (2.0 / 9007199254740992.0) - 1.0;
        else if (t->dtype == TI_DTYPE_BOOL) v = (double)(r >> 63);
        else v = (double)(r >> 62);
        td_set(t, i, v);
    }
}

/* The tools' one-line summary of a tensor: name, dtype, shape, min / max / mean of the
 * finite values (NaN and inf counted apart), then the first 8 values. */
TD_UNUSED static void td_print_summary(const ti_tensor *t)
{
    char shp[256];
    td_shape_str(t->rank, t->shape, shp, sizeof(shp));
    size_t n = ti_tensor_numel(t);
    printf("  '%s' %s %s", t->name ? t->name : "", ti_dtype_name(t->dtype), shp);
    if (t->dtype == TI_DTYPE_STRING || t->dtype == TI_DTYPE_UNKNOWN || (n && !t->data)) {
        printf(" (no values)\n");
        return;
    }
    if (n == 0) {
        printf(" (empty)\n");
        return;
    }
    double mn = 0, mx = 0, sum = 0;
    size_t nan = 0, inf = 0, finite = 0;
    for (size_t i = 0; i < n; i++) {
        double v = td_get(t, i);
        if (isnan(v)) {
            nan++;
            continue;
        }
        if (isinf(v)) {
            inf++;
            continue;
        }
        if (!finite || v < mn) mn = v;
        if (!finite || v > mx) mx = v;
        sum += v;
        finite++;
    }
    if (finite) printf(" min %.6g max %.6g mean %.6g", mn, mx, sum / (double)finite);
    if (nan || inf) printf(" (%zu NaN, %zu inf)", nan, inf);
    printf("\n    first:");
    for (size_t i = 0; i < n && i < 8; i++) {
        char b[64];
        td_fmt_elem(t, i, b, sizeof(b));
        printf(" %s", b);
    }
    printf("%s\n", n > 8 ? " ..." : "");
}

/* Flat index -> "[i, j, k]" for the tensor's shape. */
TD_UNUSED static void td_index_str(const ti_tensor *t, size_t flat, char *buf, size_t n)
{
    int64_t idx[TI_MAX_DIMS];
    int rank = t->rank > TI_MAX_DIMS ? TI_MAX_DIMS : t->rank;
    for (int d = rank - 1; d >= 0; d--) {
        int64_t dim = t->shape[d] > 0 ? t->shape[d] : 1;
        idx[d] = (int64_t)(flat % (size_t)dim);
        flat /= (size_t)dim;
    }
    td_shape_str(rank, idx, buf, n);
}

/* ---- tensors loaded from files -------------------------------------------------------- */

/* A tensor read from a file. from_decode: memory is ti_tensor_decode_onnx's (released with
 * ti_tensor_release); else data was malloc'd here and name is NULL. */
typedef struct td_tensor {
    ti_tensor t;
    int from_decode;
} td_tensor;

TD_UNUSED static void td_tensor_free(td_tensor *x)
{
    if (!x) return;
    if (x->from_decode) {
        ti_tensor_release(&x->t);
    } else {
        free(x->t.data);
    }
    memset(x, 0, sizeof(*x));
}

/* Loads a serialized TensorProto. Returns the decoder's status (TI_ERR_UNSUPPORTED for
 * string, complex, float8, int4 data) or TI_ERR_IO. */
TD_UNUSED static ti_status td_load_pb(const char *path, td_tensor *out, char *msg, size_t msgn)
{
    memset(out, 0, sizeof(*out));
    size_t size = 0;
    char *bytes = td_read_file(path, &size, msg, msgn);
    if (!bytes) return TI_ERR_IO;
    ti_error err;
    memset(&err, 0, sizeof(err));
    ti_status st = ti_tensor_decode_onnx(bytes, size, &out->t, &err);
    free(bytes);
    if (st != TI_OK) {
        td_msg(msg, msgn, "%s: %s", path, err.message[0] ? err.message : ti_status_string(st));
        memset(out, 0, sizeof(*out));
        return st;
    }
    out->from_decode = 1;
    return TI_OK;
}

typedef struct td_npy_type {
    const char *descr; /* without the byte-order character */
    ti_dtype dtype;
} td_npy_type;

static const td_npy_type td_npy_types[] = {
    {"f4", TI_DTYPE_F32}, {"f8", TI_DTYPE_F64}, {"f2", TI_DTYPE_F16}, {"i8", TI_DTYPE_I64},
    {"i4", TI_DTYPE_I32}, {"i2", TI_DTYPE_I16}, {"i1", TI_DTYPE_I8},  {"u1", TI_DTYPE_U8},
    {"u2", TI_DTYPE_U16}, {"u4", TI_DTYPE_U32}, {"u8", TI_DTYPE_U64}, {"b1", TI_DTYPE_BOOL},
};

/* Value of 'key' in a .npy header dict: returns a pointer just after "'key':" and blanks. */
static const char *td_npy_key(const char *h, const char *key)
{
    char pat[32];
    snprintf(pat, sizeof(pat), "'%s'", key);
    const char *p = strstr(h, pat);
    if (!p) return NULL;
    p += strlen(pat);
    while (*p == ' ') p++;
    if (*p != ':') return NULL;
    p++;
    while (*p == ' ') p++;
    return p;
}

/* Parses the .npy bytes b[0, size) into out (data copied). */
static ti_status td_parse_npy(const char *path, const char *b, size_t size, td_tensor *out,
                              char *msg, size_t msgn)
{
    const unsigned char *u = (const unsigned char *)b;
    if (size < 10 || memcmp(b, "\x93NUMPY", 6) != 0) {
        td_msg(msg, msgn, "%s: not a .npy file (no \\x93NUMPY magic)", path);
        return TI_ERR_BAD_MODEL;
    }
    int major = u[6];
    size_t hlen, hstart;
    if (major == 1) {
        hlen = (size_t)u[8] | ((size_t)u[9] << 8);
        hstart = 10;
    } else if ((major == 2 || major == 3) && size >= 12) {
        hlen = (size_t)u[8] | ((size_t)u[9] << 8) | ((size_t)u[10] << 16) | ((size_t)u[11] << 24);
        hstart = 12;
    } else {
        td_msg(msg, msgn, "%s: .npy format version %d.%d not supported (1, 2, 3 are)", path,
               major, u[7]);
        return TI_ERR_UNSUPPORTED;
    }
    if (hlen > size - hstart) {
        td_msg(msg, msgn, "%s: .npy header of %zu bytes runs past the file (%zu bytes)", path,
               hlen, size);
        return TI_ERR_BAD_MODEL;
    }
    char h[1024]; /* numpy headers are short; longer ones are not plain arrays */
    if (hlen >= sizeof(h)) {
        td_msg(msg, msgn, "%s: .npy header of %zu bytes is too long (structured dtype?)", path,
               hlen);
        return TI_ERR_UNSUPPORTED;
    }
    memcpy(h, b + hstart, hlen);
    h[hlen] = 0;
    const char *p = td_npy_key(h, "descr");
    char descr[16] = {0};
    if (p && (*p == '\'' || *p == '"')) {
        char q = *p++;
        size_t k = 0;
        while (*p && *p != q && k + 1 < sizeof(descr)) descr[k++] = *p++;
    }
    const char *fo = td_npy_key(h, "fortran_order");
    const char *sh = td_npy_key(h, "shape");
    if (!descr[0] || !fo || !sh || *sh != '(') {
        td_msg(msg, msgn, "%s: .npy header lacks descr/fortran_order/shape: %s", path, h);
        return TI_ERR_BAD_MODEL;
    }
    if (strncmp(fo, "True", 4) == 0) {
        td_msg(msg, msgn, "%s: Fortran-order .npy not supported (save with C order)", path);
        return TI_ERR_UNSUPPORTED;
    }
    ti_dtype dt = TI_DTYPE_UNKNOWN;
    char order = descr[0];
    const char *code = descr + 1;
    size_t ntypes = sizeof(td_npy_types) / sizeof(td_npy_types[0]);
    for (size_t i = 0; i < ntypes; i++)
        if (strcmp(code, td_npy_types[i].descr) == 0) dt = td_npy_types[i].dtype;
    int one_byte = code[0] && code[1] == '1' && code[2] == 0;
    int order_ok = order == '<' || order == '=' || (order == '|' && one_byte);
    if (dt == TI_DTYPE_UNKNOWN || !order_ok) {
        td_msg(msg, msgn,
               "%s: .npy dtype '%s' not supported (little-endian f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 "
               "u8 b1 are)",
               path, descr);
        return TI_ERR_UNSUPPORTED;
    }
    /* shape: "(2, 3)", "(3,)", "()" */
    int rank = 0;
    size_t numel = 1, esz = ti_dtype_size(dt);
    p = sh + 1;
    for (;;) {
        while (*p == ' ' || *p == ',') p++;
        if (*p == ')') break;
        if (*p < '0' || *p > '9' || rank >= TI_MAX_DIMS) {
            td_msg(msg, msgn, "%s: bad or too long .npy shape (max rank %d): %s", path,
                   TI_MAX_DIMS, sh);
            return rank >= TI_MAX_DIMS ? TI_ERR_UNSUPPORTED : TI_ERR_BAD_MODEL;
        }
        char *end;
        long long v = strtoll(p, &end, 10);
        if (v < 0 || (v > 0 && numel > (size_t)-1 / (size_t)v / (esz ? esz : 1))) {
            td_msg(msg, msgn, "%s: .npy shape too large: %s", path, sh);
            return TI_ERR_BAD_MODEL;
        }
        out->t.shape[rank++] = v;
        numel *= (size_t)v;
        p = end;
    }
    size_t bytes = numel * esz, avail = size - hstart - hlen;
    if (avail < bytes) {
        td_msg(msg, msgn, "%s: .npy data has %zu bytes, shape needs %zu", path, avail, bytes);
        return TI_ERR_BAD_MODEL;
    }
    out->t.dtype = dt;
    out->t.rank = rank;
    out->t.size_bytes = bytes;
    out->t.data = malloc(bytes ? bytes : 1);
    if (!out->t.data) {
        td_msg(msg, msgn, "%s: out of memory (%zu bytes)", path, bytes);
        return TI_ERR_OUT_OF_MEMORY;
    }
    memcpy(out->t.data, b + hstart + hlen, bytes);
    if (dt == TI_DTYPE_BOOL) {
        unsigned char *d = (unsigned char *)out->t.data;
        for (size_t i = 0; i < bytes; i++) d[i] = d[i] != 0;
    }
    return TI_OK;
}

/* Loads a .npy file (format versions 1, 2, 3; C order; little-endian dtypes f2 f4 f8 i1 i2
 * i4 i8 u1 u2 u4 u8 b1). */
TD_UNUSED static ti_status td_load_npy(const char *path, td_tensor *out, char *msg, size_t msgn)
{
    memset(out, 0, sizeof(*out));
    if (!td_host_little_endian()) {
        td_msg(msg, msgn, "%s: .npy reading needs a little-endian host", path);
        return TI_ERR_UNSUPPORTED;
    }
    size_t size = 0;
    char *b = td_read_file(path, &size, msg, msgn);
    if (!b) return TI_ERR_IO;
    ti_status st = td_parse_npy(path, b, size, out, msg, msgn);
    free(b);
    if (st != TI_OK) memset(out, 0, sizeof(*out));
    return st;
}

/* .npy when the name ends so, else a serialized TensorProto. */
TD_UNUSED static ti_status td_load_tensor(const char *path, td_tensor *out, char *msg, size_t n)
{
    if (td_ends_with(path, ".npy")) return td_load_npy(path, out, msg, n);
    return td_load_pb(path, out, msg, n);
}

/* Writes t as .npy version 1 (bfloat16 is written as float32: numpy has no bf16). */
TD_UNUSED static int td_save_npy(const char *path, const ti_tensor *t, char *msg, size_t msgn)
{
    const char *descr = NULL;
    ti_dtype dt = t->dtype == TI_DTYPE_BF16 ? TI_DTYPE_F32 : t->dtype;
    size_t ntypes = sizeof(td_npy_types) / sizeof(td_npy_types[0]);
    for (size_t i = 0; i < ntypes; i++)
        if (td_npy_types[i].dtype == dt) descr = td_npy_types[i].descr;
    if (!descr) {
        td_msg(msg, msgn, "%s: dtype %s cannot be written as .npy", path, ti_dtype_name(t->dtype));
        return 0;
    }
    char h[256];
    int w = snprintf(h, sizeof(h), "{'descr': '%c%s', 'fortran_order': False, 'shape': (",
                     descr[1] == '1' ? '|' : '<', descr);
    for (int i = 0; i < t->rank; i++)
        w += snprintf(h + w, sizeof(h) - (size_t)w, "%lld,%s", (long long)t->shape[i],
                      i + 1 < t->rank ? " " : "");
    w += snprintf(h + w, sizeof(h) - (size_t)w, "), }");
    while ((10 + w + 1) % 64 != 0) h[w++] = ' ';
    h[w++] = '\n';
    FILE *f = fopen(path, "wb");
    if (!f) {
        td_msg(msg, msgn, "%s: cannot create: %s", path, strerror(errno));
        return 0;
    }
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0, 0};
    pre[8] = (unsigned char)(w & 0xff);
    pre[9] = (unsigned char)(w >> 8);
    int ok = fwrite(pre, 1, 10, f) == 10 && fwrite(h, 1, (size_t)w, f) == (size_t)w;
    size_t numel = ti_tensor_numel(t);
    if (ok && t->dtype == TI_DTYPE_BF16) {
        for (size_t i = 0; ok && i < numel; i++) {
            float v = (float)td_get(t, i);
            ok = fwrite(&v, 4, 1, f) == 1;
        }
    } else if (ok && t->size_bytes) {
        ok = fwrite(t->data, 1, t->size_bytes, f) == t->size_bytes;
    }
    if (fclose(f) != 0) ok = 0;
    if (!ok) td_msg(msg, msgn, "%s: write error", path);
    return ok;
}

/* ---- comparison ----------------------------------------------------------------------- */

/* Compares got with want. Floats: |g-w| <= atol + rtol*|w| per element (max_rel < 0), or
 * max|g-w| <= max_rel * max|w| over the tensor (max_rel >= 0); NaN equals NaN; infinities
 * must match exactly; bfloat16 uses rtol >= 2^-6 as onnx's runner does. Integers and bools:
 * |g-w| <= int_atol (0: exact; quantized uint8/int8 outputs may be allowed 1 unit), and a
 * pass with values off leaves "N of M values off (max |diff| D)" in msg. Returns 1 when
 * equal enough, else 0 with the first mismatch (index, both values) and the count in msg. */
TD_UNUSED static int td_compare_ex(const ti_tensor *got, const ti_tensor *want, double rtol,
                                   double atol, double max_rel, int64_t int_atol, char *msg,
                                   size_t msgn)
{
    char gs[64], ws[64], idx[128];
    if (got->dtype != want->dtype) {
        td_msg(msg, msgn, "dtype %s, expected %s", ti_dtype_name(got->dtype),
               ti_dtype_name(want->dtype));
        return 0;
    }
    int same_shape = got->rank == want->rank;
    for (int d = 0; same_shape && d < got->rank; d++) same_shape = got->shape[d] == want->shape[d];
    if (!same_shape) {
        td_shape_str(got->rank, got->shape, gs, sizeof(gs));
        td_shape_str(want->rank, want->shape, ws, sizeof(ws));
        td_msg(msg, msgn, "shape %s, expected %s", gs, ws);
        return 0;
    }
    size_t n = ti_tensor_numel(want);
    if (n && (!got->data || !want->data)) {
        td_msg(msg, msgn, "no data (got %p, expected %p)", got->data, want->data);
        return 0;
    }
    size_t bad = 0, first = 0;
    if (!td_is_float(want->dtype)) {
        /* off: values that differ within int_atol; the difference is taken in double so
         * that uint64/int64 extremes cannot overflow (exactness only matters near 0) */
        size_t off = 0;
        double max_idiff = 0;
        for (size_t i = 0; i < n; i++) {
            int64_t g = td_get_i64(got, i), w = td_get_i64(want, i);
            if (g == w) continue;
            double d = fabs((double)g - (double)w);
            if (d > max_idiff) max_idiff = d;
            if (int_atol > 0 && d <= (double)int_atol) {
                off++;
                continue;
            }
            if (!bad) first = i;
            bad++;
        }
        if (!bad) {
            if (off)
                td_msg(msg, msgn, "%zu of %zu values off by at most %lld (max |diff| %.0f)", off,
                       n, (long long)int_atol, max_idiff);
            return 1;
        }
        td_fmt_elem(got, first, gs, sizeof(gs));
        td_fmt_elem(want, first, ws, sizeof(ws));
        td_index_str(want, first, idx, sizeof(idx));
        if (int_atol > 0)
            td_msg(msg, msgn,
                   "%zu of %zu values differ by more than %lld (%zu more off by <= %lld); max "
                   "|diff| %.0f; first at %s (flat %zu): got %s, expected %s",
                   bad, n, (long long)int_atol, off, (long long)int_atol, max_idiff, idx, first,
                   gs, ws);
        else
            td_msg(msg, msgn,
                   "%zu of %zu values differ (max |diff| %.0f); first at %s (flat %zu): got %s, "
                   "expected %s",
                   bad, n, max_idiff, idx, first, gs, ws);
        return 0;
    }
    /* As onnx's backend runner: bfloat16 outputs get at least two bf16 ulps of rtol. */
    if (want->dtype == TI_DTYPE_BF16 && rtol < 1.0 / 64) rtol = 1.0 / 64;
    double max_diff = 0, max_ref = 0;
    size_t at_max = 0;
    for (size_t i = 0; i < n; i++) {
        double g = td_get(got, i), w = td_get(want, i);
        int ok;
        if (isnan(g) || isnan(w)) {
            ok = isnan(g) && isnan(w);
        } else if (g == w) {
            ok = 1;
        } else if (isinf(g) || isinf(w)) {
            ok = 0;
        } else {
            double diff = fabs(g - w);
            if (diff > max_diff) {
                max_diff = diff;
                at_max = i;
            }
            ok = max_rel >= 0 || diff <= atol + rtol * fabs(w);
        }
        if (!isnan(w) && !isinf(w) && fabs(w) > max_ref) max_ref = fabs(w);
        if (!ok) {
            if (!bad) first = i;
            bad++;
        }
    }
    if (!bad && max_rel >= 0 && max_diff > max_rel * max_ref) {
        td_fmt_elem(got, at_max, gs, sizeof(gs));
        td_fmt_elem(want, at_max, ws, sizeof(ws));
        td_index_str(want, at_max, idx, sizeof(idx));
        td_msg(msg, msgn,
               "max |diff| %.3g > %g * max |expected| %.3g (relative %.3g); largest at %s "
               "(flat %zu): got %s, expected %s",
               max_diff, max_rel, max_ref, max_ref > 0 ? max_diff / max_ref : max_diff, idx,
               at_max, gs, ws);
        return 0;
    }
    if (!bad) {
        /* passed: leave the measured error for callers that report it */
        if (max_rel >= 0)
            td_msg(msg, msgn, "max |diff| / max |expected| = %.3g", max_ref > 0 ? max_diff / max_ref : max_diff);
        return 1;
    }
    td_fmt_elem(got, first, gs, sizeof(gs));
    td_fmt_elem(want, first, ws, sizeof(ws));
    td_index_str(want, first, idx, sizeof(idx));
    if (max_rel >= 0)
        td_msg(msg, msgn, "%zu of %zu values differ in NaN/inf; first at %s (flat %zu): got %s, "
               "expected %s", bad, n, idx, first, gs, ws);
    else
        td_msg(msg, msgn,
               "%zu of %zu values differ (rtol %g, atol %g); first at %s (flat %zu): got %s, "
               "expected %s; max |diff| %.3g",
               bad, n, rtol, atol, idx, first, gs, ws, max_diff);
    return 0;
}

TD_UNUSED static int td_compare(const ti_tensor *got, const ti_tensor *want, double rtol,
                                double atol, double max_rel, char *msg, size_t msgn)
{
    return td_compare_ex(got, want, rtol, atol, max_rel, 0, msg, msgn);
}

/* Index (first maximum) along the last axis of row `row` (the flat index of the position
 * over all other axes); t is float or integer, uint8/int8 compare as stored. */
TD_UNUSED static int64_t td_argmax_row(const ti_tensor *t, size_t row)
{
    int64_t last = t->rank > 0 ? t->shape[t->rank - 1] : 1, best = 0;
    size_t base = row * (size_t)last;
    double bv = td_get(t, base);
    for (int64_t j = 1; j < last; j++) {
        double v = td_get(t, base + (size_t)j);
        if (v > bv || (isnan(v) && !isnan(bv))) {
            bv = v;
            best = j;
        }
    }
    return best;
}

#endif /* TI_TESTDIR_H */
