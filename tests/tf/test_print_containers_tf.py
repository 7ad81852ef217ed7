"""TFR103 on prints of a name holding a dict, list or tuple of tensors, under
TensorFlow: traced, `print(logs)` shows `Tensor(...)` once; the `tf.print`
rewrite shows the values on every call, as the original does eagerly (with
`tf.print`'s formatting of a tensor rather than its `repr`). Checked traced,
and traced with `autograph=False`, over three calls, standard output and
standard error captured apart."""

from __future__ import annotations

import textwrap

import pytest
import tensorflow as tf

from tfrewrite.api import check_source, fix_source

from .equivalence import load_module, python_function, run_eagerly
from .fdcapture import capture_fds
from .test_print_rewrites import assert_same_printed

pytestmark = pytest.mark.tensorflow

CALLS = [
    tf.constant([1.0, 2.25, -0.5, 4.0]),
    tf.constant([0.1, 0.2, 0.3, 0.4]),
    tf.constant([-3.5, 1e-3, 7.0, 0.0]),
]

HEADER = """\
import sys
import tensorflow as tf

@tf.function
def f(x: tf.Tensor):
    loss = tf.reduce_mean(x)
"""


@pytest.mark.parametrize(
    "body",
    [
        'logs = {"loss": loss, "top": tf.reduce_max(x)}\nprint(logs)',
        'logs = {"loss": loss, "epoch": 3}\nprint("logs:", logs["loss"], logs["epoch"])',
        'logs = {"loss": loss, "low": tf.reduce_min(x)}\n'
        "for name, value in logs.items():\n    print(name, value, file=sys.stderr)",
        "pair = [loss, x]\nprint(pair)",
        'logs = {"loss": loss}\nsys.stdout.write("logs %s\\n" % logs)',
    ],
    ids=["dict", "dict-items-read", "items-loop-stderr", "list-with-a-long-tensor", "write"],
)
def test_container_prints_show_values_on_every_call(body: str) -> None:
    source = HEADER + textwrap.indent(textwrap.dedent(body), "    ") + "\n    return loss\n"
    stream = "stderr" if "stderr" in body else "stdout"
    other = "stdout" if stream == "stderr" else "stderr"
    fixed = fix_source(source, select=["TFR103"])
    assert fixed != source and check_source(fixed, select=["TFR103"]) == []
    original = load_module(source).f
    rewritten = load_module(fixed).f

    with capture_fds() as traced_original:
        for x in CALLS:
            original(x)
    lines = getattr(traced_original, f"{stream}_lines")()
    # At trace time only, showing symbolic tensors (`<tf.Tensor 'Mean:0' ...>`).
    assert 1 <= len(lines) <= 2 and all("Tensor" in line for line in lines)

    with capture_fds() as eager:
        for x in CALLS:
            run_eagerly(original, x)
    expected = getattr(eager, f"{stream}_lines")()
    for fn in (
        tf.function(python_function(rewritten)),
        tf.function(python_function(rewritten), autograph=False),
    ):
        with capture_fds() as got:
            for x in CALLS:
                fn(x)
        assert getattr(got, other) == ""
        assert_same_printed(expected, getattr(got, f"{stream}_lines")())
