"""Reading notebooks for the tests: chapters, their cells, and their code as plain Python."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from IPython.core.inputtransformer2 import TransformerManager

from coursetools import NOTEBOOKS
from coursetools.execute import discover_chapters

ALL_NOTEBOOKS = sorted(NOTEBOOKS.glob("*.ipynb"))
CHAPTERS = discover_chapters()


def load(path: Path) -> dict[str, Any]:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def source(cell: dict[str, Any]) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def code_cells(nb: dict[str, Any]) -> list[str]:
    """Each code cell as plain Python (IPython's `!cmd` and `%magic` lines turned into calls)."""
    manager = TransformerManager()
    return [manager.transform_cell(source(c)) for c in nb["cells"] if c["cell_type"] == "code"]


def markdown(nb: dict[str, Any]) -> str:
    return "\n".join(source(c) for c in nb["cells"] if c["cell_type"] == "markdown")


def write_notebook(path: Path, *cells: str) -> Path:
    """A small notebook for the tooling's tests: a `parameters` cell (QUICK = False), then `cells`."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell("QUICK = False")
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, *[nbformat.v4.new_code_cell(c) for c in cells]]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)
    return path
