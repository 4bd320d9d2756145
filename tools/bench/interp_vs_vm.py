#!/usr/bin/python3
"""The reference interpreter against the VM on the models and programs with
loops and branches, each on its largest committed input set: median ms per
run and the speed-up. A benchmark, not a test.

    /usr/bin/python3 tools/bench/interp_vs_vm.py [--rivet build/tools/rivet]
"""
import argparse
import glob
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import ROOT, machine_summary, rivet_bench, rivet_binary  # noqa: E402

MODELS = ["rnn_loop", "lstm", "transformer", "branch"]
PROGRAMS = ["rnn_loop", "nested_loops", "growing_accumulator", "list_fold", "factorial", "map_closure"]


def input_args(d):
    args = []
    for f in sorted(glob.glob(os.path.join(d, "*.npy"))):
        args += ["--input", f"{os.path.splitext(os.path.basename(f))[0]}={f}"]
    return args


def largest_set(model_dir):
    sets = sorted(glob.glob(os.path.join(model_dir, "test_data_set_*", "inputs")))
    return max(sets, key=lambda d: sum(os.path.getsize(f) for f in glob.glob(os.path.join(d, "*.npy"))))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rivet")
    ap.add_argument("--min-time", default="0.5")
    a = ap.parse_args()
    rivet = rivet_binary(a.rivet)
    cases = []
    for m in MODELS:
        d = os.path.join(ROOT, "tests", "models", m)
        cases.append((f"model {m}", os.path.join(d, "model.onnx"), largest_set(d)))
    for p in PROGRAMS:
        d = os.path.join(ROOT, "tests", "programs", p)
        cases.append((f"program {p}", os.path.join(d, "program.rvir"), os.path.join(d, "inputs")))
    print(f"machine: {machine_summary()}\n")
    print("| case | interp median (ms) | VM -O0 median (ms) | VM -O3 median (ms) | interp / VM -O3 | VM instructions per run |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for name, model, inputs in cases:
        common = input_args(inputs) + ["--warmup", "2", "--repeat", "10", "--min-time", a.min_time]
        interp = rivet_bench(rivet, model, common + ["--executor", "interp"])
        vm0 = rivet_bench(rivet, model, common + ["--executor", "vm", "-O0"])
        vm3 = rivet_bench(rivet, model, common + ["--executor", "vm", "-O3"])
        print(f"| {name} | {interp['median_ms']:.4f} | {vm0['median_ms']:.4f} | {vm3['median_ms']:.4f} | "
              f"{interp['median_ms'] / vm3['median_ms']:.2f}x | {vm3.get('instructions_per_run', 0):.0f} |")


if __name__ == "__main__":
    main()
