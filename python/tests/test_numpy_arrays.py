"""NumPy arrays in and out without copies (the C-API path of NumpyArrays.cc),
the arrays that path leaves to the general one, and the references it keeps
on inputs."""
import sys

import numpy as np
import pytest

import rivet

# Every dtype that NumPy and rivet share, NumPy's two 64-bit integer types
# (long and long long) included.
SHARED = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
          "uint32", "uint64", "float16", "float32", "float64"]


def ptr(a):
    return a.__array_interface__["data"][0]


def identity(dtype, shape="(2, 3)"):
    return rivet.InferenceSession(rivet.compile(rivet.parse(
        f"def @main(%x: Tensor[{shape}, {dtype}]) {{ %x }}")))


def values(dtype, shape=(2, 3)):
    return (np.arange(int(np.prod(shape))) % 3 + 1).astype(dtype).reshape(shape)


@pytest.mark.parametrize("dtype", SHARED)
def test_shared_dtypes_pass_through_without_copies(dtype):
    x = values(dtype)
    (y,) = identity(dtype).run(None, {"x": x})
    assert y.dtype == np.dtype(dtype) and y.shape == (2, 3)
    assert ptr(y) == ptr(x), "the identity's result is the input's memory"
    np.testing.assert_array_equal(y, x)


def test_both_64_bit_integer_types():
    sess = identity("int64")
    for t in (np.int64, np.longlong):  # 'l' and 'q' on Linux
        x = values(t)
        (y,) = sess.run(None, {"x": x})
        assert y.dtype == np.int64 and ptr(y) == ptr(x)


def test_arrays_the_fast_path_leaves_alone():
    sess = identity("float32", "(4,)")
    want = np.array([1, 2, 3, 4], np.float32)
    swapped = want.astype(">f4")                       # not native order
    unaligned = np.frombuffer(bytearray(17), np.float32, 4, offset=1)
    unaligned.flags.writeable = True
    unaligned[:] = want
    strided = np.repeat(want, 2)[::2]                  # not contiguous
    for x in (swapped, unaligned, strided):
        (y,) = sess.run(None, {"x": x})
        assert y.dtype == np.float32
        np.testing.assert_array_equal(y, want)
    fortran = np.asfortranarray(values("float32"))     # copied, in C order
    (y,) = identity("float32").run(None, {"x": fortran})
    np.testing.assert_array_equal(y, fortran)


def test_empty_and_scalar_arrays():
    (y,) = identity("float32", "(0, 3)").run(
        None, {"x": np.zeros((0, 3), np.float32)})
    assert y.shape == (0, 3) and y.dtype == np.float32
    (y,) = identity("int32", "()").run(None, {"x": np.array(7, np.int32)})
    assert y.shape == () and y == 7


def test_wrong_dtype_is_an_error_naming_the_input():
    with pytest.raises(rivet.Error, match="x"):
        identity("float32").run(None, {"x": values("float64")})


def test_results_keep_their_memory_and_inputs_their_references():
    sess = identity("float32")
    x = values("float32")
    base = sys.getrefcount(x)
    for _ in range(1000):
        sess.run(None, {"x": x})
    assert sys.getrefcount(x) == base, "no reference to an input is kept"
    (y,) = sess.run(None, {"x": x})
    assert sys.getrefcount(x) == base + 1, "the result holds the input"
    del x
    np.testing.assert_array_equal(y, values("float32"))  # still valid
    y[0, 0] = 42                                          # writable
    z = y[1:]
    del y
    np.testing.assert_array_equal(z, values("float32")[1:])


def test_results_of_computation_are_fresh_arrays(tiny_session):
    x = np.arange(4, dtype=np.float32)
    (y,) = tiny_session.run(None, {"x": x})
    assert ptr(y) != ptr(x) and y.flags["C_CONTIGUOUS"]
    assert not y.flags["OWNDATA"], "a view of the VM's tensor, not a copy"
    # Made by NumPy's C API over the tensor, which its base holds (the
    # general path's base is nanobind's ndarray).
    assert type(y.base).__name__ == "PyCapsule"
    np.testing.assert_array_equal(y, 2 * x)
