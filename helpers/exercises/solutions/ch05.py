"""Chapter 05's exercise solutions, by question number (see the package's docstring)."""

SOLUTIONS: dict[int, str] = {
    1: "def tensor_bytes(shape, dtype):\n    return math.prod(shape) * dtype.itemsize",
    2: "def largest_batch(budget, fixed, per_sample):\n    return max(0, (budget - fixed) // per_sample)",
    3: (
        "def adam_training_bytes(model):\n"
        "    return sum(p.numel() * p.element_size() * (4 if p.requires_grad else 1) for p in model.parameters())"
    ),
}


#: Typical wrong answers to each question, by number: each must be rejected (tested in CI). They live
#: here, not with the questions, because most are the solution with one line changed.
WRONG_ANSWERS: dict[int, tuple[str, ...]] = {
    1: (
        "def tensor_bytes(shape, dtype):\n    return math.prod(shape)",
        "def tensor_bytes(shape, dtype):\n    return math.prod(shape) * 4",
        "def tensor_bytes(shape, dtype):\n    return sum(shape) * dtype.itemsize",
        "def tensor_bytes(shape, dtype):\n    return math.prod(shape) * torch.finfo(dtype).bits",
        "tensor_bytes = 38535168",
    ),
    2: (
        "def largest_batch(budget, fixed, per_sample):\n    return budget // per_sample",
        "def largest_batch(budget, fixed, per_sample):\n    return (budget - fixed) // per_sample",
        "def largest_batch(budget, fixed, per_sample):\n    return (budget - fixed) / per_sample",
        "def largest_batch(budget, fixed, per_sample):\n    return max(0, math.ceil((budget - fixed) / per_sample))",
    ),
    3: (
        "def adam_training_bytes(model):\n    return 4 * sum(p.numel() * p.element_size() for p in model.parameters())",
        "def adam_training_bytes(model):\n"
        "    return sum(p.numel() * (4 if p.requires_grad else 1) for p in model.parameters())",
        "def adam_training_bytes(model):\n"
        "    return sum(p.numel() * p.element_size() * (3 if p.requires_grad else 1) for p in model.parameters())",
        "def adam_training_bytes(model):\n"
        "    return sum(p.numel() * 4 * (4 if p.requires_grad else 1) for p in model.parameters())",
    ),
}
