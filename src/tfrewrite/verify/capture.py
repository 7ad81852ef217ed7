"""Capture printed output at the file-descriptor level, and compare it by value.

`tf.print` writes through TensorFlow's C++ runtime straight to file
descriptors 1 and 2, bypassing `sys.stdout`, so redirecting the Python stream
objects would miss it. Both descriptors are pointed at one temporary file.

Output is compared by the numbers it shows, not its formatting: Python's
`print(tensor)` shows `tf.Tensor(0.5, shape=(), dtype=float32)`, `tf.print`
shows `0.5`.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import sys
import tempfile
from collections.abc import Iterator

_NOISE = re.compile(r"shape=\([^)]*\)|dtype=[A-Za-z0-9_]+|<tf\.Tensor[^>]*?:|Tensor\(\"[^\"]*\"")
_NUMBER = re.compile(
    r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|[-+]?\b(?:nan|inf)\b", re.IGNORECASE
)


class Captured:
    """The text written while the capture was active (set on exit)."""

    text: str = ""


@contextlib.contextmanager
def capture_fds() -> Iterator[Captured]:
    """Redirect file descriptors 1 and 2 into a temporary file."""
    result = Captured()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    saved = [os.dup(1), os.dup(2)]
    saved_streams = (sys.stdout, sys.stderr)
    with tempfile.TemporaryFile(mode="w+b") as sink:
        os.dup2(sink.fileno(), 1)
        os.dup2(sink.fileno(), 2)
        # Python-level writes too, in case sys.stdout is not backed by fd 1
        # (a test runner's capture object, an IDE console).
        text = open(1, "w", encoding="utf-8", errors="replace", closefd=False, buffering=1)
        sys.stdout = sys.stderr = text
        try:
            yield result
        finally:
            with contextlib.suppress(Exception):
                text.flush()
            sys.stdout, sys.stderr = saved_streams
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)
            sink.seek(0)
            result.text = sink.read().decode("utf-8", "replace")


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
