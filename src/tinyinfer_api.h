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

/* Loads a model file (.onnx or .tflite; ONNX external data is read from files beside it,
 * paths confined to the model's directory). desc may be NULL. Returns NULL and fills err on
 * failure. The model is owned by the caller (ti_model_free) and is read-only after
 * loading: sessions on several threads may share it. The file is mapped read-only while it
 * is parsed (POSIX, Windows; TI_NO_MMAP reads it instead) and nothing of it is kept: it may
 * be replaced once this returns, but not cut short while it runs. */
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
    ti_backend backend;      /* 0: auto: OpenCL when a device is found, else the CPU    */
    int num_threads;         /* 0: number of online CPUs, at most 8; 1: no threads     */
    /* 0: fp32. TI_PRECISION_FP16 allows precision loss: on OpenCL, tensors on the device
     * are stored as halves (constants converted once), kernels compute in float, and
     * where the device reports cl_khr_fp16 the GEMM tiles are half too. Inputs, outputs
     * and nodes on the CPU stay float32. The CPU backend ignores it. */
    ti_precision precision;
    const ti_dim_binding *dim_bindings; /* symbolic dims; unbound ones default to 1    */
    int num_dim_bindings;
    int no_fusion;           /* 1: skip the fusion passes (for debugging)              */
    int no_constant_folding; /* 1: skip constant folding (for debugging)               */
    ti_allocator allocator;  /* 0: malloc/free                                         */
    const char *opencl_library; /* 0: $TINYINFER_OPENCL_LIBRARY, else the usual places   */
    /* OpenCL device: "gpu", "cpu", "accelerator", a number (the index among all devices
     * of all platforms, in platform order) or a part of "platform / device" name.
     * 0: $TINYINFER_OPENCL_DEVICE, else the first GPU, else the first device. */
    const char *opencl_device;
    /* Directory of the OpenCL program-binary cache (created if missing). 0:
     * $TINYINFER_OPENCL_CACHE; when neither is set, programs are built from source at
     * each session creation and nothing is written to disk. */
    const char *opencl_cache_dir;
    /* 1: with backend AUTO, build the OpenCL programs inside ti_session_create. 0: build
     * them on a background thread while the session serves runs on the CPU, switching
     * to the GPU at the first run after they are ready (backend OPENCL always builds
     * first). The background thread calls the session's allocator. */
    int opencl_build_first;
    /* 1: copy tensors between host and device memory even on a device that works in host
     * memory (phones' GPUs, CPU devices). 0: there, the device uses the session's memory
     * itself, and crossing between CPU and GPU nodes costs a map, not a copy. */
    int opencl_copy_io;
    /* 1: time every node of every run (ti_node_info.time_ms, the upload / kernel /
     * download split in ti_session_info). On OpenCL this turns on the queue's event
     * profiling, so kernel times are the device's own. Costs a little per node. */
    int profile;
    /* Per-node launch settings measured by tools/tinyinfer-tune ("tinyinfer-tuning 1"
     * text, see the tools' README): `tuning` is the text itself, else `tuning_file` a
     * path to it, else $TINYINFER_TUNING_FILE. A malformed file fails the session;
     * settings for nodes the plan lacks are ignored. 0: the library's own choices. */
    const char *tuning;
    const char *tuning_file;
    /* 1: no tensor's memory is reused within a run, so after it every node's outputs stay
     * readable (ti_session_node_output; on OpenCL made current on the host by
     * ti_session_check_precision). For debugging: the arena holds every tensor at once. */
    int keep_intermediates;
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

/* Starts a run and returns as soon as the work is queued, so the caller can do its own
 * work meanwhile; ti_session_wait finishes it. Between the two, inputs may be rewritten
 * (they are read before ti_session_run_async returns) but outputs are not ready. On the
 * OpenCL backend the GPU part runs on after the return (CPU nodes inside the plan run
 * before it); on the CPU backend the whole run happens inside ti_session_run_async. A
 * run or set_input_shape while a run is pending waits for it first. */
TI_API ti_status ti_session_run_async(ti_session *s, ti_error *err);
/* Waits for the pending run (none: returns TI_OK at once) and reports its errors. */
TI_API ti_status ti_session_wait(ti_session *s, ti_error *err);

/* Chains two models: at each run of s, input i of s takes the value output j of src had
 * after src's last run. When both sessions run on the same OpenCL device the tensor is
 * copied on the device and src no longer reads that output back to the host at the end
 * of its runs (ti_session_fetch_output does, on demand); otherwise it is copied in host
 * memory. dtype and shape must match. src must stay alive while linked; src = NULL
 * unlinks. Run src (and wait for it, when async) before s. */
TI_API ti_status ti_session_link_input(ti_session *s, int i, ti_session *src, int j, ti_error *err);
/* Makes output j's data current on the host (a no-op unless a link keeps it on the
 * device). */
TI_API ti_status ti_session_fetch_output(ti_session *s, int j, ti_error *err);

/* Binds input i (or output j) to the caller's memory, `bytes` long, instead of the
 * session's own buffer: ti_session_input(s, i)->data becomes data, runs read the input
 * from it (write the output into it) with no copy on the CPU backend and on OpenCL devices
 * that work in host memory (kernels use it in place: a buffer wraps it, so it is best
 * aligned as the device wants, e.g. 64 or 4096 bytes; where the driver will not wrap it
 * in place, it is copied each way); on an OpenCL device with its own memory the input is
 * uploaded straight from it and the output read straight into it. The memory must stay
 * valid while bound; an input's
 * must not change during a run (until ti_session_wait after an async one). bytes must
 * hold the tensor: checked at each run (after a shape change too), a run fails naming the
 * sizes otherwise. data NULL unbinds (back to the session's buffer, contents not kept).
 * Not for a linked input (ti_session_link_input). */
TI_API ti_status ti_session_bind_input(ti_session *s, int i, void *data, size_t bytes, ti_error *err);
TI_API ti_status ti_session_bind_output(ti_session *s, int j, void *data, size_t bytes, ti_error *err);

typedef struct ti_session_info {
    ti_backend backend;           /* the backend that runs                           */
    const char *fallback_reason;  /* why not the requested backend; "" when none     */
    int num_threads;
    int num_nodes;                /* nodes left after folding, fusion, dead-node removal */
    int num_fused;                /* nodes removed by fusion                         */
    int num_folded;               /* nodes computed at creation (constant folding)   */
    size_t arena_bytes;           /* activation memory                              */
    int dynamic;                  /* 1 when shapes are re-inferred at each run      */
    /* OpenCL (backend TI_BACKEND_OPENCL): the device, nodes on it and on the CPU, and
     * what the last session creation cost in program builds. */
    const char *device;           /* "platform / device", "" on the CPU            */
    int num_gpu_nodes, num_cpu_nodes;
    int programs_built;           /* compiled from source at creation               */
    int programs_cached;          /* loaded from the binary cache                   */
    double build_ms;              /* time spent building or loading programs        */
    size_t transfer_bytes;        /* bytes copied between host and device, last run */
    int zero_copy;                /* 1: the device uses the session's memory (no copies) */
    double opencl_ready_ms;       /* from session creation to the OpenCL plan ready   */
    int cpu_runs_before_gpu;      /* runs served on the CPU while programs were built */
    int launch_retries;           /* kernel launches whose work-group size the driver
                                   * refused and that were retried smaller (or with
                                   * none), since the session was created            */
    double run_ms;                /* wall time of the last ti_session_run (or of
                                   * run_async + wait)                                */
    /* With desc.profile, the last run's time on the device: host-to-device copies,
     * kernels, device-to-host copies (OpenCL event times; 0 on the CPU backend), and
     * the time of the nodes that ran on the CPU. */
    double upload_ms, kernel_ms, download_ms, cpu_ms;
    /* How the backend stores its tensors: TI_PRECISION_FP16 when an OpenCL plan keeps
     * them as halves (desc.precision FP16), else TI_PRECISION_FP32; fp16_arithmetic 1
     * when it also computes in half (the device has cl_khr_fp16). */
    ti_precision precision;
    int fp16_arithmetic;
} ti_session_info;
TI_API ti_status ti_session_get_info(const ti_session *s, ti_session_info *out);

/* The planned graph, after folding and fusion, for tools and profilers. Node i runs i-th.
 * Tensors returned are owned by the session; shapes are those of the last plan or run. */
typedef struct ti_node_info {
    const char *name;
    const char *op;    /* "Conv" */
    const char *fused; /* activation folded into it ("Relu", "Clip", ...), "" when none;
                        * "+MaxPool" after it (or "MaxPool") where a MaxPool was fused after
                        * a Conv, whose output is then the pool's; "+DepthwiseConv" (then
                        * that conv's activation: "Clip+DepthwiseConv+Clip") where a
                        * depthwise Conv was fused after a 1x1 Conv, whose output is then
                        * the depthwise conv's (its taps and bias: inputs 5 and 6) */
    int num_inputs;
    int num_outputs;
    ti_backend backend; /* where it runs: TI_BACKEND_CPU or TI_BACKEND_OPENCL         */
    const char *placement; /* why there: "" on the backend asked for, else the reason  */
    /* With desc.profile, the last run: the node's time (CPU wall time, or its kernels'
     * time on the OpenCL device; -1 without profile) and the bytes copied across the
     * CPU/GPU boundary so that it could run (its inputs, made current where it runs). */
    double time_ms;
    size_t bytes_in;
    /* Tuning (OpenCL nodes; "" elsewhere): the candidate settings a tuning file may give
     * this node, separated by '|', the library's default first ("wg=auto|wg=32|...");
     * the setting a tuning file gave it ("" when none); and its kernel launches whose
     * local size the device refused (retried smaller) since the session was created. */
    const char *tunables;
    const char *tuning;
    int launch_retries;
} ti_node_info;
/* Writes the last profiled run as Chrome trace-event JSON (opens in Perfetto or
 * chrome://tracing): one event per node, placed on a CPU or a GPU track. Needs
 * desc.profile; returns TI_ERR_IO naming the path when the file cannot be written. */
TI_API ti_status ti_session_write_trace(const ti_session *s, const char *path, ti_error *err);
TI_API int ti_session_num_nodes(const ti_session *s);
TI_API ti_status ti_session_node_info(const ti_session *s, int i, ti_node_info *out);
/* Input/output j of planned node i; NULL when absent or out of range. */
TI_API const ti_tensor *ti_session_node_input(const ti_session *s, int i, int j);
TI_API const ti_tensor *ti_session_node_output(const ti_session *s, int i, int j);

/* Precision check: how far the backend s runs on (an OpenCL GPU, in the precision its
 * desc allows) is from the CPU in fp32, on s's current inputs, per model output and per
 * node output. Makes two temporary sessions of s's model (s's desc with
 * keep_intermediates: one on s's backend, one on the CPU), runs both once, compares every
 * tensor both computed. Rows: the model outputs first (node -1), then each node's outputs
 * in plan order. max_rel is max |a - b| / max |b| (b: the CPU's; 0 when b is all 0 and a
 * equals it). Writes at most max_rows rows (rows may be NULL) and returns how many there
 * are, or -1 with err. Names point into the model. s itself is not run or changed. */
typedef struct ti_precision_row {
    const char *name;   /* the tensor (model value) name                        */
    int node;           /* index of the node that computes it; -1: a model output */
    ti_backend backend; /* where that node ran in the checked session          */
    size_t count;       /* elements compared                                     */
    double max_abs, max_rel;
} ti_precision_row;
TI_API int ti_session_check_precision(ti_session *s, ti_precision_row *rows, int max_rows, ti_error *err);

#ifdef __cplusplus
}
#endif

#endif /* TINYINFER_H */
