"""What a rule sees of one file: the parsed module and the shared analysis.

Everything here is computed lazily and at most once per file, so a rule pays
only for what it asks (tensor facts only for the functions it inspects).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import libcst as cst

from tfrewrite.analysis.index import ModuleIndex
from tfrewrite.analysis.names import NameResolver
from tfrewrite.analysis.project import TracedFunction
from tfrewrite.analysis.tensors import LOSS_PARAMETER_NAMES, TensorFacts, positional_param_names
from tfrewrite.analysis.walk import statement_children
from tfrewrite.rules.base import ImportRequest


@dataclass(eq=False)
class FunctionScope:
    """A function definition with the facts rules ask about it."""

    node: cst.FunctionDef
    qualname: str
    class_name: str | None
    parent: FunctionScope | None
    traced: TracedFunction | None
    children: list[FunctionScope] = field(default_factory=list)

    @property
    def is_method(self) -> bool:
        return self.class_name is not None


class RuleContext:
    def __init__(
        self,
        path: str,
        module: cst.Module,
        index: ModuleIndex,
        traced: dict[str, TracedFunction],
        settings: dict[str, str] | None = None,
    ) -> None:
        self.path = path
        self.settings = settings or {}
        self.module = module
        self.index = index
        self.traced = traced
        self.names = NameResolver(index.imports)
        self._functions: list[FunctionScope] | None = None
        self._scope_by_node: dict[int, FunctionScope] | None = None
        self._tensor_facts: dict[int, TensorFacts] = {}

    # -- functions ------------------------------------------------------------------
    @property
    def functions(self) -> list[FunctionScope]:
        """Every function definition, outermost first, found by walking
        statements only (cheap: no expression is visited)."""
        if self._functions is None:
            self._functions = []
            self._scan(self.module, [], None, None)
        return self._functions

    def _scan(
        self,
        node: cst.CSTNode,
        scope: list[str],
        class_name: str | None,
        parent: FunctionScope | None,
    ) -> None:
        for child in statement_children(node):
            if isinstance(child, cst.FunctionDef):
                qualname = ".".join([*scope, child.name.value])
                in_class = (
                    class_name is not None and scope and scope[-1] == class_name.split(".")[-1]
                )
                function = FunctionScope(
                    child,
                    qualname,
                    class_name if in_class else None,
                    parent,
                    self.traced.get(qualname),
                )
                self._functions.append(function)  # type: ignore[union-attr]
                if parent is not None:
                    parent.children.append(function)
                self._scan(child, [*scope, child.name.value], class_name, function)
            elif isinstance(child, cst.ClassDef):
                qualname = ".".join([*scope, child.name.value])
                self._scan(child, [*scope, child.name.value], qualname, parent)
            else:
                self._scan(child, scope, class_name, parent)

    def traced_functions(self) -> Iterator[FunctionScope]:
        """Traced functions that are not nested in another traced function:
        a rule walking these bodies sees all traced code exactly once."""
        for function in self.functions:
            if function.traced is None:
                continue
            outer = function.parent
            while outer is not None and outer.traced is None:
                outer = outer.parent
            if outer is None:
                yield function

    def scope_of(self, node: cst.FunctionDef) -> FunctionScope | None:
        # A dict, not a scan: rules ask once per conditional or call, and a
        # scan over every function made large files quadratic.
        if self._scope_by_node is None:
            self._scope_by_node = {id(f.node): f for f in self.functions}
        return self._scope_by_node.get(id(node))

    def innermost_scope(
        self, outer: FunctionScope, ancestors: Sequence[cst.CSTNode]
    ) -> FunctionScope:
        """The function nearest a node with these `ancestors` (outermost
        first), `outer` when none is nested inside it: the scope whose tensor
        facts describe the node."""
        for node in reversed(ancestors):
            if isinstance(node, cst.FunctionDef):
                return self.scope_of(node) or outer
        return outer

    # -- tensors ---------------------------------------------------------------------
    def tensors(self, function: FunctionScope) -> TensorFacts:
        """Tensor facts for a function's local names (nested functions see the
        tensors of the functions around them)."""
        key = id(function.node)
        if key not in self._tensor_facts:
            outer = self.tensors(function.parent) if function.parent is not None else None
            self._tensor_facts[key] = TensorFacts(
                function.node, self.names, self._tensor_params(function), outer
            )
        return self._tensor_facts[key]

    def _tensor_params(self, function: FunctionScope) -> set[str]:
        if function.traced is None:
            return set()
        params = positional_param_names(function.node)
        if params and params[0] in ("self", "cls") and function.class_name:
            params = params[1:]
        known = {p for p in params if p in LOSS_PARAMETER_NAMES}
        if function.traced.is_loss:
            known.update(params[:2])
        return known

    # -- writing code ----------------------------------------------------------------
    def tensorflow(self) -> tuple[str, tuple[ImportRequest, ...]]:
        """The name to write for TensorFlow in this file and the import a fix
        must add when the file has none (`import tensorflow as tf`)."""
        alias, needs_import = self.names.tensorflow_alias()
        if not needs_import:
            return alias, ()
        if alias in self.index.imports or alias in self.index.functions:
            return "tensorflow", (ImportRequest("tensorflow"),)
        return alias, (ImportRequest("tensorflow", None, alias),)

    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)
