/* Runs the Android example's Classifier (examples/android/java) on the desktop JVM through
 * its JNI bridge built for the host: decodes an image with javax.imageio, classifies it and
 * prints "rank score label" lines like examples/classify.c, so build.sh can compare the two.
 * Then checks that bad input gets a Java exception, not a crash.
 *   java -Djava.library.path=DIR -cp CLASSES ClassifyJni MODEL IMAGE LABELS */
import java.awt.image.BufferedImage;
import java.io.File;
import java.nio.file.Files;
import java.util.List;
import java.util.Locale;
import javax.imageio.ImageIO;
import org.tinyinfer.example.Classifier;

public class ClassifyJni {
    public static void main(String[] args) throws Exception {
        byte[] model = Files.readAllBytes(new File(args[0]).toPath());
        BufferedImage img = ImageIO.read(new File(args[1]));
        List<String> labels = Files.readAllLines(new File(args[2]).toPath());
        int w = img.getWidth(), h = img.getHeight();
        int[] argb = img.getRGB(0, 0, w, h, null, 0, w);
        int failed = 0;
        try (Classifier c = new Classifier(model, args[0], 1, Classifier.BACKEND_CPU, null)) {
            System.err.println("backend: " + c.backend());
            Classifier.Result[] top = c.classify(argb, w, h, 5);
            int offset = labels.size() == 1002 ? 1 : 0; /* ImageNet's "background" line */
            for (int i = 0; i < top.length; i++)
                System.out.println(String.format(Locale.ROOT, "%d %.4f %s", i + 1, top[i].score,
                                                 labels.get(top[i].index + offset)));
            try { /* fewer pixels than width * height */
                c.classify(new int[3], w, h, 5);
                System.err.println("FAIL: a short pixel array was accepted");
                failed++;
            } catch (IllegalArgumentException e) {
                System.err.println("short pixel array: " + e.getMessage());
            }
        }
        try { /* a model that is not one */
            new Classifier(new byte[] {1, 2, 3, 4, 5, 6, 7, 8}, "junk.tflite", 1, 0, null).close();
            System.err.println("FAIL: junk bytes were accepted as a model");
            failed++;
        } catch (IllegalArgumentException e) {
            System.err.println("junk model: " + e.getMessage());
        }
        Classifier closed = new Classifier(model, "m", 1, Classifier.BACKEND_CPU, null);
        closed.close();
        try {
            closed.classify(argb, w, h, 1);
            System.err.println("FAIL: a closed Classifier ran");
            failed++;
        } catch (IllegalStateException e) {
            System.err.println("closed: " + e.getMessage());
        }
        System.err.println((3 - failed) + " passed, " + failed + " failed");
        System.exit(failed == 0 ? 0 : 1);
    }
}
