"""Publish the course on Kaggle: `python -m coursetools kaggle build [--owner NAME]`.

`build_all()` writes, under `build/kaggle/`:

* one folder per chapter (every `notebooks/NN_*.ipynb`, plus the GPU self-test notebook), each
  ready for `kaggle kernels push -p DIR`: the notebook and a `kernel-metadata.json` that turns
  the GPU on (GPU T4 ×2) and attaches the helpers dataset;
* `dataset/`, ready for `kaggle datasets create -p DIR -r zip`: a copy of the `helpers` package,
  the self-test's part of `coursetools` (`SELFTEST_MODULES`), the GPU tests and chapters it runs,
  and `dataset-metadata.json`.

The collection's settings live in one place, `kaggle-metadata.json` at the repository root.
The build checks what the course itself chooses (the owner, the slugs it derives from titles, the
accelerator, the helpers dataset); the metadata formats are the Kaggle CLI's to check when it
pushes (the tests run it offline on every folder). `open_in_kaggle_url` makes the "Open in
Kaggle" link of a notebook from the repository address.
"""

from __future__ import annotations

import json
import re
import shutil
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from helpers import __version__ as COURSE_VERSION

from . import BUILD, NOTEBOOKS, ROOT, SELFTEST_MODULES
from .execute import discover_chapters
from .folders import WriteFault, build_junk, staged_folder
from .selftest import GPU_TESTS_DIR

SETTINGS_FILE = ROOT / "kaggle-metadata.json"
BUILD_KAGGLE = BUILD / "kaggle"
SELF_TEST_NOTEBOOK = NOTEBOOKS / "gpu_self_test.ipynb"
KERNEL_METADATA = "kernel-metadata.json"
DATASET_METADATA = "dataset-metadata.json"
DATASET_FOLDER = "dataset"
PLACEHOLDER_OWNER = "your-kaggle-username"

#: The machine shape of the editor's "GPU T4 ×2", the accelerator every chapter is written for.
T4_X2 = "NvidiaTeslaT4"
# Slug syntax the CLI enforces (_validate_slug_syntax); owners may also use underscores.
SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
OWNER = re.compile(r"^[a-z0-9]+(?:[_-][a-z0-9]+)*$")
KERNEL_TITLE_LENGTH = (5, 50)  # the CLI wants five characters or more; the server refuses more than 50
DATASET_SLUG_LENGTH = (6, 50)  # the docs say 3-50, the CLI (2.x) refuses fewer than 6: the stricter rule


class KaggleSetupError(ValueError):
    """The Kaggle settings or a generated file break one of Kaggle's rules (the message says which)."""


# ----------------------------------------------------------------------------------------------
# Names
# ----------------------------------------------------------------------------------------------


def slugify(text: str) -> str:
    """The slug Kaggle derives from a title, as python-slugify (the CLI's own) does for plain titles.

    Accents are folded to ASCII, commas between digits dropped, and every other run of characters
    that is not a lowercase letter or digit becomes one hyphen.
    """
    text = unicodedata.normalize("NFKD", str(text)).encode("ascii", "ignore").decode("ascii").lower()
    text = re.sub(r"(?<=\d),(?=\d)", "", text)
    return re.sub(r"[^a-z0-9]+", "-", text).strip("-")


def check_owner(owner: str | None) -> str:
    """Return `owner` if it can be a Kaggle user name in an id, else raise with what is wrong."""
    if owner is None or not str(owner).strip():
        raise KaggleSetupError(
            'No Kaggle owner given: pass --owner YOUR_KAGGLE_USERNAME or set "owner" in kaggle-metadata.json.'
        )
    owner = str(owner)
    if owner != owner.lower():
        raise KaggleSetupError(f"Kaggle owner {owner!r} must be lowercase, as in your profile's URL: {owner.lower()!r}")
    if not OWNER.match(owner):
        raise KaggleSetupError(
            f"Kaggle owner {owner!r} is not a user name: use lowercase letters, digits, and single hyphens or "
            "underscores between them (as in https://www.kaggle.com/<owner>)."
        )
    return owner


def check_slug(slug: str, what: str = "slug", length: tuple[int, int] | None = None) -> str:
    """Return `slug` if Kaggle accepts it (lowercase, digits, single inner hyphens, length), else raise."""
    if not isinstance(slug, str) or not SLUG.match(slug):
        raise KaggleSetupError(
            f"{what} {slug!r} is not a Kaggle slug: use lowercase letters and digits joined by single hyphens "
            "(no spaces, underscores, or leading/trailing hyphen)."
        )
    if length and not length[0] <= len(slug) <= length[1]:
        raise KaggleSetupError(f"{what} {slug!r} has {len(slug)} characters; Kaggle wants {length[0]} to {length[1]}.")
    return slug


def open_in_kaggle_url(notebook: str | Path, settings: dict[str, Any] | None = None) -> str:
    """The "Open in Kaggle" link of a repository notebook: Kaggle imports it from GitHub.

    `https://kaggle.com/kernels/welcome?src=https://github.com/OWNER/REPO/blob/BRANCH/notebooks/NB`
    """
    return f"https://kaggle.com/kernels/welcome?src={github_url(notebook, settings)}"


def open_in_colab_url(notebook: str | Path, settings: dict[str, Any] | None = None) -> str:
    """The "Open in Colab" link of a repository notebook: Colab opens it from GitHub (with a free T4
    when the runtime type is GPU; the set-up cell installs the helpers there with pip).

    `https://colab.research.google.com/github/OWNER/REPO/blob/BRANCH/notebooks/NB`
    """
    return github_url(notebook, settings).replace("https://github.com/", "https://colab.research.google.com/github/", 1)


def github_url(notebook: str | Path, settings: dict[str, Any] | None = None) -> str:
    """A repository notebook on GitHub: `https://github.com/OWNER/REPO/blob/BRANCH/notebooks/NB`."""
    settings = settings if settings is not None else load_settings()
    repo = str(settings.get("repository", "")).rstrip("/")
    branch = str(settings.get("branch", "")).strip()
    m = re.fullmatch(r"https://github\.com/([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+?)(?:\.git)?", repo)
    if not m:
        raise KaggleSetupError(
            f'kaggle-metadata.json\'s "repository" should be a GitHub address like '
            f"https://github.com/OWNER/REPO, not {repo!r}"
        )
    if not branch or any(c.isspace() for c in branch):
        raise KaggleSetupError(f'kaggle-metadata.json\'s "branch" should name a git branch, not {branch!r}')
    path = Path(notebook)
    if path.suffix != ".ipynb":
        raise KaggleSetupError(f"{notebook} is not a notebook (.ipynb)")
    if path.is_absolute():
        try:
            path = path.resolve().relative_to(ROOT)
        except ValueError:
            raise KaggleSetupError(f"{notebook} is not inside the repository {ROOT}") from None
    elif len(path.parts) == 1:
        path = Path("notebooks") / path
    return f"https://github.com/{m.group(1)}/{m.group(2)}/blob/{quote(branch)}/{quote(path.as_posix())}"


def readme_chapter_link(notebook: str | Path, settings: dict[str, Any] | None = None) -> str:
    """The Markdown badges the README's chapter table uses for a notebook: Kaggle, then Colab."""
    kaggle = "https://kaggle.com/static/images/open-in-kaggle.svg"
    colab = "https://colab.research.google.com/assets/colab-badge.svg"
    return (
        f"[![Open in Kaggle]({kaggle})]({open_in_kaggle_url(notebook, settings)}) "
        f"[![Open in Colab]({colab})]({open_in_colab_url(notebook, settings)})"
    )


# ----------------------------------------------------------------------------------------------
# Settings
# ----------------------------------------------------------------------------------------------

SETTINGS_REQUIRED = {
    "owner": str,
    "slug_prefix": str,
    "title_prefix": str,
    "repository": str,
    "branch": str,
    "machine_shape": str,
    "enable_gpu": bool,
    "enable_internet": bool,
    "is_private": bool,
    "helpers_dataset": dict,
}


def load_settings(path: Path = SETTINGS_FILE) -> dict[str, Any]:
    """Read kaggle-metadata.json and check the fields the build needs."""
    try:
        settings = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise KaggleSetupError(f"{path} is missing: it holds the course's Kaggle settings") from None
    except json.JSONDecodeError as exc:
        raise KaggleSetupError(f"{path} is not valid JSON: {exc}") from None
    problems = []
    for key, kind in SETTINGS_REQUIRED.items():
        if key not in settings:
            problems.append(f"lacks {key!r}")
        elif not isinstance(settings[key], kind):
            problems.append(f"{key!r} should be a {kind.__name__}, not {settings[key]!r}")
    dataset = settings.get("helpers_dataset")
    if isinstance(dataset, dict):
        for key in ("slug", "title", "license"):
            if not isinstance(dataset.get(key), str):
                problems.append(f"helpers_dataset lacks the text field {key!r}")
    if settings.get("machine_shape") == T4_X2 and settings.get("enable_gpu") is False:
        problems.append(f"machine_shape {T4_X2!r} is the GPU T4 ×2, but enable_gpu is false")
    if problems:
        raise KaggleSetupError(f"{path}: " + "; ".join(problems))
    return settings


# ----------------------------------------------------------------------------------------------
# Building the folders
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Kernel:
    """One notebook as a Kaggle kernel."""

    notebook: Path
    slug: str
    title: str

    @property
    def folder_name(self) -> str:
        return self.slug


def chapter_title(notebook: Path) -> str:
    """The chapter's title from its first heading (`# 01 · Devices` → `Devices`), else from its file name."""
    nb = json.loads(Path(notebook).read_text(encoding="utf-8"))
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "markdown":
            continue
        text = "".join(cell.get("source", ""))
        m = re.search(r"^#\s+(.+)$", text, re.M)
        if m:
            return re.sub(r"^\d\d\s*[·:.\-–—]\s*", "", m.group(1).strip()).strip()
    return Path(notebook).stem.split("_", 1)[-1].replace("_", " ")


def shorten(name: str, room: int) -> str:
    """Fit a chapter title into `room` characters: drop a subtitle after ':', then whole words (…)."""
    if len(name) <= room:
        return name
    head = name.split(":", 1)[0].strip()
    if len(head) <= room:
        return head
    words = head.split()
    while words and len(" ".join(words)) + 1 > room:
        words.pop()
    if not words:
        raise KaggleSetupError(f"no room for the chapter title {name!r} in a Kaggle title ({room} characters left)")
    return " ".join(words).rstrip(",;.-–—") + "…"


def kernel_for(notebook: Path, settings: dict[str, Any]) -> Kernel:
    """Slug and title of a notebook's kernel: "<title_prefix> NN · <chapter title>"; the slug is the title's.

    Kaggle refuses kernel titles longer than 50 characters: a longer chapter title is shortened
    (`shorten`) unless `short_titles` in kaggle-metadata.json maps the notebook's stem or number
    to a short title of its own.
    """
    notebook = Path(notebook)
    short = settings.get("short_titles", {})
    number = notebook.name[:2] if notebook.name[:2].isdigit() else ""
    name = short.get(notebook.stem) or (short.get(number) if number else None) or chapter_title(notebook)
    prefix = f"{settings['title_prefix']} {number} · " if number else f"{settings['title_prefix']} · "
    title = prefix + shorten(name, KERNEL_TITLE_LENGTH[1] - len(prefix))
    slug = slugify(title)
    if not slug.startswith(slugify(settings["slug_prefix"])):
        raise KaggleSetupError(
            f"title_prefix {settings['title_prefix']!r} should slugify to slug_prefix {settings['slug_prefix']!r}"
        )
    check_slug(slug, f"{notebook.name}'s kernel slug", (5, 50))
    return Kernel(notebook=notebook, slug=slug, title=title)


def notebooks_to_publish(notebooks_dir: Path = NOTEBOOKS) -> list[Path]:
    """Every chapter notebook (NN_*.ipynb) and the GPU self-test."""
    found = discover_chapters(notebooks_dir)
    self_test = Path(notebooks_dir) / SELF_TEST_NOTEBOOK.name
    return found + ([self_test] if self_test.is_file() else [])


def dataset_ref(owner: str, settings: dict[str, Any]) -> str:
    slug = check_slug(settings["helpers_dataset"]["slug"], "helpers dataset slug", DATASET_SLUG_LENGTH)
    return f"{check_owner(owner)}/{slug}"


def kernel_metadata(kernel: Kernel, owner: str, settings: dict[str, Any]) -> dict[str, Any]:
    """The kernel-metadata.json of one notebook."""
    meta: dict[str, Any] = {
        "id": f"{check_owner(owner)}/{kernel.slug}",
        "title": kernel.title,
        "code_file": kernel.notebook.name,
        "language": settings.get("language", "python"),
        "kernel_type": settings.get("kernel_type", "notebook"),
        "is_private": settings["is_private"],
        "enable_gpu": settings["enable_gpu"],
        "enable_tpu": settings.get("enable_tpu", False),
        "enable_internet": settings["enable_internet"],
        "machine_shape": settings["machine_shape"],
        "dataset_sources": [dataset_ref(owner, settings)],
        "competition_sources": [],
        "kernel_sources": [],
        "model_sources": [],
        "keywords": list(settings.get("keywords", [])),
    }
    if "docker_image_pinning_type" in settings:
        meta["docker_image_pinning_type"] = settings["docker_image_pinning_type"]
    return meta


def kaggle_notebook_metadata(settings: dict[str, Any]) -> dict[str, Any]:
    """The `metadata.kaggle` block Kaggle itself writes into notebooks it saves (accelerator, internet)."""
    return {
        "accelerator": settings["machine_shape"][0].lower() + settings["machine_shape"][1:],
        "isGpuEnabled": settings["enable_gpu"],
        "isInternetEnabled": settings["enable_internet"],
        "language": settings.get("language", "python"),
        "sourceType": settings.get("kernel_type", "notebook"),
    }


def dataset_metadata(owner: str, settings: dict[str, Any]) -> dict[str, Any]:
    """The dataset-metadata.json of the helpers dataset."""
    ds = settings["helpers_dataset"]
    meta: dict[str, Any] = {
        "title": ds["title"],
        "id": dataset_ref(owner, settings),
        "licenses": [{"name": ds["license"]}],
        "keywords": list(ds.get("keywords", settings.get("keywords", []))),
    }
    for key in ("subtitle", "description"):
        if ds.get(key):
            meta[key] = ds[key]
    if "description" not in meta:
        meta["description"] = (
            f"Version {COURSE_VERSION} of the `helpers` package of the notebook course at "
            f"{settings['repository']}, with the GPU tests and chapter notebooks its self-test runs. "
            "Attach it to a chapter notebook (Add Input → Datasets) and the setup cell finds it under "
            "/kaggle/input; a chapter written for another version says so and how to update."
        )
    return meta


def _named(path: Path, exc: OSError) -> OSError:
    """`exc` naming `path`: a write refused by a full disk names no file."""
    if exc.filename is None and not isinstance(exc, shutil.Error):
        exc.filename = str(path)
    return exc


def _write_text(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise _named(path, exc) from None


def _copy(source: Path, target: Path) -> None:
    try:
        shutil.copy2(source, target)
    except OSError as exc:
        raise _named(target, exc) from None


def _write_json(path: Path, data: dict[str, Any]) -> None:
    _write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def build_kernel(kernel: Kernel, owner: str, settings: dict[str, Any], out_dir: Path) -> Path:
    """Write one kernel folder: the notebook (with Kaggle's accelerator metadata) and kernel-metadata.json."""
    nb = json.loads(kernel.notebook.read_text(encoding="utf-8"))
    nb.setdefault("metadata", {})["kaggle"] = kaggle_notebook_metadata(settings)

    def fill(folder: Path) -> None:
        _write_text(folder / kernel.notebook.name, json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
        _write_json(folder / KERNEL_METADATA, kernel_metadata(kernel, owner, settings))

    return staged_folder(Path(out_dir) / kernel.folder_name, fill)


def build_dataset(owner: str, settings: dict[str, Any], out_dir: Path, root: Path = ROOT) -> Path:
    """Write the helpers dataset folder: what the self-test notebook needs on Kaggle, and nothing else.

    `helpers/` (the learner package, which carries the course's version), the self-test's modules of
    `coursetools/`, `tests/gpu/` (the GPU tests, their conftest and `missing`), the chapter notebooks
    the self-test executes, and dataset-metadata.json.
    """
    return staged_folder(Path(out_dir) / DATASET_FOLDER, lambda folder: _fill_dataset(folder, owner, settings, root))


def _fill_dataset(folder: Path, owner: str, settings: dict[str, Any], root: Path) -> None:
    root = Path(root)
    shutil.copytree(root / "helpers", folder / "helpers", ignore=build_junk)
    (folder / "coursetools").mkdir()
    for name in SELFTEST_MODULES:
        _copy(root / "coursetools" / name, folder / "coursetools" / name)
    gpu_tests = folder / GPU_TESTS_DIR
    gpu_tests.mkdir(parents=True)
    _copy(root / "tests" / "__init__.py", folder / "tests" / "__init__.py")
    for path in sorted((root / GPU_TESTS_DIR).glob("*.py")):
        _copy(path, gpu_tests / path.name)
    notebooks = folder / "notebooks"
    notebooks.mkdir()
    for path in discover_chapters(root / "notebooks"):
        _copy(path, notebooks / path.name)
    _write_json(folder / DATASET_METADATA, dataset_metadata(owner, settings))


@dataclass(frozen=True)
class BuildResult:
    kernels: list[Path]
    dataset: Path

    @property
    def folders(self) -> list[Path]:
        return [*self.kernels, self.dataset]


def build_all(
    owner: str | None = None,
    *,
    out_dir: Path = BUILD_KAGGLE,
    settings: dict[str, Any] | None = None,
    notebooks_dir: Path = NOTEBOOKS,
    root: Path = ROOT,
) -> BuildResult:
    """Build every kernel folder and the dataset folder; raise KaggleSetupError on a setting the course got wrong."""
    settings = settings if settings is not None else load_settings()
    owner = check_owner(owner if owner is not None else settings.get("owner"))
    notebooks = notebooks_to_publish(notebooks_dir)
    if not notebooks:
        raise KaggleSetupError(f"no notebooks to publish in {notebooks_dir}")
    kernels = [kernel_for(nb, settings) for nb in notebooks]
    slugs = [k.slug for k in kernels]
    duplicates = sorted({s for s in slugs if slugs.count(s) > 1})
    if duplicates:
        raise KaggleSetupError(f"two notebooks would get the same Kaggle slug: {', '.join(duplicates)}")
    out_dir = Path(out_dir)
    return BuildResult(
        kernels=[build_kernel(k, owner, settings, out_dir) for k in kernels],
        dataset=build_dataset(owner, settings, out_dir, root),
    )


def main(owner: str | None, out_dir: str | None) -> int:
    """`python -m coursetools kaggle build`: build, then print the commands that publish the folders."""
    try:
        settings = load_settings()
        result = build_all(owner, out_dir=Path(out_dir) if out_dir else BUILD_KAGGLE, settings=settings)
    except KaggleSetupError as exc:
        print(f"Kaggle build failed: {exc}")
        return 2
    except WriteFault as exc:  # one sentence, no traceback; every folder is whole or as it was
        print(f"Kaggle build failed: {str(exc)[:1].lower()}{str(exc)[1:]}")
        return 1
    chosen = owner if owner is not None else settings["owner"]
    if chosen == PLACEHOLDER_OWNER:
        print(
            f"Note: the owner is the placeholder {PLACEHOLDER_OWNER!r}; pass --owner YOUR_KAGGLE_USERNAME "
            "(or set it in kaggle-metadata.json) before pushing."
        )
    print(f"Built {len(result.kernels)} notebooks and the helpers dataset for Kaggle user {chosen!r}.\nPublish with:")
    print(f"  kaggle datasets create -p {result.dataset} -r zip")
    print(f"  (to update it later: kaggle datasets version -p {result.dataset} -r zip -m 'what changed')")
    first = result.kernels[0].parent
    print(f'  for d in {first}/*/; do [ -f "$d/{KERNEL_METADATA}" ] && kaggle kernels push -p "$d"; done')
    return 0
