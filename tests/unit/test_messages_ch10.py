"""Chapter 10's question 5 (predict, then measure) beyond the wrong answers tests/wrong_answers/
states: other right forms are accepted, and a mistake is named only where every case shows it."""

from __future__ import annotations

import json
from pathlib import Path

from .answers import evaluate

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "10_choosing_a_gpu.ipynb"
HEAD = "def roofline_seconds(flops, nbytes, peak_tflops, bandwidth_gbs):\n"


def _question():
    from helpers.exercises import ch10

    return next(q for q in ch10.QUESTIONS if q.variable == "roofline_seconds")


def test_other_right_answers_are_accepted() -> None:
    right = [
        # flops over the attainable rate: the roofline written the other way round
        HEAD + "    intensity = flops / nbytes\n"
        "    attainable = min(peak_tflops * 1e12, intensity * bandwidth_gbs * 1e9)\n"
        "    return flops / attainable",
        HEAD + "    import numpy as np\n"
        "    return np.float64(max(flops / peak_tflops / 1e12, nbytes / bandwidth_gbs / 1e9))",
        HEAD + "    import torch\n"
        "    seconds = max(flops / (peak_tflops * 1e12), nbytes / (bandwidth_gbs * 1e9))\n"
        "    return torch.tensor(seconds, dtype=torch.float64)",
    ]
    for code in right:
        outcome = evaluate(_question(), code)
        assert outcome.correct, (code, outcome.message)


def test_more_wrong_answers_are_named_by_what_they_did() -> None:
    cases = {
        HEAD + "    return nbytes / (bandwidth_gbs * 1e9)": "only the memory time; this case is compute-bound",
        # TFLOP/s read as GFLOP/s: the same slip on every case
        HEAD + "    return max(flops / (peak_tflops * 1e9), nbytes / (bandwidth_gbs * 1e9))": (
            "a unit slip; convert TFLOP/s × 10^12, not 10^9"
        ),
        # a mistake with no name: the checker says what it expected and what came back, no blame
        HEAD + "    return 1.0": "returned 1 s; the roofline's least time is 0.000375 s",
        # right on the memory-bound case only: neither min nor only-memory fits every case
        HEAD + "    return max(nbytes / (bandwidth_gbs * 1e9), 0.000375)": "the roofline's least time is",
    }
    for code, phrase in cases.items():
        message = evaluate(_question(), code).message
        assert message.startswith("Not yet: ") and phrase in message, (phrase, message)


def test_the_notebooks_starter_is_not_an_answer() -> None:
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    starter = next("".join(c["source"]) for c in cells if "def roofline_seconds(" in "".join(c["source"]))
    outcome = evaluate(_question(), starter)
    assert not outcome.correct and "bug in the course" not in outcome.message, outcome.message
