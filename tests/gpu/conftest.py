"""GPU tests: each test marked `gpu` (or `gpu2`) is skipped, with the reason, where the GPUs it needs are missing.

This folder ships in the Kaggle helpers dataset, where the self-test notebook runs it on GPU T4 ×2.
"""

from __future__ import annotations

import gc

import pytest


def _cuda_count() -> int:
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    found = _cuda_count()
    for item in items:
        needed = 2 if "gpu2" in item.keywords else 1 if "gpu" in item.keywords else 0
        if needed and found < needed:
            item.add_marker(
                pytest.mark.skip(
                    reason=f"needs {needed} CUDA GPU(s), this machine has {found}: run `pytest -m 'gpu or gpu2'` "
                    "on Kaggle (GPU T4 x2) or any CUDA machine"
                )
            )


@pytest.fixture(autouse=True)
def give_gpu_memory_back():
    """After each GPU test that ran: drop its tensors and return the cached segments, so the next starts clean."""
    yield
    import torch

    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
