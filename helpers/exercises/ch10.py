"""Chapter 10 exercises: arithmetic intensity, the roof that binds, a layer's FLOPs and bytes, timing, roofline time."""

import math
import time
from typing import Any

from ..answers import Wrong, expect_function, expect_number, expect_pair, expect_type
from ..gpu_specs import by_short_name
from .cases import Slip, questions, show, table
from .ch11 import TimedDevice

_AXPY = {2 / 12: "", 2 / 3: "count bytes, not elements: a float32 element is 4 bytes"}  # a*x + y's FLOP/byte; slips
_AXPY[2 / 8] = "2 FLOPs per 8 bytes, or 3 per 12? a*x + y is 2 FLOPs an element; x and y are read, y is written back"
_AXPY[1 / 12] = "1 FLOP per 12 bytes, or 2 per 24? a*x + y is 2 FLOPs an element, and a float32 is 4 bytes"
_AXPY[1 / 8] = "2 FLOPs per 16 bytes (a read of a or a write-allocate read of y), or 1 per 8 (y's write left out)?"


def _check_axpy_intensity(value: Any) -> None:
    got = expect_number(value, "a number of FLOPs per byte")
    if (says := next((s for x, s in _AXPY.items() if math.isclose(got, x, rel_tol=0.02)), None)) != "":
        raise Wrong(says or f"{show(got)} FLOP/byte is not it: count the FLOPs and the bytes moved for one element")


_RIDGE = by_short_name("T4").fp32_tflops * 1e3 / by_short_name("T4").bandwidth_gbs  # 25.3: 1/12, 0.5 under; 1024/6 over
_BOUNDS = {"vector add": "memory", "matmul n=1024": "compute", "linear 4096→4096, batch 1": "memory"}


def _check_t4_bounds(value: Any) -> None:
    given = expect_type(value, dict, 'a dict such as {"vector add": "memory", ...}')
    for key, right in _BOUNDS.items():
        if str(given.get(key)).strip().lower().removesuffix("bound").rstrip(" -") != right:
            said = show(given[key]) if key in given else f"missing (the keys given: {show(list(given))})"
            why = f"'memory' or 'compute', by its FLOP/byte against the ridge, {_RIDGE:.3g}"
            raise Wrong(f"t4_bounds[{key!r}] is {said}; expected the roof that binds on a T4 in FP32: {why}")


class _Either(frozenset):  # equal to each of its numbers: the question allows both, or a slip may drop any one term
    __eq__ = lambda self, other: other in tuple(self)
    __repr__ = lambda self: " or ".join(map(show, sorted(self)))


def _cost(b: int, i: int, o: int, size: int, per_fma: int = 2, one_out: bool = False) -> tuple[_Either, Any]:
    flops, moved = per_fma * b * i * o, [size * n for n in (b * i, o * i, o, b * o)]  # x, the weight, bias, output
    return _Either((flops, flops + b * o)), _Either(sum(moved) - m for m in moved) if one_out else sum(moved)


_LINEAR = [(3, 5, 8, 2), (1, 4096, 4096, 2), (8, 64, 256, 4), (512, 1000, 1024, 1), (1, 2, 3, 4), (3, 5, 8, 1)]
_SLIPS = [  # for _LINEAR: every term apart and bytes not a multiple of 4 (the first), batch 1, itemsize 1, 2 and 4
    Slip(lambda b, i, o, s: _cost(b, i, o, s, 1), "a multiply-add is 2 FLOPs (a multiply and an add)"),
    Slip(lambda b, i, o, s: _cost(b, i, o, 1), "that counts elements; multiply by itemsize for bytes"),
    Slip(lambda b, i, o, s: _cost(b, i, o, 4), "that is 4 bytes an element, whatever itemsize is: multiply by it"),
    Slip(lambda b, i, o, s: _cost(b, i, o, s, 2, True), "a term is missing: count x, w, b and the output once each"),
]
_pair = lambda value, call: expect_pair(value, call, "flops", "bytes")
_check_linear_cost = table("linear_cost", "(batch, d_in, d_out, itemsize)", _LINEAR, _cost, slips=_SLIPS, answer=_pair)


def _check_achieved_tflops(fn: Any) -> None:
    expect_function(fn, "achieved_tflops", "(fn, flops, sync, repeats)")
    for seconds, flops, repeats in ((0.004, 4e10, 10), (0.005, 2e10, 4), (0.02, 6e10, 1)):  # no constant passes
        gpu, call = TimedDevice(seconds), f"achieved_tflops(fn, {flops:g}, sync, {repeats})"
        got = expect_number(gpu.run(fn, gpu.fn, flops, gpu.sync, repeats), f"{call} to return a number of TFLOP/s")
        per_call = flops / got / 1e12 if got > 0 else math.inf  # no time is zero or less
        said = f"{call} returned {show(got)} TFLOP/s" + f", which makes {show(per_call)} s a call" * (got > 0)
        gpu.judge(said, per_call, repeats, range(4), {1e-3: "that is GFLOP/s", 1e-12: "that is FLOP/s, not TFLOP/s"})


_time = lambda flops, nbytes, peak, bandwidth, pick=max: pick(flops / (peak * 1e12), nbytes / (bandwidth * 1e9))
_ROOFS = [(1e7, 1.2e8, 8.1, 320.0), (2 * 4096.0**3, 6 * 4096.0**2, 65.0, 320.0), (10**12, 4 * 10**10, 10, 400)]
_ROOFS += [(2 * 512.0**3, 12 * 512.0**2, 0.05, 12.0), (1e6, 4e8, 8.1, 320.0), (1, 64, 8.1, 320.0)]
_MISSES = [  # _ROOFS: memory- and compute-bound, on the ridge (whole numbers), a CPU, almost all traffic, 0.2 ns
    Slip(lambda *c: _time(*c, min), "that equals the shorter of the two times; they overlap: the longer one sets it"),
    Slip(lambda *c: _time(*c, float.__add__), "that adds the two times; they overlap, so the longer one sets the time"),
    Slip(lambda *c: 1e3 * _time(*c), "that is milliseconds; return seconds"),
]
_check_roofs = table("roofline_seconds", "(flops, nbytes, peak_tflops, bandwidth_gbs)", _ROOFS, _time, slips=_MISSES)

_TEXTS = {  # each question's variable: its task, then (after a newline) its hint; `_CHECKS` in the same order
    "axpy_intensity": "Set `axpy_intensity` to the FLOPs per byte of `y = a * x + y` on float32 vectors (a is a "
    "scalar).\nPer element: how many FLOPs? How many 4-byte reads (x, y) and writes (y)?",
    "t4_bounds": 'Set `t4_bounds` to "memory" or "compute" for "vector add", "matmul n=1024" and "linear 4096→4096, '
    'batch 1" on a T4 in FP32.\nCompare each FLOP/byte (1/12, n/6, about 0.5) with fp32_tflops × 1000 / bandwidth_gbs.',
    "linear_cost": "Write `linear_cost(batch, d_in, d_out, itemsize)`: (flops, least bytes) of F.linear(x, w, b).\n"
    "batch×d_out dot products of d_in pairs, 2 FLOPs a multiply-add; read x, w and b, write the output, once each.",
    "achieved_tflops": "Write `achieved_tflops(fn, flops, sync, repeats)`: TFLOP/s a call over `repeats` calls.\n"
    "sync(); start = time.perf_counter(); the calls; sync(); stop; flops / seconds a call / 1e12.",
    "roofline_seconds": "Write `roofline_seconds(flops, nbytes, peak_tflops, bandwidth_gbs)`: the least time, in s.\n"
    "flops / (peak_tflops × 10^12) of arithmetic and nbytes / (bandwidth_gbs × 10^9) of traffic overlap.",
}
_CHECKS = (_check_axpy_intensity, _check_t4_bounds, _check_linear_cost, _check_achieved_tflops, _check_roofs)
QUESTIONS = questions("10", _TEXTS, _CHECKS, context=lambda: {"by_short_name": by_short_name, "time": time})
