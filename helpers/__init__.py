"""The small library behind the course "GPU programming with PyTorch, as runnable notebooks".

Infrastructure only: the PyTorch a chapter teaches is in its own cells. Modules by concern (matplotlib and
ipywidgets are imported inside the functions that need them, so `import helpers` stays cheap): choosing devices
and describing the machine (`devices`, `environment`); harnesses several chapters share (`timing`, `copies`,
`timelines`, `compiling`) and harnesses for one chapter (`memory`, `roofline`, `sharding`, `kernels`, `training`,
`profiling`); plots, stamps and alt text (`plots`); stand-ins for hardware the machine lacks (`standins`); the
processes a notebook starts (`processes`); datasheet figures (`gpu_specs`); the figures a run records
(`figures`); the exercises and their checker (`exercises`, `checking`, `answers`, `learner_code`).

The course tooling is `coursetools/` in the repository; it imports `helpers`, never the reverse."""

from .answers import as_number
from .checking import load_exercises
from .devices import have_gpus, synchronize, try_all_gpus, try_gpu
from .processes import scratch_folder

#: The course's version. Chapters say which version they were written for (`start`); the Kaggle
#: helpers dataset carries the package, so a stale dataset is caught by the chapter that needs more.
__version__ = "2.2.0"

HELPERS_DATASET = "pytorch-gpu-course-helpers"

__all__ = [
    "as_number",
    "have_gpus",
    "load_exercises",
    "scratch_folder",
    "start",
    "synchronize",
    "try_all_gpus",
    "try_gpu",
]


def version_notice(written_for: str, found: str = __version__, where: str = "") -> str:
    """What to tell a learner whose helpers are not the chapter's version ("" when the first two numbers match)."""
    wanted, have = str(written_for).split(".")[:2], str(found).split(".")[:2]
    if wanted == have:
        return ""
    older = [int(x) for x in have if x.isdigit()] < [int(x) for x in wanted if x.isdigit()]
    place = f" (found in {where})" if where else ""
    return (
        f"Note: this chapter was written for the course's helpers {'.'.join(wanted)}, but the helpers here are "
        f"{found}{place}, {'older' if older else 'newer'} than it expects, so some cells may fail.\n"
        f"  On Kaggle: in the right-hand panel under Input, update the dataset '{HELPERS_DATASET}' to its latest "
        "version (or remove it and add it again), then Run All.\n"
        + (
            "  In a clone of the repository: `git pull`, then restart the kernel."
            if older
            else "  Then open the newest version of this chapter from the course's README."
        )
    )


def start(written_for: str, quick: bool = False) -> bool:
    """Begin a chapter written for version `written_for` ("2.2"): print the machine and any version mismatch.

    Returns QUICK: on when the chapter's parameter says so or COURSE_QUICK=1 is set (the tests set it)."""
    import os

    from .environment import describe_machine, one_line

    print(one_line(describe_machine()))
    notice = version_notice(written_for, __version__, os.path.dirname(os.path.dirname(__file__)))
    if notice:
        print(notice)
    return bool(quick) or os.environ.get("COURSE_QUICK") == "1"
