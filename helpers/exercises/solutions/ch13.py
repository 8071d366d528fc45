SOLUTIONS: dict[int, str] = {
    1: "@triton.jit\n"
    "def row_centre_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride, BLOCK: tl.constexpr):\n"
    "    row = tl.program_id(0)\n    cols = tl.arange(0, BLOCK)\n    mask = cols < n_cols\n"
    "    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=0.0).to(tl.float32)  # masked lanes add 0\n"
    "    tl.store(out_ptr + row * out_row_stride + cols, x - tl.sum(x, axis=0) / n_cols, mask=mask)",
    2: "@triton.jit\n"
    "def row_scale_kernel(x_ptr, scale_ptr, out_ptr, n_cols, x_row_stride, out_row_stride, BLOCK: tl.constexpr):\n"
    "    row = tl.program_id(0)\n    cols = tl.arange(0, BLOCK)\n    mask = cols < n_cols\n"
    "    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask)\n"
    "    tl.store(out_ptr + row * out_row_stride + cols, x * tl.load(scale_ptr + row), mask=mask)",
    3: "def predicted_seconds(rows, cols, element_size, roof_gb_per_s):\n"
    "    return 3 * rows * cols * element_size / (roof_gb_per_s * 1e9)"
    "  # x read on both walks, the result written once",
}
