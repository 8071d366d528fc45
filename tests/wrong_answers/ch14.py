"""Chapter 14's typical wrong answers, by question number (see the package's docstring)."""

from helpers.exercises.solutions.ch14 import SOLUTIONS

from . import lines_of

_Q1_HEAD = lines_of(SOLUTIONS[1], 1, 1)
_Q2_HEAD = lines_of(SOLUTIONS[2], 1, 3)
_Q2_STEP = lines_of(SOLUTIONS[2], 4, 8)


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
            "aten::_local_scalar_dense",
        ),
        (
            _Q2_HEAD + _Q2_STEP + "        losses.append(loss.detach())\n"
            "        pred = out.argmax(dim=1)\n"
            "        for i in range(len(y)):\n"
            "            correct += int(pred[i] == y[i])\n"
            "    return torch.stack(losses).tolist(), correct",
            "aten::select",
        ),
        (
            _Q2_HEAD + "        out = model(x)\n"
            "        loss = F.cross_entropy(out, y)\n"
            "        loss.backward()\n"
            "        opt.step()\n"
            "        losses.append(loss.detach())\n"
            "        correct += (out.argmax(dim=1) == y).sum()\n"
            "    return torch.stack(losses).tolist(), int(correct)",
            "losses differ",
        ),
        (
            _Q2_HEAD + _Q2_STEP + "        losses.append(loss.detach())\n"
            "        correct += (out.argmax(dim=1) == y).float().mean()\n"
            "    return torch.stack(losses).tolist(), float(correct)",
            "a fraction",
        ),
    ),
}
