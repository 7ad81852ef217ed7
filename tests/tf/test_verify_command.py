"""`tfrewrite verify` end to end: worker processes, exit codes, output formats,
`--base`, timeouts and a run that continues past a failing function."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from tfrewrite.verify.command import register
from tfrewrite.verify.run import verify_targets
from tfrewrite.verify.settings import parse_verify_settings
from tfrewrite.verify.targets import pair_targets

DATA = Path(__file__).parent.parent / "data" / "verify"


@pytest.fixture(scope="module")
def app() -> typer.Typer:
    app = typer.Typer()
    register(app)

    @app.callback()
    def _main() -> None:
        """tfrewrite"""

    return app


def _run(app: typer.Typer, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["verify", *args])
    return result.exit_code, result.output


def test_divergence_of_use_absolute_error_in_the_original(app: typer.Typer) -> None:
    code, output = _run(app, str(DATA / "flag_loss.py"))
    # TFR301 removes the decorator: the rewrite fixes the original's divergence.
    assert code == 0
    assert "bad_loss" in output and "EQUIVALENT" in output
    assert "`USE_ABSOLUTE_ERROR` froze at its trace-time value False in the original" in output
    assert "called directly, the rewrite reads `USE_ABSOLUTE_ERROR` on every call" in output
    # The training script's module-level code never ran (it raises SystemExit).
    assert "training at import time" not in output


def test_pending_rewrites_of_a_folder_verify(app: typer.Typer, tmp_path: Path) -> None:
    """`verify PATH` runs the real fixes and verifies each changed function."""
    for name, function in (("cond_before.py", "clipped_loss"), ("print_before.py", "logged_loss")):
        source = (
            (DATA / name)
            .read_text()
            .replace(f"\ndef {function}", f"\n@tf.function\ndef {function}")
        )
        (tmp_path / name).write_text(source)
    code, output = _run(app, "--jobs", "2", "--output-format", "json", str(tmp_path))
    data = json.loads(output)
    verdicts = {r["function"]: (r["mode"], r["verdict"]) for r in data["results"]}
    assert verdicts == {
        "clipped_loss": ("rewrite", "equivalent"),
        "logged_loss": ("rewrite", "equivalent"),
    }, output
    assert code == 0 and data["exit_code"] == 0
    printing = next(r for r in data["results"] if r["function"] == "logged_loss")
    assert any("XLA" in w for w in printing["warnings"])


@pytest.mark.parametrize(
    ("after", "code", "verdict"),
    [("cond_after.py", 0, "EQUIVALENT"), ("cond_swapped.py", 1, "MISMATCH")],
)
def test_original_option(app: typer.Typer, after: str, code: int, verdict: str) -> None:
    exit_code, output = _run(
        app,
        "--python",
        sys.executable,
        "--original",
        str(DATA / "cond_before.py"),
        str(DATA / after),
    )
    assert exit_code == code, output
    assert f"clipped_loss  [rewrite, changed by the rewrite]  {verdict}" in output
    assert "rewrite traced, autograph=False" in output and "branches: 1/1 covered" in output


def test_configured_inputs_from_pyproject(app: typer.Typer) -> None:
    root = DATA / "dice"
    code, output = _run(
        app,
        "--config",
        str(root / "pyproject.toml"),
        "--original",
        str(root / "before" / "losses.py"),
        str(root / "after" / "losses.py"),
    )
    assert code == 0, output
    assert "DiceLoss.call" in output and "EQUIVALENT" in output


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_base_revision(app: typer.Typer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git = [
        "git",
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@example.com",
        "-c",
        "commit.gpgsign=false",
    ]
    subprocess.run([*git, "init", "-q"], cwd=repo, check=True)
    (repo / "losses.py").write_text((DATA / "assign_before.py").read_text())
    (repo / "notes.txt").write_text("not python\n")
    subprocess.run([*git, "add", "."], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "start"], cwd=repo, check=True)
    (repo / "losses.py").write_text((DATA / "assign_dropped.py").read_text())
    (repo / "notes.txt").write_text("changed\n")
    monkeypatch.chdir(repo)
    code, output = _run(app, "--base", "HEAD")
    assert code == 1, output
    assert "losses.py:4: scaled_loss" in output and "MISMATCH" in output


def test_timeout_kills_the_worker_and_the_run_continues(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The killed worker's temporary folders go with it.
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)
    settings = parse_verify_settings({"samples": 50, "xla": False})
    before = (DATA / "cond_before.py").read_text()
    targets = [
        *pair_targets(
            "hang_after.py", "hang_after", before, (DATA / "hang_after.py").read_text(), settings
        ),
        *pair_targets(
            "raise_after.py", "raise_after", before, (DATA / "raise_after.py").read_text(), settings
        ),
        *pair_targets(
            "cond_after.py", "cond_after", before, (DATA / "cond_after.py").read_text(), settings
        ),
    ]
    # The after-files drop the original's `__main__` block: a change outside
    # functions, reported apart ("not proven"); the functions are what counts.
    targets = [t for t in targets if not t.qualname.startswith("<module")]
    # The hanging function runs until killed, after 10 s; the others get
    # limits no busy machine reaches (each counted from its own start, after
    # the replacement worker has imported TensorFlow).
    from tfrewrite.verify import run

    def per_target(payload: dict) -> float:  # type: ignore[type-arg]
        return 10 if payload["path"].endswith("hang_after.py") else 600

    real = run.run_requests
    monkeypatch.setattr(
        run,
        "run_requests",
        lambda payloads, jobs, python, timeout: real(payloads, jobs, python, per_target),
    )
    results = verify_targets(targets, settings, DATA, jobs=1, timeout=10)
    verdicts = [(r["path"], r["verdict"]) for r in results]
    assert verdicts == [
        ("hang_after.py", "error"),
        ("raise_after.py", "mismatch"),
        ("cond_after.py", "equivalent"),
    ]
    assert "timed out after 10 s" in results[0]["error"]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("tfrewrite")] == []


def test_fix_verify_withholds_fixes_of_functions_that_do_not_verify(tmp_path: Path) -> None:
    from tfrewrite.config import Settings
    from tfrewrite.findings import FileResult, Finding, Position
    from tfrewrite.pipeline.engine import RunResult
    from tfrewrite.verify.gate import gate_fixes

    good_before = (DATA / "assign_before.py").read_text()
    good_after = (DATA / "assign_after.py").read_text()
    bad_before = (DATA / "cond_before.py").read_text().split("\n\nif __name__")[0]
    bad_after = (DATA / "cond_swapped.py").read_text().split("\n\nif __name__")[0]
    body = lambda text: text.split("import tensorflow as tf\n", 1)[1]  # noqa: E731
    source = "import tensorflow as tf\n" + body(good_before) + "\n" + body(bad_before) + "\n"
    fixed = "import tensorflow as tf\n" + body(good_after) + "\n" + body(bad_after) + "\n"

    def finding(line: int) -> Finding:
        return Finding(
            "TFR101",
            "tensor-if",
            "Python `if` on a tensor",
            "m.py",
            Position(line, 5),
            Position(line, 20),
        )

    good_line = source.splitlines().index("    if error > 0.2:") + 1
    bad_line = source.splitlines().index("    if error > 0.3:") + 1
    file_result = FileResult("m.py", source, [], fixed, [finding(good_line), finding(bad_line)])
    result = RunResult(files=[file_result])
    verdicts = gate_fixes(result, Settings(root=tmp_path), jobs=2)

    assert sorted(v["verdict"] for v in verdicts) == ["equivalent", "mismatch"]
    assert [f.start.line for f in file_result.fixes_applied] == [good_line]
    [withheld] = file_result.findings
    assert "fix not applied: verification mismatch: rewrite eager" in withheld.message
    assert (
        "scale, error = tf.cond(error > 0.2, above" in file_result.fixed_source
    )  # the good fix is kept
    assert "    if error > 0.3:" in file_result.fixed_source  # the swapped one is withheld
    # The withheld finding points at the restored `if` in the text as written.
    assert file_result.fixed_source.splitlines()[withheld.start.line - 1] == "    if error > 0.3:"


def test_fix_verify_on_the_command_line(tmp_path: Path) -> None:
    from tfrewrite.cli import app as tfrewrite_app

    source = (DATA / "cond_before.py").read_text().replace("\ndef ", "\n@tf.function\ndef ")
    target = tmp_path / "losses.py"
    target.write_text(source)
    result = CliRunner().invoke(tfrewrite_app, ["fix", "--verify", "--jobs", "1", str(target)])
    assert result.exit_code == 0, result.output
    assert "verify: " in result.output and "clipped_loss: equivalent" in result.output
    assert "tf.cond(error > 0.3" in target.read_text()


def test_examples_verify_with_their_configuration(app: typer.Typer) -> None:
    """Every rewrite of examples/ is proven, the notebook's included; the flag
    the original froze is reported as a divergence the rewrite fixes (TFR301
    removes the decorator). The train-step harness imports a script that
    leaves `run_functions_eagerly(True)` on; verification must still compare
    against real traces."""
    examples = Path(__file__).parent.parent.parent / "examples"
    code, output = _run(app, "--jobs", "1", "--no-xla", str(examples))
    assert code == 0, output
    assert "Verified 9 functions: 9 equivalent." in output
    assert "`use_absolute_error` froze at its trace-time value False in the original" in output
    assert "notebook_tutorial.ipynb" in output
