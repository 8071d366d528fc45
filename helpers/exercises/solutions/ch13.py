"""Chapter 13's exercise solutions, by question number (see the package's docstring)."""

SOLUTIONS: dict[int, str] = {
    1: (
        "@triton.jit\n"
        "def relu_affine_kernel(x_ptr, out_ptr, n, scale, shift, BLOCK: tl.constexpr):\n"
        "    pid = tl.program_id(0)\n"
        "    offsets = pid * BLOCK + tl.arange(0, BLOCK)\n"
        "    mask = offsets < n\n"
        "    x = tl.load(x_ptr + offsets, mask=mask)\n"
        "    tl.store(out_ptr + offsets, tl.maximum(x * scale + shift, 0.0), mask=mask)\n"
    ),
    2: (
        "@triton.jit\n"
        "def row_scale_kernel(x_ptr, scale_ptr, out_ptr, n_cols, x_row_stride, out_row_stride, BLOCK: tl.constexpr):\n"
        "    row = tl.program_id(0)\n"
        "    cols = tl.arange(0, BLOCK)\n"
        "    mask = cols < n_cols\n"
        "    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask)\n"
        "    s = tl.load(scale_ptr + row)\n"
        "    tl.store(out_ptr + row * out_row_stride + cols, x * s, mask=mask)\n"
    ),
    3: (
        "def least_seconds(rows, cols, element_size, roof_gb_per_s):\n"
        "    return 2 * rows * cols * element_size / (roof_gb_per_s * 1e9)  # x read once, the result written once"
    ),
}
