"""Chapter 13's exercise solutions, by question number (see the package's docstring)."""

SOLUTIONS: dict[int, str] = {
    1: """@triton.jit
def relu_affine_kernel(x_ptr, out_ptr, n, scale, shift, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, tl.maximum(x * scale + shift, 0.0), mask=mask)""",
    2: """@triton.jit
def row_scale_kernel(x_ptr, scale_ptr, out_ptr, n_cols, x_row_stride, out_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask)
    tl.store(out_ptr + row * out_row_stride + cols, x * tl.load(scale_ptr + row), mask=mask)""",
    3: """def least_seconds(rows, cols, element_size, roof_gb_per_s):
    return 2 * rows * cols * element_size / (roof_gb_per_s * 1e9)  # x read once, the result written once""",
}
