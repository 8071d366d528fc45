"""Argument checks shared by the helpers, so every bad input gets the same kind of clear message.

`checks` runs them before a function's body, so that a function a chapter prints with
`show_source` keeps to its lesson: the learner reads one `@checks(...)` line instead of the
checks themselves, and bad input still gets the same clear error.
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


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


def optional(check: Callable[[Any, str], object]) -> Callable[[Any, str], None]:
    """An argument check that lets None through and applies `check` to anything else."""

    def check_unless_none(value: Any, name: str) -> None:
        if value is not None:
            check(value, name)

    return check_unless_none


def one_of(*choices: Any) -> Callable[[Any, str], None]:
    """An argument check that accepts only `choices`, and names them when it refuses."""

    def check_choice(value: Any, name: str) -> None:
        if value not in choices:
            raise ValueError(f"{name} must be one of {', '.join(map(str, choices))}, not {value!r}")

    return check_choice


def checks(*whole_call: Callable[..., object], **per_argument: Callable[[Any, str], object]) -> Callable[[F], F]:
    """Decorate a function so that its arguments are checked before its body runs.

    `name=check` calls `check(value, "name")`, the form of `whole_number` and `positive_number`.
    Then each positional check is called with the arguments it names (all of them if it takes
    `**kwargs`), defaults filled in, for checks that look at several arguments together. A check
    raises on bad input; what it returns is ignored, so the body gets its arguments as they were
    passed. `inspect.getsource` of the decorated function (so `show_source`) gives the original
    source, this decorator's line included.
    """

    def decorate(fn: F) -> F:
        signature = inspect.signature(fn)
        unknown = sorted(set(per_argument) - set(signature.parameters))
        if unknown:
            raise TypeError(f"{fn.__qualname__} has no argument {', '.join(unknown)} to check")
        wanted: list[list[str] | None] = []
        for check in whole_call:
            params = inspect.signature(check).parameters.values()
            if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
                wanted.append(None)
                continue
            names = [p.name for p in params]
            missing = [n for n in names if n not in signature.parameters]
            if missing:
                raise TypeError(f"{fn.__qualname__} has no argument {', '.join(missing)} for {check.__name__}")
            wanted.append(names)

        @functools.wraps(fn)
        def checked(*args: Any, **kwargs: Any) -> Any:
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            arguments = bound.arguments
            for name, check in per_argument.items():
                check(arguments[name], name)
            for check, names in zip(whole_call, wanted, strict=True):
                check(**(arguments if names is None else {n: arguments[n] for n in names}))
            return fn(*args, **kwargs)

        return checked  # type: ignore[return-value]

    return decorate
