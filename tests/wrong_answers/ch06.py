"""Chapter 06's typical wrong answers, by question number (see the package's docstring)."""

from helpers.exercises.solutions.ch06 import SOLUTIONS

#: The racy version question 2 starts from (the notebook's answer cell).
_RACY = """def produce_and_consume(a, side, rounds):
    means = []
    for r in range(rounds):
        a.fill_(r + 1)
        with torch.cuda.stream(side):
            means.append(a.mean())
    return means"""


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


def _inside(code: str, *before: str, after: str = "") -> str:
    """`code` with lines added inside its `with torch.cuda.stream(side):` block, before and after the mean."""
    mean = "            means.append(a.mean())"
    return code.replace(
        mean, "\n".join((*(f"            {line}" for line in before), mean, *([f"            {after}"] * bool(after))))
    )


def _side_timed(*body: str) -> str:
    """Code of a `time_side_work` that makes two timing events, runs `body`, then waits for the end and reads."""
    head = (
        "def time_side_work(fn, side):",
        "    start = torch.cuda.Event(enable_timing=True)",
        "    end = torch.cuda.Event(enable_timing=True)",
    )
    return "\n".join((*head, *(f"    {line}" for line in (*body, *_SYNC_AND_READ))))


#: Reads of a simulated value or tensor on the host, and how a verdict names each.
_READS = (
    ('print("round", r, means[-1])', "(print() or str())"),
    ("print(a)", "(print() or str())"),
    ("print(means)", "(print() or repr())"),
    ("a.tolist()", "(.tolist())"),
    ("f'{means[-1]:.2f}'", "(an f-string or format())"),
    ("repr(means[-1])", "(print() or repr())"),
    ('f"{means[-1]}"', "(an f-string or format())"),
    ("bool(means[-1])", "(bool())"),
    ("bool(means[0] == 1)", "(a `==` comparison)"),
    ("means[-1] > 100", "(a `>` comparison)"),
    ("float(means[-1])", "(float())"),
    ("int(means[-1])", "(int())"),
    ("means[-1].tolist()", "(.tolist())"),
    ("means[-1].cpu().numpy()", "(.cpu())"),
    ("means[-1].numpy()", "(.numpy())"),
    ("means[-1].to('cpu')", '(.to("cpu"))'),
)

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
            "did not call elapsed_time: time fn() with two torch.cuda.Event(enable_timing=True)",
        ),
        (
            "def time_with_events(fn):\n    t0 = time.perf_counter()\n    fn()\n"
            "    return (time.perf_counter() - t0) * 1000",
            "did not call elapsed_time",
        ),
        (_timed(*_AROUND, "return start.elapsed_time(end)"), "device not ready"),
        # both events after fn(): they mark the moment the work was done, not its start
        (
            _timed("fn()", "torch.cuda.synchronize()", "start.record()", "end.record()", *_SYNC_AND_READ),
            "returned 0.001; expected 5: you measured from an event reached at 5 ms on the default stream to one "
            "reached at 5.01 ms on the default stream; fn()'s work ran on the default stream from 0.003 to 5 ms",
        ),
        (
            _timed(*_AROUND, "end.synchronize()", "return start.elapsed_time(end) / 1000"),
            "returned 0.005001; expected 5: start.elapsed_time(end) gave 5.001; return it as it is",
        ),
        (_timed(*_AROUND, *_SYNC_AND_READ).replace("enable_timing=True", ""), "enable_timing=True"),
        (_timed("start.record()", "fn()", "fn()", "end.record()", *_SYNC_AND_READ), "called fn() 2 times"),
        (
            _timed(*_AROUND, "end.synchronize()", "return end.elapsed_time(start)"),
            "returned -5.001; expected 5: you measured from an event reached at 5 ms",
        ),
        # a whole number of milliseconds: right for 5 ms of work, not for 2.5
        (
            _timed(*_AROUND, "end.synchronize()", "return round(start.elapsed_time(end))"),
            "(fn() queues 2.5 ms of GPU work; 3 ms already on the current stream) returned 2; expected 2.5",
        ),
        (
            _timed(*_AROUND, "end.synchronize()", "return int(start.elapsed_time(end))"),
            "returned 2; expected 2.5: start.elapsed_time(end) gave 2.5; return it as it is",
        ),
        # the wait before the end event is recorded: it waits for nothing, and the end is not reached yet
        (
            _timed("start.record()", "fn()", "end.synchronize()", "end.record()", "return start.elapsed_time(end)"),
            "device not ready (SIMULATION: the GPU had not reached the end event (on the default stream) when "
            "elapsed_time was called: end_event.record(), then end_event.synchronize())",
        ),
        # the end event on the default stream, the start on the caller's: the start is not reached when the end is
        (
            _timed("start.record()", "fn()", "end.record(torch.cuda.default_stream())", *_SYNC_AND_READ),
            "device not ready (SIMULATION: the GPU had not reached the start event (on the caller's stream) when "
            "elapsed_time was called: record both on one stream)",
        ),
        # one event recorded twice: it marks the second place only
        (
            _timed("start.record()", "fn()", "start.record()", "end.record()", *_SYNC_AND_READ),
            "returned 0.0; expected 5: you measured from an event reached at 5 ms on the default stream to one reached "
            "at 5 ms on the default stream; fn()'s work ran on the default stream from 0.004 to 5 ms",
        ),
        # the events on the default stream: right only while it is the current stream
        (
            _timed(
                "start.record(torch.cuda.default_stream())",
                "fn()",
                "end.record(torch.cuda.default_stream())",
                *_SYNC_AND_READ,
            ),
            "(fn() queues 2 ms of GPU work; 1 ms already on the current stream (the caller's, not the default stream)) "
            "returned 0.002; expected 2: you measured from an event reached at 0.003 ms on the default stream to one "
            "reached at 0.005 ms on the default stream; fn()'s work ran on the caller's stream from 1 to 3 ms: an "
            "event marks a point in its stream's queue",
        ),
        # fn() on a stream of the timer's own, which does not wait for the caller's earlier work
        (
            _timed("s = torch.cuda.Stream()", "with torch.cuda.stream(s):", *(f"    {line}" for line in _AROUND))
            + "\n    end.synchronize()\n    return start.elapsed_time(end)",
            "(fn() queues 2.5 ms of GPU work; 3 ms already on the current stream): fn() ran on the stream 2 from 0.004 "
            "ms, before the current stream's earlier work ended at 3 ms: make that stream wait for the current one",
        ),
        # the start event on a stream of its own: right while the current stream is idle, not after earlier work
        (
            _timed("start.record(torch.cuda.Stream())", "fn()", "end.record()", *_SYNC_AND_READ),
            "on the stream 2 to one reached at 5.5 ms on the default stream",
        ),
    ),
    2: (
        (
            _rounds((_WAR,), (_RAW,), (), (_FINAL,)).replace("range(rounds)", "range(3)"),
            "produce_and_consume(a, side, 1) (fill_ takes 10 ms, mean 1 ms; `a` of 4 elements; the current stream is "
            "the caller's, not the default one, and has a.mean() queued) returned [a.mean(), a.mean(), a.mean()]",
        ),
        (_RACY, "(read-after-write)"),
        # the last round's event waited for after the loop: no event where there is no round (accepted before)
        (
            _inside(_rounds((_WAR,), (_RAW,), (), ("current.wait_event(done)",)), after="done = side.record_event()"),
            "produce_and_consume(a, side, 0) (fill_ takes 1 ms, mean 1 ms; `a` of 2 elements; the current stream is "
            "the caller's, not the default one, and has a.mean() queued) raised UnboundLocalError",
        ),
        # a read of a mean on the host, in the loop of an otherwise right answer: Python waits for the GPU
        *((_rounds((_WAR,), (_RAW,), (read,), (_FINAL,)), f"Python waited for the GPU {how}") for read, how in _READS),
        # a form the simulated value lacks: the message says so, and what it knows
        (
            _rounds((_WAR,), (_RAW,), ("means[-1].abs()",), (_FINAL,)),
            "raised AttributeError (line 10 of your code): the SIMULATED value has no 'abs': it knows / by a number, "
            ".clone(), .float(), .detach(), record_stream, host reads (.item(), float(v), print, ...)",
        ),
        (_rounds((), (_RAW,), (), (_FINAL,)), "(write-after-read)"),
        (_rounds((_WAR,), (_RAW,), (), ()), "make the current stream wait for the side stream before you return"),
        (
            _rounds((), ("torch.cuda.synchronize()",), (), ("torch.cuda.synchronize()",)),
            "Python waited for the GPU (torch.cuda.synchronize())",
        ),
        (_rounds((_WAR,), (), (_RAW,), (_FINAL,)), "(read-after-write)"),
        # a synchronize inside the loop only: the values are right, but Python waits every round
        (_rounds((), (), ("torch.cuda.synchronize()",), ()), "Python waited for the GPU (torch.cuda.synchronize())"),
        (
            _rounds((_WAR,), ("side.synchronize()",), (), (_FINAL,)),
            "Python waited for the GPU (side stream.synchronize())",
        ),
        (_rounds((_WAR,), (_RAW,), (), ("while not side.query():", "    pass")), "(query() in a loop)"),
        # the streams wait for each other in the first round only: right for one round, not for three
        (
            _rounds(("if r == 0:", f"    {_WAR}"), ("if r == 0:", f"    {_RAW}"), (), (_FINAL,)),
            "produce_and_consume(a, side, 3) (fill_ takes 10 ms, mean 1 ms; `a` of 4 elements; the current stream is "
            "the caller's, not the default one, and has a.mean() queued): a fill_ queued after round 1's mean started "
            "at 11 ms, while it read `a` until 12 ms (write-after-read)",
        ),
        # `a` cleared after the last mean without waiting for it: the clear overwrites what the mean reads
        (
            _rounds((_WAR,), (_RAW,), (), ("a.zero_()", _FINAL)),
            "produce_and_consume(a, side, 1) (fill_ takes 10 ms, mean 1 ms; `a` of 4 elements; the current stream is "
            "the caller's, not the default one, and has a.mean() queued): a fill_ queued after round 1's mean started "
            "at 11 ms, while it read `a` until 12 ms (write-after-read)",
        ),
        # the read event recorded on the current stream, not on `side`: the current stream waits for nothing
        (
            _rounds(
                (),
                ("filled = torch.cuda.Event()", "filled.record()", "side.wait_event(filled)"),
                ("read = torch.cuda.Event()", "read.record()", "current.wait_event(read)"),
                (),
            ),
            "round 1's mean was not written yet: make the current stream wait for the side stream before you return "
            "(caller's stream.wait_event(an event recorded on caller's stream) waits for nothing)",
        ),
        # everything on side: the first fill_ does not wait for what the caller queued on `a` before
        (
            "def produce_and_consume(a, side, rounds):\n"
            "    means = []\n"
            "    with torch.cuda.stream(side):\n"
            "        for r in range(rounds):\n"
            "            a.fill_(r + 1)\n"
            "            means.append(a.mean())\n"
            "    torch.cuda.current_stream().wait_stream(side)\n"
            "    return means",
            "a fill_ queued after the caller's a.mean() started at 0.002 ms, while it read `a` until 1 ms "
            "(write-after-read): make the side stream wait for the caller's stream before each fill_",
        ),
        # the default stream in place of the current one: right only while they are the same
        (
            SOLUTIONS[2].replace("torch.cuda.current_stream()", "torch.cuda.default_stream()"),
            "round 1's mean started at 0.005 ms, before that round's fill_ had finished at 11 ms (read-after-write)",
        ),
        # the sum, not the mean: the same for one element only
        (SOLUTIONS[2].replace("a.mean()", "a.sum()"), "round 1's mean is 4.0; expected 1"),
        # the mean as the sum over a hard-coded 4 elements: right while `a` has 4
        (
            SOLUTIONS[2].replace("a.mean()", "a.sum() / 4"),
            "`a` of 3 elements; the current stream is the caller's, not the "
            "default one, and has a.mean() queued): round 1's mean is 0.75; expected 1",
        ),
        # waits written inside the `with` block, where the current stream is side: each waits for nothing
        (
            _inside(_rounds((_WAR,), (_RAW,)), after="torch.cuda.current_stream().wait_stream(side)"),
            "before you return (side stream.wait_stream(side stream) waits for nothing; inside `with "
            "torch.cuda.stream(side):` the current stream is side)",
        ),
        (
            _inside(_rounds((_WAR,), (), (), (_FINAL,)), "side.wait_stream(torch.cuda.current_stream())"),
            "(read-after-write): make the side stream wait for the caller's stream after each fill_ (side stream."
            "wait_stream(side stream) waits for nothing; inside `with torch.cuda.stream(side):` the current stream is "
            "side)",
        ),
        (
            _inside(
                _rounds((_WAR,), (), (), (_FINAL,)),
                "written = torch.cuda.Event()",
                "written.record()",
                "side.wait_event(written)",
            ),
            "(side stream.wait_event(an event recorded on side stream) waits for nothing; inside",
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
        "def time_with_events(fn):\n"
        "    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)\n"
        "    start.record(torch.cuda.current_stream())\n"
        "    fn()\n"
        "    end.record(torch.cuda.current_stream())\n"
        "    torch.cuda.synchronize()\n"
        "    return start.elapsed_time(end)",
        # Asking the end event until the GPU has reached it: works on a real GPU, so it must here too.
        _timed(*_AROUND, "while not end.query():", "    pass", "return start.elapsed_time(end)"),
        # The device-generic event (a CUDA event on a CUDA machine), and a wait of the stream.
        _timed(*_AROUND, "torch.cuda.current_stream().synchronize()", "return float(start.elapsed_time(end))").replace(
            "torch.cuda.Event(", "torch.Event("
        ),
        # fn() on a stream of the timer's own that waits for the caller's earlier work
        _timed(
            "s = torch.cuda.Stream()",
            "s.wait_stream(torch.cuda.current_stream())",
            "with torch.cuda.stream(s):",
            *(f"    {line}" for line in _AROUND),
            *_SYNC_AND_READ,
        ),
        # Question 1 does not forbid waiting between fn() and the end event: the measurement stays right.
        _timed("start.record()", "fn()", "torch.accelerator.synchronize()", "end.record()", *_SYNC_AND_READ),
        "def time_with_events(fn):\n"
        "    stream = torch.cuda.current_stream()\n"
        "    start = stream.record_event(torch.cuda.Event(enable_timing=True))\n"
        "    fn()\n"
        "    end = stream.record_event(torch.cuda.Event(enable_timing=True))\n"
        "    end.synchronize()\n"
        "    return np.float64(start.elapsed_time(end))".replace("np.float64", "__import__('numpy').float64"),
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
        # one wait each way per round, the second at the end of the round (it also covers the return)
        "def produce_and_consume(a, side, rounds):\n"
        "    means = []\n"
        "    for r in range(rounds):\n"
        "        a.fill_(float(r + 1))\n"
        "        side.wait_stream(torch.cuda.current_stream())\n"
        "        with torch.cuda.stream(side):\n"
        "            means.append(a.mean())\n"
        "        torch.cuda.current_stream().wait_stream(side)\n"
        "    return tuple(means)",
        # the function form of the mean
        SOLUTIONS[2].replace("a.mean()", "torch.mean(a)"),
        # other spellings of the fill and the mean
        SOLUTIONS[2].replace("a.mean()", "a.sum() / a.numel()"),
        SOLUTIONS[2].replace("a.mean()", "torch.sum(a) / len(a)"),
        SOLUTIONS[2].replace("a.mean()", "a.mean(dim=0)"),
        SOLUTIONS[2].replace("a.fill_(r + 1)", "a[:] = r + 1"),
        SOLUTIONS[2].replace("a.fill_(r + 1)", "a.zero_().add_(r + 1)"),
        # the events made by the streams, the read one recorded on `side` by record_event
        "def produce_and_consume(a, side, rounds):\n"
        "    current, means = torch.cuda.current_stream(), []\n"
        "    for r in range(rounds):\n"
        "        a.fill_(r + 1)\n"
        "        side.wait_event(current.record_event())\n"
        "        with torch.cuda.stream(side):\n"
        "            means.append(a.mean())\n"
        "        current.wait_event(side.record_event())\n"
        "    return means",
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

#: Round 3's findings: reads of `a` through a view, copy or cast of it, or with set_stream in place of `with`.
_MEAN, _WITH = "means.append(a.mean())", "        with torch.cuda.stream(side):\n            means.append(a.mean())"
RIGHT_ANSWERS[2] += (
    *(
        SOLUTIONS[2].replace("a.mean()", read)
        for read in ("a.clone().mean()", "a.float().mean()", "a.detach().mean()", "a.view(-1).mean()", "a[:].mean()")
    ),
    SOLUTIONS[2].replace("a.mean()", "a.sum() / a.shape[0]"),
    SOLUTIONS[2].replace(
        _WITH,
        "        torch.cuda.set_stream(side)\n        means.append(a.mean())\n        torch.cuda.set_stream(current)",
    ),
)
WRONG_ANSWERS[2] += (
    (
        SOLUTIONS[2].replace(_MEAN, "means.insert(0, a.mean())"),
        "produce_and_consume(a, side, 3) (fill_ takes 10 ms, mean 1 ms; `a` of 4 elements; the current stream is the "
        "caller's, not the default one, and has a.mean() queued): round 1's mean is 3.0; expected 1",
    ),
)

#: Round 6's right answers the simulation refused: StreamContext, torch.accelerator's current stream, a's device
RIGHT_ANSWERS[2] += (
    SOLUTIONS[2].replace("with torch.cuda.stream(side)", "with torch.cuda.StreamContext(side)"),
    SOLUTIONS[2].replace("torch.cuda.current_stream()", "torch.accelerator.current_stream()"),
    SOLUTIONS[2].replace("torch.cuda.current_stream()", "torch.cuda.current_stream(a.device)"),
)
#: Round 6's finding: side left as the current stream after the call
WRONG_ANSWERS[2] += (
    (
        SOLUTIONS[2]
        .replace(
            _WITH,
            "        torch.cuda.set_stream(side)\n        means.append(a.mean())\n"
            "        torch.cuda.set_stream(current)",
        )
        .replace("    return means", "    torch.cuda.set_stream(side)\n    return means"),
        "queued) left the side stream current: set the caller's stream back, or use `with`",
    ),
)

#: Round 4's findings: a snapshot of `a` made on the current stream and read on `side` is a tensor of its own (the
#: simulation's clone copied `a` in place of returning it); the means stacked; the first write-after-read wait skipped.
_SNAPSHOT = (
    "def produce_and_consume(a, side, rounds):\n"
    "    current = torch.cuda.current_stream()\n"
    "    means = []\n"
    "    for r in range(rounds):\n"
    "        a.fill_(r + 1)\n"
    "        snap = a.clone()\n"
    "        side.wait_stream(current)\n"
    "        with torch.cuda.stream(side):\n"
    "            means.append(snap.mean())\n"
    "        snap.record_stream(side)\n"
    "    current.wait_stream(side)\n"
    "    return means"
)
_KEEP = "        snaps.append(snap)\n"  # every snapshot kept until the function returns, after the last wait
RIGHT_ANSWERS[2] += (
    _SNAPSHOT,  # the attacker's answer: each mean reads that round's copy, made in order on the current stream
    _SNAPSHOT.replace("a.clone()", "torch.clone(a.detach())"),
    _SNAPSHOT.replace("a.clone()", "torch.empty_like(a)\n        snap.copy_(a)"),
    _SNAPSHOT.replace("snap.mean()", "torch.mean(snap)").replace(
        "snap = a.clone()", "snap = a.new_empty(a.shape)\n        snap[:] = a"
    ),
    # without record_stream, but the current stream waits for side before each new copy: no memory in use is reused
    SOLUTIONS[2]
    .replace("a.fill_(r + 1)\n", "a.fill_(r + 1)\n        snap = a.clone()\n")
    .replace(_MEAN, "means.append(snap.mean())"),
    # without record_stream, every copy kept alive until the current stream has waited for side
    _SNAPSHOT.replace("        snap.record_stream(side)\n", _KEEP).replace(
        "    means = []\n", "    means, snaps = [], []\n"
    ),
    # the first round does not wait for side: only the caller's read, queued on the current stream, comes before
    SOLUTIONS[2].replace(
        "        current.wait_stream(side)  # write",
        "        if r > 0:\n            current.wait_stream(side)  # write",
    ),
)
WRONG_ANSWERS[2] += (
    # the attacker's answer without record_stream: a copy freed while side reads it may be given to the next one
    (
        _SNAPSHOT.replace("        snap.record_stream(side)\n", ""),
        "produce_and_consume(a, side, 5) (fill_ takes 1 ms, mean 10 ms; `a` of 2 elements; the current stream is the "
        "caller's, not the default one, and has a.mean() queued): Python freed a copy of `a` made on the caller's "
        "stream while the side stream read it until 22 ms (the caller's stream had work queued to 14 ms only), with no "
        "record_stream for it",
    ),
    # the copy read on side before side waited for it
    (
        _SNAPSHOT.replace("        side.wait_stream(current)\n", ""),
        "round 1's mean started at 0.004 ms, before the copy it read had finished at 21 ms (read-after-write): make "
        "the side stream wait for the caller's stream after each copy",
    ),
    # the copy made on side, which does not wait for the fill
    (
        SOLUTIONS[2]
        .replace("        side.wait_stream(current)  # read-after-write: the fill is done\n", "")
        .replace(_MEAN, "means.append(a.clone().mean())"),
        "round 1's copy of `a` started at 0.004 ms, before that round's fill_ had finished at 11 ms (read-after-write)",
    ),
    # one buffer refilled every round on the current stream, which does not wait for side's mean of it
    (
        _SNAPSHOT.replace("        snap = a.clone()\n", "        buf.copy_(a)\n")
        .replace("snap.", "buf.")
        .replace("    means = []\n", "    means, buf = [], torch.empty_like(a)\n"),
        "a copy queued after round 1's mean started at 13 ms, while it read the copy until 22 ms (write-after-read): "
        "make the caller's stream wait for the side stream before each copy",
    ),
    # the means stacked into one tensor: the task returns them in a list (and the simulation cannot stack them)
    (
        SOLUTIONS[2].replace("    return means", "    return torch.stack(means)"),
        "raised AttributeError (line 10 of your code): the SIMULATED value has no torch.stack (return a list of the "
        "means): it knows",
    ),
    # a mean of a tensor of its own, filled with the round's number: it never reads `a`
    (
        SOLUTIONS[2].replace("a.fill_(r + 1)", "b = torch.empty_like(a).fill_(r + 1)").replace("a.mean()", "b.mean()"),
        "round 1's mean read neither `a` nor a copy of it",
    ),
)

#: Round 5's findings: copies and casts of a mean (on side, after it, or on the current stream after the last wait) are
#: right; one made on the current stream before that wait reads the mean before side has computed it.
_LAST = "            means.append(a.mean())"
RIGHT_ANSWERS[2] += (
    SOLUTIONS[2].replace("a.mean()", "a.mean(dim=0).clone()"),
    SOLUTIONS[2].replace("a.mean()", "a.mean().float()"),
    SOLUTIONS[2].replace("a.mean()", "torch.mean(a).detach()"),
    SOLUTIONS[2].replace("    return means", "    return [m.clone() for m in means]"),
)
WRONG_ANSWERS[2] += (
    (
        SOLUTIONS[2].replace(_LAST, "            mean = a.mean()\n        means.append(mean.clone())"),
        "produce_and_consume(a, side, 1) (fill_ takes 10 ms, mean 1 ms; `a` of 4 elements; the current stream is the "
        "caller's, not the default one, and has a.mean() queued): round 1's mean is nan; expected 1 (a copy or / of "
        "it ran at 11 ms, before it was done at 12 ms)",
    ),
    (
        SOLUTIONS[2].replace(_LAST, "            total = a.sum()\n        means.append(total / a.numel())"),
        "round 1's mean is nan; expected 1 (a copy or / of it ran at 11 ms, before it was done at 12 ms)",
    ),
    # a mean of a tensor of its own filled with the round's number, read on side with record_stream: never reads `a`
    (
        SOLUTIONS[2]
        .replace("a.fill_(r + 1)", "a.fill_(r + 1)\n        b = torch.empty_like(a)\n        b.fill_(r + 1)")
        .replace("a.mean())", "b.mean())\n            b.record_stream(side)"),
        "round 1's mean read neither `a` nor a copy of it",
    ),
)

#: Round 7's findings: the current stream switched with set_stream and left so (q1 timed on the default stream)
WRONG_ANSWERS[1] += (
    (
        SOLUTIONS[1].replace(
            "    start, end", "    torch.cuda.set_stream(torch.cuda.default_stream())\n    start, end"
        ),
        "left the default stream current: set the caller's stream back, or use `with`",
    ),
)
WRONG_ANSWERS[3] += (
    (
        SOLUTIONS[3].replace(
            "def time_side_work(fn, side):\n", "def time_side_work(fn, side):\n    torch.cuda.set_stream(side)\n"
        ),
        "left the side stream current: set the caller's stream back, or use `with`",
    ),
)
