#!/usr/bin/env python3
"""Models for tests/models/agreement: ReduceMax / ReduceMin / integer
ReduceMean over an axis whose extent is known only at run time, fed an empty
one (the reference reports an error; generated code must too)."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(__file__), "..", "..", "tests", "models", "agreement")


def reduce_model(op, elem):
    x = helper.make_tensor_value_info("x", elem, ["n", 3])
    y = helper.make_tensor_value_info("y", elem, [1, 3])
    # An elementwise producer, so the reduction is generated inside a group.
    # Opset 13 (axes an attribute): what Debian's onnx 1.12 checks.
    nodes = [helper.make_node("Abs", ["x"], ["a"]),
             helper.make_node(op, ["a"], ["y"], axes=[0], keepdims=1)]
    g = helper.make_graph(nodes, op.lower() + "_dynamic", [x], [y])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


for op, elem, name in [("ReduceMax", TensorProto.FLOAT, "reducemax_dynamic"),
                       ("ReduceMin", TensorProto.FLOAT, "reducemin_dynamic"),
                       ("ReduceMean", TensorProto.INT32,
                        "reducemean_int_dynamic")]:
    onnx.save(reduce_model(op, elem), os.path.join(OUT, name + ".onnx"))
np.save(os.path.join(OUT, "empty_rows_x.npy"), np.zeros((0, 3), np.float32))
np.save(os.path.join(OUT, "empty_rows_i.npy"), np.zeros((0, 3), np.int32))
