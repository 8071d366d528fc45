"""Chapter 06's exercise solutions, by question number (see the package's docstring)."""

SOLUTIONS: dict[int, str] = {
    1: (
        "def time_with_events(fn):\n"
        "    start = torch.cuda.Event(enable_timing=True)\n"
        "    end = torch.cuda.Event(enable_timing=True)\n"
        "    start.record()\n"
        "    fn()\n"
        "    end.record()\n"
        "    end.synchronize()\n"
        "    return start.elapsed_time(end)"
    ),
    2: (
        "def produce_and_consume(a, side, rounds):\n"
        "    current = torch.cuda.current_stream()\n"
        "    means = []\n"
        "    for r in range(rounds):\n"
        "        current.wait_stream(side)  # write-after-read: last round's mean has read `a`\n"
        "        a.fill_(r + 1)\n"
        "        side.wait_stream(current)  # read-after-write: the fill is done\n"
        "        with torch.cuda.stream(side):\n"
        "            means.append(a.mean())\n"
        "    current.wait_stream(side)  # the caller reads the means on the current stream\n"
        "    return means"
    ),
    3: (
        "def time_side_work(fn, side):\n"
        "    start = torch.cuda.Event(enable_timing=True)\n"
        "    end = torch.cuda.Event(enable_timing=True)\n"
        "    start.record(side)  # mark the queue of the stream that runs the work\n"
        "    fn()\n"
        "    end.record(side)\n"
        "    end.synchronize()\n"
        "    return start.elapsed_time(end)"
    ),
}
