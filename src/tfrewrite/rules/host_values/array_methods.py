"""NumPy array reductions called on a host value: `x.numpy().max(axis=1)`.

`x.numpy()` is a NumPy array, and code often reduces it with the array's own
methods (`.max(axis=1)`, `.mean()`), which a tensor lacks: the host value
cannot simply become the tensor. The reduction can: each method is the NumPy
function of the same name (`a.max(axis=1)` is `np.max(a, axis=1)`), so the
op table TFR104 rewrites NumPy calls with (`rewrite.numpy_ops.MAPPINGS`) says
which TensorFlow op computes it and how its parameters map. The chain of
reductions right after the host read is folded into the rewrite
(`tf.reduce_max(x, axis=1)`), and the rule follows the chain's result to its
uses instead of the array's.

Only the reductions whose parameters map one to one are folded; any other
method (`.reshape`, `.tolist()`, `.argmax()`) leaves the value a NumPy array
and stays a reason not to rewrite.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import libcst as cst

from tfrewrite.facts.tensor_kinds import TensorKind
from tfrewrite.rewrite.numpy_ops import (
    ACCUMULATE,
    MAPPINGS,
    MEAN,
    PARAMETER_REASONS,
    PRESERVE,
    Mapping,
)
from tfrewrite.rewrite.traced_calls import Refusal

# Array methods that are the NumPy reduction of the same name, with the
# array as its first parameter (`a.sum(axis)` is `np.sum(a, axis)`).
REDUCTION_METHODS = frozenset({"max", "min", "sum", "mean", "prod", "std", "var"})

# What NumPy computes each dtype category in, where TensorFlow keeps the input's.
_NUMPY_DTYPE = {MEAN: "float64", ACCUMULATE: "int64"}


@dataclass(frozen=True)
class Reduction:
    """One array method folded into the rewrite: `mapping` says its
    TensorFlow op, `tf_args` are the arguments after the tensor, as source
    text."""

    mapping: Mapping
    tf_args: tuple[str, ...]

    def apply(self, tensor: str, tf: str) -> str:
        """The TensorFlow call computing this reduction of `tensor`."""
        return f"{tf}.{self.mapping.tf_op}({', '.join((tensor, *self.tf_args))})"


def reduction_chain(
    host_read: cst.Call, ancestors: Sequence[cst.CSTNode]
) -> tuple[list[cst.Call], list[str], Sequence[cst.CSTNode]]:
    """The reduction method calls applied right after `host_read`
    (`x.numpy().max(axis=1).mean()`: `.max` then `.mean`), their names, and
    the ancestors of the last one (those of `host_read` with the chain taken
    off). No chain: `([], [], ancestors)`."""
    calls: list[cst.Call] = []
    methods: list[str] = []
    node: cst.CSTNode = host_read
    rest = list(ancestors)
    while (
        len(rest) >= 2
        and isinstance(rest[-1], cst.Attribute)
        and rest[-1].value is node
        and rest[-1].attr.value in REDUCTION_METHODS
        and isinstance(rest[-2], cst.Call)
        and rest[-2].func is rest[-1]
    ):
        methods.append(rest[-1].attr.value)
        node = rest[-2]
        calls.append(rest[-2])
        del rest[-2:]
    return calls, methods, rest


def reduction(
    call: cst.Call,
    method: str,
    kind: TensorKind,
    value: str,
    code: Callable[[cst.CSTNode], str],
    tf: str,
) -> tuple[Reduction, list[str]]:
    """The TensorFlow op for `<value>.<method>(...)` on a tensor of `kind`,
    and why it is unsafe; `Refusal` where an argument has no TensorFlow
    counterpart or NumPy's result dtype differs from TensorFlow's."""
    mapping = MAPPINGS[method]
    params = mapping.params[1:]  # the array is the receiver
    tf_args: list[str] = []
    for position, arg in enumerate(call.args):
        if arg.star:
            raise Refusal(f"`.{method}(...)` is called with `{arg.star}`, which cannot be mapped")
        name = arg.keyword.value if arg.keyword is not None else None
        if name is None:
            if position >= len(params):
                raise Refusal(f"`.{method}(...)` is called with too many arguments")
            name = params[position]
        if name not in params:
            raise Refusal(f"`.{method}(...)` is called with `{name}=`, which NumPy does not take")
        if name in mapping.renamed:
            tf_name = mapping.renamed[name]
            # NumPy's first parameter after the array lands at TensorFlow's
            # second position (`axis`): it may stay positional there.
            positional = arg.keyword is None and position == 0
            text = code(arg.value)
            tf_args.append(text if positional else f"{tf_name}={text}")
        elif mapping.droppable.get(name) == code(arg.value):
            continue
        else:
            reason = PARAMETER_REASONS.get(name, f"`{name}=` has no TensorFlow counterpart")
            raise Refusal(f"`.{method}(...)` is called with `{name}=`: {reason}")
    return Reduction(mapping, tuple(tf_args)), _dtype_notes(mapping, method, kind, value, tf)


def _dtype_notes(mapping: Mapping, method: str, kind: TensorKind, value: str, tf: str) -> list[str]:
    """Why the TensorFlow op may not give NumPy's dtype: NumPy averages
    integers and booleans in float64 and sums them in int64, where TensorFlow
    keeps the input's dtype; TensorFlow's max/min reject booleans. Known
    integers or booleans are refused; an unknown dtype makes the fix unsafe."""
    op = f"{tf}.{mapping.tf_op}"
    if kind.floating:
        return []
    numpy_dtype = _NUMPY_DTYPE.get(mapping.category)
    if kind.boolean and mapping.category == PRESERVE:
        raise Refusal(f"`{value}` is boolean: `{op}` does not take booleans; cast it first")
    if (kind.integer or kind.boolean) and numpy_dtype is not None:
        raise Refusal(
            f"`{value}` is {'boolean' if kind.boolean else 'an integer tensor'}: NumPy's "
            f"`.{method}()` computes it in {numpy_dtype}, `{op}` in its own dtype; cast it first"
        )
    if kind.integer:
        return []
    if numpy_dtype is not None:
        return [
            f"the dtype of `{value}` is not known: NumPy's `.{method}()` computes integers in "
            f"{numpy_dtype}, `{op}` in their own dtype"
        ]
    return [f"the dtype of `{value}` is not known: `{op}` raises on booleans, NumPy does not"]
