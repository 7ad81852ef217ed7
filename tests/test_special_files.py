"""Only regular files are read: a FIFO, a socket or a device named `*.py`
(or a link to one) is reported and skipped without being opened for
reading, and bytes that are not Python source are reported with the line
and the reason."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

import tfrewrite
from tfrewrite.workspace.discovery import find_files
from tfrewrite.workspace.sources import (
    SourceDecodeError,
    SpecialFile,
    decode_source,
    read_file_bytes,
    undecodable,
)

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX special files")

SRC = str(Path(tfrewrite.__file__).parent.parent)
PRINTING = textwrap.dedent(
    """\
    import tensorflow as tf


    @tf.function
    def loss(y_true, y_pred):
        print(y_pred)
        return tf.reduce_mean(y_true - y_pred)
    """
)


def tfrewrite_cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The command line in a process of its own, with a timeout: a run that
    opens a FIFO would wait forever."""
    return subprocess.run(
        [sys.executable, "-m", "tfrewrite", *args],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": SRC},
        capture_output=True,
        text=True,
        timeout=120,
    )


@contextmanager
def deadline(seconds: int) -> Iterator[None]:
    """Fail instead of hanging when a read blocks."""

    def expire(signum: int, frame: object) -> None:
        raise TimeoutError("blocked reading a special file")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "loss.py").write_text(PRINTING)
    os.mkfifo(tmp_path / "pipe.py")
    (tmp_path / "zero.py").symlink_to("/dev/zero")
    return tmp_path


@pytest.mark.parametrize("command", ["check", "fix"])
def test_a_fifo_and_a_device_in_a_folder_are_skipped_with_a_note(tree: Path, command: str) -> None:
    completed = tfrewrite_cli(tree, command, "--no-cache", ".")
    out = completed.stdout + completed.stderr
    assert completed.returncode == 2, out
    assert "Traceback" not in out and "MemoryError" not in out
    assert "pipe.py: a FIFO, not a regular file: skipped, never read" in out
    assert "zero.py: a character device, not a regular file: skipped, never read" in out
    if command == "check":
        assert "loss.py:6:5: TFR103" in out  # the run went on
    else:
        assert "tf.print(" in (tree / "loss.py").read_text()


def test_special_files_named_on_the_command_line(tree: Path) -> None:
    completed = tfrewrite_cli(tree, "check", "--no-cache", "pipe.py", "zero.py", "loss.py")
    out = completed.stdout + completed.stderr
    assert completed.returncode == 2, out
    assert "pipe.py: a FIFO" in out and "zero.py: a character device" in out
    assert "TFR103" in out


def test_discovery_never_opens_a_special_file(tree: Path) -> None:
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(tree / "sock.py"))
        with deadline(20):
            found = find_files([tree], tree, ())
    assert [p.name for p in found.files] == ["loss.py"]
    assert sorted((Path(e.path).name, e.message) for e in found.errors) == [
        ("pipe.py", "a FIFO, not a regular file: skipped, never read"),
        ("sock.py", "a socket, not a regular file: skipped, never read"),
        ("zero.py", "a character device, not a regular file: skipped, never read"),
    ]


def test_reading_checks_the_open_file_not_only_the_name(tree: Path) -> None:
    """A path checked before and swapped for a FIFO since is still refused,
    without blocking: the type is checked on the handle opened."""
    with deadline(20):
        with pytest.raises(SpecialFile, match="a FIFO"):
            read_file_bytes(tree / "pipe.py")
        with pytest.raises(SpecialFile, match="a character device"):
            read_file_bytes(tree / "zero.py")
    assert read_file_bytes(tree / "loss.py") == PRINTING.encode()


# -- bytes that are not Python source ----------------------------------------------------


@pytest.mark.parametrize(
    ("data", "line", "column", "reason"),
    [
        (b"x = 1\ny = 2\x00\n", 2, 6, "binary file"),
        (b'x = 1\n\ny = "caf\xe9"\n', 3, 9, "not UTF-8 (invalid continuation byte 0xe9)"),
        (b"a = 1\rb = 2\r\xff\r", 3, 1, "not UTF-8 (invalid start byte 0xff)"),
        (b'# -*- coding: ascii -*-\nx = "\xe9"\n', 2, 6, "not valid ascii"),
        (b"# -*- coding: nonsense -*-\nx = 1\n", 1, 1, "unknown encoding: nonsense"),
    ],
    ids=["nul", "latin1-without-cookie", "cr-only", "cookie-lies", "unknown-cookie"],
)
def test_undecodable_bytes_say_where_and_why(
    data: bytes, line: int, column: int, reason: str
) -> None:
    with pytest.raises(SourceDecodeError) as raised:
        decode_source(data)
    assert (raised.value.line, raised.value.column) == (line, column)
    assert reason in raised.value.reason
    assert f"(line {line}, column {column})" in str(raised.value)
    found = undecodable(data)
    assert found is not None and found.reason == raised.value.reason


@pytest.mark.parametrize(
    "data",
    [
        b"x = 1\n",
        "# -*- coding: latin-1 -*-\nx = 'é'\n".encode("latin-1"),
        b"\xef\xbb\xbfx = 1\n",
        "x = 'é'\n".encode(),
    ],
)
def test_source_text_is_decodable(data: bytes) -> None:
    assert undecodable(data) is None


def test_an_undecodable_file_named_on_the_command_line_is_reported(tmp_path: Path) -> None:
    (tmp_path / "latin.py").write_bytes(b'x = "caf\xe9"\n')
    completed = tfrewrite_cli(tmp_path, "check", "--no-cache", "latin.py")
    out = completed.stdout + completed.stderr
    assert completed.returncode == 2, out
    assert "latin.py" in out and "line 1, column 9" in out and "not UTF-8" in out


def test_an_undecodable_file_in_a_folder_is_reported_though_it_names_no_tensorflow(
    tmp_path: Path,
) -> None:
    (tmp_path / "loss.py").write_text(PRINTING)
    (tmp_path / "latin.py").write_bytes(b'x = 1\nname = "caf\xe9"\n')
    (tmp_path / "blob.py").write_bytes(b"\x7fELF\x02\x01\x01\x00\x00\x00")
    completed = tfrewrite_cli(tmp_path, "check", "--no-cache", ".")
    out = completed.stdout + completed.stderr
    assert completed.returncode == 2, out
    assert "latin.py: cannot read: not UTF-8" in out and "(line 2, column 12)" in out
    assert "blob.py: cannot read: binary file" in out and "(line 1, column 8)" in out
    assert "TFR103" in out
