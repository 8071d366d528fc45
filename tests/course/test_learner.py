"""The learner driver the checkers' attacks use: a kernel on a chapter up to its exercises, attempts sent to it."""

from __future__ import annotations

from pathlib import Path

from coursetools import learner


def test_an_attempt_runs_in_the_chapters_kernel_and_a_failing_cell_stops_it(tmp_path: Path, capsys: object) -> None:
    connection = learner.start("10", tmp_path)
    try:
        attempt = tmp_path / "attempt.py"
        attempt.write_text("axpy_intensity = 2 / 12\n# %%\nex.q1.check()\n")
        assert learner.send(connection, attempt)
        assert "Correct! Question 1 is done." in capsys.readouterr().out
        attempt.write_text("raise ValueError('mine')\n# %%\nprint('never')\n")
        assert not learner.send(connection, attempt)
        shown = capsys.readouterr().out
        assert "ValueError: mine" in shown and "never" not in shown
    finally:
        learner.stop(connection)
