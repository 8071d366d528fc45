"""Plot helpers: one colour-blind-safe style, the stamp, figures shown with alt text, and chapter 08's figures.

A plot is drawn with `new_figure`, coloured from `PALETTE`, stamped with `add_stamp` (where its numbers
come from), and shown with `show(fig, alt)`: one display bundle whose HTML is an ``<img alt="…">``, so a
screen reader, the course site and nbconvert's HTML all carry a description built from the plotted numbers."""

from __future__ import annotations

import base64
import html
import io
import textwrap
from collections.abc import Sequence
from typing import Any

#: The Okabe–Ito palette, eight colours told apart by the common kinds of colour blindness:
#: M. Okabe and K. Ito, "Color Universal Design (CUD): how to make figures and presentations that
#: are friendly to colorblind people" (2008), https://jfly.uni-koeln.de/color/ . Ordered for series:
#: the first colours differ most in lightness too, so even a grey print keeps them apart.
OKABE_ITO = {
    "blue": "#0072B2",
    "orange": "#E69F00",
    "bluish green": "#009E73",
    "vermillion": "#D55E00",
    "reddish purple": "#CC79A7",
    "sky blue": "#56B4E9",
    "yellow": "#F0E442",
    "black": "#000000",
}
#: Series colours, in order: series i gets `PALETTE[i % len(PALETTE)]`.
PALETTE: tuple[str, ...] = tuple(OKABE_ITO.values())
#: Neutral greys for reference lines, frames and de-emphasised series (not series colours).
GREY, LIGHT_GREY, WHITE = "#595959", "#BFBFBF", "#FFFFFF"


def colour(i: int) -> str:
    """The palette colour of series `i` (it wraps around after eight)."""
    return PALETTE[i % len(PALETTE)]


def text_colour_on(background: str) -> str:
    """Black or white, whichever reads better on `background` (relative luminance, WCAG 2)."""
    from matplotlib.colors import to_rgb

    r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in to_rgb(background))  # linear RGB
    luminance = 0.2126 * r + 0.7152 * g + 0.0722 * b
    return OKABE_ITO["black"] if (luminance + 0.05) / 0.05 >= 1.05 / (luminance + 0.05) else WHITE


def new_figure(width: float = 7.0, height: float = 4.0) -> tuple[Any, Any]:
    """A fresh (figure, axes) pair sized for a notebook page, laid out so labels stay inside it; series take the
    palette's colours in turn, each with the next of four line styles, so two lines differ in more than hue."""
    import matplotlib.pyplot as plt
    from cycler import cycler

    fig, ax = plt.subplots(figsize=(width, height), layout="constrained")
    styles = [("-", "--", "-.", ":")[i % 4] for i in range(len(PALETTE))]
    ax.set_prop_cycle(cycler(color=list(PALETTE)) + cycler(linestyle=styles))
    return fig, ax


_STAMP_FONTSIZE = 7


def add_stamp(fig: Any, text: str) -> None:
    """Write where a figure's numbers come from (`helpers.environment.stamp()` or a cited source) under it,
    wrapped to the figure's width, with room kept in the layout; calling it again adds another line."""
    width_in, height_in = fig.get_size_inches()
    chars = max(20, int(width_in * 72 / (_STAMP_FONTSIZE * 0.56)))
    lines = [wrapped for line in text.splitlines() for wrapped in textwrap.wrap(line, chars) or [""]]
    stamps = [t for t in fig.texts if t.get_gid() == "stamp"]
    for t in stamps:  # earlier stamps move up to make room
        t.set_y(t.get_position()[1] + len(lines) * _STAMP_FONTSIZE * 1.3 / 72 / height_in)
    fig.text(0.01, 0.005, "\n".join(lines), fontsize=_STAMP_FONTSIZE, color=GREY, ha="left", va="bottom", gid="stamp")
    total_lines = len(lines) + sum(t.get_text().count("\n") + 1 for t in stamps)
    bottom = min(0.4, (total_lines * _STAMP_FONTSIZE * 1.3 + 4) / 72 / height_in)
    engine = fig.get_layout_engine()
    if engine is not None and hasattr(engine, "set") and "rect" in engine.get():
        engine.set(rect=(0, bottom, 1, 1 - bottom))
    else:
        fig.subplots_adjust(bottom=max(fig.subplotpars.bottom, bottom + 0.08))


def set_alt(fig: Any, alt: str) -> Any:
    """Attach the alt text a plotting helper built from its data; `show(fig)` uses it. Returns `fig`."""
    fig.alt_text = alt.strip()
    return fig


def alt_of(fig: Any) -> str | None:
    """The alt text attached with `set_alt`, or None."""
    return getattr(fig, "alt_text", None)


def bundle(fig: Any, alt: str | None = None) -> dict[str, str]:
    """The figure as one display bundle: HTML `<img alt>` (PNG inside), the PNG, and the alt as plain text;
    `alt` defaults to what the plotting helper attached (`set_alt`), and one of the two is required."""
    alt = alt if alt is not None else alt_of(fig)
    if not isinstance(alt, str) or not alt.strip():  # a learner showing a figure of their own
        raise ValueError(
            "show(fig, alt) needs alt text: a sentence saying what the plot shows and its key numbers, "
            "e.g. 'Copy bandwidth vs size: pinned reaches 11.2 GB/s at 64 MiB'"
        )
    alt = " ".join(alt.split())
    wrap_long_titles(fig)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100, facecolor=WHITE)
    png = base64.b64encode(buffer.getvalue()).decode("ascii")
    width, height = (round(v * 100) for v in fig.get_size_inches())
    img = (
        f'<img alt="{html.escape(alt, quote=True)}" width="{width}" height="{height}" '
        f'style="max-width: 100%; height: auto" src="data:image/png;base64,{png}">'
    )
    return {"text/html": img, "image/png": png, "text/plain": alt}


def show(fig: Any, alt: str | None = None) -> None:
    """Display `fig` once, with alt text, and close it (so the inline backend does not show it again)."""
    import matplotlib.pyplot as plt
    from IPython.display import display

    try:
        data = bundle(fig, alt)
    finally:
        plt.close(fig)
    display(data, raw=True)


def number(value: float) -> str:
    """A measured number for alt text: three significant figures, whole thousands with commas (1,234, not 1.23e+03)."""
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"


def wrap_long_titles(fig: Any) -> None:
    """Break each axes title wider than its axes onto as many lines as it needs (titles built from a run vary)."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        text, room = ax.title.get_text(), ax.bbox.width
        per_line = len(text)
        while text and per_line > 20 and ax.title.get_window_extent(renderer).width > room:
            per_line = int(per_line * 0.9)  # narrower lines until the widest fits: glyph widths vary
            ax.title.set_text("\n".join(textwrap.wrap(text, per_line)))


def keep_labels_inside(ax: Any) -> None:
    """Move annotations (`ax.annotate` with an offset) that run out of the frame to another side of their point:
    right of it, left of it or centred on it, above and then below, whichever fits first."""
    from matplotlib.text import Annotation

    fig = ax.figure
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    frame = ax.bbox

    def fits(text: Any) -> bool:
        box = text.get_window_extent(renderer)
        return frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1

    for text in (t for t in ax.texts if isinstance(t, Annotation) and not fits(t)):
        dx, dy = (abs(v) for v in text.xyann)
        dy = dy or 4
        for (ha, sx), sy in ((h, s) for s in (1, -1) for h in (("left", 1), ("right", -1), ("center", 0))):
            text.xyann = (dx * sx, dy * sy)
            text.set_horizontalalignment(ha)
            text.set_verticalalignment("bottom" if sy > 0 else "top")
            if fits(text):
                break


def plot_throughput(labels: Sequence[str], samples_per_second: Sequence[float], title: str, stamp_text: str) -> Any:
    """Bar chart of samples per second (chapter 08), each bar labelled with its speed-up over the first."""
    fig, ax = new_figure(7.5, 3.8)
    base = samples_per_second[0]
    bars = ax.bar(list(labels), list(samples_per_second), color=[colour(i) for i in range(len(labels))])
    for bar, rate in zip(bars, samples_per_second, strict=True):
        ax.text(bar.get_x() + bar.get_width() / 2, bar.get_height(), f"{rate / base:.2f}×", ha="center", va="bottom")
    ax.margins(y=0.12)  # room above the tallest bar for its label
    ax.set(xlabel="how it ran (bar label: speed-up over the first)", ylabel="throughput (training samples/s)")
    ax.tick_params(axis="x", labelsize=8)
    ax.set_title(title, fontsize=10)
    add_stamp(fig, stamp_text)
    bars_alt = "; ".join(
        f"{label}: {number(rate)} samples/s ({rate / base:.2f}×)"
        for label, rate in zip(labels, samples_per_second, strict=True)
    )
    return set_alt(fig, f"Bar chart of training throughput, {title}: {bars_alt}.")


def draw_batch_flow(batch_size: int = 8, n_devices: int = 2, title: str | None = None) -> Any:
    """A diagram of how one batch flows through `nn.DataParallel` (chapter 08): the `scatter`, `replicate`,
    `parallel_apply` and `gather` steps of `torch.nn.parallel`."""
    import torch
    from matplotlib.patches import FancyArrowPatch, Rectangle

    sizes = [c.numel() for c in torch.chunk(torch.arange(batch_size), n_devices)]
    fig, ax = new_figure(8, 1.2 + 1.1 * len(sizes))
    total_h = 1.0 * len(sizes)
    ax.set(xlim=(0, 10), ylim=(-0.6, total_h + 0.6))
    ax.axis("off")

    def box(x, y, w, h, text, color):
        ax.add_patch(Rectangle((x, y), w, h, facecolor=color, edgecolor=GREY, alpha=0.25))
        ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=8)

    def arrow(x0, y0, x1, y1):
        ax.add_patch(FancyArrowPatch((x0, y0), (x1, y1), arrowstyle="-|>", mutation_scale=10, color=GREY))

    row_h = total_h / batch_size  # the batch, rows coloured by the device they go to
    gpu_of_row = [d for d, n in enumerate(sizes) for _ in range(n)]
    for row, d in enumerate(gpu_of_row):
        y = total_h - (row + 1) * row_h
        ax.add_patch(Rectangle((0.2, y), 1.2, row_h, facecolor=colour(d), edgecolor=WHITE, alpha=0.6))
    ax.text(0.8, total_h + 0.25, f"batch\n{batch_size} rows (GPU 0)", ha="center", fontsize=8)
    for d, n in enumerate(sizes):  # one lane per device: chunk -> replica -> output
        yc = total_h - (d + 0.5) * (total_h / len(sizes))
        start = total_h - (sum(sizes[:d]) + n / 2) * row_h
        arrow(1.45, start, 2.6, yc)
        box(2.6, yc - 0.3, 1.7, 0.6, f"chunk {d}\n{n} rows → GPU {d}", colour(d))
        arrow(4.3, yc, 4.8, yc)
        box(4.8, yc - 0.3, 1.9, 0.6, f"replica {d} of the model\n(copied each forward)", colour(d))
        arrow(6.7, yc, 7.2, yc)
        box(7.2, yc - 0.3, 1.2, 0.6, f"output {d}", colour(d))
        arrow(8.4, yc, 9.0, total_h / 2)
    box(9.0, total_h / 2 - 0.45, 0.9, 0.9, "gather\non GPU 0", LIGHT_GREY)
    for x, step in ((3.45, "scatter"), (5.75, "replicate + parallel_apply"), (8.6, "gather")):
        ax.text(x, -0.45, step, ha="center", fontsize=9, weight="bold")
    ax.set_title(title or f"How DataParallel splits a batch of {batch_size} over {n_devices} GPUs", fontsize=10)
    add_stamp(fig, "diagram: how torch.nn.DataParallel moves one batch (not a measurement)")
    chunks = ", ".join(f"{n} rows to GPU {d}" for d, n in enumerate(sizes))
    return set_alt(
        fig,
        f"Diagram of DataParallel: a batch of {batch_size} rows on GPU 0 is scattered in {len(sizes)} chunks "
        f"({chunks}); each GPU runs its own replica of the model, copied at every forward; the outputs are "
        "gathered back on GPU 0.",
    )
