"""Keeping a call's layout when it is rewritten into another call.

A call written over several lines, one argument per line with comments, is
rewritten into a call laid out the same way: the same opening, one argument
per line at the original's indentation, the original's closing, and each
argument with the comments of the original argument it came from.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import libcst as cst

from tfrewrite.facts.walk import comments_in


def relayout(
    old: cst.Call,
    call: cst.Call,
    origins: Mapping[str, Sequence[cst.Arg]],
    code: Callable[[cst.CSTNode], str],
) -> cst.Call:
    """`call` laid out like `old`; `origins` maps the text of an argument of
    `call` to the arguments of `old` it was written from."""
    old_args, new_args = list(old.args), list(call.args)
    if not old_args or not new_args:
        return call
    remaining = {text: list(args) for text, args in origins.items()}
    breaks = [
        _line_end(w)
        for w in (
            old.whitespace_before_args,
            *(a.comma.whitespace_after for a in old_args if isinstance(a.comma, cst.Comma)),
        )
    ]
    newline = next((b for b in breaks if b is not None), None)
    between = (
        cst.Comma(whitespace_after=_bare(newline))
        if newline is not None
        else cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    )
    closing_comma = old_args[-1].comma
    if isinstance(closing_comma, cst.Comma):
        closing_comma = closing_comma.with_changes(
            whitespace_after=_bare_whitespace(closing_comma.whitespace_after)
        )
    closing_space = _bare_whitespace(old_args[-1].whitespace_after_arg)
    result = []
    for i, arg in enumerate(new_args):
        sources = remaining.get(code(arg.value))
        source = sources.pop(0) if sources else None
        if i == len(new_args) - 1:
            comma, after = closing_comma, closing_space
        else:
            comma, after = between, cst.SimpleWhitespace("")
        if source is not None:
            comma, after = _with_comments_of(source, comma, after)
        result.append(arg.with_changes(comma=comma, whitespace_after_arg=after))
    return call.with_changes(args=result, whitespace_before_args=old.whitespace_before_args)


class KeepLayout(cst.CSTTransformer):
    """Lays out the first call whose callee starts with `prefix` like `old`."""

    def __init__(
        self,
        old: cst.Call,
        prefix: str,
        origins: Mapping[str, Sequence[cst.Arg]],
        code: Callable[[cst.CSTNode], str],
    ) -> None:
        self.old = old
        self.prefix = prefix
        self.origins = origins
        self.code = code
        self.done = False

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        func = cst.Module([]).code_for_node(updated_node.func)
        if not self.done and func.startswith(self.prefix):
            self.done = True
            return relayout(self.old, updated_node, self.origins, self.code)
        return updated_node


def spans_lines(call: cst.Call) -> bool:
    return "\n" in cst.Module([]).code_for_node(call)


def comment_texts(node: cst.CSTNode) -> set[str]:
    return {comment.value for comment in comments_in(node)}


def _line_end(whitespace: cst.BaseParenthesizableWhitespace) -> cst.ParenthesizedWhitespace | None:
    return whitespace if isinstance(whitespace, cst.ParenthesizedWhitespace) else None


def _bare(line: cst.ParenthesizedWhitespace) -> cst.ParenthesizedWhitespace:
    """A line break with `line`'s indentation and no comment."""
    return line.with_changes(first_line=cst.TrailingWhitespace(), empty_lines=[])


def _bare_whitespace(
    whitespace: cst.BaseParenthesizableWhitespace,
) -> cst.BaseParenthesizableWhitespace:
    line = _line_end(whitespace)
    return _bare(line) if line is not None else whitespace


def _with_comments_of(
    source: cst.Arg,
    comma: cst.Comma | cst.MaybeSentinel,
    after: cst.BaseParenthesizableWhitespace,
) -> tuple[cst.Comma | cst.MaybeSentinel, cst.BaseParenthesizableWhitespace]:
    """Move the comments that end `source`'s line (after its comma, or after
    the argument when it has none) onto the slot's comma or closing space."""
    if isinstance(source.comma, cst.Comma):
        carrier = _line_end(source.comma.whitespace_after)
    else:
        carrier = _line_end(source.whitespace_after_arg)
    if carrier is None:
        return comma, after
    keep = {"first_line": carrier.first_line, "empty_lines": carrier.empty_lines}
    if isinstance(comma, cst.Comma) and _line_end(comma.whitespace_after) is not None:
        target = _line_end(comma.whitespace_after)
        assert target is not None
        return comma.with_changes(whitespace_after=target.with_changes(**keep)), after
    if _line_end(after) is not None:
        target = _line_end(after)
        assert target is not None
        return comma, target.with_changes(**keep)
    return comma, after
