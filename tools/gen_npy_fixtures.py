#!/usr/bin/python3
"""Writes the small NumPy .npy fixtures read by tests/kernels/npy_test.cc.

Run with Debian's numpy:  /usr/bin/python3 tools/gen_npy_fixtures.py
The outputs are committed; the unit tests stay hermetic.
"""
import os

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                   "kernels", "data")


def main():
    os.makedirs(OUT, exist_ok=True)
    save = lambda name, a: np.save(os.path.join(OUT, name + ".npy"), a)
    save("f32_2x3", np.arange(6, dtype=np.float32).reshape(2, 3) * 0.5 - 1)
    save("f64_scalar", np.array(3.25, dtype=np.float64))
    save("f16_4", np.array([1.0, -2.5, 65504.0, 6.1035156e-05], dtype=np.float16))
    save("i64_3", np.array([-1, 0, 1 << 40], dtype=np.int64))
    save("i32_2x2", np.array([[1, -2], [3, -4]], dtype=np.int32))
    save("i16_2", np.array([-300, 300], dtype=np.int16))
    save("i8_3", np.array([-128, 0, 127], dtype=np.int8))
    save("u8_3", np.array([0, 128, 255], dtype=np.uint8))
    save("bool_2x2", np.array([[True, False], [False, True]]))
    save("f32_empty_0x3", np.zeros((0, 3), dtype=np.float32))
    # Column-major storage of [[1, 2, 3], [4, 5, 6]].
    save("f32_fortran_2x3",
         np.asfortranarray(np.array([[1, 2, 3], [4, 5, 6]], dtype=np.float32)))
    # Big-endian data must be rejected.
    save("f32_bigendian", np.array([1.0, 2.0], dtype=">f4"))
    # Format version 2.0 (forced), same data as f32_2x3.
    with open(os.path.join(OUT, "f32_2x3_v2.npy"), "wb") as f:
        a = np.arange(6, dtype=np.float32).reshape(2, 3) * 0.5 - 1
        np.lib.format.write_array(f, a, version=(2, 0))


if __name__ == "__main__":
    main()
