"""Worker processes: start them, feed them requests, survive their failures.

Each worker runs `tfrewrite.verify.worker` (any interpreter with
TensorFlow; our `src` folder is put on its `PYTHONPATH`), which imports
TensorFlow once and then verifies function after function. A request that
does not answer within the timeout gets its worker killed and replaced; a
worker that dies is reported with the tail of its error output. Either way
the run continues with the next function. Interrupted, the run kills its
workers before it stops; a worker whose parent is gone exits by itself.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tfrewrite

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


@dataclass
class WorkerFailure:
    message: str


class Worker:
    """One worker process and the thread that reads its answers."""

    def __init__(self, python: str) -> None:
        env = dict(os.environ)
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
        self.log.flush()
        self.log.seek(0)
        text = self.log.read().decode("utf-8", "replace")
        return text[-limit:].strip()

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
            return WorkerFailure(f"the worker died:\n{self.log_tail()}")
        try:
            line = self.answers.get(timeout=timeout)
        except queue.Empty:
            self.kill()
            return WorkerFailure(f"timed out after {timeout:g} s (the worker was killed)")
        if line is None:
            self.process.wait()
            return WorkerFailure(
                f"the worker died (exit code {self.process.returncode}):\n{self.log_tail()}"
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


def run_requests(
    payloads: list[dict[str, Any]],
    jobs: int,
    python: str | None = None,
    timeout: float | Callable[[dict[str, Any]], float | None] | None = None,
    on_result: Callable[[int, dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """Verify every payload on up to `jobs` workers; results in payload order.
    `timeout`: seconds per payload, counted from when its request is sent
    (a worker's start is not counted), or a function giving each payload's.

    Raises `EnvironmentProblem` when no worker can start."""
    python = python or sys.executable
    results: list[dict[str, Any] | None] = [None] * len(payloads)
    if not payloads:
        return []
    todo: queue.Queue[int] = queue.Queue()
    for i in range(len(payloads)):
        todo.put(i)
    problems: list[EnvironmentProblem] = []
    workers = [Worker(python) for _ in range(max(1, min(jobs, len(payloads))))]
    current = list(workers)  # each thread's worker now (a dead one is replaced)

    def serve(worker: Worker) -> None:
        slot = workers.index(worker)
        try:
            worker.wait_ready()
        except EnvironmentProblem as err:
            problems.append(err)
            worker.close()
            return
        while True:
            try:
                i = todo.get_nowait()
            except queue.Empty:
                break
            if not worker.alive:
                worker.close()
                worker = current[slot] = Worker(python)
                try:
                    worker.wait_ready()
                except EnvironmentProblem as err:
                    problems.append(err)
                    todo.put(i)
                    worker.close()
                    return
            limit = timeout(payloads[i]) if callable(timeout) else timeout
            answer = worker.request(payloads[i], limit)
            if isinstance(answer, WorkerFailure):
                answer = {
                    "function": payloads[i]["qualname"],
                    "verdict": "error",
                    "error": answer.message,
                }
            results[i] = answer
            if on_result is not None:
                on_result(i, answer)
        worker.close()

    threads = [threading.Thread(target=serve, args=(w,), daemon=True) for w in workers]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    except BaseException:  # interrupted: no worker may go on running the user's code
        for worker in current:
            worker.kill()
        raise
    if any(r is None for r in results):
        raise problems[0] if problems else EnvironmentProblem("verification workers stopped early")
    return [r for r in results if r is not None]
