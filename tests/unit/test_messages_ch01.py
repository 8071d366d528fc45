"""Chapter 01's checker beyond the wrong answers tests/wrong_answers/ states: other right answers are
accepted, and a mistake is named only where the checker has evidence for it."""

from __future__ import annotations

import os

import pytest
import torch

from helpers.exercises import ch01
from helpers.exercises.ch00 import MACHINES, ask

from .answers import evaluate, run_in_notebook


def _question():
    return next(q for q in ch01.QUESTIONS if q.variable == "stage_devices")


def test_other_right_fixes_and_forms_are_accepted() -> None:
    """The property is checked, not the text: a different fix, strings and a list are right too."""
    question = _question()
    fixes = (
        "import helpers.devices\n\n\ndef stage_devices():\n"
        "    first, second = helpers.devices.try_gpu(0), helpers.devices.try_gpu(1)\n"
        "    if second.type == 'cpu':\n"
        "        second = first\n"
        "    return first, second",
        "import helpers.devices\n\n\ndef stage_devices():\n"
        "    usable = helpers.devices.try_all_gpus()\n"
        "    return [str(usable[0]), str(usable[-1])]",
    )
    for code in fixes:
        outcome = evaluate(question, code)
        assert outcome.correct, outcome.message


def test_a_stage_on_a_device_without_an_index_or_too_many_values_is_told_so() -> None:
    question = _question()
    no_index = (
        "def stage_devices():\n"
        "    if torch.accelerator.is_available():\n"
        "        kind = torch.accelerator.current_accelerator().type\n"
        "        return torch.device(kind), torch.device(kind)\n"
        "    return torch.device('cpu'), torch.device('cpu')"
    )
    assert "name the index (cuda:0)" in evaluate(question, no_index).message
    three = "def stage_devices():\n    return torch.device('cpu'), torch.device('cpu'), torch.device('cpu')"
    assert "returned 3 values: return two" in evaluate(question, three).message


def _question_named(variable: str):
    return next(q for q in ch01.QUESTIONS if q.variable == variable)


def test_the_solution_gives_the_cpu_for_a_negative_index_on_every_machine() -> None:
    """ "torch.device('cpu') when there is no such device": device -1 is none (it raised on a GPU before)."""
    namespace = run_in_notebook(_question_named("try_gpu"), _question_named("try_gpu").solution_code)
    for m in MACHINES:
        assert ask(namespace["try_gpu"], m, "try_gpu(-1)", -1) == torch.device("cpu"), m.name


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2, reason="one CPU")
def test_the_cpus_allowed_are_not_the_lowest_and_leave_gaps() -> None:
    question = _question_named("count_usable_cpus")
    code = (
        "seen = []\n\n\n"
        "def count_usable_cpus():\n"
        "    seen.append(sorted(os.sched_getaffinity(0)))\n"
        "    return len(seen[-1])"
    )
    namespace = run_in_notebook(question, code)
    assert question.evaluate(namespace).correct
    allowed = sorted(os.sched_getaffinity(0))
    assert namespace["seen"][0] == [allowed[-1]], "one CPU, not the lowest"
    if len(allowed) >= 3:
        assert namespace["seen"][1] == [allowed[-3], allowed[-1]], "two CPUs with a gap between them"
    assert namespace["seen"][-1] == allowed


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2, reason="one CPU")
def test_the_machine_count_torch_threads_and_a_fixed_answer_are_named_only_where_seen() -> None:
    question = _question_named("count_usable_cpus")
    told = evaluate(question, "def count_usable_cpus():\n    return os.cpu_count()").message
    assert "is the machine's count, os.cpu_count()" in told and "torch" not in told, told
    told = evaluate(question, "def count_usable_cpus():\n    return torch.get_num_threads()").message
    assert "is torch.get_num_threads(), which the check set" in told and "os.cpu_count()" not in told, told
    for code in (
        f"def count_usable_cpus():\n    return {os.cpu_count()}",
        "usable = len(os.sched_getaffinity(0))\n\n\ndef count_usable_cpus():\n    return usable",
    ):
        told = evaluate(question, code).message
        assert "os.cpu_count()" not in told and "whatever CPUs were allowed" in told, told
        assert "each time" not in told and "did not call" not in told, "it says what was seen, not what the code does"
    proc = (  # Cpus_allowed_list read by commas: "0-1" counts as one
        "def count_usable_cpus():\n"
        "    for line in open('/proc/self/status'):\n"
        "        if line.startswith('Cpus_allowed_list'):\n"
        "            return len(line.split(':')[1].split(','))"
    )
    told = evaluate(question, proc).message
    assert "expected" in told and "did not call" not in told, told
    highest = evaluate(question, "def count_usable_cpus():\n    return max(os.sched_getaffinity(0)) + 1").message
    assert "whatever CPUs" not in highest, "it asks os.sched_getaffinity each time: no hint to ask it"
    omp = "def count_usable_cpus():\n    return int(os.environ.get('OMP_NUM_THREADS', len(os.sched_getaffinity(0))))"
    told = evaluate(question, omp).message
    assert "expected 1" in told and "torch.get_num_threads()" not in told, "torch's threads were not asked: not named"


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no per-process CPU set")
def test_the_check_sets_back_the_cpus_allowed_and_torchs_threads() -> None:
    question = _question_named("count_usable_cpus")
    allowed, threads, omp = os.sched_getaffinity(0), torch.get_num_threads(), os.environ.get("OMP_NUM_THREADS")
    code = (
        "seen = []\n\n\ndef count_usable_cpus():\n"
        "    seen.append((torch.get_num_threads(), os.environ['OMP_NUM_THREADS']))\n"
        "    return 0"
    )
    seen = run_in_notebook(question, code)
    assert not question.evaluate(seen).correct
    (first, first_omp), (last, last_omp) = seen["seen"][0], seen["seen"][-1]
    assert first != 1 and last != len(allowed), "torch's threads are not the CPUs allowed"
    assert first_omp == str(first + 3), "one CPU allowed: OMP_NUM_THREADS more than it"
    assert len(allowed) == 1 or int(last_omp) < len(allowed), "several allowed: OMP_NUM_THREADS fewer than them"
    assert os.sched_getaffinity(0) == allowed and torch.get_num_threads() == threads
    assert os.environ.get("OMP_NUM_THREADS") == omp, "OMP_NUM_THREADS is set back"
