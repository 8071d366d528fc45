"""Questions declared as tables of cases, in the manner of Kaggle Learn's `learntools` problems.

`table(...)` makes a checker that calls the learner's function on every case (fresh arguments each time: an
answer that changes them is refused) and compares with the course's answer (`want`). The cases vary what a
learner gets wrong by accident (sizes that do not divide, unsorted or empty inputs, other dtypes). A `Slip` (a
mistake the chapter teaches) is named only when the answer equals what it computes on every case it gets wrong
where the mistake shows; otherwise the message says the call, what was expected and what came back."""

import copy
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from ..answers import Wrong, expect_function, expect_number
from ..checking import Question
from ..learner_code import describe_error


@dataclass(frozen=True)
class Slip:
    """A mistake the chapter teaches: what it computes from the case's arguments, and what the learner is told."""

    computes: Callable[..., Any]
    says: str


@dataclass(frozen=True)
class Case:
    """The arguments of one call, made afresh for every call when `make` is given, and how to show them."""

    args: tuple = ()
    label: str = ""
    make: Callable[[], tuple] | None = None
    fresh = lambda self: self.make() if self.make is not None else copy.deepcopy(self.args)  # the arguments, anew


def show(value: Any, where: Callable[[torch.Tensor], Any] = lambda t: t.device) -> str:
    """A short text for a value in a message: floats with 6 digits, tensors by shape, dtype and device (`where`)."""
    if isinstance(value, torch.Tensor):
        return f"a {value.dtype} tensor of shape {tuple(value.shape)} on {where(value)}"
    if isinstance(value, float):
        return show(int(value)) if value.is_integer() and 0 < abs(value) < 1e15 else f"{value:.6g}" if value else "0.0"
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10_000:
        return f"{value:_}"
    if isinstance(value, list | tuple):
        inner = ", ".join(show(v, where) for v in value[:6]) + (", …" if len(value) > 6 else "")
        return f"[{inner}]" if isinstance(value, list) else f"({inner}{',' if len(value) == 1 else ''})"
    return text if len(text := repr(value)) <= 80 else text[:77] + "…"


def same(got: Any, want: Any, rel: float = 1e-6) -> bool:
    """Whether `got` is `want`: numbers within `rel` (relative), sequences element by element, else `==`."""
    if isinstance(want, bool) or isinstance(got, bool):
        return type(got) is type(want) and got == want
    if type(want) is type(got) is int:  # exactly: isclose would compare them as floats (2**53 + 1 == 2**53)
        return got == want
    if isinstance(want, int | float) and isinstance(got, int | float):
        return math.isclose(got, want, rel_tol=rel, abs_tol=0.0 if want else max(rel, 1e-12))  # 0: within rel
    if isinstance(want, list | tuple) and isinstance(got, list | tuple):
        return len(got) == len(want) and all(same(g, w, rel) for g, w in zip(got, want, strict=True))
    return bool(got == want)


def unchanged(before: Any, after: Any) -> bool:
    """Whether the arguments after a call equal a copy taken before it (tensors by dtype, shape and values)."""
    if isinstance(before, torch.Tensor):
        alike = isinstance(after, torch.Tensor) and (before.dtype, before.shape) == (after.dtype, after.shape)
        return alike and (before.device.type == "meta" or torch.equal(before, after.to(before.device)))
    if isinstance(before, list | tuple):
        return type(before) is type(after) and len(before) == len(after) and all(map(unchanged, before, after))
    if isinstance(before, dict):
        return before.keys() == after.keys() and all(unchanged(before[k], after[k]) for k in before)
    return isinstance(before, torch.nn.Module) or before == after


def table(
    name: str,
    takes: str,
    cases: Sequence[Case | tuple],
    want: Callable[..., Any],
    *,
    slips: Sequence[Slip] = (),
    answer: Callable[[Any, str], Any] = lambda value, call: expect_number(value, f"{call} to return a number"),
    rel: float = 1e-6,
) -> Callable[[Any], None]:
    """A checker that calls the learner's `name` on every case and compares with `want(*args)`, within `rel`;
    `answer(value, call)` turns what the learner returned into the form compared (`Wrong` for another kind)."""
    cases = [c if isinstance(c, Case) else Case(c) for c in cases]

    def check(fn: Any) -> None:
        expect_function(fn, name, takes)
        for n, case in enumerate(cases):
            args, kept = case.fresh(), case.fresh()
            call = f"{name}({case.label or ', '.join(show(a) for a in kept)})"
            got = answer(call_or_wrong(fn, args, call), call)
            if not unchanged(kept, args):
                raise Wrong(f"{call} changed its arguments: compute a new value and leave the inputs as they were")
            right = want(*kept)
            if same(got, right, rel):
                continue
            seen = [s for s in slips if _computes(s, kept, got, rel=rel) and not _computes(s, kept, right, rel=rel)]
            if seen:  # one case may match a mistake by chance: the others must agree
                wrong = [(kept, got, right), *_wrong_results(fn, cases[n + 1 :], want, answer, rel)]
                seen = [s for s in seen if all(_computes(s, a, g, r, rel=rel) for a, g, r in wrong)]
            detail, said = f": {seen[0].says}" if seen else "", (show(got), show(right))
            if said[0] == said[1]:  # equal in 6 digits: show every digit
                said = repr(got), repr(right)
            raise Wrong(f"{call} returned {said[0]}; expected {said[1]}{detail}")

    return check


def call_or_wrong(fn: Callable[..., Any], args: tuple, call: str) -> Any:
    """`fn(*args)`; the learner's own error becomes `Wrong`, said with the call that raised it (a check's passes)."""
    try:
        return fn(*args)
    except Exception as exc:
        raise exc if isinstance(exc, Wrong) else Wrong(f"{call} raised {describe_error(exc)}") from None


def _wrong_results(fn: Any, cases: Sequence[Case], want: Any, answer: Any, rel: float) -> list[tuple[tuple, Any, Any]]:
    """(arguments, what the learner returned, the right answer) of each of `cases` it gets wrong; a case on which
    it raises or returns another kind says nothing about which mistake it makes, and is left out."""
    found = []
    for case in cases:
        try:
            got = answer(call_or_wrong(fn, case.fresh(), "it"), "it")
        except Wrong:
            continue
        if not same(got, right := want(*(args := case.fresh())), rel):
            found.append((args, got, right))
    return found


def _computes(slip: Slip, args: tuple, *values: Any, rel: float) -> bool:
    """Whether one of `values` is what the mistake computes from `args` (computed once; False where it cannot be)."""
    try:
        return any(same(value, mistake, rel) for mistake in [slip.computes(*args)] for value in values)
    except (ArithmeticError, ValueError, TypeError):
        return False


def questions(chapter: str, texts: dict[str, str], checks: Sequence, each: dict | None = None, **common: Any) -> list:
    """Chapter `chapter`'s questions, numbered from 1: `texts` gives each variable's task, a newline, then its hint;
    `common` settings (context, time_limit, file) go to every question, `each[variable]`'s to that one."""
    return [
        Question(n, task, name, check, hint, chapter=chapter, **common | (each or {}).get(name, {}))
        for n, ((name, text), check) in enumerate(zip(texts.items(), checks, strict=True), 1)
        for task, hint in [text.split("\n")]
    ]
