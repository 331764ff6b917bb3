"""The engine's tests: pure functions over data, so no database, no cache and no Django settings.

tests/conftest.py gives every test a fresh cache and a generous CPU share; these two fixtures of the
same names stand in for them here, so an engine test touches neither (docs/architecture.md#tests-and-benchmarks).
"""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _generous_cpu_share() -> None:
    """The engine meters no CPU share."""


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    """The engine keeps no cache between calls."""
