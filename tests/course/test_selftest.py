"""The GPU self-test's logic, run here on a CPU: every GPU test skipped with its reason, table built."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from coursetools import kaggle
from helpers import selftest

from .notebook_code import write_notebook

ROOT = Path(__file__).resolve().parents[2]

JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" errors="1" failures="1" skipped="1" tests="4" time="1.5">
<testcase classname="tests.test_gpu_ch01" name="test_ok" time="0.250" />
<testcase classname="tests.test_gpu_ch01" name="test_bad" time="0.500">
  <failure message="AssertionError: 3 GB/s is below 9 GB/s&#10;assert 3 &gt; 9">long traceback</failure></testcase>
<testcase classname="tests.test_gpu_ch02" name="test_two[cuda:1]" time="0.000">
  <skipped type="pytest.skip" message="needs 2 CUDA GPU(s), this machine has 0">skip text</skipped></testcase>
<testcase classname="tests.test_gpu_ch02" name="test_broken" time="0.010">
  <error message="failed on setup with &quot;fixture 'gpu' not found&quot;">E fixture</error></testcase>
</testsuite></testsuites>
"""


def test_parse_junit_reads_every_outcome() -> None:
    rows = selftest.parse_junit(JUNIT)
    assert [(r.test, r.outcome) for r in rows] == [
        ("test_gpu_ch01.py::test_ok", "passed"),
        ("test_gpu_ch01.py::test_bad", "failed"),
        ("test_gpu_ch02.py::test_two[cuda:1]", "skipped"),
        ("test_gpu_ch02.py::test_broken", "error"),
    ]
    assert rows[1].message == "AssertionError: 3 GB/s is below 9 GB/s", "first line of the failure only"
    assert rows[2].message == "needs 2 CUDA GPU(s), this machine has 0"
    assert rows[0].seconds == pytest.approx(0.25)


def test_report_counts_table_html_and_failures() -> None:
    report = selftest.SelfTestReport(selftest.parse_junit(JUNIT), "2× Tesla T4 | torch 2.10", "/x/tests", 1, 1.5)
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


@pytest.fixture
def gpu_tests_with_the_course_conftest(tmp_path) -> Path:
    """A tests/gpu/ folder like the repository's: the GPU tests' conftest and a few GPU tests."""
    tests = tmp_path / "tests" / "gpu"
    tests.mkdir(parents=True)
    shutil.copy2(ROOT / "tests" / "gpu" / "conftest.py", tests / "conftest.py")
    (tests / "__init__.py").write_text("", encoding="utf-8")
    (tests.parent / "__init__.py").write_text("", encoding="utf-8")
    (tests / "test_gpu_ch98.py").write_text(
        "import pytest\n\n"
        "@pytest.mark.gpu\ndef test_one_gpu():\n    assert False, 'must not run on CPU'\n\n"
        "@pytest.mark.gpu2\n@pytest.mark.parametrize('n', [1, 2])\ndef test_two_gpus(n):\n    assert False\n\n"
        "def test_not_a_gpu_test():\n    pass\n",
        encoding="utf-8",
    )
    return tests


def test_on_cpu_every_gpu_test_is_skipped_with_its_reason(gpu_tests_with_the_course_conftest) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU: the tests would run for real")
    report = selftest.run_gpu_tests(gpu_tests_with_the_course_conftest)
    assert report.problem == "", report.output
    assert [r.test for r in report.rows] == [
        "test_gpu_ch98.py::test_one_gpu",
        "test_gpu_ch98.py::test_two_gpus[1]",
        "test_gpu_ch98.py::test_two_gpus[2]",
    ], "only tests marked gpu or gpu2 are selected"
    assert {r.outcome for r in report.rows} == {"skipped"}
    assert report.rows[0].message.startswith("needs 1 CUDA GPU(s), this machine has 0")
    assert report.rows[1].message.startswith("needs 2 CUDA GPU(s)")
    assert report.ok and report.exit_code == 0
    assert "CPU" in report.hardware
    assert report.table().count("| skipped |") == 3
    report.raise_for_failures()  # nothing failed


def test_failures_are_reported_not_raised(tmp_path) -> None:
    tests = tmp_path / "tests" / "gpu"
    tests.mkdir(parents=True)
    (tests / "test_gpu_ch99.py").write_text(
        "import pytest\npytestmark = pytest.mark.gpu\n\n"
        "def test_passes():\n    pass\n\n"
        "def test_fails():\n    assert 1 + 1 == 3, 'arithmetic is broken'\n",
        encoding="utf-8",
    )
    report = selftest.run_gpu_tests(tests)
    outcomes = {r.test.split("::")[1]: (r.outcome, r.message) for r in report.rows}
    assert outcomes["test_passes"] == ("passed", "")
    assert outcomes["test_fails"][0] == "failed" and "arithmetic is broken" in outcomes["test_fails"][1]
    assert not report.ok and report.exit_code == 1
    assert "arithmetic is broken" in report.output
    with pytest.raises(AssertionError, match="test_fails"):
        report.raise_for_failures()


def test_missing_tests_are_a_clear_problem(tmp_path) -> None:
    report = selftest.run_gpu_tests(tmp_path)
    assert "no test_gpu_ch*.py files" in report.problem
    assert not report.ok and report.rows == []
    with pytest.raises(AssertionError, match="could not run"):
        report.raise_for_failures()
    assert selftest.find_gpu_tests(tmp_path) is None
    assert selftest.find_gpu_tests(ROOT) == ROOT / "tests" / "gpu"


@pytest.mark.slow
def test_the_self_test_runs_from_the_helpers_dataset_alone(tmp_path) -> None:
    """On Kaggle the tests come from the dataset copy: it must hold everything they import."""
    settings = kaggle.load_settings()
    dataset = kaggle.build_dataset("someone", settings, tmp_path)
    report = selftest.run_gpu_tests(dataset / "tests" / "gpu")
    assert report.problem == "", report.output
    expected = sorted(p.name for p in (ROOT / "tests" / "gpu").glob("test_gpu_ch*.py"))
    assert sorted({r.test.split("::")[0] for r in report.rows}) == expected, "every GPU test file was collected"
    assert report.counts["error"] == 0, report.output


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
    report = selftest.run_self_test(notebooks_dir=books, tests_dir=tests, cell_timeout=5)
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
    saved = json.loads(selftest.write_results(report, tmp_path / "r.json").read_text(encoding="utf-8"))
    assert saved["ok"] is False and saved["rows"][0]["test"] == "chapter 00_good" and saved["versions"]


def test_the_kernel_client_re_checks_its_sockets_instead_of_waiting_out_the_cell_limit(monkeypatch) -> None:
    """A missed wake-up must cost one slice, not the cell's whole time limit (see polling_kernel_manager)."""
    import asyncio
    from queue import Empty

    from jupyter_client.channels import AsyncZMQSocketChannel

    manager = selftest.polling_kernel_manager(slice_seconds=0.01)
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
