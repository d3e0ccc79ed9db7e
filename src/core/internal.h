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

#include "../tinyinfer_api.h"
#include "config.h"

#define TI__MIN(a, b) ((a) < (b) ? (a) : (b))
#define TI__MAX(a, b) ((a) > (b) ? (a) : (b))
#define TI__COUNTOF(a) (sizeof(a) / sizeof((a)[0]))

/* ---- allocation (core/alloc.c) ------------------------------------------------------ */
/* All memory goes through an allocator: the user's hooks or TI_MALLOC/TI_FREE. Blocks are
 * 64-byte aligned. ti__free takes the size that was asked for (the user hook needs it). */
TI__PRIVATE void *ti__malloc(const ti_allocator *a, size_t size);
TI__PRIVATE void *ti__malloc_brief(const ti_allocator *a, size_t size); /* never huge pages */
TI__PRIVATE void *ti__calloc(const ti_allocator *a, size_t size);
TI__PRIVATE void ti__free(const ti_allocator *a, void *p, size_t size);
/* Grows an array of elem_bytes elements to hold at least need; returns 0 on failure. */
TI__PRIVATE int ti__grow(const ti_allocator *a, void **arr, int *cap, int need, size_t elem_bytes);
TI__PRIVATE int ti__allocator_valid(const ti_allocator *a);

/* A pool: many small allocations that live as long as their owner, freed together. */
typedef struct ti__pool_block ti__pool_block;
typedef struct ti__pool {
    ti_allocator al;
    ti__pool_block *head;  /* small requests' blocks, the one in use first */
    ti__pool_block *slabs; /* big requests' slabs (core/alloc.c) */
    size_t mid_bytes;      /* requests past a block's quarter and below 2 MiB, so far */
    size_t used_bytes;     /* all blocks together, for resource caps */
} ti__pool;
TI__PRIVATE void *ti__pool_alloc(ti__pool *p, size_t size); /* zeroed, 16-aligned; NULL on OOM */
TI__PRIVATE void *ti__pool_alloc_raw(ti__pool *p, size_t size); /* the same, not zeroed */
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
    __attribute__((format(TI__PRINTF_FORMAT, 4, 5)))
#endif
    ;
/* Formats "<file>: node '<node>' (<op>): <reason>". */
TI__PRIVATE ti_status ti__fail_node(ti_error *err, ti_status code, const char *file, int node_index,
                                    const char *node, const char *op, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(TI__PRINTF_FORMAT, 7, 8)))
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

/* The op an activation came from ("" for none): ti_node_info.fused's words. */
TI__PRIVATE const char *ti__act_name(int act) {
    static const char *const names[] = {"",        "Relu",        "Clip",      "LeakyRelu",
                                        "Sigmoid", "HardSigmoid", "HardSwish", "Tanh",
                                        "SiLU"};
    return act >= 0 && act < (int)(sizeof names / sizeof names[0]) ? names[act] : "";
}

TI__PRIVATE float ti__act_apply(int act, float a, float b, float x) {
    switch (act) {
    case TI__ACT_RELU: return x > 0.0f ? x : 0.0f;
    case TI__ACT_CLIP: return x < a ? a : (x > b ? b : x);
    case TI__ACT_LEAKY_RELU: return x >= 0.0f ? x : a * x;
    case TI__ACT_SIGMOID: return 1.0f / (1.0f + expf(-x));
    case TI__ACT_HARD_SIGMOID: { /* a statement an operation: each rounds to float, also */
        float y = a * x;            /* where float math runs wider (x87, FLT_EVAL_METHOD 2) */
        y = y + b;
        return y < 0.0f ? 0.0f : (y > 1.0f ? 1.0f : y);
    }
    case TI__ACT_HARD_SWISH: {
        const float sixth = 1.0f / 6.0f; /* ONNX: alpha x + beta, alpha = 1/6; held in a */
        float y = x * sixth;               /* float: a constant 1/6 is wider on x87 too */
        y = y + 0.5f;
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
    /* Weights re-laid out once at planning for the CPU kernel that will run the node (the
     * plan's copy of a node only; NULL in the model): packed_kind says which layout
     * (TI__PACK_*), packed_bytes its size. Set by ti__pass_prepack, read by the kernel,
     * which checks kind and size and otherwise takes a path that needs no packing. */
    int packed_kind;
    const void *packed;
    size_t packed_bytes;
    int packed_arg; /* a parameter of the layout: TI__PACK_BPANEL's panel width,
                       TI__PACK_APANEL's sliver height,
                       TI__PACK_WINO43's sliver height and k block */
    int bands_ok; /* Conv: every consumer of its output is a Conv, so the depthwise row path
                     may cut the map into one band of rows a thread (ti__pass_bands,
                     cpu/conv_fast.c's ti__conv_dw_bands) */
    /* Conv: a 2-D MaxPool fused after it (ti__fuse_conv_pool): the window, strides and
     * pads (begin, end) along H and W as the pool's attributes gave them; pool_k[0] 0: none.
     * The node's output is then the pool's (cpu/conv_fast.c, ti__conv_pool_run). */
    int pool_k[2], pool_s[2], pool_pb[2], pool_pe[2];
    /* Conv 1x1: the depthwise conv after it, fused in (ti__fuse_pw_dw): its taps and bias are
     * inputs 5 and 6 (6 is -1 without one), its square kernel, stride, top and left pads
     * and activation these; dw_k 0: none. The node's output is then the depthwise conv's
     * (cpu/conv_fast.c, ti__conv_pwdw_run). */
    int dw_k, dw_s, dw_pt, dw_pl, dw_act;
    float dw_act_a, dw_act_b;
    /* Conv (the plan's copy, CPU, a constant weight): its attributes decoded and checked at
     * planning (cpu/conv.c, ti__conv_decode) for conv_nd spatial axes; conv_nd 0: the run
     * reads them by name */
    int conv_nd, conv_mode; /* conv_mode: auto_pad, 0 NOTSET 1 SAME_UPPER 2 SAME_LOWER 3 VALID */
    int64_t conv_group, conv_st[3], conv_dl[3], conv_pads[6];
    /* What a fusion folded in, where the activation's name does not say it all
     * (ti_node_info.fused, ti__fused_name: a MaxPool or depthwise conv fused after it; in
     * the plan's pool), or NULL */
    const char *fused_name;
} ti__node;
enum {
    TI__PACK_NONE = 0,
    TI__PACK_WINO43 = 1, /* Conv: Winograd F(4x4,3x3) U, 36 x M x C in the GEMM kernel's
                            slivers and k blocks, packed_arg = kc * 64 + mr (cpu/conv_fast.c,
                            ti__wino_pack) */
    TI__PACK_QGEMM = 2,  /* 8-bit conv / matrix kernels: a ti__qpack (core/qgemm.c) */
    TI__PACK_ATRANS = 3, /* float32 Conv by GEMM: each group's weights transposed, K x ld
                            floats (ld >= M / group, chosen so the rows are free of L1 set
                            conflicts); packed_bytes = group * K * ld * 4 */
    TI__PACK_BPANEL = 4  /* float32 Conv by a transposed GEMM (Y^T = X^T W^T): each group's
                            W^T as the SIMD GEMM's B panel (ti__sgemm_pack_bpanel), panel
                            width packed_arg; packed_bytes = group * K * roundup(M/group,
                            packed_arg) * 4 */,
    TI__PACK_WINO23 = 5, /* Conv: Winograd F(2x2,3x3) U, 16 x M x C, laid out as
                            TI__PACK_WINO43's */
    TI__PACK_APANEL = 6, /* float32 Conv by GEMM: each group's weights as the SIMD GEMM's A
                            panel (ti__sgemm_pack_apanel), packed_arg rows a sliver;
                            packed_bytes = group * roundup(M/group, packed_arg) * K * 4 */
    TI__PACK_TFL_ADD = 7, /* TFLite 8-bit ADD: its job as ti__tfl_bin_setup leaves it (the
                             byte tables and VBMI planes), packed_bytes = its size
                             (cpu/tfl_elementwise.c, ti__tfl_add_prepack) */
    TI__PACK_FEWC = 8 /* float32 Conv by the few-channel kernel: W as [block][tap][16], the
                         output channels in blocks of 16 (the last padded with zeros);
                         packed_bytes = roundup(M, 16) * C * KH * KW * 4 (cpu/conv_fast.c,
                         ti__conv_fewc_pack) */
};

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
/* The product of rank dims into *numel, checked: 0 when a dim is negative or does not fit
 * size_t, or the product overflows (ti__shape_numel trusts its dims). */
TI__PRIVATE int ti__dims_numel(int rank, const int64_t *dims, size_t *numel);
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
/* As ti__parallel_for, fn also told which participant runs the sub-range: 0 the caller,
 * 1 .. ti__threadpool_size(tp) - 1 the workers; no two run at once with the same number,
 * so each may use its own part of a workspace. */
typedef void (*ti__range_part_fn)(void *ctx, int part, size_t begin, size_t end);
TI__PRIVATE void ti__parallel_for_part(ti__threadpool *tp, size_t n, size_t grain,
                                       ti__range_part_fn fn, void *ctx);
TI__PRIVATE int ti__cpu_count(void);

/* ---- instruction sets (cpu/isa.c, cpu/x86/cpuid.c) ---------------------------------- */
/* Ordered: a higher value can run every kernel of a lower one. AVX512VNNI: AVX-512 F, BW,
 * VL and VNNI (VPDPBUSD), used by the 8-bit GEMM; the float kernels treat it as AVX512.
 * AMX: AVX512VNNI plus the tile registers (AMX-TILE, AMX-INT8) that the OS lets this process
 * use: the 8-bit GEMM's tile path; every other kernel treats it as AVX512VNNI. On aarch64 the same levels name the NEON kernels: 1 NEON (Advanced SIMD, every aarch64
 * CPU), 2 NEON with the dot-product instructions (SDOT), used by the 8-bit GEMM; the float
 * kernels treat it as NEON. Only one family is compiled in (TI__X86_SIMD or TI__ARM_NEON). */
enum { TI__ISA_SCALAR = 0, TI__ISA_AVX2 = 1, TI__ISA_AVX512 = 2, TI__ISA_AVX512VNNI = 3 };
enum { TI__ISA_AMX = 4 };
enum { TI__ISA_NEON = 1, TI__ISA_NEONDOT = 2, TI__ISA_LAST = 4 /* the highest level */ };
TI__PRIVATE int ti__cpu_isa_best(void);      /* what this CPU and OS can run */
TI__PRIVATE int ti__cpu_isa(void);           /* what the kernels use now */
TI__PRIVATE int ti__cpu_force_isa(int isa);  /* test hook; returns the ISA in effect */
TI__PRIVATE const char *ti__cpu_isa_name(int isa);
#ifdef TI__X86_SIMD
TI__PRIVATE int ti__x86_detect(void); /* best TI__ISA_* by cpuid and XGETBV */
TI__PRIVATE int ti__x86_vbmi(void);   /* cpuid's AVX512-VBMI bit */
#ifdef TI__X86_AMX
TI__PRIVATE int ti__x86_amx(unsigned leaf7_edx); /* AMX-TILE/INT8, granted to the process */
#endif
#endif
#if defined(TI__X86_SIMD) && defined(TI__X86_VNNI)
TI__PRIVATE int ti__cpu_vbmi(void); /* AVX512-VBMI usable under the ISA in effect */
#endif
#ifdef TI__ARM_NEON
TI__PRIVATE int ti__arm_detect(void); /* best TI__ISA_* by the OS's feature flags */
#endif

/* A float32 GEMM micro-kernel: C[0:mr, 0:nc] = alpha * A * B + beta * C. A (mr x kc) is read
 * where it lies: element (r, p) at a[r * lda + p] when a_rows (A not transposed), else at
 * a[p * lda + r]. B (kc x nr) is packed: element (p, j) at b[p * nr + j], zero past nc. C is
 * row-major with row stride ldc. beta == 0 never reads C. mr is 1..the kernel's largest, nc
 * 1..nr. epi (NULL: none) is applied before the store, as ti__act_block would apply it
 * after, bit for bit: its bias (NULL: none) starts at the tile's first row, and its act is
 * one ti__sgemm_kernel_epi takes (>= 0). pf: a hint, the first pf_lines (<= kc) 64-byte
 * lines from pf are asked into L2, one per k step, while the kernel multiplies (the panel
 * the caller reads next, from memory: asked for all at once, the requests filled the line
 * buffers and stalled the loads; spread, they arrive while the FMAs run). */
struct ti__gemm_epi;
typedef void (*ti__sgemm_kernel_fn)(size_t kc, const float *a, size_t lda, int a_rows,
                                    const float *b, float *c, size_t ldc, int mr, int nc,
                                    float alpha, float beta, const struct ti__gemm_epi *epi,
                                    const float *pf, size_t pf_lines);
/* Packs B[0:kc, 0:w] (row-major, row stride ldb) as kc rows of nr floats, zero past w. */
typedef void (*ti__sgemm_pack_b_fn)(size_t kc, size_t w, const float *b, size_t ldb, float *dst);
/* The kernel's contract with B read where it lies: rows of B ldb floats apart, nc == nr
 * columns all present (nothing is read past them). */
typedef void (*ti__sgemm_kernel_ldb_fn)(size_t kc, const float *a, size_t lda, int a_rows,
                                        const float *b, size_t ldb, float *c, size_t ldc, int mr,
                                        int nc, float alpha, float beta,
                                        const struct ti__gemm_epi *epi);
/* One column of C: c[r * ldc] = alpha * sum_p op(A)[r, p] * b[p * ldb] + beta * c[r * ldc]
 * for r < m (beta == 0 never reads C). */
typedef void (*ti__sgemm_col_fn)(int trans_a, size_t m, size_t k, const float *a, size_t lda,
                                 const float *b, size_t ldb, float *c, size_t ldc, float alpha,
                                 float beta);
typedef struct ti__sgemm_isa {
    int isa;
    int mr, nr;   /* largest register tile: mr rows x nr columns of C */
    int kc;       /* k block: kc x nr packed floats of B stay in L1 */
    int mc;       /* rows of A per block: mc x kc floats of A stay in L2 */
    ti__sgemm_kernel_fn kernel;
    ti__sgemm_pack_b_fn pack_b; /* for B not transposed */
    float (*dot)(const float *a, const float *b, size_t k); /* sum of k products */
    /* optional (NULL: not used): B read in place when M is a couple of row slivers, and
     * the last column on its own when N % 16 == 1 (the 7 x 7 layers' N = 49) */
    ti__sgemm_kernel_ldb_fn kernel_ldb;
    ti__sgemm_col_fn col;
    /* optional (NULL: a scalar loop, then ti__act_block): C[0:h, 0:w] (rows ldc apart)
     * stored transposed, t[q * ldt + r] = epi(c[r * ldc + q]), or epi(c[r * ldc + q] +
     * t[q * ldt + r]) when sum (a residual sum fused into the conv), for any h and w (the
     * transposed GEMM's Y), the epilogue ep (0 none, else ti__sgemm_kernel_epi's) with
     * bias[q] (bias NULL: 0) and lo, hi; c2 (NULL: none), as c, is added to c first,
     * c2[r * ldc + q] + c[r * ldc + q] (another part of K's sums, cpu/conv.c) */
    void (*store_t)(const float *c, const float *c2, size_t ldc, size_t h, size_t w, float *t,
                    size_t ldt, int sum, int ep, const float *bias, float lo, float hi);
    /* optional (NULL: a scalar loop): op(A)[0:h, 0:kc] packed as dst[p * h + r] for h <= mr,
     * element (r, p) at a[r * lda + p], or at a[p * lda + r] when trans_a */
    void (*pack_a)(const float *a, size_t lda, int trans_a, size_t h, size_t kc, float *dst);
    /* optional (NULL: kernel): kernel for slivers that come from L2 at every call (a
     * workspace's long k blocks: B's sliver 64 KiB at kc 512), asking for them ahead */
    ti__sgemm_kernel_fn kernel_l2;
    /* optional (NULL: kernel, a call a sliver): kernel on `slivers` whole slivers of B, sliver
     * g at b + g * bstep, into C's columns g * nr .., in one call (no prefetch lines) */
    void (*kernel_run)(size_t kc, const float *a, size_t lda, int a_rows, const float *b,
                       size_t bstep, int slivers, float *c, size_t ldc, int mr, float alpha,
                       float beta, const struct ti__gemm_epi *epi);
    /* 1 where kernel computes a sliver of one column (nc == 1) as a column, in a fraction of
     * a whole sliver's time (AVX2: ti__k256_col1): ti__sgemm_split_cols counts it as none */
    int col1_cheap;
    /* products per output (K) from which a conv's weights are packed as A panels of mr rows
     * at planning (cpu/conv_fast.c ti__conv_apanel_ok, where the values are measured) */
    int apanel_min_k;
    /* optional (NULL: the kernel's sliver): C's last w columns (2 <= w <= 12, past whole
     * vectors of 16) for one k block, with the rows as vector lanes: rows in groups of gl
     * (at most 16), element (r, p) of op(A) at a[(r / gl) * gstep + p * astep + r % gl]
     * (a transposed A, or A's panel of mr-row slivers); B's rows ldb apart; C[r][q] =
     * alpha * sum + beta * C[r][q], each sum a chain of FMAs over p as the kernel's, so
     * the same bits as the kernel's sliver; beta == 0 does not read C */
    void (*cols)(const float *a, size_t astep, size_t gstep, int gl, size_t m, size_t kc,
                 const float *b, size_t ldb, int w, float *c, size_t ldc, float alpha,
                 float beta);
} ti__sgemm_isa;
/* Depthwise convolution, one output row of one channel plane: for i in [0, n),
 *   y[i] = bias + sum over r < nr, q < K of w[r][q] * x[r][i * stride + q],
 * then, when clamp, y[i] = min(max(y[i], lo), hi) (ReLU: lo 0, hi +inf; Clip). Every x[r]
 * element read is inside the row: the caller handles padding at the row's ends. One
 * function per (K, stride): row[K == 5][stride == 2], for K 3 or 5 and stride 1 or 2. */
typedef void (*ti__dw_row_fn)(float *y, size_t n, const float *const *x, const float *const *w,
                              int nr, float bias, int clamp, float lo, float hi);
/* Max pooling, one output row segment: for i in [0, n), y[i] is the running maximum over
 * r < nr, q < K of x[r][i * S + q] in that order, starting from the first tap and taking a
 * value only when it is greater (NaN never replaces, a NaN first tap stays): MaxPool's
 * scalar rule, bit for bit. Every x[r] element read is inside the row. maxrow[S == 2]. */
typedef void (*ti__maxpool_row_fn)(float *y, size_t n, const float *const *x, int nr, int K);
/* Max pooling, 3 x 3 windows at stride 2 over whole rows of windows: for r < rows, i < n,
 *   y[r * ldy + i] = the running maximum over t < 3, q < 3 of x[(2 r + t) * ldx + 2 i + q]
 * in that order, by ti__maxpool_row_fn's rule. Reads x at columns 0 .. 2 n of those rows,
 * and may read past a row's column 2 n into the rows below it (whole vectors), never past
 * column 2 n of the last row read, 2 rows. NULL where an ISA has none. */
typedef void (*ti__maxpool_k3s2_fn)(float *y, size_t ldy, size_t n, const float *x, size_t ldx,
                                    size_t rows);
/* Depthwise convolution over a padded plane laid out flat (cpu/conv_fast.c): for i in
 * [0, n), n a multiple of 16,
 *   y[i] = bias + sum over t < taps of w[t] * x[t][i]   (in that order of t),
 * then the clamp as ti__dw_row_fn. Every x[t][i] and y[i] with i < n is inside the caller's
 * buffer; the kernel reads and writes nothing else. */
typedef void (*ti__dw_taps_fn)(float *y, size_t n, const float *const *x, const float *w,
                               int taps, float bias, int clamp, float lo, float hi);
/* The flat path's row copies, rows r < rows of n floats each: copy d[r ld + i] =
 * s[r ls + i]; split (stride 2's phase planes) s[r ls + i] to
 * d[2 (r & 1) + (i & 1)][(r >> 1) ld + i / 2]. Neither touches anything else: short rows
 * take overlapping vectors, not masks (slow on AMD Zen 2) nor calls. */
typedef void (*ti__dw_copy_fn)(float *d, size_t ld, const float *s, size_t ls, size_t rows,
                               size_t n);
typedef void (*ti__dw_split_fn)(float *const *d, size_t ld, const float *s, size_t ls,
                                size_t rows, size_t n);
/* Max pooling over a flat padded plane (cpu/pool.c): for i in [0, n), n a multiple of 16,
 * y[i] = x[0][i], then for t = 1 .. taps-1 y[i] = x[t][i] if x[t][i] > y[i] (MaxPool's
 * scalar rule: NaN never replaces). Reads and writes as ti__dw_taps_fn. */
typedef void (*ti__dw_max_fn)(float *y, size_t n, const float *const *x, int taps);
/* The float sum of x[0 .. n) (GlobalAveragePool, ReduceMean / ReduceSum), in some order of
 * float adds: rounding differs between ISAs, not the value to within float error. */
typedef float (*ti__dw_sum_fn)(const float *x, size_t n);
/* Depthwise convolution of a small unpadded plane (cpu/conv_fast.c, the small-plane path):
 * for i in [0, n), with m = mask[(i / 16) * taps + t] (a bit per lane of 16 outputs),
 *   y[i] = bias + sum over t < taps of w[t] * (bit i % 16 of m ? x[i + off[t]] : 0)
 * in that order of t, then the clamp as ti__dw_row_fn. Reads only the x[i + off[t]] whose
 * bit is set, writes only y[0 .. n); x + 16 v + off[t] + 15 stays inside the caller's
 * buffer for every vector v < ceil(n / 16). NULL where an ISA has no masked loads. */
typedef void (*ti__dw_small_fn)(float *y, size_t n, const float *x, const int32_t *off,
                                const uint16_t *mask, const float *w, int taps, float bias,
                                int clamp, float lo, float hi);
/* A small depthwise conv, a plane in each lane of a vector (16 planes at once on AVX-512, 8
 * on AVX2: the ISA's lane_planes; cpu/conv_fast.c, the lane path). The geometry: H x W ->
 * OH x OW, K x K taps, stride S, pads pt (top) and pl (left), the right and bottom ones what
 * is left of the Hp = (OH - 1) S + K rows and Wp = (OW - 1) S + K columns the taps reach;
 * planes in_sp and out_sp floats apart. */
typedef struct ti__dw_lane_geo {
    int64_t H, W, OH, OW, pt, pl, Hp, Wp;
    size_t in_sp, out_sp;
    int K, S;
} ti__dw_lane_geo;
/* Floats of the lane path's padded input (Hp x Wp positions of L floats, then the 8 S
 * positions the last row's last 8 outputs read past it) and of its outputs (OH x OW of L):
 * with the ISA's lane_out_max, the bounds of the maps it takes (ti__conv_dw_lanes_ok). */
#define TI__DWL_IN_FLOATS 5120 /* 20 KiB: 14 x 14 -> 7 x 7 at 5x5 / 2 takes 4864 on AVX-512 */
#define TI__DWL_OUT_FLOATS 2048 /* 8 KiB: 14 x 14 outputs on AVX2 take 1568 */
/* For planes c < L, the ISA's lane_planes (x + c in_sp, y + c out_sp, taps w[c K K ..],
 * bias[c] or 0 when bias is NULL): y = bias + sum of the taps in ti__dw_rows_fn's order, then
 * the clamp as ti__dw_row_fn. buf: TI__DWL_IN_FLOATS + TI__DWL_OUT_FLOATS + 16 K K floats,
 * 64-byte aligned. Reads only the L planes' H x W inputs, writes only their OH x OW outputs.
 * NULL where an ISA has none. */
typedef void (*ti__dw_lanes_fn)(const ti__dw_lane_geo *g, float *y, const float *x,
                                const float *w, const float *bias, int clamp, float lo,
                                float hi, float *buf);
/* The lane kernels' padding: every position of the Hp x Wp buffer in (L floats each) outside
 * the map, and the 8 S positions after the last, set to zero (cpu/conv_fast.c). */
TI__PRIVATE void ti__dwl_zero_pad(const ti__dw_lane_geo *g, float *in, size_t L);
/* A lane kernel's dispatch on g's K (3 or 5) and S (1 or 2) and its outputs a pass NA (7 for
 * rows of 7, else 8): CALL(k, s, na) with all three constants (cpu/x86/conv_avx*.c). */
#define TI__DWL_KS(CALL, na)                                                                 \
    do {                                                                                     \
        if (g->K == 5 && g->S == 1) CALL(5, 1, na);                                          \
        else if (g->K == 5) CALL(5, 2, na);                                                  \
        else if (g->S == 1) CALL(3, 1, na);                                                  \
        else CALL(3, 2, na);                                                                 \
    } while (0)
#define TI__DWL_DISPATCH(CALL)                                                               \
    do {                                                                                     \
        if (g->OW == 7) TI__DWL_KS(CALL, 7);                                                 \
        else TI__DWL_KS(CALL, 8);                                                            \
    } while (0)
/* A conv with few products per output (cpu/conv_fast.c, the few-channel path): for m < mv
 * (<= 16) and r < np (<= the ISA's fewc_np),
 *   y[m * ldy + r] = bias[m] + sum over t < taps of w[t * 16 + m] * x[off[t] + r * S]
 * in that order of t, then, clamp 1: the clamp as ti__dw_row_fn; clamp 2: HardSwish (lo, hi
 * unused) with ti__act_block's operations in its order, so the same bits as that pass after
 * the kernel. Reads x[off[t] .. off[t] + V S),
 * V = np rounded up to 16 (the whole vectors, past r = np too), w[0 .. 16 taps),
 * bias[0 .. 16); writes only those y. fewc[S == 2]; NULL where an ISA has none. */
typedef void (*ti__conv_fewc_fn)(float *y, size_t ldy, int mv, int np, const float *x,
                                 const int32_t *off, int taps, const float *w,
                                 const float *bias, int clamp, float lo, float hi);
/* Output rows of a K x K stride-S depthwise conv read in place (cpu/conv_fast.c, the row
 * paths): for k < R and o < n,
 *   y[k * ldy + o] = bias + sum over r < K, q < K of w[K r + q] * X(S k + r, S o - pl + q)
 * in that order of taps, then the clamp as ti__dw_row_fn; X(i, c) = x[i][c] for x[i] not
 * NULL and 0 <= c < W, else 0 (the padding); x has S (R - 1) + K rows. rows[0] (stride 1):
 * K 3 or 5, R 1 to 4, 0 <= pl < K; rows[1] (stride 2): K 3, R 1 or 2, pl 0 to 2; where the
 * ISA's rows_s2_k5r4 is 1, K 3 or 5, R 1 to 4, pl 0 to 2. Reads only
 * x[i][0 .. W), writes only those y. NULL where an ISA has none. */
typedef void (*ti__dw_rows_fn)(float *y, size_t ldy, int K, int R, size_t n,
                               const float *const *x, int64_t W, int64_t pl, const float *w,
                               float bias, int clamp, float lo, float hi);
/* A stride-1 row kernel's dispatch on its arguments K (3 or 5) and R (1 to 4): CALL(k, r)
 * with both as constants, for the ISA files' inlined bodies (cpu/x86/conv_avx*.c). */
#define TI__DWS1_DISPATCH(CALL)                                                              \
    do {                                                                                     \
        if (K == 5) {                                                                        \
            if (R >= 4) CALL(5, 4);                                                          \
            else if (R == 3) CALL(5, 3);                                                     \
            else if (R == 2) CALL(5, 2);                                                     \
            else CALL(5, 1);                                                                 \
        } else {                                                                             \
            if (R >= 4) CALL(3, 4);                                                          \
            else if (R == 3) CALL(3, 3);                                                     \
            else if (R == 2) CALL(3, 2);                                                     \
            else CALL(3, 1);                                                                 \
        }                                                                                    \
    } while (0)
/* The stride-2 row kernel's dispatch on R (1 or 2) and pl (0 to 2): CALL(r, pl) with both
 * as constants. */
#define TI__DWS2_DISPATCH(CALL)                                                              \
    do {                                                                                     \
        switch (3 * (R > 1) + (int)pl) {                                                     \
        case 0: CALL(1, 0); break;                                                           \
        case 1: CALL(1, 1); break;                                                           \
        case 2: CALL(1, 2); break;                                                           \
        case 3: CALL(2, 0); break;                                                           \
        case 4: CALL(2, 1); break;                                                           \
        default: CALL(2, 2); break;                                                          \
        }                                                                                    \
    } while (0)
typedef struct ti__dw_isa {
    int isa;
    ti__dw_row_fn row[2][2];
    ti__maxpool_row_fn maxrow[2];
    ti__dw_taps_fn taps;
    ti__dw_copy_fn copy;
    ti__dw_split_fn split;
    ti__dw_max_fn pool_max;
    ti__dw_sum_fn sum;
    ti__dw_small_fn small;
    ti__dw_lanes_fn lanes;
    ti__conv_fewc_fn fewc[2];
    ti__dw_rows_fn rows[2]; /* [S == 2] */
    ti__maxpool_k3s2_fn mp_k3s2;
    int rows_min; /* rows[] take rows of this many outputs or more (ti__conv_dw_rows_ok) */
    int lane_planes;  /* planes a call of lanes */
    int lane_out_max; /* and outputs a plane at most (ti__conv_dw_lanes_ok) */
    int fewc_np;      /* positions a call of fewc computes at most (16 AVX2, 64 AVX-512) */
    int rows_s2_k5r4; /* 1: rows[1] takes K 5 too, and R up to 4 (ti__dw_rows_fn) */
} ti__dw_isa;
TI__PRIVATE const ti__dw_isa *ti__dw_pick_isa(void); /* cpu/conv_fast.c */

/* Bias and fused activation on a block of float32 rows:
 *   y[r * ldy + i] = ti__act_apply(act, a, b, y[r * ldy + i] + (bias ? bias[r] : 0))
 * for r < rows, i < cols (rows whose bias is 0 with no activation are left as they are),
 * bit for bit as the scalar loop. The SIMD versions return 0, having done nothing, for
 * the activations they lack. */
typedef int (*ti__act_block_fn)(int act, float a, float b, const float *bias, float *y,
                                size_t ldy, size_t rows, size_t cols);
/* What a float GEMM applies to C once its sums are complete (ti__sgemm_ex): a bias per row
 * of C (bias[row], or none) and a fused activation, block by block while C is in cache. */
typedef struct ti__gemm_epi {
    const float *bias;
    int act;
    float a, b;
} ti__gemm_epi;
/* The micro-kernel's in-register form of an epilogue: 0 none, 1 bias only, 2 ReLU, 3 Clip
 * (lo, hi), 4 HardSwish; -1 when the kernel cannot apply it (Sigmoid, SiLU and the rest:
 * ti__act_block after the kernel). */
TI__PRIVATE int ti__sgemm_kernel_epi(const ti__gemm_epi *e, float *lo, float *hi) {
    *lo = 0.0f;
    *hi = 0.0f;
    if (e == NULL) return 0;
    switch (e->act) {
    case TI__ACT_NONE: return 1;
    case TI__ACT_RELU: return 2;
    case TI__ACT_CLIP:
        if (!(e->a <= e->b)) return -1; /* min above max: the scalar order decides */
        *lo = e->a;
        *hi = e->b;
        return 3;
    case TI__ACT_HARD_SWISH: return 4;
    default: return -1;
    }
}

/* The vector erf (ti__erf_avx2 and its twins): for |x| <= 4, erf(x) = x P(x^2) / Q(x^2),
 * P of degree 5, Q of degree 5 with Q(0) = 1, fitted here (iterated least squares on the
 * relative error over [0, 4], numpy) and checked against double erf on a million points
 * in float32 with FMA: at most 3.2e-7 relative (about 6 ulp), erf(4) rounding to 1.
 * |x| > 4 takes x = +-4; the result is clamped to [-1, 1]; NaN stays NaN, -0 stays -0. */
#define TI__ERF_P0 1.12837911f
#define TI__ERF_P1 0.189910978f
#define TI__ERF_P2 0.0526661091f
#define TI__ERF_P3 0.00374129741f
#define TI__ERF_P4 0.000283743779f
#define TI__ERF_P5 2.04469643e-06f
#define TI__ERF_Q0 1.0f
#define TI__ERF_Q1 0.501637042f
#define TI__ERF_Q2 0.113889143f
#define TI__ERF_Q3 0.0149189485f
#define TI__ERF_Q4 0.00115567609f
#define TI__ERF_Q5 3.79799894e-05f
/* P(t) or Q(t) (C: P or Q) by Horner's rule, highest power first: FMA(a, t, c) = a t + c,
 * SET(c) a vector of c (cpu/x86/act_x86.c, cpu/arm/act_neon.c) */
#define TI__ERF_POLY(FMA, SET, t, C)                                                            \
    FMA(FMA(FMA(FMA(FMA(SET(TI__ERF_##C##5), t, SET(TI__ERF_##C##4)), t, SET(TI__ERF_##C##3)), t, \
                SET(TI__ERF_##C##2)),                                                            \
            t, SET(TI__ERF_##C##1)),                                                             \
        t, SET(TI__ERF_##C##0))

/* Winograd F(4x4, 3x3) transforms on `lanes` tiles side by side (cpu/conv_fast.c picks them
 * once, in ti__wino_geometry). in: input transform (ti__wino_in_lanes's contract); out: output
 * transform of tiles whose first nv are set (ti__wino_out_lanes's, the others read as 0 or
 * ignored); put: stores the tiles of z, for each group h < lanes / 4 with row4[h] its 4
 * tiles as 4 rows of 16 floats at row4[h], ldy apart, and each tile l < n with dst[l] its
 * 4 x 4 block there (the tiles of neither are left to the caller); with sum, each value
 * stored is z's plus the one it replaces (a residual sum fused into the conv), then, with
 * relu, v < 0 ? 0 : v. */
typedef void (*ti__wino_in_fn)(const float *const *rows, float *out, size_t os);
typedef void (*ti__wino_out_fn)(const float *src, size_t es, int nv, float bias, int relu,
                                float *z);
typedef void (*ti__wino_put_fn)(const float *z, float *const *row4, float *const *dst, int n,
                                size_t ldy, int sum, int relu);
typedef struct ti__wino_fns {
    size_t lanes; /* 8 (AVX2) or 16 (AVX-512) */
    ti__wino_in_fn in;
    ti__wino_out_fn out;
    ti__wino_put_fn put;
} ti__wino_fns;
#ifdef TI__X86_SIMD
TI__PRIVATE int ti__act_block_avx2(int act, float a, float b, const float *bias, float *y,
                                   size_t ldy, size_t rows, size_t cols); /* cpu/x86/act_x86.c */
TI__PRIVATE int ti__act_block_avx512(int act, float a, float b, const float *bias, float *y,
                                     size_t ldy, size_t rows, size_t cols);
/* y[i] = x[i] < 0 ? 0 : x[i] for i < n (ONNX Relu's rule: NaN and -0 stay; x == y allowed)
 * (cpu/x86/act_x86.c) */
TI__PRIVATE void ti__relu_avx2(const float *x, float *y, size_t n);
TI__PRIVATE void ti__relu_avx512(const float *x, float *y, size_t n);
/* y[i] = erf(x[i]) for i < n (x == y allowed) to within 3.2e-7 relative (ONNX Erf,
 * cpu/unary.c; TI__ERF_P / TI__ERF_Q above) */
TI__PRIVATE void ti__erf_avx2(const float *x, float *y, size_t n);
TI__PRIVATE void ti__erf_avx512(const float *x, float *y, size_t n);
/* One softmax row (log 0: Softmax, 1: LogSoftmax) of n >= 1 floats, x to y (x == y
 * allowed): the row max, then exp(x - max) by the vector exp of cpu/x86/act_x86.c summed in
 * float lanes, then y = e / sum or x - max - log(sum) (cpu/reduce.c's Softmax rows). */
TI__PRIVATE void ti__softmax_row_avx2(const float *x, float *y, size_t n, int log);
TI__PRIVATE void ti__softmax_row_avx512(const float *x, float *y, size_t n, int log);
/* o[0:n] = a op b for the float32 Add/Sub/Mul/Div (and Sum/Mean) of cpu/binary.c, sa / sb 1
 * for a run of n floats, 0 for one value repeated; 0 returned for other ops
 * (cpu/x86/binary_x86.c) */
TI__PRIVATE int ti__bin_f32_avx2(int op, const float *a, int sa, const float *b, int sb,
                                 float *o, size_t n);
TI__PRIVATE int ti__bin_f32_avx512(int op, const float *a, int sa, const float *b, int sb,
                                   float *o, size_t n);
TI__PRIVATE const ti__dw_isa *ti__dw_avx2_isa(void);   /* cpu/x86/conv_avx2.c */
/* ti__dw_sum_fn, the sdot kernels' body without the products (cpu/x86/gemm_*.c) */
TI__PRIVATE float ti__ssum_avx2(const float *x, size_t n);
TI__PRIVATE float ti__ssum_avx512(const float *x, size_t n);
/* dst[t] = src[2 t] for t < n, reading nothing past src[2 (n - 1)] (cpu/x86/conv_*.c) */
TI__PRIVATE void ti__copy_s2_avx2(float *dst, const float *src, size_t n);
TI__PRIVATE void ti__copy_s2_avx512(float *dst, const float *src, size_t n);
/* ev[t] = src[2 t], od[t] = src[2 t + 1], for the w columns of src (cpu/x86/conv_*.c) */
TI__PRIVATE void ti__split_s2_avx2(float *ev, float *od, const float *src, size_t w);
TI__PRIVATE void ti__split_s2_avx512(float *ev, float *od, const float *src, size_t w);
TI__PRIVATE const ti__dw_isa *ti__dw_avx512_isa(void); /* cpu/x86/conv_avx512.c */
TI__PRIVATE const ti__wino_fns *ti__wino_avx2_fns(void);   /* cpu/x86/conv_avx2.c */
TI__PRIVATE const ti__wino_fns *ti__wino_avx512_fns(void); /* cpu/x86/conv_avx512.c */
TI__PRIVATE const ti__sgemm_isa *ti__sgemm_avx2_isa(void);   /* cpu/x86/gemm_avx2.c */
TI__PRIVATE const ti__sgemm_isa *ti__sgemm_avx512_isa(void); /* cpu/x86/gemm_avx512.c */
/* The 8-bit GEMM micro-kernel of core/qgemm.c (ti__qg_micro's contract: 4 rows x 16
 * channels, int16 operands, uint32 sums modulo 2^32) for AVX2, on a panel in pairs of
 * depths (ti__qg_pairs_avx2): cpu/x86/qgemm_avx2.c */
TI__PRIVATE void ti__qg_micro_avx2(size_t kc, const int16_t *ap, const int16_t *bp,
                                     uint32_t *acc, size_t ldacc);
/* The same storing the sums instead of adding them (the first depth panel) */
TI__PRIVATE void ti__qg_micro_avx2_set(size_t kc, const int16_t *ap, const int16_t *bp,
                                       uint32_t *acc, size_t ldacc);
/* Both for row 0 of the panel alone (a block of one row), rows 1-3 of acc left alone */
TI__PRIVATE void ti__qg_micro1_avx2(size_t kc, const int16_t *ap, const int16_t *bp,
                                    uint32_t *acc, size_t ldacc);
TI__PRIVATE void ti__qg_micro1_avx2_set(size_t kc, const int16_t *ap, const int16_t *bp,
                                        uint32_t *acc, size_t ldacc);
/* TFLite requantization (core/qgemm.c's TI__QRQ_32) of x[0..n) with per-element multipliers
 * and shifts, plus yo, clamped to [lo, hi] (lo <= hi): whole groups of 8, bit for bit as
 * the scalar loop; returns how many were done (the caller does the rest) */
TI__PRIVATE size_t ti__qrq32_avx2(const int32_t *x, const int32_t *mult, const int32_t *shift,
                                  size_t n, int32_t yo, int32_t lo, int32_t hi, int32_t *out);
/* One tap of the 8-bit depthwise kernel (cpu/tfl_conv.c): acc[c] += (w[c] + wo) * (x[c] +
 * xo) modulo 2^32 for c < n, x and w both uint8 (u8) or both int8 */
TI__PRIVATE void ti__dwq_tap_avx2(int u8, uint32_t *acc, const void *x, const void *w, size_t n,
                                  int32_t xo, int32_t wo);
/* TI__QRQ_32 of rows of sums to bytes (ti__qg8_rows8_vnni's contract; colc and row may be
 * NULL; the shifts checked by the caller, pos: any of them positive), for AVX2 */
TI__PRIVATE void ti__qrq_rows_avx2(size_t nr, const uint32_t *dot, size_t ldd, const int32_t *colc,
                                   const int32_t *bos, const int32_t *row, size_t n,
                                   const int32_t *mult, const int32_t *shift, int pos, int32_t yo,
                                   int32_t lo, int32_t hi, uint8_t *out, size_t ldo);
/* The AVX2 micro-kernel's panel: from ti__qg_micro's in place (a[k * 4 + r] to pairs of
 * depths per row, a[(k / 2) * 8 + r * 2 + k % 2], 0 past an odd n), from four contiguous
 * int16 rows, or from four rows of 8-bit values plus an offset; and 8-bit values widened
 * with an offset (dst[i] = x[i] + off), for AVX2 */
TI__PRIVATE void ti__qg_pairs_avx2(int16_t *a, size_t n);
TI__PRIVATE void ti__qg_widen4_avx2(int16_t *dst, const unsigned char *x, size_t rs, size_t n,
                                    int u8, int32_t off);
TI__PRIVATE void ti__qg_interleave4_avx2(int16_t *dst, const int16_t *r0, const int16_t *r1,
                                         const int16_t *r2, const int16_t *r3, size_t n);
/* The vector lanes of TFLite's 8-bit ADD (ti__tfl_add8_avx512's contract, groups of 8):
 * cpu/x86/tfl_add_avx2.c */
TI__PRIVATE size_t ti__tfl_add8_avx2(const uint8_t *a, const uint8_t *b, uint8_t *y, size_t n,
                                     const int32_t *t1, const int32_t *t2, int32_t mo, int e,
                                     int32_t out_off, int u8, int32_t lo, int32_t hi);
TI__PRIVATE void ti__q8_widen_avx2(int16_t *dst, const void *x, size_t n, int u8, int32_t off);
TI__PRIVATE void ti__q8_widen16_avx2(int16_t *dst, const void *x, int u8, int32_t off);
/* The 8-bit depthwise path of AVX2 (cpu/tfl_conv.c): a chunk's weights in pairs of taps
 * (w + wo as int16) and the input offset's share of each sum, once; then the taps of one
 * output pixel, x without its offset, against them */
TI__PRIVATE void ti__dwq_wprep_avx2(int u8, int16_t *wp, uint32_t *ks, const void *w,
                                    const size_t *woff, size_t nt, size_t n, int32_t xo,
                                    int32_t wo);
TI__PRIVATE void ti__dwq_pix_avx2(int u8, uint32_t *acc, const unsigned char *const *xp,
                                  size_t off, size_t nt, const int16_t *wp, size_t n);
#endif
#ifdef TI__ARM_NEON
TI__PRIVATE const ti__sgemm_isa *ti__sgemm_neon_isa(void); /* cpu/arm/gemm_neon.c */
TI__PRIVATE int ti__act_block_neon(int act, float a, float b, const float *bias, float *y,
                                   size_t ldy, size_t rows, size_t cols); /* cpu/arm/act_neon.c */
TI__PRIVATE void ti__relu_neon(const float *x, float *y, size_t n); /* as ti__relu_avx2 */
TI__PRIVATE void ti__erf_neon(const float *x, float *y, size_t n); /* as ti__erf_avx2 */
TI__PRIVATE int ti__bin_f32_neon(int op, const float *a, int sa, const float *b, int sb,
                                 float *o, size_t n); /* cpu/arm/binary_neon.c */
TI__PRIVATE const ti__dw_isa *ti__dw_neon_isa(void); /* cpu/arm/conv_neon.c */
TI__PRIVATE float ti__ssum_neon(const float *x, size_t n); /* cpu/arm/gemm_neon.c */
TI__PRIVATE void ti__copy_s2_neon(float *dst, const float *src, size_t n);
/* The 8-bit GEMM micro-kernel of core/qgemm.c (ti__qg_micro's contract: 4 rows x 16
 * channels, int16 operands, uint32 sums modulo 2^32) for NEON: cpu/arm/qgemm_neon.c */
/* The 8-bit depthwise tap (ti__dwq_tap_avx2's contract) for NEON: cpu/arm/qgemm_neon.c */
TI__PRIVATE void ti__dwq_tap_neon(int u8, uint32_t *acc, const void *x, const void *w, size_t n,
                                  int32_t xo, int32_t wo);
TI__PRIVATE void ti__qg_micro_neon(size_t kc, const int16_t *ap, const int16_t *bp, uint32_t *acc,
                                   size_t ldacc);
/* TFLite requantization (TI__QRQ_32) of x[0..n), as ti__qrq32_avx2 but whole groups of 4 */
TI__PRIVATE size_t ti__qrq32_neon(const int32_t *x, const int32_t *mult, const int32_t *shift,
                                  size_t n, int32_t yo, int32_t lo, int32_t hi, int32_t *out);
#endif
/* The requantization a byte-path micro-kernel does in its registers (x86 VNNI): the float
 * scales s and e of its columns (ti__qg8_plan_vnni), and for the rows it leaves to the
 * exact integer chain the multipliers, shifts, zero point and clamp range. */
typedef struct ti__qg8_rqt {
    const float *s, *e;
    const int32_t *mult, *shift;
    int32_t yo, lo, hi;
} ti__qg8_rqt;
#if defined(TI__ARM_NEON) && defined(TI__ARM_DOTPROD)
/* The byte path of core/qgemm.c's 8-bit GEMM for SDOT (cpu/arm/qgemm_dot.c): the
 * micro-kernel (ti__qg8_micro_vnni's contract, but summing (a ^ 0x80) * b: the caller adds
 * 128 * sum b per column), the flipping byte copy that sums the bytes, one output row
 * (ti__qg8_row_vnni's contract, groups of 4). */
TI__PRIVATE void ti__qg8_micro_neondot(size_t kq, const uint8_t *a, size_t lda, const int8_t *b,
                                       size_t bs, int nb, uint32_t *acc, size_t ldacc, int add,
                                       const int32_t *init);
TI__PRIVATE uint32_t ti__qg8_copy_neon(uint8_t *dst, const uint8_t *src, size_t n, uint8_t flip);
TI__PRIVATE size_t ti__qg8_row_neon(const uint32_t *dot, const int32_t *colc, const int32_t *bos,
                                    int32_t row, size_t n, const int32_t *mult,
                                    const int32_t *shift, int32_t yo, int32_t lo, int32_t hi,
                                    int32_t *x, uint8_t *out8);
#endif
#if defined(TI__X86_SIMD) && defined(TI__X86_VNNI)
/* The byte path of core/qgemm.c's 8-bit GEMM for AVX512-VNNI (cpu/x86/qgemm_vnni.c): the
 * micro-kernel (8 rows of kq * 4 unsigned bytes lda apart, times nb = 1 or 2 blocks of
 * [kq][16][4] signed bytes bs apart, to acc rows ldacc apart, added to them when add, else
 * to init's value per column (NULL: 0); the _i8 one reads int8 rows, flipping each byte to
 * uint8 as it reads it, and does not add),
 * byte copies with an xor (int8 -> uint8) that return the bytes' sum (dst NULL: the sum
 * only), one output row or up to 8 rows (sums plus row and column terms, requantized as
 * TI__QRQ_32); the depthwise weights in quads of taps and one output pixel on them; the
 * AVX-512 depthwise taps of one output pixel (acc[c] = sum over taps t of (w[woff[t] + c] +
 * wo) * (x[xoff[t] + c] + xo), c < n). */
TI__PRIVATE void ti__qg8_micro_vnni(size_t kq, const uint8_t *a, size_t lda, const int8_t *b,
                                    size_t bs, int nb, uint32_t *acc, size_t ldacc, int add,
                                    const int32_t *init);
TI__PRIVATE void ti__qg8_micro1_vnni(size_t kq, const uint8_t *a, size_t lda, const int8_t *b,
                                     size_t bs, int nb, uint32_t *acc, size_t ldacc, int add,
                                     const int32_t *init);
TI__PRIVATE int ti__qg8_plan_vnni(size_t n, const int32_t *bias, const int32_t *csum, int32_t ao,
                                  int32_t *colc, const int32_t *mult, const int32_t *shift,
                                  int32_t yo, int32_t lo, int32_t hi, float *s, float *e);
TI__PRIVATE void ti__qg8_micro_rq_vnni(size_t kq, const uint8_t *a, size_t lda, int i8,
                                       const int8_t *b, size_t bs, int nb, const int32_t *init,
                                       const int32_t *row, const ti__qg8_rqt *t, size_t nr,
                                       size_t nc, uint8_t *out, size_t ldo);
TI__PRIVATE void ti__qg8_micro_vnni_i8(size_t kq, const uint8_t *a, size_t lda, const int8_t *b,
                                       size_t bs, int nb, uint32_t *acc, size_t ldacc,
                                       const int32_t *init);
#ifdef TI__X86_AMX
/* The tile path (cpu/x86/qgemm_vnni_amx.c): the depth quads per tile step (0: none fits), and
 * rows of A (a multiple of 16) times every column of B requantized to bytes. */
TI__PRIVATE size_t ti__qg8_amx_step(size_t kq);
TI__PRIVATE void ti__qg8_amx_rq(size_t nr, size_t kq, size_t sq, const uint8_t *a, size_t lda,
                                int i8, const int8_t *b, size_t bs, size_t nc,
                                const int32_t *init, int32_t rowm, const ti__qg8_rqt *t,
                                uint8_t *out, size_t ldo);
#endif
TI__PRIVATE uint32_t ti__qg8_copy_vnni(uint8_t *dst, const uint8_t *src, size_t n, uint8_t flip);
TI__PRIVATE void ti__dwq_wprep_vnni(int u8, int8_t *wp, uint32_t *ks, const void *w,
                                    const size_t *woff, size_t nt, size_t n, int32_t xo,
                                    int32_t wo);
TI__PRIVATE void ti__dwq_pix_vnni(uint32_t *acc, const unsigned char *const *xp, size_t off,
                                  size_t nt, const int8_t *wp, size_t n, uint8_t flip, int32_t bo);
TI__PRIVATE void ti__dwq_pix2_vnni(uint32_t *acca, uint32_t *accb, const unsigned char *const *xpa,
                                   size_t offa, const unsigned char *const *xpb, size_t offb,
                                   size_t nt, const int8_t *wp, uint8_t flip, int32_t bo);
/* Bytes of one block of 32 channels in ti__dwq_wprep_rows_vnni's layout (3 kernel rows, two
 * sets of four 32-byte vectors each). */
#define TI__DWQ_ROW_BYTES 768
TI__PRIVATE void ti__dwq_wprep_rows_vnni(int u8, int8_t *wp, const void *w, const size_t *woff,
                                         size_t n, int32_t wo);
TI__PRIVATE void ti__dwq_row3_vnni(uint32_t *acc, size_t lda, const unsigned char *const *r,
                                   const size_t *cs, size_t np, int s2, size_t lc, size_t nv,
                                   const unsigned char *pad, const int8_t *wr, size_t n,
                                   uint8_t flip, int32_t bo);
/* The requantization ti__dwq_row3_rq_vnni does in its registers for one block of n <= 32
 * channels, made by ti__dwq_rq_plan_vnni, in the row kernel's lane order (dword d holds
 * channel 4 (d / 8) + d % 4, plus 16 where d % 8 >= 4; 0 past n): the column terms, the
 * float scales of ti__qv_rq_float, and for a pixel with a lane near a rounding step the
 * multipliers and shifts of the exact integer chain (ti__qv_rq_cols); the zero point and the
 * clamp range. */
typedef struct ti__dwq_rq {
    int32_t colc[32], mult[32], shift[32];
    float s[32], e[32];
    int32_t yo, lo, hi;
} ti__dwq_rq;
TI__PRIVATE int ti__dwq_rq_plan_vnni(ti__dwq_rq *q, const int32_t *colc, const int32_t *mult,
                                     const int32_t *shift, size_t n, int32_t yo, int32_t lo,
                                     int32_t hi);
TI__PRIVATE void ti__dwq_row3_rq_vnni(uint8_t *out, size_t ldo, const unsigned char *const *r,
                                      const size_t *cs, size_t np, int s2, size_t lc, size_t nv,
                                      const unsigned char *pad, const int8_t *wr, size_t n,
                                      uint8_t flip, int32_t bo, const ti__dwq_rq *q);
TI__PRIVATE size_t ti__qg8_row_vnni(const uint32_t *dot, const int32_t *colc, const int32_t *bos,
                                    int32_t row, size_t n, const int32_t *mult,
                                    const int32_t *shift, int32_t yo, int32_t lo, int32_t hi,
                                    int32_t *x, uint8_t *out8);
TI__PRIVATE int ti__qg8_rows8_vnni(size_t nr, const uint32_t *dot, size_t ldd, const int32_t *colc,
                                   const int32_t *bos, const int32_t *row, size_t n,
                                   const int32_t *mult, const int32_t *shift, int32_t yo,
                                   int32_t lo, int32_t hi, uint8_t *out, size_t ldo);
/* The vector lanes of TFLite's 8-bit ADD (cpu/tfl_elementwise.c), cpu/x86/tfl_add_avx512.c */
TI__PRIVATE size_t ti__tfl_add8_avx512(const uint8_t *a, const uint8_t *b, uint8_t *y, size_t n,
                                       const int32_t *t1, const int32_t *t2, int32_t mo, int e,
                                       int32_t out_off, int u8, int32_t lo, int32_t hi);
TI__PRIVATE size_t ti__tfl_add8c_avx512(const uint8_t *a, const uint8_t *b, uint8_t *y, size_t n,
                                        const int32_t *p, int32_t mo, int e, int32_t out_off,
                                        int u8, int32_t lo, int32_t hi);
TI__PRIVATE int ti__tfl_add8v_prep_avx512(uint8_t *pl, const int32_t *t1, const int32_t *t2,
                                          int32_t mo, int e, int32_t out_off, int u8, int32_t lo,
                                          int32_t hi);
TI__PRIVATE size_t ti__tfl_add8v_avx512(const uint8_t *a, const uint8_t *b, uint8_t *y, size_t n,
                                        const uint8_t *pl, int32_t mo, int e, int32_t out_off,
                                        int u8, int32_t lo, int32_t hi);
TI__PRIVATE void ti__dwq_pixel_avx512(int u8, uint32_t *acc, const void *x, const void *w,
                                      const size_t *xoff, const size_t *woff, size_t nt, size_t n,
                                      int32_t xo, int32_t wo);
#endif

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
    __attribute__((format(TI__PRINTF_FORMAT, 3, 4)))
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
    /* A Concat's input placed inside its output (ti__session_concat_views): the output's
     * value + 1 (0: none) and the byte offset there; has_views: such an output. view_sum:
     * a conv's output placed on the residual it adds onto (ti__session_sum_views), view_of
     * then the value whose memory that is. */
    int view_of;
    size_t view_off;
    int has_views, view_sum;
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
    char *tune; /* the tuning text (validated), NULL when none */
    size_t tune_len;
    struct ti__clplan *cl; /* the OpenCL runtime and plan; NULL on the CPU backend */
    char fallback[320]; /* why the requested backend is not the one running */
    char unplanned_reason[160];
    ti_session_info info;
    /* desc.profile: per node of the last run, its start (ms after the run began), time,
     * bytes copied for its inputs, and 1 when it ran on the GPU (plan pool; else NULL) */
    double *prof_t0, *prof_ms;
    size_t *prof_bytes;
    unsigned char *prof_gpu;
    int profiled; /* 1 once a run has filled the profile */
    double t_run; /* ti__now_ms at the start of the run in flight */
    /* ti_session_link_input: per model input, the session and output it is fed from
     * (NULL: none); per model output, 1 when a linked session takes it on the device, so
     * it is not read back at the end of a run (both allocated when first linked) */
    /* ti_session_bind_input / _output: per model input / output, the caller's memory
     * (NULL: none) and its size; per value (plan pool, NULL until a binding is applied),
     * the arena slot a bound value would use, kept for the OpenCL offsets. */
    void **bind_in, **bind_out;
    size_t *bind_in_bytes, *bind_out_bytes;
    unsigned char **bind_slot;
    int bind_copy_pending; /* outputs bound by copy to finish after the run (its wait) */
    struct ti_session **link_src;
    int *link_out;
    unsigned char *out_on_device;
};
TI__PRIVATE int ti__session_new_value(ti_session *s, const char *name);
TI__PRIVATE void ti__kctx_init(ti_session *s, ti__kctx *k, int n, ti_error *err);
TI__PRIVATE ti_status ti__session_run_dynamic(ti_session *s, int n, ti_error *err);
/* Runs node n on the CPU (planned or dynamic), its time in the profile when one is kept. */
TI__PRIVATE ti_status ti__session_run_node_cpu(ti_session *s, int n, ti_error *err);
TI__PRIVATE int ti__session_bind_io(ti_session *s, int n);
TI__PRIVATE int ti__pass_live_nodes(ti_session *s, char *live);
TI__PRIVATE ti_status ti__pass_fuse(ti_session *s, ti_error *err);
/* Re-lays out constant weights once for the CPU kernel each static node will run
 * (ti__node.packed): Winograd-transformed Conv weights, packed 8-bit GEMM weights and
 * requantization multipliers (ti__qpack). CPU backend only. */
TI__PRIVATE ti_status ti__pass_prepack(ti_session *s, ti_error *err);
/* Sets each node's bands_ok: its output is read by ONNX Convs only and is not a graph
 * output. CPU backend only. */
TI__PRIVATE ti_status ti__pass_bands(ti_session *s, ti_error *err);
/* formats/onnx.c */
#ifndef TI_NO_TFLITE
/* formats/tflite.c: same contract as ti__onnx_parse; nodes get domain "tflite". */
TI__PRIVATE ti_status ti__tflite_parse(ti_model *m, const uint8_t *data, size_t size, ti_error *err);
#endif
#ifndef TI_NO_ONNX
TI__PRIVATE ti_status ti__onnx_parse(ti_model *m, const uint8_t *data, size_t size, ti_error *err);
#endif
