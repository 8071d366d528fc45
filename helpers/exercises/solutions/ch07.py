SOLUTIONS: dict[int, str] = {
    1: """def prefetched(batches, device):
    side, ready = torch.cuda.Stream(), None
    for batch in batches:
        with torch.cuda.stream(side):  # this batch's copy, queued before the last one is yielded
            coming = batch.pin_memory().to(device, non_blocking=True)
        if ready is not None:
            yield ready  # the caller's step on it runs while `coming` is copied
        torch.cuda.current_stream().wait_stream(side)  # the next step waits for this copy
        coming.record_stream(torch.cuda.current_stream())  # freed, its memory waits for that step
        ready = coming
    if ready is not None:
        yield ready""",
    2: """def upload_all(batches, device):
    staging = torch.empty_like(batches[0], pin_memory=True)
    copied, on_device = torch.cuda.Event(), []
    for batch in batches:
        copied.synchronize()  # the last copy has read the buffer (at once before the first record)
        staging.copy_(batch)
        on_device.append(staging.to(device, non_blocking=True))
        copied.record()
    return on_device""",
}
