"""Chapter 05's checker beyond the wrong answers tests/wrong_answers/ states: a mistake is named only where
the checker has evidence for it, and otherwise the message says what came back and what was expected."""

from __future__ import annotations

from .answers import evaluate

RIGHT_COPIES = "4 if p.requires_grad else 1"
#: Words of the slips question 2 names; a message without evidence for one must contain none of them.
SLIP_WORDS = ("frozen", "Adam", "one sample", "counts numbers", "its own element_size()")


def _question(variable: str):
    from helpers.exercises import ch05

    return next(q for q in ch05.QUESTIONS if q.variable == variable)


def _prediction(copies: str = RIGHT_COPIES, total: str = "{}") -> str:
    """A prediction with the count of copies changed; `total` wraps the returned sum."""
    returned = total.format("held + batch_size * activation_bytes_per_sample")
    return (
        "def predict_peak_bytes(model, batch_size, activation_bytes_per_sample):\n"
        f"    held = sum(p.numel() * p.element_size() * ({copies}) for p in model.parameters())\n"
        f"    return {returned}"
    )


def test_wrong_predictions_the_chapter_does_not_name_are_told_what_differed() -> None:
    first = "predict_peak_bytes(an MLP, first layer frozen, 8, 128) returned"
    cases = {
        _prediction("2 if p.requires_grad else 1"): f"{first} 11_984; expected 14_624",
        _prediction("4 if p.requires_grad else 2"): f"{first} 22_944; expected 14_624",
        _prediction(total="held"): f"{first} 13_600; expected 14_624",
        _prediction(total="({}) / 1e6"): f"{first} 0.014624; expected 14_624",
    }
    for code, phrase in cases.items():
        message = evaluate(_question("predict_peak_bytes"), code).message
        assert message.startswith("Not yet: ") and phrase in message, (phrase, message)
        assert not any(word in message.split("expected")[1] for word in SLIP_WORDS), message


def test_a_mistake_is_named_only_with_evidence_from_its_case() -> None:
    """Right on every model but the one with float16 parameters, and off by one byte there: no slip is named."""
    code = _prediction(total="{} + any(p.dtype == torch.float16 for p in model.parameters())")
    message = evaluate(_question("predict_peak_bytes"), code).message
    assert message == "Not yet: predict_peak_bytes(a float16 and a float32 Linear, 4, 16) returned 1729; expected 1728"


def test_a_near_miss_on_one_kind_of_tensor_names_no_mistake() -> None:
    """Right everywhere but on the expanded view, and off there by one block: no slip has evidence, none is named."""
    code = (
        "def allocated_bytes(tensors):\n"
        "    storages = {t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in tensors}\n"
        "    extra = 512 * any(t.stride(0) == 0 for t in tensors if t.dim())\n"
        "    return sum((n + 511) // 512 * 512 for n in storages.values()) + extra"
    )
    message = evaluate(_question("allocated_bytes"), code).message
    assert message == "Not yet: allocated_bytes([torch.ones(1, 4).expand(1000, 4)]) returned 1024; expected 512"


def test_an_answer_that_empties_the_list_it_is_given_is_refused() -> None:
    """Counting by popping the learner's own list changes the caller's list: refused, whatever it returned."""
    code = (
        "def allocated_bytes(tensors):\n    seen = {}\n    while tensors:\n"
        "        s = tensors.pop().untyped_storage()\n"
        "        seen[s.data_ptr()] = (s.nbytes() + 511) // 512 * 512\n    return sum(seen.values())"
    )
    message = evaluate(_question("allocated_bytes"), code).message
    assert "changed its arguments" in message, message
