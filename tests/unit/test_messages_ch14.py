"""Chapter 14's checkers beyond the answers tests/wrong_answers/ states: the loop as the notebook gives it is
refused by the calls and reads it makes, whatever a read's spelling; a wrong share is told the call, what was
expected and what came back, with no mistake named; and a wrong count is told both numbers."""

from __future__ import annotations

from tests.wrong_answers.ch14 import _Q2_HEAD, _Q2_STEP  # the loop's head and step, as the solution spells them

from .answers import evaluate

IDLE = "def idle_share(busy, start_ms, end_ms):\n"
TRAIN = "def train(model, opt, batches):\n"
_FIXED_END = "        losses.append(loss.detach())\n        correct += (out.argmax(dim=1) == y).sum()\n"


def _question(number: int):
    from helpers.exercises import ch14

    return ch14.QUESTIONS[number - 1]


def test_the_slow_loop_as_the_notebook_gives_it_is_told_its_calls_and_reads() -> None:
    code = (
        _Q2_HEAD + "        opt.zero_grad()\n"
        "        out = model(x)\n"
        "        target = torch.zeros_like(out)\n"
        "        for i, label in enumerate(y):\n"
        "            target[i, label] = 1.0\n"
        "        loss = torch.nn.functional.cross_entropy(out, target)\n"
        "        loss.backward()\n"
        "        opt.step()\n"
        "        losses.append(loss.detach())\n"
        "        correct += len(torch.nonzero(out.argmax(dim=1) == y))\n"
        "    return [float(loss) for loss in losses], correct"
    )
    outcome = evaluate(_question(2), code)
    assert not outcome.correct and "12 reads ['.nonzero()', 'float()'] for 5220 samples" in outcome.message


def test_one_read_at_the_end_passes_whatever_its_spelling_and_one_a_step_does_not() -> None:
    """The losses read once at the end, in any spelling, are one read; the same spelling every step is six."""
    for spelling in (
        "torch.stack(losses).tolist()",
        "torch.stack(losses).cpu().tolist()",
        "list(torch.stack(losses).numpy())",
    ):
        code = _Q2_HEAD + _Q2_STEP + _FIXED_END + f"    return ({spelling} if losses else []), int(correct)"
        assert evaluate(_question(2), code).correct, spelling
    for per_step in (
        "loss.item()",
        "loss.tolist()",
        "loss.detach().numpy().item()",
        "bool(loss > 0) and loss.detach()",
    ):
        code = (
            _Q2_HEAD + _Q2_STEP + f"        losses.append({per_step})\n"
            "        correct += (out.argmax(dim=1) == y).sum()\n"
            "    return [float(v) for v in losses], int(correct)"
        )
        outcome = evaluate(_question(2), code)
        assert not outcome.correct and "reads" in outcome.message and "6 steps" in outcome.message, per_step


def test_an_unknown_wrong_share_names_no_mistake() -> None:
    outcome = evaluate(_question(1), IDLE + "    return 0.25")
    assert not outcome.correct
    assert (
        "expected" in outcome.message and "counted twice" not in outcome.message and "busy share" not in outcome.message
    )


def test_a_share_that_matches_a_slip_on_one_case_only_is_not_told_that_slip() -> None:
    """The hull of all pairs (gaps counted busy) and a nested pair that shrinks the merged end both return 1 - the
    idle share on some case, by chance: they are told the call, what was expected and what came back, nothing more."""
    hull = (
        IDLE + "    inside = [(max(s, start_ms), min(e, end_ms)) for s, e in busy if e > start_ms and s < end_ms]\n"
        "    if not inside:\n"
        "        return 1.0\n"
        "    return 1 - (max(e for s, e in inside) - min(s for s, e in inside)) / (end_ms - start_ms)"
    )
    shrinking = (
        IDLE + "    covered, reach = 0.0, start_ms\n"
        "    for s, e in sorted((max(s, start_ms), min(e, end_ms)) for s, e in busy):\n"
        "        if e > max(s, reach):\n"
        "            covered += e - max(s, reach)\n"
        "        reach = e\n"
        "    return 1 - covered / (end_ms - start_ms)"
    )
    for code, said in (
        (hull, "idle_share([(2, 5), (1, 3), (7, 8)], 0.0, 12) returned 0.416667; expected 0.583333"),
        (shrinking, "idle_share([(0.0, 4), (1, 2), (2.5, 3), (6, 7)], 0.0, 8) returned 0.3125; expected 0.375"),
    ):
        outcome = evaluate(_question(1), code)
        assert not outcome.correct and outcome.message.endswith(said), outcome.message


def test_a_wrong_count_is_told_both_numbers() -> None:
    code = (
        TRAIN + "    losses = []\n"
        "    for x, y in batches:\n" + _Q2_STEP + "        losses.append(loss.detach())\n"
        "    return torch.stack(losses).tolist(), 0"
    )
    outcome = evaluate(_question(2), code)
    assert not outcome.correct and "], 0); the slow loop returns ([" in outcome.message
    assert "1432)" in outcome.message, outcome.message


def test_a_share_wrong_only_on_no_busy_pairs_is_not_called_the_busy_share() -> None:
    from tests.wrong_answers.ch14 import _Q1_WALK

    code = _Q1_WALK + "    return 1 - covered / (end_ms - start_ms) if busy else 0.0"
    outcome = evaluate(_question(1), code)
    assert not outcome.correct and "expected 1" in outcome.message and "busy share" not in outcome.message


def test_a_share_a_hair_below_0_from_rounding_passes_and_a_real_negative_does_not() -> None:
    """Abutting pairs that cover the window exactly make 1 - covered / length -2.2e-16: within the tolerance of 0;
    a share below 0 by more is refused with the call and both values."""
    from tests.wrong_answers.ch14 import _Q1_WALK

    assert evaluate(_question(1), _Q1_WALK + "    return 1 - covered / (end_ms - start_ms)").correct
    code = _Q1_WALK + "    share = 1 - covered / (end_ms - start_ms)\n    return share if share >= 0 else -0.001"
    outcome = evaluate(_question(1), code)
    said = "idle_share([(0.5748, 0.8362), (0.8362, 0.95), (0.2, 0.5748)], 0.3151, 0.8637) returned -0.001; expected 0.0"
    assert not outcome.correct and outcome.message.endswith(said), outcome.message
