"""GPU runs kept: what a self-test on a GPU executed and measured, as files a reader and a maintainer can use.

* `write_bundle(results, chapters_dir, archive)`: the self-test's one archive (`build/gpu-run.tar.gz`; on
  Kaggle `/kaggle/working/gpu-run.tar.gz`): its results (`run.json`), each chapter's executed notebook and
  the headline figures its cells recorded (`helpers.figures`, `NN_topic.figures.jsonl`). One file, because
  a lent machine brings back at most eight.
* `add_run(archive)` (`python -m coursetools gpu-runs add ARCHIVE`): unpacks it into
  `docs/gpu-runs/<date>-<gpu kind>/`, removes the older run of that GPU kind, and refuses a run that would
  grow the repository by more than `RUN_BUDGET_BYTES` (CONTRIBUTING's budget).
* `render_page()` (`python -m coursetools gpu-runs page`): `docs/measured.md`, every kept run's headline
  figures beside their limits, as ratios; a chapter whose code changed since the run reads "stale".

A kept chapter is current while its code cells are unchanged (`coursetools.execute.chapter_hash`, the
hash the "verified on" record uses too): a prose edit does not make a GPU's output stale.
"""

from __future__ import annotations

import io
import json
import math
import re
import shutil
import tarfile
import zlib
from pathlib import Path
from typing import Any

from . import ROOT
from .execute import FIGURES_SUFFIX, chapter_hash, discover_chapters

RUNS = ROOT / "docs" / "gpu-runs"
PAGE = ROOT / "docs" / "measured.md"
ARCHIVE_NAME = "gpu-run.tar.gz"
RESULTS_NAME = "run.json"
#: How much one kept run may add to the repository: the sum of its files compressed as git stores them.
RUN_BUDGET_BYTES = 5 * 10**6
#: Marks a bundle the tests build on a CPU: never kept as a GPU run, never on the page.
FIXTURE_KEY = "fixture"


#: Each chapter's headline figures, as its cells name them to `helpers.figures.record`, with the course's
#: performance goal for each (CONTRIBUTING, "GPU runs"): ("share", 0.75) means at least 75 % of the figure's
#: limit, ("at least", 3.0) a value of at least 3; None: kept and shown, with no goal.
GRAPHS = "CUDA graph replay over eager, launch-bound forward"
HEADLINES: dict[str, dict[str, tuple[str, float] | None]] = {
    "02": {"float32 matmul, GPU over all CPU threads": ("at least", 3.0)},
    "03": {
        "one pageable host-to-device copy": None,
        "the shortest host read, over queuing the work": None,
        "one copy over the smallest pieces, effective bandwidth": None,
    },
    "04": {"autocast over float32, a 4096-wide MLP's training step": None},
    "06": {"copy/compute overlapped over serial": None},
    "07": {
        "best pinned host-to-device copy": ("share", 0.75),
        "best pageable host-to-device copy": None,
        "pin then copy over a plain copy": None,
    },
    "08": {"all-reduce bus bandwidth, 16 MiB on 2 GPUs": None, "DDP over one GPU, the big workload": None},
    "10": {
        "float32 matmul": None,
        "float16 matmul": ("share", 0.6),
        "bfloat16 matmul": ("share", 0.6),
        "memory roof": None,
    },
    "11": {GRAPHS: ("at least", 3.0)},
    "13": {"fused softmax, your Triton kernel": ("share", 0.6), "float16 matmul, your Triton kernel": None},
    "14": {
        "a sample's cost, batch 16 over the big batch": None,
        "device idle share, batch 16": None,
        "device idle share, the big batch": None,
        "epoch after the four fixes over as written": None,
    },
    "15": {
        "the ladder: the last rung kept over the plain run": None,
        "the ladder: the last rung kept, model FLOP/s": None,
    },
}


def goal_text(chapter: str, row: dict[str, Any]) -> str:
    """The course's goal for a recorded figure and whether it was met ("≥ 75 % of the limit: met"), or "—"."""
    goal = HEADLINES.get(chapter[:2], {}).get(row["name"])
    if goal is None:
        return "—"
    kind, bar = goal
    if kind == "share" and not row.get("limit"):
        return f"≥ {bar:.0%} of the limit: no limit was read to judge it by"
    if kind == "share":
        share = round(row["value"] / row["limit"], 3)  # as the ratio column shows it
        return f"≥ {bar:.0%} of the limit: {'met' if share >= bar else 'not met'}"
    shown = float(format(row["value"], ".4g"))  # as the measured column shows it
    return f"≥ {bar:g} {row['unit']}: {'met' if shown >= bar else 'not met'}"


class RunRefused(ValueError):
    """An archive that is not a GPU run's bundle, or one too large to keep; the message says why."""


def gpu_kind(hardware: str) -> str:
    """A GPU kind for folder names from a run's hardware line: `1× NVIDIA H200 | torch …` → `h200`,
    `2× Tesla T4 | …` → `t4x2`; "" when it names no GPU."""
    found = re.match(r"\s*(\d+)× ([^|]+)", hardware)
    if not found:
        return ""
    name = re.sub(r"\b(nvidia|tesla|geforce)\b", " ", found.group(2).lower())
    slug = re.sub(r"[^a-z0-9]+", "-", name).strip("-")
    return slug + (f"x{found.group(1)}" if int(found.group(1)) > 1 else "")


def write_bundle(results: dict[str, Any], chapters_dir: Path, archive: Path) -> Path:
    """Write `archive`: `results` as run.json, and each executed chapter in `chapters_dir` with its figures."""
    archive = Path(archive)
    archive.parent.mkdir(parents=True, exist_ok=True)
    files = sorted(Path(chapters_dir).glob("*/*.ipynb")) + sorted(Path(chapters_dir).glob(f"*/*{FIGURES_SUFFIX}"))
    with tarfile.open(archive, "w:gz") as tar:
        data = json.dumps(results, indent=1, ensure_ascii=False).encode("utf-8")
        info = tarfile.TarInfo(RESULTS_NAME)
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
        for path in files:
            tar.add(path, arcname=path.name)
    return archive


def _members(tar: tarfile.TarFile) -> dict[str, bytes]:
    """The archive's plain files by name; anything else (a link, a folder, a path with a folder) is refused."""
    found = {}
    for member in tar.getmembers():
        if not member.isfile() or any(c in member.name for c in "/\\:") or member.name.startswith("."):
            raise RunRefused(f"{member.name!r} is not a plain file at the top of the archive")
        file = tar.extractfile(member)
        found[member.name] = file.read() if file else b""
    return found


def stored_bytes(files: dict[str, bytes]) -> int:
    """What the files add to a git repository, near enough: each compressed with zlib, as git stores objects."""
    return sum(len(zlib.compress(data, 6)) for data in files.values())


def add_run(archive: Path, runs: Path = RUNS, notebooks_dir: Path | None = None) -> Path:
    """Unpack a full, passed GPU run's bundle into `runs/<date>-<gpu kind>/`, replacing that kind's older run.

    The bundle is checked before anything is removed; one older than the kept run of its kind, a partial
    run (`--only`, `--no-chapters`, `--no-tests`), a failed one, a test fixture, or one holding a file no
    self-test writes is refused (`RunRefused`).
    """
    try:
        with tarfile.open(archive, "r:gz") as tar:
            files = _members(tar)
    except (tarfile.TarError, EOFError, zlib.error) as exc:  # a half-downloaded or damaged archive
        raise RunRefused(f"{archive} is not a readable .tar.gz ({type(exc).__name__}: {exc})") from None
    if RESULTS_NAME not in files:
        raise RunRefused(f"{archive} holds no {RESULTS_NAME}: it is not a self-test's bundle")
    try:
        results = json.loads(files[RESULTS_NAME].decode("utf-8"))  # as the page reads it: no BOM, no UTF-16
    except ValueError as exc:
        raise RunRefused(f"{archive}'s {RESULTS_NAME} is not JSON in UTF-8 ({exc})") from None
    if not isinstance(results, dict) or results.get(FIXTURE_KEY):
        raise RunRefused(f"{archive} is a test fixture or no self-test's results: not a GPU run")
    kind, date = gpu_kind(str(results.get("hardware", ""))), str(results.get("date", ""))
    texts = [results.get(key, "") for key in ("hardware", "versions")]
    if not all(isinstance(t, str) and t == " ".join(t.split()) for t in texts):
        raise RunRefused(f"{archive}'s hardware and versions are not one line of text each")
    if results.get("gpu_verified") is not True or not kind:
        raise RunRefused(
            f"{archive} is not a passed run that used a GPU (gpu_verified is false: torch could use no GPU, "
            "or a chapter or test failed)"
        )
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", date) or not _a_past_date(date):
        raise RunRefused(f"{archive}'s date {date!r} is not a past date (YYYY-MM-DD)")
    rows = results.get("rows")
    if not isinstance(rows, list) or not all(_a_row(r) for r in rows) or not _a_number(results.get("seconds", 0)):
        raise RunRefused(f"{archive}'s {RESULTS_NAME} is not a self-test's results (rows, tests, seconds)")
    if any(r["outcome"] not in ("passed", "skipped") for r in rows):
        raise RunRefused(f"{archive} is a failed run: keep a passed self-test's bundle")
    passed = {r["test"].removeprefix("chapter ") for r in rows if r["outcome"] == "passed"}
    chapters = {nb.stem for nb in discover_chapters(notebooks_dir)}
    missing = sorted(chapters - passed)
    if missing or not any(not r["test"].startswith("chapter ") for r in rows):
        why = f"chapters that did not run: {', '.join(missing)}" if missing else "its GPU tests did not run"
        raise RunRefused(f"{archive} is a partial run ({why}): keep a full self-test's bundle")
    recording = {c for c in chapters if c[:2] in HEADLINES}
    written = {RESULTS_NAME} | {f"{c}.ipynb" for c in chapters} | {f"{c}{FIGURES_SUFFIX}" for c in recording}
    for name, data in files.items():
        if name not in written:
            raise RunRefused(f"{archive} holds {name!r}, which no self-test writes")
        if name.endswith(FIGURES_SUFFIX) and not _figures_are_valid(data, HEADLINES[name[:2]]):
            raise RunRefused(f"{archive}'s {name} holds a line that is not one of its chapter's recorded figures")
    absent = sorted(c for c in chapters if f"{c}.ipynb" not in files)
    if absent:
        raise RunRefused(f"{archive} lacks the executed chapter {absent[0]}.ipynb: keep a full self-test's bundle")
    size = stored_bytes(files)
    if size > RUN_BUDGET_BYTES:
        raise RunRefused(
            f"the run would add {size / 1e6:.1f} MB to the repository, over the {RUN_BUDGET_BYTES / 1e6:g} MB budget"
        )
    kept = [
        p
        for p in runs.glob(f"*-{kind}")
        if p.is_dir() and re.fullmatch(rf"\d{{4}}-\d{{2}}-\d{{2}}-{re.escape(kind)}", p.name)
    ]
    newer = sorted(p.name for p in kept if p.name[:10] > date)
    if newer:
        raise RunRefused(f"the kept run {newer[-1]} is newer: only the newest run of each GPU kind is kept")
    folder, staging = runs / f"{date}-{kind}", runs / f".{date}-{kind}.adding"
    shutil.rmtree(staging, ignore_errors=True)
    try:
        staging.mkdir(parents=True)
        for name, data in files.items():
            (staging / name).write_bytes(data)
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    for older in kept:
        shutil.rmtree(older)
    staging.rename(folder)
    return folder


def _a_past_date(text: str) -> bool:
    import datetime

    try:
        return datetime.date.fromisoformat(text) <= datetime.date.today()
    except ValueError:
        return False


def _a_number(value: Any) -> bool:
    """A finite int or float a page can print (not a bool, not NaN, not a 400-digit integer)."""
    return type(value) in (int, float) and abs(value) < 1e300 and math.isfinite(value)


def _a_row(row: Any) -> bool:
    """A self-test row as the page reads it: a test's name, an outcome, and seconds when there are any."""
    return (
        isinstance(row, dict)
        and isinstance(row.get("test"), str)
        and isinstance(row.get("outcome"), str)
        and (row.get("seconds") is None or _a_number(row["seconds"]))
    )


def _figures_are_valid(data: bytes, names: Any) -> bool:
    """Whether every line is one of `names` as `helpers.figures.record` writes it: what the page reads."""
    try:
        rows = _figure_lines(data.decode("utf-8"))
    except ValueError:
        return False
    return all(
        isinstance(r, dict)
        and isinstance(r.get("name"), str)
        and r["name"] in names
        and isinstance(r.get("unit"), str)
        and all(isinstance(r.get(key, ""), str) for key in ("limit_name", "source"))
        and _a_number(r.get("value"))
        and (r.get("limit") is None or (_a_number(r["limit"]) and r["limit"] > 0))
        for r in rows
    )


def read_figures(path: Path) -> list[dict[str, Any]]:
    """The figures a chapter recorded (`helpers.figures`), one JSON object a line; [] when there is no file."""
    return _figure_lines(Path(path).read_text(encoding="utf-8")) if Path(path).is_file() else []


def _figure_lines(text: str) -> list[Any]:
    """One JSON value a line, blank lines aside (what `helpers.figures.record` appends)."""
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def kept_runs(runs: Path = RUNS) -> list[Path]:
    """The kept runs' folders (those holding a run.json), newest first."""
    found = (p.parent for p in runs.glob(f"*/{RESULTS_NAME}") if not p.parent.name.startswith("."))
    return sorted(found, key=lambda p: p.name, reverse=True)


def _cell(text: Any) -> str:
    """`text` as one Markdown table cell: no line breaks, and a bar that does not end the cell."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _ratio(row: dict[str, Any]) -> str:
    limit = row.get("limit")
    return f"{row['value'] / limit:.1%}" if limit else "—"


def render_page(runs: Path = RUNS, notebooks_dir: Path | None = None) -> str:
    """The Markdown page of what the course measured on GPUs: each kept run's headline figures and limits."""
    current = {nb.stem: chapter_hash(nb) for nb in discover_chapters(notebooks_dir)}
    lines = [
        "# What the course measured on GPUs",
        "",
        "Generated by `python -m coursetools gpu-runs page` from the GPU runs kept in `docs/gpu-runs/` (never",
        "edited by hand). Each row is a headline figure a chapter's cells measured during a GPU self-test,",
        "beside the limit it is held against (a link's rate, a datasheet peak), its source, and the course's",
        "goal for it. The self-test runs each chapter with its small QUICK sizes, so copies and matmuls there",
        "reach less of a limit than full sizes do. *Stale* means the chapter's code changed after the run.",
        "Where each chapter ran is on [the verified page](verified.md). The H200 self-tests of 2026-11-26",
        "(`docs/gpu-runs/*.json`) came before runs kept their figures: they hold pass and fail rows only.",
        "",
    ]
    kept = kept_runs(runs)
    if not kept:
        lines.append("No GPU run is kept yet.")
    for folder in kept:
        results = json.loads((folder / RESULTS_NAME).read_text(encoding="utf-8"))
        hashes = {r["test"].removeprefix("chapter "): r.get("hash", "") for r in results.get("rows", [])}
        lines += [
            f"## {results.get('hardware', '').split(' | ')[0]}, {results.get('date', '')}",
            "",
            f"{results.get('versions', '')}; the run took {results.get('seconds') or 0:.0f} s. Its executed chapters "
            f"are in `docs/gpu-runs/{folder.name}/`.",
            "",
            "| chapter | figure | measured | limit | ratio | the course's goal | source of the limit |",
            "| --- | --- | --- | --- | --- | --- | --- |",
        ]
        for path in sorted(folder.glob(f"*{FIGURES_SUFFIX}")):
            chapter = path.name.removesuffix(FIGURES_SUFFIX)
            state = "" if hashes.get(chapter) == current.get(chapter) else " (stale)"
            for row in read_figures(path):
                named = f" ({row['limit_name']})" if row.get("limit_name") else ""
                limit = f"{row['limit']:.4g} {row['unit']}{named}" if row.get("limit") else "—"
                cells = (row["name"], f"{row['value']:.4g} {row['unit']}", limit, _ratio(row))
                cells += (goal_text(chapter, row), row.get("source") or "—")
                lines.append(f"| {chapter[:2]}{state} | " + " | ".join(map(_cell, cells)) + " |")
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def write_page(runs: Path = RUNS, page: Path = PAGE) -> Path:
    page.write_text(render_page(runs), encoding="utf-8")
    return page
