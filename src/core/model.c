/* Models: loading from a file or memory (the format is detected from the bytes and handed
 * to its reader), freeing, and the read-only queries tools use. Relies on the readers in
 * formats/. Must not change a model after loading: sessions on many threads share it. */

TI__PRIVATE ti_model *ti__model_new(const ti_model_desc *desc, const char *name, ti_error *err) {
    ti_model_desc d;
    if (desc != NULL) d = *desc;
    else memset(&d, 0, sizeof d);
    if (!ti__allocator_valid(&d.allocator)) {
        ti__fail(err, TI_ERR_INVALID_ARGUMENT, name, "allocator: set both alloc and free, or neither");
        return NULL;
    }
    if (d.max_tensor_bytes == 0) d.max_tensor_bytes = TI_MAX_TENSOR_BYTES;
    if (d.max_total_bytes == 0) d.max_total_bytes = TI_MAX_TOTAL_BYTES;
    if (d.max_nodes <= 0) d.max_nodes = TI_MAX_NODES;
    if (d.max_rank <= 0 || d.max_rank > TI_MAX_DIMS) d.max_rank = TI_MAX_DIMS;
    ti_model *m = (ti_model *)ti__calloc(&d.allocator, sizeof *m);
    if (m == NULL) {
        ti__fail(err, TI_ERR_OUT_OF_MEMORY, name, "out of memory loading the model");
        return NULL;
    }
    m->al = d.allocator;
    m->pool.al = d.allocator;
    m->desc = d;
    const char *shown = d.name ? d.name : name;
    size_t n = strlen(shown);
    if (n >= sizeof m->name) n = sizeof m->name - 1;
    memcpy(m->name, shown, n);
    m->name[n] = 0;
    return m;
}

TI__PRIVATE ti_status ti__model_parse(ti_model *m, const uint8_t *data, size_t size, ti_error *err) {
    ti_format f = m->desc.format;
    if (f == TI_FORMAT_AUTO) {
        /* TFLite files carry "TFL3" at byte 4; anything else is tried as ONNX protobuf */
        if (size >= 8 && memcmp(data + 4, "TFL3", 4) == 0) f = TI_FORMAT_TFLITE;
        else f = TI_FORMAT_ONNX;
    }
    if (size == 0) return ti__fail(err, TI_ERR_BAD_MODEL, m->name, "the model is empty (0 bytes)");
    if (f == TI_FORMAT_TFLITE) {
#ifndef TI_NO_TFLITE
        return ti__tflite_parse(m, data, size, err);
#else
        return ti__fail(err, TI_ERR_UNSUPPORTED, m->name, "TFLite support was compiled out (TI_NO_TFLITE)");
#endif
    }
#ifndef TI_NO_ONNX
    return ti__onnx_parse(m, data, size, err);
#else
    return ti__fail(err, TI_ERR_UNSUPPORTED, m->name, "ONNX support was compiled out (TI_NO_ONNX)");
#endif
}

#ifdef TI_NO_ONNX
TI_API ti_status ti_tensor_decode_onnx(const void *bytes, size_t size, ti_tensor *out, ti_error *err) {
    (void)bytes;
    (void)size;
    if (out != NULL) memset(out, 0, sizeof *out);
    return ti__fail(err, TI_ERR_UNSUPPORTED, "<memory>", "ONNX support was compiled out (TI_NO_ONNX)");
}
#endif

TI_API ti_model *ti_model_load_memory(const void *data, size_t size, const ti_model_desc *desc,
                                      ti_error *err) {
    ti__error_clear(err);
    if (data == NULL && size > 0) {
        ti__fail(err, TI_ERR_INVALID_ARGUMENT, "<memory>", "data is NULL");
        return NULL;
    }
    ti_model *m = ti__model_new(desc, "<memory>", err);
    if (m == NULL) return NULL;
    if (ti__model_parse(m, (const uint8_t *)data, size, err) != TI_OK) {
        ti_model_free(m);
        return NULL;
    }
    return m;
}

#ifndef TI_NO_STDIO
/* Files are mapped, not read, where the system can (POSIX and Windows, unless TI_NO_MMAP):
 * the parser reads the page cache's pages in place, and a model costs no buffer of its
 * file's size. Reading MobileNetV2's 14 MB into a fresh buffer was a third of its load and
 * creation on the test VM, whose fresh pages cost about 0.5 ms a MiB to fault in: load 18.0
 * ms read, 11.7 mapped (medians, bench/results/load-2026-12-05-s55.md). The mapping lives
 * only for the parse (initializers are copied out of it).
 * As with any mapped file, another process truncating the file during the parse would end
 * this one (SIGBUS); a file being replaced should be written beside it and renamed over it. */
#if !defined(TI_NO_MMAP) && !defined(_WIN32) && (defined(__unix__) || defined(__APPLE__))
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#define TI__MAP_FILES 1

/* Maps the regular file at path read-only (its size in *size); NULL where it cannot, or
 * where the file is empty: the caller then reads it (the same errors come from there).
 * *not_file is set where path names a directory (1) or a named pipe (2: opened without
 * waiting for a writer, where reading it would have waited forever; fseek fails on one
 * anyway, so pipes never loaded). A socket's path does not open at all (ENXIO). */
TI__PRIVATE const uint8_t *ti__map_file(const char *path, size_t *size, int *not_file) {
    *size = 0;
    *not_file = 0;
    int fd = open(path, O_RDONLY | O_NONBLOCK);
    if (fd < 0) return NULL;
    struct stat st;
    void *p = MAP_FAILED;
    if (fstat(fd, &st) == 0) {
        *not_file = S_ISDIR(st.st_mode) ? 1 : S_ISFIFO(st.st_mode) ? 2 : 0;
        if (S_ISREG(st.st_mode) && st.st_size > 0 && (uint64_t)st.st_size <= (size_t)-1) {
            *size = (size_t)st.st_size;
            p = mmap(NULL, *size, PROT_READ, MAP_PRIVATE, fd, 0);
        }
    }
    close(fd);
    return p == MAP_FAILED ? NULL : (const uint8_t *)p;
}
TI__PRIVATE void ti__unmap_file(const uint8_t *p, size_t size) { munmap((void *)(uintptr_t)p, size); }

#elif !defined(TI_NO_MMAP) && defined(_WIN32)
/* Declared with <windows.h>'s exact types (HANDLE void *, DWORD unsigned long, BOOL int,
 * SIZE_T ULONG_PTR), so that it may come before or after this file (build.sh's j_mingw) */
#define TI__MAP_FILES 1
#ifdef _WIN64
typedef unsigned long long ti__win_size;
#else
typedef unsigned long ti__win_size;
#endif
struct _SECURITY_ATTRIBUTES;
union _LARGE_INTEGER;
TI__EXTERN_C __declspec(dllimport) void *__stdcall CreateFileA(const char *, unsigned long,
                                                               unsigned long,
                                                               struct _SECURITY_ATTRIBUTES *,
                                                               unsigned long, unsigned long, void *);
TI__EXTERN_C __declspec(dllimport) unsigned long __stdcall GetFileAttributesA(const char *);
TI__EXTERN_C __declspec(dllimport) int __stdcall GetFileSizeEx(void *, union _LARGE_INTEGER *);
TI__EXTERN_C __declspec(dllimport) void *__stdcall CreateFileMappingA(
    void *, struct _SECURITY_ATTRIBUTES *, unsigned long, unsigned long, unsigned long, const char *);
TI__EXTERN_C __declspec(dllimport) void *__stdcall MapViewOfFile(void *, unsigned long, unsigned long,
                                                                 unsigned long, ti__win_size);
TI__EXTERN_C __declspec(dllimport) int __stdcall UnmapViewOfFile(const void *);
TI__EXTERN_C __declspec(dllimport) int __stdcall CloseHandle(void *);

TI__PRIVATE const uint8_t *ti__map_file(const char *path, size_t *size, int *not_file) {
    *size = 0;
    unsigned long attr = GetFileAttributesA(path);
    *not_file = attr != 0xFFFFFFFFul && (attr & 0x10ul) != 0; /* FILE_ATTRIBUTE_DIRECTORY */
    /* GENERIC_READ, FILE_SHARE_READ, OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL */
    void *f = CreateFileA(path, 0x80000000ul, 1ul, NULL, 3ul, 0x80ul, NULL);
    if (f == (void *)(intptr_t)-1) return NULL; /* INVALID_HANDLE_VALUE */
    long long len = 0;
    void *p = NULL;
    if (GetFileSizeEx(f, (union _LARGE_INTEGER *)(void *)&len) && len > 0 &&
        (unsigned long long)len <= (size_t)-1) {
        void *mapping = CreateFileMappingA(f, NULL, 0x02ul, 0ul, 0ul, NULL); /* PAGE_READONLY */
        if (mapping != NULL) {
            p = MapViewOfFile(mapping, 0x04ul, 0ul, 0ul, 0); /* FILE_MAP_READ, all of it */
            CloseHandle(mapping); /* the view keeps it */
        }
        if (p != NULL) *size = (size_t)len;
    }
    CloseHandle(f);
    return (const uint8_t *)p;
}
TI__PRIVATE void ti__unmap_file(const uint8_t *p, size_t size) {
    (void)size;
    UnmapViewOfFile(p);
}
#endif

/* Reads the whole file into *buf, a buffer of the model's allocator (*size bytes). */
TI__PRIVATE ti_status ti__read_file(ti_model *m, const char *path, uint8_t **buf, size_t *size,
                                    ti_error *err) {
    *buf = NULL;
    FILE *f = fopen(path, "rb");
    if (f == NULL) return ti__fail(err, TI_ERR_IO, m->name, "cannot open the file");
    long len = -1;
    if (fseek(f, 0, SEEK_END) == 0) len = ftell(f);
    if (len < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return ti__fail(err, TI_ERR_IO, m->name, "cannot read the file size");
    }
    /* a first byte before the buffer: a directory opens and tells a size of LONG_MAX */
    if (len > 0 && (fgetc(f) == EOF || fseek(f, 0, SEEK_SET) != 0)) {
        fclose(f);
        return ti__fail(err, TI_ERR_IO, m->name, "cannot read the file (a directory?)");
    }
    *size = (size_t)len;
    uint8_t *b = (uint8_t *)ti__malloc_brief(&m->al, *size);
    if (b == NULL) {
        fclose(f);
        return ti__fail(err, TI_ERR_OUT_OF_MEMORY, m->name,
                        "cannot allocate %zu bytes to read the file", *size);
    }
    size_t got = *size ? fread(b, 1, *size, f) : 0;
    fclose(f);
    if (got != *size) {
        ti__free(&m->al, b, *size);
        return ti__fail(err, TI_ERR_IO, m->name, "read %zu of %zu bytes", got, *size);
    }
    *buf = b;
    return TI_OK;
}

TI_API ti_model *ti_model_load_file(const char *path, const ti_model_desc *desc, ti_error *err) {
    ti__error_clear(err);
    if (path == NULL) {
        ti__fail(err, TI_ERR_INVALID_ARGUMENT, "<file>", "path is NULL");
        return NULL;
    }
    ti_model *m = ti__model_new(desc, path, err);
    if (m == NULL) return NULL;
    /* directory of the file, for ONNX external data */
    const char *slash = strrchr(path, '/');
#ifdef _WIN32
    const char *bs = strrchr(path, '\\');
    if (bs != NULL && (slash == NULL || bs > slash)) slash = bs;
#endif
    size_t dl = slash ? (size_t)(slash - path) + 1 : 0;
    if (dl >= sizeof m->dir) {
        ti__fail(err, TI_ERR_INVALID_ARGUMENT, m->name, "path is too long");
        ti_model_free(m);
        return NULL;
    }
    if (dl) memcpy(m->dir, path, dl);
    else memcpy(m->dir, "./", 3);
    m->dir[dl ? dl : 2] = 0;

    size_t size = 0;
    ti_status st;
#ifdef TI__MAP_FILES
    int not_file;
    const uint8_t *map = ti__map_file(path, &size, &not_file);
    if (map != NULL) {
        st = ti__model_parse(m, map, size, err);
        ti__unmap_file(map, size);
    } else if (not_file) {
        st = ti__fail(err, TI_ERR_IO, m->name, "is a %s, not a model file",
                      not_file == 1 ? "directory" : "named pipe");
    } else
#endif
    {
        uint8_t *buf;
        st = ti__read_file(m, path, &buf, &size, err);
        if (st == TI_OK) {
            st = ti__model_parse(m, buf, size, err);
            ti__free(&m->al, buf, size);
        }
    }
    if (st != TI_OK) {
        ti_model_free(m);
        return NULL;
    }
    return m;
}
#endif

TI_API void ti_model_free(ti_model *m) {
    if (m == NULL) return;
    ti_allocator al = m->al;
    ti__pool_release(&m->pool);
    ti__free(&al, m->values, sizeof(ti__value) * (size_t)m->cap_values);
    ti__free(&al, m->nodes, sizeof(ti__node) * (size_t)m->cap_nodes);
    ti__free(&al, m->inputs, sizeof(int) * (size_t)m->cap_inputs);
    ti__free(&al, m->outputs, sizeof(int) * (size_t)m->cap_outputs);
    ti__free(&al, m->hash, sizeof(int) * (size_t)m->hash_cap);
    ti__free(&al, m, sizeof *m);
}

TI_API int ti_model_num_inputs(const ti_model *m) { return m ? m->n_inputs : 0; }
TI_API int ti_model_num_outputs(const ti_model *m) { return m ? m->n_outputs : 0; }
TI_API int ti_model_num_nodes(const ti_model *m) { return m ? m->n_nodes : 0; }
TI_API const char *ti_model_node_op(const ti_model *m, int i) {
    return m && i >= 0 && i < m->n_nodes ? m->nodes[i].op : NULL;
}
TI_API const char *ti_model_node_domain(const ti_model *m, int i) {
    return m && i >= 0 && i < m->n_nodes ? m->nodes[i].domain : NULL;
}
TI_API ti_format ti_model_format(const ti_model *m) { return m ? m->format : TI_FORMAT_AUTO; }
TI_API int ti_model_opset(const ti_model *m) { return m && m->format == TI_FORMAT_ONNX ? m->opset : 0; }
TI_API const char *ti_model_node_name(const ti_model *m, int i) {
    return m && i >= 0 && i < m->n_nodes ? m->nodes[i].name : NULL;
}

TI__PRIVATE ti_status ti__value_info(const ti_model *m, int v, ti_value_info *out) {
    const ti__value *mv = &m->values[v];
    memset(out, 0, sizeof *out);
    out->name = mv->name;
    out->dtype = mv->dtype;
    out->rank = mv->rank;
    out->quant = mv->quant;
    for (int d = 0; d < mv->rank && d < TI_MAX_DIMS; d++) {
        out->shape[d] = mv->dims[d];
        out->dim_names[d] = mv->dim_names[d];
    }
    return TI_OK;
}
TI_API ti_status ti_model_input_info(const ti_model *m, int i, ti_value_info *out) {
    if (m == NULL || out == NULL || i < 0 || i >= m->n_inputs) return TI_ERR_INVALID_ARGUMENT;
    return ti__value_info(m, m->inputs[i], out);
}
TI_API ti_status ti_model_output_info(const ti_model *m, int i, ti_value_info *out) {
    if (m == NULL || out == NULL || i < 0 || i >= m->n_outputs) return TI_ERR_INVALID_ARGUMENT;
    return ti__value_info(m, m->outputs[i], out);
}
TI_API uint64_t ti_model_num_parameters(const ti_model *m) {
    uint64_t n = 0;
    if (m == NULL) return 0;
    for (int v = 0; v < m->n_values; v++)
        if (m->values[v].is_const && m->values[v].rank >= 0)
            n += ti__shape_numel(m->values[v].rank, m->values[v].dims);
    return n;
}
