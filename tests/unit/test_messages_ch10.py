"""Chapter 10's questions beyond the wrong answers tests/wrong_answers/ states: a mistake is named only where a
case shows it."""

from __future__ import annotations

import json
from pathlib import Path

from .answers import evaluate

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "10_choosing_a_gpu.ipynb"
HEAD = "def roofline_seconds(flops, nbytes, peak_tflops, bandwidth_gbs):\n"


def _question(variable: str):
    from helpers.exercises import ch10

    return next(q for q in ch10.QUESTIONS if q.variable == variable)


def test_a_mistake_is_named_only_where_a_case_tells_it_apart() -> None:
    cases = {
        # a mistake with no name: the checker says the call, what it expected and what came back, no blame
        HEAD + "    return 1.0": "roofline_seconds(10_000_000, 120_000_000, 8.1, 320) returned 1; expected 0.000375",
        # right on the memory-bound case only: it fails on the compute-bound one, where it is neither slip
        HEAD + "    return max(nbytes / (bandwidth_gbs * 1e9), 0.000375)": "returned 0.000375; expected 0.00211445",
        # the attack's findings: slips of units, the shorter time by chance on the first case and not on almost all
        # traffic, where the time they give is a thousandth of the traffic's
        HEAD + "    return max(flops / peak_tflops, nbytes / bandwidth_gbs) / 1e12": "returned 1.23457e-06; expected",
        HEAD + "    return flops / (min(peak_tflops, flops / nbytes * bandwidth_gbs) * 1e12)": "expected 0.000375",
    }
    for code, phrase in cases.items():
        message = evaluate(_question("roofline_seconds"), code).message
        assert message.startswith("Not yet: ") and phrase in message, (phrase, message)
        assert "shorter of the two" not in message and "adds the two" not in message, message


def test_on_the_ridge_the_two_times_are_equal_and_only_their_sum_is_wrong() -> None:
    times = "    arithmetic, traffic = flops / (peak_tflops * 1e12), nbytes / (bandwidth_gbs * 1e9)\n"
    on_the_ridge = "arithmetic == traffic else max(arithmetic, traffic)"
    smaller = HEAD + times + f"    return min(arithmetic, traffic) if {on_the_ridge}"
    assert evaluate(_question("roofline_seconds"), smaller).correct
    added = HEAD + times + f"    return arithmetic + traffic if {on_the_ridge}"
    message = evaluate(_question("roofline_seconds"), added).message
    said = "roofline_seconds(1_000_000_000_000, 40_000_000_000, 10, 400) returned 0.2; expected 0.1: that adds the two"
    assert said in message, message


def test_the_notebooks_starter_is_not_an_answer() -> None:
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    starter = next("".join(c["source"]) for c in cells if "def roofline_seconds(" in "".join(c["source"]))
    outcome = evaluate(_question("roofline_seconds"), starter)
    assert not outcome.correct and "bug in the course" not in outcome.message, outcome.message
