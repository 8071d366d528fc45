"""The GPU table (helpers.gpu_specs): every row sourced, values sane, the T4 matching docs/sources.md §4."""

from __future__ import annotations

import dataclasses

import pytest

from helpers.gpu_specs import GPUS, GpuSpec, by_short_name, find_spec, format_table


def test_table_is_a_tuple_of_frozen_dataclasses() -> None:
    assert isinstance(GPUS, tuple) and all(isinstance(s, GpuSpec) for s in GPUS)
    with pytest.raises(dataclasses.FrozenInstanceError):
        GPUS[0].fp32_tflops = 1.0  # type: ignore[misc]


def test_the_gpus_learners_meet_are_there() -> None:
    shorts = {s.short for s in GPUS}
    assert {"T4", "P100", "V100", "A100", "L4", "H100", "H100 PCIe", "H100 NVL", "H200", "RTX 4090"} <= shorts
    assert len(shorts) == len(GPUS), "short labels must be unique"


@pytest.mark.parametrize("spec", GPUS, ids=[s.short for s in GPUS])
def test_every_row_names_a_source_and_has_positive_values(spec: GpuSpec) -> None:
    assert spec.source.strip() and len(spec.source) > 10
    for field in ("fp32_tflops", "memory_gb", "bandwidth_gbs", "power_w"):
        assert getattr(spec, field) > 0, field
    for field in ("fp16_tensor_tflops", "bf16_tensor_tflops", "launch_price_usd"):
        value = getattr(spec, field)
        assert value is None or value > 0, field
    if spec.launch_price_usd is not None:
        assert spec.price_source and any(ch.isdigit() for ch in spec.price_source), "a price needs a dated source"
    if spec.tensor_tflops is not None:  # tensor cores beat the FP32 cores (dense figures)
        assert spec.tensor_tflops > spec.fp32_tflops
    assert 2010 < spec.year < 2030


def test_t4_row_matches_facts_section_4() -> None:
    t4 = by_short_name("T4")
    assert (t4.fp32_tflops, t4.fp16_tensor_tflops, t4.bandwidth_gbs, t4.power_w) == (8.1, 65, 320, 70)
    assert t4.memory_gb == 16 and t4.memory_type == "GDDR6"
    assert t4.bf16_tensor_tflops is None
    p100 = by_short_name("P100")
    assert (p100.fp32_tflops, p100.bandwidth_gbs, p100.power_w) == (9.3, 732, 250)
    assert p100.fp16_tensor_tflops is None and "18.7" in p100.notes


def test_dense_figures_are_half_the_printed_sparse_ones() -> None:
    assert by_short_name("A100").bf16_tensor_tflops == 312  # datasheet: 624 with sparsity
    assert by_short_name("H100").bf16_tensor_tflops == 989  # datasheet: 1,979 with sparsity
    assert by_short_name("L4").fp16_tensor_tflops == 121  # datasheet: 242 with sparsity
    assert by_short_name("H100 PCIe").bf16_tensor_tflops == 756  # datasheet: 1,513 with sparsity
    assert by_short_name("H100 NVL").bf16_tensor_tflops == 835  # datasheet: 1,671 with sparsity
    assert by_short_name("H200").bf16_tensor_tflops == 989  # datasheet: 1,979 with sparsity


def test_the_self_tests_h200_has_its_row_and_an_h200_nvl_none() -> None:
    """torch names the SXM module "NVIDIA H200" (docs/gpu-runs/), the PCIe card "NVIDIA H200 NVL"."""
    h200 = find_spec("NVIDIA H200")
    assert h200 is not None and (h200.memory_gb, h200.bandwidth_gbs, h200.pcie_generation) == (141, 4800, 5)
    assert find_spec("NVIDIA H200 NVL") is None, "not the SXM module's row: a wrong ceiling is worse than none"
    assert find_spec("NVIDIA H100 NVL").short == "H100 NVL"


def test_peaks_by_precision() -> None:
    t4 = by_short_name("T4")
    assert t4.peak_tflops("fp32") == 8.1 and t4.peak_tflops("bf16") is None
    assert t4.peak_tflops("float16") == 65
    assert t4.peak_tflops("bfloat16") is None  # torch's dtype names work too (chapter 10 passes them)
    assert by_short_name("A100").peak_tflops("bfloat16") == 312
    assert by_short_name("A100").peak_tflops("float32") == 19.5


def test_lookup_by_name_and_device_name() -> None:
    assert by_short_name("t4").short == "T4"
    with pytest.raises(KeyError, match="no GPU called"):
        by_short_name("Voodoo2")
    assert find_spec("Tesla T4").short == "T4"
    assert find_spec("NVIDIA L4").short == "L4"
    assert find_spec("Tesla P100-PCIE-16GB").short == "P100"
    assert find_spec("NVIDIA GeForce RTX 4090").short == "RTX 4090"
    assert find_spec("NVIDIA A100-SXM4-80GB").short == "A100"
    assert find_spec("NVIDIA A100-PCIE-40GB") is None  # a different product: no wrong ceiling
    assert find_spec("AMD Instinct MI300X") is None
    assert find_spec("NVIDIA H100 PCIe").short == "H100 PCIe"
    assert find_spec("NVIDIA H100 NVL").short == "H100 NVL"
    assert find_spec("NVIDIA H100 80GB HBM3").short == "H100"
    assert find_spec("NVIDIA A100-SXM4-40GB").short == "A100 40GB"
    assert find_spec("NVIDIA L40S").short == "L40S" and find_spec("NVIDIA L4").short == "L4"
    assert find_spec("NVIDIA L40") is None and find_spec("NVIDIA A100-PCIE-40GB") is None
    for other in ("NVIDIA GeForce RTX 4090 Laptop GPU", "NVIDIA GeForce RTX 3080 Ti", "NVIDIA GeForce RTX 4080 SUPER"):
        assert find_spec(other) is None, other  # another product: no wrong ceiling
    assert find_spec("Tesla P100-SXM2-16GB") is None and find_spec("Tesla V100-SXM2-32GB").short == "V100"


def test_format_table_lists_every_gpu() -> None:
    text = format_table()
    for s in GPUS:
        assert s.short in text
    assert "—" in text  # missing hardware / unpublished price shown, not invented


@pytest.mark.parametrize("spec", [s for s in GPUS if s.data_rate_gbps is not None], ids=lambda s: s.short)
def test_bus_width_times_data_rate_is_the_bandwidth(spec: GpuSpec) -> None:
    assert spec.bus_width_bits / 8 * spec.data_rate_gbps == pytest.approx(spec.bandwidth_gbs, rel=0.01)


def test_interconnect_columns() -> None:
    t4 = by_short_name("T4")
    assert (t4.pcie_generation, t4.nvlink_gbs, t4.bus_width_bits, t4.data_rate_gbps) == (3, None, 256, 10)
    assert by_short_name("H100").nvlink_gbs == 900 and by_short_name("A100").nvlink_gbs == 600
    assert by_short_name("RTX 4090").nvlink_gbs is None  # Ada GeForce cards have no NVLink
    for spec in GPUS:
        assert spec.pcie_generation in (3, 4, 5), spec.short
        if spec.nvlink_gbs is not None:
            assert "NVLink" in spec.source, f"{spec.short}: the NVLink figure needs its source"
        if spec.bus_width_bits is not None:
            assert f"{spec.bus_width_bits}-bit" in spec.source, f"{spec.short}: the bus width needs its source"


def test_tensor_formats_say_which_precision_each_generation_accelerates() -> None:
    """T4: FP16 only (no BF16, no TF32); Ampere: TF32 and BF16; Ada and Hopper: FP8 (docs/sources.md §4)."""
    assert by_short_name("T4").tensor_formats == ("fp16",)
    assert by_short_name("V100").tensor_formats == ("fp16",)
    assert by_short_name("P100").tensor_formats == ()
    assert {"tf32", "bf16"} <= set(by_short_name("A100").tensor_formats)
    assert "fp8" not in by_short_name("A100").tensor_formats
    for short in ("H100", "H100 PCIe", "H100 NVL", "L4", "RTX 4090"):
        assert "fp8" in by_short_name(short).tensor_formats, short
    for spec in GPUS:  # the columns agree: a 16-bit peak exactly where the format is listed
        assert (spec.bf16_tensor_tflops is not None) == ("bf16" in spec.tensor_formats), spec.short
        assert (spec.fp16_tensor_tflops is not None) == ("fp16" in spec.tensor_formats), spec.short
    assert "tensor formats" in format_table() and "fp8 tf32 bf16 fp16" in format_table()
