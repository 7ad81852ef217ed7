"""Latency of `tfrewrite server` as an editor sees it: a real Language Server
session over stdio (Content-Length framed JSON-RPC), timed from the
notification the editor sends to the diagnostics the server publishes.

For each generated hazard-dense file (`dense_findings.dense_source`), and
each file of the same code as the fixes leave it (`clean_source`: no
finding): the time from `didOpen` to its diagnostics, then the median time
from a `didChange` (after the text has rested) to the diagnostics of that
version, for two kinds of edit: a comment line added at the end, and a
statement added in the body of the loss in the middle of the file.

Usage: python benchmarks/server_latency.py [--losses 14,67] [--clean 14] [--edits 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from dense_findings import clean_source, dense_source  # noqa: E402
from lsp_client import Client  # noqa: E402


def _in_a_function(text: str, version: int) -> str:
    """`text` with a statement added at the top of the middle loss's body."""
    lines = text.splitlines(keepends=True)
    losses = [n for n, line in enumerate(lines) if line.startswith("def loss_")]
    middle = losses[len(losses) // 2]
    return "".join(
        [*lines[: middle + 1], f"    scale_{version} = {version}\n", *lines[middle + 1 :]]
    )


def measure(folder: Path, name: str, text: str, edits: int) -> tuple[int, int, float, float, float]:
    path = folder / f"{name}.py"
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
    at_end, in_function = [], []
    for version in range(2, 2 * edits + 2):
        inside = version % 2 == 1
        text = _in_a_function(text, version) if inside else text + f"# edit {version}\n"
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
        (in_function if inside else at_end).append(time.perf_counter() - start)
    session.request("shutdown", {})
    session.notify("exit", {})
    session.process.wait(timeout=30)
    return (
        text.count("\n"),
        findings,
        opened,
        statistics.median(at_end),
        statistics.median(in_function),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--losses", default="14,67")
    parser.add_argument("--clean", default="14")
    parser.add_argument("--edits", type=int, default=5)
    args = parser.parse_args()
    files = [(f"dense_{n}", dense_source(int(n))) for n in args.losses.split(",") if n]
    files += [(f"clean_{n}", clean_source(int(n))) for n in args.clean.split(",") if n]
    print(
        f"{'file':>10} {'lines':>6} {'findings':>9} {'didOpen ms':>11} "
        f"{'edit at end ms':>15} {'edit in a function ms':>22}"
    )
    with tempfile.TemporaryDirectory() as folder:
        for name, text in files:
            lines, findings, opened, at_end, inside = measure(Path(folder), name, text, args.edits)
            print(
                f"{name:>10} {lines:>6} {findings:>9} {1000 * opened:>11.0f} "
                f"{1000 * at_end:>15.0f} {1000 * inside:>22.0f}"
            )


if __name__ == "__main__":
    main()
