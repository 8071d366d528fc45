"""Chapter 10 exercises: arithmetic intensity, which roof binds on a T4, counting a layer's FLOPs and
bytes, timing work on an asynchronous device, and predicting an operation's time from the roofs."""

from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass
from typing import Any

from ..answers import Wrong, expect_function, expect_number, expect_pair, expect_type
from ..checking import Question
from ..gpu_specs import by_short_name
from .cases import Slip, show, table
from .ch11 import TimedDevice

#: y = a*x + y on float32 vectors: its intensity ("" below) and what the chapter's slips make of it.
_AXPY = {2 / 12: "", 2 / 3: "count bytes, not elements: a float32 element is 4 bytes", 2 / 8: "y is written back too"}
_AXPY[1 / 12] = "1 FLOP per 12 bytes, or 2 per 24? a*x + y is 2 FLOPs an element, and a float32 is 4 bytes"
_AXPY[1 / 8] = "2 FLOPs per 16 bytes (a read per element: a is a scalar), or 1 per 8 (an add and y's write left out)?"


def _check_axpy_intensity(value: Any) -> None:
    got = expect_number(value, "a number of FLOPs per byte")
    says = next((says for x, says in _AXPY.items() if math.isclose(got, x, rel_tol=0.02)), None)
    if says != "":
        raise Wrong(says or f"{show(got)} FLOP/byte is not it: count the FLOPs and the bytes moved for one element")


_RIDGE = by_short_name("T4").fp32_tflops * 1e3 / by_short_name("T4").bandwidth_gbs
#: Question 2's float32 operations by their intensities (FLOPs over least bytes), and the roof each meets.
_INTENSITY = {"vector add": 1 / 12, "matmul n=1024": 1024 / 6, "linear 4096→4096, batch 1": 2 / (4 + 12 / 4096)}
_BOUNDS = {key: "memory" if intensity < _RIDGE else "compute" for key, intensity in _INTENSITY.items()}


def _check_t4_bounds(value: Any) -> None:
    given = expect_type(value, dict, 'a dict such as {"vector add": "memory", ...}')
    for key, right in _BOUNDS.items():
        word = str(given.get(key)).strip().lower().removesuffix("bound").rstrip(" -")
        said = show(given[key]) if key in given else f"missing (the keys given: {show(list(given))})"
        if word not in ("memory", "compute"):
            raise Wrong(f"t4_bounds[{key!r}] is {said}: write 'memory' or 'compute'")
        if word != right:
            raise Wrong(f"{key!r} is not {word}-bound on a T4 in FP32: compare its FLOP/byte with {_RIDGE:.3g}")


@dataclass(frozen=True)
class _Flops:
    """F.linear's FLOPs: 2 a multiply-add, with or without the `bias` additions (the question allows both)."""

    bare: int
    bias: int

    def __eq__(self, other: object) -> bool:
        return other in (self.bare, self.bare + self.bias)

    def __repr__(self) -> str:
        return f"{show(self.bare)} (or {show(self.bare + self.bias)} with the bias)"


#: What F.linear reads or writes once, in elements of (batch, d_in, d_out).
_TERMS = {"x": lambda b, i, o: b * i, "the weight": lambda b, i, o: o * i, "the bias": lambda b, i, o: o}
_TERMS["the output"] = lambda b, i, o: b * o


def _cost(b: int, i: int, o: int, size: int, per_fma: int = 2, without: str = "") -> tuple[_Flops, int]:
    return _Flops(per_fma * b * i * o, b * o), size * sum(n(b, i, o) for t, n in _TERMS.items() if t != without)


_check_linear_cost = table(
    "linear_cost",
    "(batch, d_in, d_out, itemsize)",
    [(3, 5, 7, 2), (1, 4096, 4096, 2), (8, 64, 256, 4), (512, 1000, 1024, 1), (1, 2, 3, 4)],  # the first tells
    _cost,  # every term apart; batch 1; itemsize 1, 2 and 4
    answer=lambda value, call: expect_pair(value, call, "flops", "bytes"),
    rel=0,
    slips=(
        Slip(lambda b, i, o, s: _cost(b, i, o, s, 1), "a multiply-add is 2 FLOPs (a multiply and an add)"),
        Slip(lambda b, i, o, s: _cost(b, i, o, 1), "that counts elements; multiply by itemsize for bytes"),
        *(Slip(functools.partial(_cost, without=t), f"{t} is missing from the bytes: count it once") for t in _TERMS),
    ),
)


def _check_achieved_tflops(fn: Any) -> None:
    expect_function(fn, "achieved_tflops", "(fn, flops, sync, repeats)")
    for seconds, flops, repeats in ((0.004, 4e10, 10), (0.005, 2e10, 4), (0.02, 6e10, 1)):  # no constant passes
        gpu, call = TimedDevice(seconds), f"achieved_tflops(fn, {flops:g}, sync, {repeats})"
        got = expect_number(gpu.run(fn, gpu.fn, flops, gpu.sync, repeats), f"{call} to return a number of TFLOP/s")
        per_call = flops / got / 1e12 if got > 0 else math.inf  # no time is zero or less
        said = f"{call} returned {show(got)} TFLOP/s" + f", {show(per_call)} s a call" * (got > 0)
        gpu.judge(said, per_call, repeats, range(4), {1e-3: "that is GFLOP/s, not TFLOP/s"})


def _times(flops: float, nbytes: float, peak: float, bandwidth: float) -> tuple[float, float]:
    return flops / (peak * 1e12), nbytes / (bandwidth * 1e9)


_check_roofline_seconds = table(
    "roofline_seconds",
    "(flops, nbytes, peak_tflops, bandwidth_gbs)",
    # Memory-bound, compute-bound, exactly on the ridge (in whole numbers), a CPU's roofs.
    [(1e7, 1.2e8, 8.1, 320.0), (2 * 4096.0**3, 6 * 4096.0**2, 65.0, 320.0), (10**12, 4 * 10**10, 10, 400)]
    + [(2 * 512.0**3, 12 * 512.0**2, 0.05, 12.0)],
    lambda *case: max(_times(*case)),
    slips=(
        Slip(lambda *c: min(_times(*c)), "that is the shorter of the two times; the longer one sets the least time"),
        Slip(lambda *c: sum(_times(*c)), "that adds the two times; they overlap, so the longer one sets the time"),
    ),
)

#: Each question's variable, and its task and hint (after a newline); `_CHECKS` checks them, in order.
_TEXTS = {
    "axpy_intensity": "Set `axpy_intensity` to the arithmetic intensity (FLOP per byte) of `y = a * x + y` on float32 "
    "vectors (a is a scalar; x and y are read, y is written back).\nPer element: how many FLOPs? How many 4-byte "
    "reads and writes?",
    "t4_bounds": 'Set `t4_bounds` to a dict saying "memory" or "compute" (the roof that binds on a T4 in FP32) for '
    '"vector add", "matmul n=1024" and "linear 4096→4096, batch 1".\nCompare each intensity (a vector add 1/12, an '
    "n×n matmul n/6, a weight matrix times one vector about 0.5) with fp32_tflops × 1000 / bandwidth_gbs.",
    "linear_cost": "Write `linear_cost(batch, d_in, d_out, itemsize)`: (flops, least bytes) of F.linear(x, w, b), 2 "
    "FLOPs per multiply-add.\nbatch×d_out dot products of d_in pairs; read x, w and b, write the output, once each.",
    "achieved_tflops": "Write `achieved_tflops(fn, flops, sync, repeats)`: time `repeats` calls of fn(), with sync() "
    "before each clock read; TFLOP/s a call.\nsync(); start = time.perf_counter(); the calls; sync(); stop; "
    "flops / seconds a call / 1e12.",
    "roofline_seconds": "Write `roofline_seconds(flops, nbytes, peak_tflops, bandwidth_gbs)`: the least time, in "
    "seconds.\nflops / (peak_tflops × 10^12) of arithmetic and nbytes / (bandwidth_gbs × 10^9) of traffic overlap.",
}
#: The names the notebook gives the solutions.
_CONTEXT = {"by_short_name": by_short_name, "time": time}
_CHECKS = (_check_axpy_intensity, _check_t4_bounds, _check_linear_cost, _check_achieved_tflops, _check_roofline_seconds)
QUESTIONS = [
    Question(n, task, name, check, hint, chapter="10", context=_CONTEXT.copy)
    for n, ((name, text), check) in enumerate(zip(_TEXTS.items(), _CHECKS, strict=True), 1)
    for task, hint in [text.split("\n")]
]
