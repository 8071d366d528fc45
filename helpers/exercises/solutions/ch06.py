"""Chapter 06's exercise solutions, by question number (see the package's docstring)."""

SOLUTIONS: dict[int, str] = {
    1: """def time_with_events(fn):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end)""",
    2: """def produce_and_consume(a, side, rounds):
    current, means = torch.cuda.current_stream(), []
    for r in range(rounds):
        current.wait_stream(side)  # write-after-read: last round's mean has read `a`
        a.fill_(r + 1)
        side.wait_stream(current)  # read-after-write: the fill is done
        with torch.cuda.stream(side):
            means.append(a.mean())
    current.wait_stream(side)  # the caller reads the means on the current stream
    return means""",
    3: """def time_side_work(fn, side):
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record(side)  # mark the queue of the stream that runs the work
    fn()
    end.record(side)
    end.synchronize()
    return start.elapsed_time(end)""",
}
