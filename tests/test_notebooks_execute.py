"""Every chapter executes headless through papermill with QUICK=True, as the course runner runs it."""

from __future__ import annotations

import json
from dataclasses import asdict

import pytest

from helpers.runner import discover_chapters, execute_chapter

from .conftest import NOTEBOOK_RUNS

CHAPTERS = discover_chapters()


def test_there_are_chapters() -> None:
    assert len(CHAPTERS) >= 2, "notebooks/ should hold the course's chapters"


@pytest.mark.parametrize("notebook", CHAPTERS, ids=[c.stem for c in CHAPTERS])
def test_chapter_runs_headless(notebook) -> None:
    result = execute_chapter(notebook, NOTEBOOK_RUNS, quick=True, cell_timeout=300)
    (NOTEBOOK_RUNS / f"{notebook.stem}.result.json").write_text(json.dumps(asdict(result)), encoding="utf-8")
    assert result.status == "ok", f"{notebook.name} failed: {result.error}"
    assert result.device != "unknown", "the setup cell did not print the 'Running on:' line"
    executed = json.loads(open(result.executed, encoding="utf-8").read())
    code = [c for c in executed["cells"] if c["cell_type"] == "code"]
    assert all(c.get("execution_count") for c in code), "some code cells did not run"
