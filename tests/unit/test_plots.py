"""helpers.plots and every plotting helper: alt text from the data, titles and units, the palette, labels inside.

Each plotting helper is called with small synthetic data (Agg backend, no GPU), shown through
`helpers.plots.bundle`, and checked the way a reader meets it: an `<img>` with alt text that names a
measured number, a title, labelled axes with a unit, only the course's colour-blind-safe colours,
and no text past the figure's edge or out of its plot's frame.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable
from typing import Any

import matplotlib
import pytest

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.colors import to_hex  # noqa: E402

from helpers import plots  # noqa: E402

MIB = 2**20


def texts_outside(fig: Any) -> list[str]:
    """Texts that run past the figure's edge, or out of their plot's frame (labels written on a plot).

    Draws the figure once with its renderer and checks what was drawn: each plot with its tick
    labels, axis labels, title and legend, the figure's own texts (stamp, suptitle), and every
    text written on a plot against that plot's frame (a label clipped at the frame is cut off, so
    it counts as outside). An empty list means every label is inside.
    """
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()

    def inside(box: Any, frame: Any) -> bool:
        return frame.x0 - 1 <= box.x0 and box.x1 <= frame.x1 + 1 and frame.y0 - 1 <= box.y0 and box.y1 <= frame.y1 + 1

    def shown(text: Any) -> bool:
        return text is not None and text.get_visible() and bool(text.get_text().strip())

    figure_texts = [*fig.texts, fig._suptitle, fig._supxlabel, fig._supylabel]
    problems = [
        f"{t.get_text()!r} runs past the figure's edge"
        for t in figure_texts
        if shown(t) and not inside(t.get_window_extent(renderer), fig.bbox)
    ]
    for ax in fig.axes:
        name = ax.get_title() or ax.get_title(loc="left") or "a plot"
        if ax.get_visible() and not inside(ax.get_tightbbox(renderer), fig.bbox):
            problems.append(f"the labels of {name!r} run past the figure's edge")
        problems += [
            f"{t.get_text()!r} runs out of the frame of {name!r}"
            for t in ax.texts
            if shown(t) and not inside(t.get_window_extent(renderer), ax.bbox)
        ]
    return problems


def _copies() -> Any:
    from helpers.copies import PUBLISHED_T4, CopyTiming, plot_bandwidth

    rs = [
        CopyTiming(n, 1, n / (gb * 1e9), "cuda:0", 3, "test stamp", d, p, nb)
        for n, gb in ((4096, 0.52), (64 * MIB, 11.2))
        for d in ("h2d", "d2h")
        for p in (True, False)
        for nb in (True, False)
    ]
    return plot_bandwidth(rs, 15.75, reference=PUBLISHED_T4)


def _copies_published_only() -> Any:
    from helpers.copies import PUBLISHED_T4, plot_bandwidth

    return plot_bandwidth([], 15.75, reference=PUBLISHED_T4, stamp="published figures, docs/sources.md §4")


def _throughput() -> Any:
    from helpers.plots import plot_throughput

    return plot_throughput(["1 process", "DDP, 2 ranks"], [1234.0, 2210.0], "a workload", "test stamp")


def _batch_flow() -> Any:
    from helpers.plots import draw_batch_flow

    return draw_batch_flow(10, 2)


def _roofline() -> Any:
    from helpers import roofline
    from helpers.gpu_specs import by_short_name

    points = [
        {"what": "vector add", "dtype": "float32", "flops": 1e6, "bytes": 12e6, "seconds": 1e-3},
        {"what": "matmul 512×512×512", "dtype": "float32", "flops": 2.7e8, "bytes": 3.1e6, "seconds": 2e-3},
        {"what": "conv2d 3×3", "dtype": "float32", "flops": 3e8, "bytes": 1e6, "seconds": 3e-3},
    ]
    return roofline.plot_roofline(points, 20.0, {"float32": 0.15}, "test stamp", by_short_name("T4"))


def _price() -> Any:
    from helpers import roofline

    return roofline.plot_price_performance()


def _power() -> Any:
    from helpers import roofline

    return roofline.plot_performance_per_watt()


def _per_rank() -> Any:
    from helpers.sharding import PARTS, plot_per_rank

    measured = {"DDP": dict.fromkeys(PARTS, 4000.0), "FSDP": dict.fromkeys(PARTS, 2000.0)}
    return plot_per_rank(measured, "test stamp")


def _timelines() -> Any:
    from helpers import timelines
    from tests.unit.test_timelines import on_simulated_gpu

    panels = {
        o: on_simulated_gpu(4, 10.0, 10.0, overlap=o == "overlapped", launch_ms=0.05) for o in ("serial", "overlapped")
    }
    fig = timelines.plot_timelines(panels, title="a test", simulated=True)
    plots.add_stamp(fig, "SIMULATION by helpers.standins.simulated_cuda · test stamp")
    return fig


def _pieces() -> Any:
    from helpers.copies import CopyTiming, plot_bandwidth

    total = 4 * MIB
    return plot_bandwidth(
        [CopyTiming(total // n, n, 1e-3 * (1 + n / 64), "cpu", 3, "test stamp") for n in (1, 16, 256)]
    )


PLOTTERS: dict[str, Callable[[], Any]] = {
    "copy bandwidth": _copies,
    "copy bandwidth, published only": _copies_published_only,
    "throughput": _throughput,
    "DataParallel diagram": _batch_flow,
    "roofline": _roofline,
    "price/performance": _price,
    "performance per watt": _power,
    "per-rank memory": _per_rank,
    "timelines": _timelines,
    "copy bandwidth, one copy or many": _pieces,
}

UNIT = re.compile(r"\([^)]*\)|\b(ms|µs|s|GB/s|MiB|kB|bytes|TFLOP/s|W)\b")
ALLOWED = {to_hex(c) for c in (*plots.PALETTE, plots.GREY, plots.LIGHT_GREY, plots.WHITE)}


def _colours(fig: Any) -> set[str]:
    """Every face and edge colour of the figure's lines, patches and collections (transparent ones left out)."""
    found: set[str] = set()
    for ax in fig.axes:
        for line in ax.lines:
            found.add(to_hex(line.get_color()))
            found.add(to_hex(line.get_markerfacecolor()))
        for patch in ax.patches:
            if patch.get_fill():
                found.add(to_hex(patch.get_facecolor()))
        for collection in ax.collections:
            for rgba in (*collection.get_facecolors(), *collection.get_edgecolors()):
                if rgba[3] > 0:
                    found.add(to_hex(rgba))
    return found


@pytest.fixture(scope="module", params=list(PLOTTERS), ids=list(PLOTTERS))
def figure(request: pytest.FixtureRequest) -> Any:  # one figure per helper, shared by the checks below
    fig = PLOTTERS[request.param]()
    yield fig
    plt.close(fig)


def test_the_bundle_has_alt_text_with_a_number(figure: Any) -> None:
    data = plots.bundle(figure)
    alt = data["text/plain"]
    assert re.search(r"\d", alt), f"alt text should carry the plotted numbers: {alt!r}"
    assert data["text/html"].startswith('<img alt="') and "data:image/png;base64," in data["text/html"]
    assert base64.b64decode(data["image/png"])[:8] == b"\x89PNG\r\n\x1a\n"


def test_title_axis_labels_units_and_stamp(figure: Any) -> None:
    suptitle = figure._suptitle.get_text() if figure._suptitle else ""
    supy = figure._supylabel.get_text() if figure._supylabel else ""
    assert suptitle or any(ax.get_title() or ax.get_title("left") for ax in figure.axes)
    labels = []
    for ax in figure.axes:
        if not ax.axison:
            continue
        assert ax.get_ylabel() or supy, f"axes {ax.get_title(loc='left')!r} has no y label"
        labels += [ax.get_xlabel(), ax.get_ylabel()]
    if labels:
        assert any(ax.get_xlabel() for ax in figure.axes), "no x label"
        assert any(UNIT.search(label) for label in labels if label), f"no unit in {labels}"
    assert any(t.get_gid() == "stamp" and t.get_text() for t in figure.texts), "unstamped"


def test_only_palette_colours(figure: Any) -> None:
    assert _colours(figure) <= ALLOWED, f"colours outside helpers.plots' palette: {_colours(figure) - ALLOWED}"


def test_every_label_is_inside(figure: Any) -> None:
    assert texts_outside(figure) == []


def test_show_displays_one_bundle_and_closes(monkeypatch: pytest.MonkeyPatch) -> None:
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda *a, **k: shown.append((a, k)))
    fig, ax = plots.new_figure(3, 2)
    ax.plot([1, 2], [3, 4])
    plots.show(fig, 'speeds: 1 < 2 & "3"')
    ((data,), kwargs) = shown[0]
    assert kwargs == {"raw": True} and len(shown) == 1
    assert 'alt="speeds: 1 &lt; 2 &amp; &quot;3&quot;"' in data["text/html"]
    assert not plt.fignum_exists(fig.number), "closed, so the inline backend does not draw it twice"
    fig2, _ = plots.new_figure(3, 2)
    with pytest.raises(ValueError, match="needs alt text"):
        plots.show(fig2)
    assert not plt.fignum_exists(fig2.number)


def test_show_closes_the_figure_even_when_it_cannot_display_it(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(fig: object, alt: object) -> dict[str, str]:
        raise RuntimeError("cannot draw")

    monkeypatch.setattr(plots, "bundle", fail)
    fig, _ = plots.new_figure(3, 2)
    with pytest.raises(RuntimeError, match="cannot draw"):
        plots.show(fig, "a plot")
    assert not plt.fignum_exists(fig.number)


def test_a_long_stamp_wraps_inside_the_figure() -> None:
    fig, ax = plots.new_figure(4, 3)
    ax.plot([1, 2], [3, 4])
    ax.set_xlabel("x (s)")
    plots.add_stamp(fig, "measured on a machine with a rather long name " * 6)
    plots.add_stamp(fig, "a second line")
    try:
        assert texts_outside(fig) == []
    finally:
        plt.close(fig)


def test_labels_near_the_edge_move_inside() -> None:
    fig, ax = plots.new_figure(6, 3)
    ax.plot([1, 10], [1, 10])
    ax.annotate("the label of the last point", (10, 10), xytext=(6, 6), textcoords="offset points")
    try:
        assert texts_outside(fig), "the test needs a label that starts outside"
        plots.keep_labels_inside(ax)
        assert texts_outside(fig) == []
    finally:
        plt.close(fig)


def test_text_colour_reads_on_the_palette() -> None:
    assert plots.text_colour_on(plots.OKABE_ITO["blue"]) == plots.WHITE
    assert plots.text_colour_on(plots.OKABE_ITO["yellow"]) == plots.OKABE_ITO["black"]
    assert [plots.colour(i) for i in (0, 8)] == [plots.PALETTE[0]] * 2


def test_the_timeline_title_and_the_printed_time_are_one_value() -> None:
    from helpers import timelines
    from tests.unit.test_timelines import on_simulated_gpu

    # 8 chunks, copy 5 ms and compute 6 ms each, 0.1 ms of the host's time per call
    panels = {
        o: on_simulated_gpu(8, 5.0, 6.0, overlap=o == "overlapped", launch_ms=0.1) for o in ("serial", "overlapped")
    }
    serial_ms = 0.1 + 8 * (5.0 + 6.0)  # the first copy is the first call, then the work back to back
    overlapped_ms = 0.3 + 5.0 + 8 * 6.0  # two waits, the first copy, then the compute lane sets the pace
    printed = [timelines.elapsed_ms(spans) for spans in panels.values()]  # what the chapter prints
    assert printed == pytest.approx([serial_ms, overlapped_ms])
    fig = timelines.plot_timelines(panels, title="t", simulated=True)
    try:
        titles = [ax.get_title(loc="left") for ax in fig.axes]
        assert titles == [f"serial: {serial_ms:.3g} ms", f"overlapped: {overlapped_ms:.3g} ms"]
    finally:
        plt.close(fig)


def test_a_title_longer_than_the_figure_is_wrapped_inside_it():
    from helpers import plots

    fig, ax = plots.new_figure(5, 3)
    ax.plot([1, 2], [3, 4])
    ax.set_title("the 2×2 on CPU STAND-IN: host→host copies, no PCIe link crossed; ▲ published T4 figures, not here")
    ax.set_xlabel("x (s)")
    ax.set_ylabel("y (m)")
    assert texts_outside(fig), "the title should run past the figure before it is wrapped"
    plots.bundle(fig, "a line from 3 to 4 m")
    assert "\n" in ax.get_title()
    assert texts_outside(fig) == []
