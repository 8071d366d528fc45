"""The runner's progress bar names the chapter that is running and how long it has run."""

from __future__ import annotations

import io
import time

from coursetools.progress import ChapterProgress, format_elapsed


def test_elapsed_reads_as_minutes_and_seconds():
    assert format_elapsed(7.9) == "7 s"
    assert format_elapsed(132.7) == "2 min 12 s"
    assert format_elapsed(-1) == "0 s"


def test_bar_names_the_running_chapter_while_it_runs_and_redraws_its_time():
    out = io.StringIO()
    with ChapterProgress(2, interval=0.1, file=out) as progress:
        progress.finished("04_models_on_the_gpu", "ok")
        progress.started("05_gpu_memory")
        time.sleep(1.3)
        while_running = out.getvalue()
        progress.finished("05_gpu_memory", "failed")
    # The redraws during the long chapter name it (not the chapter that ended before it) with its time.
    assert "running 05_gpu_memory (1 s)" in while_running
    last_frame = while_running.rsplit("\r", 1)[-1]
    assert "05_gpu_memory" in last_frame and "04_models_on_the_gpu" not in last_frame
    assert "last: 05_gpu_memory failed in 1 s" in out.getvalue()
