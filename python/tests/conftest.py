import os
import pathlib
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODELS = ROOT / "tests" / "models"

sys.path.insert(0, str(ROOT / "tools" / "models"))
from tiny_add import tiny_model  # noqa: E402,F401  (the overhead model)


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
