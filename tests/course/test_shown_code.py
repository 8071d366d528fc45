"""Code a chapter prints with `show_source` is plain PyTorch: no private course names, no argument checks.

Learners read these functions as the lesson, so the lines they read must be code they could write
themselves: public names only, and no argument-validation padding. Argument checks live in the
`@checks(...)` decorator line (helpers.validation) or in the caller, never in the shown body.

Every `show_source(X)` call in every notebook's code cells is found; X is resolved by running the
notebook's own import statements, so a new `show_source` call is checked without a list to keep.
"""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
from collections.abc import Iterator
from typing import Any

import pytest

from helpers import validation

from .notebook_code import ALL_NOTEBOOKS, code_cells, load, source

#: Private names from outside the course that shown code may use, with the reason.
OUTSIDE_PRIVATE = {
    "os._exit": "Python's documented way to end a process at once (os module docs)",
    "torch.cuda._sleep": "PyTorch's undocumented spin kernel; the GPU demos that keep a stream busy with it say so",
}
#: The argument checks of helpers.validation (whole_number, positive_number, checks, ...).
VALIDATORS = {
    name
    for name, obj in vars(validation).items()
    if inspect.isfunction(obj) and obj.__module__ == validation.__name__ and not name.startswith("_")
}
ARGUMENT_ERRORS = {"TypeError", "ValueError"}
PRIVATE = re.compile(r"^_(?!_)\w+$")  # _name, but neither `_` alone nor __dunder__


def _nodes(cells: list[str]) -> Iterator[ast.AST]:
    """Every syntax node of the cells that parse as Python."""
    for code in cells:
        try:
            tree = ast.parse(code)
        except SyntaxError:
            continue
        yield from ast.walk(tree)


def _namespace(cells: list[str]) -> dict[str, Any]:
    """What the notebook's import statements bind (imports only: no other cell runs)."""
    namespace: dict[str, Any] = {}
    for node in _nodes(cells):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            try:
                exec(compile(ast.Module([node], []), "<notebook imports>", "exec"), namespace)
            except ImportError:
                continue  # an optional import; a shown name it should have bound fails below
    return namespace


def _shown_expressions(cells: list[str]) -> list[str]:
    return [
        ast.unparse(node.args[0])
        for node in _nodes(cells)
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "show_source" and node.args
    ]


def _collect() -> list[tuple[str, str, Any]]:
    shown = []
    for path in ALL_NOTEBOOKS:
        cells = code_cells(load(path))
        expressions = _shown_expressions(cells)
        if not expressions:
            continue
        namespace = _namespace(cells)
        for expression in expressions:
            try:
                obj = eval(expression, namespace)  # a name or a.b: the notebook's imports bound it
            except (NameError, AttributeError) as error:
                obj = error
            shown.append((path.name, expression, obj))
    return shown


SHOWN = _collect()


def private_names(tree: ast.AST) -> list[str]:
    """Private names a reader would see: `_helper(...)`, `module._name`, `from x import _name`."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and PRIVATE.match(node.id):
            found.append(node.id)
        elif isinstance(node, ast.Attribute) and PRIVATE.match(node.attr):
            dotted = f"{ast.unparse(node.value)}.{node.attr}"
            if dotted not in OUTSIDE_PRIVATE:
                found.append(dotted)
        elif isinstance(node, ast.ImportFrom):
            found += [f"{node.module}.{a.name}" for a in node.names if PRIVATE.match(a.name)]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and PRIVATE.match(node.name):
            found.append(node.name)
    return found


def argument_checks(body: list[ast.stmt]) -> list[str]:
    """Validation in the lines a learner reads: calls of helpers.validation, `raise TypeError/ValueError`."""
    found = []
    for node in ast.walk(ast.Module(body, [])):
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in VALIDATORS:
                found.append(f"{name}(...)")
        elif isinstance(node, ast.Raise) and node.exc is not None:
            error = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if getattr(error, "id", None) in ARGUMENT_ERRORS:
                found.append(f"raise {error.id}")
    return found


def problems(source: str) -> list[str]:
    """What the course's rule forbids in `source`, the text show_source prints for one function or class."""
    definition = ast.parse(textwrap.dedent(source)).body[0]
    found = [f"private name {name}" for name in private_names(definition)]
    if isinstance(definition, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        found += [f"argument check {check} in the body" for check in argument_checks(definition.body)]
    return found


def test_every_show_source_call_is_found() -> None:
    """The parser sees every call a plain text search sees (chapters may show none: the lesson is in cells)."""
    calls = sum(
        len(re.findall(r"^[^#\n]*\bshow_source\(", code, re.M))
        for path in ALL_NOTEBOOKS
        for code in code_cells(load(path))
    )
    assert len(SHOWN) == calls, f"the parser found {len(SHOWN)} show_source calls, a text search {calls}"


@pytest.mark.parametrize(("notebook", "expression", "obj"), SHOWN, ids=[f"{n[:2]}-{e}" for n, e, _ in SHOWN])
def test_shown_code_is_plain_public_pytorch(notebook: str, expression: str, obj: Any) -> None:
    assert not isinstance(obj, Exception), f"{notebook}: show_source({expression}): the imports do not bind it: {obj}"
    assert obj.__module__.startswith("helpers."), f"{notebook} shows {expression}, which is not course code"
    found = [f"private name {name} in the cell" for name in private_names(ast.parse(expression))]
    found += problems(inspect.getsource(obj))
    assert not found, f"{notebook}: show_source({expression}) prints {found}"


def test_the_torchrun_script_is_plain_pytorch() -> None:
    """Chapter 08's DDP worker is a `%%writefile` cell that torchrun runs: plain PyTorch, torch only, a normal end."""
    nb = load(next(p for p in ALL_NOTEBOOKS if p.name.startswith("08_")))
    raw = [source(c) for c in nb["cells"] if c["cell_type"] == "code"]
    worker = [c for c in raw if c.startswith("%%writefile {WORK}/ddp_worker.py")]
    assert len(worker) == 1, "chapter 08 writes its DDP worker with %%writefile {WORK}/ddp_worker.py"
    assert any("torchrun" in c and "ddp_worker.py" in c for c in code_cells(nb)), "chapter 08 runs it with torchrun"
    tree = ast.parse(worker[0].split("\n", 1)[1])
    assert private_names(tree) == []
    imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {(n.module or "").split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert "helpers" not in imported and "" not in imported, "the script must run on its own, with torch only"
    assert "destroy_process_group" in worker[0] and "_exit" not in worker[0], "it ends the normal way"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("def f(x):\n    return _helper(x)\n", ["private name _helper"]),
        ("def f(x):\n    return hw._fill_slot\n", ["private name hw._fill_slot"]),
        ("def f(n):\n    whole_number(n, 'n')\n    return n\n", ["argument check whole_number(...) in the body"]),
        ("def f(n):\n    if n < 1:\n        raise ValueError(n)\n", ["argument check raise ValueError in the body"]),
        ("@checks(n=whole_number)\ndef f(n):\n    os._exit(0)\n    torch.cuda._sleep(n)\n", []),
        ("def f(t):\n    return t.__class__, [0 for _ in t]\n", []),
    ],
)
def test_the_rule_itself(source: str, expected: list[str]) -> None:
    assert problems(source) == expected
