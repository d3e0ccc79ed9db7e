/* segment: semantic segmentation with a .tflite or .onnx model, e.g. DeepLabv3:
 *   segment MODEL IMAGE OUT.ppm [LABELS] [--threads N] [--mean M] [--std S]
 * Resizes the image to the model's input (bilinear), runs the model, takes each pixel's
 * class (the output itself when it already holds class indices, as DeepLabv3's ARG_MAX
 * output [1, H, W] does; else the argmax over the class dim of [1, H, W, C] (TFLite) or
 * [1, C, H, W] (ONNX) scores), writes the classes as a color image (binary PPM, P6, at the
 * output's resolution, PASCAL VOC colors) and prints how many pixels each class has.
 * Uses tinyinfer's public API only. Build from the repository root (Debian: libstb-dev):
 *   cc -O2 -I. -I/usr/include/stb examples/segment.c -o segment -lm -lpthread */
#define _POSIX_C_SOURCE 200809L
#define TINYINFER_IMPLEMENTATION
#include "tinyinfer.h"
#define STB_IMAGE_IMPLEMENTATION
#include "stb_image.h"

#include "common.h"

#define MAX_CLASSES 256 /* classes above are counted as "other" and drawn white */

static void usage(FILE *f) {
    fprintf(f, "usage: segment MODEL IMAGE OUT.ppm [LABELS] [--threads N] [--mean M] [--std S]\n"
               "                [--size N]\n"
               "Writes each pixel's class as a color (PASCAL VOC palette) to OUT.ppm and prints\n"
               "the pixels per class as 'class pixels percent label' lines, largest first.\n"
               EX_COMMON_OPTIONS_HELP);
}

static int is_integer(ti_dtype d) {
    return d == TI_DTYPE_I8 || d == TI_DTYPE_U8 || d == TI_DTYPE_I16 || d == TI_DTYPE_U16 ||
           d == TI_DTYPE_I32 || d == TI_DTYPE_U32 || d == TI_DTYPE_I64 || d == TI_DTYPE_U64;
}

/* The PASCAL VOC palette: the bits of the class index spread over the high bits of R, G
 * and B (class 1 dark red, 2 dark green, 3 olive, ..., 15 person pink). */
static void voc_color(int cls, unsigned char rgb[3]) {
    rgb[0] = rgb[1] = rgb[2] = 0;
    for (int bit = 7; bit >= 0 && cls > 0; bit--, cls >>= 3) {
        rgb[0] |= (unsigned char)((cls & 1) << bit);
        rgb[1] |= (unsigned char)(((cls >> 1) & 1) << bit);
        rgb[2] |= (unsigned char)(((cls >> 2) & 1) << bit);
    }
}

int main(int argc, char **argv) {
    const char *pos[4] = {NULL, NULL, NULL, NULL};
    int n_pos = 0;
    ex_opts o;
    ex_opts_init(&o);
    for (int i = 1; i < argc; i++) {
        int r = ex_parse_common(argc, argv, &i, &o);
        if (r < 0) return 2;
        if (r > 0) continue;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (argv[i][0] == '-' || n_pos == 4) {
            fprintf(stderr, "unexpected argument '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
        pos[n_pos++] = argv[i];
    }
    if (n_pos < 3) {
        usage(stderr);
        return 2;
    }

    int rc = 1;
    ti_model *model = NULL;
    ti_session *sess = NULL;
    ex_image img = {0, 0, 0, NULL}, small = {0, 0, 0, NULL};
    ex_labels labels;
    memset(&labels, 0, sizeof labels);
    unsigned char *rgb = NULL;
    FILE *f = NULL;
    ti_error err;
    ex_layout lay;
    ti_tensor *in; /* declared here, not at first use: the gotos skip no initializer (C++) */
    const ti_tensor *out;
    const int64_t *s;
    double t0, ms;
    int indices, nchw;
    size_t hist[MAX_CLASSES + 1] = {0}; /* [MAX_CLASSES]: classes out of range */

    if (pos[3] && !ex_labels_load(pos[3], &labels)) goto done;
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

    /* What the output holds: class indices ([1, H, W], [H, W] or a dim of 1 for the
     * classes) or per-class scores (argmax over the class dim). */
    out = ti_session_output(sess, 0);
    s = out->shape;
    indices = is_integer(out->dtype) && out->quant.count == 0;
    nchw = ti_model_format(model) != TI_FORMAT_TFLITE;
    int64_t H, W, C;
    if (out->rank == 2 && indices) {
        H = s[0], W = s[1], C = 1;
    } else if (out->rank == 3 && indices && s[0] == 1) {
        H = s[1], W = s[2], C = 1;
    } else if (out->rank == 4 && s[0] == 1) {
        H = nchw ? s[2] : s[1], W = nchw ? s[3] : s[2], C = nchw ? s[1] : s[3];
        if (indices && C != 1) indices = 0; /* integer scores */
    } else {
        fprintf(stderr, "%s: output '%s' %s ", pos[0], out->name, ti_dtype_name(out->dtype));
        ex_print_shape(stderr, out->rank, out->shape);
        fprintf(stderr, " is neither class indices [1,H,W] nor scores [1,H,W,C] / [1,C,H,W]\n");
        goto done;
    }
    if (H < 1 || W < 1 || C < 1 || H > 65535 || W > 65535) {
        fprintf(stderr, "%s: output '%s' has an empty or huge shape\n", pos[0], out->name);
        goto done;
    }
    rgb = (unsigned char *)malloc((size_t)H * (size_t)W * 3);
    if (rgb == NULL) {
        fprintf(stderr, "out of memory\n");
        goto done;
    }
    for (int64_t y = 0; y < H; y++) {
        for (int64_t x = 0; x < W; x++) {
            double cls;
            if (indices) {
                cls = ex_raw(out, (size_t)(y * W + x));
            } else { /* argmax over C; the first of equal scores wins */
                int64_t bc = 0;
                double bv = 0;
                for (int64_t c = 0; c < C; c++) {
                    size_t i = (size_t)(nchw ? (c * H + y) * W + x : (y * W + x) * C + c);
                    double v = ex_real(out, i);
                    if (c == 0 || v > bv) bv = v, bc = c;
                }
                cls = (double)bc;
            }
            unsigned char *px = rgb + (size_t)(y * W + x) * 3;
            if (cls >= 0 && cls < MAX_CLASSES) {
                hist[(int)cls]++;
                voc_color((int)cls, px);
            } else {
                hist[MAX_CLASSES]++;
                px[0] = px[1] = px[2] = 255;
            }
        }
    }

    f = fopen(pos[2], "wb");
    if (f == NULL || fprintf(f, "P6\n%lld %lld\n255\n", (long long)W, (long long)H) < 0 ||
        fwrite(rgb, 1, (size_t)H * (size_t)W * 3, f) != (size_t)H * (size_t)W * 3) {
        fprintf(stderr, "%s: cannot write\n", pos[2]);
        goto done;
    }
    if (fclose(f) != 0) {
        f = NULL;
        fprintf(stderr, "%s: cannot write\n", pos[2]);
        goto done;
    }
    f = NULL;
    fprintf(stderr, "%s: input %s ", pos[0], ti_dtype_name(in->dtype));
    ex_print_shape(stderr, in->rank, in->shape);
    fprintf(stderr, ", output '%s' %s ", out->name, ti_dtype_name(out->dtype));
    ex_print_shape(stderr, out->rank, out->shape);
    fprintf(stderr, " (%s); run %.1f ms; wrote %s (%lldx%lld)\n",
            indices ? "class indices" : "class scores, argmax", ms, pos[2], (long long)W,
            (long long)H);

    /* the histogram, largest class first */
    for (;;) {
        int b = -1;
        for (int c = 0; c <= MAX_CLASSES; c++)
            if (hist[c] > 0 && (b < 0 || hist[c] > hist[b])) b = c;
        if (b < 0) break;
        double pct = 100.0 * (double)hist[b] / ((double)H * (double)W);
        const char *name = b < MAX_CLASSES ? ex_label(&labels, b) : "(class index out of range)";
        if (b < MAX_CLASSES) printf("%3d %8zu %6.2f%% %s\n", b, hist[b], pct, name ? name : "");
        else printf("  ? %8zu %6.2f%% %s\n", hist[b], pct, name);
        hist[b] = 0;
    }
    rc = 0;
done:
    if (f) fclose(f);
    free(rgb);
    ex_labels_free(&labels);
    ex_image_free(&small);
    ex_image_free(&img);
    ti_session_destroy(sess);
    ti_model_free(model);
    return rc;
}
