"""Chapter 07's typical wrong answers, by question number (see the package's docstring)."""

#: Typical wrong answers to each question, by number, each with words its verdict must contain (the
#: message a learner who wrote it is told).
WRONG_ANSWERS: dict[int, tuple[tuple[str, str], ...]] = {
    1: (
        (
            (
                "def to_device(batch, device):\n"
                "    for key, t in batch.items():\n"
                "        batch[key] = t.to(device, non_blocking=True)\n"
                "    return dict(batch)"
            ),
            "your function changed the batch it was given",
        ),
        (
            (
                "def to_device(batch, device):\n"
                "    return {k: v.to('meta', non_blocking=True) for k, v in batch.items()}"
            ),
            "'image' should be on the device you were given (the checker passes cpu), not meta",
        ),
        (
            ("def to_device(batch, device):\n    return {key: t.to(device) for key, t in batch.items()}"),
            "pass non_blocking=True to each .to(...)",
        ),
        (
            (
                "def to_device(batch, device):\n"
                "    moved = {}\n"
                "    for key, t in batch.items():\n"
                "        moved[key] = t.to(device, non_blocking=True)\n"
                "        torch.cuda.synchronize()\n"
                "    return moved"
            ),
            "your function waited 2 times: no synchronize per tensor",
        ),
        (
            (
                "def to_device(batch, device):\n"
                "    for t in batch.values():\n"
                "        t.to(device, non_blocking=True)\n"
                "    return batch"
            ),
            "(the checker passes meta), not cpu: t.to(device) returns a new tensor, keep it",
        ),
        (
            ("def to_device(batch, device):\n    return [t.to(device, non_blocking=True) for t in batch.values()]"),
            "return a dict with the same keys as the batch, not a list",
        ),
        (
            ("def to_device(batch, device):\n    return {key: t.cuda(non_blocking=True) for key, t in batch.items()}"),
            ".cuda() always means a CUDA GPU: use .to(device)",
        ),
    ),
    2: (
        (
            ("def to_host(t):\n    return t.to('cpu', non_blocking=True)"),
            "the values had not arrived when your function returned",
        ),
        (
            (
                "def to_host(t):\n"
                "    copied = torch.cuda.Event()\n"
                "    copied.record()\n"
                "    host = t.to('cpu', non_blocking=True)\n"
                "    copied.synchronize()\n"
                "    return host"
            ),
            "you waited for an event recorded before the copy was queued",
        ),
        (
            (
                "def to_host(t):\n"
                "    host = t.to('cpu', non_blocking=True)\n"
                "    copied = torch.cuda.Event()\n"
                "    copied.record()\n"
                "    copied.wait()\n"
                "    return host"
            ),
            "you recorded an event but the host never waited for it",
        ),
        (
            ("def to_host(t):\n    return t.cpu()"),
            "that copy blocks (.cpu() or non_blocking=False)",
        ),
    ),
    3: (
        (
            (
                "def upload_all(batches, device):\n"
                "    staging = torch.empty(batches[0].shape, pin_memory=True)\n"
                "    on_device = []\n"
                "    for batch in batches:\n"
                "        staging.copy_(batch)\n"
                "        on_device.append(staging.to(device, non_blocking=True))\n"
                "    return on_device"
            ),
            "its copy ran after the staging buffer had been refilled. A non_blocking copy from pinned memory",
        ),
        (
            (
                "def upload_all(batches, device):\n"
                "    staging = torch.empty(batches[0].shape, pin_memory=True)\n"
                "    on_device = []\n"
                "    for batch in batches:\n"
                "        staging.copy_(batch)\n"
                "        read = torch.cuda.Event()\n"
                "        read.record()\n"
                "        read.synchronize()\n"
                "        on_device.append(staging.to(device, non_blocking=True))\n"
                "    return on_device"
            ),
            "You waited, but not for this copy",
        ),
        (
            (
                "def upload_all(batches, device):\n"
                "    staging = torch.empty(batches[0].shape, pin_memory=True)\n"
                "    on_device = []\n"
                "    for batch in batches:\n"
                "        staging.copy_(batch)\n"
                "        on_device.append(staging.to(device, non_blocking=True))\n"
                "        read = torch.cuda.Event()\n"
                "        read.record()\n"
                "        read.wait()\n"
                "    return on_device"
            ),
            "You recorded an event but the host never waited for it",
        ),
        (
            (
                "def upload_all(batches, device):\n"
                "    staging = torch.empty(batches[0].shape, pin_memory=True)\n"
                "    on_device = []\n"
                "    for batch in batches:\n"
                "        staging.copy_(batch)\n"
                "        on_device.append(staging.to(device))\n"
                "    return on_device"
            ),
            "the copies block (non_blocking=False)",
        ),
        (
            (
                "def upload_all(batches, device):\n"
                "    staging = torch.empty(batches[0].shape, pin_memory=True)\n"
                "    on_device = []\n"
                "    for batch in batches:\n"
                "        staging.copy_(batch)\n"
                "        on_device.append(batch.pin_memory().to(device, non_blocking=True))\n"
                "    return on_device"
            ),
            "you pinned 5 buffers for 4 batches",
        ),
        (
            (
                "def upload_all(batches, device):\n"
                "    staging = torch.empty(batches[0].shape, pin_memory=True)\n"
                "    on_device = []\n"
                "    for batch in batches:\n"
                "        staging.copy_(batch)\n"
                "        on_device.append(batch.to(device, non_blocking=True))\n"
                "    return on_device"
            ),
            "4 of the copies came from pageable memory",
        ),
    ),
}


#: Right answers other than the solution, as a learner could write them: each must be accepted.
RIGHT_ANSWERS: dict[int, tuple[str, ...]] = {
    1: (
        "def to_device(batch, device):\n"
        "    out = {}\n"
        "    for key in batch:\n"
        "        out[key] = batch[key].to(device=device, non_blocking=True)\n"
        "    return out",
        "def to_device(batch, device):\n"
        "    return {k: torch.empty_like(v, device=device).copy_(v, non_blocking=True) for k, v in batch.items()}",
        "def to_device(batch, device):\n"
        "    moved = {k: v.to(device, non_blocking=True) for k, v in batch.items()}\n"
        "    torch.cuda.synchronize()  # one wait for the whole batch, not one per tensor\n"
        "    return moved",
    ),
    2: (
        "def to_host(t):\n    host = t.to('cpu', non_blocking=True)\n    torch.cuda.synchronize()\n    return host",
        "def to_host(t):\n"
        "    host = torch.empty(t.shape, dtype=t.dtype, pin_memory=True)\n"
        "    host.copy_(t, non_blocking=True)\n"
        "    torch.cuda.current_stream().synchronize()\n"
        "    return host",
        "def to_host(t):\n"
        "    host = t.to(device='cpu', non_blocking=True)\n"
        "    copied = torch.cuda.Event()\n"
        "    copied.record(torch.cuda.current_stream())\n"
        "    copied.synchronize()\n"
        "    return host",
        "def to_host(t):\n"
        "    host = t.to('cpu', non_blocking=True)\n"
        "    torch.accelerator.synchronize()\n"
        "    return host",
        "def to_host(t):\n"
        "    host = t.to('cpu', non_blocking=True)\n"
        "    while not torch.cuda.current_stream().query():  # ask until the copy has landed\n"
        "        pass\n"
        "    return host",
    ),
}
