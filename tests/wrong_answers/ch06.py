"""Chapter 06's typical wrong answers, by question number (see the package's docstring)."""

from helpers.exercises.ch06 import QUESTIONS

#: The racy version question 2 starts from (the notebook's answer cell shows it).
_RACY = QUESTIONS[1].context()["RACY_PRODUCE_AND_CONSUME"]


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


def _side_timed(*body: str) -> str:
    """Code of a `time_side_work` that makes two timing events, runs `body`, then waits for the end and reads."""
    head = (
        "def time_side_work(fn, side):",
        "    start = torch.cuda.Event(enable_timing=True)",
        "    end = torch.cuda.Event(enable_timing=True)",
    )
    return "\n".join((*head, *(f"    {line}" for line in (*body, *_SYNC_AND_READ))))


_WAR, _RAW, _FINAL = "current.wait_stream(side)", "side.wait_stream(current)", "current.wait_stream(side)"


#: Typical wrong answers to each question, by number, each with words its verdict must contain (the
#: message a learner who wrote it is told).
WRONG_ANSWERS: dict[int, tuple[tuple[str, str], ...]] = {
    1: (
        (
            "def time_with_events(fn):\n"
            "    torch.cuda.synchronize()\n"
            "    start = time.perf_counter()\n"
            "    fn()\n"
            "    torch.cuda.synchronize()\n"
            "    return (time.perf_counter() - start) * 1000",
            "measure with two CUDA events",
        ),
        (
            "def time_with_events(fn):\n    t0 = time.perf_counter()\n    fn()\n"
            "    return (time.perf_counter() - t0) * 1000",
            "measure with two CUDA events",
        ),
        (_timed(*_AROUND, "return start.elapsed_time(end)"), "device not ready"),
        (
            _timed("fn()", "torch.cuda.synchronize()", "start.record()", "end.record()", *_SYNC_AND_READ),
            "record the start event before fn() and the end event after it",
        ),
        (_timed(*_AROUND, "end.synchronize()", "return start.elapsed_time(end) / 1000"), "already in milliseconds"),
        (_timed(*_AROUND, *_SYNC_AND_READ).replace("enable_timing=True", ""), "enable_timing=True"),
    ),
    2: (
        (
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
            "given rounds=4, return a list of the 4 results",
        ),
        (_RACY, "(read-after-write)"),
        (_rounds((), (_RAW,), (), (_FINAL,)), "(write-after-read)"),
        (_rounds((_WAR,), (_RAW,), (), ()), "Make the current stream wait for the side stream before you return"),
        (
            _rounds((), ("torch.cuda.synchronize()",), (), ("torch.cuda.synchronize()",)),
            "Python waited for the GPU inside your function (torch.cuda.synchronize())",
        ),
        (_rounds((_WAR,), (), (_RAW,), (_FINAL,)), "(read-after-write)"),
    ),
    3: (
        # the code as the notebook gives it: both events on the current stream
        (
            _side_timed("start.record()", "fn()", "end.record()"),
            "your end event, recorded on the default stream, was reached at",
        ),
        # the end on `side`, the start still on the current stream
        (
            _side_timed("start.record()", "fn()", "end.record(side)"),
            "once the side stream had done the work queued on it before: your time counts that wait too",
        ),
        # right order, but Python waits between the events
        (
            _side_timed("start.record()", "fn()", "torch.cuda.synchronize()", "end.record()"),
            "Python waited for the GPU (torch.cuda.synchronize()) between your two events",
        ),
        # the current stream made to wait for `side` around both events, which stay on the current stream
        (
            _side_timed(
                "current = torch.cuda.current_stream()",
                "current.wait_stream(side)",
                "start.record()",
                "fn()",
                "current.wait_stream(side)",
                "end.record()",
            ),
            "your start event, recorded on the default stream, was reached at 4 ms, after fn()'s work had started",
        ),
        # the start on `side`, the end on the current stream after a wait for `side`
        (
            _side_timed("start.record(side)", "fn()", "torch.cuda.current_stream().wait_stream(side)", "end.record()"),
            "your end event, recorded on the default stream, was reached at 4 ms, after fn()'s work had finished",
        ),
        # a host clock around synchronized work: right on a GPU, but not the events the task asks for
        (
            "def time_side_work(fn, side):\n"
            "    torch.cuda.synchronize()\n"
            "    t0 = time.perf_counter()\n"
            "    fn()\n"
            "    torch.cuda.synchronize()\n"
            "    return (time.perf_counter() - t0) * 1000",
            "time it with two CUDA events",
        ),
    ),
}


#: Right answers other than the solution, as a learner could write them: each must be accepted.
RIGHT_ANSWERS: dict[int, tuple[str, ...]] = {
    1: (
        "def time_with_events(fn):\n"
        "    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)\n"
        "    start.record(torch.cuda.current_stream())\n"
        "    fn()\n"
        "    end.record(torch.cuda.current_stream())\n"
        "    torch.cuda.synchronize()\n"
        "    return start.elapsed_time(end)",
        # Asking the end event until the GPU has reached it: works on a real GPU, so it must here too.
        "def time_with_events(fn):\n"
        "    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)\n"
        "    start.record()\n"
        "    fn()\n"
        "    end.record()\n"
        "    while not end.query():\n"
        "        pass\n"
        "    return start.elapsed_time(end)",
    ),
    2: (
        "def produce_and_consume(a, side, rounds):\n"
        "    current = torch.cuda.current_stream()\n"
        "    means = []\n"
        "    for r in range(rounds):\n"
        "        a.fill_(r + 1)\n"
        "        filled = torch.cuda.Event()\n"
        "        filled.record()\n"
        "        with torch.cuda.stream(side):\n"
        "            side.wait_event(filled)\n"
        "            means.append(a.mean())\n"
        "            read = torch.cuda.Event()\n"
        "            read.record()\n"
        "        current.wait_event(read)\n"
        "    return means",
    ),
}
