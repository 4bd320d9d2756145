#!/usr/bin/python3
"""Cost per iteration of an ONNX Loop with a tiny body (one Add), in
microseconds: Rivet's VM (and its reference interpreter) against ONNX Runtime
on the same model. A benchmark, not a test.

The model: `acc_out = Loop(M, true, acc) { acc + 1 }` over a float32[1]
accumulator. Each engine is timed at several trip counts; the slope of the
time over the trip count is the cost of one iteration (the intercept, the
fixed cost of a call, drops out).

    /usr/bin/python3 tools/bench/loop_iteration.py [--rivet build/tools/rivet]
        [--ort-python /work/ort-venv/bin/python]

ONNX Runtime runs in a separate interpreter (--ort-python, default: the first
python3 on PATH) because Debian's /usr/bin/python3, which has onnx 1.12 to
build the model, has no onnxruntime: `python3 -m venv V && V/bin/pip install
onnxruntime numpy`.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import least_squares_slope, machine_summary, rivet_bench, rivet_binary  # noqa: E402

OPSET = 13  # ONNX Runtime supports it; Rivet's frontend too.


def build_loop_model(path):
    one = helper.make_tensor("one", TensorProto.FLOAT, [1], [1.0])
    body = helper.make_graph(
        [
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
            helper.make_node("Add", ["acc_in", "one"], ["acc_out"]),
        ],
        "body",
        [
            helper.make_tensor_value_info("iter", TensorProto.INT64, []),
            helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
            helper.make_tensor_value_info("acc_in", TensorProto.FLOAT, [1]),
        ],
        [
            helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
            helper.make_tensor_value_info("acc_out", TensorProto.FLOAT, [1]),
        ],
        initializer=[one],
    )
    graph = helper.make_graph(
        [
            helper.make_node("Constant", [], ["cond"], value=helper.make_tensor("c", TensorProto.BOOL, [], [True])),
            helper.make_node("Loop", ["M", "cond", "acc0"], ["acc"], body=body),
        ],
        "tiny_loop",
        [
            helper.make_tensor_value_info("M", TensorProto.INT64, []),
            helper.make_tensor_value_info("acc0", TensorProto.FLOAT, [1]),
        ],
        [helper.make_tensor_value_info("acc", TensorProto.FLOAT, [1])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 7
    onnx.checker.check_model(model)
    onnx.save(model, path)


ORT_SCRIPT = r"""
import json, sys, time
import numpy as np
import onnxruntime as ort
model, trips, min_time = sys.argv[1], [int(t) for t in sys.argv[2].split(",")], float(sys.argv[3])
so = ort.SessionOptions()
so.intra_op_num_threads = 1
so.inter_op_num_threads = 1
sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
acc0 = np.zeros([1], np.float32)
out = {"version": ort.__version__, "ms": {}}
for m in trips:
    feed = {"M": np.array(m, np.int64), "acc0": acc0}
    r = sess.run(None, feed)[0]
    assert r[0] == float(m), (r, m)
    times, start = [], time.perf_counter()
    while len(times) < 3 or time.perf_counter() - start < min_time:
        t0 = time.perf_counter()
        sess.run(None, feed)
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    out["ms"][m] = times[len(times) // 2]
print(json.dumps(out))
"""


def time_rivet(rivet, model, workdir, trips, executor, min_time):
    acc0 = os.path.join(workdir, "acc0.npy")
    np.save(acc0, np.zeros([1], np.float32))
    ms = {}
    for m in trips:
        mpath = os.path.join(workdir, f"M_{m}.npy")
        np.save(mpath, np.array(m, np.int64))
        # One intra-op thread, as ONNX Runtime gets below.
        r = rivet_bench(rivet, model, ["--input", f"M={mpath}", "--input", f"acc0={acc0}", "--executor", executor,
                                       "--threads", "1", "--warmup", "1", "--repeat", "3",
                                       "--min-time", str(min_time)])
        ms[m] = r["median_ms"]
    return ms


def per_iteration_us(ms):
    trips = sorted(ms)
    slope, intercept = least_squares_slope(trips, [ms[t] for t in trips])
    return slope * 1e3, intercept


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rivet")
    ap.add_argument("--ort-python", default=shutil.which("python3"))
    ap.add_argument("--trips", default="1000,10000,100000,1000000")
    ap.add_argument("--interp-trips", default="1000,10000,100000")
    ap.add_argument("--min-time", type=float, default=0.3)
    ap.add_argument("--json", help="also write the figures here")
    a = ap.parse_args()
    rivet = rivet_binary(a.rivet)
    trips = [int(t) for t in a.trips.split(",")]
    with tempfile.TemporaryDirectory() as work:
        model = os.path.join(work, "tiny_loop.onnx")
        build_loop_model(model)
        results = {}
        results["rivet vm"] = time_rivet(rivet, model, work, trips, "vm", a.min_time)
        results["rivet interp"] = time_rivet(rivet, model, work, [int(t) for t in a.interp_trips.split(",")],
                                             "interp", a.min_time)
        ort_version = None
        if a.ort_python:
            p = subprocess.run([a.ort_python, "-c", ORT_SCRIPT, model, a.trips, str(a.min_time)],
                               capture_output=True, text=True)
            if p.returncode == 0:
                o = json.loads(p.stdout)
                ort_version = o["version"]
                results[f"onnxruntime {ort_version}"] = {int(k): v for k, v in o["ms"].items()}
            else:
                print(f"(ONNX Runtime not measured: {p.stderr.strip().splitlines()[-1] if p.stderr else p.returncode})")
    print(f"machine: {machine_summary()}")
    print(f"ONNX Loop, body = one Add on float32[1], opset {OPSET}; median ms per run by trip count\n")
    cols = sorted({t for r in results.values() for t in r})
    print("| engine | " + " | ".join(f"{t:,} iter (ms)" for t in cols) + " | µs / iteration | fixed cost (ms) |")
    print("| --- | " + " | ".join("---:" for _ in cols) + " | ---: | ---: |")
    per_iter = {}
    for name, ms in results.items():
        us, fixed = per_iteration_us(ms)
        per_iter[name] = us
        cells = " | ".join(f"{ms[t]:.3f}" if t in ms else "" for t in cols)
        print(f"| {name} | {cells} | {us:.3f} | {fixed:.3f} |")
    vm = per_iter["rivet vm"]
    print()
    for name, us in per_iter.items():
        if name != "rivet vm":
            print(f"{name} / rivet vm per iteration: {us / vm:.1f}x")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"ms": {k: {str(t): v for t, v in r.items()} for k, r in results.items()},
                       "us_per_iteration": per_iter}, f, indent=1)


if __name__ == "__main__":
    main()
