"""Chapter 01's exercise solutions, by question number (see the package's docstring)."""

SOLUTIONS: dict[int, str] = {
    1: (
        "def try_gpu(i=0):\n"
        "    accelerator = torch.accelerator.current_accelerator(check_available=True)\n"
        "    if accelerator is not None and i < torch.accelerator.device_count():\n"
        "        return torch.device(accelerator.type, i)\n"
        '    return torch.device("cpu")'
    ),
    2: (
        "def try_all_gpus():\n"
        "    accelerator = torch.accelerator.current_accelerator(check_available=True)\n"
        "    if accelerator is None:\n"
        '        return [torch.device("cpu")]\n'
        "    return [torch.device(accelerator.type, i) for i in range(torch.accelerator.device_count())]"
    ),
    3: (
        "def count_usable_cpus():\n"
        '    if hasattr(os, "sched_getaffinity"):  # Linux\n'
        "        return len(os.sched_getaffinity(0))\n"
        "    return os.cpu_count()  # macOS and Windows have no per-process CPU set here"
    ),
}


#: Typical wrong answers to each question, by number: each must be rejected (tested in CI). They live
#: here, not with the questions, because most are the solution with one line changed.
WRONG_ANSWERS: dict[int, tuple[str, ...]] = {
    1: (
        "def try_gpu(i=0):\n"
        "    if torch.cuda.device_count() > i:\n"
        '        return torch.device(f"cuda:{i}")\n'
        '    return torch.device("cpu")',
        "def try_gpu(i=0):\n"
        "    accelerator = torch.accelerator.current_accelerator(check_available=True)\n"
        "    if accelerator is not None and i <= torch.accelerator.device_count():\n"
        "        return torch.device(accelerator.type, i)\n"
        '    return torch.device("cpu")',
        "def try_gpu(i=0):\n"
        "    accelerator = torch.accelerator.current_accelerator()\n"
        '    return torch.device(accelerator.type, i) if accelerator is not None else torch.device("cpu")',
        "def try_gpu(i=0):\n"
        "    if torch.accelerator.is_available() and i < torch.accelerator.device_count():\n"
        "        return torch.accelerator.current_accelerator()\n"
        '    return torch.device("cpu")',
        "def try_gpu(i=0):\n"
        "    accelerator = torch.accelerator.current_accelerator(check_available=True)\n"
        "    if accelerator is not None and i < torch.accelerator.device_count():\n"
        '        return f"{accelerator.type}:{i}"\n'
        '    return "cpu"',
    ),
    2: (
        "def try_all_gpus():\n"
        '    devices = [torch.device("cuda", i) for i in range(torch.cuda.device_count())]\n'
        '    return devices or [torch.device("cpu")]',
        "def try_all_gpus():\n"
        "    accelerator = torch.accelerator.current_accelerator(check_available=True)\n"
        "    if accelerator is None:\n"
        "        return []\n"
        "    return [torch.device(accelerator.type, i) for i in range(torch.accelerator.device_count())]",
        "def try_all_gpus():\n"
        "    accelerator = torch.accelerator.current_accelerator()\n"
        "    if accelerator is None:\n"
        '        return [torch.device("cpu")]\n'
        "    return [torch.device(accelerator.type, i) for i in range(torch.accelerator.device_count())]",
        "def try_all_gpus():\n"
        "    accelerator = torch.accelerator.current_accelerator(check_available=True)\n"
        "    if accelerator is None:\n"
        '        return [torch.device("cpu")]\n'
        "    return [torch.device(accelerator.type)] * torch.accelerator.device_count()",
    ),
    3: (
        "def count_usable_cpus():\n    return float('nan')",
        "def count_usable_cpus():\n    return os.cpu_count()",
        "def count_usable_cpus():\n    return torch.get_num_threads()",
        "count_usable_cpus = len(os.sched_getaffinity(0))",
    ),
}
