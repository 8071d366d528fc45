"""Chapter 14's typical wrong answers, by question number (see the package's docstring)."""

from helpers.exercises.solutions.ch14 import SOLUTIONS

from . import OWN_SEQUENCE, lines_of

_Q1_HEAD = lines_of(SOLUTIONS[1], 1, 1)
_Q1_WALK = lines_of(SOLUTIONS[1], 1, 5)  # the covered milliseconds, as the solution adds them up
_Q2_HEAD = lines_of(SOLUTIONS[2], 1, 3)
_Q2_STEP = lines_of(SOLUTIONS[2], 4, 8)
_Q2_END = lines_of(SOLUTIONS[2], 11, 11)  # the losses and the count read once, at the end
#: Question 1's window shorter than a millisecond; the words of question 2's pass on the CPU.
_SHORT = "idle_share([(0.1, 0.3), (0.2417, 0.4523)], 0.0, 0.7)"
_PASS = "train(...) on cpu"
TRAIN = "def train(model, opt, batches):\n"


#: Typical wrong answers to each question, by number, each with words its verdict must contain (the
#: message a learner who wrote it is told).
WRONG_ANSWERS: dict[int, tuple[tuple[str, str], ...]] = {
    1: (
        (  # the covered stretch starting at 0, not at start_ms: a pair below 0 is lost
            _Q1_WALK.replace("reach = 0.0, start_ms", "reach = 0.0, 0.0")
            + "    return 1 - covered / (end_ms - start_ms)",
            "(-4, -3)], -5, 10) returned 0.733333; expected 0.666667",
        ),
        (
            _Q1_HEAD
            + "    covered = sum(min(e, end_ms) - max(s, start_ms) for s, e in busy if e > start_ms and s < end_ms)\n"
            "    return 1 - covered / (end_ms - start_ms)",
            "idle_share([(2, 5), (1, 3), (7, 8)], 0.0, 12) returned 0.5; expected 0.583333",
        ),
        (
            _Q1_HEAD + "    covered, reach = 0.0, float('-inf')\n"
            "    for s, e in sorted(busy):\n"
            "        if e > reach:\n"
            "            covered += e - max(s, reach)\n"
            "            reach = e\n"
            "    return 1 - covered / (end_ms - start_ms)",
            "idle_share([(9, 12), (-2, 1), (15, 16)], 0.0, 10) returned 0.3; expected 0.8",
        ),
        (
            _Q1_WALK + "    return covered / (end_ms - start_ms)",
            "idle_share([(2, 5), (1, 3), (7, 8)], 0.0, 12) returned 0.416667; expected 0.583333",
        ),
        (
            _Q1_WALK + "    return 100 * (1 - covered / (end_ms - start_ms))",
            "idle_share([(2, 5), (1, 3), (7, 8)], 0.0, 12) returned 58.3333; expected 0.583333",
        ),
        (  # idle milliseconds, not a share: no slip the chapter teaches, the values only
            _Q1_WALK + "    return end_ms - start_ms - covered",
            "idle_share([(2, 5), (1, 3), (7, 8)], 0.0, 12) returned 7; expected 0.583333",
        ),
        (  # merged against the previous pair's end, not the furthest end so far: two pairs inside a longer one
            _Q1_HEAD + "    covered, prev_end = 0.0, start_ms\n"
            "    for s, e in sorted((max(s, start_ms), min(e, end_ms)) for s, e in busy):\n"
            "        covered += max(0.0, e - max(s, prev_end))\n"
            "        prev_end = e\n"
            "    return 1 - covered / (end_ms - start_ms)",
            "idle_share([(0.0, 4), (1, 2), (2.5, 3), (6, 7)], 0.0, 8) returned 0.3125; expected 0.375",
        ),
        (  # the gaps summed without clipping the running end: a pair past end_ms, then one wholly after
            _Q1_HEAD + "    t, idle = start_ms, 0.0\n"
            "    for s, e in sorted(busy):\n"
            "        if s > t:\n"
            "            idle += min(s, end_ms) - t\n"
            "        t = max(t, e)\n"
            "    idle += max(0.0, end_ms - t)\n"
            "    return idle / (end_ms - start_ms)",
            "idle_share([(9, 12), (-2, 1), (15, 16)], 0.0, 10) returned 0.6; expected 0.8",
        ),
        (  # the walk started from the first pair: no pairs at all is an IndexError, said with the call
            _Q1_HEAD + "    busy = sorted(busy)\n"
            "    covered, reach = 0.0, max(busy[0][0], start_ms)\n"
            "    for s, e in busy:\n"
            "        covered += max(0.0, min(e, end_ms) - max(s, reach))\n"
            "        reach = max(reach, min(e, end_ms))\n"
            "    return 1 - covered / (end_ms - start_ms)",
            "idle_share([], 0.0, 4) raised IndexError (line 3 of your code): list index out of range",
        ),
        (  # the window's length taken from 0 when it starts before 0
            _Q1_WALK + "    return 1 - covered / (end_ms - max(start_ms, 0))",
            "idle_share([(6.5, 7), (5, 6), (5.5, 9), (-4, -3)], -5, 10) returned 0.5; expected 0.666667",
        ),
        (
            _Q1_HEAD + "    covered, reach = 0.0, start_ms\n"
            "    for s, e in [(max(s, start_ms), min(e, end_ms)) for s, e in busy]:  # not sorted\n"
            "        if e > max(s, reach):\n"
            "            covered, reach = covered + e - max(s, reach), e\n"
            "    return 1 - covered / (end_ms - start_ms)",
            "idle_share([(2, 5), (1, 3), (7, 8)], 0.0, 12) returned 0.666667; expected 0.583333",
        ),
        (
            _Q1_HEAD + "    covered, reach = 0.0, start_ms\n"
            "    for s, e in sorted((max(s, start_ms), min(e, end_ms)) for s, e in busy):\n"
            "        if e > reach:  # a pair wholly after the window, clipped, ends before it starts\n"
            "            covered, reach = covered + e - max(s, reach), e\n"
            "    return 1 - covered / (end_ms - start_ms)",
            "idle_share([(12, 15), (-5, -1), (3, 4), (4, 6)], 0.0, 10) returned",
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
        (  # the pairs cut to whole milliseconds (the attack: every end was a whole or half millisecond)
            _Q1_HEAD + "    covered, reach = 0.0, start_ms\n"
            "    for s, e in sorted((int(max(s, start_ms)), int(min(e, end_ms))) for s, e in busy):\n"
            "        covered += max(0.0, e - max(s, reach))\n"
            "        reach = max(reach, e)\n"
            "    return 1 - covered / (end_ms - start_ms)",
            f"{_SHORT} returned 1; expected 0.496714",
        ),
        (  # a slot a millisecond, busy when its start is: no window shorter than a slot
            _Q1_HEAD + "    slots = [start_ms + i for i in range(max(1, round(end_ms - start_ms)))]\n"
            "    idle = sum(1 for t in slots if not any(s <= t < e for s, e in busy))\n"
            "    return idle / len(slots)",
            f"{_SHORT} returned 1; expected 0.496714",
        ),
        (  # slots of 1 ms from int(start_ms): a window under 1 ms has none
            _Q1_HEAD + "    slots = range(int(start_ms), int(end_ms))\n"
            "    return sum(1 for t in slots if not any(s <= t < e for s, e in busy)) / len(slots)",
            f"{_SHORT} raised ZeroDivisionError (line 3 of your code): division by zero",
        ),
        (  # slots of half a millisecond, and of 10 µs: near, not exact
            _Q1_HEAD + "    n = round((end_ms - start_ms) / 0.5)\n"
            "    return sum(1 for i in range(n) if not any(s <= start_ms + 0.5 * i < e for s, e in busy)) / n",
            f"{_SHORT} returned 1; expected 0.496714",
        ),
        (
            _Q1_HEAD + "    n = round((end_ms - start_ms) / 0.01)\n"
            "    return sum(1 for i in range(n) if not any(s <= start_ms + 0.01 * i < e for s, e in busy)) / n",
            f"{_SHORT} returned 0.485714; expected 0.496714",
        ),
    ),
    2: (
        (
            _Q2_HEAD + _Q2_STEP + "        losses.append(loss.item())\n"
            "        correct += (out.argmax(dim=1) == y).sum()\n"
            "    return losses, int(correct)",
            "tensor calls and 7 reads ['.item()', 'int()'] for 5220 samples in 6 steps",
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
            "2 reads ['.tolist()', 'int()'] for 5220 samples in 6 steps; fixed: fewer calls than samples",
        ),
        (  # Python's sum() over the comparison: it iterates over the tensor, a tensor call an element
            _Q2_HEAD + _Q2_STEP + "        losses.append(loss.detach())\n"
            "        correct += sum(out.argmax(dim=1) == y)\n" + _Q2_END,
            "tensor calls and 2 reads ['.tolist()', 'int()'] for 5220 samples in 6 steps; fixed: "
            "fewer calls than samples, 2 reads",
        ),
        (  # torch.tensor() of a list of 0-d tensors reads each one to the host, inside one call
            _Q2_HEAD + _Q2_STEP + "        losses.append(loss.detach())\n"
            "        correct += (out.argmax(dim=1) == y).sum()\n"
            "    return torch.tensor(losses).tolist(), int(correct)",
            "tensor calls and 8 reads ['.tolist()', 'int()', 'torch.tensor(a sequence of tensors)']",
        ),
        (  # the same from a tuple (a read the checker of chapter 04 missed in round 16)
            _Q2_HEAD + _Q2_STEP + "        losses.append(loss.detach())\n"
            "        correct += (out.argmax(dim=1) == y).sum()\n"
            "    return torch.as_tensor(tuple(losses)).tolist(), int(correct)",
            "tensor calls and 8 reads ['.tolist()', 'int()', 'torch.as_tensor(a sequence of tensors)']",
        ),
        (  # the count as a float32 share of hits times the batch's length, then cut by int()
            _Q2_HEAD + _Q2_STEP + "        losses.append(loss.detach())\n"
            "        correct += (out.argmax(dim=1) == y).float().mean() * len(y)\n" + _Q2_END,
            "train(...) on cpu on one batch of 594 samples returned ([1.45233], 148); the slow loop returns "
            "([1.45233], 149)",
        ),
        (  # torch.stack() of no losses: the pass over no batches
            _Q2_HEAD + _Q2_STEP + "        losses.append(loss.detach())\n"
            "        correct += (out.argmax(dim=1) == y).sum()\n"
            "    return torch.stack(losses).tolist(), int(correct)",
            "train(...) on cpu on no batches raised RuntimeError (line 11 of your code): stack expects a non-empty",
        ),
        (  # evaluation mode: no dropout, so other losses
            TRAIN + "    model.eval()\n" + lines_of(SOLUTIONS[2], 2, 10) + _Q2_END,
            "returned ([1.46573, 1.4373, 1.40535, 1.37591, 1.35075, 1.32918], 1433); the slow loop returns ([1.47314, "
            "1.43987, 1.41185, 1.39401, 1.36994, 1.33507], 1432)",
        ),
        (
            _Q2_HEAD + "        out = model(x)\n"
            "        loss = torch.nn.functional.cross_entropy(out, y)\n"
            "        loss.backward()\n"
            "        opt.step()\n"
            "        losses.append(loss.detach())\n"
            "        correct += (out.argmax(dim=1) == y).sum()\n"
            "    return torch.stack(losses).tolist(), int(correct)",
            f"{_PASS} returned ([1.47314, 1.47024, 1.42548, 1.75683, 1.95032, 4.0751], 1380); the slow loop returns "
            "([1.47314, 1.43987, 1.41185, 1.39401, 1.36994, 1.33507], 1432)",
        ),
        (  # the gradients zeroed after the step: the model comes with gradients (as the chapter's does after
            # train_step), which the first step applies too
            _Q2_HEAD + "        out = model(x)\n"
            "        loss = torch.nn.functional.cross_entropy(out, y)\n"
            "        loss.backward()\n"
            "        opt.step()\n"
            "        opt.zero_grad()\n"
            "        losses.append(loss.detach())\n"
            "        correct += (out.argmax(dim=1) == y).sum()\n" + _Q2_END,
            f"{_PASS} returned ([1.47314, 1.47024, 1.4249, 1.44019, 1.40222, 1.34189], 1354); the slow loop returns "
            "([1.47314, 1.43987, 1.41185, 1.39401, 1.36994, 1.33507], 1432)",
        ),
        (  # round 6's findings: an optimizer of its own, or steps by hand: `opt` comes with momentum from a step
            _Q2_HEAD.replace("    losses", "    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n    losses")
            + _Q2_STEP
            + "        losses.append(loss.detach())\n"
            "        correct += (out.argmax(dim=1) == y).sum()\n" + _Q2_END,
            f"{_PASS} returned ([1.47314, 1.44721, 1.43858, 1.43132, 1.40354, 1.41939], 1256); the slow",
        ),
        (
            _Q2_HEAD
            + _Q2_STEP.replace(
                "        opt.step()\n", "        for p in model.parameters():\n            p.data -= 0.1 * p.grad\n"
            )
            + "        losses.append(loss.detach())\n"
            "        correct += (out.argmax(dim=1) == y).sum()\n" + _Q2_END,
            f"{_PASS} returned ([1.47314, 1.44721, 1.43858, 1.43132, 1.40354, 1.41939], 1256); the slow",
        ),
        (  # the losses as one tensor (or array): the slow loop's: a list of floats, read at the end
            _Q2_HEAD + _Q2_STEP + "        losses.append(loss.detach())\n"
            "        correct += (out.argmax(dim=1) == y).sum()\n"
            "    return (torch.stack(losses) if losses else torch.zeros(0)), correct",
            f"{_PASS} returned (a torch.float32 tensor of shape (6,) on cpu, a torch.int64 tensor of shape () on cpu)",
        ),
        (
            "import numpy as np\n\n" + _Q2_HEAD + _Q2_STEP + "        losses.append(loss.detach())\n"
            "        correct += (out.argmax(dim=1) == y).sum()\n"
            "    return np.asarray(torch.stack(losses) if losses else []), int(correct)",
            f"{_PASS} returned (array([1.4731445, ",
        ),
        (
            _Q2_HEAD + _Q2_STEP + "        losses.append(loss.detach())\n"
            "        correct += (out.argmax(dim=1) == y).float().mean()\n"
            "    return torch.stack(losses).tolist(), float(correct)",
            "1.33507], 1.7684); the slow loop returns ([1.47314",
        ),
        (  # the count made from the share right in a batch, as if every batch were as long as the first
            _Q2_HEAD + _Q2_STEP + "        losses.append(loss.detach())\n"
            "        correct += (out.argmax(dim=1) == y).float().mean() * len(batches[0][0])\n"
            "    return torch.stack(losses).tolist(), int(correct)",
            "1.33507], 1810); the slow loop returns",
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
        (  # right results, no read a step and no loop over the samples, but work for nothing every step: 50 products,
            # 2.4 times the slow loop's CPU time on a loaded machine (10 once came out below the bound of 0.8 there)
            _Q2_HEAD + "        with torch.no_grad():\n"
            "            for _ in range(50):\n"
            "                x @ x.T\n" + _Q2_STEP + "        losses.append(loss.detach())\n"
            "        correct += (out.argmax(dim=1) == y).sum()\n" + _Q2_END,
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
            "8 reads ['.tolist()', 'format()', 'int()']",
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
        # the solution's walk unclamped: -2.2e-16 where abutting pairs cover the window exactly (float rounding)
        _Q1_WALK + "    return 1 - covered / (end_ms - start_ms)",
    ),
    2: (
        # one copy to the host for the losses, read there; the count read with .item()
        _Q2_HEAD + _Q2_STEP + "        losses.append(loss.detach())\n"
        "        correct += (out.argmax(dim=1) == y).sum()\n"
        "    return (torch.stack(losses).cpu().numpy().tolist(), correct.item()) if batches else ([], 0)",
        "import numpy as np\n\n" + _Q2_HEAD + _Q2_STEP + "        losses.append(loss.detach())\n"
        "        with torch.no_grad():\n"
        "            correct += (out.argmax(dim=1) == y).sum()\n"
        "    return list(np.asarray(torch.stack(losses) if losses else [])), int(correct)",
        # the gradients zeroed by hand, before each backward, as zeros
        _Q2_HEAD + "        for p in model.parameters():\n"
        "            if p.grad is not None:\n"
        "                p.grad.zero_()\n"
        "        out = model(x)\n"
        "        loss = torch.nn.functional.cross_entropy(out, y)\n"
        "        loss.backward()\n"
        "        opt.step()\n"
        "        losses.append(loss.detach())\n"
        "        correct += (out.argmax(dim=1) == y).sum()\n" + _Q2_END,
        # the losses kept without .detach(): the same results, each loss holding on to its graph until the end
        _Q2_HEAD + _Q2_STEP + "        losses.append(loss)\n"
        "        correct += (out.argmax(dim=1) == y).sum()\n" + _Q2_END,
    ),
}

#: Round 7's finding: momentum stepped by hand from opt's state (opt has Nesterov momentum and weight decay too)
WRONG_ANSWERS[2] += (
    (
        _Q2_HEAD
        + _Q2_STEP.replace(
            "        opt.step()\n",
            "        with torch.no_grad():\n"
            "            for group in opt.param_groups:\n"
            "                for p in group['params']:\n"
            "                    buf = opt.state[p]['momentum_buffer'].mul_(group['momentum']).add_(p.grad)\n"
            "                    p.add_(buf, alpha=-group['lr'])\n",
        )
        + "        losses.append(loss.detach())\n"
        "        correct += (out.argmax(dim=1) == y).sum()\n" + _Q2_END,
        f"{_PASS} returned ([1.47314, ",
    ),
)
#: Round 7's right answer, wrong since round 8: the share computed in float32 (within 1e-6 of 0 on an exact cover
#: it is accepted there), which skips whole milliseconds past 2**24, where a trace's timestamps lie
WRONG_ANSWERS[1] += (
    (
        "def idle_share(busy, start_ms, end_ms):\n"
        "    if not busy:\n"
        "        return torch.tensor(1.0)\n"
        "    b = torch.tensor(busy, dtype=torch.float32).clamp(start_ms, end_ms)\n"
        "    b = b[b[:, 0].argsort()]\n"
        "    reach = torch.cummax(b[:, 1], 0).values\n"
        "    prev = torch.cat([torch.tensor([float(start_ms)]), reach[:-1]])\n"
        "    covered = (b[:, 1] - torch.maximum(b[:, 0], prev)).clamp(min=0).sum()\n"
        "    return 1 - covered / (end_ms - start_ms)",
        "idle_share([(16_777_217, 16_777_219), (16_777_220, 16_777_221)], 16_777_216, 16_777_226) returned 0.6; "
        "expected 0.7",
    ),
)
#: Round 17: the losses read through a sequence class of the learner's own (only len and indices), at the end
WRONG_ANSWERS[2] += (
    (
        OWN_SEQUENCE + SOLUTIONS[2].replace("torch.stack(losses).tolist()", "torch.tensor(Losses(losses)).tolist()"),
        "8 reads ['.tolist()', 'int()', 'torch.tensor(a sequence of tensors)']",
    ),
)
#: Round 18: a count whose size needs the values on the host, in other spellings than nonzero (accepted: only the
#: names nonzero were counted)
WRONG_ANSWERS[2] += tuple(
    (
        _Q2_HEAD + _Q2_STEP + "        losses.append(loss.detach())\n"
        f"        correct += {count}\n"
        "    return (torch.stack(losses).tolist() if losses else []), int(correct)",
        f"reads {said}",
    )
    for count, said in (
        ("torch.where(out.argmax(dim=1) == y)[0].numel()", "['.tolist()', '.where()']"),
        ("len(torch.argwhere(out.argmax(dim=1) == y))", "['.argwhere()', '.tolist()']"),
        ("len(y[out.argmax(dim=1) == y])", "['.__getitem__()', '.tolist()']"),
        ("torch.masked_select(y, out.argmax(dim=1) == y).shape[0]", "['.masked_select()', '.tolist()']"),
        ("torch.bincount((out.argmax(dim=1) == y).long(), minlength=2)[1]", "['.bincount()', '.tolist()', 'int()']"),
    )
)
WRONG_ANSWERS[2] += (
    (
        _Q2_HEAD + "        opt.zero_grad()\n        out = model(x)\n"
        "        loss = torch.nn.functional.cross_entropy(out, torch.nn.functional.one_hot(y).float())\n"
        "        loss.backward()\n        opt.step()\n"
        "        losses.append(loss.detach())\n"
        "        correct += (out.argmax(dim=1) == y).sum()\n" + _Q2_END,
        "reads ['.one_hot()', '.tolist()', 'int()']",
    ),
)
#: Round 18: one-hot targets of the model's width and a count without nonzero (right; one_hot with num_classes
#: knows its width without the values)
RIGHT_ANSWERS[2] += (
    _Q2_HEAD + "        opt.zero_grad()\n        out = model(x)\n"
    "        target = torch.nn.functional.one_hot(y, num_classes=out.shape[1]).float()\n"
    "        loss = torch.nn.functional.cross_entropy(out, target)\n"
    "        loss.backward()\n        opt.step()\n"
    "        losses.append(loss.detach())\n"
    "        correct = correct + torch.count_nonzero(out.argmax(dim=1) == y)\n" + _Q2_END,
)
RIGHT_ANSWERS[2] += (
    _Q2_HEAD + "        opt.zero_grad()\n        out = model(x)\n"
    "        target = torch.zeros_like(out)\n"
    "        target[torch.nn.functional.one_hot(y, num_classes=out.shape[1]).bool()] = 1.0\n"
    "        loss = torch.nn.functional.cross_entropy(out, target)\n"
    "        loss.backward()\n        opt.step()\n"
    "        losses.append(loss.detach())\n"
    "        correct += (out.argmax(dim=1) == y).sum()\n" + _Q2_END,
)
#: Round 22: a Python function per element (apply_, map_), a read through DLPack, and one-hot rows built in Python a
#: sample at a time from labels read once (before the loop, or on another thread each step)
_ONE_HOT = "        target = {}\n        loss = torch.nn.functional.cross_entropy(out, target)\n"
_LOOP_END = "        loss.backward()\n        opt.step()\n        losses.append(loss.detach())\n"
WRONG_ANSWERS[2] += tuple(
    (
        "import numpy as np\nfrom concurrent.futures import ThreadPoolExecutor\npool = ThreadPoolExecutor(1)\n"
        + _Q2_HEAD
        + "        opt.zero_grad()\n        out = model(x)\n"
        + before
        + _ONE_HOT.format(target)
        + _LOOP_END
        + "        correct += (out.argmax(dim=1) == y).sum()\n"
        + _Q2_END,
        said,
    )
    for before, target, said in (
        (
            "        diff = (torch.arange(out.shape[1]).expand(len(y), -1) - y.unsqueeze(1)).float()\n",
            "diff.apply_(lambda v: 1.0 if v == 0 else 0.0)",
            "reads ['.apply_()', '.tolist()', 'int()']",
        ),
        (
            "        labels = np.from_dlpack(y)\n",
            "torch.from_numpy(np.eye(out.shape[1], dtype=np.float32)[labels])",
            "reads ['.__dlpack__()', '.tolist()', 'int()']",
        ),
        (
            "        labels, rows = pool.submit(y.tolist).result(), torch.eye(out.shape[1]).tolist()\n",
            "torch.tensor([rows[label] for label in labels])",
            "a tensor from 1024 Python lists (one-hot rows written a sample at a time)",
        ),
    )
)
WRONG_ANSWERS[2] += (
    (
        _Q2_HEAD.replace("    for x, y", "    hits = torch.zeros(1)\n    for x, y")
        + _Q2_STEP
        + "        losses.append(loss.detach())\n"
        "        same = out.argmax(dim=1).double()\n"
        "        hits += same.map_(y.double(), lambda p, label: float(p == label)).sum()\n"
        "    return (torch.stack(losses).tolist() if losses else []), int(hits)",
        "reads ['.map_()', '.tolist()', 'int()']",
    ),
    (
        "def train(model, opt, batches):\n"
        "    labels, losses, correct, k = torch.cat([y for _, y in batches] or [torch.zeros(0)]).tolist(), [], 0, 0\n"
        "    for x, y in batches:\n"
        "        opt.zero_grad()\n        out = model(x)\n"
        "        rows = [[float(j == label) for j in range(out.shape[1])] for label in labels[k : k + len(y)]]\n"
        "        k += len(y)\n"
        + _ONE_HOT.format("torch.tensor(rows)")
        + _LOOP_END
        + "        correct += (out.argmax(dim=1) == y).sum()\n"
        + _Q2_END,
        "a tensor from 1024 Python lists",
    ),
)
#: Round 23: an index list built in Python, with no loop over the labels (the list rule is for rows, one a sample)
RIGHT_ANSWERS[2] += (
    _Q2_HEAD + "        opt.zero_grad()\n        out = model(x)\n"
    "        target = torch.zeros_like(out)\n"
    "        target[torch.tensor(list(range(len(y)))), y] = 1.0\n"
    "        loss = torch.nn.functional.cross_entropy(out, target)\n"
    + _LOOP_END
    + "        correct += (out.argmax(dim=1) == y).sum()\n"
    + _Q2_END,
)
#: Round 25: a no-op .cpu() on the CPU made a live tensor look like a host copy, whose reads were then free
WRONG_ANSWERS[2] += (
    (
        "def train(model, opt, batches):\n"
        "    batches = list(batches)\n"
        "    losses, correct = torch.zeros(len(batches)), torch.zeros((), dtype=torch.long)\n"
        "    losses.cpu(), correct.cpu()\n"
        "    for i, (x, y) in enumerate(batches):\n"
        "        opt.zero_grad()\n        out = model(x)\n        loss = torch.nn.functional.cross_entropy(out, y)\n"
        "        loss.backward()\n        opt.step()\n"
        "        losses[i] = loss.detach()\n"
        "        correct += (out.argmax(dim=1) == y).sum()\n"
        "        _ = f'step {i}: loss {losses[i]:.3f}, correct {int(correct)}'\n"
        "    return losses.tolist(), int(correct)",
        "reads ['.cpu()', '.tolist()', 'format()', 'int()']",
    ),
)
#: Rounds 26 and 27: a host copy written into each step (through out= or an alias) or re-pointed at the live loss
#: (.data =, set_), then read: its free reads end at the write, and its storage is taken as each call returns
WRONG_ANSWERS[2] += tuple(
    (
        _Q2_HEAD.replace("    for x, y", "    host = torch.zeros(()).cpu()\n    for x, y")
        + _Q2_STEP
        + f"        {change}\n        losses.append({read})\n"
        "        correct += (out.argmax(dim=1) == y).sum()\n"
        "    return losses, int(correct)",
        f"8 reads ['.cpu()', '{said}', 'int()']",
    )
    for change, read, said in (
        ("torch.add(loss.detach(), 0, out=host)", "host.item()", ".item()"),
        ("host.detach().copy_(loss.detach())", "host.item()", ".item()"),
        ("host.data = loss.detach()", "float(host)", "float()"),
        ("host.set_(loss.detach())", "float(host)", "float()"),
    )
)
#: Round 26: one copy to the host, then read through views of it (detach, .data, view, slices): one wait on a GPU
RIGHT_ANSWERS[2] += tuple(
    _Q2_HEAD + _Q2_STEP + "        losses.append(loss.detach())\n        correct += (out.argmax(dim=1) == y).sum()\n"
    f"    if not losses:\n        return [], 0\n    {end}"
    for end in (
        "return torch.stack(losses).cpu().detach().numpy().tolist(), int(correct)",
        "return torch.stack(losses).cpu().data.numpy().tolist(), int(correct)",
        "return torch.stack(losses).cpu().view(-1).tolist(), int(correct)",
        "both = torch.cat([torch.stack(losses), correct.reshape(1).float()]).cpu()\n"
        "    return both[:-1].tolist(), int(both[-1])",
    )
)
#: Review rounds 8 and 9: the losses copied to the host once, then read one by one from the copy (no wait on a GPU)
RIGHT_ANSWERS[2] += tuple(
    _Q2_HEAD + _Q2_STEP + "        losses.append(loss.detach())\n        correct += (out.argmax(dim=1) == y).sum()\n"
    f"    host = torch.stack(losses).cpu() if losses else []\n    return [{each} for loss in host], int(correct)"
    for each in ("float(loss)", "loss.item()")
)
#: Round 26: the losses returned as 0-d tensors, unread (the caller would read each one); right until round 25
WRONG_ANSWERS[2] += tuple(
    (
        _Q2_HEAD
        + _Q2_STEP
        + "        losses.append(loss.detach())\n        correct += (out.argmax(dim=1) == y).sum()\n"
        f"    return {losses}, int(correct)",
        f"{_PASS} returned ([a torch.float32 tensor of shape () on cpu, ",
    )
    for losses in ("losses", "list(torch.stack(losses)) if losses else []")
)
#: Round 28: the model left otherwise than the slow loop leaves it, though the results match: the last step skipped,
#: a step too many after the loop, eval mode left on
WRONG_ANSWERS[2] += tuple(
    (
        SOLUTIONS[2].replace(old, new),
        "but left the model unlike the slow loop's (weights, dtype, mode)",
    )
    for old, new in (
        ("        opt.step()\n", "        if len(losses) < len(batches) - 1:\n            opt.step()\n"),
        ("    return (torch.stack", "    opt.step()\n    return (torch.stack"),
        ("    return (torch.stack", "    model.eval()\n    return (torch.stack"),
    )
)
#: Round 29: the model left in float64 ("more precise losses"): the caller's next float32 step fails
WRONG_ANSWERS[2] += (
    (
        SOLUTIONS[2]
        .replace("    losses, correct = [], 0\n", "    model.double()\n    losses, correct = [], 0\n")
        .replace("out = model(x)", "out = model(x.double())"),
        "but left the model unlike the slow loop's (weights, dtype, mode)",
    ),
)
#: Round 30: the count left out of the return (a list of the losses alone was told its "losses" were one float)
WRONG_ANSWERS[2] += (
    (
        SOLUTIONS[2].replace(
            "    return (torch.stack(losses).tolist() if losses else []), int(correct)",
            "    return torch.stack(losses).tolist() if losses else []",
        ),
        f"{_PASS} returned (1.47314, 1.43987, 1.41185, 1.39401, 1.36994, 1.33507); expected (losses, correct)",
    ),
)
