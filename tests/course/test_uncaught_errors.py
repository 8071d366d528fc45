"""Chapter 05, section 7, in a real IPython kernel: what keeps an uncaught error's tensors, and `forget_last_error`.

IPython keeps the last uncaught error in `sys.last_*` (`InteractiveShell._get_exc_info`), in its traceback printer
(`AutoFormattedTB.structured_traceback` sets `self.tb`, IPython/core/ultratb.py) and, while the next cell runs, in
the failed cell's `ExecutionResult.error_in_exec` (`shell.last_execution_result`). The chapter's cell can only keep
a caught error; here the error is uncaught, as a learner's would be.
"""

from __future__ import annotations

import ast

from coursetools import learner
from tests.course.notebook_code import CHAPTERS, load, source

_STEP = """
import gc, sys, weakref, torch
probes = []

def failing_step():
    activations = torch.empty(1000)
    probes.append(weakref.ref(activations))
    raise RuntimeError("the step failed")
"""


def _forget_last_error() -> str:
    """The chapter's `forget_last_error`, as its cell defines it."""
    (notebook,) = [nb for nb in CHAPTERS if nb.name.startswith("05_")]
    (cell,) = [source(c) for c in load(notebook)["cells"] if "def forget_last_error" in source(c)]
    (function,) = [n for n in ast.parse(cell).body if getattr(n, "name", "") == "forget_last_error"]
    return ast.get_source_segment(cell, function)


def test_an_uncaught_errors_tensor_outlives_sys_last_and_forget_last_error_frees_it() -> None:
    from jupyter_client.manager import start_new_kernel

    manager, client = start_new_kernel(kernel_name="python3")
    try:
        ran, said = learner.run_cell(client, _STEP + "\n" + _forget_last_error(), timeout=120)
        assert ran, said
        assert not learner.run_cell(client, "failing_step()", timeout=60)[0], "the error is uncaught"
        only_sys_last = (
            "sys.last_type = sys.last_value = sys.last_traceback = None\n"
            "if hasattr(sys, 'last_exc'):\n    sys.last_exc = None\n"
            "gc.collect()\nprint('alive' if probes[0]() is not None else 'freed')"
        )
        assert learner.run_cell(client, only_sys_last, timeout=60) == (True, "alive\n"), "IPython keeps it too"
        later = "gc.collect()\nprint('alive' if probes[0]() is not None else 'freed')"
        assert learner.run_cell(client, later, timeout=60) == (True, "alive\n"), "its traceback printer, for one"
        assert not learner.run_cell(client, "failing_step()", timeout=60)[0]
        forget = "forget_last_error()\nprint('alive' if probes[1]() is not None else 'freed')"
        assert learner.run_cell(client, forget, timeout=60) == (True, "freed\n"), "freed in the cell that calls it"
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
