"""Dtypes as NumPy code spells them (`np.float32`, `"float32"`, `float`,
`tf.float32`, `x.dtype`), in TensorFlow terms: what a rewrite writes when a
NumPy array's dtype becomes a tensor's."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from tfrewrite.facts.context import RuleContext
from tfrewrite.rewrite.traced_calls import Refusal

# -- dtypes --------------------------------------------------------------------------


FLOAT, INT, BOOL, UNKNOWN = "float", "int", "bool", "unknown"

# NumPy dtype names (attributes of `numpy`, or strings) and their TensorFlow names.
_DTYPE_NAMES: dict[str, tuple[str, str]] = {
    "float16": ("float16", FLOAT),
    "half": ("float16", FLOAT),
    "float32": ("float32", FLOAT),
    "single": ("float32", FLOAT),
    "float64": ("float64", FLOAT),
    "double": ("float64", FLOAT),
    "float_": ("float64", FLOAT),
    "int8": ("int8", INT),
    "int16": ("int16", INT),
    "int32": ("int32", INT),
    "int64": ("int64", INT),
    "uint8": ("uint8", INT),
    "uint16": ("uint16", INT),
    "uint32": ("uint32", INT),
    "uint64": ("uint64", INT),
    "bool_": ("bool", BOOL),
    "bool": ("bool", BOOL),
}
# Python builtins as NumPy reads them: `float` is float64, `int` is int64.
_BUILTIN_DTYPES = {"float": ("float64", FLOAT), "int": ("int64", INT), "bool": ("bool", BOOL)}
# `tf.random.uniform` samples integers only in these dtypes.
TF_UNIFORM_INTS = frozenset({"int32", "int64"})


@dataclass(frozen=True)
class Dtype:
    """A dtype to write (`tf.float32`, `y_pred.dtype`) and what kind it is;
    `tf_name` is the TensorFlow name when it is known statically."""

    code: str
    kind: str
    tf_name: str | None = None


def tf_dtype(node: cst.BaseExpression, ctx: RuleContext, tf: str) -> Dtype:
    """The dtype `node` names (given to `.astype(...)`, `dtype=`, `np.asarray`),
    written with the file's TensorFlow alias `tf`; `Refusal` when it has no
    known TensorFlow counterpart."""
    qualified = ctx.names.qualified_name(node)
    if qualified is not None:
        module, _, leaf = qualified.rpartition(".")
        if module == "numpy" and leaf in _DTYPE_NAMES:
            tf_name, kind = _DTYPE_NAMES[leaf]
            return Dtype(f"{tf}.{tf_name}", kind, tf_name)
        if module in ("tensorflow", "tensorflow.dtypes") and leaf in _DTYPE_NAMES:
            tf_name, kind = _DTYPE_NAMES[leaf]
            return Dtype(ctx.code(node), kind, tf_name)
    elif isinstance(node, cst.Name) and node.value in _BUILTIN_DTYPES:
        tf_name, kind = _BUILTIN_DTYPES[node.value]
        return Dtype(f"{tf}.{tf_name}", kind, tf_name)
    if isinstance(node, cst.SimpleString) and node.evaluated_value in _DTYPE_NAMES:
        tf_name, kind = _DTYPE_NAMES[str(node.evaluated_value)]
        return Dtype(f"{tf}.{tf_name}", kind, tf_name)
    if isinstance(node, cst.Attribute) and node.attr.value == "dtype":
        return Dtype(ctx.code(node), UNKNOWN)
    raise Refusal(f"the dtype `{ctx.code(node)}` has no known TensorFlow counterpart")


def numpy_scalar_type(qualified: str | None) -> str | None:
    """`float32` for `numpy.float32` (a NumPy scalar type called as a
    conversion, `np.float32(x)`), None otherwise."""
    if qualified is None:
        return None
    module, _, leaf = qualified.rpartition(".")
    return leaf if module == "numpy" and leaf in _DTYPE_NAMES else None
