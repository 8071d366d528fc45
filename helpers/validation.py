"""Argument checks shared by the helpers, so every bad input gets the same kind of clear message.

`checks` runs them before a function's body, so that a function a chapter prints with
`show_source` keeps to its lesson: the learner reads one `@checks(...)` line instead of the
checks themselves, and bad input still gets the same clear error.
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

#: The most bytes one measurement allocates (per buffer): 4 GiB, more than any lesson needs, and a
#: bound that keeps a mistyped size from exhausting the machine's memory.
MAX_BYTES = 2**32
#: The most repeats of one measurement: beyond this a cell runs for minutes and says nothing new.
MAX_REPEATS = 1000
#: The longest time limit a helper accepts, in seconds (a day): longer is a mistake, and it
#: overflows the timers of some libraries.
MAX_SECONDS = 86_400.0


def whole_number(value: Any, name: str, *, minimum: int = 1, maximum: int | None = None) -> int:
    """Return `value` if it is an int (not a bool) from `minimum` to `maximum`; else raise saying what `name` needs.

    `maximum` bounds the work a helper takes on, so a huge size is refused at once instead of
    hanging the notebook or exhausting its memory.
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be a whole number, not {value!r} ({type(value).__name__})")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, not {value}")
    if maximum is not None and value > maximum:
        raise ValueError(
            f"{name} must be at most {maximum:,} here (more would take too long or too much memory), not {value:,}"
        )
    return value


def positive_number(value: Any, name: str, *, allow_zero: bool = False, maximum: float | None = None) -> float:
    """Return `value` as a float if it is a finite number above zero (or zero, with `allow_zero`) and at most `maximum`.

    NaN and infinities are refused too: they pass a plain `> 0` test and then poison every result.
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{name} must be a number, not {value!r} ({type(value).__name__})")
    if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        kind = "zero or a positive" if allow_zero else "a positive"
        raise ValueError(f"{name} must be {kind} finite number, not {value!r}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be at most {maximum:g} here (more would take too long), not {value!r}")
    return float(value)


def bounded(check: Callable[..., Any], **limits: Any) -> Callable[[Any, str], Any]:
    """`check` with keyword limits bound, for `@checks`: `chunks=bounded(whole_number, maximum=10_000)`."""

    def check_within(value: Any, name: str) -> Any:
        return check(value, name, **limits)

    check_within.__name__ = getattr(check, "__name__", "check")
    return check_within


def flag(value: Any, name: str) -> bool:
    """Return `value` if it is True or False; else raise (a string such as "no" would count as true)."""
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, not {value!r} ({type(value).__name__})")
    return value


def instance_of(*kinds: type, what: str = "") -> Callable[[Any, str], None]:
    """An argument check that accepts only instances of `kinds`, and says what to pass (`what`, else the type names)."""
    wanted = what or " or ".join(k.__name__ for k in kinds)

    def check_instance(value: Any, name: str) -> None:
        if isinstance(value, bool) and bool not in kinds or not isinstance(value, kinds):
            raise TypeError(f"{name} must be {wanted}, not {value!r} ({type(value).__name__})")

    return check_instance


def a_function(value: Any, name: str) -> Any:
    """Return `value` if it can be called; else raise saying that `name` must be a function."""
    if not callable(value):
        raise TypeError(f"{name} must be a function (something callable), not {value!r} ({type(value).__name__})")
    return value


def text(value: Any, name: str) -> str:
    """Return `value` if it is a string; else raise saying that `name` must be text."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, not {value!r} ({type(value).__name__})")
    return value


from .devices import DEVICE_FORMS, DeviceError, a_device, usable_device  # noqa: E402, F401  (moving out)


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


#: The most items a plotting helper draws from one sequence: more makes a figure too big to draw or read.
MAX_ITEMS = 10_000


def sequence_of(
    item: Callable[[Any, str], object], *, allow_empty: bool = False, most: int = MAX_ITEMS, empty: str = ""
) -> Callable[[Any, str], None]:
    """An argument check for a list or tuple (not a string) of at most `most` items, each passing `item`.

    An item's error names it by position (`results[2].seconds must be ...`), so the learner finds
    the bad entry; an empty sequence is refused unless `allow_empty`, with the message `empty` if
    given (one that names the argument and says what to run first).
    """

    def check_sequence(value: Any, name: str) -> None:
        if isinstance(value, str | bytes) or not isinstance(value, Sequence):
            raise TypeError(f"{name} must be a list or tuple, not {value!r:.80} ({type(value).__name__})")
        if not value and not allow_empty:
            raise ValueError(empty or f"{name} is empty: give at least one item")
        if len(value) > most:
            raise ValueError(f"{name} has {len(value):,} items; at most {most:,} can be drawn here")
        for i, each in enumerate(value):
            item(each, f"{name}[{i}]")

    return check_sequence


def mapping_of(
    item: Callable[[Any, str], object], *, allow_empty: bool = False, most: int = MAX_ITEMS
) -> Callable[[Any, str], None]:
    """An argument check for a dict from names (strings) to values each passing `item`."""

    def check_mapping(value: Any, name: str) -> None:
        if not isinstance(value, Mapping):
            raise TypeError(f"{name} must be a dict, not {value!r:.80} ({type(value).__name__})")
        if not value and not allow_empty:
            raise ValueError(f"{name} is empty: give at least one entry")
        if len(value) > most:
            raise ValueError(f"{name} has {len(value):,} entries; at most {most:,} can be drawn here")
        for key, each in value.items():
            text(key, f"every key of {name}")
            item(each, f"{name}[{key!r}]")

    return check_mapping


def with_keys(wanted: Mapping[str, Callable[[Any, str], object]]) -> Callable[[Any, str], None]:
    """An argument check for a dict that has every key of `wanted`, each value passing its check."""

    def check_keys(value: Any, name: str) -> None:
        if not isinstance(value, Mapping):
            raise TypeError(f"{name} must be a dict with keys {', '.join(wanted)}, not {value!r:.80}")
        for key, check in wanted.items():
            if key not in value:
                raise ValueError(f"{name} has no key {key!r}; it needs {', '.join(map(repr, wanted))}")
            check(value[key], f"{name}[{key!r}]")

    return check_keys


def with_fields(kind: type, **wanted: Callable[[Any, str], object]) -> Callable[[Any, str], None]:
    """An argument check for an instance of `kind` whose fields each pass their check (a record's NaN is refused)."""
    is_kind = instance_of(kind)

    def check_fields(value: Any, name: str) -> None:
        is_kind(value, name)
        for field, check in wanted.items():
            check(getattr(value, field), f"{name}.{field}")

    return check_fields


def same_lengths(*names: str) -> Callable[..., None]:
    """A whole-call check for `checks(...)`: the sequences `names` have as many items each."""

    def check_same_lengths(**arguments: Any) -> None:
        lengths = [len(arguments[n]) for n in names]
        if len(set(lengths)) > 1:
            given = ", ".join(f"{n} has {k}" for n, k in zip(names, lengths, strict=True))
            raise ValueError(f"{' and '.join(names)} must have the same length ({given})")

    return check_same_lengths
