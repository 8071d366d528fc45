"""Where a model lives, for the GPU tests (shipped with them in the Kaggle dataset)."""

from __future__ import annotations

import torch
from torch import nn


def model_device(model: nn.Module) -> torch.device:
    """The device of the model's first parameter (the models here keep all of them on one device)."""
    try:
        return next(model.parameters()).device
    except StopIteration:
        raise ValueError(f"{type(model).__name__} has no parameters, so it has no device") from None
