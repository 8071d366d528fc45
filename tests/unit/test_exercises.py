"""Every exercise checker accepts its solution and rejects typical wrong answers, in every chapter."""

from __future__ import annotations

import importlib
import pkgutil
import re

import pytest

import helpers.exercises
from helpers.checking import Question, load_exercises
from tests.wrong_answers import right_answers, wrong_answers

from .answers import evaluate

MODULES = sorted(m.name for m in pkgutil.iter_modules(helpers.exercises.__path__) if m.name.startswith("ch"))
QUESTIONS: list[tuple[str, Question]] = [
    (name, q) for name in MODULES for q in importlib.import_module(f"helpers.exercises.{name}").QUESTIONS
]
IDS = [f"{name}-q{q.number}" for name, q in QUESTIONS]

#: The phrase of the checker-bug verdict: a learner's wrong answer or junk must never get it.
CHECKER_BUG = "bug in the course"


def test_every_chapter_module_has_questions() -> None:
    assert MODULES, "no exercise modules found"
    for name in MODULES:
        questions = importlib.import_module(f"helpers.exercises.{name}").QUESTIONS
        assert len(questions) >= 2, f"{name} needs at least two exercises"
        assert [q.number for q in questions] == list(range(1, len(questions) + 1)), f"{name}: number q1, q2, ..."


def test_solutions_live_in_the_solutions_package_and_wrong_answers_in_the_tests() -> None:
    """The handout edition leaves the solutions package out; the wrong answers are test data, shipped in no edition."""
    for name in MODULES:
        numbers = [q.number for q in importlib.import_module(f"helpers.exercises.{name}").QUESTIONS]
        solutions = importlib.import_module(f"helpers.exercises.solutions.{name}")
        assert sorted(solutions.SOLUTIONS) == numbers, name
        assert [n for n in vars(solutions) if not n.startswith("_")] == ["SOLUTIONS"], f"{name}: solutions only"
        assert sorted(importlib.import_module(f"tests.wrong_answers.{name}").WRONG_ANSWERS) == numbers, name
    for name, question in QUESTIONS:
        assert question.written_solution is None and question.chapter == name.removeprefix("ch"), (
            f"{name} q{question.number}: put its solution in helpers/exercises/solutions/{name}.py and name its chapter"
        )


@pytest.mark.parametrize(("chapter", "question"), QUESTIONS, ids=IDS)
def test_solution_is_accepted(chapter: str, question: Question) -> None:
    outcome = evaluate(question, question.solution_code)
    assert outcome.correct, f"{chapter} q{question.number} rejects its own solution: {outcome.message}"


@pytest.mark.parametrize(("chapter", "question"), QUESTIONS, ids=IDS)
def test_typical_wrong_answers_are_rejected_and_told_their_mistake(chapter: str, question: Question) -> None:
    """Each wrong answer is rejected, and its verdict contains the words stated beside it in tests/wrong_answers/."""
    pairs = wrong_answers(question)
    assert len(pairs) >= 2, f"{chapter} q{question.number} needs at least two wrong answers"
    assert all(said for _, said in pairs), f"{chapter} q{question.number}: state what each wrong answer is told"
    for code, said in pairs:
        outcome = evaluate(question, code)
        assert not outcome.correct, f"{chapter} q{question.number} accepted a wrong answer:\n{code}"
        assert outcome.message and "Traceback" not in outcome.message
        assert CHECKER_BUG not in outcome.message, f"{chapter} q{question.number}: {outcome.message}\n{code}"
        assert said in outcome.message, f"expected {said!r} in the verdict:\n{outcome.message}\nfor:\n{code}"


@pytest.mark.parametrize(("chapter", "question"), QUESTIONS, ids=IDS)
def test_missing_and_mistyped_answers_get_friendly_messages(chapter: str, question: Question) -> None:
    if question.file:
        _file_is_missing_or_wrong(question)
        return
    missing = question.evaluate({})
    assert not missing.correct and f"`{question.variable}`" in missing.message
    placeholder = question.evaluate({question.variable: ...})
    assert not placeholder.correct and "..." in placeholder.message
    for junk in (None, "some text", 12345, object()):
        outcome = question.evaluate({question.variable: junk})
        assert not outcome.correct, f"{chapter} q{question.number} accepted {junk!r}"
        assert outcome.message.strip() and "Traceback" not in outcome.message
        assert CHECKER_BUG not in outcome.message, f"{chapter} q{question.number} on {junk!r}: {outcome.message}"


#: Files a learner might write instead of the function a file question asks for: each needs a plain verdict.
WRONG_FILES = (
    "{variable} = ...",
    "{variable} = None",
    "{variable} = 'some text'",
    "{variable} = 12345",
    "{variable} = object()",
    "{variable} = print",
    "x = 1  # no function at all",
    "def {variable}(:\n    pass",
    "import torch\n\nraise ValueError('while importing')",
    "import a_module_that_does_not_exist",
)


def _file_is_missing_or_wrong(question: Question) -> None:
    missing = question.evaluate({})
    assert not missing.correct and f"`{question.file}`" in missing.message
    for code in WRONG_FILES:
        outcome = evaluate(question, code.format(variable=question.variable))
        assert not outcome.correct, f"{question.file} accepted {code!r}"
        assert outcome.message.strip() and "Traceback" not in outcome.message
        assert CHECKER_BUG not in outcome.message, f"{question.file} with {code!r}: {outcome.message}"
    placeholder = evaluate(question, f"{question.variable} = ...")
    assert "..." in placeholder.message
    broken = evaluate(question, f"def {question.variable}(:\n    pass")
    assert "not valid Python" in broken.message and "line 1" in broken.message, broken.message
    raises = evaluate(question, "import torch\n\nraise ValueError('while importing')")
    assert "ValueError at line 3" in raises.message and "while importing" in raises.message, raises.message
    assert re.search(rf"\(Checked `{question.file}` as written \d+ s ago", raises.message), "which file, how old"


ALTERNATIVE_CASES = [
    pytest.param(name, q, code, id=f"{name}-q{q.number}-alt{i}")
    for name, q in QUESTIONS
    for i, code in enumerate(right_answers(q))
]


def test_right_answers_name_real_questions() -> None:
    for name in MODULES:
        numbers = [q.number for q in importlib.import_module(f"helpers.exercises.{name}").QUESTIONS]
        assert set(getattr(importlib.import_module(f"tests.wrong_answers.{name}"), "RIGHT_ANSWERS", {})) <= set(numbers)


@pytest.mark.parametrize(("chapter", "question", "code"), ALTERNATIVE_CASES)
def test_alternative_right_answers_are_accepted(chapter: str, question: Question, code: str) -> None:
    outcome = evaluate(question, code)
    assert outcome.correct, f"{chapter} q{question.number} rejects a right answer:\n{code}\n{outcome.message}"


def test_load_exercises_binds_to_the_namespace(capsys: pytest.CaptureFixture[str]) -> None:
    namespace: dict = {}
    ex = load_exercises("01", namespace)
    ex.q1.check()
    assert "can't find" in capsys.readouterr().out
    ex.q1.hint()
    ex.q1.solution()
    printed = capsys.readouterr().out
    assert "Hint" in printed and "solution" in printed


def test_a_course_function_left_under_the_answers_name_is_not_graded_as_the_learners() -> None:
    """A learner who misspells their function's name leaves the course's function an earlier cell imported."""
    from helpers import sharding
    from helpers.exercises import ch12

    outcome = ch12.QUESTIONS[0].evaluate({"ranks_needed": sharding.bytes_per_rank})
    assert not outcome.correct and "the course's helpers.sharding.bytes_per_rank" in outcome.message, outcome
    assert "check the spelling of its name" in outcome.message


def test_load_exercises_names_a_missing_chapter() -> None:
    with pytest.raises(ValueError, match="no exercises for chapter '99'"):
        load_exercises("99", {})


def test_a_fix_made_on_the_cpu_then_moved_is_right_too() -> None:
    """Chapter 02's debug-this question accepts weights made on the CPU and moved before they meet x."""
    from helpers.exercises import ch02

    question = next(q for q in ch02.QUESTIONS if q.variable == "scale_rows")
    moved_after = (
        "def scale_rows(x):\n    w = torch.linspace(0.5, 1.5, x.shape[0]).to(x.device)\n    return x * w[:, None]"
    )
    assert evaluate(question, moved_after).correct
