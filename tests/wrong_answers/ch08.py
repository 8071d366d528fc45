"""Chapter 08's typical wrong answers, by question number (see the package's docstring)."""

_DDP_TEMPLATE = """\
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP


def train_on_rank(rank, world_size):
    torch.manual_seed(0)
    model = nn.Linear(4, 1)
    model = DDP(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(rank)
    x, y = torch.randn(8, 4, generator=g), torch.full((8, 1), float(rank))
    for step in range(5):
{step}
    return [p.detach() for p in model.parameters()]
"""


_STEP = """\
        loss = F.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()"""

#: The gradients averaged by hand with all_reduce instead of DDP: summed, or divided by a hard-coded 2.
_BY_HAND = _DDP_TEMPLATE.replace("    model = DDP(model)\n", "").format(
    step=_STEP.replace(
        "        opt.step()",
        "        for p in model.parameters():\n            dist.all_reduce(p.grad){divide}\n        opt.step()",
    )
)

_SAMPLER = (
    "def rank_indices(n_samples, world_size, rank, epoch):\n"
    "    sampler = DistributedSampler(range(n_samples), num_replicas=world_size, rank=rank, shuffle=True, seed=0)\n"
    "    sampler.set_epoch(epoch)\n"
)

_SCALED = "def scaled_run(world_size, per_rank_batch, base_lr, base_batch):\n"

#: Typical wrong answers to each question, by number, each with words its verdict must contain (the
#: message a learner who wrote it is told).
WRONG_ANSWERS: dict[int, tuple[tuple[str, str], ...]] = {
    1: (
        (
            "def rank_indices(n_samples, world_size, rank, epoch):\n"
            "    return torch.empty(n_samples // world_size, device='meta')",
            "returned a tensor on the meta device, which holds no values",
        ),
        (
            _SAMPLER.replace("    sampler.set_epoch(epoch)\n", "") + "    return list(sampler)",
            "rank_indices(16, 2, 0, 2) returned [12, 9, 11, 13, 2, 15, …]; expected [8, 1, 6, 0, 4, 10, …]: that is "
            "epoch 0's shuffle: call sampler.set_epoch(epoch)",
        ),
        (
            "def rank_indices(n_samples, world_size, rank, epoch):\n"
            "    return list(range(rank, n_samples, world_size))",
            "rank_indices(16, 2, 0, 0) returned [0, 2, 4, 6, 8, 10, …]; expected [12, 9, 11, 13, 2, 15, …]: the "
            "indices are in order: shuffle them",
        ),
        (
            _SAMPLER.replace("rank=rank", "rank=0") + "    return list(sampler)",
            "rank_indices(16, 2, 1, 0) returned [12, 9, 11, 13, 2, 15, …]; expected [10, 6, 8, 5, 14, 0, …]: that is "
            "rank 0's share: pass rank=rank to the sampler",
        ),
        (  # no padding: the ranks past the remainder read one index fewer
            "def rank_indices(n_samples, world_size, rank, epoch):\n"
            "    order = torch.randperm(n_samples, generator=torch.Generator().manual_seed(epoch)).tolist()\n"
            "    return order[rank::world_size]",
            "rank_indices(10, 4, 2, 0) returned [7, 0]; expected [7, 0, 4]: when n_samples does not divide by "
            "world_size, DistributedSampler repeats the shuffle from its start",
        ),
        (  # padded once: short where the padding is longer than the data set (1 sample, 3 ranks)
            "def rank_indices(n_samples, world_size, rank, epoch):\n"
            "    perm = torch.randperm(n_samples, generator=torch.Generator().manual_seed(epoch)).tolist()\n"
            "    perm += perm[: -(-n_samples // world_size) * world_size - n_samples]\n"
            "    return perm[rank::world_size]",
            "rank_indices(1, 3, 2, 0) returned []; expected [0]: when n_samples does not divide by world_size, "
            "DistributedSampler repeats the shuffle from its start, as often as it takes, so that every rank reads "
            "ceil(n_samples / world_size) indices",
        ),
        (  # drop_last=True: no mistake the chapter teaches, so what came back and what was expected
            _SAMPLER.replace("seed=0)", "seed=0, drop_last=True)") + "    return list(sampler)",
            "rank_indices(10, 4, 0, 0) returned [4, 3]; expected [4, 3, 6]",
        ),
        (  # the world size ignored
            _SAMPLER.replace("num_replicas=world_size", "num_replicas=2") + "    return list(sampler)",
            "rank_indices(10, 4, 0, 0) returned [4, 7, 3, 0, 6]; expected [4, 3, 6]",
        ),
        (  # a narrow integer type: right while the indices fit, wrapped past 127 (int8) and 255 (uint8)
            _SAMPLER + "    return torch.tensor(list(sampler)).to(torch.int8)",
            "rank_indices(400, 2, 0, 0) returned [44, 31, -101, -19, 1, 65, …]; expected [44, 287, 155, 237, 257, 321",
        ),
        (
            _SAMPLER + "    return torch.tensor(list(sampler)).to(torch.uint8)",
            "rank_indices(400, 2, 0, 0) returned [44, 31, 155, 237, 1, 65, …]; expected [44, 287, 155, 237, 257, 321",
        ),
        (  # whole-valued floats, shown as they came
            _SAMPLER + "    return [float(i) for i in sampler]",
            "rank_indices(16, 2, 0, 0) returned a list whose element 0 is 12.0: return the indices as ints, not floats",
        ),
        (
            _SAMPLER + "    return torch.tensor(list(sampler), dtype=torch.float16)",
            "rank_indices(16, 2, 0, 0) returned a torch.float16 tensor of shape (8,) on cpu whose element 0 is 12.0: "
            "return the indices as ints, not floats",
        ),
        (  # a bool among the indices (True == 1): shown
            _SAMPLER + "    return [i == 1 or i for i in sampler]",
            "rank_indices(16, 2, 1, 0) returned a list whose element 7 is True: return the indices as ints",
        ),
        (  # the padding repeated by hand, dividing by the data's size: an empty data set has none
            "def rank_indices(n_samples, world_size, rank, epoch):\n"
            "    order = torch.randperm(n_samples, generator=torch.Generator().manual_seed(epoch)).tolist()\n"
            "    total = -(-n_samples // world_size) * world_size\n"
            "    return (order * (total // n_samples + 1))[:total][rank::world_size]",
            "rank_indices(0, 2, 0, 0) raised ZeroDivisionError",
        ),
    ),
    2: (
        # wrapped again every step (accepted before: the weights come out right): each wrap copies rank 0's weights
        # to every rank again, and a wrapper of a wrapper all-reduces the gradients once more
        (
            _DDP_TEMPLATE.replace("    model = DDP(model)\n", "").format(step="        model = DDP(model)\n" + _STEP),
            "on one rank here (world_size 1): the model was wrapped in DDP 5 times: wrap it once, before the loop",
        ),
        (
            _DDP_TEMPLATE.replace("    model = DDP(model)\n", "    plain = model\n").format(
                step=_STEP.replace("model(x)", "DDP(plain)(x)")
            ),
            "the model was wrapped in DDP 5 times: wrap it once, before the loop",
        ),
        (
            _DDP_TEMPLATE.replace("    model = DDP(model)\n", "").format(step=_STEP),
            "on one rank here (world_size 1): no forward pass called a DistributedDataParallel model: wrap the model",
        ),
        (
            _DDP_TEMPLATE.format(step=_STEP.replace("        opt.zero_grad()\n", "")),
            "on one rank here (world_size 1): each step's gradients were added to the last step's: call "
            "opt.zero_grad() every step",
        ),
        (_BY_HAND.format(divide=""), "no forward pass called a DistributedDataParallel model"),
        (_BY_HAND.format(divide="\n            p.grad /= 2"), "no forward pass called a DistributedDataParallel model"),
        (_DDP_TEMPLATE.format(step="        pass"), "opt.step() never ran: write the training step"),
        # a collective on rank 0 only: tests/unit/test_one_sided_collectives.py, with each clock forced first
        # wraps the model but runs the forward pass through the plain module
        (
            _DDP_TEMPLATE.replace("    model = DDP(model)\n", "    ddp_model = DDP(model)\n").format(step=_STEP),
            "no forward pass called a DistributedDataParallel model: wrap the model (model = DDP(model)) and call "
            "the wrapped model (model(x))",
        ),
        (  # the plain module called through DDP's .module: DDP's forward never runs
            _DDP_TEMPLATE.format(step=_STEP.replace("model(x)", "model.module(x)")),
            "on one rank here (world_size 1): no forward pass called a DistributedDataParallel model",
        ),
        (  # the learning rate scaled with the ranks: only the two-rank run shows it
            _DDP_TEMPLATE.replace("lr=0.1", "lr=0.1 * world_size").format(step=_STEP),
            "on rank 0 of two: the optimizer stepped with lr=0.2 (0.1 × world_size): keep the file's lr=0.1",
        ),
        (  # every step under no_sync: nothing averaged, which only the two-rank run shows
            _DDP_TEMPLATE.format(step="        with model.no_sync():\n" + _STEP.replace("        ", "            ")),
            "on rank 0 of two: 5 of the 5 forward passes through DDP ran under no_sync()",
        ),
        (  # the gradients zeroed between backward and step: the weights stay where they started
            _DDP_TEMPLATE.format(
                step=_STEP.replace("        opt.zero_grad()\n", "").replace(
                    "backward()", "backward()\n        opt.zero_grad()"
                )
            ),
            "on one rank here (world_size 1): the weights never changed: after 5 opt.step() calls they are the "
            "starting weights, so no step found a gradient",
        ),
        (  # the loss from a detached output (made to require grad): no gradient reaches the weights
            _DDP_TEMPLATE.format(step=_STEP.replace("model(x), y)", "model(x).detach(), y).requires_grad_()")),
            "on one rank here (world_size 1): the weights never changed",
        ),
        (  # the step before backward(), after zero_grad(): no step finds a gradient
            _DDP_TEMPLATE.format(
                step=_STEP.replace(
                    "        loss.backward()\n        opt.step()", "        opt.step()\n        loss.backward()"
                )
            ),
            "on one rank here (world_size 1): the weights never changed",
        ),
        (  # bfloat16 weights: no blame, what differed
            _DDP_TEMPLATE.replace("nn.Linear(4, 1)", "nn.Linear(4, 1).to(torch.bfloat16)")
            .replace("float(rank))\n", "float(rank))\n    x, y = x.to(torch.bfloat16), y.to(torch.bfloat16)\n")
            .format(step=_STEP),
            "differ from one process trained on every rank's data",
        ),
        (
            _DDP_TEMPLATE.format(step=_STEP).replace("    return", "    dist.destroy_process_group()\n    return"),
            "train_on_rank destroyed the process group: the launcher made it and ends it",
        ),
        (
            _DDP_TEMPLATE.format(step=_STEP).replace("    return [p.detach() for p in model.parameters()]\n", ""),
            "train_on_rank returned None; return the model's parameters",
        ),
    ),
    3: (
        (
            _SCALED + "    return per_rank_batch, base_lr * per_rank_batch / base_batch",
            "scaled_run(2, 16, 0.05, 32) returned (16, 0.025); expected (32, 0.05): the global batch is every rank's "
            "batch together, not one rank's",
        ),
        (
            _SCALED + "    return world_size * per_rank_batch, base_lr",
            "scaled_run(4, 64, 0.1, 64) returned (256, 0.1); expected (256, 0.4): the rate was kept, but the global "
            "batch is not the recipe's",
        ),
        (
            _SCALED + "    return world_size * per_rank_batch, base_lr * world_size",
            "the rate follows the global batch, not the number of ranks",
        ),
        (
            _SCALED + "    return world_size * per_rank_batch, base_lr * per_rank_batch / base_batch",
            "scaled_run(2, 16, 0.05, 32) returned (32, 0.025); expected (32, 0.05)",
        ),
        (
            _SCALED + "    global_batch = world_size * per_rank_batch\n"
            "    return global_batch, base_lr * base_batch / global_batch",
            "scaled_run(4, 64, 0.1, 64) returned (256, 0.025); expected (256, 0.4)",
        ),
        (
            _SCALED + "    global_batch = world_size * per_rank_batch\n"
            "    return base_lr * global_batch / base_batch, global_batch",
            "scaled_run(2, 16, 0.05, 32) returned (0.05, 32); expected (32, 0.05)",
        ),
        (
            _SCALED + "    n = world_size * per_rank_batch\n    return n, base_lr * (n / base_batch) ** 0.5",
            "scaled_run(4, 64, 0.1, 64) returned (256, 0.2); expected (256, 0.4)",
        ),
        (  # the ratio rounded up: right where it is whole, and never the rate kept on every case it gets wrong
            "import math\n\n" + _SCALED + "    n = world_size * per_rank_batch\n"
            "    return n, base_lr * math.ceil(n / base_batch)",
            "scaled_run(8, 32, 0.001, 512) returned (256, 0.001); expected (256, 0.0005)",
        ),
        (  # the ratio of the batches rounded down where a rank's batch is larger than the recipe's
            _SCALED + "    ratio = per_rank_batch / base_batch\n"
            "    ratio = per_rank_batch // base_batch if ratio >= 1 else ratio\n"
            "    return world_size * per_rank_batch, base_lr * world_size * ratio",
            "scaled_run(2, 80, 0.1, 32) returned (160, 0.4); expected (160, 0.5)",
        ),
        (  # whole-number division: right only where the global batch is a multiple of the recipe's
            _SCALED + "    n = world_size * per_rank_batch\n    return n, base_lr * (n // base_batch)",
            "scaled_run(8, 32, 0.001, 512) returned (256, 0",  # 0 or 0.0, as cases.show writes a float zero
        ),
    ),
}


#: Right answers other than the solution, as a learner could write them: each must be accepted.
RIGHT_ANSWERS: dict[int, tuple[str, ...]] = {
    1: (
        "def rank_indices(n_samples, world_size, rank, epoch):\n"
        "    from torch.utils.data import DistributedSampler\n"
        "    sampler = DistributedSampler(range(n_samples), num_replicas=world_size, rank=rank, seed=0)\n"
        "    sampler.set_epoch(epoch)\n"
        "    return iter(sampler)",
        _SAMPLER + "    return (i for i in sampler)",
        _SAMPLER + "    return tuple(sampler)",
        _SAMPLER + "    return torch.tensor(list(sampler))",
        _SAMPLER + "    import numpy as np\n    return np.array(list(sampler))",
        _SAMPLER + "    import numpy as np\n    return [np.int64(i) for i in sampler]",
        _SAMPLER + "    return list(torch.tensor(list(sampler)))",  # 0-d int64 tensors, one per index
        # by hand, as DistributedSampler does it: the shuffle, padded from its start, then every world_size-th
        "def rank_indices(n_samples, world_size, rank, epoch):\n"
        "    order = torch.randperm(n_samples, generator=torch.Generator().manual_seed(epoch)).tolist()\n"
        "    total = -(-n_samples // world_size) * world_size\n"
        "    while len(order) < total:\n"
        "        order += order[: total - len(order)]\n"
        "    return order[rank::world_size]",
    ),
    2: (
        # the DDP model itself returned; the gradients zeroed after the step (none are there at the first)
        _DDP_TEMPLATE.format(
            step="        loss = F.mse_loss(model(x), y)\n        loss.backward()\n        opt.step()\n"
            "        opt.zero_grad()"
        ).replace("    return [p.detach() for p in model.parameters()]", "    return model"),
        # DDP's forward called by name: it prepares the gradient averaging as model(x) does
        _DDP_TEMPLATE.format(step=_STEP.replace("model(x)", "model.forward(x)")),
        # the class by its full name, the loss written out, the weights as lists of numbers
        _DDP_TEMPLATE.replace("model = DDP(model)", "model = torch.nn.parallel.DistributedDataParallel(model)")
        .replace("F.mse_loss(model(x), y)", "((model(x) - y) ** 2).mean()")
        .replace("[p.detach() for p in", "[p.tolist() for p in")
        .format(step=_STEP.replace("F.mse_loss(model(x), y)", "((model(x) - y) ** 2).mean()")),
    ),
    3: (
        _SCALED + "    return [world_size * per_rank_batch, base_lr * world_size * per_rank_batch / base_batch]",
        _SCALED + "    n = world_size * per_rank_batch\n    return float(n), base_lr * (n / base_batch)",
        _SCALED + "    import torch\n    n = world_size * per_rank_batch\n"
        "    return torch.tensor(n), torch.tensor(base_lr * n / base_batch, dtype=torch.float64)",
        _SCALED + "    from fractions import Fraction\n    n = world_size * per_rank_batch\n"
        "    return n, base_lr * Fraction(n, base_batch)",
    ),
}
