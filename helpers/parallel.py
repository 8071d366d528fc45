"""Data parallelism step by step: replicate, scatter, parallel_apply, gather.

`nn.DataParallel` runs one forward pass over several GPUs in four steps (the functions live in
`torch.nn.parallel`):

1. **replicate**: copy the module onto every device;
2. **scatter**: cut the batch along dim 0 into one chunk per device (`Tensor.chunk` sizes);
3. **parallel_apply**: run each replica on its chunk, one Python thread per device;
4. **gather**: concatenate the outputs along dim 0 on one device.

`data_parallel_forward` does those steps with the real functions; it needs two or more CUDA GPUs.
`simulated_data_parallel_forward` is the CPU stand-in, clearly labelled as such: it makes the
same copies, the same chunks, applies them one after the other and concatenates, so a learner
without GPUs can see every intermediate value. Its replicas are tied to the original parameters
the way torch's `replicate` ties them (through a differentiable copy), so a backward pass through
the stand-in sums the gradients into the original module, as DataParallel does.

Both are checked against the plain single-device forward pass (`check_matches_single_device`).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

from .validation import checks

#: Printed with every stand-in result, so nobody mistakes it for the GPU run.
STAND_IN_LABEL = "CPU stand-in for replicate/scatter/parallel_apply/gather (no GPUs used)"


@dataclass
class DataParallelTrace:
    """What each step produced: the chunk sizes, where each piece lived, and the result."""

    devices: list[str]
    chunk_sizes: list[int]
    replica_devices: list[str]
    output_devices: list[str]
    result: torch.Tensor
    simulated: bool
    notes: list[str] = field(default_factory=list)

    def describe(self) -> str:
        """A few lines saying what happened, for printing in a notebook."""
        head = STAND_IN_LABEL if self.simulated else "real torch.nn.parallel functions on CUDA GPUs"
        lines = [f"{head}", f"  devices:        {self.devices}"]
        lines.append(f"  replicate  -> one copy of the module on each of {self.replica_devices}")
        lines.append(f"  scatter    -> batch cut along dim 0 into chunks of {self.chunk_sizes} rows")
        lines.append(f"  parallel_apply -> outputs on {self.output_devices}")
        lines.append(f"  gather     -> result {tuple(self.result.shape)} on {self.result.device}")
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)


def check_batch(batch: torch.Tensor, n_devices: int) -> None:
    """Refuse a batch that cannot be scattered (not a tensor, no rows) and a device count below 1."""
    if not isinstance(batch, torch.Tensor):
        raise TypeError(f"the batch must be a tensor, not {type(batch).__name__}")
    if batch.dim() == 0 or batch.shape[0] == 0:
        raise ValueError(f"the batch needs at least one row along dim 0 to scatter; its shape is {tuple(batch.shape)}")
    if isinstance(n_devices, bool) or not isinstance(n_devices, int) or n_devices < 1:
        raise ValueError(f"the number of devices must be a whole number ≥ 1, not {n_devices!r}")


def data_parallel_forward(module: nn.Module, batch: torch.Tensor, device_ids: list[int]) -> DataParallelTrace:
    """One data-parallel forward pass with the real `torch.nn.parallel` functions (needs CUDA GPUs).

    `module` must live on `cuda:device_ids[0]`; `batch` may live anywhere. The result is gathered
    on `device_ids[0]`, exactly as `nn.DataParallel` does by default.
    """
    if not device_ids:
        raise ValueError("device_ids must name at least one CUDA GPU, e.g. [0, 1]")
    check_batch(batch, len(device_ids))
    if not torch.cuda.is_available() or torch.cuda.device_count() < len(device_ids):
        raise RuntimeError(
            f"data_parallel_forward needs {len(device_ids)} CUDA GPUs; "
            "use simulated_data_parallel_forward on this machine"
        )
    from torch.nn.parallel import gather, parallel_apply, replicate, scatter

    chunks = scatter(batch, device_ids)  # a tuple with one chunk per device (fewer if the batch is small)
    used = device_ids[: len(chunks)]
    replicas = replicate(module, used)
    outputs = parallel_apply(replicas, chunks, devices=used)
    result = gather(outputs, used[0])
    return DataParallelTrace(
        devices=[f"cuda:{i}" for i in device_ids],
        chunk_sizes=[c.shape[0] for c in chunks],
        replica_devices=[str(_tensor_device(r)) for r in replicas],
        output_devices=[str(o.device) for o in outputs],
        result=result,
        simulated=False,
    )


def _tensor_device(module: nn.Module) -> torch.device:
    """Where a module's tensors live. Works for `replicate`'s replicas too: their parameters are
    plain tensor attributes (no longer in `parameters()`), because they are not leaves any more."""
    for m in module.modules():
        for value in [*m._parameters.values(), *m._buffers.values(), *vars(m).values()]:
            if isinstance(value, torch.Tensor):
                return value.device
    raise ValueError("the module holds no tensors")


def replicate_on_cpu(module: nn.Module, n: int) -> list[nn.Module]:
    """Stand-in for `replicate`: `n` copies of `module` whose parameters are differentiable copies.

    Like torch's `replicate`, each replica's parameters are not leaves of their own but copies made
    inside the autograd graph, so gradients from every replica flow back into `module`'s
    parameters and add up there.
    """
    replicas = []
    for _ in range(n):
        replica = copy.deepcopy(module)
        for original, copied in zip(module.modules(), replica.modules(), strict=True):
            for name, param in original._parameters.items():
                if param is not None:
                    copied._parameters[name] = param.clone()  # a differentiable copy, as replicate makes
        replicas.append(replica)
    return replicas


@checks(check_batch)
def simulated_data_parallel_forward(module: nn.Module, batch: torch.Tensor, n_devices: int = 2) -> DataParallelTrace:
    """The CPU stand-in: the four data-parallel steps done one after the other on the CPU.

    Same chunk sizes as `scatter` (`torch.chunk` along dim 0, so the last chunk may be smaller and a
    tiny batch uses fewer "devices"), one copy of the module per chunk, outputs concatenated along
    dim 0. It runs no faster than the plain forward pass; it shows what DataParallel does.
    """
    chunks = torch.chunk(batch, n_devices, dim=0)  # scatter
    replicas = replicate_on_cpu(module, len(chunks))  # replicate
    outputs = [replica(chunk) for replica, chunk in zip(replicas, chunks, strict=True)]  # parallel_apply
    result = torch.cat(outputs, dim=0)  # gather
    names = [f"pretend-gpu:{i}" for i in range(n_devices)]
    notes = []
    if len(chunks) < n_devices:
        notes.append(
            f"a batch of {batch.shape[0]} rows gives only {len(chunks)} chunks, so only that many devices work"
        )
    return DataParallelTrace(
        devices=names,
        chunk_sizes=[c.shape[0] for c in chunks],
        replica_devices=names[: len(chunks)],
        output_devices=[f"{names[i]} (really {o.device})" for i, o in enumerate(outputs)],
        result=result,
        simulated=True,
        notes=notes,
    )


def check_matches_single_device(
    module: nn.Module, batch: torch.Tensor, result: torch.Tensor, atol: float = 1e-5, rtol: float = 1e-4
) -> float:
    """Assert that a data-parallel `result` equals `module(batch)` on one device; return the largest difference.

    The tolerance covers float32 rounding (a GPU may sum in another order than the CPU); batch
    norm in training mode would differ for real, because each replica sees only its chunk.
    """
    with torch.no_grad():
        expected = module(batch.to(next(module.parameters()).device)).to(result.device)
    if expected.shape != result.shape:
        raise AssertionError(
            f"shapes differ: single device {tuple(expected.shape)}, data parallel {tuple(result.shape)}"
        )
    diff = (expected - result.detach()).abs().max().item()
    if not torch.allclose(expected, result.detach(), atol=atol, rtol=rtol):
        raise AssertionError(f"data-parallel result differs from the single-device forward pass by {diff:.3g}")
    return diff


def draw_batch_flow(batch_size: int = 8, n_devices: int = 2, title: str | None = None) -> Any:
    """A diagram of how one batch flows through DataParallel: scatter, replicas, gather. Returns the figure."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch, Rectangle

    sizes = [c.numel() for c in torch.chunk(torch.arange(batch_size), n_devices)]
    fig, ax = plt.subplots(figsize=(8, 1.2 + 1.1 * len(sizes)), layout="constrained")
    ax.set_xlim(0, 10)
    total_h = 1.0 * len(sizes)
    ax.set_ylim(-0.6, total_h + 0.6)
    ax.axis("off")
    colors = plt.get_cmap("tab10").colors

    def box(x, y, w, h, text, color, alpha=0.25):
        ax.add_patch(Rectangle((x, y), w, h, facecolor=color, edgecolor="0.2", alpha=alpha))
        ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=8)

    def arrow(x0, y0, x1, y1):
        ax.add_patch(FancyArrowPatch((x0, y0), (x1, y1), arrowstyle="-|>", mutation_scale=10, color="0.3"))

    # the batch, rows coloured by the device they go to
    row_h = total_h / batch_size
    row = 0
    for d, n in enumerate(sizes):
        for _ in range(n):
            y = total_h - (row + 1) * row_h
            ax.add_patch(Rectangle((0.2, y), 1.2, row_h, facecolor=colors[d], edgecolor="white", alpha=0.6))
            row += 1
    ax.text(0.8, total_h + 0.25, f"batch\n{batch_size} rows (GPU 0)", ha="center", fontsize=8)
    # one lane per device: chunk -> replica -> output
    for d, n in enumerate(sizes):
        yc = total_h - (d + 0.5) * (total_h / len(sizes))
        start = total_h - (sum(sizes[:d]) + n / 2) * row_h
        arrow(1.45, start, 2.6, yc)
        box(2.6, yc - 0.3, 1.7, 0.6, f"chunk {d}\n{n} rows → GPU {d}", colors[d])
        arrow(4.3, yc, 4.8, yc)
        box(4.8, yc - 0.3, 1.9, 0.6, f"replica {d} of the model\n(copied each forward)", colors[d])
        arrow(6.7, yc, 7.2, yc)
        box(7.2, yc - 0.3, 1.2, 0.6, f"output {d}", colors[d])
        arrow(8.4, yc, 9.0, total_h / 2)
    box(9.0, total_h / 2 - 0.45, 0.9, 0.9, "gather\non GPU 0", "0.6")
    ax.text(3.45, -0.45, "scatter", ha="center", fontsize=9, weight="bold")
    ax.text(5.75, -0.45, "replicate + parallel_apply", ha="center", fontsize=9, weight="bold")
    ax.text(8.6, -0.45, "gather", ha="center", fontsize=9, weight="bold")
    ax.set_title(title or f"How DataParallel splits a batch of {batch_size} over {n_devices} GPUs", fontsize=10)
    return fig
