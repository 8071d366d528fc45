"""Chapter 15's typical wrong answers, by question number (see the package's docstring)."""

from helpers.exercises.solutions.ch15 import SOLUTIONS

_Q1 = SOLUTIONS[1]

#: Typical wrong answers to each question, by number, each with words its verdict must contain (the
#: message a learner who wrote it is told).
WRONG_ANSWERS: dict[int, tuple[tuple[str, str], ...]] = {
    1: (
        # every rung counted, kept or not: a rung that lost the guard or slowed the run gained nothing
        (_Q1.replace("if r['kept']", ""), "a rung that was not kept gained nothing: skip it"),
        # no noise: a gain inside the noise is named as the best
        (_Q1.replace(" and best['over_last'] - 1 > noise", ""), "a gain within the noise is no gain: then None"),
        # the fastest configuration overall, not the largest single step
        (
            "def best_rung(rows, noise):\n    total, best, name = 1.0, 1.0, None\n    for r in rows[1:]:\n"
            "        if r['kept']:\n            total *= r['over_last']\n"
            "            if total > best:\n                best, name = total, r['name']\n"
            "    return name if best - 1 > noise else None",
            "that is the fastest overall; ask each rung's own step",
        ),
        # the gain compared with the noise as a ratio, not a share
        (_Q1.replace("best['over_last'] - 1 > noise", "best['over_last'] > noise"), "expected None"),
        ("def best_rung(rows, noise):\n    return rows[-1]['name']", "returned 'sdpa'; expected 'autocast'"),
        ("def best_rung(rows, noise):\n    return 3", "to return a rung's name or None, but got an int"),
    ),
}

#: Right answers written otherwise than the solution.
RIGHT_ANSWERS: dict[int, tuple[str, ...]] = {
    1: (
        # the plain run counted too: its gain is 0, never beyond the noise
        SOLUTIONS[1].replace("rows[1:]", "rows"),
        "def best_rung(rows, noise):\n    best = None\n    for row in rows[1:]:\n"
        "        if row['kept'] and row['over_last'] - 1 > noise:\n"
        "            if best is None or row['over_last'] > best['over_last']:\n"
        "                best = row\n    return best and best['name']",
        "def best_rung(rows, noise):\n    gains = {r['name']: r['over_last'] - 1 for r in rows[1:] if r['kept']}\n"
        "    name = max(gains, key=gains.get, default=None)\n    return name if name and gains[name] > noise else None",
    ),
}

_Q2 = SOLUTIONS[2]
_STEP_AFTER, _STEP_IN = "  # adds to .grad\n    opt.step()", "\n        opt.step()"  # a step after the loop, or in it
WRONG_ANSWERS[2] = (
    (_Q2.replace(" * len(xs) / len(x)", ""), "each micro-batch's mean loss counts in full: scale it by its share"),
    (_Q2.replace("len(xs) / len(x)", "1 / micro"), "1 / micro is each chunk's share only when the chunks are equal"),
    (
        _Q2.replace("opt.zero_grad()  # once: the last step's gradients go", "pass").replace(
            "        loss = F", "        opt.zero_grad()\n        loss = F"
        ),
        "zeroing the gradients in the loop keeps only the last micro-batch's",
    ),
    (
        _Q2.replace("opt.zero_grad()  # once", "pass  # once"),
        "the previous step's gradients were added: zero them once",
    ),
    (_Q2.replace(_STEP_AFTER, _STEP_IN), "one optimizer step per"),
    # the whole batch at once: the same update, but no accumulation
    (
        "def accumulated_step(model, opt, x, y, micro):\n    opt.zero_grad()\n"
        "    F.cross_entropy(model(x), y).backward()\n    opt.step()",
        "ran the model on [12] rows; expected 3 micro-batches",
    ),
    # two mistakes: equal chunks hide 1 / micro, and the first case names the step per chunk it shows
    (
        _Q2.replace(" * len(xs) / len(x)", " / micro").replace(_STEP_AFTER, _STEP_IN),
        "on 12 rows left other weights than one step on the whole batch: one optimizer step per micro-batch",
    ),
    # a mistake the chapter does not name: the weights are shown
    (_Q2.replace("len(xs) / len(x)", "len(xs) / len(x) / 2"), "left the first weight at"),
)
RIGHT_ANSWERS[2] = (
    # chunk() instead of tensor_split: other sizes when they do not divide, the same update
    _Q2.replace("x.tensor_split(micro), y.tensor_split(micro)", "x.chunk(micro), y.chunk(micro)"),
    # the weighting as a sum of losses divided by the batch once, and gradients set to None
    "def accumulated_step(model, opt, x, y, micro):\n    opt.zero_grad(set_to_none=True)\n"
    "    for xs, ys in zip(torch.tensor_split(x, micro), torch.tensor_split(y, micro)):\n"
    "        (F.cross_entropy(model(xs), ys, reduction='sum') / x.shape[0]).backward()\n    opt.step()",
)
