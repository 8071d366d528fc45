SOLUTIONS: dict[int, str] = {
    1: """import torch
import torch.distributed as dist


def average_gradients(model, bucket_bytes):
    buckets = []
    for p in reversed(list(model.parameters())):  # the order backward finishes the gradients
        if buckets and sum(q.grad.nbytes for q in buckets[-1]) + p.grad.nbytes <= bucket_bytes:
            buckets[-1].append(p)
        else:
            buckets.append([p])
    for bucket in buckets:
        flat = torch.cat([p.grad.reshape(-1) for p in bucket])
        dist.all_reduce(flat)  # one collective for the whole bucket
        flat /= dist.get_world_size()
        for p, piece in zip(bucket, flat.split([p.numel() for p in bucket])):
            p.grad.copy_(piece.view_as(p.grad))
""",
    2: """import torch
import torch.distributed as dist


def mean_over_ranks(value):
    t = torch.tensor(float(value))
    dist.all_reduce(t)
    return t.item() / dist.get_world_size()


def train_and_log(rank, world_size, losses):
    logged = []
    for step, loss in enumerate(losses):  # this rank's loss at each step
        if step % 2 == 0:
            mean = mean_over_ranks(loss)  # every rank joins the all-reduce
            if rank == 0:  # one rank logs
                logged.append(mean)
                print(f"step {step}: mean loss {logged[-1]:.3f}")
    return logged
""",
    3: """def ring_allreduce_seconds(n_bytes, world_size, latency, bandwidth):
    steps = 2 * (world_size - 1)
    return steps * latency + steps / world_size * n_bytes / bandwidth""",
}
