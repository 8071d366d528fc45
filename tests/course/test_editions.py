"""The handout and teacher editions (`python -m coursetools edition`): what each ships, and that it works.

No chapter is executed here. Most editions are built without their site (`executed_dir=None`);
the site step, one call to `coursetools.site.build_site` (tested with the site), runs once on a
tiny synthetic executed chapter, to check the edition's label and that the leak search reads the
built pages. The learner's side is checked in a fresh Python whose only `helpers` is the
edition's copy.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from coursetools import editions
from coursetools.execute import discover_chapters
from helpers.checking import _NO_SOLUTION
from helpers.exercises import ch02
from tests.course.notebook_code import write_notebook

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def solutions() -> dict[str, str]:
    return editions.solution_texts()


@pytest.fixture(scope="module")
def handout(tmp_path_factory) -> editions.Edition:
    return editions.build_edition("handout", tmp_path_factory.mktemp("ed") / "handout", executed_dir=None)


@pytest.fixture(scope="module")
def teacher(tmp_path_factory) -> editions.Edition:
    return editions.build_edition("teacher", tmp_path_factory.mktemp("ed") / "teacher", executed_dir=None)


def _run_with(folder: Path, code: str, tmp_path: Path) -> str:
    """Run `code` in a fresh Python that finds `helpers` in `folder` only (as the notebooks' set-up cell does)."""
    env = {**os.environ, "PYTHONPATH": str(folder)}
    script = f"import helpers, sys\nassert helpers.__file__.startswith({str(folder)!r}), helpers.__file__\n{code}"
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_every_question_has_a_solution_to_search_for(solutions):
    from helpers.checking import load_exercises

    chapters = [p.name[:2] for p in discover_chapters()]
    questions = {f"ch{nn} q{q.number}" for nn in chapters for q in vars(load_exercises(nn, {})).values()}
    assert set(solutions) == questions
    assert all(code.strip() for code in solutions.values())


def test_handout_ships_no_solution_text(handout, solutions):
    assert not (handout.folder / "helpers" / editions.SOLUTIONS_DIR).exists()
    assert not (handout.folder / "solutions.md").exists()
    assert editions.solution_leaks(handout.folder, solutions) == []
    assert editions.solution_line_leaks(handout.folder, solutions) == []
    assert [p.name for p in handout.notebooks] == [p.name for p in discover_chapters()]
    assert "helpers.exercises.solutions" not in (handout.folder / "pyproject.toml").read_text()


def test_leak_search_finds_a_solution_however_it_is_written(tmp_path, solutions):
    key, code = "ch02 q3", solutions["ch02 q3"]
    pieces = "".join(f"    {line!r}\n" for line in code.splitlines(keepends=True))
    (tmp_path / "as_string.py").write_text(f"HIDDEN = (\n{pieces})\n")  # one literal per line, as ruff keeps it
    write_notebook(tmp_path / "in_a_cell.ipynb", code)
    page = "<pre>" + "".join(f"<span>{c}</span>" for c in code.replace(">", "&gt;")) + "</pre>"
    (tmp_path / "page.html").write_text(f"<html><body>{page}</body></html>")
    (tmp_path / "unrelated.txt").write_text("def zeros_for(t, n):\n    return ...\n")
    found = editions.solution_leaks(tmp_path, {key: code})
    assert found == [f"as_string.py: {key}", f"in_a_cell.ipynb: {key}", f"page.html: {key}"]


def test_line_search_finds_a_near_miss_but_not_what_the_course_shows_openly(tmp_path, solutions):
    key, code = "ch10 q3", solutions["ch10 q3"]
    signature, flops, moved, _ = code.splitlines()
    near_miss = "\n".join((signature, flops, moved + "  # a comment of its own", "    return moved, flops"))
    (tmp_path / "helpers" / "exercises").mkdir(parents=True)
    (tmp_path / "helpers" / "exercises" / "ch10.py").write_text(f"WRONG = {near_miss!r}\n")
    (tmp_path / "helpers" / "timing.py").write_text(f"def cost():\n{flops}\n")  # infrastructure shares a line
    (tmp_path / "notebooks").mkdir()
    write_notebook(tmp_path / "notebooks" / "10_x.ipynb", f"{signature}\n    # Your code\n    ...")  # starter code
    (tmp_path / "notes.md").write_text(f"Almost:\n\n    {moved.strip()}\n    {flops.strip()}\n")
    assert editions.solution_leaks(tmp_path, {key: code}) == []  # no file holds the whole solution
    found = editions.solution_line_leaks(tmp_path, {key: code})
    assert found == [
        f"helpers/exercises/ch10.py: {key} line {' '.join(moved.split())!r}",
        f"notes.md: {key} line {' '.join(moved.split())!r}",
    ]


def test_handout_solution_says_so_and_check_still_accepts_a_right_answer(handout, tmp_path):
    right = ch02.QUESTIONS[2].solution_code  # from the full repository, the only place that has it
    out = _run_with(
        handout.folder,
        textwrap.dedent(f"""
            import torch
            from helpers.checking import load_exercises
            ns = {{"torch": torch}}
            ex = load_exercises("02", ns)
            assert ex.q3.solution_code is None
            ex.q3.solution()
            ex.q3.hint()
            exec({right!r}, ns)
            ex.q3.check()
        """),
        tmp_path,
    )
    assert _NO_SOLUTION.format(number=3) in out
    assert right.splitlines()[-1].strip() not in out
    assert "Hint:" in out
    assert "Correct! Question 3 is done." in out


def test_teacher_prints_the_real_solution(teacher, tmp_path, solutions):
    out = _run_with(
        teacher.folder,
        'from helpers.checking import load_exercises\nload_exercises("02", {}).q3.solution()',
        tmp_path,
    )
    assert out.startswith("One solution:")
    assert textwrap.indent(solutions["ch02 q3"], "    ") in out
    page = (teacher.folder / "solutions.md").read_text()
    assert all(code.strip() in page for code in solutions.values())
    assert "helpers.exercises.solutions" in (teacher.folder / "pyproject.toml").read_text()


def test_notebooks_are_the_chapters_as_in_git(handout):
    for built in handout.notebooks:
        assert json.loads(built.read_text()) == json.loads((ROOT / "notebooks" / built.name).read_text())


def test_no_chapter_prints_a_solution_when_run():
    assert {p.name: editions.solution_calls(p) for p in discover_chapters()} == dict.fromkeys(
        [p.name for p in discover_chapters()], []
    )


def test_executed_cells_that_print_a_solution_are_refused(tmp_path):
    executed = tmp_path / "executed"
    executed.mkdir()
    write_notebook(executed / "00_tiny.ipynb", "# ex.q1.solution() would show it", "x = 1\nex.q1.solution()")
    assert editions.solution_calls(executed / "00_tiny.ipynb") == [2]
    with pytest.raises(editions.EditionError, match=r"00_tiny.ipynb code cells \[2\]"):
        editions.build_edition("handout", tmp_path / "out", executed_dir=executed)
    assert not (tmp_path / "out").exists()


def _tiny_executed_chapter(folder: Path, printed: str) -> Path:
    """An executed one-cell chapter whose cell printed `printed` (as papermill would store it)."""
    import nbformat

    folder.mkdir()
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# 00 · A tiny chapter\n\nSome text."),
        nbformat.v4.new_code_cell("show()"),
    ]
    nb.cells[1].outputs = [nbformat.v4.new_output("stream", name="stdout", text=printed)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, folder / "00_tiny.ipynb")
    return folder


@pytest.mark.slow
def test_the_site_is_labelled_and_searched_for_solutions(tmp_path, solutions):
    clean = editions.build_edition(
        "handout", tmp_path / "ok", executed_dir=_tiny_executed_chapter(tmp_path / "a", "2\n")
    )
    assert clean.site_index is not None and "Handout edition" in clean.site_index.read_text()
    assert not (clean.folder / "jupyter_execute").exists()
    leaky = _tiny_executed_chapter(tmp_path / "b", solutions["ch02 q2"] + "\n")
    with pytest.raises(editions.EditionError, match=r"site/.*: ch02 q2"):
        editions.build_edition("handout", tmp_path / "no", executed_dir=leaky)
    assert not (tmp_path / "no").exists()


def test_no_executed_chapters_gets_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="coursetools run"):
        editions.build_edition("teacher", tmp_path / "out", executed_dir=tmp_path)


def test_bad_edition_and_foreign_folder_are_refused(tmp_path):
    with pytest.raises(ValueError, match="handout, teacher"):
        editions.build_edition("student", tmp_path / "out", executed_dir=None)
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    with pytest.raises(FileExistsError, match="not an edition"):
        editions.build_edition("handout", foreign, executed_dir=None)
    assert (foreign / "notes.txt").read_text() == "keep me"


def test_solution_never_raises_when_its_lookup_is_broken(capsys):
    from helpers.checking import Question

    Question(1, "", "x", lambda value: None, "", chapter="77").solution()  # no such solutions module
    Question(99, "", "x", lambda value: None, "", chapter="02").solution()  # no such question
    said = capsys.readouterr().out.splitlines()
    assert len(said) == 2 and all("could not be loaded" in line and "bug in the course" in line for line in said)
