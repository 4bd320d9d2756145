#!/usr/bin/python3
"""A against B on one model: two Rivet executables, builds or environments,
run by one `rivet bench --serve` worker each and timed alternately one run
at a time (A then B, then B then A), so that each pair of runs sees the same
moment of a shared machine. Prints both medians and the median of the pairs'
ratios B / A with its interquartile range. A benchmark, not a test.

    /usr/bin/python3 tools/bench/ab_rivet.py A.rvx [B.rvx] [--threads 1]
        [--rounds 300] [--env-a K=V,...] [--env-b K=V,...]
        [--rivet-a PATH] [--rivet-b PATH] [-- BENCH ARGS...]

B.rvx defaults to A.rvx (then the environments or binaries differ):
    ab_rivet.py m.rvx --env-b RIVET_POINTWISE_DEPTHWISE=off -- --shape image=1x3x224x224
A build's runtime libraries against another's: copy the old build/src/
librivet_runtime.so* and librivet_kernels.so* to a folder and give it as
--env-a LD_LIBRARY_PATH=DIR (it takes precedence over the binary's RUNPATH).
"""
import argparse
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Worker, rivet_binary  # noqa: E402


def env_of(text):
    env = dict(os.environ)
    env["OMP_WAIT_POLICY"] = "passive"
    for item in filter(None, (text or "").split(",")):
        key, sep, value = item.partition("=")
        if not sep:
            sys.exit(f"error: expected K=V in '{item}'")
        env[key] = value
    return env


def main():
    argv = sys.argv[1:]
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = argv[:argv.index("--")] if "--" in argv else argv
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a")
    ap.add_argument("b", nargs="?")
    ap.add_argument("--threads", default="1")
    ap.add_argument("--rounds", type=int, default=300)
    ap.add_argument("--env-a")
    ap.add_argument("--env-b")
    ap.add_argument("--rivet-a")
    ap.add_argument("--rivet-b")
    a = ap.parse_args(argv)
    work = tempfile.mkdtemp(prefix="ab_rivet_")
    workers = []
    for name, model, rivet, env in (("a", a.a, a.rivet_a, a.env_a), ("b", a.b or a.a, a.rivet_b, a.env_b)):
        cmd = [rivet_binary(rivet), "bench", model, "--threads", a.threads, "--repeat", "1",
               "--min-time", "0", "--warmup", "5", "--serve", *extra]
        workers.append(Worker(cmd, work, name, env_of(env)))

    def one(w):
        try:
            return w.request("")["median_ms"]
        except RuntimeError as e:
            sys.exit(f"error: {e}")

    ta, tb, ratio = [], [], []
    for k in range(a.rounds):
        if k % 2:
            b = one(workers[1])
            x = one(workers[0])
        else:
            x = one(workers[0])
            b = one(workers[1])
        ta.append(x)
        tb.append(b)
        ratio.append(b / x)
    for w in workers:
        w.close()
    ratio.sort()
    n = len(ratio)
    print(f"A {statistics.median(ta):.3f} ms, B {statistics.median(tb):.3f} ms (medians of {n} runs each); "
          f"B / A per pair: median {ratio[n // 2]:.3f}, interquartile {ratio[n // 4]:.3f}-{ratio[3 * n // 4]:.3f}")


if __name__ == "__main__":
    main()
