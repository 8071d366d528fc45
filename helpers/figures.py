"""Headline figures: the few numbers a chapter measures that the course reports, kept as data.

A cell that has just measured one calls `record(...)`. When the course's tools run a chapter headless (the
GPU self-test, `make run`), `COURSE_FIGURES` names a file beside the executed notebook, and each figure goes
there as one JSON line with what it is compared against and the machine it was measured on; a GPU run's
bundle and the page of measured figures (`coursetools.gpu_runs`) read it, and tests read a figure instead of
a teaching cell asserting on it. In a learner's own run nothing is written and nothing is printed."""

from __future__ import annotations

import json
import math
import os
from typing import Any

#: The variable that names the file figures go to (set by `coursetools.execute` for a headless run).
FIGURES_FILE = "COURSE_FIGURES"


def record(
    name: str, value: float, unit: str, *, limit: float | None = None, limit_name: str = "", source: str = ""
) -> dict[str, Any]:
    """Keep `name` = `value` `unit`, measured just now, with the `limit` it is held against (same unit), what that
    limit is (`limit_name`, "the PCIe 3.0 x16 link's peak") and where its figure comes from (`source`).
    Returns the row it kept (stamped with the GPU, torch and date), or would keep in a headless run."""
    from .environment import _this_machine, stamp

    if not isinstance(name, str) or not name or not isinstance(unit, str):
        raise TypeError(f"name and unit must be strings, not {name!r} and {unit!r}")
    for what, number in (("value", value), ("limit", limit)):
        if number is not None and (isinstance(number, bool) or not math.isfinite(float(number))):
            raise ValueError(f"{what} must be a finite number, not {number!r}")
    m = _this_machine()
    row = {
        "name": name,
        "value": float(value),
        "unit": unit,
        "limit": None if limit is None else float(limit),
        "limit_name": limit_name,
        "source": source,
        "gpu": " + ".join(sorted({g.name for g in m.gpus})) or "none",
        "torch": m.torch_version,
        "stamp": stamp(m),
    }
    path = os.environ.get(FIGURES_FILE)
    if path:
        with open(path, "a", encoding="utf-8") as file:
            file.write(json.dumps(row, ensure_ascii=False) + "\n")
    return row
