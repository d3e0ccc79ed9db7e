"""Reference outputs of the real TFLite models in ../shared/models/coral (Coral test data),
from ai-edge-litert, in the test layout the C runner reads:
  OUTDIR/<model>_<image>/model.tflite      symlink to the model in the coral dir (or a copy
                                           with one more output, for the *_logits tests)
  OUTDIR/<model>_<image>/test_data_set_0/input_0.pb, output_K.pb   (onnx TensorProto)
  OUTDIR/<model>_<image>/tolerance.txt     "0 1": quantized outputs may be 1 unit off
  OUTDIR/<model>_<image>/top.txt           the reference's top-1 (index, label) and how far
                                           the builtin kernels are from it, for people
The input tensor is stored already preprocessed, so the C side decodes nothing:
  images: decoded with PIL, converted to RGB (L for the MNIST LSTM), resized to the model's
  input height x width with plain bilinear interpolation (half-pixel centres, no
  antialiasing, no crop: out(y, x) samples the source at ((y + 0.5) * H / h - 0.5, ...),
  clamped at the borders, rounded half up to uint8), then the uint8 pixels are the input
  values (every coral model takes uint8 pixels: the input quantization maps them to the
  model's float range).
  split_concat: seeded uniform random uint8.
deeplabv3: the model's output is its ARG_MAX label map; a second test
(..._logits) adds the ARG_MAX's input (the 21 class scores per pixel, uint8) as an output,
so that the scores can be checked to 1 unit and the mask by agreement.
model_invoking_error.tflite is not run here (its error is checked in tests/errors/).
The oracle is ai-edge-litert with TFLite's reference kernels (OpResolverType.BUILTIN_REF,
one thread): the quantized arithmetic tinyinfer follows. The optimized builtin kernels that
ai-edge-litert runs by default round some uint8 CONV_2D results 1 unit differently from the
reference kernels, and over 50 layers this grows to up to 16 units at a classifier's
softmax; top.txt records that distance (--kernels builtin makes the builtin kernels the
oracle instead).

Usage: python3 gen_coral_refs.py OUTDIR [--coral DIR] [--kernels ref|builtin]
(default DIR: ../shared/models/coral beside the repository; absent: says so, exits 0)
Needs: numpy, pillow, onnx, ai-edge-litert (with its schema_py_generated and flatbuffers,
for the logits copy of deeplabv3; without them that one test is left out)."""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np  # noqa: E402
from onnx import numpy_helper  # noqa: E402

SEED = 11
HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_CORAL = os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared", "models", "coral"))

# model file (without .tflite) -> (images, labels file)
MODELS = {
    "mobilenet_v1_0.25_128_quant": (["grace_hopper", "cat"], "imagenet_labels.txt"),
    "mobilenet_v2_1.0_224_quant": (["grace_hopper", "cat"], "imagenet_labels.txt"),
    "tf2_mobilenet_v2_1.0_224_ptq": (["grace_hopper", "cat"], "imagenet_labels.txt"),
    "mobilenet_v2_1.0_224_inat_bird_quant": (["bird"], "inat_bird_labels.txt"),
    "deeplabv3_mnv2_pascal_quant": (["bird_segmentation"], "pascal_voc_segmentation_labels.txt"),
    "keras_lstm_mnist_ptq": (["mnist_nine"], None),
    "split_concat": (["random"], None),
}


def interpreter(path=None, content=None, kernels="ref"):
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
    rt = {"ref": OpResolverType.BUILTIN_REF,
          "builtin": OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES}[kernels]
    it = Interpreter(model_path=path, model_content=content, num_threads=1,
                     experimental_op_resolver_type=rt)
    it.allocate_tensors()
    return it


def run(it, inputs):
    for det, v in zip(it.get_input_details(), inputs):
        it.set_tensor(det["index"], v)
    it.invoke()
    return [it.get_tensor(d["index"]).copy() for d in it.get_output_details()]


def resize_bilinear(img, h, w):
    """img: HxWxC uint8 -> hxwxC uint8, bilinear with half-pixel centres (see the docstring)."""
    H, W = img.shape[:2]
    if (H, W) == (h, w):
        return img.copy()
    src = img.astype(np.float64)

    def coords(n_out, n_in):
        c = (np.arange(n_out) + 0.5) * (n_in / n_out) - 0.5
        c = np.clip(c, 0, n_in - 1)
        i0 = np.floor(c).astype(np.int64)
        i1 = np.minimum(i0 + 1, n_in - 1)
        return i0, i1, c - i0
    y0, y1, fy = coords(h, H)
    x0, x1, fx = coords(w, W)
    fy = fy[:, None, None]
    fx = fx[None, :, None]
    top = src[y0][:, x0] * (1 - fx) + src[y0][:, x1] * fx
    bot = src[y1][:, x0] * (1 - fx) + src[y1][:, x1] * fx
    out = top * (1 - fy) + bot * fy
    return np.floor(out + 0.5).clip(0, 255).astype(np.uint8)


def image_input(coral, image, det):
    from PIL import Image
    shape = [int(d) for d in det["shape"]]
    im = Image.open(os.path.join(coral, image + ".bmp"))
    if len(shape) == 3:  # [1, rows, cols]: the grayscale MNIST LSTM
        a = np.asarray(im.convert("L"))[:, :, None]
        a = resize_bilinear(a, shape[1], shape[2])[:, :, 0]
    else:
        a = resize_bilinear(np.asarray(im.convert("RGB")), shape[1], shape[2])
    if det["dtype"] != np.uint8:
        raise SystemExit("%s: input dtype %s; this script feeds uint8 pixels" %
                         (image, det["dtype"].__name__))
    return a.reshape(shape)


def with_argmax_input_output(data):
    """Copy of a model whose ARG_MAX's input is also a graph output (appended). Uses the
    schema module ai-edge-litert ships and the flatbuffers package it depends on."""
    import flatbuffers
    from ai_edge_litert import schema_py_generated as s
    m = s.ModelT.InitFromObj(s.Model.GetRootAsModel(bytearray(data), 0))
    g = m.subgraphs[0]
    for op in g.operators:
        code = m.operatorCodes[op.opcodeIndex]
        if max(code.builtinCode, code.deprecatedBuiltinCode) == s.BuiltinOperator.ARG_MAX:
            g.outputs = list(g.outputs) + [int(op.inputs[0])]
            b = flatbuffers.Builder(len(data) + 4096)
            b.Finish(m.Pack(b), file_identifier=b"TFL3")
            return bytes(b.Output())
    return None


def write_pb(path, arr, name):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(np.array(arr, order="C"), name).SerializeToString())


def write_test(out, name, model_link, model_bytes, it, other, inputs, label_names):
    """it: the oracle's interpreter; other: the other kernel set's, to report the distance."""
    d = os.path.join(out, name)
    ds = os.path.join(d, "test_data_set_0")
    os.makedirs(ds, exist_ok=True)
    mp = os.path.join(d, "model.tflite")
    if model_bytes is not None:
        with open(mp, "wb") as f:
            f.write(model_bytes)
    else:
        os.symlink(model_link, mp)
    for k, (det, v) in enumerate(zip(it.get_input_details(), inputs)):
        write_pb(os.path.join(ds, "input_%d.pb" % k), v, det["name"])
    res = run(it, inputs)
    for k, (det, v) in enumerate(zip(it.get_output_details(), res)):
        write_pb(os.path.join(ds, "output_%d.pb" % k), v, det["name"])
    alt = run(other, inputs)
    with open(os.path.join(d, "tolerance.txt"), "w") as f:
        f.write("0 1\n")
    top = ""
    v = res[0]
    if v.ndim == 2 and v.shape[0] == 1 and v.shape[1] > 1:  # a classifier
        i = int(np.argmax(v[0]))
        lab = label_names[i] if label_names and i < len(label_names) else ""
        top = "top-1 %d %s (value %d)" % (i, lab, int(v[0, i]))
    elif v.ndim == 3 and np.issubdtype(v.dtype, np.integer):  # a label map
        cls, cnt = np.unique(v, return_counts=True)
        top = "mask classes: " + ", ".join(
            "%s %.1f%%" % (label_names[c] if label_names and c < len(label_names) else c,
                           100.0 * n / v.size) for c, n in zip(cls, cnt))
    dist = []
    for a, b in zip(res, alt):
        dd = np.abs(a.astype(np.int64) - b.astype(np.int64))
        dist.append("%d (%d of %d differ)" % (dd.max(), int((dd > 0).sum()), dd.size))
        if a.ndim == 2 and a.shape[0] == 1 and a.shape[1] > 1:
            dist[-1] += ", top-1 %s" % ("same" if np.argmax(a) == np.argmax(b) else
                                         "differs: %d" % np.argmax(b))
    top += "%sother kernels: max |diff| %s" % ("; " if top else "", ", ".join(dist))
    with open(os.path.join(d, "top.txt"), "w") as f:
        f.write(top + "\n")
    return top


def labels(coral, fname):
    if not fname:
        return None
    with open(os.path.join(coral, fname)) as f:
        lines = [line.rstrip("\n") for line in f]
    # "0  background" style files: strip a leading index
    out = []
    for line in lines:
        parts = line.split(maxsplit=1)
        out.append(parts[1] if len(parts) == 2 and parts[0].isdigit() else line)
    return out


def main():
    args = sys.argv[1:]
    if not args or args[0].startswith("-"):
        print(__doc__)
        return 2
    out = args[0]
    coral = args[args.index("--coral") + 1] if "--coral" in args else DEFAULT_CORAL
    kernels = args[args.index("--kernels") + 1] if "--kernels" in args else "ref"
    other = "builtin" if kernels == "ref" else "ref"
    if not os.path.isdir(coral):
        print("SKIP: no coral model directory at %s" % coral)
        return 0
    os.makedirs(out, exist_ok=True)
    n = 0
    for model, (images, lab_file) in MODELS.items():
        path = os.path.join(coral, model + ".tflite")
        if not os.path.isfile(path):
            print("note: %s is missing; its tests are left out" % path)
            continue
        lab = labels(coral, lab_file)
        for image in images:
            it = interpreter(path=path, kernels=kernels)
            if image == "random":
                rng = np.random.default_rng(SEED)
                inputs = [rng.integers(0, 256, [int(x) for x in d["shape"]]).astype(d["dtype"])
                          for d in it.get_input_details()]
            else:
                inputs = [image_input(coral, image, it.get_input_details()[0])]
            name = "%s_%s" % (model, image)
            top = write_test(out, name, os.path.abspath(path), None, it,
                             interpreter(path=path, kernels=other), inputs, lab)
            print("%-52s %s" % (name, top))
            n += 1
            if model.startswith("deeplab"):
                try:
                    data = with_argmax_input_output(open(path, "rb").read())
                except ImportError:
                    data = None
                    print("note: no flatbuffers/schema module: %s_logits left out" % name)
                if data:
                    top = write_test(out, name + "_logits", None, data,
                                     interpreter(content=data, kernels=kernels),
                                     interpreter(content=data, kernels=other), inputs, lab)
                    print("%-52s %s" % (name + "_logits", top))
                    n += 1
    print("%d coral reference tests written to %s" % (n, out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
