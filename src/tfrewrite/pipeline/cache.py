"""The persistent cache in `.tfrewrite_cache/`: a re-run of `check` on an
unchanged tree costs reading and hashing the files, nothing more.

What a file's findings depend on is its content and everything the project
tells about it: pass 1 indexes every file (a pure function of its path and
content), the project facts derive from all indexes (which functions run
traced, which loss another module compiles), and pass 2 runs the rules on
one file with those facts (the `FileJob`). So the cache keeps:

* the manifest of the last run with these options: every file's content
  hash and every file's result. When no file was added, removed or changed,
  the results are the answer: nothing is indexed, parsed or derived.
* pass-1 indexes, by path and content hash: after a change, only changed
  files are indexed again; the project facts are derived again from all of
  them (a loss compiled in another module changes this file's findings).
* pass-2 results, by a fingerprint of what the file's `FileJob` holds: its
  content hash (which determines its index), the cross-module facts the
  project recorded in its index, the traced functions the project derived
  for it, and the run options: a file is checked again exactly when
  something it depends on changed.

Everything is keyed by tfrewrite's version and build too (one folder per
version; the build is a stamp of the package's modules, so a cache written by
other tfrewrite code is never read). Only `check` reads and writes it: `fix`
changes files and always runs in full.

The files are JSON, never pickle: the cache folder is as writable as the
project, and a pickle planted there would run code when `check` loaded it.
Values are converted by `json_codec`, which builds only the dataclasses an
index or a result declares, field by field, as their type hints say. Each
file is one object with an explicit, versioned schema:

* `indexes.json`: `{"format": "tfrewrite-cache", "schema": 1, "kind":
  "indexes", "entries": {key: "deferred" | ModuleIndex}}`
* `run-<options>.json`: `{"format": ..., "schema": 1, "kind": "run",
  "hashes": {path: hash}, "results": {job key: FileResult}, "files":
  [FileResult]}`

A file or an entry that is not that — corrupt, truncated, another schema,
another program's — is a miss: ignored and rebuilt, never an error. Writes
are atomic (temporary file and rename), so two runs at once cannot leave a
half-written cache.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tfrewrite import __version__
from tfrewrite.findings import FileResult
from tfrewrite.workspace.json_codec import Codec, DecodeError, EncodeError
from tfrewrite.workspace.sources import read_file_bytes

CACHE_DIR_NAME = ".tfrewrite_cache"
DEFERRED = "deferred"  # pass 1 put the file aside: its bytes name no TensorFlow
# The fields of a `ModuleIndex` that the project facts fill in from other
# modules; every other field is a function of the file's path and content
# (a test fails when `compute_facts` writes anywhere else).
PROJECT_FACT_FIELDS = (
    "looped_functions",
    "matched_by_name",
    "loop_method_names",
    "loss_decorator_options",
    "custom_schedules",
    "rebound_module_names",
    "held_state",
    "held_classes",
    "held_models",
    "parameter_models",
    "class_training_positions",
    "callback_model_writes",
    "called_classes",
    "callee_shape_params",
    "callee_averaged_params",
    "callee_equal_batches",
    "callee_short_batches",
    "callee_tensor_results",
    "param_classes",
    "param_class_types",
    "plain_effect_calls",
    "built_by_running_call",
    "star_names",
    "unseen_star_imports",
    "rebound_imports",
    "weighted_classes",
    "host_reads_reached",
    "per_call_tape_loops",
)
_GITIGNORE = "# Created by tfrewrite: the cache is local, never commit it.\n*\n"
FORMAT = "tfrewrite-cache"
# Raise when the layout of a cache file changes (the codec follows the
# dataclasses by itself: their changes change the build stamp).
SCHEMA_VERSION = 2


@functools.cache
def _results_codec() -> Codec | None:
    """Results only: a warm run answered from the manifest never imports
    the analysis. None when a field has no JSON form (the round-trip tests
    fail then): the run goes on without a cache."""
    try:
        return Codec(FileResult)
    except EncodeError:
        return None


@functools.cache
def _index_codec() -> tuple[Codec, type] | None:
    from tfrewrite.facts.index import ModuleIndex

    try:
        return Codec(ModuleIndex), ModuleIndex
    except EncodeError:
        return None


def _code_stamp() -> str:
    """Which build of tfrewrite wrote a cache: its version alone does not
    change while tfrewrite is developed from a clone, so the size and time of
    every module of the package are part of the key (a few dozen `stat`s)."""
    package = package_folder()
    stamps = []
    for path in sorted(package.rglob("*.py")):
        info = path.stat()
        stamps.append((str(path.relative_to(package)), info.st_size, info.st_mtime_ns))
    return fingerprint(stamps)[:12]


def package_folder() -> Path:
    """The folder of the `tfrewrite` package, whose modules the build stamp
    covers (all of them: a rule or a fact changed is a new build)."""
    return Path(__file__).resolve().parent.parent


def content_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def fingerprint(value: Any) -> str:
    """A hash of `value` that is the same in every process: sets and dicts
    are ordered first (string hashing is randomised per process, so pickles
    of sets differ between runs)."""
    return hashlib.blake2b(repr(_canonical(value)).encode(), digest_size=16).hexdigest()


# Values that stand for themselves: most of what a fingerprint walks.
_ATOMS = (str, int, float, type(None))


def _canonical(value: Any) -> Any:
    if type(value) in _ATOMS:  # not `isinstance`: an `Enum` on `str` is no atom
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return (
            type(value).__name__,
            tuple((f.name, _canonical(getattr(value, f.name))) for f in dataclasses.fields(value)),
        )
    if isinstance(value, dict):
        items = ((repr(_canonical(k)), _canonical(v)) for k, v in value.items())
        return ("dict", tuple(sorted(items, key=lambda item: item[0])))
    if isinstance(value, (set, frozenset)):
        return ("set", tuple(sorted(repr(_canonical(v)) for v in value)))
    if isinstance(value, (list, tuple)):
        return tuple(_canonical(v) for v in value)
    if isinstance(value, enum.Enum):
        return value.value
    return value


class Cache:
    """One project's cache for one set of run options."""

    def __init__(self, directory: Path, options: Any) -> None:
        self.directory = directory
        self.root = directory / f"v{__version__}-{_code_stamp()}"
        self.options_key = fingerprint(options)
        self.manifest: dict[str, Any] = self._load(self._manifest_path, "run")
        self._indexes: dict[str, Any] | None = None
        self._fresh_indexes: dict[str, Any] = {}
        self.hashes: dict[str, str] = {}
        # Files named on the command line: parsed whatever they import, so a
        # run that names a file is not the run that found it in a folder.
        self.explicit: list[str] = []
        self._options_fingerprints: dict[Any, str] = {}

    @property
    def _manifest_path(self) -> Path:
        return self.root / f"run-{self.options_key}.json"

    @property
    def _indexes_path(self) -> Path:
        return self.root / "indexes.json"

    # -- reading ----------------------------------------------------------------------
    def hash_files(self, paths: Iterable[str], explicit: Iterable[str] = ()) -> None:
        """Read and hash the files of this run (unreadable ones are left to
        the run to report); `explicit`: those named on the command line."""
        self.explicit = sorted(explicit)
        for path in paths:
            try:
                self.hashes[path] = content_hash(read_file_bytes(path))
            except OSError:
                continue

    def unchanged_results(self) -> list[Any] | None:
        """The previous results when no file changed since the last run with
        these options; None otherwise."""
        if not self.manifest or self.manifest.get("hashes") != self.hashes:
            return None
        if self.manifest.get("explicit", []) != self.explicit:
            return None
        codec = _results_codec()
        try:
            return codec.decode(self.manifest.get("files"), list[FileResult]) if codec else None
        except DecodeError:
            return None  # another program's file under our name: rebuilt

    def _index_key(self, path: str, root: str, prefilter: bool) -> str | None:
        digest = self.hashes.get(path)
        return None if digest is None else fingerprint((path, root, digest, prefilter))

    def index(self, path: str, root: str, prefilter: bool) -> Any | None:
        """The cached pass-1 outcome for this file's current content: its
        index, or `DEFERRED`."""
        if self._indexes is None:
            entries = self._load(self._indexes_path, "indexes").get("entries")
            self._indexes = entries if isinstance(entries, dict) else {}
        key = self._index_key(path, root, prefilter)
        stored = self._indexes.get(key) if key else None
        if stored is None:
            return None
        if stored == DEFERRED:
            return DEFERRED
        if _index_codec() is None:
            return None
        codec, module_index = _index_codec()
        try:
            index = codec.decode(stored, module_index)
        except DecodeError:
            return None  # a broken or foreign entry is recomputed
        # An entry is keyed by its path: one stored under another is not trusted.
        return index if index.path == path else None

    def remember_index(self, path: str, root: str, prefilter: bool, outcome: Any) -> None:
        """Keep a pass-1 outcome, encoded now: the project facts later record
        cross-module facts in the index itself."""
        key = self._index_key(path, root, prefilter)
        if key is None:
            return
        if outcome is DEFERRED:
            self._fresh_indexes[key] = DEFERRED
            return
        if _index_codec() is None:
            return
        codec, module_index = _index_codec()
        try:
            self._fresh_indexes[key] = codec.encode(outcome, module_index)
        except EncodeError:
            return  # a value the cache cannot hold: indexed again next time

    def result(self, job_key: str) -> FileResult | None:
        results = self.manifest.get("results")
        stored = results.get(job_key) if isinstance(results, dict) else None
        codec = _results_codec()
        if stored is None or codec is None:
            return None
        try:
            return codec.decode(stored, FileResult)
        except DecodeError:
            return None

    def job_key(self, job: Any) -> str | None:
        """What a file's findings depend on: its content (which determines its
        index), the facts other modules recorded in its index, the traced
        functions the project derived for it, and the run options."""
        digest = self.hashes.get(job.file.path)
        if digest is None:
            return None
        recorded = {name: getattr(job.index, name) for name in PROJECT_FACT_FIELDS}
        options = self._options_fingerprints.get(job.options)
        if options is None:  # every job of a run has the same options: hashed once
            options = self._options_fingerprints[job.options] = fingerprint(job.options)
        return fingerprint((job.file.path, digest, recorded, job.traced, options))

    # -- writing ----------------------------------------------------------------------
    def save(self, results: dict[str, Any], files: list[Any]) -> None:
        """Store this run: the pass-1 outcomes it computed, pass-2 results by
        job key, and the manifest that answers an unchanged re-run."""
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            gitignore = self.directory / ".gitignore"
            if not gitignore.exists():
                gitignore.write_text(_GITIGNORE, encoding="utf-8")
            if self._fresh_indexes:
                stored = self._indexes if self._indexes is not None else {}
                if len(stored) > 50_000:  # old contents pile up: start again
                    stored = {}
                self._write(
                    self._indexes_path, "indexes", {"entries": {**stored, **self._fresh_indexes}}
                )
            codec = _results_codec()
            if codec is None:
                return
            self._write(
                self._manifest_path,
                "run",
                {
                    "hashes": self.hashes,
                    "explicit": self.explicit,
                    "results": codec.encode(results, dict[str, FileResult]),
                    "files": codec.encode(files, list[FileResult]),
                },
            )
        except (OSError, EncodeError):
            return  # a read-only checkout, a value the cache cannot hold: no cache

    @staticmethod
    def _load(path: Path, kind: str) -> dict[str, Any]:
        """A cache file's object; empty when it is missing, unreadable, not
        JSON, or not a tfrewrite cache file of this schema and kind."""
        try:
            with open(path, "rb") as handle:
                value = json.load(handle)
        except (OSError, ValueError, RecursionError):  # ValueError: not JSON, not UTF-8
            return {}
        if (
            not isinstance(value, dict)
            or value.get("format") != FORMAT
            or value.get("schema") != SCHEMA_VERSION
            or value.get("kind") != kind
        ):
            return {}
        return value

    @staticmethod
    def _write(path: Path, kind: str, content: dict[str, Any]) -> None:
        value = {"format": FORMAT, "schema": SCHEMA_VERSION, "kind": kind, **content}
        fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
        try:
            # `dumps`, not `dump`: only `dumps` runs the C encoder.
            data = json.dumps(value, separators=(",", ":")).encode("ascii")
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise


def clean(directory: Path) -> bool:
    """Remove a cache folder; False when there was none."""
    import shutil

    if not (directory / ".gitignore").exists() and not directory.is_dir():
        return False
    shutil.rmtree(directory, ignore_errors=True)
    return True
