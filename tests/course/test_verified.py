"""The "verified on" record: generated from real runs, keyed by content hash, current for the stacks CI runs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from coursetools import verified
from coursetools.execute import chapter_hash, discover_chapters

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


def _selftest(path: Path, chapter: Path, *, gpu_verified: bool, on_kaggle: bool = False, hardware: str = "") -> Path:
    path.write_text(json.dumps({"date": "2026-11-22", "hardware": hardware or "1× NVIDIA H100 80GB HBM3 | torch 2.11",
        "versions": "torch 2.11.0 / CUDA 13.0", "gpu_verified": gpu_verified, "on_kaggle": on_kaggle, "rows": [
        {"test": f"chapter {chapter.stem}", "outcome": "passed", "hash": chapter_hash(chapter), "device": "1× H100"},
        {"test": "test_gpu_ch02.py::test_x", "outcome": "passed"}]}), encoding="utf-8")  # fmt: skip
    return path


def test_runs_become_rows_and_a_changed_chapter_reads_stale(tmp_path: Path) -> None:
    books = _two_chapters(tmp_path)
    first, second = sorted(books.glob("*.ipynb"))
    runs = tmp_path / "runs"
    cpu, kaggle_build, newest = verified.CI_STACKS
    _result(runs / cpu, first)
    _result(runs / cpu, second, status="failed")
    _result(runs / kaggle_build, first)
    _result(runs / newest, first)
    selftest = _selftest(tmp_path / "selftest.json", first, gpu_verified=True)
    record = verified.update({"chapters": {}}, verified._test_run_rows(runs) + verified._selftest_rows(selftest))
    assert set(record["chapters"]) == {first.stem}, "a failed run is never recorded"
    assert set(record["chapters"][first.stem]) == {cpu, kaggle_build, newest, "gpu"}
    assert verified.stale_rows(record, notebooks_dir=books) == [
        f"{second.stem} on {s}: no run recorded" for s in verified.CI_STACKS
    ]
    page = verified.render(record, books)
    titles = [title for title, _ in verified.COLUMNS.values()][:3]
    assert titles == [
        "CPU-only build, torch 2.13",
        "CUDA build without a driver, torch 2.10 (Kaggle's)",
        "CUDA build without a driver, torch 2.15 (newest)",
    ]
    assert "| " + " | ".join(titles) + " |" in page, "the page tells the stacks apart by torch release"
    row = next(line for line in page.splitlines() if first.stem in line)
    assert row.count("✓ 2026-11-22") == 4 and "1× H100" in row
    assert row.endswith("| reviewed, not executed | reviewed, not executed |"), "T4 x2 and mps: no run yet"
    nb = json.loads(first.read_text(encoding="utf-8"))
    nb["cells"].append({"cell_type": "markdown", "metadata": {}, "source": "prose, edited"})
    first.write_text(json.dumps(nb), encoding="utf-8")
    assert verified.stale_rows(record, notebooks_dir=books) == [
        f"{second.stem} on {s}: no run recorded" for s in verified.CI_STACKS
    ], "a prose edit leaves what ran current: the hash is the code's"
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    code[-1]["source"] = "changed"
    first.write_text(json.dumps(nb), encoding="utf-8")
    assert f"{first.stem} on {cpu}: stale" in verified.stale_rows(record, notebooks_dir=books)
    assert "stale (ran 2026-11-22" in verified.render(record, books)


def test_only_a_self_test_that_used_a_gpu_gives_the_gpu_columns_rows(tmp_path: Path) -> None:
    first = sorted(_two_chapters(tmp_path).glob("*.ipynb"))[0]
    assert verified._selftest_rows(_selftest(tmp_path / "cpu.json", first, gpu_verified=False)) == [], (
        "a run without a usable GPU (or one that failed) verified nothing GPU-specific"
    )
    kaggle = _selftest(tmp_path / "k.json", first, gpu_verified=True, on_kaggle=True, hardware="2× Tesla T4 | torch")
    assert [stack for _, stack, _ in verified._selftest_rows(kaggle)] == ["kaggle-t4x2"]


def test_a_stack_is_named_by_its_build_and_torch_release() -> None:
    import torch

    assert verified.torch_release("2.10.0+cu128") == "2.10" and verified.torch_release("2.15.0") == "2.15"
    name = verified.stack_name()
    if not torch.cuda.is_available() and not torch.backends.mps.is_available():
        build = "cuda-build-no-driver" if torch.version.cuda else "cpu-only"
        assert name == f"{build}-torch{verified.torch_release(torch.__version__)}"


def test_the_ci_stacks_are_the_makefiles_pins() -> None:
    import re

    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    pins = dict(re.findall(r"^(TORCH|CUDA_TORCH|NEWEST_TORCH) \?= torch==(\d+\.\d+)\.\d+$", makefile, re.M))
    assert verified.CI_STACKS == (
        f"cpu-only-torch{pins['TORCH']}",
        f"cuda-build-no-driver-torch{pins['CUDA_TORCH']}",
        f"cuda-build-no-driver-torch{pins['NEWEST_TORCH']}",
    )
    assert list(verified.COLUMNS)[:3] == list(verified.CI_STACKS)
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert all(f"stack {target} " in ci for target in ("test", "test-cuda-build", "test-newest-torch"))


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
