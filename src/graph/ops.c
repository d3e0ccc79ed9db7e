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
