"""TFR103: Python `print` of tensors in traced code becomes `tf.print`.

Under tracing a Python `print` runs once, while the graph is built, and shows
symbolic tensors (`Tensor("add:0", shape=(), dtype=float32)`), never their
values. `tf.print` is an op in the graph: it prints on every call, with values.

The rewrite keeps what the user reads: `sep` and `end` are kept, the output
stream `print` used is kept (`tf.print` defaults to standard error, `print` to
standard output), and formatted strings (f-strings, `%`, `str.format`) become
`tf.print` arguments joined with `sep=""`, so `print(f"loss={loss}")` reads
`loss=0.25` both ways. Text that only Python can compute (non-tensor fields)
stays Python formatting, evaluated while tracing exactly as before.
"""

from __future__ import annotations

import ast
import re
import string
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import libcst as cst

from tfrewrite.analysis.index import TF_FUNCTION_NAMES, ModuleIndex
from tfrewrite.analysis.project import keras_leaf
from tfrewrite.analysis.tensors import NON_TENSOR_ATTRIBUTES, TensorFacts
from tfrewrite.analysis.walk import child_nodes
from tfrewrite.context import FunctionScope, RuleContext
from tfrewrite.findings import Applicability
from tfrewrite.rules.base import CstFix, ImportRequest, Invalid, NodeEdit, Rule, Valid, Violation

# The stream a rewritten `print` without `file=` writes to: `print`'s own.
DEFAULT_OUTPUT_STREAM = "stdout"
# A rewritten call longer than this is written one argument per line.
MAX_LINE_LENGTH = 88

# Builtins whose result is static metadata even when given a tensor (`len(x)`
# is the static first dimension): a print of these is a trace-time message.
_STATIC_BUILTINS = frozenset({"len", "isinstance", "type", "id", "callable", "hasattr"})
_STREAMS = {"sys.stdout": "stdout", "sys.stderr": "stderr"}
# Calls that turn a tensor into a Python value (fail on symbolic tensors).
_PYTHON_CONVERSIONS = frozenset(
    {"float", "int", "bool", "complex", "str", "repr", "ascii", "format", "round", "hex", "oct"}
)
_PYTHON_CONVERSION_METHODS = frozenset({"numpy", "item", "tolist", "__float__", "__int__"})

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


class _Refusal(Exception):
    """A print that shows tensors but cannot be rewritten faithfully; the
    message says why."""


# -- pieces of printed text ---------------------------------------------------------
@dataclass
class _Text:
    """Literal text."""

    value: str


@dataclass
class _Arg:
    """A standalone `tf.print` argument: a tensor, a scalar string tensor made
    by `tf.strings.as_string` (`kind="string"`), or a Python value."""

    code: str
    # "tensor"; "string" (a scalar string tensor); "python" (shows no tensor);
    # "unknown" (computed from tensors, but not known to be one: `[a, b]`, `f(a)`).
    kind: str = "tensor"


@dataclass
class _Field:
    """A non-tensor replacement field that stays Python formatting, written in
    the syntax of the string it came from (`source`)."""

    code: str  # f-strings: the whole `{...}` field; otherwise the operand
    spec: str  # `%` strings: the conversion (`%5.2f`); `.format`: `{...}` without a name
    source: _Source


@dataclass(eq=False)
class _Source:
    kind: str  # "f", "%", "format"
    quote: str
    single_operand: bool = False  # `"..." % x` rather than `"..." % (x, y)`


@dataclass
class _Rewrite:
    """A rewritten call, or the reason it cannot be rewritten."""

    replacement: cst.Call
    imports: tuple[ImportRequest, ...]
    assumptions: list[str] = field(default_factory=list)


# -- the rule -------------------------------------------------------------------------
class PrintInTracedCode(Rule):
    code = "TFR103"
    name = "print-in-traced-code"
    summary = "`print` of a tensor in traced code prints once, at trace time; use `tf.print`"
    fix_applicability = Applicability.SAFE
    # The stream used when `print` had no `file=` argument ("stdout" or "stderr").
    output_stream = DEFAULT_OUTPUT_STREAM
    explanation = """
        ## What it does
        Finds `print(...)` calls in code that runs traced (`@tf.function`, a
        loss given to `compile`, a Keras `call`, ...) when an argument involves a
        tensor, and rewrites them to `tf.print`.

        ## Why is this bad under tracing?
        `@tf.function` runs the Python body once to build a graph. A Python
        `print` runs during that trace only: it prints one line, on the first
        call, showing `Tensor("add:0", shape=(), dtype=float32)` instead of the
        value, and never again. `tf.print` is a graph op: it prints the values on
        every call. (AutoGraph does not convert `print` to `tf.print`.)

        ## How the rewrite keeps the output
        - `sep` and `end` are kept; `flush` is dropped (`tf.print` writes
          through TensorFlow's runtime, which flushes each print).
        - `print` writes to standard output, `tf.print` to standard error by
          default, so the rewrite passes `output_stream=sys.stdout` (adding
          `import sys` when needed). `file=sys.stderr` / `file=sys.stdout` (any
          spelling of the `sys` import) become `output_stream=`.
        - f-strings, `%`-formatting and `str.format` become separate `tf.print`
          arguments with `sep=""`: `print(f"loss={loss}")` becomes
          `tf.print("loss=", loss, sep="", output_stream=sys.stdout)`. Fields
          that are not tensors stay Python formatting, evaluated while tracing as
          before.
        - A format spec on a scalar tensor (`{loss:.4f}`, `%.4f`,
          `{loss:10.3e}`) becomes `tf.strings.as_string(loss, precision=4)`
          (with `scientific` and `width` as needed), which gives the digits
          Python gives for float32/float64 (checked against `format()`,
          including inf and nan). `tf.print` puts quotes around string tensors
          printed among other inputs, so such a line is joined into one string,
          `tf.print(tf.strings.join(["loss=", tf.strings.as_string(loss,
          precision=4)]))`, with the other tensors formatted by
          `tf.strings.format("{}", x)` as `tf.print` would. `as_string` rejects a
          precision for integer tensors (at trace time, loudly), so this fix is
          unsafe unless you know the tensor is floating point.
        - An expression computed from tensors that is not known to be a tensor
          (`scale(loss)`, `loss if ok else 0.0`, `[a, b]`) is passed to
          `tf.print` as it is: it prints a tensor's values, nested lists and
          dicts of tensors, and Python values alike.
        - Tensors are printed by `tf.print`'s formatting (`0.25`, `[1 2 3]`,
          long tensors summarised with `...`), not as `tf.Tensor(0.25, shape=(),
          dtype=float32)`: the values are the same, the decoration is not.
          Non-tensor, non-string arguments are formatted with `pprint` by
          `tf.print`.

        ## Fix safety
        The fix is safe in a function decorated with a plain `@tf.function`
        (not a method of a Keras class, not a loss given to `compile`).
        `tf.print` has no XLA kernel: under `tf.function(jit_compile=True)` it
        fails with `InvalidArgumentError ... StringFormat`, so prints there are
        reported with no fix. Keras 3's `compile(jit_compile="auto")` uses XLA on
        GPUs (and not on CPU-only machines), so in a loss given to `compile`, a
        Keras `Loss`/`Layer`/`Model` method, a function wrapped in
        `tf.function(...)` elsewhere, or code called from those, the rewrite can
        make `fit` fail on a GPU while passing on a laptop: that fix is unsafe
        (applied with `--unsafe-fixes`), and the remedy on a GPU is
        `compile(jit_compile=False)` or removing the print.

        ## Left alone, or reported with no fix
        - A `print` of constant text or of static facts (`x.shape`, `x.dtype`,
          `len(x)`) is a trace-time message and is not touched; nor is any
          `print` outside traced code.
        - `print(*args)` / `print(**kwargs)`: what is printed cannot be seen.
        - An argument that turns a tensor into a Python value (`float(loss)`,
          `loss.numpy()`, `str(loss)`, `round(loss, 2)`): it fails or freezes
          under tracing.
        - A format spec or `%` conversion with no faithful TensorFlow
          equivalent (`{loss:>8}`, `{loss:08.2f}`, `%d` on a tensor that may be
          float, ...), a number format on a tensor not known to be a scalar, and
          any format spec on a value not known to be a tensor.
        - `file=` other than `sys.stdout` / `sys.stderr`, and a `print` whose
          value is used (in a lambda or an assignment).
        """
    examples = (
        Invalid(
            """\
            import tensorflow as tf

            @tf.function
            def step(x):
                loss = tf.reduce_mean(x)
                print("loss:", loss)
                return loss
            """,
            """\
            import sys

            import tensorflow as tf

            @tf.function
            def step(x):
                loss = tf.reduce_mean(x)
                tf.print("loss:", loss, output_stream=sys.stdout)
                return loss
            """,
        ),
        Invalid(
            """\
            import sys
            import tensorflow as tf

            @tf.function
            def step(x):
                loss = tf.reduce_mean(x)
                print(f"loss={loss}", file=sys.stderr, flush=True)
                return loss
            """,
            """\
            import sys
            import tensorflow as tf

            @tf.function
            def step(x):
                loss = tf.reduce_mean(x)
                tf.print("loss=", loss, sep="", output_stream=sys.stderr)
                return loss
            """,
        ),
        Invalid(
            """\
            import sys
            import tensorflow as tf

            @tf.function
            def step(x, epoch):
                loss = tf.reduce_mean(x)
                print(f"epoch {epoch}: loss {loss:.4f}")
                return loss
            """,
            """\
            import sys
            import tensorflow as tf

            @tf.function
            def step(x, epoch):
                loss = tf.reduce_mean(x)
                tf.print(
                    tf.strings.join([
                        f"epoch {epoch}: loss ",
                        tf.strings.as_string(loss, precision=4),
                    ]),
                    output_stream=sys.stdout,
                )
                return loss
            """,
            unsafe=True,
            note="a format spec needs a float tensor: unsafe",
        ),
        Invalid(
            """\
            import sys
            import tensorflow as tf

            def mse(y_true, y_pred):
                loss = tf.reduce_mean(tf.square(y_true - y_pred))
                print("loss", loss, sep="=")
                return loss

            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.compile(optimizer="sgd", loss=mse)
            """,
            """\
            import sys
            import tensorflow as tf

            def mse(y_true, y_pred):
                loss = tf.reduce_mean(tf.square(y_true - y_pred))
                tf.print("loss", loss, sep="=", output_stream=sys.stdout)
                return loss

            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.compile(optimizer="sgd", loss=mse)
            """,
            unsafe=True,
            note="Keras may compile the loss with XLA on a GPU: unsafe",
        ),
        Invalid(
            """\
            import tensorflow as tf

            @tf.function(jit_compile=True)
            def step(x):
                loss = tf.reduce_mean(x)
                print("loss:", loss)
                return loss
            """,
            None,
            note="tf.print has no XLA kernel: finding only",
        ),
        Invalid(
            """\
            import tensorflow as tf

            @tf.function
            def step(x):
                loss = tf.reduce_mean(x)
                print("loss:", float(loss))
                return loss
            """,
            None,
            note="a tensor turned into a Python value: finding only",
        ),
        Valid(
            """\
            import tensorflow as tf

            @tf.function
            def step(x):
                print("tracing step for shape", x.shape)
                return tf.reduce_mean(x)
            """,
            note="a trace-time message: constant text and static shape",
        ),
        Valid(
            """\
            import tensorflow as tf

            def evaluate(x):
                loss = tf.reduce_mean(x)
                print("loss:", loss)
                return loss
            """,
            note="not traced: eager `print` shows the value",
        ),
    )

    def applies_to(self, index: ModuleIndex, traced_qualnames: set[str]) -> bool:
        """Only files where some traced function calls `print` (a pass-1 fact)."""
        return any(
            (info := index.functions.get(q)) is not None and "print" in info.calls
            for q in traced_qualnames
        )

    def check(self, ctx: RuleContext) -> Iterator[Violation]:
        for root in ctx.traced_functions():
            yield from self._walk(ctx, root)

    # -- finding prints -----------------------------------------------------------
    def _walk(self, ctx: RuleContext, root: FunctionScope) -> Iterator[Violation]:
        if _shadows_print(ctx):
            return
        # (node, innermost function, parent, indentation of the node's statement)
        stack: list[tuple[cst.CSTNode, FunctionScope, cst.CSTNode | None, str]] = [
            (root.node, root, None, "")
        ]
        while stack:
            node, scope, parent, indent = stack.pop()
            if isinstance(node, cst.ClassDef):
                continue
            if isinstance(node, cst.FunctionDef) and node is not scope.node:
                inner = ctx.scope_of(node)
                if inner is None:
                    continue
                scope = inner
            if isinstance(node, cst.Call) and _is_print(node):
                violation = self._check_print(ctx, node, scope, parent, indent)
                if violation is not None:
                    yield violation
            if isinstance(node, cst.IndentedBlock):
                indent += node.indent if node.indent is not None else ctx.module.default_indent
            stack.extend((child, scope, node, indent) for child in reversed(child_nodes(node)))

    def _check_print(
        self,
        ctx: RuleContext,
        call: cst.Call,
        scope: FunctionScope,
        parent: cst.CSTNode | None,
        indent: str,
    ) -> Violation | None:
        facts = ctx.tensors(scope)
        if any(arg.star for arg in call.args):
            return Violation(
                call,
                "`print` with `*args`/`**kwargs` in traced code runs once, at trace time; "
                "not rewritten: what it prints cannot be seen (use `tf.print` on the tensors)",
            )
        positional = [arg.value for arg in call.args if arg.keyword is None]
        if not any(_shows_values(facts, value) for value in positional):
            return None  # constant text or static facts: a trace-time message
        problem = (
            "`print` in traced code runs once, at trace time, and shows `Tensor(...)`, not values"
        )
        context_refusal, context_note = _context_applicability(ctx, scope)
        if context_refusal is not None:
            return Violation(call, f"{problem}; not rewritten: {context_refusal}")
        if not isinstance(parent, cst.Expr):
            return Violation(
                call,
                f"{problem}; not rewritten: the value of this `print(...)` is used "
                "(move it to its own statement)",
            )
        try:
            rewrite = self._rewrite(ctx, call, facts, indent)
        except _Refusal as refusal:
            return Violation(call, f"{problem}; not rewritten: {refusal}")
        notes = [*rewrite.assumptions, *([context_note] if context_note else [])]
        applicability = Applicability.UNSAFE if notes else Applicability.SAFE
        message = "Replace `print` with `tf.print`"
        if notes:
            message += " (unsafe: " + "; ".join(notes) + ")"
        fix = CstFix(
            message, (NodeEdit(call, rewrite.replacement),), rewrite.imports, applicability
        )
        return Violation(call, f"{problem}; use `tf.print`", fix)

    # -- building the replacement ---------------------------------------------------------
    def _rewrite(
        self, ctx: RuleContext, call: cst.Call, facts: TensorFacts, indent: str
    ) -> _Rewrite:
        tf_alias, imports = ctx.tensorflow()
        keywords: dict[str, cst.Arg] = {}
        for arg in call.args:
            if arg.keyword is not None:
                keywords[arg.keyword.value] = arg
        unknown = sorted(set(keywords) - {"sep", "end", "file", "flush"})
        if unknown:
            raise _Refusal(f"`print` has no keyword `{unknown[0]}`")
        stream = self._output_stream(ctx, keywords.get("file"))
        sys_alias = ctx.names.alias_for("sys")
        if sys_alias is None:
            sys_alias = "sys"
            imports = (*imports, ImportRequest("sys"))
        assumptions: list[str] = []
        pieces_per_arg = [
            _pieces(ctx, facts, arg.value, tf_alias, assumptions)
            for arg in call.args
            if arg.keyword is None
        ]
        # Keyword arguments that carry over unchanged (a `None` is print's default).
        kept = [
            keywords[name]
            for name in ("sep", "end")
            if name in keywords and not _is_none(keywords[name].value)
        ]
        stream_arg = cst.Arg(
            keyword=cst.Name("output_stream"),
            value=cst.parse_expression(f"{sys_alias}.{stream}"),
            equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
        )
        func = cst.parse_expression(f"{tf_alias}.print")
        if all(pieces is None for pieces in pieces_per_arg):
            # Nothing to flatten: keep the call's own layout and comments.
            kept_ids = {id(arg) for arg in kept}
            args = [arg for arg in call.args if arg.keyword is None or id(arg) in kept_ids]
            return _Rewrite(
                call.with_changes(func=func, args=_join_args([*args, stream_arg], call.args)),
                imports,
                assumptions,
            )
        separator: list[_Text | _Arg | _Field]
        sep = keywords.get("sep")
        if sep is None or _is_none(sep.value):
            separator = [_Text(" ")]
        else:
            text = _string_value(sep.value)
            separator = [_Text(text)] if text is not None else [_Arg(ctx.code(sep.value), "python")]
        flat: list[_Text | _Arg | _Field] = []
        positional_args = [a for a in call.args if a.keyword is None]
        for i, (arg, pieces) in enumerate(zip(positional_args, pieces_per_arg, strict=True)):
            if i:
                flat.extend(separator)
            if pieces is None and _is_text(arg.value):
                # Constant or Python-only text: joined with its neighbours.
                pieces = _string_pieces(ctx, facts, arg.value, tf_alias, assumptions)
            if pieces is None:
                pieces = [_Arg(ctx.code(arg.value), _kind_of(facts, arg.value))]
            flat.extend(pieces)
        end = keywords.get("end")
        unit = ctx.module.default_indent
        if any(isinstance(p, _Arg) and p.kind == "string" for p in flat):
            # tf.print quotes string tensors among other inputs, and prints a
            # lone scalar string as it is: join the line into one string.
            elements = _render(_as_text(ctx, flat, tf_alias))
            joined = f"{tf_alias}.strings.join([{', '.join(elements)}])"
            if len(indent + unit + joined) + 1 > MAX_LINE_LENGTH:
                # Relative indentation: LibCST adds the enclosing block's.
                lines = "".join(f"{unit * 2}{e},\n" for e in elements)
                joined = f"{tf_alias}.strings.join([\n{lines}{unit}])"
            parts = [joined]
        else:
            parts = [*_render(flat), 'sep=""']
        if end is not None and not _is_none(end.value):
            parts.append(f"end={ctx.code(end.value)}")
        parts.append(f"output_stream={sys_alias}.{stream}")
        code = f"{tf_alias}.print({', '.join(parts)})"
        if "\n" in code or len(indent + code) > MAX_LINE_LENGTH:
            lines = "".join(f"{unit}{part},\n" for part in parts)
            code = f"{tf_alias}.print(\n{lines})"
        replacement = cst.parse_expression(code)
        assert isinstance(replacement, cst.Call)
        return _Rewrite(replacement, imports, assumptions)

    def _output_stream(self, ctx: RuleContext, file_arg: cst.Arg | None) -> str:
        if file_arg is None or _is_none(file_arg.value):
            return ctx.settings.get("print-output-stream", self.output_stream)
        stream = _STREAMS.get(ctx.names.qualified_name(file_arg.value) or "")
        if stream is None:
            raise _Refusal(
                f"`tf.print` writes only to `sys.stdout`, `sys.stderr`, logging or a "
                f"`file://` path, not to `{ctx.code(file_arg.value)}`"
            )
        return stream


# -- helpers: where the print is --------------------------------------------------------
def _is_print(call: cst.Call) -> bool:
    return isinstance(call.func, cst.Name) and call.func.value == "print"


def _shadows_print(ctx: RuleContext) -> bool:
    """`print` is not the builtin in this file (imported or defined)."""
    return "print" in ctx.index.imports or "print" in ctx.index.functions


def _context_applicability(ctx: RuleContext, scope: FunctionScope) -> tuple[str | None, str | None]:
    """(reason not to fix, reason the fix is unsafe) from how the code is traced."""
    plain_tf_function = False
    current: FunctionScope | None = scope
    compiled_by_keras = False
    while current is not None:
        info = ctx.index.functions.get(current.qualname)
        if info is not None:
            for decorator in info.decorators:
                if decorator not in TF_FUNCTION_NAMES:
                    continue
                jit = info.decorator_keywords.get(decorator, {}).get("jit_compile")
                if jit not in (None, "False", "None"):
                    return (
                        "`tf.print` has no XLA kernel and this function is compiled with "
                        f"`jit_compile={jit}` (remove the print, or trace without XLA)",
                        None,
                    )
                plain_tf_function = True
        if current.traced is not None and current.traced.is_loss:
            compiled_by_keras = True
        if current.class_name is not None and _is_keras_class(ctx, current.class_name):
            compiled_by_keras = True  # a Keras method, even decorated, runs inside `fit`
        current = current.parent
    if plain_tf_function and not compiled_by_keras:
        return None, None
    return None, (
        'Keras may compile this code with XLA (`jit_compile="auto"` on a GPU), '
        "where `tf.print` has no kernel"
    )


def _is_keras_class(ctx: RuleContext, qualname: str, depth: int = 0) -> bool:
    """Whether a class of this file derives from a Keras class (through classes
    of this file; bases from other files are not followed)."""
    info = ctx.index.classes.get(qualname)
    if info is None or depth > 10:
        return False
    local_prefix = f"{ctx.index.module}." if ctx.index.module else ""
    return any(
        keras_leaf(base) is not None
        or (
            base.startswith(local_prefix)
            and _is_keras_class(ctx, base[len(local_prefix) :], depth + 1)
        )
        for base in info.bases
    )


# -- helpers: what an argument shows ---------------------------------------------------
def _shows_values(facts: TensorFacts, node: cst.CSTNode) -> bool:
    """Whether printing `node` shows values computed from tensors. Static facts
    about a tensor (`x.shape`, `x.dtype`, `len(x)`) are known while tracing
    and print the same way once: they do not count."""
    stack: list[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, (cst.Lambda, cst.FunctionDef)):
            continue
        if isinstance(current, cst.Attribute) and current.attr.value in NON_TENSOR_ATTRIBUTES:
            continue
        if (
            isinstance(current, cst.Call)
            and isinstance(current.func, cst.Name)
            and current.func.value in _STATIC_BUILTINS
        ):
            continue
        if isinstance(current, cst.BaseExpression) and facts.is_tensor(current):
            return True
        stack.extend(child_nodes(current))
    return False


def _kind_of(facts: TensorFacts, node: cst.BaseExpression) -> str:
    if facts.is_tensor(node):
        return "tensor"
    return "unknown" if _shows_values(facts, node) else "python"


def _formats_a_tensor(facts: TensorFacts, node: cst.CSTNode) -> bool:
    """Whether `node` builds a Python string from a tensor: an f-string, a
    `"..." % x` or a `"...".format(x)` / `"...".join(xs)` showing tensor values.
    Traced, that string holds `Tensor("Sum:0", ...)`, fixed at trace time."""
    if isinstance(node, (cst.FormattedString, cst.ConcatenatedString)):
        return _shows_values(facts, node)
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Modulo):
        return _string_value(node.left) is not None and _shows_values(facts, node.right)
    if (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value in ("format", "join")
        and _is_text(node.func.value)
    ):
        return any(_shows_values(facts, arg.value) for arg in node.args)
    return False


def _check_printable(ctx: RuleContext, facts: TensorFacts, node: cst.BaseExpression) -> None:
    """Refuse an argument that turns a tensor into a Python value
    (`float(loss)`, `loss.numpy()`, `str(loss)`, or string formatting inside
    a larger expression: `f"{loss}" + " done"`): under tracing that fails or
    freezes the value, with `print` or `tf.print` alike. Anything else
    `tf.print` prints as it is: tensors with their values, nested lists and
    dicts of tensors, Python values."""
    stack: list[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, (cst.Lambda, cst.FunctionDef)):
            continue
        if _formats_a_tensor(facts, current):
            raise _Refusal(
                f"`{ctx.code(current)}` formats a tensor into a Python string inside a larger "
                "expression; traced, the string shows `Tensor(...)` and is fixed at trace time "
                "(pass the string formatting, or the tensor, to `print` as its own argument)"
            )
        if isinstance(current, cst.Call):
            func = current.func
            converts = False
            if isinstance(func, cst.Name) and func.value in _PYTHON_CONVERSIONS:
                converts = any(_shows_values(facts, a.value) for a in current.args)
            elif isinstance(func, cst.Attribute) and func.attr.value in _PYTHON_CONVERSION_METHODS:
                converts = _shows_values(facts, func.value)
            if converts:
                raise _Refusal(
                    f"`{ctx.code(current)}` turns a tensor into a Python value, which fails or "
                    "is frozen under tracing (print the tensor itself)"
                )
        stack.extend(child_nodes(current))


def _pieces(
    ctx: RuleContext,
    facts: TensorFacts,
    node: cst.BaseExpression,
    tf_alias: str,
    assumptions: list[str],
) -> list[_Text | _Arg | _Field] | None:
    """The pieces a formatted-string argument prints, or None when the argument
    is printed as it is (a tensor, a Python value, a container)."""
    if not _shows_values(facts, node):
        return None
    # `"..." % x` is text even when `x` is a tensor (`str.__mod__` runs first).
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Modulo):
        template = _string_value(node.left)
        if template is not None:
            return _percent_pieces(ctx, facts, node, template, tf_alias, assumptions)
    if facts.is_tensor(node):
        # `"loss: " + "%s" % x` is a tensor to the analysis (a string plus a
        # string tensor) but holds Python string formatting of `x`.
        _check_printable(ctx, facts, node)
        return None
    if isinstance(node, (cst.FormattedString, cst.ConcatenatedString)):
        return _string_pieces(ctx, facts, node, tf_alias, assumptions)
    if (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value == "format"
    ):
        template = _string_value(node.func.value)
        if template is not None:
            return _format_pieces(ctx, facts, node, template, tf_alias, assumptions)
    _check_printable(ctx, facts, node)
    return None


def _string_pieces(
    ctx: RuleContext,
    facts: TensorFacts,
    node: cst.BaseExpression,
    tf_alias: str,
    assumptions: list[str],
) -> list[_Text | _Arg | _Field]:
    if isinstance(node, cst.ConcatenatedString):
        return [
            *_string_pieces(ctx, facts, node.left, tf_alias, assumptions),
            *_string_pieces(ctx, facts, node.right, tf_alias, assumptions),
        ]
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        if not isinstance(value, str):
            raise _Refusal("a bytes literal cannot be joined with text")
        return [_Text(value)]
    assert isinstance(node, cst.FormattedString)
    if "b" in node.prefix.lower():
        raise _Refusal("a bytes literal cannot be joined with text")
    raw = "r" in node.prefix.lower()
    source = _Source("f", node.end)
    pieces: list[_Text | _Arg | _Field] = []
    for part in node.parts:
        if isinstance(part, cst.FormattedStringText):
            pieces.append(_Text(_decode_fstring_text(part.value, node.end, raw)))
            continue
        assert isinstance(part, cst.FormattedStringExpression)
        expression = part.expression
        if not _shows_values(facts, expression):
            pieces.append(_Field(ctx.code(part), "", source))
            continue
        _check_printable(ctx, facts, expression)
        if not facts.is_tensor(expression):
            if part.conversion or part.format_spec or part.equal:
                raise _Refusal(
                    f"`{ctx.code(part)}` formats `{ctx.code(expression)}`, which is not known "
                    "to be a tensor"
                )
            pieces.append(_Arg(ctx.code(expression), "unknown"))
            continue
        if part.equal is not None:
            # `{loss=}` prints the expression's text, then the value.
            debug = ctx.code(part.with_changes(conversion=None, format_spec=None))
            pieces.append(_Text(debug[1:-1]))
        spec = None
        if part.format_spec:
            if any(isinstance(p, cst.FormattedStringExpression) for p in part.format_spec):
                raise _Refusal(f"the format spec of `{ctx.code(part)}` is computed at run time")
            spec = "".join(
                p.value for p in part.format_spec if isinstance(p, cst.FormattedStringText)
            )
        if part.conversion is not None and spec:
            raise _Refusal(f"`{ctx.code(part)}` formats the text of a tensor, not its value")
        pieces.append(_tensor_field(ctx, facts, expression, spec or "", tf_alias, assumptions))
    return pieces


def _tensor_field(
    ctx: RuleContext,
    facts: TensorFacts,
    expression: cst.BaseExpression,
    spec: str,
    tf_alias: str,
    assumptions: list[str],
) -> _Arg:
    """A tensor formatted with a `format()` spec, as a `tf.print` argument."""
    code = ctx.code(expression)
    if spec in ("", "d"):
        # No spec: the value. `d` formats only integers, which tf.print prints exactly.
        return _Arg(code)
    match = _FLOAT_SPEC.fullmatch(spec)
    if match is None:
        raise _Refusal(f"the format spec `{spec}` of `{code}` has no TensorFlow equivalent")
    return _as_string(
        ctx,
        facts,
        expression,
        match["precision"],
        match["type"],
        match["width"],
        tf_alias,
        assumptions,
    )


def _as_string(
    ctx: RuleContext,
    facts: TensorFacts,
    expression: cst.BaseExpression,
    precision: str | None,
    kind: str,
    width: str | None,
    tf_alias: str,
    assumptions: list[str],
) -> _Arg:
    """`tf.strings.as_string` with the digits Python's `f`/`e` formatting gives.
    Python formats only scalar tensors this way; `as_string` would format every
    element, so a tensor not known to be a scalar is refused."""
    code = ctx.code(expression)
    if not facts.is_scalar_tensor(expression):
        raise _Refusal(f"a number format needs a scalar, and nothing shows `{code}` is one")
    arguments = [code, f"precision={int(precision) if precision is not None else 6}"]
    if kind == "e":
        arguments.append("scientific=True")
    if width is not None:
        arguments.append(f"width={int(width)}")
    note = "`tf.strings.as_string` with a precision assumes a floating-point tensor"
    if note not in assumptions:
        assumptions.append(note)
    return _Arg(f"{tf_alias}.strings.as_string({', '.join(arguments)})", "string")


def _percent_pieces(
    ctx: RuleContext,
    facts: TensorFacts,
    node: cst.BinaryOperation,
    template: str,
    tf_alias: str,
    assumptions: list[str],
) -> list[_Text | _Arg | _Field]:
    right = node.right
    if isinstance(right, cst.Tuple):
        if any(isinstance(e, cst.StarredElement) for e in right.elements):
            raise _Refusal("cannot see what the `%` operands unpack")
        operands = [e.value for e in right.elements]
        single = False
    else:
        operands = [right]
        single = True
    source = _Source("%", _quote_of(node.left), single_operand=single)
    pieces: list[_Text | _Arg | _Field] = []
    position = 0
    remaining = list(operands)
    for match in _PERCENT_SPEC.finditer(template):
        if match.start() > position:
            pieces.append(_Text(template[position : match.start()]))
        position = match.end()
        if match["type"] == "%" and match.group(0) == "%%":
            pieces.append(_Text("%"))
            continue
        if match["key"] is not None or "*" in (match["width"] or "") + (match["precision"] or ""):
            raise _Refusal("`%` formatting with keys or `*` widths is not converted")
        if not remaining:
            raise _Refusal("the `%` template has more conversions than operands")
        operand = remaining.pop(0)
        if not _shows_values(facts, operand):
            pieces.append(_Field(ctx.code(operand), match.group(0), source))
            continue
        _check_printable(ctx, facts, operand)
        kind, flags = match["type"], match["flags"]
        plain = not (flags or match["width"] or match["precision"])
        if not facts.is_tensor(operand):
            if kind != "s" or not plain:
                raise _Refusal(
                    f"`{match.group(0)}` formats `{ctx.code(operand)}`, which is not known "
                    "to be a tensor"
                )
            pieces.append(_Arg(ctx.code(operand), "unknown"))
        elif kind in "sra" and plain:
            pieces.append(_Arg(ctx.code(operand)))
        elif kind in "fe" and not flags:
            pieces.append(
                _as_string(
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
            raise _Refusal(f"`{match.group(0)}` on the tensor `{ctx.code(operand)}` {reason}")
    if position < len(template):
        pieces.append(_Text(template[position:]))
    if remaining:
        raise _Refusal("the `%` template has fewer conversions than operands")
    return pieces


def _format_pieces(
    ctx: RuleContext,
    facts: TensorFacts,
    node: cst.Call,
    template: str,
    tf_alias: str,
    assumptions: list[str],
) -> list[_Text | _Arg | _Field]:
    if any(arg.star for arg in node.args):
        raise _Refusal("cannot see what the `.format` arguments unpack")
    positional = [arg.value for arg in node.args if arg.keyword is None]
    named = {arg.keyword.value: arg.value for arg in node.args if arg.keyword is not None}
    assert isinstance(node.func, cst.Attribute)
    source = _Source("format", _quote_of(node.func.value))
    pieces: list[_Text | _Arg | _Field] = []
    auto = 0
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as err:
        raise _Refusal(f"the `.format` template is invalid: {err}") from err
    for literal, field_name, spec, conversion in parsed:
        if literal:
            pieces.append(_Text(literal))
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
            raise _Refusal(f"the `.format` field `{{{field_name}}}` has no argument")
        if "{" in spec:
            if _shows_values(facts, operand):
                raise _Refusal(f"the format spec of `{{{field_name}}}` is computed at run time")
        if not _shows_values(facts, operand):
            text = (
                "{"
                + path
                + (f"!{conversion}" if conversion else "")
                + (f":{spec}" if spec else "")
                + "}"
            )
            pieces.append(_Field(ctx.code(operand), text, source))
            continue
        _check_printable(ctx, facts, operand)
        if path:
            raise _Refusal(f"the `.format` field `{{{field_name}}}` reads into a tensor")
        if not facts.is_tensor(operand) and (conversion or spec):
            raise _Refusal(
                f"the `.format` field `{{{field_name}}}` formats a value computed from a "
                "tensor that is not known to be one"
            )
        if not facts.is_tensor(operand):
            pieces.append(_Arg(ctx.code(operand), "unknown"))
            continue
        if conversion and spec:
            raise _Refusal(
                f"`{{{field_name}!{conversion}:{spec}}}` formats the text of a tensor, "
                "not its value"
            )
        pieces.append(_tensor_field(ctx, facts, operand, spec, tf_alias, assumptions))
    return pieces


# -- helpers: writing the arguments ------------------------------------------------------
def _as_text(
    ctx: RuleContext, pieces: list[_Text | _Arg | _Field], tf_alias: str
) -> list[_Text | _Arg | _Field]:
    """The pieces as elements of `tf.strings.join`: tensors formatted as
    `tf.print` would (`tf.strings.format`), Python values as `print` would
    (`str()`, in an f-string field)."""
    python = _Source("f", '"')
    result: list[_Text | _Arg | _Field] = []
    for piece in pieces:
        if not isinstance(piece, _Arg) or piece.kind == "string":
            result.append(piece)
        elif piece.kind == "tensor":
            result.append(_Arg(f'{tf_alias}.strings.format("{{}}", {piece.code})', "string"))
        elif piece.kind == "unknown":
            raise _Refusal(
                f"`{piece.code}` is computed from tensors but not known to be one, so it "
                "cannot be joined into one formatted line"
            )
        else:
            result.append(_Field("{" + piece.code + "}", "", python))
    return result


def _render(pieces: list[_Text | _Arg | _Field]) -> list[str]:
    """`tf.print` argument code for a flat list of pieces (printed with sep="").
    Consecutive text and non-tensor fields of one string become one string
    argument, written in that string's own syntax."""
    runs: list[list[_Text | _Field] | _Arg] = []
    for piece in pieces:
        if isinstance(piece, _Arg):
            runs.append(piece)
            continue
        last = runs[-1] if runs else None
        if isinstance(last, list) and (
            isinstance(piece, _Text)
            or all(isinstance(p, _Text) or p.source is piece.source for p in last)
        ):
            last.append(piece)
        else:
            runs.append([piece])
    parts: list[str] = []
    for run in runs:
        if isinstance(run, _Arg):
            parts.append(run.code)
        else:
            rendered = _render_run(run)
            if rendered is not None:
                parts.append(rendered)
    return parts


def _render_run(run: list[_Text | _Field]) -> str | None:
    fields = [p for p in run if isinstance(p, _Field)]
    if not fields:
        text = "".join(p.value for p in run if isinstance(p, _Text))
        return _literal(text) if text else None
    source = fields[0].source
    quote = _pick_quote(source.quote[0], [f.code for f in fields] if source.kind == "f" else [])

    def text(piece: _Text, *doubled: str) -> str:
        body = _escape(piece.value, quote)
        for ch in doubled:
            body = body.replace(ch, ch + ch)
        return body

    if source.kind == "f":
        body = "".join(text(p, "{", "}") if isinstance(p, _Text) else p.code for p in run)
        return f"f{quote}{body}{quote}"
    operands = [f.code for f in fields]
    if source.kind == "%":
        body = "".join(text(p, "%") if isinstance(p, _Text) else p.spec for p in run)
        if source.single_operand and len(operands) == 1:
            return f"{quote}{body}{quote} % {operands[0]}"
        return f"{quote}{body}{quote} % ({', '.join(operands)}{',' if len(operands) == 1 else ''})"
    body = "".join(text(p, "{", "}") if isinstance(p, _Text) else p.spec for p in run)
    return f"{quote}{body}{quote}.format({', '.join(operands)})"


def _pick_quote(preferred: str, field_codes: list[str]) -> str:
    """A one-character quote that no f-string field's code uses (before Python
    3.12 a field cannot contain its string's quote, a backslash or a newline)."""
    if any("\\" in code or "\n" in code for code in field_codes):
        raise _Refusal("an f-string field spans lines or uses a backslash")
    for quote in (preferred, "'" if preferred == '"' else '"'):
        if not any(quote in code for code in field_codes):
            return quote
    raise _Refusal("an f-string field uses both quote characters")


def _join_args(args: list[cst.Arg], original: Sequence[cst.Arg]) -> list[cst.Arg]:
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


# -- helpers: string literals ---------------------------------------------------------------
def _is_text(node: cst.BaseExpression) -> bool:
    """A str literal or f-string (not bytes)."""
    if isinstance(node, cst.ConcatenatedString):
        return _is_text(node.left) and _is_text(node.right)
    if isinstance(node, cst.SimpleString):
        return isinstance(node.evaluated_value, str)
    return isinstance(node, cst.FormattedString) and "b" not in node.prefix.lower()


def _is_none(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def _string_value(node: cst.BaseExpression) -> str | None:
    """The text of a plain (non-f, non-bytes) string literal, else None."""
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def _quote_of(node: cst.BaseExpression) -> str:
    while isinstance(node, cst.ConcatenatedString):
        node = node.left
    if isinstance(node, (cst.SimpleString, cst.FormattedString)):
        return node.quote[0] if isinstance(node, cst.SimpleString) else node.end[0]
    return '"'


def _decode_fstring_text(raw_text: str, quote: str, raw: bool) -> str:
    """The text an f-string's literal part prints. A sentinel character keeps
    a part that ends in a quote (the `say "` of a triple-quoted `say "{x}"`)
    from closing the literal early."""
    text = raw_text.replace("{{", "{").replace("}}", "}")
    prefix = "r" if raw else ""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # `\{` and the like: invalid escapes kept as written
        return ast.literal_eval(f"{prefix}{quote}{text}_{quote}")[:-1]


def _escape(text: str, quote: str) -> str:
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


def _literal(text: str) -> str:
    """A string literal for `text`, in double quotes unless single quotes
    need fewer escapes."""
    quote = "'" if '"' in text and "'" not in text else '"'
    return f"{quote}{_escape(text, quote)}{quote}"


RULES = (PrintInTracedCode,)
