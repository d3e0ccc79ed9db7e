/* QDQ models (tests/models/gen_qdq_models.py: onnxruntime quantize_static on small float
 * models) against onnxruntime's outputs: the session's node info must show the fused
 * integer node (QLinearConv / QLinearMatMul) as many times as list.txt says, or none for a
 * pattern that must not fuse; each quantized output must equal onnxruntime's or be one
 * quantization unit (the scale of its final DequantizeLinear) off, and the number of
 * elements that are off is printed. Float outputs (the non-fusing model's extra output):
 * max|a-b| <= 1e-4 * max|b| + 1e-5. Usage: test_qdq [DIR] (default tests/models/qdq). */
#define TINYINFER_IMPLEMENTATION
#include "tinyinfer.h"
#include "ti_test.h"

static unsigned char *read_all(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = (unsigned char *)malloc((size_t)n + 1);
    if (b != NULL && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    *size = (size_t)n;
    return b;
}

static int load_pb(const char *path, ti_tensor *t) {
    size_t n;
    unsigned char *b = read_all(path, &n);
    if (b == NULL) return 0;
    ti_status st = ti_tensor_decode_onnx(b, n, t, NULL);
    free(b);
    return st == TI_OK;
}

static long g_off_total, g_elems_total;

static void run_one(const char *dir, const char *name, const char *op, int count, double unit,
                    int threads) {
    char path[1024];
    ti_error err;
    snprintf(path, sizeof path, "%s/%s/model.onnx", dir, name);
    ti_model *m = ti_model_load_file(path, NULL, &err);
    if (!TI_CHECK(m != NULL)) {
        printf("  %s: %s\n", name, err.message);
        return;
    }
    ti_session_desc d;
    memset(&d, 0, sizeof d);
    d.backend = TI_BACKEND_CPU;
    d.num_threads = threads;
    ti_session *s = ti_session_create(m, &d, &err);
    if (!TI_CHECK(s != NULL)) {
        printf("  %s: %s\n", name, err.message);
        ti_model_free(m);
        return;
    }
    /* the fusion: count the fused op and any QLinear* node */
    int found = 0, qlinear = 0;
    for (int i = 0; i < ti_session_num_nodes(s); i++) {
        ti_node_info ni;
        if (ti_session_node_info(s, i, &ni) != TI_OK) continue;
        if (strcmp(ni.op, op) == 0) found++;
        if (strncmp(ni.op, "QLinear", 7) == 0) qlinear++;
    }
    if (strcmp(op, "-") == 0) {
        if (!TI_CHECK(qlinear == 0)) printf("  %s: %d QLinear* nodes, expected none\n", name, qlinear);
    } else if (!TI_CHECK(found == count)) {
        printf("  %s: %d %s nodes, expected %d\n", name, found, op, count);
    }
    ti_tensor x;
    snprintf(path, sizeof path, "%s/%s/test_data_set_0/input_0.pb", dir, name);
    if (!TI_CHECK(load_pb(path, &x))) goto done;
    ti_tensor *in = ti_session_input(s, 0);
    TI_CHECK(in != NULL && in->size_bytes == x.size_bytes);
    if (in != NULL && in->size_bytes == x.size_bytes) memcpy(in->data, x.data, x.size_bytes);
    ti_tensor_release(&x);
    if (!TI_CHECK(ti_session_run(s, &err) == TI_OK)) {
        printf("  %s: %s\n", name, err.message);
        goto done;
    }
    for (int o = 0; o < ti_session_num_outputs(s); o++) {
        ti_tensor ref;
        snprintf(path, sizeof path, "%s/%s/test_data_set_0/output_%d.pb", dir, name, o);
        if (!TI_CHECK(load_pb(path, &ref))) continue;
        const ti_tensor *y = ti_session_output(s, o);
        size_t n = ti_tensor_numel(&ref);
        if (!TI_CHECK(y->dtype == TI_DTYPE_F32 && ref.dtype == TI_DTYPE_F32 && ti_tensor_numel(y) == n)) {
            ti_tensor_release(&ref);
            continue;
        }
        const float *a = (const float *)y->data, *b = (const float *)ref.data;
        double maxd = 0, maxb = 0;
        long off = 0;
        for (size_t i = 0; i < n; i++) {
            double dd = fabs((double)a[i] - (double)b[i]);
            if (dd > maxd) maxd = dd;
            if (fabs((double)b[i]) > maxb) maxb = fabs((double)b[i]);
            if (a[i] != b[i]) off++;
        }
        if (o == 0) { /* quantized: within one unit */
            g_off_total += off;
            g_elems_total += (long)n;
            printf("  %-26s threads %d: %ld of %zu outputs differ from onnxruntime, max %.3g units\n",
                   name, threads, off, n, maxd / unit);
            TI_CHECK(maxd <= unit * 1.001 + 1e-6);
        } else {
            printf("  %-26s output %d (float): max|a-b| %.3g\n", name, o, maxd);
            TI_CHECK(maxd <= 1e-4 * maxb + 1e-5);
        }
        ti_tensor_release(&ref);
    }
done:
    ti_session_destroy(s);
    ti_model_free(m);
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : "tests/models/qdq";
    char path[1024], line[512];
    snprintf(path, sizeof path, "%s/list.txt", dir);
    FILE *f = fopen(path, "r");
    if (!TI_CHECK(f != NULL)) return ti_test_summary();
    int tests = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        char name[256], op[64];
        int count;
        double unit;
        if (sscanf(line, "%255s %63s %d %lf", name, op, &count, &unit) != 4) continue;
        run_one(dir, name, op, count, unit, 1);
        run_one(dir, name, op, count, unit, 2);
        tests++;
    }
    fclose(f);
    TI_CHECK(tests >= 10);
    printf("  %d models; %ld of %ld quantized outputs one unit off onnxruntime, the rest equal\n", tests,
           g_off_total, g_elems_total);
    return ti_test_summary();
}
