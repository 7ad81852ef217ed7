"""TFR103 before/after matrix: `print` in traced code becomes `tf.print`.

Every rewrite is also checked for idempotence (fixing the result changes
nothing and leaves no TFR103 finding), and every refusal for leaving the
source unchanged with a finding that says why.
"""

from __future__ import annotations

import ast
import json
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tfrewrite.api import check_source, fix_source, fix_source_with_findings
from tfrewrite.findings import Applicability

TF = "import tensorflow as tf\n"
SYS_TF = "import sys\nimport tensorflow as tf\n"


def traced(body: str, header: str = SYS_TF, params: str = "x, step") -> str:
    """`body` inside `@tf.function def f(...)` where `loss` is a scalar tensor."""
    body = textwrap.indent(textwrap.dedent(body).strip("\n"), "    ")
    head = f"{header}\n@tf.function\ndef f({params}):\n    loss = tf.reduce_mean(x)\n"
    return f"{head}{body}\n    return loss\n"


def fix(source: str, unsafe: bool = False) -> str:
    return fix_source(source, select=["TFR103"], unsafe_fixes=unsafe)


def same_code(a: str, b: str) -> bool:
    """Equal up to layout (line breaks inside brackets)."""
    return ast.dump(ast.parse(a)) == ast.dump(ast.parse(b))


def assert_rewrites(before: str, after: str, unsafe: bool = False) -> None:
    fixed = fix(before, unsafe)
    assert fixed == after
    assert fix(fixed, unsafe) == fixed
    assert check_source(fixed, select=["TFR103"]) == []


# -- rewrites inside a `@tf.function` (safe unless a format spec needs a float) -------
REWRITES = [
    pytest.param(
        'print("loss:", loss)', 'tf.print("loss:", loss, output_stream=sys.stdout)', id="plain"
    ),
    pytest.param("print(loss)", "tf.print(loss, output_stream=sys.stdout)", id="tensor-only"),
    pytest.param(
        "print(x)",
        "tf.print(x, summarize=-1, output_stream=sys.stdout)",
        id="annotated-tensor-parameter",
    ),
    pytest.param(
        'print("a", loss, sep=" | ", end="!\\n")',
        'tf.print("a", loss, sep=" | ", end="!\\n", output_stream=sys.stdout)',
        id="sep-end-kept",
    ),
    pytest.param(
        'print("a", loss, file=sys.stderr)',
        'tf.print("a", loss, output_stream=sys.stderr)',
        id="file-stderr",
    ),
    pytest.param(
        'print("a", loss, file=sys.stdout, flush=True)',
        'tf.print("a", loss, output_stream=sys.stdout)',
        id="file-stdout-flush-dropped",
    ),
    pytest.param(
        'print("a", loss, sep=None, end=None, file=None)',
        'tf.print("a", loss, output_stream=sys.stdout)',
        id="none-defaults-dropped",
    ),
    pytest.param(
        "print(loss * 2, tf.shape(x))",
        "tf.print(loss * 2, tf.shape(x), summarize=-1, output_stream=sys.stdout)",
        id="tensor-expressions",
    ),
    pytest.param(
        'print("values", [loss, step], {"loss": loss})',
        'tf.print("values", [loss, step], {"loss": loss}, output_stream=sys.stdout)',
        id="containers",
    ),
    pytest.param(
        'print("epoch", step, "loss", loss)',
        'tf.print("epoch", step, "loss", loss, output_stream=sys.stdout)',
        id="python-values-kept",
    ),
    pytest.param(
        'print("a",  loss)  # trailing comment',
        'tf.print("a",  loss, output_stream=sys.stdout)  # trailing comment',
        id="layout-and-comment-kept",
    ),
    pytest.param(
        'print(\n    "loss",  # what\n    loss,\n)',
        'tf.print(\n    "loss",  # what\n    loss,\n    output_stream=sys.stdout,\n)',
        id="one-argument-per-line",
    ),
    # f-strings: separate arguments joined with sep=""
    pytest.param(
        'print(f"loss={loss}")',
        'tf.print("loss=", loss, sep="", output_stream=sys.stdout)',
        id="fstring",
    ),
    pytest.param(
        'print(f"loss={loss}", file=sys.stderr, end="")',
        'tf.print("loss=", loss, sep="", end="", output_stream=sys.stderr)',
        id="fstring-file-end",
    ),
    pytest.param(
        'print(f"step {step}: loss {loss} done")',
        'tf.print(f"step {step}: loss ", loss, " done", sep="", output_stream=sys.stdout)',
        id="fstring-python-field-stays-python",
    ),
    pytest.param(
        'print(f"{loss=}")',
        'tf.print("loss=", loss, sep="", output_stream=sys.stdout)',
        id="fstring-debug",
    ),
    pytest.param(
        'print(f"{loss!r} and {loss!s}")',
        'tf.print(loss, " and ", loss, sep="", output_stream=sys.stdout)',
        id="fstring-conversions",
    ),
    pytest.param(
        'print("step", step, f"loss={loss}", sep=", ")',
        'tf.print("step, ", step, ", loss=", loss, sep="", output_stream=sys.stdout)',
        id="fstring-with-sep",
    ),
    pytest.param(
        'print("a", f"{loss}", sep=SEP)',
        'tf.print("a", SEP, loss, sep="", output_stream=sys.stdout)',
        id="fstring-with-variable-sep",
    ),
    pytest.param(
        """print(f'say "{loss}" {{ok}}\\t')""",
        """tf.print('say "', loss, '" {ok}\\t', sep="", output_stream=sys.stdout)""",
        id="fstring-quotes-braces-escapes",
    ),
    pytest.param(
        'print(f"""say "{loss}" """)',
        """tf.print('say "', loss, '" ', sep="", output_stream=sys.stdout)""",
        id="fstring-triple-quoted",
    ),
    pytest.param(
        'print("loss" f"={loss}")',
        'tf.print("loss=", loss, sep="", output_stream=sys.stdout)',
        id="concatenated-fstring",
    ),
    pytest.param(
        'print(f"{loss:d}")',
        'tf.print(loss, sep="", output_stream=sys.stdout)',
        id="fstring-spec-d",
    ),
    # %-formatting and str.format
    pytest.param(
        'print("loss %s" % loss)',
        'tf.print("loss ", loss, sep="", output_stream=sys.stdout)',
        id="percent-s",
    ),
    pytest.param(
        'print("step %d: %r (100%%)" % (step, loss))',
        'tf.print("step %d: " % (step,), loss, " (100%)", sep="", output_stream=sys.stdout)',
        id="percent-python-field-stays-python",
    ),
    pytest.param(
        'print("loss {}".format(loss))',
        'tf.print("loss ", loss, sep="", output_stream=sys.stdout)',
        id="format-auto",
    ),
    # Computed from tensors but not known to be one: tf.print prints it as it is.
    pytest.param(
        "print(loss if step else 0.0)",
        "tf.print(loss if step else 0.0, output_stream=sys.stdout)",
        id="maybe-tensor-expression",
    ),
    pytest.param(
        'print("pair %s" % ([loss, loss],))',
        'tf.print("pair ", [loss, loss], sep="", output_stream=sys.stdout)',
        id="percent-container",
    ),
    pytest.param(
        'print("{1} at {0:>3}: {name}".format(step, loss, name=loss))',
        'tf.print(loss, " at {:>3}: ".format(step), loss, sep="", output_stream=sys.stdout)',
        id="format-indexed-and-named",
    ),
    # Host reads of a tensor print the tensor's value: the tensor itself.
    pytest.param(
        'print("loss", float(loss))',
        'tf.print("loss", loss, output_stream=sys.stdout)',
        id="float-read",
    ),
    pytest.param(
        "print(loss.numpy(), (loss * 2).numpy())",
        "tf.print(loss, (loss * 2), output_stream=sys.stdout)",
        id="numpy-read",
    ),
    pytest.param(
        'print("n", int(loss))',
        'tf.print("n", tf.cast(loss, tf.int64), output_stream=sys.stdout)',
        id="int-read-truncates",
    ),
    pytest.param(
        'print("n", int(tf.size(x)), int(tf.shape(x)[0]))',
        'tf.print("n", tf.size(x), tf.shape(x)[0], output_stream=sys.stdout)',
        id="int-read-of-integers",
    ),
    pytest.param(
        'print("loss %s, size %d" % (float(loss), int(tf.size(x))))',
        'tf.print("loss ", loss, ", size ", tf.size(x), sep="", output_stream=sys.stdout)',
        id="percent-reads",
    ),
    pytest.param(
        'print(f"loss {loss.numpy()}")',
        'tf.print("loss ", loss, sep="", output_stream=sys.stdout)',
        id="fstring-read",
    ),
    # tf.print abbreviates tensors past 3 elements per dimension; print did not.
    pytest.param(
        'print("x", tf.abs(x), loss)',
        'tf.print("x", tf.abs(x), loss, summarize=-1, output_stream=sys.stdout)',
        id="summarize-all",
    ),
    pytest.param(
        'print(f"x={tf.abs(x)}")',
        'tf.print("x=", tf.abs(x), sep="", summarize=-1, output_stream=sys.stdout)',
        id="summarize-all-fstring",
    ),
    pytest.param(
        'print("v", [tf.abs(x), loss])',
        'tf.print("v", [tf.abs(x), loss], summarize=-1, output_stream=sys.stdout)',
        id="summarize-all-container",
    ),
    pytest.param(
        'print("sum", tf.reduce_sum(x), x.shape)',
        'tf.print("sum", tf.reduce_sum(x), x.shape, output_stream=sys.stdout)',
        id="reduced-is-one-element",
    ),
]


@pytest.mark.parametrize(("before", "after"), REWRITES)
def test_rewrite_in_tf_function(before: str, after: str) -> None:
    source = traced(before)
    source = (
        source.replace("def f(x, step):", "def f(x: tf.Tensor, step):")
        if "print(x)" in before
        else source
    )
    expected = source.replace(textwrap.indent(before, "    "), textwrap.indent(after, "    "))
    assert expected != source
    assert_rewrites(source, expected)
    _, fixed, remaining = fix_source_with_findings(source, select=["TFR103"])
    assert [f.fix.applicability for f in fixed] == [Applicability.SAFE]
    assert remaining == []


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (
            'print(f"scaled {scale(loss)}")',
            'tf.print("scaled ", scale(loss), sep="", output_stream=sys.stdout)',
        ),
        ("print(describe(loss))", "tf.print(describe(loss), output_stream=sys.stdout)"),
    ],
)
def test_a_function_given_a_tensor_makes_the_fix_unsafe(before: str, after: str) -> None:
    """`describe(loss)`: a function tfrewrite does not see into is handed a
    tensor. If it returns a tensor, `tf.print` shows its values on every
    call; if it formats the tensor into text (`"loss=%s" % t`), traced that
    text is built once and `tf.print` prints it on every call, where the
    original run eagerly showed each call's values. Unsafe, saying so."""
    source = traced(before)
    expected = source.replace(textwrap.indent(before, "    "), textwrap.indent(after, "    "))
    assert_rewrites(source, expected, unsafe=True)
    assert fix(source, False) == source
    [finding] = check_source(source, select=["TFR103"])
    assert finding.fix is not None and finding.fix.applicability is Applicability.UNSAFE
    assert "is given a tensor and is assumed to return one" in finding.fix.message


# -- format specs on tensors: as_string, unsafe (it needs a float tensor) ---------------
FORMAT_SPECS = [
    pytest.param(
        'print(f"loss={loss:.4f}")', "tf.strings.as_string(loss, precision=4)", id="dot4f"
    ),
    pytest.param('print(f"loss={loss:f}")', "tf.strings.as_string(loss, precision=6)", id="f"),
    pytest.param(
        'print(f"loss={loss:.3e}")',
        "tf.strings.as_string(loss, precision=3, scientific=True)",
        id="e",
    ),
    pytest.param(
        'print(f"loss={loss:10.2f}")',
        "tf.strings.as_string(loss, precision=2, width=10)",
        id="width",
    ),
    pytest.param(
        'print("loss=%.4f" % loss)', "tf.strings.as_string(loss, precision=4)", id="percent-f"
    ),
    pytest.param(
        'print("loss={:.2e}".format(loss))',
        "tf.strings.as_string(loss, precision=2, scientific=True)",
        id="format-e",
    ),
]


@pytest.mark.parametrize(("before", "converted"), FORMAT_SPECS)
def test_format_spec_becomes_as_string_unsafe(before: str, converted: str) -> None:
    source = traced(before)
    expected = source.replace(
        textwrap.indent(before, "    "),
        f'    tf.print(tf.strings.join(["loss=", {converted}]), output_stream=sys.stdout)',
    )
    assert fix(source) == source, "a spec conversion must not apply as a safe fix"
    fixed = fix(source, unsafe=True)
    assert same_code(fixed, expected)
    assert fix(fixed, unsafe=True) == fixed
    [finding] = check_source(source, select=["TFR103"])
    assert finding.fix is not None and finding.fix.applicability is Applicability.UNSAFE
    assert "floating-point" in finding.fix.message


def test_format_spec_joins_the_whole_line() -> None:
    """A string tensor among other inputs is printed quoted by tf.print, so a
    line with a formatted tensor becomes one joined string; other tensors are
    formatted as tf.print formats them, Python values as `str()`."""
    source = traced('print("step", step, f"loss={loss:.3f}", "raw", loss, sep=SEP, end="")')
    expected = source.replace(
        '    print("step", step, f"loss={loss:.3f}", "raw", loss, sep=SEP, end="")\n',
        """\
    tf.print(
        tf.strings.join([
            f"step{SEP}{step}{SEP}loss=",
            tf.strings.as_string(loss, precision=3),
            f"{SEP}raw{SEP}",
            tf.strings.format("{}", loss),
        ]),
        end="",
        output_stream=sys.stdout,
    )
""",
    )
    assert fix(source, unsafe=True) == expected


def test_long_rewrite_is_one_argument_per_line() -> None:
    source = traced('print(f"the mean squared error of this batch is {loss} at step {step}")')
    assert fix(source).endswith(
        """\
    tf.print(
        "the mean squared error of this batch is ",
        loss,
        f" at step {step}",
        sep="",
        output_stream=sys.stdout,
    )
    return loss
"""
    )


def test_format_spec_on_a_tensor_not_known_scalar_formats_its_one_element() -> None:
    [finding] = check_source(traced('print(f"{tf.abs(x):.3f}")'), select=["TFR103"])
    assert finding.fix is not None and finding.fix.applicability is Applicability.UNSAFE
    assert "`tf.abs(x)` is taken to be a scalar" in finding.fix.message
    assert "tf.strings.as_string(tf.reshape(tf.abs(x), []), precision=3)" in fix(
        traced('print(f"{tf.abs(x):.3f}")'), unsafe=True
    )


def test_format_spec_with_a_container_of_tensors_is_refused() -> None:
    [finding] = check_source(traced('print([loss], f"{loss:.3f}")'), select=["TFR103"])
    assert finding.fix is None and "cannot be joined" in finding.message


# -- imports and spellings ----------------------------------------------------------------
def test_adds_import_sys_once() -> None:
    source = traced('print("a", loss)\nprint("b", loss)', header=TF)
    fixed = fix(source)
    assert fixed.count("import sys") == 1
    assert fixed.startswith("import sys\n\nimport tensorflow as tf\n")  # standard library first
    assert fixed.count("output_stream=sys.stdout") == 2


def test_sys_imported_under_another_name() -> None:
    source = traced(
        'print("a", loss, file=system.stderr)',
        header="import sys as system\nimport tensorflow as tf\n",
    )
    fixed = fix(source)
    assert 'tf.print("a", loss, output_stream=system.stderr)' in fixed
    assert "import sys\n" not in fixed


def test_from_sys_import_stderr() -> None:
    source = traced(
        'print("a", loss, file=stderr)', header="from sys import stderr\nimport tensorflow as tf\n"
    )
    fixed = fix(source)
    assert 'tf.print("a", loss, output_stream=sys.stderr)' in fixed
    assert "import sys\n" in fixed


def test_tensorflow_alias_of_the_file() -> None:
    source = (
        "import sys\nimport tensorflow as tfl\n\n@tfl.function\ndef f(x):\n"
        "    loss = tfl.reduce_mean(x)\n    print(loss)\n    return loss\n"
    )
    fixed = fix(source)
    assert "    tfl.print(loss, output_stream=sys.stdout)\n" in fixed
    assert "import tensorflow as tf\n" not in fixed


def test_decorated_method_of_a_plain_class_is_safe() -> None:
    source = (
        SYS_TF + "\nclass Trainer:\n    @tf.function\n    def step(self, x: tf.Tensor):\n"
        "        print(x)\n        return x\n"
    )
    assert "        tf.print(x, summarize=-1, output_stream=sys.stdout)\n" in fix(source)


def test_nested_function_in_traced_code() -> None:
    source = traced("def show(y):\n    print(y, loss)\nshow(loss)")
    assert "        tf.print(y, loss, output_stream=sys.stdout)\n" in fix(source)


# -- Keras contexts: the fix is unsafe (XLA on GPUs) ---------------------------------------
KERAS_LOSS = """\
import sys
import tensorflow as tf

def mse(y_true, y_pred):
    loss = tf.reduce_mean(tf.square(y_true - y_pred))
    print("loss", loss)
    return loss

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
model.compile(optimizer="sgd", loss=mse)
"""

KERAS_LOSS_CLASS = """\
import sys
import tensorflow as tf

class MyLoss(tf.keras.losses.Loss):
    def call(self, y_true, y_pred):
        print("pred", y_pred)
        return tf.reduce_mean(y_pred - y_true)
"""

DECORATED_AND_COMPILED = """\
import sys
import tensorflow as tf

@tf.function
def mse(y_true, y_pred):
    loss = tf.reduce_mean(tf.square(y_true - y_pred))
    print("loss", loss)
    return loss

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
model.compile(optimizer="sgd", loss=mse)
"""


DECORATED_KERAS_METHOD = """\
import sys
import tensorflow as tf

class Base(tf.keras.layers.Layer):
    pass

class Noisy(Base):
    @tf.function
    def call(self, inputs):
        print("sum", tf.reduce_sum(inputs))
        return inputs
"""


@pytest.mark.parametrize(
    ("source", "line"),
    [
        pytest.param(
            DECORATED_KERAS_METHOD,
            '        print("sum", tf.reduce_sum(inputs))\n',
            id="decorated-keras-method",
        ),
        pytest.param(KERAS_LOSS, '    print("loss", loss)\n', id="compiled-loss"),
        pytest.param(
            KERAS_LOSS_CLASS, '        print("pred", y_pred, summarize=-1)\n', id="loss-call"
        ),
        pytest.param(
            DECORATED_AND_COMPILED, '    print("loss", loss)\n', id="decorated-and-compiled"
        ),
    ],
)
def test_keras_traced_code_gets_an_unsafe_fix(source: str, line: str) -> None:
    [finding] = check_source(source, select=["TFR103"])
    assert finding.fix is not None and finding.fix.applicability is Applicability.UNSAFE
    assert "XLA" in finding.fix.message
    assert fix(source) == source
    fixed = fix(source, unsafe=True)
    assert (
        line.replace("print(", "tf.print(").replace(")\n", ", output_stream=sys.stdout)\n") in fixed
    ), fixed
    assert fix(fixed, unsafe=True) == fixed


# -- refusals: a finding that says why, no fix ------------------------------------------------
REFUSALS = [
    pytest.param("print(*[loss])", "`*args`", id="star-args"),
    pytest.param("print(**options)", "`*args`/`**kwargs`", id="star-kwargs"),
    pytest.param(
        'print("loss", float(scale(loss)))', "`float(scale(loss))` turns a tensor", id="float"
    ),
    pytest.param(
        'print(f"{loss:>8}")', "format spec `>8` of `loss` has no TensorFlow equivalent", id="align"
    ),
    pytest.param('print(f"{loss:08.2f}")', "format spec `08.2f`", id="zero-fill"),
    pytest.param('print(f"{loss:.{n}f}")', "computed at run time", id="nested-spec"),
    pytest.param('print(f"{loss!r:>8}")', "formats the text of a tensor", id="conversion-and-spec"),
    pytest.param(
        'print("%d" % loss)', "`%d` on the tensor `loss` truncates a float tensor", id="percent-d"
    ),
    pytest.param('print("%(v)s" % {"v": loss})', "keys", id="percent-mapping"),
    pytest.param('print("%s %s" % (loss,))', "more conversions than operands", id="percent-arity"),
    pytest.param(
        'print("{0.shape} {0}".format(loss))',
        "reads into a tensor",
        id="format-attribute",
    ),
    pytest.param('print("a", loss, file=log)', "not to `log`", id="file-object"),
    pytest.param("print(str(loss))", "`str(loss)` turns a tensor", id="str"),
    pytest.param("print([round(loss, 2)])", "`round(loss, 2)` turns a tensor", id="round-in-list"),
    pytest.param('print("v", loss.item())', "`loss.item()` turns a tensor", id="item"),
    pytest.param(
        'print(f"{scale(loss):.3f}")', "which is not known to be a tensor", id="spec-on-unknown"
    ),
    pytest.param(
        'print(f"{scale(loss)=}")', "which is not known to be a tensor", id="debug-unknown"
    ),
    pytest.param(
        'print("%d" % scale(loss))', "which is not known to be a tensor", id="percent-unknown"
    ),
    pytest.param(
        'print(f"{scale(loss)} {loss:.2f}")',
        "cannot be joined into one formatted line",
        id="join-unknown",
    ),
    # string formatting of a tensor inside a larger expression: a trace-time string
    pytest.param(
        'print(f"{loss}" + " done")',
        '`f"{loss}"` formats a tensor into a Python string inside a larger expression',
        id="fstring-plus",
    ),
    pytest.param(
        'print("loss: " + "%s" % loss)',
        '`"%s" % loss` formats a tensor into a Python string',
        id="percent-plus",
    ),
    pytest.param(
        'print(["{}".format(loss), step])',
        '`"{}".format(loss)` formats a tensor',
        id="format-in-list",
    ),
    pytest.param(
        'print(" ".join([f"{loss}", "x"]))',
        "formats a tensor into a Python string",
        id="join",
    ),
    pytest.param("value = print(loss)", "the value of this `print(...)` is used", id="value-used"),
    pytest.param(
        "show = lambda: print(loss)", "the value of this `print(...)` is used", id="lambda"
    ),
]


@pytest.mark.parametrize(("line", "reason"), REFUSALS)
def test_refused_with_reason(line: str, reason: str) -> None:
    source = traced(line)
    [finding] = check_source(source, select=["TFR103"])
    assert finding.fix is None
    assert reason in finding.message
    assert "not rewritten" in finding.message
    assert fix(source, unsafe=True) == source


def test_jit_compile_is_refused() -> None:
    source = traced('print("loss", loss)').replace("@tf.function", "@tf.function(jit_compile=True)")
    [finding] = check_source(source, select=["TFR103"])
    assert finding.fix is None
    assert "no XLA kernel" in finding.message and "jit_compile=True" in finding.message
    assert fix(source, unsafe=True) == source


def test_jit_compile_false_is_fixed() -> None:
    source = traced('print("loss", loss)').replace(
        "@tf.function", "@tf.function(jit_compile=False)"
    )
    assert 'tf.print("loss", loss, output_stream=sys.stdout)' in fix(source)


# -- left alone ---------------------------------------------------------------------------------
UNTOUCHED = [
    pytest.param('print("tracing f")', id="constant-text"),
    pytest.param('print(f"tracing f at step {step}")', id="python-only-fstring"),
    pytest.param('print("shape", x.shape, x.dtype, len(x), x.shape[0])', id="static-facts"),
    pytest.param('print(f"shape={x.shape}")', id="static-fstring"),
    pytest.param("print(len(step), unknown_value)", id="python-values"),
    pytest.param('tf.print("loss", loss)', id="already-tf-print"),
]


@pytest.mark.parametrize("line", UNTOUCHED)
def test_trace_time_messages_untouched(line: str) -> None:
    source = traced(line)
    assert check_source(source, select=["TFR103"]) == []
    assert fix(source, unsafe=True) == source


def test_print_outside_traced_code_untouched() -> None:
    source = (
        SYS_TF
        + "\ndef f(x):\n    loss = tf.reduce_mean(x)\n"
        + '    print(f"loss={loss}", loss)\n    return loss\n'
    )
    assert check_source(source, select=["TFR103"]) == []


def test_print_outside_the_traced_function_untouched() -> None:
    source = (
        traced('print("loss", loss)')
        + '\nprint("module", tf.constant(1.0))\n\ndef g(y):\n    print(tf.reduce_sum(y))\n'
    )
    fixed = fix(source)
    assert fixed.count("tf.print(") == 1
    assert 'print("module", tf.constant(1.0))' in fixed
    assert "    print(tf.reduce_sum(y))\n" in fixed


def test_shadowed_print_untouched() -> None:
    source = traced('print("loss", loss)', header="from rich import print\n" + SYS_TF)
    assert check_source(source, select=["TFR103"]) == []


def test_finding_points_at_the_call() -> None:
    source = traced('print("loss", loss)')
    [finding] = check_source(source, select=["TFR103"])
    line = source.splitlines().index('    print("loss", loss)') + 1
    assert (finding.start.line, finding.start.column) == (line, 5)
    assert finding.code == "TFR103" and finding.rule_name == "print-in-traced-code"


def test_default_stream_is_a_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    """`print`'s standard output is kept unless the rule is set to another stream."""
    from tfrewrite.rules.host_values.python_print import PrintInTracedCode

    monkeypatch.setattr(PrintInTracedCode, "output_stream", "stderr")
    assert 'tf.print("loss", loss, output_stream=sys.stderr)' in fix(traced('print("loss", loss)'))


# -- the rewritten text reads the same: a differential check without TensorFlow -----------
class FakeTensor:
    """Stands in for a scalar tensor: `print` and the fake `tf.print` both show
    its value, so any difference in the printed text comes from the rewrite."""

    def __init__(self, value: float) -> None:
        self.value = value

    def __str__(self) -> str:
        return str(self.value)

    __repr__ = __str__

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    def __float__(self) -> float:
        return float(self.value)


class FakeStrings:
    @staticmethod
    def join(inputs: list) -> str:
        return "".join(str(i) for i in inputs)

    @staticmethod
    def format(template: str, value: object) -> str:
        return template.replace("{}", str(value))

    @staticmethod
    def as_string(x: FakeTensor, precision: int, scientific: bool = False, width: int = -1) -> str:
        spec = f"{width if width > 0 else ''}.{precision}{'e' if scientific else 'f'}"
        return format(x.value, spec)


class FakeTF:
    """Just what the rewritten code calls, printing as `print` would."""

    strings = FakeStrings

    @staticmethod
    def function(fn):  # noqa: ANN001, ANN205
        return fn

    @staticmethod
    def reduce_mean(x: float) -> FakeTensor:
        return FakeTensor(x)

    @staticmethod
    def print(  # noqa: ANN001
        *inputs: object, sep: str = " ", end: str = "\n", output_stream=None, summarize=None
    ) -> None:
        output_stream.write(sep.join(str(i) for i in inputs) + end)


def run_printing(source: str, value: float, step: int) -> str:
    import io
    import sys as real_sys

    namespace: dict = {"tf": FakeTF}
    code = source.replace("import tensorflow as tf\n", "")
    buffer = io.StringIO()
    saved = real_sys.stdout
    real_sys.stdout = buffer
    try:
        exec(compile(code, "<rewritten>", "exec"), namespace)
        namespace["f"](value, step)
    finally:
        real_sys.stdout = saved
    return buffer.getvalue()


TEXT = st.text(alphabet="ab \"'\\{}%\n\t\x01é€", max_size=6)
FIELDS = st.sampled_from(["{loss}", "{step}", "{loss:.3f}", "{loss=}", "{loss!r}", "{loss:9.2e}"])


def py_literal(text: str, braces: bool = False) -> str:
    body = json.dumps(text)[1:-1]  # an escaping independent of the rule's own
    return body.replace("{", "{{").replace("}", "}}") if braces else body


@st.composite
def print_statements(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["fstring", "percent", "format", "args"]))
    texts = draw(st.lists(TEXT, min_size=3, max_size=3))
    if kind == "fstring":
        fields = draw(st.lists(FIELDS, min_size=1, max_size=2))
        body = py_literal(texts[0], True) + fields[0] + py_literal(texts[1], True)
        if len(fields) > 1:
            body += fields[1] + py_literal(texts[2], True)
        args = f'f"{body}"'
    elif kind == "percent":
        template = texts[0].replace("%", "%%") + "%s" + texts[1].replace("%", "%%") + "%.4f"
        args = f'"{py_literal(template)}" % (step, loss)'
    elif kind == "format":
        template = texts[0].replace("{", "{{").replace("}", "}}") + "{1:.2f}|{0}"
        args = f'"{py_literal(template)}".format(step, loss)'
    else:
        args = f'"{py_literal(texts[0])}", loss, f"{py_literal(texts[1], True)}{{step}}"'
    extra = ""
    if draw(st.booleans()):
        extra += f', sep="{py_literal(texts[2])}"'
    if draw(st.booleans()):
        extra += f', end="{py_literal(texts[1])}!\\n"'
    return f"print({args}{extra})"


@settings(max_examples=100, deadline=None)
@given(
    statement=print_statements(),
    value=st.floats(-1e6, 1e6, allow_nan=False),
    step=st.integers(0, 10**6),
)
def test_rewritten_text_reads_the_same(statement: str, value: float, step: int) -> None:
    source = traced(statement)
    fixed = fix(source, unsafe=True)
    if "loss" in statement:
        assert "tf.print(" in fixed, statement
    assert run_printing(fixed, value, step) == run_printing(source, value, step)


# -- Python formatting, host reads and static dimensions inside `tf.print` -------------------
TF_PRINT_REWRITES = [
    pytest.param('tf.print("loss %s" % loss)', 'tf.print("loss ", loss, sep="")', id="percent"),
    pytest.param(
        'tf.print("loss: {:.3f}".format(loss), output_stream=sys.stdout)',
        'tf.print(tf.strings.join(["loss: ", tf.strings.as_string(loss, precision=3)]), '
        "output_stream=sys.stdout)",
        id="format-spec-keeps-keywords",
    ),
    pytest.param(
        'tf.print(f"loss={loss}", step, sep=" | ")',
        'tf.print("loss=", loss, " | ", step, sep="")',
        id="fstring-with-sep",
    ),
    pytest.param(
        'tf.print("x %s" % tf.abs(x).numpy(), summarize=5)',
        'tf.print("x ", tf.abs(x), sep="", summarize=5)',
        id="own-summarize-kept",
    ),
]


@pytest.mark.parametrize(("before", "after"), TF_PRINT_REWRITES)
def test_tf_print_with_python_values_of_tensors(before: str, after: str) -> None:
    source = traced(before)
    [finding] = check_source(source, select=["TFR103"])
    assert finding.fix is not None
    fixed = fix(source, unsafe=True)
    assert same_code(fixed, traced(after)), fixed
    assert fix(fixed, unsafe=True) == fixed
    assert check_source(fixed, select=["TFR103"]) == []


def test_tf_print_of_tensors_is_left_alone() -> None:
    source = traced('tf.print("loss", loss, "step", step, f"at {step}")')
    assert check_source(source, select=["TFR103"]) == []


SIGNATURE_HEADER = "@tf.function(input_signature=[tf.TensorSpec([None, 3]), tf.TensorSpec([])])"


@pytest.mark.parametrize(
    ("decorator", "before", "after"),
    [
        pytest.param(
            SIGNATURE_HEADER,
            'print("batch", x.shape[0], loss)',
            'tf.print("batch", tf.shape(x)[0], loss, output_stream=sys.stdout)',
            id="input-signature",
        ),
        pytest.param(
            "@tf.function(reduce_retracing=True)",
            'print(f"batch {x.shape[0]}: {loss}")',
            'tf.print("batch ", tf.shape(x)[0], ": ", loss, sep="", output_stream=sys.stdout)',
            id="reduce-retracing",
        ),
        pytest.param(
            SIGNATURE_HEADER,
            'print("batch", x.shape[0])',
            'tf.print("batch", tf.shape(x)[0], output_stream=sys.stdout)',
            id="shape-only",
        ),
        pytest.param(
            SIGNATURE_HEADER,
            'tf.print("batch %d" % x.shape[0], loss)',
            'tf.print("batch ", tf.shape(x)[0], " ", loss, sep="")',
            id="tf-print-percent-d",
        ),
        pytest.param(
            "@tf.function(reduce_retracing=True)",
            'tf.print("rows", x.shape[0])',
            'tf.print("rows", tf.shape(x)[0])',
            id="tf-print-shape",
        ),
    ],
)
def test_dimensions_unknown_to_the_trace(decorator: str, before: str, after: str) -> None:
    source = traced(before).replace("@tf.function", decorator)
    [finding] = check_source(source, select=["TFR103"])
    assert "shape" in finding.message
    assert_rewrites(source, traced(after).replace("@tf.function", decorator))


def test_static_dimensions_stay_static_without_a_signature() -> None:
    assert fix(traced('print("batch", x.shape[0], loss)')) == traced(
        'tf.print("batch", x.shape[0], loss, output_stream=sys.stdout)'
    )
    assert check_source(traced('print("batch", x.shape[0])'), select=["TFR103"]) == []


@pytest.mark.parametrize(
    ("before", "after", "assumed"),
    [
        pytest.param(
            "print(scale(loss).numpy())",
            "tf.print(scale(loss), summarize=-1, output_stream=sys.stdout)",
            "scale(loss)",
            id="call-result",
        ),
        pytest.param(
            'print(loss, f"{x.numpy()}")',
            'tf.print(loss, " ", x, sep="", summarize=-1, output_stream=sys.stdout)',
            "x",
            id="parameter-in-fstring",
        ),
        pytest.param(
            'tf.print("lr: %s" % opt.lr.numpy())',
            'tf.print("lr: ", opt.lr, sep="", summarize=-1)',
            "opt.lr",
            id="attribute-in-tf-print",
        ),
    ],
)
def test_numpy_reads_of_values_not_known_to_be_tensors(before, after, assumed) -> None:
    """Only TensorFlow values have `.numpy()`: the receiver is printed as a
    tensor, and the fix says what it assumes."""
    source = traced(before)
    [finding] = check_source(source, select=["TFR103"])
    assert finding.fix is not None and finding.fix.applicability is Applicability.UNSAFE
    assert f"it assumes `{assumed}` is a TensorFlow value" in finding.fix.message
    fixed = fix(source, unsafe=True)
    assert same_code(fixed, traced(after)), fixed
    assert fix(fixed, unsafe=True) == fixed


def test_a_variable_prints_its_value() -> None:
    source = traced(
        'step_var = tf.Variable(0)\ntf.print("step %s, loss %s" % (step_var, loss))',
    )
    fixed = fix(source)
    assert 'tf.print("step ", step_var, ", loss ", loss, sep="")' in fixed


def test_integer_width_and_one_element_number_formats() -> None:
    """`%4d` of an integer tensor pads as printf does; a number format of a
    tensor not known to be a scalar formats its one element (Python raises
    for more)."""
    source = traced(
        'n = tf.size(x)\ntf.print("step %4d loss %.3f" % (n, tf.reduce_sum(x, axis=0)))',
    )
    [finding] = check_source(source, select=["TFR103"])
    assert "is taken to be a scalar" in finding.fix.message
    fixed = fix(source, unsafe=True)
    assert "tf.strings.as_string(n, width=4)" in fixed
    assert "tf.strings.as_string(tf.reshape(tf.reduce_sum(x, axis=0), []), precision=3)" in fixed


def test_tf_print_formatting_a_value_not_known_to_be_a_tensor_is_refused() -> None:
    source = traced('total = helper(x)\ntf.print("loss %.2f total %.2f" % (loss, total))')
    [finding] = check_source(source, select=["TFR103"])
    assert finding.fix is None
    assert "`total` is formatted in Python among tensors" in finding.message
    assert fix(source, unsafe=True) == source


@pytest.mark.parametrize(
    "line",
    [
        'print("Tracing with", x)',
        "print('Traced:', loss)",
        'print(f"retracing for {loss}")',
        'print("shape", x.shape, "-- tracing", loss)',
    ],
)
def test_a_message_about_tracing_is_left_alone(line: str) -> None:
    """The idiom of the `tf.function` guide: a print meant to run once per trace."""
    assert check_source(traced(line), select=["TFR103"]) == []


def test_a_parameter_with_no_evidence_is_a_likely_tensor() -> None:
    """`print(step)` where `step` is a parameter of the traced function with no
    evidence either way: AutoGraph traces it as a tensor whenever it is called
    with one. Reported, with a fix that says what it assumes."""
    source = traced('print("step", step)')
    [finding] = check_source(source, select=["TFR103"])
    assert finding.fix is not None and finding.fix.applicability is Applicability.UNSAFE
    assert "it assumes `step` is a tensor argument" in finding.fix.message
    assert fix(source) == source
    assert 'tf.print("step", step, summarize=-1, output_stream=sys.stdout)' in fix(
        source, unsafe=True
    )


def test_a_python_field_beside_a_proven_tensor_stays_python() -> None:
    """Once the print shows a proven tensor, a likely one formatted beside it
    stays Python formatting, and the result is not reported again."""
    fixed = fix(traced('print(f"step {step}: loss {loss}")'))
    assert 'tf.print(f"step {step}: loss ", loss, sep="", output_stream=sys.stdout)' in fixed
    assert check_source(fixed, select=["TFR103"]) == []
