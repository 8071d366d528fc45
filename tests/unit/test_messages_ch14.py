"""Chapter 14's checkers beyond the wrong answers tests/wrong_answers/ states: other right answers are
accepted, the loop as the notebook gives it is refused by what its trace shows, and a wrong share that
matches no known slip is told what was expected, with no mistake named."""

from __future__ import annotations

from tests.wrong_answers.ch14 import _Q2_HEAD, _Q2_STEP  # the loop's head and step, as the solution spells them

from .answers import evaluate

IDLE = "def idle_share(busy, start_ms, end_ms):\n"
TRAIN = "def train(model, opt, batches):\n"


def _question(number: int):
    from helpers.exercises import ch14

    return ch14.QUESTIONS[number - 1]


def test_other_right_answers_are_accepted() -> None:
    right = {
        1: [
            # a boolean mask over a fine grid would be approximate; this one marks the covered stretches exactly
            IDLE + "    import torch\n"
            "    edges = sorted({start_ms, end_ms, *(min(max(t, start_ms), end_ms) for p in busy for t in p)})\n"
            "    idle = 0.0\n"
            "    for a, b in zip(edges, edges[1:]):\n"
            "        mid = (a + b) / 2\n"
            "        if not any(s <= mid < e for s, e in busy):\n"
            "            idle += b - a\n"
            "    return torch.tensor(idle / (end_ms - start_ms))",
        ],
        2: [
            TRAIN + "    losses = torch.zeros(len(batches))\n"
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
        ],
    }
    for number, answers in right.items():
        for code in answers:
            outcome = evaluate(_question(number), code)
            assert outcome.correct, (code, outcome.message)


def test_the_slow_loop_as_the_notebook_gives_it_is_named_by_its_index_calls() -> None:
    code = (
        _Q2_HEAD + _Q2_STEP + "        losses.append(loss.item())\n"
        "        pred = out.argmax(dim=1)\n"
        "        for i in range(len(y)):\n"
        "            correct += int(pred[i] == y[i])\n"
        "    return losses, correct"
    )
    outcome = evaluate(_question(2), code)
    assert not outcome.correct and "aten::select" in outcome.message


def test_an_unknown_wrong_share_names_no_mistake() -> None:
    outcome = evaluate(_question(1), IDLE + "    return 0.25")
    assert not outcome.correct
    assert (
        "expected" in outcome.message and "counted twice" not in outcome.message and "busy share" not in outcome.message
    )


def test_a_wrong_count_is_told_both_numbers() -> None:
    code = (
        TRAIN + "    losses = []\n"
        "    for x, y in batches:\n" + _Q2_STEP + "        losses.append(loss.detach())\n"
        "    return torch.stack(losses).tolist(), 0"
    )
    outcome = evaluate(_question(2), code)
    assert not outcome.correct and "right predictions, the slow loop" in outcome.message
