"""Root pytest hooks, here so that they also apply to the chapter notebooks nbval collects under notebooks/.

nbval executes each chapter once, cell by cell, in one kernel (QUICK sizes: COURSE_QUICK=1 below),
fails a chapter on any cell that raises, and compares the outputs of cells tagged
`nbval-check-output`. The hooks here keep each notebook on one xdist worker, and collect what each
chapter printed (the machine it ran on, cells that took the no-GPU path, seconds) for the summary
at the end of the run.
"""

from __future__ import annotations

import json
import os
import platform
from datetime import date
from pathlib import Path

import pytest

# Kernels started by nbval (and papermill) inherit this, so chapters run with their QUICK sizes.
os.environ["COURSE_QUICK"] = "1"

ROOT = Path(__file__).resolve().parent
TEST_RUNS = ROOT / "build" / "test-notebooks"  # one folder per stack; `make verified` reads them


def _stack_runs() -> Path:
    from coursetools.verified import stack_name

    return TEST_RUNS / stack_name()


NOTEBOOK_RUNS = _stack_runs()
NO_GPU_MARKER = "[no-GPU path]"  # helpers.devices.NO_GPU_MARKER (tested to agree)

# The self-test notebook executes every chapter again (papermill): nbval does not run it, so a
# test run executes each chapter once. tests/course/test_selftest.py tests what it calls.
collect_ignore = ["notebooks/gpu_self_test.ipynb"]

# Each chapter's kernel gets its own temp dir, and a chapter that leaves files there fails.
pytest_plugins = ["tests.temp_litter"]


def pytest_itemcollected(item: pytest.Item) -> None:
    # nbval runs a notebook's cells in one kernel, in order: keep each notebook on one xdist worker
    # (marked as each item is collected, before xdist reads the groups in its collection hook).
    if item.path.suffix == ".ipynb":
        item.add_marker(pytest.mark.xdist_group(item.path.stem))


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    # A chapter collected for this run loses its previous report, which this run replaces. Only those:
    # a session that runs no chapter (a single test file, or a test's own pytest run inside `make
    # test`) leaves the reports of the chapters it did not run for `make verified`. Every process
    # collects before any test runs (xdist compares the collections first), so none is lost.
    for item in items:
        if item.path.suffix == ".ipynb":
            (NOTEBOOK_RUNS / f"{item.path.stem}.result.json").unlink(missing_ok=True)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    outcome = yield
    if item.path.suffix != ".ipynb" or call.when != "call":
        return
    report = outcome.get_result()
    path = NOTEBOOK_RUNS / f"{item.path.stem}.result.json"
    NOTEBOOK_RUNS.mkdir(parents=True, exist_ok=True)
    if path.is_file():
        result = json.loads(path.read_text(encoding="utf-8"))
    else:
        import torch

        from coursetools.execute import chapter_hash

        result = {"chapter": item.path.stem, "status": "ok", "seconds": 0.0, "device": "unknown", "no_gpu_cells": 0}
        result.update(
            hash=chapter_hash(item.path),
            date=date.today().isoformat(),
            torch=f"torch {torch.__version__}",
            python=platform.python_version(),
        )
    from coursetools.execute import cell_text, running_on

    text = cell_text(getattr(item, "test_outputs", None) or [])
    result["seconds"] = round(result["seconds"] + call.duration, 1)
    result["no_gpu_cells"] += NO_GPU_MARKER in text
    if result["device"] == "unknown":
        result["device"] = running_on(text) or "unknown"
    if report.failed:
        result["status"] = "failed"
    path.write_text(json.dumps(result), encoding="utf-8")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    reports = sorted(NOTEBOOK_RUNS.glob("*.result.json")) if NOTEBOOK_RUNS.is_dir() else []
    if not reports:
        return
    terminalreporter.section("chapters executed headless (nbval, QUICK)")
    total_cells = total_seconds = 0
    for path in reports:
        r = json.loads(path.read_text(encoding="utf-8"))
        total_cells += r["no_gpu_cells"]
        total_seconds += r["seconds"]
        terminalreporter.write_line(
            f"{r['chapter']:<40} {r['status']:<7} {r['seconds']:>6.1f}s  ran on {r['device']:<12} "
            f"no-GPU cells: {r['no_gpu_cells']}"
        )
    terminalreporter.write_line(
        f"{len(reports)} chapters, {total_seconds:.1f} s of cells; cells that took the no-GPU path: {total_cells}"
    )
