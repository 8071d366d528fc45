"""Chapter 07's checker beyond the wrong answers tests/wrong_answers/ states: other right answers are
accepted, and a mistake is named only where the checker has evidence for it."""

from __future__ import annotations

import pytest

from helpers.exercises import ch07
from tests.wrong_answers.ch07 import WRONG_ANSWERS

from .answers import evaluate


def _upload_all():
    return next(q for q in ch07.QUESTIONS if q.variable == "upload_all")


DOUBLE_BUFFERED = (
    "def upload_all(batches, device):\n"
    "    buffers = [torch.empty(batches[0].shape, pin_memory=True) for _ in range(2)]\n"
    "    done = [None, None]\n"
    "    out = []\n"
    "    for i, batch in enumerate(batches):\n"
    "        if done[i % 2] is not None:\n"
    "            done[i % 2].synchronize()\n"
    "        buffers[i % 2].copy_(batch)\n"
    "        out.append(buffers[i % 2].to(device, non_blocking=True))\n"
    "        done[i % 2] = torch.cuda.Event()\n"
    "        done[i % 2].record()\n"
    "    return out"
)

DEVICE_SYNC_BEFORE_REFILL = (
    "def upload_all(batches, device):\n"
    "    staging = torch.empty(batches[0].shape, pin_memory=True)\n"
    "    on_device = []\n"
    "    for batch in batches:\n"
    "        torch.cuda.synchronize()\n"
    "        staging.copy_(batch)\n"
    "        on_device.append(staging.to(device, non_blocking=True))\n"
    "    return on_device"
)

INTO_DEVICE_TENSORS = (
    "def upload_all(batches, device):\n"
    "    staging = torch.empty(batches[0].shape, pin_memory=True)\n"
    "    out = [torch.empty(b.shape, device=device) for b in batches]\n"
    "    for batch, target in zip(batches, out):\n"
    "        staging.copy_(batch)\n"
    "        target.copy_(staging, non_blocking=True)\n"
    "        copied = torch.cuda.Event()\n"
    "        copied.record()\n"
    "        copied.synchronize()\n"
    "    return out"
)


@pytest.mark.parametrize("code", [DOUBLE_BUFFERED, DEVICE_SYNC_BEFORE_REFILL, INTO_DEVICE_TENSORS])
def test_other_safe_ways_to_reuse_the_staging_buffer_are_accepted(code: str) -> None:
    outcome = evaluate(_upload_all(), code)
    assert outcome.correct, outcome.message


def test_the_planted_bug_says_which_batch_arrived_in_which() -> None:
    bug = WRONG_ANSWERS[3][0][0]
    message = evaluate(_upload_all(), bug).message
    # every copy is still queued when the buffer is refilled, so each reads the last batch
    assert "the tensor for batch 0 holds batch 3's values" in message, message
    assert "You waited" not in message and "You recorded" not in message, message


def test_the_same_bug_into_device_tensors_is_found_too() -> None:
    without_wait = INTO_DEVICE_TENSORS.replace(
        "        copied = torch.cuda.Event()\n        copied.record()\n        copied.synchronize()\n", ""
    )
    outcome = evaluate(_upload_all(), without_wait)
    assert not outcome.correct and "its copy ran after the staging buffer had been refilled" in outcome.message


def test_no_blame_without_evidence_for_an_answer_that_loses_the_batches() -> None:
    empty = "def upload_all(batches, device):\n    return [torch.zeros(2, 3, device=device) for _ in batches]"
    message = evaluate(_upload_all(), empty).message
    assert "holds values of no batch" in message, message
    assert "You waited" not in message and "You recorded" not in message, message
