"""`# noqa` comments, as Ruff reads them: `# noqa` alone suppresses every
finding on the line, `# noqa: TFR101, TFR102` only those codes; `# tfrewrite:
noqa` in a file's header (before its first statement) skips the whole file."""

from __future__ import annotations

import re

_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?", re.I)
_FILE_NOQA = re.compile(r"#\s*tfrewrite:\s*noqa\b", re.I)


def file_is_exempt(source: str) -> bool:
    for line in source.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        if not stripped.startswith("#"):
            return False
        if _FILE_NOQA.search(stripped):
            return True
    return False


class NoqaMap:
    def __init__(self, source: str) -> None:
        self.lines = source.splitlines()

    def suppresses(self, line: int, code: str) -> bool:
        if not 1 <= line <= len(self.lines):
            return False
        text = self.lines[line - 1]
        if "#" not in text:
            return False
        for match in _NOQA.finditer(text):
            codes = match.group("codes")
            if codes is None:
                return True
            if code.upper() in {c.upper() for c in re.split(r"[\s,]+", codes) if c}:
                return True
        return False
