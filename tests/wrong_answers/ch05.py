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
        (
            "import math\n\n\ndef tensor_bytes(shape, dtype):\n    return math.prod(shape)",
            "tensor_bytes((64, 3, 224, 224), torch.float32) returned 9_633_792; expected 38_535_168: that is the "
            "number of elements; multiply by dtype.itemsize",
        ),
        (
            "import math\n\n\ndef tensor_bytes(shape, dtype):\n    return math.prod(shape) * 4",
            "tensor_bytes((64, 3, 224, 224), torch.float16) returned 38_535_168; expected 19_267_584: that is 4 bytes "
            "an element: use dtype.itemsize",
        ),
        (
            "def tensor_bytes(shape, dtype):\n    return sum(shape) * dtype.itemsize",
            "tensor_bytes((64, 3, 224, 224), torch.float32) returned 2060; expected 38_535_168",
        ),
        (  # bits (a slip named until round 6: the chapter does not teach bits, so no slip is named)
            "import math\n\n\ndef tensor_bytes(shape, dtype):\n    return math.prod(shape) * dtype.itemsize * 8",
            "tensor_bytes((64, 3, 224, 224), torch.float32) returned 308_281_344; expected 38_535_168",
        ),
        (  # finfo's bits are a complex number's half: not bits on every case, so no mistake is named
            "import math\n\n\ndef tensor_bytes(shape, dtype):\n    return math.prod(shape) * torch.finfo(dtype).bits",
            "tensor_bytes((64, 3, 224, 224), torch.float32) returned 308_281_344; expected 38_535_168",
        ),
        ("tensor_bytes = 38535168", "should be a function taking (shape, dtype), but it is an int"),
        (  # a product by reduce: the scalar shape () has no element to start from
            "import functools\n\n\ndef tensor_bytes(shape, dtype):\n"
            "    return functools.reduce(lambda a, b: a * b, shape) * dtype.itemsize",
            "tensor_bytes((), torch.bfloat16) raised TypeError (line 5 of your code): reduce() of empty iterable",
        ),
        (  # floating-point types only: an int8 or bool tensor has no finfo
            "import math\n\n\ndef tensor_bytes(shape, dtype):\n"
            "    return math.prod(shape) * torch.finfo(dtype).bits // 8",
            "raised TypeError",
        ),
        (  # a 0-d tensor has no dimensions to multiply: its one element was forgotten
            "import math\n\n\ndef tensor_bytes(shape, dtype):\n"
            "    return (math.prod(shape) if shape else 0) * dtype.itemsize",
            "tensor_bytes((), torch.bfloat16) returned 0; expected 2",
        ),
        (  # allocates the tensor on the CPU to ask its size, which the question rules out
            "def tensor_bytes(shape, dtype):\n    return torch.empty(shape, dtype=dtype).nbytes",
            "tensor_bytes allocated a torch.float32 tensor of shape (64, 3, 224, 224) on cpu",
        ),
        (  # the bytes of a float32 element, whatever the dtype
            "import math\n\n\ndef tensor_bytes(shape, dtype):\n"
            "    return math.prod(shape) * torch.tensor(0.0).element_size()",
            "tensor_bytes((64, 3, 224, 224), torch.float16) returned 38_535_168; expected 19_267_584",
        ),
        (  # complex64 holds two float32 numbers: 8 bytes, not 4
            "import math\n\n\ndef tensor_bytes(shape, dtype):\n"
            "    size = torch.finfo(dtype).bits // 8 if dtype.is_floating_point else dtype.itemsize\n"
            "    return math.prod(shape) * (4 if dtype.is_complex else size)",
            "tensor_bytes((3, 5), torch.complex64) returned 60; expected 120",
        ),
        (  # the product in int32: 2**32 elements wrap round to 0 (round 2)
            "import numpy as np\n\ndef tensor_bytes(shape, dtype):\n"
            "    return int(np.prod(shape, dtype=np.int32)) * dtype.itemsize",
            "tensor_bytes((65_536, 65_536), torch.uint8) returned 0; expected 4_294_967_296",
        ),
        # round 8's findings: memory allocated where the checker does not look (numpy, a storage, a legacy type)
        (
            "import numpy as np\n\ndef tensor_bytes(shape, dtype):\n"
            "    return np.empty((*shape, dtype.itemsize), dtype=np.uint8).nbytes",
            "tensor_bytes((1_073_741_824, 1_073_741_824), torch.uint8) raised MemoryError",
        ),
        (
            "import math\n\ndef tensor_bytes(shape, dtype):\n"
            "    return torch.UntypedStorage(math.prod(shape) * dtype.itemsize).nbytes()",
            "tensor_bytes((1_073_741_824, 1_073_741_824), torch.uint8) raised RuntimeError",
        ),
        (  # the product in float32: 4097**2 is not a float32 (round 2)
            "def tensor_bytes(shape, dtype):\n"
            "    return int(torch.tensor(shape, dtype=torch.float32).prod()) * dtype.itemsize",
            "tensor_bytes((4097, 4097), torch.float32) returned 67_141_632; expected 67_141_636",
        ),
        (  # MiB, as memory is often shown (its slip dropped in round 6; no slip is named)
            "import math\n\n\ndef tensor_bytes(shape, dtype):\n    return math.prod(shape) * dtype.itemsize / 2**20",
            "tensor_bytes((64, 3, 224, 224), torch.float32) returned 36.75; expected 38_535_168",
        ),
        (  # 8 bytes for every type that is not a float (round 6): right on complex64 and int64, not int8, bool, int32
            "import math\n\n\ndef tensor_bytes(shape, dtype):\n"
            "    return math.prod(shape) * (dtype.itemsize if dtype.is_floating_point else 8)",
            "tensor_bytes((1000,), torch.int8) returned 8000; expected 1000",
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
        (  # Adam's two moments counted once
            _peak("3 if p.requires_grad else 1"),
            "a trainable parameter has a gradient and two Adam moments",
        ),
        (  # the gradients forgotten
            "def predict_peak_bytes(model, batch_size, activation_bytes_per_sample):\n"
            "    params = sum(p.nbytes for p in model.parameters())\n"
            "    moments = 2 * sum(p.nbytes for p in model.parameters() if p.requires_grad)\n"
            "    return params + moments + batch_size * activation_bytes_per_sample",
            "a trainable parameter has a gradient and two Adam moments",
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
            "(a float16 and a float32 Linear, 4, 16) returned 2816; expected 1728: not every number has 4 bytes",
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
        "def tensor_bytes(shape, dtype):\n    return torch.empty(shape, dtype=dtype, device='meta').nbytes",
        # numpy's product in int64 (its default int is int32 on Windows before numpy 2)
        "import numpy as np\n\ndef tensor_bytes(shape, dtype):\n"
        "    return np.prod(shape, dtype=np.int64) * dtype.itemsize",
        "import math\n\n\ndef tensor_bytes(shape, dtype):\n"
        "    return math.prod(shape) * torch.tensor([], dtype=dtype).element_size()",
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
