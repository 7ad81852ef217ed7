"""TFR103 on prints of a name holding a dict, list or tuple of tensors.

`logs = {"loss": loss}` then `print(logs)`, `print(logs["loss"])` or a loop
over `logs.items()` printing each value shows tensor values eagerly and
`Tensor(...)` once traced; `tf.print` prints the structure with values. The
name counts only when it is bound once and only read.
"""

from __future__ import annotations

import textwrap

import pytest

from tfrewrite.api import check_source, fix_source
from tfrewrite.findings import Applicability

SYS_TF = "import sys\nimport tensorflow as tf\n"


def traced(body: str) -> str:
    """`body` in `@tf.function def f(x: tf.Tensor)`; `loss` is a scalar tensor."""
    body = textwrap.indent(textwrap.dedent(body).strip("\n"), "    ")
    head = f"{SYS_TF}\n@tf.function\ndef f(x: tf.Tensor):\n    loss = tf.reduce_mean(x)\n"
    return f"{head}{body}\n    return loss\n"


def fix(source: str) -> str:
    return fix_source(source, select=["TFR103"])


def findings(source: str) -> list:
    return check_source(source, select=["TFR103"])


REWRITES = [
    pytest.param(
        'logs = {"loss": loss, "top": tf.reduce_max(x)}\nprint(logs)',
        'logs = {"loss": loss, "top": tf.reduce_max(x)}\ntf.print(logs, output_stream=sys.stdout)',
        id="dict",
    ),
    pytest.param(
        'logs = {"loss": loss, "epoch": 3}\nprint("logs:", logs["loss"], logs["epoch"])',
        'logs = {"loss": loss, "epoch": 3}\n'
        'tf.print("logs:", logs["loss"], logs["epoch"], output_stream=sys.stdout)',
        id="dict-items-read",
    ),
    pytest.param(
        'logs = {"loss": loss}\nfor name, value in logs.items():\n    print(name, value)',
        'logs = {"loss": loss}\nfor name, value in logs.items():\n'
        "    tf.print(name, value, output_stream=sys.stdout)",
        id="dict-items-loop",
    ),
    pytest.param(
        'logs = {"loss": loss}\nprint(len(logs), logs)\nreturn logs',
        'logs = {"loss": loss}\ntf.print(len(logs), logs, output_stream=sys.stdout)\nreturn logs',
        id="returned",
    ),
    pytest.param(
        "pair = [loss, x]\nprint(pair)",
        "pair = [loss, x]\ntf.print(pair, summarize=-1, output_stream=sys.stdout)",
        id="list-with-a-long-tensor",
    ),
    pytest.param(
        'pair = (loss, loss * 2)\nfor value in pair:\n    sys.stdout.write(f"{value}\\n")',
        "pair = (loss, loss * 2)\nfor value in pair:\n"
        '    tf.print(value, sep="", output_stream=sys.stdout)',
        id="tuple-loop-write",
    ),
    pytest.param(
        'logs = {"loss": loss}\nprint("logs %s" % logs)',
        'logs = {"loss": loss}\ntf.print("logs ", logs, sep="", output_stream=sys.stdout)',
        id="percent-formatted",
    ),
    pytest.param(
        'logs = {"loss": loss}\ntf.print(f"logs {logs}")',
        'logs = {"loss": loss}\ntf.print("logs ", logs, sep="")',
        id="formatted-inside-tf-print",
    ),
]


@pytest.mark.parametrize(("before", "after"), REWRITES)
def test_container_of_tensors_is_printed_with_values(before: str, after: str) -> None:
    source = traced(before)
    fixed = fix(source)
    assert fixed == traced(after)
    assert fix(fixed) == fixed and findings(fixed) == []
    (finding,) = findings(source)
    assert finding.fix is not None and finding.fix.applicability is Applicability.SAFE


@pytest.mark.parametrize(
    "body",
    [
        # Changed after it is bound: what it holds at the print is not known.
        'logs = {"loss": loss}\nlogs["acc"] = str(loss)\nprint(logs)',
        'logs = {"loss": loss}\nlogs.update(acc=loss)\nprint(logs)',
        'logs = {"loss": loss}\nrecord(logs)\nprint(logs)',
        'logs = {"loss": loss}\nalias = [logs]\nprint(logs)',
        'logs = {}\nlogs["loss"] = loss\nprint(logs)',
        # Bound twice.
        'logs = {"loss": loss}\nif flag:\n    logs = {"loss": 0.0}\nprint(logs)',
        # Iterating a dict gives its keys.
        'logs = {"loss": loss}\nfor name in logs:\n    print(name)',
        # No tensor in it.
        'logs = {"epoch": 3}\nprint(logs)',
    ],
    ids=[
        "item-assigned",
        "updated",
        "handed-to-a-helper",
        "aliased",
        "filled-later",
        "bound-twice",
        "dict-keys",
        "no-tensor",
    ],
)
def test_not_reported(body: str) -> None:
    assert findings(traced(body)) == []


def test_a_container_turning_a_tensor_into_text_is_not_followed() -> None:
    """The display's own `str(loss)` is built once while tracing."""
    assert findings(traced('logs = {"loss": str(loss)}\nprint(logs)')) == []
