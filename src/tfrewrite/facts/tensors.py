"""Which expressions are tensors, conservatively.

Unknown means "not a tensor": a rule that converts Python control flow or
Python calls into TensorFlow does so only on evidence, because a wrong
conversion silently changes a training run while a missed one is just a
finding for a human.

Evidence that an expression is a tensor:
- the result of a TensorFlow op (`tf.*`, `tf.math.*`, `keras.ops.*`, ...);
- a parameter known to carry tensors (a loss's `y_true`/`y_pred`, an argument
  annotated `tf.Tensor`, a `tf.function(input_signature=...)` argument);
- arithmetic, comparison, unary minus or indexing with a tensor operand;
- a local name every assignment of which is a tensor.

Not tensors: `x.shape`, `x.dtype`, `len(x)`, `x.shape.rank`, `is`/`is not`,
`isinstance(...)`, `not x`, `and`/`or`, attributes (including on `self`),
Python literals, calls to unknown functions.

Each expression also gets a rank fact (scalar or unknown) and a dtype-kind
fact (boolean, floating-point, integer or unknown), which `tf.cond`
conversions need: a branch output that is a Python `0` may become `0.0` only
when the other branch is known to be floating-point. A loss's tensor
arguments count as floating-point: Keras converts `y_true`/`y_pred` to the
loss's float dtype before calling it.

What TensorFlow's API says of each call (the tables, `TensorKind`) is in
`tensor_kinds`; what a function binds is in `bindings`.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import libcst as cst

from tfrewrite.facts.bindings import (
    all_params,
    iter_assignments,
    iter_assignments_here,
    scope_nodes,
    split_target,
)
from tfrewrite.facts.branch_value_kinds import BranchValueKinds
from tfrewrite.facts.helper_results import HelperResults
from tfrewrite.facts.keras_names import is_loss_class
from tfrewrite.facts.names import NameResolver
from tfrewrite.facts.parameters import is_string_key
from tfrewrite.facts.tensor_kinds import (
    DATASET,
    DATASET_METHODS,
    DATASET_NAMESPACES,
    FLOATING,
    METRIC,
    METRIC_RESULTS,
    MULTI_OUTPUT_KEYWORDS,
    MULTI_TENSOR_FUNCTIONS,
    NOT_TENSOR,
    OPTIMIZER,
    OPTIMIZER_ATTRIBUTES,
    OPTIONAL_CHECKS,
    OPTIONAL_MAKERS,
    TENSOR,
    TENSOR_ANNOTATIONS,
    TENSOR_CONVERSIONS,
    TOP,
    VARIABLE_CONSTRUCTORS,
    VARIABLE_READS,
    TensorKind,
    dtype_kind,
    is_metric_constructor,
    is_optimizer_constructor,
    is_python_float,
    is_python_int,
    is_python_number,
    is_tensor_op,
    layer_constructor_kind,
    meet,
    op_result_kind,
    read_kind,
    settled,
    variable_kind,
)
from tfrewrite.facts.type_guards import python_instance_guard
from tfrewrite.facts.walk import child_nodes, iter_expression


class Strength(enum.IntEnum):
    """How much is known that a value is a tensor.

    PROVEN: safe fixes may rest on it (`TensorFacts.is_tensor`). LIKELY: the
    value is a tensor whenever the function is called the way tracing calls
    it (a traced function's parameter with no contrary evidence, a value a
    call site passes as a tensor): enough for a finding and an unsafe fix
    that `verify` proves, never for a safe fix. NONE: nothing says so."""

    NONE = 0
    LIKELY = 1
    PROVEN = 2


@dataclass(eq=False)
class AttributeFacts:
    """What the methods of one class see on `self`: attributes that hold a
    `tf.Variable` (or a Keras weight), and attributes that are Python numbers
    (assigned only in `__init__`, from a number or from a parameter whose
    default is a number)."""

    kinds: dict[str, TensorKind] = field(default_factory=dict)
    numbers: frozenset[str] = frozenset()


class TensorFacts(BranchValueKinds, HelperResults):
    """Tensor facts for the local names of one function. What `tf.cond`
    makes of branch values is in `branch_value_kinds`, what a helper call
    returns in `helper_results`."""

    def __init__(
        self,
        function: cst.FunctionDef,
        resolver: NameResolver,
        tensor_params: Iterable[str] = (),
        outer: TensorFacts | None = None,
        param_kinds: dict[str, TensorKind] | None = None,
        likely_params: Iterable[str] | Callable[[], Iterable[str]] = (),
        attributes: AttributeFacts | Callable[[], AttributeFacts | None] | None = None,
        excluded: Iterable[str] = (),
        objects: Callable[[str], AttributeFacts | None] | None = None,
        param_elements: dict[str, str] | None = None,
        likely_elements: bool = False,
        project_results: Callable[[cst.BaseExpression], bool] | None = None,
        likely_keyed: Iterable[str] | Callable[[], Iterable[str]] = (),
        some_path: bool = False,
    ) -> None:
        """`param_kinds` gives the facts of some parameters directly (the
        arguments of a call whose result is being analysed, or what the
        project knows of a traced function's parameters). `likely_params`
        are parameters that are likely tensors (see `Strength`): they count
        only in the `likely` view. `outer` is the enclosing function's facts,
        or the module's for a top-level function (`module_facts`).
        `attributes` describes `self`. Names in `excluded` are never facts
        (module names that the project rebinds). `likely_params` and
        `attributes` may be given as functions, called on first use: most
        questions never need them. `objects` (the module's facts only) tells
        what a module-level object holds (`store = Counter()`: `store.count`
        is the variable `Counter.__init__` makes). `param_elements` gives,
        per parameter the call sites fill with a list or tuple display, the
        evidence of each element (`TracedFunction.elements`): unpacking the
        parameter binds tensors where it says `t` or `s` (and, in the `likely`
        view, `l`). `project_results` tells whether a callee is a project
        function of another module (or a held object's method) that returns
        a tensor on every path. `likely_keyed` are parameters whose items by a
        string key (`batch["obs"]`) are likely tensors: a dict of inputs
        (`parameters.keyed_input_params`); in the `likely` view only.
        `some_path` (the `likely` view): a name a tensor on some path to a
        statement is one there (`n = tf.shape(x)[1]` in one branch, `n =
        x.shape[1]` in the other), since the trace taking that path sees
        one."""
        self.function = function
        self._some_path = some_path
        self._project_results = project_results
        self.resolver = resolver
        self.outer = outer
        self._attributes = attributes
        self._objects = objects
        self.excluded = frozenset(excluded)
        self.params = {p.name.value for p in all_params(function.params)}
        self._likely_source = likely_params
        self._likely_known: frozenset[str] | None = None
        self._not_likely = set(param_kinds or ()) | set(tensor_params)
        self._likely_view: TensorFacts | None = None
        self._some_paths_view: TensorFacts | None = None
        self._param_elements = param_elements or {}
        self._element_codes = "tsl" if likely_elements else "ts"
        self._keyed_source = likely_keyed
        self._keyed_known: frozenset[str] | None = None
        self._keyed_items = likely_elements  # the `likely` view counts them
        self._names: dict[str, TensorKind] = {}
        for name in tensor_params:
            # Loss arguments: Keras hands them over as floating-point tensors.
            self._names[name] = FLOATING
        for param in all_params(function.params):
            if param.annotation is not None:
                qualified = resolver.qualified_name(param.annotation.annotation)
                if qualified in TENSOR_ANNOTATIONS:
                    self._names[param.name.value] = TENSOR
        for name, kind in (param_kinds or {}).items():
            if kind.tensor or kind.variable or kind.dataset:
                self._names[name] = kind
        self._param_kinds = dict(self._names)
        self._local_defs: dict[str, list[cst.FunctionDef]] | None = None
        # Set on the module's facts only: its top-level helper functions.
        self.module_functions: dict[str, cst.FunctionDef] = {}
        # Helpers whose result is being worked out, shared by every function's
        # facts under one module's (a helper's facts are built while its
        # caller's are: `a` calling `b` calling `a` must see `a` there).
        root = outer
        while root is not None and root.outer is not None:
            root = root.outer
        self._evaluating: set[int] = root._evaluating if root is not None else set()
        self._number_names: set[str] = set()
        self._reaching: dict[int, dict[str, TensorKind]] = {}
        self._ordered: list[_Binding] = []
        self._position: dict[int, int | None] | None = None  # built on first use
        self._chains: dict[int, _Chain] = {}  # statement -> the blocks holding it
        self._ifs: dict[int, cst.If] = {}  # the `if`s those blocks name
        self._solve()

    # -- public queries ---------------------------------------------------------
    def kind(self, node: cst.BaseExpression) -> TensorKind:
        return self._kind(node, self._names)

    @property
    def attributes(self) -> AttributeFacts | None:
        """What `self` holds (computed on first use)."""
        if callable(self._attributes):
            self._attributes = self._attributes()
        return self._attributes

    @property
    def _likely_params(self) -> frozenset[str]:
        if self._likely_known is None:
            source = self._likely_source
            names = frozenset(source() if callable(source) else source)
            if names:
                names -= self._converted_params()
            self._likely_known = names - self._not_likely
        return self._likely_known

    @property
    def _likely_keyed(self) -> frozenset[str]:
        if self._keyed_known is None:
            source = self._keyed_source
            names = frozenset(source() if callable(source) else source)
            self._keyed_known = names - self._not_likely
        return self._keyed_known

    def _converted_params(self) -> set[str]:
        """Parameters the function converts to a tensor itself (`x =
        tf.convert_to_tensor(x)`, `ops.convert_to_tensor`, `tf.constant`):
        its author expects other values there too (a list of thresholds), so
        such a parameter is no likely tensor before the conversion (after
        it, the binding proves one)."""
        converted = set()
        for target, value, augmented in iter_assignments(self.function.body):
            if augmented or not isinstance(target, cst.Name) or target.value not in self.params:
                continue
            if not (isinstance(value, cst.Call) and value.args):
                continue
            first = value.args[0].value
            if not (isinstance(first, cst.Name) and first.value == target.value):
                continue
            qualified = self.resolver.qualified_name(value.func) or ""
            if qualified in TENSOR_CONVERSIONS or qualified.endswith("ops.convert_to_tensor"):
                converted.add(target.value)
        return converted

    @property
    def likely(self) -> TensorFacts:
        """The same function's facts with every *likely* tensor counted as a
        tensor: ask it the same questions (`kind`, `kind_at`, `is_tensor`) to
        learn what holds if the likely parameters are tensors. Itself when
        nothing is only likely. Its answers are never proof."""
        if self._likely_view is None:
            outer_view = self.outer.likely if self.outer is not None else None
            likely_elements = any("l" in codes for codes in self._param_elements.values())
            if (
                not self._likely_params
                and outer_view is self.outer
                and not likely_elements
                and not self._likely_keyed
            ):
                self._likely_view = self
            else:
                self._likely_view = self._view(outer_view, some_path=False)
        return self._likely_view

    @property
    def some_paths(self) -> TensorFacts:
        """The `likely` view with a name that is a tensor on some path to a
        statement counted as one there (`n = tf.shape(x)[1]` in one branch,
        `n = x.shape[1]` in the other): the traces that take that path see
        a tensor. Enough for a finding, never for a fix: on the other paths
        the value is a Python one (`tf.cond` refuses a Python bool). Itself
        (the `likely` view) when no name is bound so."""
        likely = self.likely
        if likely is not self:
            return likely.some_paths  # one view per function, built from the likely one
        if self._some_paths_view is None:
            if not self._tensor_on_some_paths():
                self._some_paths_view = self
            else:
                outer = self.outer.some_paths if self.outer is not None else None
                self._some_paths_view = self._view(outer, some_path=True)
        return self._some_paths_view

    def _view(self, outer_view: TensorFacts | None, some_path: bool) -> TensorFacts:
        """These facts with the likely parameters (and elements, and keyed
        items) counted as tensors; with `some_path`, names bound to a
        tensor on some path too."""
        kinds = dict(self._param_kinds)
        kinds.update((name, TENSOR) for name in self._likely_params)
        view = TensorFacts(
            self.function,
            self.resolver,
            (),
            outer_view,
            kinds,
            attributes=self._attributes,
            excluded=self.excluded,
            objects=self._objects,
            param_elements=self._param_elements,
            likely_elements=True,
            likely_keyed=self._likely_keyed,
            some_path=some_path,
        )
        view._likely_view = view
        if some_path:
            view._some_paths_view = view
        return view

    def _tensor_on_some_paths(self) -> bool:
        """Whether a name of the function is a tensor by one of its
        bindings and not by all of them."""
        return any(
            len(values) > 1
            and not self._names.get(name, NOT_TENSOR).tensor
            and any(self._binding_kind(*value, self._names).tensor for value in values)
            for name, values in self._bindings.items()
        )

    @property
    def likely_params(self) -> frozenset[str]:
        """Parameters that are likely tensors (not proven ones)."""
        return self._likely_params

    def strength(self, node: cst.BaseExpression) -> Strength:
        """PROVEN, LIKELY or NONE: how much says `node` is a tensor."""
        if self.kind(node).tensor:
            return Strength.PROVEN
        if self.likely is not self and self.likely.kind(node).tensor:
            return Strength.LIKELY
        return Strength.NONE

    def strength_at(self, node: cst.BaseExpression, statement: cst.CSTNode) -> Strength:
        """`strength` with the bindings that reach `statement` (see `kind_at`)."""
        if self.kind_at(node, statement).tensor:
            return Strength.PROVEN
        if self.likely is not self and self.likely.kind_at(node, statement).tensor:
            return Strength.LIKELY
        return Strength.NONE

    def is_likely_tensor(self, node: cst.BaseExpression) -> bool:
        """Proven or likely a tensor: enough for a finding, not for a safe fix."""
        return self.strength(node) is not Strength.NONE

    def assumptions(self, node: cst.CSTNode) -> list[str]:
        """The likely-tensor parameters a LIKELY fact about `node` rests on,
        for messages ("assumes `x` is a tensor argument"): those `node`
        reads, else every likely parameter of this function and the ones
        around it."""
        every: set[str] = set()
        facts: TensorFacts | None = self
        while facts is not None:
            every |= facts._likely_params
            facts = facts.outer
        read = {n.value for n in scope_nodes(node) if isinstance(n, cst.Name) and n.value in every}
        return sorted(read or every)

    def assumption_note(self, node: cst.CSTNode) -> str:
        """The note an unsafe fix resting on likely tensors carries: "it
        assumes `x` is a tensor argument"; for what a list argument's
        elements are, "it assumes the elements of `inputs` its callers pass
        unknown values for are tensors"."""
        parts = []
        names = self.assumptions(node)
        if names:
            listed = ", ".join(f"`{name}`" for name in names)
            verb = "is a tensor argument" if len(names) == 1 else "are tensor arguments"
            parts.append(f"{listed} {verb}")
        unpacked = sorted(p for p, codes in self._param_elements.items() if "l" in codes)
        if unpacked and not names:
            listed = ", ".join(f"`{name}`" for name in unpacked)
            parts.append(
                f"the elements of {listed} its callers pass unknown values for are tensors"
            )
        return "it assumes " + " and ".join(parts or ["a parameter is a tensor argument"])

    def kind_at(self, node: cst.BaseExpression, statement: cst.CSTNode) -> TensorKind:
        """The kind of `node` evaluated just before `statement` (an `if`, a
        conditional expression, a `for` (its iterable) or a simple statement
        line of this function) runs. Names take the
        meet of the bindings that can reach it: in code outside loops, those
        that come before it in the source (so `m` is a tensor in `if m > 1.0:`
        even when `m = helper(m)` follows the `if`). Inside a loop, or for a
        node not found, the function-wide facts apply."""
        key = id(statement)
        if key not in self._reaching:
            self._reaching[key] = self._names_before(statement)
        return self._kind(node, self._reaching[key])

    def _index_bindings(self) -> None:
        """One walk of the function, in source order: every binding in the
        order it happens (after its value is evaluated: `x = f(x)` binds x
        once f(x) ran), and for each conditional, how many bindings precede
        it, or None inside a loop. Each binding and statement keeps the
        blocks that hold it (`_Chain`): a plain assignment replaces what came
        before for the statements of its own block and the blocks inside it,
        and a binding in one branch of an `if` never reaches the other."""
        self._ordered = []
        self._position = {}
        self._chains = {}
        top_level_ifs = {id(line) for line in self.function.body.body if isinstance(line, cst.If)}
        # (node, inside a loop, visited already: record its bindings now, its blocks)
        stack: list[tuple[cst.CSTNode, bool, bool, _Chain]] = [
            (self.function.body, False, False, ())
        ]
        while stack:
            node, in_loop, done, chain = stack.pop()
            if done:
                plain = isinstance(node, (cst.Assign, cst.AnnAssign))
                for target, value, augmented in iter_assignments_here(node):
                    for name, value_part, index in split_target(target, value):
                        self._ordered.append((name, value_part, augmented, index, plain, chain))
                if id(node) in top_level_ifs:
                    self._ordered.extend(
                        (*joined, ())
                        for joined in _joined_branch_bindings(node)  # type: ignore[arg-type]
                    )
                continue
            # A `for` evaluates its iterable once, before its body runs.
            if isinstance(node, (cst.If, cst.IfExp, cst.SimpleStatementLine, cst.For)):
                self._position[id(node)] = None if in_loop else len(self._ordered)
                self._chains[id(node)] = chain
            if isinstance(node, cst.If):
                self._ifs[id(node)] = node
            if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                continue
            stack.append((node, in_loop, True, chain))
            loop = in_loop or isinstance(node, (cst.For, cst.While))
            stack.extend(
                (child, loop, False, _child_chain(node, child, chain))
                for child in reversed(child_nodes(node))
            )

    def _names_before(self, statement: cst.CSTNode) -> dict[str, TensorKind]:
        if self._position is None:
            self._index_bindings()
        assert self._position is not None
        count = self._position.get(id(statement))
        here = self._chains.get(id(statement), ())
        guarded = self._python_values(here)
        if count is None:
            # Inside a loop: the function-wide facts, as every binding meets
            # (one after the loop, `w = tf.convert_to_tensor(w)`, does not
            # reach a statement in it).
            return {**self._met_names, **dict.fromkeys(guarded, NOT_TENSOR)}
        seen: dict[str, list[tuple[cst.BaseExpression | None, bool, int | None, bool]]] = {}
        for name, value, augmented, index, plain, chain in self._ordered[:count]:
            if _exclusive(chain, here):
                continue  # the other branch of an `if` holding the statement
            kills = plain and here[: len(chain)] == chain
            seen.setdefault(name, []).append((value, augmented, index, kills))
        names = dict(self._names)
        # A parameter rebound only after `statement` still holds its argument
        # there (`if x > 0: x = x * x else: x = 0` tests the tensor argument).
        for name in self.params:
            if name not in seen and name in self._bindings:
                names[name] = self._param_kinds.get(name, NOT_TENSOR)
        for name, values in seen.items():
            result = self._param_kinds.get(name, NOT_TENSOR) if name in self.params else None
            for value, augmented, index, kills in values:
                kind = self._binding_kind(value, augmented, index, self._names)
                # An assignment every path to the statement runs replaces what
                # came before it (the parameter's argument too: `flag =
                # tf.reduce_any(...)`).
                if result is None or kills:
                    result = kind
                elif self._some_path and kind.tensor != result.tensor:
                    result = kind if kind.tensor else result
                else:
                    result = meet(result, kind)
            names[name] = settled(result) if result is not None else NOT_TENSOR
        return {**names, **dict.fromkeys(guarded, NOT_TENSOR)}

    def python_values_at(self, statement: cst.CSTNode) -> frozenset[str]:
        """The names an enclosing `isinstance` test proves Python values at
        `statement` (`else: loss = list(loss)` after `if isinstance(loss,
        tuple) is False:`), whatever their bindings hold."""
        if self._position is None:
            self._index_bindings()
        return self._python_values(self._chains.get(id(statement), ()))

    def _python_values(self, here: _Chain) -> frozenset[str]:
        found = set()
        for kind, block, part in here:
            guard = python_instance_guard(self._ifs[block].test) if kind == "if" else None
            if guard is not None and guard[1] == (part == 0):
                found.add(guard[0])
        return frozenset(found)

    def is_tensor(self, node: cst.BaseExpression) -> bool:
        return self.kind(node).tensor

    def is_scalar_tensor(self, node: cst.BaseExpression) -> bool:
        k = self.kind(node)
        return k.tensor and k.scalar

    def name_kind(self, name: str) -> TensorKind:
        """The fact for a local name (or a name of an enclosing function)."""
        return self.kind(cst.Name(name))

    def assuming_tensors(self, names: Iterable[str]) -> TensorFacts:
        """The function's facts in the trace where the parameters `names` are
        tensors (the others as these facts know them): a function called with
        a tensor at one call site and a Python value at another is traced once
        for each."""
        kinds = {name: kind for name in self.params if (kind := self.name_kind(name)).tensor}
        kinds.update((name, TENSOR) for name in names)
        return TensorFacts(self.function, self.resolver, (), self.outer, kinds)

    def tensor_names(self) -> frozenset[str]:
        return frozenset(n for n, k in self._names.items() if k.tensor)

    def involves_tensor(self, node: cst.CSTNode) -> bool:
        """True when any sub-expression of `node` is a tensor (for arguments
        such as f-strings or containers). What an attribute that is no
        tensor reads of one is metadata (`net.shape`, `x.dtype.name`), not
        the tensor: it is not looked into."""
        return any(
            isinstance(current, cst.BaseExpression) and self.is_tensor(current)
            for current in iter_expression(
                node, lambda n: isinstance(n, cst.Attribute) and not self.is_tensor(n)
            )
        )

    # -- solving ----------------------------------------------------------------
    def _solve(self) -> None:
        """Greatest fixed point: every bound name starts as the most specific
        fact (a scalar tensor of every kind) and loses what some binding of it
        contradicts, until nothing changes. So `loss = loss + tf.reduce_sum(x)`
        after `loss = tf.zeros(())` holds, and so do names defined through
        each other (`tmp = m * 2.0; m = tmp + 1.0`). A name with an unknown
        binding ends as not a tensor; a name bound only through itself cannot
        run without an error, so its optimistic fact is never used."""
        bindings: dict[str, list[tuple[cst.BaseExpression | None, bool, int | None]]] = {}
        for target, value, augmented in iter_assignments(self.function.body):
            for name, value_part, index in split_target(target, value):
                bindings.setdefault(name, []).append((value_part, augmented, index))
        for name in self.params:
            if name in bindings:
                # A rebound parameter keeps its own value as one binding: a
                # tensor parameter stays a tensor only if every rebinding is
                # a tensor too, and any other parameter is not a tensor.
                bindings[name].append((cst.Name(name), False, -1))  # marker: the parameter itself
        self._bindings = bindings
        self._float_assumed: set[str] = set()
        self._find_number_names(bindings)
        names = {**self._names, **{name: TOP for name in bindings}}
        # In place, so that nested functions analysed meanwhile (branch
        # functions of a `tf.cond`) see the facts as they are being solved.
        self._names = names
        for _ in range(6 * len(bindings) + 2):  # descending: a few changes per name at most
            changed = False
            for name, values in bindings.items():
                result = self._binding_kind(*values[0], names)
                for value, augmented, index in values[1:]:
                    result = meet(result, self._binding_kind(value, augmented, index, names))
                result = settled(result)
                if result != names[name]:
                    changed = True
                    names[name] = result
            if not changed:
                break
        self._met_names = dict(names) if self._some_path else names
        if self._some_path:
            # Ascending from there: a name one binding makes a tensor is one
            # (each name turns at most once).
            for _ in range(len(bindings) + 1):
                changed = False
                for name, values in bindings.items():
                    if names[name].tensor:
                        continue
                    for value, augmented, index in values:
                        kind = self._binding_kind(value, augmented, index, names)
                        if kind.tensor:
                            names[name] = settled(kind)
                            changed = True
                            break
                if not changed:
                    break
        # Locals that are not tensors stay recorded, so that they do not fall
        # back to a tensor of the same name in an enclosing function.
        self._names = names

    def _binding_kind(
        self,
        value: cst.BaseExpression | None,
        augmented: bool,
        index: int | None,
        names: dict[str, TensorKind],
    ) -> TensorKind:
        if index == -1:  # the parameter binding itself
            return self._param_kinds.get(getattr(value, "value", ""), NOT_TENSOR)
        if value is None:
            return NOT_TENSOR
        if isinstance(value, cst.For):
            return self._element_kind(value.iter, index, names)
        if augmented:
            aug = value  # the AugAssign node
            assert isinstance(aug, cst.AugAssign)
            return self._arithmetic_kind(
                aug.target,
                aug.operator,
                aug.value,
                names,  # type: ignore[arg-type]
            )
        if index is not None:
            # Element `index` of a tuple target: tensors when the value is a call
            # returning several tensors.
            if isinstance(value, cst.Call):
                qualified = self.resolver.qualified_name(value.func)
                if qualified in MULTI_TENSOR_FUNCTIONS:
                    return TENSOR
                if qualified is None and self._kind(value.func, names).several:
                    # `outputs, h, c = self.lstm(x)`: a layer returning several tensors.
                    return TENSOR
                helper = (
                    self._module_function(value.func.value, names)
                    if isinstance(value.func, cst.Name)
                    else None
                )
                if helper is not None:
                    # `boxes, probs = pick(scores)`: element `index` of what
                    # the module's helper returns.
                    return self._helper_result_kind(helper, value.args, names, index)
            if isinstance(value, cst.Name) and value.value in self._param_elements:
                codes = self._param_elements[value.value]
                if value.value not in self._bindings and index < len(codes):
                    return TENSOR if codes[index] in self._element_codes else NOT_TENSOR
            # Unpacking a tensor (or a parameter holding a structure of
            # tensors, such as a train step's `data`) yields tensors.
            whole = self._kind(value, names)
            if whole.tensor:
                return TensorKind(True, False, whole.boolean, whole.floating, whole.integer)
            return NOT_TENSOR
        return self._kind(value, names)

    def _element_kind(
        self, iterable: cst.BaseExpression, index: int | None, names: dict[str, TensorKind]
    ) -> TensorKind:
        """What `for target in iterable` binds: the rows of a tensor (scalars
        for a rank-1 tensor such as `tf.range(n)`), the elements of a
        `tf.data.Dataset`, and through `enumerate(...)` the second item."""
        if (
            isinstance(iterable, cst.Call)
            and isinstance(iterable.func, cst.Name)
            and iterable.func.value == "enumerate"
            and iterable.args
            and iterable.func.value not in names
        ):
            if index != 1:
                return NOT_TENSOR
            return self._element_kind(iterable.args[0].value, None, names)
        source = self._value(self._kind(iterable, names))
        if source.dataset:
            return TENSOR
        if source.tensor:
            scalar = source.vector and index is None
            return TensorKind(True, scalar, source.boolean, source.floating, source.integer)
        return NOT_TENSOR

    def _kind(self, node: cst.BaseExpression, names: dict[str, TensorKind]) -> TensorKind:
        if isinstance(node, cst.Name):
            if node.value in self.excluded:
                return NOT_TENSOR
            if node.value in names:
                return names[node.value]
            if self.outer is not None and node.value not in self.params:
                return self.outer.kind(node)
            return NOT_TENSOR
        if isinstance(node, cst.Call):
            return self._call_kind(node, names)
        if isinstance(node, cst.BinaryOperation):
            return self._arithmetic_kind(node.left, node.operator, node.right, names)
        if isinstance(node, cst.UnaryOperation):
            if isinstance(node.operator, cst.Not):
                return NOT_TENSOR  # Python `not` calls bool(): not a tensor result
            inner = self._value(self._kind(node.expression, names))
            return TensorKind(inner.tensor, inner.scalar, False, inner.floating, inner.integer)
        if isinstance(node, cst.Comparison):
            return self._comparison_kind(node, names)
        if isinstance(node, cst.Subscript):
            if self._keyed_item(node):
                return TENSOR
            base = self._value(self._kind(node.value, names))
            if not base.tensor:
                return NOT_TENSOR
            # An integer index of a rank-1 tensor (`tf.shape(x)[0]`) is a
            # scalar; a slice of one (`tf.shape(x)[1:-1]`) is rank 1 again.
            scalar = base.vector and _is_single_index(node)
            vector = base.vector and _is_single_slice(node)
            return TensorKind(
                True, scalar, base.boolean, base.floating, base.integer, vector=vector
            )
        if isinstance(node, cst.Attribute):
            if (
                self.attributes is not None
                and isinstance(node.value, cst.Name)
                and node.value.value == "self"
            ):
                return self.attributes.kinds.get(node.attr.value, NOT_TENSOR)
            if node.attr.value in OPTIMIZER_ATTRIBUTES and self._kind(node.value, names).optimizer:
                return OPTIMIZER_ATTRIBUTES[node.attr.value]
            if isinstance(node.value, cst.Name):
                held = self._object_attributes(node.value.value)
                if held is not None:
                    return held.kinds.get(node.attr.value, NOT_TENSOR)
            return NOT_TENSOR
        if isinstance(node, cst.IfExp):
            if self._kind(node.test, names).tensor:
                # On a tensor, it runs (or is rewritten) as `tf.cond`.
                return meet(
                    self._value_kind(node.body, names), self._value_kind(node.orelse, names)
                )
            return meet(self._kind(node.body, names), self._kind(node.orelse, names))
        if isinstance(node, cst.NamedExpr):
            return self._kind(node.value, names)
        return NOT_TENSOR

    def _keyed_item(self, node: cst.Subscript) -> bool:
        """`batch["obs"]` of a parameter holding a dict of inputs, never
        rebound: a likely tensor (`likely` view only)."""
        if not self._keyed_items or not isinstance(node.value, cst.Name):
            return False
        name = node.value.value
        if name not in self._likely_keyed or name in self._bindings:
            return False
        return is_string_key(node)

    def _object_attributes(self, name: str) -> AttributeFacts | None:
        """What the module-level object `name` holds, when no function
        between this one and the module binds the name."""
        facts: TensorFacts | None = self
        while facts is not None:
            if facts.outer is None:  # the module's facts
                if facts._objects is None or name in facts.excluded:
                    return None
                return facts._objects(name)
            if name in facts.params or name in facts._bindings:
                return None
            facts = facts.outer
        return None

    _value = staticmethod(read_kind)

    def _is_number(self, node: cst.BaseExpression) -> bool:
        """A Python number: a literal, arithmetic on numbers, or a local name
        every binding of which is one (`scale = 1.0; scale = 2.0`)."""
        if is_python_number(node):
            return True
        if isinstance(node, cst.Name):
            if node.value in self.excluded:
                return False
            if node.value in self._number_names:
                return True
            if node.value in self._bindings or node.value in self.params:
                return False
            return self.outer is not None and self.outer._is_number(node)
        if isinstance(node, cst.Attribute):
            return (
                self.attributes is not None
                and isinstance(node.value, cst.Name)
                and node.value.value == "self"
                and node.attr.value in self.attributes.numbers
            )
        if isinstance(node, cst.UnaryOperation):
            signed = isinstance(node.operator, (cst.Minus, cst.Plus))
            return signed and self._is_number(node.expression)
        if isinstance(node, cst.BinaryOperation):
            return self._is_number(node.left) and self._is_number(node.right)
        return False

    def _find_number_names(self, bindings: dict[str, list]) -> None:  # type: ignore[type-arg]
        """Greatest fixed point over the local names bound only to numbers."""
        self._number_names = {
            name
            for name, values in bindings.items()
            if name not in self.params and all(v is not None and i is None for v, _, i in values)
        }
        changed = True
        while changed:
            changed = False
            for name in list(self._number_names):
                for value, augmented, _ in bindings[name]:
                    expression = value.value if augmented else value  # type: ignore[union-attr]
                    if not self._is_number(expression):
                        self._number_names.discard(name)
                        changed = True
                        break

    def _arithmetic_kind(
        self,
        left_node: cst.BaseExpression,
        operator: cst.CSTNode,
        right_node: cst.BaseExpression,
        names: dict[str, TensorKind],
    ) -> TensorKind:
        """`a op b` (or `a op= b`): a tensor when either side is; floating when
        either side is floating (a Python float included) or for `/`.
        `"loss %s" % x` is Python string formatting, whatever `x` is: a
        string, built once while tracing."""
        if isinstance(operator, (cst.Modulo, cst.ModuloAssign)) and isinstance(
            left_node, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)
        ):
            return NOT_TENSOR
        left = self._value(self._kind(left_node, names))
        right = self._value(self._kind(right_node, names))
        if not (left.tensor or right.tensor):
            return NOT_TENSOR
        scalar = (left.scalar or self._is_number(left_node)) and (
            right.scalar or self._is_number(right_node)
        )
        floating = (
            left.floating
            or right.floating
            or is_python_float(left_node)
            or is_python_float(right_node)
            or isinstance(operator, (cst.Divide, cst.DivideAssign))
        )
        integer = (
            not floating
            and (left.integer or is_python_int(left_node))
            and (right.integer or is_python_int(right_node))
        )
        return TensorKind(True, scalar, False, floating, integer)

    def _comparison_kind(self, node: cst.Comparison, names: dict[str, TensorKind]) -> TensorKind:
        if len(node.comparisons) != 1:
            return NOT_TENSOR  # chained: Python `and` of comparisons
        target = node.comparisons[0]
        if isinstance(target.operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn)):
            return NOT_TENSOR
        left = self._value(self._kind(node.left, names))
        right = self._value(self._kind(target.comparator, names))
        if not (left.tensor or right.tensor):
            return NOT_TENSOR
        scalar = (left.scalar or self._is_number(node.left)) and (
            right.scalar or self._is_number(target.comparator)
        )
        return TensorKind(True, scalar, boolean=True)

    def _call_kind(self, node: cst.Call, names: dict[str, TensorKind]) -> TensorKind:
        qualified = self.resolver.qualified_name(node.func)
        if qualified == "tensorflow.cond":
            return self._cond_kind(node, names)
        positional = [a.value for a in node.args if a.keyword is None and a.star == ""]
        if qualified in VARIABLE_CONSTRUCTORS:
            return variable_kind(node, self.resolver, lambda v: self._kind(v, names))
        if qualified is not None and qualified.startswith(DATASET_NAMESPACES):
            return DATASET
        if is_optimizer_constructor(qualified):
            return OPTIMIZER
        if is_metric_constructor(qualified):
            return METRIC
        layer = layer_constructor_kind(node, qualified)
        if layer.layer or layer.several:
            return layer
        if qualified is None and self._kind(node.func, names).layer:
            # `self.dense(x)`, `layers.Dense(2)(x)`: a layer built to return one tensor.
            multi = any(
                a.keyword is not None and a.keyword.value in MULTI_OUTPUT_KEYWORDS
                for a in node.args
            )
            return NOT_TENSOR if multi else TENSOR
        if qualified is None and isinstance(node.func, cst.Attribute):
            if self._project_result(node.func):
                return TENSOR  # `self.perceptual.distance(y, p)` of a held object
            return self._method_kind(node, names)
        if is_loss_class(qualified):
            keywords = {a.keyword.value for a in node.args if a.keyword is not None}
            return TensorKind(False, loss_object=True, reduces="reduction" not in keywords)
        if isinstance(node.func, cst.Name):
            callee = self._kind(node.func, names)
            if callee.loss_object:
                return TensorKind(True, scalar=callee.reduces, floating=True)
            helper = self._module_function(node.func.value, names)
            if helper is not None:
                return self._helper_result_kind(helper, node.args, names)
        if self._project_result(node.func):
            return TENSOR  # `wasserstein_loss(y, p)` of another module
        if not is_tensor_op(qualified):
            return NOT_TENSOR
        assert qualified is not None
        dtype = dtype_kind(
            node, qualified, positional, self.resolver, lambda v: self._kind(v, names)
        )
        return op_result_kind(
            node,
            qualified,
            positional,
            dtype,
            lambda v: self._kind(v, names).scalar or self._is_number(v),
        )

    def _method_kind(self, node: cst.Call, names: dict[str, TensorKind]) -> TensorKind:
        """`v.read_value()` on a variable is a tensor; `ds.batch(n)` on a
        dataset is a dataset; `m.result()` on a metric is a tensor. Other
        methods: unknown."""
        assert isinstance(node.func, cst.Attribute)
        method = node.func.attr.value
        if method not in VARIABLE_READS and method not in DATASET_METHODS:
            if method in METRIC_RESULTS and self._kind(node.func.value, names).metric:
                return METRIC_RESULTS[method]  # `self.auc.result()`
            if method in OPTIONAL_CHECKS and self._holds_optional(node.func.value):
                return OPTIONAL_CHECKS[method]  # `it.get_next_as_optional().has_value()`
            return NOT_TENSOR
        receiver = self._kind(node.func.value, names)
        if receiver.variable and method in VARIABLE_READS:
            return self._value(receiver)
        if receiver.dataset and method in DATASET_METHODS:
            return DATASET
        return NOT_TENSOR

    def _holds_optional(self, node: cst.BaseExpression) -> bool:
        """A `tf.experimental.Optional` an iterator hands out
        (`iterator.get_next_as_optional()`), or a local name every binding
        of which is one."""
        if isinstance(node, cst.Call):
            return isinstance(node.func, cst.Attribute) and (
                node.func.attr.value in OPTIONAL_MAKERS
            )
        if isinstance(node, cst.Name) and node.value in self._bindings:
            bindings = self._bindings[node.value]
            return bool(bindings) and all(
                value is not None
                and not augmented
                and index is None
                and self._holds_optional(value)
                for value, augmented, index in bindings
            )
        return False


def _branch_bodies(node: cst.If) -> list[cst.BaseSuite] | None:
    """The bodies of an `if`/`elif`/`else` chain, or None when it has no
    `else` (a path then runs none of them)."""
    bodies: list[cst.BaseSuite] = [node.body]
    orelse = node.orelse
    while isinstance(orelse, cst.If):
        bodies.append(orelse.body)
        orelse = orelse.orelse
    if orelse is None:
        return None
    bodies.append(orelse.body)
    return bodies


# The blocks holding a statement, outermost first: (kind, id of the compound
# statement, part): ("if", id, 0) for an `if`'s body and 1 for its `else` or
# `elif`, which exclude each other; ("block", id, n) for the parts of a loop,
# `try` or `match`, which do not.
_Chain = tuple[tuple[str, int, int], ...]
# (name, value, augmented, tuple index, a plain assignment, its blocks)
_Binding = tuple[str, "cst.BaseExpression | None", bool, "int | None", bool, _Chain]


def _child_chain(node: cst.CSTNode, child: cst.CSTNode, chain: _Chain) -> _Chain:
    """The blocks holding `child`, a child of `node` held by `chain`."""
    if isinstance(node, cst.If):
        if child is node.body:
            return (*chain, ("if", id(node), 0))
        if child is node.orelse:
            return (*chain, ("if", id(node), 1))
        return chain
    if isinstance(node, (cst.For, cst.While, cst.Try, cst.TryStar, cst.Match)):
        parts = [c for c in child_nodes(node) if isinstance(c, _BLOCK_PARTS)]
        for position, part in enumerate(parts):
            if child is part:
                return (*chain, ("block", id(node), position))
    return chain


_BLOCK_PARTS = (
    cst.IndentedBlock,
    cst.SimpleStatementSuite,
    cst.ExceptHandler,
    cst.ExceptStarHandler,
    cst.Else,
    cst.Finally,
    cst.MatchCase,
)


def _exclusive(binding: _Chain, statement: _Chain) -> bool:
    """A binding in one branch of an `if` and a statement in the other."""
    for mine, theirs in zip(binding, statement, strict=False):
        if mine != theirs:
            return mine[0] == "if" and mine[1] == theirs[1]
    return False


def _joined_branch_bindings(
    node: cst.If,
) -> list[tuple[str, cst.BaseExpression | None, bool, int | None, bool]]:
    """After an `if`/`else` whose every branch assigns a name at its own top
    level, the name holds one of the branches' values and nothing from before
    (`if dynamic: x = a(x) else: x = b(x)`): the branches' bindings of it
    again, the first replacing what came before, so the meet is over the
    branches alone."""
    bodies = _branch_bodies(node)
    if bodies is None:
        return []
    assigned: set[str] | None = None
    bindings: dict[str, list[tuple[cst.BaseExpression | None, bool, int | None]]] = {}
    for body in bodies:
        here = set()
        for line in getattr(body, "body", ()):
            if isinstance(line, cst.SimpleStatementLine):
                for small in line.body:
                    if isinstance(small, (cst.Assign, cst.AnnAssign)):
                        for target, value, _ in iter_assignments_here(small):
                            here.update(n for n, _, _ in split_target(target, value))
        assigned = here if assigned is None else assigned & here
        for target, value, augmented in iter_assignments(body):
            for name, value_part, index in split_target(target, value):
                bindings.setdefault(name, []).append((value_part, augmented, index))
    joined = []
    for name in sorted(assigned or ()):
        for position, (value, augmented, index) in enumerate(bindings[name]):
            joined.append((name, value, augmented, index, position == 0))
    return joined


def _is_single_index(node: cst.Subscript) -> bool:
    """`x[0]`, `x[-1]`, `x[i]`: one index, not a slice or a tuple of indices."""
    if len(node.slice) != 1:
        return False
    index = node.slice[0].slice
    return isinstance(index, cst.Index) and not isinstance(index.value, (cst.Tuple, cst.Ellipsis))


def _is_single_slice(node: cst.Subscript) -> bool:
    """`x[1:-1]`, `x[:2]`: one slice, which keeps a rank-1 tensor rank 1."""
    return len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Slice)


def module_facts(
    module: cst.Module,
    resolver: NameResolver,
    rebound: Iterable[str],
    objects: Callable[[str], AttributeFacts | None] | None = None,
) -> TensorFacts:
    """Facts for module-level names, the outermost scope every function
    sees: names bound once to a tensor, a variable, a dataset or a Python
    number, and (`objects`) what an object bound once holds. Names the
    project rebinds elsewhere (`global`, another module) are excluded: their
    value depends on when the function is traced."""
    body = [s for s in module.body if not isinstance(s, (cst.FunctionDef, cst.ClassDef))]
    wrapper = cst.FunctionDef(
        name=cst.Name("__module__"),
        params=cst.Parameters(),
        body=cst.IndentedBlock(body=body or [cst.SimpleStatementLine([cst.Pass()])]),
    )
    facts = TensorFacts(wrapper, resolver, excluded=rebound, objects=objects)
    defined: dict[str, list[cst.FunctionDef]] = {}
    for statement in module.body:
        if isinstance(statement, cst.FunctionDef):
            defined.setdefault(statement.name.value, []).append(statement)
    # Helpers defined once and undecorated: a decorator may return anything.
    facts.module_functions = {
        name: defs[0] for name, defs in defined.items() if len(defs) == 1 and not defs[0].decorators
    }
    return facts
