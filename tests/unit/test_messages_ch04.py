"""Chapter 04's checker beyond the wrong answers tests/wrong_answers/ states: the notebook's starter gets the
message for its bug, and a mistake is named only where the checker has evidence for it."""

from __future__ import annotations

import json
from pathlib import Path

from .answers import evaluate

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "04_models_on_the_gpu.ipynb"


def _question(variable: str):
    from helpers.exercises import ch04

    return next(q for q in ch04.QUESTIONS if q.variable == variable)


def test_the_notebooks_starter_is_the_planted_bug() -> None:
    """The cell the learner starts from gets the message for clipping the scaled gradients."""
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    starter = next("".join(c["source"]) for c in cells if "def clipped_step(" in "".join(c["source"]))
    outcome = evaluate(_question("clipped_step"), starter.replace("ex.q5.check()", ""))
    assert not outcome.correct and "clip_grad_norm_ saw scaled gradients" in outcome.message, outcome.message


def test_a_step_wrong_in_another_way_is_told_what_differed_and_no_slip() -> None:
    from helpers.exercises.solutions.ch04 import SOLUTIONS

    twice = SOLUTIONS[4].replace("scaler.scale(loss)", "scaler.scale(2 * loss)")  # a step twice as long
    half = SOLUTIONS[5].replace("parameters(), max_norm)", "parameters(), max_norm / 2)")  # clipped to half
    for variable, code in (("amp_step", twice), ("clipped_step", half)):
        message = evaluate(_question(variable), code).message
        assert message.startswith("Not yet: after ") and "the weights differ from one SGD step" in message, message
        assert "they " not in message, message  # none of the slips the chapter teaches


def test_a_wrong_mean_is_not_called_the_mean_over_rows() -> None:
    from helpers.exercises.solutions.ch04 import SOLUTIONS

    # each loss weighted by its rows, divided by full batches' rows: the right mean only when the batches are equal
    code = SOLUTIONS[2].replace("losses.append(loss.detach())", "losses.append(loss.detach() * len(xb))")
    code = code.replace("torch.stack(losses).mean()", "torch.stack(losses).sum() / (len(losses) * batch_size)")
    message = evaluate(_question("train_epoch"), code).message
    assert "expected 0.318094, the mean of the batches' losses" in message and "over rows" not in message, message


def test_a_read_of_an_integer_tensor_is_not_a_read_of_the_losses() -> None:
    """A DataLoader reads an int64 seed with .item(): the losses stay on the device, so it is right."""
    from tests.wrong_answers.ch04 import RIGHT_ANSWERS

    loader = next(code for code in RIGHT_ANSWERS[2] if "DataLoader" in code)
    assert evaluate(_question("train_epoch"), loader).correct
