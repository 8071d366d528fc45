"""A collective only one rank calls (chapters 08 and 12) is named from what each rank did, whichever clock fires first.

Two clocks can end such an answer: the process group's collective timeout (the waiting rank raises
inside the collective) and the run's limit (the waiting rank is still in it, and says where). The
checker decides from the ranks' outcomes, so each case is run with each clock forced to fire first,
and the verdict must be the same.
"""

from __future__ import annotations

import os

import pytest

from helpers.exercises import ch08, ch12
from tests.wrong_answers.ch08 import _BUGGY, _LOGGING
from tests.wrong_answers.ch12 import _EMPTY, _HEAD, _INIT, _META, _RETURN, _SHARD

from .answers import evaluate

#: The checker's clocks, each time with one far shorter than the other.
CLOCKS = {
    "the collective's timeout fires first": {"COLLECTIVE_TIMEOUT": 15.0, "LAUNCH_TIMEOUT": 300.0},
    "the run's limit fires first": {"COLLECTIVE_TIMEOUT": 600.0, "LAUNCH_TIMEOUT": 15.0},
}

#: Question 2's fixed file with a barrier that rank 0 alone reaches, at its end.
_BARRIER = _LOGGING.replace("    return logged", "    if rank == 0:\n        dist.barrier()\n    return logged")
_BARRIER_LINE = _BARRIER.splitlines().index("        dist.barrier()") + 1
#: Chapter 12's question 2 answered right, with `{}` where a line of the learner's goes: before sharding, or after.
_BUILD = (_HEAD + _META + "{}" + _SHARD + _EMPTY + _INIT + "{}" + _RETURN).format
_ON_RANK_0 = (
    "    import torch.distributed as dist\n\n    if dist.get_rank() == 0:\n        dist.all_reduce(torch.ones(1))\n"
)

#: (question, the learner's file, words the verdict must contain), by case.
CASES = {
    # the mean loss for logging, all-reduced on rank 0 only (question 2 as the notebook gives it)
    "ch08 all_reduce on rank 0": (ch08.QUESTIONS[1], _BUGGY, "in all_reduce (line 7 of logging_answer.py)"),
    "ch08 barrier on rank 0": (ch08.QUESTIONS[1], _BARRIER, f"in barrier (line {_BARRIER_LINE} of logging_answer.py)"),
    # a collective on rank 0 only, before the sharding both ranks do
    "ch12 all_reduce on rank 0": (
        ch12.QUESTIONS[1],
        _BUILD(_ON_RANK_0, ""),
        "in all_reduce (line 11 of build_answer.py)",  # "waited in", or "waited 15 s in" if rank 1 was still busy
    ),
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("clock", list(CLOCKS))
def test_a_collective_on_one_rank_is_named_whichever_clock_fires_first(
    monkeypatch: pytest.MonkeyPatch, case: str, clock: str
) -> None:
    for name, seconds in CLOCKS[clock].items():
        monkeypatch.setattr(ch08, name, seconds)  # chapter 12's question runs its ranks through chapter 08's
    question, code, words = CASES[case]
    outcome = evaluate(question, code)
    assert not outcome.correct
    assert outcome.message.startswith("Not yet: on two ranks, rank 0 waited") and words in outcome.message, (
        outcome.message
    )
    assert "every rank must make the same collective calls, in the same order" in outcome.message
    assert "Traceback" not in outcome.message


def test_a_slow_start_is_not_held_against_the_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ranks that do not start in time give "could not check", not a mistake.

    A rank starts by importing the answer's file; here that takes 30 s in a rank (not in this process,
    which imports it first), against a start limit of 1 s.
    """
    slow = f"import os, time\n\nif os.getpid() != {os.getpid()}:\n    time.sleep(30)\n"
    monkeypatch.setattr(ch08, "START_TIMEOUT", 1.0)
    outcome = evaluate(ch08.QUESTIONS[1], slow + _LOGGING)
    assert not outcome.correct
    assert outcome.message.startswith("Could not check `train_and_log`: the two ranks did not start within 1 s"), (
        outcome.message
    )


def _with(change: str, head: str = "") -> tuple[str, int]:
    """Question 2's fixed file with `change` before its loop, `head` first; and the change's last line."""
    loop = "    for step, loss in enumerate(losses):"
    code = head + _LOGGING.replace(loop, change + loop)
    return code, code.splitlines().index(change.splitlines()[-1]) + 1


def test_a_rank_still_running_while_its_peer_waits_is_named_with_both(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rank 1 sleeps past the collective timeout its peer waits out: neither is said to loop for the run's limit."""
    monkeypatch.setattr(ch08, "COLLECTIVE_TIMEOUT", 3.0)
    code, line = _with("    if rank == 1:\n        time.sleep(12)\n", "import time\n")
    outcome = evaluate(ch08.QUESTIONS[1], code)
    assert not outcome.correct
    assert "rank 0 waited 3 s in all_reduce" in outcome.message, outcome.message
    assert f"; rank 1 was still running after 3 s (line {line} of logging_answer.py)" in outcome.message, (
        outcome.message
    )


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (
            "    if rank == 1:\n        os._exit(0)\n",
            "on two ranks, rank 1 exited with code 0 before reporting a result",
        ),
        (
            "    if rank == 1:\n        raise ValueError('rank 1 gives up')\n",
            "rank 1 failed (line {line} of logging_answer.py)",
        ),
        (  # the line that names the error, not the message's last line (FSDP's ends in a printed module)
            "    if rank == 1:\n        raise RuntimeError('rank 1 broke here\\nthe module:\\n)')\n",
            "rank 1 failed (line {line} of logging_answer.py): RuntimeError: rank 1 broke here",
        ),
        (
            "    if rank == 1:\n        torch.zeros(2) + torch.zeros(3)\n",
            "rank 1 failed (line {line} of logging_answer.py)",
        ),
    ],
    ids=["os._exit on one rank", "an error on one rank", "an error whose message spans lines", "a shape error"],
)
def test_a_rank_that_ends_on_its_own_is_named_not_the_peer_it_left_waiting(change: str, words: str) -> None:
    code, line = _with(change, "import os\n")
    outcome = evaluate(ch08.QUESTIONS[1], code)
    assert not outcome.correct and words.format(line=line) in outcome.message, outcome.message
    assert "waited" not in outcome.message, outcome.message


def test_a_peer_slower_than_the_collective_timeout_does_not_change_the_verdict(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rank 0 calls all_reduce alone and gives up after 3 s; rank 1 takes 8 s to reach its own collectives
    (as on a loaded machine): still one rank waiting in a collective the other never makes."""
    monkeypatch.setattr(ch08, "COLLECTIVE_TIMEOUT", 3.0)
    body = _ON_RANK_0.replace("    import torch.distributed", "    import time\n    import torch.distributed")
    outcome = evaluate(ch12.QUESTIONS[1], _BUILD(body + "    else:\n        time.sleep(8)\n", ""))
    assert not outcome.correct and outcome.message.startswith("Not yet: on two ranks, rank 0 waited in all_reduce"), (
        outcome.message
    )
    assert "every rank must make the same collective calls, in the same order" in outcome.message, outcome.message


def test_a_collective_on_one_rank_after_sharding_is_not_blamed_on_fully_shard() -> None:
    code = _BUILD("", "    import torch.distributed as dist\n\n    if dist.get_rank() == 0:\n        dist.barrier()\n")
    outcome = evaluate(ch12.QUESTIONS[1], code)
    assert not outcome.correct and "fully_shard failed" not in outcome.message, outcome.message
    line = code.splitlines().index("        dist.barrier()") + 1
    assert outcome.message.startswith("Not yet: on two ranks, rank 0 waited"), outcome.message
    assert f"in barrier (line {line} of build_answer.py)" in outcome.message, outcome.message


@pytest.mark.parametrize(
    ("change", "words"),
    [
        # an error of its own, in its own line, after more than the collective timeout: not a wait
        ("    if rank == 1:\n        time.sleep(7)\n        torch.zeros(2) + torch.zeros(3)\n", "rank 1 failed (line"),
        # busy in torch.distributed's own calls, alone past the run's limit: running, not waiting
        ("    if rank == 1:\n        while dist.get_rank() == 1:\n            pass\n", "was still running after"),
    ],
    ids=["a late error of its own", "a loop over a torch.distributed call"],
)
def test_a_rank_busy_or_failing_late_is_not_read_as_a_wait(
    monkeypatch: pytest.MonkeyPatch, change: str, words: str
) -> None:
    monkeypatch.setattr(ch08, "COLLECTIVE_TIMEOUT", 5.0)
    monkeypatch.setattr(ch08, "LAUNCH_TIMEOUT", 12.0)
    code = "import time\n" + _LOGGING.replace("    return logged", change + "    return logged")  # rank 0 finishes
    outcome = evaluate(ch08.QUESTIONS[1], code)
    assert not outcome.correct and words in outcome.message and "waited" not in outcome.message, outcome.message
