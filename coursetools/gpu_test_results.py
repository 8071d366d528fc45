"""A pytest plugin the self-test loads into its child run: one JSON line per GPU test, as data.

`python -m pytest -p coursetools.gpu_test_results ...` with `COURSE_TEST_RESULTS=PATH` in the
environment appends to PATH first `{"collected": N}`, then for every test, once it has finished,
`{"test", "outcome", "seconds", "message", "missing_capability"}`. The self-test reads the file
while pytest runs (its progress bar) and after (its table), so an outcome is pytest's own report,
never a word read back from its console. `missing_capability` is the user property the GPU tests'
conftest sets on a skip that names what the machine lacks (`tests/gpu/missing.py`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the self-test imports this module's names where pytest may not be installed yet
    import pytest

#: The environment variable naming the results file.
RESULTS_FILE = "COURSE_TEST_RESULTS"
#: The report's user property that names a capability the machine lacks.
MISSING_CAPABILITY = "missing_capability"


def short_name(nodeid: str) -> str:
    """`tests/gpu/test_gpu_ch07.py::test_x[a/b]` → `test_gpu_ch07.py::test_x[a/b]`."""
    path, sep, rest = nodeid.partition("::")
    return Path(path).name + sep + rest


def first_line(report: pytest.TestReport | pytest.CollectReport) -> str:
    """What went wrong (or why it was skipped), in one line."""
    longrepr = report.longrepr
    if isinstance(longrepr, tuple):  # a skip: (path, line, "Skipped: reason")
        text = str(longrepr[2]).removeprefix("Skipped: ")
    else:
        crash = getattr(longrepr, "reprcrash", None)
        text = crash.message if crash is not None else str(longrepr or "")
    lines = text.strip().splitlines()
    return lines[0] if lines else ""


class Recorder:
    """Collects each test's setup, call and teardown reports into one record, written when it ends."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.open: dict[str, dict[str, Any]] = {}

    def write(self, record: dict[str, Any]) -> None:
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.write({"collected": len(session.items)})

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:  # a test file that cannot be imported
            self.write(
                {"test": short_name(report.nodeid), "outcome": "error", "seconds": 0.0, "message": first_line(report)}
            )

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        record = self.open.setdefault(
            report.nodeid,
            {"test": short_name(report.nodeid), "outcome": "passed", "seconds": 0.0, "message": ""},
        )
        record["seconds"] += report.duration
        for name, value in report.user_properties:
            if name == MISSING_CAPABILITY:
                record[MISSING_CAPABILITY] = str(value)
        if report.skipped and record["outcome"] == "passed":
            record["outcome"], record["message"] = "skipped", first_line(report)
        elif report.failed and record["outcome"] in ("passed", "skipped"):
            record["outcome"] = "failed" if report.when == "call" else "error"
            where = "" if report.when == "call" else f"in {report.when}: "
            record["message"] = where + first_line(report)
        if report.when == "teardown":
            record["seconds"] = round(record["seconds"], 3)
            self.write(self.open.pop(report.nodeid))


def pytest_configure(config: pytest.Config) -> None:
    path = os.environ.get(RESULTS_FILE)
    if path:
        config.pluginmanager.register(Recorder(Path(path)), "course-gpu-test-results")
