"""`checks`: argument checks that run before a function's body, which then shows only its lesson."""

from __future__ import annotations

import inspect

import pytest

from helpers.validation import checks, one_of, optional, positive_number, whole_number


def pieces_fit(total: int, pieces: int) -> None:
    if total % pieces:
        raise ValueError(f"{total} does not split into {pieces} pieces")


@checks(pieces_fit, total=whole_number, pieces=whole_number, mode=one_of("a", "b"), scale=optional(positive_number))
def split(total: int, pieces: int = 2, *, mode: str = "a", scale: float | None = None) -> list[int]:
    """Cut `total` into equal pieces."""
    return [total // pieces] * pieces


def test_good_arguments_reach_the_body_unchanged() -> None:
    assert split(6) == [3, 3]
    assert split(6, 3, mode="b", scale=2) == [2, 2, 2]
    assert split.__name__ == "split" and split.__doc__ == "Cut `total` into equal pieces."
    assert list(inspect.signature(split).parameters) == ["total", "pieces", "mode", "scale"]


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "words"),
    [
        ((6.0,), {}, TypeError, "total must be a whole number"),
        ((6, 0), {}, ValueError, "pieces must be at least 1"),
        ((7,), {}, ValueError, "7 does not split into 2 pieces"),
        ((6,), {"mode": "c"}, ValueError, "mode must be one of a, b, not 'c'"),
        ((6,), {"scale": -1}, ValueError, "scale must be a positive finite number"),
        ((), {}, TypeError, "missing a required argument: 'total'"),
    ],
)
def test_bad_arguments_get_the_checks_messages(args: tuple, kwargs: dict, error: type, words: str) -> None:
    with pytest.raises(error, match=words):
        split(*args, **kwargs)


def test_the_source_is_the_function_with_its_decorator_line() -> None:
    source = inspect.getsource(split)
    assert source.startswith("@checks(pieces_fit, total=whole_number")
    assert "return [total // pieces] * pieces" in source


def test_a_check_for_an_argument_that_does_not_exist_is_refused_at_once() -> None:
    with pytest.raises(TypeError, match="no argument size"):
        checks(size=whole_number)(split.__wrapped__)
    with pytest.raises(TypeError, match="no argument pieces for pieces_fit"):
        checks(pieces_fit)(lambda total: total)
