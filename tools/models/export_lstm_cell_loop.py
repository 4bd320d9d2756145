#!/usr/bin/python3
"""A scripted LSTM cell with explicit gates, looped over a dynamic T -> ONNX Loop.

forward(xs[T, B, 16], h0[B, 32], c0[B, 32]) -> (hs[T, B, 32], h_T, c_T): per
step, gates = W x_t + U h (two Linears, 16 -> 128 and 32 -> 128), chunked into
input/forget/cell/output gates, sigmoid/tanh, c = f c + i g, h = o tanh(c);
each h is appended to a list that is torch.stack-ed at the end (the exporter
writes a loop-carried sequence: SequenceInsert in the body, ConcatFromSequence
after the Loop). The cell is spelled out because torch 1.13 cannot export
aten::lstm_cell (nn.LSTMCell) inside a scripted loop. A workload of issue 26's
length benchmark (tools/bench/compare_engines.py --suite lengths).
"""
from typing import List

import torch
from torch import nn

import common

NAME = "lstm_cell_loop"


class LstmCellLoop(nn.Module):
    def __init__(self):
        super().__init__()
        self.ih = nn.Linear(16, 4 * 32)
        self.hh = nn.Linear(32, 4 * 32)

    def forward(self, xs: torch.Tensor, h: torch.Tensor, c: torch.Tensor):
        hs: List[torch.Tensor] = []
        for t in range(xs.size(0)):
            gates = self.ih(xs[t]) + self.hh(h)
            i, f, g, o = gates.chunk(4, 1)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            h = torch.sigmoid(o) * torch.tanh(c)
            hs.append(h)
        return torch.stack(hs), h, c


def export(out_dir):
    common.seed_everything(27)
    module = torch.jit.script(LstmCellLoop().eval())
    g = torch.Generator().manual_seed(271)
    # (steps, batch); the benchmark uses batch 2.
    sizes = [(5, 2), (1, 2), (12, 3)]
    data = [(torch.randn(t, b, 16, generator=g), torch.randn(b, 32, generator=g),
             torch.randn(b, 32, generator=g)) for t, b in sizes]
    return common.export(
        NAME, out_dir, module, data[0], ["xs", "h0", "c0"], ["hs", "h_final", "c_final"], data,
        dynamic_axes={"xs": {0: "steps", 1: "batch"}, "h0": {0: "batch"}, "c0": {0: "batch"},
                      "hs": {0: "steps", 1: "batch"}, "h_final": {0: "batch"},
                      "c_final": {0: "batch"}})


if __name__ == "__main__":
    export(common.parse_out_dir(__doc__))
