"""Chapter 09's typical wrong answers, by question number (see the package's docstring)."""

from helpers.exercises.solutions.ch09 import SOLUTIONS

from . import lines_of

_Q1 = SOLUTIONS[1]

_Q2_HEAD = "def partial_sum(rank, world_size, x, out):\n"
_Q3_HEAD = lines_of(SOLUTIONS[3], 1, 4) + lines_of(SOLUTIONS[3], 6, 6)  # the import, the def, the fork context
_Q3_PROCS = "    procs = [ctx.Process(target=work, args=(model,)) for _ in range(processes)]\n"
_Q3_START_JOIN = "    for p in procs:\n        p.start()\n    for p in procs:\n        p.join()\n"


#: Typical wrong answers to each question, by number, each with words its verdict must contain (the
#: message a learner who wrote it is told).
WRONG_ANSWERS: dict[int, tuple[tuple[str, str], ...]] = {
    1: (
        (  # each batch sent as it is: a new tensor, shared anew on its way
            "def produce(batches, tasks, free):\n    for index, batch in enumerate(batches):\n"
            "        tasks.put((index, batch))\n    tasks.put(None)",
            "batch 0 went out in a tensor of its own, shared anew: copy it into a buffer from free",
        ),
        (  # the two buffers taken once and used in turn: the second round refills one the consumer still reads
            "def produce(batches, tasks, free):\n    buffers = [free.get(), free.get()]\n"
            "    for index, batch in enumerate(batches):\n        buffer = buffers[index % 2]\n"
            "        buffer.copy_(batch)\n        tasks.put((index, buffer))\n    tasks.put(None)",
            "batch 2 went out in the buffer of batch 0, not yet back on free: a consumer may read it",
        ),
        (  # put first, filled after
            _Q1.replace(
                "        buffer.copy_(batch)  # in place: the buffer's shared memory, shared once\n", ""
            ).replace(
                "        tasks.put((index, buffer))\n",
                "        tasks.put((index, buffer))\n        buffer.copy_(batch)\n",
            ),
            "batch 0 went out holding [0.0, 0.0, 0.0], not its values [1.0, 2.0, 3.0]",
        ),
        (
            _Q1.replace("    tasks.put(None)  # the consumer stops here", ""),
            "your producer must put None on tasks once",
        ),
        (  # a new buffer each time, with the batch's values: a new tensor shared anew, as the batch itself would be
            _Q1.replace(
                "        buffer.copy_(batch)  # in place: the buffer's shared memory, shared once\n",
                "        buffer = batch.clone()\n",
            ),
            "batch 0 went out in a tensor of its own, shared anew",
        ),
        (  # a new shared buffer whenever none is free: a slow consumer gets batches shared anew
            "import torch\n\n\ndef produce(batches, tasks, free):\n    for index, batch in enumerate(batches):\n"
            "        buffer = torch.empty_like(batch).share_memory_() if free.empty() else free.get()\n"
            "        buffer.copy_(batch)\n        tasks.put((index, buffer))\n    tasks.put(None)",
            "batch 2 went out in a tensor of its own, shared anew",
        ),
        (  # a short wait for a free buffer, then a batch skipped: a consumer slower than that loses batches
            "import queue\n\n\ndef produce(batches, tasks, free):\n    for index, batch in enumerate(batches):\n"
            "        try:\n            buffer = free.get(timeout=0.01)\n"
            "        except queue.Empty:\n            continue\n"
            "        buffer.copy_(batch)\n        tasks.put((index, buffer))\n    tasks.put(None)",
            "the consumer got batches [0, 1, 3]; expected each of 0 to 4 once",
        ),
        (  # every batch sent twice
            _Q1.replace(
                "    for index, batch in enumerate(batches):\n", "    for index, batch in [*enumerate(batches)] * 2:\n"
            ),
            "the consumer got batches [0, 0, 1, 1, 2, 2, 3, 3, 4, 4]; expected each of 0 to 4 once",
        ),
        (  # the buffer pointed at the batch: nothing copied, the batch itself shared anew on its way
            _Q1.replace("buffer.copy_(batch)", "buffer.set_(batch)"),
            "batch 0 went out in a tensor of its own, shared anew",
        ),
        (  # None only after a last batch: with no batches the consumer waits for ever
            _Q1.replace(
                "        tasks.put((index, buffer))\n",
                "        tasks.put((index, buffer))\n"
                "        if index == len(batches) - 1:\n            tasks.put(None)\n",
            ).replace("    tasks.put(None)  # the consumer stops here", ""),
            "your producer sent nothing on tasks",
        ),
        (
            _Q1.replace("(index, buffer)", "buffer"),
            "tensor of shape (3,) on cpu on tasks; put (index, buffer) pairs, then None",
        ),
    ),
    2: (
        # an integer x summed in float32 (accepted before: the integer case's sums were small)
        (
            "def partial_sum(rank, world_size, x, out):\n"
            "    chunks = x.chunk(world_size)\n"
            "    out[rank] = chunks[rank].float().sum() if rank < len(chunks) else 0",
            "out became [5, 33554432, 9007199254740992, 0]; the sums of x.chunk are [5, 33554434, 9007199254740993, 0]",
        ),
        # round 3's finding: the chunk summed in float16 (it overflows on the integer case; 3012.5 is not a float16)
        (
            _Q2_HEAD + "    chunks = x.chunk(world_size)\n"
            "    out[rank] = chunks[rank].half().sum() if rank < len(chunks) else 0",
            "; the sums of x.chunk are [5, 33554434, 9007199254740993, 0]",  # inf as an int64 differs by CPU
        ),
        # the attack's finding: x.chunk gives fewer chunks than world_size when x is short (the old solution)
        (
            _Q2_HEAD + "    out[rank] = x.chunk(world_size)[rank].sum()",
            "Your `partial_sum` raised IndexError (line 2 of partial_sum_answer.py): tuple index out of range",
        ),
        # the attack's findings: a rank without a chunk writes nothing; += where out already held something
        (
            _Q2_HEAD
            + "    chunks = x.chunk(world_size)\n    if rank < len(chunks):\n        out[rank] = chunks[rank].sum()",
            "Run here, each rank alone on its own out, for ranks 0 to 3 with x = [7, -2, 33554433, 1, "
            "9007199254740993] and "
            "out filled with -1, out became [5, 33554434, 9007199254740993, -1]; the sums of x.chunk are [5, "
            "33554434, 9007199254740993, 0] (0 for a rank without a chunk)",
        ),
        (
            _Q2_HEAD
            + "    chunks = x.chunk(world_size)\n    if rank < len(chunks):\n        out[rank] += chunks[rank].sum()",
            "out filled with -1, out became [5.0, 21.0, 16.0]; the sums of x.chunk are [6.0, 22.0, 17.0]",
        ),
        # chunks of len(x) // world_size: too short when the size does not divide
        (
            _Q2_HEAD + "    size = len(x) // world_size\n    out[rank] = x[rank * size : (rank + 1) * size].sum()",
            "Run here, each rank alone on its own out, for ranks 0 to 2 with x = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, "
            "7.0, 8.0, 9.0] and out filled with -1, out became [3.0, 12.0, 21.0]; the sums of x.chunk are [6.0, 22.0, "
            "17.0]",
        ),
        # round 4's finding: chunks of len(x) // world_size + 1, right where the size does not divide (the ceiling)
        (
            _Q2_HEAD + "    size = len(x) // world_size + 1\n    out[rank] = x[rank * size : (rank + 1) * size].sum()",
            "Run in child processes on one out, for ranks 0 to 1 with x = [3001.5, 11.0, 2.0, 8.0] and out filled with "
            "-1, out became [3014.5, 8.0]; the sums of x.chunk are [3012.5, 10.0]",
        ),
        (
            _Q2_HEAD + "    out[rank] = x.tensor_split(world_size)[rank].sum()",
            "out became [6.0, 15.0, 24.0]; the sums of x.chunk are [6.0, 22.0, 17.0]",
        ),
        (
            _Q2_HEAD + "    out[rank] = x.sum()",
            "out became [45.0, 45.0, 45.0]; the sums of x.chunk are [6.0, 22.0, 17.0]",
        ),
        (_Q2_HEAD + "    out[rank] = x[rank].sum()", "out became [0.0, 1.0, 2.0]"),
        (
            _Q2_HEAD + "    out = x.chunk(world_size)[rank].sum()",
            "out became [-1.0, -1.0, -1.0]; the sums of x.chunk are",
        ),
        (
            _Q2_HEAD + "    return x.chunk(world_size)[rank].sum()",
            "out became [-1.0, -1.0, -1.0]; the sums of x.chunk are [6.0, 22.0, 17.0]",
        ),
        (
            _Q2_HEAD
            + "    chunks = x.chunk(world_size)\n    out[rank] = chunks[rank].sum() if rank < len(chunks) else 0\n"
            "    x.zero_()",
            "your partial_sum changed x",
        ),
        # the attack's findings: a rank reading the others' slots (right only when they ran first), a rank doing
        # the others' work (rank 0 all, or each rank its own and the later ones')
        (
            _Q2_HEAD + "    end = sum(len(c) for c in x.chunk(world_size)[: rank + 1])\n"
            "    out[rank] = x[:end].sum() - out[:rank].sum()",
            "out filled with -1, out became [6.0, 29.0, 47.0]; the sums of x.chunk are [6.0, 22.0, 17.0]",
        ),
        (
            _Q2_HEAD + "    if rank == 0:\n        chunks = x.chunk(world_size)\n        for r in range(world_size):\n"
            "            out[r] = chunks[r].sum() if r < len(chunks) else 0",
            "out filled with -1: rank 0 changed out[1], out[2] too; a rank writes only out[rank]",
        ),
        (
            _Q2_HEAD + "    chunks = x.chunk(world_size)\n    for r in range(rank, world_size):\n"
            "        out[r] = chunks[r].sum() if r < len(chunks) else 0",
            "rank 0 changed out[1], out[2] too; a rank writes only out[rank]",
        ),
    ),
    3: (
        # the launcher as given: each forked child trains a private copy
        (_Q3_HEAD + _Q3_PROCS + _Q3_START_JOIN, "each forked child wrote its own copy-on-write copy"),
        # shares the model, but only after the children were forked
        (
            _Q3_HEAD + _Q3_PROCS + "    for p in procs:\n        p.start()\n    model.share_memory()\n"
            "    for p in procs:\n        p.join()",
            "the model here did not change",
        ),
        # the attack's finding: each child is joined before the next starts, so they run one after the other
        (
            _Q3_HEAD.replace("    ctx", "    model.share_memory()\n    ctx") + "    for _ in range(processes):\n"
            "        p = ctx.Process(target=work, args=(model,))\n        p.start()\n        p.join()",
            "the children ran `work` one after the other: start them all, then join them all",
        ),
        # shares first, but returns without waiting for the children
        (
            _Q3_HEAD.replace("    ctx", "    model.share_memory()\n    ctx") + "    for _ in range(processes):\n"
            "        ctx.Process(target=work, args=(model,)).start()",
            "returned while its children were still running: join() them all first",
        ),
        # two children, whatever `processes` says
        (
            _Q3_HEAD.replace("    ctx", "    model.share_memory()\n    ctx")
            + _Q3_PROCS.replace("range(processes)", "range(2)")
            + _Q3_START_JOIN,
            "`work` ran to its end in 2 child processes and 0 times here, in the parent; expected 3 children",
        ),
        # the attack's findings: one child; the weight shared, not the bias; a shared copy given to the children
        (
            _Q3_HEAD.replace("    ctx", "    model.share_memory()\n    ctx")
            + _Q3_PROCS.replace("range(processes)", "range(1)")
            + _Q3_START_JOIN,
            "`work` ran to its end in 1 child processes and 0 times here",
        ),
        (
            _Q3_HEAD.replace("    ctx", "    model.weight.share_memory_()\n    ctx") + _Q3_PROCS + _Q3_START_JOIN,
            "the model's bias did not change: share every parameter (model.share_memory())",
        ),
        (
            "import copy\n\n"
            + _Q3_HEAD.replace("    ctx", "    model = copy.deepcopy(model).share_memory()\n    ctx")
            + _Q3_PROCS
            + _Q3_START_JOIN,
            "the model here did not change: the children wrote shared memory not this model's: share it "
            "before they start",
        ),
        # round 5's finding: each child shares its own copy-on-write copy, after the fork
        (
            _Q3_HEAD + _Q3_PROCS.replace("target=work", "target=lambda m: work(m.share_memory())") + _Q3_START_JOIN,
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
            _Q3_HEAD.replace("    ctx", "    model.share_memory()\n    ctx")
            + _Q3_PROCS
            + _Q3_START_JOIN
            + "    for _ in range(processes):\n        work(model)",
            "`work` ran to its end in 3 child processes and 3 times here, in the parent; expected 3 children, none",
        ),
        (
            "import copy\n\n"
            + _Q3_HEAD
            + _Q3_PROCS.replace("args=(model,)", "args=(copy.deepcopy(model),)")
            + _Q3_START_JOIN
            + "    for _ in range(processes):\n        work(model)",
            "`work` ran to its end in 3 child processes and 3 times here, in the parent",
        ),
    ),
}

#: Right answers other than the solutions, in forms the checker must accept too.
RIGHT_ANSWERS: dict[int, tuple[str, ...]] = {
    1: (
        # a view of the buffer sent, the copy through indexing
        _Q1.replace("buffer.copy_(batch)", "buffer[...] = batch").replace("(index, buffer)", "(index, buffer[:])"),
        # waiting by polling: empty() until a buffer is free, then get_nowait()
        "import time\n\n\n"
        + _Q1.replace("free.get()", "wait_for(free)")
        + "\n\n\ndef wait_for(free):\n    while free.empty():\n        time.sleep(0.001)\n    return free.get_nowait()",
        # a queue's other methods: put_nowait, and close after the last item
        _Q1.replace("tasks.put(", "tasks.put_nowait(").replace(
            "    tasks.put_nowait(None)", "    tasks.put(None)\n    tasks.close()"
        ),
        # both buffers taken, then sent in the other order
        "def produce(batches, tasks, free):\n    for start in range(0, len(batches), 2):\n"
        "        pair = list(enumerate(batches))[start : start + 2]\n"
        "        buffers = [free.get() for _ in pair]\n"
        "        for (index, batch), buffer in zip(pair, reversed(buffers)):\n"
        "            buffer.copy_(batch)\n            tasks.put((index, buffer))\n    tasks.put(None)",
        # the batches taken from an iterator, the buffer's get with a timeout
        _Q1.replace("free.get()", "free.get(timeout=60)").replace("enumerate(batches)", "enumerate(iter(batches))"),
    ),
    2: (
        # the chunk by hand, as x.chunk cuts it (ceil(len / world_size) each)
        _Q2_HEAD
        + "    size = -(-len(x) // world_size)\n    out[rank] = x[rank * size : (rank + 1) * size].sum().item()",
        # fill_ on a view of out
        _Q2_HEAD
        + "    chunks = x.chunk(world_size)\n"
        + "    out[rank : rank + 1].fill_(chunks[rank].sum() if rank < len(chunks) else 0)",
    ),
    3: (
        # the model given by keyword, the children joined with a time limit
        _Q3_HEAD.replace("    ctx", "    model.share_memory()\n    ctx")
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
WRONG_ANSWERS[2] += (
    (
        _Q2_HEAD + "    chunks = x.chunk(world_size)\n"
        "    out[rank] = float(chunks[rank].sum()) if rank < len(chunks) else 0",
        "the sums of x.chunk are [5, 33554434, 9007199254740993, 0]",
    ),
)
