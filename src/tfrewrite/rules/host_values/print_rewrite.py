"""Rewriting a Python `print` in traced code into `tf.print` (TFR103).

TFR103 reports and fixes the prints it finds; TFR105 asks whether a print
showing a host value (`loss_value = loss.numpy()`) is rewritten in the same
run, in which case it shows the tensor the value becomes. Both ask
`check_print`, so the answer is the rule's own.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from tfrewrite.facts.context import FunctionScope, RuleContext
from tfrewrite.facts.import_requests import ImportRequest
from tfrewrite.facts.tensors import TensorFacts
from tfrewrite.facts.walk import iter_nodes
from tfrewrite.findings import Applicability
from tfrewrite.rewrite.fixes import CstFix, NodeEdit, Violation
from tfrewrite.rules.host_values.print_containers import tensor_containers
from tfrewrite.rules.host_values.print_format import argument_pieces, string_pieces
from tfrewrite.rules.host_values.print_pieces import (
    Arg,
    Field,
    PrintRefusal,
    Text,
    kind_of,
    opaque_calls,
    shows_values,
)
from tfrewrite.rules.host_values.print_render import as_text, join_args, render
from tfrewrite.rules.host_values.print_values import (
    PrintedFacts,
    dynamic_shape_reads,
    host_read_names,
    leftover_numpy_read,
    shows_many,
    strip_host_reads,
)
from tfrewrite.rules.host_values.stream_writes import as_print, written_stream
from tfrewrite.rules.host_values.string_literals import is_none, is_text, string_value
from tfrewrite.rules.host_values.traced_context import dynamic_shapes, print_applicability

# The stream a rewritten `print` without `file=` writes to: `print`'s own.
DEFAULT_OUTPUT_STREAM = "stdout"
# A rewritten call longer than this is written one argument per line.
MAX_LINE_LENGTH = 88

_STREAMS = {"sys.stdout": "stdout", "sys.stderr": "stderr"}


@dataclass
class PrintRewrite:
    """The `tf.print` call replacing a print, the imports it needs, and what
    it assumes (notes that make the fix unsafe)."""

    replacement: cst.Call
    imports: tuple[ImportRequest, ...]
    assumptions: list[str] = field(default_factory=list)


def check_print(
    ctx: RuleContext,
    call: cst.Call,
    scope: FunctionScope,
    parent: cst.CSTNode | None,
    indent: str,
    output_stream: str = DEFAULT_OUTPUT_STREAM,
    written: cst.Call | None = None,
) -> Violation | None:
    """TFR103's finding for a Python `print` in traced code (`parent` holds
    the call, `indent` is its statement's indentation), with the `tf.print`
    fix when one is possible; None for a print that shows no values.
    `output_stream` is where a print without `file=` goes unless the
    `print-output-stream` setting says otherwise. `written` is the
    `sys.stdout.write(...)` call that `call` stands for (`as_print`): the
    finding and the fix are on it."""
    facts = ctx.tensors(scope)
    target = written if written is not None else call
    subject = f"`{ctx.code(written.func)}`" if written is not None else "`print`"
    if any(arg.star for arg in call.args):
        return Violation(
            call,
            "`print` with `*args`/`**kwargs` in traced code runs once, at trace time; "
            "not rewritten: what it prints cannot be seen (use `tf.print` on the tensors)",
        )
    positional = [arg.value for arg in call.args if arg.keyword is None]
    if announces_tracing(positional):
        return None  # `print("Tracing with", x)`: meant to run at trace time
    proven = facts
    printed, shapes, facts = printed_values(ctx, call, scope, proven)
    positional = [arg.value for arg in printed.args if arg.keyword is None]
    likely_note: str | None = None
    if not any(shows_values(facts, value) for value in positional):
        if proven.likely is not proven:
            # A parameter of traced code with no evidence either way: likely a tensor.
            printed, shapes, facts = printed_values(ctx, call, scope, proven.likely)
            positional = [arg.value for arg in printed.args if arg.keyword is None]
            likely_note = proven.assumption_note(call)
        if not any(shows_values(facts, value) for value in positional):
            # Called with a tensor at one call site and a Python value at
            # another: the tensor's trace prints it once; `tf.print` prints
            # it on every call in both traces.
            mixed = _mixed_parameters(scope)
            if not mixed:
                return None  # constant text or static facts: a trace-time message
            printed, shapes, facts = printed_values(
                ctx, call, scope, proven.assuming_tensors(mixed)
            )
            positional = [arg.value for arg in printed.args if arg.keyword is None]
            if not any(shows_values(facts, value) for value in positional):
                return None
            name, (python_at, tensor_at) = next(iter(mixed.items()))
            likely_note = f"`{name}` is a tensor at {tensor_at} and a Python value at {python_at}"
    if written is None:
        problem = (
            "`print` in traced code runs once, at trace time, and shows `Tensor(...)`, not values"
        )
    else:
        problem = (
            f"{subject} in traced code runs once, at trace time: the text Python formats there "
            "shows `Tensor(...)`, not values (and a number format such as `%.3f` of a tensor "
            "raises `TypeError`)"
        )
    if shapes:
        problem += (
            " (and `.shape[...]` shows `None` for a dimension the traced function does not "
            "know: the rewrite prints `tf.shape(...)[...]`)"
        )
    context_refusal, context_note = print_applicability(ctx, scope)
    if context_refusal is not None:
        return Violation(target, f"{problem}; not rewritten: {context_refusal}")
    if not isinstance(parent, cst.Expr):
        shown = ctx.code(written.func) if written is not None else "print"
        return Violation(
            target,
            f"{problem}; not rewritten: the value of this `{shown}(...)` is used "
            "(move it to its own statement)",
        )
    try:
        refuse_leftover_reads(ctx, printed, facts)
        rewrite = rewrite_print(
            ctx,
            printed,
            facts,
            indent,
            output_stream=output_stream,
            text_only=written is not None,
        )
    except PrintRefusal as refusal:
        return Violation(target, f"{problem}; not rewritten: {refusal}")
    opaque = [call for value in positional for call in opaque_calls(ctx, facts, value)]
    notes = [
        *([likely_note] if likely_note else []),
        *assumed_notes(facts),
        *rewrite.assumptions,
        *([context_note] if context_note else []),
        *(
            f"`{ctx.code(c)}` is given a tensor and is assumed to return one: if it formats "
            "it into text, that text is built once, at trace time, and printed on every call"
            for c in opaque
        ),
    ]
    fix = print_fix(target, rewrite, f"Replace {subject} with `tf.print`", notes)
    return Violation(target, f"{problem}; use `tf.print`", fix)


def check_stream_write(
    ctx: RuleContext,
    call: cst.Call,
    scope: FunctionScope,
    parent: cst.CSTNode | None,
    indent: str,
) -> Violation | None:
    """TFR103's finding for `sys.stdout.write(text)` / `sys.stderr.write(text)`
    in traced code: the `print(text, end="", file=...)` it is (`as_print`),
    reported and fixed on the write. None for a write that shows no values,
    and for a write of a tensor (`write` takes a string: it raises
    `TypeError` eagerly too, so tracing changes nothing)."""
    likely = ctx.tensors(scope).likely
    equivalent = as_print(call)
    if equivalent is None:
        if not any(shows_values(likely, arg.value) for arg in call.args):
            return None
        return Violation(
            call,
            f"`{ctx.code(call.func)}` in traced code runs once, at trace time, and writes "
            "`Tensor(...)`, not values; not rewritten: `write` takes one string argument",
        )
    text = call.args[0].value
    if isinstance(text, (cst.Name, cst.Attribute, cst.Subscript, cst.Call)) and likely.is_tensor(
        text
    ):
        return None  # a tensor, not text (`"..." % x` of a tensor counts as one)
    return check_print(ctx, equivalent, scope, parent, indent, written=call)


def _mixed_parameters(scope: FunctionScope) -> dict[str, tuple[str, str]]:
    """Parameters some call site passes a tensor and another a Python value:
    name -> (where the Python value is passed, where the tensor is)."""
    traced = scope.runs_traced
    if traced is None:
        return {}
    return {name: (python_at, tensor_at) for name, python_at, tensor_at in traced.mixed_callers}


def print_fix(call: cst.Call, rewrite: PrintRewrite, message: str, notes: list[str]) -> CstFix:
    """The fix replacing `call` by its rewrite: unsafe when it rests on
    `notes` (assumptions, a context that may compile with XLA), which its
    message then lists."""
    applicability = Applicability.UNSAFE if notes else Applicability.SAFE
    if notes:
        message += " (unsafe: " + "; ".join(notes) + ")"
    return CstFix(message, (NodeEdit(call, rewrite.replacement),), rewrite.imports, applicability)


def printed_values(
    ctx: RuleContext, call: cst.Call, scope: FunctionScope, facts: TensorFacts
) -> tuple[cst.Call, bool, PrintedFacts]:
    """The call with what a graph must print in place of what Python read
    on the host: tensors for `float(t)`/`t.numpy()`, run-time dimensions
    for `x.shape[i]` where the traced function may not know them; whether
    any dimension was replaced; and the tensor facts as the print sees
    them (variables and `.numpy()` receivers print as tensors)."""
    tf_alias, _ = ctx.tensorflow()
    printed, assumed, methods = strip_host_reads(ctx, facts, call, tf_alias)
    seen = PrintedFacts(
        facts,
        ctx,
        assumed,
        host_read_names(ctx, scope.node, facts),
        methods,
        tensor_containers(ctx, scope.node, facts),
    )
    if not dynamic_shapes(scope):
        return printed, False, seen
    printed, shapes = dynamic_shape_reads(ctx, seen, printed, tf_alias)  # type: ignore[arg-type]
    return printed, shapes, seen


def rewrite_print(
    ctx: RuleContext,
    call: cst.Call,
    facts: TensorFacts,
    indent: str,
    tf_print: bool = False,
    output_stream: str = DEFAULT_OUTPUT_STREAM,
    text_only: bool = False,
) -> PrintRewrite:
    """The `tf.print` call for a `print` (or for a `tf.print` whose
    arguments Python formats: `tf_print`, keeping its own keywords).
    `text_only`: the arguments are text that Python formatted (a stream
    write's string), so one that shows tensors but is no formatting the
    rewrite splits (`describe(loss)`) is refused: passed to `tf.print` as it
    is, it would print the text built once, while tracing."""
    tf_alias, imports = ctx.tensorflow()
    keywords: dict[str, cst.Arg] = {}
    for arg in call.args:
        if arg.keyword is not None:
            keywords[arg.keyword.value] = arg
    allowed = (
        {"sep", "end", "output_stream", "summarize", "name"}
        if tf_print
        else {"sep", "end", "file", "flush"}
    )
    unknown = sorted(set(keywords) - allowed)
    if unknown:
        raise PrintRefusal(f"`{'tf.print' if tf_print else 'print'}` has no keyword `{unknown[0]}`")
    stream_part: str | None = None
    if not tf_print:
        stream = _output_stream(ctx, keywords.get("file"), output_stream)
        sys_alias = ctx.names.alias_for("sys")
        if sys_alias is None:
            sys_alias = "sys"
            imports = (*imports, ImportRequest("sys"))
        stream_part = f"output_stream={sys_alias}.{stream}"
    summarize = "summarize" not in keywords and any(
        shows_many(facts, arg.value) for arg in call.args if arg.keyword is None
    )
    assumptions: list[str] = []
    positional = [arg.value for arg in call.args if arg.keyword is None]
    pieces_per_arg = [
        argument_pieces(ctx, facts, value, tf_alias, assumptions) for value in positional
    ]
    # Keyword arguments that carry over unchanged (a `None` is print's default).
    kept = [
        keywords[name]
        for name in ("sep", "end", "summarize", "output_stream", "name")
        if name in keywords and (tf_print or not is_none(keywords[name].value))
    ]
    added = [_keyword_arg("summarize", "-1")] if summarize else []
    if stream_part is not None:
        added.append(_keyword_arg(*stream_part.split("=", 1)))
    func = cst.parse_expression(f"{tf_alias}.print")
    if text_only:
        for arg, pieces in zip(positional, pieces_per_arg, strict=True):
            if pieces is None and not is_text(arg) and kind_of(facts, arg) != "python":
                raise PrintRefusal(
                    f"`{ctx.code(arg)}` is text Python builds from tensors outside a format "
                    "string tfrewrite can split into `tf.print` arguments: traced, it is built "
                    "once and shows `Tensor(...)`"
                )
    if all(pieces is None for pieces in pieces_per_arg):
        # Nothing to flatten: keep the call's own layout and comments.
        kept_ids = {id(arg) for arg in kept}
        args = [arg for arg in call.args if arg.keyword is None or id(arg) in kept_ids]
        return PrintRewrite(
            call.with_changes(func=func, args=join_args([*args, *added], call.args)),
            imports,
            assumptions,
        )
    separator: list[Text | Arg | Field]
    sep = keywords.get("sep")
    if sep is None or is_none(sep.value):
        separator = [Text(" ")]
    else:
        text = string_value(sep.value)
        separator = [Text(text)] if text is not None else [Arg(ctx.code(sep.value), "python")]
    flat: list[Text | Arg | Field] = []
    positional_args = [a for a in call.args if a.keyword is None]
    for i, (arg, pieces) in enumerate(zip(positional_args, pieces_per_arg, strict=True)):
        if i:
            flat.extend(separator)
        if pieces is None and is_text(arg.value):
            # Constant or Python-only text: joined with its neighbours.
            pieces = string_pieces(ctx, facts, arg.value, tf_alias, assumptions)
        if pieces is None:
            pieces = [Arg(ctx.code(arg.value), kind_of(facts, arg.value))]
        flat.extend(pieces)
    end = keywords.get("end")
    if end is not None and _ends_line(flat, end.value):
        # `write("... \n")` / `print(..., "\n", end="")`: the line end is
        # `tf.print`'s own.
        last = flat.pop()
        assert isinstance(last, Text)
        if last.value != "\n":
            flat.append(Text(last.value[:-1]))
        end = None
    unit = ctx.module.default_indent
    if any(isinstance(p, Arg) and p.kind == "string" for p in flat):
        # tf.print quotes string tensors among other inputs, and prints a
        # lone scalar string as it is: join the line into one string.
        elements = render(as_text(ctx, flat, tf_alias, summarize))
        joined = f"{tf_alias}.strings.join([{', '.join(elements)}])"
        if len(elements) == 1:
            joined = elements[0]  # the string tensor alone: nothing to join
        elif len(indent + unit + joined) + 1 > MAX_LINE_LENGTH:
            # Relative indentation: LibCST adds the enclosing block's.
            lines = "".join(f"{unit * 2}{e},\n" for e in elements)
            joined = f"{tf_alias}.strings.join([\n{lines}{unit}])"
        parts = [joined]
    else:
        parts = [*render(flat), 'sep=""']
        if summarize:
            parts.append("summarize=-1")
    if end is not None and not is_none(end.value):
        parts.append(f"end={ctx.code(end.value)}")
    parts += [
        f"{name}={ctx.code(keywords[name].value)}"
        for name in ("summarize", "output_stream", "name")
        if name in keywords
    ]
    if stream_part is not None:
        parts.append(stream_part)
    code = f"{tf_alias}.print({', '.join(parts)})"
    if "\n" in code or len(indent + code) > MAX_LINE_LENGTH:
        lines = "".join(f"{unit}{part},\n" for part in parts)
        code = f"{tf_alias}.print(\n{lines})"
    replacement = cst.parse_expression(code)
    assert isinstance(replacement, cst.Call)
    return PrintRewrite(replacement, imports, assumptions)


def _ends_line(flat: list[Text | Arg | Field], end: cst.BaseExpression) -> bool:
    """Whether a line printed with `end=""` ends in a newline of its own text:
    printing it without that newline and with `tf.print`'s default end
    (`"\n"`) writes the same characters."""
    return (
        string_value(end) == ""
        and bool(flat)
        and isinstance(flat[-1], Text)
        and flat[-1].value.endswith("\n")
    )


def _output_stream(ctx: RuleContext, file_arg: cst.Arg | None, default: str) -> str:
    if file_arg is None or is_none(file_arg.value):
        return ctx.settings.get("print-output-stream", default)
    stream = _STREAMS.get(ctx.names.qualified_name(file_arg.value) or "")
    if stream is None:
        raise PrintRefusal(
            f"`tf.print` writes only to `sys.stdout`, `sys.stderr`, logging or a "
            f"`file://` path, not to `{ctx.code(file_arg.value)}`"
        )
    return stream


def rewritten_print_around(
    ctx: RuleContext, scope: FunctionScope, node: cst.CSTNode
) -> cst.Call | None:
    """The Python `print` statement (or write to `sys.stdout` / `sys.stderr`)
    of `scope` that is `node` or holds it in its arguments, when TFR103
    rewrites it into `tf.print` (with a fix): a host value printed there
    (`loss_value = loss.numpy()`) may become the tensor."""
    shadowed = shadows_print(ctx)
    for statement in iter_nodes(scope.node.body, into_functions=False):
        if not isinstance(statement, cst.Expr) or not isinstance(statement.value, cst.Call):
            continue
        call = statement.value
        printing = not shadowed and is_print(call)
        if not printing and written_stream(ctx, call) is None:
            continue
        if node is not call and not any(
            inner is node for arg in call.args for inner in iter_nodes(arg)
        ):
            continue
        if printing:
            violation = check_print(ctx, call, scope, statement, "")
        else:
            violation = check_stream_write(ctx, call, scope, statement, "")
        return call if violation is not None and violation.fix is not None else None
    return None


def announces_tracing(arguments: list[cst.BaseExpression]) -> bool:
    """A print whose own text speaks of tracing (`"Tracing with"`, `"traced"`,
    `"retracing"`) is a deliberate trace-time message, the idiom the
    `tf.function` guide teaches: it is meant to run once per trace."""
    for argument in arguments:
        for node in iter_nodes(argument):
            text = None
            if isinstance(node, cst.SimpleString):
                value = node.evaluated_value
                text = value if isinstance(value, str) else None
            elif isinstance(node, cst.FormattedStringText):
                text = node.value
            if text is not None and "trac" in text.lower():
                return True
    return False


def assumed_notes(facts: PrintedFacts) -> list[str]:
    """What the printed values rest on: `.numpy()` receivers taken for
    tensors, reductions folded on a tensor of unknown dtype."""
    return [
        *(
            f"it assumes `{code}` is a TensorFlow value (it has `.numpy()`)"
            for code in sorted(facts.assumed)
        ),
        *facts.methods.notes,
    ]


def refuse_leftover_reads(ctx: RuleContext, call: cst.Call, facts: PrintedFacts) -> None:
    """Refuse a print whose host reads cannot all become tensors: an array
    method with no TensorFlow form (`y.numpy().tolist()`), or a `.numpy()`
    of a value nothing shows is a tensor."""
    if facts.methods.refusal is not None:
        raise PrintRefusal(facts.methods.refusal)
    read = leftover_numpy_read(call)
    if read is not None:
        assert isinstance(read.func, cst.Attribute)
        raise PrintRefusal(
            f"`{ctx.code(read)}` reads a value on the host, which fails when traced, and "
            f"nothing shows `{ctx.code(read.func.value)}` is a tensor `tf.print` could print"
        )


def _keyword_arg(name: str, value: str) -> cst.Arg:
    return cst.Arg(
        keyword=cst.Name(name),
        value=cst.parse_expression(value),
        equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
    )


def is_print(call: cst.Call) -> bool:
    return isinstance(call.func, cst.Name) and call.func.value == "print"


def shadows_print(ctx: RuleContext) -> bool:
    """`print` is not the builtin in this file (imported or defined)."""
    return "print" in ctx.index.imports or "print" in ctx.index.functions
