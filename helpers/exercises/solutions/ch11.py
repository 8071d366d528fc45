"""Chapter 11's exercise solutions, by question number (see the package's docstring)."""

SOLUTIONS: dict[int, str] = {
    1: "def apply_all(weights, vectors):\n    products = torch.stack(weights) @ torch.stack(vectors).unsqueeze(-1)\n"
    "    return list(products.squeeze(-1))",
    2: "def steady_seconds(fn, x, sync, warmup=3, iters=20):\n    for _ in range(warmup):\n        fn(x)\n    sync()\n"
    "    start = time.perf_counter()\n    for _ in range(iters):\n        fn(x)\n    sync()\n"
    "    return (time.perf_counter() - start) / iters",
    3: "def run_batches(graph, static_input, static_output, batches):\n    outputs = []\n    for batch in batches:\n"
    "        static_input.copy_(batch)\n        graph.replay()\n        outputs.append(static_output.clone())\n"
    "    return outputs",
    4: "def normalise(x):\n    peak = x.abs().max()\n    return torch.where(peak == 0, x, x / peak)",
}
