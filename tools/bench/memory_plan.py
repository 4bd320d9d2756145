#!/usr/bin/python3
"""Planned against unplanned peak memory of the VM on ResNet-18 (and
MobileNetV2), next to the largest live set of the model's activations.
A benchmark, not a test.

The peaks are the VM storage pool's peak bytes in use during one run
(`rivet bench --warmup 0 --repeat 1`, field peak_bytes_in_use), compiled with
the memory planner (default) and without it (--no-memory-plan: one storage
per tensor). The largest live set is computed from the ONNX graph itself:
every intermediate tensor (shapes from ONNX shape inference) lives from the
node that produces it to its last use, nodes in graph order; the largest sum
of live sizes is the least memory any plan that keeps that order can use.
Graph inputs and weights are not counted (they are not in the pool). Each
model runs as exported (dynamic batch: every shape is computed at run time,
so there is nothing for the static planner to place) and with the batch
fixed (every shape static: the planner places all activations).

    /usr/bin/python3 tools/bench/memory_plan.py [--rivet build/tools/rivet]
        [--cache ~/.cache/rivet/models]   # tools/models/export_all.py --large-only
"""
import argparse
import os
import sys
import tempfile

import onnx
from onnx import shape_inference

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import machine_summary, rivet_bench, rivet_binary  # noqa: E402

DTYPE_BYTES = {1: 4, 2: 1, 3: 1, 5: 2, 6: 4, 7: 8, 9: 1, 10: 2, 11: 8, 16: 2}


def with_static_batch(model, batch):
    """The model with its dynamic batch dimension fixed (on inputs and
    outputs), so that every shape is static and the memory planner applies."""
    g = model.graph
    for i in list(g.input) + list(g.output):
        dims = i.type.tensor_type.shape.dim
        if dims and not dims[0].HasField("dim_value"):
            dims[0].dim_value = batch
    return model


def largest_live_set(path, batch):
    model = shape_inference.infer_shapes(with_static_batch(onnx.load(path), batch))
    g = model.graph
    sizes = {}
    for vi in list(g.value_info) + list(g.output):
        t = vi.type.tensor_type
        n = 1
        for d in t.shape.dim:
            if not d.HasField("dim_value"):
                n = None
                break
            n *= d.dim_value
        if n is not None:
            sizes[vi.name] = n * DTYPE_BYTES.get(t.elem_type, 4)
    excluded = {i.name for i in g.initializer} | {i.name for i in g.input}
    last_use = {}
    for k, node in enumerate(g.node):
        for x in node.input:
            last_use[x] = k
    for o in g.output:
        last_use[o.name] = len(g.node)
    live, peak, unknown = {}, 0, 0
    for k, node in enumerate(g.node):
        for y in node.output:
            if y and y not in excluded:
                if y in sizes:
                    live[y] = sizes[y]
                else:
                    unknown += 1
        peak = max(peak, sum(live.values()))
        for x in list(live):
            if last_use.get(x, -1) <= k:
                del live[x]
    return peak, unknown


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rivet")
    ap.add_argument("--cache", default=os.environ.get("RIVET_MODEL_CACHE", os.path.expanduser("~/.cache/rivet/models")))
    ap.add_argument("--models", default="resnet18,mobilenet_v2")
    ap.add_argument("--batch", type=int, default=1)
    a = ap.parse_args()
    rivet = rivet_binary(a.rivet)
    print(f"machine: {machine_summary()}\n")
    print("| model | opt | largest live set (MiB) | planned peak (MiB) | unplanned peak (MiB) | planned / live set | unplanned / planned |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    mib = 1 << 20
    for name in a.models.split(","):
        path = os.path.join(a.cache, name, "model.onnx")
        if not os.path.exists(path):
            print(f"| {name} | (not in {a.cache}: run tools/models/export_all.py --large-only) |")
            continue
        live, unknown = largest_live_set(path, a.batch)
        with tempfile.TemporaryDirectory() as work:
            # As exported (dynamic batch: shapes computed at run time) and
            # with a static batch (every tensor in the compile-time plan).
            static = os.path.join(work, "static.onnx")
            onnx.save(with_static_batch(onnx.load(path), a.batch), static)
            for kind, model in [("dynamic batch", path), ("static batch", static)]:
                shape = ["--shape", f"image={a.batch}x3x224x224"] if model == path else []
                for opt in ["-O0", "-O3"]:
                    args = shape + [opt, "--warmup", "0", "--repeat", "1", "--min-time", "0"]
                    planned = rivet_bench(rivet, model, args)["peak_bytes_in_use"]
                    unplanned = rivet_bench(rivet, model, args + ["--no-memory-plan"])["peak_bytes_in_use"]
                    note = f" ({unknown} tensors of unknown size)" if unknown else ""
                    print(f"| {name}, {kind} {a.batch} | {opt} | {live / mib:.2f}{note} | {planned / mib:.2f} | "
                          f"{unplanned / mib:.2f} | {planned / live:.2f}x | {unplanned / max(planned, 1):.2f}x |")


if __name__ == "__main__":
    main()
