"""Chapter 13's typical wrong answers, by question number (see the package's docstring)."""

from helpers.exercises.solutions.ch13 import SOLUTIONS

from . import lines_of

_Q1_DEF = lines_of(SOLUTIONS[1], 1, 2)
_Q1_HEAD = lines_of(SOLUTIONS[1], 1, 4)
_Q1_MASK = "    mask = cols < n_cols\n"
_Q1_LOAD = "    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=0.0)\n"
_Q1_STORE = "    tl.store(out_ptr + row * out_row_stride + cols, x - tl.sum(x, axis=0) / n_cols, mask=mask)\n"
_Q2_HEAD = lines_of(SOLUTIONS[2], 1, 4)
_Q3_HEAD = lines_of(SOLUTIONS[3], 1, 1)
#: The first cases' words: each kernel's single ragged row and its rows further apart (question 1's are float32 where
#: question 2's are int32), question 1's float16 rows, its rows longer than 4096 and its 70 short rows.
_CENTRE_ONE_ROW = "row_centre_kernel on 1 row(s) of 100 float32s, 100 apart in x and 100 in out, BLOCK=128: "
_CENTRE_APART = "row_centre_kernel on 3 row(s) of 128 float32s, 160 apart in x and 136 in out, BLOCK=128: "
_CENTRE_LONG = "row_centre_kernel on 2 row(s) of 4499 float32s, 8200 apart in x and 8196 in out, BLOCK=8192: "
_CENTRE_MANY = "row_centre_kernel on 70 row(s) of 5 float32s, 8 apart in x and 7 in out, BLOCK=64: "
_ONE_ROW = "row_scale_kernel on 1 row(s) of 100 float32s, 100 apart in x and 100 in out, BLOCK=128: "
_APART = "row_scale_kernel on 3 row(s) of 128 int32s, 160 apart in x and 136 in out, BLOCK=128: "


#: Typical wrong answers to each question, by number, each with words its verdict must contain (the
#: message a learner who wrote it is told). Question 2's first one is the kernel as the chapter hands it
#: out, with both bugs. Question 1's were question 1's elementwise kernel's until the row-centring kernel
#: took its place: each the same mistake made in a row kernel, where it can be.
WRONG_ANSWERS: dict[int, tuple[tuple[str, str], ...]] = {
    1: (
        (  # no mask at all: the lanes past n_cols load and store
            _Q1_HEAD + "    x = tl.load(x_ptr + row * x_row_stride + cols)\n"
            "    tl.store(out_ptr + row * out_row_stride + cols, x - tl.sum(x, axis=0) / n_cols)\n",
            f"{_CENTRE_ONE_ROW}a load of 28 element(s) outside every tensor given; the lowest lies 1 element(s) past "
            "the end of x. Lane 100 of program instance 0 is one of them: it fails cols < n_cols, yet "
            "the access's mask (if any) let it through: mask every load and store with cols < n_cols",
        ),
        (  # rows from the program id alone, not times the stride: the rows overlap, the mask is right and not named
            _Q1_HEAD + _Q1_MASK + "    x = tl.load(x_ptr + row + cols, mask=mask, other=0.0)\n"
            "    tl.store(out_ptr + row + cols, x - tl.sum(x, axis=0) / n_cols, mask=mask)\n",
            f"{_CENTRE_APART}a load of 1 element(s) outside every tensor given; the lowest lies inside x's memory but "
            "not one of its elements (a gap between rows). Lane 127 of program instance 1 is one of them: it is in an "
            "access off by -159: its address should be x_ptr + tl.program_id(0) * x_row_stride + cols",
        ),
        (  # the mask off by one: lane n_cols gets through
            SOLUTIONS[1].replace("cols < n_cols", "cols <= n_cols"),
            f"{_CENTRE_ONE_ROW}a load of 1 element(s) outside every tensor given; the lowest lies 1 element(s) past "
            "the end of x. Lane 100 of program instance 0 is one of them: it fails cols < n_cols, yet "
            "the access's mask (if any) let it through",
        ),
        (  # the load masked, the store not
            _Q1_HEAD
            + _Q1_MASK
            + _Q1_LOAD
            + "    tl.store(out_ptr + row * out_row_stride + cols, x - tl.sum(x, axis=0) / n_cols)\n",
            f"{_CENTRE_ONE_ROW}a store of 28 element(s) outside every tensor given; the lowest lies 1 element(s) past "
            "the end of out. Lane 100 of program instance 0 is one of them: it fails cols < n_cols, yet "
            "the access's mask (if any) let it through",
        ),
        (  # no row in the addresses: every program instance on row 0
            _Q1_HEAD + _Q1_MASK + "    x = tl.load(x_ptr + cols, mask=mask, other=0.0)\n"
            "    tl.store(out_ptr + cols, x - tl.sum(x, axis=0) / n_cols, mask=mask)\n",
            f"{_CENTRE_APART}out[1, 0] is never written, nor are 255 more; expected -0.3324191 (within 1e-05): no "
            "program instance's offsets reach them: instance r must cover row r",
        ),
        (  # the sum taken for the mean: not divided by n_cols
            SOLUTIONS[1].replace("tl.sum(x, axis=0) / n_cols", "tl.sum(x, axis=0)"),
            f"{_CENTRE_ONE_ROW}out[0, 0] is 64.20823; expected 1.144405 (within 1e-05)",
        ),
        (  # the subtraction the wrong way round: the mean minus x
            SOLUTIONS[1].replace("x - tl.sum(x, axis=0) / n_cols", "tl.sum(x, axis=0) / n_cols - x"),
            f"{_CENTRE_ONE_ROW}out[0, 0] is -1.144405; expected 1.144405 (within 1e-05)",
        ),
        (  # every program instance on row 0: program_id along an axis the grid does not have
            SOLUTIONS[1].replace("tl.program_id(0)", "tl.program_id(1)"),
            f"{_CENTRE_APART}out[1, 0] is never written, nor are 255 more; expected -0.3324191 (within 1e-05): no "
            "program instance's offsets reach them: instance r must cover row r",
        ),
        (  # computed in float16 on float32 x: near, yet off by more than float32 allows; enough digits to see it
            SOLUTIONS[1].replace("other=0.0)", "other=0.0).to(tl.float16)"),
            f"{_CENTRE_ONE_ROW}out[0, 0] is 1.144262; expected 1.144405 (within 1e-05)",
        ),
        (  # a round trip through out: x stored, loaded back, and the centred row stored over it
            _Q1_HEAD + _Q1_MASK + _Q1_LOAD + "    tl.store(out_ptr + row * out_row_stride + cols, x, mask=mask)\n"
            "    y = tl.load(out_ptr + row * out_row_stride + cols, mask=mask, other=0.0)\n"
            "    tl.store(out_ptr + row * out_row_stride + cols, y - tl.sum(y, axis=0) / n_cols, mask=mask)\n",
            f"{_CENTRE_ONE_ROW[:-2]} made 100 repeated store(s) to out's elements: a kernel stores each result once",
        ),
        (  # out cleared first, then written: two passes over out
            _Q1_HEAD
            + _Q1_MASK
            + _Q1_LOAD
            + "    tl.store(out_ptr + row * out_row_stride + cols, x * 0.0, mask=mask)\n"
            + _Q1_STORE,
            f"{_CENTRE_ONE_ROW[:-2]} made 100 repeated store(s) to out's elements",
        ),
        (  # the mask one short: the last element is left out of the mean as well as out, so the first is wrong
            SOLUTIONS[1].replace("cols < n_cols", "cols < n_cols - 1"),
            f"{_CENTRE_ONE_ROW}out[0, 0] is 1.11466; expected 1.144405 (within 1e-05)",
        ),
        (  # the store's mask one short: each row's last element is never written, rows and program ids are right
            _Q1_HEAD
            + _Q1_MASK
            + _Q1_LOAD
            + "    tl.store(out_ptr + row * out_row_stride + cols, x - tl.sum(x, axis=0) / n_cols, "
            "mask=cols < n_cols - 1)\n",
            f"{_CENTRE_ONE_ROW}out[0, 99] is never written; expected -2.337524 (within 1e-05): the mask turned off "
            "every lane that reached them",
        ),
        (  # only the positive results stored: out keeps what it held where the result is not
            _Q1_HEAD + _Q1_MASK + _Q1_LOAD + "    y = x - tl.sum(x, axis=0) / n_cols\n"
            "    tl.store(out_ptr + row * out_row_stride + cols, y, mask=mask & (y > 0))\n",
            f"{_CENTRE_ONE_ROW}out[0, 4] is never written, nor are 50 more; expected -0.7928376 (within 1e-05): the "
            "mask turned off every lane that reached them",
        ),
        (  # every other row: row 2r for instance r, the rows past the end masked off; rows 1, 3, ... never written
            SOLUTIONS[1]
            .replace("row = tl.program_id(0)", "row = 2 * tl.program_id(0)")
            .replace("mask = cols < n_cols", "mask = (cols < n_cols) & (cols * 0 + row < tl.num_programs(0))"),
            f"{_CENTRE_APART}out[1, 0] is never written, nor are 127 more; expected -0.3324191 (within 1e-05): no "
            "program instance's offsets reach them: instance r must cover row r",
        ),
        (  # the same with no mask on the rows: row 4 lies past x's memory (how many of its lanes land in another
            # tensor, which tensor it comes nearest to, and so the shift, depend on where memory was allocated)
            SOLUTIONS[1].replace("row = tl.program_id(0)", "row = 2 * tl.program_id(0)"),
            "is one of them: it is in an access off by ",
        ),
        (  # the block's width written in, not BLOCK: the mask is right, the row's lanes wider than BLOCK
            SOLUTIONS[1].replace("tl.arange(0, BLOCK)", "tl.arange(0, 256)"),
            f"{_CENTRE_ONE_ROW}one access of a program instance had 256 lanes, more than BLOCK (128)",
        ),
        (  # the result computed in place in x, then copied
            _Q1_HEAD
            + _Q1_MASK
            + _Q1_LOAD
            + "    tl.store(x_ptr + row * x_row_stride + cols, x - tl.sum(x, axis=0) / n_cols, mask=mask)\n"
            "    tl.store(out_ptr + row * out_row_stride + cols, tl.load(x_ptr + row * x_row_stride + cols, "
            "mask=mask), mask=mask)\n",
            f"{_CENTRE_ONE_ROW[:-2]} stored 100 element(s) into an input, not out: a kernel should write into out only",
        ),
        (  # the mask right, the load's address one element on (round 5): the lane that strays passes the mask's test
            SOLUTIONS[1].replace("row * x_row_stride + cols", "row * x_row_stride + cols + 1"),
            f"{_CENTRE_ONE_ROW}a load of 1 element(s) outside every tensor given; the lowest lies 1 element(s) past "
            "the end of x. Lane 99 of program instance 0 is one of them: it is in an access off by +1: its address "
            "should be x_ptr + tl.program_id(0) * x_row_stride + cols",
        ),
        (  # @triton.jit left out: run as Python, it fails in Triton's words (they differ by version), seen by type
            SOLUTIONS[1].removeprefix("@triton.jit\n"),
            f"{_CENTRE_ONE_ROW[:-2]} (run as Python: no @triton.jit) raised ",
        ),
        (
            "def row_centre_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride, BLOCK):\n"
            "    out_ptr.copy_(x_ptr - x_ptr.mean(1, keepdim=True))  # torch, not a kernel\n",
            "`row_centre_kernel` is a plain Python function, not a Triton kernel: put @triton.jit above its def",
        ),
        # The mean's own mistakes: what the masked lanes add to the sum, what it is divided by, and which rows
        (  # no other=: the masked lanes are undefined, and the sum takes them in (NaN, ±inf and 9 in the checker)
            SOLUTIONS[1].replace(", other=0.0)", ")"),
            f"{_CENTRE_ONE_ROW}out[0, 0] is nan; expected 1.144405 (within 1e-05); a masked load without other= "
            "(or padding_option=) left lanes undefined: NaN, ±inf, 9 here",
        ),
        (  # no other=, the masked lanes then multiplied by the mask: NaN times 0 is NaN
            _Q1_HEAD + _Q1_MASK + "    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask)\n"
            "    mean = tl.sum(x * mask, axis=0) / n_cols  # the masked lanes times 0\n"
            "    tl.store(out_ptr + row * out_row_stride + cols, x - mean, mask=mask)\n",
            f"{_CENTRE_ONE_ROW}out[0, 0] is nan; expected 1.144405 (within 1e-05); a masked load without other= "
            "(or padding_option=) left lanes undefined: NaN, ±inf, 9 here",
        ),
        (  # the mean over the whole BLOCK: divided by BLOCK, not n_cols
            SOLUTIONS[1].replace("/ n_cols", "/ BLOCK"),
            f"{_CENTRE_ONE_ROW}out[0, 0] is 1.00506; expected 1.144405 (within 1e-05)",
        ),
        (  # the masked lanes loaded as -inf (softmax's other=): the sum is -inf
            SOLUTIONS[1].replace("other=0.0", 'other=-float("inf")'),
            f"{_CENTRE_ONE_ROW}out[0, 0] is inf; expected 1.144405 (within 1e-05)",
        ),
        (  # the mean over the whole BLOCK: the sum from a load with no mask
            _Q1_HEAD + _Q1_MASK + "    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask)\n"
            "    mean = tl.sum(tl.load(x_ptr + row * x_row_stride + cols), axis=0) / n_cols\n"
            "    tl.store(out_ptr + row * out_row_stride + cols, x - mean, mask=mask)\n",
            f"{_CENTRE_ONE_ROW}a load of 28 element(s) outside every tensor given; the lowest lies 1 element(s) past "
            "the end of x. Lane 100 of program instance 0 is one of them: it fails cols < n_cols, yet "
            "the access's mask (if any) let it through",
        ),
        (  # divided by n_cols - 1, as an unbiased variance is
            SOLUTIONS[1].replace("/ n_cols", "/ (n_cols - 1)"),
            f"{_CENTRE_ONE_ROW}out[0, 0] is 1.15084; expected 1.144405 (within 1e-05)",
        ),
        (  # the mean stored in every lane, not x minus it
            SOLUTIONS[1].replace("x - tl.sum(x, axis=0) / n_cols", "tl.sum(x, axis=0) / n_cols + 0 * x"),
            f"{_CENTRE_ONE_ROW}out[0, 0] is -0.6370083; expected 1.144405 (within 1e-05)",
        ),
        (  # rows taken n_cols apart in x, as if packed
            SOLUTIONS[1].replace("row * x_row_stride", "row * n_cols"),
            f"{_CENTRE_APART}a load of 32 element(s) outside every tensor given; the lowest lies inside x's memory but "
            "not one of its elements (a gap between rows). Lane 0 of program instance 1 is one of them: it is in an "
            "access off by -32: its address should be x_ptr + tl.program_id(0) * x_row_stride + cols",
        ),
        (  # rows taken BLOCK apart, as the kernel of question 2 does
            SOLUTIONS[1].replace("row * x_row_stride", "row * BLOCK").replace("row * out_row_stride", "row * BLOCK"),
            f"{_CENTRE_APART}a load of 32 element(s) outside every tensor given; the lowest lies inside x's memory but "
            "not one of its elements (a gap between rows). Lane 0 of program instance 1 is one of them: it is in an "
            "access off by -32: its address should be x_ptr + tl.program_id(0) * x_row_stride + cols",
        ),
        (  # out's row stride used for x
            SOLUTIONS[1].replace("row * x_row_stride", "row * out_row_stride"),
            f"{_CENTRE_APART}a load of 24 element(s) outside every tensor given; the lowest lies inside x's memory but "
            "not one of its elements (a gap between rows). Lane 0 of program instance 1 is one of them: it is in an "
            "access off by -24: its address should be x_ptr + tl.program_id(0) * x_row_stride + cols",
        ),
        (  # x's row stride used for out
            SOLUTIONS[1].replace("row * out_row_stride", "row * x_row_stride"),
            f"{_CENTRE_APART}a store of 8 element(s) outside every tensor given; the lowest lies inside out's memory "
            "but not one of its elements (a gap between rows). Lane 104 of program instance 1 is one of them: it is in "
            "an access off by +24: its address should be out_ptr + tl.program_id(0) * out_row_stride + cols",
        ),
        (  # add_kernel's offsets kept: instance r takes the BLOCK elements from r * BLOCK, which only row 0 passes
            _Q1_DEF + "    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
            "    mask = offsets < n_cols\n"
            "    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)\n"
            "    tl.store(out_ptr + offsets, x - tl.sum(x, axis=0) / n_cols, mask=mask)\n",
            f"{_CENTRE_APART}out[1, 0] is never written, nor are 255 more; expected -0.3324191 (within 1e-05)",
        ),
        (  # the row's lanes as n_cols long: not a constexpr, and no power of two (Triton's words)
            SOLUTIONS[1].replace("tl.arange(0, BLOCK)", "tl.arange(0, n_cols)"),
            f"{_CENTRE_ONE_ROW[:-2]} raised ",
        ),
        (  # BLOCK taken as 128, the width of the chapter's blocks: the mean of the first 128 elements only
            SOLUTIONS[1].replace("tl.arange(0, BLOCK)", "tl.arange(0, 128)"),
            f"{_CENTRE_LONG}out[0, 0] is 6.366443; expected 6.422665 (within 1e-05)",
        ),
    ),
    2: (
        (
            _Q2_HEAD + "    x = tl.load(x_ptr + row * n_cols + cols)\n"
            "    s = tl.load(scale_ptr + row)\n"
            "    tl.store(out_ptr + row * out_row_stride + cols, x * s)\n",
            f"{_ONE_ROW}a load of 28 element(s) outside every tensor given; the lowest lies 1 element(s) past the end "
            "of x.",
        ),
        (
            _Q2_HEAD + "    mask = cols < n_cols\n"
            "    x = tl.load(x_ptr + row * n_cols + cols, mask=mask)\n"
            "    s = tl.load(scale_ptr + row)\n"
            "    tl.store(out_ptr + row * out_row_stride + cols, x * s, mask=mask)\n",
            f"{_APART}a load of 32 element(s) outside every tensor given; the lowest lies inside x's memory but not "
            "one of its elements (a gap between rows).",
        ),
        (
            _Q2_HEAD + "    mask = cols < n_cols\n"
            "    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask)\n"
            "    s = tl.load(scale_ptr + row)\n"
            "    tl.store(out_ptr + row * out_row_stride + cols, x * s)\n",
            f"{_ONE_ROW}a store of 28 element(s) outside every tensor given; the lowest lies 1 element(s) past the "
            "end of out.",
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
            "one of its elements (a gap between rows).",
        ),
        (  # out's rows placed as x's are
            _Q2_HEAD + "    mask = cols < n_cols\n"
            "    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask)\n"
            "    s = tl.load(scale_ptr + row)\n"
            "    tl.store(out_ptr + row * x_row_stride + cols, x * s, mask=mask)\n",
            f"{_APART}a store of 8 element(s) outside every tensor given; the lowest lies inside out's memory",
        ),
        (  # a mask that the rows' length, not the stride, should set
            _Q2_HEAD + "    mask = cols < x_row_stride\n"
            "    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask)\n"
            "    s = tl.load(scale_ptr + row)\n"
            "    tl.store(out_ptr + row * out_row_stride + cols, x * s, mask=mask)\n",
            "row_scale_kernel on 3 row(s) of 100 float16s, 160 apart in x and 136 in out, BLOCK=256: a load of 60 "
            "element(s) outside every tensor given; the lowest lies inside x's memory but not one of its elements (a "
            "gap between rows).",
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
            f"{_ONE_ROW[:-2]} stored 100 element(s) into an input, not out: a kernel should write into out only",
        ),
        (  # the mask one short: each row's last element is never written
            _Q2_HEAD + "    mask = cols < n_cols - 1\n"
            "    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask)\n"
            "    tl.store(out_ptr + row * out_row_stride + cols, x * tl.load(scale_ptr + row), mask=mask)\n",
            f"{_ONE_ROW}out[0, 99] is never written; expected -4.461799 (within 1e-05)",
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
            "one of its elements (a gap between rows).",
        ),
        (  # masked right, the row stride used as the column stride (round 5; how many stray lanes land inside
            # another tensor depends on where memory was allocated)
            _Q2_HEAD + "    mask = cols < n_cols\n"
            "    x = tl.load(x_ptr + row + cols * x_row_stride, mask=mask)\n"
            "    tl.store(out_ptr + row + cols * out_row_stride, x * tl.load(scale_ptr + row), mask=mask)\n",
            "element(s) outside every tensor given; the lowest lies 1 element(s) past the end of x.",
        ),
        (  # the same in the store only
            _Q2_HEAD + "    mask = cols < n_cols\n"
            "    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask)\n"
            "    tl.store(out_ptr + row + cols * out_row_stride, x * tl.load(scale_ptr + row), mask=mask)\n",
            "element(s) outside every tensor given; the lowest lies 1 element(s) past the end of out.",
        ),
        (  # columns two elements apart
            _Q2_HEAD + "    mask = cols < n_cols\n"
            "    x = tl.load(x_ptr + row * x_row_stride + 2 * cols, mask=mask)\n"
            "    tl.store(out_ptr + row * out_row_stride + cols, x * tl.load(scale_ptr + row), mask=mask)\n",
            "element(s) outside every tensor given; the lowest lies 1 element(s) past the end of x.",
        ),
        (  # every program instance on row 0
            "@triton.jit\n" + lines_of(SOLUTIONS[2], 2, 2) + "    row = 0\n" + lines_of(SOLUTIONS[2], 4, 7),
            f"{_APART}out[1, 0] is never written, nor are 255 more; expected 50331651 (exactly)",
        ),
    ),
    3: (
        (  # x read once, as a fused softmax reads it: the online softmax's two walks each read it (the slip named)
            _Q3_HEAD + "    return 2 * rows * cols * element_size / (roof_gb_per_s * 1e9)",
            "predicted_seconds(8192, 1024, 4, 300) returned 0.000223696; expected 0.000335544: two passes counted: the "
            "online softmax reads x twice, then writes",
        ),
        (  # the result's write alone, or x's read alone
            _Q3_HEAD + "    return rows * cols * element_size / (roof_gb_per_s * 1e9)",
            "predicted_seconds(8192, 1024, 4, 300) returned 0.000111848; expected 0.000335544",
        ),
        (  # three reads and a write: a walk each for the max, the sum and the result, as the three-pass softmax
            _Q3_HEAD + "    return 4 * rows * cols * element_size / (roof_gb_per_s * 1e9)",
            "predicted_seconds(8192, 1024, 4, 300) returned 0.000447392; expected 0.000335544",
        ),
        (  # each walk's read and write counted, twice over
            _Q3_HEAD + "    return 6 * rows * cols * element_size / (roof_gb_per_s * 1e9)",
            "predicted_seconds(8192, 1024, 4, 300) returned 0.000671089; expected 0.000335544",
        ),
        (  # bits, not bytes
            _Q3_HEAD + "    return 3 * 8 * rows * cols * element_size / (roof_gb_per_s * 1e9)",
            "predicted_seconds(8192, 1024, 4, 300) returned 0.00268435; expected 0.000335544",
        ),
        (  # GB taken as GiB, 2^30 bytes
            _Q3_HEAD + "    return 3 * rows * cols * element_size / (roof_gb_per_s * 2**30)",
            "predicted_seconds(8192, 1024, 4, 300) returned 0.0003125; expected 0.000335544",
        ),
        (  # x read once and GiB: no slip named (the two mistakes together are neither one)
            _Q3_HEAD + "    return 2 * rows * cols * element_size / (roof_gb_per_s * 2**30)",
            "predicted_seconds(8192, 1024, 4, 300) returned 0.000208333; expected 0.000335544",
        ),
        (  # milliseconds
            _Q3_HEAD + "    return 3 * rows * cols * element_size / (roof_gb_per_s * 1e9) * 1000",
            "predicted_seconds(8192, 1024, 4, 300) returned 0.335544; expected 0.000335544",
        ),
        (  # GB taken as 10^6 bytes: seconds, yet 1000 times too long
            _Q3_HEAD + "    return 3 * rows * cols * element_size / (roof_gb_per_s * 1e6)",
            "predicted_seconds(8192, 1024, 4, 300) returned 0.335544; expected 0.000335544",
        ),
        (  # elements, not bytes: element_size forgotten
            _Q3_HEAD + "    return 3 * rows * cols / (roof_gb_per_s * 1e9)",
            "predicted_seconds(8192, 1024, 4, 300) returned 8.38861e-05; expected 0.000335544",
        ),
        (  # microseconds: no mistake named (the factor could be microseconds or a GB taken as 10^3 bytes)
            _Q3_HEAD + "    return 3e6 * rows * cols * element_size / (roof_gb_per_s * 1e9)",
            "predicted_seconds(8192, 1024, 4, 300) returned 335.544; expected 0.000335544",
        ),
        (  # float32's 4 bytes whatever element_size says: right on the first case only
            _Q3_HEAD + "    return 3 * rows * cols * 4 / (roof_gb_per_s * 1e9)",
            "predicted_seconds(4096, 2048, 2, 1000) returned 0.000100663; expected 5.03316e-05",
        ),
        (  # GB/s taken as bytes per second
            _Q3_HEAD + "    return 3 * rows * cols * element_size / roof_gb_per_s",
            "predicted_seconds(8192, 1024, 4, 300) returned 335544; expected 0.000335544",
        ),
        (
            _Q3_HEAD + "    return 3 * rows * cols * element_size // (roof_gb_per_s * 1e9)",
            "predicted_seconds(8192, 1024, 4, 300) returned 0.0; expected 0.000335544",
        ),
        (  # right where the roof is a whole number, as in the chapter, but it need not be
            _Q3_HEAD + "    return 3 * rows * cols * element_size / (int(roof_gb_per_s) * 1e9)",
            "predicted_seconds(100_000, 300, 8, 250.5) returned 0.00288; expected 0.00287425",
        ),
    ),
}

#: Right answers other than the solutions, written as a learner could: other spellings, types and orders.
RIGHT_ANSWERS: dict[int, tuple[str, ...]] = {
    1: (
        # no other=: the masked lanes made 0 by tl.where before the sum (in float32); axis=0 left out
        _Q1_DEF + "    row = tl.program_id(axis=0)\n"
        "    cols = tl.arange(0, BLOCK)\n"
        "    mask = cols < n_cols\n"
        "    x = tl.where(mask, tl.load(x_ptr + row * x_row_stride + cols, mask=mask).to(tl.float32), 0.0)\n"
        "    tl.store(out_ptr + row * out_row_stride + cols, x - tl.sum(x) / n_cols, mask=mask)\n",
        # the comparison the other way round, and an integer 0 for other=
        _Q1_DEF + "    r = tl.program_id(0)\n"
        "    c = tl.arange(0, BLOCK)\n"
        "    keep = n_cols > c\n"
        "    v = tl.load(x_ptr + r * x_row_stride + c, mask=keep, other=0).to(tl.float32)\n"
        "    mean = tl.sum(v, axis=0) / n_cols\n"
        "    tl.store(out_ptr + r * out_row_stride + c, v - mean, mask=keep)\n",
        # the mean in float32 whatever the rows hold, cast back to out's dtype, or left to the store to cast
        SOLUTIONS[1].replace(
            "x - tl.sum(x, axis=0) / n_cols",
            "(x.to(tl.float32) - tl.sum(x.to(tl.float32), axis=0) / n_cols).to(x.dtype)",
        ),
        SOLUTIONS[1].replace(
            "x - tl.sum(x, axis=0) / n_cols", "x.to(tl.float32) - tl.sum(x.to(tl.float32), axis=0) / n_cols"
        ),
        # the mean divided by the count of the lanes the mask lets through
        SOLUTIONS[1].replace("/ n_cols", "/ tl.sum(mask.to(tl.float32), axis=0)"),
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
        "def predicted_seconds(rows, cols, element_size, roof_gb_per_s):\n"
        "    return (rows * cols * element_size * 3) / roof_gb_per_s / 1e9",
        "def predicted_seconds(rows, cols, element_size, roof_gb_per_s):\n"
        "    return torch.tensor(3.0 * rows * cols * element_size) / (roof_gb_per_s * 10**9)",
        "import numpy as np\n\n"
        "def predicted_seconds(rows, cols, element_size, roof_gb_per_s):\n"
        "    return np.float64(rows) * cols * element_size * 3 / np.float64(roof_gb_per_s * 1e9)",
        "from fractions import Fraction\n\n"
        "def predicted_seconds(rows, cols, element_size, roof_gb_per_s):\n"
        "    return Fraction(3 * rows * cols * element_size) / Fraction(roof_gb_per_s) / 10**9",
        "def predicted_seconds(rows, cols, element_size, roof_gb_per_s):\n"
        "    reads = 2 * rows * cols * element_size  # one walk for the max and the sum, one for the result\n"
        "    writes = rows * cols * element_size\n"
        "    return (reads + writes) / (roof_gb_per_s * 1e9)",
    ),
}

#: Round 11: a program instance that does more than its row (its values right), and wider constants
WRONG_ANSWERS[1] += (
    (
        _Q1_DEF + "    cols = tl.arange(0, BLOCK)\n"
        "    for k in tl.static_range(2):  # instance p does rows 2p and 2p + 1\n"
        "        row = 2 * tl.program_id(0) + k\n"
        "        mask = (cols < n_cols) & (cols * 0 + row < tl.num_programs(0))\n"
        "        x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=0.0)\n"
        "        tl.store(out_ptr + row * out_row_stride + cols, x - tl.sum(x, axis=0) / n_cols, mask=mask)\n",
        f"{_CENTRE_APART}program instance 0 stored into 2 rows: one row each",
    ),
    (
        SOLUTIONS[1].replace("tl.arange(0, BLOCK)", "tl.arange(0, 4096)"),
        f"{_CENTRE_ONE_ROW}one access of a program instance had 4096 lanes, more than BLOCK (128)",
    ),
)
#: Round 11: rows taken in reverse order
RIGHT_ANSWERS[1] += (SOLUTIONS[1].replace("row = tl.program_id(0)", "row = tl.num_programs(0) - 1 - tl.program_id(0)"),)
RIGHT_ANSWERS[2] += (
    _Q2_HEAD.replace("    cols = tl.arange(0, BLOCK)\n", "") + "    s = tl.load(scale_ptr + row)\n"
    "    for start in range(0, BLOCK, 64):\n"
    "        cols = start + tl.arange(0, 64)\n"
    "        mask = cols < n_cols\n"
    "        x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask)\n"
    "        tl.store(out_ptr + row * out_row_stride + cols, x * s, mask=mask)\n",
)
#: Round 12: a tensor descriptor (refused before with the checker's own error; block pointers were too, and Triton 3.9
#: has removed them): x's rows through one, whose lanes past n_cols read as 0; out's stores masked (its rows are not
#: all 16 bytes apart, as a descriptor's strides must be)
RIGHT_ANSWERS[1] += (
    _Q1_DEF + "    row = tl.program_id(0)\n"
    "    xd = tl.make_tensor_descriptor(\n"
    "        x_ptr, shape=[tl.num_programs(0), n_cols], strides=[x_row_stride, 1], block_shape=[1, BLOCK]\n"
    "    )\n"
    "    x = xd.load([row, 0]).to(tl.float32)\n"
    "    cols = tl.arange(0, BLOCK)[None, :]\n"
    "    tl.store(out_ptr + row * out_row_stride + cols, x - tl.sum(x) / n_cols, mask=cols < n_cols)\n",
)
#: Rounds 13-14: a block or row in narrower chunks with no mask, or with a right mask and an address one off (told
#: before that the address, then that the mask, was wrong: lane i of a chunk is not element i of the block, so the
#: lanes alone cannot tell which one)
WRONG_ANSWERS[1] += (
    (
        _Q1_DEF + "    row = tl.program_id(0)\n"
        "    HALF: tl.constexpr = BLOCK // 2\n"
        "    first, second = tl.arange(0, HALF), HALF + tl.arange(0, HALF)\n"
        "    a = tl.load(x_ptr + row * x_row_stride + first)\n"
        "    b = tl.load(x_ptr + row * x_row_stride + second)\n"
        "    mean = (tl.sum(a, axis=0) + tl.sum(b, axis=0)) / n_cols\n"
        "    tl.store(out_ptr + row * out_row_stride + first, a - mean)\n"
        "    tl.store(out_ptr + row * out_row_stride + second, b - mean)\n",
        f"{_CENTRE_ONE_ROW}a load of 28 element(s) outside every tensor given; the lowest lies 1 element(s) past the "
        "end of x. Lane 36 of program instance 0 is one of them: it is in an access of 64 lanes: check its mask and "
        "its address",
    ),
)
WRONG_ANSWERS[2] += (
    (
        _Q2_HEAD.replace("    cols = tl.arange(0, BLOCK)\n", "") + "    s = tl.load(scale_ptr + row)\n"
        "    for start in range(0, BLOCK, 64):\n"
        "        cols = start + tl.arange(0, 64)\n"
        "        x = tl.load(x_ptr + row * x_row_stride + cols)\n"
        "        tl.store(out_ptr + row * out_row_stride + cols, x * s)\n",
        f"{_ONE_ROW}a load of 28 element(s) outside every tensor given; the lowest lies 1 element(s) past the end "
        "of x.",
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
        f"{_ONE_ROW}a load of 1 element(s) outside every tensor given; the lowest lies 1 element(s) past the end of x.",
    ),
)
#: Round 15: lanes in another order (told the address was wrong), instances or chunks storing past their own block or
#: row (told "fused into one pass"), and a chunk width fixed at 64 (passed: every BLOCK was a multiple of 64; of the
#: rows' BLOCKs, 64 is the least, so a fixed chunk wider than it is the mistake here)
WRONG_ANSWERS[1] += (
    (
        _Q1_DEF + "    row = tl.program_id(0)\n"
        "    cols = BLOCK - 1 - tl.arange(0, BLOCK)\n"
        "    x = tl.load(x_ptr + row * x_row_stride + cols)\n"
        "    tl.store(out_ptr + row * out_row_stride + cols, x - tl.sum(x, axis=0) / n_cols)\n",
        f"{_CENTRE_ONE_ROW}a load of 28 element(s) outside every tensor given; the lowest lies 1 element(s) past the "
        "end of x. Lane 0 of program instance 0 is one of them: it fails cols < n_cols, yet the access's mask (if any) "
        "let it through",
    ),
    (
        _Q1_DEF + "    row = tl.program_id(0)\n"
        "    total = 0.0\n"
        "    for start in range(0, BLOCK, 128):\n"
        "        cols = start + tl.arange(0, 128)\n"
        "        total += tl.sum(tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols, other=0.0), axis=0)\n"
        "    for start in range(0, BLOCK, 128):\n"
        "        cols = start + tl.arange(0, 128)\n"
        "        x = tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols)\n"
        "        tl.store(out_ptr + row * out_row_stride + cols, x - total / n_cols, mask=cols < n_cols)\n",
        f"{_CENTRE_ONE_ROW[:-2]} made 100 repeated load(s) of x's elements",  # two walks: x loaded on each
    ),
    (  # the mean from the whole row, then the row stored in chunks that overlap
        _Q1_HEAD + _Q1_MASK + _Q1_LOAD + "    mean = tl.sum(x, axis=0) / n_cols\n"
        "    for start in range(0, BLOCK, 96):\n"
        "        c = start + tl.arange(0, 128)\n"
        "        y = tl.load(x_ptr + row * x_row_stride + c, mask=c < n_cols)\n"
        "        tl.store(out_ptr + row * out_row_stride + c, y - mean, mask=c < n_cols)\n",
        f"{_CENTRE_ONE_ROW[:-2]} made 4 repeated store(s) to out's elements: a kernel stores each result once",
    ),
)
WRONG_ANSWERS[1] += (
    (  # every instance does every row
        _Q1_DEF + "    cols, r = tl.arange(0, BLOCK), 0\n"
        "    while r < tl.num_programs(0):  # every instance, every row (Triton 3.6 runs no range() of it)\n"
        "        x = tl.load(x_ptr + r * x_row_stride + cols, mask=cols < n_cols, other=0.0)\n"
        "        tl.store(out_ptr + r * out_row_stride + cols, x - tl.sum(x, axis=0) / n_cols, mask=cols < n_cols)\n"
        "        r += 1\n",
        f"{_CENTRE_APART}program instance 0 stored into 3 rows: one row each",
    ),
)
WRONG_ANSWERS[2] += (
    (
        SOLUTIONS[2].replace("tl.arange(0, BLOCK)", "BLOCK - 1 - tl.arange(0, BLOCK)").replace("< n_cols", "<= n_cols"),
        f"{_ONE_ROW}a load of 1 element(s) outside every tensor given; the lowest lies 1 element(s) past the end of x.",
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
        f"{_ONE_ROW[:-2]} made 4 repeated store(s) to out's elements: a kernel stores each result once",
    ),
)
#: Round 16: a reversed access one element off with no mask (told it passed the mask's test, by its lane's number); the
#: round's chunks of 16 lanes, too wide for a BLOCK of 4, have no row kernel's equivalent (no row BLOCK is under 64)
WRONG_ANSWERS[1] += (
    (
        _Q1_DEF + "    row = tl.program_id(0)\n"
        "    cols = BLOCK - tl.arange(0, BLOCK)\n"
        "    x = tl.load(x_ptr + row * x_row_stride + cols)\n"
        "    tl.store(out_ptr + row * out_row_stride + cols, x - tl.sum(x, axis=0) / n_cols)\n",
        "Lane 0 of program instance 0 is one of them: it is in an access off by +1: its address should be x_ptr + "
        "tl.program_id(0) * x_row_stride + cols",
    ),
)
#: Round 17: lanes swapped in pairs with the mask on the unswapped columns (accepted: every size was even)
WRONG_ANSWERS[1] += (
    (
        SOLUTIONS[1]
        .replace("cols = tl.arange(0, BLOCK)", "lanes = tl.arange(0, BLOCK)\n    cols = lanes ^ 1")
        .replace("mask = cols < n_cols", "mask = lanes < n_cols"),
        f"{_CENTRE_LONG}a load of 1 element(s) outside every tensor given; the lowest lies inside x's memory but not "
        "one of its elements (a gap between rows). Lane 4498 of program instance 0 is one of them: it fails cols < "
        "n_cols, yet the access's mask (if any) let it through",
    ),
)
WRONG_ANSWERS[2] += (
    (
        SOLUTIONS[2]
        .replace("cols = tl.arange(0, BLOCK)", "lanes = tl.arange(0, BLOCK)\n    cols = lanes ^ 1")
        .replace("mask = cols < n_cols", "mask = lanes < n_cols"),
        "row_scale_kernel on 2 row(s) of 4499 float32s, 8200 apart in x and 8196 in out, BLOCK=8192: a load of 1 "
        "element(s) outside every tensor given; the lowest lies inside x's memory but not one of its elements (a gap "
        "between rows).",
    ),
)
#: Round 18: the last block's lanes from n % BLOCK (accepted: no n was a multiple of BLOCK); a row of n_cols == BLOCK
#: gets no lane
WRONG_ANSWERS[1] += (
    (
        SOLUTIONS[1].replace(
            "mask = cols < n_cols",
            "mask = (cols < (n_cols - 1) // BLOCK * BLOCK) | (cols < n_cols % BLOCK)  # whole blocks, then the rest",
        ),
        f"{_CENTRE_APART}out[0, 0] is never written, nor are 383 more; expected 4.458502 (within 1e-05): the mask "
        "turned off every lane that reached them",
    ),
)
#: Round 19: the scale cast to an integer (accepted: every scale was whole), and the first half of a row left unmasked
#: (accepted: BLOCK was always the next power of two of n_cols)
WRONG_ANSWERS[2] += (
    (
        SOLUTIONS[2].replace("x * tl.load(scale_ptr + row)", "x * tl.load(scale_ptr + row).to(tl.int32)"),
        f"{_ONE_ROW}out[0, 0] is 0.5073971; expected 0.7610956 (within 1e-05)",
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
#: was short, no case had more rows than columns; its masked lanes are NaN in the checker, as a load with no other=)
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
        "row_scale_kernel on 70 row(s) of 5 float32s, 8 apart in x and 7 in out, BLOCK=64: out[5, 0] is nan; expected "
        "-0.8873615 (within 1e-05); a masked load without other= (or padding_option=) left lanes undefined",
    ),
)
#: Round 21: the scale's load masked with row < BLOCK (accepted: no case had more rows than BLOCK)
WRONG_ANSWERS[2] += (
    (
        SOLUTIONS[2].replace("x * tl.load(scale_ptr + row)", "x * tl.load(scale_ptr + row, mask=row < BLOCK)"),
        "row_scale_kernel on 70 row(s) of 5 float32s, 8 apart in x and 7 in out, BLOCK=64: out[64, 0] is nan; "
        "expected 0 (within 1e-05); a masked load without other= (or padding_option=) left lanes undefined",
    ),
)

#: Attack round 1 (row_centre_kernel): x read twice (the mean from one load, the result from another, or two walks
#: over chunks), out read before it is written, and a float16 sum, which overflows past 65,504 on rows of 40 ± 4
WRONG_ANSWERS[1] += (
    (
        _Q1_HEAD
        + _Q1_MASK
        + "    mean = tl.sum(tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=0.0), axis=0) / n_cols\n"
        "    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask)\n"
        "    tl.store(out_ptr + row * out_row_stride + cols, x - mean, mask=mask)\n",
        f"{_CENTRE_ONE_ROW[:-2]} made 100 repeated load(s) of x's elements: load the row once, lanes past it masked",
    ),
    (
        _Q1_DEF + "    row = tl.program_id(0)\n"
        "    total = 0.0\n"
        "    for start in range(0, BLOCK, 64):\n"
        "        cols = start + tl.arange(0, 64)\n"
        "        total += tl.sum(tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols, other=0.0), axis=0)\n"
        "    for start in range(0, BLOCK, 64):\n"
        "        cols = start + tl.arange(0, 64)\n"
        "        x = tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols)\n"
        "        tl.store(out_ptr + row * out_row_stride + cols, x - total / n_cols, mask=cols < n_cols)\n",
        f"{_CENTRE_ONE_ROW[:-2]} made 100 repeated load(s) of x's elements",
    ),
    (
        _Q1_HEAD
        + _Q1_MASK
        + "    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=0.0).to(tl.float32)\n"
        "    o = tl.load(out_ptr + row * out_row_stride + cols, mask=mask, other=0.0)\n"
        "    tl.store(out_ptr + row * out_row_stride + cols, x - tl.sum(x, axis=0) / n_cols + o * 0.0, mask=mask)\n",
        f"{_CENTRE_ONE_ROW[:-2]} loaded 100 element(s) of out: only store into out (print a value before its store)",
    ),
    (
        _Q1_HEAD + _Q1_MASK + "    x = tl.where(mask, tl.load(x_ptr + row * x_row_stride + cols, mask=mask), 0.0)\n"
        "    tl.store(out_ptr + row * out_row_stride + cols, x - tl.sum(x, axis=0) / n_cols, mask=mask)\n",
        "row_centre_kernel on 2 row(s) of 3000 float16s, 3008 apart in x and 3000 in out, BLOCK=4096: out[0, 0] is "
        "-inf",
    ),
)

#: Attack round 2: atomics (the checker follows tl.load and tl.store only: an atomic add of 0 read x unmasked, or
#: stored a second time), an input stored into with its own values (told before it had stored into several rows of
#: out), a debugging print that loads x again (right in question 2, which does not ask for one read), and a kernel
#: under @triton.autotune (told it was not a function)
_ATOMIC_REFUSED = "raised NotImplementedError: the checker follows loads and stores: write it without tl.atomic_*"
_ZEROS = "tl.zeros([BLOCK], dtype=x_ptr.dtype.element_ty)"
WRONG_ANSWERS[1] += (
    (
        _Q1_HEAD
        + _Q1_MASK
        + "    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=0.0).to(tl.float32)\n"
        "    y = (x - tl.sum(x, axis=0) / n_cols).to(out_ptr.dtype.element_ty)\n"
        "    tl.store(out_ptr + row * out_row_stride + cols, tl.zeros([BLOCK], dtype=out_ptr.dtype.element_ty), "
        "mask=mask)\n"
        "    tl.atomic_add(out_ptr + row * out_row_stride + cols, y, mask=mask)\n",
        f"{_CENTRE_ONE_ROW[:-2]} {_ATOMIC_REFUSED}",
    ),
    (
        _Q1_HEAD + _Q1_MASK + f"    x = tl.atomic_add(x_ptr + row * x_row_stride + cols, {_ZEROS}).to(tl.float32)\n"
        "    x = tl.where(mask, x, 0.0)\n"
        "    tl.store(out_ptr + row * out_row_stride + cols, x - tl.sum(x, axis=0) / n_cols, mask=mask)\n",
        _ATOMIC_REFUSED,
    ),
    (
        _Q1_HEAD + _Q1_MASK + "    xr = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=0.0)\n"
        "    tl.store(x_ptr + row * x_row_stride + cols, xr, mask=mask)\n"
        "    x = xr.to(tl.float32)\n"
        "    tl.store(out_ptr + row * out_row_stride + cols, x - tl.sum(x, axis=0) / n_cols, mask=mask)\n",
        f"{_CENTRE_ONE_ROW[:-2]} stored 100 element(s) into an input, not out: a kernel should write into out only",
    ),
)
WRONG_ANSWERS[2] += (
    (
        _Q2_HEAD + "    mask = cols < n_cols\n"
        f"    x = tl.atomic_add(x_ptr + row * x_row_stride + cols, {_ZEROS})\n"
        "    tl.store(out_ptr + row * out_row_stride + cols, x * tl.load(scale_ptr + row), mask=mask)\n",
        f"{_ONE_ROW[:-2]} {_ATOMIC_REFUSED}",
    ),
    (
        SOLUTIONS[2] + "\n    tl.store(scale_ptr + row, tl.load(scale_ptr + row))\n",
        f"{_ONE_ROW[:-2]} stored 1 element(s) into an input, not out",
    ),
)
RIGHT_ANSWERS[1] += (
    "@triton.autotune(configs=[triton.Config({}, num_warps=4), triton.Config({}, num_warps=8)], key=['n_cols'])\n"
    + SOLUTIONS[1],
)
RIGHT_ANSWERS[2] += (
    _Q2_HEAD + "    mask = cols < n_cols\n"
    "    if row == 0:\n"
    "        print('row 0 as loaded:', tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=0))\n"
    "    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask)\n"
    "    tl.store(out_ptr + row * out_row_stride + cols, x * tl.load(scale_ptr + row), mask=mask)\n",
)

#: Review R4: the result stored into x instead of out (told before that no offsets reached out's rows), and a kernel
#: under @triton.autotune over @triton.heuristics (told before it was not a function)
WRONG_ANSWERS[1] += (
    (
        SOLUTIONS[1].replace("tl.store(out_ptr + row * out_row_stride", "tl.store(x_ptr + row * x_row_stride"),
        f"{_CENTRE_ONE_ROW[:-2]} stored 100 element(s) into an input, not out",
    ),
)
RIGHT_ANSWERS[1] += (
    "@triton.autotune(configs=[triton.Config({}, num_warps=4)], key=['n_cols'])\n@triton.heuristics({})\n"
    + SOLUTIONS[1],
)

#: Attack round 3: the product computed in float32, as question 1's hint teaches, on int32 rows (accepted: the int32
#: case held small values; it now holds integers around 2**24, which float32 rounds, compared exactly)
WRONG_ANSWERS[2] += (
    (
        _Q2_HEAD + "    mask = cols < n_cols\n"
        "    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=0.0).to(tl.float32)\n"
        "    s = tl.load(scale_ptr + row).to(tl.float32)\n"
        "    tl.store(out_ptr + row * out_row_stride + cols, x * s, mask=mask)\n",
        f"{_APART}out[0, 0] is 16777220; expected 16777221 (exactly)",
    ),
)

#: Attack round 3: one load whose lanes past the row wrap back into it (told to load the row once: the message now
#: says to mask those lanes), and the two row strides taken in the other order (told the address; the label gives
#: each tensor's row stride, and the offset is their difference)
WRONG_ANSWERS[1] += (
    (
        _Q1_HEAD + "    x = tl.load(x_ptr + row * x_row_stride + cols % n_cols).to(tl.float32)\n"
        "    mean = tl.sum(tl.where(cols < n_cols, x, 0.0), axis=0) / n_cols\n"
        "    tl.store(out_ptr + row * out_row_stride + cols, x - mean, mask=cols < n_cols)\n",
        f"{_CENTRE_ONE_ROW[:-2]} made 28 repeated load(s) of x's elements: load the row once, lanes past it masked",
    ),
    (
        SOLUTIONS[1].replace("x_row_stride, out_row_stride, BLOCK", "out_row_stride, x_row_stride, BLOCK"),
        f"{_CENTRE_APART}a load of 24 element(s) outside every tensor given",
    ),
)

#: Attack round 4: the count of non-zero lanes taken for n_cols (accepted: no row held an exact 0; a case of whole
#: numbers now does), and the masked lanes' junk filtered as NaN (accepted while the checker filled them with NaN
#: alone; it now fills them with NaN, ±inf and 9)
WRONG_ANSWERS[1] += (
    (
        _Q1_HEAD
        + _Q1_MASK
        + "    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=0.0).to(tl.float32)\n"
        "    n = tl.sum(tl.where(x != 0.0, 1.0, 0.0), axis=0)\n"
        "    tl.store(out_ptr + row * out_row_stride + cols, x - tl.sum(x, axis=0) / n, mask=mask)\n",
        "row_centre_kernel on 4 row(s) of 40 float32s, 44 apart in x and 40 in out, BLOCK=64: out[1, 0] is 2.162162",
    ),
    (
        _Q1_HEAD + _Q1_MASK + "    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask).to(tl.float32)\n"
        "    good = x == x\n"
        "    s = tl.sum(tl.where(good, x, 0.0), axis=0)\n"
        "    tl.store(out_ptr + row * out_row_stride + cols, x - s / tl.sum(good.to(tl.float32), axis=0), mask=mask)\n",
        f"{_CENTRE_ONE_ROW}out[0, 0] is ",
    ),
    (
        _Q1_HEAD + _Q1_MASK + "    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask).to(tl.float32)\n"
        "    x = tl.where(x == x, x, 0.0)\n"
        "    tl.store(out_ptr + row * out_row_stride + cols, x - tl.sum(x, axis=0) / n_cols, mask=mask)\n",
        f"{_CENTRE_ONE_ROW}out[0, 0] is nan; expected 1.144405 (within 1e-05); a masked load without other=",
    ),
)

#: Attack round 5: lanes past the row clamped onto its last element instead of masked (told before that 28 elements
#: were loaded more than once, where one element was loaded 29 times)
WRONG_ANSWERS[1] += (
    (
        _Q1_HEAD
        + _Q1_MASK
        + "    x = tl.load(x_ptr + row * x_row_stride + tl.minimum(cols, n_cols - 1)).to(tl.float32)\n"
        "    x = tl.where(mask, x, 0.0)\n"
        "    tl.store(out_ptr + row * out_row_stride + cols, x - tl.sum(x, axis=0) / n_cols, mask=mask)\n",
        f"{_CENTRE_ONE_ROW[:-2]} made 28 repeated load(s) of x's elements: load the row once, lanes past it masked",
    ),
)

#: Attack round 6: rows whose scale is 0 skipped as an optimisation (accepted: no scale was 0; the scales are now
#: 0 to 3 in steps of 0.75), and a debugging print that reads back what the kernel stored (refused, and told before
#: that out held what was in memory: the message now says to print the value before its store)
WRONG_ANSWERS[2] += (
    (
        _Q2_HEAD.replace("    cols = tl.arange(0, BLOCK)\n", "") + "    s = tl.load(scale_ptr + row)\n"
        "    if s != 0:\n"
        "        cols = tl.arange(0, BLOCK)\n"
        "        mask = cols < n_cols\n"
        "        x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask)\n"
        "        tl.store(out_ptr + row * out_row_stride + cols, x * s, mask=mask)\n",
        "is never written",
    ),
    (
        SOLUTIONS[2] + "\n    if row == 0:\n"
        "        print('stored', tl.load(out_ptr + row * out_row_stride + cols, mask=mask & (cols < 3), other=0))\n",
        f"{_ONE_ROW[:-2]} loaded 3 element(s) of out: only store into out (print a value before its store)",
    ),
)

#: Attack round 6: the store skipped where the result is 0 (accepted: no element equalled its row's mean; the case of
#: whole numbers now has a row whose mean, 0, is one of its elements)
WRONG_ANSWERS[1] += (
    (
        _Q1_HEAD
        + _Q1_MASK
        + "    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=0.0).to(tl.float32)\n"
        "    y = x - tl.sum(x, axis=0) / n_cols\n"
        "    tl.store(out_ptr + row * out_row_stride + cols, y, mask=mask & (y != 0))\n",
        "row_centre_kernel on 5 row(s) of 1 float32s, 4 apart in x and 2 in out, BLOCK=64: out[0, 0] is never written",
    ),
)

#: Attack round 7 (contrived shortcuts on values the cases happened to hold): the store only for rows of more than
#: one column, and the scale's absolute value (accepted: no case had one column or a negative scale; both now do)
WRONG_ANSWERS[1] += (
    (
        _Q1_HEAD
        + _Q1_MASK
        + "    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=0.0).to(tl.float32)\n"
        "    if n_cols > 1:\n"
        "        tl.store(out_ptr + row * out_row_stride + cols, x - tl.sum(x, axis=0) / n_cols, mask=mask)\n",
        "row_centre_kernel on 5 row(s) of 1 float32s, 4 apart in x and 2 in out, BLOCK=64: out[0, 0] is never written",
    ),
)
WRONG_ANSWERS[2] += (
    (
        SOLUTIONS[2].replace("x * tl.load(scale_ptr + row)", "x * tl.abs(tl.load(scale_ptr + row))"),
        "row_scale_kernel on 70 row(s) of 5 float32s, 8 apart in x and 7 in out, BLOCK=64: out[3, 0] is ",
    ),
)
