#!/usr/bin/env python3
"""Runs the GPU check bundle (written by tools/scripts/gpu-check.sh) on the
GPU machine: python3 with numpy; torch (and torchvision for the CNNs) for the
benchmark's baselines (skipped without them). No network, no compiler.

    PYTHONUNBUFFERED=1 python3 tools/scripts/gpu-device-check.py [BUNDLE]
        [--flavor cuda|cpu] [--budget S] [--check-budget S]
        [--case-timeout S] [--compile-budget S] [--rounds R] [--runs N]
        [--min-runs N] [--round-ms MS] [--bench-filter REGEX]
        [--no-compile] [--no-bench] [--json PATH]

1. Correctness: every case of BUNDLE/cases.json runs `rivet-run` on its
   CUDA .rvx (cpu: its CPU .rvx, what `gpu-check.sh --local` does here),
   each under a timeout, and its outputs are compared with the reference's
   by numpy: the same files, dtypes and shapes, and |got - want| <= atol +
   rtol * |want| (NaN equal to NaN) with the case's tolerance. A case whose
   reference fails agrees when rivet-run fails too (or the compiler refused
   it). When a CUDA run fails or disagrees, the CPU .rvx runs as a control.
   One row per case: name, status, max abs and rel error, run time.
2. Benchmark: `rivet-run --bench` against PyTorch on the same inputs:
   - the dynamic models (transformer, lstm, rnn_loop, branch; one .rvx
     each) at their committed data sets' shapes and at longer sequences or
     larger batches (DYNAMIC_BENCH), against PyTorch eager;
   - the bench CNN (mobilenet_v2 or resnet18; BUNDLE's bench_models) at
     each batch of the bundle (1 and 8), with its executable for that batch
     and the one for any batch, against PyTorch eager (float32,
     cudnn.benchmark; TF32 off, and TF32 convolutions as by default) and
     torch.compile(mode="reduce-overhead", dynamic=False).
   The PyTorch modules are tools/models' (the bundle's torch_models/) with
   their exports' seeds, so with the weights of the ONNX models: checked on
   the committed data sets, after which rivet-run's outputs are compared
   with PyTorch's at every shape. rivet-run's times include the upload of
   the inputs and the download of the outputs; so do PyTorch's "host"
   variants (inputs from host memory, outputs copied back).
   Each PyTorch engine runs in a worker process of its own, started at once
   so that torch.compile works while the cases run; timing starts when they
   are ready, or at --compile-budget without those that are not. Per shape
   every engine runs once to calibrate (runs per round: --round-ms over the
   slowest engine's time, within --min-runs and --runs), then the engines
   are timed alternately, round by round (the order reversed every round),
   each run synchronized; medians and ratios. Each shape has its share of
   the time left and a part that fails does not stop the others. Then a
   device-to-device copy's bandwidth, for reference.

The whole stays within --budget seconds (default 285). Results go to
stdout and, when $OUT is set (or --json PATH), to gpu-check.json and
gpu-check.log there. Exit status: 0 when every case agrees, else 1.
"""
import argparse
import importlib
import json
import lzma
import os
import platform
import re
import select
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_BUNDLE = os.path.join(os.path.dirname(os.path.dirname(HERE)), "gpu-bundle")
START = time.monotonic()


def elapsed():
    return time.monotonic() - START


# ---------------------------------------------------------------------------
# Output: stdout, copied into $OUT/gpu-check.log.
# ---------------------------------------------------------------------------
class Log:
    def __init__(self):
        self.lines = []

    def __call__(self, *parts):
        line = " ".join(str(p) for p in parts)
        print(line, flush=True)
        self.lines.append(line)


log = Log()


# ---------------------------------------------------------------------------
# The bundle: its libraries (unpacked), the runner and its environment.
# ---------------------------------------------------------------------------
class Bundle:
    def __init__(self, root, work):
        self.root = os.path.abspath(root)
        manifest = os.path.join(self.root, "cases.json")
        if not os.path.isfile(manifest):
            sys.exit(f"error: no {manifest}: build the bundle with tools/scripts/gpu-check.sh")
        with open(manifest) as f:
            self.manifest = json.load(f)
        self.runner = os.path.join(self.root, "rivet-run")
        # Compressed libraries are unpacked outside the bundle (the bundle
        # may be read-only); that folder comes first on the library path.
        lib = os.path.join(self.root, "lib")
        unpacked = os.path.join(work, "lib")
        os.makedirs(unpacked, exist_ok=True)
        for name in sorted(os.listdir(lib)) if os.path.isdir(lib) else []:
            if name.endswith(".xz"):
                with lzma.open(os.path.join(lib, name)) as src, \
                        open(os.path.join(unpacked, name[:-3]), "wb") as dst:
                    shutil.copyfileobj(src, dst, 1 << 20)
        self.env = dict(os.environ)
        path = [unpacked, lib] + [p for p in os.environ.get("LD_LIBRARY_PATH", "").split(":") if p]
        self.env["LD_LIBRARY_PATH"] = ":".join(path)
        self.env.setdefault("OMP_WAIT_POLICY", "passive")

    def path(self, rel):
        return os.path.join(self.root, rel) if rel else None

    def run(self, args, timeout):
        """rivet-run ARGS: (returncode or None on timeout, stdout, stderr, seconds)."""
        t0 = time.monotonic()
        # A session of its own: a timeout kills it with anything it started.
        p = subprocess.Popen([self.runner] + args, env=self.env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, errors="replace",
                             start_new_session=True)
        try:
            out, err = p.communicate(timeout=max(timeout, 1))
            return p.returncode, out, err, time.monotonic() - t0
        except subprocess.TimeoutExpired:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except OSError:
                pass
            out, err = p.communicate()
            return None, out, err, time.monotonic() - t0


def first_error(stderr, stdout=""):
    """The first error line of a run, without its "error: "."""
    for line in (stderr + "\n" + stdout).splitlines():
        if "error" in line.lower():
            line = line.strip()
            return (line[7:] if line.startswith("error: ") else line)[:300]
    lines = [l for l in (stderr + "\n" + stdout).splitlines() if l.strip()]
    return lines[-1].strip()[:300] if lines else "failed without a message"


# ---------------------------------------------------------------------------
# Comparing outputs: rivet check's rule.
# ---------------------------------------------------------------------------
def compare(np, got, want, rtol, atol):
    """(passes, max_abs, max_rel, note) for two arrays."""
    if got.dtype != want.dtype or got.shape != want.shape:
        return False, float("inf"), float("inf"), \
            f"got {got.dtype}{list(got.shape)}, expected {want.dtype}{list(want.shape)}"
    if want.size == 0:
        return True, 0.0, 0.0, ""
    with np.errstate(all="ignore"):
        g = got.astype(np.float64).ravel()
        w = want.astype(np.float64).ravel()
        gn, wn = np.isnan(g), np.isnan(w)
        nan_mismatch = int(np.count_nonzero(gn != wn))
        differ = ~(gn | wn) & (g != w)  # equal infinities are equal
        d = np.abs(g[differ] - w[differ])
        d[np.isnan(d)] = np.inf
        aw = np.abs(w[differ])
        max_abs = float(d.max()) if d.size else 0.0
        rel = np.where(aw == 0, np.inf, d / np.where(aw == 0, 1, aw))
        max_rel = float(rel.max()) if rel.size else 0.0
        bad = int(np.count_nonzero(~(d <= atol + rtol * aw)))
    if nan_mismatch:
        return False, float("inf"), float("inf"), f"{nan_mismatch} NaN where the reference has none, or the reverse"
    note = f"{bad} of {want.size} elements out of tolerance" if bad else ""
    return bad == 0, max_abs, max_rel, note


def compare_output_dirs(np, got_dir, want_dir, rtol, atol, want=None):
    """(passes, max_abs, max_rel, note) of the .npy files of got_dir against
    those of want_dir (or the names in want)."""
    def npys(d):
        return sorted(f for f in os.listdir(d) if f.endswith(".npy")) if os.path.isdir(d) else []

    got = npys(got_dir)
    want = npys(want_dir) if want is None else want
    if got != want:
        missing = sorted(set(want) - set(got))
        extra = sorted(set(got) - set(want))
        return False, float("inf"), float("inf"), \
            "outputs differ:" + (f" missing {missing}" if missing else "") + (f" extra {extra}" if extra else "")
    ok, max_abs, max_rel, notes = True, 0.0, 0.0, []
    for f in want:
        try:
            g = np.load(os.path.join(got_dir, f), allow_pickle=False)
            w = np.load(os.path.join(want_dir, f), allow_pickle=False)
        except Exception as e:  # a dtype numpy lacks (bfloat16), a bad file
            return False, float("inf"), float("inf"), f"{f}: cannot read: {e}"
        p, a, r, note = compare(np, g, w, rtol, atol)
        ok &= p
        max_abs, max_rel = max(max_abs, a), max(max_rel, r)
        if note:
            notes.append(f"{f}: {note}")
    return ok, max_abs, max_rel, "; ".join(notes)


def compare_dirs(np, out_dir, case, bundle):
    """(passes, max_abs, max_rel, note) of out_dir against the case's expected files."""
    return compare_output_dirs(np, out_dir, bundle.path(case["expected_dir"]), case["rtol"],
                               case["atol"], want=case["expected_outputs"])


# Runs of each CUDA case: the outputs checked are the last run's, so that
# CUDA graphs are checked too. A run's GPU work is captured the second time
# its buffers are the same, which the caching allocator reaches from the
# second run on: captured in the third run, replayed in the fourth.
CASE_REPEAT = 4


def run_case(np, bundle, case, rvx, work, timeout, repeat=1):
    """Runs one .rvx on the case's inputs (repeat times; the last run's
    outputs are compared): a result dict (status, errors, times)."""
    r = {"status": None, "max_abs": None, "max_rel": None, "run_ms": None, "wall_s": None, "note": "",
         "graph_launches": None}
    out_dir = tempfile.mkdtemp(prefix="out_", dir=work)
    args = [bundle.path(rvx)]
    for name, f in sorted(case["inputs"].items()):
        args += ["--input", f"{name}={bundle.path(f)}"]
    args += ["--output-dir", out_dir, "--json"]
    if repeat > 1:
        args += ["--repeat", str(repeat)]
    rc, out, err, wall = bundle.run(args, timeout)
    r["wall_s"] = round(wall, 3)
    if rc is None:
        r["status"], r["note"] = "timeout", f"no result in {timeout:.0f} s"
        return r
    if rc == 0:
        try:
            res = json.loads(out.strip().splitlines()[-1])
            r["run_ms"] = res["run_ms"]
            r["graph_launches"] = res.get("graph_launches")
        except (ValueError, KeyError, IndexError):
            pass
    if case["expected_error"]:
        if rc != 0:
            r["status"], r["note"] = "agree", "fails as the reference: " + first_error(err)
        else:
            r["status"], r["note"] = "DISAGREE", "runs, but the reference fails: " + case["expected_error"]
        return r
    if rc != 0:
        r["status"], r["note"] = "error", first_error(err, out)
        return r
    ok, a, rel, note = compare_dirs(np, out_dir, case, bundle)
    r.update(status="agree" if ok else "DISAGREE", max_abs=a, max_rel=rel, note=note)
    shutil.rmtree(out_dir, ignore_errors=True)
    return r


def check_cases(np, bundle, flavor, args, work):
    cases = bundle.manifest["cases"]
    deadline = START + args.check_budget
    results = []
    log(f"\n== correctness: {len(cases)} cases on the {flavor} executables "
        f"(timeout {args.case_timeout:.0f} s each, {args.check_budget:.0f} s in all)")
    for case in cases:
        rvx = case["rvx"] if flavor == "cuda" else case["cpu_rvx"]
        compile_error = case["compile_error"] if flavor == "cuda" else case["cpu_compile_error"]
        left = deadline - time.monotonic()
        if not rvx and case["bench"] and flavor == "cpu":
            r = {"status": "skipped", "note": "a bench model: no CPU executable in the bundle"}
        elif not rvx:
            # Agreement when the model is refused whatever the target (an
            # unknown operator), not when only the CUDA compile fails.
            if case["expected_error"] and not case.get("cpu_rvx"):
                r = {"status": "agree", "note": "the compiler refuses it, the reference fails too"}
            else:
                r = {"status": "no-rvx", "note": "compile failed: " + (compile_error or "?")}
        elif case["expected_error"] and not case["inputs_saved"]:
            r = {"status": "skipped", "note": "no inputs: " + case["expected_error"]}
        elif left < 1:
            r = {"status": "skipped", "note": "out of time (--check-budget)"}
        else:
            r = run_case(np, bundle, case, rvx, work, min(args.case_timeout, left),
                         repeat=CASE_REPEAT if flavor == "cuda" else 1)
            # A control on the CPU says whether the GPU path is the cause.
            if flavor == "cuda" and r["status"] not in ("agree",) and case.get("cpu_rvx"):
                c = run_case(np, bundle, case, case["cpu_rvx"], work,
                             min(args.case_timeout, max(deadline - time.monotonic(), 5)))
                r["cpu_control"] = c["status"]
                same = c["status"] == r["status"] and c["note"] == r["note"]
                detail = " (the same)" if same else (f": {c['note']}" if c["note"] and c["status"] != "agree" else "")
                r["note"] = f"{r['note']} [cpu control: {c['status']}{detail}]".strip()
        r.update(name=case["name"], kind=case["kind"], rvx=rvx)
        results.append(r)
        log(row(r))
    return results


def check_conformance(np, bundle, work, budget):
    """The ONNX conformance pass list (gpu-conformance-bundle.py), when the
    bundle has it: every data set of every model through rivet-run, in
    parallel, compared with the suite's expected outputs at its tolerance.
    A list of (name, status, note)."""
    path = os.path.join(bundle.root, "conformance.json")
    if not os.path.isfile(path):
        return None
    with open(path) as f:
        conf = json.load(f)
    root = os.path.join(bundle.root, "conformance")
    deadline = time.monotonic() + budget

    def one(case):
        name, d = case["name"], os.path.join(root, case["dir"])
        for s in case["sets"]:
            if time.monotonic() > deadline:
                return name, "skipped", "out of time"
            out = tempfile.mkdtemp(dir=work)
            argv = [os.path.join(d, "model.rvx"), "--output-dir", out, "--threads", "1"]
            for n, f in s["inputs"].items():
                argv += ["--input", f"{n}={os.path.join(d, f)}"]
            rc, so, se, _ = bundle.run(argv, 30)
            if rc is None:
                return name, "timeout", ""
            if rc != 0:
                return name, "error", first_error(se, so)
            for i, e in enumerate(s["expected"]):
                g = os.path.join(out, f"output_{i}.npy")
                if not os.path.exists(g):
                    return name, "DISAGREE", f"{s['dir']}: no output {i}"
                ok, ma, mr, note = compare(np, np.load(g), np.load(os.path.join(d, e)),
                                           case["rtol"], case["atol"])
                if not ok:
                    return name, "DISAGREE", f"{s['dir']} output {i}: max abs {ma:.3g}, rel {mr:.3g}; {note}"
            shutil.rmtree(out, ignore_errors=True)
        return name, "agree", ""

    import concurrent.futures
    # Each rivet-run sets up a CUDA context (~0.2 s): many at once.
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        res = list(pool.map(one, conf["cases"]))
    counts = {}
    for _, st, _ in res:
        counts[st] = counts.get(st, 0) + 1
    log(f"\n== conformance pass list on the GPU: {len(res)} models with GPU kernels "
        f"({len(conf.get('skipped', []))} others have none): "
        + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())))
    for name, st, note in res:
        if st != "agree":
            log(f"  {name:<50} {st:<9} {note[:200]}")
    return res


def fmt_err(x):
    return "-" if x is None else ("inf" if x == float("inf") else f"{x:.2e}")


def row(r):
    t = "-" if r.get("run_ms") is None else f"{r['run_ms']:.2f}"
    w = "-" if r.get("wall_s") is None else f"{r['wall_s']:.2f}"
    g = "-" if r.get("graph_launches") is None else str(r["graph_launches"])
    return (f"{r['name']:<34} {r['status']:<9} {fmt_err(r.get('max_abs')):>9} "
            f"{fmt_err(r.get('max_rel')):>9} {t:>9} {w:>7} {g:>6}  {r.get('note', '')}")


HEADER = (f"{'case':<34} {'status':<9} {'max abs':>9} {'max rel':>9} {'run ms':>9} {'wall s':>7} "
          f"{'graphs':>6}  note")


# ---------------------------------------------------------------------------
# The benchmark's PyTorch models: tools/models' definitions (the bundle's
# copy in torch_models/), with the weights of their ONNX exports.
# ---------------------------------------------------------------------------
# The seeds of tools/models/export_*.py. Built on the CPU with them, as the
# export built it, a module has the weights of the ONNX model that the .rvx
# was compiled from; the benchmark checks that on the committed data sets.
CNN_SEEDS = {"resnet18": (5, 15), "mobilenet_v2": (6, 16)}  # export_resnet18.py, export_mobilenet_v2.py
DYNAMIC_CLASSES = {  # model: (script, class, seed)
    "lstm": ("export_lstm", "Lstm", 4),
    "rnn_loop": ("export_rnn_loop", "RnnLoop", 1),
    "branch": ("export_branch", "Branch", 2),
}


def find_models_dir(bundle_root):
    """The bundle's torch_models/, else the checkout's tools/models (None if neither)."""
    for d in (os.path.join(bundle_root, "torch_models"), os.path.join(os.path.dirname(HERE), "models")):
        if os.path.isfile(os.path.join(d, "common.py")):
            return d
    return None


def import_models_module(name, models_dir):
    """tools/models/NAME.py. Importing one runs no export (they export under
    __main__ only); their common.py imports onnx, which only the export
    uses: without onnx a stand-in module takes its place."""
    if not models_dir:
        raise ImportError("no tools/models (torch_models/ in the bundle)")
    if models_dir not in sys.path:
        sys.path.insert(0, models_dir)
    try:
        import onnx  # noqa: F401
    except Exception:  # ImportError, or an onnx that does not load
        import types
        sys.modules["onnx"] = types.ModuleType("onnx")
    return importlib.import_module(name)


def build_torch_model(name, models_dir):
    """(module, note): bench model NAME in PyTorch, on the CPU, in eval mode;
    note says when its weights cannot be the export's."""
    import torch
    if name in CNN_SEEDS:  # export_resnet18.export_model's recipe
        import torchvision
        seed, bn_seed = CNN_SEEDS[name]
        try:
            common = import_models_module("common", models_dir)
        except Exception as e:  # the timing does not need the same weights
            model = getattr(torchvision.models, name)(weights=None).eval()
            return model, f"random weights, not the export's ({e})"
        common.seed_everything(seed)
        model = getattr(torchvision.models, name)(weights=None)
        g = torch.Generator().manual_seed(bn_seed)
        return common.calibrate_batchnorm(model, g, (4, 3, 224, 224)), None
    common = import_models_module("common", models_dir)
    if name == "transformer":  # export_transformer.export's module (it has no class)
        common.seed_everything(3)
        layer = torch.nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32,
                                                 dropout=0.0)
        return torch.nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False).eval(), None
    script, cls, seed = DYNAMIC_CLASSES[name]
    module = import_models_module(script, models_dir)
    common.seed_everything(seed)
    return getattr(module, cls)().eval(), None


# The dynamic models' benchmark: per model its inputs (in forward()'s order,
# the ONNX model's), a name for a shape, and the shapes: the committed data
# sets ({"ds": K}), then longer sequences or larger batches that none has
# (standard normal; "init" "pos"/"neg": of one sign, so that branch takes
# the one or the other path). One executable serves them all. LSTM's batch
# is static in its ONNX model (2), the others' is symbolic.
DYNAMIC_BENCH = {
    "transformer": {
        "inputs": ["src"],
        "label": lambda sh: f"S={sh['src'][0]} B={sh['src'][1]}",
        "sets": [{"ds": 0}, {"ds": 1},
                 {"src": (64, 1, 16)}, {"src": (256, 4, 16)}, {"src": (1024, 8, 16)}]},
    "lstm": {
        "inputs": ["x", "h0", "c0"],
        "label": lambda sh: f"T={sh['x'][0]} B={sh['x'][1]}",
        "sets": [{"ds": 0}, {"ds": 1}, {"ds": 2},
                 {"x": (128, 2, 4), "h0": (1, 2, 8), "c0": (1, 2, 8)},
                 {"x": (1024, 2, 4), "h0": (1, 2, 8), "c0": (1, 2, 8)}]},
    "rnn_loop": {
        "inputs": ["xs", "h0"],
        "label": lambda sh: f"T={sh['xs'][0]} B={sh['xs'][1]}",
        "sets": [{"ds": 0}, {"ds": 1}, {"ds": 2},
                 {"xs": (128, 2, 4), "h0": (2, 8)}, {"xs": (1024, 2, 4), "h0": (2, 8)}]},
    "branch": {
        "inputs": ["x"],
        "label": lambda sh: f"B={sh['x'][0]}",
        "sets": [{"ds": 0}, {"ds": 1}, {"ds": 2},
                 {"x": (4096, 4), "init": "pos"}, {"x": (4096, 4), "init": "neg"}]},
}
# Is PyTorch's module the ONNX model? (Its outputs on a committed data set
# against the export's: different weights differ by far more.)
WEIGHTS_RTOL, WEIGHTS_ATOL = 1e-2, 1e-3
# rivet-run's outputs against PyTorch's (both float32 on the GPU, TF32 off).
OUTPUTS_RTOL, OUTPUTS_ATOL = 1e-3, 1e-4


# ---------------------------------------------------------------------------
# PyTorch workers: one process per engine, JSON lines over stdin/stdout.
# ---------------------------------------------------------------------------
def flatten(v):
    """A module's result as the list of its tensors, in the ONNX outputs' order."""
    if isinstance(v, (tuple, list)):
        return [t for x in v for t in flatten(x)]
    return [v]


def worker_main(spec_path):
    """--worker SPEC.json: builds the spec's model (mode eager or compile; a
    bandwidth worker has none), loads its input sets and runs each a few
    times, says "ready", then answers
      {"cmd": "time", "set": K, "runs": N, "variant": "device"|"host", "tf32": B}
        with {"ms": [...]}: "device" times a call on the inputs in device
        memory, synchronized; "host" one from host memory, the outputs
        copied back,
      {"cmd": "outputs", "set": K, "dir": D} by writing D/output_<i>.npy,
      {"cmd": "bandwidth"} with a device-to-device copy's rate,
    and {"error": ...} when one fails.
    $RIVET_GPU_CHECK_TORCH_DEVICE=cpu runs it on the CPU: only to test this
    script on a machine without a GPU."""
    t0 = time.monotonic()
    with open(spec_path) as f:
        spec = json.load(f)
    mode = spec["mode"]
    # The protocol has stdout to itself: whatever the libraries print goes
    # to stderr.
    proto = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    def say(obj):
        proto.write(json.dumps(obj) + "\n")
        proto.flush()

    import numpy as np
    import torch
    on_gpu = os.environ.get("RIVET_GPU_CHECK_TORCH_DEVICE", "cuda") == "cuda"
    if on_gpu and not torch.cuda.is_available():
        say({"event": "unavailable", "why": "torch sees no CUDA device"})
        return
    torch.backends.cudnn.benchmark = True

    def sync():
        if on_gpu:
            torch.cuda.synchronize()

    def set_tf32(on):
        torch.backends.cudnn.allow_tf32 = on
        torch.backends.cuda.matmul.allow_tf32 = on

    set_tf32(False)  # float32 as rivet computes it; "tf32": true is torch's default for convs
    dev = torch.device("cuda" if on_gpu else "cpu")
    mark = getattr(getattr(torch, "compiler", None), "cudagraph_mark_step_begin", None)

    def step():  # a new cudagraph step: the previous outputs may be overwritten
        if mark and mode == "compile":
            mark()

    compile_s = note = None
    sets, host_sets, set_errors = [], [], {}
    if mode != "bandwidth":  # that mode needs no model
        try:
            model, note = build_torch_model(spec["model"], spec.get("models_dir"))
            model = model.to(dev)
            fn = torch.compile(model, mode="reduce-overhead", dynamic=False) if mode == "compile" else model
        except Exception as e:
            say({"event": "unavailable", "why": f"{type(e).__name__}: {e}"[:300]})
            return
        tc = time.monotonic()
        with torch.no_grad():
            for k, files in enumerate(spec["sets"]):
                # The first calls compile (one graph per shape) and record
                # the CUDA graph; a shape that fails is reported when asked.
                try:
                    xh = [torch.from_numpy(np.load(p)) for p in files]
                    xs = [x.to(dev) for x in xh]
                    for _ in range(5 if mode == "compile" else 2):
                        step()
                        fn(*xs)
                    sync()
                except Exception as e:
                    set_errors[k] = f"{type(e).__name__}: {e}"[:300]
                    xh = xs = None
                sets.append(xs)
                host_sets.append(xh)
        if mode == "compile":
            compile_s = time.monotonic() - tc
    say({"event": "ready", "setup_s": time.monotonic() - t0, "compile_s": compile_s, "note": note,
         "set_errors": set_errors,
         "gpu": torch.cuda.get_device_name(0) if on_gpu else "cpu", "torch": torch.__version__})
    for line in sys.stdin:
        cmd = json.loads(line)
        try:
            k = cmd.get("set", 0)
            if cmd["cmd"] in ("time", "outputs") and k in set_errors:
                say({"error": set_errors[k]})
            elif cmd["cmd"] == "time":
                xs, xh = sets[k], host_sets[k]
                set_tf32(bool(cmd.get("tf32")) and mode == "eager")
                ms = []
                with torch.no_grad():
                    for _ in range(3):
                        step()
                        fn(*xs)
                    sync()
                    for _ in range(cmd["runs"]):
                        step()
                        s = time.perf_counter()
                        if cmd.get("variant") == "host":
                            for y in flatten(fn(*[x.to(dev) for x in xh])):
                                y.cpu()  # .cpu() waits for the result
                        else:
                            fn(*xs)
                            sync()
                        ms.append((time.perf_counter() - s) * 1e3)
                set_tf32(False)
                say({"ms": ms})
            elif cmd["cmd"] == "outputs":
                with torch.no_grad():
                    step()
                    ys = [y.detach().cpu().numpy() for y in flatten(fn(*sets[k]))]
                for i, y in enumerate(ys):
                    np.save(os.path.join(cmd["dir"], f"output_{i}.npy"), y)
                say({"files": len(ys)})
            elif cmd["cmd"] == "bandwidth":
                n = 1 << 28  # 256 MiB each way
                a = torch.empty(n, dtype=torch.uint8, device=dev).random_(0, 255)
                b = torch.empty_like(a)
                for _ in range(3):
                    b.copy_(a)
                reps = 20
                sync()
                s = time.perf_counter()
                if on_gpu:
                    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    e0.record()
                for _ in range(reps):
                    b.copy_(a)
                if on_gpu:
                    e1.record()
                    torch.cuda.synchronize()
                    s = e0.elapsed_time(e1) / 1e3 / reps
                else:
                    s = (time.perf_counter() - s) / reps
                say({"bytes": n, "seconds": s, "copy_gbps": n / s / 1e9, "read_write_gbps": 2 * n / s / 1e9})
                del a, b
                if on_gpu:
                    torch.cuda.empty_cache()
            else:
                say({"error": f"unknown command {cmd}"})
        except Exception as e:  # this set or command; the worker goes on
            set_tf32(False)
            say({"error": f"{type(e).__name__}: {e}"[:300]})


class Worker:
    """A worker process; its stderr goes to a file, shown when it fails."""

    def __init__(self, model, mode, work, models_dir=None, sets=()):
        self.model, self.mode = model, mode
        self.name = f"torch {mode}"
        stem = os.path.join(work, f"worker_{model}_{mode}")
        with open(stem + ".json", "w") as f:
            json.dump({"model": model, "mode": mode, "models_dir": models_dir,
                       "sets": [list(s) for s in sets]}, f)
        self.err_path = stem + ".err"
        self.err = open(self.err_path, "w")
        self.proc = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--worker", stem + ".json"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err,
            start_new_session=True)  # killed with its children (inductor's)
        self.buf = b""
        self.ready = None  # the ready message, once read
        self.failed = None  # why it is unusable

    def usable(self):
        return bool(self.ready) and not self.failed

    def _read(self, timeout):
        """One JSON line, or None on timeout or exit (self.failed says which)."""
        end = time.monotonic() + max(timeout, 0)
        fd = self.proc.stdout.fileno()
        while not self.failed:
            if b"\n" in self.buf:
                line, self.buf = self.buf.split(b"\n", 1)
                try:
                    return json.loads(line)
                except ValueError:
                    continue  # not ours
            left = end - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
            data = os.read(fd, 1 << 16)
            if not data:
                self.proc.wait()
                self.failed = f"exited ({self.proc.returncode}): " + self.stderr_tail()
            self.buf += data
        return None

    def stderr_tail(self):
        self.err.flush()
        try:
            with open(self.err_path, errors="replace") as f:
                lines = [l.strip() for l in f.read().splitlines() if l.strip()]
            return (lines[-1] if lines else "no message")[:300]
        except OSError:
            return "no message"

    def wait_ready(self, timeout):
        if self.ready or self.failed:
            return self.ready is not None
        msg = self._read(timeout)
        if msg is None:
            if not self.failed:
                self.failed = f"not ready within the budget ({max(timeout, 0):.0f} s left)"
                self.kill()
            return False
        if msg.get("event") != "ready":
            self.failed = msg.get("why", str(msg))
            self.kill()
            return False
        self.ready = msg
        return True

    def ask(self, cmd, timeout=60):
        """The answer to cmd, or None (self.failed says why: the worker is
        then unusable)."""
        if not self.usable():
            return None
        try:
            self.proc.stdin.write((json.dumps(cmd) + "\n").encode())
            self.proc.stdin.flush()
        except OSError:
            self.failed = "exited: " + self.stderr_tail()
            return None
        msg = self._read(timeout)
        if msg is None and not self.failed:
            self.failed = f"no answer within {timeout:.0f} s"
            self.kill()
        return msg

    def kill(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except OSError:
            pass
        self.proc.wait()

    def close(self, until=None):
        """Ends the worker: its stdin closed, it exits (by until, a
        time.monotonic(), else within 10 s), or it is killed."""
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()
                self.proc.wait(timeout=max((until or time.monotonic() + 10) - time.monotonic(), 0.1))
            except (OSError, subprocess.TimeoutExpired):
                pass
        self.kill()  # and whatever it left running
        self.err.close()


def torch_wanted(flavor):
    """Whether the PyTorch baselines run: on the GPU, or where a test asks."""
    return flavor == "cuda" or "RIVET_GPU_CHECK_TORCH_DEVICE" in os.environ


def torch_available():
    import importlib.util
    return importlib.util.find_spec("torch") is not None


# ---------------------------------------------------------------------------
# The benchmark.
# ---------------------------------------------------------------------------
def bench_plan(np, bundle, flavor, args, work):
    """(items, notes): what the benchmark times. An item is a model: its
    family ("dynamic", "cnn"), its inputs' names, whether torch.compile runs
    it, its weight (its shapes' share of the time) and its sets, one per
    shape: a label, the input files by name, their shapes, the expected
    outputs' folder (committed data sets) and the rivet-run engines, (name,
    .rvx). Inputs that no case has are generated (seeded) into work, so that
    rivet-run and PyTorch read the same files."""
    cases = {c["name"]: c for c in bundle.manifest["cases"]}
    items, notes = [], []
    rng = np.random.default_rng(0)
    wanted = re.compile(args.bench_filter) if args.bench_filter else None

    def exe(entry, cpu_key="cpu_rvx"):
        return entry.get("rvx") if flavor == "cuda" else entry.get(cpu_key)

    def generate(tag, shapes, init=None):
        d = os.path.join(work, "inputs", tag)
        os.makedirs(d, exist_ok=True)
        files = {}
        for name, shape in shapes.items():
            x = rng.standard_normal(shape, dtype=np.float32)
            if init == "pos":
                x = np.abs(x) + np.float32(0.1)
            elif init == "neg":
                x = -(np.abs(x) + np.float32(0.1))
            files[name] = os.path.join(d, name + ".npy")
            np.save(files[name], x)
        return files

    def shape_of(path):
        return tuple(int(n) for n in np.load(path, mmap_mode="r").shape)

    def add(item, sets):
        sets = [s for s in sets if not wanted or wanted.search(f"{item['model']} {s['label']}")]
        for k, s in enumerate(sets):
            s["index"] = k  # its index in the workers' sets
        if sets:
            item["sets"] = sets
            items.append(item)

    for model, spec in DYNAMIC_BENCH.items():
        case0 = cases.get(f"{model}.0")
        rvx = case0 and exe(case0)
        if not rvx:
            notes.append(f"{model}: not benchmarked: no {flavor} executable in the bundle")
            continue
        sets = []
        for k, s in enumerate(spec["sets"]):
            if "ds" in s:
                c = cases.get(f"{model}.{s['ds']}")
                if not c or not c["inputs_saved"] or set(c["inputs"]) != set(spec["inputs"]):
                    notes.append(f"{model}: no data set {s['ds']} in the bundle")
                    continue
                files = {n: bundle.path(c["inputs"][n]) for n in spec["inputs"]}
                expected = bundle.path(c["expected_dir"]) if c["expected_outputs"] else None
                tag = f"ds{s['ds']}"
            else:
                files = generate(f"{model}_{k}", {n: s[n] for n in spec["inputs"]}, s.get("init"))
                expected, tag = None, s.get("init", "")
            shapes = {n: shape_of(f) for n, f in files.items()}
            sets.append({"label": f"{spec['label'](shapes)} {tag}".strip(), "files": files,
                         "shapes": shapes, "expected_dir": expected, "rivet": [("rivet-run", rvx)]})
        add({"model": model, "family": "dynamic", "inputs": spec["inputs"], "compile": False,
             "weight": 1}, sets)

    for bm in bundle.manifest.get("bench_models", []):
        model, name = bm["model"], bm["input"]
        for e in bm["executables"]:
            if e.get("compile_error"):
                notes.append(f"{model}: no executable for batch {e['batch'] or 'any'}: {e['compile_error']}")
        any_batch = next((exe(e) for e in bm["executables"] if e["batch"] is None and exe(e)), None)
        case = cases.get(bm["case"])
        sets = []
        for b in bm["batches"]:
            static = next((exe(e) for e in bm["executables"] if e["batch"] == b and exe(e)), None)
            rivet = ([("rivet-run", static)] if static else []) + \
                ([("rivet-run any-batch", any_batch)] if any_batch else [])
            if not rivet:
                notes.append(f"{model}: batch {b} not benchmarked: no {flavor} executable for it")
                continue
            shape = tuple([b] + bm["item_shape"])
            if case and case["inputs_saved"] and name in case["inputs"] \
                    and shape_of(bundle.path(case["inputs"][name])) == shape:
                files = {name: bundle.path(case["inputs"][name])}
                expected, tag = bundle.path(case["expected_dir"]), "ds0"
            else:
                files, expected, tag = generate(f"{model}_b{b}", {name: shape}), None, ""
            sets.append({"label": f"B={b} {tag}".strip(), "files": files, "shapes": {name: shape},
                         "expected_dir": expected, "rivet": rivet})
        add({"model": model, "family": "cnn", "inputs": [name], "compile": not args.no_compile,
             "weight": 4}, sets)
    return items, notes


def rivet_bench(bundle, files, rvx, runs, warmup, timeout, out_dir=None, extra=()):
    """rivet-run --bench: (its JSON result, None) or (None, the error)."""
    args = [bundle.path(rvx)]
    for name, f in sorted(files.items()):
        args += ["--input", f"{name}={f}"]
    args += ["--bench", str(runs), "--warmup", str(warmup), "--json"] + list(extra)
    if out_dir:
        args += ["--output-dir", out_dir]
    rc, out, err, _ = bundle.run(args, timeout)
    if rc != 0:
        return None, "timeout" if rc is None else first_error(err, out)
    try:
        return json.loads(out.strip().splitlines()[-1]), None
    except (ValueError, IndexError):
        return None, "unreadable output: " + out[-200:]


def paired_ratio(a, b):
    """The median over rounds of a's time over b's (None without a common round)."""
    ratios = [x / y for x, y in zip(a, b) if y > 0]
    return statistics.median(ratios) if ratios else None


def fmt_ms(x):
    return "-" if x is None else f"{x:.4g}"


def fmt_ratio(x):
    return "-" if x is None else f"{x:.2f}x"


def bench_set(np, bundle, item, s, workers, args, set_deadline, deadline, work):
    """Times one shape of an item: a calibration run of every engine (which
    also gives rivet-run's outputs), the outputs' check, then alternating
    rounds until args.rounds or set_deadline. Returns its result dict."""
    title = f"{item['model']} {s['label']}"
    engines = [{"name": n, "rvx": rvx} for n, rvx in s["rivet"]]
    # The first executable again without CUDA graphs: what they are worth.
    if s["rivet"] and args.flavor == "cuda":
        n, rvx = s["rivet"][0]
        engines.append({"name": n + " no graphs", "rvx": rvx, "extra": ["--cuda-graphs", "off"]})
    eager = None
    for w in workers:
        if not w.usable():
            continue
        if w.mode == "eager":
            eager = w
            engines.append({"name": "torch eager fp32", "worker": w, "opts": {"tf32": False}})
            if item["family"] == "cnn":
                engines.append({"name": "torch eager tf32", "worker": w, "opts": {"tf32": True}})
            engines.append({"name": "torch eager fp32 host", "worker": w,
                            "opts": {"tf32": False, "variant": "host"}})
        elif w.mode == "compile":
            engines.append({"name": "torch.compile", "worker": w, "opts": {}})
            engines.append({"name": "torch.compile host", "worker": w, "opts": {"variant": "host"}})
    result = {"model": item["model"], "family": item["family"], "label": s["label"],
              "shapes": {n: list(v) for n, v in s["shapes"].items()},
              "rivet_executables": dict(s["rivet"]), "engines": {}, "check": {}, "notes": []}
    errors, calib, devices, out_dirs = {}, {}, {}, {}

    def left():
        return deadline - time.monotonic()

    def run_engine(e, runs, warmup, timeout, out_dir=None):
        """The engine's median ms over runs, or None (its error recorded)."""
        if "rvx" in e:
            res, err = rivet_bench(bundle, s["files"], e["rvx"], runs, warmup, timeout, out_dir,
                                   e.get("extra", ()))
            if err:
                errors[e["name"]] = err
                return None
            devices[e["name"]] = res.get("device")
            return res["median_ms"]
        w = e["worker"]
        msg = w.ask(dict(cmd="time", set=s["index"], runs=runs, **e["opts"]), timeout=timeout)
        if not msg or "ms" not in msg:
            errors[e["name"]] = (msg or {}).get("error") or w.failed or str(msg)
            return None
        return statistics.median(msg["ms"])

    # Calibration: a short run of every engine (and a warm-up); rivet-run's
    # outputs are written.
    for e in engines:
        if left() < 5:
            errors.setdefault(e["name"], "out of time (--budget)")
            continue
        out_dir = tempfile.mkdtemp(prefix="rivet_out_", dir=work) if "rvx" in e else None
        ms = run_engine(e, 3, 2, min(90, left()), out_dir)
        if ms is not None:
            calib[e["name"]] = ms
            if out_dir:
                out_dirs[e["name"]] = out_dir

    # The outputs: PyTorch's against the export's (committed data sets: the
    # same weights?), then rivet-run's against PyTorch's.
    check = result["check"]
    if eager and eager.usable() and out_dirs and left() > 5:
        torch_out = tempfile.mkdtemp(prefix="torch_out_", dir=work)
        msg = eager.ask({"cmd": "outputs", "set": s["index"], "dir": torch_out}, timeout=min(60, left()))
        if not msg or "files" not in msg:
            check["error"] = f"no PyTorch outputs: {(msg or {}).get('error') or eager.failed}"
        else:
            if s["expected_dir"]:
                ok, a, r, note = compare_output_dirs(np, torch_out, s["expected_dir"], WEIGHTS_RTOL,
                                                     WEIGHTS_ATOL)
                check["torch_vs_export"] = {"ok": ok, "max_abs": a, "max_rel": r, "note": note}
                item["weights_match"] = item.get("weights_match", True) and ok
            if item.get("weights_match"):
                for name, d in out_dirs.items():
                    ok, a, r, note = compare_output_dirs(np, d, torch_out, OUTPUTS_RTOL, OUTPUTS_ATOL)
                    check[name] = {"ok": ok, "max_abs": a, "max_rel": r, "note": note}
            elif "weights_match" in item:
                check["note"] = "PyTorch's weights are not the export's: outputs not compared"
            else:
                check["note"] = "no committed data set checked PyTorch's weights: outputs not compared"
    for d in out_dirs.values():
        shutil.rmtree(d, ignore_errors=True)

    # Runs per round: about args.round_ms of the slowest engine.
    slowest = max(calib.values(), default=1.0)
    runs = max(args.min_runs, min(args.runs, int(args.round_ms / max(slowest, 1e-3))))
    live = [e for e in engines if e["name"] in calib]
    rounds = {e["name"]: [] for e in live}
    done = 0
    for k in range(args.rounds):
        if (k > 0 and time.monotonic() > set_deadline) or left() < 5:
            result["notes"].append(f"out of time after {k} of {args.rounds} rounds")
            break
        for e in (live if k % 2 == 0 else list(reversed(live))):
            if e["name"] in errors or left() < 5:
                continue
            # Generous (its runs and warm-up runs four times over): a worker
            # that does not answer in time is dropped.
            warmup = min(5, runs)
            expected_s = (runs + (warmup if "rvx" in e else 3)) * calib[e["name"]] / 1e3
            timeout = min(max(left(), 5), (30 if "rvx" in e else 10) + 4 * expected_s)
            ms = run_engine(e, runs, warmup, timeout)
            if ms is not None:
                rounds[e["name"]].append(ms)
        done += 1

    # The table.
    base_name = next((e["name"] for e in engines if "rvx" in e and rounds.get(e["name"])), None)
    base = rounds.get(base_name, [])
    rivet_names = [e["name"] for e in engines if "rvx" in e]
    log(f"\n{title}: median of {done} rounds x {runs} runs, each run synchronized")
    for name, rvx in s["rivet"]:
        log(f"  {name}: {rvx} on {devices.get(name, '?')}")
    log(f"  {'engine':<24} {'median ms':>10} {'min ms':>9} {'rivet/this':>11}  (> 1: rivet-run slower;"
        f" rivet-run and the \"host\" engines include the inputs' upload and the outputs' download)")
    for e in engines:
        name = e["name"]
        ms = rounds.get(name) or []
        if not ms:
            err = errors.get(name, "no round")
            log(f"  {name:<24} {'-':>10} {'-':>9} {'-':>11}  {err}")
            result["engines"][name] = {"error": err}
            continue
        ratio = paired_ratio(base, ms) if name != base_name else None
        result["engines"][name] = {
            "median_ms": statistics.median(ms), "min_ms": min(ms), "round_medians_ms": ms,
            "rivet_over_this": ratio, "device": devices.get(name),
            "rivet_ratios": {r: paired_ratio(rounds.get(r, []), ms) for r in rivet_names if r != name},
            "error": errors.get(name)}  # an error in a later round
        log(f"  {name:<24} {statistics.median(ms):>10.4g} {min(ms):>9.4g} {fmt_ratio(ratio):>11}"
            + (f"  (then: {errors[name]})" if name in errors else ""))
    for name, c in check.items():
        if isinstance(c, dict):
            what = "PyTorch vs the export's outputs" if name == "torch_vs_export" else f"{name} vs PyTorch"
            log(f"  outputs: {what}: {'agree' if c['ok'] else 'DIFFER'} (max abs {fmt_err(c['max_abs'])}, "
                f"max rel {fmt_err(c['max_rel'])}){' ' + c['note'] if c['note'] else ''}")
        else:
            log(f"  outputs: {c}")
    for n in result["notes"]:
        log(f"  note: {n}")
    result.update(runs_per_round=runs, rounds=done, calibration_ms=calib)
    return result


def run_bench(np, bundle, args, plan, workers, deadline, work):
    out = {"sets": [], "bandwidth": None, "notes": []}
    # Nothing is timed before every worker is ready (torch.compile's
    # compiling would load the CPU), or --compile-budget has passed (at most
    # 60% of the budget).
    cap = min(START + args.compile_budget, START + 0.6 * args.budget)
    for item in plan:
        for w in workers.get(item["model"], []):
            if w.wait_ready(cap - time.monotonic()):
                r = w.ready
                extra = (f", compiled in {r['compile_s']:.1f} s" if r.get("compile_s") is not None else "") \
                    + (f"; {r['note']}" if r.get("note") else "") \
                    + "".join(f"; shape {k} fails: {e}" for k, e in (r.get("set_errors") or {}).items())
                log(f"{item['model']}: {w.name} ready after {r['setup_s']:.1f} s{extra}")
            else:
                msg = f"{item['model']}: {w.name} skipped: {w.failed}"
                log(msg)
                out["notes"].append(msg)

    # Each shape gets its share (its item's weight) of the time left, and
    # what one leaves goes to the next; a shape that fails is reported.
    tail = 10  # the bandwidth and the summary
    tasks = [(item, s) for item in plan for s in item["sets"]]
    for i, (item, s) in enumerate(tasks):
        now = time.monotonic()
        weight_left = sum(it["weight"] for it, _ in tasks[i:])
        share = (deadline - tail - now) * item["weight"] / weight_left
        if deadline - tail - now < 5:
            r = {"model": item["model"], "family": item["family"], "label": s["label"],
                 "error": "out of time (--budget)"}
            log(f"\n{item['model']} {s['label']}: skipped: out of time (--budget)")
        else:
            try:
                r = bench_set(np, bundle, item, s, workers.get(item["model"], []), args, now + share,
                              deadline, work)
            except Exception as e:
                r = {"model": item["model"], "family": item["family"], "label": s["label"],
                     "error": f"{type(e).__name__}: {e}"}
                log(f"\n{item['model']} {s['label']}: failed: {r['error']}")
        out["sets"].append(r)

    # The device's copy bandwidth, from a ready eager worker, else from a
    # worker of its own.
    eager = [w for ws in workers.values() for w in ws if w.mode == "eager" and w.usable()]
    spare = None
    if not eager and workers and time.monotonic() < deadline - 20:
        spare = Worker("none", "bandwidth", work)
        if spare.wait_ready(min(90, deadline - time.monotonic())):
            eager = [spare]
        else:
            out["notes"].append(f"bandwidth: skipped: {spare.failed}")
            log(f"\ndevice-to-device copy: skipped: {spare.failed}")
    for w in eager[:1]:
        if time.monotonic() > deadline - 3:
            break
        bw = w.ask({"cmd": "bandwidth"}, timeout=max(5, min(30, deadline - time.monotonic())))
        if bw and "copy_gbps" in bw:
            out["bandwidth"] = bw
            log(f"\ndevice-to-device copy ({bw['bytes'] >> 20} MiB, torch): "
                f"{bw['read_write_gbps']:.0f} GB/s read + written ({bw['copy_gbps']:.0f} GB/s copied)")
    if spare:
        spare.close()
    return out


def chain_bandwidth(np, bundle, work, copy_gbps):
    """The fused elementwise chain of tools/bench/elementwise_chain.rvir on
    64 Mi float32 elements, inputs and result resident on the GPU
    (rivet-run --device-resident): bytes read and written per second, and
    that as a fraction of the device-to-device copy's rate."""
    rvx = os.path.join(bundle.root, "cases", "elementwise_chain.rvx")
    if not os.path.isfile(rvx):
        return None
    n = 64 << 20
    x = os.path.join(work, "chain_x.npy")
    np.save(x, np.linspace(-3, 3, n, dtype=np.float32))
    rc, out, err, _ = bundle.run([rvx, "--input", f"x={x}", "--bench", "20", "--warmup", "3",
                                  "--device-resident", "--json"], 120)
    os.remove(x)
    if rc != 0:
        log(f"\nelementwise chain: rivet-run failed: {first_error(err, out)}")
        return {"error": first_error(err, out)}
    r = json.loads(out.strip().splitlines()[-1])
    gbps = 2 * n * 4 / (r["median_ms"] / 1e3) / 1e9
    frac = gbps / copy_gbps if copy_gbps else None
    log(f"\nfused elementwise chain (tanh(2x + 1), {n >> 20} Mi float32, on the GPU): median "
        f"{r['median_ms']:.3f} ms = {gbps:.0f} GB/s read + written"
        + (f", {frac:.2f} of the device copy's {copy_gbps:.0f} GB/s" if frac else ""))
    return {"median_ms": r["median_ms"], "read_write_gbps": gbps, "of_copy": frac}


def bench_summary(bench):
    """One row per shape and rivet-run executable: the median ms of each
    engine and rivet-run's ratio to PyTorch eager's (paired by round)."""
    if not bench or not bench.get("sets"):
        return
    log("\n== benchmark summary: median ms per run; rivet-run's include the inputs' upload and the "
        "outputs' download, as do PyTorch's \"host\" ones (e.: eager fp32, c.: torch.compile); "
        "ratio > 1: rivet-run slower")
    log(f"{'shape':<34} {'rivet on':<8} {'rivet':>8} {'e.':>8} {'e. host':>8} {'compile':>8} "
        f"{'c. host':>8} {'r/e.':>7} {'r/e.host':>8}  outputs")
    for r in bench["sets"]:
        title = f"{r['model']} {r['label']}"
        engines = r.get("engines") or {}
        rivets = [n for n in (r.get("rivet_executables") or {}) if n in engines]
        if r.get("error") or not rivets:
            log(f"{title:<34} {r.get('error') or 'no rivet-run engine'}")
            continue
        med = {n: e.get("median_ms") for n, e in engines.items()}
        for n in rivets:
            eager = (engines.get("torch eager fp32") or {}).get("rivet_ratios", {}).get(n)
            host = (engines.get("torch eager fp32 host") or {}).get("rivet_ratios", {}).get(n)
            c = (r.get("check") or {}).get(n)
            outputs = "-" if not c else (f"{'agree' if c['ok'] else 'DIFFER'} {fmt_err(c['max_abs'])}")
            if med.get(n) is None:  # rivet-run failed: why
                outputs = f"rivet-run: {engines[n].get('error')}"[:100]
            label = title if n == "rivet-run" else f"{title} ({n[len('rivet-run '):]})"
            log(f"{label:<34} {str(engines[n].get('device') or '-'):<8} {fmt_ms(med.get(n)):>8} "
                f"{fmt_ms(med.get('torch eager fp32')):>8} {fmt_ms(med.get('torch eager fp32 host')):>8} "
                f"{fmt_ms(med.get('torch.compile')):>8} {fmt_ms(med.get('torch.compile host')):>8} "
                f"{fmt_ratio(eager):>7} {fmt_ratio(host):>8}  {outputs}")


def gpu_summary():
    try:
        p = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                            "--format=csv,noheader"], capture_output=True, text=True, timeout=20)
        return p.stdout.strip() if p.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired):
        return None


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "--worker":
        worker_main(sys.argv[2])
        return 0
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bundle", nargs="?", default=DEFAULT_BUNDLE)
    ap.add_argument("--flavor", choices=["cuda", "cpu"], default="cuda",
                    help="run the CUDA executables (default) or the CPU controls")
    ap.add_argument("--budget", type=float, default=285, help="seconds for everything (default 285)")
    ap.add_argument("--check-budget", type=float, default=90, help="seconds for the cases (default 90)")
    ap.add_argument("--case-timeout", type=float, default=30, help="seconds per case (default 30)")
    ap.add_argument("--compile-budget", type=float, default=120,
                    help="seconds from the start for the PyTorch workers (torch.compile's"
                         " compiling) to be ready (default 120)")
    ap.add_argument("--rounds", type=int, default=5, help="benchmark rounds per shape (default 5)")
    ap.add_argument("--runs", type=int, default=50, help="most timed runs per engine and round (default 50)")
    ap.add_argument("--min-runs", type=int, default=5, help="least timed runs per engine and round (default 5)")
    ap.add_argument("--round-ms", type=float, default=250,
                    help="milliseconds of runs per engine and round, by the slowest engine (default 250)")
    ap.add_argument("--bench-filter", help="a regular expression: only the shapes ('MODEL LABEL') it matches")
    ap.add_argument("--no-compile", action="store_true", help="no torch.compile baseline")
    ap.add_argument("--no-bench", action="store_true", help="correctness only")
    ap.add_argument("--conformance-budget", type=float, default=90,
                    help="seconds for the conformance pass list, when the bundle has it (default 90)")
    ap.add_argument("--json", help="where the JSON results go (default $OUT/gpu-check.json)")
    args = ap.parse_args()
    deadline = START + args.budget

    try:
        import numpy as np
    except ImportError:
        sys.exit(f"error: {sys.executable} has no numpy (use a python3 that has it)")

    work = tempfile.mkdtemp(prefix="rivet-gpu-check-")
    conformance = None
    workers = {}  # model -> its workers
    results, bench = [], None
    try:
        bundle = Bundle(args.bundle, work)
        m = bundle.manifest
        log(f"rivet GPU check: bundle {bundle.root} (commit {m.get('commit')}, built {m.get('created')}), "
            f"flavor {args.flavor}")
        log(f"host {platform.node()}, python {platform.python_version()}, numpy {np.__version__}; "
            f"GPU: {gpu_summary() or 'none seen (no nvidia-smi)'}")
        log(f"compile flags: cuda '{m.get('cuda_target_args')}', cpu '{m.get('cpu_target_args')}'")
        if m.get("local") and args.flavor == "cuda":
            log("warning: the bundle was built with --local (CPU bench executables beside the CUDA ones)")
        for n in m.get("notes", []):
            log(f"bundle note: {n}")

        # What the benchmark times, and its PyTorch workers, started first:
        # torch.compile then works while the cases run.
        plan, plan_notes = [], []
        torch_note = None
        if args.no_bench:
            torch_note = "--no-bench"
        else:
            try:
                plan, plan_notes = bench_plan(np, bundle, args.flavor, args, work)
            except Exception as e:  # the cases still run
                plan_notes = [f"no benchmark: {type(e).__name__}: {e}"]
            models_dir = find_models_dir(bundle.root)
            if not plan:
                torch_note = "nothing to benchmark"
            elif not torch_wanted(args.flavor):
                torch_note = "the CPU executables run (--flavor cpu)"
            elif not torch_available():
                torch_note = f"{sys.executable} has no torch"
            else:
                for item in plan:
                    sets = [[s["files"][n] for n in item["inputs"]] for s in item["sets"]]
                    modes = ["eager"] + (["compile"] if item["compile"] else [])
                    workers[item["model"]] = [Worker(item["model"], mode, work, models_dir, sets)
                                              for mode in modes]
        for n in plan_notes:
            log(f"bench note: {n}")
        if plan:
            log("benchmark: " + "; ".join(f"{it['model']} {', '.join(s['label'] for s in it['sets'])}"
                                          for it in plan))
        if torch_note:
            log(f"PyTorch baselines: skipped ({torch_note})")

        # The runner must start: libraries found, nothing missing.
        rc, out, err, _ = bundle.run(["--help"], 60)
        if rc != 0:
            log(f"error: rivet-run does not start: {first_error(err, out)}")
            ldd = subprocess.run(["ldd", bundle.runner], env=bundle.env, capture_output=True, text=True)
            log(ldd.stdout + ldd.stderr)
            for c in m["cases"]:
                results.append({"name": c["name"], "kind": c["kind"], "status": "error",
                                "note": "rivet-run does not start"})
        else:
            # Which libraries it loads: the bundle's, not the system's.
            ldd = subprocess.run(["ldd", bundle.runner], env=bundle.env, capture_output=True, text=True)
            for line in ldd.stdout.splitlines():
                if any(k in line for k in ("rivet", "dnnl", "fmt", "not found")):
                    log("  " + line.strip())
            results = check_cases(np, bundle, args.flavor, args, work)
            if args.flavor == "cuda":
                try:
                    conformance = check_conformance(np, bundle, work, args.conformance_budget)
                except Exception as e:
                    log(f"error: the conformance check failed: {type(e).__name__}: {e}")
                    conformance = [("conformance", "error", str(e))]

        if plan and rc == 0:
            log(f"\n== benchmark (elapsed {elapsed():.0f} s of {args.budget:.0f})")
            try:
                bench = run_bench(np, bundle, args, plan, workers, deadline, work)
            except Exception as e:  # the cases' results still count
                log(f"error: the benchmark failed: {type(e).__name__}: {e}")
                bench = {"error": f"{type(e).__name__}: {e}"}
            bench["notes"] = plan_notes + bench.get("notes", [])
    finally:
        # Every worker told to end first, so that they end together.
        everyone = [w for ws in workers.values() for w in ws]
        for w in everyone:
            try:
                w.proc.stdin.close()
            except OSError:
                pass
        until = time.monotonic() + 10
        for w in everyone:
            w.close(until)

    counts = {}
    for r in results:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    # "skipped" (out of time, no inputs) is reported, not a failure.
    bad = [r for r in results if r["status"] not in ("agree", "skipped")]
    # The tables last: the end of the output is what a device call returns.
    log(f"\n== summary ({args.flavor}, {elapsed():.0f} s): "
        + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())))
    log(HEADER)
    for r in results:
        log(row(r))
    if bad:
        listed = ", ".join(f"{r['name']} ({r['status']})" for r in bad[:12])
        log(f"{len(bad)} of {len(results)} cases do not agree: {listed}"
            + (f", and {len(bad) - 12} more" if len(bad) > 12 else ""))
    copy = (bench or {}).get("bandwidth") or {}
    chain = None
    if args.flavor == "cuda":
        try:
            chain = chain_bandwidth(np, bundle, work, copy.get("read_write_gbps"))
        except Exception as e:
            log(f"error: the elementwise chain failed: {type(e).__name__}: {e}")
    if conformance is not None:
        cc = {}
        for _, st, _ in conformance:
            cc[st] = cc.get(st, 0) + 1
        log("conformance pass list on the GPU: " + ", ".join(f"{n} {s}" for s, n in sorted(cc.items())))
        bad += [{"name": n, "status": st} for n, st, _ in conformance if st not in ("agree", "skipped")]
    bench_summary(bench)

    report = {"flavor": args.flavor, "elapsed_s": elapsed(), "gpu": gpu_summary(),
              "manifest": {k: v for k, v in m.items() if k != "cases"}, "counts": counts,
              "cases": results, "bench": bench,
              "conformance": [{"name": n, "status": s, "note": t} for n, s, t in (conformance or [])],
              "elementwise_chain": chain}
    out_dir = os.environ.get("OUT")
    json_path = args.json or (os.path.join(out_dir, "gpu-check.json") if out_dir else None)
    if json_path:
        with open(json_path, "w") as f:
            json.dump(report, f, indent=1, default=str)
            f.write("\n")
        with open(os.path.join(os.path.dirname(os.path.abspath(json_path)), "gpu-check.log"), "w") as f:
            f.write("\n".join(log.lines) + "\n")
        log(f"results: {json_path}")
    shutil.rmtree(work, ignore_errors=True)
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())
