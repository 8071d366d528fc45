"""Exercises a learner checks with `q1.check()`, `q1.hint()` and `q1.solution()`.

Modelled on Kaggle Learn: `check()` looks the learner's variable up in the notebook's namespace (bound
with `load_exercises("01", globals())`) and answers with one short sentence, never a traceback, leaving
the kernel usable: the learner's code runs with a time limit and its output captured (`learner_code`);
`exit()` and `KeyboardInterrupt` become verdicts; every form a careful learner could mean is accepted
(`answers`); and an error in a checker's own comparison is reported as a bug in the course.

A question whose answer another process must run names a `file`: the learner writes it with
`%%writefile {WORK}/name.py`, and `check()` imports it fresh from there, as the child processes do.
Questions live in `helpers/exercises/chNN.py`; their solutions in `helpers/exercises/solutions/chNN.py`,
which the handout edition leaves out."""

from __future__ import annotations

import importlib
import textwrap
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .answers import Wrong
from .learner_code import (
    DEFAULT_TIME_LIMIT,
    Attempt,
    Checker,
    answer_file_age,
    describe_error,
    find_answer_file,
    first_line,
    import_answer_file,
    run_checker,
)

_NO_LIMIT_NOTICE = (
    " (No time limit on this system: a function that never returns will block the kernel; "
    "interrupt it with the stop button.)"
)
#: Whether this process has already been told that checks run without a time limit.
_no_limit_told = False
#: What `solution()` says in the handout edition, which ships without the solutions package.
_NO_SOLUTION = (
    "This is the handout edition of the course: solutions are not included (your instructor has the "
    "teacher edition). The hint of question {number} gives a nudge, and its check() says what is not right yet."
)


class CouldNotCheck(Exception):
    """Raised by a checker when the check could not run (too busy to start processes, say): no fault of the answer."""


@dataclass(frozen=True)
class Outcome:
    """The result of checking: right or not, the sentence shown, and what the learner's code printed ("" if nothing)."""

    correct: bool
    message: str
    output: str = ""


def _from_the_course(value: Any) -> bool:
    """Whether `value` is one of the course's own functions (an earlier cell imported it), not the learner's."""
    module = getattr(value, "__module__", None) or ""
    return isinstance(value, types.FunctionType) and module.split(".")[0] == __package__


@dataclass
class Question:
    """One exercise: what to define, how to check it, a hint and a solution."""

    number: int
    task: str
    variable: str
    checker: Checker
    hint_text: str
    #: The solution, when written here (small examples and tests); else `chapter` says where it is.
    written_solution: str | None = None
    #: Names the notebook provides before this exercise (e.g. `torch`), for running solutions in tests.
    context: Callable[[], dict[str, Any]] = field(default=dict)
    time_limit: float = DEFAULT_TIME_LIMIT
    #: The chapter ("01") whose `helpers.exercises.solutions.chNN` module holds this question's solution.
    chapter: str = ""
    #: The file ("ddp_answer.py") the learner writes the answer into, when other processes must import it.
    file: str = ""
    _namespace: Mapping[str, Any] | None = field(default=None, repr=False)

    def bind(self, namespace: Mapping[str, Any]) -> Question:
        """Remember the namespace (the notebook's `globals()`) that `check()` reads from."""
        self._namespace = namespace
        return self

    def evaluate(self, namespace: Mapping[str, Any], time_limit: float | None = None) -> Outcome:
        """Check the learner's variable in `namespace`, their code limited to `time_limit` s (None: the question's)."""
        seconds = self.time_limit if time_limit is None else time_limit
        if self.file:
            path = find_answer_file(self.file)
            if path is None:
                return Outcome(
                    False,
                    f"I can't find the file `{self.file}`. Run the cell above that writes it "
                    f"(`%%writefile {{WORK}}/{self.file}`), then check again.",
                )
            attempt = run_checker(self.checker, lambda: import_answer_file(path, self.file, self.variable), seconds)
            is_function = True
            if attempt.error is not None or attempt.timed_out:
                attempt.checked = answer_file_age(path, self.file)
        else:
            if self.variable not in namespace:
                return Outcome(
                    False,
                    f"I can't find a variable named `{self.variable}`. Define it in a cell above and run that "
                    "cell, then check again.",
                )
            value = namespace[self.variable]
            if value is Ellipsis:
                return Outcome(False, f"`{self.variable}` is still `...`: replace the dots with your answer.")
            if _from_the_course(value):
                return Outcome(
                    False,
                    f"`{self.variable}` is the course's {value.__module__}.{value.__qualname__}, which an earlier "
                    "cell imported, not your function: define it (check the spelling of its name), run that cell, "
                    "then check again.",
                )
            attempt = run_checker(self.checker, lambda: value, seconds)
            is_function = callable(value)
        correct = attempt.error is None and not attempt.timed_out
        message = self._verdict(attempt, is_function, seconds) + attempt.checked + _no_limit_notice(attempt.limited)
        return Outcome(correct, message, attempt.output)

    def _verdict(self, attempt: Attempt, is_function: bool, seconds: float) -> str:
        """The sentence for the learner: right, what is not right, or what went wrong while checking."""
        name, exc = f"`{self.variable}`", attempt.error
        if attempt.timed_out:
            if is_function and (exc is None or attempt.calls.blame(exc)):
                return f"Your {name} did not return within {seconds:g} s: a loop that never ends, or work far too big?"
            return f"Checking your {name} did not finish within {seconds:g} s."
        if exc is None:
            return f"Correct! Question {self.number} is done."
        if isinstance(exc, Wrong):
            return f"Not yet: {exc}"
        if isinstance(exc, CouldNotCheck):
            return f"Could not check {name}: {exc}"
        if isinstance(exc, SystemExit):
            code = repr(exc.code) if isinstance(exc.code, int | str) else ("" if exc.code is None else "…")
            return (
                f"Your code called exit() or sys.exit({code}), which would end the program: "
                "give back the answer with `return` instead."
            )
        if isinstance(exc, KeyboardInterrupt):
            return f"Your code was interrupted (KeyboardInterrupt) before {name} could be checked."
        if attempt.calls.blame(exc):
            return f"Your {name} raised {describe_error(exc)}"
        return (
            f"The checker for question {self.number} could not compare your answer "
            f"({type(exc).__name__}: {first_line(exc)}). This is a bug in the course, not in your answer: "
            "please report it."
        )

    def check(self) -> None:
        """Check the learner's answer and print what their code printed, then the verdict."""
        if self._namespace is None:
            outcome = Outcome(False, "This question is not bound to the notebook: run the exercises setup cell first.")
        else:
            outcome = self.evaluate(self._namespace)
        if outcome.output:
            print("Your code printed:\n" + textwrap.indent(outcome.output.rstrip("\n"), "    "))
        print(("✅ " if outcome.correct else "❌ ") + outcome.message)

    def hint(self) -> None:
        """Print a nudge in the right direction."""
        print(f"💡 Hint: {self.hint_text}")

    @property
    def solution_code(self) -> str | None:
        """One correct answer, imported only when asked for; None in the handout edition, which ships no solutions."""
        if self.written_solution is not None or not self.chapter:
            return self.written_solution
        package = f"{__package__}.exercises.solutions"
        try:
            module = importlib.import_module(f"{package}.ch{self.chapter}")
        except ModuleNotFoundError as exc:
            if exc.name == package:  # the handout edition: no solutions package at all
                return None
            raise
        return module.SOLUTIONS[self.number]

    def solution(self) -> None:
        """Print one correct answer, or say that this edition has none; never raises."""
        try:
            code = self.solution_code
        except Exception as exc:  # a broken solutions module must not break the learner's notebook
            print(
                f"The solution to question {self.number} could not be loaded ({type(exc).__name__}: {exc}). "
                "This is a bug in the course: please report it."
            )
            return
        if code is None:
            print(_NO_SOLUTION.format(number=self.number))
            return
        where = f" (the file {self.file})" if self.file else ""
        print(f"One solution{where}:\n\n" + textwrap.indent(code.strip(), "    "))

    def __repr__(self) -> str:
        where = f" in the file {self.file}" if self.file else ""
        then = f"then run q{self.number}.check()"
        return f"Question {self.number}: {self.task}\n(define `{self.variable}`{where}, {then})"


def _no_limit_notice(limited: bool) -> str:
    """The notice that checks here run without a time limit, the first time only (then "")."""
    global _no_limit_told
    if limited or _no_limit_told:
        return ""
    _no_limit_told = True
    return _NO_LIMIT_NOTICE


def load_exercises(chapter: str, namespace: Mapping[str, Any]) -> types.SimpleNamespace:
    """Chapter `chapter`'s questions as `q1`, `q2`, ... bound to the notebook's namespace (`globals()`)."""
    chapter = str(chapter).zfill(2)
    try:
        module = importlib.import_module(f"helpers.exercises.ch{chapter}")
    except ModuleNotFoundError:
        raise ValueError(f"there are no exercises for chapter {chapter!r}; chapters are named like '01'") from None
    questions: list[Question] = module.QUESTIONS
    return types.SimpleNamespace(**{f"q{q.number}": q.bind(namespace) for q in questions})
