"""Executing a chapter headless: the one executor behind `make run`, the GPU self-test and the site.

`execute_chapter` runs a chapter with papermill in a kernel of its own (its own temp dir, the
course on its PYTHONPATH), writes the executed notebook all or nothing, and reports how it went
(`ChapterRun`) without raising: a failing cell, a cell past its time limit, a full disk or files
left in the temp dir each become one sentence. The helpers around it read what a chapter printed
(`running_on`, `count_no_gpu_cells`) and name a chapter's content (`chapter_hash`) for the
"verified on" record. This module ships in the Kaggle helpers dataset with the self-test, so it
imports only the standard library, `helpers` and, inside functions, papermill and jupyter_client.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import shutil
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from queue import Empty
from typing import Any

from helpers.devices import NO_GPU_MARKER
from helpers.figures import FIGURES_FILE

#: The folder that holds `helpers/`, `coursetools/`, `notebooks/` and `tests/`: a clone, or the
#: Kaggle helpers dataset (read-only under /kaggle/input).
COURSE_ROOT = Path(__file__).resolve().parent.parent
#: Beside an executed chapter: the headline figures its cells recorded (`helpers.figures`), one JSON line each.
FIGURES_SUFFIX = ".figures.jsonl"

CHAPTER_PATTERN = re.compile(r"^(\d\d)_[a-z0-9_]+\.ipynb$")


def discover_chapters(notebooks_dir: Path | None = None, only: list[str] | None = None) -> list[Path]:
    """The chapter notebooks (`NN_topic.ipynb`) of the course in use (`COURSE_ROOT/notebooks`), in order.

    With `only`, just those whose names start with one of its entries ("07", "08_several").
    """
    folder = Path(notebooks_dir) if notebooks_dir else COURSE_ROOT / "notebooks"
    chapters = sorted(p for p in folder.glob("*.ipynb") if CHAPTER_PATTERN.match(p.name))
    return [c for c in chapters if any(c.name.startswith(o) for o in only)] if only else chapters


def chapter_hash(notebook: Path) -> str:
    """A short hash of what a chapter runs: its code cells' sources, in order (prose, outputs, metadata aside).

    The "verified on" record (`docs/verified.md`) and the kept GPU runs (`coursetools.gpu_runs`) are keyed by
    it, so a chapter whose code changed reads stale, and a prose edit leaves what ran current.
    """
    import hashlib

    nb = json.loads(Path(notebook).read_text(encoding="utf-8"))
    code = [
        "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
        for c in nb["cells"]
        if c["cell_type"] == "code"
    ]
    return hashlib.sha256(json.dumps(code, ensure_ascii=False).encode("utf-8")).hexdigest()[:12]


def cell_text(outputs: list[dict]) -> str:
    """The stream and plain-text outputs of one code cell, joined."""
    parts = []
    for out in outputs or []:
        if out.get("output_type") == "stream":
            parts.append("".join(out.get("text", "")))
        elif "data" in out:
            parts.append("".join(out["data"].get("text/plain", "")))
    return "".join(parts)


def outputs_text(nb: dict) -> list[str]:
    """Every stream and plain-text output of a notebook, one string per code cell."""
    return [cell_text(cell.get("outputs", [])) for cell in nb.get("cells", []) if cell.get("cell_type") == "code"]


def running_on(text: str) -> str | None:
    """The device a chapter's setup line names (`Running on: ...`) in `text`, or None."""
    m = re.search(r"Running on: ([^|\n]+)", text)
    return m.group(1).strip() if m else None


def count_no_gpu_cells(nb: dict) -> int:
    """How many code cells printed the no-GPU marker (took their CPU stand-in)."""
    return sum(1 for text in outputs_text(nb) if NO_GPU_MARKER in text)


def device_line(nb: dict) -> str:
    """What the setup cell printed after `Running on:` (the device the chapter ran on)."""
    return next((d for d in map(running_on, outputs_text(nb)) if d), "unknown")


def _stalled_cell(nb: dict) -> str:
    """The code cell papermill was running or failed in, as "code cell N (its first line)".

    N counts the chapter's own code cells from 1, as a learner counts them (papermill's injected
    parameters cell is left out).
    """
    code = [
        c
        for c in nb.get("cells", [])
        if c.get("cell_type") == "code" and "injected-parameters" not in c.get("metadata", {}).get("tags", [])
    ]
    states = [c.get("metadata", {}).get("papermill", {}) for c in code]
    failed = [n for n, state in enumerate(states) if state.get("exception")]
    started = [n for n, state in enumerate(states) if state.get("start_time")]  # a stalled cell started last
    if not (failed or started):
        return "a cell"
    n = (failed or started)[-1]
    src = "".join(code[n].get("source", "")).strip().splitlines()
    first = next((line for line in src if not line.startswith("#")), src[0] if src else "")
    return f"code cell {n + 1} ({first[:60]})"


def polling_kernel_manager(slice_seconds: float = 0.5) -> type:
    """A Jupyter kernel manager whose client re-checks its sockets every `slice_seconds`.

    Why: executing a widget cell headless, the client now and then misses the wake-up for a
    message that has already arrived (zmq's edge-triggered notification under asyncio), and
    nbclient then waits out the whole cell time limit before it looks again and carries on as if
    nothing happened (in a notebook of 25 `interact` cells, one cell in 5 of 50 runs; none in 60
    with the sliced wait). Upstream: jupyter/nbclient#312, jupyter/nbconvert#1921 and #2029. A
    missed wake-up costs at most one slice; the cell time limit still applies.
    """
    import zmq
    from jupyter_client.asynchronous.client import AsyncKernelClient
    from jupyter_client.channels import AsyncZMQSocketChannel
    from jupyter_client.manager import AsyncKernelManager
    from traitlets import Type, default

    class SlicedPollChannel(AsyncZMQSocketChannel):
        async def get_msg(self, timeout: float | None = None) -> dict:
            deadline = None if timeout is None else time.monotonic() + timeout
            while True:
                left = slice_seconds if deadline is None else max(0.0, min(slice_seconds, deadline - time.monotonic()))
                try:
                    return await super().get_msg(timeout=left)
                except Empty:
                    if deadline is not None and time.monotonic() >= deadline:
                        raise

    class PollingKernelClient(AsyncKernelClient):
        shell_channel_class = Type(SlicedPollChannel)
        iopub_channel_class = Type(SlicedPollChannel)

    class PollingKernelManager(AsyncKernelManager):
        client_factory = Type(PollingKernelClient)

        @default("transport_encryption")
        def _encrypt_when_possible(self) -> str:
            # ipykernel 7 warns at every start that its local TCP sockets are not encrypted.
            # jupyter_client 8.10 can hand the kernel CurveZMQ keys when its kernelspec declares
            # support ("auto"), which encrypts them and ends the warning; releases without this
            # setting never ask for this default.
            return "auto" if zmq.has("curve") else "disabled"

    return PollingKernelManager


@functools.cache
def engine_saving_at_the_ends() -> str:
    """Register papermill's nbclient engine, saving the notebook only at the start and the end; return its name.

    Registered once per process (cached): every chapter the runner executes uses the same engine.

    papermill otherwise writes the whole notebook before and after every cell, markdown included:
    10-70 ms a write once a chapter holds its figures, several seconds a chapter. The final write
    also comes after a failed or stalled cell, with the cell's start time in it (`_stalled_cell`).
    """
    from papermill.engines import NBClientEngine, papermill_engines

    class SavesAtTheEnds(NBClientEngine):
        @classmethod
        def execute_managed_notebook(cls, nb_man: Any, kernel_name: str, **kwargs: Any) -> Any:
            path, nb_man.output_path = nb_man.output_path, None  # no write per cell
            try:
                return super().execute_managed_notebook(nb_man, kernel_name, **kwargs)
            finally:
                nb_man.output_path = path  # for the engine's final write, which follows even a failure

    papermill_engines.register("course-saves-at-the-ends", SavesAtTheEnds)
    return "course-saves-at-the-ends"


@dataclass
class ChapterRun:
    """How one chapter's headless run went."""

    chapter: str
    status: str  # "ok" or "failed"
    seconds: float
    device: str
    no_gpu_cells: int
    error: str = ""
    executed: str = ""  # path of the executed notebook
    html: str = ""  # path of its HTML page, when the course runner wrote one
    figures: str = ""  # path of the headline figures its cells recorded (JSON lines), when they recorded any


#: What a chapter's run may leave in its temp dir, with why; anything else it leaves there is litter.
TEMP_DIR_CACHES = {
    "torchinductor_*": "torch.compile's cache, which Inductor keeps in the temp dir on purpose (its precompiled "
    "headers go there whatever TORCHINDUCTOR_CACHE_DIR says: torch/_inductor/codecache.py)",
    "pymp-*": "multiprocessing's folder for its helper processes' sockets, removed at a normal exit; a kernel "
    "that is killed on stop (nbval and the course runner kill every kernel, Jupyter one that does not stop in "
    "time) leaves it",
    "matplotlib-*": "matplotlib's config folder where the home folder cannot be written (removed at a normal exit)",
}


def inductor_cache_name() -> str:
    """The name of torch.compile's cache folder in the temp dir, `torchinductor_<user>`, as torch makes it."""
    import getpass

    try:
        user = getpass.getuser()
    except (KeyError, ImportError, OSError):
        user = f"uid_{os.getuid()}" if hasattr(os, "getuid") else "unknown_user"
    return "torchinductor_" + re.sub(r'[\\/:*?"<>|]', "_", user)


def temp_dir_env(folder: Path) -> dict[str, str]:
    """Make `folder` the temp dir of a kernel about to start; returns the environment variables for it.

    torch.compile's cache in it is a link to the usual one (`<temp dir>/torchinductor_<user>`), so
    a chapter compiles as fast as in any other run (a cold cache costs seconds); where no link can
    be made (Windows without the right), the chapter compiles from a cold cache.
    """
    usual = Path(tempfile.gettempdir()) / inductor_cache_name()
    try:
        usual.mkdir(exist_ok=True)
        (Path(folder) / usual.name).symlink_to(usual, target_is_directory=True)
    except OSError:
        pass
    return {"TMPDIR": str(folder)}


#: The longest path of a kernel's temp dir: multiprocessing puts its forkserver's socket 32 characters
#: deeper (`pymp-…/listener-…`), and a socket's path may hold 104 characters on macOS, 108 on Linux.
KERNEL_TEMP_DIR_LENGTH = 64


def kernel_temp_dir(name: str) -> Path | None:
    """A new empty folder to be the temp dir of a kernel that runs chapter `name` (None: none fits).

    Its name carries this process's id, as `helpers.scratch_folder`'s do: a run killed before it
    could remove the folder (a `timeout`, Ctrl-C twice) leaves it, and the next call here or of
    `scratch_folder()` removes it once this process is gone. Where the temp dir's own path is
    long (macOS's `/var/folders/…`), a folder inside it would be too long for the sockets a chapter
    opens there, and there is none.
    """
    from helpers.processes import PREFIX, remove_abandoned_folders

    remove_abandoned_folders()
    folder = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-{name[:2]}-"))
    if len(str(folder)) > KERNEL_TEMP_DIR_LENGTH:
        folder.rmdir()
        return None
    return folder


@contextlib.contextmanager
def environment(variables: dict[str, str]) -> Iterator[None]:
    """Set environment variables for what starts inside the block (a kernel), then put back what was there."""
    saved = {name: os.environ.get(name) for name in variables}
    os.environ.update(variables)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def temp_dir_litter(folder: Path) -> list[str]:
    """What a chapter's run left in `folder`, the temp dir it ran with: names, folders ending in "/".

    The caches of `TEMP_DIR_CACHES` are allowed. Scratch folders (`helpers.scratch_folder`) of a
    kernel that was killed, and so ran no exit handler, are first removed as the next
    `scratch_folder()` would remove them (nbval kills every kernel it stops).
    """
    from fnmatch import fnmatch

    from helpers.processes import remove_abandoned_folders

    remove_abandoned_folders(Path(folder))
    return sorted(
        p.name + ("/" if p.is_dir() else "")
        for p in Path(folder).iterdir()
        if not any(fnmatch(p.name, pattern) for pattern in TEMP_DIR_CACHES)
    )


def write_fault(exc: OSError, path: Path | str, verb: str = "write") -> str:
    """One sentence on why the disk refused `path`: "Could not write PATH: no space left on device (ENOSPC)."

    What a tool prints instead of a traceback when a disk is full, a folder read-only or a file
    not allowed; `shutil.copytree`'s collected errors (`shutil.Error`) give their first one.
    """
    import errno

    reason = exc.strerror or ""
    code = exc.errno
    if isinstance(exc, shutil.Error) and exc.args and isinstance(exc.args[0], list) and exc.args[0]:
        reason = str(exc.args[0][0][-1])  # (source, destination, why) of the first file that failed
        m = re.match(r"\[Errno (\d+)\] ([^:]*)", reason)
        if m:
            code, reason = int(m.group(1)), m.group(2)
    reason = (reason or str(exc) or type(exc).__name__).strip().rstrip(".")
    name = errno.errorcode.get(code) if code is not None else None
    return f"Could not {verb} {path}: {reason[:1].lower()}{reason[1:]}" + (f" ({name})." if name else ".")


def partial_path(path: Path, suffix: str = "") -> Path:
    """A new name beside `path` to write it under until it is whole: `.NAME.1a2b3c4d.partial` + `suffix`."""
    import secrets

    return path.with_name(f".{path.name}.{secrets.token_hex(4)}.partial{suffix}")


def write_text_atomically(path: Path | str, text: str) -> Path:
    """Write `text` to `path` all or nothing: a temporary file in the same folder, then `os.replace`.

    A full disk or a refused write raises OSError and leaves `path` as it was (and no temporary
    file behind), never a file cut short.
    """
    path = Path(path)
    partial = partial_path(path)
    try:
        with open(partial, "x", encoding="utf-8") as f:  # a new file with the usual permissions (mkstemp's: 0600)
            f.write(text)
        os.replace(partial, path)
    except BaseException:
        remove_quietly(partial)
        raise
    return path


def remove_quietly(path: Path) -> None:
    """Delete a file if it is there; a failure to delete is not worth another error."""
    try:
        path.unlink(missing_ok=True)
    except OSError:
        pass


def _is_disk_fault(exc: BaseException) -> bool:
    """Whether `exc` is the operating system refusing a file (not a cell's time limit, not a lost connection)."""
    return isinstance(exc, OSError) and exc.errno is not None and not isinstance(exc, (TimeoutError, ConnectionError))


def _finish_notebook(partial: Path, executed: Path) -> dict:
    """Put papermill's output in place as `executed`, naming itself, all or nothing; return it as a dict.

    The name is corrected in the temporary file itself, so that a nearly full disk never has to
    hold the notebook twice.
    """
    nb = json.loads(partial.read_text(encoding="utf-8"))
    papermill_record = nb.get("metadata", {}).get("papermill")
    if isinstance(papermill_record, dict):
        papermill_record["output_path"] = str(executed)
    text = json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n"  # as nbformat writes a notebook
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, executed)
    return nb


#: Seconds one cell may run before its chapter fails: long enough for the slowest real cell, short
#: enough that a stalled cell (a widget that never answers, a hung rank) is caught in minutes.
QUICK_CELL_TIMEOUT = 90
FULL_CELL_TIMEOUT = 600


def execute_chapter(
    notebook: Path, out_dir: Path, *, quick: bool = True, cell_timeout: float | None = None
) -> ChapterRun:
    """Run one chapter with papermill into `out_dir` (its working folder too); report, never raise.

    The course runner, the self-test and `tidy --refresh-checked` all run chapters through this.
    A cell that runs longer than `cell_timeout` seconds (by default 90 with QUICK sizes, 600 at
    full size) stops the chapter, which then fails and names that cell. The kernel finds the
    helpers in use through PYTHONPATH, so the chapter can run from a read-only copy (the Kaggle
    dataset) in a scratch folder. papermill writes into a temporary file next to the executed
    notebook, which replaces it only when complete: a full disk or a read-only folder fails the
    chapter with one sentence naming the path (`write_fault`) and leaves no notebook cut short.
    The kernel gets a temp dir of its own, and a chapter that leaves files there fails, naming them
    (`temp_dir_litter`).
    """
    import papermill  # only here: the self-test and the course runner need it, a chapter does not

    if cell_timeout is None:
        cell_timeout = QUICK_CELL_TIMEOUT if quick else FULL_CELL_TIMEOUT
    from papermill.exceptions import PapermillExecutionError

    notebook, out_dir = Path(notebook), Path(out_dir)
    executed = out_dir / notebook.name
    partial = partial_path(executed, ".ipynb")  # papermill writes here (at the start and at the end)
    figures = out_dir / f"{notebook.stem}{FIGURES_SUFFIX}"  # the headline figures its cells record (helpers.figures)
    variables = {
        "PYTHONPATH": os.pathsep.join(p for p in (str(COURSE_ROOT), os.environ.get("PYTHONPATH")) if p),
        FIGURES_FILE: str(figures.resolve()),  # the kernel runs in out_dir: a relative path would be read from there
    }
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return ChapterRun(notebook.stem, "failed", 0.0, "unknown", 0, error=write_fault(exc, out_dir, "create"))
    remove_quietly(figures)  # an earlier run's figures are not this run's
    try:
        temp = kernel_temp_dir(notebook.stem)  # the kernel's, to see what it leaves there
    except OSError as exc:
        return ChapterRun(notebook.stem, "failed", 0.0, "unknown", 0, error=write_fault(exc, tempfile.gettempdir()))
    if temp is not None:
        variables |= temp_dir_env(temp)
    start = time.perf_counter()
    error = ""
    fault: OSError | None = None
    try:
        with environment(variables):
            papermill.execute_notebook(
                str(notebook),
                str(partial),
                parameters={"QUICK": quick},
                cwd=str(out_dir),
                kernel_name="python3",
                progress_bar=False,
                engine_name=engine_saving_at_the_ends(),
                # Kill the kernel once the last cell is done, as nbval does: a graceful shutdown
                # waits about 2 s for the kernel's exit handlers, which leave nothing the run needs.
                shutdown_kernel="immediate",
                execution_timeout=cell_timeout,
                kernel_manager_class=polling_kernel_manager(),
            )
    except PapermillExecutionError as exc:
        error = f"{exc.ename}: {exc.evalue}"
    except Exception as exc:  # a cell past its time limit, a dead kernel, an unreadable notebook
        if _is_disk_fault(exc):  # the disk refused papermill's write (full, read-only), or the chapter is unreadable
            fault = exc
        else:
            error = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
            if "timed out" in str(exc).lower() or "timeout" in type(exc).__name__.lower():
                error = f"a cell ran past the {cell_timeout:g} s limit: {error}"
    seconds = time.perf_counter() - start
    litter = temp_dir_litter(temp) if temp is not None else []
    if temp is not None:
        shutil.rmtree(temp, ignore_errors=True)
    nb: dict = {}
    if fault is None and partial.exists():
        try:
            nb = _finish_notebook(partial, executed)
        except OSError as exc:
            fault = exc
        except ValueError as exc:  # papermill wrote no readable notebook (it failed before the first cell)
            error = error or f"papermill wrote no readable notebook: {exc}"
    elif fault is None:
        error = error or "papermill wrote no notebook"
    remove_quietly(partial)
    if fault is not None:
        other = fault.filename not in (None, str(partial)) and Path(fault.filename) != partial
        error = write_fault(fault, fault.filename, "use") if other else write_fault(fault, executed)
    elif error and nb:
        error = f"{_stalled_cell(nb)}: {error}"
    elif litter:
        shown = ", ".join(litter[:5]) + (f" and {len(litter) - 5} more" if len(litter) > 5 else "")
        error = f"the chapter left {len(litter)} file(s) or folder(s) in its temp dir: {shown}"
    return ChapterRun(
        chapter=notebook.stem,
        status="failed" if error else "ok",
        seconds=round(seconds, 1),
        device=device_line(nb),
        no_gpu_cells=count_no_gpu_cells(nb),
        error=error,
        executed=str(executed) if nb else "",
        figures=str(figures) if figures.is_file() else "",
    )
