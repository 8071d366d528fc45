"""Hogwild: several processes on shared parameters, results as plain values, nothing left running."""

from __future__ import annotations

import math
import multiprocessing

import pytest

from helpers import hogwild as hw

SMALL = hw.HogwildSetup(samples=512, features=16, hidden=32, classes=4, batch=32, lr=0.1)


def test_two_processes_train_one_shared_model() -> None:
    res = hw.hogwild_train(2, 120, SMALL, timeout=90)
    assert res.processes == 2 and res.steps_per_process == 60
    assert len(res.losses) == 2 and all(len(row) == 60 for row in res.losses)
    assert all(isinstance(v, float) and math.isfinite(v) for row in res.losses for v in row)
    assert res.final_loss < 0.8 * res.initial_loss, "the shared model should have learned"
    assert res.seconds > 0 and res.updates_per_second > 0
    assert multiprocessing.active_children() == []


def test_one_process_is_the_baseline() -> None:
    res = hw.hogwild_train(1, 60, SMALL, timeout=90)
    assert res.processes == 1 and len(res.losses[0]) == 60
    assert res.final_loss < res.initial_loss


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"processes": 0}, ValueError),
        ({"processes": 2, "total_steps": 1}, ValueError),
        ({"timeout": 0}, ValueError),
        ({"processes": 1.5}, ValueError),
    ],
)
def test_bad_arguments(kwargs: dict, error: type) -> None:
    with pytest.raises(error):
        hw.hogwild_train(**kwargs)


def test_setup_rejects_nonsense() -> None:
    with pytest.raises(ValueError, match="batch"):
        hw.HogwildSetup(batch=0)
    with pytest.raises(ValueError, match="lr"):
        hw.HogwildSetup(lr=-1)


def test_shared_tensor_demo_is_seen_by_the_parent() -> None:
    shared = hw.shared_memory_demo(2, timeout=60)
    assert shared == [1.0, 2.0]


def test_a_tensor_passed_to_a_child_is_shared_and_changed_in_place() -> None:
    import torch

    for library in ("torch", "stdlib"):
        t = torch.zeros(3)
        hw.add_one_in_child(t, library, timeout=60)
        assert t.is_shared() and t.tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(ValueError, match="library must be one of torch, stdlib, not 'numpy'"):
        hw.add_one_in_child(torch.zeros(1), "numpy")
    assert multiprocessing.active_children() == []
