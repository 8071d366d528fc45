"""The offline wheelhouse: what the self-test needs beyond torch, and an install from the folder alone.

`make test-selftest-offline` (in CI) downloads a real wheelhouse and runs the self-test from it in a
fresh venv; these tests check the pieces without a network.
"""

from __future__ import annotations

import base64
import hashlib
import os
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from coursetools import wheelhouse

ROOT = Path(__file__).resolve().parents[2]


def test_the_requirements_are_the_learner_package_and_the_selftest_extra_without_torch() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    needed = wheelhouse.selftest_requirements()
    names = [wheelhouse.requirement_name(r) for r in needed]
    assert "torch" not in names, "the wheelhouse never carries torch: the machine's own is what is tested"
    assert {"papermill", "ipykernel", "ipywidgets", "pytest", "matplotlib", "tqdm", "nvidia-ml-py"} <= set(names)
    assert len(needed) == len(project["dependencies"]) - 1 + len(project["optional-dependencies"]["selftest"])


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("torch>=2.10,<3", "torch"),
        ("Torch==2.11.0+cu130", "torch"),
        ("nvidia_ml_py==13.580.82", "nvidia-ml-py"),
        ("jupyter_client @ file:///tmp/x.whl", "jupyter-client"),
        ("zope.interface", "zope-interface"),
        ("pytest[testing] ; python_version >= '3.8'", "pytest"),
    ],
)
def test_requirement_names_are_normalised_as_pip_compares_them(text: str, name: str) -> None:
    assert wheelhouse.requirement_name(text) == name


def test_have_lists_what_the_target_already_has() -> None:
    freeze = "# made on the GPU machine\nnumpy==2.1.0\nMatplotlib==3.10.0\n-e git+https://x/y#egg=z\n\npyzmq\n"
    assert wheelhouse.listed_names(freeze) == {"numpy", "matplotlib", "pyzmq"}
    assert wheelhouse.wheel_name(Path("pyzmq-27.3.0-cp312-abi3-manylinux_2_28_x86_64.whl")) == "pyzmq"
    assert wheelhouse.wheel_name(Path("nvidia_ml_py-13.580.82-py3-none-any.whl")) == "nvidia-ml-py"


def test_a_folder_without_requirements_is_not_a_wheelhouse(tmp_path) -> None:
    with pytest.raises(wheelhouse.WheelhouseError, match=r"not a wheelhouse .*python -m coursetools wheelhouse"):
        wheelhouse.install_wheelhouse(tmp_path)


def test_a_python_that_is_not_here_is_named_with_what_to_do() -> None:
    with pytest.raises(wheelhouse.WheelhouseError, match=r"no Python 3\.99 with pip on this machine.*pip evaluates"):
        wheelhouse.find_python("3.99")
    mine = f"{sys.version_info.major}.{sys.version_info.minor}"
    assert wheelhouse.find_python(mine) == sys.executable


def _tiny_wheel(folder: Path, name: str, version: str) -> Path:
    """A pure-Python wheel of one module `name` that knows its version, built by hand (no network, no build)."""
    dist = f"{name}-{version}.dist-info"
    files = {
        f"{name}.py": f"VERSION = {version!r}\n",
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: by hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }

    def digest(text: str) -> str:
        return base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()

    record = "".join(f"{path},sha256={digest(text)},{len(text.encode())}\n" for path, text in files.items())
    files[f"{dist}/RECORD"] = record + f"{dist}/RECORD,,\n"
    wheel = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        for path, text in files.items():
            z.writestr(path, text)
    return wheel


@pytest.mark.slow
def test_the_install_reads_the_folder_alone_and_no_pip_configuration(tmp_path) -> None:
    house, elsewhere = tmp_path / "house", tmp_path / "elsewhere"
    house.mkdir()
    elsewhere.mkdir()
    _tiny_wheel(house, "course_probe", "1.0")
    _tiny_wheel(elsewhere, "course_probe", "2.0")  # what a pip configuration would offer instead
    (house / wheelhouse.WHEELHOUSE_REQUIREMENTS).write_text("course_probe\n", encoding="utf-8")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = venv / ("Scripts" if os.name == "nt" else "bin") / "python"
    env = dict(os.environ, PYTHONPATH=str(ROOT), PIP_FIND_LINKS=str(elsewhere), PIP_NO_INDEX="0")
    install = f"from coursetools.wheelhouse import install_wheelhouse; install_wheelhouse({str(house)!r})"
    subprocess.run([str(python), "-c", install], env=env, check=True, timeout=120, capture_output=True)
    done = subprocess.run(
        [str(python), "-c", "import course_probe; print(course_probe.VERSION)"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert done.stdout.strip() == "1.0", "installed from the wheelhouse, not from where PIP_FIND_LINKS points"
    (house / wheelhouse.WHEELHOUSE_REQUIREMENTS).write_text("course_probe\nno_such_project\n", encoding="utf-8")
    failed = subprocess.run([str(python), "-c", install], env=env, timeout=120, capture_output=True, text=True)
    assert failed.returncode != 0 and "installing from" in failed.stderr and "no_such_project" in failed.stderr
