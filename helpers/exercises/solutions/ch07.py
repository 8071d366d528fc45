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
    3: (
        "def upload_all(batches, device):\n"
        "    staging = torch.empty_like(batches[0], pin_memory=True)\n"
        "    copied, on_device = torch.cuda.Event(), []\n"
        "    for batch in batches:\n"
        "        copied.synchronize()  # the last copy has read the buffer (at once before the first record)\n"
        "        staging.copy_(batch)\n"
        "        on_device.append(staging.to(device, non_blocking=True))\n"
        "        copied.record()\n"
        "    return on_device"
    ),
}
