"""Keep chapter notebooks in the course's shape: `python -m helpers tidy [--refresh-checked] [NB ...]`.

* The cell tagged `parameters` exists (papermill injects its values after it).
* The cell tagged `setup` is exactly `SETUP_CELL`, the same in every chapter.
* Outputs are stripped, except in cells marked `# NBVAL_CHECK_OUTPUT`, whose outputs nbval
  compares; `--refresh-checked` re-executes the chapter (QUICK) and stores those outputs anew.
* Notebook metadata names the Python 3 kernel and carries Kaggle's accelerator block
  (GPU T4 ×2, Internet on, from kaggle-metadata.json).

Maintainers run it after editing a chapter; the test suite checks that every notebook is tidy.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CHECK_MARK = "# NBVAL_CHECK_OUTPUT"

#: The slug of the Kaggle dataset holding the helpers package (kaggle-metadata.json says the same; tested).
HELPERS_DATASET = "pytorch-gpu-course-helpers"
#: Where pip can fetch the helpers when Internet is on (kaggle-metadata.json's repository; tested).
HELPERS_PIP_SOURCE = "git+https://github.com/pytorch-gpu-course/pytorch-gpu-course"

PARAMETERS_CELL = """\
# Parameters (papermill replaces them). QUICK=True shrinks sizes and repeats so that the tests
# run fast; every code path still runs. COURSE_QUICK=1 in the environment does the same.
QUICK = False"""


SETUP_CELL = f"""\
# Setup, the same in every chapter: find the course's `helpers` package (a clone of the
# repository, a pip install, or the helpers dataset attached on Kaggle) and describe this machine.
import os
import subprocess
import sys
from pathlib import Path

HELPERS_DATASET = "{HELPERS_DATASET}"
HELPERS_PIP_SOURCE = "{HELPERS_PIP_SOURCE}"
_kaggle = Path(os.environ.get("COURSE_KAGGLE_INPUT", "/kaggle/input"))
_places = [Path.cwd(), Path.cwd().parent, _kaggle / HELPERS_DATASET, *_kaggle.glob(f"datasets/*/{{HELPERS_DATASET}}")]
for _place in _places:
    if (_place / "helpers" / "__init__.py").is_file():
        sys.path.insert(0, str(_place))
        break
try:
    import helpers
except ImportError:
    if _kaggle.is_dir():  # on Kaggle without the dataset: try pip (works when Internet is on)
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", HELPERS_PIP_SOURCE], check=False)
        import importlib

        importlib.invalidate_caches()  # let the import below see the package pip just installed
    try:
        import helpers
    except ImportError:
        raise SystemExit(
            "The course's `helpers` package was not found. On Kaggle: Add Input → Datasets → "
            f"'{{HELPERS_DATASET}}', or turn Internet on in Settings, then run this cell again. "
            "Locally: open the notebook from a clone of the repository (make lab)."
        ) from None
QUICK = QUICK or os.environ.get("COURSE_QUICK") == "1"
helpers.setup_chapter()"""


def _source(cell: dict[str, Any]) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def _tags(cell: dict[str, Any]) -> list[str]:
    return cell.get("metadata", {}).get("tags", [])


def is_checked(cell: dict[str, Any]) -> bool:
    """Whether nbval compares this code cell's output (it carries `# NBVAL_CHECK_OUTPUT`)."""
    return cell.get("cell_type") == "code" and CHECK_MARK in _source(cell)


def find_tagged(nb: dict[str, Any], tag: str) -> list[int]:
    """Indices of the cells carrying `tag`."""
    return [i for i, c in enumerate(nb["cells"]) if tag in _tags(c)]


def problems(nb: dict[str, Any]) -> list[str]:
    """What is out of shape in a notebook (empty when it is tidy)."""
    found = []
    params, setup = find_tagged(nb, "parameters"), find_tagged(nb, "setup")
    if len(params) != 1:
        found.append(f"needs exactly one cell tagged 'parameters' (has {len(params)})")
    if len(setup) != 1:
        found.append(f"needs exactly one cell tagged 'setup' (has {len(setup)})")
    elif _source(nb["cells"][setup[0]]) != SETUP_CELL:
        found.append("its setup cell differs from helpers.authoring.SETUP_CELL")
    if params and setup and params[0] > setup[0]:
        found.append("the parameters cell must come before the setup cell")
    if params and _source(nb["cells"][params[0]]) != PARAMETERS_CELL:
        found.append("its parameters cell differs from helpers.authoring.PARAMETERS_CELL")
    from .kaggle import kaggle_notebook_metadata, load_settings

    if nb.get("metadata", {}).get("kaggle") != kaggle_notebook_metadata(load_settings()):
        found.append("its metadata lacks Kaggle's accelerator block (GPU T4 x2), or it is stale")
    for i, cell in enumerate(nb["cells"]):
        if cell.get("cell_type") == "code" and (cell.get("outputs") or cell.get("execution_count")):
            if not is_checked(cell):
                found.append(f"cell {i} keeps an output or execution count that no test checks")
    return found


def tidy(nb: dict[str, Any]) -> dict[str, Any]:
    """Return `nb` in shape: canonical parameters and setup cells, unchecked outputs stripped."""
    for i in find_tagged(nb, "setup"):
        nb["cells"][i]["source"] = SETUP_CELL
    for i in find_tagged(nb, "parameters"):
        nb["cells"][i]["source"] = PARAMETERS_CELL
    for cell in nb["cells"]:
        cell.setdefault("metadata", {})
        if cell["cell_type"] != "code":
            continue
        if not is_checked(cell):
            cell["outputs"] = []
            cell["execution_count"] = None
        cell["metadata"].pop("execution", None)
        cell["metadata"].pop("papermill", None)
    meta = nb.setdefault("metadata", {})
    for key in ("papermill", "widgets", "jupytext"):
        meta.pop(key, None)
    meta["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    meta["language_info"] = {"name": "python"}
    # The block Kaggle writes into notebooks it saves: asks for GPU T4 x2 and Internet when opened there.
    from .kaggle import kaggle_notebook_metadata, load_settings

    meta["kaggle"] = kaggle_notebook_metadata(load_settings())
    return nb


def refresh_checked(notebook: Path) -> None:
    """Execute `notebook` (QUICK) and copy the outputs of its checked cells back into it."""
    import tempfile

    from .runner import execute_chapter

    with tempfile.TemporaryDirectory() as tmp:
        result = execute_chapter(notebook, Path(tmp), quick=True, html_page=False)
        if result.status != "ok":
            raise RuntimeError(f"{notebook.name} failed while refreshing checked outputs: {result.error}")
        executed = json.loads(Path(result.executed).read_text(encoding="utf-8"))
    original = json.loads(notebook.read_text(encoding="utf-8"))
    ran = [c for c in executed["cells"] if "injected-parameters" not in _tags(c)]
    for cell, done in zip(original["cells"], ran, strict=True):
        if is_checked(cell):
            cell["outputs"] = done["outputs"]
            cell["execution_count"] = done.get("execution_count")
    write(notebook, tidy(original))


def write(path: Path, nb: dict[str, Any]) -> None:
    """Write a notebook the way Jupyter does (indent 1, trailing newline), so diffs stay small."""
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def main(paths: list[str], refresh: bool) -> int:
    from .runner import discover_chapters

    targets = [Path(p) for p in paths] or discover_chapters()
    for path in targets:
        if not path.is_file():
            print(f"{path}: no such notebook")
            return 2
        write(path, tidy(json.loads(path.read_text(encoding="utf-8"))))
        if refresh:
            refresh_checked(path)
        print(f"tidied {path}")
    return 0
