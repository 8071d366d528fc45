"""Chapter 04's checker beyond the wrong answers tests/wrong_answers/ states: other right answers are
accepted, and a mistake is named only where the checker has evidence for it."""

from __future__ import annotations

import json
from pathlib import Path

from .answers import evaluate

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "04_models_on_the_gpu.ipynb"


def _question():
    from helpers.exercises import ch04

    return next(q for q in ch04.QUESTIONS if q.variable == "clipped_step")


def test_the_notebooks_starter_is_the_planted_bug() -> None:
    """The cell the learner starts from gets the message for clipping the scaled gradients."""
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    starter = next("".join(c["source"]) for c in cells if "def clipped_step(" in "".join(c["source"]))
    outcome = evaluate(_question(), starter.replace("ex.q5.check()", ""))
    assert not outcome.correct and "still multiplied by the scaler's scale" in outcome.message, outcome.message


def test_more_wrong_steps_are_named_by_what_they_did() -> None:
    from helpers.exercises.solutions.ch04 import SOLUTIONS

    question = _question()
    solution = SOLUTIONS[question.number]
    clip = "    norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n"
    cases = {
        # no clipping at all
        solution.replace(clip, "    norm = 10.0\n"): "as if the gradients had not been clipped",
        # neither scaler.step nor optimizer.step
        solution.replace("    scaler.step(optimizer)\n", "").replace("    scaler.update()\n", ""): "the step never",
        # optimizer.step() on the scaled gradients, no unscale_: update() has no inf check to read
        solution.replace("    scaler.unscale_(optimizer)\n", "").replace(
            "scaler.step(optimizer)", "optimizer.step()"
        ): "scaler.update() found no step to learn from",
        # returns the loss instead of the norm
        solution.replace("return norm", "return loss"): "clipped_step returned 100, but the gradients' norm is 10",
    }
    for code, phrase in cases.items():
        message = evaluate(question, code).message
        assert message.startswith("Not yet: ") and phrase in message, (phrase, message)


def test_other_right_fixes_are_accepted() -> None:
    from helpers.exercises.solutions.ch04 import SOLUTIONS

    question = _question()
    solution = SOLUTIONS[question.number]
    right = [
        solution.replace("return norm", "return norm.item()"),  # a float for the log
        solution.replace("max_norm)", "max_norm, foreach=True)"),
        solution.replace("model.parameters(), max_norm", "optimizer.param_groups[0]['params'], max_norm"),
    ]
    for code in right:
        outcome = evaluate(question, code)
        assert outcome.correct, (outcome.message, code)
