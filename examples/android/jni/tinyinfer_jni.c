/* tinyinfer_jni.c: the JNI bridge of org.tinyinfer.example.Classifier (the Java class in
 * ../java/). It holds one model and one session per Classifier (a handle in a Java long),
 * turns the int[] ARGB pixels of Android's Bitmap.getPixels into the model's input
 * (examples/embed.h) and returns the best classes. OpenCL is not linked: tinyinfer opens
 * libOpenCL.so at run time from the vendor paths (src/cl/loader.c); on Android 7+ the app's
 * manifest must list it (<uses-native-library android:name="libOpenCL.so"
 * android:required="false"/>, see ../AndroidManifest.xml), else the session runs on the CPU
 * and Classifier.backend() says why. Bad arguments throw Java exceptions, never crash.
 * Build: ../Android.mk (ndk-build) or ../CMakeLists.txt (Gradle); on a desktop with a JDK:
 *   cc -shared -fPIC -I. -Iexamples -I$JAVA_HOME/include -I$JAVA_HOME/include/linux \
 *      examples/android/jni/tinyinfer_jni.c -o libtinyinfer_jni.so -lm -pthread */
#define TINYINFER_IMPLEMENTATION
#include "tinyinfer.h"
#include "embed.h"

#include <jni.h>
#include <stdlib.h>

/* C and C++ JNI differ: (*env)->F(env, ...) in C, env->F(...) in C++ */
#ifdef __cplusplus
#define JNI_CALL(env, f, ...) (env)->f(__VA_ARGS__)
#else
#define JNI_CALL(env, f, ...) (*(env))->f((env), __VA_ARGS__)
#endif

static void throw_java(JNIEnv *env, const char *cls, const char *msg) {
    jclass c = JNI_CALL(env, FindClass, cls);
    if (c != NULL) JNI_CALL(env, ThrowNew, c, msg);
}

static ex_classifier *from_handle(JNIEnv *env, jlong handle) {
    ex_classifier *k = (ex_classifier *)(intptr_t)handle;
    if (k == NULL) throw_java(env, "java/lang/IllegalStateException", "the Classifier is closed");
    return k;
}

/* long create(byte[] model, String name, int threads, int backend, String cacheDir) */
JNIEXPORT jlong JNICALL Java_org_tinyinfer_example_Classifier_create(
    JNIEnv *env, jclass cls, jbyteArray model, jstring name, jint threads, jint backend,
    jstring cache_dir) {
    (void)cls;
    if (model == NULL || backend < 0 || backend > 2 || threads < 0) {
        throw_java(env, "java/lang/IllegalArgumentException",
                   "Classifier: model bytes are null, or threads/backend out of range");
        return 0;
    }
    jsize size = JNI_CALL(env, GetArrayLength, model);
    jbyte *bytes = JNI_CALL(env, GetByteArrayElements, model, NULL);
    const char *cname = name ? JNI_CALL(env, GetStringUTFChars, name, NULL) : NULL;
    const char *cdir = cache_dir ? JNI_CALL(env, GetStringUTFChars, cache_dir, NULL) : NULL;
    ex_classifier *k = (ex_classifier *)calloc(1, sizeof *k);
    int ok = 0;
    char why[320] = "out of memory";
    if (k != NULL && bytes != NULL) {
        ti_session_desc d;
        memset(&d, 0, sizeof d);
        d.num_threads = threads;
        d.backend = (ti_backend)backend;
        d.opencl_cache_dir = cdir; /* Context.getCacheDir(): compiled GPU programs, kept */
        ok = ex_classifier_open(k, bytes, (size_t)size, cname ? cname : "<model>", &d);
        if (!ok) memcpy(why, k->error, sizeof why);
    }
    if (bytes) JNI_CALL(env, ReleaseByteArrayElements, model, bytes, JNI_ABORT);
    if (cname) JNI_CALL(env, ReleaseStringUTFChars, name, cname);
    if (cdir) JNI_CALL(env, ReleaseStringUTFChars, cache_dir, cdir);
    if (!ok) {
        free(k);
        throw_java(env, "java/lang/IllegalArgumentException", why);
        return 0;
    }
    return (jlong)(intptr_t)k;
}

/* int classify(long handle, int[] argb, int width, int height, int[] classes, double[] scores):
 * the best classes.length classes, best first; returns how many were written. */
JNIEXPORT jint JNICALL Java_org_tinyinfer_example_Classifier_classify(
    JNIEnv *env, jclass cls, jlong handle, jintArray argb, jint width, jint height,
    jintArray classes, jdoubleArray scores) {
    (void)cls;
    ex_classifier *k = from_handle(env, handle);
    if (k == NULL) return 0;
    if (argb == NULL || classes == NULL || scores == NULL || width < 1 || height < 1 ||
        (jlong)JNI_CALL(env, GetArrayLength, argb) < (jlong)width * height ||
        JNI_CALL(env, GetArrayLength, scores) < JNI_CALL(env, GetArrayLength, classes)) {
        throw_java(env, "java/lang/IllegalArgumentException",
                   "classify: pixels must hold width*height ARGB ints, scores as many as classes");
        return 0;
    }
    jsize top = JNI_CALL(env, GetArrayLength, classes);
    int *best = (int *)malloc(sizeof(int) * (size_t)(top > 0 ? top : 1));
    double *score = (double *)malloc(sizeof(double) * (size_t)(top > 0 ? top : 1));
    jint *px = JNI_CALL(env, GetIntArrayElements, argb, NULL);
    int n = -1;
    if (best != NULL && score != NULL && px != NULL)
        n = ex_classifier_run(k, px, width, height, (size_t)width * 4, EX_PIXELS_ARGB32, (int)top,
                              best, score);
    else
        snprintf(k->error, sizeof k->error, "out of memory");
    if (px) JNI_CALL(env, ReleaseIntArrayElements, argb, px, JNI_ABORT);
    if (n >= 0) {
        jint *out = (jint *)malloc(sizeof(jint) * (size_t)(n > 0 ? n : 1));
        if (out != NULL) {
            for (int i = 0; i < n; i++) out[i] = best[i];
            JNI_CALL(env, SetIntArrayRegion, classes, 0, n, out);
            JNI_CALL(env, SetDoubleArrayRegion, scores, 0, n, score);
            free(out);
        } else {
            snprintf(k->error, sizeof k->error, "out of memory");
            n = -1;
        }
    }
    free(best);
    free(score);
    if (n < 0) throw_java(env, "java/lang/RuntimeException", k->error);
    return n < 0 ? 0 : n;
}

/* String info(long handle): "cpu" or "opencl: <device>", and why not OpenCL when it fell back */
JNIEXPORT jstring JNICALL Java_org_tinyinfer_example_Classifier_info(JNIEnv *env, jclass cls,
                                                                     jlong handle) {
    (void)cls;
    ex_classifier *k = from_handle(env, handle);
    if (k == NULL) return NULL;
    ti_session_info info;
    char text[768];
    if (ti_session_get_info(k->session, &info) != TI_OK) return NULL;
    if (info.backend == TI_BACKEND_OPENCL)
        snprintf(text, sizeof text, "opencl: %s, input %dx%dx%d", info.device, k->w, k->h, k->c);
    else
        snprintf(text, sizeof text, "cpu, input %dx%dx%d%s%.600s", k->w, k->h, k->c,
                 info.fallback_reason[0] ? "; not OpenCL: " : "", info.fallback_reason);
    return JNI_CALL(env, NewStringUTF, text);
}

/* void destroy(long handle) */
JNIEXPORT void JNICALL Java_org_tinyinfer_example_Classifier_destroy(JNIEnv *env, jclass cls,
                                                                     jlong handle) {
    (void)env;
    (void)cls;
    ex_classifier *k = (ex_classifier *)(intptr_t)handle;
    if (k == NULL) return;
    ex_classifier_close(k);
    free(k);
}
