"""The per-call-overhead model: y = x + x on float32[n], as ONNX (opset 13).
Used by python/tests (conftest.tiny_model) and tools/bench/python_overhead.py;
it needs only the onnx package."""


def tiny_model(path, n=4):
    """Writes the model to path and returns path as a string."""
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
