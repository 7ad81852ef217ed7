"""Traced call sites in pass 1: the places where a function is handed to
something that traces it, so the project facts know it runs in a graph though
no `@tf.function` decorates it.

`tf.function(f)` (and its aliases, `partial(tf.function, ...)`),
`model.compile(loss=f, metrics=[g])`, `Dataset.map(f)`/`filter`, `tf.map_fn`
and friends, a Keras `Lambda(f)` layer, `strategy.run(f)`: each is recorded
as a `TracedSite` (a named function) or a `TracedLambda` (a lambda).
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from tfrewrite.facts.index_names import dotted
from tfrewrite.facts.index_records import (
    FunctionInfo,
    ModuleIndex,
    TracedLambda,
    TracedSite,
)
from tfrewrite.facts.keras_names import keras_path

# Keyword arguments of `Model.compile` whose values run traced inside `fit`.
COMPILE_TRACED_KEYWORDS = ("loss", "metrics", "weighted_metrics")
_DATASET_ONLY_METHODS = frozenset(
    {
        "batch",
        "padded_batch",
        "unbatch",
        "prefetch",
        "from_tensor_slices",
        "from_tensors",
        "from_generator",
        "interleave",
        "shuffle",
    }
)
# Higher-order TensorFlow functions that trace the function they are given
# and call it with tensors.
_TRACING_HIGHER_ORDER = frozenset(
    {
        "tensorflow.map_fn",
        "tensorflow.vectorized_map",
        "tensorflow.scan",
        "tensorflow.foldl",
        "tensorflow.foldr",
    }
)

TF_FUNCTION_NAMES = frozenset(
    {
        "tensorflow.function",
        "tensorflow.compat.v2.function",
        "tensorflow.compat.v1.function",
    }
)


def is_tf_function(name: str) -> bool:
    return name in TF_FUNCTION_NAMES


def _leaf_values(node: ast.AST) -> list[ast.AST]:
    """The callables inside `loss=f`, `metrics=[f, g]`, `loss={"out": f}`."""
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [leaf for elt in node.elts for leaf in _leaf_values(elt)]
    if isinstance(node, ast.Dict):
        return [leaf for v in node.values for leaf in _leaf_values(v)]
    return [node]


class TracedCallSites:
    """The visitor's part that recognises traced call sites and the
    module-level aliases of `tf.function` (`f = tf.function`)."""

    index: ModuleIndex
    resolve: Callable[[ast.AST], str | None]
    _mark: Callable[[str], None]
    function_stack: list[FunctionInfo]
    tf_function_aliases: dict[str, dict[str, str]]
    dataset_names: list[set[str]]

    def _tf_function_alias(self, dec: ast.AST) -> dict[str, str] | None:
        """The `tf.function` options when `dec` is a spelling of `tf.function`
        that is not `tf.function` itself: a module alias (`@f` after `f =
        tf.function`), or `@partial(tf.function, jit_compile=True)`."""
        if isinstance(dec, ast.Name) and dec.id in self.tf_function_aliases:
            return dict(self.tf_function_aliases[dec.id])
        return self._partial_tf_function(dec)

    def _partial_tf_function(self, node: ast.AST) -> dict[str, str] | None:
        if not (isinstance(node, ast.Call) and node.args):
            return None
        if (self.resolve(node.func) or "") not in ("functools.partial", "partial"):
            return None
        if not is_tf_function(self.resolve(node.args[0]) or ""):
            return None
        return {kw.arg: ast.unparse(kw.value) for kw in node.keywords if kw.arg}

    def record_tf_function_alias(self, node: ast.Assign) -> None:
        """`f = tf.function`, `f = tf.function(jit_compile=True)`,
        `f = partial(tf.function, ...)` at module level."""
        value = node.value
        options: dict[str, str] | None = None
        if is_tf_function(self.resolve(value) or ""):
            options = {}
        elif (
            isinstance(value, ast.Call)
            and not value.args
            and is_tf_function(self.resolve(value.func) or "")
        ):
            options = {kw.arg: ast.unparse(kw.value) for kw in value.keywords if kw.arg}
        else:
            options = self._partial_tf_function(value)
        if options is None:
            return
        for target in node.targets:
            if isinstance(target, ast.Name):
                self.tf_function_aliases[target.id] = options

    def _is_dataset(self, node: ast.AST) -> bool:
        """A `tf.data.Dataset` expression, as far as pass 1 can tell: built by
        `tf.data`, transformed by a dataset-only method, or a name bound so."""
        while True:
            if isinstance(node, ast.Call):
                name = self.resolve(node.func) or ""
                if name.startswith(("tensorflow.data.", "tensorflow_datasets.")):
                    return True
                if not isinstance(node.func, ast.Attribute):
                    return False
                if node.func.attr in _DATASET_ONLY_METHODS:
                    return True
                node = node.func.value
            elif isinstance(node, ast.Name):
                return node.id in self.dataset_names[-1] or node.id in self.dataset_names[0]
            else:
                return False

    def _record_traced_argument(self, node: ast.Call, callee: str | None) -> None:
        """Functions handed to something that traces them: `Dataset.map`/
        `filter`, `tf.map_fn` and friends, a Keras `Lambda` layer,
        `strategy.run`."""
        target: ast.AST | None = None
        reason = ""
        arguments = ""
        if callee in _TRACING_HIGHER_ORDER and node.args:
            target, reason, arguments = node.args[0], f"given to `{callee}`", "tensor"
        elif keras_path(callee) == "layers.Lambda" and node.args:
            target, reason, arguments = node.args[0], "given to a Keras `Lambda` layer", "first"
        elif isinstance(node.func, ast.Attribute) and node.args:
            attr = node.func.attr
            if attr in ("map", "filter") and len(node.args) == 1:
                if self._is_dataset(node.func.value):
                    target, reason, arguments = node.args[0], f"given to `Dataset.{attr}`", "tensor"
            elif attr == "run" and "strategy" in (dotted(node.func.value) or "").lower():
                target, reason, arguments = node.args[0], "run by `strategy.run`", "likely"
        if target is None:
            return
        if isinstance(target, ast.Lambda):
            self._record_lambda(target, reason, arguments)
            return
        name = self.resolve(target)
        if name:
            self.index.traced_sites.append(TracedSite(name, reason, node.lineno, {}, arguments))

    def _record_lambda(self, node: ast.Lambda, reason: str, arguments: str) -> None:
        conditional = any(isinstance(inner, ast.IfExp) for inner in ast.walk(node.body))
        if self.function_stack and conditional:
            self._mark("branches")  # the enclosing function holds traced code
        self.index.traced_lambdas.append(
            TracedLambda(ast.unparse(node), reason, node.lineno, arguments, conditional)
        )

    def _record_compile(self, node: ast.Call) -> None:
        for kw in node.keywords:
            if kw.arg not in COMPILE_TRACED_KEYWORDS:
                continue
            for value in _leaf_values(kw.value):
                if isinstance(value, ast.Lambda):
                    arguments = "loss" if kw.arg == "loss" else "pair"
                    self._record_lambda(value, f"given to compile({kw.arg}=...)", arguments)
                    continue
                target = value.func if isinstance(value, ast.Call) else value
                name = self.resolve(target)
                if name:
                    self.index.traced_sites.append(
                        TracedSite(name, f"given to compile({kw.arg}=...)", node.lineno)
                    )
