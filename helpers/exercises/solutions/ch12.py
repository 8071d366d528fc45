SOLUTIONS: dict[int, str] = {
    1: "def ranks_needed(n_params, optimizer, gpu_bytes, activation_bytes):\n"
    "    per_param = 4 * (2 + {'SGD': 0, 'SGD with momentum': 1, 'Adam': 2}[optimizer])  # float32 copies\n"
    "    if activation_bytes > gpu_bytes:  # activations are not sharded\n        return None\n"
    "    most = (gpu_bytes - activation_bytes) // per_param  # parameters one rank can keep\n"
    "    if most < 1:\n        return None\n    return max(1, -(-n_params // most))  # ceil, in integers",
    2: "import torch\nfrom torch.distributed.fsdp import fully_shard\n\n\ndef build(make_model, mesh):\n"
    '    with torch.device("meta"):\n        model = make_model()  # shapes only, no memory yet\n'
    "    for block in model:\n        fully_shard(block, mesh=mesh)\n    fully_shard(model, mesh=mesh)\n"
    "    model.to_empty(device=mesh.device_type)  # memory for this rank's shards alone, uninitialised\n"
    '    for module in model.modules():\n        if hasattr(module, "reset_parameters"):\n'
    "            module.reset_parameters()  # a CPU mesh: each rank draws from its own generator\n    return model",
    3: "import math\n\n\ndef rank0_bytes(shapes, world_size):\n"
    "    # rank 0's share of each dim 0, ceil(rows / world_size), the size every rank is padded to\n"
    "    numbers = sum(-(-shape[0] // world_size) * math.prod(shape[1:]) for shape in shapes)\n"
    "    return numbers * (4 + 4 + 4 + 4)  # float32 shard, its gradient, exp_avg, exp_avg_sq",
}
