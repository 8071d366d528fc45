"""Chapter 07's checker beyond the wrong answers tests/wrong_answers/ states: a mistake is named only where the
checker has evidence for it, and the simulated copies behave as the chapter says."""

from __future__ import annotations

import torch

from helpers.exercises import ch07
from helpers.exercises.solutions.ch07 import SOLUTIONS
from tests.wrong_answers.ch07 import RIGHT_ANSWERS, WRONG_ANSWERS

from .answers import evaluate


def _question(variable: str):  # noqa: ANN202
    return next(q for q in ch07.QUESTIONS if q.variable == variable)


def test_the_planted_bug_says_which_batch_arrived_in_which() -> None:
    bug = WRONG_ANSWERS[2][0][0]
    message = evaluate(_question("upload_all"), bug).message
    # every copy is still queued when the buffer is refilled, so each reads the last batch
    assert "the tensor for batch 0 holds batch 2's values" in message, message


def test_the_same_bug_into_device_tensors_is_found_too() -> None:
    into_device_tensors = next(code for code in RIGHT_ANSWERS[2] if "target.copy_(staging" in code)
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


def test_a_prefetch_that_overlaps_takes_about_one_copy_more_than_its_steps() -> None:
    """The solution's loop on the simulated clock: each copy under the step before it, the total about the steps'
    plus one copy (the course's own driver of a prefetch, as the checker runs it), against section 6's loop."""
    from helpers.standins import simulated_cuda

    spaces: dict = {}
    exec(SOLUTIONS[1], {"torch": torch}, spaces)  # the solution, as a notebook cell defines it
    plain = lambda batches, device: (b.to(device, non_blocking=True) for b in batches)  # noqa: E731
    totals = []
    for loop in (spaces["prefetched"], plain):
        host = [torch.full((4,), float(k)) for k in range(8)]
        with simulated_cuda(copy_ms=1.0) as sim, sim.tensors(host):
            for _ in loop(iter(host), torch.device("cuda")):
                sim.work("step", 1.0)
            totals.append(max(s.free_ms for s in sim.streams))
    assert totals[0] < 9.5 and totals[1] >= 16, totals


def test_a_prefetch_without_record_stream_is_blamed_only_where_a_copy_ran_under_a_step() -> None:
    """With steps as long as copies, no copy on the side stream runs under the step of a batch the caller let go:
    nothing is observed there; the case with 2 ms steps shows it, and the verdict names that case."""
    no_record = WRONG_ANSWERS[1][2][0]
    assert "record_stream" not in no_record
    message = evaluate(_question("prefetched"), no_record).message
    assert "(5 pageable torch.int64 batches, meta) (copies 1 ms, steps 2 ms): batch 1" in message, message


def test_the_cuda_method_is_named_the_same_on_every_machine() -> None:
    """.cuda() runs in the simulation wherever the checker runs, so the verdict does not depend on the machine."""
    code = next(code for code, _ in WRONG_ANSWERS[1] if ".cuda(" in code)
    outcome = evaluate(_question("prefetched"), code)
    assert "on the GPU; expected batch 0, torch.int64, on meta" in outcome.message, outcome.message


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


def test_a_batch_the_answer_still_holds_is_not_said_to_be_let_go() -> None:
    """Without record_stream a batch read on the caller's stream is told what happens once it is let go, not that it
    was: an answer that keeps every batch in a list of its own is told the same, in the conditional."""
    keeps = SOLUTIONS[1].replace(
        "        coming.record_stream(torch.cuda.current_stream())  # freed, its memory waits for that step\n",
        "        KEPT.append(coming)\n",
    )
    message = evaluate(_question("prefetched"), "KEPT = []\n" + keeps).message
    assert "batch 1 (made on the side stream, no record_stream for the caller's stream) is read until 5 ms" in message
    assert "was let go" not in message and "once let go" in message, message


def test_a_double_buffer_is_judged_by_what_each_step_read_when_it_ran() -> None:
    """Two device buffers refilled in turn: the values are those each step read at its time (the buffers end up
    holding the last batches), so the right double buffer passes and one refilled during a step is told so."""
    from tests.wrong_answers.ch07 import _DOUBLE

    assert evaluate(_question("prefetched"), _DOUBLE).correct
    racy = _DOUBLE.replace(
        "        side.wait_stream(cur)  # the step that read this buffer is done before the refill\n", ""
    )
    message = evaluate(_question("prefetched"), racy).message
    assert "batch 0 holds batch 2's values (refilled on the side stream while its step ran)" in message, message
