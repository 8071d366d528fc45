"""The GPU self-test: run the course's GPU tests (`pytest -m "gpu or gpu2"`) and tabulate the outcome.

The notebook `notebooks/gpu_self_test.ipynb` calls `run_gpu_tests()` on Kaggle's GPU T4 ×2 so a
maintainer can check every GPU claim of the course on the real platform in one run. The tests
are found next to the `helpers` package in use: `tests/gpu/` of a clone of the repository, or the
copy inside the helpers dataset (mounted read-only under /kaggle/input). pytest runs in a child
process with a junit-xml report, which `parse_junit` turns into one `TestRow` per test.

On a machine without a GPU every test is skipped, and each row says why.
"""

from __future__ import annotations

import html
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

MARKER = "gpu or gpu2"
GPU_TESTS = "test_gpu_ch*.py"  # the chapters' GPU claims (tests/gpu/test_gpu_chNN.py)
GPU_TESTS_DIR = Path("tests") / "gpu"  # where they live, in a clone and in the helpers dataset
OUTCOMES = ("passed", "failed", "error", "skipped")

# pytest settings for the child run: our markers, none of the repository's addopts (xdist, nbval),
# so that the same command works in a clone and in the read-only dataset copy on Kaggle.
PYTEST_INI = """\
[pytest]
markers =
    gpu: needs a CUDA GPU
    gpu2: needs two CUDA GPUs
    slow: a longer check
addopts =
"""


@dataclass(frozen=True)
class TestRow:
    """One test's outcome."""

    __test__ = False  # not a pytest test class

    test: str  # e.g. "test_gpu_ch10.py::test_fp16_matmul_uses_the_tensor_cores"
    outcome: str  # passed, failed, error or skipped
    seconds: float
    message: str = ""  # the skip reason or the first line of the failure


@dataclass(repr=False)
class SelfTestReport:
    """What a self-test run found: the rows, the hardware, and how pytest ended."""

    rows: list[TestRow]
    hardware: str
    tests_dir: str
    exit_code: int
    seconds: float
    output: str = ""  # pytest's console output (for failures)
    problem: str = ""  # why nothing ran, if nothing could
    counts: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.counts = {o: sum(1 for r in self.rows if r.outcome == o) for o in OUTCOMES}

    @property
    def ok(self) -> bool:
        """True when nothing failed (all skipped on a CPU machine counts as ok)."""
        return not self.problem and self.counts["failed"] == 0 and self.counts["error"] == 0

    def summary(self) -> str:
        if self.problem:
            return f"GPU self-test could not run: {self.problem}"
        c = self.counts
        return (
            f"GPU self-test on {self.hardware}: {c['passed']} passed, {c['failed']} failed, {c['error']} errors, "
            f"{c['skipped']} skipped ({self.seconds:.1f} s, tests from {self.tests_dir})"
        )

    def table(self) -> str:
        """A Markdown table: test, outcome, seconds, message."""
        lines = ["| test | outcome | seconds | message |", "| --- | --- | ---: | --- |"]
        for r in self.rows:
            message = r.message.replace("|", "\\|").replace("\n", " ")
            lines.append(f"| {r.test} | {r.outcome} | {r.seconds:.2f} | {message} |")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        colours = {"passed": "#186a3b", "failed": "#b03a2e", "error": "#b03a2e", "skipped": "#7d6608"}
        body = "".join(
            f"<tr><td><code>{html.escape(r.test)}</code></td>"
            f"<td style='color:{colours.get(r.outcome, '#000')};font-weight:bold'>{r.outcome}</td>"
            f"<td style='text-align:right'>{r.seconds:.2f}</td><td>{html.escape(r.message)}</td></tr>"
            for r in self.rows
        )
        return (
            f"<p><b>{html.escape(self.summary())}</b></p>"
            "<table><tr><th>test</th><th>outcome</th><th>seconds</th><th>message</th></tr>"
            f"{body}</table>"
        )

    def __str__(self) -> str:
        return self.summary() + "\n\n" + self.table()

    __repr__ = __str__  # what a plain-text frontend (papermill, a terminal) shows for `display(report)`

    def raise_for_failures(self) -> None:
        """Raise AssertionError naming the failed tests (so a Kaggle run is marked as failed)."""
        if self.problem:
            raise AssertionError(self.summary())
        bad = [r for r in self.rows if r.outcome in ("failed", "error")]
        if bad:
            raise AssertionError(
                f"{len(bad)} GPU test(s) failed on {self.hardware}:\n"
                + "\n".join(f"  {r.test}: {r.message}" for r in bad)
            )


def helpers_root() -> Path:
    """The folder that holds the `helpers` package in use (a clone, or the dataset on Kaggle)."""
    return Path(__file__).resolve().parent.parent


def find_gpu_tests(root: Path | None = None) -> Path | None:
    """The `tests/gpu/` folder next to the helpers package, if it holds GPU tests."""
    tests = Path(root or helpers_root()) / GPU_TESTS_DIR
    return tests if any(tests.glob(GPU_TESTS)) else None


def hardware_line() -> str:
    """The machine the tests ran on, as the chapters' setup line describes it."""
    from .environment import describe_machine, one_line

    return one_line(describe_machine()).removeprefix("Running on: ")


def parse_junit(xml_text: str, tests_dir: Path | None = None) -> list[TestRow]:
    """Turn a pytest junit-xml report into rows (one per test case)."""
    root = ET.fromstring(xml_text)
    rows = []
    for case in root.iter("testcase"):
        classname, name = case.get("classname", ""), case.get("name", "")
        module = classname.rsplit(".", 1)[-1] if classname else ""
        test = f"{module}.py::{name}" if module else name
        outcome, message = "passed", ""
        for tag in ("failure", "error", "skipped"):
            element = case.find(tag)
            if element is not None:
                outcome = {"failure": "failed", "error": "error", "skipped": "skipped"}[tag]
                message = element.get("message") or (element.text or "").strip()
                break
        if outcome == "skipped":
            message = message.removeprefix("Skipped: ")
        first = message.strip().splitlines()[0] if message.strip() else ""
        rows.append(TestRow(test=test, outcome=outcome, seconds=float(case.get("time") or 0), message=first))
    return rows


def pytest_command(tests_dir: Path, ini: Path, report: Path, marker: str = MARKER) -> list[str]:
    """The child command: pytest on the GPU test files with our ini and a junit-xml report."""
    files = sorted(str(p) for p in Path(tests_dir).glob(GPU_TESTS))
    return [
        sys.executable,
        "-m",
        "pytest",
        *files,
        "-m",
        marker,
        "-c",
        str(ini),
        "--rootdir",
        str(Path(tests_dir).parent.parent),
        "--confcutdir",  # load the GPU tests' conftest only, never the root one of a clone
        str(tests_dir),
        "-p",
        "no:cacheprovider",
        f"--junitxml={report}",
        "-o",
        "junit_family=xunit2",
        "-rA",
        "-q",
        "--tb=short",
    ]


def run_gpu_tests(
    tests_dir: Path | None = None,
    *,
    marker: str = MARKER,
    timeout: float = 3600,
    echo: bool = False,
) -> SelfTestReport:
    """Run the GPU tests in a child pytest and return the report (never raises for a failing test)."""
    start = time.perf_counter()
    hardware = hardware_line()
    tests_dir = Path(tests_dir) if tests_dir else find_gpu_tests()
    if tests_dir is None or not any(Path(tests_dir).glob(GPU_TESTS)):
        where = tests_dir or helpers_root() / GPU_TESTS_DIR
        return SelfTestReport([], hardware, str(where), 5, 0.0, problem=f"no test_gpu_ch*.py files in {where}")
    try:
        import pytest  # noqa: F401
    except ImportError:
        return SelfTestReport(
            [], hardware, str(tests_dir), 5, 0.0, problem="pytest is not installed here: pip install pytest"
        )
    with tempfile.TemporaryDirectory(prefix="gpu-self-test-") as tmp:
        ini, report = Path(tmp) / "pytest.ini", Path(tmp) / "report.xml"
        ini.write_text(PYTEST_INI, encoding="utf-8")
        env = dict(os.environ)
        root = str(Path(tests_dir).parent.parent)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
        env["PYTHONDONTWRITEBYTECODE"] = "1"  # the dataset copy is read-only on Kaggle
        command = pytest_command(Path(tests_dir), ini, report, marker)
        try:
            done = subprocess.run(command, cwd=tmp, env=env, capture_output=True, text=True, timeout=timeout)
            exit_code, output = done.returncode, done.stdout + done.stderr
        except subprocess.TimeoutExpired as exc:
            out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
            exit_code, output = -1, out + f"\n(stopped after {timeout:.0f} s)"
        if echo:
            print(output)
        rows = parse_junit(report.read_text(encoding="utf-8")) if report.is_file() else []
    problem = ""
    if not rows:
        tail = "\n".join(output.strip().splitlines()[-15:])
        problem = f"pytest ended with exit code {exit_code} and reported no test:\n{tail}"
    return SelfTestReport(
        rows, hardware, str(tests_dir), exit_code, round(time.perf_counter() - start, 1), output=output, problem=problem
    )
