"""How a GPU test says it cannot run here: `missing(capability, why)`, never a bare `pytest.skip`.

On a machine whose GPU torch can use, the self-test (`python -m coursetools selftest`) lets a GPU
test be skipped only for a stated missing capability (a second GPU, bfloat16, a datasheet entry
for this GPU, ...): the capability travels with the test's report as the user property
`missing_capability` (set by this folder's conftest), and a skip without one fails the self-test.
"""

from __future__ import annotations

from typing import NoReturn

import pytest

#: The name of the test report's user property that carries the missing capability.
PROPERTY = "missing_capability"


class MissingCapability(pytest.skip.Exception):
    """A skip that names what this machine lacks; the conftest records `capability` on the report."""

    def __init__(self, capability: str, why: str = "") -> None:
        super().__init__(f"needs {capability}" + (f": {why}" if why else ""))
        self.capability = capability


def missing(capability: str, why: str = "") -> NoReturn:
    """Skip the running test because this machine lacks `capability` (a short noun phrase), saying why."""
    raise MissingCapability(capability, why)
