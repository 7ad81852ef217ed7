"""Seeded host randomness: what `np.random.seed(S)` / `random.seed(S)` promise.

After a seed, host draws are reproducible, and rewriting them into unseeded
`tf.random` ops changes that meaning. Where the seed sits decides what can be
kept:

- seeded at the top of the traced function itself (before the draw): every
  call reseeds, so every call draws the same values. `tf.random.stateless_*`
  with seed `[S, k]` (k numbering the function's seeded draws) keeps exactly
  that: the same values on every call, reproducible from run to run. The
  values are not NumPy's, and the call is no longer frozen into the graph.
- seeded elsewhere (module level, a setup function): the draws form a
  sequence, fresh on every call and reproducible from run to run. Stateless
  draws would repeat one value; unseeded `tf.random` would not reproduce.
  Only a TensorFlow seed keeps it: with `tf.random.set_seed(...)` in the file
  (read when a function is traced), `tf.random` ops draw a fresh,
  reproducible sequence; without it the rewrite is refused.
- seeded in the function on some paths only (in a branch or a loop, or
  after the draw): refused.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from tfrewrite.facts.context import FunctionScope, RuleContext
from tfrewrite.facts.walk import iter_nodes, iter_with_ancestors
from tfrewrite.rewrite.traced_calls import Refusal, SampleSite

# Calls that seed `tf.random` (Keras's also seeds NumPy and Python `random`).
_TF_SEEDS = frozenset(
    {
        "tensorflow.random.set_seed",
        "tensorflow.set_random_seed",
        "tensorflow.keras.utils.set_random_seed",
        "keras.utils.set_random_seed",
    }
)


@dataclass(frozen=True)
class Seeding:
    """How a draw is seeded: `pair` is the stateless seed to write (`[0, 1]`)
    for a draw seeded in its own function; None for a module-wide seed that
    a `tf.random.set_seed` in the file carries over."""

    call: cst.Call
    pair: str | None


class SeedFacts:
    """Seed calls of one module (`numpy.random` or `random`) in one file."""

    def __init__(self, ctx: RuleContext, module_prefix: str) -> None:
        self.ctx = ctx
        self.seed_name = f"{module_prefix}.seed"
        self._found: list[tuple[cst.Call, tuple[cst.CSTNode, ...]]] | None = None
        self._tf_seeded: bool | None = None
        self._numbered: dict[int, dict[int, int]] = {}

    @property
    def _calls(self) -> list[tuple[cst.Call, tuple[cst.CSTNode, ...]]]:
        """The seed calls, found on first use: pass 1 knows whether the file
        calls the seed function at all, so most files skip the walk."""
        if self._found is None:
            self._found = []
            if self.seed_name in self.ctx.index.called_names:
                self._found = [
                    (node, ancestors)
                    for node, ancestors in iter_with_ancestors(self.ctx.module)
                    if isinstance(node, cst.Call)
                    and self.ctx.names.qualified_name(node.func) == self.seed_name
                    and _seeds(node)
                ]
        return self._found

    @property
    def any(self) -> bool:
        return bool(self._calls)

    def is_seed(self, call: cst.Call) -> bool:
        return any(call is node for node, _ in self._calls)

    def seeding(self, site: SampleSite, sites_in_function: list[SampleSite]) -> Seeding | None:
        """How `site` is seeded (None: not at all); `Refusal` when the seed
        cannot be kept. `sites_in_function` are the draws of the site's
        function, in source order (they number the stateless seeds)."""
        function = site.function
        if not self._calls or function is None:
            return None
        local = [(c, a) for c, a in self._calls if _innermost_function(a) is function.node]
        if local:
            return self._local(site, function, local, sites_in_function)
        call = self._calls[0][0]
        if not self.tf_seeded():
            raise Refusal(
                f"the draws are seeded by `{self.ctx.code(call)}`, which makes them a sequence "
                "reproducible from run to run, and unseeded `tf.random` ops would not be: call "
                "`tf.random.set_seed(...)` before the function is traced (TensorFlow reads the "
                "global seed when it traces)"
            )
        return Seeding(call, None)

    def _local(
        self,
        site: SampleSite,
        function: FunctionScope,
        local: list[tuple[cst.Call, tuple[cst.CSTNode, ...]]],
        sites_in_function: list[SampleSite],
    ) -> Seeding:
        body = (
            list(function.node.body.body)
            if isinstance(function.node.body, cst.IndentedBlock)
            else []
        )
        draw_at = _statement_index(body, site.ancestors)
        seeded_before = None
        for call, ancestors in local:
            seed_at = _statement_index(body, ancestors)
            statement = body[seed_at] if seed_at is not None else None
            top_level = (
                statement is not None
                and isinstance(statement, cst.SimpleStatementLine)
                and any(isinstance(s, cst.Expr) and s.value is call for s in statement.body)
            )
            if not top_level or seed_at is None or draw_at is None or seed_at > draw_at:
                raise Refusal(
                    f"`{self.ctx.code(call)}` seeds the draws only on some paths through "
                    f"`{function.node.name.value}`: seed once, at its top, or outside it"
                )
            seeded_before = call
        assert seeded_before is not None
        seed = _seed_argument(seeded_before)
        if not self._readable(seed, function):
            raise Refusal(
                f"the seed `{self.ctx.code(seed)}` of `{self.ctx.code(seeded_before)}` is not a "
                "literal or a parameter: it cannot seed a stateless draw"
            )
        index = self._number(function, site, sites_in_function)
        return Seeding(seeded_before, f"[{self.ctx.code(seed)}, {index}]")

    def _readable(self, seed: cst.BaseExpression, function: FunctionScope) -> bool:
        if isinstance(seed, cst.Integer):
            return True
        if isinstance(seed, cst.Name):
            params = {p.name.value for p in function.node.params.params}
            return seed.value in params
        return False

    def _number(
        self, function: FunctionScope, site: SampleSite, sites_in_function: list[SampleSite]
    ) -> int:
        """A seed index no other draw of the function uses: after those of
        stateless draws written already (an earlier fix round), in source order."""
        key = id(function.node)
        if key not in self._numbered:
            base = 1 + max(_stateless_indices(self.ctx, function.node), default=-1)
            self._numbered[key] = {
                id(other.call): base + i for i, other in enumerate(sites_in_function)
            }
        return self._numbered[key].get(id(site.call), 0)

    def tf_seeded(self) -> bool:
        """Whether the file calls `tf.random.set_seed(...)` (or Keras's
        `set_random_seed`) anywhere."""
        if self._tf_seeded is None:
            self._tf_seeded = any(
                isinstance(node, cst.Call) and self.ctx.names.qualified_name(node.func) in _TF_SEEDS
                for node in iter_nodes(self.ctx.module)
            )
        return self._tf_seeded


def _seeds(call: cst.Call) -> bool:
    """`seed(S)` with a seed (not `seed()` or `seed(None)`, which reseed from entropy)."""
    seed = _seed_argument(call)
    return seed is not None and not (isinstance(seed, cst.Name) and seed.value == "None")


def _seed_argument(call: cst.Call) -> cst.BaseExpression | None:
    for arg in call.args:
        if arg.keyword is None or arg.keyword.value in ("seed", "a"):
            return arg.value
    return None


def _innermost_function(ancestors: tuple[cst.CSTNode, ...]) -> cst.FunctionDef | None:
    for node in reversed(ancestors):
        if isinstance(node, cst.FunctionDef):
            return node
    return None


def _statement_index(
    body: list[cst.BaseStatement], ancestors: tuple[cst.CSTNode, ...]
) -> int | None:
    """The index in `body` of the top-level statement holding a node with these ancestors."""
    for node in ancestors:
        for i, statement in enumerate(body):
            if node is statement:
                return i
    return None


def _stateless_indices(ctx: RuleContext, function: cst.FunctionDef) -> Iterator[int]:
    """The k of every `seed=[S, k]` given to a stateless `tf.random` op in `function`."""
    for node in iter_nodes(function.body):
        if not isinstance(node, cst.Call):
            continue
        qualified = ctx.names.qualified_name(node.func) or ""
        if "stateless_" not in qualified:
            continue
        for arg in node.args:
            value = arg.value
            if (
                arg.keyword is not None
                and arg.keyword.value == "seed"
                and isinstance(value, cst.List)
                and len(value.elements) == 2
                and isinstance(value.elements[1].value, cst.Integer)
            ):
                yield int(value.elements[1].value.evaluated_value)
