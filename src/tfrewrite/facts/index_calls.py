"""Traced call sites in pass 1: the places where a function is handed to
something that traces it, so the project facts know it runs in a graph though
no `@tf.function` decorates it.

`tf.function(f)` (and its aliases, `partial(tf.function, ...)`),
`model.compile(loss=f, metrics=[g])`, `Dataset.map(f)`/`filter`, `tf.map_fn`
and friends, a Keras `Lambda(f)` layer, `strategy.run(f)`: each is recorded
as a `TracedSite` (a named function) or a `TracedLambda` (a lambda).

What such a lambda calls runs traced as well (`loss=lambda y_true, y_pred:
helper(y_true, y_pred, w=3.0)`): each project-looking callee in its body is
a `TracedSite` of its own, and the lambda's parameters hold what the tracer
passes while its body is visited, so the call's `CallSite` tells `helper`
which of its arguments are tensors. A `functools.partial(f, ...)` handed to a
tracer traces `f`, called with the bound arguments first: its `CallSite`
says so (`partial(pinball, quantile=0.9)` as a loss: `quantile` is a Python
value, the two arguments Keras passes are tensors).
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from tfrewrite.facts.call_evidence import EXTERNAL_ROOTS
from tfrewrite.facts.index_names import BUILTIN_NAMES, dotted
from tfrewrite.facts.index_records import (
    FunctionInfo,
    HandedCallable,
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


def keyed_on_python_values(info: FunctionInfo) -> bool:
    """Whether the function's own `@tf.function` has no `input_signature`:
    it keys its traces on the values of Python arguments, so each new one
    (a loop's counter) traces it again (TFR203)."""
    own = [d for d in info.decorators if d in TF_FUNCTION_NAMES]
    return bool(own) and not any(
        "input_signature" in info.decorator_keywords.get(d, {}) for d in own
    )

# How the reason of a function a `tf.data` pipeline maps starts (`Dataset.map`,
# `Dataset.filter`): it runs traced once per element.
DATASET_CONTEXT = "given to `Dataset."

# A distribution strategy's methods that run a function on each replica:
# `run`, and its name before TensorFlow 2.2 (`experimental_run_v2`).
_STRATEGY_RUN = frozenset({"run", "experimental_run_v2"})


_PARTIAL_NAMES = ("functools.partial", "partial")
# `typing.cast(T, value)` returns `value` itself: it only tells a type checker.
_CAST_NAMES = frozenset({"typing.cast", "typing_extensions.cast"})


def is_tf_function(name: str) -> bool:
    return name in TF_FUNCTION_NAMES


def _lambda_params(node: ast.Lambda) -> list[str]:
    """Every parameter the lambda binds, positional ones first."""
    args = node.args
    names = [a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]]
    names += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
    return names


def _defaulted_params(node: ast.Lambda) -> dict[str, ast.expr]:
    """A lambda's parameters that have a default, with it."""
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    found = {
        a.arg: d
        for a, d in zip(
            positional[len(positional) - len(args.defaults) :], args.defaults, strict=True
        )
    }
    found.update(
        {a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None}
    )
    return found


def _tensor_params(params: list[str], arguments: str) -> list[str]:
    """The parameters a tracer passes tensors to, by `TracedLambda.arguments`:
    a compiled loss or metric gets (y_true, y_pred), `Dataset.map` and
    `tf.map_fn` tensors only, a Keras `Lambda` its inputs first."""
    if arguments in ("loss", "pair"):
        return params[:2]
    if arguments == "tensor":
        return params
    if arguments == "first":
        return params[:1]
    return []


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
    _record_bound_call: Callable[[str, list[ast.expr], list[ast.keyword], str, int, bool], None]
    project_callee: Callable[[ast.expr, str], bool | None]
    scope: list[str]
    function_stack: list[FunctionInfo]
    tf_function_aliases: dict[str, dict[str, str]]
    dataset_names: list[set[str]]
    evidence: list[dict[str, str]]
    # Lambdas recorded as traced, by `id` of their node, with their reason and
    # arguments, until the visitor reaches them; then, per lambda being
    # visited in a traced one (innermost last): its reason and parameters, or
    # None for a lambda nothing traces (`tf.py_function(lambda p: load(p), ...)`
    # runs it eagerly, if at all).
    pending_lambdas: dict[int, tuple[str, str]]
    traced_lambda_stack: list[tuple[str, frozenset[str]] | None]
    _instance_method: Callable[[ast.Attribute, bool], str | None]
    _factory: Callable[[ast.expr], str | None]
    _instance_call: Callable[[ast.expr], str | None]
    declared_functions: set[str]
    _record_call_site: Callable[[ast.Call, str, str | None], None]
    module_instances: dict[str, str]
    partial_bindings: list[dict[str, ast.Call]]
    _evidence: Callable[[ast.AST], str]

    def resolve_function(self, node: ast.AST) -> str | None:
        """`resolve`, and a plain name defined by an enclosing function (a
        helper nested in `build_model()`) as that nested function's
        qualified name: the names of enclosing functions shadow the module's."""
        if isinstance(node, ast.Name) and self.function_stack:
            for depth in range(len(self.scope), 0, -1):
                prefix = ".".join(self.scope[:depth])
                if prefix not in self.index.functions:
                    break  # a class body encloses no names of its methods
                nested = f"{prefix}.{node.id}"
                if nested in self.index.functions or nested in self.declared_functions:
                    return self.index.qualify(nested)
        return self.resolve(node)

    def record_partial_binding(self, names: list[str], value: ast.expr) -> None:
        """An assignment of `value` to `names` in the current scope: each
        holds the partial it builds, or no partial any more."""
        bound = self.partial_bindings[-1]
        is_partial = isinstance(value, ast.Call) and self._partial_parts(value) is not None
        for name in names:
            if is_partial:
                bound[name] = value  # type: ignore[assignment]
            else:
                bound.pop(name, None)

    def _bound_partial(self, node: ast.AST) -> ast.AST:
        """The `partial(...)` call a name holds (`load_fn` for `load_fn =
        partial(parse, size=8)` in this function, one around it or the
        module), or `node` itself."""
        if isinstance(node, ast.Name):
            for bound in reversed(self.partial_bindings):
                if node.id in bound:
                    return bound[node.id]
        return node

    def _partial_parts(
        self, node: ast.AST
    ) -> tuple[ast.expr, list[ast.expr], list[ast.keyword]] | None:
        """`functools.partial(f, *args, **keywords)`, or a name bound to
        one: (f, args, keywords); None for anything else, or a partial with
        `*`/`**` arguments (what it binds is unknown)."""
        node = self._bound_partial(node)
        if not (isinstance(node, ast.Call) and node.args):
            return None
        if (self.resolve(node.func) or "") not in _PARTIAL_NAMES:
            return None
        if any(isinstance(arg, ast.Starred) for arg in node.args):
            return None
        if any(kw.arg is None for kw in node.keywords):
            return None
        return node.args[0], node.args[1:], node.keywords

    def _record_partial(
        self,
        parts: tuple[ast.expr, list[ast.expr], list[ast.keyword]],
        reason: str,
        arguments: str,
        passed: str,
        lineno: int,
    ) -> None:
        """`partial(f, ...)` handed to a tracer: `f` runs traced, called with
        the bound arguments, then what the tracer passes (`passed`, as call
        evidence; "" when unknown, and then no call site is recorded: the
        parameters the tracer fills would count as defaulted). Positional
        arguments bound first shift what the tracer's arguments reach, so
        the site then says nothing of them (`arguments` "") and the reason is
        no longer that of a compiled loss or metric."""
        function, bound, keywords = parts
        name = self.resolve_function(function)
        if not name:
            return
        if bound:
            reason, arguments = f"bound by `functools.partial` and {reason}", ""
        elif keywords and arguments in ("tensor", "likely"):
            arguments = ""  # the bound keywords receive Python values, not tensors
        self.index.traced_sites.append(TracedSite(name, reason, lineno, {}, arguments))
        via_attribute = self.project_callee(function, name)
        if passed and via_attribute is not None:
            self._record_bound_call(name, bound, keywords, passed, lineno, via_attribute)

    def _tf_function_alias(self, dec: ast.AST) -> dict[str, str] | None:
        """The `tf.function` options when `dec` is a spelling of `tf.function`
        that is not `tf.function` itself: a module alias (`@f` after `f =
        tf.function`), `@partial(tf.function, jit_compile=True)`, or any of
        these (or `tf.function` itself) given to `typing.cast`, which
        returns its value unchanged (`@cast(Callable, tf.function)`)."""
        value = self._uncast(dec)
        if value is not dec:
            if is_tf_function(self.resolve(value) or ""):
                return {}
            if isinstance(value, ast.Call) and is_tf_function(self.resolve(value.func) or ""):
                return {kw.arg: ast.unparse(kw.value) for kw in value.keywords if kw.arg}
        if isinstance(value, ast.Name) and value.id in self.tf_function_aliases:
            return dict(self.tf_function_aliases[value.id])
        return self._partial_tf_function(value)

    def _uncast(self, node: ast.AST) -> ast.AST:
        """The value `typing.cast(T, value)` returns, however deeply cast."""
        while (
            isinstance(node, ast.Call)
            and len(node.args) == 2
            and (self.resolve(node.func) or "") in _CAST_NAMES
        ):
            node = node.args[1]
        return node

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
        value = self._uncast(node.value)
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
        `filter`, `tf.map_fn` and friends, a Keras `Lambda` layer, the step
        function of Keras' `backend.rnn`, `strategy.run`."""
        target: ast.AST | None = None
        reason = ""
        arguments = ""
        # What the tracer passes, as call evidence, when a partial is given.
        passed = ""
        if callee in _TRACING_HIGHER_ORDER and node.args:
            target, reason, arguments = node.args[0], f"given to `{callee}`", "tensor"
        elif keras_path(callee) == "backend.rnn" and node.args:
            # Keras' recurrent loop calls its step function with each
            # step's inputs, in a `tf.while_loop` of the layer's `call`.
            target, reason, arguments = node.args[0], "given to Keras' `backend.rnn`", "first"
        elif keras_path(callee) == "layers.Lambda":
            function = node.args[0] if node.args else None
            for kw in node.keywords:
                if kw.arg == "function":
                    function = kw.value
            if function is not None:
                target, reason, arguments = function, "given to a Keras `Lambda` layer", "first"
                passed = "t"
        elif isinstance(node.func, ast.Attribute) and node.args:
            attr = node.func.attr
            if attr in ("map", "filter") and len(node.args) <= 2:
                # `ds.map(f, tf.data.AUTOTUNE)`: the second is `num_parallel_calls`
                # (`pool.map(f, items)` is no dataset's).
                parallel = node.args[1:] and (self.resolve(node.args[1]) or "").startswith(
                    "tensorflow.data."
                )
                if self._is_dataset(node.func.value) or _dataset_keywords(node) or parallel:
                    reason = f"{DATASET_CONTEXT}{attr}`"
                    target, arguments = node.args[0], "tensor"
            elif attr in _STRATEGY_RUN and "strategy" in (dotted(node.func.value) or "").lower():
                target, reason, arguments = node.args[0], "run by `strategy.run`", "likely"
                self._record_strategy_call(node)
        if target is None:
            return
        if isinstance(target, ast.Lambda):
            self._record_lambda(target, reason, arguments)
            return
        bound = self._module_lambda(target)
        if bound is not None:
            self._record_lambda(bound, reason, arguments)
            if id(bound) in self.visited_lambdas:
                # Already read where it is written, as untraced code: what
                # its body calls runs traced (`record_lambda_call`).
                self.pending_lambdas.pop(id(bound), None)
                self._record_traced_body(bound, reason)
            return
        parts = self._partial_parts(target)
        if parts is not None:
            self._record_partial(parts, reason, arguments, passed, node.lineno)
            return
        name = self._handed_function(target)
        if name:
            caller = self.function_stack[-1].qualname if self.function_stack else ""
            self.index.traced_sites.append(
                TracedSite(name, reason, node.lineno, {}, arguments, caller)
            )

    def record_handed_callables(self, node: ast.Call) -> None:
        """Functions a call hands over, by keyword or, to a method of `self`
        or a project function, by position (`HandedCallable.keyword` `#0`
        for the first positional argument):
        by name, in a lambda's body, or bound by `functools.partial` (inline
        or through the name holding it). The callee may hand that parameter
        to a tracer, which the project facts decide."""
        method = node.func.attr if isinstance(node.func, ast.Attribute) else None
        if isinstance(node.func, ast.Name):
            method = node.func.id
        if method is None:
            return
        given = [(f"#{i}", arg) for i, arg in enumerate(node.args)] if self._own_call(node) else []
        given += [(kw.arg, kw.value) for kw in node.keywords if kw.arg is not None]
        for slot, value in given:
            # What runs is called with the arguments the lambda or the
            # partial adds to the tracer's: those decide its parameters.
            through_lambda = isinstance(value, ast.Lambda)
            parts = self._partial_parts(value)
            if parts is not None:
                handed: list[ast.expr] = [parts[0]]
                through_lambda = True
            elif isinstance(value, ast.Lambda):
                handed = [
                    inner.func for inner in ast.walk(value.body) if isinstance(inner, ast.Call)
                ]
            elif isinstance(value, (ast.Name, ast.Attribute)):
                handed = [value]
            else:
                continue
            resolved = (self.resolve_function(f) for f in handed)
            called = tuple(n for n in resolved if n and n.partition(".")[0] not in EXTERNAL_ROOTS)
            if called:
                self.index.handed_callables.append(
                    HandedCallable(method, slot, called, through_lambda, node.lineno)
                )

    def _own_call(self, node: ast.Call) -> bool:
        """Whether a call's positional arguments can be matched to a
        project function's parameters by the callee's name: a method of
        `self`, or a plain name that is no library's (`ds.map(f)` is a
        dataset's, whatever project function is also named `map`)."""
        func = node.func
        if isinstance(func, ast.Attribute):
            return isinstance(func.value, ast.Name) and func.value.id == "self"
        if not isinstance(func, ast.Name) or func.id in BUILTIN_NAMES:
            return False  # `map(f, items)` is Python's
        name = self.resolve_function(func)
        return bool(name) and name.partition(".")[0] not in EXTERNAL_ROOTS  # type: ignore[union-attr]

    def _record_strategy_call(self, node: ast.Call) -> None:
        """`strategy.run(fn, args=(x, flag))` calls `fn(x, flag)` on each
        replica with those values as they are (a Python bool stays one): a
        call site of `fn`, whose arguments say what its parameters are."""
        handed = node.args[0]
        given = node.args[1] if len(node.args) > 1 else None
        given = given or next((kw.value for kw in node.keywords if kw.arg == "args"), None)
        if not isinstance(given, (ast.Tuple, ast.List)):
            return
        callee = self.resolve_function(handed)
        if not callee:
            return
        call = ast.copy_location(ast.Call(func=handed, args=list(given.elts), keywords=[]), node)
        self._record_call_site(call, callee, self._instance_call(handed))

    def _handed_function(self, target: ast.AST) -> str | None:
        """The function a tracer is handed: as `resolve_function` names it,
        a method of an object this function builds (`aug.flip` for `aug =
        Augment()`), or the methods `getattr(aug, "get" + name)` may fetch
        (`_named_by_getattr`), or what a project factory called there
        returns (`ds.map(make_parse(n))`: the `parse_fn` it defines and
        returns, as `make_parse()` names it for the project facts), also
        through the name that result is bound to (`parse = make_parse(n)`,
        then `ds.map(parse)`)."""
        target = _named_by_getattr(target) or target
        if isinstance(target, ast.Call):
            factory = self._factory(target)
            return f"{factory}()" if factory else None
        if isinstance(target, ast.Name):
            called = self._instance_call(target)
            if called:
                return called
        if isinstance(target, ast.Attribute) and self.function_stack:
            method = self._instance_method(target, True)
            if method:
                return method
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
            # `ds.map(aug.flip)` at module level, for `aug = Augment()` there.
            constructor = self.module_instances.get(target.value.id)
            if constructor:
                return f"{constructor}.{target.attr}"
        return self.resolve_function(target)

    def _record_traced_body(self, node: ast.Lambda, reason: str) -> None:
        """The calls of a traced lambda's body (and of the lambdas in it that
        no `tf.py_function` runs eagerly), as traced calls; the parameters of
        all of them shadow the names they call."""
        lambdas = [
            inner
            for inner in ast.walk(node)
            if isinstance(inner, ast.Lambda)
            and (inner is node or id(inner) not in self.eager_lambdas)
        ]
        params = frozenset(p for inner in lambdas for p in _lambda_params(inner))
        eager = [inner for inner in ast.walk(node) if id(inner) in self.eager_lambdas]
        skipped = {id(n) for inner in eager for n in ast.walk(inner)}
        self.traced_lambda_stack.append((reason, params))
        try:
            for inner in ast.walk(node.body):
                if isinstance(inner, ast.Call) and id(inner) not in skipped:
                    self.record_lambda_call(inner)
        finally:
            self.traced_lambda_stack.pop()

    def _module_lambda(self, target: ast.AST) -> ast.Lambda | None:
        """The lambda a module-scope name bound once to one holds, when no
        enclosing function binds the name."""
        if not isinstance(target, ast.Name) or not self.names_module_scope(target.id):
            return None
        return self.module_lambdas.get(target.id)

    def _record_lambda(self, node: ast.Lambda, reason: str, arguments: str) -> None:
        conditional = any(isinstance(inner, ast.IfExp) for inner in ast.walk(node.body))
        if self.function_stack and conditional:
            self._mark("branches")  # the enclosing function holds traced code
        self.index.traced_lambdas.append(
            TracedLambda(ast.unparse(node), reason, node.lineno, arguments, conditional)
        )
        self.pending_lambdas[id(node)] = (reason, arguments)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        """A lambda's parameters shadow the names around it while its body
        is visited: unknown, or tensors where a tracer passes them (a
        traced lambda's), so the calls in its body carry that evidence."""
        self.visited_lambdas.add(id(node))
        params = _lambda_params(node)
        for default in [*node.args.defaults, *node.args.kw_defaults]:
            if default is not None:  # evaluated where the lambda is written
                self.visit(default)
        traced = self.pending_lambdas.pop(id(node), None)
        # `lambda x, flag=flag: f(x, flag)`: a parameter with a default keeps
        # the value bound where the lambda is written; the tracer fills the
        # others (`Dataset.map` passes an element's components).
        defaults = _defaulted_params(node)
        tensors = _tensor_params(params, traced[1]) if traced is not None else []
        tensors = [name for name in tensors if name not in defaults]
        outer = self.evidence[-1]
        # A scope of its own only when it changes what a name holds: most
        # lambdas shadow nothing the scope around them knows.
        scoped = bool(tensors) or any(name in outer for name in params)
        if scoped:
            scope = dict(outer)
            scope.update(dict.fromkeys(params, "?"))
            scope.update(dict.fromkeys(tensors, "t"))
            if traced is not None:
                scope.update({name: self._evidence(value) for name, value in defaults.items()})
            self.evidence.append(scope)
        stacked = traced is not None or bool(self.traced_lambda_stack)
        if stacked:
            entry = (traced[0], frozenset(params)) if traced is not None else None
            around = self.traced_lambda_stack[-1] if self.traced_lambda_stack else None
            if entry is None and around is not None and id(node) not in self.eager_lambdas:
                # A lambda inside a traced one (a `tf.cond` branch) runs in
                # the same trace when called, unless `tf.py_function` runs it
                # eagerly; its parameters shadow too.
                entry = (around[0], around[1] | frozenset(params))
            self.traced_lambda_stack.append(entry)
        self.visit(node.body)
        if stacked:
            self.traced_lambda_stack.pop()
        if scoped:
            self.evidence.pop()

    def record_lambda_call(self, node: ast.Call) -> None:
        """A call in the body of a traced lambda: what it calls runs traced
        (`loss=lambda y_true, y_pred: helper(y_true, y_pred)` traces
        `helper`), when it may be a project function (`project_callee`)
        other than one of the lambda's parameters."""
        traced = self.traced_lambda_stack[-1]
        if traced is None:
            return
        reason, params = traced
        func = node.func
        if isinstance(func, ast.Name) and func.id in params:
            return
        name = self.resolve_function(func)
        if name and self.project_callee(func, name) is not None:
            self.index.traced_sites.append(
                TracedSite(name, f"called from a lambda {reason}", node.lineno)
            )

    def _record_compile(self, node: ast.Call) -> None:
        for kw in node.keywords:
            if kw.arg not in COMPILE_TRACED_KEYWORDS:
                continue
            reason = f"given to compile({kw.arg}=...)"
            for value in _leaf_values(kw.value):
                if isinstance(value, ast.Lambda):
                    arguments = "loss" if kw.arg == "loss" else "pair"
                    self._record_lambda(value, reason, arguments)
                    continue
                parts = self._partial_parts(value)
                if parts is not None:
                    # Keras calls a loss or metric with (y_true, y_pred).
                    self._record_partial(parts, reason, "", "tt", node.lineno)
                    continue
                target = value.func if isinstance(value, ast.Call) else value
                name = self.resolve_function(target)
                if name:
                    self.index.traced_sites.append(TracedSite(name, reason, node.lineno))


# Keywords only `tf.data.Dataset.map` (and `filter`'s siblings) take: a `.map`
# call given one is a dataset's, whatever its receiver (`self.dataset`).
_DATASET_MAP_KEYWORDS = frozenset({"num_parallel_calls", "deterministic"})


def _dataset_keywords(node: ast.Call) -> bool:
    return any(kw.arg in _DATASET_MAP_KEYWORDS for kw in node.keywords)


def _named_by_getattr(node: ast.AST) -> ast.Attribute | None:
    """`getattr(obj, "get" + name)` (or `f"get{name}"`): the methods of `obj`
    whose names start with the constant part, as the attribute `obj.get*`
    (`ProjectLookup.find` reads the `*` as any rest of a name). None for
    anything else, or a name with no constant start."""
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "getattr"
        and len(node.args) == 2
    ):
        return None
    name = node.args[1]
    head: ast.AST | None = None
    if isinstance(name, ast.BinOp) and isinstance(name.op, ast.Add):
        head = name.left
    elif isinstance(name, ast.JoinedStr) and name.values:
        head = name.values[0]
    if not (isinstance(head, ast.Constant) and isinstance(head.value, str) and head.value):
        return None
    if not head.value.isidentifier():
        return None
    return ast.Attribute(value=node.args[0], attr=head.value + "*", ctx=ast.Load())
