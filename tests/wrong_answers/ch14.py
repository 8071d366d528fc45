"""Chapter 14's typical wrong answers, by question number (see the package's docstring)."""

from helpers.exercises.solutions.ch14 import SOLUTIONS

from . import lines_of

_Q1_HEAD = lines_of(SOLUTIONS[1], 1, 1)
_Q2_HEAD = lines_of(SOLUTIONS[2], 1, 3)
_Q2_STEP = lines_of(SOLUTIONS[2], 4, 8)
#: The words of question 2's pass on the CPU.
_PASS = "train(...) on cpu"


#: Typical wrong answers to each question, by number, each with words its verdict must contain (the
#: message a learner who wrote it is told).
WRONG_ANSWERS: dict[int, tuple[tuple[str, str], ...]] = {
    1: (
        (
            _Q1_HEAD
            + "    covered = sum(min(e, end_ms) - max(s, start_ms) for s, e in busy if e > start_ms and s < end_ms)\n"
            "    return 1 - covered / (end_ms - start_ms)",
            "counted twice",
        ),
        (
            _Q1_HEAD + "    covered, reach = 0.0, float('-inf')\n"
            "    for s, e in sorted(busy):\n"
            "        if e > reach:\n"
            "            covered += e - max(s, reach)\n"
            "            reach = e\n"
            "    return 1 - covered / (end_ms - start_ms)",
            "clip each pair",
        ),
        (
            _Q1_HEAD + "    covered, reach = 0.0, start_ms\n"
            "    for s, e in sorted((max(s, start_ms), min(e, end_ms)) for s, e in busy):\n"
            "        if e > reach:\n"
            "            covered, reach = covered + e - max(s, reach), e\n"
            "    return covered / (end_ms - start_ms)",
            "busy share",
        ),
        (
            _Q1_HEAD + "    covered, reach = 0.0, start_ms\n"
            "    for s, e in sorted((max(s, start_ms), min(e, end_ms)) for s, e in busy):\n"
            "        if e > reach:\n"
            "            covered, reach = covered + e - max(s, reach), e\n"
            "    return 100 * (1 - covered / (end_ms - start_ms))",
            "percentage",
        ),
        (
            _Q1_HEAD + "    covered, reach = 0.0, start_ms\n"
            "    for s, e in [(max(s, start_ms), min(e, end_ms)) for s, e in busy]:  # not sorted\n"
            "        if e > max(s, reach):\n"
            "            covered, reach = covered + e - max(s, reach), e\n"
            "    return 1 - covered / (end_ms - start_ms)",
            "idle_share([(2, 5), (1, 3), (7, 8)], 0, 12) returned 0.666667; expected 0.583333",
        ),
        (
            _Q1_HEAD + "    covered, reach = 0.0, start_ms\n"
            "    for s, e in sorted((max(s, start_ms), min(e, end_ms)) for s, e in busy):\n"
            "        if e > reach:  # a pair wholly after the window, clipped, ends before it starts\n"
            "            covered, reach = covered + e - max(s, reach), e\n"
            "    return 1 - covered / (end_ms - start_ms)",
            "idle_share([(12, 15), (-5, -1), (3, 4), (4, 6)], 0, 10) returned",
        ),
        (
            _Q1_HEAD + "    busy.sort()\n    covered, reach = 0.0, start_ms\n"
            "    for s, e in busy:\n"
            "        s, e = max(s, start_ms), min(e, end_ms)\n"
            "        if e > max(s, reach):\n"
            "            covered, reach = covered + e - max(s, reach), e\n"
            "    return 1 - covered / (end_ms - start_ms)",
            "changed its arguments",
        ),
    ),
    2: (
        (
            _Q2_HEAD + _Q2_STEP + "        losses.append(loss.item())\n"
            "        correct += (out.argmax(dim=1) == y).sum()\n"
            "    return losses, int(correct)",
            f"{_PASS} made 267 tensor calls and 7 reads ['.item()', 'int()'] for 5220 samples in 6 steps",
        ),
        (
            _Q2_HEAD + _Q2_STEP + "        losses.append(loss.detach())\n"
            "        pred = out.argmax(dim=1)\n"
            "        for i in range(len(y)):\n"
            "            correct += int(pred[i] == y[i])\n"
            "    return torch.stack(losses).tolist(), correct",
            "tensor calls and 5221 reads ['.tolist()', 'int()'] for 5220 samples in 6 steps",
        ),
        (  # a Python loop over the predictions that reads nothing: a tensor call a sample
            _Q2_HEAD + _Q2_STEP + "        losses.append(loss.detach())\n"
            "        for p, t in zip(out.argmax(dim=1), y):\n"
            "            correct = correct + (p == t)\n"
            "    return torch.stack(losses).tolist(), int(correct)",
            "tensor calls and 2 reads ['.tolist()', 'int()'] for 5220 samples in 6 steps; fixed: under one a sample",
        ),
        (
            _Q2_HEAD + "        out = model(x)\n"
            "        loss = torch.nn.functional.cross_entropy(out, y)\n"
            "        loss.backward()\n"
            "        opt.step()\n"
            "        losses.append(loss.detach())\n"
            "        correct += (out.argmax(dim=1) == y).sum()\n"
            "    return torch.stack(losses).tolist(), int(correct)",
            f"{_PASS} returned ([1.47314, 1.45114, 1.41847, 1.3648, 1.30197, 1.2653], 1503); the slow loop returns "
            "(losses, correct) = ([1.47314, 1.45114, 1.43789, 1.41895, 1.39431, 1.40215], 1171)",
        ),
        (
            _Q2_HEAD + _Q2_STEP + "        losses.append(loss.detach())\n"
            "        correct += (out.argmax(dim=1) == y).float().mean()\n"
            "    return torch.stack(losses).tolist(), float(correct)",
            "1.40215], 1.39621); the slow loop returns (losses, correct) = ([1.47314",
        ),
        (  # the count made from the share right in a batch, as if every batch were as long as the first
            _Q2_HEAD + _Q2_STEP + "        losses.append(loss.detach())\n"
            "        correct += (out.argmax(dim=1) == y).float().mean() * len(batches[0][0])\n"
            "    return torch.stack(losses).tolist(), int(correct)",
            "1.40215], 1429); the slow loop returns",
        ),
        (  # a copy to the host every step is a read every step, whatever reads the copies later
            _Q2_HEAD + _Q2_STEP + "        losses.append(loss.detach().cpu())\n"
            "        correct += (out.argmax(dim=1) == y).sum()\n"
            "    return torch.stack(losses).tolist(), int(correct)",
            "8 reads ['.cpu()', '.tolist()', 'int()']",
        ),
        (
            _Q2_HEAD + _Q2_STEP + "        losses.append(float(loss.detach().cpu().numpy()))\n"
            "        correct += (out.argmax(dim=1) == y).sum()\n"
            "    return losses, int(correct)",
            "7 reads ['.cpu()', 'int()']",
        ),
        (  # .tolist() of a 0-d tensor is a number, read as .item() reads one
            _Q2_HEAD + _Q2_STEP + "        losses.append(loss.tolist())\n"
            "        correct += (out.argmax(dim=1) == y).sum()\n"
            "    return losses, int(correct)",
            "7 reads ['.tolist()', 'int()'] for 5220 samples in 6 steps",
        ),
        (  # right results, no read a step and no loop over the samples, but work for nothing every step
            _Q2_HEAD + "        with torch.no_grad():\n"
            "            for _ in range(40):\n"
            "                model(x)\n" + _Q2_STEP + "        losses.append(loss.detach())\n"
            "        correct += (out.argmax(dim=1) == y).sum()\n"
            "    return torch.stack(losses).tolist(), int(correct)",
            "ms of CPU, the slow one",
        ),
        (
            _Q2_HEAD + _Q2_STEP + "        losses.append(float(loss))\n"
            "        correct += (out.argmax(dim=1) == y).sum()\n"
            "    return losses, int(correct)",
            "7 reads ['float()', 'int()']",
        ),
        (  # a progress line every step
            _Q2_HEAD + _Q2_STEP + "        line = f'loss {loss:.4f}'\n"
            "        losses.append(loss.detach())\n"
            "        correct += (out.argmax(dim=1) == y).sum()\n"
            "    return torch.stack(losses).tolist(), int(correct)",
            "8 reads ['.__format__()', '.tolist()', 'int()']",
        ),
        (
            _Q2_HEAD
            + "        x -= x.mean(dim=0)  # centred in place\n"
            + _Q2_STEP
            + "        losses.append(loss.detach())\n"
            "        correct += (out.argmax(dim=1) == y).sum()\n"
            "    return torch.stack(losses).tolist(), int(correct)",
            "and changed its arguments (the batches); the slow loop returns",
        ),
    ),
}

#: Right answers other than the solutions, written as a learner could: other spellings, types and orders.
RIGHT_ANSWERS: dict[int, tuple[str, ...]] = {
    1: (
        # a boolean mask over a fine grid would be approximate; this one marks the covered stretches exactly
        "def idle_share(busy, start_ms, end_ms):\n"
        "    import torch\n"
        "    edges = sorted({start_ms, end_ms, *(min(max(t, start_ms), end_ms) for p in busy for t in p)})\n"
        "    idle = 0.0\n"
        "    for a, b in zip(edges, edges[1:]):\n"
        "        mid = (a + b) / 2\n"
        "        if not any(s <= mid < e for s, e in busy):\n"
        "            idle += b - a\n"
        "    return torch.tensor(idle / (end_ms - start_ms))",
    ),
    2: (
        # the losses and the count kept in tensors and returned as they are: no read at all
        "def train(model, opt, batches):\n"
        "    losses = torch.zeros(len(batches))\n"
        "    correct = torch.zeros((), dtype=torch.long)\n"
        "    for step, (x, y) in enumerate(batches):\n"
        "        opt.zero_grad(set_to_none=True)\n"
        "        out = model(x)\n"
        "        loss = torch.nn.functional.cross_entropy(out, y)\n"
        "        loss.backward()\n"
        "        opt.step()\n"
        "        losses[step] = loss.detach()\n"
        "        correct += out.argmax(1).eq(y).sum()\n"
        "    return losses, correct",
        # one copy to the host for the losses, read there; the count read with .item()
        _Q2_HEAD + _Q2_STEP + "        losses.append(loss.detach())\n"
        "        correct += (out.argmax(dim=1) == y).sum()\n"
        "    return torch.stack(losses).cpu().numpy().tolist(), correct.item()",
        "import numpy as np\n\n" + _Q2_HEAD + _Q2_STEP + "        losses.append(loss.detach())\n"
        "        with torch.no_grad():\n"
        "            correct += (out.argmax(dim=1) == y).sum()\n"
        "    return np.asarray(torch.stack(losses)), int(correct)",
        # a list of the losses as 0-d tensors, and the count as a tensor
        _Q2_HEAD + _Q2_STEP + "        losses.append(loss.detach())\n"
        "        correct += (out.argmax(dim=1) == y).sum()\n"
        "    return losses, correct",
    ),
}
