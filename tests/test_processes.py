"""Worker processes: a worker that dies makes the run say which files it did
not check (exit 2, whatever `--exit-zero` says); SIGINT and SIGTERM end a
run with one line and leave no process, no temporary file and no traceback
behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tfrewrite.cli import app
from tfrewrite.pipeline import engine, workers
from tfrewrite.pipeline.rule_pass import check_file
from tfrewrite.pipeline.run_options import FileJob, InputFile, RunOptions

SRC = str(Path(__file__).parents[1] / "src")
FLAGGED = """\
import numpy as np
import tensorflow as tf

FLAG = {i}


@tf.function
def step_{i}(x, y):
    noise = np.random.normal(size=3)
    print("value", x)
    if tf.reduce_sum(x) > 0:
        z = x * 2.0 + noise
    else:
        z = x - 1.0
    for k in range(3):
        z = z + tf.reduce_mean(y) * k
    return z + FLAG
"""
DOOMED = "m3.py"


def _tree(root: Path, files: int) -> Path:
    tree = root / "tree"
    tree.mkdir()
    for i in range(files):
        (tree / f"m{i}.py").write_text(FLAGGED.format(i=i))
    return tree


def _dies_on_one_file(job: FileJob):  # type: ignore[no-untyped-def]
    """`check_file`, except that the worker checking `DOOMED` dies on it, as
    one killed by the system (out of memory) does."""
    if job.file.path.endswith(DOOMED):
        os._exit(9)
    return check_file(job)


@pytest.fixture
def dying_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rule workers forked from this process (so they run the patched
    `check_file`), one of which dies."""
    monkeypatch.setattr(engine, "check_file", _dies_on_one_file)
    monkeypatch.setattr(workers, "fresh_context", lambda: None)


def test_a_dead_worker_leaves_its_files_unchecked(tmp_path: Path, dying_worker: None) -> None:
    tree = _tree(tmp_path, 20)
    files = [InputFile(str(p)) for p in sorted(tree.glob("*.py"))]
    result = engine.run(files, RunOptions(rule_codes=("TFR102",), root=str(tmp_path)), jobs=2)
    assert any(path.endswith(DOOMED) for path in result.unchecked)
    checked = {r.path for r in result.files}
    assert not checked & set(result.unchecked)
    assert len(checked) + len(result.unchecked) == 20


@pytest.mark.parametrize("extra", [[], ["--exit-zero"]])
def test_a_dead_worker_exits_2_with_one_line(
    tmp_path: Path, dying_worker: None, extra: list[str]
) -> None:
    from typer.testing import CliRunner

    tree = _tree(tmp_path, 20)
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        outcome = CliRunner().invoke(
            app, ["check", str(tree), "-j", "2", "--no-cache", *extra], catch_exceptions=False
        )
    finally:
        os.chdir(old)
    assert outcome.exit_code == 2, outcome.output
    lines = [line for line in outcome.output.splitlines() if "not checked" in line]
    assert len(lines) == 1
    assert "a worker process died" in lines[0] and DOOMED in lines[0]
    assert "Traceback" not in outcome.output


# -- interruptions --------------------------------------------------------------------


def _session(sid: int) -> list[int]:
    """The live processes of session `sid` (zombies are dead: not counted)."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid and fields[0] != "Z":
            pids.append(int(entry))
    return pids


def _wait_until(condition, seconds: float) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


def _as_from_a_terminal() -> None:
    """Signal dispositions of a command started from a shell prompt. A test
    runner's worker may ignore SIGINT, and an ignored signal stays ignored
    across `exec` (Python then installs no Ctrl-C handler: right for a
    background job, not for this test)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _start(args: list[str], cwd: Path) -> subprocess.Popen[bytes]:
    script = Path(sys.executable).with_name("tfrewrite")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "tfrewrite"]
    return subprocess.Popen(
        [*command, *args],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": SRC},
        start_new_session=True,
        preexec_fn=_as_from_a_terminal,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


# A tree that keeps the workers busy well past the moment the signal is sent,
# however fast the machine (the signal goes as soon as the pool is up).
FILES = 1500
# The main process, the resource tracker, the fork server and a worker.
POOL_UP = 4


@pytest.mark.parametrize(
    ("signum", "whole_group", "code"),
    [
        (signal.SIGTERM, False, 143),  # to the main process alone
        (signal.SIGINT, True, 130),  # Ctrl-C: to every process of the terminal's group
    ],
    ids=["sigterm", "ctrl-c"],
)
def test_an_interrupted_check_leaves_nothing_behind(
    tmp_path: Path, signum: int, whole_group: bool, code: int
) -> None:
    _tree(tmp_path, FILES)
    process = _start(["check", "tree", "-j", "2", "--no-cache"], tmp_path)
    try:
        assert _wait_until(lambda: len(_session(process.pid)) >= POOL_UP, 120)
        (os.killpg if whole_group else os.kill)(process.pid, signum)
        _, stderr = process.communicate(timeout=60)
        assert _wait_until(lambda: not _session(process.pid), 30), _session(process.pid)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    text = stderr.decode()
    assert process.returncode == code, text
    assert "Traceback" not in text
    assert text.strip() in ("tfrewrite: terminated", "tfrewrite: interrupted")
    assert not list(tmp_path.rglob("*.tfrewrite"))


def test_a_write_interrupted_leaves_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGTERM while `fix` writes: the handler's `Interrupted` reaches the
    write in flight, which removes its temporary file and leaves the file as
    it was."""
    from tfrewrite.cli import Interrupted, _write_fixes
    from tfrewrite.findings import FileResult

    target = tmp_path / "m.py"
    target.write_text("x = 1\n")

    def terminated(fd: int) -> None:
        raise Interrupted(signal.SIGTERM)

    monkeypatch.setattr(os, "fsync", terminated)
    result = FileResult(str(target), source="x = 1\n", fixed_source="x = 2\n")
    with pytest.raises(Interrupted):
        _write_fixes([result], None)
    assert target.read_text() == "x = 1\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.py"]


def test_workers_exit_when_the_main_process_is_killed(tmp_path: Path) -> None:
    """SIGKILL cannot be handled: the workers notice the main process is
    gone, and with them the fork server and the resource tracker exit."""
    _tree(tmp_path, FILES)
    process = _start(["check", "tree", "-j", "2", "--no-cache"], tmp_path)
    try:
        assert _wait_until(lambda: len(_session(process.pid)) >= POOL_UP, 120)
        time.sleep(1)
        process.kill()
        process.communicate(timeout=60)
        assert _wait_until(lambda: not _session(process.pid), 30), _session(process.pid)
    finally:
        if _session(process.pid):
            os.killpg(process.pid, signal.SIGKILL)
