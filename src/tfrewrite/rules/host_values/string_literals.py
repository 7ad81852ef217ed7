"""String literals as LibCST sees them, and writing them back.

`tf.print` rewrites read the text of string literals and f-string parts, and
write new literals that read as the same text in the quotes the user chose.
"""

from __future__ import annotations

import ast
import warnings

import libcst as cst


def is_text(node: cst.BaseExpression) -> bool:
    """A str literal or f-string (not bytes)."""
    if isinstance(node, cst.ConcatenatedString):
        return is_text(node.left) and is_text(node.right)
    if isinstance(node, cst.SimpleString):
        return isinstance(node.evaluated_value, str)
    return isinstance(node, cst.FormattedString) and "b" not in node.prefix.lower()


def is_none(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def string_value(node: cst.BaseExpression) -> str | None:
    """The text of a plain (non-f, non-bytes) string literal, else None."""
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def quote_of(node: cst.BaseExpression) -> str:
    while isinstance(node, cst.ConcatenatedString):
        node = node.left
    if isinstance(node, (cst.SimpleString, cst.FormattedString)):
        return node.quote[0] if isinstance(node, cst.SimpleString) else node.end[0]
    return '"'


def decode_fstring_text(raw_text: str, quote: str, raw: bool) -> str:
    """The text an f-string's literal part prints. A sentinel character keeps
    a part that ends in a quote (the `say "` of a triple-quoted `say "{x}"`)
    from closing the literal early."""
    text = raw_text.replace("{{", "{").replace("}}", "}")
    prefix = "r" if raw else ""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # `\{` and the like: invalid escapes kept as written
        return ast.literal_eval(f"{prefix}{quote}{text}_{quote}")[:-1]


def escape(text: str, quote: str) -> str:
    """The body of a string literal in `quote` quotes that reads as `text`."""
    out = []
    for ch in text:
        if ch == "\\":
            out.append("\\\\")
        elif ch == quote:
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch in "\r\t" or not (ch.isprintable() or ch == "\n"):
            out.append(repr(ch)[1:-1])
        else:
            out.append(ch)
    return "".join(out)


def literal(text: str) -> str:
    """A string literal for `text`, in double quotes unless single quotes
    need fewer escapes."""
    quote = "'" if '"' in text and "'" not in text else '"'
    return f"{quote}{escape(text, quote)}{quote}"
