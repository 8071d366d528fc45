"""Chapter 15's GPU claims, checked on a real CUDA GPU (skipped, with the reason, elsewhere).

The ladder's model at the chapter's GPU size, trained for fewer steps: autocast (float16 with a gradient scaler on
a T4, bfloat16 from Ampere on) beats the plain float32 run, every switch on with `torch.compile` beats it too, and
each run keeps the held-out loss within the chapter's guard; fused attention runs a fused kernel, not the math
path; on two GPUs the DDP rung trains over NCCL within the guard. The floors are meant for a Kaggle T4 and an H100,
not yet checked by a run of this test on either (docs/sources.md §9: reviewed, not executed);
the chapter's `train` synchronises the GPU before every clock read.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest
import torch
from torch.profiler import ProfilerActivity, profile

from helpers import processes

from .chapter_files import import_written_file
from .missing import missing

pytestmark = pytest.mark.gpu
NOTEBOOK = "15_one_model_every_lesson.ipynb"
DEV = torch.device("cuda:0")
SIZE, BATCH, STEPS, WARM = dict(width=384, layers=6, heads=6, block=256), 32, 60, 10
EVERYTHING = dict(autocast=True, sdpa=True, fused_adamw=True, padded=True, compiled=True, pinned=True)


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder the chapter's files are written into, first on sys.path (launched ranks import from it)."""
    return tmp_path_factory.mktemp("ch15")


@pytest.fixture(scope="module")
def files(work: Path) -> tuple[ModuleType, ModuleType]:
    if not torch.cuda.is_available():
        missing("a CUDA GPU", "the ladder's GPU rungs need one")
    return import_written_file(NOTEBOOK, "gpt", work), import_written_file(NOTEBOOK, "ladder", work)


@pytest.fixture(scope="module")
def text(files: tuple[ModuleType, ModuleType]) -> tuple[torch.Tensor, torch.Tensor]:
    gpt, _ = files
    tokens = gpt.encode(gpt.python_text(1_000_000))
    return tokens[:-50_000], tokens[-50_000:]


@pytest.fixture(scope="module")
def climbed(files: tuple[ModuleType, ModuleType], text: tuple[torch.Tensor, torch.Tensor]) -> dict[str, dict]:
    _, ladder = files
    run = lambda **on: ladder.train(ladder.Rung(**on), SIZE, *text, STEPS, BATCH, DEV, warm=WARM)
    return {"plain": run(), "autocast": run(autocast=True), "everything": run(**EVERYTHING)}


def test_autocast_beats_the_plain_float32_run(climbed: dict[str, dict]) -> None:
    over = climbed["autocast"]["tokens/s"] / climbed["plain"]["tokens/s"]
    assert over >= 1.3, (
        f"autocast ran at {over:.2f}x the plain run's tokens/s; a T4's and an H100's tensor cores give more"
    )


def test_every_switch_with_compile_beats_the_plain_run(climbed: dict[str, dict]) -> None:
    over = climbed["everything"]["tokens/s"] / climbed["plain"]["tokens/s"]
    assert over >= 1.5, f"every switch on, compiled, ran at {over:.2f}x the plain run's tokens/s"
    assert climbed["everything"]["first step s"] > 5 * climbed["everything"]["step s"], "no cold compile seen"


def test_every_run_keeps_the_loss_guard(files: tuple[ModuleType, ModuleType], climbed: dict[str, dict]) -> None:
    _, ladder = files
    plain = climbed["plain"]["loss"]
    for name, run in climbed.items():
        assert run["finite"], f"{name}: a loss was not finite"
        assert abs(run["loss"] - plain) <= ladder.GUARD * plain, (
            f"{name}: held-out loss {run['loss']:.4f}, plain {plain:.4f}"
        )
        assert run["peak GB"] and 0 < run["peak GB"] < torch.cuda.get_device_properties(DEV).total_memory / 1e9


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_fused_attention_runs_a_fused_kernel(dtype: torch.dtype) -> None:
    if not torch.cuda.is_available():
        missing("a CUDA GPU", "which attention kernel a GPU picks")
    q = torch.randn(8, 6, 256, 64, device=DEV, dtype=dtype, requires_grad=True)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        torch.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True).sum().backward()
    ran = {e.name for e in prof.events() if e.name.startswith("aten::_scaled_dot_product")}
    fused = {f"aten::_scaled_dot_product_{k}_attention" for k in ("flash", "efficient", "cudnn")}
    assert ran & fused, f"{dtype} attention ran {sorted(ran)}, no fused kernel"
    if torch.cuda.get_device_capability(DEV) < (8, 0):  # a T4: flash and cuDNN need sm_80
        assert "aten::_scaled_dot_product_efficient_attention" in ran, sorted(ran)


@pytest.mark.gpu2
def test_the_ddp_rung_trains_on_two_gpus_within_the_guard(
    files: tuple[ModuleType, ModuleType], text: tuple[torch.Tensor, torch.Tensor], work: Path
) -> None:
    if torch.cuda.device_count() < 2:
        missing("a second CUDA GPU", "the DDP rung runs one rank a GPU (Kaggle's T4 x2)")
    _, ladder = files
    ddp_rung = import_written_file(NOTEBOOK, "ddp_rung", work)
    rung = ladder.Rung(**EVERYTHING)
    one = ladder.train(rung, SIZE, *text, STEPS, BATCH, DEV, warm=WARM)
    both = processes.launch(ddp_rung.train_ddp, 2, (rung, SIZE, *text, STEPS, BATCH, WARM), backend="nccl", timeout=600)
    for r in both.results:
        assert abs(r["loss"] - one["loss"]) <= ladder.GUARD * one["loss"], (r["loss"], one["loss"])
        assert r["tokens/s"] > 0
