"""`tfrewrite verify --ray` runs Keras 2 code on Keras 2 (`tf_keras`) and
Keras 3 code on Keras 3 as the local pool does: with one actor, the actor
of one Keras is replaced by one of the other when the next module needs it."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from tfrewrite.verify.command import register

from .test_verify_keras_two import KERAS_THREE, KERAS_TWO

pytest.importorskip("ray")
pytestmark = [
    pytest.mark.ray,
    pytest.mark.skipif(
        importlib.util.find_spec("tf_keras") is None,
        reason="needs tf_keras (make test installs it)",
    ),
]


def test_ray_actors_run_each_module_on_its_keras(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "k2_losses.py").write_text(KERAS_TWO)
    (tmp_path / "k3_losses.py").write_text(KERAS_THREE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TF_USE_LEGACY_KERAS", raising=False)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    app = typer.Typer()
    register(app)

    @app.callback()
    def _main() -> None:
        """tfrewrite"""

    result = CliRunner().invoke(
        app,
        [
            "verify",
            "--ray",
            "--jobs",
            "1",
            "--no-cache",
            "--no-xla",
            "--output-format",
            "json",
            ".",
        ],
    )
    data = json.loads(result.stdout)
    results = {r["function"]: r for r in data["results"]}
    assert {name: r["verdict"] for name, r in results.items()} == {
        "clipped_loss": "equivalent",
        "gap_loss": "equivalent",
    }, json.dumps(data["results"], indent=1)[-3000:]
    assert results["clipped_loss"]["keras"]["why"].startswith("ran on Keras 2 (tf_keras)")
    assert "keras" not in results["gap_loss"]
