"""Every committed model (tests/models/*/model.onnx) and its test data sets
through the Python API, against the expected outputs the C++ model test
uses (rtol 1e-4 / atol 1e-4 for floats, others exactly)."""
import pathlib

import numpy as np
import pytest

import rivet
from conftest import MODELS, assert_matches

CASES = sorted(p.parent for p in MODELS.glob("*/model.onnx"))


@pytest.fixture(scope="module")
def executables():
    return {}


def _exe(executables, model_dir):
    if model_dir not in executables:
        executables[model_dir] = rivet.compile(model_dir / "model.onnx")
    return executables[model_dir]


def _check(got, want, where):
    assert_matches(got, want, where, atol=1e-4)


@pytest.mark.parametrize("model_dir", CASES, ids=[c.name for c in CASES])
def test_model(model_dir, executables):
    exe = _exe(executables, model_dir)
    sess = rivet.InferenceSession(exe)
    names = [i.name for i in sess.get_inputs()]
    sets = sorted(model_dir.glob("test_data_set_*"))
    assert sets
    for s in sets:
        feeds = {n: np.load(s / "inputs" / f"{n}.npy") for n in names}
        outs = sess.run(None, feeds)
        expected = sorted((s / "expected").glob("output_*.npy"),
                          key=lambda p: int(p.stem.split("_")[1]))
        assert len(outs) == len(expected), s
        for got, path in zip(outs, expected):
            _check(got, np.load(path), f"{s.name}/{path.name}")


@pytest.mark.parametrize("model_dir", CASES, ids=[c.name for c in CASES])
def test_model_saved_and_checked(model_dir, executables, tmp_path):
    """The .rvx round trip (file and bytes) and rivet.check on data set 0."""
    exe = _exe(executables, model_dir)
    exe.save(tmp_path / "m.rvx")
    s = model_dir / "test_data_set_0"
    names = exe.input_names
    feeds = {n: np.load(s / "inputs" / f"{n}.npy") for n in names}
    a = rivet.InferenceSession(str(tmp_path / "m.rvx")).run(None, feeds)
    b = rivet.InferenceSession(rivet.load(exe.to_bytes())).run(None, feeds)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    res = rivet.check(model_dir / "model.onnx", feeds, rtol=1e-4, atol=1e-4)
    assert res.ok, str(res)
