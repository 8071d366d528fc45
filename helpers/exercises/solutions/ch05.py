"""Chapter 05's exercise solutions, by question number (see the package's docstring)."""

SOLUTIONS: dict[int, str] = {
    1: "def tensor_bytes(shape, dtype):\n    return math.prod(shape) * dtype.itemsize",
    2: """def predict_peak_bytes(model, batch_size, activation_bytes_per_sample):
    held = 0
    for p in model.parameters():
        copies = 4 if p.requires_grad else 1  # itself, and a gradient and two Adam moments if trained
        held += p.numel() * p.element_size() * copies
    return held + batch_size * activation_bytes_per_sample""",
}
