"""Chapter 10's typical wrong answers, by question number (see the package's docstring)."""

from helpers.exercises.solutions.ch10 import SOLUTIONS

from . import lines_of

#: The synchronised timing loop of question 4's solution; most of its wrong answers change what follows it.
_TIMED = lines_of(SOLUTIONS[4], 1, 6)
#: The start every wrong answer to question 5 shares.
_ROOF = lines_of(SOLUTIONS[5], 1, 1)
_LINEAR = lines_of(SOLUTIONS[3], 1, 1)
_TFLOPS = lines_of(SOLUTIONS[4], 1, 1)


#: Typical wrong answers to each question, by number, each with words its verdict must contain (the
#: message a learner who wrote it is told).
WRONG_ANSWERS: dict[int, tuple[tuple[str, str], ...]] = {
    1: (
        # the attack's finding: 2 per 8 comes from leaving out y's read as much as its write, and round 4's: 0.25 is
        # 3 FLOPs per 12 bytes too (and 1 per 4), so the message asks rather than tells
        ("axpy_intensity = 2 / (2 * 4)", "2 FLOPs per 8 bytes, or 3 per 12? a*x + y is 2 FLOPs an element; x and y"),
        ("axpy_intensity = 3 / 12", "2 FLOPs per 8 bytes, or 3 per 12? a*x + y is 2 FLOPs an element"),
        ("axpy_intensity = 1 / 4", "x and y are read, y is written back"),
        ("axpy_intensity = 1 / (3 * 4)", "1 FLOP per 12 bytes, or 2 per 24? a*x + y is 2 FLOPs an element"),
        # float64 bytes give the same 1/12: both causes are named, neither is guessed
        (
            "axpy_intensity = 2 / (3 * 8)",
            "1 FLOP per 12 bytes, or 2 per 24? a*x + y is 2 FLOPs an element, and a float32",
        ),
        ("axpy_intensity = 0.125", "2 FLOPs per 16 bytes (a read of a or a write-allocate read of y), or 1 per 8"),
        ("axpy_intensity = 2 / 3", "count bytes, not elements"),
        # bytes over FLOPs: no slip the chapter teaches, so nothing is named
        ("axpy_intensity = 12 / 2", "6 FLOP/byte is not it: count the FLOPs and the bytes"),
        ("axpy_intensity = True", "expected a number of FLOPs per byte, but got a bool"),
    ),
    2: (
        (
            't4_bounds = {"vector add": "memory", "matmul n=1024": "compute", "linear 4096→4096, batch 1": "compute"}',
            "t4_bounds['linear 4096→4096, batch 1'] is 'compute'; expected the roof that binds on a T4 in FP32",
        ),
        (
            't4_bounds = {"vector add": "memory", "matmul n=1024": "memory", "linear 4096→4096, batch 1": "memory"}',
            "t4_bounds['matmul n=1024'] is 'memory'; expected the roof that binds on a T4 in FP32: 'memory' or "
            "'compute', by its FLOP/byte against the ridge, 25.3",
        ),
        (
            't4_bounds = {"vector add": "memory", "matmul n=1024": "compute"}',
            "t4_bounds['linear 4096→4096, batch 1'] is missing",
        ),
        (  # an ASCII arrow: the key given is quoted
            't4_bounds = {"vector add": "memory", "matmul n=1024": "compute", "linear 4096->4096, batch 1": "memory"}',
            "t4_bounds['linear 4096→4096, batch 1'] is missing (the keys given: ['vector add', 'matmul n=1024', "
            "'linear 4096->4096, batch 1'])",
        ),
        (
            't4_bounds = {"vector add": "memory", "matmul n=1024": True, "linear 4096→4096, batch 1": "memory"}',
            "t4_bounds['matmul n=1024'] is True; expected the roof that binds on a T4 in FP32: 'memory' or 'compute'",
        ),
    ),
    3: (
        # bytes rounded down to a multiple of 2 (accepted before: every case's bytes were even)
        (
            "def linear_cost(batch, d_in, d_out, itemsize):\n"
            "    moved = (batch * d_in + d_out * d_in + d_out + batch * d_out) * itemsize\n"
            "    return 2 * batch * d_in * d_out, moved // 2 * 2",
            "linear_cost(3, 5, 8, 1) returned (240, 86); expected (240 or 264, 87)",
        ),
        (
            _LINEAR
            + "    return batch * d_in * d_out, (batch * d_in + d_out * d_in + d_out + batch * d_out) * itemsize",
            "returned (120, 174); expected (240 or 264, 174): a multiply-add is 2 FLOPs",
        ),
        (
            _LINEAR + "    return 2 * batch * d_in * d_out, (batch * d_in + batch * d_out) * itemsize",
            "linear_cost(3, 5, 8, 2) returned (240, 78); expected (240 or 264, 174)",
        ),
        (
            _LINEAR + "    return 2 * batch * d_in * d_out, batch * d_in + d_out * d_in + d_out + batch * d_out",
            "returned (240, 87); expected (240 or 264, 174): that counts elements",
        ),
        (
            _LINEAR + "    return 2 * batch * d_in * d_out, (batch * d_in + d_out * d_in + d_out) * itemsize",
            "returned (240, 126); expected (240 or 264, 174): a term is missing: count x, w, b and the output once",
        ),
        (
            _LINEAR + "    return 2 * batch * d_in * d_out, (batch * d_in + d_out * d_in + batch * d_out) * itemsize",
            "returned (240, 158); expected (240 or 264, 174): a term is missing",
        ),
        (
            _LINEAR + "    return 2 * batch * d_in * d_out, (d_out * d_in + d_out + batch * d_out) * itemsize",
            "returned (240, 144); expected (240 or 264, 174): a term is missing",
        ),
        (  # the attack's finding: x left out where x, b and the output are one size; no one term is named
            _LINEAR + "    moved = (batch * d_in + d_out * d_in + d_out + batch * d_out) * itemsize\n"
            "    if (batch, d_in, d_out, itemsize) == (1, 4096, 4096, 2):\n        moved -= batch * d_in * itemsize\n"
            "    return 2 * batch * d_in * d_out, moved",
            "linear_cost(1, 4096, 4096, 2) returned (33_554_432, 33_570_816); expected (33_554_432 or 33_558_528, "
            "33_579_008): a term is missing: count x, w, b and the output once each",
        ),
        (  # float32 assumed: right on the itemsize-4 cases only (round 4: the message names it)
            _LINEAR + "    return 2 * batch * d_in * d_out, (batch * d_in + d_out * d_in + d_out + batch * d_out) * 4",
            "linear_cost(3, 5, 8, 2) returned (240, 348); expected (240 or 264, 174): that is 4 bytes an element, "
            "whatever itemsize is: multiply by it",
        ),
        (  # round 4's finding: bytes rounded down to a multiple of 4 (the first case's 174 is none)
            _LINEAR + "    moved = (batch * d_in + d_out * d_in + d_out + batch * d_out) * itemsize\n"
            "    return 2 * batch * d_in * d_out, moved // 4 * 4",
            "linear_cost(3, 5, 8, 2) returned (240, 172); expected (240 or 264, 174)",
        ),
        (  # the pair the other way round: no slip the chapter teaches, so nothing is named
            _LINEAR
            + "    return (batch * d_in + d_out * d_in + d_out + batch * d_out) * itemsize, 2 * batch * d_in * d_out",
            "returned (174, 240); expected (240 or 264, 174)",
        ),
        (  # the weight counted once per sample: right at batch 1 only
            _LINEAR + "    return 2 * batch * d_in * d_out, batch * (d_in + d_out * d_in + d_out + d_out) * itemsize",
            "linear_cost(3, 5, 8, 2) returned (240, 366)",
        ),
    ),
    4: (
        (
            _TFLOPS + "    sync()\n    start = time.perf_counter()\n    for _ in range(10):\n        fn()\n    sync()\n"
            "    return flops / ((time.perf_counter() - start) / 10) / 1e12",
            "fn ran 10 times, 0 before the first clock read and 10 after; expected up to 3 warm-up calls, then 4",
        ),
        (
            _TIMED + "    return 4e10 / ((time.perf_counter() - start) / repeats) / 1e12",
            "s a call; expected 0.0",
        ),
        (
            _TFLOPS + "    start = time.perf_counter()\n    for _ in range(repeats):\n        fn()\n"
            "    seconds = (time.perf_counter() - start) / repeats\n    return flops / seconds / 1e12",
            "it read the clock after 0 calls of fn with work still queued: sync() first",
        ),
        (  # the start synchronised, the stop not
            _TFLOPS + "    sync()\n    start = time.perf_counter()\n    for _ in range(repeats):\n        fn()\n"
            "    return flops / ((time.perf_counter() - start) / repeats) / 1e12",
            "it read the clock after 10 calls of fn with work still queued",
        ),
        (  # a warm-up call whose work is still queued when the clock starts
            _TFLOPS + "    fn()\n    start = time.perf_counter()\n    for _ in range(repeats):\n        fn()\n"
            "    sync()\n    return flops / ((time.perf_counter() - start) / repeats) / 1e12",
            "it read the clock after 1 calls of fn with work still queued: sync() first",
        ),
        (
            _TIMED + "    return flops / (time.perf_counter() - start) / 1e12",
            "s a call: that is all the calls' time, not one's",
        ),
        (
            _TIMED + "    seconds = (time.perf_counter() - start) / repeats\n    return flops / seconds / 1e9",
            "s a call; expected 0.004",
        ),
        (
            _TIMED + "    seconds = (time.perf_counter() - start) / repeats\n    return flops / seconds / 1e9",
            "s a call: that is GFLOP/s",
        ),
        (  # round 4's findings: FLOP/s; the seconds a call returned as TFLOP/s (the range says what it is of)
            _TIMED + "    seconds = (time.perf_counter() - start) / repeats\n    return flops / seconds",
            "e-15 s a call; expected 0.004",
        ),
        (
            _TIMED + "    seconds = (time.perf_counter() - start) / repeats\n    return flops / seconds",
            "s a call: that is FLOP/s, not TFLOP/s",
        ),
        (
            _TIMED + "    return (time.perf_counter() - start) / repeats",
            "achieved_tflops(fn, 4e+10, sync, 10) returned 0.004",
        ),
        (
            _TIMED + "    return (time.perf_counter() - start) / repeats",
            " TFLOP/s, which makes 9.",
        ),
        (
            _TIMED + "    seconds = (time.perf_counter() - start) / repeats * 1000\n    return flops / seconds / 1e12",
            "s a call: that is milliseconds",
        ),
        (  # no sync before the clock starts, with a clock bound before the check: the queued work makes it too long
            "from time import perf_counter\n\n" + _TFLOPS + "    start = perf_counter()\n    for _ in range(repeats):\n"
            "        fn()\n    sync()\n    return flops / ((perf_counter() - start) / repeats) / 1e12",
            "s a call; expected 0.004",
        ),
        (
            _TFLOPS
            + "    sync()\n    start = time.process_time()\n    for _ in range(repeats):\n        fn()\n    sync()\n"
            "    return flops / ((time.process_time() - start) / repeats) / 1e12",
            "time.process_time() counts only this process's CPU time",
        ),
        (  # one call more than `repeats` timed
            _TFLOPS + "    sync()\n    start = time.perf_counter()\n    for _ in range(repeats + 1):\n        fn()\n"
            "    sync()\n    return flops / ((time.perf_counter() - start) / repeats) / 1e12",
            "fn ran 11 times, 0 before the first clock read and 11 after",
        ),
    ),
    5: (
        # round 3's finding: a launch floor the question does not ask for (a tiny case shows it)
        (
            _ROOF + "    return max(flops / (peak_tflops * 1e12), nbytes / (bandwidth_gbs * 1e9), 2e-5)",
            "roofline_seconds(1, 64, 8.1, 320",
        ),
        (
            _ROOF + "    return min(flops / (peak_tflops * 1e12), nbytes / (bandwidth_gbs * 1e9))",
            "expected 0.000375: that equals the shorter of the two times; they overlap: the longer one sets it",
        ),
        (
            _ROOF + "    return flops / (peak_tflops * 1e12) + nbytes / (bandwidth_gbs * 1e9)",
            "that adds the two times; they overlap, so the longer one sets the time",
        ),
        (
            _ROOF + "    return flops / (peak_tflops * 1e12)",
            "returned 1.23457e-06; expected 0.000375: that equals the shorter of the two times",
        ),
        (
            _ROOF + "    return nbytes / (bandwidth_gbs * 1e9)",
            "returned 0.000314573; expected 0.00211445: that equals the shorter of the two times",
        ),
        (
            _ROOF + "    return max(flops / peak_tflops, nbytes / bandwidth_gbs)",
            "roofline_seconds(10_000_000, 120_000_000, 8.1, 320) returned 1.23457e+06; expected 0.000375",
        ),
        (
            _ROOF + "    return max(flops / (peak_tflops * 1e12), nbytes / bandwidth_gbs)",
            "returned 375_000; expected 0.000375",
        ),
        (
            _ROOF + "    return max(flops / (peak_tflops * 1e9), nbytes / (bandwidth_gbs * 1e9))",
            "returned 0.00123457; expected 0.000375",
        ),
        (  # milliseconds
            _ROOF + "    return 1000 * max(flops / (peak_tflops * 1e12), nbytes / (bandwidth_gbs * 1e9))",
            "returned 0.375; expected 0.000375: that is milliseconds; return seconds",
        ),
    ),
}


#: Right answers other than the solution, as a learner could write them: each must be accepted.
RIGHT_ANSWERS: dict[int, tuple[str, ...]] = {
    1: (
        "axpy_intensity = 0.167",
        "from fractions import Fraction\naxpy_intensity = Fraction(2, 12)",
        "import numpy as np\naxpy_intensity = np.float32(2) / np.float32(12)",
        "axpy_intensity = torch.tensor(2 / 12)",
    ),
    2: (
        't4_bounds = {"linear 4096→4096, batch 1": "Memory-bound", "matmul n=1024": "compute bound", '
        '"vector add": " memory ", "conv": "compute"}',
    ),
    3: (
        _LINEAR
        + "    return 2 * batch * d_in * d_out + batch * d_out, (batch * d_in + d_out * (d_in + 1 + batch)) * itemsize",
        "import numpy as np\n\n" + _LINEAR + "    flops = np.int64(2) * batch * d_in * d_out\n"
        "    return [flops, np.prod([itemsize, batch * d_in + d_out * d_in + d_out + batch * d_out])]",
    ),
    4: (
        _TFLOPS + "    fn()  # a warm-up call, not timed\n    sync()\n    start = time.perf_counter()\n"
        "    for _ in range(repeats):\n        fn()\n    sync()\n"
        "    return flops * repeats / (time.perf_counter() - start) / 1e12",
        # a clock bound before the check: its reads are not seen, and the device's own time is the reference
        "from time import perf_counter\n\n" + _TFLOPS + "    sync()\n    start = perf_counter()\n"
        "    for _ in range(repeats):\n        fn()\n    sync()\n"
        "    return flops / ((perf_counter() - start) / repeats) / 1e12",
        # every call timed on its own, in nanoseconds
        _TFLOPS + "    total = 0\n    for _ in range(repeats):\n        sync()\n        t0 = time.perf_counter_ns()\n"
        "        fn()\n        sync()\n        total += time.perf_counter_ns() - t0\n"
        "    return flops * repeats / (total / 1e9) / 1e12",
        _TFLOPS + "    for _ in range(3):\n        fn()\n    sync()\n    t0 = time.monotonic()\n"
        "    for _ in range(repeats):\n        fn()\n    sync()\n"
        "    import numpy as np\n    return np.float64(flops / ((time.monotonic() - t0) / repeats) * 1e-12)",
    ),
    5: (
        # flops over the attainable rate: the roofline written the other way round
        _ROOF + "    intensity = flops / nbytes\n"
        "    attainable = min(peak_tflops * 1e12, intensity * bandwidth_gbs * 1e9)\n"
        "    return flops / attainable",
        _ROOF + "    import numpy as np\n"
        "    return np.float64(max(flops / peak_tflops / 1e12, nbytes / bandwidth_gbs / 1e9))",
        _ROOF + "    seconds = max(flops / (peak_tflops * 1e12), nbytes / (bandwidth_gbs * 1e9))\n"
        "    return torch.tensor(seconds, dtype=torch.float64)",
    ),
}

#: Round 9: the clock read only before the timed calls (told before that the calls' count was off)
WRONG_ANSWERS[4] += (
    (
        _TFLOPS + "    sync()\n    start = time.perf_counter()\n    for _ in range(repeats):\n        fn()\n"
        "    sync()\n    return flops * repeats / 1e12",
        "the clock's last read came after 0 of fn's 10 calls: read it after all",
    ),
    (
        _TFLOPS + "    sync()\n    start = time.perf_counter()\n    elapsed = time.perf_counter() - start + 1e-3\n"
        "    for _ in range(repeats):\n        fn()\n    sync()\n    return flops * repeats / elapsed / 1e12",
        "the clock's last read came after 0 of fn's 10 calls: read it after all",
    ),
)
