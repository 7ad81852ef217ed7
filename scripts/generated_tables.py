"""Write the tables the generator scripts of `scripts/` measure from the
installed TensorFlow and Keras, or (`--check`) compare the committed ones
with what they would write: one way for every generated table of
`src/tfrewrite/facts/`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path


def write_or_check(tables: Mapping[Path, str], command: str, check: bool) -> int:
    """Write each table's source, or with `check` report each committed
    table that differs from it (exit status 1), naming the command that
    regenerates it."""
    if check:
        stale = [
            path for path, source in tables.items() if path.read_text(encoding="utf-8") != source
        ]
        for path in stale:
            print(f"{path} is out of date: run `{command}`", file=sys.stderr)
        return 1 if stale else 0
    for path, source in tables.items():
        path.write_text(source, encoding="utf-8")
        print(f"wrote {path}")
    return 0


def table_main(
    argv: list[str] | None,
    description: str,
    command: str,
    tables: Callable[[], Mapping[Path, str]],
) -> int:
    """The command line every generator script has: measure and write its
    tables (`tables`, called only once the arguments parse), or with
    `--check` compare the committed ones."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(
        "--check", action="store_true", help="compare the committed table; write nothing"
    )
    args = parser.parse_args(argv)
    return write_or_check(tables(), command, args.check)


def _module(doc: list[str], version: tuple[str, str], body: list[str]) -> str:
    """The source of a generated module: its docstring lines `doc`, the
    version constant `version` (name, value) it was measured on, then the
    lines `body`."""
    lines = [f'"""{doc[0]}', *doc[1:], '"""', "", f'{version[0]} = "{version[1]}"', "", *body]
    return "\n".join(lines) + "\n"


def render_places(
    doc: list[str], version: tuple[str, str], name: str, table: Mapping[str, tuple[int, str]]
) -> str:
    """A generated module mapping functions to the (position, keyword) of
    one of their parameters, in the dict `name`."""
    body = [
        f"{name}: dict[str, tuple[int, str]] = {{",
        *(f'    "{key}": ({index}, "{keyword}"),' for key, (index, keyword) in table.items()),
        "}",
    ]
    return _module(doc, version, body)


def render_set(doc: list[str], version: tuple[str, str], name: str, values: Sequence[str]) -> str:
    """A generated module holding one frozenset of names, `name`."""
    return render_sets(doc, version, {name: values})


def render_sets(doc: list[str], version: tuple[str, str], sets: Mapping[str, Sequence[str]]) -> str:
    """A generated module holding a frozenset of names per entry of `sets`."""
    body: list[str] = []
    for name, values in sets.items():
        if body:
            body.append("")
        body += [
            f"{name} = frozenset(",
            "    {",
            *(f'        "{v}",' for v in values),
            "    }",
            ")",
        ]
    return _module(doc, version, body)
