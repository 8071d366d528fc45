"""Chapter 05's checker beyond the wrong answers tests/wrong_answers/ states: a mistake is named only where
the checker has evidence for it, and otherwise the message says what came back and what was expected."""

from __future__ import annotations

from .answers import evaluate, run_in_notebook

RIGHT_COPIES = "4 if p.requires_grad else 1"
#: Words of the slips question 2 names; a message without evidence for one must contain none of them.
SLIP_WORDS = ("frozen", "Adam", "one sample", "counts numbers", "4 bytes")


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


def test_a_size_taken_from_a_meta_tensor_or_an_empty_one_allocates_nothing() -> None:
    """Only a tensor of the asked shape on a real device counts as allocating it."""
    for code in (
        "def tensor_bytes(shape, dtype):\n    return torch.zeros(shape, dtype=dtype, device='meta').nbytes",
        "import math\n\n\ndef tensor_bytes(shape, dtype):\n"
        "    return torch.tensor(math.prod(shape)).item() * dtype.itemsize",
    ):
        outcome = evaluate(_question("tensor_bytes"), code)
        assert outcome.correct, (code, outcome.message)


def test_an_answer_that_allocates_is_refused_before_the_4_gib_case() -> None:
    """The case beyond an int32's count (65536**2 bytes) is tried only once no case's tensor was allocated."""
    code = "seen = []\n\ndef tensor_bytes(shape, dtype):\n    seen.append(tuple(shape))\n"
    code += "    return torch.empty(shape, dtype=dtype).nbytes"
    namespace = run_in_notebook(_question("tensor_bytes"), code)
    outcome = _question("tensor_bytes").evaluate(namespace)
    assert "allocated a torch.float32 tensor of shape (64, 3, 224, 224) on cpu" in outcome.message, outcome.message
    assert (65536, 65536) not in namespace["seen"]


def test_units_the_chapter_does_not_teach_are_told_what_differed_and_no_slip() -> None:
    """Round 6: 8 bytes for every type that is not a float is wrong only on 1-byte types and int32; it was called
    bits (cases.table weighs a slip against the cases an answer gets wrong, and those were all 1-byte types, where
    8 bytes an element is 8 bits of one byte). The int32 case tells them apart, and the bits and MiB slips (units the
    chapter does not teach) are gone: these answers are told the call, what came back and what was expected."""
    for code, said in (
        (
            "math.prod(shape) * (dtype.itemsize if dtype.is_floating_point else 8)",
            "((1000,), torch.int8) returned 8000",
        ),
        ("math.prod(shape) * dtype.itemsize * 8", "((64, 3, 224, 224), torch.float32) returned 308_281_344"),
        ("math.prod(shape) * dtype.itemsize / 2**20", "((64, 3, 224, 224), torch.float32) returned 36.75"),
    ):
        answer = f"import math\n\n\ndef tensor_bytes(shape, dtype):\n    return {code}"
        message = evaluate(_question("tensor_bytes"), answer).message
        assert message.startswith(f"Not yet: tensor_bytes{said}; expected ") and ":" not in message[9:], message
