"""Chapter 07's exercise solutions, by question number (see the package's docstring)."""

SOLUTIONS: dict[int, str] = {
    1: "def to_device(batch, device):\n    return {key: t.to(device, non_blocking=True) for key, t in batch.items()}",
    2: (
        "def to_host(t):\n"
        "    host = t.to('cpu', non_blocking=True)\n"
        "    copied = torch.cuda.Event()\n"
        "    copied.record()\n"
        "    copied.synchronize()\n"
        "    return host"
    ),
}


#: Typical wrong answers to each question, by number: each must be rejected (tested in CI). They live
#: here, not with the questions, because most are the solution with one line changed.
WRONG_ANSWERS: dict[int, tuple[str, ...]] = {
    1: (
        "def to_device(batch, device):\n"
        "    for key, t in batch.items():\n"
        "        batch[key] = t.to(device, non_blocking=True)\n"
        "    return dict(batch)",
        "def to_device(batch, device):\n    return {k: v.to('meta', non_blocking=True) for k, v in batch.items()}",
        "def to_device(batch, device):\n    return {key: t.to(device) for key, t in batch.items()}",
        "def to_device(batch, device):\n"
        "    moved = {}\n"
        "    for key, t in batch.items():\n"
        "        moved[key] = t.to(device, non_blocking=True)\n"
        "        torch.cuda.synchronize()\n"
        "    return moved",
        "def to_device(batch, device):\n"
        "    for t in batch.values():\n"
        "        t.to(device, non_blocking=True)\n"
        "    return batch",
        "def to_device(batch, device):\n    return [t.to(device, non_blocking=True) for t in batch.values()]",
        "def to_device(batch, device):\n    return {key: t.cuda(non_blocking=True) for key, t in batch.items()}",
    ),
    2: (
        "def to_host(t):\n    return t.to('cpu', non_blocking=True)",
        "def to_host(t):\n"
        "    copied = torch.cuda.Event()\n"
        "    copied.record()\n"
        "    host = t.to('cpu', non_blocking=True)\n"
        "    copied.synchronize()\n"
        "    return host",
        "def to_host(t):\n"
        "    host = t.to('cpu', non_blocking=True)\n"
        "    copied = torch.cuda.Event()\n"
        "    copied.record()\n"
        "    copied.wait()\n"
        "    return host",
        "def to_host(t):\n    return t.cpu()",
    ),
}
