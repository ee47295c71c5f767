"""The parity tier fails at once, before any control plane starts, without upstream's data."""

from __future__ import annotations

from pathlib import Path

import pytest
from parity_support import require_reference


@pytest.fixture(scope="session", autouse=True)
def reference_data() -> Path:
    return require_reference()
