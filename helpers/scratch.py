"""A per-run scratch folder for files a chapter writes, such as worker scripts made with `%%writefile`.

Another process can only run a worker that lives in a file it can import, so chapters write
workers from a cell (`%%writefile {WORK}/worker.py`) instead of hiding them in `helpers`. Writing
into the clone would let two runs of a chapter (the tests run chapters in parallel) overwrite
each other's files and leave litter behind; a fresh temporary folder per kernel avoids both.
"""

from __future__ import annotations

import atexit
import shutil
import sys
import tempfile
from pathlib import Path


def scratch_folder(importable: bool = True) -> Path:
    """Make a new empty folder for this kernel's files; it is removed when the kernel exits.

    With `importable` (the default) the folder is put first on `sys.path`, so a module written
    there can be imported here and by processes started with `spawn`, which copy `sys.path`.
    """
    folder = Path(tempfile.mkdtemp(prefix="pytorch-gpu-course-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    if importable:
        sys.path.insert(0, str(folder))
    return folder
