SOLUTIONS: dict[int, str] = {
    1: "def produce(batches, tasks, free):\n    for index, batch in enumerate(batches):\n"
    "        buffer = free.get()  # waits until a consumer has put a buffer back: then nobody reads it\n"
    "        buffer.copy_(batch)  # in place: the buffer's shared memory, shared once\n"
    "        tasks.put((index, buffer))\n    tasks.put(None)  # the consumer stops here",
    2: "def partial_sum(rank, world_size, x, out):\n"
    "    chunks = x.chunk(world_size)  # each ceil(len(x) / world_size) long: x may run out first\n"
    "    out[rank] = chunks[rank].sum() if rank < len(chunks) else 0",
    3: "import torch.multiprocessing as mp\n\n\ndef run_in_forks(model, work, processes):\n"
    "    model.share_memory()  # before the fork: every child maps the same pages\n"
    '    ctx = mp.get_context("fork")\n'
    "    procs = [ctx.Process(target=work, args=(model,)) for _ in range(processes)]\n    for p in procs:\n"
    "        p.start()\n    for p in procs:\n        p.join()",
}
