"""Fix rounds on a function another module traces: what a round extracts
from it (a `tf.cond` branch function) still runs traced in the next round,
so a finding the round moved into it is judged again, not counted as fixed.

Shape: a helper in `ops.py` called from a Keras layer's `call` in `net.py`
tests a value that may be a tensor and builds a shape from a static shape
in the branch. Converting the `if` moves the shape into a nested branch
function; before, the next round saw that function as untraced (its traced
context came from the other module), the shape findings vanished, and
`fix` said it fixed them while a new `check` reported them again.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from tfrewrite.pipeline.engine import InputFile, RunOptions, run
from tfrewrite.rules import rule_specs

OPS = """
    import tensorflow as tf

    def drop_columns(h, keep, depth, layers):
        ratio = float(depth + 1) / float(layers)
        keep = 1.0 - ratio * (1.0 - keep)
        if keep < 1.0:
            shape = (h.shape[0], 1, 1, h.shape[-1])
            mask = tf.where(tf.random.uniform(shape) < keep, tf.ones(shape), tf.zeros(shape))
            h = h / keep * mask
        return h
"""

NET = """
    import keras

    from ops import drop_columns

    class Block(keras.layers.Layer):
        def __init__(self, keep):
            super().__init__()
            self.keep = keep

        def call(self, h, training=False):
            if training:
                h = drop_columns(h, self.keep, 1, 4)
            return h
"""


def _run(folder: Path, fix: bool):  # type: ignore[no-untyped-def]
    inputs = [InputFile(str(folder / name)) for name in ("ops.py", "net.py")]
    codes = tuple(spec.code for spec in rule_specs())
    options = RunOptions(rule_codes=codes, root=str(folder), fix=fix, unsafe_fixes=True)
    return run(inputs, options, jobs=1)


def test_a_finding_moved_into_a_branch_function_is_not_counted_fixed(tmp_path: Path) -> None:
    (tmp_path / "ops.py").write_text(textwrap.dedent(OPS))
    (tmp_path / "net.py").write_text(textwrap.dedent(NET))
    checked = _run(tmp_path, fix=False)
    findings = [f for r in checked.files for f in r.findings]
    fixable = sorted(f.code for f in findings if f.fix is not None)
    fixed = _run(tmp_path, fix=True)
    applied = sorted(f.code for r in fixed.files for f in r.fixes_applied)
    assert applied == fixable  # "N fixable" is what `fix` fixes
    for result in fixed.files:
        if result.changed:
            Path(result.path).write_text(result.fixed_source or "")
    after = _run(tmp_path, fix=False)
    left = sorted(f.code for r in after.files for f in r.findings)
    # What `fix` did not fix is still there, and only that.
    assert left == sorted(f.code for f in findings if f.fix is None)
    assert "TFR107" in left and "TFR101" not in left
    assert "tf.cond(" in (tmp_path / "ops.py").read_text()
