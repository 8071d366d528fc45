"""Typical wrong answers to every exercise, one module per chapter (`ch04.py` has chapter 04's `WRONG_ANSWERS`).

Each entry is code a learner might plausibly write, with words its verdict must contain (the message a
learner who wrote it is told); `tests/unit/test_exercises.py` checks that every one is rejected with them.
They are test data, so they live here and not in the learner package: most are the solution with one
line changed, and where they share the solution's lines they take them from its text in
`helpers.exercises.solutions` (which the teacher edition ships and the handout edition leaves out).
"""

from __future__ import annotations

import importlib

from helpers.checking import Question


def wrong_answers(question: Question) -> tuple[tuple[str, str], ...]:
    """The typical wrong answers to a chapter's `question`, each with the words its verdict must contain."""
    return tuple(importlib.import_module(f"{__name__}.ch{question.chapter}").WRONG_ANSWERS.get(question.number, ()))


def right_answers(question: Question) -> tuple[str, ...]:
    """Right answers to a chapter's `question` other than its solution, as a learner could write them."""
    module = importlib.import_module(f"{__name__}.ch{question.chapter}")
    return tuple(getattr(module, "RIGHT_ANSWERS", {}).get(question.number, ()))


def lines_of(code: str, first: int, last: int) -> str:
    """Lines `first` to `last` of `code` (counted from 1), each with its newline: a part of a solution."""
    return "".join(code.splitlines(keepends=True)[first - 1 : last])


#: A sequence class of a learner's own (a length and indices, nothing else): torch builds a tensor from it as from a
#: list, reading each tensor it holds (chapters 04 and 14 count those reads).
OWN_SEQUENCE = (
    "class Losses:\n    def __init__(self, items):\n        self.items = items\n\n"
    "    def __len__(self):\n        return len(self.items)\n\n"
    "    def __getitem__(self, i):\n        return self.items[i]\n\n\n"
)
