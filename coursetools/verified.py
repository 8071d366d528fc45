"""The "verified on" record: where each chapter, as it is now, last ran to the end.

`python -m coursetools verified` (`make verified`) reads the results of runs on this machine and
writes `docs/verified.json` (the record) and `docs/verified.md` (the page the README links):

* `build/test-notebooks/<stack>/*.result.json`: what the test suite's nbval run wrote for each
  chapter (root `conftest.py`), on each stack CI runs: the CPU-only build (`make test`) and CUDA
  builds of torch without a driver, the oldest supported release (`make test-cuda-build`) and the
  newest (`make test-newest-torch`); a stack's name carries its torch release (`stack_name`);
* `build/selftest.json`: a GPU self-test (`make selftest`); only a run that passed with a GPU
  torch could use (`gpu_verified`) gives the GPU column its rows.

Each row is keyed by the chapter's code hash (its code cells' sources: `chapter_hash`), so a record
for an older version of a chapter's code reads "stale", and a prose edit leaves it current. Only
chapters that passed are recorded; nothing is ever written by hand. Kaggle's T4 ×2 and Apple mps
read "reviewed, not executed" until a run there is recorded. CI cannot commit, so
`tests/course/test_verified.py` fails when a chapter has no current row for a stack CI runs: rerun
those stacks, then `make verified`, and commit.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from . import BUILD, NOTEBOOKS, ROOT
from .execute import chapter_hash, discover_chapters

RECORD = ROOT / "docs" / "verified.json"
PAGE = ROOT / "docs" / "verified.md"
TEST_RUNS = BUILD / "test-notebooks"
SELFTEST_RESULTS = BUILD / "selftest.json"

#: The stacks CI executes every chapter on, named as `stack_name` names them: `make test` (the Makefile's
#: TORCH), `make test-cuda-build` (CUDA_TORCH, Kaggle's release) and `make test-newest-torch` (NEWEST_TORCH).
CI_STACKS = ("cpu-only-torch2.13", "cuda-build-no-driver-torch2.10", "cuda-build-no-driver-torch2.15")
#: Columns of the page, in order, with what a chapter reads when no run there is recorded.
COLUMNS = {
    "cpu-only-torch2.13": ("CPU-only build, torch 2.13", "not yet executed"),
    "cuda-build-no-driver-torch2.10": ("CUDA build without a driver, torch 2.10 (Kaggle's)", "not yet executed"),
    "cuda-build-no-driver-torch2.15": ("CUDA build without a driver, torch 2.15 (newest)", "not yet executed"),
    "gpu": ("a real GPU (self-test)", "not yet executed"),
    "kaggle-t4x2": ("Kaggle GPU T4 ×2", "reviewed, not executed"),
    "mps": ("Apple mps", "reviewed, not executed"),
}


def torch_release(version: str) -> str:
    """`2.10.0+cu128` → `2.10`: the release a stack is named by."""
    return ".".join(version.split("+")[0].split(".")[:2])


def stack_name() -> str:
    """Which of the course's stacks this process runs on: `gpu`, `mps`, or `<build>-torch<release>` for a
    machine where torch can use no GPU (`cpu-only-torch2.13`, `cuda-build-no-driver-torch2.10`, ...)."""
    import torch

    if torch.cuda.is_available():
        return "gpu"
    if torch.backends.mps.is_available():
        return "mps"
    build = "cuda-build-no-driver" if torch.version.cuda else "cpu-only"
    return f"{build}-torch{torch_release(torch.__version__)}"


def load_record(path: Path = RECORD) -> dict[str, Any]:
    return json.loads(Path(path).read_text(encoding="utf-8")) if Path(path).is_file() else {"chapters": {}}


def _test_run_rows(runs: Path) -> list[tuple[str, str, dict[str, Any]]]:
    """(chapter, stack, row) for every chapter that passed in a recorded test run."""
    rows = []
    for path in sorted(Path(runs).glob("*/*.result.json")):
        r = json.loads(path.read_text(encoding="utf-8"))
        if r.get("status") == "ok" and r.get("hash"):
            row = {k: r[k] for k in ("hash", "date", "torch", "python", "device") if k in r}
            rows.append((r["chapter"], path.parent.name, row))
    return rows


def _selftest_rows(results: Path) -> list[tuple[str, str, dict[str, Any]]]:
    """(chapter, "gpu" or "kaggle-t4x2", row) for every chapter that passed in a self-test that used a GPU."""
    if not Path(results).is_file():
        return []
    data = json.loads(Path(results).read_text(encoding="utf-8"))
    if not data.get("gpu_verified"):  # no usable GPU, or the run failed: nothing GPU-specific was verified
        return []
    stack = "kaggle-t4x2" if data.get("on_kaggle") and "T4" in data.get("hardware", "") else "gpu"
    rows = []
    for r in data.get("rows", []):
        if r["test"].startswith("chapter ") and r["outcome"] == "passed" and r.get("hash"):
            row = {"hash": r["hash"], "date": data["date"], "torch": data["versions"], "device": r.get("device", "")}
            rows.append((r["test"].removeprefix("chapter "), stack, row))
    return rows


def update(record: dict[str, Any], rows: list[tuple[str, str, dict[str, Any]]]) -> dict[str, Any]:
    """Put each (chapter, stack, row) in the record; a newer run replaces an older one."""
    for chapter, stack, row in rows:
        record.setdefault("chapters", {}).setdefault(chapter, {})[stack] = row
    return record


def render(record: dict[str, Any], notebooks_dir: Path = NOTEBOOKS) -> str:
    """The Markdown page: one row per chapter, one column per stack."""
    lines = [
        "# Where each chapter was verified",
        "",
        "Generated by `make verified` from the results of real runs (never edited by hand). A cell",
        "names the date, torch build and device of the last run in which the chapter's code, exactly as",
        "it is now (the hash of its code cells), ran to the end with every assertion passing. *Stale* means",
        "the chapter's code changed after that run. CI executes the first three stacks on every change and",
        "fails when their rows are stale; a GPU self-test that used the GPU (`make selftest`, or the",
        "`gpu_self_test` notebook on Kaggle) fills the next two. *Reviewed, not executed* means the",
        "chapter's GPU cells were checked against PyTorch's source and documentation but have not",
        "run on that hardware yet. The figures the GPU runs measured, against the hardware's limits, are",
        "on [the measured page](measured.md).",
        "",
        "| chapter | code hash | " + " | ".join(title for title, _ in COLUMNS.values()) + " |",
        "| --- | --- | " + " | ".join("---" for _ in COLUMNS) + " |",
    ]
    for chapter, (current, cells) in chapter_cells(record, notebooks_dir).items():
        lines.append(
            f'| <a id="{chapter[:2]}"></a>{chapter} | `{current}` | ' + " | ".join(text for _, text in cells) + " |"
        )
    return "\n".join(lines) + "\n"


def chapter_cells(
    record: dict[str, Any], notebooks_dir: Path = NOTEBOOKS
) -> dict[str, tuple[str, list[tuple[str, str]]]]:
    """Each chapter's code hash and its (stack title, what was verified) cells, in the page's order."""
    table = {}
    for notebook in discover_chapters(notebooks_dir):
        current = chapter_hash(notebook)
        stacks = record.get("chapters", {}).get(notebook.stem, {})
        cells = []
        for stack, (title, missing) in COLUMNS.items():
            row = stacks.get(stack)
            if row is None:
                text = missing
            elif row["hash"] != current:
                text = f"stale (ran {row['date']} as {row['hash']})"
            else:
                where = f" · {row['device']}" if row.get("device") and not stack.startswith("cpu-only") else ""
                text = f"✓ {row['date']} · {row.get('torch', '')}{where}"
            cells.append((title, text))
        table[notebook.stem] = (current, cells)
    return table


def stale_rows(
    record: dict[str, Any], stacks: tuple[str, ...] = CI_STACKS, notebooks_dir: Path = NOTEBOOKS
) -> list[str]:
    """What is missing or stale for `stacks`, one line per chapter and stack (empty when all is current)."""
    problems = []
    for notebook in discover_chapters(notebooks_dir):
        current = chapter_hash(notebook)
        for stack in stacks:
            row = record.get("chapters", {}).get(notebook.stem, {}).get(stack)
            if row is None or row["hash"] != current:
                problems.append(f"{notebook.stem} on {stack}: {'no run recorded' if row is None else 'stale'}")
    return problems


def main(runs: Path = TEST_RUNS, selftest_results: Path = SELFTEST_RESULTS) -> int:
    """`python -m coursetools verified`: add the runs found under build/ to the record, rewrite the page."""
    rows = _test_run_rows(runs) + _selftest_rows(selftest_results)
    if not rows:
        print(f"No passed chapter runs found under {runs} or in {selftest_results}: run `make test` first.")
        return 2
    record = update(load_record(), rows)
    for stacks in record["chapters"].values():  # rows under a stack the page no longer shows are dropped
        for stack in [s for s in stacks if s not in COLUMNS]:
            del stacks[stack]
    RECORD.parent.mkdir(parents=True, exist_ok=True)
    RECORD.write_text(json.dumps(record, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    PAGE.write_text(render(record), encoding="utf-8")
    stacks = sorted({stack for _, stack, _ in rows})
    print(f"Recorded {len(rows)} chapter runs ({', '.join(stacks)}) in docs/{RECORD.name}; wrote docs/{PAGE.name}.")
    for line in stale_rows(record):
        print(f"  still missing for CI: {line}")
    return 0
