"""Exercises a learner checks with `q1.check()`, `q1.hint()` and `q1.solution()`.

Modelled on Kaggle Learn: `check()` looks the learner's variable up in the notebook's namespace (bound
with `load_exercises("01", globals())`) and answers with one short sentence, never a traceback, leaving
the kernel usable: the learner's code runs with a time limit (SIGALRM, where there is one); `exit()` and
`KeyboardInterrupt` become verdicts; what it prints is kept up to `OUTPUT_LIMIT` characters; every form a
careful learner could mean is accepted (`normalise`, `expect_type`); and an error in a checker's own
comparison is reported as a bug in the course.

A question whose answer another process must run names a `file`: the learner writes it with
`%%writefile {WORK}/name.py`, and `check()` imports it fresh from there, as the child processes do.
Questions live in `helpers/exercises/chNN.py`; their solutions in `helpers/exercises/solutions/chNN.py`,
which the handout edition leaves out.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import io
import os
import reprlib
import signal
import sys
import textwrap
import threading
import time
import traceback
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

#: Seconds the learner's code may run during one check, unless a question sets its own `time_limit`.
DEFAULT_TIME_LIMIT = 10.0
#: After the time limit, the alarm repeats this often until the learner's code has stopped.
_TICK_S = 0.1
#: Ticks the alarm waits for the learner's own code to be running before it interrupts whatever runs.
_GRACE_TICKS = 10

#: Characters of the learner's printed output kept and shown with a verdict; the rest is only counted.
OUTPUT_LIMIT = 2_000

#: Pseudo-file names of code that Python or a library generated: "<string>" is a dataclass's __init__.
_NOT_LEARNER_NAMES = ("<frozen ", "<string>", "<__array_function__")

_COURSE_DIR = os.path.normcase(os.path.dirname(os.path.abspath(__file__)))

_NO_LIMIT_NOTICE = (
    " (No time limit on this system: a function that never returns will block the kernel; "
    "interrupt it with the stop button.)"
)
#: Whether this process has already been told that checks run without a time limit.
_no_limit_told = False
#: What `solution()` says in the handout edition, which ships without the solutions package.
_NO_SOLUTION = (
    "This is the handout edition of the course: solutions are not included (your instructor has the "
    "teacher edition). The hint of question {number} gives a nudge, and its check() says what is not right yet."
)

_short = reprlib.Repr()
_short.maxstring = _short.maxother = 60


class Wrong(Exception):
    """Raised by a checker to tell the learner, in one sentence, what is not right yet."""


class CouldNotCheck(Exception):
    """Raised by a checker when the check could not run (too busy to start processes, say): no fault of the answer."""


class _TimeUp(BaseException):
    """Raised by the alarm past the time limit; a BaseException, so a learner's `except Exception:` lets it by."""


#: A checker receives the learner's value and raises `Wrong` when it is not right.
Checker = Callable[[Any], None]


@dataclass(frozen=True)
class Outcome:
    """The result of checking: right or not, the sentence shown, and what the learner's code printed ("" if nothing)."""

    correct: bool
    message: str
    output: str = ""


def _plain_number(value: Any) -> Any:
    """Python's own number for a numpy scalar, a 0-d numpy array, a Fraction or a Decimal; else `value`.

    The modules are looked up in `sys.modules`, not imported: a value of theirs cannot exist unless they are.
    """
    numpy = sys.modules.get("numpy")
    if numpy is not None and (
        isinstance(value, numpy.generic) or (isinstance(value, numpy.ndarray) and value.ndim == 0)
    ):
        return value.item()
    fractions = sys.modules.get("fractions")
    if fractions is not None and isinstance(value, fractions.Fraction):
        return _whole_or_float(value, value.denominator == 1)
    decimal = sys.modules.get("decimal")
    if decimal is not None and isinstance(value, decimal.Decimal):
        return _whole_or_float(value, value.is_finite() and value == value.to_integral_value())
    return value


def _whole_or_float(value: Any, whole: bool) -> Any:
    """`int(value)` when it is whole, else `float(value)`; `value` itself when it is too large for a float."""
    try:
        return int(value) if whole else float(value)
    except OverflowError:
        return value


def normalise(value: Any, _depth: int = 0) -> Any:
    """`value` with numpy scalars, Fractions and Decimals made Python numbers, also inside lists, tuples and dicts.

    Checkers then compare with plain `isinstance` and `==`. Tensors are left alone (a list of 0-d tensors
    is another answer than a list of floats); containers are rebuilt only when something in them changed.
    """
    value = _plain_number(value)
    if _depth >= 4 or type(value) not in (list, tuple, dict):
        return value
    if type(value) is dict:
        items = {key: normalise(item, _depth + 1) for key, item in value.items()}
        return items if any(items[key] is not value[key] for key in value) else value
    items = [normalise(item, _depth + 1) for item in value]
    if all(new is old for new, old in zip(items, value, strict=True)):
        return value
    return items if type(value) is list else tuple(items)


def _one_element_item(value: Any) -> Any:
    """The Python number in a tensor or array holding exactly one element (0-d or shape (1,)); else `value`."""
    if not (hasattr(value, "ndim") and hasattr(value, "item")) or value.ndim > 1:
        return value
    size = value.numel() if hasattr(value, "numel") else getattr(value, "size", 0)
    if size != 1:
        return value
    try:
        return _plain_number(value.item())
    except (RuntimeError, ValueError):  # a tensor on the meta device has no value to read
        return value


def expect_type(value: Any, kinds: type | tuple[type, ...], what: str) -> Any:
    """Return `value` if it is one of `kinds`, converted where the learner clearly meant that kind; else raise `Wrong`.

    Meant: a one-element tensor or array for a number, an int for a float, a tuple for a list and a list
    for a tuple; a bool is not a number. `what` names the expected kind for the learner.
    """
    kinds = kinds if isinstance(kinds, tuple) else (kinds,)  # `in kinds` below: that type, not a subclass
    value = normalise(value)
    wants_number = int in kinds or float in kinds
    if wants_number and not isinstance(value, kinds):
        value = _one_element_item(value)
    if isinstance(value, bool) and wants_number and bool not in kinds:
        raise Wrong(f"expected {what}, but got a bool: {value!r}")
    if isinstance(value, kinds):
        return value
    if isinstance(value, int) and float in kinds:
        return float(value)
    if isinstance(value, tuple) and list in kinds:
        return list(value)
    if isinstance(value, list) and tuple in kinds:
        return tuple(value)
    raise Wrong(f"expected {what}, but got {_a(type(value).__name__)}: {_short.repr(value)}")


def _a(noun: str) -> str:
    """`noun` with its indefinite article: "an int", "a float" (by the first letter, as type names are read)."""
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"


def expect_number(value: Any, what: str = "a number") -> float:
    """Return `value` as a Python int or float, whatever form of number the learner gave; else raise `Wrong`.

    An int stays an int, so messages show what was given; one too large for a float is refused here,
    before a comparison would overflow.
    """
    number = expect_type(value, (int, float), what)
    try:
        float(number)
    except OverflowError:
        raise Wrong(f"expected {what}, but got a number with {len(str(abs(number)))} digits") from None
    return number


def as_number(value: Any) -> float | None:
    """The number `check()` would accept in `value` (a numpy scalar, a one-element tensor, …) as a float; else None.

    For the cells after a question that use the learner's answer, so that they take what `check()` took.
    """
    try:
        return float(expect_number(value))
    except Wrong:
        return None


def expect_pair(value: Any, call: str, first: str, second: str) -> tuple[float, float]:
    """The two numbers `call` returned, as (`first`, `second`); `Wrong` names what is off (kind, count, type)."""
    pair = expect_type(value, tuple, f"{call} to return ({first}, {second})")
    if len(pair) != 2:
        raise Wrong(f"{call} returned {len(pair)} values; return two: ({first}, {second})")
    return (
        expect_number(pair[0], f"{call}[0], the {first}, to be a number"),
        expect_number(pair[1], f"{call}[1], the {second}, to be a number"),
    )


def expect_function(value: Any, name: str, takes: str = "") -> None:
    """Raise `Wrong` unless `value` is callable; `takes` describes its arguments, e.g. "(major, minor)"."""
    if not callable(value):
        shape = f"taking {takes}" if takes else f"(def {name}(...): ...)"
        raise Wrong(f"`{name}` should be a function {shape}, but it is {_a(type(value).__name__)}")


@functools.cache
def _library_dirs() -> tuple[str, ...]:
    """Folders of installed code (the standard library, site-packages): neither the learner's nor the course's."""
    import site
    import sysconfig

    paths = sysconfig.get_paths()
    found = {paths[key] for key in ("stdlib", "platstdlib", "purelib", "platlib") if key in paths}
    found.update(getattr(site, "getsitepackages", list)())
    return tuple(os.path.normcase(os.path.abspath(p)) + os.sep for p in found)


def _is_learner_file(filename: str) -> bool:
    """Whether code from `filename` is the learner's: a notebook cell or their own file, not the course or a library."""
    if filename.startswith(_NOT_LEARNER_NAMES):
        return False
    if filename.startswith("<"):  # code compiled from a cell or a string the learner ran
        return True
    path = os.path.normcase(os.path.abspath(filename))
    return not path.startswith(_COURSE_DIR + os.sep) and not path.startswith(_library_dirs())


def _learner_line(exc: BaseException) -> int | None:
    """The line, in the learner's code, of the deepest frame of `exc`'s traceback that is theirs."""
    lines = [n for f, n in traceback.walk_tb(exc.__traceback__) if _is_learner_file(f.f_code.co_filename)]
    return lines[-1] if lines else None


class _LearnerCalls:
    """Wraps the learner's functions: their results are normalised, and what they raise is remembered.

    What leaves their function is theirs even when no frame is their code (`math.sqrt` as the answer).
    """

    KINDS = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, functools.partial)

    def __init__(self) -> None:
        self.raised: list[BaseException] = []

    def wrap(self, value: Any) -> Any:
        """`value` wrapped when it is a function; classes and other callables are passed as they are."""
        if not isinstance(value, self.KINDS):
            return value

        @functools.wraps(value)
        def learner_function(*args: Any, **kwargs: Any) -> Any:
            try:
                result = value(*args, **kwargs)
            except BaseException as exc:
                self.raised.append(exc)
                raise
            return normalise(result)

        return learner_function

    def blame(self, exc: BaseException) -> bool:
        """Whether `exc` came from the learner's code rather than from the checker."""
        return any(e is exc for e in self.raised) or _learner_line(exc) is not None


class _CappedText(io.TextIOBase):
    """A write-only text stream that keeps the first `limit` characters and only counts the rest (printing forever)."""

    encoding = "utf-8"

    def __init__(self, limit: int) -> None:
        super().__init__()
        self._room = limit
        self._kept: list[str] = []
        self.dropped = 0

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        kept = text[: self._room]
        if kept:
            self._kept.append(kept)
            self._room -= len(kept)
        self.dropped += len(text) - len(kept)
        return len(text)

    def shown(self) -> str:
        """What is shown with the verdict: the kept text, and how much more there was."""
        text = "".join(self._kept)
        return text + (f"… ({self.dropped:,} more characters)" if self.dropped else "")


def _time_limit_possible() -> bool:
    """Whether an alarm can interrupt the learner's code here: SIGALRM exists and this is the main thread."""
    return (
        hasattr(signal, "SIGALRM")
        and hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGALRM) is not None  # None: a handler set outside Python, not restorable
    )


class _Alarm:
    """The SIGALRM handler: raises `_TimeUp` once the time is up, preferably inside the learner's own code.

    Raising while the checker restores state (a `finally`, a context manager's exit) could leave the kernel
    changed, so it waits, tick by tick, for the learner's code to run, and after `_GRACE_TICKS` raises
    wherever it is. It keeps ticking, so code that swallows one `_TimeUp` gets another.
    """

    def __init__(self) -> None:
        self.active = True
        self.fired = False
        self.ticks = 0

    def __call__(self, signum: int, frame: types.FrameType | None) -> None:
        if not self.active:
            return
        self.ticks += 1
        in_learner_code = frame is not None and _is_learner_file(frame.f_code.co_filename)
        if in_learner_code or self.ticks > _GRACE_TICKS:
            self.fired = True
            raise _TimeUp


def _call_with_limit(run: Callable[[], None], seconds: float, alarm: _Alarm) -> None:
    """Call `run()` with `alarm` raising `_TimeUp` after `seconds`; restore the previous handler and timer."""
    _library_dirs()  # computed now, not first inside the signal handler
    previous_handler = signal.signal(signal.SIGALRM, alarm)
    started = time.monotonic()
    previous_delay, previous_interval = signal.setitimer(signal.ITIMER_REAL, max(seconds, 1e-3), _TICK_S)
    try:
        run()
    finally:
        alarm.active = False  # first, before any call: an alarm from here on does nothing
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous_handler)
        if previous_delay > 0:  # someone else's timer: give it back with the time it had left
            left = max(previous_delay - (time.monotonic() - started), 1e-6)
            signal.setitimer(signal.ITIMER_REAL, left, previous_interval)


@dataclass
class _Attempt:
    """What happened when the checker ran on the learner's value."""

    error: BaseException | None = None
    timed_out: bool = False
    limited: bool = True
    output: str = ""
    calls: _LearnerCalls = field(default_factory=_LearnerCalls)
    checked: str = ""  # which file was checked, and when it was written (file questions)


def _attempt(checker: Checker, answer: Callable[[], Any], seconds: float) -> _Attempt:
    """Run `checker` on `answer()` (which may import the learner's file) with a time limit and captured output.

    Never raises. A function reaches the checker wrapped; `inspect.unwrap` gives the learner's own.
    """
    attempt = _Attempt(limited=_time_limit_possible())
    output = _CappedText(OUTPUT_LIMIT)

    def run() -> None:
        checker(attempt.calls.wrap(normalise(answer())))

    alarm = _Alarm()
    defaults = _torch_defaults()
    try:
        with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
            if attempt.limited:
                _call_with_limit(run, seconds, alarm)
            else:
                run()
    except BaseException as exc:  # _TimeUp (the alarm fired), SystemExit and KeyboardInterrupt become verdicts
        attempt.error = exc
    changed = _restore_torch_defaults(defaults)
    if changed:  # it would outlast the check and change every later cell: named, whatever else happened
        attempt.error = Wrong(
            f"your code changed torch's default {changed} (torch.set_default_...), which lasts for the rest of the "
            "notebook; it is set back now: pass dtype=... or device=... to the calls instead"
        )
    attempt.timed_out = alarm.fired
    attempt.output = output.shown()
    return attempt


def _torch_defaults() -> tuple[Any, Any] | None:
    """torch's default dtype and device, or None when torch is not imported (then nothing can change them)."""
    torch = sys.modules.get("torch")
    return None if torch is None else (torch.get_default_dtype(), torch.get_default_device())


def _restore_torch_defaults(before: tuple[Any, Any] | None) -> str:
    """Set back torch's default dtype and device if the learner's code changed them; what changed ("" if nothing)."""
    after = _torch_defaults()
    if before is None or after is None or after == before:
        return ""
    torch = sys.modules["torch"]
    torch.set_default_dtype(before[0])
    torch.set_default_device(None if before[1] == torch.device("cpu") else before[1])
    return " and ".join(name for name, a, b in zip(("dtype", "device"), before, after, strict=True) if a != b)


def _first_line(exc: BaseException) -> str:
    """The first line of an exception's message, cut to a length that fits a verdict."""
    try:
        text = str(exc).strip()
    except Exception:  # a learner's exception class whose __str__ itself fails
        return ""
    line = text.splitlines()[0] if text else ""
    return line if len(line) <= 200 else line[:200] + "…"


def describe_error(exc: BaseException) -> str:
    """The exception's kind, its line in the learner's code when it was raised there, and its message."""
    line = _learner_line(exc)
    where = f" (line {line} of your code)" if line is not None else ""
    message = _first_line(exc)
    return f"{type(exc).__name__}{where}: {message}" if message else f"{type(exc).__name__}{where}"


def _find_file(file: str) -> str | None:
    """The path of the learner's module `file` on `sys.path` (the chapter's WORK folder), or None."""
    name = file.removesuffix(".py")
    importlib.invalidate_caches()  # the file may have been written a moment ago
    sys.modules.pop(name, None)
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    return spec.origin if spec is not None and spec.origin and spec.origin.endswith(file) else None


def _function_in_file(path: str, file: str, variable: str) -> Any:
    """Import the learner's file afresh and return its `variable`; what goes wrong is a `Wrong` in their terms.

    Fresh, so a file written again is checked as it is now: `_find_file` dropped the module from
    `sys.modules`, and its cached bytecode is deleted here.
    """
    with contextlib.suppress(OSError):
        os.remove(importlib.util.cache_from_source(path))
    try:
        module = importlib.import_module(file.removesuffix(".py"))
    except SyntaxError as exc:
        raise Wrong(f"`{file}` is not valid Python: {exc.msg} (line {exc.lineno})") from None
    except Exception as exc:
        line = _learner_line(exc)
        where = f" at line {line}" if line is not None else ""
        raise Wrong(f"importing `{file}` raised {type(exc).__name__}{where}: {_first_line(exc)}") from None
    value = getattr(module, variable, None)
    if value is Ellipsis:
        raise Wrong(f"`{variable}` in `{file}` is still `...`: replace the dots with your function")
    if value is None:
        raise Wrong(f"`{file}` defines no function `{variable}`: write `def {variable}(...):` in it")
    if not isinstance(value, types.FunctionType):
        raise Wrong(f"`{variable}` in `{file}` should be a function written with `def`, not a {type(value).__name__}")
    return value


def _from_the_course(value: Any) -> bool:
    """Whether `value` is one of the course's own functions (an earlier cell imported it), not the learner's."""
    module = getattr(value, "__module__", None) or ""
    return isinstance(value, types.FunctionType) and module.split(".")[0] == __package__


def _file_age(path: str, file: str) -> str:
    """Which file was checked and how old it is, so a learner who edited its cell without running it sees why."""
    try:
        seconds = max(0.0, time.time() - os.path.getmtime(path))
    except OSError:
        return ""
    age = f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"
    return f" (Checked `{file}` as written {age} ago: if you changed its cell since, run that cell again.)"


@dataclass
class Question:
    """One exercise: what to define, how to check it, a hint and a solution."""

    number: int
    task: str
    variable: str
    checker: Checker
    hint_text: str
    #: The solution, when written here (small examples and tests); else `chapter` says where it is.
    written_solution: str | None = None
    #: Names the notebook provides before this exercise (e.g. `torch`), for running solutions in tests.
    context: Callable[[], dict[str, Any]] = field(default=dict)
    time_limit: float = DEFAULT_TIME_LIMIT
    #: The chapter ("01") whose `helpers.exercises.solutions.chNN` module holds this question's solution.
    chapter: str = ""
    #: The file ("ddp_answer.py") the learner writes the answer into, when other processes must import it.
    file: str = ""
    _namespace: Mapping[str, Any] | None = field(default=None, repr=False)

    def bind(self, namespace: Mapping[str, Any]) -> Question:
        """Remember the namespace (the notebook's `globals()`) that `check()` reads from."""
        self._namespace = namespace
        return self

    def evaluate(self, namespace: Mapping[str, Any], time_limit: float | None = None) -> Outcome:
        """Check the learner's variable in `namespace`, their code limited to `time_limit` s (None: the question's)."""
        seconds = self.time_limit if time_limit is None else time_limit
        if self.file:
            path = _find_file(self.file)
            if path is None:
                return Outcome(
                    False,
                    f"I can't find the file `{self.file}`. Run the cell above that writes it "
                    f"(`%%writefile {{WORK}}/{self.file}`), then check again.",
                )
            attempt = _attempt(self.checker, lambda: _function_in_file(path, self.file, self.variable), seconds)
            is_function = True
            if attempt.error is not None or attempt.timed_out:
                attempt.checked = _file_age(path, self.file)
        else:
            if self.variable not in namespace:
                return Outcome(
                    False,
                    f"I can't find a variable named `{self.variable}`. Define it in a cell above and run that "
                    "cell, then check again.",
                )
            value = namespace[self.variable]
            if value is Ellipsis:
                return Outcome(False, f"`{self.variable}` is still `...`: replace the dots with your answer.")
            if _from_the_course(value):
                return Outcome(
                    False,
                    f"`{self.variable}` is the course's {value.__module__}.{value.__qualname__}, which an earlier "
                    "cell imported, not your function: define it (check the spelling of its name), run that cell, "
                    "then check again.",
                )
            attempt = _attempt(self.checker, lambda: value, seconds)
            is_function = callable(value)
        correct = attempt.error is None and not attempt.timed_out
        message = self._verdict(attempt, is_function, seconds) + attempt.checked + _no_limit_notice(attempt.limited)
        return Outcome(correct, message, attempt.output)

    def _verdict(self, attempt: _Attempt, is_function: bool, seconds: float) -> str:
        """The sentence for the learner: right, what is not right, or what went wrong while checking."""
        name, exc = f"`{self.variable}`", attempt.error
        if attempt.timed_out:
            if is_function and (exc is None or attempt.calls.blame(exc)):
                return f"Your {name} did not return within {seconds:g} s: look for a loop that never ends."
            return f"Checking your {name} did not finish within {seconds:g} s."
        if exc is None:
            return f"Correct! Question {self.number} is done."
        if isinstance(exc, Wrong):
            return f"Not yet: {exc}"
        if isinstance(exc, CouldNotCheck):
            return f"Could not check {name}: {exc}"
        if isinstance(exc, SystemExit):
            code = repr(exc.code) if isinstance(exc.code, int | str) else ("" if exc.code is None else "…")
            return (
                f"Your code called exit() or sys.exit({code}), which would end the program: "
                "give back the answer with `return` instead."
            )
        if isinstance(exc, KeyboardInterrupt):
            return f"Your code was interrupted (KeyboardInterrupt) before {name} could be checked."
        if attempt.calls.blame(exc):
            return f"Your {name} raised {describe_error(exc)}"
        return (
            f"The checker for question {self.number} could not compare your answer "
            f"({type(exc).__name__}: {_first_line(exc)}). This is a bug in the course, not in your answer: "
            "please report it."
        )

    def check(self) -> None:
        """Check the learner's answer and print what their code printed, then the verdict."""
        if self._namespace is None:
            outcome = Outcome(False, "This question is not bound to the notebook: run the exercises setup cell first.")
        else:
            outcome = self.evaluate(self._namespace)
        if outcome.output:
            print("Your code printed:\n" + textwrap.indent(outcome.output.rstrip("\n"), "    "))
        print(("✅ " if outcome.correct else "❌ ") + outcome.message)

    def hint(self) -> None:
        """Print a nudge in the right direction."""
        print(f"💡 Hint: {self.hint_text}")

    @property
    def solution_code(self) -> str | None:
        """One correct answer, imported only when asked for; None in the handout edition, which ships no solutions."""
        if self.written_solution is not None or not self.chapter:
            return self.written_solution
        package = f"{__package__}.exercises.solutions"
        try:
            module = importlib.import_module(f"{package}.ch{self.chapter}")
        except ModuleNotFoundError as exc:
            if exc.name == package:  # the handout edition: no solutions package at all
                return None
            raise
        return module.SOLUTIONS[self.number]

    def solution(self) -> None:
        """Print one correct answer, or say that this edition has none; never raises."""
        try:
            code = self.solution_code
        except Exception as exc:  # a broken solutions module must not break the learner's notebook
            print(
                f"The solution to question {self.number} could not be loaded ({type(exc).__name__}: {exc}). "
                "This is a bug in the course: please report it."
            )
            return
        if code is None:
            print(_NO_SOLUTION.format(number=self.number))
            return
        where = f" (the file {self.file})" if self.file else ""
        print(f"One solution{where}:\n\n" + textwrap.indent(code.strip(), "    "))

    def __repr__(self) -> str:
        where = f" in the file {self.file}" if self.file else ""
        then = f"then run q{self.number}.check()"
        return f"Question {self.number}: {self.task}\n(define `{self.variable}`{where}, {then})"


def _no_limit_notice(limited: bool) -> str:
    """The notice that checks here run without a time limit, the first time only (then "")."""
    global _no_limit_told
    if limited or _no_limit_told:
        return ""
    _no_limit_told = True
    return _NO_LIMIT_NOTICE


def load_exercises(chapter: str, namespace: Mapping[str, Any]) -> types.SimpleNamespace:
    """Chapter `chapter`'s questions as `q1`, `q2`, ... bound to the notebook's namespace (`globals()`)."""
    chapter = str(chapter).zfill(2)
    try:
        module = importlib.import_module(f"helpers.exercises.ch{chapter}")
    except ModuleNotFoundError:
        raise ValueError(f"there are no exercises for chapter {chapter!r}; chapters are named like '01'") from None
    questions: list[Question] = module.QUESTIONS
    return types.SimpleNamespace(**{f"q{q.number}": q.bind(namespace) for q in questions})
