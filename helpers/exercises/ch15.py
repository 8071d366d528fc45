"""Chapter 15 exercises: which rung of a measured ladder gained most, and a rung of your own: a bigger batch
through gradient accumulation that makes the same update."""

from typing import Any

import torch
import torch.nn.functional as F

from ..answers import Wrong, expect_function, expect_type
from .cases import Case, Slip, call_or_wrong, questions, same, show, table

_row = lambda name, over, kept: {"name": name, "over_last": over, "kept": kept, "guard": kept or over < 1}


def _best(rows: list, noise: float, kept_only: bool = True, margin: bool = True) -> Any:
    gains = [r for r in rows[1:] if r["kept"] or not kept_only]
    best = max(gains, key=lambda r: r["over_last"], default=None)
    return best and (best["over_last"] - 1 > noise or not margin) and best["name"] or None


def _fastest(rows: list, noise: float) -> Any:  # the kept rung at the highest speed over the plain run
    speed, best = 1.0, (1.0, None)
    for r in rows[1:]:
        speed *= r["over_last"] if r["kept"] else 1.0
        best = max(best, (speed, r["name"]) if r["kept"] else best, key=lambda b: b[0])
    return best[1] if best[0] - 1 > noise else None


_PLAIN = _row("plain", 1.0, True)
_LADDERS = [  # the largest step kept, one lost (the guard, or slower), none beyond the noise, a late small one
    ([_PLAIN, _row("tf32", 1.0, True), _row("autocast", 2.6, True), _row("sdpa", 1.2, True)], 0.05),
    ([_PLAIN, _row("autocast", 0.3, False), _row("sdpa", 1.3, True), _row("compile", 1.1, True)], 0.02),
    ([_PLAIN, _row("autocast", 3.0, False), _row("sdpa", 1.04, True), _row("fused", 1.01, True)], 0.05),
    ([_PLAIN, _row("tf32", 1.5, True), _row("sdpa", 1.02, True), _row("pinned", 1.3, True)], 0.1),
    ([_PLAIN], 0.03),
]
_SLIPS = [
    Slip(lambda rows, noise: _best(rows, noise, kept_only=False), "a rung that was not kept gained nothing: skip it"),
    Slip(lambda rows, noise: _best(rows, noise, margin=False), "a gain within the noise is no gain: then None"),
    Slip(_fastest, "that is the fastest overall; ask each rung's own step"),
]
_name = lambda v, call: v if v is None else expect_type(v, str, f"{call} to return a rung's name or None")
_check_best = table("best_rung", "(rows, noise)", [Case(c) for c in _LADDERS], _best, slips=_SLIPS, answer=_name)


def _step(model: Any, opt: Any, x: Any, y: Any, micro: int, share: str = "rows", zero: str = "once", steps: int = 1):
    opt.zero_grad() if zero == "once" else None  # the gradients of the step before are still there
    for i, (xs, ys) in enumerate(zip(x.tensor_split(micro), y.tensor_split(micro), strict=True)):
        opt.zero_grad() if zero == "each" else None
        scale = {"rows": len(xs) / len(x), "micro": 1 / micro, "none": 1.0}[share]
        (F.cross_entropy(model(xs), ys) * scale).backward()
        opt.step() if steps > 1 or i == micro - 1 else None


def _parts(batch: int) -> tuple:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Linear(16, 5))
    [setattr(p, "grad", torch.full_like(p, 0.5)) for p in model.parameters()]  # the step before's gradients
    x = torch.randn(batch, 6, generator=torch.Generator().manual_seed(1))
    return model, torch.optim.SGD(model.parameters(), lr=0.5), x, x[:, :5].argmax(dim=1)


_ACCUMULATED = [  # even chunks, uneven (10 rows in 4: 3, 3, 2, 2), one chunk, one row a chunk
    (12, 3),
    (10, 4),
    (8, 1),
    (5, 5),
]
_MISSTEPS = [
    ({"share": "none"}, "each micro-batch's mean loss counts in full: scale it by its share of the batch"),
    ({"share": "micro"}, "1 / micro is each chunk's share only when the chunks are equal: scale by its rows"),
    ({"zero": "each"}, "zeroing the gradients in the loop keeps only the last micro-batch's"),
    ({"zero": "never"}, "the previous step's gradients were added: zero them once, before the first micro-batch"),
    ({"steps": 2}, "one optimizer step per micro-batch; accumulate, then step once"),
]


def _check_accumulated(fn: Any) -> None:
    expect_function(fn, "accumulated_step", "(model, opt, x, y, micro)")
    for batch, micro in _ACCUMULATED:
        model, opt, x, y = _parts(batch)
        call = f"accumulated_step(model, opt, x, y, {micro}) on {batch} rows"
        seen: list[int] = []
        model.register_forward_pre_hook(lambda module, args, seen=seen: seen.append(len(args[0])))
        call_or_wrong(fn, (model, opt, x, y, micro), call)
        if len(seen) != micro or sum(seen) != batch:
            raise Wrong(f"{call} ran the model on {seen} rows; expected {micro} micro-batches that cover the {batch}")
        got = [p.detach().clone() for p in model.parameters()]
        _step(*(want := _parts(batch)), micro=1)  # one step on the whole batch
        if same([g.tolist() for g in got], [p.tolist() for p in want[0].parameters()], 1e-5):
            continue
        for changes, says in _MISSTEPS:
            _step(*(slip := _parts(batch)), micro=micro, **changes)
            if same([g.tolist() for g in got], [p.tolist() for p in slip[0].parameters()], 1e-5):
                raise Wrong(f"{call} left other weights than one step on the whole batch: {says}")
        raise Wrong(
            f"{call} left the first weight at {show(got[0][0, 0].item())}, one step on the whole batch at "
            f"{show(next(want[0].parameters())[0, 0].item())}"
        )


_TEXTS = {
    "best_rung": "Write `best_rung(rows, noise)`: the name of the kept rung whose own step (`over_last`) gained "
    "most, beyond `noise`; None if none did.\nrows[0] is the plain run; a rung not kept gained nothing; the gain is "
    "over_last - 1.",
    "accumulated_step": "Write `accumulated_step(model, opt, x, y, micro)`: one optimizer step on the batch (x, y) "
    "computed in `micro` micro-batches (`x.tensor_split(micro)`), the same update as one step on the whole batch.\n"
    "The loss is F.cross_entropy's mean; the last step's gradients are still there; chunks may differ in size.",
}
QUESTIONS = questions("15", _TEXTS, [_check_best, _check_accumulated], context=lambda: {"torch": torch, "F": F})
