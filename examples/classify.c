/* classify: image classification with a .tflite or .onnx model.
 *   classify MODEL IMAGE [LABELS] [--top K] [--softmax] [--threads N] [--mean M] [--std S]
 * Loads the image (stb_image: BMP, PNG, JPEG, ...), resizes it to the model's input size
 * (bilinear), converts it to the input's dtype and layout (see ex_fill_input in common.h),
 * runs the model and prints the K best classes (default 5) as "rank score label" lines on
 * stdout, best first; what was loaded and the run time go to stderr.
 * Uses tinyinfer's public API only. Build from the repository root (Debian: libstb-dev):
 *   cc -O2 -I. -I/usr/include/stb examples/classify.c -o classify -lm -lpthread */
#define _POSIX_C_SOURCE 200809L
#define TINYINFER_IMPLEMENTATION
#include "tinyinfer.h"
#define STB_IMAGE_IMPLEMENTATION
#include "stb_image.h"

#include "common.h"

static void usage(FILE *f) {
    fprintf(f, "usage: classify MODEL IMAGE [LABELS] [--top K] [--softmax] [--threads N]\n"
               "                [--mean M] [--std S] [--size N]\n"
               "Prints the K best classes as 'rank score label' lines, best first.\n"
               "LABELS: one label per line; a file with one line more than the model has\n"
               "outputs (e.g. a leading 'background') is shifted by one.\n"
               "  --top K      how many classes to print (default 5)\n"
               "  --softmax    apply softmax to the scores (for models that output logits)\n"
               EX_COMMON_OPTIONS_HELP);
}

int main(int argc, char **argv) {
    const char *pos[3] = {NULL, NULL, NULL};
    int n_pos = 0, top = 5, softmax = 0;
    ex_opts o;
    ex_opts_init(&o);
    for (int i = 1; i < argc; i++) {
        int r = ex_parse_common(argc, argv, &i, &o);
        if (r < 0) return 2;
        if (r > 0) continue;
        if (strcmp(argv[i], "--top") == 0 && i + 1 < argc) {
            top = atoi(argv[++i]);
            if (top < 1) {
                fprintf(stderr, "--top: expected a positive number, got '%s'\n", argv[i]);
                return 2;
            }
        } else if (strcmp(argv[i], "--softmax") == 0) {
            softmax = 1;
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (argv[i][0] == '-' || n_pos == 3) {
            fprintf(stderr, "unexpected argument '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        } else {
            pos[n_pos++] = argv[i];
        }
    }
    if (n_pos < 2) {
        usage(stderr);
        return 2;
    }

    int rc = 1;
    ti_model *model = NULL;
    ti_session *sess = NULL;
    ex_image img = {0, 0, 0, NULL}, small = {0, 0, 0, NULL};
    ex_labels labels;
    memset(&labels, 0, sizeof labels);
    double *score = NULL;
    int *best = NULL;
    ti_error err;
    ex_layout lay;
    ti_tensor *in; /* declared here, not at first use: the gotos skip no initializer (C++) */
    const ti_tensor *out;
    size_t n;
    double t0, ms;
    int offset;

    if (pos[2] && !ex_labels_load(pos[2], &labels)) goto done;
    if (!ex_open(pos[0], &o, &model, &sess, &lay)) goto done;
    in = ti_session_input(sess, 0);
    if (!ex_image_load(pos[1], lay.c, &img)) goto done;
    if (!ex_image_resize(&img, lay.w, lay.h, &small)) {
        fprintf(stderr, "out of memory\n");
        goto done;
    }
    if (!ex_fill_input(in, &small, &lay, &o)) goto done;

    t0 = ex_now_ms();
    if (ti_session_run(sess, &err) != TI_OK) {
        fprintf(stderr, "%s\n", err.message);
        goto done;
    }
    ms = ex_now_ms() - t0;

    /* the scores: output 0, any shape ([1, N] usually), dequantized */
    out = ti_session_output(sess, 0);
    n = ti_tensor_numel(out);
    if (n == 0 || ti_dtype_size(out->dtype) == 0) {
        fprintf(stderr, "%s: output '%s' has no scores (dtype %s, %zu elements)\n", pos[0],
                out->name, ti_dtype_name(out->dtype), n);
        goto done;
    }
    score = (double *)malloc(n * sizeof(double));
    if ((size_t)top > n) top = (int)n;
    best = (int *)malloc((size_t)top * sizeof(int));
    if (score == NULL || best == NULL) {
        fprintf(stderr, "out of memory\n");
        goto done;
    }
    for (size_t i = 0; i < n; i++) score[i] = ex_real(out, i);
    if (softmax) {
        double mx = score[0], sum = 0;
        for (size_t i = 1; i < n; i++) mx = score[i] > mx ? score[i] : mx;
        for (size_t i = 0; i < n; i++) sum += score[i] = exp(score[i] - mx);
        for (size_t i = 0; i < n; i++) score[i] /= sum;
    }

    /* top K by selection; ties keep the lower index first */
    for (int k = 0; k < top; k++) {
        int b = -1;
        for (size_t i = 0; i < n; i++) {
            int taken = 0;
            for (int j = 0; j < k && !taken; j++) taken = best[j] == (int)i;
            if (!taken && (b < 0 || score[i] > score[b])) b = (int)i;
        }
        best[k] = b;
    }

    /* label offset: a labels file with one more line than there are classes starts with
     * a class the model does not have (ImageNet's "background" for 1000-class models) */
    offset = labels.n == (int)n + 1 ? 1 : 0;
    fprintf(stderr, "%s: input '%s' %s ", pos[0], in->name, ti_dtype_name(in->dtype));
    ex_print_shape(stderr, in->rank, in->shape);
    fprintf(stderr, " %s, output '%s' %s, %zu classes", lay.nchw ? "NCHW" : "NHWC", out->name,
            ti_dtype_name(out->dtype), n);
    if (pos[2]) {
        fprintf(stderr, ", %d labels", labels.n);
        if (offset) fprintf(stderr, " (skipping the first, '%s')", labels.lines[0]);
        else if (labels.n != (int)n) fprintf(stderr, " (not one per class)");
    }
    fprintf(stderr, "; run %.1f ms\n", ms);

    for (int k = 0; k < top; k++) {
        const char *name = ex_label(&labels, (long)best[k] + offset);
        if (name) printf("%d %.4f %s\n", k + 1, score[best[k]], name);
        else printf("%d %.4f #%d\n", k + 1, score[best[k]], best[k]);
    }
    rc = 0;
done:
    free(best);
    free(score);
    ex_labels_free(&labels);
    ex_image_free(&small);
    ex_image_free(&img);
    ti_session_destroy(sess);
    ti_model_free(model);
    return rc;
}
