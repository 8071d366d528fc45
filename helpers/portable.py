"""Sending a function written in a notebook cell to another process.

A child started with `spawn` or `forkserver` (every start method on Windows and, by default, on
macOS) imports the function it must run by module and name. A function defined in a notebook
cell lives in `__main__`, which the child cannot import. The exercise checkers run a learner's
worker for real in child processes (chapter 08's DDP ranks, chapter 09's Hogwild workers), so
they send the function's compiled code instead (`marshal`), with the modules, functions and
picklable values it uses; a function that lives in a module is sent by name as usual.
"""

from __future__ import annotations

import builtins
import importlib
import inspect
import marshal
import pickle
import types
from collections.abc import Callable
from typing import Any


class NotPortable(ValueError):
    """The function cannot be sent to a child process; the message says why, in the learner's terms."""


def _names_used(code: types.CodeType) -> set[str]:
    """Global names a code object (and the functions and comprehensions nested in it) may look up."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names_used(const)
    return names


def _importable(fn: Any) -> bool:
    """Whether a child can find `fn` by importing its module (not `__main__`, not nested, not a lambda)."""
    module, qualname = getattr(fn, "__module__", None), getattr(fn, "__qualname__", "")
    if module in (None, "__main__") or "<" in qualname:
        return False
    try:
        found = importlib.import_module(module)
        for part in qualname.split("."):
            found = getattr(found, part)
    except Exception:
        return False
    return found is fn


def portable(fn: Callable[..., Any], _depth: int = 0) -> Any:
    """What to send a child so that it can call `fn`: `fn` itself if it is importable, else its code and globals.

    Raises `NotPortable` when that is impossible: a closure, a class or callable object defined in
    the notebook, or a notebook value that cannot be pickled.
    """
    fn = inspect.unwrap(fn)
    if _importable(fn):
        return fn
    name = getattr(fn, "__name__", repr(fn))
    if not isinstance(fn, types.FunctionType):
        raise NotPortable(f"`{name}` should be a function written with `def`, not a {type(fn).__name__}")
    if fn.__closure__:
        raise NotPortable(f"`{name}` uses variables of an enclosing function: define it at the top level of a cell")
    spec: dict[str, Any] = {
        "code": marshal.dumps(fn.__code__),
        "name": fn.__name__,
        "defaults": fn.__defaults__,
        "kwdefaults": fn.__kwdefaults__,
        "modules": {},
        "functions": {},
        "values": {},
    }
    for used in sorted(_names_used(fn.__code__)):
        if used not in fn.__globals__:
            continue  # a builtin, an attribute name, or a name that is missing anyway (NameError when called)
        value = fn.__globals__[used]
        if isinstance(value, types.ModuleType):
            spec["modules"][used] = value.__name__
        elif isinstance(value, types.FunctionType) and not _importable(value) and value is not fn:
            if _depth >= 3:
                raise NotPortable(f"`{name}` calls functions nested too deep to send to another process")
            spec["functions"][used] = portable(value, _depth + 1)
        elif value is fn:
            spec["functions"][used] = None  # recursion: the function itself
        else:
            if getattr(type(value), "__module__", None) == "__main__":
                raise NotPortable(
                    f"`{name}` uses `{used}`, an object of a class defined in the notebook, which another process "
                    "cannot import: pass what it needs as an argument"
                )
            try:
                pickle.dumps(value)
            except Exception as exc:
                raise NotPortable(
                    f"`{name}` uses `{used}` from the notebook, which cannot be sent to another process "
                    f"({type(exc).__name__}): pass it as an argument or create it inside the function"
                ) from None
            spec["values"][used] = value
    return spec


def rebuild(spec: Any, namespace: dict[str, Any] | None = None) -> Callable[..., Any]:
    """The function `portable` described, rebuilt in this (child) process."""
    if not isinstance(spec, dict):
        return spec
    namespace = {"__builtins__": builtins, "__name__": "__learner__"} if namespace is None else namespace
    for name, module in spec["modules"].items():
        namespace[name] = importlib.import_module(module)
    namespace.update(spec["values"])
    fn = types.FunctionType(marshal.loads(spec["code"]), namespace, spec["name"], spec["defaults"])
    fn.__kwdefaults__ = spec["kwdefaults"]
    for name, inner in spec["functions"].items():
        namespace[name] = fn if inner is None else rebuild(inner, namespace)
    return fn
