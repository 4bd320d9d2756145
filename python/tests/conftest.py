import os
import pathlib

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODELS = ROOT / "tests" / "models"


def tiny_model(path, n=4):
    """An ONNX model y = x + x (float32[n]): the per-call-overhead model."""
    import onnx
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [n])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [n])
    g = helper.make_graph([helper.make_node("Add", ["x", "x"], ["y"])], "tiny",
                          [x], [y])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, str(path))
    return str(path)


@pytest.fixture(scope="session")
def tiny_path(tmp_path_factory):
    return tiny_model(tmp_path_factory.mktemp("tiny") / "tiny.onnx")


@pytest.fixture(scope="session")
def tiny_session(tiny_path):
    import rivet
    return rivet.InferenceSession(rivet.compile(tiny_path))


def assert_matches(got, want, where, rtol=1e-4, atol=1e-4):
    """got equals the expected array want: in shape, and within rtol/atol
    for floats, exactly otherwise."""
    got = np.asarray(got)
    assert got.shape == want.shape, where
    if np.issubdtype(want.dtype, np.floating):
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol,
                                   err_msg=where)
    else:
        np.testing.assert_array_equal(got, want, err_msg=where)


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "serve: starts a two-node Ray cluster (root; "
        "deselect with -m 'not serve')")
