"""The API: DLPack and buffer inputs without copies, results over the VM's
memory, invoke, interpret, profile, errors."""
import json
import os
import threading
import time

import numpy as np
import pytest

import rivet
from conftest import MODELS

PROGRAM = """
def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(2, 3), float32]) {
  (add(%x, %y), multiply(%x, %y))
}
"""


def ptr(a):
    return a.__array_interface__["data"][0]


def test_parse_interpret_invoke():
    mod = rivet.parse(PROGRAM)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = np.full((2, 3), 2, np.float32)
    ref = rivet.interpret(mod, {"x": x, "y": y})
    np.testing.assert_array_equal(ref[0], x + y)
    np.testing.assert_array_equal(ref[1], x * y)
    sess = rivet.InferenceSession(rivet.compile(mod))
    out = sess.invoke("main", x, y)
    assert isinstance(out, tuple) and len(out) == 2
    assert all(isinstance(t, rivet.Tensor) for t in out)
    assert out[0].shape == (2, 3) and out[0].dtype == "float32"
    np.testing.assert_array_equal(np.from_dlpack(out[1]), x * y)
    assert rivet.check(mod, [x, y]).ok


def test_load_ir(tmp_path):
    p = tmp_path / "p.rvir"
    p.write_text(PROGRAM)
    mod = rivet.load_ir(p)
    assert mod.input_names == ["x", "y"]


def test_dlpack_round_trip_without_copies():
    sess = rivet.InferenceSession(rivet.compile(rivet.parse(PROGRAM)))
    x = np.ones((2, 3), np.float32)
    t = sess.invoke("main", x, x)[0]
    a = np.from_dlpack(t)
    b = np.from_dlpack(t)
    assert ptr(a) == ptr(b), "two DLPack views of one tensor share memory"
    assert ptr(t.numpy()) == ptr(a)
    dev = t.__dlpack_device__()
    assert dev == (1, 0)
    # Back into rivet: the input is used in place (identity program).
    ident = rivet.InferenceSession(rivet.compile(rivet.parse(
        "def @main(%x: Tensor[(2, 3), float32]) { %x }")))
    y = ident.invoke("main", a)
    assert ptr(np.from_dlpack(y)) == ptr(a)
    (z,) = ident.run(None, {"x": a})
    assert ptr(z) == ptr(a), "a NumPy input and the result share memory"


def test_results_wrap_vm_memory_and_stay_valid(tiny_session):
    x = np.arange(4, dtype=np.float32)
    (y1,) = tiny_session.run(None, {"x": x})
    assert not y1.flags["OWNDATA"]
    keep = y1.copy()
    for i in range(50):
        tiny_session.run(None, {"x": x + i})
    np.testing.assert_array_equal(y1, keep)  # not overwritten by later runs


def test_buffer_and_non_contiguous_inputs(tiny_session):
    import array
    (y,) = tiny_session.run(None, {"x": array.array("f", [1, 2, 3, 4])})
    np.testing.assert_array_equal(y, [2, 4, 6, 8])
    x = np.arange(8, dtype=np.float32)[::2]  # strided: copied
    (y,) = tiny_session.run(None, [x])
    np.testing.assert_array_equal(y, 2 * x)
    (y,) = tiny_session.run(None, {"x": [1.0, 2.0, 3.0, 4.0]})
    np.testing.assert_array_equal(y, [2, 4, 6, 8])


def test_torch_inputs_and_outputs(tiny_session):
    torch = pytest.importorskip("torch")
    x = torch.arange(4, dtype=torch.float32)
    (y,) = tiny_session.run(None, {"x": x})
    np.testing.assert_array_equal(y, 2 * x.numpy())
    t = tiny_session.invoke("main", x)
    tt = torch.from_dlpack(t)
    assert tt.data_ptr() == ptr(np.from_dlpack(t))


def test_metadata(tiny_session):
    (i,) = tiny_session.get_inputs()
    assert (i.name, i.shape, i.dtype) == ("x", [4], "float32")
    (o,) = tiny_session.get_outputs()
    assert (o.name, o.shape, o.dtype) == ("y", [4], "float32")
    dyn = rivet.InferenceSession(rivet.compile(MODELS / "resblock" / "model.onnx"))
    assert dyn.get_inputs()[0].shape == [None, 3, 20, 20]
    (logits,) = dyn.get_outputs()
    assert (logits.name, logits.shape, logits.dtype) == ("logits", [None, 10],
                                                         "float32")
    lstm = rivet.InferenceSession(rivet.compile(MODELS / "lstm" / "model.onnx"))
    assert [(o.name, o.dtype, len(o.shape)) for o in lstm.get_outputs()] == [
        ("y", "float32", 3), ("h_n", "float32", 3), ("c_n", "float32", 3)]


def test_output_names(tiny_session):
    x = np.ones(4, np.float32)
    (y,) = tiny_session.run(["y"], {"x": x})
    np.testing.assert_array_equal(y, 2 * x)
    with pytest.raises(rivet.Error, match="no output 'nope'"):
        tiny_session.run(["nope"], {"x": x})


def test_input_shapes(tiny_path):
    exe = rivet.compile(MODELS / "resblock" / "model.onnx",
                        input_shapes={"image": (2, 3, 20, 20)})
    sess = rivet.InferenceSession(exe)
    assert sess.get_inputs()[0].shape == [2, 3, 20, 20]
    with pytest.raises(rivet.Error, match="no input 'nope'"):
        rivet.compile(tiny_path, input_shapes={"nope": (1,)})


def test_profile(tiny_session):
    rep = tiny_session.profile({"x": np.ones(4, np.float32)}, repeat=10)
    assert len(rep.times) == 10
    assert "runs" in rep.table()
    d = json.loads(rep.json())
    assert d["runs"] == 10 and d["kernels"]


def test_errors(tiny_session, tmp_path):
    x = np.ones(4, np.float32)
    with pytest.raises(rivet.Error, match="cannot open"):
        rivet.load(tmp_path / "missing.rvx")
    with pytest.raises(rivet.Error, match="cannot open"):
        rivet.from_onnx(tmp_path / "missing.onnx")
    with pytest.raises(rivet.Error, match=r"input 'x'.*dimension 0 is 5"):
        tiny_session.run(None, {"x": np.ones(5, np.float32)})
    with pytest.raises(rivet.Error, match=r"input 'x'.*dtype float64"):
        tiny_session.run(None, {"x": x.astype(np.float64)})
    with pytest.raises(rivet.Error, match="input 'x'.*missing"):
        tiny_session.run(None, {})
    with pytest.raises(rivet.Error, match="no input 'z'"):
        tiny_session.run(None, {"x": x, "z": x})
    with pytest.raises(rivet.Error, match="takes 1 inputs, got 2"):
        tiny_session.run(None, [x, x])
    with pytest.raises(rivet.Error):
        rivet.parse("def @main( {")
    with pytest.raises(rivet.Error, match="corrupt|truncated|magic|not"):
        rivet.load(b"not an executable")
    bad = tmp_path / "bad.rvx"
    bad.write_bytes(b"RVX garbage")
    with pytest.raises(rivet.Error):
        rivet.load(bad)
    assert issubclass(rivet.Error, RuntimeError)


def test_gil_released_threads_share_a_session():
    """Several threads x one session: all correct, and they overlap (the GIL
    is released while the VM runs)."""
    exe = rivet.compile(MODELS / "resblock" / "model.onnx")
    sess = rivet.InferenceSession(exe)
    d = MODELS / "resblock" / "test_data_set_0"
    x = np.load(d / "inputs" / "image.npy")
    want = np.load(d / "expected" / "output_0.npy")
    errors = []
    inside = []
    lock = threading.Lock()

    def work(k):
        try:
            xs = x * (1 + k)
            mine = rivet.interpret(exe_mod, {"image": xs})[0]
            for _ in range(30):
                (y,) = sess.run(None, {"image": xs})
                np.testing.assert_allclose(y, mine, rtol=1e-4, atol=1e-4)
            (y,) = sess.run(None, {"image": x})
            np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-4)
        except Exception as e:  # noqa: BLE001
            with lock:
                errors.append(e)

    exe_mod = rivet.from_onnx(MODELS / "resblock" / "model.onnx")
    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_gil_is_released_during_run():
    """A Python thread runs while the main thread is inside one run call.
    The switch interval is made far longer than the call, so a thread that
    needs the GIL can run during it only if run releases the GIL (no timing
    threshold: the other thread either made progress or it did not)."""
    import sys
    rivet.set_num_threads(1)
    exe = rivet.compile(MODELS / "resblock" / "model.onnx")
    sess = rivet.InferenceSession(exe)
    x = np.random.default_rng(0).standard_normal((64, 3, 20, 20)).astype(
        np.float32)
    sess.run(None, {"image": x})
    stop = threading.Event()
    ticks = [0]

    def spin():
        while not stop.is_set():
            ticks[0] += 1
            time.sleep(0)  # lets the main thread have the GIL back

    old = sys.getswitchinterval()
    sys.setswitchinterval(30.0)
    t = threading.Thread(target=spin)
    try:
        t.start()
        before = ticks[0]  # the spinner waits for the GIL, held here
        sess.run(None, {"image": x})
        during = ticks[0] - before
    finally:
        stop.set()
        sys.setswitchinterval(old)
        t.join()
    assert during > 0


def test_check_localizes_an_injected_fault():
    """check(localize=True) compares every operator's value, as `rivet check
    --localize`; a fault injected into one kernel (in the VM only) is named
    as the first divergence, with its inputs still agreeing."""
    model = MODELS / "resblock" / "model.onnx"
    feeds = {"image": np.load(MODELS / "resblock" / "test_data_set_0" /
                              "inputs" / "image.npy")}
    clean = rivet.check(model, feeds, localize=True)
    assert clean.ok, str(clean)
    assert clean.localization["ok"] and clean.localization["compared"] > 0
    assert clean.localization["first_divergence"] is None
    origin = "/blocks/blocks.0/conv2/Conv"
    bad = rivet.check(model, feeds, localize=True, inject_fault=origin + ":0.5")
    assert not bad.ok
    loc = bad.localization
    assert loc["fault_injected"] and origin in loc["fault_kernel"]
    first = loc["first_divergence"]
    assert first["origin"] == loc["fault_kernel_output"], loc
    assert first["inputs_agree"] and first["instance"].startswith("run 1")
    assert "first divergence" in str(bad).lower() or first["origin"] in str(bad)
    with pytest.raises(rivet.Error, match="no call of"):
        rivet.check(model, feeds, inject_fault="/NoSuchNode")


def test_sessions_have_thread_counts_of_their_own():
    """num_threads is the session's (ONNX Runtime's intra_op_num_threads),
    not the process's: in a fresh process set to one thread, a session with
    three starts the runtime's pool workers (threads of the process), one
    with one does not, and the process setting is left as it was."""
    import subprocess
    import sys
    script = r"""
import os, sys, numpy as np, rivet
def tasks():
    return len(os.listdir("/proc/self/task"))
rivet.set_num_threads(1)
exe = rivet.compile(rivet.parse(
    "def @main(%x: Tensor[(1024, 1024), float32]) { tanh(add(%x, %x)) }"))
x = np.ones((1024, 1024), np.float32)
one = rivet.InferenceSession(exe, num_threads=1)
three = rivet.InferenceSession(exe, num_threads=3)
default = rivet.InferenceSession(exe)
assert (one.num_threads, three.num_threads, default.num_threads) == (1, 3, None)
start = tasks()
for s in (one, default):
    (y,) = s.run(None, {"x": x})
    np.testing.assert_allclose(y, np.tanh(2 * x), rtol=1e-6)
after_one = tasks()
(y,) = three.run(None, {"x": x})
np.testing.assert_allclose(y, np.tanh(2 * x), rtol=1e-6)
after_three = tasks()
(y,) = default.run(None, {"x": x})  # still the process's one thread
print(start, after_one, after_three)
"""
    r = subprocess.run([sys.executable, "-c", script], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    start, after_one, after_three = map(int, r.stdout.split())
    assert after_one == start, "one thread: no pool worker started"
    assert after_three >= start + 2, "three threads: two pool workers"
    with pytest.raises(ValueError):
        rivet.InferenceSession(rivet.compile(rivet.parse(PROGRAM)),
                               num_threads=-1)
    assert rivet.InferenceSession(rivet.compile(rivet.parse(PROGRAM)),
                                  num_threads=0)._sess.num_threads == 0
