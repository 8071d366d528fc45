"""The offline wheelhouse: what the GPU self-test needs beyond torch, as wheels to copy to a machine without a network.

`python -m coursetools wheelhouse [--python 3.12] [--platform TAG ...] [--have FILE]` downloads, on a
machine with a network, binary wheels of the learner package's dependencies (torch left out) and of
the `selftest` extra (pyproject.toml), for the Python and platform you name, and writes their names in
the folder's `requirements.txt`. On the GPU machine, `python -m coursetools selftest --wheelhouse DIR`
installs those requirements from the folder alone (`pip install --no-index --find-links DIR`), with
no pip configuration read, before anything else is imported: torch, not being among them, stays as
it is. This module imports only the standard library, so that it runs before the rest is installed.
"""

from __future__ import annotations

import importlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

#: The folder that holds `pyproject.toml`, `helpers/` and `coursetools/`.
COURSE_ROOT = Path(__file__).resolve().parent.parent

#: The requirements file a wheelhouse carries: what the self-test installs from it, by name.
WHEELHOUSE_REQUIREMENTS = "requirements.txt"
#: Where `python -m coursetools wheelhouse` writes by default.
DEFAULT_WHEELHOUSE = COURSE_ROOT / "build" / "wheelhouse"
#: Python and platform of the machines the course is self-tested on (Kaggle, the lent GPU machines).
DEFAULT_PYTHON = "3.12"
DEFAULT_PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64", "manylinux1_x86_64")


class WheelhouseError(RuntimeError):
    """The wheelhouse could not be written or installed; one message that says what to do."""


def requirement_name(requirement: str) -> str:
    """`torch>=2.10,<3`, `Torch==2.11.0`, `torch @ file:///…` → `torch` (normalised as pip compares names)."""
    return re.sub(r"[-_.]+", "-", re.split(r"[\s<>=!~;@\[(]", requirement.strip(), maxsplit=1)[0]).lower()


def wheel_name(wheel: Path) -> str:
    """The project a wheel file holds, normalised: `pyzmq-27.3.0-cp312-abi3-….whl` → `pyzmq`."""
    return requirement_name(wheel.name.split("-")[0])


def listed_names(freeze: str) -> set[str]:
    """The projects a `pip freeze` (or `pip list --format=freeze`, or one name a line) text lists."""
    lines = (line.strip() for line in freeze.splitlines())
    return {requirement_name(line) for line in lines if line and not line.startswith(("#", "-"))}


def selftest_requirements(pyproject: Path = COURSE_ROOT / "pyproject.toml") -> list[str]:
    """What the self-test imports beyond torch: the learner package's dependencies and the `selftest` extra."""
    import tomllib

    project = tomllib.loads(Path(pyproject).read_text(encoding="utf-8"))["project"]
    needed = [r for r in project["dependencies"] if requirement_name(r) != "torch"]
    return needed + project["optional-dependencies"]["selftest"]


def _pip_alone() -> dict[str, str]:
    """The environment for a pip that reads no configuration: no config file, no PIP_* variable."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env["PIP_CONFIG_FILE"] = os.devnull  # pip then loads no configuration file at all
    return env


def _tail(done: subprocess.CompletedProcess[str], lines: int = 10) -> str:
    """The last lines pip printed: where it says what went wrong."""
    return "\n".join((done.stdout + done.stderr).strip().splitlines()[-lines:])


def find_python(version: str) -> str:
    """An interpreter of Python `version` ("3.12") on this machine, to run `pip download` with.

    pip evaluates dependency markers (`aiohttp; python_version == "3.12"`, papermill's) for the
    Python that runs it, whatever `--python-version` says (pypa/pip#11198, #11010): a wheelhouse
    downloaded by another Python misses such dependencies.
    """
    if f"{sys.version_info.major}.{sys.version_info.minor}" == version:
        return sys.executable
    candidates = [shutil.which(f"python{version}")]
    candidates += sorted(str(p) for p in Path.home().glob(f".pyenv/versions/{version}.*/bin/python{version}"))
    for candidate in filter(None, candidates):
        done = subprocess.run(
            [candidate, "-c", "import sys, pip; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode == 0 and done.stdout.strip() == version:
            return candidate
    raise WheelhouseError(
        f"no Python {version} with pip on this machine: pip evaluates dependency markers for the Python that runs "
        f"it, so a wheelhouse for {version} must be downloaded by a Python {version}. Install one (e.g. `pyenv "
        f"install {version}`, or `uv python install {version}` and put it on PATH as python{version})."
    )


def build_wheelhouse(
    out: Path = DEFAULT_WHEELHOUSE,
    *,
    python: str = DEFAULT_PYTHON,
    platforms: tuple[str, ...] = DEFAULT_PLATFORMS,
    have: set[str] = frozenset(),
) -> Path:
    """Download the wheels the self-test needs beyond torch, for `python` on `platforms`, into `out`.

    Binary wheels only, so the folder installs where nothing can be built or fetched; it holds its
    own `requirements.txt`, which `install_wheelhouse` installs by name. Wheels of the projects in
    `have` (what the target machine already has, e.g. numpy and matplotlib beside its torch) are
    left out, so the folder stays small; the target's own copies then serve.
    """
    out = Path(out)
    interpreter = find_python(python)
    requirements = selftest_requirements()
    out.mkdir(parents=True, exist_ok=True)
    (out / WHEELHOUSE_REQUIREMENTS).write_text("\n".join(requirements) + "\n", encoding="utf-8")
    command = [
        interpreter,
        "-m",
        "pip",
        "download",
        "--quiet",
        "--dest",
        str(out),
        "--only-binary=:all:",
        "--implementation",
        "cp",
        "--python-version",
        python,
        *(f"--platform={p}" for p in platforms),
        "-r",
        str(out / WHEELHOUSE_REQUIREMENTS),
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode:
        raise WheelhouseError(f"pip could not download the wheels (exit code {done.returncode}):\n{_tail(done)}")
    torch_wheels = sorted(p.name for p in out.glob("*.whl") if wheel_name(p) == "torch")
    if torch_wheels:
        raise WheelhouseError(f"the wheelhouse must never carry torch, but pip fetched {torch_wheels}")
    for wheel in out.glob("*.whl"):
        if wheel_name(wheel) in have:
            wheel.unlink()
    return out


def install_wheelhouse(folder: Path) -> str:
    """Install the self-test's dependencies from `folder` alone (`--no-index`); return what pip said.

    torch is neither in the folder nor in its requirements, so the torch already here stays.
    """
    folder = Path(folder)
    requirements = folder / WHEELHOUSE_REQUIREMENTS
    if not requirements.is_file():
        raise WheelhouseError(
            f"{folder} is not a wheelhouse (it has no {WHEELHOUSE_REQUIREMENTS}): write one with "
            "`python -m coursetools wheelhouse --python X.Y` on a machine with a network, then copy it here."
        )
    command = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--no-index",
        "--find-links",
        str(folder),
        "-r",
        str(requirements),
    ]
    done = subprocess.run(command, capture_output=True, text=True, env=_pip_alone(), check=False)
    if done.returncode:
        raise WheelhouseError(
            f"installing from {folder} failed (exit code {done.returncode}); was it written for this Python "
            f"({sys.version_info.major}.{sys.version_info.minor}) and platform, and does this machine have what "
            f"--have left out?\n{_tail(done)}"
        )
    importlib.invalidate_caches()  # what was just installed is importable in this process
    return done.stdout


def wheelhouse_size(folder: Path) -> tuple[int, int]:
    """(how many wheels, their bytes) in `folder`."""
    wheels = list(Path(folder).glob("*.whl"))
    return len(wheels), sum(p.stat().st_size for p in wheels)
