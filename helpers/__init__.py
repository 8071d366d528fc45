"""The small library behind the course "GPU programming with PyTorch, as runnable notebooks".

Modules by concern (heavy libraries such as matplotlib, papermill and ipywidgets are imported
only inside the functions that need them, so `import helpers` stays cheap):

* `helpers.devices`     choosing devices: `try_gpu`, `try_all_gpus`, `have_gpus`, `synchronize`
* `helpers.environment` describing the machine, diagnosing what blocks the GPU, stamping figures
* `helpers.checking`    exercises with `check()`, `hint()`, `solution()`
* `helpers.exercises`   each chapter's questions (`chNN.py`)
* `helpers.show`        printing the source of a helper a chapter teaches
* `helpers.runner`      the headless course runner (`python -m helpers run`)
"""

from .checking import load_exercises
from .devices import have_gpus, synchronize, try_all_gpus, try_gpu

__version__ = "0.1.0"
__all__ = ["have_gpus", "load_exercises", "setup_chapter", "synchronize", "try_all_gpus", "try_gpu"]


def setup_chapter() -> None:
    """Print the one-line environment summary each chapter starts with (the runner reads it)."""
    from .environment import describe_machine, one_line

    print(one_line(describe_machine()))
