"""Chapter 06's typical wrong answers, by question number (see the package's docstring)."""

from helpers.exercises.solutions.ch06 import SOLUTIONS


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


def _side_timed(*body: str) -> str:
    """Code of a `time_side_work` that makes two timing events, runs `body`, then waits for the end and reads."""
    head = (
        "def time_side_work(fn, side):",
        "    start = torch.cuda.Event(enable_timing=True)",
        "    end = torch.cuda.Event(enable_timing=True)",
    )
    return "\n".join((*head, *(f"    {line}" for line in (*body, *_SYNC_AND_READ))))


#: Question 1's predictions, right (as the solution gives them) with one changed.
_RIGHT_MS = dict(zip(SOLUTIONS[1].splitlines()[1:-1], (10, 20, 30, 50, 60), strict=True))
_SNIPPETS = [line.split('"')[1] for line in _RIGHT_MS]


class _Code(str):
    """A value in an answer's code written as it is, not as a string."""

    __repr__ = str.__str__


def _predicted(*changed: tuple[int, object], keys: tuple = ()) -> str:
    """Code of an `event_ms` with the solution's predictions, `changed` ones as (snippet number, value) replaced."""
    values = dict(enumerate((10, 20, 30, 50, 60))) | dict(changed)
    items = [f"    {s!r}: {values[n]!r}," for n, s in enumerate(keys or _SNIPPETS)]
    return "event_ms = {\n" + "\n".join(items) + "\n}"


#: Lines of question 2's solution, by what they do.
_line = lambda text: next(line for line in SOLUTIONS[2].splitlines(keepends=True) if text in line)
_FIRST, _WAR, _RAW = _line("side.wait_stream(current)"), _line("side.wait_event"), _line("current.wait_event")
_CONSUME, _READ = _line("results.append"), _line("read[r % 2].record()")
_CALL = "double_buffered(bufs, side, 4, produce, consume) (produce takes 2 ms, consume 2 ms; the current stream is the"
_CALL += " caller's, whose earlier reads of both buffers are queued)"


def _serial(*order: str) -> str:
    """A `double_buffered` whose rounds make the streams wait for each other with wait_stream, in `order`."""
    body = {
        "side waits": "        side.wait_stream(current)",
        "produce": "        with torch.cuda.stream(side):\n            produce(bufs[r % 2], r)",
        "current waits": "        current.wait_stream(side)",
        "consume": "        results.append(consume(bufs[r % 2]))",
    }
    head = "def double_buffered(bufs, side, rounds, produce, consume):\n"
    head += "    current, results = torch.cuda.current_stream(), []"
    return "\n".join((head, "    for r in range(rounds):", *(body[o] for o in order), "    return results"))


#: Typical wrong answers to each question, by number, each with words its verdict must contain (the
#: message a learner who wrote it is told).
WRONG_ANSWERS: dict[int, tuple[tuple[str, str], ...]] = {
    1: (
        # side's work counted: the events mark the default stream's queue only
        (
            _predicted((0, 30)),
            "'gpu(10); gpu(20, side)': you predicted 30 ms; the events report 10 ms (simulated GPU). Between them: "
            "default stream 0–10 ms (_sleep), side stream 0–20 ms (_sleep)",
        ),
        # the two streams taken to run one after the other
        (_predicted((1, 30)), "you predicted 30 ms; the events report 20 ms (simulated GPU)"),
        # the wait both ways taken to let them run side by side
        (
            _predicted((2, 20)),
            "you predicted 20 ms; the events report 30 ms (simulated GPU). Between them: default stream 0–10 ms "
            "(_sleep), side stream 10–30 ms (_sleep)",
        ),
        # only the GPU's busy time counted: the GPU's clock runs while it sits idle, waiting for Python
        (
            _predicted((3, 20)),
            "'gpu(10); host(40); gpu(10)': you predicted 20 ms; the events report 50 ms (simulated GPU). Between them: "
            "default stream 0–10 ms (_sleep), host 0–40 ms (host(40)), default stream 40–50 ms (_sleep)",
        ),
        # the synchronize's wait left out
        (
            _predicted((4, 50)),
            "you predicted 50 ms; the events report 60 ms (simulated GPU). Between them: default stream 0–10 ms "
            "(_sleep), host 0–10 ms (torch.cuda.synchronize()), host 10–50 ms (host(40))",
        ),
        # seconds, not milliseconds
        (_predicted(*((n, v / 1000) for n, v in enumerate((10, 20, 30, 50, 60)))), "you predicted 0.01 ms"),
        (_predicted((4, ...)), "to be the milliseconds you predict, but got an ellipsis"),
        (_predicted((2, "30 ms")), "to be the milliseconds you predict, but got a str: '30 ms'"),
        # a snippet's key changed: it cannot be found
        (
            _predicted(keys=(*_SNIPPETS[:4], "gpu(10); synchronize(); host(40); gpu(10)")),
            "expected event_ms['gpu(10); torch.cuda.synchronize(); host(40); gpu(10)'] to be the milliseconds you "
            "predict, but got a str: 'missing'",
        ),
        ("event_ms = [10, 20, 30, 50, 60]", "expected a dict: each snippet of the cell, then the milliseconds"),
    ),
    2: (
        # no waits at all: the first produce overwrites what the caller is still reading
        (
            SOLUTIONS[2].replace(_FIRST, "").replace(_WAR, "").replace(_RAW, ""),
            f"{_CALL}: a produce into bufs[0] started at 0.003 ms while the caller's read on the current stream was "
            "reading it (until 2 ms): write-after-read; make side wait for that read first",
        ),
        (
            SOLUTIONS[2].replace(_FIRST, ""),
            "a produce into bufs[0] started at 0.004 ms while the caller's read on the current stream was reading it",
        ),
        (
            SOLUTIONS[2].replace(_RAW, ""),
            "round 0's consume started at 4 ms, before the produce it reads had finished at 6 ms (a stale read): make "
            "the current stream wait for that produce",
        ),
        (
            SOLUTIONS[2].replace(_WAR, ""),
            "(produce takes 1 ms, consume 5 ms; the current stream is the caller's, whose earlier reads of both "
            "buffers are queued): a produce into bufs[0] started at 12 ms while round 0's consume was reading it "
            "(until 16 ms): write-after-read",
        ),
        # wait_stream both ways, in the loop's natural order: each produce waits for the consume just queued
        (
            _serial("side waits", "produce", "current waits", "consume"),
            f"{_CALL}: round 1's produce ran 8–10 ms, round 0's consume 6–8 ms (simulated clock): no overlap",
        ),
        # one event for both buffers' consumes: the next produce waits for the consume of the other buffer too
        (
            SOLUTIONS[2].replace("[torch.cuda.Event(), torch.cuda.Event()]", "[torch.cuda.Event()] * 2"),
            "round 1's produce ran 8–10 ms, round 0's consume 6–8 ms (simulated clock): no overlap",
        ),
        (
            SOLUTIONS[2].replace(_READ, _READ + "        torch.cuda.synchronize()\n"),
            "Python waited for the GPU (torch.cuda.synchronize()); make the streams wait instead",
        ),
        (SOLUTIONS[2].replace(_READ, _READ + "        print(results[-1])\n"), "Python waited for the GPU (print()"),
        (
            SOLUTIONS[2].replace(_RAW, "        side.record_event().synchronize()\n"),
            "Python waited for the GPU (event.synchronize())",
        ),
        (
            SOLUTIONS[2].replace("produce(bufs[r % 2], r)", "produce(bufs[r % 2], r + 1)"),
            "round 0's result is 2; expected 1",
        ),
        # the waits made on the default stream, which is not the caller's current stream
        (
            SOLUTIONS[2].replace("torch.cuda.current_stream()", "torch.cuda.default_stream()"),
            "a produce into bufs[0] started at 0.005 ms while the caller's read on the current stream was reading it",
        ),
        (
            SOLUTIONS[2].replace(_RAW + _CONSUME, "            results.append(consume(bufs[r % 2]))\n"),
            "round 0's consume ran on the side stream, the produce it reads on the side stream; queue produce on side "
            "and consume on the current stream",
        ),
        (
            SOLUTIONS[2].replace("        with torch.cuda.stream(side):\n", "        if True:\n"),
            "round 0's consume ran on the caller's stream, the produce it reads on the caller's stream",
        ),
        (
            SOLUTIONS[2].replace("consume(bufs[r % 2])", "consume(bufs[(r + 1) % 2])"),
            "round 0's consume did not read bufs[0]",
        ),
        (
            SOLUTIONS[2].replace("    return results", "    return results[-1:]"),
            "returned 1 values; expected the 4 results of consume, in round order",
        ),
        (
            SOLUTIONS[2].replace("    return results", "    torch.cuda.set_stream(side)\n    return results"),
            "left the side stream current: set the caller's stream back, or use `with`",
        ),
    ),
    3: (
        # the code as the notebook gives it: both events on the current stream
        (
            _side_timed("start.record()", "fn()", "end.record()"),
            "on the default stream to one reached at 0.005 ms on the default stream; fn()'s work ran on the side "
            "stream from 0.004 to 5 ms: an event marks a point in its stream's queue",
        ),
        # the end on `side`, the start still on the current stream
        (
            _side_timed("start.record()", "fn()", "end.record(side)"),
            "returned 4.001; expected 2: you measured from an event reached at 1 ms on the default stream",
        ),
        # right order, but Python waits between the events
        (
            _side_timed("start.record()", "fn()", "torch.cuda.synchronize()", "end.record()"),
            "Python waited for the GPU (torch.cuda.synchronize()) before both events were queued",
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
            "returned 0.0; expected 2.5: you measured from an event reached at 4 ms on the caller's stream",
        ),
        # the start on `side`, the end on the current stream after a wait for `side`
        (
            _side_timed("start.record(side)", "fn()", "torch.cuda.current_stream().wait_stream(side)", "end.record()"),
            "to one reached at 4 ms on the caller's stream; fn()'s work ran on the side stream from 1 to 3.5 ms",
        ),
        # a host clock around synchronized work: right on a GPU, but not the events the task asks for
        (
            "def time_side_work(fn, side):\n"
            "    torch.cuda.synchronize()\n"
            "    t0 = time.perf_counter()\n"
            "    fn()\n"
            "    torch.cuda.synchronize()\n"
            "    return (time.perf_counter() - t0) * 1000",
            "did not call elapsed_time",
        ),
        # Python waits before the start event: the measurement is right, but the task forbids waiting there
        (
            _side_timed(
                "torch.cuda.synchronize()",
                "start.record()",
                "fn()",
                "torch.cuda.current_stream().wait_stream(side)",
                "end.record()",
            ),
            "Python waited for the GPU (torch.cuda.synchronize()) before both events were queued",
        ),
        (
            _side_timed("start.record(side)", "fn()", "side.synchronize()", "end.record(side)"),
            "Python waited for the GPU (side stream.synchronize()) before both events were queued",
        ),
        (
            _side_timed("start.record(side)", "fn()", "while not side.query():", "    pass", "end.record(side)"),
            "Python waited for the GPU (query() in a loop) before both events were queued",
        ),
        (
            _side_timed("start.record(side)", "fn()", "end.record(side)").replace(
                "return start.elapsed_time(end)", "return start.elapsed_time(end) / 1000"
            ),
            "returned 0.005001; expected 5: start.elapsed_time(end) gave 5.001; return it as it is",
        ),
        # the end event recorded after the `with` block ends, on the current stream again
        (
            _side_timed("with torch.cuda.stream(side):", "    start.record()", "    fn()", "end.record()"),
            "you measured from an event reached at 0.003 ms on the side stream to one reached at 0.005 ms on the "
            "default stream",
        ),
    ),
}


#: Right answers other than the solution, as a learner could write them: each must be accepted.
RIGHT_ANSWERS: dict[int, tuple[str, ...]] = {
    1: (
        _predicted(*((n, float(v)) for n, v in enumerate((10, 20, 30, 50, 60)))),
        _predicted((3, 50.4), (4, _Code("__import__('numpy').float64(60.0)")), (0, _Code("torch.tensor(10.0)"))),
        SOLUTIONS[1].replace("}", '    "anything else": 0,\n}'),
    ),
    2: (
        # wait_stream, the producer one round ahead: each wait covers only what it must
        "def double_buffered(bufs, side, rounds, produce, consume):\n"
        "    current, results = torch.cuda.current_stream(), []\n"
        "    side.wait_stream(current)\n"
        "    if rounds:\n"
        "        with torch.cuda.stream(side):\n"
        "            produce(bufs[0], 0)\n"
        "    for r in range(rounds):\n"
        "        current.wait_stream(side)  # round r's produce, the last queued on side\n"
        "        if r + 1 < rounds:\n"
        "            side.wait_stream(current)  # round r - 1's consume, the last queued here\n"
        "            with torch.cuda.stream(side):\n"
        "                produce(bufs[(r + 1) % 2], r + 1)\n"
        "        results.append(consume(bufs[r % 2]))\n"
        "    return results",
        # Event().record() and Event.wait(), an event per buffer each way
        "def double_buffered(bufs, side, rounds, produce, consume):\n"
        "    current = torch.cuda.current_stream()\n"
        "    filled, read = [torch.cuda.Event(), torch.cuda.Event()], [torch.cuda.Event(), torch.cuda.Event()]\n"
        "    side.wait_stream(current)\n"
        "    results = []\n"
        "    for r in range(rounds):\n"
        "        k = r % 2\n"
        "        with torch.cuda.stream(side):\n"
        "            read[k].wait()\n"
        "            produce(bufs[k], r)\n"
        "            filled[k].record()\n"
        "        filled[k].wait()\n"
        "        results.append(consume(bufs[k]))\n"
        "        read[k].record()\n"
        "    return tuple(results)",
        # the device-generic events, and record_event for the consume's
        SOLUTIONS[2].replace("torch.cuda.Event()", "torch.Event()"),
        SOLUTIONS[2].replace(_READ, "        read[r % 2] = current.record_event()\n"),
        SOLUTIONS[2].replace("torch.cuda.current_stream()", "torch.cuda.current_stream(bufs[0].device)"),
        SOLUTIONS[2].replace("with torch.cuda.stream(side)", "with torch.cuda.StreamContext(side)"),
    ),
    3: (
        # the events recorded inside `with torch.cuda.stream(side)`, on the stream that runs the work
        _side_timed("with torch.cuda.stream(side):", "    start.record()", "    fn()", "    end.record()"),
        _side_timed("side.record_event(start)", "fn()", "start.record(stream=side)".replace("start", "end")),
        # waiting after both events are queued, in three spellings
        _side_timed("start.record(side)", "fn()", "end.record(side)", "torch.cuda.synchronize()"),
        _side_timed("start.record(side)", "fn()", "end.record(side)", "side.synchronize()"),
        _side_timed("start.record(side)", "fn()", "end.record(side)", "while not end.query():", "    pass"),
        _side_timed("start.record(side)", "fn()", "end.record(side)").replace("torch.cuda.Event(", "torch.Event("),
    ),
}

WRONG_ANSWERS[3] += (
    (
        SOLUTIONS[3].replace(
            "def time_side_work(fn, side):\n", "def time_side_work(fn, side):\n    torch.cuda.set_stream(side)\n"
        ),
        "left the side stream current: set the caller's stream back, or use `with`",
    ),
)
