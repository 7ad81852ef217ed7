"""Verification on a Ray cluster: `tfrewrite verify --ray [ADDRESS]`.

The `Scheduler` of `scheduler` on Ray actors. Each actor is a long-lived
worker (`ResidentWorker`) that imports TensorFlow once and answers requests
with the same function the local worker processes use
(`worker.answer`: the sandbox, the scratch folder, the checks), so a target
verifies the same on a laptop and on a cluster. An actor runs on one Keras
(`legacy_keras`): when a request needs the other, an idle actor is replaced
by one started for it.

Without an address (`--ray` alone, and no `RAY_ADDRESS` in the environment)
a local Ray instance is started for the run (the actors read the project
where it is). With one (`--ray-address auto`, `host:port`,
`ray://host:10001`) the project is shipped with Ray's runtime environment:
its folder as the working directory (without version-control folders,
caches, virtual environments and files over `BIG_FILE`; Ray also honours the
project's `.gitignore` and a `.rayignore`) and tfrewrite's own package as a
module, so a cluster needs only TensorFlow and the project's requirements.
Paths in a request are translated from the project folder here to the
shipped copy there.

An actor that dies (out of memory, a segfault in a native op, a lost node)
loses only the request it was running: it comes back as lost and
`scheduler.run_all` sends it once more, to another actor; a replacement
actor is started. A request over its timeout has its actor killed and
replaced. Ray itself is imported only here, and only when `--ray` is given.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections import deque
from pathlib import Path
from typing import Any

import tfrewrite
from tfrewrite.verify import legacy_keras
from tfrewrite.verify.pool import SCRATCH_ENV, EnvironmentProblem
from tfrewrite.verify.scheduler import Finished

RAY_INSTALL_HINT = "pip install 'tfrewrite[ray]'"
# No address: a Ray instance on this machine, for this run.
LOCAL = "local"
# Seconds to wait for the first actor to import TensorFlow (a cluster may
# have to start a node, or install the runtime environment, first).
STARTUP_TIMEOUT = 300.0
# Longest wait in one `ray.wait`, so that Ctrl-C and timeouts are seen.
POLL_SECONDS = 0.5
# Never shipped: version control, caches, virtual environments, build output.
SHIP_EXCLUDES = (
    ".git",
    ".hg",
    ".svn",
    "__pycache__",
    "*.pyc",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".tfrewrite_cache",
    ".ipynb_checkpoints",
    "node_modules",
    "build",
    "dist",
    "*.egg-info",
)
# Files at least this large stay home (datasets, checkpoints): Ray caps what
# one upload may hold, and verification synthesises its inputs.
BIG_FILE = 50 * 2**20


def import_ray() -> Any:
    try:
        import ray
    except ImportError as err:
        raise EnvironmentProblem(
            f"--ray needs Ray, which is not installed; install it with {RAY_INSTALL_HINT}"
        ) from err
    return ray


class ResidentWorker:
    """The Ray actor: one worker that imports TensorFlow once and verifies
    request after request, as a local worker process does; with `legacy`,
    on Keras 2 (`tf_keras`: see `legacy_keras`), else on Keras 3."""

    def __init__(self, legacy: bool | None = None) -> None:
        # Before TensorFlow is imported: it reads the flag once.
        legacy_keras.set_environment(os.environ, legacy)
        # As in a worker process: user prints go to standard error (Ray's log
        # for it), never where a driver could mistake them for its own output.
        sys.stdout.flush()
        os.dup2(2, 1)
        sys.stdout = sys.stderr
        sys.dont_write_bytecode = True  # importing the project must not add __pycache__ to it
        # The folders the user's code runs in (`sandbox`) live here.
        self.scratch = tempfile.mkdtemp(prefix="tfrewrite-verify-worker-")
        os.environ[SCRATCH_ENV] = self.scratch
        # The working directory (the shipped project) must not shadow the
        # standard library under TensorFlow's imports; the project reaches
        # `sys.path` with each request, for its own imports only.
        self.home = os.getcwd()
        sys.path[:] = [p for p in sys.path if p not in ("", ".", self.home)]
        from tfrewrite.verify import worker

        self._worker = worker
        self.info = worker.prepare()
        self.info["node"] = os.uname().nodename

    def ready(self) -> dict[str, Any]:
        return self.info

    def answer(self, payload: dict[str, Any], shipped_from: str | None) -> dict[str, Any]:
        """Verify one request; `shipped_from`: the project folder on the
        machine that sent it, when the project was shipped to this one."""
        if shipped_from is not None:
            payload = relocate(payload, shipped_from, self.home)
        return self._worker.answer(payload)


def _moved(path: str, old: str, new: str) -> str:
    if path == old:
        return new
    if path.startswith(old.rstrip(os.sep) + os.sep):
        return new.rstrip(os.sep) + os.sep + path[len(old.rstrip(os.sep)) + 1 :]
    return path


def relocate(payload: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    """The request with its paths under `old` (the project folder where it
    was built) moved under `new` (the shipped copy)."""
    out = dict(payload)
    if isinstance(out.get("path"), str):
        out["path"] = _moved(out["path"], old, new)
    if isinstance(out.get("caller"), dict) and isinstance(out["caller"].get("path"), str):
        out["caller"] = {**out["caller"], "path": _moved(out["caller"]["path"], old, new)}
    out["sys_path"] = [_moved(p, old, new) for p in out.get("sys_path") or []]
    return out


def absolute(payload: dict[str, Any]) -> dict[str, Any]:
    """The request with its file paths absolute: an actor does not run in
    the folder `verify` was started from."""
    out = dict(payload)
    path = out.get("path")
    if isinstance(path, str) and not path.startswith("<"):
        out["path"] = os.path.abspath(path)
    caller = out.get("caller")
    if isinstance(caller, dict) and caller.get("path"):
        out["caller"] = {**caller, "path": os.path.abspath(caller["path"])}
    return out


def big_files(root: Path, limit: int = BIG_FILE) -> list[str]:
    """Files under `root` of at least `limit` bytes, relative, outside the
    folders never shipped anyway."""
    skip = {p for p in SHIP_EXCLUDES if "*" not in p}
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in skip and not d.endswith(".egg-info")]
        for name in files:
            path = os.path.join(folder, name)
            try:
                if os.path.getsize(path) >= limit:
                    found.append("/" + os.path.relpath(path, root).replace(os.sep, "/"))
            except OSError:
                continue
    return found


def runtime_env(root: Path, ship: bool) -> dict[str, Any]:
    """Ray's runtime environment for the actors: always quiet TensorFlow
    logs; when `ship`, the project folder and tfrewrite's package too."""
    env: dict[str, Any] = {"env_vars": {"TF_CPP_MIN_LOG_LEVEL": "2"}}
    if ship:
        env["working_dir"] = str(root)
        env["py_modules"] = [str(Path(tfrewrite.__file__).resolve().parent)]
        env["excludes"] = [*SHIP_EXCLUDES, *big_files(root)]
    return env


def _reason(err: BaseException) -> str:
    """A dead actor's story in one paragraph (Ray's messages run long)."""
    text = " ".join(str(err).split())
    return text if len(text) <= 600 else text[:600] + " ..."


class RayScheduler:
    """Requests on Ray actors, one CPU each; the `Scheduler` interface."""

    def __init__(self, address: str | None, root: Path, jobs: int | None, requests: int) -> None:
        ray = self._ray = import_ray()
        self._started = False
        # Ray's driver prints the cluster's error messages (a worker that
        # died, ...) to `sys.stdout`, where the report goes: they go to
        # standard error while the run lasts.
        self._stdout = sys.stdout
        sys.stdout = sys.stderr
        # As Ray itself does, an unnamed cluster is the one RAY_ADDRESS names.
        address = os.environ.get("RAY_ADDRESS") or None if address in (None, LOCAL) else address
        ship = False
        if not ray.is_initialized():
            # The project is shipped with the job (Ray uploads folders only
            # for a whole job): to a cluster elsewhere, never to the
            # instance started here, which reads the project in place.
            ship = address is not None
            options: dict[str, Any] = {"log_to_driver": False}
            if address is None:  # the dashboard is a setting of a new instance only
                options["include_dashboard"] = False
            try:
                ray.init(
                    # "local": a new instance, never one a `ray start` left running.
                    address=address or LOCAL,
                    runtime_env=runtime_env(root.resolve(), ship),
                    **options,
                )
            except Exception as err:  # ConnectionError, a version mismatch, upload limits
                self._restore_stdout()
                where = f"the Ray cluster at {address}" if address else "a local Ray instance"
                cause = str(err.__cause__ or "").strip().splitlines()
                detail = f" ({cause[-1]})" if cause else ""
                too_big = ship and any(w in f"{err}{detail}".lower() for w in ("size", "large"))
                hint = (
                    " (a .rayignore file keeps what verify does not need home)" if too_big else ""
                )
                raise EnvironmentProblem(
                    f"cannot start or reach {where}: {err}{detail}{hint}"
                ) from err
            self._started = True
        # Else the program that called us owns the connection (and its runtime
        # environment): the actors read the project where it is.
        try:
            cpus = int(ray.cluster_resources().get("CPU", 0))
            self._shipped_from = str(root.resolve()) if ship else None
            self.slots = max(1, min(jobs or cpus or 1, requests or 1))
            self.description = f"Ray cluster, {cpus} CPU{'s' if cpus != 1 else ''}"
            self._class = ray.remote(ResidentWorker).options(
                num_cpus=1, max_restarts=0, max_task_retries=0
            )
            self._queue: deque[tuple[int, dict[str, Any], float | None]] = deque()
            self._idle: list[Any] = []
            # ready() reference -> (actor, when it was started)
            self._starting: dict[Any, tuple[Any, float]] = {}
            # answer() reference -> (key, actor, deadline, payload, timeout)
            self._running: dict[Any, tuple[int, Any, float, dict[str, Any], float | None]] = {}
            self._finished: deque[Finished] = deque()
            # Each actor's Keras (by `id`), and each running request's placement.
            self._legacy: dict[int, bool] = {}
            self._placements: dict[int, legacy_keras.Placement] = {}
            self._problems: list[str] = []
            self.info: dict[str, Any] = {}
            for _ in range(self.slots):
                self._spawn(legacy_keras.flag_set())
        except BaseException:
            self.close(abort=True)
            raise

    def __enter__(self) -> RayScheduler:
        return self

    def __exit__(self, kind: object, *_: object) -> None:
        self.close(abort=kind is not None)

    def _spawn(self, legacy: bool) -> None:
        actor = self._class.remote(legacy)
        self._legacy[id(actor)] = legacy
        self._starting[actor.ready.remote()] = (actor, time.monotonic())

    def submit(self, key: int, payload: dict[str, Any], timeout: float | None) -> None:
        self._queue.append((key, absolute(payload), timeout))
        self._dispatch()

    def _dispatch(self) -> None:
        """Start what can start: each request on an idle actor of the Keras
        its code is written for (`legacy_keras`); one that needs the other
        Keras has an idle actor replaced by one of that Keras."""
        waiting: deque[tuple[int, dict[str, Any], float | None]] = deque()
        while self._queue:
            key, payload, limit = item = self._queue.popleft()
            if not self._idle:
                waiting.append(item)
                continue
            placement = legacy_keras.place(payload, self.info)
            if placement.result is not None:  # the Keras it needs is missing
                self._finished.append(Finished(key, result=placement.result))
                continue
            actor = self._idle_actor(placement.legacy)
            if actor is None:
                waiting.append(item)
                continue
            self._placements[key] = placement
            ref = actor.answer.remote(payload, self._shipped_from)
            deadline = time.monotonic() + limit if limit is not None else float("inf")
            self._running[ref] = (key, actor, deadline, payload, limit)
        self._queue = waiting

    def _idle_actor(self, legacy: bool) -> Any | None:
        """An idle actor on that Keras; else, unless one is starting, an idle
        actor of the other Keras is replaced by one on it (None: wait)."""
        for i, actor in enumerate(self._idle):
            if self._legacy.get(id(actor)) == legacy:
                return self._idle.pop(i)
        starting = any(self._legacy.get(id(a)) == legacy for a, _ in self._starting.values())
        if self._idle and not starting:
            other = self._idle.pop()
            self._legacy.pop(id(other), None)
            self._kill(other)
            self._spawn(legacy)
        return None

    def _kill(self, actor: Any) -> None:
        try:
            self._ray.kill(actor, no_restart=True)
        except Exception:  # already gone with its node
            pass

    def _replace(self, actor: Any) -> None:
        legacy = self._legacy.pop(id(actor), legacy_keras.flag_set())
        self._kill(actor)
        self._spawn(legacy)

    def _started_one(self, ref: Any) -> None:
        ray = self._ray
        actor, _ = self._starting.pop(ref)
        try:
            info = ray.get(ref)
        except ray.exceptions.RayError as err:
            self._legacy.pop(id(actor), None)
            self._problems.append(f"a Ray worker died while starting: {_reason(err)}")
            return
        if not info.get("ready"):
            self._problems.append(
                f"on the Ray cluster: {info.get('error') or 'TensorFlow is not available'}"
            )
            ray.kill(actor, no_restart=True)
            return
        self.info = info
        self._idle.append(actor)

    def _ended(self, ref: Any) -> None:
        ray = self._ray
        key, actor, _, payload, _ = self._running.pop(ref)
        placement = self._placements.pop(key, legacy_keras.Placement())
        try:
            result = placement.annotate(ray.get(ref))
        except (
            ray.exceptions.RayActorError,  # died: a segfault, os._exit, a lost node
            ray.exceptions.WorkerCrashedError,
            ray.exceptions.OutOfMemoryError,  # killed by Ray's memory monitor
        ) as err:
            self._finished.append(Finished(key, lost=_reason(err)))
            self._replace(actor)
            return
        except ray.exceptions.RayError as err:
            result = {"function": payload["qualname"], "verdict": "error", "error": _reason(err)}
        self._finished.append(Finished(key, result=result))
        self._idle.append(actor)

    def _expire(self) -> None:
        now = time.monotonic()
        for ref, (key, actor, deadline, payload, limit) in list(self._running.items()):
            if now >= deadline:
                del self._running[ref]
                self._placements.pop(key, None)
                message = f"timed out after {limit:g} s (the worker was killed)"
                result = {"function": payload["qualname"], "verdict": "error", "error": message}
                self._finished.append(Finished(key, result=result))
                self._replace(actor)

    def next_finished(self) -> Finished:
        ray = self._ray
        while not self._finished:
            if not (self._idle or self._running or self._starting):
                raise EnvironmentProblem(
                    self._problems[0] if self._problems else "no Ray worker is left"
                )
            newest = max((since for _, since in self._starting.values()), default=0.0)
            if not (self._idle or self._running) and time.monotonic() - newest > STARTUP_TIMEOUT:
                raise EnvironmentProblem(
                    f"no Ray worker started within {STARTUP_TIMEOUT:.0f} s "
                    "(has the cluster a free CPU, and TensorFlow?)"
                )
            refs = [*self._running, *self._starting]
            wait = POLL_SECONDS
            if self._running:
                nearest = min(entry[2] for entry in self._running.values())
                wait = max(0.0, min(wait, nearest - time.monotonic()))
            ready, _ = ray.wait(refs, num_returns=1, timeout=wait) if refs else ([], [])
            for ref in ready:
                if ref in self._starting:
                    self._started_one(ref)
                else:
                    self._ended(ref)
            self._expire()
            self._dispatch()
        return self._finished.popleft()

    def close(self, abort: bool = False) -> None:
        ray = self._ray
        actors = [*getattr(self, "_idle", [])]
        actors += [actor for actor, _ in getattr(self, "_starting", {}).values()]
        actors += [entry[1] for entry in getattr(self, "_running", {}).values()]
        for actor in actors:
            try:
                ray.kill(actor, no_restart=True)
            except Exception:  # already gone
                pass
        self._idle, self._starting, self._running = [], {}, {}
        if self._started:
            ray.shutdown()
            self._started = False
        self._restore_stdout()

    def _restore_stdout(self) -> None:
        if sys.stdout is sys.stderr:
            sys.stdout = self._stdout
