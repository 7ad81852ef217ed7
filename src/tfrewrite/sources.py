"""Reading and writing source files without losing anything.

Sources are decoded with the encoding Python itself would use (PEP 263 cookie
or BOM, UTF-8 otherwise) and read with `newline=""` so `\\r\\n` files keep their
line endings through LibCST. Writes go to a temporary file in the same folder
that replaces the original in one `os.replace`, with the original's mode.
"""

from __future__ import annotations

import io
import os
import stat
import tempfile
import tokenize
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class SourceText:
    text: str
    encoding: str


def read_source(path: Path) -> SourceText:
    data = path.read_bytes()
    return decode_source(data)


def decode_source(data: bytes) -> SourceText:
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    text = data.decode(encoding)
    if encoding == "utf-8-sig" and text.startswith("\ufeff"):
        text = text[1:]
    return SourceText(text, encoding)


def encode_source(text: str, encoding: str) -> bytes:
    if encoding == "utf-8-sig":
        return "\ufeff".encode() + text.encode("utf-8")
    return text.encode(encoding)


def write_atomic(path: Path, text: str, encoding: str) -> None:
    """Replace `path` with `text` in one step, keeping its permission bits."""
    data = encode_source(text, encoding)
    mode = stat.S_IMODE(path.stat().st_mode) if path.exists() else None
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tfrewrite", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
