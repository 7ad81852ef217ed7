"""Capture what the process writes to its standard output and error, at the
file-descriptor level.

`tf.print` writes through TensorFlow's C++ runtime straight to file
descriptors 1 and 2, not through Python's `sys.stdout` / `sys.stderr`
objects, so `capsys` and `contextlib.redirect_stdout` do not see it. This
helper points descriptors 1 and 2 at temporary files, and points
`sys.stdout` / `sys.stderr` at those descriptors too, so Python `print` and
`tf.print` land in the same place, in order.

    with capture_fds() as out:
        f(x)
    out.stdout, out.stderr  # text, available after the block
"""

from __future__ import annotations

import contextlib
import ctypes
import io
import os
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass
class Captured:
    """The text written to each stream inside the `with` block (set on exit)."""

    stdout: str = ""
    stderr: str = ""

    def stdout_lines(self) -> list[str]:
        return self.stdout.splitlines()

    def stderr_lines(self) -> list[str]:
        return self.stderr.splitlines()


def _flush_c_stdio() -> None:
    """Flush C `stdio` buffers (the runtime's writes may sit there when the
    descriptor is a file, which is fully buffered)."""
    try:
        ctypes.CDLL(None).fflush(None)
    except (OSError, AttributeError):  # pragma: no cover - no libc symbols (Windows)
        pass


@contextlib.contextmanager
def capture_fds() -> Iterator[Captured]:
    captured = Captured()
    saved_streams = (sys.stdout, sys.stderr)
    for stream in saved_streams:
        stream.flush()
    _flush_c_stdio()
    with tempfile.TemporaryFile() as out_file, tempfile.TemporaryFile() as err_file:
        saved_fds = (os.dup(1), os.dup(2))
        os.dup2(out_file.fileno(), 1)
        os.dup2(err_file.fileno(), 2)
        # Line-buffered text streams on the redirected descriptors, so that
        # Python output interleaves with the runtime's in call order.
        py_out = io.TextIOWrapper(
            io.FileIO(1, "w", closefd=False), encoding="utf-8", line_buffering=True
        )
        py_err = io.TextIOWrapper(
            io.FileIO(2, "w", closefd=False), encoding="utf-8", line_buffering=True
        )
        sys.stdout, sys.stderr = py_out, py_err
        try:
            yield captured
        finally:
            py_out.flush()
            py_err.flush()
            _flush_c_stdio()
            sys.stdout, sys.stderr = saved_streams
            os.dup2(saved_fds[0], 1)
            os.dup2(saved_fds[1], 2)
            for fd in saved_fds:
                os.close(fd)
            for file, name in ((out_file, "stdout"), (err_file, "stderr")):
                file.seek(0)
                setattr(captured, name, file.read().decode("utf-8", errors="replace"))
