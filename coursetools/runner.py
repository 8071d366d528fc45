"""Execute the course headless: every chapter through papermill, then the course site.

`python -m coursetools run [--quick]` is the README's "run the course" command. A failing chapter
does not stop the others; the command ends with a summary table (chapter, status, seconds, the
device it ran on, cells that took the no-GPU path) printed and written to `build/`, and exits
non-zero naming the chapters that failed. The executed notebooks then become the course site,
`build/site/index.html` (`coursetools.site`: Sphinx with MyST-NB; failed chapters get a page that
states their error). The GPU self-test executes chapters with the same
`coursetools.execute.execute_chapter`.
"""

from __future__ import annotations

import json
import multiprocessing
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

from . import BUILD, NOTEBOOKS, execute
from .execute import ChapterRun
from .folders import WriteFault

if TYPE_CHECKING:
    from .site import Site

#: One chapter's run; the self-test (coursetools.selftest) and this runner execute chapters the same way.
ChapterResult = ChapterRun


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


def build_course_site(
    results: list[ChapterResult], build_dir: Path, notebooks_dir: Path = NOTEBOOKS
) -> tuple[Site | None, str]:
    """Build `build_dir/site/` from this run's chapters; each result's `html` names its page.

    Returns (the site, "") or (None, the error): the chapters' results stand without a site.
    """
    from .site import build_site  # here: coursetools.verified, which the site reads, imports this module

    print("Building the course site ...", flush=True)
    try:
        site = build_site(build_dir, build_dir / "site", runs=results, notebooks_dir=notebooks_dir)
    except WriteFault as exc:  # the site folder could not be written: already one sentence naming the path
        return None, str(exc)
    except OSError as exc:  # a full disk or a read-only folder: one sentence naming the path
        return None, execute.write_fault(exc, exc.filename or build_dir / "site")
    except Exception as exc:  # a broken site must not hide the chapters' summary
        return None, f"{type(exc).__name__}: {exc}"
    for result in results:
        result.html = str(site.index.parent / f"{result.chapter}.html")
    return site, ""


def run_course(
    *,
    quick: bool = False,
    only: list[str] | None = None,
    jobs: int = 1,
    notebooks_dir: Path = NOTEBOOKS,
    build_dir: Path = BUILD,
) -> int:
    """Execute every chapter (or those whose names start with one of `only`); return the exit code."""
    from .progress import ChapterProgress

    chapters = execute.discover_chapters(notebooks_dir, only)
    if not chapters:
        print(f"No chapter matches {only!r} in {notebooks_dir}; chapters are named like 01_devices.ipynb.")
        return 2
    build_dir = Path(build_dir)
    try:
        build_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        print(execute.write_fault(exc, build_dir, "create"))
        return 1
    results: dict[str, ChapterResult] = {}
    with ChapterProgress(len(chapters)) as progress:

        def record(result: ChapterResult) -> None:
            results[result.chapter] = result
            progress.finished(result.chapter, result.status)

        if jobs <= 1:
            for chapter in chapters:
                progress.started(chapter.stem)
                record(execute.execute_chapter(chapter, build_dir, quick=quick))
        else:
            # Separate processes, not threads: two papermill runs sharing one process can deadlock
            # in their kernel clients (seen here with a widget cell waiting forever).
            context = multiprocessing.get_context("spawn")
            with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
                futures = {pool.submit(execute.execute_chapter, c, build_dir, quick=quick): c.stem for c in chapters}
                names = list(futures.values())
                for name in names[:jobs]:  # the pool starts the first `jobs` at once, in order
                    progress.started(name)
                waiting = names[jobs:]
                for future in as_completed(futures):
                    record(future.result())
                    if waiting:
                        progress.started(waiting.pop(0))  # its worker is free: the next one in line starts
    ordered = [results[c.stem] for c in chapters]
    site, site_error = build_course_site(ordered, build_dir, notebooks_dir)
    table = summary_table(ordered)
    summaries = {"summary.md": table + "\n", "summary.json": json.dumps([asdict(r) for r in ordered], indent=2)}
    for name, text in summaries.items():
        try:
            execute.write_text_atomically(build_dir / name, text)  # all or nothing: never a summary cut short
        except OSError as exc:
            print(table)
            print(execute.write_fault(exc, build_dir / name).removesuffix(".") + "; the table above is the summary.")
            return 1
    print(table)
    print(f"\nExecuted notebooks: {build_dir}/")
    if site is None:
        print(f"The course site could not be built: {site_error}")
        return 1
    for warning in site.warnings[:5]:
        print(f"  site warning: {warning}")
    print(f"The course site ({site.seconds:.0f} s to build): open {site.index}")
    failed = [r.chapter for r in ordered if r.status != "ok"]
    if failed:
        print(f"Failed: {', '.join(failed)}")
        return 1
    return 0
