#!/usr/bin/python3
"""nn.TransformerEncoder (2 layers, d_model 64, 4 heads, feed-forward 128)
with dynamic sequence and batch axes.

Input src[S, B, 64] (sequence first), no dropout, no mask. torch 1.13's
inference fast path (aten::_transformer_encoder_layer_fwd, no ONNX
translation) needs batch_first=True, so this sequence-first encoder never
takes it, in the export or in the benchmark's PyTorch runs; it is exported
with gradients enabled all the same, as export_transformer.py is, which keeps
it off that path should the conditions change, and enable_nested_tensor=False
keeps the encoder off the nested-tensor path. Neither changes the arithmetic.
A workload of issue 26's length benchmark (tools/bench/compare_engines.py
--suite lengths).
"""
import torch
from torch import nn

import common

NAME = "transformer_encoder"


def export(out_dir):
    common.seed_everything(30)
    layer = nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128, dropout=0.0)
    module = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False).eval()
    g = torch.Generator().manual_seed(301)
    # (sequence, batch); the benchmark uses batch 2.
    sizes = [(7, 2), (1, 2), (12, 1)]
    data = [(torch.randn(s, b, 64, generator=g),) for s, b in sizes]
    return common.export(
        NAME, out_dir, module, data[0], ["src"], ["out"], data,
        dynamic_axes={"src": {0: "seq", 1: "batch"}, "out": {0: "seq", 1: "batch"}},
        export_with_grad=True)


if __name__ == "__main__":
    export(common.parse_out_dir(__doc__))
