"""pytest plugin: a chapter that leaves files in the temp dir fails (issue 18).

Each notebook nbval executes gets a kernel whose temp dir (TMPDIR) is a new empty folder. When
nbval has stopped that kernel, which it does as the notebook's last cell is torn down, whatever
is left in the folder fails that teardown, named: a chapter removes what it writes
(`helpers.scratch_folder()` does it for files a chapter needs). The caches that may stay are
`coursetools.execute.TEMP_DIR_CACHES`, each with its reason; torch.compile's cache there is a link
to the usual one (`coursetools.execute.temp_dir_env`), so compiling costs what it always does. This
only watches the one execution of each chapter, it adds none. The root conftest.py loads it;
tests/course/test_temp_litter.py shows that it catches a notebook that leaves a file.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

# Each notebook's temp dir and the variables its kernel starts with, by notebook path (this process's items).
_TEMP_DIRS: dict[Path, tuple[Path, dict[str, str]]] = {}


def _is_notebook(item: pytest.Item) -> bool:
    return item.path.suffix == ".ipynb"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item):
    """Give the notebook's kernel, which nbval starts while its first cell is set up, its own TMPDIR."""
    if not _is_notebook(item):
        return (yield)
    from coursetools.execute import environment, kernel_temp_dir, temp_dir_env

    if item.path not in _TEMP_DIRS:
        folder = kernel_temp_dir(item.path.stem)
        if folder is None:  # the temp dir's path is too long for a folder in it (macOS): no check there
            return (yield)
        _TEMP_DIRS[item.path] = folder, temp_dir_env(folder)
    with environment(_TEMP_DIRS[item.path][1]):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None):
    """After the notebook's last cell (its kernel now stopped), fail on anything left in its TMPDIR."""
    result = yield
    if not _is_notebook(item) or (nextitem is not None and nextitem.path == item.path):
        return result
    if item.path not in _TEMP_DIRS:
        return result
    folder, _ = _TEMP_DIRS.pop(item.path)
    from coursetools.execute import temp_dir_litter

    try:
        left = temp_dir_litter(folder)
        if left:  # a process of the chapter may still be ending, and removing its files: look once more
            time.sleep(2)
            left = temp_dir_litter(folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if left:
        shown = ", ".join(left[:10]) + (f" and {len(left) - 10} more" if len(left) > 10 else "")
        pytest.fail(
            f"{item.path.name} left {len(left)} file(s) or folder(s) in its temp dir: {shown}. A chapter removes "
            "what it writes (use helpers.scratch_folder() or a `with tempfile.TemporaryDirectory()` block).",
            pytrace=False,
        )
    return result


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Remove the temp dirs of notebooks whose last cell never ran (an interrupted or failed-to-collect run)."""
    while _TEMP_DIRS:
        folder, _ = _TEMP_DIRS.popitem()[1]
        shutil.rmtree(folder, ignore_errors=True)
