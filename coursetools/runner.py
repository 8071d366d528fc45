"""Execute the course headless: every chapter through papermill, then HTML pages and an index.

`python -m coursetools run [--quick]` is the README's "run the course" command. A failing chapter
does not stop the others; the command ends with a summary table (chapter, status, seconds, the
device it ran on, cells that took the no-GPU path) printed and written to `build/`, and exits
non-zero naming the chapters that failed. The test suite executes notebooks with the same
`execute_chapter`, so what CI checks is what learners run.
"""

from __future__ import annotations

import html
import json
import multiprocessing
import re
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass
from pathlib import Path

from helpers.devices import NO_GPU_MARKER

from . import BUILD, NOTEBOOKS

CHAPTER_PATTERN = re.compile(r"^(\d\d)_[a-z0-9_]+\.ipynb$")


@dataclass
class ChapterResult:
    """How one chapter's headless run went."""

    chapter: str
    status: str  # "ok" or "failed"
    seconds: float
    device: str
    no_gpu_cells: int
    error: str = ""
    executed: str = ""  # path of the executed notebook
    html: str = ""  # path of its HTML page


def discover_chapters(notebooks_dir: Path = NOTEBOOKS) -> list[Path]:
    """The chapter notebooks (`NN_topic.ipynb`), in order."""
    return sorted(p for p in Path(notebooks_dir).glob("*.ipynb") if CHAPTER_PATTERN.match(p.name))


def _outputs_text(nb: dict) -> list[str]:
    """Every stream and plain-text output of a notebook, one string per code cell."""
    texts = []
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        parts = []
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream":
                parts.append("".join(out.get("text", "")))
            elif "data" in out:
                parts.append("".join(out["data"].get("text/plain", "")))
        texts.append("".join(parts))
    return texts


def count_no_gpu_cells(nb: dict) -> int:
    """How many code cells printed the no-GPU marker (took their CPU stand-in)."""
    return sum(1 for text in _outputs_text(nb) if NO_GPU_MARKER in text)


def device_line(nb: dict) -> str:
    """What the setup cell printed after `Running on:` (the device the chapter ran on)."""
    for text in _outputs_text(nb):
        m = re.search(r"Running on: ([^|\n]+)", text)
        if m:
            return m.group(1).strip()
    return "unknown"


def export_html(executed: Path, target: Path) -> None:
    """Write an executed notebook as a standalone HTML page (plots embedded)."""
    import nbformat
    from nbconvert import HTMLExporter

    body, _ = HTMLExporter(template_name="lab").from_notebook_node(nbformat.read(executed, as_version=4))
    target.write_text(body, encoding="utf-8")


def execute_chapter(
    notebook: Path,
    out_dir: Path = BUILD,
    *,
    quick: bool = False,
    html_page: bool = True,
    cell_timeout: int = 900,
) -> ChapterResult:
    """Run one chapter with papermill into `out_dir`; report instead of raising when it fails."""
    import papermill
    from papermill.exceptions import PapermillExecutionError

    notebook = Path(notebook)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    executed = out_dir / notebook.name
    start = time.perf_counter()
    error = ""
    try:
        papermill.execute_notebook(
            str(notebook),
            str(executed),
            parameters={"QUICK": quick},
            cwd=str(notebook.parent),
            kernel_name="python3",
            progress_bar=False,
            execution_timeout=cell_timeout,
        )
    except PapermillExecutionError as exc:
        error = f"cell {exc.exec_count}: {exc.ename}: {exc.evalue}"
    except Exception as exc:  # kernel died, timeout, unreadable notebook: report, keep going
        error = f"{type(exc).__name__}: {exc}"
    seconds = time.perf_counter() - start
    nb = json.loads(executed.read_text(encoding="utf-8")) if executed.exists() else {}
    page = ""
    if html_page and executed.exists():
        page_path = executed.with_suffix(".html")
        try:
            export_html(executed, page_path)
            page = str(page_path)
        except Exception as exc:
            error = error or f"HTML export failed: {type(exc).__name__}: {exc}"
    return ChapterResult(
        chapter=notebook.stem,
        status="failed" if error else "ok",
        seconds=round(seconds, 1),
        device=device_line(nb),
        no_gpu_cells=count_no_gpu_cells(nb),
        error=error,
        executed=str(executed) if executed.exists() else "",
        html=page,
    )


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
