"""Headline figures and kept GPU runs (`helpers.figures`, `coursetools.gpu_runs`), on a CPU.

The bundles here are fixtures: made on a CPU, marked `fixture`, and refused as GPU runs; the tests that keep
one clear the mark in a temporary folder of runs, never in `docs/gpu-runs/`.
"""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import pytest

from coursetools import gpu_runs
from coursetools.execute import FIGURES_SUFFIX, chapter_hash, execute_chapter
from helpers import figures

from .notebook_code import write_notebook

ROOT = Path(__file__).resolve().parents[2]
H200 = "1× NVIDIA H200 | torch 2.15.0+cu132 (CUDA 13.2) | 16 CPUs | Python 3.12.3 | local"


def _fixture_run(folder: Path, *, date: str = "2026-11-30", fixture: bool = True) -> tuple[dict, Path]:
    """A self-test's results and kept chapter folder, as `run_self_test(bundle=…)` leaves them, made here."""
    chapter = ROOT / "notebooks" / "07_pinned_memory.ipynb"
    kept = folder / "kept" / chapter.stem
    kept.mkdir(parents=True)
    (kept / chapter.name).write_bytes(chapter.read_bytes())
    (kept / f"{chapter.stem}{FIGURES_SUFFIX}").write_text(
        json.dumps(
            {
                "name": "best pinned host-to-device copy",
                "value": 48.0,
                "unit": "GB/s",
                "limit": 64.0,
                "limit_name": "PCIe 5.0 x16, per direction",
                "source": "NVML",
                "gpu": "NVIDIA H200",
                "torch": "2.15.0+cu132",
                "stamp": "…",
            }
        )
        + "\n"
    )
    results = {
        "date": date,
        "hardware": H200,
        "versions": "torch 2.15.0+cu132 / CUDA 13.2",
        "ok": True,
        "gpu_verified": True,
        "seconds": 300.0,
        "rows": [{"test": f"chapter {chapter.stem}", "outcome": "passed", "hash": chapter_hash(chapter)}],
    }
    if fixture:
        results[gpu_runs.FIXTURE_KEY] = True
    return results, folder / "kept"


def test_a_figure_goes_beside_the_executed_notebook_only_in_a_headless_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(figures.FIGURES_FILE, raising=False)
    row = figures.record("copy", 12.5, "GB/s", limit=16, limit_name="the link", source="NVML")
    assert (row["value"], row["limit"], row["unit"]) == (12.5, 16.0, "GB/s") and row["torch"] and row["stamp"]
    assert not list(tmp_path.iterdir()), "a learner's own run writes nothing"
    out = tmp_path / f"07_x{FIGURES_SUFFIX}"
    monkeypatch.setenv(figures.FIGURES_FILE, str(out))
    figures.record("copy", 12.5, "GB/s")
    figures.record("graphs", 3.2, "×", limit=None)
    assert [r["name"] for r in gpu_runs.read_figures(out)] == ["copy", "graphs"]
    for bad in (True, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="finite number"):
            figures.record("copy", bad, "GB/s")


def test_the_executor_names_the_figures_file_and_reports_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """papermill is replaced by a stand-in that, like a chapter's cell, records a figure from its environment."""
    import papermill

    def measure(input_path: str, output_path: str, **_: object) -> None:
        figures.record("copy", 10.0, "GB/s", limit=12.0, limit_name="the link")
        Path(output_path).write_text(Path(input_path).read_text())

    monkeypatch.setattr(papermill, "execute_notebook", measure)
    chapter = write_notebook(tmp_path / "07_x.ipynb", "print('hello')")
    stale = tmp_path / "build" / f"07_x{FIGURES_SUFFIX}"
    stale.parent.mkdir()
    stale.write_text('{"name": "from an earlier run"}\n')
    run = execute_chapter(chapter, tmp_path / "build")
    assert run.status == "ok" and run.figures == str(stale)
    assert [r["name"] for r in gpu_runs.read_figures(stale)] == ["copy"], "only this run's figures"


def test_a_bundle_holds_results_chapters_and_figures_and_a_fixture_is_never_kept(tmp_path: Path) -> None:
    results, kept = _fixture_run(tmp_path)
    archive = gpu_runs.write_bundle(results, kept, tmp_path / gpu_runs.ARCHIVE_NAME)
    with tarfile.open(archive) as tar:
        names = sorted(tar.getnames())
    assert names == sorted([gpu_runs.RESULTS_NAME, "07_pinned_memory.ipynb", f"07_pinned_memory{FIGURES_SUFFIX}"])
    assert len(names) <= 8 and archive.stat().st_size < 5 * 2**20, "the device tool brings back 8 files at most"
    with pytest.raises(gpu_runs.RunRefused, match="test fixture"):
        gpu_runs.add_run(archive, tmp_path / "runs")
    assert not (tmp_path / "runs").exists()


def test_a_gpu_run_is_kept_once_per_gpu_kind_within_its_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runs = tmp_path / "runs"
    for date in ("2026-11-30", "2026-12-01"):
        results, kept = _fixture_run(tmp_path / date, date=date, fixture=False)
        folder = gpu_runs.add_run(gpu_runs.write_bundle(results, kept, tmp_path / date / "run.tar.gz"), runs)
    assert [p.name for p in gpu_runs.kept_runs(runs)] == ["2026-12-01-h200"] == [folder.name], "the older H200 run went"
    results["gpu_verified"] = False
    cpu_only = gpu_runs.write_bundle(results, kept, tmp_path / "cpu.tar.gz")
    with pytest.raises(gpu_runs.RunRefused, match="not a run that used a GPU"):
        gpu_runs.add_run(cpu_only, runs)
    monkeypatch.setattr(gpu_runs, "RUN_BUDGET_BYTES", 1000)
    results["gpu_verified"] = True
    with pytest.raises(gpu_runs.RunRefused, match="over the 0.001 MB budget"):
        gpu_runs.add_run(gpu_runs.write_bundle(results, kept, tmp_path / "big.tar.gz"), runs)


def test_an_archive_with_folders_or_links_is_refused(tmp_path: Path) -> None:
    archive = tmp_path / "odd.tar.gz"
    (tmp_path / "x").write_text("x")
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(tmp_path / "x", arcname="../escape.txt")
    with pytest.raises(gpu_runs.RunRefused, match="not a plain file at the top"):
        gpu_runs.add_run(archive, tmp_path / "runs")


@pytest.mark.parametrize(
    ("hardware", "kind"),
    [
        (H200, "h200"),
        ("2× Tesla T4 | torch 2.10", "t4x2"),
        ("1× NVIDIA GeForce RTX 4090 | …", "rtx-4090"),
        ("CPU only | …", ""),
    ],
)
def test_a_gpu_kind_names_the_gpus_and_their_count(hardware: str, kind: str) -> None:
    assert gpu_runs.gpu_kind(hardware) == kind


def test_the_page_puts_each_figure_beside_its_limit_and_marks_changed_code_stale(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    results, kept = _fixture_run(tmp_path, fixture=False)
    gpu_runs.add_run(gpu_runs.write_bundle(results, kept, tmp_path / "run.tar.gz"), runs)
    page = gpu_runs.render_page(runs)
    assert "## 1× NVIDIA H200, 2026-11-30" in page
    row = "| 07 | best pinned host-to-device copy | 48 GB/s | 64 GB/s (PCIe 5.0 x16, per direction) | 75% | "
    assert row + "≥ 75% of the limit: met | NVML |" in page, page
    (folder,) = gpu_runs.kept_runs(runs)
    data = json.loads((folder / gpu_runs.RESULTS_NAME).read_text())
    data["rows"][0]["hash"] = "an older one"
    (folder / gpu_runs.RESULTS_NAME).write_text(json.dumps(data))
    assert "| 07 (stale) |" in gpu_runs.render_page(runs)
    assert "No GPU run is kept yet." in gpu_runs.render_page(tmp_path / "none")


def test_the_measured_page_in_the_repository_is_current() -> None:
    assert (ROOT / "docs" / "measured.md").read_text(encoding="utf-8") == gpu_runs.render_page(), (
        "run `python -m coursetools gpu-runs page` and commit docs/measured.md"
    )


def test_every_chapter_that_records_figures_declares_them_and_the_other_way_round() -> None:
    notebooks = (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")
    recording = {nb.name[:2] for nb in notebooks if "from helpers.figures import record" in nb.read_text()}
    assert recording == set(gpu_runs.HEADLINES)


def test_a_gpu_test_reads_a_chapters_figure_from_the_same_self_test(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from coursetools import selftest
    from tests.gpu.missing import MissingCapability
    from tests.gpu.recorded import FIGURES_DIR, recorded

    assert FIGURES_DIR == selftest.FIGURES_DIR, "the self-test names the folder the tests read"
    monkeypatch.delenv(FIGURES_DIR, raising=False)
    with pytest.raises(MissingCapability, match="figures from this self-test"):
        recorded("07", "best pinned host-to-device copy")
    monkeypatch.setenv(FIGURES_DIR, str(tmp_path))
    with pytest.raises(MissingCapability, match="chapter 07's run in this self-test"):
        recorded("07", "best pinned host-to-device copy")
    (tmp_path / "07_pinned_memory").mkdir()
    figures_file = tmp_path / "07_pinned_memory" / f"07_pinned_memory{FIGURES_SUFFIX}"
    figures_file.write_text(json.dumps({"name": "best pinned host-to-device copy", "value": 11.0}) + "\n")
    assert recorded("07", "best pinned host-to-device copy")["value"] == 11.0
    with pytest.raises(pytest.fail.Exception, match="ran but recorded no figure 'best pageable"):
        recorded("07", "best pageable host-to-device copy")
