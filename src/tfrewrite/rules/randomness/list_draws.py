"""Python `random` draws that make lists: `random.sample(seq, k)` and the
in-place `random.shuffle(lst)`.

Their graph forms make a tensor where the host made a list:
`tf.random.shuffle(seq)[:k]` for `sample`, `lst = tf.random.shuffle(lst)`
for `shuffle`. A list and a tensor agree only where the list is converted
to a tensor in its natural dtype (a Python int list becomes int32, a float
list float32, as the shuffled tensor is): the indices of `tf.gather`, the
first argument of a reduction or `tf.convert_to_tensor`. Anywhere else they
part (`lst + [4]` concatenates a list and adds to a tensor, `len(lst)` and
`for v in lst` need AutoGraph or a static shape, `lst.append` has no tensor
form), so every read of the result must be one of those, or the draw is
refused with the read that needs the list.

`shuffle` also changes the list in place: every other reference to the
same list sees the new order. The rewrite rebinds one name, so the list
must be a fresh literal bound to that name in the function, referred to
by nothing else before the shuffle.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from tfrewrite.facts.bindings import local_bindings
from tfrewrite.facts.context import FunctionScope, RuleContext
from tfrewrite.facts.walk import iter_with_ancestors
from tfrewrite.rewrite.dtypes import INT
from tfrewrite.rewrite.traced_calls import Refusal, SampleSite, bind
from tfrewrite.rules.randomness.choices import (
    Population,
    check_count,
    integer_population,
    sequence_population,
    values_text,
)
from tfrewrite.rules.randomness.sample_writer import SampleWriter

# A Python int list becomes an int32 tensor when TensorFlow converts it.
_PYTHON_INT = "int32"

# `tf.*` ops that convert a list argument in its natural dtype and compute the
# same from a tensor of that dtype: (position, keyword) of the argument.
_LIST_ARGUMENTS: dict[str, tuple[int, str]] = {
    "tensorflow.gather": (1, "indices"),
    "tensorflow.convert_to_tensor": (0, "value"),
    **{
        f"tensorflow{namespace}.reduce_{op}": (0, "input_tensor")
        for namespace in ("", ".math")
        for op in ("sum", "mean", "max", "min", "prod")
    },
}


def sample_text(w: SampleWriter, site: SampleSite) -> str:
    """`tf.random.shuffle(seq)[:k]` for `random.sample(seq, k)`, once every
    read of the list it makes takes a tensor."""
    args = bind(site.call, ("population", "k"), required=2)
    drawn = population(w, site, args["population"])
    k = args["k"]
    if not w.is_integer(k):
        raise Refusal(f"`k={w.code(k)}` is not known to be an integer")
    check_count(drawn, k)
    assert site.function is not None
    _require_list_reads(w.ctx, site.function, site.call, site.ancestors, "the list `sample` makes")
    if drawn.values is None:
        source = f"{w.tf}.range({drawn.length})"
    else:
        source = values_text(w, drawn, None, _PYTHON_INT)
    return f"{w.shuffle(source)}[:{w.code(k)}]"


def shuffle_statement(
    ctx: RuleContext, site: SampleSite, w: SampleWriter
) -> tuple[cst.SimpleStatementLine, cst.Assign]:
    """`lst = tf.random.shuffle(lst)` for the statement `random.shuffle(lst)`:
    (the statement, the assignment replacing its expression)."""
    args = bind(site.call, ("x",), required=1)
    x = args["x"]
    function = site.function
    assert function is not None
    body = (
        list(function.node.body.body) if isinstance(function.node.body, cst.IndentedBlock) else []
    )
    statement = next((s for s in body if site.call in _expressions(s)), None)
    if statement is None:
        raise Refusal(
            "`shuffle` shuffles in place and returns `None`; only a statement "
            "`shuffle(name)` at the top of the function body can become "
            "`name = tf.random.shuffle(name)`"
        )
    if not isinstance(x, cst.Name):
        raise Refusal(
            f"`shuffle` shuffles `{ctx.code(x)}` in place, and a tensor cannot be written back "
            "into it: only a local list bound to a name can be rebound"
        )
    name = x.value
    bindings = local_bindings(function.node).get(name)
    params = {p.name.value for p in function.node.params.params}
    if name in params or not bindings:
        raise Refusal(
            f"`shuffle` shuffles `{name}` in place, and `{name}` is not a list made in "
            "this function: its other references would not see a rebound tensor"
        )
    if len(bindings) != 1 or bindings[0] is None:
        raise Refusal(
            f"`{name}` is bound more than once: which list `shuffle` changes is not known"
        )
    value = bindings[0]
    _fresh_list(ctx, w, site, name, value, body, statement)
    after = body[body.index(statement) + 1 :]
    for later in after:
        _require_list_reads_of_name(ctx, later, name)
    assign = cst.parse_statement(f"{name} = {w.shuffle(name)}").body[0]
    assert isinstance(assign, cst.Assign)
    return statement, assign


def population(w: SampleWriter, site: SampleSite, a: cst.BaseExpression) -> Population:
    """`range(n)` or a sequence of numbers."""
    if (
        isinstance(a, cst.Call)
        and isinstance(a.func, cst.Name)
        and a.func.value == "range"
        and w.ctx.names.qualified_name(a.func) is None
        and len(a.args) == 1
        and a.args[0].keyword is None
        and not a.args[0].star
    ):
        found = integer_population(w, a.args[0].value)
        if found is not None:
            return found
        return Population(w.code(a.args[0].value), None, INT)
    return sequence_population(w, site, a)


def _fresh_list(
    ctx: RuleContext,
    w: SampleWriter,
    site: SampleSite,
    name: str,
    value: cst.BaseExpression,
    body: Sequence[cst.BaseStatement],
    statement: cst.BaseStatement,
) -> None:
    """`name` is bound, at the top of the body before the shuffle, to a
    list display of numbers (or `list(range(n))`) that nothing else refers
    to before the shuffle."""
    is_range_list = (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Name)
        and value.func.value == "list"
        and len(value.args) == 1
    )
    if is_range_list:
        assert isinstance(value, cst.Call)
        population(w, site, value.args[0].value)
    elif not isinstance(value, cst.List):
        raise Refusal(
            f"`{name}` is bound to `{ctx.code(value)}`, which is not a list display: other "
            "references to the list would not see a rebound tensor"
        )
    else:
        sequence_population(w, site, value)
    at = body.index(statement)
    bound_at = next(
        (i for i, s in enumerate(body[:at]) if value in _expressions(s, into_values=True)), None
    )
    if bound_at is None:
        raise Refusal(
            f"`{name}` is not bound at the top of the function before the shuffle: it may be "
            "a list on one path and a tensor on another"
        )
    for between in body[bound_at + 1 : at]:
        for node, _ in iter_with_ancestors(between):
            if isinstance(node, cst.Name) and node.value == name:
                raise Refusal(
                    f"`{name}` is referred to before the shuffle "
                    f"(`{ctx.code(between).strip()}`): that reference would not see the new order"
                )


def _expressions(statement: cst.CSTNode, into_values: bool = False) -> list[cst.CSTNode]:
    """The call of an expression statement (`random.shuffle(x)`), or with
    `into_values` the value of an assignment statement."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return []
    found: list[cst.CSTNode] = []
    for small in statement.body:
        if isinstance(small, cst.Expr) and not into_values:
            found.append(small.value)
        if isinstance(small, cst.Assign) and into_values:
            found.append(small.value)
    return found


def _require_list_reads(
    ctx: RuleContext,
    function: FunctionScope,
    value: cst.BaseExpression,
    ancestors: tuple[cst.CSTNode, ...],
    noun: str,
) -> None:
    """Every read of the list `value` makes takes a tensor: `value` itself
    is such an argument, or it is bound to a name whose reads all are."""
    parent = ancestors[-1] if ancestors else None
    if isinstance(parent, cst.Arg) and _takes_list(ctx, parent, ancestors[:-1]):
        return
    if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
        target = parent.targets[0].target
        if isinstance(target, cst.Name):
            bindings = local_bindings(function.node).get(target.value, [])
            if len(bindings) != 1:
                raise Refusal(f"`{target.value}` is bound more than once")
            _require_list_reads_of_name(ctx, function.node.body, target.value)
            return
    raise Refusal(
        f"{noun} is read by `{_statement_of(ctx, value, ancestors)}`, which needs a Python list: "
        "a tensor there computes differently; give the list to `tf.gather` or a reduction"
    )


def _require_list_reads_of_name(ctx: RuleContext, root: cst.CSTNode, name: str) -> None:
    for node, ancestors in iter_with_ancestors(root):
        if not (isinstance(node, cst.Name) and node.value == name) or not ancestors:
            continue
        parent = ancestors[-1]
        if isinstance(parent, cst.AssignTarget) and parent.target is node:
            continue
        if isinstance(parent, cst.Attribute) and parent.attr is node:
            continue
        if isinstance(parent, cst.Arg) and (
            parent.keyword is node or _takes_list(ctx, parent, ancestors[:-1])
        ):
            continue
        raise Refusal(
            f"`{name}` is read by `{_statement_of(ctx, node, ancestors)}`, which needs a Python "
            "list: a tensor there computes differently; give the list to `tf.gather` or a "
            "reduction"
        )


def _takes_list(ctx: RuleContext, arg: cst.Arg, ancestors: tuple[cst.CSTNode, ...]) -> bool:
    """`arg` is the argument of a `tf.*` op that converts a list in its
    natural dtype (`tf.gather(x, idx)`'s `idx`)."""
    call = ancestors[-1] if ancestors else None
    if not isinstance(call, cst.Call) or arg.star:
        return False
    where = _LIST_ARGUMENTS.get(ctx.names.qualified_name(call.func) or "")
    if where is None:
        return False
    position, keyword = where
    if arg.keyword is not None:
        return arg.keyword.value == keyword
    positional = [a for a in call.args if a.keyword is None]
    if any(a.keyword is not None and a.keyword.value == "dtype" for a in call.args):
        return False
    return position < len(positional) and positional[position] is arg


def _statement_of(ctx: RuleContext, node: cst.CSTNode, ancestors: tuple[cst.CSTNode, ...]) -> str:
    """The source of the smallest statement (or expression) around `node`, for a message."""
    for ancestor in reversed(ancestors):
        if isinstance(ancestor, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
            text = " ".join(ctx.code(ancestor).split())
            return text if len(text) <= 60 else text[:57] + "..."
    return ctx.code(node)
