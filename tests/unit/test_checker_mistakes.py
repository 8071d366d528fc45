"""Every question of every chapter survives generic mistakes and accepts every valid form of its solution.

The questions are discovered from `helpers.exercises`, so a new chapter's are covered without
listing them. For each question whose solution is a function, functions that hang, exit, get
interrupted, raise (their own exception class too), return None, a number, a generator or a
tensor of the wrong shape, or print forever must each get a verdict (not correct, a message, no
traceback, no escaping exception, within the time limit); for every question, a missing variable,
`...`, None, a string, numbers, `object()`, lambdas of the wrong arity, a generator and a list of
None must too. And every alternative form a
careful learner could write for the solution (np.float64, a Fraction, a 0-d tensor, a Decimal, a
tuple for a list, ...) must be accepted. A checker-bug verdict for any of these fails the test.

A watchdog thread interrupts the main thread if a check runs far past its limit, so a broken
time limit is counted as a hang instead of hanging the test run.
"""

from __future__ import annotations

import _thread
import functools
import importlib
import pkgutil
import threading
import time
from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
import torch

import helpers.exercises
from helpers import answers, checking, learner_code
from helpers.checking import Outcome, Question
from tests.wrong_answers import wrong_answers

from .answers import evaluate, run_in_notebook

MODULES = sorted(m.name for m in pkgutil.iter_modules(helpers.exercises.__path__) if m.name.startswith("ch"))
QUESTIONS: list[tuple[str, Question]] = [
    (name, q) for name in MODULES for q in importlib.import_module(f"helpers.exercises.{name}").QUESTIONS
]
IDS = [f"{name}-q{q.number}" for name, q in QUESTIONS]

#: The time limit for faulty answers that never return; the others get `QUICK_LIMIT`.
HANG_LIMIT = 0.5
QUICK_LIMIT = 5.0
#: Seconds past its limit after which a check counts as a hang (and the watchdog interrupts it).
HANG_GRACE = 4.0

#: The phrase of the checker-bug verdict: it must never appear for an answer these tests feed.
CHECKER_BUG = "bug in the course"

#: Faulty functions: (body, whether it never returns, a phrase its verdict must contain or "").
FAULTY_FUNCTIONS: dict[str, tuple[str, bool, str]] = {
    "loops forever": ("while True:\n        pass", True, "did not return within"),
    "calls sys.exit(3)": ("sys.exit(3)", False, "sys.exit(3)"),
    "calls exit()": ("exit()", False, "exit()"),
    "raises KeyboardInterrupt": ("raise KeyboardInterrupt", False, "interrupted"),
    "raises ValueError": ('raise ValueError("a mistake of mine")', False, ""),
    "returns None": ("return None", False, ""),
    "returns a number": ("return 12345", False, ""),
    "returns a generator": ("yield None", False, ""),
    "returns a tensor of the wrong shape": ("import torch\n    return torch.ones(7, 5)", False, ""),
    "raises its own exception class": (
        "class MyError(Exception):\n        pass\n    raise MyError('mine')",
        False,
        "MyError",
    ),
    "prints 10 MB, then loops forever": (
        'for _ in range(10_000):\n        print("x" * 1_000)\n    while True:\n        pass',
        True,
        "did not return within",
    ),
}


def _junk_values() -> dict[str, Any]:
    """Values that are wrong for every question besides missing and `...`, made fresh for each question.

    Not the kind asked for, a function that cannot be called as the task says (wrong arity), or a
    generator instead of a function.
    """
    return {
        "None": None,
        "a string": "some text",
        "a number": 12345,
        "a negative float": -1.5,
        "object()": object(),
        "...": ...,
        "a lambda taking no arguments": lambda: None,
        "a lambda taking seven arguments": lambda a, b, c, d, e, f, g: None,
        "a generator": (i for i in range(3)),
        "a list of None": [None, None],
    }


def _solution_value(question: Question) -> Any:
    """The value the question's solution code gives its variable, run as the notebook would.

    The chapter's module of wrong answers is imported first: it writes the files a checker imports (chapter 15's
    gpt.py and ladder.py), as the notebook's cells do, so this file's tests pass run alone too.
    """
    wrong_answers(question)
    return run_in_notebook(question, question.solution_code)[question.variable]


def _faulty_code(question: Question, body: str) -> str:
    """A learner's function named like the question's variable, taking any arguments, with `body`."""
    return f"import sys\n\ndef {question.variable}(*args, **kwargs):\n    {body}\n"


def _faulty_function(code: str, variable: str) -> Callable[..., Any]:
    """The function `code` defines, compiled as a notebook cell's is."""
    namespace: dict[str, Any] = {}
    exec(compile(code, f"<{variable}>", "exec"), namespace)
    return namespace[variable]


def _timed_evaluate(question: Question, answer: dict | str, limit: float) -> tuple[Outcome | None, str, float]:
    """Evaluate with a watchdog; return the outcome (None if an exception escaped), that exception, seconds.

    `answer` is the notebook's namespace, or for a question with a file the code written to it.
    """
    watchdog = threading.Timer(limit + HANG_GRACE, _thread.interrupt_main)
    started = time.monotonic()
    watchdog.start()
    try:
        if isinstance(answer, str):
            return evaluate(question, answer, time_limit=limit), "", time.monotonic() - started
        return question.evaluate(answer, time_limit=limit), "", time.monotonic() - started
    except BaseException as exc:  # noqa: BLE001 - counting what escapes is the point
        return None, f"{type(exc).__name__}: {exc}", time.monotonic() - started
    finally:
        watchdog.cancel()


def _problems(what: str, outcome: Outcome | None, escaped: str, seconds: float, limit: float, must_say: str) -> dict:
    """The problems of one faulty answer's verdict, by kind: hang, escaped, or a verdict that is not right."""
    problems: dict[str, list[str]] = {"hangs": [], "escaped": [], "bad verdicts": []}
    if seconds > limit + HANG_GRACE:
        problems["hangs"].append(f"{what}: {seconds:.1f} s")
    if outcome is None:
        problems["escaped"].append(f"{what}: {escaped}")
        return problems
    message = outcome.message
    if outcome.correct or not message.strip() or "Traceback" in message or CHECKER_BUG in message:
        problems["bad verdicts"].append(f"{what}: {outcome}")
    elif must_say and must_say not in message:
        problems["bad verdicts"].append(f"{what}: expected {must_say!r} in {message!r}")
    return problems


def _seconds_before_the_answer_runs(question: Question) -> float:
    """How long the checker works before it first calls a function answer (chapter 15's builds and runs a model).

    A faulty answer that never returns gets `HANG_LIMIT` on top of four times this, measured now with an answer
    that raises at once: its limit must not run out in the checker's own work, before the answer prints anything.
    """
    if question.file:  # its answer runs in other processes: the checks' own limits apply (test_exercises.py)
        return 0.0
    answer = {
        question.variable: _faulty_function(_faulty_code(question, 'raise ValueError("at once")'), question.variable)
    }
    return _timed_evaluate(question, answer, QUICK_LIMIT)[2]


def _output_is_capped(output: str) -> bool:
    return len(output) <= learner_code.OUTPUT_LIMIT + 40 and output.endswith("more characters)")


def _merge(into: dict, more: dict) -> None:
    for kind, items in more.items():
        into.setdefault(kind, []).extend(items)


def _report(label: str, problems: dict) -> str:
    counts = ", ".join(f"{kind}: {len(items)}" for kind, items in problems.items())
    print(f"{label}: {counts}")
    return f"{label}: {counts}\n" + "\n".join(item for items in problems.values() for item in items)


@pytest.mark.parametrize(("chapter", "question"), QUESTIONS, ids=IDS)
def test_generic_mistakes_get_a_verdict(chapter: str, question: Question) -> None:
    """Faulty functions (for function questions) and junk values (for all) each get a prompt, plain verdict."""
    if not learner_code._time_limit_possible():
        pytest.skip("no SIGALRM here: a function that never returns cannot be stopped")
    problems: dict[str, list[str]] = {"hangs": [], "escaped": [], "bad verdicts": []}
    cases: list[tuple[str, dict | str, float, str]] = [("missing", {}, QUICK_LIMIT, "can't find")]
    if not question.file:  # a file question's wrong files: test_exercises.py
        cases += [(name, {question.variable: v}, QUICK_LIMIT, "") for name, v in _junk_values().items()]
    if callable(_solution_value(question)):
        hang_limit = HANG_LIMIT + 4 * _seconds_before_the_answer_runs(question)
        for name, (body, hangs, must_say) in FAULTY_FUNCTIONS.items():
            limit = hang_limit if hangs else QUICK_LIMIT
            code = _faulty_code(question, body)
            answer = code if question.file else {question.variable: _faulty_function(code, question.variable)}
            cases.append((name, answer, limit, must_say))
    for name, namespace, limit, must_say in cases:
        outcome, escaped, seconds = _timed_evaluate(question, namespace, limit)
        for _ in range(3 * (limit != QUICK_LIMIT)):  # a hanging answer's limit, run out before the answer was called
            if outcome is None or not outcome.message.startswith("Checking your"):  # (a busy machine): twice as long
                break
            limit *= 2
            outcome, escaped, seconds = _timed_evaluate(question, namespace, limit)
        _merge(problems, _problems(name, outcome, escaped, seconds, limit, must_say))
        if outcome is not None and name.startswith("prints") and not _output_is_capped(outcome.output):
            problems["bad verdicts"].append(f"{name}: the output shown is not capped ({len(outcome.output):,} chars)")
    report = _report(f"{chapter} q{question.number}, {len(cases)} mistakes", problems)
    assert not any(problems.values()), report


# -- Valid alternative forms -----------------------------------------------------------------------


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _as_numpy(v: Any) -> Any:
    if isinstance(v, bool):
        return np.bool_(v)
    if isinstance(v, int):
        return np.int64(v)
    if isinstance(v, float):
        return np.float64(v)
    if type(v) in (list, tuple) and v and all(_is_number(x) for x in v):
        return type(v)(_as_numpy(x) for x in v)
    return v


def _as_tensor(v: Any) -> Any:
    return torch.tensor(v) if _is_number(v) else v


def _as_fraction(v: Any) -> Any:
    if isinstance(v, bool) or not _is_number(v):
        return v
    fraction = Fraction(v).limit_denominator(10**6)
    return fraction if float(fraction) == v else v  # only when a small fraction is exactly the value


def _as_decimal(v: Any) -> Any:
    return Decimal(repr(v)) if _is_number(v) else v


def _as_int(v: Any) -> Any:
    return int(v) if isinstance(v, float) and v.is_integer() else v


def _as_other_sequence(v: Any) -> Any:
    if type(v) is list:
        return tuple(v)
    if type(v) is tuple:
        return list(v)
    return v


#: Forms a careful learner could mean: each turns a value into another form of it (or returns it unchanged).
FORMS: dict[str, Callable[[Any], Any]] = {
    "numpy": _as_numpy,
    "0-d tensor": _as_tensor,
    "Fraction": _as_fraction,
    "Decimal": _as_decimal,
    "int for a whole float": _as_int,
    "tuple for list, list for tuple": _as_other_sequence,
}


def _converting(fn: Callable[..., Any], form: Callable[[Any], Any], used: list[bool]) -> Callable[..., Any]:
    """`fn` with its return value turned into `form`; `used` records whether the form changed any result."""

    @functools.wraps(fn)
    def converted(*args: Any, **kwargs: Any) -> Any:
        result = fn(*args, **kwargs)
        new = form(result)
        used.append(new is not result)
        return new

    return converted


@pytest.mark.parametrize(("chapter", "question"), QUESTIONS, ids=IDS)
def test_valid_forms_of_the_solution_are_accepted(chapter: str, question: Question) -> None:
    """Each form of the solution's value (or of a solution function's results) is accepted."""
    if question.file:
        pytest.skip("the answer runs in other processes as its file is written: no form can be wrapped around it")
    solution = _solution_value(question)
    tried, rejected = [], []
    for name, form in FORMS.items():
        used: list[bool] = []
        if callable(solution):
            answer = _converting(solution, form, used)
        else:
            answer = form(solution)
            used.append(answer is not solution)
        outcome = question.evaluate({question.variable: answer})
        if not any(used):
            continue  # the form does not apply to this solution's values
        tried.append(name)
        if not outcome.correct:
            rejected.append(f"{name}: {outcome.message}")
    report = _report(f"{chapter} q{question.number}, {len(tried)} valid forms", {"rejected": rejected})
    assert not rejected, report


def test_the_forms_apply_to_numbers_and_sequences() -> None:
    """The converter makes the forms the checkers must accept (so the test above is not vacuous)."""
    made = {name: form(0.125) for name, form in FORMS.items()}
    assert type(made["numpy"]) is np.float64 and made["Fraction"] == Fraction(1, 8)
    assert isinstance(made["0-d tensor"], torch.Tensor) and made["0-d tensor"].dim() == 0
    assert made["Decimal"] == Decimal("0.125") and made["int for a whole float"] == 0.125
    assert type(_as_numpy(3)) is np.int64 and _as_fraction(3) == Fraction(3) and _as_int(4.0) == 4
    assert _as_other_sequence([1, 2]) == (1, 2) and _as_other_sequence((1, 2)) == [1, 2]
    assert type(_as_numpy([1, 2.5])[1]) is np.float64
    assert _as_fraction(2 / 12) == Fraction(1, 6) and type(_as_fraction(0.1 + 0.2)) is float


def test_a_value_of_the_wrong_type_is_named_with_the_right_article() -> None:
    for value, named in ((5, "an int"), (object(), "an object"), ([1], "a list"), (None, "a NoneType")):
        with pytest.raises(checking.Wrong, match=f"expected a string, but got {named}: "):
            answers.expect_type(value, str, "a string")
