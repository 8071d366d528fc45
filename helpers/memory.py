"""GPU memory (chapter 05): sizes in bytes, the caching allocator's constants and its four counters.

Chapter 05 reads the real counters with `torch.cuda` in its own cells; `MemoryCounters` is the record the
allocator model (`helpers.standins`) reports them in. `cuda_device_for` picks the GPU a helper drives."""

from __future__ import annotations

from dataclasses import dataclass

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


class NeedsCudaError(RuntimeError):
    """Raised by a helper that reads or drives a CUDA GPU when this machine has none."""


def cuda_device_for(device: torch.device | str | int | None, what: str) -> torch.device:
    """The CUDA device to use (the current one for None or 'cuda'), or a clear error when this machine has none."""
    if not torch.cuda.is_available():
        raise NeedsCudaError(f"{what} needs a CUDA GPU, and this machine has none. {HOW_TO_GET_A_GPU}")
    device = torch.device("cuda", device) if device is None or isinstance(device, int) else a_device(device)
    if device.type == "cuda" and device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    return device


@dataclass(frozen=True)
class MemoryCounters:
    """The caching allocator's four counters for one device, in bytes.

    `allocated` is what live tensors occupy (their blocks, rounded); `reserved` what the allocator holds
    from the driver (allocated + cached free blocks); `max_*` the peaks since the start or `reset_peaks`."""

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


def format_bytes(n: int | float) -> str:
    """Bytes in binary units, as the allocator counts them: 512 B, 2.0 MiB, 14.7 GiB."""
    sign, n = ("-" if n < 0 else ""), abs(n)
    for unit, scale in (("GiB", GIB), ("MiB", MIB), ("KiB", KIB)):
        if n >= scale:
            return f"{sign}{n / scale:.1f} {unit}"
    return f"{sign}{int(n)} B"
