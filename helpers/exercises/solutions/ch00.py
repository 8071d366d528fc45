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
