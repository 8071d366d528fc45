"""Running a learner's distributed function on two gloo ranks, for the checkers of chapters 08 and 12.

A function written in a notebook cell cannot be imported by a new process, so it is shipped to
the ranks with `helpers.portable` and rebuilt there by the chapter's own rank function. Every
way the run can go wrong becomes a `Wrong` verdict in the learner's terms, never a traceback.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..checking import Wrong
from ..portable import NotPortable, portable

#: Seconds the two-rank launch may take (the first launch of a session also starts the process server).
LAUNCH_TIMEOUT = 60.0


def ship(fn: Any) -> Any:
    """What to send the ranks so that they can call `fn`; a function that cannot travel is a verdict."""
    try:
        return portable(fn)
    except NotPortable as exc:
        raise Wrong(str(exc)) from None


def run_on_two_ranks(rank_main: Callable[..., Any], shipped: Any) -> list[Any]:
    """Call `rank_main(rank, world_size, shipped)` on two gloo ranks; return what each rank returned."""
    from ..distributed import LaunchTimeout, WorkerFailed, launch

    try:
        out = launch(rank_main, 2, (shipped,), backend="gloo", timeout=LAUNCH_TIMEOUT, threads_per_rank=1)
    except WorkerFailed as error:
        last = error.details.strip().splitlines()[-1] if error.details.strip() else "it died"
        raise Wrong(f"on two ranks, rank {error.rank} failed: {last}") from None
    except LaunchTimeout as error:
        raise Wrong(
            f"on two ranks, ranks {error.unfinished} did not finish within {LAUNCH_TIMEOUT:g} s: does one rank "
            "wait in a collective (all_reduce, barrier) that the other never reaches?"
        ) from None
    return out.results
