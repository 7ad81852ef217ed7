"""`if labels:` on a parameter that defaults to `None` tests whether it was
given (a dataset that may or may not yield a dict of labels): no tensor
`if`, unless the parameter is known to be a scalar tensor. The same test on
a parameter without a default is one (TFR101)."""

from __future__ import annotations

import textwrap

from tfrewrite.api import check_source

SOURCE = """
import tensorflow as tf


def relabel(features, labels=None):
    extra = {"seen": tf.ones_like(features["ids"])}
    merged = {**labels, **extra} if labels else extra
    return features, merged


dataset = tf.data.Dataset.from_tensor_slices(({"ids": [1, 2]}, {"y": [0, 1]})).map(relabel)
"""


def _tensor_ifs(source: str) -> list[int]:
    found = check_source(textwrap.dedent(source), select=["TFR101"])
    return [f.start.line for f in found]


def test_a_presence_test_of_an_optional_parameter_is_no_tensor_if() -> None:
    assert _tensor_ifs(SOURCE) == []


def test_the_same_test_of_a_required_tensor_parameter_is_one() -> None:
    source = SOURCE.replace("labels=None", "labels").replace(
        "merged = {**labels, **extra} if labels else extra",
        "merged = extra if labels else {}",
    )
    source = source.replace('({"ids": [1, 2]}, {"y": [0, 1]})', '({"ids": [1, 2]}, [True, False])')
    assert _tensor_ifs(source) == [7]
