"""Chapter 09's exercise solutions, by question number (see the package's docstring)."""

SOLUTIONS: dict[int, str] = {
    1: """import torch
import torch.nn.functional as F


def hogwild_worker(rank, model, x, y, steps, lr):
    g = torch.Generator().manual_seed(rank)  # each process draws its own rows (section 6)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    for _ in range(steps):
        idx = torch.randint(0, len(x), (32,), generator=g)
        opt.zero_grad()
        F.cross_entropy(model(x[idx]), y[idx]).backward()
        opt.step()""",
    2: """def consumer(tasks, results):
    for index, t in iter(tasks.get, None):  # tasks.get() until it returns None
        results.put((index, t.double().mean().item()))  # double(): an integer tensor has no mean()""",
    3: """def partial_sum(rank, world_size, x, out):
    chunks = x.chunk(world_size)  # each ceil(len(x) / world_size) long: x may run out first
    out[rank] = chunks[rank].sum() if rank < len(chunks) else 0""",
    4: """import torch.multiprocessing as mp


def run_in_forks(model, work, processes):
    model.share_memory()  # before the fork: every child maps the same pages
    ctx = mp.get_context("fork")
    procs = [ctx.Process(target=work, args=(model,)) for _ in range(processes)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()""",
}
