"""`tfrewrite server`: a real Language Server session over stdio.

The test is the client: it starts `python -m tfrewrite server`, speaks
JSON-RPC with Content-Length framing, and walks the session an editor would:
initialize, didOpen, publishDiagnostics, codeAction, hover, didChange,
shutdown, exit."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pygls")

_spec = importlib.util.spec_from_file_location(
    "lsp_client", Path(__file__).parents[1] / "benchmarks" / "lsp_client.py"
)
assert _spec is not None and _spec.loader is not None
lsp_client = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(lsp_client)
Client = lsp_client.Client

SOURCE = textwrap.dedent(
    """\
    import numpy as np
    import tensorflow as tf


    def noisy_mse(y_true, y_pred):
        noise = np.random.normal(0.0, 0.05, size=(4, 3))
        return tf.reduce_mean(tf.square(y_true + noise - y_pred))


    model = tf.keras.Sequential([tf.keras.layers.Dense(3)])
    model.compile(optimizer="adam", loss=noisy_mse)
    """
)
SAMPLE = "np.random.normal(0.0, 0.05, size=(4, 3))"


@pytest.fixture
def session(tmp_path: Path):  # type: ignore[no-untyped-def]
    (tmp_path / "pyproject.toml").write_text('[tool.tfrewrite]\nignore = ["TFR203"]\n')
    client = Client(tmp_path)
    client.request(
        "initialize",
        {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}},
    )
    client.notify("initialized", {})
    yield client, tmp_path
    client.request("shutdown", {})
    client.notify("exit", {})
    client.process.wait(timeout=10)


def open_document(client: Client, path: Path, text: str) -> dict[str, Any]:
    client.notify(
        "textDocument/didOpen",
        {
            "textDocument": {
                "uri": path.as_uri(),
                "languageId": "python",
                "version": 1,
                "text": text,
            }
        },
    )
    return client.wait_for("textDocument/publishDiagnostics")["params"]


def test_diagnostics_quick_fix_fix_all_and_hover(session) -> None:  # type: ignore[no-untyped-def]
    client, root = session
    path = root / "step.py"
    published = open_document(client, path, SOURCE)
    (diagnostic,) = published["diagnostics"]
    assert diagnostic["code"] == "TFR102"
    assert diagnostic["source"] == "tfrewrite"
    assert diagnostic["range"]["start"] == {"line": 5, "character": 12}

    actions = client.request(
        "textDocument/codeAction",
        {
            "textDocument": {"uri": path.as_uri()},
            "range": diagnostic["range"],
            "context": {"diagnostics": [diagnostic]},
        },
    )
    quick = [a for a in actions if a["kind"] == "quickfix"]
    assert quick and quick[0]["isPreferred"] is True
    edits = quick[0]["edit"]["changes"][path.as_uri()]
    assert any("tf.random.normal" in e["newText"] for e in edits)
    fix_all = [a for a in actions if a["kind"] == "source.fixAll.tfrewrite"]
    (whole,) = fix_all[0]["edit"]["changes"][path.as_uri()]
    assert "tf.random.normal" in whole["newText"] and "np.random" not in whole["newText"]

    hover = client.request(
        "textDocument/hover",
        {"textDocument": {"uri": path.as_uri()}, "position": {"line": 5, "character": 20}},
    )
    assert "TFR102" in hover["contents"]["value"]

    client.notify(
        "textDocument/didChange",
        {
            "textDocument": {"uri": path.as_uri(), "version": 2},
            "contentChanges": [{"text": SOURCE.replace(SAMPLE, "0.0")}],
        },
    )
    assert client.wait_for("textDocument/publishDiagnostics")["params"]["diagnostics"] == []


def test_settings_come_from_pyproject(session) -> None:  # type: ignore[no-untyped-def]
    client, root = session
    (root / "pyproject.toml").write_text('[tool.tfrewrite]\nignore = ["TFR102"]\n')
    published = open_document(client, root / "quiet.py", SOURCE)
    assert published["diagnostics"] == []


def _initialized(cwd: Path) -> Client:
    client = Client(cwd)
    client.request("initialize", {"processId": None, "rootUri": cwd.as_uri(), "capabilities": {}})
    client.notify("initialized", {})
    return client


def test_server_exits_when_the_client_closes_its_input(tmp_path: Path) -> None:
    client = _initialized(tmp_path)
    assert client.process.stdin is not None
    client.process.stdin.close()
    assert client.process.wait(timeout=30) is not None
    stderr = client.process.stderr.read().decode() if client.process.stderr else ""
    assert "Traceback" not in stderr


LAUNCHER = """\
import subprocess, sys, time
stdin, stdout = int(sys.argv[1]), int(sys.argv[2])
server = subprocess.Popen(
    [sys.executable, "-m", "tfrewrite", "server"], stdin=stdin, stdout=stdout,
    pass_fds=(stdin, stdout),
)
print(server.pid, flush=True)
time.sleep(600)
"""


def test_server_exits_when_its_parent_dies(tmp_path: Path) -> None:
    """The editor is killed while the server's standard input stays open
    (here: held by the test): the server notices its parent is gone and
    exits."""
    import signal
    import time

    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent / "src")}
    launcher = subprocess.Popen(
        [sys.executable, "-c", LAUNCHER, str(in_read), str(out_write)],
        stdout=subprocess.PIPE,
        pass_fds=(in_read, out_write),
        cwd=tmp_path,
        env=env,
    )
    os.close(in_read)
    os.close(out_write)
    with os.fdopen(in_write, "wb") as to_server, os.fdopen(out_read, "rb") as from_server:
        assert launcher.stdout is not None
        server_pid = int(launcher.stdout.readline())
        body = json.dumps(
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}
        ).encode()
        to_server.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        to_server.flush()
        assert from_server.readline().startswith(b"Content-Length")  # the server is up
        launcher.send_signal(signal.SIGKILL)
        launcher.wait(timeout=10)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and _running(server_pid):
            time.sleep(0.2)
        assert not _running(server_pid)


def _running(pid: int) -> bool:
    """Whether `pid` runs (an exited, unreaped process, a zombie, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_burst_of_edits_is_checked_once_at_its_last_version(session) -> None:  # type: ignore[no-untyped-def]
    """Typing sends an edit per keystroke: the diagnostics published after a
    burst are those of its last version, and an older version's come first
    or not at all."""
    client, tmp_path = session
    path = tmp_path / "losses.py"
    uri = path.as_uri()
    open_document(client, path, SOURCE)
    clean = SOURCE.replace(SAMPLE, "tf.random.normal((4, 3), 0.0, 0.05)")
    texts = [SOURCE.replace(SAMPLE, SAMPLE + " " * n) for n in range(1, 4)] + [clean]
    for version, text in enumerate(texts, start=2):
        client.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{"text": text}],
            },
        )
    last = len(texts) + 1
    while True:
        published = client.wait_for("textDocument/publishDiagnostics")["params"]
        if published.get("version") == last:
            break
        assert published.get("version", 0) < last
    assert published["diagnostics"] == []
    # Quick fixes are computed when asked: the code action on a finding has its edits.
    client.notify(
        "textDocument/didChange",
        {"textDocument": {"uri": uri, "version": last + 1}, "contentChanges": [{"text": SOURCE}]},
    )
    (diagnostic,) = client.wait_for("textDocument/publishDiagnostics")["params"]["diagnostics"]
    actions = client.request(
        "textDocument/codeAction",
        {
            "textDocument": {"uri": uri},
            "range": diagnostic["range"],
            "context": {"diagnostics": [diagnostic], "only": ["quickfix"]},
        },
    )
    (action,) = actions
    edits = action["edit"]["changes"][uri]
    assert any("tf.random.normal" in edit["newText"] for edit in edits)


def test_an_edit_in_one_function_gives_the_diagnostics_of_a_fresh_check(session) -> None:  # type: ignore[no-untyped-def]
    """After an edit the server checks again only the functions it can
    change (`pipeline/incremental.py`): the other findings move with their
    lines, and every diagnostic is what opening the edited text gives."""
    client, tmp_path = session
    two = SOURCE + textwrap.dedent(
        """

        @tf.function
        def jitter(x):
            print("x", x)
            return x + np.random.uniform()
        """
    )
    path = tmp_path / "edited.py"
    open_document(client, path, two)
    edited = two.replace(
        "    noise = np.random.normal",
        "    scale = 2.0\n    scale += 1.0\n    noise = np.random.normal",
    )
    client.notify(
        "textDocument/didChange",
        {
            "textDocument": {"uri": path.as_uri(), "version": 2},
            "contentChanges": [{"text": edited}],
        },
    )
    while True:
        published = client.wait_for("textDocument/publishDiagnostics")["params"]
        if published.get("version") == 2:
            break
    fresh = open_document(client, tmp_path / "fresh.py", edited)
    assert len(published["diagnostics"]) == 3
    assert published["diagnostics"] == fresh["diagnostics"]
