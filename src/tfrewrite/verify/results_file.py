"""The results file: verification results kept as they finish, for `--resume`.

One JSON object per line, `{"key": ..., "function": ..., "path": ...,
"result": {...}}`, appended and flushed the moment a target finishes, so a
run that is interrupted (Ctrl-C, a lost machine, a killed job) keeps every
result it had. Each line is written whole by one write; a last line torn by
a kill is ignored when the file is read.

A result is reused by `--resume` when its key matches: a hash of everything
the worker is sent for the target (its file and function, the original
source, the rewrite, configured inputs, harness, caller, the verify options)
and tfrewrite's version. Editing the file, the rewrite or an option runs the
target again; results that depend on the environment rather than the code
(`error`: a timeout, a dead worker; `needs package`) always run again.

Standard library only.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import IO, Any

import tfrewrite

FILE_NAME = "verify-results.jsonl"
# Verdicts that are a property of the code verified, worth keeping.
REUSABLE = frozenset({"equivalent", "consistent", "mismatch", "not proven", "diverges"})
_GITIGNORE = "# Created by tfrewrite: the cache is local, never commit it.\n*\n"


def default_path(cache_dir: Path) -> Path:
    """Where results go without `--results`: the cache folder, beside the
    check cache (as pytest keeps its last failures in `.pytest_cache`)."""
    return cache_dir / "verify" / FILE_NAME


def result_key(payload: dict[str, Any]) -> str:
    """The identity of one verification: what the worker is sent (file,
    function, both sources, options) plus the version that verifies it."""
    text = json.dumps(
        {"tfrewrite": tfrewrite.__version__, "request": payload}, sort_keys=True, default=str
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_results(path: Path) -> dict[str, dict[str, Any]]:
    """key -> result of every whole line of the file (the last one of a key
    wins); missing file: nothing. Lines that do not parse are skipped."""
    return {key: entry["result"] for key, entry in _read_entries(path).items()}


def _read_entries(path: Path) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    try:
        data = path.read_bytes()
    except OSError:
        return found
    for line in data.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:  # torn by a kill mid-write, or not ours
            continue
        if (
            isinstance(entry, dict)
            and isinstance(entry.get("key"), str)
            and isinstance(entry.get("result"), dict)
            and isinstance(entry["result"].get("verdict"), str)
        ):
            found[entry["key"]] = entry
    return found


class ResultsFile:
    """The results of one run, streamed to `path` as they finish."""

    def __init__(self, path: Path, cache_root: Path | None = None) -> None:
        """`cache_root`: the cache folder the file is in by default, given a
        `.gitignore` when this creates it (as the check cache does)."""
        self.path = path
        self.cache_root = cache_root
        self._stream: IO[bytes] | None = None

    def start(self, resume: bool, keys: set[str] | None = None) -> dict[str, dict[str, Any]]:
        """Open the file for this run. Without `resume` it starts empty. With
        it, the reusable results whose key is in `keys` (all, if None) are
        kept (returned and rewritten first, so the file stays one run's
        results, and a torn line is dropped) and the run appends to them."""
        kept: dict[str, dict[str, Any]] = {}
        if resume:
            kept = {
                key: entry
                for key, entry in _read_entries(self.path).items()
                if entry["result"]["verdict"] in REUSABLE and (keys is None or key in keys)
            }
        self._create_folder()
        # Rewritten by replacing: an interruption here leaves the old file whole.
        temp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        with open(temp, "wb") as out:
            for entry in kept.values():
                out.write((json.dumps(entry, default=str) + "\n").encode("utf-8"))
        os.replace(temp, self.path)
        self._stream = open(self.path, "ab")  # noqa: SIM115 - open for the whole run
        return {key: entry["result"] for key, entry in kept.items()}

    def _create_folder(self) -> None:
        root = self.cache_root
        fresh_root = root is not None and root in self.path.parents and not root.exists()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if fresh_root and root is not None:
            (root / ".gitignore").write_text(_GITIGNORE, encoding="utf-8")

    def add(self, key: str, result: dict[str, Any], path: str | None = None) -> None:
        """Append one result: one whole line, flushed to the system at once."""
        assert self._stream is not None, "start() first"
        self._stream.write(_line(key, result, path))
        self._stream.flush()

    def close(self) -> None:
        if self._stream is not None:
            self._stream.close()
            self._stream = None


def _line(key: str, result: dict[str, Any], path: str | None = None) -> bytes:
    entry = {
        "key": key,
        "function": result.get("function"),
        "path": path or result.get("path"),
        "result": result,
    }
    return (json.dumps(entry, default=str) + "\n").encode("utf-8")
