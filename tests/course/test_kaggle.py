"""Kaggle publishing: every generated folder is accepted, bad settings get clear errors, links are right.

The metadata formats are the Kaggle CLI's to check: when the `kaggle` package is installed (it is a
dev dependency), its `kernels_push` and `dataset_create_new` run for real on every folder in a
child process, offline and without credentials, with only the final network call replaced by a
recorder.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import helpers
from coursetools import SELFTEST_MODULES, authoring, kaggle
from coursetools.__main__ import main as cli
from coursetools.execute import discover_chapters

ROOT = Path(__file__).resolve().parents[2]
OWNER = "someone"


@pytest.fixture(scope="module")
def settings() -> dict:
    return kaggle.load_settings()


@pytest.fixture(scope="module")
def built(tmp_path_factory, settings) -> kaggle.BuildResult:
    return kaggle.build_all(OWNER, out_dir=tmp_path_factory.mktemp("kaggle"), settings=settings)


def _meta(folder: Path, name: str) -> dict:
    return json.loads((folder / name).read_text(encoding="utf-8"))


# ------------------------------------------------------------------------------------------------
# The build
# ------------------------------------------------------------------------------------------------


def test_one_kernel_folder_per_chapter_and_the_self_test(built) -> None:
    published = sorted(json.loads((f / kaggle.KERNEL_METADATA).read_text())["code_file"] for f in built.kernels)
    expected = sorted([p.name for p in discover_chapters()] + ["gpu_self_test.ipynb"])
    assert published == expected


@pytest.mark.parametrize("index", range(len(discover_chapters()) + 1))
def test_kernel_metadata_turns_the_gpu_on_and_attaches_the_helpers(built, settings, index) -> None:
    folder = built.kernels[index]
    meta = _meta(folder, kaggle.KERNEL_METADATA)
    owner, slug = meta["id"].split("/")
    assert owner == OWNER and slug == folder.name
    assert slug.startswith(settings["slug_prefix"] + "-")
    assert kaggle.slugify(meta["title"]) == slug and 5 <= len(meta["title"]) <= 50
    assert meta["language"] == "python" and meta["kernel_type"] == "notebook"
    assert meta["enable_gpu"] is True and meta["machine_shape"] == "NvidiaTeslaT4", "GPU T4 x2"
    assert meta["enable_internet"] is settings["enable_internet"] and meta["is_private"] is settings["is_private"]
    assert meta["dataset_sources"] == [f"{OWNER}/{authoring.HELPERS_DATASET}"], "the setup cell looks for this slug"
    assert meta["keywords"] == settings["keywords"]
    assert sorted(p.name for p in folder.iterdir()) == sorted([kaggle.KERNEL_METADATA, meta["code_file"]])
    pushed = _meta(folder, meta["code_file"])
    original = json.loads((kaggle.NOTEBOOKS / meta["code_file"]).read_text(encoding="utf-8"))
    assert pushed["cells"] == original["cells"], "the notebook is pushed as it is in the repository"
    assert pushed["metadata"]["kaggle"]["accelerator"] == "nvidiaTeslaT4"
    assert pushed["metadata"]["kaggle"]["isGpuEnabled"] is True
    assert not any(
        c.get("outputs") for c in pushed["cells"] if c["cell_type"] == "code" and not authoring.is_checked(c)
    ), "pushed without outputs"


def test_dataset_folder_holds_helpers_the_self_test_its_gpu_tests_and_the_chapters_only(built, settings) -> None:
    ds = built.dataset
    meta = _meta(ds, kaggle.DATASET_METADATA)
    assert meta["id"] == f"{OWNER}/{authoring.HELPERS_DATASET}"
    assert meta["title"] == settings["helpers_dataset"]["title"] and 6 <= len(meta["title"]) <= 50
    assert meta["licenses"] == [{"name": "apache-2.0"}]
    assert helpers.__version__ in meta["description"], "the dataset says which version of the course it carries"
    ours = sorted(p.relative_to(ROOT / "helpers").as_posix() for p in (ROOT / "helpers").rglob("*.py"))
    copied = sorted(p.relative_to(ds / "helpers").as_posix() for p in (ds / "helpers").rglob("*.py"))
    assert copied == ours
    assert not list(ds.rglob("__pycache__")) and not list(ds.rglob("*.pyc"))
    assert sorted(p.name for p in ds.iterdir()) == sorted(
        [kaggle.DATASET_METADATA, "coursetools", "helpers", "notebooks", "tests"]
    )
    shipped = sorted(p.name for p in (ds / "coursetools").iterdir())
    assert shipped == sorted(SELFTEST_MODULES), "of the course tooling, only the self-test ships"
    for name in shipped:
        assert (ds / "coursetools" / name).read_bytes() == (ROOT / "coursetools" / name).read_bytes()
    gpu_dir = ROOT / "tests" / "gpu"
    gpu_files = sorted(p.name for p in gpu_dir.glob("*.py"))
    assert "missing.py" in gpu_files and "conftest.py" in gpu_files
    assert sorted(p.name for p in (ds / "tests").iterdir()) == ["__init__.py", "gpu"]
    assert sorted(p.name for p in (ds / "tests" / "gpu").iterdir()) == gpu_files
    for name in gpu_files:
        assert (ds / "tests" / "gpu" / name).read_bytes() == (gpu_dir / name).read_bytes()
    chapters = sorted(p.name for p in discover_chapters())
    assert sorted(p.name for p in (ds / "notebooks").iterdir()) == chapters, "the chapters the self-test executes"


#: Run in a fresh Python that sees the dataset folder (argv[1]) and the installed libraries, not the clone:
#: import every module of tests/gpu/, then every course module any of them imports (inside a test function
#: too) and each name imported from one; write what failed, or came from outside the folder, to argv[2].
DATASET_IMPORTS = r"""
import ast, importlib, json, sys
from pathlib import Path

root, report = Path(sys.argv[1]).resolve(), Path(sys.argv[2])
sys.path.insert(0, str(root))
COURSE = ("helpers", "coursetools", "tests")
problems = []


def load(module):
    try:
        found = importlib.import_module(module)
    except Exception as exc:
        problems.append(f"{module}: {type(exc).__name__}: {exc}")
        return None
    where = getattr(found, "__file__", None) or next(iter(getattr(found, "__path__", [])), "")
    if not Path(where).resolve().is_relative_to(root):
        problems.append(f"{module} was imported from {where}, outside the dataset")
    return found


for path in sorted((root / "tests" / "gpu").glob("*.py")):
    load("tests.gpu" if path.stem == "__init__" else f"tests.gpu.{path.stem}")
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            wanted = [(alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            package = ["tests", "gpu"][: 3 - node.level] if node.level else []
            module = ".".join(package + ([node.module] if node.module else []))
            wanted = [(module, alias.name) for alias in node.names]
        else:
            continue
        for module, name in wanted:
            if module.split(".")[0] not in COURSE:
                continue  # torch, pytest, triton: the machine's own
            found = load(module)
            if found is not None and name is not None and not hasattr(found, name):
                load(f"{module}.{name}")  # a submodule, or the name is missing
report.write_text(json.dumps(sorted(set(problems))))
sys.exit(1 if problems else 0)
"""


def _dataset_import_problems(folder: Path, tmp_path: Path) -> list[str]:
    """What the GPU tests in the dataset `folder` import that the folder lacks (see DATASET_IMPORTS)."""
    report = tmp_path / "imports.json"
    done = subprocess.run(  # -I: PYTHONPATH (the clone, in a test run) is not read
        [sys.executable, "-I", "-c", DATASET_IMPORTS, str(folder), str(report)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert report.is_file(), done.stderr
    problems = json.loads(report.read_text())
    assert (done.returncode == 0) == (problems == []), done.stderr
    return problems


def test_the_gpu_tests_import_only_what_the_dataset_holds(built, tmp_path) -> None:
    """The self-test runs tests/gpu/ on Kaggle from the dataset alone: every module it imports must ship there."""
    assert _dataset_import_problems(built.dataset, tmp_path) == []


def test_the_dataset_import_check_finds_what_the_dataset_lacks(built, tmp_path) -> None:
    folder = tmp_path / "dataset"
    shutil.copytree(built.dataset, folder, ignore=shutil.ignore_patterns("notebooks"))
    (folder / "tests" / "gpu" / "test_gpu_ch99.py").write_text(
        "from .missing import missing\n\n\n"
        "def test_one():\n"
        "    from tests.wrong_answers import wrong_answers\n"
        "    from helpers.exercises.solutions.ch13 import SOLUTIONS, WRONG_ANSWERS\n"
    )
    problems = _dataset_import_problems(folder, tmp_path)
    assert [p.split(":")[0] for p in problems] == [
        "helpers.exercises.solutions.ch13.WRONG_ANSWERS",
        "tests.wrong_answers",
    ], problems


def test_titles_slugify_as_the_kaggle_cli_does(built) -> None:
    slugify = pytest.importorskip("slugify", reason="python-slugify (a dependency of `kaggle`) is not installed")
    for folder in built.kernels:
        meta = _meta(folder, kaggle.KERNEL_METADATA)
        assert slugify.slugify(meta["title"]) == meta["id"].split("/")[1], meta["title"]
    for title in ("Ünïcode Tïtle 2,000", 'Don\'t panic: GPUs & "streams"', "  a--b  ", "PyTorch GPU · 07"):
        assert kaggle.slugify(title) == slugify.slugify(title), title


CLI_CHECK = r"""
import json, sys
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from requests.exceptions import HTTPError
from kaggle.api.kaggle_api_extended import KaggleApi

owner, folders = sys.argv[1], sys.argv[2:]
sent = []
class Client:
    def __init__(self):
        record = lambda request: sent.append(type(request).__name__) or SimpleNamespace(error="", ref="x", url="x")
        self.kernels = SimpleNamespace(kernels_api_client=SimpleNamespace(save_kernel=record))
        self.datasets = SimpleNamespace(dataset_api_client=SimpleNamespace(create_dataset=record))
@contextmanager
def fake_client():
    yield Client()
def not_found(*args, **kwargs):
    raise HTTPError("404: no such dataset yet")

api = KaggleApi()
api.config_values = {"username": owner}
api.build_kaggle_client = fake_client
api.dataset_status = not_found
api.upload_files = lambda *args, **kwargs: None
api.with_retry = lambda fn, *args, **kwargs: fn
results = {}
for folder in folders:
    try:
        if (Path(folder) / "kernel-metadata.json").is_file():
            api.kernels_push(folder)
        else:
            api.dataset_create_new(folder, dir_mode="zip")
        results[folder] = "ok"
    except Exception as exc:
        results[folder] = f"{type(exc).__name__}: {exc}"
print("RESULTS=" + json.dumps({"results": results, "sent": sent}))
"""


def _kaggle_cli_check(folders: list[Path], tmp_path: Path) -> tuple[dict, str]:
    env = dict(
        os.environ,
        KAGGLE_CONFIG_DIR=str(tmp_path / "no-credentials"),
        HTTPS_PROXY="http://127.0.0.1:9",
        HTTP_PROXY="http://127.0.0.1:9",
        NO_PROXY="",
    )
    env.pop("KAGGLE_API_TOKEN", None)
    env.pop("KAGGLE_USERNAME", None)
    env.pop("KAGGLE_KEY", None)
    done = subprocess.run(
        [sys.executable, "-c", CLI_CHECK, OWNER, *map(str, folders)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=tmp_path,
    )
    line = next((x for x in done.stdout.splitlines() if x.startswith("RESULTS=")), None)
    assert line, done.stdout + done.stderr
    return json.loads(line.removeprefix("RESULTS=")), done.stdout


@pytest.mark.skipif(importlib.util.find_spec("kaggle") is None, reason="the `kaggle` package is not installed")
def test_the_kaggle_cli_accepts_every_folder_offline(built, tmp_path) -> None:
    report, stdout = _kaggle_cli_check(built.folders, tmp_path)
    assert set(report["results"].values()) == {"ok"}, report["results"]
    assert report["sent"].count("ApiSaveKernelRequest") == len(built.kernels)
    assert report["sent"].count("ApiCreateDatasetRequest") == 1
    assert "does not resolve to the specified id" not in stdout, "a title that does not match its slug"


@pytest.mark.skipif(importlib.util.find_spec("kaggle") is None, reason="the `kaggle` package is not installed")
def test_the_offline_cli_check_can_fail(built, tmp_path) -> None:
    """The metadata formats are the CLI's to check: its offline run above refuses a bad folder."""
    bad_kernel = tmp_path / "bad-kernel"
    bad_kernel.mkdir()
    meta = _meta(built.kernels[0], kaggle.KERNEL_METADATA)
    (bad_kernel / meta["code_file"]).write_text("{}", encoding="utf-8")
    (bad_kernel / kaggle.KERNEL_METADATA).write_text(json.dumps(dict(meta, kernel_type="book")), encoding="utf-8")
    bad_dataset = tmp_path / "bad-dataset"
    bad_dataset.mkdir()
    ds = _meta(built.dataset, kaggle.DATASET_METADATA)
    (bad_dataset / kaggle.DATASET_METADATA).write_text(json.dumps(dict(ds, title="GPU")), encoding="utf-8")
    report, _ = _kaggle_cli_check([bad_kernel, bad_dataset], tmp_path)
    assert "kernel type" in report["results"][str(bad_kernel)]
    assert "title must be between 6 and 50" in report["results"][str(bad_dataset)]


def test_the_command_line_builds_and_says_how_to_publish(tmp_path, capsys) -> None:
    assert cli(["kaggle", "build", "--owner", "someone-else", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"kaggle datasets create -p {tmp_path / 'dataset'} -r zip" in out and "kaggle kernels push -p" in out
    assert _meta(tmp_path / "dataset", kaggle.DATASET_METADATA)["id"].startswith("someone-else/")
    assert cli(["kaggle", "build", "--owner", "Not A User", "--out", str(tmp_path)]) == 2
    assert "Kaggle build failed" in capsys.readouterr().out


def test_a_rebuild_replaces_each_folder_whole(tmp_path, settings) -> None:
    """Each folder is built beside the old one and swapped in: stale files go, no staging folder stays.

    The disk faults during a build are tested in test_disk_faults.py.
    """
    first = kaggle.build_all(OWNER, out_dir=tmp_path, settings=settings)
    (first.kernels[0] / "stale.txt").write_text("from an older build")
    (first.dataset / "helpers" / "gone.py").write_text("")
    again = kaggle.build_all("someone-else", out_dir=tmp_path, settings=settings)
    assert not (again.kernels[0] / "stale.txt").exists() and not (again.dataset / "helpers" / "gone.py").exists()
    assert _meta(again.kernels[0], kaggle.KERNEL_METADATA)["id"].startswith("someone-else/")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(f.name for f in again.folders)


def test_the_default_owner_comes_from_kaggle_metadata(tmp_path, settings, capsys) -> None:
    result = kaggle.build_all(out_dir=tmp_path, settings=settings)
    assert _meta(result.kernels[0], kaggle.KERNEL_METADATA)["id"].startswith(settings["owner"] + "/")
    if settings["owner"] == kaggle.PLACEHOLDER_OWNER:
        assert kaggle.main(None, str(tmp_path)) == 0
        assert "placeholder" in capsys.readouterr().out, "a build for the placeholder owner says so"


# ------------------------------------------------------------------------------------------------
# Bad input
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "owner, message",
    [
        (None, "No Kaggle owner"),
        ("", "No Kaggle owner"),
        ("Alice", "must be lowercase"),
        ("al ice", "not a user name"),
        ("-alice", "not a user name"),
        ("a/b", "not a user name"),
    ],
)
def test_bad_owners_are_refused_clearly(owner, message) -> None:
    with pytest.raises(kaggle.KaggleSetupError, match=message):
        kaggle.check_owner(owner)


def test_good_owners_pass() -> None:
    for owner in ("alice", "alice-b", "alice_b", "a1"):
        assert kaggle.check_owner(owner) == owner


@pytest.mark.parametrize("slug", ["Has-Caps", "under_score", "-lead", "trail-", "two--hyphens", "sp ace", ""])
def test_bad_slugs_are_refused(slug) -> None:
    with pytest.raises(kaggle.KaggleSetupError, match="not a Kaggle slug"):
        kaggle.check_slug(slug)


def test_slug_length_is_checked() -> None:
    with pytest.raises(kaggle.KaggleSetupError, match="has 3 characters"):
        kaggle.check_slug("abc", "dataset slug", kaggle.DATASET_SLUG_LENGTH)


def test_bad_settings_files_are_refused_clearly(tmp_path, settings) -> None:
    with pytest.raises(kaggle.KaggleSetupError, match="is missing"):
        kaggle.load_settings(tmp_path / "nope.json")
    path = tmp_path / "kaggle-metadata.json"
    path.write_text("{", encoding="utf-8")
    with pytest.raises(kaggle.KaggleSetupError, match="not valid JSON"):
        kaggle.load_settings(path)
    broken = {k: v for k, v in settings.items() if k != "machine_shape"}
    broken["enable_gpu"] = "yes"
    path.write_text(json.dumps(broken), encoding="utf-8")
    with pytest.raises(kaggle.KaggleSetupError, match=r"lacks 'machine_shape'.*'enable_gpu' should be a bool"):
        kaggle.load_settings(path)
    path.write_text(json.dumps(dict(settings, machine_shape=kaggle.T4_X2, enable_gpu=False)), encoding="utf-8")
    with pytest.raises(kaggle.KaggleSetupError, match="is the GPU T4 ×2, but enable_gpu is false"):
        kaggle.load_settings(path)


def test_a_title_too_long_for_kaggle_is_shortened_or_overridden(tmp_path, settings) -> None:
    nb = tmp_path / "42_a_very_long_chapter_name.ipynb"
    nb.write_text(json.dumps({"cells": [{"cell_type": "markdown", "source": "# 42 · " + "Long words " * 5}]}))
    title = kaggle.kernel_for(nb, settings).title
    assert len(title) <= 50 and title.endswith("…") and title.startswith(f"{settings['title_prefix']} 42 · Long")
    shorter = dict(settings, short_titles={"42": "Short enough"})
    assert kaggle.kernel_for(nb, shorter).title == f"{settings['title_prefix']} 42 · Short enough"
    assert kaggle.shorten("Several GPUs: DataParallel and DistributedDataParallel", 26) == "Several GPUs"
    assert kaggle.shorten("Devices", 26) == "Devices"
    with pytest.raises(kaggle.KaggleSetupError, match="no room"):
        kaggle.shorten("Incomprehensibilities", 5)


def test_build_refuses_bad_settings(tmp_path, settings) -> None:
    with pytest.raises(kaggle.KaggleSetupError, match="No Kaggle owner"):
        kaggle.build_all("", out_dir=tmp_path, settings=settings)
    bad_prefix = dict(settings, title_prefix="Something else")
    with pytest.raises(kaggle.KaggleSetupError, match="should slugify to slug_prefix"):
        kaggle.build_all(OWNER, out_dir=tmp_path, settings=bad_prefix)
    bad_dataset_slug = copy.deepcopy(settings)
    bad_dataset_slug["helpers_dataset"]["slug"] = "Helpers"
    with pytest.raises(kaggle.KaggleSetupError, match="not a Kaggle slug"):
        kaggle.build_all(OWNER, out_dir=tmp_path, settings=bad_dataset_slug)
    with pytest.raises(kaggle.KaggleSetupError, match="no notebooks to publish"):
        kaggle.build_all(OWNER, out_dir=tmp_path, settings=settings, notebooks_dir=tmp_path / "empty")


def test_two_notebooks_with_the_same_slug_are_refused(tmp_path, settings) -> None:
    for name in ("01_alpha.ipynb", "01_beta.ipynb"):
        (tmp_path / name).write_text(json.dumps({"cells": [{"cell_type": "markdown", "source": "# 01 · Same"}]}))
    with pytest.raises(kaggle.KaggleSetupError, match="same Kaggle slug: pytorch-gpu-course-01-same"):
        kaggle.build_all(OWNER, out_dir=tmp_path / "out", settings=settings, notebooks_dir=tmp_path)


# ------------------------------------------------------------------------------------------------
# Open in Kaggle
# ------------------------------------------------------------------------------------------------


def test_open_in_kaggle_url(settings) -> None:
    repo = settings["repository"]
    expected = f"https://kaggle.com/kernels/welcome?src={repo}/blob/{settings['branch']}/notebooks/01_devices.ipynb"
    assert kaggle.open_in_kaggle_url("01_devices.ipynb", settings) == expected
    assert kaggle.open_in_kaggle_url("notebooks/01_devices.ipynb", settings) == expected
    assert kaggle.open_in_kaggle_url(ROOT / "notebooks" / "01_devices.ipynb", settings) == expected
    assert f"]({expected})" in kaggle.readme_chapter_link("01_devices.ipynb", settings)
    assert kaggle.open_in_kaggle_url("01_devices.ipynb") == expected, "defaults to kaggle-metadata.json"


def test_open_in_colab_url(settings) -> None:
    owner_repo = settings["repository"].removeprefix("https://github.com/")
    expected = (
        f"https://colab.research.google.com/github/{owner_repo}/blob/{settings['branch']}/notebooks/01_devices.ipynb"
    )
    assert kaggle.open_in_colab_url("01_devices.ipynb", settings) == expected
    assert kaggle.open_in_colab_url(ROOT / "notebooks" / "01_devices.ipynb", settings) == expected
    assert kaggle.readme_chapter_link("01_devices.ipynb", settings).endswith(f"]({expected})")
    with pytest.raises(kaggle.KaggleSetupError, match="GitHub address"):
        kaggle.open_in_colab_url("01_devices.ipynb", dict(settings, repository="https://gitlab.com/a/b"))


@pytest.mark.parametrize(
    "change, notebook, message",
    [
        ({"repository": "https://gitlab.com/a/b"}, "01_devices.ipynb", "GitHub address"),
        ({"repository": "github.com/a/b"}, "01_devices.ipynb", "GitHub address"),
        ({"repository": "https://github.com/only-owner"}, "01_devices.ipynb", "GitHub address"),
        ({"branch": ""}, "01_devices.ipynb", "should name a git branch"),
        ({"branch": "my branch"}, "01_devices.ipynb", "should name a git branch"),
        ({}, "01_devices.py", "not a notebook"),
        ({}, "/elsewhere/01_devices.ipynb", "not inside the repository"),
    ],
)
def test_open_in_kaggle_url_bad_input(settings, change, notebook, message) -> None:
    with pytest.raises(kaggle.KaggleSetupError, match=message):
        kaggle.open_in_kaggle_url(notebook, dict(settings, **change))


def test_repository_with_dot_git_and_trailing_slash(settings) -> None:
    url = kaggle.open_in_kaggle_url("01_devices.ipynb", dict(settings, repository="https://github.com/a/b.git/"))
    assert url == "https://kaggle.com/kernels/welcome?src=https://github.com/a/b/blob/main/notebooks/01_devices.ipynb"
