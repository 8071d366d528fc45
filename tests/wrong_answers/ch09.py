"""Chapter 09's typical wrong answers, by question number (see the package's docstring)."""

from helpers.exercises.solutions.ch09 import SOLUTIONS

from . import lines_of

_Q1_HEAD = lines_of(SOLUTIONS[1], 1, 7)  # the imports, the def, the generator and the optimizer
_Q1_STEP = (
    "        loss = F.cross_entropy(model(x[idx]), y[idx])\n"
    "        opt.zero_grad()\n"
    "        loss.backward()\n"
    "        opt.step()\n"
)
_Q1_LOOP = "    for _ in range(steps):\n        idx = torch.randint(0, len(x), (32,), generator=g)\n"
#: Question 1's solution without its generator (the course's answer before the attack): under the chapter's
#: start method every child starts from the same random state, so both ranks draw the same rows.
_Q1_SHARED_RNG = (
    lines_of(SOLUTIONS[1], 1, 5)
    + lines_of(SOLUTIONS[1], 7, 7)
    + "    for _ in range(steps):\n        idx = torch.randint(0, len(x), (32,))\n"
    + _Q1_STEP
)
_Q2_HEAD = "def consumer(tasks, results):\n    while True:\n        item = tasks.get()\n"
_Q2_STOP = "        if item is None:\n            return\n        index, t = item\n"
_Q3_HEAD = "def partial_sum(rank, world_size, x, out):\n"
_Q4_HEAD = lines_of(SOLUTIONS[4], 1, 4) + lines_of(SOLUTIONS[4], 6, 6)  # the import, the def, the fork context
_Q4_PROCS = "    procs = [ctx.Process(target=work, args=(model,)) for _ in range(processes)]\n"
_Q4_START_JOIN = "    for p in procs:\n        p.start()\n    for p in procs:\n        p.join()\n"


#: Typical wrong answers to each question, by number, each with words its verdict must contain (the
#: message a learner who wrote it is told).
WRONG_ANSWERS: dict[int, tuple[tuple[str, str], ...]] = {
    1: (
        # the attack's finding: no generator per rank, so both children draw the same rows at every step
        (_Q1_SHARED_RNG, "ranks 0 and 1 drew the same rows: seed a generator from the rank"),
        (
            _Q1_SHARED_RNG.replace("    opt =", "    torch.manual_seed(0)\n    opt ="),
            "ranks 0 and 1 drew the same rows",
        ),
        # the steps and lr written in, not taken from the arguments
        (
            _Q1_HEAD.replace("lr=lr", "lr=0.5") + _Q1_LOOP.replace("steps", "60") + _Q1_STEP,
            "hogwild_worker(0, model, x, y, steps=5, lr=0.3) gave `model` 60 batches of [32, 32, 32, 32, 32, 32, …] "
            "rows of x; expected 5 of 32",
        ),
        (
            _Q1_HEAD.replace("lr=lr", "lr=0.5") + _Q1_LOOP + _Q1_STEP,
            "step 1 moved the parameters by 0.5 × the gradient's length; SGD with lr=0.3 moves them by lr × it",
        ),
        (_Q1_HEAD + _Q1_LOOP.replace("(32,)", "(16,)") + _Q1_STEP, "gave `model` 5 batches of [16, 16, 16, 16, 16]"),
        # forgets the optimizer step; forgets zero_grad (the gradients add up from step 2 on)
        (_Q1_HEAD + _Q1_LOOP + _Q1_STEP.replace("        opt.step()\n", ""), "step 1 moved the parameters by 0 ×"),
        (_Q1_HEAD + _Q1_LOOP + _Q1_STEP.replace("        opt.zero_grad()\n", ""), "step 2 moved the parameters by"),
        # another optimizer, another loss, the summed loss
        (_Q1_HEAD.replace("optim.SGD", "optim.Adam") + _Q1_LOOP + _Q1_STEP, "step 1 moved the parameters by"),
        (
            _Q1_HEAD.replace("lr=lr)", "lr=lr, momentum=0.9)") + _Q1_LOOP + _Q1_STEP,
            "step 2 moved the parameters by",
        ),
        (
            _Q1_HEAD + _Q1_LOOP + _Q1_STEP.replace("y[idx])", "y[idx], reduction='sum')"),
            "step 1 moved the parameters by 9.6 × the gradient's length; SGD with lr=0.3",
        ),
        (
            _Q1_HEAD
            + _Q1_LOOP
            + _Q1_STEP.replace(
                "F.cross_entropy(model(x[idx]), y[idx])", "F.mse_loss(model(x[idx]), F.one_hot(y[idx], 3).float())"
            ),
            "step 1 moved the parameters by",
        ),
        # trains a private copy: the model it was given is never called
        (
            _Q1_HEAD.replace("model.parameters()", "local.parameters()").replace(
                "    opt =", "    import copy\n    local = copy.deepcopy(model)\n    opt ="
            )
            + _Q1_LOOP
            + _Q1_STEP.replace("model(", "local("),
            "gave `model` 0 batches of [] rows of x; expected 5 of 32",
        ),
        # centres x in place
        (_Q1_HEAD + "    x -= x.mean(0)\n" + _Q1_LOOP + _Q1_STEP, "changed x or y"),
        # computes the loss without a graph
        (
            _Q1_HEAD + _Q1_LOOP + "        with torch.no_grad():\n    " + _Q1_STEP,
            "element 0 of tensors does not require grad",
        ),
    ),
    2: (
        # the attack's finding: the tasks arrive while the consumer runs, so an empty queue is no stop signal
        (
            "def consumer(tasks, results):\n"
            "    while not tasks.empty():\n"
            "        index, t = tasks.get()\n"
            "        results.put((index, t.double().mean().item()))",
            "your consumer returned before None came (the tasks arrive while it runs): stop only at None",
        ),
        (
            "import queue\n\n\ndef consumer(tasks, results):\n"
            "    while True:\n"
            "        try:\n"
            "            item = tasks.get_nowait()\n"
            "        except queue.Empty:\n"
            "            return\n"
            "        if item is None:\n"
            "            return\n"
            "        results.put((item[0], item[1].double().mean().item()))",
            "returned before None came",
        ),
        # the mean of an integer tensor: t.mean() refuses it
        (_Q2_HEAD + _Q2_STOP + "        results.put((index, t.mean().item()))", "mean(): could not infer output dtype"),
        # a mean that is not whole, rounded to an int
        (
            _Q2_HEAD + _Q2_STOP + "        results.put((index, int(t.double().mean())))",
            "`results` got [(2, 1), (4, 0), (9, 3)]; expected [(2, 1.25), (4, 0.625), (9, 3.5)]",
        ),
        # sends a tensor back
        (
            _Q2_HEAD + _Q2_STOP + "        results.put((index, t.double().mean()))",
            "(2, a torch.float64 tensor of shape () on cpu)",
        ),
        # handles one task only
        (
            "def consumer(tasks, results):\n"
            "    index, t = tasks.get()\n"
            "    results.put((index, t.double().mean().item()))",
            "returned before None came",
        ),
        # the sum, not the mean
        (
            _Q2_HEAD + _Q2_STOP + "        results.put((index, t.double().sum().item()))",
            "`results` got [(2, 3.75), (4, 2.5), (9, 7)] (the sums: a mean divides by numel())",
        ),
        # numbers the results itself instead of sending the task's index
        (
            "def consumer(tasks, results):\n"
            "    for n, (index, t) in enumerate(iter(tasks.get, None)):\n"
            "        results.put((n, t.double().mean().item()))",
            "`results` got [(0, 1.25), (1, 0.625), (2, 3.5)]; expected [(2, 1.25), (4, 0.625), (9, 3.5)]",
        ),
        # never looks for the stop signal
        (
            "def consumer(tasks, results):\n"
            "    while True:\n"
            "        index, t = tasks.get()\n"
            "        results.put((index, t.double().mean().item()))",
            "cannot unpack non-iterable NoneType object",
        ),
        # zeroes the tensor it was given
        (
            _Q2_HEAD + _Q2_STOP + "        results.put((index, t.double().mean().item()))\n        t.zero_()",
            "changed the tensors",
        ),
    ),
    3: (
        # the attack's finding: x.chunk gives fewer chunks than world_size when x is short (the old solution)
        (
            _Q3_HEAD + "    out[rank] = x.chunk(world_size)[rank].sum()",
            "Your `partial_sum` raised IndexError (line 2 of your code): tuple index out of range",
        ),
        # chunks of len(x) // world_size: too short when the size does not divide
        (
            _Q3_HEAD + "    size = len(x) // world_size\n    out[rank] = x[rank * size : (rank + 1) * size].sum()",
            "Run here for ranks 0 to 2, with x = [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0, 5.0, 3.0], out became "
            "[8.0, 15.0, 13.0]; the sums of x.chunk are [9.0, 22.0, 8.0]",
        ),
        (
            _Q3_HEAD + "    out[rank] = x.tensor_split(world_size)[rank].sum()",
            "out became [9.0, 16.0, 14.0]; the sums of x.chunk are [9.0, 22.0, 8.0]",
        ),
        (
            _Q3_HEAD + "    out[rank] = x.sum()",
            "out became [39.0, 39.0, 39.0]; the sums of x.chunk are [9.0, 22.0, 8.0]",
        ),
        (_Q3_HEAD + "    out[rank] = x[rank].sum()", "out became [3.0, 1.0, 4.0]"),
        (_Q3_HEAD + "    out = x.chunk(world_size)[rank].sum()", "out became [0.0, 0.0, 0.0]; the sums of x.chunk are"),
        (_Q3_HEAD + "    return x.chunk(world_size)[rank].sum()", ": write into it in place (out[rank] = ...)"),
        (
            _Q3_HEAD
            + "    chunks = x.chunk(world_size)\n    out[rank] = chunks[rank].sum() if rank < len(chunks) else 0\n"
            "    x.zero_()",
            "your partial_sum changed x",
        ),
    ),
    4: (
        # the launcher as given: each forked child trains a private copy
        (_Q4_HEAD + _Q4_PROCS + _Q4_START_JOIN, "each forked child wrote its own copy-on-write copy"),
        # shares the model, but only after the children were forked
        (
            _Q4_HEAD + _Q4_PROCS + "    for p in procs:\n        p.start()\n    model.share_memory()\n"
            "    for p in procs:\n        p.join()",
            "the model here did not change",
        ),
        # the attack's finding: each child is joined before the next starts, so they run one after the other
        (
            _Q4_HEAD.replace("    ctx", "    model.share_memory()\n    ctx") + "    for _ in range(processes):\n"
            "        p = ctx.Process(target=work, args=(model,))\n        p.start()\n        p.join()",
            "the children ran `work` one after the other: start them all, then join them all",
        ),
        # shares first, but returns without waiting for the children
        (
            _Q4_HEAD.replace("    ctx", "    model.share_memory()\n    ctx") + "    for _ in range(processes):\n"
            "        ctx.Process(target=work, args=(model,)).start()",
            "returned while its children were still running: join() them all first",
        ),
        # two children, whatever `processes` says
        (
            _Q4_HEAD.replace("    ctx", "    model.share_memory()\n    ctx")
            + _Q4_PROCS.replace("range(processes)", "range(2)")
            + _Q4_START_JOIN,
            "`work` ran to its end in 2 child processes (and 0 here)",
        ),
        # calls the worker itself instead of starting processes
        (
            "def run_in_forks(model, work, processes):\n"
            "    model.share_memory()\n"
            "    for _ in range(processes):\n"
            "        work(model)",
            "`work` ran to its end in 0 child processes (and 3 here)",
        ),
    ),
}

#: Right answers other than the solutions, in forms the checker must accept too.
RIGHT_ANSWERS: dict[int, tuple[str, ...]] = {
    1: (
        # the global generator seeded per rank, rows without repeats, the loss as a module
        "import torch\nfrom torch import nn\n\n\n"
        "def hogwild_worker(rank, model, x, y, steps, lr):\n"
        "    torch.manual_seed(1000 + rank)\n"
        "    opt = torch.optim.SGD(model.parameters(), lr=lr)\n"
        "    loss_fn = nn.CrossEntropyLoss()\n"
        "    for _ in range(steps):\n"
        "        idx = torch.randperm(len(x))[:32]\n"
        "        opt.zero_grad(set_to_none=False)\n"
        "        loss_fn(model(x[idx]), y[idx]).backward()\n"
        "        opt.step()\n"
        "    with torch.no_grad():\n"
        "        print('loss on all rows:', loss_fn(model(x), y).item())",
        # SGD written out; Python's random module, which every forked child reseeds
        "import random\n\nimport torch\nimport torch.nn.functional as F\n\n\n"
        "def hogwild_worker(rank, model, x, y, steps, lr):\n"
        "    for _ in range(steps):\n"
        "        idx = random.sample(range(len(x)), 32)\n"
        "        F.cross_entropy(model(x[idx]), y[idx]).backward()\n"
        "        with torch.no_grad():\n"
        "            for p in model.parameters():\n"
        "                p -= lr * p.grad\n"
        "                p.grad = None",
    ),
    2: (
        _Q2_HEAD + _Q2_STOP + "        results.put((index, t.double().mean().item()))",
        "def consumer(tasks, results):\n"
        "    while (item := tasks.get(timeout=30)) is not None:\n"
        "        index, t = item\n"
        "        results.put([index, t.sum().item() / t.numel()])",
        "def consumer(tasks, results):\n"
        "    for index, t in iter(tasks.get, None):\n"
        "        results.put((index, t.numpy().mean()))  # a numpy float",
    ),
    3: (
        # writes nothing for a rank with no chunk: out already holds 0 there
        _Q3_HEAD
        + "    chunks = x.chunk(world_size)\n    if rank < len(chunks):\n        out[rank] = chunks[rank].sum()",
        # the chunk by hand, as x.chunk cuts it (ceil(len / world_size) each)
        _Q3_HEAD
        + "    size = -(-len(x) // world_size)\n    out[rank] = x[rank * size : (rank + 1) * size].sum().item()",
    ),
    4: (
        # the model given by keyword, the children joined with a time limit
        _Q4_HEAD.replace("    ctx", "    model.share_memory()\n    ctx")
        + "    procs = [ctx.Process(target=work, kwargs={'model': model}) for _ in range(processes)]\n"
        + "    for p in procs:\n        p.start()\n    for p in procs:\n        p.join(timeout=60)\n",
        # the standard library's multiprocessing, joined in reverse order
        "import multiprocessing\n\n\ndef run_in_forks(model, work, processes):\n"
        "    model.share_memory()\n"
        '    ctx = multiprocessing.get_context("fork")\n'
        "    procs = [ctx.Process(target=work, args=(model,)) for _ in range(processes)]\n"
        "    for p in procs:\n        p.start()\n"
        "    for p in reversed(procs):\n        p.join()",
    ),
}
