"""`# noqa` comments, as Ruff reads them: `# noqa` alone suppresses every
finding on the line, `# noqa: TFR101, TFR102` only those codes; `# tfrewrite:
noqa` in a file's header (before its first statement) skips the whole file.

Only real comments count: `"# noqa"` inside a string literal suppresses
nothing. Comments are found with the tokenizer, once per file, and only when a
finding's line holds a `#` at all.
"""

from __future__ import annotations

import io
import re
import tokenize

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
        self.source = source
        self.lines = source.splitlines()
        self._comments: dict[int, list[str]] | None = None

    def _comments_on(self, line: int) -> list[str]:
        if self._comments is None:
            self._comments = _comments_by_line(self.source)
        return self._comments.get(line, [])

    def suppresses(self, line: int, code: str) -> bool:
        if not 1 <= line <= len(self.lines):
            return False
        if "#" not in self.lines[line - 1]:
            return False
        for comment in self._comments_on(line):
            for match in _NOQA.finditer(comment):
                codes = match.group("codes")
                if codes is None:
                    return True
                if code.upper() in {c.upper() for c in re.split(r"[\s,]+", codes) if c}:
                    return True
        return False


def _comments_by_line(source: str) -> dict[int, list[str]]:
    comments: dict[int, list[str]] = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.COMMENT:
                comments.setdefault(token.start[0], []).append(token.string)
    except (tokenize.TokenError, SyntaxError):
        pass  # comments seen before the error still count
    return comments
