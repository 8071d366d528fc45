"""Chapter 01's typical wrong answers, by question number (see the package's docstring)."""

import importlib.util
import os

from helpers.exercises.solutions.ch01 import SOLUTIONS

#: The CPUs this process may use, in order (Linux): the checker's one-CPU try is the last of them.
CPUS = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []

#: Typical wrong answers to each question, by number, each with words its verdict must contain (the
#: message a learner who wrote it is told).
WRONG_ANSWERS: dict[int, tuple[tuple[str, str], ...]] = {
    1: (
        # torch.accelerator.device_count() taken for usable GPUs: it counts a too-old driver's GPUs, like torch.cuda's
        (
            "def try_gpu(i=0):\n"
            "    if 0 <= i < torch.accelerator.device_count():\n"
            "        return torch.device(torch.accelerator.current_accelerator().type, i)\n"
            '    return torch.device("cpu")',
            "on a CUDA build of torch whose driver is too old for it (nvidia-smi lists a GPU), try_gpu() returned "
            "cuda:0; expected cpu",
        ),
        (
            "def try_gpu(i=0):\n"
            "    if torch.cuda.is_available() and torch.cuda.device_count() > i:\n"
            '        return torch.device(f"cuda:{i}")\n'
            '    return torch.device("cpu")',
            "on a Mac with Apple's mps, try_gpu() returned cpu; expected mps:0",
        ),
        # the GPUs torch.cuda counts taken for usable ones (accepted before): a driver too old for the build lists
        # its GPUs, and torch.cuda.device_count() counts them (through NVML) while none is usable
        (
            "def try_gpu(i=0):\n"
            "    if torch.cuda.device_count() > i:\n"
            '        return torch.device("cuda", i)\n'
            "    if torch.backends.mps.is_available() and i == 0:\n"
            '        return torch.device("mps", 0)\n'
            '    return torch.device("cpu")',
            "on a CUDA build of torch whose driver is too old for it (nvidia-smi lists a GPU), try_gpu() returned "
            "cuda:0; expected cpu",
        ),
        (
            "def try_gpu(i=0):\n"
            "    accelerator = torch.accelerator.current_accelerator(check_available=True)\n"
            "    if accelerator is not None and i <= torch.accelerator.device_count():\n"
            "        return torch.device(accelerator.type, i)\n"
            '    return torch.device("cpu")',
            "on a machine with one CUDA GPU, try_gpu(1) returned cuda:1; expected cpu",
        ),
        (
            "def try_gpu(i=0):\n"
            "    accelerator = torch.accelerator.current_accelerator()\n"
            '    return torch.device(accelerator.type, i) if accelerator is not None else torch.device("cpu")',
            "on Kaggle with the accelerator off (a CUDA build of torch without a driver), "
            "try_gpu() returned cuda:0; expected cpu",
        ),
        (
            "def try_gpu(i=0):\n"
            "    if torch.accelerator.is_available() and i < torch.accelerator.device_count():\n"
            "        return torch.accelerator.current_accelerator()\n"
            '    return torch.device("cpu")',
            "on a machine with one CUDA GPU, try_gpu() returned cuda; expected cuda:0",
        ),
        (
            "def try_gpu(i=0):\n"
            "    accelerator = torch.accelerator.current_accelerator(check_available=True)\n"
            "    if accelerator is not None and i < torch.accelerator.device_count():\n"
            '        return f"{accelerator.type}:{i}"\n'
            '    return "cpu"',
            "expected try_gpu() to return a torch.device, but got a str: 'cpu'",
        ),
        # asks CUDA for device i's name, and catches the error where CUDA fails (each pretend CUDA GPU is a T4, and a
        # device past the last raises)
        (
            "def try_gpu(i=0):\n"
            "    try:\n"
            "        torch.cuda.get_device_name(i)\n"
            '        return torch.device("cuda", i)\n'
            "    except Exception:\n"
            '        return torch.device("cpu")',
            "on a CPU-only build of torch, try_gpu() started CUDA, which fails there, and went on: decide by torch's "
            "device queries",
        ),
        # runs CUDA code to find out: a pretend GPU runs none, and where CUDA fails the error decides
        (
            "def try_gpu(i=0):\n"
            "    try:\n"
            '        torch.ones(1, device=f"cuda:{i}")\n'
            '        return torch.device("cuda", i)\n'
            "    except Exception:\n"
            '        return torch.device("cpu")',
            "on a CPU-only build of torch, try_gpu() started CUDA, which fails there, and went on",
        ),
        # an mps build taken for a usable GPU (accepted before: no stand-in had mps built but not usable)
        (
            "def try_gpu(i=0):\n"
            "    if torch.cuda.is_available() and torch.cuda.device_count() > i:\n"
            '        return torch.device("cuda", i)\n'
            "    if torch.backends.mps.is_built() and i == 0:\n"
            '        return torch.device("mps", 0)\n'
            '    return torch.device("cpu")',
            "on an mps build of torch on a Mac that cannot use mps, try_gpu() returned mps:0; expected cpu",
        ),
        # asks torch once, when the cell runs
        (
            "usable = torch.accelerator.current_accelerator(check_available=True)\n"
            "\n\n"
            "def try_gpu(i=0):\n"
            '    return torch.device(usable.type, i) if usable is not None else torch.device("cpu")',
            "on a machine with one CUDA GPU, try_gpu() returned cpu (as on every machine); expected cuda:0",
        ),
        # a negative i counted from the end, as a list index (accepted before: -1 was not tried); there is no device -1
        (
            "def try_gpu(i=0):\n"
            "    accelerator = torch.accelerator.current_accelerator(check_available=True)\n"
            "    count = torch.accelerator.device_count()\n"
            "    if accelerator is not None and abs(i) < count:\n"
            "        return torch.device(accelerator.type, i % count)\n"
            '    return torch.device("cpu")',
            "on Kaggle's two T4 GPUs, try_gpu(-1) returned cuda:1; expected cpu (or an error: no device has a negative",
        ),
        # makes device i the current one, which lasts after the call (told before, wrongly, that no accelerator
        # was available on a machine with one CUDA GPU: the stand-in could not set a device; setting device 0 was
        # accepted before, as the current device was 0 on every pretend machine: it is 1 where there are two or more)
        (
            "def try_gpu(i=0):\n"
            "    if torch.accelerator.is_available() and 0 <= i < torch.accelerator.device_count():\n"
            "        torch.accelerator.set_device_index(i)\n"
            "        return torch.device(torch.accelerator.current_accelerator().type, i)\n"
            '    return torch.device("cpu")',
            "on Kaggle's two T4 GPUs, try_gpu() left the current device at 0 (it was 1): put it back",
        ),
    ),
    2: (
        # torch.accelerator.device_count() taken for usable GPUs: it counts a too-old driver's GPUs, like torch.cuda's
        (
            "def try_all_gpus():\n"
            "    n = torch.accelerator.device_count()\n"
            "    if n == 0:\n"
            '        return [torch.device("cpu")]\n'
            "    kind = torch.accelerator.current_accelerator().type\n"
            "    return [torch.device(kind, i) for i in range(n)]",
            "driver is too old for it",
        ),
        (
            "def try_all_gpus():\n"
            "    n = torch.cuda.device_count() if torch.cuda.is_available() else 0\n"
            '    return [torch.device("cuda", i) for i in range(n)] or [torch.device("cpu")]',
            "on a Mac with Apple's mps, try_all_gpus() returned [cpu]; expected [mps:0]",
        ),
        # the GPUs torch.cuda counts taken for usable ones (accepted before): see question 1
        (
            "def try_all_gpus():\n"
            '    devices = [torch.device("cuda", i) for i in range(torch.cuda.device_count())]\n'
            '    return devices or [torch.device("cpu")]',
            "on a CUDA build of torch whose driver is too old for it (nvidia-smi lists a GPU), try_all_gpus() returned "
            "[cuda:0]; expected [cpu]",
        ),
        (
            "def try_all_gpus():\n"
            "    accelerator = torch.accelerator.current_accelerator(check_available=True)\n"
            "    if accelerator is None:\n"
            "        return []\n"
            "    return [torch.device(accelerator.type, i) for i in range(torch.accelerator.device_count())]",
            "on a CPU-only build of torch, try_all_gpus() returned []; expected [cpu]",
        ),
        (
            "def try_all_gpus():\n"
            "    accelerator = torch.accelerator.current_accelerator()\n"
            "    if accelerator is None:\n"
            '        return [torch.device("cpu")]\n'
            "    return [torch.device(accelerator.type, i) for i in range(torch.accelerator.device_count())]",
            "on Kaggle with the accelerator off (a CUDA build of torch without a driver), "
            "try_all_gpus() returned []; expected [cpu]",
        ),
        (
            "def try_all_gpus():\n"
            "    accelerator = torch.accelerator.current_accelerator(check_available=True)\n"
            "    if accelerator is None:\n"
            '        return [torch.device("cpu")]\n'
            "    return [torch.device(accelerator.type)] * torch.accelerator.device_count()",
            "on a machine with one CUDA GPU, try_all_gpus() returned [cuda]; expected [cuda:0]",
        ),
        # the devices' names, not torch.device objects
        (
            "def try_all_gpus():\n"
            "    if not torch.accelerator.is_available():\n"
            '        return ["cpu"]\n'
            "    kind = torch.accelerator.current_accelerator().type\n"
            '    return [f"{kind}:{i}" for i in range(torch.accelerator.device_count())]',
            "expected try_all_gpus() to list torch.device objects, but got a str: 'cpu'",
        ),
        # every GPU, but the last first
        (
            "def try_all_gpus():\n"
            "    accelerator = torch.accelerator.current_accelerator(check_available=True)\n"
            "    if accelerator is None:\n"
            '        return [torch.device("cpu")]\n'
            "    return [torch.device(accelerator.type, i) for i in reversed(range(torch.accelerator.device_count()))]",
            "on Kaggle's two T4 GPUs, try_all_gpus() returned [cuda:1, cuda:0]; expected [cuda:0, cuda:1]",
        ),
        # sorted by name, where cuda:10 comes before cuda:2 (accepted before: no pretend machine had over ten GPUs)
        (
            "def try_all_gpus():\n"
            "    accelerator = torch.accelerator.current_accelerator(check_available=True)\n"
            "    if accelerator is None:\n"
            '        return [torch.device("cpu")]\n'
            "    found = {torch.device(accelerator.type, i) for i in range(torch.accelerator.device_count())}\n"
            "    return sorted(found, key=str)",
            "on a machine with sixteen CUDA GPUs, try_all_gpus() returned [cuda:0, cuda:1, cuda:10, cuda:11,",
        ),
        # an mps build taken for a usable GPU (accepted before)
        (
            "def try_all_gpus():\n"
            "    if torch.cuda.is_available():\n"
            '        return [torch.device("cuda", i) for i in range(torch.cuda.device_count())]\n'
            "    if torch.backends.mps.is_built():\n"
            '        return [torch.device("mps", 0)]\n'
            '    return [torch.device("cpu")]',
            "on an mps build of torch on a Mac that cannot use mps, try_all_gpus() returned [mps:0]; expected [cpu]",
        ),
        # asks torch once, when the cell runs
        (
            "accelerator = torch.accelerator.current_accelerator(check_available=True)\n"
            "found = [torch.device(accelerator.type, i) for i in range(torch.accelerator.device_count())]\n"
            "\n\n"
            "def try_all_gpus():\n"
            '    return found or [torch.device("cpu")]',
            "on a machine with one CUDA GPU, try_all_gpus() returned [cpu] (as on every machine); expected [cuda:0]",
        ),
    ),
    3: (
        (
            "def count_usable_cpus():\n    return float('nan')",
            "expected count_usable_cpus() to return a whole number (an int), but got a float: nan",
        ),
        (
            "def count_usable_cpus():\n    return os.cpu_count()",
            f"count_usable_cpus() returned {os.cpu_count()}; expected 1 ({os.cpu_count()} is the machine's count",
        ),
        # torch's threads, set when torch starts (told before that it was os.cpu_count(), then that it should "ask
        # each time"): the check sets torch's threads to another number than the CPUs allowed
        (
            "def count_usable_cpus():\n    return torch.get_num_threads()",
            "count_usable_cpus() returned 2; expected 1 (2 is torch.get_num_threads(), which the check set to 2",
        ),
        # the CPUs allowed capped by OMP_NUM_THREADS (accepted before: the check set it above the CPUs allowed); it
        # returns the CPUs allowed where one is, so OMP_NUM_THREADS is not named (one CPU fewer would give the same)
        *(
            (
                "def count_usable_cpus():\n"
                "    n, omp = len(os.sched_getaffinity(0)), os.environ.get('OMP_NUM_THREADS')\n"
                "    return min(n, int(omp)) if omp else n",
                f"returned {max(len(CPUS) - 2, 1)}; expected {len(CPUS)}",
            )
            for _ in [1]
            if len(CPUS) > 1
        ),
        # the smaller of the CPUs allowed and torch's threads (accepted before, where the two were equal)
        (
            "def count_usable_cpus():\n    return min(len(os.sched_getaffinity(0)), torch.get_num_threads())",
            f"allowed {len(CPUS)} CPU(s) {CPUS}, count_usable_cpus() returned {max(len(CPUS) - 1, 1)}; expected "
            f"{len(CPUS)} ({max(len(CPUS) - 1, 1)} is torch.get_num_threads()",
        ),
        # the machine's logical CPUs through psutil, which reads neither os.cpu_count nor the CPUs allowed (told
        # before to "ask it each time", as if it had asked once)
        *(
            (
                "import psutil\n\n\ndef count_usable_cpus():\n    return psutil.cpu_count(logical=True)",
                "whatever CPUs were allowed; os.sched_getaffinity(0) gives those allowed as it runs)",
            )
            for _ in [importlib.util.find_spec("psutil")]
            if _ is not None and len(CPUS) > 1
        ),
        # counts once, when the cell runs, instead of each time it is called (told before that it was os.cpu_count())
        (
            "usable = len(os.sched_getaffinity(0))\n\n\ndef count_usable_cpus():\n    return usable",
            f"count_usable_cpus() returned {len(CPUS)}; expected 1 (it returned {len(CPUS)} whatever CPUs were allowed",
        ),
        (
            "count_usable_cpus = len(os.sched_getaffinity(0))",
            "should be a function taking no arguments, but it is an int",
        ),
        # the highest CPU's number, not how many (accepted before: the checker allowed the lowest CPUs)
        (
            "def count_usable_cpus():\n    return max(os.sched_getaffinity(0)) + 1",
            f"allowed 1 CPU(s) {CPUS[-1:]}, count_usable_cpus() returned {max(CPUS, default=0) + 1}; expected 1",
        ),
        # a float, where the cell asks for a whole number (accepted before): torch.set_num_threads(1.0) raises
        (
            "def count_usable_cpus():\n    return len(os.sched_getaffinity(0)) / 1",
            "expected count_usable_cpus() to return a whole number (an int), but got a float: 1.0",
        ),
        (
            "def count_usable_cpus():\n    return float(len(os.sched_getaffinity(0)))",
            "expected count_usable_cpus() to return a whole number (an int), but got a float: 1.0",
        ),
        # OpenMP's thread setting where there is one (accepted before: the check never set OMP_NUM_THREADS); it
        # says how many threads to start, not which CPUs this process may use
        (
            'def count_usable_cpus():\n    return int(os.environ.get("OMP_NUM_THREADS", len(os.sched_getaffinity(0))))',
            f"allowed 1 CPU(s) {CPUS[-1:]}, count_usable_cpus() returned 5; expected 1 (5 is OMP_NUM_THREADS, which "
            "the check set to 5 for this try)",
        ),
        # the set, not how many are in it
        (
            "def count_usable_cpus():\n    return os.sched_getaffinity(0)",
            "expected count_usable_cpus() to return a whole number (an int), but got a set",
        ),
        # sets torch's threads to the CPUs allowed and reads them back (accepted before: the check set them back):
        # a count leaves the process as it was
        *(
            (
                "def count_usable_cpus():\n"
                "    torch.set_num_threads(len(os.sched_getaffinity(0)))\n"
                "    return torch.get_num_threads()",
                "count_usable_cpus() left torch's threads at 1, where the check set 2: leave them be",
            )
            for _ in CPUS[:1]
        ),
        # narrows, or widens, the CPUs this process may run on, and returns the count from before (accepted before:
        # the check set them back after each try)
        *(
            (
                "def count_usable_cpus():\n"
                "    cpus = os.sched_getaffinity(0)\n"
                f"    os.sched_setaffinity(0, {change})\n"
                "    return len(cpus)",
                "count_usable_cpus() left the CPUs it may run on at ",
            )
            for change in ("{min(cpus)}", "range(os.cpu_count())")
            if len(CPUS) > 1
        ),
    ),
    4: (
        # torch.accelerator.device_count() taken for usable GPUs: it counts a too-old driver's GPUs, like torch.cuda's
        (
            "def stage_devices():\n"
            "    accelerator, n = torch.accelerator.current_accelerator(), torch.accelerator.device_count()\n"
            "    if accelerator is None or n == 0:\n"
            '        return torch.device("cpu"), torch.device("cpu")\n'
            "    return torch.device(accelerator.type, 0), torch.device(accelerator.type, min(1, n - 1))",
            "driver is too old for it",
        ),
        # the bug itself: on one GPU, try_gpu(1) is the CPU
        (
            "import helpers.devices\n"
            "\n"
            "\n"
            "def stage_devices():\n"
            "    return helpers.devices.try_gpu(0), helpers.devices.try_gpu(1)",
            "one CUDA GPU, stage_devices() returned (cuda:0, cpu); the second stage would run on the CPU",
        ),
        # counts on two devices being there
        (
            "import helpers.devices\n"
            "\n"
            "\n"
            "def stage_devices():\n"
            "    devices = helpers.devices.try_all_gpus()\n"
            "    return devices[0], devices[1]",
            "on a CPU-only build of torch, stage_devices() raised IndexError",
        ),
        # safe everywhere, but leaves the second GPU idle
        (
            "import helpers.devices\n"
            "\n"
            "\n"
            "def stage_devices():\n"
            "    first = helpers.devices.try_gpu(0)\n"
            "    return first, first",
            "on Kaggle's two T4 GPUs, stage_devices() returned (cuda:0, cuda:0); where there are 2 GPUs, give each",
        ),
        # counts CUDA GPUs only: a Mac's GPU is never used
        (
            "def stage_devices():\n"
            "    n = torch.cuda.device_count() if torch.cuda.is_available() else 0\n"
            "    if n >= 2:\n"
            '        return torch.device("cuda:0"), torch.device("cuda:1")\n'
            "    if n == 1:\n"
            '        return torch.device("cuda:0"), torch.device("cuda:0")\n'
            '    return torch.device("cpu"), torch.device("cpu")',
            "on a Mac with Apple's mps, stage_devices() returned (cpu, cpu); the devices torch can use there: [mps:0]",
        ),
        # asks what torch was built for, not what is usable: a CUDA build without a driver gets cuda:0
        (
            "def stage_devices():\n"
            "    built = torch.accelerator.current_accelerator()\n"
            "    if built is None:\n"
            '        return torch.device("cpu"), torch.device("cpu")\n'
            "    second = 1 if torch.accelerator.device_count() > 1 else 0\n"
            "    return torch.device(built.type, 0), torch.device(built.type, second)",
            "on Kaggle with the accelerator off (a CUDA build of torch without a driver), "
            "stage_devices() returned (cuda:0, cuda:0); the devices torch "
            "can use there: [cpu]",
        ),
        # asks for the devices once, when the cell runs (told before without the note)
        (
            "import helpers.devices\n"
            "\n"
            "devices = helpers.devices.try_all_gpus()\n"
            "\n\n"
            "def stage_devices():\n"
            "    return devices[0], devices[-1]",
            "on a machine with one CUDA GPU, stage_devices() returned (cpu, cpu) (as on every machine); the devices",
        ),
    ),
}


#: Right answers other than the solution, as a learner could write them: each must be accepted.
RIGHT_ANSWERS: dict[int, tuple[str, ...]] = {
    1: (
        # the accelerator's module without naming it (the pretend machines answered torch.cpu before)
        "def try_gpu(i=0):\n"
        "    acc = torch.accelerator.current_accelerator(check_available=True)\n"
        "    if acc is not None and 0 <= i < torch.get_device_module().device_count():\n"
        "        return torch.device(acc.type, i)\n"
        '    return torch.device("cpu")',
        "def try_gpu(i=0):\n"
        "    if torch.accelerator.is_available() and i < torch.accelerator.device_count():\n"
        '        return torch.device(f"{torch.accelerator.current_accelerator().type}:{i}")\n'
        '    return torch.device("cpu")',
        "def try_gpu(i=0):\n"
        "    if torch.cuda.is_available() and torch.cuda.device_count() > i:\n"
        '        return torch.device("cuda", i)\n'
        "    if torch.backends.mps.is_available() and i == 0:\n"
        '        return torch.device("mps", 0)\n'
        '    return torch.device("cpu")',
        # reads the current device, where there are two or more it is 1 at first (section 7): names the device only
        "def try_gpu(i=0):\n"
        "    if not torch.accelerator.is_available() or not 0 <= i < torch.accelerator.device_count():\n"
        '        return torch.device("cpu")\n'
        "    current = torch.accelerator.current_device_index()\n"
        "    kind = torch.accelerator.current_accelerator().type\n"
        "    return torch.device(kind, i) if i != current else torch.device(kind, current)",
        # asks whether each backend is built first (rejected before: a pretend Mac's mps was not built)
        "def try_gpu(i=0):\n"
        "    if torch.backends.cuda.is_built() and torch.cuda.is_available() and i < torch.cuda.device_count():\n"
        '        return torch.device("cuda", i)\n'
        "    if torch.backends.mps.is_built() and torch.backends.mps.is_available() and i == 0:\n"
        '        return torch.device("mps", 0)\n'
        '    return torch.device("cpu")',
        # a bare index, as chapter 01 teaches (rejected before: the stand-ins' torch.device(0) raised)
        "def try_gpu(i=0):\n"
        "    if torch.accelerator.is_available() and torch.accelerator.device_count() > i:\n"
        "        return torch.device(i)\n"
        '    return torch.device("cpu")',
        # refuses a negative index, as helpers.devices.try_gpu does: no device has one
        "def try_gpu(i=0):\n"
        "    if i < 0:\n"
        '        raise ValueError(f"a device index counts from 0, not {i}")\n'
        "    accelerator = torch.accelerator.current_accelerator(check_available=True)\n"
        "    if accelerator is not None and i < torch.accelerator.device_count():\n"
        "        return torch.device(accelerator.type, i)\n"
        '    return torch.device("cpu")',
        # the course's own, which raises for a negative index
        "import helpers.devices\n\n\ndef try_gpu(i=0):\n    return helpers.devices.try_gpu(i)",
        # sets device i and puts the last one back (rejected before: any set_device was held against it)
        "def try_gpu(i=0):\n"
        "    if not torch.cuda.is_available() or not 0 <= i < torch.cuda.device_count():\n"
        "        mps = torch.backends.mps.is_available() and i == 0\n"
        '        return torch.device("mps", 0) if mps else torch.device("cpu")\n'
        "    prev = torch.cuda.current_device()\n"
        "    torch.cuda.set_device(i)\n"
        "    try:\n"
        '        return torch.device("cuda", torch.cuda.current_device())\n'
        "    finally:\n"
        "        torch.cuda.set_device(prev)",
        "def try_gpu(i=0):\n"
        "    if not torch.accelerator.is_available() or not 0 <= i < torch.accelerator.device_count():\n"
        '        return torch.device("cpu")\n'
        "    prev = torch.accelerator.current_device_index()\n"
        "    torch.accelerator.set_device_index(i)\n"
        "    try:\n"
        "        index = torch.accelerator.current_device_index()\n"
        "    finally:\n"
        "        torch.accelerator.set_device_index(prev)\n"
        "    return torch.device(torch.accelerator.current_accelerator().type, index)",
        # the blocks section 7 teaches, which set the device back (rejected before: the stand-ins raised in them)
        "def try_gpu(i=0):\n"
        "    if not torch.cuda.is_available() or not 0 <= i < torch.cuda.device_count():\n"
        "        mps = torch.backends.mps.is_available() and i == 0\n"
        '        return torch.device("mps", 0) if mps else torch.device("cpu")\n'
        "    with torch.cuda.device(i):\n"
        '        return torch.device("cuda", torch.cuda.current_device())',
        "def try_gpu(i=0):\n"
        "    if not torch.accelerator.is_available() or not 0 <= i < torch.accelerator.device_count():\n"
        '        return torch.device("cpu")\n'
        "    with torch.accelerator.device_index(i):\n"
        "        index = torch.accelerator.current_device_index()\n"
        "    return torch.device(torch.accelerator.current_accelerator().type, index)",
    ),
    2: (
        "def try_all_gpus():\n"
        "    if not torch.accelerator.is_available():\n"
        '        return [torch.device("cpu")]\n'
        "    kind = torch.accelerator.current_accelerator().type\n"
        '    return [torch.device(f"{kind}:{i}") for i in range(torch.accelerator.device_count())]',
        # a tuple for the list
        "def try_all_gpus():\n"
        "    n = torch.accelerator.device_count() if torch.accelerator.is_available() else 0\n"
        '    return tuple(map(try_gpu_of, range(n))) or (torch.device("cpu"),)\n'
        "\n\n"
        "def try_gpu_of(i):\n"
        "    return torch.device(torch.accelerator.current_accelerator().type, i)",
    ),
    3: (
        "import numpy as np\n\n\ndef count_usable_cpus():\n    return np.int64(len(os.sched_getaffinity(os.getpid())))"
        if CPUS
        else "def count_usable_cpus():\n    return os.cpu_count()",
        "def count_usable_cpus():\n    return torch.tensor(len(os.sched_getaffinity(0)))"
        if CPUS
        else "def count_usable_cpus():\n    return torch.tensor(os.cpu_count())",
    ),
    4: (
        "import helpers.devices\n"
        "\n"
        "\n"
        "def stage_devices():\n"
        "    usable = helpers.devices.try_all_gpus()\n"
        "    return usable[0], usable[-1]  # the first and the last: the same one where there is one",
    ),
}

#: Round 10's findings: torch's default device or grad mode changed by some calls and put back by the last one (each
#: call is now looked at); a count kept from the first call, once blamed on OMP_NUM_THREADS.
WRONG_ANSWERS[1] += (
    (
        SOLUTIONS[1]
        .replace(
            '    return torch.device("cpu")',
            '    d = torch.device("cpu")\n    torch.set_default_device(d)\n    return d',
        )
        .replace(
            "        return torch.device(accelerator.type, i)",
            "        d = torch.device(accelerator.type, i)\n        torch.set_default_device(d)\n        return d",
        ),
        "changed torch's default device (pass device=... to the calls instead), which would outlast the check",
    ),
    (
        SOLUTIONS[1].replace("    accelerator = ", "    torch.set_grad_enabled(i != 0)\n    accelerator = "),
        "changed torch's grad mode (off only in `with torch.no_grad():`)",
    ),
)
WRONG_ANSWERS[3] += (
    (
        "import functools\n\n\n@functools.lru_cache(maxsize=None)\n"
        "def count_usable_cpus():\n    return len(os.sched_getaffinity(0))",
        "whatever CPUs were allowed; os.sched_getaffinity(0) gives those allowed as it runs",
    ),
)

#: Round 12's findings: CUDA_VISIBLE_DEVICES's numbers taken for torch's (torch numbers the GPUs it sees from 0), and
#: an error's words deciding
WRONG_ANSWERS[1] += (
    (
        "import os\n\n\ndef try_gpu(i=0):\n"
        "    acc = torch.accelerator.current_accelerator(check_available=True)\n"
        "    if acc is not None and 0 <= i < torch.accelerator.device_count():\n"
        '        visible = os.environ.get("CUDA_VISIBLE_DEVICES")\n'
        '        return torch.device(acc.type, int(visible.split(",")[i]) if visible else i)\n'
        '    return torch.device("cpu")',
        "on a cluster job given GPU 3 of 8 (CUDA_VISIBLE_DEVICES=3: torch's cuda:0), try_gpu() returned cuda:3; "
        "expected cuda:0",
    ),
    (
        "def try_gpu(i=0):\n"
        "    acc = torch.accelerator.current_accelerator()\n"
        "    if acc is None or not 0 <= i < torch.accelerator.device_count():\n"
        '        return torch.device("cpu")\n'
        "    try:\n"
        "        torch.accelerator.current_device_index()\n"
        "    except RuntimeError as e:\n"
        '        if "NVIDIA driver" in str(e) or "No CUDA GPUs" in str(e):\n'
        '            return torch.device("cpu")\n'
        "    return torch.device(acc.type, i)",
        "on a CUDA build of torch whose driver is too old for it (nvidia-smi lists a GPU), try_gpu() started CUDA, "
        "which fails there, and went on",
    ),
)
WRONG_ANSWERS[2] += (
    (
        "import os\n\n\ndef try_all_gpus():\n"
        "    acc = torch.accelerator.current_accelerator(check_available=True)\n"
        "    if acc is None:\n"
        '        return [torch.device("cpu")]\n'
        '    visible = os.environ.get("CUDA_VISIBLE_DEVICES")\n'
        '    ids = [int(k) for k in visible.split(",")] if visible else range(torch.accelerator.device_count())\n'
        "    return [torch.device(acc.type, k) for k in ids]",
        "on one GPU, and a job script's CUDA_VISIBLE_DEVICES=0,1 (torch sees one), try_all_gpus() returned "
        "[cuda:0, cuda:1]; expected [cuda:0]",
    ),
)
#: Round 13: the GPUs counted from CUDA_VISIBLE_DEVICES once the accelerator is usable (accepted before: the variable
#: never listed more GPUs than torch sees)
WRONG_ANSWERS[1] += (
    (
        "import os\n\n\ndef try_gpu(i=0):\n"
        "    acc = torch.accelerator.current_accelerator(check_available=True)\n"
        "    if acc is None or i < 0:\n"
        '        return torch.device("cpu")\n'
        '    cvd = os.environ.get("CUDA_VISIBLE_DEVICES")\n'
        '    n = len(cvd.split(",")) if (acc.type == "cuda" and cvd) else torch.accelerator.device_count()\n'
        '    return torch.device(acc.type, i) if i < n else torch.device("cpu")',
        "on one GPU, and a job script's CUDA_VISIBLE_DEVICES=0,1 (torch sees one), try_gpu(1) returned cuda:1; "
        "expected cpu",
    ),
)
WRONG_ANSWERS[2] += (
    (
        "import os\n\n\ndef try_all_gpus():\n"
        "    acc = torch.accelerator.current_accelerator(check_available=True)\n"
        "    if acc is None:\n"
        '        return [torch.device("cpu")]\n'
        '    cvd = os.environ.get("CUDA_VISIBLE_DEVICES")\n'
        '    n = len(cvd.split(",")) if (acc.type == "cuda" and cvd) else torch.accelerator.device_count()\n'
        "    return [torch.device(acc.type, i) for i in range(n)]",
        "on one GPU, and a job script's CUDA_VISIBLE_DEVICES=0,1 (torch sees one), try_all_gpus() returned "
        "[cuda:0, cuda:1]",
    ),
)
#: Round 14: one CPU left for the system: told before that it returned OMP_NUM_THREADS, which it never read (the two
#: agree where two CPUs are allowed)
WRONG_ANSWERS[3] += (
    (
        "def count_usable_cpus():\n    return max(1, len(os.sched_getaffinity(0)) - 1)",
        "count_usable_cpus() returned 1; expected 2",
    ),
)
