"""What a printed argument shows, as pieces of a `tf.print` line.

A `print` argument is text (`Text`), a value `tf.print` prints as it is
(`Arg`: a tensor, a string tensor, a Python value), or a replacement field that
stays Python formatting (`Field`: it shows no tensor, so it is evaluated while
tracing exactly as before). Static facts about a tensor (`x.shape`, `len(x)`)
show no values; a call that turns a tensor into a Python value (`float(loss)`,
`loss.numpy()`) cannot be printed traced.
"""

from __future__ import annotations

from collections.abc import Container
from dataclasses import dataclass

import libcst as cst

from tfrewrite.facts.context import RuleContext
from tfrewrite.facts.tensor_kinds import NON_TENSOR_ATTRIBUTES
from tfrewrite.facts.tensors import TensorFacts
from tfrewrite.facts.walk import iter_expression
from tfrewrite.rules.host_values.string_literals import is_text, string_value

# Builtins whose result is static metadata even when given a tensor (`len(x)`
# is the static first dimension): a print of these is a trace-time message.
STATIC_BUILTINS = frozenset({"len", "isinstance", "type", "id", "callable", "hasattr"})
# Calls that turn a tensor into a Python value (fail on symbolic tensors).
PYTHON_CONVERSIONS = frozenset(
    {"float", "int", "bool", "complex", "str", "repr", "ascii", "format", "round", "hex", "oct"}
)
PYTHON_CONVERSION_METHODS = frozenset({"numpy", "item", "tolist", "__float__", "__int__"})


class PrintRefusal(Exception):
    """A print that shows tensors but cannot be rewritten faithfully; the
    message says why."""


@dataclass
class Text:
    """Literal text."""

    value: str


@dataclass
class Arg:
    """A standalone `tf.print` argument: a tensor, a scalar string tensor made
    by `tf.strings.as_string` (`kind="string"`), or a Python value."""

    code: str
    # "tensor"; "string" (a scalar string tensor); "python" (shows no tensor);
    # "unknown" (computed from tensors, but not known to be one: `[a, b]`, `f(a)`).
    kind: str = "tensor"


@dataclass
class Field:
    """A non-tensor replacement field that stays Python formatting, written in
    the syntax of the string it came from (`source`)."""

    code: str  # f-strings: the whole `{...}` field; otherwise the operand
    spec: str  # `%` strings: the conversion (`%5.2f`); `.format`: `{...}` without a name
    source: Source


@dataclass(eq=False)
class Source:
    kind: str  # "f", "%", "format"
    quote: str
    single_operand: bool = False  # `"..." % x` rather than `"..." % (x, y)`


def shows_values(facts: TensorFacts, node: cst.CSTNode) -> bool:
    """Whether printing `node` shows values computed from tensors. Static facts
    about a tensor (`x.shape`, `x.dtype`, `len(x)`) are known while tracing
    and print the same way once: they do not count. A name holding a
    container of tensors counts when the facts are a print's (they then
    carry `containers`, see `print_containers`)."""
    containers: Container[str] = getattr(facts, "containers", ())
    for current in iter_expression(node, _static_fact):
        if isinstance(current, cst.Name) and current.value in containers:
            return True
        if _static_fact(current):
            continue
        if isinstance(current, cst.BaseExpression) and facts.is_tensor(current):
            return True
    return False


def _static_fact(node: cst.CSTNode) -> bool:
    """`x.shape`, `x.dtype`, `len(x)`: known while tracing, printed the same."""
    if isinstance(node, cst.Attribute):
        return node.attr.value in NON_TENSOR_ATTRIBUTES
    return (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Name)
        and node.func.value in STATIC_BUILTINS
    )


def kind_of(facts: TensorFacts, node: cst.BaseExpression) -> str:
    if facts.is_tensor(node):
        return "tensor"
    return "unknown" if shows_values(facts, node) else "python"


def is_string_formatting(node: cst.CSTNode) -> bool:
    """Whether `node` has the form of Python string formatting (an f-string,
    a concatenated string, `... % x`, `"...".format(x)` / `"...".join(xs)`),
    whatever it formats. Only such a node can format a tensor
    (`formats_a_tensor`), so a print with none needs no tensor facts to
    know it formats none."""
    if isinstance(node, (cst.FormattedString, cst.ConcatenatedString)):
        return True
    if isinstance(node, cst.BinaryOperation):
        return isinstance(node.operator, cst.Modulo)
    return (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value in ("format", "join")
    )


def formats_a_tensor(facts: TensorFacts, node: cst.CSTNode) -> bool:
    """Whether `node` builds a Python string from a tensor: an f-string, a
    `"..." % x` or a `"...".format(x)` / `"...".join(xs)` showing tensor values.
    Traced, that string holds `Tensor("Sum:0", ...)`, fixed at trace time."""
    if not is_string_formatting(node):
        return False
    if isinstance(node, (cst.FormattedString, cst.ConcatenatedString)):
        return shows_values(facts, node)
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Modulo):
        return string_value(node.left) is not None and shows_values(facts, node.right)
    if (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value in ("format", "join")
        and is_text(node.func.value)
    ):
        return any(shows_values(facts, arg.value) for arg in node.args)
    return False


def check_printable(ctx: RuleContext, facts: TensorFacts, node: cst.BaseExpression) -> None:
    """Refuse an argument that turns a tensor into a Python value
    (`float(loss)`, `loss.numpy()`, `str(loss)`, or string formatting inside
    a larger expression: `f"{loss}" + " done"`): under tracing that fails or
    freezes the value, with `print` or `tf.print` alike. Anything else
    `tf.print` prints as it is: tensors with their values, nested lists and
    dicts of tensors, Python values."""
    for current in iter_expression(node):
        if formats_a_tensor(facts, current):
            raise PrintRefusal(
                f"`{ctx.code(current)}` formats a tensor into a Python string inside a larger "
                "expression; traced, the string shows `Tensor(...)` and is fixed at trace time "
                "(pass the string formatting, or the tensor, to `print` as its own argument)"
            )
        if isinstance(current, cst.Call):
            func = current.func
            converts = False
            if isinstance(func, cst.Name) and func.value in PYTHON_CONVERSIONS:
                converts = any(shows_values(facts, a.value) for a in current.args)
            elif isinstance(func, cst.Attribute) and func.attr.value in PYTHON_CONVERSION_METHODS:
                converts = shows_values(facts, func.value)
            if converts:
                raise PrintRefusal(
                    f"`{ctx.code(current)}` turns a tensor into a Python value, which fails or "
                    "is frozen under tracing (print the tensor itself)"
                )


def opaque_calls(ctx: RuleContext, facts: TensorFacts, node: cst.BaseExpression) -> list[cst.Call]:
    """Calls in a printed value that hand a tensor to code tfrewrite cannot
    see into and whose result is not known to be a tensor (`describe(loss)`,
    `self.fmt(loss)`): such a function may format the tensor into a Python
    string, which traced is built once and shows `Tensor(...)`; `tf.print`
    would then print that text on every call. TensorFlow and Keras calls,
    builtins and methods of the tensor itself are judged elsewhere."""

    def opaque(current: cst.CSTNode) -> bool:
        return (
            isinstance(current, cst.Call)
            and not facts.is_tensor(current)
            and not _seen_into(ctx, current)
            and any(shows_values(facts, arg.value) for arg in current.args)
        )

    return [c for c in iter_expression(node, opaque) if isinstance(c, cst.Call) and opaque(c)]


def _seen_into(ctx: RuleContext, call: cst.Call) -> bool:
    """A call whose effect on a tensor argument other rules judge: a
    TensorFlow, Keras or NumPy function, a builtin, a method of a value
    (`loss.numpy()`, `"...".format(loss)`)."""
    func = call.func
    if isinstance(func, cst.Name) and func.value in (
        STATIC_BUILTINS | PYTHON_CONVERSIONS | {"print", "repr", "format"}
    ):
        return True
    qualified = ctx.names.qualified_name(func)
    if qualified is not None and qualified.split(".", 1)[0] in (
        "tensorflow",
        "keras",
        "numpy",
        "tf_keras",
    ):
        return True
    if isinstance(func, cst.Attribute) and not (
        isinstance(func.value, cst.Name) and func.value.value == "self"
    ):
        return qualified is None  # a method of a value: `loss.numpy()`, `"{}".format(x)`
    return False
