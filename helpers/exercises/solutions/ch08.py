"""Chapter 08's exercise solutions, by question number (see the package's docstring)."""

SOLUTIONS: dict[int, str] = {
    1: """def rank_indices(n_samples, world_size, rank, epoch):
    sampler = DistributedSampler(range(n_samples), num_replicas=world_size, rank=rank, shuffle=True, seed=0)
    sampler.set_epoch(epoch)
    return list(sampler)""",
    2: """import torch
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
        loss = F.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return [p.detach() for p in model.parameters()]
""",
    3: """def scaled_run(world_size, per_rank_batch, base_lr, base_batch):
    global_batch = world_size * per_rank_batch
    return global_batch, base_lr * global_batch / base_batch""",
}
