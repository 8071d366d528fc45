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


def test_reading_the_elements_of_a_host_copy_is_not_another_read() -> None:
    log, host = CallLog(), torch.arange(3.0)
    each = host.unbind()  # what iterating the copy gives: views of it
    log.calls = [
        Call(torch.Tensor.cpu, (host,), {}, host),
        *(Call(torch.Tensor.__float__, (t,), {}, 0.0) for t in each),
    ]
    log.calls += [Call(torch.Tensor.item, (torch.ones(1),), {}, 1.0)]  # a tensor of its own: a read
    assert [written for written, _ in log.host_reads()] == [".cpu()", ".item()"]
