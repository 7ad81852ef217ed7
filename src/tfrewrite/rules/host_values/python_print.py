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

from collections.abc import Iterator

import libcst as cst

from tfrewrite.facts.context import FunctionScope, RuleContext
from tfrewrite.facts.walk import child_nodes, iter_nodes
from tfrewrite.findings import Applicability
from tfrewrite.rewrite.fixes import Violation
from tfrewrite.rules.base import Invalid, Rule, Valid
from tfrewrite.rules.host_values.print_lines import Output, companions
from tfrewrite.rules.host_values.print_pieces import (
    PrintRefusal,
    formats_a_tensor,
    is_string_formatting,
    shows_values,
)
from tfrewrite.rules.host_values.print_rewrite import (
    DEFAULT_OUTPUT_STREAM,
    assumed_notes,
    check_print,
    check_stream_write,
    is_print,
    print_fix,
    printed_values,
    refuse_leftover_reads,
    rewrite_print,
    shadows_print,
)
from tfrewrite.rules.host_values.print_values import (
    PrintedFacts,
    formatted_operands,
    python_only,
)
from tfrewrite.rules.host_values.stream_writes import as_print, written_stream
from tfrewrite.rules.host_values.traced_context import dynamic_shapes


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
        tensor, and rewrites them to `tf.print`. A write of text to a standard
        stream, `sys.stdout.write(text)` / `sys.stderr.write(text)` (also
        `from sys import stdout`), is the `print(text, end="")` it is.

        ## Why is this bad?
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
        - A name bound once to a dict, list or tuple of tensors and only read
          afterwards (`logs = {"loss": loss}`) shows values: `print(logs)`,
          `print(logs["loss"])` and `for k, v in logs.items(): print(k, v)`
          become `tf.print` of the same names, which prints the structure with
          each tensor's value. A container changed after it is bound (an item
          assigned, `.update(...)`, handed to a helper, bound again) is not
          followed: what it holds at the print is not known.
        - An expression computed from tensors that is not known to be a tensor
          (`scale(loss)`, `loss if ok else 0.0`, `[a, b]`) is passed to
          `tf.print` as it is: it prints a tensor's values, nested lists and
          dicts of tensors, and Python values alike.
        - Tensors are printed by `tf.print`'s formatting (`0.25`, `[1 2 3]`,
          long tensors summarised with `...`), not as `tf.Tensor(0.25, shape=(),
          dtype=float32)`: the values are the same, the decoration is not.
          Non-tensor, non-string arguments are formatted with `pprint` by
          `tf.print`.

        ## Writes to `sys.stdout` and `sys.stderr`
        - Traced, `sys.stdout.write("loss %s\\n" % loss)` writes `loss
          Tensor("Mean:0", shape=(), dtype=float32)` once, while tracing, and
          `"loss %.3f\\n" % loss` (or `f"{loss:.3f}"`, `"{:.3f}".format(loss)`)
          raises `TypeError` there: a symbolic tensor has no number value.
        - The rewrite is the `tf.print` of the equivalent `print(text,
          end="")`, with the same rendering of `%`, `str.format` and f-string
          fields and the same fix safety, on the stream it names
          (`output_stream=sys.stdout` or `sys.stderr`; the
          `print-output-stream` setting is for prints without `file=`):
          `tf.print(..., end="")` writes no line end, so the characters are
          the same on every call.
          Text that ends in a newline ends its line with `tf.print`'s own:
          `sys.stdout.write("loss %s\\n" % loss)` becomes `tf.print("loss ",
          loss, sep="", output_stream=sys.stdout)`.
        - `write` takes one string: a write whose text is not a formatted
          string tfrewrite can split (`describe(loss)`, `"a" + str(loss)`), with
          other than one argument, or whose result is used, is reported with no
          fix. A write of a tensor itself raises `TypeError` eagerly too and is
          not reported; nor is `sys.stdout.flush()`, nor a write of text that
          shows no tensor, nor a write to another file.

        ## Lines written in parts
        A traced function that writes a line in parts (`sys.stdout.write("[")`,
        then the loss, then `sys.stdout.write("]\\n")`; or `print("loss: ",
        end="")` then `print(loss)`) writes the whole line on every call
        eagerly. Once the parts that show tensors are `tf.print`, a part with
        constant text would still print once, while tracing, and the line
        would fall apart. When a function's prints leave a line open (an `end=`
        or a written text that does not end in a newline) and every print
        showing tensors is rewritten (or is already a `tf.print`), its prints
        and writes of constant text are rewritten to `tf.print` as well, as
        unsafe as the least safe fix beside them. A message about tracing
        (`print("Tracing f")`) stays as it is.

        ## What a traced print must show instead
        - A host read of a tensor (`float(loss)`, `loss.numpy()`, `int(step)`)
          fails on a symbolic tensor; the rewrite prints the tensor itself
          (`int(x)` of a tensor not known to be an integer becomes
          `tf.cast(x, tf.int64)`, which truncates toward zero as `int` does).
          Python prints a float read from float32 with float64 digits
          (`0.10000000149011612`), `tf.print` with float32's (`0.1`): the same
          value.
        - A NumPy array method after `.numpy()` is one a tensor lacks:
          `y.numpy().max()` would become `y.max()`, an `AttributeError` when
          traced. The reductions TFR105 folds (`.max()`, `.mean(axis=0)`,
          `.sum()`, ...) become the TensorFlow op (`tf.reduce_max(y)`), under
          the same conditions on the dtype (NumPy sums and averages integers
          in int64 and float64: refused). `float(y.numpy().sum())` prints the
          reduced tensor; `.item()` and `.tolist()` of a scalar print the
          tensor; indexing (`y.numpy()[0]`) indexes the tensor.
        - `tf.print` abbreviates a tensor past three elements per dimension
          (`summarize=3`); `print` showed every value of a small array. Where a
          tensor of more than one element may be printed, the rewrite passes
          `summarize=-1`.
        - `x.shape[0]` is read while tracing. Under an `input_signature` (or
          `reduce_retracing=True`) an unknown dimension reads `None`, where the
          eager `print` showed the batch size: the rewrite prints
          `tf.shape(x)[0]`, its value on each call.
        - A parameter one call site passes a tensor and another a Python value
          is traced once for each: the tensor's trace prints it once, the
          Python value's once per new value. `tf.print` prints it on every call
          in both; the fix is unsafe and names the two call sites.
        - A `tf.Variable` prints its value (`tf.print(step)`); `.numpy()` on a
          value not known to be a tensor (`optimizer.lr.numpy()`) prints that
          value as a tensor too (only TensorFlow values have `.numpy()`): the
          fix is then unsafe and says what it assumes.
        - `%4d` of an integer tensor becomes `tf.strings.as_string(n,
          width=4)` (printf's padding); a number format of a tensor not known
          to be a scalar formats `tf.reshape(x, [])` (Python's format raises
          for anything but a scalar, eagerly too): unsafe.
        - Python formatting inside `tf.print` (`tf.print("loss %s" % loss)`,
          an f-string, `str.format`) runs while tracing: every call prints the
          text `Tensor("Mean:0", ...)`. The tensors become `tf.print`
          arguments, keeping the text (`tf.print("loss ", loss, sep="")`).
          When that formatting also shows a value not known to be a tensor or
          a Python value, it is reported with no fix.

        ## Left alone, or reported with no fix
        - A `print` of constant text or of static facts (`x.shape`, `x.dtype`,
          `len(x)`) is a trace-time message and is not touched; nor is a
          `print` whose text speaks of tracing (`print("Tracing with", x)`, the
          idiom the `tf.function` guide teaches), nor any `print` outside
          traced code.
        - `print(*args)` / `print(**kwargs)`: what is printed cannot be seen.
        - An argument that turns a tensor into a Python value other than a
          plain read (`str(loss)`, `round(loss, 2)`, `float(f(loss))` of a value
          not known to be a tensor): it fails or freezes under tracing.
        - A NumPy array method or attribute with no faithful TensorFlow
          form: `.tolist()` of an array not known to be a scalar (Python
          prints the list `[0.5, 1.0]`, `tf.print` the tensor `[0.5 1]`),
          `.item()` of one (it prints `0.5` where a tensor of shape [1] prints
          `[0.5]`), `.astype(...)`, `.T`, `.shape` (a tuple, not a
          `TensorShape`), indexing by a list or a mask, and a reduction whose
          arguments or dtype TFR105 refuses.
        - A format spec or `%` conversion with no faithful TensorFlow
          equivalent (`{loss:>8}`, `{loss:08.2f}`, `%d` on a tensor that may be
          float, ...), and any format spec on a value not known to be a tensor.
        - `file=` other than `sys.stdout` / `sys.stderr`, and a `print` whose
          value is used (in a lambda or an assignment).

        ## Fix safety
        The fix is safe in a function decorated with a plain `@tf.function`
        (not a method of a Keras class, not a loss given to `compile`), when
        the printed values are proven tensors or Python values: `tf.print`
        then shows on every call the values `print` showed eagerly.
        `tf.print` has no XLA kernel: under `tf.function(jit_compile=True)` it
        fails with `InvalidArgumentError ... StringFormat`, so prints there are
        reported with no fix. Keras 3's `compile(jit_compile="auto")` uses XLA on
        GPUs (and not on CPU-only machines), so in a loss given to `compile`, a
        Keras `Loss`/`Layer`/`Model` method, a function wrapped in
        `tf.function(...)` elsewhere, or code called from those, the rewrite can
        make `fit` fail on a GPU while passing on a laptop: that fix is unsafe
        (applied with `--unsafe-fixes`), and the remedy on a GPU is
        `compile(jit_compile=False)` or removing the print.

        A write to `sys.stdout` / `sys.stderr` has the fix safety of the
        `print(text, end="")` it is, and a constant part of a line written in
        parts is as safe as the least safe fix of the parts beside it.

        The fix is unsafe too, and its message names the assumption, when it
        rests on likely evidence: a printed parameter of a traced function with
        no evidence either way, taken for a tensor; `.numpy()` on a value not
        known to be a tensor; a format spec with a precision (`{loss:.4f}`,
        `%.4f`), which assumes a floating-point tensor, since
        `tf.strings.as_string` rejects a precision for integers; a number
        format of a tensor not known to be a scalar (`tf.reshape(x, [])`);
        a NumPy reduction folded on a tensor of unknown dtype (TensorFlow's
        reduces integers in their own dtype, and rejects booleans for max).
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
                print("loss:", float(loss), "first:", tf.abs(x).numpy())
                return loss
            """,
            """\
            import sys

            import tensorflow as tf

            @tf.function
            def step(x):
                loss = tf.reduce_mean(x)
                tf.print("loss:", loss, "first:", tf.abs(x), summarize=-1, output_stream=sys.stdout)
                return loss
            """,
            note="host reads print the tensor; every element, as `print` showed",
        ),
        Invalid(
            """\
            import tensorflow as tf

            @tf.function
            def step(x: tf.Tensor):
                y = tf.abs(tf.cast(x, tf.float32))
                print("max:", y.numpy().max())
                print(y.numpy().mean(axis=0))
                return y
            """,
            """\
            import sys

            import tensorflow as tf

            @tf.function
            def step(x: tf.Tensor):
                y = tf.abs(tf.cast(x, tf.float32))
                tf.print("max:", tf.reduce_max(y), output_stream=sys.stdout)
                tf.print(tf.reduce_mean(y, axis=0), summarize=-1, output_stream=sys.stdout)
                return y
            """,
            findings=2,
            note="NumPy's reductions after `.numpy()` become TensorFlow's",
        ),
        Invalid(
            """\
            import tensorflow as tf

            @tf.function(input_signature=[tf.TensorSpec([None, 3])])
            def step(x):
                loss = tf.reduce_mean(x)
                tf.print("batch %d: loss %s" % (x.shape[0], loss))
                return loss
            """,
            """\
            import tensorflow as tf

            @tf.function(input_signature=[tf.TensorSpec([None, 3])])
            def step(x):
                loss = tf.reduce_mean(x)
                tf.print("batch ", tf.shape(x)[0], ": loss ", loss, sep="")
                return loss
            """,
            note="Python formatting inside `tf.print`; a dimension unknown to the trace",
        ),
        Invalid(
            """\
            import tensorflow as tf

            @tf.function
            def step(x):
                loss = tf.reduce_mean(x)
                print("loss:", round(float(loss), 2))
                return loss
            """,
            None,
            note="a tensor turned into a Python value by `round`: finding only",
        ),
        Invalid(
            """\
            import sys
            import tensorflow as tf

            @tf.function
            def step(x):
                loss = tf.reduce_mean(x)
                sys.stderr.write("loss %s\\n" % loss)
                return loss
            """,
            """\
            import sys
            import tensorflow as tf

            @tf.function
            def step(x):
                loss = tf.reduce_mean(x)
                tf.print("loss ", loss, sep="", output_stream=sys.stderr)
                return loss
            """,
            note='a write to a standard stream is a `print` with `end=""`',
        ),
        Invalid(
            """\
            import sys
            import tensorflow as tf

            @tf.function
            def step(x):
                loss = tf.reduce_mean(x)
                sys.stdout.write("[")
                sys.stdout.write(f"{loss}")
                sys.stdout.write("]\\n")
                return loss
            """,
            """\
            import sys
            import tensorflow as tf

            @tf.function
            def step(x):
                loss = tf.reduce_mean(x)
                tf.print("[", end="", output_stream=sys.stdout)
                tf.print(loss, sep="", end="", output_stream=sys.stdout)
                tf.print("]\\n", end="", output_stream=sys.stdout)
                return loss
            """,
            findings=3,
            note="a line written in parts: its constant parts print on every call too",
        ),
        Valid(
            """\
            import sys
            import tensorflow as tf

            @tf.function
            def step(x):
                loss = tf.reduce_mean(x)
                sys.stdout.write("step traced\\n")
                sys.stdout.flush()
                return loss
            """,
            note="constant text and `flush`: trace-time, as a constant `print`",
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

            @tf.function
            def double(a):
                print("Tracing with", a)
                return a + a
            """,
            note="a message about tracing is meant to run at trace time",
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

    def check(self, ctx: RuleContext) -> Iterator[Violation]:
        for root in ctx.traced_functions():
            yield from self._walk(ctx, root)

    # -- finding prints -----------------------------------------------------------
    def _walk(self, ctx: RuleContext, root: FunctionScope) -> Iterator[Violation]:
        shadowed = shadows_print(ctx)
        # Every print, write and `tf.print`, for the lines written in parts.
        outputs: list[Output] = []
        # (node, innermost function, parent, indentation of the node's statement)
        stack: list[tuple[cst.CSTNode, FunctionScope, cst.CSTNode | None, str]] = [
            (root.node, root, None, "")
        ]
        while stack:
            node, scope, parent, indent = stack.pop()
            # Exact classes (LibCST's have no subclasses): `isinstance` on
            # them goes through `ABCMeta`, once per node of every traced body.
            if type(node) is cst.ClassDef:
                continue
            if type(node) is cst.FunctionDef and node is not scope.node:
                inner = ctx.scope_of(node)
                if inner is None:
                    continue
                scope = inner
            elif type(node) is cst.Call:
                output, violation = self._output(ctx, node, scope, parent, indent, shadowed)
                if output is not None:
                    outputs.append(output)
                if violation is not None:
                    yield violation
            elif type(node) is cst.IndentedBlock:
                own = node.indent
                indent += own if own is not None else ctx.module.default_indent
            children = child_nodes(node)
            children.reverse()
            stack.extend([(child, scope, node, indent) for child in children])
        yield from companions(ctx, outputs)

    def _output(
        self,
        ctx: RuleContext,
        call: cst.Call,
        scope: FunctionScope,
        parent: cst.CSTNode | None,
        indent: str,
        shadowed: bool,
    ) -> tuple[Output | None, Violation | None]:
        """The output `call` is (a `print`, a write to a standard stream, a
        `tf.print`; None for any other call) and TFR103's finding on it."""
        if is_print(call) and not shadowed:
            violation = check_print(ctx, call, scope, parent, indent, self.output_stream)
            output = Output(call, call, scope, parent, indent, violation, self.output_stream)
            return output, violation
        if written_stream(ctx, call) is not None:
            violation = check_stream_write(ctx, call, scope, parent, indent)
            return Output(call, as_print(call), scope, parent, indent, violation), violation
        if ctx.names.qualified_name(call.func) == "tensorflow.print":
            output = Output(call, None, scope, parent, indent, None)
            return output, self._check_tf_print(ctx, call, scope, indent)
        return None, None

    def _check_tf_print(
        self, ctx: RuleContext, call: cst.Call, scope: FunctionScope, indent: str
    ) -> Violation | None:
        """`tf.print("loss %s" % loss)`: Python formats the tensor while
        tracing, so the graph prints the text `Tensor("Mean:0", ...)` on every
        call; `tf.print(x.numpy())` fails traced; `tf.print(x.shape[0])`
        prints `None` under an `input_signature`."""
        if any(arg.star for arg in call.args):
            return None
        positional = [arg.value for arg in call.args if arg.keyword is None]
        if not any(is_string_formatting(v) for v in positional) and not _may_read_dimension(
            ctx, call, scope
        ):
            # Tensors and constants passed as they are (the common, correct
            # `tf.print`): nothing is formatted or read at trace time, whatever
            # the arguments turn out to be.
            return None
        proven = ctx.tensors(scope)
        likely_note: str | None = None
        printed, shapes, facts = printed_values(ctx, call, scope, proven)
        formats = any(formats_a_tensor(facts, v) for v in positional)  # type: ignore[arg-type]
        if (
            not (formats or shapes)
            and proven.likely is not proven
            and not any(shows_values(facts, v) for v in positional)
        ):
            # Only parameters with no evidence either way: likely tensors. (Once
            # a proven tensor is printed as an argument, Python fields beside it
            # were left Python on purpose.)
            printed, shapes, facts = printed_values(ctx, call, scope, proven.likely)
            formats = any(formats_a_tensor(facts, v) for v in positional)  # type: ignore[arg-type]
            likely_note = proven.assumption_note(call)
        if not (formats or shapes):
            return None  # a host read alone is TFR105's
        if formats:
            problem = (
                "Python string formatting of a tensor inside `tf.print` runs once, at trace "
                "time: every call prints the text `Tensor(...)`, not the values"
            )
        else:
            problem = (
                "`.shape[...]` in `tf.print` is read at trace time and prints `None` for a "
                "dimension the traced function does not know"
            )
        try:
            refuse_leftover_reads(ctx, printed, facts)
            _refuse_unknown_fields(ctx, facts, printed)
            rewrite = rewrite_print(ctx, printed, facts, indent, tf_print=True)
        except PrintRefusal as refusal:
            return Violation(call, f"{problem}; not rewritten: {refusal}")
        notes = [
            *([likely_note] if likely_note else []),
            *assumed_notes(facts),
            *rewrite.assumptions,
        ]
        fix = print_fix(call, rewrite, "Pass the tensors to `tf.print` as arguments", notes)
        return Violation(call, problem, fix)


def _may_read_dimension(ctx: RuleContext, call: cst.Call, scope: FunctionScope) -> bool:
    """Whether `call` may print a static dimension the trace does not know
    (`x.shape[0]` under an `input_signature`, `dynamic_shape_reads`): only
    in such a function, and only through a subscript."""
    return dynamic_shapes(scope) and any(
        isinstance(node, cst.Subscript) for arg in call.args for node in iter_nodes(arg)
    )


def _refuse_unknown_fields(ctx: RuleContext, facts: PrintedFacts, call: cst.Call) -> None:
    """Inside `tf.print`, Python formatting that shows tensors may also format
    values not known to be tensors (`"%4.2f" % (loss, total)` with `total`
    accumulated from a helper's results): left as Python formatting they
    would still be formatted once, while tracing. Only Python numbers,
    strings and static facts may stay; a name holding a container of
    tensors becomes a `tf.print` argument, printed with its values."""
    for arg in call.args:
        if arg.keyword is not None:
            continue
        for operand in formatted_operands(arg.value):
            if facts.is_tensor(operand) or python_only(facts, operand):
                continue
            if isinstance(operand, cst.Name) and operand.value in facts.containers:
                continue  # a container of tensors: `tf.print` prints it with values
            raise PrintRefusal(
                f"`{ctx.code(operand)}` is formatted in Python among tensors and is not known "
                "to be a tensor or a Python value: it would still be formatted once, while "
                "tracing"
            )


# -- helpers: where the print is --------------------------------------------------------
RULES = (PrintInTracedCode,)
