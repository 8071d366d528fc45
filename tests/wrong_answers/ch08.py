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
            "def rank_indices(n_samples, world_size, rank, epoch):\n"
            "    sampler = DistributedSampler(range(n_samples), num_replicas=world_size, rank=rank, "
            "shuffle=True, seed=0)\n"
            "    return list(sampler)",
            "repeats epoch 0's order: call sampler.set_epoch(epoch)",
        ),
        (
            "def rank_indices(n_samples, world_size, rank, epoch):\n"
            "    return list(range(rank, n_samples, world_size))",
            "gives rank 0 the samples 0, 2, 4, … in order: shuffle",
        ),
        (
            "def rank_indices(n_samples, world_size, rank, epoch):\n"
            "    sampler = DistributedSampler(range(n_samples), num_replicas=world_size, rank=0, seed=0)\n"
            "    sampler.set_epoch(epoch)\n"
            "    return list(sampler)",
            "is rank 0's share: pass rank=1",
        ),
        (
            "def rank_indices(n_samples, world_size, rank, epoch):\n"
            "    order = torch.randperm(n_samples, generator=torch.Generator().manual_seed(epoch)).tolist()\n"
            "    return order[rank::world_size]",
            "has 2 indices; each of 4 ranks reads ceil(10 / 4) = 3",
        ),
    ),
    2: (
        (
            _DDP_TEMPLATE.replace("    model = DDP(model)\n", "").format(step=_STEP),
            "each trained on its own data alone, so no gradient was averaged over the ranks",
        ),
        (
            _DDP_TEMPLATE.format(step=_STEP.replace("        opt.zero_grad()\n", "")),
            "each step's gradients were added to the last step's: call optimizer.zero_grad() every step",
        ),
        (
            _DDP_TEMPLATE.replace("    model = DDP(model)\n", "").format(
                step=_STEP.replace(
                    "        opt.step()",
                    "        for p in model.parameters():\n"
                    "            dist.all_reduce(p.grad)  # a sum over the ranks\n"
                    "        opt.step()",
                )
            ),
            "their gradients were summed, not averaged",
        ),
        (_DDP_TEMPLATE.format(step="        pass"), "the weights did not change: write the training step"),
        # a collective on rank 0 only: tests/unit/test_one_sided_collectives.py, with each clock forced first
        # wraps the model but runs the forward pass through the plain module
        (
            _DDP_TEMPLATE.replace("    model = DDP(model)\n", "    ddp_model = DDP(model)\n").format(step=_STEP),
            "run the forward pass through the wrapped model",
        ),
    ),
    3: (
        (
            "def scaled_run(world_size, per_rank_batch, base_lr, base_batch):\n"
            "    return per_rank_batch, base_lr * per_rank_batch / base_batch",
            "the global batch is every rank's batch together, 2 × 16 = 32, not one rank's 16",
        ),
        (
            "def scaled_run(world_size, per_rank_batch, base_lr, base_batch):\n"
            "    return world_size * per_rank_batch, base_lr",
            "the learning rate was kept at 0.1, but the global batch is now 256, not the recipe's 64",
        ),
        (
            "def scaled_run(world_size, per_rank_batch, base_lr, base_batch):\n"
            "    return world_size * per_rank_batch, base_lr * world_size",
            "the rate was scaled by the number of ranks (2), but it follows the global batch",
        ),
        (
            "def scaled_run(world_size, per_rank_batch, base_lr, base_batch):\n"
            "    return world_size * per_rank_batch, base_lr * per_rank_batch / base_batch",
            "the rate was scaled by one rank's batch (16)",
        ),
        (
            "def scaled_run(world_size, per_rank_batch, base_lr, base_batch):\n"
            "    global_batch = world_size * per_rank_batch\n"
            "    return global_batch, base_lr * base_batch / global_batch",
            "the rate was scaled the wrong way: a global batch 4 times the recipe's takes a rate 4 times as large",
        ),
        (
            "def scaled_run(world_size, per_rank_batch, base_lr, base_batch):\n"
            "    global_batch = world_size * per_rank_batch\n"
            "    return base_lr * global_batch / base_batch, global_batch",
            "the two are swapped; return (global_batch, lr)",
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
    ),
}
