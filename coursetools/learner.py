"""Answer a chapter's questions as a learner does, from the command line: the attacks on the checkers use it.

`python -m coursetools learner start NN` starts a kernel in `notebooks/`, runs chapter NN with QUICK = True up
to its `load_exercises` cell and prints the kernel's connection file; `learner send CONN FILE` runs an
attempt file there (cells split at lines that are exactly `# %%`, so a `%%writefile` answer gets its own
cell) and prints what the cells printed; `learner stop CONN` ends the kernel. Each attempt then calls a
question's `check()` itself, as the learner would.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from . import NOTEBOOKS
from .execute import discover_chapters

#: Marks the line between two cells of an attempt file.
CELL_MARK = "# %%"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _client(connection: Path) -> Any:
    from jupyter_client import BlockingKernelClient

    client = BlockingKernelClient()
    client.load_connection_file(str(connection))
    client.start_channels()
    client.wait_for_ready(timeout=120)
    return client


def run_cell(client: Any, code: str, timeout: float) -> tuple[bool, str]:
    """Run `code` in the kernel; (whether it ran without an error, everything it printed or displayed)."""
    shown: list[str] = []

    def keep(message: dict[str, Any]) -> None:
        kind, content = message["msg_type"], message["content"]
        if kind == "stream":
            shown.append(content["text"])
        elif kind in ("display_data", "execute_result"):
            shown.append(content["data"].get("text/plain", "") + "\n")
        elif kind == "error":
            shown.append(_ANSI.sub("", "\n".join(content["traceback"])) + "\n")

    reply = client.execute_interactive(code, timeout=timeout, output_hook=keep)
    return reply["content"]["status"] == "ok", "".join(shown)


def start(chapter: str, folder: Path | None = None) -> Path:
    """Start a kernel on chapter `chapter` ("08") and run it, QUICK, up to its exercises; its connection file."""
    from jupyter_client.connect import write_connection_file

    (notebook,) = [nb for nb in discover_chapters() if nb.name.startswith(f"{chapter}_")] or [None]
    if notebook is None:
        raise SystemExit(f"no chapter {chapter!r} in {NOTEBOOKS}")
    folder = Path(folder or tempfile.mkdtemp(prefix=f"learner-{chapter}-"))
    connection = folder / "kernel.json"
    write_connection_file(str(connection), ip="127.0.0.1")
    env = {k: v for k, v in os.environ.items() if k != "JPY_PARENT_PID"} | {"MPLBACKEND": "Agg"}
    with open(folder / "kernel.log", "w") as log:
        kernel = subprocess.Popen(
            [sys.executable, "-m", "ipykernel_launcher", "-f", str(connection), "--HistoryManager.hist_file=:memory:"],
            cwd=NOTEBOOKS,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    (folder / "kernel.pid").write_text(str(kernel.pid))
    try:
        client = _client(connection)
        for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] != "code":
                continue
            code = "".join(cell["source"])
            if "parameters" in cell.get("metadata", {}).get("tags", []):
                code = "QUICK = True"
            ok, shown = run_cell(client, code, timeout=600)
            if not ok:
                raise SystemExit(f"chapter {chapter} failed before its exercises:\n{shown}")
            if "load_exercises(" in code:
                return connection
        raise SystemExit(f"chapter {chapter} has no load_exercises cell")
    except BaseException:
        stop(connection)  # no kernel is left running behind a start that did not finish
        raise


def send(connection: Path, attempt: Path, timeout: float = 300) -> bool:
    """Run the cells of the attempt file in the kernel, printing what they show; False once one raises."""
    cells = [c.strip("\n") for c in re.split(rf"(?m)^{re.escape(CELL_MARK)}\s*$", Path(attempt).read_text())]
    client = _client(connection)
    started = time.monotonic()
    for code in filter(str.strip, cells):
        try:
            ok, shown = run_cell(client, code, timeout=max(1.0, timeout - (time.monotonic() - started)))
        except TimeoutError:
            os.kill(int(Path(connection).with_name("kernel.pid").read_text()), signal.SIGINT)
            print(f"the attempt ran past {timeout:g} s: the kernel was interrupted")
            return False
        print(shown, end="")
        if not ok:
            return False
    return True


def stop(connection: Path) -> None:
    """End the kernel that `start` left running."""
    pid_file = Path(connection).with_name("kernel.pid")
    try:
        os.killpg(int(pid_file.read_text()), signal.SIGKILL)
    except (OSError, ValueError):
        pass
