"""Writing `tf.print` arguments from pieces of printed text.

Consecutive text and Python fields of one string stay one string argument in
that string's own syntax (f-string, `%`, `.format`); tensors are arguments of
their own, printed with `sep=""`. When a string tensor is among them the line
is joined into one string (`tf.print` quotes string tensors among other
inputs).
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from tfrewrite.facts.context import RuleContext
from tfrewrite.rules.host_values.print_pieces import Arg, Field, PrintRefusal, Source, Text
from tfrewrite.rules.host_values.string_literals import escape, literal


def as_text(
    ctx: RuleContext, pieces: list[Text | Arg | Field], tf_alias: str, summarize: bool = False
) -> list[Text | Arg | Field]:
    """The pieces as elements of `tf.strings.join`: tensors formatted as
    `tf.print` would (`tf.strings.format`, every element with `summarize`),
    Python values as `print` would (`str()`, in an f-string field)."""
    every = ", summarize=-1" if summarize else ""
    python = Source("f", '"')
    result: list[Text | Arg | Field] = []
    for piece in pieces:
        if not isinstance(piece, Arg) or piece.kind == "string":
            result.append(piece)
        elif piece.kind == "tensor":
            result.append(Arg(f'{tf_alias}.strings.format("{{}}", {piece.code}{every})', "string"))
        elif piece.kind == "unknown":
            raise PrintRefusal(
                f"`{piece.code}` is computed from tensors but not known to be one, so it "
                "cannot be joined into one formatted line"
            )
        else:
            result.append(Field("{" + piece.code + "}", "", python))
    return result


def render(pieces: list[Text | Arg | Field]) -> list[str]:
    """`tf.print` argument code for a flat list of pieces (printed with sep="").
    Consecutive text and non-tensor fields of one string become one string
    argument, written in that string's own syntax."""
    runs: list[list[Text | Field] | Arg] = []
    for piece in pieces:
        if isinstance(piece, Arg):
            runs.append(piece)
            continue
        last = runs[-1] if runs else None
        if isinstance(last, list) and (
            isinstance(piece, Text)
            or all(isinstance(p, Text) or p.source is piece.source for p in last)
        ):
            last.append(piece)
        else:
            runs.append([piece])
    parts: list[str] = []
    for run in runs:
        if isinstance(run, Arg):
            parts.append(run.code)
        else:
            rendered = render_run(run)
            if rendered is not None:
                parts.append(rendered)
    return parts


def render_run(run: list[Text | Field]) -> str | None:
    fields = [p for p in run if isinstance(p, Field)]
    if not fields:
        text = "".join(p.value for p in run if isinstance(p, Text))
        return literal(text) if text else None
    source = fields[0].source
    quote = pick_quote(source.quote[0], [f.code for f in fields] if source.kind == "f" else [])

    def text(piece: Text, *doubled: str) -> str:
        body = escape(piece.value, quote)
        for ch in doubled:
            body = body.replace(ch, ch + ch)
        return body

    if source.kind == "f":
        body = "".join(text(p, "{", "}") if isinstance(p, Text) else p.code for p in run)
        return f"f{quote}{body}{quote}"
    operands = [f.code for f in fields]
    if source.kind == "%":
        body = "".join(text(p, "%") if isinstance(p, Text) else p.spec for p in run)
        if source.single_operand and len(operands) == 1:
            return f"{quote}{body}{quote} % {operands[0]}"
        return f"{quote}{body}{quote} % ({', '.join(operands)}{',' if len(operands) == 1 else ''})"
    body = "".join(text(p, "{", "}") if isinstance(p, Text) else p.spec for p in run)
    return f"{quote}{body}{quote}.format({', '.join(operands)})"


def pick_quote(preferred: str, field_codes: list[str]) -> str:
    """A one-character quote that no f-string field's code uses (before Python
    3.12 a field cannot contain its string's quote, a backslash or a newline)."""
    if any("\\" in code or "\n" in code for code in field_codes):
        raise PrintRefusal("an f-string field spans lines or uses a backslash")
    for quote in (preferred, "'" if preferred == '"' else '"'):
        if not any(quote in code for code in field_codes):
            return quote
    raise PrintRefusal("an f-string field uses both quote characters")


def join_args(args: list[cst.Arg], original: Sequence[cst.Arg]) -> list[cst.Arg]:
    """Commas for a new argument list: the original ones where they exist, and
    for added arguments the layout of the call (one argument per line, with a
    trailing comma, stays so)."""
    last = original[-1] if original else None
    trailing = last.comma if last is not None else cst.MaybeSentinel.DEFAULT
    between: cst.Comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    line_break = next(
        (
            arg.comma.whitespace_after
            for arg in original
            if isinstance(arg.comma, cst.Comma)
            and isinstance(arg.comma.whitespace_after, cst.ParenthesizedWhitespace)
        ),
        None,
    )
    if isinstance(trailing, cst.Comma) and isinstance(line_break, cst.ParenthesizedWhitespace):
        # A clean line break at the arguments' indentation (no copied comment).
        between = cst.Comma(
            whitespace_after=line_break.with_changes(
                first_line=cst.TrailingWhitespace(), empty_lines=()
            )
        )
    result = []
    for i, arg in enumerate(args):
        if i == len(args) - 1:
            result.append(arg.with_changes(comma=trailing))
        elif arg is last or not isinstance(arg.comma, cst.Comma):
            result.append(arg.with_changes(comma=between))
        else:
            result.append(arg)
    return result
