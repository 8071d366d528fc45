"""Chapter 08's checkers beyond the answers tests/wrong_answers/ states: a mistake is named only where the checker
has evidence for it, the checkers leave torch as they found it, and the notebook's starters are no answers."""

import json
from pathlib import Path

import pytest
import torch.distributed as dist

from tests.wrong_answers.ch08 import _BUCKETS

from .answers import evaluate

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "08_several_gpus.ipynb"


def _question(variable: str):
    from helpers.exercises import ch08

    return next(q for q in ch08.QUESTIONS if q.variable == variable)


def test_buckets_of_other_sizes_are_told_what_came_back_and_what_was_expected() -> None:
    """Buckets no typical mistake makes (100 bytes more than the cap) get the sizes seen and expected, no mistake
    named."""
    code = _BUCKETS.replace("<= bucket_bytes", "<= bucket_bytes + 100")
    message = evaluate(_question("average_gradients"), code).message
    said = "with bucket_bytes=1, average_gradients all-reduced [68, 256, 32, 128] bytes; expected [4, 32, 32, 256, "
    said += "32, 128]"
    assert said in message and message.split(said)[1].startswith(" (Checked"), message


def test_weights_no_mistake_explains_are_shown_against_one_process() -> None:
    """Gradients all-reduced and divided twice by the world size: neither summed nor this rank's own (wrong on
    one rank too: halved there)."""
    code = _BUCKETS.replace("        flat /= dist.get_world_size()\n", "        flat /= 2 * dist.get_world_size()\n")
    message = evaluate(_question("average_gradients"), code).message
    assert (
        "on one rank here (world_size 1): the weights differ" in message
        and "differ from one process trained on every rank" in message
    )
    assert "summed" not in message and "own gradients" not in message, message


def test_the_process_groups_allreduce_is_left_as_it_was() -> None:
    allreduce = dist.ProcessGroup.allreduce
    evaluate(_question("average_gradients"), _BUCKETS.replace("<= bucket_bytes", "< bucket_bytes"))
    assert dist.ProcessGroup.allreduce is allreduce


@pytest.mark.parametrize("variable", ["average_gradients", "train_and_log", "ring_allreduce_seconds"])
def test_the_notebooks_starters_are_not_answers(variable: str) -> None:
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    source = next("".join(c["source"]) for c in cells if f"def {variable}(" in "".join(c["source"]))
    code = source.split("\n", 1)[1] if source.startswith("%%writefile") else source
    outcome = evaluate(_question(variable), code)
    assert not outcome.correct and "bug in the course" not in outcome.message, outcome.message
