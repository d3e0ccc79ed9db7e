/* Shared by the image examples (classify.c, segment.c): opening a model and a session,
 * loading an image with stb_image, bilinear resizing, writing the pixels into the model's
 * input in its layout (NHWC or NCHW) and dtype (uint8, int8, float32), reading outputs back
 * as real numbers (dequantized), and label files. Uses only tinyinfer's public API.
 * The including .c file defines TINYINFER_IMPLEMENTATION and STB_IMAGE_IMPLEMENTATION and
 * includes tinyinfer.h and stb_image.h first. Example code: it prints its errors itself. */
#ifndef TINYINFER_EXAMPLES_COMMON_H
#define TINYINFER_EXAMPLES_COMMON_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- images: 8-bit pixels held as floats 0..255, rows top to bottom, HWC ---------------- */
typedef struct ex_image {
    int w, h, c;
    float *px; /* w * h * c values */
} ex_image;

/* Loads PATH (BMP, PNG, JPEG, ... whatever stb_image reads) with `channels` channels
 * (1: grey, 3: RGB; stb_image converts). Returns 0 and prints why on failure. */
static int ex_image_load(const char *path, int channels, ex_image *img) {
    int w, h, file_c;
    unsigned char *p = stbi_load(path, &w, &h, &file_c, channels);
    if (p == NULL) {
        fprintf(stderr, "%s: cannot read the image: %s\n", path, stbi_failure_reason());
        return 0;
    }
    size_t n = (size_t)w * (size_t)h * (size_t)channels;
    img->px = (float *)malloc(n * sizeof(float));
    if (img->px == NULL) {
        stbi_image_free(p);
        fprintf(stderr, "%s: out of memory (%dx%d)\n", path, w, h);
        return 0;
    }
    for (size_t i = 0; i < n; i++) img->px[i] = (float)p[i];
    img->w = w, img->h = h, img->c = channels;
    stbi_image_free(p);
    return 1;
}

static void ex_image_free(ex_image *img) {
    free(img->px);
    img->px = NULL;
}

/* Bilinear resize of src to w x h (half-pixel centres: destination pixel x samples source
 * position (x + 0.5) * src_w / w - 0.5, clamped to the edge pixels; the same convention as
 * TFLite's RESIZE_BILINEAR with half_pixel_centers and OpenCV's INTER_LINEAR). The image is
 * stretched to the new size, not cropped. Returns 0 when out of memory. */
static int ex_image_resize(const ex_image *src, int w, int h, ex_image *dst) {
    dst->w = w, dst->h = h, dst->c = src->c;
    dst->px = (float *)malloc((size_t)w * (size_t)h * (size_t)src->c * sizeof(float));
    if (dst->px == NULL) return 0;
    float sx = (float)src->w / (float)w, sy = (float)src->h / (float)h;
    for (int y = 0; y < h; y++) {
        float fy = ((float)y + 0.5f) * sy - 0.5f;
        if (fy < 0) fy = 0;
        int y0 = (int)fy, y1 = y0 + 1 < src->h ? y0 + 1 : src->h - 1;
        float wy = fy - (float)y0;
        for (int x = 0; x < w; x++) {
            float fx = ((float)x + 0.5f) * sx - 0.5f;
            if (fx < 0) fx = 0;
            int x0 = (int)fx, x1 = x0 + 1 < src->w ? x0 + 1 : src->w - 1;
            float wx = fx - (float)x0;
            for (int ch = 0; ch < src->c; ch++) {
                const float *s = src->px;
                int c = src->c, sw = src->w;
                float top = s[((size_t)y0 * sw + x0) * c + ch] * (1 - wx) +
                            s[((size_t)y0 * sw + x1) * c + ch] * wx;
                float bot = s[((size_t)y1 * sw + x0) * c + ch] * (1 - wx) +
                            s[((size_t)y1 * sw + x1) * c + ch] * wx;
                dst->px[((size_t)y * w + x) * c + ch] = top * (1 - wy) + bot * wy;
            }
        }
    }
    return 1;
}

/* ---- options shared by the examples ---------------------------------------------------- */
typedef struct ex_opts {
    int threads;                 /* --threads N (0: the library's choice) */
    int size;                    /* --size N: height/width for inputs with symbolic dims */
    float mean[3], std[3];       /* --mean, --std: float inputs get (pixel - mean) / std */
    int norm_given;              /* 1 when --mean or --std was on the command line */
} ex_opts;

static void ex_opts_init(ex_opts *o) {
    memset(o, 0, sizeof *o);
    o->size = 224;
    for (int i = 0; i < 3; i++) o->mean[i] = 127.5f, o->std[i] = 127.5f;
}

/* "127.5" (all channels) or "123.675,116.28,103.53" (R,G,B). Returns 0 on a parse error. */
static int ex_parse_floats(const char *s, float v[3]) {
    char *end;
    for (int i = 0; i < 3; i++) {
        v[i] = strtof(s, &end);
        if (end == s) return 0;
        if (*end == '\0') {
            for (int j = i + 1; j < 3; j++) v[j] = v[i];
            return i == 0 || i == 2;
        }
        if (*end != ',') return 0;
        s = end + 1;
    }
    return *end == '\0';
}

/* Handles the options common to both examples at argv[*i]; returns 1 when it took one (and
 * its value), 0 when argv[*i] is not one of them, -1 on a bad value. */
static int ex_parse_common(int argc, char **argv, int *i, ex_opts *o) {
    const char *a = argv[*i];
    int is_mean = strcmp(a, "--mean") == 0, is_std = strcmp(a, "--std") == 0;
    if (strcmp(a, "--threads") != 0 && strcmp(a, "--size") != 0 && !is_mean && !is_std)
        return 0;
    if (*i + 1 >= argc) {
        fprintf(stderr, "%s needs a value\n", a);
        return -1;
    }
    const char *v = argv[++*i];
    if (is_mean || is_std) {
        float f[3];
        if (!ex_parse_floats(v, f)) {
            fprintf(stderr, "%s: expected one number or three separated by commas, got '%s'\n",
                    a, v);
            return -1;
        }
        memcpy(is_mean ? o->mean : o->std, f, sizeof f);
        for (int c = 0; c < 3; c++)
            if (o->std[c] == 0) {
                fprintf(stderr, "--std must not be 0\n");
                return -1;
            }
        o->norm_given = 1;
        return 1;
    }
    char *end;
    long n = strtol(v, &end, 10);
    if (*end != '\0' || n < 0 || n > 16384 || (n == 0 && strcmp(a, "--size") == 0)) {
        fprintf(stderr, "%s: bad value '%s'\n", a, v);
        return -1;
    }
    if (strcmp(a, "--threads") == 0) o->threads = (int)n;
    else o->size = (int)n;
    return 1;
}

#define EX_COMMON_OPTIONS_HELP                                                                  \
    "  --threads N  worker threads (default 0: the library's choice)\n"                           \
    "  --mean M     float inputs get (pixel - M) / S; one value or R,G,B (default 127.5)\n"       \
    "  --std S      (default 127.5: pixels to [-1, 1], as TFLite's MobileNets want; for\n"        \
    "               torchvision models: --mean 123.675,116.28,103.53\n"                          \
    "               --std 58.395,57.12,57.375)\n"                                                 \
    "  --size N     height and width for inputs whose size the model leaves open (default 224)\n"

/* ---- the model's image input ------------------------------------------------------------ */
typedef struct ex_layout {
    int nchw; /* 1: [1, C, H, W] (ONNX); 0: [1, H, W, C] (TFLite) */
    int h, w, c;
} ex_layout;

/* Which dim of a rank-4 input is the channel dim: TFLite is always NHWC; ONNX image models
 * are NCHW, [1, 3, H, W], but some converted ones are NHWC, [1, H, W, 3]. */
static int ex_is_nchw(ti_format f, const int64_t *shape) {
    if (f == TI_FORMAT_TFLITE) return 0;
    int c1 = shape[1] == 1 || shape[1] == 3, c3 = shape[3] == 1 || shape[3] == 3;
    return !(c3 && !c1);
}

static void ex_print_shape(FILE *f, int rank, const int64_t *shape) {
    fputc('[', f);
    for (int d = 0; d < rank; d++) fprintf(f, d ? ",%lld" : "%lld", (long long)shape[d]);
    fputc(']', f);
}

/* Loads the model, checks it has one image input of rank 4 with 1 or 3 channels, creates a
 * session (binding open dims: batch 1, 3 channels, --size for height and width) and fills
 * *lay. Prints why and returns 0 on failure (*model / *sess are then NULL or to be freed). */
static int ex_open(const char *path, const ex_opts *o, ti_model **model, ti_session **sess,
                   ex_layout *lay) {
    ti_error err;
    *sess = NULL;
    *model = ti_model_load_file(path, NULL, &err);
    if (*model == NULL) {
        fprintf(stderr, "%s\n", err.message);
        return 0;
    }
    ti_value_info vi;
    memset(&vi, 0, sizeof vi);
    if (ti_model_num_inputs(*model) != 1 || ti_model_input_info(*model, 0, &vi) != TI_OK ||
        vi.rank != 4) {
        fprintf(stderr, "%s: expected one image input of rank 4 ([1,H,W,C] or [1,C,H,W]); "
                "the model has %d input(s), the first of rank %d\n",
                path, ti_model_num_inputs(*model), ti_model_num_inputs(*model) > 0 ? vi.rank : 0);
        return 0;
    }
    ti_format fmt = ti_model_format(*model);
    int nchw = ex_is_nchw(fmt, vi.shape);
    int64_t want[4];
    ti_dim_binding bind[4];
    int n_bind = 0;
    for (int d = 0; d < 4; d++) {
        int is_c = d == (nchw ? 1 : 3);
        want[d] = vi.shape[d] >= 0 ? vi.shape[d] : d == 0 ? 1 : is_c ? 3 : o->size;
        if (vi.shape[d] < 0 && vi.dim_names[d] != NULL) {
            bind[n_bind].name = vi.dim_names[d];
            bind[n_bind++].value = want[d];
        }
    }
    ti_session_desc sd;
    memset(&sd, 0, sizeof sd);
    sd.num_threads = o->threads;
    sd.dim_bindings = bind;
    sd.num_dim_bindings = n_bind;
    *sess = ti_session_create(*model, &sd, &err);
    if (*sess == NULL) {
        fprintf(stderr, "%s\n", err.message);
        return 0;
    }
    ti_tensor *in = ti_session_input(*sess, 0);
    if (memcmp(in->shape, want, sizeof want) != 0 &&
        ti_session_set_input_shape(*sess, 0, 4, want, &err) != TI_OK) {
        fprintf(stderr, "%s\n", err.message);
        return 0;
    }
    in = ti_session_input(*sess, 0);
    int64_t c = in->shape[nchw ? 1 : 3], h = in->shape[nchw ? 2 : 1], w = in->shape[nchw ? 3 : 2];
    if ((c != 1 && c != 3) || in->shape[0] != 1 || h < 1 || w < 1 || h > 16384 || w > 16384) {
        fprintf(stderr, "%s: input '%s' has shape ", path, in->name);
        ex_print_shape(stderr, in->rank, in->shape);
        fprintf(stderr, "; expected batch 1, 1 or 3 channels, at most 16384x16384 pixels\n");
        return 0;
    }
    lay->nchw = nchw;
    lay->c = (int)c, lay->h = (int)h, lay->w = (int)w;
    return 1;
}

static long ex_round_clamp(double v, long lo, long hi) {
    v = floor(v + 0.5);
    return v < (double)lo ? lo : v > (double)hi ? hi : (long)v;
}

/* Writes img (already at the input's size) into input tensor `in`. Pixel p (0..255) of
 * channel ch becomes:
 *   uint8:   p as is (TF1 quantized models take raw pixels; their input scale and zero point,
 *            e.g. 1/128 and 128, do the normalization);
 *   int8:    p - 128, the bytes a uint8 twin of the model would take (TF2 full-integer
 *            models with inputs in [-1, 1]: scale 1/128, zero point 0; or in [0, 1]: 1/255,
 *            -128); when the input's zero point is -128 but its scale is not 1/255, p / 255
 *            is quantized with the input's scale and zero point instead;
 *   float32: (p - mean[ch]) / std[ch].
 * With --mean/--std given, integer inputs that carry quantization parameters get
 * (p - mean) / std quantized with them. Returns 0 and prints why for other dtypes. */
static int ex_fill_input(ti_tensor *in, const ex_image *img, const ex_layout *lay,
                         const ex_opts *o) {
    int quantized = in->quant.count > 0;
    double scale = quantized ? in->quant.scale[0] : 1.0;
    double zp = quantized ? (double)in->quant.zero_point[0] : 0.0;
    if (in->dtype != TI_DTYPE_U8 && in->dtype != TI_DTYPE_I8 && in->dtype != TI_DTYPE_F32) {
        fprintf(stderr, "input '%s' has dtype %s; this example fills uint8, int8 and float32\n",
                in->name, ti_dtype_name(in->dtype));
        return 0;
    }
    if (quantized && !(scale > 0)) {
        fprintf(stderr, "input '%s' has quantization scale %g\n", in->name, scale);
        return 0;
    }
    /* int8 in [0, 1] with a scale other than 1/255: quantize p / 255 */
    int int8_unit = in->dtype == TI_DTYPE_I8 && quantized && zp == -128 &&
                    fabs(scale * 255.0 - 1.0) > 1e-6;
    int H = lay->h, W = lay->w, C = lay->c;
    for (int y = 0; y < H; y++) {
        for (int x = 0; x < W; x++) {
            for (int ch = 0; ch < C; ch++) {
                double p = img->px[((size_t)y * W + x) * C + ch];
                size_t i = lay->nchw ? ((size_t)ch * H + y) * W + x : ((size_t)y * W + x) * C + ch;
                double real = (p - o->mean[ch]) / o->std[ch];
                switch (in->dtype) {
                case TI_DTYPE_U8: {
                    long q = ex_round_clamp(p, 0, 255);
                    if (o->norm_given && quantized) q = ex_round_clamp(real / scale + zp, 0, 255);
                    ((uint8_t *)in->data)[i] = (uint8_t)q;
                    break;
                }
                case TI_DTYPE_I8: {
                    long q = ex_round_clamp(p, 0, 255) - 128;
                    if (o->norm_given && quantized)
                        q = ex_round_clamp(real / scale + zp, -128, 127);
                    else if (int8_unit)
                        q = ex_round_clamp(p / 255.0 / scale + zp, -128, 127);
                    ((int8_t *)in->data)[i] = (int8_t)q;
                    break;
                }
                default: ((float *)in->data)[i] = (float)real; break;
                }
            }
        }
    }
    return 1;
}

/* ---- outputs ---------------------------------------------------------------------------- */
static float ex_f16_to_f32(uint16_t h) {
    int e = (h >> 10) & 31, m = h & 1023;
    float v = e == 0 ? ldexpf((float)m, -24) : e == 31 ? (m ? NAN : INFINITY)
                                                       : ldexpf((float)(m | 1024), e - 25);
    return (h & 0x8000) ? -v : v;
}

/* Element i of t as stored (no dequantization); 0 for dtypes without numbers. */
static double ex_raw(const ti_tensor *t, size_t i) {
    switch (t->dtype) {
    case TI_DTYPE_F32: return ((const float *)t->data)[i];
    case TI_DTYPE_F64: return ((const double *)t->data)[i];
    case TI_DTYPE_F16: return ex_f16_to_f32(((const uint16_t *)t->data)[i]);
    case TI_DTYPE_I8: return ((const int8_t *)t->data)[i];
    case TI_DTYPE_U8: return ((const uint8_t *)t->data)[i];
    case TI_DTYPE_BOOL: return ((const uint8_t *)t->data)[i];
    case TI_DTYPE_I16: return ((const int16_t *)t->data)[i];
    case TI_DTYPE_U16: return ((const uint16_t *)t->data)[i];
    case TI_DTYPE_I32: return ((const int32_t *)t->data)[i];
    case TI_DTYPE_U32: return ((const uint32_t *)t->data)[i];
    case TI_DTYPE_I64: return (double)((const int64_t *)t->data)[i];
    case TI_DTYPE_U64: return (double)((const uint64_t *)t->data)[i];
    default: return 0;
    }
}

/* Element i of t as a real number: scale * (q - zero_point) for quantized tensors (the first
 * scale and zero point: outputs are quantized per tensor). */
static double ex_real(const ti_tensor *t, size_t i) {
    double v = ex_raw(t, i);
    if (t->quant.count > 0) v = t->quant.scale[0] * (v - (double)t->quant.zero_point[0]);
    return v;
}

/* ---- label files: one label per line ---------------------------------------------------- */
typedef struct ex_labels {
    char *text;   /* the file, lines split in place */
    char **lines;
    int n;        /* lines, without trailing empty ones */
} ex_labels;

/* Reads PATH; returns 0 and prints why on failure. CR LF line ends are accepted. */
static int ex_labels_load(const char *path, ex_labels *l) {
    memset(l, 0, sizeof *l);
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "%s: cannot open the labels file\n", path);
        return 0;
    }
    size_t cap = 1 << 16, len = 0, got;
    l->text = (char *)malloc(cap + 1);
    while (l->text != NULL && (got = fread(l->text + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) {
            char *t = (char *)realloc(l->text, 2 * cap + 1);
            if (t == NULL) free(l->text);
            l->text = t;
            cap *= 2;
        }
    }
    fclose(f);
    if (l->text == NULL) {
        fprintf(stderr, "%s: out of memory\n", path);
        return 0;
    }
    l->text[len] = '\0';
    size_t n_lines = 1;
    for (size_t i = 0; i < len; i++) n_lines += l->text[i] == '\n';
    l->lines = (char **)malloc(n_lines * sizeof(char *));
    if (l->lines == NULL) {
        free(l->text);
        fprintf(stderr, "%s: out of memory\n", path);
        return 0;
    }
    char *p = l->text;
    for (;;) {
        char *nl = strchr(p, '\n');
        if (nl) *nl = '\0';
        size_t k = strlen(p);
        if (k > 0 && p[k - 1] == '\r') p[k - 1] = '\0';
        l->lines[l->n++] = p;
        if (nl == NULL) break;
        p = nl + 1;
    }
    while (l->n > 0 && l->lines[l->n - 1][0] == '\0') l->n--;
    return 1;
}

static void ex_labels_free(ex_labels *l) {
    free(l->lines);
    free(l->text);
    memset(l, 0, sizeof *l);
}

/* Label of line i, or NULL when there is no such line or it is empty. */
static const char *ex_label(const ex_labels *l, long i) {
    return i >= 0 && i < l->n && l->lines[i][0] != '\0' ? l->lines[i] : NULL;
}

/* ---- timing ----------------------------------------------------------------------------- */
/* Wall-clock milliseconds (POSIX clock_gettime: the .c defines _POSIX_C_SOURCE). */
static double ex_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

#endif /* TINYINFER_EXAMPLES_COMMON_H */
