"""Argument checks shared by the helpers, so every bad input gets the same kind of clear message."""

from __future__ import annotations

import math
from typing import Any


def whole_number(value: Any, name: str, *, minimum: int = 1) -> int:
    """Return `value` if it is an int (not a bool) of at least `minimum`; else raise saying what `name` needs."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be a whole number, not {value!r} ({type(value).__name__})")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, not {value}")
    return value


def positive_number(value: Any, name: str) -> float:
    """Return `value` as a float if it is a finite number above zero; else raise saying what `name` needs."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{name} must be a number, not {value!r} ({type(value).__name__})")
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a positive finite number, not {value!r}")
    return float(value)
