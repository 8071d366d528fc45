"""Which allocations does the grad-mode forward leave live beyond the saved activations? (diagnostic)"""

import torch
from torch import nn

width, blocks, batch = 1024, 4, 64
torch.manual_seed(0)
model = nn.Sequential(*[nn.Sequential(nn.Linear(width, width), nn.ReLU()) for _ in range(blocks)]).cuda()
x, y = torch.randn(batch, width, device="cuda"), torch.randn(batch, width, device="cuda")
with torch.no_grad():
    model(x)
torch.cuda.synchronize()
before = torch.cuda.memory_allocated()
torch.cuda.memory._record_memory_history(max_entries=10000, stacks="python")
out = model(x)
mid = torch.cuda.memory_allocated() - before
loss = nn.functional.mse_loss(out, y)
growth = torch.cuda.memory_allocated() - before
snap = torch.cuda.memory._snapshot()
torch.cuda.memory._record_memory_history(enabled=None)
print("after model(x):", mid, "after mse_loss:", growth, "expected", blocks * batch * width * 4)
live = {}
for e in snap["device_traces"][0]:
    if e["action"] == "alloc":
        live[e["addr"]] = e
    elif e["action"] in ("free_requested", "free_completed"):
        live.pop(e["addr"], None)
for e in live.values():
    frames = [f"{f['filename'].split('/')[-1]}:{f['line']} {f['name']}" for f in e["frames"][:6]]
    print(e["size"], frames)
