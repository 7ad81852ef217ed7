"""TFR110: a tensor given as `training` to a Keras 3 layer or model in traced
code. Keras tests the flag in Python, in code AutoGraph does not convert
(`facts.training_readers`): a condition on a tensor TFR101 cannot rewrite,
since it is not in the project's code."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from tfrewrite.facts.context import RuleContext
from tfrewrite.facts.tensor_kinds import read_kind
from tfrewrite.facts.training_readers import is_super_call, training_reader
from tfrewrite.facts.walk import enclosing_statement_line, iter_with_ancestors
from tfrewrite.findings import Applicability
from tfrewrite.rewrite.fixes import Violation
from tfrewrite.rules.base import Invalid, Rule, Valid


def _training_argument(call: cst.Call) -> cst.BaseExpression | None:
    """The flag `call` gives: `training=...`, or the second positional
    argument of `super().call(x, training)`."""
    keyword = next(
        (a.value for a in call.args if a.keyword is not None and a.keyword.value == "training"),
        None,
    )
    if keyword is not None or not is_super_call(call):
        return keyword
    positional = [a for a in call.args if a.keyword is None and not a.star]
    return positional[1].value if len(positional) > 1 else None


def _is_none(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


_SCOPES = (cst.FunctionDef, cst.Lambda)


class TensorTrainingFlag(Rule):
    code = "TFR110"
    name = "tensor-training-flag"
    summary = (
        "A tensor given as `training` to a Keras 3 layer or model in traced code raises: "
        "Keras tests the flag in Python"
    )
    fix_applicability = Applicability.NONE
    explanation = """
    ## What it does
    Finds calls in traced code that give a Keras layer or model a tensor as
    `training`: a `tf.Variable(True)` kept as a mode switch, a boolean
    tensor a caller passes (an `input_signature` of `tf.bool`, a
    `tf.constant(True)` at the call site), the result of an op
    (`tf.logical_and(training, self.trainable)`). The callee is one of
    Keras' own layers whose output depends on `training` (`Dropout`,
    `BatchNormalization`, the noise and recurrent layers), a Keras model,
    or a layer or model class of the project that does not ignore the flag.

    ## Why is this bad?
    Keras 3 (the `keras` package, and `tf.keras` from TensorFlow 2.16 on)
    runs a layer's `call` without AutoGraph, even inside a function
    AutoGraph converts, and its layers test the flag in Python (`if training
    and self.rate > 0:`). Eagerly a scalar tensor has a truth value, so the
    code runs; traced, every such call raises
    `OperatorNotAllowedInGraphError: using a tf.Tensor as a Python bool is
    not allowed` (measured on TensorFlow 2.21 with Keras 3.15, with
    AutoGraph on and off). Keras 2 (`tf_keras`) chose between the two modes
    with `smart_cond` and took a tensor, so code written for it breaks when
    moved to Keras 3. A plain function given the tensor is converted by
    AutoGraph (its `if training:` is TFR101's) and is not reported, nor is
    a layer that ignores the flag (`Dense`), nor a legacy `tf_keras` layer.

    ## How to fix it
    Pass a Python bool: a train step and an evaluation step, each with its
    own `training=True` or `training=False`, traced once each. Where the
    mode must stay a tensor, choose between the two calls with `tf.cond`:
    `tf.cond(flag, lambda: layer(x, training=True), lambda: layer(x,
    training=False))`.

    ## Fix safety
    There is no automatic fix: whether two steps or a `tf.cond` suits the
    code is its author's choice, and a layer first built inside a `tf.cond`
    branch creates its weights there.
    """
    examples = (
        Invalid(
            """
            import tensorflow as tf
            from tensorflow import keras

            class Encoder(keras.layers.Layer):
                def __init__(self):
                    super().__init__()
                    self.dense = keras.layers.Dense(8)
                    self.norm = keras.layers.BatchNormalization()

                def call(self, x, training=None):
                    flag = tf.logical_and(training, self.trainable)
                    return self.norm(self.dense(x), training=flag)
            """
        ),
        Invalid(
            """
            import tensorflow as tf

            dropout = tf.keras.layers.Dropout(0.2)
            dense = tf.keras.layers.Dense(4)

            @tf.function(input_signature=[tf.TensorSpec([None, 4]), tf.TensorSpec([], tf.bool)])
            def forward(x, training):
                return dense(dropout(x, training=training))
            """
        ),
        Valid(
            """
            import tensorflow as tf

            dropout = tf.keras.layers.Dropout(0.2)

            @tf.function
            def forward(x, training):
                return dropout(x, training=training)

            forward(tf.ones([2, 4]), True)
            """,
            note="the flag is a Python bool at every call",
        ),
        Valid(
            """
            import tensorflow as tf

            dense = tf.keras.layers.Dense(4)

            @tf.function(input_signature=[tf.TensorSpec([None, 4]), tf.TensorSpec([], tf.bool)])
            def forward(x, training):
                return dense(x, training=training)
            """,
            note="`Dense` ignores `training`: it never tests the flag",
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Violation]:
        for traced in ctx.traced_functions():
            for node, ancestors in iter_with_ancestors(traced.node):
                flag = _training_argument(node) if isinstance(node, cst.Call) else None
                if flag is None or any(isinstance(a, cst.Lambda) for a in ancestors):
                    continue  # a lambda's parameters are not the function's names
                line = enclosing_statement_line(ancestors)
                if line is None:
                    continue
                scope = ctx.innermost_scope(traced, ancestors)
                if not read_kind(ctx.tensors(scope).kind_at(flag, line)).tensor:
                    continue
                reader = training_reader(ctx, node, scope)  # type: ignore[arg-type]
                if reader is not None:
                    yield Violation(node, _message(ctx.code(flag), reader))


def _message(flag: str, reader: str) -> str:
    given = (
        "`training` is a tensor"
        if flag == "training"
        else f"`training` is given a tensor, `{flag}`"
    )
    return (
        f"{given}, and {reader} tests it in Python under Keras 3: this runs eagerly but "
        "raises `OperatorNotAllowedInGraphError` when traced (no fix: pass a Python bool, or "
        "choose between the calls with `training=True` and `training=False` with `tf.cond`)"
    )


RULES = (TensorTrainingFlag,)
