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
from helpers.gpu_specs import GPUS, GpuSpec

from .notebook_code import write_notebook

ROOT = Path(__file__).resolve().parents[2]
PINNED = "best pinned host-to-device copy"
H200 = "1× NVIDIA H200 | torch 2.15.0+cu132 (CUDA 13.2) | 16 CPUs | Python 3.12.3 | local"


def _fixture_run(folder: Path, *, date: str = "2026-11-20", fixture: bool = True) -> tuple[dict, Path]:
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
        "rows": [
            {"test": f"chapter {chapter.stem}", "outcome": "passed", "hash": chapter_hash(chapter)},
            {"test": "test_gpu_ch07.py::test_pin_memory_makes_a_pinned_copy", "outcome": "passed"},
        ],
    }
    if fixture:
        results[gpu_runs.FIXTURE_KEY] = True
    return results, folder / "kept"


def test_a_figure_goes_beside_the_executed_notebook_only_in_a_headless_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(figures.FIGURES_FILE, raising=False)
    monkeypatch.chdir(tmp_path)  # where a relative or default file would land
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
    assert archive.is_file() and archive.stat().st_size < 5 * 2**20, "one file within the run's budget"
    with pytest.raises(gpu_runs.RunRefused, match="test fixture"):
        gpu_runs.add_run(archive, tmp_path / "runs")
    assert not (tmp_path / "runs").exists()


@pytest.fixture
def course(tmp_path: Path) -> Path:
    """A course of one chapter (07), so that a fixture run of that chapter is a full run."""
    folder = tmp_path / "course"
    folder.mkdir()
    (folder / "07_pinned_memory.ipynb").write_bytes((ROOT / "notebooks" / "07_pinned_memory.ipynb").read_bytes())
    return folder


def _bundle(tmp_path: Path, name: str, **changes: object) -> Path:
    """A GPU run's bundle (not a fixture) with `changes` to its results."""
    results, kept = _fixture_run(tmp_path / name, fixture=False)
    results.update(changes)
    return gpu_runs.write_bundle(results, kept, tmp_path / name / gpu_runs.ARCHIVE_NAME)


def test_a_gpu_run_is_kept_once_per_gpu_kind_within_its_budget(
    tmp_path: Path, course: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = tmp_path / "runs"
    for date in ("2026-11-20", "2026-11-21"):
        folder = gpu_runs.add_run(_bundle(tmp_path, date, date=date), runs, course)
    assert [p.name for p in gpu_runs.kept_runs(runs)] == ["2026-11-21-h200"] == [folder.name], "the older H200 run went"
    refused = {
        "older than the kept one": ({"date": "2026-10-01"}, "the kept run 2026-11-21-h200 is newer"),
        "no GPU, or failed": ({"gpu_verified": False}, "not a passed run that used a GPU"),
        "partial": ({"rows": []}, "a partial run"),
        "without its GPU tests": (
            {"rows": [{"test": "chapter 07_pinned_memory", "outcome": "passed"}]},
            "GPU tests did not run",
        ),
        "rows that are not rows": ({"rows": [1]}, "not a self-test's results"),
        "a row without a test": (
            {"rows": [{"outcome": "passed"}, {"test": "test_gpu_ch07.py::t", "outcome": "passed"}]},
            "not a self-test's results",
        ),
        "seconds that are not a number": ({"seconds": "abc"}, "not a self-test's results"),
        "a failed row under a passed verdict": (
            {
                "rows": [
                    {"test": "chapter 07_pinned_memory", "outcome": "passed"},
                    {"test": "t::x", "outcome": "failed"},
                ]
            },
            "is a failed run",
        ),
        "a verdict that is not True": ({"gpu_verified": "no"}, "not a passed run that used a GPU"),
        "a hardware line of two lines": (
            {"hardware": H200.replace(" | torch", "\n# evil | torch")},
            "one line of text",
        ),
        "in the future": ({"date": "9999-12-31"}, "is not a past date"),
        "not a day": ({"date": "2026-13-45"}, "is not a past date"),
        "a date that is a path": ({"date": "../../elsewhere"}, "is not a past date"),
        "no date": ({"date": None}, "is not a past date"),
    }
    for why, (changes, words) in refused.items():
        with pytest.raises(gpu_runs.RunRefused, match=words):
            gpu_runs.add_run(_bundle(tmp_path, why, **changes), runs, course)
    assert [p.name for p in gpu_runs.kept_runs(runs)] == ["2026-11-21-h200"], "a refused bundle removes nothing"
    assert sorted(p.name for p in runs.iterdir()) == ["2026-11-21-h200"], "and leaves nothing"
    monkeypatch.setattr(gpu_runs, "RUN_BUDGET_BYTES", 1000)
    with pytest.raises(gpu_runs.RunRefused, match="over the 0.001 MB budget"):
        gpu_runs.add_run(_bundle(tmp_path, "big", date="2026-11-22"), runs, course)


@pytest.mark.parametrize("member", ["../escape.txt", "sub/run.json", "C:run.json", "..\\run.json", ".hidden"])
def test_an_archive_with_folders_links_or_odd_names_is_refused(tmp_path: Path, member: str) -> None:
    archive = tmp_path / "odd.tar.gz"
    (tmp_path / "x").write_text("x")
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(tmp_path / "x", arcname=member)
    with pytest.raises(gpu_runs.RunRefused, match="not a plain file at the top"):
        gpu_runs.add_run(archive, tmp_path / "runs")


@pytest.mark.parametrize(
    ("name", "text", "words"),
    [
        (f"07_pinned_memory{FIGURES_SUFFIX}", "{not json\n", "not one of its chapter's recorded figures"),
        (f"07_pinned_memory{FIGURES_SUFFIX}", '{"name": "x", "unit": "GB/s"}\n', "not one of"),
        ("evil.sh", "rm -rf /\n", "which no self-test writes"),
        ("notes.ipynb", "{}", "which no self-test writes"),
        (f"99_no_such_chapter{FIGURES_SUFFIX}", "", "which no self-test writes"),
        (f"07_pinned_memory{FIGURES_SUFFIX}", f'{{"name": "{PINNED}", "unit": "GB/s", "value": NaN}}\n', "not one of"),
        (
            f"07_pinned_memory{FIGURES_SUFFIX}",
            f'{{"name": "{PINNED}", "unit": "GB/s", "value": 1{"0" * 400}}}\n',
            "not",
        ),
        (f"07_pinned_memory{FIGURES_SUFFIX}", f'{{"name": "{PINNED}", "value": 47.7, "limit": 64.0}}\n', "not one of"),
        (
            f"07_pinned_memory{FIGURES_SUFFIX}",
            f'{{"name": "{PINNED}", "unit": "GB/s", "value": 4, "limit": -1}}\n',
            "not",
        ),
        (
            f"07_pinned_memory{FIGURES_SUFFIX}",
            '{"name": "a figure no chapter declares", "unit": "s", "value": 1}\n',
            "not",
        ),
        (f"05_gpu_memory{FIGURES_SUFFIX}", "", "which no self-test writes"),
        (f"07_pinned_memory{FIGURES_SUFFIX}", '{"name": ["a list"], "unit": "GB/s", "value": 4}\n', "not one of"),
    ],
)
def test_a_bundle_with_a_file_the_page_cannot_read_is_refused_and_removes_nothing(
    tmp_path: Path, course: Path, name: str, text: str, words: str
) -> None:
    runs = tmp_path / "runs"
    gpu_runs.add_run(_bundle(tmp_path, "good"), runs, course)
    results, kept = _fixture_run(tmp_path / "bad", fixture=False, date="2026-11-21")
    good = gpu_runs.write_bundle(results, kept, tmp_path / "good.tar.gz")
    (tmp_path / name).write_text(text)
    with tarfile.open(good) as tar, tarfile.open(tmp_path / "bad.tar.gz", "w:gz") as bad:
        for member in tar.getmembers():
            if member.name != name:
                bad.addfile(member, tar.extractfile(member))
        bad.add(tmp_path / name, arcname=name)
    with pytest.raises(gpu_runs.RunRefused, match=words):
        gpu_runs.add_run(tmp_path / "bad.tar.gz", runs, course)
    assert [p.name for p in runs.iterdir()] == ["2026-11-20-h200"]


def test_a_bundle_without_its_executed_chapters_is_refused(tmp_path: Path, course: Path) -> None:
    results, kept = _fixture_run(tmp_path / "run", fixture=False)
    (kept / "07_pinned_memory" / "07_pinned_memory.ipynb").unlink()
    archive = gpu_runs.write_bundle(results, kept, tmp_path / "run.tar.gz")
    with pytest.raises(gpu_runs.RunRefused, match="lacks the executed chapter 07_pinned_memory.ipynb"):
        gpu_runs.add_run(archive, tmp_path / "runs", course)


def test_results_in_another_encoding_and_a_damaged_archive_are_refused(tmp_path: Path, course: Path) -> None:
    results, kept = _fixture_run(tmp_path / "run", fixture=False)
    for name, data in (
        ("bom", b"\xef\xbb\xbf" + json.dumps(results).encode()),
        ("utf16", json.dumps(results).encode("utf-16")),
    ):
        (tmp_path / gpu_runs.RESULTS_NAME).write_bytes(data)
        with tarfile.open(tmp_path / f"{name}.tar.gz", "w:gz") as tar:
            tar.add(tmp_path / gpu_runs.RESULTS_NAME, arcname=gpu_runs.RESULTS_NAME)
        with pytest.raises(gpu_runs.RunRefused, match="not JSON in UTF-8"):
            gpu_runs.add_run(tmp_path / f"{name}.tar.gz", tmp_path / "runs", course)
    whole = gpu_runs.write_bundle(results, kept, tmp_path / "whole.tar.gz").read_bytes()
    (tmp_path / "cut.tar.gz").write_bytes(whole[: len(whole) // 2])
    with pytest.raises(gpu_runs.RunRefused, match="not a readable .tar.gz"):
        gpu_runs.add_run(tmp_path / "cut.tar.gz", tmp_path / "runs", course)


def test_a_kept_run_is_left_out_of_lint() -> None:
    """Kept chapters are papermill's records (its injected cell, long lines): `ruff check .` must not read them."""
    import tomllib

    ruff = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["ruff"]
    assert "docs/gpu-runs" in ruff.get("extend-exclude", []), ruff


def test_results_that_are_not_json_are_refused_in_a_sentence(tmp_path: Path) -> None:
    archive = tmp_path / "bad.tar.gz"
    (tmp_path / gpu_runs.RESULTS_NAME).write_text("{not json")
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(tmp_path / gpu_runs.RESULTS_NAME, arcname=gpu_runs.RESULTS_NAME)
    with pytest.raises(gpu_runs.RunRefused, match="is not JSON"):
        gpu_runs.add_run(archive, tmp_path / "runs")


def test_the_command_refuses_a_fixture_and_says_why(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from coursetools.__main__ import main

    fixture = gpu_runs.write_bundle(*_fixture_run(tmp_path), tmp_path / "fixture.tar.gz")
    assert main(["gpu-runs", "add", str(fixture)]) == 1
    assert "Not kept:" in capsys.readouterr().out and not (ROOT / "docs" / "gpu-runs" / "2026-11-20-h200").exists()


def test_a_bundle_that_cannot_be_written_leaves_the_verdict(tmp_path: Path) -> None:
    from coursetools.selftest import run_self_test

    blocked = tmp_path / "a file"
    blocked.write_text("not a folder")
    report = run_self_test(chapters=False, tests=False, progress=False, bundle=blocked / "gpu-run.tar.gz")
    assert report.bundle == "" and report.bundle_error, report
    from coursetools.selftest import GpuCheck

    unusable = GpuCheck(listed=1, usable=0, why="no kernels for it")
    nothing = run_self_test(gpu=unusable, progress=False, bundle=tmp_path / "never.tar.gz")
    assert nothing.bundle == "" and "nothing ran" in nothing.bundle_error and not (tmp_path / "never.tar.gz").exists()
    written = run_self_test(chapters=False, tests=False, progress=False, bundle=tmp_path / "gpu-run.tar.gz")
    with tarfile.open(written.bundle) as tar:
        assert json.loads(tar.extractfile(gpu_runs.RESULTS_NAME).read())["versions"] == written.versions


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


def test_the_page_puts_each_figure_beside_its_limit_and_marks_changed_code_stale(tmp_path: Path, course: Path) -> None:
    runs = tmp_path / "runs"
    gpu_runs.add_run(_bundle(tmp_path, "run"), runs, course)
    page = gpu_runs.render_page(runs)
    assert "## 1× NVIDIA H200, 2026-11-20" in page
    row = "| 07 | best pinned host-to-device copy | 48 GB/s | 64 GB/s (PCIe 5.0 x16, per direction) | 75.0% | "
    assert row + "≥ 75% of the limit: met | NVML |" in page, page
    (folder,) = gpu_runs.kept_runs(runs)
    data = json.loads((folder / gpu_runs.RESULTS_NAME).read_text())
    data["rows"][0]["hash"] = "an older one"
    (folder / gpu_runs.RESULTS_NAME).write_text(json.dumps(data))
    assert "| 07 (stale) |" in gpu_runs.render_page(runs)
    assert "No GPU run is kept yet." in gpu_runs.render_page(tmp_path / "none")
    assert gpu_runs.render_page(tmp_path / "none").endswith("yet.\n")
    figures_file = folder / f"07_pinned_memory{FIGURES_SUFFIX}"
    row = json.loads(figures_file.read_text())
    figures_file.write_text(json.dumps({**row, "source": "NVML: a | bar\nand a line"}) + "\n")
    assert "| NVML: a \\| bar and a line |" in gpu_runs.render_page(runs), "one cell, one line"
    figures_file.write_text(json.dumps({**row, "value": 47.7, "limit": None}) + "\n")
    assert "| 47.7 GB/s | — | — | ≥ 75% of the limit: no limit was read to judge it by |" in gpu_runs.render_page(runs)
    figures_file.write_text(json.dumps({**row, "value": 47.7}) + "\n")
    assert "| 74.5% | ≥ 75% of the limit: not met |" in gpu_runs.render_page(runs), "the goal as the ratio shows"
    assert gpu_runs.goal_text("11_x", {"name": gpu_runs.GRAPHS, "value": 2.99996, "unit": "×"}) == "≥ 3 ×: met"


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
    from coursetools.selftest import FIGURES_DIR
    from tests.gpu.missing import MissingCapability
    from tests.gpu.recorded import recorded

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


@pytest.mark.parametrize("spec", GPUS, ids=[s.short for s in GPUS])
def test_chapter_10s_datasheet_comparison_runs_and_records_on_every_gpu_in_the_table(spec: GpuSpec) -> None:
    """The GPU-only part of chapter 10's comparison, run here for each row: a GPU of compute capability 8.0
    or later has a TF32 roof too, which no datasheet column matches."""
    nb = json.loads((ROOT / "notebooks" / "10_choosing_a_gpu.ipynb").read_text(encoding="utf-8"))
    cells = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
    cell = next(c for c in cells if "from helpers.figures import record" in c)
    part = cell[cell.index("if spec is not None:") :].split("\nassert ")[0]
    names: list[str] = []
    roofs = {"float32": 10.0, "float16": 80.0, "bfloat16": 80.0, "tf32": 40.0}
    namespace = {"spec": spec, "compute_roof": roofs, "memory_roof": 4213.0, "print": lambda *_: None}
    namespace["record"] = lambda name, *_, **__: names.append(name)
    exec(part, namespace)
    assert names and set(names) <= set(gpu_runs.HEADLINES["10"]), names
    assert {"float32 matmul", "memory roof"} <= set(names)
