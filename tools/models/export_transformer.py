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


def export_encoder(name, out_dir, seed, d_model, nhead, dim_feedforward,
                   data_seed, sizes):
    """Exports a 2-layer nn.TransformerEncoder (no dropout) with inputs of
    the given (sequence, batch) sizes; the other encoder scripts call it."""
    common.seed_everything(seed)
    layer = nn.TransformerEncoderLayer(d_model=d_model, nhead=nhead,
                                       dim_feedforward=dim_feedforward,
                                       dropout=0.0)
    module = nn.TransformerEncoder(layer, num_layers=2,
                                   enable_nested_tensor=False).eval()
    g = torch.Generator().manual_seed(data_seed)
    data = [(torch.randn(s, b, d_model, generator=g),) for s, b in sizes]
    return common.export(
        name, out_dir, module, data[0], ["src"], ["out"], data,
        dynamic_axes={"src": {0: "seq", 1: "batch"}, "out": {0: "seq", 1: "batch"}},
        export_with_grad=True)


def export(out_dir):
    # (sequence, batch)
    return export_encoder(NAME, out_dir, 3, 16, 2, 32, 13,
                          [(5, 2), (9, 1), (3, 4)])


if __name__ == "__main__":
    export(common.parse_out_dir(__doc__))
