"""Chapter 05's typical wrong answers, by question number (see the package's docstring)."""


def _peak(copies: str, size: str = "p.numel() * p.element_size()", activations: str = "batch_size") -> str:
    """The solution with the count of copies, a parameter's size or the activations' factor changed."""
    return (
        "def predict_peak_bytes(model, batch_size, activation_bytes_per_sample):\n"
        f"    held = sum({size} * ({copies}) for p in model.parameters())\n"
        f"    return held + {activations} * activation_bytes_per_sample"
    )


#: Typical wrong answers to each question, by number, each with words its verdict must contain (the
#: message a learner who wrote it is told).
WRONG_ANSWERS: dict[int, tuple[tuple[str, str], ...]] = {
    1: (
        (
            "def tensor_bytes(shape, dtype):\n    return math.prod(shape)",
            "returned 9633792, the number of elements; multiply by the bytes per element (4)",
        ),
        (
            "def tensor_bytes(shape, dtype):\n    return math.prod(shape) * 4",
            "returned 38535168; a dense tensor needs 19267584 bytes",
        ),
        (
            "def tensor_bytes(shape, dtype):\n    return sum(shape) * dtype.itemsize",
            "returned 2060; a dense tensor needs 38535168 bytes",
        ),
        (
            "def tensor_bytes(shape, dtype):\n    return math.prod(shape) * torch.finfo(dtype).bits",
            "which counts bits, not bytes",
        ),
        ("tensor_bytes = 38535168", "should be a function taking (shape, dtype), but it is an int"),
    ),
    2: (
        (
            _peak("4"),
            "for frozen parameters too; a parameter with requires_grad=False gets neither",
        ),  # frozen parameters given a gradient and moments too
        (
            _peak("3 if p.requires_grad else 1"),
            "was the gradient forgotten, or the two moments counted once?",
        ),  # Adam's two moments counted once
        (  # the gradients forgotten
            (
                "def predict_peak_bytes(model, batch_size, activation_bytes_per_sample):\n"
                "    params = sum(p.nbytes for p in model.parameters())\n"
                "    moments = 2 * sum(p.nbytes for p in model.parameters() if p.requires_grad)\n"
                "    return params + moments + batch_size * activation_bytes_per_sample",
                "was the gradient forgotten, or the two moments counted once?",
            )
        ),
        (
            _peak("4 if p.requires_grad else 0"),
            "the frozen parameters are missing",
        ),  # frozen parameters left out of memory altogether
        (
            _peak("4 if p.requires_grad else 1", activations="1"),
            "the activations are counted for one sample",
        ),  # the activations of one sample
        (
            _peak("4 if p.requires_grad else 1", size="p.numel() * torch.finfo(p.dtype).bits"),
            "you count bits, not bytes",
        ),  # bits
        (
            _peak("4 if p.requires_grad else 1", size="p.numel() * 4"),
            "(a float16 Linear, 4, 16) returned 2,240: you assume 4 bytes per element",
        ),  # 4 bytes per element, float16 too
        (  # MiB
            (
                "def predict_peak_bytes(model, batch_size, activation_bytes_per_sample):\n"
                "    held = sum(p.nbytes * (4 if p.requires_grad else 1) for p in model.parameters())\n"
                "    return (held + batch_size * activation_bytes_per_sample) / 2**20",
                "that looks like MiB; return bytes",
            )
        ),
    ),
}
