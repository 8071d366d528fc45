"""Chapter 13's typical wrong answers, by question number (see the package's docstring)."""

from helpers.exercises.solutions.ch13 import SOLUTIONS

from . import lines_of

_Q1_HEAD = lines_of(SOLUTIONS[1], 1, 2)
_Q2_HEAD = lines_of(SOLUTIONS[2], 1, 4)
_Q3_HEAD = lines_of(SOLUTIONS[3], 1, 1)


#: Typical wrong answers to each question, by number, each with words its verdict must contain (the
#: message a learner who wrote it is told). Question 2's first one is the kernel as the chapter hands it
#: out, with both bugs.
WRONG_ANSWERS: dict[int, tuple[tuple[str, str], ...]] = {
    1: (
        (
            _Q1_HEAD + "    pid = tl.program_id(0)\n"
            "    offsets = pid * BLOCK + tl.arange(0, BLOCK)\n"
            "    x = tl.load(x_ptr + offsets)\n"
            "    tl.store(out_ptr + offsets, tl.maximum(x * scale + shift, 0.0))\n",
            # how many of the stray lanes land inside another tensor depends on where memory was allocated
            "element(s) outside every tensor given: 1 element(s) past the end of x. The last block sticks out past n: "
            "mask every load and store",
        ),
        (
            _Q1_HEAD + "    offsets = tl.arange(0, BLOCK)\n"
            "    mask = offsets < n\n"
            "    x = tl.load(x_ptr + offsets, mask=mask)\n"
            "    tl.store(out_ptr + offsets, tl.maximum(x * scale + shift, 0.0), mask=mask)\n",
            "only out[:256] was written: every program instance wrote the same block",
        ),
        (
            _Q1_HEAD + "    pid = tl.program_id(0)\n"
            "    offsets = pid * BLOCK + tl.arange(0, BLOCK)\n"
            "    mask = offsets < n\n"
            "    x = tl.load(x_ptr + offsets, mask=mask)\n"
            "    tl.store(out_ptr + offsets, x * scale + shift, mask=mask)\n",
            "negative results stayed negative: apply the ReLU",
        ),
        (
            _Q1_HEAD + "    pid = tl.program_id(0)\n"
            "    offsets = pid * BLOCK + tl.arange(0, BLOCK)\n"
            "    mask = offsets < n\n"
            "    x = tl.load(x_ptr + offsets, mask=mask)\n"
            "    tl.store(out_ptr + offsets, tl.maximum(x * shift + scale, 0.0), mask=mask)\n",
            "but max(x[0] * 1.5 + (-0.25), 0) is",
        ),
        (
            "def relu_affine_kernel(x_ptr, out_ptr, n, scale, shift, BLOCK: tl.constexpr):\n"
            "    pid = tl.program_id(0)\n"
            "    offsets = pid * BLOCK + tl.arange(0, BLOCK)\n"
            "    mask = offsets < n\n"
            "    x = tl.load(x_ptr + offsets, mask=mask)\n"
            "    tl.store(out_ptr + offsets, tl.maximum(x * scale + shift, 0.0), mask=mask)\n",
            "is a plain Python function, which `relu_affine_kernel[grid](...)` cannot launch: decorate it with "
            "@triton.jit",
        ),
    ),
    2: (
        (
            _Q2_HEAD + "    x = tl.load(x_ptr + row * n_cols + cols)\n"
            "    s = tl.load(scale_ptr + row)\n"
            "    tl.store(out_ptr + row * out_row_stride + cols, x * s)\n",
            "element(s) outside every tensor given: 1 element(s) past the end of x. A row shorter than the block "
            "leaves lanes past n_cols: mask them",
        ),
        (
            _Q2_HEAD + "    mask = cols < n_cols\n"
            "    x = tl.load(x_ptr + row * n_cols + cols, mask=mask)\n"
            "    s = tl.load(scale_ptr + row)\n"
            "    tl.store(out_ptr + row * out_row_stride + cols, x * s, mask=mask)\n",
            "inside x's memory but not one of its elements (a gap between rows). Rows of x start x_row_stride "
            "elements apart, which need not be n_cols",
        ),
        (
            _Q2_HEAD + "    mask = cols < n_cols\n"
            "    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask)\n"
            "    s = tl.load(scale_ptr + row)\n"
            "    tl.store(out_ptr + row * out_row_stride + cols, x * s)\n",
            "element(s) outside every tensor given: 1 element(s) past the end of out",
        ),
        (
            _Q2_HEAD + "    mask = cols <= n_cols\n"
            "    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask)\n"
            "    s = tl.load(scale_ptr + row)\n"
            "    tl.store(out_ptr + row * out_row_stride + cols, x * s, mask=mask)\n",
            "a load of 1 element(s) outside every tensor given: 1 element(s) past the end of x",
        ),
        (
            _Q2_HEAD + "    mask = cols < n_cols\n"
            "    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask)\n"
            "    s = tl.load(scale_ptr + row)\n"
            "    tl.store(out_ptr + row * n_cols + cols, x * s, mask=mask)\n",
            "Rows of out start out_row_stride elements apart",
        ),
    ),
    3: (
        (
            _Q3_HEAD + "    return rows * cols * element_size / (roof_gb_per_s * 1e9)",
            "you counted each element once: the fused kernel reads x once and writes the result once",
        ),
        (
            _Q3_HEAD + "    return 8 * rows * cols * element_size / (roof_gb_per_s * 1e9)",
            "that is the traffic of the five-operator version",
        ),
        (
            _Q3_HEAD + "    return 2 * rows * cols * element_size / (roof_gb_per_s * 2**30)",
            "a GB/s is 10^9 bytes per second",
        ),
        (
            _Q3_HEAD + "    return 2 * rows * cols * element_size / (roof_gb_per_s * 1e9) * 1000",
            "that looks like milliseconds: return seconds",
        ),
        (
            _Q3_HEAD + "    return 2 * rows * cols / (roof_gb_per_s * 1e9)",
            "you counted elements, not bytes: multiply by element_size",
        ),
        (
            _Q3_HEAD + "    return 2 * rows * cols * element_size / roof_gb_per_s",
            "expected 0.0002237 s: 2 × 8192 × 1024 × 4 bytes",
        ),
    ),
}
