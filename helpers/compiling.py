"""What `torch.compile` needs on this machine, and where it keeps what it compiled (chapters 11, 13 and 15).

Why a compile failed and what to do (a chapter decides whether compiling works by trying a compile); where Inductor
caches its artefacts and how many are there, so a chapter can tell a cold first call from a warm one."""

from __future__ import annotations

import getpass
import os
import shutil
import sys
import tempfile
from pathlib import Path

import torch

#: How to get a C++ compiler Inductor can use, by platform (`sys.platform` prefix).
_INSTALL = {
    "linux": "install g++ (Debian/Ubuntu: `sudo apt-get install g++`; conda: `conda install -c conda-forge gxx`)",
    "darwin": "install Apple's command line tools (`xcode-select --install`), which provide clang++",
    "win32": "install Visual Studio Build Tools with the C++ workload (MSVC's `cl`) and start Jupyter from an "
    "'x64 Native Tools Command Prompt' so that `cl` is on PATH",
}


def cpp_compiler() -> str:
    """The C++ compiler Inductor's CPU backend calls: $CXX if set, else `cl` (Windows), `clang++` (macOS), `g++`."""
    return os.environ.get("CXX", {"win32": "cl", "darwin": "clang++"}.get(sys.platform, "g++"))


def compiler_advice(exc: BaseException, device: torch.device | str = "cpu") -> str:
    """What to tell a learner whose `torch.compile` failed with `exc`: what broke, what is missing, how to fix it."""
    lines = str(exc).strip().splitlines()
    said = f"torch.compile failed: {type(exc).__name__}: {lines[0][:200] if lines else ''}"
    said += next((f"\n  {x.strip()[:200]}" for x in lines[1:] if "error" in x.lower()), "")  # the compiler's words
    if (device := torch.device(device)).type == "mps":  # Inductor writes Metal kernels there, not C++
        return f"{said}\n  On Apple's GPU Inductor writes Metal kernels, not C++: the line above says what failed."
    if device.type == "cuda":
        return (
            f"{said}\n  On an NVIDIA GPU Inductor writes Triton kernels: check that `import triton` works (torch's "
            "Linux CUDA wheels bring it; 2.10's only on x86-64), that gcc or clang is on PATH (or CC names one) and "
            "that Python's development headers are installed: Triton builds a small launcher with them."
        )
    compiler, platform = cpp_compiler(), next((key for key in _INSTALL if sys.platform.startswith(key)), "linux")
    need = (
        "OpenMP (`brew install libomp`)" if platform == "darwin" else "Python's headers (Debian/Ubuntu: `python3-dev`)"
    )
    if where := shutil.which(compiler):  # there: the error may be the compiler's, a missing header's or another's
        return (
            f"{said}\n  Inductor's CPU backend compiles C++ with {where}: check that it runs and that you have {need}."
        )
    fix = "fix or unset CXX (Inductor reads it at its first compile)" if "CXX" in os.environ else _INSTALL[platform]
    return f"{said}\n  Inductor's C++ compiler {compiler!r} was not found: {fix}, then restart the kernel."


#: Files Inductor writes for compiled code: generated Python and C++ modules, shared libraries, GPU binaries.
COMPILED_SUFFIXES = frozenset({".py", ".so", ".pyd", ".dll", ".dylib", ".cubin", ".hsaco"})


def inductor_cache_dir() -> Path:
    """Where Inductor caches compiled code: $TORCHINDUCTOR_CACHE_DIR, else `torchinductor_<user>` in the temp folder.

    This mirrors `torch/_inductor/runtime/cache_dir_utils.py` (`cache_dir`, `default_cache_dir`) for torch 2.10 to
    2.13 outside Meta's internal builds."""
    chosen = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    if chosen:
        return Path(chosen).absolute()
    try:
        user = getpass.getuser()
    except (KeyError, ModuleNotFoundError, OSError):
        getuid = getattr(os, "getuid", None)
        user = f"uid_{getuid()}" if callable(getuid) else "unknown_user"
    for bad in '\\/:*?"<>|':
        user = user.replace(bad, "_")
    return Path(tempfile.gettempdir(), f"torchinductor_{user}")


def compiled_files(folder: Path | str) -> int:
    """How many compiled-code files (`COMPILED_SUFFIXES`) lie anywhere under `folder` (0 when it does not exist)."""
    return sum(1 for p in Path(folder).rglob("*") if p.suffix in COMPILED_SUFFIXES and p.is_file())
