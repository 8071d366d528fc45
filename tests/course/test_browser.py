"""The course in a real browser: headless Chromium (Debian's package) driven by Playwright.

1. JupyterLab on a free loopback port with a token opens chapter 01, runs all cells, types a new
   device into the chapter's `interact` text box and checks that the widget's output changes;
   the screenshot lands in build/browser/.
2. The course runner executes two chapters (QUICK) and every page linked from its index.html
   loads in Chromium and shows its plots.

Both skip, with the reason, only when /usr/bin/chromium or Playwright is missing
(`apt-get install -y chromium`, `pip install playwright`; never `playwright install`).
Everything a test starts is stopped in `finally` blocks, also when it fails.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

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
    page.goto(f"{url}/lab/tree/notebooks/01_devices.ipynb?token={token}")
    expect(page.locator(".jp-Notebook")).to_be_visible(timeout=45_000)
    _wait_for_idle_kernel(url, token)

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


def _image_outputs(executed: Path) -> int:
    nb = json.loads(executed.read_text(encoding="utf-8"))
    return sum(
        1
        for c in nb["cells"]
        if c["cell_type"] == "code"
        for o in c.get("outputs", [])
        if "image/png" in o.get("data", {})
    )


def test_the_executed_course_index_and_pages_show_their_plots(tmp_path, browser_page) -> None:
    from coursetools.runner import run_course

    build = tmp_path / "build"
    code = run_course(quick=True, only=RUNNER_CHAPTERS, jobs=2, build_dir=build)
    assert code == 0, (build / "summary.md").read_text()
    summary = json.loads((build / "summary.json").read_text(encoding="utf-8"))
    page = browser_page
    page.goto((build / "index.html").as_uri())
    links = page.locator("table a")
    expect(links).to_have_count(len(summary))
    hrefs = [links.nth(i).get_attribute("href") for i in range(links.count())]
    assert hrefs == [Path(r["html"]).name for r in summary]
    images_seen = 0
    for i, result in enumerate(summary):
        page.goto((build / "index.html").as_uri())
        page.locator("table a").nth(i).click()
        page.wait_for_load_state("load")
        assert page.url.endswith(hrefs[i])
        expect(page.locator(".jp-Notebook")).to_be_visible()
        plots = _image_outputs(Path(result["executed"]))
        images = page.locator(".jp-OutputArea-output img")
        expect(images).to_have_count(plots)
        for k in range(plots):
            images.nth(k).scroll_into_view_if_needed()
            width = images.nth(k).evaluate("img => img.complete ? img.naturalWidth : 0")
            assert width > 100, f"{hrefs[i]}: plot {k} did not render"
        images_seen += plots
        if plots:
            SHOTS.mkdir(parents=True, exist_ok=True)
            images.nth(0).screenshot(path=str(SHOTS / f"{result['chapter']}_first_plot.png"))
    assert images_seen > 0, f"none of {RUNNER_CHAPTERS} drew a plot: pick chapters that do"
