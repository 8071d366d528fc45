"""Chapter 00's typical wrong answers, by question number (see the package's docstring)."""

#: Typical wrong answers to each question, by number, each with words its verdict must contain (the
#: message a learner who wrote it is told).
WRONG_ANSWERS: dict[int, tuple[tuple[str, str], ...]] = {
    1: (
        (
            'def pick_device():\n    return torch.accelerator.current_accelerator() or torch.device("cpu")',
            "pick_device() returned cuda",
        ),
        (
            'def pick_device():\n    return torch.device("cuda" if torch.cuda.is_available() else "cpu")',
            "on a Mac with Apple's mps, pick_device() returned cpu; the usable device there is mps",
        ),
        (
            'def pick_device():\n    return torch.device("cuda")',
            "pick_device() returned cuda, but the device torch can use here is cpu",
        ),
        ('pick_device = torch.device("cpu")', "should be a function taking no arguments, but it is a device"),
    ),
    2: (
        (
            'def cuda_diagnosis():\n    return "GPU ready" if torch.cuda.is_available() else "no usable GPU"',
            "cuda_diagnosis() returned 'no usable GPU'; the answer there is 'CPU-only build'",
        ),
        (
            'def cuda_diagnosis():\n    return "CPU-only build" if torch.version.cuda is None else "GPU ready"',
            "cuda_diagnosis() returned 'GPU ready'; the answer there is 'no usable GPU'",
        ),
        (
            "def cuda_diagnosis():\n"
            "    if torch.accelerator.current_accelerator() is None:\n"
            '        return "CPU-only build"\n'
            '    return "GPU ready"',
            "cuda_diagnosis() returned 'GPU ready'; the answer there is 'no usable GPU'",
        ),
    ),
    3: (
        # empties the list it was asked about
        (
            "def has_kernels_for(capability, arch_list):\n    arch_list.clear()\n    return False",
            "changed the arch_list it was given",
        ),
        # only an exact sm_XY match counts: misses sm_80 on an 8.9 GPU
        (
            'def has_kernels_for(capability, arch_list):\n    return f"sm_{capability[0]}{capability[1]}" in arch_list',
            "Your function wants an exact match (it accepts sm_89 on 8.9)",
        ),
        # compares the numbers only: lets machine code cross a major version
        (
            "def has_kernels_for(capability, arch_list):\n"
            "    target = capability[0] * 10 + capability[1]\n"
            '    return any(int(a.split("_")[1]) <= target for a in arch_list)',
            "machine code never crosses a major version",
        ),
        # the comparison the wrong way round: newer code on an older GPU
        (
            "def has_kernels_for(capability, arch_list):\n"
            "    target = capability[0] * 10 + capability[1]\n"
            '    return any(int(a.split("_")[1]) >= target for a in arch_list)',
            "neither machine code nor PTX runs on a GPU older than it was built for",
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
            "With only ['compute_90'] your function says True: one entry that runs is enough",
        ),
        # treats PTX (compute_XY) like machine code: same major version only
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
            "Your function runs compute_90 on 9.0 but not on 10.0: PTX is compiled for the GPU when it is loaded",
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
            "so it reads 'sm_120' wrongly: the last digit is the minor version",
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
            "an 'a' target (sm_120a) runs on exactly 12.0",
        ),
    ),
}


#: Right answers other than the solution, as a learner could write them: each must be accepted.
RIGHT_ANSWERS: dict[int, tuple[str, ...]] = {
    1: (
        "def pick_device():\n"
        "    if torch.cuda.is_available():\n"
        '        return torch.device("cuda")\n'
        "    if torch.backends.mps.is_available():\n"
        '        return torch.device("mps")\n'
        '    return torch.device("cpu")',
        "def pick_device():\n"
        '    return torch.accelerator.current_accelerator() if torch.accelerator.is_available() else "cpu"',
    ),
}
