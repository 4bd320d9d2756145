#!/usr/bin/python3
"""Compile time of `rivet compile -O3` (and -O0 for comparison) on ResNet-18
and MobileNetV2, with the time of each optimization pass. A benchmark, not a
test.

Each configuration is compiled --repeat times in a fresh process; the table
gives the median wall time of the whole command (import, type inference,
passes, lowering, writing the .rvx) and, for -O3, the median time of each
pass as reported by --time-passes.

    /usr/bin/python3 tools/bench/compile_time.py [--rivet build/tools/rivet]
        [--cache ~/.cache/rivet/models] [--repeat 5]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import machine_summary, rivet_binary  # noqa: E402

PASS_LINE = re.compile(r"^// pass (\S+)\s+([0-9.]+) ms$")


def compile_once(rivet, model, level, out):
    cmd = [rivet, "compile", model, "-o", out, f"-O{level}", "--time-passes"]
    start = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if p.returncode != 0:
        sys.exit(f"error: {' '.join(cmd)} failed:\n{p.stderr}{p.stdout}")
    passes = {}
    for line in p.stderr.splitlines():
        m = PASS_LINE.match(line.strip())
        if m:
            # A pass that runs twice in the pipeline adds up.
            passes[m.group(1)] = passes.get(m.group(1), 0.0) + float(m.group(2))
    return wall, passes


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rivet")
    ap.add_argument("--cache", default=os.path.expanduser("~/.cache/rivet/models"))
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    rivet = rivet_binary(args.rivet)
    print(f"machine: {machine_summary()}")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "model.rvx")
        for name in ("resnet18", "mobilenet_v2"):
            model = os.path.join(args.cache, name, "model.onnx")
            if not os.path.exists(model):
                print(f"{name}: missing (run tools/models/export_all.py --large-only)")
                continue
            for level in (0, 3):
                runs = [compile_once(rivet, model, level, out) for _ in range(args.repeat)]
                walls = [w for w, _ in runs]
                print(f"{name} -O{level}: median {statistics.median(walls) * 1e3:.0f} ms "
                      f"(min {min(walls) * 1e3:.0f}, max {max(walls) * 1e3:.0f}, "
                      f"{args.repeat} runs)")
                if level == 3:
                    names = sorted({n for _, p in runs for n in p},
                                   key=lambda n: -statistics.median(p.get(n, 0.0) for _, p in runs))
                    for n in names:
                        med = statistics.median(p.get(n, 0.0) for _, p in runs)
                        print(f"    {n:<26} {med:9.1f} ms")


if __name__ == "__main__":
    main()
