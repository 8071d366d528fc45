"""Tests are arranged by what they guard: `unit/` the helpers package, `gpu/` the chapters' GPU claims
(shipped to Kaggle for the self-test), `course/` the notebooks, the tooling and the project files."""

import signal

import pytest


@pytest.fixture
def sigint_raises_keyboardinterrupt():
    """Make Ctrl-C (SIGINT) raise KeyboardInterrupt in this test, as it does in a notebook's kernel.

    A process started in the background by a shell without job control (a CI step run with `&`)
    inherits SIGINT as ignored, and Python then keeps ignoring it: a test that simulates the
    notebook's stop button would see nothing happen.
    """
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
