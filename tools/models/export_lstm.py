#!/usr/bin/python3
"""nn.LSTM (one layer, input 4, hidden 8) with a dynamic sequence length.

forward(x[T, B, 4], h0[1, B, 8], c0[1, B, 8]) -> (y[T, B, 8], h_n, c_n); the
exporter emits a single ONNX LSTM node.
"""
import torch
from torch import nn

import common

NAME = "lstm"


class Lstm(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(input_size=4, hidden_size=8, num_layers=1)

    def forward(self, x, h0, c0):
        y, (h, c) = self.lstm(x, (h0, c0))
        return y, h, c


def export(out_dir):
    common.seed_everything(4)
    module = Lstm().eval()
    g = torch.Generator().manual_seed(14)
    data = [(torch.randn(t, 2, 4, generator=g), torch.randn(1, 2, 8, generator=g),
             torch.randn(1, 2, 8, generator=g)) for t in (3, 7, 12)]
    return common.export(
        NAME, out_dir, module, data[0], ["x", "h0", "c0"], ["y", "h_n", "c_n"],
        data, dynamic_axes={"x": {0: "seq"}, "y": {0: "seq"}})


if __name__ == "__main__":
    export(common.parse_out_dir(__doc__))
