SOLUTIONS: dict[int, str] = {
    1: """accelerators = {"A": ("cuda", None), "B": ("mps", "mps"), "C": (None, None), "D": ("cuda", "cuda")}""",
    2: """counts = {"A": (False, 4, 4), "B": (True, 1, 2), "C": (False, 0, 2), "D": (True, 1, 1)}""",
    3: """def has_kernels_for(capability, arch_list):
    target = capability[0] * 10 + capability[1]  # (8, 6): 86
    for arch in arch_list:
        kind, _, digits = arch.partition("_")
        number = int(digits.rstrip("af"))  # an 'f' (outside the question) is read as plain
        if digits.endswith("a"):  # sm_90a, compute_90a: only on 9.0
            if number == target:
                return True
        elif number <= target and (kind == "compute" or number // 10 == capability[0]):
            return True  # PTX runs on any GPU as new or newer, machine code only within its major version
    return False""",
}
