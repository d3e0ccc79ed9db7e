/* The op registry: every op the CPU runs, found by ONNX op type. Each cpu/ file exports
 * one table ending in a NULL name. Relies on the cpu/ files coming first in the header.
 * Must stay a list: an op is defined by its shape and run functions, nowhere else. */

static const ti__op *const ti__op_tables[] = {
    ti__ops_unary,    ti__ops_binary,   ti__ops_conv,   ti__ops_gemm,
    ti__ops_pool,     ti__ops_norm,     ti__ops_movement, ti__ops_index,
    ti__ops_generate, ti__ops_reduce,   ti__ops_resize, ti__ops_einsum,
    ti__ops_attention, ti__ops_loss,  ti__ops_rnn,    ti__ops_quant,
};

TI__PRIVATE const ti__op *ti__op_find(const char *domain, const char *name) {
    if (domain != NULL && domain[0] != 0 && strcmp(domain, "ai.onnx") != 0) return NULL;
    for (size_t t = 0; t < TI__COUNTOF(ti__op_tables); t++)
        for (const ti__op *op = ti__op_tables[t]; op->name != NULL; op++)
            if (strcmp(op->name, name) == 0) return op;
    return NULL;
}
