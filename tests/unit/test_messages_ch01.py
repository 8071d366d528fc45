"""Chapter 01's checker beyond the wrong answers tests/wrong_answers/ states: other right answers are
accepted, and a mistake is named only where the checker has evidence for it."""

from __future__ import annotations

from helpers.exercises import ch01

from .answers import evaluate


def _question():
    return next(q for q in ch01.QUESTIONS if q.variable == "stage_devices")


def test_other_right_fixes_and_forms_are_accepted() -> None:
    """The property is checked, not the text: a different fix, strings and a list are right too."""
    question = _question()
    fixes = (
        "import helpers.devices\n\n\ndef stage_devices():\n"
        "    first, second = helpers.devices.try_gpu(0), helpers.devices.try_gpu(1)\n"
        "    if second.type == 'cpu':\n"
        "        second = first\n"
        "    return first, second",
        "import helpers.devices\n\n\ndef stage_devices():\n"
        "    usable = helpers.devices.try_all_gpus()\n"
        "    return [str(usable[0]), str(usable[-1])]",
    )
    for code in fixes:
        outcome = evaluate(question, code)
        assert outcome.correct, outcome.message


def test_a_stage_on_a_device_without_an_index_or_too_many_values_is_told_so() -> None:
    question = _question()
    no_index = (
        "def stage_devices():\n"
        "    if torch.accelerator.is_available():\n"
        "        kind = torch.accelerator.current_accelerator().type\n"
        "        return torch.device(kind), torch.device(kind)\n"
        "    return torch.device('cpu'), torch.device('cpu')"
    )
    assert "name the index (cuda:0)" in evaluate(question, no_index).message
    three = "def stage_devices():\n    return torch.device('cpu'), torch.device('cpu'), torch.device('cpu')"
    assert "returned 3 values: return two" in evaluate(question, three).message
