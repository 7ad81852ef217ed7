"""Draws from NumPy generator objects in traced code, and the
`tf.random.Generator` that replaces each generator.

`rng = np.random.default_rng(0)` (or `np.random.RandomState(0)`) made once,
outside the traced code, is a seeded stream: every eager call draws the next
values. Traced, `rng.normal(...)` runs once and the graph keeps its sample.
The graph form keeps the stream's shape: one `tf.random.Generator` made
where the NumPy one is made (`tf_rng = tf.random.Generator.from_seed(0)`
next to a module-level `rng`, `self.tf_rng = ...` next to `self.rng = ...`
in `__init__`), and `tf_rng.normal(...)` in the traced code, which draws the
next values of its own stream on every call.

A generator made anywhere else cannot be moved that way: a local one
(`rng = np.random.default_rng(0)` in the traced function, or
`np.random.default_rng(0).normal()`) would be a new TensorFlow variable on
every trace; one bound more than once, or made in a branch, a traced method
or from a bit generator (`np.random.Generator(np.random.PCG64(0))`) has no
one place and seed to copy. Those draws are reported with the reason.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from tfrewrite.facts.bindings import iter_assignments
from tfrewrite.facts.context import FunctionScope, RuleContext
from tfrewrite.facts.vocabulary import NUMPY_GENERATORS
from tfrewrite.facts.walk import iter_nodes, iter_with_ancestors
from tfrewrite.rewrite.fixes import NodeEdit
from tfrewrite.rewrite.traced_calls import Refusal, SampleSite, is_none, sample_site
from tfrewrite.rules.randomness.left_out import left_out_words

# NumPy's legacy generator: its methods are `np.random`'s module functions.
LEGACY = "numpy.random.RandomState"
# What makes a `tf.random.Generator` (a fix of an earlier round wrote one).
_TF_GENERATOR_MAKERS = frozenset(
    f"tensorflow.random{namespace}.Generator.{maker}"
    for namespace in ("", ".experimental")
    for maker in ("from_seed", "from_non_deterministic_state")
)


@dataclass(frozen=True)
class TfGenerator:
    """The `tf.random.Generator` a NumPy generator's draws become draws of:
    `expression` (`tf_rng`, `self.tf_rng`) and the edits that make it (none
    when an earlier fix made it already)."""

    expression: str
    edits: tuple[NodeEdit, ...]
    legacy: bool  # a `RandomState`, whose methods are `np.random`'s


@dataclass(frozen=True)
class GeneratorDraw:
    """A method call on a NumPy generator object in traced code; `generator`
    is its graph form, or `refusal` says why there is none."""

    site: SampleSite
    holder: cst.BaseExpression
    generator: TfGenerator | None
    refusal: str | None


@dataclass(frozen=True)
class _Made:
    """Where a NumPy generator is made: the statement binding it, the block
    holding that statement and the constructor call."""

    statement: cst.SimpleStatementLine
    block: tuple[cst.BaseStatement, ...]
    call: cst.Call


@dataclass(frozen=True)
class _Binding:
    """One binding of `self.<attr>` in a method: the statement holding it,
    the block holding that statement, and the value bound (None for an
    augmented assignment)."""

    method: FunctionScope
    statement: cst.CSTNode | None
    block: cst.CSTNode | None
    value: cst.BaseExpression | None


def generator_draws(ctx: RuleContext) -> Iterator[GeneratorDraw]:
    """Every draw from a NumPy generator object in traced code, with the
    `tf.random.Generator` to draw from instead where one can be made."""
    tf, _ = ctx.tensorflow()
    module = _module_generators(ctx)
    planned: dict[str, TfGenerator | Refusal] = {}
    for function in ctx.traced_functions():
        local, others = _local_generators(ctx, function.node.body)
        params = {p.name.value for p in function.node.params.params}
        attributes = _attribute_generators(ctx, function.class_name) if function.class_name else {}
        for node, ancestors in iter_with_ancestors(function.node.body, (function.node,)):
            if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)):
                continue
            holder = node.func.value
            plan: TfGenerator | Refusal | None = None
            if isinstance(holder, cst.Name):
                name = holder.value
                if name in local:
                    plan = _made_in_traced_code(ctx, holder)
                elif name in module and name not in params | others:
                    if name not in planned:
                        planned[name] = _module_plan(ctx, name, module[name], tf)
                    plan = planned[name]
            elif (
                isinstance(holder, cst.Attribute)
                and isinstance(holder.value, cst.Name)
                and holder.value.value == "self"
                and holder.attr.value in attributes
            ):
                key = f"{function.class_name}.{holder.attr.value}"
                if key not in planned:
                    planned[key] = _attribute_plan(ctx, holder.attr.value, attributes, tf)
                plan = planned[key]
            elif _is_generator(ctx, holder):
                plan = _made_in_traced_code(ctx, holder)
            if plan is None:
                continue
            site = _site(ctx, function, node, ancestors)
            if isinstance(plan, Refusal):
                yield GeneratorDraw(site, holder, None, str(plan))
            else:
                yield GeneratorDraw(site, holder, plan, None)


def _site(
    ctx: RuleContext,
    function: FunctionScope,
    call: cst.Call,
    ancestors: tuple[cst.CSTNode, ...],
) -> SampleSite:
    """The draw as a sample site, named as a method of NumPy's `Generator`."""
    assert isinstance(call.func, cst.Attribute)
    qualified = f"numpy.random.Generator.{call.func.attr.value}"
    return sample_site(ctx, function, call, qualified, ancestors)


def _made_in_traced_code(ctx: RuleContext, holder: cst.BaseExpression) -> Refusal:
    return Refusal(
        f"the generator `{ctx.code(holder)}` is made in the traced code, and a "
        "`tf.random.Generator` made there would be a new variable on every trace: draw from "
        "a `tf.random.Generator` created once, outside the traced code"
    )


# -- where generators are made ---------------------------------------------------------


def _is_generator(ctx: RuleContext, node: cst.BaseExpression | None) -> bool:
    return isinstance(node, cst.Call) and ctx.names.qualified_name(node.func) in NUMPY_GENERATORS


def _module_generators(ctx: RuleContext) -> dict[str, list[_Made]]:
    """Module-level names bound to a NumPy generator, with each statement
    of the module's own body that binds them so."""
    found: dict[str, list[_Made]] = {}
    body = tuple(ctx.module.body)
    for statement in body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Assign) and _is_generator(ctx, small.value):
                assert isinstance(small.value, cst.Call)
                for target in small.targets:
                    if isinstance(target.target, cst.Name):
                        made = _Made(statement, body, small.value)
                        found.setdefault(target.target.value, []).append(made)
    return found


def _local_generators(ctx: RuleContext, body: cst.CSTNode) -> tuple[set[str], set[str]]:
    """(names bound to a NumPy generator in `body`, names bound to anything else)."""
    generators: set[str] = set()
    others: set[str] = set()
    for target, value, _ in iter_assignments(body):
        if isinstance(target, cst.Name):
            bucket = generators if _is_generator(ctx, value) else others
            bucket.add(target.value)
    return generators, others


def _attribute_generators(ctx: RuleContext, class_name: str) -> dict[str, list[_Binding]]:
    """`rng` for `self.rng = np.random.RandomState(...)` in any method of the
    class, with every binding of `self.rng` in the class's methods."""
    bindings: dict[str, list[_Binding]] = {}
    generators: set[str] = set()
    for function in ctx.functions:
        if function.class_name != class_name or not function.node.params.params:
            continue
        receiver = function.node.params.params[0].name.value
        for node, ancestors in iter_with_ancestors(function.node.body):
            if not isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
                continue
            targets = (
                [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            )
            for target in targets:
                if (
                    isinstance(target, cst.Attribute)
                    and isinstance(target.value, cst.Name)
                    and target.value.value == receiver
                ):
                    value = node.value if not isinstance(node, cst.AugAssign) else None
                    statement = ancestors[-1] if ancestors else None
                    block = ancestors[-2] if len(ancestors) >= 2 else None
                    bindings.setdefault(target.attr.value, []).append(
                        _Binding(function, statement, block, value)
                    )
                    if _is_generator(ctx, value):
                        generators.add(target.attr.value)
    return {name: bindings[name] for name in generators}


# -- the tf.random.Generator -----------------------------------------------------------


def _module_plan(ctx: RuleContext, name: str, made: list[_Made], tf: str) -> TfGenerator | Refusal:
    """`tf_<name> = tf.random.Generator.from_seed(S)` after the module's
    `<name> = np.random.default_rng(S)`."""
    bindings = sum(
        1
        for target, _, _ in iter_assignments(ctx.module)
        if isinstance(target, cst.Name) and target.value == name
    )
    rebound = any(
        isinstance(node, cst.Global) and any(item.name.value == name for item in node.names)
        for node in iter_nodes(ctx.module)
    )
    if len(made) != 1 or bindings != 1 or rebound:
        return Refusal(
            f"`{name}` is bound more than once, so which generator a call draws from is not "
            "known: bind it once, at module level"
        )
    found = made[0]
    try:
        maker = _maker(ctx, found.call, tf)
        _after_tensorflow_import(ctx, found.statement, tf)
    except Refusal as refusal:
        return refusal
    existing = _existing(ctx, found, module_level=True, maker=maker)
    if existing is not None:
        return TfGenerator(existing, (), _legacy(ctx, found.call))
    fresh = _fresh(_module_names(ctx), f"tf_{name}")
    return TfGenerator(
        fresh, (_insert_after(found.statement, f"{fresh} = {maker}"),), _legacy(ctx, found.call)
    )


def _attribute_plan(
    ctx: RuleContext, attribute: str, attributes: dict[str, list[_Binding]], tf: str
) -> TfGenerator | Refusal:
    """`self.tf_<attr> = tf.random.Generator.from_seed(S)` after the
    `self.<attr> = np.random.RandomState(S)` of `__init__`."""
    bindings = attributes[attribute]
    if len(bindings) != 1:
        return Refusal(
            f"`self.{attribute}` is bound more than once, so which generator a call draws from "
            "is not known: bind it once, in `__init__`"
        )
    (binding,) = bindings
    function, statement, block, value = (
        binding.method,
        binding.statement,
        binding.block,
        binding.value,
    )
    if function.node.name.value != "__init__" or function.runs_traced is not None:
        return Refusal(
            f"`self.{attribute}` is made in `{function.node.name.value}`, not in an `__init__` "
            "that runs eagerly: a `tf.random.Generator` must be made once, outside the traced code"
        )
    if not isinstance(statement, cst.SimpleStatementLine) or not isinstance(
        block, cst.IndentedBlock
    ):
        return Refusal(f"`self.{attribute}` is not bound by a statement of its own")
    assert isinstance(value, cst.Call)
    try:
        maker = _maker(ctx, value, tf)
    except Refusal as refusal:
        return refusal
    receiver = function.node.params.params[0].name.value
    made = _Made(statement, tuple(block.body), value)
    existing = _existing(ctx, made, module_level=False, maker=maker)
    if existing is not None:
        return TfGenerator(f"self.{existing}", (), _legacy(ctx, value))
    fresh = _fresh(_attribute_names(ctx), f"tf_{attribute}")
    return TfGenerator(
        f"self.{fresh}",
        (_insert_after(statement, f"{receiver}.{fresh} = {maker}"),),
        _legacy(ctx, value),
    )


def _legacy(ctx: RuleContext, call: cst.Call) -> bool:
    return ctx.names.qualified_name(call.func) == LEGACY


def _maker(ctx: RuleContext, call: cst.Call, tf: str) -> str:
    """`tf.random.Generator.from_seed(S)` for `default_rng(S)` /
    `RandomState(S)`, `from_non_deterministic_state()` without a seed."""
    qualified = ctx.names.qualified_name(call.func)
    if qualified == "numpy.random.Generator":
        raise Refusal(
            f"`{ctx.code(call)}` takes a bit generator, whose seed cannot be read: make it "
            "with `np.random.default_rng(seed)`"
        )
    seed: cst.BaseExpression | None = None
    for arg in call.args:
        if arg.star or (arg.keyword is not None and arg.keyword.value != "seed"):
            raise Refusal(f"the generator `{ctx.code(call)}` takes arguments that are not a seed")
        seed = arg.value
    if len(call.args) > 1:
        raise Refusal(f"the generator `{ctx.code(call)}` takes arguments that are not a seed")
    if is_none(seed):
        return f"{tf}.random.Generator.from_non_deterministic_state()"
    assert seed is not None
    if not _integer_like(seed):
        raise Refusal(
            f"the seed `{ctx.code(seed)}` is not an integer: `tf.random.Generator.from_seed` "
            "takes one"
        )
    return f"{tf}.random.Generator.from_seed({ctx.code(seed)})"


def _integer_like(node: cst.BaseExpression) -> bool:
    """An integer literal, a name or attribute (a seed constant or
    parameter), or integer arithmetic on those; not a list, a string, a
    `SeedSequence` or another call."""
    if isinstance(node, (cst.Integer, cst.Name, cst.Attribute)):
        return True
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        return _integer_like(node.expression)
    if isinstance(node, cst.BinaryOperation) and isinstance(
        node.operator, (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide, cst.Modulo)
    ):
        return _integer_like(node.left) and _integer_like(node.right)
    return (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Name)
        and node.func.value == "int"
        and len(node.args) == 1
    )


def _after_tensorflow_import(ctx: RuleContext, statement: cst.CSTNode, tf: str) -> None:
    """The module-level generator line runs at import: TensorFlow must be
    imported above it (an import the fix adds goes after the file's imports)."""
    body = list(ctx.module.body)
    at = next(i for i, s in enumerate(body) if s is statement)
    imports_tf = False
    for i, line in enumerate(body):
        if not isinstance(line, cst.SimpleStatementLine):
            continue
        for small in line.body:
            if not isinstance(small, (cst.Import, cst.ImportFrom)):
                continue
            binds = not isinstance(small.names, cst.ImportStar) and any(
                ctx.code(a.asname.name if a.asname else a.name).split(".")[0] == tf
                for a in small.names
            )
            imports_tf = imports_tf or binds
            if i > at and (binds or not imports_tf):
                raise Refusal(
                    f"`{ctx.code(statement).strip()}` runs before TensorFlow is imported: "
                    "move the imports above it"
                )


def _existing(ctx: RuleContext, made: _Made, module_level: bool, maker: str) -> str | None:
    """The name (or attribute) a `tf.random.Generator` is bound to by the
    statement right after the NumPy generator's, made as `maker` makes it
    (the same seed): an earlier fix made it."""
    block = list(made.block)
    at = next((i for i, s in enumerate(block) if s is made.statement), None)
    if at is None or at + 1 >= len(block):
        return None
    following = block[at + 1]
    if not isinstance(following, cst.SimpleStatementLine) or len(following.body) != 1:
        return None
    assign = following.body[0]
    if not (
        isinstance(assign, cst.Assign)
        and len(assign.targets) == 1
        and isinstance(assign.value, cst.Call)
        and ctx.names.qualified_name(assign.value.func) in _TF_GENERATOR_MAKERS
        and ctx.code(assign.value) == maker
    ):
        return None
    target = assign.targets[0].target
    if module_level and isinstance(target, cst.Name):
        return target.value
    if not module_level and isinstance(target, cst.Attribute):
        return target.attr.value
    return None


def _insert_after(statement: cst.SimpleStatementLine, line: str) -> NodeEdit:
    new = cst.parse_statement(f"{line}\n")
    return NodeEdit(statement, cst.FlattenSentinel([statement, new]))


def _fresh(taken: set[str], base: str) -> str:
    name, suffix = base, 1
    while name in taken:
        name, suffix = f"{base}_{suffix}", suffix + 1
    return name


def _module_names(ctx: RuleContext) -> set[str]:
    return ctx.module_fact(
        _module_names,
        lambda module: (
            {n.value for n in iter_nodes(module) if isinstance(n, cst.Name)} | left_out_words(ctx)
        ),
    )


def _attribute_names(ctx: RuleContext) -> set[str]:
    return ctx.module_fact(
        _attribute_names,
        lambda module: (
            {n.attr.value for n in iter_nodes(module) if isinstance(n, cst.Attribute)}
            | left_out_words(ctx)
        ),
    )
