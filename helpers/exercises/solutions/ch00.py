"""Chapter 00's exercise solutions, by question number (see the package's docstring)."""

SOLUTIONS: dict[int, str] = {
    1: """def pick_device():
    usable = torch.accelerator.current_accelerator(check_available=True)
    return usable if usable is not None else torch.device("cpu")""",
    2: '''def cuda_diagnosis():
    if torch.version.cuda is None:
        return "CPU-only build"
    if not torch.cuda.is_available():
        return "no usable GPU"
    return "GPU ready"''',
    3: """def has_kernels_for(capability, arch_list):
    major, minor = capability
    for arch in arch_list:
        kind, _, digits = arch.partition("_")
        number = int(digits.rstrip("af"))  # sm_90a: only on 9.0; an 'f' (outside the question) is read as plain
        if digits.endswith("a"):
            if number == major * 10 + minor:
                return True
        elif kind == "sm" and number // 10 == major and number % 10 <= minor:
            return True
        elif kind == "compute" and number <= major * 10 + minor:
            return True
    return False""",
}
