#!/usr/bin/env python3
"""Per-call overhead of the Python package: `InferenceSession.run` on a tiny
model (y = x + x, float32[4]) against the C++ `rivet bench` time of the same
model and against ONNX Runtime's Python `InferenceSession.run` (one intra-op
thread everywhere). Run it with the venv of tools/scripts/python-test.sh
(`pip install onnxruntime` there for the ONNX Runtime column):

    build-venv/bin/python tools/bench/python_overhead.py [--rivet build/tools/rivet]
"""
import argparse
import os
import statistics
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import machine_summary, rivet_bench, rivet_binary  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "models"))
from tiny_add import tiny_model  # noqa: E402

import rivet  # noqa: E402


def per_call(fn, n):
    """Seconds per call of fn over n calls (after a short warm-up)."""
    for _ in range(min(n, 2000)):
        fn()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t0) / n


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rivet", help="the rivet CLI (default build/tools/rivet)")
    ap.add_argument("--n", type=int, default=4, help="elements of x")
    ap.add_argument("--calls", type=int, default=50_000, help="per round")
    ap.add_argument("--rounds", type=int, default=7)
    a = ap.parse_args()
    cli = rivet_binary(a.rivet)
    rivet.set_num_threads(1)
    with tempfile.TemporaryDirectory() as d:
        model = os.path.join(d, "tiny.onnx")
        tiny_model(model, a.n)
        exe = rivet.compile(model, codegen="so")
        exe.save(os.path.join(d, "tiny.rvx"))
        x = np.ones(a.n, np.float32)
        feeds = {"x": x}
        sess = rivet.InferenceSession(exe)
        osess = None
        try:
            import onnxruntime as ort
            so = ort.SessionOptions()
            so.intra_op_num_threads = 1
            so.inter_op_num_threads = 1
            osess = ort.InferenceSession(model, so,
                                         providers=["CPUExecutionProvider"])
        except ImportError:
            print("(onnxruntime not installed: no ONNX Runtime column)")
        # Paired rounds: each round times every engine back to back, so that
        # a slow phase of this noisy machine slows all of them alike; the
        # figures are the medians over rounds (of the overhead too).
        rounds = []
        for _ in range(a.rounds):
            b = rivet_bench(cli, os.path.join(d, "tiny.rvx"),
                            ["--threads", "1", "--repeat", "20000",
                             "--min-time", "0.3"])
            r = {"cpp": b["median_ms"] * 1e-3,
                 "run": per_call(lambda: sess.run(None, feeds), a.calls),
                 "invoke": per_call(lambda: sess.invoke("main", x), a.calls)}
            if osess is not None:
                r["ort"] = per_call(lambda: osess.run(None, feeds), a.calls)
            r["overhead"] = r["run"] - r["cpp"]
            rounds.append(r)
    med = {k: statistics.median(r[k] for r in rounds) for k in rounds[0]}
    cpp, py, inv, ort_t = med["cpp"], med["run"], med["invoke"], med.get("ort")
    us = 1e6
    print(f"tiny model: y = x + x, float32[{a.n}], 1 thread, medians of "
          f"{a.rounds} paired rounds ({machine_summary()})")
    print(f"  rivet bench (C++, median)       {cpp * us:8.3f} us")
    per_round = ", ".join(f"+{r['overhead'] * us:.2f}" for r in rounds)
    print(f"  rivet InferenceSession.run      {py * us:8.3f} us   "
          f"(+{med['overhead'] * us:.3f} us over C++; rounds {per_round})")
    print(f"  rivet InferenceSession.invoke   {inv * us:8.3f} us")
    if ort_t is not None:
        print(f"  onnxruntime InferenceSession.run {ort_t * us:7.3f} us   "
              f"(rivet/ort = {py / ort_t:.2f}x)")


if __name__ == "__main__":
    main()
