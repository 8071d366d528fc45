"""Chapter 07's exercise solutions, by question number (see the package's docstring)."""

SOLUTIONS: dict[int, str] = {
    1: "def to_device(batch, device):\n    return {key: t.to(device, non_blocking=True) for key, t in batch.items()}",
    2: """def to_host(t):
    host = t.to('cpu', non_blocking=True)
    copied = torch.cuda.Event()
    copied.record()
    copied.synchronize()
    return host""",
    3: """def upload_all(batches, device):
    staging = torch.empty_like(batches[0], pin_memory=True)
    copied, on_device = torch.cuda.Event(), []
    for batch in batches:
        copied.synchronize()  # the last copy has read the buffer (at once before the first record)
        staging.copy_(batch)
        on_device.append(staging.to(device, non_blocking=True))
        copied.record()
    return on_device""",
}
