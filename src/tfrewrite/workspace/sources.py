"""Reading and writing source files without losing anything.

Sources are decoded with the encoding Python itself would use (PEP 263 cookie
or BOM, UTF-8 otherwise) and read with `newline=""` so `\\r\\n` files keep their
line endings through LibCST.

A write never loses data:

- it goes through a symbolic link to the file it names (as Ruff does), so the
  link stays a link;
- a file with several hard links is rewritten in place, so every link still
  names the one file; any other file is replaced atomically (a temporary file in
  the same folder, then one `os.replace`), keeping its mode and, where the
  platform allows, its owner (a `fix` run as root in a CI container must not
  hand files to root);
- a read-only file (no write bit in its mode, as Ruff decides) is refused,
  even for root;
- the file must still hold exactly the bytes that were analysed: a file edited
  while `fix` ran (by a person, an editor or a second `fix`) is left alone and
  reported. An advisory lock around check-and-replace, taken on the file the
  name leads to once locked, makes two concurrent `fix` runs see each
  other's writes.
"""

from __future__ import annotations

import errno
import io
import os
import stat
import tempfile
import tokenize
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

try:  # POSIX only; elsewhere the content check alone guards concurrent runs
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]


@dataclass(frozen=True)
class SourceText:
    text: str
    encoding: str


class WriteRefused(Exception):
    """A fixed file tfrewrite will not write; the message says why."""


def read_source(path: Path) -> SourceText:
    data = path.read_bytes()
    return decode_source(data)


def decode_source(data: bytes) -> SourceText:
    """Decode like Python does. Raises `UnicodeDecodeError` or `SyntaxError`
    (an unknown coding cookie) for bytes that are not Python source, and
    `ValueError` for a binary file (NUL bytes)."""
    if b"\0" in data:
        raise ValueError("binary file (it contains NUL bytes), not Python source")
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    text = data.decode(encoding)
    if encoding == "utf-8-sig" and text.startswith("\ufeff"):
        text = text[1:]
    return SourceText(text, encoding)


def encode_source(text: str, encoding: str) -> bytes:
    if encoding == "utf-8-sig":
        return "\ufeff".encode() + text.encode("utf-8")
    return text.encode(encoding)


def is_read_only(mode: int) -> bool:
    """No write bit for anyone: Ruff's test, which holds for root too."""
    return not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)


def write_fixed(path: Path, original: str, fixed: str) -> None:
    """Write `fixed` over `path`, which must still hold `original` (the text
    that was analysed), in the file's own encoding. Raises `WriteRefused` or
    `OSError`."""
    target = Path(os.path.realpath(path))  # write through symbolic links
    if is_read_only(os.stat(target).st_mode):
        raise WriteRefused("read-only file (no write permission in its mode); not fixed")
    with _locked(target) as (handle, info):  # released after the write
        current = handle.read()
        try:
            decoded = decode_source(current)
        except (UnicodeDecodeError, SyntaxError, ValueError):
            decoded = None
        if decoded is None or decoded.text != original:
            raise WriteRefused(
                "changed while tfrewrite was running; not fixed: run tfrewrite again"
            )
        data = encode_source(fixed, decoded.encoding)
        if info.st_nlink > 1:
            _write_in_place(target, data)
        else:
            _replace_atomically(target, data, info)


@contextmanager
def _locked(target: Path) -> Iterator[tuple[io.BufferedReader, os.stat_result]]:
    """The file at `target`, open and locked, with its status. A lock is on
    the file, not the name: while this run waited, another may have replaced
    the file (a new inode under the same name) and released the lock on the
    old one, whose content still looks unchanged. So once locked, the name
    must still lead to the locked file; otherwise open the new one."""
    while True:
        handle = open(target, "rb")  # noqa: SIM115 - closed below or by the caller's exit
        try:
            _lock(handle)
            info = os.fstat(handle.fileno())
            now = os.stat(target)
        except BaseException:
            handle.close()
            raise
        if (now.st_ino, now.st_dev) == (info.st_ino, info.st_dev):
            break
        handle.close()  # replaced while we waited: lock the file it is now
    with handle:
        yield handle, info


def _lock(handle: io.BufferedReader) -> None:
    if fcntl is None:  # pragma: no cover
        return
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
    except OSError as err:  # a file system without locks: the content check still holds
        if err.errno not in (errno.ENOLCK, errno.EOPNOTSUPP, errno.EINVAL):
            raise


def _write_in_place(target: Path, data: bytes) -> None:
    """Keep every hard link naming the one file: overwrite its content."""
    with open(target, "r+b") as handle:
        handle.write(data)
        handle.truncate()
        handle.flush()
        os.fsync(handle.fileno())


def _replace_atomically(target: Path, data: bytes, info: os.stat_result) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tfrewrite", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if hasattr(os, "chown") and (info.st_uid, info.st_gid) != _owner(tmp):
            try:
                os.chown(tmp, info.st_uid, info.st_gid)
            except PermissionError:
                pass  # only root may give a file away; a user's own file stays theirs
        os.chmod(tmp, stat.S_IMODE(info.st_mode))
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _owner(path: str) -> tuple[int, int]:
    info = os.stat(path)
    return info.st_uid, info.st_gid


def write_atomic(path: Path, text: str, encoding: str) -> None:
    """Replace `path` with `text` in one step, keeping its mode and owner,
    without the checks of `write_fixed` (for a file tfrewrite just read)."""
    _replace_atomically(path, encode_source(text, encoding), os.stat(path))
