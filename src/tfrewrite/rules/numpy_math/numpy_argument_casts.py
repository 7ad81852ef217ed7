"""Binding a NumPy call's arguments and writing the TensorFlow call in its place.

The rewrite edits the call in place: the callee changes, NumPy's parameters
are renamed to TensorFlow's, defaults that change nothing are dropped, and the
arguments keep their text, layout and comments.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import libcst as cst

from tfrewrite.facts.walk import comments_in
from tfrewrite.rewrite.numpy_ops import PARAMETER_REASONS, Mapping
from tfrewrite.rewrite.traced_calls import Refusal


@dataclass
class Bound:
    """A call's arguments by NumPy parameter name, with the `cst.Arg` each came from."""

    args: dict[str, cst.Arg]

    def value(self, param: str) -> cst.BaseExpression | None:
        arg = self.args.get(param)
        return arg.value if arg is not None else None


def source_code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def bind(call: cst.Call, mapping: Mapping) -> Bound:
    """Arguments by NumPy parameter; refuses `*`/`**` unpacking and
    parameters the mapping has no place for."""
    args: dict[str, cst.Arg] = {}
    for position, arg in enumerate(call.args):
        if arg.star:
            raise Refusal(
                f"the unpacked argument `{arg.star}{source_code(arg.value)}` hides which "
                "parameters are passed"
            )
        if arg.keyword is None:
            if position >= len(mapping.params):
                raise Refusal(f"it takes at most {len(mapping.params)} positional arguments here")
            param = mapping.params[position]
        else:
            param = arg.keyword.value
            if param not in mapping.params:
                raise Refusal(f"the argument `{param}=` has no TensorFlow counterpart")
        args[param] = arg
    for param, arg in args.items():
        if param in mapping.data or param in mapping.renamed:
            continue
        if source_code(arg.value).strip() == mapping.droppable.get(param):
            continue
        raise Refusal(
            f"`{param}={source_code(arg.value)}`: "
            + PARAMETER_REASONS.get(param, "it has no TensorFlow counterpart")
        )
    return Bound(args)


@dataclass(frozen=True)
class OutArg:
    """One argument of the TensorFlow call: its TensorFlow parameter, its
    value, and the NumPy argument it comes from (whose layout it keeps)."""

    param: str
    value: cst.BaseExpression
    origin: cst.Arg | None


def build_call(
    call: cst.Call, func: str, out: list[OutArg], tf_positional: tuple[str, ...]
) -> cst.Call:
    """`call` with a new callee and arguments, keeping each kept argument's
    whitespace, comma and comments, and the call's closing layout."""
    args: list[cst.Arg] = []
    positional = True
    for index, item in enumerate(out):
        positional = (
            positional
            and index < len(tf_positional)
            and tf_positional[index] == item.param
            and item.origin is not None
            and item.origin.keyword is None
        )
        base = item.origin if item.origin is not None else cst.Arg(item.value)
        base = base.with_changes(value=item.value)
        if positional:
            arg = base.with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT)
        elif base.keyword is not None:
            arg = base.with_changes(keyword=cst.Name(item.param))
        else:
            arg = base.with_changes(
                keyword=cst.Name(item.param),
                equal=cst.AssignEqual(
                    whitespace_before=cst.SimpleWhitespace(""),
                    whitespace_after=cst.SimpleWhitespace(""),
                ),
            )
        args.append(arg)
    last_original = call.args[-1] if call.args else None
    for index, arg in enumerate(args):
        if index < len(args) - 1:
            if not isinstance(arg.comma, cst.Comma):
                args[index] = arg.with_changes(
                    comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
                )
        elif last_original is not None:
            args[index] = arg.with_changes(
                comma=_closing_comma(arg.comma, last_original.comma),
                whitespace_after_arg=last_original.whitespace_after_arg,
            )
    return call.with_changes(func=cst.parse_expression(func), args=args)


def _closing_comma(
    own: cst.Comma | cst.MaybeSentinel, closing: cst.Comma | cst.MaybeSentinel
) -> cst.Comma | cst.MaybeSentinel:
    """The comma of an argument that becomes the last one: the original last
    argument's (trailing comma or none, and the line the `)` sits on), with
    the comment that ended this argument's own line."""
    if not isinstance(closing, cst.Comma):
        return closing
    if isinstance(own, cst.Comma):
        mine, theirs = own.whitespace_after, closing.whitespace_after
        if isinstance(mine, cst.ParenthesizedWhitespace) and isinstance(
            theirs, cst.ParenthesizedWhitespace
        ):
            return closing.with_changes(
                whitespace_after=theirs.with_changes(
                    first_line=mine.first_line, empty_lines=mine.empty_lines
                )
            )
    return closing


def comments(node: cst.CSTNode) -> list[str]:
    return sorted(comment.value for comment in comments_in(node))


def parenthesized(
    code: str, call: cst.Call, ancestors: Sequence[cst.CSTNode]
) -> cst.BaseExpression:
    """`code` as the replacement of `call`: an expression that is not a call
    (`tf.math.log(x) / math.log(2.0)`) gets parentheses where an operator,
    attribute or subscript around it would otherwise bind into it."""
    expression = cst.parse_expression(code)
    if call.lpar:
        return expression.with_changes(lpar=call.lpar, rpar=call.rpar)
    parent = ancestors[-1] if ancestors else None
    loose = (cst.Add, cst.Subtract)  # bind more loosely than the `/` of the replacement
    binds = isinstance(
        parent, (cst.UnaryOperation, cst.Attribute, cst.Subscript, cst.Call, cst.Await)
    ) or (isinstance(parent, cst.BinaryOperation) and not isinstance(parent.operator, loose))
    if binds:
        return expression.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return expression
