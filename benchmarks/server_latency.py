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
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from dense_findings import dense_source  # noqa: E402
from lsp_client import Client  # noqa: E402


def measure(folder: Path, losses: int, edits: int) -> tuple[int, int, float, float]:
    text = dense_source(losses)
    path = folder / f"dense_{losses}.py"
    path.write_text(text)
    session = Client(folder)
    initialize = {"processId": None, "rootUri": folder.as_uri(), "capabilities": {}}
    session.request("initialize", initialize)
    session.notify("initialized", {})
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
    session.request("shutdown", {})
    session.notify("exit", {})
    session.process.wait(timeout=30)
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
