"""The setup cell every chapter shares finds `helpers` on a simulated Kaggle machine.

Each test builds a fake `/kaggle/input` tree in a temporary folder, points COURSE_KAGGLE_INPUT
at it, and runs `QUICK = False` + `SETUP_CELL` as a script in a fresh interpreter whose current
folder (and its parent) hold no helpers. The interpreter is a throw-away virtual environment
without pip and without the course installed, so only the setup cell can make `import helpers`
work. Its "pip" is a fake module that records the command the cell runs and, when told to,
"installs" helpers the way a real `pip install git+...` would; nothing touches the network.
"""

from __future__ import annotations

import json
import os
import subprocess
import venv
from pathlib import Path

import pytest

import helpers
from coursetools.authoring import HELPERS_DATASET, HELPERS_PIP_SOURCE, SETUP_CELL, WRITTEN_FOR

FAKE_HELPERS = """\
def start(written_for, quick=False):
    print("SETUP_CHAPTER_RAN", written_for)
    return quick
"""

FAKE_PIP = (
    """\
import json, os, sys
from pathlib import Path

with open(os.environ["FAKE_PIP_LOG"], "a") as log:
    log.write(json.dumps({"executable": sys.executable, "argv": sys.argv[1:]}) + "\\n")
if os.environ.get("FAKE_PIP_INTERNET") == "1":  # "install" the package into site-packages
    site = Path(__file__).resolve().parent.parent
    (site / "helpers").mkdir(exist_ok=True)
    (site / "helpers" / "__init__.py").write_text("""
    + repr(FAKE_HELPERS)
    + """)
    sys.exit(0)
print("ERROR: Could not find a version that satisfies the requirement (no network)", file=sys.stderr)
sys.exit(1)
"""
)


def site_packages(python: Path) -> Path:
    done = subprocess.run(
        [str(python), "-c", "import site; print(site.getsitepackages()[0])"], capture_output=True, text=True, check=True
    )
    return Path(done.stdout.strip())


@pytest.fixture(scope="module")
def clean_python(tmp_path_factory) -> Path:
    """A Python with neither pip nor the course installed; its `-m pip` is the fake above."""
    env_dir = tmp_path_factory.mktemp("clean-venv")
    venv.EnvBuilder(with_pip=False, symlinks=True, clear=True).create(env_dir)
    python = env_dir / "bin" / "python"
    site = site_packages(python)
    (site / "pip").mkdir()
    (site / "pip" / "__init__.py").write_text("", encoding="utf-8")
    (site / "pip" / "__main__.py").write_text(FAKE_PIP, encoding="utf-8")
    done = subprocess.run([str(python), "-c", "import helpers"], capture_output=True, text=True)
    assert done.returncode != 0, "the clean interpreter must not find helpers on its own"
    return python


def _uninstall_fake(python: Path) -> None:
    site = site_packages(python)
    target = site / "helpers"
    if target.exists():
        for f in target.iterdir():
            f.unlink()
        target.rmdir()


def fake_helpers(where: Path) -> Path:
    """A minimal `helpers` package inside `where` (what the dataset's zip unpacks to)."""
    pkg = where / "helpers"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(FAKE_HELPERS, encoding="utf-8")
    return where


def run_setup(
    python: Path,
    tmp_path: Path,
    kaggle_input: Path,
    *,
    internet: bool = False,
    cwd: Path | None = None,
    colab: bool = False,
):
    """Run the setup cell in a fresh process; return (completed process, helpers' file, pip calls).
    `colab` sets the variable a Colab runtime sets (COLAB_RELEASE_TAG)."""
    script = tmp_path / "setup_cell.py"
    script.write_text(
        "QUICK = False\n" + SETUP_CELL + "\nprint('HELPERS_FILE=' + helpers.__file__)\n", encoding="utf-8"
    )
    cwd = cwd or tmp_path / "kaggle" / "working"
    cwd.mkdir(parents=True, exist_ok=True)
    log = tmp_path / "pip-calls.jsonl"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "COURSE_", "COLAB_"))}
    env.update(
        COURSE_KAGGLE_INPUT=str(kaggle_input),
        FAKE_PIP_LOG=str(log),
        FAKE_PIP_INTERNET="1" if internet else "0",
        PYTHONDONTWRITEBYTECODE="1",
        **({"COLAB_RELEASE_TAG": "release-colab-test"} if colab else {}),
    )
    try:
        done = subprocess.run([str(python), str(script)], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)
    finally:
        _uninstall_fake(python)
    found = next((line.split("=", 1)[1] for line in done.stdout.splitlines() if line.startswith("HELPERS_FILE=")), None)
    calls = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return done, found, calls


def test_dataset_mounted_at_input_slug(clean_python, tmp_path) -> None:
    root = tmp_path / "input"
    fake_helpers(root / HELPERS_DATASET)
    done, found, calls = run_setup(clean_python, tmp_path, root)
    assert done.returncode == 0, done.stderr
    assert found == str(root / HELPERS_DATASET / "helpers" / "__init__.py")
    assert "SETUP_CHAPTER_RAN" in done.stdout
    assert calls == [], "with the dataset attached, the cell must not call pip"


def test_dataset_mounted_at_input_datasets_owner_slug(clean_python, tmp_path) -> None:
    root = tmp_path / "input"
    fake_helpers(root / "datasets" / "some-owner" / HELPERS_DATASET)
    (root / "datasets" / "some-owner" / "unrelated-dataset").mkdir()
    done, found, calls = run_setup(clean_python, tmp_path, root)
    assert done.returncode == 0, done.stderr
    assert found == str(root / "datasets" / "some-owner" / HELPERS_DATASET / "helpers" / "__init__.py")
    assert calls == []


def test_a_clone_in_the_working_folder_wins(clean_python, tmp_path) -> None:
    root = tmp_path / "input"
    fake_helpers(root / HELPERS_DATASET)
    clone = fake_helpers(tmp_path / "clone")
    (clone / "notebooks").mkdir()
    done, found, _ = run_setup(clean_python, tmp_path, root, cwd=clone / "notebooks")
    assert done.returncode == 0, done.stderr
    assert found == str(clone / "helpers" / "__init__.py"), "a notebook opened in a clone uses the clone's helpers"


def test_without_dataset_on_kaggle_with_internet_pip_installs(clean_python, tmp_path) -> None:
    root = tmp_path / "input"
    (root / "some-other-dataset").mkdir(parents=True)
    done, found, calls = run_setup(clean_python, tmp_path, root, internet=True)
    assert done.returncode == 0, done.stderr
    assert calls == [{"executable": str(clean_python), "argv": ["install", "--no-deps", HELPERS_PIP_SOURCE]}], calls
    assert found and "site-packages" in found, "helpers imported from where pip put it"
    assert "SETUP_CHAPTER_RAN" in done.stdout


def test_without_dataset_or_internet_says_what_to_turn_on(clean_python, tmp_path) -> None:
    root = tmp_path / "input"
    root.mkdir()
    done, found, calls = run_setup(clean_python, tmp_path, root, internet=False)
    assert len(calls) == 1, "on Kaggle it tries pip once"
    assert done.returncode == 1 and found is None
    assert "Traceback" not in done.stderr, done.stderr
    message = done.stderr.strip().splitlines()[-1]
    assert "Helpers are missing" in message
    assert f"Add Input → {HELPERS_DATASET}" in message, "names the dataset to attach"
    assert "Internet on" in message, "names the other way: turning Internet on"


def test_on_colab_the_cell_pip_installs_the_helpers(clean_python, tmp_path) -> None:
    """Colab opens a notebook from GitHub without its repository and has no /kaggle/input."""
    done, found, calls = run_setup(clean_python, tmp_path, tmp_path / "no-such-kaggle-input", internet=True, colab=True)
    assert done.returncode == 0, done.stderr
    assert calls == [{"executable": str(clean_python), "argv": ["install", "--no-deps", HELPERS_PIP_SOURCE]}], calls
    assert found and "site-packages" in found
    assert "SETUP_CHAPTER_RAN" in done.stdout


def test_on_colab_without_network_says_pip_failed(clean_python, tmp_path) -> None:
    done, found, calls = run_setup(clean_python, tmp_path, tmp_path / "no-such-kaggle-input", colab=True)
    assert len(calls) == 1 and done.returncode == 1 and found is None
    assert "Traceback" not in done.stderr, done.stderr
    assert "Colab: pip failed" in done.stderr.strip().splitlines()[-1]


def test_off_kaggle_without_helpers_does_not_call_pip(clean_python, tmp_path) -> None:
    done, found, calls = run_setup(clean_python, tmp_path, tmp_path / "no-such-kaggle-input")
    assert calls == [], "pip is tried only on Kaggle (when the input folder exists) and on Colab"
    assert done.returncode == 1 and found is None
    assert "Traceback" not in done.stderr
    assert "make lab" in done.stderr, "tells a local learner to open the notebook from a clone"


def test_the_cell_looks_in_kaggle_s_real_input_folder_by_default() -> None:
    assert 'os.getenv("COURSE_KAGGLE_INPUT", "/kaggle/input")' in SETUP_CELL
    assert f'DATASET, KAGGLE = "{HELPERS_DATASET}"' in SETUP_CELL
    assert "{sys.executable} -m pip" in SETUP_CELL, "installs into the running interpreter, never a bare `pip`"


def test_the_cell_is_ten_lines_and_starts_the_chapter_at_its_version() -> None:
    code = [line for line in SETUP_CELL.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert len(code) <= 10, code
    assert code[-1] == f'QUICK = helpers.start("{WRITTEN_FOR}", QUICK)'
    assert helpers.__version__.startswith(WRITTEN_FOR + ".")


def test_the_cell_says_what_it_does_in_one_comment_line_its_collapsed_title() -> None:
    comments = [line for line in SETUP_CELL.splitlines() if line.lstrip().startswith("#")]
    assert comments == [SETUP_CELL.splitlines()[0]], "one comment line, the first (the collapsed cell shows it)"
    assert comments[0].startswith("# @title ") and len(comments[0]) <= 100, "Colab's form view shows it as the title"


def test_an_older_dataset_with_newer_chapters_says_how_to_update(tmp_path) -> None:
    """A learner who keeps last release's helpers dataset and opens this release's chapters is told so by
    the set-up cell, with how to update the dataset, and the cell itself does not fail (the dataset's
    own `start` says it; this release only raises the version the cell asks for)."""
    import shutil
    import sys

    root = tmp_path / "input"
    old = root / HELPERS_DATASET / "helpers"
    shutil.copytree(Path(helpers.__file__).parent, old, ignore=shutil.ignore_patterns("__pycache__"))
    init = old / "__init__.py"
    major, minor = (int(x) for x in WRITTEN_FOR.split("."))
    older = f"{major}.{minor - 1}.0" if minor else f"{major - 1}.9.0"
    init.write_text(init.read_text().replace(f'__version__ = "{helpers.__version__}"', f'__version__ = "{older}"'))
    script = tmp_path / "setup_cell.py"
    script.write_text("QUICK = False\n" + SETUP_CELL + "\nprint('HELPERS_FILE=' + helpers.__file__)\n")
    cwd = tmp_path / "kaggle" / "working"
    cwd.mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "COURSE_", "COLAB_"))}
    env.update(COURSE_KAGGLE_INPUT=str(root), PYTHONDONTWRITEBYTECODE="1")
    done = subprocess.run([sys.executable, str(script)], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"HELPERS_FILE={init}" in done.stdout, "the old dataset's helpers were the ones found"
    assert f"written for the course's helpers {WRITTEN_FOR}" in done.stdout and older in done.stdout
    assert f"update the dataset '{HELPERS_DATASET}'" in done.stdout
