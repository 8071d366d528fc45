"""helpers.sharding: the memory-budget arithmetic, its text and widget, and the per-rank plot."""

from __future__ import annotations

import pytest

from helpers import sharding


def test_ddp_keeps_four_copies_with_adam_on_every_rank() -> None:
    parts = sharding.bytes_per_rank(1000, 4, "Adam", 8, "DDP")
    assert parts == {"parameters": 4000, "gradients": 4000, "optimizer states": 8000, "total": 16000}


def test_fsdp_divides_every_part_and_rounds_a_shard_up() -> None:
    assert sharding.bytes_per_rank(1000, 4, "Adam", 2, "FSDP")["total"] == 8000
    assert sharding.bytes_per_rank(7, 2, "SGD", 4, "FSDP") == {
        "parameters": 4,
        "gradients": 4,
        "optimizer states": 0,
        "total": 8,
    }
    assert sharding.bytes_per_rank(10, 2, "SGD with momentum", 1, "FSDP")["total"] == 60


@pytest.mark.parametrize(
    "args",
    [
        (-1, 4, "Adam", 2, "DDP"),
        (1.5, 4, "Adam", 2, "DDP"),
        (10, "float32", "Adam", 2, "DDP"),
        (10, 4, "Adagrad", 2, "DDP"),
        (10, 4, "Adam", 0, "DDP"),
        (10, 4, "Adam", 2, "ZeRO"),
    ],
)
def test_bad_arguments_are_named(args: tuple) -> None:
    with pytest.raises(ValueError):
        sharding.bytes_per_rank(*args)


def test_the_budget_text_says_whether_it_fits_a_t4() -> None:
    big = sharding.describe_budget(7_000_000_000, "float32", "Adam", 2, "DDP")
    assert "28.00 GB per rank (0 if gradient_as_bucket_view)" in big  # DDP's buckets: the gradients again
    assert "140.00 GB per rank: does NOT fit" in big
    small = sharding.describe_budget(100_000_000, sharding.PRECISIONS[1], "Adam", 8, "FSDP")
    assert "fits in a T4's 15.8 GB" in small and "NOT" not in small


def test_mixed_precision_keeps_the_float32_states_and_adds_16_bit_copies() -> None:
    """Autocast and MixedPrecisionPolicy compute in 16 bits; the master weights, gradients and Adam's states stay
    float32 (16 bytes a parameter with Adam), so mixed precision never shrinks them."""
    mixed = sharding.describe_budget(7_000_000_000, sharding.PRECISIONS[1], "Adam", 2, "DDP")
    assert "56.00 GB per rank (float32)" in mixed  # Adam's two states, 8 bytes a parameter
    assert "14.00 GB per rank (every weight" in mixed  # autocast's 16-bit copies, 2 bytes a parameter
    assert "154.00 GB per rank: does NOT fit" in mixed  # 112 + DDP's 28 GB of buckets + 14
    sharded = sharding.describe_budget(7_000_000_000, sharding.PRECISIONS[1], "Adam", 8, "FSDP")
    assert "14.00 GB per rank: fits" in sharded and "blocks gathered" in sharded
    with pytest.raises(ValueError):
        sharding.describe_budget(10, "bfloat16", "Adam", 2, "DDP")


def test_the_widget_builds() -> None:
    pytest.importorskip("ipywidgets")
    widget = sharding.budget_widget()
    assert len(widget.children) >= 5


def test_the_plot_stacks_the_three_parts() -> None:
    measured = {
        "DDP": {"parameters": 4000, "gradients": 4000, "optimizer states": 8000},
        "FSDP": {"parameters": 2000, "gradients": 2000, "optimizer states": 4000},
    }
    fig = sharding.plot_per_rank(measured, "a stamp")
    assert len(fig.axes[0].patches) == 6
