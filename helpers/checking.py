"""Exercises a learner checks with `q1.check()`, `q1.hint()` and `q1.solution()`.

Modelled on Kaggle Learn: the learner defines a variable in the notebook, and `check()` looks it
up in the notebook's namespace (bound once with `load_exercises("01", globals())`). Whatever the
learner writes, `check()` answers with one short sentence, never a traceback: a missing
variable, a value of the wrong type and code that raises are all reported in plain words.

Each chapter's questions live in `helpers/exercises/chNN.py`. A question carries its solution
and a few typical wrong answers, and the test suite runs every one of them, so a checker that
accepts a wrong answer or rejects its own solution fails CI.
"""

from __future__ import annotations

import importlib
import textwrap
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any


class Wrong(Exception):
    """Raised by a checker to tell the learner, in one sentence, what is not right yet."""


#: A checker receives the learner's value and raises `Wrong` when it is not right.
Checker = Callable[[Any], None]


@dataclass(frozen=True)
class Outcome:
    """The result of checking: right or not, and the sentence shown to the learner."""

    correct: bool
    message: str


def expect_type(value: Any, kinds: type | tuple[type, ...], what: str) -> None:
    """Raise `Wrong` unless `value` is an instance of `kinds`; `what` names the expected kind for the learner."""
    if not isinstance(value, kinds):
        raise Wrong(f"expected {what}, but got a {type(value).__name__}: {value!r:.80}")


def expect_function(value: Any, name: str, takes: str = "") -> None:
    """Raise `Wrong` unless `value` is callable; `takes` describes its arguments, e.g. "(major, minor)"."""
    if not callable(value):
        shape = f"taking {takes}" if takes else f"(def {name}(...): ...)"
        raise Wrong(f"`{name}` should be a function {shape}, but it is a {type(value).__name__}")


def _describe_error(exc: BaseException) -> str:
    """One line naming an exception raised by the learner's code and where it came from."""
    frames = traceback.extract_tb(exc.__traceback__)
    where = ""
    if frames:
        last = frames[-1]
        if "<" in last.filename or "ipykernel" in last.filename:
            where = f" (line {last.lineno} of your code)"
    first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}{where}: {first_line}" if first_line else f"{type(exc).__name__}{where}"


@dataclass
class Question:
    """One exercise: what to define, how to check it, a hint, a solution and typical wrong answers."""

    number: int
    task: str
    variable: str
    checker: Checker
    hint_text: str
    solution_code: str
    #: Code snippets a learner might plausibly write; each must be rejected (tested in CI).
    wrong_answers: tuple[str, ...] = ()
    #: Names the notebook provides before this exercise (e.g. `torch`), for running solutions in tests.
    context: Callable[[], dict[str, Any]] = field(default=dict)
    _namespace: Mapping[str, Any] | None = field(default=None, repr=False)

    def bind(self, namespace: Mapping[str, Any]) -> Question:
        """Remember the namespace (the notebook's `globals()`) that `check()` reads from."""
        self._namespace = namespace
        return self

    def evaluate(self, namespace: Mapping[str, Any]) -> Outcome:
        """Check the learner's variable in `namespace`; never raises."""
        if self.variable not in namespace:
            return Outcome(
                False,
                f"I can't find a variable named `{self.variable}`. Define it in a cell above and run that cell, "
                "then check again.",
            )
        value = namespace[self.variable]
        if value is Ellipsis:
            return Outcome(False, f"`{self.variable}` is still `...`: replace the dots with your answer.")
        try:
            self.checker(value)
        except Wrong as wrong:
            return Outcome(False, f"Not yet: {wrong}")
        except Exception as exc:  # the learner's code raised while being checked
            return Outcome(False, f"Your `{self.variable}` raised {_describe_error(exc)}")
        return Outcome(True, f"Correct! Question {self.number} is done.")

    def check(self) -> None:
        """Check the learner's answer and print the verdict (tests call `evaluate` for the outcome)."""
        if self._namespace is None:
            outcome = Outcome(False, "This question is not bound to the notebook: run the exercises setup cell first.")
        else:
            outcome = self.evaluate(self._namespace)
        print(("✅ " if outcome.correct else "❌ ") + outcome.message)

    def hint(self) -> None:
        """Print a nudge in the right direction."""
        print(f"💡 Hint: {self.hint_text}")

    def solution(self) -> None:
        """Print one correct answer."""
        print("One solution:\n\n" + textwrap.indent(self.solution_code.strip(), "    "))

    def __repr__(self) -> str:
        return f"Question {self.number}: {self.task}\n(define `{self.variable}`, then run q{self.number}.check())"


def load_exercises(chapter: str, namespace: Mapping[str, Any]) -> SimpleNamespace:
    """Return chapter `chapter`'s questions as `q1`, `q2`, ... bound to the notebook's namespace.

    Use it as `ex = load_exercises("01", globals())`, then `ex.q1.check()`.
    """
    chapter = str(chapter).zfill(2)
    try:
        module = importlib.import_module(f"helpers.exercises.ch{chapter}")
    except ModuleNotFoundError:
        raise ValueError(f"there are no exercises for chapter {chapter!r}; chapters are named like '01'") from None
    questions: list[Question] = module.QUESTIONS
    return SimpleNamespace(**{f"q{q.number}": q.bind(namespace) for q in questions})
