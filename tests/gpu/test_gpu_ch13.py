"""Chapter 13's GPU claims, checked on a real CUDA GPU with Triton (skipped, with the reason, elsewhere).

The chapter's kernels, compiled for the GPU: the vector add, the fused softmax and the online softmax match torch on
ragged, strided and long rows; past the L2 cache the fused softmax writes one tensor where eager's five operators write
three or more, and runs faster than they do, at a bandwidth below the copy roof measured on the same GPU; the Triton
backward passes `gradcheck` in float64; the grouped matmul, K given at run time, is right on ragged shapes and a
transposed view, in float16 and bfloat16 (emulated below compute capability 8.0, where torch reports no bfloat16 in
hardware); its PTX holds tensor-core instructions exactly from 8.0; autotuned over tiles, warps and stages it stays
right and, with tensor cores, reaches a share of cuBLAS; an interpreted copy of a compiled kernel runs the
`@triton.jit` functions it calls (the self-test's "Cannot call @triton.jit'd outside of the scope of a kernel");
`print`/`tl.device_print` print from the GPU and `tl.static_print` while compiling; the exercise checkers run a compiled
kernel on the GPU and still name a missing mask. Floors are ones a Kaggle T4 (sm_75, 320 GB/s) and an H100 both meet;
every timing synchronises the GPU (`triton.testing.do_bench`, which also empties the L2 cache before each run).
"""

from __future__ import annotations

import importlib
import os
import re
import subprocess
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
        def long_softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride, BLOCK: tl.constexpr):
            x_row = x_ptr + tl.program_id(0) * x_row_stride
            out_row = out_ptr + tl.program_id(0) * out_row_stride
            m = tl.full((), -float("inf"), tl.float32)
            s = tl.full((), 0.0, tl.float32)
            for start in range(0, n_cols, BLOCK):
                cols = start + tl.arange(0, BLOCK)
                x = tl.load(x_row + cols, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
                new_m = tl.maximum(m, tl.max(x, axis=0))
                s = s * tl.exp(m - new_m) + tl.sum(tl.exp(x - new_m), axis=0)
                m = new_m
            for start in range(0, n_cols, BLOCK):
                cols = start + tl.arange(0, BLOCK)
                x = tl.load(x_row + cols, mask=cols < n_cols).to(tl.float32)
                tl.store(out_row + cols, tl.exp(x - m) / s, mask=cols < n_cols)

        @triton.jit
        def softmax_backward_kernel(y_ptr, dy_ptr, dx_ptr, n_cols, row_stride, BLOCK: tl.constexpr):
            row = tl.program_id(0)
            cols = tl.arange(0, BLOCK)
            mask = cols < n_cols
            y = tl.load(y_ptr + row * row_stride + cols, mask=mask, other=0.0)
            dy = tl.load(dy_ptr + row * row_stride + cols, mask=mask, other=0.0)
            tl.store(dx_ptr + row * row_stride + cols, y * (dy - tl.sum(y * dy, axis=0)), mask=mask)

        @triton.jit
        def grouped_tile(pid, M, N, BM: tl.constexpr, BN: tl.constexpr, GROUP_M: tl.constexpr):
            tiles_n = tl.cdiv(N, BN)
            group = pid // (GROUP_M * tiles_n)
            first_m = group * GROUP_M
            rows_in_group = tl.minimum(tl.cdiv(M, BM) - first_m, GROUP_M)
            pid_m = first_m + (pid % (GROUP_M * tiles_n)) % rows_in_group
            pid_n = (pid % (GROUP_M * tiles_n)) // rows_in_group
            return pid_m, pid_n

        @triton.jit
        def order_kernel(out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr, GROUP_M: tl.constexpr):
            pid_m, pid_n = grouped_tile(tl.program_id(0), M, N, BM, BN, GROUP_M)
            tl.store(out_ptr + pid_m * tl.cdiv(N, BN) + pid_n, tl.program_id(0))

        @triton.jit
        def matmul_kernel(
            a_ptr,
            b_ptr,
            c_ptr,
            M,
            N,
            K,
            stride_am,
            stride_ak,
            stride_bk,
            stride_bn,
            stride_cm,
            stride_cn,
            BM: tl.constexpr,
            BN: tl.constexpr,
            BK: tl.constexpr,
            GROUP_M: tl.constexpr,
        ):
            pid_m, pid_n = grouped_tile(tl.program_id(0), M, N, BM, BN, GROUP_M)
            rows = pid_m * BM + tl.arange(0, BM)
            cols = pid_n * BN + tl.arange(0, BN)
            acc = tl.zeros((BM, BN), dtype=tl.float32)
            for k in range(0, K, BK):
                ks = k + tl.arange(0, BK)
                a_mask = (rows[:, None] < M) & (ks[None, :] < K)
                a = tl.load(a_ptr + rows[:, None] * stride_am + ks[None, :] * stride_ak, mask=a_mask, other=0.0)
                b_mask = (ks[:, None] < K) & (cols[None, :] < N)
                b = tl.load(b_ptr + ks[:, None] * stride_bk + cols[None, :] * stride_bn, mask=b_mask, other=0.0)
                acc = tl.dot(a, b, acc)
            c_mask = (rows[:, None] < M) & (cols[None, :] < N)
            c = acc.to(c_ptr.dtype.element_ty)
            tl.store(c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn, c, mask=c_mask)

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


def test_the_online_softmax_matches_torch_on_long_and_ragged_rows() -> None:
    _need_triton()
    wide = torch.randn(3, 1100, device=DEV)
    for x, block in (
        (5 * torch.randn(4, 1000, device=DEV), 256),
        (wide[:, :1000], 256),
        (torch.randn(3, 100_003, device=DEV), 1024),
        (torch.randn(2, 5000, device=DEV, dtype=torch.float16), 1024),
    ):
        out = torch.empty(x.shape, device=DEV, dtype=x.dtype)
        long_softmax_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), out.stride(0), BLOCK=block)
        torch.testing.assert_close(out, torch.softmax(x.float(), dim=1).to(x.dtype))


class _TritonSoftmax(torch.autograd.Function):
    """The chapter's `TritonSoftmax`: section 2's kernel forward, the Triton backward."""

    @staticmethod
    def forward(ctx, x):
        y = _triton_softmax(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dy):
        (y,) = ctx.saved_tensors
        dy = dy.contiguous()
        dx = torch.empty_like(y)
        rows, cols = y.shape
        softmax_backward_kernel[(rows,)](y, dy, dx, cols, y.stride(0), BLOCK=triton.next_power_of_2(cols))
        return dx


def test_the_triton_backward_passes_gradcheck_in_float64_and_matches_torch_in_float32() -> None:
    _need_triton()
    x64 = torch.randn(3, 37, dtype=torch.float64, device=DEV, requires_grad=True)
    assert torch.autograd.gradcheck(_TritonSoftmax.apply, (x64,))
    x = torch.randn(8, 1000, device=DEV, requires_grad=True)
    w = torch.randn(8, 1000, device=DEV)
    (_TritonSoftmax.apply(x) * w).sum().backward()
    mine, x.grad = x.grad, None
    (torch.softmax(x, dim=1) * w).sum().backward()
    torch.testing.assert_close(mine, x.grad)
    x.grad = None
    _TritonSoftmax.apply(x).sum().backward()  # a broadcast gradient (strides 0): the sum of a softmax has none
    torch.testing.assert_close(x.grad, torch.zeros_like(x), atol=1e-6, rtol=0)


def _matmul(a: torch.Tensor, b: torch.Tensor, kernel=None, **config) -> torch.Tensor:
    (M, K), N = a.shape, b.shape[1]
    c = torch.empty(M, N, device=a.device, dtype=a.dtype)
    grid = lambda meta: (triton.cdiv(M, meta["BM"]) * triton.cdiv(N, meta["BN"]),)  # noqa: E731
    strides = (a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))
    (kernel or matmul_kernel)[grid](a, b, c, M, N, K, *strides, **config)
    return c


_ONE_CONFIG = {"BM": 64, "BN": 64, "BK": 32, "GROUP_M": 8}


def test_the_grouped_matmul_is_right_on_ragged_shapes_and_a_transposed_view_with_k_at_run_time() -> None:
    _need_triton()
    for dtype in (torch.float16, torch.bfloat16):  # bfloat16 runs on every GPU: emulated below 8.0
        for m, n, k in ((512, 512, 512), (1000, 300, 700), (77, 129, 33)):
            a = torch.randn(m, k, device=DEV, dtype=dtype)
            b = torch.randn(n, k, device=DEV, dtype=dtype).T  # strides (1, k)
            expected = (a.float() @ b.float()).to(dtype)
            torch.testing.assert_close(_matmul(a, b, **_ONE_CONFIG), expected, rtol=2e-2, atol=2e-1)


def test_bfloat16_is_in_hardware_exactly_from_8_0_and_tensor_core_instructions_are_in_the_ptx_exactly_from_8_0() -> (
    None
):
    """The chapter decides tensor cores from the compiled PTX, as here: `mma.sync` (8.x, 12.x), `wgmma.mma_async`
    (9.0) or `tcgen05.mma` (10.x); none on a T4 (7.5), where Triton 3.6 to 3.9 fall back to multiply-adds (checked
    on the CPU with `triton.compile` for sm_75, sm_80, sm_90, sm_100 and sm_120)."""
    _need_triton()
    major, _ = torch.cuda.get_device_capability(DEV)
    assert torch.cuda.is_bf16_supported(including_emulation=False) == (major >= 8)
    a, b = (torch.randn(256, 256, device=DEV, dtype=torch.float16) for _ in range(2))
    c = torch.empty(256, 256, device=DEV, dtype=torch.float16)
    strides = (*a.stride(), *b.stride(), *c.stride())
    for warps in (2, 4):
        compiled = matmul_kernel.warmup(a, b, c, 256, 256, 256, *strides, grid=(1,), num_warps=warps, **_ONE_CONFIG)
        found = set(re.findall(r"\b(?:tcgen05\.mma|wgmma\.mma_async|mma\.sync)", compiled.asm["ptx"]))
        assert bool(found) == (major >= 8), f"sm_{major}x, {warps} warps: {sorted(found)}"


def test_the_autotuned_matmul_picks_one_of_the_configs_stays_right_and_with_tensor_cores_nears_cublas() -> None:
    _need_triton()
    configs = [  # the chapter's
        triton.Config({"BM": 128, "BN": 256, "BK": 64, "GROUP_M": 8}, num_warps=8, num_stages=3),
        triton.Config({"BM": 128, "BN": 128, "BK": 32, "GROUP_M": 8}, num_warps=4, num_stages=4),
        triton.Config({"BM": 64, "BN": 128, "BK": 32, "GROUP_M": 8}, num_warps=4, num_stages=4),
        triton.Config({"BM": 64, "BN": 32, "BK": 32, "GROUP_M": 8}, num_warps=2, num_stages=5),
    ]
    tuned = triton.autotune(configs=configs, key=["M", "N", "K"])(matmul_kernel)
    size = 2048
    a, b = (torch.randn(size, size, device=DEV, dtype=torch.float16) for _ in range(2))
    c = _matmul(a, b, tuned)
    torch.testing.assert_close(c, a @ b, rtol=1e-2, atol=1e-1)
    assert tuned.best_config in configs
    strides = (*a.stride(), *b.stride(), *c.stride())
    best = tuned.best_config.all_kwargs()
    compiled = matmul_kernel.warmup(a, b, c, size, size, size, *strides, grid=(1,), **best)  # as the chapter reads it
    found = re.findall(r"\b(?:tcgen05\.mma|wgmma\.mma_async|mma\.sync)", compiled.asm["ptx"])
    mine, cublas = _seconds(lambda: _matmul(a, b, tuned)), _seconds(lambda: torch.matmul(a, b))
    if found:
        assert mine < 4 * cublas, f"Triton {mine * 1e3:.3f} ms against cuBLAS {cublas * 1e3:.3f} ms, with {found[0]}"


def test_an_interpreted_copy_of_a_compiled_kernel_runs_its_jitted_helpers_and_compiling_still_works_after() -> None:
    """On a GPU machine Triton is imported compiled, so `tl.cdiv` and `grouped_tile` are compiled functions: the
    chapter's `as_interpreted` must interpret them too (the self-test of 2026-11-29 failed there with "Cannot call
    @triton.jit'd outside of the scope of a kernel")."""
    _need_triton()
    from helpers.kernels import as_interpreted

    for group in (1, 3):
        on_cpu = torch.empty(6, 6, dtype=torch.int32)
        as_interpreted(order_kernel)[(36,)](on_cpu, 96, 96, BM=16, BN=16, GROUP_M=group)
        on_gpu = torch.empty(6, 6, dtype=torch.int32, device=DEV)
        order_kernel[(36,)](on_gpu, 96, 96, BM=16, BN=16, GROUP_M=group)
        assert torch.equal(on_cpu, on_gpu.cpu()) and sorted(on_cpu.flatten().tolist()) == list(range(36))
    x = torch.randn(5, 300, device=DEV)
    torch.testing.assert_close(_triton_softmax(x), torch.softmax(x, dim=1))  # a kernel compiled after all that


_PRINTING = """
import torch, triton, triton.language as tl

@triton.jit
def show_kernel(x_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.static_print("static_print, while compiling: BLOCK =", BLOCK, "x:", x)
    tl.device_print("device_print, while running: x", x)
    print("print, compiled:", x)

show_kernel[(2,)](torch.arange(4.0, device="cuda") + 0.5, BLOCK=4)
torch.cuda.synchronize()
"""


def test_device_print_and_print_print_from_the_gpu_and_static_print_while_compiling(tmp_path: Path) -> None:
    """What section 7 says of a compiled kernel. In a child process: the GPU's prints reach its standard output when
    the kernel is done, which a pytest capture inside this process may not see."""
    _need_triton()
    script = tmp_path / "printing.py"
    script.write_text(_PRINTING, encoding="utf-8")
    env = {**os.environ, "TRITON_CACHE_DIR": str(tmp_path / "cache")}  # an empty cache: the kernel is compiled
    env.pop("TRITON_INTERPRET", None)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert any("static_print, while compiling: BLOCK = 4" in line for line in lines), done.stdout[:2000]
    for label in ("device_print, while running: x", "print, compiled:"):
        printed = [line for line in lines if label in line]
        assert len(printed) >= 8 and any("3.5" in line for line in printed), done.stdout[:2000]


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


#: What the checker of each kernel exercise tells a kernel without its mask (named from the bounds-checked run); the
#: kernel to debug is told the symptom only.
MISSING_MASK_SAID = {
    1: "1 element(s) past the end of x. Lane 100 of program instance 0 is one of them: it fails cols < n_cols, yet "
    "the access's mask (if any) let it through: mask every load and store with cols < n_cols",
    2: "row_scale_kernel on 1 row(s) of 100 float32s, 100 apart in x and 100 in out, BLOCK=128: a load of 28 "
    "element(s) outside every tensor given; the lowest lies 1 element(s) past the end of x.",  # debug: no advice
}


def test_the_exercise_checkers_run_compiled_kernels_on_the_gpu(tmp_path: Path) -> None:
    _need_triton()
    from helpers.exercises import ch13
    from helpers.exercises.solutions.ch13 import SOLUTIONS

    for number, name in ((1, "row_centre_kernel"), (2, "row_scale_kernel")):
        question = ch13.QUESTIONS[number - 1]
        kernel = _compiled_answer(SOLUTIONS[number], name, tmp_path)
        assert not type(kernel).__name__.startswith("Interpreted"), "the answer should be compiled for the GPU"
        outcome = question.evaluate({name: kernel})
        assert outcome.correct, outcome.message
        without_mask = SOLUTIONS[number].replace(", other=0.0", "").replace(", mask=mask", "")  # all unmasked
        assert without_mask != SOLUTIONS[number], "the solution should mask its loads and stores"
        outcome = question.evaluate({name: _compiled_answer(without_mask, name, tmp_path)})
        assert not outcome.correct and MISSING_MASK_SAID[number] in outcome.message, outcome.message
