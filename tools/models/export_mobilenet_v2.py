#!/usr/bin/python3
"""torchvision's MobileNetV2 with random weights and a dynamic batch axis.

Same recipe as export_resnet18.py (calibrated BatchNorm statistics, folded on
export). About 14 MB: not committed, written to the model cache.
"""
import torchvision

import common
from export_resnet18 import export_model

NAME = "mobilenet_v2"


def export(out_dir):
    common.seed_everything(6)
    return export_model(NAME, torchvision.models.mobilenet_v2(weights=None), out_dir, 16)


if __name__ == "__main__":
    export(common.parse_out_dir(__doc__))
