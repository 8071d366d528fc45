"""Running a learner's code for a check: a time limit, captured output, and whose code raised what.

The learner's code runs with a time limit (SIGALRM, where there is one) that interrupts it preferably inside
their own code; what it prints is kept up to `OUTPUT_LIMIT` characters; an error is theirs when it left their
function or one of their frames raised it; a change to torch's defaults, grad mode or autocast is set back and named.
An answer another process must run is a file the learner wrote, imported fresh from the chapter's WORK folder."""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import io
import linecache
import os
import signal
import sys
import threading
import time
import traceback
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .answers import Wrong, normalise

#: Seconds the learner's code may run during one check, unless a question sets its own `time_limit`.
DEFAULT_TIME_LIMIT = 10.0
#: After the time limit, the alarm repeats this often until the learner's code has stopped.
_TICK_S = 0.1
#: Ticks the alarm waits for the learner's own code to be running before it interrupts whatever runs.
_GRACE_TICKS = 10

#: Characters of the learner's printed output kept and shown with a verdict; the rest is only counted.
OUTPUT_LIMIT = 2_000

#: What each of `_torch_defaults` is called in a message, with what to do instead.
_SAID = ("default dtype (pass dtype=... to the calls instead)", "default device (pass device=... to the calls instead)")
_SAID += ("grad mode (off only in `with torch.no_grad():`)", "autocast (on only in `with torch.autocast(...):`)")
#: Pseudo-file names of code that Python or a library generated: "<string>" is a dataclass's __init__.
_NOT_LEARNER_NAMES = ("<frozen ", "<string>", "<__array_function__")

_COURSE_DIR = os.path.normcase(os.path.dirname(os.path.abspath(__file__)))


class _TimeUp(BaseException):
    """Raised by the alarm past the time limit; a BaseException, so a learner's `except Exception:` lets it by."""


#: A checker receives the learner's value and raises `Wrong` when it is not right.
Checker = Callable[[Any], None]


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


def _learner_line(exc: BaseException) -> str | None:
    """Where the learner's deepest frame in `exc`'s traceback is: "line N of your code" (a cell) or "… of name.py"."""
    found = [(f.f_code.co_filename, n) for f, n in traceback.walk_tb(exc.__traceback__)]
    name, line = next(((f, n) for f, n in reversed(found) if _is_learner_file(f)), (None, None))
    cell = name is None or name.startswith("<") or os.path.basename(os.path.dirname(name)).startswith("ipykernel_")
    return None if name is None else f"line {line} of " + ("your code" if cell else os.path.basename(name))


class _LearnerCalls:
    """Wraps the learner's functions: their results are normalised, and what they raise is remembered.

    What leaves their function is theirs even when no frame is their code (`math.sqrt` as the answer)."""

    KINDS = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, functools.partial)

    def __init__(self) -> None:
        self.raised: list[BaseException] = []
        self.changed = ""  # torch's defaults or grad mode a call changed (each set back at once)

    def wrap(self, value: Any) -> Any:
        """`value` wrapped when it is a function; classes and other callables are passed as they are."""
        if not isinstance(value, self.KINDS):
            return value

        @functools.wraps(value)
        def learner_function(*args: Any, **kwargs: Any) -> Any:
            before = _torch_defaults()  # a later call (or the check's end) must not hide a change
            try:
                result = value(*args, **kwargs)
            except BaseException as exc:
                self.raised.append(exc)
                raise
            finally:
                self.changed = _restore_torch_defaults(before) or self.changed
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
    wherever it is. It keeps ticking, so code that swallows one `_TimeUp` gets another."""

    def __init__(self) -> None:
        self.active, self.fired, self.ticks = True, False, 0

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
class Attempt:
    """What happened when the checker ran on the learner's value."""

    error: BaseException | None = None
    timed_out: bool = False
    limited: bool = True
    output: str = ""
    calls: _LearnerCalls = field(default_factory=_LearnerCalls)
    checked: str = ""  # which file was checked, and when it was written (file questions)


def run_checker(checker: Checker, answer: Callable[[], Any], seconds: float) -> Attempt:
    """Run `checker` on `answer()` (which may import the learner's file) with a time limit and captured output.

    Never raises. A function reaches the checker wrapped; `inspect.unwrap` gives the learner's own."""
    attempt = Attempt(limited=_time_limit_possible())
    output = _CappedText(OUTPUT_LIMIT)

    def run() -> None:
        checker(attempt.calls.wrap(normalise(answer())))

    alarm = _Alarm()
    torch, notebooks = sys.modules.get("torch"), _torch_defaults()  # the check runs with torch's own, then these
    off = torch and ((False, torch.bfloat16), (False, torch.float16), 0)  # autocast off (CPU, CUDA), no block open
    standard = torch and (torch.float32, torch.device("cpu"), True, off)
    _restore_torch_defaults(standard)
    random_state = torch.get_rng_state() if torch else None  # checks seed torch; the notebook's draws go on unchanged
    try:
        with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
            if attempt.limited:
                _call_with_limit(run, seconds, alarm)
            else:
                run()
    except BaseException as exc:  # _TimeUp (the alarm fired), SystemExit and KeyboardInterrupt become verdicts
        attempt.error = exc
    if random_state is not None:
        torch.set_rng_state(random_state)
    changed = _restore_torch_defaults(standard) or attempt.calls.changed
    _restore_torch_defaults(notebooks)
    if changed:  # it would outlast the check and change every later cell: named, whatever else happened
        attempt.error = Wrong(f"your code changed torch's {changed}, which would outlast the check: it is set back now")
    attempt.timed_out = alarm.fired
    attempt.output = output.shown()
    return attempt


def _torch_defaults() -> tuple[Any, ...] | None:
    """torch's default dtype and device, grad mode, autocast (CPU, CUDA, blocks open); None if torch is not imported."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    try:
        device = torch.get_default_device()
    except Exception:  # a default without an index (set_default_device("mps")) on a machine that cannot make one
        device = "a device this machine cannot use"
    autocast = tuple((torch.is_autocast_enabled(k), torch.get_autocast_dtype(k)) for k in ("cpu", "cuda"))
    nesting = torch.autocast_increment_nesting() - 1  # how many autocast blocks are open: torch has no getter
    torch.autocast_decrement_nesting()
    return torch.get_default_dtype(), device, torch.is_grad_enabled(), (*autocast, nesting)


def _restore_torch_defaults(before: tuple[Any, ...] | None) -> str:
    """Set torch's defaults, grad mode and autocast to `before`; what differed from it ("" if nothing)."""
    after = _torch_defaults()
    if before is None or after is None:  # else set back even if equal: set_default_device("cpu") leaves a mode
        return ""
    torch = sys.modules["torch"]
    torch.set_default_dtype(before[0])
    torch.set_default_device(before[1] if isinstance(before[1], torch.device) and before[1].type != "cpu" else None)
    torch.set_grad_enabled(before[2])
    for kind, (on, dtype) in zip(("cpu", "cuda"), before[3][:2], strict=True):  # autocast: on or off, and its dtype
        torch.set_autocast_enabled(kind, on), torch.set_autocast_dtype(kind, dtype)
    for _ in range(after[3][2] - before[3][2]):  # autocast blocks entered, never left: left as their exit would,
        torch.autocast_decrement_nesting() or torch.clear_autocast_cache()  # else their casts of weights outlive it
    for _ in range(before[3][2] - after[3][2]):  # blocks open around the check (it runs with none): open again
        torch.autocast_increment_nesting()
    return " and ".join(name for name, a, b in zip(_SAID, before, after, strict=True) if a != b)


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message, cut to a length that fits a verdict."""
    try:
        text = str(exc).strip()
    except Exception:  # a learner's exception class whose __str__ itself fails
        return ""
    line = text.splitlines()[0] if text else ""
    return line if len(line) <= 200 else line[:200] + "…"


def describe_error(exc: BaseException) -> str:
    """The exception's kind, its line in the learner's code when it was raised there, and its message."""
    where = f" ({line})" if (line := _learner_line(exc)) is not None else ""
    return f"{type(exc).__name__}{where}" + (f": {message}" if (message := first_line(exc)) else "")


def find_answer_file(file: str) -> str | None:
    """The path of the learner's module `file` on `sys.path` (the chapter's WORK folder), or None."""
    name = file.removesuffix(".py")
    importlib.invalidate_caches()  # the file may have been written a moment ago
    sys.modules.pop(name, None)
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    return spec.origin if spec is not None and spec.origin and spec.origin.endswith(file) else None


def import_answer_file(path: str, file: str, variable: str) -> Any:
    """Import the learner's file as it is now (`find_answer_file` dropped its module; its bytecode and the lines
    tracebacks and warnings quote go here) and return its `variable`; what goes wrong is a `Wrong` in their terms."""
    linecache.checkcache(path)
    with contextlib.suppress(OSError):
        os.remove(importlib.util.cache_from_source(path))
    try:
        module = importlib.import_module(file.removesuffix(".py"))
    except SyntaxError as exc:
        raise Wrong(f"`{file}` is not valid Python: {exc.msg} (line {exc.lineno})") from None
    except Exception as exc:
        where = f" at {line}" if (line := _learner_line(exc)) is not None else ""
        raise Wrong(f"importing `{file}` raised {type(exc).__name__}{where}: {first_line(exc)}") from None
    value = getattr(module, variable, None)
    if value is Ellipsis:
        raise Wrong(f"`{variable}` in `{file}` is still `...`: replace the dots with your function")
    if value is None:
        raise Wrong(f"`{file}` defines no function `{variable}`: write `def {variable}(...):` in it")
    if not isinstance(value, types.FunctionType):
        raise Wrong(f"`{variable}` in `{file}` should be a function written with `def`, not a {type(value).__name__}")
    return value


def answer_file_age(path: str, file: str) -> str:
    """Which file was checked and how old it is, so a learner who edited its cell without running it sees why."""
    try:
        seconds = max(0.0, time.time() - os.path.getmtime(path))
    except OSError:
        return ""
    age = f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"
    return f" (Checked `{file}` as written {age} ago: if you changed its cell since, run that cell again.)"
