"""Test layout: tests under `tests/tf/` import TensorFlow and are marked
`tensorflow`; `make test` runs them in one process so TensorFlow is imported
once, and runs the rest (fast, no TensorFlow) in parallel."""

from __future__ import annotations

from pathlib import Path

import pytest

TF_DIR = Path(__file__).parent / "tf"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if TF_DIR in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.tensorflow)
