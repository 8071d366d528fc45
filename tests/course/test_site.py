"""The course site (coursetools/site.py) on a tiny synthetic executed chapter: nothing is executed.

One site is built for the module (a few seconds of Sphinx); the other tests check the pieces that
prepare its sources. The browser test (test_browser.py) walks a site built from real chapter runs.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from coursetools import NOTEBOOKS, authoring, site, verified
from coursetools.execute import ChapterRun, chapter_hash
from coursetools.kaggle import open_in_colab_url, open_in_kaggle_url

# A 1×1 PNG: what an executed plot carries, small.
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
ALT = "Bars of allocated and reserved MiB after each step (test)"
INTRO = (
    "After this chapter you can count.\n\n<details><summary>Runs on</summary>\n\n| machine | gets |\n| --- | --- |\n"
    "| CPU | counts |\n\n</details>\n\n<details><summary>Glossary</summary>\n\nGPU 显卡 ✅\n\n</details>"
)
REPO = "https://github.com/pytorch-gpu-course/pytorch-gpu-course"
CITE = f"A T4 has 320 tensor cores ([sources §4]({REPO}/blob/main/docs/sources.md#4-hardware-figures))."
SETUP = "Running on: Test box | torch 9.9.9+test (CPU build) | 2 CPUs | Python 3.11.7 | local\n"


def _code(source: str, outputs: list[dict], tags: list[str] | None = None) -> dict:
    return {
        "cell_type": "code",
        "metadata": {"tags": tags or []},
        "source": source,
        "outputs": outputs,
        "execution_count": 1,
    }


def _stream(text: str) -> dict:
    return {"output_type": "stream", "name": "stdout", "text": text}


def executed_chapter() -> dict:
    """What papermill writes for a small chapter: injected parameters, a setup line, a plot, a widget."""
    html_plot = f'<img alt="{ALT}" src="data:image/png;base64,{PNG}">'
    widget_state = {
        "box": {"model_name": "VBoxModel", "state": {"children": ["IPY_MODEL_out"]}},
        "out": {"model_name": "OutputModel", "state": {"outputs": [_stream("the widget drew this at first\n")]}},
    }
    cells = [
        {
            "cell_type": "markdown",
            "metadata": {},
            "source": "# 07 · Tiny chapter\n\n" + INTRO,
        },
        _code("# Parameters of the chapter\nQUICK = False", [], ["parameters"]),
        _code("# Parameters\nQUICK = True\n", [], ["injected-parameters"]),
        _code("import helpers", [_stream(SETUP)], ["setup"]),
        {
            "cell_type": "markdown",
            "metadata": {},
            "source": "## 1. Counting allocations\n\nA word: zeppelinium. " + CITE,
        },
        _code(
            "show(fig)",
            [
                {
                    "output_type": "display_data",
                    "metadata": {},
                    "data": {"text/html": html_plot, "image/png": PNG, "text/plain": "<Figure>"},
                }
            ],
        ),
        _code(
            "widget()",
            [
                {
                    "output_type": "display_data",
                    "metadata": {},
                    "data": {
                        site.WIDGET_VIEW: {"model_id": "box", "version_major": 2, "version_minor": 0},
                        "text/plain": "VBox(...)",
                    },
                }
            ],
        ),
    ]
    metadata = {
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "papermill": {"parameters": {"QUICK": True}, "end_time": "2026-11-22T10:30:00.5", "duration": 3.25},
        "widgets": {site.WIDGET_STATE: {"state": widget_state, "version_major": 2, "version_minor": 0}},
    }
    return {"cells": cells, "metadata": metadata, "nbformat": 4, "nbformat_minor": 5}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A site from one executed chapter (07_tiny) and one that failed before writing a notebook (08_gone)."""
    root = tmp_path_factory.mktemp("site")
    executed, sources = root / "executed", root / "notebooks"
    executed.mkdir()
    sources.mkdir()
    for folder in (executed, sources):
        (folder / "07_tiny.ipynb").write_text(json.dumps(executed_chapter()), encoding="utf-8")
    (sources / "08_gone.ipynb").write_text(
        json.dumps({"cells": [{"cell_type": "markdown", "metadata": {}, "source": "# 08 · Gone"}], "metadata": {}}),
        encoding="utf-8",
    )
    record = root / "verified.json"
    row = {"hash": chapter_hash(sources / "07_tiny.ipynb"), "date": "2026-11-21", "torch": "torch 9.9.9", "device": "x"}
    record.write_text(json.dumps({"chapters": {"07_tiny": {verified.CI_STACKS[0]: row}}}), encoding="utf-8")
    runs = [
        ChapterRun("07_tiny", "ok", 3.2, "Test box", 0, "", str(executed / "07_tiny.ipynb")),
        ChapterRun("08_gone", "failed", 1.0, "unknown", 0, "RuntimeError: the kernel died on purpose"),
    ]
    cited = root / "sources.md"
    cited.write_text(
        "# Sources\n\n## §4 Hardware figures\n\n| fact | source |\n| --- | --- |\n| 320 tensor cores | T4 datasheet |\n"
    )
    out = root / "out"
    result = site.build_site(
        executed, out, label="Handout edition", runs=runs, notebooks_dir=sources, verified_record=record, sources=cited
    )
    return result, out


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def test_the_site_has_every_chapter_with_its_title_and_the_label_on_every_page(built) -> None:
    result, out = built
    assert result.index == out / "index.html" and result.warnings == [], result.warnings
    index = _text(out / "index.html")
    assert "07 · Tiny chapter" in index and "08 · Gone" in index, "chapter titles from the first # heading"
    assert 'href="07_tiny.html"' in index and 'href="08_gone.html"' in index
    assert "How these pages were made" in index
    assert re.search(r"Every chapter is a\s+Jupyter notebook", index), "what the course is: the README's opening"
    assert re.search(r"<title>07 · Tiny chapter\b", _text(out / "07_tiny.html")), "page title is the chapter's"
    for page in ("index.html", "07_tiny.html", "08_gone.html", "verified.html", "search.html"):
        assert "Handout edition" in _text(out / page), f"{page} lacks the edition label"
    assert (out / "search.html").is_file() and (out / "searchindex.js").is_file()
    assert "zeppelinium" in _text(out / "searchindex.js"), "the search index has the chapter's words"


def test_the_landing_page_is_for_learners(built) -> None:
    """What the course is, who it is for, where to start, how to run a chapter, each chapter with what
    a learner can do after it; the build facts in one paragraph, not a table of seconds per chapter."""
    _, out = built
    index = _text(out / "index.html")
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", index[index.index("<article") :])).split())
    sections = ["Who it is for", "Start here", "Run a chapter yourself", "Chapters", "How these pages were made"]
    at = [text.find(f"{name} #") for name in sections]
    assert -1 not in at and at == sorted(at), f"the landing page's sections, in order: {sections}"
    assert re.search(r'Begin with <a class="reference internal" href="07_tiny.html"', index), "start here: chapter 1"
    for way in ("Kaggle", "Settings → Accelerator → GPU T4 ×2", "Colab", "Runtime → Change runtime type", "make lab"):
        assert way in text, f"how to run a chapter: {way!r} is missing"
    assert "07 · Tiny chapter — Count." in text, "each chapter with what a learner can do after it"
    assert "08 · Gone (failed in this build; its page says why)" in text
    assert "Test box, torch 9.9.9+test (CPU build) with QUICK sizes" in text and "on 2026-11-22" in text
    assert "seconds" not in text and "status" not in text, "no build log on the landing page"
    assert f'href="{REPO}"' in index, "the local way links the repository"


def test_start_here_describes_chapter_00_only_when_the_site_has_it() -> None:
    with_00 = site.index_page("T", "", [site.Chapter("00_gpu", "00 · GPU", "ok")], False)
    assert "Begin with {doc}`00_gpu`: it switches a GPU on" in with_00
    without = site.index_page("T", "", [site.Chapter("05_mem", "05 · Memory", "ok")], False)
    assert "Begin with {doc}`05_mem`. Chapters 01 to 07" in without and "switches a GPU on" not in without
    assert "`pytorch-gpu-course-helpers` (**Add Input**)" in without, "the Kaggle dataset by its name"


def test_chapter_promise_reads_the_after_this_chapter_line() -> None:
    chapter = site.Chapter("09_x", "09 · X", "ok", notebook=executed_chapter())
    assert site.chapter_promise(chapter) == "Count."
    cell = {
        "cell_type": "markdown",
        "metadata": {},
        "source": "# T\n\nAfter this chapter, you can\nread *this*.\n\nMore.",
    }
    assert site.chapter_promise(site.Chapter("a", "a", "ok", notebook={"cells": [cell]})) == "Read *this*."
    assert site.chapter_promise(site.Chapter("a", "a", "ok", notebook={"cells": []})) == ""
    assert site.chapter_promise(site.Chapter("a", "a", "failed")) == ""


def test_a_chapter_page_says_where_it_ran_and_links_kaggle_and_its_record(built) -> None:
    _, out = built
    page = _text(out / "07_tiny.html")
    assert "Test box" in page and "torch 9.9.9+test (CPU build)" in page, "the setup line: machine and torch"
    assert "QUICK sizes" in page and "3.2 s" in page and "2026-11-22 10:30 UTC" in page
    assert open_in_kaggle_url("07_tiny.ipynb") in page, "the badge links the chapter on Kaggle"
    assert 'alt="Open in Kaggle"' in page and (out / "_images" / site.BADGE).is_file(), "the badge is served locally"
    assert open_in_colab_url("07_tiny.ipynb") in page and 'alt="Open in Colab"' in page, "the Colab badge"
    assert (out / "_images" / site.COLAB_BADGE).is_file()
    assert "✓ 2026-11-21 · torch 9.9.9" in page, "the verified row, as make verified renders it"
    main = page[page.index("<article") :]
    order = [main.index(s) for s in ("07 · Tiny chapter", "After this chapter you can count", "How this page was made")]
    assert order == sorted(order) and main.index("How this page was made") < main.index("1. Counting allocations")
    folded = re.search(r'<details class="course-run-info">\s*<summary>(.*?)</summary>(.*?)</details>', page, re.S)
    assert folded, "the run facts are one collapsed line"
    assert html.unescape(folded.group(1)) == (
        "How this page was made: Test box, torch 9.9.9+test (CPU build) · QUICK sizes · 3.2 s"
    )
    assert "2026-11-22 10:30 UTC" in folded.group(2) and "✓ 2026-11-21 · torch 9.9.9" in folded.group(2)
    runs_on = re.search(r"<details>\s*<summary>Runs on</summary>(.*?)</details>", main, re.S)
    assert runs_on and "<table" in runs_on.group(1), "the Runs-on table is folded, and rendered as a table"
    assert re.search(r"<details>\s*<summary>Glossary</summary>.*?显卡.*?</details>", main, re.S)


def test_the_parameters_and_setup_cells_are_hidden(built) -> None:
    _, out = built
    text = html.unescape(re.sub(r"<[^>]+>", "", _text(out / "07_tiny.html")))  # the code as a reader sees it
    assert "QUICK = False" not in text, "the chapter's parameters cell is on the page"
    assert "QUICK = True" not in text, "papermill's injected parameters cell is on the page"
    assert "import helpers" not in text and "Running on:" not in text, "the set-up cell is on the page"


def test_plots_keep_their_html_and_alt_text_and_widgets_become_a_note(built) -> None:
    _, out = built
    page = _text(out / "07_tiny.html")
    assert f'alt="{ALT}"' in page, "the text/html rendering (with its alt) is chosen over the bare PNG"
    assert not [p for p in (out / "_images").glob("*.png")], "the PNG of an HTML bundle is not written twice"
    assert site.WIDGET_NOTE in page and "the widget drew this at first" in page
    assert "widget-state" not in page and "embed-amd" not in page, "no widget JavaScript from a CDN"


def test_a_failed_chapter_without_a_notebook_still_gets_a_page(built) -> None:
    _, out = built
    page = _text(out / "08_gone.html")
    assert "08 · Gone" in page and "the kernel died on purpose" in page
    assert "failed" in _text(out / "index.html")


def test_nothing_is_fetched_from_the_network_and_fonts_are_declared(built) -> None:
    _, out = built
    for page in out.glob("*.html"):
        text = _text(page)
        remote = re.findall(r"<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)=\"(?:https?:)?//[^\"]*\"", text)
        assert not remote, f"{page.name} loads {remote}"
        assert "_static/course.css" in text and "_static/course.js" in text
    css = _text(out / "_static" / "course.css")
    for font in ("Noto Sans CJK SC", "Source Han Sans SC", "PingFang SC", "Microsoft YaHei", "Noto Color Emoji"):
        assert f'"{font}"' in css
    assert "@import" not in css and "url(" not in css, "fonts are the reader's own, never downloaded"


def test_prev_next_links_run_through_the_chapters(built) -> None:
    _, out = built
    index, first, second = (_text(out / p) for p in ("index.html", "07_tiny.html", "08_gone.html"))
    assert re.search(r'class="right-next"\s+href="07_tiny.html"', index)
    assert re.search(r'class="left-prev"\s+href="index.html"', first)
    assert re.search(r'class="right-next"\s+href="08_gone.html"', first)
    assert re.search(r'class="left-prev"\s+href="07_tiny.html"', second)


# ------------------------------------------------------------------------------------------------
# The pieces, without Sphinx
# ------------------------------------------------------------------------------------------------


def test_md_text_makes_any_text_literal_markdown() -> None:
    assert site.md_text("a | b *c* `d`\n<e>") == r"a \| b \*c\* \`d\` \<e\>"


def test_static_widgets_replaces_views_and_drops_the_state() -> None:
    nb = site.static_widgets(executed_chapter())
    assert "widgets" not in nb["metadata"]
    outputs = nb["cells"][-1]["outputs"]
    assert site.WIDGET_NOTE in outputs[0]["data"]["text/plain"]
    assert outputs[1]["text"] == "the widget drew this at first\n"
    lonely = {"cells": [_code("w", [{"output_type": "display_data", "data": {site.WIDGET_VIEW: {"model_id": "?"}}}])]}
    assert [o["data"]["text/plain"] for o in site.static_widgets(lonely)["cells"][0]["outputs"]] == [site.WIDGET_NOTE]


def test_reading_a_chapter_from_its_notebook_alone(tmp_path: Path) -> None:
    path = tmp_path / "07_tiny.ipynb"
    path.write_text(json.dumps(executed_chapter()), encoding="utf-8")
    chapter = site.read_chapter("07_tiny", path, None, tmp_path)
    assert (chapter.title, chapter.status, chapter.quick, chapter.seconds) == ("07 · Tiny chapter", "ok", True, 3.25)
    assert chapter.ran_on == SETUP.removeprefix("Running on: ").strip()
    missing = site.read_chapter("09_x", tmp_path / "09_x.ipynb", None, tmp_path)
    assert missing.status == "failed" and "no executed notebook" in missing.error and missing.title == "09_x"


def test_verified_cells_are_the_rendered_ones(tmp_path: Path) -> None:
    (tmp_path / "07_tiny.ipynb").write_text(json.dumps(executed_chapter()), encoding="utf-8")
    table = verified.chapter_cells({"chapters": {}}, tmp_path)
    page = verified.render({"chapters": {}}, tmp_path)
    assert "| chapter | code hash |" in page and list(table) == ["07_tiny"]
    current, cells = table["07_tiny"]
    assert any("not yet executed" in text for _, text in cells)
    assert f"07_tiny | `{current}` | " + " | ".join(text for _, text in cells) + " |" in page


def test_bad_folders_are_refused_with_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="coursetools run"):
        site.build_site(tmp_path / "nope", tmp_path / "out")
    with pytest.raises(ValueError, match="no chapters"):
        site.build_site(tmp_path, tmp_path / "out")
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "thesis.txt").write_text("keep me")
    (tmp_path / "07_tiny.ipynb").write_text(json.dumps(executed_chapter()), encoding="utf-8")
    with pytest.raises(FileExistsError, match="not a site"):
        site.build_site(tmp_path, precious)
    assert (precious / "thesis.txt").read_text() == "keep me"


def test_a_chapter_source_keeps_every_cell_once_and_puts_the_box_under_the_title() -> None:
    chapter = site.Chapter("07_tiny", "07 · Tiny chapter", "ok", notebook=executed_chapter())
    name, text = site.chapter_source(chapter, "BOX")
    cells = json.loads(text)["cells"]
    assert name == "07_tiny.ipynb" and [c["source"] for c in cells[:3]] == ["# 07 · Tiny chapter\n", INTRO, "BOX"]
    assert len(cells) == len(executed_chapter()["cells"]) + 2 and len({c["id"] for c in cells}) == len(cells)
    hidden = [c["metadata"]["tags"] for c in cells if "remove-cell" in c["metadata"].get("tags", [])]
    assert hidden == [["parameters", "remove-cell"], ["injected-parameters", "remove-cell"], ["setup", "remove-cell"]]
    assert "remove-cell" not in str(executed_chapter()), "the notebook itself is not changed"
    error = {"output_type": "error", "ename": "E", "evalue": "v", "traceback": []}
    failed = _code("import helpers", [error], ["setup"])
    assert not site.hide_cell(failed), "a set-up cell that failed stays, with its error"
    untitled = site.Chapter("09_x", "09_x", "ok", notebook={"cells": [_code("x = 1", [])], "metadata": {}})
    cells = json.loads(site.chapter_source(untitled, "BOX")[1])["cells"]
    assert [c["source"] for c in cells] == ["# 09_x", "BOX", "x = 1"], "a notebook without a title gets its name"


def test_reader_tools_copy_download_repository_and_licence(built) -> None:
    _, out = built
    page = _text(out / "07_tiny.html")
    assert "_static/copybutton.js" in page and "div:not(.output) > div.highlight pre" in _text(
        out / "_static" / "copybutton.js"
    ), "a copy button on code cells, not on outputs"
    download = re.search(r'<a class="reference download internal" download="" href="([^"]+)"', page)
    assert download and download.group(1).endswith("/07_tiny.ipynb"), "the page offers its notebook"
    downloaded = json.loads(_text(out / download.group(1)))
    assert downloaded == executed_chapter(), "the download is the notebook as in the repository"
    repository = REPO
    assert f'href="{repository}/blob/main/notebooks/07_tiny.ipynb"' in page, "the notebook on GitHub"
    for name in ("index.html", "07_tiny.html", "08_gone.html", "verified.html"):
        text = _text(out / name)
        assert f'href="{repository}"' in text, f"{name} lacks the repository link"
        assert re.search(r'class="course-footer">Licence: Apache-2\.0 · Source: <a href="', text), f"{name}: footer"
    assert not (out / "_notebooks").exists(), "the notebooks to download are not pages"


def test_the_sources_page_is_published_and_the_chapters_cite_it_there(built) -> None:
    _, out = built
    page = _text(out / "07_tiny.html")
    link = re.search(r'<a class="reference internal" href="(sources\.html#[^"]+)">', page)
    assert link, "the chapter's link to docs/sources.md §4 leads to the site's sources page"
    anchor = link.group(1).split("#")[1]
    sources = _text(out / "sources.html")
    assert f'id="{anchor}"' in sources and "320 tensor cores" in sources
    assert "docs/sources.md" not in page, "no link to the repository's copy is left"
    assert 'href="sources.html"' in _text(out / "index.html"), "the sources page is in the table of contents"
    text = "(see [§2](https://github.com/a/b/blob/dev/docs/sources.md#2-x) and [all](https://github.com/a/b/blob/main/docs/sources.md))"
    assert site.site_links(text) == "(see [§2](sources.md#2-x) and [all](sources.md))"


# ------------------------------------------------------------------------------------------------
# Widgets: progress bars are text, interactive widgets keep their note and what they drew
# ------------------------------------------------------------------------------------------------


def _view(model_id: str, text: str, output_type: str = "display_data") -> dict:
    return {
        "output_type": output_type,
        "metadata": {},
        "data": {site.WIDGET_VIEW: {"model_id": model_id, "version_major": 2, "version_minor": 0}, "text/plain": text},
    }


def _tqdm_state(box: str, label: str, count: str, value: float, total: float, hidden: bool = False) -> dict:
    """A tqdm.auto bar's widgets as papermill stores them (shape copied from chapter 03's run)."""
    layout = {"model_name": "LayoutModel", "state": {"_model_name": "LayoutModel", "visibility": None, "width": None}}
    return {
        box: {
            "model_name": "HBoxModel",
            "state": {
                "_model_name": "HBoxModel",
                "box_style": "",
                "children": [f"IPY_MODEL_{box}-label", f"IPY_MODEL_{box}-bar", f"IPY_MODEL_{box}-count"],
                "layout": f"IPY_MODEL_{box}-layout",
            },
        },
        f"{box}-layout": {**layout, "state": {**layout["state"], "visibility": "hidden" if hidden else None}},
        f"{box}-label": {
            "model_name": "HTMLModel",
            "state": {"_model_name": "HTMLModel", "placeholder": "\u200b", "value": label, "layout": "IPY_MODEL_l"},
        },
        f"{box}-bar": {
            "model_name": "FloatProgressModel",
            "state": {"bar_style": "success", "max": total, "min": 0.0, "value": value, "layout": "IPY_MODEL_l"},
        },
        f"{box}-count": {
            "model_name": "HTMLModel",
            "state": {"_model_name": "HTMLModel", "placeholder": "\u200b", "value": count, "layout": "IPY_MODEL_l"},
        },
        "l": layout,
    }


def _with_state(cells: list[dict], state: dict) -> dict:
    return {"cells": cells, "metadata": {"widgets": {site.WIDGET_STATE: {"state": state, "version_major": 2}}}}


def test_a_progress_bar_becomes_the_line_it_showed_and_no_widget_note() -> None:
    end, stale = "\u20077/7\u2007[00:00&lt;00:00,\u200726.73count/s]", "\u20070/5\u2007[00:00&lt;?,\u2007?it/s]"
    state = {
        **_tqdm_state("bar", "piece\u2007counts:\u2007100%", end, 7, 7),
        **_tqdm_state("gone", "hidden:\u2007\u2007\u20070%", stale, 5, 5, hidden=True),
        **_tqdm_state("bare", "", "", 3, 8),
    }
    views = [_view("bar", "piece counts:   0%|  | 0/7"), _view("gone", "hidden: 0%"), _view("bare", "0%")]
    nb = site.static_widgets(_with_state([_code("sweep()", [_stream("before\n"), *views])], state))
    outputs = nb["cells"][0]["outputs"]
    assert [o.get("text") or o["data"]["text/plain"] for o in outputs] == [
        "before\n",
        "piece counts: 100% 7/7 [00:00<00:00, 26.73count/s]",  # the end of the run, not the 0% it began with
        "3/8",  # a bar without text: its own numbers
    ], "a bar closed with leave=False was hidden at the end, and shows nothing"
    assert all(site.WIDGET_VIEW not in o.get("data", {}) for o in outputs)
    assert site.WIDGET_NOTE not in json.dumps(nb), "a progress bar is not an interactive widget"
    assert site.progress_line("bar", state) == "piece counts: 100% 7/7 [00:00<00:00, 26.73count/s]"
    assert site.progress_line("l", state) is None and site.progress_line("?", state) is None


def test_an_interactive_widget_keeps_its_note_and_what_it_drew() -> None:
    drawn = {"text/html": f'<img alt="{ALT}">', "image/png": PNG}
    plot = {"output_type": "display_data", "metadata": {}, "data": drawn}
    state = {
        "ui": {
            "model_name": "VBoxModel",
            "state": {"_dom_classes": ["widget-interact"], "children": ["IPY_MODEL_size", "IPY_MODEL_out"]},
        },
        "size": {"model_name": "DropdownModel", "state": {"description": "size", "index": 1}},
        "out": {
            "model_name": "OutputModel",
            "state": {"msg_id": "", "outputs": [_stream("drawn at first\n"), plot, _view("inner", "inner: 0%")]},
        },
        **_tqdm_state("inner", "inner:\u2007100%", "\u20073/3\u2007[00:00&lt;00:00]", 3, 3),
    }
    nb = site.static_widgets(_with_state([_code("interact(show, size=...)", [_view("ui", "interactive(...)")])], state))
    outputs = nb["cells"][0]["outputs"]
    assert outputs[0]["data"]["text/plain"] == site.WIDGET_NOTE + " Below, what it showed when the chapter ran."
    assert 'class="course-widget-note"' in outputs[0]["data"]["text/html"]
    assert outputs[1:3] == [_stream("drawn at first\n"), plot], "its drawing, as the run left it"
    assert outputs[3]["data"] == {"text/plain": "inner: 100% 3/3 [00:00<00:00]"}, "a bar inside it is text too"
    assert len(outputs) == 4 and "widgets" not in nb["metadata"]


@pytest.mark.parametrize("path", sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")), ids=lambda p: p.stem)
def test_a_chapter_page_starts_its_lesson_on_the_first_screen(path) -> None:
    """On the site too, section 1 starts within `authoring.FIRST_SCREEN_LINES` rendered lines (the title, what
    the chapter teaches, the folded "Runs on" and glossary, the run's collapsed line and its links)."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    chapter = site.Chapter(path.stem, site.chapter_title(nb) or "", "ok", seconds=1.0, ran_on=SETUP, notebook=nb)
    page = json.loads(site.chapter_source(chapter, site.run_info(chapter, {}, None))[1])
    lines = authoring.lines_before_lesson(page["cells"])
    assert lines is not None and lines <= authoring.FIRST_SCREEN_LINES, f"{path.name}: {lines} lines before section 1"


def test_links_to_chapters_the_site_lacks_lead_to_the_repository() -> None:
    """A site of some chapters (`run --only`, the browser test's two) has no page for a linked chapter: the link goes
    to its notebook in the repository, or, without a repository, stays as its words."""
    text = "See [chapter 02 §5](02_tensors_on_the_gpu.ipynb#5-the-rule) and [chapter 07](07_tiny.ipynb#1-counting)."
    moved = site.links_to_chapters(text, {"07_tiny"}, {"repository": REPO, "branch": "main"})
    assert f"[chapter 02 §5]({REPO}/blob/main/notebooks/02_tensors_on_the_gpu.ipynb)" in moved
    assert "[chapter 07](07_tiny.ipynb#1-counting)" in moved, "a chapter the site has keeps its link"
    no_repository = {"repository": "", "branch": "main"}
    assert site.links_to_chapters(text, {"07_tiny"}, no_repository).startswith("See chapter 02 §5 and [chapter 07]")
