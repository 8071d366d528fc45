"""Root pytest hooks, here so that they also apply to the notebooks nbval collects under notebooks/."""

from __future__ import annotations

import pytest


def pytest_itemcollected(item: pytest.Item) -> None:
    # nbval runs a notebook's cells in one kernel, in order: keep each notebook on one xdist worker
    # (marked as each item is collected, before xdist reads the groups in its collection hook).
    if item.path.suffix == ".ipynb":
        item.add_marker(pytest.mark.xdist_group(item.path.stem))
