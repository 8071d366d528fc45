"""The shape of the two packages: no import cycle, and no module of the learner package without a reader.

Imports are read from the source (every `import`, also one inside a function, since an import
moved into a function still ties the two modules together). A module of `helpers` is used when a
chapter's code cells import it or name it (`helpers.timelines.…`, `load_exercises("06", …)` for
the exercises), when another module of `helpers` imports it, or when a console entry point names it.
"""

from __future__ import annotations

import ast
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from coursetools import ROOT

from .notebook_code import ALL_NOTEBOOKS, code_cells, load

PACKAGES = ("helpers", "coursetools")


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
            for chapter in re.findall(r"load_exercises\(\s*['\"](\d+)['\"]", code):
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
