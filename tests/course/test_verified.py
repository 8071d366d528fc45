"""The "verified on" record: generated from real runs, keyed by content hash, current for the stacks CI runs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from coursetools import verified
from coursetools.runner import discover_chapters
from helpers.selftest import chapter_hash

ROOT = Path(__file__).resolve().parents[2]


def test_every_chapter_is_verified_as_it_is_now_on_the_stacks_ci_runs() -> None:
    problems = verified.stale_rows(verified.load_record())
    assert not problems, (
        "chapters changed since they last ran on a stack CI runs; run `make test`, `make test-cuda-build` "
        "and `make verified`, then commit docs/verified.*:\n  " + "\n  ".join(problems)
    )


def test_the_page_is_generated_from_the_record_and_linked_from_the_readme() -> None:
    assert verified.PAGE.read_text(encoding="utf-8") == verified.render(verified.load_record()), (
        "docs/verified.md differs from what `make verified` writes: it is generated, never edited"
    )
    assert "docs/verified.md" in (ROOT / "README.md").read_text(encoding="utf-8")


def _two_chapters(tmp_path: Path) -> Path:
    books = tmp_path / "notebooks"
    books.mkdir()
    for nb in discover_chapters()[:2]:
        shutil.copy2(nb, books / nb.name)
    return books


def _result(folder: Path, notebook: Path, status: str = "ok") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    row = {"chapter": notebook.stem, "status": status, "hash": chapter_hash(notebook), "date": "2026-11-22",
           "torch": "torch 2.10.0", "python": "3.12.1", "device": "CPU only"}  # fmt: skip
    (folder / f"{notebook.stem}.result.json").write_text(json.dumps(row), encoding="utf-8")


def test_runs_become_rows_and_a_changed_chapter_reads_stale(tmp_path: Path) -> None:
    books = _two_chapters(tmp_path)
    first, second = sorted(books.glob("*.ipynb"))
    runs = tmp_path / "runs"
    _result(runs / "cpu-only", first)
    _result(runs / "cpu-only", second, status="failed")
    _result(runs / "cuda-build-no-driver", first)
    selftest = tmp_path / "selftest.json"
    selftest.write_text(json.dumps({"date": "2026-11-22", "hardware": "1× NVIDIA H100 80GB HBM3 | torch 2.11",
        "versions": "torch 2.11.0 / CUDA 13.0", "rows": [
        {"test": f"chapter {first.stem}", "outcome": "passed", "hash": chapter_hash(first), "device": "1× H100"},
        {"test": "test_gpu_ch02.py::test_x", "outcome": "passed"}]}), encoding="utf-8")  # fmt: skip
    record = verified.update({"chapters": {}}, verified._test_run_rows(runs) + verified._selftest_rows(selftest))
    assert set(record["chapters"]) == {first.stem}, "a failed run is never recorded"
    assert set(record["chapters"][first.stem]) == {"cpu-only", "cuda-build-no-driver", "gpu"}
    assert verified.stale_rows(record, notebooks_dir=books) == [
        f"{second.stem} on cpu-only: no run recorded",
        f"{second.stem} on cuda-build-no-driver: no run recorded",
    ]
    page = verified.render(record, books)
    row = next(line for line in page.splitlines() if first.stem in line)
    assert row.count("✓ 2026-11-22") == 3 and "1× H100" in row
    assert row.endswith("| reviewed, not executed | reviewed, not executed |"), "T4 x2 and mps: no run yet"
    nb = json.loads(first.read_text(encoding="utf-8"))
    nb["cells"][-1]["source"] = "changed"
    first.write_text(json.dumps(nb), encoding="utf-8")
    assert f"{first.stem} on cpu-only: stale" in verified.stale_rows(record, notebooks_dir=books)
    assert "stale (ran 2026-11-22" in verified.render(record, books)


def test_the_hash_ignores_outputs_but_not_sources(tmp_path: Path) -> None:
    notebook = tmp_path / "00_x.ipynb"
    cells = [{"cell_type": "code", "source": "print(1)", "outputs": [], "metadata": {}}]
    notebook.write_text(json.dumps({"cells": cells}), encoding="utf-8")
    before = chapter_hash(notebook)
    cells[0]["outputs"] = [{"output_type": "stream", "text": "1"}]
    notebook.write_text(json.dumps({"cells": cells}), encoding="utf-8")
    assert chapter_hash(notebook) == before
    cells[0]["source"] = ["print(", "2)"]
    notebook.write_text(json.dumps({"cells": cells}), encoding="utf-8")
    assert chapter_hash(notebook) != before
