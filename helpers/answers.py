"""A learner's answer as a value: numbers in whatever form a careful learner gives them, the kind checked.

Checkers call `expect_type`, `expect_number`, `expect_pair` and `expect_function` on what the learner's code
returned, and raise `Wrong` with one sentence; every form a learner could mean is accepted (`normalise`)."""

from __future__ import annotations

import reprlib
import sys
from typing import Any

_short = reprlib.Repr()
_short.maxstring = _short.maxother = 60


class Wrong(Exception):
    """Raised by a checker to tell the learner, in one sentence, what is not right yet."""


def _plain_number(value: Any) -> Any:
    """Python's own number for a numpy scalar, a 0-d numpy array, a Fraction or a Decimal; else `value`.

    The modules are looked up in `sys.modules`, not imported: a value of theirs cannot exist unless they are."""
    numpy = sys.modules.get("numpy")
    if numpy is not None and (
        isinstance(value, numpy.generic) or (isinstance(value, numpy.ndarray) and value.ndim == 0)
    ):
        return value.item()
    fractions = sys.modules.get("fractions")
    if fractions is not None and isinstance(value, fractions.Fraction):
        return _whole_or_float(value, value.denominator == 1)
    decimal = sys.modules.get("decimal")
    if decimal is not None and isinstance(value, decimal.Decimal):
        return _whole_or_float(value, value.is_finite() and value == value.to_integral_value())
    return value


def _whole_or_float(value: Any, whole: bool) -> Any:
    """`int(value)` when it is whole, else `float(value)`; `value` itself when it is too large for a float."""
    try:
        return int(value) if whole else float(value)
    except OverflowError:
        return value


def normalise(value: Any, _depth: int = 0) -> Any:
    """`value` with numpy scalars, Fractions and Decimals made Python numbers, also inside lists, tuples and dicts.

    Checkers then compare with plain `isinstance` and `==`. Tensors are left alone (a list of 0-d tensors
    is another answer than a list of floats); containers are rebuilt only when something in them changed."""
    value = _plain_number(value)
    if _depth >= 4 or type(value) not in (list, tuple, dict):
        return value
    if type(value) is dict:
        items = {key: normalise(item, _depth + 1) for key, item in value.items()}
        return items if any(items[key] is not value[key] for key in value) else value
    items = [normalise(item, _depth + 1) for item in value]
    if all(new is old for new, old in zip(items, value, strict=True)):
        return value
    return items if type(value) is list else tuple(items)


def one_element_item(value: Any) -> Any:
    """The Python number in a tensor or array holding exactly one element (0-d or shape (1,)); else `value`."""
    if not (hasattr(value, "ndim") and hasattr(value, "item")) or value.ndim > 1:
        return value
    size = value.numel() if hasattr(value, "numel") else getattr(value, "size", 0)
    if size != 1:
        return value
    try:
        return _plain_number(value.item())
    except (RuntimeError, ValueError):  # a tensor on the meta device has no value to read
        return value


def expect_type(value: Any, kinds: type | tuple[type, ...], what: str) -> Any:
    """Return `value` if it is one of `kinds`, converted where the learner clearly meant that kind; else raise `Wrong`.

    Meant: a one-element tensor or array for a number, an int for a float, a tuple for a list and a list
    for a tuple; a bool is not a number. `what` names the expected kind for the learner."""
    kinds = kinds if isinstance(kinds, tuple) else (kinds,)  # `in kinds` below: that type, not a subclass
    value = normalise(value)
    wants_number = int in kinds or float in kinds
    if wants_number and not isinstance(value, kinds):
        value = one_element_item(value)
    if isinstance(value, bool) and wants_number and bool not in kinds:
        raise Wrong(f"expected {what}, but got a bool: {value!r}")
    if isinstance(value, kinds):
        return value
    if isinstance(value, int) and float in kinds:
        return float(value)
    if isinstance(value, tuple) and list in kinds:
        return list(value)
    if isinstance(value, list) and tuple in kinds:
        return tuple(value)
    raise Wrong(f"expected {what}, but got {with_article(type(value).__name__)}: {_short.repr(value)}")


def with_article(noun: str) -> str:
    """`noun` with its indefinite article: "an int", "a float" (by the first letter, as type names are read)."""
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"


def expect_number(value: Any, what: str = "a number") -> float:
    """Return `value` as a Python int or float, whatever form of number the learner gave; else raise `Wrong`.

    An int stays an int, so messages show what was given; one too large for a float is refused here,
    before a comparison would overflow."""
    number = expect_type(value, (int, float), what)
    try:
        float(number)
    except OverflowError:
        raise Wrong(f"expected {what}, but got a number with {len(str(abs(number)))} digits") from None
    return number


def as_number(value: Any) -> float | None:
    """The number `check()` would accept in `value` (a numpy scalar, a one-element tensor, …) as a float; else None.

    For the cells after a question that use the learner's answer, so that they take what `check()` took."""
    try:
        return float(expect_number(value))
    except Wrong:
        return None


def expect_pair(value: Any, call: str, first: str, second: str) -> tuple[float, float]:
    """The two numbers `call` returned, as (`first`, `second`); `Wrong` names what is off (kind, count, type)."""
    pair = expect_type(value, tuple, f"{call} to return ({first}, {second})")
    if len(pair) != 2:
        raise Wrong(f"{call} returned {len(pair)} values; return two: ({first}, {second})")
    return (
        expect_number(pair[0], f"{call}[0], the {first}, to be a number"),
        expect_number(pair[1], f"{call}[1], the {second}, to be a number"),
    )


def expect_function(value: Any, name: str, takes: str = "") -> None:
    """Raise `Wrong` unless `value` is callable; `takes` describes its arguments, e.g. "(major, minor)"."""
    if not callable(value):
        shape = f"taking {takes}" if takes else f"(def {name}(...): ...)"
        raise Wrong(f"`{name}` should be a function {shape}, but it is {with_article(type(value).__name__)}")
