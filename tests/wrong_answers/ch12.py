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
            "DDP does not divide anything: every rank keeps a whole copy",
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
            "    per_rank = n_params if strategy == 'DDP' else -(-n_params // world_size)\n"
            "    return per_rank * dtype_bytes * (1 + states)",
            "one copy is missing: count the parameters, the gradients and every optimizer state",
        ),
        (  # two mistakes (a copy missing, the shard not rounded up): no one mistake explains every case
            "def bytes_per_rank(n_params, dtype_bytes, optimizer, world_size, strategy):\n"
            "    states = {'SGD': 0, 'SGD with momentum': 1, 'Adam': 2}[optimizer]\n"
            "    per_rank = n_params if strategy == 'DDP' else n_params / world_size\n"
            "    return per_rank * dtype_bytes * (1 + states)",
            "bytes_per_rank(1_000_000, 4, 'Adam', 1, 'DDP') returned 12_000_000; expected 16_000_000",
        ),
        (
            "def bytes_per_rank(n_params, dtype_bytes, optimizer, world_size, strategy):\n"
            "    states = {'SGD': 0, 'SGD with momentum': 1, 'Adam': 1}[optimizer]\n"
            "    per_rank = n_params if strategy == 'DDP' else -(-n_params // world_size)\n"
            "    return per_rank * dtype_bytes * (2 + states)",
            "one copy is missing: count the parameters, the gradients and every optimizer state",
        ),
        (
            "def bytes_per_rank(n_params, dtype_bytes, optimizer, world_size, strategy):\n"
            "    states = {'SGD': 0, 'SGD with momentum': 1, 'Adam': 2}[optimizer]\n"
            "    per_rank = n_params if strategy == 'DDP' else n_params // world_size\n"
            "    return per_rank * dtype_bytes * (2 + states)",
            "returned 4_000_000; expected 4_000_016: the shard was rounded down; round it up",
        ),
        (
            "def bytes_per_rank(n_params, dtype_bytes, optimizer, world_size, strategy):\n"
            "    states = {'SGD': 0, 'SGD with momentum': 1, 'Adam': 2}[optimizer]\n"
            "    per_rank = n_params if strategy == 'DDP' else n_params / world_size\n"
            "    return per_rank * dtype_bytes * (2 + states)",
            "the shard is a whole number of parameters: round n_params / world_size up",
        ),
    ),
    2: (
        (_SHARD_TEMPLATE.format(body=_ROOT), "on one rank here (world_size 1): not every block was sharded on its own"),
        (_SHARD_TEMPLATE.format(body=_BLOCKS), "every block is sharded, but not the root"),
        (
            _SHARD_TEMPLATE.format(body=_ROOT + _BLOCKS),
            "fully_shard ran on parameters already sharded: shard every block once, first, then the root",
        ),
        (_SHARD_TEMPLATE.format(body="    pass\n"), "the model is not sharded"),
        (  # the mesh ignored: fully_shard makes one of its own
            _SHARD_TEMPLATE.format(body=(_BLOCKS + _ROOT).replace("mesh=mesh", "")),
            "the parameters were sharded on another mesh than the one shard was given: pass mesh=mesh",
        ),
        (
            _SHARD_TEMPLATE.format(body=_BLOCKS + _ROOT).replace("    return model\n", ""),
            "shard(model, mesh) returned None; return the model",
        ),
        (
            _SHARD_TEMPLATE.format(body=_BLOCKS + _ROOT)
            .replace("return model", "return torch.nn.Sequential(*model)")
            .replace("from torch", "import torch\nfrom torch"),
            "shard(model, mesh) returned another module; return the model",
        ),
        (  # chapter 08's worker is told the same
            _SHARD_TEMPLATE.format(body=_BLOCKS + _ROOT + "    torch.distributed.destroy_process_group()\n").replace(
                "from torch", "import torch\nfrom torch"
            ),
            "shard destroyed the process group: the launcher made it and ends it",
        ),
    ),
    3: (
        (
            _RANK0_HEAD + "    n_params = sum(math.prod(s) for s in shapes)\n"
            "    return -(-n_params // world_size) * 16",
            "returned 78_160; expected 79_744: that is ceil(n_params / world_size) numbers",
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
            "param_dtype only sets the dtype of the gathered copies used in forward and backward",
        ),
        (
            _RANK0_HEAD + _RANK0_ROWS + "    return numbers * (2 + 2 + 4 + 4)  # 16-bit weights and gradients",
            "returned 59_808; expected 79_744",
        ),
        (
            _RANK0_HEAD + _RANK0_ROWS + "    return numbers",
            "that is a count of numbers; return bytes",
        ),
        (
            _RANK0_HEAD + "    numbers = 0\n    while shapes:\n        s = shapes.pop()\n"
            "        numbers += -(-s[0] // world_size) * math.prod(s[1:])\n    return numbers * 16",
            "changed its arguments: compute a new value and leave the inputs as they were",
        ),
    ),
}


#: Right answers other than the solution, as a learner could write them: each must be accepted.
RIGHT_ANSWERS: dict[int, tuple[str, ...]] = {
    2: (
        _SHARD_TEMPLATE.format(body=_BLOCKS).replace("    return model", "    return fully_shard(model, mesh=mesh)"),
        _SHARD_TEMPLATE.format(
            body="    for i in range(len(model)):\n"
            "        fully_shard(model[i], mesh=mesh, reshard_after_forward=False)\n" + _ROOT
        ),
    ),
}
