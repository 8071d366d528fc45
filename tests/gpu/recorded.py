"""The headline figures the chapters recorded earlier in the same self-test (`helpers.figures`).

A test that checks what a chapter measured reads the figure here instead of a teaching cell asserting
on it. The self-test names the folder of its executed chapters in `COURSE_FIGURES_DIR`; pytest run by
hand has none, and a self-test without a chapter (`--only`, `--no-chapters`) has no folder of it: a test
that needs its figure then says what is missing.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from coursetools.execute import FIGURES_SUFFIX
from coursetools.gpu_runs import read_figures
from coursetools.selftest import FIGURES_DIR

from .missing import missing


def recorded(chapter: str, name: str) -> dict[str, Any]:
    """The last figure `name` that chapter `chapter` ("07") recorded in this self-test.

    Skips when the chapter did not run in it; fails when it ran and recorded no such figure (its GPU
    branch records it, so a chapter that passed on this GPU must have).
    """
    folder = os.environ.get(FIGURES_DIR)
    if not folder:
        missing("the chapters' figures from this self-test", "run the chapters first (the whole self-test)")
    runs = sorted(Path(folder).glob(f"{chapter}_*"))
    if not runs:
        missing(f"chapter {chapter}'s run in this self-test", f"no {chapter}_* folder in {folder} (--only?)")
    rows = [row for path in runs[0].glob(f"*{FIGURES_SUFFIX}") for row in read_figures(path)]
    found = [r for r in rows if r.get("name") == name]
    if not found:
        pytest.fail(
            f"chapter {chapter} ran but recorded no figure {name!r} (it recorded {[r.get('name') for r in rows]}; "
            "if the chapter failed before recording, its own row says why)"
        )
    return found[-1]
