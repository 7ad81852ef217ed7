"""Worker processes: start them, feed them requests, survive their failures.

Each worker runs `tfrewrite.verify.worker` (any interpreter with
TensorFlow; our `src` folder is put on its `PYTHONPATH`), which imports
TensorFlow once and then verifies function after function, all on one
Keras: a request whose code is written for the other Keras (`legacy_keras`)
gets its slot's worker replaced by one started for it. A request that
does not answer within the timeout gets its worker killed and replaced; a
worker that dies is reported with the tail of its error output. Either way
the run continues with the next function (the function a dead worker was
running gets one more try: `scheduler.run_all`). Interrupted, the run kills
its workers before it stops; a worker whose parent is gone exits by itself.
"""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tfrewrite
from tfrewrite.verify import legacy_keras
from tfrewrite.verify.scheduler import Finished, Timeout, run_all

INSTALL_HINT = "pip install 'tfrewrite[verify]'"
STARTUP_TIMEOUT = 180.0
SCRATCH_ENV = "TFREWRITE_VERIFY_SCRATCH"  # read by `sandbox`
# How a worker starts. Not `python -m`, which puts the working directory (the
# user's project) first on `sys.path`, where a top-level `random/` or
# `types.py` would replace the standard library's module under TensorFlow:
# `-c` puts an empty entry there instead, dropped before anything is imported.
# (The project's folders reach `sys.path` later, for its own imports only:
# `project_imports`.)
WORKER_START = (
    "import sys\n"
    "if sys.path and sys.path[0] == '':\n"
    "    del sys.path[0]\n"
    "from tfrewrite.verify.worker import main\n"
    "sys.exit(main())\n"
)


class EnvironmentProblem(Exception):
    """Verification cannot run at all (no TensorFlow, bad interpreter)."""


def _source_root() -> str:
    return str(Path(tfrewrite.__file__).resolve().parent.parent)


# TensorFlow's and absl's start-up notes on standard error (what the build
# supports, that no GPU is there), not its warnings of what went wrong.
_STARTUP_NOTE = re.compile(
    r"^(?:WARNING: All log messages before absl"
    r"|[IW]\d{4} [\d:.]+ +\d+ (?:port|cudart_stub|cuda_\w+|cpu_feature_guard)\.cc:\d+\])"
)


def _exit_description(code: int | None) -> str:
    """`exit code 1`, or the signal that ended the worker: SIGABRT is a
    native check failing (an op given inputs it cannot take), SIGKILL most
    often the memory running out."""
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            return f"exit code {code}"
        why = {
            "SIGABRT": ": a native check in TensorFlow failed, often an op given inputs it "
            "cannot take",
            "SIGKILL": ": most often the memory ran out",
            "SIGSEGV": ": a crash in native code",
        }.get(name, "")
        return f"{name}{why}"
    return f"exit code {code}"


@dataclass
class WorkerFailure:
    message: str
    lost: bool = False  # the worker died (not killed on a timeout): worth another try


class Worker:
    """One worker process and the thread that reads its answers. `legacy`:
    it runs with TF_USE_LEGACY_KERAS (Keras 2, `tf_keras`), without it
    (False), or as the environment says (None): see `legacy_keras`."""

    def __init__(self, python: str, legacy: bool | None = None) -> None:
        env = dict(os.environ)
        legacy_keras.set_environment(env, legacy)
        self.legacy = legacy_keras.flag_set(env)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (_source_root(), env.get("PYTHONPATH")) if p)
        env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        env["PYTHONUNBUFFERED"] = "1"
        # The folders the worker runs user code in (see `sandbox`) live here,
        # removed with the worker even when it is killed mid-request.
        self.scratch = tempfile.mkdtemp(prefix="tfrewrite-verify-worker-")
        env[SCRATCH_ENV] = self.scratch
        self.log = tempfile.TemporaryFile(mode="w+b")
        try:
            self.process = subprocess.Popen(
                [python, "-c", WORKER_START],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self.log,
                env=env,
                text=True,
                encoding="utf-8",
            )
        except OSError as err:
            shutil.rmtree(self.scratch, ignore_errors=True)
            raise EnvironmentProblem(
                f"cannot run the interpreter {python!r}: {err.strerror}"
            ) from err
        self.answers: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.next_id = 0
        self.info: dict[str, Any] = {}

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.answers.put(line)
        self.answers.put(None)

    def log_tail(self, limit: int = 2000) -> str:
        """The end of what the worker wrote to standard error, without
        TensorFlow's start-up notes (`I0000 ... oneDNN custom operations`),
        which say nothing of why it stopped."""
        self.log.flush()
        self.log.seek(0)
        text = self.log.read().decode("utf-8", "replace")
        lines = [line for line in text.splitlines() if not _STARTUP_NOTE.match(line)]
        return "\n".join(lines)[-limit:].strip()

    def wait_ready(self) -> None:
        try:
            line = self.answers.get(timeout=STARTUP_TIMEOUT)
        except queue.Empty:
            self.kill()
            raise EnvironmentProblem(
                f"the verification worker did not start within {STARTUP_TIMEOUT:.0f} s"
            ) from None
        if line is None:
            tail = self.log_tail()
            if "No module named tfrewrite" in tail or "No module named 'tfrewrite'" in tail:
                raise EnvironmentProblem(f"the worker interpreter cannot import tfrewrite:\n{tail}")
            raise EnvironmentProblem(f"the verification worker exited at start:\n{tail}")
        data = json.loads(line)
        if not data.get("ready"):
            self.kill()
            raise EnvironmentProblem(
                data.get("error") or f"TensorFlow is not available; {INSTALL_HINT}"
            )
        self.info = data

    def request(
        self, payload: dict[str, Any], timeout: float | None
    ) -> dict[str, Any] | WorkerFailure:
        self.next_id += 1
        message = {"id": self.next_id, "request": payload}
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(json.dumps(message) + "\n")
            self.process.stdin.flush()
        except OSError:
            return WorkerFailure(f"the worker died:\n{self.log_tail()}", lost=True)
        try:
            line = self.answers.get(timeout=timeout)
        except queue.Empty:
            self.kill()
            return WorkerFailure(f"timed out after {timeout:g} s (the worker was killed)")
        if line is None:
            self.process.wait()
            return WorkerFailure(
                f"the worker died ({_exit_description(self.process.returncode)}):\n"
                f"{self.log_tail()}",
                lost=True,
            )
        return json.loads(line)["result"]

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        shutil.rmtree(self.scratch, ignore_errors=True)

    def close(self) -> None:
        if self.process.poll() is None and self.process.stdin is not None:
            try:
                self.process.stdin.close()
                self.process.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self.kill()
        shutil.rmtree(self.scratch, ignore_errors=True)
        self.log.close()


class LocalPool:
    """`jobs` worker processes on this machine, behind the `Scheduler`
    interface: a thread per worker takes requests from one queue and puts
    what finished on another. A dead worker is replaced before its thread's
    next request; the request it was running comes back as lost."""

    def __init__(self, jobs: int, python: str | None = None) -> None:
        self.slots = max(1, jobs)
        self.description = f"{self.slots} local worker{'s' if self.slots != 1 else ''}"
        self._python = python or sys.executable
        self._todo: queue.Queue[tuple[int, dict[str, Any], float | None] | None] = queue.Queue()
        self._done: queue.Queue[Finished | EnvironmentProblem] = queue.Queue()
        self._current: list[Worker | None] = [None] * self.slots
        self._problems: list[EnvironmentProblem] = []
        # What the first worker said of the interpreter (`worker.prepare`).
        self._info: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._live = self.slots
        self._closing = False
        self._threads = [
            threading.Thread(target=self._serve, args=(slot,), daemon=True)
            for slot in range(self.slots)
        ]
        for t in self._threads:
            t.start()

    def __enter__(self) -> LocalPool:
        return self

    def __exit__(self, kind: object, *_: object) -> None:
        self.close(abort=kind is not None)

    def _worker_for(
        self, slot: int, worker: Worker | None, payload: dict[str, Any]
    ) -> tuple[Worker | None, legacy_keras.Placement]:
        """A live worker on the Keras `payload`'s code is written for: the
        slot's own, or one started in its place (the first worker of the pool
        says whether `tf_keras` is there: until then it is assumed)."""
        while True:
            placement = legacy_keras.place(payload, self._info)
            if placement.result is not None:
                return worker, placement
            if worker is not None and worker.alive and worker.legacy == placement.legacy:
                return worker, placement
            if worker is not None:
                worker.close()
            worker = self._start(slot, placement.legacy)
            if worker is None:
                return None, placement
            known, self._info = bool(self._info), worker.info
            if known:  # started knowing the interpreter: it fits
                return worker, placement

    def _start(self, slot: int, legacy: bool | None = None) -> Worker | None:
        try:
            worker = self._current[slot] = Worker(self._python, legacy)
        except EnvironmentProblem as err:
            self._problems.append(err)
            return None
        try:
            worker.wait_ready()
        except EnvironmentProblem as err:
            self._problems.append(err)
            worker.close()
            return None
        return worker

    def _serve(self, slot: int) -> None:
        worker: Worker | None = None
        try:
            while True:
                item = self._todo.get()
                if item is None:
                    break
                key, payload, limit = item
                worker, placement = self._worker_for(slot, worker, payload)
                if placement.result is not None:  # the Keras it needs is missing
                    self._done.put(Finished(key, result=placement.result))
                    continue
                if worker is None:
                    self._todo.put(item)  # for a worker that can still run it
                    break
                answer = worker.request(payload, limit)
                if isinstance(answer, WorkerFailure):
                    finished = (
                        Finished(key, lost=answer.message)
                        if answer.lost
                        else Finished(key, result=_failure(payload, answer.message))
                    )
                else:
                    finished = Finished(key, result=placement.annotate(answer))
                self._done.put(finished)
        finally:
            if worker is not None:
                worker.close()
            with self._lock:
                self._live -= 1
                last = self._live == 0
            if last and not self._closing:
                self._done.put(
                    self._problems[0]
                    if self._problems
                    else EnvironmentProblem("verification workers stopped early")
                )

    def submit(self, key: int, payload: dict[str, Any], timeout: float | None) -> None:
        self._todo.put((key, payload, timeout))

    def next_finished(self) -> Finished:
        while True:
            try:  # in slices: Ctrl-C is seen between them
                item = self._done.get(timeout=0.5)
            except queue.Empty:
                continue
            if isinstance(item, EnvironmentProblem):
                raise item
            return item

    def close(self, abort: bool = False) -> None:
        self._closing = True
        if abort:  # interrupted: no worker may go on running the user's code
            while True:
                try:
                    self._todo.get_nowait()
                except queue.Empty:
                    break
            for worker in list(self._current):
                if worker is not None:
                    worker.kill()
        for _ in self._threads:
            self._todo.put(None)
        for t in self._threads:
            t.join(timeout=None if not abort else 15)


def _failure(payload: dict[str, Any], message: str) -> dict[str, Any]:
    return {"function": payload["qualname"], "verdict": "error", "error": message}


def run_requests(
    payloads: list[dict[str, Any]],
    jobs: int,
    python: str | None = None,
    timeout: Timeout = None,
    on_result: Callable[[int, dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """Verify every payload on up to `jobs` local workers; results in payload
    order. `timeout`: seconds per payload, counted from when its request is
    sent (a worker's start is not counted), or a function giving each
    payload's. A payload whose worker dies under it runs once more.

    Raises `EnvironmentProblem` when no worker can start."""
    if not payloads:
        return []
    with LocalPool(min(jobs, len(payloads)), python) as pool:
        return run_all(pool, payloads, timeout, on_result)
