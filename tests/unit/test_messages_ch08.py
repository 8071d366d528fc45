"""Chapter 08's checker beyond the wrong answers tests/wrong_answers/ states: other right answers to
question 3 (the global batch and learning rate on N ranks) are accepted, and a mistake is named only
where the checker has evidence for it."""

from __future__ import annotations

import json
from pathlib import Path

from .answers import evaluate

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "08_several_gpus.ipynb"
HEAD = "def scaled_run(world_size, per_rank_batch, base_lr, base_batch):\n"


def _question():
    from helpers.exercises import ch08

    return next(q for q in ch08.QUESTIONS if q.variable == "scaled_run")


def test_other_right_answers_are_accepted() -> None:
    right = [
        HEAD + "    return [world_size * per_rank_batch, base_lr * world_size * per_rank_batch / base_batch]",
        HEAD + "    n = world_size * per_rank_batch\n    return float(n), base_lr * (n / base_batch)",
        HEAD + "    import torch\n    n = world_size * per_rank_batch\n"
        "    return torch.tensor(n), torch.tensor(base_lr * n / base_batch, dtype=torch.float64)",
        HEAD + "    from fractions import Fraction\n    n = world_size * per_rank_batch\n"
        "    return n, base_lr * Fraction(n, base_batch)",
    ]
    for code in right:
        outcome = evaluate(_question(), code)
        assert outcome.correct, (code, outcome.message)


def test_more_wrong_answers_are_named_by_what_they_did() -> None:
    cases = {
        # the square-root rule
        HEAD + "    n = world_size * per_rank_batch\n    return n, base_lr * (n / base_batch) ** 0.5": (
            "that is the square-root rule; this question asks for the linear one"
        ),
        # a global batch that is neither one rank's nor all ranks': expected and got, no blame
        HEAD + "    return world_size + per_rank_batch, base_lr": "global batch 18; 2 ranks of 16 samples make 32",
        # a learning rate off in a way the checker has no name for: it says what it expected
        HEAD + "    return world_size * per_rank_batch, 0.123": "learning rate 0.123; 0.05 × 32/32 is 0.05",
        # one number instead of a pair
        HEAD + "    return world_size * per_rank_batch": "to return (global_batch, lr)",
        # three values
        HEAD + "    n = world_size * per_rank_batch\n    return n, base_lr * n / base_batch, base_batch": (
            "returned 3 values; return two: (global_batch, lr)"
        ),
    }
    for code, phrase in cases.items():
        message = evaluate(_question(), code).message
        assert message.startswith("Not yet: ") and phrase in message, (phrase, message)


def test_an_unscaled_rate_is_not_blamed_where_the_global_batch_is_the_recipes() -> None:
    """The chapter's own run keeps the global batch (2 × 16 = 32), so keeping the rate is right there:
    an answer that never scales is told so only on a case whose global batch changed."""
    message = evaluate(_question(), HEAD + "    return world_size * per_rank_batch, base_lr").message
    assert "scaled_run(4, 64, 0.1, 64)" in message and "scale the rate by 256/64" in message, message


def test_the_notebooks_starter_is_not_an_answer() -> None:
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    starter = next("".join(c["source"]) for c in cells if "def scaled_run(" in "".join(c["source"]))
    outcome = evaluate(_question(), starter)
    assert not outcome.correct and "bug in the course" not in outcome.message, outcome.message
