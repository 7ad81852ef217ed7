"""`tfrewrite verify --ray-address` on a local Ray cluster (two CPUs, one for
the module): the project shipped to it, the same verdicts as the local pool,
a worker killed mid-run retried on another, and `--resume` after an
interrupted run verifying only what was left."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from tfrewrite.verify.command import register

pytest.importorskip("ray")
pytestmark = pytest.mark.ray

# Holds a Ray cluster for the module: other drivers (the command line, run in
# this process) connect to it by its address; closing stdin ends it.
HOLDER = textwrap.dedent(
    """
    import sys
    import ray
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    print(ray.get_runtime_context().gcs_address, flush=True)
    sys.stdin.read()
    ray.shutdown()
    """
)

LOSSES = """
import os

import tensorflow as tf


@tf.function
def clipped_loss(y_true, y_pred):
    error = tf.reduce_mean(tf.abs(y_true - y_pred))
    if error > 0.3:
        loss = error * 0.5
    else:
        loss = tf.square(error)
    return loss


@tf.function
def logged_loss(y_true, y_pred):
    loss = tf.reduce_mean(tf.square(y_true - y_pred))
    print(loss)
    return loss


@tf.function
def crashing_loss(y_true, y_pred):
    # Kills its worker the first time it runs (as a segfault would).
    if not os.path.exists(MARKER):
        open(MARKER, "w").close()
        os._exit(3)
    error = tf.reduce_mean(y_true - y_pred)
    if error > 0.0:
        return error
    return -error
"""

DEADLY = """
import os

import tensorflow as tf


@tf.function
def deadly_loss(y_true, y_pred):
    os._exit(4)  # every time: no worker survives it
    error = tf.reduce_mean(y_true - y_pred)
    if error > 0.0:
        return error
    return -error
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("ray-holder")
    # A cluster of this test alone, on this machine: without Ray's token
    # authentication, which a driver would have to be configured for.
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=folder,
        env={**os.environ, "RAY_AUTH_MODE": "disabled"},
    )
    assert holder.stdout is not None and holder.stdin is not None
    address = holder.stdout.readline().strip()
    try:
        assert address, "the Ray cluster did not start"
        yield address
    finally:
        holder.stdin.close()
        try:
            holder.wait(timeout=60)
        except subprocess.TimeoutExpired:
            holder.kill()
            holder.wait()


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ray-project")
    folder = root / "project"
    folder.mkdir()
    marker = root / "crashed-once"
    (folder / "losses.py").write_text(LOSSES.replace("MARKER", repr(str(marker))))
    (folder / "deadly.py").write_text(DEADLY)
    return folder


def _verify(*args: str) -> tuple[int, dict[str, Any], str]:
    app = typer.Typer()
    register(app)

    @app.callback()
    def _main() -> None:
        """tfrewrite"""

    result = CliRunner().invoke(app, ["verify", "--no-xla", "--output-format", "json", *args])
    try:
        data = json.loads(result.stdout)
    except ValueError:
        pytest.fail(f"not JSON on stdout:\n{result.stdout}\n{result.stderr}")
    return result.exit_code, data, result.stderr


def _verdicts(data: dict[str, Any]) -> dict[str, str]:
    return {r["function"]: r["verdict"] for r in data["results"]}


@pytest.fixture(scope="module")
def local_run(project: Path) -> tuple[int, dict[str, Any]]:
    marker = project.parent / "crashed-once"
    marker.unlink(missing_ok=True)
    results = project.parent / "local.jsonl"
    code, data, _ = _verify("--jobs", "2", "--results", str(results), str(project))
    assert marker.exists()  # crashing_loss killed a local worker
    marker.unlink()
    return code, data


@pytest.fixture(scope="module")
def ray_run(
    cluster: str, project: Path, local_run: tuple[int, dict[str, Any]]
) -> tuple[int, dict[str, Any]]:
    marker = project.parent / "crashed-once"
    assert not marker.exists()
    results = project.parent / "ray.jsonl"
    code, data, _ = _verify("--ray-address", cluster, "--results", str(results), str(project))
    assert marker.exists()  # crashing_loss killed an actor
    return code, data


def test_same_verdicts_as_the_local_pool(
    local_run: tuple[int, dict[str, Any]], ray_run: tuple[int, dict[str, Any]]
) -> None:
    (local_code, local), (ray_code, on_ray) = local_run, ray_run
    assert (
        _verdicts(on_ray)
        == _verdicts(local)
        == {
            "clipped_loss": "equivalent",
            "logged_loss": "equivalent",
            "crashing_loss": "equivalent",
            "deadly_loss": "error",
        }
    )
    assert ray_code == local_code == 2  # the deadly one
    printing = next(r for r in on_ray["results"] if r["function"] == "logged_loss")
    assert [c["name"] for c in printing["checks"]] == [
        c["name"]
        for c in next(r for r in local["results"] if r["function"] == "logged_loss")["checks"]
    ]


def test_a_killed_worker_is_retried_once_elsewhere(ray_run: tuple[int, dict[str, Any]]) -> None:
    _, data = ray_run
    by_name = {r["function"]: r for r in data["results"]}
    # Killed once: run again on another actor, and proven.
    assert by_name["crashing_loss"]["verdict"] == "equivalent"
    # Killed every time: an error naming the loss of the worker.
    error = by_name["deadly_loss"]["error"]
    assert "the worker died running it, on 2 workers" in error
    assert "actor" in error.lower() or "worker" in error.lower()


def test_resume_runs_only_what_the_interrupted_run_left(
    cluster: str, project: Path, ray_run: tuple[int, dict[str, Any]]
) -> None:
    results = project.parent / "ray.jsonl"
    lines = results.read_text().splitlines()
    name = lambda line: json.loads(line)["function"]  # noqa: E731
    kept = [line for line in lines if name(line) in ("logged_loss", "crashing_loss")]
    cut = next(line for line in lines if name(line) == "clipped_loss")
    # Interrupted while clipped_loss's result was being written.
    results.write_text("\n".join(kept) + "\n" + cut[: len(cut) // 2])
    before = {name(line): json.loads(line)["result"] for line in kept}

    code, data, stderr = _verify(
        "--ray-address",
        cluster,
        "--results",
        str(results),
        "--resume",
        "--progress",
        str(project / "losses.py"),
    )
    assert code == 0, data
    assert _verdicts(data) == {
        "clipped_loss": "equivalent",
        "logged_loss": "equivalent",
        "crashing_loss": "equivalent",
    }
    assert "verify: 3/3 done (2 resumed)" in stderr
    after = {r["function"]: r for r in data["results"]}
    for function, result in before.items():  # reused as they were, not run again
        assert after[function]["seconds"] == result["seconds"]
    assert len(results.read_text().splitlines()) == 3
