"""A diagram of data parallelism: how `nn.DataParallel` cuts one batch, copies the model and gathers.

Chapter 08 runs the four steps themselves (`scatter`, `replicate`, `parallel_apply`, `gather` from
`torch.nn.parallel`) in its cells; this module only draws the picture.
"""

from __future__ import annotations

from typing import Any

import torch


def draw_batch_flow(batch_size: int = 8, n_devices: int = 2, title: str | None = None) -> Any:
    """A diagram of how one batch flows through DataParallel: scatter, replicas, gather. Returns the figure."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch, Rectangle

    from .plots import GREY, LIGHT_GREY, PALETTE, WHITE, add_stamp, set_alt

    sizes = [c.numel() for c in torch.chunk(torch.arange(batch_size), n_devices)]
    fig, ax = plt.subplots(figsize=(8, 1.2 + 1.1 * len(sizes)), layout="constrained")
    ax.set_xlim(0, 10)
    total_h = 1.0 * len(sizes)
    ax.set_ylim(-0.6, total_h + 0.6)
    ax.axis("off")
    colors = PALETTE

    def box(x, y, w, h, text, color, alpha=0.25):
        ax.add_patch(Rectangle((x, y), w, h, facecolor=color, edgecolor=GREY, alpha=alpha))
        ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=8)

    def arrow(x0, y0, x1, y1):
        ax.add_patch(FancyArrowPatch((x0, y0), (x1, y1), arrowstyle="-|>", mutation_scale=10, color=GREY))

    # the batch, rows coloured by the device they go to
    row_h = total_h / batch_size
    row = 0
    for d, n in enumerate(sizes):
        for _ in range(n):
            y = total_h - (row + 1) * row_h
            ax.add_patch(Rectangle((0.2, y), 1.2, row_h, facecolor=colors[d % len(colors)], edgecolor=WHITE, alpha=0.6))
            row += 1
    ax.text(0.8, total_h + 0.25, f"batch\n{batch_size} rows (GPU 0)", ha="center", fontsize=8)
    # one lane per device: chunk -> replica -> output
    for d, n in enumerate(sizes):
        yc = total_h - (d + 0.5) * (total_h / len(sizes))
        start = total_h - (sum(sizes[:d]) + n / 2) * row_h
        arrow(1.45, start, 2.6, yc)
        box(2.6, yc - 0.3, 1.7, 0.6, f"chunk {d}\n{n} rows → GPU {d}", colors[d % len(colors)])
        arrow(4.3, yc, 4.8, yc)
        box(4.8, yc - 0.3, 1.9, 0.6, f"replica {d} of the model\n(copied each forward)", colors[d % len(colors)])
        arrow(6.7, yc, 7.2, yc)
        box(7.2, yc - 0.3, 1.2, 0.6, f"output {d}", colors[d % len(colors)])
        arrow(8.4, yc, 9.0, total_h / 2)
    box(9.0, total_h / 2 - 0.45, 0.9, 0.9, "gather\non GPU 0", LIGHT_GREY)
    ax.text(3.45, -0.45, "scatter", ha="center", fontsize=9, weight="bold")
    ax.text(5.75, -0.45, "replicate + parallel_apply", ha="center", fontsize=9, weight="bold")
    ax.text(8.6, -0.45, "gather", ha="center", fontsize=9, weight="bold")
    ax.set_title(title or f"How DataParallel splits a batch of {batch_size} over {n_devices} GPUs", fontsize=10)
    add_stamp(fig, "diagram: how torch.nn.DataParallel moves one batch (not a measurement)")
    chunks = ", ".join(f"{n} rows to GPU {d}" for d, n in enumerate(sizes))
    return set_alt(
        fig,
        f"Diagram of DataParallel: a batch of {batch_size} rows on GPU 0 is scattered in {len(sizes)} chunks "
        f"({chunks}); each GPU runs its own replica of the model, copied at every forward; the outputs are "
        "gathered back on GPU 0.",
    )
