"""Reading and writing source files without losing anything.

Sources are decoded with the encoding Python itself would use (PEP 263 cookie
or BOM, UTF-8 otherwise) and read with `newline=""` so `\\r\\n` files keep their
line endings through LibCST. Only regular files are read: a FIFO would block
the run forever and a device (`/dev/zero` behind a `.py` link) never ends, so
the file is opened without blocking and its type checked on the open handle
before a byte is read (`read_file_bytes`). Bytes that are not Python source
(NUL bytes, invalid UTF-8 without a coding cookie) raise `SourceDecodeError`,
which names the line and column.

A write never loses data and is always atomic: the new content goes to a
temporary file in the same folder, is flushed to disk, and replaces the file
with one `os.replace`, keeping its mode and, where the platform allows, its
owner (a `fix` run as root in a CI container must not hand files to root).
Whatever happens (a full disk, a file size limit, a crash), the file holds
either all of its old bytes or all of the new ones.

- A write goes through a symbolic link to the file it names (as Ruff does),
  so the link stays a link.
- A file with several hard links is refused, untouched: replacing it would
  give this name a new file and leave the other names on the old one, and
  rewriting the one shared file in place cannot be atomic (a write cut short
  leaves new bytes followed by old ones, in every name).
- A read-only file (no write bit in its mode, as Ruff decides) is refused,
  even for root.
- The file must still hold exactly the bytes that were analysed: a file edited
  while `fix` ran (by a person, an editor or a second `fix`) is left alone and
  reported. An advisory lock around check-and-replace, taken on the file the
  name leads to once locked, makes two concurrent `fix` runs see each
  other's writes.
"""

from __future__ import annotations

import errno
import io
import os
import re
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


_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=]", re.MULTILINE)


class SpecialFile(OSError):
    """A path that names a FIFO, a socket or a device, not a regular file."""


class SourceDecodeError(ValueError):
    """Bytes that are not Python source text, with where and why."""

    def __init__(self, reason: str, line: int | None = None, column: int | None = None) -> None:
        super().__init__(reason if line is None else f"{reason} (line {line}, column {column})")
        self.reason = reason
        self.line = line
        self.column = column


def read_source(path: Path) -> SourceText:
    return decode_source(read_file_bytes(path))


def file_kind(mode: int) -> str | None:
    """What a non-regular file is ("a FIFO"), or None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    return "not a regular file"


def special_file_message(kind: str) -> str:
    return f"{kind}, not a regular file: skipped, never read"


def read_file_bytes(path: Path | str) -> bytes:
    """The bytes of a regular file. The file is opened without blocking (an
    open FIFO would wait for a writer) and its type checked on the open
    handle, so a file swapped for a FIFO or a device after an earlier `stat`
    is still refused before anything is read. Raises `SpecialFile` or
    `OSError`."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    fd = os.open(path, flags | getattr(os, "O_BINARY", 0))
    try:
        kind = file_kind(os.fstat(fd).st_mode)
        if kind is not None:
            raise SpecialFile(errno.EINVAL, special_file_message(kind))
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read()
    finally:
        os.close(fd)


def decode_source(data: bytes) -> SourceText:
    """Decode like Python does. Raises `SourceDecodeError` (a `ValueError`)
    for bytes that are not Python source: a binary file (NUL bytes), bytes
    invalid in the file's encoding, an unknown coding cookie."""
    nul = data.find(b"\0")
    if nul >= 0:
        line, column = _line_column(data, nul)
        raise SourceDecodeError(
            "binary file (it contains NUL bytes), not Python source", line, column
        )
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as err:
        if not str(err.msg).startswith("invalid or missing encoding"):
            # An unknown cookie, or a cookie contradicting the BOM.
            raise SourceDecodeError(str(err.msg or err), err.lineno or 1, 1) from None
        encoding = "utf-8"  # undecodable bytes in the first lines: located below
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as err:
        line, column = _line_column(data, err.start, err.encoding)
        problem = f"{err.reason} 0x{data[err.start : err.start + 1].hex()}"
        if encoding in ("utf-8", "utf-8-sig"):
            reason = (
                f"not UTF-8 ({problem}); a file in another encoding needs a coding cookie "
                "such as `# -*- coding: latin-1 -*-`"
            )
        else:
            reason = f"not valid {encoding}, as its coding cookie says it is ({problem})"
        raise SourceDecodeError(reason, line, column) from None
    if encoding == "utf-8-sig" and text.startswith("\ufeff"):
        text = text[1:]
    return SourceText(text, encoding)


def undecodable(data: bytes) -> SourceDecodeError | None:
    """Why `data` is not Python source, or None: what a byte prefilter that
    skips a file asks first, so a binary or wrongly encoded `.py` file is
    reported even when it names no TensorFlow. Cheap: ASCII text without a
    coding cookie (most source) is settled by two scans."""
    if data.isascii() and b"\0" not in data and not _has_cookie(data):
        return None
    try:
        decode_source(data)
    except SourceDecodeError as err:
        return err
    return None


def _line_column(data: bytes, offset: int, encoding: str = "utf-8") -> tuple[int, int]:
    """1-based line and column (in characters, as findings count them) of
    a byte offset; `\\r\\n`, `\\r` and `\\n` each end a line, as for Python."""
    before = data[:offset]
    line = before.count(b"\n") + before.count(b"\r") - before.count(b"\r\n") + 1
    line_start = max(before.rfind(b"\n"), before.rfind(b"\r")) + 1
    column = len(before[line_start:].decode(encoding, errors="replace")) + 1
    return line, column


def _has_cookie(data: bytes) -> bool:
    """Whether a comment in the first two lines mentions a coding (PEP 263):
    only then can such a file be other than UTF-8."""
    end = 0
    for _ in range(2):
        breaks = [i for i in (data.find(b"\n", end), data.find(b"\r", end)) if i >= 0]
        end = min(breaks, default=len(data)) + 1
        if data.startswith(b"\r\n", end - 1):
            end += 1
    return _COOKIE.search(data[:end]) is not None


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
    `OSError`; either way the file is untouched."""
    target = Path(os.path.realpath(path))  # write through symbolic links
    info = os.stat(target)
    if file_kind(info.st_mode) is not None:
        raise WriteRefused(f"{file_kind(info.st_mode)}, not a regular file; not fixed")
    if is_read_only(info.st_mode):
        raise WriteRefused("read-only file (no write permission in its mode); not fixed")
    with _locked(target) as (handle, info):  # released after the write
        if info.st_nlink > 1:
            raise WriteRefused(hard_links_message(path, info.st_nlink))
        current = handle.read()
        try:
            decoded = decode_source(current)
        except ValueError:
            decoded = None
        if decoded is None or decoded.text != original:
            raise WriteRefused(
                "changed while tfrewrite was running; not fixed: run tfrewrite again"
            )
        _replace_atomically(target, encode_source(fixed, decoded.encoding), info)


def hard_links_message(path: Path, links: int) -> str:
    """Why a hard-linked file is not written, and what to do about it."""
    name = path.name
    return (
        f"has {links} hard links; tfrewrite replaces files atomically and would break "
        f"the link: not fixed. To fix this name alone, give it its own copy (`cp {name} "
        f"{name}.copy && mv {name}.copy {name}`) and run tfrewrite again; to keep the "
        "link, apply the changes of `tfrewrite fix --diff` by hand"
    )


@contextmanager
def _locked(target: Path) -> Iterator[tuple[io.BufferedReader, os.stat_result]]:
    """The file at `target`, open and locked, with its status. A lock is on
    the file, not the name: while this run waited, another may have replaced
    the file (a new inode under the same name) and released the lock on the
    old one, whose content still looks unchanged. So once locked, the name
    must still lead to the locked file; otherwise open the new one."""
    while True:
        # Without blocking (the path may have become a FIFO since it was
        # checked), then refused unless it is still a regular file.
        fd = os.open(target, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        handle = os.fdopen(fd, "rb")
        try:
            if file_kind(os.fstat(fd).st_mode) is not None:
                raise WriteRefused("no longer a regular file; not fixed")
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
    _sync_folder(target.parent)


def _sync_folder(folder: Path) -> None:
    """Make the rename itself durable: a crash right after `fix` must not
    bring the old name back. Best effort (not every platform opens folders)."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _owner(path: str) -> tuple[int, int]:
    info = os.stat(path)
    return info.st_uid, info.st_gid


def write_atomic(path: Path, text: str, encoding: str) -> None:
    """Replace `path` with `text` in one step, keeping its mode and owner,
    without the content check of `write_fixed` (for a file tfrewrite just
    read). A hard-linked file is refused as `write_fixed` refuses it."""
    info = os.stat(path)
    if info.st_nlink > 1:
        raise WriteRefused(hard_links_message(path, info.st_nlink))
    _replace_atomically(path, encode_source(text, encoding), info)
