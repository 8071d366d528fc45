"""GPU tests: each test marked `gpu` (or `gpu2`) is skipped, with the reason, where the GPUs it needs are missing.

Every skip here names the capability this machine lacks (`missing.missing`), recorded on the test's
report as the user property `missing_capability`: the self-test fails a skip without one wherever
torch can use a GPU. This folder ships in the Kaggle helpers dataset, where the self-test notebook
runs it on GPU T4 ×2.
"""

from __future__ import annotations

import gc

import pytest

from .missing import PROPERTY, MissingCapability

CAPABILITY = {1: "a CUDA GPU that torch can use", 2: "a second CUDA GPU"}


def _cuda_count() -> int:
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    found = _cuda_count()
    for item in items:
        needed = 2 if "gpu2" in item.keywords else 1 if "gpu" in item.keywords else 0
        if needed and found < needed:
            item.user_properties.append((PROPERTY, CAPABILITY[2 if found else 1]))
            item.add_marker(
                pytest.mark.skip(
                    reason=f"needs {needed} CUDA GPU(s), this machine has {found}: run `pytest -m 'gpu or gpu2'` "
                    "on Kaggle (GPU T4 x2) or any CUDA machine"
                )
            )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """Put the capability a test named with `missing(...)` on its report (`missing_capability`).

    Its reason then reads as any skip's ("Skipped: needs ..."), not under the exception's class name.
    """
    outcome = yield
    if call.excinfo is not None and isinstance(call.excinfo.value, MissingCapability):
        report = outcome.get_result()
        report.user_properties.append((PROPERTY, call.excinfo.value.capability))
        if isinstance(report.longrepr, tuple):
            path, line, _ = report.longrepr
            report.longrepr = (path, line, f"Skipped: {call.excinfo.value.msg}")


@pytest.fixture(autouse=True)
def give_gpu_memory_back():
    """After each GPU test that ran: drop its tensors and return the cached segments, so the next starts clean."""
    yield
    import torch

    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
