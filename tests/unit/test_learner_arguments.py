"""Where a learner's own argument reaches the helpers, a mistake gets a clear error that says what to pass.

Those places are few: a device spelling, a GPU count or index, a function handed to a timing
harness, and a worker handed to a launcher (which must be importable by a child process). The
course's own cells call everything else with literal arguments, so nothing else is checked.
"""

from __future__ import annotations

import pytest
import torch

import helpers
from helpers import processes, standins, timing
from helpers.devices import DeviceError, usable_device


@pytest.mark.parametrize(
    ("machine", "spelling", "words"),
    [
        ((None, 0, None), "cuda:9", "not usable here: this machine has no usable cuda device; pass 'cpu'"),
        ((None, 0, None), "gpu", "not a device torch knows; pass 'cpu', 'cuda'"),
        ((None, 0, None), "mps", "no usable mps device"),
        ((None, 0, "cuda"), "cuda", "not usable here"),  # a CUDA build without a driver: decided by is_available()
        (("cuda", 2, None), "cuda:2", "does not exist: this machine has 2 cuda device(s), numbered from 0"),
        (("mps", 1, None), "cuda", "no usable cuda device"),
    ],
)
def test_a_bad_device_is_refused_saying_what_to_pass(machine: tuple, spelling: str, words: str) -> None:
    accelerator, count, built = machine
    with standins.pretend_machine(accelerator, count, built=built), pytest.raises(DeviceError) as refused:
        usable_device(spelling)
    assert words in str(refused.value)
    assert isinstance(refused.value, ValueError) and isinstance(refused.value, RuntimeError)


@pytest.mark.parametrize("value", [0, None, ["cpu"]])
def test_a_device_that_is_not_a_string_or_a_device_is_refused_naming_the_forms(value: object) -> None:
    with pytest.raises(TypeError, match="device must be a device such as 'cpu', 'cuda'"):
        usable_device(value)


@pytest.mark.parametrize(("machine", "spelling"), [((None, 0), "cpu"), ((None, 0), "meta"), (("cuda", 2), "cuda:1")])
def test_a_usable_device_passes(machine: tuple, spelling: str) -> None:
    with standins.pretend_machine(*machine):
        assert usable_device(spelling) == torch.device(spelling)


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: helpers.try_gpu("1"), TypeError, "a device index must be a whole number such as 0 or 1, not '1'"),
        (lambda: helpers.try_gpu(-1), ValueError, "counts from 0, so it cannot be negative"),
        (lambda: helpers.have_gpus(1.5), TypeError, "a device index must be a whole number"),
        (lambda: helpers.have_gpus(-2), ValueError, "cannot be negative"),
        (lambda: helpers.have_gpus(1, 2), TypeError, "task must be a string that says what the cell does"),
    ],
)
def test_a_bad_gpu_count_or_index_says_what_to_pass(call, error: type[Exception], words: str) -> None:  # noqa: ANN001
    with pytest.raises(error, match=words):
        call()


def test_a_timing_harness_refuses_what_is_not_a_function() -> None:
    with pytest.raises(TypeError, match=r"fn must be a function \(something callable\), not 3"):
        timing.wall_seconds(3, "cpu")


def test_a_timing_harness_refuses_a_device_it_cannot_use_before_timing_anything() -> None:
    ran = []
    with pytest.raises(DeviceError, match="not a device torch knows"):
        timing.wall_seconds(lambda: ran.append(1), "gpu")
    assert not ran


def test_a_worker_written_in_the_notebook_is_refused_saying_how_to_write_it_to_a_file() -> None:
    def worker(rank: int, world_size: int) -> int:
        return rank

    worker.__module__ = "__main__"  # as a function defined in a notebook cell is
    with pytest.raises(TypeError, match=r"defined in the notebook .* %%writefile"):
        processes.launch(worker, 2)
