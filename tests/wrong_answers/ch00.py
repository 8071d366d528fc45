"""Chapter 00's typical wrong answers, by question number (see the package's docstring)."""

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
        # torch.get_device_module() taken for the usable accelerator's: where none is usable torch 2.10 answers
        # torch.cpu, which is always available (accepted before: the pretend machines answered as 2.15 does)
        (
            "def pick_device():\n"
            "    acc = torch.accelerator.current_accelerator()\n"
            "    if acc is not None and torch.get_device_module().is_available():\n"
            "        return acc\n"
            '    return torch.device("cpu")',
            "on Kaggle with the accelerator off (a CUDA build of torch without a driver), pick_device() returned cuda",
        ),
        # a CUDA 12 build taken for the only one (accepted before: every pretend CUDA build said 12.8)
        (
            "def pick_device():\n"
            '    if (torch.version.cuda or "").startswith("12") and torch.cuda.is_available():\n'
            '        return torch.device("cuda")\n'
            "    if torch.backends.mps.is_available():\n"
            '        return torch.device("mps")\n'
            '    return torch.device("cpu")',
            "pick_device() returned cpu; the usable device there is cuda",
        ),
        # torch.accelerator.device_count() taken for usable GPUs (accepted before: the pretend machine answered 0 where
        # torch's answers torch.cuda.device_count(), which counts a too-old driver's GPUs through NVML)
        (
            "def pick_device():\n"
            "    if torch.accelerator.device_count() > 0:\n"
            "        return torch.accelerator.current_accelerator()\n"
            '    return torch.device("cpu")',
            "on a CUDA build of torch whose driver is too old for it (nvidia-smi lists a GPU), pick_device() returned "
            "cuda; the usable device there is cpu",
        ),
        (
            'def pick_device():\n    return torch.accelerator.current_accelerator() or torch.device("cpu")',
            "on Kaggle with the accelerator off (a CUDA build of torch without a driver), "
            "pick_device() returned cuda; the usable device there is cpu",
        ),
        (
            'def pick_device():\n    return torch.device("cuda" if torch.cuda.is_available() else "cpu")',
            "on a Mac with Apple's mps, pick_device() returned cpu; the usable device there is mps",
        ),
        (
            'def pick_device():\n    return torch.device("cuda")',
            "on a CPU-only build of torch, pick_device() returned cuda (as on every machine); the usable device there "
            "is cpu",
        ),
        ('pick_device = torch.device("cpu")', "should be a function taking no arguments, but it is a device"),
        # a string is not the torch.device the question asks for (accepted before 2026-11-29)
        (
            "def pick_device():\n"
            '    return torch.accelerator.current_accelerator() if torch.accelerator.is_available() else "cpu"',
            "expected pick_device() to return a torch.device, but got a str: 'cpu'",
        ),
        # an index past the last GPU (accepted before: only the kind was compared)
        (
            "def pick_device():\n"
            "    accelerator = torch.accelerator.current_accelerator(check_available=True)\n"
            "    if accelerator is None:\n"
            '        return torch.device("cpu")\n'
            "    return torch.device(accelerator.type, torch.accelerator.device_count())",
            "on a machine with one CUDA GPU, pick_device() returned cuda:1; the usable device there is cuda",
        ),
        # asks torch once, when the cell runs, instead of each time it is called
        (
            'usable = torch.accelerator.current_accelerator(check_available=True) or torch.device("cpu")\n'
            "\n\n"
            "def pick_device():\n"
            "    return usable",
            "on a machine with one CUDA GPU, pick_device() returned cpu (as on every machine); the usable device "
            "there is cuda",
        ),
        # an mps build taken for a usable GPU (accepted before: no stand-in had mps built but not usable)
        (
            "def pick_device():\n"
            "    if torch.cuda.is_available():\n"
            '        return torch.device("cuda")\n'
            "    if torch.backends.mps.is_built():\n"
            '        return torch.device("mps")\n'
            '    return torch.device("cpu")',
            "on an mps build of torch on a Mac that cannot use mps, pick_device() returned mps; the usable device "
            "there is cpu",
        ),
        # a bare index is a device of the accelerator torch was built for, usable or not (told before that a
        # one-GPU machine got cpu: the stand-in's torch.device(0) raised as on the CPU-only build)
        (
            "def pick_device():\n"
            "    try:\n"
            "        return torch.device(0)\n"
            "    except RuntimeError:\n"
            '        return torch.device("cpu")',
            "on Kaggle with the accelerator off (a CUDA build of torch without a driver), "
            "pick_device() returned cuda:0; the usable device there is cpu",
        ),
        # the current CUDA device's number, which raises where torch has no CUDA (told before: "ran CUDA code"); the
        # line of theirs that raised is named
        (
            "def pick_device():\n    return torch.cuda.current_device()",
            "on a CPU-only build of torch, pick_device() raised AssertionError (line 2 of your code): Torch not "
            "compiled with CUDA enabled",
        ),
        # the number, not a torch.device
        (
            "def pick_device():\n"
            "    if torch.cuda.is_available():\n"
            "        return torch.cuda.current_device()\n"
            '    return torch.device("cpu")',
            "expected pick_device() to return a torch.device, but got an int: 0",
        ),
        # runs CUDA code to find out, catching what a driverless build raises but not what a CPU-only one does
        (
            "def pick_device():\n"
            "    try:\n"
            '        torch.zeros(1, device="cuda")\n'
            '        return torch.device("cuda")\n'
            "    except RuntimeError:\n"
            '        return torch.device("cpu")',
            "on a CPU-only build of torch, pick_device() raised AssertionError (line 3 of your code): Torch not "
            "compiled with CUDA enabled",
        ),
        # the words of the error a query that starts CUDA raises (round 12: accepted before)
        (
            "def pick_device():\n"
            "    acc = torch.accelerator.current_accelerator()\n"
            "    if acc is None:\n"
            '        return torch.device("cpu")\n'
            '    if acc.type == "cuda":\n'
            "        try:\n"
            "            torch.cuda.current_device()\n"
            "        except RuntimeError as e:\n"
            '            if "NVIDIA driver" in str(e) or "No CUDA GPUs" in str(e):\n'
            '                return torch.device("cpu")\n'
            '        return torch.device("cuda")\n'
            '    return acc if torch.backends.mps.is_available() else torch.device("cpu")',
            "on Kaggle with the accelerator off (a CUDA build of torch without a driver), pick_device() started CUDA, "
            "which fails there, and went on",
        ),
        # a CUDA_VISIBLE_DEVICES that names GPUs taken for usable ones (round 12: accepted before)
        (
            "import os\n\n\ndef pick_device():\n"
            '    visible = os.environ.get("CUDA_VISIBLE_DEVICES")\n'
            '    if torch.version.cuda and visible not in (None, "", "-1"):\n'
            '        return torch.device("cuda")\n'
            "    acc = torch.accelerator.current_accelerator(check_available=True)\n"
            '    return acc if acc is not None else torch.device("cpu")',
            "on a CUDA build of torch whose driver is too old for it (nvidia-smi lists a GPU), pick_device() returned "
            "cuda; the usable device there is cpu",
        ),
        # runs CUDA code to find out, and catches the error where CUDA fails: decided by an error, not by a query
        (
            "def pick_device():\n"
            "    try:\n"
            '        torch.zeros(1, device="cuda")\n'
            '        return torch.device("cuda")\n'
            "    except Exception:\n"
            '        return torch.device("cpu")',
            "on a CPU-only build of torch, pick_device() started CUDA, which fails there, and went on: decide by "
            "torch's device queries (torch.cuda.is_available(), torch.accelerator...), not by catching CUDA's errors",
        ),
        # nvidia-smi taken as proof that torch can use a GPU (accepted before where no nvidia-smi was installed):
        # it shows only that the driver sees one (the chapter's "What the sources got wrong")
        (
            "import shutil\n"
            "\n\n"
            "def pick_device():\n"
            '    if shutil.which("nvidia-smi") is not None:\n'
            '        return torch.device("cuda")\n'
            "    usable = torch.accelerator.current_accelerator(check_available=True)\n"
            '    return usable if usable is not None else torch.device("cpu")',
            "on a CPU-only build of torch on a machine with an NVIDIA GPU (nvidia-smi lists it), pick_device() "
            "returned cuda; the usable device there is cpu",
        ),
        # nvidia-smi and a CUDA build taken for a usable GPU: the driver may see a GPU that torch cannot use (hidden by
        # CUDA_VISIBLE_DEVICES, or a driver too old for the build)
        (
            "import shutil\n"
            "\n\n"
            "def pick_device():\n"
            '    if torch.version.cuda is not None and shutil.which("nvidia-smi"):\n'
            '        return torch.device("cuda")\n'
            "    usable = torch.accelerator.current_accelerator(check_available=True)\n"
            '    return usable if usable is not None else torch.device("cpu")',
            "on a CUDA build of torch whose driver is too old for it (nvidia-smi lists a GPU), pick_device() returned "
            "cuda; the usable device there is cpu",
        ),
        # the same, asking by running nvidia-smi
        (
            "import subprocess\n"
            "\n\n"
            "def pick_device():\n"
            "    try:\n"
            '        subprocess.run(["nvidia-smi", "-L"], check=True, capture_output=True)\n'
            '        return torch.device("cuda")\n'
            "    except (OSError, subprocess.CalledProcessError):\n"
            "        usable = torch.accelerator.current_accelerator(check_available=True)\n"
            '        return usable if usable is not None else torch.device("cpu")',
            "on a CPU-only build of torch on a machine with an NVIDIA GPU (nvidia-smi lists it), pick_device() "
            "returned cuda; the usable device there is cpu",
        ),
        # sets torch's default device to mps on a Mac (crashed every later check on a pretend Mac before: torch's
        # get_default_device() raised where mps cannot be made); it is told, and set back
        (
            "def pick_device():\n"
            "    if torch.backends.mps.is_available():\n"
            '        torch.set_default_device("mps")\n'
            '        return torch.device("mps")\n'
            "    usable = torch.accelerator.current_accelerator(check_available=True)\n"
            '    return usable if usable is not None else torch.device("cpu")',
            "changed torch's default device",
        ),
        # sets torch's default device to the one it picks (accepted before: the last stand-in set it back to cpu)
        (
            "def pick_device():\n"
            "    usable = torch.accelerator.current_accelerator(check_available=True)\n"
            '    device = usable if usable is not None else torch.device("cpu")\n'
            "    torch.set_default_device(device.type)\n"
            "    return device",
            "changed torch's default device",
        ),
        # makes the last GPU the current one, which lasts after the call (judged by the current device after it; the
        # current device is 1 at first where there are two GPUs or more, so the sixteen tell)
        (
            "def pick_device():\n"
            "    if torch.cuda.is_available():\n"
            "        torch.cuda.set_device(torch.cuda.device_count() - 1)\n"
            '        return torch.device("cuda")\n'
            "    usable = torch.accelerator.current_accelerator(check_available=True)\n"
            '    return usable if usable is not None else torch.device("cpu")',
            "on a machine with sixteen CUDA GPUs, pick_device() left the current device at 15 (it was 1): put it back",
        ),
        # makes GPU 0 the current one (accepted before: the current device was 0 on every pretend machine at first)
        (
            "def pick_device():\n"
            "    if torch.cuda.is_available():\n"
            "        torch.cuda.set_device(0)\n"
            '        return torch.device("cuda", 0)\n'
            "    usable = torch.accelerator.current_accelerator(check_available=True)\n"
            '    return usable if usable is not None else torch.device("cpu")',
            "on Kaggle's two T4 GPUs, pick_device() left the current device at 0 (it was 1): put it back",
        ),
        # the GPUs torch.cuda counts taken for usable ones (accepted before): where the driver is too old for the
        # build, torch.cuda.device_count() counts the driver's GPUs (through NVML) while none is usable
        (
            "def pick_device():\n"
            "    if torch.cuda.device_count() > 0:\n"
            '        return torch.device("cuda")\n'
            "    usable = torch.accelerator.current_accelerator(check_available=True)\n"
            '    return usable if usable is not None else torch.device("cpu")',
            "on a CUDA build of torch whose driver is too old for it (nvidia-smi lists a GPU), pick_device() returned "
            "cuda; the usable device there is cpu",
        ),
        # Kaggle's variable (the notebook's cell 4) taken for a GPU (accepted before: no stand-in machine set it)
        (
            "import os\n\n\ndef pick_device():\n"
            '    return torch.device("cuda" if "KAGGLE_KERNEL_RUN_TYPE" in os.environ else "cpu")',
            "on Kaggle with the accelerator off (a CUDA build of torch without a driver), pick_device() returned cuda; "
            "the usable device there is cpu",
        ),
        # asks torch for its default device, which is the CPU on every machine (told before to "ask torch inside the
        # function, each time it is called", which it does): what it returned is named, with the fact only
        (
            "def pick_device():\n    return torch.get_default_device()",
            "on a machine with one CUDA GPU, pick_device() returned cpu (as on every machine); the usable device there "
            "is cuda",
        ),
        # a newer GPU than the question asks for: judged on what it returns (each pretend CUDA GPU is a T4, 7.5; told
        # before that asking the capability "ran CUDA code")
        (
            "def pick_device():\n"
            "    if torch.cuda.is_available() and torch.cuda.get_device_capability() >= (8, 0):\n"
            '        return torch.device("cuda")\n'
            "    usable = torch.accelerator.current_accelerator(check_available=True)\n"
            '    return usable if usable is not None and usable.type != "cuda" else torch.device("cpu")',
            "on a machine with one CUDA GPU, pick_device() returned cpu; the usable device there is cuda",
        ),
        # the kernels torch ships taken for a usable GPU: a CUDA build lists them where none is usable too (torch 2.13
        # and later; 2.10, Kaggle's, lists none there)
        (
            "def pick_device():\n"
            "    if torch.cuda.get_arch_list():\n"
            '        return torch.device("cuda")\n'
            "    usable = torch.accelerator.current_accelerator(check_available=True)\n"
            '    return usable if usable is not None else torch.device("cpu")',
            "on a CUDA build of torch whose driver is too old for it (nvidia-smi lists a GPU), pick_device() returned "
            "cuda; the usable device there is cpu",
        ),
    ),
    2: (
        # a CUDA build other than 12.8 taken for a CPU-only one (accepted before: every pretend CUDA build said 12.8)
        (
            "def cuda_diagnosis():\n"
            '    if torch.version.cuda != "12.8":\n'
            '        return "CPU-only build"\n'
            '    return "GPU ready" if torch.cuda.is_available() else "no usable GPU"',
            "cuda_diagnosis() returned 'CPU-only build'; the answer there is 'GPU ready'",
        ),
        # torch.accelerator.device_count() taken for usable GPUs: it counts a too-old driver's GPUs, like torch.cuda's
        (
            "def cuda_diagnosis():\n"
            "    if torch.version.cuda is None:\n"
            '        return "CPU-only build"\n'
            '    return "GPU ready" if torch.accelerator.device_count() > 0 else "no usable GPU"',
            "on a CUDA build of torch whose driver is too old for it (nvidia-smi lists a GPU), cuda_diagnosis() "
            "returned 'GPU ready'; the answer there is 'no usable GPU'",
        ),
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
        # not exactly one of the three strings (accepted before: the case and the spaces were ignored)
        (
            "def cuda_diagnosis():\n"
            "    if torch.version.cuda is None:\n"
            '        return "CPU-only build"\n'
            '    return "GPU Ready" if torch.cuda.is_available() else "no usable GPU"',
            "on a machine with one CUDA GPU, cuda_diagnosis() returned 'GPU Ready'; the answer there is 'GPU ready'",
        ),
        # decides by which error a CUDA call raises (its type): an error, not a query
        (
            "def cuda_diagnosis():\n"
            "    try:\n"
            "        torch.cuda.init()\n"
            "    except AssertionError:\n"
            '        return "CPU-only build"\n'
            "    except RuntimeError:\n"
            '        return "no usable GPU"\n'
            '    return "GPU ready"',
            "on a CPU-only build of torch, cuda_diagnosis() started CUDA, which fails there, and went on",
        ),
        # decides by the words of the error CUDA's first use raises (round 11), or of a query that starts CUDA (round
        # 12: both accepted before)
        (
            "def cuda_diagnosis():\n"
            "    if torch.cuda.is_available():\n"
            '        return "GPU ready"\n'
            "    try:\n"
            "        torch.zeros(1, device='cuda')\n"
            "    except Exception as error:\n"
            '        return "no usable GPU" if "NVIDIA driver" in str(error) else "CPU-only build"',
            "on a CPU-only build of torch, cuda_diagnosis() started CUDA, which fails there, and went on",
        ),
        (
            "def cuda_diagnosis():\n"
            "    if torch.version.cuda is None:\n"
            '        return "CPU-only build"\n'
            "    try:\n"
            "        torch.cuda.current_device()\n"
            "    except RuntimeError as e:\n"
            '        if "driver" in str(e) or "No CUDA GPUs" in str(e):\n'
            '            return "no usable GPU"\n'
            '    return "GPU ready"',
            "on Kaggle with the accelerator off (a CUDA build of torch without a driver), cuda_diagnosis() started "
            "CUDA, which fails there, and went on",
        ),
        # CUDA_VISIBLE_DEVICES read as the answer (round 12: accepted before, the variable was never set)
        (
            "import os\n\n\ndef cuda_diagnosis():\n"
            '    if os.environ.get("CUDA_VISIBLE_DEVICES", "unset").strip() in ("", "-1"):\n'
            '        return "no usable GPU"\n'
            "    if torch.version.cuda is None:\n"
            '        return "CPU-only build"\n'
            '    return "GPU ready" if torch.cuda.is_available() else "no usable GPU"',
            "on a CPU-only build of torch on a machine with an NVIDIA GPU (nvidia-smi lists it), cuda_diagnosis() "
            "returned 'no usable GPU'; the answer there is 'CPU-only build'",
        ),
        (
            "import os\n\n\ndef cuda_diagnosis():\n"
            "    if torch.version.cuda is None:\n"
            '        return "CPU-only build"\n'
            '    if os.environ.get("CUDA_VISIBLE_DEVICES", "").strip() not in ("", "-1"):\n'
            '        return "GPU ready"\n'
            '    return "GPU ready" if torch.cuda.is_available() else "no usable GPU"',
            "on a CUDA build of torch whose driver is too old for it (nvidia-smi lists a GPU), cuda_diagnosis() "
            "returned 'GPU ready'; the answer there is 'no usable GPU'",
        ),
        # asks for any accelerator first: a Mac's torch has no CUDA, a CPU-only build by section 1's table
        # (accepted before: the Mac was not tried)
        (
            "def cuda_diagnosis():\n"
            "    if torch.accelerator.is_available():\n"
            '        return "GPU ready"\n'
            "    if torch.version.cuda is None:\n"
            '        return "CPU-only build"\n'
            '    return "no usable GPU"',
            "on a Mac with Apple's mps, cuda_diagnosis() returned 'GPU ready'; the answer there is 'CPU-only build' "
            "(torch.version.cuda is None there: section 1's table)",
        ),
        # built for and usable now of any accelerator, not CUDA's
        (
            "def cuda_diagnosis():\n"
            "    if torch.accelerator.current_accelerator() is None:\n"
            '        return "CPU-only build"\n'
            "    if torch.accelerator.current_accelerator(check_available=True) is None:\n"
            '        return "no usable GPU"\n'
            '    return "GPU ready"',
            "on an mps build of torch on a Mac that cannot use mps, cuda_diagnosis() returned 'no usable GPU'; the "
            "answer there is 'CPU-only build'",
        ),
        # asks torch once, when the cell runs
        (
            'found = "CPU-only build" if torch.version.cuda is None else "no usable GPU"\n'
            "\n\n"
            "def cuda_diagnosis():\n"
            "    return found",
            "(as on every machine); the answer there is",  # what it returns depends on the torch it ran in
        ),
        # nvidia-smi taken for a GPU torch can use
        (
            "import shutil\n"
            "\n\n"
            "def cuda_diagnosis():\n"
            '    if shutil.which("nvidia-smi") is None:\n'
            '        return "CPU-only build" if torch.version.cuda is None else "no usable GPU"\n'
            '    return "GPU ready"',
            "on a CPU-only build of torch on a machine with an NVIDIA GPU (nvidia-smi lists it), cuda_diagnosis() "
            "returned 'GPU ready'; the answer there is 'CPU-only build'",
        ),
        # Kaggle's variable (the notebook's cell 4) taken for a GPU (accepted before: no stand-in machine set it)
        (
            "import os\n\n\ndef cuda_diagnosis():\n"
            '    if "KAGGLE_KERNEL_RUN_TYPE" in os.environ:\n'
            '        return "GPU ready"\n'
            '    return "CPU-only build" if torch.version.cuda is None else "no usable GPU"',
            "on Kaggle with the accelerator off (a CUDA build of torch without a driver), cuda_diagnosis() returned "
            "'GPU ready'; the answer there is 'no usable GPU'",
        ),
        # the GPUs torch.cuda counts taken for usable ones (accepted before): a driver too old for the build lists
        # its GPUs, and torch.cuda.device_count() counts them (through NVML) while none is usable
        (
            "def cuda_diagnosis():\n"
            "    if not torch.backends.cuda.is_built():\n"
            '        return "CPU-only build"\n'
            '    return ("no usable GPU", "GPU ready")[torch.cuda.device_count() > 0]',
            "on a CUDA build of torch whose driver is too old for it (nvidia-smi lists a GPU), cuda_diagnosis() "
            "returned 'GPU ready'; the answer there is 'no usable GPU'",
        ),
        # an empty list of kernels taken for a CPU-only build (accepted before: every pretend CUDA build listed them);
        # torch 2.10, Kaggle's, lists none on a CUDA build wherever no GPU is usable
        (
            "def cuda_diagnosis():\n"
            "    if not torch.cuda.get_arch_list():\n"
            '        return "CPU-only build"\n'
            '    return "GPU ready" if torch.cuda.is_available() else "no usable GPU"',
            "on Kaggle with the accelerator off (a CUDA build of torch without a driver), cuda_diagnosis() returned "
            "'CPU-only build'; the answer there is 'no usable GPU'",
        ),
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
        "def pick_device():\n"
        "    if torch.cuda.is_available():\n"
        '        return torch.device("cuda")\n'
        "    if torch.backends.mps.is_available():\n"
        '        return torch.device("mps")\n'
        '    return torch.device("cpu")',
        # asks whether each backend is built first (rejected before: a pretend Mac's mps was not built)
        "def pick_device():\n"
        "    if torch.backends.cuda.is_built() and torch.cuda.is_available():\n"
        '        return torch.device("cuda", 0)\n'
        "    if torch.backends.mps.is_built() and torch.mps.is_available():\n"
        '        return torch.device("mps")\n'
        '    return torch.device("cpu")',
        "def pick_device():\n"
        '    return torch.device(torch.accelerator.current_accelerator(check_available=True) or "cpu")',
        # the CPU with its index, as the GPUs have theirs (rejected before: only a bare cpu was taken)
        'def pick_device():\n    return torch.accelerator.current_accelerator(True) or torch.device("cpu", 0)',
        # the current device's index (rejected before: the stand-ins raised, as this CPU-only torch does)
        "def pick_device():\n"
        "    acc = torch.accelerator.current_accelerator(check_available=True)\n"
        "    if acc is None:\n"
        '        return torch.device("cpu")\n'
        "    return torch.device(acc.type, torch.accelerator.current_device_index())",
        # rejected before as "ran CUDA code": current_device() is a query that answers on a usable GPU
        "def pick_device():\n"
        "    if torch.cuda.is_available():\n"
        '        return torch.device("cuda", torch.cuda.current_device())\n'
        "    if torch.backends.mps.is_available():\n"
        '        return torch.device("mps")\n'
        '    return torch.device("cpu")',
        # a GPU new enough for this build's kernels (rejected before as "ran CUDA code": the pretend machines did not
        # answer capability queries; each pretend CUDA GPU is a T4, 7.5, and a CUDA build lists a wheel's kernels)
        "def pick_device():\n"
        "    if torch.cuda.is_available() and torch.cuda.get_device_capability(0) >= (7, 0):\n"
        '        return torch.device("cuda")\n'
        "    if torch.backends.mps.is_available():\n"
        '        return torch.device("mps")\n'
        '    return torch.device("cpu")',
        "def pick_device():\n"
        "    if torch.cuda.is_available():\n"
        "        major, minor = torch.cuda.get_device_capability()\n"
        '        if f"sm_{major}{minor}" in torch.cuda.get_arch_list():\n'
        '            return torch.device("cuda", 0)\n'
        "    usable = torch.accelerator.current_accelerator(check_available=True)\n"
        '    return usable if usable is not None and usable.type != "cuda" else torch.device("cpu")',
    ),
    2: (
        "def cuda_diagnosis():\n"
        "    if not torch.backends.cuda.is_built():\n"
        '        return "CPU-only build"\n'
        '    return ("no usable GPU", "GPU ready")[torch.cuda.is_available() and torch.cuda.device_count() > 0]',
        # usable first, then the build: section 1's table in the other order
        "def cuda_diagnosis():\n"
        "    if torch.cuda.is_available():\n"
        '        return "GPU ready"\n'
        '    return "CPU-only build" if torch.version.cuda is None else "no usable GPU"',
        # cuDNN as the build test: a CUDA wheel ships it, driver or not (rejected before: the stand-ins said False)
        "def cuda_diagnosis():\n"
        "    if not torch.backends.cudnn.is_available():\n"
        '        return "CPU-only build"\n'
        '    return "GPU ready" if torch.cuda.is_available() else "no usable GPU"',
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
