"""The data-parallel diagram draws one lane per chunk, with `Tensor.chunk`'s sizes."""

from __future__ import annotations

import matplotlib
import pytest

from helpers import plots


@pytest.mark.parametrize(("rows", "devices", "lanes"), [(8, 2, 2), (10, 3, 3), (2, 4, 2)])
def test_the_diagram_draws_one_lane_per_chunk(rows: int, devices: int, lanes: int) -> None:
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plots.draw_batch_flow(rows, devices)
    try:
        ax = fig.axes[0]
        assert str(rows) in ax.get_title()
        texts = [t.get_text() for t in ax.texts]
        assert sum(t.startswith("chunk ") for t in texts) == lanes
    finally:
        plt.close(fig)
