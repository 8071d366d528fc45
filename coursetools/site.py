"""The course site: the executed chapters as a book, built by Sphinx with MyST-NB and sphinx-book-theme.

`build_site(executed_dir, out_dir, label=...)` turns a folder of executed chapter notebooks
(`NN_topic.ipynb`, as `python -m coursetools run` writes them into build/) into a static site in
`out_dir` with a landing page for learners (`index_page`: what the course is, who it is for,
where to start, how to run a chapter, each chapter with what it teaches), a table of contents,
previous/next links through the chapters, the page of sources the chapters cite, the verified
page and a search page. Nothing is executed again (MyST-NB's `nb_execution_mode = "off"`) and nothing is
fetched from the network, when building or when reading.

Each chapter is a copy of its executed notebook, changed only where a static page needs it:

* the page opens as the notebook does, with its title and what the chapter teaches ("After this
  chapter..."); then one collapsed line, "How this page was made", opens onto where and how the
  chapter ran (the setup line: machine, torch, Python; QUICK or full sizes; seconds; date) and its
  "verified on" row (`docs/verified.json`, as `make verified` renders it); its "Open in Kaggle"
  and "Open in Colab" badges (`coursetools.kaggle`), its notebook to download and on GitHub
  follow, and then the first lesson;
* links to docs/sources.md on GitHub lead to the site's own page of it;
* the cells a reader of the page does not need are hidden (MyST-NB's `remove-cell` tag, added
  here, never in the notebooks): the chapter's parameters cell (`parameters`), papermill's injected
  one and the set-up cell (`setup`; kept when it failed, to show its error). Papermill's red error
  banners are dropped: a failed chapter's error is stated under the collapsed line;
* a progress bar (tqdm's widget) becomes the line of text it showed at the end of the run; an
  interactive widget, which needs a kernel, becomes a note that says so, followed by what its
  output widgets showed when the chapter ran (the widget state papermill stored).

A chapter that failed still gets its page, with its error stated (and without its notebook, when
none was written). `python -m coursetools run` calls `build_site` after the chapters have run.
"""

from __future__ import annotations

import html
import io
import json
import re
import shutil
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from coursetools.execute import ChapterRun, discover_chapters, outputs_text, running_on
from helpers import HELPERS_DATASET

from . import NOTEBOOKS, ROOT
from .folders import staged_folder
from .gpu_runs import render_page
from .verified import RECORD, chapter_cells, load_record, render

#: The site's stylesheet (fonts for the glossary's Chinese terms and the ✅/❌ marks; wrapping on a
#: phone), its script (the theme's sidebar buttons, which work at every width) and the "Open in Kaggle"
#: badge, served from the site itself so that a page loads nothing from elsewhere.
SITE_FILES = Path(__file__).resolve().parent / "site_files"
BADGE = "open-in-kaggle.svg"
COLAB_BADGE = "open-in-colab.svg"
#: The folder of the site's sources that holds the chapters' notebooks to download (not pages).
NOTEBOOK_COPIES = "_notebooks"
LICENCE = "Apache-2.0"
#: The page of figures and corrections the chapters cite (`docs/sources.md §N`), published as `sources`.
SOURCES = ROOT / "docs" / "sources.md"
#: A chapter's link to an entry of docs/sources.md on GitHub; on the site it goes to the site's page.
SOURCES_LINK = re.compile(r"\(https://github\.com/[\w.-]+/[\w.-]+/blob/[^/\s)]+/docs/sources\.md(#[^)\s]*)?\)")
DEFAULT_TITLE = "GPU programming with PyTorch"
WIDGET_NOTE = "Interactive widget: open this chapter in JupyterLab or on Kaggle to use it."
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
#: The widgets of a tqdm progress bar in a notebook (tqdm.notebook): label, bar, count.
PROGRESS_BOX = ["HTMLModel", "FloatProgressModel", "HTMLModel"]
PROGRESS_BOX_INT = ["HTMLModel", "IntProgressModel", "HTMLModel"]
#: Output bundles that carry an HTML rendering (plots as `<img alt="...">`) show it, not the bare PNG.
MIME_PRIORITY = [("html", "text/html", 0)]


class SiteBuildError(RuntimeError):
    """Sphinx could not build the site (the message has its errors)."""


@dataclass
class Chapter:
    """What the site says about one chapter, from its run and its executed notebook."""

    name: str  # the notebook's stem, e.g. 05_gpu_memory
    title: str  # its first `# ` heading
    status: str  # "ok" or "failed"
    error: str = ""
    seconds: float | None = None
    ran_on: str = ""  # the setup line after "Running on:": machine, torch, CPUs, Python, where
    quick: bool | None = None  # the QUICK parameter papermill passed
    date: str = ""  # when it ran (papermill's end time), YYYY-MM-DD HH:MM UTC
    notebook: dict[str, Any] | None = field(default=None, repr=False)  # the executed notebook


@dataclass
class Site:
    """A built site: its landing page, the pages per chapter, Sphinx's warnings and the build time."""

    index: Path
    chapters: list[Chapter]
    warnings: list[str]
    seconds: float


# ----------------------------------------------------------------------------------------------
# Reading executed notebooks
# ----------------------------------------------------------------------------------------------


def _source(cell: dict[str, Any]) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def _tags(cell: dict[str, Any]) -> list[str]:
    return cell.setdefault("metadata", {}).setdefault("tags", [])


def chapter_title(nb: dict[str, Any]) -> str | None:
    """The notebook's first `# ` heading (the chapter's title), or None when it has none."""
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "markdown":
            for line in _source(cell).splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return None


def setup_line(nb: dict[str, Any]) -> str:
    """What the setup cell printed after "Running on:" (machine, torch build, CPUs, Python), or ""."""
    for text in outputs_text(nb):
        for line in text.splitlines():
            if running_on(line):
                return line.split("Running on:", 1)[1].strip()
    return ""


def first_error(nb: dict[str, Any]) -> str:
    """The first error output of a notebook as "Name: value", or ""."""
    for cell in nb.get("cells", []):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                return f"{out.get('ename', 'Error')}: {out.get('evalue', '')}"
    return ""


def read_chapter(name: str, executed: Path | None, run: ChapterRun | None, notebooks_dir: Path = NOTEBOOKS) -> Chapter:
    """A chapter as the site shows it: from its run (when given) and its executed notebook (when written)."""
    nb = json.loads(executed.read_text(encoding="utf-8")) if executed and executed.is_file() else None
    source = Path(notebooks_dir) / f"{name}.ipynb"
    title = chapter_title(nb) if nb else None
    if title is None and source.is_file():
        title = chapter_title(json.loads(source.read_text(encoding="utf-8")))
    papermill = (nb or {}).get("metadata", {}).get("papermill", {})
    error = run.error if run else (first_error(nb) if nb else "")
    if nb is None and not error:
        error = "the chapter wrote no executed notebook"
    status = run.status if run else ("failed" if error or papermill.get("exception") else "ok")
    end = papermill.get("end_time") or ""
    return Chapter(
        name=name,
        title=title or name,
        status="failed" if nb is None else status,
        error=error,
        seconds=run.seconds if run else papermill.get("duration"),
        ran_on=setup_line(nb) if nb else "",
        quick=papermill.get("parameters", {}).get("QUICK"),
        date=f"{end[:10]} {end[11:16]} UTC" if len(end) >= 16 else "",
        notebook=nb,
    )


# ----------------------------------------------------------------------------------------------
# Writing the site's sources
# ----------------------------------------------------------------------------------------------


def md_text(text: str) -> str:
    """`text` as literal Markdown: every ASCII punctuation mark escaped, on one line (fits a table cell)."""
    return re.sub(r"([!-/:-@\[-`{-~])", r"\\\1", " ".join(str(text).split()))


def _model(ref: str, state: dict[str, Any]) -> dict[str, Any]:
    """The stored model that `ref` names (a model id, or an `IPY_MODEL_` reference); {} if none."""
    return state.get(ref.removeprefix("IPY_MODEL_"), {}) if isinstance(ref, str) else {}


def progress_line(model_id: str, state: dict[str, Any]) -> str | None:
    """The line a tqdm progress bar showed when the chapter ran; None if `model_id` is not one.

    tqdm.auto, in a notebook, draws a box of an HTML label, a progress bar and an HTML count
    (tqdm.notebook), the spaces in its text as figure spaces. A bar closed with `leave=False` was
    hidden at the end and shows as "" (its stored text is stale).
    """
    box = _model(model_id, state)
    parts = [_model(ref, state) for ref in box.get("state", {}).get("children", [])]
    names = [part.get("model_name") for part in parts]
    if box.get("model_name") != "HBoxModel" or names not in (PROGRESS_BOX, PROGRESS_BOX_INT):
        return None
    if _model(box["state"].get("layout", ""), state).get("state", {}).get("visibility") == "hidden":
        return ""
    label, bar, count = (part.get("state", {}) for part in parts)
    text = " ".join(html.unescape(str(part.get("value") or "")) for part in (label, count))
    if not text.split():  # a bar_format without text: the bar's own numbers
        text = f"{bar.get('value', 0):g}/{bar.get('max', 0):g}"
    return " ".join(text.split())


def _widget_outputs(model_id: str, state: dict[str, Any]) -> list[dict[str, Any]]:
    """What the output widgets under model `model_id` showed when the chapter ran, in the order found."""
    found: list[dict[str, Any]] = []
    seen: set[str] = set()

    def walk(mid: str) -> None:
        if mid in seen or mid not in state:
            return
        seen.add(mid)
        model = state[mid]
        if model.get("model_name") == "OutputModel":
            found.extend(model.get("state", {}).get("outputs", []))
        for value in model.get("state", {}).values():
            for ref in value if isinstance(value, list) else [value]:
                if isinstance(ref, str) and ref.startswith("IPY_MODEL_"):
                    walk(ref.removeprefix("IPY_MODEL_"))

    walk(model_id)
    return found


def widget_note(has_outputs: bool) -> dict[str, Any]:
    """The output that stands in for an interactive widget on a static page."""
    text = WIDGET_NOTE + (" Below, what it showed when the chapter ran." if has_outputs else "")
    return {
        "output_type": "display_data",
        "metadata": {},
        "data": {"text/html": f'<p class="course-widget-note">{html.escape(text)}</p>', "text/plain": text},
    }


def _static_outputs(outputs: list[dict[str, Any]], state: dict[str, Any], depth: int = 0) -> list[dict[str, Any]]:
    """`outputs` with each widget in them as a static page shows it (see `static_widgets`)."""
    static: list[dict[str, Any]] = []
    for out in outputs:
        view = out.get("data", {}).get(WIDGET_VIEW)
        if view is None:
            static.append(out)
            continue
        model_id = view.get("model_id", "")
        line = progress_line(model_id, state)
        if line is not None:
            if line:
                static.append({"output_type": "display_data", "metadata": {}, "data": {"text/plain": line}})
            continue
        shown = _widget_outputs(model_id, state)
        if depth < 4:  # an output widget can hold widgets too (a progress bar printed inside it)
            shown = _static_outputs(shown, state, depth + 1)
        static += [widget_note(bool(shown)), *shown]
    return static


def static_widgets(nb: dict[str, Any]) -> dict[str, Any]:
    """Show every widget output as a static page can; drop the widget state.

    A tqdm progress bar becomes the line of text it showed at the end of the run (nothing, if it
    was hidden then). Any other widget is interactive: it becomes a note that says so, followed
    by what its output widgets held when the chapter ran. Papermill stores the widget state, but
    showing live widgets would need ipywidgets' JavaScript from a CDN; text and stored outputs
    need nothing.
    """
    state = nb.get("metadata", {}).pop("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    for cell in nb.get("cells", []):
        if "outputs" in cell:
            cell["outputs"] = _static_outputs(cell["outputs"], state)
    return nb


def chapter_links(name: str, settings: dict[str, Any] | None, downloadable: bool) -> str:
    """The line of reader tools under a chapter's run facts: its Kaggle and Colab badges, a download
    of its notebook (as in the repository, without outputs) and the notebook on GitHub."""
    from .kaggle import KaggleSetupError, github_url, open_in_colab_url, open_in_kaggle_url

    links = []
    try:
        links += [
            f"[![Open in Kaggle]({BADGE})]({open_in_kaggle_url(f'{name}.ipynb', settings)})",
            f"[![Open in Colab]({COLAB_BADGE})]({open_in_colab_url(f'{name}.ipynb', settings)})",
        ]
    except KaggleSetupError as exc:
        links += [f"No Kaggle or Colab link: {md_text(exc)}"]
    if downloadable:
        links.append(f"{{download}}`Download the notebook <{NOTEBOOK_COPIES}/{name}.ipynb>`")
    try:
        links.append(f"[The notebook on GitHub]({github_url(f'{name}.ipynb', settings)})")
    except KaggleSetupError:
        pass  # said once, with the Kaggle link
    return " · ".join(links)


def repository_url(settings: dict[str, Any] | None) -> str:
    """The course's repository (kaggle-metadata.json's "repository"), or "" when it is not set right."""
    from .kaggle import KaggleSetupError, github_url, load_settings

    try:
        settings = settings if settings is not None else load_settings()
        github_url("x.ipynb", settings)  # checks the address
    except KaggleSetupError:
        return ""
    return str(settings["repository"]).rstrip("/").removesuffix(".git")


def _sizes(quick: bool | None) -> str:
    if quick is None:
        return "sizes not recorded"
    return "QUICK sizes (small inputs, few repeats)" if quick else "full sizes"


def _machine_and_torch(ran_on: str) -> str:
    """The first two fields of a setup line ("Test box | torch 2.13.0+cpu | ..."): "Test box, torch 2.13.0+cpu"."""
    return ", ".join(part.strip() for part in ran_on.split("|")[:2])


def _run_summary(chapter: Chapter) -> str:
    """The collapsed line's words after "How this page was made": machine and torch, sizes, seconds."""
    if chapter.notebook is None:
        return "no executed notebook"
    facts = [_machine_and_torch(chapter.ran_on)] if chapter.ran_on else []
    facts.append({True: "QUICK sizes", False: "full sizes"}.get(chapter.quick, "sizes not recorded"))
    if chapter.seconds is not None:
        facts.append(f"{chapter.seconds:.1f} s")
    return " · ".join(facts)


def run_info(
    chapter: Chapter,
    verified: dict[str, list[tuple[str, str]]],
    settings: dict[str, Any] | None,
    downloadable: bool = False,
) -> str:
    """The run facts under a chapter's opening: one collapsed line (where and how it ran, its verified
    record), then its links (Kaggle, the notebook's download when `downloadable`, GitHub) and, for a
    failed chapter, its error."""
    where = md_text(chapter.ran_on) if chapter.ran_on else "a machine this page cannot name (no setup line)"
    took = f", {chapter.seconds:.1f} s" if chapter.seconds is not None else ""
    when = f" on {md_text(chapter.date)}" if chapter.date else ""
    ran = (
        f"Executed headless{when} on **{where}**, with {_sizes(chapter.quick)}{took}. "
        "Every figure on this page was measured there."
        if chapter.notebook is not None
        else "This run wrote no executed notebook of this chapter, so this page has only its title."
    )
    # A <details> element: closed, it is one line; its Markdown body is rendered as the page's own.
    summary = html.escape(f"How this page was made: {_run_summary(chapter)}")
    lines = ['<details class="course-run-info">', f"<summary>{summary}</summary>", "", ran, ""]
    if chapter.name in verified:
        # One item per stack (a six-column table does not fit the page's width).
        cells = [f"- {title}: {text}" for title, text in verified[chapter.name]]
        lines += ["Verified on (`make verified`, from real runs):", "", *cells, ""]
    else:
        lines += ["Verified on: no record for this chapter.", ""]
    lines += ["</details>", "", chapter_links(chapter.name, settings, downloadable)]
    if chapter.status != "ok":
        lines += [
            "",
            ":::{error}",
            f"This chapter failed when the course ran: {md_text(chapter.error or 'no error was recorded')}",
            ":::",
        ]
    return "\n".join(lines) + "\n"


#: Cells the site hides (MyST-NB's `remove-cell`): the chapter's parameters, papermill's, the set-up.
HIDDEN_TAGS = ("parameters", "injected-parameters", "setup")


def hide_cell(cell: dict[str, Any]) -> bool:
    """Whether the page hides `cell`: one of HIDDEN_TAGS, unless it shows an error (a set-up that failed)."""
    failed = any(out.get("output_type") == "error" for out in cell.get("outputs", []))
    return bool(set(_tags(cell)) & set(HIDDEN_TAGS)) and not failed


def _markdown(cell_id: str, text: str) -> dict[str, Any]:
    return {"cell_type": "markdown", "id": cell_id, "metadata": {}, "source": text}


def site_links(text: str) -> str:
    """Markdown `text` with its links to docs/sources.md on GitHub sent to the site's own page
    (the anchors are GitHub's heading slugs, which the site's headings also answer to)."""
    return SOURCES_LINK.sub(lambda m: f"(sources.md{m.group(1) or ''})", text)


#: A link to a chapter's notebook, `[chapter 02 §5](02_tensors_on_the_gpu.ipynb#5-...)`: words, chapter, anchor.
CHAPTER_LINK = re.compile(r"\[([^\]]*)\]\((\d\d_[\w-]+)\.ipynb(#[^)\s]*)?\)")


def links_to_chapters(text: str, built: set[str], settings: dict[str, Any] | None) -> str:
    """Markdown `text` with its links to chapters this site has no page of (a site of some chapters) sent to the
    chapter's notebook on GitHub (`github_url`), or, where no repository is set, left as their words: no link on
    the page leads nowhere."""
    from .kaggle import KaggleSetupError, github_url

    def other(m: re.Match[str]) -> str:
        if m.group(2) in built:
            return m.group(0)
        try:
            return f"[{m.group(1)}]({github_url(f'{m.group(2)}.ipynb', settings)})"
        except KaggleSetupError:
            return m.group(1)

    return CHAPTER_LINK.sub(other, text)


def chapter_source(
    chapter: Chapter,
    info: str,
    sources_page: bool = False,
    built: set[str] | None = None,
    settings: dict[str, Any] | None = None,
) -> tuple[str, str]:
    """(file name, content) of a chapter's page source: its executed notebook, prepared; or a page.
    With `sources_page`, links to docs/sources.md go to the site's page of it; given the chapters that have a
    page (`built`), links to other chapters go to GitHub (`links_to_chapters`, with the Kaggle `settings`)."""
    if chapter.notebook is None:
        return f"{chapter.name}.md", f"# {chapter.title}\n\n{info}"
    nb = static_widgets(json.loads(json.dumps(chapter.notebook)))
    cells = [c for c in nb.get("cells", []) if "papermill-error-cell-tag" not in _tags(c)]
    for cell in (c for c in cells if c.get("cell_type") == "markdown"):
        if sources_page:
            cell["source"] = site_links(_source(cell))
        if built is not None:
            cell["source"] = links_to_chapters(_source(cell), built, settings)
    for cell in cells:
        if hide_cell(cell) and "remove-cell" not in _tags(cell):
            _tags(cell).append("remove-cell")
    # The run facts go under the title's cell (title and what the chapter teaches), before the lesson.
    title_at = next(
        (i for i, c in enumerate(cells) if c.get("cell_type") == "markdown" and chapter_title({"cells": [c]})), None
    )
    if title_at is None:  # a notebook without a title gets one, its name
        before, head, rest, after = [], f"# {chapter.title}", "", cells
    else:
        lines = _source(cells[title_at]).splitlines(keepends=True)
        cut = next(i for i, line in enumerate(lines) if line.startswith("# ")) + 1
        before, after = cells[:title_at], cells[title_at + 1 :]
        head, rest = "".join(lines[:cut]), "".join(lines[cut:]).strip("\n")
    added = [_markdown("course-title", head)]
    if rest:
        added.append(_markdown("course-intro", rest))
    added.append(_markdown("course-run-info", info))
    nb["cells"] = [*before, *added, *after]
    for n, cell in enumerate(nb["cells"]):  # nbformat 4.5 wants an id on every cell
        cell.setdefault("id", f"cell-{n}")
    nb["nbformat"], nb["nbformat_minor"] = 4, max(5, nb.get("nbformat_minor", 5))
    return f"{chapter.name}.ipynb", json.dumps(nb, ensure_ascii=False)


def course_description(readme: Path = ROOT / "README.md") -> str:
    """What the course is: the README's opening, between its title and its first section."""
    if not readme.is_file():
        return ""
    text = readme.read_text(encoding="utf-8")
    m = re.search(r"^# .*?\n(.*?)^## ", text, flags=re.S | re.M)
    return m.group(1).strip() if m else ""


def chapter_promise(chapter: Chapter) -> str:
    """What a chapter says a learner can do after it: its "After this chapter you can ..." sentence
    after "you can" (Markdown, on one line: the landing page's line for it), or "" when it has none."""
    nb = chapter.notebook or {}
    for cell in nb.get("cells", [])[:3]:
        if cell.get("cell_type") != "markdown":
            continue
        m = re.search(r"After this chapter,?\s+you\s+can\s+(.*?)(?:\n\s*\n|\Z)", _source(cell), flags=re.S)
        if m:
            text = " ".join(m.group(1).split())
            return text[0].upper() + text[1:]
    return ""


#: The landing page's words for a learner: who the course is for, where to start, how to run a chapter.
WHO_FOR = """\
## Who it is for

For anyone who trains or runs models in PyTorch and wants them to use a GPU well, or to understand
why they do not. You need Python and the PyTorch basics: tensors, an `nn.Module`, a training loop
with an optimizer. You do not need a GPU to start: every chapter runs on a laptop's CPU, and where
a cell needs a GPU it says so and runs a labelled stand-in that teaches the same lesson.

## Start here

Begin with {doc}`FIRST`WHAT_IT_DOES Chapters 01 to 07 build on each other and are best read in order;
after them, take the others in the order you need them. Each chapter ends with exercises that check
your answer and explain a wrong one.

## Run a chapter yourself

Each chapter page has its launch buttons under its opening.

* **Kaggle** (two T4 GPUs): *Open in Kaggle*, then **Settings → Accelerator → GPU T4 ×2** and
  **Run All**. The set-up cell finds the course's helpers in the attached dataset
  `DATASET` (**Add Input**), or installs them when **Internet** is on.
* **Colab** (one T4): *Open in Colab*, then **Runtime → Change runtime type → T4 GPU** and
  **Run all**; the set-up cell installs the helpers with pip.
* **Your machine**: clone the repository and run `make lab` (JupyterLab on the chapters) or
  `make run` (every chapter, headless); the README says more.
"""


def index_page(
    title: str,
    label: str,
    chapters: list[Chapter],
    has_verified: bool,
    has_sources: bool = False,
    repository: str = "",
) -> str:
    """The landing page for a learner: what the course is, who it is for and where to start, how to
    run a chapter, each chapter with what it teaches; then one paragraph on how the pages were made
    (the details of each run live on its page and on the verified page); the toctree."""
    items = []
    for c in chapters:
        promise = chapter_promise(c)
        line = f"- **{{doc}}`{c.name}`**" + (f" — {promise}" if promise else "")
        if c.status != "ok":
            line += " **(failed in this build; its page says why)**"
        items.append(line)
    machines = sorted({_machine_and_torch(c.ran_on) for c in chapters if c.ran_on})
    dates = sorted(c.date[:10] for c in chapters if c.date)
    quick = {c.quick for c in chapters if c.notebook is not None}
    made = "Every chapter on this site was executed from top to bottom, headless"
    made += f", on {md_text('; '.join(machines))}" if machines else ""
    if quick in ({True}, {False}):
        made += " with " + _sizes(True in quick)
    if dates:
        made += f", on {dates[0]}" + (f" to {dates[-1]}" if dates[-1] != dates[0] else "")
    made += (
        ". Every figure and plot is what that run measured. Each page's closed *How this page was made*"
        " line has the details of its run"
        + (", and the {doc}`verified` page lists every stack each chapter has run on." if has_verified else ".")
        + " An interactive widget needs a running kernel: its place on a page says so and shows what it drew."
    )
    failed = [c for c in chapters if c.status != "ok"]
    if failed:
        made += f" **{len(failed)} of {len(chapters)} chapters failed** in this build; their pages state the error."
    first = chapters[0].name  # chapter 00 says what it does; a build without it starts elsewhere
    does = ": it switches a GPU on (on Kaggle, on Colab or on your machine) and finds out what stops torch using one."
    who = WHO_FOR.replace("FIRST", first).replace("WHAT_IT_DOES", does if first.startswith("00_") else ".")
    who = who.replace("DATASET", HELPERS_DATASET)
    if repository:
        who = who.replace("clone the repository", f"clone [the repository]({repository})")
        who = who.replace("the README says more", f"[the README]({repository}#readme) says more")
    toc = (
        [c.name for c in chapters]
        + (["sources"] if has_sources else [])
        + (["verified", "measured"] if has_verified else [])
    )
    parts = [
        f"# {md_text(title)}",
        "",
        f"*{md_text(label)}*" if label else "",
        "",
        course_description(),
        "",
        who,
        "## Chapters",
        "",
        "Each chapter, and what you will be able to do after it:",
        "",
        *items,
        "",
        "## How these pages were made",
        "",
        made,
        "",
        "```{toctree}",
        ":hidden:",
        ":caption: Chapters",
        "",
        *toc,
        "```",
    ]
    return "\n".join(parts) + "\n"


# ----------------------------------------------------------------------------------------------
# Building
# ----------------------------------------------------------------------------------------------


def footer(repository: str) -> str:
    """The footer of every page: the licence and where the source is."""
    source = f' · Source: <a href="{html.escape(repository)}">{html.escape(repository.removeprefix("https://"))}</a>'
    return f'<p class="course-footer">Licence: {LICENCE}{source if repository else ""}</p>'


def sphinx_config(title: str, label: str, repository: str = "") -> dict[str, Any]:
    """The Sphinx configuration of the site (passed as overrides: the site has no conf.py)."""
    banner = f'<span class="course-edition">{html.escape(label)}</span>' if label else ""
    return {
        "project": title,
        "author": "the course's authors",
        "html_title": f"{title} · {label}" if label else title,
        "language": "en",
        "extensions": ["myst_nb", "sphinx_copybutton"],
        # A copy button on every code cell and code block, none on outputs.
        "copybutton_selector": "div:not(.output) > div.highlight pre",
        "html_theme": "sphinx_book_theme",
        "html_theme_options": {
            "announcement": banner,
            "home_page_in_toc": True,
            "show_prev_next": True,
            "use_download_button": False,  # it offers _sources/, which the site does not copy
            "use_fullscreen_button": False,
            "show_toc_level": 2,
            "repository_url": repository,
            "use_repository_button": bool(repository),
            "extra_footer": footer(repository),
        },
        # pydata-sphinx-theme's colour mode before a reader picks one (its own default is empty, and
        # it logs "Got invalid theme mode" as a console error on a first visit).
        "html_context": {"default_mode": "auto"},
        "html_favicon": str(SITE_FILES / "favicon.svg"),
        "html_static_path": [str(SITE_FILES)],
        "html_css_files": ["course.css"],
        "html_js_files": [("course.js", {"defer": "defer"})],
        "html_show_sourcelink": False,
        "html_copy_source": False,
        "html_last_updated_fmt": None,
        "nb_execution_mode": "off",
        "nb_merge_streams": True,
        "nb_mime_priority_overrides": MIME_PRIORITY,
        "nb_ipywidgets_js": {},  # MyST-NB would load ipywidgets' JavaScript from a CDN
        "myst_enable_extensions": ["colon_fence"],
        # Headings answer to GitHub's slugs (`sources.md#4-hardware-figures`), as the chapters link them.
        "myst_heading_anchors": 2,
        "exclude_patterns": ["_build", NOTEBOOK_COPIES],
        "suppress_warnings": ["myst.header"],  # chapters' sections may skip a heading level
    }


def build_site(
    executed_dir: Path,
    out_dir: Path,
    *,
    label: str = "",
    title: str = DEFAULT_TITLE,
    runs: list[ChapterRun] | None = None,
    notebooks_dir: Path = NOTEBOOKS,
    verified_record: Path = RECORD,
    kaggle_settings: dict[str, Any] | None = None,
    sources: Path = SOURCES,
) -> Site:
    """Build the course site from the executed chapters in `executed_dir` into `out_dir`.

    `label` (an edition such as "Handout edition", or "") is shown on every page; `runs` are the
    runner's results (status, error, seconds), in chapter order: without them, every `NN_*.ipynb`
    in `executed_dir` is a chapter and its status comes from the notebook. `notebooks_dir` holds
    the chapters' sources (their titles when no notebook was executed, and the content hash of the
    "verified on" record); `kaggle_settings` default to kaggle-metadata.json; `sources` (the
    course's docs/sources.md) is published as a page, and the chapters' links to it lead there. `out_dir` is
    replaced as a whole, once the new site is complete; a folder there that is not a site is
    refused rather than deleted.
    """
    executed_dir, out_dir = Path(executed_dir), Path(out_dir)
    if not executed_dir.is_dir():
        raise FileNotFoundError(f"no folder of executed notebooks at {executed_dir}: run `python -m coursetools run`")
    if out_dir.exists() and any(out_dir.iterdir()) and not (out_dir / ".buildinfo").is_file():
        raise FileExistsError(f"{out_dir} exists and is not a site built by this tool: pass an empty or new folder")
    if runs is None:
        names = [p.stem for p in discover_chapters(executed_dir)]
        by_name: dict[str, ChapterRun | None] = dict.fromkeys(names)
    else:
        by_name = {r.chapter: r for r in runs}
    if not by_name:
        raise ValueError(
            f"no chapters to build a site from: {executed_dir} has no NN_topic.ipynb and no runs were given"
        )
    start = time.perf_counter()
    chapters = [read_chapter(n, executed_dir / f"{n}.ipynb", r, notebooks_dir) for n, r in by_name.items()]
    record = load_record(verified_record)
    verified = {name: cells for name, (_, cells) in chapter_cells(record, notebooks_dir).items()}
    with tempfile.TemporaryDirectory(prefix="course-site-") as tmp:
        src = Path(tmp) / "src"
        src.mkdir()
        for badge in (BADGE, COLAB_BADGE):
            shutil.copy2(SITE_FILES / badge, src / badge)
        (src / NOTEBOOK_COPIES).mkdir()
        has_sources = Path(sources).is_file()
        built = {c.name for c in chapters if c.notebook is not None}  # the pages a chapter's links may reach
        for chapter in chapters:
            notebook = Path(notebooks_dir) / f"{chapter.name}.ipynb"
            if notebook.is_file():  # the download: the notebook as in the repository, no outputs
                shutil.copy2(notebook, src / NOTEBOOK_COPIES / notebook.name)
            info = run_info(chapter, verified, kaggle_settings, downloadable=notebook.is_file())
            name, content = chapter_source(chapter, info, has_sources, built, kaggle_settings)
            (src / name).write_text(content, encoding="utf-8")
        has_verified = bool(verified)
        if has_verified:
            (src / "verified.md").write_text(render(record, notebooks_dir), encoding="utf-8")
            (src / "measured.md").write_text(render_page(notebooks_dir=notebooks_dir), encoding="utf-8")
        if has_sources:
            shutil.copy2(sources, src / "sources.md")
        repository = repository_url(kaggle_settings)
        index = index_page(title, label, chapters, has_verified, has_sources, repository)
        (src / "index.md").write_text(index, encoding="utf-8")
        # Sphinx writes into the temporary folder (MyST-NB puts a `jupyter_execute/` folder beside
        # its output, so that stays there too); the finished site is then swapped in whole.
        html = Path(tmp) / "html"
        config = sphinx_config(title, label, repository)
        log = run_sphinx(src, html, Path(tmp) / "doctrees", config)
        staged_folder(out_dir, lambda staging: shutil.copytree(html, staging, dirs_exist_ok=True))
    found = [line for line in log.splitlines() if line.strip()]
    return Site(out_dir / "index.html", chapters, found, round(time.perf_counter() - start, 1))


def run_sphinx(src: Path, out: Path, doctrees: Path, config: dict[str, Any]) -> str:
    """Build `src` into `out` as HTML with Sphinx, in this process; return its warnings (raise on errors)."""
    from sphinx.application import Sphinx
    from sphinx.util.console import nocolor
    from sphinx.util.docutils import docutils_namespace, patch_docutils

    nocolor()  # plain text warnings, as they are returned and printed
    log = io.StringIO()
    # As `sphinx-build` does: docutils' registries are process-wide, so each build gets its own.
    with patch_docutils(None), docutils_namespace(), warnings.catch_warnings():
        # The theme's and MyST-NB's notices about Sphinx APIs they still use are theirs to fix:
        # keep them out of `make run` and the test summary.
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        app = Sphinx(
            str(src),
            None,
            str(out),
            str(doctrees),
            "html",
            confoverrides=config,
            status=None,
            warning=log,
            freshenv=True,
            keep_going=True,
        )
        app.build()
    if app.statuscode:
        raise SiteBuildError(f"Sphinx failed to build the site:\n{log.getvalue()}")
    return log.getvalue()


__all__ = ["Site", "SiteBuildError", "build_site"]
