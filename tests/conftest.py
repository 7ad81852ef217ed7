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


@pytest.fixture(autouse=True)
def _verify_results_outside_the_tree(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`verify` streams its results into the project's cache folder by
    default; tests that verify files of this repository (`examples/`,
    `tests/data/`) write them to a temporary folder instead."""
    from tfrewrite.verify import results_file

    folder = tmp_path_factory.mktemp("verify-results")
    monkeypatch.setattr(
        results_file, "default_path", lambda cache_dir: folder / results_file.FILE_NAME
    )
