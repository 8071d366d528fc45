"""Chapter 13's GPU claims, checked on a real CUDA GPU with Triton (skipped, with the reason, elsewhere).

The chapter's kernels, compiled for the GPU: the vector add and the fused softmax match torch on
ragged and strided shapes; past the L2 cache the fused softmax writes one tensor where eager's five
operators write three or more, and runs faster than they do, at a bandwidth below the copy roof
measured on the same GPU; the `tl.dot` matmul is right in float16 (tensor cores from compute
capability 8.0, multiply-adds below it); bfloat16 in hardware exactly from 8.0; autotuning picks
a config and stays right; the exercise checkers run a compiled kernel on the GPU and still name a
missing mask. Floors are ones a Kaggle T4 (sm_75, 320 GB/s) and an H100 both meet; every timing
synchronises the GPU (`triton.testing.do_bench`, which also empties the L2 cache before each run).
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

import pytest
import torch

from .missing import missing

pytestmark = pytest.mark.gpu
DEV = torch.device("cuda:0")

try:
    import triton
    import triton.language as tl
except ImportError:  # no Triton here: every test says so through missing()
    triton = tl = None

if triton is not None:
    _interpret = os.environ.pop("TRITON_INTERPRET", None)  # these kernels are compiled for the GPU
    try:

        @triton.jit
        def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
            pid = tl.program_id(0)
            offsets = pid * BLOCK + tl.arange(0, BLOCK)
            mask = offsets < n
            x = tl.load(x_ptr + offsets, mask=mask)
            y = tl.load(y_ptr + offsets, mask=mask)
            tl.store(out_ptr + offsets, x + y, mask=mask)

        @triton.jit
        def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride, BLOCK: tl.constexpr):
            row = tl.program_id(0)
            cols = tl.arange(0, BLOCK)
            mask = cols < n_cols
            x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=-float("inf"))
            z = x - tl.max(x, axis=0)
            e = tl.exp(z)
            tl.store(out_ptr + row * out_row_stride + cols, e / tl.sum(e, axis=0), mask=mask)

        @triton.jit
        def matmul_kernel(
            a_ptr, b_ptr, c_ptr, M, N, K: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr
        ):
            rows = tl.program_id(0) * BM + tl.arange(0, BM)
            cols = tl.program_id(1) * BN + tl.arange(0, BN)
            acc = tl.zeros((BM, BN), dtype=tl.float32)
            for k in range(0, K, BK):
                ks = k + tl.arange(0, BK)
                a_mask = (rows[:, None] < M) & (ks[None, :] < K)
                b_mask = (ks[:, None] < K) & (cols[None, :] < N)
                a = tl.load(a_ptr + rows[:, None] * K + ks[None, :], mask=a_mask, other=0.0)
                b = tl.load(b_ptr + ks[:, None] * N + cols[None, :], mask=b_mask, other=0.0)
                acc += tl.dot(a, b)
            c_mask = (rows[:, None] < M) & (cols[None, :] < N)
            tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc, mask=c_mask)

    finally:
        if _interpret is not None:
            os.environ["TRITON_INTERPRET"] = _interpret


def _need_triton() -> None:
    if triton is None:
        missing("Triton", "install it (`pip install triton`, Linux) beside a CUDA build of torch")
    if torch.cuda.get_device_capability(DEV) < (7, 0):
        missing("a GPU of compute capability 7.0 or later", "Triton compiles for nothing older")


def _naive_softmax(x: torch.Tensor) -> torch.Tensor:
    row_max = x.max(dim=1, keepdim=True).values
    z = x - row_max
    e = torch.exp(z)
    total = e.sum(dim=1, keepdim=True)
    return e / total


def _triton_softmax(x: torch.Tensor) -> torch.Tensor:
    rows, cols = x.shape
    out = torch.empty(rows, cols, device=x.device, dtype=x.dtype)
    softmax_kernel[(rows,)](x, out, cols, x.stride(0), out.stride(0), BLOCK=triton.next_power_of_2(cols))
    return out


def _seconds(fn) -> float:
    return triton.testing.do_bench(fn, rep=100, return_mode="median") / 1e3


def _past_the_l2_cache(cols: int = 1024) -> torch.Tensor:
    """The chapter's sizing: 8192 rows of float32, doubled until the tensor is at least twice the L2 cache."""
    rows = 8192
    while rows * cols * 4 < 2 * torch.cuda.get_device_properties(DEV).L2_cache_size:
        rows *= 2
    return torch.randn(rows, cols, device=DEV)


def test_the_vector_add_matches_torch_on_ragged_sizes() -> None:
    _need_triton()
    for n in (1, 1000, 4096, 100_003):
        x, y = torch.randn(n, device=DEV), torch.randn(n, device=DEV)
        out = torch.empty_like(x)
        add_kernel[(triton.cdiv(n, 256),)](x, y, out, n, BLOCK=256)
        torch.testing.assert_close(out, x + y)


def test_the_fused_softmax_matches_torch_on_ragged_and_strided_rows() -> None:
    _need_triton()
    wide = torch.randn(6, 1100, device=DEV)
    for x in (torch.randn(64, 1000, device=DEV), wide[:, :1000], torch.randn(3, 16, device=DEV)):
        torch.testing.assert_close(_triton_softmax(x), torch.softmax(x, dim=1))


def test_past_the_l2_cache_the_fused_softmax_writes_less_and_beats_eager() -> None:
    _need_triton()
    x = _past_the_l2_cache()
    nbytes = x.numel() * x.element_size()
    torch.testing.assert_close(_triton_softmax(x), torch.softmax(x, dim=1))

    # Bytes written to memory, measured as the memory the call allocates: eager's five operators keep three
    # tensors of x's size (z, e and the result), the fused kernel only its result.
    extra = {}
    for name, fn in (("eager", _naive_softmax), ("fused", _triton_softmax)):
        torch.cuda.synchronize(DEV)
        before = torch.cuda.memory_allocated(DEV)
        torch.cuda.reset_peak_memory_stats(DEV)
        result = fn(x)
        torch.cuda.synchronize(DEV)
        extra[name] = torch.cuda.max_memory_allocated(DEV) - before
        del result
    assert extra["eager"] >= 3 * nbytes, f"eager allocated {extra['eager'] / nbytes:.2f}× x"
    assert extra["fused"] < 1.5 * nbytes, f"the fused kernel allocated {extra['fused'] / nbytes:.2f}× x"

    eager, fused = _seconds(lambda: _naive_softmax(x)), _seconds(lambda: _triton_softmax(x))
    copy = torch.empty_like(x)
    roof = 2 * nbytes / _seconds(lambda: copy.copy_(x)) / 1e9
    fused_gbs = 2 * nbytes / fused / 1e9
    assert fused < 0.6 * eager, f"fused {fused * 1e3:.3f} ms vs eager {eager * 1e3:.3f} ms"
    assert 0.3 * roof < fused_gbs < 1.15 * roof, f"fused {fused_gbs:.0f} GB/s against a copy roof of {roof:.0f} GB/s"


def test_the_tl_dot_matmul_is_right_in_float16_and_bfloat16_is_in_hardware_from_8_0() -> None:
    _need_triton()
    major, _ = torch.cuda.get_device_capability(DEV)
    assert torch.cuda.is_bf16_supported(including_emulation=False) == (major >= 8)
    size = 512
    a, b = (torch.randn(size, size, device=DEV, dtype=torch.float16) for _ in range(2))
    c = torch.empty(size, size, device=DEV, dtype=torch.float32)
    grid = (triton.cdiv(size, 64), triton.cdiv(size, 64))
    matmul_kernel[grid](a, b, c, size, size, size, BM=64, BN=64, BK=32)
    torch.testing.assert_close(c, a.float() @ b.float(), rtol=1e-3, atol=1e-2)


def test_autotune_picks_one_of_the_configs_and_stays_right() -> None:
    _need_triton()
    configs = [triton.Config({"BLOCK": block}) for block in (128, 512, 2048, 8192)]
    tuned_add = triton.autotune(configs=configs, key=["n"])(add_kernel)
    n = 2**22
    x, y, out = (torch.randn(n, device=DEV) for _ in range(3))
    tuned_add[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, out, n)
    torch.cuda.synchronize(DEV)
    torch.testing.assert_close(out, x + y)
    assert tuned_add.best_config.kwargs["BLOCK"] in (128, 512, 2048, 8192)


def _compiled_answer(code: str, name: str, folder: Path):
    """The learner's kernel as a notebook makes it: from source the compiler can read (a file in `folder`)."""
    module = f"ch13_gpu_answer_{name}_{len(list(folder.iterdir()))}"  # a new module for every answer
    (folder / f"{module}.py").write_text("import triton\nimport triton.language as tl\n\n\n" + code, encoding="utf-8")
    sys.path.insert(0, str(folder))
    interpret = os.environ.pop("TRITON_INTERPRET", None)
    try:
        return getattr(importlib.import_module(module), name)
    finally:
        sys.path.remove(str(folder))
        if interpret is not None:
            os.environ["TRITON_INTERPRET"] = interpret


#: What the checker of each kernel exercise tells a kernel without its mask (named from the bounds-checked run).
MISSING_MASK_SAID = {
    1: "1 element(s) past the end of x. Lane 232 of program instance 3 is one of them: it fails offsets < n, yet "
    "nothing masked it off: mask every load and store with offsets < n",
    2: "1 element(s) past the end of x. Lane 100 of program instance 0 is one of them: it fails cols < n_cols, yet "
    "nothing masked it off: mask every load and store with cols < n_cols",
}


def test_the_exercise_checkers_run_compiled_kernels_on_the_gpu(tmp_path: Path) -> None:
    _need_triton()
    from helpers.exercises import ch13
    from helpers.exercises.solutions.ch13 import SOLUTIONS

    for number, name in ((1, "relu_affine_kernel"), (2, "row_scale_kernel")):
        question = ch13.QUESTIONS[number - 1]
        kernel = _compiled_answer(SOLUTIONS[number], name, tmp_path)
        assert not type(kernel).__name__.startswith("Interpreted"), "the answer should be compiled for the GPU"
        outcome = question.evaluate({name: kernel})
        assert outcome.correct, outcome.message
        without_mask = SOLUTIONS[number].replace(", mask=mask", "")  # every load and store unmasked
        assert without_mask != SOLUTIONS[number], "the solution should mask its loads and stores"
        outcome = question.evaluate({name: _compiled_answer(without_mask, name, tmp_path)})
        assert not outcome.correct and MISSING_MASK_SAID[number] in outcome.message, outcome.message
