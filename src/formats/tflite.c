/* TFLite reader: maps subgraph 0 of a .tflite model (TFLite schema version 3) onto the IR:
 * one value per tensor (value = tensor index + base), one node per operator in domain
 * "tflite" named after its first output, builtin options as attributes named like the
 * schema's fields, constant buffers used in place in one copy of the file. Validates every
 * index, buffer size and the graph (inputs defined, one producer, no cycle; execution order
 * kept or repaired). Relies on formats/flatbuf.c for the verified reads and graph/ir.c for
 * the builders. Must not trust any offset, count or size in the file, nor follow subgraphs. */
#ifndef TI_NO_TFLITE

/* Limits per operator and per attribute vector: far above any real model, low enough that
 * int arithmetic stays safe. */
#define TI__TFL_MAX_NODE_IO 65536
#define TI__TFL_MAX_ATTR_ELEMS 65536

/* BuiltinOperator names, by code (schema.fbs); codes past the table load as "BUILTIN_<n>". */
static const char *const ti__tfl_op_names[] = {
    "ADD", "AVERAGE_POOL_2D", "CONCATENATION", "CONV_2D", "DEPTHWISE_CONV_2D", "DEPTH_TO_SPACE",
    "DEQUANTIZE", "EMBEDDING_LOOKUP", "FLOOR", "FULLY_CONNECTED", "HASHTABLE_LOOKUP",
    "L2_NORMALIZATION", "L2_POOL_2D", "LOCAL_RESPONSE_NORMALIZATION", "LOGISTIC",
    "LSH_PROJECTION", "LSTM", "MAX_POOL_2D", "MUL", "RELU", "RELU_N1_TO_1", "RELU6", "RESHAPE",
    "RESIZE_BILINEAR", "RNN", "SOFTMAX", "SPACE_TO_DEPTH", "SVDF", "TANH", "CONCAT_EMBEDDINGS",
    "SKIP_GRAM", "CALL", "CUSTOM", "EMBEDDING_LOOKUP_SPARSE", "PAD",
    "UNIDIRECTIONAL_SEQUENCE_RNN", "GATHER", "BATCH_TO_SPACE_ND", "SPACE_TO_BATCH_ND",
    "TRANSPOSE", "MEAN", "SUB", "DIV", "SQUEEZE", "UNIDIRECTIONAL_SEQUENCE_LSTM",
    "STRIDED_SLICE", "BIDIRECTIONAL_SEQUENCE_RNN", "EXP", "TOPK_V2", "SPLIT", "LOG_SOFTMAX",
    "DELEGATE", "BIDIRECTIONAL_SEQUENCE_LSTM", "CAST", "PRELU", "MAXIMUM", "ARG_MAX", "MINIMUM",
    "LESS", "NEG", "PADV2", "GREATER", "GREATER_EQUAL", "LESS_EQUAL", "SELECT", "SLICE", "SIN",
    "TRANSPOSE_CONV", "SPARSE_TO_DENSE", "TILE", "EXPAND_DIMS", "EQUAL", "NOT_EQUAL", "LOG",
    "SUM", "SQRT", "RSQRT", "SHAPE", "POW", "ARG_MIN", "FAKE_QUANT", "REDUCE_PROD",
    "REDUCE_MAX", "PACK", "LOGICAL_OR", "ONE_HOT", "LOGICAL_AND", "LOGICAL_NOT", "UNPACK",
    "REDUCE_MIN", "FLOOR_DIV", "REDUCE_ANY", "SQUARE", "ZEROS_LIKE", "FILL", "FLOOR_MOD",
    "RANGE", "RESIZE_NEAREST_NEIGHBOR", "LEAKY_RELU", "SQUARED_DIFFERENCE", "MIRROR_PAD", "ABS",
    "SPLIT_V", "UNIQUE", "CEIL", "REVERSE_V2", "ADD_N", "GATHER_ND", "COS", "WHERE", "RANK",
    "ELU", "REVERSE_SEQUENCE", "MATRIX_DIAG", "QUANTIZE", "MATRIX_SET_DIAG", "ROUND",
    "HARD_SWISH", "IF", "WHILE", "NON_MAX_SUPPRESSION_V4", "NON_MAX_SUPPRESSION_V5",
    "SCATTER_ND", "SELECT_V2", "DENSIFY", "SEGMENT_SUM", "BATCH_MATMUL",
    "PLACEHOLDER_FOR_GREATER_OP_CODES", "CUMSUM", "CALL_ONCE", "BROADCAST_TO", "RFFT2D",
    "CONV_3D", "IMAG", "REAL", "COMPLEX_ABS", "HASHTABLE", "HASHTABLE_FIND", "HASHTABLE_IMPORT",
    "HASHTABLE_SIZE", "REDUCE_ALL", "CONV_3D_TRANSPOSE", "VAR_HANDLE", "READ_VARIABLE",
    "ASSIGN_VARIABLE", "BROADCAST_ARGS", "RANDOM_STANDARD_NORMAL", "BUCKETIZE",
    "RANDOM_UNIFORM", "MULTINOMIAL", "GELU", "DYNAMIC_UPDATE_SLICE", "RELU_0_TO_1",
    "UNSORTED_SEGMENT_PROD", "UNSORTED_SEGMENT_MAX", "UNSORTED_SEGMENT_SUM", "ATAN2",
    "UNSORTED_SEGMENT_MIN", "SIGN", "BITCAST", "BITWISE_XOR", "RIGHT_SHIFT",
    "STABLEHLO_LOGISTIC", "STABLEHLO_ADD", "STABLEHLO_DIVIDE", "STABLEHLO_MULTIPLY",
    "STABLEHLO_MAXIMUM", "STABLEHLO_RESHAPE", "STABLEHLO_CLAMP", "STABLEHLO_CONCATENATE",
    "STABLEHLO_BROADCAST_IN_DIM", "STABLEHLO_CONVOLUTION", "STABLEHLO_SLICE",
    "STABLEHLO_CUSTOM_CALL", "STABLEHLO_REDUCE", "STABLEHLO_ABS", "STABLEHLO_AND",
    "STABLEHLO_COSINE", "STABLEHLO_EXPONENTIAL", "STABLEHLO_FLOOR", "STABLEHLO_LOG",
    "STABLEHLO_MINIMUM", "STABLEHLO_NEGATE", "STABLEHLO_OR", "STABLEHLO_POWER",
    "STABLEHLO_REMAINDER", "STABLEHLO_RSQRT", "STABLEHLO_SELECT", "STABLEHLO_SUBTRACT",
    "STABLEHLO_TANH", "STABLEHLO_SCATTER", "STABLEHLO_COMPARE", "STABLEHLO_CONVERT",
    "STABLEHLO_DYNAMIC_SLICE", "STABLEHLO_DYNAMIC_UPDATE_SLICE", "STABLEHLO_PAD",
    "STABLEHLO_IOTA", "STABLEHLO_DOT_GENERAL", "STABLEHLO_REDUCE_WINDOW", "STABLEHLO_SORT",
    "STABLEHLO_WHILE", "STABLEHLO_GATHER", "STABLEHLO_TRANSPOSE", "DILATE",
    "STABLEHLO_RNG_BIT_GENERATOR", "REDUCE_WINDOW", "STABLEHLO_COMPOSITE"};
#define TI__TFL_CUSTOM 32

/* Fields of the builtin options tables, by BuiltinOptions union type (schema.fbs): field id
 * and kind. Kinds: 'b' byte (enums: Padding, ActivationFunctionType, TensorType, ...),
 * 'B' bool, 'i' int, 'u' uint, 'l' long, 'f' float, 'I' [int], 'F' [float], 's' string.
 * Ids skip deprecated fields (ResizeBilinearOptions' new_height/new_width). Tables with no
 * fields are not listed. Each present field becomes an attribute of the same name. */
typedef struct ti__tfl_optfield {
    unsigned char type, id;
    char kind;
    const char *name;
} ti__tfl_optfield;

static const ti__tfl_optfield ti__tfl_opt_fields[] = {
    {1, 0, 'b', "padding"}, {1, 1, 'i', "stride_w"}, {1, 2, 'i', "stride_h"}, /* Conv2D */
    {1, 3, 'b', "fused_activation_function"}, {1, 4, 'i', "dilation_w_factor"},
    {1, 5, 'i', "dilation_h_factor"}, {1, 6, 'b', "quantized_bias_type"},
    {2, 0, 'b', "padding"}, {2, 1, 'i', "stride_w"}, {2, 2, 'i', "stride_h"}, /* DepthwiseConv2D */
    {2, 3, 'i', "depth_multiplier"}, {2, 4, 'b', "fused_activation_function"},
    {2, 5, 'i', "dilation_w_factor"}, {2, 6, 'i', "dilation_h_factor"},
    {3, 0, 'i', "num_channels"}, {3, 1, 'I', "num_columns_per_channel"}, /* ConcatEmbeddings */
    {3, 2, 'I', "embedding_dim_per_channel"},
    {4, 0, 'b', "type"}, /* LSHProjection */
    {5, 0, 'b', "padding"}, {5, 1, 'i', "stride_w"}, {5, 2, 'i', "stride_h"}, /* Pool2D */
    {5, 3, 'i', "filter_width"}, {5, 4, 'i', "filter_height"},
    {5, 5, 'b', "fused_activation_function"},
    {6, 0, 'i', "rank"}, {6, 1, 'b', "fused_activation_function"}, /* SVDF */
    {6, 2, 'B', "asymmetric_quantize_inputs"},
    {7, 0, 'b', "fused_activation_function"}, {7, 1, 'B', "asymmetric_quantize_inputs"}, /* RNN */
    {8, 0, 'b', "fused_activation_function"}, {8, 1, 'b', "weights_format"}, /* FullyConnected */
    {8, 2, 'B', "keep_num_dims"}, {8, 3, 'B', "asymmetric_quantize_inputs"},
    {8, 4, 'b', "quantized_bias_type"},
    {9, 0, 'f', "beta"}, /* Softmax */
    {10, 0, 'i', "axis"}, {10, 1, 'b', "fused_activation_function"}, /* Concatenation */
    {11, 0, 'b', "fused_activation_function"}, {11, 1, 'B', "pot_scale_int16"}, /* Add */
    {12, 0, 'b', "fused_activation_function"}, /* L2Norm */
    {13, 0, 'i', "radius"}, {13, 1, 'f', "bias"}, {13, 2, 'f', "alpha"}, /* LRN */
    {13, 3, 'f', "beta"},
    {14, 0, 'b', "fused_activation_function"}, {14, 1, 'f', "cell_clip"}, /* LSTM */
    {14, 2, 'f', "proj_clip"}, {14, 3, 'b', "kernel_type"},
    {14, 4, 'B', "asymmetric_quantize_inputs"},
    {15, 2, 'B', "align_corners"}, {15, 3, 'B', "half_pixel_centers"}, /* ResizeBilinear */
    {16, 0, 'u', "subgraph"}, /* Call */
    {17, 0, 'I', "new_shape"}, /* Reshape */
    {18, 0, 'i', "ngram_size"}, {18, 1, 'i', "max_skip_size"}, /* SkipGram */
    {18, 2, 'B', "include_all_ngrams"},
    {19, 0, 'i', "block_size"}, /* SpaceToDepth */
    {20, 0, 'b', "combiner"}, /* EmbeddingLookupSparse */
    {21, 0, 'b', "fused_activation_function"}, /* Mul */
    {23, 0, 'i', "axis"}, {23, 1, 'i', "batch_dims"}, /* Gather */
    {27, 0, 'B', "keep_dims"}, /* Reducer */
    {28, 0, 'b', "fused_activation_function"}, {28, 1, 'B', "pot_scale_int16"}, /* Sub */
    {29, 0, 'b', "fused_activation_function"}, /* Div */
    {30, 0, 'I', "squeeze_dims"}, /* Squeeze */
    {31, 0, 'B', "time_major"}, {31, 1, 'b', "fused_activation_function"}, /* SequenceRNN */
    {31, 2, 'B', "asymmetric_quantize_inputs"},
    {32, 0, 'i', "begin_mask"}, {32, 1, 'i', "end_mask"}, {32, 2, 'i', "ellipsis_mask"},
    {32, 3, 'i', "new_axis_mask"}, {32, 4, 'i', "shrink_axis_mask"}, /* StridedSlice */
    {32, 5, 'B', "offset"},
    {35, 0, 'i', "num_splits"}, /* Split */
    {37, 0, 'b', "in_data_type"}, {37, 1, 'b', "out_data_type"}, /* Cast */
    {40, 0, 'b', "output_type"}, /* ArgMax */
    {49, 0, 'b', "padding"}, {49, 1, 'i', "stride_w"}, {49, 2, 'i', "stride_h"}, /* TransposeConv */
    {49, 3, 'b', "fused_activation_function"}, {49, 4, 'b', "quantized_bias_type"},
    {50, 0, 'B', "validate_indices"}, /* SparseToDense */
    {55, 0, 'b', "out_type"}, /* Shape */
    {57, 0, 'b', "output_type"}, /* ArgMin */
    {58, 0, 'f', "min"}, {58, 1, 'f', "max"}, {58, 2, 'i', "num_bits"}, /* FakeQuant */
    {58, 3, 'B', "narrow_range"},
    {59, 0, 'i', "values_count"}, {59, 1, 'i', "axis"}, /* Pack */
    {61, 0, 'i', "axis"}, /* OneHot */
    {64, 0, 'i', "num"}, {64, 1, 'i', "axis"}, /* Unpack */
    {69, 0, 'b', "fused_activation_function"}, {69, 1, 'f', "cell_clip"}, /* BidiSequenceLSTM */
    {69, 2, 'f', "proj_clip"}, {69, 3, 'B', "merge_outputs"}, {69, 4, 'B', "time_major"},
    {69, 5, 'B', "asymmetric_quantize_inputs"},
    {70, 0, 'B', "time_major"}, {70, 1, 'b', "fused_activation_function"}, /* BidiSequenceRNN */
    {70, 2, 'B', "merge_outputs"}, {70, 3, 'B', "asymmetric_quantize_inputs"},
    {71, 0, 'b', "fused_activation_function"}, {71, 1, 'f', "cell_clip"}, /* UniSequenceLSTM */
    {71, 2, 'f', "proj_clip"}, {71, 3, 'B', "time_major"},
    {71, 4, 'B', "asymmetric_quantize_inputs"}, {71, 5, 'B', "diagonal_recurrent_tensors"},
    {74, 0, 'B', "align_corners"}, {74, 1, 'B', "half_pixel_centers"}, /* ResizeNearest */
    {75, 0, 'f', "alpha"}, /* LeakyRelu */
    {77, 0, 'b', "mode"}, /* MirrorPad */
    {79, 0, 'i', "num_splits"}, /* SplitV */
    {80, 0, 'b', "idx_out_type"}, /* Unique */
    {87, 0, 'i', "seq_dim"}, {87, 1, 'i', "batch_dim"}, /* ReverseSequence */
    {92, 0, 'i', "then_subgraph_index"}, {92, 1, 'i', "else_subgraph_index"}, /* If */
    {93, 0, 'i', "cond_subgraph_index"}, {93, 1, 'i', "body_subgraph_index"}, /* While */
    {94, 0, 'i', "block_size"}, /* DepthToSpace */
    {101, 0, 'B', "adj_x"}, {101, 1, 'B', "adj_y"}, /* BatchMatMul */
    {101, 2, 'B', "asymmetric_quantize_inputs"},
    {102, 0, 'B', "exclusive"}, {102, 1, 'B', "reverse"}, /* Cumsum */
    {103, 0, 'i', "init_subgraph_index"}, /* CallOnce */
    {106, 0, 'b', "padding"}, {106, 1, 'i', "stride_d"}, {106, 2, 'i', "stride_w"}, /* Conv3D */
    {106, 3, 'i', "stride_h"}, {106, 4, 'b', "fused_activation_function"},
    {106, 5, 'i', "dilation_d_factor"}, {106, 6, 'i', "dilation_w_factor"},
    {106, 7, 'i', "dilation_h_factor"},
    {107, 0, 'i', "table_id"}, {107, 1, 'b', "key_dtype"}, {107, 2, 'b', "value_dtype"},
    {111, 0, 's', "container"}, {111, 1, 's', "shared_name"}, /* VarHandle */
    {114, 0, 'l', "seed"}, {114, 1, 'l', "seed2"}, /* Random */
    {115, 0, 'F', "boundaries"}, /* Bucketize */
    {116, 0, 'B', "approximate"}, /* Gelu */
};

/* TFLite TensorType -> ti_dtype; types without one (complex, resource, variant, int4, ...)
 * map to TI_DTYPE_UNKNOWN (a session refuses them when a node uses them). */
TI__PRIVATE ti_dtype ti__tfl_dtype(int64_t t) {
    switch (t) {
    case 0: return TI_DTYPE_F32;
    case 1: return TI_DTYPE_F16;
    case 2: return TI_DTYPE_I32;
    case 3: return TI_DTYPE_U8;
    case 4: return TI_DTYPE_I64;
    case 5: return TI_DTYPE_STRING;
    case 6: return TI_DTYPE_BOOL;
    case 7: return TI_DTYPE_I16;
    case 9: return TI_DTYPE_I8;
    case 10: return TI_DTYPE_F64;
    case 12: return TI_DTYPE_U64;
    case 15: return TI_DTYPE_U32;
    case 16: return TI_DTYPE_U16;
    case 18: return TI_DTYPE_BF16;
    default: return TI_DTYPE_UNKNOWN;
    }
}

/* Parsing state. */
typedef struct ti__tfl {
    ti_model *m;
    ti_error *err;
    const char *file;
    const uint8_t *data; /* the caller's bytes, read in place until the final copy */
    size_t size;
    ti__fb b;
    int max_rank;
    int base;       /* value index of tensor 0 */
    int n_tensors;
    uint32_t n_buffers;
    ti__fb_vec buffers;
    uint32_t n_codes;
    const char **code_names; /* op name per operator code (pool) */
    const char **sig_names;  /* per tensor: the SignatureDef name, or NULL (temporary) */
    uint64_t *data_off;      /* per tensor: 1 + file offset of in-place data, 0 none (temporary) */
    unsigned char *named;    /* per tensor: 1 when the file (or a signature) names it (temporary) */
    uint64_t elems, max_elems; /* indices and attribute values taken from shared tables */
    char *name_buf;          /* NUL-terminated copy of a name (temporary) */
    size_t name_cap;
} ti__tfl;

/* Copies a name into buf for messages: at most 80 bytes, control bytes as '?'. */
TI__PRIVATE void ti__tfl_printable(char *buf, size_t cap, const uint8_t *s, size_t n) {
    size_t k = 0;
    for (size_t i = 0; i < n && k + 4 < cap && i < 80; i++)
        buf[k++] = s[i] < 0x20 || s[i] == 0x7f ? '?' : (char)s[i];
    if (n > 80 && k + 4 < cap) buf[k++] = '.', buf[k++] = '.', buf[k++] = '.';
    buf[k] = 0;
}

TI__PRIVATE ti_status ti__tfl_oom(ti__tfl *x) {
    return ti__fail(x->err, TI_ERR_OUT_OF_MEMORY, x->file, "out of memory while reading the model");
}

/* A flatbuffer fault, reported with what was being read ("subgraph 0, tensor 12"). */
TI__PRIVATE ti_status ti__tfl_bad(ti__tfl *x, const char *where) {
    char d[200];
    ti__fb_describe(&x->b, d, sizeof d);
    return ti__fail(x->err, TI_ERR_BAD_MODEL, x->file, "malformed flatbuffer (%s): %s", where, d);
}

/* Counts values copied out of the file against a budget proportional to its size: tables
 * and vectors may be shared by many operators or tensors, so the file size alone does not
 * bound what the model would hold. */
TI__PRIVATE ti_status ti__tfl_take(ti__tfl *x, uint64_t n, const char *what) {
    x->elems += n;
    if (x->elems <= x->max_elems) return TI_OK;
    return ti__fail(x->err, TI_ERR_OUT_OF_MEMORY, x->file,
                    "%s: the model refers to more than %llu indices and values in all (its "
                    "tables are shared more than a %zu-byte file allows)", what,
                    (unsigned long long)x->max_elems, x->size);
}

/* NUL-terminated copy of a name in x->name_buf, cut at the first NUL byte of the file's
 * string (valid until the next call). */
TI__PRIVATE const char *ti__tfl_cstr(ti__tfl *x, const uint8_t *s, size_t n) {
    const uint8_t *z = n ? (const uint8_t *)memchr(s, 0, n) : NULL;
    if (z != NULL) n = (size_t)(z - s);
    if (n + 1 > x->name_cap) {
        size_t cap = x->name_cap ? x->name_cap : 256;
        while (cap < n + 1) cap *= 2;
        char *nb = (char *)ti__malloc(&x->m->al, cap);
        if (nb == NULL) return NULL;
        ti__free(&x->m->al, x->name_buf, x->name_cap);
        x->name_buf = nb;
        x->name_cap = cap;
    }
    if (n) memcpy(x->name_buf, s, n);
    x->name_buf[n] = 0;
    return x->name_buf;
}

/* The name of tensor t for messages ("12 'conv/weights'"). */
TI__PRIVATE void ti__tfl_tensor_label(ti__tfl *x, int t, char *buf, size_t cap) {
    const char *nm = t >= 0 && t < x->m->n_values - x->base ? x->m->values[x->base + t].name : "";
    char p[96];
    ti__tfl_printable(p, sizeof p, (const uint8_t *)nm, strlen(nm));
    snprintf(buf, cap, "%d '%s'", t, p);
}

/* ---- operator codes and signatures --------------------------------------------------- */

TI__PRIVATE ti_status ti__tfl_opcodes(ti__tfl *x, const ti__fb_table *model) {
    ti__fb_vec v;
    char where[64];
    ti__fb_vector(&x->b, model, 1, 4, &v);
    if (x->b.fault) return ti__tfl_bad(x, "operator_codes");
    x->n_codes = v.len;
    x->code_names = (const char **)ti__pool_alloc(&x->m->pool, sizeof(char *) * ((size_t)v.len + 1));
    if (x->code_names == NULL) return ti__tfl_oom(x);
    for (uint32_t i = 0; i < v.len; i++) {
        ti__fb_table oc;
        const uint8_t *cc;
        size_t cc_len;
        snprintf(where, sizeof where, "operator code %u", (unsigned)i);
        ti__fb_vec_table(&x->b, &v, i, &oc);
        /* TFLite reads the larger of the old byte code and the newer int32 code */
        int64_t dep = ti__fb_i(&x->b, &oc, 0, 1, 0), code = ti__fb_i(&x->b, &oc, 3, 4, 0);
        if (dep > code) code = dep;
        ti__fb_string(&x->b, &oc, 1, &cc, &cc_len);
        if (x->b.fault) return ti__tfl_bad(x, where);
        const char *name;
        if (code == TI__TFL_CUSTOM) {
            const uint8_t *z = cc_len ? (const uint8_t *)memchr(cc, 0, cc_len) : NULL;
            if (cc_len == 0 || z != NULL)
                return ti__fail(x->err, TI_ERR_BAD_MODEL, x->file,
                                "%s is CUSTOM but its custom_code is %s", where,
                                cc_len == 0 ? "empty" : "cut by a NUL byte");
            name = ti__pool_strndup(&x->m->pool, (const char *)cc, cc_len);
        } else if (code >= 0 && code < (int64_t)TI__COUNTOF(ti__tfl_op_names)) {
            name = ti__tfl_op_names[code];
        } else {
            char tmp[32];
            snprintf(tmp, sizeof tmp, "BUILTIN_%lld", (long long)code);
            name = ti__pool_strndup(&x->m->pool, tmp, strlen(tmp));
        }
        if (name == NULL) return ti__tfl_oom(x);
        x->code_names[i] = name;
    }
    return TI_OK;
}

/* Names of subgraph 0's inputs and outputs from the first SignatureDef that maps it. */
TI__PRIVATE ti_status ti__tfl_signatures(ti__tfl *x, const ti__fb_table *model) {
    ti__fb_vec sigs;
    ti__fb_vector(&x->b, model, 7, 4, &sigs);
    if (x->b.fault) return ti__tfl_bad(x, "signature_defs");
    for (uint32_t i = 0; i < sigs.len; i++) {
        ti__fb_table sd;
        char where[64];
        snprintf(where, sizeof where, "signature %u", (unsigned)i);
        ti__fb_vec_table(&x->b, &sigs, i, &sd);
        uint64_t sub = ti__fb_u(&x->b, &sd, 4, 4, 0);
        if (x->b.fault) return ti__tfl_bad(x, where);
        if (sub != 0) continue;
        for (int io = 0; io < 2; io++) {
            ti__fb_vec maps;
            ti__fb_vector(&x->b, &sd, io, 4, &maps);
            for (uint32_t j = 0; j < maps.len && !x->b.fault; j++) {
                ti__fb_table tm;
                const uint8_t *s;
                size_t n;
                ti__fb_vec_table(&x->b, &maps, j, &tm);
                ti__fb_string(&x->b, &tm, 0, &s, &n);
                uint64_t t = ti__fb_u(&x->b, &tm, 1, 4, 0);
                if (x->b.fault) break;
                char p[96];
                ti__tfl_printable(p, sizeof p, s, n);
                if (t >= (uint64_t)x->n_tensors)
                    return ti__fail(x->err, TI_ERR_BAD_MODEL, x->file,
                                    "%s %s '%s' refers to tensor %llu (subgraph 0 has %d "
                                    "tensors)", where, io ? "output" : "input", p,
                                    (unsigned long long)t, x->n_tensors);
                const uint8_t *z = n ? (const uint8_t *)memchr(s, 0, n) : NULL;
                if (z != NULL) n = (size_t)(z - s);
                if (n == 0 || x->sig_names[t] != NULL) continue;
                if ((x->sig_names[t] = ti__pool_strndup(&x->m->pool, (const char *)s, n)) == NULL)
                    return ti__tfl_oom(x);
            }
            if (x->b.fault) return ti__tfl_bad(x, where);
        }
        break; /* the first signature of subgraph 0 names it */
    }
    return TI_OK;
}

/* ---- tensors ------------------------------------------------------------------------ */

/* Quantization parameters: scale[], zero_point[] and quantized_dimension (min, max and
 * details are not used). As TFLite's interpreter checks them. */
TI__PRIVATE ti_status ti__tfl_quant(ti__tfl *x, const ti__fb_table *q, ti__value *val,
                                    const char *label) {
    ti__fb_vec sc, zp;
    ti__fb_vector(&x->b, q, 2, 4, &sc);
    ti__fb_vector(&x->b, q, 3, 8, &zp);
    int64_t qd = ti__fb_i(&x->b, q, 6, 4, 0);
    if (x->b.fault) return ti__tfl_bad(x, label);
    if (sc.len == 0) return TI_OK; /* not quantized */
    if (zp.len != sc.len)
        return ti__fail(x->err, TI_ERR_BAD_MODEL, x->file,
                        "tensor %s has %u quantization scales and %u zero points", label,
                        (unsigned)sc.len, (unsigned)zp.len);
    if (sc.len > 1) {
        if (qd < 0 || qd >= val->rank)
            return ti__fail(x->err, TI_ERR_BAD_MODEL, x->file,
                            "tensor %s: quantized_dimension %lld is not a dim of its %d dims",
                            label, (long long)qd, val->rank);
        if (val->dims[qd] != (int64_t)sc.len)
            return ti__fail(x->err, TI_ERR_BAD_MODEL, x->file,
                            "tensor %s has %u quantization scales but dim %lld is %lld", label,
                            (unsigned)sc.len, (long long)qd, (long long)val->dims[qd]);
    }
    ti_status st = ti__tfl_take(x, (uint64_t)sc.len * 2, label);
    if (st != TI_OK) return st;
    float *scale = (float *)ti__pool_alloc(&x->m->pool, sizeof(float) * sc.len);
    int64_t *zero = (int64_t *)ti__pool_alloc(&x->m->pool, sizeof(int64_t) * sc.len);
    if (scale == NULL || zero == NULL) return ti__tfl_oom(x);
    /* a zero point outside the element type's range (or a scale that is not a finite,
     * non-negative number) is no tensor TFLite's converter writes; refused here so that
     * kernels may rely on (q - zero_point) fitting in 17 bits */
    int64_t zlo = INT64_MIN, zhi = INT64_MAX;
    switch (val->dtype) {
    case TI_DTYPE_U8: zlo = 0; zhi = 255; break;
    case TI_DTYPE_I8: zlo = -128; zhi = 127; break;
    case TI_DTYPE_I16: zlo = -32768; zhi = 32767; break;
    case TI_DTYPE_I32: zlo = INT32_MIN; zhi = INT32_MAX; break;
    default: break;
    }
    for (uint32_t i = 0; i < sc.len; i++) {
        scale[i] = ti__fb_vec_f32(&x->b, &sc, i);
        zero[i] = ti__fb_vec_i(&x->b, &zp, i);
        if (!(scale[i] >= 0.0f && scale[i] <= 3.0e38f) || zero[i] < zlo || zero[i] > zhi)
            return ti__fail(x->err, TI_ERR_BAD_MODEL, x->file,
                            "tensor %s: quantization %u (scale %g, zero point %lld) is out of "
                            "range for its element type",
                            label, (unsigned)i, (double)scale[i], (long long)zero[i]);
    }
    val->quant.count = (int)sc.len;
    val->quant.axis = (int)qd;
    val->quant.scale = scale;
    val->quant.zero_point = zero;
    return TI_OK;
}

/* Tensor t of subgraph 0: a new value with its dtype, shape, quantization and, when its
 * buffer holds data, the data (used in place: x->data_off records where). */
TI__PRIVATE ti_status ti__tfl_tensor(ti__tfl *x, const ti__fb_vec *tensors, int t) {
    ti_model *m = x->m;
    ti__fb *b = &x->b;
    ti__fb_table tt, q, sp;
    ti__fb_vec shape, sig;
    const uint8_t *nm;
    size_t nm_len;
    char where[48], label[128], p[96];
    ti_status st;
    snprintf(where, sizeof where, "subgraph 0, tensor %d", t);
    ti__fb_vec_table(b, tensors, (uint32_t)t, &tt);
    ti__fb_string(b, &tt, 3, &nm, &nm_len);
    ti__fb_vector(b, &tt, 0, 4, &shape);
    int64_t type = ti__fb_i(b, &tt, 1, 1, 0);
    uint64_t buf = ti__fb_u(b, &tt, 2, 4, 0);
    int has_q = ti__fb_subtable(b, &tt, 4, &q);
    int is_var = ti__fb_u(b, &tt, 5, 1, 0) != 0;
    int sparse = ti__fb_subtable(b, &tt, 6, &sp);
    ti__fb_vector(b, &tt, 7, 4, &sig);
    if (b->fault) return ti__tfl_bad(x, where);
    ti__tfl_printable(p, sizeof p, nm, nm_len);
    snprintf(label, sizeof label, "%d '%s'", t, p);

    const char *name = x->sig_names[t];
    if (name == NULL && (name = ti__tfl_cstr(x, nm, nm_len)) == NULL) return ti__tfl_oom(x);
    char unnamed[32];
    x->named[t] = name[0] != 0;
    if (name[0] == 0) { /* a name to look the tensor up by and to show in messages */
        snprintf(unnamed, sizeof unnamed, "tensor_%d", t);
        name = unnamed;
    }
    int v = ti__model_add_value(m, name);
    if (v < 0) return ti__tfl_oom(x);
    ti__value *val = &m->values[v];
    val->dtype = ti__tfl_dtype(type);
    if (shape.len > (uint32_t)x->max_rank)
        return ti__fail(x->err, TI_ERR_BAD_MODEL, x->file, "tensor %s has %u dims (limit %d)",
                        label, (unsigned)shape.len, x->max_rank);
    val->rank = (int)shape.len;
    if (sparse)
        return ti__fail(x->err, TI_ERR_UNSUPPORTED, x->file,
                        "tensor %s is sparse (sparsity parameters are not supported)", label);
    /* buffer 0 is the empty sentinel: no data (TFLite does not even require it to exist) */
    const uint8_t *data = NULL;
    uint64_t data_len = 0, off = 0;
    if (buf != 0) {
        ti__fb_table bt;
        ti__fb_vec dv;
        if (buf >= x->n_buffers)
            return ti__fail(x->err, TI_ERR_BAD_MODEL, x->file,
                            "tensor %s: buffer %llu is out of range (the model has %u buffers)",
                            label, (unsigned long long)buf, (unsigned)x->n_buffers);
        snprintf(where, sizeof where, "buffer %llu", (unsigned long long)buf);
        ti__fb_vec_table(b, &x->buffers, (uint32_t)buf, &bt);
        ti__fb_vector(b, &bt, 0, 1, &dv);
        uint64_t ext_off = ti__fb_u(b, &bt, 1, 8, 0), ext_size = ti__fb_u(b, &bt, 2, 8, 0);
        if (b->fault) return ti__tfl_bad(x, where);
        if (dv.len > 0) {
            off = dv.pos;
            data_len = dv.len;
        } else if (ext_off > 1) { /* large models: data after the flatbuffer, file offsets */
            if (ext_off > (uint64_t)x->size || ext_size > (uint64_t)x->size - ext_off)
                return ti__fail(x->err, TI_ERR_BAD_MODEL, x->file,
                                "tensor %s: buffer %llu (offset %llu, size %llu) lies outside "
                                "the %zu-byte file", label, (unsigned long long)buf,
                                (unsigned long long)ext_off, (unsigned long long)ext_size,
                                x->size);
            off = ext_off;
            data_len = ext_size;
        }
        if (data_len > 0) data = x->data + off;
    }
    int is_const = data != NULL || is_var;
    /* dims: `shape`; for activations shape_signature's -1 marks a free dim (the batch) */
    int symbolic = !is_const && sig.len == shape.len;
    for (int d = 0; d < val->rank; d++) {
        val->dims[d] = ti__fb_vec_i(b, &shape, (uint32_t)d);
        if (symbolic && ti__fb_vec_i(b, &sig, (uint32_t)d) < 0) val->dims[d] = -1;
        if (val->dims[d] >= 0) continue;
        if (is_const)
            return ti__fail(x->err, TI_ERR_BAD_MODEL, x->file,
                            "tensor %s has data but dim %d is %lld", label, d,
                            (long long)val->dims[d]);
        val->dims[d] = -1;
        val->dim_names[d] = "?";
    }
    if (has_q && (st = ti__tfl_quant(x, &q, val, label)) != TI_OK) return st;
    if (!is_const) return TI_OK; /* an activation: its shape comes from inference */

    /* a constant (or variable state): size within the caps, data of that size */
    size_t bytes = 0;
    if ((st = ti__model_check_const(m, val->name, val->dtype, val->rank, val->dims, &bytes,
                                    x->err)) != TI_OK)
        return st;
    size_t esize = ti_dtype_size(val->dtype);
    val->is_const = 1;
    if (data == NULL) {
        /* variable tensor (recurrent state) without data: TFLite zero-fills it at allocation
         * (int8 with its zero point, ResetVariableTensor); a run reads it as that constant */
        if (esize == 0)
            return ti__fail(x->err, TI_ERR_UNSUPPORTED, x->file,
                            "variable tensor %s has type %lld, which has no fixed size", label,
                            (long long)type);
        unsigned char *z = (unsigned char *)ti__pool_alloc(&m->pool, bytes);
        if (z == NULL) return ti__tfl_oom(x);
        if (val->dtype == TI_DTYPE_I8 && val->quant.count > 0)
            memset(z, (int)(val->quant.zero_point[0] & 0xff), bytes);
        val->data = z;
        val->bytes = bytes;
        return TI_OK;
    }
    if (esize == 0) {
        bytes = (size_t)data_len; /* strings, int4, ...: kept as they are, never computed on */
    } else if (data_len != (uint64_t)bytes) {
        char dims[96];
        size_t k = 0;
        dims[0] = 0;
        for (int d = 0; d < val->rank && k + 24 < sizeof dims; d++)
            k += (size_t)snprintf(dims + k, sizeof dims - k, "%s%lld", d ? "x" : "",
                                  (long long)val->dims[d]);
        return ti__fail(x->err, TI_ERR_BAD_MODEL, x->file,
                        "tensor %s: buffer %llu has %llu bytes, expected %zu (%s [%s])", label,
                        (unsigned long long)buf, (unsigned long long)data_len, bytes,
                        ti_dtype_name(val->dtype), dims);
    }
    val->bytes = bytes;
    if (esize > 1 && off % esize != 0) {
        /* the copy of the file is 16-aligned, so the file offset decides the alignment:
         * a misaligned buffer gets an aligned copy of its own (kernels cast the pointer) */
        void *c = ti__pool_alloc_raw(&m->pool, bytes);
        if (c == NULL) return ti__tfl_oom(x);
        memcpy(c, data, bytes);
        val->data = c;
        return TI_OK;
    }
    x->data_off[t] = off + 1;
    return TI_OK;
}

/* ---- operators ---------------------------------------------------------------------- */

/* Tensor index -> value index; -1 (an omitted optional tensor) stays -1. */
TI__PRIVATE ti_status ti__tfl_index(ti__tfl *x, int64_t t, const char *where, int *out) {
    *out = -1;
    if (t == -1) {
        *out = -1;
        return TI_OK;
    }
    if (t < 0 || t >= x->n_tensors)
        return ti__fail(x->err, TI_ERR_BAD_MODEL, x->file,
                        "%s is tensor %lld, out of range (subgraph 0 has %d tensors)", where,
                        (long long)t, x->n_tensors);
    *out = x->base + (int)t;
    return TI_OK;
}

/* Builtin options -> attributes (one per present field of the table). Returns the number
 * of attributes written at attrs (room for every field of the type was reserved). */
TI__PRIVATE ti_status ti__tfl_options(ti__tfl *x, unsigned type, const ti__fb_table *opt,
                                      ti__attr *attrs, int *n_attrs, const char *where) {
    ti__fb *b = &x->b;
    int n = 0;
    ti_status st;
    for (size_t f = 0; f < TI__COUNTOF(ti__tfl_opt_fields); f++) {
        const ti__tfl_optfield *fd = &ti__tfl_opt_fields[f];
        if (fd->type != type) continue;
        ti__attr *a = &attrs[n];
        a->name = fd->name;
        a->tensor = -1;
        switch (fd->kind) {
        case 'b': case 'B': case 'i': case 'u': case 'l': case 'f': {
            uint32_t size = fd->kind == 'b' || fd->kind == 'B' ? 1 : fd->kind == 'l' ? 8 : 4;
            if (ti__fb_field(b, opt, fd->id, size) == 0) continue;
            if (fd->kind == 'f') {
                a->type = TI__ATTR_FLOAT;
                a->f = ti__fb_f32(b, opt, fd->id, 0.0f);
            } else {
                a->type = TI__ATTR_INT;
                if (fd->kind == 'B') a->i = ti__fb_u(b, opt, fd->id, 1, 0) != 0;
                else if (fd->kind == 'u') a->i = (int64_t)ti__fb_u(b, opt, fd->id, 4, 0);
                else a->i = ti__fb_i(b, opt, fd->id, size, 0);
            }
            break;
        }
        case 'I': case 'F': {
            ti__fb_vec v;
            if (!ti__fb_vector(b, opt, fd->id, 4, &v)) break;
            if (v.len > TI__TFL_MAX_ATTR_ELEMS)
                return ti__fail(x->err, TI_ERR_BAD_MODEL, x->file,
                                "%s: option '%s' has %u values (limit %d)", where, fd->name,
                                (unsigned)v.len, TI__TFL_MAX_ATTR_ELEMS);
            if ((st = ti__tfl_take(x, v.len, where)) != TI_OK) return st;
            a->count = (int)v.len;
            if (fd->kind == 'I') {
                int64_t *vals = (int64_t *)ti__pool_alloc(&x->m->pool, sizeof(int64_t) * (v.len + 1));
                if (vals == NULL) return ti__tfl_oom(x);
                for (uint32_t i = 0; i < v.len; i++) vals[i] = ti__fb_vec_i(b, &v, i);
                a->type = TI__ATTR_INTS;
                a->ints = vals;
            } else {
                float *vals = (float *)ti__pool_alloc(&x->m->pool, sizeof(float) * (v.len + 1));
                if (vals == NULL) return ti__tfl_oom(x);
                for (uint32_t i = 0; i < v.len; i++) vals[i] = ti__fb_vec_f32(b, &v, i);
                a->type = TI__ATTR_FLOATS;
                a->floats = vals;
            }
            break;
        }
        default: { /* 's' */
            const uint8_t *s;
            size_t len;
            if (!ti__fb_string(b, opt, fd->id, &s, &len)) break;
            if ((st = ti__tfl_take(x, len, where)) != TI_OK) return st;
            a->type = TI__ATTR_STRING;
            a->s = ti__pool_strndup(&x->m->pool, (const char *)s, len);
            a->s_len = len;
            if (a->s == NULL) return ti__tfl_oom(x);
            break;
        }
        }
        if (b->fault) return ti__tfl_bad(x, where);
        if (a->type != TI__ATTR_NONE) n++;
    }
    if (b->fault) return ti__tfl_bad(x, where);
    memset(&attrs[n], 0, sizeof attrs[n]); /* the slot tried last may hold a name */
    attrs[n].tensor = -1;
    *n_attrs = n;
    return TI_OK;
}

TI__PRIVATE ti_status ti__tfl_operator(ti__tfl *x, const ti__fb_vec *ops, int index) {
    ti_model *m = x->m;
    ti__fb *b = &x->b;
    ti__fb_table ot, opt;
    ti__fb_vec in, out, cust, inter;
    char where[96];
    ti_status st;
    snprintf(where, sizeof where, "subgraph 0, operator %d", index);
    ti__fb_vec_table(b, ops, (uint32_t)index, &ot);
    uint64_t code = ti__fb_u(b, &ot, 0, 4, 0);
    ti__fb_vector(b, &ot, 1, 4, &in);
    ti__fb_vector(b, &ot, 2, 4, &out);
    unsigned opt_type = ti__fb_union(b, &ot, 3, &opt);
    ti__fb_vector(b, &ot, 5, 1, &cust);
    ti__fb_vector(b, &ot, 8, 4, &inter);
    uint64_t lc_off = ti__fb_u(b, &ot, 9, 8, 0), lc_size = ti__fb_u(b, &ot, 10, 8, 0);
    if (b->fault) return ti__tfl_bad(x, where);
    if (code >= x->n_codes)
        return ti__fail(x->err, TI_ERR_BAD_MODEL, x->file,
                        "operator %d: opcode_index %llu is out of range (the model has %u "
                        "operator codes)", index, (unsigned long long)code, (unsigned)x->n_codes);
    const char *op = x->code_names[code];
    snprintf(where, sizeof where, "operator %d (%s)", index, op);
    if (in.len > TI__TFL_MAX_NODE_IO || out.len > TI__TFL_MAX_NODE_IO ||
        inter.len > TI__TFL_MAX_NODE_IO)
        return ti__fail(x->err, TI_ERR_BAD_MODEL, x->file,
                        "%s has %u inputs, %u outputs and %u intermediates (limit %d each)",
                        where, (unsigned)in.len, (unsigned)out.len, (unsigned)inter.len,
                        TI__TFL_MAX_NODE_IO);
    if ((st = ti__tfl_take(x, (uint64_t)in.len + out.len + inter.len, where)) != TI_OK)
        return st;

    /* custom options: the raw bytes (a flexbuffer), in the table or after the flatbuffer */
    const uint8_t *co = NULL;
    uint64_t co_len = 0;
    if (cust.len > 0) {
        co = b->base + cust.pos;
        co_len = cust.len;
    } else if (lc_off > 1) {
        if (lc_off > (uint64_t)x->size || lc_size > (uint64_t)x->size - lc_off)
            return ti__fail(x->err, TI_ERR_BAD_MODEL, x->file,
                            "%s: custom options (offset %llu, size %llu) lie outside the "
                            "%zu-byte file", where, (unsigned long long)lc_off,
                            (unsigned long long)lc_size, x->size);
        co = x->data + lc_off;
        co_len = lc_size;
    }
    int max_attrs = 0;
    for (size_t f = 0; f < TI__COUNTOF(ti__tfl_opt_fields); f++)
        max_attrs += ti__tfl_opt_fields[f].type == opt_type;
    max_attrs += (co != NULL) + (inter.len > 0);

    ti__node *n = ti__model_add_node(m, (int)in.len, (int)out.len, max_attrs);
    if (n == NULL) return ti__tfl_oom(x);
    n->op = op;
    n->domain = "tflite";
    char what[128];
    for (uint32_t i = 0; i < in.len; i++) {
        snprintf(what, sizeof what, "%s: input %u", where, (unsigned)i);
        if ((st = ti__tfl_index(x, ti__fb_vec_i(b, &in, i), what, &n->inputs[i])) != TI_OK)
            return st;
    }
    for (uint32_t i = 0; i < out.len; i++) {
        snprintf(what, sizeof what, "%s: output %u", where, (unsigned)i);
        if ((st = ti__tfl_index(x, ti__fb_vec_i(b, &out, i), what, &n->outputs[i])) != TI_OK)
            return st;
    }
    /* TFLite operators have no names: the node takes its first output's name when the file
     * gives one, else "operator_<index in the file>" */
    int named = out.len > 0 && n->outputs[0] >= 0 && x->named[n->outputs[0] - x->base];
    if (named) {
        n->name = m->values[n->outputs[0]].name;
    } else {
        char tmp[32];
        snprintf(tmp, sizeof tmp, "operator_%d", index);
        if ((n->name = ti__pool_strndup(&m->pool, tmp, strlen(tmp))) == NULL)
            return ti__tfl_oom(x);
    }
    int na = 0;
    if (opt.pos != 0 && (st = ti__tfl_options(x, opt_type, &opt, n->attrs, &na, where)) != TI_OK)
        return st;
    if (co != NULL) {
        if ((st = ti__tfl_take(x, co_len, where)) != TI_OK) return st;
        ti__attr *a = &n->attrs[na++];
        a->name = "custom_options";
        a->type = TI__ATTR_STRING;
        a->s = ti__pool_strndup(&m->pool, (const char *)co, (size_t)co_len);
        a->s_len = (size_t)co_len;
        a->tensor = -1;
        if (a->s == NULL) return ti__tfl_oom(x);
    }
    if (inter.len > 0) {
        /* tensors internal to the op (quantized LSTM's gate scales): value indices */
        int64_t *vals = (int64_t *)ti__pool_alloc(&m->pool, sizeof(int64_t) * inter.len);
        if (vals == NULL) return ti__tfl_oom(x);
        for (uint32_t i = 0; i < inter.len; i++) {
            int v;
            snprintf(what, sizeof what, "%s: intermediate %u", where, (unsigned)i);
            if ((st = ti__tfl_index(x, ti__fb_vec_i(b, &inter, i), what, &v)) != TI_OK)
                return st;
            vals[i] = v;
        }
        ti__attr *a = &n->attrs[na++];
        a->name = "intermediates";
        a->type = TI__ATTR_INTS;
        a->ints = vals;
        a->count = (int)inter.len;
        a->tensor = -1;
    }
    n->n_attrs = na;
    return TI_OK;
}

/* ---- validation and execution order -------------------------------------------------- */

TI__PRIVATE ti_status ti__tfl_node_fail(ti__tfl *x, int i, const char *reason) {
    const ti__node *n = &x->m->nodes[i];
    return ti__fail_node(x->err, TI_ERR_BAD_MODEL, x->file, i, n->name, n->op, "%s", reason);
}

/* Checks that every node input is a graph input, a constant or the output of one node, and
 * that no value has two producers; keeps TFLite's execution order when it is topological,
 * else reorders and refuses cycles (ti__model_order); names what is wrong in TFLite's words. */
TI__PRIVATE ti_status ti__tfl_validate(ti__tfl *x) {
    ti_model *m = x->m;
    ti__order_bad b;
    char l1[128], l2[160], reason[320];
    int r = ti__model_order(m, &b);
    if (r == TI__ORDER_OK) return TI_OK;
    if (r == TI__ORDER_OOM) return ti__tfl_oom(x);
    if (r == TI__ORDER_CYCLE)
        return ti__tfl_node_fail(x, b.node, "the graph has a cycle through this operator");
    ti__tfl_tensor_label(x, b.value - x->base, l1, sizeof l1);
    if (r == TI__ORDER_NO_OUTPUT)
        return ti__fail(x->err, TI_ERR_BAD_MODEL, x->file, "graph output tensor %s is not a graph "
                        "input, a constant or the output of any operator", l1);
    if (r == TI__ORDER_NO_INPUT) {
        snprintf(reason, sizeof reason, "input tensor %s is not a graph input, a constant or "
                 "the output of any operator", l1);
    } else {
        if (b.other >= 0)
            snprintf(l2, sizeof l2, "operator %d (%s)", b.other, m->nodes[b.other].op);
        snprintf(reason, sizeof reason, "output tensor %s is also %s", l1,
                 b.other == -2 ? "a graph input" : b.other == -3 ? "a constant" : l2);
    }
    return ti__tfl_node_fail(x, b.node, reason);
}

/* ---- the model ---------------------------------------------------------------------- */

TI__PRIVATE ti_status ti__tfl_model(ti__tfl *x) {
    ti_model *m = x->m;
    ti__fb *b = &x->b;
    ti__fb_table model, sg;
    ti__fb_vec subgraphs, tensors, ins, outs, ops, ext;
    ti_status st;
    char p[16];
    if (x->size < 8)
        return ti__fail(x->err, TI_ERR_BAD_MODEL, x->file,
                        "not a TFLite model: %zu bytes is too short", x->size);
    if (memcmp(x->data + 4, "TFL3", 4) != 0) {
        ti__tfl_printable(p, sizeof p, x->data + 4, 4);
        return ti__fail(x->err, TI_ERR_BAD_MODEL, x->file,
                        "not a TFLite model: file identifier is '%s', expected 'TFL3'", p);
    }
    ti__fb_init(b, x->data, x->size);
    ti__fb_root(b, &model);
    uint64_t version = ti__fb_u(b, &model, 0, 4, 0);
    if (b->fault) return ti__tfl_bad(x, "model");
    if (version != 3)
        return ti__fail(x->err, TI_ERR_UNSUPPORTED, x->file,
                        "TFLite schema version %llu is not supported (expected 3)",
                        (unsigned long long)version);
    ti__fb_vector(b, &model, 9, 4, &ext); /* external_buffers: weights in other files */
    ti__fb_vector(b, &model, 2, 4, &subgraphs);
    ti__fb_vector(b, &model, 4, 4, &x->buffers);
    if (b->fault) return ti__tfl_bad(x, "model");
    if (ext.len > 0)
        return ti__fail(x->err, TI_ERR_UNSUPPORTED, x->file,
                        "the model keeps %u buffers in external files (external_buffers)",
                        (unsigned)ext.len);
    if (subgraphs.len == 0)
        return ti__fail(x->err, TI_ERR_BAD_MODEL, x->file, "the model has no subgraphs");
    x->n_buffers = x->buffers.len;
    if ((st = ti__tfl_opcodes(x, &model)) != TI_OK) return st;
    ti__fb_vec_table(b, &subgraphs, 0, &sg);
    ti__fb_vector(b, &sg, 0, 4, &tensors);
    ti__fb_vector(b, &sg, 1, 4, &ins);
    ti__fb_vector(b, &sg, 2, 4, &outs);
    ti__fb_vector(b, &sg, 3, 4, &ops);
    if (b->fault) return ti__tfl_bad(x, "subgraph 0");
    if (tensors.len > (uint32_t)(INT_MAX / 4))
        return ti__fail(x->err, TI_ERR_BAD_MODEL, x->file, "subgraph 0 has %u tensors",
                        (unsigned)tensors.len);
    if (ops.len > (uint32_t)m->desc.max_nodes)
        return ti__fail(x->err, TI_ERR_OUT_OF_MEMORY, x->file,
                        "the graph has %u operators, more than max_nodes (%d)",
                        (unsigned)ops.len, m->desc.max_nodes);
    x->n_tensors = (int)tensors.len;
    size_t nt1 = (size_t)x->n_tensors + 1;
    x->sig_names = (const char **)ti__calloc(&m->al, sizeof(char *) * nt1);
    x->data_off = (uint64_t *)ti__calloc(&m->al, sizeof(uint64_t) * nt1);
    x->named = (unsigned char *)ti__calloc(&m->al, nt1);
    if (x->sig_names == NULL || x->data_off == NULL || x->named == NULL) return ti__tfl_oom(x);
    if ((st = ti__tfl_signatures(x, &model)) != TI_OK) return st;

    /* tensors, then graph inputs and outputs, then operators */
    x->base = m->n_values;
    if (!ti__grow(&m->al, (void **)&m->values, &m->cap_values, m->n_values + x->n_tensors,
                  sizeof(ti__value)))
        return ti__tfl_oom(x);
    for (int t = 0; t < x->n_tensors; t++)
        if ((st = ti__tfl_tensor(x, &tensors, t)) != TI_OK) return st;
    char what[64];
    for (uint32_t i = 0; i < ins.len; i++) {
        int v;
        snprintf(what, sizeof what, "subgraph 0: graph input %u", (unsigned)i);
        if ((st = ti__tfl_index(x, ti__fb_vec_i(b, &ins, i), what, &v)) != TI_OK) return st;
        if (v < 0)
            return ti__fail(x->err, TI_ERR_BAD_MODEL, x->file, "%s is tensor -1", what);
        if (m->values[v].is_const) continue; /* a constant listed as an input: not fed */
        for (int j = 0; j < m->n_inputs; j++)
            if (m->inputs[j] == v) {
                char l[128];
                ti__tfl_tensor_label(x, v - x->base, l, sizeof l);
                return ti__fail(x->err, TI_ERR_BAD_MODEL, x->file,
                                "tensor %s is listed twice as a graph input", l);
            }
        if (!ti__model_add_input(m, v)) return ti__tfl_oom(x);
    }
    for (uint32_t i = 0; i < outs.len; i++) {
        int v;
        snprintf(what, sizeof what, "subgraph 0: graph output %u", (unsigned)i);
        if ((st = ti__tfl_index(x, ti__fb_vec_i(b, &outs, i), what, &v)) != TI_OK) return st;
        if (v < 0)
            return ti__fail(x->err, TI_ERR_BAD_MODEL, x->file, "%s is tensor -1", what);
        if (!ti__model_add_output(m, v)) return ti__tfl_oom(x);
    }
    if (!ti__grow(&m->al, (void **)&m->nodes, &m->cap_nodes, m->n_nodes + (int)ops.len,
                  sizeof(ti__node)))
        return ti__tfl_oom(x);
    for (uint32_t i = 0; i < ops.len; i++)
        if ((st = ti__tfl_operator(x, &ops, (int)i)) != TI_OK) return st;
    if ((st = ti__tfl_validate(x)) != TI_OK) return st;

    /* one copy of the file in the pool; constant data points into it */
    int in_place = 0;
    for (int t = 0; t < x->n_tensors; t++) in_place |= x->data_off[t] != 0;
    if (in_place) {
        uint8_t *copy = (uint8_t *)ti__pool_alloc_raw(&m->pool, x->size);
        if (copy == NULL)
            return ti__fail(x->err, TI_ERR_OUT_OF_MEMORY, x->file,
                            "cannot allocate %zu bytes to keep the model's weights", x->size);
        memcpy(copy, x->data, x->size);
        for (int t = 0; t < x->n_tensors; t++)
            if (x->data_off[t] != 0) m->values[x->base + t].data = copy + (x->data_off[t] - 1);
    }
    m->format = TI_FORMAT_TFLITE;
    m->opset = 0;
    return TI_OK;
}

TI__PRIVATE ti_status ti__tflite_parse(ti_model *m, const uint8_t *data, size_t size,
                                       ti_error *err) {
    ti__tfl x;
    memset(&x, 0, sizeof x);
    x.m = m;
    x.err = err;
    x.file = m->name;
    x.data = data;
    x.size = size;
    x.max_rank = m->desc.max_rank > 0 && m->desc.max_rank < TI_MAX_DIMS ? m->desc.max_rank
                                                                        : TI_MAX_DIMS;
    /* 4 values per file byte: a real model, whose tables are not shared, stays far below */
    x.max_elems = (uint64_t)size * 4 + ((uint64_t)1 << 20);
    if (data == NULL)
        return ti__fail(err, TI_ERR_BAD_MODEL, m->name, "not a TFLite model: no data");
    ti_status st = ti__tfl_model(&x);
    size_t nt1 = (size_t)x.n_tensors + 1;
    ti__free(&m->al, (void *)x.sig_names, sizeof(char *) * nt1);
    ti__free(&m->al, x.data_off, sizeof(uint64_t) * nt1);
    ti__free(&m->al, x.named, nt1);
    ti__free(&m->al, x.name_buf, x.name_cap);
    return st;
}
#endif /* TI_NO_TFLITE */
