#!/usr/bin/env python3
"""Adds the ONNX conformance pass list to a GPU check bundle.

Runs here, on the build machine (no GPU needed), with /usr/bin/python3 (onnx
and numpy). For every test of tests/conformance/pass_list_interp.txt it
compiles the model with `rivet compile --target cuda` and, when some kernel
landed on the GPU (the others run on the host and are the CPU suites'
business), writes BUNDLE/conformance/NAME/{model.rvx, set_K/NAME_OF_INPUT.npy,
set_K/expected_I.npy} from the test's protobuf data sets, and a manifest
BUNDLE/conformance.json. tools/scripts/gpu-conformance-check.py runs them on
the GPU machine, which needs only numpy.

    /usr/bin/python3 tools/scripts/gpu-conformance-bundle.py [BUNDLE]
        [--data DIR] [--jobs N] [--filter SUBSTR] [--only-file F]
"""
import argparse
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The conformance runner's tolerance (tests/conformance/TestCase.cc).
RTOL, ATOL = 1e-3, 1e-7


def tensor_file(path):
    """The TensorProto in path as an array, or None for another proto."""
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        data = f.read()
    try:
        t.ParseFromString(data)
    except Exception:
        return None
    if not t.dims and not t.raw_data and t.data_type == 0:
        return None  # a SequenceProto or OptionalProto parses as empty
    try:
        return numpy_helper.to_array(t)
    except Exception:  # another proto that happened to parse
        return None


def prepare(test, args, out_root):
    """Compiles one test; returns its manifest entry (or a reason)."""
    src = os.path.join(args.data, test)
    name = test.replace("/", ".")
    dest = os.path.join(out_root, name)
    os.makedirs(dest, exist_ok=True)
    rvx = os.path.join(dest, "model.rvx")
    cmd = [args.rivet, "compile", os.path.join(src, "model.onnx"), "--target",
           "cuda", "--gpu-placement", "all", "--cpu", "x86-64-v3", "-o", rvx]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        shutil.rmtree(dest)
        return {"name": name, "skip": "compile failed: " + p.stderr.strip()[:300]}
    if "target cuda" not in p.stdout:
        shutil.rmtree(dest)
        return {"name": name, "skip": "no kernel on the GPU"}
    model = onnx.load(os.path.join(src, "model.onnx"))
    inits = {i.name for i in model.graph.initializer}
    inputs = [i.name for i in model.graph.input if i.name not in inits]
    sets = []
    for d in sorted(os.listdir(src)):
        if not d.startswith("test_data_set_"):
            continue
        sd = os.path.join(src, d)
        entry = {"dir": d, "inputs": {}, "expected": []}
        for i, iname in enumerate(inputs):
            a = tensor_file(os.path.join(sd, f"input_{i}.pb"))
            if a is None:
                shutil.rmtree(dest)
                return {"name": name, "skip": f"input {i} is not a tensor"}
            os.makedirs(os.path.join(dest, d), exist_ok=True)
            f = os.path.join(d, f"input_{i}.npy")
            np.save(os.path.join(dest, f), a)
            entry["inputs"][iname] = f
        i = 0
        while os.path.exists(os.path.join(sd, f"output_{i}.pb")):
            a = tensor_file(os.path.join(sd, f"output_{i}.pb"))
            if a is None:
                shutil.rmtree(dest)
                return {"name": name, "skip": f"output {i} is not a tensor"}
            f = os.path.join(d, f"expected_{i}.npy")
            np.save(os.path.join(dest, f), a)
            entry["expected"].append(f)
            i += 1
        sets.append(entry)
    return {"name": name, "dir": name, "sets": sets, "rtol": RTOL, "atol": ATOL}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bundle", nargs="?", default=os.path.join(ROOT, "gpu-bundle"))
    ap.add_argument("--data", default="/usr/share/libonnx-testdata/data")
    ap.add_argument("--rivet", default=os.path.join(ROOT, "build/tools/rivet"))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--filter", default="")
    ap.add_argument("--only-file", help="only the tests named in this file (one per line, "
                    "as the device script reports them: node.test_abs)")
    args = ap.parse_args()
    with open(os.path.join(ROOT, "tests/conformance/pass_list_interp.txt")) as f:
        tests = [l.strip() for l in f if l.strip() and not l.startswith("#")]
    tests = [t for t in tests if args.filter in t]
    if args.only_file:
        with open(args.only_file) as f:
            only = {l.strip() for l in f if l.strip()}
        tests = [t for t in tests if t.replace("/", ".") in only]
    out_root = os.path.join(args.bundle, "conformance")
    shutil.rmtree(out_root, ignore_errors=True)
    os.makedirs(out_root)
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        entries = list(pool.map(lambda t: prepare(t, args, out_root), tests))
    cases = [e for e in entries if "skip" not in e]
    skipped = [e for e in entries if "skip" in e]
    with open(os.path.join(args.bundle, "conformance.json"), "w") as f:
        json.dump({"cases": cases, "skipped": skipped}, f, indent=1)
    reasons = {}
    for e in skipped:
        reasons[e["skip"].split(":")[0]] = reasons.get(e["skip"].split(":")[0], 0) + 1
    size = sum(os.path.getsize(os.path.join(d, f))
               for d, _, fs in os.walk(out_root) for f in fs)
    print(f"conformance: {len(cases)} of {len(tests)} pass-list tests have GPU "
          f"kernels ({size / 2**20:.1f} MiB); left out: {reasons}")


if __name__ == "__main__":
    sys.exit(main())
