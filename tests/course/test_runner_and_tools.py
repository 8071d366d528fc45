"""The course tooling: the headless runner, the notebook tidier, and `python -m coursetools`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from coursetools import authoring, execute, runner

from .notebook_code import write_notebook

ROOT = Path(__file__).resolve().parents[2]


def test_a_failing_chapter_does_not_stop_the_others(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    books = tmp_path / "notebooks"
    books.mkdir()
    write_notebook(books / "00_good.ipynb", "print('Running on: test box | torch x')", "print('[no-GPU path] x')")
    write_notebook(books / "01_bad.ipynb", "raise ValueError('on purpose')")
    write_notebook(books / "02_after.ipynb", "assert QUICK is True")
    build = tmp_path / "build"
    code = runner.run_course(quick=True, notebooks_dir=books, build_dir=build, jobs=2)
    assert code == 1
    rows = {r["chapter"]: r for r in json.loads((build / "summary.json").read_text())}
    assert rows["00_good"]["status"] == "ok" and rows["00_good"]["device"] == "test box"
    assert rows["00_good"]["no_gpu_cells"] == 1
    assert rows["01_bad"]["status"] == "failed" and "on purpose" in rows["01_bad"]["error"]
    assert rows["02_after"]["status"] == "ok", "QUICK reached the chapter and later chapters still ran"
    site = build / "site"
    index = (site / "index.html").read_text()
    assert 'href="00_good.html"' in index and 'href="01_bad.html"' in index, "every chapter, failed or not, has a page"
    assert "on purpose" in (site / "01_bad.html").read_text(), "a failed chapter's page states its error"
    assert rows["00_good"]["html"] == str(site / "00_good.html")
    printed = capsys.readouterr().out
    assert "Failed: 01_bad" in printed and "| 00_good | ok |" in printed
    assert f"open {site / 'index.html'}" in printed
    assert runner.run_course(only=["99"], notebooks_dir=books, build_dir=build) == 2


def test_a_chapter_run_writes_its_notebook_at_the_start_and_the_end_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """papermill's write after every cell cost seconds a chapter; every cell's output and timing still arrive."""
    import papermill.engines

    writes: list[str] = []
    write = papermill.engines.write_ipynb
    monkeypatch.setattr(papermill.engines, "write_ipynb", lambda nb, path: (writes.append(path), write(nb, path)))
    chapter = write_notebook(tmp_path / "03_x.ipynb", "print('one')", "print('two')", "print('three')")
    run = execute.execute_chapter(chapter, tmp_path / "build")
    assert run.status == "ok", run.error
    assert len(writes) == 2, f"papermill wrote the notebook {len(writes)} times"
    cells = json.loads((tmp_path / "build" / "03_x.ipynb").read_text())["cells"]
    printed = ["".join(o.get("text", "")) for c in cells for o in c.get("outputs", [])]
    assert printed == ["one\n", "two\n", "three\n"]
    assert all(c["metadata"]["papermill"]["duration"] is not None for c in cells)


def test_discover_chapters_ignores_other_notebooks(tmp_path: Path) -> None:
    for name in ("00_a.ipynb", "10_b.ipynb", "gpu_self_test.ipynb", "scratch.ipynb"):
        (tmp_path / name).write_text("{}")
    assert [p.name for p in execute.discover_chapters(tmp_path)] == ["00_a.ipynb", "10_b.ipynb"]
    assert [p.name for p in execute.discover_chapters(tmp_path, only=["10"])] == ["10_b.ipynb"]


def test_tidy_strips_unchecked_outputs_and_restores_canonical_cells() -> None:
    nb = json.loads((ROOT / "notebooks" / "01_devices.ipynb").read_text())
    setup = authoring.find_tagged(nb, "setup")[0]
    nb["cells"][setup]["source"] = "import helpers"
    plain = next(
        i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code" and not authoring.is_checked(c) and i > setup
    )
    nb["cells"][plain]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "x"}]
    problems = authoring.problems(nb)
    assert any("setup cell differs" in p for p in problems) and any(f"cell {plain}" in p for p in problems)
    assert authoring.problems(authoring.tidy(nb)) == []
    checked = [c for c in nb["cells"] if authoring.is_checked(c)]
    assert checked and all(c["outputs"] for c in checked), "checked cells keep their outputs"


def test_command_line(tmp_path: Path) -> None:
    bad = subprocess.run(
        [sys.executable, "-m", "coursetools", "run", "--jobs", "0"], capture_output=True, text=True, cwd=ROOT
    )
    assert bad.returncode == 2 and "--jobs must be at least 1" in bad.stderr
    missing = subprocess.run(
        [sys.executable, "-m", "coursetools", "tidy", str(tmp_path / "nope.ipynb")],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert missing.returncode == 2 and "no such notebook" in missing.stdout
