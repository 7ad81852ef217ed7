"""What a rule sees of one file: the parsed module and the shared analysis.

Everything here is computed lazily and at most once per file, so a rule pays
only for what it asks (tensor facts only for the functions it inspects).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from tfrewrite.facts.attributes import attribute_facts
from tfrewrite.facts.bindings import local_names, positional_param_names
from tfrewrite.facts.import_requests import ImportRequest
from tfrewrite.facts.index_records import ModuleIndex
from tfrewrite.facts.keras_names import is_keras_model_class, keras_leaf
from tfrewrite.facts.names import NameResolver, dotted_name
from tfrewrite.facts.parameter_names import LOSS_PARAMETER_NAMES
from tfrewrite.facts.parameters import keyed_input_params, likely_tensor_params
from tfrewrite.facts.tensor_kinds import (
    FLOATING,
    SCALAR,
    TENSOR,
    TensorKind,
)
from tfrewrite.facts.tensors import AttributeFacts, TensorFacts, module_facts
from tfrewrite.facts.traced_function import TracedFunction
from tfrewrite.facts.walk import iter_nodes, statement_children
from tfrewrite.workspace.positions import node_ranges

_Fact = TypeVar("_Fact")
# Keras bases whose objects, when called, return what their `call` returns.
_KERAS_LAYER_BASES = frozenset({"Layer", "Model", "Sequential"})


@dataclass(eq=False)
class FunctionScope:
    """A function definition with the facts rules ask about it.

    `traced` is set when the function runs traced now. `pending` is set
    instead when it will run traced once a pending fix decorates it (an
    undecorated train step driven from a Python loop, and what it calls):
    rules that check traced code check it too (`runs_traced`), so its
    blockers are findings in the same run; rules about decorators look at
    `traced` only."""

    node: cst.FunctionDef
    qualname: str
    class_name: str | None
    parent: FunctionScope | None
    traced: TracedFunction | None
    children: list[FunctionScope] = field(default_factory=list)
    pending: TracedFunction | None = None

    def enclosing_binder(self, name: str) -> FunctionScope | None:
        """The nearest function around this one (not itself) whose body
        binds `name`: where a closure variable it reads lives; None when
        none does (a module name)."""
        scope = self.parent
        while scope is not None and name not in local_names(scope.node):
            scope = scope.parent
        return scope

    @property
    def is_method(self) -> bool:
        return self.class_name is not None

    @property
    def runs_traced(self) -> TracedFunction | None:
        """How the function runs traced, now or once a pending fix lands."""
        return self.traced or self.pending


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
        self._classes: dict[str, cst.ClassDef] = {}
        self._scope_by_node: dict[int, FunctionScope] | None = None
        self._tensor_facts: dict[int, TensorFacts] = {}
        self._module_facts: TensorFacts | None = None
        self._attribute_facts: dict[str, AttributeFacts] = {}
        self._ranges: dict[cst.CSTNode, CodeRange] = {}
        self._range_requests = 0
        self._module_facts_by_kind: dict[object, object] = {}

    def module_fact(self, kind: object, derive: Callable[[cst.Module], _Fact]) -> _Fact:
        """A fact of the whole module (what each name is assigned, which
        loops call what), derived by one walk the first time a rule asks and
        kept for the others: asked once per finding, a walk of the module
        each time would make a file's cost grow with its size times its
        findings. `kind` names the fact (the function that asks for it)."""
        if kind not in self._module_facts_by_kind:
            self._module_facts_by_kind[kind] = derive(self.module)
        return self._module_facts_by_kind[kind]  # type: ignore[return-value]

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
                traced = self.traced.get(qualname)
                pending = traced if traced is not None and traced.pending else None
                function = FunctionScope(
                    child,
                    qualname,
                    class_name if in_class else None,
                    parent,
                    None if pending is not None else traced,
                    pending=pending,
                )
                self._functions.append(function)  # type: ignore[union-attr]
                if parent is not None:
                    parent.children.append(function)
                self._scan(child, [*scope, child.name.value], class_name, function)
            elif isinstance(child, cst.ClassDef):
                qualname = ".".join([*scope, child.name.value])
                self._classes[qualname] = child
                self._scan(child, [*scope, child.name.value], qualname, parent)
            else:
                self._scan(child, scope, class_name, parent)

    def traced_functions(self) -> Iterator[FunctionScope]:
        """Functions that run traced (now, or once a pending fix decorates
        them) and are not nested in another such function: a rule walking
        these bodies sees all traced code exactly once."""
        for function in self.functions:
            if function.runs_traced is None:
                continue
            outer = function.parent
            while outer is not None and outer.runs_traced is None:
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
        tensors of the functions around them, top-level ones the module's)."""
        key = id(function.node)
        if key not in self._tensor_facts:
            if function.parent is not None:
                outer = self.tensors(function.parent)
            else:
                outer = self.module_tensors()
            kinds = self._parameter_kinds(function)
            self._tensor_facts[key] = TensorFacts(
                function.node,
                self.names,
                (),
                outer,
                kinds,
                likely_params=lambda: self._likely_params(function, kinds),
                attributes=lambda: self._attributes_of(function),
                project_results=lambda func: self._returns_tensor(func, function),
                param_elements=dict(traced.elements) if (traced := function.runs_traced) else None,
                likely_keyed=lambda: self._likely_keyed(function),
            )
        return self._tensor_facts[key]

    def _returns_tensor(self, func: cst.BaseExpression, function: FunctionScope) -> bool:
        """Whether the project function (or held object's method) `func`
        names returns a tensor on every path (`callee_tensor_results`)."""
        results = self.index.callee_tensor_results
        if not results:
            return False
        owner = self.class_of(function)
        names = self.pass1_names(func, owner[0] if owner is not None else None)
        return not results.isdisjoint(names)

    def module_tensors(self) -> TensorFacts:
        """Facts for module-level names (bound once, not rebound anywhere in
        the project): tensors, variables, datasets and Python numbers."""
        if self._module_facts is None:
            self._module_facts = module_facts(
                self.module, self.names, self.index.rebound_module_names, self._object_attributes
            )
        return self._module_facts

    def class_of(self, function: FunctionScope) -> tuple[str, cst.ClassDef] | None:
        """The class whose `self` a method (or a function nested in one) sees."""
        current: FunctionScope | None = function
        while current is not None and current.class_name is None:
            current = current.parent
        if current is None or current.class_name is None:
            return None
        node = self._classes.get(current.class_name)
        return (current.class_name, node) if node is not None else None

    def receiver_class(self, receiver: str, owner: str | None) -> str | None:
        """The class of this file a receiver stands for, or None: `self` is
        `owner`; `self.<attr>` the class of the object `owner` holds there
        (`self.agent = Agent()`); a name bound once at module level the class
        it was built from (`agent = Agent()`)."""
        head, _, attr = receiver.partition(".")
        if "." in attr:
            return None
        if head == "self":
            if owner is None or not attr:
                return owner
            info = self.index.classes.get(owner)
            built = info.held_objects.get(attr) if info is not None else None
        else:
            built = None if attr else self.index.module_instances.get(head)
        local = self.index.local(built) if built else None
        return local if local in self.index.classes else None

    def _attributes_of(self, function: FunctionScope) -> AttributeFacts | None:
        """What `self` holds, for a method and the functions nested in it."""
        current: FunctionScope | None = function
        while current is not None and current.class_name is None:
            current = current.parent
        if current is None or current.class_name is None:
            return None
        return self._class_attributes(current.class_name)

    def _object_attributes(self, name: str) -> AttributeFacts | None:
        """What a module-level object of a class of this file holds
        (`store = Counter()`, bound once)."""
        built = self.receiver_class(name, None)
        return self._class_attributes(built) if built is not None else None

    def class_node(self, name: str) -> cst.ClassDef | None:
        """The class `name` (a local qualname) of this file."""
        return self._classes.get(name)

    def _class_attributes(self, name: str) -> AttributeFacts | None:
        """What the methods of the class `name` of this file see on `self`."""
        if name not in self._attribute_facts:
            node = self._classes.get(name)
            if node is None:
                return None
            info = self.index.classes.get(name)
            keras_model = info is not None and is_keras_model_class(info.bases)
            self._attribute_facts[name] = AttributeFacts()  # while it is worked out
            self._attribute_facts[name] = attribute_facts(
                node, self.names, keras_model, self._returns_one_tensor
            )
        return self._attribute_facts[name]

    def _returns_one_tensor(self, built: cst.Call) -> bool:
        """Whether `built` makes an object of a Keras layer or model class of
        this file whose `call` returns one tensor at every `return` (the
        tensor facts of that `call`): calling the object gives a tensor."""
        name = dotted_name(built.func)
        node = self._classes.get(name or "")
        info = self.index.classes.get(name or "")
        if node is None or info is None:
            return False
        if not any(keras_leaf(base) in _KERAS_LAYER_BASES for base in info.bases):
            return False
        call = next(
            (
                scope
                for scope in self.functions
                if scope.qualname == f"{name}.call" and scope.class_name == name
            ),
            None,
        )
        if call is None:
            return False
        returns = [
            r for r in iter_nodes(call.node.body, into_functions=False) if isinstance(r, cst.Return)
        ]
        facts = self.tensors(call)
        return bool(returns) and all(
            r.value is not None and facts.kind_at(r.value, r).tensor for r in returns
        )

    def _parameter_kinds(self, function: FunctionScope) -> dict[str, TensorKind]:
        """Proven parameter kinds of a function that runs traced: a loss's
        arguments (Keras hands `y_true`/`y_pred` over as floating-point
        tensors), what the tracer passes (`Dataset.map`, `input_signature`,
        Keras contracts) and what every call site passes."""
        traced = function.runs_traced
        if traced is None:
            return {}
        params = positional_param_names(function.node)
        if params and params[0] in ("self", "cls") and function.class_name:
            params = params[1:]
        kinds: dict[str, TensorKind] = {}
        for name in params:
            if name in LOSS_PARAMETER_NAMES:
                kinds[name] = FLOATING
        if traced.is_loss:
            # Unless every call passes a Python value there (`scaled(loss,
            # self.losses)`: a helper of the loss, not `(y_true, y_pred)`).
            for name in params[:2]:
                if name not in traced.python_params:
                    kinds[name] = FLOATING
        elif traced.loss_signature:
            for name in params[:2]:
                kinds.setdefault(name, TENSOR)
        for name in traced.tensor_params:
            kinds.setdefault(name, SCALAR if name in traced.scalar_params else TENSOR)
        return kinds

    def _likely_params(self, function: FunctionScope, kinds: dict[str, TensorKind]) -> set[str]:
        """Likely-tensor parameters of a function that runs traced: any
        parameter with no evidence of a Python value (`likely_tensor_params`)
        or one some call site passes a tensor; never one some call site
        passes a Python value, nor a proven one."""
        traced = function.runs_traced
        if traced is None:
            return set()
        likely = likely_tensor_params(function.node, self.names) | set(traced.likely_params)
        return likely - set(traced.python_params) - set(kinds)

    def _likely_keyed(self, function: FunctionScope) -> set[str]:
        """Parameters whose items by a string key are likely tensors
        (`keyed_input_params`) of a function that runs traced, when the dict
        comes from outside every trace, as inputs do
        (`TracedFunction.fed_from_outside`): a dict traced code builds
        (augmentation settings NumPy drew) holds what it computed."""
        traced = function.runs_traced
        if traced is None:
            return set()
        keyed = keyed_input_params(function.node) & traced.fed_from_outside
        return keyed - set(traced.python_params)

    def _tensor_params(self, function: FunctionScope) -> set[str]:
        """Proven tensor parameters (kept for callers of the old API)."""
        return set(self._parameter_kinds(function))

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

    def pass1_names(self, expr: cst.BaseExpression, owner: str | None = None) -> list[str]:
        """The dotted names pass 1 may have given `expr` (a callee or a
        reference), the keys its project facts use: the qualified name
        through the file's imports, the file's own definition's qualified
        name, and for `self.decoder.reset` in a method of `owner`,
        `module.Owner.decoder.reset`."""
        names = []
        qualified = self.names.qualified_name(expr)
        if qualified:
            names.append(qualified)
        written = dotted_name(expr)
        if written:
            names.append(self.index.qualify(written))
            if owner and written.startswith("self."):
                names.append(self.index.qualify(f"{owner}.{written[len('self.') :]}"))
        return names

    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)

    def ranges(self, nodes: Sequence[cst.CSTNode]) -> list[CodeRange]:
        """The `PositionProvider` range of each node (lines 1-based, columns
        0-based). Positions cost a code generation pass over the file: the
        first two requests generate only up to their last node
        (`positions.node_ranges`); a module asked again and again has every
        position computed once."""
        missing = [n for n in nodes if n not in self._ranges]
        if missing:
            self._range_requests += 1
            if self._range_requests <= 2:
                self._ranges.update(zip(missing, node_ranges(self.module, missing), strict=True))
            else:
                wrapper = MetadataWrapper(self.module, unsafe_skip_copy=True)
                self._ranges = dict(wrapper.resolve(PositionProvider))
        return [self._ranges[n] for n in nodes]

    def lines(self, nodes: Sequence[cst.CSTNode]) -> list[tuple[int, int]]:
        """The 1-based first and last line of each node."""
        return [(r.start.line, r.end.line) for r in self.ranges(nodes)]
