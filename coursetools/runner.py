"""Execute the course headless: every chapter through papermill, then HTML pages and an index.

`python -m coursetools run [--quick]` is the README's "run the course" command. A failing chapter
does not stop the others; the command ends with a summary table (chapter, status, seconds, the
device it ran on, cells that took the no-GPU path) printed and written to `build/`, and exits
non-zero naming the chapters that failed. The GPU self-test executes chapters with the same
`helpers.selftest.execute_chapter`.
"""

from __future__ import annotations

import functools
import html
import json
import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict
from pathlib import Path
from typing import Any

from helpers import selftest
from helpers.selftest import ChapterRun

from . import BUILD, NOTEBOOKS

#: Seconds one cell may run before its chapter fails: long enough for the slowest real cell, short
#: enough that a stalled cell (a widget that never answers, a hung rank) is caught in minutes.
QUICK_CELL_TIMEOUT = 90
FULL_CELL_TIMEOUT = 600

#: One chapter's run; the self-test (helpers.selftest) and this runner execute chapters the same way.
ChapterResult = ChapterRun


def discover_chapters(notebooks_dir: Path = NOTEBOOKS) -> list[Path]:
    """The chapter notebooks (`NN_topic.ipynb`) of the repository, in order."""
    return selftest.discover_chapters(notebooks_dir)


@functools.cache
def _html_exporter() -> Any:
    """One exporter per process: loading its templates costs about as much as converting a chapter."""
    from nbconvert import HTMLExporter

    return HTMLExporter(template_name="lab")


def export_html(executed: Path, target: Path) -> None:
    """Write an executed notebook as a standalone HTML page (plots embedded)."""
    import nbformat

    body, _ = _html_exporter().from_notebook_node(nbformat.read(executed, as_version=4))
    target.write_text(body, encoding="utf-8")


def execute_chapter(
    notebook: Path,
    out_dir: Path = BUILD,
    *,
    quick: bool = False,
    html_page: bool = True,
    cell_timeout: float | None = None,
) -> ChapterResult:
    """Run one chapter with papermill into `out_dir`, then write its HTML page; report, never raise.

    A cell past `cell_timeout` seconds (90 with QUICK sizes, 600 at full size) fails the chapter
    and the error names the cell.
    """
    timeout = cell_timeout if cell_timeout is not None else (QUICK_CELL_TIMEOUT if quick else FULL_CELL_TIMEOUT)
    result = selftest.execute_chapter(notebook, out_dir, quick=quick, cell_timeout=timeout)
    if html_page and result.executed:
        page = Path(result.executed).with_suffix(".html")
        try:
            export_html(Path(result.executed), page)
            result.html = str(page)
        except Exception as exc:
            result.error = result.error or f"HTML export failed: {type(exc).__name__}: {exc}"
            result.status = "failed"
    return result


def summary_table(results: list[ChapterResult]) -> str:
    """The summary as a Markdown table (readable in a terminal too)."""
    rows = [
        "| chapter | status | seconds | ran on | no-GPU cells |",
        "| --- | --- | ---: | --- | ---: |",
    ]
    for r in results:
        rows.append(f"| {r.chapter} | {r.status} | {r.seconds:.1f} | {r.device} | {r.no_gpu_cells} |")
    failed = [r for r in results if r.status != "ok"]
    for r in failed:
        rows.append(f"\nFAILED {r.chapter}: {r.error}")
    return "\n".join(rows)


def write_index(results: list[ChapterResult], build_dir: Path, quick: bool) -> Path:
    """Write `index.html`, linking every chapter page, with the summary table."""
    body = []
    for r in results:
        name = html.escape(r.chapter)
        link = f'<a href="{html.escape(Path(r.html).name)}">{name}</a>' if r.html else name
        body.append(
            f"<tr><td>{link}</td><td class='{r.status}'>{r.status}</td><td>{r.seconds:.1f}</td>"
            f"<td>{html.escape(r.device)}</td><td>{r.no_gpu_cells}</td><td>{html.escape(r.error)}</td></tr>"
        )
    page = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>GPU programming with PyTorch: executed course</title>
<style>body{{font-family:sans-serif;margin:2em}}td,th{{padding:.3em .8em;border-bottom:1px solid #ddd}}
.ok{{color:#186a3b}}.failed{{color:#b03a2e;font-weight:bold}}</style></head><body>
<h1>GPU programming with PyTorch: executed course</h1>
<p>Run {time.strftime("%Y-%m-%d %H:%M")}{" with QUICK sizes" if quick else ""}.
Every figure in these pages was measured on the machine named in the table.</p>
<table><tr><th>chapter</th><th>status</th><th>seconds</th><th>ran on</th><th>no-GPU cells</th><th>error</th></tr>
{"".join(body)}
</table></body></html>
"""
    index = Path(build_dir) / "index.html"
    index.write_text(page, encoding="utf-8")
    return index


def run_course(
    *,
    quick: bool = False,
    only: list[str] | None = None,
    jobs: int = 1,
    notebooks_dir: Path = NOTEBOOKS,
    build_dir: Path = BUILD,
) -> int:
    """Execute every chapter (or those whose names start with one of `only`); return the exit code."""
    from tqdm.auto import tqdm

    chapters = discover_chapters(notebooks_dir)
    if only:
        chapters = [c for c in chapters if any(c.name.startswith(o) for o in only)]
    if not chapters:
        print(f"No chapter matches {only!r} in {notebooks_dir}; chapters are named like 01_devices.ipynb.")
        return 2
    build_dir = Path(build_dir)
    build_dir.mkdir(parents=True, exist_ok=True)
    results: dict[str, ChapterResult] = {}
    with tqdm(total=len(chapters), desc="chapters", unit="chapter") as bar:

        def record(result: ChapterResult) -> None:
            results[result.chapter] = result
            bar.set_postfix_str(f"{result.chapter}: {result.status}")
            bar.update()

        if jobs <= 1:
            for chapter in chapters:
                record(execute_chapter(chapter, build_dir, quick=quick))
        else:
            # Separate processes, not threads: two papermill runs sharing one process can deadlock
            # in their kernel clients (seen here with a widget cell waiting forever).
            context = multiprocessing.get_context("spawn")
            with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
                futures = [pool.submit(execute_chapter, c, build_dir, quick=quick) for c in chapters]
                for future in as_completed(futures):
                    record(future.result())
    ordered = [results[c.stem] for c in chapters]
    table = summary_table(ordered)
    (build_dir / "summary.md").write_text(table + "\n", encoding="utf-8")
    (build_dir / "summary.json").write_text(json.dumps([asdict(r) for r in ordered], indent=2), encoding="utf-8")
    index = write_index(ordered, build_dir, quick)
    print(table)
    print(f"\nExecuted notebooks and HTML pages: {build_dir}/  (open {index})")
    failed = [r.chapter for r in ordered if r.status != "ok"]
    if failed:
        print(f"Failed: {', '.join(failed)}")
        return 1
    return 0
