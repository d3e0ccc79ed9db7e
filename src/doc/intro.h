/*
    tinyinfer 0.1.0 - neural-network inference in one C99 header

    tinyinfer loads an .onnx model and runs it on the CPU. It is a single header with no
    dependency beyond libc, libm and (unless TI_NO_THREADS) the system's threads: pthreads,
    or Windows' own (kernel32, no pthreads library there): copy tinyinfer.h
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
    -pthread (on Windows with nothing more: the C runtime and kernel32). The
    implementation has its own guard, apart from the header guard, so the header may be
    included again after the implementation.

    Configuration macros (define them before the #include that has the implementation;
    the API-shaping ones, TI_STATIC, TI_API and TI_MAX_DIMS, before every #include):

        macro                 default          effect
        TI_NO_THREADS         (undefined)      no thread pool, no threads started: one thread
        TI_NO_STDIO           (undefined)      no file access: ti_model_load_file is left out
        TI_NO_MMAP            (undefined)      ti_model_load_file reads the file into a buffer
                                               instead of mapping it (POSIX and Windows)
        TI_NO_ONNX            (undefined)      no ONNX reader: .onnx files get TI_ERR_UNSUPPORTED
        TI_NO_SIMD            (undefined)      portable scalar kernels only: no AVX2/AVX-512
                                               paths and no cpuid (the environment variable
                                               TINYINFER_ISA=scalar|avx2|avx512|avx512vnni|amx
                                               caps the ISA at run time instead)
        TI_NO_AMX             (undefined)      no AMX tile kernels, and no request for the
                                               tile state (Linux arch_prctl), which also
                                               makes the kernel refuse alternate signal
                                               stacks smaller than the larger signal frame;
                                               TINYINFER_ISA set below amx skips it too
        TI_MALLOC(sz)/TI_FREE(p)  malloc/free  default allocator underneath; both or neither
        TI_NO_HUGE_PAGES      (undefined)      no transparent-huge-page advice (Linux): by
                                               default blocks of 2 MiB and more from malloc
                                               are 2 MiB aligned and advised MADV_HUGEPAGE
                                               (not where a huge page is slow to fault in)
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
    fuses activations into Conv/Gemm/MatMul (and, on the CPU, a residual Add into the
    Conv before it, a MaxPool into a network's few-channel stem Conv and a depthwise
    Conv into a 1x1 Conv with a large output before it), and plans one memory arena.
    Then:

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
    TI_BACKEND_CPU or TI_BACKEND_OPENCL. OpenCL is loaded at run time (dlopen of the
    vendor's libOpenCL; desc->opencl_library or $TINYINFER_OPENCL_LIBRARY name the file):
    nothing is linked at build time. AUTO uses an OpenCL GPU when there is one and the
    CPU otherwise (PoCL's CPU device is slower than the CPU backend, so AUTO does not pick
    a non-GPU device unless desc->opencl_device names one); it says why in
    ti_session_info.fallback_reason, reported to desc->log at TI_LOG_INFO. OPENCL takes
    any device and fails with TI_ERR_BACKEND when none can be used.
    On OpenCL every node is placed on the device or the CPU: float32 Conv, Gemm, MatMul,
    elementwise ops, pooling, Softmax, LayerNormalization, BatchNormalization, Concat,
    Split, Transpose and reshapes run on the device, anything else (and nodes whose
    shapes are known only at run time) on the CPU in the same session; data crosses only
    where a CPU node and a GPU node meet. ti_session_node_info says where each node runs
    and why; ti_session_info counts the nodes, the bytes moved in the last run, the
    programs built or loaded and the work-group sizes the driver refused (retried with
    smaller ones, then none, then the node moves to the CPU: never an error for the user).
    Programs are built at session creation, only those the plan needs; with
    desc->opencl_cache_dir (or $TINYINFER_OPENCL_CACHE) their binaries are kept on disk,
    keyed by device, driver, options and source, checked when read, written atomically
    and capped at TI_CL_CACHE_MAX_BYTES; tools/tinyinfer-cache fills it ahead of time.
    ti_session_run_async queues a run and returns; ti_session_wait finishes it.
    The one piece of process-wide state: an OpenCL context per device, made by the first
    session on it and kept for the life of the process (as the library stays loaded),
    since making one costs over 100 ms on some drivers. Sessions share it safely.

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
    reused between tensors whose lifetimes do not overlap; the inputs of a Concat along
    its outermost non-unit dim are placed inside its output, which then copies nothing),
    packed weights, scratch buffers. ti_session_run allocates nothing when every shape is known at creation;
    graphs whose shapes depend on input values (ti_session_info.dynamic) plan again as
    needed. Every size computed from file data is overflow-checked and compared with the
    caps before anything is allocated.

    7. Threading
    ------------
    A session has its own thread pool of desc->num_threads threads (0: the number of
    online CPUs, at most 8; 1: no threads are started). Heavy kernels (convolution,
    matrix products, pooling) split their outer loops across it; the caller's thread
    works too. Sessions never share mutable state (the OpenCL context they share per
    device is thread-safe), so different sessions may run at the same time on different
    threads. With backend AUTO a session builds its OpenCL programs on one more thread
    for a while (section 4). With TI_NO_THREADS every session runs on the calling
    thread. The process-wide values (the detected instruction set, the table of OpenCL
    contexts) are set race-free (atomics, a lock) also with TI_NO_THREADS, so the
    application's own threads may each run sessions of one shared model. On Windows the
    pool's threads are the system's own (_beginthreadex, slim reader/writer locks,
    condition variables: Windows Vista or later).
*/
