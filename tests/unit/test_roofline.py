"""The roofline harness: the pure model, and the plots and widget built headless."""

from __future__ import annotations

import pytest
import torch

from helpers import roofline as r
from helpers.gpu_specs import by_short_name


def test_roofline_is_the_min_of_two_roofs() -> None:
    assert r.attainable_tflops(1.0, 8.1, 320) == pytest.approx(0.32)
    assert r.attainable_tflops(1000, 8.1, 320) == 8.1
    ridge = r.ridge_point(8.1, 320)
    assert ridge == pytest.approx(25.3125)
    assert r.attainable_tflops(ridge, 8.1, 320) == pytest.approx(8.1)
    assert r.bound_by(ridge * 0.99, 8.1, 320) == "memory"
    assert r.bound_by(ridge * 1.01, 8.1, 320) == "compute"


def test_explain_names_the_binding_roof_and_the_source() -> None:
    t4 = by_short_name("T4")
    low = r.explain(t4, "fp32", 1.0)
    assert "memory-bound" in low and "0.32 TFLOP/s" in low and "datasheet" in low
    assert "compute-bound" in r.explain(t4, "fp16", 1000)
    assert "no BF16" in r.explain(t4, "bf16", 10)


def test_spec_for_device_is_none_on_cpu() -> None:
    assert r.spec_for_device("cpu") is None


def test_plots_and_widget_build_headless() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    points = [
        {"what": "vector add", "dtype": "float32", "flops": 1e6, "bytes": 1.6e7, "seconds": 1e-3},
        {"what": "matmul 64×64×64", "dtype": "float32", "flops": 2 * 64**3, "bytes": 3 * 64 * 64 * 4, "seconds": 1e-5},
    ]
    fig = r.plot_roofline(points, 20.0, {"float32": 0.1, "bfloat16": 0.05}, "a stamp", by_short_name("T4"))
    assert "CPU" in fig.axes[0].get_title()
    roofs = {"float32": 0.1, "bfloat16": 0.05}
    noted = r.plot_roofline(points, 20.0, roofs, "a stamp", roof_notes={"bfloat16": "no peak"})
    legend = [t.get_text() for t in noted.axes[0].get_legend().get_texts()]
    assert any("bfloat16" in t and "(no peak)" in t for t in legend), legend
    assert not any("float32" in t and "(no peak)" in t for t in legend if "bfloat16" not in t), legend
    from helpers.plots import alt_of

    assert "bfloat16 0.05 TFLOP/s (no peak)" in alt_of(noted)
    for f in (r.plot_price_performance(), r.plot_performance_per_watt()):
        assert f.axes
    plt.close("all")
    assert r.roofline_widget() is not None


def test_no_measuring_code_left_in_the_helper() -> None:
    """The chapter's lesson (timing, costs, sweeps) lives in its cells, not here (architecture issue)."""
    for gone in ("measure_matmul", "measure_vector_add", "measure_copy_bandwidth", "matmul_sweep", "matmul_cost"):
        assert not hasattr(r, gone), gone
    assert torch.float32.itemsize == 4


def test_tf32_defaults_the_chapter_states() -> None:
    """cuDNN convolutions may use TF32 by default; matmuls may not (checked in a fresh process)."""
    import subprocess
    import sys

    code = "import torch; print(torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.split() == ["True", "False"]
