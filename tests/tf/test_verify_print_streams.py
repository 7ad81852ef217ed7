"""Where a print goes is part of what it does: verify captures standard
output and standard error apart, and a rewrite that moves a print from one
to the other is a mismatch that names both streams."""

from __future__ import annotations

import sys
import textwrap

import pytest

from tfrewrite.api import fix_source
from tfrewrite.verify import capture
from tfrewrite.verify.checks import CHECK_PRINTS, Options, Request, verify
from tfrewrite.verify.outcome import call

pytestmark = pytest.mark.tensorflow

FAST = Options(samples=120, search=16, xla=False)

STDOUT = """
import sys
import tensorflow as tf

def logged_loss(y_true, y_pred):
    loss = tf.reduce_mean(tf.square(y_true - y_pred))
    print("loss", loss)
    return loss
"""
STDERR = STDOUT.replace('print("loss", loss)', 'print("loss", loss, file=sys.stderr)')


def _verify(original: str, rewrite: str, options: Options = FAST) -> dict:
    return verify(
        Request(
            "logged_loss",
            textwrap.dedent(original),
            textwrap.dedent(rewrite),
            path="case.py",
            options=options,
        )
    )


def _prints(result: dict) -> dict:
    return next(c for c in result["checks"] if c["name"] == CHECK_PRINTS)


def test_each_stream_is_captured_apart() -> None:
    """Measured on TensorFlow 2.21: `print` and `tf.print(...,
    output_stream=sys.stdout)` reach descriptor 1, `tf.print` (by default)
    and `print(..., file=sys.stderr)` descriptor 2, also traced."""
    import tensorflow as tf

    @tf.function
    def traced(x: tf.Tensor) -> tf.Tensor:
        tf.print("default", x)
        tf.print("out", x, output_stream=sys.stdout)
        tf.print("err", x, output_stream=sys.stderr)
        return x

    def eager(x: tf.Tensor) -> tf.Tensor:
        print("py", float(x))
        print("pyerr", float(x), file=sys.stderr)
        return x

    for _ in range(2):  # the second call runs the graph without tracing
        got = call(traced, {"x": tf.constant(1.5)}).printed
        assert (got.stdout, got.stderr) == ("out 1.5\n", "default 1.5\nerr 1.5\n")
    got = call(eager, {"x": tf.constant(2.0)}, eager=True).printed
    assert (got.stdout, got.stderr) == ("py 2.0\n", "pyerr 2.0\n")


def test_print_turned_into_tf_print_on_standard_error_is_a_mismatch() -> None:
    broken = STDOUT.replace('print("loss", loss)', 'tf.print("loss", loss)')
    result = _verify(STDOUT, broken)
    assert result["verdict"] == "mismatch", result
    detail = _prints(result)["detail"]
    assert "the original prints 'loss tf.Tensor(" in detail, detail
    assert "to stdout; the rewrite prints it to stderr" in detail, detail


def test_print_to_standard_error_moved_to_standard_output_is_a_mismatch() -> None:
    broken = STDERR.replace(
        'print("loss", loss, file=sys.stderr)', 'tf.print("loss", loss, output_stream=sys.stdout)'
    )
    result = _verify(STDERR, broken)
    assert result["verdict"] == "mismatch", result
    assert "to stderr; the rewrite prints it to stdout" in _prints(result)["detail"]


@pytest.mark.parametrize(
    ("original", "rewrite"),
    [
        (
            STDOUT,
            STDOUT.replace(
                'print("loss", loss)', 'tf.print("loss", loss, output_stream=sys.stdout)'
            ),
        ),
        (STDERR, STDERR.replace('print("loss", loss, file=sys.stderr)', 'tf.print("loss", loss)')),
    ],
    ids=["stdout", "stderr"],
)
def test_tf_print_on_the_same_stream_is_equivalent(original: str, rewrite: str) -> None:
    result = _verify(original, rewrite)
    assert result["verdict"] == "equivalent", result
    assert _prints(result)["ok"] and _prints(result)["runs"] >= 3


@pytest.mark.parametrize("original", [STDOUT, STDERR], ids=["stdout", "stderr"])
def test_the_tf_print_tfrewrite_writes_verifies(original: str) -> None:
    """TFR103's own fix keeps each print on its stream (`output_stream=`)."""
    decorated = textwrap.dedent(original).replace(
        "\ndef logged_loss", "\n@tf.function\ndef logged_loss"
    )
    fixed = fix_source(decorated, "case.py", select=["TFR103"])
    assert "tf.print(" in fixed and "output_stream=sys.std" in fixed, fixed
    result = verify(Request("logged_loss", decorated, fixed, path="case.py", options=FAST))
    assert result["verdict"] == "equivalent", result


def test_standard_error_the_project_asks_for_is_not_a_mismatch() -> None:
    """`print-output-stream = "stderr"`: TFR103 writes its `tf.print` to
    standard error on purpose, so the original's standard output is looked
    for there; output that moves the other way is still a mismatch."""
    on_stderr = Options(samples=120, search=16, xla=False, print_output_stream="stderr")
    moved = STDOUT.replace('print("loss", loss)', 'tf.print("loss", loss)')
    assert _verify(STDOUT, moved, on_stderr)["verdict"] == "equivalent"
    wrong = STDOUT.replace('print("loss", loss)', 'tf.print("loss", loss * 2.0)')
    assert _verify(STDOUT, wrong, on_stderr)["verdict"] == "mismatch"
    back = STDERR.replace(
        'print("loss", loss, file=sys.stderr)', 'tf.print("loss", loss, output_stream=sys.stdout)'
    )
    assert _verify(STDERR, back, on_stderr)["verdict"] == "mismatch"


def test_a_random_function_that_prints_is_held_to_the_stream_too() -> None:
    original = """
        import tensorflow as tf

        def noisy(y_true, y_pred):
            noise = tf.random.normal(tf.shape(y_pred))
            print("noise", tf.reduce_mean(noise))
            return y_pred + noise
        """
    rewrite = original.replace(
        'print("noise", tf.reduce_mean(noise))', 'tf.print("noise", tf.reduce_mean(noise))'
    )
    result = verify(
        Request("noisy", textwrap.dedent(original), textwrap.dedent(rewrite), options=FAST)
    )
    assert result["stochastic"] and result["verdict"] == "mismatch", result
    assert "to stdout; the rewrite prints it to stderr" in _prints(result)["detail"]


def test_messages_name_both_streams() -> None:
    """Text only on the other stream, text on both, and different values."""
    out, err = capture.Printed("loss 0.5\n", ""), capture.Printed("", "loss 0.5\n")
    assert capture.compare_printed(out, err, 0, 0) == (
        "the original prints 'loss 0.5' to stdout; the rewrite prints it to stderr"
    )
    assert capture.compare_printed(err, out, 0, 0, call=2) == (
        "the original prints 'loss 0.5' to stderr; the rewrite prints it to stdout (traced call 2)"
    )
    both = capture.Printed("loss 0.5\n", "loss 0.5\n")
    assert capture.compare_printed(err, both, 0, 0) == (
        "the original prints 'loss 0.5' to stderr; the rewrite also prints it to stdout"
    )
    other = capture.Printed("", "loss 0.7\n")
    assert capture.compare_printed(out, other, 0, 0) == (
        "the original prints 'loss 0.5' to stdout; the rewrite prints 'loss 0.7' to stderr instead"
    )
    assert capture.compare_printed(out, capture.Printed("loss 0.7\n", ""), 0, 0) == (
        "traced call 1 printed 'loss 0.7' to stdout, the original printed 'loss 0.5': "
        "value 1 printed as 0.7, expected 0.5"
    )
    assert capture.compare_printed(out, out, 0, 0) is None


def test_the_project_setting_reaches_the_workers() -> None:
    """`[tool.tfrewrite] print-output-stream` goes into the worker options;
    the default adds no key, so stored results keep their keys (`--resume`)."""
    from tfrewrite.config import Settings
    from tfrewrite.verify.settings import verify_settings_of

    default = verify_settings_of(Settings()).worker_options()
    assert "print_output_stream" not in default
    assert Options.from_json(default).print_output_stream == "stdout"
    moved = verify_settings_of(Settings(print_output_stream="stderr")).worker_options()
    assert Options.from_json(moved).print_output_stream == "stderr"
