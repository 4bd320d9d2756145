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
