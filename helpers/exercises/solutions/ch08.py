"""Chapter 08's exercise solutions, by question number (see the package's docstring)."""

SOLUTIONS: dict[int, str] = {
    1: (
        "def rank_indices(n_samples, world_size, rank, epoch):\n"
        "    sampler = DistributedSampler(range(n_samples), num_replicas=world_size, rank=rank, shuffle=True, seed=0)\n"
        "    sampler.set_epoch(epoch)\n"
        "    return list(sampler)"
    ),
    2: (
        "import torch\n"
        "import torch.nn.functional as F\n"
        "from torch import nn\n"
        "from torch.nn.parallel import DistributedDataParallel as DDP\n"
        "\n"
        "\n"
        "def train_on_rank(rank, world_size):\n"
        "    torch.manual_seed(0)\n"
        "    model = nn.Linear(4, 1)\n"
        "    model = DDP(model)\n"
        "    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "    g = torch.Generator().manual_seed(rank)\n"
        "    x, y = torch.randn(8, 4, generator=g), torch.full((8, 1), float(rank))\n"
        "    for step in range(5):\n"
        "        loss = F.mse_loss(model(x), y)\n"
        "        opt.zero_grad()\n"
        "        loss.backward()\n"
        "        opt.step()\n"
        "    return [p.detach() for p in model.parameters()]\n"
    ),
    3: (
        "def scaled_run(world_size, per_rank_batch, base_lr, base_batch):\n"
        "    global_batch = world_size * per_rank_batch\n"
        "    return global_batch, base_lr * global_batch / base_batch"
    ),
}
