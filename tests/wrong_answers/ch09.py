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
#: Question 1's solution without its generator (the course's answer before the attack): it draws with torch's
#: global generator, which the question's words rule out (and under fork both ranks would draw the same rows).
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


_Q1_RIGHT = _Q1_HEAD + _Q1_LOOP + _Q1_STEP


def _q1(old: str, new: str) -> str:
    """Question 1's solution with `old` replaced by `new` (exactly once)."""
    assert _Q1_RIGHT.count(old) == 1, old
    return _Q1_RIGHT.replace(old, new)


#: Typical wrong answers to each question, by number, each with words its verdict must contain (the
#: message a learner who wrote it is told).
WRONG_ANSWERS: dict[int, tuple[tuple[str, str], ...]] = {
    1: (
        # the attack's finding: torch's global generator (seeded or not) in place of a Generator seeded from rank
        (
            _Q1_SHARED_RNG,
            "changed torch's global random state (a seed, or a draw without generator=): use only a Generator",
        ),
        (_Q1_SHARED_RNG.replace("    opt =", "    torch.manual_seed(0)\n    opt ="), "changed torch's global random"),
        (
            _Q1_SHARED_RNG.replace("    opt =", "    torch.manual_seed(1000 + rank)\n    opt ="),
            "hogwild_worker(0, model, x, y, 5, 0.3), 256 rows changed torch's global random state",
        ),
        # the same rows at every step: drawn once before the loop, or a generator seeded again at each step
        (
            _q1(_Q1_LOOP, "    idx = torch.randint(0, len(x), (32,), generator=g)\n    for _ in range(steps):\n"),
            "rows drew rows [",
        ),
        (
            _q1("        idx = ", "        g = torch.Generator().manual_seed(rank)\n        idx = "),
            "]: draw 32 random rows anew each step",
        ),
        # rows one after the other, not random
        (
            _q1(
                "        idx = torch.randint(0, len(x), (32,), generator=g)",
                "        start = ((rank * steps + step) * 32) % (len(x) - 32)\n"
                "        idx = torch.arange(start, start + 32)",
            ).replace("for _ in", "for step in"),
            "drew rows [0, 1, 2, 3, 4, 5, …], then [32, 33, 34, 35, 36, 37, …]: draw 32 random rows anew each step",
        ),
        # seeded from the process, not the rank: both ranks draw the same rows here (one process), others in a child
        (
            _q1(".manual_seed(rank)", ".manual_seed(os.getpid())").replace(
                "import torch\n", "import os\n\nimport torch\n", 1
            ),
            "both ranks drew a batch, rows [",
        ),
        # a generator seeded from the system (g.seed()): the ranks differ, but a child draws other rows than here
        (_q1("    opt =", "    g.seed()\n    opt ="), "a rank drew other rows in a child: seed one generator"),
        # the same seed for every rank, from a seeded or an unseeded generator
        (_q1(".manual_seed(rank)", ".manual_seed(0)"), "]: seed one generator from the rank alone, before the loop"),
        # seeded again each step from rank + step: rank 0's step 1 draws rank 1's step 0 batch
        (
            _q1("        idx = ", "        g = torch.Generator().manual_seed(rank + step)\n        idx = ").replace(
                "for _ in", "for step in"
            ),
            "both ranks drew a batch, rows [",
        ),
        (_q1(".manual_seed(rank)", ""), "both ranks drew a batch, rows"),
        # round 4's findings: a rank other than 0 that does not train, or not for `steps` steps
        (
            _q1("    g = ", "    if rank != 0:\n        return\n    g = "),
            "hogwild_worker(1, model, x, y, 5, 0.3), 256 rows gave `model` 0 batches of [] rows of x; expected 5 of 32",
        ),
        (
            _q1("        opt.step()\n", "        if rank == 0:\n            opt.step()\n"),
            "hogwild_worker(1, model, x, y, 5, 0.3), 256 rows: step 1 did not move the parameters",
        ),
        (
            _q1("    g = ", "    if rank > 0:\n        steps = 1\n    g = "),
            "hogwild_worker(1, model, x, y, 5, 0.3), 256 rows gave `model` 1 batches of [32] rows of x; expected 5 "
            "of 32",
        ),
        (
            _q1("lr=lr)", "lr=lr if rank == 0 else 0.0)"),
            "hogwild_worker(1, model, x, y, 5, 0.3), 256 rows: step 1 did not move the parameters: zero_grad(), "
            "backward(), then step an optimizer of model.parameters()",
        ),
        # randint's high is left out: the last row never comes
        (_q1("len(x), (32,)", "len(x) - 1, (32,)"), "never drew the last row, x[39]: draw from all len(x)"),
        # an optimizer over the last layer only
        (
            _q1("SGD(model.parameters()", "SGD(list(model.parameters())[-2:]"),
            "step 1 did not follow the mean cross-entropy's gradient: check the optimizer",
        ),
        # the steps and lr written in, not taken from the arguments
        (
            _Q1_HEAD.replace("lr=lr", "lr=0.5") + _Q1_LOOP.replace("steps", "60") + _Q1_STEP,
            "hogwild_worker(0, model, x, y, 5, 0.3), 256 rows gave `model` 60 batches of [32, 32, 32, 32, 32, 32, …] "
            "rows of x; expected 5 of 32",
        ),
        (
            _q1("lr=lr", "lr=0.5"),
            "step 1 moved the parameters by 0.5 × the gradient (1.66667 × lr)",
        ),
        (_q1("(32,)", "(16,)"), "gave `model` 5 batches of [16, 16, 16, 16, 16]"),
        # forgets the optimizer step; zero_grad between backward and step; forgets zero_grad
        (
            _q1("        opt.step()\n", ""),
            "step 1 did not move the parameters: zero_grad(), backward(), then step an optimizer of model.parameters()",
        ),
        (
            _q1(
                "        opt.zero_grad()\n        loss.backward()\n",
                "        loss.backward()\n        opt.zero_grad()\n",
            ),
            "step 1 did not move the parameters",
        ),
        (
            _q1("        opt.zero_grad()\n", ""),
            "step 2 did not follow the mean cross-entropy's gradient: check the optimizer, zero_grad()",
        ),
        # another optimizer, another loss, the summed loss, y drawn apart from x
        (_q1("optim.SGD", "optim.Adam"), "step 1 did not follow the mean cross-entropy's gradient"),
        (_q1("lr=lr)", "lr=lr, momentum=0.9)"), "step 2 did not follow the mean cross-entropy's gradient"),
        # round 4's finding: weight decay moves by lr × the gradient's length, but not along the gradient alone
        (_q1("lr=lr)", "lr=lr, weight_decay=1e-4)"), "step 1 did not follow the mean cross-entropy's gradient"),
        (
            _q1("y[idx])", "y[idx], reduction='sum')"),
            "step 1 moved the parameters by 9.6 × the gradient (32 × lr)",
        ),
        (_q1("F.cross_entropy(", "F.nll_loss("), "step 1 did not follow the mean cross-entropy's gradient"),
        (_q1("model(x[idx])", "model(x[idx]).softmax(1)"), "step 1 did not follow the mean cross-entropy's gradient"),
        (
            _q1("F.cross_entropy(model(x[idx]), y[idx])", "F.mse_loss(model(x[idx]), F.one_hot(y[idx], 3).float())"),
            "step 1 did not follow the mean cross-entropy's gradient",
        ),
        (
            _q1("y[idx])", "y[torch.randint(0, len(x), (32,), generator=g)])"),
            "did not follow the mean cross-entropy's gradient: check the optimizer, zero_grad(), loss, y's rows",
        ),
        # trains a private copy: the model it was given is never called
        (
            _Q1_HEAD.replace("model.parameters()", "local.parameters()").replace(
                "    opt =", "    import copy\n    local = copy.deepcopy(model)\n    opt ="
            )
            + _Q1_LOOP
            + _Q1_STEP.replace("model(", "local("),
            "256 rows gave `model` 0 batches of [] rows of x; expected 5 of 32",
        ),
        # the attack's findings: an optimizer made on a copy; gradients clipped to norm 1 (step 1's is 1.7 or more)
        (
            _q1("SGD(model.parameters()", "SGD(copy.deepcopy(model).parameters()").replace(
                "import torch\n", "import copy\n\nimport torch\n", 1
            ),
            "step 1 did not move the parameters: zero_grad(), backward(), then step an optimizer of model.parameters()",
        ),
        (
            _q1(
                "        opt.step()\n",
                "        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n        opt.step()\n",
            ),
            "256 rows: step 1 moved the parameters by",
        ),
        # centres x in place
        (_Q1_HEAD + "    x -= x.mean(0)\n" + _Q1_LOOP + _Q1_STEP, "changed x or y"),
        # computes the loss without a graph
        (
            _Q1_HEAD + _Q1_LOOP + "        with torch.no_grad():\n    " + _Q1_STEP,
            "element 0 of tensors does not require grad",
        ),
        # rows from Python's random module, which every child reseeds: not drawn from the rank
        (
            "import random\n\nimport torch\nimport torch.nn.functional as F\n\n\n"
            "def hogwild_worker(rank, model, x, y, steps, lr):\n"
            "    opt = torch.optim.SGD(model.parameters(), lr=lr)\n"
            "    for _ in range(steps):\n"
            "        idx = random.sample(range(len(x)), 32)\n" + _Q1_STEP,
            "changed Python's global random state (a seed, or a draw without generator=): use only a Generator",
        ),
        # round 3's findings: numpy's or Python's global generator seeded from rank (not a torch.Generator)
        (
            "import numpy as np\nimport torch\nimport torch.nn.functional as F\n\n\n"
            "def hogwild_worker(rank, model, x, y, steps, lr):\n"
            "    np.random.seed(rank)\n"
            "    opt = torch.optim.SGD(model.parameters(), lr=lr)\n"
            "    for _ in range(steps):\n"
            "        idx = torch.from_numpy(np.random.randint(0, len(x), 32))\n" + _Q1_STEP,
            "changed numpy's global random state (a seed, or a draw without generator=): use only a Generator",
        ),
        (
            "import random\n\nimport torch\nimport torch.nn.functional as F\n\n\n"
            "def hogwild_worker(rank, model, x, y, steps, lr):\n"
            "    random.seed(rank)\n"
            "    opt = torch.optim.SGD(model.parameters(), lr=lr)\n"
            "    for _ in range(steps):\n"
            "        idx = random.sample(range(len(x)), 32)\n" + _Q1_STEP,
            "changed Python's global random state",
        ),
        # round 3's findings: the parameters rebound to new tensors (the shared memory never changes)
        (
            _q1(
                "        opt.step()\n",
                "        with torch.no_grad():\n"
                "            for p in model.parameters():\n"
                "                p.data = p.data - lr * p.grad\n",
            ),
            "5, 0.3), 256 rows changed parameters' memory: train them in place",
        ),
        (
            _q1("    opt = ", "    for p in model.parameters():\n        p.data = p.data.clone()\n    opt = "),
            "changed parameters' memory: train them in place",
        ),
    ),
    2: (
        # round 3's findings: the mean rounded to float16 (1365.67 is not a float16)
        (
            "import torch\n\n\ndef consumer(tasks, results):\n"
            "    for index, t in iter(tasks.get, None):\n"
            "        results.put((index, float(t.to(torch.float16).mean())))",
            "(9, 1365)]; expected [",
        ),
        (
            "import torch\n\n\ndef consumer(tasks, results):\n"
            "    for index, t in iter(tasks.get, None):\n"
            "        results.put((index, t.mean(dtype=torch.float16).item()))",
            "(9, 1365",
        ),
        # the attack's finding: the tasks arrive while the consumer runs, so an empty queue is no stop signal
        (
            "def consumer(tasks, results):\n"
            "    while not tasks.empty():\n"
            "        index, t = tasks.get()\n"
            "        results.put((index, t.double().mean().item()))",
            "your consumer returned before None came (the tasks arrive while it runs): stop only at None",
        ),
        # the attack's findings: the sum in float16 overflows (a float16 task sums past 65504); the tensor itself
        (
            "def consumer(tasks, results):\n"
            "    for index, t in iter(tasks.get, None):\n"
            "        results.put((index, t.sum().item() / t.numel()))",
            "`results` got [(2, inf), (4, 0.333333), (6, 5), (7, 0.166667), (9, 1365.67)]; expected [(2, 1.25), (4, "
            "0.333333)",
        ),
        (
            "def consumer(tasks, results):\n"
            "    for index, t in iter(tasks.get, None):\n"
            "        results.put((index, t))",
            "`results` got (2, a torch.float16 tensor of shape (60000,) on cpu) of ['int', 'Tensor']; expected (index, "
            "mean) pairs: an int "
            "and a Python float",
        ),
        # round 4's finding: every get with a short timeout (section 5's rule for the parent), stopping when one
        # runs out: the tasks come 1 s after the consumer starts
        (
            "import queue\n\n\ndef consumer(tasks, results):\n"
            "    while True:\n"
            "        try:\n"
            "            item = tasks.get(timeout=0.2)\n"
            "        except queue.Empty:\n"
            "            return\n"
            "        if item is None:\n"
            "            return\n"
            "        results.put((item[0], item[1].double().mean().item()))",
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
            "`results` got (2, 1) of ['int', 'int']; expected (index, mean) pairs: an int and a Python float",
        ),
        # sends a tensor back
        (
            _Q2_HEAD + _Q2_STOP + "        results.put((index, t.double().mean()))",
            "`results` got (2, a torch.float64 tensor of shape () on cpu) of ['int', 'Tensor']; expected (index, mean)",
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
            "`results` got [(2, 75_000), (4, 1), (6, 15), (7, 1), (9, 4097)]; expected [(2, 1.25), (4, 0.333333)",
        ),
        # numbers the results itself instead of sending the task's index
        (
            "def consumer(tasks, results):\n"
            "    for n, (index, t) in enumerate(iter(tasks.get, None)):\n"
            "        results.put((n, t.double().mean().item()))",
            "`results` got [(0, 1.25), (1, 0.333333), (2, 1365.67), (3, 5), (4, 0.166667)]; expected [(2, 1.25), "
            "(4, 0.333333), "
            "(6, 5)",
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
        # the attack's findings: numpy scalars, an int where the mean is whole, the sum over len() (rows, for 2-D)
        (
            "def consumer(tasks, results):\n"
            "    for index, t in iter(tasks.get, None):\n"
            "        results.put((index, t.numpy().mean()))",
            "raised TypeError (line 3 of your code): Got unsupported ScalarType BFloat16",
        ),
        (
            "import statistics\n\n\ndef consumer(tasks, results):\n"
            "    for index, t in iter(tasks.get, None):\n"
            "        results.put((index, statistics.mean(t.flatten().tolist())))",
            "`results` got (6, 5) of ['int', 'int']; expected (index, mean) pairs: an int and a Python float",
        ),
        (
            "def consumer(tasks, results):\n"
            "    for index, t in iter(tasks.get, None):\n"
            "        results.put((index, t.sum().item() / len(t)))",
            "`results` got [(2, inf), (4, 0.333333), (6, 5), (7, 0.5), (9, 1365.67)]; expected [(2, 1.25), (4, "
            "0.333333), "
            "(6, 5), (7, 0.166667), (9, 1365.67)]",
        ),
    ),
    3: (
        # an integer x summed in float32 (accepted before: the integer case's sums were small)
        (
            "def partial_sum(rank, world_size, x, out):\n"
            "    chunks = x.chunk(world_size)\n"
            "    out[rank] = chunks[rank].float().sum() if rank < len(chunks) else 0",
            "out became [5, 33554432, 9007199254740992, 0]; the sums of x.chunk are [5, 33554434, 9007199254740993, 0]",
        ),
        # round 3's finding: the chunk summed in float16 (it overflows on the integer case; 3012.5 is not a float16)
        (
            _Q3_HEAD + "    chunks = x.chunk(world_size)\n"
            "    out[rank] = chunks[rank].half().sum() if rank < len(chunks) else 0",
            "; the sums of x.chunk are [5, 33554434, 9007199254740993, 0]",  # inf as an int64 differs by CPU
        ),
        # the attack's finding: x.chunk gives fewer chunks than world_size when x is short (the old solution)
        (
            _Q3_HEAD + "    out[rank] = x.chunk(world_size)[rank].sum()",
            "Your `partial_sum` raised IndexError (line 2 of your code): tuple index out of range",
        ),
        # the attack's findings: a rank without a chunk writes nothing; += where out already held something
        (
            _Q3_HEAD
            + "    chunks = x.chunk(world_size)\n    if rank < len(chunks):\n        out[rank] = chunks[rank].sum()",
            "Run here, each rank alone on its own out, for ranks 0 to 3 with x = [7, -2, 33554433, 1, "
            "9007199254740993] and "
            "out filled with -1, out became [5, 33554434, 9007199254740993, -1]; the sums of x.chunk are [5, "
            "33554434, 9007199254740993, 0] (0 for a rank without a chunk)",
        ),
        (
            _Q3_HEAD
            + "    chunks = x.chunk(world_size)\n    if rank < len(chunks):\n        out[rank] += chunks[rank].sum()",
            "out filled with -1, out became [5.0, 21.0, 16.0]; the sums of x.chunk are [6.0, 22.0, 17.0]",
        ),
        # chunks of len(x) // world_size: too short when the size does not divide
        (
            _Q3_HEAD + "    size = len(x) // world_size\n    out[rank] = x[rank * size : (rank + 1) * size].sum()",
            "Run here, each rank alone on its own out, for ranks 0 to 2 with x = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, "
            "7.0, 8.0, 9.0] and out filled with -1, out became [3.0, 12.0, 21.0]; the sums of x.chunk are [6.0, 22.0, "
            "17.0]",
        ),
        # round 4's finding: chunks of len(x) // world_size + 1, right where the size does not divide (the ceiling)
        (
            _Q3_HEAD + "    size = len(x) // world_size + 1\n    out[rank] = x[rank * size : (rank + 1) * size].sum()",
            "Run in child processes on one out, for ranks 0 to 1 with x = [3001.5, 11.0, 2.0, 8.0] and out filled with "
            "-1, out became [3014.5, 8.0]; the sums of x.chunk are [3012.5, 10.0]",
        ),
        (
            _Q3_HEAD + "    out[rank] = x.tensor_split(world_size)[rank].sum()",
            "out became [6.0, 15.0, 24.0]; the sums of x.chunk are [6.0, 22.0, 17.0]",
        ),
        (
            _Q3_HEAD + "    out[rank] = x.sum()",
            "out became [45.0, 45.0, 45.0]; the sums of x.chunk are [6.0, 22.0, 17.0]",
        ),
        (_Q3_HEAD + "    out[rank] = x[rank].sum()", "out became [0.0, 1.0, 2.0]"),
        (
            _Q3_HEAD + "    out = x.chunk(world_size)[rank].sum()",
            "out became [-1.0, -1.0, -1.0]; the sums of x.chunk are",
        ),
        (
            _Q3_HEAD + "    return x.chunk(world_size)[rank].sum()",
            "out became [-1.0, -1.0, -1.0]; the sums of x.chunk are [6.0, 22.0, 17.0]",
        ),
        (
            _Q3_HEAD
            + "    chunks = x.chunk(world_size)\n    out[rank] = chunks[rank].sum() if rank < len(chunks) else 0\n"
            "    x.zero_()",
            "your partial_sum changed x",
        ),
        # the attack's findings: a rank reading the others' slots (right only when they ran first), a rank doing
        # the others' work (rank 0 all, or each rank its own and the later ones')
        (
            _Q3_HEAD + "    end = sum(len(c) for c in x.chunk(world_size)[: rank + 1])\n"
            "    out[rank] = x[:end].sum() - out[:rank].sum()",
            "out filled with -1, out became [6.0, 29.0, 47.0]; the sums of x.chunk are [6.0, 22.0, 17.0]",
        ),
        (
            _Q3_HEAD + "    if rank == 0:\n        chunks = x.chunk(world_size)\n        for r in range(world_size):\n"
            "            out[r] = chunks[r].sum() if r < len(chunks) else 0",
            "out filled with -1: rank 0 changed out[1], out[2] too; a rank writes only out[rank]",
        ),
        (
            _Q3_HEAD + "    chunks = x.chunk(world_size)\n    for r in range(rank, world_size):\n"
            "        out[r] = chunks[r].sum() if r < len(chunks) else 0",
            "rank 0 changed out[1], out[2] too; a rank writes only out[rank]",
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
            "`work` ran to its end in 2 child processes and 0 times here, in the parent; expected 3 children",
        ),
        # the attack's findings: one child; the weight shared, not the bias; a shared copy given to the children
        (
            _Q4_HEAD.replace("    ctx", "    model.share_memory()\n    ctx")
            + _Q4_PROCS.replace("range(processes)", "range(1)")
            + _Q4_START_JOIN,
            "`work` ran to its end in 1 child processes and 0 times here",
        ),
        (
            _Q4_HEAD.replace("    ctx", "    model.weight.share_memory_()\n    ctx") + _Q4_PROCS + _Q4_START_JOIN,
            "the model's bias did not change: share every parameter (model.share_memory())",
        ),
        (
            "import copy\n\n"
            + _Q4_HEAD.replace("    ctx", "    model = copy.deepcopy(model).share_memory()\n    ctx")
            + _Q4_PROCS
            + _Q4_START_JOIN,
            "the model here did not change: the children wrote shared memory not this model's: share it "
            "before they start",
        ),
        # round 5's finding: each child shares its own copy-on-write copy, after the fork
        (
            _Q4_HEAD + _Q4_PROCS.replace("target=work", "target=lambda m: work(m.share_memory())") + _Q4_START_JOIN,
            "the model here did not change: the children wrote shared memory not this model's",
        ),
        # calls the worker itself instead of starting processes
        (
            "def run_in_forks(model, work, processes):\n"
            "    model.share_memory()\n"
            "    for _ in range(processes):\n"
            "        work(model)",
            "`work` ran to its end in 0 child processes and 3 times here, in the parent",
        ),
        # the attack's findings: the parent runs `work` too, after its children (the model's or copies given to them)
        (
            _Q4_HEAD.replace("    ctx", "    model.share_memory()\n    ctx")
            + _Q4_PROCS
            + _Q4_START_JOIN
            + "    for _ in range(processes):\n        work(model)",
            "`work` ran to its end in 3 child processes and 3 times here, in the parent; expected 3 children, none",
        ),
        (
            "import copy\n\n"
            + _Q4_HEAD
            + _Q4_PROCS.replace("args=(model,)", "args=(copy.deepcopy(model),)")
            + _Q4_START_JOIN
            + "    for _ in range(processes):\n        work(model)",
            "`work` ran to its end in 3 child processes and 3 times here, in the parent",
        ),
    ),
}

#: Right answers other than the solutions, in forms the checker must accept too.
RIGHT_ANSWERS: dict[int, tuple[str, ...]] = {
    1: (
        # rows without repeats from the rank's generator, the loss as a module, a report at the end
        "import torch\nfrom torch import nn\n\n\n"
        "def hogwild_worker(rank, model, x, y, steps, lr):\n"
        "    g = torch.Generator()\n"
        "    g.manual_seed(1000 + rank)\n"
        "    opt = torch.optim.SGD(model.parameters(), lr=lr)\n"
        "    loss_fn = nn.CrossEntropyLoss()\n"
        "    for _ in range(steps):\n"
        "        idx = torch.randperm(len(x), generator=g)[:32]\n"
        "        opt.zero_grad(set_to_none=False)\n"
        "        loss_fn(model(x[idx]), y[idx]).backward()\n"
        "        opt.step()\n"
        "    with torch.no_grad():\n"
        "        print('loss on all rows:', loss_fn(model(x), y).item())",
        # SGD written out; the batch's rows sorted; y picked by the same rows as x
        "import torch\nimport torch.nn.functional as F\n\n\n"
        "def hogwild_worker(rank, model, x, y, steps, lr):\n"
        "    g = torch.Generator().manual_seed(rank)\n"
        "    for _ in range(steps):\n"
        "        idx = torch.randint(len(x), (32,), generator=g).sort().values\n"
        "        xb, yb = x[idx], y[idx]\n"
        "        F.cross_entropy(model(xb), yb).backward()\n"
        "        with torch.no_grad():\n"
        "            for p in model.parameters():\n"
        "                p -= lr * p.grad\n"
        "                p.grad = None",
        # round 4's borderline: a seed that is a function of the rank alone (0 for rank 0, 12345 for the others)
        _q1(".manual_seed(rank)", ".manual_seed(0 if rank == 0 else 12345)"),
    ),
    2: (
        _Q2_HEAD + _Q2_STOP + "        results.put((index, t.double().mean().item()))",
        "def consumer(tasks, results):\n"
        "    while (item := tasks.get(timeout=30)) is not None:\n"
        "        index, t = item\n"
        "        results.put([index, t.double().sum().item() / t.numel()])",
        # None put back for the other consumers (a common idiom), then return
        "def consumer(tasks, results):\n"
        "    while True:\n"
        "        item = tasks.get()\n"
        "        if item is None:\n"
        "            tasks.put(None)\n"
        "            return\n"
        "        results.put((item[0], float(item[1].double().mean())))",
        # the attack's finding: task_done() after each item, as a queue.Queue or JoinableQueue consumer does
        _Q2_HEAD
        + _Q2_STOP.replace("            return", "            tasks.task_done()\n            return")
        + "        results.put((index, t.double().mean().item()))\n        tasks.task_done()",
    ),
    3: (
        # the chunk by hand, as x.chunk cuts it (ceil(len / world_size) each)
        _Q3_HEAD
        + "    size = -(-len(x) // world_size)\n    out[rank] = x[rank * size : (rank + 1) * size].sum().item()",
        # fill_ on a view of out
        _Q3_HEAD
        + "    chunks = x.chunk(world_size)\n"
        + "    out[rank : rank + 1].fill_(chunks[rank].sum() if rank < len(chunks) else 0)",
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

#: Round 6's finding: torch seeded "for reproducibility" beside the rank's Generator (told the seed, not only the draw)
WRONG_ANSWERS[1] += (
    (
        _q1("    g = ", "    torch.manual_seed(rank)\n    g = "),
        "changed torch's global random state (a seed, or a draw without generator=)",
    ),
)

#: Round 7's findings: the mean rounded to 3 places (a mean of 1/3 now), float() of an int64 sum past 2**53, and the
#: no_grad note said only where more batches than steps reached the model
WRONG_ANSWERS[2] += (
    (
        "def consumer(tasks, results):\n"
        "    for index, t in iter(tasks.get, None):\n"
        "        results.put((index, round(t.double().mean().item(), 3)))",
        "(4, 0.333)",
    ),
)
WRONG_ANSWERS[3] += (
    (
        _Q3_HEAD + "    chunks = x.chunk(world_size)\n"
        "    out[rank] = float(chunks[rank].sum()) if rank < len(chunks) else 0",
        "the sums of x.chunk are [5, 33554434, 9007199254740993, 0]",
    ),
)
WRONG_ANSWERS[1] += ((_q1("range(steps)", "range(steps - 1)"), "rows of x; expected 5 of 32"),)

#: Round 9's findings: row 0 never drawn; two half-batch steps a step (told before to use no_grad(), which would stop
#: training); a forward with grad on for a logged loss is no batch (refused before)
WRONG_ANSWERS[1] += (
    (_q1("randint(0, len(x)", "randint(1, len(x)"), "never drew the first row, x[0]: draw from all len(x)"),
    (
        _q1(
            _Q1_STEP,
            "        for half in (slice(0, 16), slice(16, 32)):\n"
            "            loss = F.cross_entropy(model(x[idx][half]), y[idx][half])\n"
            "            opt.zero_grad()\n            loss.backward()\n            opt.step()\n",
        ),
        "gave `model` 10 batches of [16, 16, 16, 16, 16, 16, …] rows of x; expected 5 of 32",
    ),
)
RIGHT_ANSWERS[1] += (_Q1_RIGHT + "        print((model(x[idx]).argmax(1) == y[idx]).float().mean().item())\n",)
#: Round 9: a consumer that gives up after a get() timeout of 1 s (accepted before: the tasks came 1 s late)
WRONG_ANSWERS[2] += (
    (
        "import queue\n\n\ndef consumer(tasks, results):\n"
        "    while True:\n"
        "        try:\n"
        "            task = tasks.get(timeout=1.0)\n"
        "        except queue.Empty:\n"
        "            return\n"
        "        if task is None:\n"
        "            return\n"
        "        index, t = task\n"
        "        results.put((index, t.double().mean().item()))",
        "your consumer returned before None came (the tasks arrive while it runs): stop only at None",
    ),
)
#: Round 10: a logged loss over all of x with grad on, before the loop (refused before: told both ranks drew a batch)
RIGHT_ANSWERS[1] += (
    _q1("    for _ in range(steps):", "    start = F.cross_entropy(model(x), y).item()\n    for _ in range(steps):"),
)
