"""Chapter 04's checker beyond the wrong answers tests/wrong_answers/ states: the notebook's starters get the
messages for their bugs, a mistake is named only where the checker has evidence for it, never its fix."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import torch

from helpers.training import make_data, make_model

from .answers import evaluate, run_in_notebook

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "04_models_on_the_gpu.ipynb"


def _question(variable: str):
    from helpers.exercises import ch04

    return next(q for q in ch04.QUESTIONS if q.variable == variable)


def _starter(name: str) -> str:
    """The code of the notebook's cell that defines `name`, without its check."""
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    code = next(c for c in map("".join, (c["source"] for c in cells)) if f"def {name}(" in c and "ex.q" in c)
    return code.rsplit("\n\n\nex.q", 1)[0]


def test_the_notebooks_starters_are_the_planted_bugs() -> None:
    """Question 1's script, right on the CPU, is first told what it left on the CPU when asked for meta; question 2's
    step gets the message for clipping the scaled gradients."""
    outcome = evaluate(_question("fit"), _starter("fit"))
    said = "fit(model, X, y, 3, path, torch.device('meta')) from scratch left the model's parameters on cpu"
    assert not outcome.correct and outcome.message == f"Not yet: {said}", outcome.message
    outcome = evaluate(_question("clipped_step"), _starter("clipped_step"))
    assert not outcome.correct and "clip_grad_norm_ saw scaled gradients" in outcome.message, outcome.message


def test_the_starter_is_right_on_the_cpu_alone() -> None:
    """The debug-this cell runs right where it was written: from scratch and resuming on the CPU, in bfloat16."""
    from helpers.exercises import ch04

    fit, cpu, data = (
        run_in_notebook(_question("fit"), _starter("fit"))["fit"],
        torch.device("cpu"),
        make_data(64),
    )
    with tempfile.TemporaryDirectory() as folder:
        start = ch04._train(fit, cpu, make_model(seed=1), data, f"{folder}/c.pt", "from scratch")
        ch04._train(fit, cpu, make_model(seed=2), data, f"{folder}/c.pt", "resuming", start=start)


def test_question_1_names_what_it_saw_never_the_fix() -> None:
    """The checker's own words (not torch's errors, which it quotes) name a device, a dtype, a step or a weight, never
    the call that would fix it."""
    from tests.wrong_answers.ch04 import WRONG_ANSWERS

    for code, _ in WRONG_ANSWERS[1]:
        message = evaluate(_question("fit"), code).message
        if " raised " not in message:
            fixes = ("map_location", "GradScaler", "scaler", ".to(", "load_state_dict", "state_dict", "register_buffer")
            assert not [word for word in fixes if word in message], message


def test_a_check_of_question_1_leaves_torch_and_the_notebook_as_they_were() -> None:
    """The meta stand-in (autocast, GradScaler, load_state_dict, Tensor.cpu, a tensor's printing, `to` keeping
    parameters) and the float16 `low_precision` exist only while the learner's function runs, whatever it did."""
    from helpers.exercises import ch04
    from helpers.exercises.solutions.ch04 import SOLUTIONS
    from tests.wrong_answers.ch04 import WRONG_ANSWERS

    kept = [torch.amp.autocast_mode.autocast.__init__, torch.amp.GradScaler.__init__, torch.nn.Module.load_state_dict]
    kept += [torch.optim.Optimizer.load_state_dict, torch.Tensor.cpu, "cpu" in vars(torch.Tensor)]
    kept += [torch.Tensor.__repr__, torch.Tensor.__format__, torch.__future__.get_swap_module_params_on_conversion()]
    for code in (SOLUTIONS[1], *(wrong for wrong, _ in WRONG_ANSWERS[1][:8]), WRONG_ANSWERS[1][-1][0]):
        namespace = run_in_notebook(_question("fit"), code)
        ch04.QUESTIONS[0].evaluate(namespace)
        assert namespace["low_precision"] is ch04.low_precision
        now = [torch.amp.autocast_mode.autocast.__init__, torch.amp.GradScaler.__init__]
        now += [torch.nn.Module.load_state_dict, torch.optim.Optimizer.load_state_dict, torch.Tensor.cpu]
        now += ["cpu" in vars(torch.Tensor), torch.Tensor.__repr__, torch.Tensor.__format__]
        assert now + [torch.__future__.get_swap_module_params_on_conversion()] == kept


def test_a_step_wrong_in_another_way_is_told_what_differed_and_no_slip() -> None:
    from helpers.exercises.solutions.ch04 import SOLUTIONS

    half = SOLUTIONS[2].replace("parameters(), max_norm)", "parameters(), max_norm / 2)")  # clipped to half
    message = evaluate(_question("clipped_step"), half).message
    assert message.startswith("Not yet: after ") and "the weights differ from one SGD step" in message, message
    assert "they " not in message, message  # none of the slips the chapter teaches


def test_a_slip_is_not_named_where_another_mistake_gives_its_weights() -> None:
    """Gradients unscaled by hand and again by scaler.step are not called clipped while scaled; clipping each value
    (clip_grad_value_) is not called an unclipped step (max_norm=0.25 comes first, where the two differ)."""
    from helpers.exercises.solutions.ch04 import SOLUTIONS

    by_hand = SOLUTIONS[2].replace(
        "    scaler.unscale_(optimizer)\n",
        "    for p in model.parameters():\n        p.grad.mul_(1 / scaler.get_scale())\n",
    )
    message = evaluate(_question("clipped_step"), by_hand).message
    assert "saw scaled gradients, or the scale was divided out again after the clip" in message, message
    values = SOLUTIONS[2].replace(
        "clip_grad_norm_(model.parameters(), max_norm)", "clip_grad_value_(model.parameters(), max_norm)"
    )
    message = evaluate(_question("clipped_step"), values).message
    assert "the weights differ from one SGD step" in message and "unclipped" not in message, message


def test_a_clip_to_a_norm_of_its_own_is_not_told_the_order() -> None:
    """Round 2: max_norm hard-coded at section 6's 1.0 was told to clip after unscale_; the order was right. The first
    case's gradients have norm 1.5, so a clip to 1 shows; an answer that never clips to max_norm is told to."""
    from helpers.exercises.solutions.ch04 import SOLUTIONS

    for norm, said in (
        ("1.0", "a step clipped to norm 1 (section 6): clip to max_norm"),
        ("2.0", "an unclipped"),
    ):
        code = SOLUTIONS[2].replace("parameters(), max_norm)", f"parameters(), {norm})")
        message = evaluate(_question("clipped_step"), code).message
        assert f"x, y=(1.5, -1.5, 1.5, 0), 0.25) the weights differ from one SGD step: they are {said}" in message, (
            message
        )
        assert "clip them to max_norm" in message or norm == "1.0", message


def test_clips_the_chapter_does_not_teach_are_told_what_differed_and_no_slip() -> None:
    """Round 6 dropped the slips of a clip per parameter, by value (or the inf-norm) and a rescale up to max_norm: the
    message says which call's weights differ from one SGD step, and names no mistake."""
    from tests.wrong_answers.ch04 import _CLIP, _CLIP_LINE

    first = "x, y=(1.5, -1.5, 1.5, 0), 0.25)"
    per_parameter = _CLIP.replace(
        _CLIP_LINE,
        "    norm = torch.linalg.vector_norm(torch.cat([p.grad.flatten() for p in model.parameters()]))\n"
        "    for p in model.parameters():\n        nn.utils.clip_grad_norm_(p, max_norm)\n",
    )
    rescaled = _CLIP.replace(
        "max_norm)\n", 'float("inf"))\n    for p in model.parameters():\n        p.grad.mul_(max_norm / norm)\n'
    )
    for code, call in (
        (per_parameter, first),
        (_CLIP.replace("max_norm)\n", "max_norm, norm_type=float('inf'))\n"), first),
        (rescaled, "x, y=(0.1, 1/3, -0.7, 0.2), 5.0)"),
    ):
        message = evaluate(_question("clipped_step"), code).message
        assert message.endswith(f"{call} the weights differ from one SGD step"), message


def test_a_right_answer_is_checked_without_a_warning() -> None:
    """Round 1 (part 7): loaded with map_location="cpu", a right answer's checkpoint reached the meta stand-in's
    parameters as CPU tensors and torch warned four times; the stand-in now loads zeros where the model is."""
    import warnings

    from helpers.exercises.solutions.ch04 import SOLUTIONS

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        outcome = evaluate(_question("fit"), SOLUTIONS[1])
    assert outcome.correct, outcome.message


def test_the_solution_resumes_the_colleagues_own_checkpoint() -> None:
    """A checkpoint the notebook's script wrote (no scaler in it) resumes with the solution, in float16 too."""
    from helpers.exercises import ch04
    from helpers.exercises.solutions.ch04 import SOLUTIONS

    script = run_in_notebook(_question("fit"), _starter("fit"))["fit"]
    solution = run_in_notebook(_question("fit"), SOLUTIONS[1])["fit"]
    cpu, data = torch.device("cpu"), make_data(64)
    with tempfile.TemporaryDirectory() as folder:
        start = ch04._train(script, cpu, make_model(seed=1), data, f"{folder}/c.pt", "from scratch")
        ch04._train(solution, cpu, make_model(seed=2), data, f"{folder}/c.pt", "resuming", start=start, half=True)


def test_question_2s_starter_fixed_in_its_order_alone_raises_on_the_overflow() -> None:
    """The colleague's clip asks for an error on a non-finite norm: with the order fixed, the step whose gradients
    overflowed (which scaler.step would skip) raises there, and the message names that call."""
    from tests.wrong_answers.ch04 import _CLIP_LINE, _UNSCALE

    fixed = _starter("clipped_step").replace(_CLIP_LINE.replace("max_norm)", "max_norm, error_if_nonfinite=True)"), "")
    fixed = fixed.replace(_UNSCALE, _UNSCALE + _CLIP_LINE.replace("max_norm)", "max_norm, error_if_nonfinite=True)"))
    message = evaluate(_question("clipped_step"), fixed).message
    assert "x, y=1e38, 0.5) raised RuntimeError" in message and "non-finite" in message, message
