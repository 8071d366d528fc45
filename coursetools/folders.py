"""Folders the tooling publishes (Kaggle folders, the course site, the editions), written all or nothing.

`staged_folder` fills a temporary folder beside the target and swaps it in whole, so a full disk
or a refused write leaves the previous folder as it was and is reported in one sentence
(`WriteFault`) naming the path, never as a traceback or a half-written folder.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from coursetools.execute import write_fault


class WriteFault(RuntimeError):
    """The disk refused a folder being built (full, read-only, not allowed); one sentence naming the path."""


def build_junk(_dir: str, names: list[str]) -> list[str]:
    """What `shutil.copytree(..., ignore=build_junk)` leaves out of a published copy: caches and checkpoints."""
    return [n for n in names if n == "__pycache__" or n.endswith((".pyc", ".pyo")) or n == ".ipynb_checkpoints"]


def _failed_path(exc: OSError, staging: Path, final: Path) -> Path:
    """The file a refused write was for, named where it was going (`final`), not in the staging folder."""
    name = exc.filename
    if isinstance(exc, shutil.Error) and exc.args and isinstance(exc.args[0], list) and exc.args[0]:
        name = exc.args[0][0][1]  # copytree's (source, destination, why) of the first failure
    try:
        return final / Path(name).relative_to(staging)
    except (TypeError, ValueError):
        return final


def staged_folder(final: Path, fill: Callable[[Path], None]) -> Path:
    """Build the folder `final` all or nothing: `fill` a temporary folder beside it, then swap it in.

    A full disk or a refused write removes the temporary folder, leaves `final` as it was, and
    raises WriteFault with one sentence naming the path that could not be written. Any other
    error from `fill` also leaves `final` as it was, and propagates unchanged.
    """
    final = Path(final)
    staging: Path | None = None
    previous: Path | None = None
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{final.name}.", suffix=".partial", dir=final.parent))
        staging.chmod(0o755)  # mkdtemp makes it private; the folder is published
        fill(staging)
        if final.exists():
            previous = staging.with_suffix(".old")
            os.replace(final, previous)
        os.replace(staging, final)
    except OSError as exc:
        where = _failed_path(exc, staging, final) if staging else final
        if previous is not None and not final.exists():
            os.replace(previous, final)
            previous = None
        raise WriteFault(write_fault(exc, where)) from exc
    finally:
        for leftover in (staging, previous):
            if leftover is not None and leftover.exists():
                shutil.rmtree(leftover, ignore_errors=True)
    return final
