"""Chapter 05 exercises: a tensor's size, and a training step's peak memory predicted, as tables of cases."""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import nn

from ..answers import Wrong, expect_function
from ..memory import tensor_nbytes
from .calls import CallLog
from .cases import Case, Slip, call_or_wrong, questions, show, table

#: Dtypes of 1, 2, 4, 8 bytes (bool, int32, complex too), a 0-d shape, 0-sized ones, a torch.Size, more elements than
#: float32 holds exactly; then, once nothing is allocated, more than an int32 counts, and 2**60 bytes (no machine has).
_DIMS = [(64, 3, 224, 224), (64, 3, 224, 224), (1000,), (7, 3), (), (2, 0, 5), (0,), (3, 5), torch.Size([5, 2]), (6,)]
_DTYPES = "float32 float16 int8 bool bfloat16 float32 complex64 complex64 int64 int32 float64 float32".split()
_SHAPES = [*zip([*_DIMS, (4096, 4096), (4097, 4097)], [getattr(torch, name) for name in _DTYPES], strict=True)]
_BYTES_SLIPS = (
    Slip(lambda shape, dtype: math.prod(shape), "that is the number of elements; multiply by dtype.itemsize"),
    Slip(lambda shape, dtype: 4 * math.prod(shape), "that is 4 bytes an element: use dtype.itemsize"),
)


def _check_tensor_bytes(fn: Any) -> None:
    """The tables, and no tensor of a case's shape allocated on a real device (the question says so)."""
    for shapes in (_SHAPES, [((65536, 65536), torch.uint8), ((2**30, 2**30), torch.uint8)]):
        with CallLog() as log:
            table("tensor_bytes", "(shape, dtype)", shapes, tensor_nbytes, rel=0, slips=_BYTES_SLIPS)(fn)
        made = [c.result for c in log.calls if type(c.result) is torch.Tensor and not c.result.is_meta]  # no fakes
        if made := [t for t in made if t.numel() > 1 and t.shape in {torch.Size(shape) for shape, _ in shapes}]:
            raise Wrong(f"tensor_bytes allocated {show(made[0])}: size it on the meta device, or from shape and dtype")


def _tied() -> nn.Module:
    """A language model's tied weights, on meta (`to` would untie them): the Linear head's is the Embedding's."""
    model = nn.Sequential(nn.Embedding(10, 4), nn.Linear(4, 10, bias=False)).to("meta")
    model[1].weight = model[0].weight
    return model


#: Bytes of `copies` of each trainable and each frozen parameter (`size(p)` bytes a number), and the activations.
_peak = lambda model, batch, per_sample, copies=(4, 1), size=torch.Tensor.element_size: (
    sum(p.numel() * size(p) * copies[not p.requires_grad] for p in model.parameters()) + batch * per_sample
)
#: Models, on the meta device: frozen layers, float16 and bfloat16 parameters, mixed dtypes, buffers (not
#: parameters), a parameter two modules share, a module with a frozen and a trainable parameter.
_MODELS = {
    "an MLP, first layer frozen": lambda: nn.Sequential(nn.Linear(64, 32).requires_grad_(False), nn.Linear(32, 10)),
    "a float32 MLP": lambda: nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10)),
    "a float16 and a float32 Linear": lambda: nn.Sequential(nn.Linear(16, 8).half(), nn.Linear(8, 4)),
    "a Linear and a BatchNorm1d in eval mode": lambda: nn.Sequential(nn.Linear(8, 4), nn.BatchNorm1d(4).eval()),
    "a frozen bfloat16 Embedding": lambda: nn.Embedding(9, 8, dtype=torch.bfloat16).requires_grad_(False),
    "an Embedding and a Linear head sharing its weight": _tied,
    "a ParameterDict of a frozen w (4, 4) and a trainable b (4,), then a Linear(4, 2)": lambda: nn.Sequential(
        nn.ParameterDict({"w": nn.Parameter(torch.ones(4, 4), requires_grad=False), "b": nn.Parameter(torch.ones(4))}),
        nn.Linear(4, 2),
    ),
}
_TAKES = "(model, batch_size, activation_bytes_per_sample)"
_PEAK_CASES = [
    Case(make=lambda name=name, b=b, a=a: (_MODELS[name]().to("meta"), b, a), label=f"{name}, {b}, {a}")
    for name, b, a in zip(_MODELS, (8, 16, 4, 1, 3, 2, 2), (128, 128, 16, 32, 40, 24, 8), strict=True)
]
_PEAK_SLIPS = (
    Slip(lambda m, b, a: _peak(m, b, a, (4, 4)), "a frozen parameter has no gradient or moments: count it once"),
    Slip(lambda m, b, a: _peak(m, b, a, (4, 3)), "Adam keeps no moments for a frozen parameter: count it once"),
    Slip(lambda m, b, a: _peak(m, b, a, (4, 0)), "the frozen parameters are missing: they are in memory, once"),
    Slip(lambda m, b, a: _peak(m, b, a, (3, 1)), "a trainable parameter has a gradient and two Adam moments"),
    Slip(lambda m, b, a: _peak(m, b, a, (1, 1)), "a trainable parameter also has a gradient and two Adam moments"),
    Slip(lambda m, b, a: _peak(m, 1, a), "that counts the activations of one sample; multiply by batch_size"),
    Slip(lambda m, b, a: _peak(m, b, a, size=lambda p: 1), "that counts numbers; multiply by element_size()"),
    Slip(lambda m, b, a: _peak(m, b, a, size=lambda p: 4), "not every number has 4 bytes: use element_size()"),
    Slip(lambda m, b, a: _peak(m, b, a) + sum(t.nbytes for t in m.buffers()), "that counts buffers: only parameters"),
)


def _check_predict_peak_bytes(fn: Any) -> None:
    """Each model left as it was (its parameters' requires_grad, dtype and device, its modes); then the table."""
    expect_function(fn, "predict_peak_bytes", _TAKES)
    for case in _PEAK_CASES:
        args, call, kept = case.fresh(), f"predict_peak_bytes({case.label})", case.fresh()[0]
        call_or_wrong(fn, args, call)
        for (name, p), q in zip(args[0].named_parameters(), kept.parameters(), strict=False):
            if changed := [k for k in ("requires_grad", "dtype", "device") if getattr(p, k) != getattr(q, k)]:
                raise Wrong(f"{call} changed {name}'s {changed[0]}: leave the model as it was")
        if [m.training for m in args[0].modules()] != [m.training for m in kept.modules()]:
            raise Wrong(f"{call} changed a module's train/eval mode: leave the model as it was")
    table("predict_peak_bytes", _TAKES, _PEAK_CASES, _peak, rel=0, slips=_PEAK_SLIPS)(fn)


_TEXTS = {  # each question's variable: its task, then (after a newline) its hint
    "tensor_bytes": "Write `tensor_bytes(shape, dtype)`: the bytes a dense tensor of that shape and dtype needs.\n"
    "math.prod(shape) elements (import math), dtype.itemsize bytes each; or a meta tensor's .nbytes.",
    "predict_peak_bytes": f"Write `predict_peak_bytes{_TAKES}` for a training step with Adam.\n"
    "Sum p.numel() * p.element_size(), times 4 if p.requires_grad; add the batch's activations.",
}
_CHECKS = (_check_tensor_bytes, _check_predict_peak_bytes)
QUESTIONS = questions("05", _TEXTS, _CHECKS, context=lambda: {"torch": torch})
