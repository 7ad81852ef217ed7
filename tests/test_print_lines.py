"""TFR103 on lines a traced function writes in parts.

Once the parts that show tensors become `tf.print` (every call), a part with
constant text would still print once, while tracing, and the line would fall
apart: those parts become `tf.print` too, as unsafe as the fixes beside them.
"""

from __future__ import annotations

import textwrap

import pytest

from tfrewrite.api import check_source, fix_source
from tfrewrite.findings import Applicability

SYS_TF = "import sys\nimport tensorflow as tf\n"


def traced(body: str, header: str = SYS_TF) -> str:
    """`body` inside `@tf.function def f(x)`, where `loss` is a scalar tensor."""
    body = textwrap.indent(textwrap.dedent(body).strip("\n"), "    ")
    head = f"{header}\n@tf.function\ndef f(x):\n    loss = tf.reduce_mean(x)\n"
    return f"{head}{body}\n    return loss\n"


def fix(source: str, unsafe: bool = False) -> str:
    return fix_source(source, select=["TFR103"], unsafe_fixes=unsafe)


def findings(source: str) -> list:
    """TFR103's findings in source order."""
    return sorted(check_source(source, select=["TFR103"]), key=lambda f: f.start)


def test_constant_parts_of_a_written_line_become_tf_print() -> None:
    source = traced(
        """
        sys.stdout.write("[")
        sys.stdout.write(f"{loss}")
        sys.stdout.write("]\\n")
        """
    )
    fixed = fix(source)
    assert fixed == traced(
        """
        tf.print("[", end="", output_stream=sys.stdout)
        tf.print(loss, sep="", end="", output_stream=sys.stdout)
        tf.print("]\\n", end="", output_stream=sys.stdout)
        """
    )
    assert fix(fixed) == fixed and findings(fixed) == []
    messages = [f.message for f in findings(source)]
    assert len(messages) == 3
    assert (
        "of text with no tensor runs once, at trace time, but it writes part of a line"
        in (messages[0])
    )
    assert "line 8" in messages[0]  # the write that shows the loss


def test_a_print_that_leaves_the_line_open() -> None:
    source = traced(
        """
        print("loss: ", end="")
        print(loss)
        print("done")
        """
    )
    assert fix(source) == traced(
        """
        tf.print("loss: ", end="", output_stream=sys.stdout)
        tf.print(loss, output_stream=sys.stdout)
        tf.print("done", output_stream=sys.stdout)
        """
    )


def test_a_user_tf_print_that_leaves_the_line_open() -> None:
    source = traced('tf.print(loss, end="", output_stream=sys.stdout)\nprint(" <- loss")')
    assert 'tf.print(" <- loss", output_stream=sys.stdout)' in fix(source)


def test_companions_are_as_unsafe_as_the_fix_beside_them() -> None:
    source = traced('sys.stdout.write("loss: ")\nsys.stdout.write("%.3f\\n" % loss)')
    assert fix(source) == source
    companion, value = findings(source)
    assert value.fix is not None and value.fix.applicability is Applicability.UNSAFE
    assert companion.fix is not None and companion.fix.applicability is Applicability.UNSAFE
    assert "rewritten with unsafe fixes" in companion.fix.message
    fixed = fix(source, unsafe=True)
    assert 'tf.print("loss: ", end="", output_stream=sys.stdout)' in fixed
    assert findings(fixed) == []


@pytest.mark.parametrize(
    "body",
    [
        # Whole lines: a constant one is a trace-time message, as before.
        'sys.stdout.write("loss %s\\n" % loss)\nprint("done")',
        'print("loss", loss)\nsys.stdout.write("epoch done\\n")',
        # A message about tracing stays as it is.
        'sys.stdout.write(f"{loss}")\nprint("Tracing f")',
        # Nothing shows a tensor.
        'sys.stdout.write("[")\nsys.stdout.write("]\\n")',
    ],
    ids=["whole-lines", "whole-lines-print-first", "tracing-message", "no-tensor"],
)
def test_constant_outputs_left_alone(body: str) -> None:
    source = traced(body)
    assert all("text with no tensor" not in f.message for f in findings(source))
    fixed = fix(source)
    assert fixed.count("tf.print(") == sum(1 for f in findings(source) if f.fix is not None)


def test_no_companions_when_a_part_showing_values_is_not_rewritten() -> None:
    """The line stays Python's in part whatever is done: only the finding."""
    source = traced('sys.stdout.write("[")\nsys.stdout.write("%08.3f]\\n" % loss)')
    (finding,) = findings(source)
    assert finding.fix is None and "not rewritten" in finding.message


def test_parts_in_another_function_are_not_companions() -> None:
    source = textwrap.dedent(
        """\
        import sys
        import tensorflow as tf

        @tf.function
        def f(x):
            loss = tf.reduce_mean(x)
            sys.stdout.write(f"{loss}")
            return loss

        @tf.function
        def g(x):
            sys.stdout.write("]\\n")
            return x
        """
    )
    assert len(findings(source)) == 1


def test_a_print_to_another_file_is_not_part_of_the_line() -> None:
    source = traced(
        'sys.stdout.write(f"{loss}")\nprint("saved", file=log_file)',
        header=SYS_TF + "\nlog_file = open('log.txt', 'w')\n",
    )
    (finding,) = findings(source)
    assert finding.message.startswith("`sys.stdout.write` in traced code")
