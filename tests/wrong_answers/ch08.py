"""Chapter 08's typical wrong answers, by question number (see the package's docstring)."""

from helpers.exercises.solutions.ch08 import SOLUTIONS

#: Question 1's solution, and one change to it.
_BUCKETS = SOLUTIONS[1]
_FITS = "if buckets and sum(q.grad.nbytes for q in buckets[-1]) + p.grad.nbytes <= bucket_bytes:"
_REDUCE = "        dist.all_reduce(flat)  # one collective for the whole bucket\n"
_DIVIDE = "        flat /= dist.get_world_size()\n"
_BACK = "            p.grad.copy_(piece.view_as(p.grad))\n"

#: Question 2's file as the notebook gives it (the collective under `if rank == 0`), and its fix.
_LOGGING = SOLUTIONS[2]
_BUGGY = _LOGGING.replace(
    "        if step % 2 == 0:\n            mean = mean_over_ranks(loss)  # every rank joins the all-reduce\n"
    "            if rank == 0:  # one rank logs\n                logged.append(mean)\n",
    "        if rank == 0 and step % 2 == 0:\n            logged.append(mean_over_ranks(loss))\n",
).replace("                print(", "            print(")

_RING = "def ring_allreduce_seconds(n_bytes, world_size, latency, bandwidth):\n"

#: Typical wrong answers to each question, by number, each with words its verdict must contain (the
#: message a learner who wrote it is told).
WRONG_ANSWERS: dict[int, tuple[tuple[str, str], ...]] = {
    1: (
        (_BUCKETS.replace(_FITS, "if False:"), "one per gradient: flatten each bucket"),
        (  # packed in model order, then all-reduced last bucket first: the sizes differ where packing does (64 bytes)
            _BUCKETS.replace("reversed(list(model.parameters()))", "model.parameters()").replace(
                "    for bucket in buckets:", "    for bucket in reversed(buckets):"
            ),
            "with bucket_bytes=64, average_gradients all-reduced [4, 64, 256, 32, 128] bytes; expected [36, 32, 256",
        ),
        (_BUCKETS.replace(_DIVIDE, ""), "on rank 0 of two: the gradients were summed over the ranks, not averaged"),
        (
            _BUCKETS.replace("reversed(list(model.parameters()))", "model.parameters()"),
            "with bucket_bytes=1, average_gradients all-reduced [128, 32, 256, 32, 32, 4] bytes; expected "
            "[4, 32, 32, 256, 32, 128]: they follow model.parameters(): build and all-reduce the buckets in reverse",
        ),
        (_BUCKETS.replace("<= bucket_bytes", "< bucket_bytes"), "a bucket may hold exactly bucket_bytes"),
        (_BUCKETS.replace("<= bucket_bytes", "<= 10**9"), "start a new bucket whenever the next gradient would pass"),
        (_BUCKETS.replace(_BACK, "            pass\n"), "each rank kept its own gradients"),
        (
            _BUCKETS.replace("dist.all_reduce(flat)", "dist.all_reduce(flat, async_op=True)"),
            "an all_reduce(async_op=True) was never waited for",
        ),
        (  # the all-reduce of a copy: the flat bucket itself is never summed, only divided
            _BUCKETS.replace(_REDUCE, "        dist.all_reduce(flat.clone())\n"),
            "on rank 0 of two: the weights differ from one process trained on every rank's data",
        ),
        (
            "def average_gradients(model, bucket_bytes):\n    pass",
            "with bucket_bytes=1, average_gradients all-reduced no bytes; expected [4, 32, 32, 256, 32, 128]",
        ),
    ),
    2: (
        (  # as the notebook gives it: rank 1 never joins rank 0's all-reduce
            _BUGGY,
            "on two ranks, rank 0 waited in all_reduce (line 7 of logging_answer.py); rank 1 had already finished: "
            "every rank must make the same collective calls",
        ),
        (  # the all-reduce removed rather than moved: rank 0 logs its own loss
            _BUGGY.replace("    dist.all_reduce(t)\n", "").replace(" / dist.get_world_size()", ""),
            "that is rank 0's own loss, not the mean over the ranks",
        ),
        (
            _LOGGING.replace("            if rank == 0:  # one rank logs\n", "            if True:\n"),
            "train_and_log(1, 2, losses) returned [",
        ),
        (  # the sum over the ranks, never divided
            _LOGGING.replace("    return t.item() / dist.get_world_size()", "    return t.item()"),
            "that is the sum over the ranks; divide it by the world size",
        ),
        (  # the number of ranks hard-coded: wrong on the one rank the checker runs first
            _LOGGING.replace(
                "        if step % 2 == 0:\n            mean = mean_over_ranks(loss)",
                "        if step % 2 == 0:\n            mean = mean_over_ranks(loss) * dist.get_world_size() / 2",
            ),
            "on one rank here (world_size 1): train_and_log(0, 1, losses) returned [",
        ),
        (  # the mean from rank 0's own numbers, without a collective: the others' losses are random
            _BUGGY.replace("logged.append(mean_over_ranks(loss))", "logged.append(loss)"),
            "that is rank 0's own loss, not the mean over the ranks",
        ),
    ),
    3: (
        (
            _RING + "    return (world_size - 1) * latency + (world_size - 1) / world_size * n_bytes / bandwidth",
            "that is the reduce-scatter alone: the all-gather doubles it",
        ),
        (
            _RING + "    return 2 * (world_size - 1) * latency + 2 * n_bytes / bandwidth",
            "each rank sends 2(n - 1)/n × n_bytes, not 2 × n_bytes",
        ),
        (
            _RING + "    return 2 * world_size * latency + 2 * (world_size - 1) / world_size * n_bytes / bandwidth",
            "a ring of n ranks takes 2(n - 1) steps, not 2n",
        ),
        (
            _RING + "    return latency + 2 * (world_size - 1) / world_size * n_bytes / bandwidth",
            "the latency is paid at each of the 2(n - 1) steps, not once",
        ),
        (
            _RING + "    return 2 * (world_size - 1) / world_size * n_bytes / bandwidth",
            "each of the 2(n - 1) steps also costs latency seconds",
        ),
    ),
}


#: Right answers other than the solution, as a learner could write them: each must be accepted.
RIGHT_ANSWERS: dict[int, tuple[str, ...]] = {
    1: (
        # the mean in one call (ReduceOp.AVG)
        _BUCKETS.replace("dist.all_reduce(flat)", "dist.all_reduce(flat, op=dist.ReduceOp.AVG)").replace(_DIVIDE, ""),
        # asynchronous, waited for; the all-reduce imported by name
        _BUCKETS.replace(_REDUCE, "        work = all_reduce(flat, async_op=True)\n        work.wait()\n").replace(
            "import torch.distributed as dist\n",
            "import torch.distributed as dist\nfrom torch.distributed import all_reduce\n",
        ),
        # the buckets' sizes counted as they grow, the pieces written back through torch's own helpers
        "import torch\nimport torch.distributed as dist\nfrom torch._utils import _flatten_dense_tensors, "
        "_unflatten_dense_tensors\n\n\ndef average_gradients(model, bucket_bytes):\n"
        "    buckets, size = [[]], 0\n    for p in reversed(list(model.parameters())):\n"
        "        if buckets[-1] and size + p.grad.nbytes > bucket_bytes:\n            buckets.append([])\n"
        "            size = 0\n        buckets[-1].append(p)\n        size += p.grad.nbytes\n"
        "    for bucket in buckets:\n        grads = [p.grad for p in bucket]\n"
        "        flat = _flatten_dense_tensors(grads)\n        dist.all_reduce(flat)\n"
        "        flat.div_(dist.get_world_size())\n"
        "        for g, new in zip(grads, _unflatten_dense_tensors(flat, grads)):\n            g.copy_(new)\n",
    ),
    2: (
        # the mean taken at every step on every rank, logged every other step
        _LOGGING.replace(
            "        if step % 2 == 0:\n            mean = mean_over_ranks(loss)  # every rank joins the all-reduce\n"
            "            if rank == 0:  # one rank logs\n",
            "        mean = mean_over_ranks(loss)\n        if step % 2 == 0:\n            if rank == 0:\n",
        ),
        # all-reduced without waiting in the call, then waited through the work's future
        _LOGGING.replace(
            "    dist.all_reduce(t)\n",
            "    work = dist.all_reduce(t, async_op=True)\n    torch.futures.wait_all([work.get_future()])\n",
        ),
    ),
    3: (
        _RING + "    n = world_size\n    return 2 * (n - 1) * (latency + n_bytes / n / bandwidth)",
        _RING + "    import torch\n    n = torch.tensor(world_size, dtype=torch.float64)\n"
        "    return 2 * (n - 1) * latency + 2 * (n - 1) / n * n_bytes / bandwidth",
    ),
}
