"""Choices from a population: `np.random.choice` and `random.choice` in
`tf.random` terms.

A choice draws indices into its population and reads the elements there:
`tf.gather(seq, tf.random.uniform(shape, maxval=len, dtype=tf.int32))` for
equal weights, `tf.random.categorical(tf.math.log([p]), k)` for weights `p`,
`tf.random.shuffle(...)[:k]` without replacement. The population must be
known where the code is traced, the way it is where the host draws: an
integer `n` (`range(n)`), or a list or tuple of numbers written in the code
(`[0.1, 0.5]`, or a name bound once to one and never changed in place: the
graph keeps the elements it saw when it was traced).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import libcst as cst

from tfrewrite.facts.bindings import iter_assignments, local_bindings, single_values
from tfrewrite.facts.context import RuleContext
from tfrewrite.facts.walk import iter_with_ancestors
from tfrewrite.rewrite.dtypes import FLOAT, INT, Dtype
from tfrewrite.rewrite.traced_calls import (
    Refusal,
    SampleSite,
    bind,
    is_integer_literal,
    is_none,
)
from tfrewrite.rules.randomness.left_out import left_out_texts
from tfrewrite.rules.randomness.sample_writer import SampleWriter

# NumPy's integer dtype (int64 on every 64-bit platform).
NUMPY_INT = "int64"
# Calls that only read a sequence given to them (`len(CHOICES)`).
_READERS = frozenset({"len", "sum", "max", "min", "sorted", "list", "tuple", "enumerate"})
_QUALIFIED_READERS = frozenset({"random.choice", "random.sample", "numpy.random.choice"})
# How far a literal `p` may be from summing to 1 (NumPy raises beyond it).
_P_TOLERANCE = 1e-8


@dataclass(frozen=True)
class Population:
    """What a choice draws from: `length` elements (source text), the
    integers `range(length)` when `values` is None, else the numbers
    `values` (source text of a list or tuple, or a name bound to one) of
    kind `kind` (`INT` or `FLOAT`)."""

    length: str
    values: str | None
    kind: str
    count: int | None = None  # the number of elements when it is a literal


def integer_population(w: SampleWriter, a: cst.BaseExpression) -> Population | None:
    """`range(n)` for an integer `n` (`np.random.choice(5)`), else None."""
    if w.is_integer(a):
        count = int(a.evaluated_value) if isinstance(a, cst.Integer) else None
        return Population(w.dimension_expression(a), None, INT, count)
    return None


def sequence_population(w: SampleWriter, site: SampleSite, a: cst.BaseExpression) -> Population:
    """The numbers `a` holds: a list or tuple literal of numbers, or a name
    bound once to one that nothing changes in place; `Refusal` otherwise."""
    literal = a
    if isinstance(a, cst.Name):
        literal = _constant_binding(w.ctx, site, a)
    if isinstance(literal, (cst.List, cst.Tuple)) and not literal.elements:
        raise Refusal(f"`{w.code(a)}` is empty: the host raises `IndexError` there")
    kind = _numbers_kind(literal)
    if kind is None:
        raise Refusal(
            f"`{w.code(a)}` is not known to be a list or tuple of numbers: the graph needs "
            "the population where the code is traced"
        )
    assert isinstance(literal, (cst.List, cst.Tuple))
    count = len(literal.elements)
    length = str(count) if literal is a else f"len({w.code(a)})"
    return Population(length, w.code(a), kind, count)


def values_text(w: SampleWriter, population: Population, dtype: Dtype | None, default: str) -> str:
    """The population's numbers as a `tf.gather`/`tf.random.shuffle`
    argument, in `dtype` (None: `default` for integers, TensorFlow's float32
    for floats, as the rewrites of the other samples)."""
    assert population.values is not None
    if dtype is None and population.kind == INT and default != "int32":
        dtype = Dtype(f"{w.tf}.{default}", INT, default)
    if dtype is None:
        return population.values
    return f"{w.tf}.constant({population.values}, dtype={dtype.code})"


def range_text(w: SampleWriter, population: Population, dtype: Dtype | None, default: str) -> str:
    """`tf.range(n, dtype=...)` for an integer population."""
    name = dtype.tf_name if dtype is not None else default
    if name in ("int32", "int64", "float32", "float64"):
        code = dtype.code if dtype is not None else f"{w.tf}.{default}"
        return f"{w.tf}.range({population.length}, dtype={code})"
    assert dtype is not None
    return f"{w.tf}.cast({w.tf}.range({population.length}, dtype={w.tf}.{default}), {dtype.code})"


def indices(w: SampleWriter, population: Population, shape: str) -> str:
    """Equally likely int32 indices into the population, of `shape`."""
    return w.random_call(
        "uniform",
        shape,
        [("maxval", population.length)],
        Dtype(f"{w.tf}.int32", INT, "int32"),
    )


def sample_count(w: SampleWriter, size: cst.BaseExpression | None) -> tuple[str, str]:
    """(number of draws, index reading them) for a categorical draw: `1`
    and `[0, 0]` for a scalar, `k` and `[0]` for `size=k` or `size=(k,)`."""
    if is_none(size):
        return "1", "[0, 0]"
    assert size is not None
    if isinstance(size, cst.Tuple) and len(size.elements) == 1:
        size = size.elements[0].value
    if w.is_integer(size) and not isinstance(size, (cst.Tuple, cst.List)):
        return w.dimension_expression(size), "[0]"
    raise Refusal(
        f"`size={w.code(size)}` is not one integer: a categorical draw makes one row of samples"
    )


def log_weights(w: SampleWriter, p: cst.BaseExpression, population: Population) -> str:
    """`tf.math.log([[...]])`, the logits of the weights `p`. A literal `p`
    must be what NumPy accepts (as many weights as elements, none negative,
    summing to 1): `tf.random.categorical` would normalise what NumPy refuses."""
    if isinstance(p, (cst.List, cst.Tuple)):
        weights = [_number(e.value) for e in p.elements]
        if any(v is None for v in weights):
            return f"{w.tf}.math.log([{w.code(p)}])"
        values = [v for v in weights if v is not None]
        if population.count is not None and len(values) != population.count:
            raise Refusal(
                f"`p` has {len(values)} weights for {population.count} elements: the host "
                "raises `ValueError` there"
            )
        if any(v < 0 for v in values) or not math.isclose(
            sum(values), 1.0, rel_tol=0, abs_tol=_P_TOLERANCE
        ):
            raise Refusal(
                "the weights `p` are negative or do not sum to 1: the host raises `ValueError` "
                "there, `tf.random.categorical` would normalise them"
            )
        inner = ", ".join(w.code(e.value) for e in p.elements)
        return f"{w.tf}.math.log([[{inner}]])"
    return f"{w.tf}.math.log([{w.code(p)}])"


def literal_flag(w: SampleWriter, node: cst.BaseExpression | None, default: bool) -> bool:
    """A literal `True` / `False` argument (`replace=False`)."""
    if node is None:
        return default
    if isinstance(node, cst.Name) and node.value in ("True", "False"):
        return node.value == "True"
    raise Refusal(f"`{w.code(node)}` is not a literal `True` or `False`")


def check_count(population: Population, k: cst.BaseExpression) -> None:
    """Without replacement the host raises for more draws than elements;
    slicing a shuffle would quietly return fewer."""
    if population.count is not None and is_integer_literal(k):
        assert isinstance(k, (cst.Integer, cst.UnaryOperation))
        value = int(cst.Module([]).code_for_node(k))
        if value > population.count or value < 0:
            raise Refusal(
                f"{value} draws without replacement from {population.count} elements: the host "
                "raises `ValueError` there"
            )


# -- np.random.choice ----------------------------------------------------------------


def numpy_choice(w: SampleWriter, site: SampleSite) -> str:
    """`choice(a, size, replace, p)`: equally likely indices, a categorical
    draw for weights `p`, a shuffle's first `k` without replacement."""
    args = bind(site.call, ("a", "size", "replace", "p"), required=1)
    a, size, p = args["a"], args.get("size"), args.get("p")
    replace = literal_flag(w, args.get("replace"), True)
    population = integer_population(w, a) or sequence_population(w, site, a)
    explicit = w.astype_dtype()
    if (
        explicit is None
        and is_none(size)
        and population.values is None
        and w.natural_dtype(INT) is not None
    ):
        # `choice(n)` returns a Python int, which `tf.constant` makes int32.
        explicit = Dtype(f"{w.tf}.int32", INT, "int32")
    dtype, cast_to = w.sample_dtype(population.kind, explicit)
    if not replace and not is_none(size):
        if not is_none(p):
            raise Refusal(
                "weighted draws without replacement (`replace=False` with `p=`) have no "
                "`tf.random` form"
            )
        count, _ = sample_count(w, size)
        assert size is not None
        check_count(population, size.elements[0].value if isinstance(size, cst.Tuple) else size)
        source = (
            range_text(w, population, dtype, NUMPY_INT)
            if population.values is None
            else values_text(w, population, dtype, NUMPY_INT)
        )
        return w.cast(f"{w.shuffle(source)}[:{count}]", cast_to)
    if not is_none(p):
        assert p is not None
        return w.cast(_weighted(w, population, p, size, dtype), cast_to)
    shape = w.shape(size)
    if population.values is None:
        return w.cast(w.integers(shape, None, population.length, dtype, NUMPY_INT), cast_to)
    values = values_text(w, population, dtype, NUMPY_INT)
    return w.cast(f"{w.tf}.gather({values}, {indices(w, population, shape)})", cast_to)


def _weighted(
    w: SampleWriter,
    population: Population,
    p: cst.BaseExpression,
    size: cst.BaseExpression | None,
    dtype: Dtype | None,
) -> str:
    """`tf.random.categorical(tf.math.log([p]), k)`: int64 indices drawn
    with the weights `p`, the sample itself for `range(n)`, else the
    indices into the population's numbers."""
    if w.generator is not None:
        raise Refusal("`tf.random.Generator` has no categorical draw: weights `p` have no form")
    count, index = sample_count(w, size)
    logits = log_weights(w, p, population)
    out = None
    if population.values is None and dtype is not None and dtype.tf_name == "int32":
        out = dtype
    arguments = [logits, count, *([f"dtype={out.code}"] if out is not None else [])]
    if w.seed is not None:
        arguments.append(f"seed={w.seed}")
        call = f"{w.tf}.random.stateless_categorical({', '.join(arguments)})"
    else:
        call = f"{w.tf}.random.categorical({', '.join(arguments)})"
    drawn = f"{call}{index}"
    if population.values is not None:
        return f"{w.tf}.gather({values_text(w, population, dtype, NUMPY_INT)}, {drawn})"
    if dtype is not None and out is None and dtype.tf_name != "int64":
        return f"{w.tf}.cast({drawn}, {dtype.code})"
    return drawn


# -- populations bound to names --------------------------------------------------------


def _constant_binding(ctx: RuleContext, site: SampleSite, name: cst.Name) -> cst.BaseExpression:
    """The one value `name` is bound to (in the site's function, or at
    module level when the function does not bind it), once every reference
    to it is known only to read it."""
    function = site.function
    assert function is not None
    local = single_values(function.node)
    if name.value in local_bindings(function.node) and name.value not in local:
        raise Refusal(
            f"`{name.value}` is bound more than once: the graph needs the population where "
            "the code is traced"
        )
    if name.value in local:
        _refuse_changed(name.value, _changes(ctx, function.node))
        return local[name.value]
    params = {p.name.value for p in function.node.params.params}
    bindings = [
        value
        for target, value, _ in iter_assignments(ctx.module)
        if isinstance(target, cst.Name) and target.value == name.value
    ]
    if name.value in params or len(bindings) != 1 or bindings[0] is None:
        raise Refusal(
            f"`{name.value}` is not bound once to a list or tuple of numbers: the graph needs "
            "the population where the code is traced"
        )
    _refuse_changed(name.value, ctx.module_fact(_changes, lambda module: _changes(ctx, module)))
    for text in _left_out(name.value, ctx):
        try:
            code = cst.parse_module(text)
        except cst.ParserSyntaxError:
            raise Refusal(f"`{name.value}` may be changed in place") from None
        _refuse_changed(name.value, _changes(ctx, code))
    return bindings[0]


def _left_out(name: str, ctx: RuleContext) -> list[str]:
    """The text of each function `check`'s pruned parse left out that names
    `name`, parseable alone (a method's under `if 1:`): a list changed in
    place there is changed all the same."""
    word = re.compile(rf"\b{re.escape(name)}\b")
    return [
        text if not text[:1].isspace() else "if 1:\n" + text
        for text in left_out_texts(ctx)
        if word.search(text)
    ]


def _refuse_changed(name: str, changes: dict[str, str]) -> None:
    if name in changes:
        raise Refusal(
            f"`{name}` may be changed in place (`{changes[name]}`), and the graph keeps the "
            "elements it held when the code was traced"
        )


def _changes(ctx: RuleContext, root: cst.CSTNode) -> dict[str, str]:
    """Each name under `root` with a reference that does not only bind or
    read it (`len(name)`, `name[i]`, a loop over it, a choice from it, a
    `tf.*` op), and the statement holding the first such reference: a list
    changed in place (`name.append(...)`, `random.shuffle(name)`) would
    differ from the elements the graph kept. One walk answers every name."""
    found: dict[str, str] = {}
    for node, ancestors in iter_with_ancestors(root):
        if not isinstance(node, cst.Name) or not ancestors or node.value in found:
            continue
        parent = ancestors[-1]
        if isinstance(parent, cst.AssignTarget) and parent.target is node:
            continue
        if _not_a_reference(node, parent) or _reads(ctx, node, ancestors):
            continue
        statement = next(
            (a for a in reversed(ancestors) if isinstance(a, cst.SimpleStatementLine)), parent
        )
        found[node.value] = ctx.code(statement).strip()
    return found


def _not_a_reference(node: cst.Name, parent: cst.CSTNode) -> bool:
    """`x.name`, `f(name=...)`, a parameter or a `def name`: the same
    spelling, another thing."""
    if isinstance(parent, cst.Attribute) and parent.attr is node:
        return True
    if isinstance(parent, cst.Arg) and parent.keyword is node:
        return True
    return isinstance(parent, (cst.Param, cst.FunctionDef, cst.ClassDef))


def _reads(ctx: RuleContext, node: cst.Name, ancestors: tuple[cst.CSTNode, ...]) -> bool:
    parent = ancestors[-1]
    if isinstance(parent, cst.Arg) and parent.value is node and len(ancestors) >= 2:
        call = ancestors[-2]
        if not isinstance(call, cst.Call) or parent.keyword is not None:
            return False
        qualified = ctx.names.qualified_name(call.func)
        if qualified is None:
            return isinstance(call.func, cst.Name) and call.func.value in _READERS
        return qualified in _QUALIFIED_READERS or qualified.startswith("tensorflow.")
    if isinstance(parent, cst.Subscript) and parent.value is node:
        outer = ancestors[-2] if len(ancestors) >= 2 else None
        return not isinstance(outer, (cst.AssignTarget, cst.AugAssign, cst.Del))
    if isinstance(parent, (cst.For, cst.CompFor)) and parent.iter is node:
        return True
    return isinstance(parent, cst.ComparisonTarget) and parent.comparator is node


def _numbers_kind(node: cst.BaseExpression) -> str | None:
    """`INT` / `FLOAT` for a list or tuple of integer / float literals
    (None otherwise, or for a mix: the host returns either, a tensor has
    one dtype)."""
    if not isinstance(node, (cst.List, cst.Tuple)):
        return None
    kinds = set()
    for element in node.elements:
        if isinstance(element, cst.StarredElement):
            return None
        value = element.value
        if isinstance(value, cst.UnaryOperation) and isinstance(
            value.operator, (cst.Minus, cst.Plus)
        ):
            value = value.expression
        if isinstance(value, cst.Integer):
            kinds.add(INT)
        elif isinstance(value, cst.Float):
            kinds.add(FLOAT)
        else:
            return None
    return kinds.pop() if len(kinds) == 1 else None


def _number(node: cst.BaseExpression) -> float | None:
    sign = 1.0
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        sign, node = -1.0, node.expression
    if isinstance(node, (cst.Integer, cst.Float)):
        return sign * float(node.evaluated_value)
    return None
