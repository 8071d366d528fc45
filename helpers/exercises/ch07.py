"""Chapter 07 exercises: a PCIe link's peak, and how close a measured copy comes to it."""

from __future__ import annotations

import math
from typing import Any

from ..bandwidth import pcie_peak_gb_per_s
from ..checking import Question, Wrong, expect_number


def _number(value: Any, name: str) -> float:
    value = expect_number(value, f"`{name}` to be a number")
    if not math.isfinite(value):
        raise Wrong(f"`{name}` should be a finite number, not {value!r}")
    return float(value)


def _check_gen4_x8(value: Any) -> None:
    got = _number(value, "gen4_x8_peak")
    want = pcie_peak_gb_per_s(4, 8)
    if math.isclose(got, 16.0, rel_tol=1e-3):
        raise Wrong("16 GB/s ignores the line code: PCIe 4.0 sends 130 bits for every 128 bits of data")
    if math.isclose(got, 12.8, rel_tol=1e-3):
        raise Wrong("8b/10b coding belongs to PCIe 1.0 and 2.0; PCIe 4.0 uses 128b/130b")
    if math.isclose(got, want * 8, rel_tol=1e-3):
        raise Wrong("that is gigabits per second; divide by 8 for gigabytes")
    if math.isclose(got, want * 2, rel_tol=1e-3):
        raise Wrong("that is a x16 link (or both directions together); the question asks for x8, one direction")
    if not math.isclose(got, want, rel_tol=5e-3):
        raise Wrong(f"{got:g} GB/s is off: 16 GT/s per lane × 128/130 ÷ 8 bits × 8 lanes")


def _check_ratio(value: Any) -> None:
    got = _number(value, "fraction_of_peak")
    want = 11.2 / pcie_peak_gb_per_s(3, 16)
    if got > 1.5:
        raise Wrong("give a fraction such as 0.5, not a percentage (or did you divide the peak by the measurement?)")
    if math.isclose(got, 11.2 / 16, rel_tol=1e-3):
        raise Wrong("16 GB/s is PCIe 3.0 x16 before the 128b/130b line code; the data peak is about 15.75 GB/s")
    if not math.isclose(got, want, rel_tol=2e-3):
        raise Wrong(f"{got:.4f} is off: divide the measured 11.2 GB/s by the PCIe 3.0 x16 peak")


QUESTIONS = [
    Question(
        number=1,
        task="Set `gen4_x8_peak` to the theoretical data rate, in GB/s per direction, of a PCIe 4.0 x8 link.",
        variable="gen4_x8_peak",
        checker=_check_gen4_x8,
        hint_text="PCIe 4.0 runs 16 GT/s per lane (one bit per transfer) and codes 128 data bits in 130. "
        "Eight lanes, and 8 bits in a byte.",
        solution_code="gen4_x8_peak = 16 * 128 / 130 / 8 * 8",
        wrong_answers=(
            "gen4_x8_peak = 16.0",
            "gen4_x8_peak = 16 * 8 / 10 / 8 * 8",
            "gen4_x8_peak = 16 * 128 / 130 * 8",
            "gen4_x8_peak = 31.5",
            'gen4_x8_peak = "15.75 GB/s"',
        ),
    ),
    Question(
        number=2,
        task="A pinned host→device copy on a T4 (PCIe 3.0 x16) measured 11.2 GB/s. Set `fraction_of_peak` "
        "to the measured bandwidth divided by the link's theoretical peak.",
        variable="fraction_of_peak",
        checker=_check_ratio,
        hint_text="pcie_peak_gb_per_s(3, 16) from helpers.bandwidth gives the peak; a fraction is between 0 and 1.",
        solution_code="fraction_of_peak = 11.2 / pcie_peak_gb_per_s(3, 16)",
        wrong_answers=(
            "fraction_of_peak = 11.2 / 16",
            "fraction_of_peak = 100 * 11.2 / pcie_peak_gb_per_s(3, 16)",
            "fraction_of_peak = pcie_peak_gb_per_s(3, 16) / 11.2",
            "fraction_of_peak = 11.2 / pcie_peak_gb_per_s(4, 16)",
        ),
        context=lambda: {"pcie_peak_gb_per_s": pcie_peak_gb_per_s},
    ),
]
