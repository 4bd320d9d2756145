#!/usr/bin/env python3
"""ONNX Attention and RMSNormalization (opset 23) in Rivet against ONNX
Runtime, on small models of transformer sizes. A benchmark, not a test.

    PY tools/bench/transformer_ops_bench.py [--rivet build/tools/rivet]
        [--threads 1,2] [--min-time 0.5] [--cases a,b,...] [--json OUT.json]

PY is an interpreter with numpy, onnx and onnxruntime (Debian's python3 has
no onnxruntime: `python3 -m venv V && V/bin/pip install onnx onnxruntime`).
Each case is written with onnx.helper, its inputs drawn once (seeded) and
saved as .npy; Rivet times it with `rivet bench MODEL --input ... --threads
T` (the VM at -O3: an attention model is one fused kernel, an RMS norm
with a multiply after it one generated kernel), ONNX Runtime
with intra_op_num_threads=T, ORT_ENABLE_ALL, after warmup runs, for at least
--min-time seconds. The two alternate for --rounds rounds (a shared
machine's speed drifts; batches side by side see the same machine). It
prints each engine's median over the rounds of its median latency (ms), the
median of the rounds' ratios (Rivet's over ONNX Runtime's), and the largest
difference between the two engines' outputs.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import machine_summary, rivet_bench, rivet_binary  # noqa: E402

# Attention: (batch, q heads, kv heads, q seq, kv seq, past, head size,
# causal, 3-D); RMSNormalization: ("rms", batch, seq, hidden, multiply after).
CASES = {
    "mha_s128": (1, 8, 8, 128, 128, 0, 64, False, False),
    "mha_s512": (1, 8, 8, 512, 512, 0, 64, False, False),
    "mha_s512_causal": (1, 8, 8, 512, 512, 0, 64, True, False),
    "gqa_3d_s512_causal": (1, 16, 4, 512, 512, 0, 64, True, True),
    "decode_past1024": (4, 8, 8, 1, 1, 1024, 64, True, False),
    "rms_s128_d768": ("rms", 1, 128, 768, False),
    "rms_s512_d4096": ("rms", 1, 512, 4096, False),
    "rms_mul_s512_d4096": ("rms", 1, 512, 4096, True),
}


def make_model(case, path):
    """Writes the case's model; returns its inputs (name -> array)."""
    if case[0] == "rms":
        return make_rms_model(case, path)
    return make_attention_model(case, path)


def make_rms_model(case, path):
    """RMSNormalization-23 over the last axis of [batch, seq, hidden] with a
    learned scale, optionally followed by a multiply (a gated MLP's input)."""
    _, b, s, d, mul = case
    rng = np.random.default_rng(0)
    feeds = {"X": rng.standard_normal((b, s, d), dtype=np.float32)}
    scale = helper.make_tensor("scale", TensorProto.FLOAT, [d], rng.uniform(0.5, 1.5, d).astype(np.float32))
    nodes = [helper.make_node("RMSNormalization", ["X", "scale"], ["N" if mul else "Y"], axis=-1, epsilon=1e-5)]
    graph_inputs = [helper.make_tensor_value_info("X", TensorProto.FLOAT, [b, s, d])]
    if mul:
        feeds["G"] = rng.standard_normal((b, s, d), dtype=np.float32)
        graph_inputs.append(helper.make_tensor_value_info("G", TensorProto.FLOAT, [b, s, d]))
        nodes.append(helper.make_node("Mul", ["N", "G"], ["Y"]))
    graph = helper.make_graph(
        nodes, "rms", graph_inputs, [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [b, s, d])], [scale]
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
    model.ir_version = 10
    onnx.checker.check_model(model)
    onnx.save(model, path)
    return feeds


def make_attention_model(case, path):
    """A one-node Attention-23 model; returns its inputs (name -> array)."""
    b, hq, hkv, sq, skv, past, d, causal, three_d = case
    rng = np.random.default_rng(0)

    def rand(*shape):
        return rng.standard_normal(shape, dtype=np.float32)

    if three_d:
        feeds = {"Q": rand(b, sq, hq * d), "K": rand(b, skv, hkv * d), "V": rand(b, skv, hkv * d)}
    else:
        feeds = {"Q": rand(b, hq, sq, d), "K": rand(b, hkv, skv, d), "V": rand(b, hkv, skv, d)}
    inputs = ["Q", "K", "V"]
    outputs = ["Y"]
    if past:
        feeds["past_key"] = rand(b, hkv, past, d)
        feeds["past_value"] = rand(b, hkv, past, d)
        inputs += ["", "past_key", "past_value"]
        outputs += ["present_key", "present_value"]
    attrs = {"is_causal": int(causal)}
    if three_d:
        attrs.update(q_num_heads=hq, kv_num_heads=hkv)
    node = helper.make_node("Attention", inputs, outputs, **attrs)
    graph_inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, a.shape) for n, a in feeds.items()]
    y_shape = [b, sq, hq * d] if three_d else [b, hq, sq, d]
    graph_outputs = [helper.make_tensor_value_info("Y", TensorProto.FLOAT, y_shape)]
    for name in outputs[1:]:
        graph_outputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, [b, hkv, past + skv, d]))
    graph = helper.make_graph([node], "attention", graph_inputs, graph_outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
    model.ir_version = 10
    onnx.checker.check_model(model)
    onnx.save(model, path)
    return feeds


def ort_session(path, threads):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def ort_median_ms(sess, feeds, warmup, repeat, min_time):
    for _ in range(warmup):
        sess.run(None, feeds)
    times = []
    start = time.perf_counter()
    while len(times) < repeat or time.perf_counter() - start < min_time:
        t0 = time.perf_counter()
        sess.run(None, feeds)
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rivet")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--min-time", type=float, default=0.5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--json")
    args = ap.parse_args()
    rivet = rivet_binary(args.rivet)
    threads = [int(t) for t in args.threads.split(",")]
    print(f"# {machine_summary()}")
    print(f"{'case':<22} {'T':>2} {'rivet ms':>9} {'ort ms':>9} {'ratio':>6} {'max |diff|':>10}")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.cases.split(","):
            path = os.path.join(tmp, f"{name}.onnx")
            feeds = make_model(CASES[name], path)
            input_args = []
            for n, a in feeds.items():
                np.save(os.path.join(tmp, f"{name}_{n}.npy"), a)
                input_args += ["--input", f"{n}={os.path.join(tmp, f'{name}_{n}.npy')}"]
            out_dir = os.path.join(tmp, f"{name}_out")
            subprocess.run([rivet, "run", path, *input_args, "--output-dir", out_dir], check=True, capture_output=True)
            rivet_y = np.load(os.path.join(out_dir, "output_0.npy"))
            for t in threads:
                sess = ort_session(path, t)
                ort_y = sess.run(None, feeds)[0]
                diff = float(np.max(np.abs(rivet_y - ort_y)))
                bench_args = [*input_args, "--threads", str(t), "--warmup", str(args.warmup)]
                bench_args += ["--repeat", str(args.repeat), "--min-time", str(args.min_time)]
                rivet_runs, ort_runs = [], []
                for _ in range(args.rounds):
                    ort_runs.append(ort_median_ms(sess, feeds, args.warmup, args.repeat, args.min_time))
                    rivet_runs.append(rivet_bench(rivet, path, bench_args)["median_ms"])
                rivet_ms, ort_ms = statistics.median(rivet_runs), statistics.median(ort_runs)
                ratio = statistics.median(r / o for r, o in zip(rivet_runs, ort_runs))
                print(f"{name:<22} {t:>2} {rivet_ms:>9.3f} {ort_ms:>9.3f} {ratio:>6.2f} {diff:>10.2e}")
                rows.append(
                    dict(case=name, threads=t, rivet_ms=rivet_ms, ort_ms=ort_ms, ratio=ratio, max_abs_diff=diff)
                )
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": machine_summary(), "rows": rows}, f, indent=2)


if __name__ == "__main__":
    main()
