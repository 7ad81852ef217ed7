"""Python state a traced function reads that changes between its calls.

Tracing reads Python values once and bakes them into the graph. A module
name the module rebinds (a flag, a number, a module-level loop variable), the
items of a module dict changed in place, a `self` attribute another method
rebinds or counts up, a counter of an object the class holds
(`self.memory.mem_cntr`), a variable an enclosing function's loop rebinds:
each is frozen at the first trace. TFR201 reports these reads; TFR302 lists
them as reasons a train step cannot simply be decorated.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from tfrewrite.facts.bindings import bound_names, local_names, scope_nodes
from tfrewrite.facts.class_dispatch import methods_reached, own_methods_called
from tfrewrite.facts.context import FunctionScope, RuleContext
from tfrewrite.facts.index_records import ModuleIndex
from tfrewrite.facts.keras_names import is_keras_model_class
from tfrewrite.facts.module_constants import module_literals
from tfrewrite.facts.names import NameResolver
from tfrewrite.facts.prefilters import MUTATING_METHODS
from tfrewrite.facts.setup_writes import binds_before_use
from tfrewrite.facts.state import (
    AttributeWrites,
    attribute_writes,
    in_place_writes,
    is_plain_value,
    module_containers,
    rebound_in_loops,
    settled_before,
    setup_only_methods,
)
from tfrewrite.facts.vocabulary import is_setup_method
from tfrewrite.facts.walk import iter_with_ancestors, statement_children

# How pass 1 describes a module name a module-level loop rebinds.
LOOP_REBOUND = "rebound in a module-level loop"


def _is_read(node: cst.Name, parent: cst.CSTNode | None) -> bool:
    """A `Name` that reads a variable (not an attribute, keyword, or binding)."""
    if parent is None:
        return True
    if isinstance(parent, cst.Attribute) and parent.attr is node:
        return False
    if isinstance(parent, cst.Arg) and parent.keyword is node:
        return False
    return not isinstance(
        parent,
        (
            cst.AssignTarget,
            cst.Param,
            cst.FunctionDef,
            cst.ClassDef,
            cst.ImportAlias,
            cst.AsName,
            cst.NameItem,
        ),
    )


@dataclass(frozen=True)
class FrozenRead:
    """A read of Python state that tracing freezes: `name` as written
    (`lr_scale`, `self.scale`, `self.memory.mem_cntr`) and how it changes."""

    node: cst.CSTNode
    name: str
    how: str
    # Called (`self.teacher(x)`): the object held at the first trace is the
    # one the graph runs.
    called: bool = False


class FrozenState:
    """The Python state of one module that changes between calls, computed
    once per module; `reads(function)` finds what a function reads of it."""

    def __init__(self, ctx: RuleContext) -> None:
        self.ctx = ctx
        # Which module names are rebound is a pass-1 fact; only literal
        # values (flags, numbers, strings) are frozen state worth reporting,
        # and plain values a module-level loop rebinds (`lr_scale = 1.0 /
        # (epoch + 1)` in the epoch loop).
        rebound = ctx.index.rebound_module_names
        literals = module_literals(ctx.module)
        mutable = {name: rebound[name] for name in literals.literal_names() if name in rebound}
        # A name every binding of which restates the same literal (`num_classes
        # = 10` in a notebook's first cell and again in a later section) is
        # bound more than once, yet never to another value: nothing is frozen.
        for name in literals.constants():
            if mutable.get(name) == "assigned more than once":
                del mutable[name]
        if any(how == LOOP_REBOUND for how in rebound.values()):
            for name in _loop_plain_names(ctx.module, ctx.names):
                if rebound.get(name) == LOOP_REBOUND:
                    mutable.setdefault(name, LOOP_REBOUND)
        changed_items = in_place_writes(ctx.module)
        for name in module_containers(ctx.module, ctx.names) & changed_items.keys():
            mutable.setdefault(name, f"its items are changed with {changed_items[name]}")
        self.mutable = mutable
        # Pass 1 knows whether the file assigns an attribute of a name at all.
        self.rebound_attributes = (
            _rebound_dotted_attributes(ctx.module, ctx.names)
            if ctx.index.named_attribute_writes
            else {}
        )
        self._sections = _Sections(ctx.module)
        self._writes: dict[str, tuple[AttributeWrites, set[str]]] = {}

    def reads(self, function: FunctionScope) -> Iterator[FrozenRead]:
        """The first read of each piece of changing state in `function`'s own
        body (nested functions are scopes of their own)."""
        ctx = self.ctx
        traced = function.runs_traced
        # `Dataset.map(f)` traces `f` afresh on every `.map` call, with the
        # values of that moment: a script that sets a module value again and
        # maps again (a notebook's next section) freezes nothing. State that
        # changes while one pipeline is iterated (an attribute counted up per
        # epoch, a name a loop rebinds) is still read only once.
        mapped = traced is not None and traced.reason.startswith("given to `Dataset.")
        # A name an enclosing function binds is that function's variable, not
        # the module's: a nested `show()` reading the `global_step` its
        # traced `train` counts up reads no module state of that name.
        shadowed = _enclosing_locals(function)
        frozen = {
            name: how
            for name, how in self.mutable.items()
            if name not in shadowed
            and not (mapped and how == "assigned more than once")
            and not _settled_before_first_call(ctx, function, name)
            and not self._sections.settled(function, name, how)
        }
        parent = function.parent
        if parent is not None and parent.runs_traced is None:
            settled = settled_before(parent.node, function.node)
            settled |= _bound_by_loops_around(parent.node, function.node)
            for name in rebound_in_loops(parent.node, ctx.names) - settled:
                frozen[name] = f"a variable of `{parent.qualname}` it rebinds"
        attributes = self._rebound_attributes(function)
        # Set by a Keras callback between the steps `fit` runs: an object set
        # there (a new teacher model) is one the traced step never calls.
        # Objects other methods set are set up before use.
        swapped = (
            attributes.keys() & ctx.index.callback_model_writes.keys() if attributes else set()
        )
        held = self._held_state(function)
        dotted = {
            name: how
            for name, how in self.rebound_attributes.items()
            if how != f"rebound in `{function.qualname}`"  # its own write: TFR202's
        }
        imported = ctx.index.rebound_imports
        if imported:  # `cfg.SCALE` as spelled here, for `config.SCALE` the project rebinds
            for alias, target in ctx.names.imports.items():
                prefix = target + "."
                for name, how in imported.items():
                    if name.startswith(prefix) and "." not in name[len(prefix) :]:
                        dotted.setdefault(f"{alias}.{name[len(prefix) :]}", how)
        if frozen or attributes or held or dotted:
            yield from _scan(function, frozen, attributes, swapped, held, dotted)

    def _held_state(self, function: FunctionScope) -> dict[str, dict[str, str]]:
        """`self.<attr>` -> attributes of the object it holds that change
        between calls (`self.memory.mem_cntr`, a counter the buffer's
        `store_transition` updates): a project fact."""
        ctx = self.ctx
        owner = ctx.class_of(function)
        if owner is None or not ctx.index.held_state:
            return {}
        prefix = owner[0] + "."
        return {
            key[len(prefix) :]: value
            for key, value in ctx.index.held_state.items()
            if key.startswith(prefix)
        }

    def _rebound_attributes(self, function: FunctionScope) -> dict[str, str]:
        """`self.<attr>` that another method rebinds (outside `__init__`/
        `build`), or that some method updates in place (`+=`): state the
        traced method reads once."""
        ctx, cache = self.ctx, self._writes
        owner = ctx.class_of(function)
        if owner is None:
            return {}
        class_name, node = owner
        if class_name not in cache:
            setup = setup_only_methods(node, ctx.module)
            cache[class_name] = (attribute_writes(node, ctx.names, setup), setup)
        writes, setup = cache[class_name]
        own = function.node.name.value
        result: dict[str, str] = {}
        for attr, methods in writes.augmented.items():
            if own in writes.assigned.get(attr, ()):
                continue  # assigned afresh in the traced function itself: per trace
            updaters = sorted(m for m in methods if not is_setup_method(m))
            if updaters:
                result[attr] = f"updated in place in `{updaters[0]}`"
        called = own_methods_called(ctx.index, function.qualname, class_name)
        for attr, methods in _items_changed(ctx.index, class_name, setup).items():
            # A container another method fills between calls (a replay
            # memory `store` appends to, in the loop that trains): what the
            # trace reads of it is frozen. A method run once to configure
            # the object (`add_transformation`, `restore`) fills it before
            # use; the traced method's own changes, and those of the
            # methods it calls, are in its trace (TFR202's).
            changers = sorted(
                m
                for m in methods
                if not is_setup_method(m)
                and m != own
                and m not in called
                and self._changes_between_calls(class_name, m, own)
            )
            if changers:
                result.setdefault(attr, f"its items are changed in `{changers[0]}`")
        info = ctx.index.classes.get(class_name)
        if info is not None and is_keras_model_class(info.bases):
            # Set on the model by a callback `fit` runs between its steps.
            for attr, where in ctx.index.callback_model_writes.items():
                if attr in writes.assigned:
                    result.setdefault(attr, f"set by the callback method `{where}`")
        # Rebound on its objects by code elsewhere, in a loop between calls
        # (`agent.noise = noise * decay` in the episode loop of a script).
        for attr, where in ctx.index.outside_attribute_writes.get(class_name, {}).items():
            if own not in writes.assigned.get(attr, ()):
                result.setdefault(attr, where)
        for attr, methods in writes.assigned.items():
            if attr in result or own in methods or attr not in writes.plain:
                continue  # assigned afresh in the traced function itself: per trace
            rebinders = sorted(
                m
                for m in methods
                if not is_setup_method(m) and not self._sets_up(class_name, node, m, attr, own)
            )
            if rebinders and not set(rebinders) <= called:
                # Rebound by a method this one does not call: a value from
                # outside its trace. (A `train_step` calling `self(x)` reads
                # what `call` assigned in the same trace.)
                result[attr] = f"rebound in `{rebinders[0]}`"
        return result

    def _changes_between_calls(self, class_name: str, method: str, traced: str) -> bool:
        """Whether a loop calls the class's `method` as well as the traced
        method (or a method reaching it), by their names: in a loop of this
        module (`agent.remember(t)` and `agent.train()` in the episode
        loop: `ModuleIndex.loop_methods`), or both in loops of the project
        (`loop_method_names`). A method a loop of set-up alone calls
        (decoding each file, restoring each checkpoint) runs before use."""
        index = self.ctx.index
        reaching = {
            name
            for name in index.classes[class_name].methods
            if traced in methods_reached(index, class_name, name)
        } | {traced}
        for called in index.loop_methods.values():
            if method in called and not reaching.isdisjoint(called):
                return True
        looped = index.loop_method_names
        return method in looped and not reaching.isdisjoint(looped)

    def _sets_up(
        self, class_name: str, class_def: cst.ClassDef, method: str, attr: str, traced: str
    ) -> bool:
        """Whether the class's `method` binds `attr` as set-up of the traced
        method `traced` (`setup_writes.binds_before_use`): once, before it
        first calls it, in a driver no loop of the module calls."""
        index = self.ctx.index
        if index.loop_calls.get(index.qualify(f"{class_name}.{method}")) is not None:
            return False  # run again and again: each run binds anew
        node = next(
            (
                s
                for s in class_def.body.body
                if isinstance(s, cst.FunctionDef) and s.name.value == method
            ),
            None,
        )
        if node is None:
            return False
        reaching = {
            name
            for name in index.classes[class_name].methods
            if traced in methods_reached(index, class_name, name)
        } | {traced}
        return binds_before_use(node, attr, reaching)


def _items_changed(index: ModuleIndex, class_name: str, setup: set[str]) -> dict[str, set[str]]:
    """`self` attributes whose items the class's methods change in place
    (pass 1's `FunctionInfo.self_item_writes`: `self.memory.append(t)`) ->
    those methods, set-up methods (`setup`: what only `__init__` or
    `build` calls) left out."""
    prefix = class_name + "."
    found: dict[str, set[str]] = {}
    for qualname, info in index.functions.items():
        method = qualname[len(prefix) :] if qualname.startswith(prefix) else ""
        if method and "." not in method and method not in setup:
            for attr in info.self_item_writes:
                found.setdefault(attr, set()).add(method)
    return found


def _bound_by_loops_around(parent: cst.FunctionDef, nested: cst.FunctionDef) -> set[str]:
    """Names the loops of `parent` around the definition of `nested` bind:
    `nested` is defined afresh on every iteration (a step written inside the
    epoch loop), and traced afresh with each iteration's values."""
    for node, ancestors in iter_with_ancestors(parent.body):
        if node is nested:
            loops = [a for a in ancestors if isinstance(a, (cst.For, cst.While))]
            return set().union(*(bound_names(loop) for loop in loops))
    return set()


def _enclosing_locals(function: FunctionScope) -> set[str]:
    """Names the functions enclosing `function` bind as their own locals
    (a `global` declaration there leaves the name the module's)."""
    names: set[str] = set()
    parent = function.parent
    while parent is not None:
        declared = {
            item.name.value
            for node in scope_nodes(parent.node.body)
            if isinstance(node, cst.Global)
            for item in node.names
        }
        names |= local_names(parent.node) - declared
        parent = parent.parent
    return names


def _scan(
    function: FunctionScope,
    mutable: dict[str, str],
    attributes: dict[str, str],
    swapped: set[str],
    held: dict[str, dict[str, str]],
    dotted: dict[str, str],
) -> Iterator[FrozenRead]:
    local = local_names(function.node)
    reported: set[str] = set()
    for node, ancestors in iter_with_ancestors(function.node.body):
        if isinstance(node, (cst.FunctionDef, cst.Lambda)):
            continue
        if any(isinstance(a, (cst.FunctionDef, cst.Lambda)) for a in ancestors):
            continue  # nested functions are checked as their own scope
        parent = ancestors[-1] if ancestors else None
        chain = _held_read(node, held)
        if chain is not None and chain[0] not in reported and _is_value_read(node, parent):
            reported.add(chain[0])
            yield FrozenRead(node, *chain)
            continue
        spelled = _dotted_attribute(node)
        if (
            spelled in dotted
            and spelled not in reported
            and spelled.partition(".")[0] not in local
            and _is_value_read(node, parent)  # type: ignore[arg-type]
        ):
            reported.add(spelled)
            yield FrozenRead(node, spelled, dotted[spelled])
            continue
        if isinstance(node, cst.Attribute) and attributes:
            attr = node.attr.value
            if (
                isinstance(node.value, cst.Name)
                and node.value.value == "self"
                and attr in attributes
                and f"self.{attr}" not in reported
                and (_is_value_read(node, parent) or (_is_called(node, parent) and attr in swapped))
            ):
                reported.add(f"self.{attr}")
                yield FrozenRead(node, f"self.{attr}", attributes[attr], _is_called(node, parent))
            continue
        if not isinstance(node, cst.Name) or node.value not in mutable:
            continue
        if node.value in local or node.value in reported or not _is_read(node, parent):
            continue
        if isinstance(parent, cst.Attribute) and parent.attr.value in MUTATING_METHODS:
            continue  # `history.append(x)` changes it here: TFR202's, not a read
        reported.add(node.value)
        yield FrozenRead(node, node.value, mutable[node.value])


def _dotted_attribute(node: cst.CSTNode) -> str:
    """`Config.margin` or `cfg.SCALE` for an attribute of a plain name, else ""."""
    if (
        isinstance(node, cst.Attribute)
        and isinstance(node.value, cst.Name)
        and node.value.value != "self"
    ):
        return f"{node.value.value}.{node.attr.value}"
    return ""


def _rebound_dotted_attributes(module: cst.Module, resolver: NameResolver) -> dict[str, str]:
    """Attributes of a class of this module or of an imported module or
    class (`Config.margin`, `cfg.SCALE`) that a function, or a module-level
    loop, assigns: `Config.margin = epoch / 10` in the epoch loop. A traced
    function reading `Config.margin` keeps its value at the first trace.
    Straight module-level assignments configure before anything runs and
    are not counted; nor are assignments in the class body."""
    owners = {s.name.value for s in module.body if isinstance(s, cst.ClassDef)}
    found: dict[str, str] = {}
    for node, ancestors in iter_with_ancestors(module):
        if isinstance(node, cst.Assign):
            targets = [t.target for t in node.targets]
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
            targets = [node.target]
        else:
            continue
        functions = [a for a in ancestors if isinstance(a, cst.FunctionDef)]
        in_loop = any(isinstance(a, (cst.For, cst.While)) for a in ancestors)
        if not functions and not in_loop:
            continue
        for target in targets:
            spelled = _dotted_attribute(target)
            if not spelled:
                continue
            owner = spelled.partition(".")[0]
            if owner == "cls":  # a classmethod's `cls.margin = ...`: its class's attribute
                classes = [a for a in ancestors if isinstance(a, cst.ClassDef)]
                if not classes:
                    continue
                owner = classes[-1].name.value
                spelled = owner + spelled[len("cls") :]
            if owner not in owners and resolver.qualified_name(cst.Name(owner)) is None:
                continue  # a local object's attribute, not shared state
            if functions and owner in local_names(functions[-1]):
                continue
            where = _qualname(ancestors) if functions else LOOP_REBOUND
            found.setdefault(spelled, f"rebound in `{where}`" if functions else where)
    return found


def _qualname(ancestors: tuple[cst.CSTNode, ...]) -> str:
    """The dotted name of the innermost function among `ancestors`."""
    return ".".join(
        a.name.value for a in ancestors if isinstance(a, (cst.FunctionDef, cst.ClassDef))
    )


def _loop_plain_names(module: cst.Module, resolver: NameResolver) -> set[str]:
    """Names a module-level loop binds to plain values (`is_plain_value`):
    its loop variable over `range`/`enumerate`, and its assignments."""
    names: set[str] = set()
    objects: set[str] = set()
    stack: list[tuple[cst.CSTNode, bool]] = [(s, False) for s in module.body]
    while stack:
        node, in_loop = stack.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            continue
        if isinstance(node, cst.For):
            counter = node.target
            if isinstance(counter, cst.Tuple) and counter.elements:
                counter = counter.elements[0].value
            iterated = node.iter
            if (
                isinstance(counter, cst.Name)
                and isinstance(iterated, cst.Call)
                and isinstance(iterated.func, cst.Name)
                and iterated.func.value in ("range", "enumerate")
            ):
                names.add(counter.value)
        if isinstance(node, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            if not in_loop:
                continue
            for small in node.body:
                if isinstance(small, cst.Assign):
                    bound = [
                        t.target.value for t in small.targets if isinstance(t.target, cst.Name)
                    ]
                    (names if is_plain_value(small.value, resolver) else objects).update(bound)
                elif isinstance(small, cst.AugAssign) and isinstance(small.target, cst.Name):
                    names.add(small.target.value)
            continue
        loop = in_loop or isinstance(node, (cst.For, cst.While))
        stack.extend((child, loop) for child in statement_children(node))
    return names - objects


class _Sections:
    """Module-level statements in order, for scripts and notebooks written in
    sections: a section sets its parameters (`discount_factor = 0.95`),
    defines its `training_step` and runs its loop; a later section sets new
    values and defines a new `training_step`. A definition is called only by
    the module-level statements between it and the next definition of its
    name, so a rebinding after its last call (or before its first) freezes
    nothing."""

    def __init__(self, module: cst.Module) -> None:
        self.statements = list(module.body)
        self._bound: list[set[str]] | None = None
        self._called: list[set[str]] | None = None
        self._referenced_in_functions: set[str] = set()
        self._globals: set[str] = set()

    def _index(self) -> None:
        bound: list[set[str]] = []
        called: list[set[str]] = []
        for statement in self.statements:
            names: set[str] = set()
            calls: set[str] = set()
            for node, ancestors in iter_with_ancestors(statement):
                if isinstance(node, cst.Global):
                    self._globals.update(item.name.value for item in node.names)
                nested = [a for a in (*ancestors, node) if isinstance(a, _DEFINITIONS)]
                if nested and not (len(nested) == 1 and nested[0] is node):
                    parent = ancestors[-1]
                    naming = (
                        isinstance(parent, (cst.FunctionDef, cst.ClassDef)) and parent.name is node
                    )
                    if isinstance(node, cst.Name) and not naming:
                        self._referenced_in_functions.add(node.value)
                    continue
                if isinstance(node, cst.Call) and isinstance(node.func, cst.Name):
                    calls.add(node.func.value)
                elif isinstance(node, (cst.FunctionDef, cst.ClassDef)):
                    names.add(node.name.value)
                elif isinstance(node, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For)):
                    target = node.target
                    names.update(
                        n.value for n, _ in iter_with_ancestors(target) if isinstance(n, cst.Name)
                    )
            bound.append(names)
            called.append(calls)
        self._bound, self._called = bound, called

    def settled(self, function: FunctionScope, name: str, how: str) -> bool:
        """Whether no module-level statement rebinds `name` while this
        definition of `function` is still being called."""
        if how != "assigned more than once" or function.parent is not None:
            return False
        if function.class_name is not None:
            return False
        position = next((i for i, s in enumerate(self.statements) if s is function.node), None)
        if position is None:
            return False
        if self._bound is None:
            self._index()
        assert self._bound is not None and self._called is not None
        own = function.node.name.value
        if own in self._referenced_in_functions or name in self._globals:
            return False  # called from a function, at times we do not follow
        calls: list[int] = []
        for i in range(position + 1, len(self.statements)):
            if own in self._bound[i]:
                break  # the next definition of the name takes over
            if own in self._called[i]:
                calls.append(i)
        if not calls:
            return False
        return not any(name in self._bound[i] for i in range(calls[0], calls[-1] + 1))


_DEFINITIONS = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


def _settled_before_first_call(ctx: RuleContext, function: FunctionScope, name: str) -> bool:
    """Whether every trace of a module function sees the final value of
    `name`, which plain module-level statements bind more than once (a
    script that sets `batch_size = 64` again before its GAN section): the
    function is the last one of its name, and is defined after the last
    binding, or is first called by a module-level statement after it and
    from nowhere else. Then nothing is frozen."""
    index = ctx.index
    last = index.straight_rebinds.get(name)
    if last is None or function.parent is not None or function.class_name is not None:
        return False
    if index.rebound_module_names.get(name) != "assigned more than once":
        return False  # another module rebinds it too
    info = index.functions.get(function.qualname)
    defs = [
        s
        for s in ctx.module.body
        if isinstance(s, cst.FunctionDef) and s.name.value == function.qualname
    ]
    if info is None or not defs or defs[-1] is not function.node:
        return False  # the index describes the last definition of the name only
    if info.lineno > last:
        return True
    qualified = index.qualify(function.qualname)
    calls = [line for line in index.module_call_lines.get(qualified, ()) if line > info.lineno]
    if not calls or min(calls) <= last:
        return False
    if any(site.target == qualified for site in index.traced_sites):
        return False
    return not any(qualified in other.calls for other in index.functions.values())


def _held_read(node: cst.CSTNode, held: dict[str, dict[str, str]]) -> tuple[str, str] | None:
    """`self.memory.mem_cntr` when `self.memory` holds an object whose
    `mem_cntr` changes between calls: (the expression, how it changes)."""
    if not (held and isinstance(node, cst.Attribute) and isinstance(node.value, cst.Attribute)):
        return None
    inner = node.value
    if not (isinstance(inner.value, cst.Name) and inner.value.value == "self"):
        return None
    how = held.get(inner.attr.value, {}).get(node.attr.value)
    if how is None:
        return None
    return f"self.{inner.attr.value}.{node.attr.value}", how


def _is_called(node: cst.Attribute, parent: cst.CSTNode | None) -> bool:
    """`self.teacher(x)`: a rebound attribute called runs the object it held
    at the first trace (a callback's new teacher model is never called)."""
    return isinstance(parent, cst.Call) and parent.func is node


def _is_value_read(node: cst.Attribute, parent: cst.CSTNode | None) -> bool:
    """`self.x` read for its value: not a call (`self.model(x)`), not an
    attribute chain (`self.opt.apply_gradients`), not an assignment target."""
    if isinstance(parent, cst.Attribute) and parent.value is node:
        return False
    if isinstance(parent, cst.Call) and parent.func is node:
        return False
    if isinstance(parent, (cst.AssignTarget, cst.AugAssign)):
        return False
    return True
