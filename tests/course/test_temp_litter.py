"""The temp-dir check of the chapters' nbval run (tests/temp_litter.py) catches a notebook that leaves files.

Two tiny notebooks run under nbval in a child pytest with only that plugin (not the repository's
conftest, whose hooks record the chapters' runs): one leaves a file and a folder in its temp dir,
the other cleans up after itself and uses a scratch folder, as a chapter should.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from coursetools.execute import execute_chapter, temp_dir_env, temp_dir_litter

from .notebook_code import write_notebook

ROOT = Path(__file__).resolve().parents[2]

LEAVES = """\
import os, tempfile
with open(os.path.join(tempfile.gettempdir(), "net.pt"), "w") as f:
    f.write("weights")
tempfile.mkdtemp(prefix="left-")
"""

CLEAN = """\
import re, tempfile
from pathlib import Path
import helpers
assert re.fullmatch(r"pytorch-gpu-course-\\d+-99-\\w+", Path(tempfile.gettempdir()).name), tempfile.gettempdir()
work = helpers.scratch_folder()  # removed when the kernel exits, or by the next run if it is killed
(work / "worker.py").write_text("x = 1")
with tempfile.TemporaryDirectory() as folder:
    (Path(folder) / "data.bin").write_bytes(b"0")
"""


def test_a_notebook_that_leaves_files_in_the_temp_dir_fails_and_one_that_cleans_up_passes(tmp_path: Path) -> None:
    books = tmp_path / "notebooks"
    books.mkdir()
    write_notebook(books / "99_leaves.ipynb", LEAVES)
    write_notebook(books / "99_clean.ipynb", CLEAN)
    ini = tmp_path / "pytest.ini"
    ini.write_text("[pytest]\naddopts =\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", str(books), "-c", str(ini), "--rootdir", str(tmp_path)]
        + ["-p", "tests.temp_litter", "--nbval-lax", "--nbval-current-env", "-p", "no:cacheprovider", "-rA", "-q"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert "ERROR at teardown of notebooks/99_leaves.ipynb" in out and "teardown of notebooks/99_clean" not in out, out
    message = next(line for line in out.splitlines() if line.startswith("99_leaves.ipynb left"))
    assert message.startswith("99_leaves.ipynb left 2 file(s) or folder(s) in its temp dir: left-"), message
    assert "/, net.pt. A chapter removes what it writes" in message, message
    assert "4 passed, 1 error" in out, out  # every cell of both notebooks ran and passed; the error is the check's


def test_allowed_caches_and_abandoned_scratch_folders_are_not_litter(tmp_path: Path) -> None:
    env = temp_dir_env(tmp_path)
    assert env == {"TMPDIR": str(tmp_path)}
    (cache,) = tmp_path.iterdir()
    assert cache.name.startswith("torchinductor_") and cache.is_symlink(), "compiled kernels stay warm between runs"
    for name in ("matplotlib-abc123", "pymp-k2j4h1", "pytorch-gpu-course-999999999-x"):  # the last: a dead kernel's
        (tmp_path / name).mkdir()
    (tmp_path / "stray.txt").write_text("")
    (tmp_path / "tmpab12cd").mkdir()
    assert temp_dir_litter(tmp_path) == ["stray.txt", "tmpab12cd/"]
    assert not (tmp_path / "pytorch-gpu-course-999999999-x").exists(), "removed, as the next scratch_folder() would"


def test_the_runner_fails_a_chapter_that_leaves_files_in_its_temp_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`execute_chapter` (the course runner and the GPU self-test) gives the kernel its own TMPDIR too.

    papermill is replaced by a stand-in that, like a kernel, finds its temp dir in TMPDIR.
    """
    import papermill

    def leave_a_file(input_path: str, output_path: str, **_: object) -> None:
        Path(os.environ["TMPDIR"], "net.pt").write_text("weights")
        Path(output_path).write_text(Path(input_path).read_text())

    monkeypatch.setattr(papermill, "execute_notebook", leave_a_file)
    chapter = write_notebook(tmp_path / "04_x.ipynb", "print('hello')")
    before = os.environ.get("TMPDIR")
    run = execute_chapter(chapter, tmp_path / "build")
    assert run.status == "failed" and run.error == "the chapter left 1 file(s) or folder(s) in its temp dir: net.pt"
    assert os.environ.get("TMPDIR") == before, "the runner's own TMPDIR is put back"
    left = list(Path(tempfile.gettempdir()).glob(f"pytorch-gpu-course-{os.getpid()}-04-*"))
    assert not left, "the kernel's temp dir is removed"


def test_no_kernel_temp_dir_where_its_path_would_be_too_long_for_sockets(monkeypatch: pytest.MonkeyPatch) -> None:
    from coursetools import execute

    folder = execute.kernel_temp_dir("09_x")
    assert folder is not None and folder.name.startswith(f"pytorch-gpu-course-{os.getpid()}-09-")
    folder.rmdir()
    monkeypatch.setattr(execute, "KERNEL_TEMP_DIR_LENGTH", len(str(folder)) - 1)  # as in macOS's long temp dir
    assert execute.kernel_temp_dir("09_x") is None
    assert not list(folder.parent.glob(f"pytorch-gpu-course-{os.getpid()}-09-*")), "and none is left behind"
