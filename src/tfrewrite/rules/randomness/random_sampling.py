"""Rewriting host-side random sampling into `tf.random`: the check TFR102
(NumPy) and TFR106 (Python `random`) share.

NumPy's `np.random.*` and Python's `random.*` draw on the host. Inside traced
code they run once, while the function is traced, and the graph keeps the
drawn value as a constant: every later call reuses the same "random" sample.
`RandomSamplingRule` finds those calls and, when the arguments map faithfully
(`SampleWriter`), the seeds can be kept (`SeedFacts`) and every use of the
sample accepts a tensor (`ValueUses`), rewrites them into `tf.random` ops,
which draw afresh on every call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from typing import ClassVar

import libcst as cst

from tfrewrite.facts.autograph import autograph_off
from tfrewrite.facts.context import RuleContext
from tfrewrite.facts.import_requests import ImportRequest
from tfrewrite.facts.walk import iter_nodes, iter_with_ancestors
from tfrewrite.findings import Applicability
from tfrewrite.rewrite.fixes import CstFix, NodeEdit, Violation
from tfrewrite.rewrite.traced_calls import (
    Refusal,
    SampleSite,
    iter_module_calls,
    module_function,
)
from tfrewrite.rewrite.value_uses import (
    UseKind,
    ValueUses,
    first_of,
    wrapper_replacement,
)
from tfrewrite.rules.base import Rule
from tfrewrite.rules.randomness.conversions import cast_conversions, converted_reason
from tfrewrite.rules.randomness.generators import GeneratorDraw
from tfrewrite.rules.randomness.masks import cast_masks, retyped_reason
from tfrewrite.rules.randomness.sample_writer import SampleWriter
from tfrewrite.rules.randomness.seeds import SeedFacts

# -- the rule ------------------------------------------------------------------------

Rewrite = Callable[[SampleWriter, SampleSite], str]


class RandomSamplingRule(Rule):
    """A rule rewriting `<module_prefix>.<name>(...)` calls in traced code
    with `rewrites[name]`; `seed` is reported without a fix, other names
    with a finding saying they have no mapping.

    Before a sample becomes a tensor, every use of it is followed
    (`ValueUses`): a use that needs a host value refuses the rewrite, a
    conversion around it is folded (`tf.constant(<sample>, dtype=d)`) or
    rewritten (`noise.astype(d)` -> `tf.cast(noise, d)`), and the fix is
    safe only when every use is known to accept the tensor in the dtype it
    is drawn in."""

    module_prefix: ClassVar[str]
    rewrites: ClassVar[Mapping[str, Rewrite]]
    # The dtype TensorFlow gives the host value of each kind (`tf.constant(v)`).
    natural_dtypes: ClassVar[Mapping[str, str]]
    # How to make a sample's dtype known where it is not (ends an unsafe reason).
    dtype_hint: ClassVar[str]

    def check(self, ctx: RuleContext) -> Iterator[Violation]:
        tf, imports = ctx.tensorflow()
        sites = list(iter_module_calls(ctx, self.module_prefix))
        seeds = SeedFacts(ctx, self.module_prefix)
        by_function: dict[int, list[SampleSite]] = {}
        for site in sites:
            if site.function_name != "seed":
                by_function.setdefault(id(site.function), []).append(site)
        for site in sites:
            siblings = by_function.get(id(site.function), [])
            yield self.violation(ctx, site, tf, imports, seeds, siblings)
        yield from self._in_traced_lambdas(ctx, {id(site.call) for site in sites})

    def _in_traced_lambdas(self, ctx: RuleContext, reported: set[int]) -> Iterator[Violation]:
        """Draws in a lambda that runs traced on its own (`ds.map(lambda x: x
        + np.random.rand())`, `keras.layers.Lambda(...)`): the same sample
        for every element or call. Reported without a fix, as TFR101 does
        in a lambda: the lambda may need to become a function first."""
        from tfrewrite.facts.traced_lambdas import traced_lambda_scopes

        for lam, _scope in traced_lambda_scopes(ctx):
            for node in iter_nodes(lam.body):
                if not isinstance(node, cst.Call) or id(node) in reported:
                    continue
                if module_function(ctx, node, self.module_prefix) is None:
                    continue
                reported.add(id(node))
                yield Violation(
                    node,
                    f"`{ctx.code(node.func)}(...)` in a lambda that runs traced runs once, at "
                    "trace time: every element or call reuses the same sample (no automatic "
                    "fix inside a lambda: draw with `tf.random` there, or move the lambda "
                    "into a function)",
                )

    def violation(
        self,
        ctx: RuleContext,
        site: SampleSite,
        tf: str,
        imports: tuple[ImportRequest, ...],
        seeds: SeedFacts | None = None,
        siblings: list[SampleSite] | None = None,
        generator: GeneratorDraw | None = None,
    ) -> Violation:
        """The finding for one sample site, with its fix where the rewrite is
        faithful. A `generator` draw (`rng.normal(...)`) is rewritten with
        `generator_rewrites` into a draw of the `tf.random.Generator` made
        next to the NumPy generator."""
        spelling = f"`{ctx.code(site.call.func)}(...)`"
        name = site.function_name
        if generator is not None:
            return self._generator_violation(ctx, site, tf, imports, generator)
        if name == "seed":
            return Violation(
                site.call,
                f"{spelling} in traced code runs once, at trace time, and does not seed "
                f"`tf.random`: call `{tf}.random.set_seed(...)` before tracing instead",
            )
        runs_once = (
            f"{spelling} in traced code runs once, at trace time: every call reuses the same sample"
        )
        writer = SampleWriter(ctx, site, tf, self.natural_dtypes)
        seeding = None
        try:
            if seeds is not None:
                seeding = seeds.seeding(site, siblings or [site])
                if seeding is not None and seeding.pair is not None:
                    writer.seed = seeding.pair
                    runs_once += (
                        f"; `{ctx.code(seeding.call)}` reseeds it on every call, so every call "
                        "draws the same values"
                    )
            special = self.special_case(site, writer, runs_once, imports)
            if special is not None:
                return special
            self.follow_uses(ctx, site, writer)
            rewrite = self.rewrites.get(name)
            if rewrite is None:
                raise Refusal(f"`{name}` has no faithful `tf.random` mapping; rewrite it by hand")
            replacement = writer.replace(rewrite(writer, site))
            cast_conversions(writer)
            unsafe = self.unsafe_reason(ctx, site, writer)
            edits = self.edits(ctx, writer, replacement)
        except Refusal as refusal:
            return Violation(site.call, f"{runs_once}; not rewritten: {refusal}")
        message = f"Sample with `{_random_op(ctx, replacement, tf)}` on every call"
        if seeding is not None and seeding.pair is not None:
            message = (
                f"Draw with `{_random_op(ctx, replacement, tf)}`, seeded like "
                f"`{ctx.code(seeding.call)}`: the same values on every call, though not NumPy's"
            )
            unsafe = unsafe or "the values drawn differ from the host generator's"
        if unsafe is not None:
            fix = CstFix(f"{message} (unsafe: {unsafe})", edits, imports, Applicability.UNSAFE)
        else:
            fix = CstFix(message, edits, imports)
        return Violation(site.call, runs_once, fix)

    def _generator_violation(
        self,
        ctx: RuleContext,
        site: SampleSite,
        tf: str,
        imports: tuple[ImportRequest, ...],
        draw: GeneratorDraw,
    ) -> Violation:
        """A draw of a NumPy generator object: rewritten into the same
        method of the `tf.random.Generator` made where the NumPy one is
        made. Always unsafe: the stream is TensorFlow's, not NumPy's (as for
        any seeded rewrite), and the generator is a TensorFlow variable."""
        holder = ctx.code(draw.holder)
        runs_once = (
            f"`{ctx.code(site.call.func)}(...)` draws from the NumPy generator `{holder}` in "
            "traced code: it runs once, at trace time, and every call reuses the same sample"
        )
        try:
            if draw.generator is None:
                raise Refusal(draw.refusal or "the generator cannot be made in TensorFlow")
            generator = draw.generator
            writer = SampleWriter(ctx, site, tf, self.natural_dtypes)
            writer.generator = generator.expression
            self.follow_uses(ctx, site, writer)
            table = self.generator_rewrites(generator.legacy)
            rewrite = table.get(site.function_name)
            if rewrite is None:
                raise Refusal(
                    f"`{site.function_name}` has no faithful `tf.random.Generator` mapping; "
                    "rewrite it by hand"
                )
            replacement = writer.replace(rewrite(writer, site))
            cast_conversions(writer)
            unsafe = self.unsafe_reason(ctx, site, writer)
            edits = self.edits(ctx, writer, replacement) + generator.edits
        except Refusal as refusal:
            return Violation(site.call, f"{runs_once}; not rewritten: {refusal}")
        made = "made" if generator.edits else "already made"
        reasons = [
            f"the `{tf}.random.Generator` draws its own stream, not `{holder}`'s values, and "
            f"is a TensorFlow variable {made} where `{holder}` is made",
            *([unsafe] if unsafe is not None else []),
        ]
        message = f"Draw from a `{tf}.random.Generator` made next to `{holder}`, on every call"
        fix = CstFix(
            f"{message} (unsafe: {'; '.join(reasons)})", edits, imports, Applicability.UNSAFE
        )
        return Violation(site.call, runs_once, fix)

    def generator_rewrites(self, legacy: bool) -> Mapping[str, Rewrite]:
        """The rewrites of a NumPy generator object's methods (`legacy`: a
        `RandomState`); none by default."""
        return {}

    def follow_uses(self, ctx: RuleContext, site: SampleSite, writer: SampleWriter) -> None:
        """Find what consumes the sample; fold a conversion right around it;
        refuse when a use needs a host value."""
        if site.function is None:
            raise Refusal("the function around the sample is not known")
        uses = ValueUses(ctx, site.function, site.facts).of_expression(site.target, site.ancestors)
        if uses and uses[0].kind is UseKind.WRAPPER:
            wrapper = uses[0].wrapper
            if wrapper is not None and wrapper.value is site.target:
                writer.folded = wrapper
                uses = uses[1:]
        writer.uses = uses
        blocker = first_of(uses, UseKind.BLOCKER)
        if blocker is not None:
            raise Refusal(f"{blocker.subject('the sample')} {blocker.reason}")
        cast_masks(site, writer)
        condition = first_of(uses, UseKind.AUTOGRAPH)
        if condition is not None:
            off = autograph_off(ctx, site.function)
            if off is not None:
                raise Refusal(
                    f"{condition.subject('the sample')} {condition.reason}: a tensor there "
                    f"needs AutoGraph, and {off}"
                )

    def unsafe_reason(self, ctx: RuleContext, site: SampleSite, writer: SampleWriter) -> str | None:
        """Why the rewrite is not proven to keep the code working (None: proven)."""
        uses = writer.uses
        unknown = first_of(uses, UseKind.UNKNOWN)
        if unknown is not None:
            return f"{unknown.subject('the sample')} {unknown.reason}"
        condition = first_of(uses, UseKind.AUTOGRAPH)
        if condition is not None:
            return (
                f"{condition.subject('the sample')} {condition.reason}: a tensor there needs "
                "AutoGraph, or TFR101's `tf.cond`"
            )
        retyped = retyped_reason(writer) or converted_reason(writer)
        if retyped is not None:
            return retyped
        meets = [use for use in uses if use.meets is not None and not use.boolean]
        for use in meets:
            if use.kind is UseKind.DTYPE:
                return (
                    f"{use.subject('the sample')} {use.reason}: it is drawn in "
                    f"`{ctx.code(use.meets)}`'s dtype, which is right only if that is a tensor"
                    if writer.context_dtype() is not None
                    else f"{use.subject('the sample')} {use.reason}"
                )
        names = sorted({f"`{ctx.code(use.meets)}`" for use in meets if use.meets is not None})
        if len(names) > 1:
            return f"the sample meets {', '.join(names)}, whose dtypes may differ"
        context = writer.context_dtype()
        for use in meets:
            assert use.meets is not None
            name = writer.dtype_name(use.meets)
            if context is None or name is None or context.code != f"{name}.dtype":
                return (
                    f"{use.subject('the sample')} {use.reason}, whose dtype cannot be named "
                    "where the sample is drawn"
                )
        # A compared sample is a boolean whatever it was drawn in; a converted one
        # has the conversion's dtype.
        # A `tf.*` op converts a NumPy argument to the dtype its other inputs
        # need; a tensor argument must already have it: never proven.
        op_argument = next(
            (
                u
                for u in uses
                if u.kind is UseKind.DTYPE and isinstance(u.node, cst.Call) and not u.boolean
            ),
            None,
        )
        if op_argument is not None:
            return (
                f"{op_argument.subject('the sample')} {op_argument.reason}: a host value adapts "
                "to the dtype the op needs, a tensor does not"
            )
        open_uses = [u for u in uses if u.kind is UseKind.DTYPE and not (u.converted or u.boolean)]
        dtype_use = open_uses[0] if open_uses else None
        if dtype_use is not None and not self.dtype_fixed(writer):
            return (
                f"{dtype_use.subject('the sample')} {dtype_use.reason}, and its dtype "
                f"there was the host value's own: {self.dtype_hint}"
            )
        return None

    def dtype_fixed(self, writer: SampleWriter) -> bool:
        """Whether the sample is drawn in exactly the dtype its host value had
        (a folded conversion or `.astype` names it), with no tensor met."""
        if writer.context_dtype() is not None:
            return False
        return writer.astype_dtype() is not None or any(
            writer.natural_dtype(kind) is not None for kind in writer.natural
        )

    def edits(
        self, ctx: RuleContext, writer: SampleWriter, replacement: cst.BaseExpression
    ) -> tuple[NodeEdit, ...]:
        """The sample's replacement, and each conversion it then goes through
        rewritten (`tf.constant(noise)` -> `noise`, `noise.astype(d)` ->
        `tf.cast(noise, d)`). Uses are found inside out, so a conversion
        that contains the sample or an earlier conversion
        (`tf.constant(noise.astype(d))`) carries their replacements."""
        replaced: dict[int, tuple[cst.CSTNode, cst.BaseExpression]] = {
            id(writer.target): (writer.target, replacement)
        }
        if writer.mask_cast is not None:
            comparison, dtype = writer.mask_cast
            value = comparison.deep_replace(writer.target, replacement)
            assert isinstance(value, cst.Comparison)
            bare = ctx.code(value.with_changes(lpar=[], rpar=[]))
            mask = cst.parse_expression(f"{writer.tf}.cast({bare}, {dtype})")
            replaced = {id(comparison): (comparison, mask)}
        for use in writer.uses:
            wrapper = use.wrapper
            if use.kind is not UseKind.WRAPPER or wrapper is None:
                continue
            recast = writer.recast.get(id(wrapper.call))
            if recast is not None:
                wrapper = replace(wrapper, dtype=cst.parse_expression(recast))
            elif id(wrapper.call) in writer.dropped:
                wrapper = replace(wrapper, dtype=None)
            value: cst.CSTNode = wrapper.value
            for key, (node, new) in list(replaced.items()):
                if _contains(value, node):
                    value = value.deep_replace(node, new)
                    del replaced[key]
            if (
                (wrapper.dtype is not None or wrapper.name is not None)
                and isinstance(value, cst.BaseExpression)
                and not isinstance(value, (cst.Tuple, cst.GeneratorExp))
            ):
                # An argument of `tf.cast` needs no parentheses of its own.
                value = value.with_changes(lpar=[], rpar=[])
            text = ctx.code(value)
            replaced[id(wrapper.call)] = (
                wrapper.call,
                wrapper_replacement(wrapper, ctx, writer.tf, text),
            )
        return tuple(NodeEdit(node, new) for node, new in replaced.values())

    def special_case(
        self,
        site: SampleSite,
        writer: SampleWriter,
        message: str,
        imports: tuple[ImportRequest, ...],
    ) -> Violation | None:
        """A violation for a call that is not a plain sample (None: not special)."""
        return None


def _random_op(ctx: RuleContext, replacement: cst.CSTNode, tf: str) -> str:
    """`tf.random.normal`: the `tf.random` function a replacement calls."""
    for node, _ in iter_with_ancestors(replacement):
        if isinstance(node, cst.Call):
            func = ctx.code(node.func)
            if func.startswith(f"{tf}.random."):
                return func
    return f"{tf}.random"


def _contains(root: cst.CSTNode, node: cst.CSTNode) -> bool:
    return any(found is node for found, _ in iter_with_ancestors(root))
