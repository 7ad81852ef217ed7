"""TFR103 on `sys.stdout.write(text)` / `sys.stderr.write(text)` in traced code.

A write of text to a standard stream is a `print(text, end="")` to that
stream: traced, Python formats the text once, while tracing (showing
`Tensor(...)`, or raising `TypeError` for a number format such as `%.3f`).
The rewrite is the `tf.print` the equivalent `print` gets, on the same
stream, with `end=""` (or with the text's own final newline as `tf.print`'s
line end). Every rewrite is checked for idempotence.
"""

from __future__ import annotations

import ast
import textwrap

import pytest

from tfrewrite.api import check_source, fix_source
from tfrewrite.findings import Applicability

SYS_TF = "import sys\nimport tensorflow as tf\n"


def traced(body: str, header: str = SYS_TF, decorator: str = "@tf.function") -> str:
    """`body` inside a traced `f(x: tf.Tensor)` where `loss` is a scalar
    float32 tensor and `n` a scalar int32 tensor."""
    body = textwrap.indent(textwrap.dedent(body).strip("\n"), "    ")
    head = (
        f"{header}\n{decorator}\ndef f(x: tf.Tensor):\n"
        "    loss = tf.reduce_mean(tf.cast(x, tf.float32))\n"
        "    n = tf.size(x)\n"
    )
    return f"{head}{body}\n    return loss\n"


def fix(source: str, unsafe: bool = False) -> str:
    return fix_source(source, select=["TFR103"], unsafe_fixes=unsafe)


def assert_rewrites(before: str, after: str, unsafe: bool = False) -> None:
    fixed = fix(before, unsafe)
    assert fixed == after
    assert fix(fixed, unsafe) == fixed
    assert check_source(fixed, select=["TFR103"]) == []


def findings(source: str) -> list:
    return check_source(source, select=["TFR103"])


# -- rewrites with no assumption: safe -----------------------------------------------
SAFE = [
    pytest.param(
        'sys.stdout.write("loss %s\\n" % loss)',
        'tf.print("loss ", loss, sep="", output_stream=sys.stdout)',
        id="percent-s-newline-is-tf-print-line-end",
    ),
    pytest.param(
        'sys.stderr.write("loss %s\\n" % loss)',
        'tf.print("loss ", loss, sep="", output_stream=sys.stderr)',
        id="stderr",
    ),
    pytest.param(
        'sys.stdout.write(f"loss {loss} | ")',
        'tf.print("loss ", loss, " | ", sep="", end="", output_stream=sys.stdout)',
        id="no-newline-keeps-end-empty",
    ),
    pytest.param(
        'sys.stdout.write("{} of {}\\n".format(loss, n))',
        'tf.print(loss, " of ", n, sep="", output_stream=sys.stdout)',
        id="str-format",
    ),
    pytest.param(
        'sys.stdout.write("%d items\\n" % n)',
        'tf.print(n, " items", sep="", output_stream=sys.stdout)',
        id="percent-d-of-an-integer-tensor",
    ),
    pytest.param(
        'sys.stdout.write("first %s\\nsecond\\n\\n" % loss)',
        'tf.print("first ", loss, "\\nsecond\\n", sep="", output_stream=sys.stdout)',
        id="only-the-last-newline-becomes-the-line-end",
    ),
    pytest.param(
        'sys.stdout.write(f"\\n{loss}")',
        'tf.print("\\n", loss, sep="", end="", output_stream=sys.stdout)',
        id="leading-newline-kept",
    ),
    pytest.param(
        'sys.stdout.write(f"epoch {EPOCHS}: {loss}\\n")',
        'tf.print(f"epoch {EPOCHS}: ", loss, sep="", output_stream=sys.stdout)',
        id="python-field-stays-python",
    ),
]


@pytest.mark.parametrize(("before", "after"), SAFE)
def test_safe_rewrite(before: str, after: str) -> None:
    source = traced(before)
    assert_rewrites(source, traced(after))
    (finding,) = findings(source)
    assert finding.fix is not None and finding.fix.applicability is Applicability.SAFE
    stream = "stderr" if "stderr" in before else "stdout"
    assert f"`sys.{stream}.write` in traced code runs once" in finding.message


# -- a number format assumes a floating-point tensor: unsafe, as for `print` ----------
UNSAFE = [
    pytest.param(
        'sys.stdout.write("loss %.3f\\n" % loss)',
        'tf.print(tf.strings.join(["loss ", tf.strings.as_string(loss, precision=3)]), '
        "output_stream=sys.stdout)",
        id="percent-f",
    ),
    pytest.param(
        'sys.stderr.write(f"{loss:.4f} ")',
        'tf.print(tf.strings.join([tf.strings.as_string(loss, precision=4), " "]), end="", '
        "output_stream=sys.stderr)",
        id="fstring-spec-no-newline",
    ),
    pytest.param(
        'sys.stdout.write("{:10.2e}\\n".format(loss))',
        "tf.print(tf.strings.as_string(loss, precision=2, scientific=True, width=10), "
        "output_stream=sys.stdout)",
        id="format-scientific-width",
    ),
]


@pytest.mark.parametrize(("before", "after"), UNSAFE)
def test_number_format_rewrite_is_unsafe(before: str, after: str) -> None:
    source = traced(before)
    assert fix(source) == source
    fixed = fix(source, unsafe=True)
    assert fix(fixed, unsafe=True) == fixed
    assert _same_code(fixed, traced(after)), fixed
    (finding,) = findings(source)
    assert finding.fix is not None and finding.fix.applicability is Applicability.UNSAFE
    assert "floating-point tensor" in finding.fix.message
    assert "raises `TypeError`" in finding.message


def _same_code(a: str, b: str) -> bool:
    """Equal up to layout (line breaks inside brackets)."""
    return ast.dump(ast.parse(a)) == ast.dump(ast.parse(b))


def test_the_same_tf_print_as_the_equivalent_print() -> None:
    """`sys.stdout.write(s)` is `print(s, end="")`: both rewrite to one `tf.print`."""
    for text in ('"loss %s | " % loss', 'f"{loss:.3f}\\n"', '"{} {}".format(n, loss)'):
        written = fix(traced(f"sys.stdout.write({text})"), unsafe=True)
        printed = fix(traced(f'print({text}, end="")'), unsafe=True)
        assert written == printed, text


def test_from_sys_import_stdout() -> None:
    source = traced(
        'stdout.write("loss %s\\n" % loss)',
        header="from sys import stdout\nimport tensorflow as tf\n",
    )
    fixed = fix(source)
    assert 'tf.print("loss ", loss, sep="", output_stream=sys.stdout)' in fixed
    assert fixed.startswith("import sys\n")
    assert "from sys import stdout" not in fixed  # no longer used
    assert fix(fixed) == fixed


def test_sys_imported_under_another_name() -> None:
    source = traced(
        'system.stderr.write(f"loss {loss}\\n")',
        header="import sys as system\nimport tensorflow as tf\n",
    )
    fixed = fix(source)
    assert 'tf.print("loss ", loss, sep="", output_stream=system.stderr)' in fixed
    assert "import sys\n" not in fixed


def test_sys_imported_inside_the_function() -> None:
    source = traced(
        'import sys\nsys.stdout.write(f"loss {loss}\\n")', header="import tensorflow as tf\n"
    )
    fixed = fix(source)
    assert 'tf.print("loss ", loss, sep="", output_stream=sys.stdout)' in fixed
    assert fix(fixed) == fixed


def test_the_print_stream_setting_does_not_move_a_write(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rule's stream for a `print` without `file=` (a setting) does not
    apply to a write, which names its stream."""
    from tfrewrite.rules.host_values.python_print import PrintInTracedCode

    monkeypatch.setattr(PrintInTracedCode, "output_stream", "stderr")
    assert "output_stream=sys.stdout" in fix(traced('sys.stdout.write("loss %s\\n" % loss)'))


def test_host_read_inside_the_write_becomes_the_tensor() -> None:
    """TFR105 leaves `loss.numpy()` inside a rewritten write to TFR103."""
    source = traced('sys.stdout.write("loss %s\\n" % loss.numpy())')
    assert [f.code for f in check_source(source, select=["TFR103", "TFR105"])] == ["TFR103"]
    fixed = fix_source(source, select=["TFR103", "TFR105"])
    assert 'tf.print("loss ", loss, sep="", output_stream=sys.stdout)' in fixed


def test_keras_loss_gets_an_unsafe_fix() -> None:
    source = textwrap.dedent(
        """\
        import sys
        import tensorflow as tf

        def mse(y_true, y_pred):
            loss = tf.reduce_mean(tf.square(y_true - y_pred))
            sys.stdout.write("loss %s\\n" % loss)
            return loss

        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        model.compile(optimizer="sgd", loss=mse)
        """
    )
    assert fix(source) == source
    assert 'tf.print("loss ", loss, sep="", output_stream=sys.stdout)' in fix(source, unsafe=True)


# -- reported with no fix --------------------------------------------------------------
REFUSALS = [
    pytest.param(
        "count = sys.stdout.write(f'{loss}')",
        "the value of this `sys.stdout.write(...)` is used",
        id="value-used",
    ),
    pytest.param(
        "sys.stdout.write(describe(loss))",
        "`describe(loss)` is text Python builds from tensors",
        id="text-built-by-a-helper",
    ),
    pytest.param(
        'sys.stdout.write("loss " + str(loss) + "\\n")',
        "`str(loss)` turns a tensor into a Python value",
        id="str-of-a-tensor",
    ),
    pytest.param(
        'sys.stdout.write("loss", loss)', "`write` takes one string argument", id="two-arguments"
    ),
    pytest.param(
        'sys.stdout.write("%08.3f\\n" % loss)',
        "`%08.3f` on the tensor `loss` has no TensorFlow equivalent",
        id="zero-padded-spec",
    ),
    pytest.param(
        'sys.stdout.write(f"{loss:>8}\\n")',
        "the format spec `>8` of `loss` has no TensorFlow equivalent",
        id="aligned-spec",
    ),
    pytest.param(
        'sys.stdout.write("%d\\n" % loss)',
        "truncates a float tensor",
        id="percent-d-of-a-float",
    ),
]


@pytest.mark.parametrize(("line", "reason"), REFUSALS)
def test_refused_with_reason(line: str, reason: str) -> None:
    source = traced(line, header=SYS_TF + "\ndef describe(t):\n    return str(t)\n")
    assert fix(source, unsafe=True) == source
    (finding,) = findings(source)
    assert finding.fix is None
    assert "not rewritten: " in finding.message and reason in finding.message, finding.message


def test_jit_compile_is_refused() -> None:
    source = traced(
        'sys.stdout.write("loss %s\\n" % loss)', decorator="@tf.function(jit_compile=True)"
    )
    (finding,) = findings(source)
    assert finding.fix is None and "no XLA kernel" in finding.message


# -- not reported ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "line",
    [
        "sys.stdout.flush()",
        'sys.stdout.write("step done\\n")',
        'sys.stdout.write("shape %s\\n" % (x.shape,))',
        'sys.stdout.write(f"Tracing f with {x}\\n")',
        "sys.stdout.write(tf.strings.format('{}', loss))",
        'log_file.write(f"loss {loss}\\n")',
        'sys.stdout.writelines(["a\\n"])',
    ],
    ids=[
        "flush",
        "constant-text",
        "static-shape",
        "announces-tracing",
        "a-tensor-not-text",
        "not-a-standard-stream",
        "not-write",
    ],
)
def test_not_reported(line: str) -> None:
    assert findings(traced(line, header=SYS_TF + "\nlog_file = open('log.txt', 'w')\n")) == []


def test_write_outside_traced_code_untouched() -> None:
    source = textwrap.dedent(
        """\
        import sys
        import tensorflow as tf

        def report(x):
            loss = tf.reduce_mean(x)
            sys.stdout.write("loss %.3f\\n" % loss)
            sys.stdout.flush()
            return loss
        """
    )
    assert findings(source) == []
    assert fix(source, unsafe=True) == source


def test_a_local_stdout_is_not_the_standard_stream() -> None:
    source = traced(
        'stdout = io.StringIO()\nstdout.write(f"loss {loss}\\n")',
        header="import io\nimport tensorflow as tf\n",
    )
    assert findings(source) == []


def test_write_with_print_shadowed_is_still_reported() -> None:
    """A file that defines its own `print` has its prints left alone; its
    writes to `sys.stdout` are still the standard stream's."""
    source = traced(
        'sys.stdout.write(f"loss {loss}\\n")', header=SYS_TF + "\ndef print(*a):\n    pass\n"
    )
    assert 'tf.print("loss ", loss, sep="", output_stream=sys.stdout)' in fix(source)
