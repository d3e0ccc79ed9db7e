#!/usr/bin/env python3
"""Before / after of a change inside a real model, node by node, on a noisy machine.

Builds bench/nodemin.c against two tinyinfer.h copies (A and B: a git revision, a folder
holding tinyinfer.h, or WORK for the working tree's), then runs the two alternately
(A B A B ...) ROUNDS times, RUNS runs each, and keeps each node's minimum over all rounds.
A whole run's time moves with everything else the machine does; per-node minima taken from
interleaved rounds are what survived that on shared 2-core machines (bench/results/ab-*.md).
Prints the nodes that moved most, each round's sum of node minima per build (so a reader
sees whether B won every round or only on average), and the sums of the minima.

Usage: bench/ab.py A B MODEL [--threads 1] [--runs 40] [--rounds 4] [--top 15] [--cc gcc]
       bench/ab.py --self-test
Example: bench/ab.py HEAD WORK ~/.cache/tinyinfer/arch/mobilenet_v2/model.onnx
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
LINE = re.compile(r"^\s*(\d+)\s+(\S+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s+(.*)$")


def header_dir(spec, tmp, tag):
    """A folder holding the tinyinfer.h that spec names."""
    if spec == "WORK":
        return ROOT
    if os.path.isdir(spec):
        if not os.path.isfile(os.path.join(spec, "tinyinfer.h")):
            sys.exit("ab.py: %s has no tinyinfer.h" % spec)
        return spec
    d = os.path.join(tmp, tag)
    os.makedirs(d)
    text = subprocess.run(["git", "-C", ROOT, "show", spec + ":tinyinfer.h"],
                          check=True, capture_output=True).stdout
    with open(os.path.join(d, "tinyinfer.h"), "wb") as f:
        f.write(text)
    return d


def build(cc, hdir, out):
    subprocess.run([cc, "-O2", "-I" + hdir, os.path.join(HERE, "nodemin.c"), "-o", out,
                    "-lm", "-ldl", "-pthread"], check=True)


def parse(out):
    """{(index, op, name): minimum ms} from nodemin's output (its node lines)."""
    nodes = {}
    for line in out.splitlines():
        m = LINE.match(line)
        if m:
            nodes[(int(m.group(1)), m.group(2), m.group(6).strip())] = float(m.group(3))
    return nodes


def run(binary, model, threads, runs):
    out = subprocess.run([binary, model, str(threads), str(runs)], check=True,
                         capture_output=True, text=True).stdout
    nodes = parse(out)
    if not nodes:
        sys.exit("ab.py: no node lines from %s:\n%s" % (binary, out))
    return nodes


def self_test():
    """The parsing of nodemin's output (as bench/nodemin.c prints it), without building."""
    out = ("  0 Conv                 0.3811   0.3911   0.4021  Conv_0\n"
           " 12 Add                  0.0198   0.0201   0.0250  Add_3 with spaces\n"
           " 63 Flatten              0.0000   0.0000   0.0010  Flatten_0\n"
           "best run 10.197 ms, median run 10.304 ms, sum of node minima 10.034 ms, of node "
           "medians 10.224 ms (1 threads, 5 runs)\n")
    nodes = parse(out)
    assert nodes == {(0, "Conv", "Conv_0"): 0.3811, (12, "Add", "Add_3 with spaces"): 0.0198,
                     (63, "Flatten", "Flatten_0"): 0.0}, nodes
    assert parse("best run 1.0 ms\n") == {}
    print("bench/ab.py self-test: ok")


def main():
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("model")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--cc", default="gcc")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        bins = []
        for tag, spec in (("a", args.a), ("b", args.b)):
            out = os.path.join(tmp, "nodemin_" + tag)
            build(args.cc, header_dir(spec, tmp, tag), out)
            bins.append(out)
        best = [{}, {}]
        sums = [[], []]
        for _ in range(args.rounds):
            for i in (0, 1):
                nodes = run(bins[i], args.model, args.threads, args.runs)
                sums[i].append(sum(nodes.values()))
                for k, v in nodes.items():
                    best[i][k] = min(v, best[i].get(k, v))
    if set(best[0]) != set(best[1]):
        print("note: the two builds' node lists differ; only common nodes are compared")
    common = sorted(set(best[0]) & set(best[1]))
    rows = sorted(common, key=lambda k: -abs(best[1][k] - best[0][k]))
    print("A = %s, B = %s, %s, %d thread(s), %d rounds x %d runs alternating" %
          (args.a, args.b, os.path.basename(os.path.dirname(args.model)) or args.model,
           args.threads, args.rounds, args.runs))
    print("%-5s %-22s %9s %9s %7s  %s" % ("node", "op", "A ms", "B ms", "B/A", "name"))
    for k in rows[:args.top]:
        a, b = best[0][k], best[1][k]
        print("%-5d %-22s %9.4f %9.4f %7.3f  %s" % (k[0], k[1][:22], a, b,
                                                  b / a if a > 0 else 0.0, k[2][:60]))
    sa = sum(best[0][k] for k in common)
    sb = sum(best[1][k] for k in common)
    print("rounds' sums of node minima, A: %s" % " ".join("%.3f" % s for s in sums[0]))
    print("rounds' sums of node minima, B: %s" % " ".join("%.3f" % s for s in sums[1]))
    print("sum of per-node minima over all rounds: A %.3f ms, B %.3f ms, B/A %.3f" %
          (sa, sb, sb / sa if sa > 0 else 0.0))


if __name__ == "__main__":
    main()
