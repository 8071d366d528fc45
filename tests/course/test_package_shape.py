"""The shape of the two packages: no import cycle, and nothing in the learner package without a reader.

Imports are read from the source (every `import`, also one inside a function, since an import
moved into a function still ties the two modules together). A module of `helpers` is used when a
chapter's code cells import it or name it (`helpers.timelines.…`, `load_exercises("06", …)` for
the exercises), when another module of `helpers` imports it, or when a console entry point names it.

Function by function, too: every public top-level name of `helpers` must be reached from what
learners run (a chapter's code and the files it writes, its exercises, `coursetools/`, an entry
point), directly or through the helpers that code calls. A name only tests use belongs in `tests/`.
"""

from __future__ import annotations

import ast
import contextlib
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from coursetools import ROOT

from .notebook_code import ALL_NOTEBOOKS, code_cells, load

PACKAGES = ("helpers", "coursetools")

#: A chapter loading its exercises: `load_exercises("06", globals())` reads `helpers.exercises.ch06.QUESTIONS`.
LOAD_EXERCISES = r"load_exercises\(\s*['\"](\d+)['\"]"


def modules(package: str) -> dict[str, Path]:
    """Dotted name -> file, for every module of `package` (a package's `__init__` is the package's name)."""
    found = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imported_names(name: str, path: Path, known: set[str]) -> Iterator[str]:
    """The modules among `known` that module `name` (at `path`) imports, anywhere in its source."""
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            # `from package import module` imports the module; `from module import name` the module alone
            targets = [f"{module}.{alias.name}" for alias in node.names if f"{module}.{alias.name}" in known]
            targets = targets or [module]
        else:
            continue
        for target in targets:
            while target and target not in known:  # `import helpers.devices.x` → the nearest known module
                target = target.rpartition(".")[0]
            if target and target != name:
                yield target


def import_graph(package: str) -> dict[str, set[str]]:
    found = modules(package)
    return {name: set(imported_names(name, path, set(found))) for name, path in found.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return groups


def test_the_cycle_finder_finds_a_cycle_through_a_function_level_import(tmp_path: Path) -> None:
    """The check below can fail: two modules importing each other, one of them inside a function."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from .b import g\n")
    (package / "b.py").write_text("def g():\n    from . import a\n")
    (package / "c.py").write_text("from pkg import a\n")
    found = {"pkg": package / "__init__.py", **{f"pkg.{m}": package / f"{m}.py" for m in "abc"}}
    graph = {name: set(imported_names(name, path, set(found))) for name, path in found.items()}
    assert graph["pkg.c"] == {"pkg.a"}
    assert cycles(graph) == [["pkg.a", "pkg.b"]]


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_cycle(package: str) -> None:
    found = cycles(import_graph(package))
    assert not found, f"modules of {package} that import each other (through any chain): {found}"


def used_by_chapters(known: set[str]) -> set[str]:
    """Modules of `helpers` that a chapter's code cells import or name."""
    used = set()
    for path in ALL_NOTEBOOKS:
        for code in code_cells(load(path)):
            for dotted in re.findall(r"\bhelpers(?:\.\w+)*", code):
                while dotted and dotted not in known:
                    dotted = dotted.rpartition(".")[0]
                used.add(dotted)
            for chapter in re.findall(LOAD_EXERCISES, code):
                used.add(f"helpers.exercises.ch{chapter.zfill(2)}")
            try:
                tree = ast.parse(code)
            except SyntaxError:
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("helpers"):
                    used.update(f"{node.module}.{a.name}" for a in node.names if f"{node.module}.{a.name}" in known)
    return used & known


def test_every_module_of_the_learner_package_has_a_reader() -> None:
    found = modules("helpers")
    known = set(found)
    graph = import_graph("helpers")
    used = used_by_chapters(known) | {target for name, targets in graph.items() for target in targets}
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"].get("scripts", {})
    used |= {entry.split(":")[0] for entry in scripts.values()}
    # a chapter's exercises load their solutions by name (helpers.checking imports them with importlib)
    used |= {name.replace(".exercises.", ".exercises.solutions.") for name in used if ".exercises.ch" in name}
    used |= {name.rpartition(".")[0] for name in used}  # a used module's package is imported with it
    unused = sorted(known - used)
    assert not unused, f"modules of helpers that no chapter, exercise, other helper or entry point uses: {unused}"


# -- Function-level reachability: every public name of helpers is reached from what learners run ----------------

#: The node that stands for a module's own top-level code (what runs when it is imported).
MODULE_CODE = "<module>"

#: Dotted names of helpers written in strings: a worker sent to another process by name, a command line.
NAMED_IN_TEXT = re.compile(r"\bhelpers(?:\.\w+)+")

TopLevel = tuple[str, str]  # (module, a name defined at its top level), or (module, MODULE_CODE)


def import_aliases(trees: list[ast.AST], name: str = "", is_package: bool = False) -> dict[str, str]:
    """Local name -> the dotted name it stands for, from every import in `trees` (in functions too)."""
    aliases = {}
    for node in (n for tree in trees for n in ast.walk(tree)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                aliases[alias.asname or top] = alias.name if alias.asname else top
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                module = ".".join(base[: len(base) - (node.level - 1)] + ([module] if module else []))
            for alias in node.names:
                aliases[alias.asname or alias.name] = f"{module}.{alias.name}"
    return aliases


def dotted_name(node: ast.AST, aliases: dict[str, str]) -> str | None:
    """`helpers.plots.show` for `plots.show` after `from helpers import plots`; None for a name not imported."""
    attributes = []
    while isinstance(node, ast.Attribute):
        attributes.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name) and node.id in aliases:
        return ".".join([aliases[node.id], *reversed(attributes)])
    return None


def referenced(nodes: list[ast.AST], aliases: dict[str, str], own: tuple[str, set[str]] | None = None) -> set[str]:
    """Dotted names that `nodes` use: imported names and their attributes, modules imported, names in strings.

    An import alone uses the module it imports (its code runs), not the names it binds: those count where the
    code uses them. Docstrings are not uses. `own` is (module, the names defined in it) for code inside a module.
    """
    docstrings = {id(n.value) for n in nodes if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}
    found = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.update(aliases.get(a.asname or a.name, "").rpartition(".")[0] for a in node.names)
        elif isinstance(node, ast.Attribute | ast.Name):
            found.add(dotted_name(node, aliases) or "")
            if own and isinstance(node, ast.Name) and node.id in own[1] and node.id not in aliases:
                found.add(f"{own[0]}.{node.id}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            found.update(NAMED_IN_TEXT.findall(node.value))
    return found - {""}


def code_trees(code: str) -> list[ast.AST]:
    """A cell's code, and the Python files it writes with `%%writefile` (workers other processes import)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    trees = [tree]
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "run_cell_magic"
            and len(node.args) == 3
            and all(isinstance(a, ast.Constant) for a in node.args)
            and node.args[0].value == "writefile"
        ):
            with contextlib.suppress(SyntaxError):
                trees.append(ast.parse(node.args[2].value))
    return trees


def top_level(body: list[ast.stmt]) -> Iterator[tuple[str, ast.stmt]]:
    """(name defined, statement) for each top-level statement; MODULE_CODE for one that defines no name."""
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield node.name, node
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
            for name in names or [MODULE_CODE]:
                yield name, node
        elif isinstance(node, ast.If | ast.Try):
            yield from top_level([*node.body, *node.orelse, *getattr(node, "finalbody", [])])
            for handler in getattr(node, "handlers", []):
                yield from top_level(handler.body)
        else:
            yield MODULE_CODE, node


class Package:
    """The names a package's modules define, and which of them each top-level statement uses."""

    def __init__(self, files: dict[str, Path]) -> None:
        self.modules = set(files)
        self.defined: dict[str, set[str]] = {}
        self.aliases: dict[str, dict[str, str]] = {}
        self.uses: dict[TopLevel, set[str]] = {}
        for module, path in files.items():
            tree = ast.parse(path.read_text(encoding="utf-8"))
            statements = list(top_level(tree.body))
            self.defined[module] = {name for name, _ in statements} - {MODULE_CODE}
            self.aliases[module] = import_aliases([tree], module, path.name == "__init__.py")
            own = (module, self.defined[module])
            for name, node in statements:
                used = referenced(list(ast.walk(node)), self.aliases[module], own)
                self.uses.setdefault((module, name), set()).update(used)

    def resolve(self, dotted: str, seen: frozenset[str] = frozenset()) -> TopLevel | None:
        """The (module, name) that a dotted name reaches, following a module's imports (re-exports)."""
        parts = dotted.split(".")
        for i in range(len(parts), 0, -1):
            module = ".".join(parts[:i])
            if module not in self.modules:
                continue
            if i == len(parts):
                return module, MODULE_CODE
            name = parts[i]
            target = self.aliases[module].get(name)
            if name not in self.defined[module] and target and target not in seen:
                return self.resolve(".".join([target, *parts[i + 1 :]]), seen | {target})
            return module, name
        return None

    def reached(self, roots: set[str]) -> set[TopLevel]:
        """Every (module, name) reached from the dotted names `roots` through the code that uses them."""
        reached: set[TopLevel] = set()
        todo = [found for dotted in roots if (found := self.resolve(dotted))]
        while todo:
            module, name = todo.pop()
            packages = [".".join(module.split(".")[:i]) for i in range(1, module.count(".") + 1)]
            for node in [(module, name), (module, MODULE_CODE), *((p, MODULE_CODE) for p in packages)]:
                if node not in reached:
                    reached.add(node)
                    todo.extend(found for dotted in self.uses.get(node, ()) if (found := self.resolve(dotted)))
        return reached

    def unreached(self, roots: set[str], skip: tuple[str, ...] = ()) -> list[str]:
        """Public top-level names of the package that nothing reached from `roots` uses."""
        reached = self.reached(roots)
        return sorted(
            f"{module}.{name}"
            for module, names in self.defined.items()
            if not module.startswith(skip)
            for name in names
            if not name.startswith("_") and (module, name) not in reached
        )


def notebook_roots(notebooks: list[Path]) -> set[str]:
    """What chapters use: every dotted name of their code and worker files, and each chapter's exercises."""
    roots = set()
    for path in notebooks:
        cells = code_cells(load(path))
        trees = [tree for code in cells for tree in code_trees(code)]
        roots |= referenced([n for tree in trees for n in ast.walk(tree)], import_aliases(trees))
        for code in cells:  # load_exercises("06", ...) reads helpers.exercises.ch06.QUESTIONS by name
            roots |= {f"helpers.exercises.ch{n.zfill(2)}.QUESTIONS" for n in re.findall(LOAD_EXERCISES, code)}
    return roots


def tooling_roots() -> set[str]:
    """What coursetools/ uses of helpers, and the console entry points."""
    roots = set()
    for module, path in modules("coursetools").items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        roots |= referenced(list(ast.walk(tree)), import_aliases([tree], module, path.name == "__init__.py"))
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"].get("scripts", {})
    return roots | {entry.replace(":", ".") for entry in scripts.values()}


def test_the_reachability_check_finds_a_name_only_tests_or_dead_code_use(tmp_path: Path) -> None:
    """The check below can fail: a function only an unused function calls, a name imported but never used."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("from .plots import show\n")
    (package / "plots.py").write_text(
        "SIZE = 3\n\ndef show(fig):\n    return _draw(fig)\n\ndef _draw(fig):\n    return fig * SIZE\n\n"
        "def for_tests(fig):\n    return helper_of_tests(fig)\n\ndef helper_of_tests(fig):\n    return fig\n"
    )
    (package / "kernels.py").write_text("def interpreted(k):\n    return k\n\ndef run(k):\n    return interpreted(k)\n")
    found = {"pkg": package / "__init__.py", "pkg.plots": package / "plots.py", "pkg.kernels": package / "kernels.py"}

    def unreached(cell: str, skip: tuple[str, ...] = ()) -> list[str]:
        (code,) = code_cells({"cells": [{"cell_type": "code", "source": cell}]})  # as a notebook's cell
        trees = code_trees(code)
        roots = referenced([n for tree in trees for n in ast.walk(tree)], import_aliases(trees))
        return Package(found).unreached(roots, skip)

    cell = "import pkg\nfrom pkg import kernels as k\nfrom pkg.plots import for_tests\n\npkg.show(1)\n"
    all_four = ["pkg.kernels.interpreted", "pkg.kernels.run", "pkg.plots.for_tests", "pkg.plots.helper_of_tests"]
    assert unreached(cell) == all_four
    assert unreached(cell + "k.run(2)\n") == ["pkg.plots.for_tests", "pkg.plots.helper_of_tests"]
    assert unreached(f"%%writefile w.py\n{cell}k.run(2)\n") == ["pkg.plots.for_tests", "pkg.plots.helper_of_tests"]
    assert unreached(cell, skip=("pkg.plots",)) == ["pkg.kernels.interpreted", "pkg.kernels.run"]


def test_every_public_name_of_the_learner_package_is_reached_from_what_learners_run() -> None:
    """Every public top-level function, class and constant of helpers is used, directly or through other helpers,
    by a chapter's code, an exercise, coursetools/ or an entry point; not only by tests (those live in tests/)."""
    files = modules("helpers")
    package = Package(files)
    roots = notebook_roots(ALL_NOTEBOOKS) | tooling_roots()
    unreached = package.unreached(roots, skip=("helpers.exercises.solutions",))
    assert not unreached, (
        f"names in helpers that nothing learners run uses (move test-only ones to tests/): {unreached}"
    )
