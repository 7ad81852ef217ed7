"""Capture printed output at the file-descriptor level, and compare it by value.

`tf.print` writes through TensorFlow's C++ runtime straight to file
descriptors 1 and 2, bypassing `sys.stdout`, so redirecting the Python stream
objects would miss it. Each descriptor is pointed at a temporary file of its
own: where a print goes is part of what it does. Python's `print` writes to
standard output, `tf.print` to standard error unless given
`output_stream=sys.stdout`, so `print(x)` -> `tf.print(x)` moves the line to
another stream (a log collector, a shell's `2>/dev/null`, a pipe to the next
program all see the difference).

Output is compared by the numbers it shows, not its formatting: Python's
`print(tensor)` shows `tf.Tensor(0.5, shape=(), dtype=float32)`, `tf.print`
shows `0.5`. It is compared stream by stream.
"""

from __future__ import annotations

import contextlib
import ctypes
import math
import os
import re
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO

STREAMS = ("stdout", "stderr")

_NOISE = re.compile(r"shape=\([^)]*\)|dtype=[A-Za-z0-9_]+|<tf\.Tensor[^>]*?:|Tensor\(\"[^\"]*\"")
_NUMBER = re.compile(
    r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|[-+]?\b(?:nan|inf)\b", re.IGNORECASE
)


@dataclass
class Printed:
    """What a call wrote to each standard stream."""

    stdout: str = ""
    stderr: str = ""

    @property
    def text(self) -> str:
        """Both streams, standard output first (their interleaving is not kept)."""
        return self.stdout + self.stderr

    def on(self, stream: str) -> str:
        return str(getattr(self, stream))


class Captured(Printed):
    """The text written while the capture was active (set on exit)."""


def _flush_c_stdio() -> None:
    """Flush C `stdio` buffers: the runtime's writes may sit there while the
    descriptor is a file (fully buffered)."""
    with contextlib.suppress(OSError, AttributeError):  # no libc symbols (Windows)
        _libc().fflush(None)


_LIBC: list[ctypes.CDLL] = []


def _libc() -> ctypes.CDLL:
    if not _LIBC:
        _LIBC.append(ctypes.CDLL(None))
    return _LIBC[0]


# Pairs of temporary files (standard output, standard error) not in use: a
# verification calls user code thousands of times (the distribution tests),
# and creating two files per call would double what capturing costs.
_FREE_SINKS: list[tuple[IO[bytes], IO[bytes]]] = []


@contextlib.contextmanager
def capture_fds() -> Iterator[Captured]:
    """Redirect file descriptors 1 and 2 into a temporary file each."""
    result = Captured()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    _flush_c_stdio()
    saved = [os.dup(1), os.dup(2)]
    saved_streams = (sys.stdout, sys.stderr)
    sinks = _FREE_SINKS.pop() if _FREE_SINKS else _new_sinks()
    os.dup2(sinks[0].fileno(), 1)
    os.dup2(sinks[1].fileno(), 2)
    # Python-level writes too, in case sys.stdout is not backed by fd 1
    # (a test runner's capture object, an IDE console). Two objects: a
    # `tf.print(output_stream=sys.stdout)` traced now must write to fd 1.
    texts = [
        open(fd, "w", encoding="utf-8", errors="replace", closefd=False, buffering=1)
        for fd in (1, 2)
    ]
    sys.stdout, sys.stderr = texts
    try:
        yield result
    finally:
        for text in texts:
            with contextlib.suppress(Exception):
                text.flush()
        _flush_c_stdio()
        sys.stdout, sys.stderr = saved_streams
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in saved:
            os.close(fd)
        for sink, name in zip(sinks, STREAMS, strict=True):
            sink.seek(0)
            setattr(result, name, sink.read().decode("utf-8", "replace"))
            sink.seek(0)
            sink.truncate()
        _FREE_SINKS.append(sinks)


def _new_sinks() -> tuple[IO[bytes], IO[bytes]]:
    return tempfile.TemporaryFile(mode="w+b"), tempfile.TemporaryFile(mode="w+b")


def numbers(text: str) -> list[float]:
    """The numbers shown in printed text, ignoring shapes and dtypes."""
    cleaned = _NOISE.sub(" ", text)
    return [float(m) for m in _NUMBER.findall(cleaned)]


_NONE = re.compile(r"\bNone\b")


def same_numbers(
    expected_text: str, actual_text: str, rtol: float, atol: float
) -> tuple[bool, str]:
    """Whether two printouts show the same values, value by value.

    What tracing shows differently is a mismatch, with the reason: a `None`
    where the original showed a number (a static shape under an
    `input_signature` or `reduce_retracing`: use `tf.shape(x)`), and a tensor
    `tf.print` abbreviated with `...` (its default `summarize=3`: pass
    `summarize=-1`)."""
    want, got = numbers(expected_text), numbers(actual_text)

    def close(a: float, b: float) -> bool:
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return abs(a - b) <= atol + rtol * abs(b)

    nones = len(_NONE.findall(_NOISE.sub(" ", actual_text))) - len(
        _NONE.findall(_NOISE.sub(" ", expected_text))
    )
    if nones > 0:
        return False, (
            "printed None where the original printed a number (a static shape unknown "
            "while tracing: print tf.shape(x) instead of x.shape)"
        )
    if "..." in actual_text and "..." not in expected_text:
        return False, (
            f"abbreviated a tensor with '...' ({len(got)} of {len(want)} numbers shown: "
            "tf.print shows 3 entries per axis unless given summarize=-1)"
        )
    if len(want) != len(got):
        return False, f"printed {len(got)} numbers, expected {len(want)}"
    for i, (a, b) in enumerate(zip(want, got, strict=True)):
        if not close(a, b):
            return False, f"value {i + 1} printed as {b:g}, expected {a:g}"
    return True, ""


def _shown(text: str) -> str:
    return repr(text.strip()[:80])


def compare_printed(
    expected: Printed,
    actual: Printed,
    rtol: float,
    atol: float,
    call: int = 1,
    subject: str = "the rewrite",
    values: bool = True,
    moved: frozenset[tuple[str, str]] = frozenset(),
) -> str | None:
    """Why traced call number `call` (`actual`) does not print what one eager
    call of the original (`expected`) prints, stream by stream; None when it
    does. Output the original writes to one stream and `subject` to the
    other is a mismatch saying so. With `values` False (a random function)
    only how many numbers each stream shows is compared.

    `moved` holds the (from, to) moves the project asked for: ("stdout",
    "stderr") when TFR103's `tf.print` is configured to write to standard
    error (`print-output-stream`), so the original's standard output is then
    looked for on standard error."""
    for source, target in sorted(moved):
        if expected.on(source).strip() and not actual.on(source).strip():
            expected = Printed(**{source: "", target: expected.on(source) + expected.on(target)})

    def same(want: str, got: str) -> bool:
        if values:
            return same_numbers(want, got, rtol, atol)[0]
        return len(numbers(want)) == len(numbers(got))

    for stream in STREAMS:
        want, got = expected.on(stream), actual.on(stream)
        if bool(want.strip()) != bool(got.strip()):
            which = f" (traced call {call})" if call > 1 else ""
            return _misplaced(expected, actual, stream, subject, same) + which
        if not values:
            if len(numbers(want)) != len(numbers(got)):
                return (
                    f"traced call {call} printed {len(numbers(got))} values to {stream}, "
                    f"the original {len(numbers(want))}"
                )
            continue
        ok, why = same_numbers(want, got, rtol, atol)
        if not ok:
            return (
                f"traced call {call} printed {_shown(got)} to {stream}, the original printed "
                f"{_shown(want)}: {why}"
            )
    return None


def _misplaced(
    expected: Printed, actual: Printed, stream: str, subject: str, same: Callable[[str, str], bool]
) -> str:
    """The original and `subject` disagree on whether `stream` gets output:
    which stream each writes it to (`same`: whether two printouts show the
    same values)."""
    other = STREAMS[1 - STREAMS.index(stream)]
    want = expected.on(stream)
    if want.strip():  # the original prints here, the subject does not
        elsewhere = actual.on(other)
        if not elsewhere.strip():
            return f"the original prints {_shown(want)} to {stream}; {subject} prints nothing there"
        if same(want, elsewhere):
            return f"the original prints {_shown(want)} to {stream}; {subject} prints it to {other}"
        return (
            f"the original prints {_shown(want)} to {stream}; {subject} prints "
            f"{_shown(elsewhere)} to {other} instead"
        )
    got, before = actual.on(stream), expected.on(other)
    if before.strip() and same(before, got):
        also = "also " if actual.on(other).strip() else ""
        return (
            f"the original prints {_shown(before)} to {other}; {subject} {also}prints it "
            f"to {stream}"
        )
    return f"{subject} prints {_shown(got)} to {stream}; the original prints nothing there"
