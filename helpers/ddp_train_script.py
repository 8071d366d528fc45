"""DDP training started by torchrun: torchrun --standalone --nproc_per_node=N ddp_train_script.py OUT.json

torchrun starts N copies of this file and gives each its RANK, LOCAL_RANK, WORLD_SIZE and the
address of a rendezvous store in environment variables. Every rank trains the same small network
on its own `DistributedSampler` shard; rank 0 writes the losses it saw, and whether every rank
ended with the same parameters, to OUT.json. The script needs torch only, so it runs from any
folder; importing it runs nothing.
"""

import gc
import json
import os
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main(out_path: str) -> None:
    use_cuda = torch.cuda.is_available() and torch.cuda.device_count() >= int(os.environ["LOCAL_WORLD_SIZE"])
    local_rank = int(os.environ["LOCAL_RANK"])
    if use_cuda:
        torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl" if use_cuda else "gloo")  # rank, world size, store: from torchrun
    rank, world = dist.get_rank(), dist.get_world_size()
    device = torch.device("cuda", local_rank) if use_cuda else torch.device("cpu")

    g = torch.Generator().manual_seed(1)
    x = torch.randn(256, 16, generator=g)
    y = torch.sin(x @ torch.randn(16, 1, generator=g))
    sampler = DistributedSampler(TensorDataset(x, y), shuffle=True, seed=0, drop_last=True)
    loader = DataLoader(TensorDataset(x, y), batch_size=32 // world, sampler=sampler)
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(), torch.nn.Linear(32, 1)).to(device)
    model = DDP(net, device_ids=[local_rank] if use_cuda else None)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    losses = []
    for epoch in range(2):
        sampler.set_epoch(epoch)  # a different shuffle each epoch, the same on every rank
        for xb, yb in loader:
            loss = torch.nn.functional.mse_loss(model(xb.to(device)), yb.to(device))
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
    params = torch.cat([p.detach().reshape(-1) for p in net.parameters()]).cpu()
    gathered = [torch.zeros_like(params) for _ in range(world)] if rank == 0 else None
    if use_cuda:
        params = params.to(device)
        gathered = [t.to(device) for t in gathered] if gathered else None
    dist.gather(params, gathered, dst=0)
    if rank == 0:
        result = {
            "world_size": world,
            "backend": dist.get_backend(),
            "losses_rank0": losses,
            "identical_on_all_ranks": all(torch.equal(gathered[0], t) for t in gathered),
        }
        with open(out_path, "w") as f:
            json.dump(result, f)
    # Leave together: the barrier makes sure no peer still needs this rank's connections.
    del model, net, opt, loss, params, gathered
    gc.collect()
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1])
    # End the process at once. Once DDP has used the process group, gloo's threads are still running
    # after destroy_process_group(), and the interpreter's normal exit (finalization, then C++'s
    # exit-time destructors) can race with them and abort the process. os._exit(0) skips that
    # teardown; it also skips atexit handlers and flushing Python's buffers, so flush here first.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
