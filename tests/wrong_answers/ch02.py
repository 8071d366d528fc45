"""Chapter 02's typical wrong answers, by question number (see the package's docstring)."""

#: Typical wrong answers to each question, by number, each with words its verdict must contain (the
#: message a learner who wrote it is told).
WRONG_ANSWERS: dict[int, tuple[tuple[str, str], ...]] = {
    1: (
        (
            ("def ones_on(device):\n    return torch.ones(2, 3)"),
            "made a tensor on cpu: pass device=...",
        ),
        (
            ("def ones_on(device):\n    return torch.ones(2, 3).to(device)"),
            "first made a tensor on the CPU (with torch.ones) and moved it afterwards",
        ),
        (
            ("def ones_on(device):\n    return torch.tensor([[1, 1, 1], [1, 1, 1]], device=device)"),
            "the tensor's dtype is torch.int64, not torch.float32",
        ),
        (
            ("def ones_on(device):\n    return torch.Tensor(2, 3).fill_(1)"),
            "made a tensor on cpu: pass device=...",
        ),
        (
            "ones_on = torch.ones(2, 3)",
            "should be a function taking (device), but it is a Tensor",
        ),
    ),
    2: (
        (
            ("def add_on_first(a, b):\n    a += b.to(a.device)\n    return a"),
            "changed a or b (an in-place +=, add_ or copy_)",
        ),
        (
            ("def add_on_first(a, b):\n    b.data = b.data.to(a.device)\n    return a + b"),
            "assigned to the .data of a tensor it was given",
        ),
        (
            ("def add_on_first(a, b):\n    return a + b"),
            "called add on tensors that live on cpu and meta, which torch refuses",
        ),
        (
            ("def add_on_first(a, b):\n    return a.to(b.device) + b"),
            "moved a off its device: move b to a.device instead",
        ),
        (
            ("def add_on_first(a, b):\n    return a.cpu() + b.cpu()"),
            "moved a off its device: move b to a.device instead",
        ),
        (
            ("def add_on_first(a, b):\n    return (a + b.to(a.device)).cpu()"),
            "moved a tensor off a's device (meta): the sum should stay where a lives",
        ),
    ),
    3: (
        (
            ("def zeros_for(t, n):\n    t.zero_()\n    return torch.zeros(n, dtype=t.dtype, device=t.device)"),
            "changed t: read its dtype and device, and leave t as it is",
        ),
        (
            ("def zeros_for(t, n):\n    return torch.zeros(n, device=t.device)"),
            "returned torch.float32, not t's dtype",
        ),
        (
            ("def zeros_for(t, n):\n    return torch.zeros(n, dtype=t.dtype)"),
            "returned a tensor on cpu: create it on t.device",
        ),
        (
            ("def zeros_for(t, n):\n    return torch.zeros(n).to(t)"),
            "first made a tensor on the CPU (with torch.zeros) and moved it afterwards",
        ),
        (
            ("def zeros_for(t, n):\n    return torch.zeros(n, dtype=t.dtype).to(t.device)"),
            "first made a tensor on the CPU (with torch.zeros) and moved it afterwards",
        ),
        (
            ("def zeros_for(t, n):\n    return torch.zeros_like(t, device=t.device)"),
            "returned shape (3,), not (5,)",
        ),
    ),
    4: (
        (
            ("def scale_rows(x):\n    weights = torch.linspace(0.5, 1.5, x.shape[0])\n    return x * weights[:, None]"),
            "a tensor made on the CPU (by torch.linspace) met x",
        ),
        (
            (
                "def scale_rows(x):\n"
                "    weights = torch.linspace(0.5, 1.5, x.shape[0])\n"
                "    return x.cpu() * weights[:, None]"
            ),
            "moved x off its device: leave x where it lives",
        ),
        (
            (
                "def scale_rows(x):\n"
                "    weights = torch.linspace(0.5, 1.5, x.shape[1], device=x.device)\n"
                "    return x * weights"
            ),
            "changed what the function computes: row i is still multiplied by weights[i]",
        ),
    ),
}


#: Right answers other than the solution, as a learner could write them: each must be accepted.
RIGHT_ANSWERS: dict[int, tuple[str, ...]] = {
    1: (
        "def ones_on(device):\n    return torch.full((2, 3), 1.0, device=device)",
        "def ones_on(device):\n    return torch.empty(2, 3, device=device).fill_(1)",
        "def ones_on(device):\n    return torch.ones((2, 3), dtype=torch.float32, device=str(device))",
    ),
    2: (
        "def add_on_first(a, b):\n    return torch.add(a, b.to(a))",
        "def add_on_first(a, b):\n    b = b.to(a.device, non_blocking=True)\n    return b + a",
    ),
    3: (
        "def zeros_for(t, n):\n    return t.new_zeros(n)",
        "def zeros_for(t, n):\n    return torch.full((n,), 0, dtype=t.dtype, device=t.device)",
    ),
}
