"""Writes the ONNX backend conformance suites into a cache directory, in the test layout
the C runner reads (DIR/<suite>/<test>/model.onnx + test_data_set_N/{input,output}_K.pb):
  node:  onnx.backend.test.case.node.collect_testcases() (generated with numpy)
  simple, pytorch-converted, pytorch-operator, light: copied from the onnx wheel.
Each test dir also gets tolerance.txt ("rtol atol"). Tests whose data is not plain tensors
(sequences, optionals, maps) get a file UNSUPPORTED_DATA naming why.
Also writes OUTDIR/ops.txt: every op of the default ONNX domain (onnx.defs.get_all_schemas()),
one per line as "Name<TAB>since_version<TAB>deprecated|-", for the C runner's coverage count.
The light suite stays flat (light_X.onnx + light_X_output_0.pb): its input is not stored; the
runner feeds arange(n)/n as float32, as onnx's backend runner does (generate_dummy_data with
random=False), which C reproduces exactly.
Usage: python3 gen_onnx_suite.py OUTDIR [--ops-only]"""
import os, shutil, sys
import numpy as np
import onnx
from onnx import numpy_helper
from onnx.backend.test.case import node as node_cases


def write_tensor(path, value, name):
    # Some cases (Cast, CastLike, float8/int4 QuantizeLinear, ...) give their data as
    # TensorProto already: write it as is, named like the graph value.
    if isinstance(value, onnx.TensorProto):
        t = onnx.TensorProto()
        t.CopyFrom(value)
        t.name = name
        with open(path, "wb") as f:
            f.write(t.SerializeToString())
        return
    if value is None:
        raise TypeError("absent optional")
    if not isinstance(value, np.ndarray):
        value = np.asarray(value)
    if value.dtype == object:
        raise TypeError("object array")
    t = numpy_helper.from_array(value, name)
    with open(path, "wb") as f:
        f.write(t.SerializeToString())


def write_ops_list(out):
    schemas = [s for s in onnx.defs.get_all_schemas() if s.domain == ""]
    schemas.sort(key=lambda s: s.name)
    with open(os.path.join(out, "ops.txt"), "w") as f:
        f.write("# ONNX default-domain ops from onnx %s: name, since_version, deprecated\n"
                % onnx.__version__)
        for s in schemas:
            f.write("%s\t%d\t%s\n" % (s.name, s.since_version,
                                        "deprecated" if s.deprecated else "-"))
    return len(schemas)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    n_ops = write_ops_list(out)
    if "--ops-only" in sys.argv[2:]:
        print("wrote %d op names to %s" % (n_ops, os.path.join(out, "ops.txt")))
        return
    # Written beside the old suite and swapped in at the end, so that a runner started
    # meanwhile sees either the old or the new suite, and stale files do not survive.
    final_ndir = os.path.join(out, "node")
    ndir = final_ndir + ".tmp"
    if os.path.isdir(ndir):
        shutil.rmtree(ndir)
    os.makedirs(ndir)
    cases = node_cases.collect_testcases(None)
    for case in cases:
        d = os.path.join(ndir, case.name)
        os.makedirs(d, exist_ok=True)
        onnx.save(case.model, os.path.join(d, "model.onnx"))
        with open(os.path.join(d, "tolerance.txt"), "w") as f:
            f.write("%g %g\n" % (case.rtol, case.atol))
        ins = [i.name for i in case.model.graph.input]
        outs = [o.name for o in case.model.graph.output]
        for k, (inputs, outputs) in enumerate(case.data_sets or []):
            sd = os.path.join(d, "test_data_set_%d" % k)
            os.makedirs(sd, exist_ok=True)
            try:
                for i, v in enumerate(inputs):
                    write_tensor(os.path.join(sd, "input_%d.pb" % i), v, ins[i] if i < len(ins) else "")
                for i, v in enumerate(outputs):
                    write_tensor(os.path.join(sd, "output_%d.pb" % i), v, outs[i] if i < len(outs) else "")
            except Exception as e:  # sequences, optionals, maps: not tensors
                with open(os.path.join(d, "UNSUPPORTED_DATA"), "w") as f:
                    f.write("test data is not a plain tensor: %s\n" % type(e).__name__)
    if os.path.isdir(final_ndir):
        os.rename(final_ndir, final_ndir + ".old")
    os.rename(ndir, final_ndir)
    if os.path.isdir(final_ndir + ".old"):
        shutil.rmtree(final_ndir + ".old")
    data = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data")
    for suite in ("simple", "pytorch-converted", "pytorch-operator", "light"):
        src = os.path.join(data, suite)
        dst = os.path.join(out, suite)
        if os.path.isdir(dst):
            shutil.rmtree(dst)
        shutil.copytree(src, dst)
    print("wrote %d node tests to %s" % (len(cases), out))


if __name__ == "__main__":
    main()
