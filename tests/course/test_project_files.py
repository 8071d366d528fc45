"""Project files agree with each other: dependencies, Kaggle settings, lint, README commands."""

from __future__ import annotations

import json
import re
import tomllib
import unicodedata
from pathlib import Path

import yaml

from coursetools import authoring
from coursetools.wheelhouse import requirement_name

ROOT = Path(__file__).resolve().parents[2]


def test_environment_yml_declares_the_same_dependencies_as_pyproject() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    own = f"{project['name']}[selftest]"  # course and dev take the selftest extra by naming the package
    wanted = set(project["dependencies"]) | set(extras["selftest"]) | set(extras["course"]) | set(extras["dev"])
    wanted.discard(own)
    env = yaml.safe_load((ROOT / "environment.yml").read_text(encoding="utf-8"))
    pip_lists = [d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d]
    assert len(pip_lists) == 1, "environment.yml lists the Python packages under one `pip:` entry"
    declared = set(pip_lists[0])
    assert declared == wanted, (
        f"only in pyproject.toml: {sorted(wanted - declared)}; only in environment.yml: {sorted(declared - wanted)}"
    )
    python = [d for d in env["dependencies"] if isinstance(d, str) and d.startswith("python")]
    assert python and project["requires-python"].lstrip(">=") in python[0]


TOOLING = ("jupyterlab", "ipykernel", "nbconvert", "nbval", "papermill", "nbformat", "nbclient", "jupytext", "kaggle")


def test_the_learner_package_needs_no_course_tooling() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    runtime = {requirement_name(r) for r in project["project"]["dependencies"]}
    assert not runtime & set(TOOLING), f"learners would install tooling: {sorted(runtime & set(TOOLING))}"
    packages = ["helpers", "helpers.exercises", "helpers.exercises.solutions"]
    assert project["tool"]["setuptools"]["packages"] == packages, "only helpers ships"
    never = re.compile(r"^\s*(?:from|import)\s+(coursetools|nbval|nbconvert|nbformat|nbclient|jupyterlab)\b", re.M)
    top_level = re.compile(r"^(?:from|import)\s+(papermill)\b", re.M)
    for path in sorted((ROOT / "helpers").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        found = never.findall(text) + top_level.findall(text)
        assert not found, f"{path.relative_to(ROOT)} imports tooling: {found}"
        assert "papermill" not in text, f"{path.relative_to(ROOT)} uses papermill"
    tools = ("runner", "kaggle", "authoring", "selftest", "execute")
    assert not [t for t in tools if (ROOT / "helpers" / f"{t}.py").exists()], "tooling modules live in coursetools/"


def test_torch_range_admits_kaggle_and_ci() -> None:
    from packaging.specifiers import SpecifierSet

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    torch_req = next(r for r in project["dependencies"] if requirement_name(r) == "torch")
    spec = SpecifierSet(torch_req[len("torch") :])
    assert "2.10.0" in spec, "Kaggle runs torch 2.10"
    assert "2.13.0" in spec, "CI installs torch 2.13.0"
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    pinned = re.search(r"torch==([\d.]+)", makefile)
    assert pinned and pinned.group(1) in spec, "the Makefile pins a torch inside the supported range"


def test_kaggle_metadata_has_the_collection_settings() -> None:
    meta = json.loads((ROOT / "kaggle-metadata.json").read_text(encoding="utf-8"))
    for key in (
        "owner",
        "slug_prefix",
        "repository",
        "machine_shape",
        "enable_gpu",
        "enable_internet",
        "is_private",
        "helpers_dataset",
    ):
        assert key in meta, f"kaggle-metadata.json lacks {key!r}"
    assert meta["machine_shape"] == "NvidiaTeslaT4", "GPU T4 x2 is Kaggle's GPU accelerator"
    assert meta["enable_gpu"] is True
    assert meta["helpers_dataset"]["slug"] == authoring.HELPERS_DATASET, "the setup cell looks for this slug"
    assert authoring.HELPERS_PIP_SOURCE == f"git+{meta['repository']}", "the setup cell pip-installs this repository"


def test_readme_gives_the_two_commands_and_ci_runs_the_test_one() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "make run" in readme and "make test" in readme
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r'^\s*make "\$1"', ci, re.M) and re.search(r"^stack test ", ci, re.M), (
        ".ci/run must run the README's test command (through its timed `stack` function)"
    )
    for chapter in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        assert chapter.name in readme, f"the README's chapter table lacks {chapter.name}"


def test_make_test_lints_and_formats_with_the_pinned_ruff() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    lint = re.search(r"^lint:.*\n((?:\t.*\n)+)", makefile, re.M)
    assert lint and "ruff check" in lint.group(1) and "ruff format --check" in lint.group(1)
    assert re.search(r"^test: .*\blint\b", makefile, re.M), "make test (what CI runs) lints first"


def test_readme_links_every_chapter_to_kaggle_and_colab_from_the_configured_repository() -> None:
    from coursetools.kaggle import readme_chapter_link

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for chapter in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        assert readme_chapter_link(chapter.name) in readme, f"{chapter.name}: stale Kaggle or Colab links in the README"


#: Where a chapter links for its sources: docs/sources.md in the public repository (kaggle-metadata.json's).
SOURCES_URL = "https://github.com/pytorch-gpu-course/pytorch-gpu-course/blob/main/docs/sources.md"

# Built from pieces so that this file does not match itself.
OUTSIDE = re.compile("|".join(("facts" + r"\.md", "shared" + "/notes", "course" + " notes")))


def test_everything_the_course_cites_is_in_the_repository() -> None:
    sources = (ROOT / "docs" / "sources.md").read_text(encoding="utf-8")
    sections = set(re.findall(r"^## §(\d+)", sources, re.M))
    files = [
        *ROOT.glob("helpers/**/*.py"),
        *ROOT.glob("coursetools/*.py"),
        *ROOT.glob("tests/**/*.py"),
        *ROOT.glob("notebooks/*.ipynb"),
        ROOT / "README.md",
        ROOT / "CONTRIBUTING.md",
    ]
    anchors = {_github_anchor(h) for h in re.findall(r"^#+ (.+)$", sources, re.M)}
    cited = 0
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert not OUTSIDE.search(text), f"{path.relative_to(ROOT)} cites a file outside the repository"
        for section in re.findall(r"docs/sources\.md §(\d+)", text):
            assert section in sections, (
                f"{path.relative_to(ROOT)} cites docs/sources.md §{section}, which does not exist"
            )
            assert path.suffix != ".ipynb", (
                f"{path.name} cites docs/sources.md §{section} as plain text, which a learner on Kaggle cannot follow: "
                f"link it, {SOURCES_URL}#<the heading's anchor>"
            )
        for anchor in re.findall(re.escape(SOURCES_URL) + r"#([\w-]+)", text):
            assert anchor in anchors, f"{path.relative_to(ROOT)} links to #{anchor}, no heading of docs/sources.md"
            cited += 1
    assert cited >= 3, "the chapters' external figures link to docs/sources.md"


def _github_anchor(heading: str) -> str:
    """The anchor GitHub gives a markdown heading: lower case, punctuation and symbols dropped, spaces to hyphens."""
    kept = (ch for ch in heading.strip().lower() if ch in " -_" or unicodedata.category(ch)[0] in "LN")
    return "".join(kept).replace(" ", "-")


def test_links_to_sources_use_the_repository_kaggle_names() -> None:
    settings = json.loads((ROOT / "kaggle-metadata.json").read_text(encoding="utf-8"))
    assert SOURCES_URL == f"{settings['repository']}/blob/{settings['branch']}/docs/sources.md"
    assert _github_anchor("§1 Kaggle's platform") == "1-kaggles-platform"


def test_links_between_chapters_name_the_chapter_and_reach_a_heading() -> None:
    """A chapter links another by its file and heading (`[chapter 01 §7](01_devices.ipynb#7-...)`): the site follows
    it to the heading, JupyterLab opens the chapter; the words name the chapter and section, so that a reader on
    Kaggle or Colab, where the link leads nowhere, can find it too."""
    chapters = {p.name: p for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")}
    for path in chapters.values():
        text = "".join("".join(c["source"]) for c in json.loads(path.read_text(encoding="utf-8"))["cells"])
        for words, target, anchor in re.findall(r"\[([^\]]*)\]\((\d\d_[\w.]*?\.ipynb)(?:#([\w-]+))?\)", text):
            assert target in chapters, f"{path.name} links to {target}, no such chapter"
            assert re.search(rf"\bchapter {target[:2]}\b", words), (
                f"{path.name}: the link to {target} says which chapter"
            )
            if anchor:
                cells = json.loads(chapters[target].read_text(encoding="utf-8"))["cells"]
                prose = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
                headings = re.findall(r"^#+ (.+)$", prose, re.M)
                assert anchor in {_github_anchor(h) for h in headings}, f"{path.name}: no heading #{anchor} in {target}"
