"""Chapter 09's exercise solutions, by question number (see the package's docstring)."""

SOLUTIONS: dict[int, str] = {
    1: """def produce(batches, tasks, free):
    for index, batch in enumerate(batches):
        buffer = free.get()  # waits until a consumer has put a buffer back: then nobody reads it
        buffer.copy_(batch)  # in place: the buffer's shared memory, shared once
        tasks.put((index, buffer))
    tasks.put(None)  # the consumer stops here""",
    2: """def partial_sum(rank, world_size, x, out):
    chunks = x.chunk(world_size)  # each ceil(len(x) / world_size) long: x may run out first
    out[rank] = chunks[rank].sum() if rank < len(chunks) else 0""",
    3: """import torch.multiprocessing as mp


def run_in_forks(model, work, processes):
    model.share_memory()  # before the fork: every child maps the same pages
    ctx = mp.get_context("fork")
    procs = [ctx.Process(target=work, args=(model,)) for _ in range(processes)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()""",
}
