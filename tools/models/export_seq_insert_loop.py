#!/usr/bin/python3
"""A scripted loop that builds a list of growing slices -> ONNX Loop with a
loop-carried sequence.

forward(xs[N, 8]) -> ys[N (N + 1) / 2, 8]: iteration i (of N, the dynamic
first extent) appends xs[:i + 1] * (i + 1) to a list, and the list is
torch.cat-ed at the end (SequenceEmpty, SequenceInsert in the Loop body,
ConcatFromSequence after it). The output grows quadratically with N, so a
copy of the list per iteration would show as cubic time. A workload of
issue 26's length benchmark (tools/bench/compare_engines.py --suite lengths).
"""
from typing import List

import torch
from torch import nn

import common

NAME = "seq_insert_loop"


class SeqInsertLoop(nn.Module):
    def forward(self, xs: torch.Tensor):
        parts: List[torch.Tensor] = []
        for i in range(xs.size(0)):
            parts.append(xs[:i + 1] * (i + 1))
        return torch.cat(parts, 0)


def export(out_dir):
    common.seed_everything(28)
    module = torch.jit.script(SeqInsertLoop().eval())
    g = torch.Generator().manual_seed(281)
    data = [(torch.randn(n, 8, generator=g),) for n in (5, 1, 12)]
    return common.export(
        NAME, out_dir, module, data[0], ["xs"], ["ys"], data,
        dynamic_axes={"xs": {0: "n"}, "ys": {0: "total"}})


if __name__ == "__main__":
    export(common.parse_out_dir(__doc__))
