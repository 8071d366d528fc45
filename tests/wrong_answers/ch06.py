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


#: Question 2 with wait_stream, the producer one round ahead: each wait covers only what it must (a right answer).
_AHEAD = (
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
    "    return results"
)


#: Typical wrong answers to each question, by number, each with words its verdict must contain (the
#: message a learner who wrote it is told).
WRONG_ANSWERS: dict[int, tuple[tuple[str, str], ...]] = {
    1: (
        # the wait read the wrong way round: side waits for the default stream, which does not wait for side
        (
            _predicted((0, 30)),
            "'gpu(20, side); side.wait_stream(default); gpu(10)': you predicted 30 ms; the events report 10 ms "
            "(simulated GPU). Between them: side stream 0–20 ms (_sleep), default stream 0–10 ms (_sleep)",
        ),
        (_predicted((0, 20)), "you predicted 20 ms; the events report 10 ms (simulated GPU)"),
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
            "event_ms has no key 'gpu(10); torch.cuda.synchronize(); host(40); gpu(10)': keep each key of the cell "
            "exactly as it is written",
        ),
        (_predicted(keys=_SNIPPETS[1:]), "event_ms has no key 'gpu(20, side); side.wait_stream(default); gpu(10)'"),
        # not a number of milliseconds: a comparison with nan is always False
        (_predicted((1, _Code("float('nan')"))), "is nan: a prediction must be a finite number of ms"),
        (_predicted((3, _Code("float('inf')"))), "is inf: a prediction must be a finite number of ms"),
        ("event_ms = [10, 20, 30, 50, 60]", "expected a dict: each snippet of the cell, then the milliseconds"),
    ),
    2: (
        # no waits at all: the first produce overwrites what the caller is still reading
        (
            SOLUTIONS[2].replace(_FIRST, "").replace(_WAR, "").replace(_RAW, ""),
            f"{_CALL}: round 0's produce wrote bufs[0] at 0.003 ms, before the caller's read on the current stream had "
            "finished reading it at 2 ms: write-after-read; make side wait for it",
        ),
        (
            SOLUTIONS[2].replace(_FIRST, ""),
            "round 0's produce wrote bufs[0] at 0.004 ms, before the caller's read on the current stream had finished",
        ),
        (
            SOLUTIONS[2].replace(_RAW, ""),
            "round 0's consume started at 4 ms, before its produce had finished at 6 ms (a stale read): make the "
            "current stream wait for that produce",
        ),
        (
            SOLUTIONS[2].replace(_WAR, ""),
            "(produce takes 1 ms, consume 5 ms; the current stream is the caller's, whose earlier reads of both "
            "buffers are queued): round 2's produce wrote bufs[0] at 12 ms, before round 0's consume had finished "
            "reading it at 16 ms: write-after-read",
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
            f"{_CALL} called produce with r = [1, 2, 3, 4], consume 4 times: call each once a round, "
            "produce(bufs[r % 2], r) for r in range(rounds)",
        ),
        # the rounds numbered backwards, then in turn by buffer: produce's r is told in the order of the calls
        (
            SOLUTIONS[2].replace("produce(bufs[r % 2], r)", "produce(bufs[r % 2], rounds - 1 - r)"),
            "called produce with r = [3, 2, 1, 0], consume 4 times",
        ),
        (SOLUTIONS[2].replace("produce(bufs[r % 2], r)", "produce(bufs[r % 2], r % 2)"), "r = [0, 1, 0, 1], consume"),
        # the waits made on the default stream, which is not the caller's current stream
        (
            SOLUTIONS[2].replace("torch.cuda.current_stream()", "torch.cuda.default_stream()"),
            "queued); it used the default stream, which is not the current stream here: round 0's produce wrote "
            "bufs[0] at 0.005 ms, before the caller's read on the current stream had finished reading it",
        ),
        (
            SOLUTIONS[2].replace(_RAW + _CONSUME, "            results.append(consume(bufs[r % 2]))\n"),
            "round 0's consume ran on the side stream, its produce on the side stream; queue produce on side and "
            "consume on the current stream",
        ),
        (
            SOLUTIONS[2].replace("        with torch.cuda.stream(side):\n", "        if True:\n"),
            "round 0's consume ran on the caller's stream, its produce on the caller's stream",
        ),
        (
            SOLUTIONS[2].replace("consume(bufs[r % 2])", "consume(bufs[(r + 1) % 2])"),
            "round 0's consume did not read bufs[0]; round r fills and reads bufs[r % 2]",
        ),
        # each produce into the other buffer (its wait moved with it): round 0's consume reads a buffer never filled
        (
            SOLUTIONS[2]
            .replace("produce(bufs[r % 2], r)", "produce(bufs[(r + 1) % 2], r)")
            .replace("wait_event(read[r % 2])", "wait_event(read[(r + 1) % 2])"),
            "round 0's consume read bufs[0], which round 0's produce did not fill",
        ),
        (SOLUTIONS[2].replace("    return results", "    return results[-1:]"), "returned 1 values, not consume's 4"),
        # the results in reverse order
        (
            SOLUTIONS[2].replace("results.append(consume(bufs[r % 2]))", "results.insert(0, consume(bufs[r % 2]))"),
            f"{_CALL} returned 4 values, not consume's 4 results in round order",
        ),
        # a second consume each round, its result dropped
        (
            SOLUTIONS[2].replace(_CONSUME, _CONSUME + "        consume(bufs[r % 2])\n"),
            "consume 8 times: call each once",
        ),
        # one produce too many: a last round that only produces
        (
            SOLUTIONS[2]
            .replace("for r in range(rounds):", "for r in range(rounds + 1):")
            .replace(_CONSUME + _READ, "        if r < rounds:\n    " + _CONSUME + "    " + _READ),
            "called produce with r = [0, 1, 2, 3, 4], consume 4 times",
        ),
        # the producer a round ahead, without stopping at the last round
        (
            _AHEAD.replace("        if r + 1 < rounds:\n", "        if True:\n"),
            "called produce with r = [0, 1, 2, 3, 4], consume 4 times",
        ),
        # the producer a round ahead, its first produce made even when there are no rounds
        (_AHEAD.replace("    if rounds:\n", "    if True:\n"), "double_buffered(bufs, side, 0, produce, consume)"),
        # waits for the first rounds only: the fifth round of an unbalanced pipeline shows it
        (
            SOLUTIONS[2].replace(_RAW, "        if r < 3:\n    " + _RAW),
            "(produce takes 3 ms, consume 1 ms; the current stream is the caller's, whose earlier reads of both "
            "buffers are queued): round 3's consume started at 12 ms, before its produce had finished at 14 ms",
        ),
        (
            SOLUTIONS[2].replace(_WAR, "            if r < 3:\n    " + _WAR),
            "(produce takes 1 ms, consume 5 ms; the current stream is the caller's, whose earlier reads of both "
            "buffers are queued): round 3's produce wrote bufs[1] at 17 ms, before round 1's consume had finished",
        ),
        # every produce queued first, then every consume waiting for its own: a later produce overwrites a buffer
        # before its consume has read it (write-after-read), though no consume reads before its produce
        (
            "def double_buffered(bufs, side, rounds, produce, consume):\n"
            "    current, done, results = torch.cuda.current_stream(), [], []\n"
            "    side.wait_stream(current)\n"
            "    for r in range(rounds):\n"
            "        with torch.cuda.stream(side):\n"
            "            produce(bufs[r % 2], r)\n"
            "            done.append(side.record_event())\n"
            "    for r in range(rounds):\n"
            "        current.wait_event(done[r])\n"
            "        results.append(consume(bufs[r % 2]))\n"
            "    return results",
            "round 2's produce wrote bufs[0] at 12 ms, before round 0's consume had finished reading it at 16 ms: "
            "write-after-read; make side wait for it",
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
        _AHEAD,
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
        # the seed's style: Stream's methods called on the class, the stream passed first
        SOLUTIONS[2]
        .replace("side.wait_stream(current)", "torch.cuda.Stream.wait_stream(side, current)")
        .replace("side.wait_event(read[r % 2])", "torch.cuda.Stream.wait_event(side, read[r % 2])")
        .replace(
            "current.wait_event(side.record_event())", "torch.cuda.Stream.wait_event(current, side.record_event())"
        )
        .replace("    return results", "    assert isinstance(side, torch.cuda.Stream)\n    return results"),
    ),
    3: (
        # the events recorded inside `with torch.cuda.stream(side)`, on the stream that runs the work
        _side_timed("with torch.cuda.stream(side):", "    start.record()", "    fn()", "    end.record()"),
        _side_timed("side.record_event(start)", "fn()", "start.record(stream=side)".replace("start", "end")),
        # waiting after both events are queued, in three spellings
        _side_timed("start.record(side)", "fn()", "end.record(side)", "torch.cuda.synchronize()"),
        _side_timed("start.record(side)", "fn()", "end.record(side)", "side.synchronize()"),
        _side_timed("start.record(side)", "fn()", "end.record(side)", "torch.cuda.Stream.synchronize(side)"),
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
