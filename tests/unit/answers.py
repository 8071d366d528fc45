"""Answering a question as a learner does: code run in a notebook cell, or a file written with %%writefile."""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import torch

from helpers.checking import Outcome, Question


def run_in_notebook(question: Question, code: str) -> dict[str, Any]:
    """The namespace a notebook cell leaves after running `code`, with the names the chapter provides."""
    namespace = {"torch": torch, "nn": torch.nn, **question.context()}
    exec(compile(code, f"<{question.variable}>", "exec"), namespace)
    return namespace


def evaluate(question: Question, code: str, **kwargs: Any) -> Outcome:
    """The verdict on `code` as the learner's answer to `question`.

    A question with a `file` reads the code from that file in a fresh folder first on `sys.path`
    (as the chapter's WORK folder is), which the child processes of a check import too; any other
    question runs the code in a fresh namespace with the names the chapter provides.
    """
    if not question.file:
        return question.evaluate(run_in_notebook(question, code), **kwargs)
    folder = Path(tempfile.mkdtemp(prefix="answer-"))
    (folder / question.file).write_text(code)
    sys.path.insert(0, str(folder))
    try:
        return question.evaluate({}, **kwargs)
    finally:
        sys.path.remove(str(folder))
        sys.modules.pop(question.file.removesuffix(".py"), None)
        shutil.rmtree(folder, ignore_errors=True)
