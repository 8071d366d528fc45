"""Chapter 12's questions 2 and 3 beyond the wrong answers tests/wrong_answers/ states: other right answers are
accepted, a mistake is named only where the checker has evidence for it, and the notebook's starter is no answer."""

from __future__ import annotations

import json
from pathlib import Path

from .answers import evaluate

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "12_sharding_with_fsdp.ipynb"
HEAD = "def rank0_bytes(shapes, world_size):\n"


def _question():
    from helpers.exercises import ch12

    return next(q for q in ch12.QUESTIONS if q.variable == "rank0_bytes")


def test_other_right_answers_are_accepted() -> None:
    right = [
        # the rows with math.ceil, the bytes as float32 numbers times four copies
        HEAD + "    import math\n    n = sum(math.ceil(s[0] / world_size) * math.prod(s[1:]) for s in shapes)\n"
        "    return float(n * 4 * 4)",
        # torch.chunk on the meta device, as FSDP2 itself cuts
        HEAD + "    import torch\n"
        "    n = sum(torch.empty(s, device='meta').chunk(world_size)[0].numel() for s in shapes)\n"
        "    return torch.tensor(16 * n)",
        # numpy
        HEAD + "    import numpy as np\n"
        "    return int(np.sum([-(-s[0] // world_size) * np.prod(s[1:], dtype=np.int64) for s in shapes])) * 16",
    ]
    for code in right:
        outcome = evaluate(_question(), code)
        assert outcome.correct, (code, outcome.message)


def test_a_mistake_without_evidence_gets_what_was_expected_and_what_came_back() -> None:
    # the world size ignored: no rule names it, so the message says what rank 0 holds instead of guessing
    message = evaluate(_question(), HEAD + "    import math\n    return sum(math.prod(s) for s in shapes) * 16").message
    assert message.startswith("Not yet: ") and message.endswith("returned 156_304; expected 79_744"), message
    # only the parameter shards (4 bytes a number), not their gradients and Adam's states: no rule for it either
    only = HEAD + "    import math\n    return 4 * sum(-(-s[0] // world_size) * math.prod(s[1:]) for s in shapes)"
    message = evaluate(_question(), only).message
    assert message.endswith("returned 19_936; expected 79_744"), message


def test_the_notebooks_starter_is_not_an_answer() -> None:
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    starter = next("".join(c["source"]) for c in cells if "def rank0_bytes(" in "".join(c["source"]))
    outcome = evaluate(_question(), starter.replace("ex.q3.check()", ""))
    assert not outcome.correct and "bug in the course" not in outcome.message, outcome.message


def test_question_1_names_no_mistake_it_cannot_tell_apart() -> None:
    # activations divided among the ranks and activations forgotten agree on the first case: the later cases decide
    from helpers.exercises import ch12

    head = "def ranks_needed(n_params, optimizer, gpu_bytes, activation_bytes):\n"
    head += "    per = 4 * (2 + {'SGD': 0, 'SGD with momentum': 1, 'Adam': 2}[optimizer])\n"
    message = evaluate(ch12.QUESTIONS[0], head + "    return -(-n_params // (gpu_bytes // per))").message
    assert message.endswith("the activations come on top of each rank's shards"), message
    # Adam's 16 bytes for every optimizer, and the activations forgotten: no one rule explains it, so none is named
    message = evaluate(
        ch12.QUESTIONS[0], head.split("\n")[0] + "\n    return -(-n_params // (gpu_bytes // 16))"
    ).message
    assert message.endswith("returned 8; expected 9"), message


def test_question_2_as_the_notebook_gives_it_is_told_what_each_rank_held() -> None:
    from helpers.exercises import ch12

    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    given = next("".join(c["source"]) for c in cells if "%%writefile {WORK}/build_answer.py" in "".join(c["source"]))
    message = evaluate(ch12.QUESTIONS[1], given.split("\n", 1)[1]).message
    assert message.startswith("Not yet: on rank 0 of two: this rank held the whole model unsharded"), message
    assert "when to_empty gave it memory before fully_shard" in message and "576 bytes" in message, message
