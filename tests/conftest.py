"""Shared test set-up: QUICK notebooks, GPU markers that skip with a reason, and the no-GPU report."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

# Kernels started by nbval and papermill inherit this, so chapters run with their QUICK sizes.
os.environ["COURSE_QUICK"] = "1"

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK_RUNS = ROOT / "build" / "test-notebooks"


def _cuda_count() -> int:
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    found = _cuda_count()
    for item in items:
        needed = 2 if "gpu2" in item.keywords else 1 if "gpu" in item.keywords else 0
        if needed and found < needed:
            item.add_marker(
                pytest.mark.skip(
                    reason=f"needs {needed} CUDA GPU(s), this machine has {found}: run `pytest -m 'gpu or gpu2'` "
                    "on Kaggle (GPU T4 x2) or any CUDA machine"
                )
            )


def pytest_sessionstart(session: pytest.Session) -> None:
    # Only the controlling process clears the previous run's reports (xdist workers have workerinput).
    if not hasattr(session.config, "workerinput") and NOTEBOOK_RUNS.is_dir():
        for old in NOTEBOOK_RUNS.glob("*.result.json"):
            old.unlink()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    reports = sorted(NOTEBOOK_RUNS.glob("*.result.json")) if NOTEBOOK_RUNS.is_dir() else []
    if not reports:
        return
    terminalreporter.section("chapters executed headless")
    total = 0
    for path in reports:
        r = json.loads(path.read_text(encoding="utf-8"))
        total += r["no_gpu_cells"]
        terminalreporter.write_line(
            f"{r['chapter']:<28} {r['status']:<7} {r['seconds']:>6.1f}s  ran on {r['device']:<12} "
            f"no-GPU cells: {r['no_gpu_cells']}"
        )
    terminalreporter.write_line(f"cells that took the no-GPU path: {total}")
