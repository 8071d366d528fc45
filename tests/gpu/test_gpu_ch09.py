"""Chapter 09's GPU claims: sharing a CUDA tensor with a child process, and fork after CUDA init."""

from __future__ import annotations

import pytest

from helpers import hogwild as hw


@pytest.mark.gpu
def test_a_child_changes_a_shared_cuda_tensor_in_place() -> None:
    assert hw.share_cuda_tensor_demo() == [1.0, 1.0, 1.0]


@pytest.mark.gpu
def test_cuda_in_a_forked_child_after_cuda_init_fails() -> None:
    message = hw.fork_after_cuda_error()
    assert "Cannot re-initialize CUDA in forked subprocess" in message
