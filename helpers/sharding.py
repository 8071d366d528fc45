"""Chapter 12's harness: the bytes training keeps per rank (for sizes no machine here holds), its widget, a plot.

Mixed precision (autocast, or FSDP2's `MixedPrecisionPolicy`) computes in 16 bits but keeps the parameters the
optimizer updates, their gradients and the optimizer's states in float32, so it changes none of the three counts;
it adds 16-bit copies of the weights while they are in use."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .plots import WHITE, add_stamp, colour, new_figure, set_alt

#: Tensors the optimizer keeps per parameter (each as big as the parameter).
OPTIMIZER_STATES = {"SGD": 0, "SGD with momentum": 1, "Adam": 2}
#: What the budget widget offers: the precision of the stored states, and bytes per 16-bit copy on top.
PRECISIONS = ("float32", "mixed (float16/bfloat16 compute)")
#: Bytes a number of the states takes under either precision: mixed precision keeps them float32.
STATE_BYTES = 4
#: Bytes of one 16-bit copy of a weight (float16 or bfloat16), made while the weight is in use.
LOW_PRECISION_BYTES = 2
STRATEGIES = ("DDP", "FSDP")
#: Memory of one NVIDIA T4 as torch reports it on Kaggle (16 GB on its datasheet, docs/sources.md §4).
T4_BYTES = 15_843_721_216
PARTS = ("parameters", "gradients", "optimizer states")


def bytes_per_rank(n_params: int, dtype_bytes: int, optimizer: str, world_size: int, strategy: str) -> dict[str, int]:
    """Bytes one rank keeps for parameters, gradients and optimizer states (activations not included).

    DDP keeps all three whole on every rank; FSDP about 1/world_size of each (it gathers full parameters
    only briefly, a block at a time). `ceil(n_params / world_size)` is exact only when dim 0 of every
    parameter divides by world_size, as FSDP2 pads each rank's rows (chapter 12, section 4). All is
    counted in the one dtype given (float32 under mixed precision); a wrong argument is refused."""
    if isinstance(n_params, bool) or not isinstance(n_params, int) or n_params < 0:
        raise ValueError(f"n_params must be a whole number ≥ 0, not {n_params!r}")
    if isinstance(dtype_bytes, bool) or not isinstance(dtype_bytes, int) or dtype_bytes < 1:
        raise ValueError(f"dtype_bytes must be bytes per number (4 for float32, 2 for bfloat16), not {dtype_bytes!r}")
    if isinstance(world_size, bool) or not isinstance(world_size, int) or world_size < 1:
        raise ValueError(f"world_size must be a whole number ≥ 1, not {world_size!r}")
    if optimizer not in OPTIMIZER_STATES:
        raise ValueError(f"optimizer must be one of {list(OPTIMIZER_STATES)}, not {optimizer!r}")
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be 'DDP' or 'FSDP', not {strategy!r}")
    per_rank = n_params if strategy == "DDP" else -(-n_params // world_size)  # integers: no float rounding
    one_copy = per_rank * dtype_bytes
    parts = {"parameters": one_copy, "gradients": one_copy, "optimizer states": OPTIMIZER_STATES[optimizer] * one_copy}
    return {**parts, "total": sum(parts.values())}


def describe_budget(n_params: int, precision: str, optimizer: str, world_size: int, strategy: str) -> str:
    """The widget's text: each part in GB, and whether it fits a T4 before any activations. Under DDP its
    buckets (a second copy of the gradients by default) and autocast's 16-bit copies of the whole model, kept from
    forward to backward, are counted; under FSDP only the gathered blocks have such copies, named but not counted
    (their size depends on how the model was wrapped)."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {list(PRECISIONS)}, not {precision!r}")
    parts = bytes_per_rank(n_params, STATE_BYTES, optimizer, world_size, strategy)
    lines = [f"{n_params / 1e9:.3g} billion parameters, {precision}, {optimizer}, {strategy} on {world_size} rank(s):"]
    lines += [f"  {name:<17} {parts[name] / 1e9:9.2f} GB per rank (float32)" for name in PARTS]
    total = parts["total"]
    if strategy == "DDP":  # its all-reduce buckets: a second copy of the gradients, unless they are views into them
        lines.append(
            f"  {'DDP buckets':<17} {parts['gradients'] / 1e9:9.2f} GB per rank (0 if gradient_as_bucket_view)"
        )
        total += parts["gradients"]
    if precision != "float32" and strategy == "DDP":
        copies = n_params * LOW_PRECISION_BYTES
        lines.append(f"  {'16-bit copies':<17} {copies / 1e9:9.2f} GB per rank (every weight, forward to backward)")
        total += copies
    elif precision != "float32":
        lines.append(f"  {'16-bit copies':<17} {'':>9}    2 bytes a parameter of the blocks gathered at the time")
    verdict = "fits" if total <= T4_BYTES else "does NOT fit"
    lines.append(f"  {'total':<17} {total / 1e9:9.2f} GB per rank: {verdict} in a T4's 15.8 GB (before activations)")
    return "\n".join(lines)


def budget_widget() -> Any:
    """An `ipywidgets.interactive` of model size, precision, optimizer, ranks and strategy; prints `describe_budget`."""
    import ipywidgets as widgets

    wide = {"description_width": "initial"}  # the whole description shows, never cut to "param…"
    size = widgets.FloatLogSlider(
        value=1e9, base=10, min=6, max=11, step=0.1, description="parameters", readout_format=".2g", style=wide
    )
    precision = widgets.Dropdown(options=list(PRECISIONS), value="float32", description="precision", style=wide)
    optimizer = widgets.Dropdown(options=list(OPTIMIZER_STATES), value="Adam", description="optimizer", style=wide)
    ranks = widgets.IntSlider(value=2, min=1, max=64, description="ranks", style=wide)
    strategy = widgets.ToggleButtons(options=list(STRATEGIES), value="FSDP", description="strategy", style=wide)

    def show(size: float, precision: str, optimizer: str, ranks: int, strategy: str) -> None:
        print(describe_budget(int(size), precision, optimizer, ranks, strategy))

    return widgets.interactive(
        show, size=size, precision=precision, optimizer=optimizer, ranks=ranks, strategy=strategy
    )


def plot_per_rank(measured: Mapping[str, Mapping[str, float]], stamp_text: str) -> Any:
    """A figure of stacked bars, one per strategy: `measured` maps it to its bytes per rank of each of `PARTS`."""
    fig, ax = new_figure(6.5, 3.6)
    names = list(measured)
    bottom = [0.0] * len(names)
    for i, (part, hatch) in enumerate(zip(PARTS, ("", "//", ".."), strict=True)):
        heights = [measured[n][part] / 1e3 for n in names]
        ax.bar(names, heights, bottom=bottom, label=part, color=colour(i), hatch=hatch, edgecolor=WHITE)
        bottom = [b + h for b, h in zip(bottom, heights, strict=True)]
    for x, total in enumerate(bottom):
        ax.text(x, total, f"{total:,.0f} kB", ha="center", va="bottom")
    ax.margins(y=0.12)  # room above the tallest bar for its total
    ax.set_ylabel("memory held by one rank (kB, measured)")
    ax.set_xlabel("strategy (bar label: total)")
    ax.set_title("Training memory per rank, excluding activations", fontsize=10)
    ax.legend(fontsize=8)
    add_stamp(fig, stamp_text)
    bars = "; ".join(
        f"{name} {total:,.0f} kB (" + ", ".join(f"{part} {measured[name][part] / 1e3:,.0f}" for part in PARTS) + ")"
        for name, total in zip(names, bottom, strict=True)
    )
    return set_alt(fig, f"Stacked bar chart of the training memory one rank holds, measured: {bars}.")
