#!/usr/bin/python3
"""A small ResNet (stem, three basic blocks, the middle one strided), dynamic batch.

The committed stand-in for resnet18: 32 and 64 channels on a 20x20 image,
so that at -O3 its 3x3 stride-1 convs run as Winograd F(4x4, 3x3) (5x5
tiles of 4x4 at 20x20) and F(2x2, 3x3) (10x10 after the strided block),
with bias, residual and relu fused; the strided and 1x1 convs stay direct.
Batch-norm statistics come from training-mode passes (as for resnet18).
"""
import torch
from torch import nn

import common

NAME = "resblock"


class Block(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = None
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(
                nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return torch.relu(y + (x if self.shortcut is None else self.shortcut(x)))


class ResBlocks(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 32, 3, 1, 1, bias=False),
                                  nn.BatchNorm2d(32), nn.ReLU())
        self.blocks = nn.Sequential(Block(32, 32, 1), Block(32, 64, 2),
                                    Block(64, 64, 1))
        self.fc = nn.Linear(64, 10)

    def forward(self, image):
        y = self.blocks(self.stem(image))
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(y, 1), 1))


def export(out_dir):
    common.seed_everything(6)
    g = torch.Generator().manual_seed(16)
    model = common.calibrate_batchnorm(ResBlocks(), g, (8, 3, 20, 20))
    data = [(torch.randn(b, 3, 20, 20, generator=g),) for b in (1, 2)]
    return common.export(NAME, out_dir, model, data[0], ["image"], ["logits"],
                         data, dynamic_axes={"image": {0: "batch"},
                                             "logits": {0: "batch"}})


if __name__ == "__main__":
    export(common.parse_out_dir(__doc__))
