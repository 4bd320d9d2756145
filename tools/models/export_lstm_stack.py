#!/usr/bin/python3
"""A two-layer nn.LSTM (input 16, hidden 32) with dynamic sequence and batch.

forward(x[T, B, 16], h0[2, B, 32], c0[2, B, 32]) -> (y[T, B, 32], h_n, c_n);
the exporter emits one ONNX LSTM node per layer. A workload of issue 26's
length benchmark (tools/bench/compare_engines.py --suite lengths); the data
sets include T = 1, the loop's smallest trip.
"""
import torch
from torch import nn

import common

NAME = "lstm_stack"


class LstmStack(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(input_size=16, hidden_size=32, num_layers=2)

    def forward(self, x, h0, c0):
        y, (h, c) = self.lstm(x, (h0, c0))
        return y, h, c


def export(out_dir):
    common.seed_everything(26)
    module = LstmStack().eval()
    g = torch.Generator().manual_seed(261)
    # (steps, batch)
    sizes = [(5, 3), (1, 3), (12, 2)]
    data = [(torch.randn(t, b, 16, generator=g), torch.randn(2, b, 32, generator=g),
             torch.randn(2, b, 32, generator=g)) for t, b in sizes]
    return common.export(
        NAME, out_dir, module, data[0], ["x", "h0", "c0"], ["y", "h_n", "c_n"], data,
        dynamic_axes={"x": {0: "seq", 1: "batch"}, "h0": {1: "batch"}, "c0": {1: "batch"},
                      "y": {0: "seq", 1: "batch"}, "h_n": {1: "batch"}, "c_n": {1: "batch"}})


if __name__ == "__main__":
    export(common.parse_out_dir(__doc__))
