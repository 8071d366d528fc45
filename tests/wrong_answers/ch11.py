"""Chapter 11's typical wrong answers, by question number (see the package's docstring)."""

from helpers.exercises.solutions.ch11 import SOLUTIONS

from . import lines_of

_APPLY = lines_of(SOLUTIONS[1], 1, 1)
_STEADY = lines_of(SOLUTIONS[2], 1, 1)
_WARM = lines_of(SOLUTIONS[2], 1, 3)
_RUN = lines_of(SOLUTIONS[3], 1, 3)
_NORMALISE = lines_of(SOLUTIONS[4], 1, 1)
#: An empty (n, k) tensor like the products, for answers that write each product into it.
_OUT = "    out = torch.empty(len(weights), len(vectors[0]), dtype=weights[0].dtype, device=weights[0].device)\n"
_LOOP = "    for i in range(len(weights)):\n"

#: Typical wrong answers to each question, by number, each with words its verdict must contain (the
#: message a learner who wrote it is told).
WRONG_ANSWERS: dict[int, tuple[tuple[str, str], ...]] = {
    1: (
        (
            _APPLY + "    return [w @ v for w, v in zip(weights, vectors)]",
            "your code ran 3 operators for 3 pairs and 12 for 12",
        ),
        (
            _APPLY + "    return list((torch.stack(vectors).unsqueeze(1) @ torch.stack(weights)).squeeze(1))",
            "apply_all on 3 pairs of 5×5 torch.float32 matrices and vectors on cpu: result 0 is",
        ),
        (
            _APPLY + "    return [torch.stack(weights)[i] @ torch.stack(vectors)[i] for i in range(len(weights))]",
            "your code ran 9 operators for 3 pairs and 36 for 12",
        ),
        (
            _APPLY + "    return torch.stack(weights) @ torch.stack(vectors).unsqueeze(-1)",
            "returned a torch.float32 tensor of shape (3, 5, 1) on cpu; expected a Python list of 3 tensors",
        ),
        (  # the products stacked: the question asks for a list
            _APPLY + "    return (torch.stack(weights) @ torch.stack(vectors).unsqueeze(-1)).squeeze(-1)",
            "returned a torch.float32 tensor of shape (3, 5) on cpu; expected a Python list of 3 tensors",
        ),
        (  # Python numbers, not tensors
            _APPLY + "    return (torch.stack(weights) @ torch.stack(vectors).unsqueeze(-1)).squeeze(-1).tolist()",
            "returned [[99, -17, -117, -143, 99], [",
        ),
        (  # a launch a pair that makes no new tensor: out= ...
            _APPLY + _OUT + _LOOP + "        torch.mv(weights[i], vectors[i], out=out[i])\n    return list(out)",
            "your code ran 4 operators for 3 pairs and 13 for 12",
        ),
        (  # ... an in-place operator ...
            _APPLY
            + _OUT
            + "    out.zero_()\n"
            + _LOOP
            + "        out[i].addmv_(weights[i], vectors[i])\n    return list(out)",
            "your code ran 5 operators for 3 pairs and 14 for 12",
        ),
        (  # ... or a write into an index
            _APPLY + _OUT + _LOOP + "        out[i] = weights[i] @ vectors[i]\n    return list(out)",
            "your code ran 7 operators for 3 pairs and 25 for 12",
        ),
        (
            _APPLY + _OUT + "    for i, (w, v) in enumerate(zip(weights, vectors)):\n"
            "        torch.matmul(w, v, out=out[i])\n    return list(out)",
            "your code ran 4 operators for 3 pairs and 13 for 12",
        ),
        (  # squeeze() without a dim: wrong for one pair only
            _APPLY + "    return list((torch.stack(weights) @ torch.stack(vectors).unsqueeze(-1)).squeeze())",
            "apply_all on 1 pair of 4×4 torch.int64 matrices and vectors on cpu returned [a torch.int64 tensor of "
            "shape ()",
        ),
        (  # float32 products of integer matrices (the attack: only float32 inputs were tried)
            _APPLY + "    products = torch.stack(weights).float() @ torch.stack(vectors).float().unsqueeze(-1)\n"
            "    return list(products.squeeze(-1))",
            "result 0 is [-45, -18, 72, -63] (torch.float32); expected weights[0] @ vectors[0], [-45, -18, 72, -63] "
            "(torch.int64)",
        ),
        (  # computed on the CPU, whatever the inputs' device
            _APPLY + "    products = torch.stack(weights).cpu() @ torch.stack(vectors).cpu().unsqueeze(-1)\n"
            "    return list(products.squeeze(-1))",
            "apply_all on 5 pairs of 6×6 torch.int32 matrices and vectors on meta raised NotImplementedError (line 2 "
            "of your code): Cannot copy out of meta tensor",
        ),
        (
            _APPLY + "    weights.append(weights[0])\n"
            "    return list((torch.stack(weights[:-1]) @ torch.stack(vectors).unsqueeze(-1)).squeeze(-1))",
            "changed its arguments",
        ),
    ),
    2: (
        (  # at least one warm-up call (round 10: accepted before, no case had warmup=0)
            _STEADY
            + "    for _ in range(max(warmup, 1)):\n        fn(x)\n    sync()\n    start = time.perf_counter()\n"
            "    for _ in range(iters):\n        fn(x)\n    sync()\n    return (time.perf_counter() - start) / iters",
            "steady_seconds(fn, x, sync, 0, 5) returned",
        ),
        (  # rounded to the millisecond: right only when a call takes whole milliseconds
            "def steady_seconds(fn, x, sync, warmup, iters):\n    for _ in range(warmup):\n        fn(x)\n    sync()\n"
            "    start = time.perf_counter()\n    for _ in range(iters):\n        fn(x)\n    sync()\n"
            "    return round((time.perf_counter() - start) / iters, 3)",
            "steady_seconds(fn, x, sync, 1, 12) returned 0.0 s a call; expected 0.0002",
        ),
        (
            _STEADY + "    for _ in range(3):\n        fn(x)\n    sync()\n    start = time.perf_counter()\n"
            "    for _ in range(20):\n        fn(x)\n    sync()\n    return (time.perf_counter() - start) / 20",
            "fn ran 23 times, 3 before the first clock read and 20 after; expected 1 warm-up call, then 12 timed ones",
        ),
        (
            _STEADY
            + "    sync()\n    start = time.perf_counter()\n    for _ in range(iters):\n        fn(x)\n    sync()\n"
            "    return (time.perf_counter() - start) / iters",
            "fn ran 20 times, 0 before the first clock read and 20 after; expected 3 warm-up calls, then 20 timed ones",
        ),
        (
            _WARM + "    sync()\n    start = time.perf_counter()\n    for _ in range(iters):\n        fn(x)\n"
            "    return (time.perf_counter() - start) / iters",
            "it read the clock after 23 calls of fn with work still queued: sync() first",
        ),
        (
            _WARM + "    start = time.perf_counter()\n    for _ in range(iters):\n        fn(x)\n    sync()\n"
            "    return (time.perf_counter() - start) / iters",
            "it read the clock after 3 calls of fn with work still queued: sync() first",
        ),
        (
            _WARM
            + "    sync()\n    start = time.perf_counter()\n    for _ in range(iters):\n        fn(x)\n    sync()\n"
            "    return time.perf_counter() - start",
            "s a call; expected 0.002",
        ),
        (
            _WARM
            + "    sync()\n    start = time.perf_counter()\n    for _ in range(iters):\n        fn(x)\n    sync()\n"
            "    return time.perf_counter() - start",
            "s a call: that is all the calls' time, not one's",
        ),
        (
            _WARM
            + "    sync()\n    start = time.perf_counter()\n    for _ in range(iters):\n        fn(x)\n    sync()\n"
            "    return (time.perf_counter() - start) / iters * 1000",
            "s a call: that is milliseconds",
        ),
        (  # no sync before the clock starts, with a clock bound before the check: the queued work makes it too long
            "from time import perf_counter\n\n" + _WARM + "    start = perf_counter()\n    for _ in range(iters):\n"
            "        fn(x)\n    sync()\n    return (perf_counter() - start) / iters",
            "s a call; expected 0.002",
        ),
        (  # the same clock, warm-up calls not made: no clock read was seen, so none is counted
            "from time import perf_counter\n\n" + _STEADY + "    sync()\n    start = perf_counter()\n"
            "    for _ in range(iters):\n        fn(x)\n    sync()\n    return (perf_counter() - start) / iters",
            "s a call: fn ran 20 times; expected 3 warm-up calls, then 20 timed ones",
        ),
        (
            _WARM
            + "    sync()\n    start = time.process_time()\n    for _ in range(iters):\n        fn(x)\n    sync()\n"
            "    return (time.process_time() - start) / iters",
            "time.process_time() counts only this process's CPU time",
        ),
        (  # the clock started before the warm-up
            _STEADY + "    sync()\n    start = time.perf_counter()\n    for _ in range(warmup):\n        fn(x)\n"
            "    for _ in range(iters):\n        fn(x)\n    sync()\n    return (time.perf_counter() - start) / iters",
            "fn ran 23 times, 0 before the first clock read and 23 after",
        ),
        (  # no sync at the end, timed with a clock the checker cannot see: the time is the launches' alone
            "import timeit\n\n" + _WARM + "    sync()\n    return timeit.timeit(lambda: fn(x), number=iters) / iters",
            "s a call; expected 0.002 s a call: no sync() after the last call: its work was still queued",
        ),
        (  # fn timed on its own output (the attack: fn(x) was never watched)
            _STEADY + "    for _ in range(warmup):\n        x = fn(x)\n    sync()\n    start = time.perf_counter()\n"
            "    for _ in range(iters):\n        x = fn(x)\n"
            "    sync()\n    return (time.perf_counter() - start) / iters",
            "steady_seconds(fn, x, sync, 3, 20): call 2 of fn was given (None,), not x: time fn(x) each call",
        ),
        (  # a copy of x timed
            _STEADY
            + "    for _ in range(warmup):\n        fn(x.clone())\n    sync()\n    start = time.perf_counter()\n"
            "    for _ in range(iters):\n        fn(x.clone())\n"
            "    sync()\n    return (time.perf_counter() - start) / iters",
            "call 1 of fn was given (a torch.float32 tensor of shape (3,) on cpu,), not x: time fn(x) each call",
        ),
        (
            _WARM
            + "    sync()\n    start = time.perf_counter()\n    for _ in range(iters):\n        fn(x)\n    sync()\n"
            "    return (time.perf_counter() - start) / iters * 1e6",
            "s a call: that is microseconds",
        ),
        (  # every call timed on its own, a sync() after each: a call's latency, not the steady state of calls queued
            # back to back (on a GPU the device idles while the host launches the next call)
            _WARM + "    times = []\n    for _ in range(iters):\n        sync()\n        t0 = time.perf_counter()\n"
            "        fn(x)\n        sync()\n        times.append(time.perf_counter() - t0)\n"
            "    return sum(times) / len(times)",
            "steady_seconds(fn, x, sync, 3, 20) called sync() between timed calls: sync() only before starting and "
            "stopping the clock",
        ),
        (  # the same with the clock around the loop, and the fastest single call
            _WARM + "    sync()\n    start = time.perf_counter()\n    for _ in range(iters):\n        fn(x)\n"
            "        sync()\n    return (time.perf_counter() - start) / iters",
            "called sync() between timed calls",
        ),
        (
            _WARM + "    times = []\n    for _ in range(iters):\n        sync()\n        t0 = time.perf_counter()\n"
            "        fn(x)\n        sync()\n        times.append(time.perf_counter() - t0)\n    return min(times)",
            "called sync() between timed calls",
        ),
        (  # floor division, and the warm-up calls counted in the divisor
            _WARM
            + "    sync()\n    start = time.perf_counter()\n    for _ in range(iters):\n        fn(x)\n    sync()\n"
            "    return (time.perf_counter() - start) // iters",
            "steady_seconds(fn, x, sync, 3, 20) returned 0.0 s a call; expected 0.002",
        ),
        (
            _WARM
            + "    sync()\n    start = time.perf_counter()\n    for _ in range(iters):\n        fn(x)\n    sync()\n"
            "    return (time.perf_counter() - start) / (iters + warmup)",
            "steady_seconds(fn, x, sync, 3, 20) returned 0.001",  # 20 calls of 2 ms over 23: 0.00174 and some overhead
        ),
    ),
    3: (
        (  # a float32 copy of each batch: int64 values past 2**24 round
            "def run_batches(graph, static_input, static_output, batches):\n"
            "    outputs = []\n    for batch in batches:\n"
            "        static_input.copy_(batch.float())\n        graph.replay()\n"
            "        outputs.append(static_output.clone())\n"
            "    return outputs",
            "run_batches on 5 torch.int64 batches of the static shape (2, 3): output 0 is",
        ),
        (  # lists, not tensors: the values are right
            "def run_batches(graph, static_input, static_output, batches):\n"
            "    outputs = []\n    for batch in batches:\n"
            "        static_input.copy_(batch)\n        graph.replay()\n"
            "        outputs.append(static_output.tolist())\n"
            "    return outputs",
            "output 0 is [[1, 3, 5], [7, 9, 11]]; expected the tensor [[1, 3, 5], [7, 9, 11]] (torch.float32)",
        ),
        (
            "def run_batches(graph, static_input, static_output, batches):\n    outputs = []\n    for i in range(3):\n"
            "        static_input.copy_(batches[i])\n        graph.replay()\n"
            "        outputs.append(static_output.clone())\n"
            "    return outputs",
            "run_batches on 5 torch.int64 batches of the static shape (2, 3): 3 replays and [",
        ),
        (
            "def run_batches(graph, static_input, static_output, batches):\n    outputs = []\n    while batches:\n"
            "        static_input.copy_(batches.pop(0))\n        graph.replay()\n"
            "        outputs.append(static_output.clone())\n"
            "    return outputs",
            "changed its arguments",
        ),
        (
            _RUN
            + "        static_input = batch\n        graph.replay()\n        outputs.append(static_output.clone())\n"
            "    return outputs",
            "output 0 is [[1, 1, 1], [1, 1, 1]] (torch.float32); expected the tensor [[1, 3, 5], [7, 9, 11]] "
            "(torch.float32)",
        ),
        (  # other memory in static_input: the CPU model would read it, a real graph reads the captured address
            _RUN + "        static_input.data = batch\n        graph.replay()\n"
            "        outputs.append(static_output.clone())\n    return outputs",
            "gave static_input other memory: copy_ into it, as a graph reads the captured memory",
        ),
        (
            _RUN + "        static_input.set_(batch)\n        graph.replay()\n"
            "        outputs.append(static_output.clone())\n    return outputs",
            "gave static_input other memory",
        ),
        (
            _RUN + "        torch.utils.swap_tensors(static_input, batch.clone())\n        graph.replay()\n"
            "        outputs.append(static_output.clone())\n    return outputs",
            "gave static_input other memory",
        ),
        (  # cloned before the replay
            _RUN + "        static_input.copy_(batch)\n        outputs.append(static_output.clone())\n"
            "        graph.replay()\n    return outputs",
            "output 0 is [[1, 1, 1], [1, 1, 1]] (torch.float32); expected the tensor [[1, 3, 5], [7, 9, 11]] "
            "(torch.float32)",
        ),
        (  # the outputs stacked: the question asks for the list
            _RUN + "        static_input.copy_(batch)\n        graph.replay()\n"
            "        outputs.append(static_output.clone())\n    return torch.stack(outputs)",
            "3 replays and a torch.float32 tensor of shape (3, 2, 3) on cpu; expected a replay and a list entry a "
            "batch",
        ),
        (
            _RUN + "        static_input.copy_(batch)\n        graph.replay()\n        outputs.append(static_output)\n"
            "    return outputs",
            "output 0 is static_output's memory, which every replay overwrites: clone it",
        ),
        (
            _RUN + "        graph.replay()\n        static_input.copy_(batch)\n"
            "        outputs.append(static_output.clone())\n"
            "    return outputs",
            "run_batches on 3 torch.float32 batches of the static shape (2, 3): output 0 is [[1, 1, 1], [1, 1, 1]] "
            "(torch.float32); expected the tensor [[1, 3, 5], [7, 9, 11]] (torch.float32)",
        ),
        (
            _RUN + "        batch.copy_(static_input)\n        graph.replay()\n"
            "        outputs.append(static_output.clone())\n"
            "    return outputs",
            "changed its arguments",
        ),
        (
            _RUN + "        static_input.copy_(batch)\n        graph.replay()\n        graph.replay()\n"
            "        outputs.append(static_output.clone())\n    return outputs",
            "6 replays and [",
        ),
        (  # float32 copies of integer outputs (the attack: only float32 inputs were tried)
            _RUN + "        static_input.copy_(batch)\n        graph.replay()\n"
            "        outputs.append(static_output.clone().float())\n    return outputs",
            "(torch.float32); expected the tensor [[67_108_867, 67_108_869, 67_108_871]",
        ),
        (
            _RUN + "        static_input.copy_(batch)\n        graph.replay()\n"
            "        outputs.append(static_output.detach())\n"
            "    return outputs",
            "output 0 is static_output's memory, which every replay overwrites: clone it",
        ),
        (  # part of static_output: a view that starts elsewhere in its memory
            _RUN + "        static_input.copy_(batch)\n        graph.replay()\n"
            "        outputs.append(static_output[1:])\n"
            "    return outputs",
            "output 0 is static_output's memory",
        ),
    ),
    4: (
        (
            _NORMALISE + "    peak = x.abs().max()\n    if peak.item() == 0:  # an all-zero x stays as it is\n"
            "        return x\n    return x / peak",
            "torch.compile made 2 graphs of normalise, not one: it reads a tensor's value on the CPU (.item())",
        ),
        (
            _NORMALISE + "    peak = x.abs().max()\n    if peak == 0:\n        return x\n    return x / peak",
            "it reads a tensor's value on the CPU (bool())",
        ),
        (
            _NORMALISE + "    return x / x.abs().max()",
            "normalise([0, 0], torch.int64) returned [nan, nan] (torch.float32); expected [0, 0] (torch.int64)",
        ),
        (  # a guard that is 0 in float16 (nan for all zeros) and too large near 1e-13
            _NORMALISE + "    return x / x.abs().max().clamp_min(1e-30)",
            "normalise([0, 0], torch.float16) returned [nan, nan] (torch.float16); expected [0.0, 0.0] (torch.float16)",
        ),
        (
            _NORMALISE + "    return x / (x.abs().max() + 1e-12)",
            "normalise([1e-13, -2e-13], torch.float32) returned [0.0833333, -0.166667] (torch.float32); expected "
            "[0.5, -1] (torch.float32)",
        ),
        (
            _NORMALISE + "    return x / x.abs().max().clamp(min=1e-12)",
            "normalise([1e-13, -2e-13], torch.float32) returned [0.1, -0.2] (torch.float32)",
        ),
        (
            _NORMALISE + "    return torch.where(x.abs().max() == 0, x, x / (x.abs().max() + 1e-12))",
            "normalise([1e-13, -2e-13], torch.float32) returned [0.0833333, -0.166667]",
        ),
        (
            _NORMALISE
            + "    peak = x.abs().max()\n    print('peak', peak)\n    return torch.where(peak == 0, x, x / peak)",
            "it reads a tensor's value on the CPU (print(t))",
        ),
        (
            _NORMALISE + "    return x / x.abs().max().clamp_min(1)",
            "normalise([0.25, -0.5, 0.125], torch.float32) returned [0.25, -0.5, 0.125] (torch.float32); expected "
            "[0.5, -1, 0.25] (torch.float32)",
        ),
        (
            _NORMALISE + "    peak = x.abs().max()\n    return torch.where(peak == 0, x, x.div_(peak))",
            "changed its arguments",
        ),
        (  # cast back to x's dtype: right on float inputs, not on integers (the attack: only float32 was tried)
            _NORMALISE + "    peak = x.abs().max()\n    return torch.where(peak == 0, x, x / peak).to(x.dtype)",
            "normalise([3, -6, 1], torch.int64) returned [0, -1, 0] (torch.int64); expected [0.5, -1, 0.166667]",
        ),
        (  # float32 for a half x
            _NORMALISE
            + "    peak = x.abs().max().float()\n    return torch.where(peak == 0, x.float(), x.float() / peak)",
            "normalise([0.25, -0.5, 0.125], torch.float16) returned [0.5, -1, 0.25] (torch.float32)",
        ),
        (  # each row by its own peak
            _NORMALISE + "    return x / x.abs().amax(dim=-1, keepdim=True).clamp_min(1e-30)",
            "normalise([[1.0, -4.0], [2.0, 0.5]], torch.float32) returned [[0.25, -1], [1, 0.25]]",
        ),
        (
            _NORMALISE + "    peak = x.abs().max()\n    if peak.tolist() == 0:\n        return x\n    return x / peak",
            "it reads a tensor's value on the CPU (.tolist())",
        ),
        (  # a guard of the dtype's smallest normal number added to the peak: too large near it (the attack)
            _NORMALISE
            + "    peak = x.abs().max()\n    tiny = torch.finfo(x.dtype).tiny if x.is_floating_point() else 0\n"
            "    return torch.where(peak == 0, x, x / (peak + tiny))",
            "normalise([0.001, -0.0005], torch.float16) returned [0.942383, -0.471191] (torch.float16); expected "
            "[1, -0.5] (torch.float16)",
        ),
        (  # the peak held at the smallest normal number at least: wrong for a subnormal peak
            _NORMALISE
            + "    peak = x.abs().max()\n    tiny = torch.finfo(x.dtype).tiny if x.is_floating_point() else 1\n"
            "    return torch.where(peak == 0, x, x / peak.clamp(min=tiny))",
            "normalise([1e-05, -2e-05], torch.float16) returned [0.164062, -0.328125] (torch.float16); expected "
            "[0.5, -1] (torch.float16)",
        ),
        (  # a much smaller floor, 1e-44: wrong for a float32 peak of two of its smallest steps
            _NORMALISE + "    return torch.where(x.abs().max() == 0, x, x / x.abs().max().clamp(min=1e-44))",
            "normalise([3e-45, -6e-45], torch.float32) returned",
        ),
        (  # a subnormal peak taken for zero
            _NORMALISE
            + "    peak = x.abs().max()\n    floor = torch.finfo(x.dtype).tiny if x.is_floating_point() else 1\n"
            "    return torch.where(peak < floor, x, x / peak)",
            "normalise([1e-05, -2e-05], torch.float16) returned [1.00136e-05, -2.00272e-05] (torch.float16)",
        ),
    ),
}


#: Right answers other than the solution, as a learner could write them: each must be accepted.
RIGHT_ANSWERS: dict[int, tuple[str, ...]] = {
    1: (
        _APPLY + '    return list(torch.einsum("nij,nj->ni", torch.stack(weights), torch.stack(vectors)))',
        _APPLY + "    return tuple(torch.bmm(torch.stack(weights), torch.stack(vectors)[..., None])[..., 0])",
        # one view per pair: a view launches nothing
        _APPLY + "    products = (torch.stack(weights) @ torch.stack(vectors).unsqueeze(-1)).squeeze(-1)\n"
        "    return [products[i] for i in range(len(weights))]",
    ),
    2: (
        _WARM
        + "    sync()\n    start = time.perf_counter_ns()\n    for _ in range(iters):\n        fn(x)\n    sync()\n"
        "    return (time.perf_counter_ns() - start) / 1e9 / iters",
        # another clock, and the time of the timed loop divided out by hand
        _WARM + "    sync()\n    t0 = time.monotonic()\n    for _ in range(iters):\n        fn(x)\n    sync()\n"
        "    elapsed = time.monotonic() - t0\n    return elapsed * (1 / iters)",
        # a clock bound before the check: its reads are not seen, and the device's own time is the reference
        "from time import perf_counter\n\n" + _WARM + "    sync()\n    start = perf_counter()\n"
        "    for _ in range(iters):\n        fn(x)\n    sync()\n    return (perf_counter() - start) / iters",
    ),
    3: (
        _RUN + "        static_input[:] = batch\n        graph.replay()\n"
        "        outputs.append(static_output.detach().clone())\n    return outputs",
        "def run_batches(graph, static_input, static_output, batches):\n    outs = []\n    for b in batches:\n"
        "        static_input[...] = b\n        graph.replay()\n        outs.append(static_output + 0)\n"
        "    return tuple(outs)",
    ),
    4: (
        _NORMALISE + "    return (x / x.abs().max()).nan_to_num(0.0)",
        # a higher-order op: the check runs it as a notebook does
        _NORMALISE + "    peak = x.abs().max()\n"
        "    return torch.cond(peak == 0, lambda x, p: x / 1, lambda x, p: x / p, (x, peak))",
        _NORMALISE + "    peak = x.abs().amax()\n    return x / torch.where(peak == 0, torch.ones_like(peak), peak)",
        _NORMALISE + "    peak = x.abs().max()\n    return torch.where(peak > 0, x / peak, x)",
    ),
}

#: Round 7's finding: torch.compiler.disable on the unfixed function: no graph at all, the read still there
WRONG_ANSWERS[4] += (
    (
        "@torch.compiler.disable\ndef normalise(x):\n    peak = x.abs().max()\n    if peak.item() == 0:\n"
        "        return x\n    return x / peak",
        "graphs of normalise, not one: it reads a tensor's value on the CPU (.item())",  # 2.15: 0 graphs; 2.10: 2
    ),
)
