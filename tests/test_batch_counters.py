"""TFR306: what counts batches in a running average."""

from __future__ import annotations

import textwrap

from tfrewrite.api import check_source


def test_a_float_batch_counter_counts_batches_for_tfr306() -> None:
    """`n += 1.0` counts batches as `n += 1` does, whatever `n` starts as
    (a tensor `tf.constant(0.0)` in traced code)."""
    source = textwrap.dedent(
        """
        import tensorflow as tf


        @tf.function
        def epoch_loss(batches):
            total = tf.constant(0.0)
            count = tf.constant(0.0)
            for x in batches:
                count += 1.0
                total += tf.reduce_mean(x)
            return total / count
        """
    )
    (finding,) = check_source(source, select=["TFR306"])
    assert finding.start.line == 12
    assert "divided by the number of batches" in finding.message
