"""Chapter 10's typical wrong answers, by question number (see the package's docstring)."""

from helpers.exercises.solutions.ch10 import SOLUTIONS

from . import lines_of

#: The synchronised timing loop of question 4's solution; most of its wrong answers change what follows it.
_TIMED = lines_of(SOLUTIONS[4], 1, 6)
#: The start every wrong answer to question 5 shares.
_ROOF = lines_of(SOLUTIONS[5], 1, 1)


#: Typical wrong answers to each question, by number, each with words its verdict must contain (the
#: message a learner who wrote it is told).
WRONG_ANSWERS: dict[int, tuple[tuple[str, str], ...]] = {
    1: (
        (
            "axpy_intensity = 2 / (2 * 4)",
            "you counted reading x and y but not writing y back",
        ),
        (
            "axpy_intensity = 1 / (3 * 4)",
            "a*x + y is two operations per element",
        ),
        (
            "axpy_intensity = 2 / 3",
            "count bytes, not elements",
        ),
    ),
    2: (
        (
            't4_bounds = {"vector add": "memory", "matmul n=1024": "compute", "linear 4096→4096, batch 1": "compute"}',
            "'linear 4096→4096, batch 1' is not compute-bound on a T4 in FP32",
        ),
        (
            't4_bounds = {"vector add": "memory", "matmul n=1024": "memory", "linear 4096→4096, batch 1": "memory"}',
            "'matmul n=1024' is not memory-bound on a T4 in FP32",
        ),
        (
            't4_bounds = {"vector add": "memory", "matmul n=1024": "compute"}',
            "missing ['linear 4096→4096, batch 1']",
        ),
    ),
    3: (
        (
            (
                "def linear_cost(batch, d_in, d_out, itemsize):\n"
                "    return batch * d_in * d_out, (batch * d_in + d_out * d_in + d_out + batch * d_out) * itemsize"
            ),
            "counts each multiply-add once; it is two operations",
        ),
        (
            (
                "def linear_cost(batch, d_in, d_out, itemsize):\n"
                "    return 2 * batch * d_in * d_out, (batch * d_in + batch * d_out) * itemsize"
            ),
            "the weight matrix (d_out×d_in) must be read too",
        ),
        (
            (
                "def linear_cost(batch, d_in, d_out, itemsize):\n"
                "    return 2 * batch * d_in * d_out, batch * d_in + d_out * d_in + d_out + batch * d_out"
            ),
            "counts elements; multiply by itemsize (4) for bytes",
        ),
        (
            (
                "def linear_cost(batch, d_in, d_out, itemsize):\n"
                "    return 2 * batch * d_in * d_out, (batch * d_in + d_out * d_in + d_out) * itemsize"
            ),
            "the output (batch×d_out) is written to memory; count it",
        ),
    ),
    4: (
        (
            (
                "def achieved_tflops(fn, flops, sync, repeats):\n"
                "    sync()\n"
                "    start = time.perf_counter()\n"
                "    for _ in range(10):\n"
                "        fn()\n"
                "    sync()\n"
                "    return flops / ((time.perf_counter() - start) / 10) / 1e12"
            ),
            "called fn() 10 times: time `repeats` calls (4 here)",
        ),
        (
            _TIMED + "    return 4e10 / ((time.perf_counter() - start) / repeats) / 1e12",
            "use the `flops` argument (1e+10 here) for the work of one call",
        ),
        (
            (
                "def achieved_tflops(fn, flops, sync, repeats):\n"
                "    start = time.perf_counter()\n"
                "    for _ in range(repeats):\n"
                "        fn()\n"
                "    seconds = (time.perf_counter() - start) / repeats\n"
                "    return flops / seconds / 1e12"
            ),
            "is faster than the device can work: the clock was read before the work was done",
        ),
        (
            _TIMED + "    return flops / (time.perf_counter() - start) / 1e12",
            "you timed all 10 calls together: divide the time by repeats",
        ),
        (
            _TIMED + "    seconds = (time.perf_counter() - start) / repeats\n    return flops / seconds / 1e9",
            "that is GFLOP/s, not TFLOP/s",
        ),
        (
            "def achieved_tflops(fn, flops, sync, repeats):\n"
            "    sync()\n"
            "    start = time.process_time()\n"
            "    for _ in range(repeats):\n"
            "        fn()\n"
            "    sync()\n"
            "    return flops / ((time.process_time() - start) / repeats) / 1e12",
            "time.process_time() counts only this process's CPU time",
        ),
    ),
    5: (
        (
            _ROOF + "    return min(flops / (peak_tflops * 1e12), nbytes / (bandwidth_gbs * 1e9))",
            "the time of the faster resource; this case is memory-bound",
        ),
        (
            _ROOF + "    return flops / (peak_tflops * 1e12) + nbytes / (bandwidth_gbs * 1e9)",
            "the two times added; the roofline lets memory traffic and arithmetic overlap",
        ),
        (
            _ROOF + "    return flops / (peak_tflops * 1e12)",
            "only the arithmetic time; this case is memory-bound",
        ),
        (
            _ROOF + "    return max(flops / peak_tflops, nbytes / bandwidth_gbs)",
            "a unit slip; convert TFLOP/s × 10^12 and GB/s × 10^9",
        ),
        (
            _ROOF + "    return max(flops / (peak_tflops * 1e12), nbytes / bandwidth_gbs)",
            "a unit slip; convert GB/s × 10^9 (bytes per second)",
        ),
    ),
}


#: Right answers other than the solution, as a learner could write them: each must be accepted.
RIGHT_ANSWERS: dict[int, tuple[str, ...]] = {
    4: (
        "def achieved_tflops(fn, flops, sync, repeats):\n"
        "    fn()  # a warm-up call, not timed\n"
        "    sync()\n"
        "    start = time.perf_counter()\n"
        "    for _ in range(repeats):\n"
        "        fn()\n"
        "    sync()\n"
        "    return flops * repeats / (time.perf_counter() - start) / 1e12",
    ),
}
