"""Chapter 02's exercise solutions, by question number (see the package's docstring)."""

SOLUTIONS: dict[int, str] = {
    1: "def ones_on(device):\n    return torch.ones(2, 3, device=device)",
    2: "def add_on_first(a, b):\n    return a + b.to(a.device)",
    3: "def zeros_for(t, n):\n    return torch.zeros(n, dtype=t.dtype, device=t.device)",
    4: (
        "def scale_rows(x):\n"
        "    weights = torch.linspace(0.5, 1.5, x.shape[0], device=x.device)\n"
        "    return x * weights[:, None]"
    ),
}


#: Typical wrong answers to each question, by number: each must be rejected (tested in CI). They live
#: here, not with the questions, because most are the solution with one line changed.
WRONG_ANSWERS: dict[int, tuple[str, ...]] = {
    1: (
        "def ones_on(device):\n    return torch.ones(2, 3)",
        "def ones_on(device):\n    return torch.ones(2, 3).to(device)",
        "def ones_on(device):\n    return torch.tensor([[1, 1, 1], [1, 1, 1]], device=device)",
        "def ones_on(device):\n    return torch.Tensor(2, 3).fill_(1)",
        "ones_on = torch.ones(2, 3)",
    ),
    2: (
        "def add_on_first(a, b):\n    a += b.to(a.device)\n    return a",
        "def add_on_first(a, b):\n    b.data = b.data.to(a.device)\n    return a + b",
        "def add_on_first(a, b):\n    return a + b",
        "def add_on_first(a, b):\n    return a.to(b.device) + b",
        "def add_on_first(a, b):\n    return a.cpu() + b.cpu()",
        "def add_on_first(a, b):\n    return (a + b.to(a.device)).cpu()",
    ),
    3: (
        "def zeros_for(t, n):\n    t.zero_()\n    return torch.zeros(n, dtype=t.dtype, device=t.device)",
        "def zeros_for(t, n):\n    return torch.zeros(n, device=t.device)",
        "def zeros_for(t, n):\n    return torch.zeros(n, dtype=t.dtype)",
        "def zeros_for(t, n):\n    return torch.zeros(n).to(t)",
        "def zeros_for(t, n):\n    return torch.zeros(n, dtype=t.dtype).to(t.device)",
        "def zeros_for(t, n):\n    return torch.zeros_like(t, device=t.device)",
    ),
    4: (
        # the bug itself: the weights are made on the CPU
        "def scale_rows(x):\n    weights = torch.linspace(0.5, 1.5, x.shape[0])\n    return x * weights[:, None]",
        # moves x to the CPU instead: works, but the result leaves x's device
        "def scale_rows(x):\n    weights = torch.linspace(0.5, 1.5, x.shape[0])\n    return x.cpu() * weights[:, None]",
        # weights per column: runs everywhere, computes something else
        "def scale_rows(x):\n"
        "    weights = torch.linspace(0.5, 1.5, x.shape[1], device=x.device)\n"
        "    return x * weights",
    ),
}
