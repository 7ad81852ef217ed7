"""What `tf.cond` makes of its branches, a part of `TensorFacts`.

A branch value that is a Python number becomes a scalar tensor of its kind,
and a `tf.cond` is one tensor only when both branches return one value: the
tensor `if` conversion needs these facts to know which branch outputs agree
in dtype (a Python `0` may become `0.0` only beside a floating-point branch).
Kept apart from what ordinary expressions are (`tensors`) because only
`tf.cond` and its branch functions ask it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import libcst as cst

from tfrewrite.facts.bindings import positional_param_names, scope_nodes
from tfrewrite.facts.tensor_kinds import (
    NOT_TENSOR,
    TENSOR,
    TensorKind,
    is_python_float,
    is_python_int,
    is_python_number,
    meet,
)
from tfrewrite.facts.walk import child_nodes

if TYPE_CHECKING:
    from tfrewrite.facts.names import NameResolver


class BranchValueKinds:
    """The `tf.cond` part of `TensorFacts`: what its `_kind` and bindings
    say of the values a branch returns."""

    function: cst.FunctionDef
    resolver: NameResolver
    _local_defs: dict[str, list[cst.FunctionDef]] | None
    _float_assumed: set[str]
    _bindings: dict[str, list]  # type: ignore[type-arg]

    if TYPE_CHECKING:

        def _kind(self, node: cst.BaseExpression, names: dict[str, TensorKind]) -> TensorKind: ...

    def _cond_kind(self, node: cst.Call, names: dict[str, TensorKind]) -> TensorKind:
        """`tf.cond(c, lambda: A, lambda: B)` or with branch functions
        defined in this function: a tensor when both branches return one
        value (a Python number becomes a scalar tensor of its kind); the facts
        both branches share. Anything else may be a structure: not a tensor."""
        branches = [a.value for a in node.args if a.keyword is None and a.star == ""][1:3]
        branches += [
            a.value
            for a in node.args
            if a.keyword is not None and a.keyword.value in ("true_fn", "false_fn")
        ]
        if len(branches) != 2:
            return NOT_TENSOR
        kinds = []
        for branch in branches:
            if isinstance(branch, cst.Lambda):
                kinds.append(self._value_kind(branch.body, names))
            elif isinstance(branch, cst.Name) and self._defs_named(branch.value):
                kinds.append(self._local_call_kind(branch.value, [], names))
            else:
                return NOT_TENSOR
        return meet(kinds[0], kinds[1])

    def _defs_named(self, name: str) -> list[cst.FunctionDef]:
        """Functions of that name defined in this function's own body."""
        if self._local_defs is None:
            self._local_defs = {}
            stack: list[cst.CSTNode] = [self.function.body]
            while stack:
                node = stack.pop()
                if isinstance(node, cst.FunctionDef):
                    self._local_defs.setdefault(node.name.value, []).append(node)
                    continue
                if isinstance(node, (cst.ClassDef, cst.Lambda)):
                    continue
                stack.extend(child_nodes(node))
        return self._local_defs.get(name, [])

    def _local_call_kind(
        self, name: str, args: Sequence[cst.Arg], names: dict[str, TensorKind]
    ) -> TensorKind:
        """What calling a function defined here returns, as a `tf.cond`
        branch: the meet over its `return` values, with its parameters bound
        to the arguments' facts (every definition of that name counts)."""
        if any(a.keyword is not None or a.star for a in args):
            return TENSOR
        result: TensorKind | None = None
        for definition in self._defs_named(name):
            params = positional_param_names(definition)
            if len(params) != len(args):
                return TENSOR
            bound = {p: self._kind(a.value, names) for p, a in zip(params, args, strict=True)}
            inner = type(self)(definition, self.resolver, (), self, bound)
            for node in scope_nodes(definition.body):
                if isinstance(node, cst.Return):
                    kind = (
                        inner._value_kind(node.value, inner._names)
                        if node.value is not None
                        else NOT_TENSOR
                    )
                    result = kind if result is None else meet(result, kind)
        return result if result is not None else NOT_TENSOR

    def _value_kind(self, node: cst.BaseExpression, names: dict[str, TensorKind]) -> TensorKind:
        """What `tf.cond` makes of a branch value: Python numbers and bools
        become scalar tensors; a name that only ever holds Python floats or
        floating-point tensors becomes a floating-point tensor."""
        if isinstance(node, (cst.Tuple, cst.List, cst.Dict)):
            return NOT_TENSOR  # a structure, not one tensor
        if is_python_float(node):
            return TensorKind(True, True, floating=True)
        if is_python_int(node):
            return TensorKind(True, True, integer=True)
        if isinstance(node, cst.Name) and node.value in ("True", "False"):
            return TensorKind(True, True, boolean=True)
        if (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Name)
            and node.func.value not in names
            and self._defs_named(node.func.value)
        ):
            return self._local_call_kind(node.func.value, node.args, names)
        kind = self._kind(node, names)
        if kind.tensor:
            return kind
        if self._float_valued(node, names, frozenset()):
            return TensorKind(True, floating=True)
        return TENSOR

    def _float_valued(
        self, node: cst.BaseExpression, names: dict[str, TensorKind], visiting: frozenset[str]
    ) -> bool:
        """Whether `node` always holds a Python float or a floating-point
        tensor (a local name: on every binding; assumed while checking its
        own bindings, including through nested `tf.cond`s)."""
        if is_python_float(node):
            return True
        qualified = self.resolver.qualified_name(node.func) if isinstance(node, cst.Call) else None
        if isinstance(node, cst.Call) and qualified == "tensorflow.cond":
            lambdas = [a.value for a in node.args if isinstance(a.value, cst.Lambda)]
            return len(lambdas) == 2 and all(
                self._float_valued(lam.body, names, visiting)
                for lam in lambdas  # type: ignore[attr-defined]
            )
        if isinstance(node, cst.IfExp):
            return self._float_valued(node.body, names, visiting) and self._float_valued(
                node.orelse, names, visiting
            )
        if isinstance(node, cst.Name) and node.value in self._bindings:
            if node.value in visiting or node.value in self._float_assumed:
                return True
            if self._kind(node, names).floating:
                return True
            self._float_assumed.add(node.value)
            try:
                inner = visiting | {node.value}
                for value, augmented, index in self._bindings[node.value]:
                    if value is None or index is not None:
                        return False
                    if augmented:
                        assert isinstance(value, cst.AugAssign)
                        if not (
                            self._float_valued(value.target, names, inner)  # type: ignore[arg-type]
                            and (
                                is_python_number(value.value)
                                or self._float_valued(value.value, names, inner)
                            )
                        ):
                            return False
                    elif not self._float_valued(value, names, inner):
                        return False
                return True
            finally:
                self._float_assumed.discard(node.value)
        return self._kind(node, names).floating
