"""NumPy arrays that the loops calling a train step pass to it, argument by
argument, and whether the step's use of each one lets Keras convert it.

Eagerly, a float64 NumPy array that meets a float32 tensor (`y -
model(x)`) is converted to float32, the dtype of the tensor it meets.
Traced, `tf.function` first turns the array argument into a tensor of its
own dtype, and `float64 - float32` raises "Input 'y' of 'Sub' Op has type
float32 that does not match type float64 of argument 'x'" (measured on
tensorflow-cpu 2.21; `tf.subtract` and `tf.math.squared_difference` raise
alike). Keras converts what it is handed: a Keras model casts floating inputs
to its compute dtype, and a Keras `Loss` object casts `y_true` and `y_pred`
to its dtype, so `model(x64)` and `MeanSquaredError()(y64, pred)` give the
same values eagerly and traced.

The arrays seen here are the ones the file shows: a name bound to a NumPy
constructor without a float32 dtype (`numpy_arguments.numpy_arrays`:
`np.random.rand(n, 4)`, `np.zeros(n)`, `np.array([...])`), to `.astype(...)`
of any dtype but float32, to a slice or an item of such an array, and such
an expression passed in the call itself (`train_step(X[i : i + 16],
Y[i : i + 16])`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import libcst as cst

from tfrewrite.facts.bindings import (
    all_params,
    iter_assignments,
    positional_param_names,
    split_target,
)
from tfrewrite.facts.context import FunctionScope, RuleContext
from tfrewrite.facts.keras_names import builds_keras_model, keras_path
from tfrewrite.facts.names import dotted_name
from tfrewrite.facts.numpy_arguments import numpy_arrays
from tfrewrite.facts.tensor_kinds import is_python_number
from tfrewrite.facts.training import calls_to, method_name, value_sources
from tfrewrite.facts.walk import iter_nodes

# NumPy constructors whose result is float64 unless a dtype says otherwise.
_FLOAT64_BY_DEFAULT = frozenset(
    {
        "numpy.zeros", "numpy.ones", "numpy.empty", "numpy.eye", "numpy.identity",
        "numpy.linspace", "numpy.random.rand", "numpy.random.randn",
        "numpy.random.random", "numpy.random.random_sample", "numpy.random.sample",
        "numpy.random.normal", "numpy.random.uniform", "numpy.random.standard_normal",
    }
)  # fmt: skip
# Dtype spellings that are not the dtype's name (`float` and `np.double` are float64).
_SPELLED = {
    "f4": "float32", "single": "float32", "f8": "float64", "double": "float64",
    "float": "float64", "int": "int64", "i8": "int64", "i4": "int32",
}  # fmt: skip
# TensorFlow functions that take an array of any dtype as a tensor of its
# dtype, eagerly as traced (measured for int64 and float64 arrays).
_ANY_DTYPE = frozenset(
    {
        "tensorflow.cast", "tensorflow.reshape", "tensorflow.squeeze",
        "tensorflow.expand_dims", "tensorflow.identity", "tensorflow.convert_to_tensor",
        "tensorflow.reduce_sum", "tensorflow.reduce_mean", "tensorflow.reduce_max",
        "tensorflow.reduce_min", "tensorflow.shape",
    }
)  # fmt: skip
# TensorFlow functions whose first argument is integer indices.
_INTEGER_INPUT = frozenset({"tensorflow.one_hot"})
_DTYPES = frozenset(
    {
        "float16", "bfloat16", "float32", "float64", "double", "int8", "int16", "int32",
        "int64", "uint8", "uint16", "uint32", "uint64", "bool", "complex64", "complex128",
        "string",
    }
)  # fmt: skip
# How deep a chain of names (`y = Y[i]`, `Y = data.astype("float64")`) is followed.
_DEPTH = 4
# The Keras classes whose subclasses are layers and models.
_KERAS_MODEL_LEAVES = frozenset({"Model", "Layer", "Sequential"})


@dataclass(frozen=True)
class ArrayArgument:
    """A NumPy array, not float32, that a loop hands to a step's parameter."""

    param: str
    name: str  # what the file calls the array where it is made (`Y`)
    made: cst.CSTNode  # the expression that makes it
    dtype: str | None  # "float64" when known; None when only "not float32" is

    @property
    def described(self) -> str:
        """`a float64 NumPy array`, or `a NumPy array that is not float32`."""
        if self.dtype is not None:
            article = "an" if self.dtype[:1] in "aeiou" else "a"
            return f"{article} {self.dtype} NumPy array"
        return "a NumPy array that is not float32"


def step_array_arguments(
    ctx: RuleContext, function: FunctionScope, loops: Sequence[cst.For | cst.While]
) -> dict[str, ArrayArgument]:
    """Parameter -> the NumPy array (not float32) a call of `function` in one
    of `loops` passes for it; the first such call decides."""
    name = function.node.name.value
    found: dict[str, ArrayArgument] = {}
    resolvers: dict[int, _Arrays] = {}
    for loop in loops:
        for call in calls_to(loop.body, name):
            home = enclosing_function(ctx, call)
            key = id(home)
            if key not in resolvers:
                resolvers[key] = _Arrays(ctx, home)
            arrays = resolvers[key]
            for param, value in _passed(call, function).items():
                if param in found:
                    continue
                array = arrays.of(value, _DEPTH)
                if array is not None:
                    found[param] = ArrayArgument(param, *array)
    return found


def unconverted_uses(
    ctx: RuleContext, function: FunctionScope, param: str, dtype: str | None
) -> list[cst.CSTNode]:
    """The places where the step reads `param` other than as an argument of
    a Keras model or a Keras `Loss` object (which convert it alike eagerly and
    traced) or the only tensor of a TensorFlow function that treats an array
    as a tensor of its dtype (`tf.cast(y, tf.float32)`): `loss_fn(y, pred)`
    of a function tfrewrite cannot see, `tf.subtract(y, pred)`. `dtype`:
    the array's, when known."""
    if _cast_first(ctx, function.node, param, dtype):
        return []
    owner = ctx.class_of(function)
    owner_name = owner[0] if owner is not None else None
    # Attribute names, keywords and binding targets: not reads of `param`.
    excluded: set[int] = {
        id(n)
        for target, _, _ in iter_assignments(function.node.body)
        for n in iter_nodes(target)
        if isinstance(n, cst.Name)
    }
    converted: set[int] = set()
    for node in iter_nodes(function.node.body, into_functions=False):
        if isinstance(node, cst.Attribute):
            excluded.add(id(node.attr))
        elif isinstance(node, cst.Arg) and node.keyword is not None:
            excluded.add(id(node.keyword))
        elif isinstance(node, cst.Call) and _converts_inputs(ctx, node.func, owner_name):
            converted.update(
                id(a.value) for a in node.args if isinstance(a.value, cst.Name) and not a.star
            )
        elif isinstance(node, cst.Call) and _same_either_way(ctx, node, dtype):
            converted.add(id(node.args[0].value))
    return [
        node
        for node in iter_nodes(function.node.body, into_functions=False)
        if isinstance(node, cst.Name)
        and node.value == param
        and id(node) not in excluded
        and id(node) not in converted
    ]


def _cast_first(ctx: RuleContext, function: cst.FunctionDef, param: str, dtype: str | None) -> bool:
    """Whether the step's first statement (after a docstring) is `param =
    tf.cast(param, ...)`: every later read sees the cast tensor."""
    body = list(getattr(function.body, "body", ()))
    if body and isinstance(body[0], cst.SimpleStatementLine):
        first = body[0].body[0] if body[0].body else None
        if isinstance(first, cst.Expr) and isinstance(first.value, cst.SimpleString):
            body = body[1:]
    if not body or not isinstance(body[0], cst.SimpleStatementLine):
        return False
    for small in body[0].body:
        if (
            isinstance(small, cst.Assign)
            and len(small.targets) == 1
            and isinstance(small.targets[0].target, cst.Name)
            and small.targets[0].target.value == param
            and isinstance(small.value, cst.Call)
            and ctx.names.qualified_name(small.value.func) == "tensorflow.cast"
            and _same_either_way(ctx, small.value, dtype)
            and isinstance(small.value.args[0].value, cst.Name)
            and small.value.args[0].value.value == param
        ):
            return True
    return False


def _same_either_way(ctx: RuleContext, call: cst.Call, dtype: str | None) -> bool:
    """Whether `call` treats a NumPy array passed first, its only tensor
    argument, as a tensor of the array's dtype, eagerly as traced: a
    TensorFlow function that takes any dtype (`tf.cast(y, tf.float32)`,
    `tf.reshape(y, [-1])`, measured on tensorflow-cpu 2.21), or one that
    takes integer indices handed an integer array (`tf.one_hot(a, 2)`;
    eagerly a float64 array is converted to indices, traced it raises)."""
    qualified = ctx.names.qualified_name(call.func) or ""
    qualified = qualified.replace("tensorflow.math.", "tensorflow.")
    if qualified in _ANY_DTYPE:
        pass
    elif qualified in _INTEGER_INPUT:
        if dtype is None or not dtype.startswith(("int", "uint")):
            return False
    else:
        return False
    if not call.args or call.args[0].keyword is not None or call.args[0].star:
        return False
    if qualified == "tensorflow.convert_to_tensor" and len(call.args) > 1:
        return False  # a dtype: eagerly the array is converted to it, traced it raises
    return all(_literal(ctx, a.value) for a in call.args[1:] if not a.star)


def _literal(ctx: RuleContext, node: cst.BaseExpression) -> bool:
    """A Python number, string, `True`/`False`/`None`, a TensorFlow dtype, or
    a list or tuple of those: an argument that is no tensor."""
    if is_python_number(node) or isinstance(node, cst.SimpleString):
        return True
    if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
        return True
    if isinstance(node, (cst.List, cst.Tuple)):
        return all(_literal(ctx, e.value) for e in node.elements)
    qualified = ctx.names.qualified_name(node) or ""
    return qualified.startswith("tensorflow.") and qualified.rpartition(".")[2] in _DTYPES


def _converts_inputs(ctx: RuleContext, callee: cst.BaseExpression, owner: str | None) -> bool:
    """Whether calling `callee` converts the arrays it is handed: a Keras
    model (Keras casts floating inputs to the model's compute dtype) or a
    Keras `Loss` object (it casts `y_true` and `y_pred` to its dtype)."""
    if isinstance(callee, cst.Call):
        return _builds_converter(ctx, callee)
    if isinstance(callee, cst.Name):
        if callee.value == "self":
            return _keras_class(ctx, owner)
        found = value_sources(ctx, callee)[1:]
        # What the name is bound to, past the calls of the file's functions
        # whose returns `value_sources` followed (`model = make_model()`).
        sources = [s for s in found if not _followed(ctx, s, found)]
        return bool(sources) and all(
            isinstance(s, cst.Call) and _builds_converter(ctx, s) for s in sources
        )
    receiver = dotted_name(callee) or ""
    head, _, attr = receiver.partition(".")
    if head == "self" and attr and "." not in attr and owner is not None:
        info = ctx.index.classes.get(owner)
        held = info.held_objects.get(attr) if info is not None else None
        if held is None:
            return False
        local = ctx.index.local(held)
        return _keras_class(ctx, local) or _converter_path(keras_path(held))
    return False


def _followed(
    ctx: RuleContext, source: cst.BaseExpression, found: list[cst.BaseExpression]
) -> bool:
    """Whether `source` is a call of a function of the file whose returned
    values are all in `found` (so they, not the call, say what it makes)."""
    if not isinstance(source, cst.Call) or _builds_converter(ctx, source):
        return False
    returns = value_sources(ctx, source, 1)[1:]
    return bool(returns) and all(any(r is f for f in found) for r in returns)


def _builds_converter(ctx: RuleContext, call: cst.Call) -> bool:
    """`tf.keras.Sequential([...])`, `keras.losses.MeanSquaredError()`, or a
    class of the file that derives from a Keras model or layer."""
    if _converter_path(keras_path(ctx.names.qualified_name(call.func))):
        return True
    return _keras_class(ctx, dotted_name(call.func))


def _converter_path(path: str | None) -> bool:
    """A Keras path (`losses.MeanSquaredError`) that names a model class or a
    `Loss` class; not a loss function such as `losses.mse`."""
    if path is None:
        return False
    leaf = path.rsplit(".", 1)[-1]
    if path.startswith("losses.") and leaf[:1].isupper():
        return True
    return builds_keras_model(f"keras.{path}")


def _keras_class(ctx: RuleContext, name: str | None) -> bool:
    """Whether `name` is a class of the file deriving (through classes of the
    file) from a Keras `Model` or `Layer`."""
    return ctx.index.derives_from_keras(name or "", _KERAS_MODEL_LEAVES)


def _passed(call: cst.Call, function: FunctionScope) -> dict[str, cst.BaseExpression]:
    """Parameter -> the expression `call` passes for it."""
    positional = positional_param_names(function.node)
    if function.is_method and positional:
        positional = positional[1:]
    passed: dict[str, cst.BaseExpression] = {}
    for position, arg in enumerate(call.args):
        if arg.star:
            break
        if arg.keyword is not None:
            passed[arg.keyword.value] = arg.value
        elif position < len(positional):
            passed[positional[position]] = arg.value
    return passed


class _Arrays:
    """Which expressions of one scope (a function, or the module) are NumPy
    arrays that are not float32; names the scope does not bind are the
    module's."""

    def __init__(self, ctx: RuleContext, home: cst.FunctionDef | None) -> None:
        self.ctx = ctx
        self.home = home
        self._bindings: dict[int, dict[str, list[cst.BaseExpression | None]]] = {}
        self._numpy: dict[int, dict[str, cst.CSTNode]] = {}

    def of(
        self, expr: cst.BaseExpression, depth: int
    ) -> tuple[str, cst.CSTNode, str | None] | None:
        """(name, where it is made, dtype) when `expr` is such an array."""
        if depth < 0:
            return None
        if isinstance(expr, cst.Subscript):
            return self.of(expr.value, depth - 1)  # a slice or an item keeps the dtype
        if isinstance(expr, cst.Call) and method_name(expr) == "astype" and expr.args:
            dtype = _dtype_name(self.ctx, expr.args[0].value)
            if dtype is None or dtype == "float32":
                return None
            receiver = dotted_name(expr.func.value) or "the array"  # type: ignore[attr-defined]
            return receiver, expr, dtype
        if isinstance(expr, cst.Name):
            return self._name(expr.value, depth)
        return None

    def _name(self, name: str, depth: int) -> tuple[str, cst.CSTNode, str | None] | None:
        scope: cst.CSTNode = self.ctx.module
        if self.home is not None and name in self._scope_bindings(self.home):
            scope = self.home
        made = self._numpy_made(scope).get(name)
        if made is not None:
            return name, made, _constructor_dtype(self.ctx, made)
        values = self._scope_bindings(scope).get(name)
        if not values:
            return None
        found: tuple[str, cst.CSTNode, str | None] | None = None
        for value in values:
            array = self.of(value, depth - 1) if value is not None else None
            if array is None:
                return None  # every binding must be such an array (not a loop target)
            if array[1] is value:  # made here (`Y = labels.astype("float64")`): it is `Y`
                array = (name, value, array[2])
            found = found or array
        return found

    def _scope_bindings(self, scope: cst.CSTNode) -> dict[str, list[cst.BaseExpression | None]]:
        """Name -> the values `scope` binds it to (None: not known); augmented
        assignments (`Y *= 2`) keep a NumPy array's dtype and are left out."""
        if id(scope) not in self._bindings:
            bindings: dict[str, list[cst.BaseExpression | None]] = {}
            for target, value, augmented in iter_assignments(scope):
                if augmented:
                    continue
                known = None if isinstance(value, cst.For) else value
                for name, part, index in split_target(target, known):
                    bindings.setdefault(name, []).append(part if index is None else None)
            if isinstance(scope, cst.FunctionDef):
                for param in all_params(scope.params):
                    bindings.setdefault(param.name.value, []).append(None)
            self._bindings[id(scope)] = bindings
        return self._bindings[id(scope)]

    def _numpy_made(self, scope: cst.CSTNode) -> dict[str, cst.CSTNode]:
        if id(scope) not in self._numpy:
            self._numpy[id(scope)] = numpy_arrays(self.ctx, scope)
        return self._numpy[id(scope)]


def _constructor_dtype(ctx: RuleContext, made: cst.CSTNode) -> str | None:
    """The dtype a NumPy constructor call makes, when the source says it:
    its `dtype=` argument, else float64 for those whose default it is."""
    if not isinstance(made, cst.Call):
        return None
    for arg in made.args:
        if arg.keyword is not None and arg.keyword.value == "dtype":
            return _dtype_name(ctx, arg.value)
    qualified = ctx.names.qualified_name(made.func) or ""
    if qualified in _FLOAT64_BY_DEFAULT:
        return "float64"
    positional = [a.value for a in made.args if a.keyword is None and not a.star]
    if qualified in ("numpy.array", "numpy.asarray") and positional:
        return _literal_dtype(positional[0])
    if qualified == "numpy.arange" and positional:
        kinds = {_literal_dtype(p) for p in positional}
        return kinds.pop() if len(kinds) == 1 else None
    return None


def _literal_dtype(node: cst.BaseExpression) -> str | None:
    """The dtype NumPy gives a literal: int64 for integers, float64 when a
    float is among them; None for anything else (names, calls, bools)."""
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        node = node.expression
    if isinstance(node, cst.Integer):
        return "int64"
    if isinstance(node, cst.Float):
        return "float64"
    if isinstance(node, (cst.List, cst.Tuple)) and node.elements:
        kinds = {_literal_dtype(e.value) for e in node.elements}
        if None in kinds:
            return None
        return "float64" if "float64" in kinds else "int64"
    return None


def _dtype_name(ctx: RuleContext, node: cst.BaseExpression) -> str | None:
    """The dtype `node` spells (`"float64"`, `np.float32`, `float`, `"f4"`),
    or None when the source does not say (a variable)."""
    if isinstance(node, cst.SimpleString):
        text = node.evaluated_value
        return _SPELLED.get(text, text) if isinstance(text, str) else None
    qualified = ctx.names.qualified_name(node) or ""
    package, _, leaf = qualified.rpartition(".")
    if package in ("numpy", "tensorflow", "builtins") and leaf:
        return _SPELLED.get(leaf, leaf)
    return None


def enclosing_function(ctx: RuleContext, node: cst.CSTNode) -> cst.FunctionDef | None:
    """The innermost function of the file whose body holds `node`."""
    found = None
    for scope in ctx.functions:
        if any(n is node for n in iter_nodes(scope.node.body)):
            if found is None or any(n is scope.node for n in iter_nodes(found.body)):
                found = scope.node
    return found
