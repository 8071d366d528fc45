"""Chapter 12's exercise solutions, by question number (see the package's docstring)."""

SOLUTIONS: dict[int, str] = {
    1: """def bytes_per_rank(n_params, dtype_bytes, optimizer, world_size, strategy):
    copies = 2 + {'SGD': 0, 'SGD with momentum': 1, 'Adam': 2}[optimizer]  # parameters, gradients, states
    per_rank = n_params if strategy == 'DDP' else -(-n_params // world_size)
    return per_rank * dtype_bytes * copies""",
    2: """import torch
from torch.distributed.fsdp import fully_shard


def build(make_model, mesh):
    with torch.device("meta"):
        model = make_model()  # shapes only, no memory yet
    for block in model:
        fully_shard(block, mesh=mesh)
    fully_shard(model, mesh=mesh)
    model.to_empty(device="cpu")  # real memory, uninitialised
    for module in model.modules():
        if hasattr(module, "reset_parameters"):
            module.reset_parameters()
    return model""",
    3: """import math


def rank0_bytes(shapes, world_size):
    # rank 0's share of each dim 0, ceil(rows / world_size), the size every rank is padded to
    numbers = sum(-(-shape[0] // world_size) * math.prod(shape[1:]) for shape in shapes)
    return numbers * (4 + 4 + 4 + 4)  # float32 shard, its gradient, exp_avg, exp_avg_sq""",
}
