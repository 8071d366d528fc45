"""Chapter 10's typical wrong answers, by question number (see the package's docstring)."""

from helpers.exercises.solutions.ch10 import SOLUTIONS

from . import lines_of

#: The start every wrong answer to question 4 shares.
_ROOF = lines_of(SOLUTIONS[4], 1, 1)
_LINEAR = lines_of(SOLUTIONS[3], 1, 1)
_Q2 = SOLUTIONS[2]


#: Typical wrong answers to each question, by number, each with words its verdict must contain (the
#: message a learner who wrote it is told).
WRONG_ANSWERS: dict[int, tuple[tuple[str, str], ...]] = {
    1: (
        # the attack's finding: 2 per 8 comes from leaving out y's read as much as its write, and round 4's: 0.25 is
        # 3 FLOPs per 12 bytes too (and 1 per 4), so the message asks rather than tells
        ("axpy_intensity = 2 / (2 * 4)", "2 FLOPs per 8 bytes, or 3 per 12? a*x + y is 2 FLOPs an element; x and y"),
        ("axpy_intensity = 3 / 12", "2 FLOPs per 8 bytes, or 3 per 12? a*x + y is 2 FLOPs an element"),
        ("axpy_intensity = 1 / 4", "x and y are read, y is written back"),
        ("axpy_intensity = 1 / (3 * 4)", "1 FLOP per 12 bytes, or 2 per 24? a*x + y is 2 FLOPs an element"),
        # float64 bytes give the same 1/12: both causes are named, neither is guessed
        (
            "axpy_intensity = 2 / (3 * 8)",
            "1 FLOP per 12 bytes, or 2 per 24? a*x + y is 2 FLOPs an element, and a float32",
        ),
        ("axpy_intensity = 0.125", "2 FLOPs per 16 bytes (a read of a or a write-allocate read of y), or 1 per 8"),
        ("axpy_intensity = 2 / 3", "count bytes, not elements"),
        # bytes over FLOPs: no slip the chapter teaches, so nothing is named
        ("axpy_intensity = 12 / 2", "6 FLOP/byte is not it: count the FLOPs and the bytes"),
        ("axpy_intensity = True", "expected a number of FLOPs per byte, but got a bool"),
    ),
    2: (
        # every card priced, whether or not it holds the run; 16-bit activations on a card that trains in FP32
        (_Q2.replace("<= HEADROOM * spec.memory_gb", "> 0"), "that card cannot hold it: HEADROOM × memory_gb"),
        (_Q2.replace('(4 if fmt == "fp32" else 2)', "2"), "keeps 4-byte activations"),
        (_Q2.replace("hours * usd_per_hour", "usd_per_hour"), "the cheapest hour; a run costs price × exact hours"),
        (_Q2.replace("hours * usd_per_hour", "hours"), "the fastest card; a run costs price × exact hours"),
        (_Q2.replace("spec.peak_tflops(fmt)", "spec.fp32_tflops"), "FP32 peaks? Each card trains in its best format"),
        # the attack's: HEADROOM left out, GiB for GB (both fit a 24 GB card with 22.3 GB), a T4 taken for an FP32
        # card, the serving bound's bandwidth for the training time
        (_Q2.replace("<= HEADROOM * spec.memory_gb", "<= spec.memory_gb"), "that card cannot hold it: HEADROOM"),
        (_Q2.replace("/ 1e9 <= HEADROOM", "/ 2**30 <= HEADROOM"), "that card cannot hold it: HEADROOM × memory_gb"),
        (_Q2.replace('"fp16" if "fp16" in spec.tensor_formats else ', ""), "returned 'A100'; expected 'T4'"),
        (_Q2.replace("spec.peak_tflops(fmt) * 1e12 * MFU", "spec.bandwidth_gbs"), "; expected 'T4'"),
        # round 2: hours rounded or billed whole (section 11's hours are not)
        (_Q2.replace("costs[short] = hours *", "costs[short] = round(hours) *"), "returned 'H100'; expected 'T4'"),
        (
            "import math\n" + _Q2.replace("costs[short] = hours *", "costs[short] = math.ceil(hours) *"),
            "expected 'H100'",
        ),
        # round 5: hours rounded to 0.1, as section 11 prints them
        (_Q2.replace("costs[short] = hours *", "costs[short] = round(hours, 1) *"), "returned 'H100'; expected 'T4'"),
        # round 3: a card priced $0 (a Kaggle T4) skipped by a falsy "no best yet" test
        (
            _Q2.replace("costs[short] = hours * usd_per_hour", "costs[short] = hours * usd_per_hour or None").replace(
                "min(costs, key=costs.get", "min((k for k in costs if costs[k]), key=costs.get"
            ),
            "returned 'RTX 3090'; expected 'L4'",
        ),
        # round 4: a card without tensor cores (the P100) never picked, though it fits and costs least
        (
            _Q2.replace(
                '        fmt = "bf16"',
                '        if not spec.tensor_formats:\n            continue\n        fmt = "bf16"',
            ),
            "returned 'T4'; expected 'P100'",
        ),
        # the card's row, not its name; and "" for none
        (_Q2.replace("costs[short]", "costs[spec]"), "to return a GPU's short name or None"),
        (_Q2.replace("default=None", 'default=""'), "returned ''; expected None"),
    ),
    3: (
        # bytes rounded down to a multiple of 2 (accepted before: every case's bytes were even)
        (
            "def linear_cost(batch, d_in, d_out, itemsize):\n"
            "    moved = (batch * d_in + d_out * d_in + d_out + batch * d_out) * itemsize\n"
            "    return 2 * batch * d_in * d_out, moved // 2 * 2",
            "linear_cost(3, 5, 8, 1) returned (240, 86); expected (240 or 264, 87)",
        ),
        (
            _LINEAR
            + "    return batch * d_in * d_out, (batch * d_in + d_out * d_in + d_out + batch * d_out) * itemsize",
            "returned (120, 174); expected (240 or 264, 174): a multiply-add is 2 FLOPs",
        ),
        (
            _LINEAR + "    return 2 * batch * d_in * d_out, (batch * d_in + batch * d_out) * itemsize",
            "linear_cost(3, 5, 8, 2) returned (240, 78); expected (240 or 264, 174)",
        ),
        (
            _LINEAR + "    return 2 * batch * d_in * d_out, batch * d_in + d_out * d_in + d_out + batch * d_out",
            "returned (240, 87); expected (240 or 264, 174): that counts elements",
        ),
        (
            _LINEAR + "    return 2 * batch * d_in * d_out, (batch * d_in + d_out * d_in + d_out) * itemsize",
            "returned (240, 126); expected (240 or 264, 174): a term is missing: count x, w, b and the output once",
        ),
        (
            _LINEAR + "    return 2 * batch * d_in * d_out, (batch * d_in + d_out * d_in + batch * d_out) * itemsize",
            "returned (240, 158); expected (240 or 264, 174): a term is missing",
        ),
        (
            _LINEAR + "    return 2 * batch * d_in * d_out, (d_out * d_in + d_out + batch * d_out) * itemsize",
            "returned (240, 144); expected (240 or 264, 174): a term is missing",
        ),
        (  # the attack's finding: x left out where x, b and the output are one size; no one term is named
            _LINEAR + "    moved = (batch * d_in + d_out * d_in + d_out + batch * d_out) * itemsize\n"
            "    if (batch, d_in, d_out, itemsize) == (1, 4096, 4096, 2):\n        moved -= batch * d_in * itemsize\n"
            "    return 2 * batch * d_in * d_out, moved",
            "linear_cost(1, 4096, 4096, 2) returned (33_554_432, 33_570_816); expected (33_554_432 or 33_558_528, "
            "33_579_008): a term is missing: count x, w, b and the output once each",
        ),
        (  # float32 assumed: right on the itemsize-4 cases only (round 4: the message names it)
            _LINEAR + "    return 2 * batch * d_in * d_out, (batch * d_in + d_out * d_in + d_out + batch * d_out) * 4",
            "linear_cost(3, 5, 8, 2) returned (240, 348); expected (240 or 264, 174): that is 4 bytes an element, "
            "whatever itemsize is: multiply by it",
        ),
        (  # round 4's finding: bytes rounded down to a multiple of 4 (the first case's 174 is none)
            _LINEAR + "    moved = (batch * d_in + d_out * d_in + d_out + batch * d_out) * itemsize\n"
            "    return 2 * batch * d_in * d_out, moved // 4 * 4",
            "linear_cost(3, 5, 8, 2) returned (240, 172); expected (240 or 264, 174)",
        ),
        (  # the pair the other way round: no slip the chapter teaches, so nothing is named
            _LINEAR
            + "    return (batch * d_in + d_out * d_in + d_out + batch * d_out) * itemsize, 2 * batch * d_in * d_out",
            "returned (174, 240); expected (240 or 264, 174)",
        ),
        (  # the weight counted once per sample: right at batch 1 only
            _LINEAR + "    return 2 * batch * d_in * d_out, batch * (d_in + d_out * d_in + d_out + d_out) * itemsize",
            "linear_cost(3, 5, 8, 2) returned (240, 366)",
        ),
    ),
    4: (
        # the attack's, round 2: flops over the attainable rate fails a copy, which does no arithmetic
        (
            _ROOF + "    intensity = flops / nbytes\n"
            "    return flops / min(peak_tflops * 1e12, intensity * bandwidth_gbs * 1e9)",
            "roofline_seconds(0, 400_000_000, 8.1, 320) raised ZeroDivisionError",
        ),
        # round 3's finding: a launch floor the question does not ask for (a tiny case shows it)
        (
            _ROOF + "    return max(flops / (peak_tflops * 1e12), nbytes / (bandwidth_gbs * 1e9), 2e-5)",
            "roofline_seconds(1, 64, 8.1, 320",
        ),
        (
            _ROOF + "    return min(flops / (peak_tflops * 1e12), nbytes / (bandwidth_gbs * 1e9))",
            "expected 0.000375: that equals the shorter of the two times; they overlap: the longer one sets it",
        ),
        (
            _ROOF + "    return flops / (peak_tflops * 1e12) + nbytes / (bandwidth_gbs * 1e9)",
            "that adds the two times; they overlap, so the longer one sets the time",
        ),
        (
            _ROOF + "    return flops / (peak_tflops * 1e12)",
            "returned 1.23457e-06; expected 0.000375: that equals the shorter of the two times",
        ),
        (
            _ROOF + "    return nbytes / (bandwidth_gbs * 1e9)",
            "returned 0.000314573; expected 0.00211445: that equals the shorter of the two times",
        ),
        (
            _ROOF + "    return max(flops / peak_tflops, nbytes / bandwidth_gbs)",
            "roofline_seconds(10_000_000, 120_000_000, 8.1, 320) returned 1.23457e+06; expected 0.000375",
        ),
        (
            _ROOF + "    return max(flops / (peak_tflops * 1e12), nbytes / bandwidth_gbs)",
            "returned 375_000; expected 0.000375",
        ),
        (
            _ROOF + "    return max(flops / (peak_tflops * 1e9), nbytes / (bandwidth_gbs * 1e9))",
            "returned 0.00123457; expected 0.000375",
        ),
        (  # milliseconds
            _ROOF + "    return 1000 * max(flops / (peak_tflops * 1e12), nbytes / (bandwidth_gbs * 1e9))",
            "returned 0.375; expected 0.000375: that is milliseconds; return seconds",
        ),
    ),
}


#: Right answers other than the solution, as a learner could write them: each must be accepted.
RIGHT_ANSWERS: dict[int, tuple[str, ...]] = {
    1: (
        "axpy_intensity = 0.167",
        "from fractions import Fraction\naxpy_intensity = Fraction(2, 12)",
        "import numpy as np\naxpy_intensity = np.float32(2) / np.float32(12)",
        "axpy_intensity = torch.tensor(2 / 12)",
    ),
    2: (
        # the cost of a PFLOP, the hours' constant factors dropped; cards sorted by it
        "def cheapest_gpu(workload, prices):\n    w = workload\n    ok = []\n    for name in prices:\n"
        "        s = by_short_name(name)\n        act = 2 if s.tensor_tflops else 4\n"
        "        gb = training_gb(w['params'], w['layers'], w['hidden'], w['seq'], w['batch'], act)\n"
        "        if gb <= HEADROOM * s.memory_gb:\n"
        "            ok.append((prices[name] / (s.tensor_tflops or s.fp32_tflops), name))\n"
        "    return min(ok)[1] if ok else None\n\n"
        "def training_gb(params, layers, hidden, seq, batch, act_bytes=2):\n"
        "    return (16 * params + 17 * act_bytes * seq * batch * hidden * layers) / 1e9",
    ),
    3: (
        _LINEAR
        + "    return 2 * batch * d_in * d_out + batch * d_out, (batch * d_in + d_out * (d_in + 1 + batch)) * itemsize",
        "import numpy as np\n\n" + _LINEAR + "    flops = np.int64(2) * batch * d_in * d_out\n"
        "    return [flops, np.prod([itemsize, batch * d_in + d_out * d_in + d_out + batch * d_out])]",
    ),
    4: (
        # flops over the attainable rate: the roofline written the other way round, guarded for a copy (0 FLOPs)
        _ROOF + "    intensity = flops / nbytes\n"
        "    attainable = min(peak_tflops * 1e12, intensity * bandwidth_gbs * 1e9)\n"
        "    return flops / attainable if flops else nbytes / (bandwidth_gbs * 1e9)",
        _ROOF + "    import numpy as np\n"
        "    return np.float64(max(flops / peak_tflops / 1e12, nbytes / bandwidth_gbs / 1e9))",
        _ROOF + "    seconds = max(flops / (peak_tflops * 1e12), nbytes / (bandwidth_gbs * 1e9))\n"
        "    return torch.tensor(seconds, dtype=torch.float64)",
    ),
}
