"""Chapter 10's exercise solutions, by question number (see the package's docstring)."""

SOLUTIONS: dict[int, str] = {
    1: "axpy_intensity = 2 / (3 * 4)  # multiply + add; read x, read y, write y",
    2: """T4 = by_short_name("T4")
ridge = T4.fp32_tflops * 1000 / T4.bandwidth_gbs
intensities = {"vector add": 1 / 12, "matmul n=1024": 1024 / 6, "linear 4096→4096, batch 1": 2 / 4}
t4_bounds = {k: "memory" if i < ridge else "compute" for k, i in intensities.items()}""",
    3: """def linear_cost(batch, d_in, d_out, itemsize):
    flops = 2 * batch * d_in * d_out
    moved = (batch * d_in + d_out * d_in + d_out + batch * d_out) * itemsize
    return flops, moved""",
    4: (
        "def achieved_tflops(fn, flops, sync, repeats):\n    sync()\n    start = time.perf_counter()\n"
        "    for _ in range(repeats):\n        fn()\n    sync()\n"
        "    seconds = (time.perf_counter() - start) / repeats\n    return flops / seconds / 1e12"
    ),
    5: """def roofline_seconds(flops, nbytes, peak_tflops, bandwidth_gbs):
    arithmetic = flops / (peak_tflops * 1e12)
    traffic = nbytes / (bandwidth_gbs * 1e9)
    return max(arithmetic, traffic)  # they overlap: the slower one sets the time""",
}
