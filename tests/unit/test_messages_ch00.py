"""Chapter 00's checker beyond the wrong answers tests/wrong_answers/ states: other right answers are
accepted, and a mistake is named only where the checker has evidence for it."""

from __future__ import annotations

from helpers.exercises import ch00

from .answers import evaluate


def test_a_mistake_is_named_only_with_evidence() -> None:
    """A wrong answer with no pattern the probes recognise gets the case and the rule, and nothing more."""
    question = next(q for q in ch00.QUESTIONS if q.variable == "has_kernels_for")
    always_true = "def has_kernels_for(capability, arch_list):\n    return len(arch_list) > 0"
    message = evaluate(question, always_true).message
    assert message.startswith("Not yet: has_kernels_for((6, 0), "), message
    assert "Your function" not in message and "With only" not in message, message
    crashes_on_letters = (
        "def has_kernels_for(capability, arch_list):\n"
        "    major, minor = capability\n"
        "    return any(int(a.split('_')[1]) // 10 == major and int(a.split('_')[1]) % 10 <= minor\n"
        "               or (a.startswith('compute') and int(a.split('_')[1]) <= major * 10 + minor)\n"
        "               for a in arch_list)"
    )
    outcome = evaluate(question, crashes_on_letters)
    assert not outcome.correct and "ValueError" in outcome.message and "'90a'" in outcome.message, outcome.message
