#!/usr/bin/python3
"""A scripted greedy GRU decoder -> ONNX Loop whose trip count is an input.

forward(token[B] int64, h0[B, 32], steps[] int64) -> (tokens[steps, B] int64,
logits[steps, B, 50], h): per step the token is embedded (vocabulary 50,
dimension 16), a GRU cell with explicit gates (hidden 32; PyTorch's GRU
formulation, reset gate applied after the recurrent projection) updates h,
a Linear projects h to the vocabulary, and the argmax is the next step's
token. `steps` is a 0-d int64 tensor read with int(), which the exporter turns
into the Loop's trip count. The cell is spelled out because torch 1.13 cannot
export aten::gru_cell (nn.GRUCell) inside a scripted loop. A workload of
issue 26's length benchmark (tools/bench/compare_engines.py --suite lengths).
"""
from typing import List

import torch
from torch import nn

import common

NAME = "gru_decoder"
VOCAB, EMBED, HIDDEN = 50, 16, 32


class GruDecoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, EMBED)
        self.ih = nn.Linear(EMBED, 3 * HIDDEN)
        self.hh = nn.Linear(HIDDEN, 3 * HIDDEN)
        self.proj = nn.Linear(HIDDEN, VOCAB)

    def forward(self, token: torch.Tensor, h: torch.Tensor, steps: torch.Tensor):
        tokens: List[torch.Tensor] = []
        logits: List[torch.Tensor] = []
        for _ in range(int(steps)):
            gi = self.ih(self.embed(token))
            gh = self.hh(h)
            ir, iz, inew = gi.chunk(3, 1)
            hr, hz, hnew = gh.chunk(3, 1)
            r = torch.sigmoid(ir + hr)
            z = torch.sigmoid(iz + hz)
            n = torch.tanh(inew + r * hnew)
            h = (1 - z) * n + z * h
            y = self.proj(h)
            token = torch.argmax(y, 1)
            tokens.append(token)
            logits.append(y)
        return torch.stack(tokens), torch.stack(logits), h


def export(out_dir):
    common.seed_everything(29)
    module = torch.jit.script(GruDecoder().eval())
    g = torch.Generator().manual_seed(291)
    # (steps, batch); the benchmark uses batch 2.
    sizes = [(5, 2), (1, 2), (12, 3)]
    data = [(torch.randint(0, VOCAB, (b,), generator=g), torch.randn(b, HIDDEN, generator=g),
             torch.tensor(n, dtype=torch.int64)) for n, b in sizes]
    return common.export(
        NAME, out_dir, module, data[0], ["token", "h0", "steps"], ["tokens", "logits", "h_final"],
        data, dynamic_axes={"token": {0: "batch"}, "h0": {0: "batch"},
                            "tokens": {0: "steps", 1: "batch"},
                            "logits": {0: "steps", 1: "batch"}, "h_final": {0: "batch"}})


if __name__ == "__main__":
    export(common.parse_out_dir(__doc__))
