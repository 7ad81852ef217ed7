"""Following a value to its uses: may a NumPy value or Python number become a tensor?

A rewrite that turns a host value (a NumPy sample, `np.mean(...)`, a Python
number) into a tensor changes what every use of that value receives. Some uses
accept a tensor (arithmetic with a tensor, `tf.*` ops, indexing a tensor), some
need rewriting with it (`tf.constant(v)` raises `TypeError` on a tensor under
tracing, a tensor has no `.astype`), and some need a Python value and fail
under tracing (`int(v)`, `range(v)`, indexing a Python list,
`tf.image.random_contrast`, which compares its bounds in Python).

`ValueUses.of_expression` walks up from an expression through what only
transforms the value (arithmetic with Python numbers or arrays, `v[i]`,
unary signs, list displays, `np.asarray(v)`) to each place that consumes it,
and follows a plain local name it is assigned to (`noise = <value>`) to every
read of that name in the same function. Each consumer is a `Use`, whose
`kind` says what a tensor there means:

- `TENSOR`: accepts a tensor, with the same result (it met a proven tensor,
  `meets`, whose dtype the value takes; or it indexes a tensor; or only a
  shape is read);
- `DTYPE`: accepts a tensor, but the result's dtype was decided by the host
  value's own dtype (float64 for NumPy): a `tf.*` op argument, a returned
  value, an operand of unknown dtype (`meets`). Safe only when the rewrite
  knows the dtype to use;
- `WRAPPER`: a conversion a tensor must not go through (`tf.constant(v)`,
  `np.asarray(v)`, `v.astype(d)`, `np.float32(v)`): `wrapper_replacement`
  gives its rewrite (`v` or `tf.cast(v, d)`);
- `AUTOGRAPH`: decides Python control flow (`if`, a conditional expression,
  `and`/`or`/`not`, `assert`): a tensor there needs AutoGraph, which Keras 3
  does not apply to compiled losses and `autograph=False` turns off;
- `UNKNOWN`: leaves what can be followed (passed to a function of the
  project, stored on an attribute, returned to a caller, captured by a nested
  function): the rewrite is unsafe;
- `BLOCKER`: needs a Python or NumPy value: the rewrite must be refused with
  `use.reason`.

Each use also says what NumPy dtype the value reaches it in, when a step on
the way decided it (`dtype`): `bool` after a comparison, `d` after
`.astype(d)`, `np.asarray(v, d)` or `np.float32(v)`, and NumPy's float64
(int64) after a boolean meets a Python float (int) in arithmetic
(`mask * 1.0`), which is itself a use: a boolean tensor there fails, or
stays boolean (TensorFlow converts `0.5` to `False` in `mask * 0.5`).

Reasons are sentence fragments about "the value" (`"is passed to `int(...)`,
which needs a Python number"`); a rule prefixes its own noun ("the sample").
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

import libcst as cst

from tfrewrite.facts.context import FunctionScope, RuleContext
from tfrewrite.facts.tensor_kinds import is_python_number
from tfrewrite.facts.tensors import TensorFacts
from tfrewrite.facts.walk import child_nodes
from tfrewrite.rewrite.dtypes import Dtype, numpy_scalar_type, tf_dtype
from tfrewrite.rewrite.host_values import (
    HOST_BUILTINS,
    HOST_MODULES,
    INDEX_ARGUMENTS,
    NUMPY_WRAPPERS,
    SHAPE_FIRST,
    SHARED_ATTRIBUTES,
    TF_PYTHON_NUMBER_ARGS,
    TF_SIGNATURES,
    TF_WRAPPERS,
)
from tfrewrite.rewrite.numpy_operands import is_python_float
from tfrewrite.rewrite.traced_calls import Refusal


class UseKind(enum.Enum):
    TENSOR = "tensor"
    DTYPE = "dtype"
    WRAPPER = "wrapper"
    AUTOGRAPH = "autograph"
    UNKNOWN = "unknown"
    BLOCKER = "blocker"


@dataclass(frozen=True)
class Wrapper:
    """A conversion of the value: `call` is `tf.constant(value, dtype=dtype)`,
    `np.asarray(value, dtype)`, `value.astype(dtype)` or `np.float32(value)`
    (then `dtype` is the callee, `np.float32`)."""

    call: cst.Call
    value: cst.BaseExpression
    dtype: cst.BaseExpression | None
    name: cst.BaseExpression | None = None  # `tf.constant(v, name="X")`


@dataclass(frozen=True)
class Use:
    """One place that consumes the value (see the module docstring)."""

    kind: UseKind
    node: cst.CSTNode
    reason: str
    meets: cst.BaseExpression | None = None
    wrapper: Wrapper | None = None
    boolean: bool = False  # the value was compared (`v < p`) before reaching this use
    names: tuple[str, ...] = ()  # the local names the value went through, in order
    converted: bool = False  # a NumPy conversion named its dtype on the way (`.astype(d)`)
    # The NumPy dtype the value reaches this use in, when a step on the way
    # decided it (see the module docstring); None: the value's own.
    dtype: str | None = None

    def subject(self, noun: str) -> str:
        """`the sample, held in `noise`,` or `the sample`: who the reason is about."""
        if not self.names:
            return noun
        return f"{noun}, held in `{self.names[-1]}`,"


@dataclass(frozen=True)
class _Trail:
    """What is known of the value along the way to a use."""

    boolean: bool = False
    names: tuple[str, ...] = ()
    packed: bool = False  # inside a list or tuple display
    converted: bool = False  # a NumPy conversion named its dtype since the value got one
    dtype: str | None = None  # the NumPy dtype a step on the way gave the value


_CONTAINERS = (cst.List, cst.Tuple, cst.Element, cst.StarredElement)
# Operators that compute in a boolean's numeric promotion (`&`, `|`, `^` keep booleans).
_NUMERIC = (
    cst.Add,
    cst.Subtract,
    cst.Multiply,
    cst.Divide,
    cst.FloorDivide,
    cst.Modulo,
    cst.Power,
    cst.MatrixMultiply,
    cst.AddAssign,
    cst.SubtractAssign,
    cst.MultiplyAssign,
    cst.DivideAssign,
    cst.FloorDivideAssign,
    cst.ModuloAssign,
    cst.PowerAssign,
    cst.MatrixMultiplyAssign,
)
_MAX_DEPTH = 8


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _short(node: cst.CSTNode, limit: int = 40) -> str:
    text = " ".join(_code(node).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _callee(call: cst.Call) -> str:
    return f"`{_short(call.func)}(...)`"


class ValueUses:
    """Uses of values in one function (`function`, with its tensor `facts`)."""

    def __init__(self, ctx: RuleContext, function: FunctionScope, facts: TensorFacts) -> None:
        self.ctx = ctx
        self.function = function
        self.facts = facts
        self._loads: dict[str, list[tuple[cst.Name, tuple[cst.CSTNode, ...]]]] | None = None
        self._escaping: set[str] = set()  # global / nonlocal / read by a nested function

    # -- public --------------------------------------------------------------------------
    def of_expression(
        self, node: cst.BaseExpression, ancestors: Sequence[cst.CSTNode]
    ) -> list[Use]:
        """Every use of the value `node` computes; `ancestors` run from the
        function (or further out) down to `node`'s parent."""
        return list(self._walk(node, tuple(ancestors), 0, set(), _Trail()))

    def of_name(self, name: str) -> list[Use]:
        """Every use of the local `name` (each read of it in the function)."""
        return list(self._name_uses(name, 0, set(), _Trail()))

    # -- walking up ----------------------------------------------------------------------
    def _walk(
        self,
        node: cst.CSTNode,
        ancestors: tuple[cst.CSTNode, ...],
        depth: int,
        seen: set[str],
        trail: _Trail,
    ) -> Iterator[Use]:
        child = node
        for i in range(len(ancestors) - 1, -1, -1):
            parent = ancestors[i]
            above = ancestors[:i]
            if isinstance(parent, cst.BinaryOperation):
                other = parent.right if parent.left is child else parent.left
                meeting = self._meet(parent, other, trail)
                if meeting is not None:
                    yield meeting
                    if meeting.kind is UseKind.TENSOR:
                        return
                elif trail.dtype == "bool" and isinstance(parent.operator, _NUMERIC):
                    use, promoted = self._boolean_arithmetic(parent, other, trail)
                    yield use
                    trail = replace(trail, dtype=promoted)
            elif isinstance(parent, cst.UnaryOperation):
                if isinstance(parent.operator, cst.Not):
                    yield self._use(UseKind.AUTOGRAPH, parent, "decides a Python `not`", trail)
                    return
            elif isinstance(parent, cst.Comparison):
                yield from self._comparison(parent, child, trail)
                if len(parent.comparisons) != 1 or any(
                    self.facts.is_tensor(side)
                    for side in (parent.left, *(c.comparator for c in parent.comparisons))
                    if side is not child
                ):
                    return
                # A comparison gives the value a dtype of its own: a conversion before it
                # no longer decides it.
                trail = replace(trail, boolean=True, dtype="bool", converted=False)
            elif isinstance(parent, cst.BooleanOperation):
                operator = "and" if isinstance(parent.operator, cst.And) else "or"
                yield self._use(UseKind.AUTOGRAPH, parent, f"decides a Python `{operator}`", trail)
                return
            elif isinstance(parent, cst.IfExp):
                if parent.test is child:
                    yield self._use(
                        UseKind.AUTOGRAPH, parent, "decides a conditional expression", trail
                    )
                    return
            elif isinstance(parent, (cst.If, cst.While, cst.Assert, cst.For)):
                yield self._statement_test(parent, child, trail)
                return
            elif isinstance(parent, cst.Subscript):
                if parent.value is not child:
                    yield self._index(parent, trail)
                    return
            elif isinstance(parent, cst.ComparisonTarget):
                pass  # the Comparison above says what is compared
            elif isinstance(parent, (cst.SubscriptElement, cst.Index, cst.Slice)):
                pass  # the Subscript above says what is indexed
            elif isinstance(parent, cst.Attribute):
                if parent.value is not child:
                    yield self._use(UseKind.UNKNOWN, parent, "is used as an attribute", trail)
                    return
                if parent.attr.value == "astype" and above and isinstance(above[-1], cst.Call):
                    call = above[-1]
                    use = self._astype(call, child, trail)
                    yield use
                    converted = trail
                    if use.wrapper is not None and use.wrapper.dtype is not None:
                        dtype = self._dtype_named(use.wrapper)
                        converted = replace(trail, converted=True, dtype=dtype)
                    yield from self._walk(call, above[:-1], depth, seen, converted)
                    return
                if parent.attr.value in SHARED_ATTRIBUTES:
                    yield self._use(UseKind.TENSOR, parent, "only its shape is read", trail)
                    return
                yield self._use(
                    UseKind.BLOCKER,
                    parent,
                    f"has `.{parent.attr.value}` called or read, NumPy array API a tensor lacks",
                    trail,
                )
                return
            elif isinstance(parent, cst.Arg):
                if not (above and isinstance(above[-1], cst.Call)):
                    yield self._use(UseKind.UNKNOWN, parent, "is passed on", trail)
                    return
                call = above[-1]
                use = self._argument(call, parent, child, trail)
                yield use
                if use.kind is UseKind.WRAPPER and not self._is_tf_call(call):
                    # `np.asarray(v)` is still the value: follow it further.
                    assert use.wrapper is not None
                    if use.wrapper.dtype is not None:
                        dtype = self._dtype_named(use.wrapper)
                        trail = replace(trail, converted=True, dtype=dtype)
                    yield from self._walk(call, above[:-1], depth, seen, trail)
                return
            elif isinstance(parent, cst.Call):
                yield self._use(UseKind.UNKNOWN, parent, "is called", trail)
                return
            elif isinstance(parent, cst.Element) and _unpacked(parent, above):
                # `tag, noise = "x", v`: the value goes to the matching target
                target = _unpacked(parent, above)
                assert target is not None
                if isinstance(target, cst.Name):
                    yield from self._name_uses(target.value, depth + 1, seen, trail)
                else:
                    yield self._use(
                        UseKind.UNKNOWN, above[-2], f"is stored in `{_short(target)}`", trail
                    )
                return
            elif isinstance(parent, _CONTAINERS):
                # `[v, 1.0]`: the container carries the value on
                trail = replace(trail, packed=True)
            elif isinstance(parent, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
                yield from self._assignment(parent, child, depth, seen, trail)
                return
            elif isinstance(parent, cst.Return):
                yield self._return(parent, trail)
                return
            elif isinstance(parent, cst.Expr):
                yield self._use(UseKind.TENSOR, parent, "is discarded", trail)
                return
            elif isinstance(parent, cst.FormattedStringExpression):
                yield self._use(
                    UseKind.UNKNOWN,
                    parent,
                    "is formatted into a string, where a tensor shows as `Tensor(...)`",
                    trail,
                )
                return
            elif isinstance(parent, cst.NamedExpr):
                pass  # `(v := ...)`: the expression's value is the value
            else:
                yield self._use(
                    UseKind.UNKNOWN, parent, f"is used in a `{type(parent).__name__}`", trail
                )
                return
            child = parent
        yield self._use(UseKind.UNKNOWN, child, "is used where it cannot be followed", trail)

    def _use(
        self,
        kind: UseKind,
        node: cst.CSTNode,
        reason: str,
        trail: _Trail,
        meets: cst.BaseExpression | None = None,
        wrapper: Wrapper | None = None,
    ) -> Use:
        return Use(
            kind,
            node,
            reason,
            meets,
            wrapper,
            trail.boolean,
            trail.names,
            trail.converted,
            trail.dtype,
        )

    def _dtype_named(self, wrapper: Wrapper) -> str:
        """The NumPy dtype a conversion gives the value (`float32` for
        `.astype("float32")` or `np.float32(v)`); `unknown` when it is not
        spelled statically (`x.dtype`, a name)."""
        try:
            dtype = _wrapper_dtype(wrapper, self.ctx, "tf")
        except Refusal:
            return "unknown"
        return dtype.tf_name or "unknown"

    # -- consumers -----------------------------------------------------------------------
    def _meet(self, node: cst.CSTNode, other: cst.BaseExpression, trail: _Trail) -> Use | None:
        """The value combined with `other`: a tensor decides the result's
        dtype; a Python number adapts; anything else leaves the dtype open."""
        if self.facts.is_tensor(other):
            return self._use(
                UseKind.TENSOR, node, f"meets the tensor `{_short(other)}`", trail, other
            )
        if self._is_number(other):
            return None
        return self._use(
            UseKind.DTYPE,
            node,
            f"meets `{_short(other)}`, whose dtype is not known",
            trail,
            other,
        )

    def _boolean_arithmetic(
        self,
        node: cst.BinaryOperation | cst.AugAssign,
        number: cst.BaseExpression,
        trail: _Trail,
    ) -> tuple[Use, str]:
        """A boolean value in arithmetic with a Python number (`mask * 1.0`):
        the use (a boolean tensor fails there) and the dtype NumPy computes
        the result in, float64 with a float or a true division, int64 with an
        integer, `unknown` with a number of either kind."""
        divide = isinstance(node.operator, (cst.Divide, cst.DivideAssign))
        if divide or is_python_float(number):
            promoted = "float64"
        else:
            promoted = "int64" if is_python_number(number) else "unknown"
        use = self._use(
            UseKind.DTYPE,
            node,
            f"meets the number `{_short(number)}` in arithmetic, where NumPy computes "
            f"a boolean array in {promoted}",
            trail,
            number,
        )
        return use, promoted

    def _is_number(self, node: cst.BaseExpression) -> bool:
        if is_python_number(node):
            return True
        return self.facts._is_number(node)  # noqa: SLF001 - the facts' own number test

    def _comparison(self, node: cst.Comparison, child: cst.CSTNode, trail: _Trail) -> Iterator[Use]:
        if len(node.comparisons) != 1:
            yield self._use(
                UseKind.BLOCKER,
                node,
                "is in a chained comparison, which stays a Python `and` under tracing",
                trail,
            )
            return
        target = node.comparisons[0]
        if isinstance(target.operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn)):
            yield self._use(
                UseKind.BLOCKER,
                node,
                "is compared with `is` or `in`, which needs a Python value",
                trail,
            )
            return
        other = target.comparator if node.left is child else node.left
        if node.left is not child and target is not child:
            return
        meeting = self._meet(node, other, trail)
        if meeting is not None:
            yield meeting

    def _statement_test(self, statement: cst.CSTNode, child: cst.CSTNode, trail: _Trail) -> Use:
        if isinstance(statement, cst.If):
            return self._use(UseKind.AUTOGRAPH, statement, "decides a Python `if`", trail)
        if isinstance(statement, cst.Assert):
            return self._use(UseKind.AUTOGRAPH, statement, "decides an `assert`", trail)
        if isinstance(statement, cst.While):
            return self._use(
                UseKind.BLOCKER,
                statement,
                "decides a Python `while` loop: as a tensor it would turn the loop into a "
                "`tf.while_loop` under AutoGraph, whose body must then be graph code",
                trail,
            )
        return self._use(
            UseKind.BLOCKER,
            statement,
            "is iterated by a Python `for` loop, which needs a Python sequence",
            trail,
        )

    def _index(self, subscript: cst.Subscript, trail: _Trail) -> Use:
        base = subscript.value
        if self.facts.is_tensor(base):
            return self._use(
                UseKind.TENSOR, subscript, f"indexes the tensor `{_short(base)}`", trail
            )
        if isinstance(base, (cst.List, cst.Tuple, cst.Dict, cst.SimpleString)) or (
            isinstance(base, cst.Name) and base.value in self._host_containers()
        ):
            return self._use(
                UseKind.BLOCKER,
                subscript,
                f"indexes `{_short(base)}`, a Python sequence: a tensor index fails there",
                trail,
            )
        return self._use(
            UseKind.UNKNOWN,
            subscript,
            f"indexes `{_short(base)}`, which is not known to be a tensor",
            trail,
        )

    def _host_containers(self) -> set[str]:
        """Local names bound only to list, tuple, dict or string displays."""
        names: dict[str, bool] = {}
        for node in _scope_nodes(self.function.node.body):
            if isinstance(node, cst.Assign):
                for target in node.targets:
                    if isinstance(target.target, cst.Name):
                        host = isinstance(
                            node.value,
                            (cst.List, cst.Tuple, cst.Dict, cst.ListComp, cst.SimpleString),
                        )
                        name = target.target.value
                        names[name] = names.get(name, True) and host
        return {name for name, host in names.items() if host}

    def _astype(self, call: cst.Call, value: cst.CSTNode, trail: _Trail) -> Use:
        args = call.args
        if (
            len(args) != 1
            or args[0].star
            or (args[0].keyword is not None and args[0].keyword.value != "dtype")
        ):
            return self._use(
                UseKind.BLOCKER,
                call,
                "has `.astype(...)` called with more than a dtype, NumPy array API a tensor lacks",
                trail,
            )
        assert isinstance(value, cst.BaseExpression)
        return self._use(
            UseKind.WRAPPER,
            call,
            "is converted with `.astype(...)`, which a tensor lacks",
            trail,
            wrapper=Wrapper(call, value, args[0].value),
        )

    def _is_tf_call(self, call: cst.Call) -> bool:
        qualified = self.ctx.names.qualified_name(call.func)
        return qualified is not None and qualified.startswith("tensorflow.")

    def _argument(self, call: cst.Call, arg: cst.Arg, value: cst.CSTNode, trail: _Trail) -> Use:
        """The value (possibly inside a list display) passed as `arg` to `call`."""
        qualified = self.ctx.names.qualified_name(call.func)
        callee = _callee(call)
        if qualified is None:
            if isinstance(call.func, cst.Name) and call.func.value in HOST_BUILTINS:
                return self._use(
                    UseKind.BLOCKER,
                    call,
                    f"is passed to {callee}, which needs a Python value",
                    trail,
                )
            if isinstance(call.func, cst.Name) and call.func.value == "print":
                return self._use(UseKind.TENSOR, call, "is printed", trail)
            return self._use(
                UseKind.UNKNOWN,
                call,
                f"is passed to {callee}, which is not known to accept a tensor",
                trail,
            )
        position = call.args.index(arg)
        if trail.packed and (
            qualified in NUMPY_WRAPPERS
            or qualified == "tensorflow.constant"
            or numpy_scalar_type(qualified) is not None
        ):
            return self._use(
                UseKind.BLOCKER,
                call,
                f"is packed into a list given to {callee}, which needs host values there",
                trail,
            )
        wrapper = self._wrapper(call, qualified, position, value)
        if wrapper is None and qualified == "tensorflow.constant":
            return self._use(
                UseKind.BLOCKER,
                call,
                f"is passed to {callee} with arguments a tensor cannot take there "
                "(`tf.constant` of a tensor raises `TypeError` under tracing)",
                trail,
            )
        if wrapper is not None:
            return self._use(
                UseKind.WRAPPER,
                call,
                f"is converted with {callee}, which a tensor must not go through",
                trail,
                wrapper=wrapper,
            )
        if qualified.startswith(("numpy.random.", "random.")):
            return self._use(
                UseKind.UNKNOWN,
                call,
                f"is passed to {callee}, which stays on the host unless it is rewritten too",
                trail,
            )
        if qualified.split(".")[0] in HOST_MODULES:
            return self._use(
                UseKind.BLOCKER,
                call,
                f"is passed to {callee}, which needs a Python or NumPy value",
                trail,
            )
        if qualified in TF_PYTHON_NUMBER_ARGS:
            name = arg.keyword.value if arg.keyword is not None else None
            if name is None:
                signature = TF_SIGNATURES[qualified]
                name = signature[position] if position < len(signature) else None
            if name in TF_PYTHON_NUMBER_ARGS[qualified]:
                return self._use(
                    UseKind.BLOCKER,
                    call,
                    f"is passed to {callee} as `{name}`, which it compares in Python: "
                    "it needs a Python number",
                    trail,
                )
        if qualified.startswith(("tensorflow.", "keras.", "tf_keras.")):
            if qualified in SHAPE_FIRST and position == 0 and arg.keyword is None:
                return self._use(UseKind.TENSOR, call, "is part of a shape", trail)
            index_argument = INDEX_ARGUMENTS.get(qualified)
            if (
                index_argument is not None
                and not trail.packed
                and (
                    (arg.keyword is None and position == index_argument[0])
                    or (arg.keyword is not None and arg.keyword.value == index_argument[1])
                )
            ):
                return self._use(UseKind.TENSOR, call, f"indexes with {callee}", trail)
            if qualified == "tensorflow.cast":
                return self._use(UseKind.TENSOR, call, "is cast with `tf.cast`", trail)
            return self._use(
                UseKind.DTYPE,
                call,
                f"is passed to {callee}",
                trail,
            )
        return self._use(
            UseKind.UNKNOWN,
            call,
            f"is passed to {callee}, which is not known to accept a tensor",
            trail,
        )

    def _wrapper(
        self, call: cst.Call, qualified: str, position: int, value: cst.CSTNode
    ) -> Wrapper | None:
        """`tf.constant(v[, dtype])`, `np.asarray(v[, dtype])`, `np.float32(v)`
        with the value as the first argument and nothing else but a dtype."""
        first = call.args[0]
        if position != 0 or first.star:
            return None
        if first.keyword is not None and first.keyword.value not in ("value", "a", "object"):
            return None
        assert isinstance(value, cst.BaseExpression)
        if numpy_scalar_type(qualified) is not None and len(call.args) == 1:
            return Wrapper(call, value, call.func)
        if qualified not in NUMPY_WRAPPERS and qualified not in TF_WRAPPERS:
            return None
        dtype: cst.BaseExpression | None = None
        name: cst.BaseExpression | None = None
        tf_call = qualified in TF_WRAPPERS
        for i, arg in enumerate(call.args[1:], start=1):
            keyword = arg.keyword.value if arg.keyword is not None else None
            if keyword == "name" and tf_call:
                name = arg.value
                continue
            if arg.star or keyword not in (None, "dtype") or (keyword is None and i != 1):
                return None  # `shape=`, `copy=`: not a plain conversion
            dtype = arg.value
        return Wrapper(call, value, dtype, name)

    def _assignment(
        self,
        statement: cst.Assign | cst.AnnAssign | cst.AugAssign,
        child: cst.CSTNode,
        depth: int,
        seen: set[str],
        trail: _Trail,
    ) -> Iterator[Use]:
        if isinstance(statement, cst.AugAssign):
            target = statement.target
            # `total += v` meets `total`; `v += 1.0` (the value's own name) meets `1.0`.
            other = statement.value if child is target else target
            meeting = self._meet(statement, other, trail)  # type: ignore[arg-type]
            if meeting is not None:
                yield meeting
                if meeting.kind is UseKind.TENSOR:
                    return
            elif trail.dtype == "bool" and isinstance(statement.operator, _NUMERIC):
                use, promoted = self._boolean_arithmetic(statement, other, trail)  # type: ignore[arg-type]
                yield use
                trail = replace(trail, dtype=promoted)
            targets = [target]
        elif isinstance(statement, cst.AnnAssign):
            targets = [statement.target]
        else:
            targets = [t.target for t in statement.targets]
        for target in targets:
            if isinstance(target, cst.Name):
                yield from self._name_uses(target.value, depth + 1, seen, trail)
            elif isinstance(target, cst.Subscript) and not self.facts.is_tensor(target.value):
                yield self._use(
                    UseKind.UNKNOWN,
                    statement,
                    f"is stored into `{_short(target)}`, which may be a NumPy array",
                    trail,
                )
            else:
                yield self._use(
                    UseKind.UNKNOWN, statement, f"is stored in `{_short(target)}`", trail
                )

    def _return(self, statement: cst.Return, trail: _Trail) -> Use:
        traced = self.function.traced
        entry = traced is not None and not traced.reason.startswith(("called from", "nested in"))
        if entry:
            return self._use(
                UseKind.DTYPE,
                statement,
                "is returned, with its dtype, from the traced function",
                trail,
            )
        return self._use(
            UseKind.UNKNOWN,
            statement,
            f"is returned from `{self.function.node.name.value}` to its callers",
            trail,
        )

    # -- names ---------------------------------------------------------------------------
    def _name_uses(self, name: str, depth: int, seen: set[str], trail: _Trail) -> Iterator[Use]:
        if name in seen:
            return
        seen = seen | {name}
        loads = self._name_loads()
        if depth > _MAX_DEPTH:
            yield Use(UseKind.UNKNOWN, self.function.node, "flows through too many names")
            return
        if name in self._escaping:
            yield self._use(
                UseKind.UNKNOWN,
                self.function.node,
                f"is held in `{name}`, which is global, nonlocal or read by a nested function",
                trail,
            )
            return
        trail = replace(trail, names=(*trail.names, name), packed=False)
        for node, ancestors in loads.get(name, ()):
            yield from self._walk(node, ancestors, depth, seen, trail)

    def _name_loads(self) -> dict[str, list[tuple[cst.Name, tuple[cst.CSTNode, ...]]]]:
        """Reads of each name in the function body (not in nested functions)."""
        if self._loads is not None:
            return self._loads
        loads: dict[str, list[tuple[cst.Name, tuple[cst.CSTNode, ...]]]] = {}
        root = self.function.node
        stack: list[tuple[cst.CSTNode, tuple[cst.CSTNode, ...]]] = [(root.body, (root,))]
        while stack:
            node, parents = stack.pop()
            if isinstance(node, (cst.Global, cst.Nonlocal)):
                self._escaping.update(n.name.value for n in node.names)
                continue
            if isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                self._escaping.update(
                    n.value for n in _scope_nodes(node) if isinstance(n, cst.Name)
                )
                continue
            if isinstance(node, cst.Name):
                if _is_load(node, parents[-1] if parents else None):
                    loads.setdefault(node.value, []).append((node, parents))
                continue
            below = (*parents, node)
            stack.extend((child, below) for child in reversed(_read_children(node)))
        self._loads = loads
        return loads


def _read_children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The children of `node` that are evaluated as expressions: for an
    assignment target (`a, b = ...`, `for i, x in ...`), only what the
    target reads (`obj` in `obj.attr = ...`, `a` and `i` in `a[i] = ...`)."""
    target: cst.CSTNode | None = None
    if isinstance(node, (cst.AssignTarget, cst.AnnAssign, cst.For, cst.CompFor, cst.NamedExpr)):
        target = node.target
    children = child_nodes(node)
    if target is None:
        return children
    result: list[cst.CSTNode] = []
    for child in children:
        result.extend(_target_reads(child) if child is target else [child])
    return result


def _target_reads(target: cst.CSTNode) -> list[cst.CSTNode]:
    if isinstance(target, (cst.Tuple, cst.List)):
        return [part for element in target.elements for part in _target_reads(element.value)]
    if isinstance(target, cst.StarredElement):
        return _target_reads(target.value)
    if isinstance(target, cst.Attribute):
        return [target.value]
    if isinstance(target, cst.Subscript):
        return [target.value, *target.slice]
    return []


def _unpacked(
    element: cst.Element, above: tuple[cst.CSTNode, ...]
) -> cst.BaseAssignTargetExpression | None:
    """The target `element` of a tuple display is assigned to by unpacking
    (`a, b = x, y`), or None when it is not such an element."""
    if len(above) < 2 or not isinstance(above[-1], (cst.Tuple, cst.List)):
        return None
    display, statement = above[-1], above[-2]
    if not isinstance(statement, cst.Assign) or statement.value is not display:
        return None
    if len(statement.targets) != 1:
        return None
    target = statement.targets[0].target
    if not isinstance(target, (cst.Tuple, cst.List)):
        return None
    values, targets = list(display.elements), list(target.elements)
    if len(values) != len(targets) or any(
        isinstance(e, cst.StarredElement) for e in (*values, *targets)
    ):
        return None
    index = next(i for i, e in enumerate(values) if e is element)
    return targets[index].value


def _is_load(name: cst.Name, parent: cst.CSTNode | None) -> bool:
    """Whether `name` reads a variable (not a target, keyword or attribute)."""
    if isinstance(parent, cst.Attribute):
        return parent.value is name
    if isinstance(parent, cst.Arg):
        return parent.value is name
    if isinstance(parent, (cst.AssignTarget, cst.AnnAssign)):
        return getattr(parent, "target", None) is not name
    if isinstance(parent, cst.AugAssign):
        return True  # `n += 1` reads `n`
    if isinstance(parent, (cst.For, cst.CompFor)):
        return parent.target is not name
    if isinstance(parent, (cst.NamedExpr,)):
        return parent.target is not name
    if isinstance(parent, (cst.AsName, cst.ImportAlias, cst.Param, cst.ExceptHandler)):
        return False
    return True


def _scope_nodes(root: cst.CSTNode) -> Iterator[cst.CSTNode]:
    stack: list[cst.CSTNode] = [root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(child_nodes(node))


# -- reading the uses ------------------------------------------------------------------


def first_of(uses: Sequence[Use], *kinds: UseKind) -> Use | None:
    """The first use of one of `kinds`, in the order they were found."""
    return next((use for use in uses if use.kind in kinds), None)


def wrapper_replacement(
    wrapper: Wrapper, ctx: RuleContext, tf: str, value: str | None = None
) -> cst.BaseExpression:
    """The rewrite of a conversion once its value is a tensor: `v` for
    `tf.constant(v)` / `np.asarray(v)`, `tf.cast(v, d)` when it names a dtype
    (`v.astype(d)`, `np.float32(v)`, `tf.constant(v, dtype=d)`), and with a
    `name=`, `tf.cast(v, d, name=...)` or `tf.identity(v, name=...)`. `value` is
    the text to write for the value (its own source by default). `Refusal`
    when the dtype has no TensorFlow name."""
    text = value if value is not None else ctx.code(wrapper.value)
    name = f", name={ctx.code(wrapper.name)}" if wrapper.name is not None else ""
    if wrapper.dtype is not None:
        dtype = _wrapper_dtype(wrapper, ctx, tf)
        replacement = cst.parse_expression(f"{tf}.cast({text}, {dtype.code}{name})")
    elif name:
        replacement = cst.parse_expression(f"{tf}.identity({text}{name})")
    else:
        replacement = cst.parse_expression(text)
    return replacement.with_changes(lpar=wrapper.call.lpar, rpar=wrapper.call.rpar)


def _wrapper_dtype(wrapper: Wrapper, ctx: RuleContext, tf: str) -> Dtype:
    assert wrapper.dtype is not None
    if wrapper.dtype is wrapper.call.func:  # `np.float32(v)`
        leaf = numpy_scalar_type(ctx.names.qualified_name(wrapper.call.func))
        if leaf is None:
            raise Refusal(f"`{ctx.code(wrapper.call.func)}` is not a known dtype")
        return tf_dtype(cst.SimpleString(f'"{leaf}"'), ctx, tf)
    return tf_dtype(wrapper.dtype, ctx, tf)


def wrapper_dtype(wrapper: Wrapper, ctx: RuleContext, tf: str) -> Dtype | None:
    """The dtype a conversion asks for (None: it keeps the value's)."""
    return None if wrapper.dtype is None else _wrapper_dtype(wrapper, ctx, tf)
