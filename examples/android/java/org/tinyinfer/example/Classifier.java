/* Classifier: an image classifier on tinyinfer, for Android apps (plain Java: it compiles
 * with javac alone, without android.jar). The native side is jni/tinyinfer_jni.c, built
 * into libtinyinfer_jni.so by ../Android.mk or ../CMakeLists.txt.
 *
 *   byte[] model = readAll(getAssets().open("mobilenet_v2_1.0_224_quant.tflite"));
 *   try (Classifier c = new Classifier(model, "mobilenet", 0, Classifier.BACKEND_AUTO,
 *                                      getCacheDir().getPath())) {
 *       int[] argb = new int[bitmap.getWidth() * bitmap.getHeight()];
 *       bitmap.getPixels(argb, 0, bitmap.getWidth(), 0, 0, bitmap.getWidth(), bitmap.getHeight());
 *       Classifier.Result[] top = c.classify(argb, bitmap.getWidth(), bitmap.getHeight(), 5);
 *   }
 *
 * A Classifier is one tinyinfer session: its methods are synchronized, so one thread runs
 * it at a time. For parallel work make one Classifier per thread. */
package org.tinyinfer.example;

public final class Classifier implements AutoCloseable {
    static {
        System.loadLibrary("tinyinfer_jni");
    }

    public static final int BACKEND_AUTO = 0; /* OpenCL when the phone has it, else the CPU */
    public static final int BACKEND_CPU = 1;
    public static final int BACKEND_OPENCL = 2;

    /** One class: its index in the model's output and its score (dequantized). */
    public static final class Result {
        public final int index;
        public final double score;

        Result(int index, double score) {
            this.index = index;
            this.score = score;
        }
    }

    private long handle;

    /**
     * Loads a .tflite or .onnx model from its bytes and prepares a session.
     * @param threads 0: the library's choice; 1: no worker threads
     * @param cacheDir where compiled OpenCL programs are kept (Context.getCacheDir()), or null
     * @throws IllegalArgumentException with tinyinfer's message when the model is refused
     */
    public Classifier(byte[] model, String name, int threads, int backend, String cacheDir) {
        handle = create(model, name, threads, backend, cacheDir);
    }

    /**
     * Classifies ARGB pixels (Bitmap.getPixels), resized to the model's input.
     * @return the topK best classes, best first
     */
    public synchronized Result[] classify(int[] argb, int width, int height, int topK) {
        if (topK < 1) throw new IllegalArgumentException("topK must be at least 1");
        int[] classes = new int[topK];
        double[] scores = new double[topK];
        int n = classify(handle, argb, width, height, classes, scores);
        Result[] out = new Result[n];
        for (int i = 0; i < n; i++) out[i] = new Result(classes[i], scores[i]);
        return out;
    }

    /** "cpu" or "opencl: device", the input size, and why not OpenCL when it fell back. */
    public synchronized String backend() {
        return info(handle);
    }

    @Override
    public synchronized void close() {
        destroy(handle);
        handle = 0;
    }

    private static native long create(byte[] model, String name, int threads, int backend,
                                      String cacheDir);
    private static native int classify(long handle, int[] argb, int width, int height,
                                       int[] classes, double[] scores);
    private static native String info(long handle);
    private static native void destroy(long handle);
}
