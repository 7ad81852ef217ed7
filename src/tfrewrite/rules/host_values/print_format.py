"""Formatted strings of tensors into `tf.print` pieces.

An f-string, a `"..." % (...)` or a `"...".format(...)` of tensors is text that
Python computes; traced, it holds `Tensor("Sum:0", ...)`, fixed at trace time.
Here each of them is split into its literal text, the tensors it shows (each
becomes a `tf.print` argument) and the fields that show no tensor (they stay
Python formatting). A format spec on a scalar float tensor becomes
`tf.strings.as_string` with the digits Python gives.
"""

from __future__ import annotations

import re
import string

import libcst as cst

from tfrewrite.facts.context import RuleContext
from tfrewrite.facts.tensors import TensorFacts
from tfrewrite.rules.host_values.print_pieces import (
    Arg,
    Field,
    PrintRefusal,
    Source,
    Text,
    check_printable,
    shows_values,
)
from tfrewrite.rules.host_values.string_literals import (
    decode_fstring_text,
    quote_of,
    string_value,
)

# Python format specs that `tf.strings.as_string` reproduces digit for digit on
# float32/float64 tensors (checked against `format()` on TensorFlow 2.21,
# including inf and nan): optional width (space padded), optional precision,
# fixed (`f`) or scientific (`e`) notation.
_FLOAT_SPEC = re.compile(r"(?P<width>[1-9][0-9]*)?(?:\.(?P<precision>[0-9]+))?(?P<type>[fe])")
# One `%` conversion specifier.
_PERCENT_SPEC = re.compile(
    r"%(?P<key>\([^)]*\))?(?P<flags>[-#0 +]*)(?P<width>\*|[0-9]+)?"
    r"(?:\.(?P<precision>\*|[0-9]+))?[hlL]?(?P<type>[diouxXeEfFgGcrsa%])"
)


def argument_pieces(
    ctx: RuleContext,
    facts: TensorFacts,
    node: cst.BaseExpression,
    tf_alias: str,
    assumptions: list[str],
) -> list[Text | Arg | Field] | None:
    """The pieces a formatted-string argument prints, or None when the argument
    is printed as it is (a tensor, a Python value, a container)."""
    if not shows_values(facts, node):
        return None
    # `"..." % x` is text even when `x` is a tensor (`str.__mod__` runs first).
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Modulo):
        template = string_value(node.left)
        if template is not None:
            return percent_pieces(ctx, facts, node, template, tf_alias, assumptions)
    if facts.is_tensor(node):
        # `"loss: " + "%s" % x` is a tensor to the analysis (a string plus a
        # string tensor) but holds Python string formatting of `x`.
        check_printable(ctx, facts, node)
        return None
    if isinstance(node, (cst.FormattedString, cst.ConcatenatedString)):
        return string_pieces(ctx, facts, node, tf_alias, assumptions)
    if (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value == "format"
    ):
        template = string_value(node.func.value)
        if template is not None:
            return format_pieces(ctx, facts, node, template, tf_alias, assumptions)
    check_printable(ctx, facts, node)
    return None


def string_pieces(
    ctx: RuleContext,
    facts: TensorFacts,
    node: cst.BaseExpression,
    tf_alias: str,
    assumptions: list[str],
) -> list[Text | Arg | Field]:
    if isinstance(node, cst.ConcatenatedString):
        return [
            *string_pieces(ctx, facts, node.left, tf_alias, assumptions),
            *string_pieces(ctx, facts, node.right, tf_alias, assumptions),
        ]
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        if not isinstance(value, str):
            raise PrintRefusal("a bytes literal cannot be joined with text")
        return [Text(value)]
    assert isinstance(node, cst.FormattedString)
    if "b" in node.prefix.lower():
        raise PrintRefusal("a bytes literal cannot be joined with text")
    raw = "r" in node.prefix.lower()
    source = Source("f", node.end)
    pieces: list[Text | Arg | Field] = []
    for part in node.parts:
        if isinstance(part, cst.FormattedStringText):
            pieces.append(Text(decode_fstring_text(part.value, node.end, raw)))
            continue
        assert isinstance(part, cst.FormattedStringExpression)
        expression = part.expression
        if not shows_values(facts, expression):
            pieces.append(Field(ctx.code(part), "", source))
            continue
        check_printable(ctx, facts, expression)
        if not facts.is_tensor(expression):
            if part.conversion or part.format_spec or part.equal:
                raise PrintRefusal(
                    f"`{ctx.code(part)}` formats `{ctx.code(expression)}`, which is not known "
                    "to be a tensor"
                )
            pieces.append(Arg(ctx.code(expression), "unknown"))
            continue
        if part.equal is not None:
            # `{loss=}` prints the expression's text, then the value.
            debug = ctx.code(part.with_changes(conversion=None, format_spec=None))
            pieces.append(Text(debug[1:-1]))
        spec = None
        if part.format_spec:
            if any(isinstance(p, cst.FormattedStringExpression) for p in part.format_spec):
                raise PrintRefusal(f"the format spec of `{ctx.code(part)}` is computed at run time")
            spec = "".join(
                p.value for p in part.format_spec if isinstance(p, cst.FormattedStringText)
            )
        if part.conversion is not None and spec:
            raise PrintRefusal(f"`{ctx.code(part)}` formats the text of a tensor, not its value")
        pieces.append(tensor_field(ctx, facts, expression, spec or "", tf_alias, assumptions))
    return pieces


def tensor_field(
    ctx: RuleContext,
    facts: TensorFacts,
    expression: cst.BaseExpression,
    spec: str,
    tf_alias: str,
    assumptions: list[str],
) -> Arg:
    """A tensor formatted with a `format()` spec, as a `tf.print` argument."""
    code = ctx.code(expression)
    if spec in ("", "d"):
        # No spec: the value. `d` formats only integers, which tf.print prints exactly.
        return Arg(code)
    match = _FLOAT_SPEC.fullmatch(spec)
    if match is None:
        raise PrintRefusal(f"the format spec `{spec}` of `{code}` has no TensorFlow equivalent")
    return as_string(
        ctx,
        facts,
        expression,
        match["precision"],
        match["type"],
        match["width"],
        tf_alias,
        assumptions,
    )


def as_string(
    ctx: RuleContext,
    facts: TensorFacts,
    expression: cst.BaseExpression,
    precision: str | None,
    kind: str,
    width: str | None,
    tf_alias: str,
    assumptions: list[str],
) -> Arg:
    """`tf.strings.as_string` with the digits Python's `f`/`e` formatting gives.
    Python formats a tensor this way only when it is a scalar (else
    `TypeError`, eagerly too: "only 0-dimensional arrays can be converted");
    `as_string` would format every element, so a tensor not known to be a
    scalar is written `tf.reshape(x, [])`, which holds wherever the original
    ran."""
    code = ctx.code(expression)
    if not facts.is_scalar_tensor(expression):
        code = f"{tf_alias}.reshape({ctx.code(expression.with_changes(lpar=(), rpar=()))}, [])"
        note = (
            f"`{ctx.code(expression)}` is taken to be a scalar, as Python's number format requires"
        )
        if note not in assumptions:
            assumptions.append(note)
    arguments = [code, f"precision={int(precision) if precision is not None else 6}"]
    if kind == "e":
        arguments.append("scientific=True")
    if width is not None:
        arguments.append(f"width={int(width)}")
    note = "`tf.strings.as_string` with a precision assumes a floating-point tensor"
    if note not in assumptions:
        assumptions.append(note)
    return Arg(f"{tf_alias}.strings.as_string({', '.join(arguments)})", "string")


def percent_pieces(
    ctx: RuleContext,
    facts: TensorFacts,
    node: cst.BinaryOperation,
    template: str,
    tf_alias: str,
    assumptions: list[str],
) -> list[Text | Arg | Field]:
    right = node.right
    if isinstance(right, cst.Tuple):
        if any(isinstance(e, cst.StarredElement) for e in right.elements):
            raise PrintRefusal("cannot see what the `%` operands unpack")
        operands = [e.value for e in right.elements]
        single = False
    else:
        operands = [right]
        single = True
    source = Source("%", quote_of(node.left), single_operand=single)
    pieces: list[Text | Arg | Field] = []
    position = 0
    remaining = list(operands)
    for match in _PERCENT_SPEC.finditer(template):
        if match.start() > position:
            pieces.append(Text(template[position : match.start()]))
        position = match.end()
        if match["type"] == "%" and match.group(0) == "%%":
            pieces.append(Text("%"))
            continue
        if match["key"] is not None or "*" in (match["width"] or "") + (match["precision"] or ""):
            raise PrintRefusal("`%` formatting with keys or `*` widths is not converted")
        if not remaining:
            raise PrintRefusal("the `%` template has more conversions than operands")
        operand = remaining.pop(0)
        if not shows_values(facts, operand):
            pieces.append(Field(ctx.code(operand), match.group(0), source))
            continue
        check_printable(ctx, facts, operand)
        kind, flags = match["type"], match["flags"]
        plain = not (flags or match["width"] or match["precision"])
        if not facts.is_tensor(operand):
            if kind != "s" or not plain:
                raise PrintRefusal(
                    f"`{match.group(0)}` formats `{ctx.code(operand)}`, which is not known "
                    "to be a tensor"
                )
            pieces.append(Arg(ctx.code(operand), "unknown"))
        elif (kind in "sra" or (kind in "di" and facts.kind(operand).integer)) and plain:
            # `%d` of an integer tensor prints its digits, as `tf.print` does.
            pieces.append(Arg(ctx.code(operand)))
        elif (
            kind in "di"
            and not flags
            and match["width"] is not None
            and match["precision"] is None
            and facts.kind(operand).integer
        ):
            # `%4d` of an integer tensor: printf's padding, as Python pads.
            operand_code = ctx.code(operand)
            if not facts.is_scalar_tensor(operand):
                operand_code = f"{tf_alias}.reshape({operand_code}, [])"
            pieces.append(
                Arg(
                    f"{tf_alias}.strings.as_string({operand_code}, width={int(match['width'])})",
                    "string",
                )
            )
        elif kind in "fe" and not flags:
            pieces.append(
                as_string(
                    ctx,
                    facts,
                    operand,
                    match["precision"],
                    kind,
                    match["width"],
                    tf_alias,
                    assumptions,
                )
            )
        else:
            reason = (
                "truncates a float tensor, and nothing shows this one is an integer"
                if kind in "di"
                else "has no TensorFlow equivalent"
            )
            raise PrintRefusal(f"`{match.group(0)}` on the tensor `{ctx.code(operand)}` {reason}")
    if position < len(template):
        pieces.append(Text(template[position:]))
    if remaining:
        raise PrintRefusal("the `%` template has fewer conversions than operands")
    return pieces


def format_pieces(
    ctx: RuleContext,
    facts: TensorFacts,
    node: cst.Call,
    template: str,
    tf_alias: str,
    assumptions: list[str],
) -> list[Text | Arg | Field]:
    if any(arg.star for arg in node.args):
        raise PrintRefusal("cannot see what the `.format` arguments unpack")
    positional = [arg.value for arg in node.args if arg.keyword is None]
    named = {arg.keyword.value: arg.value for arg in node.args if arg.keyword is not None}
    assert isinstance(node.func, cst.Attribute)
    source = Source("format", quote_of(node.func.value))
    pieces: list[Text | Arg | Field] = []
    auto = 0
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as err:
        raise PrintRefusal(f"the `.format` template is invalid: {err}") from err
    for literal, field_name, spec, conversion in parsed:
        if literal:
            pieces.append(Text(literal))
        if field_name is None:
            continue
        head = re.match(r"[^.\[]*", field_name).group(0)  # type: ignore[union-attr]
        path = field_name[len(head) :]
        if head == "":
            index: int | str = auto
            auto += 1
        elif head.isdigit():
            index = int(head)
        else:
            index = head
        operand = (
            positional[index]
            if isinstance(index, int) and index < len(positional)
            else named.get(str(index))
        )
        if operand is None:
            raise PrintRefusal(f"the `.format` field `{{{field_name}}}` has no argument")
        if "{" in spec:
            if shows_values(facts, operand):
                raise PrintRefusal(f"the format spec of `{{{field_name}}}` is computed at run time")
        if not shows_values(facts, operand):
            text = (
                "{"
                + path
                + (f"!{conversion}" if conversion else "")
                + (f":{spec}" if spec else "")
                + "}"
            )
            pieces.append(Field(ctx.code(operand), text, source))
            continue
        check_printable(ctx, facts, operand)
        if path:
            raise PrintRefusal(f"the `.format` field `{{{field_name}}}` reads into a tensor")
        if not facts.is_tensor(operand) and (conversion or spec):
            raise PrintRefusal(
                f"the `.format` field `{{{field_name}}}` formats a value computed from a "
                "tensor that is not known to be one"
            )
        if not facts.is_tensor(operand):
            pieces.append(Arg(ctx.code(operand), "unknown"))
            continue
        if conversion and spec:
            raise PrintRefusal(
                f"`{{{field_name}!{conversion}:{spec}}}` formats the text of a tensor, "
                "not its value"
            )
        pieces.append(tensor_field(ctx, facts, operand, spec, tf_alias, assumptions))
    return pieces
