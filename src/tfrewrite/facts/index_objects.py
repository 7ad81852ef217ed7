"""The visitor's part that knows what a file's names hold as objects.

An object of a project class bound once at module level (`critic =
Critic()`), or bound in a function (`aug = Augment()`, `aug = AUG`): calling
it or one of its methods calls the class's code (`Critic.sync`), which the
project facts then find. A factory's result (`loss_fn = make_loss(...)`):
calling it calls what the factory returns. A model compiled, and whether to
run eagerly (`ModuleIndex.compiled_objects`). A callable handed to
`tf.py_function` / `tf.numpy_function`, which runs eagerly
(`facts/eager_callables.py`).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping

from tfrewrite.facts.call_evidence import EXTERNAL_ROOTS, PART_OPEN
from tfrewrite.facts.eager_callables import character_span
from tfrewrite.facts.function_facts import is_self_attribute, training_layer_reads
from tfrewrite.facts.index_names import dotted, on_super, rebind
from tfrewrite.facts.index_records import FunctionInfo, ModuleIndex
from tfrewrite.facts.keras_names import KERAS_MODEL_IGNORING_TRAINING, keras_path
from tfrewrite.facts.tensor_kinds import is_optimizer_constructor


class ObjectReferences:
    """What names hold as objects, for the calls that use them."""

    index: ModuleIndex
    resolve: Callable[[ast.AST], str | None]
    resolve_function: Callable[[ast.AST], str | None]
    project_callee: Callable[[ast.expr, str], bool | None]
    function_stack: list[FunctionInfo]
    class_stack: list[str]
    call_results: list[dict[str, str]]
    unpacked_results: list[dict[str, str]]
    object_choices: list[dict[str, tuple[str, ...]]]
    function_tables: list[dict[str, tuple[str, ...]]]
    _project_reference: Callable[[ast.expr], str | None]
    module_instances: dict[str, str]
    module_object_choices: dict[str, tuple[str, ...]]
    bound_here: list[set[str]]
    eager_lambdas: set[int]
    learning_rate_callables: dict[str, str]
    source: str
    source_lines: list[str] | None  # `source` split, once a lambda's span needs it

    def _record_eager(self, handed: ast.expr) -> None:
        """A callable handed to `tf.py_function`/`tf.numpy_function`: a
        lambda (its span), or a function of the file it names (a nested
        one, a module-level one, `self.method`)."""
        if isinstance(handed, ast.Lambda):
            self.eager_lambdas.add(id(handed))
            if self.source_lines is None:
                self.source_lines = self.source.split("\n")
            self.index.eager_spans.append(character_span(handed, self.source_lines))
            return
        found = None
        if isinstance(handed, ast.Name):
            found = self._own_function(handed)
        elif is_self_attribute(handed) and self.class_stack:
            assert isinstance(handed, ast.Attribute)
            method = f"{self.class_stack[-1]}.{handed.attr}"
            found = method if method in self.index.functions else None
        if found is not None:
            self.index.eager_functions.add(found)

    def _own_function(self, name: ast.Name) -> str | None:
        """The local qualname of the function of this file `name` names
        where it is read (`ModuleIndex.function_named`)."""
        within = self.function_stack[-1].qualname if self.function_stack else ""
        return self.index.function_named(name.id, within)

    def _record_weight_function(self, handed: ast.expr) -> None:
        """A function of the file handed to a Keras layer as a weight's
        constraint or regularizer (`kernel_constraint=symmetric`, a nested
        or a module-level one): Keras calls it with the weight variable."""
        found = self._own_function(handed) if isinstance(handed, ast.Name) else None
        if found is not None:
            self.index.weight_functions.add(found)

    def _holder_key(self, holder: ast.expr) -> str:
        """How an optimizer's holder is known: `opt`, or `Trainer:self.opt`
        for an attribute of the class whose method is being visited."""
        text = ast.unparse(holder)
        if text.startswith("self.") and self.class_stack:
            return f"{self.class_stack[-1]}:{text}"
        return text

    def _record_learning_rate_callable(self, node: ast.Assign) -> None:
        """`opt = Adam(lr_schedule)` or `self.opt = Adam(learning_rate=f)`
        with a plain function of the file: `opt.apply_gradients(...)` calls
        it, where that runs (a traced step freezes what it reads there)."""
        built = node.value
        if not isinstance(built, ast.Call):
            return
        if not is_optimizer_constructor(self.resolve_function(built.func)):
            return
        given = next((kw.value for kw in built.keywords if kw.arg == "learning_rate"), None)
        if given is None and built.args:
            given = built.args[0]
        if not isinstance(given, ast.Name):
            return
        local = self._own_function(given)
        for target in node.targets if local is not None else ():
            self.learning_rate_callables[self._holder_key(target)] = self.index.qualify(local)

    def _local_factory(self, name: str) -> str | None:
        """`make_loss` for a local `name` bound to `make_loss(...)` (or
        `Jitter` for `jit = Jitter()`) here or in an enclosing function (a
        closure's step calling `loss_fn`)."""
        for results in reversed(self.call_results):
            if name in results:
                return results[name]
        return None

    def record_unpacked_results(self, node: ast.Assign) -> None:
        """`actor, critic = get_model(...)` in a function: each name holds a
        part of what the project function `get_model` builds (all of them a
        model when it is a model builder returning several). Unpacked from
        a tuple of calls (`actor, critic = get_actor(3), get_critic(3)`),
        each holds what its own call returns, as if bound alone."""
        value = node.value
        for target in node.targets:
            if not isinstance(target, (ast.Tuple, ast.List)) or not all(
                isinstance(e, ast.Name) for e in target.elts
            ):
                continue
            names = [e.id for e in target.elts]  # type: ignore[attr-defined]
            if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(names):
                for name, element in zip(names, value.elts, strict=True):
                    rebind(self.call_results[-1], [name], self._factory(element))
                    rebind(self.unpacked_results[-1], [name], None)
                continue
            factory = self._factory(value)
            for position, name in enumerate(names):
                part = f"{factory}{PART_OPEN}{position}]" if factory else None
                rebind(self.unpacked_results[-1], [name], part)
            rebind(self.call_results[-1], names, None)

    def _unpacked_factory(self, name: str) -> str | None:
        """`get_model` for a local `name` unpacked from `get_model(...)`
        here or in an enclosing function."""
        for results in reversed(self.unpacked_results):
            if name in results:
                return results[name]
        return None

    def _built_here(self, name: str) -> bool:
        """Whether the innermost function binds `name` to an object it
        builds (or names), rather than a function around it."""
        return bool(self.call_results) and name in self.call_results[-1]

    def _object_of(self, element: ast.expr) -> str | None:
        """The constructor of the project object `element` builds or names
        (`Kappa()`, `kappa` for `kappa = Kappa()`, a module's object)."""
        if isinstance(element, ast.Name):
            return self._local_factory(element.id) or self._module_object(element)
        return self._factory(element)

    def record_object_list(self, names: list[str], value: ast.expr) -> None:
        """`metrics = [kappa, corr, keras_mae]` in a function: each element
        that is a project object is one the list may hand out. Objects of
        outside packages (a Keras metric) have no code of the project's."""
        if not self.object_choices:
            return
        built: tuple[str, ...] = ()
        if isinstance(value, (ast.List, ast.Tuple)):
            built = tuple(sorted({c for e in value.elts if (c := self._object_of(e))}))
        rebind(self.object_choices[-1], names, built)

    def _function_references(self, table: ast.expr) -> tuple[str, ...]:
        """The project functions a literal table holds (`{"wgan": G_wgan,
        "logistic": G_logistic}`, `[dice, focal]`)."""
        if isinstance(table, ast.Dict):
            elements: list[ast.expr] = [v for v in table.values if v is not None]
        elif isinstance(table, (ast.List, ast.Tuple)):
            elements = table.elts
        else:
            return ()
        found = {
            reference
            for element in elements
            if isinstance(element, (ast.Name, ast.Attribute))
            and not self._local_name(element)
            and (reference := self._project_reference(element))
        }
        return tuple(sorted(found))

    def _local_name(self, value: ast.expr) -> bool:
        """`value` is a name the functions being visited bind or take (`model
        = Model(...)` then `return model` in a function named `model`)."""
        return isinstance(value, ast.Name) and (
            any(value.id in bound for bound in self.bound_here)
            or any(value.id in info.params for info in self.function_stack)
        )

    def record_function_table(self, names: list[str], value: ast.expr) -> None:
        """`losses = {"wgan": G_wgan, ...}` in a function: a table its
        `return losses[name]` picks a function from."""
        if not self.function_tables:
            return
        rebind(self.function_tables[-1], names, self._function_references(value))

    def returned_functions(self, value: ast.expr) -> tuple[str, ...]:
        """The project functions `return value` may hand out: the one it
        names (`return dice`), or one picked from a table of them (`return
        losses[name]`, `losses.get(name)`, `{...}[name]`): what a caller
        that binds the result (`self.loss_fn = select_loss(name)`) calls."""
        if isinstance(value, (ast.Name, ast.Attribute)):
            reference = None if self._local_name(value) else self._project_reference(value)
            return (reference,) if reference else ()
        table: ast.expr | None = None
        if isinstance(value, ast.Subscript):
            table = value.value
        elif isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
            table = value.func.value if value.func.attr == "get" else None
        if isinstance(table, ast.Name):
            for tables in reversed(self.function_tables):
                if table.id in tables:
                    return tables[table.id]
            return ()
        return self._function_references(table) if table is not None else ()

    def record_attribute_alias(self, names: list[str], value: ast.expr) -> None:
        """`enc = parts.encoder` where `parts = Parts()` here or in a
        function around: `enc` is what `Parts` keeps in `encoder`
        (`FunctionInfo.attribute_aliases`)."""
        if not self.function_stack:
            return
        alias = None
        if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name):
            built = self._local_factory(value.value.id)
            alias = None if built is None else f"{built}.{value.attr}"
        rebind(self.function_stack[-1].attribute_aliases, names, alias)

    def _choices(self, name: str) -> tuple[str, ...]:
        """The constructors of the objects `name` may hold, bound here or in
        a function around (a closure's step iterating its maker's list)."""
        for choices in reversed(self.object_choices):
            if name in choices:
                return choices[name]
        return ()

    def record_loop_object(self, target: ast.expr, iterable: ast.expr) -> None:
        """`for metric in metrics` (or `for i, metric in
        enumerate(metrics)`) over a list of project objects: the loop
        variable holds each in turn."""
        if isinstance(iterable, ast.Call) and dotted(iterable.func) == "enumerate":
            if not iterable.args or not (isinstance(target, ast.Tuple) and len(target.elts) == 2):
                return
            iterable, target = iterable.args[0], target.elts[1]
        if isinstance(target, ast.Name):
            held = self._choices(iterable.id) if isinstance(iterable, ast.Name) else ()
            if held:
                self.object_choices[-1][target.id] = held
            else:
                self.object_choices[-1].pop(target.id, None)

    def chosen_methods(self, func: ast.expr) -> list[str]:
        """`metric.update_state` on a name that holds one of several project
        objects: that method of each of their classes (`Kappa.update_state`,
        `Corr.update_state`), which the call may run."""
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
            return []
        return [f"{constructor}.{func.attr}" for constructor in self._choices(func.value.id)]

    def _factory_result(self, name: str) -> str | None:
        """`make_loss()` for a local `name` bound to `make_loss(...)`."""
        factory = self._local_factory(name)
        return f"{factory}()" if factory else None

    def _module_object(self, value: ast.expr) -> str | None:
        """The constructor of the module-level object `value` names (`AUG`
        for `AUG = Aug()`), when no enclosing function binds the name."""
        if not isinstance(value, ast.Name) or not self.names_module_scope(value.id):
            return None
        return self.module_instances.get(value.id)

    def names_module_scope(self, name: str) -> bool:
        """Whether `name`, read here, is the module's: no enclosing function
        binds it, as a parameter or otherwise."""
        return not any(name in info.params for info in self.function_stack) and not any(
            name in bound for bound in self.bound_here
        )

    def _factory(self, value: ast.expr) -> str | None:
        """The project function whose call `value` is (`make_loss(...)`),
        or None: a builtin, an external package's function, a method."""
        if not (isinstance(value, ast.Call) and isinstance(value.func, (ast.Name, ast.Attribute))):
            return None
        callee = self.resolve(value.func)
        if not callee:
            return None
        if self.project_callee(value.func, callee) is not False:
            if _sequential_ignoring_training(value, callee, self.resolve):
                return KERAS_MODEL_IGNORING_TRAINING
            return None  # not a project function, or a `self.` method
        return callee

    def record_module_instances(
        self, assignments: list[ast.Assign], bindings: Mapping[str, tuple[int, int, bool]]
    ) -> None:
        """`critic = Critic(...)` in the module's scope (its top level, or an
        `if __name__ == "__main__":` block), the only binding of `critic`;
        also unpacked, `net, opt = Net(), SGD(0.1)`. A name two statements
        bind (`if`/`else` alternatives) holds no one class."""
        built: dict[str, str] = {}
        choices: dict[str, list[str]] = {}
        statements: dict[str, int] = {}
        for node in assignments:
            if len(node.targets) != 1:
                continue
            target, value = node.targets[0], node.value
            pairs: list[tuple[ast.expr, ast.expr]] = [(target, value)]
            if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple):
                if len(target.elts) == len(value.elts):
                    pairs = list(zip(target.elts, value.elts, strict=True))
            for name_node, made in pairs:
                if not isinstance(name_node, ast.Name):
                    continue
                statements[name_node.id] = statements.get(name_node.id, 0) + 1
                constructor = self.resolve(made.func) if isinstance(made, ast.Call) else None
                if constructor:
                    built[name_node.id] = constructor
                    choices.setdefault(name_node.id, []).append(constructor)
        for name, constructor in built.items():
            if statements[name] == 1 and bindings.get(name, (0, 0, False))[:1] == (1,):
                self.module_instances[name] = constructor
        for name, constructors in choices.items():
            if name not in self.module_instances:
                self.module_object_choices[name] = tuple(sorted(set(constructors)))

    def _instance_call(self, func: ast.expr) -> str | None:
        """What calling the object a plain name holds calls, as the project
        facts look it up: `pkg.Net()` (the class's `call` or `__call__`)
        for `net = Net()` in this function or, not shadowed, at module
        level; `make_loss()` (what the factory returns) for `loss_fn =
        make_loss()`."""
        if not isinstance(func, ast.Name):
            return None
        if self.function_stack:
            returned = self._factory_result(func.id)
            if returned:
                return returned
        constructor = self.module_instances.get(func.id)
        if constructor is None or constructor.split(".", 1)[0] in EXTERNAL_ROOTS:
            return None
        if any(func.id in info.params for info in self.function_stack):
            return None
        if any(func.id in bound for bound in self.bound_here):
            return None  # bound in the function: not the module's object
        return f"{constructor}()"

    def object_constructor(self, name: str) -> str | None:
        """The constructor of the project object a plain name holds, as the
        module names it: `pkg.TD3` for `agent = TD3(...)` in this function
        (or one around it) or, not shadowed by a parameter or a local, once
        at module level (the module's objects are known before its body is
        visited)."""
        if name in ("self", "cls") or name in self.index.imports:
            return None
        constructor = self._local_factory(name) if self.function_stack else None
        if constructor is None:
            if any(name in info.params for info in self.function_stack) or any(
                name in bound for bound in self.bound_here
            ):
                return None  # a parameter or a local: not the module's object
            constructor = self.module_instances.get(name)
        if constructor is None or constructor.split(".", 1)[0] in EXTERNAL_ROOTS:
            return None
        return constructor

    def object_method(self, func: ast.expr) -> str | None:
        """The method `agent.update` calls on such an object:
        `pkg.TD3.update`, `self` bound."""
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
            return None
        constructor = self.object_constructor(func.value.id)
        return None if constructor is None else f"{constructor}.{func.attr}"

    def _record_compiled_object(self, node: ast.Call) -> None:
        """`model.compile(...)` where `model = Net()` (here, in a function
        around, or once at module level), or `self.compile(...)` in a method
        of `Net`: which class is compiled, and whether to run eagerly."""
        built = self._receiver_class(node)
        if built is None:
            return
        eager = any(kw.arg == "run_eagerly" and _is_true(kw.value) for kw in node.keywords)
        self.index.compiled_objects.append((built, eager))

    def _record_keras_run(self, node: ast.Call) -> None:
        """`model.fit(...)`, `model.predict(...)`, `model.build(shape)`: the
        class of the object (`ModuleIndex.keras_runs`), "" when unknown."""
        if on_super(node.func):
            return  # `super().build(input_shape)`: a layer building itself
        self.index.keras_runs.append(self._receiver_class(node) or "")

    def _receiver_class(self, node: ast.Call) -> str | None:
        """The class of the object a method is called on, for `obj.m(...)`
        where `obj = Net()` (here, in a function around, or once at module
        level), or `self.m(...)` in a method of `Net`."""
        assert isinstance(node.func, ast.Attribute)
        receiver = node.func.value
        if not isinstance(receiver, ast.Name):
            return None
        if receiver.id == "self" and self.class_stack:
            owner = self.class_stack[-1]
            return f"{self.index.module}.{owner}" if self.index.module else owner
        if self.function_stack:
            return self._local_factory(receiver.id) or self._module_object(receiver)
        return self.module_instances.get(receiver.id)

    def _instance_method(self, func: ast.Attribute, used: bool) -> str | None:
        """`critic.sync` where the module binds `critic = Critic()` once: the
        method `Critic.sync` (found by the project facts when the project
        defines `Critic`), unless the function has a parameter of that name.
        For an object the function (or one enclosing it) builds, `jit =
        Jitter()`, or names, `aug = AUG`: `Jitter.gray` for `jit.gray(x)`
        when the result is `used`, or the object comes from a function
        around (a closure's step updating its maker's tracker): a method
        called for its effect on an object built for one call is
        bookkeeping of that call."""
        receiver = func.value
        if not isinstance(receiver, ast.Name) or receiver.id in self.function_stack[-1].params:
            return None
        local = self._local_factory(receiver.id)
        if local is not None:
            # An object a function around builds outlives this call: what
            # its methods do to it is state the next call sees.
            keeps = used or not self._built_here(receiver.id)
            return f"{local}.{func.attr}" if keeps else None
        if any(receiver.id in bound for bound in self.bound_here):
            return None  # bound in the function: not the module's object
        constructor = self.module_instances.get(receiver.id)
        if constructor is None:
            return None
        return f"{constructor}.{func.attr}"


def _is_true(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def _sequential_ignoring_training(
    value: ast.Call, callee: str, resolve: Callable[[ast.AST], str | None]
) -> bool:
    """`tf.keras.Sequential([Dense(64), Dense(1)])`: a Keras `Sequential`
    given its layers, each of Keras' own and computing the same with
    `training=True` (`training_layer_reads`)."""
    path = keras_path(callee)
    if path is None or path.rpartition(".")[2] != "Sequential" or not value.args:
        return False
    reads, parts = training_layer_reads(value, resolve)
    return not reads and not parts
