#!/usr/bin/python3
"""Writes the tiny hand-built ONNX models that tests/tools/onnx_cli_test.cc runs.

/usr/bin/python3 tools/models/export_cli_fixtures.py   (writes tests/models/cli/)

They use no operator but If, so the CLI's ONNX path (input/output naming,
input checks, --random-inputs with symbolic dims, errors) is tested
independently of the operator families:
- passthrough.onnx: inputs 'input.1' float32[batch, 3] and 'ids:0' int64[2]
  are also the graph's outputs, in reverse order (a graph with no nodes);
- select.onnx: If(cond) then 'a' else 'b' for a, b float32[n], output 'picked';
- unsupported.onnx: one node 'mystery_node' of the unknown op 'FancyOp'.
"""
import os

import onnx
from onnx import TensorProto, helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                   "tests", "models", "cli")


def save(model, name):
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(OUT, name))


def main():
    os.makedirs(OUT, exist_ok=True)
    opset = [helper.make_opsetid("", 13)]

    x = helper.make_tensor_value_info("input.1", TensorProto.FLOAT, ["batch", 3])
    ids = helper.make_tensor_value_info("ids:0", TensorProto.INT64, [2])
    g = helper.make_graph([], "passthrough", [x, ids], [ids, x])
    save(helper.make_model(g, opset_imports=opset, producer_name="rivet-tests"),
         "passthrough.onnx")

    cond = helper.make_tensor_value_info("cond", TensorProto.BOOL, [])
    va = helper.make_tensor_value_info("a", TensorProto.FLOAT, ["n"])
    vb = helper.make_tensor_value_info("b", TensorProto.FLOAT, ["n"])
    picked = helper.make_tensor_value_info("picked", TensorProto.FLOAT, ["n"])
    then_g = helper.make_graph([], "then", [], [va])
    else_g = helper.make_graph([], "else", [], [vb])
    node = helper.make_node("If", ["cond"], ["picked"], name="select",
                            then_branch=then_g, else_branch=else_g)
    g = helper.make_graph([node], "select", [cond, va, vb], [picked])
    save(helper.make_model(g, opset_imports=opset, producer_name="rivet-tests"),
         "select.onnx")

    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    xin = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    node = helper.make_node("FancyOp", ["x"], ["y"], name="mystery_node")
    g = helper.make_graph([node], "unsupported", [xin], [y])
    model = helper.make_model(g, opset_imports=opset, producer_name="rivet-tests")
    onnx.save(model, os.path.join(OUT, "unsupported.onnx"))  # unchecked: unknown op


if __name__ == "__main__":
    main()
