"""Chapter 09's exercise solutions, by question number (see the package's docstring)."""

SOLUTIONS: dict[int, str] = {
    1: (
        "import torch\nimport torch.nn.functional as F\n\n\n"
        "def hogwild_worker(rank, model, x, y, steps, lr):\n"
        "    opt = torch.optim.SGD(model.parameters(), lr=lr)\n"
        "    for _ in range(steps):\n"
        "        idx = torch.randint(0, len(x), (32,))\n"
        "        loss = F.cross_entropy(model(x[idx]), y[idx])\n"
        "        opt.zero_grad()\n"
        "        loss.backward()\n"
        "        opt.step()"
    ),
    2: (
        "def consumer(tasks, results):\n"
        "    while True:\n"
        "        item = tasks.get()\n"
        "        if item is None:\n"
        "            return\n"
        "        index, t = item\n"
        "        results.put((index, t.mean().item()))"
    ),
    3: "import torch\n\n\ndef partial_sum(rank, world_size, x, out):\n    out[rank] = x.chunk(world_size)[rank].sum()",
    4: (
        "import torch.multiprocessing as mp\n\n\n"
        "def run_in_forks(model, work, processes):\n"
        "    model.share_memory()  # before the fork: every child maps the same pages\n"
        '    ctx = mp.get_context("fork")\n'
        "    procs = [ctx.Process(target=work, args=(model,)) for _ in range(processes)]\n"
        "    for p in procs:\n"
        "        p.start()\n"
        "    for p in procs:\n"
        "        p.join()"
    ),
}
