SOLUTIONS: dict[int, str] = {
    1: "axpy_intensity = 2 / (3 * 4)  # multiply + add; read x, read y, write y",
    2: "def cheapest_gpu(workload, prices):\n    w, costs = workload, {}\n"
    "    for short, usd_per_hour in prices.items():\n        spec = by_short_name(short)\n"
    '        fmt = "bf16" if "bf16" in spec.tensor_formats else "fp16" if "fp16" in spec.tensor_formats else "fp32"\n'
    '        activations = 17 * (4 if fmt == "fp32" else 2) * w["seq"] * w["batch"] * w["hidden"] * w["layers"]\n'
    '        if (16 * w["params"] + activations) / 1e9 <= HEADROOM * spec.memory_gb:  # it fits\n'
    '            hours = 6 * w["params"] * w["tokens"] / (spec.peak_tflops(fmt) * 1e12 * MFU) / 3600\n'
    "            costs[short] = hours * usd_per_hour\n    return min(costs, key=costs.get, default=None)",
    3: "def linear_cost(batch, d_in, d_out, itemsize):\n    flops = 2 * batch * d_in * d_out\n"
    "    moved = (batch * d_in + d_out * d_in + d_out + batch * d_out) * itemsize\n    return flops, moved",
    4: "def roofline_seconds(flops, nbytes, peak_tflops, bandwidth_gbs):\n"
    "    arithmetic = flops / (peak_tflops * 1e12)\n    traffic = nbytes / (bandwidth_gbs * 1e9)\n"
    "    return max(arithmetic, traffic)  # they overlap: the slower one sets the time",
}
