"""Chapter 10 exercises: arithmetic intensity, which roof binds on a T4, counting a layer's FLOPs and
bytes, timing work on an asynchronous device, and predicting an operation's time from the roofs (the
transfer question: the notebook then measures it)."""

from __future__ import annotations

import math
import time
from typing import Any

from ..checking import Question, Wrong, expect_function, expect_number, expect_pair, expect_type
from ..gpu_specs import by_short_name
from ..standins import PretendAsyncDevice
from .calls import cpu_clocks_read

#: y = a*x + y in float32: a multiply and an add per element (2 FLOPs); read x, read y, write y (12 bytes).
AXPY_INTENSITY = 2 / 12


def _number(value: Any, what: str) -> float:
    return float(expect_number(value, what))


def _check_axpy(value: Any) -> None:
    x = _number(value, "a number of FLOPs per byte")
    if math.isclose(x, AXPY_INTENSITY, rel_tol=0.02):
        return
    if math.isclose(x, 2 / 8, rel_tol=0.02):
        raise Wrong("you counted reading x and y but not writing y back: that is a third 4-byte access")
    if math.isclose(x, 1 / 12, rel_tol=0.02):
        raise Wrong("a*x + y is two operations per element (a multiply and an add), not one")
    if math.isclose(x, 2 / 3, rel_tol=0.02):
        raise Wrong("count bytes, not elements: each float32 element is 4 bytes")
    if math.isclose(x, 12 / 2, rel_tol=0.02):
        raise Wrong("intensity is FLOPs divided by bytes, not bytes divided by FLOPs")
    raise Wrong(f"{x:.4g} FLOP/byte is not it; count the FLOPs and the bytes moved for one element")


#: (FLOPs, least bytes) of the three float32 operations of question 2.
_Q2_COSTS = {
    "vector add": (1, 12),  # per element
    "matmul n=1024": (2 * 1024**3, 3 * 1024 * 1024 * 4),
    "linear 4096→4096, batch 1": (2 * 4096 * 4096, (4096 * 4096 + 4096 + 4096) * 4),
}


def _t4_bounds() -> dict[str, str]:
    t4 = by_short_name("T4")
    ridge = t4.fp32_tflops * 1e3 / t4.bandwidth_gbs
    return {key: "memory" if flops / moved < ridge else "compute" for key, (flops, moved) in _Q2_COSTS.items()}


def _check_bounds(value: Any) -> None:
    expect_type(value, dict, 'a dict such as {"vector add": "memory", ...}')
    expected = _t4_bounds()
    missing = [k for k in expected if k not in value]
    if missing:
        raise Wrong(f"the dict needs the keys {list(expected)}; missing {missing}")
    for key, right in expected.items():
        given = value[key]
        if not isinstance(given, str):
            raise Wrong(f"write each answer as the text 'memory' or 'compute', not {given!r} for {key!r}")
        word = given.strip().lower().removesuffix("-bound").removesuffix(" bound")
        if word not in {"memory", "compute"}:
            raise Wrong(f"{key!r}: answer 'memory' or 'compute', not {given!r}")
        if word != right:
            raise Wrong(
                f"{key!r} is not {word}-bound on a T4 in FP32: compare its intensity with the ridge point "
                "8.1 TFLOP/s ÷ 320 GB/s ≈ 25 FLOP/byte"
            )


#: (batch, d_in, d_out, itemsize) cases for linear_cost: a training batch (first: there the bias and the output
#: differ in size, so the messages can tell them apart), batch-1 inference in bf16, small ones.
_LINEAR_CASES = ((512, 1024, 1024, 4), (1, 4096, 4096, 2), (8, 64, 256, 4), (3, 5, 7, 2))


def _linear_cost(batch: int, d_in: int, d_out: int, itemsize: int) -> tuple[int, int, int]:
    """(FLOPs without bias, FLOPs with bias, least bytes) of F.linear."""
    multiply_adds = batch * d_out * d_in  # each output is a dot product of d_in pairs
    elements = batch * d_in + d_in * d_out + d_out + batch * d_out  # read x, w and b; write the output
    return 2 * multiply_adds, 2 * multiply_adds + batch * d_out, elements * itemsize


def _check_linear_cost(fn: Any) -> None:
    expect_function(fn, "linear_cost", "(batch, d_in, d_out, itemsize)")
    for batch, d_in, d_out, itemsize in _LINEAR_CASES:
        call = f"linear_cost({batch}, {d_in}, {d_out}, {itemsize})"
        flops, moved = expect_pair(fn(batch, d_in, d_out, itemsize), call, "flops", "bytes")
        bare, with_bias, right_bytes = _linear_cost(batch, d_in, d_out, itemsize)
        if flops not in (bare, with_bias):
            if flops in (bare // 2, bare // 2 + batch * d_out):
                raise Wrong(f"{call}: {flops} FLOPs counts each multiply-add once; it is two operations")
            if flops == bare * batch or flops == 2 * d_in * d_out:
                raise Wrong(f"{call}: {flops} FLOPs; every one of the batch×d_out outputs takes d_in multiply-adds")
            raise Wrong(
                f"{call} counts {flops} FLOPs; it should be 2·batch·d_in·d_out = {bare} "
                f"(plus {batch * d_out} for the bias)"
            )
        if moved == right_bytes:
            continue
        if moved == right_bytes // itemsize:
            raise Wrong(f"{call}: {moved} counts elements; multiply by itemsize ({itemsize}) for bytes")
        if (
            moved == (batch * d_in + batch * d_out) * itemsize
            or moved == (batch * d_in + d_out + batch * d_out) * itemsize
        ):
            raise Wrong(
                f"{call}: the weight matrix (d_out×d_in) must be read too; at batch 1 it is almost all the traffic"
            )
        if moved == (batch * d_in + d_out * d_in + batch * d_out) * itemsize:
            raise Wrong(f"{call}: the bias (d_out elements) is read too")
        if moved == (batch * d_in + d_out * d_in + d_out) * itemsize:
            raise Wrong(f"{call}: the output (batch×d_out) is written to memory; count it")
        raise Wrong(f"{call} counts {moved} bytes; the least traffic is {right_bytes}")


#: (seconds of simulated work per call, FLOPs it stands for, repeats asked for): two, so no constant passes.
_WORK_CASES = ((0.004, 4e10, 10), (0.002, 1e10, 4))
#: Untimed calls before the timed ones that are fine (a warm-up).
_WARM_UPS = 3


class _Counted:
    """The learner's `fn`: launches `seconds` of work on the pretend device and counts the calls."""

    def __init__(self, gpu: PretendAsyncDevice, seconds: float) -> None:
        self.gpu, self.seconds, self.calls = gpu, seconds, 0

    def __call__(self) -> None:
        self.calls += 1
        self.gpu.launch(self.seconds)


def _check_achieved_tflops(fn: Any) -> None:
    expect_function(fn, "achieved_tflops", "(fn, flops, sync, repeats)")
    for seconds, flops, repeats in _WORK_CASES:
        _check_achieved_tflops_on(fn, seconds, flops, repeats)


def _check_achieved_tflops_on(fn: Any, seconds: float, flops: float, repeats: int) -> None:
    gpu = PretendAsyncDevice()
    work = _Counted(gpu, seconds)
    with cpu_clocks_read() as cpu_clocks:
        result = fn(work, flops, gpu.sync, repeats)
    pending = gpu.busy  # work still queued when the function returned
    gpu.sync()  # leave no queued work behind
    call = f"achieved_tflops(fn, {flops:g}, sync, {repeats})"
    if not repeats <= work.calls <= repeats + _WARM_UPS:
        raise Wrong(
            f"{call} called fn() {work.calls} times: time `repeats` calls ({repeats} here), after at most "
            f"{_WARM_UPS} untimed warm-up calls"
        )
    got = _number(result, "a number of TFLOP/s")
    right = flops / seconds / 1e12
    if not math.isfinite(got) or got <= 0:
        raise Wrong(f"{call} returned {got!r}; it should be a positive number of TFLOP/s")
    ratio = got / right
    if 0.3 <= ratio <= 1.05:  # slower than the work itself only by timer and sleep overheads
        return
    if ratio > 1.05 and cpu_clocks:
        raise Wrong(
            f"{got:.4g} TFLOP/s is faster than the device can work: {cpu_clocks[0]} counts only this process's CPU "
            "time, not the time it spends waiting in sync(). Use time.perf_counter()"
        )
    if not pending and 0.3 <= ratio / 1e12 <= 1.05:
        raise Wrong("that is FLOP/s, not TFLOP/s (divide by 10^12)")
    if not pending and 0.3 <= ratio / 1e3 <= 1.05:
        raise Wrong("that is GFLOP/s, not TFLOP/s (divide by 10^12, not 10^9)")
    if not pending and 0.3 <= ratio * repeats <= 1.05:
        raise Wrong(f"{call}: you timed all {repeats} calls together: divide the time by repeats for one call")
    others = [f for _, f, _ in _WORK_CASES if f != flops]
    if not pending and any(0.3 <= ratio * flops / other <= 1.05 for other in others):
        raise Wrong(f"{call}: use the `flops` argument ({flops:g} here) for the work of one call")
    if ratio > 1.05:
        raise Wrong(
            f"{got:.4g} TFLOP/s is faster than the device can work: the clock was read before the work was "
            "done. Call sync() after the calls and before time.perf_counter()"
        )
    raise Wrong(f"{got:.4g} TFLOP/s is too slow for this device: time only the calls, synchronised, per call")


#: (FLOPs, bytes, peak TFLOP/s, GB/s) for roofline_seconds: a memory-bound add on a T4-like roof, a
#: compute-bound matmul, and a CPU-sized case; in each the two times differ, so min, max and sum differ.
_TIME_CASES = (
    (1e7, 1.2e8, 8.1, 320.0),
    (2 * 4096.0**3, 3 * 4096.0**2 * 2, 65.0, 320.0),
    (2 * 512.0**3, 3 * 512.0**2 * 4, 0.05, 12.0),
)


def _roofline_mistakes(flops: float, nbytes: float, peak: float, bandwidth: float) -> dict[str, float]:
    """What each typical mistake returns for one case: the checker names a mistake only where it fits every case."""
    compute, memory = flops / (peak * 1e12), nbytes / (bandwidth * 1e9)
    return {
        "min": min(compute, memory),
        "sum": compute + memory,
        "only the arithmetic time": compute,
        "only the memory time": memory,
        "TFLOP/s × 10^12 and GB/s × 10^9": max(flops / peak, nbytes / bandwidth),
        "GB/s × 10^9 (bytes per second)": max(compute, nbytes / bandwidth),
        "TFLOP/s × 10^12 (FLOP per second)": max(flops / peak, memory),
        "TFLOP/s × 10^12, not 10^9": max(flops / (peak * 1e9), memory),
    }


def _check_roofline_seconds(fn: Any) -> None:
    expect_function(fn, "roofline_seconds", "(flops, nbytes, peak_tflops, bandwidth_gbs)")
    answers = []
    for flops, nbytes, peak, bandwidth in _TIME_CASES:
        call = f"roofline_seconds({flops:g}, {nbytes:g}, {peak:g}, {bandwidth:g})"
        answers.append((call, _number(fn(flops, nbytes, peak, bandwidth), "a number of seconds")))
    mistakes = [_roofline_mistakes(*case) for case in _TIME_CASES]
    wrong = []
    for (call, got), case in zip(answers, mistakes, strict=True):
        compute, memory = case["only the arithmetic time"], case["only the memory time"]
        if not math.isclose(got, max(compute, memory), rel_tol=1e-6):
            wrong.append((call, got, max(compute, memory), "memory" if memory > compute else "compute"))
    if not wrong:
        return
    call, got, right, binding = wrong[0]
    fits = [
        name
        for name in mistakes[0]
        if all(
            math.isclose(given, case[name], rel_tol=1e-6) for (_, given), case in zip(answers, mistakes, strict=True)
        )
    ]
    said = f"{call} returned {got:.4g} s"
    if fits == ["min"]:
        raise Wrong(
            f"{said}, the time of the faster resource; this case is {binding}-bound, and the slower one sets "
            f"the time: {right:.4g} s (take the larger of the two)"
        )
    if fits == ["sum"]:
        raise Wrong(
            f"{said}, the two times added; the roofline lets memory traffic and arithmetic overlap, so the "
            f"larger of the two sets the time: {right:.4g} s"
        )
    if fits and fits[0].startswith("only"):
        raise Wrong(f"{said}, {fits[0]}; this case is {binding}-bound: {right:.4g} s. Compute both and take the larger")
    if fits:
        raise Wrong(f"{said} instead of {right:.4g} s: a unit slip; convert {fits[0]} before dividing")
    raise Wrong(f"{said}; the roofline's least time is {right:.4g} s")


def _context() -> dict[str, Any]:
    from .. import gpu_specs, roofline

    return {
        "gpu_specs": gpu_specs,
        "roofline": roofline,
        "by_short_name": by_short_name,
        "time": time,
    }


QUESTIONS = [
    Question(
        number=1,
        task="Set `axpy_intensity` to the arithmetic intensity (FLOP per byte) of `y = a * x + y` on float32 "
        "vectors (a is a scalar; x and y are read from memory, y is written back).",
        variable="axpy_intensity",
        checker=_check_axpy,
        hint_text="Per element: how many arithmetic operations? How many 4-byte reads and writes?",
        chapter="10",
        context=_context,
    ),
    Question(
        number=2,
        task='Set `t4_bounds` to a dict saying, by the roofline, whether each float32 operation is "memory" or '
        '"compute" bound on a T4 in FP32: keys "vector add", "matmul n=1024", "linear 4096→4096, batch 1".',
        variable="t4_bounds",
        checker=_check_bounds,
        hint_text="Intensities: a vector add 1/12 FLOP/byte; an n×n matmul n/6; a 4096×4096 weight matrix times "
        "one vector does 2 FLOPs per weight and reads each 4-byte weight once, about 0.5. The T4's FP32 ridge "
        "point is fp32_tflops × 1000 / bandwidth_gbs FLOP/byte.",
        chapter="10",
        context=_context,
    ),
    Question(
        number=3,
        task="Write `linear_cost(batch, d_in, d_out, itemsize)` returning (flops, bytes) of "
        "torch.nn.functional.linear(x, w, b): 2 FLOPs per multiply-add, least traffic in bytes.",
        variable="linear_cost",
        checker=_check_linear_cost,
        hint_text="Each of the batch×d_out outputs is a dot product of d_in pairs: 2·d_in FLOPs. Bytes: read x "
        "(batch×d_in), w (d_out×d_in) and b (d_out), write the output (batch×d_out), each element itemsize bytes.",
        chapter="10",
        context=_context,
    ),
    Question(
        number=4,
        task="Write `achieved_tflops(fn, flops, sync, repeats)`: time `repeats` calls of `fn()` with the device "
        "synchronised (`sync()`) before reading the clock, and return TFLOP/s per call.",
        variable="achieved_tflops",
        checker=_check_achieved_tflops,
        hint_text="sync(); start = time.perf_counter(); call fn() repeats times; sync() again so that the queued "
        "work is done; then seconds per call = (time.perf_counter() - start) / repeats, and TFLOP/s = "
        "flops / seconds / 1e12.",
        chapter="10",
        context=_context,
    ),
    Question(
        number=5,
        task="Write `roofline_seconds(flops, nbytes, peak_tflops, bandwidth_gbs)`: the least time, in seconds, "
        "an operation of `flops` FLOPs moving `nbytes` bytes can take on a machine with these roofs.",
        variable="roofline_seconds",
        checker=_check_roofline_seconds,
        hint_text="Time for the arithmetic at the peak: flops / (peak_tflops × 10^12). Time for the bytes at "
        "full bandwidth: nbytes / (bandwidth_gbs × 10^9). Both can overlap, so the operation takes at least "
        "the longer of the two.",
        chapter="10",
        context=_context,
    ),
]
