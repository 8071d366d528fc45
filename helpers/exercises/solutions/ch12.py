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
        "from torch.distributed.fsdp import fully_shard\n"
        "\n"
        "\n"
        "def shard(model, mesh):\n"
        "    for block in model:\n"
        "        fully_shard(block, mesh=mesh)\n"
        "    fully_shard(model, mesh=mesh)\n"
        "\n"
        "    return model\n"
    ),
}


_SHARD_TEMPLATE = """\
from torch.distributed.fsdp import fully_shard


def shard(model, mesh):
{body}
    return model
"""


_BLOCKS = "    for block in model:\n        fully_shard(block, mesh=mesh)\n"


_ROOT = "    fully_shard(model, mesh=mesh)\n"


#: Typical wrong answers to each question, by number, each with words its verdict must contain (the
#: message a learner who wrote it is told, checked in CI). They live here, not with the questions,
#: because most are the solution with one line changed.
WRONG_ANSWERS: dict[int, tuple[tuple[str, str], ...]] = {
    1: (
        (
            "def bytes_per_rank(n_params, dtype_bytes, optimizer, world_size, strategy):\n"
            "    states = {'SGD': 0, 'SGD with momentum': 1, 'Adam': 2}[optimizer]\n"
            "    return n_params * dtype_bytes * (2 + states) / world_size",
            "DDP does not divide anything, every rank keeps a whole copy",
        ),
        (
            "def bytes_per_rank(n_params, dtype_bytes, optimizer, world_size, strategy):\n"
            "    states = {'SGD': 0, 'SGD with momentum': 1, 'Adam': 2}[optimizer]\n"
            "    return n_params * dtype_bytes * (2 + states)",
            "FSDP keeps only 1/world_size of each part on a rank",
        ),
        (
            "def bytes_per_rank(n_params, dtype_bytes, optimizer, world_size, strategy):\n"
            "    states = {'SGD': 0, 'SGD with momentum': 1, 'Adam': 2}[optimizer]\n"
            "    per_rank = n_params if strategy == 'DDP' else n_params / world_size\n"
            "    return per_rank * dtype_bytes * (1 + states)",
            "one copy is missing; count the parameters, the gradients and every optimizer state",
        ),
        (
            "def bytes_per_rank(n_params, dtype_bytes, optimizer, world_size, strategy):\n"
            "    states = {'SGD': 0, 'SGD with momentum': 1, 'Adam': 1}[optimizer]\n"
            "    per_rank = n_params if strategy == 'DDP' else n_params / world_size\n"
            "    return per_rank * dtype_bytes * (2 + states)",
            "one copy is missing; count the parameters, the gradients and every optimizer state",
        ),
    ),
    2: (
        (_SHARD_TEMPLATE.format(body=_ROOT), "not every block was sharded on its own"),
        (_SHARD_TEMPLATE.format(body=_BLOCKS), "every block is sharded, but not the root"),
        (
            _SHARD_TEMPLATE.format(body=_ROOT + _BLOCKS),
            "fully_shard failed on a block after the whole model was already sharded",
        ),
        (_SHARD_TEMPLATE.format(body="    pass\n"), "the model is not sharded"),
    ),
}
