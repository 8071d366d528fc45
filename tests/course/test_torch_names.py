"""Every `torch.…` name in notebooks and helpers exists in the installed torch and is not deprecated.

A deprecated name may appear only in a notebook cell that teaches that it is deprecated; such a
cell carries the tag `teaches-deprecated`.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from coursetools import authoring

from .notebook_code import ALL_NOTEBOOKS, code_cells, load

ROOT = Path(__file__).resolve().parents[2]
HELPER_FILES = sorted((ROOT / "helpers").rglob("*.py"))

#: Deprecated in current PyTorch (docs/sources.md §2 and the torch docs), with what to use instead.
DEPRECATED = {
    "torch.cuda.memory_cached": "torch.cuda.memory_reserved",
    "torch.cuda.max_memory_cached": "torch.cuda.max_memory_reserved",
    "torch.cuda.reset_max_memory_cached": "torch.cuda.reset_peak_memory_stats",
    "torch.cuda.reset_max_memory_allocated": "torch.cuda.reset_peak_memory_stats",
    "torch.cuda.amp.autocast": "torch.autocast(device_type='cuda')",
    "torch.cuda.amp.GradScaler": "torch.amp.GradScaler('cuda')",
    "torch.set_default_tensor_type": "torch.set_default_dtype / torch.device context",
    "torch.testing.assert_allclose": "torch.testing.assert_close",
    "torch.distributed.launch": "torchrun",
}
LEGACY_TENSOR_TYPES = {
    "FloatTensor",
    "DoubleTensor",
    "HalfTensor",
    "BFloat16Tensor",
    "ByteTensor",
    "CharTensor",
    "ShortTensor",
    "IntTensor",
    "LongTensor",
    "BoolTensor",
}
DEPRECATED_KEYWORDS = {
    ("pin_memory", "device"): "pin_memory() without device=",
    ("DataLoader", "pin_memory_device"): "DataLoader(pin_memory=True) alone",
}


def _aliases(tree: ast.AST) -> dict[str, str]:
    """Local names bound to torch modules or objects: {'nn': 'torch.nn', 'F': 'torch.nn.functional', ...}."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "torch" or a.name.startswith("torch."):
                    names[a.asname or a.name.split(".")[0]] = a.name if a.asname else "torch"
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "torch":
            for a in node.names:
                names[a.asname or a.name] = f"{node.module}.{a.name}"
    return names


def _chain(node: ast.AST) -> list[str] | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return [node.id, *reversed(parts)]
    return None


def _resolve(dotted: str) -> object:
    parts = dotted.split(".")
    obj: object = importlib.import_module(parts[0])
    done = parts[0]
    for part in parts[1:]:
        done += "." + part
        try:
            obj = getattr(obj, part)
        except AttributeError:
            obj = importlib.import_module(done)  # a submodule not yet imported by its parent
    return obj


def torch_uses(code: str) -> tuple[set[str], set[str], list[str]]:
    """(torch names used, names called, deprecated keyword uses) in a piece of Python code."""
    tree = ast.parse(code)
    aliases = _aliases(tree)
    used: set[str] = set()
    called: set[str] = set()
    keywords: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Attribute, ast.Name)) and not isinstance(getattr(node, "ctx", None), ast.Store):
            chain = _chain(node)
            if chain and chain[0] in aliases:
                used.add(".".join([aliases[chain[0]], *chain[1:]]))
        if isinstance(node, ast.Call):
            chain = _chain(node.func)
            if chain and chain[0] in aliases:
                called.add(".".join([aliases[chain[0]], *chain[1:]]))
            last = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            for kw in node.keywords:
                if (last, kw.arg) in DEPRECATED_KEYWORDS:
                    keywords.append(f"{last}({kw.arg}=...): use {DEPRECATED_KEYWORDS[(last, kw.arg)]}")
    # keep only the longest chains: torch.cuda.memory_reserved implies torch.cuda and torch
    longest = {u for u in used if not any(v.startswith(u + ".") for v in used)}
    return longest, called, keywords


def _problems(code: str, where: str, teaching: bool) -> list[str]:
    found = []
    used, called, keywords = torch_uses(code)
    for name in sorted(used):
        try:
            _resolve(name)
        except (AttributeError, ImportError):
            found.append(f"{where}: `{name}` does not exist in torch")
            continue
        if teaching:
            continue
        if name in DEPRECATED:
            found.append(f"{where}: `{name}` is deprecated, use {DEPRECATED[name]}")
        if name.startswith("torch.cuda.") and name.rsplit(".", 1)[1] in LEGACY_TENSOR_TYPES:
            found.append(f"{where}: `{name}` is a legacy tensor type, use torch.tensor(..., device='cuda')")
    if not teaching:
        if "torch.Tensor" in called:
            found.append(f"{where}: the legacy constructor torch.Tensor(...) is called, use torch.tensor(...)")
        found += [f"{where}: {k}" for k in keywords]
    return found


SOURCES = [(f"helpers/{p.relative_to(ROOT / 'helpers')}", p) for p in HELPER_FILES] + [
    (f"notebooks/{p.name}", p) for p in ALL_NOTEBOOKS
]


@pytest.mark.parametrize(("label", "path"), SOURCES, ids=[s[0] for s in SOURCES])
def test_torch_names_exist_and_are_current(label: str, path: Path) -> None:
    if path.suffix == ".py":
        found = _problems(path.read_text(encoding="utf-8"), label, teaching=False)
    else:
        found = []
        nb = load(path)
        cells = [c for c in nb["cells"] if c["cell_type"] == "code"]
        for i, (cell, code) in enumerate(zip(cells, code_cells(nb), strict=True)):
            found += _problems(code, f"{label} code cell {i}", teaching=authoring.teaches_deprecated(cell))
    assert not found, "\n".join(found)


def test_the_scanner_catches_what_it_should() -> None:
    """The scanner itself: a missing name, a deprecated one, a legacy constructor, a deprecated keyword."""
    code = (
        "import torch\nfrom torch import nn\nimport torch.nn.functional as F\n"
        "torch.cuda.memory_cached()\ntorch.cuda.FloatTensor(2)\ntorch.Tensor([1])\n"
        "torch.no_such_function()\nnn.Linear(2, 2)\nF.relu\nx.pin_memory(device='cuda')\n"
    )
    problems = _problems(code, "sample", teaching=False)
    text = "\n".join(problems)
    assert "torch.cuda.memory_cached` is deprecated" in text
    assert "torch.cuda.FloatTensor` is a legacy tensor type" in text
    assert "legacy constructor torch.Tensor" in text
    assert "torch.no_such_function` does not exist" in text
    assert "pin_memory(device=...)" in text
    assert len(problems) == 5, problems
    assert _problems("import torch\ntorch.cuda.memory_cached()", "t", teaching=True) == []
