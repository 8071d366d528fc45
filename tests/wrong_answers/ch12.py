"""Chapter 12's typical wrong answers, by question number (see the package's docstring)."""

from helpers.exercises.solutions.ch12 import SOLUTIONS

from . import lines_of

_RANK0_HEAD = lines_of(SOLUTIONS[3], 1, 4)


_RANK0_ROWS = "    numbers = sum(-(-s[0] // world_size) * math.prod(s[1:]) for s in shapes)\n"


_HEAD, _META = lines_of(SOLUTIONS[2], 1, 5), lines_of(SOLUTIONS[2], 6, 7)
_SHARD, _ROOT = lines_of(SOLUTIONS[2], 8, 10), lines_of(SOLUTIONS[2], 10, 10)
_EMPTY, _INIT, _RETURN = lines_of(SOLUTIONS[2], 11, 11), lines_of(SOLUTIONS[2], 12, 14), lines_of(SOLUTIONS[2], 15, 15)
_WHOLE = "this rank held the whole model unsharded (1,152 bytes) when to_empty gave it memory before fully_shard, "
_WHOLE += "where its shards are 576 bytes: no rank should hold more than its shards"
_NO_VALUES = "held no values when build returned: to_empty gives memory, not values"


#: Typical wrong answers to each question, by number, each with words its verdict must contain (the
#: message a learner who wrote it is told).
WRONG_ANSWERS: dict[int, tuple[tuple[str, str], ...]] = {
    1: (
        (  # the activations divided among the ranks too
            "def ranks_needed(n_params, optimizer, gpu_bytes, activation_bytes):\n"
            "    per = 4 * (2 + {'SGD': 0, 'SGD with momentum': 1, 'Adam': 2}[optimizer])\n"
            "    return -(-(n_params * per + activation_bytes) // gpu_bytes)",
            "FSDP does not shard activations: each rank keeps them whole",
        ),
        (  # the activations forgotten
            "def ranks_needed(n_params, optimizer, gpu_bytes, activation_bytes):\n"
            "    per = 4 * (2 + {'SGD': 0, 'SGD with momentum': 1, 'Adam': 2}[optimizer])\n"
            "    return -(-n_params // (gpu_bytes // per))",
            "ranks_needed(7_000_000_000, 'Adam', 15_843_721_216, 2_000_000_000) returned 8; expected 9: the "
            "activations come on top of each rank's shards",
        ),
        (  # bytes divided, not whole parameters
            "def ranks_needed(n_params, optimizer, gpu_bytes, activation_bytes):\n"
            "    per = 4 * (2 + {'SGD': 0, 'SGD with momentum': 1, 'Adam': 2}[optimizer])\n"
            "    if activation_bytes >= gpu_bytes:\n        return None\n"
            "    return -(-n_params * per // (gpu_bytes - activation_bytes))",
            "ranks_needed(10, 'Adam', 156, 100) returned 3; expected 4: a shard is ceil(n_params/ranks) params",
        ),
        (  # 16-bit states
            "def ranks_needed(n_params, optimizer, gpu_bytes, activation_bytes):\n"
            "    per = 2 * (2 + {'SGD': 0, 'SGD with momentum': 1, 'Adam': 2}[optimizer])\n"
            "    if activation_bytes > gpu_bytes or (gpu_bytes - activation_bytes) // per < 1:\n        return None\n"
            "    return -(-n_params // ((gpu_bytes - activation_bytes) // per))",
            "that is half the bytes: 16-bit numbers, or copies left out",
        ),
        (  # Adam's states without the gradients
            "def ranks_needed(n_params, optimizer, gpu_bytes, activation_bytes):\n"
            "    per = 4 * (1 + {'SGD': 0, 'SGD with momentum': 1, 'Adam': 2}[optimizer])\n"
            "    if activation_bytes > gpu_bytes or (gpu_bytes - activation_bytes) // per < 1:\n        return None\n"
            "    return -(-n_params // ((gpu_bytes - activation_bytes) // per))",
            "one copy is missing: weights, gradients, states",
        ),
        (  # 0 where nothing fits, not None
            "def ranks_needed(n_params, optimizer, gpu_bytes, activation_bytes):\n"
            "    per = 4 * (2 + {'SGD': 0, 'SGD with momentum': 1, 'Adam': 2}[optimizer])\n"
            "    most = max(gpu_bytes - activation_bytes, 0) // per\n"
            "    return -(-n_params // most) if most else 0",
            "ranks_needed(1000, 'Adam', 1000, 995) returned 0; expected None",
        ),
        (  # momentum's state forgotten: priced as plain SGD
            "def ranks_needed(n_params, optimizer, gpu_bytes, activation_bytes):\n"
            "    per = 4 * (2 + (2 if optimizer == 'Adam' else 0))\n    room = gpu_bytes - activation_bytes\n"
            "    return None if room < per else -(-n_params // (room // per))",
            "ranks_needed(1_000_000_000, 'SGD with momentum', 10_000_000_000, 0) returned 1; expected 2",
        ),
        (  # no room for exactly one parameter taken as no room
            "def ranks_needed(n_params, optimizer, gpu_bytes, activation_bytes):\n"
            "    per = 4 * (2 + {'SGD': 0, 'SGD with momentum': 1, 'Adam': 2}[optimizer])\n"
            "    if activation_bytes + per >= gpu_bytes:\n        return None\n"
            "    return -(-n_params // ((gpu_bytes - activation_bytes) // per))",
            "ranks_needed(10, 'Adam', 116, 100) returned None; expected 10",
        ),
        (  # a search that stops one short of one parameter a rank, and one capped at 64 ranks
            "import math\n\n\n" + "def ranks_needed(n_params, optimizer, gpu_bytes, activation_bytes):\n"
            "    per = 4 * (2 + {'SGD': 0, 'SGD with momentum': 1, 'Adam': 2}[optimizer])\n"
            "    for r in range(1, min(n_params, 65)):\n"
            "        if math.ceil(n_params / r) * per + activation_bytes <= gpu_bytes:\n            return r\n"
            "    return None",
            "ranks_needed(1_000_000_000_000, 'Adam', 80_000_000_000, 10_000_000_000) returned None; expected 229",
        ),
        (  # momentum priced as Adam
            "def ranks_needed(n_params, optimizer, gpu_bytes, activation_bytes):\n"
            "    per = 8 if optimizer == 'SGD' else 16\n    most = (gpu_bytes - activation_bytes) // per\n"
            "    return None if most <= 0 else -(-n_params // most)",
            "ranks_needed(1_000_000_000, 'SGD with momentum', 12_000_000_005, 0) returned 2; expected 1",
        ),
        (  # momentum priced as plain SGD: told as such, not as 16-bit states
            "def ranks_needed(n_params, optimizer, gpu_bytes, activation_bytes):\n"
            "    per = 4 * (2 + (2 if optimizer == 'Adam' else 0))\n    most = (gpu_bytes - activation_bytes) // per\n"
            "    return None if most <= 0 else -(-n_params // most)",
            "expected 2: SGD with momentum keeps one state",
        ),
        (  # a search capped at 1000 ranks
            "def ranks_needed(n_params, optimizer, gpu_bytes, activation_bytes):\n"
            "    per = 4 * (2 + {'SGD': 0, 'SGD with momentum': 1, 'Adam': 2}[optimizer])\n"
            "    for r in range(1, 1001):\n"
            "        if -(-n_params // r) * per + activation_bytes <= gpu_bytes:\n            return r\n"
            "    return None",
            "ranks_needed(1_000_000, 'Adam', 26, 10) returned None; expected 1_000_000",
        ),
        (  # a search from two ranks
            "def ranks_needed(n_params, optimizer, gpu_bytes, activation_bytes):\n"
            "    per = 4 * (2 + {'SGD': 0, 'SGD with momentum': 1, 'Adam': 2}[optimizer])\n"
            "    if gpu_bytes - activation_bytes < per:\n        return None\n    r = 2\n"
            "    while -(-n_params // r) * per + activation_bytes > gpu_bytes:\n        r += 1\n    return r",
            "returned 2; expected 1",
        ),
        (  # the activations' bytes floored apart from the GPU's: a part of a parameter counted twice
            "def ranks_needed(n_params, optimizer, gpu_bytes, activation_bytes):\n"
            "    per = 4 * (2 + {'SGD': 0, 'SGD with momentum': 1, 'Adam': 2}[optimizer])\n"
            "    most = gpu_bytes // per - activation_bytes // per\n"
            "    return None if most <= 0 else -(-n_params // most)",
            "ranks_needed(1, 'Adam', 20, 10) returned 1; expected None",
        ),
        (  # plain SGD's gradient forgotten: told as a missing copy, not as 16-bit numbers
            "def ranks_needed(n_params, optimizer, gpu_bytes, activation_bytes):\n"
            "    per = {'SGD': 4, 'SGD with momentum': 12, 'Adam': 16}[optimizer]\n"
            "    most = (gpu_bytes - activation_bytes) // per\n"
            "    return None if most < 1 else max(1, -(-n_params // most))",
            "one copy is missing: weights, gradients, states",
        ),
        (  # byte counts as floating-point GB
            "import math\n\n\n" + "def ranks_needed(n_params, optimizer, gpu_bytes, activation_bytes):\n"
            "    per = 4 * (2 + {'SGD': 0, 'SGD with momentum': 1, 'Adam': 2}[optimizer])\n"
            "    most = math.floor(((gpu_bytes - activation_bytes) / 1e9) / (per / 1e9))\n"
            "    return None if most < 1 else max(1, math.ceil(n_params / most))",
            "ranks_needed(7, 'SGD', 156, 100) returned 2; expected 1",
        ),
        (  # rounding up by adding 0.99: wrong where the share is a whole number plus less than 0.01
            "def ranks_needed(n_params, optimizer, gpu_bytes, activation_bytes):\n"
            "    per = 4 * (2 + {'SGD': 0, 'SGD with momentum': 1, 'Adam': 2}[optimizer])\n"
            "    most = (gpu_bytes - activation_bytes) // per\n"
            "    return None if most < 1 else int(n_params / most + 0.99)",
            "ranks_needed(1001, 'SGD', 8000, 0) returned 1; expected 2",
        ),
        (  # fitting taken as strictly less than gpu_bytes
            "def ranks_needed(n_params, optimizer, gpu_bytes, activation_bytes):\n"
            "    per = 4 * (2 + {'SGD': 0, 'SGD with momentum': 1, 'Adam': 2}[optimizer])\n"
            "    most = (gpu_bytes - activation_bytes - 1) // per\n"
            "    return -(-n_params // most) if most > 0 else None",
            "ranks_needed(12, 'Adam', 148, 100) returned 6; expected 4: a GPU filled to its last byte fits",
        ),
    ),
    2: (
        # the question's own code: to_empty and the initialisation before fully_shard
        (_HEAD + _META + _EMPTY + _INIT + _SHARD + _RETURN, "on rank 0 of two: " + _WHOLE),
        # no meta device at all: built whole, then sharded
        (
            _HEAD + "    model = make_model()\n" + _SHARD + _RETURN,
            "held the whole model unsharded (1,152 bytes) when make_model() returned, where its shards are 576",
        ),
        (
            _HEAD + "    model = make_model().to('meta')\n" + _SHARD + _EMPTY + _INIT + _RETURN,
            "when make_model() returned",
        ),
        # to_empty before and after fully_shard: the first one held the whole model
        (_HEAD + _META + _EMPTY + _SHARD + _EMPTY + _INIT + _RETURN, _WHOLE),
        # to_empty again after the initialisation: fresh memory, no values
        (
            _HEAD + _META + _SHARD + _EMPTY + _INIT + _EMPTY + _RETURN,
            "0.0.weight, 0.0.bias, 1.0.weight, 1.0.bias, 2.0.weight, 2.0.bias held no values",
        ),
        (_HEAD + _META + _SHARD + _EMPTY + _RETURN, _NO_VALUES + " (the checker filled it with NaN to show it)"),
        # initialised on meta, before to_empty: nothing to initialise yet
        (_HEAD + _META + _INIT + _SHARD + _EMPTY + _RETURN, _NO_VALUES),
        # rank 1 alone gives the model memory before sharding it: only rank 1 held it whole
        (
            _HEAD
            + _META
            + "    if torch.distributed.get_rank() == 1:\n        model.to_empty(device='cpu')\n"
            + _SHARD
            + _EMPTY
            + _INIT
            + _RETURN,
            "on rank 1 of two: this rank held the whole model unsharded (1,152 bytes) when to_empty gave it memory",
        ),
        # the blocks of the one-rank model (3) hard-coded: the two-rank model has 4
        (
            _HEAD
            + _META
            + "    for i in range(3):\n        fully_shard(model[i], mesh=mesh)\n"
            + _ROOT
            + _EMPTY
            + _INIT
            + _RETURN,
            "on rank 0 of two: fully_shard was called on model, model[0], model[1], model[2], not on model[3]: call",
        ),
        # real weights loaded into the meta model before sharding: no to_empty, but every rank held them whole
        (
            _HEAD
            + _META
            + "    weights = {k: torch.rand(v.shape) / 8 - 1 / 16 for k, v in model.state_dict().items()}\n"
            + "    model.load_state_dict(weights, assign=True)\n"
            + _SHARD
            + _RETURN,
            "0.0.weight not drawn by nn.init, 0.0.bias not drawn by nn.init, 1.0.weight not drawn by nn.init: "
            "reset_parameters() draws from ±0.35",
        ),
        # each block given memory, then sharded: one block whole at a time
        (
            _HEAD + _META + "    for block in model:\n        block.to_empty(device='cpu')\n"
            "        fully_shard(block, mesh=mesh)\n" + _ROOT + _EMPTY + _INIT + _RETURN,
            "this rank held 0.0.weight, 0.0.bias unsharded (288 bytes) when to_empty gave it memory before "
            "fully_shard, where its shards are 144 bytes",
        ),
        (
            _HEAD + _META + _ROOT + _EMPTY + _INIT + _RETURN,
            "fully_shard was called on model, not on model[0], model[1], "
            "model[2] (each block first, so that only one block's parameters are gathered at a time)",
        ),
        (
            _HEAD + _META + lines_of(SOLUTIONS[2], 8, 9) + _EMPTY + _INIT + _RETURN,
            "fully_shard was called on model[0], model[1], model[2], not on model: call fully_shard(block, mesh=mesh)",
        ),
        (_HEAD + _META + _EMPTY + _INIT + _RETURN, "the model is not sharded"),
        (_HEAD + _META + _SHARD + "    model.to('cpu')\n" + _INIT + _RETURN, "raised NotImplementedError"),
        (
            _HEAD + _META + _SHARD + _EMPTY.replace("mesh.device_type", '"meta"') + _INIT + _RETURN,
            "build returned weights in torch.float32 on meta: keep them float32, on the mesh's device",
        ),
        (
            _HEAD + _META + _SHARD + _EMPTY + _INIT + "    return torch.nn.Sequential(*model)\n",
            "build returned another module, not the model make_model() built",
        ),
        (_HEAD + _META + _SHARD + _EMPTY + _INIT, "build returned None, not the model make_model() built"),
        (
            _HEAD + "    with torch.device('meta'):  # a model of its own\n        model = torch.nn.Sequential(\n"
            "            *[torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU()) for _ in range(3)]\n        )\n"
            + _SHARD
            + _EMPTY
            + _INIT
            + _RETURN,
            "build returned another module, not the model make_model() built",
        ),
        (
            _HEAD + _META + _SHARD + _EMPTY + _INIT + "    torch.distributed.destroy_process_group()\n" + _RETURN,
            "build destroyed the process group",
        ),
        # every parameter gathered whole after sharding, to check it
        (
            _HEAD
            + _META
            + _SHARD
            + _EMPTY
            + _INIT
            + "    full = [p.full_tensor() for p in model.parameters()]\n"
            + _RETURN,
            "on rank 0 of two: build gathered parameters across ranks",
        ),
        # every block gathered at once, then resharded
        (
            _HEAD + _META + _SHARD + _EMPTY + _INIT + "    for block in model:\n        block.unshard()\n"
            "    for block in model:\n        block.reshard()\n" + _RETURN,
            "build gathered parameters across ranks",
        ),
        # zeros instead of reset_parameters()
        (
            _HEAD + _META + _SHARD + _EMPTY + "    with torch.no_grad():\n        for p in model.parameters():\n"
            "            p.zero_()\n" + _RETURN,
            "0.0.weight not drawn by nn.init, 0.0.bias not drawn by nn.init",
        ),
        # another initialisation
        (
            _HEAD
            + _META
            + _SHARD
            + _EMPTY
            + "    for m in model.modules():\n        if isinstance(m, torch.nn.Linear):\n"
            "            torch.nn.init.xavier_uniform_(m.weight)\n            torch.nn.init.zeros_(m.bias)\n" + _RETURN,
            "0.0.weight drawn from uniform(-0.612372, 0.612372), 0.0.bias not drawn by nn.init",
        ),
        # a mesh of its own that replicates over the ranks: every rank keeps a whole copy
        (
            _HEAD + "    n = torch.distributed.get_world_size()\n"
            "    mesh = torch.distributed.init_device_mesh('cpu', (n, 1), mesh_dim_names=('replicate', 'shard'))\n"
            + _META
            + _SHARD
            + _EMPTY
            + _INIT
            + _RETURN,
            "was replicated: shard each block, then the model, on the mesh build was given",
        ),
        # the whole model gathered through DTensor's redistribute, and through a full state dict
        (
            _HEAD + _META + _SHARD + _EMPTY + _INIT + "    from torch.distributed.tensor import Replicate\n"
            "    whole = [p.redistribute(mesh, [Replicate()]).to_local() for p in model.parameters()]\n" + _RETURN,
            "build gathered parameters across ranks",
        ),
        (
            _HEAD
            + _META
            + _SHARD
            + _EMPTY
            + _INIT
            + "    from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict\n"
            "    full = get_model_state_dict(model, options=StateDictOptions(full_state_dict=True))\n" + _RETURN,
            "build gathered parameters across ranks",
        ),
        # a narrow uniform instead of reset_parameters()
        (
            _HEAD + _META + _SHARD + _EMPTY + "    with torch.no_grad():\n        for p in model.parameters():\n"
            "            p.uniform_(-0.01, 0.01)\n" + _RETURN,
            "0.0.weight drawn from uniform(-0.01, 0.01), 0.0.bias drawn from uniform(-0.01, 0.01)",
        ),
        # initialised, then converted to float16: the shards, gradients and Adam's states must stay float32
        (
            _HEAD + _META + _SHARD + _EMPTY + _INIT + "    model.to(torch.float16)\n" + _RETURN,
            "build returned weights in torch.float16 on cpu: keep them float32, on the mesh's device",
        ),
        # reset_parameters(), then scaled down: narrower than its values
        (
            _HEAD
            + _META
            + _SHARD
            + _EMPTY
            + _INIT
            + "    with torch.no_grad():\n        for p in model.parameters():\n"
            "            p.mul_(0.8)\n" + _RETURN,
            "0.0.weight, 0.0.bias, 1.0.weight changed after reset_parameters() drew them: leave the values it gives",
        ),
        # one block's parameters left out of sharding: plain tensors on every rank
        (
            _HEAD
            + _META
            + "    for block in model:\n        kept = set(block.parameters()) if block is model[0] else None\n"
            "        fully_shard(block, mesh=mesh, ignored_params=kept)\n" + _ROOT + _EMPTY + _INIT + _RETURN,
            "0.0.weight was left unsharded: shard each block, then the model, on the mesh build was given",
        ),
        # the root sharded before its blocks: their parameters sharded twice
        (
            _HEAD
            + _META
            + _ROOT
            + "    for block in model:\n        fully_shard(block, mesh=mesh)\n"
            + _EMPTY
            + _INIT
            + _RETURN,
            "was sharded twice (the model before its blocks?): shard each block",
        ),
        # the mesh it was given ignored: fully_shard's default mesh
        (
            _HEAD
            + _META
            + "    for block in model:\n        fully_shard(block)\n    fully_shard(model)\n"
            + _EMPTY
            + _INIT
            + _RETURN,
            "was sharded on another mesh: shard each block, then the model, on the mesh build was given",
        ),
        # a whole copy of the model given memory and initialised, then sliced into the shards
        (
            _HEAD + "    import copy\n" + _META + "    full = copy.deepcopy(model)\n    full.to_empty(device='cpu')\n"
            "    for module in full.modules():\n        if hasattr(module, 'reset_parameters'):\n"
            "            module.reset_parameters()\n"
            + _SHARD
            + _EMPTY
            + "    r, n = torch.distributed.get_rank(), torch.distributed.get_world_size()\n    with torch.no_grad():\n"
            "        for p, q in zip(model.parameters(), full.parameters()):\n"
            "            p.to_local().copy_(q.chunk(n)[r])\n" + _RETURN,
            "this rank held the whole model unsharded (1,152 bytes) when to_empty gave it memory",
        ),
        # bfloat16 compute: the gathered blocks in 16 bits
        (
            _HEAD.replace("import fully_shard", "import MixedPrecisionPolicy, fully_shard")
            + _META
            + _SHARD.replace("mesh=mesh", "mesh=mesh, mp_policy=MixedPrecisionPolicy(torch.bfloat16)")
            + _EMPTY
            + _INIT
            + _RETURN,
            "away from one process's from the same start",
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
    1: (
        # a search upwards from one rank, stopping where nothing more can fit
        "def ranks_needed(n_params, optimizer, gpu_bytes, activation_bytes):\n"
        "    per = 4 * (2 + {'SGD': 0, 'SGD with momentum': 1, 'Adam': 2}[optimizer])\n"
        "    room = gpu_bytes - activation_bytes\n    if room < per:\n        return None\n    ranks = 1\n"
        "    while -(-n_params // ranks) * per > room:\n        ranks += 1\n    return ranks",
        # math.ceil on whole numbers of parameters
        "import math\n\n\ndef ranks_needed(n_params, optimizer, gpu_bytes, activation_bytes):\n"
        "    per = 4 * (2 + {'SGD': 0, 'SGD with momentum': 1, 'Adam': 2}[optimizer])\n"
        "    if activation_bytes > gpu_bytes or gpu_bytes - activation_bytes < per:\n        return None\n"
        "    return max(1, math.ceil(n_params / ((gpu_bytes - activation_bytes) // per)))",
    ),
    2: (
        # a barrier at the end, and a seed broadcast from rank 0: collectives that gather no parameter
        _HEAD + _META + _SHARD + _EMPTY + "    seed = torch.randint(0, 2**31, (1,))\n"
        "    torch.distributed.broadcast(seed, src=0)\n"
        "    torch.manual_seed(int(seed) + torch.distributed.get_rank())\n"
        + _INIT
        + "    torch.distributed.barrier()\n"
        + _RETURN,
        # reset_parameters() written out: Kaiming-uniform weights, biases uniform within 1/sqrt(fan_in)
        _HEAD + _META + _SHARD + _EMPTY + "    import math\n    for m in model.modules():\n"
        "        if isinstance(m, torch.nn.Linear):\n"
        "            torch.nn.init.kaiming_uniform_(m.weight, a=math.sqrt(5))\n"
        "            torch.nn.init.uniform_(m.bias, -1 / math.sqrt(m.in_features), 1 / math.sqrt(m.in_features))\n"
        + _RETURN,
        # a seed first, nn.Module.apply, to_empty on the mesh's device type
        _HEAD + _META + _SHARD + _EMPTY.replace("mesh.device_type", '"cpu"') + "    torch.manual_seed(0)\n"
        "    model.apply(lambda m: m.reset_parameters() if hasattr(m, 'reset_parameters') else None)\n" + _RETURN,
        # to_empty twice before initialising, each module named
        _HEAD + _META + _SHARD + _EMPTY + _EMPTY + "    for block in model:\n"
        "        block[0].reset_parameters()\n" + _RETURN,
        # the Linear layers initialised, as section 3's worker does (the model has no other parameters)
        _HEAD.replace("import torch\n", "import torch\nfrom torch import nn\n")
        + _META
        + _SHARD
        + _EMPTY
        + _INIT.replace('hasattr(module, "reset_parameters")', "isinstance(module, nn.Linear)")
        + _RETURN,
    ),
}
