"""What calling a helper returns, a part of `TensorFacts`.

`half(x)` for `def half(x): return x * 0.5` is a tensor when `x` is one: a
module-level helper's result is worked out from its `return` values with its
parameters bound to the call's arguments; a function of another module (or a
method of an object the class holds) is asked of the project facts. Kept
apart from what ordinary expressions are (`tensors`) because it is the one
place facts of one function are built inside another's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import libcst as cst

from tfrewrite.facts.bindings import scope_nodes
from tfrewrite.facts.call_arguments import bind_arguments
from tfrewrite.facts.tensor_kinds import NOT_TENSOR, TensorKind, meet

if TYPE_CHECKING:
    from typing import Self

    from tfrewrite.facts.names import NameResolver


class HelperResults:
    """The helper-call part of `TensorFacts`: what a call of a module-level
    helper, or of a project function elsewhere, returns."""

    resolver: NameResolver
    outer: Self | None
    params: set[str]
    module_functions: dict[str, cst.FunctionDef]
    _names: dict[str, TensorKind]
    _evaluating: set[int]
    _project_results: Callable[[cst.BaseExpression], bool] | None

    if TYPE_CHECKING:

        def _kind(self, node: cst.BaseExpression, names: dict[str, TensorKind]) -> TensorKind: ...

        def _defs_named(self, name: str) -> list[cst.FunctionDef]: ...

        def kind_at(self, node: cst.BaseExpression, statement: cst.CSTNode) -> TensorKind: ...

    def _project_result(self, func: cst.BaseExpression) -> bool:
        """Whether `func` is a project function of another module, or a
        method of a held object, that returns a tensor (the nearest facts
        that know, this function's or one around it)."""
        facts: Self | None = self
        while facts is not None:
            if facts._project_results is not None:
                return facts._project_results(func)
            facts = facts.outer
        return False

    def _module_function(self, name: str, names: dict[str, TensorKind]) -> cst.FunctionDef | None:
        """The module-level helper `name` calls, when no name of this
        function or of those around it hides it."""
        facts: Self | None = self
        while facts is not None:
            if facts.module_functions:
                return facts.module_functions.get(name)
            if name in facts.params or name in facts._names or facts._defs_named(name):
                return None
            facts = facts.outer
        return None

    def _helper_result_kind(
        self,
        helper: cst.FunctionDef,
        args: Sequence[cst.Arg],
        names: dict[str, TensorKind],
        index: int | None = None,
    ) -> TensorKind:
        """What a module-level helper returns for these arguments (`half(x)`
        for `def half(x): return x * 0.5` is a tensor when `x` is one): the
        meet over its `return` values, with its parameters bound to the
        arguments' facts, by position or keyword, and the parameters the call
        leaves out to their defaults (`resize(f, scale=0.5)`). Unknown (not
        a tensor) for starred arguments or parameters, arguments that bind
        no parameter, a helper with no `return` value, or one already being
        worked out (recursion). With `index`, element `index` of what it
        returns (`boxes, probs = pick(scores)`): every `return` a tuple
        that long."""
        if any(a.star for a in args) or id(helper) in self._evaluating:
            return NOT_TENSOR
        bound = self._bound_arguments(helper, args, names)
        if bound is None:
            return NOT_TENSOR
        root = self
        while root.outer is not None:
            root = root.outer
        root._evaluating.add(id(helper))
        try:
            inner = type(self)(helper, self.resolver, (), root, bound)
            result: TensorKind | None = None
            for line in scope_nodes(helper.body):
                if not isinstance(line, cst.SimpleStatementLine):
                    continue
                for node in line.body:
                    if not isinstance(node, cst.Return):
                        continue
                    if node.value is None:
                        return NOT_TENSOR
                    returned = node.value
                    if index is not None:
                        if not isinstance(returned, (cst.Tuple, cst.List)) or len(
                            returned.elements
                        ) <= index or any(
                            isinstance(e, cst.StarredElement) for e in returned.elements
                        ):
                            return NOT_TENSOR
                        returned = returned.elements[index].value
                    # What reaches the `return`: `x = tf.image.resize(x)`
                    # before it makes the result a tensor whatever `x` was.
                    kind = inner.kind_at(returned, line)
                    result = kind if result is None else meet(result, kind)
        finally:
            root._evaluating.discard(id(helper))
        return result if result is not None else NOT_TENSOR

    def _bound_arguments(
        self, helper: cst.FunctionDef, args: Sequence[cst.Arg], names: dict[str, TensorKind]
    ) -> dict[str, TensorKind] | None:
        """Each parameter of `helper` with the facts of what a call with
        `args` binds to it, as Python binds them (`call_arguments`); None
        where that cannot be told (`*args`/`**kwargs`, a call that does not
        fit the signature)."""
        parameters = helper.params
        if isinstance(parameters.star_arg, cst.Param) or parameters.star_kwarg is not None:
            return None
        bound = bind_arguments(helper, args)
        if any(b.value is None for b in bound.values()):
            return None
        # A default is read where the helper is defined: none of the caller's names.
        return {p: self._kind(b.value, names if b.passed else {}) for p, b in bound.items()}  # type: ignore[arg-type]
