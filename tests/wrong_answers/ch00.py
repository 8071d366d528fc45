"""Chapter 00's typical wrong answers, by question number (see the package's docstring)."""

import re

from helpers.exercises.solutions.ch00 import SOLUTIONS

_Q1, _Q2 = SOLUTIONS[1], SOLUTIONS[2]


def _one(solution: str, machine: str, prediction: str) -> str:
    """The solution with one machine's prediction changed (the text after its letter, up to the next one or the end)."""
    pattern = rf'"{machine}": (\(.*?\)|\[.*?\])(?=, "[A-D]"|}})'
    changed = re.sub(pattern, lambda _: f'"{machine}": {prediction}', solution, count=1)
    assert changed != solution, (machine, prediction)
    return changed


#: A q3 answer up to its rule for PTX (compute_NN) entries: `a` targets and SASS (sm_NN) as the chapter states them.
_PTX_HEAD = (
    "def has_kernels_for(capability, arch_list):\n"
    "    major, minor = capability\n"
    "    for arch in arch_list:\n"
    '        kind, _, digits = arch.partition("_")\n'
    '        number = int(digits.rstrip("af"))\n'
    '        if digits.endswith("a"):\n'
    "            if number == major * 10 + minor:\n"
    "                return True\n"
    '        elif kind == "sm" and number // 10 == major and number % 10 <= minor:\n'
    "            return True\n"
)

#: Typical wrong answers to each question, by number, each with words its verdict must contain (the
#: message a learner who wrote it is told).
WRONG_ANSWERS: dict[int, tuple[tuple[str, str], ...]] = {
    1: (
        # hiding every GPU taken to change what torch was built for
        (_one(_Q1, "A", "(None, None)"), "on machine A, current_accelerator() gives 'cuda', not None (section 2)"),
        # ... or taken to leave the GPUs usable
        (_one(_Q1, "A", '("cuda", "cuda")'), "current_accelerator(check_available=True) gives None, not 'cuda'"),
        # torch.accelerator taken to know CUDA only
        (_one(_Q1, "B", "(None, None)"), "on machine B, current_accelerator() gives 'mps', not None"),
        # a Mac's GPU taken for unusable
        (_one(_Q1, "B", '("mps", None)'), "on machine B, current_accelerator(check_available=True) gives 'mps', not"),
        # the machine's GPU taken for what the build is for
        (_one(_Q1, "C", '("cuda", None)'), "on machine C, current_accelerator() gives None, not 'cuda'"),
        # the CPU taken for an accelerator
        (_one(_Q1, "C", '("cpu", "cpu")'), "on machine C, current_accelerator() gives None, not 'cpu'"),
        # a variable that names one GPU taken to hide them all
        (_one(_Q1, "D", '("cuda", None)'), "on machine D, current_accelerator(check_available=True) gives 'cuda', not"),
        # False for "none" (True is no 1, and False no None)
        (_one(_Q1, "A", '("cuda", False)'), "current_accelerator(check_available=True) gives None, not False"),
        # the starter cell's dots left in
        (_one(_Q1, "C", "(..., ...)"), "accelerators['C'] should hold 2 predictions"),
        # keys that are not the machines' letters
        (_Q1.replace('"A"', '"a"'), "accelerators should map 'A', 'B', 'C', 'D' to (current_accelerator(), "),
        # ... or a machine the question does not have
        (_Q1.replace('"D"', '"E": ("cuda", "cuda"), "D"'), "not ['A', 'B', 'C', 'D', 'E']"),
        # the GPU left by CUDA_VISIBLE_DEVICES="1" taken to keep its number, written as a torch.device
        (
            _one(_Q1, "D", '(torch.device("cuda", 1), torch.device("cuda", 1))'),
            "on machine D, current_accelerator() gives 'cuda', not 'cuda:1'",
        ),
        (_one(_Q1, "B", '(torch.device("mps:0"), "mps")'), "current_accelerator() gives 'mps', not 'mps:0'"),
        # one prediction too many
        (
            _one(_Q1, "A", '("cuda", None, None)'),
            "accelerators['A'] should hold 2 predictions, (current_accelerator(), ",
        ),
        # one value for a machine, not the pair
        (_one(_Q1, "B", '"mps"'), "expected accelerators['B'] to be a tuple (current_accelerator(), "),
        # a list of pairs, not a dict
        (
            'accelerators = [("cuda", None), ("mps", "mps"), (None, None), ("cuda", "cuda")]',
            "expected accelerators to be a dict, but got a list",
        ),
    ),
    2: (
        # a driver too old taken to hide the GPUs from device_count() (its count goes through NVML)
        (_one(_Q2, "A", "(False, 0, 4)"), "on machine A, torch.cuda.device_count() gives 4, not 0 (section 3)"),
        # ... or from nvidia-smi
        (_one(_Q2, "A", "(False, 0, 0)"), "on machine A, torch.cuda.device_count() gives 4, not 0"),
        (_one(_Q2, "A", "(False, 4, 0)"), "on machine A, nvidia-smi -L gives 4, not 0"),
        # ... or taken for usable, since the GPUs are counted
        (_one(_Q2, "A", "(True, 4, 4)"), "on machine A, torch.cuda.is_available() gives False, not True"),
        # CUDA_VISIBLE_DEVICES taken to hide GPUs from nvidia-smi too
        (_one(_Q2, "B", "(True, 1, 1)"), "on machine B, nvidia-smi -L gives 2, not 1"),
        # ... or ignored by torch's count
        (_one(_Q2, "B", "(True, 2, 2)"), "on machine B, torch.cuda.device_count() gives 1, not 2"),
        # a variable naming a GPU that is not there taken to be ignored
        (_one(_Q2, "C", "(False, 2, 2)"), "on machine C, torch.cuda.device_count() gives 0, not 2"),
        # ... or taken to hide the GPUs from nvidia-smi too
        (_one(_Q2, "C", "(False, 0, 0)"), "on machine C, nvidia-smi -L gives 2, not 0"),
        # ... or taken to fall back to the GPUs there are
        (_one(_Q2, "C", "(True, 2, 2)"), "on machine C, torch.cuda.is_available() gives False, not True"),
        # a GPU without kernels taken for unavailable
        (_one(_Q2, "D", "(False, 1, 1)"), "on machine D, torch.cuda.is_available() gives True, not False"),
        (_one(_Q2, "D", "(False, 0, 1)"), "on machine D, torch.cuda.is_available() gives True, not False"),
        # 1 and 0 for True and False
        (_one(_Q2, "B", "(1, 1, 2)"), "on machine B, torch.cuda.is_available() gives True, not 1"),
        # numbers as text
        (_one(_Q2, "A", '(False, "4", 4)'), "on machine A, torch.cuda.device_count() gives 4, not '4'"),
        # a pair where three predictions are asked
        (_one(_Q2, "D", "(True, 1)"), "counts['D'] should hold 3 predictions"),
        # the answer to question 1's form
        (_Q1.replace("accelerators", "counts"), "counts['A'] should hold 3 predictions"),
    ),
    3: (
        # empties the list it was asked about
        (
            "def has_kernels_for(capability, arch_list):\n    arch_list.clear()\n    return False",
            "has_kernels_for((7, 5), ['sm_75', 'sm_80', 'sm_86', 'sm_90', 'compute_90']) changed its arguments",
        ),
        # only an exact sm_XY match counts: misses sm_80 on an 8.9 GPU
        (
            'def has_kernels_for(capability, arch_list):\n    return f"sm_{capability[0]}{capability[1]}" in arch_list',
            "has_kernels_for((8, 9), ['sm_75', 'sm_80', 'sm_86', 'sm_90', 'compute_90']) returned False; expected True",
        ),
        # compares the numbers only: lets machine code cross a major version
        (
            "def has_kernels_for(capability, arch_list):\n"
            "    target = capability[0] * 10 + capability[1]\n"
            '    return any(int(a.split("_")[1]) <= target for a in arch_list)',
            "has_kernels_for((10, 0), ['sm_90', 'sm_80']) returned True; expected False",
        ),
        # the comparison the wrong way round: newer code on an older GPU
        (
            "def has_kernels_for(capability, arch_list):\n"
            "    target = capability[0] * 10 + capability[1]\n"
            '    return any(int(a.split("_")[1]) >= target for a in arch_list)',
            "has_kernels_for((6, 0), ['sm_75', 'sm_80', 'sm_86', 'sm_90', 'compute_90']) returned True; expected False",
        ),
        # answers from the first entry alone (a return in every branch of the loop)
        (
            "def has_kernels_for(capability, arch_list):\n"
            "    major, minor = capability\n"
            "    for arch in arch_list:\n"
            '        kind, _, digits = arch.partition("_")\n'
            '        number = int(digits.rstrip("a"))\n'
            '        if digits.endswith("a"):\n'
            "            return number == major * 10 + minor\n"
            '        if kind == "sm":\n'
            "            return number // 10 == major and number % 10 <= minor\n"
            "        return number <= major * 10 + minor\n"
            "    return False",
            "has_kernels_for((8, 0), ['sm_75', 'sm_80', 'sm_86', 'sm_90', 'compute_90']) returned False; expected True",
        ),
        # treats PTX (compute_XY) like machine code, same major version only (as torch's own _check_capability
        # warning does); NVIDIA's compatibility guides: PTX runs on any later GPU, 10.0 included
        (
            "def has_kernels_for(capability, arch_list):\n"
            "    major, minor = capability\n"
            "    for arch in arch_list:\n"
            '        digits = arch.split("_")[1]\n'
            '        number = int(digits.rstrip("a"))\n'
            '        if digits.endswith("a"):\n'
            "            if number == major * 10 + minor:\n"
            "                return True\n"
            "        elif number // 10 == major and number % 10 <= minor:\n"
            "            return True\n"
            "    return False",
            "has_kernels_for((10, 0), ['sm_75', 'sm_80', 'sm_86', 'sm_90', 'compute_90']) returned False; "
            "expected True",
        ),
        # reads the first digit as the major version: sm_120 becomes 1.2
        (
            "def has_kernels_for(capability, arch_list):\n"
            "    for arch in arch_list:\n"
            '        kind, digits = arch.split("_")\n'
            "        built = (int(digits[0]), int(digits[1]))\n"
            '        if digits.endswith("a"):\n'
            "            if built == tuple(capability):\n"
            "                return True\n"
            '        elif kind == "sm" and built[0] == capability[0] and built[1] <= capability[1]:\n'
            "            return True\n"
            '        elif kind == "compute" and built <= tuple(capability):\n'
            "            return True\n"
            "    return False",
            "has_kernels_for((10, 0), ['sm_100']) returned False; expected True",
        ),
        # reads sm_90a as sm_90, which runs on any 9.x and, as PTX, on newer GPUs
        (
            "def has_kernels_for(capability, arch_list):\n"
            "    major, minor = capability\n"
            "    for arch in arch_list:\n"
            '        kind, _, digits = arch.partition("_")\n'
            '        number = int(digits.rstrip("af"))\n'
            '        if kind == "sm" and number // 10 == major and number % 10 <= minor:\n'
            "            return True\n"
            '        if kind == "compute" and number <= major * 10 + minor:\n'
            "            return True\n"
            "    return False",
            "has_kernels_for((12, 1), ['sm_90', 'sm_120a']) returned True; expected False",
        ),
        # takes the list to be sorted and stops at the first entry newer than the GPU (accepted before)
        (
            "def has_kernels_for(capability, arch_list):\n"
            "    major, minor = capability\n"
            "    for arch in arch_list:\n"
            '        kind, _, digits = arch.partition("_")\n'
            '        number = int(digits.rstrip("af"))\n'
            "        if number > major * 10 + minor:\n"
            "            return False  # the rest are newer still\n"
            '        if digits.endswith("a"):\n'
            "            if number == major * 10 + minor:\n"
            "                return True\n"
            '        elif kind == "sm" and number // 10 == major and number % 10 <= minor:\n'
            "            return True\n"
            '        elif kind == "compute":\n'
            "            return True\n"
            "    return False",
            "has_kernels_for((8, 0), ['sm_90', 'sm_80']) returned False; expected True",
        ),
        # PTX only on a strictly later capability (accepted before): it runs on its own capability too
        (
            _PTX_HEAD + '        elif kind == "compute" and (number // 10, number % 10) < (major, minor):\n'
            "            return True\n"
            "    return False",
            "has_kernels_for((8, 0), ['compute_80']) returned False; expected True",
        ),
        # PTX only on a later major version (accepted before): it runs on a later minor version too
        (
            _PTX_HEAD + '        elif kind == "compute" and (number == major * 10 + minor or number // 10 < major):\n'
            "            return True\n"
            "    return False",
            "has_kernels_for((8, 6), ['compute_80']) returned False; expected True",
        ),
        # PTX compared by major version only (accepted before): compute_86 is not for an 8.0 GPU
        (
            _PTX_HEAD + '        elif kind == "compute" and number // 10 <= major:\n'
            "            return True\n"
            "    return False",
            "has_kernels_for((8, 0), ['compute_86']) returned True; expected False",
        ),
        # PTX's major and minor compared separately (accepted before): compute_86 runs on a 9.0 GPU
        (
            _PTX_HEAD + '        elif kind == "compute" and number // 10 <= major and number % 10 <= minor:\n'
            "            return True\n"
            "    return False",
            "has_kernels_for((9, 0), ['compute_86']) returned False; expected True",
        ),
        # a compute_XYa target never counts (accepted before: tried only on 10.0, where it does not run)
        (
            "def has_kernels_for(capability, arch_list):\n"
            "    major, minor = capability\n"
            "    for arch in arch_list:\n"
            '        kind, _, digits = arch.partition("_")\n'
            '        number = int(digits.rstrip("af"))\n'
            '        if digits.endswith("a"):\n'
            '            if kind == "sm" and number == major * 10 + minor:\n'
            "                return True\n"
            '        elif kind == "sm" and number // 10 == major and number % 10 <= minor:\n'
            "            return True\n"
            '        elif kind == "compute" and number <= major * 10 + minor:\n'
            "            return True\n"
            "    return False",
            "has_kernels_for((9, 0), ['compute_90a']) returned False; expected True",
        ),
        # the newest sm_ of the GPU's major version decides (accepted before): sm_86 hides sm_80 from an 8.0 GPU
        (
            "def has_kernels_for(capability, arch_list):\n"
            "    major, minor = capability\n"
            "    target = major * 10 + minor\n"
            "    mine = [int(a[3:]) for a in arch_list if a.startswith('sm_') and a[3:].isdigit()]\n"
            "    mine = [n for n in mine if n // 10 == major]\n"
            "    if mine:\n"
            "        return max(mine) % 10 <= minor  # the newest machine code of this major version decides\n"
            "    for arch in arch_list:\n"
            '        kind, _, digits = arch.partition("_")\n'
            '        number = int(digits.rstrip("af"))\n'
            '        if digits.endswith("a") and number == target:\n'
            "            return True\n"
            '        if kind == "compute" and not digits.endswith("a") and number <= target:\n'
            "            return True\n"
            "    return False",
            "has_kernels_for((8, 0), ['sm_75', 'sm_80', 'sm_86', 'sm_90', 'compute_90']) returned False; expected True",
        ),
    ),
}


#: Right answers other than the solution, as a learner could write them: each must be accepted.
RIGHT_ANSWERS: dict[int, tuple[str, ...]] = {
    1: (
        # devices as torch gives them, and lists for tuples
        _one(_one(_Q1, "A", '(torch.device("cuda"), None)'), "D", '[torch.device("cuda"), torch.device("cuda")]'),
        # the machines in another order, one per line
        "accelerators = {\n"
        '    "D": ("cuda", "cuda"),\n'
        '    "C": (None, None),\n'
        '    "B": ("mps", "mps"),\n'
        '    "A": ("cuda", None),\n'
        "}",
    ),
    2: (
        # numpy's numbers, as a learner who counted with numpy has them
        "import numpy as np\n\n" + _one(_Q2, "A", "(np.bool_(False), np.int64(4), np.int64(4))"),
        _one(_Q2, "B", "[True, 1, 2]"),
    ),
    3: (
        "import re\n"
        "\n"
        "\n"
        "def has_kernels_for(capability, arch_list):\n"
        "    target = capability[0] * 10 + capability[1]\n"
        "    found = []\n"
        "    for kind, number, letter in (re.fullmatch(r'(sm|compute)_(\\d+)(a?)', a).groups() for a in arch_list):\n"
        "        number = int(number)\n"
        "        if letter:\n"
        "            found.append(number == target)\n"
        "        elif kind == 'compute':\n"
        "            found.append(number <= target)\n"
        "        else:\n"
        "            found.append(number // 10 == capability[0] and number <= target)\n"
        "    return any(found)",
    ),
}
