"""NumPy array methods called on a host read a print shows: `y.numpy().max()`.

A print rewritten into `tf.print` shows a tensor in place of its host read
(`y.numpy()` prints as `y`), but the NumPy array a host read returns has
methods and attributes a tensor lacks: left in place, `y.max()` raises
`AttributeError` when traced. What follows the read decides:

- The reductions TFR105 folds (`array_methods`: `.max()`, `.mean(axis=0)`,
  ...) become the TensorFlow op computing them (`tf.reduce_max(y)`), which
  prints the value NumPy computed, under the same dtype conditions.
- Indexing works on a tensor as on the array (`y.numpy()[0]` prints `y[0]`).
- `.item()` and `.tolist()` of a scalar are its value as a Python number,
  which `tf.print` shows from the tensor (as it shows `float(loss)`). Of an
  array they are refused: `.tolist()` prints a Python list (`[0.5, 1.0]`)
  where `tf.print` prints a tensor (`[0.5 1]`), and `.item()` needs a
  one-element array, printing `0.5` where the tensor prints `[0.5]`.
- Anything else read from the array (`.astype(...)`, `.T`, `.shape`, whose
  tuple prints differently from a `TensorShape`) is refused.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import libcst as cst

from tfrewrite.facts.tensor_kinds import TensorKind
from tfrewrite.rewrite.traced_calls import Refusal
from tfrewrite.rules.host_values.array_methods import Reduction, reduction, reduction_chain

# Methods giving a scalar array's value as a Python number.
_SCALAR_VALUE_METHODS = frozenset({"item", "tolist"})
# Attributes a tensor has and prints as the array's does.
_SAME_ON_A_TENSOR = frozenset({"ndim"})


@dataclass(frozen=True)
class ArrayFold:
    """The expression a print shows in place of `top`, a host read followed
    by array methods: the tensor read `depth` calls below `top` (already
    replaced by the tensor itself), reduced by `reductions`; `kind` is the
    result's, `notes` why it is unsafe (a reduction of unknown dtype)."""

    top: cst.Call
    depth: int
    reductions: tuple[Reduction, ...]
    kind: TensorKind
    notes: tuple[str, ...]

    def receiver(self, updated_top: cst.Call) -> cst.BaseExpression:
        """The tensor inside `updated_top`, the rewritten form of `top`."""
        node: cst.BaseExpression = updated_top
        for _ in range(self.depth):
            assert isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
            node = node.func.value
        return node

    def apply(self, tensor: str, tf: str) -> str:
        """The TensorFlow expression computing the fold of `tensor`."""
        for folded in self.reductions:
            tensor = folded.apply(tensor, tf)
        return tensor


@dataclass
class FoldedMethods:
    """What the array methods of a print's host reads became: the kind of
    each folded expression (by its source text), the notes that make the fix
    unsafe (a reduction on a tensor of unknown dtype), and why the print
    cannot be rewritten, if a method has no faithful TensorFlow form."""

    kinds: dict[str, TensorKind] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    refusal: str | None = None

    def refuse(self, reason: str) -> None:
        if self.refusal is None:
            self.refusal = reason


def fold_array_methods(
    read: cst.Call,
    receiver: cst.BaseExpression,
    ancestors: Sequence[cst.CSTNode],
    kind: TensorKind,
    code: Callable[[cst.CSTNode], str],
    tf: str,
) -> ArrayFold | None:
    """The fold of the array methods applied to `read` (`receiver.numpy()`,
    whose ancestors in the print are `ancestors`, innermost last) when a
    print shows the tensor `receiver` of `kind` instead; None when nothing
    follows the read that a tensor lacks. `Refusal` for a method with no
    faithful TensorFlow form."""
    value = code(receiver.with_changes(lpar=(), rpar=()))
    chain, methods, rest = reduction_chain(read, ancestors)
    reductions: list[Reduction] = []
    notes: list[str] = []
    scalar = kind.scalar
    for call, method in zip(chain, methods, strict=True):
        folded, more = reduction(call, method, kind, value, code, tf)
        reductions.append(folded)
        notes += [note for note in more if note not in notes]
        scalar = scalar or not folded.tf_args  # no axis: reduced to a scalar
    top: cst.Call = chain[-1] if chain else read
    result = TensorKind(True, scalar, kind.boolean, kind.floating, kind.integer)
    fold = ArrayFold(top, len(chain), tuple(reductions), result, tuple(notes)) if chain else None
    node: cst.CSTNode = top
    outer = list(rest)
    indexed = False
    while outer and isinstance(outer[-1], cst.Subscript) and outer[-1].value is node:
        node = outer.pop()
        indexed = True  # `[...]` of the array is the same `[...]` of the tensor
        if any(_advanced_index(element) for element in node.slice):
            raise Refusal(
                f"`{code(node)}` indexes the array with a list or a mask, which a tensor does "
                "not take (`tf.gather` and `tf.boolean_mask` do)"
            )
    parent = outer[-1] if outer else None
    if not (isinstance(parent, cst.Attribute) and parent.value is node):
        return fold
    name = parent.attr.value
    method = outer[-2] if len(outer) >= 2 else None
    if not (isinstance(method, cst.Call) and method.func is parent):
        if name in _SAME_ON_A_TENSOR:
            return fold
        if name in ("shape", "dtype"):
            raise Refusal(
                f"`{code(parent)}` is the NumPy array's `{name}`, which prints differently "
                f"from the tensor's (print `{value}.{name}` for TensorFlow's)"
            )
        raise Refusal(f"`{code(parent)}` reads a NumPy array attribute a tensor does not have")
    shown = code(method)
    if name not in _SCALAR_VALUE_METHODS:
        raise Refusal(f"`{shown}` calls a NumPy array method a tensor does not have")
    if method.args:
        raise Refusal(f"`{shown}` is called with arguments `tf.print` cannot reproduce")
    if scalar and not indexed:
        return ArrayFold(method, len(chain) + 1, tuple(reductions), result, tuple(notes))
    if name == "tolist":
        raise Refusal(
            f"`{shown}` prints a Python list (`[0.5, 1.0]`), and nothing shows the array is "
            "a scalar: `tf.print` prints a tensor as `[0.5 1]`"
        )
    raise Refusal(
        f"`{shown}` needs a one-element array, and nothing shows it is a scalar: `tf.print` "
        f"prints a tensor of shape [1] as `[0.5]` (print `{tf}.reshape({value}, [])` for the "
        "value)"
    )


def _advanced_index(element: cst.SubscriptElement) -> bool:
    """NumPy's indexing by a list of positions or a boolean mask, written
    out (`a[[0, 2]]`, `a[a > 0]`), which `Tensor.__getitem__` rejects; an
    index held in a name is not seen."""
    index = element.slice
    return isinstance(index, cst.Index) and isinstance(
        index.value, (cst.List, cst.ListComp, cst.Comparison, cst.BooleanOperation)
    )
