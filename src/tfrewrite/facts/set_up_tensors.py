"""Tensors a class makes once, at set-up, and keeps on `self`: their static
shape is whole.

    class SNConv(keras.layers.Layer):
        def build(self, input_shape):
            self.w = tf.random.normal([3, 3, input_shape[-1], self.cnum])

        def call(self, x):
            return tf.nn.conv2d(x, spectral_normed(self.w), 1, "SAME")

`self.w` is made in `build` (or `__init__`), which runs once before the
first call, from a shape the layer knows: a variable (`add_weight`,
`tf.Variable`) or a tensor captured by every later trace. Its `.shape` is
complete in every trace, unlike the shape of the batch `call` is given, so
`tf.reshape(w, w.shape)` in a helper it is handed cannot fail on an unknown
dimension (TFR107). Pass 1 records these attributes per class
(`ClassInfo.set_up_tensors`); call sites record the arguments that pass
one (`CallSite.whole_shapes`), and the project facts the parameters every
call site fills so (`ModuleIndex.whole_shape_params`, `passed_values`).
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from tfrewrite.facts.function_facts import is_self_attribute, self_assignments
from tfrewrite.facts.tensor_kinds import VARIABLE_CONSTRUCTORS, is_tensor_op

# The methods Keras (and a plain class) runs once, before the first call.
SET_UP_METHODS = frozenset({"__init__", "build"})
_WEIGHT_METHODS = frozenset({"add_weight", "add_variable"})


def set_up_tensors(
    cls: ast.ClassDef, resolve: Callable[[ast.AST], str | None]
) -> frozenset[str]:
    """Attributes of `self` every assignment of which is in a set-up method
    and makes a tensor or a variable there (`None` placeholders aside), at
    least one of them."""
    made: set[str] = set()
    others: set[str] = set()
    for method, attr, value in self_assignments(cls):
        if _is_none(value):
            continue
        if method.name in SET_UP_METHODS and value is not None and _makes_tensor(value, resolve):
            made.add(attr)
        else:
            others.add(attr)
    return frozenset(made - others)


def _is_none(value: ast.expr | None) -> bool:
    return isinstance(value, ast.Constant) and value.value is None


def _makes_tensor(value: ast.expr, resolve: Callable[[ast.AST], str | None]) -> bool:
    """`self.add_weight(...)`, `tf.Variable(...)`, a TensorFlow op's result."""
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    if isinstance(func, ast.Attribute) and func.attr in _WEIGHT_METHODS and is_self_attribute(func):
        return True
    name = resolve(func)
    return name in VARIABLE_CONSTRUCTORS or is_tensor_op(name)
