"""Rivet: a neural-network compiler and register VM.

The workflow of ONNX Runtime and TVM users::

    import numpy as np, rivet
    exe = rivet.compile("model.onnx", opt_level=3)       # or rivet.from_onnx(...)
    exe.save("model.rvx")                                 # rivet.load("model.rvx")
    sess = rivet.InferenceSession(exe, num_threads=2)
    (y,) = sess.run(None, {"x": np.ones((1, 3), np.float32)})
    rivet.check("model.onnx", {"x": ...})                 # interpreter vs compiled

Every failure raises :class:`rivet.Error` with the message the CLI prints.
"""

from __future__ import annotations

import json as _json
import os as _os
import statistics as _statistics
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from . import _rivet
from ._rivet import ADT, Error, Executable, Module, NodeArg, Tensor

__all__ = [
    "ADT", "Error", "Executable", "InferenceSession", "Module", "NodeArg",
    "ProfileReport", "Tensor", "CheckResult", "check", "compile", "from_onnx",
    "interpret", "load", "load_ir", "parse", "set_num_threads",
]
__version__ = "0.1.0"

PathLike = Union[str, "_os.PathLike[str]"]
Feeds = Union[Mapping[str, Any], Sequence[Any]]


def from_onnx(path: PathLike) -> Module:
    """Imports an ONNX model (type-checked IR module)."""
    return _rivet.load_module(_os.fspath(path))


def load_ir(path: PathLike) -> Module:
    """Parses a .rvir program file (with the prelude)."""
    return _rivet.load_module(_os.fspath(path))


def parse(text: str, name: str = "<string>") -> Module:
    """Parses .rvir program text."""
    return _rivet.parse(text, name)


def _module(model: Union[Module, PathLike]) -> Module:
    if isinstance(model, Module):
        return model
    return _rivet.load_module(_os.fspath(model))


def compile(model: Union[Module, PathLike], opt_level: int = 3,
            target: str = "cpu",
            input_shapes: Optional[Mapping[str, Sequence[int]]] = None,
            codegen: str = "so", plan_memory: bool = True) -> Executable:
    """Compiles a module (or an .onnx/.rvir path) to an executable.

    codegen: "so" (native code in a shared object: the executable can be
    saved), "jit" (in-process LLVM JIT, cannot be saved) or "off".
    input_shapes specializes @main to those input shapes.
    """
    shapes = {k: [int(d) for d in v] for k, v in (input_shapes or {}).items()}
    return _rivet.compile(_module(model), opt_level, target, shapes, codegen,
                          plan_memory)


def load(source: Union[PathLike, bytes, bytearray, memoryview]) -> Executable:
    """Loads a .rvx executable from a path or from bytes (no compiler)."""
    return _rivet.load(source)


def set_num_threads(n: int) -> None:
    """Intra-op threads of the process (0: one per hardware thread): the
    count of every session made without ``num_threads``."""
    _rivet.set_num_threads(int(n))


def interpret(model: Union[Module, PathLike], inputs: Feeds) -> List[Any]:
    """Runs @main with the reference interpreter; returns the outputs."""
    return _rivet.interpret(_module(model), inputs)


class CheckResult:
    """The outcome of :func:`check`: one row per output, ``ok`` overall."""

    def __init__(self, rows, rtol: float, atol: float,
                 localization: Optional[Tuple[str, str]] = None):
        self.rows = [dict(zip(("output", "type", "max_abs", "max_rel", "ok",
                                "note"), r)) for r in rows]
        self.rtol, self.atol = rtol, atol
        self.ok = all(r["ok"] for r in self.rows)
        #: With localize=True: where the VM first diverges, as
        #: ``rivet check --localize --json`` gives it (``first``: origin,
        #: op, instance, errors, whether its inputs still agreed; ``worst``:
        #: the largest divergences), and as text.
        self.localization: Optional[Dict[str, Any]] = None
        self.localization_text: Optional[str] = None
        if localization is not None:
            self.localization_text = localization[0]
            self.localization = _json.loads(localization[1])
            # As `rivet check --localize`: every compared value agrees.
            self.ok = self.ok and bool(self.localization["ok"])

    def __bool__(self) -> bool:
        return self.ok

    def __str__(self) -> str:
        lines = [f"reference interpreter vs VM, rtol {self.rtol:g}, "
                 f"atol {self.atol:g}"]
        for r in self.rows:
            note = f" ({r['note']})" if r["note"] else ""
            lines.append(f"{r['output']:<28} {r['type']:<24} max abs "
                         f"{r['max_abs']:<11.4g} max rel {r['max_rel']:<11.4g} "
                         f"{'PASS' if r['ok'] else 'FAIL'}{note}")
        lines.append("PASS" if self.ok else "FAIL")
        if self.localization_text:
            lines.append(self.localization_text.rstrip("\n"))
        return "\n".join(lines)

    __repr__ = __str__


def check(model: Union[Module, Executable, PathLike], inputs: Feeds,
          rtol: float = 1e-4, atol: float = 1e-5, opt_level: int = 3,
          raise_on_mismatch: bool = False, localize: bool = False,
          inject_fault: Optional[str] = None, worst: int = 10) -> CheckResult:
    """Runs the reference interpreter and the compiled VM on the same inputs
    and compares every output (|vm - ref| <= atol + rtol * |ref|), like
    ``rivet check``.

    localize=True also compares every operator's value, as ``rivet check
    --localize`` does, and reports where the VM first diverges (the ONNX
    node or .rvir line:column, which run, whether its inputs still agreed)
    in ``result.localization``. inject_fault="ORIGIN[:SCALE]" perturbs, in
    the VM only, the kernel that computes ORIGIN, to see the report name it.
    """
    exe = model if isinstance(model, Executable) else compile(
        model, opt_level=opt_level, codegen="jit")
    loc = None
    if localize or inject_fault:
        loc = _rivet.localize(exe, inputs, float(rtol), float(atol),
                              inject_fault or "", int(worst))
    res = CheckResult(_rivet.check(exe, inputs, float(rtol), float(atol)),
                      rtol, atol, loc)
    if raise_on_mismatch and not res.ok:
        raise Error(str(res))
    return res


class ProfileReport:
    """Per-run times and per-kernel times of :meth:`InferenceSession.profile`."""

    def __init__(self, times: List[float], kernels: List[Tuple]):
        self.times = times
        self.kernels = [dict(zip(("kernel", "inputs", "seconds", "calls",
                                  "function", "pc"), k)) for k in kernels]

    @property
    def mean(self) -> float:
        return _statistics.fmean(self.times)

    @property
    def median(self) -> float:
        return _statistics.median(self.times)

    def table(self, top: int = 20) -> str:
        runs = len(self.times)
        total = sum(k["seconds"] for k in self.kernels) or 1.0
        lines = [f"{runs} runs: median {self.median * 1e6:.1f} us, "
                 f"min {min(self.times) * 1e6:.1f} us, "
                 f"mean {self.mean * 1e6:.1f} us",
                 f"{'kernel':<40} {'calls':>7} {'us/run':>10} {'share':>6}  "
                 "inputs"]
        for k in sorted(self.kernels, key=lambda k: -k["seconds"])[:top]:
            lines.append(f"{k['kernel'][:40]:<40} {k['calls']:>7} "
                         f"{k['seconds'] / runs * 1e6:>10.2f} "
                         f"{k['seconds'] / total:>6.1%}  {k['inputs']}")
        return "\n".join(lines)

    def json(self) -> str:
        return _json.dumps({"runs": len(self.times), "times_s": self.times,
                            "median_s": self.median, "kernels": self.kernels})

    def __str__(self) -> str:
        return self.table()


class InferenceSession:
    """Runs an executable (or a .rvx/.onnx/.rvir path, compiled at -O3).

    ``run`` releases the GIL: threads may share one session (each concurrent
    caller gets a VM of its own over the shared executable).
    ``num_threads``: the kernels' threads for this session's calls (ONNX
    Runtime's intra_op_num_threads); None or 0 (as in ONNX Runtime): the
    process-wide count (``set_num_threads``, or RIVET_NUM_THREADS, or one
    per core).
    """

    def __init__(self, model: Union[Executable, Module, PathLike],
                 num_threads: Optional[int] = None, **compile_options):
        if num_threads is not None and num_threads < 0:
            raise ValueError(f"num_threads must be 0 (the process's count) "
                             f"or more, got {num_threads}")
        if isinstance(model, Executable):
            exe = model
        elif isinstance(model, Module):
            exe = compile(model, **compile_options)
        else:
            path = _os.fspath(model)
            if path.lower().endswith((".onnx", ".rvir")):
                exe = compile(path, **compile_options)
            else:
                exe = load(path)
        self.executable = exe
        self._sess = _rivet.Session(exe, num_threads or 0)
        self.num_threads = num_threads
        self.run = self._sess.run  # no Python frame per call
        self.invoke = self._sess.invoke

    def run(self, output_names: Optional[Sequence[str]],  # noqa: F811
            input_feed: Feeds) -> List[Any]:
        """The outputs (NumPy arrays over the results' memory) for the
        inputs by name (or a sequence in @main's order)."""
        return self._sess.run(output_names, input_feed)

    def invoke(self, function: str, *args: Any) -> Any:  # noqa: F811
        """Calls a function of the executable: a Tensor, tuple, list or ADT."""
        return self._sess.invoke(function, *args)

    def get_inputs(self) -> List[NodeArg]:
        return self._sess.get_inputs()

    def get_outputs(self) -> List[NodeArg]:
        return self._sess.get_outputs()

    def profile(self, feeds: Feeds, repeat: int = 10) -> ProfileReport:
        """Runs @main ``repeat`` times (after a warm-up) timing each kernel."""
        times, kernels = self._sess.profile(feeds, int(repeat))
        return ProfileReport(times, kernels)
