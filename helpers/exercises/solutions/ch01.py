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
    4: (
        "import helpers.devices\n"
        "\n"
        "\n"
        "def stage_devices():\n"
        "    devices = helpers.devices.try_all_gpus()  # [cpu] when no accelerator is usable\n"
        "    if len(devices) >= 2:\n"
        "        return devices[0], devices[1]\n"
        "    return devices[0], devices[0]  # one GPU, or the CPU: both stages share it"
    ),
}
