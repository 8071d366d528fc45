"""helpers.environment: the diagnosis of every kind of machine, the report, the stamp."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch

from helpers import environment as env
from helpers.environment import Gpu, Machine, build_supports, diagnose


def example_machines() -> dict[str, Machine]:
    """Machines learners meet, described by hand.

    The arch list is the one torch 2.10's CUDA 12.8 wheel (Kaggle's build) reports, with no sm_60
    (docs/sources.md §2); read your own with `torch.cuda.get_arch_list()`.
    """
    modern = ("sm_70", "sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120")
    gib = 2**30

    def t4(i: int) -> Gpu:
        return Gpu(i, "Tesla T4", 15 * gib, (7, 5), 40)

    return {
        "Kaggle, GPU T4 ×2": Machine(
            "2.10.0+cu128",
            "12.8",
            "cuda",
            (t4(0), t4(1)),
            modern,
            driver_gpu_count=2,
            cpus_usable=4,
            cpus_machine=4,
            torch_threads=4,
            on_kaggle=True,
        ),
        "Kaggle, accelerator off": Machine(
            "2.10.0+cu128", "12.8", None, (), modern, cpus_usable=4, cpus_machine=4, torch_threads=4, on_kaggle=True
        ),
        "an old P100 with a modern torch": Machine(
            "2.10.0+cu128",
            "12.8",
            "cuda",
            (Gpu(0, "Tesla P100-PCIE-16GB", 16 * gib, (6, 0), 56),),
            modern,
            driver_gpu_count=1,
            cpus_usable=4,
            cpus_machine=4,
            torch_threads=4,
        ),
        "a GPU box with CPU-only torch": Machine(
            "2.13.0+cpu", None, None, (), (), driver_gpu_count=1, cpus_usable=8, cpus_machine=8, torch_threads=8
        ),
        "GPUs hidden by CUDA_VISIBLE_DEVICES": Machine(
            "2.13.0+cu128",
            "12.8",
            None,
            (),
            modern,
            cuda_visible_devices="",
            driver_gpu_count=2,
            cpus_usable=8,
            cpus_machine=8,
            torch_threads=8,
        ),
        "a CUDA build of torch without a driver": Machine(
            "2.10.0+cu128", "12.8", None, (), modern, cpus_usable=2, cpus_machine=2, torch_threads=2
        ),
        "a laptop without a GPU": Machine(
            "2.13.0+cpu", None, None, (), (), cpus_usable=2, cpus_machine=8, torch_threads=8
        ),
    }


MACHINES = example_machines()


def levels(m: Machine) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {"ok": [], "note": [], "problem": []}
    for f in diagnose(m):
        out[f.level].append(f.message + " | " + f.fix)
    return out


def test_two_t4s_on_kaggle_are_fine() -> None:
    found = levels(MACHINES["Kaggle, GPU T4 ×2"])
    assert not found["problem"]
    assert any("2 CUDA GPUs" in m and "Tesla T4" in m for m in found["ok"])


def test_a_p100_on_a_modern_build_is_named_as_the_problem_with_the_fix() -> None:
    found = levels(MACHINES["an old P100 with a modern torch"])
    assert len(found["problem"]) == 1
    message = found["problem"][0]
    assert "sm_60" in message and "no kernel image" in message and "GPU T4 ×2" in message


def test_no_gpu_says_how_to_get_one() -> None:
    found = levels(MACHINES["a laptop without a GPU"])
    assert not found["problem"]
    assert any("Accelerator → GPU T4 ×2" in m for m in found["note"])
    kaggle_off = levels(MACHINES["Kaggle, accelerator off"])
    assert any("accelerator is off" in m for m in kaggle_off["note"])


def test_a_cuda_build_without_a_driver_names_the_error_and_both_fixes() -> None:
    found = levels(MACHINES["a CUDA build of torch without a driver"])
    assert not found["problem"]
    (note,) = [n for n in found["note"] if "Found no NVIDIA driver" in n]
    assert "install its driver" in note and "CPU build" in note and "GPU T4 ×2" in note
    kaggle_off = levels(MACHINES["Kaggle, accelerator off"])
    assert any("Found no NVIDIA driver" in n and "Accelerator → GPU T4 ×2" in n for n in kaggle_off["note"])
    cpu_build = levels(MACHINES["a laptop without a GPU"])
    assert not any("Found no NVIDIA driver" in n for n in cpu_build["note"]), "a CPU-only build never raises it"


def test_cpu_only_build_on_a_gpu_machine_is_a_problem() -> None:
    found = levels(MACHINES["a GPU box with CPU-only torch"])
    assert any("built without CUDA" in m and "CUDA build" in m for m in found["problem"])


def test_hidden_gpus_are_a_problem() -> None:
    found = levels(MACHINES["GPUs hidden by CUDA_VISIBLE_DEVICES"])
    assert any("CUDA_VISIBLE_DEVICES='' hides every GPU" in m and "the 2 GPU(s)" in m for m in found["problem"])
    for value in ("-1", "none", "NoDevFiles"):
        m = replace(MACHINES["GPUs hidden by CUDA_VISIBLE_DEVICES"], cuda_visible_devices=value)
        assert levels(m)["problem"], value


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("garbage", "'garbage' is not an index or a GPU-/MIG- UUID, and CUDA stops reading at the first bad entry"),
        ("cuda:1", "'cuda:1' is not an index or a GPU-/MIG- UUID"),
        ("5", "'5' names no GPU (this machine has GPUs 0 to 1)"),
        ("1,0,1", "'1' is listed twice, and an entry listed twice hides them all"),
        (",0", "'' is empty"),
        ("-1,0", "'-1' is negative"),
    ],
)
def test_a_value_that_hides_every_gpu_is_named_not_the_driver(value: str, why: str) -> None:
    """The first edition blamed the driver's CUDA version for these; the value hides every GPU."""
    m = replace(MACHINES["GPUs hidden by CUDA_VISIBLE_DEVICES"], cuda_visible_devices=value)
    (problem,) = levels(m)["problem"]
    assert problem.startswith(f"CUDA_VISIBLE_DEVICES={value!r} hides every GPU: {why}"), problem
    assert "driver supports" not in problem and "Unset CUDA_VISIBLE_DEVICES" in problem


@pytest.mark.parametrize(
    ("value", "kind", "entries", "bad"),
    [
        (None, "all", (), None),
        ("", "index", (), ""),
        ("0", "index", ("0",), None),
        ("1,0", "index", ("1", "0"), None),  # CUDA's order: GPU 1 becomes cuda:0
        (" 2 , 1", "index", ("2", "1"), None),  # spaces around an index are ignored
        ("1gpu,0", "index", ("1", "0"), None),  # an index is read like strtoul: leading digits
        ("0,2,-1,1", "index", ("0", "2"), "-1"),  # the CUDA guide's own example
        ("0,garbage,1", "index", ("0",), "garbage"),  # a bad entry hides every entry after it
        ("0,GPU-8932f937", "index", ("0",), "GPU-8932f937"),  # one kind per list
        ("0,1,0", "index", (), "0"),  # a repeated index hides every GPU
        ("GPU-8932f937-d72c-4106-c12f-20bd9faed9f6", "GPU-", ("GPU-8932f937-d72c-4106-c12f-20bd9faed9f6",), None),
        ("GPU-8932f937,GPU-1a2b", "GPU-", ("GPU-8932f937", "GPU-1a2b"), None),  # prefixes of UUIDs
        ("GPU-8932f937,1", "GPU-", ("GPU-8932f937",), "1"),
        ("GPU-8932f937,GPU-8932f937", "GPU-", (), "GPU-8932f937"),
        ("MIG-GPU-8932f937/1/0,MIG-5c2a", "MIG-", ("MIG-GPU-8932f937/1/0", "MIG-5c2a"), None),
    ],
)
def test_parse_visible_devices_reads_every_form(
    value: str | None, kind: str, entries: tuple[str, ...], bad: str | None
) -> None:
    seen = env.parse_visible_devices(value)
    assert (seen.kind, seen.entries, seen.bad) == (kind, entries, bad)
    assert seen.hides_all is (value is not None and not entries)


def test_an_index_past_the_last_gpu_hides_it_and_every_entry_after_it() -> None:
    seen = env.parse_visible_devices("1,3,0")
    assert seen.visible_count(None) == 3, "without the machine, every readable index counts"
    assert seen.visible_count(4) == 3 and seen.visible_count(2) == 1 and seen.visible_count(1) == 0
    assert env.parse_visible_devices(None).visible_count(2) == 2
    assert env.parse_visible_devices("GPU-1a2b").visible_count(2) is None, "which UUID matches, only the driver knows"


def test_the_description_says_what_is_shown_and_what_is_hidden() -> None:
    assert env.describe_visible_devices(None) == ""
    assert env.describe_visible_devices("1,0", 2) == (
        "CUDA_VISIBLE_DEVICES='1,0' shows GPUs 1, 0 (torch numbers them from 0, in this order)"
    )
    partial = env.describe_visible_devices("0,garbage,1", 2)
    assert partial.startswith("CUDA_VISIBLE_DEVICES='0,garbage,1' shows GPU 0 (torch calls it cuda:0)")
    assert "hides the rest: 'garbage' is not an index" in partial
    uuid = env.describe_visible_devices("GPU-8932f937", 2)
    assert "selects 1 GPU by UUID ('GPU-8932f937')" in uuid and "nvidia-smi -L" in uuid


def test_a_long_value_is_shortened_in_every_message() -> None:
    value = "7" + "x" * 4999
    m = replace(MACHINES["GPUs hidden by CUDA_VISIBLE_DEVICES"], cuda_visible_devices="garbage" * 700)
    text = env.report(m)
    assert "… (4,900 characters)" in text and "garbage" * 20 not in text
    assert max(len(line) for line in text.splitlines()) < 400
    assert env.echo_value(value) == repr(value[:60]) + "… (5,000 characters)"
    assert env.echo_value("0,1") == "'0,1'"


def test_uuids_that_match_no_gpu_are_the_problem_named() -> None:
    m = replace(MACHINES["GPUs hidden by CUDA_VISIBLE_DEVICES"], cuda_visible_devices="GPU-ffff")
    (problem,) = levels(m)["problem"]
    assert "by UUID ('GPU-ffff')" in problem and "no UUID listed matches one" in problem and "nvidia-smi -L" in problem


def test_a_partly_hidden_machine_gets_a_note() -> None:
    one = (Gpu(0, "Tesla T4", 15 * 2**30, (7, 5), 40),)
    m = replace(MACHINES["Kaggle, GPU T4 ×2"], gpus=one, cuda_visible_devices="1")
    assert any("shows GPU 1 (torch calls it cuda:0)" in n and "1 of the 2 GPUs" in n for n in levels(m)["note"])
    m = replace(m, cuda_visible_devices="1,oops,0")
    assert any("hides the rest: 'oops' is not an index" in n for n in levels(m)["note"])


def test_driver_sees_gpus_that_torch_does_not() -> None:
    m = Machine("2.13.0+cu128", "12.8", None, (), ("sm_80",), driver_gpu_count=1)
    assert any("torch sees none" in p for p in levels(m)["problem"])


def test_too_many_threads_is_noted() -> None:
    assert any("threads compete" in n for n in levels(MACHINES["a laptop without a GPU"])["note"])


@pytest.mark.parametrize(
    ("capability", "archs", "expected"),
    [
        ((7, 5), ("sm_75",), True),
        ((7, 5), ("sm_70",), True),  # same major, lower minor: binary compatible
        ((7, 0), ("sm_75",), False),  # a newer minor does not run on an older GPU
        ((8, 0), ("sm_75",), False),  # machine code is not forward compatible across majors
        ((8, 0), ("compute_75",), True),  # PTX is, by JIT compilation
        ((6, 0), ("sm_75", "sm_80", "compute_90"), False),
        ((9, 0), ("sm_90a",), True),
        ((12, 1), ("sm_120a",), False),  # an architecture-specific target runs on exactly that capability
        ((12, 1), ("sm_120",), True),
        ((10, 0), ("compute_90a",), False),  # nor is its PTX compiled for newer GPUs
        ((10, 3), ("sm_100f",), True),  # a family target runs like plain machine code
        ((9, 0), ("weird",), False),
    ],
)
def test_build_supports(capability: tuple[int, int], archs: tuple[str, ...], expected: bool) -> None:
    assert build_supports(capability, archs) is expected


def test_describe_machine_matches_torch() -> None:
    m = env.describe_machine()
    assert m.torch_version == torch.__version__
    assert len(m.gpus) == (torch.cuda.device_count() if torch.cuda.is_available() else 0)
    assert 1 <= m.cpus_usable <= m.cpus_machine


def test_report_and_one_line_name_the_essentials() -> None:
    m = MACHINES["Kaggle, GPU T4 ×2"]
    text = env.report(m)
    assert "Tesla T4" in text and "sm_75" in text and "Diagnosis" in text and "on Kaggle: yes" in text
    line = env.one_line(m)
    assert line.startswith("Running on: 2× Tesla T4 |") and "CUDA 12.8" in line and "Kaggle" in line
    assert env.one_line(MACHINES["a laptop without a GPU"]).startswith("Running on: CPU only |")


def test_stamp_names_hardware_versions_and_date() -> None:
    s = env.stamp(MACHINES["Kaggle, GPU T4 ×2"])
    assert "Tesla T4" in s and "torch 2.10.0+cu128" in s and "CUDA 12.8" in s
    assert torch.__version__ in env.stamp()


def test_on_kaggle_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAGGLE_KERNEL_RUN_TYPE", "Interactive")
    assert env.running_on_kaggle()
