"""Which values outside a function are Python iterators: where a value that
`next(...)` advances comes from.

`next(it)` in traced code runs once, while tracing: a Python iterator
created outside the function (`it = iter([1, 2, 3])` at module level, a
generator object kept on `self`) then advances once per trace, not once per
call, and every call reuses the value of the first trace. An iterator of a
`tf.data.Dataset` (`iter(dataset)`) is different: `next` on it is an op that
runs on every call. So an iterator counts as a Python one only on proof of
where it comes from:

- a generator expression, or a call of a generator function (a `def` whose
  body yields) of the module or of the class (`self.batches()`);
- `iter(...)` of a Python iterable: a list, tuple, set or dict display or
  comprehension, a string, `range(...)`, or a module name bound only to a
  Python container;
- `itertools.count(...)`, or `itertools.cycle(...)` of such an iterable.

`iter(x)` of anything else (a dataset, a parameter, an unknown call) is not
one: a miss, never a false finding.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import libcst as cst

from tfrewrite.facts.bindings import local_bindings, scope_nodes
from tfrewrite.facts.names import NameResolver
from tfrewrite.facts.state import is_container, module_containers
from tfrewrite.facts.walk import iter_nodes

if TYPE_CHECKING:
    from tfrewrite.facts.context import FunctionScope, RuleContext

_DISPLAYS = (
    cst.List,
    cst.Tuple,
    cst.Set,
    cst.Dict,
    cst.ListComp,
    cst.SetComp,
    cst.DictComp,
    cst.SimpleString,
    cst.ConcatenatedString,
)


def is_generator_function(function: cst.FunctionDef) -> bool:
    """Whether calling `function` makes a generator: its own body yields
    (a `yield` in a nested function or lambda does not count)."""
    return any(isinstance(node, cst.Yield) for node in scope_nodes(function.body))


@dataclass(frozen=True)
class IteratorOrigins:
    """What a file's module scope knows: its generator functions (by name),
    its names bound only to Python containers, and its module names bound
    only to Python iterators (with how each was made)."""

    generators: frozenset[str]
    containers: frozenset[str]
    module_iterators: dict[str, str] = field(default_factory=dict)
    # Attribute names the file assigns on something other than `self`
    # (`trainer.batches = iter(dataset)`): what a class keeps there may be
    # replaced from outside, so it is not proven.
    foreign_attributes: frozenset[str] = frozenset()

    def origin(
        self,
        value: cst.BaseExpression | None,
        resolver: NameResolver,
        methods: frozenset[str] = frozenset(),
    ) -> str | None:
        """How `value` makes a Python iterator (`iter([...])`, "a generator
        expression", `batches()`), or None when it is not proven to make one.
        `methods` are the generator methods of the class whose `self` the
        value sees."""
        if isinstance(value, cst.GeneratorExp):
            return "a generator expression"
        if not isinstance(value, cst.Call):
            return None
        func = value.func
        spelled = cst.Module([]).code_for_node(func)
        if isinstance(func, cst.Name) and func.value not in resolver.imports:
            name = func.value
            if name == "iter" and self._python_iterable(value, resolver):
                return f"`{spelled}(...)` of a Python iterable"
            if name in self.generators:
                return f"the generator `{name}(...)`"
            return None
        if (
            isinstance(func, cst.Attribute)
            and isinstance(func.value, cst.Name)
            and func.value.value == "self"
            and func.attr.value in methods
        ):
            return f"the generator `{spelled}(...)`"
        qualified = resolver.qualified_name(func)
        if qualified == "itertools.count":
            return f"`{spelled}(...)`"
        if qualified == "itertools.cycle" and self._python_iterable(value, resolver):
            return f"`{spelled}(...)` of a Python iterable"
        return None

    def _python_iterable(self, call: cst.Call, resolver: NameResolver) -> bool:
        """The one positional argument of `call` is a Python iterable."""
        if len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star:
            return False
        value = call.args[0].value
        if isinstance(value, _DISPLAYS) or is_container(value, resolver):
            return True
        if isinstance(value, cst.Name):
            return value.value in self.containers
        return (
            isinstance(value, cst.Call)
            and isinstance(value.func, cst.Name)
            and value.func.value == "range"
            and "range" not in resolver.imports
        )


def iterator_origins(module: cst.Module, resolver: NameResolver) -> IteratorOrigins:
    """The module's `IteratorOrigins` (one walk of its scope; ask it through
    `RuleContext.module_fact`)."""
    generators = frozenset(
        statement.name.value
        for statement in module.body
        if isinstance(statement, cst.FunctionDef) and is_generator_function(statement)
    )
    origins = IteratorOrigins(generators, frozenset(module_containers(module, resolver)))
    # Every binding of the name must make a Python iterator.
    bindings = _module_bindings(module)
    iterators: dict[str, str] = {}
    for name, values in bindings.items():
        made = [origins.origin(value, resolver) for value in values]
        if made and all(made):
            iterators[name] = str(made[0])
    foreign = frozenset(
        target.attr.value
        for node in iter_nodes(module)
        if isinstance(node, (cst.Assign, cst.AnnAssign, cst.AugAssign))
        for target in (_targets(node) if not isinstance(node, cst.AugAssign) else [node.target])
        if isinstance(target, cst.Attribute)
        and not (isinstance(target.value, cst.Name) and target.value.value == "self")
    )
    return IteratorOrigins(origins.generators, origins.containers, iterators, foreign)


def _module_bindings(module: cst.Module) -> dict[str, list[cst.BaseExpression | None]]:
    """Every binding of each module name at module level (as for a
    function's locals). A name some function declares `global` gets an
    unknown binding too: that function may rebind it to anything."""
    # `local_bindings` reads a function's body: the module's statements as one
    # (nested functions and classes are skipped as they are there).
    wrapper = cst.FunctionDef(
        name=cst.Name("_module"),
        params=cst.Parameters(),
        body=cst.IndentedBlock(body=list(module.body)),
    )
    bindings = local_bindings(wrapper)
    for node in iter_nodes(module):
        if isinstance(node, cst.Global):
            for item in node.names:
                bindings.setdefault(item.name.value, []).append(None)
    return bindings


def class_iterators(
    cls: cst.ClassDef, origins: IteratorOrigins, resolver: NameResolver
) -> dict[str, str]:
    """`self.<attr>` that every assignment in `cls`'s methods binds to a
    Python iterator (`self.batches = self._batches()`): attr -> how it was
    made. An attribute assigned anything else, or assigned from a tuple,
    is not one."""
    methods = frozenset(
        item.name.value
        for item in cls.body.body
        if isinstance(item, cst.FunctionDef) and is_generator_function(item)
    )
    made: dict[str, str | None] = {}
    for statement in cls.body.body:
        if not isinstance(statement, cst.FunctionDef):
            continue
        for node in iter_nodes(statement.body):
            targets: list[tuple[cst.BaseExpression, cst.BaseExpression | None]] = []
            if isinstance(node, cst.Assign):
                targets = [(t.target, node.value) for t in node.targets]
            elif isinstance(node, cst.AnnAssign):
                targets = [(node.target, node.value)]
            elif isinstance(node, cst.AugAssign):
                targets = [(node.target, None)]
            elif isinstance(node, cst.WithItem) and node.asname is not None:
                targets = [(node.asname.name, None)]
            for target, value in targets:
                for attr, bound in _self_attributes(target, value):
                    how = origins.origin(bound, resolver, methods)
                    made[attr] = how if made.get(attr, how) is not None else None
    return {
        attr: how
        for attr, how in made.items()
        if how is not None and attr not in origins.foreign_attributes
    }


def _targets(node: cst.Assign | cst.AnnAssign) -> list[cst.BaseExpression]:
    if isinstance(node, cst.Assign):
        return [t.target for t in node.targets]
    return [node.target]


def _self_attributes(
    target: cst.BaseExpression, value: cst.BaseExpression | None
) -> list[tuple[str, cst.BaseExpression | None]]:
    if (
        isinstance(target, cst.Attribute)
        and isinstance(target.value, cst.Name)
        and target.value.value == "self"
    ):
        return [(target.attr.value, value)]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [pair for e in target.elements for pair in _self_attributes(e.value, None)]
    return []


def enclosing_iterator(
    scope: cst.FunctionDef, name: str, origins: IteratorOrigins, resolver: NameResolver
) -> str | None:
    """How an enclosing function `scope` makes its local `name` a Python
    iterator, when every binding there does."""
    values = local_bindings(scope).get(name)
    if not values:
        return None
    made = [origins.origin(value, resolver) for value in values]
    return made[0] if all(made) else None


def outside_iterator(
    ctx: RuleContext, function: FunctionScope, value: cst.BaseExpression, local: set[str]
) -> str | None:
    """How `value`, read in `function`, is a Python iterator made outside it
    (`it` for a module-level `it = iter([1, 2, 3])`, `self.batches` for a
    generator object the class keeps), or None. `local` are the names that
    belong to the call (parameters and locals not declared `global`): an
    iterator the function makes itself is made afresh on every trace."""
    resolver = ctx.names
    origins = ctx.module_fact(iterator_origins, lambda module: iterator_origins(module, resolver))
    if isinstance(value, cst.Name):
        name = value.value
        if name in local or name in ctx.index.imports:
            return None
        binder = function.enclosing_binder(name)
        if binder is not None:
            return enclosing_iterator(binder.node, name, origins, resolver)
        return origins.module_iterators.get(name)
    if (
        isinstance(value, cst.Attribute)
        and isinstance(value.value, cst.Name)
        and value.value.value == "self"
    ):
        owner = ctx.class_of(function)
        if owner is None:
            return None
        if any(name not in ctx.index.classes for name in ctx.index.named_attribute_writes):
            # Some object's attribute is assigned through a plain name
            # (`trainer.batches = iter(dataset)`), maybe in code `check`
            # does not parse (pass 1 saw the whole file): not proven.
            return None
        class_name, node = owner
        attr = value.attr.value
        if any(
            attr == made
            for inner in iter_nodes(function.node.body, into_functions=False)
            if isinstance(inner, (cst.Assign, cst.AnnAssign))
            for target in _targets(inner)
            for made, _ in _self_attributes(target, None)
        ):
            return None  # made afresh by the function itself, on every call as in every trace
        attributes = ctx.module_fact(
            (class_iterators, class_name),
            lambda module: class_iterators(node, origins, resolver),
        )
        return attributes.get(attr)
    return None
