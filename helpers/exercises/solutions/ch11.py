"""Chapter 11's exercise solutions, by question number (see the package's docstring)."""

SOLUTIONS: dict[int, str] = {
    1: (
        "def apply_all(weights, vectors):\n"
        "    products = torch.stack(weights) @ torch.stack(vectors).unsqueeze(-1)\n"
        "    return list(products.squeeze(-1))"
    ),
    2: (
        "def steady_seconds(fn, x, sync, warmup=3, iters=20):\n"
        "    for _ in range(warmup):\n"
        "        fn(x)\n"
        "    sync()\n"
        "    start = time.perf_counter()\n"
        "    for _ in range(iters):\n"
        "        fn(x)\n"
        "    sync()\n"
        "    return (time.perf_counter() - start) / iters"
    ),
    3: (
        "def run_batches(graph, static_input, static_output, batches):\n"
        "    outputs = []\n"
        "    for batch in batches:\n"
        "        static_input.copy_(batch)\n"
        "        graph.replay()\n"
        "        outputs.append(static_output.clone())\n"
        "    return outputs"
    ),
}


#: Typical wrong answers to each question, by number: each must be rejected (tested in CI). They live
#: here, not with the questions, because most are the solution with one line changed.
WRONG_ANSWERS: dict[int, tuple[str, ...]] = {
    1: (
        "def apply_all(weights, vectors):\n    return [w @ v for w, v in zip(weights, vectors)]",
        "def apply_all(weights, vectors):\n"
        "    return list((torch.stack(vectors).unsqueeze(1) @ torch.stack(weights)).squeeze(1))",
        "def apply_all(weights, vectors):\n"
        "    return [torch.stack(weights)[i] @ torch.stack(vectors)[i] for i in range(len(weights))]",
        "def apply_all(weights, vectors):\n    return torch.stack(weights) @ torch.stack(vectors).unsqueeze(-1)",
    ),
    2: (
        "def steady_seconds(fn, x, sync, warmup, iters):\n"
        "    for _ in range(3):\n"
        "        fn(x)\n"
        "    sync()\n"
        "    start = time.perf_counter()\n"
        "    for _ in range(20):\n"
        "        fn(x)\n"
        "    sync()\n"
        "    return (time.perf_counter() - start) / 20",
        "def steady_seconds(fn, x, sync, warmup=3, iters=20):\n"
        "    sync()\n    start = time.perf_counter()\n    for _ in range(iters):\n        fn(x)\n"
        "    sync()\n    return (time.perf_counter() - start) / iters",
        "def steady_seconds(fn, x, sync, warmup=3, iters=20):\n"
        "    for _ in range(warmup):\n        fn(x)\n    sync()\n    start = time.perf_counter()\n"
        "    for _ in range(iters):\n        fn(x)\n    return (time.perf_counter() - start) / iters",
        "def steady_seconds(fn, x, sync, warmup=3, iters=20):\n"
        "    for _ in range(warmup):\n        fn(x)\n    start = time.perf_counter()\n"
        "    for _ in range(iters):\n        fn(x)\n    sync()\n    return (time.perf_counter() - start) / iters",
        "def steady_seconds(fn, x, sync, warmup=3, iters=20):\n"
        "    for _ in range(warmup):\n        fn(x)\n    sync()\n    start = time.perf_counter()\n"
        "    for _ in range(iters):\n        fn(x)\n    sync()\n    return time.perf_counter() - start",
    ),
    3: (
        "def run_batches(graph, static_input, static_output, batches):\n"
        "    outputs = []\n"
        "    for i in range(3):\n"
        "        static_input.copy_(batches[i])\n"
        "        graph.replay()\n"
        "        outputs.append(static_output.clone())\n"
        "    return outputs",
        "def run_batches(graph, static_input, static_output, batches):\n"
        "    outputs = []\n"
        "    while batches:\n"
        "        static_input.copy_(batches.pop(0))\n"
        "        graph.replay()\n"
        "        outputs.append(static_output.clone())\n"
        "    return outputs",
        "def run_batches(graph, static_input, static_output, batches):\n"
        "    outputs = []\n    for batch in batches:\n        static_input = batch\n        graph.replay()\n"
        "        outputs.append(static_output.clone())\n    return outputs",
        "def run_batches(graph, static_input, static_output, batches):\n"
        "    outputs = []\n    for batch in batches:\n        static_input.copy_(batch)\n        graph.replay()\n"
        "        outputs.append(static_output)\n    return outputs",
        "def run_batches(graph, static_input, static_output, batches):\n"
        "    outputs = []\n    for batch in batches:\n        graph.replay()\n        static_input.copy_(batch)\n"
        "        outputs.append(static_output.clone())\n    return outputs",
        "def run_batches(graph, static_input, static_output, batches):\n"
        "    outputs = []\n    for batch in batches:\n        batch.copy_(static_input)\n        graph.replay()\n"
        "        outputs.append(static_output.clone())\n    return outputs",
    ),
}
