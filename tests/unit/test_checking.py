"""helpers.checking: friendly verdicts whatever the learner wrote, and the hint/solution printing."""

from __future__ import annotations

import pytest

from helpers.checking import Question, Wrong, expect_type, load_exercises


def _positive(value: object) -> None:
    expect_type(value, int, "a whole number")
    if value <= 0:  # type: ignore[operator]
        raise Wrong("it should be positive")


def _calls_it(fn: object) -> None:
    fn()  # type: ignore[operator]


Q = Question(1, "a positive number", "n", _positive, "think of 1", "n = 1", ("n = -1", "n = 0"))


def test_right_and_wrong_answers() -> None:
    assert Q.evaluate({"n": 3}).correct
    outcome = Q.evaluate({"n": -2})
    assert not outcome.correct and outcome.message == "Not yet: it should be positive"
    assert "expected a whole number, but got a str" in Q.evaluate({"n": "3"}).message


def test_missing_and_placeholder_answers() -> None:
    assert "can't find a variable named `n`" in Q.evaluate({}).message
    assert "still `...`" in Q.evaluate({"n": ...}).message


def test_learner_code_that_raises_is_reported_in_one_line() -> None:
    q = Question(2, "a function", "f", _calls_it, "", "")

    def broken() -> None:
        raise KeyError("boom")

    message = q.evaluate({"f": broken}).message
    assert message.startswith("Your `f` raised KeyError") and "boom" in message
    assert "\n" not in message


def test_check_prints_and_needs_binding(capsys: pytest.CaptureFixture[str]) -> None:
    q = Question(3, "a positive number", "n", _positive, "hint text", "n = 1")
    q.check()
    assert "not bound" in capsys.readouterr().out
    q.bind({"n": 5}).check()
    assert capsys.readouterr().out.startswith("✅ Correct")
    q.hint()
    q.solution()
    out = capsys.readouterr().out
    assert "hint text" in out and "    n = 1" in out
    assert "q3.check()" in repr(q)


def test_load_exercises_accepts_numbers_and_strings() -> None:
    assert hasattr(load_exercises(1, {}), "q1")
    assert hasattr(load_exercises("00", {}), "q2")


def test_expect_function_names_what_it_wanted() -> None:
    from helpers.checking import expect_function

    expect_function(len, "f")
    with pytest.raises(Wrong, match=r"`f` should be a function taking \(a, b\), but it is a int"):
        expect_function(3, "f", "(a, b)")
    with pytest.raises(Wrong, match=r"\(def g\(\.\.\.\): \.\.\.\)"):
        expect_function("x", "g")
