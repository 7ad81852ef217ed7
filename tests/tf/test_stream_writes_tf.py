"""TFR103 on `sys.stdout.write` / `sys.stderr.write` under TensorFlow.

Measured on TensorFlow 2.21: traced, `sys.stdout.write("loss %s\\n" % loss)`
writes `loss Tensor("Mean:0", shape=(), dtype=float32)` once, while tracing,
and `"%.3f" % loss` (or `f"{loss:.3f}"`, `"{:.3f}".format(loss)`) raises
`TypeError` there. `tf.print(..., output_stream=sys.stdout, end="")` writes
to file descriptor 1 (`sys.stderr`: descriptor 2) with no line end, in call
order, traced with or without AutoGraph.

Each rewrite is run traced (and traced with `autograph=False`) over three
calls and compared with the original run eagerly, descriptor by descriptor:
the same characters on the same stream, where the format has a precision;
the same values (not the eager `tf.Tensor(...)` decoration) for `%s`.
"""

from __future__ import annotations

import textwrap

import pytest
import tensorflow as tf

from tfrewrite.api import check_source, fix_source

from .equivalence import load_module, python_function, run_eagerly
from .fdcapture import Captured, capture_fds
from .test_print_rewrites import assert_same_printed

pytestmark = pytest.mark.tensorflow

CALLS = [
    tf.constant([1.0, 2.25, -0.5]),
    tf.constant([0.1, 0.2, 0.3]),
    tf.constant([-3.5, 1e-3, 7.0]),
]

HEADER = """\
import sys
import tensorflow as tf

@tf.function
def f(x):
    loss = tf.reduce_mean(tf.cast(x, tf.float32))
    n = tf.size(x)
    top = tf.argmax(x)
"""


def source_with(body: str) -> str:
    return (
        HEADER + textwrap.indent(textwrap.dedent(body).strip("\n"), "    ") + "\n    return loss\n"
    )


def rewrite(source: str) -> str:
    fixed = fix_source(source, select=["TFR103"], unsafe_fixes=True)
    assert fixed != source, "TFR103 did not rewrite the write"
    assert check_source(fixed, select=["TFR103"]) == []
    assert ".write(" not in fixed
    return fixed


def run(fn, calls=CALLS) -> Captured:
    with capture_fds() as out:
        for x in calls:
            fn(x)
    return out


def eager(fn) -> Captured:
    return run(lambda x: run_eagerly(fn, x))


def traced_variants(fn) -> list:
    plain = python_function(fn)
    return [tf.function(plain), tf.function(plain, autograph=False)]


# The text is the same character for character (a precision, `%d` of an
# integer tensor, plain text).
EXACT = [
    pytest.param('sys.stdout.write("loss %.3f\\n" % loss)', id="percent-f-stdout"),
    pytest.param('sys.stderr.write(f"loss {loss:.4f} | ")', id="fstring-spec-stderr-no-newline"),
    pytest.param('sys.stdout.write("{:10.2e}\\n".format(loss))', id="format-scientific-width"),
    pytest.param('sys.stdout.write("%d items, top %d\\n" % (n, top))', id="percent-d-integers"),
    pytest.param(
        'sys.stdout.write("a %.1f\\nb %.2f\\n\\n" % (loss, loss * 2))', id="several-lines"
    ),
    pytest.param(
        """
        sys.stdout.write(f"[{loss:.2f}")
        sys.stderr.write(f"err {loss:.3e}\\n")
        sys.stdout.write("]\\n")
        """,
        id="both-streams-interleaved",
    ),
]


@pytest.mark.parametrize("body", EXACT)
def test_rewrite_traced_writes_what_the_original_writes_eagerly(body: str) -> None:
    source = source_with(body)
    original = load_module(source).f
    rewritten = load_module(rewrite(source)).f
    expected = eager(original)
    assert expected.stdout or expected.stderr
    for fn in traced_variants(rewritten):
        got = run(fn)
        assert (got.stdout, got.stderr) == (expected.stdout, expected.stderr)


def test_original_traced_raises_on_a_number_format() -> None:
    original = load_module(source_with('sys.stdout.write("loss %.3f\\n" % loss)')).f
    with capture_fds(), pytest.raises(TypeError):
        original(CALLS[0])


@pytest.mark.parametrize(
    "body",
    [
        'sys.stdout.write("loss %s\\n" % loss)',
        'sys.stderr.write(f"loss={loss} n={n}\\n")',
        'sys.stdout.write("{} / {}\\n".format(loss, top))',
    ],
    ids=["percent-s", "fstring-stderr", "str-format"],
)
def test_plain_fields_show_the_values_on_every_call(body: str) -> None:
    source = source_with(body)
    stream = "stderr" if "stderr" in body else "stdout"
    other = "stdout" if stream == "stderr" else "stderr"
    original = load_module(source).f
    traced_original = run(original)
    shown = getattr(traced_original, f"{stream}_lines")()
    assert len(shown) == 1 and "Tensor(" in shown[0]  # once, while tracing

    expected = getattr(eager(original), f"{stream}_lines")()
    assert len(expected) == len(CALLS)
    rewritten = load_module(rewrite(source)).f
    for fn in traced_variants(rewritten):
        got = run(fn)
        assert getattr(got, other) == ""
        assert_same_printed(expected, getattr(got, f"{stream}_lines")())


# A line written in parts: the constant parts print on every call too.
IN_PARTS = [
    pytest.param(
        """
        sys.stdout.write("[")
        sys.stdout.write("%.2f" % loss)
        sys.stdout.write("]\\n")
        """,
        id="writes",
    ),
    pytest.param(
        """
        print("loss: ", end="")
        print("%.3f" % loss)
        print("done")
        """,
        id="prints",
    ),
    pytest.param(
        """
        sys.stderr.write("step ")
        sys.stderr.write("%d" % n)
        print(" ok", file=sys.stderr)
        """,
        id="stderr-write-and-print",
    ),
]


@pytest.mark.parametrize("body", IN_PARTS)
def test_a_line_written_in_parts_stays_whole(body: str) -> None:
    source = source_with(body)
    original = load_module(source).f
    fixed = rewrite(source)
    assert "print(" not in fixed.replace("tf.print(", "")  # every part is a tf.print
    rewritten = load_module(fixed).f
    expected = eager(original)
    assert expected.stdout.count("\n") + expected.stderr.count("\n") >= len(CALLS)
    for fn in traced_variants(rewritten):
        got = run(fn)
        assert (got.stdout, got.stderr) == (expected.stdout, expected.stderr)
