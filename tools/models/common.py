"""Shared helpers for the model export scripts in tools/models/.

Run the scripts with Debian's Python (torch 1.13, torchvision 0.14, onnx 1.12,
numpy): /usr/bin/python3 tools/models/export_all.py --out DIR

Every script writes one directory per model:

    DIR/<name>/model.onnx
    DIR/<name>/meta.json                      opset, input/output names, ONNX ops used
    DIR/<name>/test_data_set_<k>/inputs/<onnx input name>.npy
    DIR/<name>/test_data_set_<k>/expected/output_<i>.npy   (PyTorch's outputs)

which is what tests/models/run_models_test.cc reads: `rivet run model.onnx
--input NAME=inputs/NAME.npy ...` must reproduce expected/output_<i>.npy.
Weights are random (fixed seeds), so the files are reproducible.
"""
import argparse
import json
import os
import shutil

import numpy as np
import onnx
import torch

# Torch 1.13's default; every opset the frontend reads would do.
OPSET = 13


def model_cache_dir():
    """Where the large models go ($RIVET_MODEL_CACHE, default ~/.cache/rivet/models)."""
    d = os.environ.get("RIVET_MODEL_CACHE")
    if d:
        return d
    return os.path.join(os.path.expanduser("~"), ".cache", "rivet", "models")


def parse_out_dir(description):
    """The --out DIR argument of a single export script."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--out", default=model_cache_dir(),
                   help="parent directory of the model's folder (default: %(default)s)")
    return p.parse_args().out


def seed_everything(seed):
    torch.manual_seed(seed)
    np.random.seed(seed)


def calibrate_batchnorm(model, g, image_shape, passes=2):
    """Gives the BatchNorms the statistics of random images of image_shape.

    With the default momentum a few passes leave the running statistics near
    their initial (0, 1): activations then grow layer by layer and, in
    MobileNetV2, saturate every ReLU6, so that the logits no longer depend on
    the image. A cumulative average (momentum None) makes them exact.
    """
    for m in model.modules():
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
            m.reset_running_stats()
            m.momentum = None
    model.train()
    with torch.no_grad():
        for _ in range(passes):
            model(torch.randn(*image_shape, generator=g))
    return model.eval()


def _to_numpy(v):
    """Flattens PyTorch's result the way ONNX lists the graph outputs."""
    if isinstance(v, torch.Tensor):
        return [v.detach().cpu().numpy()]
    if isinstance(v, (tuple, list)):
        out = []
        for x in v:
            out.extend(_to_numpy(x))
        return out
    raise TypeError(f"unsupported output {type(v)}")


def onnx_ops(model):
    """The sorted set of ai.onnx operator types, subgraphs included."""
    ops = set()

    def visit(graph):
        for n in graph.node:
            if n.domain in ("", "ai.onnx"):
                ops.add(n.op_type)
            else:
                ops.add(f"{n.domain}.{n.op_type}")
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    visit(a.g)
                for g in a.graphs:
                    visit(g)

    visit(model.graph)
    return sorted(ops)


def export(name, out_dir, module, example_inputs, input_names, output_names,
           data_sets, dynamic_axes=None, export_with_grad=False):
    """Exports module to out_dir/name/model.onnx and writes each data set.

    example_inputs: the tuple the exporter traces (or runs a script module with);
    data_sets: a list of input tuples; PyTorch's outputs on each become the
    expected outputs. Returns the model directory.
    """
    model_dir = os.path.join(out_dir, name)
    if os.path.isdir(model_dir):
        shutil.rmtree(model_dir)
    os.makedirs(model_dir)
    path = os.path.join(model_dir, "model.onnx")

    # nn.TransformerEncoder only exports with gradients enabled (its
    # inference fast path has no ONNX symbolic); the others export either way.
    ctx = torch.enable_grad() if export_with_grad else torch.no_grad()
    with ctx:
        torch.onnx.export(module, tuple(example_inputs), path,
                          input_names=input_names, output_names=output_names,
                          dynamic_axes=dynamic_axes or {}, opset_version=OPSET,
                          do_constant_folding=True)
    model = onnx.load(path)
    onnx.checker.check_model(model)
    graph_inputs = [i.name for i in model.graph.input
                    if i.name not in {t.name for t in model.graph.initializer}]
    if graph_inputs != list(input_names):
        raise RuntimeError(f"{name}: exported inputs {graph_inputs}, expected {input_names}")
    graph_outputs = [o.name for o in model.graph.output]

    for k, inputs in enumerate(data_sets):
        ds = os.path.join(model_dir, f"test_data_set_{k}")
        os.makedirs(os.path.join(ds, "inputs"))
        os.makedirs(os.path.join(ds, "expected"))
        for n, x in zip(input_names, inputs):
            np.save(os.path.join(ds, "inputs", n + ".npy"), x.detach().cpu().numpy())
        with torch.no_grad():
            result = _to_numpy(module(*inputs))
        if len(result) != len(graph_outputs):
            raise RuntimeError(f"{name}: PyTorch returned {len(result)} tensors, "
                               f"the ONNX graph has {len(graph_outputs)} outputs")
        for i, y in enumerate(result):
            np.save(os.path.join(ds, "expected", f"output_{i}.npy"), y)

    meta = {
        "name": name,
        "opset": OPSET,
        "inputs": list(input_names),
        "outputs": graph_outputs,
        # input shapes of each data set, "TxBxC" like rivet's --shape
        "data_sets": [{n: "x".join(map(str, x.shape)) for n, x in zip(input_names, inputs)}
                      for inputs in data_sets],
        "onnx_ops": onnx_ops(model),
        "torch": torch.__version__,
    }
    with open(os.path.join(model_dir, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    size = os.path.getsize(path)
    print(f"{name}: {path} ({size / 1e6:.2f} MB), {len(data_sets)} data sets, "
          f"ops: {' '.join(meta['onnx_ops'])}")
    return model_dir
