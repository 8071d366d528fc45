"""Chapter 05 exercises: the blocks tensors keep alive, and a training step's peak memory predicted, as tables."""

import torch
from torch import nn

from ..answers import Wrong, expect_function
from ..standins import round_size
from .cases import Case, Slip, call_or_wrong, questions, table

#: What a loop keeps, as code (the GPU tests run it on CUDA): storages of at most 1 MiB, views of several kinds, copies.
_KEPT = (
    "[torch.zeros(1000, dtype=torch.uint8)]|[x := torch.zeros(500, 500), x[0], x.t()]|[torch.zeros(128)]"
    "|[torch.ones(1, 4).expand(1000, 4)]|[(x := torch.zeros(500, 500))[250:], x[-1]]|[torch.zeros(500, 500)[0]]"
    "|[torch.zeros(3, dtype=torch.float16), torch.zeros(5, dtype=torch.int64)]|[]|[torch.zeros(0), torch.tensor(1.0)]"
    "|[x := torch.ones(128, 64), x.detach(), x.view(torch.uint8), x]|[torch.zeros(500, 500)[0].detach()]"
    "|[x := torch.ones(100, 30), x.clone(), x.contiguous(), x.t().contiguous()]|[(x := torch.zeros(500, 500))[:0]]"
    "|[torch.ones(1000) > 0, torch.zeros(513, dtype=torch.uint8), torch.zeros(1)]"
).split("|")
#: The blocks of the tensors `kept`: one per storage (told apart by `key`), its bytes rounded by `size`; none if empty.
_blocks = lambda kept, size=round_size, key=lambda t: t.untyped_storage().data_ptr(): sum(
    size(n) for n in {key(t): t.untyped_storage().nbytes() for t in kept}.values() if n
)
_empty = lambda kept: 512 * any(not t.untyped_storage().nbytes() for t in kept)  # a block for an empty storage
_UP = "the allocator rounds each block up to a multiple of 512 bytes"
_VIEW = "a view keeps its base's whole storage alive, even a detached view: count t.untyped_storage().nbytes()"
_KEPT_SLIPS = (
    *(Slip(lambda k, r=r: _blocks(k, r), _UP) for r in (int, lambda n: n & -512, lambda n: 1 << (n - 1).bit_length())),
    Slip(lambda k: _blocks(k) + _empty(k), "an empty storage (untyped_storage().nbytes() == 0) has no block"),
    Slip(lambda k: _blocks(k, lambda n: (n // 512 + 1) * 512) + _empty(k), "a multiple of 512 is already rounded"),
    Slip(lambda k: _blocks(k, key=torch.Tensor.data_ptr), "x[250:] starts inside x's storage: key by its storage"),
    Slip(lambda k: _blocks(k, key=lambda t: t.untyped_storage().nbytes()), "two storages of one size are two blocks"),
    Slip(lambda k: sum(_blocks([t]) for t in k), "views share their base's storage: count each storage once"),
    Slip(lambda k: _blocks(filter(torch.numel, k)), "x[:0] keeps x's whole storage: count its nbytes(), not numel()"),
    Slip(lambda k: sum(round_size(t.nbytes) for t in k if t.nbytes), _VIEW),
    Slip(lambda k: round_size(_blocks(k, size=int) or 1), "each block is rounded on its own, not the total"),
    Slip(lambda k: -(-_blocks(k) // 2**21) * 2**21, "2 MiB segments are what memory_reserved counts"),
)
_cases = [Case(make=lambda c=c: (eval(c, {"torch": torch}),), label=c) for c in _KEPT]
_check_allocated_bytes = table("allocated_bytes", "(tensors)", _cases, _blocks, rel=0, slips=_KEPT_SLIPS)
#: Bytes of `copies` of each trainable and each frozen parameter (`size(p)` bytes a number), and the activations.
_peak = lambda model, batch, per_sample, copies=(4, 1), size=torch.Tensor.element_size: (
    sum(p.numel() * size(p) * copies[not p.requires_grad] for p in model.parameters()) + batch * per_sample
)
#: Models on meta: frozen layers, 16-bit and mixed dtypes, buffers, a shared parameter, parameters of a parent module.
_MODELS = {
    "an MLP, first layer frozen": lambda: nn.Sequential(nn.Linear(64, 32).requires_grad_(False), nn.Linear(32, 10)),
    "a float32 MLP, nested": lambda: nn.Sequential(nn.Linear(64, 32), nn.Sequential(nn.ReLU(), nn.Linear(32, 10))),
    "a float16 and a float32 Linear": lambda: nn.Sequential(nn.Linear(16, 8).half(), nn.Linear(8, 4)),
    "a Linear and a BatchNorm1d in eval mode": lambda: nn.Sequential(nn.Linear(8, 4), nn.BatchNorm1d(4).eval()),
    "a frozen bfloat16 Embedding": lambda: nn.Embedding(9, 8, dtype=torch.bfloat16).requires_grad_(False),
    "an Embedding and a Linear head sharing its weight": lambda: (  # a language model's tied weights
        m := nn.Sequential(nn.Embedding(10, 4), nn.Linear(4, 10, bias=False)).to("meta"),
        setattr(m[1], "weight", m[0].weight),  # tied on meta: to("meta") would untie them
    )[0],
    "a ParameterDict of a frozen w (4, 4) and a trainable b (4,), then a Linear(4, 2)": lambda: nn.Sequential(
        nn.ParameterDict({"w": nn.Parameter(torch.ones(4, 4), requires_grad=False), "b": nn.Parameter(torch.ones(4))}),
        nn.Linear(4, 2),
    ),
    "a frozen float16 attention layer": lambda: nn.MultiheadAttention(8, 2, dtype=torch.half).requires_grad_(False),
}
_TAKES = "(model, batch_size, activation_bytes_per_sample)"
_PEAK_CASES = [
    Case(make=lambda name=name, b=b, a=a: (_MODELS[name]().to("meta"), b, a), label=f"{name}, {b}, {a}")
    for name, b, a in zip(_MODELS, (8, 16, 4, 1, 3, 2, 2, 5), (128, 128, 16, 32, 40, 24, 8, 12), strict=True)
]
_PEAK_SLIPS = (
    Slip(lambda m, b, a: _peak(m, b, a, (4, 4)), "a frozen parameter has no gradient or moments: count it once"),
    Slip(lambda m, b, a: _peak(m, b, a, (4, 3)), "Adam keeps no moments for a frozen parameter: count it once"),
    Slip(lambda m, b, a: _peak(m, b, a, (4, 0)), "the frozen parameters are missing: they are in memory, once"),
    Slip(lambda m, b, a: _peak(m, b, a, (3, 1)), "a trainable one is there 4 times: itself, its gradient, 2 moments"),
    Slip(lambda m, b, a: _peak(m, b, a, (1, 1)), "a trainable parameter also has a gradient and two Adam moments"),
    Slip(lambda m, b, a: _peak(m, 1, a), "that counts the activations of one sample; multiply by batch_size"),
    Slip(lambda m, b, a: _peak(m, b, a, size=lambda p: 1), "that counts numbers; multiply by element_size()"),
    Slip(lambda m, b, a: _peak(m, b, a, size=lambda p: 4), "each parameter has its own element_size(), not 4"),
    Slip(lambda m, b, a: _peak(m, b, a) + sum(t.nbytes for t in m.buffers()), "that counts buffers: only parameters"),
)


def _check_predict_peak_bytes(fn: object) -> None:
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
    "allocated_bytes": "Write `allocated_bytes(tensors)`: the bytes memory_allocated counts for these tensors.\n"
    "Count each storage once (t.untyped_storage(): data_ptr(), nbytes()), rounded up to 512; an empty one has none.",
    "predict_peak_bytes": f"Write `predict_peak_bytes{_TAKES}` for a training step with Adam.\n"
    "Sum p.numel() * p.element_size(), times 4 if p.requires_grad; add the batch's activations.",
}
_CHECKS = (_check_allocated_bytes, _check_predict_peak_bytes)
QUESTIONS = questions("05", _TEXTS, _CHECKS, context=lambda: {"torch": torch})
