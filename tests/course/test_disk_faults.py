"""A full disk or a read-only folder while the runner or the Kaggle build writes.

What must hold (issue 18): the fault is reported in one sentence naming the path, with no
traceback; no file is left cut short and no temporary file is left behind; the runner goes on
with the next chapter and still writes its summary (or says in one sentence that it could not,
and exits non-zero).

CI runs as root, and `chmod` does not stop root, so the faults are simulated in this process:
`FaultyDisk` makes the writes under one folder fail as the operating system would, with ENOSPC
after `room` bytes (a full disk: the file is cut there, as a real one is) or with EACCES when a
file or folder is created (a read-only folder). Reads and every other folder are untouched.
papermill is replaced by a fake executor that writes its output notebook the way papermill does
(`open(path, "w")`, then one write), so no chapter is executed and the tests take a second.
"""

from __future__ import annotations

import builtins
import errno
import io
import json
import os
from pathlib import Path
from typing import Any

import pytest

from coursetools import editions, execute, kaggle, runner

from .notebook_code import write_notebook

WRITING = ("w", "a", "x", "+")


class _CutFile:
    """A file on a disk with `disk.room` bytes left: a write past it is cut there and raises ENOSPC."""

    def __init__(self, real: Any, disk: FaultyDisk) -> None:
        self._real, self._disk = real, disk

    def write(self, data: Any) -> int:
        room = self._disk.room
        if len(data) > room:
            self._real.write(data[:room])
            self._real.flush()
            self._disk.room = 0
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self._disk.room -= len(data)
        return self._real.write(data)

    def fileno(self) -> int:  # shutil then copies through write() instead of sendfile
        raise io.UnsupportedOperation("fileno")

    def __enter__(self) -> _CutFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self._real.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


class FaultyDisk:
    """Make writes under `root` (to paths containing `only`) fail with `code`, as a full or read-only disk does."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, root: Path, code: int, room: int = 0, only: str = "") -> None:
        self.root, self.code, self.room, self.only = os.path.abspath(root), code, room, only
        self._open, self._os_open, self._mkdir = builtins.open, os.open, os.mkdir
        for module in (builtins, io):  # pathlib writes through io.open, shutil through open
            monkeypatch.setattr(module, "open", self.open)
        monkeypatch.setattr(os, "open", self.os_open)  # tempfile.mkstemp
        monkeypatch.setattr(os, "mkdir", self.mkdir)  # tempfile.mkdtemp, Path.mkdir, shutil.copytree

    def hits(self, path: Any) -> bool:
        if isinstance(path, int):
            return False
        full = os.path.abspath(os.fspath(path))
        return full.startswith(self.root + os.sep) and self.only in full

    def refused(self, path: Any) -> OSError:
        return PermissionError(self.code, os.strerror(self.code), os.fspath(path))

    def open(self, file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        writing = any(c in mode for c in WRITING)
        if writing and self.hits(file) and self.code == errno.EACCES:
            raise self.refused(file)
        real = self._open(file, mode, *args, **kwargs)
        return _CutFile(real, self) if writing and self.hits(file) else real

    def os_open(self, path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        creating = flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT)
        if creating and self.hits(path) and self.code == errno.EACCES:
            raise self.refused(path)
        return self._os_open(path, flags, *args, **kwargs)

    def mkdir(self, path: Any, *args: Any, **kwargs: Any) -> None:
        if self.hits(path) and self.code == errno.EACCES:
            raise self.refused(path)
        self._mkdir(path, *args, **kwargs)


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` with its bytes (what a fault must leave as it was)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def one_sentence(text: str, path: Path) -> None:
    """`text` is one line, one sentence, names `path`, and is no traceback."""
    assert "Traceback" not in text and "\n" not in text.strip(), text
    assert text.strip().endswith(".") and text.count(". ") == 0, f"more than one sentence: {text}"
    assert str(path) in text, f"{path} is not named in: {text}"


@pytest.fixture
def fake_papermill(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Replace papermill's executor: it writes the output notebook as papermill does, with a big output.

    Returns the chapters it was asked to run, in order.
    """
    import papermill

    ran: list[str] = []

    def execute_notebook(input_path: str, output_path: str, **_: Any) -> None:
        ran.append(Path(input_path).stem)
        nb = json.loads(Path(input_path).read_text(encoding="utf-8"))
        nb["metadata"]["papermill"] = {"input_path": input_path, "output_path": output_path}  # as papermill records
        for cell in nb["cells"]:
            if cell["cell_type"] == "code":
                text = "Running on: fake box | torch x\n" + "x" * 20_000  # > 12,288 bytes: a full disk cuts it
                cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": text}]
        with open(output_path, "w", encoding="utf-8") as f:  # papermill.iorw.LocalHandler.write
            f.write(json.dumps(nb, indent=1))

    monkeypatch.setattr(papermill, "execute_notebook", execute_notebook)
    return ran


def chapters(folder: Path, *names: str) -> Path:
    folder.mkdir()
    for name in names:
        write_notebook(folder / f"{name}.ipynb", "print('hello')")
    return folder


@pytest.mark.parametrize(
    ("code", "words"),
    [(errno.ENOSPC, "no space left on device (ENOSPC)"), (errno.EACCES, "permission denied (EACCES)")],
)
def test_a_chapter_whose_notebook_cannot_be_written_fails_in_one_sentence_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_papermill: list[str], code: int, words: str
) -> None:
    books = chapters(tmp_path / "notebooks", "01_a")
    out = tmp_path / "build"
    out.mkdir()
    FaultyDisk(monkeypatch, out, code, room=12_288)
    run = execute.execute_chapter(books / "01_a.ipynb", out)
    assert run.status == "failed" and run.executed == ""
    one_sentence(run.error, out / "01_a.ipynb")
    assert words in run.error
    assert list(out.iterdir()) == [], "no notebook cut short, no temporary file"


def test_the_runner_goes_on_after_a_write_fault_and_writes_its_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_papermill: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    books = chapters(tmp_path / "notebooks", "00_a", "01_b", "02_c")
    build = tmp_path / "build"
    build.mkdir()
    monkeypatch.setattr(runner, "build_course_site", lambda results, *_: (None, "not built in this test"))
    FaultyDisk(monkeypatch, build, errno.ENOSPC, room=12_288, only=".01_b.")  # only chapter 01's notebook
    code = runner.run_course(quick=True, notebooks_dir=books, build_dir=build)
    assert code == 1 and fake_papermill == ["00_a", "01_b", "02_c"], "the next chapter still ran"
    rows = {r["chapter"]: r for r in json.loads((build / "summary.json").read_text())}
    assert rows["00_a"]["status"] == "ok" and rows["02_c"]["status"] == "ok"
    assert rows["00_a"]["device"] == "fake box"
    assert rows["01_b"]["status"] == "failed"
    one_sentence(rows["01_b"]["error"], build / "01_b.ipynb")
    assert "FAILED 01_b: Could not write" in (build / "summary.md").read_text()
    assert sorted(p.name for p in build.iterdir()) == ["00_a.ipynb", "02_c.ipynb", "summary.json", "summary.md"]
    for name in ("00_a.ipynb", "02_c.ipynb"):
        nb = json.loads((build / name).read_text())
        assert nb["metadata"]["papermill"]["output_path"] == str(build / name), "the notebook names itself"
    assert "Traceback" not in capsys.readouterr().out


def test_a_summary_that_cannot_be_written_is_said_in_one_sentence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_papermill: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    books = chapters(tmp_path / "notebooks", "00_a")
    build = tmp_path / "build"
    build.mkdir()
    (build / "summary.md").write_text("the last run's summary\n")
    monkeypatch.setattr(runner, "build_course_site", lambda results, *_: (None, "not built in this test"))
    FaultyDisk(monkeypatch, build, errno.ENOSPC, room=0, only="summary.md")
    assert runner.run_course(quick=True, notebooks_dir=books, build_dir=build) == 1
    printed = capsys.readouterr().out.strip().splitlines()
    one_sentence(printed[-1], build / "summary.md")
    assert "| 00_a | ok |" in "\n".join(printed), "the table is still printed"
    assert (build / "summary.md").read_text() == "the last run's summary\n", "the old summary is not cut short"
    assert sorted(p.name for p in build.iterdir()) == ["00_a.ipynb", "summary.md"], "no temporary file left"


def test_a_build_folder_that_cannot_be_created_is_said_in_one_sentence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_papermill: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    books = chapters(tmp_path / "notebooks", "00_a")
    FaultyDisk(monkeypatch, tmp_path, errno.EACCES, only="build")
    assert runner.run_course(quick=True, notebooks_dir=books, build_dir=tmp_path / "build") == 1
    one_sentence(capsys.readouterr().out, tmp_path / "build")
    assert fake_papermill == [] and not (tmp_path / "build").exists()


def test_the_kaggle_build_on_a_full_disk_says_where_and_leaves_no_half_written_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "kaggle"
    FaultyDisk(monkeypatch, out, errno.ENOSPC, room=12_288)  # the first notebook is cut at 12,288 bytes
    assert kaggle.main("someone", str(out)) == 1
    printed = capsys.readouterr().out
    assert printed.startswith("Kaggle build failed: could not write ") and "no space left on device" in printed
    first = kaggle.kernel_for(kaggle.notebooks_to_publish()[0], kaggle.load_settings())
    one_sentence(printed, out / first.folder_name / first.notebook.name)
    assert list(out.iterdir()) == [], "no half-written folder, no staging folder"


def test_an_edition_on_a_full_disk_says_where_and_leaves_no_half_written_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "editions" / "handout"
    FaultyDisk(monkeypatch, out.parent, errno.ENOSPC, room=12_288)
    assert editions.main("handout", str(out), site=False) == 1
    printed = capsys.readouterr().out
    assert printed.startswith("Could not build the handout edition: Could not write ") and "(ENOSPC)" in printed
    assert f"Could not write {out}" in printed, "the edition's folder (or a file in it), not the staging folder"
    assert list(out.parent.iterdir()) == [], "no half-written folder, no staging folder"


def test_the_kaggle_build_keeps_whole_folders_when_the_disk_fills_during_the_dataset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "kaggle"
    FaultyDisk(monkeypatch, out, errno.ENOSPC, room=20_000, only=f"{os.sep}.dataset.")
    assert kaggle.main("someone", str(out)) == 1
    printed = capsys.readouterr().out
    one_sentence(printed, out / "dataset")
    assert f"{out / 'dataset'}{os.sep}" in printed, "the file that could not be written, named where it was going"
    folders = sorted(p.name for p in out.iterdir())
    assert "dataset" not in folders and not [f for f in folders if f.startswith(".")]
    assert len(folders) == len(kaggle.notebooks_to_publish())
    for f in folders:  # every kernel folder built is whole: its metadata parses and names its notebook
        meta = json.loads((out / f / kaggle.KERNEL_METADATA).read_text(encoding="utf-8"))
        assert (out / f / meta["code_file"]).is_file(), f


def test_the_kaggle_build_into_a_read_only_folder_leaves_the_last_build_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "kaggle"
    assert kaggle.main("someone", str(out)) == 0
    before = snapshot(out)
    capsys.readouterr()
    FaultyDisk(monkeypatch, out, errno.EACCES)
    assert kaggle.main("other-owner", str(out)) == 1
    printed = capsys.readouterr().out
    assert "permission denied (EACCES)" in printed
    one_sentence(printed, out)
    assert snapshot(out) == before, "the previous build is untouched"
    assert not [p for p in out.iterdir() if p.name.startswith(".")], "no staging folder left"


def test_write_text_atomically_replaces_whole_or_not_at_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "out" / "summary.json"
    target.parent.mkdir()
    execute.write_text_atomically(target, "old\n")
    FaultyDisk(monkeypatch, target.parent, errno.ENOSPC, room=3)
    with pytest.raises(OSError) as caught:
        execute.write_text_atomically(target, "new and longer\n")
    assert caught.value.errno == errno.ENOSPC
    assert target.read_text() == "old\n" and [p.name for p in target.parent.iterdir()] == ["summary.json"]
    assert execute.write_fault(caught.value, target) == f"Could not write {target}: no space left on device (ENOSPC)."
