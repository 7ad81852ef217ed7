"""Scheduling, the results file and `--resume`, without TensorFlow or Ray:
a scheduler that answers from a table stands in for the workers."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections import deque
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from tfrewrite.verify.command import register
from tfrewrite.verify.progress import ProgressLine
from tfrewrite.verify.ray_cluster import absolute, relocate
from tfrewrite.verify.results_file import ResultsFile, read_results, result_key
from tfrewrite.verify.run import RunOptions, verify_targets
from tfrewrite.verify.scheduler import Finished, estimated_cost, launch_order, run_all
from tfrewrite.verify.settings import VerifySettings
from tfrewrite.verify.targets import Target

LOSS = "import tensorflow as tf\n\n\ndef loss(y_true, y_pred):\n    return {body}\n"


class TableScheduler:
    """Answers each request from `verdicts` (qualname -> verdict); a qualname
    in `deaths` loses its worker that many times first."""

    slots = 1
    description = "a table"

    def __init__(self, verdicts: dict[str, str], deaths: dict[str, int] | None = None) -> None:
        self.verdicts = verdicts
        self.deaths = dict(deaths or {})
        self.queue: deque[tuple[int, dict[str, Any]]] = deque()
        self.started: list[str] = []
        self.closed: bool | None = None

    def submit(self, key: int, payload: dict[str, Any], timeout: float | None) -> None:
        self.queue.append((key, payload))

    def next_finished(self) -> Finished:
        key, payload = self.queue.popleft()
        name = payload["qualname"]
        self.started.append(name)
        if self.deaths.get(name):
            self.deaths[name] -= 1
            return Finished(key, lost=f"{name}'s worker was killed (signal 9)")
        return Finished(key, result={"function": name, "verdict": self.verdicts[name]})

    def close(self, abort: bool = False) -> None:
        self.closed = abort


def _payload(name: str, **extra: Any) -> dict[str, Any]:
    return {"qualname": name, "original_source": "x = 1\n", "rewrite_source": "x = 1\n", **extra}


def test_costliest_targets_start_first() -> None:
    payloads = [
        _payload("small"),
        _payload("loop", loop={"original": [[], 0], "rewrite": [[], 0], "step": "s"}),
        _payload("big", original_source="x = 1\n" * 20_000),
        _payload("harness", harness="verify_harness:build"),
        _payload("small_too"),
    ]
    order = [payloads[i]["qualname"] for i in launch_order(payloads)]
    assert order == ["loop", "harness", "big", "small", "small_too"]
    assert estimated_cost(payloads[1]) > estimated_cost(payloads[0])


def test_a_lost_worker_is_retried_once_then_an_error_with_the_reason() -> None:
    payloads = [_payload("fine"), _payload("flaky"), _payload("deadly")]
    scheduler = TableScheduler(
        {"fine": "equivalent", "flaky": "equivalent", "deadly": "equivalent"},
        deaths={"flaky": 1, "deadly": 5},
    )
    seen: list[int] = []
    results = run_all(scheduler, payloads, 10.0, lambda i, _: seen.append(i))
    assert [r["verdict"] for r in results] == ["equivalent", "equivalent", "error"]
    assert "the worker died running it, on 2 workers" in results[2]["error"]
    assert "deadly's worker was killed (signal 9)" in results[2]["error"]
    assert scheduler.started.count("flaky") == 2 and scheduler.started.count("deadly") == 2
    assert sorted(seen) == [0, 1, 2]


def test_results_file_ignores_a_torn_last_line(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    store = ResultsFile(path)
    store.start(resume=False)
    store.add("a", {"function": "f", "verdict": "equivalent"}, "m.py")
    store.add("b", {"function": "g", "verdict": "mismatch"}, "m.py")
    store.close()
    with open(path, "ab") as out:  # a kill in the middle of the third write
        out.write(b'{"key": "c", "function": "h", "result": {"verdict": "equiv')
    found = read_results(path)
    assert {k: r["verdict"] for k, r in found.items()} == {"a": "equivalent", "b": "mismatch"}
    # Resuming rewrites the file whole: the torn line is gone, new lines append.
    store = ResultsFile(path)
    kept = store.start(resume=True)
    store.add("c", {"function": "h", "verdict": "equivalent"})
    store.close()
    assert set(kept) == {"a", "b"}
    lines = path.read_text().splitlines()
    assert [json.loads(line)["key"] for line in lines] == ["a", "b", "c"]
    assert json.loads(lines[0])["path"] == "m.py"


def test_resume_drops_errors_and_targets_of_other_runs(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    store = ResultsFile(path)
    store.start(resume=False)
    store.add("ok", {"function": "f", "verdict": "equivalent"})
    store.add("timeout", {"function": "g", "verdict": "error", "error": "timed out"})
    store.add("gone", {"function": "h", "verdict": "equivalent"})
    store.close()
    kept = ResultsFile(path).start(resume=True, keys={"ok", "timeout"})
    assert set(kept) == {"ok"}
    # A run without --resume starts the file afresh.
    ResultsFile(path).start(resume=False)
    assert path.read_text() == ""


def test_the_key_follows_source_rewrite_and_options() -> None:
    base = _payload("loss", options={"rtol": 1e-5})
    assert result_key(base) == result_key(dict(base))
    assert result_key(base) != result_key({**base, "original_source": "x = 2\n"})
    assert result_key(base) != result_key({**base, "rewrite_source": "x = 2\n"})
    assert result_key(base) != result_key({**base, "options": {"rtol": 1e-3}})
    assert result_key(base) != result_key({**base, "qualname": "other"})


def _targets(folder: Path, bodies: dict[str, str]) -> list[Target]:
    targets = []
    for name, body in bodies.items():
        path = folder / f"{name}.py"
        path.write_text(LOSS.format(body=body))
        targets.append(
            Target(
                path=str(path),
                qualname="loss",
                line=4,
                original_source=path.read_text(),
                rewrite_source=path.read_text().replace("return", "return 1.0 *"),
                module=name,
                reason="changed by the rewrite",
            )
        )
    return targets


def test_resume_runs_only_what_changed_or_did_not_finish(tmp_path: Path) -> None:
    targets = _targets(tmp_path, {"a": "y_pred", "b": "y_true", "c": "y_true - y_pred"})
    store = ResultsFile(tmp_path / "cache" / "results.jsonl")
    settings = VerifySettings()
    first = TableScheduler({"loss": "equivalent"})
    results = verify_targets(
        targets, settings, tmp_path, run=RunOptions(scheduler=lambda n: first, results=store)
    )
    assert [r["verdict"] for r in results] == ["equivalent"] * 3
    assert len(first.started) == 3 and first.closed is False
    # Interrupted while c's line was written: a and b whole, c torn.
    lines = store.path.read_text().splitlines()
    whole = [line for line in lines if not json.loads(line)["path"].endswith("c.py")]
    torn = next(line for line in lines if json.loads(line)["path"].endswith("c.py"))[:60]
    store.path.write_text("\n".join([*whole, torn]))
    # b changed since.
    targets[1].rewrite_source = targets[1].rewrite_source.replace("1.0 *", "2.0 *")
    second = TableScheduler({"loss": "mismatch"})
    results = verify_targets(
        targets,
        settings,
        tmp_path,
        run=RunOptions(scheduler=lambda n: second, results=store, resume=True),
    )
    assert [r["verdict"] for r in results] == ["equivalent", "mismatch", "mismatch"]
    assert [r["path"] for r in results] == [t.path for t in targets]
    assert len(second.started) == 2
    assert len(read_results(store.path)) == 3


def test_an_interrupted_run_aborts_its_scheduler(tmp_path: Path) -> None:
    targets = _targets(tmp_path, {"a": "y_pred"})

    class Interrupted(TableScheduler):
        def next_finished(self) -> Finished:
            raise KeyboardInterrupt

    scheduler = Interrupted({})
    store = ResultsFile(tmp_path / "results.jsonl")
    with pytest.raises(KeyboardInterrupt):
        verify_targets(
            targets,
            VerifySettings(),
            tmp_path,
            run=RunOptions(scheduler=lambda n: scheduler, results=store),
        )
    assert scheduler.closed is True
    assert store.path.read_text() == ""


def test_progress_line() -> None:
    now = [100.0]
    out = io.StringIO()
    line = ProgressLine(
        10, resumed=2, where="Ray cluster, 8 CPUs", stream=out, clock=lambda: now[0]
    )
    assert line.text() == "verify: 2/10 done (2 resumed), ETA - | Ray cluster, 8 CPUs"
    now[0] += 4.0
    line.advance()
    line.advance()
    assert line.text() == "verify: 4/10 done (2 resumed), 0.5/s, ETA 12s | Ray cluster, 8 CPUs"
    line.clear()
    assert out.getvalue().endswith("\r")


def test_paths_follow_the_shipped_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    payload = absolute(
        {"path": "pkg/m.py", "caller": {"path": "main.py"}, "sys_path": [str(tmp_path / "pkg")]}
    )
    assert payload["path"] == str(tmp_path / "pkg" / "m.py")
    moved = relocate(payload, str(tmp_path), "/ray/working_dir")
    assert moved["path"] == "/ray/working_dir/pkg/m.py"
    assert moved["caller"]["path"] == "/ray/working_dir/main.py"
    assert moved["sys_path"] == ["/ray/working_dir/pkg"]
    assert relocate({"path": "/elsewhere/m.py"}, str(tmp_path), "/w")["path"] == "/elsewhere/m.py"


def test_missing_ray_is_exit_2_naming_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    (tmp_path / "losses.py").write_text(
        "import tensorflow as tf\n\n\n@tf.function\ndef loss(y_true, y_pred):\n"
        "    if tf.reduce_sum(y_pred) > 0:\n        return y_pred\n    return y_true\n"
    )
    app = typer.Typer()
    register(app)

    @app.callback()
    def _main() -> None:
        """tfrewrite"""

    results = tmp_path / "results.jsonl"
    result = CliRunner().invoke(
        app, ["verify", "--ray", "--no-progress", "--results", str(results), str(tmp_path)]
    )
    assert result.exit_code == 2, result.output
    assert "pip install 'tfrewrite[ray]'" in result.output


def test_check_fix_and_verify_modules_never_import_ray_or_tensorflow(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(LOSS.format(body="y_pred"))
    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from tfrewrite.cli import app\n"
        "import tfrewrite.verify.command, tfrewrite.verify.run, tfrewrite.verify.gate\n"
        f"for args in (['check', {str(tmp_path)!r}], ['fix', '--diff', {str(tmp_path)!r}]):\n"
        "    CliRunner().invoke(app, [*args, '--no-cache'])\n"
        "print(sorted(m for m in ('ray', 'tensorflow') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stderr


def test_a_worker_ended_by_a_signal_is_described_by_it() -> None:
    from tfrewrite.verify.pool import _STARTUP_NOTE, _exit_description

    assert _exit_description(-6).startswith("SIGABRT: a native check in TensorFlow failed")
    assert _exit_description(-9).startswith("SIGKILL: most often the memory ran out")
    assert _exit_description(1) == "exit code 1"
    notes = [
        "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR",
        "I0000 00:00:1796551077.312142   18433 port.cc:153] oneDNN custom operations are on.",
    ]
    assert all(_STARTUP_NOTE.match(line) for line in notes)
    assert not _STARTUP_NOTE.match("F0000 00:00:17.1 op_kernel.cc:12] Check failed: dims == 4")


def test_tensorflow_warnings_of_what_went_wrong_are_kept() -> None:
    from tfrewrite.verify.pool import _STARTUP_NOTE

    failed = "W0000 00:00:1796551083.490 18433 op_kernel.cc:1843] OP_REQUIRES failed at conv"
    assert not _STARTUP_NOTE.match(failed)
