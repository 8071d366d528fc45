"""Keep chapter notebooks in the course's shape: `python -m coursetools tidy [--refresh-checked] [NB ...]`.

* The cell tagged `parameters` exists (papermill injects its values after it).
* The cell tagged `setup` is exactly `SETUP_CELL`, the same in every chapter, and collapsed to its
  `# @title` line (`COLLAPSED`: JupyterLab, Colab's form view, Kaggle).
* Section 1 starts on the first screen: at most `FIRST_SCREEN_LINES` rendered lines above "## 1."
  (`lines_before_lesson`; the "Runs on" table and the glossary sit in closed `<details>`). The tests
  hold every chapter, and its page on the site, to it.
* Outputs are stripped, except in cells tagged `nbval-check-output` (nbval's own tag), whose
  outputs nbval compares; `--refresh-checked` re-executes the chapter (QUICK) and stores those
  outputs anew. Test markers live in cell tags, never in the code a learner reads (a comment
  such as `# NBVAL_CHECK_OUTPUT` shows on Kaggle and on the site).
* Notebook metadata names the Python 3 kernel and carries Kaggle's accelerator block
  (GPU T4 ×2, Internet on, from kaggle-metadata.json).

Maintainers run it after editing a chapter; the test suite checks that every notebook is tidy.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from helpers import HELPERS_DATASET, __version__

#: The cell tag that makes nbval compare a cell's output with the stored one.
CHECK_TAG = "nbval-check-output"
#: The cell tag of a cell that calls a deprecated torch name in order to teach that it is deprecated.
TEACHES_DEPRECATED_TAG = "teaches-deprecated"
#: Marker comments that belong in tags: what `problems` refuses in a code cell's text.
MARKER_COMMENTS = ("# NBVAL_", "# PYTEST_VALIDATE", "# teaches-deprecated")

#: The most words of markdown a chapter should ask a learner to read (CONTRIBUTING's budget table);
#: reference material beyond it belongs on a page of its own.
PROSE_BUDGET = 2_500

#: Where pip can fetch the helpers when Internet is on (kaggle-metadata.json's repository; tested).
HELPERS_PIP_SOURCE = "git+https://github.com/pytorch-gpu-course/pytorch-gpu-course"
#: The course version chapters are written for: the first two numbers of `helpers.__version__`.
WRITTEN_FOR = ".".join(__version__.split(".")[:2])

PARAMETERS_CELL = "QUICK = False  # True: smaller sizes and fewer repeats, for a fast run through every cell"

#: Ten lines that find `helpers` in a clone (the notebook's parent folder), a pip install, or the
#: Kaggle dataset at either mount path; on Kaggle without the dataset (Internet on) and on Colab,
#: which opens a notebook without its repository, they install it with pip.
SETUP_CELL = f"""\
# @title Set-up, the same in every chapter: find the course's helpers, or install them with pip
import glob, os, sys

DATASET, KAGGLE = "{HELPERS_DATASET}", os.getenv("COURSE_KAGGLE_INPUT", "/kaggle/input")
sys.path[:0] = [os.path.abspath(".."), *glob.glob(f"{{KAGGLE}}/{{DATASET}}"), *glob.glob(f"{{KAGGLE}}/datasets/*/{{DATASET}}")]
if (os.path.isdir(KAGGLE) or os.getenv("COLAB_RELEASE_TAG")) and not any(glob.glob(f"{{p}}/helpers") for p in sys.path):
    os.system(f"{{sys.executable}} -m pip install --no-deps {HELPERS_PIP_SOURCE}")
try:
    import helpers
except ImportError:
    sys.exit(f"Helpers are missing. Kaggle: Add Input → {{DATASET}} or Internet on. Colab: pip failed. Local: make lab.")
QUICK = helpers.start("{WRITTEN_FOR}", QUICK)"""

#: The set-up cell's metadata that shows it collapsed to its first line: JupyterLab and Notebook 7
#: (`jupyter.source_hidden`), Colab's form view (`cellView`, titled by the `# @title` line) and Kaggle.
COLLAPSED = {"jupyter": {"source_hidden": True}, "cellView": "form", "_kg_hide-input": True}

#: The most lines a learner's screen shows before section 1 (`lines_before_lesson`): at 1366×900 the
#: title, what the chapter teaches and section 1's opening then share the first screen.
FIRST_SCREEN_LINES = 18
#: Characters per rendered line of markdown in that count (a notebook's text column at 1366×900).
SCREEN_COLUMNS = 100


def _source(cell: dict[str, Any]) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def _tags(cell: dict[str, Any]) -> list[str]:
    return cell.get("metadata", {}).get("tags", [])


def prose_words(nb: dict[str, Any]) -> int:
    """The words a learner reads in the chapter's markdown cells.

    Fenced code and link targets are left out (a URL is not read), and so are tokens without a
    letter or digit (table rules, bullets); a Chinese term counts as one word.
    """
    words = 0
    for cell in nb["cells"]:
        if cell.get("cell_type") != "markdown":
            continue
        text = re.sub(r"```.*?```", " ", _source(cell), flags=re.S)
        text = re.sub(r"\]\([^)\s]*\)", "]", text)
        words += sum(1 for token in text.split() if re.search(r"\w", token))
    return words


def _markdown_lines(text: str) -> int:
    """The lines markdown `text` takes on screen, as `rendered_lines` counts them."""
    closed = r"<details(?![^>]*\bopen\b)[^>]*>.*?</details>"
    text = re.sub(closed, "<details>", text, flags=re.S)  # closed: its summary, one line
    blocks = [b for b in re.split(r"\n\s*\n", text.strip()) if b.strip()]
    lines = max(0, len(blocks) - 1)  # the space between two blocks
    for block in blocks:  # a list item, a table row and a heading start a line of their own
        for row in re.split(r"\n(?=\s*(?:[-*+] |\d+\. |\||#))", block):
            if re.fullmatch(r"\s*\|[\s|:-]*", row):  # a table's rule
                continue
            shown = re.sub(r"!\[[^\]]*\]\([^)]*\)", "[badge]", row)  # an image: a badge's width
            words = " ".join(re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", shown).replace("**", "").split())
            lines += 2 if words.startswith("#") else max(1, -(-len(words) // SCREEN_COLUMNS))
    return lines


def rendered_lines(cell: dict[str, Any]) -> int:
    """About how many lines `cell` takes on a learner's screen: markdown wrapped at SCREEN_COLUMNS
    characters, a heading two lines, a closed `<details>` one, one between blocks; a code cell its
    source's lines, one when collapsed (`COLLAPSED`); a cell the site removes (`remove-cell`) none."""
    if "remove-cell" in _tags(cell):
        return 0
    if cell.get("cell_type") == "markdown":
        return _markdown_lines(_source(cell))
    hidden = cell.get("metadata", {}).get("jupyter", {}).get("source_hidden")
    return 1 if hidden else len(_source(cell).strip("\n").splitlines())


def lines_before_lesson(cells: list[dict[str, Any]]) -> int | None:
    """The rendered lines (`rendered_lines`) above the heading "## 1.", or None when there is none."""
    lines = 0
    for cell in cells:
        text = _source(cell)
        if cell.get("cell_type") == "markdown" and (first := re.search(r"^## 1\.", text, re.M)):
            return lines + (_markdown_lines(text[: first.start()]) + 1 if text[: first.start()].strip() else 0)
        lines += rendered_lines(cell)
    return None


def is_checked(cell: dict[str, Any]) -> bool:
    """Whether nbval compares this code cell's output (it is tagged `nbval-check-output`)."""
    return cell.get("cell_type") == "code" and CHECK_TAG in _tags(cell)


def teaches_deprecated(cell: dict[str, Any]) -> bool:
    """Whether this code cell may call a deprecated torch name (it is tagged `teaches-deprecated`)."""
    return cell.get("cell_type") == "code" and TEACHES_DEPRECATED_TAG in _tags(cell)


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
        found.append("its setup cell differs from coursetools.authoring.SETUP_CELL")
    elif any(nb["cells"][setup[0]].get("metadata", {}).get(key) != value for key, value in COLLAPSED.items()):
        found.append("its setup cell is not collapsed (coursetools.authoring.COLLAPSED)")
    if params and setup and params[0] > setup[0]:
        found.append("the parameters cell must come before the setup cell")
    if params and _source(nb["cells"][params[0]]) != PARAMETERS_CELL:
        found.append("its parameters cell differs from coursetools.authoring.PARAMETERS_CELL")
    from .kaggle import kaggle_notebook_metadata, load_settings

    if nb.get("metadata", {}).get("kaggle") != kaggle_notebook_metadata(load_settings()):
        found.append("its metadata lacks Kaggle's accelerator block (GPU T4 x2), or it is stale")
    if any("id" not in cell for cell in nb["cells"]):
        found.append("some cells have no id (nbformat 4.5 requires one)")
    for i, cell in enumerate(nb["cells"]):
        if cell.get("cell_type") == "code" and (cell.get("outputs") or cell.get("execution_count")):
            if not is_checked(cell):
                found.append(f"cell {i} keeps an output or execution count that no test checks")
        elif is_checked(cell):  # nbval compares only a cell that was run: without an output it checks nothing
            found.append(f"cell {i} is checked but stores no output: run tidy --refresh-checked")
        if cell.get("cell_type") == "code" and any(m in _source(cell) for m in MARKER_COMMENTS):
            found.append(
                f"cell {i} has a test marker in its code: use a cell tag ({CHECK_TAG}, {TEACHES_DEPRECATED_TAG})"
            )
    return found


def tidy(nb: dict[str, Any]) -> dict[str, Any]:
    """Return `nb` in shape: canonical parameters and setup cells, unchecked outputs stripped."""
    for i in find_tagged(nb, "setup"):
        nb["cells"][i]["source"] = SETUP_CELL
        nb["cells"][i].setdefault("metadata", {}).update(json.loads(json.dumps(COLLAPSED)))
    for i in find_tagged(nb, "parameters"):
        nb["cells"][i]["source"] = PARAMETERS_CELL
    taken = {c["id"] for c in nb["cells"] if "id" in c}
    for i, cell in enumerate(nb["cells"]):
        cell.setdefault("metadata", {})
        cell["source"] = _source(cell).splitlines(keepends=True)  # as Jupyter saves it: stable diffs
        if "id" not in cell:  # nbformat 4.5 requires one; derived from the cell so that tidy is repeatable
            digest = hashlib.sha1(f"{i}:{_source(cell)}".encode()).hexdigest()
            cell["id"] = next(digest[k : k + 8] for k in range(0, 33) if digest[k : k + 8] not in taken)
            taken.add(cell["id"])
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

    from .execute import execute_chapter

    with tempfile.TemporaryDirectory() as tmp:
        result = execute_chapter(notebook, Path(tmp), quick=True)
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
    from . import NOTEBOOKS

    targets = [Path(p) for p in paths] or sorted(NOTEBOOKS.glob("*.ipynb"))  # the self-test notebook too
    for path in targets:
        if not path.is_file():
            print(f"{path}: no such notebook")
            return 2
        write(path, tidy(json.loads(path.read_text(encoding="utf-8"))))
        if refresh:
            refresh_checked(path)
        words = prose_words(json.loads(path.read_text(encoding="utf-8")))
        over = f", over the budget of {PROSE_BUDGET:,}" if words > PROSE_BUDGET else ""
        print(f"tidied {path} ({words:,} words of prose{over})")
    return 0
