"""The GPUs learners meet, as data (chapter 10): datasheet figures, each row naming its `source`.

A figure that no vendor datasheet, whitepaper or published review gives is `None`, never a guess.
Tensor-core peaks are **dense**: from the A100 on, NVIDIA's datasheets print the 2:4-sparse figure,
exactly twice the dense one, and ordinary PyTorch matmuls are dense, so the table holds half the
printed figure. For GeForce cards it holds the whitepapers' figure "with FP32 accumulate", which is
what PyTorch's FP16/BF16 matmuls use. NVIDIA publishes no list prices for its data-centre GPUs, and
prices move: a launch price says little about what a card, or an hour of a cloud GPU, costs today."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class GpuSpec:
    """One GPU's datasheet figures (dense peaks) and their source."""

    name: str  # the product as sold, e.g. "NVIDIA T4"
    short: str  # a short label for plots and widgets, e.g. "T4"
    architecture: str
    year: int  # year of launch
    fp32_tflops: float  # on the ordinary CUDA cores (no tensor cores, no TF32)
    fp16_tensor_tflops: float | None  # dense; None: no FP16 tensor cores (the P100's FP16 is in `notes`)
    bf16_tensor_tflops: float | None  # dense; None: no BF16 hardware
    memory_gb: float  # 10^9 bytes, as sold
    memory_type: str
    bandwidth_gbs: float  # 10^9 bytes per second
    power_w: float  # board power / TDP as the datasheet states it
    source: str
    launch_price_usd: float | None = None  # launch list price (MSRP)
    price_source: str | None = None  # dates the price (month and year of launch)
    notes: str = ""
    device_names: tuple[str, ...] = ()  # lower-case fragments of torch.cuda.get_device_name() for this product
    bus_width_bits: int | None = None  # × data_rate_gbps / 8 = bandwidth: 256 × 10 / 8 = 320 GB/s on a T4
    data_rate_gbps: float | None = None  # per pin; None where no document prints it
    pcie_generation: int | None = None  # the host link, x16 on every card here
    nvlink_gbs: float | None = None  # GPU-to-GPU, both directions added, as datasheets print it; None: no NVLink
    #: The formats the tensor cores multiply in hardware, newest first; others run slowly or on the CUDA cores.
    tensor_formats: tuple[str, ...] = ()

    @property
    def tensor_tflops(self) -> float | None:
        """The best dense 16-bit matrix peak (FP16 or BF16), or None without tensor cores."""
        return max((v for v in (self.fp16_tensor_tflops, self.bf16_tensor_tflops) if v is not None), default=None)

    def peak_tflops(self, precision: str) -> float | None:
        """Peak dense TFLOP/s for `precision`: "fp32", "fp16" (tensor cores) or "bf16" (tensor cores)."""
        key = precision.lower().replace("bfloat16", "bf16").replace("float", "fp")
        table = {"fp32": self.fp32_tflops, "fp16": self.fp16_tensor_tflops, "bf16": self.bf16_tensor_tflops}
        if key not in table:  # the table gives no FP8 or TF32 peak
            raise ValueError(f"no {precision!r} peak in the table: it gives fp32, fp16 and bf16 (dense)")
        return table[key]


def _row(fields: dict[str, Any]) -> GpuSpec:
    return GpuSpec(**{k: tuple(v) if isinstance(v, list) else v for k, v in fields.items()})


#: The rows, in `gpu_specs.json` beside this module (data, not code), each checked against the documents it
#: names and third-party spec summaries (docs/sources.md §4: T4, P100).
GPUS: tuple[GpuSpec, ...] = tuple(map(_row, json.loads((Path(__file__).parent / "gpu_specs.json").read_text("utf-8"))))


class UnknownGpu(ValueError, KeyError):
    """A GPU the table does not hold: a ValueError (a bad argument), and a KeyError (a failed look-up)."""

    __str__ = BaseException.__str__  # the message as written, not quoted as a KeyError's key would be


def by_short_name(short: str) -> GpuSpec:
    """The table's row whose short label is `short` (e.g. "T4"), with a clear error otherwise."""
    if not isinstance(short, str):
        raise TypeError(f"short must be a GPU's short name such as 'T4', not {short!r} ({type(short).__name__})")
    for spec in GPUS:
        if spec.short.lower() == short.strip().lower():
            return spec
    raise UnknownGpu(f"no GPU called {short!r} in the table; it has {', '.join(s.short for s in GPUS)}")


def find_spec(device_name: str) -> GpuSpec | None:
    """The table's row for a device name as torch reports it ("Tesla T4"), or None if it is not in the table.

    Strict on purpose (an A100 40GB PCIe is not the A100 80GB SXM row, an H200 NVL not the H200 SXM row): a
    wrong ceiling is worse than none."""
    name = f" {' '.join(str(device_name).lower().replace('-', ' ').split())} "  # whole words, at the end
    for spec in GPUS:
        if any(name.endswith(f" {f.replace('-', ' ')} ") for f in spec.device_names):  # "… Laptop GPU": not it
            return spec
    return None


def format_table(specs: tuple[GpuSpec, ...] = GPUS) -> str:
    """The table in Markdown (dense peaks; '—' where the GPU lacks that hardware or no price was published)."""
    cell = lambda value, fmt="{:g}": "—" if value is None else fmt.format(value)  # noqa: E731
    head = "GPU|year|FP32|FP16 tensor|BF16 tensor|memory|GB/s|watts|launch $ (MSRP)|tensor formats"
    lines = [f"| {head.replace('|', ' | ')} |", "| --- |" + " ---: |" * 8 + " --- |"]
    for s in specs:
        row = [s.short, s.year, f"{s.fp32_tflops:g}", cell(s.fp16_tensor_tflops), cell(s.bf16_tensor_tflops)]
        row += [f"{s.memory_gb:g} GB {s.memory_type}", f"{s.bandwidth_gbs:g}", f"{s.power_w:g}"]
        row += [cell(s.launch_price_usd, "{:,.0f}"), " ".join(s.tensor_formats) or "—"]
        lines.append(f"| {' | '.join(map(str, row))} |")
    return "\n".join(lines) + "\n\nPeaks in TFLOP/s, dense."
