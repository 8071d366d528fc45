"""The GPU self-test, run here on a CPU: its child pytest's results, its pass rule, its table, its command line.

The pass rule is that the GPU was used: a GPU the driver lists but torch cannot use fails the run at
once; where torch can use a GPU, a skip that names no missing capability fails; with no GPU at all
the run says that nothing GPU-specific was verified.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from coursetools import kaggle, selftest
from coursetools.selftest import GpuCheck, TestRow

from .notebook_code import write_notebook

ROOT = Path(__file__).resolve().parents[2]
NO_GPU = GpuCheck(listed=None, usable=0)
ONE_GPU = GpuCheck(listed=1, usable=1)


def _gpu_tests_folder(tmp_path: Path, body: str) -> Path:
    """A tests/gpu/ folder with the course's conftest and `missing`, and one test file of `body`."""
    tests = tmp_path / "tests" / "gpu"
    tests.mkdir(parents=True)
    for name in ("__init__.py", "conftest.py", "missing.py"):
        shutil.copy2(ROOT / "tests" / "gpu" / name, tests / name)
    (tests.parent / "__init__.py").write_text("", encoding="utf-8")
    (tests / "test_gpu_ch98.py").write_text(body, encoding="utf-8")
    return tests


EVERY_OUTCOME = """\
import pytest

from .missing import missing


@pytest.fixture
def broken():
    raise RuntimeError("the fixture broke")


def test_passes():
    pass


def test_fails():
    assert 1 + 1 == 3, "arithmetic is broken"


def test_lacks_a_second_gpu():
    missing("a second CUDA GPU", "this machine has one")


def test_skips_without_saying_what_is_missing():
    pytest.skip("not today")


def test_errors_in_setup(broken):
    pass
"""


def test_the_child_reports_every_outcome_as_data_with_the_missing_capability(tmp_path) -> None:
    tests = _gpu_tests_folder(tmp_path, EVERY_OUTCOME)
    run = selftest.run_gpu_tests(tests, marker="not gpu and not gpu2", progress=False)  # these tests carry no mark
    assert run.problem == "", run.output
    rows = {r.test.split("::")[1]: r for r in run.rows}
    assert list(rows) == [
        "test_passes",
        "test_fails",
        "test_lacks_a_second_gpu",
        "test_skips_without_saying_what_is_missing",
        "test_errors_in_setup",
    ]
    assert all(r.test.startswith("test_gpu_ch98.py::") for r in run.rows)
    assert (rows["test_passes"].outcome, rows["test_passes"].message) == ("passed", "")
    assert rows["test_fails"].outcome == "failed" and "arithmetic is broken" in rows["test_fails"].message
    lacks = rows["test_lacks_a_second_gpu"]
    assert (lacks.outcome, lacks.capability) == ("skipped", "a second CUDA GPU")
    assert lacks.message == "needs a second CUDA GPU: this machine has one"
    plain = rows["test_skips_without_saying_what_is_missing"]
    assert (plain.outcome, plain.capability, plain.message) == ("skipped", "", "not today")
    setup = rows["test_errors_in_setup"]
    assert setup.outcome == "error" and setup.message.startswith("in setup: ") and "the fixture broke" in setup.message
    assert run.exit_code == 1


SKIPS = """\
import pytest

from .missing import missing


def test_passes():
    pass


def test_lacks_a_second_gpu():
    missing("a second CUDA GPU", "this machine has one")


def test_skips_without_saying_what_is_missing():
    pytest.skip("not today")
"""


def test_where_torch_can_use_a_gpu_a_skip_that_names_no_capability_fails_the_self_test(tmp_path) -> None:
    run = selftest.run_gpu_tests(_gpu_tests_folder(tmp_path, SKIPS), marker="not gpu and not gpu2", progress=False)
    assert run.problem == "" and run.exit_code == 0, run.output
    report = selftest.SelfTestReport(run.rows, "1× NVIDIA H100 | torch 2.11", ONE_GPU, seconds=1.0)
    outcomes = {r.test.split("::")[1]: (r.outcome, r.message) for r in report.rows}
    assert outcomes["test_passes"] == ("passed", "")
    assert outcomes["test_lacks_a_second_gpu"][0] == "skipped", "a stated missing capability is allowed"
    assert outcomes["test_skips_without_saying_what_is_missing"] == (
        "failed",
        "skipped without naming a missing capability: not today",
    )
    assert not report.ok and not report.gpu_verified and report.summary().startswith("GPU self-test FAILED")
    with pytest.raises(AssertionError, match="test_skips_without_saying_what_is_missing"):
        report.raise_for_failures()
    stated = [r for r in run.rows if not r.test.endswith("test_skips_without_saying_what_is_missing")]
    passing = selftest.SelfTestReport(stated, "1× NVIDIA H100 | torch 2.11", ONE_GPU, seconds=1.0)
    assert passing.ok and passing.gpu_verified and passing.summary().startswith("GPU self-test passed on 1× NVIDIA")
    no_gpu = selftest.SelfTestReport(run.rows, "CPU only | torch 2.13", NO_GPU, seconds=1.0)
    assert no_gpu.ok and not no_gpu.gpu_verified, "without a GPU the rule has nothing to hold the skips to"


def test_without_a_gpu_every_skip_is_allowed_and_the_run_says_nothing_gpu_specific_was_verified(tmp_path) -> None:
    rows = [TestRow("chapter 00_x", "passed", 1.0, device="CPU only"), TestRow("t.py::t", "skipped", 0.0, "no GPU")]
    report = selftest.SelfTestReport(rows, "CPU only | torch 2.13", NO_GPU, seconds=2.0, tests_dir="/x")
    assert report.ok and not report.gpu_verified
    assert report.summary().startswith("No GPU here (CPU only | torch 2.13): nothing GPU-specific was verified.")
    report.raise_for_failures()  # nothing failed
    with pytest.raises(AssertionError, match="nothing GPU-specific was verified.*Accelerator"):
        report.raise_for_failures(require_gpu=True)
    saved = json.loads(selftest.write_results(report, tmp_path / "r.json").read_text(encoding="utf-8"))
    assert (
        saved["ok"] is True
        and saved["gpu_verified"] is False
        and saved["gpu"] == {"listed": None, "usable": 0, "why": ""}
    )


def test_on_cpu_the_course_conftest_skips_every_gpu_test_naming_the_gpu_it_lacks(tmp_path) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU: the tests would run for real")
    tests = _gpu_tests_folder(
        tmp_path,
        "import pytest\n\n"
        "@pytest.mark.gpu\ndef test_one_gpu():\n    assert False, 'must not run on CPU'\n\n"
        "@pytest.mark.gpu2\n@pytest.mark.parametrize('n', [1, 2])\ndef test_two_gpus(n):\n    assert False\n\n"
        "def test_not_a_gpu_test():\n    pass\n",
    )
    run = selftest.run_gpu_tests(tests, progress=False)
    assert run.problem == "", run.output
    assert [r.test for r in run.rows] == [
        "test_gpu_ch98.py::test_one_gpu",
        "test_gpu_ch98.py::test_two_gpus[1]",
        "test_gpu_ch98.py::test_two_gpus[2]",
    ], "only tests marked gpu or gpu2 are selected"
    assert {(r.outcome, r.capability) for r in run.rows} == {("skipped", "a CUDA GPU that torch can use")}
    assert run.rows[0].message.startswith("needs 1 CUDA GPU(s), this machine has 0")
    assert run.rows[1].message.startswith("needs 2 CUDA GPU(s)")
    report = selftest.SelfTestReport(run.rows, "CPU only", NO_GPU)
    assert report.ok and report.table().count("| skipped |") == 3


def test_report_counts_table_html_and_failures() -> None:
    rows = [
        TestRow("test_gpu_ch01.py::test_ok", "passed", 0.25),
        TestRow("test_gpu_ch01.py::test_bad", "failed", 0.5, "AssertionError: 3 GB/s is below 9 GB/s"),
        TestRow("test_gpu_ch02.py::test_two[cuda:1]", "skipped", 0.0, "needs a second CUDA GPU", capability="x"),
        TestRow("test_gpu_ch02.py::test_broken", "error", 0.01, "in setup: fixture 'gpu' not found"),
    ]
    report = selftest.SelfTestReport(rows, "2× Tesla T4 | torch 2.10", GpuCheck(2, 2), seconds=1.5, tests_dir="/x")
    assert report.counts == {"passed": 1, "failed": 1, "error": 1, "skipped": 1}
    assert not report.ok
    table = report.table().splitlines()
    assert table[0] == "| chapter or test | outcome | seconds | device | torch / CUDA | message |"
    assert len(table) == 2 + 4 and all("| 2× Tesla T4 | torch " in row for row in table[2:]), "device and versions"
    assert "2× Tesla T4" in report.summary() and "1 passed, 1 failed, 1 errors, 1 skipped" in report.summary()
    assert "<table>" in report._repr_html_() and "test_two[cuda:1]" in report._repr_html_()
    assert repr(report) == str(report), "plain-text frontends show the summary and table, not a dataclass dump"
    with pytest.raises(AssertionError, match=r"(?s)2 GPU test\(s\) or chapter\(s\) failed.*test_bad.*test_broken"):
        report.raise_for_failures()


def test_missing_tests_or_a_child_that_dies_are_problems_not_passes(tmp_path) -> None:
    run = selftest.run_gpu_tests(tmp_path, progress=False)
    assert "no test_gpu_ch*.py files" in run.problem
    assert selftest.find_gpu_tests(tmp_path) is None
    assert selftest.find_gpu_tests(ROOT) == ROOT / "tests" / "gpu"
    report = selftest.SelfTestReport(run.rows, "CPU only", NO_GPU, problem=run.problem)
    assert not report.ok
    with pytest.raises(AssertionError, match="FAILED"):
        report.raise_for_failures()
    tests = _gpu_tests_folder(
        tmp_path / "dies", "import os\n\ndef test_a():\n    pass\n\ndef test_b():\n    os._exit(3)\n"
    )
    died = selftest.run_gpu_tests(tests, marker="not gpu", progress=False)
    assert died.exit_code == 3 and [r.test.split("::")[1] for r in died.rows] == ["test_a"]
    assert "exit code 3 after 1 test(s)" in died.problem


def _fake_nvidia_smi(folder: Path) -> dict[str, str]:
    """An environment whose PATH has an `nvidia-smi` that lists one GPU, and no GPU for torch to use."""
    folder.mkdir()
    smi = folder / "nvidia-smi"
    smi.write_text("#!/bin/sh\necho 'Tesla T4'\n")  # what `nvidia-smi --query-gpu=name --format=csv,noheader` prints
    smi.chmod(0o755)
    # On a machine with a real GPU, NVML lists it and an empty CUDA_VISIBLE_DEVICES hides it from torch.
    return dict(os.environ, PATH=f"{folder}{os.pathsep}{os.environ['PATH']}", CUDA_VISIBLE_DEVICES="")


@pytest.mark.skipif(sys.platform == "win32", reason="the stand-in nvidia-smi is a shell script")
def test_a_gpu_the_driver_lists_but_torch_cannot_use_fails_the_self_test_before_anything_runs(tmp_path) -> None:
    results = tmp_path / "selftest.json"
    command = [sys.executable, "-m", "coursetools", "selftest", "--json", str(results)]
    done = subprocess.run(
        command, cwd=ROOT, env=_fake_nvidia_smi(tmp_path / "bin"), capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 1, done.stdout + done.stderr
    saved = json.loads(results.read_text(encoding="utf-8"))
    assert saved["ok"] is False and saved["gpu_verified"] is False
    assert saved["gpu"]["listed"] >= 1 and saved["gpu"]["usable"] == 0
    assert saved["rows"] == [], "no chapter and no test ran on the CPU paths"
    assert saved["problem"].startswith("torch cannot use the GPUs here.")
    doctor_says = ("was built without CUDA", "CUDA_VISIBLE_DEVICES='': the variable may hide")  # CPU, CUDA build
    assert any(why in saved["problem"] for why in doctor_says), saved["problem"]


def test_require_gpu_fails_a_run_without_a_gpu_and_names_why(tmp_path) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU: --require-gpu would pass")
    results = tmp_path / "selftest.json"
    command = [sys.executable, "-m", "coursetools", "selftest", "--only", "00", "--no-tests", "--require-gpu"]
    done = subprocess.run([*command, "--json", str(results)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "--require-gpu: this run fails, since torch could use no GPU here." in done.stdout
    saved = json.loads(results.read_text(encoding="utf-8"))
    assert saved["ok"] is True and saved["gpu_verified"] is False, "the chapter passed; no GPU was used"
    assert [r["test"] for r in saved["rows"]] == ["chapter 00_gpu_on_kaggle_and_your_machine"]


@pytest.mark.slow
def test_the_self_test_runs_from_the_helpers_dataset_alone(tmp_path) -> None:
    """On Kaggle the self-test and its tests come from the dataset copy: it must hold everything they import."""
    dataset = kaggle.build_dataset("someone", kaggle.load_settings(), tmp_path)
    results = tmp_path / "selftest.json"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    command = [sys.executable, "-m", "coursetools", "selftest", "--no-chapters", "--json", str(results)]
    done = subprocess.run(command, cwd=dataset, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    saved = json.loads(results.read_text(encoding="utf-8"))
    expected = sorted(p.name for p in (ROOT / "tests" / "gpu").glob("test_gpu_ch*.py"))
    assert sorted({r["test"].split("::")[0] for r in saved["rows"]}) == expected, "every GPU test file was collected"
    assert {r["outcome"] for r in saved["rows"]} <= {"passed", "skipped"}, done.stdout
    other = subprocess.run(
        [sys.executable, "-m", "coursetools", "run"], cwd=dataset, env=env, capture_output=True, text=True, timeout=60
    )
    assert other.returncode == 2 and "carries only the self-test" in other.stdout


def test_the_self_test_executes_chapters_and_tests_into_one_table(tmp_path) -> None:
    books = tmp_path / "notebooks"
    books.mkdir()
    write_notebook(books / "00_good.ipynb", "import helpers\nprint('Running on: test box | torch x')", "assert QUICK")
    write_notebook(books / "01_bad.ipynb", "# a comment first\nraise ValueError('on purpose')")
    write_notebook(books / "02_stalls.ipynb", "x = 1", "import time\ntime.sleep(60)")
    (books / "gpu_self_test.ipynb").write_text("{}", encoding="utf-8")  # not a chapter
    tests = tmp_path / "tests" / "gpu"
    tests.mkdir(parents=True)
    (tests / "test_gpu_ch97.py").write_text("import pytest\n\n@pytest.mark.gpu\ndef test_one():\n    pass\n")
    saved: list[selftest.SelfTestReport] = []
    report = selftest.run_self_test(
        notebooks_dir=books, tests_dir=tests, cell_timeout=5, progress=False, gpu=NO_GPU, checkpoint=saved.append
    )
    assert [len(r.rows) for r in saved] == [3] and "before the GPU tests ran" in saved[0].problem
    assert not saved[0].ok, "a run saved before its tests is never recorded as a pass"
    rows = {r.test: r for r in report.rows}
    assert list(rows)[:3] == ["chapter 00_good", "chapter 01_bad", "chapter 02_stalls"], "chapters first, in order"
    assert rows["chapter 00_good"].outcome == "passed" and rows["chapter 00_good"].device == "test box"
    assert rows["chapter 01_bad"].outcome == "failed" and "on purpose" in rows["chapter 01_bad"].message
    assert "code cell 2 (raise ValueError" in rows["chapter 01_bad"].message, "names the failing cell"
    stalled = rows["chapter 02_stalls"]
    assert (
        stalled.outcome == "failed"
        and "5 s limit" in stalled.message
        and "code cell 3 (import time)" in stalled.message
    )
    assert stalled.seconds < 40, "a stalled cell is stopped at its limit"
    assert "test_gpu_ch97.py::test_one" in rows
    table = report.table()
    assert table.startswith("| chapter or test | outcome | seconds | device | torch / CUDA | message |")
    assert "| chapter 00_good | passed |" in table and "torch " in table
    assert not report.ok
    with pytest.raises(AssertionError, match="01_bad"):
        report.raise_for_failures()
    only = selftest.run_self_test(notebooks_dir=books, only=["00"], tests=False, progress=False, gpu=NO_GPU)
    assert [r.test for r in only.rows] == ["chapter 00_good"] and only.ok


def test_the_kernel_client_re_checks_its_sockets_instead_of_waiting_out_the_cell_limit(monkeypatch) -> None:
    """A missed wake-up must cost one slice, not the cell's whole time limit (see polling_kernel_manager)."""
    import asyncio
    from queue import Empty

    from jupyter_client.channels import AsyncZMQSocketChannel

    from coursetools.execute import polling_kernel_manager

    manager = polling_kernel_manager(slice_seconds=0.01)
    client = manager.class_traits()["client_factory"].default_value
    shell = client.class_traits()["shell_channel_class"].default_value
    assert client.class_traits()["iopub_channel_class"].default_value is shell
    asked: list[float | None] = []

    async def parent_get_msg(self, timeout=None):  # the socket "has" the reply, but only a re-check sees it
        asked.append(timeout)
        if len(asked) < 4:
            raise Empty
        return {"msg_type": "execute_reply"}

    monkeypatch.setattr(AsyncZMQSocketChannel, "get_msg", parent_get_msg)
    channel = object.__new__(shell)
    assert asyncio.run(channel.get_msg(timeout=30)) == {"msg_type": "execute_reply"}
    assert len(asked) == 4 and all(t is not None and t <= 0.01 for t in asked), asked
    asked.clear()
    monkeypatch.setattr(AsyncZMQSocketChannel, "get_msg", lambda self, timeout=None: _never(asked, timeout))
    with pytest.raises(Empty):
        asyncio.run(channel.get_msg(timeout=0.05))
    assert len(asked) >= 2, "the time limit still applies, in slices"


async def _never(asked: list, timeout: float | None) -> dict:
    import asyncio
    from queue import Empty

    asked.append(timeout)
    await asyncio.sleep(timeout or 0)
    raise Empty


def test_a_gpu_torch_sees_but_has_no_kernels_for_is_not_usable() -> None:
    """A P100 (sm_60) under a build that ships sm_70 and newer: torch sees it, every kernel launch would fail."""
    from helpers.environment import Gpu, Machine

    p100 = Gpu(0, "Tesla P100-PCIE-16GB", 16 * 2**30, (6, 0), 56)
    m = Machine("2.10.0+cu128", "12.8", "cuda", (p100,), ("sm_70", "sm_75", "sm_80"), driver_gpus=("Tesla P100",))
    check = selftest.check_gpus(m)
    assert (check.listed, check.usable, check.unusable) == (1, 0, True)
    assert "too old for this torch build" in check.why
    supported = selftest.check_gpus(Machine("2.10.0+cu128", "12.8", "cuda", (p100,), ("sm_60",), driver_gpus=("P100",)))
    assert (supported.usable, supported.why) == (1, "")
