"""Every chapter is executed once per test run, by nbval (see the root conftest.py); these check the set-up."""

from __future__ import annotations

import tomllib

import conftest as root_conftest
from coursetools import ROOT
from coursetools.execute import discover_chapters
from helpers.devices import NO_GPU_MARKER


def test_there_are_chapters() -> None:
    assert len(discover_chapters()) >= 2, "notebooks/ should hold the course's chapters"


def test_nbval_executes_every_chapter_once_with_quick_sizes() -> None:
    options = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"]["ini_options"]
    assert "notebooks" in options["testpaths"] and "--nbval-lax" in options["addopts"]
    assert root_conftest.NO_GPU_MARKER == NO_GPU_MARKER, "the summary counts the marker the chapters print"
    assert root_conftest.os.environ["COURSE_QUICK"] == "1"
