"""Chapter 00's checker beyond the wrong answers tests/wrong_answers/ states: the stand-in machines answer
as the machines they stand for, and a verdict says what differed without guessing at a cause."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
import torch

from helpers import standins
from helpers.answers import Wrong
from helpers.exercises import ch00

from .answers import evaluate


def _first_cuda_use() -> str:
    try:
        torch.zeros(1, device="cuda")
    except Exception as error:
        return type(error).__name__
    return "nothing raised"


def _machine(name: str) -> ch00.Machine:
    return next(m for m in ch00.MACHINES if m.name == name)


def _flags() -> tuple:
    """What a learner's code can ask about the build and the current device, each answer or what it raised."""
    answers = []
    for query in (
        lambda: torch.version.cuda is not None,
        torch.backends.cuda.is_built,
        torch.backends.mps.is_built,
        torch.mps.is_available,
        lambda: torch.device(0),
        torch.accelerator.current_device_index,
        torch.cuda.current_device,
    ):
        try:
            answers.append(query())
        except Exception as error:
            answers.append(type(error).__name__)
    return tuple(answers)


#: Each stand-in's answers to `_flags`, as on the machine it stands for (docs/sources.md §5, chapter 01 section 2).
CUDA0, MPS0, RAISES, NOT_COMPILED = torch.device("cuda", 0), torch.device("mps", 0), "RuntimeError", "AssertionError"
FLAGS = {
    "a CPU-only build of torch": (False, False, False, False, RAISES, RAISES, NOT_COMPILED),
    "a CPU-only build of torch on a machine with an NVIDIA GPU (nvidia-smi lists it)": (
        *(False, False, False, False),
        *(RAISES, RAISES, NOT_COMPILED),
    ),
    "Kaggle with the accelerator off (a CUDA build of torch without a driver)": (
        True,
        True,
        False,
        False,
        CUDA0,
        RAISES,
        RAISES,
    ),  # no driver
    "a CUDA build of torch whose driver is too old for it (nvidia-smi lists a GPU)": (
        *(True, True, False, False),
        *(CUDA0, RAISES, RAISES),
    ),
    "an mps build of torch on a Mac that cannot use mps": (False, False, True, False, MPS0, 0, NOT_COMPILED),
    "a machine with one CUDA GPU": (True, True, False, False, CUDA0, 0, 0),
    "a Mac with Apple's mps": (False, False, True, True, MPS0, 0, NOT_COMPILED),
}


@pytest.mark.parametrize("name", FLAGS)
def test_each_stand_in_answers_and_raises_as_the_machine_it_stands_for(name: str) -> None:
    m = _machine(name)
    assert ch00.ask(_flags, m, "flags()", may_raise=True) == FLAGS[name]
    with standins.pretend_machine(m.usable, m.count, built=m.built):  # the public stand-in answers the same
        assert _flags() == FLAGS[name]
    if m.usable != "cuda":  # the first CUDA use raises as there: not compiled, or no driver
        assert ch00.ask(_first_cuda_use, m, "use()", may_raise=True) == (
            "RuntimeError" if m.built == "cuda" else "AssertionError"
        )
    else:
        with pytest.raises(Wrong, match=f"on {m.name}, use\\(\\) ran CUDA code"):
            ch00.ask(_first_cuda_use, m, "use()")
    assert isinstance(ch00.ask(lambda: torch.device("cpu"), m, "cpu()"), torch.device)
    assert ch00.ask(lambda: isinstance(torch.device("cpu"), torch.device), m, "is_device()") is True


def test_an_answer_that_gives_the_same_everywhere_is_told_that_and_no_guess_at_why() -> None:
    """on_machines (chapter 01's checkers use it) tells what was seen; not to "ask torch each time" (torch's
    get_default_device() does, and is the same everywhere)."""
    usable = lambda m, got: "" if got == ch00.devices(m)[0] else f"the usable device there is {ch00.devices(m)[0]}"
    check = ch00.on_machines("pick", "no arguments", torch.device, "a torch.device", usable)
    for same in (lambda: torch.device("cuda"), torch.get_default_device):
        with pytest.raises(Wrong) as told:
            check(same)
        assert "(as on every machine); the usable device there is" in str(told.value), told.value
        assert "ask" not in str(told.value) and "whatever" not in str(told.value), "what was seen, not what it means"
    with pytest.raises(Wrong) as told:
        check(lambda: torch.device("cuda" if torch.version.cuda else "cpu"))
    assert "as on every machine" not in str(told.value)


#: Questions 1 and 2's machines as chapter 00's stand-ins (Machine: name, usable, count, built, listed, visible).
PREDICTED = {
    "accelerators": {
        "A": ch00.Machine("Kaggle, T4 x2, CUDA_VISIBLE_DEVICES=''", None, 0, "cuda", 2, ""),
        "B": ch00.Machine("a Mac", "mps", 1, "mps", 0),
        "C": ch00.Machine("a CPU-only wheel beside a GPU", None, 0, None, 1),
        "D": ch00.Machine("Kaggle, T4 x2, CUDA_VISIBLE_DEVICES='1'", "cuda", 1, "cuda", 2, "1"),
    },
    "counts": {
        "A": ch00.Machine("four GPUs, a driver too old", None, 0, "cuda", 4),
        "B": ch00.Machine("Kaggle, T4 x2, CUDA_VISIBLE_DEVICES='1'", "cuda", 1, "cuda", 2, "1"),
        "C": ch00.Machine("Kaggle, T4 x2, CUDA_VISIBLE_DEVICES='2' (no such GPU)", None, 0, "cuda", 2, "2"),
        "D": ch00.Machine("a P100 (a GPU the build has no kernels for is still counted)", "cuda", 1, "cuda", 1),
    },
}


def _accelerators() -> tuple:
    return tuple(getattr(torch.accelerator.current_accelerator(c), "type", None) for c in (False, True))


@pytest.mark.parametrize("name", PREDICTED)
def test_the_predictions_checked_are_what_the_stand_in_machines_answer(name: str) -> None:
    """Each machine's right answer in questions 1 and 2 is what torch's queries give on the pretend machine (whose
    answers the tests above hold to the real stacks), and nvidia-smi lists what the driver has there."""
    truths = {"accelerators": ch00._ACCELERATORS, "counts": ch00._COUNTS}[name]
    counts = lambda: (torch.cuda.is_available(), torch.cuda.device_count(), _nvidia_smi() or 0)
    for letter, m in PREDICTED[name].items():
        assert ch00.ask(_accelerators if name == "accelerators" else counts, m, "facts()") == truths[letter], letter


def test_device_count_counts_what_nvml_lists_and_cuda_visible_devices_leaves() -> None:
    """torch's own device_count(), not a stand-in: before CUDA starts it counts the GPUs NVML lists (the driver's
    library, which a driver too old for the build still answers), as CUDA_VISIBLE_DEVICES leaves them, while
    is_available() asks CUDA; a CPU-only build counts none; the count stops at an index NVML lacks (question 2's
    machines A, B and C; section 3)."""
    if torch.cuda.is_available() or torch.cuda.is_initialized():
        pytest.skip("CUDA works or has started here: device_count() then asks CUDA")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(torch.cuda, "_raw_device_count_nvml", lambda: 4)  # NVML answering for four GPUs
        for visible, cuda_counts in ((None, 4), ("1", 1), ("", 0), ("0,3", 2), ("4", 0), ("1,7,2", 1)):
            if visible is None:
                patch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
            else:
                patch.setenv("CUDA_VISIBLE_DEVICES", visible)
            assert torch.cuda.device_count() == (cuda_counts if torch.version.cuda else 0), visible
        assert not torch.cuda.is_available(), "CUDA itself still has no GPU to use"


def test_get_arch_list_is_the_builds_list_or_empty_where_cuda_is_not_usable() -> None:
    """Section 4: where CUDA is not usable some releases answer [] (2.10), others the build's list (2.13, 2.15)."""
    arch_list = torch.cuda.get_arch_list()
    if not torch.cuda.is_available():
        assert arch_list in ([], torch._C._cuda_getArchFlags().split() if torch.version.cuda else [])


def _gpu_facts() -> tuple:
    """What a learner's code can ask about the GPUs and the kernels torch ships, each answer or what it raised."""
    answers = []
    for query in (
        torch.cuda.get_arch_list,
        lambda: (torch.cuda.device_count(), torch.accelerator.device_count(), torch.backends.cudnn.is_available()),
        torch.cuda.get_device_capability,
        lambda: torch.cuda.get_device_name(torch.device("cuda", 0)),
        lambda: torch.cuda.get_device_properties("cuda:1").total_memory,
        lambda: torch.cuda.get_device_capability(-1),
    ):
        try:
            answers.append(query())
        except Exception as error:
            answers.append(type(error).__name__)
    return tuple(answers)


@pytest.mark.parametrize("m", ch00.MACHINES, ids=lambda m: m.name)
def test_the_gpus_capability_name_and_the_kernels_answer_as_on_the_machine(m: ch00.Machine) -> None:
    """Each pretend CUDA GPU is a T4 (7.5), past the last or a negative one raises AssertionError as torch's does; a
    CUDA build lists a wheel's kernels, but none where no GPU is usable or listed (torch 2.10's answer; 2.13 lists them
    there too: both are tried), and elsewhere a query of a GPU raises as CUDA's first use. torch.cuda.device_count()
    counts the GPUs of a driver too old for the build (through NVML, as torch 2.10 and 2.15 do), and so does
    torch.accelerator's (it asks torch.cuda's), and a CUDA wheel has cuDNN, driver or not."""
    arch_list, counts, capability, name, memory, negative = ch00.ask(_gpu_facts, m, "facts()", may_raise=True)
    cuda, counted = m.built == "cuda", m.listed * (m.visible != "")  # CUDA_VISIBLE_DEVICES="" hides them all
    assert arch_list == (["sm_75", "sm_80", "sm_86", "sm_90", "compute_90"] if cuda and m.count + m.listed else [])
    assert counts == ((m.count if m.usable == "cuda" else counted * cuda), m.count or counted * cuda, cuda)
    if m.usable != "cuda":
        first_use = "RuntimeError" if m.built == "cuda" else "AssertionError"
        assert (capability, name, memory, negative) == (first_use,) * 4
        return
    assert (capability, name, negative) == ((7, 5), "Tesla T4", "AssertionError")
    assert memory == (15 * 2**30 if m.count > 1 else "AssertionError"), "cuda:1 is past the last of one GPU"
    with pytest.raises(Wrong, match="ran CUDA code"):  # memory in use is not a query the pretend GPUs answer
        ch00.ask(torch.cuda.mem_get_info, m, "free()")


def test_a_wrong_answer_is_told_the_call_and_what_differed_only() -> None:
    question = next(q for q in ch00.QUESTIONS if q.variable == "has_kernels_for")
    always_true = "def has_kernels_for(capability, arch_list):\n    return len(arch_list) > 0"
    message = evaluate(question, always_true).message
    assert message == (
        "Not yet: has_kernels_for((6, 0), ['sm_75', 'sm_80', 'sm_86', 'sm_90', 'compute_90']) returned True; "
        "expected False"
    ), message
    crashes_on_letters = (
        "def has_kernels_for(capability, arch_list):\n"
        "    major, minor = capability\n"
        "    return any(int(a.split('_')[1]) // 10 == major and int(a.split('_')[1]) % 10 <= minor\n"
        "               or (a.startswith('compute') and int(a.split('_')[1]) <= major * 10 + minor)\n"
        "               for a in arch_list)"
    )
    outcome = evaluate(question, crashes_on_letters)
    assert not outcome.correct and "ValueError" in outcome.message and "'120a'" in outcome.message, outcome.message


def _nvidia_smi() -> int | None:
    """How many GPUs nvidia-smi -L lists, found on PATH as a learner's code finds it; None where there is none."""
    if shutil.which("nvidia-smi") is None:
        return None
    listing = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30, check=True).stdout
    return sum(line.startswith("GPU ") for line in listing.splitlines())


@pytest.mark.skipif(sys.platform == "win32", reason="the stand-in nvidia-smi is a shell script")
def test_nvidia_smi_answers_where_the_stand_in_has_a_driver_and_is_absent_elsewhere() -> None:
    """Whatever this machine has: nvidia-smi shows what the driver sees, not what torch can use."""
    path = os.environ.get("PATH")
    for m in ch00.MACHINES:
        assert ch00.ask(_nvidia_smi, m, "smi()") == (m.listed or None), m.name
    assert os.environ.get("PATH") == path, "PATH is set back"
    assert any(m.listed and not m.usable for m in ch00.MACHINES), "a driver that lists a GPU torch cannot use"


def test_the_current_device_left_as_it_was_and_a_negative_index_refused_are_not_held_against_an_answer() -> None:
    """A stand-in refuses set_device (it outlasts the call) instead of raising torch's own 'no accelerator' error; where
    there are two GPUs or more the current device is 1 at first, so setting 0 tells too, and reading it answers 1."""
    gpu = next(m for m in ch00.MACHINES if m.usable == "cuda")
    assert ch00.ask(lambda: torch.accelerator.set_device_index(0), gpu, "set()") is None, "0 was current already"
    two = next(m for m in ch00.MACHINES if m.count == 2)
    assert ch00.ask(lambda: torch.cuda.set_device(1), two, "set()") is None, "1 was current already"
    for set_0 in (lambda: torch.cuda.set_device(0), lambda: torch.accelerator.set_device_index(0)):
        with pytest.raises(Wrong, match=r"left the current device at 0 \(it was 1\): put it back"):
            ch00.ask(set_0, two, "set()")
    current = lambda: (torch.cuda.current_device(), torch.accelerator.current_device_index())
    assert ch00.ask(current, two, "current()") == (1, 1)

    def inside_a_block() -> int:
        with torch.cuda.device(0):
            return torch.accelerator.current_device_index()

    assert ch00.ask(inside_a_block, two, "block()") == 0, "the block sets 0 and gives 1 back"
    with pytest.raises(Wrong, match="raised"):  # as there: no device 2
        ch00.ask(lambda: torch.accelerator.set_device_index(2), two, "set()")
    assert ch00.ask(lambda: torch.cuda.set_device(-1), two, "set()") is None, "a negative index: a no-op"
    before = os.environ.get("KAGGLE_KERNEL_RUN_TYPE")
    kaggle = {m.name for m in ch00.MACHINES if ch00.ask(lambda: "KAGGLE_KERNEL_RUN_TYPE" in os.environ, m, "k()")}
    assert kaggle == {m.name for m in ch00.MACHINES if "Kaggle" in m.name} and len(kaggle) == 2
    assert os.environ.get("KAGGLE_KERNEL_RUN_TYPE") == before, "KAGGLE_KERNEL_RUN_TYPE is set back"
    assert isinstance(ch00.ask(lambda: torch.device("cuda", -1), gpu, "neg()", may_raise=True), RuntimeError)


def test_pretend_machine_a_driver_too_old_and_the_current_device() -> None:
    """torch.cuda and torch.accelerator count a too-old driver's GPUs (NVML) while none is usable; the current device
    starts where asked, torch's setters and blocks change it, and the block gets it to read after."""
    with standins.pretend_machine(None, built="cuda", listed=2):
        assert (torch.cuda.device_count(), torch.accelerator.device_count(), torch.cuda.is_available()) == (2, 2, False)
        assert torch.backends.cudnn.is_available(), "a CUDA wheel ships cuDNN, driver or not"
        with pytest.raises(RuntimeError, match="too old"):
            torch.cuda.current_device()
        with pytest.raises(RuntimeError):
            torch.cuda.set_device(0)
    with standins.pretend_machine("cuda", 2, current=1) as current:
        assert (torch.cuda.current_device(), torch.accelerator.current_device_index()) == (1, 1)
        with torch.cuda.device(0):
            assert torch.cuda.current_device() == 0
        assert current == [1], "the block gave 1 back"
        torch.cuda.set_device(-1)
        with pytest.raises(RuntimeError, match="invalid device ordinal"):
            torch.accelerator.set_device_index(2)
        torch.accelerator.set_device_index(0)
    assert current == [0]
