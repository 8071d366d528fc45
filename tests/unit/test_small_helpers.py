"""Small helpers: starting a chapter, the version check, the scratch folder, the fresh-process helper,
timing, import cost, stamped plots, the learner's command line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import helpers
from helpers.processes import run_fresh_python
from helpers.timing import format_seconds, gigabytes_per_second, time_call, wall_seconds

ROOT = Path(__file__).resolve().parents[2]


def test_start_prints_the_machine_and_returns_quick(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.delenv("COURSE_QUICK", raising=False)
    written_for = ".".join(helpers.__version__.split(".")[:2])
    assert helpers.start(written_for, False) is False
    assert helpers.start(written_for, True) is True
    out = capsys.readouterr().out
    assert out.startswith("Running on: ") and "Note:" not in out
    monkeypatch.setenv("COURSE_QUICK", "1")
    assert helpers.start(written_for, False) is True, "the tests' COURSE_QUICK=1 turns QUICK on"


def test_a_chapter_written_for_another_version_says_how_to_update(capsys) -> None:
    assert helpers.version_notice("2.0", "2.0.7") == "", "a patch release serves the chapter"
    older = helpers.version_notice("2.1", "2.0.0", "/kaggle/input/pytorch-gpu-course-helpers")
    assert "written for the course's helpers 2.1" in older and "2.0.0" in older and "older" in older
    assert f"update the dataset '{helpers.HELPERS_DATASET}'" in older and "git pull" in older
    assert "/kaggle/input/pytorch-gpu-course-helpers" in older, "says which helpers it found"
    newer = helpers.version_notice("1.9", "2.0.0")
    assert "newer" in newer and helpers.HELPERS_DATASET in newer and "newest version of this chapter" in newer
    assert "10" in helpers.version_notice("2.10", "2.9.0") and "older" in helpers.version_notice("2.10", "2.9.0")
    helpers.start("0.1")
    assert "Note: this chapter was written for the course's helpers 0.1" in capsys.readouterr().out


def test_scratch_folder_is_fresh_importable_and_removed_at_exit() -> None:
    code = (
        "import helpers, importlib, sys\n"
        "work = helpers.scratch_folder()\n"
        "(work / 'worker_mod.py').write_text('VALUE = 42\\n')\n"
        "import worker_mod\n"
        "assert worker_mod.VALUE == 42 and sys.path[0] == str(work)\n"
        "other = helpers.scratch_folder(importable=False)\n"
        "assert other != work and not list(other.iterdir()) and str(other) not in sys.path\n"
        "print(work, other)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    folders = [Path(p) for p in done.stdout.split()]
    assert len(folders) == 2 and not any(f.exists() for f in folders), "removed when the process exits"


@pytest.mark.skipif(os.name != "posix", reason="abandoned folders are found by process id on POSIX only")
def test_scratch_folders_of_killed_kernels_are_removed(tmp_path: Path) -> None:
    from helpers.processes import PREFIX, remove_abandoned_folders

    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = tmp_path / f"{PREFIX}{int(ended.stdout)}-abc"  # a kernel that was killed before its exit handlers ran
    alive = tmp_path / f"{PREFIX}{os.getpid()}-def"  # this process: still running
    other = tmp_path / "pytorch-gpu-course-notes"  # not a scratch folder's name
    for folder in (dead, alive, other):
        (folder / "worker.py").parent.mkdir()
        (folder / "worker.py").write_text("")
    assert remove_abandoned_folders(tmp_path) == [dead]
    assert not dead.exists() and alive.exists() and other.exists()


def test_learners_command_line_is_the_doctor() -> None:
    doctor = subprocess.run([sys.executable, "-m", "helpers", "doctor"], capture_output=True, text=True, cwd=ROOT)
    assert doctor.returncode in (0, 1) and "Environment report" in doctor.stdout and "Diagnosis" in doctor.stdout
    bad = subprocess.run([sys.executable, "-m", "helpers", "run"], capture_output=True, text=True, cwd=ROOT)
    assert bad.returncode == 2 and "invalid choice" in bad.stderr, "course tooling is not a learner command"


def test_run_fresh_python_sets_and_removes_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COURSE_TEST_VAR", "parent")
    code = "import os, helpers; print(os.environ.get('COURSE_TEST_VAR'), os.environ.get('OTHER'))"
    assert run_fresh_python(code).split() == ["parent", "None"]
    assert run_fresh_python(code, env={"COURSE_TEST_VAR": None, "OTHER": "x"}).split() == ["None", "x"]
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        run_fresh_python("1 / 0")
    with pytest.raises(RuntimeError, match="did not finish within"):
        run_fresh_python("import time; time.sleep(5)", timeout=0.5)


def test_timing_helpers() -> None:
    t = time_call(lambda: sum(range(1000)), "cpu", min_run_time=0.05)
    assert 0 < t.seconds < 0.1 and t.repeats >= 1 and t.device == "cpu" and "torch" in t.stamp
    assert "per call on cpu" in str(t) and t.threads == 1 and ", 1 CPU thread;" in str(t)  # the Timer's default
    assert time_call(lambda: None, "cpu", min_run_time=0.01, threads=2).threads == 2, "kept as it was timed"
    assert wall_seconds(lambda: None, "cpu") >= 0
    assert gigabytes_per_second(2_000_000_000, 2.0) == 1.0
    assert [format_seconds(s) for s in (2.0, 0.002, 2e-6, 2e-9)] == ["2 s", "2 ms", "2 µs", "2 ns"]


def test_import_helpers_is_cheap_beyond_torch() -> None:
    code = (
        "import sys, time\n"
        "t0 = time.perf_counter(); import torch; t1 = time.perf_counter(); import helpers; t2 = time.perf_counter()\n"
        "heavy = [m for m in ('matplotlib', 'papermill', 'ipywidgets', 'nbconvert', 'IPython') if m in sys.modules]\n"
        "print(t2 - t1, ','.join(heavy) or '-')\n"
    )
    costs = []
    for _ in range(3):
        cost, heavy = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
        ).stdout.split()
        assert heavy == "-", f"import helpers pulled in {heavy}"
        costs.append(float(cost))
    assert min(costs) <= 0.3, f"import helpers costs {min(costs):.2f} s beyond import torch"


def test_plots_stamp_a_figure(tmp_path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from helpers.plots import add_stamp, new_figure

    fig, ax = new_figure(4, 3)
    ax.plot([1, 2], [3, 4])
    add_stamp(fig, "measured on test hardware")
    assert any(t.get_text() == "measured on test hardware" for t in fig.texts)
    fig.savefig(tmp_path / "f.png")
    assert (tmp_path / "f.png").stat().st_size > 0
