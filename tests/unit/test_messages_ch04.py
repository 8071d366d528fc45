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


def test_a_slip_is_not_named_where_another_mistake_gives_its_weights() -> None:
    """An Adam of the answer's own reads its step count with .item() (no loss's value): the message says the optimizer
    given took no step; gradients unscaled by hand and again by scaler.step are not called clipped while scaled;
    clipping each value (clip_grad_value_) is not called an unclipped step (max_norm=0.25 comes first, where the two
    differ)."""
    from helpers.exercises.solutions.ch04 import SOLUTIONS

    adam = SOLUTIONS[2].replace(
        "    losses = []\n", "    losses = []\n    optimizer = torch.optim.Adam(model.parameters())\n"
    )
    message = evaluate(_question("train_epoch"), adam).message
    assert "stepped the optimizer given 0 times" in message and ".item()" not in message, message
    by_hand = SOLUTIONS[5].replace(
        "    scaler.unscale_(optimizer)\n",
        "    for p in model.parameters():\n        p.grad.mul_(1 / scaler.get_scale())\n",
    )
    message = evaluate(_question("clipped_step"), by_hand).message
    assert "saw scaled gradients, or the scale was divided out again after the clip" in message, message
    values = SOLUTIONS[5].replace(
        "clip_grad_norm_(model.parameters(), max_norm)", "clip_grad_value_(model.parameters(), max_norm)"
    )
    message = evaluate(_question("clipped_step"), values).message
    assert "the weights differ from one SGD step" in message and "unclipped" not in message, message


def test_a_clip_to_a_norm_of_its_own_is_not_told_the_order() -> None:
    """Round 2: max_norm hard-coded at section 6's 1.0 was told to clip after unscale_; the order was right. The first
    case's gradients have norm 1.5, so a clip to 1 shows; an answer that never clips to max_norm is told to."""
    from helpers.exercises.solutions.ch04 import SOLUTIONS

    for norm, said in (
        ("1.0", "a step clipped to norm 1 (section 6): clip to max_norm"),
        ("2.0", "an unclipped"),
    ):
        code = SOLUTIONS[5].replace("parameters(), max_norm)", f"parameters(), {norm})")
        message = evaluate(_question("clipped_step"), code).message
        assert f"x, y=(1.5, -1.5, 1.5, 0), 0.25) the weights differ from one SGD step: they are {said}" in message, (
            message
        )
        assert "clip them to max_norm" in message or norm == "1.0", message


def test_predict_may_leave_batchnorm_statistics_as_running_the_model_does() -> None:
    """The words name the weights and the train/eval mode: the solution, in train mode, updates a BatchNorm's running
    statistics as model(x) does, and an answer that leaves them is right too; any other change to a buffer is not."""
    model = _question("predict")
    assert evaluate(model, "def predict(model, x):\n    return model(x.to(next(model.parameters()).device))").correct
    halved = "def predict(model, x):\n    y = model(x.to(next(model.parameters()).device))\n"
    halved += "    for b in model.buffers():\n        b.div_(2)\n    return y"
    message = evaluate(model, halved).message
    assert "BatchNorm1d in eval) on cpu, torch.int64 x on cpu) changed the model's weights or buffers" in message


def test_clips_the_chapter_does_not_teach_are_told_what_differed_and_no_slip() -> None:
    """Round 6 dropped the slips of a clip per parameter, by value (or the inf-norm) and a rescale up to max_norm: the
    message says which call's weights differ from one SGD step, and names no mistake."""
    from tests.wrong_answers.ch04 import _CLIP, _CLIP_LINE

    first = "x, y=(1.5, -1.5, 1.5, 0), 0.25)"
    per_parameter = _CLIP.replace(
        _CLIP_LINE,
        "    norm = torch.linalg.vector_norm(torch.cat([p.grad.flatten() for p in model.parameters()]))\n"
        "    for p in model.parameters():\n        nn.utils.clip_grad_norm_(p, max_norm)\n",
    )
    rescaled = _CLIP.replace(
        "max_norm)\n", 'float("inf"))\n    for p in model.parameters():\n        p.grad.mul_(max_norm / norm)\n'
    )
    for code, call in (
        (per_parameter, first),
        (_CLIP.replace("max_norm)\n", "max_norm, norm_type=float('inf'))\n"), first),
        (rescaled, "x, y=(0.1, 1/3, -0.7, 0.2), 5.0)"),
    ):
        message = evaluate(_question("clipped_step"), code).message
        assert message.endswith(f"{call} the weights differ from one SGD step"), message


def test_a_host_read_counts_only_for_values_made_from_the_model() -> None:
    """Round 6: an int() of a tensor made from len(X) is no read of a loss; an .item() of a sum of detached losses is,
    as are the losses copied to the CPU and their .tolist() (round 14: a copy to the host counts)."""
    from helpers.exercises.solutions.ch04 import SOLUTIONS

    question = _question("train_epoch")
    count = SOLUTIONS[2].replace("    losses = []\n", "    losses = [] * int(torch.tensor(len(X) / 4).ceil())\n")
    assert evaluate(question, count).correct
    for returned, said in (
        ("sum(losses).item() / len(losses)", "(.item(), 1 time(s))"),
        ("torch.tensor(sum(sum(loss.cpu().tolist() for loss in losses)) / len(losses))", "(.cpu(), 3 time(s))"),
    ):
        message = evaluate(question, SOLUTIONS[2].replace("torch.stack(losses).mean()", returned)).message
        assert f"X and y of 36 rows, 12) read values on the host {said}" in message, message
