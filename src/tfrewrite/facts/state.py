"""Python state that traced code can see: what lives outside a function and
changes between its calls.

Tracing reads Python state once. A value that changes later (a module dict
entry, an attribute a training loop rebinds, a closure variable a loop
rebinds) is frozen in the graph; a Python container mutated from traced code
is mutated once per trace. The TFR2xx rules ask these questions here, on
LibCST nodes, for the few classes and functions they inspect.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import libcst as cst

from tfrewrite.facts.bindings import all_params, bound_names, iter_assignments, split_target
from tfrewrite.facts.call_arguments import bind_arguments
from tfrewrite.facts.names import NameResolver, dotted_name
from tfrewrite.facts.prefilters import MUTATING_METHODS
from tfrewrite.facts.tensor_kinds import is_python_float, is_python_int, is_tensor_op
from tfrewrite.facts.vocabulary import SETUP_METHODS, is_setup_method
from tfrewrite.facts.walk import (
    child_nodes,
    iter_nodes,
    iter_small_statements,
    statement_children,
)

# Calls that build a Python container.
CONTAINER_CONSTRUCTORS = frozenset(
    {
        "list",
        "dict",
        "set",
        "collections.defaultdict",
        "collections.OrderedDict",
        "collections.deque",
        "collections.Counter",
    }
)


def is_plain_value(node: cst.BaseExpression | None, resolver: NameResolver) -> bool:
    """A value whose contents tracing copies into the graph: a literal, an
    arithmetic result, an item, a NumPy or TensorFlow result, or unknown
    (an element of a tuple assignment). Not an object the graph keeps by
    reference (a model, a layer, a variable, a container of them)."""
    if node is None:
        return True
    if isinstance(
        node,
        (
            cst.Integer,
            cst.Float,
            cst.SimpleString,
            cst.ConcatenatedString,
            cst.FormattedString,
            cst.BinaryOperation,
            cst.UnaryOperation,
            cst.Subscript,
            cst.Comparison,
        ),
    ):
        return True
    if isinstance(node, cst.Name):
        return node.value in ("True", "False")
    if isinstance(node, cst.Call):
        qualified = resolver.qualified_name(node.func)
        if qualified is None:  # not imported: a builtin or a local function
            return isinstance(node.func, cst.Name) and node.func.value in _PLAIN_BUILTINS
        if qualified.startswith(("numpy.", "math.", "random.")):
            return True
        return is_tensor_op(qualified)
    return False


# Builtins whose result is a plain Python value (`k = float(i)`).
_PLAIN_BUILTINS = frozenset({"float", "int", "bool", "round", "abs", "str", "len"})


def is_container(node: cst.BaseExpression | None, resolver: NameResolver) -> bool:
    """A list/dict/set display or comprehension, or a container constructor."""
    if isinstance(node, (cst.List, cst.Dict, cst.Set, cst.ListComp, cst.DictComp, cst.SetComp)):
        return True
    if isinstance(node, cst.Call):
        func = node.func
        if isinstance(func, cst.Name) and func.value in ("list", "dict", "set"):
            return True
        return resolver.qualified_name(func) in CONTAINER_CONSTRUCTORS
    return False


def setup_only_methods(cls: cst.ClassDef, module: cst.Module) -> set[str]:
    """Methods the set-up methods (`__init__`, a layer's `build`, which
    Keras runs once before the first `call`: `SETUP_METHODS`) call on
    `self` that nothing else in the module calls (`self.reset_noise(dim)`
    only while constructing or building): what they assign is set up once,
    like `__init__`'s own assignments. A `self.<method>(...)` in another
    class reaches this one only when that class derives from it (by name):
    two models each building their layers in their own `make_layers` do
    not call each other's."""
    setup_nodes = [
        s for s in cls.body.body if isinstance(s, cst.FunctionDef) and s.name.value in SETUP_METHODS
    ]
    in_init = {
        node.func.attr.value
        for statement in setup_nodes
        for node in iter_nodes(statement.body)
        if isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and isinstance(node.func.value, cst.Name)
        and node.func.value.value == "self"
    }
    if not in_init:
        return set()
    called_elsewhere: set[str] = set()
    init_nodes = {id(s) for s in setup_nodes}
    own = cls.name.value
    stack: list[tuple[cst.CSTNode, bool]] = [(module, True)]
    while stack:
        node, self_is_ours = stack.pop()
        if id(node) in init_nodes:
            continue
        if isinstance(node, cst.ClassDef) and node is not cls:
            self_is_ours = any(dotted_name(base.value) == own for base in node.bases)
        if isinstance(node, cst.Attribute) and node.attr.value in in_init:
            through_self = isinstance(node.value, cst.Name) and node.value.value == "self"
            if self_is_ours or not through_self:
                called_elsewhere.add(node.attr.value)
        stack.extend((child, self_is_ours) for child in child_nodes(node))
    return in_init - called_elsewhere


@dataclass
class AttributeWrites:
    """How the methods of one class write `self.<attr>`: per attribute, the
    methods that assign it, those that update it in place (`+=`), and
    whether every assignment makes a Python container."""

    assigned: dict[str, set[str]] = field(default_factory=dict)
    augmented: dict[str, set[str]] = field(default_factory=dict)
    containers: set[str] = field(default_factory=set)
    # Attributes that methods other than set-up ones assign only plain values
    # (`is_plain_value`): state whose value tracing freezes.
    plain: set[str] = field(default_factory=set)


def attribute_writes(
    cls: cst.ClassDef, resolver: NameResolver, setup: frozenset[str] | set[str] = frozenset()
) -> AttributeWrites:
    """How `cls`'s methods write `self` attributes. `setup` names methods,
    besides the ones `is_setup_method` knows, that only set the object up
    (`setup_only_methods`): they are reported as `__init__`."""
    writes = AttributeWrites()
    not_container: set[str] = set()
    not_plain: set[str] = set()
    # A setter's parameter (`def set_epoch(self, value): self.epoch = value`)
    # holds what the set-up gave the attribute: a number stays a number.
    set_up_plain: set[str] = set()
    from_parameters: set[str] = set()
    plain_results = _methods_returning_plain_values(cls, resolver)
    handed_back = _parameters_handed_back(cls)
    for statement in cls.body.body:
        if not isinstance(statement, cst.FunctionDef):
            continue
        method = "__init__" if statement.name.value in setup else statement.name.value
        parameters = {p.name.value for p in statement.params.params[1:]}
        counters = _loop_counters(statement)
        plain_locals: set[str] | None = None  # worked out when a write needs it
        for attr in _counted_attributes(statement):
            # `for self.epoch in range(n)`: rebound to a number each iteration.
            writes.assigned.setdefault(attr, set()).add(method)
            not_container.add(attr)
            if not is_setup_method(method):
                writes.plain.add(attr)
        for small in iter_small_statements(statement.body, into_functions=True):
            unchanged = _given_back(small, handed_back)
            for attr, value, augmented in self_writes(small):
                if attr in unchanged:
                    continue  # `self.x0, loss = self.step(self.x0)`: the same object
                if augmented:
                    writes.augmented.setdefault(attr, set()).add(method)
                    continue
                writes.assigned.setdefault(attr, set()).add(method)
                if is_container(value, resolver):
                    writes.containers.add(attr)
                else:
                    not_container.add(attr)
                if is_setup_method(method):
                    if value is not None and (is_python_int(value) or is_python_float(value)):
                        set_up_plain.add(attr)
                elif isinstance(value, cst.Name) and value.value in parameters:
                    from_parameters.add(attr)
                else:
                    plain = (
                        is_plain_value(value, resolver)
                        or (value is not None and _own_method_called(value) in plain_results)
                        or (isinstance(value, cst.Name) and value.value in counters)
                    )
                    if not plain and isinstance(value, cst.Name):
                        if plain_locals is None:
                            plain_locals = _plain_locals(statement, resolver)
                        plain = value.value in plain_locals
                    (writes.plain if plain else not_plain).add(attr)
    writes.containers -= not_container
    writes.plain |= from_parameters & set_up_plain
    writes.plain -= not_plain | (from_parameters - set_up_plain)
    return writes


def _plain_locals(method: cst.FunctionDef, resolver: NameResolver) -> set[str]:
    """The locals of `method` every binding of which gives a plain value
    (`is_plain_value`): `points = np.random.rand(n, 2)`, or an element of a
    tuple a call returns (`points, targets = sampler.draw()`), which is as
    unknown as `self.a, self.b = sampler.draw()`. A loop variable, a `with`
    target or an augmented one is not known to be one."""
    plain: set[str] = set()
    other: set[str] = set()
    for target, value, augmented in iter_assignments(method.body):
        for name, part, index in split_target(target, value):
            known = not (augmented or value is None or isinstance(value, cst.For)) and (
                index is not None or is_plain_value(part, resolver)
            )
            (plain if known else other).add(name)
    return plain - other


@dataclass(frozen=True)
class _HandedBack:
    """A method, whether it is static (no `self` to bind), and which
    parameters it hands back unchanged: position in the tuple every
    `return` gives (None: the whole value) -> parameter."""

    method: cst.FunctionDef
    static: bool
    positions: dict[int | None, str]


def _parameters_handed_back(cls: cst.ClassDef) -> dict[str, _HandedBack]:
    """Methods of `cls` that hand a parameter back as they got it, for
    parameters the method never rebinds (a step that updates the variable
    `x0` in place and ends with `return x0, x, loss`)."""
    found: dict[str, _HandedBack] = {}
    for statement in cls.body.body:
        if not isinstance(statement, cst.FunctionDef):
            continue
        static = any(
            isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod"
            for d in statement.decorators
        )
        params = [p.name.value for p in all_params(statement.params)][0 if static else 1 :]
        kept = set(params) - bound_names(statement.body)
        returns = [
            node.value
            for node in iter_nodes(statement.body, into_functions=False)
            if isinstance(node, cst.Return)
        ]
        if not returns or any(value is None for value in returns):
            continue
        shapes = []
        for value in returns:
            if isinstance(value, cst.Tuple):
                items = [e.value if isinstance(e, cst.Element) else None for e in value.elements]
                shapes.append({i: _name(item) for i, item in enumerate(items)})
            else:
                shapes.append({None: _name(value)})
        same = {
            position: name
            for position, name in shapes[0].items()
            if name in kept and all(shape.get(position) == name for shape in shapes[1:])
        }
        if same:
            found[statement.name.value] = _HandedBack(statement, static, same)
    return found


def _name(node: cst.BaseExpression | None) -> str | None:
    return node.value if isinstance(node, cst.Name) else None


def _given_back(small: cst.BaseSmallStatement, handed_back: dict[str, _HandedBack]) -> set[str]:
    """The `self` attributes an assignment gives back their own value: a
    method of the class called with `self.<attr>` for a parameter it hands
    back unchanged, at the place the attribute is assigned
    (`self.x0, x, loss = self.train_step(self.x0, n)`)."""
    if not (isinstance(small, cst.Assign) and len(small.targets) == 1):
        return set()
    call = small.value
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)):
        return set()
    method = call.func.attr.value if self_attribute_name(call.func) is not None else None
    known = handed_back.get(method) if method is not None else None
    if known is None:
        return set()
    args = call.args if known.static else [cst.Arg(call.func.value), *call.args]
    passed = {
        param: self_attribute_name(bound.value)
        for param, bound in bind_arguments(known.method, args).items()
        if bound.passed and bound.value is not None
    }
    target = small.targets[0].target
    items: dict[int | None, cst.BaseExpression] = (
        {i: e.value for i, e in enumerate(target.elements)}
        if isinstance(target, (cst.Tuple, cst.List))
        else {None: target}
    )
    given_back = set()
    for position, param in known.positions.items():
        item = items.get(position)
        attr = self_attribute_name(item) if item is not None else None
        if attr is not None and passed.get(param) == attr:
            given_back.add(attr)
    return given_back


def reads_self_attribute(node: cst.CSTNode, attr: str) -> bool:
    """Whether `node` reads `self.<attr>` anywhere in it."""
    return any(self_attribute_name(n) == attr for n in iter_nodes(node))  # type: ignore[arg-type]


def reads_before_writing(function: cst.FunctionDef, attr: str) -> bool:
    """Whether the first statement of `function` touching `self.<attr>`
    reads it (what an earlier call, or another method, left there) rather
    than binding it."""
    for statement in iter_small_statements(function.body, into_functions=False):
        if isinstance(statement, cst.Assign):
            if reads_self_attribute(statement.value, attr):
                return True
            if any(self_attribute_name(t.target) == attr for t in statement.targets):
                return False
        elif reads_self_attribute(statement, attr):
            return True
    return False


def self_attribute_name(node: cst.BaseExpression) -> str | None:
    """`attr` for `self.attr`; None for anything else."""
    if (
        isinstance(node, cst.Attribute)
        and isinstance(node.value, cst.Name)
        and node.value.value == "self"
    ):
        return node.attr.value
    return None


def _methods_returning_plain_values(cls: cst.ClassDef, resolver: NameResolver) -> set[str]:
    """Methods of `cls` every `return` of which gives a plain value
    (`is_plain_value`: `return self.final - (...) * math.cos(...)`): what
    `self.tau = self.update_tau()` stores is plain too."""
    found = set()
    for statement in cls.body.body:
        if not isinstance(statement, cst.FunctionDef):
            continue
        returns = [
            node
            for node in iter_nodes(statement.body, into_functions=False)
            if isinstance(node, cst.Return)
        ]
        if returns and all(
            r.value is not None and is_plain_value(r.value, resolver) for r in returns
        ):
            found.add(statement.name.value)
    return found


def _counting(loop: cst.For) -> cst.BaseExpression | None:
    """The target a `for` binds to a number: `i` of `for i in range(n)`,
    and of `for i, batch in enumerate(data)`; None for other loops."""
    iterable = loop.iter
    if not (isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name)):
        return None
    if iterable.func.value == "range":
        return loop.target
    if iterable.func.value == "enumerate" and isinstance(loop.target, cst.Tuple):
        return loop.target.elements[0].value if loop.target.elements else None
    return None


def _loop_counters(method: cst.FunctionDef) -> set[str]:
    """Names the method's loops bind to numbers (`for e in range(epochs)`)."""
    return {
        target.value
        for node in iter_nodes(method.body)
        if isinstance(node, cst.For) and isinstance(target := _counting(node), cst.Name)
    }


def _counted_attributes(method: cst.FunctionDef) -> set[str]:
    """`self` attributes the method's loops count with (`for self.epoch in
    range(self.epochs)`): rebound to a number on every iteration."""
    return {
        attr
        for node in iter_nodes(method.body)
        if isinstance(node, cst.For) and (target := _counting(node)) is not None
        for attr, _, _ in _self_targets(target, None)
    }


def self_writes(
    small: cst.BaseSmallStatement,
) -> Iterator[tuple[str, cst.BaseExpression | None, bool]]:
    """(attr, value or None, augmented) for each `self.<attr>` a small
    statement writes: `self.x = v`, `self.x += v`, `a, self.x = f()` (value
    unknown)."""
    if isinstance(small, cst.Assign):
        for target in small.targets:
            yield from _self_targets(target.target, small.value)
    elif isinstance(small, cst.AnnAssign) and small.value is not None:
        yield from _self_targets(small.target, small.value)
    elif isinstance(small, cst.AugAssign):
        for attr, _, _ in _self_targets(small.target, None):
            yield attr, None, True


def _self_targets(
    target: cst.BaseExpression, value: cst.BaseExpression | None
) -> Iterator[tuple[str, cst.BaseExpression | None, bool]]:
    if (
        isinstance(target, cst.Attribute)
        and isinstance(target.value, cst.Name)
        and target.value.value == "self"
    ):
        yield target.attr.value, value, False
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            # `a, self.x = f()`: assigned, value unknown.
            yield from _self_targets(element.value, None)


def fresh_self_containers(function: cst.FunctionDef, resolver: NameResolver) -> set[str]:
    """`self.<attr>` that `function` itself sets to a new container: appends
    to it afterwards build a per-trace value (a list of sublayers in
    `build`), not outside state."""
    found: set[str] = set()
    for small in iter_small_statements(function.body, into_functions=False):
        for attr, value, augmented in self_writes(small):
            if not augmented and is_container(value, resolver):
                found.add(attr)
    return found


def reset_self_containers(
    function: cst.FunctionDef, cls: cst.ClassDef, resolver: NameResolver
) -> set[str]:
    """`self.<attr>` that `function` sets to a new container on every call
    before touching it: itself (`fresh_self_containers`), or through an own
    method it calls as a statement of its body first (`self.reset_losses()`
    doing `self.losses = {...}`): what it writes there afterwards is this
    call's, not state kept between calls."""
    found = fresh_self_containers(function, resolver)
    methods = {item.name.value: item for item in cls.body.body if isinstance(item, cst.FunctionDef)}
    touched: set[str] = set()
    for statement in function.body.body:
        small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) else None
        called = _own_method_called(small.value) if isinstance(small, cst.Expr) else None
        if called in methods:
            found |= fresh_self_containers(methods[called], resolver) - touched
        touched |= {
            node.attr.value
            for node in iter_nodes(statement)
            if isinstance(node, cst.Attribute)
            and isinstance(node.value, cst.Name)
            and node.value.value == "self"
        }
    return found


def _own_method_called(node: cst.BaseExpression) -> str | None:
    """`m` for a call `self.m(...)`."""
    if (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and isinstance(node.func.value, cst.Name)
        and node.func.value.value == "self"
    ):
        return node.func.attr.value
    return None


def scratch_self_containers(
    cls: cst.ClassDef, method: str, resolver: NameResolver, _seen: frozenset[str] = frozenset()
) -> set[str]:
    """`self.<attr>` that every method of `cls` calling `self.<method>(...)`
    sets to a new container first (`self._seen = Counter()`, then the helper
    fills it), itself or through its own callers: scratch state of that call,
    built afresh each time, not state kept between calls. Empty when no
    method of the class calls it."""
    callers = [
        statement
        for statement in cls.body.body
        if isinstance(statement, cst.FunctionDef)
        and statement.name.value != method
        and statement.name.value not in _seen
        and any(_calls_own_method(node, method) for node in iter_nodes(statement.body))
    ]
    if not callers:
        return set()
    found: set[str] | None = None
    for caller in callers:
        fresh = fresh_self_containers(caller, resolver)
        fresh |= scratch_self_containers(cls, caller.name.value, resolver, _seen | {method})
        found = fresh if found is None else found & fresh
    return found or set()


def _calls_own_method(node: cst.CSTNode, method: str) -> bool:
    return isinstance(node, cst.Call) and _own_method_called(node) == method


def module_containers(module: cst.Module, resolver: NameResolver) -> set[str]:
    """Module-level names bound to a Python container (and to nothing else)."""
    bound: dict[str, bool] = {}
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Assign):
                targets = [t.target for t in small.targets]
                value: cst.BaseExpression | None = small.value
            elif isinstance(small, cst.AnnAssign):
                targets, value = [small.target], small.value
            else:
                continue
            for target, part in _unpacked(targets, value):
                known = bound.get(target.value, True)
                bound[target.value] = known and is_container(part, resolver)
    return {name for name, container in bound.items() if container}


def _unpacked(
    targets: list[cst.BaseAssignTargetExpression], value: cst.BaseExpression | None
) -> list[tuple[cst.Name, cst.BaseExpression | None]]:
    """Each name an assignment binds, with the value it gets: `pool_a,
    pool_b = [], []` binds each to its own list; a name unpacked from
    anything else gets an unknown value (None)."""
    pairs: list[tuple[cst.Name, cst.BaseExpression | None]] = []
    for target in targets:
        if isinstance(target, cst.Name):
            pairs.append((target, value))
        elif isinstance(target, (cst.Tuple, cst.List)):
            elements = [e.value for e in target.elements]
            values = (
                [e.value for e in value.elements]
                if isinstance(value, (cst.Tuple, cst.List))
                and len(value.elements) == len(elements)
                and not any(isinstance(e, cst.StarredElement) for e in value.elements)
                else [None] * len(elements)
            )
            pairs += [
                (name, part)
                for name, part in zip(elements, values, strict=True)
                if isinstance(name, cst.Name)
            ]
    return pairs


def in_place_writes(root: cst.CSTNode) -> dict[str, str]:
    """Names whose items `root` changes in place, in any function, and how
    (`CONFIG["margin"] = 0.5`, `del CACHE[k]`, `CONFIG.update(margin=0.5)`):
    a container changed between calls. A mutating method counts as a
    statement of its own (`cfg.update(...)`); its result used in an
    expression (`x = queue.pop()`) is left to TFR202."""
    found: dict[str, str] = {}
    for _, name, method in in_place_write_statements(root, into_functions=True):
        found.setdefault(name, f"`{name}.{method}(...)`" if method else f"`{name}[...] = ...`")
    return found


def in_place_write_statements(
    root: cst.CSTNode, into_functions: bool
) -> Iterator[tuple[cst.BaseSmallStatement, str, str | None]]:
    """(statement, name, method) for each statement of `root` that changes
    the items of a name in place: `name[k] = v`, `name[k] += v`, `del
    name[k]` (method None), or a mutating method called as a statement
    (`name.update(...)`: "update")."""
    for small in iter_small_statements(root, into_functions=into_functions):
        targets: list[cst.BaseExpression] = []
        if isinstance(small, cst.Assign):
            targets = [t.target for t in small.targets]
        elif isinstance(small, (cst.AugAssign, cst.AnnAssign)):
            targets = [small.target]
        elif isinstance(small, cst.Del):
            targets = [small.target]
        elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            func = small.value.func
            if (
                isinstance(func, cst.Attribute)
                and isinstance(func.value, cst.Name)
                and func.attr.value in MUTATING_METHODS
            ):
                yield small, func.value.value, func.attr.value
        for target in targets:
            if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
                yield small, target.value.value, None


def settled_before(function: cst.FunctionDef, nested: cst.FunctionDef) -> set[str]:
    """Names `function`'s own body binds only before the statement defining
    `nested`, and never in a loop: however often they are rebound (a dataset
    size set once from flags, then from the dataset builder), every call of
    `nested`, and so its first trace, sees their final value."""
    bound: set[str] = set()
    unsettled: set[str] = set()
    passed = False

    def visit(node: cst.CSTNode, in_loop: bool) -> None:
        nonlocal passed
        if node is nested:
            passed = True
            return
        if node is not function.body and isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            return
        names: list[str] = []
        if isinstance(node, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            for small in node.body:
                if isinstance(small, cst.Assign):
                    names += [
                        t.target.value for t in small.targets if isinstance(t.target, cst.Name)
                    ]
                elif isinstance(small, (cst.AugAssign, cst.AnnAssign)) and isinstance(
                    small.target, cst.Name
                ):
                    names.append(small.target.value)
        elif isinstance(node, cst.For) and isinstance(node.target, cst.Name):
            names.append(node.target.value)
            unsettled.add(node.target.value)
        bound.update(names)
        if in_loop or passed:
            unsettled.update(names)
        loop = in_loop or isinstance(node, (cst.For, cst.While))
        for child in statement_children(node):
            visit(child, loop)

    visit(function.body, False)
    return bound - unsettled


def rebound_in_loops(function: cst.FunctionDef, resolver: NameResolver) -> set[str]:
    """Names `function`'s own body binds inside a loop or more than once,
    each time to a plain value (`is_plain_value`): a nested function that
    reads one sees the value of its first trace. Walks statements only."""
    objects: set[str] = set()
    counts: dict[str, int] = {}
    looped: set[str] = set()
    stack: list[tuple[cst.CSTNode, bool]] = [(function.body, False)]
    while stack:
        node, in_loop = stack.pop()
        if isinstance(node, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            for small in node.body:
                names: list[str] = []
                if isinstance(small, cst.Assign):
                    names = [
                        t.target.value for t in small.targets if isinstance(t.target, cst.Name)
                    ]
                    if not is_plain_value(small.value, resolver):
                        objects.update(names)
                elif isinstance(small, (cst.AugAssign, cst.AnnAssign)) and isinstance(
                    small.target, cst.Name
                ):
                    names = [small.target.value]
                for name in names:
                    counts[name] = counts.get(name, 0) + 1
                    if in_loop:
                        looped.add(name)
            continue
        if node is not function.body and isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            continue
        if isinstance(node, cst.For) and isinstance(node.target, cst.Name):
            looped.add(node.target.value)
        loop = in_loop or isinstance(node, (cst.For, cst.While))
        stack.extend((child, loop) for child in statement_children(node))
    return (looped | {name for name, count in counts.items() if count > 1}) - objects
