#!/usr/bin/python3
"""A scripted RNN cell looped over a dynamic number of steps -> ONNX Loop.

forward(xs[T, B, 4], h0[B, 8]) runs an Elman cell h = tanh(W x_t + U h + b)
for t < T (T is only known at run time, so the exporter emits a Loop whose
trip count is Shape(xs)[0]) and returns the final state and a linear read-out
of it. The cell is spelled out because torch 1.13 cannot export
aten::rnn_tanh_cell (nn.RNNCell) inside a scripted loop.
"""
import torch
from torch import nn

import common

NAME = "rnn_loop"


class RnnLoop(nn.Module):
    def __init__(self):
        super().__init__()
        self.ih = nn.Linear(4, 8)
        self.hh = nn.Linear(8, 8, bias=False)
        self.readout = nn.Linear(8, 3)

    def forward(self, xs: torch.Tensor, h: torch.Tensor):
        for t in range(xs.size(0)):
            h = torch.tanh(self.ih(xs[t]) + self.hh(h))
        return h, self.readout(h)


def export(out_dir):
    common.seed_everything(1)
    module = torch.jit.script(RnnLoop().eval())
    g = torch.Generator().manual_seed(11)
    # (steps, batch): the trip count and the batch size both vary.
    sizes = [(3, 2), (7, 2), (1, 5)]
    data = [(torch.randn(t, b, 4, generator=g), torch.randn(b, 8, generator=g))
            for t, b in sizes]
    return common.export(
        NAME, out_dir, module, data[0], ["xs", "h0"], ["h_final", "y"], data,
        dynamic_axes={"xs": {0: "steps", 1: "batch"}, "h0": {0: "batch"},
                      "h_final": {0: "batch"}, "y": {0: "batch"}})


if __name__ == "__main__":
    export(common.parse_out_dir(__doc__))
