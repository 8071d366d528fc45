"""Chapter 06's exercise solutions, by question number (see the package's docstring)."""

from helpers.exercises.ch06 import RACY_PRODUCE_AND_CONSUME as _RACY

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
}


def _timed(*body: str) -> str:
    """Code of a `time_with_events` that makes two timing events, then runs `body`."""
    head = (
        "def time_with_events(fn):",
        "    start = torch.cuda.Event(enable_timing=True)",
        "    end = torch.cuda.Event(enable_timing=True)",
    )
    return "\n".join((*head, *(f"    {line}" for line in body)))


_AROUND = ("start.record()", "fn()", "end.record()")


_SYNC_AND_READ = ("end.synchronize()", "return start.elapsed_time(end)")


def _rounds(
    before_fill: tuple[str, ...] = (),
    after_fill: tuple[str, ...] = (),
    after_mean: tuple[str, ...] = (),
    before_return: tuple[str, ...] = (),
) -> str:
    """Code of a `produce_and_consume` with the given lines around its fill and its mean."""
    return "\n".join(
        (
            "def produce_and_consume(a, side, rounds):",
            "    current = torch.cuda.current_stream()",
            "    means = []",
            "    for r in range(rounds):",
            *(f"        {line}" for line in before_fill),
            "        a.fill_(r + 1)",
            *(f"        {line}" for line in after_fill),
            "        with torch.cuda.stream(side):",
            "            means.append(a.mean())",
            *(f"        {line}" for line in after_mean),
            *(f"    {line}" for line in before_return),
            "    return means",
        )
    )


_WAR, _RAW, _FINAL = "current.wait_stream(side)", "side.wait_stream(current)", "current.wait_stream(side)"


#: Typical wrong answers to each question, by number: each must be rejected (tested in CI). They live
#: here, not with the questions, because most are the solution with one line changed.
WRONG_ANSWERS: dict[int, tuple[str, ...]] = {
    1: (
        "def time_with_events(fn):\n"
        "    torch.cuda.synchronize()\n"
        "    start = time.perf_counter()\n"
        "    fn()\n"
        "    torch.cuda.synchronize()\n"
        "    return (time.perf_counter() - start) * 1000",
        "def time_with_events(fn):\n    t0 = time.perf_counter()\n    fn()\n"
        "    return (time.perf_counter() - t0) * 1000",
        _timed(*_AROUND, "return start.elapsed_time(end)"),
        _timed("fn()", "torch.cuda.synchronize()", "start.record()", "end.record()", *_SYNC_AND_READ),
        _timed(*_AROUND, "end.synchronize()", "return start.elapsed_time(end) / 1000"),
        _timed(*_AROUND, *_SYNC_AND_READ).replace("enable_timing=True", ""),
    ),
    2: (
        "def produce_and_consume(a, side, rounds):\n"
        "    current = torch.cuda.current_stream()\n"
        "    means = []\n"
        "    for r in range(3):\n"
        "        current.wait_stream(side)\n"
        "        a.fill_(r + 1)\n"
        "        side.wait_stream(current)\n"
        "        with torch.cuda.stream(side):\n"
        "            means.append(a.mean())\n"
        "    current.wait_stream(side)\n"
        "    return means",
        _RACY,
        _rounds((), (_RAW,), (), (_FINAL,)),
        _rounds((_WAR,), (_RAW,), (), ()),
        _rounds((), ("torch.cuda.synchronize()",), (), ("torch.cuda.synchronize()",)),
        _rounds((_WAR,), (), (_RAW,), (_FINAL,)),
    ),
}
