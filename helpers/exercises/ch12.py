"""Chapter 12 exercises: ranks a model needs; a model built on meta, sharded, never held whole; rank 0's bytes."""

import math
import warnings
from operator import sub
from typing import Any
from unittest import mock

import torch
from torch import nn

from .. import sharding
from ..answers import expect_function, expect_number
from .cases import Slip, questions, show, table
from .ch08 import DESTROYED, TWO_RANK_TIME_LIMIT, run_here, run_on_two_ranks

_WORLD, _ODD = 16_384, 2**40 + 1  # Q3: remainder 1 on 16,384 ranks; 2**40 + 1 (float step 2**-12) defeats int(x + e)
_FLOAT32 = "lost digits in float32 arithmetic (about 7 significant digits): compute it with integers"
_per = lambda opt, size=sharding.STATE_BYTES, copies=2: size * (copies + sharding.OPTIMIZER_STATES[opt])  # a parameter
#: The fewest ranks whose shards (ceil(n / ranks) parameters, `per(o)` bytes each) and `a` bytes fit in `g`; or None.
_ranks = lambda n, o, g, a, per=_per: None if a > g or (m := (g - a) // per(o)) < 1 else max(1, -(-n // m))
#: 7 B on T4s, rounded shards, room for 0, 1 or exactly 1 parameter, strict or split floors, 1 T, 10**6 ranks, floats.
_RANKS = ((7 * 10**9, "Adam", sharding.T4_BYTES, 2 * 10**9), (10**9, "SGD with momentum", 10**10, 0))
_RANKS += ((10, "Adam", 156, 100), (1000, "Adam", 1000, 995), (50, "SGD", 100, 200), (12, "Adam", 148, 100))
_RANKS += ((10**12, "Adam", 80 * 10**9, 10**10), (3 * 10**6, "SGD", 8 * 10**6, 10**6), (10, "Adam", 116, 100))
_RANKS += ((10**9, "SGD with momentum", 12 * 10**9 + 5, 0), (10**6, "Adam", 26, 10), (1, "Adam", 20, 10))
_RANKS += ((45, "SGD with momentum", 120, 0), (7, "SGD", 156, 100), (1, "SGD", 15, 7), (1001, "SGD", 8000, 0))
_RANKS += ((10, "SGD with momentum", 60, 0), (23, "SGD", 17, 0), (15001, "SGD", 40000, 0))
_HALF = "that is half the bytes: 16-bit numbers, or copies left out (gradients, states)? All are float32, 4 bytes"
_RANKS_SLIPS = (
    Slip(lambda n, o, g, a: -(-(n * _per(o) + a) // g), "FSDP does not shard activations: each rank keeps them whole"),
    Slip(lambda n, o, g, a: _ranks(n, o, g, 0), "the activations come on top of each rank's shards"),
    Slip(lambda n, o, g, a: None if a >= g else -(-n * _per(o) // (g - a)), "a shard is ceil(n_params/ranks) params"),
    Slip(lambda n, o, g, a: _ranks(n, o.replace(" with momentum", ""), g, a), "SGD with momentum keeps one state"),
    Slip(lambda *c: _ranks(*c, per=lambda o: _per(o, copies=1)), "one copy is missing: weights, gradients, states"),
    Slip(lambda *c: _ranks(*c, per=lambda o: _per(o, 2)), _HALF),
    Slip(lambda n, o, g, a: _ranks(n, o, g - 1, a), "a GPU filled to its last byte fits: <=, whole bytes"),
)
_whole = lambda value, call: value if value is None else expect_number(value, f"{call} to return a count of ranks")
_TAKES = "(n_params, optimizer, gpu_bytes, activation_bytes)"
_check_ranks = table("ranks_needed", _TAKES, _RANKS, _ranks, rel=0, slips=_RANKS_SLIPS, answer=_whole)
WIDTH, STEPS, LR = 8, 3, 0.05
_EACH = "call fully_shard(block, mesh=mesh) on each block, then fully_shard(model, mesh=mesh)"
#: The most a weight of `a` is away from the same weight of `b`; nan where one is nan.
_gap = lambda a, b: max((abs(d) for k in b for d in map(sub, a[k], b[k])), key=lambda d: (d != d, d), default=0)
_model = lambda blocks: nn.Sequential(*[nn.Sequential(nn.Linear(WIDTH, WIDTH), nn.ReLU()) for _ in range(blocks)])


def _weights(model: torch.nn.Module) -> dict[str, list[float]]:
    """The model's weights by name and shape, whole (a shard is gathered from every rank), as float32 numbers."""
    full = {name: p.full_tensor() if hasattr(p, "full_tensor") else p for name, p in model.named_parameters()}
    return {f"{name} {tuple(p.shape)}": p.detach().float().reshape(-1).tolist() for name, p in full.items()}


def _train(model: torch.nn.Module, ranks: range) -> dict[str, list[float]]:
    """The weights after training on the batches of `ranks` (their mean loss)."""
    batches = [torch.randn(2, 4, WIDTH, generator=torch.Generator().manual_seed(r)) for r in ranks]
    opt = torch.optim.Adam(model.parameters(), lr=LR)
    for _ in range(STEPS):
        opt.zero_grad()
        (sum(torch.nn.functional.mse_loss(model(x).float(), y) for x, y in batches) / len(batches)).backward()
        opt.step()
    return _weights(model)


def run_build(rank: int, world_size: int, build: Any) -> dict[str, str]:
    """Runs in each rank: `build`, watched (what this rank held whole, and to_empty's memory filled with NaN)."""
    from torch.distributed.fsdp._fully_shard._fsdp_param import FSDPParam  # made for each parameter fully_shard shards
    from torch.utils._python_dispatch import TorchDispatchMode

    built, peak, gathered, copies, drawn = [], [0, "", "", ()], [], [], {}  # drawn: a storage's (bounds, values)
    to_empty, local = nn.Module.to_empty, lambda p: getattr(p, "to_local", lambda: p)()
    storage = lambda p: local(p).untyped_storage().data_ptr()

    class Gathers(TorchDispatchMode):  # collectives in build: a sharded model gathers only in a forward or backward
        def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
            gathered.extend([func] * ("c10d" in str(func) and "gather" in str(func)))  # a collective
            out = func(*args, **(kwargs or {}))
            if func._opname in ("uniform_", "normal_") and not out.is_meta:  # nn.init's draws (reset_parameters')
                drawn[storage(out)] = (func._opname[:-1], *(*args[1:3], 0.0, 1.0)[:2]), local(out).clone(), out  # kept
            return out

    def look(when: str) -> None:  # parameters with memory of their own, not DTensor shards: held whole here
        named = [(n, p) for m in built + copies for n, p in m.named_parameters()]
        held = {n: p for n, p in named if not hasattr(p, "to_local") and not p.is_meta}
        if (size := sum(p.numel() * p.element_size() for p in held.values())) > peak[0]:
            names = ", ".join(held) if len(held) < len([*built[-1].parameters()]) else "the whole model"
            peak[:] = size, names, when, tuple(held)

    def spy(module: nn.Module, *args: Any, **kwargs: Any) -> nn.Module:
        [local(p).detach().fill_(math.nan) for p in to_empty(module, *args, **kwargs).parameters()]  # show: no values
        [drawn.pop(storage(p), None) for p in module.parameters()]  # fresh memory: nothing drawn into it yet
        copies.extend([module] * (not any(module is x for m in built for x in m.modules())))  # a whole copy, say
        return look("when to_empty gave it memory before fully_shard") or module

    param = lambda *a, init=FSDPParam.__init__, **k: look("when fully_shard began sharding it") or init(*a, **k)
    make_model = lambda: built.append(_model(2 + world_size)) or look("when make_model() returned") or built[-1]
    mesh = torch.distributed.init_device_mesh("cpu", (world_size,), mesh_dim_names=("shard",))
    with mock.patch.object(nn.Module, "to_empty", spy), mock.patch.object(FSDPParam, "__init__", param), Gathers():
        with warnings.catch_warnings():  # reset_parameters() on a CPU mesh: DTensor's note on its random numbers
            warnings.filterwarnings("ignore", "DTensor random operators")
            returned = build(make_model, mesh)
    model = next((m for m in built if m is returned), built[-1] if built else nn.Sequential())
    wrong, kinds = _not_sharded(model, returned), {f"{p.dtype} on {local(p).device}" for p in model.parameters()}
    look("when build returned")
    mine = sum(local(p).numel() * local(p).element_size() for n, p in model.named_parameters() if n in peak[3])
    if not wrong and world_size > 1 and peak[0]:  # on one rank the shard is the whole model
        wrong = f"this rank held {peak[1]} unsharded ({peak[0]:,} bytes) {peak[2]}, where its shards are {mine:,} "
        wrong += "bytes: no rank should hold more than its shards"
    if not wrong and world_size > 1 and gathered:
        wrong = "build gathered parameters across ranks (a forward? full_tensor()?): no rank may hold more than shards"
    placed = lambda p: getattr(p, "placements", ())  # none: a plain tensor, left unsharded (ignored_params?)
    on_mesh = lambda p: len(placed(p)) == 1 and p.device_mesh.mesh_dim_names == mesh.mesh_dim_names
    if not wrong and (odd := [(n, placed(p)) for n, p in model.named_parameters() if not on_mesh(p)]):
        twice = "sharded twice (the model before its blocks?)" if len(odd[0][1]) > 1 else "sharded on another mesh"
        how = "replicated" if "Replicate" in str(odd[0][1]) else twice if odd[0][1] else "left unsharded"
        wrong = f"{odd[0][0]} was {how}: shard each block, then the model, on the mesh build was given"
    if not wrong and (kinds := kinds - {"torch.float32 on cpu"}):
        wrong = f"build returned weights in {', '.join(sorted(kinds))}: keep them float32, on the mesh's device"
    if not wrong and (empty := [n for n, p in model.named_parameters() if local(p).isnan().any()]):
        wrong = f"{', '.join(empty)} held no values when build returned: to_empty gives memory, not values (the "
        wrong += "checker filled it with NaN to show it); call reset_parameters() after it"
    same = lambda p: [d for d in drawn.values() if d[1].shape == local(p).shape and torch.equal(d[1], local(p))]
    got, r = {n: drawn.get(storage(p)) or [*same(p), ((), None)][0] for n, p in model.named_parameters()}, WIDTH**-0.5
    like = lambda b: b[:1] == ("uniform",) and max(map(abs, map(sub, b[1:], (-r, r)))) < 1e-6  # reset_parameters()'
    odd = [(n, b) for n, (b, *_) in got.items() if not like(b)]
    if not wrong and odd:
        how = ", ".join(f"{n} drawn from {b[0]}{show(b[1:])}" if b else f"{n} not drawn by nn.init" for n, b in odd[:3])
        wrong = f"{how}: reset_parameters() draws from ±{r:.3g} (1/sqrt(in_features)): call it after to_empty, last"
    if not wrong and (
        changed := [n for n, (_, v, *_) in got.items() if not torch.equal(local(model.get_parameter(n)), v)]
    ):
        wrong = f"{', '.join(changed[:3])} changed after reset_parameters() drew them: leave the values it gives"
    if not wrong:
        plain = _model(2 + world_size)  # one process, from the weights build gave the model
        plain.load_state_dict({name: t.full_tensor() for name, t in model.state_dict().items()})
        if not (gap := _gap(_train(model, range(rank, rank + 1)), _train(plain, range(world_size)))) <= 1e-5:
            wrong = f"the sharded model trained to weights up to {gap:.3g} away from one process's from the same start "
            wrong += "(both in float32: mixed precision, or any change to the arithmetic, shows here)"
    return {"wrong": wrong} if wrong else {}


def _not_sharded(model: torch.nn.Module, returned: Any) -> str | None:
    """What keeps `model` from being sharded as asked (each block, then the root, in place, returned), if anything."""
    calls = [
        f"model[{n.replace('.', '][')}]" if n else "model" for n, m in model.named_modules() if hasattr(m, "reshard")
    ]
    missing = [f"model[{i}]" for i, b in enumerate(model) if not hasattr(b, "reshard")]
    if not torch.distributed.is_initialized():
        return f"build {DESTROYED}"
    if returned is not model:
        other = "another module" if isinstance(returned, torch.nn.Module) else show(returned)
        return f"build returned {other}, not the model make_model() built: shard that model in place, return it"
    if not calls:
        return "the model is not sharded: call fully_shard(block, mesh=mesh) on each block, then on the model"
    if missing or "model" not in calls:
        said = f"fully_shard was called on {', '.join(calls)}, not on {', '.join(missing or ['model'])}"
        said += " (each block first, so that only one block's parameters are gathered at a time)" * (calls == ["model"])
        return f"{said}: {_EACH}"
    states = [block._get_fsdp_state() for block in model]  # one per fully_shard call: one unit, gathered at once
    if together := [f"model[{i}]" for i, state in enumerate(states) if states.count(state) > 1]:
        return f"{', '.join(together)} were sharded together as one unit, one all-gather for them all: {_EACH}"
    return None


def _check_build(fn: Any) -> None:
    expect_function(fn, "build", "(make_model, mesh)") or run_here(run_build, fn)
    run_on_two_ranks(run_build, (fn,), file="build_answer.py")


#: The chapter's model (lists), rows that divide, 1 or 0, fewer than ranks, 5 on 4, one rank, past int32, none, 2 big.
_RANK0_CASES = (([[99, 64], [99], [33, 99], [33], [1, 33], [1]], 2), ([(6, 4), (6,)], 3))
_RANK0_CASES += (([(1, 8), (5, 3, 2), (0, 4)], 2), ([(10, 4), (10,), (3, 10), (3,)], 4), ([(5, 3), (5,)], 4))
_RANK0_CASES += (([(7, 7), (7,)], 1), ([(50_000, 50_000)], 2), ([], 2), ([(_WORLD + 1, 8)], _WORLD), ([(2 * _ODD,)], 2))
_first_chunk = lambda shape, world: torch.empty(shape, device="meta").chunk(world)[0].numel()
#: Rank 0's bytes: dim 0 cut by torch.chunk, padded to the first chunk (`cut`); `per` bytes a number (all float32).
_rank0 = lambda shapes, world, cut=_first_chunk, per=sharding.STATE_BYTES * 4: per * sum(cut(s, world) for s in shapes)
_EIGHT = "that is 8 bytes a number: either Adam's two states are missing, or all four were counted in bfloat16 "
_EIGHT += "(param_dtype only sets the gathered copies' dtype: the shard, its gradient and Adam's states are float32)"
_RANK0_SLIPS = (
    Slip(lambda s, w: -(-sum(map(math.prod, s)) // w) * 16, "that is ceil(n_params / world_size) numbers"),
    Slip(lambda *c: _rank0(*c, lambda s, w: -(-math.prod(s) // w)), "FSDP2 cuts whole rows (dim 0), not numbers"),
    Slip(lambda *c: _rank0(*c, lambda s, w: s[0] // w * math.prod(s[1:])), "the rows were rounded down: ceil them"),
    Slip(lambda *case: _rank0(*case, per=8), _EIGHT),
    Slip(lambda *case: _rank0(*case, per=1), "that is a count of numbers; return bytes"),
    Slip(lambda *case: torch.tensor(_rank0(*case)).float().item(), f"the bytes {_FLOAT32}"),
)
_check_rank0_bytes = table("rank0_bytes", "(shapes, world_size)", _RANK0_CASES, _rank0, rel=0, slips=_RANK0_SLIPS)

_TEXTS = {
    "ranks_needed": "Write `ranks_needed(n_params, optimizer, gpu_bytes, activation_bytes)`: the fewest ranks FSDP "
    "needs so that each rank's parameters, gradients and optimizer states (section 5's count, float32) and "
    "activation_bytes fit in gpu_bytes; None if no number of ranks does.\nA rank keeps ceil(n_params / ranks) "
    "parameters at 4 × (2 + states) bytes each, and all its activations (FSDP does not shard them): find the most "
    "parameters a rank can keep, then the ranks. Integers only.",
    "build": "Fix `build(make_model, mesh)` in build_answer.py so that no rank ever holds more than its shards, and "
    "every parameter gets its values from reset_parameters().\nSharding a meta parameter allocates nothing; to_empty "
    "after fully_shard gives each rank its shards alone; to_empty gives memory without values, so initialise last.",
    "rank0_bytes": "Write `rank0_bytes(shapes, world_size)`: the bytes rank 0 keeps for the parameters, gradients and "
    "Adam's states of a model whose parameters have the shapes `shapes`, sharded with `fully_shard` on `world_size` "
    "ranks and `MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)`.\nPer parameter, rank 0 "
    "holds the first of world_size chunks along dim 0: ceil(rows / world_size) rows of prod(shape[1:]) numbers. "
    "param_dtype changes only the gathered copies; the shard, its gradient and Adam's two states are float32.",
}
_CHECKS = (_check_ranks, _check_build, _check_rank0_bytes)
QUESTIONS = questions("12", _TEXTS, _CHECKS, {"build": {"file": "build_answer.py", "time_limit": TWO_RANK_TIME_LIMIT}})
