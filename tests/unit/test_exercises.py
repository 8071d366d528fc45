"""Every exercise checker accepts its solution and rejects typical wrong answers, in every chapter."""

from __future__ import annotations

import importlib
import pkgutil

import pytest
import torch

import helpers.exercises
from helpers.checking import Question, load_exercises

MODULES = sorted(m.name for m in pkgutil.iter_modules(helpers.exercises.__path__) if m.name.startswith("ch"))
QUESTIONS: list[tuple[str, Question]] = [
    (name, q) for name in MODULES for q in importlib.import_module(f"helpers.exercises.{name}").QUESTIONS
]
IDS = [f"{name}-q{q.number}" for name, q in QUESTIONS]


def _namespace(question: Question, code: str) -> dict:
    namespace = {"torch": torch, "nn": torch.nn, **question.context()}
    exec(compile(code, f"<{question.variable}>", "exec"), namespace)
    return namespace


def test_every_chapter_module_has_questions() -> None:
    assert MODULES, "no exercise modules found"
    for name in MODULES:
        questions = importlib.import_module(f"helpers.exercises.{name}").QUESTIONS
        assert len(questions) >= 2, f"{name} needs at least two exercises"
        assert [q.number for q in questions] == list(range(1, len(questions) + 1)), f"{name}: number q1, q2, ..."


@pytest.mark.parametrize(("chapter", "question"), QUESTIONS, ids=IDS)
def test_solution_is_accepted(chapter: str, question: Question) -> None:
    outcome = question.evaluate(_namespace(question, question.solution_code))
    assert outcome.correct, f"{chapter} q{question.number} rejects its own solution: {outcome.message}"


@pytest.mark.parametrize(("chapter", "question"), QUESTIONS, ids=IDS)
def test_typical_wrong_answers_are_rejected(chapter: str, question: Question) -> None:
    assert len(question.wrong_answers) >= 2, f"{chapter} q{question.number} needs at least two wrong answers"
    for code in question.wrong_answers:
        outcome = question.evaluate(_namespace(question, code))
        assert not outcome.correct, f"{chapter} q{question.number} accepted a wrong answer:\n{code}"
        assert outcome.message and "Traceback" not in outcome.message


@pytest.mark.parametrize(("chapter", "question"), QUESTIONS, ids=IDS)
def test_missing_and_mistyped_answers_get_friendly_messages(chapter: str, question: Question) -> None:
    missing = question.evaluate({})
    assert not missing.correct and f"`{question.variable}`" in missing.message
    placeholder = question.evaluate({question.variable: ...})
    assert not placeholder.correct and "..." in placeholder.message
    for junk in (None, "some text", 12345, object()):
        outcome = question.evaluate({question.variable: junk})
        assert not outcome.correct, f"{chapter} q{question.number} accepted {junk!r}"
        assert outcome.message.strip() and "Traceback" not in outcome.message


def test_load_exercises_binds_to_the_namespace(capsys: pytest.CaptureFixture[str]) -> None:
    namespace: dict = {}
    ex = load_exercises("01", namespace)
    ex.q1.check()
    assert "can't find" in capsys.readouterr().out
    ex.q1.hint()
    ex.q1.solution()
    printed = capsys.readouterr().out
    assert "Hint" in printed and "solution" in printed


def test_load_exercises_names_a_missing_chapter() -> None:
    with pytest.raises(ValueError, match="no exercises for chapter '99'"):
        load_exercises("99", {})
