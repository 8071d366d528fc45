"""Chapter 00's exercise solutions, by question number (see the package's docstring)."""

SOLUTIONS: dict[int, str] = {
    1: (
        "def pick_device():\n"
        "    usable = torch.accelerator.current_accelerator(check_available=True)\n"
        '    return usable if usable is not None else torch.device("cpu")'
    ),
    2: (
        "def cuda_diagnosis():\n"
        "    if torch.version.cuda is None:\n"
        '        return "CPU-only build"\n'
        "    if not torch.cuda.is_available():\n"
        '        return "no usable GPU"\n'
        '    return "GPU ready"'
    ),
    3: (
        "def has_kernels_for(capability, arch_list):\n"
        "    major, minor = capability\n"
        "    for arch in arch_list:\n"
        '        kind, _, digits = arch.partition("_")\n'
        '        number = int(digits.rstrip("af"))  # sm_100f runs like sm_100; sm_90a only on 9.0\n'
        '        if digits.endswith("a"):\n'
        "            if number == major * 10 + minor:\n"
        "                return True\n"
        '        elif kind == "sm" and number // 10 == major and number % 10 <= minor:\n'
        "            return True\n"
        '        elif kind == "compute" and number <= major * 10 + minor:\n'
        "            return True\n"
        "    return False"
    ),
}


#: Typical wrong answers to each question, by number: each must be rejected (tested in CI). They live
#: here, not with the questions, because most are the solution with one line changed.
WRONG_ANSWERS: dict[int, tuple[str, ...]] = {
    1: (
        'def pick_device():\n    return torch.accelerator.current_accelerator() or torch.device("cpu")',
        'def pick_device():\n    return torch.device("cuda" if torch.cuda.is_available() else "cpu")',
        'def pick_device():\n    return torch.device("cuda")',
        'pick_device = torch.device("cpu")',
    ),
    2: (
        'def cuda_diagnosis():\n    return "GPU ready" if torch.cuda.is_available() else "no usable GPU"',
        'def cuda_diagnosis():\n    return "CPU-only build" if torch.version.cuda is None else "GPU ready"',
        "def cuda_diagnosis():\n"
        "    if torch.accelerator.current_accelerator() is None:\n"
        '        return "CPU-only build"\n'
        '    return "GPU ready"',
    ),
    3: (
        "def has_kernels_for(capability, arch_list):\n    arch_list.clear()\n    return False",
        'def has_kernels_for(capability, arch_list):\n    return f"sm_{capability[0]}{capability[1]}" in arch_list',
        "def has_kernels_for(capability, arch_list):\n"
        "    target = capability[0] * 10 + capability[1]\n"
        '    return any(int(a.split("_")[1]) <= target for a in arch_list)',
        "def has_kernels_for(capability, arch_list):\n"
        "    target = capability[0] * 10 + capability[1]\n"
        '    return any(int(a.split("_")[1]) >= target for a in arch_list)',
        # reads sm_90a as sm_90, which runs on any 9.x and, as PTX, on newer GPUs
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
    ),
}
