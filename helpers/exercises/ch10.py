"""Chapter 10 exercises: arithmetic intensity, and memory- or compute-bound on a T4 (from the table)."""

from __future__ import annotations

import math
from typing import Any

from ..checking import Question, Wrong, expect_number, expect_type
from ..gpu_specs import by_short_name

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


def _t4_bounds() -> dict[str, str]:
    from ..roofline import bound_by, matmul_cost, vector_add_cost

    t4 = by_short_name("T4")
    costs = {
        "matmul n=64": matmul_cost(64),
        "matmul n=1024": matmul_cost(1024),
        "vector add": vector_add_cost(1_000_000),
    }
    return {k: bound_by(c.intensity, t4.fp32_tflops, t4.bandwidth_gbs) for k, c in costs.items()}


def _check_bounds(value: Any) -> None:
    expect_type(value, dict, 'a dict such as {"matmul n=64": "memory", ...}')
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


def _check_attainable(value: Any) -> None:
    x = _number(value, "a number of TFLOP/s")
    from ..roofline import attainable_tflops, matmul_cost

    t4 = by_short_name("T4")
    right = attainable_tflops(matmul_cost(64).intensity, t4.fp32_tflops, t4.bandwidth_gbs)
    if math.isclose(x, right, rel_tol=0.02):
        return
    if math.isclose(x, t4.fp32_tflops, rel_tol=0.02):
        raise Wrong("8.1 TFLOP/s is the compute roof, but this matmul is below the ridge point: memory binds")
    if math.isclose(x, right * 1e3, rel_tol=0.02) or math.isclose(x, right * 1e12, rel_tol=0.02):
        raise Wrong("give the answer in TFLOP/s (10^12 FLOP/s), not GFLOP/s or FLOP/s")
    raise Wrong(f"{x:.4g} TFLOP/s is not it: the roofline is min(peak, intensity × bandwidth)")


def _context() -> dict[str, Any]:
    from .. import gpu_specs, roofline

    return {"gpu_specs": gpu_specs, "roofline": roofline, "T4": by_short_name("T4")}


QUESTIONS = [
    Question(
        number=1,
        task="Set `axpy_intensity` to the arithmetic intensity (FLOP per byte) of `y = a * x + y` on float32 "
        "vectors (a is a scalar; x and y are read from memory, y is written back).",
        variable="axpy_intensity",
        checker=_check_axpy,
        hint_text="Per element: how many arithmetic operations? How many 4-byte reads and writes?",
        solution_code="axpy_intensity = 2 / (3 * 4)  # multiply + add; read x, read y, write y",
        wrong_answers=(
            "axpy_intensity = 2 / (2 * 4)",
            "axpy_intensity = 1 / (3 * 4)",
            "axpy_intensity = 2 / 3",
        ),
        context=_context,
    ),
    Question(
        number=2,
        task='Set `t4_bounds` to a dict saying, for a T4 running in FP32, whether each operation is "memory" '
        'or "compute" bound: keys "matmul n=64", "matmul n=1024", "vector add" (all float32).',
        variable="t4_bounds",
        checker=_check_bounds,
        hint_text="An n×n float32 matmul has intensity 2n³ / (3·n²·4) = n/6; a float32 vector add 1/12. "
        "The T4's FP32 ridge point is fp32_tflops × 1000 / bandwidth_gbs FLOP/byte.",
        solution_code=(
            'T4 = gpu_specs.by_short_name("T4")\n'
            "ridge = roofline.ridge_point(T4.fp32_tflops, T4.bandwidth_gbs)\n"
            'intensities = {"matmul n=64": 64 / 6, "matmul n=1024": 1024 / 6, "vector add": 1 / 12}\n'
            't4_bounds = {k: "memory" if i < ridge else "compute" for k, i in intensities.items()}'
        ),
        wrong_answers=(
            't4_bounds = {"matmul n=64": "compute", "matmul n=1024": "compute", "vector add": "memory"}',
            't4_bounds = {"matmul n=64": "memory", "matmul n=1024": "memory", "vector add": "memory"}',
            't4_bounds = {"matmul n=64": "memory", "matmul n=1024": "compute"}',
        ),
        context=_context,
    ),
    Question(
        number=3,
        task="Set `attainable_n64` to the roofline's attainable throughput, in TFLOP/s, of a float32 64×64 "
        "matmul on a T4's FP32 cores (use the table's figures).",
        variable="attainable_n64",
        checker=_check_attainable,
        hint_text="attainable = min(peak TFLOP/s, intensity × bandwidth); mind the units: GB/s × FLOP/byte "
        "gives GFLOP/s.",
        solution_code=(
            'T4 = gpu_specs.by_short_name("T4")\n'
            "attainable_n64 = min(T4.fp32_tflops, (64 / 6) * T4.bandwidth_gbs / 1000)"
        ),
        wrong_answers=(
            "attainable_n64 = 8.1",
            "attainable_n64 = (64 / 6) * 320",
            "attainable_n64 = min(8.1, 64 * 320 / 1000)",
        ),
        context=_context,
    ),
]
