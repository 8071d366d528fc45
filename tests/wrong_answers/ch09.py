"""Chapter 09's typical wrong answers, by question number (see the package's docstring)."""

#: Typical wrong answers to each question, by number, each with words its verdict must contain (the
#: message a learner who wrote it is told).
WRONG_ANSWERS: dict[int, tuple[tuple[str, str], ...]] = {
    1: (
        (
            "import torch\nimport torch.nn.functional as F\n\n\n"
            "def hogwild_worker(rank, model, x, y, steps, lr):\n"
            "    opt = torch.optim.SGD(model.parameters(), lr=0.5)\n"
            "    for _ in range(60):\n"
            "        idx = torch.randint(0, len(x), (32,))\n"
            "        loss = F.cross_entropy(model(x[idx]), y[idx])\n"
            "        opt.zero_grad()\n"
            "        loss.backward()\n"
            "        opt.step()",
            "with steps=0 the model still changed: take the number of steps and lr from the arguments",
        ),
        # forgets the optimizer step
        (
            "import torch\nimport torch.nn.functional as F\n\n\n"
            "def hogwild_worker(rank, model, x, y, steps, lr):\n"
            "    opt = torch.optim.SGD(model.parameters(), lr=lr)\n"
            "    for _ in range(steps):\n"
            "        idx = torch.randint(0, len(x), (32,))\n"
            "        loss = F.cross_entropy(model(x[idx]), y[idx])\n"
            "        opt.zero_grad()\n"
            "        loss.backward()",
            "the model's parameters did not change",
        ),
        # trains a private copy: the shared model never changes
        (
            "import torch\nimport torch.nn.functional as F\n\n\n"
            "def hogwild_worker(rank, model, x, y, steps, lr):\n"
            "    import copy\n"
            "    local = copy.deepcopy(model)\n"
            "    opt = torch.optim.SGD(local.parameters(), lr=lr)\n"
            "    for _ in range(steps):\n"
            "        idx = torch.randint(0, len(x), (32,))\n"
            "        loss = F.cross_entropy(local(x[idx]), y[idx])\n"
            "        opt.zero_grad()\n"
            "        loss.backward()\n"
            "        opt.step()",
            "the model's parameters did not change",
        ),
        # computes the loss without a graph
        (
            "import torch\nimport torch.nn.functional as F\n\n\n"
            "def hogwild_worker(rank, model, x, y, steps, lr):\n"
            "    opt = torch.optim.SGD(model.parameters(), lr=lr)\n"
            "    for _ in range(steps):\n"
            "        idx = torch.randint(0, len(x), (32,))\n"
            "        with torch.no_grad():\n"
            "            loss = F.cross_entropy(model(x[idx]), y[idx])\n"
            "        opt.zero_grad()\n"
            "        loss.backward()\n"
            "        opt.step()",
            "element 0 of tensors does not require grad",
        ),
    ),
    2: (
        # sends a tensor back
        (
            "def consumer(tasks, results):\n"
            "    while True:\n"
            "        item = tasks.get()\n"
            "        if item is None:\n"
            "            return\n"
            "        index, t = item\n"
            "        results.put((index, t.mean()))",
            "the mean you sent is a tensor; send a plain Python float",
        ),
        # handles one task only
        (
            "def consumer(tasks, results):\n    index, t = tasks.get()\n    results.put((index, t.mean().item()))",
            "3 tasks went in and 1 results came out: handle every task, and stop only at None",
        ),
        # the sum, not the mean
        (
            "def consumer(tasks, results):\n"
            "    while True:\n"
            "        item = tasks.get()\n"
            "        if item is None:\n"
            "            return\n"
            "        index, t = item\n"
            "        results.put((index, t.sum().item()))",
            "for task 0 you sent 10, the sum; the mean divides it by numel()",
        ),
        # never looks for the stop signal
        (
            "def consumer(tasks, results):\n"
            "    while True:\n"
            "        index, t = tasks.get()\n"
            "        results.put((index, t.mean().item()))",
            "cannot unpack non-iterable NoneType object",
        ),
    ),
    3: (
        (
            "import torch\n\n\ndef partial_sum(rank, world_size, x, out):\n"
            "    out[rank] = x.chunk(world_size)[rank].sum()\n"
            "    x.zero_()",
            "your partial_sum changed x",
        ),
        (
            "import torch\n\n\ndef partial_sum(rank, world_size, x, out):\n    out[rank] = x.sum()",
            "every process wrote the sum of all of x",
        ),
        (
            "import torch\n\n\ndef partial_sum(rank, world_size, x, out):\n    out = x.chunk(world_size)[rank].sum()",
            "`out` is still all zeros: write into it in place",
        ),
        (
            "import torch\n\n\ndef partial_sum(rank, world_size, x, out):\n    out[rank] = x[rank].sum()",
            "with 1 process `out` became [1.0]; the sums of x.chunk(1) are [55.0]",
        ),
        (
            "import torch\n\n\ndef partial_sum(rank, world_size, x, out):\n    return x.chunk(world_size)[rank].sum()",
            "`out` is still all zeros: write into it in place",
        ),
    ),
    4: (
        # the launcher as given: each forked child trains a private copy
        (
            "import torch.multiprocessing as mp\n\n\n"
            "def run_in_forks(model, work, processes):\n"
            '    ctx = mp.get_context("fork")\n'
            "    procs = [ctx.Process(target=work, args=(model,)) for _ in range(processes)]\n"
            "    for p in procs:\n"
            "        p.start()\n"
            "    for p in procs:\n"
            "        p.join()",
            "its own copy-on-write copy of the parameters, so nothing reaches the parent",
        ),
        # shares the model, but only after the children were forked
        (
            "import torch.multiprocessing as mp\n\n\n"
            "def run_in_forks(model, work, processes):\n"
            '    ctx = mp.get_context("fork")\n'
            "    procs = [ctx.Process(target=work, args=(model,)) for _ in range(processes)]\n"
            "    for p in procs:\n"
            "        p.start()\n"
            "    model.share_memory()\n"
            "    for p in procs:\n"
            "        p.join()",
            "the children were forked before they were",
        ),
        # shares first, but returns without waiting for the children
        (
            "import torch.multiprocessing as mp\n\n\n"
            "def run_in_forks(model, work, processes):\n"
            "    model.share_memory()\n"
            '    ctx = mp.get_context("fork")\n'
            "    for _ in range(processes):\n"
            "        ctx.Process(target=work, args=(model,)).start()",
            "child process(es) were still running: join() every process",
        ),
        # calls the worker itself instead of starting processes
        (
            "def run_in_forks(model, work, processes):\n"
            "    model.share_memory()\n"
            "    for _ in range(processes):\n"
            "        work(model)",
            "`work` ran in this process, not in child processes",
        ),
    ),
}
