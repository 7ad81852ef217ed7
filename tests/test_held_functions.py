"""A function kept on `self` (`self.attention_fn = scaled_attention`) and
called there (`self.attention_fn(q, k)`) runs where the call runs: the
call in a method of a class reaches what the class, its bases and its
subclasses bind to that attribute (a subclass's `__init__` choosing
another function for the inherited `call`)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tfrewrite.pipeline.engine import InputFile, RunOptions, run

ATTENTION = """
import tensorflow as tf


def plain_attention(q, k):
    return tf.matmul(q, k, transpose_b=True)


def noisy_attention(q, k):
    logits = tf.matmul(q, k, transpose_b=True)
    print("logits", logits)
    return logits


def unused_attention(q, k):
    print("never called", q)
    return q


class Attention(tf.keras.layers.Layer):
    def __init__(self):
        super().__init__()
        self.attention_fn = plain_attention
        self.scale = 2.0

    def call(self, q, k):
        return self.attention_fn(q, k) * self.scale


class NoisyAttention(Attention):
    def __init__(self):
        super().__init__()
        self.attention_fn = noisy_attention
"""


def test_a_function_a_subclass_keeps_runs_in_the_inherited_call(tmp_path: Path) -> None:
    path = tmp_path / "attention.py"
    path.write_text(textwrap.dedent(ATTENTION))
    result = run(
        [InputFile(str(path))], RunOptions(rule_codes=("TFR103",), root=str(tmp_path)), jobs=1
    )
    assert [f.start.line for f in result.findings] == [11]
