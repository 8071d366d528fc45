"""Chapter 15's questions beyond the wrong answers tests/wrong_answers/ states: a mistake is named only where the
cases show it."""

from __future__ import annotations

from .answers import evaluate


def _question(variable: str):
    from helpers.exercises import ch15

    return next(q for q in ch15.QUESTIONS if q.variable == variable)


def test_the_smallest_gain_is_not_told_it_is_the_fastest_overall() -> None:
    """Attack round 1: the smallest kept gain beyond the noise is the last kept rung on the first case, as the
    fastest overall is; a later case tells them apart, so the message names neither."""
    code = (
        "def best_rung(rows, noise):\n    kept = [r for r in rows[1:] if r['kept'] and r['over_last'] - 1 > noise]\n"
        "    top = min(kept, key=lambda r: r['over_last'], default=None)\n    return top and top['name']"
    )
    message = evaluate(_question("best_rung"), code).message
    assert message.startswith("Not yet: ") and message.rstrip().endswith("returned 'sdpa'; expected 'autocast'"), (
        message
    )
