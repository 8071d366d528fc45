"""The course's two editions for instructors: `python -m coursetools edition handout|teacher [--out DIR]`.

Both editions are a folder (default `build/handout/` or `build/teacher/`) that can be handed out
as it is:

* `notebooks/`: the chapters as in git (outputs stripped, except the checked ones);
* `helpers/`: the learner package the notebooks import. Their set-up cell puts the folder above
  `notebooks/` first on `sys.path`, so a notebook opened from the edition uses the edition's own
  `helpers`, even where another copy is installed; `pyproject.toml` makes it `pip install`-able;
* `site/`: the course site built by `coursetools.site` from the executed chapters (those that
  `python -m coursetools run` wrote into build/), labelled with the edition;
* `README.md`: what the folder is and how to use it.

The *handout* edition leaves out `helpers/exercises/solutions/`: `qN.solution()` then says that
solutions are not included, while `check()` and `hint()` work as usual. Before the folder is
published, every file in it (Python string constants, notebook cells and outputs, the site's
text) is searched for each solution's text, and for each of its substantial lines (a near-miss
wrong answer or a template built for one would give most of a solution away); the build fails on
any hit. A line the edition shows openly does not count: the notebooks' code cells (the lessons'
code and each exercise's starter code) and the course's infrastructure modules (`helpers/`
outside `helpers/exercises/`). The *teacher* edition
ships the solutions and adds `solutions.md`, every chapter's solutions on one page.
"""

from __future__ import annotations

import ast
import html
import importlib.util
import json
import re
import shutil
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coursetools.execute import discover_chapters

from . import BUILD, ROOT
from .authoring import tidy, write
from .folders import WriteFault, build_junk, staged_folder

#: The editions and the label their site shows on every page.
EDITIONS = {"handout": "Handout edition", "teacher": "Teacher edition"}
#: The sub-package of `helpers` that holds the solutions, as a path inside `helpers/`.
SOLUTIONS_DIR = Path("exercises") / "solutions"
#: Written into every edition folder, so that a rebuild replaces only a folder this tool made.
MARKER = ".course-edition"
#: Solution lines shorter than this, once whitespace-normalised and without a comment, are too common to be a leak.
SUBSTANTIAL_LINE = 16
#: A comment at the end of a code line (or a whole comment line).
_COMMENT = re.compile(r"(^|\s)#.*$")
#: A code line that calls a question's solution(), outside a comment.
_SOLUTION_CALL = re.compile(r"^[^#\n]*\.solution\(\)", re.MULTILINE)


class EditionError(RuntimeError):
    """The edition cannot be built as asked (a leak of solution code, a cell that prints one, ...)."""


@dataclass
class Edition:
    """What `build_edition` wrote."""

    name: str
    folder: Path
    notebooks: list[Path]
    site_index: Path | None


def solution_texts(helpers_dir: Path = ROOT / "helpers") -> dict[str, str]:
    """Every exercise solution, keyed "chNN qN", from the modules of `helpers_dir`'s solutions package.

    Each module is run from its file, so the texts are those of `helpers_dir`, whichever `helpers`
    this process imported.
    """
    found = {}
    for path in sorted((Path(helpers_dir) / SOLUTIONS_DIR).glob("ch[0-9][0-9].py")):
        spec = importlib.util.spec_from_file_location(f"_course_solutions_{path.stem}", path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load the solutions module {path}")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        for number, code in module.SOLUTIONS.items():
            found[f"{path.stem} q{number}"] = code
    if not found:
        raise FileNotFoundError(f"no solutions in {Path(helpers_dir) / SOLUTIONS_DIR}: the teacher edition needs them")
    return found


def _strings(node: Any) -> list[str]:
    """The texts of a notebook's JSON: a list of strings (a cell's source lines) joined, the rest walked."""
    if isinstance(node, str):
        return [node]
    if isinstance(node, list) and node and all(isinstance(x, str) for x in node):
        return ["".join(node)]
    if isinstance(node, list):
        return [s for x in node for s in _strings(x)]
    if isinstance(node, dict):
        return [s for x in node.values() for s in _strings(x)]
    return []


def _readable_texts(path: Path) -> list[str]:
    """What a reader of `path` sees as text: its content, and the strings inside Python, notebooks and pages."""
    try:
        content = path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        return []
    texts = [content]
    if path.suffix == ".py":
        try:
            texts += [
                n.value
                for n in ast.walk(ast.parse(content))
                if isinstance(n, ast.Constant) and isinstance(n.value, str)
            ]
        except SyntaxError:
            pass
    elif path.suffix == ".ipynb":
        try:
            texts += _strings(json.loads(content))
        except json.JSONDecodeError:
            pass
    elif path.suffix in (".html", ".htm", ".js", ".json", ".txt"):
        texts.append(html.unescape(re.sub(r"<[^>]+>", "", content)))
    return texts


def _squeezed(text: str) -> str:
    return " ".join(text.split())


def readable_files(folder: Path) -> dict[Path, list[str]]:
    """Every file under `folder`, in order, with what a reader sees in it as text (`_readable_texts`)."""
    return {path: _readable_texts(path) for path in sorted(p for p in Path(folder).rglob("*") if p.is_file())}


def solution_leaks(folder: Path, solutions: dict[str, str], files: dict[Path, list[str]] | None = None) -> list[str]:
    """Where a solution can be read under `folder`: "path: chNN qN" for each file and solution found in it.

    `files` is `readable_files(folder)` when the caller has already read them.
    """
    wanted = {key: _squeezed(code) for key, code in solutions.items()}
    leaks = []
    for path, readable in (files if files is not None else readable_files(folder)).items():
        texts = [_squeezed(t) for t in readable]
        for key, code in wanted.items():
            if any(code in text for text in texts):
                leaks.append(f"{path.relative_to(folder)}: {key}")
    return leaks


def _code_line(line: str) -> str:
    """`line` as code to compare: without a trailing comment, whitespace-normalised."""
    return _squeezed(_COMMENT.sub("", line))


def _substantial_lines(code: str) -> set[str]:
    return {line for line in map(_code_line, code.splitlines()) if len(line) >= SUBSTANTIAL_LINE}


def shown_lines(folder: Path) -> set[str]:
    """The code lines `folder`'s edition shows openly, which a solution may share without leaking.

    These are the lines of the notebooks' code cells (what the lessons teach, and each exercise's
    starter code such as `def fill_rows(buffer, tensors):`) and of the course's infrastructure
    modules, `helpers/` outside `helpers/exercises/`; the exercise modules themselves are not.
    """
    folder = Path(folder)
    shown: set[str] = set()
    for notebook in sorted((folder / "notebooks").glob("*.ipynb")):
        cells = json.loads(notebook.read_text(encoding="utf-8")).get("cells", [])
        for cell in cells:
            if cell.get("cell_type") == "code":
                shown |= _substantial_lines("".join(cell.get("source", "")))
    exercises = folder / "helpers" / SOLUTIONS_DIR.parent
    for module in sorted((folder / "helpers").rglob("*.py")):
        if not module.is_relative_to(exercises):
            shown |= _substantial_lines(module.read_text(encoding="utf-8"))
    return shown


def solution_line_leaks(
    folder: Path, solutions: dict[str, str], files: dict[Path, list[str]] | None = None
) -> list[str]:
    """Where a substantial line of a solution can be read under `folder`, other than where it is shown openly.

    One entry per file and solution: "path: chNN qN line 'the line'" (and how many more lines).
    `files` is `readable_files(folder)` when the caller has already read them.
    """
    shown = shown_lines(folder)
    wanted = {key: _substantial_lines(code) - shown for key, code in solutions.items()}
    leaks = []
    for path, readable in (files if files is not None else readable_files(folder)).items():
        lines = {_code_line(line) for text in readable for line in text.splitlines()}
        for key, own in wanted.items():
            found = sorted(own & lines)
            if found:
                more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
                leaks.append(f"{path.relative_to(folder)}: {key} line {found[0]!r}{more}")
    return leaks


def solution_calls(notebook: Path) -> list[int]:
    """The indices of `notebook`'s code cells that call a question's `solution()` (and so print it)."""
    nb = json.loads(Path(notebook).read_text(encoding="utf-8"))
    return [
        i
        for i, cell in enumerate(nb["cells"])
        if cell.get("cell_type") == "code" and _SOLUTION_CALL.search("".join(cell.get("source", "")))
    ]


def _pyproject(helpers_dir: Path, repo_pyproject: Path = ROOT / "pyproject.toml") -> str:
    """A pyproject.toml that installs the edition's `helpers` (the packages it holds, nothing else)."""
    config = tomllib.loads(repo_pyproject.read_text(encoding="utf-8"))
    project = config["project"]
    packages = sorted(
        ".".join(("helpers", *p.parent.relative_to(helpers_dir).parts)) for p in helpers_dir.rglob("__init__.py")
    )
    keys = ("name", "version", "description", "requires-python")
    lines = [
        "# The course's learner package as this edition ships it; `pip install .` installs it with its dependencies.",
        "[build-system]",
        f"requires = {json.dumps(config['build-system']['requires'])}",
        f"build-backend = {json.dumps(config['build-system']['build-backend'])}",
        "",
        "[project]",
        *(f"{key} = {json.dumps(project[key])}" for key in keys if key in project),
        *(
            [f"license = {{ text = {json.dumps(project['license']['text'])} }}"]
            if "text" in project.get("license", {})
            else []
        ),
        "dependencies = [",
        *(f"    {json.dumps(dep)}," for dep in project.get("dependencies", [])),
        "]",
        "",
        "[tool.setuptools]",
        f"packages = {json.dumps(packages)}",
        "",
        "[tool.setuptools.package-data]",
        'helpers = ["py.typed"]',
    ]
    return "\n".join(lines) + "\n"


def _readme(edition: str, chapters: list[Path], has_site: bool) -> str:
    label = EDITIONS[edition]
    solutions = (
        "Solutions are **not** included: `ex.qN.solution()` says so, while `check()` and `hint()` work as usual."
        if edition == "handout"
        else "Solutions are included: `ex.qN.solution()` prints one, and `solutions.md` lists them all."
    )
    site = (
        "* `site/index.html`: the course site, every chapter as it ran (open it in a browser; no server needed).\n"
        if has_site
        else ""
    )
    return (
        f"# GPU programming with PyTorch: {label.lower()}\n\n"
        f"{solutions}\n\n"
        f"* `notebooks/`: the {len(chapters)} chapters. Open them with Jupyter from this folder (for example "
        "`jupyter lab notebooks`); their set-up cell finds `helpers/` next to `notebooks/`.\n"
        "* `helpers/`: the course's learner package. To install it with its dependencies instead, "
        "`pip install .` in this folder.\n"
        f"{site}"
    )


def _solutions_page(solutions: dict[str, str]) -> str:
    lines = ["# Exercise solutions (teacher edition)", ""]
    for key, code in solutions.items():
        chapter, question = key.split()
        lines += [f"## Chapter {chapter.removeprefix('ch')}, question {question.removeprefix('q')}", "", "```python"]
        lines += [code.strip(), "```", ""]
    return "\n".join(lines)


def _refuse_foreign(folder: Path) -> None:
    """Refuse to replace a folder that holds something other than an edition this tool built."""
    if folder.exists() and any(folder.iterdir()) and not (folder / MARKER).is_file():
        raise FileExistsError(f"{folder} exists and is not an edition built by this tool: pass an empty or new --out")


def build_edition(
    edition: str,
    out_dir: Path | None = None,
    *,
    executed_dir: Path | None = BUILD,
    root: Path = ROOT,
) -> Edition:
    """Build the `edition` ("handout" or "teacher") folder at `out_dir` (default build/<edition>/).

    The site is built from the executed chapters in `executed_dir` (build/, where
    `python -m coursetools run` writes them); None leaves the site out. The handout is searched
    for solution text before it is published, and refused if any is found.
    """
    if edition not in EDITIONS:
        raise ValueError(f"unknown edition {edition!r}: pass one of {', '.join(EDITIONS)}")
    folder = Path(out_dir) if out_dir is not None else BUILD / edition
    chapters = discover_chapters(root / "notebooks")
    if not chapters:
        raise FileNotFoundError(f"no chapter notebooks in {root / 'notebooks'}")
    executed: list[Path] = []
    if executed_dir is not None:
        executed = discover_chapters(Path(executed_dir))
        if not executed:
            raise FileNotFoundError(
                f"no executed chapters in {executed_dir} to build the site from: run `python -m coursetools run` "
                "(QUICK=1 for small sizes) first, or pass --no-site"
            )
        printing = {p.name: cells for p in executed if (cells := solution_calls(p))}
        if printing:
            where = "; ".join(f"{name} code cells {cells}" for name, cells in printing.items())
            raise EditionError(f"executed cells call .solution(), so the site would show solutions: {where}")
    solutions = solution_texts(root / "helpers")
    _refuse_foreign(folder)
    site_index: Path | None = None

    def fill(staging: Path) -> None:
        nonlocal site_index
        (staging / MARKER).write_text(edition + "\n", encoding="utf-8")
        (staging / "notebooks").mkdir()
        for path in chapters:
            write(staging / "notebooks" / path.name, tidy(json.loads(path.read_text(encoding="utf-8"))))

        def ignore(directory: str, names: list[str]) -> list[str]:
            skipped = build_junk(directory, names)
            if edition == "handout" and Path(directory) == root / "helpers" / SOLUTIONS_DIR.parent:
                skipped.append(SOLUTIONS_DIR.name)
            return skipped

        shutil.copytree(root / "helpers", staging / "helpers", ignore=ignore)
        (staging / "pyproject.toml").write_text(_pyproject(staging / "helpers", root / "pyproject.toml"), "utf-8")
        if edition == "teacher":
            (staging / "solutions.md").write_text(_solutions_page(solutions), encoding="utf-8")
        if executed_dir is not None:
            from .site import build_site

            built = build_site(Path(executed_dir), staging / "site", label=EDITIONS[edition]).index
            site_index = folder / built.relative_to(staging)
        (staging / "README.md").write_text(_readme(edition, chapters, site_index is not None), encoding="utf-8")
        if edition == "handout":
            files = readable_files(staging)  # read once, searched for whole solutions and for their lines
            leaks = solution_leaks(staging, solutions, files) + solution_line_leaks(staging, solutions, files)
            if leaks:
                raise EditionError("the handout would ship solution code:\n  " + "\n  ".join(leaks))

    staged_folder(folder, fill)
    return Edition(edition, folder, [folder / "notebooks" / p.name for p in chapters], site_index)


def main(edition: str, out_dir: str | None, site: bool = True) -> int:
    """`python -m coursetools edition ...`: build one edition and say where it is."""
    try:
        built = build_edition(edition, Path(out_dir) if out_dir else None, executed_dir=BUILD if site else None)
    except (EditionError, FileNotFoundError, FileExistsError, WriteFault) as exc:
        print(f"Could not build the {edition} edition: {exc}")
        return 1
    print(f"{EDITIONS[edition]}: {built.folder}/ ({len(built.notebooks)} chapters in notebooks/, helpers/)")
    if built.site_index:
        print(f"Course site: {built.site_index}")
    print(f"How to use it: {built.folder / 'README.md'}")
    return 0
