"""Chapter 12's exercise solutions, by question number (see the package's docstring)."""

SOLUTIONS: dict[int, str] = {
    1: (
        "def bytes_per_rank(n_params, dtype_bytes, optimizer, world_size, strategy):\n"
        "    states = {'SGD': 0, 'SGD with momentum': 1, 'Adam': 2}[optimizer]\n"
        "    copies = 2 + states  # parameters, gradients, optimizer states\n"
        "    per_rank = n_params if strategy == 'DDP' else -(-n_params // world_size)\n"
        "    return per_rank * dtype_bytes * copies"
    ),
    2: (
        "from torch.distributed.fsdp import fully_shard\n\n\n"
        "def shard(model, mesh):\n"
        "    for block in model:\n"
        "        fully_shard(block, mesh=mesh)\n"
        "    fully_shard(model, mesh=mesh)\n"
        "    return model\n"
    ),
    3: (
        "import math\n\n\n"
        "def rank0_bytes(shapes, world_size):\n"
        "    numbers = 0\n"
        "    for shape in shapes:\n"
        "        rows = -(-shape[0] // world_size)  # rank 0's share of dim 0, the size every rank is padded to\n"
        "        numbers += rows * math.prod(shape[1:])\n"
        "    return numbers * (4 + 4 + 4 + 4)  # float32 shard, its gradient, exp_avg, exp_avg_sq"
    ),
}
