"""Chapter 15's typical wrong answers, by question number (see the package's docstring)."""

import atexit
import shutil
import tempfile
from pathlib import Path

from helpers.exercises.solutions.ch15 import SOLUTIONS

from ..gpu.chapter_files import import_written_file

#: Question 2's check trains the chapter's own model: its files, written as section 1 and 2 write them.
_WORK = Path(tempfile.mkdtemp(prefix="ch15-"))
atexit.register(shutil.rmtree, _WORK, True)
import_written_file("15_one_model_every_lesson.ipynb", "gpt", _WORK)
import_written_file("15_one_model_every_lesson.ipynb", "ladder", _WORK)

_Q1 = SOLUTIONS[1]

#: Typical wrong answers to each question, by number, each with words its verdict must contain (the
#: message a learner who wrote it is told).
WRONG_ANSWERS: dict[int, tuple[tuple[str, str], ...]] = {
    1: (
        # every rung counted, kept or not: a rung that lost the guard or slowed the run gained nothing
        (_Q1.replace("if r['kept']", ""), "a rung that was not kept gained nothing: skip it"),
        # no noise: a gain inside the noise is named as the best
        (_Q1.replace(" and best['over_last'] - 1 > noise", ""), "a gain within the noise is no gain"),
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
        # attack round 1: the first kept rung beyond the noise, not the largest; >= at the noise; the smallest gain
        (
            "def best_rung(rows, noise):\n    for r in rows[1:]:\n"
            "        if r['kept'] and r['over_last'] - 1 > noise:\n            return r['name']\n    return None",
            "returned 'tf32'; expected 'autocast'",
        ),
        (_Q1.replace("- 1 > noise", "- 1 >= noise"), "a gain equal to the noise is no gain either"),
        (
            "def best_rung(rows, noise):\n"
            "    kept = [r for r in rows[1:] if r['kept'] and r['over_last'] - 1 > noise]\n"
            "    top = min(kept, key=lambda r: r['over_last'], default=None)\n    return top and top['name']",
            "returned 'sdpa'; expected 'autocast'",  # not named: tests/unit/test_messages_ch15.py
        ),
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
_HEAD = "def my_rung(model):\n"
WRONG_ANSWERS[2] = (
    # a dropout added: faster to nothing, and it learns something else
    (_HEAD + "    return torch.nn.Sequential(model, torch.nn.Dropout(0.9))", "so it learned something else"),
    # the blocks frozen: fewer gradients to compute, but they never train
    (_HEAD + "    model.blocks.requires_grad_(False)\n    return model", "parameters as they were (blocks.0"),
    # a copy trained in place of the model: the optimizer steps weights that no forward uses
    (_HEAD + "    import copy\n    return copy.deepcopy(model)", "parameters as they were"),
    # float16 weights on the CPU: the loss is not finite
    (_HEAD + "    return model.half()", "with my_rung the held-out loss is nan"),
    # nothing returned
    (_HEAD + "    model.train()", "my_rung(model) returned None; return what train should call"),
    # a shorter context: the output no longer matches the targets
    (_HEAD + "    return lambda idx: model(idx[:, -16:])", "training with my_rung raised"),
)
RIGHT_ANSWERS[2] = (
    # the model as it is, and a function around it
    _HEAD + "    return model",
    _HEAD + "    return lambda idx: model(idx)",
    # the blocks compiled with a backend that compiles nothing (no cold compile in the tests)
    _HEAD + "    model.blocks = torch.compile(model.blocks, backend='eager')\n    return model",
)
