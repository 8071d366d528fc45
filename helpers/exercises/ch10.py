"""Chapter 10 exercises: arithmetic intensity, the cheapest GPU for a run, a layer's FLOPs and bytes, least time."""

import math
from typing import Any

from ..answers import Wrong, expect_number, expect_pair, expect_type
from ..gpu_specs import by_short_name
from .cases import Slip, questions, show, table

_AXPY = {2 / 12: "", 2 / 3: "count bytes, not elements: a float32 element is 4 bytes"}  # a*x + y's FLOP/byte; slips
_AXPY[2 / 8] = "2 FLOPs per 8 bytes, or 3 per 12? a*x + y is 2 FLOPs an element; x and y are read, y is written back"
_AXPY[1 / 12] = "1 FLOP per 12 bytes, or 2 per 24? a*x + y is 2 FLOPs an element, and a float32 is 4 bytes"
_AXPY[1 / 8] = "2 FLOPs per 16 bytes (a read of a or a write-allocate read of y), or 1 per 8 (y's write left out)?"


def _check_axpy_intensity(value: Any) -> None:
    got = expect_number(value, "a number of FLOPs per byte")
    if (says := next((s for x, s in _AXPY.items() if math.isclose(got, x, rel_tol=0.02)), None)) != "":
        raise Wrong(says or f"{show(got)} FLOP/byte is not it: count the FLOPs and the bytes moved for one element")


def _cheapest(w: dict, p: dict, memory: float = 0.9, acts: int = 4, peak: Any = None, cost: Any = None) -> Any:
    fits = [s for s in map(by_short_name, p) if _gb(w, 2 if s.tensor_tflops else acts) <= memory * s.memory_gb]
    return (best := min(fits, key=cost or (lambda s: p[s.short] / (peak or _peak)(s)), default=None)) and best.short


_peak = lambda s: s.tensor_tflops or s.fp32_tflops  # the peak of the best format it runs (FP32 without tensor cores)
_gb = lambda w, act: (16 * w["params"] + 17 * act * w["seq"] * w["batch"] * w["hidden"] * w["layers"]) / 1e9
_W1 = dict(task="train", params=1.2e8, layers=12, hidden=768, seq=1024, batch=32, tokens=2.4e9)
_W2 = dict(_W1, params=1.1e9, layers=22, hidden=2048, seq=2048, batch=4, tokens=2e8)
_BUY = [(_W1, {"T4": 0.3, "P100": 0.01, "L4": 0.8, "A100": 1.6, "H100": 6, "RTX 3080": 0.02})]
_BUY += [(_W2, {"A100 40GB": 0.9, "L40S": 1, "H100": 1.5, "RTX 4090": 0.2}), (_W1, {"T4": 0.3, "H100": 4})]
_BUY += [(dict(_W1, batch=8), {"T4": 0.3, "P100": 0.01}), (dict(_W2, seq=3072, batch=1), {"RTX 4090": 0.2})]
_BUY += [(dict(_W2, batch=1), {"L4": 0, "RTX 3090": 0.2, "RTX 4090": 0.5}), (_W1, {"T4": 0.3, "H100": 4.59})]
_PICKS = [  # _BUY's first case shows each but the hour apart from the right card; the second all but the activations
    Slip(lambda w, p: _cheapest(w, p, acts=2), "a card without 16-bit tensor cores keeps 4-byte activations"),
    Slip(lambda w, p: _cheapest(w, p, memory=1e9), "that card cannot hold it: HEADROOM × memory_gb < section 2's GB"),
    Slip(lambda w, p: _cheapest(w, p, cost=lambda s: p[s.short]), "the cheapest hour; a run costs price × exact hours"),
    Slip(lambda w, p: _cheapest(w, p, cost=lambda s: -_peak(s)), "the fastest card; a run costs price × exact hours"),
    Slip(lambda w, p: _cheapest(w, p, peak=lambda s: s.fp32_tflops), "FP32 peaks? Each card trains in its best format"),
]
_name = lambda v, call: v if v is None else expect_type(v, str, f"{call} to return a GPU's short name or None")
_check_cheapest = table("cheapest_gpu", "(workload, prices)", _BUY, _cheapest, slips=_PICKS, answer=_name)


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


_time = lambda flops, nbytes, peak, bandwidth, pick=max: pick(flops / (peak * 1e12), nbytes / (bandwidth * 1e9))
_ROOFS = [(1e7, 1.2e8, 8.1, 320.0), (2 * 4096.0**3, 6 * 4096.0**2, 65.0, 320.0), (10**12, 4 * 10**10, 10, 400)]
_ROOFS += [(2 * 512.0**3, 12 * 512.0**2, 0.05, 12.0), (0, 4e8, 8.1, 320.0), (1, 64, 8.1, 320.0)]
_MISSES = [  # _ROOFS: memory- and compute-bound, on the ridge (whole numbers), a CPU, a copy (no FLOPs), 0.2 ns
    Slip(lambda *c: _time(*c, min), "that equals the shorter of the two times; they overlap: the longer one sets it"),
    Slip(lambda *c: _time(*c, float.__add__), "that adds the two times; they overlap, so the longer one sets the time"),
    Slip(lambda *c: 1e3 * _time(*c), "that is milliseconds; return seconds"),
]
_check_roofs = table("roofline_seconds", "(flops, nbytes, peak_tflops, bandwidth_gbs)", _ROOFS, _time, slips=_MISSES)

_TEXTS = {  # each question's variable: its task, then (after a newline) its hint; `_CHECKS` in the same order
    "axpy_intensity": "Set `axpy_intensity` to the FLOPs per byte of `y = a * x + y` on float32 vectors (a is a "
    "scalar).\nPer element: how many FLOPs? How many 4-byte reads (x, y) and writes (y)?",
    "cheapest_gpu": "Write `cheapest_gpu(workload, prices)`: the short name of the GPU in `prices` ({short name: $ an "
    "hour}) that runs the training `workload` (a dict as in section 2) for the least money; None if none fits.\n"
    "Fits: section 2's GB (4-byte activations without tensor cores) ≤ 0.9 (HEADROOM) × memory_gb; cost: price × hours",
    "linear_cost": "Write `linear_cost(batch, d_in, d_out, itemsize)`: (flops, least bytes) of F.linear(x, w, b).\n"
    "batch×d_out dot products of d_in pairs, 2 FLOPs a multiply-add; read x, w and b, write the output, once each.",
    "roofline_seconds": "Write `roofline_seconds(flops, nbytes, peak_tflops, bandwidth_gbs)`: the least time, in s.\n"
    "flops / (peak_tflops × 10^12) of arithmetic and nbytes / (bandwidth_gbs × 10^9) of traffic overlap.",
}
_CHECKS = (_check_axpy_intensity, _check_cheapest, _check_linear_cost, _check_roofs)
_CONTEXT = {"by_short_name": by_short_name, "HEADROOM": 0.9, "MFU": 0.4}  # names the questions' text uses
QUESTIONS = questions("10", _TEXTS, _CHECKS, context=lambda: dict(_CONTEXT))
