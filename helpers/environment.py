"""What machine is this, and what stops it from using its GPUs?

Two halves on purpose:

* `describe_machine()` reads the real machine into a plain `Machine` record.
* `diagnose(machine)` is a pure function of that record. Tests feed it a P100, two T4s, no GPU,
  a CPU-only torch build and a hidden GPU, all on a CPU-only machine.

`python -m helpers doctor` prints `report(describe_machine())`.
"""

from __future__ import annotations

import functools
import os
import platform
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field, replace
from datetime import date
from typing import Literal

from .devices import HOW_TO_GET_A_GPU

Level = Literal["ok", "note", "problem"]


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
    cuda_visible_devices: str | None = None
    driver_gpu_count: int | None = None  # GPUs the driver lists (NVML or nvidia-smi); None: no driver
    cpus_usable: int = 1
    cpus_machine: int = 1
    torch_threads: int = 1
    on_kaggle: bool = False
    python_version: str = field(default_factory=lambda: platform.python_version())


@dataclass(frozen=True)
class Finding:
    """One line of the diagnosis: how serious, what was found, and what to do about it."""

    level: Level
    message: str
    fix: str = ""


def usable_cpu_count() -> int:
    """CPUs this process may run on (its affinity), which can be fewer than the machine has."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def running_on_kaggle() -> bool:
    """True inside a Kaggle notebook (Kaggle sets KAGGLE_KERNEL_RUN_TYPE and mounts /kaggle/input)."""
    return "KAGGLE_KERNEL_RUN_TYPE" in os.environ or os.path.isdir("/kaggle/input")


def _driver_gpu_count() -> int | None:
    """Count the GPUs the NVIDIA driver knows (NVML, else `nvidia-smi -L`), ignoring CUDA_VISIBLE_DEVICES.

    None where neither answers (no NVIDIA driver). NVML comes first: it needs no process and is there
    in containers that mount the driver's library without its tools.
    """
    count = _nvml_gpu_count()
    if count is not None:
        return count
    out = nvidia_smi("-L")
    return None if out is None else sum(1 for line in out.splitlines() if line.startswith("GPU "))


def _nvml_gpu_count() -> int | None:
    """The GPU count NVML reports, or None without the nvidia-ml-py package or a driver library to load."""
    try:
        import pynvml  # from the nvidia-ml-py package
    except ImportError:
        return None
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError:
        return None
    try:
        return int(pynvml.nvmlDeviceGetCount())
    except pynvml.NVMLError:
        return None
    finally:
        pynvml.nvmlShutdown()


def nvidia_smi(*args: str, timeout: float = 30) -> str | None:
    """What `nvidia-smi ARGS` prints, a line saying why it could not run, or None where there is no nvidia-smi."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None
    try:
        done = subprocess.run([exe, *args], capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"nvidia-smi could not run: {exc}"
    return done.stdout + done.stderr


def describe_machine() -> Machine:
    """Read this machine and torch build into a `Machine` record."""
    import torch

    from .devices import accelerator_type, cuda_gpu_count

    gpus = []
    for i in range(cuda_gpu_count()):
        props = torch.cuda.get_device_properties(i)
        gpus.append(
            Gpu(
                index=i,
                name=props.name,
                total_memory_bytes=props.total_memory,
                capability=(props.major, props.minor),
                multiprocessors=props.multi_processor_count,
            )
        )
    return Machine(
        torch_version=torch.__version__,
        cuda_build=torch.version.cuda,
        accelerator=accelerator_type(),
        gpus=tuple(gpus),
        arch_list=tuple(torch.cuda.get_arch_list()) if torch.version.cuda else (),
        cuda_visible_devices=os.environ.get("CUDA_VISIBLE_DEVICES"),
        driver_gpu_count=_driver_gpu_count(),
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
    """Whether a torch build that ships `arch_list` has kernels that run on a GPU of `capability`.

    A GPU runs machine code (`sm_XY`, and the family target `sm_XYf`) built for its own major
    version and an equal or lower minor version, and can compile PTX (`compute_XY`) built for any
    equal or lower capability. An architecture-specific target (`sm_90a`, `compute_90a`) runs on
    exactly that capability and no other.
    """
    major, minor = capability
    target = major * 10 + minor
    for arch in arch_list:
        parsed = split_arch(arch)
        if parsed is None:
            continue
        kind, number, letter = parsed
        if letter == "a":
            if number == target:
                return True
        elif kind == "sm" and number // 10 == major and number % 10 <= minor:
            return True
        elif kind == "compute" and number <= target:
            return True
    return False


#: How much of a CUDA_VISIBLE_DEVICES value a message quotes: a value can be thousands of characters.
ECHO_LIMIT = 60
UUID_PREFIXES = ("GPU-", "MIG-")


def echo_value(value: str, limit: int = ECHO_LIMIT) -> str:
    """`value` quoted for a message; past `limit` characters, its start and its length."""
    if len(value) <= limit:
        return repr(value)
    return f"{value[:limit]!r}… ({len(value):,} characters)"


@dataclass(frozen=True)
class VisibleDevices:
    """What CUDA makes of a CUDA_VISIBLE_DEVICES value (see `parse_visible_devices`)."""

    value: str | None
    kind: Literal["all", "index", "GPU-", "MIG-"]  # "all": the variable is not set
    entries: tuple[str, ...] = ()  # the entries CUDA uses, in its order: indices ("0") or UUIDs
    bad: str | None = None  # the entry where CUDA stopped reading, if it stopped before the end
    why: str = ""  # what is wrong with it, in words that follow the entry ("is negative")
    repeated: bool = False  # an entry is listed twice, which hides every GPU

    @property
    def hides_all(self) -> bool:
        """Whether no GPU stays visible, whatever GPUs the machine has."""
        return self.kind != "all" and not self.entries

    def on_machine(self, gpus: int | None) -> VisibleDevices:
        """This reading on a machine with `gpus` GPUs: an index with no GPU stops the list there."""
        if self.kind != "index" or gpus is None:
            return self
        for n, entry in enumerate(self.entries):
            if int(entry) >= gpus:
                why = f"names no GPU (this machine has {'GPU 0 only' if gpus == 1 else f'GPUs 0 to {gpus - 1}'})"
                return replace(self, entries=self.entries[:n], bad=entry, why=why)
        return self

    def visible_count(self, gpus: int | None) -> int | None:
        """How many GPUs CUDA shows on a machine with `gpus` GPUs; None when only the driver knows."""
        seen = self.on_machine(gpus)
        if seen.kind == "all":
            return gpus
        if seen.kind == "index" or not seen.entries:
            return len(seen.entries)
        return None  # UUIDs: which ones match a GPU, only the driver knows


def _leading_index(entry: str) -> int | None:
    """The integer `entry` starts with, as C's strtoul reads it ("1gpu" → 1), or None."""
    m = re.match(r"[+-]?\d+", entry)
    return int(m.group()) if m else None


def parse_visible_devices(value: str | None) -> VisibleDevices:
    """Read CUDA_VISIBLE_DEVICES as CUDA does.

    CUDA's rules (CUDA C++ Programming Guide, "CUDA Environment Variables"): a comma-separated
    list of GPU indices or UUIDs (`GPU-<uuid>`, a unique prefix allowed; `MIG-<…>` for MIG
    instances); the GPUs listed are visible in that order, and "if one of the indices is invalid,
    only the devices whose index precedes the invalid index are visible". The finer points follow
    torch's own reading of the variable (`_parse_visible_devices` in torch/cuda/__init__.py),
    which copies CUDA's: an index is read like C's `strtoul` (leading digits, so `1gpu` is 1);
    a negative or unreadable entry stops the list; a list that starts with `GPU-` or `MIG-` stops
    at the first entry without that prefix; and an entry listed twice hides every GPU (torch:
    "Repeated ordinal results in empty set"). An empty value lists none.
    """
    if value is None:
        return VisibleDevices(None, "all")
    prefix = next((p for p in UUID_PREFIXES if value.startswith(p)), None)
    kind: Literal["index", "GPU-", "MIG-"] = prefix or "index"  # type: ignore[assignment]
    entries: list[str] = []
    for raw in value.split(","):
        entry = raw if prefix else raw.strip()
        if prefix:
            if not entry.startswith(prefix):
                return VisibleDevices(value, kind, tuple(entries), raw, f"is not a {prefix} UUID like the first entry")
            key = entry
        else:
            number = _leading_index(entry)
            if number is None:
                why = "is not an index or a GPU-/MIG- UUID" if entry else "is empty"
                return VisibleDevices(value, kind, tuple(entries), raw, why)
            if number < 0:
                return VisibleDevices(value, kind, tuple(entries), raw, "is negative")
            key = str(number)
        if key in entries:
            return VisibleDevices(value, kind, (), raw, "is listed twice", repeated=True)
        entries.append(key)
    return VisibleDevices(value, kind, tuple(entries))


def describe_visible_devices(value: str | None, gpus: int | None = None) -> str:
    """In words, what CUDA_VISIBLE_DEVICES=`value` shows and hides on a machine with `gpus` GPUs.

    "" when the variable is not set. Values and entries are quoted shortened (`echo_value`).
    """
    if value is None:
        return ""
    seen = parse_visible_devices(value).on_machine(gpus)
    name = f"CUDA_VISIBLE_DEVICES={echo_value(value)}"
    if not value.strip():
        return f"{name} hides every GPU: an empty value lists none"
    bad = f"{echo_value(seen.bad or '', 30)} {seen.why}"
    if seen.repeated:
        return f"{name} hides every GPU: {bad}, and an entry listed twice hides them all"
    stops = "and CUDA stops reading at the first bad entry"
    if seen.hides_all:
        return f"{name} hides every GPU: {bad}, {stops}"
    gpus_word = "GPU" if len(seen.entries) == 1 else "GPUs"
    if seen.kind == "index":
        order = "torch calls it cuda:0" if len(seen.entries) == 1 else "torch numbers them from 0, in this order"
        shown = f"{name} shows {gpus_word} {', '.join(seen.entries)} ({order})"
    else:
        listed = ", ".join(echo_value(e, 20) for e in seen.entries[:3]) + (", …" if len(seen.entries) > 3 else "")
        shown = f"{name} selects {len(seen.entries)} {gpus_word} by UUID ({listed})"
    if seen.bad is not None:
        shown += f", and hides the rest: {bad}, {stops}"
    if seen.kind != "index":
        shown += "; a UUID that matches no GPU (`nvidia-smi -L` lists them) hides it and every entry after it"
    return shown


def diagnose(m: Machine) -> list[Finding]:
    """Turn a machine description into findings, problems first. Pure: reads nothing else."""
    findings: list[Finding] = []
    visible = parse_visible_devices(m.cuda_visible_devices)
    gpu_word = "GPU" if len(m.gpus) == 1 else "GPUs"

    if m.gpus:
        names = ", ".join(sorted({g.name for g in m.gpus}))
        findings.append(Finding("ok", f"{len(m.gpus)} CUDA {gpu_word} visible to torch: {names}."))
        for g in m.gpus:
            if m.arch_list and not build_supports(g.capability, m.arch_list):
                findings.append(
                    Finding(
                        "problem",
                        f"GPU {g.index} ({g.name}, {g.sm}) is too old for this torch build, which ships "
                        f"kernels for {', '.join(m.arch_list)}. The first CUDA operation will fail with "
                        "'no kernel image is available for execution on the device'.",
                        "On Kaggle choose Settings → Accelerator → GPU T4 ×2 (sm_75). Locally, install a "
                        f"torch build whose torch.cuda.get_arch_list() includes {g.sm}, or use a newer GPU.",
                    )
                )
    elif m.accelerator and m.accelerator != "cuda":
        findings.append(Finding("ok", f"Accelerator found: {m.accelerator}. CUDA-only cells will use their stand-ins."))
    elif m.cuda_build is None and (m.driver_gpu_count or 0) > 0:
        findings.append(
            Finding(
                "problem",
                f"The NVIDIA driver lists {m.driver_gpu_count} GPU(s), but this torch ({m.torch_version}) "
                "was built without CUDA, so it cannot use them.",
                "Install a CUDA build of torch (pick the CUDA version at pytorch.org/get-started) in this environment.",
            )
        )
    elif visible.visible_count(m.driver_gpu_count) == 0 and (m.driver_gpu_count or 0) > 0:
        findings.append(
            Finding(
                "problem",
                f"{describe_visible_devices(m.cuda_visible_devices, m.driver_gpu_count)}. torch sees none of "
                f"the {m.driver_gpu_count} GPU(s) the driver lists.",
                "Unset CUDA_VISIBLE_DEVICES (or list the GPU indices you want, e.g. 0,1) before Python starts.",
            )
        )
    elif visible.kind in UUID_PREFIXES and (m.driver_gpu_count or 0) > 0:
        findings.append(
            Finding(
                "problem",
                f"{describe_visible_devices(m.cuda_visible_devices, m.driver_gpu_count)}. The driver lists "
                f"{m.driver_gpu_count} GPU(s) and torch sees none, so no UUID listed matches one.",
                "Copy the UUIDs from `nvidia-smi -L`, or list GPU indices (e.g. 0,1), before Python starts.",
            )
        )
    elif (m.driver_gpu_count or 0) > 0:
        findings.append(
            Finding(
                "problem",
                f"The NVIDIA driver lists {m.driver_gpu_count} GPU(s) but torch sees none.",
                "Check that the driver supports this torch's CUDA "
                f"{m.cuda_build} (nvidia-smi shows the highest CUDA version the driver supports).",
            )
        )
    elif m.on_kaggle:
        findings.append(
            Finding(
                "note",
                "This Kaggle session has no GPU: the accelerator is off."
                + (
                    " Its torch is a CUDA build, so code that asks for 'cuda' raises "
                    "'Found no NVIDIA driver on your system'."
                    if m.cuda_build
                    else ""
                ),
                "Settings → Accelerator → GPU T4 ×2, then run the notebook again (GPU hours are a weekly quota).",
            )
        )
    elif m.cuda_build is not None and not m.driver_gpu_count:  # no nvidia-smi, or it reaches no driver
        findings.append(
            Finding(
                "note",
                f"This torch is a CUDA {m.cuda_build} build, but no NVIDIA driver is installed: the first CUDA "
                "operation raises 'Found no NVIDIA driver on your system'. Chapters run their CPU stand-ins.",
                "With an NVIDIA GPU, install its driver (nvidia-smi then works). Without one, a CPU build of torch "
                "is smaller (pytorch.org/get-started). On Kaggle: Settings → Accelerator → GPU T4 ×2.",
            )
        )
    else:
        findings.append(Finding("note", "No GPU here: chapters run their CPU stand-ins.", HOW_TO_GET_A_GPU))

    if m.gpus and m.driver_gpu_count and len(m.gpus) < m.driver_gpu_count and m.cuda_visible_devices is not None:
        findings.append(
            Finding(
                "note",
                f"{describe_visible_devices(m.cuda_visible_devices, m.driver_gpu_count)}: torch sees "
                f"{len(m.gpus)} of the {m.driver_gpu_count} GPUs the driver lists.",
            )
        )
    if m.torch_threads > m.cpus_usable:
        findings.append(
            Finding(
                "note",
                f"torch uses {m.torch_threads} threads but this process may run on {m.cpus_usable} CPUs, "
                "so threads compete.",
                f"torch.set_num_threads({m.cpus_usable})",
            )
        )
    order = {"problem": 0, "note": 1, "ok": 2}
    return sorted(findings, key=lambda f: order[f.level])


def one_line(m: Machine) -> str:
    """A one-line summary printed by every chapter's setup cell (the runner reads `Running on:`)."""
    if m.gpus:
        names = sorted({g.name for g in m.gpus})
        where = f"{len(m.gpus)}× {' + '.join(names)}"
    elif m.accelerator:
        where = m.accelerator
    else:
        where = "CPU only"
    cuda = f"CUDA {m.cuda_build}" if m.cuda_build else "CPU build"
    host = "Kaggle" if m.on_kaggle else "local"
    return (
        f"Running on: {where} | torch {m.torch_version} ({cuda}) | {m.cpus_usable} CPUs | "
        f"Python {m.python_version} | {host}"
    )


@functools.lru_cache(maxsize=1)
def _this_machine() -> Machine:
    """This process's machine, described once: GPUs and torch do not change while a process runs,
    and describing them runs nvidia-smi, too slow to repeat for every point of a measured sweep."""
    return describe_machine()


def stamp(m: Machine | None = None) -> str:
    """The label every measured figure carries: hardware, torch and CUDA versions, date."""
    m = m or _this_machine()
    if m.gpus:
        hardware = ", ".join(sorted({g.name for g in m.gpus}))
    else:
        hardware = f"CPU ({platform.processor() or platform.machine()}, {m.cpus_usable} cores)"
    cuda = f", CUDA {m.cuda_build}" if m.cuda_build else ""
    return f"measured on {hardware} · torch {m.torch_version}{cuda} · {date.today().isoformat()}"


def report(m: Machine) -> str:
    """A readable multi-line report: the machine, then the diagnosis with fixes."""
    lines = [
        "Environment report",
        f"  Python {m.python_version} on {sys.platform}; torch {m.torch_version}",
        f"  CUDA in this torch build: {m.cuda_build or 'none (CPU-only build)'}",
        f"  accelerator: {m.accelerator or 'none'}",
    ]
    if m.arch_list:
        lines.append(f"  kernels shipped for: {', '.join(m.arch_list)}")
    for g in m.gpus:
        lines.append(
            f"  GPU {g.index}: {g.name}, {g.total_memory_bytes / 2**30:.1f} GiB, compute capability "
            f"{g.capability[0]}.{g.capability[1]} ({g.sm}), {g.multiprocessors} multiprocessors"
        )
    visible_value = "(not set)" if m.cuda_visible_devices is None else echo_value(m.cuda_visible_devices)
    listed = "no driver found (NVML, nvidia-smi)" if m.driver_gpu_count is None else m.driver_gpu_count
    lines += [
        f"  GPUs the NVIDIA driver lists: {listed}",
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
    return "\n".join(lines)
