#!/usr/bin/python3
"""torchvision's ResNet-18 with random weights and a dynamic batch axis.

Batch-norm statistics come from a few training-mode passes over random
images, so the activations stay in a realistic range; the exporter folds the
eval-mode BatchNorms into the convolutions. About 45 MB: not committed,
written to the model cache.
"""
import torch
import torchvision

import common

NAME = "resnet18"


def export_model(name, model, out_dir, seed):
    g = torch.Generator().manual_seed(seed)
    model = common.calibrate_batchnorm(model, g, (4, 3, 224, 224))
    data = [(torch.randn(b, 3, 224, 224, generator=g),) for b in (1, 2)]
    return common.export(name, out_dir, model, data[0], ["image"], ["logits"],
                         data, dynamic_axes={"image": {0: "batch"},
                                             "logits": {0: "batch"}})


def export(out_dir):
    common.seed_everything(5)
    return export_model(NAME, torchvision.models.resnet18(weights=None), out_dir, 15)


if __name__ == "__main__":
    export(common.parse_out_dir(__doc__))
