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
    3: (
        "import math\n"
        "\n"
        "\n"
        "def rank0_bytes(shapes, world_size):\n"
        "    numbers = 0\n"
        "    for shape in shapes:\n"
        "        rows = -(-shape[0] // world_size)  # rank 0's share of dim 0, the size every rank is padded to\n"
        "        numbers += rows * math.prod(shape[1:])\n"
        "    return numbers * (4 + 4 + 4 + 4)  # float32 shard, its gradient, exp_avg, exp_avg_sq"
    ),
}


_RANK0_HEAD = "import math\n\n\ndef rank0_bytes(shapes, world_size):\n"


_RANK0_ROWS = "    numbers = sum(-(-s[0] // world_size) * math.prod(s[1:]) for s in shapes)\n"


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
    3: (
        (
            _RANK0_HEAD + "    n_params = sum(math.prod(s) for s in shapes)\n"
            "    return -(-n_params // world_size) * 16",
            "ceil(n_params / world_size) = 4,885 numbers × 16 bytes: but FSDP2 cuts every parameter along dim 0",
        ),
        (
            _RANK0_HEAD + "    return sum(-(-math.prod(s) // world_size) for s in shapes) * 16",
            "each parameter's numbers were split evenly, but FSDP2 cuts whole rows (dim 0)",
        ),
        (
            _RANK0_HEAD + "    numbers = sum(s[0] // world_size * math.prod(s[1:]) for s in shapes)\n"
            "    return numbers * 16",
            "the rows were rounded down; rank 0 takes ceil(rows / world_size) rows",
        ),
        (
            _RANK0_HEAD + _RANK0_ROWS + "    return numbers * 2 * 4  # bfloat16: shard, gradient, exp_avg, exp_avg_sq",
            "everything was counted in bfloat16, but param_dtype is only the dtype of the gathered copies",
        ),
        (
            _RANK0_HEAD + _RANK0_ROWS + "    return numbers * (2 + 2 + 4 + 4)  # 16-bit weights and gradients",
            "12 bytes a number of rank 0's shard; training with Adam keeps 4 float32 numbers",
        ),
        (
            _RANK0_HEAD + _RANK0_ROWS + "    return numbers",
            "is rank 0's count of numbers; return bytes (16 for each)",
        ),
    ),
}
