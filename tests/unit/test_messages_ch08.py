"""Chapter 08's checker beyond the answers tests/wrong_answers/ states: a mistake is named only where the checker
has evidence for it (otherwise the message says what came back and what was expected), and the notebook's
starters are no answers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.wrong_answers.ch08 import _DDP_TEMPLATE, _STEP

from .answers import evaluate

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "08_several_gpus.ipynb"
HEAD = "def scaled_run(world_size, per_rank_batch, base_lr, base_batch):\n"


def _question(variable: str):
    from helpers.exercises import ch08

    return next(q for q in ch08.QUESTIONS if q.variable == variable)


def test_mistakes_without_evidence_get_what_came_back_and_what_was_expected() -> None:
    cases = {
        # a global batch that is neither one rank's nor all ranks'
        HEAD + "    return world_size + per_rank_batch, base_lr": "scaled_run(2, 16, 0.05, 32) returned (18, 0.05); "
        "expected (32, 0.05)",
        # a learning rate off in a way no slip computes
        HEAD + "    return world_size * per_rank_batch, 0.123": "returned (32, 0.123); expected (32, 0.05)",
        # one number instead of a pair
        HEAD + "    return world_size * per_rank_batch": "to return (global_batch, lr)",
        # three values
        HEAD + "    n = world_size * per_rank_batch\n    return n, base_lr * n / base_batch, base_batch": (
            "returned 3 values; return two: (global_batch, lr)"
        ),
    }
    for code, phrase in cases.items():
        message = evaluate(_question("scaled_run"), code).message
        assert message.startswith("Not yet: ") and phrase in message, (phrase, message)


def test_an_unscaled_rate_is_not_blamed_where_the_global_batch_is_the_recipes() -> None:
    """The chapter's own run keeps the global batch (2 × 16 = 32), so keeping the rate is right there:
    an answer that never scales is told so only on a case whose global batch changed."""
    message = evaluate(_question("scaled_run"), HEAD + "    return world_size * per_rank_batch, base_lr").message
    assert "scaled_run(4, 64, 0.1, 64) returned (256, 0.1)" in message and "the rate was kept" in message, message


def test_a_learning_rate_is_named_as_the_optimizer_had_it() -> None:
    """A rate the file did not have is named from the optimizer, and called world_size times the file's only
    where it is; here on the one rank the checker runs first, so without a launch."""
    code = _DDP_TEMPLATE.replace("lr=0.1", "lr=0.15").format(step=_STEP)
    message = evaluate(_question("train_on_rank"), code).message
    assert "on one rank here (world_size 1): the optimizer stepped with lr=0.15: keep" in message, message
    assert "world_size" not in message.split("lr=0.15")[1].split(":")[0], message


def test_ddps_forward_is_left_as_it_was() -> None:
    """The checker notes DDP's forward passes by wrapping DistributedDataParallel.forward (model.forward(x) runs it
    too, without the module's hooks): the class has its own forward back afterwards, also after a wrong answer."""
    from torch.nn.parallel import DistributedDataParallel as DDP

    forward = DDP.forward
    evaluate(_question("train_on_rank"), _DDP_TEMPLATE.replace("lr=0.1", "lr=0.15").format(step=_STEP))
    assert DDP.forward is forward


@pytest.mark.parametrize("variable", ["rank_indices", "train_on_rank", "scaled_run"])
def test_the_notebooks_starters_are_not_answers(variable: str) -> None:
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    source = next("".join(c["source"]) for c in cells if f"def {variable}(" in "".join(c["source"]))
    code = source.removeprefix("%%writefile {WORK}/ddp_answer.py\n")
    outcome = evaluate(_question(variable), code)
    assert not outcome.correct and "bug in the course" not in outcome.message, outcome.message


def test_a_rate_kept_on_one_case_by_chance_is_not_blamed() -> None:
    """Rounding the ratio up keeps the rate where the global batch is half the recipe's (8 × 32 of 512) but not
    where it is 30 of 16 (3 × 10): the answer is told what came back and what was expected, no mistake named."""
    code = (
        "import math\n\n"
        + HEAD
        + "    n = world_size * per_rank_batch\n    return n, base_lr * math.ceil(n / base_batch)"
    )
    message = evaluate(_question("scaled_run"), code).message
    assert "returned (256, 0.001); expected (256, 0.0005)" in message and "rate was kept" not in message, message
