/*
    tinyinfer 0.1.0 - neural-network inference in one C99 header

    tinyinfer loads an .onnx model and runs it on the CPU. It is a single header with no
    dependency beyond libc, libm and (unless TI_NO_THREADS) pthreads: copy tinyinfer.h
    into a game, an app or a tool, define TINYINFER_IMPLEMENTATION in one .c file, and
    call four functions. Every byte of a model file is treated as hostile: sizes are
    checked before they are used, resource caps refuse oversized files, and failures come
    back as a code plus a message naming the file, the node and the reason. The library
    never prints, aborts or exits. Memory for activations is planned once per session;
    ti_session_run does not allocate.

    Quick start:

        #define TINYINFER_IMPLEMENTATION
        #include "tinyinfer.h"

        ti_error err;
        ti_model *m = ti_model_load_file("model.onnx", NULL, &err);
        ti_session *s = m ? ti_session_create(m, NULL, &err) : NULL;
        if (s == NULL) return report(err.message);   "model.onnx: node 'c1' (Conv): ..."
        ti_tensor *x = ti_session_input(s, 0);        write x->size_bytes bytes to x->data
        if (ti_session_run(s, &err) != TI_OK) return report(err.message);
        const ti_tensor *y = ti_session_output(s, 0); read y->data, y->shape
        ti_session_destroy(s);
        ti_model_free(m);

    Implementation: in exactly ONE .c (or .cpp) file of your project write

        #define TINYINFER_IMPLEMENTATION
        #include "tinyinfer.h"

    and include "tinyinfer.h" without the define everywhere else. Link with -lm and
    -pthread. The implementation has its own guard, apart from the header guard, so the
    header may be included again after the implementation.

    Configuration macros (define them before the #include that has the implementation;
    the API-shaping ones, TI_STATIC, TI_API and TI_MAX_DIMS, before every #include):

        macro                 default          effect
        TI_NO_THREADS         (undefined)      no thread pool, no pthreads: one thread
        TI_NO_STDIO           (undefined)      no file access: ti_model_load_file is left out
        TI_NO_ONNX            (undefined)      no ONNX reader: .onnx files get TI_ERR_UNSUPPORTED
        TI_MALLOC(sz)/TI_FREE(p)  malloc/free  default allocator underneath; both or neither
        TI_ASSERT(x)          assert(x)        guards tinyinfer's own invariants only,
                                               never data from a file or a caller
        TI_STATIC             (undefined)      every API function becomes static
        TI_API                extern           prefix of API declarations (dllexport, ...)
        TI_MAX_DIMS           8                largest tensor rank; higher ranks are refused
        TI_MAX_TENSOR_BYTES   2 GiB            default cap on one constant tensor
        TI_MAX_TOTAL_BYTES    8 GiB            default cap on all constants together
        TI_MAX_NODES          1,000,000        default cap on graph nodes
        TI_MAX_DEPTH          32               nesting depth of messages in a file
        TI_MAX_THREADS        64               upper bound of the thread pool

    The caps with a desc field (ti_model_desc.max_tensor_bytes, .max_total_bytes,
    .max_nodes, .max_rank) can also be lowered per model at run time.

    Licence: MIT, the full text is at the end of this file.

    This file is generated from src/ by tools/amalgamate; edit src/, not tinyinfer.h.
    The sources, the tests and ./build.sh live at the project's repository.


    USER GUIDE
    ==========

    1. Loading
    ----------
    ti_model_load_file(path, desc, err) reads a file; ti_model_load_memory(bytes, size,
    desc, err) reads a buffer the caller may free afterwards. desc is optional: a
    zero-initialised ti_model_desc means "defaults". The format is detected from the bytes
    (ONNX protobuf in this version). Loading validates the whole graph: value names,
    node inputs, dtypes, ranks and the sizes of initializers against the caps. ONNX
    external data is read from files next to the model; a location that leaves the
    model's directory ("../x", "/etc/passwd") is refused, and a model loaded from memory
    has no external data. Symbolic dims ("batch") stay symbolic in the model;
    ti_model_input_info() reports -1 and the dim's name. A model is read-only once
    loaded: several sessions, on several threads, may share it. It must outlive them.

    2. Sessions
    -----------
    ti_session_create(model, desc, err) binds input shapes (symbolic dims from
    desc->dim_bindings, 1 when unbound), infers every shape, folds constant sub-graphs,
    fuses activations into Conv/Gemm/MatMul, and plans one memory arena. Then:

        ti_tensor *in = ti_session_input(s, 0);       or ti_session_input_by_name()
        ... write in->size_bytes bytes of in->dtype values into in->data ...
        ti_session_run(s, &err);
        ti_tensor *out = ti_session_output(s, 0);     valid until the next run

    ti_session_set_input_shape() changes an input's shape and plans again (this
    allocates). A session is used by one thread at a time; create one session per
    thread to run the same model concurrently. ti_session_get_info() reports the
    backend, node counts after folding and fusion, and the arena size;
    ti_session_node_info() and ti_session_node_input/output() show the planned graph
    node by node (for profilers and debugging).

    3. Tensors
    ----------
    ti_tensor is a plain view: name, dtype, rank, shape[TI_MAX_DIMS], data, size_bytes.
    Layout is row-major with the ONNX (NCHW) semantics of the model. Element types are
    ti_dtype values; float32 is first-class, float16/float64 and the integer types are
    computed where the ONNX op allows them, TI_DTYPE_BOOL is one byte 0/1. Session
    tensors belong to the session. ti_tensor_decode_onnx() decodes a serialized
    TensorProto (the .pb files of ONNX test data) into a tensor the caller releases with
    ti_tensor_release().

    4. Backends and fallback
    ------------------------
    ti_session_desc.backend chooses where nodes run: TI_BACKEND_AUTO (the default),
    TI_BACKEND_CPU or TI_BACKEND_OPENCL. This version runs everything on the CPU: AUTO
    picks the CPU and says why in ti_session_info.fallback_reason; a fallback is not an
    error and is reported to desc->log at TI_LOG_INFO when a log callback is set. Only a
    backend requested explicitly that cannot work fails, with TI_ERR_BACKEND.

    5. Errors
    ---------
    Functions that can fail return a ti_status, or a pointer that is NULL on failure,
    and fill an optional ti_error: the code, the node index, name and op when the error
    is about a node, and a message such as
        "mobilenet.onnx: node 'conv_3' (Conv): weight has 3 dims, expected 4".
    The message starts with desc->name, the file name, or "<memory>". Codes:
    TI_ERR_INVALID_ARGUMENT (caller misuse), TI_ERR_IO, TI_ERR_BAD_MODEL (malformed or
    inconsistent file), TI_ERR_UNSUPPORTED (valid, but an op, dtype or attribute this
    build lacks: the message names it), TI_ERR_OUT_OF_MEMORY (allocation failed or a cap
    was exceeded) and TI_ERR_BACKEND. ti_status_string() never returns NULL.
    ti_op_supported(domain, op) says beforehand whether an op can run.

    6. Memory
    ---------
    All memory goes through an allocator: ti_model_desc.allocator and
    ti_session_desc.allocator take alloc/free hooks (set both or neither, else
    TI_ERR_INVALID_ARGUMENT), otherwise TI_MALLOC/TI_FREE. A model frees through the
    allocator it was loaded with. A session allocates at creation: its arena (activations,
    reused between tensors whose lifetimes do not overlap), packed weights, scratch
    buffers. ti_session_run allocates nothing when every shape is known at creation;
    graphs whose shapes depend on input values (ti_session_info.dynamic) plan again as
    needed. Every size computed from file data is overflow-checked and compared with the
    caps before anything is allocated.

    7. Threading
    ------------
    A session has its own thread pool of desc->num_threads threads (0: the number of
    online CPUs, at most 8; 1: no threads are started). Heavy kernels (convolution,
    matrix products, pooling) split their outer loops across it; the caller's thread
    works too. Nothing is global: sessions never share mutable state, so different
    sessions may run at the same time on different threads. With TI_NO_THREADS every
    session runs on the calling thread.
*/
/* ==== begin src/tinyinfer_api.h ============================================================= */
/* tinyinfer public API: the types and functions a user calls. Everything here is
 * stable surface: ti_ prefix for functions and types, TI_ for macros and enums.
 * Relies on <stddef.h> and <stdint.h> only. Must not expose any internal (ti__) name. */
#ifndef TINYINFER_H
#define TINYINFER_H

#include <stddef.h>
#include <stdint.h>

#define TINYINFER_VERSION_MAJOR 0
#define TINYINFER_VERSION_MINOR 1
#define TINYINFER_VERSION_PATCH 0
#define TINYINFER_VERSION_STRING "0.1.0"

#ifndef TI_API
#if defined(TI_STATIC) && (defined(__GNUC__) || defined(__clang__))
#define TI_API static __attribute__((unused)) /* uncalled API functions are not an error */
#elif defined(TI_STATIC)
#define TI_API static
#else
#define TI_API extern
#endif
#endif

/* Largest tensor rank accepted anywhere (files with more dims are refused). */
#ifndef TI_MAX_DIMS
#define TI_MAX_DIMS 8
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status and errors ------------------------------------------------------------ */
typedef enum ti_status {
    TI_OK = 0,
    TI_ERR_INVALID_ARGUMENT, /* caller misuse: NULL model, bad index, wrong shape   */
    TI_ERR_IO,               /* file could not be read                             */
    TI_ERR_BAD_MODEL,        /* malformed or inconsistent model file               */
    TI_ERR_UNSUPPORTED,      /* valid, but an op, dtype or attribute we lack        */
    TI_ERR_OUT_OF_MEMORY,    /* allocation failed or a resource cap was exceeded    */
    TI_ERR_BACKEND,          /* an explicitly requested backend failed              */
    TI_STATUS_COUNT
} ti_status;

/* Filled by every call that can fail (pass NULL if not wanted). The message starts with
 * the file name (or "<memory>"), then the node and op when there is one, then the reason:
 * "m.onnx: node 'conv_3' (Conv): weight has 3 dims, expected 4". */
typedef struct ti_error {
    ti_status code;
    int node_index;     /* -1 when not about a node */
    char node[64];      /* node name, may be empty  */
    char op[32];        /* op type, may be empty    */
    char message[320];
} ti_error;

/* Never returns NULL. */
TI_API const char *ti_status_string(ti_status code);

/* ---- tensors ---------------------------------------------------------------------- */
typedef enum ti_dtype {
    TI_DTYPE_UNKNOWN = 0,
    TI_DTYPE_F32,
    TI_DTYPE_F16,
    TI_DTYPE_F64,
    TI_DTYPE_I8,
    TI_DTYPE_U8,
    TI_DTYPE_I16,
    TI_DTYPE_U16,
    TI_DTYPE_I32,
    TI_DTYPE_U32,
    TI_DTYPE_I64,
    TI_DTYPE_U64,
    TI_DTYPE_BOOL, /* one byte per element, 0 or 1 */
    TI_DTYPE_BF16,
    TI_DTYPE_STRING, /* recognised in files, never computed on */
    TI_DTYPE_COUNT
} ti_dtype;

/* Name ("float32", "int64", ...) and element size in bytes (0 for unknown/string). */
TI_API const char *ti_dtype_name(ti_dtype t);
TI_API size_t ti_dtype_size(ti_dtype t);

/* Quantization of an integer tensor: real = scale * (q - zero_point). count is 0 for a
 * tensor that is not quantized, 1 per tensor, or the size of dim `axis` per channel. */
typedef struct ti_quant {
    int count;
    int axis;
    const float *scale;
    const int64_t *zero_point;
} ti_quant;

/* A view of a tensor. For session inputs and outputs it is owned by the session: `data`
 * points into the session's memory and stays valid until the next ti_session_run,
 * ti_session_set_input_shape or ti_session_destroy. A user writes input values into
 * `data` (size_bytes bytes) before ti_session_run. */
typedef struct ti_tensor {
    const char *name;
    ti_dtype dtype;
    int rank;
    int64_t shape[TI_MAX_DIMS];
    void *data;
    size_t size_bytes;
    ti_quant quant; /* TFLite's uint8/int8 tensors; count 0 otherwise */
} ti_tensor;

/* Number of elements (1 for rank 0). */
TI_API size_t ti_tensor_numel(const ti_tensor *t);

/* Decodes a serialized onnx.TensorProto (the test_data_set_N/input_K.pb files of the ONNX
 * test layout) into *out. out->data and out->name are allocated with malloc and owned by
 * the caller: release them with ti_tensor_release(out). */
TI_API ti_status ti_tensor_decode_onnx(const void *bytes, size_t size, ti_tensor *out,
                                       ti_error *err);
TI_API void ti_tensor_release(ti_tensor *t); /* frees what a decode allocated; NULL ok */

/* ---- memory ----------------------------------------------------------------------- */
/* Allocation hooks. Set both alloc and free, or neither (then malloc/free are used). */
typedef struct ti_allocator {
    void *(*alloc)(size_t size, size_t align, void *user); /* align: power of two */
    void (*free)(void *ptr, size_t size, void *user);
    void *user;
} ti_allocator;

/* ---- models ----------------------------------------------------------------------- */
typedef struct ti_model ti_model;

typedef enum ti_format { TI_FORMAT_AUTO = 0, TI_FORMAT_ONNX, TI_FORMAT_TFLITE } ti_format;

/* Options for loading; zero means the default noted beside each field. */
typedef struct ti_model_desc {
    ti_format format;          /* 0: detected from the bytes                         */
    ti_allocator allocator;    /* 0: malloc/free                                     */
    const char *name;          /* name used in error messages; 0: file name/"<memory>" */
    uint64_t max_tensor_bytes; /* 0: 2 GiB; larger initializers refuse the file      */
    uint64_t max_total_bytes;  /* 0: 8 GiB; all weights together                     */
    int max_nodes;             /* 0: 1,000,000                                       */
    int max_rank;              /* 0: TI_MAX_DIMS                                     */
} ti_model_desc;

/* Loads a model file (.onnx; ONNX external data is read from files beside it, paths
 * confined to the model's directory). desc may be NULL. Returns NULL and fills err on
 * failure. The model is owned by the caller (ti_model_free) and is read-only after
 * loading: sessions on several threads may share it. */
TI_API ti_model *ti_model_load_file(const char *path, const ti_model_desc *desc, ti_error *err);
/* Same from memory. The bytes are copied where needed; the caller may free them after. */
TI_API ti_model *ti_model_load_memory(const void *data, size_t size, const ti_model_desc *desc,
                                      ti_error *err);
TI_API void ti_model_free(ti_model *m); /* NULL ok */

/* Describes a model's graph inputs/outputs (declared shapes: -1 for a symbolic or unknown
 * dim, whose name is in dim_names). Pointers stay valid for the model's lifetime. */
typedef struct ti_value_info {
    const char *name;
    ti_dtype dtype;
    int rank; /* -1 when the file does not say */
    int64_t shape[TI_MAX_DIMS];
    const char *dim_names[TI_MAX_DIMS]; /* NULL for fixed dims */
    ti_quant quant;
} ti_value_info;

TI_API int ti_model_num_inputs(const ti_model *m);
TI_API int ti_model_num_outputs(const ti_model *m);
TI_API ti_status ti_model_input_info(const ti_model *m, int i, ti_value_info *out);
TI_API ti_status ti_model_output_info(const ti_model *m, int i, ti_value_info *out);
TI_API int ti_model_num_nodes(const ti_model *m);
/* Op type of node i ("Conv"), NULL when out of range. */
TI_API const char *ti_model_node_op(const ti_model *m, int i);
/* Name of node i, "" when the file gives none; NULL when out of range. */
TI_API const char *ti_model_node_name(const ti_model *m, int i);
/* Domain of node i ("" for the default ONNX domain); NULL when out of range. */
TI_API const char *ti_model_node_domain(const ti_model *m, int i);
/* The file's format, and the opset of the default ONNX domain (0 for other formats). */
TI_API ti_format ti_model_format(const ti_model *m);
TI_API int ti_model_opset(const ti_model *m);
/* 1 when this build can run the op (domain "" or "ai.onnx" for ONNX ops), else 0. */
TI_API int ti_op_supported(const char *domain, const char *op);
/* Total elements of all constant tensors (weights). */
TI_API uint64_t ti_model_num_parameters(const ti_model *m);

/* ---- sessions --------------------------------------------------------------------- */
typedef struct ti_session ti_session;

typedef enum ti_backend { TI_BACKEND_AUTO = 0, TI_BACKEND_CPU, TI_BACKEND_OPENCL } ti_backend;
typedef enum ti_precision { TI_PRECISION_DEFAULT = 0, TI_PRECISION_FP32, TI_PRECISION_FP16 } ti_precision;
typedef enum ti_log_level { TI_LOG_DEBUG = 0, TI_LOG_INFO, TI_LOG_WARN } ti_log_level;

/* Binds a symbolic dim ("batch", "N") of the model's inputs to a value. */
typedef struct ti_dim_binding {
    const char *name;
    int64_t value;
} ti_dim_binding;

/* Session options; zero means the default noted beside each field. */
typedef struct ti_session_desc {
    ti_backend backend;      /* 0: auto (the CPU in this version)                      */
    int num_threads;         /* 0: number of online CPUs, at most 8; 1: no threads     */
    ti_precision precision;  /* 0: fp32                                                */
    const ti_dim_binding *dim_bindings; /* symbolic dims; unbound ones default to 1    */
    int num_dim_bindings;
    int no_fusion;           /* 1: skip the fusion passes (for debugging)              */
    int no_constant_folding; /* 1: skip constant folding (for debugging)               */
    ti_allocator allocator;  /* 0: malloc/free                                         */
    const char *opencl_library; /* 0: $TINYINFER_OPENCL_LIBRARY, else the usual places   */
    void (*log)(ti_log_level level, const char *message, void *user); /* 0: silent     */
    void *log_user;
} ti_session_desc;

/* Creates a session: binds input shapes, infers shapes, folds constants, fuses, plans one
 * memory arena. desc may be NULL. The model must outlive the session. Returns NULL and
 * fills err on failure. A session is used by one thread at a time. */
TI_API ti_session *ti_session_create(const ti_model *m, const ti_session_desc *desc,
                                     ti_error *err);
TI_API void ti_session_destroy(ti_session *s); /* NULL ok */

TI_API int ti_session_num_inputs(const ti_session *s);
TI_API int ti_session_num_outputs(const ti_session *s);
/* Inputs/outputs by index or name; NULL when out of range / not found. Owned by the
 * session. An output's data is valid after ti_session_run. */
TI_API ti_tensor *ti_session_input(ti_session *s, int i);
TI_API ti_tensor *ti_session_output(ti_session *s, int i);
TI_API ti_tensor *ti_session_input_by_name(ti_session *s, const char *name);
TI_API ti_tensor *ti_session_output_by_name(ti_session *s, const char *name);

/* Changes the shape of input i (re-binding dynamic dims) and re-plans the session.
 * Allocates; previous tensor pointers' data become invalid. */
TI_API ti_status ti_session_set_input_shape(ti_session *s, int i, int rank, const int64_t *shape,
                                            ti_error *err);

/* Runs the graph on the current input values. Does not allocate when every shape in the
 * graph is known at creation (the usual case); graphs whose shapes depend on input values
 * (a Reshape whose shape is a graph input, say) re-plan as needed. */
TI_API ti_status ti_session_run(ti_session *s, ti_error *err);

typedef struct ti_session_info {
    ti_backend backend;           /* the backend that runs                           */
    const char *fallback_reason;  /* why not the requested backend; "" when none     */
    int num_threads;
    int num_nodes;                /* nodes left after folding, fusion, dead-node removal */
    int num_fused;                /* nodes removed by fusion                         */
    int num_folded;               /* nodes computed at creation (constant folding)   */
    size_t arena_bytes;           /* activation memory                              */
    int dynamic;                  /* 1 when shapes are re-inferred at each run      */
} ti_session_info;
TI_API ti_status ti_session_get_info(const ti_session *s, ti_session_info *out);

/* The planned graph, after folding and fusion, for tools and profilers. Node i runs i-th.
 * Tensors returned are owned by the session; shapes are those of the last plan or run. */
typedef struct ti_node_info {
    const char *name;
    const char *op;    /* "Conv" */
    const char *fused; /* activation folded into it ("Relu", "Clip", ...), "" when none */
    int num_inputs;
    int num_outputs;
} ti_node_info;
TI_API int ti_session_num_nodes(const ti_session *s);
TI_API ti_status ti_session_node_info(const ti_session *s, int i, ti_node_info *out);
/* Input/output j of planned node i; NULL when absent or out of range. */
TI_API const ti_tensor *ti_session_node_input(const ti_session *s, int i, int j);
TI_API const ti_tensor *ti_session_node_output(const ti_session *s, int i, int j);

#ifdef __cplusplus
}
#endif

#endif /* TINYINFER_H */
/* ==== end src/tinyinfer_api.h =============================================================== */

/* ==== begin src/cl/cl_api.h ================================================================= */
/* The OpenCL loader's public part: the CL types and constants tinyinfer uses, a function
 * table filled at run time with dlopen/dlsym (LoadLibrary/GetProcAddress on Windows), and
 * ti_cl_load/ti_cl_unload. No CL header is needed at build time; when the user included
 * Khronos' <CL/cl.h> first (CL_VERSION_1_0 defined), its types and constants are used.
 * This text is both tinyinfer_cl.h (on its own) and a part of tinyinfer.h; the shared
 * guard TINYINFER_CL_H makes including both harmless. Must not link anything. */
#ifndef TINYINFER_CL_H
#define TINYINFER_CL_H

#include <stddef.h>
#include <stdint.h>

#ifndef TI_CL_API
#if defined(TI_API) /* inside tinyinfer.h: the same linkage as the rest of the API */
#define TI_CL_API TI_API
#elif defined(TI_STATIC)
#define TI_CL_API static
#else
#define TI_CL_API extern
#endif
#endif

/* The calling convention of CL entry points and callbacks. */
#if defined(_WIN32) && !defined(_WIN64)
#define TI_CL_CALL __stdcall
#else
#define TI_CL_CALL
#endif

#ifndef CL_VERSION_1_0
/* Types as in Khronos' cl_platform.h / cl.h. The struct tags are Khronos' own, so that
 * pointers pass between this header and code built with the real headers. */
typedef int32_t cl_int;
typedef uint32_t cl_uint;
typedef int64_t cl_long;
typedef uint64_t cl_ulong;
typedef cl_uint cl_bool;
typedef cl_ulong cl_bitfield;
typedef cl_bitfield cl_device_type;
typedef cl_uint cl_platform_info;
typedef cl_uint cl_device_info;
typedef cl_bitfield cl_command_queue_properties;
typedef cl_bitfield cl_queue_properties;
typedef intptr_t cl_context_properties;
typedef cl_uint cl_context_info;
typedef cl_bitfield cl_mem_flags;
typedef cl_bitfield cl_map_flags;
typedef cl_uint cl_program_info;
typedef cl_uint cl_program_build_info;
typedef cl_int cl_build_status;
typedef cl_uint cl_kernel_work_group_info;
typedef cl_uint cl_event_info;
typedef cl_uint cl_profiling_info;
typedef struct _cl_platform_id *cl_platform_id;
typedef struct _cl_device_id *cl_device_id;
typedef struct _cl_context *cl_context;
typedef struct _cl_command_queue *cl_command_queue;
typedef struct _cl_mem *cl_mem;
typedef struct _cl_program *cl_program;
typedef struct _cl_kernel *cl_kernel;
typedef struct _cl_event *cl_event;

#define CL_SUCCESS 0
#define CL_DEVICE_NOT_FOUND -1
#define CL_DEVICE_NOT_AVAILABLE -2
#define CL_COMPILER_NOT_AVAILABLE -3
#define CL_MEM_OBJECT_ALLOCATION_FAILURE -4
#define CL_OUT_OF_RESOURCES -5
#define CL_OUT_OF_HOST_MEMORY -6
#define CL_PROFILING_INFO_NOT_AVAILABLE -7
#define CL_BUILD_PROGRAM_FAILURE -11
#define CL_MAP_FAILURE -12
#define CL_INVALID_VALUE -30
#define CL_INVALID_DEVICE_TYPE -31
#define CL_INVALID_PLATFORM -32
#define CL_INVALID_DEVICE -33
#define CL_INVALID_CONTEXT -34
#define CL_INVALID_COMMAND_QUEUE -36
#define CL_INVALID_MEM_OBJECT -38
#define CL_INVALID_BINARY -42
#define CL_INVALID_BUILD_OPTIONS -43
#define CL_INVALID_PROGRAM -44
#define CL_INVALID_PROGRAM_EXECUTABLE -45
#define CL_INVALID_KERNEL_NAME -46
#define CL_INVALID_KERNEL -48
#define CL_INVALID_ARG_INDEX -49
#define CL_INVALID_ARG_VALUE -50
#define CL_INVALID_ARG_SIZE -51
#define CL_INVALID_KERNEL_ARGS -52
#define CL_INVALID_WORK_DIMENSION -53
#define CL_INVALID_WORK_GROUP_SIZE -54
#define CL_INVALID_WORK_ITEM_SIZE -55
#define CL_INVALID_GLOBAL_OFFSET -56
#define CL_INVALID_EVENT_WAIT_LIST -57
#define CL_INVALID_EVENT -58
#define CL_INVALID_OPERATION -59
#define CL_INVALID_BUFFER_SIZE -61
#define CL_INVALID_GLOBAL_WORK_SIZE -63
#define CL_PLATFORM_NOT_FOUND_KHR -1001

#define CL_FALSE 0
#define CL_TRUE 1

#define CL_PLATFORM_PROFILE 0x0900
#define CL_PLATFORM_VERSION 0x0901
#define CL_PLATFORM_NAME 0x0902
#define CL_PLATFORM_VENDOR 0x0903
#define CL_PLATFORM_EXTENSIONS 0x0904

#define CL_DEVICE_TYPE_DEFAULT (1 << 0)
#define CL_DEVICE_TYPE_CPU (1 << 1)
#define CL_DEVICE_TYPE_GPU (1 << 2)
#define CL_DEVICE_TYPE_ACCELERATOR (1 << 3)
#define CL_DEVICE_TYPE_ALL 0xFFFFFFFF

#define CL_DEVICE_TYPE 0x1000
#define CL_DEVICE_MAX_COMPUTE_UNITS 0x1002
#define CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS 0x1003
#define CL_DEVICE_MAX_WORK_GROUP_SIZE 0x1004
#define CL_DEVICE_MAX_WORK_ITEM_SIZES 0x1005
#define CL_DEVICE_MAX_CLOCK_FREQUENCY 0x100C
#define CL_DEVICE_MAX_MEM_ALLOC_SIZE 0x1010
#define CL_DEVICE_GLOBAL_MEM_SIZE 0x101F
#define CL_DEVICE_LOCAL_MEM_SIZE 0x1023
#define CL_DEVICE_HOST_UNIFIED_MEMORY 0x1035
#define CL_DEVICE_NAME 0x102B
#define CL_DEVICE_VENDOR 0x102C
#define CL_DRIVER_VERSION 0x102D
#define CL_DEVICE_VERSION 0x102F
#define CL_DEVICE_EXTENSIONS 0x1030

#define CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE (1 << 0)
#define CL_QUEUE_PROFILING_ENABLE (1 << 1)
#define CL_QUEUE_PROPERTIES 0x1093

#define CL_MEM_READ_WRITE (1 << 0)
#define CL_MEM_WRITE_ONLY (1 << 1)
#define CL_MEM_READ_ONLY (1 << 2)
#define CL_MEM_USE_HOST_PTR (1 << 3)
#define CL_MEM_ALLOC_HOST_PTR (1 << 4)
#define CL_MEM_COPY_HOST_PTR (1 << 5)

#define CL_MAP_READ (1 << 0)
#define CL_MAP_WRITE (1 << 1)
#define CL_MAP_WRITE_INVALIDATE_REGION (1 << 2)

#define CL_PROGRAM_NUM_DEVICES 0x1162
#define CL_PROGRAM_DEVICES 0x1163
#define CL_PROGRAM_BINARY_SIZES 0x1165
#define CL_PROGRAM_BINARIES 0x1166
#define CL_PROGRAM_BUILD_STATUS 0x1181
#define CL_PROGRAM_BUILD_OPTIONS 0x1182
#define CL_PROGRAM_BUILD_LOG 0x1183
#define CL_BUILD_SUCCESS 0
#define CL_BUILD_NONE -1
#define CL_BUILD_ERROR -2
#define CL_BUILD_IN_PROGRESS -3

#define CL_KERNEL_WORK_GROUP_SIZE 0x11B0
#define CL_KERNEL_COMPILE_WORK_GROUP_SIZE 0x11B1
#define CL_KERNEL_LOCAL_MEM_SIZE 0x11B2
#define CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE 0x11B3
#define CL_KERNEL_PRIVATE_MEM_SIZE 0x11B4

#define CL_EVENT_COMMAND_EXECUTION_STATUS 0x11D3
#define CL_COMPLETE 0x0
#define CL_RUNNING 0x1
#define CL_SUBMITTED 0x2
#define CL_QUEUED 0x3

#define CL_PROFILING_COMMAND_QUEUED 0x1280
#define CL_PROFILING_COMMAND_SUBMIT 0x1281
#define CL_PROFILING_COMMAND_START 0x1282
#define CL_PROFILING_COMMAND_END 0x1283
#endif /* CL_VERSION_1_0 */

/* X(required, return type, name, parameter list): drives the table fields, the loading
 * loop and the header cross-check test. Optional entries (CL 1.1+, 2.0) may stay NULL. */
#define TI_CL_FUNCS(X)                                                                         \
    X(1, cl_int, clGetPlatformIDs, (cl_uint, cl_platform_id *, cl_uint *))                      \
    X(1, cl_int, clGetPlatformInfo, (cl_platform_id, cl_platform_info, size_t, void *, size_t *)) \
    X(1, cl_int, clGetDeviceIDs, (cl_platform_id, cl_device_type, cl_uint, cl_device_id *, cl_uint *)) \
    X(1, cl_int, clGetDeviceInfo, (cl_device_id, cl_device_info, size_t, void *, size_t *))     \
    X(1, cl_context, clCreateContext,                                                          \
      (const cl_context_properties *, cl_uint, const cl_device_id *,                           \
       void(TI_CL_CALL *)(const char *, const void *, size_t, void *), void *, cl_int *))       \
    X(1, cl_int, clReleaseContext, (cl_context))                                               \
    X(0, cl_command_queue, clCreateCommandQueue,                                               \
      (cl_context, cl_device_id, cl_command_queue_properties, cl_int *))                       \
    X(0, cl_command_queue, clCreateCommandQueueWithProperties,                                 \
      (cl_context, cl_device_id, const cl_queue_properties *, cl_int *))                       \
    X(1, cl_int, clReleaseCommandQueue, (cl_command_queue))                                    \
    X(1, cl_mem, clCreateBuffer, (cl_context, cl_mem_flags, size_t, void *, cl_int *))          \
    X(1, cl_int, clReleaseMemObject, (cl_mem))                                                 \
    X(1, cl_program, clCreateProgramWithSource,                                                \
      (cl_context, cl_uint, const char **, const size_t *, cl_int *))                          \
    X(1, cl_program, clCreateProgramWithBinary,                                                \
      (cl_context, cl_uint, const cl_device_id *, const size_t *, const unsigned char **,       \
       cl_int *, cl_int *))                                                                    \
    X(1, cl_int, clBuildProgram,                                                               \
      (cl_program, cl_uint, const cl_device_id *, const char *,                                \
       void(TI_CL_CALL *)(cl_program, void *), void *))                                        \
    X(1, cl_int, clGetProgramInfo, (cl_program, cl_program_info, size_t, void *, size_t *))     \
    X(1, cl_int, clGetProgramBuildInfo,                                                        \
      (cl_program, cl_device_id, cl_program_build_info, size_t, void *, size_t *))             \
    X(1, cl_int, clReleaseProgram, (cl_program))                                               \
    X(1, cl_kernel, clCreateKernel, (cl_program, const char *, cl_int *))                      \
    X(1, cl_int, clReleaseKernel, (cl_kernel))                                                 \
    X(1, cl_int, clSetKernelArg, (cl_kernel, cl_uint, size_t, const void *))                   \
    X(1, cl_int, clGetKernelWorkGroupInfo,                                                     \
      (cl_kernel, cl_device_id, cl_kernel_work_group_info, size_t, void *, size_t *))          \
    X(1, cl_int, clEnqueueNDRangeKernel,                                                       \
      (cl_command_queue, cl_kernel, cl_uint, const size_t *, const size_t *, const size_t *,   \
       cl_uint, const cl_event *, cl_event *))                                                 \
    X(1, cl_int, clEnqueueReadBuffer,                                                          \
      (cl_command_queue, cl_mem, cl_bool, size_t, size_t, void *, cl_uint, const cl_event *,   \
       cl_event *))                                                                            \
    X(1, cl_int, clEnqueueWriteBuffer,                                                         \
      (cl_command_queue, cl_mem, cl_bool, size_t, size_t, const void *, cl_uint,               \
       const cl_event *, cl_event *))                                                          \
    X(1, cl_int, clEnqueueCopyBuffer,                                                          \
      (cl_command_queue, cl_mem, cl_mem, size_t, size_t, size_t, cl_uint, const cl_event *,    \
       cl_event *))                                                                            \
    X(1, void *, clEnqueueMapBuffer,                                                           \
      (cl_command_queue, cl_mem, cl_bool, cl_map_flags, size_t, size_t, cl_uint,               \
       const cl_event *, cl_event *, cl_int *))                                                \
    X(1, cl_int, clEnqueueUnmapMemObject,                                                      \
      (cl_command_queue, cl_mem, void *, cl_uint, const cl_event *, cl_event *))               \
    X(1, cl_int, clFlush, (cl_command_queue))                                                  \
    X(1, cl_int, clFinish, (cl_command_queue))                                                 \
    X(1, cl_int, clWaitForEvents, (cl_uint, const cl_event *))                                 \
    X(1, cl_int, clGetEventInfo, (cl_event, cl_event_info, size_t, void *, size_t *))           \
    X(1, cl_int, clGetEventProfilingInfo, (cl_event, cl_profiling_info, size_t, void *, size_t *)) \
    X(1, cl_int, clReleaseEvent, (cl_event))                                                   \
    X(0, cl_int, clSetEventCallback,                                                           \
      (cl_event, cl_int, void(TI_CL_CALL *)(cl_event, cl_int, void *), void *))                \
    X(0, cl_int, clEnqueueFillBuffer,                                                          \
      (cl_command_queue, cl_mem, const void *, size_t, size_t, size_t, cl_uint,                \
       const cl_event *, cl_event *))

/* The function table: never globals named clXxx, so it can sit beside a linked OpenCL. */
typedef struct ti_cl_api {
    void *lib; /* the dlopen handle; NULL when not loaded */
#define TI__CL_FIELD(req, ret, name, args) ret(TI_CL_CALL *name) args;
    TI_CL_FUNCS(TI__CL_FIELD)
#undef TI__CL_FIELD
} ti_cl_api;

typedef enum ti_cl_status {
    TI_CL_OK = 0,
    TI_CL_NOT_FOUND,  /* no candidate library could be opened */
    TI_CL_INCOMPLETE  /* a library opened but lacks a required symbol */
} ti_cl_status;

#define TI_CL_MAX_TRIED 24
/* What ti_cl_load tried: every candidate with the loader's error text, the first required
 * symbol that was missing, and the library that was loaded. */
typedef struct ti_cl_report {
    int num_tried;
    struct {
        char path[96];
        char error[160]; /* "" for the one that loaded */
    } tried[TI_CL_MAX_TRIED];
    char missing_symbol[64];
    char loaded[96];
} ti_cl_report;

#ifdef __cplusplus
extern "C" {
#endif
/* Opens the OpenCL library and fills *api. With library_path (or, when it is NULL, the
 * environment variable TINYINFER_OPENCL_LIBRARY) only that file is tried; otherwise the
 * platform's usual names and vendor paths (Android vendor libraries, libOpenCL.so.1, the
 * macOS framework, OpenCL.dll). report may be NULL. On failure *api is zeroed. */
TI_CL_API ti_cl_status ti_cl_load(ti_cl_api *api, const char *library_path, ti_cl_report *report);
/* Closes the library and zeroes the table. NULL and unloaded tables are fine. */
TI_CL_API void ti_cl_unload(ti_cl_api *api);
/* "CL_INVALID_WORK_GROUP_SIZE" for -54, ...; never NULL. */
TI_CL_API const char *ti_cl_error_string(cl_int code);
#ifdef __cplusplus
}
#endif

#endif /* TINYINFER_CL_H */
/* ==== end src/cl/cl_api.h =================================================================== */

/* ======================================================================================== */
/*  Implementation. Compiled only in the one translation unit that defines                */
/*  TINYINFER_IMPLEMENTATION before including this header. Generated from src/ by          */
/*  tools/amalgamate: edit src/, not this file. Files, in order:                            */
/*    src/core/config.h                                                                    */
/*    src/core/internal.h                                                                  */
/*    src/core/alloc.c                                                                     */
/*    src/core/error.c                                                                     */
/*    src/core/tensor.c                                                                    */
/*    src/core/qmath.c                                                                     */
/*    src/core/threadpool.c                                                                */
/*    src/graph/ir.c                                                                       */
/*    src/cpu/attention.c                                                                  */
/*    src/cpu/binary.c                                                                     */
/*    src/cpu/conv.c                                                                       */
/*    src/cpu/einsum.c                                                                     */
/*    src/cpu/gemm.c                                                                       */
/*    src/cpu/generate.c                                                                   */
/*    src/cpu/index.c                                                                      */
/*    src/cpu/loss.c                                                                       */
/*    src/cpu/movement.c                                                                   */
/*    src/cpu/norm.c                                                                       */
/*    src/cpu/pool.c                                                                       */
/*    src/cpu/quant.c                                                                      */
/*    src/cpu/reduce.c                                                                     */
/*    src/cpu/resize.c                                                                     */
/*    src/cpu/rnn.c                                                                        */
/*    src/cpu/tfl_conv.c                                                                   */
/*    src/cpu/tfl_detect.c                                                                 */
/*    src/cpu/tfl_elementwise.c                                                            */
/*    src/cpu/tfl_lstm.c                                                                   */
/*    src/cpu/tfl_pool.c                                                                   */
/*    src/cpu/tfl_shape.c                                                                  */
/*    src/cpu/unary.c                                                                      */
/*    src/graph/ops.c                                                                      */
/*    src/graph/passes.c                                                                   */
/*    src/formats/protobuf.c                                                               */
/*    src/formats/onnx.c                                                                   */
/*    src/formats/flatbuf.c                                                                */
/*    src/formats/tflite.c                                                                 */
/*    src/cl/loader.c                                                                      */
/*    src/cl/probe.c                                                                       */
/*    src/core/model.c                                                                     */
/*    src/core/session.c                                                                   */
/* ======================================================================================== */
#if defined(TINYINFER_IMPLEMENTATION) && !defined(TINYINFER_IMPLEMENTATION_DONE)
#define TINYINFER_IMPLEMENTATION_DONE

/* ==== begin src/core/config.h =============================================================== */
/* Configuration macros and their defaults, in one place (see the table at the top of
 * tinyinfer.h). Relies on nothing but the C library headers. Must not define anything
 * a user could see outside the TI_/TI__ prefixes. */
#if defined(TI_MALLOC) && !defined(TI_FREE) || !defined(TI_MALLOC) && defined(TI_FREE)
#error "tinyinfer: define both TI_MALLOC and TI_FREE, or neither"
#endif
#ifndef TI_MALLOC
#define TI_MALLOC(sz) malloc(sz)
#define TI_FREE(p) free(p)
#endif
#ifndef TI_ASSERT
#include <assert.h>
#define TI_ASSERT(x) assert(x)
#endif
/* Largest single tensor (bytes) a file may declare, unless the desc says otherwise. */
#ifndef TI_MAX_TENSOR_BYTES
#define TI_MAX_TENSOR_BYTES ((uint64_t)2 << 30)
#endif
#ifndef TI_MAX_TOTAL_BYTES
#define TI_MAX_TOTAL_BYTES ((uint64_t)8 << 30)
#endif
#ifndef TI_MAX_NODES
#define TI_MAX_NODES 1000000
#endif
/* Nesting depth for recursive structures (protobuf messages, flatbuffer tables). */
#ifndef TI_MAX_DEPTH
#define TI_MAX_DEPTH 32
#endif
#ifndef TI_MAX_THREADS
#define TI_MAX_THREADS 64
#endif

#if defined(__GNUC__) || defined(__clang__)
#define TI__PRIVATE static __attribute__((unused))
#else
#define TI__PRIVATE static
#endif

#if !defined(TI_NO_THREADS) && defined(_WIN32)
#define TI_NO_THREADS /* TODO(#6): a Win32 thread pool; until then one thread on Windows */
#endif
/* ==== end src/core/config.h ================================================================= */

/* ==== begin src/core/internal.h ============================================================= */
/* Internal declarations shared by every implementation file: allocation, errors, the IR
 * (values, nodes, attributes), the kernel interface and the op registry. Relies on the
 * public API and config.h. Must not declare anything without the ti__/TI__ prefix. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h> /* vsnprintf only: the library never prints */
#include <stdlib.h>
#include <string.h>


#define TI__MIN(a, b) ((a) < (b) ? (a) : (b))
#define TI__MAX(a, b) ((a) > (b) ? (a) : (b))
#define TI__COUNTOF(a) (sizeof(a) / sizeof((a)[0]))

/* ---- allocation (core/alloc.c) ------------------------------------------------------ */
/* All memory goes through an allocator: the user's hooks or TI_MALLOC/TI_FREE. Blocks are
 * 64-byte aligned. ti__free takes the size that was asked for (the user hook needs it). */
TI__PRIVATE void *ti__malloc(const ti_allocator *a, size_t size);
TI__PRIVATE void *ti__calloc(const ti_allocator *a, size_t size);
TI__PRIVATE void ti__free(const ti_allocator *a, void *p, size_t size);
/* Grows an array of elem_bytes elements to hold at least need; returns 0 on failure. */
TI__PRIVATE int ti__grow(const ti_allocator *a, void **arr, int *cap, int need, size_t elem_bytes);
TI__PRIVATE int ti__allocator_valid(const ti_allocator *a);

/* A pool: many small allocations that live as long as their owner, freed together. */
typedef struct ti__pool_block ti__pool_block;
typedef struct ti__pool {
    ti_allocator al;
    ti__pool_block *head;
    size_t used_bytes; /* all blocks together, for resource caps */
} ti__pool;
TI__PRIVATE void *ti__pool_alloc(ti__pool *p, size_t size); /* zeroed, 16-aligned; NULL on OOM */
TI__PRIVATE char *ti__pool_strndup(ti__pool *p, const char *s, size_t n);
TI__PRIVATE void ti__pool_release(ti__pool *p);

/* Checked size arithmetic: 1 on success, 0 on overflow. */
TI__PRIVATE int ti__mul_size(size_t a, size_t b, size_t *out) {
    if (b != 0 && a > SIZE_MAX / b) return 0;
    *out = a * b;
    return 1;
}
TI__PRIVATE int ti__add_size(size_t a, size_t b, size_t *out) {
    if (a > SIZE_MAX - b) return 0;
    *out = a + b;
    return 1;
}

/* ---- errors (core/error.c) ---------------------------------------------------------- */
/* Formats "<file>: <reason>" into err (if not NULL) and returns code. */
TI__PRIVATE ti_status ti__fail(ti_error *err, ti_status code, const char *file, const char *fmt,
                               ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* Formats "<file>: node '<node>' (<op>): <reason>". */
TI__PRIVATE ti_status ti__fail_node(ti_error *err, ti_status code, const char *file, int node_index,
                                    const char *node, const char *op, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 7, 8)))
#endif
    ;
TI__PRIVATE void ti__error_clear(ti_error *err);

/* ---- the IR (graph/ir.c) ------------------------------------------------------------ */
typedef enum ti__attr_type {
    TI__ATTR_NONE = 0,
    TI__ATTR_FLOAT,
    TI__ATTR_INT,
    TI__ATTR_STRING,
    TI__ATTR_TENSOR,
    TI__ATTR_GRAPH, /* kept so ops can say "subgraphs unsupported"; never followed */
    TI__ATTR_FLOATS,
    TI__ATTR_INTS,
    TI__ATTR_STRINGS,
    TI__ATTR_TENSORS,
    TI__ATTR_GRAPHS
} ti__attr_type;

typedef struct ti__attr {
    const char *name;
    ti__attr_type type;
    float f;
    int64_t i;
    const char *s; /* STRING: bytes, NUL-terminated copy; s_len excludes the NUL */
    size_t s_len;
    const float *floats; /* FLOATS */
    const int64_t *ints; /* INTS */
    const char **strings; /* STRINGS */
    int count;           /* elements of FLOATS / INTS / STRINGS */
    int tensor;          /* TENSOR: index of a constant value in the model; -1 otherwise */
} ti__attr;

/* Activations the fusion pass folds into Conv / ConvTranspose / Gemm / MatMul. */
typedef enum ti__act {
    TI__ACT_NONE = 0,
    TI__ACT_RELU,
    TI__ACT_CLIP, /* a = min, b = max */
    TI__ACT_LEAKY_RELU, /* a = alpha */
    TI__ACT_SIGMOID,
    TI__ACT_HARD_SIGMOID, /* a = alpha, b = beta */
    TI__ACT_HARD_SWISH,
    TI__ACT_TANH,
    TI__ACT_SILU /* x * sigmoid(x): Mul(x, Sigmoid(x)) */
} ti__act;

TI__PRIVATE float ti__act_apply(int act, float a, float b, float x) {
    switch (act) {
    case TI__ACT_RELU: return x > 0.0f ? x : 0.0f;
    case TI__ACT_CLIP: return x < a ? a : (x > b ? b : x);
    case TI__ACT_LEAKY_RELU: return x >= 0.0f ? x : a * x;
    case TI__ACT_SIGMOID: return 1.0f / (1.0f + expf(-x));
    case TI__ACT_HARD_SIGMOID: {
        float y = a * x + b;
        return y < 0.0f ? 0.0f : (y > 1.0f ? 1.0f : y);
    }
    case TI__ACT_HARD_SWISH: {
        float y = x / 6.0f + 0.5f;
        return x * (y < 0.0f ? 0.0f : (y > 1.0f ? 1.0f : y));
    }
    case TI__ACT_TANH: return tanhf(x);
    case TI__ACT_SILU: return x / (1.0f + expf(-x));
    default: return x;
    }
}

typedef struct ti__node {
    const char *name;   /* never NULL ("" when the file has none) */
    const char *op;     /* op type: "Conv" */
    const char *domain; /* "" for the default ONNX domain */
    int n_inputs, n_outputs;
    int *inputs;  /* value indices; -1 for an omitted optional input */
    int *outputs; /* value indices; -1 for an omitted optional output */
    int n_attrs;
    ti__attr *attrs;
    int act; /* fused activation (ti__act), set by the fusion pass */
    float act_a, act_b;
} ti__node;

/* A tensor of the graph: its declared type and shape, and its data when constant. */
typedef struct ti__value {
    const char *name;
    ti_dtype dtype;
    int rank; /* -1: unknown */
    int64_t dims[TI_MAX_DIMS]; /* -1: symbolic or unknown */
    const char *dim_names[TI_MAX_DIMS];
    const void *data; /* constant data (initializer or Constant attr), else NULL */
    size_t bytes;
    int is_const;
    ti_quant quant; /* TFLite quantization; arrays in the model's pool */
} ti__value;

struct ti_model {
    ti_allocator al;
    ti__pool pool; /* every allocation of the model's lifetime */
    ti_model_desc desc; /* with defaults filled in */
    char name[256];     /* file name or "<memory>", used in messages */
    char dir[1024];     /* directory of the file, for external data; "" from memory */
    ti_format format;
    int opset; /* ai.onnx opset in use */
    ti__value *values;
    int n_values, cap_values;
    ti__node *nodes;
    int n_nodes, cap_nodes;
    int *inputs; /* value indices of graph inputs that are not constants */
    int n_inputs, cap_inputs;
    int *outputs;
    int n_outputs, cap_outputs;
    int *hash; /* open addressing: value index per slot, -1 empty */
    int hash_cap;
    uint64_t const_bytes; /* all constant data, against desc.max_total_bytes */
};

/* Builders for readers. Names are copied into the model's pool. Return -1 on OOM. */
TI__PRIVATE int ti__model_find_value(const ti_model *m, const char *name);
TI__PRIVATE int ti__model_value(ti_model *m, const char *name); /* find or add */
TI__PRIVATE int ti__model_add_value(ti_model *m, const char *name); /* always new (name may repeat) */
TI__PRIVATE ti__node *ti__model_add_node(ti_model *m, int n_inputs, int n_outputs, int n_attrs);
TI__PRIVATE int ti__model_add_input(ti_model *m, int value);
TI__PRIVATE int ti__model_add_output(ti_model *m, int value);
/* Checks and accounts a constant's size against the model's caps; fills err. */
TI__PRIVATE ti_status ti__model_check_const(ti_model *m, const char *what, ti_dtype dt,
                                            int rank, const int64_t *dims, size_t *bytes,
                                            ti_error *err);

/* Attribute lookups on a node. */
TI__PRIVATE const ti__attr *ti__attr_get(const ti__node *n, const char *name);
TI__PRIVATE int64_t ti__attr_i(const ti__node *n, const char *name, int64_t def);
TI__PRIVATE float ti__attr_f(const ti__node *n, const char *name, float def);
TI__PRIVATE const char *ti__attr_s(const ti__node *n, const char *name, const char *def);
/* INTS / FLOATS: pointer and *count, or NULL and *count = 0 when absent. */
TI__PRIVATE const int64_t *ti__attr_ints(const ti__node *n, const char *name, int *count);
TI__PRIVATE const float *ti__attr_floats(const ti__node *n, const char *name, int *count);

/* ---- tensors (core/tensor.c) -------------------------------------------------------- */
TI__PRIVATE size_t ti__numel(const ti_tensor *t);
TI__PRIVATE size_t ti__shape_numel(int rank, const int64_t *dims);
/* Sets dtype and shape (and size_bytes); data untouched. Returns 0 if rank > TI_MAX_DIMS,
 * a dim is negative or the byte size overflows. */
TI__PRIVATE int ti__set_shape(ti_tensor *t, ti_dtype dt, int rank, const int64_t *dims);
/* Element access of any numeric dtype, slow but general (shapes, indices, test code). */
TI__PRIVATE int64_t ti__get_i64(const ti_tensor *t, size_t i);
TI__PRIVATE double ti__get_f64(const ti_tensor *t, size_t i);
TI__PRIVATE void ti__set_f64(ti_tensor *t, size_t i, double v);
TI__PRIVATE void ti__set_i64(ti_tensor *t, size_t i, int64_t v);
TI__PRIVATE float ti__f16_to_f32(uint16_t h);
TI__PRIVATE uint16_t ti__f32_to_f16(float f);
TI__PRIVATE float ti__bf16_to_f32(uint16_t h);
TI__PRIVATE uint16_t ti__f32_to_bf16(float f);
TI__PRIVATE int ti__dtype_is_float(ti_dtype t);
TI__PRIVATE int ti__dtype_is_int(ti_dtype t); /* signed or unsigned integer, not bool */
/* Strides (in elements) of a row-major shape. */
TI__PRIVATE void ti__strides(int rank, const int64_t *dims, int64_t *strides);
/* Numpy broadcast of two shapes; returns 0 when incompatible. */
TI__PRIVATE int ti__broadcast_shape(int ra, const int64_t *a, int rb, const int64_t *b, int *rout,
                                    int64_t *out);

/* ---- threads (core/threadpool.c) ---------------------------------------------------- */
typedef struct ti__threadpool ti__threadpool;
typedef void (*ti__range_fn)(void *ctx, size_t begin, size_t end);
TI__PRIVATE ti__threadpool *ti__threadpool_create(const ti_allocator *al, int num_threads);
TI__PRIVATE void ti__threadpool_destroy(ti__threadpool *tp);
TI__PRIVATE int ti__threadpool_size(const ti__threadpool *tp);
/* Calls fn on disjoint sub-ranges of [0, n) in parallel and waits; tp may be NULL (serial).
 * Does not allocate. `grain`: smallest sub-range worth a thread (elements of work). */
TI__PRIVATE void ti__parallel_for(ti__threadpool *tp, size_t n, size_t grain, ti__range_fn fn,
                                  void *ctx);
TI__PRIVATE int ti__cpu_count(void);

/* ---- kernels and the op registry (graph/ops.c) -------------------------------------- */
/* What a kernel sees: its node, its input and output tensors, and the session's helpers.
 * Absent optional inputs/outputs are NULL. */
typedef struct ti__kctx {
    const ti_model *model;
    const ti__node *node;
    int node_index;
    ti_tensor **in;
    int n_in;
    ti_tensor **out;
    int n_out;
    int opset;       /* ai.onnx opset of the model */
    ti_error *err;
    const char *file;
    void *scratch;   /* scratch memory of at least the bytes the op's scratch fn asked for */
    size_t scratch_bytes;
    ti__threadpool *tp; /* may be NULL */
} ti__kctx;

/* Returned by a shape function that needs an input's values (in[i]->data == NULL while
 * planning) to know its output shape. The session then re-infers shapes at each run. */
#define TI__NEED_VALUE 1000

/* Shape function: sets each out[i]'s dtype and shape from the inputs' dtypes and shapes
 * (and their values where in[i]->data != NULL). Validates attributes and input dtypes.
 * Returns TI_OK, an error (via ti__kfail) or TI__NEED_VALUE. */
typedef int (*ti__shape_fn)(ti__kctx *k);
/* Run function: computes out[i]->data (already sized) from the inputs. Never allocates. */
typedef ti_status (*ti__run_fn)(ti__kctx *k);
/* Optional: scratch bytes the run needs, once shapes are known. */
typedef size_t (*ti__scratch_fn)(ti__kctx *k);

enum {
    TI__OP_NO_FOLD = 1,    /* never computed at creation (random ops) */
    TI__OP_SHAPE_ONLY = 2  /* output depends on input shapes only (Shape, Size): foldable */
};

typedef struct ti__op {
    const char *name; /* ONNX op type */
    ti__shape_fn shape;
    ti__run_fn run;
    ti__scratch_fn scratch;
    unsigned flags;
} ti__op;

/* NULL when the op is unknown. domain "" and "ai.onnx" are the default ONNX domain;
 * TFLite builtin ops live in domain "tflite" under their schema names ("CONV_2D"). */
TI__PRIVATE const ti__op *ti__op_find(const char *domain, const char *name);

/* Fails the current node: "<file>: node '<name>' (<op>): <reason>". */
TI__PRIVATE ti_status ti__kfail(ti__kctx *k, ti_status code, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* The input's values are needed to infer shapes: returns TI__NEED_VALUE from the shape fn. */
#define TI__NEED(k, t)                                                                      \
    do {                                                                                    \
        if ((t) != NULL && (t)->data == NULL && ti__numel(t) != 0) return TI__NEED_VALUE;   \
    } while (0)
/* Requires input i to be present. */
#define TI__REQUIRE_INPUT(k, i)                                                             \
    do {                                                                                    \
        if ((i) >= (k)->n_in || (k)->in[(i)] == NULL)                                       \
            return ti__kfail((k), TI_ERR_BAD_MODEL, "input %d is required", (int)(i));      \
    } while (0)

/* ---- sessions (graph/passes.c, core/session.c) -------------------------------------- */
/* Per value, what the planner knows. */
typedef struct ti__vinfo {
    int is_const;  /* data fixed for the session's life (initializer or folded) */
    int is_input;  /* graph input: the user writes it */
    int is_output; /* graph output */
    int first, last; /* node positions of the producer and the last consumer */
    int heap;        /* data lives in its own buffer (dynamic region), not in the arena */
    size_t heap_bytes;
} ti__vinfo;

struct ti_session {
    ti_allocator al;
    const ti_model *m;
    ti_session_desc desc;
    ti__pool plan_pool; /* everything a plan owns: node copies, folded constants */
    int n_values, cap_values; /* model values + values made by passes */
    ti_tensor *t;             /* runtime tensors, one per value */
    ti__vinfo *vi;
    int64_t (*input_shapes)[TI_MAX_DIMS]; /* user-set input shapes; rank in input_ranks */
    int *input_ranks;                     /* -1: use the model's declared shape */
    ti__node *nodes;  /* the plan: live nodes in execution order */
    const ti__op **ops;
    ti_tensor ***io;  /* per node: n_inputs + n_outputs tensor pointers (NULL = absent) */
    int n_nodes;
    int first_dynamic; /* nodes from here re-infer shapes at each run; n_nodes when static */
    unsigned char *arena;
    size_t arena_bytes;
    void *scratch;
    size_t scratch_bytes;
    ti__threadpool *tp;
    int planned; /* 0 while an input's shape is unknown */
    char fallback[320]; /* why the requested backend is not the one running */
    char unplanned_reason[160];
    ti_session_info info;
};
TI__PRIVATE int ti__session_new_value(ti_session *s, const char *name);
TI__PRIVATE int ti__session_bind_io(ti_session *s, int n);
TI__PRIVATE int ti__pass_live_nodes(ti_session *s, char *live);
TI__PRIVATE ti_status ti__pass_fuse(ti_session *s, ti_error *err);
/* formats/onnx.c */
#ifndef TI_NO_TFLITE
/* formats/tflite.c: same contract as ti__onnx_parse; nodes get domain "tflite". */
TI__PRIVATE ti_status ti__tflite_parse(ti_model *m, const uint8_t *data, size_t size, ti_error *err);
#endif
#ifndef TI_NO_ONNX
TI__PRIVATE ti_status ti__onnx_parse(ti_model *m, const uint8_t *data, size_t size, ti_error *err);
#endif
/* ==== end src/core/internal.h =============================================================== */

/* ==== begin src/core/alloc.c ================================================================ */
/* Allocation: the user's hooks or TI_MALLOC/TI_FREE, 64-byte aligned blocks, growable
 * arrays and the pool that owns a model's many small pieces. Relies on config.h.
 * Must not allocate through anything but the ti_allocator it is given. */

#define TI__ALIGN 64

TI__PRIVATE int ti__allocator_valid(const ti_allocator *a) {
    return a == NULL || (a->alloc == NULL) == (a->free == NULL);
}

TI__PRIVATE void *ti__malloc(const ti_allocator *a, size_t size) {
    if (size == 0) size = 1;
    if (a != NULL && a->alloc != NULL) return a->alloc(size, TI__ALIGN, a->user);
    /* Default: over-allocate and keep the raw pointer just before the aligned block. */
    size_t total;
    if (!ti__add_size(size, TI__ALIGN + sizeof(void *), &total)) return NULL;
    unsigned char *raw = (unsigned char *)TI_MALLOC(total);
    if (raw == NULL) return NULL;
    uintptr_t p = ((uintptr_t)raw + sizeof(void *) + TI__ALIGN - 1) & ~(uintptr_t)(TI__ALIGN - 1);
    memcpy((unsigned char *)p - sizeof(void *), &raw, sizeof(void *));
    return (void *)p;
}

TI__PRIVATE void *ti__calloc(const ti_allocator *a, size_t size) {
    void *p = ti__malloc(a, size);
    if (p != NULL) memset(p, 0, size ? size : 1);
    return p;
}

TI__PRIVATE void ti__free(const ti_allocator *a, void *p, size_t size) {
    if (p == NULL) return;
    if (size == 0) size = 1;
    if (a != NULL && a->free != NULL) {
        a->free(p, size, a->user);
        return;
    }
    void *raw;
    memcpy(&raw, (unsigned char *)p - sizeof(void *), sizeof(void *));
    TI_FREE(raw);
}

TI__PRIVATE int ti__grow(const ti_allocator *a, void **arr, int *cap, int need, size_t elem_bytes) {
    if (need <= *cap) return 1;
    if (need < 0 || need > INT_MAX / 2) return 0;
    int ncap = *cap ? *cap : 8;
    while (ncap < need) ncap *= 2;
    size_t old_bytes, new_bytes;
    if (!ti__mul_size((size_t)*cap, elem_bytes, &old_bytes) ||
        !ti__mul_size((size_t)ncap, elem_bytes, &new_bytes))
        return 0;
    void *n = ti__malloc(a, new_bytes);
    if (n == NULL) return 0;
    if (*arr != NULL) {
        memcpy(n, *arr, old_bytes);
        ti__free(a, *arr, old_bytes);
    }
    memset((char *)n + old_bytes, 0, new_bytes - old_bytes);
    *arr = n;
    *cap = ncap;
    return 1;
}

/* ---- pool: a list of blocks; big requests get a block of their own ---- */
struct ti__pool_block {
    ti__pool_block *next;
    size_t size, used; /* bytes of data[] */
};
#define TI__POOL_BLOCK 65536
#define TI__POOL_HDR ((sizeof(ti__pool_block) + 15) & ~(size_t)15)

TI__PRIVATE void *ti__pool_alloc(ti__pool *p, size_t size) {
    size = (size + 15) & ~(size_t)15;
    if (size == 0) size = 16;
    ti__pool_block *b = p->head;
    if (b == NULL || b->size - b->used < size) {
        size_t bsize = size > TI__POOL_BLOCK / 4 ? size : TI__POOL_BLOCK, total;
        if (!ti__add_size(bsize, TI__POOL_HDR, &total)) return NULL;
        ti__pool_block *nb = (ti__pool_block *)ti__malloc(&p->al, total);
        if (nb == NULL) return NULL;
        nb->size = bsize;
        nb->used = 0;
        p->used_bytes += total;
        if (b != NULL && size > TI__POOL_BLOCK / 4) {
            /* keep the partly used small block at the head */
            nb->next = b->next;
            b->next = nb;
        } else {
            nb->next = b;
            p->head = nb;
        }
        b = nb;
    }
    void *r = (unsigned char *)b + TI__POOL_HDR + b->used;
    b->used += size;
    memset(r, 0, size);
    return r;
}

TI__PRIVATE char *ti__pool_strndup(ti__pool *p, const char *s, size_t n) {
    char *r = (char *)ti__pool_alloc(p, n + 1);
    if (r == NULL) return NULL;
    if (n) memcpy(r, s, n);
    r[n] = 0;
    return r;
}

TI__PRIVATE void ti__pool_release(ti__pool *p) {
    ti__pool_block *b = p->head;
    while (b != NULL) {
        ti__pool_block *next = b->next;
        ti__free(&p->al, b, b->size + TI__POOL_HDR);
        b = next;
    }
    p->head = NULL;
    p->used_bytes = 0;
}
/* ==== end src/core/alloc.c ================================================================== */

/* ==== begin src/core/error.c ================================================================ */
/* Errors: status strings and the formatting of messages that name the file, the node and
 * the reason. Relies on vsnprintf only. Must never print, abort or exit. */

TI_API const char *ti_status_string(ti_status code) {
    switch (code) {
    case TI_OK: return "ok";
    case TI_ERR_INVALID_ARGUMENT: return "invalid argument";
    case TI_ERR_IO: return "i/o error";
    case TI_ERR_BAD_MODEL: return "bad model";
    case TI_ERR_UNSUPPORTED: return "unsupported";
    case TI_ERR_OUT_OF_MEMORY: return "out of memory";
    case TI_ERR_BACKEND: return "backend error";
    default: return "unknown status";
    }
}

TI__PRIVATE void ti__error_clear(ti_error *err) {
    if (err == NULL) return;
    memset(err, 0, sizeof *err);
    err->node_index = -1;
}

TI__PRIVATE void ti__copy_str(char *dst, size_t cap, const char *src) {
    size_t n = src ? strlen(src) : 0;
    if (n >= cap) n = cap - 1;
    if (n) memcpy(dst, src, n);
    dst[n] = 0;
}

TI__PRIVATE void ti__vfail(ti_error *err, ti_status code, const char *file, int node_index,
                           const char *node, const char *op, const char *fmt, va_list ap) {
    if (err == NULL) return;
    err->code = code;
    err->node_index = node_index;
    ti__copy_str(err->node, sizeof err->node, node);
    ti__copy_str(err->op, sizeof err->op, op);
    int n;
    if (op != NULL)
        n = snprintf(err->message, sizeof err->message, "%s: node '%s' (%s): ",
                     file ? file : "<memory>", node ? node : "", op);
    else
        n = snprintf(err->message, sizeof err->message, "%s: ", file ? file : "<memory>");
    if (n < 0) n = 0;
    if ((size_t)n < sizeof err->message)
        vsnprintf(err->message + n, sizeof err->message - (size_t)n, fmt, ap);
}

TI__PRIVATE ti_status ti__fail(ti_error *err, ti_status code, const char *file, const char *fmt,
                               ...) {
    va_list ap;
    va_start(ap, fmt);
    ti__vfail(err, code, file, -1, NULL, NULL, fmt, ap);
    va_end(ap);
    return code;
}

TI__PRIVATE ti_status ti__fail_node(ti_error *err, ti_status code, const char *file, int node_index,
                                    const char *node, const char *op, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    ti__vfail(err, code, file, node_index, node, op ? op : "", fmt, ap);
    va_end(ap);
    return code;
}

TI__PRIVATE ti_status ti__kfail(ti__kctx *k, ti_status code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    ti__vfail(k->err, code, k->file, k->node_index, k->node->name, k->node->op, fmt, ap);
    va_end(ap);
    return code;
}
/* ==== end src/core/error.c ================================================================== */

/* ==== begin src/core/tensor.c =============================================================== */
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

TI__PRIVATE int ti__set_shape(ti_tensor *t, ti_dtype dt, int rank, const int64_t *dims) {
    if (rank < 0 || rank > TI_MAX_DIMS) return 0;
    size_t n = 1;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 0 || !ti__mul_size(n, (size_t)dims[i], &n)) return 0;
    }
    size_t bytes;
    if (!ti__mul_size(n, ti_dtype_size(dt), &bytes)) return 0;
    if ((uint64_t)bytes > ((uint64_t)1 << 46)) return 0; /* no sane tensor is 64 TiB */
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
/* ==== end src/core/tensor.c ================================================================= */

/* ==== begin src/core/qmath.c ================================================================ */
/* Fixed-point arithmetic of TFLite's quantization spec, shared by every quantized kernel:
 * real multipliers as (int32 multiplier, shift), the rounding doubling high multiply, the
 * rounding right shift, and the clamp range of a fused activation. Relies on nothing but
 * <math.h>. Must stay bit-exact with TFLite's reference kernels (gemmlowp rounding, double
 * rounding as in TFLite's default build): quantized outputs are compared exactly. */

/* TfLiteRound: round half away from zero (std::round), not to even. */
TI__PRIVATE double ti__q_round(double x) { return x >= 0.0 ? floor(x + 0.5) : ceil(x - 0.5); }

/* real_multiplier = multiplier * 2^(shift - 31), multiplier in [2^30, 2^31). */
TI__PRIVATE void ti__q_quantize_multiplier(double real_multiplier, int32_t *multiplier, int *shift) {
    if (real_multiplier == 0.0 || !(real_multiplier == real_multiplier)) {
        *multiplier = 0;
        *shift = 0;
        return;
    }
    int e;
    double q = frexp(real_multiplier, &e);
    int64_t q_fixed = (int64_t)ti__q_round(q * (double)(1LL << 31));
    if (q_fixed == (1LL << 31)) {
        q_fixed /= 2;
        e++;
    }
    if (e < -31) { /* too small to represent: the product is 0 */
        e = 0;
        q_fixed = 0;
    }
    if (e > 30) { /* saturate: TFLite clamps the shift the same way */
        e = 30;
        q_fixed = (1LL << 31) - 1;
    }
    *multiplier = (int32_t)q_fixed;
    *shift = e;
}

/* gemmlowp SaturatingRoundingDoublingHighMul: round(a * b / 2^31), saturating. */
TI__PRIVATE int32_t ti__q_srdhm(int32_t a, int32_t b) {
    if (a == b && a == INT32_MIN) return INT32_MAX;
    int64_t ab = (int64_t)a * (int64_t)b;
    int64_t nudge = ab >= 0 ? (1LL << 30) : (1 - (1LL << 30));
    return (int32_t)((ab + nudge) / (1LL << 31));
}

/* gemmlowp RoundingDivideByPOT: x / 2^exponent, rounding half away from zero. */
TI__PRIVATE int32_t ti__q_rdbypot(int32_t x, int exponent) {
    if (exponent <= 0) return x;
    int32_t mask = (int32_t)((1LL << exponent) - 1);
    int32_t remainder = x & mask;
    int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
    return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

/* TFLite MultiplyByQuantizedMultiplier: x * multiplier * 2^(shift - 31), rounded. */
TI__PRIVATE int32_t ti__q_mul(int32_t x, int32_t multiplier, int shift) {
    int left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
    int64_t shifted = (int64_t)x * ((int64_t)1 << left);
    if (shifted > INT32_MAX) shifted = INT32_MAX; /* TFLite relies on no overflow here */
    if (shifted < INT32_MIN) shifted = INT32_MIN;
    return ti__q_rdbypot(ti__q_srdhm((int32_t)shifted, multiplier), right);
}

/* TFLite's fused activations (schema ActivationFunctionType). */
enum {
    TI__TFL_ACT_NONE = 0,
    TI__TFL_ACT_RELU = 1,
    TI__TFL_ACT_RELU_N1_TO_1 = 2,
    TI__TFL_ACT_RELU6 = 3,
    TI__TFL_ACT_TANH = 4,
    TI__TFL_ACT_SIGN_BIT = 5
};

/* Clamp range [*lo, *hi] of a fused activation on a quantized output (TFLite
 * CalculateActivationRangeQuantized). qmin/qmax: the dtype's range. Returns 0 for
 * activations that are not a clamp (TANH, SIGN_BIT), which quantized kernels refuse. */
TI__PRIVATE int ti__q_act_range(int act, float scale, int64_t zero_point, int32_t qmin, int32_t qmax,
                                int32_t *lo, int32_t *hi) {
    double zp = (double)zero_point;
    *lo = qmin;
    *hi = qmax;
    if (act == TI__TFL_ACT_NONE) return 1;
    if (act != TI__TFL_ACT_RELU && act != TI__TFL_ACT_RELU6 && act != TI__TFL_ACT_RELU_N1_TO_1)
        return 0;
    double lo_real = act == TI__TFL_ACT_RELU_N1_TO_1 ? -1.0 : 0.0;
    double q = zp + ti__q_round(lo_real / (double)scale);
    if (q > (double)*lo) *lo = q > (double)qmax ? qmax : (int32_t)q;
    if (act != TI__TFL_ACT_RELU) {
        double hi_real = act == TI__TFL_ACT_RELU6 ? 6.0 : 1.0;
        double qh = zp + ti__q_round(hi_real / (double)scale);
        if (qh < (double)*hi) *hi = qh < (double)qmin ? qmin : (int32_t)qh;
    }
    return 1;
}

/* Clamp range of a fused activation on a float output; 0 for TANH/SIGN_BIT. */
TI__PRIVATE int ti__f_act_range(int act, float *lo, float *hi) {
    *lo = -FLT_MAX;
    *hi = FLT_MAX;
    switch (act) {
    case TI__TFL_ACT_NONE: return 1;
    case TI__TFL_ACT_RELU: *lo = 0.0f; return 1;
    case TI__TFL_ACT_RELU6: *lo = 0.0f; *hi = 6.0f; return 1;
    case TI__TFL_ACT_RELU_N1_TO_1: *lo = -1.0f; *hi = 1.0f; return 1;
    default: return 0;
    }
}
/* ==== end src/core/qmath.c ================================================================== */

/* ==== begin src/core/threadpool.c =========================================================== */
/* A small thread pool of our own (no OpenMP): persistent workers that split a range
 * [0, n) into chunks taken from a shared counter, so uneven cores (big.LITTLE) balance.
 * Relies on pthreads unless TI_NO_THREADS. Must not allocate in ti__parallel_for. */
#ifndef TI_NO_THREADS
#include <pthread.h>
#include <unistd.h>
#endif

TI__PRIVATE int ti__cpu_count(void) {
#if !defined(TI_NO_THREADS) && defined(_SC_NPROCESSORS_ONLN)
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : (n > TI_MAX_THREADS ? TI_MAX_THREADS : (int)n);
#else
    return 1;
#endif
}

#ifndef TI_NO_THREADS
struct ti__threadpool {
    ti_allocator al;
    int n_workers; /* threads besides the caller */
    int n_alloc;   /* pthread_t slots allocated */
    pthread_t *threads;
    pthread_mutex_t mu;
    pthread_cond_t work_cv, done_cv;
    /* the job in flight */
    ti__range_fn fn;
    void *ctx;
    size_t n, chunk, next;
    unsigned generation;
    int active; /* workers still inside the current job */
    int quit;
};

/* Takes chunks until none are left. Called with the mutex held; returns with it held. */
TI__PRIVATE void ti__tp_drain(ti__threadpool *tp) {
    while (tp->next < tp->n) {
        size_t b = tp->next, e = b + tp->chunk < tp->n ? b + tp->chunk : tp->n;
        tp->next = e;
        ti__range_fn fn = tp->fn;
        void *ctx = tp->ctx;
        pthread_mutex_unlock(&tp->mu);
        fn(ctx, b, e);
        pthread_mutex_lock(&tp->mu);
    }
}

TI__PRIVATE void *ti__tp_worker(void *arg) {
    ti__threadpool *tp = (ti__threadpool *)arg;
    unsigned seen = 0;
    pthread_mutex_lock(&tp->mu);
    for (;;) {
        while (!tp->quit && tp->generation == seen) pthread_cond_wait(&tp->work_cv, &tp->mu);
        if (tp->quit) break;
        seen = tp->generation;
        ti__tp_drain(tp);
        if (--tp->active == 0) pthread_cond_signal(&tp->done_cv);
    }
    pthread_mutex_unlock(&tp->mu);
    return NULL;
}

TI__PRIVATE ti__threadpool *ti__threadpool_create(const ti_allocator *al, int num_threads) {
    if (num_threads <= 1) return NULL;
    if (num_threads > TI_MAX_THREADS) num_threads = TI_MAX_THREADS;
    ti__threadpool *tp = (ti__threadpool *)ti__calloc(al, sizeof *tp);
    if (tp == NULL) return NULL;
    if (al) tp->al = *al;
    tp->threads = (pthread_t *)ti__calloc(al, sizeof(pthread_t) * (size_t)num_threads);
    if (tp->threads == NULL) {
        ti__free(al, tp, sizeof *tp);
        return NULL;
    }
    tp->n_alloc = num_threads;
    pthread_mutex_init(&tp->mu, NULL);
    pthread_cond_init(&tp->work_cv, NULL);
    pthread_cond_init(&tp->done_cv, NULL);
    for (int i = 0; i < num_threads - 1; i++) {
        if (pthread_create(&tp->threads[i], NULL, ti__tp_worker, tp) != 0) break;
        tp->n_workers++;
    }
    return tp;
}

TI__PRIVATE void ti__threadpool_destroy(ti__threadpool *tp) {
    if (tp == NULL) return;
    pthread_mutex_lock(&tp->mu);
    tp->quit = 1;
    pthread_cond_broadcast(&tp->work_cv);
    pthread_mutex_unlock(&tp->mu);
    for (int i = 0; i < tp->n_workers; i++) pthread_join(tp->threads[i], NULL);
    pthread_mutex_destroy(&tp->mu);
    pthread_cond_destroy(&tp->work_cv);
    pthread_cond_destroy(&tp->done_cv);
    ti_allocator al = tp->al;
    ti__free(&al, tp->threads, sizeof(pthread_t) * (size_t)tp->n_alloc);
    ti__free(&al, tp, sizeof *tp);
}

TI__PRIVATE int ti__threadpool_size(const ti__threadpool *tp) { return tp ? tp->n_workers + 1 : 1; }

TI__PRIVATE void ti__parallel_for(ti__threadpool *tp, size_t n, size_t grain, ti__range_fn fn,
                                  void *ctx) {
    if (n == 0) return;
    if (grain == 0) grain = 1;
    if (tp == NULL || tp->n_workers == 0 || n <= grain) {
        fn(ctx, 0, n);
        return;
    }
    size_t threads = (size_t)tp->n_workers + 1;
    /* about 4 chunks a thread, none smaller than grain */
    size_t chunk = (n + threads * 4 - 1) / (threads * 4);
    if (chunk < grain) chunk = grain;
    pthread_mutex_lock(&tp->mu);
    tp->fn = fn;
    tp->ctx = ctx;
    tp->n = n;
    tp->chunk = chunk;
    tp->next = 0;
    tp->active = tp->n_workers;
    tp->generation++;
    pthread_cond_broadcast(&tp->work_cv);
    ti__tp_drain(tp);
    while (tp->active > 0) pthread_cond_wait(&tp->done_cv, &tp->mu);
    pthread_mutex_unlock(&tp->mu);
}
#else
struct ti__threadpool {
    int unused;
};
TI__PRIVATE ti__threadpool *ti__threadpool_create(const ti_allocator *al, int num_threads) {
    (void)al;
    (void)num_threads;
    return NULL;
}
TI__PRIVATE void ti__threadpool_destroy(ti__threadpool *tp) { (void)tp; }
TI__PRIVATE int ti__threadpool_size(const ti__threadpool *tp) { (void)tp; return 1; }
TI__PRIVATE void ti__parallel_for(ti__threadpool *tp, size_t n, size_t grain, ti__range_fn fn,
                                  void *ctx) {
    (void)tp;
    (void)grain;
    if (n) fn(ctx, 0, n);
}
#endif
/* ==== end src/core/threadpool.c ============================================================= */

/* ==== begin src/graph/ir.c ================================================================== */
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

TI__PRIVATE ti_status ti__model_check_const(ti_model *m, const char *what, ti_dtype dt, int rank,
                                            const int64_t *dims, size_t *bytes, ti_error *err) {
    if (rank < 0 || rank > m->desc.max_rank)
        return ti__fail(err, TI_ERR_BAD_MODEL, m->name, "tensor '%s' has rank %d (limit %d)",
                        what, rank, m->desc.max_rank);
    size_t n = 1;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 0)
            return ti__fail(err, TI_ERR_BAD_MODEL, m->name, "tensor '%s' has negative dim %lld",
                            what, (long long)dims[i]);
        if (!ti__mul_size(n, (size_t)dims[i], &n))
            return ti__fail(err, TI_ERR_OUT_OF_MEMORY, m->name,
                            "tensor '%s' size overflows", what);
    }
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
/* ==== end src/graph/ir.c ==================================================================== */

/* ==== begin src/cpu/attention.c ============================================================= */
/* Attention (ONNX opset 23-25: MHA/GQA/MQA, masks, causal and sliding-window masking, softcap,
 * KV cache with past/present, nonpad_kv_seqlen, qk_matmul_output, softmax_precision) and
 * RotaryEmbedding (opset 23). Reference kernels for float32/float64/float16/bfloat16 that
 * compute in double and round to the tensor type at the same points as the ONNX reference
 * (scaled Q and K, QK, softcap, bias add, softmax, output), so low-precision results match.
 * Relies on internal.h, core/tensor.c and the thread pool. Must not allocate in a run
 * function: per (batch, head) rows of scores live in the scratch memory the op asks for. */

/* ---- shared helpers ------------------------------------------------------------------ */

/* v rounded to the precision of float dtype dt (double stays exact). */
TI__PRIVATE double ti__attn_rnd(ti_dtype dt, double v) {
    switch (dt) {
    case TI_DTYPE_F32: return (double)(float)v;
    case TI_DTYPE_F16: return ti__f16_to_f32(ti__f32_to_f16((float)v));
    case TI_DTYPE_BF16: return ti__bf16_to_f32(ti__f32_to_bf16((float)v));
    default: return v;
    }
}

/* Element i of float data p of dtype dt. */
TI__PRIVATE double ti__attn_ld(ti_dtype dt, const void *p, size_t i) {
    switch (dt) {
    case TI_DTYPE_F32: return ((const float *)p)[i];
    case TI_DTYPE_F64: return ((const double *)p)[i];
    case TI_DTYPE_F16: return ti__f16_to_f32(((const uint16_t *)p)[i]);
    case TI_DTYPE_BF16: return ti__bf16_to_f32(((const uint16_t *)p)[i]);
    default: return 0.0;
    }
}

/* ---- Attention ----------------------------------------------------------------------- */
/* Inputs: Q, K, V, attn_mask, past_key, past_value, nonpad_kv_seqlen.
 * Outputs: Y, present_key, present_value, qk_matmul_output.
 * Inner layout: Q [b, hq, sq, dk], K [b, hkv, t, dk], V [b, hkv, t, dv] with t = p + skv
 * (past rows first); 3-D inputs are read in place as [b, s, heads * d]. Query head h uses
 * KV head h / (hq / hkv), the interleaved repeat of the spec. */

typedef struct ti__attn {
    const ti_tensor *q, *k, *v, *mask, *pk, *pv, *nonpad;
    ti_tensor *y, *pres_k, *pres_v, *qk;
    int rank; /* 3 or 4, the same for Q, K and V */
    int64_t b, hq, hkv, sq, skv, p, t, dk, dv;
    ti_dtype t1;       /* Q's dtype: Y, qk_matmul_output and the intermediate precision */
    ti_dtype sm;       /* softmax precision */
    double scale_sqrt; /* sqrt(scale) rounded to T1: Q and K are each scaled by it */
    double softcap;    /* <= 0: none */
    int causal, mode;
    int64_t left, right; /* window bounds, -1: unbounded */
    int64_t mstr[4];     /* mask strides over (b, h, i, j) in elements, 0 where broadcast */
    int64_t mlast;       /* mask's last dim; keys at or past it are masked (-inf padding) */
    size_t row_doubles;  /* scratch per (batch, head) task */
    double *scratch;
} ti__attn;

TI__PRIVATE int ti__attn_setup(ti__kctx *k, ti__attn *a, int set_outputs) {
    memset(a, 0, sizeof *a);
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    TI__REQUIRE_INPUT(k, 2);
    a->q = k->in[0];
    a->k = k->in[1];
    a->v = k->in[2];
    a->mask = k->n_in > 3 ? k->in[3] : NULL;
    a->pk = k->n_in > 4 ? k->in[4] : NULL;
    a->pv = k->n_in > 5 ? k->in[5] : NULL;
    a->nonpad = k->n_in > 6 ? k->in[6] : NULL;
    a->y = k->n_out > 0 ? k->out[0] : NULL;
    a->pres_k = k->n_out > 1 ? k->out[1] : NULL;
    a->pres_v = k->n_out > 2 ? k->out[2] : NULL;
    a->qk = k->n_out > 3 ? k->out[3] : NULL;
    const ti_tensor *q = a->q, *kk = a->k, *v = a->v;
    const ti__node *n = k->node;
    if (!ti__dtype_is_float(q->dtype) || !ti__dtype_is_float(kk->dtype) ||
        !ti__dtype_is_float(v->dtype))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "Q/K/V dtypes %s/%s/%s: float types only",
                         ti_dtype_name(q->dtype), ti_dtype_name(kk->dtype),
                         ti_dtype_name(v->dtype));
    if (kk->dtype != q->dtype)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "K dtype %s differs from Q dtype %s",
                         ti_dtype_name(kk->dtype), ti_dtype_name(q->dtype));
    a->t1 = q->dtype;
    a->rank = q->rank;
    if ((q->rank != 3 && q->rank != 4) || kk->rank != q->rank || v->rank != q->rank)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "Q, K, V ranks are %d, %d, %d: expected all 3 or all 4",
                         q->rank, kk->rank, v->rank);
    a->b = q->shape[0];
    if (kk->shape[0] != a->b || v->shape[0] != a->b)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "batch sizes differ: Q %lld, K %lld, V %lld",
                         (long long)a->b, (long long)kk->shape[0], (long long)v->shape[0]);
    int64_t qh_attr = ti__attr_i(n, "q_num_heads", 0), kvh_attr = ti__attr_i(n, "kv_num_heads", 0);
    if (q->rank == 3) {
        if (qh_attr <= 0 || kvh_attr <= 0)
            return ti__kfail(k, TI_ERR_BAD_MODEL,
                             "3-D inputs need q_num_heads and kv_num_heads > 0 (got %lld, %lld)",
                             (long long)qh_attr, (long long)kvh_attr);
        a->hq = qh_attr;
        a->hkv = kvh_attr;
        if (q->shape[2] % a->hq != 0 || kk->shape[2] % a->hkv != 0 || v->shape[2] % a->hkv != 0)
            return ti__kfail(k, TI_ERR_BAD_MODEL,
                             "hidden sizes Q %lld, K %lld, V %lld are not multiples of the head "
                             "counts %lld (Q) and %lld (KV)",
                             (long long)q->shape[2], (long long)kk->shape[2],
                             (long long)v->shape[2], (long long)a->hq, (long long)a->hkv);
        a->sq = q->shape[1];
        a->skv = kk->shape[1];
        a->dk = q->shape[2] / a->hq;
        if (kk->shape[2] / a->hkv != a->dk)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "K head size %lld differs from Q head size %lld",
                             (long long)(kk->shape[2] / a->hkv), (long long)a->dk);
        a->dv = v->shape[2] / a->hkv;
        if (v->shape[1] != a->skv)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "K has %lld positions, V has %lld",
                             (long long)a->skv, (long long)v->shape[1]);
    } else {
        a->hq = q->shape[1];
        a->hkv = kk->shape[1];
        a->sq = q->shape[2];
        a->skv = kk->shape[2];
        a->dk = q->shape[3];
        a->dv = v->shape[3];
        if ((qh_attr > 0 && qh_attr != a->hq) || (kvh_attr > 0 && kvh_attr != a->hkv))
            return ti__kfail(k, TI_ERR_BAD_MODEL,
                             "q_num_heads %lld / kv_num_heads %lld disagree with 4-D shapes "
                             "(%lld / %lld heads)",
                             (long long)qh_attr, (long long)kvh_attr, (long long)a->hq,
                             (long long)a->hkv);
        if (kk->shape[3] != a->dk)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "K head size %lld differs from Q head size %lld",
                             (long long)kk->shape[3], (long long)a->dk);
        if (v->shape[1] != a->hkv || v->shape[2] != a->skv)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "V shape does not match K (heads %lld, length %lld)",
                             (long long)a->hkv, (long long)a->skv);
    }
    if (a->hkv <= 0 || a->hq % a->hkv != 0)
        return ti__kfail(k, TI_ERR_BAD_MODEL,
                         "q heads (%lld) must be a multiple of kv heads (%lld)", (long long)a->hq,
                         (long long)a->hkv);
    if ((a->pk == NULL) != (a->pv == NULL))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "past_key and past_value must be given together");
    if (a->pk != NULL) {
        const ti_tensor *pk = a->pk, *pv = a->pv;
        if (pk->dtype != kk->dtype || pv->dtype != v->dtype)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "past_key/past_value dtypes differ from K/V");
        if (pk->rank != 4 || pk->shape[0] != a->b || pk->shape[1] != a->hkv ||
            pk->shape[3] != a->dk)
            return ti__kfail(k, TI_ERR_BAD_MODEL,
                             "past_key must have shape [%lld, %lld, P, %lld]", (long long)a->b,
                             (long long)a->hkv, (long long)a->dk);
        a->p = pk->shape[2];
        if (pv->rank != 4 || pv->shape[0] != a->b || pv->shape[1] != a->hkv ||
            pv->shape[2] != a->p || pv->shape[3] != a->dv)
            return ti__kfail(k, TI_ERR_BAD_MODEL,
                             "past_value must have shape [%lld, %lld, %lld, %lld]", (long long)a->b,
                             (long long)a->hkv, (long long)a->p, (long long)a->dv);
    }
    a->t = a->p + a->skv;
    if (a->nonpad != NULL) {
        if (a->nonpad->dtype != TI_DTYPE_I64 || a->nonpad->rank != 1 ||
            a->nonpad->shape[0] != a->b)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "nonpad_kv_seqlen must be int64 [%lld]",
                             (long long)a->b);
        if (a->pk != NULL)
            return ti__kfail(k, TI_ERR_BAD_MODEL,
                             "nonpad_kv_seqlen cannot be combined with past_key/past_value");
    }
    if (a->mask != NULL) {
        const ti_tensor *m = a->mask;
        if (m->dtype != TI_DTYPE_BOOL && !ti__dtype_is_float(m->dtype))
            return ti__kfail(k, TI_ERR_UNSUPPORTED, "attn_mask dtype %s: bool or float only",
                             ti_dtype_name(m->dtype));
        if (m->rank < 1 || m->rank > 4)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "attn_mask has rank %d, expected 1 to 4", m->rank);
        int64_t full[4], str[TI_MAX_DIMS];
        full[0] = a->b;
        full[1] = a->hq;
        full[2] = a->sq;
        full[3] = a->t;
        ti__strides(m->rank, m->shape, str);
        for (int ax = 0; ax < 4; ax++) {
            int md = ax - (4 - m->rank);
            a->mstr[ax] = 0;
            if (md < 0) continue;
            int64_t d = m->shape[md];
            if (ax == 3) {
                /* a shorter key axis is padded with -inf (False), never broadcast */
                if (d > a->t)
                    return ti__kfail(k, TI_ERR_BAD_MODEL,
                                     "attn_mask's last dim %lld exceeds the %lld keys",
                                     (long long)d, (long long)a->t);
                a->mlast = d;
                a->mstr[ax] = str[md];
            } else if (d == full[ax]) {
                a->mstr[ax] = d == 1 ? 0 : str[md];
            } else if (d != 1) {
                return ti__kfail(k, TI_ERR_BAD_MODEL,
                                 "attn_mask dim %d is %lld, not broadcastable to %lld", md,
                                 (long long)d, (long long)full[ax]);
            }
        }
    }
    a->scale_sqrt = 0.0;
    const ti__attr *sc = ti__attr_get(n, "scale");
    double scale = sc != NULL ? (double)sc->f : 1.0 / sqrt((double)(a->dk > 0 ? a->dk : 1));
    a->scale_sqrt = ti__attn_rnd(a->t1, sqrt(scale));
    a->softcap = ti__attn_rnd(a->t1, (double)ti__attr_f(n, "softcap", 0.0f));
    a->causal = ti__attr_i(n, "is_causal", 0) != 0;
    int64_t mode = ti__attr_i(n, "qk_matmul_output_mode", 0);
    if (mode < 0 || mode > 3)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "qk_matmul_output_mode %lld is not 0..3",
                         (long long)mode);
    a->mode = (int)mode;
    a->left = ti__attr_i(n, "left_window_size", -1);
    a->right = ti__attr_i(n, "right_window_size", -1);
    if (a->left < -1 || a->right < -1)
        return ti__kfail(k, TI_ERR_BAD_MODEL,
                         "left/right_window_size %lld/%lld: expected -1 or nonnegative",
                         (long long)a->left, (long long)a->right);
    a->sm = a->t1;
    if (ti__attr_get(n, "softmax_precision") != NULL) {
        int64_t sp = ti__attr_i(n, "softmax_precision", 1);
        switch (sp) {
        case 1: a->sm = TI_DTYPE_F32; break;
        case 10: a->sm = TI_DTYPE_F16; break;
        case 11: a->sm = TI_DTYPE_F64; break;
        case 16: a->sm = TI_DTYPE_BF16; break;
        default:
            return ti__kfail(k, TI_ERR_UNSUPPORTED,
                             "softmax_precision %lld: expected 1, 10, 11 or 16", (long long)sp);
        }
    }
    a->row_doubles = (size_t)(a->dk + a->t + a->dv);
    if (!set_outputs) return TI_OK;
    int64_t d[4];
    if (a->y != NULL) {
        int ok;
        if (a->rank == 4) {
            d[0] = a->b, d[1] = a->hq, d[2] = a->sq, d[3] = a->dv;
            ok = ti__set_shape(a->y, a->t1, 4, d);
        } else {
            d[0] = a->b, d[1] = a->sq, d[2] = a->hq * a->dv;
            ok = ti__set_shape(a->y, a->t1, 3, d);
        }
        if (!ok) return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid Y shape");
    }
    d[0] = a->b, d[1] = a->hkv, d[2] = a->t, d[3] = a->dk;
    if (a->pres_k != NULL && !ti__set_shape(a->pres_k, kk->dtype, 4, d))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid present_key shape");
    d[3] = a->dv;
    if (a->pres_v != NULL && !ti__set_shape(a->pres_v, v->dtype, 4, d))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid present_value shape");
    d[1] = a->hq, d[2] = a->sq, d[3] = a->t;
    if (a->qk != NULL && !ti__set_shape(a->qk, a->t1, 4, d))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid qk_matmul_output shape");
    return TI_OK;
}

TI__PRIVATE int ti__attn_shape(ti__kctx *k) {
    ti__attn a;
    return ti__attn_setup(k, &a, 1);
}

TI__PRIVATE size_t ti__attn_scratch(ti__kctx *k) {
    ti__attn a;
    if (ti__attn_setup(k, &a, 0) != TI_OK) return 0;
    size_t n;
    if (!ti__mul_size((size_t)(a.b * a.hq), a.row_doubles, &n) ||
        !ti__mul_size(n, sizeof(double), &n))
        return 0;
    return n;
}

/* Element offset of row (b, head, pos) of a Q/K/V-like input (row = head_size elements). */
TI__PRIVATE size_t ti__attn_row(int rank, int64_t b, int64_t heads, int64_t seq, int64_t hs,
                                int64_t head, int64_t pos) {
    if (rank == 4) return (size_t)(((b * heads + head) * seq + pos) * hs);
    return (size_t)((b * seq + pos) * heads * hs + head * hs);
}

/* K or V row of key position j (0 <= j < t): the past cache first, then the new rows. */
TI__PRIVATE const void *ti__attn_kv_row(const ti__attn *a, int is_v, int64_t b, int64_t g,
                                        int64_t j, size_t *off) {
    int64_t hs = is_v ? a->dv : a->dk;
    if (j < a->p) {
        *off = (size_t)(((b * a->hkv + g) * a->p + j) * hs);
        return is_v ? a->pv->data : a->pk->data;
    }
    *off = ti__attn_row(a->rank, b, a->hkv, a->skv, hs, g, j - a->p);
    return is_v ? a->v->data : a->k->data;
}

/* One (batch, query head): every query row, its scores, softmax and output. */
TI__PRIVATE void ti__attn_task(const ti__attn *a, int64_t b, int64_t h, double *buf) {
    double *qs = buf, *sc = buf + a->dk, *acc = sc + a->t;
    const int64_t g = h / (a->hq / a->hkv);
    const ti_dtype t1 = a->t1, sm = a->sm, kdt = a->k->dtype, vdt = a->v->dtype;
    const double s = a->scale_sqrt, cap = a->softcap, ninf = -HUGE_VAL;
    int64_t off = a->p; /* keys before this query block: past cache or external cache */
    if (a->nonpad != NULL) off = ((const int64_t *)a->nonpad->data)[b] - a->sq;
    int64_t valid = a->t;
    if (a->nonpad != NULL) valid = ((const int64_t *)a->nonpad->data)[b];
    for (int64_t i = 0; i < a->sq; i++) {
        size_t qo = ti__attn_row(a->rank, b, a->hq, a->sq, a->dk, h, i);
        for (int64_t d = 0; d < a->dk; d++)
            qs[d] = ti__attn_rnd(t1, ti__attn_ld(t1, a->q->data, qo + (size_t)d) * s);
        size_t qk_off = (size_t)(((b * a->hq + h) * a->sq + i) * a->t);
        size_t moff = 0;
        if (a->mask != NULL)
            moff = (size_t)(b * a->mstr[0] + h * a->mstr[1] + i * a->mstr[2]);
        int all_masked = 1, has_nan = 0;
        double mx = ninf;
        for (int64_t j = 0; j < a->t; j++) {
            size_t ko;
            const void *kd = ti__attn_kv_row(a, 0, b, g, j, &ko);
            double dot = 0.0;
            for (int64_t d = 0; d < a->dk; d++)
                dot += qs[d] * ti__attn_rnd(t1, ti__attn_ld(kdt, kd, ko + (size_t)d) * s);
            double x = ti__attn_rnd(t1, dot);
            if (a->qk != NULL && a->mode == 0) ti__set_f64(a->qk, qk_off + (size_t)j, x);
            if (cap > 0.0)
                x = ti__attn_rnd(t1, ti__attn_rnd(t1, tanh(ti__attn_rnd(t1, x / cap))) * cap);
            if (a->qk != NULL && a->mode == 1) ti__set_f64(a->qk, qk_off + (size_t)j, x);
            /* additive bias: mask (bool -> 0 / -inf, padded with -inf), causal frontier
             * j <= i + off, sliding window around i + off, and the nonpad key count */
            double bias = 0.0;
            if (a->mask != NULL) {
                if (j >= a->mlast) bias = ninf;
                else {
                    size_t mi = moff + (size_t)(j * a->mstr[3]);
                    if (a->mask->dtype == TI_DTYPE_BOOL)
                        bias = ((const uint8_t *)a->mask->data)[mi] ? 0.0 : ninf;
                    else bias = ti__attn_ld(a->mask->dtype, a->mask->data, mi);
                }
            }
            int64_t diff = i + off - j;
            if (a->causal && diff < 0) bias += ninf;
            if (a->left >= 0 && diff > a->left) bias += ninf;
            if (a->right >= 0 && -diff > a->right) bias += ninf;
            if (j >= valid) bias += ninf;
            if (!(bias == ninf)) all_masked = 0;
            x = ti__attn_rnd(t1, x + bias);
            if (a->qk != NULL && a->mode == 2) ti__set_f64(a->qk, qk_off + (size_t)j, x);
            x = ti__attn_rnd(sm, x);
            if (x != x) has_nan = 1;
            else if (x > mx) mx = x;
            sc[j] = x;
        }
        /* softmax in precision sm; a row whose bias is -inf everywhere gives zeros */
        if (all_masked) {
            for (int64_t j = 0; j < a->t; j++) sc[j] = 0.0;
        } else if (has_nan) {
            for (int64_t j = 0; j < a->t; j++) sc[j] = NAN;
        } else {
            double m = mx == ninf ? 0.0 : mx, sum = 0.0;
            for (int64_t j = 0; j < a->t; j++) {
                sc[j] = ti__attn_rnd(sm, exp(ti__attn_rnd(sm, sc[j] - m)));
                sum += sc[j];
            }
            sum = ti__attn_rnd(sm, sum);
            if (sum == 0.0) sum = 1.0;
            for (int64_t j = 0; j < a->t; j++)
                sc[j] = ti__attn_rnd(t1, ti__attn_rnd(sm, sc[j] / sum));
        }
        if (a->qk != NULL && a->mode == 3)
            for (int64_t j = 0; j < a->t; j++) ti__set_f64(a->qk, qk_off + (size_t)j, sc[j]);
        if (a->y == NULL) continue;
        for (int64_t d = 0; d < a->dv; d++) acc[d] = 0.0;
        for (int64_t j = 0; j < a->t; j++) {
            size_t vo;
            const void *vd = ti__attn_kv_row(a, 1, b, g, j, &vo);
            double pj = sc[j];
            for (int64_t d = 0; d < a->dv; d++) acc[d] += pj * ti__attn_ld(vdt, vd, vo + (size_t)d);
        }
        size_t yo = ti__attn_row(a->rank, b, a->hq, a->sq, a->dv, h, i);
        for (int64_t d = 0; d < a->dv; d++) ti__set_f64(a->y, yo + (size_t)d, acc[d]);
    }
}

TI__PRIVATE void ti__attn_range(void *ctx, size_t begin, size_t end) {
    const ti__attn *a = (const ti__attn *)ctx;
    for (size_t t = begin; t < end; t++)
        ti__attn_task(a, (int64_t)t / a->hq, (int64_t)t % a->hq, a->scratch + t * a->row_doubles);
}

/* present = concat(past, new) along the sequence axis, always [b, hkv, t, hs]. */
TI__PRIVATE void ti__attn_present(const ti__attn *a, int is_v, ti_tensor *out) {
    size_t es = ti_dtype_size(out->dtype);
    int64_t hs = is_v ? a->dv : a->dk;
    size_t row_bytes = (size_t)hs * es;
    unsigned char *dst = (unsigned char *)out->data;
    for (int64_t b = 0; b < a->b; b++)
        for (int64_t g = 0; g < a->hkv; g++)
            for (int64_t j = 0; j < a->t; j++) {
                size_t off;
                const unsigned char *src = (const unsigned char *)ti__attn_kv_row(a, is_v, b, g, j, &off);
                memcpy(dst, src + off * es, row_bytes);
                dst += row_bytes;
            }
}

TI__PRIVATE ti_status ti__attn_run(ti__kctx *k) {
    ti__attn a;
    int r = ti__attn_setup(k, &a, 0);
    if (r != TI_OK) return (ti_status)r;
    size_t tasks = (size_t)(a.b * a.hq);
    size_t need = tasks * a.row_doubles * sizeof(double);
    if (need > 0 && (k->scratch == NULL || k->scratch_bytes < need))
        return ti__kfail(k, TI_ERR_INVALID_ARGUMENT, "scratch of %zu bytes is too small (%zu)",
                         k->scratch_bytes, need);
    a.scratch = (double *)k->scratch;
    if (a.pres_k != NULL) ti__attn_present(&a, 0, a.pres_k);
    if (a.pres_v != NULL) ti__attn_present(&a, 1, a.pres_v);
    if (a.y == NULL && a.qk == NULL) return TI_OK;
    size_t work = (size_t)(a.sq * a.t * (a.dk + a.dv));
    ti__parallel_for(k->tp, tasks, work > 4096 ? 1 : tasks, ti__attn_range, &a);
    return TI_OK;
}

/* ---- RotaryEmbedding ----------------------------------------------------------------- */
/* Inputs: X [b, h, s, d] or [b, s, h * d] (num_heads attribute), cos_cache and sin_cache
 * ([max_pos, rd / 2] indexed by position_ids [b, s], or [b, s, rd / 2] without them).
 * The first rd values of each head are rotated as pairs (x[k], x[k + rd/2]), or
 * (x[2k], x[2k+1]) when interleaved; the rest are copied. */

typedef struct ti__rope {
    const ti_tensor *x, *cosc, *sinc, *pos;
    int64_t b, h, s, d, rd;
    int interleaved;
} ti__rope;

TI__PRIVATE int ti__rope_setup(ti__kctx *k, ti__rope *r) {
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    TI__REQUIRE_INPUT(k, 2);
    r->x = k->in[0];
    r->cosc = k->in[1];
    r->sinc = k->in[2];
    r->pos = k->n_in > 3 ? k->in[3] : NULL;
    const ti_tensor *x = r->x;
    if (!ti__dtype_is_float(x->dtype))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "input dtype %s: float types only",
                         ti_dtype_name(x->dtype));
    if (r->cosc->dtype != x->dtype || r->sinc->dtype != x->dtype)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "cos_cache/sin_cache dtypes differ from the input");
    r->b = x->shape[0];
    if (x->rank == 4) {
        r->h = x->shape[1];
        r->s = x->shape[2];
        r->d = x->shape[3];
    } else if (x->rank == 3) {
        int64_t nh = ti__attr_i(k->node, "num_heads", 0);
        if (nh <= 0 || x->shape[2] % nh != 0)
            return ti__kfail(k, TI_ERR_BAD_MODEL,
                             "3-D input needs num_heads > 0 dividing hidden size %lld (got %lld)",
                             (long long)x->shape[2], (long long)nh);
        r->h = nh;
        r->s = x->shape[1];
        r->d = x->shape[2] / nh;
    } else {
        return ti__kfail(k, TI_ERR_BAD_MODEL, "input has rank %d, expected 3 or 4", x->rank);
    }
    r->rd = ti__attr_i(k->node, "rotary_embedding_dim", 0);
    if (r->rd == 0) r->rd = r->d;
    if (r->rd < 0 || r->rd > r->d || r->rd % 2 != 0)
        return ti__kfail(k, TI_ERR_BAD_MODEL,
                         "rotary_embedding_dim %lld must be even and at most the head size %lld",
                         (long long)r->rd, (long long)r->d);
    r->interleaved = ti__attr_i(k->node, "interleaved", 0) != 0;
    int64_t half = r->rd / 2;
    const ti_tensor *cs[2];
    cs[0] = r->cosc;
    cs[1] = r->sinc;
    for (int c = 0; c < 2; c++) {
        const ti_tensor *t = cs[c];
        int ok;
        if (r->pos != NULL) ok = t->rank == 2 && t->shape[1] == half;
        else ok = t->rank == 3 && t->shape[0] == r->b && t->shape[1] == r->s && t->shape[2] == half;
        if (!ok)
            return ti__kfail(k, TI_ERR_BAD_MODEL,
                             "%s must have shape %s with last dim %lld (rotary_embedding_dim / 2)",
                             c == 0 ? "cos_cache" : "sin_cache",
                             r->pos != NULL ? "[max_position, d]" : "[batch, seq, d]",
                             (long long)half);
    }
    if (r->pos != NULL) {
        if (!ti__dtype_is_int(r->pos->dtype) || r->pos->rank != 2 || r->pos->shape[0] != r->b ||
            r->pos->shape[1] != r->s)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "position_ids must be integer [%lld, %lld]",
                             (long long)r->b, (long long)r->s);
        if (r->cosc->shape[0] != r->sinc->shape[0])
            return ti__kfail(k, TI_ERR_BAD_MODEL, "cos_cache and sin_cache lengths differ");
    }
    if (k->n_out > 0 && k->out[0] != NULL &&
        !ti__set_shape(k->out[0], x->dtype, x->rank, x->shape))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid output shape");
    return TI_OK;
}

TI__PRIVATE int ti__rope_shape(ti__kctx *k) {
    ti__rope r;
    return ti__rope_setup(k, &r);
}

TI__PRIVATE ti_status ti__rope_run(ti__kctx *k) {
    ti__rope r;
    int st = ti__rope_setup(k, &r);
    if (st != TI_OK) return (ti_status)st;
    ti_tensor *y = k->n_out > 0 ? k->out[0] : NULL;
    if (y == NULL) return TI_OK;
    const ti_dtype dt = r.x->dtype;
    const int64_t half = r.rd / 2;
    for (int64_t b = 0; b < r.b; b++) {
        for (int64_t s = 0; s < r.s; s++) {
            size_t co; /* offset of this position's cos/sin row */
            if (r.pos != NULL) {
                int64_t p = ti__get_i64(r.pos, (size_t)(b * r.s + s));
                if (p < 0 || p >= r.cosc->shape[0])
                    return ti__kfail(k, TI_ERR_INVALID_ARGUMENT,
                                     "position id %lld is outside [0, %lld)", (long long)p,
                                     (long long)r.cosc->shape[0]);
                co = (size_t)(p * half);
            } else {
                co = (size_t)((b * r.s + s) * half);
            }
            for (int64_t h = 0; h < r.h; h++) {
                size_t xo = ti__attn_row(r.x->rank, b, r.h, r.s, r.d, h, s);
                for (int64_t i = 0; i < half; i++) {
                    size_t i1 = r.interleaved ? (size_t)(2 * i) : (size_t)i;
                    size_t i2 = r.interleaved ? (size_t)(2 * i + 1) : (size_t)(i + half);
                    double c = ti__attn_ld(dt, r.cosc->data, co + (size_t)i);
                    double sn = ti__attn_ld(dt, r.sinc->data, co + (size_t)i);
                    double x1 = ti__attn_ld(dt, r.x->data, xo + i1);
                    double x2 = ti__attn_ld(dt, r.x->data, xo + i2);
                    double re = ti__attn_rnd(dt, c * x1) - ti__attn_rnd(dt, sn * x2);
                    double im = ti__attn_rnd(dt, sn * x1) + ti__attn_rnd(dt, c * x2);
                    ti__set_f64(y, xo + i1, re);
                    ti__set_f64(y, xo + i2, im);
                }
                for (int64_t i = r.rd; i < r.d; i++)
                    ti__set_f64(y, xo + (size_t)i, ti__attn_ld(dt, r.x->data, xo + (size_t)i));
            }
        }
    }
    return TI_OK;
}

TI__PRIVATE const ti__op ti__ops_attention[] = {
    {"Attention", ti__attn_shape, ti__attn_run, ti__attn_scratch, 0},
    {"RotaryEmbedding", ti__rope_shape, ti__rope_run, NULL, 0},
    {NULL, NULL, NULL, NULL, 0}
};
/* ==== end src/cpu/attention.c =============================================================== */

/* ==== begin src/cpu/binary.c ================================================================ */
/* Elementwise ops of two or more inputs with numpy (multidirectional) broadcasting:
 * arithmetic, Min/Max/Sum/Mean, comparisons, logical and bitwise ops, Where, PRelu.
 * Broadcasting never allocates: each input gets element strides over the output dims (0 on
 * broadcast dims), adjacent dims that stay contiguous for every input are merged, and a
 * walker hands the kernels runs of the innermost dim. float32 arithmetic has typed loops;
 * other dtypes move through chunks of double / int64 / uint64 values. Relies on tensor.c.
 * Also defines the dtype masks and the value-carrier helpers that unary.c (Cast) reuses:
 * this file comes first in the amalgamation. */

/* dtype sets, as bit masks over ti_dtype */
#define TI__EDT(t) (1u << (unsigned)(t))
#define TI__EDT_FLOAT                                                                          \
    (TI__EDT(TI_DTYPE_F32) | TI__EDT(TI_DTYPE_F64) | TI__EDT(TI_DTYPE_F16) | TI__EDT(TI_DTYPE_BF16))
#define TI__EDT_SINT                                                                           \
    (TI__EDT(TI_DTYPE_I8) | TI__EDT(TI_DTYPE_I16) | TI__EDT(TI_DTYPE_I32) | TI__EDT(TI_DTYPE_I64))
#define TI__EDT_UINT                                                                           \
    (TI__EDT(TI_DTYPE_U8) | TI__EDT(TI_DTYPE_U16) | TI__EDT(TI_DTYPE_U32) | TI__EDT(TI_DTYPE_U64))
#define TI__EDT_INT (TI__EDT_SINT | TI__EDT_UINT)
#define TI__EDT_NUM (TI__EDT_FLOAT | TI__EDT_INT)
#define TI__EDT_BOOL TI__EDT(TI_DTYPE_BOOL)
#define TI__EDT_ALL (TI__EDT_NUM | TI__EDT_BOOL)
#define TI__EDT_IN(t, mask) ((unsigned)(t) < 32 && (TI__EDT(t) & (mask)) != 0)

#define TI__ELEMWISE_GRAIN 16384 /* elements per thread-pool task */

/* ---- value carriers ------------------------------------------------------------------ */
/* Values of any dtype are computed on as double (float dtypes), int64 (signed and bool) or
 * uint64 (unsigned); each is exact for the dtypes it carries. */
enum { TI__CARRY_F, TI__CARRY_I, TI__CARRY_U };
#define TI__CARRY_CHUNK 256

TI__PRIVATE int ti__carry_unsigned(ti_dtype t) { return TI__EDT_IN(t, TI__EDT_UINT); }
TI__PRIVATE int ti__carry_of(ti_dtype t) {
    return ti__dtype_is_float(t) ? TI__CARRY_F : ti__carry_unsigned(t) ? TI__CARRY_U : TI__CARRY_I;
}

/* float -> integer: truncate toward zero; NaN gives 0; values past the int64 (uint64) range
 * saturate; narrower types then wrap, as C conversions of int64 do. */
TI__PRIVATE int64_t ti__carry_d2i(double v) {
    if (v != v) return 0;
    if (v >= 9223372036854775807.0) return INT64_MAX;
    if (v <= -9223372036854775808.0) return INT64_MIN;
    return (int64_t)v;
}
TI__PRIVATE uint64_t ti__carry_d2u(double v) {
    if (v != v) return 0;
    if (v >= 18446744073709551615.0) return UINT64_MAX;
    if (v >= 9223372036854775808.0) return (uint64_t)v;
    return (uint64_t)ti__carry_d2i(v); /* negative values wrap, as numpy does on x86 */
}

/* Loads n elements src[off + i * step] of dtype dt, converted by CONV, into dst. */
#define TI__CARRY_LOAD(DST, CONV)                                                             \
    switch (dt) {                                                                             \
    case TI_DTYPE_F32: TI__CARRY_LOOP(DST, CONV, const float, (double)); break;               \
    case TI_DTYPE_F64: TI__CARRY_LOOP(DST, CONV, const double, (double)); break;              \
    case TI_DTYPE_F16: TI__CARRY_LOOP(DST, CONV, const uint16_t, (double)ti__f16_to_f32); break; \
    case TI_DTYPE_BF16: TI__CARRY_LOOP(DST, CONV, const uint16_t, (double)ti__bf16_to_f32); break; \
    case TI_DTYPE_I8: TI__CARRY_LOOP(DST, , const int8_t, ); break;                          \
    case TI_DTYPE_I16: TI__CARRY_LOOP(DST, , const int16_t, ); break;                        \
    case TI_DTYPE_I32: TI__CARRY_LOOP(DST, , const int32_t, ); break;                        \
    case TI_DTYPE_I64: TI__CARRY_LOOP(DST, , const int64_t, ); break;                        \
    case TI_DTYPE_U8: TI__CARRY_LOOP(DST, , const uint8_t, ); break;                         \
    case TI_DTYPE_U16: TI__CARRY_LOOP(DST, , const uint16_t, ); break;                       \
    case TI_DTYPE_U32: TI__CARRY_LOOP(DST, , const uint32_t, ); break;                       \
    case TI_DTYPE_U64: TI__CARRY_LOOP(DST, , const uint64_t, ); break;                       \
    case TI_DTYPE_BOOL: TI__CARRY_LOOP(DST, , const uint8_t, 0 != ); break;                   \
    default: for (size_t i = 0; i < n; i++) (DST)[i] = 0; break;                             \
    }
/* T: source C type; PRE: applied to the raw element; CONV: applied to floats only */
#define TI__CARRY_LOOP(DST, CONV, T, PRE)                                                     \
    do {                                                                                      \
        T *s_ = (T *)src + off;                                                               \
        for (size_t i = 0; i < n; i++) (DST)[i] = CONV(PRE(s_[i * step]));                    \
    } while (0)

TI__PRIVATE void ti__carry_load_f(const void *src, ti_dtype dt, size_t off, size_t step,
                                  size_t n, double *dst) {
    TI__CARRY_LOAD(dst, (double))
}
TI__PRIVATE void ti__carry_load_i(const void *src, ti_dtype dt, size_t off, size_t step,
                                  size_t n, int64_t *dst) {
    TI__CARRY_LOAD(dst, ti__carry_d2i)
}
TI__PRIVATE void ti__carry_load_u(const void *src, ti_dtype dt, size_t off, size_t step,
                                  size_t n, uint64_t *dst) {
    TI__CARRY_LOAD(dst, ti__carry_d2u)
}

/* Stores n values v[i] at dst[off + i] as dtype dt. TOI / TOU turn a value into int64 /
 * uint64 for integer targets (float carriers need the defined conversions). */
#define TI__CARRY_PUT(T, E) for (i = 0; i < n; i++) ((T *)dst)[off + i] = (T)(E)
#define TI__CARRY_STORE(TOI, TOU)                                                             \
    switch (dt) {                                                                             \
    case TI_DTYPE_F32: TI__CARRY_PUT(float, v[i]); break;                                     \
    case TI_DTYPE_F64: TI__CARRY_PUT(double, v[i]); break;                                    \
    case TI_DTYPE_F16: TI__CARRY_PUT(uint16_t, ti__f32_to_f16((float)v[i])); break;           \
    case TI_DTYPE_BF16: TI__CARRY_PUT(uint16_t, ti__f32_to_bf16((float)v[i])); break;         \
    case TI_DTYPE_BOOL: TI__CARRY_PUT(uint8_t, v[i] != 0); break;                             \
    case TI_DTYPE_I8: TI__CARRY_PUT(int8_t, TOI(v[i])); break;                                \
    case TI_DTYPE_I16: TI__CARRY_PUT(int16_t, TOI(v[i])); break;                              \
    case TI_DTYPE_I32: TI__CARRY_PUT(int32_t, TOI(v[i])); break;                              \
    case TI_DTYPE_I64: TI__CARRY_PUT(int64_t, TOI(v[i])); break;                              \
    case TI_DTYPE_U8: TI__CARRY_PUT(uint8_t, TOU(v[i])); break;                               \
    case TI_DTYPE_U16: TI__CARRY_PUT(uint16_t, TOU(v[i])); break;                             \
    case TI_DTYPE_U32: TI__CARRY_PUT(uint32_t, TOU(v[i])); break;                             \
    case TI_DTYPE_U64: TI__CARRY_PUT(uint64_t, TOU(v[i])); break;                             \
    default: break;                                                                           \
    }

TI__PRIVATE void ti__carry_store_f(void *dst, ti_dtype dt, size_t off, size_t n, const double *v) {
    size_t i;
    TI__CARRY_STORE(ti__carry_d2i, ti__carry_d2u)
}
TI__PRIVATE void ti__carry_store_i(void *dst, ti_dtype dt, size_t off, size_t n,
                                   const int64_t *v) {
    size_t i;
    TI__CARRY_STORE(, )
}
TI__PRIVATE void ti__carry_store_u(void *dst, ti_dtype dt, size_t off, size_t n,
                                   const uint64_t *v) {
    size_t i;
    TI__CARRY_STORE(, )
}

/* ---- broadcasting -------------------------------------------------------------------- */
#define TI__BCAST_MAX_IN 3

typedef struct ti__bcast {
    int rank;    /* merged dims, >= 1 */
    int n_in;
    size_t total; /* output elements */
    size_t dims[TI_MAX_DIMS];
    size_t str[TI__BCAST_MAX_IN][TI_MAX_DIMS]; /* element strides; 0 on broadcast dims */
} ti__bcast;

/* in[j]: shapes that broadcast to out_shape (checked by the shape functions). */
TI__PRIVATE void ti__bcast_init(ti__bcast *bc, int n_in, const ti_tensor *const *in,
                                int out_rank, const int64_t *out_shape) {
    size_t rd[TI_MAX_DIMS], rs[TI__BCAST_MAX_IN][TI_MAX_DIMS], run[TI__BCAST_MAX_IN];
    int m = 0;
    bc->n_in = n_in;
    bc->total = ti__shape_numel(out_rank, out_shape);
    for (int j = 0; j < n_in; j++) run[j] = 1;
    /* innermost first, so each dim can join the one inside it */
    for (int d = out_rank - 1; d >= 0; d--) {
        size_t od = (size_t)out_shape[d], s[TI__BCAST_MAX_IN];
        int merge = m > 0;
        for (int j = 0; j < n_in; j++) {
            int id = d - (out_rank - in[j]->rank);
            size_t idim = id >= 0 ? (size_t)in[j]->shape[id] : 1;
            s[j] = idim == 1 ? 0 : run[j];
            run[j] *= idim;
            if (m > 0 && s[j] != rs[j][m - 1] * rd[m - 1]) merge = 0;
        }
        if (od == 1) continue;
        if (merge) {
            rd[m - 1] *= od;
        } else {
            rd[m] = od;
            for (int j = 0; j < n_in; j++) rs[j][m] = s[j];
            m++;
        }
    }
    if (m == 0) { /* every dim is 1: a single element */
        rd[0] = 1;
        for (int j = 0; j < n_in; j++) rs[j][0] = 0;
        m = 1;
    }
    bc->rank = m;
    for (int d = 0; d < m; d++) {
        bc->dims[d] = rd[m - 1 - d];
        for (int j = 0; j < n_in; j++) bc->str[j][d] = rs[j][m - 1 - d];
    }
}

typedef struct ti__bjob ti__bjob;
/* Computes n outputs from out index o; input j starts at element off[j] and moves by
 * step[j] (0 or 1) per output. */
typedef void (*ti__bin_inner)(const ti__bjob *j, size_t o, const size_t *off,
                              const size_t *step, size_t n);

struct ti__bjob {
    ti__bcast bc;
    ti__bin_inner fn;
    int op;
    int carry;                       /* TI__CARRY_* the generic path computes in */
    int width;                       /* BitShift: bits of the dtype */
    const void *in[TI__BCAST_MAX_IN];
    ti_dtype in_dt[TI__BCAST_MAX_IN];
    void *out;
    ti_dtype out_dt;
};

/* Visits output elements [begin, end) as runs along the innermost merged dim. */
TI__PRIVATE void ti__bcast_range(void *ctx, size_t begin, size_t end) {
    const ti__bjob *j = (const ti__bjob *)ctx;
    const ti__bcast *bc = &j->bc;
    const int r = bc->rank, nj = bc->n_in;
    size_t idx[TI_MAX_DIMS], off[TI__BCAST_MAX_IN] = {0, 0, 0}, step[TI__BCAST_MAX_IN];
    size_t rem = begin;
    for (int d = r - 1; d >= 0; d--) {
        idx[d] = rem % bc->dims[d];
        rem /= bc->dims[d];
        for (int i = 0; i < nj; i++) off[i] += idx[d] * bc->str[i][d];
    }
    for (int i = 0; i < nj; i++) step[i] = bc->str[i][r - 1];
    size_t pos = begin;
    while (pos < end) {
        size_t n = TI__MIN(bc->dims[r - 1] - idx[r - 1], end - pos);
        j->fn(j, pos, off, step, n);
        pos += n;
        idx[r - 1] += n;
        for (int i = 0; i < nj; i++) off[i] += n * step[i];
        for (int d = r - 1; d > 0 && idx[d] == bc->dims[d]; d--) { /* carry */
            idx[d] = 0;
            idx[d - 1]++;
            for (int i = 0; i < nj; i++)
                off[i] = off[i] - bc->dims[d] * bc->str[i][d] + bc->str[i][d - 1];
        }
    }
}

TI__PRIVATE void ti__bcast_run(ti__kctx *k, ti__bjob *j) {
    if (j->bc.total != 0)
        ti__parallel_for(k->tp, j->bc.total, TI__ELEMWISE_GRAIN, ti__bcast_range, j);
}

/* "[2,3,4]" into buf */
TI__PRIVATE const char *ti__bin_shape_str(char *buf, size_t cap, int rank, const int64_t *dims) {
    size_t len = 0;
    buf[0] = 0;
    len += (size_t)snprintf(buf, cap, "[");
    for (int i = 0; i < rank && len < cap; i++)
        len += (size_t)snprintf(buf + len, cap - len, i ? ",%lld" : "%lld", (long long)dims[i]);
    if (len < cap) snprintf(buf + len, cap - len, "]");
    return buf;
}

/* ---- the ops ------------------------------------------------------------------------- */
enum {
    TI__BOP_ADD, TI__BOP_SUB, TI__BOP_MUL, TI__BOP_DIV, TI__BOP_POW, TI__BOP_MOD,
    TI__BOP_FMOD, TI__BOP_MIN, TI__BOP_MAX, TI__BOP_SUM, TI__BOP_MEAN, TI__BOP_PRELU,
    TI__BOP_EQ, TI__BOP_GT, TI__BOP_LT, TI__BOP_GE, TI__BOP_LE,
    TI__BOP_AND, TI__BOP_OR, TI__BOP_XOR, TI__BOP_SHL, TI__BOP_SHR,
    TI__BOP_BAND, TI__BOP_BOR, TI__BOP_BXOR, TI__BOP_SHIFT
};
enum { TI__BIN_BOOL_OUT = 1, TI__BIN_VARIADIC = 2, TI__BIN_ANY_B = 4 };

typedef struct ti__bin_info {
    unsigned mask;  /* dtypes of input 0 */
    unsigned flags;
} ti__bin_info;

/* indexed by TI__BOP_*; MOD covers FMOD and SHIFT covers SHL/SHR at shape time */
static const ti__bin_info ti__bin_infos[] = {
    {TI__EDT_NUM, 0},                          /* Add */
    {TI__EDT_NUM, 0},                          /* Sub */
    {TI__EDT_NUM, 0},                          /* Mul */
    {TI__EDT_NUM, 0},                          /* Div */
    {TI__EDT_NUM, TI__BIN_ANY_B},              /* Pow: exponent of any numeric dtype */
    {TI__EDT_NUM, 0},                          /* Mod */
    {TI__EDT_NUM, 0},                          /* (fmod) */
    {TI__EDT_NUM, TI__BIN_VARIADIC},           /* Min */
    {TI__EDT_NUM, TI__BIN_VARIADIC},           /* Max */
    {TI__EDT_FLOAT, TI__BIN_VARIADIC},         /* Sum */
    {TI__EDT_FLOAT, TI__BIN_VARIADIC},         /* Mean */
    {TI__EDT_FLOAT | TI__EDT_INT, 0},           /* PRelu */
    {TI__EDT_ALL, TI__BIN_BOOL_OUT},           /* Equal */
    {TI__EDT_NUM, TI__BIN_BOOL_OUT},           /* Greater */
    {TI__EDT_NUM, TI__BIN_BOOL_OUT},           /* Less */
    {TI__EDT_NUM, TI__BIN_BOOL_OUT},           /* GreaterOrEqual */
    {TI__EDT_NUM, TI__BIN_BOOL_OUT},           /* LessOrEqual */
    {TI__EDT_BOOL, TI__BIN_BOOL_OUT},          /* And */
    {TI__EDT_BOOL, TI__BIN_BOOL_OUT},          /* Or */
    {TI__EDT_BOOL, TI__BIN_BOOL_OUT},          /* Xor */
    {TI__EDT_INT, 0},                          /* (shift left) */
    {TI__EDT_INT, 0},                          /* (shift right) */
    {TI__EDT_INT, 0},                          /* BitwiseAnd */
    {TI__EDT_INT, 0},                          /* BitwiseOr */
    {TI__EDT_INT, 0},                          /* BitwiseXor */
    {TI__EDT_INT, 0},                          /* BitShift */
};

/* float32 loops for the common arithmetic ops; x, y are the two operands. */
#define TI__BIN_F32_LOOP(EXPR)                                                                \
    do {                                                                                      \
        if (sa && sb) {                                                                       \
            for (size_t i = 0; i < n; i++) {                                                  \
                const float x = a[i], y = b[i];                                               \
                o[i] = (EXPR);                                                                \
            }                                                                                 \
        } else if (sa) {                                                                      \
            const float y = b[0];                                                             \
            for (size_t i = 0; i < n; i++) {                                                  \
                const float x = a[i];                                                         \
                o[i] = (EXPR);                                                                \
            }                                                                                 \
        } else if (sb) {                                                                      \
            const float x = a[0];                                                             \
            for (size_t i = 0; i < n; i++) {                                                  \
                const float y = b[i];                                                         \
                o[i] = (EXPR);                                                                \
            }                                                                                 \
        } else {                                                                              \
            const float x = a[0], y = b[0], v = (EXPR);                                       \
            for (size_t i = 0; i < n; i++) o[i] = v;                                          \
        }                                                                                     \
    } while (0)

TI__PRIVATE void ti__bin_f32(const ti__bjob *j, size_t oi, const size_t *off,
                             const size_t *step, size_t n) {
    const float *a = (const float *)j->in[0] + off[0], *b = (const float *)j->in[1] + off[1];
    float *o = (float *)j->out + oi;
    const int sa = step[0] != 0, sb = step[1] != 0;
    switch (j->op) {
    case TI__BOP_ADD: case TI__BOP_SUM: case TI__BOP_MEAN: TI__BIN_F32_LOOP(x + y); break;
    case TI__BOP_SUB: TI__BIN_F32_LOOP(x - y); break;
    case TI__BOP_MUL: TI__BIN_F32_LOOP(x * y); break;
    case TI__BOP_DIV: TI__BIN_F32_LOOP(x / y); break;
    case TI__BOP_POW: TI__BIN_F32_LOOP(powf(x, y)); break;
    /* Min/Max propagate NaN as numpy.minimum/maximum do */
    case TI__BOP_MIN: TI__BIN_F32_LOOP((x < y || x != x) ? x : y); break;
    case TI__BOP_MAX: TI__BIN_F32_LOOP((x > y || x != x) ? x : y); break;
    case TI__BOP_PRELU: TI__BIN_F32_LOOP(x < 0.0f ? x * y : x); break;
    default: break;
    }
}

/* x mod y with the sign of the divisor (numpy.mod / Python %) */
TI__PRIVATE double ti__mod_floor_d(double x, double y) {
    double r = fmod(x, y);
    if (r != 0.0) {
        if ((r < 0.0) != (y < 0.0)) r += y;
    } else {
        r = y < 0.0 ? -0.0 : 0.0;
    }
    return r;
}

TI__PRIVATE void ti__bin_op_f(int op, double *a, const double *b, size_t n) {
    size_t i;
    switch (op) {
    case TI__BOP_ADD: case TI__BOP_SUM: case TI__BOP_MEAN:
        for (i = 0; i < n; i++) a[i] += b[i];
        break;
    case TI__BOP_SUB: for (i = 0; i < n; i++) a[i] -= b[i]; break;
    case TI__BOP_MUL: for (i = 0; i < n; i++) a[i] *= b[i]; break;
    case TI__BOP_DIV: for (i = 0; i < n; i++) a[i] /= b[i]; break;
    case TI__BOP_POW: for (i = 0; i < n; i++) a[i] = pow(a[i], b[i]); break;
    case TI__BOP_MOD: for (i = 0; i < n; i++) a[i] = ti__mod_floor_d(a[i], b[i]); break;
    case TI__BOP_FMOD: for (i = 0; i < n; i++) a[i] = fmod(a[i], b[i]); break;
    case TI__BOP_MIN:
        for (i = 0; i < n; i++) a[i] = (a[i] < b[i] || a[i] != a[i]) ? a[i] : b[i];
        break;
    case TI__BOP_MAX:
        for (i = 0; i < n; i++) a[i] = (a[i] > b[i] || a[i] != a[i]) ? a[i] : b[i];
        break;
    case TI__BOP_PRELU: for (i = 0; i < n; i++) a[i] = a[i] < 0.0 ? a[i] * b[i] : a[i]; break;
    case TI__BOP_EQ: for (i = 0; i < n; i++) a[i] = a[i] == b[i]; break;
    case TI__BOP_GT: for (i = 0; i < n; i++) a[i] = a[i] > b[i]; break;
    case TI__BOP_LT: for (i = 0; i < n; i++) a[i] = a[i] < b[i]; break;
    case TI__BOP_GE: for (i = 0; i < n; i++) a[i] = a[i] >= b[i]; break;
    case TI__BOP_LE: for (i = 0; i < n; i++) a[i] = a[i] <= b[i]; break;
    default: break;
    }
}

/* x^y for integers, wrapping like the narrow type; negative y gives 0 unless |x| == 1 */
TI__PRIVATE uint64_t ti__ipow(uint64_t x, int64_t y, int is_signed) {
    if (y < 0) {
        if (x == 1) return 1;
        if (is_signed && x == (uint64_t)-1) return (y & 1) ? x : 1;
        return 0;
    }
    uint64_t r = 1;
    while (y) {
        if (y & 1) r *= x;
        x *= x;
        y >>= 1;
    }
    return r;
}

/* Signed integer ops on int64 values; arithmetic wraps through uint64 (no UB), and so
 * wraps like the narrow dtype once stored. Divisors were checked for zero before. */
TI__PRIVATE void ti__bin_op_i(int op, int width, int64_t *a, const int64_t *b, size_t n) {
    size_t i;
    switch (op) {
    case TI__BOP_ADD:
        for (i = 0; i < n; i++) a[i] = (int64_t)((uint64_t)a[i] + (uint64_t)b[i]);
        break;
    case TI__BOP_SUB:
        for (i = 0; i < n; i++) a[i] = (int64_t)((uint64_t)a[i] - (uint64_t)b[i]);
        break;
    case TI__BOP_MUL:
        for (i = 0; i < n; i++) a[i] = (int64_t)((uint64_t)a[i] * (uint64_t)b[i]);
        break;
    case TI__BOP_DIV: /* C division truncates toward zero */
        for (i = 0; i < n; i++)
            a[i] = b[i] == 0 ? 0 : (b[i] == -1 ? (int64_t)(0u - (uint64_t)a[i]) : a[i] / b[i]);
        break;
    case TI__BOP_FMOD:
        for (i = 0; i < n; i++) a[i] = (b[i] == 0 || b[i] == -1) ? 0 : a[i] % b[i];
        break;
    case TI__BOP_MOD:
        for (i = 0; i < n; i++) {
            int64_t r = (b[i] == 0 || b[i] == -1) ? 0 : a[i] % b[i];
            if (r != 0 && ((r < 0) != (b[i] < 0))) r += b[i];
            a[i] = r;
        }
        break;
    case TI__BOP_POW:
        for (i = 0; i < n; i++) a[i] = (int64_t)ti__ipow((uint64_t)a[i], b[i], 1);
        break;
    case TI__BOP_MIN: for (i = 0; i < n; i++) a[i] = a[i] < b[i] ? a[i] : b[i]; break;
    case TI__BOP_MAX: for (i = 0; i < n; i++) a[i] = a[i] > b[i] ? a[i] : b[i]; break;
    case TI__BOP_PRELU:
        for (i = 0; i < n; i++) a[i] = a[i] < 0 ? (int64_t)((uint64_t)a[i] * (uint64_t)b[i]) : a[i];
        break;
    case TI__BOP_EQ: for (i = 0; i < n; i++) a[i] = a[i] == b[i]; break;
    case TI__BOP_GT: for (i = 0; i < n; i++) a[i] = a[i] > b[i]; break;
    case TI__BOP_LT: for (i = 0; i < n; i++) a[i] = a[i] < b[i]; break;
    case TI__BOP_GE: for (i = 0; i < n; i++) a[i] = a[i] >= b[i]; break;
    case TI__BOP_LE: for (i = 0; i < n; i++) a[i] = a[i] <= b[i]; break;
    case TI__BOP_AND: for (i = 0; i < n; i++) a[i] = a[i] != 0 && b[i] != 0; break;
    case TI__BOP_OR: for (i = 0; i < n; i++) a[i] = a[i] != 0 || b[i] != 0; break;
    case TI__BOP_XOR: for (i = 0; i < n; i++) a[i] = (a[i] != 0) != (b[i] != 0); break;
    case TI__BOP_BAND: for (i = 0; i < n; i++) a[i] &= b[i]; break;
    case TI__BOP_BOR: for (i = 0; i < n; i++) a[i] |= b[i]; break;
    case TI__BOP_BXOR: for (i = 0; i < n; i++) a[i] ^= b[i]; break;
    /* shifts by a negative count or by the width or more: 0 (left), the sign fill (right),
     * as the ONNX reference does */
    case TI__BOP_SHL:
        for (i = 0; i < n; i++)
            a[i] = (b[i] < 0 || b[i] >= width) ? 0 : (int64_t)((uint64_t)a[i] << b[i]);
        break;
    case TI__BOP_SHR:
        for (i = 0; i < n; i++) {
            int64_t s = (b[i] < 0 || b[i] >= width) ? 63 : b[i];
            a[i] = a[i] < 0 ? ~(~a[i] >> s) : a[i] >> s; /* arithmetic shift, portably */
        }
        break;
    default: break;
    }
}

TI__PRIVATE void ti__bin_op_u(int op, int width, uint64_t *a, const uint64_t *b, size_t n) {
    size_t i;
    switch (op) {
    case TI__BOP_ADD: for (i = 0; i < n; i++) a[i] += b[i]; break;
    case TI__BOP_SUB: for (i = 0; i < n; i++) a[i] -= b[i]; break;
    case TI__BOP_MUL: for (i = 0; i < n; i++) a[i] *= b[i]; break;
    case TI__BOP_DIV: for (i = 0; i < n; i++) a[i] = b[i] == 0 ? 0 : a[i] / b[i]; break;
    case TI__BOP_MOD: case TI__BOP_FMOD:
        for (i = 0; i < n; i++) a[i] = b[i] == 0 ? 0 : a[i] % b[i];
        break;
    case TI__BOP_POW: for (i = 0; i < n; i++) a[i] = ti__ipow(a[i], (int64_t)b[i], 0); break;
    case TI__BOP_MIN: for (i = 0; i < n; i++) a[i] = a[i] < b[i] ? a[i] : b[i]; break;
    case TI__BOP_MAX: for (i = 0; i < n; i++) a[i] = a[i] > b[i] ? a[i] : b[i]; break;
    case TI__BOP_PRELU: break; /* never negative */
    case TI__BOP_EQ: for (i = 0; i < n; i++) a[i] = a[i] == b[i]; break;
    case TI__BOP_GT: for (i = 0; i < n; i++) a[i] = a[i] > b[i]; break;
    case TI__BOP_LT: for (i = 0; i < n; i++) a[i] = a[i] < b[i]; break;
    case TI__BOP_GE: for (i = 0; i < n; i++) a[i] = a[i] >= b[i]; break;
    case TI__BOP_LE: for (i = 0; i < n; i++) a[i] = a[i] <= b[i]; break;
    case TI__BOP_BAND: for (i = 0; i < n; i++) a[i] &= b[i]; break;
    case TI__BOP_BOR: for (i = 0; i < n; i++) a[i] |= b[i]; break;
    case TI__BOP_BXOR: for (i = 0; i < n; i++) a[i] ^= b[i]; break;
    case TI__BOP_SHL:
        for (i = 0; i < n; i++) a[i] = b[i] >= (uint64_t)width ? 0 : a[i] << b[i];
        break;
    case TI__BOP_SHR:
        for (i = 0; i < n; i++) a[i] = b[i] >= (uint64_t)width ? 0 : a[i] >> b[i];
        break;
    default: break;
    }
}

/* Any dtype: chunks of carried values. */
TI__PRIVATE void ti__bin_generic(const ti__bjob *j, size_t oi, const size_t *off,
                                 const size_t *step, size_t n) {
    union {
        double f[TI__CARRY_CHUNK];
        int64_t i[TI__CARRY_CHUNK];
        uint64_t u[TI__CARRY_CHUNK];
    } a, b;
    for (size_t c = 0; c < n; c += TI__CARRY_CHUNK) {
        const size_t m = TI__MIN((size_t)TI__CARRY_CHUNK, n - c);
        const size_t o0 = off[0] + c * step[0], o1 = off[1] + c * step[1];
        switch (j->carry) {
        case TI__CARRY_F:
            ti__carry_load_f(j->in[0], j->in_dt[0], o0, step[0], m, a.f);
            ti__carry_load_f(j->in[1], j->in_dt[1], o1, step[1], m, b.f);
            ti__bin_op_f(j->op, a.f, b.f, m);
            ti__carry_store_f(j->out, j->out_dt, oi + c, m, a.f);
            break;
        case TI__CARRY_I:
            ti__carry_load_i(j->in[0], j->in_dt[0], o0, step[0], m, a.i);
            ti__carry_load_i(j->in[1], j->in_dt[1], o1, step[1], m, b.i);
            ti__bin_op_i(j->op, j->width, a.i, b.i, m);
            ti__carry_store_i(j->out, j->out_dt, oi + c, m, a.i);
            break;
        default:
            ti__carry_load_u(j->in[0], j->in_dt[0], o0, step[0], m, a.u);
            ti__carry_load_u(j->in[1], j->in_dt[1], o1, step[1], m, b.u);
            ti__bin_op_u(j->op, j->width, a.u, b.u, m);
            ti__carry_store_u(j->out, j->out_dt, oi + c, m, a.u);
            break;
        }
    }
}

/* ---- shape and run -------------------------------------------------------------------- */
/* PRelu before opset 7 applied a 1-D slope of X.shape[1] values per channel; later opsets
 * broadcast it numpy-style. Returns the slope with the shape it broadcasts with ([C,1,..]
 * in the old case, a view in *tmp sharing the data). */
TI__PRIVATE const ti_tensor *ti__prelu_slope(const ti__kctx *k, ti_tensor *tmp) {
    const ti_tensor *x = k->in[0], *s = k->in[1];
    if (k->opset >= 7 || s->rank != 1 || x->rank < 2 || s->shape[0] != x->shape[1] ||
        s->shape[0] == 1)
        return s;
    *tmp = *s;
    tmp->rank = x->rank - 1;
    for (int d = 1; d < tmp->rank; d++) tmp->shape[d] = 1;
    return tmp;
}

TI__PRIVATE int ti__bin_shape_op(ti__kctx *k, int op) {
    const ti__bin_info *info = &ti__bin_infos[op];
    if (op == TI__BOP_SHIFT) {
        const char *dir = ti__attr_s(k->node, "direction", "");
        if (strcmp(dir, "LEFT") != 0 && strcmp(dir, "RIGHT") != 0)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "direction '%s' is not 'LEFT' or 'RIGHT'", dir);
    }
    const int variadic = (info->flags & TI__BIN_VARIADIC) != 0;
    const int n = variadic ? k->n_in : 2;
    if (n < 1) return ti__kfail(k, TI_ERR_BAD_MODEL, "at least one input is required");
    for (int i = 0; i < n; i++) TI__REQUIRE_INPUT(k, i);
    if (k->n_out < 1 || k->out[0] == NULL)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "output 0 is required");
    const ti_tensor *a = k->in[0];
    if (!TI__EDT_IN(a->dtype, info->mask))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "dtype %s is not supported",
                         ti_dtype_name(a->dtype));
    int rank = a->rank;
    int64_t dims[TI_MAX_DIMS];
    for (int d = 0; d < rank; d++) dims[d] = a->shape[d];
    for (int i = 1; i < n; i++) {
        ti_tensor slope;
        const ti_tensor *b = k->in[i];
        if (op == TI__BOP_PRELU) b = ti__prelu_slope(k, &slope);
        if (info->flags & TI__BIN_ANY_B) {
            if (!TI__EDT_IN(b->dtype, TI__EDT_NUM))
                return ti__kfail(k, TI_ERR_UNSUPPORTED, "dtype %s of input %d is not supported",
                                 ti_dtype_name(b->dtype), i);
        } else if (b->dtype != a->dtype) {
            return ti__kfail(k, TI_ERR_BAD_MODEL, "input %d has dtype %s, input 0 has %s", i,
                             ti_dtype_name(b->dtype), ti_dtype_name(a->dtype));
        }
        int64_t nd[TI_MAX_DIMS];
        int nr;
        if (!ti__broadcast_shape(rank, dims, b->rank, b->shape, &nr, nd)) {
            char s1[128], s2[128];
            return ti__kfail(k, TI_ERR_BAD_MODEL, "shapes %s and %s do not broadcast",
                             ti__bin_shape_str(s1, sizeof s1, rank, dims),
                             ti__bin_shape_str(s2, sizeof s2, b->rank, b->shape));
        }
        if (op == TI__BOP_PRELU && (nr != rank || memcmp(nd, dims, sizeof(int64_t) * (size_t)nr))) {
            char s1[128], s2[128];
            return ti__kfail(k, TI_ERR_BAD_MODEL, "slope shape %s does not broadcast to X shape %s",
                             ti__bin_shape_str(s2, sizeof s2, b->rank, b->shape),
                             ti__bin_shape_str(s1, sizeof s1, rank, dims));
        }
        rank = nr;
        memcpy(dims, nd, sizeof(int64_t) * (size_t)nr);
    }
    const ti_dtype odt = (info->flags & TI__BIN_BOOL_OUT) ? TI_DTYPE_BOOL : a->dtype;
    if (!ti__set_shape(k->out[0], odt, rank, dims))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "output shape is invalid");
    return TI_OK;
}

/* One broadcast pass: out = a (op) b. */
TI__PRIVATE void ti__bin_pass(ti__kctx *k, int op, const ti_tensor *a, const ti_tensor *b,
                              int width) {
    ti_tensor *y = k->out[0];
    ti__bjob j;
    const ti_tensor *ins[2];
    ins[0] = a;
    ins[1] = b;
    ti__bcast_init(&j.bc, 2, ins, y->rank, y->shape);
    j.op = op;
    j.width = width;
    j.in[0] = a->data;
    j.in[1] = b->data;
    j.in[2] = NULL;
    j.in_dt[0] = a->dtype;
    j.in_dt[1] = b->dtype;
    j.in_dt[2] = TI_DTYPE_UNKNOWN;
    j.out = y->data;
    j.out_dt = y->dtype;
    /* Pow with one float operand computes in double; otherwise the operands' carrier */
    j.carry = ti__carry_of(a->dtype);
    if (op == TI__BOP_POW && ti__dtype_is_float(b->dtype)) j.carry = TI__CARRY_F;
    const int fast = a->dtype == TI_DTYPE_F32 && b->dtype == TI_DTYPE_F32 &&
                     y->dtype == TI_DTYPE_F32 && op != TI__BOP_MOD && op != TI__BOP_FMOD;
    j.fn = fast ? ti__bin_f32 : ti__bin_generic;
    ti__bcast_run(k, &j);
}

TI__PRIVATE ti_status ti__bin_run_op(ti__kctx *k, int op) {
    const ti_tensor *a = k->in[0];
    ti_tensor *y = k->out[0];
    int width = (int)(8 * ti_dtype_size(a->dtype));
    if (op == TI__BOP_SHIFT) /* direction checked by the shape function */
        op = strcmp(ti__attr_s(k->node, "direction", ""), "LEFT") == 0 ? TI__BOP_SHL : TI__BOP_SHR;
    if (op == TI__BOP_MOD && ti__attr_i(k->node, "fmod", 0) != 0) op = TI__BOP_FMOD;
    if ((op == TI__BOP_DIV || op == TI__BOP_MOD || op == TI__BOP_FMOD) &&
        !ti__dtype_is_float(a->dtype)) {
        const ti_tensor *b = k->in[1];
        const size_t nb = ti__numel(b);
        for (size_t i = 0; i < nb; i++)
            if (ti__get_i64(b, i) == 0)
                return ti__kfail(k, TI_ERR_INVALID_ARGUMENT,
                                 "integer division by zero (divisor element %zu)", i);
    }
    if (!(ti__bin_infos[op].flags & TI__BIN_VARIADIC)) {
        ti_tensor slope;
        ti__bin_pass(k, op, a, op == TI__BOP_PRELU ? ti__prelu_slope(k, &slope) : k->in[1], width);
        return TI_OK;
    }
    /* variadic: out = in0 op in1, then out = out op in_i */
    if (k->n_in == 1) {
        memcpy(y->data, a->data, y->size_bytes);
    } else {
        ti__bin_pass(k, op, a, k->in[1], width);
        for (int i = 2; i < k->n_in; i++) ti__bin_pass(k, op, y, k->in[i], width);
    }
    if (op == TI__BOP_MEAN && k->n_in > 1) {
        const size_t n = ti__numel(y);
        const double inv = 1.0 / k->n_in;
        if (y->dtype == TI_DTYPE_F32) {
            float *p = (float *)y->data, s = (float)inv;
            for (size_t i = 0; i < n; i++) p[i] *= s;
        } else {
            for (size_t i = 0; i < n; i++) ti__set_f64(y, i, ti__get_f64(y, i) / k->n_in);
        }
    }
    return TI_OK;
}

#define TI__BIN_WRAP(NAME, OP)                                                                \
    TI__PRIVATE int ti__bin_##NAME##_shape(ti__kctx *k) { return ti__bin_shape_op(k, OP); }   \
    TI__PRIVATE ti_status ti__bin_##NAME##_run(ti__kctx *k) { return ti__bin_run_op(k, OP); }
TI__BIN_WRAP(add, TI__BOP_ADD)
TI__BIN_WRAP(sub, TI__BOP_SUB)
TI__BIN_WRAP(mul, TI__BOP_MUL)
TI__BIN_WRAP(div, TI__BOP_DIV)
TI__BIN_WRAP(pow, TI__BOP_POW)
TI__BIN_WRAP(mod, TI__BOP_MOD)
TI__BIN_WRAP(min, TI__BOP_MIN)
TI__BIN_WRAP(max, TI__BOP_MAX)
TI__BIN_WRAP(sum, TI__BOP_SUM)
TI__BIN_WRAP(mean, TI__BOP_MEAN)
TI__BIN_WRAP(prelu, TI__BOP_PRELU)
TI__BIN_WRAP(equal, TI__BOP_EQ)
TI__BIN_WRAP(greater, TI__BOP_GT)
TI__BIN_WRAP(less, TI__BOP_LT)
TI__BIN_WRAP(greater_equal, TI__BOP_GE)
TI__BIN_WRAP(less_equal, TI__BOP_LE)
TI__BIN_WRAP(and, TI__BOP_AND)
TI__BIN_WRAP(or, TI__BOP_OR)
TI__BIN_WRAP(xor, TI__BOP_XOR)
TI__BIN_WRAP(bitshift, TI__BOP_SHIFT)
TI__BIN_WRAP(bitwise_and, TI__BOP_BAND)
TI__BIN_WRAP(bitwise_or, TI__BOP_BOR)
TI__BIN_WRAP(bitwise_xor, TI__BOP_BXOR)

/* ---- Where: out = cond ? x : y, three-way broadcast, any dtype (copied by size) ------- */
TI__PRIVATE int ti__where_shape(ti__kctx *k) {
    for (int i = 0; i < 3; i++) TI__REQUIRE_INPUT(k, i);
    if (k->n_out < 1 || k->out[0] == NULL)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "output 0 is required");
    const ti_tensor *c = k->in[0], *x = k->in[1], *y = k->in[2];
    if (c->dtype != TI_DTYPE_BOOL)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "condition has dtype %s, expected bool",
                         ti_dtype_name(c->dtype));
    if (!TI__EDT_IN(x->dtype, TI__EDT_ALL))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "dtype %s is not supported",
                         ti_dtype_name(x->dtype));
    if (x->dtype != y->dtype)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "X has dtype %s, Y has %s",
                         ti_dtype_name(x->dtype), ti_dtype_name(y->dtype));
    int64_t d1[TI_MAX_DIMS], d2[TI_MAX_DIMS];
    int r1, r2;
    char s1[128], s2[128];
    if (!ti__broadcast_shape(c->rank, c->shape, x->rank, x->shape, &r1, d1))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "condition shape %s and X shape %s do not broadcast",
                         ti__bin_shape_str(s1, sizeof s1, c->rank, c->shape),
                         ti__bin_shape_str(s2, sizeof s2, x->rank, x->shape));
    if (!ti__broadcast_shape(r1, d1, y->rank, y->shape, &r2, d2))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "shapes %s and Y shape %s do not broadcast",
                         ti__bin_shape_str(s1, sizeof s1, r1, d1),
                         ti__bin_shape_str(s2, sizeof s2, y->rank, y->shape));
    if (!ti__set_shape(k->out[0], x->dtype, r2, d2))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "output shape is invalid");
    return TI_OK;
}

#define TI__WHERE_LOOP(T)                                                                     \
    do {                                                                                      \
        const T *x = (const T *)j->in[1] + off[1], *y = (const T *)j->in[2] + off[2];         \
        T *o = (T *)j->out + oi;                                                              \
        const size_t sx = step[1], sy = step[2];                                              \
        for (size_t i = 0; i < n; i++) o[i] = c[i * sc] ? x[i * sx] : y[i * sy];              \
    } while (0)

TI__PRIVATE void ti__where_inner(const ti__bjob *j, size_t oi, const size_t *off,
                                 const size_t *step, size_t n) {
    const uint8_t *c = (const uint8_t *)j->in[0] + off[0];
    const size_t sc = step[0];
    switch (ti_dtype_size(j->out_dt)) {
    case 1: TI__WHERE_LOOP(uint8_t); break;
    case 2: TI__WHERE_LOOP(uint16_t); break;
    case 4: TI__WHERE_LOOP(uint32_t); break;
    case 8: TI__WHERE_LOOP(uint64_t); break;
    default: break;
    }
}

TI__PRIVATE ti_status ti__where_run(ti__kctx *k) {
    ti_tensor *out = k->out[0];
    ti__bjob j;
    memset(&j, 0, sizeof j);
    const ti_tensor *ins[3];
    for (int i = 0; i < 3; i++) {
        ins[i] = k->in[i];
        j.in[i] = k->in[i]->data;
        j.in_dt[i] = k->in[i]->dtype;
    }
    ti__bcast_init(&j.bc, 3, ins, out->rank, out->shape);
    j.out = out->data;
    j.out_dt = out->dtype;
    j.fn = ti__where_inner;
    ti__bcast_run(k, &j);
    return TI_OK;
}

TI__PRIVATE const ti__op ti__ops_binary[] = {
    {"Add", ti__bin_add_shape, ti__bin_add_run, NULL, 0},
    {"Sub", ti__bin_sub_shape, ti__bin_sub_run, NULL, 0},
    {"Mul", ti__bin_mul_shape, ti__bin_mul_run, NULL, 0},
    {"Div", ti__bin_div_shape, ti__bin_div_run, NULL, 0},
    {"Pow", ti__bin_pow_shape, ti__bin_pow_run, NULL, 0},
    {"Mod", ti__bin_mod_shape, ti__bin_mod_run, NULL, 0},
    {"Min", ti__bin_min_shape, ti__bin_min_run, NULL, 0},
    {"Max", ti__bin_max_shape, ti__bin_max_run, NULL, 0},
    {"Sum", ti__bin_sum_shape, ti__bin_sum_run, NULL, 0},
    {"Mean", ti__bin_mean_shape, ti__bin_mean_run, NULL, 0},
    {"PRelu", ti__bin_prelu_shape, ti__bin_prelu_run, NULL, 0},
    {"Equal", ti__bin_equal_shape, ti__bin_equal_run, NULL, 0},
    {"Greater", ti__bin_greater_shape, ti__bin_greater_run, NULL, 0},
    {"Less", ti__bin_less_shape, ti__bin_less_run, NULL, 0},
    {"GreaterOrEqual", ti__bin_greater_equal_shape, ti__bin_greater_equal_run, NULL, 0},
    {"LessOrEqual", ti__bin_less_equal_shape, ti__bin_less_equal_run, NULL, 0},
    {"And", ti__bin_and_shape, ti__bin_and_run, NULL, 0},
    {"Or", ti__bin_or_shape, ti__bin_or_run, NULL, 0},
    {"Xor", ti__bin_xor_shape, ti__bin_xor_run, NULL, 0},
    {"BitShift", ti__bin_bitshift_shape, ti__bin_bitshift_run, NULL, 0},
    {"BitwiseAnd", ti__bin_bitwise_and_shape, ti__bin_bitwise_and_run, NULL, 0},
    {"BitwiseOr", ti__bin_bitwise_or_shape, ti__bin_bitwise_or_run, NULL, 0},
    {"BitwiseXor", ti__bin_bitwise_xor_shape, ti__bin_bitwise_xor_run, NULL, 0},
    {"Where", ti__where_shape, ti__where_run, NULL, 0},
    {NULL, NULL, NULL, NULL, 0}
};
/* ==== end src/cpu/binary.c ================================================================== */

/* ==== begin src/cpu/conv.c ================================================================== */
/* Convolutions: Conv, ConvTranspose (1-D to 3-D spatial, groups, dilations, strides, pads,
 * auto_pad) and ConvInteger. float32 runs im2col tiles into scratch + ti__sgemm_ref
 * (gemm.c), or a direct loop for depthwise-like groups; other float dtypes use a slow
 * generic loop. Spatial shapes are handled as 3-D (D, H, W) with leading 1s, so 1-D and
 * 2-D are special cases. Must not allocate: tiles are sized to the scratch the session
 * gives (ti__conv_scratch). */

/* Defined in gemm.c, which comes later in the amalgamation. */
TI__PRIVATE void ti__sgemm_ref(int transA, int transB, size_t M, size_t N, size_t K, float alpha,
                               const float *A, size_t lda, const float *B, size_t ldb, float beta,
                               float *C, size_t ldc, ti__threadpool *tp);

/* Floats of im2col / col2im scratch to aim for (8 MiB): large tiles make large GEMMs, which
 * split well across threads, and few tiles mean few synchronisations. */
#define TI__CONV_TILE_FLOATS ((size_t)1 << 21)

/* Geometry of a (transposed) convolution. Spatial arrays are D, H, W: slot 3 - nd + i
 * holds spatial axis i; unused leading slots are size 1, stride 1, no padding. */
typedef struct ti__convp {
    int nd;
    int64_t n, c, m, group, cg, mg; /* batch, in/out channels, groups, per group */
    int64_t in[3], k[3], s[3], d[3], pb[3], pe[3], out[3];
    size_t in_sp, out_sp, kprod; /* elements of one input / output plane, kernel volume */
} ti__convp;

/* An INTS attribute of nd values (2*nd for pads) or the default; fails on a wrong count. */
TI__PRIVATE ti_status ti__conv_ints(ti__kctx *k, const char *name, int want, int64_t def,
                                    int64_t *out) {
    int cnt;
    const int64_t *v = ti__attr_ints(k->node, name, &cnt);
    if (v != NULL && cnt != want)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "%s has %d values, expected %d", name, cnt, want);
    for (int i = 0; i < want; i++) out[i] = v != NULL ? v[i] : def;
    return TI_OK;
}

/* Reads and checks the attributes and the X / W shapes; fills p. transpose: W is
 * [C, M/group, k...] (ConvTranspose) instead of [M, C/group, k...]. */
TI__PRIVATE ti_status ti__conv_params(ti__kctx *k, int transpose, ti__convp *p) {
    const ti_tensor *x = k->in[0], *w = k->in[1];
    memset(p, 0, sizeof *p);
    if (x->rank < 3)
        return ti__kfail(k, TI_ERR_BAD_MODEL,
                         "input has %d dims, expected at least 3 (N, C, spatial...)", x->rank);
    if (w->rank != x->rank)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "weight has %d dims, expected %d", w->rank,
                         x->rank);
    int nd = x->rank - 2;
    if (nd > 3)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "%d spatial dims (at most 3 are supported)", nd);
    p->nd = nd;
    p->group = ti__attr_i(k->node, "group", 1);
    if (p->group < 1) return ti__kfail(k, TI_ERR_BAD_MODEL, "group is %lld", (long long)p->group);
    p->n = x->shape[0];
    p->c = x->shape[1];
    if (!transpose) {
        p->m = w->shape[0];
        if (w->shape[1] * p->group != p->c)
            return ti__kfail(k, TI_ERR_BAD_MODEL,
                             "input has %lld channels, weight expects %lld (W[1]=%lld x "
                             "group=%lld)",
                             (long long)p->c, (long long)(w->shape[1] * p->group),
                             (long long)w->shape[1], (long long)p->group);
        if (p->m % p->group != 0)
            return ti__kfail(k, TI_ERR_BAD_MODEL,
                             "weight has %lld output channels, not divisible by group %lld",
                             (long long)p->m, (long long)p->group);
    } else {
        if (w->shape[0] != p->c)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "input has %lld channels, weight has %lld",
                             (long long)p->c, (long long)w->shape[0]);
        if (p->c % p->group != 0)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "%lld input channels not divisible by group "
                             "%lld", (long long)p->c, (long long)p->group);
        p->m = w->shape[1] * p->group;
    }
    p->cg = p->c / p->group;
    p->mg = p->m / p->group;
    int64_t ks[3], st[3], dl[3], pads[6], opad[3], oshape[3];
    ti_status e;
    if ((e = ti__conv_ints(k, "strides", nd, 1, st)) != TI_OK) return e;
    if ((e = ti__conv_ints(k, "dilations", nd, 1, dl)) != TI_OK) return e;
    if ((e = ti__conv_ints(k, "pads", 2 * nd, 0, pads)) != TI_OK) return e;
    int kcnt;
    const int64_t *kattr = ti__attr_ints(k->node, "kernel_shape", &kcnt);
    if (kattr != NULL && kcnt != nd)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "kernel_shape has %d values, expected %d", kcnt,
                         nd);
    for (int i = 0; i < nd; i++) {
        ks[i] = w->shape[2 + i];
        if (kattr != NULL && kattr[i] != ks[i])
            return ti__kfail(k, TI_ERR_BAD_MODEL,
                             "kernel_shape[%d] is %lld but the weight has %lld", i,
                             (long long)kattr[i], (long long)ks[i]);
        if (st[i] < 1 || dl[i] < 1)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "stride %lld / dilation %lld on axis %d must "
                             "be >= 1", (long long)st[i], (long long)dl[i], i);
        if (pads[i] < 0 || pads[nd + i] < 0)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "negative pad on axis %d", i);
    }
    const char *ap = ti__attr_s(k->node, "auto_pad", "NOTSET");
    int mode; /* 0 NOTSET, 1 SAME_UPPER, 2 SAME_LOWER, 3 VALID */
    if (strcmp(ap, "NOTSET") == 0 || ap[0] == 0) mode = 0;
    else if (strcmp(ap, "SAME_UPPER") == 0) mode = 1;
    else if (strcmp(ap, "SAME_LOWER") == 0) mode = 2;
    else if (strcmp(ap, "VALID") == 0) mode = 3;
    else return ti__kfail(k, TI_ERR_BAD_MODEL, "auto_pad '%s' is not one of NOTSET, SAME_UPPER, "
                          "SAME_LOWER, VALID", ap);
    int ocnt = 0;
    const int64_t *os = NULL;
    if (transpose) {
        if ((e = ti__conv_ints(k, "output_padding", nd, 0, opad)) != TI_OK) return e;
        os = ti__attr_ints(k->node, "output_shape", &ocnt);
        if (os != NULL && ocnt != nd && ocnt != nd + 2)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "output_shape has %d values, expected %d",
                             ocnt, nd);
        for (int i = 0; i < nd && os != NULL; i++) oshape[i] = os[ocnt - nd + i];
    }
    for (int i = 0; i < nd; i++) {
        int64_t in = x->shape[2 + i], ek = (ks[i] - 1) * dl[i] + 1, pb = pads[i], pe = pads[nd + i];
        int64_t out;
        if (!transpose) {
            if (mode == 1 || mode == 2) {
                out = (in + st[i] - 1) / st[i];
                int64_t tot = (out - 1) * st[i] + ek - in;
                if (tot < 0) tot = 0;
                pb = mode == 1 ? tot / 2 : tot - tot / 2;
                pe = tot - pb;
            } else {
                if (mode == 3) pb = pe = 0;
                int64_t span = in + pb + pe - ek;
                out = span < 0 ? 0 : span / st[i] + 1;
            }
        } else {
            if (opad[i] < 0)
                return ti__kfail(k, TI_ERR_BAD_MODEL, "negative output_padding on axis %d", i);
            int64_t full = st[i] * (in - 1) + opad[i] + ek;
            if (os != NULL || mode == 1 || mode == 2) { /* pads follow from the output shape */
                out = os != NULL ? oshape[i] : in * st[i];
                int64_t tot = full - out; /* negative: extra output at the end */
                int64_t half = tot >= 0 ? tot / 2 : -((-tot + 1) / 2); /* floor(tot / 2) */
                pb = mode == 1 ? half : tot - half; /* ConvTranspose spec */
                pe = tot - pb;
            } else {
                if (mode == 3) pb = pe = 0;
                out = full - pb - pe;
            }
        }
        if (out <= 0)
            return ti__kfail(k, TI_ERR_BAD_MODEL,
                             "output size on spatial axis %d would be %lld (input %lld, kernel "
                             "%lld, stride %lld, dilation %lld, pads %lld+%lld)",
                             i, (long long)out, (long long)in, (long long)ks[i],
                             (long long)st[i], (long long)dl[i], (long long)pb, (long long)pe);
        int j = 3 - nd + i;
        p->in[j] = in;
        p->k[j] = ks[i];
        p->s[j] = st[i];
        p->d[j] = dl[i];
        p->pb[j] = pb;
        p->pe[j] = pe;
        p->out[j] = out;
    }
    for (int j = 0; j < 3 - nd; j++) {
        p->in[j] = p->k[j] = p->s[j] = p->d[j] = p->out[j] = 1;
        p->pb[j] = p->pe[j] = 0;
    }
    p->in_sp = (size_t)(p->in[0] * p->in[1] * p->in[2]);
    p->out_sp = (size_t)(p->out[0] * p->out[1] * p->out[2]);
    p->kprod = (size_t)(p->k[0] * p->k[1] * p->k[2]);
    return TI_OK;
}

/* Sets the output shape [N, M, out...] after checking the bias. */
TI__PRIVATE ti_status ti__conv_set_out(ti__kctx *k, const ti__convp *p, const ti_tensor *bias,
                                       ti_dtype dt) {
    if (bias != NULL && (bias->rank != 1 || bias->shape[0] != p->m))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "bias has %lld elements (rank %d), expected %lld",
                         (long long)(bias->rank == 1 ? bias->shape[0] : (int64_t)ti__numel(bias)),
                         bias->rank, (long long)p->m);
    int64_t dims[5];
    dims[0] = p->n;
    dims[1] = p->m;
    for (int i = 0; i < p->nd; i++) dims[2 + i] = p->out[3 - p->nd + i];
    if (!ti__set_shape(k->out[0], dt, p->nd + 2, dims))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid output shape");
    return TI_OK;
}

TI__PRIVATE int ti__conv_float_ok(ti_dtype t) {
    return t == TI_DTYPE_F32 || t == TI_DTYPE_F64 || t == TI_DTYPE_F16 || t == TI_DTYPE_BF16;
}

TI__PRIVATE int ti__conv_shape_common(ti__kctx *k, int transpose) {
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    const ti_tensor *x = k->in[0], *w = k->in[1], *b = k->n_in > 2 ? k->in[2] : NULL;
    if (!ti__conv_float_ok(x->dtype))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "dtype %s is not supported",
                         ti_dtype_name(x->dtype));
    if (w->dtype != x->dtype || (b != NULL && b->dtype != x->dtype))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "input %s, weight %s and bias dtypes differ",
                         ti_dtype_name(x->dtype), ti_dtype_name(w->dtype));
    ti__convp p;
    ti_status e = ti__conv_params(k, transpose, &p);
    if (e != TI_OK) return e;
    return ti__conv_set_out(k, &p, b, x->dtype);
}

TI__PRIVATE int ti__conv_shape(ti__kctx *k) {
    return ti__conv_shape_common(k, 0);
}
TI__PRIVATE int ti__convtr_shape(ti__kctx *k) {
    return ti__conv_shape_common(k, 1);
}

/* Which float32 path a Conv takes: direct for depthwise-like groups (GEMM rows < 4),
 * a plain GEMM on X for 1x1 / stride 1 / no pads, im2col tiles otherwise. */
enum { TI__CONV_DIRECT, TI__CONV_1X1, TI__CONV_IM2COL };
TI__PRIVATE int ti__conv_path(const ti__convp *p) {
    if (p->mg < 4) return TI__CONV_DIRECT;
    int pointwise = p->kprod == 1;
    for (int j = 0; j < 3; j++)
        if (p->s[j] != 1 || p->pb[j] != 0 || p->pe[j] != 0) pointwise = 0;
    return pointwise ? TI__CONV_1X1 : TI__CONV_IM2COL;
}

/* Columns of one im2col / col2im tile, for rows elements per column. */
TI__PRIVATE size_t ti__conv_tile_cols(size_t rows, size_t cols) {
    size_t nt = TI__CONV_TILE_FLOATS / (rows ? rows : 1);
    if (nt < 64) nt = 64;
    if (nt >= cols) return cols;
    return nt > 16 ? nt / 16 * 16 : nt;
}

TI__PRIVATE size_t ti__conv_scratch_common(ti__kctx *k, int transpose) {
    ti__convp p;
    if (k->in[0]->dtype != TI_DTYPE_F32) return 0;
    ti_error *saved = k->err, tmp; /* shapes were checked: a failure here means no scratch */
    k->err = &tmp;
    ti_status e = ti__conv_params(k, transpose, &p);
    k->err = saved;
    if (e != TI_OK) return 0;
    size_t rows, cols;
    if (!transpose) {
        if (ti__conv_path(&p) != TI__CONV_IM2COL) return 0;
        rows = (size_t)p.cg * p.kprod;
        cols = p.out_sp;
    } else {
        rows = (size_t)p.mg * p.kprod;
        cols = p.in_sp;
    }
    return rows * ti__conv_tile_cols(rows, cols) * sizeof(float);
}
TI__PRIVATE size_t ti__conv_scratch(ti__kctx *k) {
    return ti__conv_scratch_common(k, 0);
}
TI__PRIVATE size_t ti__convtr_scratch(ti__kctx *k) {
    return ti__conv_scratch_common(k, 1);
}

/* Output positions o in [lo, hi) of one axis where i = o*s - pad + kk*d is inside [0, n). */
TI__PRIVATE void ti__conv_valid(int64_t n, int64_t s, int64_t pad, int64_t kk, int64_t d,
                                int64_t nout, int64_t *lo, int64_t *hi) {
    int64_t off = kk * d - pad; /* i = o*s + off */
    int64_t a = off >= 0 ? 0 : (-off + s - 1) / s;
    int64_t b = n - off <= 0 ? 0 : (n - off - 1) / s + 1;
    *lo = TI__MIN(a, nout);
    *hi = TI__MAX(*lo, TI__MIN(b, nout));
}

/* ---- float32 Conv -------------------------------------------------------------------- */

typedef struct ti__conv_job {
    const ti__convp *p;
    const float *x, *w, *b;
    float *y, *col;
    size_t c0, nt; /* tile: output (or input, for ConvTranspose) positions c0 .. c0+nt */
    int act;
    float act_a, act_b;
} ti__conv_job;

/* im2col rows [begin, end) of the tile: row r = (ic, kd, kh, kw) of the group's input x. */
TI__PRIVATE void ti__conv_im2col(void *ctx, size_t begin, size_t end) {
    const ti__conv_job *j = (const ti__conv_job *)ctx;
    const ti__convp *p = j->p;
    size_t ow_n = (size_t)p->out[2], oh_n = (size_t)p->out[1];
    for (size_t r = begin; r < end; r++) {
        size_t kw = r % (size_t)p->k[2], kh = r / (size_t)p->k[2] % (size_t)p->k[1];
        size_t kd = r / (size_t)(p->k[2] * p->k[1]) % (size_t)p->k[0], ic = r / p->kprod;
        const float *xc = j->x + ic * p->in_sp;
        int64_t wlo, whi;
        ti__conv_valid(p->in[2], p->s[2], p->pb[2], (int64_t)kw, p->d[2], p->out[2], &wlo, &whi);
        float *dst = j->col + r * j->nt;
        size_t c = j->c0, c1 = j->c0 + j->nt;
        while (c < c1) { /* one segment per output row */
            size_t ow = c % ow_n, oh = c / ow_n % oh_n, od = c / (ow_n * oh_n);
            size_t seg = TI__MIN(ow_n - ow, c1 - c);
            int64_t id = (int64_t)od * p->s[0] - p->pb[0] + (int64_t)kd * p->d[0];
            int64_t ih = (int64_t)oh * p->s[1] - p->pb[1] + (int64_t)kh * p->d[1];
            if (id < 0 || id >= p->in[0] || ih < 0 || ih >= p->in[1]) {
                for (size_t t = 0; t < seg; t++) dst[t] = 0.0f;
            } else {
                const float *src = xc + ((size_t)id * (size_t)p->in[1] + (size_t)ih) *
                                            (size_t)p->in[2];
                int64_t sw = p->s[2], off = (int64_t)kw * p->d[2] - p->pb[2];
                for (size_t t = 0; t < seg; t++) {
                    int64_t o = (int64_t)(ow + t);
                    dst[t] = (o >= wlo && o < whi) ? src[o * sw + off] : 0.0f;
                }
            }
            dst += seg;
            c += seg;
        }
    }
}

/* Adds the bias and applies the fused activation on planes [begin, end) of y (n*M planes). */
TI__PRIVATE void ti__conv_bias_act(void *ctx, size_t begin, size_t end) {
    const ti__conv_job *j = (const ti__conv_job *)ctx;
    size_t sp = j->p->out_sp, m = (size_t)j->p->m;
    for (size_t pl = begin; pl < end; pl++) {
        float *y = j->y + pl * sp, bv = j->b != NULL ? j->b[pl % m] : 0.0f;
        if (j->act == TI__ACT_NONE) {
            if (bv != 0.0f)
                for (size_t i = 0; i < sp; i++) y[i] += bv;
        } else {
            for (size_t i = 0; i < sp; i++)
                y[i] = ti__act_apply(j->act, j->act_a, j->act_b, y[i] + bv);
        }
    }
}

/* Direct convolution of planes [begin, end) (n*M output planes): for each weight tap,
 * a multiply-add of an input row segment into an output row. */
TI__PRIVATE void ti__conv_direct(void *ctx, size_t begin, size_t end) {
    const ti__conv_job *j = (const ti__conv_job *)ctx;
    const ti__convp *p = j->p;
    size_t ow_n = (size_t)p->out[2];
    for (size_t pl = begin; pl < end; pl++) {
        size_t n = pl / (size_t)p->m, m = pl % (size_t)p->m, g = m / (size_t)p->mg;
        float *y = j->y + pl * p->out_sp;
        for (size_t i = 0; i < p->out_sp; i++) y[i] = 0.0f;
        for (size_t ic = 0; ic < (size_t)p->cg; ic++) {
            const float *xc = j->x + (n * (size_t)p->c + g * (size_t)p->cg + ic) * p->in_sp;
            const float *wk = j->w + (m * (size_t)p->cg + ic) * p->kprod;
            for (int64_t kd = 0; kd < p->k[0]; kd++)
                for (int64_t kh = 0; kh < p->k[1]; kh++)
                    for (int64_t kw = 0; kw < p->k[2]; kw++) {
                        float wv = wk[(kd * p->k[1] + kh) * p->k[2] + kw];
                        int64_t dlo, dhi, hlo, hhi, wlo, whi;
                        ti__conv_valid(p->in[0], p->s[0], p->pb[0], kd, p->d[0], p->out[0],
                                       &dlo, &dhi);
                        ti__conv_valid(p->in[1], p->s[1], p->pb[1], kh, p->d[1], p->out[1],
                                       &hlo, &hhi);
                        ti__conv_valid(p->in[2], p->s[2], p->pb[2], kw, p->d[2], p->out[2],
                                       &wlo, &whi);
                        int64_t sw = p->s[2], woff = kw * p->d[2] - p->pb[2];
                        for (int64_t od = dlo; od < dhi; od++) {
                            int64_t id = od * p->s[0] - p->pb[0] + kd * p->d[0];
                            for (int64_t oh = hlo; oh < hhi; oh++) {
                                int64_t ih = oh * p->s[1] - p->pb[1] + kh * p->d[1];
                                const float *src = xc + ((size_t)id * (size_t)p->in[1] +
                                                         (size_t)ih) * (size_t)p->in[2];
                                float *dst =
                                    y + ((size_t)od * (size_t)p->out[1] + (size_t)oh) * ow_n;
                                if (sw == 1) {
                                    const float *s1 = src + woff;
                                    for (int64_t ow = wlo; ow < whi; ow++) dst[ow] += wv * s1[ow];
                                } else {
                                    for (int64_t ow = wlo; ow < whi; ow++)
                                        dst[ow] += wv * src[ow * sw + woff];
                                }
                            }
                        }
                    }
        }
    }
    ti__conv_bias_act(ctx, begin, end);
}

TI__PRIVATE ti_status ti__conv_run_f32(ti__kctx *k, const ti__convp *p) {
    ti__conv_job j;
    memset(&j, 0, sizeof j);
    j.p = p;
    j.x = (const float *)k->in[0]->data;
    j.w = (const float *)k->in[1]->data;
    j.b = k->n_in > 2 && k->in[2] != NULL ? (const float *)k->in[2]->data : NULL;
    j.y = (float *)k->out[0]->data;
    j.act = k->node->act;
    j.act_a = k->node->act_a;
    j.act_b = k->node->act_b;
    size_t planes = (size_t)(p->n * p->m), kdim = (size_t)p->cg * p->kprod;
    int path = ti__conv_path(p);
    if (path == TI__CONV_DIRECT || kdim == 0) { /* kdim 0 (no input channels): bias only */
        size_t work = p->out_sp * kdim;
        ti__parallel_for(k->tp, planes, work > 65536 ? 1 : 65536 / (work + 1) + 1,
                         ti__conv_direct, &j);
        return TI_OK;
    }
    size_t mg = (size_t)p->mg, cg = (size_t)p->cg;
    for (size_t n = 0; n < (size_t)p->n; n++)
        for (size_t g = 0; g < (size_t)p->group; g++) {
            const float *x = j.x + (n * (size_t)p->c + g * cg) * p->in_sp;
            const float *w = j.w + g * mg * kdim;
            float *y = j.y + (n * (size_t)p->m + g * mg) * p->out_sp;
            if (path == TI__CONV_1X1) {
                ti__sgemm_ref(0, 0, mg, p->out_sp, cg, 1.0f, w, cg, x, p->in_sp, 0.0f, y,
                              p->out_sp, k->tp);
                continue;
            }
            size_t nt = ti__conv_tile_cols(kdim, p->out_sp);
            if (nt * kdim * sizeof(float) > k->scratch_bytes || k->scratch == NULL)
                nt = k->scratch_bytes / (kdim * sizeof(float));
            if (nt == 0)
                return ti__kfail(k, TI_ERR_INVALID_ARGUMENT,
                                 "scratch of %zu bytes is too small for one im2col column",
                                 k->scratch_bytes);
            j.x = x;
            j.col = (float *)k->scratch;
            for (size_t c0 = 0; c0 < p->out_sp; c0 += nt) {
                j.c0 = c0;
                j.nt = TI__MIN(nt, p->out_sp - c0);
                ti__parallel_for(k->tp, kdim, TI__MAX((size_t)1, 16384 / j.nt), ti__conv_im2col,
                                 &j);
                ti__sgemm_ref(0, 0, mg, j.nt, kdim, 1.0f, w, kdim, j.col, j.nt, 0.0f, y + c0,
                              p->out_sp, k->tp);
            }
            j.x = (const float *)k->in[0]->data;
        }
    if (j.b != NULL || j.act != TI__ACT_NONE)
        ti__parallel_for(k->tp, planes, TI__MAX((size_t)1, 65536 / (p->out_sp + 1)),
                         ti__conv_bias_act, &j);
    return TI_OK;
}

/* Any float dtype, one output element at a time in double. Slow; for rare dtypes. */
TI__PRIVATE void ti__conv_generic(const ti__kctx *k, const ti__convp *p) {
    const ti_tensor *x = k->in[0], *w = k->in[1], *b = k->n_in > 2 ? k->in[2] : NULL;
    ti_tensor *y = k->out[0];
    size_t o = 0;
    for (int64_t n = 0; n < p->n; n++)
        for (int64_t m = 0; m < p->m; m++) {
            int64_t g = m / p->mg;
            for (int64_t od = 0; od < p->out[0]; od++)
                for (int64_t oh = 0; oh < p->out[1]; oh++)
                    for (int64_t ow = 0; ow < p->out[2]; ow++, o++) {
                        double s = b != NULL ? ti__get_f64(b, (size_t)m) : 0.0;
                        for (int64_t ic = 0; ic < p->cg; ic++)
                            for (int64_t kd = 0; kd < p->k[0]; kd++) {
                                int64_t id = od * p->s[0] - p->pb[0] + kd * p->d[0];
                                if (id < 0 || id >= p->in[0]) continue;
                                for (int64_t kh = 0; kh < p->k[1]; kh++) {
                                    int64_t ih = oh * p->s[1] - p->pb[1] + kh * p->d[1];
                                    if (ih < 0 || ih >= p->in[1]) continue;
                                    for (int64_t kw = 0; kw < p->k[2]; kw++) {
                                        int64_t iw = ow * p->s[2] - p->pb[2] + kw * p->d[2];
                                        if (iw < 0 || iw >= p->in[2]) continue;
                                        size_t xi = (size_t)(n * p->c + g * p->cg + ic) *
                                                        p->in_sp +
                                                    (size_t)((id * p->in[1] + ih) * p->in[2] + iw);
                                        size_t wi = (size_t)(m * p->cg + ic) * p->kprod +
                                                    (size_t)((kd * p->k[1] + kh) * p->k[2] + kw);
                                        s += ti__get_f64(x, xi) * ti__get_f64(w, wi);
                                    }
                                }
                            }
                        if (k->node->act != TI__ACT_NONE)
                            s = ti__act_apply(k->node->act, k->node->act_a, k->node->act_b,
                                              (float)s);
                        ti__set_f64(y, o, s);
                    }
        }
}

TI__PRIVATE ti_status ti__conv_run(ti__kctx *k) {
    ti__convp p;
    ti_status e = ti__conv_params(k, 0, &p);
    if (e != TI_OK) return e;
    if (k->in[0]->dtype == TI_DTYPE_F32) return ti__conv_run_f32(k, &p);
    ti__conv_generic(k, &p);
    return TI_OK;
}

/* ---- ConvTranspose ------------------------------------------------------------------- */

/* col2im: adds rows of the tile for output channels [begin, end) of the group into y.
 * Row r = (m, kd, kh, kw); column = input position c0 + t. */
TI__PRIVATE void ti__convtr_col2im(void *ctx, size_t begin, size_t end) {
    const ti__conv_job *j = (const ti__conv_job *)ctx;
    const ti__convp *p = j->p;
    size_t iw_n = (size_t)p->in[2], ih_n = (size_t)p->in[1];
    for (size_t m = begin; m < end; m++) {
        float *ym = j->y + m * p->out_sp;
        for (size_t kr = 0; kr < p->kprod; kr++) {
            int64_t kw = (int64_t)(kr % (size_t)p->k[2]);
            int64_t kh = (int64_t)(kr / (size_t)p->k[2] % (size_t)p->k[1]);
            int64_t kd = (int64_t)(kr / (size_t)(p->k[2] * p->k[1]));
            /* input positions whose output o = i*s - pad + k*d lands inside [0, out) */
            int64_t wlo, whi, woff = kw * p->d[2] - p->pb[2];
            ti__conv_valid(p->out[2], p->s[2], p->pb[2], kw, p->d[2], p->in[2], &wlo, &whi);
            const float *src = j->col + (m * p->kprod + kr) * j->nt;
            size_t c = j->c0, c1 = j->c0 + j->nt;
            while (c < c1) {
                size_t iw = c % iw_n, ih = c / iw_n % ih_n, id = c / (iw_n * ih_n);
                size_t seg = TI__MIN(iw_n - iw, c1 - c);
                int64_t od = (int64_t)id * p->s[0] - p->pb[0] + kd * p->d[0];
                int64_t oh = (int64_t)ih * p->s[1] - p->pb[1] + kh * p->d[1];
                if (od >= 0 && od < p->out[0] && oh >= 0 && oh < p->out[1]) {
                    float *dst = ym + ((size_t)od * (size_t)p->out[1] + (size_t)oh) *
                                          (size_t)p->out[2];
                    int64_t lo = TI__MAX(wlo, (int64_t)iw), hi = TI__MIN(whi, (int64_t)(iw + seg));
                    for (int64_t i = lo; i < hi; i++)
                        dst[i * p->s[2] + woff] += src[(size_t)i - iw];
                }
                src += seg;
                c += seg;
            }
        }
    }
}

/* Fills planes [begin, end) of y with the bias (or zero). */
TI__PRIVATE void ti__convtr_fill(void *ctx, size_t begin, size_t end) {
    const ti__conv_job *j = (const ti__conv_job *)ctx;
    size_t sp = j->p->out_sp, m = (size_t)j->p->m;
    for (size_t pl = begin; pl < end; pl++) {
        float bv = j->b != NULL ? j->b[pl % m] : 0.0f, *y = j->y + pl * sp;
        for (size_t i = 0; i < sp; i++) y[i] = bv;
    }
}

TI__PRIVATE ti_status ti__convtr_run_f32(ti__kctx *k, const ti__convp *p) {
    ti__conv_job j;
    memset(&j, 0, sizeof j);
    j.p = p;
    const float *x = (const float *)k->in[0]->data, *w = (const float *)k->in[1]->data;
    j.b = k->n_in > 2 && k->in[2] != NULL ? (const float *)k->in[2]->data : NULL;
    float *y = (float *)k->out[0]->data;
    j.y = y;
    j.act = k->node->act;
    j.act_a = k->node->act_a;
    j.act_b = k->node->act_b;
    size_t planes = (size_t)(p->n * p->m), mg = (size_t)p->mg, cg = (size_t)p->cg;
    size_t rows = mg * p->kprod, grain = TI__MAX((size_t)1, 65536 / (p->out_sp + 1));
    ti__parallel_for(k->tp, planes, grain, ti__convtr_fill, &j);
    /* no input channels: the output is the bias alone */
    size_t nt = rows == 0 || cg == 0 ? 0 : ti__conv_tile_cols(rows, p->in_sp);
    if (nt != 0 && (nt * rows * sizeof(float) > k->scratch_bytes || k->scratch == NULL)) {
        nt = k->scratch_bytes / (rows * sizeof(float));
        if (nt == 0)
            return ti__kfail(k, TI_ERR_INVALID_ARGUMENT,
                             "scratch of %zu bytes is too small for one col2im column",
                             k->scratch_bytes);
    }
    j.col = (float *)k->scratch;
    for (size_t n = 0; n < (size_t)p->n && nt != 0; n++)
        for (size_t g = 0; g < (size_t)p->group; g++) {
            const float *xg = x + (n * (size_t)p->c + g * cg) * p->in_sp;
            const float *wg = w + g * cg * rows; /* cg x rows, row-major */
            j.y = y + (n * (size_t)p->m + g * mg) * p->out_sp;
            for (size_t c0 = 0; c0 < p->in_sp; c0 += nt) {
                j.c0 = c0;
                j.nt = TI__MIN(nt, p->in_sp - c0);
                /* col (rows x nt) = W_g^T (rows x cg) * X_g (cg x nt) */
                ti__sgemm_ref(1, 0, rows, j.nt, cg, 1.0f, wg, rows, xg + c0, p->in_sp, 0.0f,
                              j.col, j.nt, k->tp);
                ti__parallel_for(k->tp, mg, 1, ti__convtr_col2im, &j);
            }
        }
    if (j.act != TI__ACT_NONE) {
        j.y = y;
        j.b = NULL;
        ti__parallel_for(k->tp, planes, grain, ti__conv_bias_act, &j);
    }
    return TI_OK;
}

TI__PRIVATE void ti__convtr_generic(const ti__kctx *k, const ti__convp *p) {
    const ti_tensor *x = k->in[0], *w = k->in[1], *b = k->n_in > 2 ? k->in[2] : NULL;
    ti_tensor *y = k->out[0];
    size_t total = ti__numel(y);
    for (size_t i = 0; i < total; i++)
        ti__set_f64(y, i, b != NULL ? ti__get_f64(b, i / p->out_sp % (size_t)p->m) : 0.0);
    /* y is written in its own dtype after each add: for float16 that rounds the partial
     * sums, which the tolerance of float16 tests allows. */
    for (int64_t n = 0; n < p->n; n++)
        for (int64_t c = 0; c < p->c; c++) {
            int64_t g = c / p->cg;
            for (size_t i = 0; i < p->in_sp; i++) {
                int64_t iw = (int64_t)(i % (size_t)p->in[2]);
                int64_t ih = (int64_t)(i / (size_t)p->in[2] % (size_t)p->in[1]);
                int64_t id = (int64_t)(i / (size_t)(p->in[2] * p->in[1]));
                double xv = ti__get_f64(x, (size_t)(n * p->c + c) * p->in_sp + i);
                for (int64_t mm = 0; mm < p->mg; mm++)
                    for (size_t kr = 0; kr < p->kprod; kr++) {
                        int64_t kw = (int64_t)(kr % (size_t)p->k[2]);
                        int64_t kh = (int64_t)(kr / (size_t)p->k[2] % (size_t)p->k[1]);
                        int64_t kd = (int64_t)(kr / (size_t)(p->k[2] * p->k[1]));
                        int64_t od = id * p->s[0] - p->pb[0] + kd * p->d[0];
                        int64_t oh = ih * p->s[1] - p->pb[1] + kh * p->d[1];
                        int64_t ow = iw * p->s[2] - p->pb[2] + kw * p->d[2];
                        if (od < 0 || od >= p->out[0] || oh < 0 || oh >= p->out[1] || ow < 0 ||
                            ow >= p->out[2])
                            continue;
                        size_t yi = (size_t)(n * p->m + g * p->mg + mm) * p->out_sp +
                                    (size_t)((od * p->out[1] + oh) * p->out[2] + ow);
                        double wv = ti__get_f64(w, ((size_t)(c * p->mg + mm)) * p->kprod + kr);
                        ti__set_f64(y, yi, ti__get_f64(y, yi) + xv * wv);
                    }
            }
        }
    if (k->node->act != TI__ACT_NONE)
        for (size_t i = 0; i < total; i++)
            ti__set_f64(y, i, ti__act_apply(k->node->act, k->node->act_a, k->node->act_b,
                                            (float)ti__get_f64(y, i)));
}

TI__PRIVATE ti_status ti__convtr_run(ti__kctx *k) {
    ti__convp p;
    ti_status e = ti__conv_params(k, 1, &p);
    if (e != TI_OK) return e;
    if (k->in[0]->dtype == TI_DTYPE_F32) return ti__convtr_run_f32(k, &p);
    ti__convtr_generic(k, &p);
    return TI_OK;
}

/* ---- ConvInteger --------------------------------------------------------------------- */

TI__PRIVATE int ti__convint_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    const ti_tensor *x = k->in[0], *w = k->in[1];
    const ti_tensor *xz = k->n_in > 2 ? k->in[2] : NULL, *wz = k->n_in > 3 ? k->in[3] : NULL;
    if ((x->dtype != TI_DTYPE_U8 && x->dtype != TI_DTYPE_I8) ||
        (w->dtype != TI_DTYPE_U8 && w->dtype != TI_DTYPE_I8))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "inputs must be uint8 or int8, got %s and %s",
                         ti_dtype_name(x->dtype), ti_dtype_name(w->dtype));
    if ((xz != NULL && xz->dtype != x->dtype) || (wz != NULL && wz->dtype != w->dtype))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "zero point dtype differs from its input");
    ti__convp p;
    ti_status e = ti__conv_params(k, 0, &p);
    if (e != TI_OK) return e;
    if (xz != NULL && ti__numel(xz) != 1)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "x_zero_point must be a scalar, has %zu "
                         "elements", ti__numel(xz));
    if (wz != NULL && ti__numel(wz) != 1 && (int64_t)ti__numel(wz) != p.m)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "w_zero_point has %zu elements, expected 1 or "
                         "%lld", ti__numel(wz), (long long)p.m);
    return ti__conv_set_out(k, &p, NULL, TI_DTYPE_I32);
}

TI__PRIVATE ti_status ti__convint_run(ti__kctx *k) {
    const ti_tensor *x = k->in[0], *w = k->in[1];
    const ti_tensor *xz = k->n_in > 2 ? k->in[2] : NULL, *wz = k->n_in > 3 ? k->in[3] : NULL;
    ti__convp p;
    ti_status e = ti__conv_params(k, 0, &p);
    if (e != TI_OK) return e;
    int32_t zx = xz != NULL ? (int32_t)ti__get_i64(xz, 0) : 0;
    uint32_t *y = (uint32_t *)k->out[0]->data; /* wrapping 32-bit accumulation */
    size_t o = 0;
    for (int64_t n = 0; n < p.n; n++)
        for (int64_t m = 0; m < p.m; m++) {
            int64_t g = m / p.mg;
            size_t zi = wz != NULL && ti__numel(wz) > 1 ? (size_t)m : 0;
            int32_t zw = wz == NULL ? 0 : (int32_t)ti__get_i64(wz, zi);
            for (int64_t od = 0; od < p.out[0]; od++)
                for (int64_t oh = 0; oh < p.out[1]; oh++)
                    for (int64_t ow = 0; ow < p.out[2]; ow++, o++) {
                        uint32_t s = 0; /* padding holds x's zero point: adds nothing */
                        for (int64_t ic = 0; ic < p.cg; ic++)
                            for (size_t kr = 0; kr < p.kprod; kr++) {
                                int64_t kw = (int64_t)(kr % (size_t)p.k[2]);
                                int64_t kh = (int64_t)(kr / (size_t)p.k[2] % (size_t)p.k[1]);
                                int64_t kd = (int64_t)(kr / (size_t)(p.k[2] * p.k[1]));
                                int64_t id = od * p.s[0] - p.pb[0] + kd * p.d[0];
                                int64_t ih = oh * p.s[1] - p.pb[1] + kh * p.d[1];
                                int64_t iw = ow * p.s[2] - p.pb[2] + kw * p.d[2];
                                if (id < 0 || id >= p.in[0] || ih < 0 || ih >= p.in[1] ||
                                    iw < 0 || iw >= p.in[2])
                                    continue;
                                size_t xi = (size_t)(n * p.c + g * p.cg + ic) * p.in_sp +
                                            (size_t)((id * p.in[1] + ih) * p.in[2] + iw);
                                size_t wi = (size_t)(m * p.cg + ic) * p.kprod + kr;
                                int32_t xv = (int32_t)ti__get_i64(x, xi) - zx;
                                int32_t wv = (int32_t)ti__get_i64(w, wi) - zw;
                                s += (uint32_t)xv * (uint32_t)wv;
                            }
                        y[o] = s;
                    }
        }
    return TI_OK;
}

TI__PRIVATE const ti__op ti__ops_conv[] = {
    {"Conv", ti__conv_shape, ti__conv_run, ti__conv_scratch, 0},
    {"ConvTranspose", ti__convtr_shape, ti__convtr_run, ti__convtr_scratch, 0},
    {"ConvInteger", ti__convint_shape, ti__convint_run, NULL, 0},
    {NULL, NULL, NULL, NULL, 0}
};
/* ==== end src/cpu/conv.c ==================================================================== */

/* ==== begin src/cpu/einsum.c ================================================================ */
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
/* ==== end src/cpu/einsum.c ================================================================== */

/* ==== begin src/cpu/gemm.c ================================================================== */
/* Matrix products: Gemm, MatMul (numpy semantics: 1-D promotion, batch broadcast) and
 * MatMulInteger, plus the blocked float32 GEMM (ti__sgemm_ref) that conv.c also calls.
 * float32 runs the blocked GEMM; other dtypes run a plain generic loop. Relies on
 * tensor.c element access and the thread pool. Must not allocate: GEMM packing buffers
 * live on the stack (about 35 KiB, so small worker-thread stacks suffice). */

/* Register tile of the micro-kernel (MR rows x NR columns of C held in accumulators) and
 * the cache blocks: a KC x NC panel of B is packed once and reused for every MR rows. */
#define TI__SG_MR 4 /* ti__sgemm_micro is written for 4 */
#define TI__SG_NR 16
#define TI__SG_KC 128
#define TI__SG_NC 64

/* acc[MR][NR] = ap(kc x MR, p-major) * bp(kc x NR, p-major). Written as MR separate
 * accumulator rows with the column loop innermost: the form gcc and clang both turn into
 * broadcast + vector multiply-add at -O2 (a 2-D accumulator array is not vectorised well). */
TI__PRIVATE void ti__sgemm_micro(size_t kc, const float *ap, const float *bp, float *acc) {
    float c0[TI__SG_NR], c1[TI__SG_NR], c2[TI__SG_NR], c3[TI__SG_NR];
    for (int j = 0; j < TI__SG_NR; j++) c0[j] = c1[j] = c2[j] = c3[j] = 0.0f;
    for (size_t p = 0; p < kc; p++) {
        const float *b = bp + p * TI__SG_NR, *a = ap + p * TI__SG_MR;
        float a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3];
        for (int j = 0; j < TI__SG_NR; j++) {
            float bj = b[j];
            c0[j] += a0 * bj;
            c1[j] += a1 * bj;
            c2[j] += a2 * bj;
            c3[j] += a3 * bj;
        }
    }
    for (int j = 0; j < TI__SG_NR; j++) {
        acc[j] = c0[j];
        acc[TI__SG_NR + j] = c1[j];
        acc[2 * TI__SG_NR + j] = c2[j];
        acc[3 * TI__SG_NR + j] = c3[j];
    }
}

typedef struct ti__sgemm_job {
    int trans_a, trans_b;
    size_t m, n, k;
    float alpha, beta;
    const float *a, *b;
    size_t lda, ldb, ldc;
    float *c;
    size_t mt, nt;    /* task tile: rows x columns of C */
    size_t n_tiles_n; /* tiles along N */
} ti__sgemm_job;

/* C[m0:m1, n0:n1] of the job, with stack-packed panels. */
TI__PRIVATE void ti__sgemm_tile(const ti__sgemm_job *j, size_t m0, size_t m1, size_t n0,
                                size_t n1) {
    float bp[TI__SG_KC * TI__SG_NC]; /* B panel: NC/NR panels of kc x NR */
    float ap[TI__SG_KC * TI__SG_MR]; /* A panel: kc x MR, alpha applied */
    float acc[TI__SG_MR * TI__SG_NR];
    const float *A = j->a, *B = j->b;
    for (size_t jc = n0; jc < n1; jc += TI__SG_NC) {
        size_t nc = TI__MIN((size_t)TI__SG_NC, n1 - jc);
        for (size_t pc = 0; pc < j->k || pc == 0; pc += TI__SG_KC) {
            size_t kc = TI__MIN((size_t)TI__SG_KC, j->k - pc);
            /* pack B[pc:pc+kc, jc:jc+nc]; columns past nc are zero */
            for (size_t jr = 0; jr < nc; jr += TI__SG_NR) {
                float *dst = bp + jr * kc;
                size_t w = TI__MIN((size_t)TI__SG_NR, nc - jr);
                for (size_t p = 0; p < kc; p++) {
                    float *d = dst + p * TI__SG_NR;
                    size_t q = 0;
                    if (!j->trans_b) {
                        const float *s = B + (pc + p) * j->ldb + jc + jr;
                        for (; q < w; q++) d[q] = s[q];
                    } else {
                        const float *s = B + (jc + jr) * j->ldb + pc + p;
                        for (; q < w; q++) d[q] = s[q * j->ldb];
                    }
                    for (; q < TI__SG_NR; q++) d[q] = 0.0f;
                }
            }
            int first = pc == 0;
            for (size_t ir = m0; ir < m1; ir += TI__SG_MR) {
                size_t h = TI__MIN((size_t)TI__SG_MR, m1 - ir);
                /* pack alpha * A[ir:ir+h, pc:pc+kc] as kc x MR */
                for (size_t p = 0; p < kc; p++) {
                    size_t r = 0;
                    if (!j->trans_a) {
                        const float *s = A + ir * j->lda + pc + p;
                        for (; r < h; r++) ap[p * TI__SG_MR + r] = j->alpha * s[r * j->lda];
                    } else {
                        const float *s = A + (pc + p) * j->lda + ir;
                        for (; r < h; r++) ap[p * TI__SG_MR + r] = j->alpha * s[r];
                    }
                    for (; r < TI__SG_MR; r++) ap[p * TI__SG_MR + r] = 0.0f;
                }
                for (size_t jr = 0; jr < nc; jr += TI__SG_NR) {
                    size_t w = TI__MIN((size_t)TI__SG_NR, nc - jr);
                    ti__sgemm_micro(kc, ap, bp + jr * kc, acc);
                    for (size_t r = 0; r < h; r++) {
                        float *cr = j->c + (ir + r) * j->ldc + jc + jr;
                        const float *ar = acc + r * TI__SG_NR;
                        if (!first) {
                            for (size_t q = 0; q < w; q++) cr[q] += ar[q];
                        } else if (j->beta == 0.0f) { /* C may hold garbage: never read it */
                            for (size_t q = 0; q < w; q++) cr[q] = ar[q];
                        } else if (j->beta == 1.0f) {
                            for (size_t q = 0; q < w; q++) cr[q] += ar[q];
                        } else {
                            for (size_t q = 0; q < w; q++) cr[q] = j->beta * cr[q] + ar[q];
                        }
                    }
                }
            }
            if (j->k == 0) break;
        }
    }
}

TI__PRIVATE void ti__sgemm_range(void *ctx, size_t begin, size_t end) {
    const ti__sgemm_job *j = (const ti__sgemm_job *)ctx;
    for (size_t t = begin; t < end; t++) {
        size_t tm = t / j->n_tiles_n, tn = t % j->n_tiles_n;
        size_t m0 = tm * j->mt, n0 = tn * j->nt;
        ti__sgemm_tile(j, m0, TI__MIN(m0 + j->mt, j->m), n0, TI__MIN(n0 + j->nt, j->n));
    }
}

/* Few rows (M < MR): one dot product or axpy per row, over a range of columns. */
TI__PRIVATE void ti__sgemm_small_m(void *ctx, size_t begin, size_t end) {
    const ti__sgemm_job *j = (const ti__sgemm_job *)ctx;
    size_t n0 = begin * j->nt, n1 = TI__MIN(end * j->nt, j->n);
    for (size_t i = 0; i < j->m; i++) {
        float *c = j->c + i * j->ldc;
        for (size_t q = n0; q < n1; q++)
            c[q] = j->beta == 0.0f ? 0.0f : (j->beta == 1.0f ? c[q] : j->beta * c[q]);
        if (j->trans_b) { /* B is N x K: contiguous dots */
            for (size_t q = n0; q < n1; q++) {
                const float *b = j->b + q * j->ldb;
                float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
                size_t p = 0;
                if (!j->trans_a) {
                    const float *a = j->a + i * j->lda;
                    for (; p + 4 <= j->k; p += 4) {
                        s0 += a[p] * b[p];
                        s1 += a[p + 1] * b[p + 1];
                        s2 += a[p + 2] * b[p + 2];
                        s3 += a[p + 3] * b[p + 3];
                    }
                    for (; p < j->k; p++) s0 += a[p] * b[p];
                } else {
                    for (; p < j->k; p++) s0 += j->a[p * j->lda + i] * b[p];
                }
                c[q] += j->alpha * ((s0 + s1) + (s2 + s3));
            }
        } else { /* B is K x N: rows scaled by A[i, p] */
            for (size_t p = 0; p < j->k; p++) {
                float av = j->alpha * (j->trans_a ? j->a[p * j->lda + i] : j->a[i * j->lda + p]);
                const float *b = j->b + p * j->ldb;
                for (size_t q = n0; q < n1; q++) c[q] += av * b[q];
            }
        }
    }
}

/* C = alpha * op(A) * op(B) + beta * C, row-major; op(A) is M x K, op(B) K x N.
 * beta == 0 never reads C. Parallel over tiles of C when tp is not NULL. */
TI__PRIVATE void ti__sgemm_ref(int transA, int transB, size_t M, size_t N, size_t K, float alpha,
                               const float *A, size_t lda, const float *B, size_t ldb, float beta,
                               float *C, size_t ldc, ti__threadpool *tp) {
    if (M == 0 || N == 0) return;
    ti__sgemm_job j;
    j.trans_a = transA;
    j.trans_b = transB;
    j.m = M;
    j.n = N;
    j.k = K;
    j.alpha = alpha;
    j.beta = beta;
    j.a = A;
    j.b = B;
    j.lda = lda;
    j.ldb = ldb;
    j.ldc = ldc;
    j.c = C;
    size_t threads = (size_t)ti__threadpool_size(tp);
    size_t flops = M * N * (K + 1);
    if (M < TI__SG_MR) {
        j.nt = 256;
        size_t tiles = (N + j.nt - 1) / j.nt;
        ti__parallel_for(tp, tiles, flops < 65536 ? tiles : 1, ti__sgemm_small_m, &j);
        return;
    }
    /* tiles as large as possible while leaving about 4 per thread */
    j.mt = 128;
    j.nt = 512;
    for (;;) {
        size_t tiles = ((M + j.mt - 1) / j.mt) * ((N + j.nt - 1) / j.nt);
        if (tiles >= 4 * threads || (j.mt <= 16 && j.nt <= 64)) break;
        if (j.nt > 64 && (j.nt >= 4 * j.mt || j.mt <= 16)) j.nt /= 2;
        else j.mt /= 2;
    }
    j.n_tiles_n = (N + j.nt - 1) / j.nt;
    size_t tiles = ((M + j.mt - 1) / j.mt) * j.n_tiles_n;
    ti__parallel_for(tp, tiles, flops < 262144 ? tiles : 1, ti__sgemm_range, &j);
}

/* Applies the node's fused activation to n floats. */
TI__PRIVATE void ti__gemm_act(const ti__kctx *k, float *y, size_t n) {
    int act = k->node->act;
    if (act == TI__ACT_NONE) return;
    float a = k->node->act_a, b = k->node->act_b;
    for (size_t i = 0; i < n; i++) y[i] = ti__act_apply(act, a, b, y[i]);
}

TI__PRIVATE int ti__gemm_dtype_ok(ti_dtype t) {
    return t == TI_DTYPE_F32 || t == TI_DTYPE_F64 || t == TI_DTYPE_F16 || t == TI_DTYPE_BF16 ||
           t == TI_DTYPE_I32 || t == TI_DTYPE_I64 || t == TI_DTYPE_U32 || t == TI_DTYPE_U64;
}

/* ---- Gemm ---------------------------------------------------------------------------- */

/* C's broadcast strides onto [M, N] (0 along a broadcast axis); 0 if not broadcastable. */
TI__PRIVATE int ti__gemm_c_strides(const ti_tensor *c, int64_t m, int64_t n, size_t *sm,
                                   size_t *sn) {
    int64_t d0 = 1, d1 = 1;
    if (c->rank > 2) return 0;
    if (c->rank == 1) d1 = c->shape[0];
    if (c->rank == 2) {
        d0 = c->shape[0];
        d1 = c->shape[1];
    }
    if ((d0 != 1 && d0 != m) || (d1 != 1 && d1 != n)) return 0;
    *sn = d1 == 1 ? 0 : 1;
    *sm = d0 == 1 ? 0 : (size_t)d1;
    return 1;
}

TI__PRIVATE int ti__gemm_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    const ti_tensor *a = k->in[0], *b = k->in[1];
    const ti_tensor *c = k->n_in > 2 ? k->in[2] : NULL;
    if (!ti__gemm_dtype_ok(a->dtype))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "dtype %s is not supported",
                         ti_dtype_name(a->dtype));
    if (b->dtype != a->dtype || (c != NULL && c->dtype != a->dtype))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "inputs have different dtypes (%s, %s)",
                         ti_dtype_name(a->dtype), ti_dtype_name(b->dtype));
    if (a->rank != 2 || b->rank != 2)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "A and B must have 2 dims, got %d and %d",
                         a->rank, b->rank);
    int ta = ti__attr_i(k->node, "transA", 0) != 0, tb = ti__attr_i(k->node, "transB", 0) != 0;
    int64_t m = ta ? a->shape[1] : a->shape[0], ka = ta ? a->shape[0] : a->shape[1];
    int64_t kb = tb ? b->shape[1] : b->shape[0], n = tb ? b->shape[0] : b->shape[1];
    if (ka != kb)
        return ti__kfail(k, TI_ERR_BAD_MODEL,
                         "inner dimensions differ: A gives K=%lld, B gives K=%lld (transA=%d, "
                         "transB=%d)",
                         (long long)ka, (long long)kb, ta, tb);
    size_t sm, sn;
    if (c != NULL && !ti__gemm_c_strides(c, m, n, &sm, &sn))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "C (rank %d) does not broadcast to [%lld, %lld]",
                         c->rank, (long long)m, (long long)n);
    int64_t dims[2] = {m, n};
    if (!ti__set_shape(k->out[0], a->dtype, 2, dims))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid output shape");
    return TI_OK;
}

TI__PRIVATE ti_status ti__gemm_run(ti__kctx *k) {
    const ti_tensor *a = k->in[0], *b = k->in[1];
    const ti_tensor *c = k->n_in > 2 ? k->in[2] : NULL;
    ti_tensor *y = k->out[0];
    int ta = ti__attr_i(k->node, "transA", 0) != 0, tb = ti__attr_i(k->node, "transB", 0) != 0;
    float alpha = ti__attr_f(k->node, "alpha", 1.0f), beta = ti__attr_f(k->node, "beta", 1.0f);
    size_t m = (size_t)y->shape[0], n = (size_t)y->shape[1];
    size_t kk = (size_t)(ta ? a->shape[0] : a->shape[1]);
    size_t sm = 0, sn = 0;
    if (c != NULL && beta != 0.0f) ti__gemm_c_strides(c, (int64_t)m, (int64_t)n, &sm, &sn);
    else c = NULL;
    if (a->dtype == TI_DTYPE_F32) {
        float *yd = (float *)y->data;
        if (c != NULL) {
            const float *cd = (const float *)c->data;
            for (size_t i = 0; i < m; i++)
                for (size_t q = 0; q < n; q++) yd[i * n + q] = beta * cd[i * sm + q * sn];
        }
        ti__sgemm_ref(ta, tb, m, n, kk, alpha, (const float *)a->data, (size_t)a->shape[1],
                      (const float *)b->data, (size_t)b->shape[1], c != NULL ? 1.0f : 0.0f, yd,
                      n, k->tp);
        ti__gemm_act(k, yd, m * n);
        return TI_OK;
    }
    /* generic: double accumulation for floats, int64 (wrapping) for integers */
    size_t lda = (size_t)a->shape[1], ldb = (size_t)b->shape[1];
    int is_int = ti__dtype_is_int(a->dtype);
    for (size_t i = 0; i < m; i++)
        for (size_t q = 0; q < n; q++) {
            if (is_int) {
                uint64_t s = 0;
                for (size_t p = 0; p < kk; p++)
                    s += (uint64_t)ti__get_i64(a, ta ? p * lda + i : i * lda + p) *
                         (uint64_t)ti__get_i64(b, tb ? q * ldb + p : p * ldb + q);
                int64_t v = (int64_t)((uint64_t)(int64_t)alpha * s);
                if (c != NULL) v += (int64_t)beta * ti__get_i64(c, i * sm + q * sn);
                ti__set_i64(y, i * n + q, v);
            } else {
                double s = 0;
                for (size_t p = 0; p < kk; p++)
                    s += ti__get_f64(a, ta ? p * lda + i : i * lda + p) *
                         ti__get_f64(b, tb ? q * ldb + p : p * ldb + q);
                double v = alpha * s;
                if (c != NULL) v += beta * ti__get_f64(c, i * sm + q * sn);
                if (k->node->act != TI__ACT_NONE)
                    v = ti__act_apply(k->node->act, k->node->act_a, k->node->act_b, (float)v);
                ti__set_f64(y, i * n + q, v);
            }
        }
    return TI_OK;
}

/* ---- MatMul and MatMulInteger: numpy matmul shapes ----------------------------------- */

/* Shapes of a numpy matmul: a, b promoted to rank >= 2, broadcast batch dims. */
typedef struct ti__mm_shape {
    int64_t m, n, k;
    int batch_rank;
    int64_t batch[TI_MAX_DIMS];                 /* output batch dims */
    int64_t a_stride[TI_MAX_DIMS], b_stride[TI_MAX_DIMS]; /* in matrices; 0 when broadcast */
    size_t n_batch;
    int out_rank;
    int64_t out[TI_MAX_DIMS];
} ti__mm_shape;

TI__PRIVATE ti_status ti__mm_infer(ti__kctx *k, const ti_tensor *a, const ti_tensor *b,
                                   ti__mm_shape *s) {
    if (a->rank < 1 || b->rank < 1)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "inputs must have at least 1 dim, got %d and %d",
                         a->rank, b->rank);
    int64_t ad[TI_MAX_DIMS + 1], bd[TI_MAX_DIMS + 1];
    int ar = a->rank, br = b->rank;
    if (ar == 1) {
        ad[0] = 1;
        ad[1] = a->shape[0];
        ar = 2;
    } else {
        for (int i = 0; i < ar; i++) ad[i] = a->shape[i];
    }
    if (br == 1) {
        bd[0] = b->shape[0];
        bd[1] = 1;
        br = 2;
    } else {
        for (int i = 0; i < br; i++) bd[i] = b->shape[i];
    }
    s->m = ad[ar - 2];
    s->k = ad[ar - 1];
    s->n = bd[br - 1];
    if (bd[br - 2] != s->k)
        return ti__kfail(k, TI_ERR_BAD_MODEL,
                         "inner dimensions differ: A has K=%lld, B has K=%lld",
                         (long long)s->k, (long long)bd[br - 2]);
    int r;
    if (!ti__broadcast_shape(ar - 2, ad, br - 2, bd, &r, s->batch))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "batch dims of A (rank %d) and B (rank %d) do "
                         "not broadcast", a->rank, b->rank);
    s->batch_rank = r;
    /* strides in units of whole matrices, right-aligned */
    int64_t sa = 1, sb = 1;
    s->n_batch = 1;
    for (int i = r - 1; i >= 0; i--) {
        int ia = i - (r - (ar - 2)), ib = i - (r - (br - 2));
        int64_t da = ia >= 0 ? ad[ia] : 1, db = ib >= 0 ? bd[ib] : 1;
        s->a_stride[i] = da == 1 ? 0 : sa;
        s->b_stride[i] = db == 1 ? 0 : sb;
        sa *= da;
        sb *= db;
        s->n_batch *= (size_t)s->batch[i];
    }
    s->out_rank = 0;
    for (int i = 0; i < r; i++) s->out[s->out_rank++] = s->batch[i];
    if (a->rank > 1) s->out[s->out_rank++] = s->m;
    if (b->rank > 1) s->out[s->out_rank++] = s->n;
    if (s->out_rank > TI_MAX_DIMS)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "output rank %d exceeds %d", s->out_rank,
                         TI_MAX_DIMS);
    return TI_OK;
}

/* Offsets (in matrices) of A and B for output batch index t. */
TI__PRIVATE void ti__mm_offsets(const ti__mm_shape *s, size_t t, size_t *oa, size_t *ob) {
    size_t a = 0, b = 0;
    for (int i = s->batch_rank - 1; i >= 0; i--) {
        size_t d = (size_t)s->batch[i], idx = t % d;
        t /= d;
        a += idx * (size_t)s->a_stride[i];
        b += idx * (size_t)s->b_stride[i];
    }
    *oa = a;
    *ob = b;
}

TI__PRIVATE int ti__matmul_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    const ti_tensor *a = k->in[0], *b = k->in[1];
    if (!ti__gemm_dtype_ok(a->dtype))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "dtype %s is not supported",
                         ti_dtype_name(a->dtype));
    if (b->dtype != a->dtype)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "inputs have different dtypes (%s, %s)",
                         ti_dtype_name(a->dtype), ti_dtype_name(b->dtype));
    ti__mm_shape s;
    ti_status st = ti__mm_infer(k, a, b, &s);
    if (st != TI_OK) return st;
    if (!ti__set_shape(k->out[0], a->dtype, s.out_rank, s.out))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid output shape");
    /* a third input only comes from fusion (MatMul + Add): a float32 bias of length N */
    if (k->n_in > 2 && k->in[2] != NULL &&
        (a->dtype != TI_DTYPE_F32 || k->in[2]->dtype != TI_DTYPE_F32 ||
         ti__numel(k->in[2]) != (size_t)s.n))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "fused bias must be float32 with %lld elements",
                         (long long)s.n);
    return TI_OK;
}

typedef struct ti__mm_job {
    const ti__mm_shape *s;
    const float *a, *b;
    float *y;
} ti__mm_job;

/* A range of batch matrices, each with a serial GEMM. */
TI__PRIVATE void ti__matmul_batches(void *ctx, size_t begin, size_t end) {
    const ti__mm_job *j = (const ti__mm_job *)ctx;
    const ti__mm_shape *s = j->s;
    size_t mk = (size_t)(s->m * s->k), kn = (size_t)(s->k * s->n), mn = (size_t)(s->m * s->n);
    for (size_t t = begin; t < end; t++) {
        size_t oa, ob;
        ti__mm_offsets(s, t, &oa, &ob);
        ti__sgemm_ref(0, 0, (size_t)s->m, (size_t)s->n, (size_t)s->k, 1.0f, j->a + oa * mk,
                      (size_t)s->k, j->b + ob * kn, (size_t)s->n, 0.0f, j->y + t * mn,
                      (size_t)s->n, NULL);
    }
}

TI__PRIVATE ti_status ti__matmul_run(ti__kctx *k) {
    const ti_tensor *a = k->in[0], *b = k->in[1];
    ti_tensor *y = k->out[0];
    ti__mm_shape s;
    ti_status st = ti__mm_infer(k, a, b, &s);
    if (st != TI_OK) return st;
    size_t m = (size_t)s.m, n = (size_t)s.n, kk = (size_t)s.k;
    if (a->dtype == TI_DTYPE_F32) {
        const float *ad = (const float *)a->data, *bd = (const float *)b->data;
        float *yd = (float *)y->data;
        int b_shared = 1, a_full = 1; /* B one matrix for all; A not broadcast */
        for (int i = 0; i < s.batch_rank; i++) {
            if (s.b_stride[i] != 0 && s.batch[i] != 1) b_shared = 0;
            if (s.a_stride[i] == 0 && s.batch[i] != 1) a_full = 0;
        }
        if (b_shared && a_full) { /* fold the batch into M: one large GEMM */
            ti__sgemm_ref(0, 0, s.n_batch * m, n, kk, 1.0f, ad, kk, bd, n, 0.0f, yd, n, k->tp);
        } else {
            ti__mm_job j;
            j.s = &s;
            j.a = ad;
            j.b = bd;
            j.y = yd;
            size_t threads = (size_t)ti__threadpool_size(k->tp);
            if (s.n_batch >= 2 * threads) {
                ti__parallel_for(k->tp, s.n_batch, 1, ti__matmul_batches, &j);
            } else {
                for (size_t t = 0; t < s.n_batch; t++) {
                    size_t oa, ob;
                    ti__mm_offsets(&s, t, &oa, &ob);
                    ti__sgemm_ref(0, 0, m, n, kk, 1.0f, ad + oa * m * kk, kk, bd + ob * kk * n,
                                  n, 0.0f, yd + t * m * n, n, k->tp);
                }
            }
        }
        if (k->n_in > 2 && k->in[2] != NULL) { /* fused bias, one value per column */
            const float *bias = (const float *)k->in[2]->data;
            for (size_t r = 0; r < s.n_batch * m; r++)
                for (size_t q = 0; q < n; q++) yd[r * n + q] += bias[q];
        }
        ti__gemm_act(k, yd, s.n_batch * m * n);
        return TI_OK;
    }
    int is_int = ti__dtype_is_int(a->dtype);
    for (size_t t = 0; t < s.n_batch; t++) {
        size_t oa, ob;
        ti__mm_offsets(&s, t, &oa, &ob);
        oa *= m * kk;
        ob *= kk * n;
        for (size_t i = 0; i < m; i++)
            for (size_t q = 0; q < n; q++) {
                size_t yo = t * m * n + i * n + q;
                if (is_int) {
                    uint64_t acc = 0;
                    for (size_t p = 0; p < kk; p++)
                        acc += (uint64_t)ti__get_i64(a, oa + i * kk + p) *
                               (uint64_t)ti__get_i64(b, ob + p * n + q);
                    ti__set_i64(y, yo, (int64_t)acc);
                } else {
                    double acc = 0;
                    for (size_t p = 0; p < kk; p++)
                        acc += ti__get_f64(a, oa + i * kk + p) * ti__get_f64(b, ob + p * n + q);
                    if (k->node->act != TI__ACT_NONE)
                        acc = ti__act_apply(k->node->act, k->node->act_a, k->node->act_b,
                                            (float)acc);
                    ti__set_f64(y, yo, acc);
                }
            }
    }
    return TI_OK;
}

/* Zero point of a MatMulInteger operand: absent, a scalar (one element) or a vector along
 * rows of A / columns of B (len elements). Returns 0 when the shape is none of those. */
TI__PRIVATE int ti__mmi_zp_ok(const ti_tensor *zp, int64_t len) {
    if (zp == NULL) return 1;
    size_t n = ti__numel(zp);
    if (n == 1) return 1;
    return (int64_t)n == len;
}

TI__PRIVATE int ti__matmulint_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    const ti_tensor *a = k->in[0], *b = k->in[1];
    const ti_tensor *za = k->n_in > 2 ? k->in[2] : NULL, *zb = k->n_in > 3 ? k->in[3] : NULL;
    if ((a->dtype != TI_DTYPE_U8 && a->dtype != TI_DTYPE_I8) ||
        (b->dtype != TI_DTYPE_U8 && b->dtype != TI_DTYPE_I8))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "inputs must be uint8 or int8, got %s and %s",
                         ti_dtype_name(a->dtype), ti_dtype_name(b->dtype));
    if ((za != NULL && za->dtype != a->dtype) || (zb != NULL && zb->dtype != b->dtype))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "zero point dtype differs from its input");
    ti__mm_shape s;
    ti_status st = ti__mm_infer(k, a, b, &s);
    if (st != TI_OK) return st;
    if (!ti__mmi_zp_ok(za, s.m) || !ti__mmi_zp_ok(zb, s.n))
        return ti__kfail(k, TI_ERR_UNSUPPORTED,
                         "zero points must be scalars or per-row (A) / per-column (B) vectors");
    if (!ti__set_shape(k->out[0], TI_DTYPE_I32, s.out_rank, s.out))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid output shape");
    return TI_OK;
}

TI__PRIVATE ti_status ti__matmulint_run(ti__kctx *k) {
    const ti_tensor *a = k->in[0], *b = k->in[1];
    const ti_tensor *za = k->n_in > 2 ? k->in[2] : NULL, *zb = k->n_in > 3 ? k->in[3] : NULL;
    ti__mm_shape s;
    ti_status st = ti__mm_infer(k, a, b, &s);
    if (st != TI_OK) return st;
    size_t m = (size_t)s.m, n = (size_t)s.n, kk = (size_t)s.k;
    /* uint32 arithmetic: the spec lets the 32-bit accumulation wrap, C forbids signed
     * overflow */
    uint32_t *y = (uint32_t *)k->out[0]->data;
    int a_signed = a->dtype == TI_DTYPE_I8, b_signed = b->dtype == TI_DTYPE_I8;
    const uint8_t *ad = (const uint8_t *)a->data, *bd = (const uint8_t *)b->data;
    for (size_t t = 0; t < s.n_batch; t++) {
        size_t oa, ob;
        ti__mm_offsets(&s, t, &oa, &ob);
        const uint8_t *ab = ad + oa * m * kk, *bb = bd + ob * kk * n;
        uint32_t *yb = y + t * m * n;
        for (size_t i = 0; i < m; i++) {
            int32_t zpa = za == NULL ? 0 : (int32_t)ti__get_i64(za, ti__numel(za) == 1 ? 0 : i);
            uint32_t *yr = yb + i * n, rs = 0; /* rs: sum over p of A - zpa */
            for (size_t q = 0; q < n; q++) yr[q] = 0;
            for (size_t p = 0; p < kk; p++) {
                int32_t av = (a_signed ? (int32_t)(int8_t)ab[i * kk + p] : (int32_t)ab[i * kk + p])
                             - zpa;
                rs += (uint32_t)av;
                if (av == 0) continue;
                const uint8_t *br = bb + p * n;
                if (b_signed)
                    for (size_t q = 0; q < n; q++)
                        yr[q] += (uint32_t)av * (uint32_t)(int32_t)(int8_t)br[q];
                else
                    for (size_t q = 0; q < n; q++) yr[q] += (uint32_t)av * (uint32_t)br[q];
            }
            if (zb != NULL) /* (A - zpa)(B - zpb) = (A - zpa)B - (A - zpa)zpb */
                for (size_t q = 0; q < n; q++)
                    yr[q] -= rs * (uint32_t)ti__get_i64(zb, ti__numel(zb) == 1 ? 0 : q);
        }
    }
    return TI_OK;
}

TI__PRIVATE const ti__op ti__ops_gemm[] = {
    {"Gemm", ti__gemm_shape, ti__gemm_run, NULL, 0},
    {"MatMul", ti__matmul_shape, ti__matmul_run, NULL, 0},
    {"MatMulInteger", ti__matmulint_shape, ti__matmulint_run, NULL, 0},
    {NULL, NULL, NULL, NULL, 0}
};
/* ==== end src/cpu/gemm.c ==================================================================== */

/* ==== begin src/cpu/generate.c ============================================================== */
/* Generator kernels: Shape and Size (their output depends on the input's shape only),
 * Constant, ConstantOfShape, Range and EyeLike. Relies on internal.h; Constant and
 * ConstantOfShape read TENSOR attributes from the model's constant values. Must not read an
 * input's data in Shape / Size (it may be absent) and never allocates in a run function. */

TI__PRIVATE ti_status ti__gen_set(ti__kctx *k, int i, ti_dtype dt, int rank, const int64_t *dims) {
    if (i >= k->n_out || k->out[i] == NULL) return TI_OK;
    if (!ti__set_shape(k->out[i], dt, rank, dims))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "output %d: rank %d or size is too large", i,
                         rank);
    return TI_OK;
}

/* ---- Shape, Size ----------------------------------------------------------------------- */

/* [start, end) of the dims Shape reports (opset 15 attributes), clamped into [0, rank]. */
TI__PRIVATE void ti__shape_range(ti__kctx *k, int64_t *start, int64_t *end) {
    int64_t r = k->in[0]->rank;
    int64_t s = ti__attr_i(k->node, "start", 0), e = ti__attr_i(k->node, "end", r);
    if (s < 0) s += r;
    if (e < 0) e += r;
    *start = s < 0 ? 0 : (s > r ? r : s);
    *end = e < 0 ? 0 : (e > r ? r : e);
    if (*end < *start) *end = *start;
}

TI__PRIVATE int ti__shape_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    int64_t s, e;
    ti__shape_range(k, &s, &e);
    int64_t d = e - s;
    return ti__gen_set(k, 0, TI_DTYPE_I64, 1, &d);
}

TI__PRIVATE ti_status ti__shape_run(ti__kctx *k) {
    int64_t s, e, *y = (int64_t *)k->out[0]->data;
    ti__shape_range(k, &s, &e);
    for (int64_t i = s; i < e; i++) y[i - s] = k->in[0]->shape[i];
    return TI_OK;
}

TI__PRIVATE int ti__size_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    return ti__gen_set(k, 0, TI_DTYPE_I64, 0, NULL);
}

TI__PRIVATE ti_status ti__size_run(ti__kctx *k) {
    *(int64_t *)k->out[0]->data = (int64_t)ti__numel(k->in[0]);
    return TI_OK;
}

/* ---- Constant -------------------------------------------------------------------------- */

/* The attribute that holds the value, and its dtype, rank, dims and bytes. */
typedef struct ti__const_src {
    ti_dtype dtype;
    int rank;
    int64_t dims[TI_MAX_DIMS];
    const void *data;
    size_t bytes;
} ti__const_src;

TI__PRIVATE int ti__constant_src(ti__kctx *k, ti__const_src *c) {
    const ti__node *n = k->node;
    memset(c, 0, sizeof *c);
    for (int i = 0; i < n->n_attrs; i++) {
        const ti__attr *a = &n->attrs[i];
        if (a->name == NULL) continue;
        if (strcmp(a->name, "value") == 0 && a->type == TI__ATTR_TENSOR) {
            if (a->tensor < 0 || a->tensor >= k->model->n_values)
                return ti__kfail(k, TI_ERR_BAD_MODEL, "value attribute has no tensor");
            const ti__value *v = &k->model->values[a->tensor];
            if (ti_dtype_size(v->dtype) == 0 || v->rank < 0 || v->rank > TI_MAX_DIMS)
                return ti__kfail(k, TI_ERR_UNSUPPORTED, "value tensor of dtype %s rank %d is "
                                 "not supported", ti_dtype_name(v->dtype), v->rank);
            c->dtype = v->dtype;
            c->rank = v->rank;
            for (int j = 0; j < v->rank; j++) c->dims[j] = v->dims[j];
            c->data = v->data;
            c->bytes = v->bytes;
        } else if (strcmp(a->name, "value_float") == 0 && a->type == TI__ATTR_FLOAT) {
            c->dtype = TI_DTYPE_F32;
            c->data = &a->f;
            c->bytes = sizeof(float);
        } else if (strcmp(a->name, "value_int") == 0 && a->type == TI__ATTR_INT) {
            c->dtype = TI_DTYPE_I64;
            c->data = &a->i;
            c->bytes = sizeof(int64_t);
        } else if (strcmp(a->name, "value_floats") == 0 && a->type == TI__ATTR_FLOATS) {
            c->dtype = TI_DTYPE_F32;
            c->rank = 1;
            c->dims[0] = a->count;
            c->data = a->floats;
            c->bytes = (size_t)a->count * sizeof(float);
        } else if (strcmp(a->name, "value_ints") == 0 && a->type == TI__ATTR_INTS) {
            c->dtype = TI_DTYPE_I64;
            c->rank = 1;
            c->dims[0] = a->count;
            c->data = a->ints;
            c->bytes = (size_t)a->count * sizeof(int64_t);
        } else {
            return ti__kfail(k, TI_ERR_UNSUPPORTED, "attribute '%s' is not supported", a->name);
        }
        size_t need = ti__shape_numel(c->rank, c->dims) * ti_dtype_size(c->dtype);
        if (need != c->bytes || (need != 0 && c->data == NULL))
            return ti__kfail(k, TI_ERR_BAD_MODEL, "value holds %zu bytes, its shape needs %zu",
                             c->bytes, need);
        return TI_OK;
    }
    return ti__kfail(k, TI_ERR_BAD_MODEL, "no value attribute");
}

TI__PRIVATE int ti__constant_shape(ti__kctx *k) {
    ti__const_src c;
    int st = ti__constant_src(k, &c);
    if (st != TI_OK) return st;
    return ti__gen_set(k, 0, c.dtype, c.rank, c.dims);
}

TI__PRIVATE ti_status ti__constant_run(ti__kctx *k) {
    ti__const_src c;
    int st = ti__constant_src(k, &c);
    if (st != TI_OK) return (ti_status)st;
    if (c.bytes != 0) memcpy(k->out[0]->data, c.data, c.bytes);
    return TI_OK;
}

/* ---- ConstantOfShape ------------------------------------------------------------------- */

/* The fill value: a one-element "value" tensor attribute, float32 0 when absent. */
TI__PRIVATE int ti__cos_value(ti__kctx *k, ti_dtype *dt, unsigned char *val) {
    const ti__attr *a = ti__attr_get(k->node, "value");
    memset(val, 0, 8);
    *dt = TI_DTYPE_F32;
    if (a == NULL) return TI_OK;
    if (a->type != TI__ATTR_TENSOR || a->tensor < 0 || a->tensor >= k->model->n_values)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "value attribute must be a tensor");
    const ti__value *v = &k->model->values[a->tensor];
    size_t es = ti_dtype_size(v->dtype);
    if (es == 0 || es > 8)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "value of dtype %s is not supported",
                         ti_dtype_name(v->dtype));
    if (v->data == NULL || v->bytes != es)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "value must hold exactly one element");
    *dt = v->dtype;
    memcpy(val, v->data, es);
    return TI_OK;
}

TI__PRIVATE int ti__cos_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    const ti_tensor *s = k->in[0];
    ti_dtype dt = TI_DTYPE_UNKNOWN;
    unsigned char val[8];
    int st = ti__cos_value(k, &dt, val);
    if (st != TI_OK) return st;
    if (s->rank != 1 || !ti__dtype_is_int(s->dtype))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "input must be a 1-D integer tensor (rank %d, %s)",
                         s->rank, ti_dtype_name(s->dtype));
    size_t n = ti__numel(s);
    if (n > TI_MAX_DIMS)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "output rank %zu above %d", n, TI_MAX_DIMS);
    TI__NEED(k, s);
    int64_t d[TI_MAX_DIMS];
    for (size_t i = 0; i < n; i++) {
        d[i] = ti__get_i64(s, i);
        if (d[i] < 0)
            return ti__kfail(k, TI_ERR_INVALID_ARGUMENT, "shape[%zu] = %lld is negative", i,
                             (long long)d[i]);
    }
    return ti__gen_set(k, 0, dt, (int)n, d);
}

TI__PRIVATE ti_status ti__cos_run(ti__kctx *k) {
    ti_dtype dt = TI_DTYPE_UNKNOWN;
    unsigned char val[8];
    int st = ti__cos_value(k, &dt, val);
    if (st != TI_OK) return (ti_status)st;
    size_t es = ti_dtype_size(dt), n = ti__numel(k->out[0]);
    unsigned char *y = (unsigned char *)k->out[0]->data;
    for (size_t i = 0; i < n; i++) memcpy(y + i * es, val, es);
    return TI_OK;
}

/* ---- Range ----------------------------------------------------------------------------- */

/* Element count: max(ceil((limit - start) / delta), 0), computed exactly for integers. */
TI__PRIVATE int ti__range_count(ti__kctx *k, int64_t *count) {
    for (int i = 0; i < 3; i++) {
        TI__REQUIRE_INPUT(k, i);
        const ti_tensor *t = k->in[i];
        if (ti__numel(t) != 1 || t->dtype != k->in[0]->dtype)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "input %d must be one %s value (has %zu of %s)",
                             i, ti_dtype_name(k->in[0]->dtype), ti__numel(t),
                             ti_dtype_name(t->dtype));
    }
    ti_dtype dt = k->in[0]->dtype;
    if (!ti__dtype_is_int(dt) && !ti__dtype_is_float(dt))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "dtype %s is not supported", ti_dtype_name(dt));
    for (int i = 0; i < 3; i++) TI__NEED(k, k->in[i]);
    double s = ti__get_f64(k->in[0], 0), l = ti__get_f64(k->in[1], 0);
    double d = ti__get_f64(k->in[2], 0);
    if (d == 0.0 || d != d || s != s || l != l)
        return ti__kfail(k, TI_ERR_INVALID_ARGUMENT, "delta is 0 or a value is NaN");
    double n = ceil((l - s) / d);
    if (n > 4.0e15) return ti__kfail(k, TI_ERR_INVALID_ARGUMENT, "range of %g values", n);
    if (ti__dtype_is_int(dt)) { /* exact integer count, no double rounding */
        int64_t si = ti__get_i64(k->in[0], 0), li = ti__get_i64(k->in[1], 0);
        int64_t di = ti__get_i64(k->in[2], 0);
        if (fabs(l - s) > 4.0e18)
            return ti__kfail(k, TI_ERR_INVALID_ARGUMENT, "range is too large");
        int64_t diff = li - si, q = diff / di;
        if (q * di != diff) q += (diff > 0) == (di > 0) ? 1 : 0; /* ceil */
        *count = q > 0 ? q : 0;
        return TI_OK;
    }
    *count = n > 0.0 ? (int64_t)n : 0;
    return TI_OK;
}

TI__PRIVATE int ti__range_shape(ti__kctx *k) {
    int64_t n;
    int st = ti__range_count(k, &n);
    if (st != TI_OK) return st;
    return ti__gen_set(k, 0, k->in[0]->dtype, 1, &n);
}

TI__PRIVATE ti_status ti__range_run(ti__kctx *k) {
    ti_tensor *y = k->out[0];
    size_t n = ti__numel(y);
    if (ti__dtype_is_int(y->dtype)) {
        int64_t s = ti__get_i64(k->in[0], 0), d = ti__get_i64(k->in[2], 0);
        for (size_t i = 0; i < n; i++) ti__set_i64(y, i, s + (int64_t)i * d);
    } else {
        double s = ti__get_f64(k->in[0], 0), d = ti__get_f64(k->in[2], 0);
        for (size_t i = 0; i < n; i++) ti__set_f64(y, i, s + (double)i * d);
    }
    return TI_OK;
}

/* ---- EyeLike --------------------------------------------------------------------------- */

TI__PRIVATE int ti__eyelike_dtype(ti__kctx *k, ti_dtype *dt) {
    TI__REQUIRE_INPUT(k, 0);
    const ti__attr *a = ti__attr_get(k->node, "dtype");
    *dt = a != NULL ? ti__onnx_dtype(a->i) : k->in[0]->dtype;
    if (ti_dtype_size(*dt) == 0)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "output dtype %s (ONNX type %lld) is not "
                         "supported", ti_dtype_name(*dt), (long long)(a ? a->i : -1));
    if (k->in[0]->rank != 2)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "input has rank %d, expected 2", k->in[0]->rank);
    return TI_OK;
}

TI__PRIVATE int ti__eyelike_shape(ti__kctx *k) {
    ti_dtype dt = TI_DTYPE_UNKNOWN;
    int st = ti__eyelike_dtype(k, &dt);
    if (st != TI_OK) return st;
    return ti__gen_set(k, 0, dt, 2, k->in[0]->shape);
}

TI__PRIVATE ti_status ti__eyelike_run(ti__kctx *k) {
    ti_tensor *y = k->out[0];
    int64_t rows = y->shape[0], cols = y->shape[1], kk = ti__attr_i(k->node, "k", 0);
    if (y->size_bytes != 0) memset(y->data, 0, y->size_bytes); /* zero bytes: 0 in every dtype */
    for (int64_t i = 0; i < rows; i++) {
        if (kk > cols || kk < -rows) break;
        int64_t j = i + kk;
        if (j >= 0 && j < cols) ti__set_f64(y, (size_t)(i * cols + j), 1.0);
    }
    return TI_OK;
}

TI__PRIVATE const ti__op ti__ops_generate[] = {
    {"Shape", ti__shape_shape, ti__shape_run, NULL, TI__OP_SHAPE_ONLY},
    {"Size", ti__size_shape, ti__size_run, NULL, TI__OP_SHAPE_ONLY},
    {"Constant", ti__constant_shape, ti__constant_run, NULL, 0},
    {"ConstantOfShape", ti__cos_shape, ti__cos_run, NULL, 0},
    {"Range", ti__range_shape, ti__range_run, NULL, 0},
    {"EyeLike", ti__eyelike_shape, ti__eyelike_run, NULL, 0},
    {NULL, NULL, NULL, NULL, 0}
};
/* ==== end src/cpu/generate.c ================================================================ */

/* ==== begin src/cpu/index.c ================================================================= */
/* Indexing kernels: Gather, GatherElements, GatherND, ScatterElements (and the deprecated
 * Scatter), ScatterND, OneHot, Compress and NonZero. Data moves as whole elements of
 * ti_dtype_size bytes; scatter reductions compute in int64 for integer dtypes and in double
 * for floats. Relies on internal.h. Index values come from inputs: every one is checked
 * before use and an out-of-range index fails the run (TI_ERR_INVALID_ARGUMENT); a run never
 * reads or writes outside a tensor and never allocates. */

/* ---- helpers --------------------------------------------------------------------------- */

TI__PRIVATE ti_status ti__ix_esize(ti__kctx *k, const ti_tensor *t, size_t *es) {
    *es = ti_dtype_size(t->dtype);
    if (*es == 0)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "dtype %s is not supported",
                         ti_dtype_name(t->dtype));
    return TI_OK;
}

TI__PRIVATE ti_status ti__ix_int_input(ti__kctx *k, int i, const char *what) {
    if (!ti__dtype_is_int(k->in[i]->dtype))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "%s must be an integer tensor, got %s", what,
                         ti_dtype_name(k->in[i]->dtype));
    return TI_OK;
}

TI__PRIVATE int ti__ix_axis(int64_t axis, int rank, int *out) {
    if (axis < -(int64_t)rank || axis >= rank) return 0;
    *out = (int)(axis < 0 ? axis + rank : axis);
    return 1;
}

TI__PRIVATE ti_status ti__ix_set(ti__kctx *k, int i, ti_dtype dt, int rank, const int64_t *dims) {
    if (i >= k->n_out || k->out[i] == NULL) return TI_OK;
    if (!ti__set_shape(k->out[i], dt, rank, dims))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "output %d: rank %d or size is too large", i,
                         rank);
    return TI_OK;
}

/* Index i of t, wrapped once when negative; fails when outside [-dim, dim). */
TI__PRIVATE ti_status ti__ix_index(ti__kctx *k, const ti_tensor *t, size_t i, int64_t dim,
                                   int64_t *out) {
    int64_t v = ti__get_i64(t, i);
    if (v < -dim || v >= dim)
        return ti__kfail(k, TI_ERR_INVALID_ARGUMENT, "index %lld is out of range [%lld, %lld)",
                         (long long)v, (long long)-dim, (long long)dim);
    *out = v < 0 ? v + dim : v;
    return TI_OK;
}

/* Scatter reductions (attribute "reduction", opset 16/18). */
enum { TI__IX_RED_NONE, TI__IX_RED_ADD, TI__IX_RED_MUL, TI__IX_RED_MAX, TI__IX_RED_MIN };

TI__PRIVATE ti_status ti__ix_reduction(ti__kctx *k, int *red) {
    const char *s = ti__attr_s(k->node, "reduction", "none");
    if (strcmp(s, "none") == 0) *red = TI__IX_RED_NONE;
    else if (strcmp(s, "add") == 0) *red = TI__IX_RED_ADD;
    else if (strcmp(s, "mul") == 0) *red = TI__IX_RED_MUL;
    else if (strcmp(s, "max") == 0) *red = TI__IX_RED_MAX;
    else if (strcmp(s, "min") == 0) *red = TI__IX_RED_MIN;
    else return ti__kfail(k, TI_ERR_UNSUPPORTED, "reduction '%s' is not supported", s);
    return TI_OK;
}

/* out[o] = reduce(out[o], upd[u]). */
TI__PRIVATE void ti__ix_apply(ti_tensor *out, size_t o, const ti_tensor *upd, size_t u, int red,
                              size_t es) {
    if (red == TI__IX_RED_NONE) {
        memcpy((unsigned char *)out->data + o * es, (const unsigned char *)upd->data + u * es, es);
    } else if (ti__dtype_is_int(out->dtype) || out->dtype == TI_DTYPE_BOOL) {
        int64_t a = ti__get_i64(out, o), b = ti__get_i64(upd, u), r;
        /* wrap-around like the fixed-width integer arithmetic of the reference */
        if (red == TI__IX_RED_ADD) r = (int64_t)((uint64_t)a + (uint64_t)b);
        else if (red == TI__IX_RED_MUL) r = (int64_t)((uint64_t)a * (uint64_t)b);
        else if (red == TI__IX_RED_MAX) r = a > b ? a : b;
        else r = a < b ? a : b;
        ti__set_i64(out, o, r);
    } else {
        double a = ti__get_f64(out, o), b = ti__get_f64(upd, u), r;
        if (red == TI__IX_RED_ADD) r = a + b;
        else if (red == TI__IX_RED_MUL) r = a * b;
        else if (red == TI__IX_RED_MAX) r = a > b || a != a ? a : b;
        else r = a < b || a != a ? a : b;
        ti__set_f64(out, o, r);
    }
}

TI__PRIVATE void ti__ix_copy_input0(ti__kctx *k) {
    if (k->in[0]->size_bytes != 0) memcpy(k->out[0]->data, k->in[0]->data, k->in[0]->size_bytes);
}

/* ---- Gather ---------------------------------------------------------------------------- */

TI__PRIVATE int ti__gather_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    const ti_tensor *x = k->in[0], *ix = k->in[1];
    size_t es;
    ti_status st = ti__ix_esize(k, x, &es);
    if (st == TI_OK) st = ti__ix_int_input(k, 1, "indices");
    if (st != TI_OK) return st;
    int axis, r = 0;
    int64_t a = ti__attr_i(k->node, "axis", 0), d[TI_MAX_DIMS];
    if (!ti__ix_axis(a, x->rank, &axis))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "axis %lld is out of range for rank %d",
                         (long long)a, x->rank);
    if (x->rank - 1 + ix->rank > TI_MAX_DIMS)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "output rank %d above %d",
                         x->rank - 1 + ix->rank, TI_MAX_DIMS);
    for (int i = 0; i < axis; i++) d[r++] = x->shape[i];
    for (int i = 0; i < ix->rank; i++) d[r++] = ix->shape[i];
    for (int i = axis + 1; i < x->rank; i++) d[r++] = x->shape[i];
    return ti__ix_set(k, 0, x->dtype, r, d);
}

TI__PRIVATE ti_status ti__gather_run(ti__kctx *k) {
    const ti_tensor *x = k->in[0], *ix = k->in[1];
    int axis = 0;
    ti__ix_axis(ti__attr_i(k->node, "axis", 0), x->rank, &axis);
    size_t es = ti_dtype_size(x->dtype), outer = 1, inner = 1, n = ti__numel(ix);
    for (int i = 0; i < axis; i++) outer *= (size_t)x->shape[i];
    for (int i = axis + 1; i < x->rank; i++) inner *= (size_t)x->shape[i];
    int64_t dim = x->shape[axis];
    size_t chunk = inner * es;
    for (size_t j = 0; j < n; j++) { /* validate every index first */
        int64_t v = 0;
        ti_status st = ti__ix_index(k, ix, j, dim, &v);
        if (st != TI_OK) return st;
    }
    const unsigned char *src = (const unsigned char *)x->data;
    unsigned char *dst = (unsigned char *)k->out[0]->data;
    for (size_t o = 0; o < outer; o++)
        for (size_t j = 0; j < n; j++) {
            int64_t v = ti__get_i64(ix, j);
            if (v < 0) v += dim;
            if (chunk != 0) memcpy(dst, src + (o * (size_t)dim + (size_t)v) * chunk, chunk);
            dst += chunk;
        }
    return TI_OK;
}

/* ---- GatherElements, ScatterElements --------------------------------------------------- */

/* data and indices share a rank; indices' dims may not exceed data's off the axis.
 * updates (scatter) has indices' shape. */
TI__PRIVATE int ti__ix_elements_check(ti__kctx *k, int scatter, int *axis) {
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    if (scatter) TI__REQUIRE_INPUT(k, 2);
    const ti_tensor *x = k->in[0], *ix = k->in[1];
    size_t es;
    ti_status st = ti__ix_esize(k, x, &es);
    if (st == TI_OK) st = ti__ix_int_input(k, 1, "indices");
    if (st != TI_OK) return st;
    int64_t a = ti__attr_i(k->node, "axis", 0);
    if (!ti__ix_axis(a, x->rank, axis))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "axis %lld is out of range for rank %d",
                         (long long)a, x->rank);
    if (ix->rank != x->rank)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "indices have rank %d, data has rank %d",
                         ix->rank, x->rank);
    for (int i = 0; i < x->rank; i++)
        if (i != *axis && ix->shape[i] > x->shape[i])
            return ti__kfail(k, TI_ERR_BAD_MODEL, "indices dim %d = %lld exceeds data's %lld", i,
                             (long long)ix->shape[i], (long long)x->shape[i]);
    if (scatter) {
        const ti_tensor *u = k->in[2];
        if (u->dtype != x->dtype || u->rank != ix->rank)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "updates must have data's dtype and indices' "
                             "shape");
        for (int i = 0; i < ix->rank; i++)
            if (u->shape[i] != ix->shape[i])
                return ti__kfail(k, TI_ERR_BAD_MODEL, "updates dim %d = %lld, indices have "
                                 "%lld", i, (long long)u->shape[i], (long long)ix->shape[i]);
    }
    return TI_OK;
}

/* Calls back for each element of indices with (element, data offset). Returns the first
 * failure. `scatter`: 1 for ScatterElements, 0 for GatherElements. */
TI__PRIVATE ti_status ti__ix_elements_walk(ti__kctx *k, int axis, int scatter, int red) {
    const ti_tensor *x = k->in[0], *ix = k->in[1];
    ti_tensor *y = k->out[0];
    int r = x->rank;
    int64_t str[TI_MAX_DIMS], idx[TI_MAX_DIMS], off = 0;
    size_t n = ti__numel(ix), es = ti_dtype_size(x->dtype);
    ti__strides(r, x->shape, str);
    for (int i = 0; i < r; i++) idx[i] = 0;
    for (size_t j = 0; j < n; j++) {
        int64_t v = 0;
        ti_status st = ti__ix_index(k, ix, j, x->shape[axis], &v);
        if (st != TI_OK) return st;
        size_t o = (size_t)(off + v * str[axis]);
        if (scatter) ti__ix_apply(y, o, k->in[2], j, red, es);
        else memcpy((unsigned char *)y->data + j * es, (const unsigned char *)x->data + o * es, es);
        for (int i = r - 1; i >= 0; i--) { /* next index position; off excludes the axis */
            if (i != axis) off += str[i];
            if (++idx[i] < ix->shape[i]) break;
            if (i != axis) off -= idx[i] * str[i];
            idx[i] = 0;
        }
    }
    return TI_OK;
}

TI__PRIVATE int ti__gather_el_shape(ti__kctx *k) {
    int axis, st = ti__ix_elements_check(k, 0, &axis);
    if (st != TI_OK) return st;
    return ti__ix_set(k, 0, k->in[0]->dtype, k->in[1]->rank, k->in[1]->shape);
}

TI__PRIVATE ti_status ti__gather_el_run(ti__kctx *k) {
    int axis = 0;
    ti__ix_axis(ti__attr_i(k->node, "axis", 0), k->in[0]->rank, &axis);
    return ti__ix_elements_walk(k, axis, 0, TI__IX_RED_NONE);
}

TI__PRIVATE int ti__scatter_el_shape(ti__kctx *k) {
    int axis, red, st = ti__ix_elements_check(k, 1, &axis);
    if (st == TI_OK) st = ti__ix_reduction(k, &red);
    if (st != TI_OK) return st;
    return ti__ix_set(k, 0, k->in[0]->dtype, k->in[0]->rank, k->in[0]->shape);
}

TI__PRIVATE ti_status ti__scatter_el_run(ti__kctx *k) {
    int axis = 0, red = 0;
    ti_status st = ti__ix_reduction(k, &red);
    if (st != TI_OK) return st;
    ti__ix_axis(ti__attr_i(k->node, "axis", 0), k->in[0]->rank, &axis);
    ti__ix_copy_input0(k);
    return ti__ix_elements_walk(k, axis, 1, red);
}

/* ---- GatherND, ScatterND --------------------------------------------------------------- */

/* Shared layout: data [batch..., idx dims (m)..., slice...], indices [batch..., tuples..., m].
 * batch: batch_dims (GatherND only), m: indices' last dim. */
typedef struct ti__nd_plan {
    int b, m;
    size_t batches, tuples, slice; /* elements per slice */
    int64_t str[TI_MAX_DIMS];      /* data strides */
} ti__nd_plan;

TI__PRIVATE int ti__nd_plan_make(ti__kctx *k, int b, ti__nd_plan *p) {
    const ti_tensor *x = k->in[0], *ix = k->in[1];
    size_t es;
    ti_status st = ti__ix_esize(k, x, &es);
    if (st == TI_OK) st = ti__ix_int_input(k, 1, "indices");
    if (st != TI_OK) return st;
    if (ix->rank < 1 || b < 0 || b >= ix->rank || b >= x->rank)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "indices rank %d, data rank %d and batch_dims %d "
                         "do not fit", ix->rank, x->rank, b);
    int64_t m = ix->shape[ix->rank - 1];
    if (m < 1 || m > x->rank - b)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "indices' last dim %lld must be in [1, %d]",
                         (long long)m, x->rank - b);
    p->b = b;
    p->m = (int)m;
    p->batches = 1;
    for (int i = 0; i < b; i++) {
        if (ix->shape[i] != x->shape[i])
            return ti__kfail(k, TI_ERR_BAD_MODEL, "batch dim %d: indices %lld, data %lld", i,
                             (long long)ix->shape[i], (long long)x->shape[i]);
        p->batches *= (size_t)x->shape[i];
    }
    p->tuples = 1;
    for (int i = b; i < ix->rank - 1; i++) p->tuples *= (size_t)ix->shape[i];
    p->slice = 1;
    for (int i = b + p->m; i < x->rank; i++) p->slice *= (size_t)x->shape[i];
    ti__strides(x->rank, x->shape, p->str);
    return TI_OK;
}

/* Data offset (elements, within the batch) of tuple t of batch bt. */
TI__PRIVATE ti_status ti__nd_offset(ti__kctx *k, const ti__nd_plan *p, size_t bt, size_t t,
                                    size_t *off) {
    const ti_tensor *x = k->in[0], *ix = k->in[1];
    size_t base = (bt * p->tuples + t) * (size_t)p->m, o = 0;
    for (int j = 0; j < p->m; j++) {
        int64_t v = 0;
        ti_status st = ti__ix_index(k, ix, base + (size_t)j, x->shape[p->b + j], &v);
        if (st != TI_OK) return st;
        o += (size_t)v * (size_t)p->str[p->b + j];
    }
    *off = o;
    return TI_OK;
}

TI__PRIVATE int ti__gather_nd_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    ti__nd_plan p;
    const ti_tensor *x = k->in[0], *ix = k->in[1];
    int st = ti__nd_plan_make(k, (int)ti__attr_i(k->node, "batch_dims", 0), &p);
    if (st != TI_OK) return st;
    int64_t d[TI_MAX_DIMS];
    int r = 0;
    if (ix->rank - 1 + x->rank - p.b - p.m > TI_MAX_DIMS)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "output rank above %d", TI_MAX_DIMS);
    for (int i = 0; i < ix->rank - 1; i++) d[r++] = ix->shape[i];
    for (int i = p.b + p.m; i < x->rank; i++) d[r++] = x->shape[i];
    return ti__ix_set(k, 0, x->dtype, r, d);
}

TI__PRIVATE ti_status ti__gather_nd_run(ti__kctx *k) {
    ti__nd_plan p;
    const ti_tensor *x = k->in[0];
    int st = ti__nd_plan_make(k, (int)ti__attr_i(k->node, "batch_dims", 0), &p);
    if (st != TI_OK) return (ti_status)st;
    size_t es = ti_dtype_size(x->dtype), chunk = p.slice * es;
    size_t batch_elems = p.b > 0 ? (size_t)p.str[p.b - 1] : ti__numel(x);
    unsigned char *dst = (unsigned char *)k->out[0]->data;
    for (size_t bt = 0; bt < p.batches; bt++)
        for (size_t t = 0; t < p.tuples; t++) {
            size_t off;
            st = ti__nd_offset(k, &p, bt, t, &off);
            if (st != TI_OK) return (ti_status)st;
            if (chunk != 0)
                memcpy(dst, (const unsigned char *)x->data + (bt * batch_elems + off) * es, chunk);
            dst += chunk;
        }
    return TI_OK;
}

/* ScatterND: updates has shape indices.shape[:-1] + data.shape[m:]. */
TI__PRIVATE int ti__scatter_nd_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    TI__REQUIRE_INPUT(k, 2);
    ti__nd_plan p;
    const ti_tensor *x = k->in[0], *ix = k->in[1], *u = k->in[2];
    int red, st = ti__nd_plan_make(k, 0, &p);
    if (st == TI_OK) st = ti__ix_reduction(k, &red);
    if (st != TI_OK) return st;
    int ok = u->dtype == x->dtype && u->rank == ix->rank - 1 + x->rank - p.m;
    for (int i = 0; ok && i < ix->rank - 1; i++) ok = u->shape[i] == ix->shape[i];
    for (int i = p.m; ok && i < x->rank; i++) ok = u->shape[ix->rank - 1 + i - p.m] == x->shape[i];
    if (!ok)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "updates (rank %d) must have data's dtype and "
                         "shape indices.shape[:-1] + data.shape[%d:]", u->rank, p.m);
    return ti__ix_set(k, 0, x->dtype, x->rank, x->shape);
}

TI__PRIVATE ti_status ti__scatter_nd_run(ti__kctx *k) {
    ti__nd_plan p;
    int red, st = ti__nd_plan_make(k, 0, &p);
    if (st == TI_OK) st = ti__ix_reduction(k, &red);
    if (st != TI_OK) return (ti_status)st;
    size_t es = ti_dtype_size(k->in[0]->dtype);
    for (size_t t = 0; t < p.tuples; t++) { /* validate every index first */
        size_t off;
        st = ti__nd_offset(k, &p, 0, t, &off);
        if (st != TI_OK) return (ti_status)st;
    }
    ti__ix_copy_input0(k);
    for (size_t t = 0; t < p.tuples; t++) {
        size_t off;
        ti__nd_offset(k, &p, 0, t, &off);
        for (size_t e = 0; e < p.slice; e++)
            ti__ix_apply(k->out[0], off + e, k->in[2], t * p.slice + e, red, es);
    }
    return TI_OK;
}

/* ---- OneHot ---------------------------------------------------------------------------- */

TI__PRIVATE int ti__onehot_params(ti__kctx *k, int *axis, int64_t *depth) {
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    TI__REQUIRE_INPUT(k, 2);
    const ti_tensor *ix = k->in[0], *dp = k->in[1], *val = k->in[2];
    size_t es;
    ti_status st = ti__ix_esize(k, val, &es);
    if (st != TI_OK) return st;
    if (ti__numel(val) != 2 || ti__numel(dp) != 1 || ti_dtype_size(ix->dtype) == 0 ||
        ti_dtype_size(dp->dtype) == 0)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "depth must have one value and values two (got "
                         "%zu and %zu)", ti__numel(dp), ti__numel(val));
    int64_t a = ti__attr_i(k->node, "axis", -1);
    if (!ti__ix_axis(a, ix->rank + 1, axis))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "axis %lld is out of range for output rank %d",
                         (long long)a, ix->rank + 1);
    if (ix->rank + 1 > TI_MAX_DIMS)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "output rank above %d", TI_MAX_DIMS);
    TI__NEED(k, dp);
    double dv = ti__get_f64(dp, 0);
    if (!(dv >= 1.0 && dv < 9.0e15))
        return ti__kfail(k, TI_ERR_INVALID_ARGUMENT, "depth %g must be a positive count", dv);
    *depth = (int64_t)dv;
    return TI_OK;
}

TI__PRIVATE int ti__onehot_shape(ti__kctx *k) {
    int axis = 0;
    int64_t depth, d[TI_MAX_DIMS];
    int st = ti__onehot_params(k, &axis, &depth);
    if (st != TI_OK) return st;
    const ti_tensor *ix = k->in[0];
    for (int i = 0, j = 0; i <= ix->rank; i++) d[i] = i == axis ? depth : ix->shape[j++];
    return ti__ix_set(k, 0, k->in[2]->dtype, ix->rank + 1, d);
}

TI__PRIVATE ti_status ti__onehot_run(ti__kctx *k) {
    int axis = 0;
    int64_t depth;
    int st = ti__onehot_params(k, &axis, &depth);
    if (st != TI_OK) return (ti_status)st;
    const ti_tensor *ix = k->in[0], *val = k->in[2];
    ti_tensor *y = k->out[0];
    size_t es = ti_dtype_size(val->dtype), inner = 1, n = ti__numel(ix), total = ti__numel(y);
    for (int i = axis; i < ix->rank; i++) inner *= (size_t)ix->shape[i];
    const unsigned char *off_v = (const unsigned char *)val->data, *on_v = off_v + es;
    unsigned char *dst = (unsigned char *)y->data;
    for (size_t i = 0; i < total; i++) memcpy(dst + i * es, off_v, es);
    /* out[o, d, i] with o = outer position, i = inner position of the index */
    for (size_t j = 0; j < n; j++) {
        int64_t v = ti__get_i64(ix, j);
        if (v < 0) v += depth;
        if (v < 0 || v >= depth) continue; /* spec: all off_value */
        size_t o = j / inner, i = j % inner;
        memcpy(dst + ((o * (size_t)depth + (size_t)v) * inner + i) * es, on_v, es);
    }
    return TI_OK;
}

/* ---- Compress, NonZero ----------------------------------------------------------------- */

/* Compress: axis (or the flattened input when absent); kept = count of true conditions
 * within the axis length. */
TI__PRIVATE int ti__compress_params(ti__kctx *k, int *axis, int64_t *len, size_t *kept) {
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    const ti_tensor *x = k->in[0], *c = k->in[1];
    size_t es;
    ti_status st = ti__ix_esize(k, x, &es);
    if (st != TI_OK) return st;
    if (c->rank != 1 || ti_dtype_size(c->dtype) == 0)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "condition must be 1-D (rank %d)", c->rank);
    const ti__attr *a = ti__attr_get(k->node, "axis");
    *axis = -1;
    *len = (int64_t)ti__numel(x);
    if (a != NULL) {
        if (!ti__ix_axis(a->i, x->rank, axis))
            return ti__kfail(k, TI_ERR_BAD_MODEL, "axis %lld is out of range for rank %d",
                             (long long)a->i, x->rank);
        *len = x->shape[*axis];
    }
    TI__NEED(k, c);
    size_t n = TI__MIN(ti__numel(c), (size_t)*len);
    *kept = 0;
    for (size_t i = 0; i < n; i++) *kept += ti__get_f64(c, i) != 0.0;
    return TI_OK;
}

TI__PRIVATE int ti__compress_shape(ti__kctx *k) {
    int axis = 0;
    int64_t len, d[TI_MAX_DIMS];
    size_t kept = 0;
    int st = ti__compress_params(k, &axis, &len, &kept);
    if (st != TI_OK) return st;
    const ti_tensor *x = k->in[0];
    if (axis < 0) {
        d[0] = (int64_t)kept;
        return ti__ix_set(k, 0, x->dtype, 1, d);
    }
    for (int i = 0; i < x->rank; i++) d[i] = x->shape[i];
    d[axis] = (int64_t)kept;
    return ti__ix_set(k, 0, x->dtype, x->rank, d);
}

TI__PRIVATE ti_status ti__compress_run(ti__kctx *k) {
    int axis = 0;
    int64_t len = 0;
    size_t kept = 0;
    int st = ti__compress_params(k, &axis, &len, &kept);
    if (st != TI_OK) return (ti_status)st;
    const ti_tensor *x = k->in[0], *c = k->in[1];
    size_t es = ti_dtype_size(x->dtype), outer = 1, inner = 1;
    if (axis >= 0) {
        for (int i = 0; i < axis; i++) outer *= (size_t)x->shape[i];
        for (int i = axis + 1; i < x->rank; i++) inner *= (size_t)x->shape[i];
    }
    size_t n = TI__MIN(ti__numel(c), (size_t)len), chunk = inner * es;
    const unsigned char *src = (const unsigned char *)x->data;
    unsigned char *dst = (unsigned char *)k->out[0]->data;
    for (size_t o = 0; o < outer; o++)
        for (size_t i = 0; i < n; i++)
            if (ti__get_f64(c, i) != 0.0) {
                memcpy(dst, src + (o * (size_t)len + i) * chunk, chunk);
                dst += chunk;
            }
    return TI_OK;
}

/* NonZero: int64 [rank, count] of the coordinates of non-zero elements, row-major order.
 * A scalar counts as a 1-D tensor of one element (numpy's behaviour). */
TI__PRIVATE int ti__nonzero_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    const ti_tensor *x = k->in[0];
    size_t es;
    ti_status st = ti__ix_esize(k, x, &es);
    if (st != TI_OK) return st;
    TI__NEED(k, x);
    size_t n = ti__numel(x), cnt = 0;
    for (size_t i = 0; i < n; i++) cnt += ti__get_f64(x, i) != 0.0;
    int64_t d[2] = {x->rank > 0 ? x->rank : 1, (int64_t)cnt};
    return ti__ix_set(k, 0, TI_DTYPE_I64, 2, d);
}

TI__PRIVATE ti_status ti__nonzero_run(ti__kctx *k) {
    const ti_tensor *x = k->in[0];
    int64_t *y = (int64_t *)k->out[0]->data, idx[TI_MAX_DIMS];
    size_t n = ti__numel(x), cnt = (size_t)k->out[0]->shape[1], j = 0;
    int r = x->rank;
    for (int i = 0; i < r; i++) idx[i] = 0;
    for (size_t i = 0; i < n; i++) {
        if (ti__get_f64(x, i) != 0.0 && j < cnt) {
            if (r == 0) y[j] = 0;
            for (int d = 0; d < r; d++) y[(size_t)d * cnt + j] = idx[d];
            j++;
        }
        for (int d = r - 1; d >= 0; d--) {
            if (++idx[d] < x->shape[d]) break;
            idx[d] = 0;
        }
    }
    return TI_OK;
}

TI__PRIVATE const ti__op ti__ops_index[] = {
    {"Gather", ti__gather_shape, ti__gather_run, NULL, 0},
    {"GatherElements", ti__gather_el_shape, ti__gather_el_run, NULL, 0},
    {"GatherND", ti__gather_nd_shape, ti__gather_nd_run, NULL, 0},
    {"ScatterElements", ti__scatter_el_shape, ti__scatter_el_run, NULL, 0},
    {"Scatter", ti__scatter_el_shape, ti__scatter_el_run, NULL, 0},
    {"ScatterND", ti__scatter_nd_shape, ti__scatter_nd_run, NULL, 0},
    {"OneHot", ti__onehot_shape, ti__onehot_run, NULL, 0},
    {"Compress", ti__compress_shape, ti__compress_run, NULL, 0},
    {"NonZero", ti__nonzero_shape, ti__nonzero_run, NULL, 0},
    {NULL, NULL, NULL, NULL, 0}
};
/* ==== end src/cpu/index.c =================================================================== */

/* ==== begin src/cpu/loss.c ================================================================== */
/* Loss functions: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (ONNX opset 12+).
 * Scalar reference kernels for float32/float64/float16/bfloat16 scores with int32/int64
 * targets; sums accumulate in double. Relies on internal.h and the element helpers of
 * core/tensor.c. Must not allocate in a run function; a target outside [0, C) that is not
 * ignore_index is a run-time error (TI_ERR_INVALID_ARGUMENT), never an out-of-bounds read. */

enum { TI__LOSS_NONE, TI__LOSS_SUM, TI__LOSS_MEAN };

/* The input seen as [N, C, D] (D = product of the trailing dims, 1 when rank 2). */
typedef struct ti__loss_geom {
    int64_t n, c, d;
    int reduction;
    int has_ignore;
    int64_t ignore_index;
} ti__loss_geom;

/* Shared validation and output shapes: out[0] is the loss, out[1] (SCE only) log_prob. */
TI__PRIVATE int ti__loss_setup(ti__kctx *k, ti__loss_geom *g) {
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    const ti_tensor *x = k->in[0], *t = k->in[1];
    const ti_tensor *w = k->n_in > 2 ? k->in[2] : NULL;
    if (!ti__dtype_is_float(x->dtype))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "input dtype %s is not supported (float only)",
                         ti_dtype_name(x->dtype));
    if (t->dtype != TI_DTYPE_I32 && t->dtype != TI_DTYPE_I64)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "target dtype %s, expected int32 or int64",
                         ti_dtype_name(t->dtype));
    if (x->rank < 2)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "input has rank %d, expected at least 2 (N, C, ...)",
                         x->rank);
    if (t->rank != x->rank - 1)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "target has rank %d, expected %d (input rank - 1)",
                         t->rank, x->rank - 1);
    if (t->shape[0] != x->shape[0])
        return ti__kfail(k, TI_ERR_BAD_MODEL, "target dim 0 is %lld, input batch is %lld",
                         (long long)t->shape[0], (long long)x->shape[0]);
    g->d = 1;
    for (int i = 2; i < x->rank; i++) {
        if (t->shape[i - 1] != x->shape[i])
            return ti__kfail(k, TI_ERR_BAD_MODEL, "target dim %d is %lld, input dim %d is %lld",
                             i - 1, (long long)t->shape[i - 1], i, (long long)x->shape[i]);
        g->d *= x->shape[i];
    }
    g->n = x->shape[0];
    g->c = x->shape[1];
    if (w != NULL) {
        if (w->dtype != x->dtype)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "weight dtype %s differs from input dtype %s",
                             ti_dtype_name(w->dtype), ti_dtype_name(x->dtype));
        if (w->rank != 1 || w->shape[0] != g->c)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "weight must have shape [%lld] (C)",
                             (long long)g->c);
    }
    const char *red = ti__attr_s(k->node, "reduction", "mean");
    if (strcmp(red, "none") == 0) g->reduction = TI__LOSS_NONE;
    else if (strcmp(red, "sum") == 0) g->reduction = TI__LOSS_SUM;
    else if (strcmp(red, "mean") == 0) g->reduction = TI__LOSS_MEAN;
    else
        return ti__kfail(k, TI_ERR_BAD_MODEL,
                         "reduction '%s' is not one of 'none', 'sum', 'mean'", red);
    g->has_ignore = ti__attr_get(k->node, "ignore_index") != NULL;
    g->ignore_index = ti__attr_i(k->node, "ignore_index", 0);

    if (k->n_out > 0 && k->out[0] != NULL) {
        int ok = g->reduction == TI__LOSS_NONE ? ti__set_shape(k->out[0], x->dtype, t->rank, t->shape)
                                               : ti__set_shape(k->out[0], x->dtype, 0, NULL);
        if (!ok) return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid output shape");
    }
    if (k->n_out > 1 && k->out[1] != NULL &&
        !ti__set_shape(k->out[1], x->dtype, x->rank, x->shape))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid log_prob shape");
    return TI_OK;
}

/* Class index of sample (n, d), or -1 when ignored; -2 when out of range. */
TI__PRIVATE int64_t ti__loss_class(const ti_tensor *t, const ti__loss_geom *g, size_t i) {
    int64_t c = t->dtype == TI_DTYPE_I64 ? ((const int64_t *)t->data)[i]
                                         : (int64_t)((const int32_t *)t->data)[i];
    if (g->has_ignore && c == g->ignore_index) return -1;
    if (c < 0 || c >= g->c) return -2;
    return c;
}

/* Given per-sample log-probabilities lp(n, c, d) (x itself for NLL, the log-softmax for SCE,
 * read through get), writes the (reduced) loss. */
typedef double (*ti__loss_get_fn)(void *ctx, int64_t n, int64_t c, int64_t d);

TI__PRIVATE ti_status ti__loss_finish(ti__kctx *k, const ti__loss_geom *g, ti__loss_get_fn get,
                                      void *ctx) {
    const ti_tensor *t = k->in[1];
    const ti_tensor *w = k->n_in > 2 ? k->in[2] : NULL;
    ti_tensor *y = k->n_out > 0 ? k->out[0] : NULL;
    double sum = 0.0, wsum = 0.0;
    for (int64_t n = 0; n < g->n; n++) {
        for (int64_t d = 0; d < g->d; d++) {
            size_t i = (size_t)(n * g->d + d);
            int64_t c = ti__loss_class(t, g, i);
            if (c == -2)
                return ti__kfail(k, TI_ERR_INVALID_ARGUMENT,
                                 "target value %lld at index %zu is outside [0, %lld)",
                                 (long long)ti__get_i64(t, i), i, (long long)g->c);
            double l = 0.0, wt = 0.0;
            if (c >= 0) {
                wt = w != NULL ? ti__get_f64(w, (size_t)c) : 1.0;
                l = -get(ctx, n, c, d) * wt;
            }
            if (g->reduction == TI__LOSS_NONE) {
                if (y != NULL) ti__set_f64(y, i, l);
            } else {
                sum += l;
                wsum += wt;
            }
        }
    }
    if (y == NULL || g->reduction == TI__LOSS_NONE) return TI_OK;
    /* mean: sum over weights of the samples not ignored (1 each without a weight input),
     * as the ONNX reference does; 0/0 gives NaN like numpy. */
    ti__set_f64(y, 0, g->reduction == TI__LOSS_SUM ? sum : sum / wsum);
    return TI_OK;
}

/* ---- NegativeLogLikelihoodLoss ------------------------------------------------------- */

TI__PRIVATE int ti__nll_shape(ti__kctx *k) {
    ti__loss_geom g;
    return ti__loss_setup(k, &g);
}

typedef struct ti__nll_ctx {
    const ti_tensor *x;
    const ti__loss_geom *g;
} ti__nll_ctx;

TI__PRIVATE double ti__nll_get(void *ctx, int64_t n, int64_t c, int64_t d) {
    const ti__nll_ctx *p = (const ti__nll_ctx *)ctx;
    return ti__get_f64(p->x, (size_t)((n * p->g->c + c) * p->g->d + d));
}

TI__PRIVATE ti_status ti__nll_run(ti__kctx *k) {
    ti__loss_geom g;
    int r = ti__loss_setup(k, &g);
    if (r != TI_OK) return (ti_status)r;
    ti__nll_ctx ctx;
    ctx.x = k->in[0];
    ctx.g = &g;
    return ti__loss_finish(k, &g, ti__nll_get, &ctx);
}

/* ---- SoftmaxCrossEntropyLoss --------------------------------------------------------- */
/* Log-softmax over axis 1 (classes, stride D). With the log_prob output the whole tensor is
 * written there and read back; without it, each needed value is computed on the fly from
 * the per-(n, d) max and log-sum-exp, which costs one pass over C per sample. */

TI__PRIVATE int ti__sce_shape(ti__kctx *k) {
    ti__loss_geom g;
    return ti__loss_setup(k, &g);
}

typedef struct ti__sce_ctx {
    const ti_tensor *x;
    const ti_tensor *logp; /* NULL: compute on the fly */
    const ti__loss_geom *g;
} ti__sce_ctx;

/* max and log(sum(exp(x - max))) over classes of sample (n, d). */
TI__PRIVATE void ti__sce_stats(const ti_tensor *x, const ti__loss_geom *g, int64_t n, int64_t d,
                               double *mx, double *lse) {
    size_t base = (size_t)(n * g->c * g->d + d), s = (size_t)g->d;
    double m = -HUGE_VAL;
    for (int64_t c = 0; c < g->c; c++) {
        double v = ti__get_f64(x, base + (size_t)c * s);
        if (v > m) m = v;
    }
    double sum = 0.0;
    for (int64_t c = 0; c < g->c; c++) sum += exp(ti__get_f64(x, base + (size_t)c * s) - m);
    *mx = m;
    *lse = log(sum);
}

TI__PRIVATE double ti__sce_get(void *ctx, int64_t n, int64_t c, int64_t d) {
    const ti__sce_ctx *p = (const ti__sce_ctx *)ctx;
    size_t i = (size_t)((n * p->g->c + c) * p->g->d + d);
    if (p->logp != NULL) return ti__get_f64(p->logp, i);
    double m, lse;
    ti__sce_stats(p->x, p->g, n, d, &m, &lse);
    return ti__get_f64(p->x, i) - m - lse;
}

TI__PRIVATE ti_status ti__sce_run(ti__kctx *k) {
    ti__loss_geom g;
    int r = ti__loss_setup(k, &g);
    if (r != TI_OK) return (ti_status)r;
    const ti_tensor *x = k->in[0];
    ti_tensor *logp = k->n_out > 1 ? k->out[1] : NULL;
    if (logp != NULL) {
        for (int64_t n = 0; n < g.n; n++) {
            for (int64_t d = 0; d < g.d; d++) {
                double m, lse;
                ti__sce_stats(x, &g, n, d, &m, &lse);
                for (int64_t c = 0; c < g.c; c++) {
                    size_t i = (size_t)((n * g.c + c) * g.d + d);
                    ti__set_f64(logp, i, ti__get_f64(x, i) - m - lse);
                }
            }
        }
    }
    ti__sce_ctx ctx;
    ctx.x = x;
    ctx.logp = logp;
    ctx.g = &g;
    return ti__loss_finish(k, &g, ti__sce_get, &ctx);
}

TI__PRIVATE const ti__op ti__ops_loss[] = {
    {"NegativeLogLikelihoodLoss", ti__nll_shape, ti__nll_run, NULL, 0},
    {"SoftmaxCrossEntropyLoss", ti__sce_shape, ti__sce_run, NULL, 0},
    {NULL, NULL, NULL, NULL, 0}
};
/* ==== end src/cpu/loss.c ==================================================================== */

/* ==== begin src/cpu/movement.c ============================================================== */
/* Data-movement kernels: Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout (inference),
 * Transpose, Concat, Split, Slice, Expand, Tile, Pad, CenterCropPad, DepthToSpace,
 * SpaceToDepth, Trilu, ReverseSequence and Col2Im. They move whole elements (ti_dtype_size
 * bytes), so every dtype with a size works; only Col2Im does arithmetic (float dtypes).
 * Relies on internal.h (kernel context, attributes, tensor helpers). Must not allocate in a
 * run function, nor read outside an input: shapes are validated in the shape functions. */

#define TI__MV_DIMS TI_MAX_DIMS
#define TI__MV_MAXR (2 * TI_MAX_DIMS) /* Tile gathers over [rep, dim] pairs */

/* ---- helpers --------------------------------------------------------------------------- */

/* Element size of t's dtype, or a failure for dtypes that have none (string, unknown). */
TI__PRIVATE ti_status ti__mv_esize(ti__kctx *k, const ti_tensor *t, size_t *es) {
    *es = ti_dtype_size(t->dtype);
    if (*es == 0)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "dtype %s is not supported",
                         ti_dtype_name(t->dtype));
    return TI_OK;
}

/* Normalises axis into [0, rank); 0 when out of range. */
TI__PRIVATE int ti__mv_axis(int64_t axis, int rank, int *out) {
    if (axis < -(int64_t)rank || axis >= rank) return 0;
    *out = (int)(axis < 0 ? axis + rank : axis);
    return 1;
}

/* Reads the values of an integer tensor of any rank into v (at most cap); -1 when longer. */
TI__PRIVATE int ti__mv_read_ints(const ti_tensor *t, int64_t *v, int cap) {
    size_t n = ti__numel(t);
    if (n > (size_t)cap) return -1;
    for (size_t i = 0; i < n; i++) v[i] = ti__get_i64(t, i);
    return (int)n;
}

/* Gets an integer list from input `idx` when present, else from attribute `name`.
 * Returns the count, -1 when absent, -2 when longer than cap. */
TI__PRIVATE int ti__mv_ints_arg(ti__kctx *k, int idx, const char *name, int64_t *v, int cap) {
    if (idx < k->n_in && k->in[idx] != NULL) {
        int n = ti__mv_read_ints(k->in[idx], v, cap);
        return n < 0 ? -2 : n;
    }
    int n = 0;
    const int64_t *a = name ? ti__attr_ints(k->node, name, &n) : NULL;
    if (a == NULL) return -1;
    if (n > cap) return -2;
    for (int i = 0; i < n; i++) v[i] = a[i];
    return n;
}

TI__PRIVATE void ti__mv_copy_elems(void *dst, const void *src, size_t n, size_t es) {
    if (n != 0) memcpy(dst, src, n * es);
}

/* Fills n elements of es bytes with the element at val. */
TI__PRIVATE void ti__mv_fill(void *dst, size_t n, const unsigned char *val, size_t es) {
    int zero = 1;
    for (size_t b = 0; b < es; b++) zero &= val[b] == 0;
    if (zero) {
        if (n != 0) memset(dst, 0, n * es);
        return;
    }
    unsigned char *d = (unsigned char *)dst;
    for (size_t i = 0; i < n; i++) memcpy(d + i * es, val, es);
}

/* Strided gather: dst (contiguous, shape dims) = src[off + sum(idx[i] * str[i])], strides in
 * elements. Serves Transpose, Slice, Expand, Tile, DepthToSpace and SpaceToDepth. */
typedef struct ti__mv_strided {
    unsigned char *dst;
    const unsigned char *src;
    size_t es;
    int rank; /* >= 1 after simplification */
    int64_t dims[TI__MV_MAXR], str[TI__MV_MAXR];
    int64_t off;
} ti__mv_strided;

TI__PRIVATE void ti__mv_strided_rows(void *ctx, size_t begin, size_t end) {
    const ti__mv_strided *s = (const ti__mv_strided *)ctx;
    int r = s->rank;
    int64_t n = s->dims[r - 1], is = s->str[r - 1], idx[TI__MV_MAXR];
    size_t es = s->es;
    /* position of row `begin` in the outer dims, and its source offset */
    int64_t off = s->off, rem = (int64_t)begin;
    for (int i = r - 2; i >= 0; i--) {
        idx[i] = rem % s->dims[i];
        rem /= s->dims[i];
        off += idx[i] * s->str[i];
    }
    unsigned char *d = s->dst + begin * (size_t)n * es;
    for (size_t row = begin; row < end; row++) {
        const unsigned char *p = s->src + off * (int64_t)es;
        if (is == 1) memcpy(d, p, (size_t)n * es);
        else if (es == 4) {
            uint32_t *o = (uint32_t *)(void *)d;
            for (int64_t j = 0; j < n; j++) memcpy(o + j, p + j * is * 4, 4);
        } else if (es == 2) {
            uint16_t *o = (uint16_t *)(void *)d;
            for (int64_t j = 0; j < n; j++) memcpy(o + j, p + j * is * 2, 2);
        } else if (es == 1) {
            for (int64_t j = 0; j < n; j++) d[j] = p[j * is];
        } else {
            for (int64_t j = 0; j < n; j++)
                memcpy(d + j * (int64_t)es, p + j * is * (int64_t)es, es);
        }
        d += (size_t)n * es;
        /* advance the outer index */
        for (int i = r - 2; i >= 0; i--) {
            off += s->str[i];
            if (++idx[i] < s->dims[i]) break;
            off -= idx[i] * s->str[i];
            idx[i] = 0;
        }
    }
}

TI__PRIVATE void ti__mv_strided_copy(ti__kctx *k, void *dst, const void *src, size_t es, int rank,
                                     const int64_t *dims, const int64_t *str, int64_t off) {
    ti__mv_strided s;
    s.dst = (unsigned char *)dst;
    s.src = (const unsigned char *)src;
    s.es = es;
    s.off = off;
    s.rank = 0;
    /* drop unit dims and merge dims that are contiguous in the source */
    for (int i = 0; i < rank; i++) {
        if (dims[i] == 0) return;
        if (dims[i] == 1) continue;
        if (s.rank > 0 && s.str[s.rank - 1] == str[i] * dims[i]) {
            s.dims[s.rank - 1] *= dims[i];
            s.str[s.rank - 1] = str[i];
            continue;
        }
        s.dims[s.rank] = dims[i];
        s.str[s.rank] = str[i];
        s.rank++;
    }
    if (s.rank == 0) {
        s.dims[0] = 1;
        s.str[0] = 1;
        s.rank = 1;
    }
    size_t rows = 1;
    for (int i = 0; i < s.rank - 1; i++) rows *= (size_t)s.dims[i];
    size_t n = (size_t)s.dims[s.rank - 1];
    ti__parallel_for(k->tp, rows, n >= 16384 ? 1 : 16384 / n, ti__mv_strided_rows, &s);
}

TI__PRIVATE ti_status ti__mv_set(ti__kctx *k, int i, ti_dtype dt, int rank, const int64_t *dims) {
    if (i >= k->n_out || k->out[i] == NULL) return TI_OK;
    if (!ti__set_shape(k->out[i], dt, rank, dims))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "output %d: rank %d or size is too large", i,
                         rank);
    return TI_OK;
}

/* Run of every op whose output is its input's bytes (Reshape, Flatten, Squeeze, ...). */
TI__PRIVATE ti_status ti__mv_copy_run(ti__kctx *k) {
    if (k->in[0]->size_bytes != 0) memcpy(k->out[0]->data, k->in[0]->data, k->in[0]->size_bytes);
    return TI_OK;
}

/* ---- Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout ---------------------------- */

TI__PRIVATE int ti__reshape_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    const ti_tensor *x = k->in[0];
    int64_t v[TI__MV_DIMS];
    if (k->n_in > 1 && k->in[1] != NULL) {
        TI__NEED(k, k->in[1]);
        if (k->in[1]->rank != 1)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "shape input has rank %d, expected 1",
                             k->in[1]->rank);
    }
    int n = ti__mv_ints_arg(k, 1, "shape", v, TI__MV_DIMS);
    if (n == -1) return ti__kfail(k, TI_ERR_BAD_MODEL, "no shape input or attribute");
    if (n == -2) return ti__kfail(k, TI_ERR_UNSUPPORTED, "target rank above %d", TI__MV_DIMS);
    int allowzero = (int)ti__attr_i(k->node, "allowzero", 0);
    int infer = -1;
    size_t known = 1, total = ti__numel(x);
    for (int i = 0; i < n; i++) {
        if (v[i] == 0 && !allowzero) {
            if (i >= x->rank)
                return ti__kfail(k, TI_ERR_BAD_MODEL,
                                 "shape[%d] = 0 copies input dim %d, but the input has rank %d",
                                 i, i, x->rank);
            v[i] = x->shape[i];
        }
        if (v[i] == -1) {
            if (infer >= 0)
                return ti__kfail(k, TI_ERR_BAD_MODEL, "shape has more than one -1 (at %d and %d)",
                                 infer, i);
            infer = i;
            continue;
        }
        if (v[i] < 0)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "shape[%d] = %lld is negative", i,
                             (long long)v[i]);
        if (!ti__mul_size(known, (size_t)v[i], &known))
            return ti__kfail(k, TI_ERR_BAD_MODEL, "shape overflows");
    }
    if (infer >= 0) {
        if (known == 0 || total % known != 0)
            return ti__kfail(k, TI_ERR_BAD_MODEL,
                             "cannot infer the -1 dim: %zu elements into a product of %zu", total,
                             known);
        v[infer] = (int64_t)(total / known);
    } else if (known != total) {
        return ti__kfail(k, TI_ERR_BAD_MODEL, "shape has %zu elements, the input has %zu", known,
                         total);
    }
    return ti__mv_set(k, 0, x->dtype, n, v);
}

TI__PRIVATE int ti__flatten_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    const ti_tensor *x = k->in[0];
    int64_t axis = ti__attr_i(k->node, "axis", 1);
    if (axis < 0) axis += x->rank;
    if (axis < 0 || axis > x->rank)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "axis %lld is out of range for rank %d",
                         (long long)ti__attr_i(k->node, "axis", 1), x->rank);
    int64_t d[2] = {1, 1};
    for (int i = 0; i < x->rank; i++) d[i < axis ? 0 : 1] *= x->shape[i];
    return ti__mv_set(k, 0, x->dtype, 2, d);
}

/* Axes of Squeeze / Unsqueeze: input 1 (opset >= 13) or attribute "axes". */
TI__PRIVATE int ti__mv_axes_arg(ti__kctx *k, int64_t *v, int *n) {
    if (k->n_in > 1 && k->in[1] != NULL) TI__NEED(k, k->in[1]);
    *n = ti__mv_ints_arg(k, 1, "axes", v, TI__MV_DIMS);
    if (*n == -2) return ti__kfail(k, TI_ERR_BAD_MODEL, "more than %d axes", TI__MV_DIMS);
    return TI_OK;
}

TI__PRIVATE int ti__squeeze_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    const ti_tensor *x = k->in[0];
    int64_t v[TI__MV_DIMS], d[TI__MV_DIMS];
    int n, st = ti__mv_axes_arg(k, v, &n), drop[TI__MV_DIMS] = {0}, r = 0;
    if (st != TI_OK) return st;
    if (n < 0) { /* no axes: every dim of size 1 */
        for (int i = 0; i < x->rank; i++) drop[i] = x->shape[i] == 1;
    }
    for (int i = 0; i < n; i++) {
        int a;
        if (!ti__mv_axis(v[i], x->rank, &a))
            return ti__kfail(k, TI_ERR_BAD_MODEL, "axis %lld is out of range for rank %d",
                             (long long)v[i], x->rank);
        if (x->shape[a] != 1)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "cannot squeeze axis %d of size %lld", a,
                             (long long)x->shape[a]);
        drop[a] = 1;
    }
    for (int i = 0; i < x->rank; i++)
        if (!drop[i]) d[r++] = x->shape[i];
    return ti__mv_set(k, 0, x->dtype, r, d);
}

TI__PRIVATE int ti__unsqueeze_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    const ti_tensor *x = k->in[0];
    int64_t v[TI__MV_DIMS], d[TI__MV_DIMS];
    int n, st = ti__mv_axes_arg(k, v, &n), ins[TI__MV_DIMS] = {0};
    if (st != TI_OK) return st;
    if (n < 0) return ti__kfail(k, TI_ERR_BAD_MODEL, "no axes input or attribute");
    int r = x->rank + n;
    if (r > TI__MV_DIMS) return ti__kfail(k, TI_ERR_UNSUPPORTED, "output rank %d above %d", r,
                                          TI__MV_DIMS);
    for (int i = 0; i < n; i++) {
        int a;
        if (!ti__mv_axis(v[i], r, &a))
            return ti__kfail(k, TI_ERR_BAD_MODEL, "axis %lld is out of range for output rank %d",
                             (long long)v[i], r);
        if (ins[a]) return ti__kfail(k, TI_ERR_BAD_MODEL, "axis %d is repeated", a);
        ins[a] = 1;
    }
    for (int i = 0, j = 0; i < r; i++) d[i] = ins[i] ? 1 : x->shape[j++];
    return ti__mv_set(k, 0, x->dtype, r, d);
}

TI__PRIVATE int ti__identity_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    size_t es;
    ti_status st = ti__mv_esize(k, k->in[0], &es);
    if (st != TI_OK) return st;
    return ti__mv_set(k, 0, k->in[0]->dtype, k->in[0]->rank, k->in[0]->shape);
}

/* Dropout at inference: y = x; the optional mask is all true (nothing dropped). Training mode
 * with a non-zero ratio (a random mask) is refused; with ratio 0 it drops nothing either. */
TI__PRIVATE int ti__dropout_training(ti__kctx *k) {
    const ti_tensor *t = k->n_in > 2 ? k->in[2] : NULL, *r = k->n_in > 1 ? k->in[1] : NULL;
    if (t == NULL || t->data == NULL || ti__numel(t) == 0 || ti__get_f64(t, 0) == 0.0) return 0;
    /* the default ratio is 0.5; an absent or unknown ratio counts as non-zero */
    return r == NULL || r->data == NULL || ti__numel(r) == 0 || ti__get_f64(r, 0) != 0.0;
}

TI__PRIVATE int ti__dropout_shape(ti__kctx *k) {
    int st = ti__identity_shape(k);
    if (st != TI_OK) return st;
    if (ti__dropout_training(k))
        return ti__kfail(k, TI_ERR_UNSUPPORTED,
                         "training_mode = true with a non-zero ratio (random dropout)");
    /* the mask is bool from opset 10, the input's dtype before */
    const ti_tensor *x = k->in[0];
    return ti__mv_set(k, 1, k->opset >= 10 ? TI_DTYPE_BOOL : x->dtype, x->rank, x->shape);
}

TI__PRIVATE ti_status ti__dropout_run(ti__kctx *k) {
    if (ti__dropout_training(k))
        return ti__kfail(k, TI_ERR_UNSUPPORTED,
                         "training_mode = true with a non-zero ratio (random dropout)");
    ti__mv_copy_run(k);
    if (k->n_out > 1 && k->out[1] != NULL) {
        ti_tensor *m = k->out[1];
        size_t n = ti__numel(m);
        for (size_t i = 0; i < n; i++) ti__set_f64(m, i, 1.0);
    }
    return TI_OK;
}

/* ---- Transpose ------------------------------------------------------------------------- */

TI__PRIVATE int ti__transpose_perm(ti__kctx *k, int *perm) {
    const ti_tensor *x = k->in[0];
    int n, seen[TI__MV_DIMS] = {0};
    const int64_t *p = ti__attr_ints(k->node, "perm", &n);
    if (p == NULL) {
        for (int i = 0; i < x->rank; i++) perm[i] = x->rank - 1 - i;
        return TI_OK;
    }
    if (n != x->rank)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "perm has %d entries, the input has rank %d", n,
                         x->rank);
    for (int i = 0; i < n; i++) {
        if (p[i] < 0 || p[i] >= n || seen[p[i]])
            return ti__kfail(k, TI_ERR_BAD_MODEL, "perm[%d] = %lld is not a permutation of 0..%d",
                             i, (long long)p[i], n - 1);
        seen[p[i]] = 1;
        perm[i] = (int)p[i];
    }
    return TI_OK;
}

TI__PRIVATE int ti__transpose_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    const ti_tensor *x = k->in[0];
    int perm[TI__MV_DIMS];
    int64_t d[TI__MV_DIMS];
    size_t es;
    ti_status st = ti__mv_esize(k, x, &es);
    if (st == TI_OK) st = (ti_status)ti__transpose_perm(k, perm);
    if (st != TI_OK) return st;
    for (int i = 0; i < x->rank; i++) d[i] = x->shape[perm[i]];
    return ti__mv_set(k, 0, x->dtype, x->rank, d);
}

TI__PRIVATE ti_status ti__transpose_run(ti__kctx *k) {
    const ti_tensor *x = k->in[0];
    int perm[TI__MV_DIMS];
    int64_t str[TI__MV_DIMS], d[TI__MV_DIMS], ps[TI__MV_DIMS];
    ti_status st = (ti_status)ti__transpose_perm(k, perm);
    if (st != TI_OK) return st;
    ti__strides(x->rank, x->shape, str);
    for (int i = 0; i < x->rank; i++) {
        d[i] = x->shape[perm[i]];
        ps[i] = str[perm[i]];
    }
    ti__mv_strided_copy(k, k->out[0]->data, x->data, ti_dtype_size(x->dtype), x->rank, d, ps, 0);
    return TI_OK;
}

/* ---- Concat, Split --------------------------------------------------------------------- */

TI__PRIVATE int ti__concat_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    const ti_tensor *x = k->in[0];
    size_t es;
    ti_status st = ti__mv_esize(k, x, &es);
    if (st != TI_OK) return st;
    int axis = 0;
    int64_t a = ti__attr_i(k->node, "axis", 0), d[TI__MV_DIMS];
    if (!ti__mv_axis(a, x->rank, &axis))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "axis %lld is out of range for rank %d",
                         (long long)a, x->rank);
    for (int i = 0; i < x->rank; i++) d[i] = x->shape[i];
    d[axis] = 0;
    for (int j = 0; j < k->n_in; j++) {
        const ti_tensor *t = k->in[j];
        if (t == NULL) return ti__kfail(k, TI_ERR_BAD_MODEL, "input %d is missing", j);
        if (t->dtype != x->dtype || t->rank != x->rank)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "input %d is %s rank %d, input 0 is %s rank %d",
                             j, ti_dtype_name(t->dtype), t->rank, ti_dtype_name(x->dtype),
                             x->rank);
        for (int i = 0; i < x->rank; i++)
            if (i != axis && t->shape[i] != x->shape[i])
                return ti__kfail(k, TI_ERR_BAD_MODEL,
                                 "input %d has dim %d = %lld, input 0 has %lld", j, i,
                                 (long long)t->shape[i], (long long)x->shape[i]);
        d[axis] += t->shape[axis];
    }
    return ti__mv_set(k, 0, x->dtype, x->rank, d);
}

TI__PRIVATE ti_status ti__concat_run(ti__kctx *k) {
    const ti_tensor *y = k->out[0];
    int axis = 0;
    ti__mv_axis(ti__attr_i(k->node, "axis", 0), y->rank, &axis);
    size_t es = ti_dtype_size(y->dtype), outer = 1, inner = 1;
    for (int i = 0; i < axis; i++) outer *= (size_t)y->shape[i];
    for (int i = axis + 1; i < y->rank; i++) inner *= (size_t)y->shape[i];
    size_t row_bytes = (size_t)y->shape[axis] * inner * es; /* one outer step of the output */
    size_t at = 0;
    for (int j = 0; j < k->n_in; j++) {
        const ti_tensor *t = k->in[j];
        size_t chunk = (size_t)t->shape[axis] * inner * es;
        for (size_t o = 0; o < outer && chunk != 0; o++)
            memcpy((unsigned char *)y->data + o * row_bytes + at,
                   (const unsigned char *)t->data + o * chunk, chunk);
        at += chunk;
    }
    return TI_OK;
}

/* Length of output i of Split along a dim of size d. */
TI__PRIVATE ti_status ti__split_len(ti__kctx *k, int64_t d, int i, int64_t *len) {
    const ti_tensor *s = k->n_in > 1 ? k->in[1] : NULL;
    int cnt;
    const int64_t *a = ti__attr_ints(k->node, "split", &cnt);
    if (s != NULL || a != NULL) {
        size_t n = s != NULL ? ti__numel(s) : (size_t)cnt;
        if (n != (size_t)k->n_out)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "split has %zu entries for %d outputs", n,
                             k->n_out);
        *len = s != NULL ? ti__get_i64(s, (size_t)i) : a[i];
        if (*len < 0)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "split[%d] = %lld is negative", i,
                             (long long)*len);
        return TI_OK;
    }
    int64_t parts = ti__attr_i(k->node, "num_outputs", 0);
    if (parts > 0) { /* opset 18: ceil-sized chunks, the last one smaller */
        if (parts != k->n_out)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "num_outputs = %lld but the node has %d outputs",
                             (long long)parts, k->n_out);
        int64_t chunk = (d + parts - 1) / parts, start = chunk * i;
        *len = start >= d ? 0 : TI__MIN(chunk, d - start);
        return TI_OK;
    }
    if (k->n_out <= 0 || d % k->n_out != 0)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "dim %lld does not split into %d equal parts",
                         (long long)d, k->n_out);
    *len = d / k->n_out;
    return TI_OK;
}

TI__PRIVATE int ti__split_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    const ti_tensor *x = k->in[0];
    size_t es;
    ti_status st = ti__mv_esize(k, x, &es);
    if (st != TI_OK) return st;
    if (k->n_in > 1 && k->in[1] != NULL) TI__NEED(k, k->in[1]);
    int axis = 0;
    int64_t a = ti__attr_i(k->node, "axis", 0), d[TI__MV_DIMS], sum = 0;
    if (!ti__mv_axis(a, x->rank, &axis))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "axis %lld is out of range for rank %d",
                         (long long)a, x->rank);
    for (int i = 0; i < x->rank; i++) d[i] = x->shape[i];
    for (int j = 0; j < k->n_out; j++) {
        st = ti__split_len(k, x->shape[axis], j, &d[axis]);
        if (st != TI_OK) return st;
        sum += d[axis];
        st = ti__mv_set(k, j, x->dtype, x->rank, d);
        if (st != TI_OK) return st;
    }
    if (sum != x->shape[axis])
        return ti__kfail(k, TI_ERR_BAD_MODEL, "split sizes add up to %lld, the dim is %lld",
                         (long long)sum, (long long)x->shape[axis]);
    return TI_OK;
}

TI__PRIVATE ti_status ti__split_run(ti__kctx *k) {
    const ti_tensor *x = k->in[0];
    int axis = 0;
    ti__mv_axis(ti__attr_i(k->node, "axis", 0), x->rank, &axis);
    size_t es = ti_dtype_size(x->dtype), outer = 1, inner = 1;
    for (int i = 0; i < axis; i++) outer *= (size_t)x->shape[i];
    for (int i = axis + 1; i < x->rank; i++) inner *= (size_t)x->shape[i];
    size_t row_bytes = (size_t)x->shape[axis] * inner * es, at = 0;
    for (int j = 0; j < k->n_out; j++) {
        int64_t len;
        ti_status st = ti__split_len(k, x->shape[axis], j, &len);
        if (st != TI_OK) return st;
        size_t chunk = (size_t)len * inner * es;
        if (k->out[j] != NULL)
            for (size_t o = 0; o < outer && chunk != 0; o++)
                memcpy((unsigned char *)k->out[j]->data + o * chunk,
                       (const unsigned char *)x->data + o * row_bytes + at, chunk);
        at += chunk;
    }
    return TI_OK;
}

/* ---- Slice ----------------------------------------------------------------------------- */

/* Per-axis start and step, and the output shape. Inputs (opset >= 10) or attributes. */
TI__PRIVATE int ti__slice_params(ti__kctx *k, int64_t *start, int64_t *step, int64_t *d) {
    const ti_tensor *x = k->in[0];
    int64_t st[TI__MV_DIMS], en[TI__MV_DIMS], ax[TI__MV_DIMS], sp[TI__MV_DIMS];
    for (int i = 1; i < 5 && i < k->n_in; i++) TI__NEED(k, k->in[i]);
    int ns = ti__mv_ints_arg(k, 1, "starts", st, TI__MV_DIMS);
    int ne = ti__mv_ints_arg(k, 2, "ends", en, TI__MV_DIMS);
    int na = ti__mv_ints_arg(k, 3, "axes", ax, TI__MV_DIMS);
    int np = k->n_in > 4 && k->in[4] != NULL ? ti__mv_read_ints(k->in[4], sp, TI__MV_DIMS) : -1;
    if (ns < 0 || ne != ns)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "starts (%d values) and ends (%d values) must be "
                         "given with the same length, at most %d", ns, ne, TI__MV_DIMS);
    if (k->n_in > 4 && k->in[4] != NULL && np < 0) np = -2; /* steps longer than the rank */
    if ((na >= 0 && na != ns) || (np != -1 && np != ns) || na == -2)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "axes (%d) / steps (%d) length differs from "
                         "starts (%d)", na, np, ns);
    int used[TI__MV_DIMS] = {0};
    for (int i = 0; i < x->rank; i++) {
        start[i] = 0;
        step[i] = 1;
        d[i] = x->shape[i];
    }
    for (int i = 0; i < ns; i++) {
        int a;
        int64_t axis = na >= 0 ? ax[i] : i;
        if (!ti__mv_axis(axis, x->rank, &a))
            return ti__kfail(k, TI_ERR_BAD_MODEL, "axis %lld is out of range for rank %d",
                             (long long)axis, x->rank);
        if (used[a]) return ti__kfail(k, TI_ERR_BAD_MODEL, "axis %d is repeated", a);
        used[a] = 1;
        int64_t dim = x->shape[a], s = st[i], e = en[i], p = np >= 0 ? sp[i] : 1, n;
        if (p == 0) return ti__kfail(k, TI_ERR_BAD_MODEL, "step of axis %d is 0", a);
        if (s < 0) s += dim;
        if (e < 0) e += dim;
        if (p > 0) { /* clamp into [0, dim] */
            s = s < 0 ? 0 : (s > dim ? dim : s);
            e = e < 0 ? 0 : (e > dim ? dim : e);
            n = e > s ? (e - s + p - 1) / p : 0;
        } else { /* clamp start into [0, dim-1], end into [-1, dim-1] */
            s = s < 0 ? 0 : (s > dim - 1 ? dim - 1 : s);
            e = e < -1 ? -1 : (e > dim - 1 ? dim - 1 : e);
            n = s > e ? (s - e + (-p) - 1) / (-p) : 0;
        }
        start[a] = n > 0 ? s : 0;
        step[a] = p;
        d[a] = n;
    }
    return TI_OK;
}

TI__PRIVATE int ti__slice_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    const ti_tensor *x = k->in[0];
    int64_t start[TI__MV_DIMS], step[TI__MV_DIMS], d[TI__MV_DIMS];
    size_t es;
    int st = ti__mv_esize(k, x, &es);
    if (st == TI_OK) st = ti__slice_params(k, start, step, d);
    if (st != TI_OK) return st;
    return ti__mv_set(k, 0, x->dtype, x->rank, d);
}

TI__PRIVATE ti_status ti__slice_run(ti__kctx *k) {
    const ti_tensor *x = k->in[0];
    int64_t start[TI__MV_DIMS], step[TI__MV_DIMS], d[TI__MV_DIMS], str[TI__MV_DIMS], off = 0;
    int st = ti__slice_params(k, start, step, d);
    if (st != TI_OK) return (ti_status)st;
    ti__strides(x->rank, x->shape, str);
    for (int i = 0; i < x->rank; i++) {
        off += start[i] * str[i];
        str[i] *= step[i];
    }
    ti__mv_strided_copy(k, k->out[0]->data, x->data, ti_dtype_size(x->dtype), x->rank, d, str,
                        off);
    return TI_OK;
}

/* ---- Expand, Tile ---------------------------------------------------------------------- */

TI__PRIVATE int ti__expand_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    const ti_tensor *x = k->in[0];
    size_t es;
    ti_status st = ti__mv_esize(k, x, &es);
    if (st != TI_OK) return st;
    TI__NEED(k, k->in[1]);
    int64_t v[TI__MV_DIMS], d[TI__MV_DIMS];
    int n = ti__mv_read_ints(k->in[1], v, TI__MV_DIMS), r;
    if (n < 0 || k->in[1]->rank != 1)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "shape input must be 1-D with at most %d values",
                         TI__MV_DIMS);
    for (int i = 0; i < n; i++)
        if (v[i] < 0)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "shape[%d] = %lld is negative", i,
                             (long long)v[i]);
    if (!ti__broadcast_shape(x->rank, x->shape, n, v, &r, d))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "input shape does not broadcast to the shape given");
    return ti__mv_set(k, 0, x->dtype, r, d);
}

TI__PRIVATE ti_status ti__expand_run(ti__kctx *k) {
    const ti_tensor *x = k->in[0], *y = k->out[0];
    int64_t str[TI__MV_DIMS], bs[TI__MV_DIMS];
    int lead = y->rank - x->rank;
    ti__strides(x->rank, x->shape, str);
    for (int i = 0; i < y->rank; i++) {
        int j = i - lead;
        bs[i] = j < 0 || x->shape[j] != y->shape[i] ? 0 : str[j];
    }
    ti__mv_strided_copy(k, y->data, x->data, ti_dtype_size(x->dtype), y->rank, y->shape, bs, 0);
    return TI_OK;
}

TI__PRIVATE int ti__tile_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    const ti_tensor *x = k->in[0];
    size_t es;
    ti_status st = ti__mv_esize(k, x, &es);
    if (st != TI_OK) return st;
    TI__NEED(k, k->in[1]);
    int64_t v[TI__MV_DIMS], d[TI__MV_DIMS];
    int n = ti__mv_read_ints(k->in[1], v, TI__MV_DIMS);
    if (n != x->rank)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "repeats has %d values, the input has rank %d", n,
                         x->rank);
    for (int i = 0; i < n; i++) {
        if (v[i] < 0)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "repeats[%d] = %lld is negative", i,
                             (long long)v[i]);
        if (v[i] != 0 && x->shape[i] > INT64_MAX / v[i])
            return ti__kfail(k, TI_ERR_BAD_MODEL, "repeats[%d] overflows", i);
        d[i] = x->shape[i] * v[i];
    }
    return ti__mv_set(k, 0, x->dtype, n, d);
}

TI__PRIVATE ti_status ti__tile_run(ti__kctx *k) {
    const ti_tensor *x = k->in[0], *y = k->out[0];
    int64_t str[TI__MV_DIMS], d[TI__MV_MAXR], s[TI__MV_MAXR];
    ti__strides(x->rank, x->shape, str);
    /* as a gather of shape [rep0, d0, rep1, d1, ...] with zero stride on the repeats */
    for (int i = 0; i < x->rank; i++) {
        d[2 * i] = x->shape[i] == 0 ? 0 : y->shape[i] / x->shape[i];
        s[2 * i] = 0;
        d[2 * i + 1] = x->shape[i];
        s[2 * i + 1] = str[i];
    }
    ti__mv_strided_copy(k, y->data, x->data, ti_dtype_size(x->dtype), 2 * x->rank, d, s, 0);
    return TI_OK;
}

/* ---- Pad, CenterCropPad ---------------------------------------------------------------- */

enum { TI__MV_PAD_CONSTANT, TI__MV_PAD_REFLECT, TI__MV_PAD_EDGE, TI__MV_PAD_WRAP };

/* What Pad needs at run time: pads per axis (negative crops), the mode and the fill value. */
typedef struct ti__pad_plan {
    int64_t pb[TI__MV_DIMS], pe[TI__MV_DIMS];
    int mode;
    unsigned char value[8];
} ti__pad_plan;

TI__PRIVATE int ti__pad_params(ti__kctx *k, ti__pad_plan *p) {
    const ti_tensor *x = k->in[0];
    int64_t pads[2 * TI__MV_DIMS], ax[TI__MV_DIMS];
    size_t es;
    ti_status st = ti__mv_esize(k, x, &es);
    if (st != TI_OK) return st;
    const char *mode = ti__attr_s(k->node, "mode", "constant");
    if (strcmp(mode, "constant") == 0) p->mode = TI__MV_PAD_CONSTANT;
    else if (strcmp(mode, "reflect") == 0) p->mode = TI__MV_PAD_REFLECT;
    else if (strcmp(mode, "edge") == 0) p->mode = TI__MV_PAD_EDGE;
    else if (strcmp(mode, "wrap") == 0) p->mode = TI__MV_PAD_WRAP;
    else return ti__kfail(k, TI_ERR_UNSUPPORTED, "mode '%s' is not supported", mode);
    if (k->n_in > 1 && k->in[1] != NULL) TI__NEED(k, k->in[1]);
    if (k->n_in > 3 && k->in[3] != NULL) TI__NEED(k, k->in[3]);
    int np = ti__mv_ints_arg(k, 1, "pads", pads, 2 * TI__MV_DIMS);
    if (np == -1) np = ti__mv_ints_arg(k, 99, "paddings", pads, 2 * TI__MV_DIMS); /* opset 1 */
    if (np < 0) return ti__kfail(k, TI_ERR_BAD_MODEL, "pads missing or longer than %d",
                                 2 * TI__MV_DIMS);
    int na = x->rank;
    if (k->n_in > 3 && k->in[3] != NULL) {
        na = ti__mv_read_ints(k->in[3], ax, TI__MV_DIMS);
        if (na < 0) return ti__kfail(k, TI_ERR_BAD_MODEL, "more than %d axes", TI__MV_DIMS);
    } else {
        for (int i = 0; i < na; i++) ax[i] = i;
    }
    if (np != 2 * na)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "pads has %d values, expected %d (2 x %d axes)",
                         np, 2 * na, na);
    for (int i = 0; i < x->rank; i++) p->pb[i] = p->pe[i] = 0;
    for (int i = 0; i < na; i++) {
        int a;
        if (!ti__mv_axis(ax[i], x->rank, &a))
            return ti__kfail(k, TI_ERR_BAD_MODEL, "axis %lld is out of range for rank %d",
                             (long long)ax[i], x->rank);
        p->pb[a] = pads[i];
        p->pe[a] = pads[na + i];
    }
    for (int i = 0; i < x->rank; i++) {
        int64_t d = x->shape[i], pb = p->pb[i], pe = p->pe[i];
        int64_t big = (int64_t)1 << 40;
        if (pb > big || pe > big || pb < -big || pe < -big || d + pb + pe < 0)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "pads %lld, %lld on axis %d of size %lld",
                             (long long)pb, (long long)pe, i, (long long)d);
        int64_t kept = d - TI__MAX(0, -pb) - TI__MAX(0, -pe); /* size after cropping */
        if (p->mode != TI__MV_PAD_CONSTANT && kept <= 0 && (pb > 0 || pe > 0))
            return ti__kfail(k, TI_ERR_INVALID_ARGUMENT,
                             "cannot pad an empty axis %d in mode '%s'", i, mode);
    }
    /* the fill value: input 2 (opset >= 11) or attribute "value", in the input's dtype */
    memset(p->value, 0, sizeof p->value);
    const ti_tensor *cv = k->n_in > 2 ? k->in[2] : NULL;
    if (cv != NULL && cv->data != NULL && ti__numel(cv) > 0) {
        if (cv->dtype != x->dtype)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "constant_value is %s, the input is %s",
                             ti_dtype_name(cv->dtype), ti_dtype_name(x->dtype));
        memcpy(p->value, cv->data, es);
    } else if (cv == NULL) {
        ti_tensor t;
        memset(&t, 0, sizeof t);
        t.dtype = x->dtype;
        t.data = p->value;
        ti__set_f64(&t, 0, (double)ti__attr_f(k->node, "value", 0.0f));
    }
    return TI_OK;
}

/* Maps an input coordinate c outside [lo, hi) (the part kept after cropping) into it. */
TI__PRIVATE int64_t ti__pad_map(int mode, int64_t c, int64_t lo, int64_t hi) {
    int64_t n = hi - lo, rel = c - lo;
    if (mode == TI__MV_PAD_EDGE) return rel < 0 ? lo : hi - 1;
    if (mode == TI__MV_PAD_WRAP) return lo + ((rel % n) + n) % n;
    if (n == 1) return lo; /* reflect */
    int64_t period = 2 * (n - 1);
    rel = ((rel % period) + period) % period;
    return lo + (rel >= n ? period - rel : rel);
}

TI__PRIVATE ti_status ti__pad_exec(ti__kctx *k, const ti__pad_plan *p) {
    const ti_tensor *x = k->in[0], *y = k->out[0];
    size_t es = ti_dtype_size(x->dtype), total = ti__numel(y);
    const unsigned char *src = (const unsigned char *)x->data;
    unsigned char *dst = (unsigned char *)y->data;
    int r = x->rank;
    if (total == 0) return TI_OK;
    if (r == 0) {
        memcpy(dst, src, es);
        return TI_OK;
    }
    int64_t str[TI__MV_DIMS], lo[TI__MV_DIMS], hi[TI__MV_DIMS], idx[TI__MV_DIMS];
    ti__strides(r, x->shape, str);
    for (int i = 0; i < r; i++) {
        lo[i] = TI__MAX(0, -p->pb[i]);
        hi[i] = x->shape[i] - TI__MAX(0, -p->pe[i]);
        idx[i] = 0;
    }
    int64_t n = y->shape[r - 1], pb = p->pb[r - 1];
    size_t rows = total / (size_t)n;
    for (size_t row = 0; row < rows; row++) {
        unsigned char *d = dst + row * (size_t)n * es;
        /* the input row of this output row, or none (constant fill) */
        int64_t off = 0;
        int fill = 0;
        for (int i = 0; i < r - 1; i++) {
            int64_t c = idx[i] - p->pb[i];
            if (c < lo[i] || c >= hi[i]) {
                if (p->mode == TI__MV_PAD_CONSTANT) fill = 1;
                else c = ti__pad_map(p->mode, c, lo[i], hi[i]);
            }
            off += c * str[i];
        }
        if (fill) {
            ti__mv_fill(d, (size_t)n, p->value, es);
        } else {
            const unsigned char *s = src + off * (int64_t)es;
            int64_t a = TI__MAX(0, lo[r - 1] + pb), b = TI__MIN(n, hi[r - 1] + pb); /* copied */
            if (b > a)
                memcpy(d + a * (int64_t)es, s + (a - pb) * (int64_t)es, (size_t)(b - a) * es);
            else
                a = b = 0;
            for (int64_t j = 0; j < n; j++) {
                if (j == a && b > a) j = b;
                if (j >= n) break;
                if (p->mode == TI__MV_PAD_CONSTANT) memcpy(d + j * (int64_t)es, p->value, es);
                else memcpy(d + j * (int64_t)es,
                            s + ti__pad_map(p->mode, j - pb, lo[r - 1], hi[r - 1]) * (int64_t)es,
                            es);
            }
        }
        for (int i = r - 2; i >= 0; i--) {
            if (++idx[i] < y->shape[i]) break;
            idx[i] = 0;
        }
    }
    return TI_OK;
}

TI__PRIVATE int ti__pad_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    ti__pad_plan p;
    int st = ti__pad_params(k, &p);
    if (st != TI_OK) return st;
    const ti_tensor *x = k->in[0];
    int64_t d[TI__MV_DIMS];
    for (int i = 0; i < x->rank; i++) d[i] = x->shape[i] + p.pb[i] + p.pe[i];
    return ti__mv_set(k, 0, x->dtype, x->rank, d);
}

TI__PRIVATE ti_status ti__pad_run(ti__kctx *k) {
    ti__pad_plan p;
    int st = ti__pad_params(k, &p);
    if (st != TI_OK) return (ti_status)st;
    return ti__pad_exec(k, &p);
}

/* CenterCropPad: a Pad with zeros whose pads centre the input (floor on the leading side). */
TI__PRIVATE int ti__ccp_params(ti__kctx *k, ti__pad_plan *p) {
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    const ti_tensor *x = k->in[0];
    size_t es;
    ti_status st = ti__mv_esize(k, x, &es);
    if (st != TI_OK) return st;
    TI__NEED(k, k->in[1]);
    int64_t v[TI__MV_DIMS], ax[TI__MV_DIMS];
    int n = ti__mv_read_ints(k->in[1], v, TI__MV_DIMS), na;
    const int64_t *a = ti__attr_ints(k->node, "axes", &na);
    if (a == NULL) {
        na = x->rank;
        for (int i = 0; i < na; i++) ax[i] = i;
    } else if (na <= TI__MV_DIMS) {
        for (int i = 0; i < na; i++) ax[i] = a[i];
    }
    if (n < 0 || na != n)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "shape has %d values for %d axes", n, na);
    memset(p, 0, sizeof *p);
    p->mode = TI__MV_PAD_CONSTANT;
    for (int i = 0; i < n; i++) {
        int axis = 0;
        if (!ti__mv_axis(ax[i], x->rank, &axis))
            return ti__kfail(k, TI_ERR_BAD_MODEL, "axis %lld is out of range for rank %d",
                             (long long)ax[i], x->rank);
        if (v[i] < 0)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "shape[%d] = %lld is negative", i,
                             (long long)v[i]);
        int64_t dim = x->shape[axis];
        p->pb[axis] = v[i] < dim ? -((dim - v[i]) / 2) : (v[i] - dim) / 2;
        p->pe[axis] = v[i] - dim - p->pb[axis];
    }
    return TI_OK;
}

TI__PRIVATE int ti__ccp_shape(ti__kctx *k) {
    ti__pad_plan p;
    int st = ti__ccp_params(k, &p);
    if (st != TI_OK) return st;
    const ti_tensor *x = k->in[0];
    int64_t d[TI__MV_DIMS];
    for (int i = 0; i < x->rank; i++) d[i] = x->shape[i] + p.pb[i] + p.pe[i];
    return ti__mv_set(k, 0, x->dtype, x->rank, d);
}

TI__PRIVATE ti_status ti__ccp_run(ti__kctx *k) {
    ti__pad_plan p;
    int st = ti__ccp_params(k, &p);
    if (st != TI_OK) return (ti_status)st;
    return ti__pad_exec(k, &p);
}

/* ---- DepthToSpace, SpaceToDepth -------------------------------------------------------- */

/* Both as a 6-D strided gather over the output. crd: the CRD channel order. */
TI__PRIVATE int ti__d2s_check(ti__kctx *k, int64_t *bs, int *crd) {
    TI__REQUIRE_INPUT(k, 0);
    const ti_tensor *x = k->in[0];
    size_t es;
    ti_status st = ti__mv_esize(k, x, &es);
    if (st != TI_OK) return st;
    if (x->rank != 4)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "input has rank %d, expected 4", x->rank);
    *bs = ti__attr_i(k->node, "blocksize", 0);
    if (*bs <= 0 || *bs > 65536)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "blocksize %lld is not positive",
                         (long long)*bs);
    const char *mode = ti__attr_s(k->node, "mode", "DCR");
    if (strcmp(mode, "DCR") != 0 && strcmp(mode, "CRD") != 0)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "mode '%s' is not supported", mode);
    *crd = strcmp(mode, "CRD") == 0;
    return TI_OK;
}

TI__PRIVATE int ti__d2s_shape(ti__kctx *k) {
    int64_t bs = 0;
    int crd, st = ti__d2s_check(k, &bs, &crd);
    if (st != TI_OK) return st;
    const int64_t *s = k->in[0]->shape;
    if (s[1] % (bs * bs) != 0)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "channels %lld are not a multiple of %lld",
                         (long long)s[1], (long long)(bs * bs));
    int64_t d[4] = {s[0], s[1] / (bs * bs), s[2] * bs, s[3] * bs};
    return ti__mv_set(k, 0, k->in[0]->dtype, 4, d);
}

TI__PRIVATE ti_status ti__d2s_run(ti__kctx *k) {
    int64_t bs = 0;
    int crd;
    ti__d2s_check(k, &bs, &crd);
    const ti_tensor *x = k->in[0];
    const int64_t *s = x->shape;
    int64_t c = s[1] / (bs * bs), sc = s[2] * s[3];
    /* output viewed as [n, c, h, b1, w, b2]; the input channel is (b1*bs + b2)*c + ci (DCR)
     * or ci*bs*bs + b1*bs + b2 (CRD) */
    int64_t d[6] = {s[0], c, s[2], bs, s[3], bs};
    int64_t st[6] = {s[1] * sc, crd ? bs * bs * sc : sc, s[3], crd ? bs * sc : bs * c * sc,
                     1, crd ? sc : c * sc};
    ti__mv_strided_copy(k, k->out[0]->data, x->data, ti_dtype_size(x->dtype), 6, d, st, 0);
    return TI_OK;
}

TI__PRIVATE int ti__s2d_shape(ti__kctx *k) {
    int64_t bs = 0;
    int crd, st = ti__d2s_check(k, &bs, &crd);
    if (st != TI_OK) return st;
    const int64_t *s = k->in[0]->shape;
    if (s[2] % bs != 0 || s[3] % bs != 0)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "spatial dims %lld x %lld are not multiples of %lld",
                         (long long)s[2], (long long)s[3], (long long)bs);
    int64_t d[4] = {s[0], s[1] * bs * bs, s[2] / bs, s[3] / bs};
    return ti__mv_set(k, 0, k->in[0]->dtype, 4, d);
}

TI__PRIVATE ti_status ti__s2d_run(ti__kctx *k) {
    int64_t bs = 0;
    int crd;
    ti__d2s_check(k, &bs, &crd);
    const ti_tensor *x = k->in[0];
    const int64_t *s = x->shape;
    int64_t sc = s[2] * s[3], sh = s[3];
    /* output viewed as [n, b1, b2, c, h', w'] (DCR) or [n, c, b1, b2, h', w'] (CRD) */
    int64_t d[6], st[6];
    d[0] = s[0];
    st[0] = s[1] * sc;
    int cpos = crd ? 1 : 3, b1 = crd ? 2 : 1;
    d[cpos] = s[1];
    st[cpos] = sc;
    d[b1] = bs;
    st[b1] = sh;
    d[b1 + 1] = bs;
    st[b1 + 1] = 1;
    d[4] = s[2] / bs;
    st[4] = bs * sh;
    d[5] = s[3] / bs;
    st[5] = bs;
    ti__mv_strided_copy(k, k->out[0]->data, x->data, ti_dtype_size(x->dtype), 6, d, st, 0);
    return TI_OK;
}

/* ---- Trilu, ReverseSequence ------------------------------------------------------------ */

TI__PRIVATE int ti__trilu_shape(ti__kctx *k) {
    int st = ti__identity_shape(k);
    if (st != TI_OK) return st;
    if (k->in[0]->rank < 2)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "input has rank %d, expected at least 2",
                         k->in[0]->rank);
    return TI_OK;
}

TI__PRIVATE ti_status ti__trilu_run(ti__kctx *k) {
    const ti_tensor *x = k->in[0];
    int r = x->rank;
    int64_t rows = x->shape[r - 2], cols = x->shape[r - 1], kk = 0;
    if (k->n_in > 1 && k->in[1] != NULL && ti__numel(k->in[1]) > 0) kk = ti__get_i64(k->in[1], 0);
    int upper = ti__attr_i(k->node, "upper", 1) != 0;
    int64_t lim = rows + cols + 1; /* clamp k so that i + k cannot overflow */
    kk = kk < -lim ? -lim : (kk > lim ? lim : kk);
    size_t es = ti_dtype_size(x->dtype);
    size_t mats = rows * cols == 0 ? 0 : ti__numel(x) / (size_t)(rows * cols);
    ti__mv_copy_run(k);
    unsigned char *y = (unsigned char *)k->out[0]->data;
    for (size_t m = 0; m < mats; m++)
        for (int64_t i = 0; i < rows; i++) {
            unsigned char *row = y + ((int64_t)m * rows + i) * cols * (int64_t)es;
            /* upper keeps j >= i + k; lower keeps j <= i + k */
            int64_t a = upper ? 0 : TI__MAX(0, i + kk + 1);
            int64_t b = upper ? TI__MIN(cols, TI__MAX(0, i + kk)) : cols;
            if (b > a) memset(row + a * (int64_t)es, 0, (size_t)(b - a) * es);
        }
    return TI_OK;
}

TI__PRIVATE int ti__revseq_axes(ti__kctx *k, int *ba, int *ta) {
    int64_t b = ti__attr_i(k->node, "batch_axis", 1), t = ti__attr_i(k->node, "time_axis", 0);
    if ((b != 0 && b != 1) || (t != 0 && t != 1) || b == t)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "batch_axis %lld and time_axis %lld must be 0 and "
                         "1 in some order", (long long)b, (long long)t);
    *ba = (int)b;
    *ta = (int)t;
    return TI_OK;
}

TI__PRIVATE int ti__revseq_shape(ti__kctx *k) {
    int st = ti__identity_shape(k), ba = 0, ta = 0;
    if (st == TI_OK) st = ti__revseq_axes(k, &ba, &ta);
    if (st != TI_OK) return st;
    TI__REQUIRE_INPUT(k, 1);
    const ti_tensor *x = k->in[0];
    if (x->rank < 2 || k->in[1]->rank != 1 || k->in[1]->shape[0] != x->shape[ba])
        return ti__kfail(k, TI_ERR_BAD_MODEL, "input rank %d or sequence_lens shape does not "
                         "match the batch dim", x->rank);
    return TI_OK;
}

TI__PRIVATE ti_status ti__revseq_run(ti__kctx *k) {
    const ti_tensor *x = k->in[0], *lens = k->in[1];
    int ba = 0, ta = 0;
    ti__revseq_axes(k, &ba, &ta);
    int64_t batch = x->shape[ba], time = x->shape[ta];
    size_t es = ti_dtype_size(x->dtype), inner = 1;
    for (int i = 2; i < x->rank; i++) inner *= (size_t)x->shape[i];
    for (int64_t b = 0; b < batch; b++) {
        int64_t len = ti__get_i64(lens, (size_t)b);
        if (len < 0 || len > time)
            return ti__kfail(k, TI_ERR_INVALID_ARGUMENT, "sequence_lens[%lld] = %lld is outside "
                             "[0, %lld]", (long long)b, (long long)len, (long long)time);
    }
    /* rows of `inner` elements at (b, t); row index = d0 * shape[1] + d1 */
    for (int64_t b = 0; b < batch; b++) {
        int64_t len = ti__get_i64(lens, (size_t)b);
        for (int64_t t = 0; t < time; t++) {
            int64_t ts = t < len ? len - 1 - t : t;
            int64_t dro = ta == 0 ? t * batch + b : b * time + t;
            int64_t sro = ta == 0 ? ts * batch + b : b * time + ts;
            ti__mv_copy_elems((unsigned char *)k->out[0]->data + (size_t)dro * inner * es,
                              (const unsigned char *)x->data + (size_t)sro * inner * es, inner, es);
        }
    }
    return TI_OK;
}

/* ---- Col2Im ---------------------------------------------------------------------------- */

/* input [N, C * prod(block), L] -> output [N, C, image...], summing overlapping blocks. */
typedef struct ti__col2im_plan {
    int ns; /* spatial dims */
    int64_t img[TI__MV_DIMS], blk[TI__MV_DIMS], dil[TI__MV_DIMS], str[TI__MV_DIMS];
    int64_t pad[TI__MV_DIMS], cnt[TI__MV_DIMS]; /* block positions per dim */
    int64_t c, blocks, l;
} ti__col2im_plan;

TI__PRIVATE int ti__col2im_params(ti__kctx *k, ti__col2im_plan *p) {
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    TI__REQUIRE_INPUT(k, 2);
    const ti_tensor *x = k->in[0];
    if (!ti__dtype_is_float(x->dtype))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "dtype %s is not supported",
                         ti_dtype_name(x->dtype));
    TI__NEED(k, k->in[1]);
    TI__NEED(k, k->in[2]);
    int ni = ti__mv_read_ints(k->in[1], p->img, TI__MV_DIMS - 2);
    int nb = ti__mv_read_ints(k->in[2], p->blk, TI__MV_DIMS - 2);
    if (ni <= 0 || ni != nb || x->rank != 3)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "image_shape (%d) and block_shape (%d) must have "
                         "the same length, input rank %d must be 3", ni, nb, x->rank);
    p->ns = ni;
    int nd, nst, np;
    const int64_t *dil = ti__attr_ints(k->node, "dilations", &nd);
    const int64_t *str = ti__attr_ints(k->node, "strides", &nst);
    const int64_t *pad = ti__attr_ints(k->node, "pads", &np);
    if ((dil && nd != ni) || (str && nst != ni) || (pad && np != 2 * ni))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "dilations/strides/pads lengths do not match %d "
                         "spatial dims", ni);
    p->blocks = 1;
    p->l = 1;
    for (int i = 0; i < ni; i++) {
        p->dil[i] = dil ? dil[i] : 1;
        p->str[i] = str ? str[i] : 1;
        p->pad[i] = pad ? pad[i] : 0;
        int64_t pe = pad ? pad[ni + i] : 0;
        if (p->dil[i] <= 0 || p->str[i] <= 0 || p->img[i] <= 0 || p->blk[i] <= 0 ||
            p->pad[i] < 0 || pe < 0 || p->img[i] > ((int64_t)1 << 40) ||
            p->blk[i] > ((int64_t)1 << 20) || p->dil[i] > ((int64_t)1 << 20))
            return ti__kfail(k, TI_ERR_BAD_MODEL, "bad image/block/stride/dilation/pad on "
                             "spatial dim %d", i);
        int64_t span = p->dil[i] * (p->blk[i] - 1) + 1;
        int64_t room = p->img[i] + p->pad[i] + pe - span;
        p->cnt[i] = room < 0 ? 0 : room / p->str[i] + 1;
        p->blocks *= p->blk[i];
        p->l *= p->cnt[i];
    }
    if (x->shape[1] % p->blocks != 0 || x->shape[2] != p->l)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "input shape [%lld, %lld, %lld] does not match "
                         "%lld block elements and %lld block positions", (long long)x->shape[0],
                         (long long)x->shape[1], (long long)x->shape[2], (long long)p->blocks,
                         (long long)p->l);
    p->c = x->shape[1] / p->blocks;
    return TI_OK;
}

TI__PRIVATE int ti__col2im_shape(ti__kctx *k) {
    ti__col2im_plan p;
    int st = ti__col2im_params(k, &p);
    if (st != TI_OK) return st;
    int64_t d[TI__MV_DIMS];
    d[0] = k->in[0]->shape[0];
    d[1] = p.c;
    for (int i = 0; i < p.ns; i++) d[2 + i] = p.img[i];
    return ti__mv_set(k, 0, k->in[0]->dtype, 2 + p.ns, d);
}

TI__PRIVATE ti_status ti__col2im_run(ti__kctx *k) {
    ti__col2im_plan p;
    int st = ti__col2im_params(k, &p);
    if (st != TI_OK) return (ti_status)st;
    const ti_tensor *x = k->in[0];
    ti_tensor *y = k->out[0];
    size_t total = ti__numel(y), img = 1;
    for (int i = 0; i < p.ns; i++) img *= (size_t)p.img[i];
    for (size_t i = 0; i < total; i++) ti__set_f64(y, i, 0.0);
    int f32 = x->dtype == TI_DTYPE_F32;
    size_t planes = (size_t)x->shape[0] * (size_t)p.c, src = 0;
    for (size_t nc = 0; nc < planes; nc++) {
        size_t base = nc * img;
        for (int64_t b = 0; b < p.blocks; b++) {
            int64_t bi[TI__MV_DIMS], rem = b;
            for (int i = p.ns - 1; i >= 0; i--) {
                bi[i] = rem % p.blk[i];
                rem /= p.blk[i];
            }
            for (int64_t l = 0; l < p.l; l++, src++) {
                int64_t li = l, off = 0, mul = 1;
                int inside = 1;
                for (int i = p.ns - 1; i >= 0; i--) {
                    int64_t pos = (li % p.cnt[i]) * p.str[i] - p.pad[i] + bi[i] * p.dil[i];
                    li /= p.cnt[i];
                    if (pos < 0 || pos >= p.img[i]) inside = 0;
                    off += pos * mul;
                    mul *= p.img[i];
                }
                if (!inside) continue;
                if (f32) ((float *)y->data)[base + (size_t)off] += ((const float *)x->data)[src];
                else ti__set_f64(y, base + (size_t)off,
                                 ti__get_f64(y, base + (size_t)off) + ti__get_f64(x, src));
            }
        }
    }
    return TI_OK;
}

TI__PRIVATE const ti__op ti__ops_movement[] = {
    {"Reshape", ti__reshape_shape, ti__mv_copy_run, NULL, 0},
    {"Flatten", ti__flatten_shape, ti__mv_copy_run, NULL, 0},
    {"Squeeze", ti__squeeze_shape, ti__mv_copy_run, NULL, 0},
    {"Unsqueeze", ti__unsqueeze_shape, ti__mv_copy_run, NULL, 0},
    {"Identity", ti__identity_shape, ti__mv_copy_run, NULL, 0},
    {"Dropout", ti__dropout_shape, ti__dropout_run, NULL, 0},
    {"Transpose", ti__transpose_shape, ti__transpose_run, NULL, 0},
    {"Concat", ti__concat_shape, ti__concat_run, NULL, 0},
    {"Split", ti__split_shape, ti__split_run, NULL, 0},
    {"Slice", ti__slice_shape, ti__slice_run, NULL, 0},
    {"Expand", ti__expand_shape, ti__expand_run, NULL, 0},
    {"Tile", ti__tile_shape, ti__tile_run, NULL, 0},
    {"Pad", ti__pad_shape, ti__pad_run, NULL, 0},
    {"CenterCropPad", ti__ccp_shape, ti__ccp_run, NULL, 0},
    {"DepthToSpace", ti__d2s_shape, ti__d2s_run, NULL, 0},
    {"SpaceToDepth", ti__s2d_shape, ti__s2d_run, NULL, 0},
    {"Trilu", ti__trilu_shape, ti__trilu_run, NULL, 0},
    {"ReverseSequence", ti__revseq_shape, ti__revseq_run, NULL, 0},
    {"Col2Im", ti__col2im_shape, ti__col2im_run, NULL, 0},
    {NULL, NULL, NULL, NULL, 0}
};
/* ==== end src/cpu/movement.c ================================================================ */

/* ==== begin src/cpu/norm.c ================================================================== */
/* Normalisations: BatchNormalization (inference), InstanceNormalization,
 * LayerNormalization, GroupNormalization, RMSNormalization, LRN, LpNormalization and
 * MeanVarianceNormalization. Statistics accumulate in double (two passes: mean, then
 * squared deviations). float32 data is read directly, other float dtypes through
 * ti__get_f64. Relies on tensor.c and the thread pool. Must not allocate. */

TI__PRIVATE int ti__norm_float_ok(ti_dtype t) {
    return t == TI_DTYPE_F32 || t == TI_DTYPE_F64 || t == TI_DTYPE_F16 || t == TI_DTYPE_BF16;
}

/* Element i of a float tensor (fast for float32). */
TI__PRIVATE double ti__norm_ld(const ti_tensor *t, size_t i) {
    return t->dtype == TI_DTYPE_F32 ? (double)((const float *)t->data)[i] : ti__get_f64(t, i);
}
TI__PRIVATE void ti__norm_st(ti_tensor *t, size_t i, double v) {
    if (t->dtype == TI_DTYPE_F32) ((float *)t->data)[i] = (float)v;
    else ti__set_f64(t, i, v);
}

TI__PRIVATE ti_status ti__norm_check_x(ti__kctx *k, int min_rank) {
    TI__REQUIRE_INPUT(k, 0);
    const ti_tensor *x = k->in[0];
    if (!ti__norm_float_ok(x->dtype))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "dtype %s is not supported",
                         ti_dtype_name(x->dtype));
    if (x->rank < min_rank)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "input has %d dims, expected at least %d", x->rank,
                         min_rank);
    return TI_OK;
}

/* A parameter input (float dtype) of exactly `want` elements. */
TI__PRIVATE ti_status ti__norm_check_param(ti__kctx *k, int i, const char *name, size_t want) {
    TI__REQUIRE_INPUT(k, i);
    const ti_tensor *t = k->in[i];
    if (!ti__norm_float_ok(t->dtype))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "%s has dtype %s", name, ti_dtype_name(t->dtype));
    if (ti__numel(t) != want)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "%s has %zu elements, expected %zu", name,
                         ti__numel(t), want);
    return TI_OK;
}

TI__PRIVATE ti_status ti__norm_same_shape(ti__kctx *k) {
    const ti_tensor *x = k->in[0];
    if (!ti__set_shape(k->out[0], x->dtype, x->rank, x->shape))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid output shape");
    return TI_OK;
}

/* Elements of dims [from, rank). */
TI__PRIVATE size_t ti__norm_inner(const ti_tensor *x, int from) {
    size_t n = 1;
    for (int i = from; i < x->rank; i++) n *= (size_t)x->shape[i];
    return n;
}

/* ---- BatchNormalization ------------------------------------------------------------- */

TI__PRIVATE int ti__bn_shape(ti__kctx *k) {
    ti_status e = ti__norm_check_x(k, 2);
    if (e != TI_OK) return e;
    if (ti__attr_i(k->node, "training_mode", 0) != 0)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "training_mode=1 is not supported");
    for (int i = 1; i < k->n_out; i++)
        if (k->out[i] != NULL)
            return ti__kfail(k, TI_ERR_UNSUPPORTED,
                             "training outputs (running mean / variance) are not supported");
    const ti_tensor *x = k->in[0];
    /* per channel; opset < 9 with spatial=0 has one value per (C, D1, ...) element */
    size_t want = ti__attr_i(k->node, "spatial", 1) == 0 ? ti__norm_inner(x, 1)
                                                          : (size_t)x->shape[1];
    static const char *const names[5] = {"", "scale", "B", "mean", "var"};
    for (int i = 1; i <= 4; i++)
        if ((e = ti__norm_check_param(k, i, names[i], want)) != TI_OK) return e;
    return ti__norm_same_shape(k);
}

typedef struct ti__norm_job {
    const ti__kctx *k;
    const ti_tensor *x, *scale, *bias;
    ti_tensor *y;
    size_t outer, inner, c; /* planes / lines, elements each, channels */
    double eps;
    int per_element; /* BatchNormalization spatial=0 */
    size_t groups;   /* GroupNormalization */
    int per_group_affine;
} ti__norm_job;

TI__PRIVATE void ti__bn_planes(void *ctx, size_t begin, size_t end) {
    const ti__norm_job *j = (const ti__norm_job *)ctx;
    ti_tensor *const *in = j->k->in;
    for (size_t pl = begin; pl < end; pl++) {
        size_t c = pl % j->c, o = pl * j->inner;
        if (!j->per_element) {
            double a = ti__norm_ld(in[1], c) / sqrt(ti__norm_ld(in[4], c) + j->eps);
            double b = ti__norm_ld(in[2], c) - ti__norm_ld(in[3], c) * a;
            if (j->x->dtype == TI_DTYPE_F32) {
                const float *x = (const float *)j->x->data + o;
                float *y = (float *)j->y->data + o, af = (float)a, bf = (float)b;
                for (size_t i = 0; i < j->inner; i++) y[i] = x[i] * af + bf;
            } else {
                for (size_t i = 0; i < j->inner; i++)
                    ti__set_f64(j->y, o + i, ti__get_f64(j->x, o + i) * a + b);
            }
        } else {
            size_t po = c * j->inner;
            for (size_t i = 0; i < j->inner; i++) {
                double a = ti__norm_ld(in[1], po + i) / sqrt(ti__norm_ld(in[4], po + i) + j->eps);
                double b = ti__norm_ld(in[2], po + i) - ti__norm_ld(in[3], po + i) * a;
                ti__norm_st(j->y, o + i, ti__norm_ld(j->x, o + i) * a + b);
            }
        }
    }
}

TI__PRIVATE ti_status ti__bn_run(ti__kctx *k) {
    ti__norm_job j;
    memset(&j, 0, sizeof j);
    j.k = k;
    j.x = k->in[0];
    j.y = k->out[0];
    j.c = (size_t)j.x->shape[1];
    j.inner = ti__norm_inner(j.x, 2);
    j.outer = (size_t)j.x->shape[0] * j.c;
    j.eps = ti__attr_f(k->node, "epsilon", 1e-5f);
    j.per_element = ti__attr_i(k->node, "spatial", 1) == 0 && j.inner > 1;
    ti__parallel_for(k->tp, j.outer, TI__MAX((size_t)1, 65536 / (j.inner + 1)), ti__bn_planes, &j);
    return TI_OK;
}

/* ---- Instance / Group normalisation: statistics over contiguous blocks --------------- */

/* Mean and population variance of n elements at offset o. */
TI__PRIVATE void ti__norm_stats(const ti_tensor *x, size_t o, size_t n, double *mean, double *var) {
    double s = 0, q = 0;
    if (x->dtype == TI_DTYPE_F32) {
        const float *p = (const float *)x->data + o;
        for (size_t i = 0; i < n; i++) s += p[i];
        double m = n ? s / (double)n : 0.0;
        for (size_t i = 0; i < n; i++) {
            double d = p[i] - m;
            q += d * d;
        }
        *mean = m;
    } else {
        for (size_t i = 0; i < n; i++) s += ti__get_f64(x, o + i);
        double m = n ? s / (double)n : 0.0;
        for (size_t i = 0; i < n; i++) {
            double d = ti__get_f64(x, o + i) - m;
            q += d * d;
        }
        *mean = m;
    }
    *var = n ? q / (double)n : 0.0;
}

/* y = (x - mean) * a + b on n elements at offset o, with a = scale * invstd folded in. */
TI__PRIVATE void ti__norm_affine(const ti_tensor *x, ti_tensor *y, size_t o, size_t n, double a,
                                 double b) {
    if (x->dtype == TI_DTYPE_F32) {
        const float *xp = (const float *)x->data + o;
        float *yp = (float *)y->data + o, af = (float)a, bf = (float)b;
        for (size_t i = 0; i < n; i++) yp[i] = xp[i] * af + bf;
    } else {
        for (size_t i = 0; i < n; i++) ti__set_f64(y, o + i, ti__get_f64(x, o + i) * a + b);
    }
}

TI__PRIVATE int ti__instnorm_shape(ti__kctx *k) {
    ti_status e = ti__norm_check_x(k, 3);
    if (e != TI_OK) return e;
    size_t c = (size_t)k->in[0]->shape[1];
    if ((e = ti__norm_check_param(k, 1, "scale", c)) != TI_OK) return e;
    if ((e = ti__norm_check_param(k, 2, "B", c)) != TI_OK) return e;
    return ti__norm_same_shape(k);
}

/* One (n, group) block per index: groups == C for InstanceNormalization. */
TI__PRIVATE void ti__groupnorm_blocks(void *ctx, size_t begin, size_t end) {
    const ti__norm_job *j = (const ti__norm_job *)ctx;
    size_t cpg = j->c / j->groups; /* channels per group */
    for (size_t bl = begin; bl < end; bl++) {
        size_t g = bl % j->groups, o = bl * cpg * j->inner;
        double mean, var;
        ti__norm_stats(j->x, o, cpg * j->inner, &mean, &var);
        double inv = 1.0 / sqrt(var + j->eps);
        for (size_t ci = 0; ci < cpg; ci++) {
            size_t c = g * cpg + ci, pi = j->per_group_affine ? g : c;
            double a = ti__norm_ld(j->scale, pi) * inv;
            double b = ti__norm_ld(j->bias, pi) - mean * a;
            ti__norm_affine(j->x, j->y, o + ci * j->inner, j->inner, a, b);
        }
    }
}

TI__PRIVATE ti_status ti__instnorm_run(ti__kctx *k) {
    ti__norm_job j;
    memset(&j, 0, sizeof j);
    j.k = k;
    j.x = k->in[0];
    j.y = k->out[0];
    j.scale = k->in[1];
    j.bias = k->in[2];
    j.c = (size_t)j.x->shape[1];
    j.groups = j.c;
    j.inner = ti__norm_inner(j.x, 2);
    j.eps = ti__attr_f(k->node, "epsilon", 1e-5f);
    size_t blocks = (size_t)j.x->shape[0] * j.c;
    ti__parallel_for(k->tp, blocks, TI__MAX((size_t)1, 16384 / (j.inner + 1)),
                     ti__groupnorm_blocks, &j);
    return TI_OK;
}

TI__PRIVATE int ti__groupnorm_shape(ti__kctx *k) {
    ti_status e = ti__norm_check_x(k, 2);
    if (e != TI_OK) return e;
    const ti_tensor *x = k->in[0];
    int64_t g = ti__attr_i(k->node, "num_groups", 0), c = x->shape[1];
    if (g < 1 || c % g != 0)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "num_groups %lld does not divide %lld channels",
                         (long long)g, (long long)c);
    /* opset 18: scale and bias per group; opset 21: per channel */
    size_t want = (size_t)(k->opset >= 21 ? c : g);
    TI__REQUIRE_INPUT(k, 1);
    if (ti__numel(k->in[1]) == (size_t)c) want = (size_t)c;
    if ((e = ti__norm_check_param(k, 1, "scale", want)) != TI_OK) return e;
    if ((e = ti__norm_check_param(k, 2, "bias", want)) != TI_OK) return e;
    return ti__norm_same_shape(k);
}

TI__PRIVATE ti_status ti__groupnorm_run(ti__kctx *k) {
    ti__norm_job j;
    memset(&j, 0, sizeof j);
    j.k = k;
    j.x = k->in[0];
    j.y = k->out[0];
    j.scale = k->in[1];
    j.bias = k->in[2];
    j.c = (size_t)j.x->shape[1];
    j.groups = (size_t)ti__attr_i(k->node, "num_groups", 1);
    j.per_group_affine = ti__numel(j.scale) != j.c;
    j.inner = ti__norm_inner(j.x, 2);
    j.eps = ti__attr_f(k->node, "epsilon", 1e-5f);
    size_t blocks = (size_t)j.x->shape[0] * j.groups;
    ti__parallel_for(k->tp, blocks, 1, ti__groupnorm_blocks, &j);
    return TI_OK;
}

/* ---- LayerNormalization and RMSNormalization: over the trailing dims from axis ------- */

/* Strides of a parameter (Scale, B) broadcast onto X's shape; 0 if not broadcastable. */
TI__PRIVATE int ti__norm_bcast(const ti_tensor *x, const ti_tensor *t, int64_t *st) {
    if (t->rank > x->rank) return 0;
    int64_t s = 1;
    for (int i = x->rank - 1; i >= 0; i--) {
        int ti = i - (x->rank - t->rank);
        int64_t d = ti >= 0 ? t->shape[ti] : 1;
        if (d != 1 && d != x->shape[i]) return 0;
        st[i] = d == 1 ? 0 : s;
        s *= d;
    }
    return 1;
}

/* ONNX TensorProto data type of stash_type to a dtype (float types only). */
TI__PRIVATE ti_dtype ti__norm_stash_dtype(int64_t t) {
    switch (t) {
    case 1: return TI_DTYPE_F32;
    case 10: return TI_DTYPE_F16;
    case 11: return TI_DTYPE_F64;
    case 16: return TI_DTYPE_BF16;
    default: return TI_DTYPE_UNKNOWN;
    }
}

TI__PRIVATE ti_status ti__norm_axis(ti__kctx *k, int *axis) {
    int r = k->in[0]->rank;
    int64_t a = ti__attr_i(k->node, "axis", -1);
    if (a < -r || a >= r)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "axis %lld is out of range for rank %d",
                         (long long)a, r);
    *axis = (int)(a < 0 ? a + r : a);
    return TI_OK;
}

TI__PRIVATE int ti__layernorm_shape_common(ti__kctx *k, int rms) {
    ti_status e = ti__norm_check_x(k, 1);
    if (e != TI_OK) return e;
    const ti_tensor *x = k->in[0];
    int axis = 0;
    if ((e = ti__norm_axis(k, &axis)) != TI_OK) return e;
    int64_t st[TI_MAX_DIMS];
    for (int i = 1; i <= (rms ? 1 : 2); i++) {
        if (i == 1) TI__REQUIRE_INPUT(k, 1);
        if (i >= k->n_in || k->in[i] == NULL) continue;
        if (!ti__norm_float_ok(k->in[i]->dtype))
            return ti__kfail(k, TI_ERR_UNSUPPORTED, "%s has dtype %s", i == 1 ? "Scale" : "B",
                             ti_dtype_name(k->in[i]->dtype));
        if (!ti__norm_bcast(x, k->in[i], st))
            return ti__kfail(k, TI_ERR_BAD_MODEL, "%s (rank %d) does not broadcast to X",
                             i == 1 ? "Scale" : "B", k->in[i]->rank);
    }
    if ((e = ti__norm_same_shape(k)) != TI_OK) return e;
    if (!rms && k->n_out > 1) { /* Mean, InvStdDev: [d0 .. d(axis-1), 1, ..., 1] */
        ti_dtype sd = ti__norm_stash_dtype(ti__attr_i(k->node, "stash_type", 1));
        if (sd == TI_DTYPE_UNKNOWN)
            return ti__kfail(k, TI_ERR_UNSUPPORTED, "stash_type %lld is not supported",
                             (long long)ti__attr_i(k->node, "stash_type", 1));
        int64_t dims[TI_MAX_DIMS];
        for (int i = 0; i < x->rank; i++) dims[i] = i < axis ? x->shape[i] : 1;
        for (int i = 1; i < k->n_out && i < 3; i++)
            if (k->out[i] != NULL && !ti__set_shape(k->out[i], sd, x->rank, dims))
                return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid output shape");
    }
    return TI_OK;
}
TI__PRIVATE int ti__layernorm_shape(ti__kctx *k) {
    return ti__layernorm_shape_common(k, 0);
}
TI__PRIVATE int ti__rmsnorm_shape(ti__kctx *k) {
    return ti__layernorm_shape_common(k, 1);
}

typedef struct ti__ln_job {
    const ti_tensor *x, *scale, *bias;
    ti_tensor *y, *mean, *inv;
    size_t inner;
    int rank;
    int64_t ss[TI_MAX_DIMS], bs[TI_MAX_DIMS]; /* broadcast strides of scale, bias */
    int fast;        /* scale / bias cover exactly the normalised dims, contiguous */
    double eps;
    int rms;
} ti__ln_job;

/* Offset of parameter element for X element i (general broadcast). */
TI__PRIVATE size_t ti__ln_param_off(const ti__ln_job *j, const int64_t *st, size_t i) {
    size_t off = 0;
    for (int d = j->rank - 1; d >= 0; d--) {
        size_t dim = (size_t)j->x->shape[d];
        off += (i % dim) * (size_t)st[d];
        i /= dim;
    }
    return off;
}

TI__PRIVATE void ti__ln_lines(void *ctx, size_t begin, size_t end) {
    const ti__ln_job *j = (const ti__ln_job *)ctx;
    size_t n = j->inner;
    for (size_t l = begin; l < end; l++) {
        size_t o = l * n;
        double mean = 0, var;
        if (j->rms) {
            double q = 0;
            for (size_t i = 0; i < n; i++) {
                double v = ti__norm_ld(j->x, o + i);
                q += v * v;
            }
            var = n ? q / (double)n : 0.0;
        } else {
            ti__norm_stats(j->x, o, n, &mean, &var);
        }
        double inv = 1.0 / sqrt(var + j->eps);
        if (j->mean != NULL) ti__set_f64(j->mean, l, mean);
        if (j->inv != NULL) ti__set_f64(j->inv, l, inv);
        if (j->fast && j->x->dtype == TI_DTYPE_F32 && j->scale->dtype == TI_DTYPE_F32 &&
            (j->bias == NULL || j->bias->dtype == TI_DTYPE_F32)) {
            const float *x = (const float *)j->x->data + o, *s = (const float *)j->scale->data;
            const float *b = j->bias != NULL ? (const float *)j->bias->data : NULL;
            float *y = (float *)j->y->data + o, m = (float)mean, iv = (float)inv;
            if (b != NULL)
                for (size_t i = 0; i < n; i++) y[i] = (x[i] - m) * iv * s[i] + b[i];
            else
                for (size_t i = 0; i < n; i++) y[i] = (x[i] - m) * iv * s[i];
            continue;
        }
        for (size_t i = 0; i < n; i++) {
            size_t e = o + i;
            size_t so = j->fast ? i : ti__ln_param_off(j, j->ss, e);
            double v = (ti__norm_ld(j->x, e) - mean) * inv * ti__norm_ld(j->scale, so);
            if (j->bias != NULL)
                v += ti__norm_ld(j->bias, j->fast ? i : ti__ln_param_off(j, j->bs, e));
            ti__norm_st(j->y, e, v);
        }
    }
}

TI__PRIVATE ti_status ti__layernorm_run_common(ti__kctx *k, int rms) {
    ti__ln_job j;
    memset(&j, 0, sizeof j);
    int axis = 0;
    ti_status e = ti__norm_axis(k, &axis);
    if (e != TI_OK) return e;
    j.x = k->in[0];
    j.y = k->out[0];
    j.scale = k->in[1];
    j.bias = !rms && k->n_in > 2 ? k->in[2] : NULL;
    j.mean = !rms && k->n_out > 1 ? k->out[1] : NULL;
    j.inv = !rms && k->n_out > 2 ? k->out[2] : NULL;
    j.rank = j.x->rank;
    j.inner = ti__norm_inner(j.x, axis);
    j.eps = ti__attr_f(k->node, "epsilon", 1e-5f);
    j.rms = rms;
    ti__norm_bcast(j.x, j.scale, j.ss);
    if (j.bias != NULL) ti__norm_bcast(j.x, j.bias, j.bs);
    /* fast: parameters vary along the normalised dims only, and along all of them */
    j.fast = ti__numel(j.scale) == j.inner && (j.bias == NULL || ti__numel(j.bias) == j.inner);
    for (int d = 0; d < axis && j.fast; d++)
        if (j.ss[d] != 0 || (j.bias != NULL && j.bs[d] != 0)) j.fast = 0;
    size_t lines = j.inner ? ti__numel(j.x) / j.inner : 0;
    ti__parallel_for(k->tp, lines, TI__MAX((size_t)1, 16384 / (j.inner + 1)), ti__ln_lines, &j);
    return TI_OK;
}
TI__PRIVATE ti_status ti__layernorm_run(ti__kctx *k) {
    return ti__layernorm_run_common(k, 0);
}
TI__PRIVATE ti_status ti__rmsnorm_run(ti__kctx *k) {
    return ti__layernorm_run_common(k, 1);
}

/* ---- LRN ----------------------------------------------------------------------------- */

TI__PRIVATE int ti__lrn_shape(ti__kctx *k) {
    ti_status e = ti__norm_check_x(k, 2);
    if (e != TI_OK) return e;
    if (ti__attr_i(k->node, "size", 0) < 1)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "size is %lld, expected >= 1",
                         (long long)ti__attr_i(k->node, "size", 0));
    return ti__norm_same_shape(k);
}

typedef struct ti__lrn_job {
    const ti_tensor *x;
    ti_tensor *y;
    size_t c, inner;
    int64_t size;
    double alpha, beta, bias;
} ti__lrn_job;

TI__PRIVATE void ti__lrn_planes(void *ctx, size_t begin, size_t end) {
    const ti__lrn_job *j = (const ti__lrn_job *)ctx;
    int64_t lo_off = (j->size - 1) / 2, hi_off = j->size / 2; /* floor and ceil of (size-1)/2 */
    for (size_t pl = begin; pl < end; pl++) {
        int64_t c = (int64_t)(pl % j->c);
        size_t base = (pl - (size_t)c) * j->inner; /* channel 0 of this sample */
        int64_t lo = TI__MAX((int64_t)0, c - lo_off), hi = TI__MIN((int64_t)j->c - 1, c + hi_off);
        for (size_t i = 0; i < j->inner; i++) {
            double sq = 0;
            for (int64_t cc = lo; cc <= hi; cc++) {
                double v = ti__norm_ld(j->x, base + (size_t)cc * j->inner + i);
                sq += v * v;
            }
            size_t e = base + (size_t)c * j->inner + i;
            double den = pow(j->bias + j->alpha / (double)j->size * sq, j->beta);
            ti__norm_st(j->y, e, ti__norm_ld(j->x, e) / den);
        }
    }
}

TI__PRIVATE ti_status ti__lrn_run(ti__kctx *k) {
    ti__lrn_job j;
    j.x = k->in[0];
    j.y = k->out[0];
    j.c = (size_t)j.x->shape[1];
    j.inner = ti__norm_inner(j.x, 2);
    j.size = ti__attr_i(k->node, "size", 1);
    j.alpha = ti__attr_f(k->node, "alpha", 1e-4f);
    j.beta = ti__attr_f(k->node, "beta", 0.75f);
    j.bias = ti__attr_f(k->node, "bias", 1.0f);
    size_t planes = (size_t)j.x->shape[0] * j.c;
    ti__parallel_for(k->tp, planes, TI__MAX((size_t)1, 4096 / (j.inner + 1)), ti__lrn_planes, &j);
    return TI_OK;
}

/* ---- LpNormalization ----------------------------------------------------------------- */

TI__PRIVATE int ti__lpnorm_shape(ti__kctx *k) {
    ti_status e = ti__norm_check_x(k, 1);
    if (e != TI_OK) return e;
    int axis = 0;
    if ((e = ti__norm_axis(k, &axis)) != TI_OK) return e;
    int64_t p = ti__attr_i(k->node, "p", 2);
    if (p != 1 && p != 2)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "p is %lld, only 1 and 2 are defined",
                         (long long)p);
    return ti__norm_same_shape(k);
}

typedef struct ti__lpn_job {
    const ti_tensor *x;
    ti_tensor *y;
    size_t len, inner; /* axis length; elements after the axis (its stride) */
    int p;
} ti__lpn_job;

TI__PRIVATE void ti__lpnorm_lines(void *ctx, size_t begin, size_t end) {
    const ti__lpn_job *j = (const ti__lpn_job *)ctx;
    for (size_t l = begin; l < end; l++) {
        size_t o = (l / j->inner) * j->len * j->inner + l % j->inner;
        double s = 0;
        for (size_t i = 0; i < j->len; i++) {
            double v = ti__norm_ld(j->x, o + i * j->inner);
            s += j->p == 1 ? fabs(v) : v * v;
        }
        double norm = j->p == 1 ? s : sqrt(s);
        for (size_t i = 0; i < j->len; i++) {
            size_t e = o + i * j->inner;
            ti__norm_st(j->y, e, norm == 0.0 ? 0.0 : ti__norm_ld(j->x, e) / norm);
        }
    }
}

TI__PRIVATE ti_status ti__lpnorm_run(ti__kctx *k) {
    int axis = 0;
    ti_status e = ti__norm_axis(k, &axis);
    if (e != TI_OK) return e;
    ti__lpn_job j;
    j.x = k->in[0];
    j.y = k->out[0];
    j.len = (size_t)j.x->shape[axis];
    j.inner = ti__norm_inner(j.x, axis + 1);
    j.p = (int)ti__attr_i(k->node, "p", 2);
    size_t lines = j.len ? ti__numel(j.x) / j.len : 0;
    ti__parallel_for(k->tp, lines, TI__MAX((size_t)1, 16384 / (j.len + 1)), ti__lpnorm_lines, &j);
    return TI_OK;
}

/* ---- MeanVarianceNormalization: (X - E[X]) / (sqrt(E[X^2] - E[X]^2) + 1e-9) over axes -- */

typedef struct ti__mvn_job {
    const ti_tensor *x;
    ti_tensor *y;
    int rank;
    unsigned reduced; /* bit per axis */
    size_t red_n;     /* elements reduced per output group */
} ti__mvn_job;

TI__PRIVATE ti_status ti__mvn_axes(ti__kctx *k, unsigned *mask) {
    int r = k->in[0]->rank, cnt;
    const int64_t *ax = ti__attr_ints(k->node, "axes", &cnt);
    static const int64_t def[3] = {0, 2, 3};
    if (ax == NULL) {
        ax = def;
        cnt = 3;
    }
    *mask = 0;
    for (int i = 0; i < cnt; i++) {
        int64_t a = ax[i] < 0 ? ax[i] + r : ax[i];
        if (a < 0 || a >= r)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "axis %lld is out of range for rank %d",
                             (long long)ax[i], r);
        *mask |= 1u << a;
    }
    return TI_OK;
}

TI__PRIVATE int ti__mvn_shape(ti__kctx *k) {
    ti_status e = ti__norm_check_x(k, 1);
    if (e != TI_OK) return e;
    unsigned mask;
    if ((e = ti__mvn_axes(k, &mask)) != TI_OK) return e;
    return ti__norm_same_shape(k);
}

/* Offset of the g-th kept position plus the t-th reduced position. */
TI__PRIVATE size_t ti__mvn_off(const ti__mvn_job *j, size_t g, size_t t) {
    size_t off = 0, mul = 1;
    for (int d = j->rank - 1; d >= 0; d--) {
        size_t dim = (size_t)j->x->shape[d], c;
        if (j->reduced & (1u << d)) {
            c = t % dim;
            t /= dim;
        } else {
            c = g % dim;
            g /= dim;
        }
        off += c * mul;
        mul *= dim;
    }
    return off;
}

TI__PRIVATE void ti__mvn_groups(void *ctx, size_t begin, size_t end) {
    const ti__mvn_job *j = (const ti__mvn_job *)ctx;
    for (size_t g = begin; g < end; g++) {
        double s = 0, q = 0;
        for (size_t t = 0; t < j->red_n; t++) {
            double v = ti__norm_ld(j->x, ti__mvn_off(j, g, t));
            s += v;
            q += v * v;
        }
        double mean = s / (double)j->red_n, var = q / (double)j->red_n - mean * mean;
        double den = sqrt(var > 0 ? var : 0) + 1e-9;
        for (size_t t = 0; t < j->red_n; t++) {
            size_t e = ti__mvn_off(j, g, t);
            ti__norm_st(j->y, e, (ti__norm_ld(j->x, e) - mean) / den);
        }
    }
}

TI__PRIVATE ti_status ti__mvn_run(ti__kctx *k) {
    ti__mvn_job j;
    j.x = k->in[0];
    j.y = k->out[0];
    j.rank = j.x->rank;
    ti_status e = ti__mvn_axes(k, &j.reduced);
    if (e != TI_OK) return e;
    j.red_n = 1;
    size_t groups = 1;
    for (int d = 0; d < j.rank; d++) {
        if (j.reduced & (1u << d)) j.red_n *= (size_t)j.x->shape[d];
        else groups *= (size_t)j.x->shape[d];
    }
    if (j.red_n == 0 || ti__numel(j.x) == 0) return TI_OK;
    ti__parallel_for(k->tp, groups, TI__MAX((size_t)1, 16384 / (j.red_n + 1)), ti__mvn_groups, &j);
    return TI_OK;
}

TI__PRIVATE const ti__op ti__ops_norm[] = {
    {"BatchNormalization", ti__bn_shape, ti__bn_run, NULL, 0},
    {"InstanceNormalization", ti__instnorm_shape, ti__instnorm_run, NULL, 0},
    {"LayerNormalization", ti__layernorm_shape, ti__layernorm_run, NULL, 0},
    {"GroupNormalization", ti__groupnorm_shape, ti__groupnorm_run, NULL, 0},
    {"RMSNormalization", ti__rmsnorm_shape, ti__rmsnorm_run, NULL, 0},
    {"LRN", ti__lrn_shape, ti__lrn_run, NULL, 0},
    {"LpNormalization", ti__lpnorm_shape, ti__lpnorm_run, NULL, 0},
    {"MeanVarianceNormalization", ti__mvn_shape, ti__mvn_run, NULL, 0},
    {NULL, NULL, NULL, NULL, 0}
};
/* ==== end src/cpu/norm.c ==================================================================== */

/* ==== begin src/cpu/pool.c ================================================================== */
/* Pooling: MaxPool (with optional Indices), AveragePool, LpPool over 1-D to 3-D spatial
 * windows (pads, auto_pad, strides, dilations, ceil_mode), their Global* forms, and
 * MaxUnpool. Spatial shapes are handled as 3-D (D, H, W) with leading 1s. Parallel over
 * the N*C planes. float32 reads its data directly; other dtypes go through ti__get_f64.
 * Must not allocate. */

typedef enum { TI__POOL_MAX, TI__POOL_AVG, TI__POOL_LP } ti__pool_kind;

/* Window geometry; slot 3 - nd + i holds spatial axis i (as in conv.c). */
typedef struct ti__poolp {
    int nd;
    int64_t nc; /* N*C planes */
    int64_t in[3], k[3], s[3], d[3], pb[3], pe[3], out[3];
    size_t in_sp, out_sp;
} ti__poolp;

TI__PRIVATE ti_status ti__pool_ints(ti__kctx *k, const char *name, int want, int64_t def,
                                    int64_t *out) {
    int cnt;
    const int64_t *v = ti__attr_ints(k->node, name, &cnt);
    if (v != NULL && cnt != want)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "%s has %d values, expected %d", name, cnt, want);
    for (int i = 0; i < want; i++) out[i] = v != NULL ? v[i] : def;
    return TI_OK;
}

/* Reads kernel_shape, strides, dilations, pads, auto_pad, ceil_mode; computes the output
 * spatial shape (ONNX MaxPool / AveragePool output-shape rules). */
TI__PRIVATE ti_status ti__pool_params(ti__kctx *k, ti__poolp *p) {
    const ti_tensor *x = k->in[0];
    memset(p, 0, sizeof *p);
    if (x->rank < 3)
        return ti__kfail(k, TI_ERR_BAD_MODEL,
                         "input has %d dims, expected at least 3 (N, C, spatial...)", x->rank);
    int nd = x->rank - 2;
    if (nd > 3)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "%d spatial dims (at most 3 are supported)", nd);
    int kc;
    const int64_t *ks = ti__attr_ints(k->node, "kernel_shape", &kc);
    if (ks == NULL) return ti__kfail(k, TI_ERR_BAD_MODEL, "kernel_shape is required");
    if (kc != nd)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "kernel_shape has %d values but the input has %d "
                         "spatial dims", kc, nd);
    int64_t st[3], dl[3], pads[6];
    ti_status e;
    if ((e = ti__pool_ints(k, "strides", nd, 1, st)) != TI_OK) return e;
    if ((e = ti__pool_ints(k, "dilations", nd, 1, dl)) != TI_OK) return e;
    if ((e = ti__pool_ints(k, "pads", 2 * nd, 0, pads)) != TI_OK) return e;
    int ceil_mode = ti__attr_i(k->node, "ceil_mode", 0) != 0;
    const char *ap = ti__attr_s(k->node, "auto_pad", "NOTSET");
    int mode;
    if (strcmp(ap, "NOTSET") == 0 || ap[0] == 0) mode = 0;
    else if (strcmp(ap, "SAME_UPPER") == 0) mode = 1;
    else if (strcmp(ap, "SAME_LOWER") == 0) mode = 2;
    else if (strcmp(ap, "VALID") == 0) mode = 3;
    else return ti__kfail(k, TI_ERR_BAD_MODEL, "auto_pad '%s' is not one of NOTSET, SAME_UPPER, "
                          "SAME_LOWER, VALID", ap);
    p->nd = nd;
    p->nc = x->shape[0] * x->shape[1];
    for (int i = 0; i < nd; i++) {
        int64_t in = x->shape[2 + i], pb = pads[i], pe = pads[nd + i], out;
        if (ks[i] < 1 || st[i] < 1 || dl[i] < 1)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "kernel %lld, stride %lld, dilation %lld on "
                             "axis %d must be >= 1", (long long)ks[i], (long long)st[i],
                             (long long)dl[i], i);
        if (pb < 0 || pe < 0) return ti__kfail(k, TI_ERR_BAD_MODEL, "negative pad on axis %d", i);
        int64_t ek = (ks[i] - 1) * dl[i] + 1;
        if (mode == 1 || mode == 2) { /* same for either ceil_mode */
            out = (in + st[i] - 1) / st[i];
            int64_t tot = (out - 1) * st[i] + ek - in;
            if (tot < 0) tot = 0;
            pb = mode == 1 ? tot / 2 : tot - tot / 2;
            pe = tot - pb;
        } else {
            if (mode == 3) pb = pe = 0;
            int64_t span = in + pb + pe - ek;
            if (span < 0) out = 0;
            else if (!ceil_mode) out = span / st[i] + 1;
            else {
                out = (span + st[i] - 1) / st[i] + 1;
                /* the last window must start inside the input or the left padding */
                if ((out - 1) * st[i] >= in + pb) out--;
            }
        }
        if (out <= 0)
            return ti__kfail(k, TI_ERR_BAD_MODEL,
                             "output size on spatial axis %d would be %lld (input %lld, kernel "
                             "%lld, stride %lld, dilation %lld, pads %lld+%lld)",
                             i, (long long)out, (long long)in, (long long)ks[i], (long long)st[i],
                             (long long)dl[i], (long long)pb, (long long)pe);
        int j = 3 - nd + i;
        p->in[j] = in;
        p->k[j] = ks[i];
        p->s[j] = st[i];
        p->d[j] = dl[i];
        p->pb[j] = pb;
        p->pe[j] = pe;
        p->out[j] = out;
    }
    for (int j = 0; j < 3 - nd; j++) {
        p->in[j] = p->k[j] = p->s[j] = p->d[j] = p->out[j] = 1;
        p->pb[j] = p->pe[j] = 0;
    }
    p->in_sp = (size_t)(p->in[0] * p->in[1] * p->in[2]);
    p->out_sp = (size_t)(p->out[0] * p->out[1] * p->out[2]);
    return TI_OK;
}

TI__PRIVATE int ti__pool_float_ok(ti_dtype t) {
    return t == TI_DTYPE_F32 || t == TI_DTYPE_F64 || t == TI_DTYPE_F16 || t == TI_DTYPE_BF16;
}

TI__PRIVATE int ti__pool_shape_common(ti__kctx *k, ti__pool_kind kind) {
    TI__REQUIRE_INPUT(k, 0);
    const ti_tensor *x = k->in[0];
    int ok = ti__pool_float_ok(x->dtype) ||
             (kind == TI__POOL_MAX && (x->dtype == TI_DTYPE_U8 || x->dtype == TI_DTYPE_I8));
    if (!ok)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "dtype %s is not supported",
                         ti_dtype_name(x->dtype));
    ti__poolp p;
    ti_status e = ti__pool_params(k, &p);
    if (e != TI_OK) return e;
    int64_t dims[5];
    dims[0] = x->shape[0];
    dims[1] = x->shape[1];
    for (int i = 0; i < p.nd; i++) dims[2 + i] = p.out[3 - p.nd + i];
    if (!ti__set_shape(k->out[0], x->dtype, x->rank, dims))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid output shape");
    if (kind == TI__POOL_MAX && k->n_out > 1 && k->out[1] != NULL) {
        int64_t so = ti__attr_i(k->node, "storage_order", 0);
        if (so != 0 && so != 1)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "storage_order is %lld, expected 0 or 1",
                             (long long)so);
        if (!ti__set_shape(k->out[1], TI_DTYPE_I64, x->rank, dims))
            return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid indices shape");
    }
    return TI_OK;
}
TI__PRIVATE int ti__maxpool_shape(ti__kctx *k) {
    return ti__pool_shape_common(k, TI__POOL_MAX);
}
TI__PRIVATE int ti__avgpool_shape(ti__kctx *k) {
    return ti__pool_shape_common(k, TI__POOL_AVG);
}
TI__PRIVATE int ti__lppool_shape(ti__kctx *k) {
    return ti__pool_shape_common(k, TI__POOL_LP);
}

typedef struct ti__pool_job {
    const ti__poolp *p;
    ti__pool_kind kind;
    const ti_tensor *x;
    ti_tensor *y;
    int64_t *idx;  /* MaxPool indices, or NULL */
    int col_major; /* storage_order 1 */
    int include_pad;
    double lp;
} ti__pool_job;

/* Kernel taps kk in [lo, hi) of one axis whose position o*s - pb + kk*d lies in [0, n);
 * *hi_pad: taps inside the explicitly padded extent [-pb, n + pe). */
TI__PRIVATE void ti__pool_taps(const ti__poolp *p, int j, int64_t o, int64_t *lo, int64_t *hi,
                               int64_t *hi_pad) {
    int64_t start = o * p->s[j] - p->pb[j], d = p->d[j], n = p->in[j];
    int64_t a = start >= 0 ? 0 : (-start + d - 1) / d;
    int64_t b = n - start <= 0 ? 0 : (n - start + d - 1) / d;
    int64_t c = n + p->pe[j] - start <= 0 ? 0 : (n + p->pe[j] - start + d - 1) / d;
    *lo = TI__MIN(a, p->k[j]);
    *hi = TI__MAX(*lo, TI__MIN(b, p->k[j]));
    *hi_pad = TI__MIN(c, p->k[j]);
}

TI__PRIVATE void ti__pool_planes(void *ctx, size_t begin, size_t end) {
    const ti__pool_job *j = (const ti__pool_job *)ctx;
    const ti__poolp *p = j->p;
    const float *xf = j->x->dtype == TI_DTYPE_F32 ? (const float *)j->x->data : NULL;
    float *yf = j->y->dtype == TI_DTYPE_F32 ? (float *)j->y->data : NULL;
    for (size_t pl = begin; pl < end; pl++) {
        size_t xo = pl * p->in_sp, yo = pl * p->out_sp;
        for (int64_t od = 0; od < p->out[0]; od++) {
            int64_t dlo, dhi, dpad;
            ti__pool_taps(p, 0, od, &dlo, &dhi, &dpad);
            for (int64_t oh = 0; oh < p->out[1]; oh++) {
                int64_t hlo, hhi, hpad;
                ti__pool_taps(p, 1, oh, &hlo, &hhi, &hpad);
                for (int64_t ow = 0; ow < p->out[2]; ow++, yo++) {
                    int64_t wlo, whi, wpad;
                    ti__pool_taps(p, 2, ow, &wlo, &whi, &wpad);
                    double acc = j->kind == TI__POOL_MAX ? -HUGE_VAL : 0.0;
                    int64_t best = -1;
                    for (int64_t kd = dlo; kd < dhi; kd++) {
                        int64_t id = od * p->s[0] - p->pb[0] + kd * p->d[0];
                        for (int64_t kh = hlo; kh < hhi; kh++) {
                            int64_t ih = oh * p->s[1] - p->pb[1] + kh * p->d[1];
                            size_t row = (size_t)((id * p->in[1] + ih) * p->in[2]);
                            for (int64_t kw = wlo; kw < whi; kw++) {
                                int64_t iw = ow * p->s[2] - p->pb[2] + kw * p->d[2];
                                size_t xi = row + (size_t)iw;
                                double v = xf != NULL ? (double)xf[xo + xi]
                                                      : ti__get_f64(j->x, xo + xi);
                                if (j->kind == TI__POOL_MAX) {
                                    if (v > acc || best < 0) {
                                        acc = v;
                                        /* storage_order 1: column-major spatial index */
                                        best = !j->col_major ? (int64_t)xi
                                               : p->nd == 1  ? iw
                                               : p->nd == 2  ? ih + iw * p->in[1]
                                                             : id + (ih + iw * p->in[1]) * p->in[0];
                                    }
                                } else if (j->kind == TI__POOL_AVG) {
                                    acc += v;
                                } else {
                                    acc += pow(fabs(v), j->lp);
                                }
                            }
                        }
                    }
                    if (j->kind == TI__POOL_AVG) {
                        int64_t cnt = j->include_pad ? dpad * hpad * wpad
                                                     : (dhi - dlo) * (hhi - hlo) * (whi - wlo);
                        acc = cnt > 0 ? acc / (double)cnt : 0.0;
                    } else if (j->kind == TI__POOL_LP) {
                        acc = pow(acc, 1.0 / j->lp);
                    } else if (best < 0) {
                        acc = 0.0; /* a window entirely in padding */
                    }
                    if (yf != NULL) yf[yo] = (float)acc;
                    else ti__set_f64(j->y, yo, acc);
                    if (j->idx != NULL) j->idx[yo] = best < 0 ? -1 : (int64_t)xo + best;
                }
            }
        }
    }
}

TI__PRIVATE ti_status ti__pool_run_common(ti__kctx *k, ti__pool_kind kind) {
    ti__poolp p;
    ti_status e = ti__pool_params(k, &p);
    if (e != TI_OK) return e;
    ti__pool_job j;
    memset(&j, 0, sizeof j);
    j.p = &p;
    j.kind = kind;
    j.x = k->in[0];
    j.y = k->out[0];
    if (kind == TI__POOL_MAX && k->n_out > 1 && k->out[1] != NULL) {
        j.idx = (int64_t *)k->out[1]->data;
        j.col_major = ti__attr_i(k->node, "storage_order", 0) == 1;
    }
    j.include_pad = ti__attr_i(k->node, "count_include_pad", 0) != 0;
    j.lp = ti__attr_f(k->node, "p", 2.0f);
    if (kind == TI__POOL_LP && !(j.lp > 0.0))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "p is %g, expected > 0", j.lp);
    size_t work = p.out_sp * (size_t)(p.k[0] * p.k[1] * p.k[2]);
    ti__parallel_for(k->tp, (size_t)p.nc, TI__MAX((size_t)1, 65536 / (work + 1)),
                     ti__pool_planes, &j);
    return TI_OK;
}
TI__PRIVATE ti_status ti__maxpool_run(ti__kctx *k) {
    return ti__pool_run_common(k, TI__POOL_MAX);
}
TI__PRIVATE ti_status ti__avgpool_run(ti__kctx *k) {
    return ti__pool_run_common(k, TI__POOL_AVG);
}
TI__PRIVATE ti_status ti__lppool_run(ti__kctx *k) {
    return ti__pool_run_common(k, TI__POOL_LP);
}

/* ---- GlobalAveragePool, GlobalMaxPool, GlobalLpPool --------------------------------- */

TI__PRIVATE int ti__gpool_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    const ti_tensor *x = k->in[0];
    if (!ti__pool_float_ok(x->dtype))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "dtype %s is not supported",
                         ti_dtype_name(x->dtype));
    if (x->rank < 2)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "input has %d dims, expected at least 2 (N, C)",
                         x->rank);
    int64_t dims[TI_MAX_DIMS];
    for (int i = 0; i < x->rank; i++) dims[i] = i < 2 ? x->shape[i] : 1;
    if (!ti__set_shape(k->out[0], x->dtype, x->rank, dims))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid output shape");
    return TI_OK;
}

typedef struct ti__gpool_job {
    const ti_tensor *x;
    ti_tensor *y;
    size_t sp;
    int kind;
    double lp;
} ti__gpool_job;

TI__PRIVATE void ti__gpool_planes(void *ctx, size_t begin, size_t end) {
    const ti__gpool_job *j = (const ti__gpool_job *)ctx;
    const float *xf = j->x->dtype == TI_DTYPE_F32 ? (const float *)j->x->data : NULL;
    for (size_t pl = begin; pl < end; pl++) {
        size_t o = pl * j->sp;
        double acc = j->kind == TI__POOL_MAX ? -HUGE_VAL : 0.0;
        if (xf != NULL && j->kind == TI__POOL_AVG) {
            float s0 = 0, s1 = 0, s2 = 0, s3 = 0; /* four chains: vectorisable */
            size_t i = 0;
            for (; i + 4 <= j->sp; i += 4) {
                s0 += xf[o + i];
                s1 += xf[o + i + 1];
                s2 += xf[o + i + 2];
                s3 += xf[o + i + 3];
            }
            for (; i < j->sp; i++) s0 += xf[o + i];
            acc = (double)((s0 + s1) + (s2 + s3));
        } else {
            for (size_t i = 0; i < j->sp; i++) {
                double v = xf != NULL ? (double)xf[o + i] : ti__get_f64(j->x, o + i);
                if (j->kind == TI__POOL_MAX) acc = (v > acc || i == 0) ? v : acc;
                else if (j->kind == TI__POOL_AVG) acc += v;
                else acc += pow(fabs(v), j->lp);
            }
        }
        if (j->kind == TI__POOL_AVG) acc = j->sp ? acc / (double)j->sp : 0.0;
        else if (j->kind == TI__POOL_LP) acc = pow(acc, 1.0 / j->lp);
        ti__set_f64(j->y, pl, acc);
    }
}

TI__PRIVATE ti_status ti__gpool_run_common(ti__kctx *k, ti__pool_kind kind) {
    ti__gpool_job j;
    j.x = k->in[0];
    j.y = k->out[0];
    j.kind = (int)kind;
    j.lp = ti__attr_f(k->node, "p", 2.0f);
    if (kind == TI__POOL_LP && !(j.lp > 0.0))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "p is %g, expected > 0", j.lp);
    size_t planes = (size_t)(j.x->shape[0] * j.x->shape[1]);
    j.sp = planes ? ti__numel(j.x) / planes : 0;
    ti__parallel_for(k->tp, planes, TI__MAX((size_t)1, 65536 / (j.sp + 1)), ti__gpool_planes, &j);
    return TI_OK;
}
TI__PRIVATE ti_status ti__gavgpool_run(ti__kctx *k) {
    return ti__gpool_run_common(k, TI__POOL_AVG);
}
TI__PRIVATE ti_status ti__gmaxpool_run(ti__kctx *k) {
    return ti__gpool_run_common(k, TI__POOL_MAX);
}
TI__PRIVATE ti_status ti__glppool_run(ti__kctx *k) {
    return ti__gpool_run_common(k, TI__POOL_LP);
}

/* ---- MaxUnpool ----------------------------------------------------------------------- */

/* The unpooled shape implied by the attributes: (in - 1) * stride - pads + kernel. */
TI__PRIVATE ti_status ti__unpool_inferred(ti__kctx *k, int64_t *dims) {
    const ti_tensor *x = k->in[0];
    if (x->rank < 3)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "input has %d dims, expected at least 3", x->rank);
    int nd = x->rank - 2, kc;
    const int64_t *ks = ti__attr_ints(k->node, "kernel_shape", &kc);
    if (ks == NULL || kc != nd)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "kernel_shape has %d values, expected %d", kc, nd);
    int64_t st[TI_MAX_DIMS], pads[2 * TI_MAX_DIMS];
    ti_status e;
    if ((e = ti__pool_ints(k, "strides", nd, 1, st)) != TI_OK) return e;
    if ((e = ti__pool_ints(k, "pads", 2 * nd, 0, pads)) != TI_OK) return e;
    dims[0] = x->shape[0];
    dims[1] = x->shape[1];
    for (int i = 0; i < nd; i++) {
        dims[2 + i] = (x->shape[2 + i] - 1) * st[i] - pads[i] - pads[nd + i] + ks[i];
        if (dims[2 + i] <= 0)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "unpooled dim %d would be %lld", i,
                             (long long)dims[2 + i]);
    }
    return TI_OK;
}

TI__PRIVATE int ti__unpool_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    const ti_tensor *x = k->in[0], *ind = k->in[1];
    const ti_tensor *os = k->n_in > 2 ? k->in[2] : NULL;
    if (!ti__pool_float_ok(x->dtype))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "dtype %s is not supported",
                         ti_dtype_name(x->dtype));
    if (ind->dtype != TI_DTYPE_I64 || ti__numel(ind) != ti__numel(x))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "indices must be int64 with the shape of X");
    int64_t dims[TI_MAX_DIMS];
    ti_status e = ti__unpool_inferred(k, dims);
    if (e != TI_OK) return e;
    if (os != NULL) {
        TI__NEED(k, os);
        if ((int)ti__numel(os) != x->rank)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "output_shape has %zu values, expected %d",
                             ti__numel(os), x->rank);
        for (int i = 0; i < x->rank; i++) {
            int64_t v = ti__get_i64(os, (size_t)i);
            if (i < 2 ? v != dims[i] : v < dims[i])
                return ti__kfail(k, TI_ERR_UNSUPPORTED,
                                 "output_shape[%d] = %lld, expected %s %lld", i, (long long)v,
                                 i < 2 ? "" : ">=", (long long)dims[i]);
            dims[i] = v;
        }
    }
    if (!ti__set_shape(k->out[0], x->dtype, x->rank, dims))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid output shape");
    return TI_OK;
}

TI__PRIVATE ti_status ti__unpool_run(ti__kctx *k) {
    const ti_tensor *x = k->in[0], *ind = k->in[1];
    ti_tensor *y = k->out[0];
    int64_t inf[TI_MAX_DIMS];
    ti_status e = ti__unpool_inferred(k, inf);
    if (e != TI_OK) return e;
    memset(y->data, 0, y->size_bytes);
    /* Indices address the inferred shape (as MaxPool produced them); an output_shape larger
     * than that keeps each element at the same coordinates (ONNX reference behaviour). */
    size_t total = ti__shape_numel(x->rank, inf), n = ti__numel(x);
    const int64_t *id = (const int64_t *)ind->data;
    for (size_t i = 0; i < n; i++) {
        int64_t v = id[i];
        if (v < 0 || (uint64_t)v >= total)
            return ti__kfail(k, TI_ERR_INVALID_ARGUMENT, "index %lld at %zu is outside [0, %zu)",
                             (long long)v, i, total);
        size_t rem = (size_t)v, off = 0, mul = 1;
        for (int d = x->rank - 1; d >= 0; d--) {
            size_t c = rem % (size_t)inf[d];
            rem /= (size_t)inf[d];
            off += c * mul;
            mul *= (size_t)y->shape[d];
        }
        ti__set_f64(y, off, ti__get_f64(x, i));
    }
    return TI_OK;
}

TI__PRIVATE const ti__op ti__ops_pool[] = {
    {"MaxPool", ti__maxpool_shape, ti__maxpool_run, NULL, 0},
    {"AveragePool", ti__avgpool_shape, ti__avgpool_run, NULL, 0},
    {"LpPool", ti__lppool_shape, ti__lppool_run, NULL, 0},
    {"GlobalAveragePool", ti__gpool_shape, ti__gavgpool_run, NULL, 0},
    {"GlobalMaxPool", ti__gpool_shape, ti__gmaxpool_run, NULL, 0},
    {"GlobalLpPool", ti__gpool_shape, ti__glppool_run, NULL, 0},
    {"MaxUnpool", ti__unpool_shape, ti__unpool_run, NULL, 0},
    {NULL, NULL, NULL, NULL, 0}
};
/* ==== end src/cpu/pool.c ==================================================================== */

/* ==== begin src/cpu/quant.c ================================================================= */
/* Linear quantization: QuantizeLinear, DequantizeLinear (per-tensor, per-axis and blocked),
 * DynamicQuantizeLinear, QLinearMatMul and QLinearConv. Integer types int8/uint8/int16/
 * uint16 (and int32 for DequantizeLinear); float8/int4/int2 tensors reach here with an
 * unknown dtype and are refused. Rounding is half to even (nearbyint in the default
 * rounding mode), results saturate to the integer range. QLinear* accumulate exact int32
 * dot products of zero-point-corrected values and requantize with the float multiplier
 * a_scale * b_scale / y_scale, as the ONNX reference does. Relies on internal.h,
 * core/tensor.c and the thread pool. Must not allocate in a run function. */

/* Range of an integer quantized dtype; 0 when dt is not one. */
TI__PRIVATE int ti__q_range(ti_dtype dt, int64_t *lo, int64_t *hi) {
    switch (dt) {
    case TI_DTYPE_U8: *lo = 0, *hi = 255; return 1;
    case TI_DTYPE_I8: *lo = -128, *hi = 127; return 1;
    case TI_DTYPE_U16: *lo = 0, *hi = 65535; return 1;
    case TI_DTYPE_I16: *lo = -32768, *hi = 32767; return 1;
    case TI_DTYPE_I32: *lo = INT32_MIN, *hi = INT32_MAX; return 1;
    default: *lo = 0, *hi = 0; return 0;
    }
}

/* v rounded to the precision of float dtype dt (float64 and others: unchanged). */
TI__PRIVATE double ti__q_rnd(ti_dtype dt, double v) {
    switch (dt) {
    case TI_DTYPE_F32: return (double)(float)v;
    case TI_DTYPE_F16: return ti__f16_to_f32(ti__f32_to_f16((float)v));
    case TI_DTYPE_BF16: return ti__bf16_to_f32(ti__f32_to_bf16((float)v));
    default: return v;
    }
}

/* Round half to even, then saturate to [lo, hi]; NaN gives lo (numpy's int cast of NaN,
 * then clip). */
TI__PRIVATE int64_t ti__q_sat(double v, int64_t lo, int64_t hi) {
    if (v != v) return lo;
    v = nearbyint(v);
    if (v <= (double)lo) return lo;
    if (v >= (double)hi) return hi;
    return (int64_t)v;
}

/* ---- QuantizeLinear / DequantizeLinear ----------------------------------------------- */
/* Where element i of x finds its scale and zero point: per tensor (one value), per axis
 * (scale [dim]) or blocked (scale shaped like x with ceil(dim / block) along axis). */
typedef struct ti__qmap {
    int mode; /* 0 per tensor, 1 per axis, 2 blocked */
    size_t dim, inner;
    int64_t block, sdim;
} ti__qmap;

TI__PRIVATE size_t ti__qmap_index(const ti__qmap *m, size_t i) {
    if (m->mode == 0) return 0;
    size_t a = (i / m->inner) % m->dim;
    if (m->mode == 1) return a;
    size_t o = i / (m->dim * m->inner), in = i % m->inner;
    return (o * (size_t)m->sdim + a / (size_t)m->block) * m->inner + in;
}

/* Validates scale (input 1) and zero point (input 2, optional) against x (input 0). */
TI__PRIVATE int ti__qmap_setup(ti__kctx *k, ti__qmap *m) {
    const ti_tensor *x = k->in[0], *s = k->in[1];
    const ti_tensor *zp = k->n_in > 2 ? k->in[2] : NULL;
    memset(m, 0, sizeof *m);
    int64_t block = ti__attr_i(k->node, "block_size", 0);
    if (zp != NULL) {
        int same = zp->rank == s->rank;
        for (int i = 0; same && i < s->rank; i++) same = zp->shape[i] == s->shape[i];
        if (!same && !(ti__numel(zp) == 1 && ti__numel(s) == 1))
            return ti__kfail(k, TI_ERR_BAD_MODEL, "zero point shape differs from scale shape");
    }
    if (block < 0)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "block_size %lld is negative", (long long)block);
    if (ti__numel(s) == 1 && block == 0) return TI_OK; /* per tensor */
    int64_t axis = ti__attr_i(k->node, "axis", 1);
    if (axis < -(int64_t)x->rank || axis >= x->rank)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "axis %lld is out of range for rank %d",
                         (long long)axis, x->rank);
    if (axis < 0) axis += x->rank;
    m->dim = (size_t)x->shape[axis];
    m->inner = 1;
    for (int i = (int)axis + 1; i < x->rank; i++) m->inner *= (size_t)x->shape[i];
    if (block == 0) {
        if (s->rank != 1 || s->shape[0] != x->shape[axis])
            return ti__kfail(k, TI_ERR_BAD_MODEL,
                             "per-axis scale has %zu values (rank %d), expected shape [%lld] "
                             "(x dim %lld)",
                             ti__numel(s), s->rank, (long long)x->shape[axis], (long long)axis);
        m->mode = 1;
        return TI_OK;
    }
    if (s->rank != x->rank)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "blocked scale has rank %d, x has rank %d", s->rank,
                         x->rank);
    for (int i = 0; i < x->rank; i++) {
        if (i == axis) continue;
        if (s->shape[i] != x->shape[i])
            return ti__kfail(k, TI_ERR_BAD_MODEL, "blocked scale dim %d is %lld, x has %lld", i,
                             (long long)s->shape[i], (long long)x->shape[i]);
    }
    m->sdim = s->shape[axis];
    if (m->sdim * block < x->shape[axis] ||
        (m->sdim - 1) * block >= x->shape[axis])
        return ti__kfail(k, TI_ERR_BAD_MODEL,
                         "block_size %lld does not cover dim %lld with %lld blocks",
                         (long long)block, (long long)x->shape[axis], (long long)m->sdim);
    m->block = block;
    m->mode = 2;
    return TI_OK;
}

TI__PRIVATE int ti__quant_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    const ti_tensor *x = k->in[0], *s = k->in[1];
    const ti_tensor *zp = k->n_in > 2 ? k->in[2] : NULL;
    if (!ti__dtype_is_float(x->dtype) && x->dtype != TI_DTYPE_I32)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "x dtype %s is not supported",
                         ti_dtype_name(x->dtype));
    if (!ti__dtype_is_float(s->dtype))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "scale dtype %s is not supported",
                         ti_dtype_name(s->dtype));
    ti_dtype out = TI_DTYPE_U8;
    const ti__attr *od = ti__attr_get(k->node, "output_dtype");
    if (od != NULL && od->i != 0) {
        out = ti__onnx_dtype(od->i);
        if (out != TI_DTYPE_U8 && out != TI_DTYPE_I8 && out != TI_DTYPE_U16 && out != TI_DTYPE_I16)
            return ti__kfail(k, TI_ERR_UNSUPPORTED,
                             "output_dtype %lld is not supported (uint8, int8, uint16, int16)",
                             (long long)od->i);
    }
    if (zp != NULL) {
        if (od != NULL && od->i != 0 && zp->dtype != out)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "output_dtype differs from zero point dtype %s",
                             ti_dtype_name(zp->dtype));
        out = zp->dtype;
    }
    int64_t lo, hi;
    if (out == TI_DTYPE_I32 || !ti__q_range(out, &lo, &hi))
        return ti__kfail(k, TI_ERR_UNSUPPORTED,
                         "quantized type %s is not supported (uint8, int8, uint16, int16)",
                         ti_dtype_name(out));
    ti__qmap m;
    int r = ti__qmap_setup(k, &m);
    if (r != TI_OK) return r;
    if (k->n_out > 0 && k->out[0] != NULL && !ti__set_shape(k->out[0], out, x->rank, x->shape))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid output shape");
    return TI_OK;
}

TI__PRIVATE ti_status ti__quant_run(ti__kctx *k) {
    ti__qmap m;
    int r = ti__qmap_setup(k, &m);
    if (r != TI_OK) return (ti_status)r;
    const ti_tensor *x = k->in[0], *s = k->in[1];
    const ti_tensor *zp = k->n_in > 2 ? k->in[2] : NULL;
    ti_tensor *y = k->out[0];
    int64_t lo, hi;
    ti__q_range(y->dtype, &lo, &hi);
    /* x / scale is computed in the precision attribute's type, else the scale's type */
    ti_dtype prec = s->dtype;
    const ti__attr *pa = ti__attr_get(k->node, "precision");
    if (pa != NULL && pa->i != 0) {
        prec = ti__onnx_dtype(pa->i);
        if (!ti__dtype_is_float(prec))
            return ti__kfail(k, TI_ERR_UNSUPPORTED, "precision %lld is not a float type",
                             (long long)pa->i);
    }
    size_t n = ti__numel(x);
    for (size_t i = 0; i < n; i++) {
        size_t si = ti__qmap_index(&m, i);
        double xv = ti__q_rnd(prec, ti__get_f64(x, i));
        double q = ti__q_rnd(prec, xv / ti__q_rnd(prec, ti__get_f64(s, si)));
        if (q == q) q = nearbyint(q);
        if (zp != NULL) q += (double)ti__get_i64(zp, si);
        ti__set_i64(y, i, ti__q_sat(q, lo, hi));
    }
    return TI_OK;
}

TI__PRIVATE int ti__dequant_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    const ti_tensor *x = k->in[0], *s = k->in[1];
    const ti_tensor *zp = k->n_in > 2 ? k->in[2] : NULL;
    int64_t lo, hi;
    if (!ti__q_range(x->dtype, &lo, &hi))
        return ti__kfail(k, TI_ERR_UNSUPPORTED,
                         "x dtype %s is not supported (int8, uint8, int16, uint16, int32)",
                         ti_dtype_name(x->dtype));
    if (zp != NULL && zp->dtype != x->dtype)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "zero point dtype %s differs from x dtype %s",
                         ti_dtype_name(zp->dtype), ti_dtype_name(x->dtype));
    if (!ti__dtype_is_float(s->dtype))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "scale dtype %s is not supported",
                         ti_dtype_name(s->dtype));
    ti_dtype out = s->dtype;
    int64_t od = ti__attr_i(k->node, "output_dtype", 0);
    if (od != 0) {
        out = ti__onnx_dtype(od);
        if (!ti__dtype_is_float(out))
            return ti__kfail(k, TI_ERR_UNSUPPORTED, "output_dtype %lld is not a float type",
                             (long long)od);
    }
    ti__qmap m;
    int r = ti__qmap_setup(k, &m);
    if (r != TI_OK) return r;
    if (k->n_out > 0 && k->out[0] != NULL && !ti__set_shape(k->out[0], out, x->rank, x->shape))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid output shape");
    return TI_OK;
}

TI__PRIVATE ti_status ti__dequant_run(ti__kctx *k) {
    ti__qmap m;
    int r = ti__qmap_setup(k, &m);
    if (r != TI_OK) return (ti_status)r;
    const ti_tensor *x = k->in[0], *s = k->in[1];
    const ti_tensor *zp = k->n_in > 2 ? k->in[2] : NULL;
    ti_tensor *y = k->out[0];
    size_t n = ti__numel(x);
    /* (float32(x) - zp) * scale in float32, then the output type (ONNX reference) */
    for (size_t i = 0; i < n; i++) {
        size_t si = ti__qmap_index(&m, i);
        float d = (float)ti__get_i64(x, i);
        if (zp != NULL) d -= (float)ti__get_i64(zp, si);
        ti__set_f64(y, i, (double)(d * (float)ti__get_f64(s, si)));
    }
    return TI_OK;
}

/* ---- DynamicQuantizeLinear ----------------------------------------------------------- */
/* uint8 asymmetric quantization with scale = (max(0, max x) - min(0, min x)) / 255 and
 * zero point = round(clamp(-min / scale, 0, 255)); float32 arithmetic as the spec. */

TI__PRIVATE int ti__dynq_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    const ti_tensor *x = k->in[0];
    if (!ti__dtype_is_float(x->dtype))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "x dtype %s: float types only",
                         ti_dtype_name(x->dtype));
    if (k->n_out > 0 && k->out[0] != NULL && !ti__set_shape(k->out[0], TI_DTYPE_U8, x->rank, x->shape))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid output shape");
    if (k->n_out > 1 && k->out[1] != NULL && !ti__set_shape(k->out[1], x->dtype, 0, NULL))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid y_scale shape");
    if (k->n_out > 2 && k->out[2] != NULL && !ti__set_shape(k->out[2], TI_DTYPE_U8, 0, NULL))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid y_zero_point shape");
    return TI_OK;
}

TI__PRIVATE ti_status ti__dynq_run(ti__kctx *k) {
    const ti_tensor *x = k->in[0];
    size_t n = ti__numel(x);
    float mx = 0.0f, mn = 0.0f;
    for (size_t i = 0; i < n; i++) {
        float v = (float)ti__get_f64(x, i);
        if (v > mx) mx = v;
        if (v < mn) mn = v;
    }
    float scale = (mx == mn ? 1.0f : mx - mn) / 255.0f;
    float zpf = 0.0f - mn / scale;
    zpf = zpf < 0.0f ? 0.0f : (zpf > 255.0f ? 255.0f : zpf);
    float zp = nearbyintf(zpf);
    if (k->n_out > 0 && k->out[0] != NULL) {
        uint8_t *y = (uint8_t *)k->out[0]->data;
        for (size_t i = 0; i < n; i++) {
            float q = nearbyintf((float)ti__get_f64(x, i) / scale) + zp;
            y[i] = (uint8_t)ti__q_sat((double)q, 0, 255);
        }
    }
    if (k->n_out > 1 && k->out[1] != NULL) ti__set_f64(k->out[1], 0, (double)scale);
    if (k->n_out > 2 && k->out[2] != NULL) ((uint8_t *)k->out[2]->data)[0] = (uint8_t)zp;
    return TI_OK;
}

/* ---- QLinearMatMul ------------------------------------------------------------------- */
/* Inputs a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point.
 * Numpy matmul shapes (rank-1 operands promoted, batch dims broadcast). a's scale and zero
 * point are per tensor; b's (and y's) per tensor or per output column [N]. */

typedef struct ti__qmm {
    int64_t m, kd, n;
    int rank;                       /* of the output */
    int64_t batch[TI_MAX_DIMS];     /* output batch dims */
    int nb;                         /* number of batch dims */
    int64_t astr[TI_MAX_DIMS], bstr[TI_MAX_DIMS]; /* batch strides in matrices, 0 = broadcast */
} ti__qmm;

TI__PRIVATE int ti__qmm_setup(ti__kctx *k, ti__qmm *p, int set_outputs) {
    for (int i = 0; i < 8; i++) {
        if (i == 2 || i == 5 || i == 7) continue; /* zero points are optional before opset 21 */
        TI__REQUIRE_INPUT(k, i);
    }
    const ti_tensor *a = k->in[0], *b = k->in[3];
    const ti_tensor *azp = k->in[2], *bzp = k->in[5], *yzp = k->n_in > 7 ? k->in[7] : NULL;
    int64_t lo, hi;
    if ((a->dtype != TI_DTYPE_U8 && a->dtype != TI_DTYPE_I8) ||
        (b->dtype != TI_DTYPE_U8 && b->dtype != TI_DTYPE_I8))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "a/b dtypes %s/%s: int8 or uint8 only",
                         ti_dtype_name(a->dtype), ti_dtype_name(b->dtype));
    if ((azp != NULL && azp->dtype != a->dtype) || (bzp != NULL && bzp->dtype != b->dtype))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "zero point dtypes differ from a/b dtypes");
    ti_dtype out = yzp != NULL ? yzp->dtype : a->dtype;
    if (!ti__q_range(out, &lo, &hi) || out == TI_DTYPE_I32)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "y dtype %s is not supported", ti_dtype_name(out));
    static const int scale_inputs[3] = {1, 4, 6};
    for (int i = 0; i < 3; i++) {
        const ti_tensor *s = k->in[scale_inputs[i]];
        if (!ti__dtype_is_float(s->dtype))
            return ti__kfail(k, TI_ERR_UNSUPPORTED, "scale dtype %s is not a float type",
                             ti_dtype_name(s->dtype));
    }
    if (a->rank < 1 || b->rank < 1)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "a and b must have rank >= 1");
    p->m = a->rank >= 2 ? a->shape[a->rank - 2] : 1;
    p->kd = a->shape[a->rank - 1];
    int64_t bk = b->rank >= 2 ? b->shape[b->rank - 2] : b->shape[0];
    p->n = b->rank >= 2 ? b->shape[b->rank - 1] : 1;
    if (bk != p->kd)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "inner dims differ: a has %lld, b has %lld",
                         (long long)p->kd, (long long)bk);
    int ra = a->rank >= 2 ? a->rank - 2 : 0, rb = b->rank >= 2 ? b->rank - 2 : 0;
    if (!ti__broadcast_shape(ra, a->shape, rb, b->shape, &p->nb, p->batch))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "batch dims of a and b do not broadcast");
    /* batch strides (in whole matrices) of a and b, aligned to the right */
    int64_t sa = 1, sb = 1;
    for (int i = p->nb - 1; i >= 0; i--) {
        int ia = i - (p->nb - ra), ib = i - (p->nb - rb);
        int64_t da = ia >= 0 ? a->shape[ia] : 1, db = ib >= 0 ? b->shape[ib] : 1;
        p->astr[i] = da == 1 ? 0 : sa;
        p->bstr[i] = db == 1 ? 0 : sb;
        sa *= da;
        sb *= db;
    }
    const ti_tensor *per[5];
    per[0] = k->in[1], per[1] = azp, per[2] = k->in[4], per[3] = bzp, per[4] = k->in[6];
    for (int i = 0; i < 5; i++) {
        const ti_tensor *t = per[i];
        if (t == NULL) continue;
        size_t c = ti__numel(t);
        int column = i >= 2 && i <= 3 && (int64_t)c == p->n;
        if (c != 1 && !column)
            return ti__kfail(k, TI_ERR_UNSUPPORTED,
                             "scale/zero point with %zu values: per tensor (or per column of b) only",
                             c);
    }
    if (yzp != NULL && ti__numel(yzp) != 1)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "y_zero_point must be a single value");
    if (!set_outputs) return TI_OK;
    int64_t od[TI_MAX_DIMS + 2];
    int r = 0;
    for (int i = 0; i < p->nb; i++) od[r++] = p->batch[i];
    if (a->rank >= 2) od[r++] = p->m;
    if (b->rank >= 2) od[r++] = p->n;
    if (r > TI_MAX_DIMS || !ti__set_shape(k->out[0], out, r, od))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid output shape");
    return TI_OK;
}

TI__PRIVATE int ti__qmm_shape(ti__kctx *k) {
    ti__qmm p;
    if (k->n_out < 1 || k->out[0] == NULL) return TI_OK;
    return ti__qmm_setup(k, &p, 1);
}

TI__PRIVATE ti_status ti__qmm_run(ti__kctx *k) {
    ti__qmm p;
    if (k->n_out < 1 || k->out[0] == NULL) return TI_OK;
    int r = ti__qmm_setup(k, &p, 0);
    if (r != TI_OK) return (ti_status)r;
    const ti_tensor *a = k->in[0], *as = k->in[1], *azp = k->in[2];
    const ti_tensor *b = k->in[3], *bs = k->in[4], *bzp = k->in[5];
    const ti_tensor *ys = k->in[6], *yzp = k->n_in > 7 ? k->in[7] : NULL;
    ti_tensor *y = k->out[0];
    int64_t lo, hi;
    ti__q_range(y->dtype, &lo, &hi);
    int64_t a0 = azp != NULL ? ti__get_i64(azp, 0) : 0;
    double yz = yzp != NULL ? (double)ti__get_i64(yzp, 0) : 0.0;
    size_t nbatch = ti__shape_numel(p.nb, p.batch);
    int64_t idx[TI_MAX_DIMS];
    for (int i = 0; i < p.nb; i++) idx[i] = 0;
    size_t mk = (size_t)(p.m * p.kd), kn = (size_t)(p.kd * p.n), mn = (size_t)(p.m * p.n);
    for (size_t bi = 0; bi < nbatch; bi++) {
        size_t ao = 0, bo = 0;
        for (int i = 0; i < p.nb; i++) {
            ao += (size_t)(idx[i] * p.astr[i]) * mk;
            bo += (size_t)(idx[i] * p.bstr[i]) * kn;
        }
        for (int64_t col = 0; col < p.n; col++) {
            size_t bsi = ti__numel(bs) == 1 ? 0 : (size_t)col;
            size_t bzi = bzp == NULL || ti__numel(bzp) == 1 ? 0 : (size_t)col;
            int64_t b0 = bzp != NULL ? ti__get_i64(bzp, bzi) : 0;
            /* multiplier a_scale * b_scale / y_scale in the scales' precision */
            ti_dtype sd = as->dtype;
            double mult = ti__q_rnd(sd, ti__q_rnd(sd, ti__get_f64(as, 0) * ti__get_f64(bs, bsi)) /
                                            ti__get_f64(ys, 0));
            for (int64_t row = 0; row < p.m; row++) {
                int64_t acc = 0; /* exact: |acc| <= K * 255 * 255 */
                for (int64_t t = 0; t < p.kd; t++)
                    acc += (ti__get_i64(a, ao + (size_t)(row * p.kd + t)) - a0) *
                           (ti__get_i64(b, bo + (size_t)(t * p.n + col)) - b0);
                double v = (double)acc * mult + yz;
                ti__set_i64(y, bi * mn + (size_t)(row * p.n + col), ti__q_sat(v, lo, hi));
            }
        }
        for (int i = p.nb - 1; i >= 0; i--) {
            if (++idx[i] < p.batch[i]) break;
            idx[i] = 0;
        }
    }
    return TI_OK;
}

/* ---- QLinearConv --------------------------------------------------------------------- */
/* Inputs x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B
 * (int32 bias). x [N, C, spatial...] with 1 to 3 spatial dims, w [M, C / group, k...].
 * Spatial dims are handled as 3-D (d, h, w) with leading size-1 dims. */

typedef struct ti__qconv {
    int sr; /* spatial rank */
    int64_t n, c, m, group, cg, mg;
    int64_t in[3], ker[3], out[3], str[3], dil[3], pad[3]; /* 3-D, leading dims padded */
    const ti_tensor *x, *w, *bias, *xzp, *wzp, *xs, *ws, *ys, *yzp;
    ti_tensor *y;
} ti__qconv;

TI__PRIVATE int ti__qconv_setup(ti__kctx *k, ti__qconv *p, int set_outputs) {
    memset(p, 0, sizeof *p);
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    TI__REQUIRE_INPUT(k, 3);
    TI__REQUIRE_INPUT(k, 4);
    TI__REQUIRE_INPUT(k, 6);
    p->x = k->in[0], p->xs = k->in[1], p->xzp = k->n_in > 2 ? k->in[2] : NULL;
    p->w = k->in[3], p->ws = k->in[4], p->wzp = k->n_in > 5 ? k->in[5] : NULL;
    p->ys = k->in[6], p->yzp = k->n_in > 7 ? k->in[7] : NULL;
    p->bias = k->n_in > 8 ? k->in[8] : NULL;
    p->y = k->n_out > 0 ? k->out[0] : NULL;
    const ti_tensor *x = p->x, *w = p->w;
    const ti__node *nd = k->node;
    if ((x->dtype != TI_DTYPE_U8 && x->dtype != TI_DTYPE_I8) ||
        (w->dtype != TI_DTYPE_U8 && w->dtype != TI_DTYPE_I8))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "x/w dtypes %s/%s: int8 or uint8 only",
                         ti_dtype_name(x->dtype), ti_dtype_name(w->dtype));
    if ((p->xzp != NULL && (p->xzp->dtype != x->dtype || ti__numel(p->xzp) != 1)) ||
        (p->wzp != NULL && p->wzp->dtype != w->dtype))
        return ti__kfail(k, TI_ERR_BAD_MODEL,
                         "zero points must match x/w dtypes (x_zero_point a single value)");
    if (!ti__dtype_is_float(p->xs->dtype) || !ti__dtype_is_float(p->ws->dtype) ||
        !ti__dtype_is_float(p->ys->dtype) || ti__numel(p->xs) != 1 || ti__numel(p->ys) != 1)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "x_scale and y_scale must be single float values");
    if (p->bias != NULL && p->bias->dtype != TI_DTYPE_I32)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "bias dtype %s, expected int32",
                         ti_dtype_name(p->bias->dtype));
    ti_dtype out = p->yzp != NULL ? p->yzp->dtype : x->dtype;
    if (out != TI_DTYPE_U8 && out != TI_DTYPE_I8)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "y dtype %s: int8 or uint8 only",
                         ti_dtype_name(out));
    if (x->rank < 3 || x->rank > 5 || w->rank != x->rank)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "x rank %d, w rank %d: 1 to 3 spatial dims only",
                         x->rank, w->rank);
    p->sr = x->rank - 2;
    p->n = x->shape[0];
    p->c = x->shape[1];
    p->m = w->shape[0];
    p->group = ti__attr_i(nd, "group", 1);
    if (p->group <= 0 || p->c % p->group != 0 || p->m % p->group != 0 ||
        w->shape[1] != p->c / p->group)
        return ti__kfail(k, TI_ERR_BAD_MODEL,
                         "group %lld does not fit %lld input channels, %lld filters of %lld channels",
                         (long long)p->group, (long long)p->c, (long long)p->m,
                         (long long)w->shape[1]);
    p->cg = p->c / p->group;
    p->mg = p->m / p->group;
    size_t mcount = (size_t)p->m;
    if (ti__numel(p->ws) != 1 && ti__numel(p->ws) != mcount)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "w_scale has %zu values, expected 1 or %lld",
                         ti__numel(p->ws), (long long)p->m);
    if (p->wzp != NULL && ti__numel(p->wzp) != 1 && ti__numel(p->wzp) != mcount)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "w_zero_point has %zu values, expected 1 or %lld",
                         ti__numel(p->wzp), (long long)p->m);
    if (p->bias != NULL && ti__numel(p->bias) != mcount)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "bias has %zu values, expected %lld",
                         ti__numel(p->bias), (long long)p->m);
    int nk, ns, nd2, np;
    const int64_t *ks = ti__attr_ints(nd, "kernel_shape", &nk);
    const int64_t *st = ti__attr_ints(nd, "strides", &ns);
    const int64_t *dl = ti__attr_ints(nd, "dilations", &nd2);
    const int64_t *pd = ti__attr_ints(nd, "pads", &np);
    if ((ks != NULL && nk != p->sr) || (st != NULL && ns != p->sr) ||
        (dl != NULL && nd2 != p->sr) || (pd != NULL && np != 2 * p->sr))
        return ti__kfail(k, TI_ERR_BAD_MODEL,
                         "kernel_shape/strides/dilations/pads lengths do not match %d spatial dims",
                         p->sr);
    const char *ap = ti__attr_s(nd, "auto_pad", "NOTSET");
    int same_upper = strcmp(ap, "SAME_UPPER") == 0, same_lower = strcmp(ap, "SAME_LOWER") == 0;
    int valid = strcmp(ap, "VALID") == 0;
    if (!same_upper && !same_lower && !valid && strcmp(ap, "NOTSET") != 0)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "auto_pad '%s' is not valid", ap);
    int off = 3 - p->sr;
    for (int i = 0; i < 3; i++) {
        p->in[i] = p->ker[i] = p->out[i] = p->str[i] = p->dil[i] = 1;
        p->pad[i] = 0;
    }
    for (int i = 0; i < p->sr; i++) {
        int o = i + off;
        p->in[o] = x->shape[2 + i];
        p->ker[o] = w->shape[2 + i];
        if (ks != NULL && ks[i] != p->ker[o])
            return ti__kfail(k, TI_ERR_BAD_MODEL, "kernel_shape[%d] = %lld, w has %lld", i,
                             (long long)ks[i], (long long)p->ker[o]);
        p->str[o] = st != NULL ? st[i] : 1;
        p->dil[o] = dl != NULL ? dl[i] : 1;
        if (p->str[o] <= 0 || p->dil[o] <= 0)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "strides and dilations must be positive");
        int64_t ext = (p->ker[o] - 1) * p->dil[o] + 1, pb = 0, pe = 0;
        if (same_upper || same_lower) {
            int64_t o_sz = (p->in[o] + p->str[o] - 1) / p->str[o];
            int64_t total = (o_sz - 1) * p->str[o] + ext - p->in[o];
            if (total < 0) total = 0;
            pb = same_upper ? total / 2 : total - total / 2;
            pe = total - pb;
        } else if (!valid && pd != NULL) {
            pb = pd[i];
            pe = pd[i + p->sr];
            if (pb < 0 || pe < 0) return ti__kfail(k, TI_ERR_BAD_MODEL, "pads must be >= 0");
        }
        p->pad[o] = pb;
        int64_t span = p->in[o] + pb + pe - ext;
        if (span < 0)
            return ti__kfail(k, TI_ERR_BAD_MODEL,
                             "kernel extent %lld exceeds padded input %lld in spatial dim %d",
                             (long long)ext, (long long)(p->in[o] + pb + pe), i);
        p->out[o] = span / p->str[o] + 1;
    }
    if (!set_outputs || p->y == NULL) return TI_OK;
    int64_t od[5];
    od[0] = p->n;
    od[1] = p->m;
    for (int i = 0; i < p->sr; i++) od[2 + i] = p->out[i + off];
    if (!ti__set_shape(p->y, out, x->rank, od))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid output shape");
    return TI_OK;
}

TI__PRIVATE int ti__qconv_shape(ti__kctx *k) {
    ti__qconv p;
    return ti__qconv_setup(k, &p, 1);
}

/* One (image, output channel) plane per task. */
TI__PRIVATE void ti__qconv_range(void *ctx, size_t begin, size_t end) {
    const ti__qconv *p = (const ti__qconv *)ctx;
    int64_t lo, hi;
    ti__q_range(p->y->dtype, &lo, &hi);
    int64_t x0 = p->xzp != NULL ? ti__get_i64(p->xzp, 0) : 0;
    double yz = p->yzp != NULL ? (double)ti__get_i64(p->yzp, 0) : 0.0;
    size_t in_plane = (size_t)(p->in[0] * p->in[1] * p->in[2]);
    size_t ker_plane = (size_t)(p->ker[0] * p->ker[1] * p->ker[2]);
    size_t out_plane = (size_t)(p->out[0] * p->out[1] * p->out[2]);
    for (size_t task = begin; task < end; task++) {
        int64_t n = (int64_t)task / p->m, m = (int64_t)task % p->m, g = m / p->mg;
        int64_t w0 = p->wzp != NULL ? ti__get_i64(p->wzp, ti__numel(p->wzp) == 1 ? 0 : (size_t)m) : 0;
        double ws = ti__get_f64(p->ws, ti__numel(p->ws) == 1 ? 0 : (size_t)m);
        /* multiplier x_scale * w_scale / y_scale in the scales' (float) precision */
        ti_dtype sd = p->xs->dtype;
        double mult = ti__q_rnd(sd, ti__q_rnd(sd, ti__get_f64(p->xs, 0) * ws) / ti__get_f64(p->ys, 0));
        int64_t b0 = p->bias != NULL ? ((const int32_t *)p->bias->data)[m] : 0;
        size_t yo = task * out_plane;
        for (int64_t od = 0; od < p->out[0]; od++)
            for (int64_t oh = 0; oh < p->out[1]; oh++)
                for (int64_t ow = 0; ow < p->out[2]; ow++) {
                    int64_t acc = b0;
                    for (int64_t c = 0; c < p->cg; c++) {
                        size_t xb = (size_t)(n * p->c + g * p->cg + c) * in_plane;
                        size_t wb = (size_t)(m * p->cg + c) * ker_plane;
                        for (int64_t kd = 0; kd < p->ker[0]; kd++) {
                            int64_t id = od * p->str[0] - p->pad[0] + kd * p->dil[0];
                            if (id < 0 || id >= p->in[0]) continue;
                            for (int64_t kh = 0; kh < p->ker[1]; kh++) {
                                int64_t ih = oh * p->str[1] - p->pad[1] + kh * p->dil[1];
                                if (ih < 0 || ih >= p->in[1]) continue;
                                for (int64_t kw = 0; kw < p->ker[2]; kw++) {
                                    int64_t iw = ow * p->str[2] - p->pad[2] + kw * p->dil[2];
                                    if (iw < 0 || iw >= p->in[2]) continue;
                                    size_t xi = xb + (size_t)((id * p->in[1] + ih) * p->in[2] + iw);
                                    size_t wi = wb + (size_t)((kd * p->ker[1] + kh) * p->ker[2] + kw);
                                    int64_t xv = p->x->dtype == TI_DTYPE_U8
                                                     ? ((const uint8_t *)p->x->data)[xi]
                                                     : ((const int8_t *)p->x->data)[xi];
                                    int64_t wv = p->w->dtype == TI_DTYPE_U8
                                                     ? ((const uint8_t *)p->w->data)[wi]
                                                     : ((const int8_t *)p->w->data)[wi];
                                    acc += (xv - x0) * (wv - w0);
                                }
                            }
                        }
                    }
                    double v = (double)acc * mult + yz;
                    size_t oi = yo + (size_t)((od * p->out[1] + oh) * p->out[2] + ow);
                    ti__set_i64(p->y, oi, ti__q_sat(v, lo, hi));
                }
    }
}

TI__PRIVATE ti_status ti__qconv_run(ti__kctx *k) {
    ti__qconv p;
    int r = ti__qconv_setup(k, &p, 0);
    if (r != TI_OK) return (ti_status)r;
    if (p.y == NULL) return TI_OK;
    size_t tasks = (size_t)(p.n * p.m);
    size_t work = (size_t)(p.out[0] * p.out[1] * p.out[2] * p.cg * p.ker[0] * p.ker[1] * p.ker[2]);
    ti__parallel_for(k->tp, tasks, work > 4096 ? 1 : tasks, ti__qconv_range, &p);
    return TI_OK;
}

TI__PRIVATE const ti__op ti__ops_quant[] = {
    {"QuantizeLinear", ti__quant_shape, ti__quant_run, NULL, 0},
    {"DequantizeLinear", ti__dequant_shape, ti__dequant_run, NULL, 0},
    {"DynamicQuantizeLinear", ti__dynq_shape, ti__dynq_run, NULL, 0},
    {"QLinearMatMul", ti__qmm_shape, ti__qmm_run, NULL, 0},
    {"QLinearConv", ti__qconv_shape, ti__qconv_run, NULL, 0},
    {NULL, NULL, NULL, NULL, 0}
};
/* ==== end src/cpu/quant.c =================================================================== */

/* ==== begin src/cpu/reduce.c ================================================================ */
/* Reductions and scans: Reduce* (ten kinds), ArgMax / ArgMin, Softmax / LogSoftmax / Hardmax,
 * CumSum / CumProd and TopK. Scalar reference kernels over any numeric dtype: float types
 * accumulate in double, integer types in int64 (exact, wrapping on overflow as numpy does).
 * Relies on internal.h and the element helpers of core/tensor.c. Must not allocate in a run
 * function: TopK sorts, and Softmax keeps per-column sums, in the scratch they ask for. */

/* ---- shared helpers ------------------------------------------------------------------ */

/* Normalises axis a of a rank-r tensor to [0, r); returns -1 when out of range. */
TI__PRIVATE int ti__red_axis(int64_t a, int r) {
    if (a < -(int64_t)r || a >= (int64_t)r) return -1;
    return (int)(a < 0 ? a + r : a);
}

/* Loads n elements starting at element off, stride elements apart, as double. */
TI__PRIVATE void ti__red_load_f64(const ti_tensor *t, size_t off, int64_t stride, size_t n,
                                  double *buf) {
    size_t s = (size_t)stride;
    switch (t->dtype) {
    case TI_DTYPE_F32: {
        const float *p = (const float *)t->data + off;
        for (size_t i = 0; i < n; i++) buf[i] = p[i * s];
        break;
    }
    case TI_DTYPE_F64: {
        const double *p = (const double *)t->data + off;
        for (size_t i = 0; i < n; i++) buf[i] = p[i * s];
        break;
    }
    default:
        for (size_t i = 0; i < n; i++) buf[i] = ti__get_f64(t, off + i * s);
        break;
    }
}

/* Loads n elements as int64 (uint64 wraps above INT64_MAX). */
TI__PRIVATE void ti__red_load_i64(const ti_tensor *t, size_t off, int64_t stride, size_t n,
                                  int64_t *buf) {
    size_t s = (size_t)stride;
    switch (t->dtype) {
    case TI_DTYPE_I64: {
        const int64_t *p = (const int64_t *)t->data + off;
        for (size_t i = 0; i < n; i++) buf[i] = p[i * s];
        break;
    }
    case TI_DTYPE_I32: {
        const int32_t *p = (const int32_t *)t->data + off;
        for (size_t i = 0; i < n; i++) buf[i] = p[i * s];
        break;
    }
    default:
        for (size_t i = 0; i < n; i++) buf[i] = ti__get_i64(t, off + i * s);
        break;
    }
}

/* Smallest and largest value of an integer dtype (bool: 0 and 1). */
TI__PRIVATE void ti__red_int_range(ti_dtype dt, int64_t *lo, int64_t *hi) {
    switch (dt) {
    case TI_DTYPE_I8: *lo = INT8_MIN; *hi = INT8_MAX; break;
    case TI_DTYPE_U8: *lo = 0; *hi = UINT8_MAX; break;
    case TI_DTYPE_I16: *lo = INT16_MIN; *hi = INT16_MAX; break;
    case TI_DTYPE_U16: *lo = 0; *hi = UINT16_MAX; break;
    case TI_DTYPE_I32: *lo = INT32_MIN; *hi = INT32_MAX; break;
    case TI_DTYPE_U32: *lo = 0; *hi = UINT32_MAX; break;
    case TI_DTYPE_U64: *lo = 0; *hi = -1; break; /* UINT64_MAX, stored through int64 */
    case TI_DTYPE_BOOL: *lo = 0; *hi = 1; break;
    default: *lo = INT64_MIN; *hi = INT64_MAX; break;
    }
}

TI__PRIVATE int ti__red_numeric(ti_dtype dt) {
    return ti__dtype_is_float(dt) || ti__dtype_is_int(dt);
}

/* ---- Reduce* ---------------------------------------------------------------------------- */

typedef enum ti__red_kind {
    TI__RED_SUM,
    TI__RED_MEAN,
    TI__RED_MAX,
    TI__RED_MIN,
    TI__RED_PROD,
    TI__RED_L1,
    TI__RED_L2,
    TI__RED_LOGSUM,
    TI__RED_LOGSUMEXP,
    TI__RED_SUMSQUARE
} ti__red_kind;

TI__PRIVATE int ti__red_kind_of(const char *op) {
    static const char *const names[] = {"ReduceSum", "ReduceMean", "ReduceMax",
                                        "ReduceMin", "ReduceProd", "ReduceL1",
                                        "ReduceL2",  "ReduceLogSum", "ReduceLogSumExp",
                                        "ReduceSumSquare"};
    for (int i = 0; i < (int)TI__COUNTOF(names); i++)
        if (strcmp(op, names[i]) == 0) return i;
    return TI__RED_SUM;
}

/* The input seen as kept and reduced dim groups (adjacent dims of one kind merged, size-1
 * dims dropped), each with its stride in elements. Output order = kept dims in order. */
typedef struct ti__rplan {
    int nk, nr;
    int64_t kdim[TI_MAX_DIMS], kstr[TI_MAX_DIMS];
    int64_t rdim[TI_MAX_DIMS], rstr[TI_MAX_DIMS];
    size_t n_out, n_red;
} ti__rplan;

TI__PRIVATE void ti__rplan_make(int rank, const int64_t *dims, unsigned mask, ti__rplan *p) {
    int64_t str[TI_MAX_DIMS];
    ti__strides(rank, dims, str);
    memset(p, 0, sizeof *p);
    p->n_out = 1;
    p->n_red = 1;
    int last = -1; /* kind of the previous group: 0 kept, 1 reduced */
    for (int i = 0; i < rank; i++) {
        int red = (int)((mask >> i) & 1u);
        if (red) p->n_red *= (size_t)dims[i];
        else p->n_out *= (size_t)dims[i];
        if (dims[i] == 1) continue;
        int64_t *gd = red ? p->rdim : p->kdim, *gs = red ? p->rstr : p->kstr;
        int *gn = red ? &p->nr : &p->nk;
        if (last == red && *gn > 0) { /* merge: row-major, so the groups are contiguous */
            gd[*gn - 1] *= dims[i];
            gs[*gn - 1] = str[i];
        } else {
            gd[*gn] = dims[i];
            gs[*gn] = str[i];
            (*gn)++;
        }
        last = red;
    }
}

/* Reads the reduction axes (attribute before opset 13 for ReduceSum and 18 for the others,
 * an optional int64 input from then on) into a bit mask over the input's dims. */
TI__PRIVATE int ti__red_mask(ti__kctx *k, int rank, unsigned *mask) {
    const ti__node *n = k->node;
    int from_input = (strcmp(n->op, "ReduceSum") == 0) ? k->opset >= 13 : k->opset >= 18;
    int64_t noop = ti__attr_i(n, "noop_with_empty_axes", 0);
    const int64_t *attr_axes = NULL;
    int count = 0;
    const ti_tensor *ax = (k->n_in > 1) ? k->in[1] : NULL;
    if (from_input && ax != NULL) {
        TI__NEED(k, ax);
        if (ax->dtype != TI_DTYPE_I64 && ax->dtype != TI_DTYPE_I32)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "axes input has dtype %s, expected int64",
                             ti_dtype_name(ax->dtype));
        if (ax->rank > 1)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "axes input has rank %d, expected 1",
                             ax->rank);
        count = (int)TI__MIN(ti__numel(ax), (size_t)INT_MAX);
    } else {
        attr_axes = ti__attr_ints(n, "axes", &count);
        ax = NULL;
    }
    if (count == 0) {
        *mask = noop ? 0u : (rank >= 32 ? 0xffffffffu : ((1u << rank) - 1u));
        return TI_OK;
    }
    if (count > rank)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "%d axes given for an input of rank %d", count,
                         rank);
    unsigned m = 0;
    for (int i = 0; i < count; i++) {
        int64_t v = ax ? ti__get_i64(ax, (size_t)i) : attr_axes[i];
        int a = ti__red_axis(v, rank);
        if (a < 0)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "axis %lld out of range for rank %d",
                             (long long)v, rank);
        if (m & (1u << a))
            return ti__kfail(k, TI_ERR_BAD_MODEL, "axis %lld repeated in axes", (long long)v);
        m |= 1u << a;
    }
    *mask = m;
    return TI_OK;
}

TI__PRIVATE int ti__reduce_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    const ti_tensor *x = k->in[0];
    int kind = ti__red_kind_of(k->node->op);
    int bool_ok = kind == TI__RED_MAX || kind == TI__RED_MIN;
    if (!ti__red_numeric(x->dtype) && !(bool_ok && x->dtype == TI_DTYPE_BOOL))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "input dtype %s is not supported",
                         ti_dtype_name(x->dtype));
    unsigned mask;
    int st = ti__red_mask(k, x->rank, &mask);
    if (st != TI_OK) return st;
    int keep = ti__attr_i(k->node, "keepdims", 1) != 0;
    int64_t dims[TI_MAX_DIMS];
    int r = 0;
    for (int i = 0; i < x->rank; i++) {
        if (!((mask >> i) & 1u)) dims[r++] = x->shape[i];
        else if (keep) dims[r++] = 1;
    }
    if (!ti__set_shape(k->out[0], x->dtype, r, dims))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid output shape");
    return TI_OK;
}

typedef struct ti__red_job {
    const ti_tensor *x;
    ti_tensor *y;
    const ti__rplan *p;
    int kind;
} ti__red_job;

/* Rows (the innermost reduced group) are loaded into a stack buffer this many at a time. */
#define TI__RED_CHUNK 256

/* Input offset of reduced row number `row` of the output element whose first input element is
 * at offset base: row enumerates the outer reduced groups, row-major. */
TI__PRIVATE size_t ti__red_row_start(const ti__rplan *p, size_t base, size_t row) {
    size_t off = base;
    for (int d = p->nr - 2; d >= 0; d--) {
        size_t i = row % (size_t)p->rdim[d];
        row /= (size_t)p->rdim[d];
        off += i * (size_t)p->rstr[d];
    }
    return off;
}

/* Float reduction of one output element; accumulates in double. */
TI__PRIVATE double ti__red_one_f64(const ti__red_job *j, size_t base) {
    const ti__rplan *p = j->p;
    double buf[TI__RED_CHUNK];
    size_t len = p->nr > 0 ? (size_t)p->rdim[p->nr - 1] : 1;
    int64_t stride = p->nr > 0 ? p->rstr[p->nr - 1] : 1;
    size_t rows = len > 0 ? p->n_red / len : 0;
    int kind = j->kind;
    if (p->n_red == 0) {
        switch (kind) {
        case TI__RED_MAX: case TI__RED_LOGSUM: case TI__RED_LOGSUMEXP: return -INFINITY;
        case TI__RED_MIN: return INFINITY;
        case TI__RED_PROD: return 1.0;
        case TI__RED_MEAN: return NAN;
        default: return 0.0;
        }
    }
    double mx = -INFINITY;
    if (kind == TI__RED_LOGSUMEXP) { /* first pass: the max, for a stable exp */
        for (size_t r = 0; r < rows; r++) {
            size_t off = ti__red_row_start(p, base, r);
            for (size_t c = 0; c < len; c += TI__RED_CHUNK) {
                size_t n = TI__MIN(len - c, (size_t)TI__RED_CHUNK);
                ti__red_load_f64(j->x, off + c * (size_t)stride, stride, n, buf);
                for (size_t i = 0; i < n; i++)
                    if (buf[i] > mx || buf[i] != buf[i]) mx = buf[i];
            }
        }
        if (mx == INFINITY || mx == -INFINITY) mx = 0.0; /* exp(inf - inf) would be NaN */
    }
    double acc;
    switch (kind) {
    case TI__RED_MAX: acc = -INFINITY; break;
    case TI__RED_MIN: acc = INFINITY; break;
    case TI__RED_PROD: acc = 1.0; break;
    default: acc = 0.0; break;
    }
    for (size_t r = 0; r < rows; r++) {
        size_t off = ti__red_row_start(p, base, r);
        for (size_t c = 0; c < len; c += TI__RED_CHUNK) {
            size_t n = TI__MIN(len - c, (size_t)TI__RED_CHUNK);
            ti__red_load_f64(j->x, off + c * (size_t)stride, stride, n, buf);
            switch (kind) {
            case TI__RED_MAX: /* NaN propagates, as numpy's maximum */
                for (size_t i = 0; i < n; i++)
                    if (buf[i] > acc || buf[i] != buf[i]) acc = buf[i];
                break;
            case TI__RED_MIN:
                for (size_t i = 0; i < n; i++)
                    if (buf[i] < acc || buf[i] != buf[i]) acc = buf[i];
                break;
            case TI__RED_PROD:
                for (size_t i = 0; i < n; i++) acc *= buf[i];
                break;
            case TI__RED_L1:
                for (size_t i = 0; i < n; i++) acc += fabs(buf[i]);
                break;
            case TI__RED_L2:
            case TI__RED_SUMSQUARE:
                for (size_t i = 0; i < n; i++) acc += buf[i] * buf[i];
                break;
            case TI__RED_LOGSUMEXP:
                for (size_t i = 0; i < n; i++) acc += exp(buf[i] - mx);
                break;
            default: /* SUM, MEAN, LOGSUM */
                for (size_t i = 0; i < n; i++) acc += buf[i];
                break;
            }
        }
    }
    switch (kind) {
    case TI__RED_MEAN: return acc / (double)p->n_red;
    case TI__RED_L2: return sqrt(acc);
    case TI__RED_LOGSUM: return log(acc);
    case TI__RED_LOGSUMEXP: return log(acc) + mx;
    default: return acc;
    }
}

/* Integer reduction of one output element (SUM, MEAN, MAX, MIN, PROD, L1, SUMSQUARE):
 * exact in int64, wrapping like numpy on overflow (done in unsigned arithmetic). */
TI__PRIVATE int64_t ti__red_one_i64(const ti__red_job *j, size_t base) {
    const ti__rplan *p = j->p;
    int64_t buf[TI__RED_CHUNK];
    size_t len = p->nr > 0 ? (size_t)p->rdim[p->nr - 1] : 1;
    int64_t stride = p->nr > 0 ? p->rstr[p->nr - 1] : 1;
    size_t rows = len > 0 ? p->n_red / len : 0;
    int64_t lo, hi;
    ti__red_int_range(j->x->dtype, &lo, &hi);
    int kind = j->kind;
    int unsig = j->x->dtype == TI_DTYPE_U64;
    uint64_t acc;
    switch (kind) {
    case TI__RED_MAX: acc = (uint64_t)lo; break;
    case TI__RED_MIN: acc = (uint64_t)hi; break;
    case TI__RED_PROD: acc = 1; break;
    default: acc = 0; break;
    }
    for (size_t r = 0; r < rows; r++) {
        size_t off = ti__red_row_start(p, base, r);
        for (size_t c = 0; c < len; c += TI__RED_CHUNK) {
            size_t n = TI__MIN(len - c, (size_t)TI__RED_CHUNK);
            ti__red_load_i64(j->x, off + c * (size_t)stride, stride, n, buf);
            for (size_t i = 0; i < n; i++) {
                uint64_t v = (uint64_t)buf[i];
                switch (kind) {
                case TI__RED_MAX:
                    if (unsig ? v > acc : (int64_t)v > (int64_t)acc) acc = v;
                    break;
                case TI__RED_MIN:
                    if (unsig ? v < acc : (int64_t)v < (int64_t)acc) acc = v;
                    break;
                case TI__RED_PROD: acc *= v; break;
                case TI__RED_L1: acc += (!unsig && buf[i] < 0) ? (uint64_t)0 - v : v; break;
                case TI__RED_SUMSQUARE: acc += v * v; break;
                default: acc += v; break;
                }
            }
        }
    }
    if (kind == TI__RED_MEAN) {
        if (p->n_red == 0) return 0;
        if (unsig) return (int64_t)(acc / (uint64_t)p->n_red);
        return (int64_t)acc / (int64_t)p->n_red; /* truncates, as numpy's mean then cast */
    }
    return (int64_t)acc;
}

TI__PRIVATE void ti__reduce_range(void *ctx, size_t begin, size_t end) {
    const ti__red_job *j = (const ti__red_job *)ctx;
    const ti__rplan *p = j->p;
    ti_dtype dt = j->x->dtype;
    /* float math for float dtypes and for the kinds that are not closed over integers */
    int use_f64 = ti__dtype_is_float(dt) || j->kind == TI__RED_L2 ||
                  j->kind == TI__RED_LOGSUM || j->kind == TI__RED_LOGSUMEXP;
    for (size_t o = begin; o < end; o++) {
        size_t base = 0, rem = o;
        for (int d = p->nk - 1; d >= 0; d--) {
            base += (rem % (size_t)p->kdim[d]) * (size_t)p->kstr[d];
            rem /= (size_t)p->kdim[d];
        }
        if (use_f64) {
            double v = ti__red_one_f64(j, base);
            if (dt == TI_DTYPE_F32) ((float *)j->y->data)[o] = (float)v;
            else ti__set_f64(j->y, o, v);
        } else {
            ti__set_i64(j->y, o, ti__red_one_i64(j, base));
        }
    }
}

TI__PRIVATE ti_status ti__reduce_run(ti__kctx *k) {
    const ti_tensor *x = k->in[0];
    unsigned mask;
    int st = ti__red_mask(k, x->rank, &mask);
    if (st != TI_OK)
        return st == TI__NEED_VALUE ? ti__kfail(k, TI_ERR_BAD_MODEL, "axes input has no value")
                                    : (ti_status)st;
    ti__rplan p;
    ti__rplan_make(x->rank, x->shape, mask, &p);
    ti__red_job j;
    j.x = x;
    j.y = k->out[0];
    j.p = &p;
    j.kind = ti__red_kind_of(k->node->op);
    if (p.n_out == 0) return TI_OK;
    size_t grain = p.n_red > 0 ? TI__MAX((size_t)1, (size_t)16384 / p.n_red) : 16384;
    ti__parallel_for(k->tp, p.n_out, grain, ti__reduce_range, &j);
    return TI_OK;
}

/* ---- ArgMax / ArgMin ---------------------------------------------------------------------- */

/* Splits a shape at axis into outer * n * inner elements. */
TI__PRIVATE void ti__red_split(const ti_tensor *x, int axis, size_t *outer, size_t *n,
                               size_t *inner) {
    *outer = ti__shape_numel(axis, x->shape);
    *n = (size_t)x->shape[axis];
    *inner = ti__shape_numel(x->rank - axis - 1, x->shape + axis + 1);
}

TI__PRIVATE int ti__argmax_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    const ti_tensor *x = k->in[0];
    if (!ti__red_numeric(x->dtype))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "input dtype %s is not supported",
                         ti_dtype_name(x->dtype));
    int64_t a = ti__attr_i(k->node, "axis", 0);
    int r = x->rank > 0 ? x->rank : 1; /* a scalar reduces like a one-element vector */
    int axis = ti__red_axis(a, r);
    if (axis < 0)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "axis %lld out of range for rank %d",
                         (long long)a, x->rank);
    if (x->rank > 0 && x->shape[axis] == 0) {
        size_t others = 1;
        for (int i = 0; i < x->rank; i++)
            if (i != axis) others *= (size_t)x->shape[i];
        if (others != 0)
            return ti__kfail(k, TI_ERR_INVALID_ARGUMENT,
                             "cannot take %s over axis %d of size 0", k->node->op, axis);
    }
    int keep = ti__attr_i(k->node, "keepdims", 1) != 0;
    int64_t dims[TI_MAX_DIMS];
    int rr = 0;
    for (int i = 0; i < x->rank; i++) {
        if (i != axis) dims[rr++] = x->shape[i];
        else if (keep) dims[rr++] = 1;
    }
    if (!ti__set_shape(k->out[0], TI_DTYPE_I64, rr, dims))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid output shape");
    return TI_OK;
}

TI__PRIVATE ti_status ti__argmax_run(ti__kctx *k) {
    const ti_tensor *x = k->in[0];
    int is_max = strcmp(k->node->op, "ArgMax") == 0;
    int last = ti__attr_i(k->node, "select_last_index", 0) != 0;
    int axis = x->rank > 0 ? ti__red_axis(ti__attr_i(k->node, "axis", 0), x->rank) : 0;
    size_t outer = 1, n = 1, inner = 1;
    if (x->rank > 0) ti__red_split(x, axis, &outer, &n, &inner);
    int64_t *y = (int64_t *)k->out[0]->data;
    int is_f = ti__dtype_is_float(x->dtype), unsig = x->dtype == TI_DTYPE_U64;
    for (size_t o = 0; o < outer; o++) {
        for (size_t i = 0; i < inner; i++) {
            size_t base = o * n * inner + i;
            size_t best = 0;
            if (is_f) {
                /* NaN counts as the extreme value (numpy's argmax / argmin) */
                double bv = 0.0;
                for (size_t j = 0; j < n; j++) {
                    double v = x->dtype == TI_DTYPE_F32
                                   ? (double)((const float *)x->data)[base + j * inner]
                                   : ti__get_f64(x, base + j * inner);
                    int better;
                    if (j == 0) better = 1;
                    else if (bv != bv) better = 0;
                    else if (v != v) better = 1;
                    else if (last) better = is_max ? v >= bv : v <= bv;
                    else better = is_max ? v > bv : v < bv;
                    if (better) { bv = v; best = j; }
                }
            } else {
                int64_t bv = 0;
                for (size_t j = 0; j < n; j++) {
                    int64_t v = ti__get_i64(x, base + j * inner);
                    int gt = unsig ? (uint64_t)v > (uint64_t)bv : v > bv;
                    int lt = unsig ? (uint64_t)v < (uint64_t)bv : v < bv;
                    int better = j == 0 || (is_max ? gt : lt) || (last && v == bv);
                    if (better) { bv = v; best = j; }
                }
            }
            y[o * inner + i] = (int64_t)best;
        }
    }
    return TI_OK;
}

/* ---- CumSum / CumProd ------------------------------------------------------------------- */

TI__PRIVATE int ti__cum_axis(ti__kctx *k, int *axis) {
    const ti_tensor *x = k->in[0], *a = k->in[1];
    if (a->data == NULL) return TI__NEED_VALUE;
    if (!ti__dtype_is_int(a->dtype) || ti__numel(a) != 1)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "axis input must be one int32/int64, got %s with "
                         "%zu elements", ti_dtype_name(a->dtype), ti__numel(a));
    int64_t v = ti__get_i64(a, 0);
    *axis = ti__red_axis(v, x->rank);
    if (*axis < 0)
        return ti__kfail(k, TI_ERR_INVALID_ARGUMENT, "axis %lld out of range for rank %d",
                         (long long)v, x->rank);
    return TI_OK;
}

TI__PRIVATE int ti__cum_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    const ti_tensor *x = k->in[0];
    if (!ti__red_numeric(x->dtype))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "input dtype %s is not supported",
                         ti_dtype_name(x->dtype));
    if (x->rank == 0) return ti__kfail(k, TI_ERR_BAD_MODEL, "input must have rank >= 1");
    if (k->in[1]->data != NULL) { /* the axis is checked early when known */
        int axis, st = ti__cum_axis(k, &axis);
        if (st != TI_OK) return st;
    }
    if (!ti__set_shape(k->out[0], x->dtype, x->rank, x->shape))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid output shape");
    return TI_OK;
}

TI__PRIVATE ti_status ti__cum_run(ti__kctx *k) {
    const ti_tensor *x = k->in[0];
    ti_tensor *y = k->out[0];
    int axis, st = ti__cum_axis(k, &axis);
    if (st != TI_OK)
        return st == TI__NEED_VALUE ? ti__kfail(k, TI_ERR_BAD_MODEL, "axis input has no value")
                                    : (ti_status)st;
    int prod = strcmp(k->node->op, "CumProd") == 0;
    int excl = ti__attr_i(k->node, "exclusive", 0) != 0;
    int rev = ti__attr_i(k->node, "reverse", 0) != 0;
    size_t outer, n, inner;
    ti__red_split(x, axis, &outer, &n, &inner);
    int is_f = ti__dtype_is_float(x->dtype);
    for (size_t o = 0; o < outer; o++) {
        for (size_t i = 0; i < inner; i++) {
            double fa = prod ? 1.0 : 0.0;
            uint64_t ia = prod ? 1u : 0u; /* integer scan wraps as numpy does */
            for (size_t s = 0; s < n; s++) {
                size_t j = rev ? n - 1 - s : s;
                size_t e = (o * n + j) * inner + i;
                if (is_f) {
                    double v = x->dtype == TI_DTYPE_F32 ? (double)((const float *)x->data)[e]
                                                       : ti__get_f64(x, e);
                    if (excl) ti__set_f64(y, e, fa);
                    fa = prod ? fa * v : fa + v;
                    if (!excl) ti__set_f64(y, e, fa);
                } else {
                    uint64_t v = (uint64_t)ti__get_i64(x, e);
                    if (excl) ti__set_i64(y, e, (int64_t)ia);
                    ia = prod ? ia * v : ia + v;
                    if (!excl) ti__set_i64(y, e, (int64_t)ia);
                }
            }
        }
    }
    return TI_OK;
}

/* ---- TopK ----------------------------------------------------------------------------- */

/* Reads K (the second input from opset 10, the attribute k before) and the axis. */
TI__PRIVATE int ti__topk_params(ti__kctx *k, int64_t *kk, int *axis) {
    const ti_tensor *x = k->in[0];
    int64_t a = ti__attr_i(k->node, "axis", -1);
    *axis = ti__red_axis(a, x->rank);
    if (*axis < 0)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "axis %lld out of range for rank %d",
                         (long long)a, x->rank);
    int64_t dim = x->shape[*axis];
    if (k->opset < 10 || k->n_in < 2 || k->in[1] == NULL) {
        if (ti__attr_get(k->node, "k") == NULL)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "K is neither an input nor an attribute");
        *kk = ti__attr_i(k->node, "k", 0);
        if (*kk < 0 || *kk > dim)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "k = %lld is outside [0, %lld]",
                             (long long)*kk, (long long)dim);
        return TI_OK;
    }
    const ti_tensor *kt = k->in[1];
    if (kt->data == NULL) return TI__NEED_VALUE;
    if (!ti__dtype_is_int(kt->dtype) || ti__numel(kt) != 1)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "K must be one int64, got %s with %zu elements",
                         ti_dtype_name(kt->dtype), ti__numel(kt));
    *kk = ti__get_i64(kt, 0);
    if (*kk < 0 || *kk > dim)
        return ti__kfail(k, TI_ERR_INVALID_ARGUMENT, "K = %lld is outside [0, %lld] (axis %d)",
                         (long long)*kk, (long long)dim, *axis);
    return TI_OK;
}

TI__PRIVATE int ti__topk_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    const ti_tensor *x = k->in[0];
    if (!ti__red_numeric(x->dtype))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "input dtype %s is not supported",
                         ti_dtype_name(x->dtype));
    if (x->rank == 0) return ti__kfail(k, TI_ERR_BAD_MODEL, "input must have rank >= 1");
    int64_t kk;
    int axis;
    int st = ti__topk_params(k, &kk, &axis);
    if (st != TI_OK) return st;
    int64_t dims[TI_MAX_DIMS];
    memcpy(dims, x->shape, sizeof(int64_t) * (size_t)x->rank);
    dims[axis] = kk;
    if (!ti__set_shape(k->out[0], x->dtype, x->rank, dims))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid output shape");
    if (k->n_out > 1 && k->out[1] != NULL && !ti__set_shape(k->out[1], TI_DTYPE_I64, x->rank, dims))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid output shape");
    return TI_OK;
}

/* Scratch: per slice, n sort keys (8 bytes) and two index arrays of n int64. */
TI__PRIVATE size_t ti__topk_scratch(ti__kctx *k) {
    const ti_tensor *x = k->in[0];
    int axis = ti__red_axis(ti__attr_i(k->node, "axis", -1), x->rank);
    if (axis < 0) return 0;
    size_t n = (size_t)x->shape[axis], b;
    if (!ti__mul_size(n, 24, &b)) return SIZE_MAX;
    return b;
}

/* Sort keys: floats as double (NaN ranks above +inf, as numpy's sort puts it last), integers
 * as int64 with uint64 offset into signed order. */
typedef struct ti__topk_keys {
    const double *f;
    const int64_t *i;
    int largest;
} ti__topk_keys;

/* 1 when element a must come strictly before element b. */
TI__PRIVATE int ti__topk_before(const ti__topk_keys *kk, int64_t a, int64_t b) {
    if (kk->f) {
        double va = kk->f[a], vb = kk->f[b];
        int na = va != va, nb = vb != vb;
        if (na || nb) return kk->largest ? (na && !nb) : (!na && nb);
        return kk->largest ? va > vb : va < vb;
    }
    return kk->largest ? kk->i[a] > kk->i[b] : kk->i[a] < kk->i[b];
}

/* Stable bottom-up merge sort of idx[0..n) (tmp: n more): equal keys keep index order, which
 * is the ONNX tie rule (lower index first). */
TI__PRIVATE void ti__topk_sort(const ti__topk_keys *kk, int64_t *idx, int64_t *tmp, size_t n) {
    int64_t *src = idx, *dst = tmp;
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = TI__MIN(lo + w, n), hi = TI__MIN(lo + 2 * w, n);
            size_t a = lo, b = mid, o = lo;
            while (a < mid && b < hi)
                dst[o++] = ti__topk_before(kk, src[b], src[a]) ? src[b++] : src[a++];
            while (a < mid) dst[o++] = src[a++];
            while (b < hi) dst[o++] = src[b++];
        }
        int64_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != idx) memcpy(idx, src, n * sizeof(int64_t));
}

TI__PRIVATE ti_status ti__topk_run(ti__kctx *k) {
    const ti_tensor *x = k->in[0];
    int64_t kk;
    int axis;
    int st = ti__topk_params(k, &kk, &axis);
    if (st != TI_OK)
        return st == TI__NEED_VALUE ? ti__kfail(k, TI_ERR_BAD_MODEL, "K has no value")
                                    : (ti_status)st;
    size_t outer, n, inner;
    ti__red_split(x, axis, &outer, &n, &inner);
    if (k->scratch_bytes < n * 24)
        return ti__kfail(k, TI_ERR_INVALID_ARGUMENT, "scratch of %zu bytes, need %zu",
                         k->scratch_bytes, n * 24);
    ti__topk_keys keys;
    keys.largest = ti__attr_i(k->node, "largest", 1) != 0;
    double *kf = (double *)k->scratch;
    int64_t *ki = (int64_t *)k->scratch;
    int is_f = ti__dtype_is_float(x->dtype);
    keys.f = is_f ? kf : NULL;
    keys.i = is_f ? NULL : ki;
    int64_t *idx = (int64_t *)k->scratch + n, *tmp = idx + n;
    ti_tensor *yv = k->out[0], *yi = (k->n_out > 1) ? k->out[1] : NULL;
    size_t kn = (size_t)kk;
    for (size_t o = 0; o < outer; o++) {
        for (size_t i = 0; i < inner; i++) {
            size_t base = o * n * inner + i;
            if (is_f) ti__red_load_f64(x, base, (int64_t)inner, n, kf);
            else {
                ti__red_load_i64(x, base, (int64_t)inner, n, ki);
                if (x->dtype == TI_DTYPE_U64) /* unsigned order as signed order */
                    for (size_t j = 0; j < n; j++) ki[j] = (int64_t)((uint64_t)ki[j] ^ ((uint64_t)1 << 63));
            }
            for (size_t j = 0; j < n; j++) idx[j] = (int64_t)j;
            ti__topk_sort(&keys, idx, tmp, n);
            size_t obase = o * kn * inner + i;
            for (size_t j = 0; j < kn; j++) {
                size_t src = base + (size_t)idx[j] * inner, dst = obase + j * inner;
                if (yv != NULL) {
                    size_t es = ti_dtype_size(x->dtype);
                    memcpy((char *)yv->data + dst * es, (const char *)x->data + src * es, es);
                }
                if (yi != NULL) ((int64_t *)yi->data)[dst] = idx[j];
            }
        }
    }
    return TI_OK;
}

/* ---- Softmax / LogSoftmax / Hardmax ------------------------------------------------------ */

typedef enum { TI__SM_SOFT, TI__SM_LOG, TI__SM_HARD } ti__sm_kind;

/* Before opset 13 the input is coerced to 2-D [prod(dims[:axis]), prod(dims[axis:])] and the
 * op runs over the second dim (default axis 1); from 13 it runs over one axis (default -1).
 * Output: outer rows of n elements, inner apart. */
TI__PRIVATE int ti__sm_layout(ti__kctx *k, size_t *outer, size_t *n, size_t *inner) {
    const ti_tensor *x = k->in[0];
    int old = k->opset < 13;
    int64_t a = ti__attr_i(k->node, "axis", old ? 1 : -1);
    int r = x->rank;
    int axis = (old && a == r) ? r : ti__red_axis(a, r); /* axis == rank: n = 1 (old form) */
    if (axis < 0)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "axis %lld out of range for rank %d",
                         (long long)a, r);
    *outer = ti__shape_numel(axis, x->shape);
    if (old) {
        *n = ti__shape_numel(r - axis, x->shape + axis);
        *inner = 1;
    } else {
        *n = (size_t)x->shape[axis];
        *inner = ti__shape_numel(r - axis - 1, x->shape + axis + 1);
    }
    return TI_OK;
}

TI__PRIVATE int ti__sm_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    const ti_tensor *x = k->in[0];
    if (!ti__dtype_is_float(x->dtype))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "input dtype %s is not supported (float only)",
                         ti_dtype_name(x->dtype));
    size_t outer, n, inner;
    int st = ti__sm_layout(k, &outer, &n, &inner);
    if (st != TI_OK) return st;
    if (!ti__set_shape(k->out[0], x->dtype, x->rank, x->shape))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid output shape");
    return TI_OK;
}

/* float32 columns (inner > 1): two float arrays of inner elements for the max and the sum. */
TI__PRIVATE size_t ti__sm_scratch(ti__kctx *k) {
    size_t outer, n, inner, b;
    if (k->in[0]->dtype != TI_DTYPE_F32 || ti__sm_layout(k, &outer, &n, &inner) != TI_OK ||
        inner <= 1)
        return 0;
    if (!ti__mul_size(inner, 2 * sizeof(float), &b)) return SIZE_MAX;
    return b;
}

typedef struct ti__sm_job {
    const float *x;
    float *y;
    size_t n;
    int kind;
} ti__sm_job;

/* float32, contiguous rows [begin, end) of n elements; subtracts the row max (stable). */
TI__PRIVATE void ti__sm_rows_f32(void *ctx, size_t begin, size_t end) {
    const ti__sm_job *j = (const ti__sm_job *)ctx;
    size_t n = j->n;
    for (size_t r = begin; r < end; r++) {
        const float *x = j->x + r * n;
        float *y = j->y + r * n;
        float mx = x[0];
        size_t am = 0;
        for (size_t i = 1; i < n; i++)
            if (x[i] > mx) { mx = x[i]; am = i; }
        if (j->kind == TI__SM_HARD) {
            for (size_t i = 0; i < n; i++) y[i] = i == am ? 1.0f : 0.0f;
            continue;
        }
        double sum = 0.0;
        if (j->kind == TI__SM_SOFT) {
            for (size_t i = 0; i < n; i++) {
                float e = expf(x[i] - mx);
                y[i] = e;
                sum += e;
            }
            float inv = (float)(1.0 / sum);
            for (size_t i = 0; i < n; i++) y[i] *= inv;
        } else {
            for (size_t i = 0; i < n; i++) sum += expf(x[i] - mx);
            float ls = (float)log(sum);
            for (size_t i = 0; i < n; i++) y[i] = x[i] - mx - ls;
        }
    }
}

/* float32 columns: element (o, j, i) at (o * n + j) * inner + i; scratch holds the running max
 * and sum of each of the inner columns, so the rows are read in memory order. */
TI__PRIVATE void ti__sm_cols_f32(const float *x0, float *y0, size_t outer, size_t n, size_t inner,
                                 int kind, float *mx, float *sum) {
    for (size_t o = 0; o < outer; o++) {
        const float *x = x0 + o * n * inner;
        float *y = y0 + o * n * inner;
        for (size_t i = 0; i < inner; i++) mx[i] = x[i];
        for (size_t j = 1; j < n; j++)
            for (size_t i = 0; i < inner; i++)
                if (x[j * inner + i] > mx[i]) mx[i] = x[j * inner + i];
        for (size_t i = 0; i < inner; i++) sum[i] = 0.0f;
        for (size_t j = 0; j < n; j++)
            for (size_t i = 0; i < inner; i++) {
                float e = expf(x[j * inner + i] - mx[i]);
                if (kind == TI__SM_SOFT) y[j * inner + i] = e;
                sum[i] += e;
            }
        if (kind == TI__SM_SOFT) {
            for (size_t i = 0; i < inner; i++) sum[i] = 1.0f / sum[i];
            for (size_t j = 0; j < n; j++)
                for (size_t i = 0; i < inner; i++) y[j * inner + i] *= sum[i];
        } else {
            for (size_t i = 0; i < inner; i++) sum[i] = mx[i] + logf(sum[i]);
            for (size_t j = 0; j < n; j++)
                for (size_t i = 0; i < inner; i++) y[j * inner + i] = x[j * inner + i] - sum[i];
        }
    }
}

/* Rounds v to the precision of a half type. */
TI__PRIVATE float ti__sm_round(ti_dtype dt, float v) {
    return dt == TI_DTYPE_F16 ? ti__f16_to_f32(ti__f32_to_f16(v))
                              : ti__bf16_to_f32(ti__f32_to_bf16(v));
}

/* Softmax of float16 / bfloat16 in float with every step rounded to the type, as numpy does
 * on these types (the ONNX reference outputs are made that way): x - max, exp and the
 * quotient each round; the float16 sum accumulates in float, the bfloat16 one rounds at each
 * addition (ml_dtypes). */
TI__PRIVATE void ti__sm_half(const ti_tensor *x, ti_tensor *y, size_t outer, size_t n,
                             size_t inner) {
    ti_dtype dt = x->dtype;
    for (size_t o = 0; o < outer; o++) {
        for (size_t i = 0; i < inner; i++) {
            size_t base = o * n * inner + i;
            float mx = (float)ti__get_f64(x, base);
            for (size_t j = 1; j < n; j++) {
                float v = (float)ti__get_f64(x, base + j * inner);
                if (v > mx) mx = v;
            }
            float sum = 0.0f;
            for (size_t j = 0; j < n; j++) {
                size_t e = base + j * inner;
                float ev = ti__sm_round(dt, expf(ti__sm_round(dt, (float)ti__get_f64(x, e) - mx)));
                ti__set_f64(y, e, ev);
                sum = dt == TI_DTYPE_BF16 ? ti__sm_round(dt, sum + ev) : sum + ev;
            }
            sum = ti__sm_round(dt, sum);
            for (size_t j = 0; j < n; j++) {
                size_t e = base + j * inner;
                ti__set_f64(y, e, (double)((float)ti__get_f64(y, e) / sum));
            }
        }
    }
}

TI__PRIVATE ti_status ti__sm_run(ti__kctx *k) {
    const ti_tensor *x = k->in[0];
    ti_tensor *y = k->out[0];
    size_t outer, n, inner;
    int st = ti__sm_layout(k, &outer, &n, &inner);
    if (st != TI_OK) return (ti_status)st;
    const char *op = k->node->op;
    int kind = strcmp(op, "Softmax") == 0 ? TI__SM_SOFT
               : strcmp(op, "LogSoftmax") == 0 ? TI__SM_LOG : TI__SM_HARD;
    if (n == 0 || outer == 0 || inner == 0) return TI_OK;
    if (x->dtype == TI_DTYPE_F32 && inner == 1) {
        ti__sm_job j;
        j.x = (const float *)x->data;
        j.y = (float *)y->data;
        j.n = n;
        j.kind = kind;
        ti__parallel_for(k->tp, outer, TI__MAX((size_t)1, (size_t)4096 / n), ti__sm_rows_f32,
                         &j);
        return TI_OK;
    }
    if (x->dtype == TI_DTYPE_F32 && kind != TI__SM_HARD &&
        k->scratch_bytes >= inner * 2 * sizeof(float)) {
        float *mx = (float *)k->scratch;
        ti__sm_cols_f32((const float *)x->data, (float *)y->data, outer, n, inner, kind, mx,
                        mx + inner);
        return TI_OK;
    }
    if ((x->dtype == TI_DTYPE_F16 || x->dtype == TI_DTYPE_BF16) && kind == TI__SM_SOFT) {
        ti__sm_half(x, y, outer, n, inner);
        return TI_OK;
    }
    /* any float dtype, any layout: strided, in double */
    for (size_t o = 0; o < outer; o++) {
        for (size_t i = 0; i < inner; i++) {
            size_t base = o * n * inner + i;
            double mx = ti__get_f64(x, base);
            size_t am = 0;
            for (size_t j = 1; j < n; j++) {
                double v = ti__get_f64(x, base + j * inner);
                if (v > mx) { mx = v; am = j; }
            }
            double sum = 0.0;
            if (kind != TI__SM_HARD)
                for (size_t j = 0; j < n; j++) sum += exp(ti__get_f64(x, base + j * inner) - mx);
            for (size_t j = 0; j < n; j++) {
                size_t e = base + j * inner;
                double v = kind == TI__SM_HARD ? (j == am ? 1.0 : 0.0)
                           : kind == TI__SM_SOFT ? exp(ti__get_f64(x, e) - mx) / sum
                                                 : ti__get_f64(x, e) - mx - log(sum);
                ti__set_f64(y, e, v);
            }
        }
    }
    return TI_OK;
}

TI__PRIVATE const ti__op ti__ops_reduce[] = {
    {"ReduceSum", ti__reduce_shape, ti__reduce_run, NULL, 0},
    {"ReduceMean", ti__reduce_shape, ti__reduce_run, NULL, 0},
    {"ReduceMax", ti__reduce_shape, ti__reduce_run, NULL, 0},
    {"ReduceMin", ti__reduce_shape, ti__reduce_run, NULL, 0},
    {"ReduceProd", ti__reduce_shape, ti__reduce_run, NULL, 0},
    {"ReduceL1", ti__reduce_shape, ti__reduce_run, NULL, 0},
    {"ReduceL2", ti__reduce_shape, ti__reduce_run, NULL, 0},
    {"ReduceLogSum", ti__reduce_shape, ti__reduce_run, NULL, 0},
    {"ReduceLogSumExp", ti__reduce_shape, ti__reduce_run, NULL, 0},
    {"ReduceSumSquare", ti__reduce_shape, ti__reduce_run, NULL, 0},
    {"ArgMax", ti__argmax_shape, ti__argmax_run, NULL, 0},
    {"ArgMin", ti__argmax_shape, ti__argmax_run, NULL, 0},
    {"Softmax", ti__sm_shape, ti__sm_run, ti__sm_scratch, 0},
    {"LogSoftmax", ti__sm_shape, ti__sm_run, ti__sm_scratch, 0},
    {"Hardmax", ti__sm_shape, ti__sm_run, NULL, 0},
    {"CumSum", ti__cum_shape, ti__cum_run, NULL, 0},
    {"CumProd", ti__cum_shape, ti__cum_run, NULL, 0},
    {"TopK", ti__topk_shape, ti__topk_run, ti__topk_scratch, 0},
    {NULL, NULL, NULL, NULL, 0}
};
/* ==== end src/cpu/reduce.c ================================================================== */

/* ==== begin src/cpu/resize.c ================================================================ */
/* Resize (opsets 10 to 19) and the deprecated Upsample (7, 9) on one reference kernel: nearest,
 * N-linear and N-cubic interpolation, every coordinate transformation mode, antialiasing,
 * axes and keep_aspect_ratio_policy. Per resized axis the source taps and weights of each
 * output position are tabulated in scratch; each output element is the weighted sum over the
 * product of its axes' taps, accumulated in double. Relies on internal.h and core/tensor.c.
 * Follows the ONNX reference (onnx/reference/ops/op_resize.py) where the spec is silent.
 * Must not allocate in run: the tables live in the scratch its scratch function sizes. */

enum { TI__RS_NEAREST, TI__RS_LINEAR, TI__RS_CUBIC };
enum { /* coordinate transformation modes */
    TI__RS_HALF_PIXEL,
    TI__RS_HALF_PIXEL_SYM,
    TI__RS_PYTORCH_HALF_PIXEL,
    TI__RS_ALIGN_CORNERS,
    TI__RS_ASYMMETRIC,
    TI__RS_TF_CROP,
    TI__RS_TF_HALF_PIXEL_NN /* opset 11 only */
};
enum { /* nearest modes; SIMPLE is the Resize-10 / Upsample rule (ceil when downsampling) */
    TI__RS_ROUND_FLOOR,
    TI__RS_ROUND_CEIL,
    TI__RS_FLOOR,
    TI__RS_CEIL,
    TI__RS_SIMPLE
};

/* Everything the shape, scratch and run functions derive from attributes and inputs. */
typedef struct ti__rs_params {
    int rank, mode, ctm, nearest, antialias, exclude;
    double cubic_a, extrap;
    int n_axes;                     /* axes the roi refers to, in order */
    int axes[TI_MAX_DIMS];
    double scale[TI_MAX_DIMS];      /* per dim of X; 1 for dims not resized */
    int64_t out[TI_MAX_DIMS];
    int taps[TI_MAX_DIMS];          /* source taps per output position; 1 for identity */
    int identity[TI_MAX_DIMS];
} ti__rs_params;

TI__PRIVATE int ti__rs_pick(const char *s, const char *const *names, int n) {
    for (int i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0) return i;
    return -1;
}

/* Taps of the (antialiased) linear or cubic filter at scale s: the ONNX reference footprint. */
TI__PRIVATE int ti__rs_filter_taps(int mode, int antialias, double s) {
    if (mode == TI__RS_NEAREST) return 1;
    double half = mode == TI__RS_LINEAR ? 1.0 : 2.0; /* filter support radius */
    if (!antialias || s >= 1.0) return 2 * (int)half;
    double start = floor(-half / s) + 1.0;
    double t = 2.0 - 2.0 * start;
    return t > 1e6 ? -1 : (int)t; /* -1: a filter no table should hold */
}

TI__PRIVATE int ti__rs_params_get(ti__kctx *k, ti__rs_params *p) {
    const ti__node *n = k->node;
    const ti_tensor *x = k->in[0];
    int r = x->rank;
    int upsample = strcmp(n->op, "Upsample") == 0;
    int modern = !upsample && k->opset >= 11;
    memset(p, 0, sizeof *p);
    p->rank = r;
    if (r < 1) return ti__kfail(k, TI_ERR_BAD_MODEL, "input must have rank >= 1");

    static const char *const modes[] = {"nearest", "linear", "cubic", "bilinear"};
    const char *ms = ti__attr_s(n, "mode", "nearest");
    p->mode = ti__rs_pick(ms, modes, modern ? 3 : 4);
    if (p->mode == 3) p->mode = TI__RS_LINEAR; /* "bilinear": Upsample-1 spelling */
    if (p->mode < 0) return ti__kfail(k, TI_ERR_UNSUPPORTED, "mode '%s' is not supported", ms);
    if (modern) {
        static const char *const ctms[] = {"half_pixel", "half_pixel_symmetric",
                                           "pytorch_half_pixel", "align_corners", "asymmetric",
                                           "tf_crop_and_resize", "tf_half_pixel_for_nn"};
        static const char *const nms[] = {"round_prefer_floor", "round_prefer_ceil", "floor",
                                          "ceil"};
        const char *cs = ti__attr_s(n, "coordinate_transformation_mode", "half_pixel");
        const char *ns = ti__attr_s(n, "nearest_mode", "round_prefer_floor");
        p->ctm = ti__rs_pick(cs, ctms, 7);
        if (p->ctm < 0)
            return ti__kfail(k, TI_ERR_UNSUPPORTED,
                             "coordinate_transformation_mode '%s' is not supported", cs);
        p->nearest = ti__rs_pick(ns, nms, 4);
        if (p->nearest < 0)
            return ti__kfail(k, TI_ERR_UNSUPPORTED, "nearest_mode '%s' is not supported", ns);
        p->cubic_a = ti__attr_f(n, "cubic_coeff_a", -0.75f);
        p->exclude = ti__attr_i(n, "exclude_outside", 0) != 0;
        p->extrap = ti__attr_f(n, "extrapolation_value", 0.0f);
        p->antialias = ti__attr_i(n, "antialias", 0) != 0 && p->mode != TI__RS_NEAREST;
    } else { /* Resize-10 and Upsample: asymmetric coordinates (as onnxruntime does) */
        p->ctm = TI__RS_ASYMMETRIC;
        p->nearest = TI__RS_SIMPLE;
        p->cubic_a = -0.75;
    }

    /* axes (opset 18): which dims scales / sizes / roi refer to */
    int na = 0;
    const int64_t *axes = modern ? ti__attr_ints(n, "axes", &na) : NULL;
    if (axes == NULL) {
        na = r;
        for (int i = 0; i < r; i++) p->axes[i] = i;
    } else {
        if (na > r)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "%d axes for an input of rank %d", na, r);
        unsigned seen = 0;
        for (int i = 0; i < na; i++) {
            int64_t a = axes[i];
            if (a < -(int64_t)r || a >= (int64_t)r)
                return ti__kfail(k, TI_ERR_BAD_MODEL, "axis %lld out of range for rank %d",
                                 (long long)a, r);
            p->axes[i] = (int)(a < 0 ? a + r : a);
            if (seen & (1u << p->axes[i]))
                return ti__kfail(k, TI_ERR_BAD_MODEL, "axis %lld repeated", (long long)a);
            seen |= 1u << p->axes[i];
        }
    }
    p->n_axes = na;
    if (p->ctm == TI__RS_TF_CROP) {
        const ti_tensor *roi = k->n_in > 1 ? k->in[1] : NULL;
        if (roi == NULL || ti__numel(roi) != (size_t)(2 * na) || !ti__dtype_is_float(roi->dtype))
            return ti__kfail(k, TI_ERR_BAD_MODEL,
                             "tf_crop_and_resize needs a float roi of %d values, got %zu", 2 * na,
                             roi ? ti__numel(roi) : (size_t)0);
    }
    for (int d = 0; d < r; d++) {
        p->scale[d] = 1.0;
        p->out[d] = x->shape[d];
    }

    /* scales or sizes */
    const ti_tensor *scales = NULL, *sizes = NULL;
    int n_scales_attr = 0;
    const float *scales_attr = NULL;
    if (upsample && k->opset < 9) {
        scales_attr = ti__attr_floats(n, "scales", &n_scales_attr);
        if (scales_attr == NULL)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "attribute 'scales' is required");
    } else if (!modern) {
        TI__REQUIRE_INPUT(k, 1);
        scales = k->in[1];
    } else {
        scales = k->n_in > 2 ? k->in[2] : NULL;
        sizes = k->n_in > 3 ? k->in[3] : NULL;
        if (scales != NULL && ti__numel(scales) == 0) scales = NULL;
        if (sizes != NULL && ti__numel(sizes) == 0) sizes = NULL;
        if (scales != NULL && sizes != NULL)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "only one of scales and sizes may be given");
    }
    if (scales == NULL && sizes == NULL && scales_attr == NULL)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "one of scales and sizes must be given");
    TI__NEED(k, scales);
    TI__NEED(k, sizes);
    size_t cnt = scales_attr ? (size_t)n_scales_attr : ti__numel(scales ? scales : sizes);
    if (cnt != (size_t)na)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "%s has %zu values, expected %d",
                         sizes ? "sizes" : "scales", cnt, na);
    if (sizes != NULL) {
        if (!ti__dtype_is_int(sizes->dtype))
            return ti__kfail(k, TI_ERR_BAD_MODEL, "sizes has dtype %s, expected int64",
                             ti_dtype_name(sizes->dtype));
        static const char *const pols[] = {"stretch", "not_larger", "not_smaller"};
        const char *ps = ti__attr_s(n, "keep_aspect_ratio_policy", "stretch");
        int pol = ti__rs_pick(ps, pols, 3);
        if (pol < 0)
            return ti__kfail(k, TI_ERR_UNSUPPORTED,
                             "keep_aspect_ratio_policy '%s' is not supported", ps);
        double common = pol == 1 ? INFINITY : 0.0;
        for (int i = 0; i < na; i++) {
            int d = p->axes[i];
            int64_t s = ti__get_i64(sizes, (size_t)i);
            if (s < 0)
                return ti__kfail(k, TI_ERR_BAD_MODEL, "sizes[%d] = %lld is negative", i,
                                 (long long)s);
            if (x->shape[d] == 0 && s != 0)
                return ti__kfail(k, TI_ERR_BAD_MODEL, "cannot resize empty dim %d to %lld", d,
                                 (long long)s);
            p->out[d] = s;
            p->scale[d] = x->shape[d] ? (double)s / (double)x->shape[d] : 1.0;
            if (pol == 1) common = TI__MIN(common, p->scale[d]);
            if (pol == 2) common = TI__MAX(common, p->scale[d]);
        }
        if (pol != 0) { /* one scale for all the axes; round_int rounds halves up */
            for (int i = 0; i < na; i++) {
                int d = p->axes[i];
                p->scale[d] = common;
                double v = floor(common * (double)x->shape[d] + 0.5);
                if (!(v < 9e15)) return ti__kfail(k, TI_ERR_BAD_MODEL, "output size overflows");
                p->out[d] = (int64_t)v;
            }
        }
    } else {
        for (int i = 0; i < na; i++) {
            int d = p->axes[i];
            double s = scales_attr ? (double)scales_attr[i] : ti__get_f64(scales, (size_t)i);
            if (!(s > 0.0) || s == INFINITY)
                return ti__kfail(k, TI_ERR_BAD_MODEL, "scales[%d] = %g, expected > 0", i, s);
            double v = floor(s * (double)x->shape[d]);
            if (!(v < 9e15)) return ti__kfail(k, TI_ERR_BAD_MODEL, "output size overflows");
            p->scale[d] = s;
            p->out[d] = (int64_t)v;
        }
    }
    for (int d = 0; d < r; d++) {
        /* as the reference: a dim whose scale is 1 (to 1e-9) and size unchanged is copied.
         * A crop is never an identity (its roi moves the samples); with roi [0, 1] its
         * coordinates come out exact anyway. */
        p->identity[d] = fabs(p->scale[d] - 1.0) <= 1e-9 && p->out[d] == x->shape[d] &&
                         p->ctm != TI__RS_TF_CROP;
        p->taps[d] = p->identity[d] ? 1 : ti__rs_filter_taps(p->mode, p->antialias, p->scale[d]);
        if (p->taps[d] < 0)
            return ti__kfail(k, TI_ERR_UNSUPPORTED, "antialias filter for scale %g is too wide",
                             p->scale[d]);
    }
    return TI_OK;
}

TI__PRIVATE int ti__resize_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    const ti_tensor *x = k->in[0];
    if (!ti__dtype_is_float(x->dtype) && !ti__dtype_is_int(x->dtype))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "input dtype %s is not supported",
                         ti_dtype_name(x->dtype));
    ti__rs_params p;
    int st = ti__rs_params_get(k, &p);
    if (st != TI_OK) return st;
    if (!ti__set_shape(k->out[0], x->dtype, p.rank, p.out))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid output shape");
    return TI_OK;
}

/* Scratch layout, in bytes from the start (all 8-aligned): a row accumulator of out[last]
 * doubles; then per dim, out[d] * taps[d] weights (double) and as many source indices
 * (int64, clamped to the input); then one flag byte per output position of each dim (1: the
 * crop falls outside the input there). Returns SIZE_MAX on overflow. */
typedef struct ti__rs_layout {
    size_t acc, w[TI_MAX_DIMS], idx[TI_MAX_DIMS], flag[TI_MAX_DIMS], total;
} ti__rs_layout;

TI__PRIVATE void ti__rs_layout_make(const ti__rs_params *p, ti__rs_layout *l) {
    size_t off = 0, b = 0;
    int ok = 1;
    l->acc = 0;
    ok &= ti__mul_size((size_t)p->out[p->rank - 1], 8, &b) && ti__add_size(off, b, &off);
    for (int d = 0; d < p->rank; d++) {
        size_t n = 0;
        ok &= ti__mul_size((size_t)p->out[d], (size_t)p->taps[d], &n);
        ok &= ti__mul_size(n, 8, &b);
        l->w[d] = off;
        ok &= ti__add_size(off, b, &off);
        l->idx[d] = off;
        ok &= ti__add_size(off, b, &off);
    }
    for (int d = 0; d < p->rank; d++) {
        l->flag[d] = off;
        ok &= ti__add_size(off, ((size_t)p->out[d] + 7) & ~(size_t)7, &off);
    }
    l->total = ok ? off : SIZE_MAX;
}

TI__PRIVATE size_t ti__resize_scratch(ti__kctx *k) {
    ti__rs_params p;
    if (ti__rs_params_get(k, &p) != TI_OK) return 0;
    ti__rs_layout l;
    ti__rs_layout_make(&p, &l);
    return l.total;
}

/* Source coordinate of output position y along a dim (ONNX Resize spec, per mode). */
TI__PRIVATE double ti__rs_coord(int ctm, double y, double scale, int64_t in, int64_t out,
                                double roi0, double roi1) {
    double ow = scale * (double)in; /* output width before flooring: may be fractional */
    switch (ctm) {
    case TI__RS_ALIGN_CORNERS: return ow == 1.0 ? 0.0 : y * (double)(in - 1) / (ow - 1.0);
    case TI__RS_ASYMMETRIC: return y / scale;
    case TI__RS_TF_HALF_PIXEL_NN: return (y + 0.5) / scale;
    case TI__RS_TF_CROP: {
        /* roi1 - roi0 and roi0 * (in - 1) round to float, as the reference's float32 roi
         * does: it decides ties of the nearest mode */
        float rd = (float)roi1 - (float)roi0, r0 = (float)roi0 * (float)(in - 1);
        double x = ow == 1.0 ? (double)(rd * (float)(in - 1) / 2.0f)
                             : y * (double)rd * (double)(in - 1) / (ow - 1.0);
        return x + (double)r0;
    }
    case TI__RS_PYTORCH_HALF_PIXEL: return out > 1 ? (y + 0.5) / scale - 0.5 : 0.0;
    case TI__RS_HALF_PIXEL_SYM: {
        double adjust = (double)out / ow, center = (double)in / 2.0;
        return center * (1.0 - adjust) + (y + 0.5) / scale - 0.5;
    }
    default: return (y + 0.5) / scale - 0.5;
    }
}

/* Filter weight at distance t (in input pixels, already scaled for antialiasing). */
TI__PRIVATE double ti__rs_kernel(int mode, double a, double t) {
    t = fabs(t);
    if (mode == TI__RS_LINEAR) return t < 1.0 ? 1.0 - t : 0.0;
    if (t <= 1.0) return ((a + 2.0) * t - (a + 3.0)) * t * t + 1.0;
    if (t < 2.0) return ((a * t - 5.0 * a) * t + 8.0 * a) * t - 4.0 * a;
    return 0.0;
}

/* Fills the tables of dim d (see ti__rs_layout). */
TI__PRIVATE void ti__rs_table(const ti__rs_params *p, int d, int64_t in, double roi0,
                              double roi1, int identity, double *w, int64_t *idx,
                              uint8_t *flag) {
    int64_t out = p->out[d];
    int taps = p->taps[d];
    double s = p->scale[d];
    for (int64_t o = 0; o < out; o++) {
        double *wo = w + o * taps;
        int64_t *io = idx + o * taps;
        if (identity) {
            wo[0] = 1.0;
            io[0] = o;
            flag[o] = 0;
            continue;
        }
        double x = ti__rs_coord(p->ctm, (double)o, s, in, out, roi0, roi1);
        flag[o] = p->ctm == TI__RS_TF_CROP && (x < 0.0 || x > (double)(in - 1));
        double fl = floor(x), frac = x - fl;
        if (p->mode == TI__RS_NEAREST) {
            double v;
            switch (frac == 0.0 ? TI__RS_FLOOR : p->nearest) {
            case TI__RS_ROUND_FLOOR: v = frac <= 0.5 ? fl : fl + 1.0; break;
            case TI__RS_ROUND_CEIL: v = frac < 0.5 ? fl : fl + 1.0; break;
            case TI__RS_CEIL: v = fl + 1.0; break;
            case TI__RS_SIMPLE: v = s < 1.0 ? fl + 1.0 : fl; break;
            default: v = fl; break;
            }
            wo[0] = 1.0;
            io[0] = v < 0.0 ? 0 : v > (double)(in - 1) ? in - 1 : (int64_t)v;
            continue;
        }
        /* the taps nearest x, preferring the left one: as the reference's window */
        double start = frac == 0.0 ? fl - taps / 2 : fl - taps / 2 + 1;
        double fs = p->antialias ? TI__MIN(s, 1.0) : 1.0, sum = 0.0;
        for (int t = 0; t < taps; t++) {
            wo[t] = ti__rs_kernel(p->mode, p->cubic_a, (start + t - x) * fs);
            sum += wo[t];
        }
        if (p->antialias && sum != 0.0)
            for (int t = 0; t < taps; t++) wo[t] /= sum;
        if (p->exclude) {
            sum = 0.0;
            for (int t = 0; t < taps; t++) {
                double src = start + t;
                if (src < 0.0 || src > (double)(in - 1)) wo[t] = 0.0;
                sum += wo[t];
            }
            if (sum != 0.0)
                for (int t = 0; t < taps; t++) wo[t] /= sum;
        }
        for (int t = 0; t < taps; t++) {
            double src = start + t;
            io[t] = src < 0.0 ? 0 : src > (double)(in - 1) ? in - 1 : (int64_t)src;
        }
    }
}

TI__PRIVATE ti_status ti__resize_run(ti__kctx *k) {
    const ti_tensor *x = k->in[0];
    ti_tensor *y = k->out[0];
    ti__rs_params p;
    int st = ti__rs_params_get(k, &p);
    if (st != TI_OK)
        return st == TI__NEED_VALUE ? ti__kfail(k, TI_ERR_BAD_MODEL, "scales/sizes have no value")
                                    : (ti_status)st;
    int r = p.rank;
    if (ti__numel(y) == 0) return TI_OK;
    ti__rs_layout l;
    ti__rs_layout_make(&p, &l);
    if (l.total == SIZE_MAX || k->scratch_bytes < l.total)
        return ti__kfail(k, TI_ERR_INVALID_ARGUMENT, "scratch of %zu bytes, need %zu",
                         k->scratch_bytes, l.total);
    /* roi: [start..., end...] over the axes, normalised to the input */
    double roi0[TI_MAX_DIMS], roi1[TI_MAX_DIMS];
    for (int d = 0; d < r; d++) {
        roi0[d] = 0.0;
        roi1[d] = 1.0;
    }
    if (p.ctm == TI__RS_TF_CROP) {
        const ti_tensor *roi = k->in[1]; /* checked by ti__rs_params_get */
        for (int i = 0; i < p.n_axes; i++) {
            roi0[p.axes[i]] = ti__get_f64(roi, (size_t)i);
            roi1[p.axes[i]] = ti__get_f64(roi, (size_t)(p.n_axes + i));
        }
    }
    char *sc = (char *)k->scratch;
    double *acc = (double *)(sc + l.acc);
    int multi[TI_MAX_DIMS], n_multi = 0; /* outer dims with more than one tap */
    for (int d = 0; d < r; d++) {
        ti__rs_table(&p, d, x->shape[d], roi0[d], roi1[d], p.identity[d], (double *)(sc + l.w[d]),
                     (int64_t *)(sc + l.idx[d]), (uint8_t *)(sc + l.flag[d]));
        if (d < r - 1 && p.taps[d] > 1) multi[n_multi++] = d;
    }
    int64_t xs[TI_MAX_DIMS];
    ti__strides(r, x->shape, xs);
    int last = r - 1;
    int64_t W = p.out[last];
    int tl = p.taps[last];
    const double *wl = (const double *)(sc + l.w[last]);
    const int64_t *il = (const int64_t *)(sc + l.idx[last]);
    const uint8_t *fl = (const uint8_t *)(sc + l.flag[last]);
    size_t es = ti_dtype_size(x->dtype);
    int is_int = ti__dtype_is_int(x->dtype);
    int64_t lo = 0, hi = 0;
    if (is_int) { /* integer outputs round half to even and saturate, as the reference */
        switch (x->dtype) {
        case TI_DTYPE_I8: lo = INT8_MIN; hi = INT8_MAX; break;
        case TI_DTYPE_U8: lo = 0; hi = UINT8_MAX; break;
        case TI_DTYPE_I16: lo = INT16_MIN; hi = INT16_MAX; break;
        case TI_DTYPE_U16: lo = 0; hi = UINT16_MAX; break;
        case TI_DTYPE_I32: lo = INT32_MIN; hi = INT32_MAX; break;
        case TI_DTYPE_U32: lo = 0; hi = UINT32_MAX; break;
        default: lo = INT64_MIN; hi = INT64_MAX; break;
        }
    }
    size_t rows = ti__shape_numel(r - 1, p.out);
    int64_t ro[TI_MAX_DIMS] = {0}; /* output position of the current row, dims < last */
    for (size_t row = 0; row < rows; row++) {
        size_t ybase = row * (size_t)W;
        int ext = 0;
        size_t base = 0; /* input offset of the first tap of single-tap dims */
        for (int d = 0; d < last; d++) {
            ext |= ((const uint8_t *)(sc + l.flag[d]))[ro[d]];
            if (p.taps[d] == 1) base += (size_t)((const int64_t *)(sc + l.idx[d]))[ro[d]] * (size_t)xs[d];
        }
        if (!ext && n_multi == 0 && tl == 1) { /* nearest / copies: exact element moves */
            const char *src = (const char *)x->data + base * es;
            char *dst = (char *)y->data + ybase * es;
            if (es == 4) { /* float32 / int32: a typed gather */
                const uint32_t *s4 = (const uint32_t *)(const void *)src;
                uint32_t *d4 = (uint32_t *)(void *)dst;
                for (int64_t i = 0; i < W; i++) d4[i] = s4[il[i]];
            } else {
                for (int64_t i = 0; i < W; i++)
                    memcpy(dst + (size_t)i * es, src + (size_t)il[i] * es, es);
            }
            for (int64_t i = 0; i < W; i++) /* crop positions outside the input */
                if (fl[i]) ti__set_f64(y, ybase + (size_t)i, p.extrap);
        } else if (!ext) {
            for (int64_t i = 0; i < W; i++) acc[i] = 0.0;
            int64_t tap[TI_MAX_DIMS] = {0}; /* odometer over the taps of the multi-tap dims */
            for (;;) {
                double wo = 1.0;
                size_t off = base;
                for (int m = 0; m < n_multi; m++) {
                    int d = multi[m];
                    size_t e = (size_t)(ro[d] * p.taps[d] + tap[m]);
                    wo *= ((const double *)(sc + l.w[d]))[e];
                    off += (size_t)((const int64_t *)(sc + l.idx[d]))[e] * (size_t)xs[d];
                }
                if (wo != 0.0) {
                    for (int64_t i = 0; i < W; i++) {
                        const double *wi = wl + i * tl;
                        const int64_t *ii = il + i * tl;
                        double a = 0.0;
                        if (x->dtype == TI_DTYPE_F32) {
                            const float *xp = (const float *)x->data + off;
                            for (int t = 0; t < tl; t++) a += wi[t] * xp[ii[t] * xs[last]];
                        } else {
                            for (int t = 0; t < tl; t++)
                                a += wi[t] * ti__get_f64(x, off + (size_t)(ii[t] * xs[last]));
                        }
                        acc[i] += wo * a;
                    }
                }
                int m = n_multi - 1;
                for (; m >= 0; m--) {
                    if (++tap[m] < p.taps[multi[m]]) break;
                    tap[m] = 0;
                }
                if (m < 0) break;
            }
            for (int64_t i = 0; i < W; i++) {
                size_t e = ybase + (size_t)i;
                double v = fl[i] ? p.extrap : acc[i];
                if (x->dtype == TI_DTYPE_F32) ((float *)y->data)[e] = (float)v;
                else if (is_int) {
                    v = rint(v);
                    v = v < (double)lo ? (double)lo : v > (double)hi ? (double)hi : v;
                    ti__set_f64(y, e, v);
                } else ti__set_f64(y, e, v);
            }
        } else {
            for (int64_t i = 0; i < W; i++) ti__set_f64(y, ybase + (size_t)i, p.extrap);
        }
        for (int d = last - 1; d >= 0; d--) { /* next row */
            if (++ro[d] < p.out[d]) break;
            ro[d] = 0;
        }
    }
    return TI_OK;
}

TI__PRIVATE const ti__op ti__ops_resize[] = {
    {"Resize", ti__resize_shape, ti__resize_run, ti__resize_scratch, 0},
    {"Upsample", ti__resize_shape, ti__resize_run, ti__resize_scratch, 0},
    {NULL, NULL, NULL, NULL, 0}
};
/* ==== end src/cpu/resize.c ================================================================== */

/* ==== begin src/cpu/rnn.c =================================================================== */
/* Recurrent layers: RNN, GRU and LSTM (ONNX opsets 7-22): forward, reverse and bidirectional,
 * layout 0/1, optional bias, sequence_lens, initial states, LSTM peepholes and input_forget,
 * GRU linear_before_reset, clip, and the activations / activation_alpha / activation_beta
 * attributes. Reference kernels for float32/float64/float16 computing in double.
 * Relies on internal.h and core/tensor.c. Must not allocate in a run function: the state
 * and gate vectors of one (direction, batch) sequence live in the scratch the op asks for. */

enum { TI__RNN_PLAIN, TI__RNN_GRU, TI__RNN_LSTM };

/* Activation functions of the recurrent ops (ONNX RNN spec, "activation functions"). */
enum {
    TI__RACT_RELU,
    TI__RACT_TANH,
    TI__RACT_SIGMOID,
    TI__RACT_AFFINE,
    TI__RACT_LEAKY_RELU,
    TI__RACT_THRESHOLDED_RELU,
    TI__RACT_SCALED_TANH,
    TI__RACT_HARD_SIGMOID,
    TI__RACT_ELU,
    TI__RACT_SOFTSIGN,
    TI__RACT_SOFTPLUS
};

typedef struct ti__ract {
    int kind;
    double alpha, beta;
} ti__ract;

TI__PRIVATE double ti__ract_apply(const ti__ract *a, double x) {
    switch (a->kind) {
    case TI__RACT_RELU: return x > 0.0 ? x : 0.0;
    case TI__RACT_TANH: return tanh(x);
    case TI__RACT_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case TI__RACT_AFFINE: return a->alpha * x + a->beta;
    case TI__RACT_LEAKY_RELU: return x >= 0.0 ? x : a->alpha * x;
    case TI__RACT_THRESHOLDED_RELU: return x > a->alpha ? x : 0.0;
    case TI__RACT_SCALED_TANH: return a->alpha * tanh(a->beta * x);
    case TI__RACT_HARD_SIGMOID: {
        double y = a->alpha * x + a->beta;
        return y < 0.0 ? 0.0 : (y > 1.0 ? 1.0 : y);
    }
    case TI__RACT_ELU: return x >= 0.0 ? x : a->alpha * (exp(x) - 1.0);
    case TI__RACT_SOFTSIGN: return x / (1.0 + fabs(x));
    case TI__RACT_SOFTPLUS: return log1p(exp(x));
    default: return x;
    }
}

/* Name (case-insensitive, as onnxruntime accepts) -> kind, default alpha/beta, and how many
 * of activation_alpha / activation_beta the function consumes. */
TI__PRIVATE int ti__ract_lookup(const char *name, ti__ract *a, int *n_alpha, int *n_beta) {
    static const struct {
        const char *name;
        int kind, n_alpha, n_beta;
        double alpha, beta;
    } tab[] = {
        {"relu", TI__RACT_RELU, 0, 0, 0.0, 0.0},
        {"tanh", TI__RACT_TANH, 0, 0, 0.0, 0.0},
        {"sigmoid", TI__RACT_SIGMOID, 0, 0, 0.0, 0.0},
        {"affine", TI__RACT_AFFINE, 1, 1, 1.0, 0.0},
        {"leakyrelu", TI__RACT_LEAKY_RELU, 1, 0, 0.01, 0.0},
        {"thresholdedrelu", TI__RACT_THRESHOLDED_RELU, 1, 0, 1.0, 0.0},
        {"scaledtanh", TI__RACT_SCALED_TANH, 1, 1, 1.0, 1.0},
        {"hardsigmoid", TI__RACT_HARD_SIGMOID, 1, 1, 0.2, 0.5},
        {"elu", TI__RACT_ELU, 1, 0, 1.0, 0.0},
        {"softsign", TI__RACT_SOFTSIGN, 0, 0, 0.0, 0.0},
        {"softplus", TI__RACT_SOFTPLUS, 0, 0, 0.0, 0.0},
    };
    char low[32];
    size_t n = strlen(name);
    if (n >= sizeof low) return 0;
    for (size_t i = 0; i <= n; i++) {
        char c = name[i];
        low[i] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
    }
    for (size_t i = 0; i < TI__COUNTOF(tab); i++) {
        if (strcmp(low, tab[i].name) == 0) {
            a->kind = tab[i].kind;
            a->alpha = tab[i].alpha;
            a->beta = tab[i].beta;
            *n_alpha = tab[i].n_alpha;
            *n_beta = tab[i].n_beta;
            return 1;
        }
    }
    return 0;
}

typedef struct ti__rnn {
    int kind;
    int g;      /* gates: 1 RNN, 3 GRU (z, r, h), 4 LSTM (i, o, f, c) */
    int n_act;  /* activations per direction: 1, 2, 3 */
    const ti_tensor *x, *w, *r, *bias, *seq, *h0, *c0, *peep;
    ti_tensor *y, *yh, *yc;
    int64_t s, b, in, h;
    int dirs;   /* 1 or 2 */
    int reverse; /* direction "reverse" (only with dirs == 1) */
    int layout;
    double clip; /* <= 0: none */
    int lbr;     /* GRU linear_before_reset */
    int input_forget;
    ti__ract act[2][3];
} ti__rnn;

TI__PRIVATE int ti__rnn_setup(ti__kctx *k, ti__rnn *p, int set_outputs) {
    memset(p, 0, sizeof *p);
    const ti__node *n = k->node;
    const char *op = n->op;
    p->kind = strcmp(op, "LSTM") == 0 ? TI__RNN_LSTM : strcmp(op, "GRU") == 0 ? TI__RNN_GRU
                                                                               : TI__RNN_PLAIN;
    p->g = p->kind == TI__RNN_LSTM ? 4 : p->kind == TI__RNN_GRU ? 3 : 1;
    p->n_act = p->kind == TI__RNN_LSTM ? 3 : p->kind == TI__RNN_GRU ? 2 : 1;
    TI__REQUIRE_INPUT(k, 0);
    TI__REQUIRE_INPUT(k, 1);
    TI__REQUIRE_INPUT(k, 2);
    p->x = k->in[0];
    p->w = k->in[1];
    p->r = k->in[2];
    p->bias = k->n_in > 3 ? k->in[3] : NULL;
    p->seq = k->n_in > 4 ? k->in[4] : NULL;
    p->h0 = k->n_in > 5 ? k->in[5] : NULL;
    p->c0 = p->kind == TI__RNN_LSTM && k->n_in > 6 ? k->in[6] : NULL;
    p->peep = p->kind == TI__RNN_LSTM && k->n_in > 7 ? k->in[7] : NULL;
    p->y = k->n_out > 0 ? k->out[0] : NULL;
    p->yh = k->n_out > 1 ? k->out[1] : NULL;
    p->yc = p->kind == TI__RNN_LSTM && k->n_out > 2 ? k->out[2] : NULL;
    const ti_tensor *x = p->x;
    ti_dtype dt = x->dtype;
    if (dt != TI_DTYPE_F32 && dt != TI_DTYPE_F64 && dt != TI_DTYPE_F16)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "X dtype %s: float32, float64 or float16 only",
                         ti_dtype_name(dt));
    const ti_tensor *same[6];
    same[0] = p->w, same[1] = p->r, same[2] = p->bias, same[3] = p->h0, same[4] = p->c0,
    same[5] = p->peep;
    for (int i = 0; i < 6; i++)
        if (same[i] != NULL && same[i]->dtype != dt)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "input dtype %s differs from X dtype %s",
                             ti_dtype_name(same[i]->dtype), ti_dtype_name(dt));
    const char *dir = ti__attr_s(n, "direction", "forward");
    if (strcmp(dir, "forward") == 0) p->dirs = 1;
    else if (strcmp(dir, "reverse") == 0) p->dirs = 1, p->reverse = 1;
    else if (strcmp(dir, "bidirectional") == 0) p->dirs = 2;
    else
        return ti__kfail(k, TI_ERR_BAD_MODEL,
                         "direction '%s' is not forward, reverse or bidirectional", dir);
    int64_t layout = ti__attr_i(n, "layout", 0);
    if (layout != 0 && layout != 1)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "layout %lld is not 0 or 1", (long long)layout);
    p->layout = (int)layout;
    if (x->rank != 3)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "X has rank %d, expected 3", x->rank);
    p->s = p->layout ? x->shape[1] : x->shape[0];
    p->b = p->layout ? x->shape[0] : x->shape[1];
    p->in = x->shape[2];
    if (p->r->rank != 3)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "R has rank %d, expected 3", p->r->rank);
    p->h = ti__attr_i(n, "hidden_size", p->r->shape[2]);
    int64_t gh = p->g * p->h, dirs = p->dirs;
    if (p->h <= 0 || p->w->rank != 3 || p->w->shape[0] != dirs || p->w->shape[1] != gh ||
        p->w->shape[2] != p->in)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "W must have shape [%lld, %lld, %lld]",
                         (long long)dirs, (long long)gh, (long long)p->in);
    if (p->r->shape[0] != dirs || p->r->shape[1] != gh || p->r->shape[2] != p->h)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "R must have shape [%lld, %lld, %lld]",
                         (long long)dirs, (long long)gh, (long long)p->h);
    if (p->bias != NULL &&
        (p->bias->rank != 2 || p->bias->shape[0] != dirs || p->bias->shape[1] != 2 * gh))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "B must have shape [%lld, %lld]", (long long)dirs,
                         (long long)(2 * gh));
    if (p->seq != NULL &&
        (!ti__dtype_is_int(p->seq->dtype) || p->seq->rank != 1 || p->seq->shape[0] != p->b))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "sequence_lens must be integer [%lld]",
                         (long long)p->b);
    int64_t st[3];
    st[0] = p->layout ? p->b : dirs;
    st[1] = p->layout ? dirs : p->b;
    st[2] = p->h;
    const ti_tensor *states[2];
    states[0] = p->h0, states[1] = p->c0;
    for (int i = 0; i < 2; i++) {
        const ti_tensor *t = states[i];
        if (t != NULL && (t->rank != 3 || t->shape[0] != st[0] || t->shape[1] != st[1] ||
                          t->shape[2] != st[2]))
            return ti__kfail(k, TI_ERR_BAD_MODEL, "%s must have shape [%lld, %lld, %lld]",
                             i == 0 ? "initial_h" : "initial_c", (long long)st[0],
                             (long long)st[1], (long long)st[2]);
    }
    if (p->peep != NULL &&
        (p->peep->rank != 2 || p->peep->shape[0] != dirs || p->peep->shape[1] != 3 * p->h))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "P must have shape [%lld, %lld]", (long long)dirs,
                         (long long)(3 * p->h));
    p->clip = ti__attr_get(n, "clip") != NULL ? (double)ti__attr_f(n, "clip", 0.0f) : 0.0;
    if (ti__attr_get(n, "clip") != NULL && p->clip <= 0.0)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "clip %g must be positive", p->clip);
    p->lbr = ti__attr_i(n, "linear_before_reset", 0) != 0;
    p->input_forget = ti__attr_i(n, "input_forget", 0) != 0;

    /* activations: defaults f = Sigmoid (Tanh for RNN), g = h = Tanh */
    int na, nb;
    for (int d = 0; d < 2; d++)
        for (int i = 0; i < 3; i++) {
            ti__ract_lookup(p->kind != TI__RNN_PLAIN && i == 0 ? "Sigmoid" : "Tanh",
                            &p->act[d][i], &na, &nb);
        }
    const ti__attr *acts = ti__attr_get(n, "activations");
    if (acts != NULL && acts->type == TI__ATTR_STRINGS && acts->count > 0) {
        if (acts->count != p->n_act * p->dirs && acts->count != p->n_act)
            return ti__kfail(k, TI_ERR_BAD_MODEL, "activations has %d names, expected %d",
                             acts->count, p->n_act * p->dirs);
        int n_alpha, n_beta, ai = 0, bi = 0;
        const float *alphas = ti__attr_floats(n, "activation_alpha", &n_alpha);
        const float *betas = ti__attr_floats(n, "activation_beta", &n_beta);
        for (int i = 0; i < acts->count; i++) {
            ti__ract *a = &p->act[i / p->n_act][i % p->n_act];
            if (!ti__ract_lookup(acts->strings[i], a, &na, &nb))
                return ti__kfail(k, TI_ERR_UNSUPPORTED, "activation '%s' is not supported",
                                 acts->strings[i]);
            if (na > 0 && ai < n_alpha) a->alpha = alphas[ai++];
            if (nb > 0 && bi < n_beta) a->beta = betas[bi++];
        }
        if (acts->count == p->n_act && p->dirs == 2)
            for (int i = 0; i < p->n_act; i++) p->act[1][i] = p->act[0][i];
    }
    if (!set_outputs) return TI_OK;
    int64_t yd[4];
    if (p->layout) yd[0] = p->b, yd[1] = p->s, yd[2] = dirs, yd[3] = p->h;
    else yd[0] = p->s, yd[1] = dirs, yd[2] = p->b, yd[3] = p->h;
    if (p->y != NULL && !ti__set_shape(p->y, dt, 4, yd))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid Y shape");
    if (p->yh != NULL && !ti__set_shape(p->yh, dt, 3, st))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid Y_h shape");
    if (p->yc != NULL && !ti__set_shape(p->yc, dt, 3, st))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "invalid Y_c shape");
    return TI_OK;
}

TI__PRIVATE int ti__rnn_shape(ti__kctx *k) {
    ti__rnn p;
    return ti__rnn_setup(k, &p, 1);
}

/* Scratch in doubles: h, c, tmp (hidden each), gx, gh (gates * hidden each), x (input). */
TI__PRIVATE size_t ti__rnn_scratch_doubles(const ti__rnn *p) {
    return (size_t)(3 * p->h + 2 * p->g * p->h + p->in);
}

TI__PRIVATE size_t ti__rnn_scratch(ti__kctx *k) {
    ti__rnn p;
    if (ti__rnn_setup(k, &p, 0) != TI_OK) return 0;
    return ti__rnn_scratch_doubles(&p) * sizeof(double);
}

/* out[o] = sum_i m[(row0 + o) * cols + i] * v[i] for o < rows; m is [dirs, G*H, cols]. */
TI__PRIVATE void ti__rnn_matvec(const ti_tensor *m, size_t base, int64_t rows, int64_t cols,
                                const double *v, double *out) {
    for (int64_t o = 0; o < rows; o++) {
        size_t off = base + (size_t)(o * cols);
        double acc = 0.0;
        switch (m->dtype) {
        case TI_DTYPE_F32: {
            const float *w = (const float *)m->data + off;
            for (int64_t i = 0; i < cols; i++) acc += (double)w[i] * v[i];
            break;
        }
        case TI_DTYPE_F64: {
            const double *w = (const double *)m->data + off;
            for (int64_t i = 0; i < cols; i++) acc += w[i] * v[i];
            break;
        }
        default:
            for (int64_t i = 0; i < cols; i++) acc += ti__get_f64(m, off + (size_t)i) * v[i];
            break;
        }
        out[o] = acc;
    }
}

/* Offset of state (dir, batch, 0) in initial_h / Y_h-shaped tensors. */
TI__PRIVATE size_t ti__rnn_state_off(const ti__rnn *p, int d, int64_t b) {
    return p->layout ? (size_t)((b * p->dirs + d) * p->h) : (size_t)((d * p->b + b) * p->h);
}

TI__PRIVATE double ti__rnn_clip(const ti__rnn *p, double v) {
    if (p->clip > 0.0) v = v < -p->clip ? -p->clip : (v > p->clip ? p->clip : v);
    return v;
}

/* Runs one direction over one batch entry for len steps. */
TI__PRIVATE void ti__rnn_sequence(const ti__rnn *p, int d, int64_t b, int64_t len, double *buf) {
    const int64_t H = p->h, G = p->g, I = p->in;
    double *h = buf, *c = h + H, *tmp = c + H, *gx = tmp + H, *gh = gx + G * H, *xv = gh + G * H;
    int rev = p->dirs == 2 ? d == 1 : p->reverse;
    size_t so = ti__rnn_state_off(p, d, b);
    for (int64_t j = 0; j < H; j++) {
        h[j] = p->h0 != NULL ? ti__get_f64(p->h0, so + (size_t)j) : 0.0;
        c[j] = p->c0 != NULL ? ti__get_f64(p->c0, so + (size_t)j) : 0.0;
    }
    const ti__ract *f = &p->act[d][0], *g = &p->act[d][1 % p->n_act], *ha = &p->act[d][2 % p->n_act];
    size_t wbase = (size_t)(d * G * H * I), rbase = (size_t)(d * G * H * H);
    size_t bb = (size_t)(d * 2 * G * H), pb = (size_t)(d * 3 * H);
#define TI__RNN_WB(i) (p->bias != NULL ? ti__get_f64(p->bias, bb + (size_t)(i)) : 0.0)
#define TI__RNN_RB(i) (p->bias != NULL ? ti__get_f64(p->bias, bb + (size_t)(G * H + (i))) : 0.0)
    for (int64_t step = 0; step < len; step++) {
        int64_t t = rev ? len - 1 - step : step;
        size_t xo = p->layout ? (size_t)((b * p->s + t) * I) : (size_t)((t * p->b + b) * I);
        for (int64_t i = 0; i < I; i++) xv[i] = ti__get_f64(p->x, xo + (size_t)i);
        ti__rnn_matvec(p->w, wbase, G * H, I, xv, gx);
        if (p->kind == TI__RNN_PLAIN) {
            ti__rnn_matvec(p->r, rbase, H, H, h, gh);
            for (int64_t j = 0; j < H; j++)
                h[j] = ti__ract_apply(f, ti__rnn_clip(p, gx[j] + gh[j] + TI__RNN_WB(j) + TI__RNN_RB(j)));
        } else if (p->kind == TI__RNN_GRU) {
            /* gates z, r, h; R_h is applied to h (linear_before_reset) or to r * h */
            ti__rnn_matvec(p->r, rbase, (p->lbr ? 3 : 2) * H, H, h, gh);
            for (int64_t j = 0; j < 2 * H; j++)
                gx[j] = ti__ract_apply(f, ti__rnn_clip(p, gx[j] + gh[j] + TI__RNN_WB(j) + TI__RNN_RB(j)));
            const double *z = gx, *r = gx + H;
            if (!p->lbr) {
                for (int64_t j = 0; j < H; j++) tmp[j] = r[j] * h[j];
                ti__rnn_matvec(p->r, rbase + (size_t)(2 * H * H), H, H, tmp, gh + 2 * H);
            }
            for (int64_t j = 0; j < H; j++) {
                int64_t q = 2 * H + j;
                double pre = p->lbr ? gx[q] + TI__RNN_WB(q) + r[j] * (gh[q] + TI__RNN_RB(q))
                                    : gx[q] + TI__RNN_WB(q) + TI__RNN_RB(q) + gh[q];
                double hh = ti__ract_apply(g, ti__rnn_clip(p, pre));
                tmp[j] = (1.0 - z[j]) * hh + z[j] * h[j];
            }
            for (int64_t j = 0; j < H; j++) h[j] = tmp[j];
        } else {
            /* gates i, o, f, c; peepholes P = [Pi, Po, Pf] */
            ti__rnn_matvec(p->r, rbase, 4 * H, H, h, gh);
            for (int64_t j = 0; j < 4 * H; j++) gx[j] += gh[j] + TI__RNN_WB(j) + TI__RNN_RB(j);
            for (int64_t j = 0; j < H; j++) {
                double pi = p->peep != NULL ? ti__get_f64(p->peep, pb + (size_t)j) : 0.0;
                double po = p->peep != NULL ? ti__get_f64(p->peep, pb + (size_t)(H + j)) : 0.0;
                double pf = p->peep != NULL ? ti__get_f64(p->peep, pb + (size_t)(2 * H + j)) : 0.0;
                double ig = ti__ract_apply(f, ti__rnn_clip(p, gx[j] + pi * c[j]));
                double fg = p->input_forget
                                ? 1.0 - ig
                                : ti__ract_apply(f, ti__rnn_clip(p, gx[2 * H + j] + pf * c[j]));
                double cg = ti__ract_apply(g, ti__rnn_clip(p, gx[3 * H + j]));
                double cn = fg * c[j] + ig * cg;
                double og = ti__ract_apply(f, ti__rnn_clip(p, gx[H + j] + po * cn));
                c[j] = cn;
                h[j] = og * ti__ract_apply(ha, cn);
            }
        }
        if (p->y != NULL) {
            size_t yo = p->layout ? (size_t)(((b * p->s + t) * p->dirs + d) * H)
                                  : (size_t)(((t * p->dirs + d) * p->b + b) * H);
            for (int64_t j = 0; j < H; j++) ti__set_f64(p->y, yo + (size_t)j, h[j]);
        }
    }
#undef TI__RNN_WB
#undef TI__RNN_RB
    /* steps past this entry's length stay zero in Y */
    if (p->y != NULL)
        for (int64_t t = len; t < p->s; t++) {
            size_t yo = p->layout ? (size_t)(((b * p->s + t) * p->dirs + d) * H)
                                  : (size_t)(((t * p->dirs + d) * p->b + b) * H);
            for (int64_t j = 0; j < H; j++) ti__set_f64(p->y, yo + (size_t)j, 0.0);
        }
    for (int64_t j = 0; j < H; j++) {
        if (p->yh != NULL) ti__set_f64(p->yh, so + (size_t)j, h[j]);
        if (p->yc != NULL) ti__set_f64(p->yc, so + (size_t)j, c[j]);
    }
}

TI__PRIVATE ti_status ti__rnn_run(ti__kctx *k) {
    ti__rnn p;
    int st = ti__rnn_setup(k, &p, 0);
    if (st != TI_OK) return (ti_status)st;
    size_t need = ti__rnn_scratch_doubles(&p) * sizeof(double);
    if (k->scratch == NULL || k->scratch_bytes < need)
        return ti__kfail(k, TI_ERR_INVALID_ARGUMENT, "scratch of %zu bytes is too small (%zu)",
                         k->scratch_bytes, need);
    if (p.seq != NULL)
        for (int64_t b = 0; b < p.b; b++) {
            int64_t len = ti__get_i64(p.seq, (size_t)b);
            if (len < 0 || len > p.s)
                return ti__kfail(k, TI_ERR_INVALID_ARGUMENT,
                                 "sequence_lens[%lld] = %lld is outside [0, %lld]", (long long)b,
                                 (long long)len, (long long)p.s);
        }
    for (int d = 0; d < p.dirs; d++)
        for (int64_t b = 0; b < p.b; b++) {
            int64_t len = p.seq != NULL ? ti__get_i64(p.seq, (size_t)b) : p.s;
            ti__rnn_sequence(&p, d, b, len, (double *)k->scratch);
        }
    return TI_OK;
}

TI__PRIVATE const ti__op ti__ops_rnn[] = {
    {"RNN", ti__rnn_shape, ti__rnn_run, ti__rnn_scratch, 0},
    {"GRU", ti__rnn_shape, ti__rnn_run, ti__rnn_scratch, 0},
    {"LSTM", ti__rnn_shape, ti__rnn_run, ti__rnn_scratch, 0},
    {NULL, NULL, NULL, NULL, 0}
};
/* ==== end src/cpu/rnn.c ===================================================================== */

/* ==== begin src/cpu/tfl_conv.c ============================================================== */
/* TODO(#4): TFLite kernels of group 'tfl_conv' (being written). */
TI__PRIVATE const ti__op ti__ops_tfl_conv[] = {
    {NULL, NULL, NULL, NULL, 0}
};
/* ==== end src/cpu/tfl_conv.c ================================================================ */

/* ==== begin src/cpu/tfl_detect.c ============================================================ */
/* TODO(#4): TFLite kernels of group 'tfl_detect' (being written). */
TI__PRIVATE const ti__op ti__ops_tfl_detect[] = {
    {NULL, NULL, NULL, NULL, 0}
};
/* ==== end src/cpu/tfl_detect.c ============================================================== */

/* ==== begin src/cpu/tfl_elementwise.c ======================================================= */
/* TODO(#4): TFLite kernels of group 'tfl_elementwise' (being written). */
TI__PRIVATE const ti__op ti__ops_tfl_elementwise[] = {
    {NULL, NULL, NULL, NULL, 0}
};
/* ==== end src/cpu/tfl_elementwise.c ========================================================= */

/* ==== begin src/cpu/tfl_lstm.c ============================================================== */
/* TODO(#4): TFLite kernels of group 'tfl_lstm' (being written). */
TI__PRIVATE const ti__op ti__ops_tfl_lstm[] = {
    {NULL, NULL, NULL, NULL, 0}
};
/* ==== end src/cpu/tfl_lstm.c ================================================================ */

/* ==== begin src/cpu/tfl_pool.c ============================================================== */
/* TODO(#4): TFLite kernels of group 'tfl_pool' (being written). */
TI__PRIVATE const ti__op ti__ops_tfl_pool[] = {
    {NULL, NULL, NULL, NULL, 0}
};
/* ==== end src/cpu/tfl_pool.c ================================================================ */

/* ==== begin src/cpu/tfl_shape.c ============================================================= */
/* TODO(#4): TFLite kernels of group 'tfl_shape' (being written). */
TI__PRIVATE const ti__op ti__ops_tfl_shape[] = {
    {NULL, NULL, NULL, NULL, 0}
};
/* ==== end src/cpu/tfl_shape.c =============================================================== */

/* ==== begin src/cpu/unary.c ================================================================= */
/* Elementwise one-input ops: math functions, activations, Clip, Cast/CastLike, logical and
 * bitwise Not, IsNaN/IsInf. float32 runs typed loops split over the thread pool; float64
 * computes in double; float16/bfloat16 compute in float; integer ops go through int64 /
 * uint64 values. Relies on tensor.c, ir.c, and binary.c (earlier in the amalgamation) for
 * the dtype masks TI__EDT_* and the value carriers. Must not allocate: every run writes
 * the planned output. */

#define TI__UNARY_GRAIN 16384 /* elements per thread-pool task for float32 loops */

/* Checks that input 0 exists and has a dtype in `mask`, then gives output 0 its shape with
 * dtype out_dt (TI_DTYPE_UNKNOWN: the input's dtype). */
TI__PRIVATE int ti__unary_check(ti__kctx *k, unsigned mask, ti_dtype out_dt) {
    TI__REQUIRE_INPUT(k, 0);
    const ti_tensor *x = k->in[0];
    if (!TI__EDT_IN(x->dtype, mask))
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "dtype %s is not supported",
                         ti_dtype_name(x->dtype));
    if (k->n_out < 1 || k->out[0] == NULL)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "output 0 is required");
    if (!ti__set_shape(k->out[0], out_dt == TI_DTYPE_UNKNOWN ? x->dtype : out_dt, x->rank,
                       x->shape))
        return ti__kfail(k, TI_ERR_BAD_MODEL, "output shape is invalid");
    return TI_OK;
}

/* ---- scalar helpers ---------------------------------------------------------------- */
/* Round half to even without relying on the floating-point environment. */
TI__PRIVATE float ti__round_even_f(float x) {
    float r = floorf(x), d = x - r;
    if (d > 0.5f || (d == 0.5f && fmodf(r, 2.0f) != 0.0f)) r += 1.0f;
    return r;
}
TI__PRIVATE double ti__round_even_d(double x) {
    double r = floor(x), d = x - r;
    if (d > 0.5 || (d == 0.5 && fmod(r, 2.0) != 0.0)) r += 1.0;
    return r;
}
/* log(1 + exp(x)) without overflow for large x */
TI__PRIVATE float ti__softplus_f(float x) {
    return x > 0.0f ? x + log1pf(expf(-x)) : log1pf(expf(x));
}
TI__PRIVATE double ti__softplus_d(double x) {
    return x > 0.0 ? x + log1p(exp(-x)) : log1p(exp(x));
}
/* 1 / (1 + exp(-x)), the same formula as the fused TI__ACT_SIGMOID. Below x = -88, exp(-x)
 * overflows to inf and the result is 0 (the true value is under 1e-38). */
TI__PRIVATE float ti__sigmoid_f(float x) { return 1.0f / (1.0f + expf(-x)); }
TI__PRIVATE double ti__sigmoid_d(double x) { return 1.0 / (1.0 + exp(-x)); }
/* Gelu: mode 0 exact (erf), mode 1 the tanh approximation. */
TI__PRIVATE float ti__gelu_f(float x, int mode) {
    if (mode == 1) {
        float u = 0.7978845608028654f * (x + 0.044715f * x * x * x); /* sqrt(2/pi) */
        return 0.5f * x * (1.0f + tanhf(u));
    }
    return 0.5f * x * (1.0f + erff(x * 0.7071067811865476f));
}
TI__PRIVATE double ti__gelu_d(double x, int mode) {
    if (mode == 1) {
        double u = 0.7978845608028654 * (x + 0.044715 * x * x * x);
        return 0.5 * x * (1.0 + tanh(u));
    }
    return 0.5 * x * (1.0 + erf(x * 0.7071067811865476));
}
TI__PRIVATE float ti__sign_f(float x) { return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : x); }
TI__PRIVATE double ti__sign_d(double x) { return x > 0.0 ? 1.0 : (x < 0.0 ? -1.0 : x); }

/* ---- float ops: one macro per op makes the float32 range loop and the dtype switch ---- */
/* Attribute values of the op, read once per run. */
typedef struct ti__uprm {
    double a, b; /* alpha/beta, gamma, lambd/bias, clip bounds */
    int mode;    /* Gelu approximation; IsInf flags */
} ti__uprm;

typedef struct ti__ujob {
    const void *x;
    void *y;
    ti__uprm p;
} ti__ujob;

/* FEXPR computes a float from float `x`, DEXPR a double from double `x`; both may use the
 * parameters pa, pb (converted to the compute type) and pm (int). */
#define TI__UNARY_FLOAT_OP(NAME, FEXPR, DEXPR)                                                \
    TI__PRIVATE void ti__unary_##NAME##_f32(void *ctx, size_t begin, size_t end) {            \
        const ti__ujob *j = (const ti__ujob *)ctx;                                            \
        const float *xs = (const float *)j->x;                                                \
        float *ys = (float *)j->y;                                                            \
        const float pa = (float)j->p.a, pb = (float)j->p.b;                                   \
        const int pm = j->p.mode;                                                             \
        (void)pa, (void)pb, (void)pm;                                                         \
        for (size_t i = begin; i < end; i++) {                                                \
            const float x = xs[i];                                                            \
            ys[i] = (FEXPR);                                                                  \
        }                                                                                     \
    }                                                                                         \
    TI__PRIVATE void ti__unary_##NAME##_float(ti__kctx *k, const ti__uprm *p) {               \
        ti__ujob j;                                                                           \
        j.x = k->in[0]->data;                                                                 \
        j.y = k->out[0]->data;                                                                \
        j.p = *p;                                                                             \
        const size_t n = ti__numel(k->in[0]);                                                 \
        const float pa = (float)p->a, pb = (float)p->b;                                       \
        const int pm = p->mode;                                                               \
        (void)pa, (void)pb, (void)pm;                                                         \
        switch (k->in[0]->dtype) {                                                            \
        case TI_DTYPE_F32:                                                                    \
            ti__parallel_for(k->tp, n, TI__UNARY_GRAIN, ti__unary_##NAME##_f32, &j);          \
            break;                                                                            \
        case TI_DTYPE_F64: {                                                                  \
            const double *xs = (const double *)j.x;                                           \
            double *ys = (double *)j.y;                                                       \
            const double da = p->a, db = p->b;                                                \
            (void)da, (void)db;                                                               \
            for (size_t i = 0; i < n; i++) {                                                  \
                const double x = xs[i];                                                       \
                ys[i] = (DEXPR);                                                              \
            }                                                                                 \
        } break;                                                                              \
        case TI_DTYPE_F16: {                                                                  \
            const uint16_t *xs = (const uint16_t *)j.x;                                       \
            uint16_t *ys = (uint16_t *)j.y;                                                   \
            for (size_t i = 0; i < n; i++) {                                                  \
                const float x = ti__f16_to_f32(xs[i]);                                        \
                ys[i] = ti__f32_to_f16(FEXPR);                                                \
            }                                                                                 \
        } break;                                                                              \
        case TI_DTYPE_BF16: {                                                                 \
            const uint16_t *xs = (const uint16_t *)j.x;                                       \
            uint16_t *ys = (uint16_t *)j.y;                                                   \
            for (size_t i = 0; i < n; i++) {                                                  \
                const float x = ti__bf16_to_f32(xs[i]);                                       \
                ys[i] = ti__f32_to_bf16(FEXPR);                                               \
            }                                                                                 \
        } break;                                                                              \
        default: break;                                                                       \
        }                                                                                     \
    }

/* In DEXPR the parameters are da, db (double) and pm. */
TI__UNARY_FLOAT_OP(abs, fabsf(x), fabs(x))
TI__UNARY_FLOAT_OP(neg, -x, -x)
TI__UNARY_FLOAT_OP(sign, ti__sign_f(x), ti__sign_d(x))
TI__UNARY_FLOAT_OP(relu, x < 0.0f ? 0.0f : x, x < 0.0 ? 0.0 : x) /* NaN stays NaN */
TI__UNARY_FLOAT_OP(reciprocal, 1.0f / x, 1.0 / x)
TI__UNARY_FLOAT_OP(sqrt, sqrtf(x), sqrt(x))
TI__UNARY_FLOAT_OP(exp, expf(x), exp(x))
TI__UNARY_FLOAT_OP(log, logf(x), log(x))
TI__UNARY_FLOAT_OP(ceil, ceilf(x), ceil(x))
TI__UNARY_FLOAT_OP(floor, floorf(x), floor(x))
TI__UNARY_FLOAT_OP(round, ti__round_even_f(x), ti__round_even_d(x))
TI__UNARY_FLOAT_OP(sin, sinf(x), sin(x))
TI__UNARY_FLOAT_OP(cos, cosf(x), cos(x))
TI__UNARY_FLOAT_OP(tan, tanf(x), tan(x))
TI__UNARY_FLOAT_OP(asin, asinf(x), asin(x))
TI__UNARY_FLOAT_OP(acos, acosf(x), acos(x))
TI__UNARY_FLOAT_OP(atan, atanf(x), atan(x))
TI__UNARY_FLOAT_OP(sinh, sinhf(x), sinh(x))
TI__UNARY_FLOAT_OP(cosh, coshf(x), cosh(x))
TI__UNARY_FLOAT_OP(asinh, asinhf(x), asinh(x))
TI__UNARY_FLOAT_OP(acosh, acoshf(x), acosh(x))
TI__UNARY_FLOAT_OP(atanh, atanhf(x), atanh(x))
TI__UNARY_FLOAT_OP(erf, erff(x), erf(x))
TI__UNARY_FLOAT_OP(tanh, tanhf(x), tanh(x))
TI__UNARY_FLOAT_OP(sigmoid, ti__sigmoid_f(x), ti__sigmoid_d(x))
TI__UNARY_FLOAT_OP(softplus, ti__softplus_f(x), ti__softplus_d(x))
TI__UNARY_FLOAT_OP(softsign, x / (1.0f + fabsf(x)), x / (1.0 + fabs(x)))
TI__UNARY_FLOAT_OP(mish, x * tanhf(ti__softplus_f(x)), x * tanh(ti__softplus_d(x)))
TI__UNARY_FLOAT_OP(gelu, ti__gelu_f(x, pm), ti__gelu_d(x, pm))
TI__UNARY_FLOAT_OP(leaky_relu, x >= 0.0f ? x : pa * x, x >= 0.0 ? x : da * x)
TI__UNARY_FLOAT_OP(elu, x >= 0.0f ? x : pa * expm1f(x), x >= 0.0 ? x : da * expm1(x))
/* Selu: pa = alpha, pb = gamma */
TI__UNARY_FLOAT_OP(selu, x > 0.0f ? pb * x : pb * pa * expm1f(x),
                   x > 0.0 ? db * x : db * da * expm1(x))
TI__UNARY_FLOAT_OP(celu, x >= 0.0f ? x : pa * expm1f(x / pa), x >= 0.0 ? x : da * expm1(x / da))
/* HardSigmoid: max(0, min(1, alpha * x + beta)) */
TI__UNARY_FLOAT_OP(hard_sigmoid, TI__MAX(0.0f, TI__MIN(1.0f, pa * x + pb)),
                   TI__MAX(0.0, TI__MIN(1.0, da * x + db)))
TI__UNARY_FLOAT_OP(hard_swish, x * TI__MAX(0.0f, TI__MIN(1.0f, x * (1.0f / 6.0f) + 0.5f)),
                   x * TI__MAX(0.0, TI__MIN(1.0, x * (1.0 / 6.0) + 0.5)))
TI__UNARY_FLOAT_OP(thresholded_relu, x > pa ? x : 0.0f, x > da ? x : 0.0)
/* Shrink: pa = lambd, pb = bias */
TI__UNARY_FLOAT_OP(shrink, x < -pa ? x + pb : (x > pa ? x - pb : 0.0f),
                   x < -da ? x + db : (x > da ? x - db : 0.0))
TI__UNARY_FLOAT_OP(swish, x * ti__sigmoid_f(pa * x), x * ti__sigmoid_d(da * x))
/* Clip: pa = min, pb = max; min > max gives max, as the spec says */
TI__UNARY_FLOAT_OP(clip, (x < pa ? pa : x) > pb ? pb : (x < pa ? pa : x),
                   (x < da ? da : x) > db ? db : (x < da ? da : x))

/* Fills the attribute parameters of the ops that have them (defaults from the spec). */
TI__PRIVATE void ti__unary_params(const ti__kctx *k, ti__uprm *p) {
    const ti__node *n = k->node;
    const char *op = n->op;
    p->a = 0.0;
    p->b = 0.0;
    p->mode = 0;
    if (strcmp(op, "LeakyRelu") == 0) p->a = ti__attr_f(n, "alpha", 0.01f);
    else if (strcmp(op, "Elu") == 0 || strcmp(op, "Celu") == 0 ||
             strcmp(op, "ThresholdedRelu") == 0 || strcmp(op, "Swish") == 0)
        p->a = ti__attr_f(n, "alpha", 1.0f);
    else if (strcmp(op, "Selu") == 0) {
        p->a = ti__attr_f(n, "alpha", 1.67326319217681884765625f);
        p->b = ti__attr_f(n, "gamma", 1.05070102214813232421875f);
    } else if (strcmp(op, "HardSigmoid") == 0) {
        p->a = ti__attr_f(n, "alpha", 0.2f);
        p->b = ti__attr_f(n, "beta", 0.5f);
    } else if (strcmp(op, "Shrink") == 0) {
        p->a = ti__attr_f(n, "lambd", 0.5f);
        p->b = ti__attr_f(n, "bias", 0.0f);
    } else if (strcmp(op, "Gelu") == 0) {
        p->mode = strcmp(ti__attr_s(n, "approximate", "none"), "tanh") == 0;
    }
}

TI__PRIVATE int ti__unary_float_shape(ti__kctx *k) {
    return ti__unary_check(k, TI__EDT_FLOAT, TI_DTYPE_UNKNOWN);
}

#define TI__UNARY_FLOAT_RUN(NAME)                                                             \
    TI__PRIVATE ti_status ti__unary_##NAME##_run(ti__kctx *k) {                               \
        ti__uprm p;                                                                           \
        ti__unary_params(k, &p);                                                              \
        ti__unary_##NAME##_float(k, &p);                                                      \
        return TI_OK;                                                                         \
    }
TI__UNARY_FLOAT_RUN(reciprocal)
TI__UNARY_FLOAT_RUN(sqrt)
TI__UNARY_FLOAT_RUN(exp)
TI__UNARY_FLOAT_RUN(log)
TI__UNARY_FLOAT_RUN(ceil)
TI__UNARY_FLOAT_RUN(floor)
TI__UNARY_FLOAT_RUN(round)
TI__UNARY_FLOAT_RUN(sin)
TI__UNARY_FLOAT_RUN(cos)
TI__UNARY_FLOAT_RUN(tan)
TI__UNARY_FLOAT_RUN(asin)
TI__UNARY_FLOAT_RUN(acos)
TI__UNARY_FLOAT_RUN(atan)
TI__UNARY_FLOAT_RUN(sinh)
TI__UNARY_FLOAT_RUN(cosh)
TI__UNARY_FLOAT_RUN(asinh)
TI__UNARY_FLOAT_RUN(acosh)
TI__UNARY_FLOAT_RUN(atanh)
TI__UNARY_FLOAT_RUN(erf)
TI__UNARY_FLOAT_RUN(tanh)
TI__UNARY_FLOAT_RUN(sigmoid)
TI__UNARY_FLOAT_RUN(softplus)
TI__UNARY_FLOAT_RUN(softsign)
TI__UNARY_FLOAT_RUN(mish)
TI__UNARY_FLOAT_RUN(gelu)
TI__UNARY_FLOAT_RUN(leaky_relu)
TI__UNARY_FLOAT_RUN(elu)
TI__UNARY_FLOAT_RUN(selu)
TI__UNARY_FLOAT_RUN(celu)
TI__UNARY_FLOAT_RUN(hard_sigmoid)
TI__UNARY_FLOAT_RUN(hard_swish)
TI__UNARY_FLOAT_RUN(thresholded_relu)
TI__UNARY_FLOAT_RUN(shrink)
TI__UNARY_FLOAT_RUN(swish)

TI__PRIVATE int ti__unary_gelu_shape(ti__kctx *k) {
    const char *mode = ti__attr_s(k->node, "approximate", "none");
    if (strcmp(mode, "none") != 0 && strcmp(mode, "tanh") != 0)
        return ti__kfail(k, TI_ERR_UNSUPPORTED,
                         "approximate='%s' is not supported (expected 'none' or 'tanh')", mode);
    return ti__unary_float_shape(k);
}

TI__PRIVATE int ti__unary_celu_shape(ti__kctx *k) {
    if (ti__attr_f(k->node, "alpha", 1.0f) == 0.0f)
        return ti__kfail(k, TI_ERR_BAD_MODEL, "alpha must not be 0");
    return ti__unary_float_shape(k);
}

/* ---- ops that also take integers --------------------------------------------------- */
enum { TI__IOP_ABS, TI__IOP_NEG, TI__IOP_SIGN, TI__IOP_RELU, TI__IOP_BITNOT };

/* Integer path of Abs/Neg/Sign/Relu/BitwiseNot: signed types through int64, unsigned through
 * uint64; negation wraps (two's complement) as it does in the narrow type. */
TI__PRIVATE void ti__unary_int(ti__kctx *k, int op) {
    const ti_tensor *x = k->in[0];
    ti_tensor *y = k->out[0];
    const size_t n = ti__numel(x);
    const int is_unsigned = ti__carry_unsigned(x->dtype);
    for (size_t i = 0; i < n; i++) {
        uint64_t u = (uint64_t)ti__get_i64(x, i), r = u;
        int64_t s = (int64_t)u;
        switch (op) {
        case TI__IOP_ABS: r = (is_unsigned || s >= 0) ? u : 0u - u; break;
        case TI__IOP_NEG: r = 0u - u; break;
        case TI__IOP_SIGN:
            r = is_unsigned ? (u != 0) : (uint64_t)(int64_t)((s > 0) - (s < 0));
            break;
        case TI__IOP_RELU: r = (is_unsigned || s > 0) ? u : 0u; break;
        case TI__IOP_BITNOT: r = ~u; break;
        default: break;
        }
        ti__set_i64(y, i, (int64_t)r);
    }
}

TI__PRIVATE int ti__unary_abs_shape(ti__kctx *k) {
    return ti__unary_check(k, TI__EDT_NUM, TI_DTYPE_UNKNOWN);
}
TI__PRIVATE int ti__unary_sign_shape(ti__kctx *k) {
    return ti__unary_check(k, TI__EDT_NUM, TI_DTYPE_UNKNOWN);
}
TI__PRIVATE int ti__unary_neg_shape(ti__kctx *k) {
    return ti__unary_check(k, TI__EDT_FLOAT | TI__EDT_SINT, TI_DTYPE_UNKNOWN);
}
TI__PRIVATE int ti__unary_relu_shape(ti__kctx *k) {
    return ti__unary_check(k, TI__EDT_FLOAT | TI__EDT_SINT, TI_DTYPE_UNKNOWN);
}
TI__PRIVATE int ti__unary_bitnot_shape(ti__kctx *k) {
    return ti__unary_check(k, TI__EDT_INT, TI_DTYPE_UNKNOWN);
}

TI__PRIVATE ti_status ti__unary_abs_run(ti__kctx *k) {
    ti__uprm p = {0.0, 0.0, 0};
    if (ti__dtype_is_float(k->in[0]->dtype)) ti__unary_abs_float(k, &p);
    else ti__unary_int(k, TI__IOP_ABS);
    return TI_OK;
}
TI__PRIVATE ti_status ti__unary_neg_run(ti__kctx *k) {
    ti__uprm p = {0.0, 0.0, 0};
    if (ti__dtype_is_float(k->in[0]->dtype)) ti__unary_neg_float(k, &p);
    else ti__unary_int(k, TI__IOP_NEG);
    return TI_OK;
}
TI__PRIVATE ti_status ti__unary_sign_run(ti__kctx *k) {
    ti__uprm p = {0.0, 0.0, 0};
    if (ti__dtype_is_float(k->in[0]->dtype)) ti__unary_sign_float(k, &p);
    else ti__unary_int(k, TI__IOP_SIGN);
    return TI_OK;
}
TI__PRIVATE ti_status ti__unary_relu_run(ti__kctx *k) {
    ti__uprm p = {0.0, 0.0, 0};
    if (ti__dtype_is_float(k->in[0]->dtype)) ti__unary_relu_float(k, &p);
    else ti__unary_int(k, TI__IOP_RELU);
    return TI_OK;
}
TI__PRIVATE ti_status ti__unary_bitnot_run(ti__kctx *k) {
    ti__unary_int(k, TI__IOP_BITNOT);
    return TI_OK;
}

/* Not: bool -> bool */
TI__PRIVATE int ti__unary_not_shape(ti__kctx *k) {
    return ti__unary_check(k, TI__EDT_BOOL, TI_DTYPE_UNKNOWN);
}
TI__PRIVATE ti_status ti__unary_not_run(ti__kctx *k) {
    const uint8_t *x = (const uint8_t *)k->in[0]->data;
    uint8_t *y = (uint8_t *)k->out[0]->data;
    const size_t n = ti__numel(k->in[0]);
    for (size_t i = 0; i < n; i++) y[i] = x[i] == 0;
    return TI_OK;
}

/* IsNaN / IsInf: float -> bool. IsInf flags: bit 0 detect_positive, bit 1 detect_negative. */
TI__PRIVATE int ti__unary_isnan_shape(ti__kctx *k) {
    return ti__unary_check(k, TI__EDT_FLOAT, TI_DTYPE_BOOL);
}
TI__PRIVATE void ti__unary_classify(ti__kctx *k, int isinf, int flags) {
    const ti_tensor *x = k->in[0];
    uint8_t *y = (uint8_t *)k->out[0]->data;
    const size_t n = ti__numel(x);
    for (size_t i = 0; i < n; i++) {
        double v = ti__get_f64(x, i); /* exact for every float dtype */
        if (!isinf) y[i] = v != v;
        else y[i] = (v == HUGE_VAL && (flags & 1)) || (v == -HUGE_VAL && (flags & 2));
    }
}
TI__PRIVATE ti_status ti__unary_isnan_run(ti__kctx *k) {
    ti__unary_classify(k, 0, 0);
    return TI_OK;
}
TI__PRIVATE ti_status ti__unary_isinf_run(ti__kctx *k) {
    int flags = (ti__attr_i(k->node, "detect_positive", 1) != 0) |
                (ti__attr_i(k->node, "detect_negative", 1) != 0) << 1;
    ti__unary_classify(k, 1, flags);
    return TI_OK;
}

/* ---- Clip ---------------------------------------------------------------------------- */
/* Opset < 11: bounds are the float attributes min/max. Opset >= 11: optional scalar inputs
 * 1 (min) and 2 (max) of the input's dtype; integer dtypes allowed from opset 12. */
TI__PRIVATE int ti__clip_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 0);
    if (k->opset >= 11) {
        for (int i = 1; i < k->n_in && i < 3; i++) {
            const ti_tensor *b = k->in[i];
            if (b == NULL) continue;
            if (b->dtype != k->in[0]->dtype)
                return ti__kfail(k, TI_ERR_BAD_MODEL, "%s has dtype %s, input has %s",
                                 i == 1 ? "min" : "max", ti_dtype_name(b->dtype),
                                 ti_dtype_name(k->in[0]->dtype));
            if (ti__numel(b) > 1)
                return ti__kfail(k, TI_ERR_BAD_MODEL, "%s has %zu elements, expected a scalar",
                                 i == 1 ? "min" : "max", ti__numel(b));
        }
    }
    return ti__unary_check(k, k->opset >= 12 ? TI__EDT_NUM : TI__EDT_FLOAT, TI_DTYPE_UNKNOWN);
}

TI__PRIVATE ti_status ti__clip_run(ti__kctx *k) {
    const ti_tensor *x = k->in[0];
    const ti_tensor *lo = k->opset >= 11 && k->n_in > 1 ? k->in[1] : NULL;
    const ti_tensor *hi = k->opset >= 11 && k->n_in > 2 ? k->in[2] : NULL;
    if (lo != NULL && ti__numel(lo) == 0) lo = NULL; /* an empty tensor stands for absent */
    if (hi != NULL && ti__numel(hi) == 0) hi = NULL;
    if (ti__dtype_is_float(x->dtype)) {
        ti__uprm p;
        p.mode = 0;
        if (k->opset < 11) {
            p.a = ti__attr_f(k->node, "min", -FLT_MAX);
            p.b = ti__attr_f(k->node, "max", FLT_MAX);
        } else {
            p.a = lo ? ti__get_f64(lo, 0) : -HUGE_VAL;
            p.b = hi ? ti__get_f64(hi, 0) : HUGE_VAL;
        }
        ti__unary_clip_float(k, &p);
        return TI_OK;
    }
    ti_tensor *y = k->out[0];
    const size_t n = ti__numel(x);
    if (ti__carry_unsigned(x->dtype)) {
        uint64_t a = lo ? (uint64_t)ti__get_i64(lo, 0) : 0u;
        uint64_t b = hi ? (uint64_t)ti__get_i64(hi, 0) : UINT64_MAX;
        for (size_t i = 0; i < n; i++) {
            uint64_t v = (uint64_t)ti__get_i64(x, i);
            v = v < a ? a : v;
            ti__set_i64(y, i, (int64_t)(v > b ? b : v));
        }
    } else {
        int64_t a = lo ? ti__get_i64(lo, 0) : INT64_MIN;
        int64_t b = hi ? ti__get_i64(hi, 0) : INT64_MAX;
        for (size_t i = 0; i < n; i++) {
            int64_t v = ti__get_i64(x, i);
            v = v < a ? a : v;
            ti__set_i64(y, i, v > b ? b : v);
        }
    }
    return TI_OK;
}

/* ---- Cast / CastLike ------------------------------------------------------------------ */
TI__PRIVATE int ti__cast_shape_to(ti__kctx *k, ti_dtype to) {
    TI__REQUIRE_INPUT(k, 0);
    if (to == TI_DTYPE_UNKNOWN || to == TI_DTYPE_STRING)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "target dtype %s is not supported",
                         ti_dtype_name(to));
    return ti__unary_check(k, TI__EDT_ALL, to);
}
TI__PRIVATE int ti__cast_shape(ti__kctx *k) {
    const ti__attr *a = ti__attr_get(k->node, "to");
    if (a == NULL) return ti__kfail(k, TI_ERR_BAD_MODEL, "attribute 'to' is required");
    int64_t to = ti__attr_i(k->node, "to", 0);
    ti_dtype dt = ti__onnx_dtype(to);
    if (dt == TI_DTYPE_UNKNOWN || dt == TI_DTYPE_STRING)
        return ti__kfail(k, TI_ERR_UNSUPPORTED, "target ONNX type %lld is not supported",
                         (long long)to);
    return ti__cast_shape_to(k, dt);
}
TI__PRIVATE int ti__castlike_shape(ti__kctx *k) {
    TI__REQUIRE_INPUT(k, 1);
    return ti__cast_shape_to(k, k->in[1]->dtype);
}

/* Values move in chunks through the carrier of the source dtype (binary.c): double for
 * floats, int64 for signed and bool, uint64 for unsigned; each is exact for its sources.
 * float -> integer truncates toward zero, NaN gives 0 (ti__carry_d2i / ti__carry_d2u). */
TI__PRIVATE ti_status ti__cast_run(ti__kctx *k) {
    const ti_tensor *x = k->in[0];
    ti_tensor *y = k->out[0];
    const size_t n = ti__numel(x);
    const ti_dtype sd = x->dtype, dd = y->dtype;
    if (sd == dd) {
        memcpy(y->data, x->data, n * ti_dtype_size(sd));
        return TI_OK;
    }
    if (sd == TI_DTYPE_F32 && dd == TI_DTYPE_F16) { /* the common mixed-precision pair */
        const float *s = (const float *)x->data;
        uint16_t *d = (uint16_t *)y->data;
        for (size_t i = 0; i < n; i++) d[i] = ti__f32_to_f16(s[i]);
        return TI_OK;
    }
    const int carry = ti__carry_of(sd);
    union {
        double f[TI__CARRY_CHUNK];
        int64_t i[TI__CARRY_CHUNK];
        uint64_t u[TI__CARRY_CHUNK];
    } v;
    for (size_t off = 0; off < n; off += TI__CARRY_CHUNK) {
        const size_t m = TI__MIN((size_t)TI__CARRY_CHUNK, n - off);
        if (carry == TI__CARRY_F) {
            ti__carry_load_f(x->data, sd, off, 1, m, v.f);
            ti__carry_store_f(y->data, dd, off, m, v.f);
        } else if (carry == TI__CARRY_I) {
            ti__carry_load_i(x->data, sd, off, 1, m, v.i);
            ti__carry_store_i(y->data, dd, off, m, v.i);
        } else {
            ti__carry_load_u(x->data, sd, off, 1, m, v.u);
            ti__carry_store_u(y->data, dd, off, m, v.u);
        }
    }
    return TI_OK;
}

TI__PRIVATE const ti__op ti__ops_unary[] = {
    {"Abs", ti__unary_abs_shape, ti__unary_abs_run, NULL, 0},
    {"Neg", ti__unary_neg_shape, ti__unary_neg_run, NULL, 0},
    {"Sign", ti__unary_sign_shape, ti__unary_sign_run, NULL, 0},
    {"Relu", ti__unary_relu_shape, ti__unary_relu_run, NULL, 0},
    {"BitwiseNot", ti__unary_bitnot_shape, ti__unary_bitnot_run, NULL, 0},
    {"Not", ti__unary_not_shape, ti__unary_not_run, NULL, 0},
    {"IsNaN", ti__unary_isnan_shape, ti__unary_isnan_run, NULL, 0},
    {"IsInf", ti__unary_isnan_shape, ti__unary_isinf_run, NULL, 0},
    {"Reciprocal", ti__unary_float_shape, ti__unary_reciprocal_run, NULL, 0},
    {"Sqrt", ti__unary_float_shape, ti__unary_sqrt_run, NULL, 0},
    {"Exp", ti__unary_float_shape, ti__unary_exp_run, NULL, 0},
    {"Log", ti__unary_float_shape, ti__unary_log_run, NULL, 0},
    {"Ceil", ti__unary_float_shape, ti__unary_ceil_run, NULL, 0},
    {"Floor", ti__unary_float_shape, ti__unary_floor_run, NULL, 0},
    {"Round", ti__unary_float_shape, ti__unary_round_run, NULL, 0},
    {"Sin", ti__unary_float_shape, ti__unary_sin_run, NULL, 0},
    {"Cos", ti__unary_float_shape, ti__unary_cos_run, NULL, 0},
    {"Tan", ti__unary_float_shape, ti__unary_tan_run, NULL, 0},
    {"Asin", ti__unary_float_shape, ti__unary_asin_run, NULL, 0},
    {"Acos", ti__unary_float_shape, ti__unary_acos_run, NULL, 0},
    {"Atan", ti__unary_float_shape, ti__unary_atan_run, NULL, 0},
    {"Sinh", ti__unary_float_shape, ti__unary_sinh_run, NULL, 0},
    {"Cosh", ti__unary_float_shape, ti__unary_cosh_run, NULL, 0},
    {"Asinh", ti__unary_float_shape, ti__unary_asinh_run, NULL, 0},
    {"Acosh", ti__unary_float_shape, ti__unary_acosh_run, NULL, 0},
    {"Atanh", ti__unary_float_shape, ti__unary_atanh_run, NULL, 0},
    {"Erf", ti__unary_float_shape, ti__unary_erf_run, NULL, 0},
    {"Tanh", ti__unary_float_shape, ti__unary_tanh_run, NULL, 0},
    {"Sigmoid", ti__unary_float_shape, ti__unary_sigmoid_run, NULL, 0},
    {"Softplus", ti__unary_float_shape, ti__unary_softplus_run, NULL, 0},
    {"Softsign", ti__unary_float_shape, ti__unary_softsign_run, NULL, 0},
    {"Mish", ti__unary_float_shape, ti__unary_mish_run, NULL, 0},
    {"Gelu", ti__unary_gelu_shape, ti__unary_gelu_run, NULL, 0},
    {"LeakyRelu", ti__unary_float_shape, ti__unary_leaky_relu_run, NULL, 0},
    {"Elu", ti__unary_float_shape, ti__unary_elu_run, NULL, 0},
    {"Selu", ti__unary_float_shape, ti__unary_selu_run, NULL, 0},
    {"Celu", ti__unary_celu_shape, ti__unary_celu_run, NULL, 0},
    {"HardSigmoid", ti__unary_float_shape, ti__unary_hard_sigmoid_run, NULL, 0},
    {"HardSwish", ti__unary_float_shape, ti__unary_hard_swish_run, NULL, 0},
    {"ThresholdedRelu", ti__unary_float_shape, ti__unary_thresholded_relu_run, NULL, 0},
    {"Shrink", ti__unary_float_shape, ti__unary_shrink_run, NULL, 0},
    {"Swish", ti__unary_float_shape, ti__unary_swish_run, NULL, 0},
    {"Clip", ti__clip_shape, ti__clip_run, NULL, 0},
    {"Cast", ti__cast_shape, ti__cast_run, NULL, 0},
    {"CastLike", ti__castlike_shape, ti__cast_run, NULL, 0},
    {NULL, NULL, NULL, NULL, 0}
};
/* ==== end src/cpu/unary.c =================================================================== */

/* ==== begin src/graph/ops.c ================================================================= */
/* The op registry: every op the CPU runs, found by domain and op type. Each cpu/ file
 * exports one table ending in a NULL name; a table belongs to one domain ("" for ONNX,
 * "tflite" for TFLite builtins). Relies on the cpu/ files coming first in the header.
 * Must stay a list: an op is defined by its shape and run functions, nowhere else. */

static const struct {
    const char *domain;
    const ti__op *ops;
} ti__op_tables[] = {
    {"", ti__ops_unary},     {"", ti__ops_binary},   {"", ti__ops_conv},
    {"", ti__ops_gemm},      {"", ti__ops_pool},     {"", ti__ops_norm},
    {"", ti__ops_movement},  {"", ti__ops_index},    {"", ti__ops_generate},
    {"", ti__ops_reduce},    {"", ti__ops_resize},   {"", ti__ops_einsum},
    {"", ti__ops_attention}, {"", ti__ops_loss},     {"", ti__ops_rnn},
    {"", ti__ops_quant},
    {"tflite", ti__ops_tfl_conv},  {"tflite", ti__ops_tfl_elementwise},
    {"tflite", ti__ops_tfl_pool},  {"tflite", ti__ops_tfl_shape},
    {"tflite", ti__ops_tfl_lstm},  {"tflite", ti__ops_tfl_detect},
};

TI__PRIVATE const ti__op *ti__op_find(const char *domain, const char *name) {
    if (domain == NULL || strcmp(domain, "ai.onnx") == 0) domain = "";
    for (size_t t = 0; t < TI__COUNTOF(ti__op_tables); t++) {
        if (strcmp(ti__op_tables[t].domain, domain) != 0) continue;
        for (const ti__op *op = ti__op_tables[t].ops; op->name != NULL; op++)
            if (strcmp(op->name, name) == 0) return op;
    }
    return NULL;
}
/* ==== end src/graph/ops.c =================================================================== */

/* ==== begin src/graph/passes.c ============================================================== */
/* Graph passes on a session's plan: dead-node removal and fusion of Conv / ConvTranspose /
 * Gemm / MatMul with a following bias Add, BatchNormalization and activation. Relies on
 * the session structures in internal.h. Must not modify the model: rewritten nodes and
 * the folded weights live in the session's plan pool. */

/* live[i] = 1 for model node i when some graph output depends on it. */
TI__PRIVATE int ti__pass_live_nodes(ti_session *s, char *live) {
    const ti_model *m = s->m;
    char *needed = (char *)ti__pool_alloc(&s->plan_pool, (size_t)m->n_values + 1);
    if (needed == NULL) return 0;
    for (int i = 0; i < m->n_outputs; i++) needed[m->outputs[i]] = 1;
    for (int n = m->n_nodes - 1; n >= 0; n--) {
        const ti__node *node = &m->nodes[n];
        live[n] = 0;
        for (int i = 0; i < node->n_outputs; i++)
            if (node->outputs[i] >= 0 && needed[node->outputs[i]]) live[n] = 1;
        if (!live[n]) continue;
        for (int i = 0; i < node->n_inputs; i++)
            if (node->inputs[i] >= 0) needed[node->inputs[i]] = 1;
    }
    return 1;
}

/* A constant float32 value with exactly n elements, or NULL. */
TI__PRIVATE const float *ti__fuse_const_f32(const ti_session *s, int v, size_t n) {
    if (v < 0 || !s->vi[v].is_const || s->t[v].dtype != TI_DTYPE_F32 || ti__numel(&s->t[v]) != n)
        return NULL;
    return (const float *)s->t[v].data;
}

/* A constant scalar (any numeric dtype) or def when v is absent; 0 when not constant. */
TI__PRIVATE int ti__fuse_const_scalar(const ti_session *s, int v, float def, float *out) {
    if (v < 0) {
        *out = def;
        return 1;
    }
    if (!s->vi[v].is_const || ti__numel(&s->t[v]) != 1 || !ti__dtype_is_float(s->t[v].dtype))
        return 0;
    *out = (float)ti__get_f64(&s->t[v], 0);
    return 1;
}

/* Makes a new constant float32 value shaped like value `like`. */
TI__PRIVATE int ti__fuse_new_const(ti_session *s, int like, float **data) {
    int v = ti__session_new_value(s, s->t[like].name);
    if (v < 0) return -1;
    ti_tensor *t = &s->t[v];
    ti__set_shape(t, TI_DTYPE_F32, s->t[like].rank, s->t[like].shape);
    t->data = ti__pool_alloc(&s->plan_pool, t->size_bytes);
    if (t->data == NULL) return -1;
    s->vi[v].is_const = 1;
    *data = (float *)t->data;
    return v;
}

/* Gives node a private copy of its inputs with room for 3 (X, W, B). */
TI__PRIVATE int ti__fuse_own_inputs(ti_session *s, ti__node *node) {
    int n = node->n_inputs < 3 ? 3 : node->n_inputs;
    int *in = (int *)ti__pool_alloc(&s->plan_pool, sizeof(int) * (size_t)n);
    int *out = (int *)ti__pool_alloc(&s->plan_pool, sizeof(int) * (size_t)(node->n_outputs + 1));
    if (in == NULL || out == NULL) return 0;
    for (int i = 0; i < n; i++) in[i] = i < node->n_inputs ? node->inputs[i] : -1;
    for (int i = 0; i < node->n_outputs; i++) out[i] = node->outputs[i];
    node->inputs = in;
    node->outputs = out;
    return 1;
}

/* Conv + BatchNormalization: W'[o] = W[o] * g, b'[o] = (b[o] - mean[o]) * g + beta[o] with
 * g = scale[o] / sqrt(var[o] + eps). Returns 1 when fused. */
TI__PRIVATE int ti__fuse_conv_bn(ti_session *s, ti__node *conv, const ti__node *bn) {
    int wv = conv->inputs[1];
    if (wv < 0 || !s->vi[wv].is_const || s->t[wv].dtype != TI_DTYPE_F32 || s->t[wv].rank < 3) return 0;
    size_t m = (size_t)s->t[wv].shape[0], per = ti__numel(&s->t[wv]) / (m ? m : 1);
    if (bn->n_inputs < 5 || ti__attr_i(bn, "training_mode", 0) != 0) return 0;
    for (int i = 1; i < bn->n_outputs; i++)
        if (bn->outputs[i] >= 0) return 0;
    if (s->m->opset < 9 && ti__attr_i(bn, "spatial", 1) != 1) return 0;
    const float *scale = ti__fuse_const_f32(s, bn->inputs[1], m);
    const float *beta = ti__fuse_const_f32(s, bn->inputs[2], m);
    const float *mean = ti__fuse_const_f32(s, bn->inputs[3], m);
    const float *var = ti__fuse_const_f32(s, bn->inputs[4], m);
    const float *bias = conv->n_inputs > 2 && conv->inputs[2] >= 0
                            ? ti__fuse_const_f32(s, conv->inputs[2], m) : NULL;
    if (!scale || !beta || !mean || !var) return 0;
    if (conv->n_inputs > 2 && conv->inputs[2] >= 0 && bias == NULL) return 0;
    float eps = ti__attr_f(bn, "epsilon", 1e-5f), *nw, *nb;
    int nwv = ti__fuse_new_const(s, wv, &nw);
    int nbv = nwv < 0 ? -1 : ti__fuse_new_const(s, bn->inputs[1], &nb);
    if (nbv < 0 || !ti__fuse_own_inputs(s, conv)) return 0;
    const float *w = (const float *)s->t[wv].data;
    for (size_t o = 0; o < m; o++) {
        float g = scale[o] / sqrtf(var[o] + eps);
        for (size_t i = 0; i < per; i++) nw[o * per + i] = w[o * per + i] * g;
        nb[o] = ((bias ? bias[o] : 0.0f) - mean[o]) * g + beta[o];
    }
    conv->inputs[1] = nwv;
    conv->inputs[2] = nbv;
    if (conv->n_inputs < 3) conv->n_inputs = 3;
    return 1;
}

/* Conv + Add of a per-output-channel constant ([M,1,1], [1,M,1,1], ...). */
TI__PRIVATE int ti__fuse_conv_add(ti_session *s, ti__node *conv, const ti__node *add, int y) {
    int wv = conv->inputs[1];
    if (add->n_inputs != 2 || wv < 0 || s->t[wv].rank < 3) return 0;
    int cv = add->inputs[0] == y ? add->inputs[1] : add->inputs[0];
    if (cv < 0 || cv == y || !s->vi[cv].is_const || s->t[cv].dtype != TI_DTYPE_F32) return 0;
    const ti_tensor *c = &s->t[cv], *yt = &s->t[y];
    size_t m = (size_t)s->t[wv].shape[0];
    if (c->rank > yt->rank || ti__numel(c) != m) return 0;
    for (int d = 0; d < c->rank; d++) { /* right-aligned: only the channel dim may be > 1 */
        int yd = yt->rank - c->rank + d;
        if (c->shape[d] != 1 && yd != 1) return 0;
    }
    if (conv->n_inputs > 2 && conv->inputs[2] >= 0 && !ti__fuse_const_f32(s, conv->inputs[2], m)) return 0;
    float *nb;
    int nbv = ti__fuse_new_const(s, cv, &nb);
    if (nbv < 0 || !ti__fuse_own_inputs(s, conv)) return 0;
    s->t[nbv].rank = 1;
    s->t[nbv].shape[0] = (int64_t)m;
    const float *old = conv->inputs[2] >= 0 ? (const float *)s->t[conv->inputs[2]].data : NULL;
    const float *cd = (const float *)c->data;
    for (size_t o = 0; o < m; o++) nb[o] = cd[o] + (old ? old[o] : 0.0f);
    conv->inputs[2] = nbv;
    if (conv->n_inputs < 3) conv->n_inputs = 3;
    return 1;
}

/* MatMul + Add of a constant row vector ([N], [1,N], [1,1,N]): the vector becomes the
 * MatMul's third input, a bias the kernel adds before the activation. */
TI__PRIVATE int ti__fuse_matmul_add(ti_session *s, ti__node *mm, const ti__node *add, int y) {
    if (add->n_inputs != 2 || mm->n_inputs != 2) return 0;
    int cv = add->inputs[0] == y ? add->inputs[1] : add->inputs[0];
    if (cv < 0 || cv == y || !s->vi[cv].is_const || s->t[cv].dtype != TI_DTYPE_F32) return 0;
    const ti_tensor *c = &s->t[cv], *yt = &s->t[y];
    if (yt->rank < 1 || c->rank > yt->rank || ti__numel(c) != (size_t)yt->shape[yt->rank - 1])
        return 0;
    for (int d = 0; d + 1 < c->rank; d++)
        if (c->shape[d] != 1) return 0;
    if (!ti__fuse_own_inputs(s, mm)) return 0;
    mm->inputs[2] = cv;
    mm->n_inputs = 3;
    return 1;
}

/* An activation node that can be folded into its producer: sets act, a, b. */
TI__PRIVATE int ti__fuse_act_of(const ti_session *s, const ti__node *n, int *act, float *a, float *b) {
    const char *op = n->op;
    *a = 0.0f;
    *b = 0.0f;
    if (n->n_outputs < 1) return 0;
    if (strcmp(op, "Relu") == 0) *act = TI__ACT_RELU;
    else if (strcmp(op, "Sigmoid") == 0) *act = TI__ACT_SIGMOID;
    else if (strcmp(op, "Tanh") == 0) *act = TI__ACT_TANH;
    else if (strcmp(op, "HardSwish") == 0) *act = TI__ACT_HARD_SWISH;
    else if (strcmp(op, "LeakyRelu") == 0) {
        *act = TI__ACT_LEAKY_RELU;
        *a = ti__attr_f(n, "alpha", 0.01f);
    } else if (strcmp(op, "HardSigmoid") == 0) {
        *act = TI__ACT_HARD_SIGMOID;
        *a = ti__attr_f(n, "alpha", 0.2f);
        *b = ti__attr_f(n, "beta", 0.5f);
    } else if (strcmp(op, "Clip") == 0) {
        *act = TI__ACT_CLIP;
        if (s->m->opset < 11) {
            *a = ti__attr_f(n, "min", -FLT_MAX);
            *b = ti__attr_f(n, "max", FLT_MAX);
        } else if (!ti__fuse_const_scalar(s, n->n_inputs > 1 ? n->inputs[1] : -1, -FLT_MAX, a) ||
                   !ti__fuse_const_scalar(s, n->n_inputs > 2 ? n->inputs[2] : -1, FLT_MAX, b))
            return 0;
    } else return 0;
    return 1;
}

TI__PRIVATE ti_status ti__pass_fuse(ti_session *s, ti_error *err) {
    int nv = s->cap_values;
    int *uses = (int *)ti__pool_alloc(&s->plan_pool, sizeof(int) * (size_t)nv);
    int *user = (int *)ti__pool_alloc(&s->plan_pool, sizeof(int) * (size_t)nv);
    if (uses == NULL || user == NULL)
        return ti__fail(err, TI_ERR_OUT_OF_MEMORY, s->m->name, "out of memory in fusion");
    for (int n = 0; n < s->n_nodes; n++)
        for (int i = 0; i < s->nodes[n].n_inputs; i++) {
            int v = s->nodes[n].inputs[i];
            if (v < 0) continue;
            uses[v]++;
            user[v] = n;
        }
    for (int n = 0; n < s->n_nodes; n++) {
        ti__node *a = &s->nodes[n];
        if (a->domain[0] != 0) continue; /* ONNX ops only; TFLite kernels fuse on their own */
        int is_conv = strcmp(a->op, "Conv") == 0;
        if (!is_conv && strcmp(a->op, "ConvTranspose") != 0 && strcmp(a->op, "Gemm") != 0 &&
            strcmp(a->op, "MatMul") != 0)
            continue;
        for (;;) {
            if (a->n_outputs != 1 || a->outputs[0] < 0) break;
            int y = a->outputs[0];
            if (s->vi[y].is_output || s->t[y].dtype != TI_DTYPE_F32 || a->act != TI__ACT_NONE) break;
            /* SiLU: y -> Sigmoid -> s; Mul(y, s) */
            if (uses[y] == 2) {
                int sig = -1, mul = -1;
                for (int j = n + 1; j < s->n_nodes; j++) {
                    const ti__node *c = &s->nodes[j];
                    for (int i = 0; i < c->n_inputs; i++)
                        if (c->inputs[i] == y) {
                            if (strcmp(c->op, "Sigmoid") == 0 && sig < 0) sig = j;
                            else if (strcmp(c->op, "Mul") == 0) mul = j;
                        }
                }
                if (sig < 0 || mul < 0) break;
                ti__node *sn = &s->nodes[sig], *mn = &s->nodes[mul];
                int sv = sn->outputs[0];
                if (sv < 0 || uses[sv] != 1 || s->vi[sv].is_output || mn->n_inputs != 2 ||
                    !((mn->inputs[0] == y && mn->inputs[1] == sv) ||
                      (mn->inputs[1] == y && mn->inputs[0] == sv)))
                    break;
                if (!ti__fuse_own_inputs(s, a)) break;
                a->act = TI__ACT_SILU;
                a->outputs[0] = mn->outputs[0];
                sn->op = "";
                mn->op = "";
                s->info.num_fused += 2;
                break;
            }
            if (uses[y] != 1) break;
            ti__node *b = &s->nodes[user[y]];
            if (b->domain[0] != 0) break;
            int act;
            float aa, ab;
            int fused = 0;
            if (is_conv && strcmp(b->op, "BatchNormalization") == 0 && b->inputs[0] == y)
                fused = ti__fuse_conv_bn(s, a, b);
            else if (is_conv && strcmp(b->op, "Add") == 0)
                fused = ti__fuse_conv_add(s, a, b, y);
            else if (strcmp(a->op, "MatMul") == 0 && strcmp(b->op, "Add") == 0)
                fused = ti__fuse_matmul_add(s, a, b, y);
            else if (b->inputs[0] == y && ti__fuse_act_of(s, b, &act, &aa, &ab)) {
                fused = ti__fuse_own_inputs(s, a);
                if (fused) {
                    a->act = act;
                    a->act_a = aa;
                    a->act_b = ab;
                }
            }
            if (!fused) break;
            a->outputs[0] = b->outputs[0];
            b->op = "";
            s->info.num_fused++;
        }
    }
    /* compact, rebinding the tensors of rewritten nodes */
    int w = 0;
    for (int n = 0; n < s->n_nodes; n++) {
        if (s->nodes[n].op[0] == 0) continue;
        s->nodes[w] = s->nodes[n];
        s->ops[w] = s->ops[n];
        if (!ti__session_bind_io(s, w))
            return ti__fail(err, TI_ERR_OUT_OF_MEMORY, s->m->name, "out of memory in fusion");
        w++;
    }
    s->n_nodes = w;
    s->first_dynamic = w;
    return TI_OK;
}
/* ==== end src/graph/passes.c ================================================================ */

/* ==== begin src/formats/protobuf.c ========================================================== */
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
/* ==== end src/formats/protobuf.c ============================================================ */

/* ==== begin src/formats/onnx.c ============================================================== */
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
    uint8_t *raw = (uint8_t *)ti__pool_alloc(&m->pool, alloc);
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
    __attribute__((format(printf, 4, 5)))
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
 * nodes in topological order (kept as is when the file already has one; otherwise Kahn's
 * algorithm taking the lowest file index first, so the order stays close to the file's). */
TI__PRIVATE ti_status ti__ox_validate(ti__ox *x) {
    ti_model *m = x->m;
    int nv = m->n_values, nn = m->n_nodes;
    const ti_allocator *al = &m->al;
    ti_status st = TI_OK;
    /* producer of each value: node index, or -1 none, -2 graph input, -3 constant */
    int *prod = (int *)ti__malloc(al, sizeof(int) * (size_t)(nv + 1));
    if (prod == NULL) return ti__ox_oom(x);
    for (int v = 0; v < nv; v++) prod[v] = m->values[v].is_const ? -3 : -1;
    for (int i = 0; i < m->n_inputs; i++) prod[m->inputs[i]] = -2;
    int sorted = 1;
    size_t edges = 0;
    for (int i = 0; i < nn && st == TI_OK; i++) {
        const ti__node *n = &m->nodes[i];
        for (int o = 0; o < n->n_outputs && st == TI_OK; o++) {
            int v = n->outputs[o];
            if (v < 0) continue;
            if (prod[v] != -1) {
                const char *by = prod[v] == -2 ? "a graph input" : prod[v] == -3
                               ? "an initializer" : "another node";
                char other[128] = "";
                if (prod[v] >= 0)
                    snprintf(other, sizeof other, " ('%s', %s)", m->nodes[prod[v]].name,
                             m->nodes[prod[v]].op);
                st = ti__ox_node_fail(x, TI_ERR_BAD_MODEL, i,
                                      "output '%s' is also produced by %s%s", m->values[v].name,
                                      by, other);
            }
            prod[v] = i;
        }
    }
    for (int i = 0; i < nn && st == TI_OK; i++) {
        const ti__node *n = &m->nodes[i];
        for (int k = 0; k < n->n_inputs && st == TI_OK; k++) {
            int v = n->inputs[k];
            if (v < 0) continue;
            if (prod[v] == -1)
                st = ti__ox_node_fail(x, TI_ERR_BAD_MODEL, i,
                                      "input '%s' is not produced by any node, graph input or "
                                      "initializer", m->values[v].name);
            if (prod[v] >= 0) edges++;
            if (prod[v] >= i) sorted = 0;
        }
    }
    for (int i = 0; i < m->n_outputs && st == TI_OK; i++)
        if (prod[m->outputs[i]] == -1)
            st = ti__fail(x->err, TI_ERR_BAD_MODEL, x->file,
                          "graph output '%s' is not produced by any node, graph input or "
                          "initializer", m->values[m->outputs[i]].name);
    if (st != TI_OK || sorted) {
        ti__free(al, prod, sizeof(int) * (size_t)(nv + 1));
        return st;
    }
    /* Kahn: indeg = producer edges not yet scheduled; consumers in CSR form */
    size_t nn1 = (size_t)nn + 1;
    int *indeg = (int *)ti__calloc(al, sizeof(int) * nn1);
    size_t *start = (size_t *)ti__calloc(al, sizeof(size_t) * (nn1 + 1));
    int *cons = (int *)ti__malloc(al, sizeof(int) * (edges + 1));
    int *heap = (int *)ti__malloc(al, sizeof(int) * nn1);
    int *order = (int *)ti__malloc(al, sizeof(int) * nn1);
    ti__node *nodes = (ti__node *)ti__malloc(al, sizeof(ti__node) * nn1);
    if (!indeg || !start || !cons || !heap || !order || !nodes) st = ti__ox_oom(x);
    for (int i = 0; i < nn && st == TI_OK; i++)
        for (int k = 0; k < m->nodes[i].n_inputs; k++) {
            int v = m->nodes[i].inputs[k];
            if (v >= 0 && prod[v] >= 0) {
                indeg[i]++;
                start[prod[v] + 2]++;
            }
        }
    if (st == TI_OK) {
        for (int i = 0; i < nn; i++) start[i + 2] += start[i + 1];
        /* start[p + 1] is now where producer p's consumers begin; fill advances it */
        for (int i = 0; i < nn; i++)
            for (int k = 0; k < m->nodes[i].n_inputs; k++) {
                int v = m->nodes[i].inputs[k];
                if (v >= 0 && prod[v] >= 0) cons[start[prod[v] + 1]++] = i;
            }
        /* now consumers of p are cons[start[p] .. start[p + 1]) */
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
                    int p = (j - 1) / 2, tmp = heap[p];
                    heap[p] = heap[j];
                    heap[j] = tmp;
                    j = p;
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
            st = ti__ox_node_fail(x, TI_ERR_BAD_MODEL, u,
                                  "the graph has a cycle through this node");
        } else {
            for (int i = 0; i < nn; i++) nodes[i] = m->nodes[order[i]];
            ti__free(al, m->nodes, sizeof(ti__node) * (size_t)m->cap_nodes);
            m->nodes = nodes;
            m->cap_nodes = (int)nn1;
            nodes = NULL;
        }
    }
    ti__free(al, prod, sizeof(int) * (size_t)(nv + 1));
    ti__free(al, indeg, sizeof(int) * nn1);
    ti__free(al, start, sizeof(size_t) * (nn1 + 1));
    ti__free(al, cons, sizeof(int) * (edges + 1));
    ti__free(al, heap, sizeof(int) * nn1);
    ti__free(al, order, sizeof(int) * nn1);
    ti__free(al, nodes, sizeof(ti__node) * nn1);
    return st;
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
/* ==== end src/formats/onnx.c ================================================================ */

/* ==== begin src/formats/flatbuf.c =========================================================== */
/* TODO(#4): verified FlatBuffers accessors (being written). */
/* ==== end src/formats/flatbuf.c ============================================================= */

/* ==== begin src/formats/tflite.c ============================================================ */
/* TODO(#4): the TFLite reader (being written). */
#ifndef TI_NO_TFLITE
TI__PRIVATE ti_status ti__tflite_parse(ti_model *m, const uint8_t *data, size_t size, ti_error *err) {
    (void)data;
    (void)size;
    return ti__fail(err, TI_ERR_UNSUPPORTED, m->name, "TFLite models are not supported yet (issue #4)");
}
#endif
/* ==== end src/formats/tflite.c ============================================================== */

/* ==== begin src/cl/loader.c ================================================================= */
/* The OpenCL loader: opens the vendor library at run time and fills the function table,
 * reporting every candidate it tried. Relies on dlopen/dlsym (LoadLibraryA/GetProcAddress
 * on Windows, declared here instead of including <windows.h>). Must not abort or print:
 * a missing or broken library is a report, and callers fall back to the CPU. */
#if !defined(TINYINFER_CL_IMPLEMENTATION_DONE) && !defined(TI_NO_OPENCL)
#define TINYINFER_CL_IMPLEMENTATION_DONE
#include <stdlib.h>
#include <string.h>
#ifdef _WIN32
typedef struct HINSTANCE__ *ti__cl_hmodule;
__declspec(dllimport) ti__cl_hmodule __stdcall LoadLibraryA(const char *);
__declspec(dllimport) void *__stdcall GetProcAddress(ti__cl_hmodule, const char *);
__declspec(dllimport) int __stdcall FreeLibrary(ti__cl_hmodule);
__declspec(dllimport) unsigned long __stdcall GetLastError(void);
__declspec(dllimport) unsigned int __stdcall SetErrorMode(unsigned int);
#else
#include <dlfcn.h>
#endif

static void ti__cl_copy(char *dst, size_t cap, const char *src) {
    size_t n = src ? strlen(src) : 0;
    if (n >= cap) n = cap - 1;
    if (n) memcpy(dst, src, n);
    dst[n] = 0;
}

/* Opens one candidate; on failure writes the loader's reason into err. */
static void *ti__cl_open(const char *path, char *err, size_t errcap) {
#ifdef _WIN32
    unsigned int old = SetErrorMode(0x8001); /* no "DLL not found" dialog boxes */
    void *h = (void *)LoadLibraryA(path);
    SetErrorMode(old);
    if (h == NULL) {
        unsigned long e = GetLastError(), d = 1000000000UL;
        char num[16], *p = num;
        while (d > 1 && d > e) d /= 10;
        for (; d > 0; d /= 10) *p++ = (char)('0' + (e / d) % 10);
        *p = 0;
        ti__cl_copy(err, errcap, "LoadLibrary failed, error ");
        ti__cl_copy(err + strlen(err), errcap - strlen(err), num);
    }
    return h;
#else
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        const char *e = dlerror();
        ti__cl_copy(err, errcap, e ? e : "dlopen failed");
    }
    return h;
#endif
}

static void *ti__cl_symbol(void *lib, const char *name) {
#ifdef _WIN32
    return GetProcAddress((ti__cl_hmodule)lib, name);
#else
    return dlsym(lib, name);
#endif
}

static void ti__cl_close(void *lib) {
    if (lib == NULL) return;
#ifdef _WIN32
    FreeLibrary((ti__cl_hmodule)lib);
#elif defined(__ANDROID__)
    /* Android before API 28 may crash unloading vendor GPU drivers: keep it mapped. */
    (void)lib;
#else
    dlclose(lib);
#endif
}

/* The usual places, most specific first. */
static const char *const ti__cl_candidates[] = {
#if defined(__ANDROID__)
    "libOpenCL.so",
#if defined(__LP64__)
    "/vendor/lib64/libOpenCL.so", "/system/vendor/lib64/libOpenCL.so",
    "/system/lib64/libOpenCL.so", "/vendor/lib64/libOpenCL_adreno.so",
    "/vendor/lib64/egl/libGLES_mali.so", "/system/vendor/lib64/egl/libGLES_mali.so",
    "/vendor/lib64/libmali.so", "/vendor/lib64/libPVROCL.so",
#else
    "/vendor/lib/libOpenCL.so", "/system/vendor/lib/libOpenCL.so", "/system/lib/libOpenCL.so",
    "/vendor/lib/libOpenCL_adreno.so", "/vendor/lib/egl/libGLES_mali.so",
    "/system/vendor/lib/egl/libGLES_mali.so", "/vendor/lib/libmali.so",
    "/vendor/lib/libPVROCL.so",
#endif
    "libOpenCL_adreno.so", "libmali.so", "libGLES_mali.so", "libPVROCL.so",
#elif defined(__APPLE__)
    "/System/Library/Frameworks/OpenCL.framework/OpenCL", "libOpenCL.dylib",
#elif defined(_WIN32)
    "OpenCL.dll",
#else
    "libOpenCL.so.1", "libOpenCL.so",
#endif
};

/* Fills the table from lib; returns the first missing required symbol, or NULL. */
static const char *ti__cl_fill(ti_cl_api *api, void *lib) {
    void *sym;
    typedef char ti__cl_fnptr_is_data_sized[sizeof(sym) == sizeof(api->clFinish) ? 1 : -1];
    (void)sizeof(ti__cl_fnptr_is_data_sized);
    memset(api, 0, sizeof *api);
    api->lib = lib;
    /* dlsym returns data pointers; copying the bits is the portable, pedantic-clean way */
#define TI__CL_LOAD(req, ret, name, args)                                                     \
    sym = ti__cl_symbol(lib, #name);                                                           \
    if (sym == NULL && (req)) return #name;                                                    \
    memcpy(&api->name, &sym, sizeof sym);
    TI_CL_FUNCS(TI__CL_LOAD)
#undef TI__CL_LOAD
    if (api->clCreateCommandQueue == NULL && api->clCreateCommandQueueWithProperties == NULL)
        return "clCreateCommandQueue";
    return NULL;
}

TI_CL_API ti_cl_status ti_cl_load(ti_cl_api *api, const char *library_path, ti_cl_report *report) {
    ti_cl_report local;
    if (report == NULL) report = &local;
    memset(report, 0, sizeof *report);
    if (api == NULL) return TI_CL_NOT_FOUND;
    memset(api, 0, sizeof *api);
    const char *explicit_path = library_path;
    if (explicit_path == NULL || explicit_path[0] == 0) explicit_path = getenv("TINYINFER_OPENCL_LIBRARY");
    const char *const *list = ti__cl_candidates;
    size_t n = sizeof ti__cl_candidates / sizeof ti__cl_candidates[0];
    if (explicit_path != NULL && explicit_path[0] != 0) { /* the user's choice, and only it */
        list = &explicit_path;
        n = 1;
    }
    ti_cl_status status = TI_CL_NOT_FOUND;
    for (size_t i = 0; i < n; i++) {
        int slot = report->num_tried < TI_CL_MAX_TRIED ? report->num_tried++ : TI_CL_MAX_TRIED - 1;
        ti__cl_copy(report->tried[slot].path, sizeof report->tried[slot].path, list[i]);
        void *lib = ti__cl_open(list[i], report->tried[slot].error, sizeof report->tried[slot].error);
        if (lib == NULL) continue;
        const char *missing = ti__cl_fill(api, lib);
        if (missing == NULL) {
            ti__cl_copy(report->loaded, sizeof report->loaded, list[i]);
            return TI_CL_OK;
        }
        /* keep looking: another candidate may be complete */
        ti__cl_copy(report->tried[slot].error, sizeof report->tried[slot].error, "lacks ");
        ti__cl_copy(report->tried[slot].error + 6, sizeof report->tried[slot].error - 6, missing);
        if (report->missing_symbol[0] == 0)
            ti__cl_copy(report->missing_symbol, sizeof report->missing_symbol, missing);
        memset(api, 0, sizeof *api);
        ti__cl_close(lib);
        status = TI_CL_INCOMPLETE;
    }
    return status;
}

TI_CL_API void ti_cl_unload(ti_cl_api *api) {
    if (api == NULL) return;
    ti__cl_close(api->lib);
    memset(api, 0, sizeof *api);
}

TI_CL_API const char *ti_cl_error_string(cl_int code) {
    switch (code) {
#define TI__CL_ERR(c) case c: return #c;
    TI__CL_ERR(CL_SUCCESS) TI__CL_ERR(CL_DEVICE_NOT_FOUND) TI__CL_ERR(CL_DEVICE_NOT_AVAILABLE)
    TI__CL_ERR(CL_COMPILER_NOT_AVAILABLE) TI__CL_ERR(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    TI__CL_ERR(CL_OUT_OF_RESOURCES) TI__CL_ERR(CL_OUT_OF_HOST_MEMORY)
    TI__CL_ERR(CL_PROFILING_INFO_NOT_AVAILABLE) TI__CL_ERR(CL_BUILD_PROGRAM_FAILURE)
    TI__CL_ERR(CL_MAP_FAILURE) TI__CL_ERR(CL_INVALID_VALUE) TI__CL_ERR(CL_INVALID_DEVICE_TYPE)
    TI__CL_ERR(CL_INVALID_PLATFORM) TI__CL_ERR(CL_INVALID_DEVICE) TI__CL_ERR(CL_INVALID_CONTEXT)
    TI__CL_ERR(CL_INVALID_COMMAND_QUEUE) TI__CL_ERR(CL_INVALID_MEM_OBJECT)
    TI__CL_ERR(CL_INVALID_BINARY) TI__CL_ERR(CL_INVALID_BUILD_OPTIONS)
    TI__CL_ERR(CL_INVALID_PROGRAM) TI__CL_ERR(CL_INVALID_PROGRAM_EXECUTABLE)
    TI__CL_ERR(CL_INVALID_KERNEL_NAME) TI__CL_ERR(CL_INVALID_KERNEL)
    TI__CL_ERR(CL_INVALID_ARG_INDEX) TI__CL_ERR(CL_INVALID_ARG_VALUE)
    TI__CL_ERR(CL_INVALID_ARG_SIZE) TI__CL_ERR(CL_INVALID_KERNEL_ARGS)
    TI__CL_ERR(CL_INVALID_WORK_DIMENSION) TI__CL_ERR(CL_INVALID_WORK_GROUP_SIZE)
    TI__CL_ERR(CL_INVALID_WORK_ITEM_SIZE) TI__CL_ERR(CL_INVALID_GLOBAL_OFFSET)
    TI__CL_ERR(CL_INVALID_EVENT_WAIT_LIST) TI__CL_ERR(CL_INVALID_EVENT)
    TI__CL_ERR(CL_INVALID_OPERATION) TI__CL_ERR(CL_INVALID_BUFFER_SIZE)
    TI__CL_ERR(CL_INVALID_GLOBAL_WORK_SIZE) TI__CL_ERR(CL_PLATFORM_NOT_FOUND_KHR)
#undef TI__CL_ERR
    default: return "unknown OpenCL error";
    }
}
#endif /* TINYINFER_CL_IMPLEMENTATION_DONE */
/* ==== end src/cl/loader.c =================================================================== */

/* ==== begin src/cl/probe.c ================================================================== */
/* Looks for a usable OpenCL device at session creation and says, in one line, what it
 * found: the reason a session runs on the CPU. Relies on the loader (cl/loader.c). Must
 * leave nothing loaded behind and never fail a session that may fall back. */
#ifndef TI_NO_OPENCL

/* Picks a device, GPUs first: *name gets "platform / device". Returns 1 when one exists. */
TI__PRIVATE int ti__cl_pick(const ti_cl_api *cl, char *name, size_t cap, char *why, size_t whycap) {
    cl_platform_id plats[16];
    cl_uint np = 0;
    cl_int e = cl->clGetPlatformIDs(16, plats, &np);
    if (e != CL_SUCCESS || np == 0) {
        snprintf(why, whycap, "no OpenCL platform (clGetPlatformIDs: %s)",
                 e != CL_SUCCESS ? ti_cl_error_string(e) : "0 platforms");
        return 0;
    }
    if (np > 16) np = 16;
    static const cl_device_type order[2] = {CL_DEVICE_TYPE_GPU, CL_DEVICE_TYPE_ALL};
    for (int pass = 0; pass < 2; pass++)
        for (cl_uint p = 0; p < np; p++) {
            cl_device_id dev;
            cl_uint nd = 0;
            if (cl->clGetDeviceIDs(plats[p], order[pass], 1, &dev, &nd) != CL_SUCCESS || nd == 0)
                continue;
            char pname[128] = "", dname[128] = "";
            cl->clGetPlatformInfo(plats[p], CL_PLATFORM_NAME, sizeof pname - 1, pname, NULL);
            cl->clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof dname - 1, dname, NULL);
            snprintf(name, cap, "%s / %s", pname, dname);
            return 1;
        }
    snprintf(why, whycap, "%u OpenCL platform(s) but no device", (unsigned)np);
    return 0;
}

/* Fills reason with what OpenCL offers; returns 1 when a device was found. */
TI__PRIVATE int ti__cl_probe(const char *library, char *reason, size_t cap) {
    ti_cl_api cl;
    ti_cl_report rep;
    ti_cl_status st = ti_cl_load(&cl, library, &rep);
    if (st == TI_CL_NOT_FOUND) {
        snprintf(reason, cap, "no OpenCL library (tried %d: '%s': %s%s)", rep.num_tried,
                 rep.tried[0].path, rep.tried[0].error, rep.num_tried > 1 ? ", ..." : "");
        return 0;
    }
    if (st == TI_CL_INCOMPLETE) {
        snprintf(reason, cap, "the OpenCL library '%s' lacks %s", rep.tried[0].path,
                 rep.missing_symbol);
        return 0;
    }
    char dev[260] = "", why[160] = "";
    int found = ti__cl_pick(&cl, dev, sizeof dev, why, sizeof why);
    if (found)
        snprintf(reason, cap, "OpenCL device '%s' (%s) found, but this version has no OpenCL "
                 "kernels yet (issue #5)", dev, rep.loaded);
    else
        snprintf(reason, cap, "%s (%s)", why, rep.loaded);
    /* Keep the library mapped: ICD loaders and drivers (PoCL, NVIDIA) keep process-wide
     * state from clGetPlatformIDs on and do not all survive being unloaded; a later dlopen
     * of the same file only bumps its reference count. */
    memset(&cl, 0, sizeof cl);
    return found;
}
#endif /* TI_NO_OPENCL */
/* ==== end src/cl/probe.c ==================================================================== */

/* ==== begin src/core/model.c ================================================================ */
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

    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        ti__fail(err, TI_ERR_IO, m->name, "cannot open the file");
        ti_model_free(m);
        return NULL;
    }
    long len = -1;
    if (fseek(f, 0, SEEK_END) == 0) len = ftell(f);
    if (len < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        ti__fail(err, TI_ERR_IO, m->name, "cannot read the file size");
        ti_model_free(m);
        return NULL;
    }
    size_t size = (size_t)len;
    uint8_t *buf = (uint8_t *)ti__malloc(&m->al, size);
    if (buf == NULL) {
        fclose(f);
        ti__fail(err, TI_ERR_OUT_OF_MEMORY, m->name, "cannot allocate %zu bytes to read the file", size);
        ti_model_free(m);
        return NULL;
    }
    size_t got = size ? fread(buf, 1, size, f) : 0;
    fclose(f);
    ti_status st = got != size ? ti__fail(err, TI_ERR_IO, m->name, "read %zu of %zu bytes", got, size)
                               : ti__model_parse(m, buf, size, err);
    ti__free(&m->al, buf, size);
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
/* ==== end src/core/model.c ================================================================== */

/* ==== begin src/core/session.c ============================================================== */
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

TI__PRIVATE void ti__log(const ti_session *s, ti_log_level level, const char *msg) {
    if (s->desc.log != NULL) s->desc.log(level, msg, s->desc.log_user);
}

/* Frees what a plan owns (not the tensor table, which survives re-planning). */
TI__PRIVATE void ti__session_unplan(ti_session *s) {
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
    s->n_nodes = 0;
    s->planned = 0;
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
        if (!ti__set_shape(t, mv->dtype, mv->rank, dims))
            return ti__fail(err, TI_ERR_BAD_MODEL, m->name, "input '%s': invalid shape",
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

/* Greedy arena placement, largest first: each tensor goes to the lowest offset that
 * does not overlap, in both address and lifetime, a tensor placed before it. */
TI__PRIVATE ti_status ti__session_place(ti_session *s, size_t *offsets, ti_error *err) {
    int n = 0;
    int *order = (int *)ti__pool_alloc(&s->plan_pool, sizeof(int) * (size_t)(s->n_values + 1));
    int *placed = (int *)ti__pool_alloc(&s->plan_pool, sizeof(int) * (size_t)(s->n_values + 1));
    if (order == NULL || placed == NULL)
        return ti__fail(err, TI_ERR_OUT_OF_MEMORY, s->m->name, "out of memory planning the arena");
    for (int v = 0; v < s->n_values; v++) {
        const ti__vinfo *vi = &s->vi[v];
        if (vi->is_const || vi->heap || vi->first > vi->last) continue;
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
        size_t size = (s->t[v].size_bytes + 63) & ~(size_t)63, off = 0;
        if (size == 0) size = 64;
        for (;;) {
            int moved = 0;
            for (int j = 0; j < n_placed; j++) {
                int u = placed[j];
                if (s->vi[u].last < s->vi[v].first || s->vi[v].last < s->vi[u].first) continue;
                size_t usize = (s->t[u].size_bytes + 63) & ~(size_t)63;
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
    return TI_OK;
}

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
        if (vi->is_input) vi->first = -1;
        if (vi->is_input && vi->last < 0) vi->last = 0;
        /* outputs, and values the dynamic region reads, live to the end */
        if (vi->is_output || (vi->last >= s->first_dynamic && s->first_dynamic < s->n_nodes))
            vi->last = s->n_nodes;
    }
    size_t *offsets = (size_t *)ti__pool_alloc(&s->plan_pool, sizeof(size_t) * (size_t)(s->n_values + 1));
    if (offsets == NULL) return ti__fail(err, TI_ERR_OUT_OF_MEMORY, m->name, "out of memory");
    for (int v = 0; v < s->n_values; v++)
        if (s->vi[v].heap) s->t[v].data = NULL;
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
    s->planned = 1;
    s->info.backend = TI_BACKEND_CPU;
    s->info.fallback_reason = s->fallback;
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
    if (!ti__allocator_valid(&d.allocator)) {
        ti__fail(err, TI_ERR_INVALID_ARGUMENT, m->name, "allocator: set both alloc and free, or neither");
        return NULL;
    }
    char fallback[320] = "";
    if (d.backend != TI_BACKEND_CPU) {
#ifndef TI_NO_OPENCL
        ti__cl_probe(d.opencl_library, fallback, sizeof fallback);
#else
        snprintf(fallback, sizeof fallback, "OpenCL was compiled out (TI_NO_OPENCL)");
#endif
        if (d.backend == TI_BACKEND_OPENCL) { /* asked for explicitly: an error, not a fallback */
            ti__fail(err, TI_ERR_BACKEND, m->name, "backend OpenCL: %s", fallback);
            return NULL;
        }
    }
    if (d.num_dim_bindings < 0 || (d.num_dim_bindings > 0 && d.dim_bindings == NULL)) {
        ti__fail(err, TI_ERR_INVALID_ARGUMENT, m->name, "dim_bindings is NULL but num_dim_bindings is %d",
                 d.num_dim_bindings);
        return NULL;
    }
    ti_session *s = (ti_session *)ti__calloc(&d.allocator, sizeof *s);
    if (s == NULL) {
        ti__fail(err, TI_ERR_OUT_OF_MEMORY, m->name, "out of memory creating a session");
        return NULL;
    }
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
    if (ti__session_plan(s, err) != TI_OK) {
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
    ti__free(&al, s->t, sizeof(ti_tensor) * (size_t)s->cap_values);
    ti__free(&al, s->vi, sizeof(ti__vinfo) * (size_t)s->cap_values);
    ti__free(&al, s->input_ranks, sizeof(int) * (size_t)(m->n_inputs + 1));
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

TI_API ti_status ti_session_run(ti_session *s, ti_error *err) {
    ti__error_clear(err);
    if (s == NULL) return ti__fail(err, TI_ERR_INVALID_ARGUMENT, "<session>", "session is NULL");
    if (!s->planned)
        return ti__fail(err, TI_ERR_INVALID_ARGUMENT, s->m->name, "%s",
                        s->unplanned_reason[0] ? s->unplanned_reason : "session has no plan");
    for (int n = 0; n < s->n_nodes; n++) {
        ti_status st;
        if (n >= s->first_dynamic) {
            st = ti__session_run_dynamic(s, n, err);
        } else {
            ti__kctx k;
            ti__kctx_init(s, &k, n, err);
            st = s->ops[n]->run(&k);
        }
        if (st != TI_OK) return st;
    }
    return TI_OK;
}

TI_API ti_status ti_session_get_info(const ti_session *s, ti_session_info *out) {
    if (s == NULL || out == NULL) return TI_ERR_INVALID_ARGUMENT;
    *out = s->info;
    return TI_OK;
}

TI_API int ti_op_supported(const char *domain, const char *op) {
    return op != NULL && ti__op_find(domain ? domain : "", op) != NULL;
}

TI_API int ti_session_num_nodes(const ti_session *s) { return s && s->planned ? s->n_nodes : 0; }

TI_API ti_status ti_session_node_info(const ti_session *s, int i, ti_node_info *out) {
    static const char *const act_names[] = {"",         "Relu",        "Clip",      "LeakyRelu",
                                            "Sigmoid",  "HardSigmoid", "HardSwish", "Tanh",
                                            "SiLU"};
    if (s == NULL || out == NULL || !s->planned || i < 0 || i >= s->n_nodes)
        return TI_ERR_INVALID_ARGUMENT;
    const ti__node *n = &s->nodes[i];
    out->name = n->name;
    out->op = n->op;
    out->fused = (unsigned)n->act < TI__COUNTOF(act_names) ? act_names[n->act] : "";
    out->num_inputs = n->n_inputs;
    out->num_outputs = n->n_outputs;
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
/* ==== end src/core/session.c ================================================================ */

#endif /* TINYINFER_IMPLEMENTATION */

/*
------------------------------------------------------------------------------
tinyinfer is available under the MIT License:

    MIT License

    Copyright (c) 2026 the tinyinfer authors

    Permission is hereby granted, free of charge, to any person obtaining a copy
    of this software and associated documentation files (the "Software"), to deal
    in the Software without restriction, including without limitation the rights
    to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
    copies of the Software, and to permit persons to whom the Software is
    furnished to do so, subject to the following conditions:

    The above copyright notice and this permission notice shall be included in all
    copies or substantial portions of the Software.

    THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
    IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
    FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
    AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
    LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
    OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
    SOFTWARE.
------------------------------------------------------------------------------
*/
