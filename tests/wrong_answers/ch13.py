"""Chapter 13's typical wrong answers, by question number (see the package's docstring)."""

from helpers.exercises.solutions.ch13 import SOLUTIONS

from . import lines_of

_Q1_HEAD = lines_of(SOLUTIONS[1], 1, 2)
_Q1_OFFSETS = lines_of(SOLUTIONS[1], 3, 3)
_Q2_HEAD = lines_of(SOLUTIONS[2], 1, 4)
_Q3_HEAD = lines_of(SOLUTIONS[3], 1, 1)
#: The first cases' words: question 1's ragged n, question 2's single ragged row and its rows further apart.
_RAGGED = "relu_affine_kernel on n=1000 in blocks of 256 (scale=1.5, shift=-0.25, float32)"
_ONE_ROW = "row_scale_kernel on 1 row(s) of 100 float32s, 100 apart in x and 100 in out, BLOCK=128: "
_APART = "row_scale_kernel on 3 row(s) of 128 int32s, 160 apart in x and 136 in out, BLOCK=128: "


#: Typical wrong answers to each question, by number, each with words its verdict must contain (the
#: message a learner who wrote it is told). Question 2's first one is the kernel as the chapter hands it
#: out, with both bugs.
WRONG_ANSWERS: dict[int, tuple[tuple[str, str], ...]] = {
    1: (
        (
            _Q1_HEAD + _Q1_OFFSETS + "    x = tl.load(x_ptr + offsets)\n"
            "    tl.store(out_ptr + offsets, tl.maximum(x * scale + shift, 0.0))\n",
            # how many of the stray lanes land inside another tensor depends on where memory was allocated
            "element(s) outside every tensor given; the lowest lies 1 element(s) past the end of x. Lane 232 of "
            "program instance 3 is one of them: it fails offsets < n, yet nothing masked it off: mask every load and "
            "store",
        ),
        (  # offsets from the program id alone: the blocks overlap, the mask is right and is not named
            _Q1_HEAD + "    offsets = tl.program_id(0) + tl.arange(0, BLOCK)\n"
            "    mask = offsets < n\n"
            "    x = tl.load(x_ptr + offsets, mask=mask)\n"
            "    tl.store(out_ptr + offsets, tl.maximum(x * scale + shift, 0.0), mask=mask)\n",
            f"{_RAGGED}: out[259] is never written, nor are 740 more; expected 2.733097 (within 1e-05): no program "
            "instance's offsets reach them: instance i must cover the BLOCK elements from i * BLOCK",
        ),
        (  # the mask off by one: lane n gets through
            _Q1_HEAD + _Q1_OFFSETS + "    mask = offsets <= n\n"
            "    x = tl.load(x_ptr + offsets, mask=mask)\n"
            "    tl.store(out_ptr + offsets, tl.maximum(x * scale + shift, 0.0), mask=mask)\n",
            f"{_RAGGED}: a load of 1 element(s) outside every tensor given; the lowest lies 1 element(s) past the end "
            "of x. Lane 232 of program instance 3 is one of them: it fails offsets < n, yet nothing masked it off",
        ),
        (  # the load masked, the store not
            _Q1_HEAD + _Q1_OFFSETS + "    x = tl.load(x_ptr + offsets, mask=offsets < n, other=0.0)\n"
            "    tl.store(out_ptr + offsets, tl.maximum(x * scale + shift, 0.0))\n",
            f"{_RAGGED}: a store of 24 element(s) outside every tensor given; the lowest lies 1 element(s) past the "
            "end of out. Lane 232 of program instance 3 is one of them: it fails offsets < n, yet nothing masked it "
            "off",
        ),
        (
            _Q1_HEAD + "    offsets = tl.arange(0, BLOCK)\n"
            "    mask = offsets < n\n"
            "    x = tl.load(x_ptr + offsets, mask=mask)\n"
            "    tl.store(out_ptr + offsets, tl.maximum(x * scale + shift, 0.0), mask=mask)\n",
            f"{_RAGGED}: out[256] is never written, nor are 743 more; expected 1.51369 (within 1e-05): no program "
            "instance's offsets reach them: instance i must cover the BLOCK elements from i * BLOCK",
        ),
        (
            _Q1_HEAD + _Q1_OFFSETS + "    mask = offsets < n\n"
            "    x = tl.load(x_ptr + offsets, mask=mask)\n"
            "    tl.store(out_ptr + offsets, x * scale + shift, mask=mask)\n",
            f"{_RAGGED}: out[0] is -1.045838; expected 0 (within 1e-05)",
        ),
        (
            _Q1_HEAD + _Q1_OFFSETS + "    mask = offsets < n\n"
            "    x = tl.load(x_ptr + offsets, mask=mask)\n"
            "    tl.store(out_ptr + offsets, tl.maximum(x * shift + scale, 0.0), mask=mask)\n",
            f"{_RAGGED}: out[0] is 1.63264; expected 0 (within 1e-05)",
        ),
        (  # every program instance on block 0: program_id along an axis the grid does not have
            _Q1_HEAD + "    offsets = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)\n"
            "    mask = offsets < n\n"
            "    x = tl.load(x_ptr + offsets, mask=mask)\n"
            "    tl.store(out_ptr + offsets, tl.maximum(x * scale + shift, 0.0), mask=mask)\n",
            f"{_RAGGED}: out[256] is never written, nor are 743 more; expected 1.51369 (within 1e-05): no program "
            "instance's offsets reach them: instance i must cover the BLOCK elements from i * BLOCK",
        ),
        (  # computed in float16 on float32 x: near, yet off by more than float32 allows; enough digits to see it
            _Q1_HEAD + _Q1_OFFSETS + "    mask = offsets < n\n"
            "    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float16)\n"
            "    tl.store(out_ptr + offsets, tl.maximum(x * scale + shift, 0.0), mask=mask)\n",
            f"{_RAGGED}: out[5] is 1.234375; expected 1.234472 (within 1e-05)",
        ),
        (  # a round trip through out: the affine map stored, loaded back, and the ReLU stored over it
            _Q1_HEAD + _Q1_OFFSETS + "    mask = offsets < n\n"
            "    x = tl.load(x_ptr + offsets, mask=mask)\n"
            "    tl.store(out_ptr + offsets, x * scale + shift, mask=mask)\n"
            "    y = tl.load(out_ptr + offsets, mask=mask)\n"
            "    tl.store(out_ptr + offsets, tl.maximum(y, 0.0), mask=mask)\n",
            f"{_RAGGED} stored 1000 element(s) more than once: a kernel stores each result once",
        ),
        (  # out cleared first, then written: two passes over out
            _Q1_HEAD + _Q1_OFFSETS + "    mask = offsets < n\n"
            "    x = tl.load(x_ptr + offsets, mask=mask)\n"
            "    tl.store(out_ptr + offsets, x * 0.0, mask=mask)\n"
            "    tl.store(out_ptr + offsets, tl.maximum(x * scale + shift, 0.0), mask=mask)\n",
            f"{_RAGGED} stored 1000 element(s) more than once",
        ),
        (  # the mask one short: the last element is never written, blocks and program ids are right
            _Q1_HEAD + _Q1_OFFSETS + "    mask = offsets < n - 1\n"
            "    x = tl.load(x_ptr + offsets, mask=mask)\n"
            "    tl.store(out_ptr + offsets, tl.maximum(x * scale + shift, 0.0), mask=mask)\n",
            f"{_RAGGED}: out[999] is never written; expected 1.517713 (within 1e-05): the mask turned off every lane "
            "that reached them",
        ),
        (  # only the positive results stored: out keeps what it held where the result is 0
            _Q1_HEAD + _Q1_OFFSETS + "    mask = offsets < n\n"
            "    y = tl.load(x_ptr + offsets, mask=mask) * scale + shift\n"
            "    tl.store(out_ptr + offsets, y, mask=mask & (y > 0))\n",
            f"{_RAGGED}: out[0] is never written, nor are 573 more; expected 0 (within 1e-05): the mask turned off "
            "every lane that reached them",
        ),
        (  # every other block: whole blocks never written, none written twice
            _Q1_HEAD + "    offsets = tl.program_id(0) * 2 * BLOCK + tl.arange(0, BLOCK)\n"
            "    mask = offsets < n\n"
            "    x = tl.load(x_ptr + offsets, mask=mask)\n"
            "    tl.store(out_ptr + offsets, tl.maximum(x * scale + shift, 0.0), mask=mask)\n",
            f"{_RAGGED}: out[256] is never written, nor are 487 more; expected 1.51369 (within 1e-05): no program "
            "instance's offsets reach them",
        ),
        (  # the block's length written in, not BLOCK: the mask is right, the offsets reach the first 256 of each block
            _Q1_HEAD + "    offsets = tl.program_id(0) * 256 + tl.arange(0, 256)\n"
            "    mask = offsets < n\n"
            "    x = tl.load(x_ptr + offsets, mask=mask)\n"
            "    tl.store(out_ptr + offsets, tl.maximum(x * scale + shift, 0.0), mask=mask)\n",
            "relu_affine_kernel on n=100 in blocks of 128 (scale=-2.0, shift=0.5, float32): one access of a program "
            "instance had 256 lanes, more than BLOCK (128)",
        ),
        (  # the result computed in place in x, then copied
            _Q1_HEAD + _Q1_OFFSETS + "    mask = offsets < n\n"
            "    x = tl.load(x_ptr + offsets, mask=mask)\n"
            "    tl.store(x_ptr + offsets, tl.maximum(x * scale + shift, 0.0), mask=mask)\n"
            "    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask), mask=mask)\n",
            f"{_RAGGED} changed its arguments: a kernel should write into out only",
        ),
        (  # the mask right, the load's address one element on (round 5): the lane that strays passes the mask's test
            _Q1_HEAD + "    lanes = tl.arange(0, BLOCK)\n"
            "    mask = tl.program_id(0) * BLOCK + lanes < n\n"
            "    x = tl.load(x_ptr + tl.program_id(0) * BLOCK + lanes + 1, mask=mask)\n"
            "    tl.store(out_ptr + tl.program_id(0) * BLOCK + lanes, tl.maximum(x * scale + shift, 0.0), mask=mask)\n",
            f"{_RAGGED}: a load of 1 element(s) outside every tensor given; the lowest lies 1 element(s) past the end "
            "of x. Lane 231 of program instance 3 is one of them: it is in an access off by +1: its address should be "
            "x_ptr + offsets",
        ),
        (  # @triton.jit left out: run as Python, it fails in Triton's words (they differ by version), seen by type
            SOLUTIONS[1].removeprefix("@triton.jit\n"),
            f"{_RAGGED} (run as Python: no @triton.jit) raised ",
        ),
        (
            "def relu_affine_kernel(x_ptr, out_ptr, n, scale, shift, BLOCK):\n"
            "    out_ptr.copy_(torch.relu(x_ptr * scale + shift))  # torch, not a kernel\n",
            "`relu_affine_kernel` is a plain Python function, not a Triton kernel: put @triton.jit above its def",
        ),
    ),
    2: (
        (
            _Q2_HEAD + "    x = tl.load(x_ptr + row * n_cols + cols)\n"
            "    s = tl.load(scale_ptr + row)\n"
            "    tl.store(out_ptr + row * out_row_stride + cols, x * s)\n",
            f"{_ONE_ROW}a load of 28 element(s) outside every tensor given; the lowest lies 1 element(s) past the end "
            "of x. Lane 100 of program instance 0 is one of them: it fails cols < n_cols, yet nothing masked it off: "
            "mask every load and store with cols < n_cols",
        ),
        (
            _Q2_HEAD + "    mask = cols < n_cols\n"
            "    x = tl.load(x_ptr + row * n_cols + cols, mask=mask)\n"
            "    s = tl.load(scale_ptr + row)\n"
            "    tl.store(out_ptr + row * out_row_stride + cols, x * s, mask=mask)\n",
            f"{_APART}a load of 32 element(s) outside every tensor given; the lowest lies inside x's memory but not "
            "one of its elements (a gap between rows). Lane 0 of program instance 1 is one of them: it is in an "
            "access off by -32: its address should be x_ptr + row * x_row_stride + cols",
        ),
        (
            _Q2_HEAD + "    mask = cols < n_cols\n"
            "    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask)\n"
            "    s = tl.load(scale_ptr + row)\n"
            "    tl.store(out_ptr + row * out_row_stride + cols, x * s)\n",
            f"{_ONE_ROW}a store of 28 element(s) outside every tensor given; the lowest lies 1 element(s) past the "
            "end of out. Lane 100 of program instance 0 is one of them: it fails cols < n_cols",
        ),
        (
            _Q2_HEAD + "    mask = cols <= n_cols\n"
            "    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask)\n"
            "    s = tl.load(scale_ptr + row)\n"
            "    tl.store(out_ptr + row * out_row_stride + cols, x * s, mask=mask)\n",
            f"{_ONE_ROW}a load of 1 element(s) outside every tensor given; the lowest lies 1 element(s) past the end "
            "of x",
        ),
        (
            _Q2_HEAD + "    mask = cols < n_cols\n"
            "    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask)\n"
            "    s = tl.load(scale_ptr + row)\n"
            "    tl.store(out_ptr + row * n_cols + cols, x * s, mask=mask)\n",
            f"{_APART}a store of 8 element(s) outside every tensor given; the lowest lies inside out's memory but not "
            "one of its elements (a gap between rows). Lane 0 of program instance 1 is one of them: it is in an "
            "access off by -8: its address should be out_ptr + row * out_row_stride + cols",
        ),
        (  # out's rows placed as x's are
            _Q2_HEAD + "    mask = cols < n_cols\n"
            "    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask)\n"
            "    s = tl.load(scale_ptr + row)\n"
            "    tl.store(out_ptr + row * x_row_stride + cols, x * s, mask=mask)\n",
            f"{_APART}a store of 8 element(s) outside every tensor given; the lowest lies inside out's memory",
        ),
        (  # a mask that the rows' length, not the stride, should set: the stray lanes are past n_cols, so it is named
            _Q2_HEAD + "    mask = cols < x_row_stride\n"
            "    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask)\n"
            "    s = tl.load(scale_ptr + row)\n"
            "    tl.store(out_ptr + row * out_row_stride + cols, x * s, mask=mask)\n",
            "row_scale_kernel on 3 row(s) of 100 float16s, 160 apart in x and 136 in out, BLOCK=256: a load of 60 "
            "element(s) outside every tensor given; the lowest lies inside x's memory but not one of its elements (a "
            "gap between rows). Lane 100 of program instance 0 is one of them: it fails cols < n_cols, yet nothing "
            "masked it off",
        ),
        (
            _Q2_HEAD + "    mask = cols < n_cols\n"
            "    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask)\n"
            "    s = tl.load(scale_ptr + cols, mask=mask)\n"
            "    tl.store(out_ptr + row * out_row_stride + cols, x * s, mask=mask)\n",
            # a stray access to scale names no mistake (scale's load is not what the chapter teaches)
            f"{_ONE_ROW}a load of 99 element(s) outside every tensor given; the lowest lies 1 element(s) past the end "
            "of scale.",
        ),
        (  # the rows scaled in place in x, then copied
            _Q2_HEAD + "    mask = cols < n_cols\n"
            "    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask)\n"
            "    tl.store(x_ptr + row * x_row_stride + cols, x * tl.load(scale_ptr + row), mask=mask)\n"
            "    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask)\n"
            "    tl.store(out_ptr + row * out_row_stride + cols, x, mask=mask)\n",
            f"{_ONE_ROW[:-2]} changed its arguments: a kernel should write into out only",
        ),
        (  # the mask one short: each row's last element is never written
            _Q2_HEAD + "    mask = cols < n_cols - 1\n"
            "    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask)\n"
            "    tl.store(out_ptr + row * out_row_stride + cols, x * tl.load(scale_ptr + row), mask=mask)\n",
            f"{_ONE_ROW}out[0, 99] is never written; expected -4.759252 (within 1e-05): the mask turned off every "
            "lane that reached them",
        ),
        (  # BLOCK taken as 128, the width of the chapter's blocks (accepted before: every case had BLOCK=128)
            _Q2_HEAD.replace("BLOCK)", "128)") + "    mask = cols < n_cols\n"
            "    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask)\n"
            "    tl.store(out_ptr + row * out_row_stride + cols, x * tl.load(scale_ptr + row), mask=mask)\n",
            "row_scale_kernel on 2 row(s) of 4499 float32s, 8200 apart in x and 8196 in out, BLOCK=8192: out[0, 128] "
            "is never written, nor are 8741 more",
        ),
        (  # a wider constant (round 10: 256 and 1024 accepted before)
            _Q2_HEAD.replace("BLOCK)", "4096)") + "    mask = cols < n_cols\n"
            "    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask)\n"
            "    tl.store(out_ptr + row * out_row_stride + cols, x * tl.load(scale_ptr + row), mask=mask)\n",
            "BLOCK=128: one access of a program instance had 4096 lanes, more than BLOCK (128)",
        ),
        (  # the two strides swapped: x's rows read where out's start (n_cols is not in it)
            _Q2_HEAD + "    mask = cols < n_cols\n"
            "    x = tl.load(x_ptr + row * out_row_stride + cols, mask=mask)\n"
            "    tl.store(out_ptr + row * x_row_stride + cols, x * tl.load(scale_ptr + row), mask=mask)\n",
            f"{_APART}a load of 24 element(s) outside every tensor given; the lowest lies inside x's memory but not "
            "one of its elements (a gap between rows). Lane 0 of program instance 1 is one of them: it is in an "
            "access off by -24: its address should be x_ptr + row * x_row_stride + cols",
        ),
        (  # masked right, the row stride used as the column stride (round 5): the mask is not named (how many stray
            # lanes land inside another tensor depends on where memory was allocated)
            _Q2_HEAD + "    mask = cols < n_cols\n"
            "    x = tl.load(x_ptr + row + cols * x_row_stride, mask=mask)\n"
            "    tl.store(out_ptr + row + cols * out_row_stride, x * tl.load(scale_ptr + row), mask=mask)\n",
            "element(s) outside every tensor given; the lowest lies 1 element(s) past the end of x. Lane 1 of program "
            "instance 0 is one of them: it passes cols < n_cols: its address should be x_ptr + row * x_row_stride + "
            "cols, the offsets the mask tests",
        ),
        (  # the same in the store only
            _Q2_HEAD + "    mask = cols < n_cols\n"
            "    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask)\n"
            "    tl.store(out_ptr + row + cols * out_row_stride, x * tl.load(scale_ptr + row), mask=mask)\n",
            "element(s) outside every tensor given; the lowest lies 1 element(s) past the end of out. Lane 1 of "
            "program instance 0 is one of them: it passes cols < n_cols: its address should be out_ptr + row * "
            "out_row_stride",
        ),
        (  # columns two elements apart
            _Q2_HEAD + "    mask = cols < n_cols\n"
            "    x = tl.load(x_ptr + row * x_row_stride + 2 * cols, mask=mask)\n"
            "    tl.store(out_ptr + row * out_row_stride + cols, x * tl.load(scale_ptr + row), mask=mask)\n",
            "element(s) outside every tensor given; the lowest lies 1 element(s) past the end of x. Lane 50 of program "
            "instance 0 is one of them: it passes cols < n_cols: its address should be x_ptr + row * x_row_stride",
        ),
        (  # every program instance on row 0
            "@triton.jit\n" + lines_of(SOLUTIONS[2], 2, 2) + "    row = 0\n" + lines_of(SOLUTIONS[2], 4, 7),
            f"{_APART}out[1, 0] is never written, nor are 255 more; expected 0 (within 1e-05): no program instance's "
            "offsets reach them: instance r must cover row r",
        ),
    ),
    3: (
        (
            _Q3_HEAD + "    return rows * cols * element_size / (roof_gb_per_s * 1e9)",
            "least_seconds(8192, 1024, 4, 300) returned 0.000111848; expected 0.000223696",
        ),
        (
            _Q3_HEAD + "    return 8 * rows * cols * element_size / (roof_gb_per_s * 1e9)",
            "least_seconds(8192, 1024, 4, 300) returned 0.000894785; expected 0.000223696",
        ),
        (
            _Q3_HEAD + "    return 2 * rows * cols * element_size / (roof_gb_per_s * 2**30)",
            "least_seconds(8192, 1024, 4, 300) returned 0.000208333; expected 0.000223696",
        ),
        (
            _Q3_HEAD + "    return 2 * rows * cols * element_size / (roof_gb_per_s * 1e9) * 1000",
            "least_seconds(8192, 1024, 4, 300) returned 0.223696; expected 0.000223696",
        ),
        (  # GB taken as 10^6 bytes: seconds, yet 1000 times too long
            _Q3_HEAD + "    return 2 * rows * cols * element_size / (roof_gb_per_s * 1e6)",
            "least_seconds(8192, 1024, 4, 300) returned 0.223696; expected 0.000223696",
        ),
        (
            _Q3_HEAD + "    return 2 * rows * cols / (roof_gb_per_s * 1e9)",
            "least_seconds(8192, 1024, 4, 300) returned 5.59241e-05; expected 0.000223696",
        ),
        (  # microseconds: no mistake named (the factor could be microseconds or a GB taken as 10^3 bytes)
            _Q3_HEAD + "    return 2e6 * rows * cols * element_size / (roof_gb_per_s * 1e9)",
            "least_seconds(8192, 1024, 4, 300) returned 223.696; expected 0.000223696",
        ),
        (
            _Q3_HEAD + "    return 16 * rows * cols * element_size / (roof_gb_per_s * 1e9)",
            "least_seconds(8192, 1024, 4, 300) returned 0.00178957; expected 0.000223696",
        ),
        (  # float32's 4 bytes whatever element_size says: right on the first case only
            _Q3_HEAD + "    return 2 * rows * cols * 4 / (roof_gb_per_s * 1e9)",
            "least_seconds(4096, 2048, 2, 1000) returned 6.71089e-05; expected 3.35544e-05",
        ),
        (
            _Q3_HEAD + "    return 2 * rows * cols * element_size / roof_gb_per_s",
            "least_seconds(8192, 1024, 4, 300) returned 223696; expected 0.000223696",
        ),
        (
            _Q3_HEAD + "    return 2 * rows * cols * element_size // (roof_gb_per_s * 1e9)",
            "least_seconds(8192, 1024, 4, 300) returned 0.0; expected 0.000223696",
        ),
        (  # right where the roof is a whole number, as in the chapter, but it need not be
            _Q3_HEAD + "    return 2 * rows * cols * element_size / (int(roof_gb_per_s) * 1e9)",
            "least_seconds(100_000, 300, 8, 250.5) returned",
        ),
    ),
}

#: Right answers other than the solutions, written as a learner could: other spellings, types and orders.
RIGHT_ANSWERS: dict[int, tuple[str, ...]] = {
    1: (
        "@triton.jit\n"
        "def relu_affine_kernel(x_ptr, out_ptr, n, scale, shift, BLOCK: tl.constexpr):\n"
        "    i = tl.program_id(axis=0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    y = tl.load(x_ptr + i, mask=i < n, other=0.0) * scale + shift\n"
        "    tl.store(out_ptr + i, tl.where(y > 0, y, 0.0), mask=i < n)\n",
        # a mask that leaves the lanes past n out by their block's length, and an integer 0
        "@triton.jit\n"
        "def relu_affine_kernel(x_ptr, out_ptr, n, scale, shift, BLOCK: tl.constexpr):\n"
        "    start = tl.program_id(0) * BLOCK\n"
        "    lanes = tl.arange(0, BLOCK)\n"
        "    keep = lanes < n - start\n"
        "    x = tl.load(x_ptr + start + lanes, mask=keep)\n"
        "    tl.store(out_ptr + start + lanes, tl.maximum(x * scale + shift, 0), mask=keep)\n",
        # x loaded twice by the same instance: a second pass over x in the interpreter, one over memory on a GPU (the
        # second load of the same addresses is served by the cache), so still fused into one pass
        _Q1_HEAD + _Q1_OFFSETS + "    mask = offsets < n\n"
        "    y = tl.load(x_ptr + offsets, mask=mask) * scale + shift\n"
        "    tl.store(out_ptr + offsets, tl.where(tl.load(x_ptr + offsets, mask=mask) * scale + shift > 0, y, 0), "
        "mask=mask)\n",
    ),
    2: (
        "@triton.jit\n"
        "def row_scale_kernel(x_ptr, scale_ptr, out_ptr, n_cols, x_row_stride, out_row_stride, BLOCK: tl.constexpr):\n"
        "    r = tl.program_id(0)\n"
        "    c = tl.arange(0, BLOCK)\n"
        "    inside = c < n_cols\n"
        "    row = tl.load(x_ptr + r * x_row_stride + c, mask=inside, other=0.0)\n"
        "    tl.store(out_ptr + r * out_row_stride + c, row * tl.load(scale_ptr + r), mask=inside)\n",
    ),
    3: (
        "def least_seconds(rows, cols, element_size, roof_gb_per_s):\n"
        "    return (rows * cols * element_size * 2) / roof_gb_per_s / 1e9",
        "def least_seconds(rows, cols, element_size, roof_gb_per_s):\n"
        "    return torch.tensor(2.0 * rows * cols * element_size) / (roof_gb_per_s * 10**9)",
        "import numpy as np\n\n"
        "def least_seconds(rows, cols, element_size, roof_gb_per_s):\n"
        "    return np.float64(rows) * cols * element_size * 2 / np.float64(roof_gb_per_s * 1e9)",
        "from fractions import Fraction\n\n"
        "def least_seconds(rows, cols, element_size, roof_gb_per_s):\n"
        "    return Fraction(2 * rows * cols * element_size) / Fraction(roof_gb_per_s) / 10**9",
    ),
}

#: Round 11: a program instance that does more than its block or row (its values right), and wider constants
WRONG_ANSWERS[1] += (
    (
        _Q1_HEAD + "    for k in tl.static_range(2):  # instance p does blocks 2p and 2p + 1\n"
        "        offsets = (2 * tl.program_id(0) + k) * BLOCK + tl.arange(0, BLOCK)\n"
        "        mask = offsets < n\n"
        "        x = tl.load(x_ptr + offsets, mask=mask)\n"
        "        tl.store(out_ptr + offsets, tl.maximum(x * scale + shift, 0.0), mask=mask)\n",
        f"{_RAGGED}: program instance 0 stored into 2 blocks of BLOCK elements: one block each",
    ),
    (
        _Q1_HEAD + "    offsets = tl.program_id(0) * 4096 + tl.arange(0, 4096)\n"
        "    mask = offsets < n\n"
        "    x = tl.load(x_ptr + offsets, mask=mask)\n"
        "    tl.store(out_ptr + offsets, tl.maximum(x * scale + shift, 0.0), mask=mask)\n",
        "one access of a program instance had 4096 lanes, more than BLOCK (256)",
    ),
)
#: Round 11: blocks taken in reverse order, and a row done in chunks narrower than BLOCK, one instance each
RIGHT_ANSWERS[1] += (
    _Q1_HEAD.rstrip("\n") + "\n    p = tl.num_programs(0) - 1 - tl.program_id(0)\n"
    "    offsets = p * BLOCK + tl.arange(0, BLOCK)\n"
    "    mask = offsets < n\n"
    "    x = tl.load(x_ptr + offsets, mask=mask)\n"
    "    tl.store(out_ptr + offsets, tl.maximum(x * scale + shift, 0.0), mask=mask)\n",
)
RIGHT_ANSWERS[2] += (
    _Q2_HEAD.replace("    cols = tl.arange(0, BLOCK)\n", "") + "    s = tl.load(scale_ptr + row)\n"
    "    for start in range(0, BLOCK, 64):\n"
    "        cols = start + tl.arange(0, 64)\n"
    "        mask = cols < n_cols\n"
    "        x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask)\n"
    "        tl.store(out_ptr + row * out_row_stride + cols, x * s, mask=mask)\n",
)
#: Round 12: a tensor descriptor (refused before with the checker's own error; block pointers were too, and Triton 3.9
#: has removed them)
RIGHT_ANSWERS[1] += (
    _Q1_HEAD + "    pid = tl.program_id(0)\n"
    "    xd = tl.make_tensor_descriptor(x_ptr, shape=[n], strides=[1], block_shape=[BLOCK])\n"
    "    od = tl.make_tensor_descriptor(out_ptr, shape=[n], strides=[1], block_shape=[BLOCK])\n"
    "    x = xd.load([pid * BLOCK])\n"
    "    od.store([pid * BLOCK], tl.maximum(x * scale + shift, 0.0).to(out_ptr.dtype.element_ty))\n",
)
#: Rounds 13-14: a block or row in narrower chunks with no mask, or with a right mask and an address one off (told
#: before that the address, then that the mask, was wrong: lane i of a chunk is not element i of the block, so the
#: lanes alone cannot tell which one)
WRONG_ANSWERS[1] += (
    (
        _Q1_HEAD + "    pid = tl.program_id(0)\n"
        "    HALF: tl.constexpr = BLOCK // 2\n"
        "    for i in tl.static_range(2):\n"
        "        offs = pid * BLOCK + i * HALF + tl.arange(0, HALF)\n"
        "        x = tl.load(x_ptr + offs)\n"
        "        tl.store(out_ptr + offs, tl.maximum(x * scale + shift, 0.0))\n",
        "Lane 104 of program instance 3 is one of them: it is in an access of 128 lanes: check its mask and its "
        "address",
    ),
)
WRONG_ANSWERS[2] += (
    (
        _Q2_HEAD.replace("    cols = tl.arange(0, BLOCK)\n", "") + "    s = tl.load(scale_ptr + row)\n"
        "    for start in range(0, BLOCK, 64):\n"
        "        cols = start + tl.arange(0, 64)\n"
        "        x = tl.load(x_ptr + row * x_row_stride + cols)\n"
        "        tl.store(out_ptr + row * out_row_stride + cols, x * s)\n",
        "Lane 36 of program instance 0 is one of them: it is in an access of 64 lanes: check its mask and its address",
    ),
)
WRONG_ANSWERS[2] += (
    (
        _Q2_HEAD.replace("    cols = tl.arange(0, BLOCK)\n", "") + "    s = tl.load(scale_ptr + row)\n"
        "    for start in range(0, BLOCK, BLOCK // 4):\n"
        "        cols = start + tl.arange(0, BLOCK // 4)\n"
        "        mask = cols < n_cols\n"
        "        x = tl.load(x_ptr + row * x_row_stride + cols + 1, mask=mask)\n"
        "        tl.store(out_ptr + row * out_row_stride + cols, x * s, mask=mask)\n",
        "Lane 3 of program instance 0 is one of them: it is in an access of 32 lanes: check its mask and its address",
    ),
)
#: Round 15: lanes in another order (told the address was wrong), instances or chunks storing past their own block or
#: row (told "fused into one pass"), and a chunk width fixed at 64 (passed: every BLOCK was a multiple of 64)
WRONG_ANSWERS[1] += (
    (
        _Q1_HEAD + "    offsets = tl.program_id(0) * BLOCK + (BLOCK - 1 - tl.arange(0, BLOCK))\n"
        "    x = tl.load(x_ptr + offsets)\n"
        "    tl.store(out_ptr + offsets, tl.maximum(x * scale + shift, 0.0))\n",
        f"{_RAGGED}: a load of 24 element(s) outside every tensor given; the lowest lies 1 element(s) past the end of "
        "x. Lane 0 of program instance 3 is one of them: it fails offsets < n, yet nothing masked it off",
    ),
    (
        _Q1_HEAD + "    for start in range(0, BLOCK, 64):\n"
        "        offsets = tl.program_id(0) * BLOCK + start + tl.arange(0, 64)\n"
        "        mask = offsets < n\n"
        "        x = tl.load(x_ptr + offsets, mask=mask)\n"
        "        tl.store(out_ptr + offsets, tl.maximum(x * scale + shift, 0.0), mask=mask)\n",
        "relu_affine_kernel on n=51 in blocks of 4 (scale=0.5, shift=1.0, float32): one access of a program "
        "instance had 64 lanes, more than BLOCK (4)",
    ),
    (
        _Q1_HEAD + "    for start in range(0, BLOCK, 24):\n"
        "        offsets = tl.program_id(0) * BLOCK + start + tl.arange(0, 32)\n"
        "        mask = offsets < n\n"
        "        x = tl.load(x_ptr + offsets, mask=mask)\n"
        "        tl.store(out_ptr + offsets, tl.maximum(x * scale + shift, 0.0), mask=mask)\n",
        f"{_RAGGED}: program instance 0 stored into 2 blocks of BLOCK elements: one block each",
    ),
)
WRONG_ANSWERS[2] += (
    (
        SOLUTIONS[2].replace("tl.arange(0, BLOCK)", "BLOCK - 1 - tl.arange(0, BLOCK)").replace("< n_cols", "<= n_cols"),
        f"{_ONE_ROW}a load of 1 element(s) outside every tensor given; the lowest lies 1 element(s) past the end of x. "
        "Lane 27 of program instance 0 is one of them: it fails cols < n_cols, yet nothing masked it off",
    ),
    (
        "@triton.jit\ndef row_scale_kernel(x_ptr, scale_ptr, out_ptr, n_cols, x_row_stride, out_row_stride, "
        "BLOCK: tl.constexpr):\n"
        "    cols, r = tl.arange(0, BLOCK), 0\n"
        "    while r < tl.num_programs(0):  # every instance, every row (Triton 3.6 runs no range() of it)\n"
        "        x = tl.load(x_ptr + r * x_row_stride + cols, mask=cols < n_cols)\n"
        "        tl.store(out_ptr + r * out_row_stride + cols, x * tl.load(scale_ptr + r), mask=cols < n_cols)\n"
        "        r += 1\n",
        f"{_APART}program instance 0 stored into 3 rows: one row each",
    ),
    (
        _Q2_HEAD.replace("    cols = tl.arange(0, BLOCK)\n", "") + "    s = tl.load(scale_ptr + row)\n"
        "    for start in range(0, BLOCK, 96):\n"
        "        cols = start + tl.arange(0, 128)\n"
        "        mask = cols < n_cols\n"
        "        x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask)\n"
        "        tl.store(out_ptr + row * out_row_stride + cols, x * s, mask=mask)\n",
        f"{_ONE_ROW[:-2]} stored 4 element(s) more than once: a kernel stores each result once",
    ),
)
#: Round 16: a reversed access one element off with no mask (told it passed the mask's test, by its lane's number)
WRONG_ANSWERS[1] += (
    (
        _Q1_HEAD + "    offsets = tl.program_id(0) * BLOCK + BLOCK - tl.arange(0, BLOCK)\n"
        "    x = tl.load(x_ptr + offsets)\n"
        "    tl.store(out_ptr + offsets, tl.maximum(x * scale + shift, 0.0))\n",
        "Lane 0 of program instance 3 is one of them: it is in an access off by +1: its address should be x_ptr + "
        "offsets",
    ),
    (
        _Q1_HEAD + "    for start in range(0, BLOCK, 16):\n"
        "        offsets = tl.program_id(0) * BLOCK + start + tl.arange(0, 16)\n"
        "        mask = offsets < n\n"
        "        x = tl.load(x_ptr + offsets, mask=mask)\n"
        "        tl.store(out_ptr + offsets, tl.maximum(x * scale + shift, 0.0), mask=mask)\n",
        "relu_affine_kernel on n=51 in blocks of 4 (scale=0.5, shift=1.0, float32): one access of a program instance "
        "had 16 lanes, more than BLOCK (4)",
    ),
)
#: Round 17: lanes swapped in pairs with the mask on the unswapped offsets (accepted: every size was even)
WRONG_ANSWERS[1] += (
    (
        _Q1_HEAD + "    lanes = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    offsets = tl.program_id(0) * BLOCK + (tl.arange(0, BLOCK) ^ 1)\n"
        "    x = tl.load(x_ptr + offsets, mask=lanes < n)\n"
        "    tl.store(out_ptr + offsets, tl.maximum(x * scale + shift, 0.0), mask=lanes < n)\n",
        "relu_affine_kernel on n=51 in blocks of 4 (scale=0.5, shift=1.0, float32): a load of 1 element(s) outside "
        "every tensor given",
    ),
)
WRONG_ANSWERS[2] += (
    (
        SOLUTIONS[2]
        .replace("cols = tl.arange(0, BLOCK)", "lanes = tl.arange(0, BLOCK)\n    cols = lanes ^ 1")
        .replace("mask = cols < n_cols", "mask = lanes < n_cols"),
        "row_scale_kernel on 2 row(s) of 4499 float32s, 8200 apart in x and 8196 in out, BLOCK=8192: a load of 1 "
        "element(s) outside every tensor given",
    ),
)
#: Round 18: the last block's lanes from n % BLOCK (accepted: no n was a multiple of BLOCK)
WRONG_ANSWERS[1] += (
    (
        _Q1_HEAD + "    lanes = tl.arange(0, BLOCK)\n"
        "    offsets = tl.program_id(0) * BLOCK + lanes\n"
        "    mask = (offsets < (n - 1) // BLOCK * BLOCK) | (lanes < n % BLOCK)  # whole blocks, then the rest\n"
        "    x = tl.load(x_ptr + offsets, mask=mask)\n"
        "    tl.store(out_ptr + offsets, tl.maximum(x * scale + shift, 0.0), mask=mask)\n",
        "relu_affine_kernel on n=3072 in blocks of 1024 (scale=0.75, shift=0.1, float16): out[2048] is never written, "
        "nor are 1023 more",
    ),
)
#: Round 19: the scale cast to an integer (accepted: every scale was whole), and the first half of a row left unmasked
#: (accepted: BLOCK was always the next power of two of n_cols)
WRONG_ANSWERS[2] += (
    (
        SOLUTIONS[2].replace("x * tl.load(scale_ptr + row)", "x * tl.load(scale_ptr + row).to(tl.int32)"),
        f"{_ONE_ROW}out[0, 0] is ",
    ),
    (
        _Q2_HEAD + "    HALF: tl.constexpr = BLOCK // 2\n"
        "    first, second = tl.arange(0, HALF), HALF + tl.arange(0, HALF)\n"
        "    s = tl.load(scale_ptr + row)\n"
        "    tl.store(out_ptr + row * out_row_stride + first, tl.load(x_ptr + row * x_row_stride + first) * s)\n"
        "    mask = second < n_cols\n"
        "    x = tl.load(x_ptr + row * x_row_stride + second, mask=mask)\n"
        "    tl.store(out_ptr + row * out_row_stride + second, x * s, mask=mask)\n",
        "row_scale_kernel on 3 row(s) of 100 float16s, 160 apart in x and 136 in out, BLOCK=256: a load of 28 "
        "element(s) outside every tensor given",
    ),
)
#: Round 20: a first chunk of 16 columns left unmasked, and the scale's load masked with row < n_cols (accepted: no row
#: was short, no case had more rows than columns)
WRONG_ANSWERS[2] += (
    (
        _Q2_HEAD.replace("    cols = tl.arange(0, BLOCK)\n", "") + "    s = tl.load(scale_ptr + row)\n"
        "    cols = tl.arange(0, 16)\n"
        "    tl.store(out_ptr + row * out_row_stride + cols, tl.load(x_ptr + row * x_row_stride + cols) * s)\n"
        "    for start in tl.static_range(16, BLOCK, 16):\n"
        "        cols = start + tl.arange(0, 16)\n"
        "        x = tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols)\n"
        "        tl.store(out_ptr + row * out_row_stride + cols, x * s, mask=cols < n_cols)\n",
        "row_scale_kernel on 70 row(s) of 5 float32s, 8 apart in x and 7 in out, BLOCK=64: a load of ",
    ),
    (
        SOLUTIONS[2].replace("x * tl.load(scale_ptr + row)", "x * tl.load(scale_ptr + row, mask=row < n_cols)"),
        "row_scale_kernel on 70 row(s) of 5 float32s, 8 apart in x and 7 in out, BLOCK=64: out[5, 0] is ",
    ),
)
#: Round 21: the scale's load masked with row < BLOCK (accepted: no case had more rows than BLOCK)
WRONG_ANSWERS[2] += (
    (
        SOLUTIONS[2].replace("x * tl.load(scale_ptr + row)", "x * tl.load(scale_ptr + row, mask=row < BLOCK)"),
        "row_scale_kernel on 70 row(s) of 5 float32s, 8 apart in x and 7 in out, BLOCK=64: out[64, 0] is ",
    ),
)
