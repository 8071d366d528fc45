"""Chapter 09's checkers beyond the wrong answers tests/wrong_answers/ states: other right answers are
accepted, and a mistake is named only where the checker has evidence for it."""

from __future__ import annotations

import multiprocessing

import pytest
import torch.multiprocessing as mp

from helpers.exercises import ch09

from .answers import evaluate


def _question(variable: str):  # noqa: ANN202
    return next(q for q in ch09.QUESTIONS if q.variable == variable)


def _launcher(method: str, share: bool) -> str:
    return (
        "import torch.multiprocessing as mp\n\n\n"
        "def run_in_forks(model, work, processes):\n"
        + ("    model.share_memory()\n" if share else "")
        + f'    ctx = mp.get_context("{method}")\n'
        "    procs = [ctx.Process(target=work, args=(model,)) for _ in range(processes)]\n"
        "    for p in procs:\n"
        "        p.start()\n"
        "    for p in procs:\n"
        "        p.join()"
    )


@pytest.mark.skipif("forkserver" not in mp.get_all_start_methods(), reason="needs the forkserver start method")
def test_a_launcher_that_pickles_its_arguments_needs_no_share_memory() -> None:
    """Question 4: with forkserver the model travels pickled, so its storage moves to shared memory on the
    way and the parent sees the children's writes: a right fix, though it never calls share_memory()."""
    outcome = evaluate(_question("run_in_forks"), _launcher("forkserver", share=False))
    assert outcome.correct, outcome.message


def test_children_that_never_run_the_worker_are_not_told_about_copy_on_write() -> None:
    """Question 4: children that fail before `work` ends give no evidence of a private copy."""
    code = _launcher("fork", share=True).replace("args=(model,)", "args=(model, 1)")
    outcome = evaluate(_question("run_in_forks"), code)
    assert not outcome.correct
    assert "`work` ran to its end in 0 child processes and 0 times here" in outcome.message
    assert "copy-on-write" not in outcome.message and "one after the other" not in outcome.message


def test_a_check_leaves_no_child_running() -> None:
    """Question 4: a launcher that forgets join() gets its children joined by the checker, not left behind."""
    code = _launcher("fork", share=True).replace("    for p in procs:\n        p.join()", "")
    outcome = evaluate(_question("run_in_forks"), code)
    assert "still running" in outcome.message
    assert multiprocessing.active_children() == []


def test_a_producer_that_waits_while_it_holds_every_buffer_is_told_so() -> None:
    """Question 1: a real queue would wait for ever; the check's consumer can free nothing, and says why."""
    code = (
        "def produce(batches, tasks, free):\n"
        "    buffers = [free.get() for _ in batches]\n"
        "    for index, (buffer, batch) in enumerate(zip(buffers, batches)):\n"
        "        buffer.copy_(batch)\n"
        "        tasks.put((index, buffer))\n"
        "    tasks.put(None)"
    )
    outcome = evaluate(_question("produce"), code)
    assert not outcome.correct and "asked `free` for a buffer while it held both" in outcome.message, outcome.message
