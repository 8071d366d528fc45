"""Chapter 01's typical wrong answers, by question number (see the package's docstring)."""

import os

#: Typical wrong answers to each question, by number, each with words its verdict must contain (the
#: message a learner who wrote it is told).
WRONG_ANSWERS: dict[int, tuple[tuple[str, str], ...]] = {
    1: (
        (
            "def try_gpu(i=0):\n"
            "    if torch.cuda.device_count() > i:\n"
            '        return torch.device(f"cuda:{i}")\n'
            '    return torch.device("cpu")',
            "on a Mac with Apple's GPU, try_gpu(0) returned cpu, but it should be mps:0",
        ),
        (
            "def try_gpu(i=0):\n"
            "    accelerator = torch.accelerator.current_accelerator(check_available=True)\n"
            "    if accelerator is not None and i <= torch.accelerator.device_count():\n"
            "        return torch.device(accelerator.type, i)\n"
            '    return torch.device("cpu")',
            "on two CUDA GPUs (Kaggle's T4 ×2), try_gpu(2) returned cuda:2, but it should be cpu",
        ),
        (
            "def try_gpu(i=0):\n"
            "    accelerator = torch.accelerator.current_accelerator()\n"
            '    return torch.device(accelerator.type, i) if accelerator is not None else torch.device("cpu")',
            "on a CUDA build of torch without a driver, try_gpu(0) returned cuda:0, but it should be cpu",
        ),
        (
            "def try_gpu(i=0):\n"
            "    if torch.accelerator.is_available() and i < torch.accelerator.device_count():\n"
            "        return torch.accelerator.current_accelerator()\n"
            '    return torch.device("cpu")',
            "returned cuda, but it should be cuda:0 (name the index",
        ),
        (
            "def try_gpu(i=0):\n"
            "    accelerator = torch.accelerator.current_accelerator(check_available=True)\n"
            "    if accelerator is not None and i < torch.accelerator.device_count():\n"
            '        return f"{accelerator.type}:{i}"\n'
            '    return "cpu"',
            "returned the string 'cpu'; return a torch.device",
        ),
    ),
    2: (
        (
            "def try_all_gpus():\n"
            '    devices = [torch.device("cuda", i) for i in range(torch.cuda.device_count())]\n'
            '    return devices or [torch.device("cpu")]',
            "on a Mac with Apple's GPU, try_all_gpus() returned [cpu], but it should be [mps:0]",
        ),
        (
            "def try_all_gpus():\n"
            "    accelerator = torch.accelerator.current_accelerator(check_available=True)\n"
            "    if accelerator is None:\n"
            "        return []\n"
            "    return [torch.device(accelerator.type, i) for i in range(torch.accelerator.device_count())]",
            "try_all_gpus() returned an empty list; fall back to [torch.device('cpu')]",
        ),
        (
            "def try_all_gpus():\n"
            "    accelerator = torch.accelerator.current_accelerator()\n"
            "    if accelerator is None:\n"
            '        return [torch.device("cpu")]\n'
            "    return [torch.device(accelerator.type, i) for i in range(torch.accelerator.device_count())]",
            "try_all_gpus() returned an empty list; fall back to [torch.device('cpu')]",
        ),
        (
            "def try_all_gpus():\n"
            "    accelerator = torch.accelerator.current_accelerator(check_available=True)\n"
            "    if accelerator is None:\n"
            '        return [torch.device("cpu")]\n'
            "    return [torch.device(accelerator.type)] * torch.accelerator.device_count()",
            "returned [cuda, cuda], but it should be [cuda:0, cuda:1]",
        ),
    ),
    3: (
        (
            "def count_usable_cpus():\n    return float('nan')",
            "count_usable_cpus() returned nan; CPUs come in whole numbers",
        ),
        (
            "def count_usable_cpus():\n    return os.cpu_count()",
            "count the CPUs this process may use, not the machine's",
        ),
        (
            "def count_usable_cpus():\n    return torch.get_num_threads()",
            "count the CPUs this process may use, not the machine's",
        ),
        (
            "count_usable_cpus = len(os.sched_getaffinity(0))",
            "should be a function taking no arguments, but it is an int",
        ),
    ),
    4: (
        # the bug itself: on one GPU, try_gpu(1) is the CPU
        (
            "import helpers.devices\n"
            "\n"
            "\n"
            "def stage_devices():\n"
            "    return helpers.devices.try_gpu(0), helpers.devices.try_gpu(1)",
            "one CUDA GPU, stage_devices() returned (cuda:0, cpu): the second stage would run on the CPU",
        ),
        # counts on two devices being there
        (
            "import helpers.devices\n"
            "\n"
            "\n"
            "def stage_devices():\n"
            "    devices = helpers.devices.try_all_gpus()\n"
            "    return devices[0], devices[1]",
            "on the CPU-only build of torch, stage_devices() raised IndexError",
        ),
        # safe everywhere, but leaves the second GPU idle
        (
            "import helpers.devices\n"
            "\n"
            "\n"
            "def stage_devices():\n"
            "    first = helpers.devices.try_gpu(0)\n"
            "    return first, first",
            "each stage should get its own GPU where there are 2; both on cuda:0 leaves the other idle",
        ),
        # counts CUDA GPUs only: a Mac's GPU is never used
        (
            "def stage_devices():\n"
            "    n = torch.cuda.device_count()\n"
            "    if n >= 2:\n"
            '        return torch.device("cuda:0"), torch.device("cuda:1")\n'
            "    if n == 1:\n"
            '        return torch.device("cuda:0"), torch.device("cuda:0")\n'
            '    return torch.device("cpu"), torch.device("cpu")',
            "although mps:0 is usable: torch.cuda knows only CUDA GPUs",
        ),
        # asks what torch was built for, not what is usable: a CUDA build without a driver gets cuda:0
        (
            "def stage_devices():\n"
            "    built = torch.accelerator.current_accelerator()\n"
            "    if built is None:\n"
            '        return torch.device("cpu"), torch.device("cpu")\n'
            "    second = 1 if torch.accelerator.device_count() > 1 else 0\n"
            "    return torch.device(built.type, 0), torch.device(built.type, second)",
            "this torch is built for cuda but has no driver",
        ),
    ),
}


#: Right answers other than the solution, as a learner could write them: each must be accepted.
RIGHT_ANSWERS: dict[int, tuple[str, ...]] = {
    1: (
        "def try_gpu(i=0):\n"
        "    if torch.accelerator.is_available() and i < torch.accelerator.device_count():\n"
        '        return torch.device(f"{torch.accelerator.current_accelerator().type}:{i}")\n'
        '    return torch.device("cpu")',
        "def try_gpu(i=0):\n"
        "    if torch.cuda.device_count() > i:\n"
        '        return torch.device("cuda", i)\n'
        "    if torch.backends.mps.is_available() and i == 0:\n"
        '        return torch.device("mps", 0)\n'
        '    return torch.device("cpu")',
    ),
    2: (
        "def try_all_gpus():\n"
        "    if not torch.accelerator.is_available():\n"
        '        return [torch.device("cpu")]\n'
        "    kind = torch.accelerator.current_accelerator().type\n"
        '    return [torch.device(f"{kind}:{i}") for i in range(torch.accelerator.device_count())]',
    ),
    3: (
        "def count_usable_cpus():\n    return float(len(os.sched_getaffinity(0)))"
        if hasattr(os, "sched_getaffinity")
        else "def count_usable_cpus():\n    return float(os.cpu_count())",
    ),
}
