"""Per-function body facts in pass 1: what a function's body does that a rule
asks before parsing it with LibCST: branches on a condition, writes or mutates
state that outlives a call, opens a `GradientTape`, applies gradients, loops
over a short batch or a `tf.range`, logs through Python's `logging`.

Each is a flag of `FunctionInfo` (or a set of `ModuleIndex`); the questions
asked of single `ast` nodes (`opens_tape`, `is_update_call`) are asked by
verify too.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator

from tfrewrite.facts.index_names import BUILTIN_NAMES, dotted, iter_statements
from tfrewrite.facts.index_records import ClassInfo, FunctionInfo, ModuleIndex
from tfrewrite.facts.keras_list_properties import VARIABLE_LISTS
from tfrewrite.facts.keras_names import (
    LAMBDA_PART,
    WRAPPER_LAYERS,
    builds_keras_model,
    is_loss_class,
    keras_path,
    lambda_reads_training,
    layer_reads_training,
)
from tfrewrite.facts.prefilters import own_local_names
from tfrewrite.facts.python_conditions import PythonConditions
from tfrewrite.facts.tensor_kinds import MULTI_TENSOR_FUNCTIONS, is_tensor_op
from tfrewrite.facts.vocabulary import (
    LIST_GROWING_METHODS,
    LOG_METHODS,
    is_gradient_tape,
    is_gradient_update,
    is_logger_factory,
    is_logging_call,
)

# Expressions that hold no call: most defaults and annotations are these.
_ATOMS = frozenset({ast.Constant, ast.Name})


def batch_keeps_remainder(node: ast.AST) -> bool:
    """`ds.batch(n)` (anywhere in a chain) without `drop_remainder=True`,
    and `n` not 1 (one element per batch leaves none short)."""
    for sub in ast.walk(node):
        if (
            isinstance(sub, ast.Call)
            and isinstance(sub.func, ast.Attribute)
            and sub.func.attr in ("batch", "padded_batch")
        ):
            drop = next((kw.value for kw in sub.keywords if kw.arg == "drop_remainder"), None)
            size = next((kw.value for kw in sub.keywords if kw.arg == "batch_size"), None)
            if size is None and sub.args and not isinstance(sub.args[0], ast.Starred):
                size = sub.args[0]
            one = isinstance(size, ast.Constant) and size.value == 1 and size.value is not True
            if not (isinstance(drop, ast.Constant) and drop.value is True) and not one:
                return True
    return False


def writes_outside(target: ast.expr, augmented: bool) -> bool:
    """Whether assigning `target` may write state that outlives a call, as
    TFR202 reads it: an item (`obj[k] = ...`), an attribute of a name
    (`obj.attr = ...`; on `self` only augmented, `self.n += 1`). A plain name
    is local unless declared `global`/`nonlocal` (marked where declared)."""
    if isinstance(target, ast.Subscript):
        return True
    if isinstance(target, (ast.Tuple, ast.List)):
        return any(writes_outside(t, augmented) for t in target.elts)
    if isinstance(target, ast.Starred):
        return writes_outside(target.value, augmented)
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
        return augmented or target.value.id != "self"
    return False


# Calls that turn a whole Python sequence into one array or tensor, whose
# shape is the sequence's length.
_WHOLE_SEQUENCE_CALLS = frozenset(
    {
        "numpy.array",
        "numpy.asarray",
        "numpy.stack",
        "numpy.vstack",
        "tensorflow.convert_to_tensor",
        "tensorflow.constant",
        "tensorflow.stack",
    }
)


def methods_consuming_grown_lists(
    cls: ast.ClassDef, resolve: Callable[[ast.AST], str | None]
) -> list[str]:
    """Methods of `cls` that iterate over (`for g, s in zip(G, self.states)`)
    or turn whole into an array or tensor (`tf.convert_to_tensor(self.actions)`)
    a `self` list another method appends to (`self.states.append(s)`)."""
    methods = [m for m in cls.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))]
    appended: dict[str, set[str]] = {}  # attr -> methods appending to it
    for method in methods:
        for node in ast.walk(method):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in LIST_GROWING_METHODS
                and is_self_attribute(node.func.value)
            ):
                attr = node.func.value.attr  # type: ignore[attr-defined]
                appended.setdefault(attr, set()).add(method.name)
    if not appended:
        return []

    def grown(node: ast.AST, own: str) -> bool:
        if is_self_attribute(node):
            return bool(appended.get(node.attr, set()) - {own})  # type: ignore[attr-defined]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id in ("zip", "enumerate", "reversed", "list"):
                return any(grown(arg, own) for arg in node.args)
        return False

    found = []
    for method in methods:
        for node in ast.walk(method):
            if isinstance(node, (ast.For, ast.comprehension)) and grown(node.iter, method.name):
                found.append(method.name)
                break
            if (
                isinstance(node, ast.Call)
                and node.args
                and (resolve(node.func) or "") in _WHOLE_SEQUENCE_CALLS
                and grown(node.args[0], method.name)
            ):
                found.append(method.name)
                break
    return found


def is_update_call(node: ast.Call) -> bool:
    """A call that applies gradients (`vocabulary.is_gradient_update`, asked
    on an `ast` node): `apply_gradients`, `minimize`, Keras 3's
    `optimizer.apply(grads, variables)`, or `w.assign_sub(lr * dw)`."""
    if not isinstance(node.func, ast.Attribute):
        return False
    first = node.args[0] if node.args else node.keywords[0].value if node.keywords else None
    second = node.args[1] if len(node.args) > 1 else None
    return is_gradient_update(
        node.func.attr,
        dotted(node.func.value),
        len(node.args),
        None if first is None else _is_number_literal(first),
        isinstance(second, ast.Attribute) and second.attr in VARIABLE_LISTS,
    )


def _is_number_literal(node: ast.AST) -> bool:
    """`1`, `0.5` as written (not `-1`, `True`): what LibCST parses as a number."""
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def is_self_attribute(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
    )


def unset_self_attributes(test: ast.expr) -> frozenset[str]:
    """The `self` attributes an `if` tests unset: `not self.a`, `self.a is
    None`, or either joined by `or` (`if self.a is None or not self.b`)."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        parts = [unset_self_attributes(v) for v in test.values]
        return frozenset().union(*parts) if all(parts) else frozenset()
    target: ast.expr | None = None
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        target = test.operand
    elif (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Is)
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value is None
    ):
        target = test.left
    if target is not None and is_self_attribute(target):
        return frozenset({target.attr})  # type: ignore[attr-defined]
    return frozenset()


def held_container(node: ast.expr) -> str | None:
    """`attr` when `node` is `self.attr`, or an item of it (`self.attr[k]`,
    `self.attr[k][j]`): the container a write to `node`'s items changes."""
    while isinstance(node, ast.Subscript):
        node = node.value
    return node.attr if isinstance(node, ast.Attribute) and is_self_attribute(node) else None


def self_assignments(
    cls: ast.ClassDef,
) -> Iterator[tuple[ast.FunctionDef | ast.AsyncFunctionDef, str, ast.expr | None]]:
    """Every write of a `self` attribute in the methods of `cls` (nested
    statements too): (the method, the attribute, the value assigned, or
    None for an augmented assignment or an element of an unpacking)."""
    for method in cls.body:
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in iter_statements(method.body):
            if isinstance(node, ast.AugAssign) and is_self_attribute(node.target):
                yield method, node.target.attr, None  # type: ignore[attr-defined]
            if not isinstance(node, (ast.Assign, ast.AnnAssign)):
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for element in target.elts if isinstance(target, ast.Tuple) else [target]:
                    if is_self_attribute(element):
                        value = node.value if element is target else None
                        yield method, element.attr, value  # type: ignore[attr-defined]


def returns_gradients(
    node: ast.FunctionDef | ast.AsyncFunctionDef, variable_methods: frozenset[str] = frozenset()
) -> bool:
    """Its body returns the gradients a `.gradient(...)` call computes for a
    model's variables, directly or through a name (`grads =
    tape.gradient(loss, model.trainable_variables)`; `return loss, grads`).
    `variable_methods`: methods of its class that return a model's
    variables (`tape.gradient(loss, self.training_variables())`)."""

    def _is_gradient_call(call: ast.AST) -> bool:
        return _gradient_call(call, variable_methods)

    gradients: set[str] = set()
    returned: list[ast.expr] = []
    stack: list[ast.stmt] = list(reversed(node.body))
    while stack:
        statement = stack.pop()
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue  # another scope
        if isinstance(statement, ast.Assign) and _is_gradient_call(statement.value):
            gradients.update(t.id for t in statement.targets if isinstance(t, ast.Name))
        elif isinstance(statement, ast.Return) and statement.value is not None:
            returned.append(statement.value)
        for field_name in ("body", "orelse", "finalbody", "handlers", "cases"):
            children = getattr(statement, field_name, None)
            if children.__class__ is list:
                stack.extend(reversed(children))
    return any(
        _is_gradient_call(part) or (isinstance(part, ast.Name) and part.id in gradients)
        for value in returned
        for part in ast.walk(value)
    )


def returns_tensor(
    node: ast.FunctionDef | ast.AsyncFunctionDef, resolve: Callable[[ast.AST], str | None]
) -> bool:
    """Every `return` of the function gives a value a TensorFlow (or Keras
    backend) op computes: `return backend.mean(y_pred) - backend.mean(y_true)`,
    or a name every binding of its own scope gives one (`loss =
    tf.reduce_mean(...)`; `loss = loss * scale`; `return loss`). A caller in
    another module gets a tensor from it."""
    return _every_return_gives(
        node,
        lambda value: _computes_tensor(value, resolve),
        True,
        unpacked=lambda value: _computes_tensors(value, resolve),
    )


def returns_computed(
    node: ast.FunctionDef | ast.AsyncFunctionDef, resolve: Callable[[ast.AST], str | None]
) -> bool:
    """Every `return` of the function gives what TensorFlow ops or operators
    compute, or a tuple of such (`return mu, pi, logp_pi`): numbers and
    tensors, never a layer or a model; or, beside them, a function it
    defines itself (`return y, grad` of a `tf.custom_gradient`)."""
    if returns_arithmetic(node) or _returns_last_computed(node, resolve):
        return True
    return _every_return_gives(
        node,
        lambda value: _computes_tensor(value, resolve),
        True,
        tuples=True,
        unpacked=lambda value: _computes_tensors(value, resolve),
        own_functions=True,
    )


def _returns_last_computed(
    node: ast.FunctionDef | ast.AsyncFunctionDef, resolve: Callable[[ast.AST], str | None]
) -> bool:
    """The function's one `return`, its last statement, gives names (or a
    tuple of them) each last bound, in the straight-line code before it, by
    a TensorFlow op or an operator (`mu = tf.tanh(mu)`, `logp -= ...`):
    what the parameters held before does not reach it."""
    body = node.body
    statements = iter_statements(body, into_definitions=False)
    returns = [s for s in statements if isinstance(s, ast.Return)]
    if len(returns) != 1 or not body or returns[0] is not body[-1] or returns[0].value is None:
        return False
    value = returns[0].value
    names = value.elts if isinstance(value, ast.Tuple) else [value]
    return bool(names) and all(
        isinstance(n, ast.Name) and _last_bound_computed(body[:-1], n.id, resolve) for n in names
    )


def _last_bound_computed(
    statements: list[ast.stmt], name: str, resolve: Callable[[ast.AST], str | None]
) -> bool:
    """Whether `name` is last bound by a TensorFlow op or an operator, or
    is a function defined here (`grad` of a `tf.custom_gradient`)."""
    defined = [
        s
        for s in statements
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == name
    ]
    if defined and statements.index(defined[-1]) > max(
        (i for i, s in enumerate(statements) if _stores_name(s, name)), default=-1
    ):
        return True
    binding = _last_binding(statements, name)
    if isinstance(binding, ast.AugAssign):
        return True  # `logp -= ...`: an operator's result
    if isinstance(binding, ast.Assign):
        value = binding.value
        return isinstance(value, (ast.BinOp, ast.UnaryOp)) or _computes_tensor(value, resolve)
    return False


def _stores_name(statement: ast.stmt, name: str) -> bool:
    """Whether `statement` stores `name` anywhere in it."""
    return any(
        isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
        for n in ast.walk(statement)
    )


def _last_binding(statements: list[ast.stmt], name: str) -> ast.Assign | ast.AugAssign | None:
    """The last of `statements` that binds `name`, when it binds it plainly
    (`name = value`, `name -= value`); None when that statement binds it
    otherwise (in a branch, a loop, by unpacking) or none does."""
    for statement in reversed(statements):
        if not _stores_name(statement, name):
            continue
        if isinstance(statement, ast.AugAssign) and isinstance(statement.target, ast.Name):
            return statement
        if (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
        ):
            return statement
        return None
    return None


def returns_arithmetic(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Every `return` of the function gives the result of an operator
    (`return (x + 1.0) * (high - low) / 2 + low`): a number or a tensor,
    never a layer or a model."""
    returned = [
        s.value
        for s in iter_statements(node.body, into_definitions=False)
        if isinstance(s, ast.Return)
    ]
    return bool(returned) and all(isinstance(v, (ast.BinOp, ast.UnaryOp)) for v in returned)


def _computes_tensors(value: ast.expr, resolve: Callable[[ast.AST], str | None]) -> bool:
    """A call whose result, unpacked, gives tensors: a TensorFlow op, or
    one of those that return several (`tf.unique_with_counts`, `tf.split`)."""
    return isinstance(value, ast.Call) and (
        _computes_tensor(value, resolve) or resolve(value.func) in MULTI_TENSOR_FUNCTIONS
    )


def _computes_tensor(value: ast.expr, resolve: Callable[[ast.AST], str | None]) -> bool:
    """A call of a TensorFlow op, or of a Keras loss object built on the
    spot (`keras.losses.MeanSquaredError()(y, p)`)."""
    if not isinstance(value, ast.Call):
        return False
    if is_tensor_op(resolve(value.func)):
        return True
    built = value.func
    return isinstance(built, ast.Call) and is_loss_class(resolve(built.func))


def returns_model(
    node: ast.FunctionDef | ast.AsyncFunctionDef, resolve: Callable[[ast.AST], str | None]
) -> bool:
    """Every `return` of the function gives a Keras model it builds: `return
    keras.Model(inputs, outputs)`, or `model = keras.Sequential([...])`;
    `return model`, or a tuple of such (`return actor, critic`). What a
    caller binds its result to is a model (`self.encoder =
    self.get_encoder()`; `self.actor, self.critic = build(...)`)."""
    return _every_return_gives(
        node,
        lambda value: isinstance(value, ast.Call) and builds_keras_model(resolve(value.func)),
        False,
        tuples=True,
    )


def returned_builder_calls(
    node: ast.FunctionDef | ast.AsyncFunctionDef, resolve: Callable[[ast.AST], str | None]
) -> tuple[str, ...]:
    """The callees, as `resolve` names them, when every `return` of the
    function gives the result of a call (or a tuple of such: `return actor,
    critic` after `actor = get_actor(...)`); empty otherwise. Whether they
    build models is a project fact: a function composing the builders of
    other modules builds models too (`keras_classes.model_builder_reads`)."""
    callees: list[str] = []

    def made_by(value: ast.expr) -> bool:
        name = resolve(value.func) if isinstance(value, ast.Call) else None
        if name in _PLAIN_RESULTS:
            return True  # `len(models)`: a number beside the models
        if name:
            callees.append(name)
        return bool(name)

    if not _every_return_gives(node, made_by, False, tuples=True, literals=True):
        return ()
    return tuple(dict.fromkeys(callees))


def returned_parts(
    node: ast.FunctionDef | ast.AsyncFunctionDef, resolve: Callable[[ast.AST], str | None]
) -> tuple[str, ...]:
    """Per position of the tuple the function returns, the callee whose
    result stands there (`return actor, critic` after `actor =
    get_actor(...)` and `critic = get_critic(...)`: `("get_actor",
    "get_critic")`), when every `return` gives such a tuple with the same
    callees; empty otherwise. A caller unpacking the result (`actor, critic
    = get_model(...)`) holds in each name what that callee built."""
    statements = list(iter_statements(node.body, into_definitions=False))
    bound: dict[str, list[ast.expr]] = {}
    for statement in statements:
        if isinstance(statement, ast.Assign):
            for target in statement.targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        value = statement.value if target is name else ast.Constant(None)
                        bound.setdefault(name.id, []).append(value)
    parts: tuple[str, ...] | None = None
    for statement in statements:
        if not isinstance(statement, ast.Return):
            continue
        value = statement.value
        if not isinstance(value, ast.Tuple):
            return ()
        found = []
        for element in value.elts:
            if isinstance(element, ast.Name) and len(bound.get(element.id, ())) == 1:
                element = bound[element.id][0]
            callee = resolve(element.func) if isinstance(element, ast.Call) else None
            if not callee:
                return ()
            found.append(callee)
        if parts is not None and tuple(found) != parts:
            return ()
        parts = tuple(found)
    return parts or ()


# Builtins whose result is a plain Python value, never a model.
_PLAIN_RESULTS = frozenset({"len", "int", "float", "str", "bool"})


_LIBRARY_ROOTS = ("tensorflow.", "keras.", "tf_keras.", "numpy.", "math.")


def training_layer_reads(
    node: ast.AST, resolve: Callable[[ast.AST], str | None]
) -> tuple[bool, tuple[str, ...]]:
    """Whether a model builder's model (or the layers a block function
    builds on its inputs) may compute otherwise with `training=True` as far
    as Keras' own layers tell (one that depends on it: `Dropout`,
    `BatchNormalization`, a recurrent layer with `dropout=`, a `Lambda` of
    anything but TensorFlow ops), and the project functions and classes it
    calls or wraps in a `Lambda`, whose layers the project facts judge.
    `TextEncoder` stacking an `Embedding` and a `Bidirectional(LSTM(8))`
    reads nothing. `node` is the builder, or the expression building a
    model (`Sequential([...])`)."""
    parts: list[str] = []
    # Names the builder binds: a method of one (`model.add(...)` on the
    # `Sequential` it builds) builds what its arguments build, seen here.
    local = {
        n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
    for call in ast.walk(node):
        if not isinstance(call, ast.Call):
            continue
        name = resolve(call.func) or ""
        path = keras_path(name)
        if path is None:
            head, dot, _ = name.partition(".")
            if dot and head in local:
                continue
            if name and name not in BUILTIN_NAMES and not name.startswith(_LIBRARY_ROOTS):
                parts.append(name)  # a project function or class
            continue
        leaf = path.rpartition(".")[2]
        if not path.startswith("layers.") or leaf in WRAPPER_LAYERS:
            continue
        if leaf == "Lambda":
            body = call.args[0] if call.args else None
            wrapped = _project_function(body, local, resolve)
            if wrapped is not None:
                # `Lambda(ada_in)`: a function of the project, judged by the
                # project facts as what it calls.
                parts.append(LAMBDA_PART + wrapped)
            elif not isinstance(body, ast.Lambda) or lambda_reads_training(
                resolve(c.func) for c in ast.walk(body.body) if isinstance(c, ast.Call)
            ):
                return True, ()
        elif layer_reads_training(leaf, (kw.arg for kw in call.keywords)):
            return True, ()
    return False, tuple(dict.fromkeys(parts))


def _project_function(
    node: ast.expr | None, local: set[str], resolve: Callable[[ast.AST], str | None]
) -> str | None:
    """The function of the project a name passed as a value refers to
    (`Lambda(ada_in)`), as the module names it; None for a local name, a
    library's function or anything else."""
    if not isinstance(node, ast.Name) or node.id in local:
        return None
    name = resolve(node) or node.id
    return None if name.startswith(_LIBRARY_ROOTS) else name


def _reaching_value(body: list[ast.stmt], returned: ast.Return) -> ast.expr | None:
    """What a `return name` at the top of the function's body gives when
    the last statement before it that binds `name` assigns it plainly
    (`p_hat = tf.stack(p_hat)`, then `return p_hat`): that value, whatever
    earlier bindings gave. None when a statement in between may rebind it
    (a loop, a branch) or the return is elsewhere."""
    if returned not in body or not isinstance(returned.value, ast.Name):
        return None
    binding = _last_binding(body[: body.index(returned)], returned.value.id)
    return binding.value if isinstance(binding, ast.Assign) else None


def _every_return_gives(
    node: ast.FunctionDef | ast.AsyncFunctionDef,
    made_by: Callable[[ast.expr], bool],
    arithmetic: bool,
    tuples: bool = False,
    unpacked: Callable[[ast.expr], bool] | None = None,
    literals: bool = False,
    own_functions: bool = False,
) -> bool:
    """Every `return` of the function gives a value (a call or an
    attribute) `made_by` accepts: directly, through a name every binding
    of the function's scope gives one, or (`arithmetic`: the kind is closed
    under it, as tensors are) through arithmetic on one; with `tuples`,
    each element of a tuple it returns does; with `unpacked`, each name
    unpacked from a value it accepts (`_, _, count = tf.unique_with_counts(x)`);
    with `literals`, a literal (`0`, `[]`) is accepted too (the epoch and
    the list a builder returns beside its models); with `own_functions`, a
    function it defines (the `grad` a `tf.custom_gradient` returns)."""
    statements = list(iter_statements(node.body, into_definitions=False))
    returned = [
        _reaching_value(node.body, s) or s.value for s in statements if isinstance(s, ast.Return)
    ]
    if tuples:
        returned = [
            element
            for value in returned
            for element in (value.elts if isinstance(value, ast.Tuple) else [value])
        ]
    shapes = (*_EVIDENT_SHAPES, *_LITERALS) if literals else _EVIDENT_SHAPES
    if not returned or not all(isinstance(v, shapes) for v in returned):
        return False  # most functions: no return, or one of another shape
    # A parameter is a binding too: `return x` after `if ...: x = tf.op(x)`
    # may give the argument back.
    bound: dict[str, list[ast.expr]] = {
        a.arg: [ast.Constant(None)]
        for a in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
    }
    for statement in statements:
        if isinstance(statement, _SCOPES):
            if own_functions and not isinstance(statement, ast.ClassDef):
                bound.setdefault(statement.name, []).append(_UNPACKED)
            continue
        if isinstance(statement, ast.Assign):
            for target in statement.targets:
                single = isinstance(target, ast.Name)
                # `_, _, count = tf.unique_with_counts(x)`: the results of a
                # call `unpacked` accepts are each what `made_by` asks for.
                each = not single and unpacked is not None and unpacked(statement.value)
                # Only the names the tuple binds directly (not `*rest`, a
                # list, nor names read inside a subscript target).
                direct = (
                    {e.id for e in target.elts if isinstance(e, ast.Name)}
                    if each and isinstance(target, (ast.Tuple, ast.List))
                    else set()
                )
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        if name.id in direct:
                            value = _UNPACKED
                        else:
                            value = statement.value if single else target
                        bound.setdefault(name.id, []).append(value)
        elif isinstance(statement, ast.AugAssign) and isinstance(statement.target, ast.Name):
            # `loss += term` binds `loss + term`.
            value = ast.BinOp(statement.target, statement.op, statement.value)
            bound.setdefault(statement.target.id, []).append(value)
        elif isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            value = statement.value if statement.value is not None else ast.Constant(None)
            bound.setdefault(statement.target.id, []).append(value)
        elif isinstance(statement, (ast.AugAssign, ast.AnnAssign, ast.For, ast.With)):
            # Loop and `with` targets, subscripted bindings: of
            # a value not read here.
            targets = [getattr(statement, "target", None)]
            targets += [i.optional_vars for i in getattr(statement, "items", ())]
            for target in targets:
                for name in ast.walk(target) if target is not None else ():
                    if isinstance(name, ast.Name):
                        bound.setdefault(name.id, []).append(ast.Constant(None))

    # Names whose bindings are being read: a binding that reads the name
    # itself (`dice = dice * scale`) gives what the others give.
    reading: set[str] = set()

    def evident(expr: ast.expr | None, depth: int = 0) -> bool:
        if expr is _UNPACKED:
            return True
        if expr is None or depth > 8:
            return False
        if literals and isinstance(expr, _LITERALS):
            return True
        if isinstance(expr, (ast.Call, ast.Attribute)):
            return made_by(expr)
        if isinstance(expr, ast.BinOp) and arithmetic:
            return evident(expr.left, depth + 1) or evident(expr.right, depth + 1)
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
            return arithmetic and evident(expr.operand, depth + 1)
        if isinstance(expr, ast.Name):
            if expr.id in reading:
                return True
            values = bound.get(expr.id, [])
            reading.add(expr.id)
            try:
                return bool(values) and all(evident(value, depth + 1) for value in values)
            finally:
                reading.discard(expr.id)
        return False

    return all(evident(value) for value in returned)


# The binding of a name unpacked from a value `_every_return_gives`'s
# `unpacked` accepts: evident by itself.
_UNPACKED = ast.Constant(value=None)
# What a return value can be to be evident by `_every_return_gives`'s reading.
_EVIDENT_SHAPES = (ast.Call, ast.Attribute, ast.BinOp, ast.UnaryOp, ast.Name)
_LITERALS = (ast.Constant, ast.List, ast.Dict)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


# What a model's variables are read as (`VARIABLE_LISTS`, measured from
# Keras): gradients with respect to them are an update's (gradients with
# respect to an input, `tape.gradient(q, actions)`, are not).


def gradient_sources(node: ast.AST) -> ast.expr | None:
    """What a gradient is taken with respect to: `sources` of
    `tape.gradient(target, sources)`, `var_list` of `optimizer.minimize(loss,
    var_list, tape=tape)`; None for any other call."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return None
    keyword = {"gradient": "sources", "minimize": "var_list"}.get(node.func.attr)
    if keyword is None:
        return None
    given = next((kw.value for kw in node.keywords if kw.arg == keyword), None)
    return given if given is not None else (node.args[1] if len(node.args) > 1 else None)


def _gradient_call(node: ast.AST, variable_methods: frozenset[str] = frozenset()) -> bool:
    """`tape.gradient(loss, model.trainable_variables)`: gradients for the
    variables of a model, also as a method of `variable_methods` returns
    them (`self.training_variables()`), or for what the object holds
    (`self.params`, the variables a physics-informed net keeps in a list),
    not for inputs the function was given or computed (`tape.gradient(u,
    x)`, a derivative of the output)."""
    if not (isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "gradient"):
        return False
    sources = gradient_sources(node)
    if sources is None:
        return False
    held = sources.elts if isinstance(sources, (ast.List, ast.Tuple)) else [sources]
    if all(is_self_attribute(item) for item in held):
        return True
    return any(
        (isinstance(part, ast.Attribute) and part.attr in VARIABLE_LISTS)
        or (
            isinstance(part, ast.Call)
            and is_self_attribute(part.func)
            and part.func.attr in variable_methods  # type: ignore[attr-defined]
        )
        for part in ast.walk(sources)
    )


def returns_variables(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Every `return` gives a model's variables: `return
    self.model.trainable_variables`, or a name bound to them. What a
    caller differentiates with respect to it is a model's variables."""
    return _every_return_gives(
        node,
        lambda value: isinstance(value, ast.Attribute) and value.attr in VARIABLE_LISTS,
        False,
    )


def opens_tape(
    node: ast.AST, resolve: Callable[[ast.AST], str | None] = lambda n: dotted(n)
) -> bool:
    """A `with tf.GradientTape() as tape:` block (`vocabulary.is_gradient_tape`,
    asked on an `ast` node). `resolve` names what an item calls: through the
    file's imports in pass 1, as spelled elsewhere (verify)."""
    if not isinstance(node, ast.With):
        return False
    for item in node.items:
        expr = item.context_expr
        if is_gradient_tape(resolve(expr.func if isinstance(expr, ast.Call) else expr)):
            return True
    return False


class FunctionFacts:
    """The visitor's part that records the facts of the function being
    visited (`function_stack[-1]`); some are decided once its body, or the
    whole file, is visited."""

    index: ModuleIndex
    resolve: Callable[[ast.AST], str | None]
    function_stack: list[FunctionInfo]
    mentions_batch: bool
    mentions_walrus: bool
    loop_stack: list[bool]
    graph_loops: list[bool]
    unset_guards: list[frozenset[str]]
    mutated_names: list[list[tuple[str, bool]]]
    batched_names: list[set[str]]
    applied_names: list[dict[str, str]]
    branch_reads: list[tuple[FunctionInfo, frozenset[str]]]
    branch_tests: list[list[ast.expr]]
    functions_with_tests: list[
        tuple[FunctionInfo, ast.FunctionDef | ast.AsyncFunctionDef, list[ast.expr]]
    ]
    logger_names: set[str]
    module_instances: dict[str, str]

    def _record_default_calls(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        """Calls in a function's defaults and annotations: they run when its
        `def` does (see `ModuleIndex.default_calls`)."""
        args = node.args
        evaluated = [
            *args.defaults,
            *(d for d in args.kw_defaults if d is not None),
            *(
                a.annotation
                for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg)
                if a is not None and a.annotation is not None
            ),
        ]
        if node.returns is not None:
            evaluated.append(node.returns)
        for part in evaluated:
            if part.__class__ in _ATOMS:
                continue
            for inner in ast.walk(part):
                if isinstance(inner, ast.Call):
                    callee = self.resolve(inner.func)
                    if callee:
                        self.index.default_calls.add(callee)

    def _mark(self, fact: str) -> None:
        if self.function_stack:
            setattr(self.function_stack[-1], fact, True)

    def _branch(self, test: ast.expr) -> None:
        """A condition of the function being visited: decided at the end of
        the file (`_decide_branches`), once every import and every `self`
        attribute assigned from a call are known."""
        if self.function_stack:
            self.branch_tests[-1].append(test)

    def decide_branches(self) -> None:
        """Whether each function branches on a tensor (what TFR101 looks at):
        not when every condition is a Python value (`python_conditions`),
        given the `self` attributes read hold no variable (left in
        `branch_reads`, checked last) and the project proves no parameter
        read a tensor (`FunctionInfo.condition_params`, checked by TFR101)."""
        conditions = PythonConditions(
            self.resolve, self.index.imports, self.mentions_walrus, frozenset(self.module_instances)
        )
        for info, node, tests in self.functions_with_tests:
            known = conditions.of_function(node, tests)
            if known is None:
                info.branches = True
                continue
            info.condition_params = known.params
            if known.self_reads:
                self.branch_reads.append((info, known.self_reads))

    def _record_target(self, target: ast.AST) -> None:
        """Attribute and item writes the TFR2xx rules test before parsing."""
        if isinstance(target, ast.Attribute):
            if self.function_stack and isinstance(target.value, ast.Name):
                if target.value.id == "self":
                    self.function_stack[-1].self_writes.add(target.attr)
                    self._self_change(target.attr)
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            self.index.item_writes.add(target.value.id)
        elif isinstance(target, ast.Subscript) and self.function_stack:
            held = held_container(target.value)
            if held is not None:
                self.function_stack[-1].self_item_writes.add(held)
                self._self_change(held)

    def _self_change(self, attr: str) -> None:
        """`self.<attr>` (or its items) changed, as state every call changes
        unless the `if` around tests it unset (set-up run once)."""
        if not any(attr in guard for guard in self.unset_guards):
            self.function_stack[-1].self_changes.add(attr)

    def _record_named_attribute_write(self, target: ast.expr) -> None:
        """`Schedule.margin = ...`, or `cls.margin = ...` in a method of
        `Schedule` (a classmethod rebinding its class's attribute)."""
        if not isinstance(target, ast.Attribute) or not isinstance(target.value, ast.Name):
            return
        owner = target.value.id
        if owner == "cls":
            cls = self._method_class()
            if cls is not None:
                self.index.named_attribute_writes.add(cls.qualname)
        elif owner != "self":
            self.index.named_attribute_writes.add(owner)

    def _method_class(self) -> ClassInfo | None:
        """The class whose method (or a function nested in one) is being visited."""
        if not self.function_stack or self.function_stack[0].class_name is None:
            return None
        return self.index.classes.get(self.function_stack[0].class_name)

    def _feeds_short_batch(self, source: ast.AST) -> bool:
        if isinstance(source, ast.Call) and dotted(source.func) in ("enumerate", "zip", "iter"):
            return any(self._feeds_short_batch(arg) for arg in source.args)
        if isinstance(source, ast.Name) and any(source.id in names for names in self.batched_names):
            return True
        if isinstance(source, ast.Call) and dotted(source.func) == "range" and source.args[2:]:
            step = source.args[2]
            return not (isinstance(step, ast.Constant) and step.value == 1)
        return self.mentions_batch and batch_keeps_remainder(source)

    def _applied_batcher(self, name: str) -> str | None:
        """The function of another module or object that `name`'s dataset
        went through (`ds.apply(input_pipeline.prepare)`), in the innermost
        scope binding it."""
        for scope in reversed(self.applied_names):
            if name in scope:
                return scope[name]
        return None

    def _may_range_over_tensor(self, iterated: ast.expr) -> bool:
        """A `for` AutoGraph may run as a `tf.while_loop`: over `tf.range(...)`
        (any `<module>.range(...)`, whatever the alias)."""
        if not isinstance(iterated, ast.Call):
            return False
        func = iterated.func
        return (isinstance(func, ast.Attribute) and func.attr == "range") or (
            self.resolve(func) == "tensorflow.range"
        )

    def _mutation(self, receiver: ast.expr) -> None:
        """A mutating method call: on `self.attr` it may mutate outside
        state; on a name, decided at the end of the function, once its
        locals are known (`_decide_mutations`)."""
        held = held_container(receiver)
        if held is not None:
            self.function_stack[-1].self_item_writes.add(held)
            self._self_change(held)
        if isinstance(receiver, ast.Attribute) and is_self_attribute(receiver):
            self.function_stack[-1].mutates_outside = True
        elif isinstance(receiver, ast.Name):
            in_graph_loop = any(self.graph_loops)
            self.mutated_names[-1].append((receiver.id, in_graph_loop))

    def _decide_mutations(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef, info: FunctionInfo
    ) -> None:
        mutated = self.mutated_names.pop()
        if not mutated:
            return
        # A module (`ops.add(x, y)`) is no container TFR202 looks at.
        known = own_local_names(node, self.mentions_walrus) | self.index.imports.keys()
        outside = {name for name, _ in mutated if name not in known}
        # Items of an outside container changed in place (`cfg.update(...)`),
        # as `cfg[k] = v` is: what traced code reads of it may be frozen.
        self.index.item_writes.update(outside)
        if outside:
            info.writes_state = True
        if any(in_loop for _, in_loop in mutated):
            info.mutates_outside = True  # a graph loop's own list, maybe: TFR202 decides
        elif outside:
            info.mutates_outside = True

    def record_logger(self, node: ast.Assign) -> None:
        """`logger = logging.getLogger(__name__)` at module level: calls of
        `logger.info(...)` are Python logging."""
        if isinstance(node.value, ast.Call) and is_logger_factory(self.resolve(node.value.func)):
            self.logger_names.update(t.id for t in node.targets if isinstance(t, ast.Name))

    def _is_logging_call(self, func: ast.Attribute, callee: str | None) -> bool:
        """`logging.info(...)`, `tf.get_logger().info(...)`, `logger.info(...)`."""
        if func.attr not in LOG_METHODS:
            return False
        receiver = func.value
        logger = (
            isinstance(receiver, ast.Call) and is_logger_factory(self.resolve(receiver.func))
        ) or (isinstance(receiver, ast.Name) and receiver.id in self.logger_names)
        return is_logging_call(func.attr, callee, logger)
