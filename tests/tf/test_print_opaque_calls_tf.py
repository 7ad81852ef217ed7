"""A print of `helper(loss)` (TFR103), under TensorFlow: whether the
rewrite traced prints what the original printed eagerly depends on what the
helper returns. A helper seen to return a tensor: each call's value, as
eagerly, and the fix is safe. A helper that formats the tensor into text:
traced, that text is built once and shows `Tensor(...)` on every call, so
the fix is unsafe (`verify` must prove it)."""

from __future__ import annotations

import pytest
from tests.tf.equivalence import load_module
from tests.tf.fdcapture import capture_fds

from tfrewrite.api import check_source, fix_source
from tfrewrite.findings import Applicability

pytestmark = pytest.mark.tensorflow

SOURCE = """
import tensorflow as tf


def helper(t):
    return {body}


@tf.function
def step(x):
    loss = tf.reduce_mean(x)
    print(helper(loss))
    return loss
"""


def _printed(function, inputs) -> list[str]:
    with capture_fds() as out:
        for x in inputs:
            function(x)
    return out.stdout_lines()


@pytest.mark.parametrize(
    ("body", "faithful"), [("t * 2.0", True), ('"loss=%s" % t', False)], ids=["tensor", "text"]
)
def test_the_fix_is_faithful_only_when_the_helper_returns_a_tensor(
    body: str, faithful: bool
) -> None:
    import tensorflow as tf

    source = SOURCE.format(body=body)
    [finding] = check_source(source, select=["TFR103"])
    expected = Applicability.SAFE if faithful else Applicability.UNSAFE
    assert finding.fix is not None and finding.fix.applicability is expected
    inputs = [tf.constant([float(i), float(i)]) for i in (1, 2, 3)]
    original = load_module(source, f"opaque_original_{faithful}")
    eager = _printed(original.step.python_function, inputs)
    assert len(eager) == 3 and eager[0] != eager[1]
    fixed = load_module(
        fix_source(source, select=["TFR103"], unsafe_fixes=True), f"opaque_fixed_{faithful}"
    )
    traced = _printed(fixed.step, inputs)
    assert len(traced) == 3
    if faithful:
        # tf.print shows the value where print showed tf.Tensor(value, ...)
        assert [line.split()[0] for line in traced] == ["2", "4", "6"]
    else:
        assert len(set(traced)) == 1 and "Tensor(" in traced[0]
