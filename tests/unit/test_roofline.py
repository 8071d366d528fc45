"""The roofline helpers: pure cost and model functions, bad inputs, and a tiny real CPU measurement."""

from __future__ import annotations

import pytest
import torch

from helpers import roofline as r
from helpers.gpu_specs import by_short_name


def test_vector_add_intensity_is_one_twelfth_in_float32() -> None:
    c = r.vector_add_cost(1000)
    assert (c.flops, c.bytes) == (1000, 12000)
    assert c.intensity == pytest.approx(1 / 12)
    assert r.vector_add_cost(1000, torch.float16).intensity == pytest.approx(1 / 6)
    assert r.vector_add_cost(10, 8).bytes == 240


def test_matmul_intensity_grows_with_n() -> None:
    c = r.matmul_cost(64)
    assert c.flops == 2 * 64**3 and c.bytes == 3 * 64 * 64 * 4
    assert c.intensity == pytest.approx(64 / 6)
    assert r.matmul_cost(1024, torch.bfloat16).intensity == pytest.approx(2 * 1024 / 6)


def test_conv2d_cost_formula() -> None:
    c = r.conv2d_cost(batch=2, in_channels=3, out_channels=8, height=10, width=12, kernel=3)
    assert c.flops == 2 * 2 * 8 * 10 * 12 * 3 * 9
    assert c.bytes == (2 * 3 * 10 * 12 + 8 * 3 * 9 + 2 * 8 * 10 * 12) * 4
    with pytest.raises(ValueError, match="odd kernel"):
        r.conv2d_cost(1, 1, 1, 4, 4, 2)


def test_conv2d_cost_matches_torch_output_shape() -> None:
    x = torch.zeros(2, 3, 10, 12)
    w = torch.zeros(8, 3, 3, 3)
    y = torch.nn.functional.conv2d(x, w, padding=1)
    assert y.numel() * 3 * 9 * 2 == r.conv2d_cost(2, 3, 8, 10, 12, 3).flops


def test_roofline_is_the_min_of_two_roofs() -> None:
    assert r.attainable_tflops(1.0, 8.1, 320) == pytest.approx(0.32)
    assert r.attainable_tflops(1000, 8.1, 320) == 8.1
    ridge = r.ridge_point(8.1, 320)
    assert ridge == pytest.approx(25.3125)
    assert r.attainable_tflops(ridge, 8.1, 320) == pytest.approx(8.1)
    assert r.bound_by(ridge * 0.99, 8.1, 320) == "memory"
    assert r.bound_by(ridge * 1.01, 8.1, 320) == "compute"


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: r.attainable_tflops(-1, 8.1, 320), ValueError, "intensity"),
        (lambda: r.attainable_tflops(1, 0, 320), ValueError, "peak_tflops"),
        (lambda: r.attainable_tflops(1, 8.1, float("nan")), ValueError, "bandwidth_gbs"),
        (lambda: r.ridge_point("8.1", 320), TypeError, "peak_tflops"),
        (lambda: r.matmul_cost(0), ValueError, "n must be at least 1"),
        (lambda: r.matmul_cost(2.5), TypeError, "whole number"),
        (lambda: r.vector_add_cost(True), TypeError, "whole number"),
        (lambda: r.measure_copy_bandwidth(-5, "cpu"), ValueError, "nbytes"),
    ],
)
def test_bad_inputs_raise_clear_errors(call, error, match) -> None:
    with pytest.raises(error, match=match):
        call()


def test_explain_names_the_binding_roof_and_the_source() -> None:
    t4 = by_short_name("T4")
    low = r.explain(t4, "fp32", 1.0)
    assert "memory-bound" in low and "0.32 TFLOP/s" in low and "datasheet" in low
    assert "compute-bound" in r.explain(t4, "fp16", 1000)
    assert "no BF16" in r.explain(t4, "bf16", 10)


def test_tiny_real_cpu_measurements_are_positive() -> None:
    mm = r.measure_matmul(32, torch.float32, "cpu", min_run_time=0.01)
    add = r.measure_vector_add(4096, torch.float32, "cpu", min_run_time=0.01)
    conv = r.measure_conv2d(1, 2, 2, 8, 3, torch.float32, "cpu", min_run_time=0.01)
    copy = r.measure_copy_bandwidth(1 << 16, "cpu", min_run_time=0.01)
    for m in (mm, add, conv):
        assert m.seconds > 0 and m.tflops > 0 and m.intensity > 0
        assert "measured on" in m.stamp and "measured on" in str(m)
    assert copy.gbs > 0
    ceilings = r.measured_ceilings([mm], copy)
    assert ceilings.compute_tflops["float32"] == mm.tflops
    rows = r.roof_ratios(ceilings, [mm, add])
    assert all(limit > 0 and frac > 0 for _, limit, frac in rows)
    with pytest.raises(ValueError, match="at least one matmul"):
        r.measured_ceilings([], copy)


def test_cpu_dtype_choice_always_includes_float32() -> None:
    choice = r.choose_dtypes("cpu", probe_n=16, min_run_time=0.01)
    assert choice.dtypes[0] == torch.float32 and "float32" in choice.reason
    assert r.spec_for_device("cpu") is None


def test_host_device_link_peak_says_why_there_is_none_on_cpu() -> None:
    peak, how = r.host_device_link_peak("cpu")
    if not torch.cuda.is_available():
        assert peak is None and how


def test_plots_and_widget_build_headless() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    mm = r.measure_matmul(32, torch.float32, "cpu", min_run_time=0.01)
    copy = r.measure_copy_bandwidth(1 << 16, "cpu", min_run_time=0.01)
    fig = r.plot_roofline(r.measured_ceilings([mm], copy), [mm], by_short_name("T4"))
    assert "CPU" in fig.axes[0].get_title()
    for f in (r.plot_price_performance(), r.plot_performance_per_watt()):
        assert f.axes
    plt.close("all")
    assert r.roofline_widget() is not None
