"""`fix` never loses a byte: links, read-only files, files edited while it
runs, concurrent runs, owner and mode, and standard input used as a filter."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

import tfrewrite
from tfrewrite import cli
from tfrewrite.cli import app
from tfrewrite.workspace.sources import WriteRefused, write_fixed

PRINTING = textwrap.dedent(
    """\
    import tensorflow as tf


    @tf.function
    def loss(y_true, y_pred):
        print(y_pred)
        return tf.reduce_mean(y_true - y_pred)
    """
)
NOISY = textwrap.dedent(
    """\
    import numpy as np
    import tensorflow as tf


    @tf.function
    def loss(y_true, y_pred):
        print(y_pred)
        return tf.reduce_mean(y_true - y_pred) + np.random.normal(0.0, 1.0)
    """
)
SRC = str(Path(tfrewrite.__file__).parent.parent)


def invoke(args: list[str], cwd: Path, stdin: bytes | str | None = None):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(app, args, input=stdin, catch_exceptions=False)
    finally:
        os.chdir(old)


def test_fix_writes_through_a_symbolic_link(tmp_path: Path) -> None:
    (tmp_path / "real.py").write_text(PRINTING)
    (tmp_path / "link.py").symlink_to("real.py")
    result = invoke(["fix", "link.py"], tmp_path)
    assert result.exit_code == 0, result.output
    assert (tmp_path / "link.py").is_symlink()
    assert "tf.print(" in (tmp_path / "real.py").read_text()


def test_a_file_named_twice_through_a_link_is_fixed_once(tmp_path: Path) -> None:
    (tmp_path / "real.py").write_text(PRINTING)
    (tmp_path / "link.py").symlink_to("real.py")
    result = invoke(["fix", "--select", "TFR103", "real.py", "link.py"], tmp_path)
    assert result.exit_code == 0, result.output
    assert "Fixed 1 finding" in result.output


def test_a_hard_linked_file_is_refused_untouched(tmp_path: Path) -> None:
    """Replacing it would split the link; rewriting the shared file in place
    cannot be atomic. So it is not written, and the message says what to do."""
    first, second = tmp_path / "one.py", tmp_path / "two.py"
    first.write_text(PRINTING)
    os.link(first, second)
    (tmp_path / "other.py").write_text(PRINTING)
    result = invoke(["fix", "one.py", "other.py"], tmp_path)
    assert result.exit_code == 2, result.output
    assert (
        "one.py: has 2 hard links; tfrewrite replaces files atomically and would break the link"
        in result.output
    )
    assert "cp one.py one.py.copy && mv one.py.copy one.py" in result.output
    assert os.path.samefile(first, second)
    assert second.read_text() == PRINTING
    assert "tf.print(" in (tmp_path / "other.py").read_text()  # the run went on


# -- a write cut short: every byte all old or all new ------------------------------------

LIMIT = 15 * 1024  # bytes a process may write to one file


def _big_fixable() -> str:
    """A fixable file of about 16 KB: its fixed text is longer than `LIMIT`."""
    padding = "".join(f"# padding line {i:04d} {'.' * 40}\n" for i in range(280))
    return PRINTING + "\n" + padding


def _fix_with_file_size_limit(cwd: Path, *names: str) -> subprocess.CompletedProcess[str]:
    import resource
    import signal

    def limit() -> None:  # in the child: writes past LIMIT fail with EFBIG
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))

    return subprocess.run(
        [sys.executable, "-m", "tfrewrite", "fix", "--select", "TFR103", *names],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": SRC},
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=limit,
    )


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX resource limits")
def test_a_write_cut_short_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    source = _big_fixable()
    path = tmp_path / "big.py"
    path.write_text(source)
    assert len(source.encode()) > LIMIT
    completed = _fix_with_file_size_limit(tmp_path, "big.py")
    assert completed.returncode == 2, completed.stdout + completed.stderr
    assert "big.py: cannot write: File too large" in completed.stdout + completed.stderr
    assert "Traceback" not in completed.stderr
    assert path.read_text() == source
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.py"]  # no temporary left


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX resource limits")
def test_a_hard_linked_file_is_never_left_half_written(tmp_path: Path) -> None:
    """Once, a hard-linked file was rewritten in place: a write cut short
    left the fixed text up to the limit, then the original's tail, in both
    names."""
    source = _big_fixable()
    first, second = tmp_path / "a.py", tmp_path / "b.py"
    first.write_text(source)
    os.link(first, second)
    completed = _fix_with_file_size_limit(tmp_path, "a.py")
    output = completed.stdout + completed.stderr
    assert completed.returncode == 2, output
    assert "a.py: has 2 hard links" in output
    assert first.read_text() == source and os.path.samefile(first, second)


# -- diffs that apply --------------------------------------------------------------------

ACCENTED = PRINTING.replace("print(y_pred)", 'print("é", y_pred)')
ENCODED = {
    "bom.py": b"\xef\xbb\xbf" + ACCENTED.encode(),
    "latin.py": ("# -*- coding: latin-1 -*-\n" + ACCENTED).encode("latin-1"),
    "cr_only.py": ACCENTED.replace("\n", "\r").encode(),
    "crlf.py": ACCENTED.replace("\n", "\r\n").encode(),
    "form_feed.py": ACCENTED.replace("\n\n\n@", "\n\n\x0c\n@").encode(),
    "no_final_newline.py": ACCENTED.rstrip("\n").encode(),
}


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_diffs_of_any_encoding_and_line_ending_apply(tmp_path: Path) -> None:
    """`fix --diff` is made of the bytes as they are and as `fix` writes
    them: `git apply` and `patch -p1` accept it, and applying it gives
    exactly what `fix` writes."""
    for name, data in ENCODED.items():
        (tmp_path / name).write_bytes(data)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    result = invoke(["fix", "--diff", "--select", "TFR103", "."], tmp_path)
    assert result.exit_code == 1, result.output
    patch = tmp_path.parent / f"{tmp_path.name}.patch"
    patch.write_bytes(result.stdout_bytes)
    for name in ENCODED:
        assert f"--- a/{name}".encode() in result.stdout_bytes
    assert "é".encode("latin-1") + b'", y_pred' in result.stdout_bytes  # latin.py, in latin-1
    checked = subprocess.run(
        ["git", "apply", "--check", str(patch)], cwd=tmp_path, capture_output=True
    )
    assert checked.returncode == 0, checked.stderr
    if shutil.which("patch"):
        dry = subprocess.run(
            ["patch", "-p1", "--dry-run", "-i", str(patch)], cwd=tmp_path, capture_output=True
        )
        assert dry.returncode == 0, dry.stdout + dry.stderr
    subprocess.run(["git", "apply", str(patch)], cwd=tmp_path, check=True, capture_output=True)
    applied = {name: (tmp_path / name).read_bytes() for name in ENCODED}
    assert all(applied[name] != data for name, data in ENCODED.items())
    for name, data in ENCODED.items():
        (tmp_path / name).write_bytes(data)
    assert invoke(["fix", "--select", "TFR103", "."], tmp_path).exit_code == 0
    assert applied == {name: (tmp_path / name).read_bytes() for name in ENCODED}


def test_read_only_file_is_refused_even_for_root(tmp_path: Path) -> None:
    (tmp_path / "ro.py").write_text(PRINTING)
    (tmp_path / "rw.py").write_text(PRINTING)
    (tmp_path / "ro.py").chmod(0o444)
    result = invoke(["fix", "."], tmp_path)
    assert result.exit_code == 2
    assert "ro.py: read-only file" in result.output
    assert (tmp_path / "ro.py").read_text() == PRINTING
    assert "tf.print(" in (tmp_path / "rw.py").read_text()  # the run went on


def test_file_edited_while_fix_runs_is_not_overwritten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "loss.py"
    path.write_text(PRINTING)
    edited = PRINTING + "\n# edited in the editor meanwhile\n"
    real_run = cli.run

    def run_then_edit(*args, **kwargs):  # type: ignore[no-untyped-def]
        result = real_run(*args, **kwargs)
        path.write_text(edited)
        return result

    monkeypatch.setattr(cli, "run", run_then_edit)
    result = invoke(["fix", "loss.py"], tmp_path)
    assert result.exit_code == 2
    assert "changed while tfrewrite was running" in result.output
    assert "run tfrewrite again" in result.output
    assert path.read_text() == edited
    assert "Fixed" not in result.output


def test_write_fixed_refuses_content_that_changed(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text("x = 2\n")
    with pytest.raises(WriteRefused):
        write_fixed(path, "x = 1\n", "x = 3\n")
    assert path.read_text() == "x = 2\n"


def test_two_concurrent_fix_runs_lose_no_fix(tmp_path: Path) -> None:
    """Each run fixes a different rule; a file a run reports as fixed keeps
    that run's fix, and a file it skipped names itself in an error."""
    for i in range(60):
        (tmp_path / f"m{i:02d}.py").write_text(NOISY)
    env = {**os.environ, "PYTHONPATH": SRC}
    runs = {
        code: subprocess.Popen(
            [sys.executable, "-m", "tfrewrite", "fix", ".", "--select", code, "-j", "1"],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for code in ("TFR102", "TFR103")
    }
    outputs = {code: process.communicate(timeout=300)[0] for code, process in runs.items()}
    marks = {"TFR102": "tf.random.normal(", "TFR103": "tf.print("}
    for code, output in outputs.items():
        assert "Traceback" not in output, output
        for path in tmp_path.glob("m*.py"):
            skipped = f"{path.name}: changed while tfrewrite was running" in output
            assert skipped or marks[code] in path.read_text(), (code, path.name, output)


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give files to another owner")
def test_owner_and_mode_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "loss.py"
    path.write_text(PRINTING)
    os.chown(path, 65534, 65534)
    path.chmod(0o640)
    result = invoke(["fix", "loss.py"], tmp_path)
    assert result.exit_code == 0, result.output
    info = path.stat()
    assert (info.st_uid, info.st_gid) == (65534, 65534)
    assert stat.S_IMODE(info.st_mode) == 0o640
    assert "tf.print(" in path.read_text()


# -- standard input as a filter ---------------------------------------------------------


def test_fix_stdin_with_a_syntax_error_echoes_the_input(tmp_path: Path) -> None:
    broken = "import tensorflow as tf\nx = (\n"
    result = invoke(["fix", "-"], tmp_path, stdin=broken)
    assert result.exit_code == 2
    assert result.stdout == broken
    assert "syntax error" in result.stderr


def test_fix_stdin_keeps_a_latin1_encoding(tmp_path: Path) -> None:
    source = "# -*- coding: latin-1 -*-\n" + PRINTING.replace("print(y_pred)", 'print("é", y_pred)')
    result = invoke(["fix", "-"], tmp_path, stdin=source.encode("latin-1"))
    assert result.exit_code == 0, result.stderr
    out = result.stdout_bytes
    assert 'tf.print("é"'.encode("latin-1") in out
    assert "é".encode() not in out


def test_fix_stdin_that_is_not_utf8_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    data = 'x = "caf\xe9"\n'.encode("latin-1")
    completed = subprocess.run(
        [sys.executable, "-m", "tfrewrite", "fix", "-"],
        input=data,
        capture_output=True,
        env={**os.environ, "PYTHONPATH": SRC},
        cwd=tmp_path,
        timeout=120,
    )
    assert completed.returncode == 2
    assert b"Traceback" not in completed.stderr
    assert b"not UTF-8" in completed.stderr
    assert completed.stdout == data  # the filter gives the buffer back


def test_a_file_replaced_while_waiting_for_its_lock_is_checked_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second run waits for the lock on the file it opened; the first
    replaces the file (a new inode) and releases the lock on the old one,
    whose content still looks unchanged. The second must see the new file
    and refuse, not overwrite the first run's fix."""
    import tfrewrite.workspace.sources as sources

    path = tmp_path / "m.py"
    path.write_text("x = 1\n")
    real_lock = sources._lock
    replaced = []

    def lock_after_another_run_wrote(handle):  # type: ignore[no-untyped-def]
        if not replaced:
            replaced.append(True)
            other = tmp_path / "other.tmp"
            other.write_text("x = 2  # the other run's fix\n")
            os.replace(other, path)
        real_lock(handle)

    monkeypatch.setattr(sources, "_lock", lock_after_another_run_wrote)
    with pytest.raises(WriteRefused):
        write_fixed(path, "x = 1\n", "x = 3\n")
    assert path.read_text() == "x = 2  # the other run's fix\n"


def test_an_internal_error_is_one_line_that_says_where_and_the_run_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug in a rule (a `KeyError` whose text is a whole syntax tree) fails
    its file with one readable line naming where tfrewrite raised it; the
    other files are checked and the exit code is 2."""
    from tfrewrite.rules.host_values import python_print

    (tmp_path / "a.py").write_text(NOISY)
    (tmp_path / "b.py").write_text(NOISY)
    calls = []

    class Node:
        def __repr__(self) -> str:
            return "With(\n    items=[\n        ...\n    ],\n)"

    def broken(self: object, ctx: object) -> object:
        calls.append(ctx)
        if len(calls) == 1:
            raise KeyError(Node())
        return iter(())

    monkeypatch.setattr(python_print.PrintInTracedCode, "check", broken)
    result = CliRunner().invoke(app, ["check", "--no-cache", "--jobs", "1", str(tmp_path)])
    assert result.exit_code == 2
    [error] = [line for line in result.output.splitlines() if "internal error" in line]
    assert "KeyError: With( ... (in pipeline/" in error
    assert "TFR102" in result.output  # the other file is still checked
