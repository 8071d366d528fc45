"""helpers.checking: friendly verdicts whatever the learner wrote, and the hint/solution printing."""

from __future__ import annotations

import dataclasses
import math
import signal
import sys
import threading
import time
import tracemalloc
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import torch

from helpers import checking, learner_code
from helpers.answers import Wrong, expect_number, expect_type, normalise
from helpers.checking import Outcome, Question, load_exercises

from .answers import evaluate


def _positive(value: object) -> None:
    value = expect_type(value, int, "a whole number")
    if value <= 0:
        raise Wrong("it should be positive")


def _calls_it(fn: object) -> None:
    fn()  # type: ignore[operator]


Q = Question(1, "a positive number", "n", _positive, "think of 1", "n = 1", ("n = -1", "n = 0"))


def test_right_and_wrong_answers() -> None:
    assert Q.evaluate({"n": 3}).correct
    outcome = Q.evaluate({"n": -2})
    assert not outcome.correct and outcome.message == "Not yet: it should be positive"
    assert "expected a whole number, but got a str" in Q.evaluate({"n": "3"}).message


def test_missing_and_placeholder_answers() -> None:
    assert "can't find a variable named `n`" in Q.evaluate({}).message
    assert "still `...`" in Q.evaluate({"n": ...}).message


def test_learner_code_that_raises_is_reported_in_one_line() -> None:
    q = Question(2, "a function", "f", _calls_it, "", "")

    def broken() -> None:
        raise KeyError("boom")

    message = q.evaluate({"f": broken}).message
    assert message.startswith("Your `f` raised KeyError") and "boom" in message
    assert "\n" not in message


def test_check_prints_and_needs_binding(capsys: pytest.CaptureFixture[str]) -> None:
    q = Question(3, "a positive number", "n", _positive, "hint text", "n = 1")
    q.check()
    assert "not bound" in capsys.readouterr().out
    q.bind({"n": 5}).check()
    assert capsys.readouterr().out.startswith("✅ Correct")
    q.hint()
    q.solution()
    out = capsys.readouterr().out
    assert "hint text" in out and "    n = 1" in out
    assert "q3.check()" in repr(q)


def test_load_exercises_accepts_numbers_and_strings() -> None:
    assert hasattr(load_exercises(1, {}), "q1")
    assert hasattr(load_exercises("00", {}), "q2")


def test_expect_function_names_what_it_wanted() -> None:
    from helpers.answers import expect_function

    expect_function(len, "f")
    with pytest.raises(Wrong, match=r"`f` should be a function taking \(a, b\), but it is an int"):
        expect_function(3, "f", "(a, b)")
    with pytest.raises(Wrong, match=r"\(def g\(\.\.\.\): \.\.\.\)"):
        expect_function("x", "g")


# -- Forms a careful learner could mean --------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [3, np.int64(3), torch.tensor(3), torch.tensor([3]), Fraction(3), Decimal(3), np.array(3)],
    ids=["int", "np.int64", "0-d tensor", "shape (1,)", "Fraction", "Decimal", "0-d array"],
)
def test_every_form_of_a_whole_number_is_accepted(value: object) -> None:
    assert Q.evaluate({"n": value}).correct


@pytest.mark.parametrize(
    ("value", "says"),
    [
        (True, "got a bool"),
        (np.bool_(True), "got a bool"),
        (torch.tensor(True), "got a bool"),
        ("3", "got a str"),
        (torch.tensor([3, 4]), "got a Tensor"),
        (torch.ones(1, 1, 1), "got a Tensor"),
        (3.5, "got a float"),
    ],
)
def test_what_is_not_a_whole_number_is_rejected(value: object, says: str) -> None:
    outcome = Q.evaluate({"n": value})
    assert not outcome.correct and says in outcome.message


def test_normalise_makes_python_numbers_inside_containers_and_keeps_identity() -> None:
    assert normalise(np.float64(0.5)) == 0.5 and type(normalise(np.float32(0.5))) is float
    assert type(normalise(np.bool_(False))) is bool and normalise(Fraction(1, 4)) == 0.25
    assert type(normalise(Fraction(6, 3))) is int and type(normalise(Decimal("2.0"))) is int
    assert normalise(Decimal("0.1")) == 0.1 and type(normalise([np.int64(1), 2])[0]) is int
    assert normalise((np.int64(1),)) == (1,) and normalise({"a": np.float64(1.5)}) == {"a": 1.5}
    same = [1, "a", torch.tensor(2.0)]
    assert normalise(same) is same  # nothing to change: the learner's own object, for identity checks
    assert isinstance(normalise(torch.tensor(2.0)), torch.Tensor)  # tensors are the checker's business
    deep: list = []
    deep.append(deep)
    assert normalise(deep) is deep  # a list that contains itself does not recurse forever


def test_expect_number_and_expect_type_convert_what_was_meant() -> None:
    assert expect_number(torch.tensor(0.5)) == 0.5 and expect_number(np.float64(2)) == 2.0
    assert expect_number(Decimal("0.25")) == 0.25 and type(expect_number(7)) is int
    assert expect_type(3, float, "a float") == 3.0 and type(expect_type(3, float, "a float")) is float
    assert expect_type((1, 2), list, "a list") == [1, 2] and expect_type([1, 2], tuple, "a tuple") == (1, 2)
    assert expect_type(torch.tensor([2.5]), float, "a float") == 2.5
    for not_a_number in (True, "1.5", None, torch.ones(2), torch.ones(1, device="meta"), 10**400):
        with pytest.raises(Wrong):
            expect_number(not_a_number)
    with pytest.raises(Wrong, match="expected a list, but got a str"):
        expect_type("ab", list, "a list")


# -- Time limit ----------------------------------------------------------------------------------


def _forever() -> None:
    while True:
        pass


def _calls_it_and_wants_1(fn: object) -> None:
    if fn() != 1:  # type: ignore[operator]
        raise Wrong("it should return 1")


F = Question(5, "a function returning 1", "f", _calls_it_and_wants_1, "", "def f():\n    return 1")


def _timed(question: Question, namespace: dict, limit: float) -> tuple[Outcome, float]:
    started = time.monotonic()
    outcome = question.evaluate(namespace, time_limit=limit)
    return outcome, time.monotonic() - started


def test_a_function_that_never_returns_times_out_and_the_kernel_stays_usable() -> None:
    handler_before, stdout_before = signal.getsignal(signal.SIGALRM), sys.stdout
    outcome, seconds = _timed(F, {"f": _forever}, 0.2)
    assert not outcome.correct and outcome.message == (
        "Your `f` did not return within 0.2 s: a loop that never ends, or work far too big?"
    )
    assert 0.2 <= seconds < 1.5
    assert signal.getsignal(signal.SIGALRM) is handler_before and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert sys.stdout is stdout_before
    assert F.evaluate({"f": lambda: 1}).correct  # the next check works
    assert F.evaluate({"f": _forever}, time_limit=0.2).message.startswith("Your `f` did not return")


def test_the_question_sets_its_own_time_limit() -> None:
    quick = dataclasses.replace(F, time_limit=0.1)
    outcome, seconds = _timed(quick, {"f": _forever}, None)  # type: ignore[arg-type]
    assert "within 0.1 s" in outcome.message and seconds < 1.0
    assert learner_code.DEFAULT_TIME_LIMIT == F.time_limit


def test_the_previous_alarm_handler_and_timer_are_restored() -> None:
    received: list[int] = []
    previous = signal.signal(signal.SIGALRM, lambda signum, frame: received.append(signum))
    try:
        signal.setitimer(signal.ITIMER_REAL, 60, 5)
        _timed(F, {"f": _forever}, 0.2)
        delay, interval = signal.getitimer(signal.ITIMER_REAL)
        assert 55 < delay <= 60 and interval == 5 and received == []
        signal.setitimer(signal.ITIMER_REAL, 0.05)  # a timer that runs out during the check ...
        assert F.evaluate({"f": lambda: time.sleep(0.2) or 1}).correct
        time.sleep(0.05)
        assert received == [signal.SIGALRM]  # ... still reaches its own handler, afterwards
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_code_that_swallows_the_time_up_is_stopped_all_the_same() -> None:
    code = (
        "def swallows():\n"
        "    try:\n        while True:\n            pass\n    except BaseException:\n        pass\n"
        "    while True:\n        pass\n"
        "def returns_after_it():\n"
        "    try:\n        while True:\n            pass\n    except BaseException:\n        return 1\n"
    )
    namespace: dict = {}
    exec(compile(code, "<cell>", "exec"), namespace)
    for fn in (namespace["swallows"], namespace["returns_after_it"]):
        outcome, seconds = _timed(F, {"f": fn}, 0.2)
        assert not outcome.correct and "did not return within 0.2 s" in outcome.message and seconds < 1.5


def test_a_checker_that_hangs_is_not_blamed_on_the_learner() -> None:
    checker = _course_function("def check(value):\n    while True:\n        pass\n", "check")
    outcome, seconds = _timed(Question(6, "", "n", checker, "", ""), {"n": 1}, 0.2)
    assert outcome.message == "Checking your `n` did not finish within 0.2 s." and seconds < 3


def test_without_sigalrm_checks_run_unlimited_and_say_so_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(signal, "SIGALRM")
    monkeypatch.setattr(checking, "_no_limit_told", False)
    first, second, third = Q.evaluate({"n": 3}), Q.evaluate({"n": 3}), Q.evaluate({"n": -1})
    assert first.correct and first.message.startswith("Correct!") and "(No time limit on this system" in first.message
    assert "time limit" not in second.message and "time limit" not in third.message and second.correct


def test_outside_the_main_thread_checks_run_unlimited_and_say_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(checking, "_no_limit_told", False)
    outcomes: list[Outcome] = []
    worker = threading.Thread(target=lambda: outcomes.append(F.evaluate({"f": lambda: 1})))
    worker.start()
    worker.join(10)
    assert outcomes[0].correct and "block the kernel" in outcomes[0].message


# -- exit(), KeyboardInterrupt and printed output ------------------------------------------------


def _learner_code(code: str, name: str = "f") -> object:
    """A function compiled from a "cell", as Jupyter does, so that its line numbers are known."""
    namespace: dict = {"sys": sys}
    exec(compile(code, "<cell>", "exec"), namespace)
    return namespace[name]


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ("sys.exit(3)", "Your code called exit() or sys.exit(3)"),
        ("exit()", "Your code called exit() or sys.exit()"),
        ("raise KeyboardInterrupt", "Your code was interrupted (KeyboardInterrupt) before `f` could be checked."),
    ],
)
def test_exit_and_interrupts_become_verdicts(body: str, says: str) -> None:
    outcome = F.evaluate({"f": _learner_code(f"def f():\n    {body}\n")})
    assert not outcome.correct and outcome.message.startswith(says)


def test_printed_output_is_captured_capped_and_shown_with_the_verdict(capsys: pytest.CaptureFixture[str]) -> None:
    chatty = _learner_code('def f():\n    print("x" * 3000)\n    print("oops", file=sys.stderr)\n    return 1\n')
    outcome = F.evaluate({"f": chatty})
    assert outcome.correct and outcome.output == "x" * 2000 + "… (1,006 more characters)"
    assert capsys.readouterr().out == ""  # nothing reached the notebook while checking
    F.bind({"f": chatty}).check()
    printed = capsys.readouterr().out
    assert printed.startswith("Your code printed:\n    xxx") and printed.endswith("✅ Correct! Question 5 is done.\n")
    assert len(printed) < 2_200


def test_printing_10_mb_keeps_no_more_than_the_cap_in_memory() -> None:
    flood = _learner_code('def f():\n    for _ in range(10_000):\n        print("x" * 999)\n    return 1\n')
    tracemalloc.start()
    try:
        outcome = F.evaluate({"f": flood})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert outcome.correct and outcome.output.endswith("x\n… (9,998,000 more characters)")
    assert peak < 1_000_000, f"{peak:,} bytes held while 10 MB were printed"


# -- Whose error: the learner's or the checker's ---------------------------------------------------


def _course_function(source: str, name: str) -> object:
    """A function compiled as if it were a file of the course (in helpers/), like a real checker."""
    path = Path(checking.__file__).with_name("_a_checker_for_the_tests.py")
    namespace: dict = {"torch": torch, "Wrong": Wrong}
    exec(compile(source, str(path), "exec"), namespace)
    return namespace[name]


def test_an_error_in_the_learners_function_names_their_line() -> None:
    broken = _learner_code('def f():\n    x = 1\n    raise ValueError("bad input")\n')
    assert F.evaluate({"f": broken}).message == "Your `f` raised ValueError (line 3 of your code): bad input"


def test_an_error_in_a_builtin_the_learner_gave_is_theirs() -> None:
    checker = _course_function("def check(fn):\n    fn(-1)\n", "check")
    outcome = Question(7, "", "f", checker, "", "").evaluate({"f": math.sqrt})
    assert outcome.message == "Your `f` raised ValueError: math domain error"


def test_an_error_in_the_learners_own_class_is_theirs() -> None:
    odd = _learner_code("class Odd:\n    def __eq__(self, other):\n        return 1 / 0\n", "Odd")
    checker = _course_function("def check(value):\n    if value == 1:\n        pass\n", "check")
    outcome = Question(8, "", "n", checker, "", "").evaluate({"n": odd()})  # type: ignore[operator]
    assert outcome.message == "Your `n` raised ZeroDivisionError (line 3 of your code): division by zero"


def test_an_error_in_the_checkers_own_comparison_is_not_blamed_on_the_learner() -> None:
    checker = _course_function("def check(value):\n    torch.equal(value, torch.ones(1))\n", "check")
    outcome = Question(9, "", "t", checker, "", "").evaluate({"t": None})
    assert not outcome.correct and outcome.message.startswith(
        "The checker for question 9 could not compare your answer (TypeError: "
    )
    assert outcome.message.endswith("This is a bug in the course, not in your answer: please report it.")
    assert "Your `t`" not in outcome.message


FIRST_IMPORT_UNDER_A_LIMIT = """
import sys

import torch
from helpers.checking import load_exercises

questions = vars(load_exercises("04", {})).values()
before = set(sys.modules)
for q in questions:
    solution = {"torch": torch, "nn": torch.nn, **q.context()}
    exec(q.solution_code, solution)
    assert q.evaluate(solution, time_limit=60).correct, q.number
print(sorted(m for m in set(sys.modules) - before if m.startswith("torch._dynamo")))
"""


def test_checking_chapter_04_imports_no_part_of_torch_dynamo_inside_the_time_limit() -> None:
    """The first optimizer a process builds imports torch._dynamo, which takes seconds: loading the exercises does it.

    Inside a checker's time limit that import would eat the learner's seconds, and a limit that cuts it
    short can leave torch._dynamo half-initialised for the rest of the session.
    """
    import subprocess

    done = subprocess.run(
        [sys.executable, "-c", FIRST_IMPORT_UNDER_A_LIMIT],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout[-2000:]


def test_expect_pair_names_what_is_off() -> None:
    from helpers.answers import expect_pair

    assert expect_pair((2, 0.5), "f(1)", "batch", "lr") == (2, 0.5)
    with pytest.raises(Wrong, match=r"f\(1\) to return \(batch, lr\)"):
        expect_pair("2, 0.5", "f(1)", "batch", "lr")
    with pytest.raises(Wrong, match=r"f\(1\) returned 3 values; return two: \(batch, lr\)"):
        expect_pair((2, 0.5, 1), "f(1)", "batch", "lr")
    with pytest.raises(Wrong, match=r"f\(1\)\[1\], the lr, to be a number"):
        expect_pair((2, "fast"), "f(1)", "batch", "lr")


def test_a_cell_after_a_question_takes_the_number_check_took() -> None:
    """`helpers.as_number`: what `check()` accepts as a number becomes a float; the starter's `...` is None."""
    import numpy as np
    import torch

    from helpers import as_number

    assert as_number(np.int64(3)) == 3.0 and as_number(torch.tensor(2.5)) == 2.5 and as_number(torch.ones(1)) == 1.0
    assert as_number(7) == 7.0 and type(as_number(7)) is float
    for not_a_number in (..., None, True, "3", torch.ones(2), [1.0]):
        assert as_number(not_a_number) is None, not_a_number


def test_an_answer_that_changes_torchs_defaults_is_told_and_they_are_set_back() -> None:
    """torch.set_default_device/dtype inside an answer would change every later cell: named, and undone."""
    import torch

    from helpers.exercises import ch02

    question = ch02.QUESTIONS[2]  # zeros_for(t, n)
    leaky = "def zeros_for(t, n):\n    torch.set_default_device(t.device)\n    return torch.zeros(n, dtype=t.dtype)"
    outcome = evaluate(question, leaky)
    assert not outcome.correct and "changed torch's default device" in outcome.message, outcome
    assert torch.get_default_device() == torch.device("cpu") and torch.ones(1).device.type == "cpu"
    dtype = "def zeros_for(t, n):\n    torch.set_default_dtype(torch.float64)\n    return torch.zeros(n, dtype=t.dtype)"
    outcome = evaluate(question, dtype)
    assert "changed torch's default dtype" in outcome.message and torch.get_default_dtype() == torch.float32
    assert evaluate(question, question.solution_code).correct, "the next right answer is right again"
    # A default device without an index that this machine cannot make a tensor on: get_default_device() raises.
    unusable = "privateuseone" if torch.backends.mps.is_available() else "mps"
    away = (
        f"def zeros_for(t, n):\n    torch.set_default_device({unusable!r})\n    return torch.zeros(n, device=t.device)"
    )
    outcome = evaluate(question, away)
    assert not outcome.correct and "changed torch's default device" in outcome.message, outcome
    assert torch.get_default_device() == torch.device("cpu"), "set back"
    outcome = evaluate(question, "def zeros_for(t, n):\n    torch.set_grad_enabled(False)\n    return torch.zeros(n)")
    assert "changed torch's grad mode" in outcome.message and torch.is_grad_enabled(), "named, and set back"
    autocast = "def zeros_for(t, n):\n    torch.autocast('cpu').__enter__()\n    return torch.zeros(n)"
    outcome = evaluate(question, autocast)
    assert "changed torch's autocast" in outcome.message and not torch.is_autocast_enabled("cpu"), outcome.message
    open_blocks = torch.autocast_increment_nesting() - 1  # the block it entered and never left is left again:
    torch.autocast_decrement_nesting()  # else every later autocast keeps its casts of old weights (cast cache)
    assert open_blocks == 0, open_blocks


def test_a_check_runs_with_torchs_own_defaults_and_gives_the_notebook_its_own_back() -> None:
    """An earlier cell's default dtype, default device, grad mode or autocast neither breaks a right answer's check
    nor is blamed on it; each is the notebook's again afterwards. A change made by the answer on any call (not only
    the last) is named."""
    import torch

    from helpers.exercises import ch02

    question = ch02.QUESTIONS[2]  # zeros_for(t, n)
    for name, set_it, unset in (
        ("dtype", lambda: torch.set_default_dtype(torch.float64), lambda: torch.set_default_dtype(torch.float32)),
        ("grad", lambda: torch.set_grad_enabled(False), lambda: torch.set_grad_enabled(True)),
        ("device", lambda: torch.set_default_device("meta"), lambda: torch.set_default_device(None)),
        ("autocast", lambda: torch.set_autocast_enabled("cpu", True), lambda: torch.set_autocast_enabled("cpu", False)),
    ):
        set_it()
        try:
            before = (torch.get_default_dtype(), torch.get_default_device(), torch.is_grad_enabled())
            outcome = evaluate(question, question.solution_code)
            after = (torch.get_default_dtype(), torch.get_default_device(), torch.is_grad_enabled())
            assert outcome.correct, (name, outcome.message)
            assert after == before and torch.is_autocast_enabled("cpu") == (name == "autocast"), name
        finally:
            unset()
    with torch.autocast("cpu"):  # a check run inside the notebook's autocast block: the block is still open after
        assert evaluate(question, question.solution_code).correct
        assert torch.autocast_increment_nesting() == 2 and torch.autocast_decrement_nesting() == 1
    assert torch.autocast_increment_nesting() == 1 and torch.autocast_decrement_nesting() == 0, "and closed by its exit"
    once = "def zeros_for(t, n):\n    torch.set_default_device(t.device if t.is_meta else None)\n"
    outcome = evaluate(question, once + "    return torch.zeros(n, dtype=t.dtype, device=t.device)")
    assert "changed torch's default device" in outcome.message and torch.get_default_device().type == "cpu"
    assert evaluate(question, question.solution_code).correct, "the next right answer is right again"


def test_a_check_leaves_the_notebooks_random_numbers_as_they_were() -> None:
    """Checkers and answers seed torch (torch.manual_seed); the notebook's next draw must not depend on a check."""
    import torch

    from helpers.exercises import ch02

    question = ch02.QUESTIONS[2]  # zeros_for(t, n)
    seeding = (
        "def zeros_for(t, n):\n    torch.manual_seed(0)\n    return torch.zeros(n, dtype=t.dtype, device=t.device)"
    )
    torch.manual_seed(5)
    expected = torch.rand(4)
    torch.manual_seed(5)
    evaluate(question, seeding)
    assert torch.equal(torch.rand(4), expected)


def test_an_answer_file_written_again_is_quoted_as_it_is_now(tmp_path, monkeypatch) -> None:
    """Warnings quote source lines from linecache: a file written again must not show its earlier version's lines."""
    import linecache

    from helpers.learner_code import import_answer_file

    monkeypatch.syspath_prepend(str(tmp_path))
    path = tmp_path / "rewritten_answer.py"
    quoted = []
    for line in ("x = 1  # the first version", "y = 2  # the second version"):
        path.write_text(f"def f():\n    {line}\n")
        sys.modules.pop("rewritten_answer", None)
        import_answer_file(str(path), "rewritten_answer.py", "f")
        quoted.append(linecache.getline(str(path), 2).strip())
    assert quoted == ["x = 1  # the first version", "y = 2  # the second version"]
