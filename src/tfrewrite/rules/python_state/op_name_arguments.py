"""TFR206: a TensorFlow op given a `name` that is not a string, in traced code."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from tfrewrite.facts.context import FunctionScope, RuleContext
from tfrewrite.facts.op_names import name_argument, non_string_name, takes_op_name
from tfrewrite.facts.walk import iter_nodes
from tfrewrite.findings import Applicability
from tfrewrite.rewrite.fixes import Violation
from tfrewrite.rules.base import Invalid, Rule, Valid


class NonStringOpName(Rule):
    code = "TFR206"
    name = "non-string-op-name"
    summary = "A TensorFlow op given a non-string `name` runs eagerly but raises when traced"
    fix_applicability = Applicability.NONE
    explanation = """
    ## What it does
    Finds TensorFlow ops in traced code whose `name` is proven not a
    string: a dtype, a NumPy type, a non-zero number or `True`, given as
    `name=` or positionally where the op's signature puts `name`
    (`tf.sqrt(x, tf.float32)`: the second positional parameter of `tf.sqrt`
    is `name`, not a dtype). Where each op takes `name` comes from
    TensorFlow's signatures (a table generated from TensorFlow 2.21).

    ## Why is this bad?
    Eagerly TensorFlow ignores an op's name, so the call runs and the code
    looks right. Traced, the op opens a name scope with it, and a name scope
    takes only a string: the function raises `TypeError: expected string or
    bytes-like object, got 'DType'` on its first trace. Measured on
    TensorFlow 2.21 (`scripts/tf_name_positions.py --measure`): of the 237
    functions of `tf`, `tf.math`, `tf.nn` and `tf.linalg` that run on tensor
    arguments alone, 236 ignore a dtype or int `name` eagerly and raise
    traced; `tf.math.conj` of a real tensor returns its input without making
    an op. A falsy value (`None`, `0`) is no name
    either way and is not reported, nor is a name held in a variable, which
    may be a string.

    ## How to fix it
    Drop the argument, or pass a string. When a dtype was meant, the op has
    no dtype parameter there: cast its input or result (`tf.cast(x,
    tf.float32)`).

    ## Fix safety
    There is no automatic fix: dropping the argument keeps what the code did
    eagerly, but a dtype in that place usually means a cast was intended,
    which only the author can say.
    """
    examples = (
        Invalid(
            """
            import tensorflow as tf

            @tf.function
            def root(x):
                return tf.sqrt(x, tf.float32)
            """,
            note="the second positional parameter of `tf.sqrt` is `name`",
        ),
        Invalid(
            """
            import tensorflow as tf

            @tf.function
            def total(x):
                return tf.reduce_sum(x, name=1)
            """
        ),
        Valid(
            """
            import tensorflow as tf

            @tf.function
            def root(x):
                return tf.sqrt(tf.cast(x, tf.float32), name="root")
            """,
            note="a string name, and a dtype where `tf.cast` takes one",
        ),
        Valid(
            """
            import tensorflow as tf

            @tf.function
            def zeros(x, label):
                return tf.zeros_like(x, tf.float32, label)
            """,
            note="`tf.zeros_like` takes its dtype second; a name in a variable may be a string",
        ),
        Valid(
            """
            import tensorflow as tf

            def root(x):
                return tf.sqrt(x, tf.float32)
            """,
            note="not traced: eagerly the name is ignored",
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Violation]:
        for function in ctx.functions:
            if function.runs_traced is not None:
                yield from self._check(function, ctx)

    def _check(self, function: FunctionScope, ctx: RuleContext) -> Iterator[Violation]:
        for node in iter_nodes(function.node.body, into_functions=False):
            if not isinstance(node, cst.Call):
                continue
            qualified = ctx.names.qualified_name(node.func)
            if qualified is None or not takes_op_name(qualified):
                continue
            arg = name_argument(node, qualified)
            if arg is None:
                continue
            what = non_string_name(arg.value, ctx.names)
            if what is None:
                continue
            callee = ctx.code(node.func)
            given = "as `name=`" if arg.keyword is not None else "where it takes `name`"
            hint = (
                f"; `{callee}` takes no dtype there: to change the dtype, cast with `tf.cast`"
                if arg.keyword is None and what == "a dtype"
                else ""
            )
            yield Violation(
                node,
                f"`{callee}(...)` in traced `{function.qualname}` is given {what}, "
                f"`{ctx.code(arg.value)}`, {given}: eagerly TensorFlow ignores the name, but "
                "traced it opens a name scope with it, which raises `TypeError` for anything "
                f"but a string; pass a string or drop it{hint}",
            )


RULES = (NonStringOpName,)
