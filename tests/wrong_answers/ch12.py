"""Chapter 12's typical wrong answers, by question number (see the package's docstring)."""

from helpers.exercises.solutions.ch12 import SOLUTIONS

from . import lines_of

_RANK0_HEAD = lines_of(SOLUTIONS[3], 1, 4)


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
#: message a learner who wrote it is told).
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
