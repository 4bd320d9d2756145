"""Every committed .rvir program (tests/programs/*/program.rvir) through the
Python API: compiled and run (`run`, flattened as the CLI writes outputs),
and on the reference interpreter (`rivet.interpret`), both against the
expected outputs the C++ program tests use."""
import numpy as np
import pytest

import rivet
from conftest import ROOT, assert_matches

PROGRAMS = sorted(p.parent for p in (ROOT / "tests" / "programs").glob(
    "*/program.rvir"))


def _feeds(sess, d):
    return {i.name: np.load(d / "inputs" / f"{i.name}.npy")
            for i in sess.get_inputs()}


def _expected(d):
    """output_<i>.npy, and output_<i>_<j>.npy for the elements of a List
    output, in the order the CLI writes them."""
    def key(p):
        return tuple(int(x) for x in p.stem.split("_")[1:])
    return [np.load(p) for p in sorted((d / "expected").glob("output_*.npy"),
                                       key=key)]


def _check(got, want, where):
    assert_matches(got, want, where, atol=1e-5)


def test_every_program_is_here():
    assert len(PROGRAMS) >= 19


@pytest.mark.parametrize("d", PROGRAMS, ids=[p.name for p in PROGRAMS])
def test_program(d):
    mod = rivet.load_ir(d / "program.rvir")
    sess = rivet.InferenceSession(rivet.compile(mod))
    feeds = _feeds(sess, d)
    want = _expected(d)
    outs = sess.run(None, feeds)
    assert len(outs) == len(want), d.name
    for i, (g, w) in enumerate(zip(outs, want)):
        _check(g, w, f"{d.name} output {i} (compiled)")
    ref = rivet.interpret(mod, feeds)
    assert len(ref) == len(want), d.name
    for i, (g, w) in enumerate(zip(ref, want)):
        _check(g, w, f"{d.name} output {i} (interpreter)")
