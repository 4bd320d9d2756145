#!/usr/bin/python3
"""A scripted data-dependent branch -> ONNX If.

forward(x[B, 4]) takes one of two differently shaped paths depending on the
sign of x.sum(): the data sets cover both branches.
"""
import torch
from torch import nn

import common

NAME = "branch"


class Branch(nn.Module):
    def __init__(self):
        super().__init__()
        self.pos = nn.Linear(4, 6)
        self.neg = nn.Linear(4, 6)

    def forward(self, x: torch.Tensor):
        if bool(x.sum() > 0):
            y = torch.relu(self.pos(x))
        else:
            y = torch.tanh(self.neg(x)) * 2.0
        return y


def export(out_dir):
    common.seed_everything(2)
    module = torch.jit.script(Branch().eval())
    g = torch.Generator().manual_seed(12)
    pos = torch.randn(3, 4, generator=g).abs() + 0.1   # sum > 0: first branch
    neg = -(torch.randn(2, 4, generator=g).abs() + 0.1)  # sum < 0: second branch
    mixed = torch.randn(5, 4, generator=g)
    data = [(pos,), (neg,), (mixed,)]
    return common.export(NAME, out_dir, module, data[0], ["x"], ["y"], data,
                         dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})


if __name__ == "__main__":
    export(common.parse_out_dir(__doc__))
