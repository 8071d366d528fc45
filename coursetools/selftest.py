"""The GPU self-test: every chapter executed on this machine's GPU, then the course's GPU tests, in one table.

`python -m coursetools selftest` (`make selftest`, and the `gpu_self_test` notebook on Kaggle) runs
on the interpreter and torch already installed, never installing torch. Beyond torch it needs what
executing a notebook needs (papermill, ipykernel, ipywidgets) and pytest; on a machine without a
network, `--wheelhouse DIR` first installs them from a folder that `python -m coursetools wheelhouse`
wrote elsewhere (`pip install --no-index --find-links DIR`, nothing else).

First the chapters run headless (QUICK sizes, `coursetools.execute`): their GPU branches assert what
they teach. Then `pytest -m "gpu or gpu2"` runs `tests/gpu/` in a child process, which reports each
test as data (`coursetools.gpu_test_results`). Chapters and tests are found beside this package: a
clone, or the Kaggle helpers dataset, which ships `coursetools/` with `helpers/`.

The pass rule is that the GPU was used:

* the NVIDIA driver lists a GPU (NVML or `nvidia-smi`) that torch cannot use, or a driver is installed
  that NVML cannot start: the run fails at once and says why (the doctor's diagnosis); GPUs that are
  all another job's share count as none;
* torch can use a GPU: every chapter and GPU test must pass, and a GPU test may be skipped only for
  a stated missing capability (a second GPU, TF32, ...; `tests/gpu/missing.py`);
* no GPU at all: the chapters run their CPU paths, every GPU test is skipped, and the run says that
  nothing GPU-specific was verified; the "verified on" record takes no GPU row from it, and
  `--require-gpu` makes it fail.
"""

from __future__ import annotations

import contextlib
import html
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from .execute import COURSE_ROOT, chapter_hash, discover_chapters, execute_chapter, write_fault, write_text_atomically
from .gpu_test_results import MISSING_CAPABILITY, RESULTS_FILE

if TYPE_CHECKING:
    from collections.abc import Callable

    from helpers.environment import Machine

MARKER = "gpu or gpu2"
GPU_TESTS = "test_gpu_ch*.py"  # the chapters' GPU claims (tests/gpu/test_gpu_chNN.py)
GPU_TESTS_DIR = Path("tests") / "gpu"  # where they live, in a clone and in the helpers dataset
OUTCOMES = ("passed", "failed", "error", "skipped")
#: The whole self-test, QUICK chapters and GPU tests, on one data-centre GPU (CONTRIBUTING's budget table).
BUDGET_SECONDS = 8 * 60
#: Tells the GPU tests where this run's executed chapters and their recorded figures are (`tests/gpu/recorded.py`).
FIGURES_DIR = "COURSE_FIGURES_DIR"

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
    """One chapter's or test's outcome."""

    __test__ = False  # not a pytest test class

    test: str  # "chapter 07_pinned_memory" or "test_gpu_ch10.py::test_fp16_matmul_uses_the_tensor_cores"
    outcome: str  # passed, failed, error or skipped
    seconds: float
    message: str = ""  # the skip reason or the first line of the failure
    device: str = ""  # what a chapter's setup line said it ran on ("" for a test: the report's hardware)
    hash: str = ""  # a chapter's content hash (`chapter_hash`), "" for a test
    capability: str = ""  # what a skipped GPU test named as missing here ("" if it named nothing)


@dataclass(frozen=True)
class GpuCheck:
    """What this machine offers: GPUs the NVIDIA driver lists, CUDA GPUs torch can use, and why not."""

    listed: int | None  # by the driver (NVML or nvidia-smi); None where no driver answers
    usable: int
    why: str = ""  # the doctor's diagnosis when there are GPUs (listed, or seen) that torch cannot use

    @property
    def unusable(self) -> bool:
        """GPUs are here (listed by the driver, or seen by torch) and torch can use none: nothing was verified."""
        return bool(self.listed or self.why) and not self.usable


def check_gpus(m: Machine | None = None) -> GpuCheck:
    """Read this machine (or take `m`): what the driver lists, what torch can use, the doctor's problems."""
    from helpers.environment import NO_ACCESS, build_supports, describe_machine, diagnose

    m = m or describe_machine()
    problems = [f"{f.message} {f.fix}".strip() for f in diagnose(m) if f.level == "problem"]
    usable = [g for g in m.gpus if not m.arch_list or build_supports(g.capability, m.arch_list)]  # kernels for it
    why = (
        " ".join(problems)
        or f"The NVIDIA driver lists GPUs ({m.driver_gpu_count}) that torch {m.torch_version} cannot use."
    )
    listed = None if m.driver_gpu_count is None else m.driver_gpu_count - (m.driver_gpus or ()).count(NO_ACCESS)
    there = listed or m.gpus or m.driver_fault or m.cuda_error  # another job's GPUs are not this run's
    return GpuCheck(listed, len(usable), why if there and not usable else "")


def torch_versions() -> str:
    """torch and CUDA versions of this process, e.g. "torch 2.10.0+cu128 / CUDA 12.8"."""
    import torch

    return f"torch {torch.__version__} / CUDA {torch.version.cuda or 'none (CPU build)'}"


def hardware_line(m: Machine | None = None) -> str:
    """The machine the tests ran on (or `m`), as the chapters' setup line describes it."""
    from helpers.environment import describe_machine, one_line

    return one_line(m or describe_machine()).removeprefix("Running on: ")


def judge(rows: list[TestRow], gpu: GpuCheck) -> list[TestRow]:
    """The rows as the pass rule counts them: where torch can use a GPU, a skip that names no capability fails."""
    if not gpu.usable:
        return rows
    return [
        replace(r, outcome="failed", message=f"skipped without naming a missing capability: {r.message}")
        if r.outcome == "skipped" and not r.capability
        else r
        for r in rows
    ]


@dataclass(repr=False)
class SelfTestReport:
    """What a self-test run found: the rows, the machine, and whether the GPU was used."""

    rows: list[TestRow]
    hardware: str
    gpu: GpuCheck
    seconds: float = 0.0
    tests_dir: str = ""
    output: str = ""  # pytest's console output (for failures)
    problem: str = ""  # why the run failed as a whole (nothing could run, pytest stopped early)
    counts: dict[str, int] = field(default_factory=dict)
    versions: str = ""  # torch / CUDA of the run
    bundle: str = ""  # the archive of its results, executed chapters and figures, when one was asked for
    bundle_error: str = ""  # why that archive could not be written

    def __post_init__(self) -> None:
        self.rows = judge(self.rows, self.gpu)
        self.counts = {o: sum(1 for r in self.rows if r.outcome == o) for o in OUTCOMES}
        self.versions = self.versions or torch_versions()

    def device_of(self, row: TestRow) -> str:
        return row.device or self.hardware.split(" | ")[0]

    @property
    def ok(self) -> bool:
        """Nothing failed, and on a machine whose GPU torch can use, every skip named a missing capability."""
        return not self.problem and self.counts["failed"] == 0 and self.counts["error"] == 0

    @property
    def gpu_verified(self) -> bool:
        """Passed with a GPU that torch used: the only run whose chapters enter the record's GPU column."""
        return self.ok and self.gpu.usable > 0

    def summary(self) -> str:
        if self.problem:
            return f"GPU self-test FAILED on {self.hardware}: {self.problem}"
        c = self.counts
        counts = (
            f"{c['passed']} passed, {c['failed']} failed, {c['error']} errors, {c['skipped']} skipped "
            f"({self.seconds:.1f} s, tests from {self.tests_dir or 'nowhere: not run'})"
        )
        if not self.ok:
            return f"GPU self-test FAILED on {self.hardware}: {counts}"
        if not self.gpu.usable:
            return (
                f"No GPU here ({self.hardware}): nothing GPU-specific was verified. The chapters ran their CPU "
                f"paths and every GPU test was skipped: {counts}"
            )
        over = f"; over the {BUDGET_SECONDS // 60}-minute budget" if self.seconds > BUDGET_SECONDS and self.rows else ""
        return f"GPU self-test passed on {self.hardware}: {counts}{over}"

    def table(self) -> str:
        """A Markdown table: chapter or test, outcome, seconds, device, torch/CUDA, message."""
        lines = [
            "| chapter or test | outcome | seconds | device | torch / CUDA | message |",
            "| --- | --- | ---: | --- | --- | --- |",
        ]
        for r in self.rows:
            message = r.message.replace("|", "\\|").replace("\n", " ")
            lines.append(
                f"| {r.test} | {r.outcome} | {r.seconds:.2f} | {self.device_of(r)} | {self.versions} | {message} |"
            )
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        colours = {"passed": "#186a3b", "failed": "#b03a2e", "error": "#b03a2e", "skipped": "#7d6608"}
        body = "".join(
            f"<tr><td><code>{html.escape(r.test)}</code></td>"
            f"<td style='color:{colours.get(r.outcome, '#000')};font-weight:bold'>{r.outcome}</td>"
            f"<td style='text-align:right'>{r.seconds:.2f}</td><td>{html.escape(self.device_of(r))}</td>"
            f"<td>{html.escape(self.versions)}</td><td>{html.escape(r.message)}</td></tr>"
            for r in self.rows
        )
        return (
            f"<p><b>{html.escape(self.summary())}</b></p>"
            "<table><tr><th>chapter or test</th><th>outcome</th><th>seconds</th><th>device</th>"
            "<th>torch / CUDA</th><th>message</th></tr>"
            f"{body}</table>"
        )

    def __str__(self) -> str:
        return self.summary() + "\n\n" + self.table()

    __repr__ = __str__  # what a plain-text frontend (papermill, a terminal) shows for `display(report)`

    def raise_for_failures(self, require_gpu: bool = False) -> None:
        """Raise AssertionError naming what failed (so a Kaggle run is marked as failed).

        With `require_gpu`, a run on a machine without a usable GPU fails too.
        """
        if self.problem:
            raise AssertionError(self.summary())
        bad = [r for r in self.rows if r.outcome in ("failed", "error")]
        if bad:
            raise AssertionError(
                f"{len(bad)} GPU test(s) or chapter(s) failed on {self.hardware}:\n"
                + "\n".join(f"  {r.test}: {r.message}" for r in bad)
            )
        if require_gpu and not self.gpu.usable:
            raise AssertionError(self.summary() + " On Kaggle: Settings → Accelerator → GPU T4 ×2, then run again.")


def find_gpu_tests(root: Path | None = None) -> Path | None:
    """The `tests/gpu/` folder of the course in use, if it holds GPU tests."""
    tests = Path(root or COURSE_ROOT) / GPU_TESTS_DIR
    return tests if any(tests.glob(GPU_TESTS)) else None


def pytest_command(tests_dir: Path, ini: Path, marker: str = MARKER) -> list[str]:
    """The child command: pytest on the GPU test files with our ini and our results plugin."""
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
        "-p",
        "coursetools.gpu_test_results",
        "-rA",
        "-q",
        "--tb=short",
    ]


def read_results(path: Path) -> tuple[int | None, list[TestRow]]:
    """What the child pytest has reported so far: how many tests it collected, and a row per finished test."""
    collected, rows = None, []
    if not path.is_file():
        return collected, rows
    for line in path.read_text(encoding="utf-8").split("\n")[:-1]:  # the part after the last newline is unfinished
        record = json.loads(line)
        if "collected" in record:
            collected = record["collected"]
        else:
            rows.append(
                TestRow(
                    record["test"],
                    record["outcome"],
                    float(record["seconds"]),
                    record["message"],
                    capability=record.get(MISSING_CAPABILITY, ""),
                )
            )
    return collected, rows


@dataclass
class TestRun:
    """How the child pytest went."""

    __test__ = False

    rows: list[TestRow]
    exit_code: int
    output: str
    problem: str = ""
    tests_dir: str = ""  # the folder the tests came from


def run_gpu_tests(
    tests_dir: Path | None = None,
    *,
    marker: str = MARKER,
    timeout: float = 3600,
    progress: bool = True,
    figures_dir: Path | None = None,
) -> TestRun:
    """Run the GPU tests in a child pytest, one row per test; a failing test is a row, never an exception.

    `figures_dir`: the folder of this run's executed chapters, whose recorded figures tests read
    (`COURSE_FIGURES_DIR`, `tests/gpu/recorded.py`)."""
    tests_dir = Path(tests_dir) if tests_dir else find_gpu_tests()
    if tests_dir is None or not any(Path(tests_dir).glob(GPU_TESTS)):
        where = tests_dir or COURSE_ROOT / GPU_TESTS_DIR
        return TestRun([], 5, "", problem=f"no test_gpu_ch*.py files in {where}")
    if importlib.util.find_spec("pytest") is None:
        return TestRun([], 5, "", problem="pytest is not installed here: pip install pytest (or use --wheelhouse)")
    from tqdm.auto import tqdm

    with tempfile.TemporaryDirectory(prefix="gpu-self-test-") as tmp:
        ini, results, log = Path(tmp) / "pytest.ini", Path(tmp) / "results.jsonl", Path(tmp) / "output.txt"
        ini.write_text(PYTEST_INI, encoding="utf-8")
        env = dict(os.environ)
        root = str(Path(tests_dir).parent.parent)
        env["PYTHONPATH"] = os.pathsep.join(
            dict.fromkeys(p for p in (root, str(COURSE_ROOT), env.get("PYTHONPATH")) if p)
        )
        env["PYTHONDONTWRITEBYTECODE"] = "1"  # the dataset copy is read-only on Kaggle
        env[RESULTS_FILE] = str(results)
        if figures_dir is not None:
            env[FIGURES_DIR] = str(figures_dir)
        deadline = time.monotonic() + timeout
        bar = tqdm(desc="GPU tests", unit="test", disable=not progress, mininterval=_redraw_seconds())
        with open(log, "w", encoding="utf-8") as out, bar:
            child = subprocess.Popen(
                pytest_command(Path(tests_dir), ini, marker), cwd=tmp, env=env, stdout=out, stderr=subprocess.STDOUT
            )
            while child.poll() is None and time.monotonic() < deadline:
                time.sleep(0.5)
                collected, rows = read_results(results)
                if collected is not None and bar.total != collected:
                    bar.reset(total=collected)
                if len(rows) > bar.n:
                    bar.set_postfix_str(rows[-1].test.split("::")[0], refresh=False)
                    bar.update(len(rows) - bar.n)  # redraws at most every `mininterval` seconds
            stopped = child.poll() is None
            if stopped:
                child.kill()
            exit_code = child.wait()
        output = log.read_text(encoding="utf-8", errors="replace")
        collected, rows = read_results(results)
    tail = "\n".join(output.strip().splitlines()[-15:])
    problem = ""
    if stopped:
        problem = f"pytest was stopped after {timeout:.0f} s, {len(rows)} of {collected or '?'} tests done:\n{tail}"
    elif exit_code not in (0, 1) or collected is None:
        problem = f"pytest ended with exit code {exit_code} after {len(rows)} test(s):\n{tail}"
    elif len(rows) < collected:
        problem = f"pytest ended after {len(rows)} of its {collected} tests (exit code {exit_code}):\n{tail}"
    return TestRun(rows, exit_code, output, problem, str(tests_dir))


def _redraw_seconds() -> float:
    """How often a progress bar redraws: every second in a terminal or notebook, every 30 s in a log file."""
    return 1.0 if sys.stderr.isatty() or "ipykernel" in sys.modules else 30.0


def run_chapters(
    notebooks: list[Path] | None = None,
    *,
    quick: bool = True,
    cell_timeout: float = 90,
    progress: bool = True,
    keep: Path | None = None,
) -> list[TestRow]:
    """Execute the chapters (QUICK) in a scratch folder, one row per chapter; with `keep`, each chapter's
    executed notebook and recorded figures stay in `keep/<chapter>/` (a GPU run's bundle is made of them).

    Every chapter's GPU branches assert what they teach, so on a GPU machine this is a test of them.
    """
    from tqdm.auto import tqdm

    notebooks = discover_chapters() if notebooks is None else [Path(n) for n in notebooks]
    if importlib.util.find_spec("papermill") is None:
        why = "papermill is not installed here: pip install papermill (or use --wheelhouse)"
        return [TestRow(f"chapter {n.stem}", "error", 0.0, why) for n in notebooks]
    rows = []
    with tempfile.TemporaryDirectory(prefix="gpu-self-test-chapters-") as scratch:
        tmp = keep if keep is not None else scratch
        bar = tqdm(notebooks, desc="chapters", unit="chapter", disable=not progress, mininterval=_redraw_seconds())
        for notebook in bar:
            bar.set_postfix_str(notebook.stem, refresh=True)  # once a chapter: the name of the one running
            run = execute_chapter(notebook, Path(tmp) / notebook.stem, quick=quick, cell_timeout=cell_timeout)
            outcome = "passed" if run.status == "ok" else "failed"
            rows.append(
                TestRow(f"chapter {run.chapter}", outcome, run.seconds, run.error, run.device, chapter_hash(notebook))
            )
    return rows


def run_self_test(
    *,
    chapters: bool = True,
    tests: bool = True,
    only: list[str] | None = None,
    notebooks_dir: Path | None = None,
    tests_dir: Path | None = None,
    cell_timeout: float = 90,
    timeout: float = 3600,
    progress: bool = True,
    gpu: GpuCheck | None = None,
    checkpoint: Callable[[SelfTestReport], object] | None = None,
    bundle: Path | str | None = None,
    keep: Path | None = None,
) -> SelfTestReport:
    """The whole self-test: the chapters executed (QUICK), then the `gpu`/`gpu2` tests, in one report.

    Where the driver lists a GPU that torch cannot use, nothing runs and the report says why.
    `checkpoint` gets a failed-as-a-whole report of the chapters before the tests start, so that a run
    stopped at a time limit still leaves what it found. The executed chapters stay in `keep` (by default
    a temporary folder) while the tests run, which read the figures they recorded; with `bundle`, the
    run's results, executed chapters and figures are also written there as one archive
    (`coursetools.gpu_runs`).
    """
    from helpers.environment import describe_machine

    with contextlib.ExitStack() as stack:
        if keep is None:  # the executed chapters stay until the tests have read their figures
            keep = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="gpu-self-test-chapters-")))
        start = time.perf_counter()
        machine = describe_machine()
        gpu = gpu or check_gpus(machine)
        hardware = hardware_line(machine)
        if gpu.unusable:
            report = SelfTestReport([], hardware, gpu, problem=f"torch cannot use the GPUs here. {gpu.why}")
            report.bundle_error = "" if bundle is None else "nothing ran, so there is nothing to keep"
            return report
        rows = (
            run_chapters(
                discover_chapters(notebooks_dir, only), cell_timeout=cell_timeout, progress=progress, keep=keep
            )
            if chapters
            else []
        )
        if checkpoint and chapters and tests:
            cut_short = "cut short: saved after the chapters, before the GPU tests ran"
            checkpoint(
                SelfTestReport(
                    list(rows), hardware, gpu, seconds=round(time.perf_counter() - start, 1), problem=cut_short
                )
            )
        run = (
            run_gpu_tests(tests_dir, timeout=timeout, progress=progress, figures_dir=keep)
            if tests
            else TestRun([], 0, "")
        )
        report = SelfTestReport(
            rows + run.rows,
            hardware,
            gpu,
            seconds=round(time.perf_counter() - start, 1),
            tests_dir=run.tests_dir,
            output=run.output,
            problem=run.problem,
        )
        if bundle is not None:
            from .gpu_runs import write_bundle

            try:
                report.bundle = str(write_bundle(results_data(report), keep, Path(bundle)))
            except OSError as exc:  # the run's verdict stands; only its archive is missing
                report.bundle_error = write_fault(exc, bundle)
        return report


def results_data(report: SelfTestReport) -> dict[str, object]:
    """A run's rows, machine and verdict, as plain data (the JSON `write_results` saves, a bundle's run.json)."""
    from datetime import date

    from helpers.environment import running_on_kaggle

    return {
        "date": date.today().isoformat(),
        "hardware": report.hardware,
        "versions": report.versions,
        "ok": report.ok,
        "gpu_verified": report.gpu_verified,
        "on_kaggle": running_on_kaggle(),
        "gpu": asdict(report.gpu),
        "seconds": report.seconds,
        "problem": report.problem,
        "rows": [asdict(r) for r in report.rows],
    }


def write_results(report: SelfTestReport, path: Path) -> Path:
    """Save a run's rows, machine and verdict as JSON (what `coursetools verified` records)."""
    data = results_data(report)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_text_atomically(path, json.dumps(data, indent=2) + "\n")
