"""Chapter 09's checker beyond the wrong answers tests/wrong_answers/ states: other right answers are
accepted, and a mistake is named only where the checker has evidence for it."""

from __future__ import annotations

import multiprocessing

import pytest
import torch
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


def test_an_answer_that_seeds_torch_leaves_the_notebooks_random_state_as_it_was() -> None:
    """Question 1: the check runs the answer here, in the learner's kernel; torch.manual_seed in it is refused
    (the question says to seed a torch.Generator), and the global random state is set back afterwards."""
    code = (
        "import torch\nimport torch.nn.functional as F\n\n\n"
        "def hogwild_worker(rank, model, x, y, steps, lr):\n"
        "    torch.manual_seed(rank)\n"
        "    opt = torch.optim.SGD(model.parameters(), lr=lr)\n"
        "    for _ in range(steps):\n"
        "        idx = torch.randint(0, len(x), (32,))\n"
        "        opt.zero_grad()\n"
        "        F.cross_entropy(model(x[idx]), y[idx]).backward()\n"
        "        opt.step()"
    )
    state = torch.get_rng_state()
    outcome = evaluate(_question("hogwild_worker"), code)
    assert not outcome.correct and "changed torch's global random state" in outcome.message, outcome.message
    assert torch.equal(state, torch.get_rng_state())
