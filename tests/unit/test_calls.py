"""The call recorder the checkers share: which calls read a tensor's values on the host."""

from __future__ import annotations

from types import SimpleNamespace

import torch

from helpers.exercises.calls import Call, CallLog


def test_a_copy_from_the_gpu_to_the_host_is_a_read_whatever_its_spelling() -> None:
    on_gpu = SimpleNamespace(is_cuda=True, is_cpu=False)  # a GPU tensor, as the log sees it (no GPU here)
    log, copied = CallLog(), torch.zeros(3)
    log.calls = [
        Call(torch.Tensor.to, (on_gpu, "cpu"), {}, copied),  # loss.to("cpu"), as_tensor(loss, device="cpu") alike
        Call(torch.Tensor.tolist, (copied,), {}, [0.0] * 3),  # a read of the copy: not another wait
        Call(torch.Tensor.to, (on_gpu, "cuda:1"), {}, on_gpu),  # GPU to GPU: no read
        Call(torch.Tensor.add, (copied, 1), {}, copied + 1),  # on the host already: no read
    ]
    assert log.host_reads() == [(".to()", on_gpu)]


def test_a_copy_written_in_place_is_read_again_when_read() -> None:
    log, host = CallLog(), torch.arange(3.0)
    log.calls = [Call(torch.Tensor.cpu, (host,), {}, host), Call(torch.Tensor.tolist, (host,), {}, [0.0, 1.0, 2.0])]
    log.calls += [Call(torch.Tensor.__setitem__, (host, 0, 5.0), {}), Call(torch.Tensor.tolist, (host,), {}, [])]
    assert [written for written, _ in log.host_reads()] == [".cpu()", ".tolist()"]  # the second .tolist() only


def test_views_of_a_host_copy_are_read_free_until_anything_writes_into_its_storage() -> None:
    log, host = CallLog(), torch.arange(4.0)
    alias, view = host.detach(), host[1:]
    log.calls = [Call(torch.Tensor.cpu, (host,), {}, host), Call(torch.Tensor.tolist, (view,), {}, [1.0, 2.0, 3.0])]
    log.calls += [Call(torch.add, (host, 1), {"out": alias}, alias), Call(torch.Tensor.tolist, (view,), {}, [])]
    assert [written for written, _ in log.host_reads()] == [".cpu()", ".tolist()"]  # the read after the write
