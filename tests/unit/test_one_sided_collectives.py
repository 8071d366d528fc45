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
from tests.wrong_answers.ch08 import _DDP_TEMPLATE, _STEP
from tests.wrong_answers.ch12 import _BLOCKS, _ROOT, _SHARD_TEMPLATE

from .answers import evaluate

#: The checker's clocks, each time with one far shorter than the other.
CLOCKS = {
    "the collective's timeout fires first": {"COLLECTIVE_TIMEOUT": 5.0, "LAUNCH_TIMEOUT": 300.0},
    "the run's limit fires first": {"COLLECTIVE_TIMEOUT": 600.0, "LAUNCH_TIMEOUT": 15.0},
}

_ON_RANK_0 = "\n        if rank == 0:\n            "

#: (question, the learner's file, words the verdict must contain), by case.
CASES = {
    # the loss averaged over the ranks for logging, on rank 0 only: rank 1 goes on to DDP's next step
    "ch08 all_reduce on rank 0": (
        ch08.QUESTIONS[1],
        _DDP_TEMPLATE.format(step=_STEP + _ON_RANK_0 + "dist.all_reduce(loss.detach())  # log the mean loss"),
        "rank 0 waited in all_reduce (line 21 of ddp_answer.py), a collective that rank 1 never reached",
    ),
    "ch08 barrier on rank 0": (
        ch08.QUESTIONS[1],
        _DDP_TEMPLATE.format(step=_STEP + _ON_RANK_0 + "dist.barrier()"),
        "rank 0 waited in barrier (line 21 of ddp_answer.py), a collective that rank 1 never reached",
    ),
    # only rank 0 shards: its forward gathers parameters from a rank that trains a plain model and returns
    "ch12 fully_shard on rank 0": (
        ch12.QUESTIONS[1],
        _SHARD_TEMPLATE.format(
            body="    import torch.distributed as dist\n\n    if dist.get_rank() == 0:\n"
            + "".join(f"    {line}\n" for line in (_BLOCKS + _ROOT).splitlines())
        ),
        "a collective that rank 1 never reached: rank 1 had already finished",
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
    assert outcome.message.startswith("Not yet: ") and words in outcome.message, outcome.message
    assert "Every rank must call the same collectives, in the same order" in outcome.message


def test_a_slow_start_is_not_held_against_the_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ranks that do not start in time give "could not check", not a mistake.

    A rank starts by importing the answer's file; here that takes 30 s in a rank (not in this process,
    which imports it first), against a start limit of 1 s.
    """
    from helpers.exercises.solutions.ch08 import SOLUTIONS

    slow = f"import os, time\n\nif os.getpid() != {os.getpid()}:\n    time.sleep(30)\n"
    monkeypatch.setattr(ch08, "START_TIMEOUT", 1.0)
    outcome = evaluate(ch08.QUESTIONS[1], slow + SOLUTIONS[2])
    assert not outcome.correct
    assert outcome.message.startswith("Could not check `train_on_rank`: the two ranks did not start"), outcome.message
