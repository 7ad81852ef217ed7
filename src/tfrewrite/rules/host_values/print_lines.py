"""Lines a traced function writes in parts, some on every call, some once.

A traced function that writes a line in parts (`sys.stdout.write(f"[{loss}")`
then `sys.stdout.write("]\\n")`, or `print("loss: ", end="")` then
`print(loss)`) writes it on every call eagerly. Once its parts that show
tensors become `tf.print` (which prints on every call), a part with constant
text would still be Python: it runs once, while tracing, before any call
prints, and the line falls apart (`]` once, then `[1.0[2.0[3.0`). A
constant print is otherwise a trace-time message that TFR103 leaves alone;
here it is part of a line printed on every call, so it becomes `tf.print`
too, with the same fix safety as the parts beside it.

Whether an output leaves its line open is read from its text: the `end=` of
a `print` / `tf.print`, or the last characters of the text a write is given
(a template ending in `\\n`); text whose end cannot be read counts as open.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from tfrewrite.facts.blockers import line_name_of
from tfrewrite.facts.context import FunctionScope, RuleContext
from tfrewrite.findings import Applicability
from tfrewrite.rewrite.fixes import CstFix, NodeEdit, Violation
from tfrewrite.rules.host_values.print_pieces import PrintRefusal
from tfrewrite.rules.host_values.print_rewrite import (
    announces_tracing,
    printed_values,
    rewrite_print,
)
from tfrewrite.rules.host_values.string_literals import (
    decode_fstring_text,
    is_none,
    string_value,
)
from tfrewrite.rules.host_values.traced_context import print_applicability


@dataclass
class Output:
    """One print, write or `tf.print` statement of a traced function.
    `call` is what is written in the source; `printed` the `print` it is
    (itself for a `print`, `as_print` of a write, None for a `tf.print`);
    `finding` is TFR103's on it (None for an output showing no values).
    `per_call` outputs print on every call once fixed: `tf.print`, and
    outputs with a fix."""

    call: cst.Call
    printed: cst.Call | None
    scope: FunctionScope
    parent: cst.CSTNode | None
    indent: str
    finding: Violation | None
    output_stream: str = "stdout"

    @property
    def statement(self) -> bool:
        return isinstance(self.parent, cst.Expr)

    @property
    def per_call(self) -> bool:
        return self.printed is None or (self.finding is not None and self.finding.fix is not None)

    def open_line(self) -> bool:
        """Whether what this output writes may not end its line."""
        call = self.printed if self.printed is not None else self.call
        end = next((a.value for a in call.args if a.keyword and a.keyword.value == "end"), None)
        if end is None or is_none(end):
            return False  # the default end, "\n"
        end_text = string_value(end)
        if end_text is None:
            return True
        if end_text:
            return not end_text.endswith("\n")
        positional = [a.value for a in call.args if a.keyword is None]
        return not positional or not ends_line(positional[-1])


def ends_line(node: cst.BaseExpression) -> bool:
    """Whether text ends in a newline, as far as its literal parts show: a
    string literal, an f-string ending in literal text, a `%` or `.format`
    template ending in `\\n`."""
    while isinstance(node, cst.ConcatenatedString):
        node = node.right  # type: ignore[assignment]
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return isinstance(value, str) and value.endswith("\n")
    if isinstance(node, cst.FormattedString):
        last = node.parts[-1] if node.parts else None
        if not isinstance(last, cst.FormattedStringText):
            return False
        raw = "r" in node.prefix.lower()
        return decode_fstring_text(last.value, node.end, raw).endswith("\n")
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Modulo):
        template = string_value(node.left)
        return template is not None and template.endswith("\n")
    if (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value == "format"
    ):
        template = string_value(node.func.value)
        return template is not None and template.endswith("\n")
    return False


def companions(ctx: RuleContext, outputs: list[Output]) -> Iterator[Violation]:
    """Findings for the constant outputs of each function that writes lines
    in parts on every call: each becomes `tf.print`, as unsafe as the least
    safe fix beside it. None when some output showing values is not fixed
    (the line stays Python's, in part, whatever is done)."""
    by_scope: dict[int, list[Output]] = {}
    for output in outputs:
        by_scope.setdefault(id(output.scope.node), []).append(output)
    for group in by_scope.values():
        per_call = [o for o in group if o.per_call]
        if not per_call or any(o.finding is not None and not o.per_call for o in group):
            continue
        if not any(o.open_line() for o in group):
            continue
        unsafe = any(
            o.finding is not None
            and o.finding.fix is not None
            and o.finding.fix.applicability is not Applicability.SAFE
            for o in per_call
        )
        first = per_call[0].call
        for output in group:
            if output.finding is None and output.printed is not None and output.statement:
                violation = _companion(ctx, output, first, unsafe)
                if violation is not None:
                    yield violation


def _companion(
    ctx: RuleContext, output: Output, per_call: cst.Call, unsafe: bool
) -> Violation | None:
    assert output.printed is not None
    positional = [a.value for a in output.printed.args if a.keyword is None]
    if announces_tracing(positional) or any(a.star for a in output.printed.args):
        return None
    refusal, context_note = print_applicability(ctx, output.scope)
    if refusal is not None:
        return None
    subject = "`print`" if output.printed is output.call else f"`{ctx.code(output.call.func)}`"
    problem = (
        f"{subject} of text with no tensor runs once, at trace time, but it writes part of a "
        f"line that the output on {line_name_of(ctx, per_call)} writes on every call"
    )
    printed, _, facts = printed_values(ctx, output.printed, output.scope, ctx.tensors(output.scope))
    try:
        rewrite = rewrite_print(
            ctx,
            printed,
            facts,
            output.indent,
            output_stream=output.output_stream,
            text_only=output.printed is not output.call,
        )
    except PrintRefusal:
        return None  # to another file (`file=log`), or not a plain print: not part of the line
    notes = [
        *(["the outputs it writes a line with are rewritten with unsafe fixes"] if unsafe else []),
        *([context_note] if context_note else []),
        *rewrite.assumptions,
    ]
    message = f"Replace {subject} with `tf.print`, as the rest of its line"
    if notes:
        message += " (unsafe: " + "; ".join(notes) + ")"
    fix = CstFix(
        message,
        (NodeEdit(output.call, rewrite.replacement),),
        rewrite.imports,
        Applicability.UNSAFE if notes else Applicability.SAFE,
    )
    return Violation(output.call, f"{problem}; use `tf.print` for it too", fix)
