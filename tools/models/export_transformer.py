#!/usr/bin/python3
"""A small nn.TransformerEncoder with dynamic sequence and batch axes.

Two layers, d_model 16, 2 heads, feed-forward 32, no dropout; input
src[S, B, 16] (sequence first). Exported with gradients enabled: torch 1.13's
inference fast path of TransformerEncoderLayer has no ONNX translation.
"""
import torch
from torch import nn

import common

NAME = "transformer"


def export(out_dir):
    common.seed_everything(3)
    layer = nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32,
                                       dropout=0.0)
    module = nn.TransformerEncoder(layer, num_layers=2,
                                   enable_nested_tensor=False).eval()
    g = torch.Generator().manual_seed(13)
    # (sequence, batch)
    sizes = [(5, 2), (9, 1), (3, 4)]
    data = [(torch.randn(s, b, 16, generator=g),) for s, b in sizes]
    return common.export(
        NAME, out_dir, module, data[0], ["src"], ["out"], data,
        dynamic_axes={"src": {0: "seq", 1: "batch"}, "out": {0: "seq", 1: "batch"}},
        export_with_grad=True)


if __name__ == "__main__":
    export(common.parse_out_dir(__doc__))
