"""Chapter 07's checker beyond the wrong answers tests/wrong_answers/ states: a mistake is named only where the
checker has evidence for it, and the simulated copies behave as the chapter says."""

from __future__ import annotations

import torch

from helpers.exercises import ch07
from tests.wrong_answers.ch07 import RIGHT_ANSWERS, WRONG_ANSWERS

from .answers import evaluate


def _question(variable: str):  # noqa: ANN202
    return next(q for q in ch07.QUESTIONS if q.variable == variable)


def test_the_planted_bug_says_which_batch_arrived_in_which() -> None:
    bug = WRONG_ANSWERS[3][0][0]
    message = evaluate(_question("upload_all"), bug).message
    # every copy is still queued when the buffer is refilled, so each reads the last batch
    assert "the tensor for batch 0 holds batch 2's values" in message, message


def test_the_same_bug_into_device_tensors_is_found_too() -> None:
    into_device_tensors = next(code for code in RIGHT_ANSWERS[3] if "target.copy_(staging" in code)
    without_wait = into_device_tensors.replace(
        "        copied = torch.cuda.Event()\n        copied.record()\n        copied.synchronize()\n", ""
    )
    assert without_wait != into_device_tensors
    outcome = evaluate(_question("upload_all"), without_wait)
    assert not outcome.correct and "its copy read the buffer after a refill" in outcome.message, outcome.message


def test_no_blame_without_evidence_for_an_answer_that_loses_the_batches() -> None:
    empty = "def upload_all(batches, device):\n    return [torch.zeros(2, 3, device=device) for _ in batches]"
    message = evaluate(_question("upload_all"), empty).message
    assert "the tensor for batch 0 holds no batch's values" in message, message
    assert "refill" not in message, message


def test_a_copy_that_had_not_arrived_is_named_only_when_one_was_queued() -> None:
    wrong_values = (
        "def to_host(t):\n    host = t.to('cpu', non_blocking=True)\n    torch.cuda.synchronize()\n    return host + 1"
    )
    message = evaluate(_question("to_host"), wrong_values).message
    assert "returned a torch.float32 tensor of shape (8,) on cpu holding [2.0" in message, message
    assert "arrived" not in message and "event" not in message, message


def test_an_empty_dict_is_right_only_for_an_empty_batch() -> None:
    outcome = _question("to_device").evaluate({"to_device": lambda batch, device: {}})
    assert "to_device({'image': …, 'label': …}, meta) returned {}; expected a new dict with its keys" in outcome.message


def test_the_cuda_method_is_named_the_same_on_every_machine() -> None:
    """.cuda() runs in the simulation wherever the checker runs, so the verdict does not depend on the machine."""
    code = "def to_device(batch, device):\n    return {k: v.cuda() for k, v in batch.items()}"
    outcome = evaluate(_question("to_device"), code)
    assert "on the GPU, not batch['image'] on meta" in outcome.message, outcome.message


def test_uploads_read_a_pinned_source_when_the_stream_gets_there() -> None:
    """The simulation question 3 runs on: a queued copy reads its buffer late, a waited one in time, and work on the
    device tensor follows the copy; reading it on the host waits for the stream."""
    from helpers.standins import simulated_cuda

    with simulated_cuda(copy_ms=1.0) as sim, sim.tensors():
        staging = torch.empty(3, pin_memory=True)
        staging.fill_(1.0)
        early = staging.to("cuda", non_blocking=True)
        doubled = early * 2  # queued after the copy: it sees what the copy brings
        staging.fill_(2.0)  # before the copy has run: it will send 2s
        done = torch.cuda.Event()
        late = staging.to("cuda", non_blocking=True)
        done.record()
        done.synchronize()
        staging.fill_(3.0)  # after the host waited for the copy: it sent 2s
        assert early.device.type == "cuda" and sim.host_waits == ["event.synchronize()"]
        assert doubled.tolist() == [4.0] * 3 and sim.host_waits[-1] == ".tolist()"
    sim.land(everything=True)
    assert early.tolist() == [2.0] * 3 and late.tolist() == [2.0] * 3
    assert sim.kinds == {"pageable": 0, "blocking": 0, "non_blocking": 2} and len(sim.pinned) == 1
