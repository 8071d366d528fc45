"""Chapter 04 exercises: bring the data to the model, and load a checkpoint onto a chosen device.

The checkers use the `meta` device (present on every machine) as the "other" device.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import torch
from torch import nn

from ..checking import Question, Wrong, expect_function


def _check_predict(fn: Any) -> None:
    expect_function(fn, "predict")
    torch.manual_seed(0)
    model = nn.Linear(3, 2)
    x = torch.randn(4, 3)
    got = fn(model, x)
    if not isinstance(got, torch.Tensor):
        raise Wrong(f"predict(model, x) returned a {type(got).__name__}, not the model's output tensor")
    if got.shape != (4, 2) or not torch.allclose(got, model(x)):
        raise Wrong("with model and x on the same device, predict(model, x) should equal model(x)")
    model_on_meta = nn.Linear(3, 2).to("meta")
    got = fn(model_on_meta, x)
    if next(model_on_meta.parameters()).device.type != "meta":
        raise Wrong("predict moved the model: move the (small) input to the model, not the model to the input")
    if not isinstance(got, torch.Tensor) or got.device.type != "meta":
        raise Wrong("with the model on meta the output should be computed there, on the model's device")
    if x.device.type != "cpu":
        raise Wrong("leave the caller's x where it was; move a copy")


def _check_load_on(fn: Any) -> None:
    expect_function(fn, "load_on")
    torch.manual_seed(0)
    saved = nn.Linear(3, 1).state_dict()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "weights.pt"
        torch.save(saved, path)
        on_meta = fn(path, torch.device("meta"))
        on_cpu = fn(path, torch.device("cpu"))
    for got in (on_meta, on_cpu):
        if not isinstance(got, dict) or set(got) != set(saved):
            raise Wrong(f"return the state dict itself (a dict with keys {sorted(saved)}), not {type(got).__name__}")
    if any(v.device.type != "meta" for v in on_meta.values()):
        raise Wrong("load_on(path, 'meta') left tensors elsewhere: tell torch.load where to put them (map_location)")
    if not all(torch.equal(on_cpu[k], saved[k]) for k in saved):
        raise Wrong("loaded onto the CPU the tensors should hold the saved values")


QUESTIONS = [
    Question(
        number=1,
        task="Write `predict(model, x)` that runs `model` on `x` on the model's device, whichever device x is on.",
        variable="predict",
        checker=_check_predict,
        hint_text="next(model.parameters()).device says where the model lives; move x there with .to(...).",
        solution_code=(
            "def predict(model, x):\n    device = next(model.parameters()).device\n    return model(x.to(device))"
        ),
        wrong_answers=(
            "def predict(model, x):\n    return model(x)",
            "def predict(model, x):\n    return model.to(x.device)(x)",
            "def predict(model, x):\n    return model(x.to(model.device))",
        ),
    ),
    Question(
        number=2,
        task="Write `load_on(path, device)` returning the state dict saved at `path`, with every tensor on `device`.",
        variable="load_on",
        checker=_check_load_on,
        hint_text="torch.load(path, map_location=device, weights_only=True) puts each tensor on `device` as it loads.",
        solution_code=(
            "def load_on(path, device):\n    return torch.load(path, map_location=device, weights_only=True)"
        ),
        wrong_answers=(
            "def load_on(path, device):\n    return torch.load(path)",
            "def load_on(path, device):\n    return torch.load(path).to(device)",
            "def load_on(path, device):\n    return nn.Linear(3, 1).to(device).state_dict()",
        ),
    ),
]
