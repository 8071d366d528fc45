"""Plot helpers. matplotlib is imported inside the functions, so `import helpers` stays cheap."""

from __future__ import annotations

from typing import Any


def new_figure(width: float = 7.0, height: float = 4.0) -> tuple[Any, Any]:
    """A fresh (figure, axes) pair sized for a notebook page."""
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(width, height), layout="constrained")


def add_stamp(fig: Any, text: str) -> None:
    """Write where a figure's numbers come from (`helpers.environment.stamp()` or a cited source) under it."""
    fig.text(0.01, -0.02, text, fontsize=7, color="0.35", ha="left", va="top")
