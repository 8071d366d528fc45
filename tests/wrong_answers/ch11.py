"""Chapter 11's typical wrong answers, by question number (see the package's docstring)."""

#: Typical wrong answers to each question, by number, each with words its verdict must contain (the
#: message a learner who wrote it is told).
WRONG_ANSWERS: dict[int, tuple[tuple[str, str], ...]] = {
    1: (
        (
            ("def apply_all(weights, vectors):\n    return [w @ v for w, v in zip(weights, vectors)]"),
            "your code ran 3 operators for 3 pairs and 12 for 12: one launch (or more) per pair",
        ),
        (
            (
                "def apply_all(weights, vectors):\n"
                "    return list((torch.stack(vectors).unsqueeze(1) @ torch.stack(weights)).squeeze(1))"
            ),
            "result 0 is x @ W; the task asks for W @ x",
        ),
        (
            (
                "def apply_all(weights, vectors):\n"
                "    return [torch.stack(weights)[i] @ torch.stack(vectors)[i] for i in range(len(weights))]"
            ),
            "your code ran 9 operators for 3 pairs and 36 for 12",
        ),
        (
            ("def apply_all(weights, vectors):\n    return torch.stack(weights) @ torch.stack(vectors).unsqueeze(-1)"),
            "return 3 vectors; got a tensor of shape (3, 5, 1)",
        ),
    ),
    2: (
        (
            (
                "def steady_seconds(fn, x, sync, warmup, iters):\n"
                "    for _ in range(3):\n"
                "        fn(x)\n"
                "    sync()\n"
                "    start = time.perf_counter()\n"
                "    for _ in range(20):\n"
                "        fn(x)\n"
                "    sync()\n"
                "    return (time.perf_counter() - start) / 20"
            ),
            "fn(x) should run 14 times (2 warm-up calls, then 12 timed ones), not 23",
        ),
        (
            (
                "def steady_seconds(fn, x, sync, warmup=3, iters=20):\n"
                "    sync()\n"
                "    start = time.perf_counter()\n"
                "    for _ in range(iters):\n"
                "        fn(x)\n"
                "    sync()\n"
                "    return (time.perf_counter() - start) / iters"
            ),
            "call fn(x) `warmup` times before the timed loop",
        ),
        (
            (
                "def steady_seconds(fn, x, sync, warmup=3, iters=20):\n"
                "    for _ in range(warmup):\n"
                "        fn(x)\n"
                "    sync()\n"
                "    start = time.perf_counter()\n"
                "    for _ in range(iters):\n"
                "        fn(x)\n"
                "    return (time.perf_counter() - start) / iters"
            ),
            "you stopped the clock while its work was still queued",
        ),
        (
            (
                "def steady_seconds(fn, x, sync, warmup=3, iters=20):\n"
                "    for _ in range(warmup):\n"
                "        fn(x)\n"
                "    start = time.perf_counter()\n"
                "    for _ in range(iters):\n"
                "        fn(x)\n"
                "    sync()\n"
                "    return (time.perf_counter() - start) / iters"
            ),
            "the warm-up's work was still running on the device when you started the clock",
        ),
        (
            (
                "def steady_seconds(fn, x, sync, warmup=3, iters=20):\n"
                "    for _ in range(warmup):\n"
                "        fn(x)\n"
                "    sync()\n"
                "    start = time.perf_counter()\n"
                "    for _ in range(iters):\n"
                "        fn(x)\n"
                "    sync()\n"
                "    return time.perf_counter() - start"
            ),
            "the time of all 20 calls: divide by iters",
        ),
        (
            (
                "def steady_seconds(fn, x, sync, warmup=3, iters=20):\n"
                "    for _ in range(warmup):\n"
                "        fn(x)\n"
                "    sync()\n"
                "    start = time.perf_counter()\n"
                "    for _ in range(iters):\n"
                "        fn(x)\n"
                "    sync()\n"
                "    return (time.perf_counter() - start) / iters * 1000"
            ),
            "which looks like milliseconds per call: return seconds",
        ),
        (
            "def steady_seconds(fn, x, sync, warmup=3, iters=20):\n"
            "    for _ in range(warmup):\n        fn(x)\n    sync()\n    start = time.process_time()\n"
            "    for _ in range(iters):\n        fn(x)\n    sync()\n    return (time.process_time() - start) / iters",
            "time.process_time() counts only this process's CPU time",
        ),
    ),
    3: (
        (
            (
                "def run_batches(graph, static_input, static_output, batches):\n"
                "    outputs = []\n"
                "    for i in range(3):\n"
                "        static_input.copy_(batches[i])\n"
                "        graph.replay()\n"
                "        outputs.append(static_output.clone())\n"
                "    return outputs"
            ),
            "return one output per batch: 5 batches, 3 outputs",
        ),
        (
            (
                "def run_batches(graph, static_input, static_output, batches):\n"
                "    outputs = []\n"
                "    while batches:\n"
                "        static_input.copy_(batches.pop(0))\n"
                "        graph.replay()\n"
                "        outputs.append(static_output.clone())\n"
                "    return outputs"
            ),
            "changed the list `batches` it was given",
        ),
        (
            (
                "def run_batches(graph, static_input, static_output, batches):\n"
                "    outputs = []\n"
                "    for batch in batches:\n"
                "        static_input = batch\n"
                "        graph.replay()\n"
                "        outputs.append(static_output.clone())\n"
                "    return outputs"
            ),
            "Rebinding a name (static_input = batch) changes nothing",
        ),
        (
            (
                "def run_batches(graph, static_input, static_output, batches):\n"
                "    outputs = []\n"
                "    for batch in batches:\n"
                "        static_input.copy_(batch)\n"
                "        graph.replay()\n"
                "        outputs.append(static_output)\n"
                "    return outputs"
            ),
            "every output is the last batch's: each replay overwrites static_output",
        ),
        (
            (
                "def run_batches(graph, static_input, static_output, batches):\n"
                "    outputs = []\n"
                "    for batch in batches:\n"
                "        graph.replay()\n"
                "        static_input.copy_(batch)\n"
                "        outputs.append(static_output.clone())\n"
                "    return outputs"
            ),
            "each output belongs to the batch before: copy the batch in first",
        ),
        (
            (
                "def run_batches(graph, static_input, static_output, batches):\n"
                "    outputs = []\n"
                "    for batch in batches:\n"
                "        batch.copy_(static_input)\n"
                "        graph.replay()\n"
                "        outputs.append(static_output.clone())\n"
                "    return outputs"
            ),
            "the batches changed: copy each batch *into* static_input",
        ),
    ),
    4: (
        (
            (
                "def normalise(x):\n"
                "    peak = x.abs().max()\n"
                "    if peak.item() == 0:  # an all-zero x stays as it is\n"
                "        return x\n"
                "    return x / peak"
            ),
            "Your function reads a tensor's value on the CPU",
        ),
        (
            ("def normalise(x):\n    peak = x.abs().max()\n    if peak == 0:\n        return x\n    return x / peak"),
            "torch.compile made 2 graphs of normalise, so it breaks the graph",
        ),
        (
            ("def normalise(x):\n    return x / x.abs().max()"),
            "for an all-zero x your function returned [nan, nan, nan]: 0 / 0 is nan",
        ),
        (
            (
                "def normalise(x):\n"
                "    peak = x.abs().max()\n"
                "    print('peak', peak)\n"
                "    return torch.where(peak == 0, x, x / peak)"
            ),
            "Your function prints, and print is a graph break",
        ),
        (
            ("def normalise(x):\n    return x / x.abs().max().clamp_min(1)"),
            "for x = [0.25, -0.5, 0.125] normalise should return [0.5, -1, 0.25], got [0.25, -0.5, 0.125]",
        ),
        (
            ("def normalise(x):\n    peak = x.abs().max()\n    return torch.where(peak == 0, x, x.div_(peak))"),
            "normalise changed the x it was given",
        ),
    ),
}


#: Right answers other than the solution, as a learner could write them: each must be accepted.
RIGHT_ANSWERS: dict[int, tuple[str, ...]] = {
    2: (
        "def steady_seconds(fn, x, sync, warmup, iters):\n"
        "    for _ in range(warmup):\n"
        "        fn(x)\n"
        "    sync()\n"
        "    start = time.perf_counter_ns()\n"
        "    for _ in range(iters):\n"
        "        fn(x)\n"
        "    sync()\n"
        "    return (time.perf_counter_ns() - start) / 1e9 / iters",
    ),
    3: (
        "def run_batches(graph, static_input, static_output, batches):\n"
        "    outputs = []\n"
        "    for batch in batches:\n"
        "        static_input[:] = batch\n"
        "        graph.replay()\n"
        "        outputs.append(static_output.detach().clone())\n"
        "    return outputs",
    ),
}
