"""A per-run scratch folder for files a chapter writes, such as worker scripts made with `%%writefile`.

Another process can only run a worker that lives in a file it can import, so chapters write
workers from a cell (`%%writefile {WORK}/worker.py`) instead of hiding them in `helpers`. Writing
into the clone would let two runs of a chapter (the tests run chapters in parallel) overwrite
each other's files and leave litter behind; a fresh temporary folder per kernel avoids both.

The folder is removed when the kernel exits normally. A kernel that is killed (Jupyter kills one
that does not stop within a few seconds, which happens after multiprocessing has started its
helper processes) runs no exit handlers, so each folder's name carries its kernel's process id
and the next `scratch_folder()` removes the folders of kernels that no longer run (POSIX only).
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

PREFIX = "pytorch-gpu-course-"


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # signal 0: no signal is sent, only whether the process exists
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, under another user
    return True


def remove_abandoned_folders(parent: Path | None = None) -> list[Path]:
    """Remove the scratch folders of kernels that no longer run; returns what was removed.

    Only on POSIX: on Windows `os.kill` would end the process it is asked about.
    """
    if os.name != "posix":
        return []
    removed = []
    for folder in Path(parent or tempfile.gettempdir()).glob(f"{PREFIX}*-*"):
        pid_text = folder.name[len(PREFIX) :].split("-", 1)[0]
        if folder.is_dir() and pid_text.isdigit() and not _process_alive(int(pid_text)):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def scratch_folder(importable: bool = True) -> Path:
    """Make a new empty folder for this kernel's files; it is removed when the kernel exits.

    With `importable` (the default) the folder is put first on `sys.path`, so a module written
    there can be imported here and by processes started with `spawn`, which copy `sys.path`.
    """
    remove_abandoned_folders()
    folder = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    if importable:
        sys.path.insert(0, str(folder))
    return folder
