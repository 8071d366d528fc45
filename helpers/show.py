"""Show learners the code of a helper, so a chapter teaches the very function the course uses."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any


def show_source(obj: Callable[..., Any] | type) -> None:
    """Print the source code of a function or class from `helpers` (as the package has it now)."""
    try:
        source = inspect.getsource(obj)
    except (TypeError, OSError) as exc:
        raise TypeError(f"show_source needs a function or class defined in Python source, not {obj!r}") from exc
    print(f"# from {obj.__module__}\n{source}")
