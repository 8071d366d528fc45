"""Run a snippet in a fresh Python process, to show settings that only count at start-up.

`CUDA_VISIBLE_DEVICES` is read once, when CUDA initialises; CPU affinity and `torch.cuda.set_device`
change a whole process. Showing them in the notebook's own kernel would either do nothing or
leave the kernel changed, so chapters run them in a child process and print what it reports.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path


def run_fresh_python(code: str, env: dict[str, str | None] | None = None, timeout: float = 120.0) -> str:
    """Run `code` with this kernel's Python in a new process and return what it printed.

    `env` entries are set in a copy of this process's environment (a value of None removes the
    variable). The child can `import helpers` wherever this process found it. Raises
    RuntimeError with the child's last error line when the child fails.
    """
    child_env = dict(os.environ)
    for name, value in (env or {}).items():
        if value is None:
            child_env.pop(name, None)
        else:
            child_env[name] = value
    package_parent = str(Path(__file__).resolve().parent.parent)
    child_env["PYTHONPATH"] = os.pathsep.join(p for p in (package_parent, child_env.get("PYTHONPATH", "")) if p)
    try:
        done = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code)],
            capture_output=True,
            text=True,
            env=child_env,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"the child Python did not finish within {timeout:g} s") from None
    if done.returncode != 0:
        last = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "(no error output)"
        raise RuntimeError(f"the child Python exited with code {done.returncode}: {last}")
    return done.stdout
