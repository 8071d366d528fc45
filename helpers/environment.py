"""What machine is this, and what stops it from using its GPUs?

`describe_machine()` reads the real machine into a plain `Machine` record; `diagnose(machine)` is a pure
function of that record, so tests can feed it any machine. `python -m helpers doctor` prints the `report`."""

from __future__ import annotations

import functools
import os
import platform
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Literal, TypeVar

import torch

from .devices import HOW_TO_GET_A_GPU, accelerator_type, cuda_gpu_count

Level = Literal["ok", "note", "problem"]
T = TypeVar("T")


@dataclass(frozen=True)
class Gpu:
    """One GPU as torch sees it."""

    index: int
    name: str
    total_memory_bytes: int
    capability: tuple[int, int]
    multiprocessors: int

    @property
    def sm(self) -> str:
        """The capability as CUDA's architecture name, e.g. `sm_75` for a T4."""
        return f"sm_{self.capability[0]}{self.capability[1]}"


@dataclass(frozen=True)
class Machine:
    """Everything the diagnosis needs, as plain values (so a test can describe any machine)."""

    torch_version: str
    cuda_build: str | None  # torch.version.cuda: None on a CPU-only build
    accelerator: str | None  # "cuda", "mps", ... or None
    gpus: tuple[Gpu, ...] = ()
    arch_list: tuple[str, ...] = ()  # torch.cuda.get_arch_list(): the kernels this build ships
    cuda_visible_devices: str | None = None  # as set; which GPUs it leaves visible is CUDA's to decide
    driver_gpus: tuple[str, ...] | None = None  # GPU names from NVML or nvidia-smi; None: no driver
    driver_cuda: str | None = None  # the newest CUDA the driver supports ("12.8"), from NVML; None: unknown
    driver_fault: str | None = None  # NVML's error class when its library is there but NVML cannot start
    cuda_error: str = ""  # what CUDA raised when it opened the GPUs torch counted
    cpus_usable: int = 1
    cpus_machine: int = 1
    torch_threads: int = 1
    on_kaggle: bool = False
    python_version: str = field(default_factory=lambda: platform.python_version())

    @property
    def driver_gpu_count(self) -> int | None:
        """How many GPUs the driver lists, whatever CUDA_VISIBLE_DEVICES says; None where no driver answers."""
        return None if self.driver_gpus is None else len(self.driver_gpus)


@dataclass(frozen=True)
class Finding:
    """One line of the diagnosis: how serious, what was found, and what to do about it."""

    level: Level
    message: str
    fix: str = ""


def usable_cpu_count() -> int:
    """CPUs this process may run on (its affinity), which can be fewer than the machine has."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def running_on_kaggle() -> bool:
    """True inside a Kaggle notebook (Kaggle sets KAGGLE_KERNEL_RUN_TYPE and mounts /kaggle/input)."""
    return "KAGGLE_KERNEL_RUN_TYPE" in os.environ or os.path.isdir("/kaggle/input")


def driver_gpu_names() -> tuple[str, ...] | None:
    """GPU names the NVIDIA driver lists (NVML, else nvidia-smi), whatever CUDA_VISIBLE_DEVICES says; or None."""
    names, _ = nvml(lambda pynvml: tuple(_nvml_name(pynvml, i) for i in range(pynvml.nvmlDeviceGetCount())))
    return names if names is not None else _nvidia_smi_gpu_names()


def nvml(read: Callable[[Any], T]) -> tuple[T | None, str]:
    """`(read(pynvml), "")` with NVML started and shut down again, or `(None, why)`: NVML talks to the driver
    itself, with no CUDA context and no regard for CUDA_VISIBLE_DEVICES (chapters 00, 07, 10)."""
    try:
        import pynvml  # from the nvidia-ml-py package
    except ImportError:
        return None, "the nvidia-ml-py package (module pynvml) is not installed: pip install nvidia-ml-py"
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as exc:
        return None, f"NVML could not start ({exc})"
    try:
        return read(pynvml), ""
    except pynvml.NVMLError as exc:
        return None, f"NVML could not answer ({exc})"
    finally:
        pynvml.nvmlShutdown()


def _driver_fault() -> str | None:
    """The class of NVML's error when its library is there but NVML cannot start ("NVMLError_LibRmVersionMismatch":
    a driver updated without a reboot); None when NVML starts, or no driver runs (no library, or no module loaded)."""
    try:
        import pynvml  # from the nvidia-ml-py package
    except ImportError:
        return None
    try:
        pynvml.nvmlInit()
    except (pynvml.NVMLError_LibraryNotFound, pynvml.NVMLError_DriverNotLoaded):
        return None
    except pynvml.NVMLError as exc:
        return type(exc).__name__
    pynvml.nvmlShutdown()
    return None


#: What to do about each way NVML can fail to start with a driver present (the rest: reinstall the driver).
_FAULT_FIXES = {
    "NVMLError_LibRmVersionMismatch": "The driver was updated and the old one still runs: reboot.",
    "NVMLError_NoPermission": "This user may not open the GPU devices: ask for access to /dev/nvidia* "
    "(often the 'video' group).",
}
_OTHER_FAULT_FIX = (
    "nvidia-smi prints the driver's own error. In a container that lost its GPUs (the host reloaded its "
    "services), recreate the container; otherwise reinstall the driver."
)


def _driver_cuda(pynvml: Any) -> str:
    """The newest CUDA the driver supports, "12.8" (NVML answers 12080)."""
    version = pynvml.nvmlSystemGetCudaDriverVersion()
    return f"{version // 1000}.{version % 1000 // 10}"


#: The name the doctor gives a GPU NVML counts but this process may not query (a cluster job's share).
NO_ACCESS = "(no access)"


def _nvml_name(pynvml: Any, index: int) -> str:
    """GPU `index`'s name; a GPU this process may not query (a cluster job's cgroup) still counts."""
    try:
        name = pynvml.nvmlDeviceGetName(pynvml.nvmlDeviceGetHandleByIndex(index))
    except pynvml.NVMLError_NoPermission:
        return NO_ACCESS
    except pynvml.NVMLError as exc:  # a fault (lost, unpowered), not another job's share
        return f"GPU {index} (NVML: {exc})"
    return name.decode() if isinstance(name, bytes) else name  # older releases return bytes


def _nvidia_smi_gpu_names() -> tuple[str, ...] | None:
    """The GPU names `nvidia-smi` lists, or None where there is no nvidia-smi or it reaches no driver."""
    command = ["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"]
    try:  # OSError: there is no nvidia-smi; an exit status other than 0: it reached no driver
        done = subprocess.run(command, capture_output=True, text=True, timeout=30, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return tuple(line.strip() for line in done.stdout.splitlines() if line.strip())


def describe_machine() -> Machine:
    """Read this machine and torch build into a `Machine` record."""
    props, cuda_error = [], ""
    try:  # CUDA first: until it starts torch may count GPUs NVML lists that this process cannot open
        if torch.cuda.is_available():
            torch.cuda.init()
        props = [torch.cuda.get_device_properties(i) for i in range(cuda_gpu_count())]
    except Exception as exc:  # torch 2.10 wraps the error in DeferredCudaCallError, an Exception
        cuda_error = f"{type(exc).__name__}: {(str(exc).strip().splitlines() or [''])[0]}"  # not torch's stack
    gpus = (Gpu(i, p.name, p.total_memory, (p.major, p.minor), p.multi_processor_count) for i, p in enumerate(props))
    return Machine(
        torch_version=torch.__version__,
        cuda_build=torch.version.cuda,
        accelerator=None if cuda_error else accelerator_type(),  # torch may report CUDA that cannot start
        gpus=tuple(gpus),
        arch_list=tuple(torch.cuda.get_arch_list()) if torch.version.cuda else (),
        cuda_visible_devices=os.environ.get("CUDA_VISIBLE_DEVICES"),
        driver_gpus=driver_gpu_names(),
        driver_cuda=nvml(_driver_cuda)[0],
        driver_fault=_driver_fault(),
        cuda_error=cuda_error,
        cpus_usable=usable_cpu_count(),
        cpus_machine=os.cpu_count() or 1,
        torch_threads=torch.get_num_threads(),
        on_kaggle=running_on_kaggle(),
    )


def split_arch(arch: str) -> tuple[str, int, str] | None:
    """Split `sm_75` into ("sm", 75, ""), `compute_90a` into ("compute", 90, "a"), `sm_100f` into ("sm", 100, "f")."""
    m = re.fullmatch(r"(sm|compute)_(\d+)([af]?)", arch)
    return (m.group(1), int(m.group(2)), m.group(3)) if m else None


def build_supports(capability: tuple[int, int], arch_list: tuple[str, ...]) -> bool:
    """Whether a build shipping `arch_list` runs on a GPU of `capability`: `sm_XY`/`sm_XYf` on its major and an
    equal or lower minor, PTX `compute_XY` on any equal or higher capability, `sm_90a`-style on exactly that one."""
    major, minor = capability
    target = major * 10 + minor
    for kind, number, letter in filter(None, map(split_arch, arch_list)):
        if letter == "a":
            if number == target:
                return True
        elif kind == "sm" and number // 10 == major and number % 10 <= minor:
            return True
        elif kind == "compute" and number <= target:
            return True
    return False


def echo_value(value: str, limit: int = 60) -> str:
    """`value` quoted for a message; past `limit` characters (a variable can hold thousands), its start and length."""
    if len(value) <= limit:
        return repr(value)
    return f"{value[:limit]!r}… ({len(value):,} characters)"


def _gpus_word(n: int) -> str:
    """`1 GPU`, `2 GPUs`."""
    return f"{n} GPU" if n == 1 else f"{n} GPUs"


def _older(driver: str | None, build: str | None) -> bool:
    """Whether a driver for CUDA `driver` ("12.8") is too old for a build of CUDA `build` ("13.0"): an older
    major version. Within one major version a driver runs newer builds (NVIDIA's "minor version
    compatibility", docs.nvidia.com/deploy/cuda-compatibility). False when either is unknown."""
    if not driver or not build:
        return False
    return int(driver.split(".")[0]) < int(build.split(".")[0])


def _name_counts(names: tuple[str, ...]) -> str:
    """GPU names with their counts, e.g. `2× Tesla T4` (eight GPUs stay one short phrase)."""
    return ", ".join(f"{names.count(name)}× {name}" for name in sorted(set(names)))


def diagnose(m: Machine) -> list[Finding]:
    """Findings about a machine, problems first; pure. Which GPUs CUDA_VISIBLE_DEVICES leaves visible is CUDA's
    to decide, so it compares what the driver lists with what torch can use, naming the variable when set."""
    findings: list[Finding] = []

    def add(level: Level, message: str, fix: str = "") -> None:
        findings.append(Finding(level, message, fix))

    listed = m.driver_gpu_count or 0
    variable = None if m.cuda_visible_devices is None else f"CUDA_VISIBLE_DEVICES={echo_value(m.cuda_visible_devices)}"
    them = "it" if listed == 1 else "them"
    barred = (m.driver_gpus or ()).count(NO_ACCESS)  # GPUs NVML counts that this process may not open
    none = "torch cannot use " + them + " (torch.cuda.is_available() is False)"
    major = (m.cuda_build or "").split(".")[0]
    if m.driver_cuda and not _older(m.driver_cuda, m.cuda_build):
        driver_check = (
            "read the 'CUDA initialization' warning, if torch printed one where it first looked for a GPU (a "
            f"chapter's set-up cell): it names the reason; the driver, CUDA up to {m.driver_cuda}, is new enough"
        )
    else:
        driver_check = (
            f"check that the driver supports CUDA {major}.x or newer (nvidia-smi shows the newest it supports)"
        )

    if m.cuda_error:
        add(
            "problem",
            f"CUDA could not start ({m.cuda_error}). Torch may count the GPUs NVML lists (every one, when "
            "CUDA_VISIBLE_DEVICES is not set), more than a process given only some of them (a cluster job's share) "
            "can open.",
            "Before Python starts, set CUDA_VISIBLE_DEVICES to this job's GPUs by UUID (nvidia-smi -L lists them; "
            "a scheduler such as Slurm sets it when asked for GPUs); elsewhere nvidia-smi and the error name the GPU.",
        )
    elif m.gpus:
        names = ", ".join(sorted({g.name for g in m.gpus}))
        add("ok", f"{len(m.gpus)} CUDA {'GPU' if len(m.gpus) == 1 else 'GPUs'} visible to torch: {names}.")
        for g in m.gpus:
            if m.arch_list and not build_supports(g.capability, m.arch_list):
                built = [(n // 10, n % 10) for _, n, _ in filter(None, map(split_arch, m.arch_list))]
                old = g.capability < min(built, default=(0, 0))  # below every architecture it ships
                add(
                    "problem",
                    f"GPU {g.index} ({g.name}, {g.sm}) is {'too old for' if old else 'not covered by'} this torch "
                    f"build, which ships kernels for {', '.join(m.arch_list)}. The first kernel it runs fails "
                    "with 'no kernel image is available for execution on the device'.",
                    "On Kaggle choose Settings → Accelerator → GPU T4 ×2 (sm_75). Locally, install a "
                    f"torch build whose torch.cuda.get_arch_list() includes {g.sm}"
                    + (", or use a newer GPU." if old else " (a newer release, or one for a newer CUDA)."),
                )
    elif m.accelerator and m.accelerator != "cuda":
        add("ok", f"Accelerator found: {m.accelerator}. CUDA-only cells will use their stand-ins.")
    elif listed and barred == listed:
        add(
            "note",
            f"The NVIDIA driver lists {_gpus_word(listed)}, none of which this process may access (another "
            "job's share): chapters run their CPU stand-ins.",
        )
    elif m.cuda_build is None and listed:
        add(
            "problem",
            f"The NVIDIA driver lists {_gpus_word(listed)}, but this torch ({m.torch_version}) "
            f"was built without CUDA, so it cannot use {them}.",
            "Install a CUDA build of torch (pick the CUDA version at pytorch.org/get-started) in this environment.",
        )
    elif listed and _older(m.driver_cuda, m.cuda_build):
        add(
            "problem",
            f"The NVIDIA driver lists {_gpus_word(listed)} but supports CUDA up to {m.driver_cuda}, older than "
            f"this torch's CUDA {m.cuda_build}, so torch cannot use {them}.",
            f"Update the NVIDIA driver, or install a torch build for CUDA {m.driver_cuda.split('.')[0]}.x if the "
            "release you need has one (pytorch.org/get-started lists each release's CUDA versions)."
            + (f" {variable} is set too: unset it if the GPUs stay hidden." if variable else ""),
        )
    elif listed and variable:
        add(
            "problem",
            f"The NVIDIA driver lists {_gpus_word(listed)} and {none}, with {variable}: the variable may hide {them}.",
            "Unset CUDA_VISIBLE_DEVICES before Python starts (`unset CUDA_VISIBLE_DEVICES` in the shell that "
            f"starts Python or Jupyter) and restart Python; if torch still cannot use {them}, {driver_check}.",
        )
    elif listed:
        add("problem", f"The NVIDIA driver lists {_gpus_word(listed)} but {none}.", f"To find out why: {driver_check}.")
    elif m.on_kaggle:
        raises = (
            " Its torch is a CUDA build, so code that asks for 'cuda' raises 'Found no NVIDIA driver on your system'."
        )
        add(
            "note",
            "This Kaggle session has no GPU: the accelerator is off." + (raises if m.cuda_build else ""),
            "Settings → Accelerator → GPU T4 ×2, then run the notebook again (GPU hours are a weekly quota).",
        )
    elif m.driver_gpus == ():
        add("note", "The NVIDIA driver answers but lists no GPU. Chapters run their CPU stand-ins.", HOW_TO_GET_A_GPU)
    elif m.driver_fault:
        add(
            "problem",
            f"An NVIDIA driver is installed, but NVML cannot talk to it ({m.driver_fault}).",
            _FAULT_FIXES.get(m.driver_fault, _OTHER_FAULT_FIX),
        )
    elif m.cuda_build is not None:  # no NVML and no nvidia-smi answer: no driver
        add(
            "note",
            f"This torch is a CUDA {m.cuda_build} build, but no NVIDIA driver runs here: the first CUDA "
            "operation raises 'Found no NVIDIA driver on your system'. Chapters run their CPU stand-ins.",
            "With an NVIDIA GPU, install its driver (nvidia-smi then works). Without one, a CPU build of torch "
            "is smaller (pytorch.org/get-started). On Kaggle: Settings → Accelerator → GPU T4 ×2.",
        )
    else:
        add("note", "No GPU here: chapters run their CPU stand-ins.", HOW_TO_GET_A_GPU)

    if m.gpus and len(m.gpus) < listed:  # on a cluster or a shared machine, the rest is others' share: no fix
        seen = f"torch can use {len(m.gpus)} of the {_gpus_word(listed)} the NVIDIA driver lists"
        if barred:
            seen += f" ({barred} of them this process may not access: a job's share)"
        add("note", f"{seen}." if barred or not variable else f"{seen}: {variable} may hide the rest.")
    if m.torch_threads > m.cpus_usable:
        add(
            "note",
            f"torch uses {m.torch_threads} threads but this process may run on {m.cpus_usable} CPUs, "
            "so threads compete.",
            f"torch.set_num_threads({m.cpus_usable})",
        )
    return sorted(findings, key=lambda f: ("problem", "note", "ok").index(f.level))


def one_line(m: Machine) -> str:
    """A one-line summary printed by every chapter's setup cell (the runner reads `Running on:`)."""
    where = "no GPU: CUDA could not start (python -m helpers doctor)" if m.cuda_error else m.accelerator or "CPU only"
    if m.gpus:
        where = f"{len(m.gpus)}× {' + '.join(sorted({g.name for g in m.gpus}))}"
    cuda = f"CUDA {m.cuda_build}" if m.cuda_build else "CPU build"
    host = "Kaggle" if m.on_kaggle else "local"
    return (
        f"Running on: {where} | torch {m.torch_version} ({cuda}) | {m.cpus_usable} CPUs | "
        f"Python {m.python_version} | {host}"
    )


@functools.lru_cache(maxsize=1)
def _this_machine() -> Machine:
    """This process's machine, described once: it does not change, and nvidia-smi is too slow for every point."""
    return describe_machine()


def stamp(m: Machine | None = None) -> str:
    """The label every measured figure carries: hardware, torch and CUDA versions, date."""
    m = m or _this_machine()
    names = ", ".join(sorted({g.name for g in m.gpus}))
    hardware = names or f"CPU ({platform.processor() or platform.machine()}, {m.cpus_usable} cores)"
    cuda = f", CUDA {m.cuda_build}" if m.cuda_build else ""
    return f"measured on {hardware} · torch {m.torch_version}{cuda} · {date.today().isoformat()}"


def report(m: Machine) -> str:
    """A readable multi-line report: the machine, then the diagnosis with fixes."""
    lines = [
        "Environment report",
        f"  Python {m.python_version} on {sys.platform}; torch {m.torch_version}",
        f"  CUDA in this torch build: {m.cuda_build or 'none (CPU-only build)'}",
        f"  usable accelerator: {m.accelerator or 'none'}",
    ]
    if m.arch_list:
        lines.append(f"  kernels shipped for: {', '.join(m.arch_list)}")
    for g in m.gpus:
        lines.append(
            f"  GPU {g.index}: {g.name}, {g.total_memory_bytes / 2**30:.1f} GiB, compute capability "
            f"{g.capability[0]}.{g.capability[1]} ({g.sm}), {g.multiprocessors} multiprocessors"
        )
    visible_value = "(not set)" if m.cuda_visible_devices is None else echo_value(m.cuda_visible_devices)
    listed = "no driver found (NVML, nvidia-smi)" if m.driver_gpus is None else _name_counts(m.driver_gpus) or "none"
    if m.driver_fault:
        listed = f"none: NVML cannot start ({m.driver_fault})"
    opened = f"{len(m.gpus)} (torch.cuda.is_available(): {bool(m.gpus)})"
    opened = "none, CUDA could not start" if m.cuda_error else opened
    if m.driver_cuda:
        listed += f" (the driver supports CUDA {m.driver_cuda}: it runs CUDA {m.driver_cuda.split('.')[0]}.x builds)"
    lines += [
        f"  GPUs the NVIDIA driver lists: {listed}",
        f"  CUDA GPUs torch can open: {opened}",
        f"  CUDA_VISIBLE_DEVICES: {visible_value}",
        f"  CPUs: {m.cpus_usable} usable by this process, {m.cpus_machine} in the machine; "
        f"torch uses {m.torch_threads} threads",
        f"  on Kaggle: {'yes' if m.on_kaggle else 'no'}",
        "Diagnosis",
    ]
    marks = {"ok": "ok     ", "note": "note   ", "problem": "PROBLEM"}
    for f in diagnose(m):
        lines.append(f"  {marks[f.level]} {f.message}")
        if f.fix:
            lines.append(f"          fix: {f.fix}")
    lines.append("torch's environment summary, as its bug reports ask for: python -m torch.utils.collect_env")
    return "\n".join(lines)
