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


def calibrate(model, g):
    """Gives the BatchNorms the statistics of random images.

    With the default momentum a few passes leave the running statistics near
    their initial (0, 1): activations then grow layer by layer and, in
    MobileNetV2, saturate every ReLU6, so that the logits no longer depend on
    the image. A cumulative average (momentum None) makes them exact.
    """
    for m in model.modules():
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
            m.reset_running_stats()
            m.momentum = None
    model.train()
    with torch.no_grad():
        for _ in range(2):
            model(torch.randn(4, 3, 224, 224, generator=g))
    return model.eval()


def export_model(name, model, out_dir, seed):
    g = torch.Generator().manual_seed(seed)
    model = calibrate(model, g)
    data = [(torch.randn(b, 3, 224, 224, generator=g),) for b in (1, 2)]
    return common.export(name, out_dir, model, data[0], ["image"], ["logits"],
                         data, dynamic_axes={"image": {0: "batch"},
                                             "logits": {0: "batch"}})


def export(out_dir):
    common.seed_everything(5)
    return export_model(NAME, torchvision.models.resnet18(weights=None), out_dir, 15)


if __name__ == "__main__":
    export(common.parse_out_dir(__doc__))
