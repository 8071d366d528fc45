"""The course in a real browser: headless Chromium (Debian's package) driven by Playwright.

1. JupyterLab on a free loopback port with a token opens chapter 01 at 1366x900 (the set-up cell
   collapsed to its `# @title` line, section 1 on the first screen), runs all cells, types a new
   device into the chapter's `interact` text box and checks that the widget's output changes;
   the screenshot lands in build/browser/.
2. The course runner executes two chapters (QUICK) and builds the course site (coursetools/site.py),
   served from a local HTTP server on a free loopback port. Chromium opens the index (chapter
   titles in its table, the CJK and emoji fonts asked for), follows "next" through every chapter
   page to the verified page and "previous" back to the index (page title and heading are the
   chapter's; the page opens with the title, "After this chapter..." and one closed line of run
   facts (device, torch, QUICK sizes, the verified row), then the Kaggle badge and section 1; the
   parameters cells, papermill's and the chapter's own, and the set-up cell are not shown; every
   code cell has a copy button and no output has one, the page offers its notebook to download and
   on GitHub, the header links the repository and the footer names the licence and the source;
   chapter 10's widget shows its note; its citations of docs/sources.md lead to the site's page of
   sources, which follows the chapters; every plot can be opened at full size; the Colab badge). On
   every page, every link resolves (local pages and files
   answer 200 and their anchors exist; external links are only checked to be well-formed, nothing
   is fetched from the network) and nothing loads from elsewhere; every <img> loads
   (naturalWidth > 0) and has alt text that is not its file name; no page logs a console error,
   fails a script or misses a file. The landing page is for learners (who it is for, start here, how
   to run a chapter, each chapter with what it teaches). The search page finds chapter 05 by a word
   in it and its snippets quote the lesson, not the theme's buttons.
3. The same site at 1366x900 and 390x844: each chapter's section 1 starts on the desktop's first
   screen; no page is wider than the window (inline code and titles
   wrap); on the desktop ☰ folds and opens the sidebar of chapters; on the phone ☰ opens the
   chapters as a dialog and a tap follows one, and the contents icon opens the page's sections
   (pydata-sphinx-theme#2451 bound both buttons' handlers to hidden twins); one search control is
   shown per page; the verified page shows all its columns on the desktop; a tap on a plot opens it at
   its full size and a tap closes it. Screenshots of the
   landing page, a chapter and the phone menu land in build/browser/.

All skip, with the reason, only when /usr/bin/chromium or Playwright is missing
(`apt-get install -y chromium`, `pip install playwright`; never `playwright install`).
Everything a test starts is stopped in `finally` blocks, also when it fails.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from coursetools import verified

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
SHOTS = ROOT / "build" / "browser"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# Two chapters for the runner check; at least one of them draws plots.
RUNNER_CHAPTERS = ["05", "10"]

try:
    from playwright.sync_api import expect, sync_playwright
except ImportError:  # pragma: no cover - depends on the machine
    sync_playwright = None

pytestmark = [
    pytest.mark.skipif(not CHROMIUM.is_file(), reason=f"{CHROMIUM} is missing: apt-get install -y chromium"),
    pytest.mark.skipif(sync_playwright is None, reason="Playwright is missing: pip install playwright"),
    pytest.mark.xdist_group("browser"),  # one Chromium at a time on a 2-core machine
]


@pytest.fixture
def browser_page(tmp_path):
    """A page in a fresh headless Chromium profile; closed (and Chromium stopped) afterwards."""
    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(tmp_path / "chromium-profile"),
            executable_path=str(CHROMIUM),
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 900},
        )
        try:
            page = context.pages[0] if context.pages else context.new_page()
            page.set_default_timeout(30_000)
            yield page
        finally:
            context.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stop(process: subprocess.Popen) -> None:
    """Stop a process group we started: SIGTERM, then SIGKILL if it lingers."""
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=10)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait(timeout=10)


@pytest.fixture
def jupyter_lab(tmp_path):
    """JupyterLab over a copy of chapter 01 in a clone-like folder; yields (base URL, token)."""
    work = tmp_path / "course"
    (work / "notebooks").mkdir(parents=True)
    (work / "helpers").symlink_to(ROOT / "helpers", target_is_directory=True)
    shutil.copy2(ROOT / "notebooks" / "01_devices.ipynb", work / "notebooks" / "01_devices.ipynb")
    # Render every cell (JupyterLab 4 otherwise drops cells scrolled out of view from the page).
    tracker = tmp_path / "lab-settings" / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings"
    tracker.parent.mkdir(parents=True)
    tracker.write_text(json.dumps({"windowingMode": "none"}), encoding="utf-8")
    # No news feed or update check (no network, no pop-up over the screenshot).
    notification = tracker.parent.parent / "apputils-extension" / "notification.jupyterlab-settings"
    notification.parent.mkdir(parents=True)
    notification.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}), encoding="utf-8")
    port, token = _free_port(), secrets.token_hex(16)
    env = dict(
        os.environ,
        JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"),
        COURSE_QUICK="1",
        JUPYTERLAB_SETTINGS_DIR=str(tmp_path / "lab-settings"),
        JUPYTERLAB_WORKSPACES_DIR=str(tmp_path / "lab-workspaces"),
    )
    command = [
        str(Path(sys.executable).parent / "jupyter"),
        "lab",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={work}",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")
    log = open(tmp_path / "jupyter.log", "w")
    server = subprocess.Popen(command, cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                log.flush()
                pytest.fail("JupyterLab did not start:\n" + (tmp_path / "jupyter.log").read_text()[-3000:])
            time.sleep(0.3)
        yield url, token
    finally:
        _stop(server)
        log.close()


def test_jupyterlab_runs_chapter_01_and_its_widget_answers(jupyter_lab, browser_page) -> None:
    url, token = jupyter_lab
    page = browser_page
    page.set_viewport_size(DESKTOP)
    page.goto(f"{url}/lab/tree/notebooks/01_devices.ipynb?token={token}")
    expect(page.locator(".jp-Notebook")).to_be_visible(timeout=45_000)
    _wait_for_idle_kernel(url, token)
    # The lesson on the first screen: the set-up cell shows only its title line, and section 1 starts
    # high enough on a 1366x900 screen for its opening to show.
    expect(page.locator(".jp-Cell .jp-InputPlaceholder").first).to_contain_text("@title Set-up")
    first = page.locator(".jp-RenderedMarkdown h2").filter(has_text=re.compile(r"^\s*1\.")).first
    top = first.bounding_box()["y"]
    assert top + 120 <= DESKTOP["height"], f"section 1 starts {top:.0f} px down in JupyterLab, below the first screen"

    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
    # Run All is done when the last code cell has its execution count and none waits ([*]).
    last_prompt = page.locator(".jp-CodeCell").last.locator(".jp-InputArea-prompt")
    expect(last_prompt).to_have_text(re.compile(r"\[\d+\]"), timeout=90_000)
    expect(page.locator(".jp-InputArea-prompt").filter(has_text="[*]")).to_have_count(0)
    _wait_for_idle_kernel(url, token)

    interact = page.locator(".widget-interact")
    expect(interact).to_have_count(1)
    box = interact.get_by_role("textbox", name="spelling")
    output = interact.locator(".widget-output")
    expect(output).to_contain_text("index=1")
    before = output.inner_text()

    box.fill("cuda:3")
    box.press("Enter")
    expect(output).to_contain_text("index=3")
    after = output.inner_text()
    assert after != before and "index=1" not in after, (before, after)

    interact.evaluate("w => w.closest('.jp-Cell').scrollIntoView({block: 'center'})")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "01_devices_widget.png"))
    assert (SHOTS / "01_devices_widget.png").stat().st_size > 10_000


def _wait_for_idle_kernel(url: str, token: str, timeout: float = 60) -> None:
    """Wait until the notebook's kernel exists and is idle (JupyterLab's REST API says so)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with urllib.request.urlopen(f"{url}/api/sessions?token={token}", timeout=5) as r:
            sessions = json.load(r)
        if sessions and all(s["kernel"]["execution_state"] == "idle" for s in sessions):
            return
        time.sleep(0.3)
    pytest.fail(f"the kernel was not idle within {timeout} s")


@pytest.fixture(scope="module")
def course_site(tmp_path_factory):
    """The course runner executes RUNNER_CHAPTERS (QUICK) and builds its site; served on a free loopback port.

    Yields (base URL, the site's folder, the runner's summary rows). The only chapter executions of
    this module, as before the site existed; the site's tests share them.
    """
    from coursetools.runner import run_course

    build = tmp_path_factory.mktemp("course") / "build"
    code = run_course(quick=True, only=RUNNER_CHAPTERS, jobs=2, build_dir=build)
    assert code == 0, (build / "summary.md").read_text()
    summary = json.loads((build / "summary.json").read_text(encoding="utf-8"))
    site = build / "site"

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args) -> None:  # no request log in the test output
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", site, summary
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def _get(url: str) -> tuple[int, str]:
    """(HTTP status, body) of a URL on the local server."""
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, r.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        return exc.code, ""


def _check_links(page, base: str, checked: dict[str, str]) -> None:
    """Every link on the page resolves: local pages and files answer 200 and named anchors exist;
    external links are well-formed (not fetched: no network). Every resource the page loads is local."""
    here = page.url
    hrefs = page.locator("a[href]").evaluate_all("links => links.map(a => a.getAttribute('href'))")
    for href in hrefs:
        target = urllib.parse.urljoin(here, href)
        parts = urllib.parse.urlsplit(target)
        if parts.scheme in ("http", "https") and not target.startswith(base):
            assert parts.netloc and "." in parts.netloc and " " not in target, f"{here}: malformed link {href!r}"
            continue
        if parts.scheme == "mailto":
            continue
        assert target.startswith(base), f"{here}: link {href!r} leaves the site in an unexpected way"
        document = urllib.parse.urlunsplit(parts._replace(fragment=""))
        if document not in checked:
            code, checked[document] = _get(document)
            assert code == 200, f"{here}: link {href!r} -> HTTP {code}"
        if parts.fragment and document.endswith(".html"):
            anchor = urllib.parse.unquote(parts.fragment)
            assert f'id="{anchor}"' in checked[document], f"{here}: link {href!r} names a missing anchor"
    loads = page.locator("script[src], link[href], img[src], iframe[src]").evaluate_all(
        "els => els.map(e => e.getAttribute('src') || e.getAttribute('href'))"
    )
    for src in loads:
        url = urllib.parse.urljoin(here, src)
        assert url.startswith(base) or url.startswith("data:"), f"{here} loads {src!r} from elsewhere"


def _check_images(page) -> int:
    """Every <img> loads and has alt text of its own (not empty, not its file name); returns how many."""
    images = page.locator("img")
    for k in range(images.count()):
        image = images.nth(k)
        image.scroll_into_view_if_needed()
        width = image.evaluate(
            "img => img.complete ? img.naturalWidth : new Promise(done => {"
            " img.onload = () => done(img.naturalWidth); img.onerror = () => done(0); })"
        )
        src = image.get_attribute("src") or ""
        alt = (image.get_attribute("alt") or "").strip()
        where = f"{page.url}: image {k} ({src[:60]})"
        assert width > 0, f"{where} did not load"
        assert alt and alt != src and not alt.endswith((".png", ".svg", ".jpg")), f"{where} has no alt text: {alt!r}"
    return images.count()


def test_the_course_site_walks_end_to_end(course_site, browser_page) -> None:
    base, site, summary = course_site
    page = browser_page
    titles = {}
    for row in summary:
        executed = json.loads(Path(row["executed"]).read_text(encoding="utf-8"))
        titles[row["chapter"]] = next(
            line[2:].strip()
            for c in executed["cells"]
            if c["cell_type"] == "markdown"
            for line in "".join(c["source"]).splitlines()
            if line.startswith("# ")
        )
    chapters = [row["chapter"] for row in summary]
    assert all(Path(row["html"]) == site / f"{row['chapter']}.html" for row in summary)

    # No page logs an error, fails a script or misses a file (the favicon included).
    problems: list[str] = []
    page.on("console", lambda m: m.type == "error" and problems.append(f"{page.url}: console error {m.text}"))
    page.on("pageerror", lambda e: problems.append(f"{page.url}: script error {e}"))
    page.on("response", lambda r: r.status >= 400 and problems.append(f"{page.url}: HTTP {r.status} for {r.url}"))

    # The landing page, for a learner: who it is for, where to start, how to run a chapter, and every
    # chapter by its title with what it teaches; the build facts in one paragraph.
    page.goto(f"{base}/index.html")
    expect(page).to_have_title(re.compile("GPU programming with PyTorch"))
    for heading in ("Who it is for", "Start here", "Run a chapter yourself", "How these pages were made"):
        expect(page.locator("main h2", has_text=heading)).to_have_count(1)
    expect(page.locator("main p", has_text="Begin with").locator(f"a[href='{chapters[0]}.html']")).to_have_count(1)
    for chapter in chapters:
        item = page.locator("main li", has=page.locator(f"a[href='{chapter}.html']"))
        expect(item).to_contain_text(titles[chapter])
        expect(item).to_contain_text(" — ")  # what a learner can do after it
    expect(page.locator("main table")).to_have_count(0)
    family = page.evaluate("getComputedStyle(document.body).fontFamily")
    for font in ("Noto Sans CJK SC", "PingFang SC", "Microsoft YaHei", "Noto Color Emoji"):
        assert font in family, f"the page does not ask for {font}: {family}"

    # "next" from the index through every chapter (then the verified page), "previous" back.
    checked: dict[str, str] = {}
    visited = ["index.html"]
    for chapter in chapters:
        page.locator("a.right-next").click()
        page.wait_for_load_state("load")
        assert page.url == f"{base}/{chapter}.html", f"next led to {page.url}, expected {chapter}.html"
        visited.append(f"{chapter}.html")
        expect(page).to_have_title(re.compile("^" + re.escape(titles[chapter])))
        expect(page.locator("main h1").first).to_contain_text(titles[chapter])
        box = page.locator("details.course-run-info")
        expect(box).to_contain_text(next(r["device"] for r in summary if r["chapter"] == chapter))
        expect(box).to_contain_text("torch ")
        expect(box).to_contain_text("QUICK sizes")
        expect(page.locator("article a:has(img[alt='Open in Kaggle'])")).to_have_attribute(
            "href", re.compile("kaggle.com")
        )
        expect(page.locator("article a:has(img[alt='Open in Colab'])")).to_have_attribute(
            "href", re.compile(rf"^https://colab\.research\.google\.com/github/.+/notebooks/{chapter}\.ipynb$")
        )
        first_stack = next(iter(verified.COLUMNS.values()))[0]  # "CPU-only build, torch 2.13"
        expect(box).to_contain_text(first_stack)  # the verified-on row's header
        # The page opens with the lesson: title, "After this chapter...", the run facts folded into
        # one closed line, then section 1; the parameters cells and the set-up cell are hidden.
        expect(box).to_have_count(1)
        assert box.evaluate("d => d.tagName === 'DETAILS' && !d.open"), "the run facts are not one closed line"
        assert box.bounding_box()["height"] < 60, "the closed run facts take more than a line"
        intro = page.locator("article p", has_text="After this chapter").first
        lesson = page.locator("article section h2").first
        assert intro.bounding_box()["y"] < box.bounding_box()["y"] < lesson.bounding_box()["y"]
        for hidden in (r"^\s*QUICK = False\s*$", r"^\s*QUICK = True\s*$", r"Running on:", r"^import glob, os, sys$"):
            expect(page.locator("div.cell", has_text=re.compile(hidden, re.M))).to_have_count(0)
        # Reader tools: a copy button on every code cell (none on outputs), the notebook to
        # download, the notebook on GitHub, the repository in the header, licence and source below.
        cells = page.locator("article div.cell_input")
        expect(cells.first).to_be_visible()
        expect(page.locator("article div.cell_input button.copybtn")).to_have_count(cells.count())
        expect(page.locator("article div.cell_output button.copybtn")).to_have_count(0)
        download = page.locator("article a.download", has_text="Download the notebook")
        expect(download).to_have_attribute("href", re.compile(rf"/{chapter}\.ipynb$"))
        expect(page.locator("article a", has_text="The notebook on GitHub")).to_have_attribute(
            "href", re.compile(rf"^https://github\.com/.+/notebooks/{chapter}\.ipynb$")
        )
        expect(page.locator(".article-header-buttons a[href^='https://github.com/']")).to_have_count(1)
        expect(page.locator("footer .course-footer")).to_contain_text("Licence: Apache-2.0 · Source: github.com/")
        # Its citations of docs/sources.md lead to the site's page of sources (the anchors are checked below).
        expect(page.locator("article a[href^='sources.html#']").first).to_be_attached()
        expect(page.locator("article a[href*='docs/sources.md']")).to_have_count(0)
        # Every plot can be opened at its full size.
        plots = page.locator("div.cell_output img")
        expect(page.locator("div.cell_output img.course-zoomable")).to_have_count(plots.count())
        if chapter.startswith("10"):  # its roofline explorer is a widget
            expect(page.locator(".course-widget-note").first).to_be_visible()
            SHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SHOTS / f"{chapter}_site.png"))
    page.locator("a.right-next").click()  # the page of sources the chapters cite
    page.wait_for_load_state("load")
    assert page.url == f"{base}/sources.html"
    visited.append("sources.html")
    page.locator("a.right-next").click()
    page.wait_for_load_state("load")
    assert page.url == f"{base}/verified.html"
    visited.append("verified.html")
    page.locator("a.right-next").click()  # what the GPU runs kept in docs/gpu-runs/ measured
    page.wait_for_load_state("load")
    assert page.url == f"{base}/measured.html"
    expect(page.locator("article h1")).to_contain_text("What the course measured on GPUs")
    expect(page.locator("a.right-next")).to_have_count(0)
    for expected in reversed(visited):
        page.locator("a.left-prev").click()
        page.wait_for_load_state("load")
        assert page.url == f"{base}/{expected}", f"previous led to {page.url}, expected {expected}"
    expect(page.locator("a.left-prev")).to_have_count(0)

    # Every page: links resolve, nothing loads from elsewhere, every image loads and has alt text.
    images = 0
    for name in [*visited, "verified.html", "search.html", "genindex.html"]:
        page.goto(f"{base}/{name}")
        _check_links(page, base, checked)
        images += _check_images(page)
    assert images > len(chapters), "the chapters' plots (and Kaggle badges) were not found"

    # Search finds a chapter by a word in it, and its snippet quotes the lesson (not the theme's
    # buttons or the page's contents).
    for word in ("fragmentation", "memory"):
        page.goto(f"{base}/search.html?q={word}")
        results = page.locator("#search-results ul.search li")
        expect(results.first).to_be_visible(timeout=30_000)
        expect(results.first.locator("p.context")).to_be_visible()
        hrefs = results.locator("a").evaluate_all("links => links.map(a => a.getAttribute('href'))")
        assert any(h.split("#")[0].split("?")[0] == "05_gpu_memory.html" for h in hrefs), hrefs
        if word == "fragmentation":  # (Sphinx finds the stem, "memori", in no text: that snippet starts the page)
            snippet = results.filter(has=page.locator("a[href^='05_gpu_memory.html']")).locator("p.context")
            expect(snippet).to_contain_text(word)
        for snippet in results.locator("p.context").all_inner_texts():
            for chrome in ("System Settings", "Light Dark", "Copy to clipboard", "How this page was made"):
                assert chrome not in snippet, f"a search snippet quotes the page's chrome ({chrome}): {snippet!r}"
    assert not problems, "\n".join(problems)


# The widths a learner reads at: a laptop and a phone (an iPhone 12-15's CSS pixels).
DESKTOP, PHONE = {"width": 1366, "height": 900}, {"width": 390, "height": 844}


def _visible(page, selector: str):
    """The one element matching `selector` that the reader sees (the theme has hidden twins)."""
    found = page.locator(f"{selector}:visible")
    expect(found).to_have_count(1)
    return found


def test_the_course_site_works_at_desktop_and_phone_widths(course_site, browser_page) -> None:
    """Navigation at every width (the theme's toggles, pydata-sphinx-theme#2451) and no page wider
    than a phone; screenshots of the landing page and a chapter at both widths in build/browser/."""
    base, _, summary = course_site
    page = browser_page
    chapters = [row["chapter"] for row in summary]
    SHOTS.mkdir(parents=True, exist_ok=True)
    for viewport in (DESKTOP, PHONE):
        page.set_viewport_size(viewport)
        width = viewport["width"]
        for name in ["index", *chapters, "verified"]:
            page.goto(f"{base}/{name}.html")
            wide = page.evaluate("document.documentElement.scrollWidth")
            assert wide <= width, f"{name}.html is {wide} px wide in a {width} px window: the page scrolls sideways"
            # One way to search: the sidebar's box on a wide screen, the article's icon on a narrow one.
            searches = page.locator(".search-button-field:visible, .search-button:visible")
            expect(searches).to_have_count(1)
            if viewport is DESKTOP and name in chapters:  # the lesson starts on the first screen
                first = page.locator("article h2").filter(has_text=re.compile(r"^\s*1\.")).first
                top = first.bounding_box()["y"]
                assert top + 120 <= viewport["height"], f"{name}.html: section 1 starts {top:.0f} px down"
        if viewport is DESKTOP:  # the verified page shows all its columns, none cut off
            page.goto(f"{base}/verified.html")
            table = page.locator("article table").first
            cut = table.evaluate("t => t.parentElement.scrollWidth - t.parentElement.clientWidth")
            assert cut <= 1, f"the verified table is {cut} px wider than its place at {width} px: columns are cut off"
            last = table.locator("th").last.bounding_box()
            assert last["x"] + last["width"] <= width, "the verified table's last column is off the screen"
            if name in ("index", chapters[0]):
                page.screenshot(path=str(SHOTS / f"site_{name}_{width}.png"))

        # A tap on a plot opens it at its full size (wider than a phone), in a dialog a tap closes.
        page.goto(f"{base}/{chapters[0]}.html")
        plot = page.locator("div.cell_output img").first
        plot.scroll_into_view_if_needed()
        plot.click()
        viewer = page.locator("dialog.course-image-viewer")
        expect(viewer).to_be_visible()
        big = viewer.locator("img")
        expect(big).to_have_attribute("alt", plot.get_attribute("alt"))
        assert big.evaluate("i => i.complete && i.naturalWidth > 0 && i.clientWidth === i.naturalWidth")
        if viewport is PHONE:
            assert big.evaluate("i => i.naturalWidth") > width, "the plot is no wider than the phone: nothing to show"
        viewer.click()
        expect(viewer).to_be_hidden()

        sidebar = page.locator("#pst-primary-sidebar")
        if viewport is DESKTOP:  # the chapters are in the sidebar; ☰ folds it and opens it again
            expect(sidebar.locator(f"a[href='{chapters[-1]}.html']")).to_be_visible()
            _visible(page, ".primary-toggle").click()
            expect(sidebar).to_be_hidden()
            _visible(page, ".primary-toggle").click()
            expect(sidebar).to_be_visible()
            continue
        # On a phone the sidebars are hidden; ☰ opens the chapters as a dialog, and a tap follows one.
        page.goto(f"{base}/index.html")  # (on a chapter's page, its own entry links to "#")
        expect(sidebar).to_be_hidden()
        _visible(page, ".primary-toggle").click()
        menu = page.locator("#pst-primary-sidebar-modal")
        expect(menu).to_be_visible()
        for chapter in chapters:
            expect(menu.locator(f"a[href='{chapter}.html']")).to_be_visible()
        page.screenshot(path=str(SHOTS / f"site_menu_{width}.png"))
        menu.locator(f"a[href='{chapters[-1]}.html']").click()
        page.wait_for_load_state("load")
        assert page.url == f"{base}/{chapters[-1]}.html"
        # The page's contents icon opens its sections, and a tap goes to one.
        _visible(page, ".secondary-toggle").click()
        contents = page.locator("#pst-secondary-sidebar-modal")
        expect(contents).to_be_visible()
        section = contents.locator("a[href^='#']").first
        expect(section).to_be_visible()
        section.click()
        expect(contents).to_be_hidden()
