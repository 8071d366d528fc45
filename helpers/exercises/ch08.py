"""Chapter 08 exercises: how scatter cuts a batch, what DDP does with gradients, the per-rank batch size."""

from __future__ import annotations

from typing import Any

import torch

from ..checking import Question, Wrong, expect_function, expect_number, expect_type

_SPLIT_CASES = [(10, 2), (10, 3), (7, 3), (2, 4), (9, 4), (1, 2), (12, 5)]


def _check_split_sizes(fn: Any) -> None:
    expect_function(fn, "split_sizes", "(batch_size, n_gpus)")
    for batch, gpus in _SPLIT_CASES:
        expected = [c.numel() for c in torch.chunk(torch.arange(batch), gpus)]
        got = fn(batch, gpus)
        if isinstance(got, torch.Tensor):
            got = got.tolist()
        expect_type(got, (list, tuple), "a list of chunk sizes")
        if list(got) != expected:
            raise Wrong(
                f"split_sizes({batch}, {gpus}) returned {list(got)}, but scatter makes chunks of {expected} "
                "(each chunk has ceil(batch / n_gpus) rows until the rows run out)"
            )


def _check_average(fn: Any) -> None:
    expect_function(fn, "ddp_gradient", "a list of gradients")
    g = torch.Generator().manual_seed(3)
    for ranks in (2, 3):
        grads = [torch.randn(4, 5, generator=g) for _ in range(ranks)]
        originals = [t.clone() for t in grads]
        got = fn([t.clone() for t in grads])
        expect_type(got, torch.Tensor, "a tensor (the gradient every rank ends up with)")
        expected = torch.stack(originals).mean(dim=0)
        if got.shape != expected.shape:
            raise Wrong(f"the result has shape {tuple(got.shape)}; every rank keeps a gradient of shape (4, 5)")
        if torch.allclose(got, torch.stack(originals).sum(dim=0)):
            raise Wrong("that is the sum: DDP all-reduces with a sum and then divides by the number of ranks")
        if not torch.allclose(got, expected, atol=1e-6):
            raise Wrong(f"with {ranks} ranks the result is not the element-wise mean of their gradients")


def _check_per_rank(value: Any) -> None:
    value = expect_number(value, "a whole number (samples per rank per step)")
    if isinstance(value, float):
        if not value.is_integer():
            raise Wrong(f"{value:g} is not a whole number of samples")
        value = int(value)
    if value == 256:
        raise Wrong("with 256 on each of 2 ranks every step sees 512 samples: the global batch doubled")
    if value == 512:
        raise Wrong("that makes a global batch of 1024; each rank takes its share of the 256")
    if value != 128:
        raise Wrong(f"2 ranks × {value} samples is a global batch of {2 * value}, not 256")


QUESTIONS = [
    Question(
        number=1,
        task="Write `split_sizes(batch_size, n_gpus)` returning the list of chunk sizes that `scatter` (and so "
        "DataParallel) makes along dim 0, e.g. `split_sizes(10, 3)`.",
        variable="split_sizes",
        checker=_check_split_sizes,
        hint_text="scatter cuts like torch.chunk: try torch.chunk(torch.arange(10), 3) and look at the sizes.",
        solution_code=(
            "def split_sizes(batch_size, n_gpus):\n"
            "    return [len(c) for c in torch.chunk(torch.arange(batch_size), n_gpus)]"
        ),
        wrong_answers=(
            "def split_sizes(batch_size, n_gpus):\n    return [batch_size // n_gpus] * n_gpus",
            "def split_sizes(batch_size, n_gpus):\n"
            "    q, r = divmod(batch_size, n_gpus)\n"
            "    return [q + 1 if i < r else q for i in range(n_gpus)]",
            "split_sizes = [5, 5]",
        ),
    ),
    Question(
        number=2,
        task="Write `ddp_gradient(grads)`: given the list of gradients that each rank computed on its own "
        "shard (one tensor per rank), return the gradient every rank holds after DDP's backward pass.",
        variable="ddp_gradient",
        checker=_check_average,
        hint_text="DDP all-reduces the gradients (a sum over ranks) and divides by the world size.",
        solution_code="def ddp_gradient(grads):\n    return torch.stack(grads).mean(dim=0)",
        wrong_answers=(
            "def ddp_gradient(grads):\n    return torch.stack(grads).sum(dim=0)",
            "def ddp_gradient(grads):\n    return grads[0]",
            "def ddp_gradient(grads):\n    return torch.cat(grads).mean()",
        ),
    ),
    Question(
        number=3,
        task="You trained on one GPU with a batch of 256. Set `per_rank_batch_size` to the DataLoader "
        "batch size each of 2 DDP ranks needs so that every optimizer step still sees 256 samples.",
        variable="per_rank_batch_size",
        checker=_check_per_rank,
        hint_text="The global batch is the per-rank batch times the number of ranks.",
        solution_code="per_rank_batch_size = 256 // 2",
        wrong_answers=("per_rank_batch_size = 256", "per_rank_batch_size = 512", "per_rank_batch_size = 64"),
    ),
]
