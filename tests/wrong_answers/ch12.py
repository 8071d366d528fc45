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


_LINEARS = (
    "    for m in model.modules():\n        if isinstance(m, torch.nn.Linear):\n            fully_shard(m, mesh=mesh)\n"
)


_ROOT = "    fully_shard(model, mesh=mesh)\n"


#: Typical wrong answers to each question, by number, each with words its verdict must contain (the
#: message a learner who wrote it is told).
WRONG_ANSWERS: dict[int, tuple[tuple[str, str], ...]] = {
    1: (
        # one rank alone priced at 4 bytes a number (accepted before: the one-rank case was the only one in 4 bytes)
        (
            "def bytes_per_rank(n_params, dtype_bytes, optimizer, world_size, strategy):\n"
            "    states = {'SGD': 0, 'SGD with momentum': 1, 'Adam': 2}[optimizer]\n"
            "    n = n_params if strategy == 'DDP' else -(-n_params // world_size)\n"
            "    return n * dtype_bytes * (2 + states) if world_size > 1 else n_params * 4 * (2 + states)",
            "bytes_per_rank(1_000_000, 2, 'Adam', 1, 'FSDP') returned 16_000_000; expected 8_000_000",
        ),
        # round 7's findings: DDP with SGD as three copies, no parameters where there are fewer than ranks, at least
        # 2 bytes a number, at most 4 (half the bytes, not told "rounded down")
        (
            "def bytes_per_rank(n_params, dtype_bytes, optimizer, world_size, strategy):\n"
            "    states = {'SGD': 0, 'SGD with momentum': 1, 'Adam': 2}[optimizer]\n"
            "    n = n_params if strategy == 'DDP' else -(-n_params // world_size)\n"
            "    return n * dtype_bytes * (2 + states + (strategy == 'DDP' and optimizer == 'SGD'))",
            "bytes_per_rank(999, 1, 'SGD', 1, 'DDP') returned 2997; expected 1998",
        ),
        (
            "def bytes_per_rank(n_params, dtype_bytes, optimizer, world_size, strategy):\n"
            "    states = {'SGD': 0, 'SGD with momentum': 1, 'Adam': 2}[optimizer]\n"
            "    n = n_params if strategy == 'DDP' else -(-n_params // world_size)\n"
            "    return n * dtype_bytes * (2 + states) if n_params >= world_size else 0",
            "bytes_per_rank(3, 4, 'SGD with momentum', 8, 'FSDP') returned 0; expected 12",
        ),
        (
            "def bytes_per_rank(n_params, dtype_bytes, optimizer, world_size, strategy):\n"
            "    states = {'SGD': 0, 'SGD with momentum': 1, 'Adam': 2}[optimizer]\n"
            "    n = n_params if strategy == 'DDP' else -(-n_params // world_size)\n"
            "    return n * max(dtype_bytes, 2) * (2 + states)",
            "bytes_per_rank(999, 1, 'SGD', 1, 'DDP') returned 3996; expected 1998",
        ),
        (
            "def bytes_per_rank(n_params, dtype_bytes, optimizer, world_size, strategy):\n"
            "    states = {'SGD': 0, 'SGD with momentum': 1, 'Adam': 2}[optimizer]\n"
            "    n = n_params if strategy == 'DDP' else -(-n_params // world_size)\n"
            "    return n * min(dtype_bytes, 4) * (2 + states)",
            "bytes_per_rank(49_153, 8, 'SGD with momentum', 16_384, 'FSDP') returned 48; expected 96",
        ),
        (  # round 8's finding: at least one parameter a rank, where there are none
            "def bytes_per_rank(n_params, dtype_bytes, optimizer, world_size, strategy):\n"
            "    states = {'SGD': 0, 'SGD with momentum': 1, 'Adam': 2}[optimizer]\n"
            "    n = n_params if strategy == 'DDP' else max(1, -(-n_params // world_size))\n"
            "    return n * dtype_bytes * (2 + states)",
            "bytes_per_rank(0, 4, 'Adam', 2, 'FSDP') returned 16; expected 0",
        ),
        (  # rounded up, but in float32: 875_000_000.375 is 875_000_000 there
            "import torch\n\n\n"
            "def bytes_per_rank(n_params, dtype_bytes, optimizer, world_size, strategy):\n"
            "    states = {'SGD': 0, 'SGD with momentum': 1, 'Adam': 2}[optimizer]\n"
            "    per_rank = n_params if strategy == 'DDP' else torch.ceil(torch.tensor(n_params) / world_size)\n"
            "    return per_rank * dtype_bytes * (2 + states)",
            "returned 7_000_000_000; expected 7_000_000_008: the shard lost digits in float32 arithmetic",
        ),
        (
            "def bytes_per_rank(n_params, dtype_bytes, optimizer, world_size, strategy):\n"
            "    states = {'SGD': 0, 'SGD with momentum': 1, 'Adam': 2}[optimizer]\n"
            "    return n_params * dtype_bytes * (2 + states) / world_size",
            "returned 4.5; expected 12: the shard is a whole number of parameters: round it up",
        ),
        (
            "def bytes_per_rank(n_params, dtype_bytes, optimizer, world_size, strategy):\n"
            "    states = {'SGD': 0, 'SGD with momentum': 1, 'Adam': 2}[optimizer]\n"
            "    return -(-n_params // world_size) * dtype_bytes * (2 + states)",
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
            "one copy is missing: parameters, gradients, each optimizer state",
        ),
        (  # two mistakes (a copy missing, the shard not rounded up): no one mistake explains every case
            "def bytes_per_rank(n_params, dtype_bytes, optimizer, world_size, strategy):\n"
            "    states = {'SGD': 0, 'SGD with momentum': 1, 'Adam': 2}[optimizer]\n"
            "    per_rank = n_params if strategy == 'DDP' else n_params / world_size\n"
            "    return per_rank * dtype_bytes * (1 + states)",
            "bytes_per_rank(1_000_000, 2, 'Adam', 1, 'FSDP') returned 6_000_000; expected 8_000_000",
        ),
        (
            "def bytes_per_rank(n_params, dtype_bytes, optimizer, world_size, strategy):\n"
            "    states = {'SGD': 0, 'SGD with momentum': 1, 'Adam': 1}[optimizer]\n"
            "    per_rank = n_params if strategy == 'DDP' else -(-n_params // world_size)\n"
            "    return per_rank * dtype_bytes * (2 + states)",
            "one copy is missing: parameters, gradients, each optimizer state",
        ),
        (
            "def bytes_per_rank(n_params, dtype_bytes, optimizer, world_size, strategy):\n"
            "    states = {'SGD': 0, 'SGD with momentum': 1, 'Adam': 2}[optimizer]\n"
            "    per_rank = n_params if strategy == 'DDP' else n_params // world_size\n"
            "    return per_rank * dtype_bytes * (2 + states)",
            "bytes_per_rank(3, 4, 'SGD with momentum', 8, 'FSDP') returned 0; expected 12: the shard was rounded down; "
            "round it up",
        ),
        (
            "def bytes_per_rank(n_params, dtype_bytes, optimizer, world_size, strategy):\n"
            "    states = {'SGD': 0, 'SGD with momentum': 1, 'Adam': 2}[optimizer]\n"
            "    per_rank = n_params if strategy == 'DDP' else n_params / world_size\n"
            "    return per_rank * dtype_bytes * (2 + states)",
            "the shard is a whole number of parameters: round it up",
        ),
        (  # rounded up by adding one: right only where the size does not divide
            "def bytes_per_rank(n_params, dtype_bytes, optimizer, world_size, strategy):\n"
            "    states = {'SGD': 0, 'SGD with momentum': 1, 'Adam': 2}[optimizer]\n"
            "    per_rank = n_params if strategy == 'DDP' else n_params // world_size + 1\n"
            "    return per_rank * dtype_bytes * (2 + states)",
            "bytes_per_rank(1_000_000, 2, 'Adam', 1, 'FSDP') returned 8_000_008; expected 8_000_000",
        ),
        (
            "def bytes_per_rank(n_params, dtype_bytes, optimizer, world_size, strategy):\n"
            "    states = {'SGD': 0, 'SGD with momentum': 1, 'Adam': 2}[optimizer]\n"
            "    per_rank = n_params if strategy == 'DDP' else (n_params + world_size) // world_size\n"
            "    return per_rank * dtype_bytes * (2 + states)",
            "bytes_per_rank(1_000_000, 2, 'Adam', 1, 'FSDP') returned 8_000_008; expected 8_000_000",
        ),
        (  # rounded up by round(x + 0.5): round() takes halves to even, one too many where the share is odd
            "def bytes_per_rank(n_params, dtype_bytes, optimizer, world_size, strategy):\n"
            "    states = {'SGD': 0, 'SGD with momentum': 1, 'Adam': 2}[optimizer]\n"
            "    per_rank = n_params if strategy == 'DDP' else round(n_params / world_size + 0.5)\n"
            "    return per_rank * dtype_bytes * (2 + states)",
            "bytes_per_rank(1_000_002, 4, 'Adam', 2, 'FSDP') returned 8_000_032; expected 8_000_016",
        ),
        (  # rounded up by adding 0.999: rounded down where the share is over a whole number by less than 0.001
            "def bytes_per_rank(n_params, dtype_bytes, optimizer, world_size, strategy):\n"
            "    states = {'SGD': 0, 'SGD with momentum': 1, 'Adam': 2}[optimizer]\n"
            "    per_rank = n_params if strategy == 'DDP' else int(n_params / world_size + 0.999)\n"
            "    return per_rank * dtype_bytes * (2 + states)",
            "bytes_per_rank(49_153, 8, 'SGD with momentum', 16_384, 'FSDP') returned 72; expected 96: the shard was "
            "rounded down; round it up",
        ),
        (  # rounded up by adding 0.9999: a remainder of 1 on 16_384 ranks is 0.000061 over a whole number
            "def bytes_per_rank(n_params, dtype_bytes, optimizer, world_size, strategy):\n"
            "    states = {'SGD': 0, 'SGD with momentum': 1, 'Adam': 2}[optimizer]\n"
            "    per_rank = n_params if strategy == 'DDP' else int(n_params / world_size + 0.9999)\n"
            "    return per_rank * dtype_bytes * (2 + states)",
            "bytes_per_rank(49_153, 8, 'SGD with momentum', 16_384, 'FSDP') returned 72; expected 96: the shard was "
            "rounded down",
        ),
        (  # rounded up by adding 0.999999: right on that remainder, one too many where the share is 2**40 + 1
            "def bytes_per_rank(n_params, dtype_bytes, optimizer, world_size, strategy):\n"
            "    states = {'SGD': 0, 'SGD with momentum': 1, 'Adam': 2}[optimizer]\n"
            "    per_rank = n_params if strategy == 'DDP' else int(n_params / world_size + 0.999999)\n"
            "    return per_rank * dtype_bytes * (2 + states)",
            "bytes_per_rank(2_199_023_255_554, 2, 'SGD', 2, 'FSDP') returned 4_398_046_511_112; expected "
            "4_398_046_511_108",
        ),
        (  # rounded up by round(x + 0.49999): at 2**40 + 1 the sum is x + 0.5 in a float, which round() takes up
            "def bytes_per_rank(n_params, dtype_bytes, optimizer, world_size, strategy):\n"
            "    states = {'SGD': 0, 'SGD with momentum': 1, 'Adam': 2}[optimizer]\n"
            "    per_rank = n_params if strategy == 'DDP' else round(n_params / world_size + 0.49999)\n"
            "    return per_rank * dtype_bytes * (2 + states)",
            "bytes_per_rank(2_199_023_255_554, 2, 'SGD', 2, 'FSDP') returned 4_398_046_511_112; expected",
        ),
        (
            "def bytes_per_rank(n_params, dtype_bytes, optimizer, world_size, strategy):\n"
            "    states = {'SGD': 0, 'SGD with momentum': 2, 'Adam': 2}[optimizer]\n"
            "    per_rank = n_params if strategy == 'DDP' else -(-n_params // world_size)\n"
            "    return per_rank * dtype_bytes * (2 + states)",
            "returned 16; expected 12: SGD with momentum keeps one state",
        ),
        (  # optimizer states priced at 4 bytes: one state too many only where dtype_bytes is 2, so no mistake is named
            "def bytes_per_rank(n_params, dtype_bytes, optimizer, world_size, strategy):\n"
            "    states = {'SGD': 0, 'SGD with momentum': 1, 'Adam': 2}[optimizer]\n"
            "    per_rank = n_params if strategy == 'DDP' else -(-n_params // world_size)\n"
            "    return per_rank * (dtype_bytes * 2 + 4 * states)",
            "bytes_per_rank(1_000_000, 2, 'Adam', 1, 'FSDP') returned 12_000_000; expected 8_000_000",
        ),
    ),
    2: (
        (
            _SHARD_TEMPLATE.format(body=_ROOT),
            "on one rank here (world_size 1): fully_shard was called on model, not on model[0], model[1], model[2] "
            "(each block first, so that only one block's parameters are gathered at a time)",
        ),
        (
            _SHARD_TEMPLATE.format(body=_BLOCKS),
            "fully_shard was called on model[0], model[1], model[2], not on model: call fully_shard(block, mesh=mesh) "
            "on each block, then fully_shard(model, mesh=mesh)",
        ),
        (  # each Linear, not the blocks, and no root
            _SHARD_TEMPLATE.format(body=_LINEARS).replace("from torch", "import torch\nfrom torch"),
            "fully_shard was called on model[0][0], model[1][0], model[2][0], not on model[0], model[1], model[2]: "
            "call fully_shard(block, mesh=mesh) on each block, then fully_shard(model, mesh=mesh)",
        ),
        (  # each Linear, then the root: told what was called, without the root-only reason
            _SHARD_TEMPLATE.format(body=_LINEARS + _ROOT).replace("from torch", "import torch\nfrom torch"),
            "fully_shard was called on model, model[0][0], model[1][0], model[2][0], not on model[0], model[1], "
            "model[2]: call",
        ),
        (
            _SHARD_TEMPLATE.format(body=_ROOT + _BLOCKS),
            "fully_shard ran on parameters already sharded: shard every block once, first, then the root",
        ),
        (_SHARD_TEMPLATE.format(body="    pass\n"), "the model is not sharded"),
        (  # the blocks as one list: one unit, all of their parameters gathered at once
            _SHARD_TEMPLATE.format(body="    fully_shard(list(model), mesh=mesh)\n" + _ROOT),
            "model[0], model[1], model[2] were sharded together as one unit, one all-gather for them all: call",
        ),
        (
            _SHARD_TEMPLATE.format(
                body="    fully_shard([model[i] for i in range(len(model))], mesh=mesh, reshard_after_forward=True)\n"
            ).replace("    return model", "    return fully_shard(model, mesh=mesh)"),
            "model[0], model[1], model[2] were sharded together as one unit",
        ),
        (  # two blocks together, the third alone
            _SHARD_TEMPLATE.format(
                body="    fully_shard([model[0], model[1]], mesh=mesh)\n    fully_shard(model[2], mesh=mesh)\n" + _ROOT
            ),
            "on one rank here (world_size 1): model[0], model[1] were sharded together as one unit",
        ),
        (  # the mesh ignored: fully_shard makes one of its own
            _SHARD_TEMPLATE.format(body=(_BLOCKS + _ROOT).replace("mesh=mesh", "")),
            "the parameters were sharded on another mesh than shard was given: pass mesh=mesh to fully_shard",
        ),
        (  # the root alone on fully_shard's own mesh: the root's own parameter (the scale) shows it
            _SHARD_TEMPLATE.format(body=_BLOCKS + _ROOT.replace("mesh=mesh", "")),
            "the parameters were sharded on another mesh than shard was given: pass mesh=mesh to fully_shard",
        ),
        (  # the same weights on every rank by a seed of the learner's: not the model's own weights
            _SHARD_TEMPLATE.format(
                body="    torch.manual_seed(0)\n"
                + _LINEARS.replace("fully_shard(m, mesh=mesh)", "m.reset_parameters()")
                + _BLOCKS
                + _ROOT
            ).replace("from torch", "import torch\nfrom torch"),
            "shard changed this rank's weights (gathered: ",
        ),
        (  # the model's own weights, nudged in float32: the values changed, not the dtype
            _SHARD_TEMPLATE.format(
                body="    with torch.no_grad():\n        model[0][0].weight.add_(0.01)\n" + _BLOCKS + _ROOT
            ).replace("from torch", "import torch\nfrom torch"),
            "shard changed this rank's weights (gathered: 0.01 away): shard should shard the model and change "
            "nothing else",
        ),
        (
            _SHARD_TEMPLATE.format(body="    model.half()\n" + _BLOCKS + _ROOT),
            "shard changed the model's weights to torch.float16 on cpu: shard should shard the model",
        ),
        (  # a copy sharded and returned; the model given is left as it was
            _SHARD_TEMPLATE.format(body="    model = copy.deepcopy(model)\n" + _BLOCKS + _ROOT).replace(
                "from torch", "import copy\n\nfrom torch"
            ),
            "shard(model, mesh) returned another module, not the model it was given: shard that model in place",
        ),
        (  # bfloat16 compute: the sharded model trains, but not as one float32 process does
            _SHARD_TEMPLATE.format(
                body=(_BLOCKS + _ROOT).replace("mesh=mesh", "mesh=mesh, mp_policy=MixedPrecisionPolicy(torch.bfloat16)")
            ).replace(
                "from torch", "import torch\nfrom torch.distributed.fsdp import MixedPrecisionPolicy\nfrom torch"
            ),
            "away from one process's: shard should shard the model and change nothing else",
        ),
        (  # float64 compute: trains as one process does (closer still), but computes and returns float64
            _SHARD_TEMPLATE.format(body=(_BLOCKS + _ROOT).replace("mesh=mesh", "mesh=mesh, mp_policy=_POLICY")).replace(
                "from torch",
                "import torch\nfrom torch.distributed.fsdp import MixedPrecisionPolicy\n\n"
                "_POLICY = MixedPrecisionPolicy(param_dtype=torch.float64, reduce_dtype=torch.float64)\nfrom torch",
            ),
            "the sharded model's layers computed in torch.float64 for float32 inputs: shard should shard the model",
        ),
        (  # float64 compute, cast back to float32 on the way out: the first Linear's output shows it
            _SHARD_TEMPLATE.format(body=(_BLOCKS + _ROOT).replace("mesh=mesh", "mesh=mesh, mp_policy=_POLICY")).replace(
                "from torch",
                "import torch\nfrom torch.distributed.fsdp import MixedPrecisionPolicy\n\n"
                "_POLICY = MixedPrecisionPolicy(torch.float64, output_dtype=torch.float32)\nfrom torch",
            ),
            "the sharded model's layers computed in torch.float64 for float32 inputs: shard should shard the model",
        ),
        (
            _SHARD_TEMPLATE.format(body=_BLOCKS + _ROOT).replace("    return model\n", ""),
            "shard(model, mesh) returned None, not the model it was given",
        ),
        (
            _SHARD_TEMPLATE.format(body=_BLOCKS + _ROOT)
            .replace("return model", "return torch.nn.Sequential(*model)")
            .replace("from torch", "import torch\nfrom torch"),
            "shard(model, mesh) returned another module, not the model it was given",
        ),
        (  # the blocks of the one-rank model (3) hard-coded: the two-rank model has 4
            _SHARD_TEMPLATE.format(body="    for i in range(3):\n        fully_shard(model[i], mesh=mesh)\n" + _ROOT),
            "on rank 0 of two: fully_shard was called on model, model[0], model[1], model[2], not on model[3]: call",
        ),
        (  # the chapter's 4 blocks hard-coded: the one-rank model has 3
            _SHARD_TEMPLATE.format(body="    for i in range(4):\n        fully_shard(model[i], mesh=mesh)\n" + _ROOT),
            "raised IndexError",
        ),
        (  # float64 weights: their values as float32 numbers unchanged, but not the dtype
            _SHARD_TEMPLATE.format(body="    model.double()\n" + _BLOCKS + _ROOT),
            "shard changed the model's weights to torch.float64 on cpu: shard should shard the model",
        ),
        (
            _SHARD_TEMPLATE.format(body=_BLOCKS + _ROOT).replace("return model", "return model.double()"),
            "shard changed the model's weights to torch.float64 on cpu: shard should shard the model",
        ),
        (  # on the meta device, before sharding or after: no weights left to compare
            _SHARD_TEMPLATE.format(body="    model.to('meta')\n" + _BLOCKS + _ROOT),
            "shard changed the model's weights to torch.float32 on meta: shard should shard the model",
        ),
        (
            _SHARD_TEMPLATE.format(body=_BLOCKS + _ROOT + "    model.to('meta')\n"),
            "shard changed the model's weights to torch.float32 on meta: shard should shard the model",
        ),
        (  # a block removed: its parameters are missing, not changed
            _SHARD_TEMPLATE.format(body="    del model[-1]\n" + _BLOCKS + _ROOT),
            "on one rank here (world_size 1): shard changed the model's parameters (removed: 2.0.bias (8,), 2.0.weight "
            "(8, 8); added: none): shard should shard the model and change nothing else",
        ),
        (  # a weight replaced by one of another shape
            _SHARD_TEMPLATE.format(
                body="    model[0][0].weight = torch.nn.Parameter(torch.zeros(8, 9))\n" + _BLOCKS + _ROOT
            ).replace("from torch", "import torch\nfrom torch"),
            "shard changed the model's parameters (removed: 0.0.weight (8, 8); added: 0.0.weight (8, 9))",
        ),
        (  # round 7's finding: rank 1 alone changes a weight: rank 0 sees it gathered, and says it was another's
            _SHARD_TEMPLATE.format(
                body="    if torch.distributed.get_rank() == 1:\n        with torch.no_grad():\n"
                "            model[0][0].weight.add_(0.01)\n" + _BLOCKS + _ROOT
            ).replace("from torch", "import torch\nfrom torch"),
            "on rank 0 of two: shard changed another rank's weights (gathered: 0.01 away)",
        ),
        (  # a weight set to NaN: the most it changed is NaN, not 0
            _SHARD_TEMPLATE.format(
                body="    with torch.no_grad():\n        model[0][0].weight[0, 0] = float('nan')\n" + _BLOCKS + _ROOT
            ).replace("from torch", "import torch\nfrom torch"),
            "shard changed this rank's weights (gathered: nan away): shard should shard the model and change "
            "nothing else",
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
            "FSDP2 cuts whole rows (dim 0), not numbers",
        ),
        (  # round 7's finding: at least one row each, where a parameter has none
            _RANK0_HEAD + "    numbers = sum(max(1, -(-s[0] // world_size)) * math.prod(s[1:]) for s in shapes)\n"
            "    return numbers * 16",
            "rank0_bytes([(1, 8), (5, 3, 2), (0, 4)], 2) returned 480; expected 416",
        ),
        (
            _RANK0_HEAD + "    numbers = sum(s[0] // world_size * math.prod(s[1:]) for s in shapes)\n"
            "    return numbers * 16",
            "the rows were rounded down: ceil them",
        ),
        (
            _RANK0_HEAD + _RANK0_ROWS + "    return numbers * 2 * 4  # bfloat16: shard, gradient, exp_avg, exp_avg_sq",
            "that is 8 bytes a number: either Adam's two states are missing, or all four were counted in bfloat16 "
            "(param_dtype only sets the gathered copies' dtype: the shard, its gradient and Adam's states are float32)",
        ),
        (  # Adam's states forgotten: the same value as all four in bfloat16, so both readings are named
            _RANK0_HEAD + _RANK0_ROWS + "    return numbers * (4 + 4)  # float32 shard and its gradient",
            "returned 39_872; expected 79_744: that is 8 bytes a number: either Adam's two states are missing, or",
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
        (  # rows rounded half up: right where the remainder is 0 or half the ranks, not 5 rows on 4 ranks
            _RANK0_HEAD + "    numbers = sum(int(s[0] / world_size + 0.5) * math.prod(s[1:]) for s in shapes)\n"
            "    return numbers * 16",
            "rank0_bytes([(5, 3), (5,)], 4) returned 64; expected 128",
        ),
        (  # tuples only: the chapter's own call passes lists (its launch reports shapes as JSON lists)
            _RANK0_HEAD + "    numbers = sum(-(-s[0] // world_size) * math.prod(s[1:] + (1,)) for s in shapes)\n"
            "    return numbers * 16",
            "rank0_bytes([[99, 64], [99], [33, 99], [33], [1, 33], [1]], 2) raised TypeError",
        ),
        (  # 32-bit integers: a model-sized weight's bytes overflow them
            _RANK0_HEAD + "    import numpy as np\n\n"
            "    rows = np.array([-(-s[0] // world_size) for s in shapes], dtype=np.int32)\n"
            "    rest = np.array([math.prod(s[1:]) for s in shapes], dtype=np.int32)\n"
            "    return int((rows * rest * 16).sum())",
            "rank0_bytes([(50_000, 50_000)], 2) returned -1_474_836_480; expected 20_000_000_000",
        ),
        (  # a model without parameters: reduce() has no start value
            _RANK0_HEAD + "    import functools, operator\n\n"
            "    rows = [-(-s[0] // world_size) * math.prod(s[1:]) for s in shapes]\n"
            "    return functools.reduce(operator.add, rows) * 16",
            "rank0_bytes([], 2) raised TypeError",
        ),
        (  # rows rounded up by adding 0.999: a remainder of 1 on 16_384 ranks is 0.000061 over a whole number
            _RANK0_HEAD + "    return 16 * sum(int(s[0] / world_size + 0.999) * math.prod(s[1:]) for s in shapes)",
            "rank0_bytes([(16_385, 8)], 16_384) returned 128; expected 256: the rows were rounded down",
        ),
        (  # rows rounded up by round(x + 0.49999): one too many where the share is 2**40 + 1
            _RANK0_HEAD + "    return 16 * sum(round(s[0] / world_size + 0.49999) * math.prod(s[1:]) for s in shapes)",
            "rank0_bytes([(2_199_023_255_554,)], 2) returned 17_592_186_044_448; expected 17_592_186_044_432",
        ),
        (  # float32 arithmetic: a float32 holds about 7 significant digits
            _RANK0_HEAD + "    import torch\n\n    total = torch.zeros(())\n    for s in shapes:\n"
            "        total += torch.ceil(torch.tensor(s[0]) / world_size) * math.prod(s[1:]) * 16\n    return total",
            "rank0_bytes([(2_199_023_255_554,)], 2) returned 17_592_186_044_416; expected 17_592_186_044_432: the "
            "bytes lost digits in float32 arithmetic",
        ),
        (
            _RANK0_HEAD + "    import numpy as np\n\n"
            "    return np.float32(sum(-(-s[0] // world_size) * math.prod(s[1:]) for s in shapes)) * 16",
            "the bytes lost digits in float32 arithmetic (about 7 significant digits): compute it with integers",
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
        # each block as a list of one: still one unit a block
        _SHARD_TEMPLATE.format(body=_BLOCKS.replace("fully_shard(block,", "fully_shard([block],") + _ROOT),
    ),
}
