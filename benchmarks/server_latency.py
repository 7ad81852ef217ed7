"""Latency of `tfrewrite server` as an editor sees it: a real Language Server
session over stdio (Content-Length framed JSON-RPC), timed from the
notification the editor sends to the diagnostics the server publishes.

For each generated hazard-dense file (`dense_findings.dense_source`): the
time from `didOpen` to its diagnostics, then the median time from a
`didChange` (one character typed in a comment at the end, after the text has
rested) to the diagnostics of that version. The debounce delay
(`server.DEBOUNCE_SECONDS`) is part of what the editor waits, and is included.

Usage: python benchmarks/server_latency.py [--losses 14,67] [--edits 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from dense_findings import dense_source  # noqa: E402


class Session:
    """The client side of one server process."""

    def __init__(self, cwd: Path) -> None:
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent / "src")}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tfrewrite", "server"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            cwd=cwd,
            env=env,
        )
        self.next_id = 0

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
            if not line:
                raise SystemExit("the server exited")
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
                return message.get("result")

    def diagnostics_of(self, version: int) -> list[dict[str, Any]]:
        while True:
            message = self.receive()
            params = message.get("params") or {}
            if message.get("method") == "textDocument/publishDiagnostics" and (
                params.get("version") == version
            ):
                return params["diagnostics"]

    def close(self) -> None:
        self.request("shutdown", {})
        self.send({"method": "exit", "params": {}})
        self.process.wait(timeout=30)


def measure(folder: Path, losses: int, edits: int) -> tuple[int, int, float, float]:
    text = dense_source(losses)
    path = folder / f"dense_{losses}.py"
    path.write_text(text)
    session = Session(folder)
    initialize = {"processId": None, "rootUri": folder.as_uri(), "capabilities": {}}
    session.request("initialize", initialize)
    session.send({"method": "initialized", "params": {}})
    uri = path.as_uri()
    start = time.perf_counter()
    document = {"uri": uri, "languageId": "python", "version": 1, "text": text}
    session.send({"method": "textDocument/didOpen", "params": {"textDocument": document}})
    findings = len(session.diagnostics_of(1))
    opened = time.perf_counter() - start
    times = []
    for version in range(2, edits + 2):
        text += f"# edit {version}\n"
        start = time.perf_counter()
        session.send(
            {
                "method": "textDocument/didChange",
                "params": {
                    "textDocument": {"uri": uri, "version": version},
                    "contentChanges": [{"text": text}],
                },
            }
        )
        session.diagnostics_of(version)
        times.append(time.perf_counter() - start)
    session.close()
    return text.count("\n"), findings, opened, statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--losses", default="14,67")
    parser.add_argument("--edits", type=int, default=5)
    args = parser.parse_args()
    print(f"{'lines':>6} {'findings':>9} {'didOpen s':>10} {'edit s (median)':>16}")
    with tempfile.TemporaryDirectory() as folder:
        for losses in (int(n) for n in args.losses.split(",")):
            lines, findings, opened, edited = measure(Path(folder), losses, args.edits)
            print(f"{lines:>6} {findings:>9} {opened:>10.2f} {edited:>16.2f}")


if __name__ == "__main__":
    main()
