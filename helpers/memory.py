"""GPU memory: the real CUDA counters, tensor sizes, and a small model of the caching allocator.

Three parts, for chapter 05:

* **Readers of the real counters** (`memory_counters`, `reset_peaks`, `free_and_total`,
  `allocator_stats`). They return plain numbers and need a CUDA GPU: on a machine without one
  they raise `NeedsCudaError` instead of returning the zeros that torch's CPU-only build gives.
* **Sizes before allocating** (`tensor_nbytes`, `format_bytes`): numel × element size.
* **`CachingAllocatorModel`**, a MODEL of PyTorch's CUDA caching allocator for machines without a
  GPU. It follows the rules in PyTorch's `c10/cuda/CUDACachingAllocator.cpp` (the "Memory
  management" section of the "CUDA semantics" docs describes the behaviour): requests are
  rounded up to multiples of 512 bytes; requests of at most 1 MiB come from 2 MiB segments,
  requests under 10 MiB from 20 MiB segments, larger ones from a segment of their own size rounded
  up to 2 MiB; freed blocks stay cached for reuse; `empty_cache` returns wholly free segments.
  It is a teaching model, not the allocator: see the class docstring for what it leaves out.

`AllocatorPlayground` drives either the real counters (on a GPU) or the model (elsewhere) with
the same calls, and `allocator_widget` puts buttons on it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from .devices import HOW_TO_GET_A_GPU, a_device

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB

#: The caching allocator's constants (c10/cuda/CUDACachingAllocator.cpp, PyTorch 2.x).
MIN_BLOCK_SIZE = 512  # every request is rounded up to a multiple of 512 bytes
SMALL_SIZE = 1 * MIB  # the largest "small" request
SMALL_BUFFER = 2 * MIB  # small requests are packed into 2 MiB segments
MIN_LARGE_ALLOC = 10 * MIB  # requests between 1 and 10 MiB may share a 20 MiB segment
LARGE_BUFFER = 20 * MIB
ROUND_LARGE = 2 * MIB  # segments for requests of 10 MiB or more are rounded up to 2 MiB

#: The `memory_stats()` keys chapter 05 prints (the dictionary has about 80).
STAT_KEYS = (
    "allocated_bytes.all.current",
    "allocated_bytes.all.peak",
    "reserved_bytes.all.current",
    "reserved_bytes.all.peak",
    "active_bytes.all.current",
    "segment.all.current",
    "num_alloc_retries",
    "num_ooms",
)


class NeedsCudaError(RuntimeError):
    """Raised by a helper that reads or drives a CUDA GPU when this machine has none."""


def cuda_device_for(device: torch.device | str | int | None, what: str) -> torch.device:
    """The CUDA device to use (the current one for None or 'cuda'), or a clear error when this machine has none."""
    if not torch.cuda.is_available():
        raise NeedsCudaError(f"{what} needs a CUDA GPU, and this machine has none. {HOW_TO_GET_A_GPU}")
    if device is None:
        return torch.device("cuda", torch.cuda.current_device())
    device = torch.device("cuda", device) if isinstance(device, int) else a_device(device)
    if device.type == "cuda" and device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    return device


# --------------------------------------------------------------------------- the real counters


@dataclass(frozen=True)
class MemoryCounters:
    """The caching allocator's four counters for one device, in bytes.

    `allocated` is what live tensors occupy (their blocks, rounded); `reserved` is what the
    allocator holds from the driver (allocated + cached free blocks). `max_*` are the peaks since
    the process started or since `reset_peaks`.
    """

    allocated: int
    reserved: int
    max_allocated: int
    max_reserved: int
    device: str

    @property
    def cached_free(self) -> int:
        """Bytes the allocator holds but no tensor uses: what `empty_cache` could give back (at most)."""
        return self.reserved - self.allocated

    def __str__(self) -> str:
        return (
            f"{self.device}: allocated {format_bytes(self.allocated)} (peak {format_bytes(self.max_allocated)}), "
            f"reserved {format_bytes(self.reserved)} (peak {format_bytes(self.max_reserved)})"
        )


def memory_counters(device: torch.device | str | int | None = None) -> MemoryCounters:
    """Read `memory_allocated`, `memory_reserved` and their peaks for a CUDA device."""
    device = cuda_device_for(device, "memory_counters")
    return MemoryCounters(
        allocated=torch.cuda.memory_allocated(device),
        reserved=torch.cuda.memory_reserved(device),
        max_allocated=torch.cuda.max_memory_allocated(device),
        max_reserved=torch.cuda.max_memory_reserved(device),
        device=str(device),
    )


def reset_peaks(device: torch.device | str | int | None = None) -> None:
    """Set the peaks (`max_memory_allocated`, `max_memory_reserved`) back to the current values."""
    torch.cuda.reset_peak_memory_stats(cuda_device_for(device, "reset_peaks"))


def free_and_total(device: torch.device | str | int | None = None) -> tuple[int, int]:
    """The driver's view (`torch.cuda.mem_get_info`): bytes free on the GPU and its total, for all processes."""
    free, total = torch.cuda.mem_get_info(cuda_device_for(device, "free_and_total"))
    return int(free), int(total)


def allocator_stats(device: torch.device | str | int | None = None, keys: Sequence[str] = STAT_KEYS) -> dict[str, int]:
    """Chosen entries of `torch.cuda.memory_stats` as a plain dict (0 for a key the allocator has not set yet)."""
    stats = torch.cuda.memory_stats(cuda_device_for(device, "allocator_stats"))
    return {key: int(stats.get(key, 0)) for key in keys}


# --------------------------------------------------------------------------- sizes


def tensor_nbytes(shape: int | Sequence[int] | torch.Size, dtype: torch.dtype) -> int:
    """Bytes a dense tensor of `shape` and `dtype` needs: numel × element size (what `Tensor.nbytes` says).

    Compute it before you allocate: a (64, 3, 224, 224) float32 batch is 38.5 MB whatever the device.
    """
    dims = (shape,) if isinstance(shape, int) else shape  # one number: a 1-D tensor
    return math.prod(dims) * dtype.itemsize


def format_bytes(n: int | float) -> str:
    """Bytes in binary units, as the allocator counts them: 512 B, 2.0 MiB, 14.7 GiB."""
    sign = "-" if n < 0 else ""
    n = abs(n)
    for unit, scale in (("GiB", GIB), ("MiB", MIB), ("KiB", KIB)):
        if n >= scale:
            return f"{sign}{n / scale:.1f} {unit}"
    return f"{sign}{int(n)} B"


# --------------------------------------------------------------------------- the allocator model


def round_size(nbytes: int) -> int:
    """The block size the allocator gives a request: at least 512 bytes, rounded up to a multiple of 512."""
    _check_request(nbytes)
    return max(MIN_BLOCK_SIZE, -(-nbytes // MIN_BLOCK_SIZE) * MIN_BLOCK_SIZE)


def segment_size(rounded: int) -> int:
    """How much the allocator asks the driver for (cudaMalloc) when no cached block fits `rounded` bytes."""
    _check_request(rounded)
    if rounded <= SMALL_SIZE:
        return SMALL_BUFFER
    if rounded < MIN_LARGE_ALLOC:
        return LARGE_BUFFER
    return -(-rounded // ROUND_LARGE) * ROUND_LARGE


def _check_request(nbytes: Any) -> None:
    """Refuse a request that is not a whole number of bytes from 1.

    A learner types sizes into the playground; the model would otherwise give a request of 0,
    a negative or a fractional size a block as if it were real.
    """
    if isinstance(nbytes, bool) or not isinstance(nbytes, int):
        raise TypeError(f"a request is a whole number of bytes, not {nbytes!r} ({type(nbytes).__name__})")
    if nbytes <= 0:
        raise ValueError(f"a request must ask for at least one byte, not {nbytes} (empty tensors take no block)")


class ModelOutOfMemoryError(torch.OutOfMemoryError, MemoryError):
    """The model's stand-in for `torch.cuda.OutOfMemoryError`: `except torch.OutOfMemoryError` catches both."""


@dataclass
class Block:
    """A piece of a segment: free, or holding one tensor (`handle`)."""

    offset: int
    size: int
    handle: int | None = None


@dataclass
class Segment:
    """One region the allocator got from the driver (one cudaMalloc), cut into blocks."""

    number: int
    size: int
    small: bool
    blocks: list[Block] = field(default_factory=list)

    @property
    def unused(self) -> bool:
        """True when the whole segment is one free block, so `empty_cache` can return it."""
        return len(self.blocks) == 1 and self.blocks[0].handle is None


class CachingAllocatorModel:
    """A MODEL of PyTorch's CUDA caching allocator, small enough to read, for machines without a GPU.

    What it does as the real allocator does (c10/cuda/CUDACachingAllocator.cpp):

    * rounds every request up to a multiple of 512 bytes (`round_size`);
    * keeps two pools: requests of at most 1 MiB ("small") and larger ones, never mixed;
    * looks for the smallest cached free block of the right pool that fits (best fit), and splits
      it when the rest is worth keeping (≥ 512 bytes in the small pool, > 1 MiB in the large one);
      an unsplit block is counted whole in `allocated`, as the real counter does;
    * otherwise asks the "driver" for a new segment of `segment_size(rounded)` bytes;
    * on `free`, keeps the block cached and merges it with free neighbours in its segment;
    * when a new segment would exceed `capacity`, first returns all unused cached segments, then
      raises `ModelOutOfMemoryError`, as the real allocator frees its cache and retries once;
    * `empty_cache` returns every segment that is wholly free; blocks in use stay put.

    What it leaves out: streams (a real block is reused only on the stream it was freed on, or
    after `record_stream` events complete), the options of `PYTORCH_ALLOC_CONF` (formerly `PYTORCH_CUDA_ALLOC_CONF`)
    (`max_split_size_mb`, `roundup_power2_divisions`, `expandable_segments`, garbage collection
    thresholds), CUDA graphs' private pools, the CUDA context (which the driver counts but the allocator does
    not), cuBLAS workspaces (which the real allocator does hold, from the first matrix product on),
    and fragmentation of the device's address space
    (the model's "driver" only checks the total against `capacity`).
    """

    def __init__(self, capacity: int | None = None) -> None:
        if capacity is not None:
            _check_request(capacity)
        self.capacity = capacity
        self.segments: list[Segment] = []
        self.max_allocated = 0
        self.max_reserved = 0
        self.num_ooms = 0
        self._next_handle = 1
        self._next_segment = 1

    # counters, named as torch names them
    @property
    def allocated(self) -> int:
        """Bytes in blocks that hold a tensor (the model's `memory_allocated`)."""
        return sum(b.size for s in self.segments for b in s.blocks if b.handle is not None)

    @property
    def reserved(self) -> int:
        """Bytes in all segments (the model's `memory_reserved`)."""
        return sum(s.size for s in self.segments)

    def counters(self) -> MemoryCounters:
        """The four counters in the same record the real reader returns."""
        return MemoryCounters(self.allocated, self.reserved, self.max_allocated, self.max_reserved, "model")

    def reset_peaks(self) -> None:
        """Peaks back to the current values, like `torch.cuda.reset_peak_memory_stats`."""
        self.max_allocated = self.allocated
        self.max_reserved = self.reserved

    def _note_peaks(self) -> None:
        self.max_allocated = max(self.max_allocated, self.allocated)
        self.max_reserved = max(self.max_reserved, self.reserved)

    def malloc(self, nbytes: int) -> int:
        """Serve a request of `nbytes`; return a handle to pass to `free`."""
        rounded = round_size(nbytes)
        small = rounded <= SMALL_SIZE
        found = self._best_fit(rounded, small)
        if found is None:
            found = self._new_segment(segment_size(rounded), small, nbytes)
        segment, index = found
        block = segment.blocks[index]
        rest = block.size - rounded
        worth_splitting = rest >= MIN_BLOCK_SIZE if small else rest > SMALL_SIZE
        if worth_splitting:
            segment.blocks.insert(index + 1, Block(block.offset + rounded, rest))
            block.size = rounded
        block.handle = self._next_handle
        self._next_handle += 1
        self._note_peaks()
        return block.handle

    def _best_fit(self, rounded: int, small: bool) -> tuple[Segment, int] | None:
        candidates = [
            (b.size, s.number, b.offset, s, i)
            for s in self.segments
            if s.small == small
            for i, b in enumerate(s.blocks)
            if b.handle is None and b.size >= rounded
        ]
        if not candidates:
            return None
        *_, segment, index = min(candidates, key=lambda c: c[:3])
        return segment, index

    def _new_segment(self, size: int, small: bool, asked: int) -> tuple[Segment, int]:
        if self.capacity is not None and self.reserved + size > self.capacity:
            self.empty_cache()  # the real allocator frees its cached blocks and retries once
            if self.reserved + size > self.capacity:
                self.num_ooms += 1
                raise ModelOutOfMemoryError(
                    f"MODEL out of memory (a simulation, not a GPU): "
                    f"tried to allocate {format_bytes(asked)} (a new segment of {format_bytes(size)}); "
                    f"capacity {format_bytes(self.capacity)}, {format_bytes(self.allocated)} allocated, "
                    f"{format_bytes(self.reserved)} reserved"
                )
        segment = Segment(self._next_segment, size, small, [Block(0, size)])
        self._next_segment += 1
        self.segments.append(segment)
        return segment, 0

    def free(self, handle: int) -> None:
        """Give a block back to the cache (it stays reserved) and merge it with free neighbours."""
        for segment in self.segments:
            for i, block in enumerate(segment.blocks):
                if block.handle == handle and handle is not None:
                    block.handle = None
                    self._merge(segment, i)
                    return
        raise KeyError(f"no live block has handle {handle!r} (freed twice, or never allocated here?)")

    @staticmethod
    def _merge(segment: Segment, i: int) -> None:
        blocks = segment.blocks
        if i + 1 < len(blocks) and blocks[i + 1].handle is None:
            blocks[i].size += blocks.pop(i + 1).size
        if i > 0 and blocks[i - 1].handle is None:
            blocks[i - 1].size += blocks.pop(i).size

    def empty_cache(self) -> int:
        """Return every wholly free segment to the driver; return how many bytes that gave back."""
        before = self.reserved
        self.segments = [s for s in self.segments if not s.unused]
        return before - self.reserved

    def describe(self) -> str:
        """One line per segment: its size, pool and blocks (`#n` in use, `free`)."""
        if not self.segments:
            return "(no segments: nothing reserved)"
        lines = []
        for s in self.segments:
            parts = [f"{'#' + str(b.handle) if b.handle else 'free'} {format_bytes(b.size)}" for b in s.blocks]
            pool = "small" if s.small else "large"
            lines.append(f"segment {s.number} ({pool} pool, {format_bytes(s.size)}): " + " | ".join(parts))
        return "\n".join(lines)


# --------------------------------------------------------------------------- playground and widget


@dataclass(frozen=True)
class Step:
    """One action in the playground and the counters right after it; `error` is set when it ran out of memory."""

    action: str
    allocated: int
    reserved: int
    error: str = ""


#: The pretend GPU size of the playground's model: a few clicks of 64 MiB run it out of memory.
PLAYGROUND_MODEL_CAPACITY = 128 * MIB


class AllocatorPlayground:
    """Allocate and free tensors by size, on a real GPU or on the model, and record the counters.

    `AllocatorPlayground.create()` picks the real thing when a CUDA GPU is present and the model
    otherwise; `source` says which one the numbers come from.
    """

    def __init__(self, device: torch.device | str | None = None, *, model: CachingAllocatorModel | None = None):
        self._handles: list[Any] = []
        self.history: list[Step] = []
        if model is not None:
            self.model: CachingAllocatorModel | None = model
            self.device = None
            self.source = "MODEL of the caching allocator (no GPU here): not measured"
        else:
            self.model = None
            self.device = cuda_device_for(device, "a GPU playground")
            torch.cuda.synchronize(self.device)
            torch.cuda.empty_cache()  # start from what the rest of the notebook keeps alive
            self.source = f"real counters of {torch.cuda.get_device_name(self.device)} ({self.device})"
        self._record("start")

    @classmethod
    def create(cls, capacity: int | None = PLAYGROUND_MODEL_CAPACITY) -> AllocatorPlayground:
        """The real allocator of GPU 0 if there is one, else a model of a GPU with `capacity` bytes.

        The model runs out of memory as a GPU does (`ModelOutOfMemoryError`, a `torch.OutOfMemoryError`);
        pass `capacity=None` for a model without a limit. A real GPU's limit is its own.
        """
        if torch.cuda.is_available():
            return cls()
        return cls(model=CachingAllocatorModel(capacity))

    @property
    def capacity(self) -> int | None:
        """The bytes the allocator can reserve at most: the model's capacity, or the GPU's total memory."""
        if self.model is not None:
            return self.model.capacity
        return torch.cuda.get_device_properties(self.device).total_memory

    @property
    def on_gpu(self) -> bool:
        return self.model is None

    def counters(self) -> tuple[int, int]:
        """(allocated, reserved) right now."""
        if self.model is not None:
            return self.model.allocated, self.model.reserved
        return torch.cuda.memory_allocated(self.device), torch.cuda.memory_reserved(self.device)

    def _record(self, action: str, error: str = "") -> Step:
        allocated, reserved = self.counters()
        step = Step(action, allocated, reserved, error)
        self.history.append(step)
        return step

    def allocate(self, nbytes: int) -> Step:
        """Allocate a tensor of `nbytes` bytes (uint8) and record the counters.

        Out of memory (the model's capacity, or the GPU's) records a step with its `error` and
        raises the error again, as the real allocation would.
        """
        _check_request(nbytes)
        try:
            if self.model is not None:
                self._handles.append(self.model.malloc(nbytes))
            else:
                self._handles.append(torch.empty(nbytes, dtype=torch.uint8, device=self.device))
        except torch.OutOfMemoryError as exc:  # the model's error is one too
            self._record(f"alloc {format_bytes(nbytes)}: OUT OF MEMORY", f"{type(exc).__name__}: {exc}".splitlines()[0])
            raise
        return self._record(f"alloc {format_bytes(nbytes)}")

    def _drop_last(self) -> None:
        """Forget the newest tensor: the model frees its block; a real tensor dies with its last reference."""
        handle = self._handles.pop()
        if self.model is not None:
            self.model.free(handle)

    def free_last(self) -> Step:
        """Drop the most recent tensor still alive."""
        if not self._handles:
            return self._record("free (nothing to free)")
        self._drop_last()
        return self._record("free last")

    def free_all(self) -> Step:
        """Drop every tensor this playground holds."""
        while self._handles:
            self._drop_last()
        return self._record("free all")

    def empty_cache(self) -> Step:
        """Return unused cached segments to the driver."""
        if self.model is not None:
            self.model.empty_cache()
        else:
            torch.cuda.empty_cache()
        return self._record("empty_cache")

    @property
    def live(self) -> int:
        """How many tensors the playground holds."""
        return len(self._handles)


def plot_steps(history: Sequence[Step], label: str, title: str | None = None, *, capacity: int | None = None) -> Any:
    """Bars of allocated and reserved MiB after each step; `label` says where the numbers come from.

    A step that ran out of memory is shaded and named in red; `capacity` (bytes) draws the limit
    as a dashed line when the bars come near it or memory ran out. The figure carries alt text.
    """
    from .plots import GREY, OKABE_ITO, WHITE, add_stamp, colour, new_figure, set_alt

    fig, ax = new_figure(max(5.0, 0.9 * len(history) + 2), 3.8)
    xs = list(range(len(history)))
    width = 0.4
    allocated = [s.allocated / MIB for s in history]
    reserved = [s.reserved / MIB for s in history]
    ax.bar([x - width / 2 for x in xs], allocated, width, label="allocated", color=colour(0))
    ax.bar([x + width / 2 for x in xs], reserved, width, label="reserved", color=colour(1), hatch="//", edgecolor=WHITE)
    ooms = [x for x, s in zip(xs, history, strict=True) if s.error]
    for x in ooms:
        ax.axvspan(x - 0.5, x + 0.5, color=OKABE_ITO["vermillion"], alpha=0.15, lw=0)
    ax.set_xticks(xs, [s.action for s in history], rotation=30, ha="right", fontsize=8)
    for x in ooms:
        ax.get_xticklabels()[x].set_color(OKABE_ITO["vermillion"])
    top = max(reserved + allocated)
    show_capacity = capacity is not None and (bool(ooms) or top >= capacity / MIB / 4)
    if show_capacity and capacity is not None:
        ax.axhline(capacity / MIB, color=GREY, linestyle="--", label=f"capacity {format_bytes(capacity)}")
        top = max(top, capacity / MIB)
    ax.set_ylim(0, max(1.0, 1.15 * top))  # never a ±0.04 axis for zero bytes
    ax.set_ylabel("memory (MiB)")
    ax.set_xlabel("step (oldest first)")
    last = history[-1]
    if title is None:
        title = (
            "OUT OF MEMORY: the last allocation did not fit" if last.error else "allocated vs reserved after each step"
        )
    ax.set_title(title, **({"color": OKABE_ITO["vermillion"]} if last.error else {}))
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))  # beside the plot: never over a bar or the limit
    add_stamp(fig, label)
    alt = (
        f"Bar chart of allocated and reserved memory in MiB after "
        f"{f'each of {len(history)} steps' if len(history) > 1 else 'one step'} ({label}). "
        f"After '{last.action}': allocated {format_bytes(last.allocated)}, reserved {format_bytes(last.reserved)}; "
        f"most reserved {format_bytes(max(s.reserved for s in history))}"
    )
    if capacity is not None:
        alt += f"; capacity {format_bytes(capacity)}"
    if ooms:
        alt += "; out of memory at: " + ", ".join(repr(history[x].action) for x in ooms)
    return set_alt(fig, alt + ".")


def playground_text(playground: AllocatorPlayground) -> str:
    """What the widget prints under its buttons: the last step, its counters, and the model's segments."""
    last = playground.history[-1]
    lines = [
        f"{last.action}: allocated {format_bytes(last.allocated)}, reserved {format_bytes(last.reserved)}"
        f" · {playground.live} live tensor(s) · {playground.source}"
    ]
    if last.error:
        lines.append(
            f"OUT OF MEMORY: {last.error}\n  On a GPU this is torch.OutOfMemoryError (torch.cuda.OutOfMemoryError); "
            "free a tensor or call empty_cache, then allocate again."
        )
    if playground.model is not None:
        if playground.model.capacity is not None:
            lines.append(f"model capacity (a pretend GPU): {format_bytes(playground.model.capacity)}")
        lines.append(playground.model.describe())
    return "\n".join(lines)


def allocator_widget(playground: AllocatorPlayground, sizes_mib: Sequence[float] = (0.001, 0.5, 1, 4, 16, 64)) -> Any:
    """Buttons to allocate / free / empty the cache, redrawing allocated vs reserved after each click.

    Each redraw replaces the output area's contents in one update (text and a fresh figure with
    alt text, the figure closed at once), so quick clicks cannot leave it half cleared or empty.
    Running out of memory is a step like the others: shown in the text and the plot.
    """
    import ipywidgets as widgets
    from IPython.display import display

    from .plots import bundle

    size = widgets.Dropdown(
        options=[(f"{s:g} MiB", s) for s in sizes_mib],
        value=sizes_mib[min(2, len(sizes_mib) - 1)],
        description="size",
        style={"description_width": "initial"},
    )
    buttons = {name: widgets.Button(description=name) for name in ("allocate", "free last", "free all", "empty_cache")}
    out = widgets.Output()
    capacity = playground.capacity

    def redraw() -> None:
        import matplotlib.pyplot as plt

        text = playground_text(playground)
        fig = plot_steps(playground.history[-12:], playground.source, capacity=capacity)
        try:
            image = bundle(fig)
        finally:
            plt.close(fig)
        out.outputs = (
            {"output_type": "stream", "name": "stdout", "text": text + "\n"},
            {"output_type": "display_data", "data": image, "metadata": {}},
        )

    def act(name: str) -> None:
        try:
            if name == "allocate":
                playground.allocate(max(1, int(size.value * MIB)))
            elif name == "free last":
                playground.free_last()
            elif name == "free all":
                playground.free_all()
            else:
                playground.empty_cache()
        except torch.OutOfMemoryError:
            pass  # recorded as a step with its error; the redraw shows it
        redraw()

    for name, button in buttons.items():
        button.on_click(lambda _b, name=name: act(name))
    box = widgets.VBox([widgets.HBox([size, *buttons.values()]), out])
    redraw()
    display(box)
    return box
