"""Chapter 12 exercises: the bytes of training per rank, the lines that shard a model with FSDP2, and
rank 0's bytes under FSDP2 with a mixed-precision policy, predicted before the chapter's launch measures them.
The second question's `shard`, in a file the learner writes, shards a model on one rank here, then on two gloo
ranks (chapter 08's launcher), where the sharded model trains and must end as one process on all their data.
"""

from __future__ import annotations

import math
import traceback
from typing import Any

import torch
from torch import nn

from ..answers import Wrong, expect_function
from ..checking import Question
from ..sharding import OPTIMIZER_STATES, STATE_BYTES
from ..sharding import bytes_per_rank as _reference
from .cases import Slip, show, table
from .ch08 import DESTROYED, TWO_RANK_TIME_LIMIT, run_here, run_on_two_ranks

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
_TWICE = "fully_shard ran on parameters already sharded: shard every block once, first, then the root"


def build_model() -> torch.nn.Sequential:
    """The model the checker hands to `shard`: three blocks of Linear + ReLU, the same on every rank."""
    torch.manual_seed(0)
    return nn.Sequential(*[nn.Sequential(nn.Linear(WIDTH, WIDTH), nn.ReLU()) for _ in range(BLOCKS)])


def _train(model: torch.nn.Module, ranks: range) -> list[float]:
    """Train on the batches of `ranks` (their mean loss): one process on all of them, or one rank of the sharded
    model on its own; return the weights, whole."""
    batches = [torch.randn(2, 4, WIDTH, generator=torch.Generator().manual_seed(r)) for r in ranks]
    opt = torch.optim.Adam(model.parameters(), lr=LR)
    for _ in range(STEPS):
        opt.zero_grad()
        (sum(torch.nn.functional.mse_loss(model(x), y) for x, y in batches) / len(batches)).backward()
        opt.step()
    full = [p.full_tensor() if hasattr(p, "full_tensor") else p for p in model.parameters()]
    return torch.cat([p.detach().reshape(-1) for p in full]).tolist()


def run_shard(rank: int, world_size: int, shard: Any) -> dict[str, Any]:
    """Runs in each rank: shard the model with the learner's `shard`, check what it did, train, report the weights."""
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import FSDPModule

    model, mesh = build_model(), init_device_mesh("cpu", (world_size,), mesh_dim_names=("shard",))
    try:
        returned = shard(model, mesh)
    except Exception as exc:  # fully_shard on a block of a model already sharded whole
        files = [f.filename.replace("\\", "/") for f in traceback.extract_tb(exc.__traceback__)]
        if isinstance(model, FSDPModule) and any("/fsdp/" in f for f in files):
            return {"wrong": _TWICE}
        raise
    blocks, root = [isinstance(block, FSDPModule) for block in model], isinstance(model, FSDPModule)
    other = "another module" if isinstance(returned, torch.nn.Module) else show(returned)
    checks = (
        (not torch.distributed.is_initialized(), f"shard {DESTROYED}"),
        (not (root or any(blocks)), "the model is not sharded: call fully_shard(block, mesh=mesh) on each block"),
        (
            not all(blocks),
            "not every block was sharded on its own: call fully_shard on each block first, so that only one "
            "block's parameters are gathered at a time",
        ),
        (not root, "every block is sharded, but not the root: finish with fully_shard(model, mesh=mesh)"),
        (any(len(getattr(p, "placements", ())) > 1 for p in model.parameters()), _TWICE),  # on a mesh of 2 dims
        (
            any(getattr(p, "device_mesh", None) != mesh for p in model.parameters()),
            "the parameters were sharded on another mesh than the one shard was given: pass mesh=mesh to "
            "fully_shard (without it, fully_shard makes a mesh of its own)",
        ),
        (
            returned is not model,
            f"shard(model, mesh) returned {other}; return the model (fully_shard shards it in place)",
        ),
    )
    wrong = next((said for bad, said in checks if bad), None)
    return {"wrong": wrong} if wrong else {"weights": _train(model, range(rank, rank + 1))}


def _check_shard(fn: Any) -> None:
    expect_function(fn, "shard", "(model, mesh)")
    _trained_as_one(run_here(run_shard, fn), "on one rank here (world_size 1)")
    _trained_as_one(run_on_two_ranks(run_shard, (fn,), file="shard_answer.py"), "on rank {} of two")


def _trained_as_one(reports: list[dict[str, Any]], where: str) -> None:
    want = _train(build_model(), range(len(reports)))
    for rank, report in enumerate(reports):
        if max(abs(a - b) for a, b in zip(report["weights"], want, strict=True)) > 1e-5:
            raise Wrong(
                f"{where.format(rank)}: the sharded model trained to {show(report['weights'])}, one process on every "
                f"rank's batch to {show(want)}: shard should shard the model and change nothing else"
            )


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
