"""Chapter 05's typical wrong answers, by question number (see the package's docstring)."""


def _peak(copies: str, size: str = "p.numel() * p.element_size()", activations: str = "batch_size") -> str:
    """The solution with the count of copies, a parameter's size or the activations' factor changed."""
    return (
        "def predict_peak_bytes(model, batch_size, activation_bytes_per_sample):\n"
        f"    held = sum({size} * ({copies}) for p in model.parameters())\n"
        f"    return held + {activations} * activation_bytes_per_sample"
    )


_RIGHT_COPIES = "4 if p.requires_grad else 1"

#: Typical wrong answers to each question, by number, each with words its verdict must contain (the
#: message a learner who wrote it is told).
WRONG_ANSWERS: dict[int, tuple[tuple[str, str], ...]] = {
    1: (
        (  # the storages' bytes, not rounded to the allocator's blocks
            "def allocated_bytes(tensors):\n"
            "    storages = {t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in tensors}\n"
            "    return sum(storages.values())",
            "allocated_bytes([torch.zeros(1000, dtype=torch.uint8)]) returned 1000; expected 1024: the allocator "
            "rounds each block up to a multiple of 512 bytes",
        ),
        (  # each tensor's own bytes, rounded: a view counted as if it were a tensor of its own
            "def allocated_bytes(tensors):\n    return sum((t.nbytes + 511) // 512 * 512 for t in tensors)",
            "allocated_bytes([x := torch.zeros(500, 500), x[0], x.t()]) returned 2_002_944; expected 1_000_448: a view "
            "keeps its base's whole storage alive",
        ),
        (  # each tensor's whole storage, once per tensor: a shared storage counted again for every view
            "def allocated_bytes(tensors):\n"
            "    return sum((t.untyped_storage().nbytes() + 511) // 512 * 512 for t in tensors)",
            "returned 3_001_344; expected 1_000_448: views share their base's storage: count each storage once",
        ),
        (  # the total rounded once
            "def allocated_bytes(tensors):\n"
            "    storages = {t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in tensors}\n"
            "    return (sum(storages.values()) + 511) // 512 * 512",
            "allocated_bytes([torch.zeros(3, dtype=torch.float16), torch.zeros(5, dtype=torch.int64)]) returned 512; "
            "expected 1024: each block is rounded on its own, not the total",
        ),
        (  # storages told apart by the tensor's own address: a view at an offset looks like another storage
            "def allocated_bytes(tensors):\n"
            "    storages = {t.data_ptr(): t.untyped_storage().nbytes() for t in tensors}\n"
            "    return sum((n + 511) // 512 * 512 for n in storages.values())",
            "allocated_bytes([(x := torch.zeros(500, 500))[250:], x[-1]]) returned 2_000_896; expected 1_000_448: "
            "x[250:] starts inside x's storage: key by its storage",
        ),
        (  # a view's base by `_base`: a detached tensor has none, though it shares the storage
            "def allocated_bytes(tensors):\n"
            "    bases = {id(t if t._base is None else t._base): t if t._base is None else t._base for t in tensors}\n"
            "    return sum((b.untyped_storage().nbytes() + 511) // 512 * 512 for b in bases.values())",
            "allocated_bytes([x := torch.ones(128, 64), x.detach(), x.view(torch.uint8), x]) returned 98_304; "
            "expected 32_768",
        ),
        (  # measured with the counter itself: on a machine without a GPU it is 0, and CPU tensors are not counted
            "def allocated_bytes(tensors):\n    return torch.cuda.memory_allocated()",
            "allocated_bytes([torch.zeros(1000, dtype=torch.uint8)]) returned 0; expected 1024",
        ),
        (  # 2 MiB segments: what reserved grows by, not allocated
            "def allocated_bytes(tensors):\n    return 2 * 2**20 if tensors else 0",
            "returned 2_097_152; expected 1024: 2 MiB segments are what memory_reserved counts",
        ),
        (  # an empty storage given a block of 512 bytes
            "def allocated_bytes(tensors):\n"
            "    storages = {t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in tensors}\n"
            "    return sum(max(512, (n + 511) // 512 * 512) for n in storages.values())",
            "allocated_bytes([torch.zeros(0), torch.tensor(1.0)]) returned 1024; expected 512: an empty storage "
            "(untyped_storage().nbytes() == 0) has no block",
        ),
        (  # empty tensors skipped instead of empty storages: an empty view keeps its base's whole storage (round 2)
            "def allocated_bytes(tensors):\n"
            "    kept = [t for t in tensors if t.numel()]\n"
            "    storages = {t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in kept}\n"
            "    return sum((n + 511) // 512 * 512 for n in storages.values())",
            "allocated_bytes([(x := torch.zeros(500, 500))[:0]]) returned 0; expected 1_000_448: x[:0] keeps x's whole "
            "storage: count its nbytes(), not numel()",
        ),
        (  # the same, skipping by the tensor's own bytes
            "def allocated_bytes(tensors):\n    seen = {}\n    for t in tensors:\n        if t.nbytes == 0:\n"
            "            continue\n        s = t.untyped_storage()\n"
            "        seen[s.data_ptr()] = -(-s.nbytes() // 512) * 512\n    return sum(seen.values())",
            "x[:0] keeps x's whole storage: count its nbytes(), not numel()",
        ),
        (  # one block more for a size that is already a multiple of 512, empty storages skipped (round 2)
            "def allocated_bytes(tensors):\n"
            "    storages = {t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in tensors}\n"
            "    return sum((n // 512 + 1) * 512 for n in storages.values() if n)",
            "allocated_bytes([torch.zeros(128)]) returned 1024; expected 512: a multiple of 512 is already rounded",
        ),
        (  # a bool sized as one bit (round 4): a bool takes a byte
            "def allocated_bytes(tensors):\n"
            "    seen = {}\n"
            "    for t in tensors:\n"
            "        s = t.untyped_storage()\n"
            "        seen[s.data_ptr()] = s.nbytes() // 8 if t.dtype == torch.bool else s.nbytes()\n"
            "    return sum(-(-n // 512) * 512 for n in seen.values())",
            "torch.zeros(513, dtype=torch.uint8), torch.zeros(1)]) returned 2048; expected 2560",
        ),
        (  # rounded up with 510 for 511 (round 4): a size one byte past a multiple of 512 loses its last block
            "def allocated_bytes(tensors):\n"
            "    seen = {t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in tensors}\n"
            "    return sum((n + 510) // 512 * 512 for n in seen.values())",
            "torch.zeros(513, dtype=torch.uint8), torch.zeros(1)]) returned 2048; expected 2560",
        ),
        (  # "round up" written as round(n / 512 + 0.5): Python rounds halves to even, so odd multiples go up (round 3)
            "def allocated_bytes(tensors):\n"
            "    d = {t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in tensors}\n"
            "    return sum(round(n / 512 + 0.5) * 512 if n else 0 for n in d.values())",
            "allocated_bytes([torch.zeros(128)]) returned 1024; expected 512: a multiple of 512 is already rounded",
        ),
        (  # the same without skipping empty storages: told first of the exact multiple it bumps (the earlier case)
            "def allocated_bytes(tensors):\n"
            "    storages = {t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in tensors}\n"
            "    return sum((n // 512 + 1) * 512 for n in storages.values())",
            "allocated_bytes([torch.zeros(128)]) returned 1024; expected 512: a multiple of 512 is already rounded",
        ),
        (  # storages told apart by their size: two storages of the same size counted once (round 2)
            "def allocated_bytes(tensors):\n"
            "    sizes = {t.untyped_storage().nbytes() for t in tensors}\n"
            "    return sum((n + 511) // 512 * 512 for n in sizes)",
            "allocated_bytes([x := torch.ones(100, 30), x.clone(), x.contiguous(), x.t().contiguous()]) returned "
            "12_288; expected 36_864: two storages of one size are two blocks",
        ),
        ("allocated_bytes = 1024", "should be a function taking (tensors), but it is an int"),
        (  # only the bytes the views reach (offset + extent), per storage: a row of a batch counted as the row
            "def allocated_bytes(tensors):\n"
            "    reach = {}\n"
            "    for t in tensors:\n"
            "        last = sum((n - 1) * s for n, s in zip(t.shape, t.stride()))\n"
            "        end = (t.storage_offset() + last + 1) * t.element_size() if t.numel() else 0\n"
            "        key = t.untyped_storage().data_ptr()\n"
            "        reach[key] = max(reach.get(key, 0), end)\n"
            "    return sum((n + 511) // 512 * 512 for n in reach.values())",
            "allocated_bytes([torch.zeros(500, 500)[0]]) returned 2048; expected 1_000_448: a view keeps its base's "
            "whole storage alive, even a detached view: count t.untyped_storage().nbytes()",
        ),
        (  # a view sized by its `_base`: a detached row has none, so it is sized as the row
            "def allocated_bytes(tensors):\n"
            "    sizes = {t.untyped_storage().data_ptr(): (t if t._base is None else t._base).nbytes\n"
            "             for t in tensors}\n"
            "    return sum((n + 511) // 512 * 512 for n in sizes.values())",
            "allocated_bytes([torch.zeros(500, 500)[0].detach()]) returned 2048; expected 1_000_448: a view keeps its "
            "base's whole storage alive, even a detached view",
        ),
        (  # each storage sized by the tensor's own nbytes: an expanded view counted as if expand() allocated
            "def allocated_bytes(tensors):\n"
            "    sizes = {t.untyped_storage().data_ptr(): t.nbytes for t in tensors}\n"
            "    return sum((n + 511) // 512 * 512 for n in sizes.values())",
            "allocated_bytes([torch.ones(1, 4).expand(1000, 4)]) returned 16_384; expected 512",
        ),
        (  # untyped_storage().size() taken for elements (it counts bytes already)
            "def allocated_bytes(tensors):\n"
            "    sizes = {t.untyped_storage().data_ptr(): t.untyped_storage().size() * t.element_size()\n"
            "             for t in tensors}\n"
            "    return sum((n + 511) // 512 * 512 for n in sizes.values())",
            "allocated_bytes([x := torch.zeros(500, 500), x[0], x.t()]) returned 4_000_256; expected 1_000_448",
        ),
        (  # rounded down to a multiple of 512
            "def allocated_bytes(tensors):\n"
            "    storages = {t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in tensors}\n"
            "    return sum(n // 512 * 512 for n in storages.values())",
            "returned 512; expected 1024: the allocator rounds each block up to a multiple of 512 bytes",
        ),
        (  # rounded up to a power of two
            "import math\n\ndef allocated_bytes(tensors):\n"
            "    storages = {t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in tensors}\n"
            "    return sum(2 ** math.ceil(math.log2(n)) for n in storages.values() if n)",
            "allocated_bytes([x := torch.zeros(500, 500), x[0], x.t()]) returned 1_048_576; expected 1_000_448: the "
            "allocator rounds each block up to a multiple of 512 bytes",
        ),
    ),
    2: (
        (  # frozen parameters given a gradient and moments too
            _peak("4"),
            "predict_peak_bytes(an MLP, first layer frozen, 8, 128) returned 39_584; expected 14_624: a frozen "
            "parameter has no gradient or moments: count it once",
        ),
        (  # Adam's moments kept for the frozen parameters too (round 5)
            _peak("4 if p.requires_grad else 3"),
            "returned 31_264; expected 14_624: Adam keeps no moments for a frozen parameter: count it once",
        ),
        (  # trainable judged by .grad (round 5): a model before its first backward has none, so all count once
            _peak("4 if p.grad is not None else 1"),
            "returned 10_664; expected 14_624: a trainable parameter also has a gradient and two Adam moments",
        ),
        (  # only leaf modules' parameters (round 5): an attention layer keeps in_proj on itself, beside its out_proj
            "def predict_peak_bytes(model, batch_size, activation_bytes_per_sample):\n"
            "    seen = {id(p): p for m in model.modules() if not list(m.children()) for p in m.parameters()}\n"
            "    trainable = sum(p.nbytes * (4 if p.requires_grad else 1) for p in seen.values())\n"
            "    return trainable + batch_size * activation_bytes_per_sample",
            "predict_peak_bytes(a frozen float16 attention layer, 5, 12) returned 204; expected 636",
        ),
        (  # the model and its children only (round 6): a parameter two modules deep is left out
            "def predict_peak_bytes(model, batch_size, activation_bytes_per_sample):\n"
            "    ps = {id(p): p for c in [model, *model.children()] for p in c.parameters(recurse=False)}\n"
            "    trainable = sum(p.nbytes * (4 if p.requires_grad else 1) for p in ps.values())\n"
            "    return trainable + batch_size * activation_bytes_per_sample",
            "predict_peak_bytes(a float32 MLP, nested, 16, 128) returned 35_328; expected 40_608",
        ),
        (  # Adam's two moments counted once
            _peak("3 if p.requires_grad else 1"),
            "a trainable one is there 4 times: itself, its gradient, 2 moments",
        ),
        (  # the gradients forgotten
            "def predict_peak_bytes(model, batch_size, activation_bytes_per_sample):\n"
            "    params = sum(p.nbytes for p in model.parameters())\n"
            "    moments = 2 * sum(p.nbytes for p in model.parameters() if p.requires_grad)\n"
            "    return params + moments + batch_size * activation_bytes_per_sample",
            "a trainable one is there 4 times: itself, its gradient, 2 moments",
        ),
        (  # frozen parameters left out of memory altogether
            _peak("4 if p.requires_grad else 0"),
            "the frozen parameters are missing",
        ),
        (  # the activations of one sample
            _peak(_RIGHT_COPIES, activations="1"),
            "that counts the activations of one sample; multiply by batch_size",
        ),
        (  # bits
            _peak(_RIGHT_COPIES, size="p.numel() * torch.finfo(p.dtype).bits"),
            "predict_peak_bytes(an MLP, first layer frozen, 8, 128) returned 109_824; expected 14_624",
        ),
        (  # 4 bytes per element, float16 too
            _peak(_RIGHT_COPIES, size="p.numel() * 4"),
            "(a float16 and a float32 Linear, 4, 16) returned 2816; expected 1728: each parameter has its own "
            "element_size(), not 4",
        ),
        (  # MiB
            "def predict_peak_bytes(model, batch_size, activation_bytes_per_sample):\n"
            "    held = sum(p.nbytes * (4 if p.requires_grad else 1) for p in model.parameters())\n"
            "    return (held + batch_size * activation_bytes_per_sample) / 2**20",
            "predict_peak_bytes(an MLP, first layer frozen, 8, 128) returned 0.0139465; expected 14_624",
        ),
        (  # elements, not bytes
            _peak(_RIGHT_COPIES, size="p.numel()"),
            "that counts numbers; multiply by element_size()",
        ),
        (  # the buffers counted as parameters (and, from a state dict, every tensor as frozen)
            "def predict_peak_bytes(model, batch_size, activation_bytes_per_sample):\n"
            "    tensors = model.state_dict(keep_vars=True).values()\n"
            "    held = sum(t.nbytes * (4 if t.requires_grad else 1) for t in tensors)\n"
            "    return held + batch_size * activation_bytes_per_sample",
            "predict_peak_bytes(a Linear and a BatchNorm1d in eval mode, 1, 32) returned 776; expected 736: that "
            "counts buffers",
        ),
        (  # Adam's moments kept in float32 for float16 parameters: the question says they have the parameter's dtype
            _peak(
                _RIGHT_COPIES, size="(p.numel() * p.element_size() + (3 * p.numel() * 4 if p.requires_grad else 0))"
            ).replace("* (4 if p.requires_grad else 1)", ""),
            "predict_peak_bytes(a float16 and a float32 Linear, 4, 16) returned 2544; expected 1728",
        ),
        (  # each module's own parameters: a weight two modules share is counted twice (round 2)
            _peak(_RIGHT_COPIES).replace(
                "for p in model.parameters()", "for m in model.modules() for p in m.parameters(recurse=False)"
            ),
            "predict_peak_bytes(an Embedding and a Linear head sharing its weight, 2, 24) returned 1328; expected 688",
        ),
        (  # frozen judged per module (round 5): a module with a frozen and a trainable parameter is counted as one
            "def predict_peak_bytes(model, batch_size, activation_bytes_per_sample):\n"
            "    total, seen = 0, set()\n"
            "    for m in model.modules():\n"
            "        own = [p for p in m.parameters(recurse=False) if id(p) not in seen]\n"
            "        seen.update(id(p) for p in own)\n"
            "        trainable = all(p.requires_grad for p in own)\n"
            "        total += sum(p.nbytes * (4 if trainable else 1) for p in own)\n"
            "    return total + batch_size * activation_bytes_per_sample",
            "predict_peak_bytes(a ParameterDict of a frozen w (4, 4) and a trainable b (4,), then a Linear(4, 2), 2, "
            "8) returned 256; expected 304",
        ),
        (  # the same by each module's first parameter (round 5): here the trainable b, so the frozen w counts 4 times
            "def predict_peak_bytes(model, batch_size, activation_bytes_per_sample):\n"
            "    total, seen = 0, set()\n"
            "    for m in model.modules():\n"
            "        own = [p for p in m.parameters(recurse=False) if id(p) not in seen]\n"
            "        seen.update(id(p) for p in own)\n"
            "        copies = 4 if own and own[0].requires_grad else 1\n"
            "        total += sum(p.nbytes * copies for p in own)\n"
            "    return total + batch_size * activation_bytes_per_sample",
            "then a Linear(4, 2), 2, 8) returned 496; expected 304: a frozen parameter has no gradient or moments",
        ),
        (  # eval mode set to count it (round 6): the caller's model is changed
            _peak(_RIGHT_COPIES).replace("    held", "    model.eval()\n    held", 1),
            "predict_peak_bytes(an MLP, first layer frozen, 8, 128) changed a module's train/eval mode: leave the "
            "model as it was",
        ),
        (  # the model unfrozen to count it (round 5): the caller's frozen layer is trainable afterwards
            "def predict_peak_bytes(model, batch_size, activation_bytes_per_sample):\n"
            "    model.requires_grad_(True)\n"
            "    return sum(4 * p.nbytes for p in model.parameters()) + batch_size * activation_bytes_per_sample",
            "predict_peak_bytes(an MLP, first layer frozen, 8, 128) changed 0.weight's requires_grad: leave the model "
            "as it was",
        ),
        (  # the right count, then the model made float16 (round 5)
            _peak(_RIGHT_COPIES).replace("    return held", "    model.half()\n    return held"),
            "predict_peak_bytes(an MLP, first layer frozen, 8, 128) changed 0.weight's dtype: leave the model as it "
            "was",
        ),
        (  # the right count, then the model given storage on the CPU
            _peak(_RIGHT_COPIES).replace("    return held", "    model.to_empty(device='cpu')\n    return held"),
            "predict_peak_bytes(an MLP, first layer frozen, 8, 128) changed 0.weight's device",
        ),
        (  # the first parameter's dtype taken for all
            "def predict_peak_bytes(model, batch_size, activation_bytes_per_sample):\n"
            "    size = next(model.parameters()).element_size()\n"
            "    held = sum(p.numel() * size * (4 if p.requires_grad else 1) for p in model.parameters())\n"
            "    return held + batch_size * activation_bytes_per_sample",
            "predict_peak_bytes(a float16 and a float32 Linear, 4, 16) returned 1440; expected 1728",
        ),
    ),
}

#: Right answers other than the solution, as a learner could write them: each must be accepted.
RIGHT_ANSWERS: dict[int, tuple[str, ...]] = {
    1: (
        "import math\n\ndef allocated_bytes(tensors):\n    seen, total = set(), 0\n    for t in tensors:\n"
        "        s = t.untyped_storage()\n        if s.data_ptr() not in seen:\n            seen.add(s.data_ptr())\n"
        "            total += math.ceil(s.nbytes() / 512) * 512\n    return total",
        # the storage objects themselves (one Python object per storage), sizes in bytes by size()
        "def allocated_bytes(tensors):\n"
        "    storages = {id(t.untyped_storage()): t.untyped_storage() for t in tensors}\n"
        "    return sum(-(-s.size() // 512) * 512 for s in storages.values())",
        "import numpy as np\n\ndef allocated_bytes(tensors):\n"
        "    found = {t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in tensors}\n"
        "    sizes = np.array(list(found.values()), dtype=np.int64)\n"
        "    return np.sum(np.ceil(sizes / 512) * 512) if len(sizes) else 0",
    ),
    2: (
        _peak(_RIGHT_COPIES, size="p.nbytes"),
        _peak("1 + 3 * p.requires_grad"),  # True counts as 1
        "def predict_peak_bytes(model, batch_size, activation_bytes_per_sample):\n"
        "    held = torch.tensor(0)\n"
        "    for p in model.parameters():\n"
        "        held += p.numel() * p.element_size() * (4 if p.requires_grad else 1)\n"
        "    return held + batch_size * activation_bytes_per_sample",  # a 0-d tensor
        "def predict_peak_bytes(model, batch_size, activation_bytes_per_sample):\n"
        "    everything = sum(p.nbytes for p in model.parameters())\n"
        "    trained = sum(p.nbytes for p in model.parameters() if p.requires_grad)\n"
        "    return float(everything + 3 * trained + batch_size * activation_bytes_per_sample)",
    ),
}

#: Round 10's finding: model.train() on a model in eval mode (the check had no such model before)
WRONG_ANSWERS[2] += (
    (
        "def predict_peak_bytes(model, batch_size, activation_bytes_per_sample):\n"
        "    model.train()\n"
        "    trainable = sum(p.nbytes * 4 for p in model.parameters() if p.requires_grad)\n"
        "    frozen = sum(p.nbytes for p in model.parameters() if not p.requires_grad)\n"
        "    return trainable + frozen + batch_size * activation_bytes_per_sample",
        "changed a module's train/eval mode: leave the model as it was",
    ),
    # only the top module's mode saved and set back (round 11: accepted before, no model mixed its modes)
    (
        "def predict_peak_bytes(model, batch_size, activation_bytes_per_sample):\n"
        "    was = model.training\n"
        "    model.train()\n"
        "    trainable = sum(p.nbytes * 4 for p in model.parameters() if p.requires_grad)\n"
        "    frozen = sum(p.nbytes for p in model.parameters() if not p.requires_grad)\n"
        "    model.train(was)\n"
        "    return trainable + frozen + batch_size * activation_bytes_per_sample",
        "predict_peak_bytes(a Linear and a BatchNorm1d in eval mode, 1, 32) changed a module's train/eval mode",
    ),
)
