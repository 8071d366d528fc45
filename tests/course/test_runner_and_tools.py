"""The course runner, the notebook tidier, the command line, the fresh-process helper, timing, import cost."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from coursetools import authoring, runner
from helpers.fresh_python import run_fresh_python
from helpers.timing import format_seconds, gigabytes_per_second, time_call, wall_seconds

ROOT = Path(__file__).resolve().parents[2]


def _notebook(path: Path, *cells: str) -> Path:
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell("QUICK = False")
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, *[nbformat.v4.new_code_cell(c) for c in cells]]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)
    return path


def test_a_failing_chapter_does_not_stop_the_others(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    books = tmp_path / "notebooks"
    books.mkdir()
    _notebook(books / "00_good.ipynb", "print('Running on: test box | torch x')", "print('[no-GPU path] x')")
    _notebook(books / "01_bad.ipynb", "raise ValueError('on purpose')")
    _notebook(books / "02_after.ipynb", "assert QUICK is True")
    build = tmp_path / "build"
    code = runner.run_course(quick=True, notebooks_dir=books, build_dir=build, jobs=2)
    assert code == 1
    rows = {r["chapter"]: r for r in json.loads((build / "summary.json").read_text())}
    assert rows["00_good"]["status"] == "ok" and rows["00_good"]["device"] == "test box"
    assert rows["00_good"]["no_gpu_cells"] == 1
    assert rows["01_bad"]["status"] == "failed" and "on purpose" in rows["01_bad"]["error"]
    assert rows["02_after"]["status"] == "ok", "QUICK reached the chapter and later chapters still ran"
    index = (build / "index.html").read_text()
    assert 'href="00_good.html"' in index and (build / "00_good.html").exists()
    printed = capsys.readouterr().out
    assert "Failed: 01_bad" in printed and "| 00_good | ok |" in printed
    assert runner.run_course(only=["99"], notebooks_dir=books, build_dir=build) == 2


def test_discover_chapters_ignores_other_notebooks(tmp_path: Path) -> None:
    for name in ("00_a.ipynb", "10_b.ipynb", "gpu_self_test.ipynb", "scratch.ipynb"):
        (tmp_path / name).write_text("{}")
    assert [p.name for p in runner.discover_chapters(tmp_path)] == ["00_a.ipynb", "10_b.ipynb"]


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
    doctor = subprocess.run([sys.executable, "-m", "helpers", "doctor"], capture_output=True, text=True, cwd=ROOT)
    assert doctor.returncode in (0, 1) and "Environment report" in doctor.stdout and "Diagnosis" in doctor.stdout
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


def test_run_fresh_python_sets_and_removes_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COURSE_TEST_VAR", "parent")
    code = "import os, helpers; print(os.environ.get('COURSE_TEST_VAR'), os.environ.get('OTHER'))"
    assert run_fresh_python(code).split() == ["parent", "None"]
    assert run_fresh_python(code, env={"COURSE_TEST_VAR": None, "OTHER": "x"}).split() == ["None", "x"]
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        run_fresh_python("1 / 0")
    with pytest.raises(ValueError, match="some Python code"):
        run_fresh_python("  ")
    with pytest.raises(RuntimeError, match="did not finish within"):
        run_fresh_python("import time; time.sleep(5)", timeout=0.5)


def test_timing_helpers() -> None:
    t = time_call(lambda: sum(range(1000)), "cpu", min_run_time=0.05)
    assert 0 < t.seconds < 0.1 and t.repeats >= 1 and t.device == "cpu" and "torch" in t.stamp
    assert "per call on cpu" in str(t)
    assert wall_seconds(lambda: None, "cpu") >= 0
    assert gigabytes_per_second(2_000_000_000, 2.0) == 1.0
    assert [format_seconds(s) for s in (2.0, 0.002, 2e-6, 2e-9)] == ["2 s", "2 ms", "2 µs", "2 ns"]
    with pytest.raises(ValueError, match="positive"):
        gigabytes_per_second(1, 0)
    with pytest.raises(ValueError, match="positive"):
        time_call(lambda: None, "cpu", min_run_time=0)


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


def test_show_source_prints_the_helpers_code(capsys: pytest.CaptureFixture[str]) -> None:
    from helpers.devices import try_gpu
    from helpers.show import show_source

    show_source(try_gpu)
    out = capsys.readouterr().out
    assert out.startswith("# from helpers.devices") and "def try_gpu(" in out
    with pytest.raises(TypeError, match="function or class"):
        show_source(len)


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


def test_validation_messages() -> None:
    from helpers.validation import positive_number, whole_number

    assert whole_number(3, "n") == 3 and whole_number(0, "i", minimum=0) == 0
    assert positive_number(2, "x") == 2.0
    for bad, error, words in (
        (0, ValueError, "n must be at least 1, not 0"),
        (True, TypeError, "whole number"),
        (1.5, TypeError, "whole number, not 1.5"),
    ):
        with pytest.raises(error, match=words):
            whole_number(bad, "n")
    for bad, error in ((0, ValueError), (float("inf"), ValueError), ("1", TypeError), (False, TypeError)):
        with pytest.raises(error, match="x must be"):
            positive_number(bad, "x")
