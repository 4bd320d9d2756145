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

import common  # noqa: F401 (export_transformer uses it)
import export_transformer

NAME = "transformer_encoder"


def export(out_dir):
    # (sequence, batch); the benchmark uses batch 2.
    return export_transformer.export_encoder(NAME, out_dir, 30, 64, 4, 128, 301,
                                             [(7, 2), (1, 2), (12, 1)])


if __name__ == "__main__":
    export(common.parse_out_dir(__doc__))
