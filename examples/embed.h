/* embed.h: what an app around tinyinfer needs to classify camera frames or bitmaps, shared
 * by the Android JNI bridge (examples/android/jni/tinyinfer_jni.c) and the iOS class
 * (examples/ios/TIClassifier.m). A model from memory (an Android asset, a file of the app
 * bundle), a session, then per frame: the pixels resized (bilinear, half-pixel centres,
 * the convention of examples/common.h) straight into the model's input, in its layout
 * (NHWC for TFLite, NCHW for ONNX) and dtype (uint8 as is, int8 minus 128, float32 as
 * (p - 127.5) / 127.5), a run, and the K best classes of output 0, dequantized.
 * No stdio, no stb_image: errors go to k->error. Include tinyinfer.h first (with
 * TINYINFER_IMPLEMENTATION in one file of the app). All functions are static (ex_). */
#ifndef TINYINFER_EXAMPLES_EMBED_H
#define TINYINFER_EXAMPLES_EMBED_H

#include <math.h>
#include <stdint.h>
#include <stdio.h> /* snprintf only */
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#define EX_EMBED_UNUSED __attribute__((unused))
#else
#define EX_EMBED_UNUSED
#endif

/* How a frame's pixels are stored. */
typedef enum ex_pixels {
    EX_PIXELS_RGBA8 = 0, /* bytes R, G, B, A (Android's Bitmap.copyPixelsToBuffer) */
    EX_PIXELS_BGRA8,     /* bytes B, G, R, A (iOS kCVPixelFormatType_32BGRA camera frames) */
    EX_PIXELS_ARGB32,    /* 32-bit words 0xAARRGGBB (Android's Bitmap.getPixels int[]) */
    EX_PIXELS_RGB8       /* bytes R, G, B */
} ex_pixels;

typedef struct ex_classifier {
    ti_model *model;
    ti_session *session;
    int nchw;        /* 1: input [1, C, H, W]; 0: [1, H, W, C] */
    int h, w, c;     /* the input's size; c is 1 or 3 */
    char error[320]; /* why the last call failed */
} ex_classifier;

EX_EMBED_UNUSED static void ex_classifier_close(ex_classifier *k) {
    ti_session_destroy(k->session);
    ti_model_free(k->model);
    k->session = NULL;
    k->model = NULL;
}

/* Loads the model from memory (name: for error messages) and creates a session with desc
 * (NULL: defaults). Returns 1, or 0 with k->error filled and nothing held. */
EX_EMBED_UNUSED static int ex_classifier_open(ex_classifier *k, const void *bytes, size_t size,
                                              const char *name, const ti_session_desc *desc) {
    ti_error err;
    ti_model_desc md;
    ti_value_info vi;
    memset(k, 0, sizeof *k);
    memset(&md, 0, sizeof md);
    md.name = name;
    k->model = ti_model_load_memory(bytes, size, &md, &err);
    if (k->model == NULL) goto fail;
    if (ti_model_num_inputs(k->model) != 1 || ti_model_input_info(k->model, 0, &vi) != TI_OK ||
        vi.rank != 4) {
        snprintf(k->error, sizeof k->error, "%s: expected one image input of rank 4", name);
        ex_classifier_close(k);
        return 0;
    }
    k->session = ti_session_create(k->model, desc, &err);
    if (k->session == NULL) goto fail;
    {
        const ti_tensor *in = ti_session_input(k->session, 0);
        int c1 = in->shape[1] == 1 || in->shape[1] == 3, c3 = in->shape[3] == 1 || in->shape[3] == 3;
        k->nchw = ti_model_format(k->model) != TI_FORMAT_TFLITE && !(c3 && !c1);
        k->c = (int)in->shape[k->nchw ? 1 : 3];
        k->h = (int)in->shape[k->nchw ? 2 : 1];
        k->w = (int)in->shape[k->nchw ? 3 : 2];
        if ((k->c != 1 && k->c != 3) || in->shape[0] != 1 || k->h < 1 || k->w < 1 ||
            (in->dtype != TI_DTYPE_U8 && in->dtype != TI_DTYPE_I8 && in->dtype != TI_DTYPE_F32)) {
            snprintf(k->error, sizeof k->error,
                     "%s: input '%s' is not a batch-1 image of 1 or 3 channels in uint8, int8 "
                     "or float32", name, in->name);
            ex_classifier_close(k);
            return 0;
        }
    }
    return 1;
fail:
    snprintf(k->error, sizeof k->error, "%s", err.message);
    ex_classifier_close(k);
    return 0;
}

/* Channel ch (0 R, 1 G, 2 B) of pixel (x, y). */
static EX_EMBED_UNUSED float ex_pixel(const unsigned char *px, size_t row_bytes, ex_pixels order,
                                      int x, int y, int ch) {
    const unsigned char *row = px + (size_t)y * row_bytes;
    switch (order) {
    case EX_PIXELS_BGRA8: return row[(size_t)x * 4 + (size_t)(2 - ch)];
    case EX_PIXELS_ARGB32: {
        uint32_t v;
        memcpy(&v, row + (size_t)x * 4, 4);
        return (float)((v >> (16 - 8 * ch)) & 255u);
    }
    case EX_PIXELS_RGB8: return row[(size_t)x * 3 + (size_t)ch];
    default: return row[(size_t)x * 4 + (size_t)ch];
    }
}

/* Writes the frame (width x height pixels, rows row_bytes apart) into the input, runs the
 * model and stores the k best classes of output 0 in classes[] and their dequantized
 * scores in scores[], best first (ties: lower index first). Returns how many were stored
 * (min(k, classes of the model)), or -1 with k->error filled. */
EX_EMBED_UNUSED static int ex_classifier_run(ex_classifier *k, const void *pixels, int width,
                                             int height, size_t row_bytes, ex_pixels order,
                                             int top, int *classes, double *scores) {
    ti_error err;
    size_t bpp = order == EX_PIXELS_RGB8 ? 3 : 4;
    if (k->session == NULL || pixels == NULL || width < 1 || height < 1 || top < 0 ||
        row_bytes < (size_t)width * bpp) {
        snprintf(k->error, sizeof k->error, "bad frame: %dx%d pixels, %lu bytes a row", width,
                 height, (unsigned long)row_bytes);
        return -1;
    }
    ti_tensor *in = ti_session_input(k->session, 0);
    float sx = (float)width / (float)k->w, sy = (float)height / (float)k->h;
    for (int y = 0; y < k->h; y++) {
        float fy = ((float)y + 0.5f) * sy - 0.5f;
        if (fy < 0) fy = 0;
        int y0 = (int)fy, y1 = y0 + 1 < height ? y0 + 1 : height - 1;
        float wy = fy - (float)y0;
        for (int x = 0; x < k->w; x++) {
            float fx = ((float)x + 0.5f) * sx - 0.5f;
            if (fx < 0) fx = 0;
            int x0 = (int)fx, x1 = x0 + 1 < width ? x0 + 1 : width - 1;
            float wx = fx - (float)x0;
            for (int ch = 0; ch < k->c; ch++) {
                float p;
                if (k->c == 1) { /* grey: the mean of the three */
                    p = 0;
                    for (int j = 0; j < 3; j++) {
                        float t = ex_pixel((const unsigned char *)pixels, row_bytes, order, x0, y0, j) * (1 - wx) +
                                  ex_pixel((const unsigned char *)pixels, row_bytes, order, x1, y0, j) * wx;
                        float b = ex_pixel((const unsigned char *)pixels, row_bytes, order, x0, y1, j) * (1 - wx) +
                                  ex_pixel((const unsigned char *)pixels, row_bytes, order, x1, y1, j) * wx;
                        p += (t * (1 - wy) + b * wy) / 3.0f;
                    }
                } else {
                    float t = ex_pixel((const unsigned char *)pixels, row_bytes, order, x0, y0, ch) * (1 - wx) +
                              ex_pixel((const unsigned char *)pixels, row_bytes, order, x1, y0, ch) * wx;
                    float b = ex_pixel((const unsigned char *)pixels, row_bytes, order, x0, y1, ch) * (1 - wx) +
                              ex_pixel((const unsigned char *)pixels, row_bytes, order, x1, y1, ch) * wx;
                    p = t * (1 - wy) + b * wy;
                }
                size_t i = k->nchw ? ((size_t)ch * (size_t)k->h + (size_t)y) * (size_t)k->w + (size_t)x
                                   : ((size_t)y * (size_t)k->w + (size_t)x) * (size_t)k->c + (size_t)ch;
                double r = floor((double)p + 0.5);
                r = r < 0 ? 0 : r > 255 ? 255 : r;
                if (in->dtype == TI_DTYPE_U8) ((uint8_t *)in->data)[i] = (uint8_t)r;
                else if (in->dtype == TI_DTYPE_I8) ((int8_t *)in->data)[i] = (int8_t)((int)r - 128);
                else ((float *)in->data)[i] = (float)(((double)p - 127.5) / 127.5);
            }
        }
    }
    if (ti_session_run(k->session, &err) != TI_OK) {
        snprintf(k->error, sizeof k->error, "%s", err.message);
        return -1;
    }
    const ti_tensor *out = ti_session_output(k->session, 0);
    size_t n = ti_tensor_numel(out);
    if (out->dtype != TI_DTYPE_U8 && out->dtype != TI_DTYPE_I8 && out->dtype != TI_DTYPE_F32) {
        snprintf(k->error, sizeof k->error, "output '%s' has dtype %s, not a score", out->name,
                 ti_dtype_name(out->dtype));
        return -1;
    }
    if ((size_t)top > n) top = (int)n;
    for (int r = 0; r < top; r++) { /* selection: k is small */
        long best = -1;
        double best_v = 0;
        for (size_t i = 0; i < n; i++) {
            int taken = 0;
            for (int j = 0; j < r && !taken; j++) taken = classes[j] == (int)i;
            if (taken) continue;
            double v = out->dtype == TI_DTYPE_F32 ? ((const float *)out->data)[i]
                       : out->dtype == TI_DTYPE_U8 ? ((const uint8_t *)out->data)[i]
                                                   : ((const int8_t *)out->data)[i];
            if (out->quant.count > 0)
                v = out->quant.scale[0] * (v - (double)out->quant.zero_point[0]);
            if (best < 0 || v > best_v) best = (long)i, best_v = v;
        }
        classes[r] = (int)best;
        scores[r] = best_v;
    }
    return top;
}

#endif /* TINYINFER_EXAMPLES_EMBED_H */
