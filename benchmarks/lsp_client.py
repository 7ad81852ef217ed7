"""A Language Server client over stdio for `tfrewrite server`, as an editor
speaks to it: JSON-RPC with Content-Length framing. Used by the server's
test session (`tests/test_server.py`) and its latency benchmark
(`benchmarks/server_latency.py`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any


class Client:
    def __init__(self, cwd: Path) -> None:
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent / "src")}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tfrewrite", "server"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=env,
        )
        self.next_id = 0
        self.notifications: list[dict[str, Any]] = []

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def receive(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        length = 0
        while True:
            line = self.process.stdout.readline()
            assert line, self.process.stderr.read().decode() if self.process.stderr else ""
            if line in (b"\r\n", b"\n"):
                break
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        return json.loads(self.process.stdout.read(length))

    def request(self, method: str, params: dict[str, Any]) -> Any:
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        while True:
            message = self.receive()
            if message.get("id") == self.next_id and "method" not in message:
                assert "error" not in message, message
                return message.get("result")
            self.notifications.append(message)

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.send({"method": method, "params": params})

    def wait_for(self, method: str) -> dict[str, Any]:
        for i, message in enumerate(self.notifications):
            if message.get("method") == method:
                return self.notifications.pop(i)
        while True:
            message = self.receive()
            if message.get("method") == method:
                return message
            self.notifications.append(message)

    def diagnostics_of(self, version: int) -> list[dict[str, Any]]:
        """The diagnostics published for `version` of a document."""
        while True:
            params = self.wait_for("textDocument/publishDiagnostics")["params"]
            if params.get("version") == version:
                return params["diagnostics"]
