"""Torch's errors as the GPU tests recognise them (shipped with the tests in the Kaggle dataset)."""

from __future__ import annotations

import re

_DEVICE_MISMATCH = re.compile(r"same device|expected device|different from other tensors", re.IGNORECASE)


def is_device_mismatch_error(exc: BaseException) -> bool:
    """True when `exc` is torch's RuntimeError for tensors on different devices (worded by device and release).

    Tests only: the chapters decide by what is usable, never by an error's words.
    """
    return isinstance(exc, RuntimeError) and bool(_DEVICE_MISMATCH.search(str(exc)))
