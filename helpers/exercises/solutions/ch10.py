"""Chapter 10's exercise solutions, by question number (see the package's docstring)."""

#: The synchronised timing loop of question 4's solution; its wrong answers change what follows it.
_TIMED = (
    "def achieved_tflops(fn, flops, sync, repeats):\n"
    "    sync()\n"
    "    start = time.perf_counter()\n"
    "    for _ in range(repeats):\n"
    "        fn()\n"
    "    sync()\n"
)


SOLUTIONS: dict[int, str] = {
    1: "axpy_intensity = 2 / (3 * 4)  # multiply + add; read x, read y, write y",
    2: (
        'T4 = by_short_name("T4")\n'
        "ridge = T4.fp32_tflops * 1000 / T4.bandwidth_gbs\n"
        'intensities = {"vector add": 1 / 12, "matmul n=1024": 1024 / 6, "linear 4096→4096, batch 1": 2 / 4}\n'
        't4_bounds = {k: "memory" if i < ridge else "compute" for k, i in intensities.items()}'
    ),
    3: (
        "def linear_cost(batch, d_in, d_out, itemsize):\n"
        "    flops = 2 * batch * d_in * d_out\n"
        "    moved = (batch * d_in + d_out * d_in + d_out + batch * d_out) * itemsize\n"
        "    return flops, moved"
    ),
    4: _TIMED + "    seconds = (time.perf_counter() - start) / repeats\n    return flops / seconds / 1e12",
}


#: Typical wrong answers to each question, by number: each must be rejected (tested in CI). They live
#: here, not with the questions, because most are the solution with one line changed.
WRONG_ANSWERS: dict[int, tuple[str, ...]] = {
    1: (
        "axpy_intensity = 2 / (2 * 4)",
        "axpy_intensity = 1 / (3 * 4)",
        "axpy_intensity = 2 / 3",
    ),
    2: (
        't4_bounds = {"vector add": "memory", "matmul n=1024": "compute", "linear 4096→4096, batch 1": "compute"}',
        't4_bounds = {"vector add": "memory", "matmul n=1024": "memory", "linear 4096→4096, batch 1": "memory"}',
        't4_bounds = {"vector add": "memory", "matmul n=1024": "compute"}',
    ),
    3: (
        "def linear_cost(batch, d_in, d_out, itemsize):\n"
        "    return batch * d_in * d_out, (batch * d_in + d_out * d_in + d_out + batch * d_out) * itemsize",
        "def linear_cost(batch, d_in, d_out, itemsize):\n"
        "    return 2 * batch * d_in * d_out, (batch * d_in + batch * d_out) * itemsize",
        "def linear_cost(batch, d_in, d_out, itemsize):\n"
        "    return 2 * batch * d_in * d_out, batch * d_in + d_out * d_in + d_out + batch * d_out",
        "def linear_cost(batch, d_in, d_out, itemsize):\n"
        "    return 2 * batch * d_in * d_out, (batch * d_in + d_out * d_in + d_out) * itemsize",
    ),
    4: (
        _TIMED.replace("range(repeats)", "range(10)")  # ignores `repeats`
        + "    return flops / ((time.perf_counter() - start) / 10) / 1e12",
        _TIMED + "    return 4e10 / ((time.perf_counter() - start) / repeats) / 1e12",  # ignores `flops`
        _TIMED.replace("    sync()\n", "")
        + "    seconds = (time.perf_counter() - start) / repeats\n    return flops / seconds / 1e12",
        _TIMED + "    return flops / (time.perf_counter() - start) / 1e12",
        _TIMED + "    seconds = (time.perf_counter() - start) / repeats\n    return flops / seconds / 1e9",
    ),
}
