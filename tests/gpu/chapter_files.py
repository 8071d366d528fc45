"""The worker files a chapter writes with `%%writefile`, for the GPU tests: they test the code the learner runs."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from types import ModuleType

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


def import_written_file(notebook: str, name: str, folder: Path) -> ModuleType:
    """Write `notebook`'s `%%writefile {WORK}/<name>.py` cell into `folder` and import it as `name`.

    `folder` goes first on `sys.path`, so that launched ranks, which copy it, import it too.
    """
    path = NOTEBOOKS / notebook
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] == "code" and source.startswith(f"%%writefile {{WORK}}/{name}.py"):
            (folder / f"{name}.py").write_text(source.split("\n", 1)[1], encoding="utf-8")
            break
    else:
        raise AssertionError(f"{path.name} has no %%writefile cell for {name}.py")
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    return importlib.import_module(name)
