"""Chapter 12 exercises: the bytes of training per rank, the lines that shard a model with FSDP2, and
rank 0's bytes under FSDP2 with a mixed-precision policy, predicted before the chapter's launch measures them.

The second question's function lives in a file the learner writes (`%%writefile`), because the
ranks import it. The checker runs it for real: first on one rank in this process (so a mistake
shows with its line number), then on two gloo ranks through `helpers.processes.launch`, where
the sharded model trains and must end where one process trained on both ranks' data ends.
"""

from __future__ import annotations

import math
import traceback
from typing import Any

import torch

from ..checking import Question, Wrong, expect_function
from ..sharding import OPTIMIZER_STATES, STATE_BYTES
from ..sharding import bytes_per_rank as _reference
from .cases import Slip, table
from .ch08 import TWO_RANK_TIME_LIMIT, one_rank_group, run_on_two_ranks

# -- Question 1: bytes per rank --------------------------------------------------------------------

#: Sizes that divide by the ranks and sizes that do not (so rounding shows), every optimizer, one rank.
_BYTES_CASES = (
    (1_000_000, 4, "Adam", 1, "DDP"),
    (1_000_000, 4, "Adam", 2, "DDP"),
    (1_000_001, 4, "Adam", 4, "FSDP"),
    (10, 2, "SGD", 3, "FSDP"),
    (3_000_000, 2, "SGD with momentum", 8, "DDP"),
    (7_000_000_003, 2, "Adam", 8, "FSDP"),
)


def _bytes(n: int, size: int, opt: str, world: int, strategy: str, *, share: Any = None) -> float:
    """Section 5's formula, with `share(n, world)` in place of rounding up where a slip divides otherwise."""
    per_rank = n if strategy == "DDP" else (share or (lambda a, b: -(-a // b)))(n, world)
    return per_rank * size * (2 + OPTIMIZER_STATES[opt])


_check_bytes_per_rank = table(
    "bytes_per_rank",
    "(n_params, dtype_bytes, optimizer, world_size, strategy)",
    _BYTES_CASES,
    lambda *case: _reference(*case)["total"],
    rel=0,
    slips=(
        Slip(
            lambda n, s, o, w, st: _bytes(n, s, o, w, "FSDP"),
            "DDP does not divide anything: every rank keeps a whole copy",
        ),
        Slip(lambda n, s, o, w, st: _bytes(n, s, o, 1, st), "FSDP keeps only 1/world_size of each part on a rank"),
        Slip(
            lambda n, s, o, w, st: _bytes(n, s, o, w, st, share=lambda a, b: a // b),
            "the shard was rounded down; round it up",
        ),
        Slip(
            lambda n, s, o, w, st: _bytes(n, s, o, w, st, share=lambda a, b: a / b),
            "the shard is a whole number of parameters: round n_params / world_size up",
        ),
        Slip(
            lambda n, s, o, w, st: _bytes(n, s, o, w, st) / (2 + OPTIMIZER_STATES[o]) * (1 + OPTIMIZER_STATES[o]),
            "one copy is missing: count the parameters, the gradients and every optimizer state (Adam keeps two)",
        ),
    ),
)


# -- Question 2: the lines that shard a model --------------------------------------------------------

WIDTH, BLOCKS, STEPS, LR = 8, 3, 3, 0.05


def build_model() -> torch.nn.Sequential:
    """The model the checker hands to `shard`: three blocks of Linear + ReLU, the same on every rank."""
    torch.manual_seed(0)
    return torch.nn.Sequential(
        *[torch.nn.Sequential(torch.nn.Linear(WIDTH, WIDTH), torch.nn.ReLU()) for _ in range(BLOCKS)]
    )


def _rank_data(rank: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(rank)
    return torch.randn(4, WIDTH, generator=g), torch.randn(4, WIDTH, generator=g)


def _train(model: torch.nn.Module, batches: list[tuple[torch.Tensor, torch.Tensor]]) -> None:
    opt = torch.optim.Adam(model.parameters(), lr=LR)
    for _ in range(STEPS):
        opt.zero_grad()
        loss = sum(torch.nn.functional.mse_loss(model(x), y) for x, y in batches) / len(batches)
        loss.backward()
        opt.step()


def _expected_weights(world_size: int) -> torch.Tensor:
    """One process trained on every rank's batch at once: what the sharded ranks must end with."""
    model = build_model()
    _train(model, [_rank_data(r) for r in range(world_size)])
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()])


def _apply(fn: Any, model: torch.nn.Module, mesh: Any) -> torch.nn.Module:
    """Call the learner's `shard(model, mesh)` and check what it did to the model's structure."""
    from torch.distributed.fsdp import FSDPModule

    try:
        result = fn(model, mesh)
    except Exception as exc:
        files = [frame.filename.replace("\\", "/") for frame in traceback.extract_tb(exc.__traceback__)]
        if isinstance(model, FSDPModule) and any("/fsdp/" in f or "/_composable/" in f for f in files):
            raise Wrong(
                "fully_shard failed on a block after the whole model was already sharded: shard every block "
                "first, then the root"
            ) from None
        raise
    if isinstance(result, torch.nn.Module) and result is not model:
        raise Wrong("return the model you were given (fully_shard changes it in place and returns it)")
    blocks = [isinstance(block, FSDPModule) for block in model]
    if not isinstance(model, FSDPModule) and not any(blocks):
        raise Wrong("the model is not sharded: call fully_shard(block, mesh=mesh) on each block, then on the model")
    if not all(blocks):
        raise Wrong(
            "not every block was sharded on its own: call fully_shard on each block first, so that only one "
            "block's parameters are gathered at a time"
        )
    if not isinstance(model, FSDPModule):
        raise Wrong("every block is sharded, but not the root: finish with fully_shard(model, mesh=mesh)")
    return model


def run_shard(rank: int, world_size: int, shard: Any) -> dict[str, Any]:
    """Runs in each rank: shard the model with the learner's function, train, report bytes and weights."""
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import DTensor

    model = build_model()
    mesh = init_device_mesh("cpu", (world_size,))
    try:
        _apply(shard, model, mesh)
    except Wrong as wrong:
        return {"wrong": str(wrong)}
    if not torch.distributed.is_initialized():
        return {"wrong": "shard destroyed the process group the ranks train with: leave that to the launcher"}
    _train(model, [_rank_data(rank)])
    local = sum(
        (p.to_local() if isinstance(p, DTensor) else p).numel() for p in model.parameters()
    )  # numbers this rank holds
    full = [p.full_tensor() if isinstance(p, DTensor) else p for p in model.parameters()]
    return {"local": local, "weights": torch.cat([p.detach().reshape(-1) for p in full])}


def _run_on_one_rank_here(fn: Any) -> None:
    """Call the learner's function in this process, on a one-rank gloo mesh; skipped if the notebook has a group."""
    from torch.distributed.device_mesh import init_device_mesh

    with one_rank_group() as made:
        if made:
            _apply(fn, build_model(), init_device_mesh("cpu", (1,)))


def _check_shard(fn: Any) -> None:
    expect_function(fn, "shard", "(model, mesh)")
    # 1. One rank, here: what it prints and raises shows in this notebook, with your line numbers.
    _run_on_one_rank_here(fn)
    # 2. Two gloo ranks, each training on its own batch, through the course's launcher.
    results = run_on_two_ranks(run_shard, (fn,), file="shard_answer.py")
    total = sum(p.numel() for p in build_model().parameters())
    for rank, result in enumerate(results):
        if result["local"] > (total + 1) // 2 + BLOCKS * 2:
            raise Wrong(f"rank {rank} holds {result['local']} of the {total} numbers: the parameters are not sharded")
    weights = torch.tensor(results[0]["weights"])
    if not torch.allclose(weights, _expected_weights(2), atol=1e-5):
        raise Wrong("the sharded ranks did not train like one process on both batches: did you change the model?")


# -- Question 3: rank 0's bytes under FSDP2 with MixedPrecisionPolicy(param_dtype=bfloat16) ----------

#: (parameter shapes, world size): the chapter's model with rows of 99, 33 and 1 first (section 4's launch
#: measures it), then rows that divide, a weight of one row, more ranks than some rows, and one rank.
_RANK0_CASES = (
    ([(99, 64), (99,), (33, 99), (33,), (1, 33), (1,)], 2),
    ([(6, 4), (6,)], 3),
    ([(1, 8), (5, 3, 2)], 2),
    ([(10, 4), (10,), (3, 10), (3,)], 4),
    ([(7, 7), (7,)], 1),
)
#: Bytes training with Adam keeps per number of a shard: the float32 shard, its float32 gradient, exp_avg and
#: exp_avg_sq (16). The bfloat16 param_dtype only sets the dtype of the gathered copies used in forward and backward.
_BYTES_PER_NUMBER = STATE_BYTES * (2 + OPTIMIZER_STATES["Adam"])


def _rank0_numbers(shapes: list[tuple[int, ...]], world_size: int) -> int:
    """Numbers rank 0 holds: FSDP2 cuts dim 0 with torch.chunk and gives every rank the first chunk's size."""
    return sum(torch.empty(shape, device="meta").chunk(world_size)[0].numel() for shape in shapes)


def _rows(shapes: list[tuple[int, ...]], world: int, rows: Any) -> int:
    """Numbers rank 0 would hold if each parameter gave it `rows(dim0, world)` rows."""
    return sum(rows(s[0], world) * math.prod(s[1:]) for s in shapes if s)


_check_rank0_bytes = table(
    "rank0_bytes",
    "(shapes, world_size)",
    _RANK0_CASES,
    lambda shapes, world: _rank0_numbers(shapes, world) * _BYTES_PER_NUMBER,
    rel=0,
    slips=(
        Slip(
            lambda shapes, world: -(-sum(math.prod(s) for s in shapes) // world) * _BYTES_PER_NUMBER,
            "that is ceil(n_params / world_size) numbers; FSDP2 cuts every parameter along dim 0 and gives rank 0 "
            "ceil(rows / world_size) rows of each",
        ),
        Slip(
            lambda shapes, world: sum(-(-math.prod(s) // world) for s in shapes) * _BYTES_PER_NUMBER,
            "each parameter's numbers were split evenly, but FSDP2 cuts whole rows (dim 0)",
        ),
        Slip(
            lambda shapes, world: _rows(shapes, world, lambda r, w: r // w) * _BYTES_PER_NUMBER,
            "the rows were rounded down; rank 0 takes ceil(rows / world_size) rows (torch.chunk)",
        ),
        Slip(
            lambda shapes, world: _rank0_numbers(shapes, world) * 8,
            "param_dtype only sets the dtype of the gathered copies used in forward and backward; the shard, its "
            "gradient and Adam's two states stay float32: 4 numbers of 4 bytes each",
        ),
        Slip(lambda shapes, world: _rank0_numbers(shapes, world), "that is a count of numbers; return bytes"),
    ),
)


QUESTIONS = [
    Question(
        number=1,
        task="Write `bytes_per_rank(n_params, dtype_bytes, optimizer, world_size, strategy)`: the bytes one rank "
        "keeps for parameters, gradients and optimizer states (optimizer 'SGD', 'SGD with momentum' or "
        "'Adam'; strategy 'DDP' or 'FSDP').",
        variable="bytes_per_rank",
        checker=_check_bytes_per_rank,
        hint_text="One copy is n_params * dtype_bytes. Training keeps the parameters, the gradients and 0, 1 or 2 "
        "optimizer states (SGD, momentum, Adam): that is 2, 3 or 4 copies. DDP keeps them whole on every rank; "
        "FSDP divides each by world_size.",
        chapter="12",
    ),
    Question(
        number=2,
        task="Write `shard(model, mesh)` in the file shard_answer.py: shard each block of the `nn.Sequential` "
        "`model` with `fully_shard` on the device mesh `mesh`, then the whole model, and return it.",
        variable="shard",
        checker=_check_shard,
        hint_text="A loop `for block in model: fully_shard(block, mesh=mesh)`, then `fully_shard(model, mesh=mesh)` "
        "(the root last: it picks up the parameters no block owns), then `return model`.",
        chapter="12",
        file="shard_answer.py",
        time_limit=TWO_RANK_TIME_LIMIT,
    ),
    Question(
        number=3,
        task="Write `rank0_bytes(shapes, world_size)`: the bytes rank 0 keeps for the parameters, gradients and "
        "Adam's states of a model whose parameters have the shapes `shapes`, sharded with `fully_shard` on "
        "`world_size` ranks and `MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)`.",
        variable="rank0_bytes",
        checker=_check_rank0_bytes,
        hint_text="Per parameter, rank 0 holds the first of world_size chunks along dim 0: ceil(rows / world_size) "
        "rows of prod(shape[1:]) numbers. param_dtype changes only the gathered copies; the shard, its gradient "
        "and Adam's two states are float32.",
        chapter="12",
    ),
]
