"""Pass 1: a per-file index of what other files (and the rules) need to know.
The records it fills (`ModuleIndex`, `FunctionInfo`, ...) are in
`index_records`; this module is the visitor that walks a file and fills them,
and `build_index`, which runs it. What the visitor recognises is in one
module per concept, each a part of the visitor:

- `index_names`: resolving references through the file's imports;
- `index_calls`: traced call sites (`tf.function(f)`, `compile(loss=f)`,
  `Dataset.map(f)`, `strategy.run(f)`, a Keras `Lambda`, a `functools.partial`
  handed to one of them, what a traced lambda calls);
- `call_evidence`: what the arguments of calls to project functions are;
- `index_objects`: what names hold as objects (instances, factory results,
  compiled models, callables handed to `tf.py_function`);
- `function_facts`: per-function body facts (branches, state writes, tapes,
  gradient updates, loops, logging);
- `tape_losses`: the losses a `GradientTape` differentiates;
- `fast_visitor`: the traversal itself.

The records, and the names other modules ask of `ast` nodes (`dotted`,
`opens_tape`, `is_update_call`, `TF_FUNCTION_NAMES`), are importable from
here as well.

Built with the standard library's `ast`, which parses several times faster than
LibCST; the index is small and picklable so worker processes can return it.
Every reference is resolved through the file's imports to a dotted name: a
function `dice` defined in `pkg/losses.py` is `pkg.losses.dice`, and `tf.function`
is `tensorflow.function` whatever alias the file uses.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Mapping
from pathlib import Path

from tfrewrite.facts.call_evidence import EXTERNAL_ROOTS, CallEvidence, number_defaults
from tfrewrite.facts.eager_callables import (
    eager_callable,
    eager_only_statements,
    statements_span,
)
from tfrewrite.facts.fast_visitor import FastVisitor
from tfrewrite.facts.function_facts import (
    FunctionFacts,
    batch_keeps_remainder,
    is_self_attribute,
    is_update_call,
    methods_consuming_grown_lists,
    opens_tape,
    returned_builder_calls,
    returned_parts,
    returns_computed,
    returns_gradients,
    returns_model,
    returns_tensor,
    returns_variables,
    training_layer_reads,
    unset_self_attributes,
    writes_outside,
)
from tfrewrite.facts.index_calls import (
    COMPILE_TRACED_KEYWORDS,
    TF_FUNCTION_NAMES,
    TracedCallSites,
    is_tf_function,
)
from tfrewrite.facts.index_lists import ListReferences
from tfrewrite.facts.index_names import (
    BUILTIN_NAMES,
    ImportResolution,
    dotted,
    identifiers,
    iter_statements,
    module_bindings,
    on_super,
    rebind,
)
from tfrewrite.facts.index_objects import ObjectReferences
from tfrewrite.facts.index_records import (
    SOURCE_FOLDER,
    CallSite,
    ClassInfo,
    FunctionInfo,
    ModuleIndex,
    TapeLoss,
    TracedLambda,
    TracedSite,
)
from tfrewrite.facts.keras_names import (
    MODEL_BUILDER_WORDS,
    RNN_DROPOUT_KEYWORDS,
    WEIGHT_CALLBACK_SUFFIXES,
    builds_keras_layers,
    keras_leaf,
    star_imported_names,
)
from tfrewrite.facts.prefilters import MUTATING_METHODS, self_attribute_from_call
from tfrewrite.facts.set_up_tensors import set_up_tensors
from tfrewrite.facts.shape_parameters import shape_parameter_names
from tfrewrite.facts.tape_losses import (
    record_minimized_losses,
    record_tape_losses,
    returned_terms,
    tape_scopes,
)
from tfrewrite.facts.tape_reach import variable_owners
from tfrewrite.facts.vocabulary import (
    ARRAY_CONVERSIONS,
    ITERATING,
    LIST_GROWING_METHODS,
    MEAN_FUNCTIONS,
    runs_keras_traces,
)
from tfrewrite.workspace.line_names import CellStarts, named_line

# Methods whose results Python iterates (a dict's views, a string's parts).
_PYTHON_ITERATORS = frozenset({"items", "keys", "values", "split", "splitlines"})

__all__ = [
    "COMPILE_TRACED_KEYWORDS",
    "TF_FUNCTION_NAMES",
    "CallSite",
    "ClassInfo",
    "FunctionInfo",
    "ModuleIndex",
    "TapeLoss",
    "TracedLambda",
    "TracedSite",
    "build_index",
    "dotted",
    "is_update_call",
    "module_name_for",
    "opens_tape",
]

# Every statement of a body, nested ones included (`index_names.iter_statements`),
# under the name the relevant-code pruning imports it by.
_statements = iter_statements

# Last components of the averaging functions TFR306 reads (`np.mean`,
# `statistics.fmean`, `tf.reduce_mean`): see `ModuleIndex.averaged_callees`.
_AVERAGES = frozenset({"mean", "average", "fmean", "reduce_mean"})


def _averaged_value(node: ast.Call) -> ast.expr | None:
    """The one value a mean-like call averages over its first axis (the
    axis a list of per-batch values runs along): `np.mean(values)`,
    `np.mean(values, axis=0)`, `np.mean(values, 0)`,
    `statistics.mean(data=values)` (as `metric_averaging` reads it)."""

    def is_zero(value: ast.expr) -> bool:
        return isinstance(value, ast.Constant) and value.value == 0 and value.value is not False

    axis_zero = [kw for kw in node.keywords if kw.arg == "axis" and is_zero(kw.value)]
    others = [kw for kw in node.keywords if kw not in axis_zero]
    args = node.args[:1] if len(node.args) == 2 and is_zero(node.args[1]) else node.args
    if len(args) + len(others) != 1:
        return None
    return args[0] if args else others[0].value


def _list_repeat_count(node: ast.BinOp) -> ast.expr | None:
    """`n` of `[start] * n` or `n * [start]`: a list display repeated."""
    displays = (ast.List, ast.Tuple)
    if isinstance(node.left, displays) and not isinstance(node.right, displays):
        return node.right
    if isinstance(node.right, displays) and not isinstance(node.left, displays):
        return node.left
    return None


def _sum_over_len(node: ast.BinOp) -> ast.expr | None:
    """`values` of `sum(values) / len(values)`."""
    left, right = node.left, node.right
    if not (isinstance(left, ast.Call) and isinstance(right, ast.Call)):
        return None
    if not (isinstance(left.func, ast.Name) and isinstance(right.func, ast.Name)):
        return None
    if (
        (left.func.id, right.func.id) != ("sum", "len")
        or len(left.args) != 1
        or len(right.args) != 1
    ):
        return None
    summed, counted = left.args[0], right.args[0]
    if isinstance(summed, ast.Name) and isinstance(counted, ast.Name) and summed.id == counted.id:
        return summed
    return None


def module_name_for(path: Path, root: Path | None) -> str:
    """Dotted module name of `path` relative to `root` (a leading `src/` dropped)."""
    try:
        rel = path.resolve().relative_to(root.resolve()) if root else Path(path.name)
    except ValueError:
        rel = Path(path.name)
    parts = list(rel.with_suffix("").parts)
    if parts and parts[0] == SOURCE_FOLDER:
        parts = parts[1:]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(p for p in parts if p.isidentifier())


class _Indexer(
    FastVisitor,
    ImportResolution,
    TracedCallSites,
    CallEvidence,
    FunctionFacts,
    ObjectReferences,
    ListReferences,
):
    """The visitor: walks one file once, keeping the scope it is in (classes,
    functions, loops, what local names hold) for the parts that record facts."""

    def __init__(self, index: ModuleIndex, is_package: bool) -> None:
        self.index = index
        self.is_package = is_package
        self.top_level: list[ast.stmt] = []
        self.scope: list[str] = []  # qualname parts
        self.class_stack: list[str] = []
        self.function_stack: list[FunctionInfo] = []
        self.tape_functions: set[str] = set()  # qualnames of functions opening a tape
        # Methods with a tape whose gradients' sources another method may give.
        self.gradient_helpers: list[
            tuple[FunctionInfo, ast.FunctionDef | ast.AsyncFunctionDef]
        ] = []
        self.mentions_variables = False
        self.mentions_models = False
        self.module_level_names: set[str] = set()
        # Per enclosing function, innermost last: local names bound to the
        # result of calling a project function (`loss_fn = make_loss(...)`).
        # Calling one calls what the factory returns: `make_loss()`.
        self.call_results: list[dict[str, str]] = []
        # Per function: the project functions each local name may be bound
        # to (`loss = sse` under `if loss == "default":`).
        self.function_names: list[dict[str, list[str]]] = []
        # Per enclosing function, innermost last: local names unpacked from
        # what a project function returns (`actor, critic = get_model(...)`):
        # each holds a part of what that function builds.
        self.unpacked_results: list[dict[str, str]] = []
        # Per scope, the module's first: names bound to `functools.partial(f,
        # ...)` (`load_fn = partial(parse, size=8)`), handed on by name to a
        # tracer (`ds.map(load_fn)`) or to a function that hands it to one.
        self.partial_bindings: list[dict[str, ast.Call]] = [{}]
        # Per enclosing function, innermost last: local names that hold one
        # of several project objects (an element of `metrics = [qwk, corr]`,
        # or the loop variable over it), with their constructors.
        self.object_choices: list[dict[str, tuple[str, ...]]] = []
        self.function_tables: list[dict[str, tuple[str, ...]]] = []
        self.local_lists: list[dict[str, bool]] = []
        self.built_locals: list[set[str]] = []
        # Qualnames of nested functions declared in the functions being read
        # (`_scope_definitions`), visited or not yet.
        self.declared_functions: set[str] = set()
        # Optimizers built with a plain function as their learning rate, by
        # holder (`_holder_key`): the function's qualified name.
        self.learning_rate_callables: dict[str, str] = {}
        self.mentions_batch = True  # whether `.batch(...)` can occur at all (a byte check)
        self.mentions_apply = True  # whether `.apply(...)` can occur at all
        self.mentions_walrus = True  # whether `:=` can occur at all
        self.mentions_eager_test = True  # whether `executing_eagerly` can occur at all
        # Calls of a name that holds an object or a factory's result, by node
        # id: what they run (`make_loss()`, `pkg.Net()`), for the tape losses.
        self.instance_callees: dict[int, str] = {}
        self.mentions_dataset = True  # whether a `tf.data` dataset can occur at all
        self.loop_stack: list[bool] = []  # per enclosing loop: may feed a short batch
        # Per enclosing loop of the function: the parameter a `for` iterates
        # (`for noise in noises`), "" for any other loop; and the names
        # each `for` binds (`for image, noises in data`).
        self.loop_iterated: list[str] = []
        self.loop_targets: list[set[str]] = []
        self.loop_bodies: list[list[ast.stmt]] = []  # per enclosing loop: its body
        # Per scope (the module's first): names a loop appends to so far.
        self.grown_names: list[set[str]] = [set()]
        self.graph_loops: list[bool] = []  # per enclosing loop: may be a graph loop
        # Per enclosing `if` that tests `self` attributes unset (`if not
        # self._gradients:`): those attributes, which its body sets up once.
        self.unset_guards: list[frozenset[str]] = []
        # Per enclosing loop of the function's own body: a `for` over data
        # (not a counted `range`).
        self.data_loops: list[bool] = []
        # Per function being visited: names a mutating method is called on,
        # and whether inside a loop that may be a graph loop.
        self.mutated_names: list[list[tuple[str, bool]]] = []
        self.batched_names: list[set[str]] = [set()]  # per scope: names bound to `.batch(n)`
        # Per scope: names bound to `ds.apply(f)` for an `f` this module does
        # not define (`input_pipeline.prepare`), with `f` as the module names
        # it; the project facts learn whether `f` batches keeping the rest.
        self.applied_names: list[dict[str, str]] = [{}]
        # Module-level names bound to `tf.function` (or a configured one):
        # `f = tf.function` then `@f`, `fn = partial(tf.function, jit_compile=True)`.
        self.tf_function_aliases: dict[str, dict[str, str]] = {}
        # Per scope: what a local name holds, as call-site evidence (`t`, `s`, `p`).
        self.evidence: list[dict[str, str]] = [{}]
        self.dataset_names: list[set[str]] = [set()]  # per scope: names bound to datasets
        # Traced lambdas not visited yet, and those being visited (`index_calls`).
        self.pending_lambdas: dict[int, tuple[str, str]] = {}
        # Module-scope names bound once to a lambda (`augment = lambda x, y:
        # ...`): handing the name to a tracer hands it the lambda.
        self.module_lambdas: dict[str, ast.Lambda] = {}
        self.visited_lambdas: set[int] = set()
        self.traced_lambda_stack: list[tuple[str, frozenset[str]] | None] = []
        # Per enclosing class: its node, and (computed on first use) the
        # `self` attributes that hold Python numbers (`_init_numbers`).
        self.class_numbers: list[tuple[ast.ClassDef, set[str] | None]] = []
        # Conditions that are Python values unless a `self` attribute they
        # read holds a variable, with their function; and the attributes some
        # method assigns from a call (known only once the file is visited).
        self.branch_reads: list[tuple[FunctionInfo, frozenset[str]]] = []
        # Per function being visited: its conditions; then each function with
        # conditions, decided at the end of the file (`decide_branches`).
        self.branch_tests: list[list[ast.expr]] = []
        self.functions_with_tests: list[
            tuple[FunctionInfo, ast.FunctionDef | ast.AsyncFunctionDef, list[ast.expr]]
        ] = []
        self.self_call_attrs: set[str] = set()
        # Names augmented with `+=` and names divided, anywhere in the file.
        self.summed_names: set[str] = set()
        self.divided_names: set[str] = set()
        # Module-level names bound to a Python logger (`record_logger`).
        self.logger_names: set[str] = set()
        # Module-level names bound once to an object: name -> its constructor
        # (`critic = Critic()`), so `critic.sync()` calls `Critic.sync`.
        self.module_instances: dict[str, str] = {}
        self.module_object_choices: dict[str, tuple[str, ...]] = {}
        # Call-site evidence: module-level names bound once; per function
        # being visited, the names it binds and its sites forwarding a
        # parameter (`CallEvidence.settle_forwarded`).
        self.module_once: set[str] = set()
        self.bound_here: list[set[str]] = []
        # Per function being visited: parameter -> the dotted name its
        # annotation gives (`model: SACModel`), the class of what it holds.
        self.annotated_params: list[dict[str, str]] = []
        # The functions whose `GradientTape` blocks are being visited.
        self.tape_owners: list[FunctionInfo] = []
        self.forwarding_sites: list[list[CallSite]] = []
        # Calls made as bare statements (`tracker.add(x)`), by node id: their
        # results are not used.
        self.statement_calls: set[int] = set()
        # Lambdas handed to `tf.py_function`/`tf.numpy_function`, by node
        # id, and how many of them enclose the node being visited: what they
        # call runs eagerly (`eager_callables`).
        self.eager_lambdas: set[int] = set()
        self.eager_depth = 0
        self.source = ""
        self.source_lines: list[str] | None = None
        # Per module-level `GradientTape` block in a loop being visited: the
        # callees called in it (`ModuleIndex.tape_block_calls`).
        self.module_tape_calls: list[list[str]] = []

    # -- definitions ------------------------------------------------------------
    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        qualname = ".".join([*self.scope, node.name])
        bases = [b for b in (self.resolve(base) for base in node.bases) if b]
        methods = [
            s.name for s in node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
        ]
        self.index.classes[qualname] = ClassInfo(
            qualname,
            node.lineno,
            bases,
            methods,
            set_up_tensors=set_up_tensors(node, self.resolve),
        )
        self.scope.append(node.name)
        self.class_stack.append(qualname)
        self.class_numbers.append((node, None))
        self.generic_visit(node)
        self.class_numbers.pop()
        steps = [
            info
            for info in (self.index.functions.get(f"{qualname}.{m}") for m in methods)
            if info is not None and info.trains
        ]
        if steps:  # only a train-step method needs the (whole-class) question
            grown = methods_consuming_grown_lists(node, self.resolve)
            for info in steps:
                info.consumes_grown_lists = info.qualname.rpartition(".")[2] in grown
        self.class_stack.pop()
        self.scope.pop()

    def _visit_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        qualname = ".".join([*self.scope, node.name])
        decorators: list[str] = []
        decorator_keywords: dict[str, dict[str, str]] = {}
        for dec in node.decorator_list:
            alias = self._tf_function_alias(dec)
            if alias is not None:
                decorators.append("tensorflow.function")
                decorator_keywords["tensorflow.function"] = alias
                continue
            target = dec.func if isinstance(dec, ast.Call) else dec
            name = self.resolve(target)
            if name:
                decorators.append(name)
                if isinstance(dec, ast.Call):
                    decorator_keywords[name] = {
                        kw.arg: ast.unparse(kw.value) for kw in dec.keywords if kw.arg
                    }
        args = node.args
        params = [a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]]
        in_class = (
            bool(self.class_stack)
            and self.scope
            and self.scope[-1] == (self.class_stack[-1].split(".")[-1])
        )
        info = FunctionInfo(
            qualname=qualname,
            lineno=node.lineno,
            params=params,
            decorators=decorators,
            decorator_keywords=decorator_keywords,
            calls=[],
            class_name=self.class_stack[-1] if in_class else None,
            min_positional=len(args.posonlyargs) + len(args.args) - len(args.defaults),
            max_positional=-1
            if args.vararg is not None
            else len(args.posonlyargs) + len(args.args),
            positional_count=len(args.posonlyargs) + len(args.args),
            requires_keywords=any(d is None for d in args.kw_defaults),
            takes_any_keyword=args.kwarg is not None,
            first_lineno=min([node.lineno, *(d.lineno for d in node.decorator_list)]),
            end_lineno=node.end_lineno or 0,
        )
        self.index.functions[qualname] = info
        info.tensor_defaults = self._tensor_defaults(args)
        self._record_default_calls(node)
        self.scope.append(node.name)
        # Functions it defines, known before its body is read: a call or a
        # tracer's argument may name one defined further down.
        prefix = ".".join(self.scope)
        self.declared_functions.update(
            f"{prefix}.{name}" for name in _scope_definitions(node.body, _FUNCTION_NODES)
        )
        self.function_stack.append(info)
        loops, self.loop_stack = self.loop_stack, []
        iterated, self.loop_iterated = self.loop_iterated, []
        targets, self.loop_targets = self.loop_targets, []
        bodies, self.loop_bodies = self.loop_bodies, []
        graph_loops, self.graph_loops = self.graph_loops, []
        data_loops, self.data_loops = self.data_loops, []
        self.mutated_names.append([])
        self.batched_names.append(set())
        self.applied_names.append({})
        # A parameter whose default is a number or a bool (`test=False`) is
        # passed on as a Python value.
        numbers = number_defaults(node.args)
        if numbers:
            info.number_defaults = frozenset(numbers)
        self.evidence.append({name: "p" for name in numbers})
        self.call_results.append({})
        self.function_names.append({})
        self.unpacked_results.append({})
        self.partial_bindings.append({})
        self.object_choices.append({})
        self.function_tables.append({})
        self.local_lists.append({})
        self.built_locals.append(set())
        self.grown_names.append(set())
        self.dataset_names.append(set())
        self.branch_tests.append([])
        self.bound_here.append(set())
        self.forwarding_sites.append([])
        self.annotated_params.append(self._annotated_classes(args))
        for stmt in node.body:
            self.visit(stmt)
        if "training" in info.params:
            info.trains_by_default = _defaults_to_true(node.args, "training")
            info.reads_training = any(
                isinstance(n, ast.Name) and n.id == "training" and isinstance(n.ctx, ast.Load)
                for stmt in node.body
                for n in ast.walk(stmt)
            )
        self.annotated_params.pop()
        self.settle_forwarded()
        tests = self.branch_tests.pop()
        if tests:
            self.functions_with_tests.append((info, node, tests))
        self.dataset_names.pop()
        self.evidence.pop()
        self.call_results.pop()
        self.function_names.pop()
        self.unpacked_results.pop()
        self.partial_bindings.pop()
        self.object_choices.pop()
        self.function_tables.pop()
        self.local_lists.pop()
        self.built_locals.pop()
        self.grown_names.pop()
        self.batched_names.pop()
        self.applied_names.pop()
        self.loop_stack = loops
        self.loop_iterated = iterated
        self.loop_targets = targets
        self.loop_bodies = bodies
        self.graph_loops = graph_loops
        self.data_loops = data_loops
        self._decide_mutations(node, info)
        if info.opens_gradient_tape and not info.applies_gradients:
            info.returns_gradients = returns_gradients(node)
            if not info.returns_gradients and info.class_name:
                # Its sources may be what another method returns: decided
                # once the class is read (`_record_helper_gradients`).
                self.gradient_helpers.append((info, node))
        if self.mentions_variables and info.class_name:
            info.returns_variables = returns_variables(node)
            info.returns_variables_of = variable_owners(node)
        info.returns_tensor = returns_tensor(node, self.resolve)
        info.returns_computed = info.returns_tensor or returns_computed(node, self.resolve)
        if self.mentions_models:
            info.returns_model = returns_model(node, self.resolve)
            if info.returns_model or builds_keras_layers(info.calls):
                reads = training_layer_reads(node, self.resolve)
                info.model_reads_training, info.model_parts = reads
                info.builds_layers = not info.returns_model
        info.returned_calls = returned_terms(node.body, self.resolve)
        if info.returned_calls and not info.returns_model:
            info.returned_builder_calls = returned_builder_calls(node, self.resolve)
            if len(info.returned_builder_calls) > 1:
                info.returned_parts = returned_parts(node, self.resolve)
        self.function_stack.pop()
        self.scope.pop()
        for dec in node.decorator_list:
            self.visit(dec)

    def _in_init(self, value: ast.expr) -> bool:
        """Whether `value` is a parameter of the `__init__` being visited."""
        if not isinstance(value, ast.Name) or len(self.function_stack) != 1:
            return False
        init = self.function_stack[0]
        return init.qualname.endswith(".__init__") and value.id in init.params[1:]

    def _absorbs_keywords(self, node: ast.Call) -> bool:
        """`self.__dict__.update(kwargs)` (or `vars(self).update(kwargs)`,
        `setattr(self, key, value)`) in `__init__`: the object keeps what
        its builders pass by keyword, each in the attribute so named."""
        if len(self.function_stack) != 1 or not self.function_stack[0].qualname.endswith(
            ".__init__"
        ):
            return False
        func = node.func
        if isinstance(func, ast.Name) and func.id == "setattr":
            return bool(node.args) and _is_self(node.args[0])
        if not (isinstance(func, ast.Attribute) and func.attr == "update"):
            return False
        target = func.value
        if isinstance(target, ast.Attribute) and target.attr == "__dict__":
            return _is_self(target.value)
        return (
            isinstance(target, ast.Call)
            and isinstance(target.func, ast.Name)
            and target.func.id == "vars"
            and len(target.args) == 1
            and _is_self(target.args[0])
        )

    def _held_class(self, value: ast.expr) -> str | None:
        """What `self.x = value` holds, as a dotted name: what a call builds
        (`Critic(...)`), or the class a parameter's annotation names
        (`self.model = model` for `model: SACModel`)."""
        if isinstance(value, ast.Call):
            return self.resolve(value.func)
        if isinstance(value, ast.Name) and self.annotated_params:
            return self.annotated_params[-1].get(value.id)
        return None

    def _annotated_classes(self, args: ast.arguments) -> dict[str, str]:
        """Parameters annotated with a plain class name (`model: SACModel`,
        `net: nets.Actor`): the dotted name the annotation resolves to.
        Builtins and `typing` forms (`int`, `Optional[X]`) hold no one class."""
        found: dict[str, str] = {}
        for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
            annotation = arg.annotation
            if not isinstance(annotation, (ast.Name, ast.Attribute)):
                continue
            if isinstance(annotation, ast.Name) and annotation.id in BUILTIN_NAMES:
                continue
            name = self.resolve(annotation)
            if name and not name.startswith("typing."):
                found[arg.arg] = name
        return found

    def _tensor_defaults(self, args: ast.arguments) -> dict[str, str]:
        """The parameters whose default is a tensor, with its evidence, as
        the scope around the `def` evaluates it."""
        positional = [*args.posonlyargs, *args.args]
        pairs = list(
            zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True)
        )
        pairs += [
            (a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None
        ]
        found = {a.arg: self._evidence(default) for a, default in pairs}
        return {name: evidence for name, evidence in found.items() if evidence in ("t", "s")}

    visit_FunctionDef = _visit_function
    visit_AsyncFunctionDef = _visit_function

    def visit_If(self, node: ast.If) -> None:
        self._branch(node.test)
        if self.mentions_eager_test:
            eager = eager_only_statements(node, self.resolve)
            if eager:
                if self.source_lines is None:
                    self.source_lines = self.source.split("\n")
                self.index.eager_spans.append(statements_span(eager, self.source_lines))
        unset = unset_self_attributes(node.test) if self.function_stack else frozenset()
        if not unset:
            self.generic_visit(node)
            return
        self.visit(node.test)
        self.unset_guards.append(unset)
        for statement in node.body:
            self.visit(statement)
        self.unset_guards.pop()
        for statement in node.orelse:
            self.visit(statement)

    def visit_IfExp(self, node: ast.IfExp) -> None:
        self._branch(node.test)
        self.generic_visit(node)

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        # Python tests the truth of every operand but the last (TFR109).
        for operand in node.values[:-1]:
            self._branch(operand)
        self.generic_visit(node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> None:
        if isinstance(node.op, ast.Not):
            self._branch(node.operand)
        self.generic_visit(node)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        if (
            isinstance(node.op, ast.Div)
            and isinstance(node.left, ast.Call)
            and isinstance(node.left.func, ast.Name)
            and node.left.func.id == "sum"
        ):
            self.index.divides_sum = True
        if isinstance(node.op, ast.Div) and isinstance(node.left, ast.Name):
            self.divided_names.add(node.left.id)
        if isinstance(node.op, ast.Div) and _updates_a_mean(node):
            self.index.updates_running_mean = True
        if isinstance(node.op, ast.Mult) and self.function_stack:
            count = _list_repeat_count(node)
            if count is not None and any(
                isinstance(n, ast.Attribute) and n.attr in ("shape", "get_shape")
                for n in ast.walk(count)
            ):
                self.function_stack[-1].repeats_list = True
        if isinstance(node.op, ast.Div):
            summed = _sum_over_len(node)
            if summed is not None:
                self._average_parameter(summed)
        self.generic_visit(node)

    def _average_parameter(self, value: ast.expr) -> None:
        """`value` is averaged whole: a parameter of the function, then a
        caller's values handed to it are (`FunctionInfo.averaged_params`)."""
        if self.function_stack and isinstance(value, ast.Name):
            info = self.function_stack[-1]
            if value.id in info.params:
                info.averaged_params = info.averaged_params | {value.id}

    def _record_object_attribute_write(self, target: ast.expr) -> None:
        """`agent.noise = noise * decay` in a loop, for a name bound to an
        object of a class (`agent = Agent(...)`, here or at module level):
        the object's attribute changes between the calls of its methods.
        An object the loop builds afresh in each pass is set up there, not
        changed."""
        if not self.loop_stack or not isinstance(target, ast.Attribute):
            return
        if not isinstance(target.value, ast.Name):
            return
        owner = target.value.id
        if any(
            isinstance(statement, ast.Assign)
            and isinstance(statement.value, ast.Call)
            and any(isinstance(t, ast.Name) and t.id == owner for t in statement.targets)
            for statement in iter_statements(self.loop_bodies[-1], into_definitions=False)
        ):
            return  # an object built afresh in each pass, set up before use
        if self._recompiled_after(owner, target.lineno):
            return  # Keras traces the model's steps afresh after `compile`
        built = self.object_constructor(owner)
        if built is not None:
            self.index.object_attribute_writes.append((built, target.attr, target.lineno))

    def _extended_methods(self, func: ast.Attribute) -> list[str]:
        """`super().latent(n)` in a method: the `latent` of each project base
        of the class (what runs when the subclass's method is traced)."""
        owner = self._method_class()
        if owner is None or not on_super(func):
            return []
        return [
            f"{base}.{func.attr}"
            for base in owner.bases
            if base.partition(".")[0] not in EXTERNAL_ROOTS
        ]

    def _recompiled_after(self, owner: str, line: int) -> bool:
        """Whether the loop body, after `line`, compiles the model `owner`
        (`model.depth = d` then `model.compile(...)`): `compile` drops the
        traced `fit`/`predict` functions, so the next ones trace anew and
        read the new value."""
        return any(
            isinstance(node, ast.Call)
            and node.lineno > line
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "compile"
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == owner
            for statement in self.loop_bodies[-1]
            for node in ast.walk(statement)
        )

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self.bind_names(node.target)
        self._record_named_attribute_write(node.target)
        self._record_object_attribute_write(node.target)
        self._record_target(node.target)
        attr = self_attribute_from_call(node)
        if attr is not None:
            self.self_call_attrs.add(attr)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.bind_names(node.target)
        if writes_outside(node.target, augmented=True):
            self._mark("writes_state")
        self._record_named_attribute_write(node.target)
        self._record_object_attribute_write(node.target)
        if isinstance(node.op, ast.Add) and isinstance(node.target, ast.Name):
            self.summed_names.add(node.target.id)
            if isinstance(node.value, ast.BinOp) and isinstance(node.value.op, ast.Div):
                # `total += loss / n_batches`: divided term by term.
                self.divided_names.add(node.target.id)
        if isinstance(node.op, ast.Div) and isinstance(node.target, ast.Name):
            self.divided_names.add(node.target.id)  # `total /= (step + 1)`
        if (
            self.loop_stack
            and isinstance(node.op, ast.Add)
            and not isinstance(node.value, ast.Constant)  # `n += 1` counts, it does not sum
        ):
            self.index.accumulates_in_loop = True
        self._record_target(node.target)
        owner = self._method_class()
        if owner is not None and is_self_attribute(node.target):
            assert isinstance(node.target, ast.Attribute)
            method = self.function_stack[0].qualname.rpartition(".")[2]
            owner.updated_attrs.setdefault(node.target.attr, method)
        if isinstance(node.target, ast.Name) and isinstance(node.value, ast.Constant):
            # A Python counter (`step += 1`) stays a Python value.
            known = self.evidence[-1].get(node.target.id, "?")
            self.evidence[-1][node.target.id] = "p" if known == "p" else "?"
        self.generic_visit(node)

    def visit_Global(self, node: ast.Global) -> None:
        self._mark("writes_state")
        where = (
            f"rebound in `{self.function_stack[-1].qualname}`"
            if self.function_stack
            else ("declared global")
        )
        for name in node.names:
            self.index.rebound_module_names.setdefault(name, where)

    def _sets_tested_flag(self, targets: list[ast.expr]) -> bool:
        """Whether an assignment sets a `self` attribute that a condition of
        the function read before (`if self.first: self.first = False`)."""
        attrs = {t.attr for t in targets if isinstance(t, ast.Attribute) and is_self_attribute(t)}
        return bool(attrs) and any(
            isinstance(n, ast.Attribute) and n.attr in attrs and is_self_attribute(n)
            for test in (self.branch_tests[-1] if self.branch_tests else ())
            for n in ast.walk(test)
        )

    def visit_Nonlocal(self, node: ast.Nonlocal) -> None:
        self._mark("writes_state")

    def visit_Assign(self, node: ast.Assign) -> None:
        if (
            self.function_stack
            and any(isinstance(t, (ast.Tuple, ast.List)) for t in node.targets)
            and self._evidence(node.value) in ("t", "s")
        ):
            self.function_stack[-1].iterates_tensor = True
        for target in node.targets:
            self.bind_names(target)
        if _adds_to_itself(node):
            self.summed_names.add(node.targets[0].id)  # type: ignore[attr-defined]
        self._record_learning_rate_callable(node)
        if self.local_lists:
            self.record_list_binding(node.targets, node.value)
        attr = self_attribute_from_call(node)
        if attr is not None:
            self.self_call_attrs.add(attr)
        if self.function_stack:
            self.function_stack[-1].assigned_self_attrs.update(
                t.attr for t in node.targets if is_self_attribute(t)  # type: ignore[attr-defined]
            )
        owner = self._method_class()
        if owner is not None and any(keras_leaf(base) == "Callback" for base in owner.bases):
            for target in node.targets:
                # `self.model.schedule = ...`: the model `fit` hands the callback.
                if isinstance(target, ast.Attribute) and _is_callback_model(target.value):
                    method = self.function_stack[0].qualname
                    self.index.model_writes.setdefault(target.attr, method)
        held = self._held_class(node.value) if owner is not None else None
        # A parameter kept whole (`self.actor = actor`): what the call sites
        # pass there says more than its annotation (`actor: tf.keras.Model`).
        if owner is not None and self._in_init(node.value):
            for target in node.targets:
                if is_self_attribute(target):
                    assert isinstance(target, ast.Attribute) and isinstance(node.value, ast.Name)
                    owner.held_parameters.setdefault(target.attr, node.value.id)
        if held:
            for target in node.targets:
                # `self.actor, self.critic = build(...)`: each holds what the
                # builder returns (a model, when it builds models).
                unpacked = isinstance(target, ast.Tuple) and isinstance(node.value, ast.Call)
                for element in target.elts if unpacked else [target]:  # type: ignore[attr-defined]
                    if is_self_attribute(element):
                        assert isinstance(element, ast.Attribute)
                        owner.held_objects.setdefault(element.attr, held)
        if any(writes_outside(t, augmented=False) for t in node.targets):
            self._mark("writes_state")
        elif (
            self.function_stack
            and any(is_self_attribute(t) for t in node.targets)
            and (
                self._may_hold_tensor(node.value)
                or self._sets_tested_flag(node.targets)
                or (
                    isinstance(node.value, ast.Name)
                    and node.value.id in self.function_stack[-1].params
                )
                or _counts_on_itself(node)
            )
        ):
            # A tensor kept on `self`, an argument stored there, a flag its
            # own test reads (`if self.first: self.first = False`), or a
            # counter (`self.step = self.step + 1`): TFR202.
            self._mark("writes_state")
        if any(isinstance(t, (ast.Attribute, ast.Subscript)) for t in node.targets):
            for target in node.targets:
                self._record_target(target)
                self._record_named_attribute_write(target)
                self._record_object_attribute_write(target)
                if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
                    # A straight module-level write (`tf.as_tensor = ...`,
                    # `config.LR = 0.1` in a script) runs once, at import,
                    # before anything is traced: it changes nothing later.
                    settled = not self.function_stack and not self.loop_stack
                    if target.value.id in self.index.imports and not settled:
                        written = self.resolve(target)
                        if written:
                            self.index.foreign_writes.add(written)
        if isinstance(node.value, (ast.Name, ast.Attribute)):
            for target in node.targets:
                if isinstance(target, ast.Attribute):
                    bound = f"bound to `{ast.unparse(target)}` at {self._line(node)}"
                    self._reference(node.value, bound)
                if owner is not None and is_self_attribute(target):
                    assert isinstance(target, ast.Attribute)
                    functions = self._functions_named(node.value)
                    if functions:
                        owner.held_functions.setdefault(target.attr, []).extend(functions)
            if self.function_names and (function := self._project_reference(node.value)):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        self.function_names[-1].setdefault(target.id, []).append(function)
        if owner is not None and isinstance(node.value, ast.Dict):
            for target in node.targets:
                if is_self_attribute(target):
                    assert isinstance(target, ast.Attribute)
                    self._record_held_table(owner, target.attr, node.value)
        names = [t.id for t in node.targets if isinstance(t, ast.Name)]
        self.record_partial_binding(names, node.value)
        if names and self.call_results:
            # `aug = AUG` names the module's object: it holds what `Aug()` made.
            factory = self._factory(node.value) or self._module_object(node.value)
            rebind(self.call_results[-1], names, factory)
            rebind(self.unpacked_results[-1], names, None)
            self.record_object_list(names, node.value)
            self.record_function_table(names, node.value)
            self.record_attribute_alias(names, node.value)
        if self.unpacked_results:
            self.record_unpacked_results(node)
        evidence = self._evidence(node.value) if names else "?"
        dataset = bool(names) and self.mentions_dataset and self._is_dataset(node.value)
        # `ds.apply(prepare)`: a function of this module batches as pass 1
        # reads it; one of another module, as the project facts will.
        applied = _applied_function(node.value) if self.mentions_apply else None
        own = self.index.functions.get(applied or "")
        if self.mentions_batch and (
            batch_keeps_remainder(node.value) or (own is not None and own.batch_sizes == "any")
        ):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    self.batched_names[-1].add(target.id)
        for target in node.targets:
            if isinstance(target, ast.Name):
                if applied is None or own is not None:
                    self.applied_names[-1].pop(target.id, None)
                else:
                    self.applied_names[-1][target.id] = applied
        # The value is evaluated before the names are bound: a call in it
        # (`image = trim(image)`) sees what they held before.
        self.generic_visit(node)
        for name in names:
            self.evidence[-1][name] = evidence
            if dataset:
                self.dataset_names[-1].add(name)
            else:
                self.dataset_names[-1].discard(name)

    def visit_ListComp(self, node: ast.ListComp) -> None:
        self._visit_comprehension(node)

    def visit_SetComp(self, node: ast.SetComp) -> None:
        self._visit_comprehension(node)

    def visit_GeneratorExp(self, node: ast.GeneratorExp) -> None:
        self._visit_comprehension(node)

    def visit_DictComp(self, node: ast.DictComp) -> None:
        self._visit_comprehension(node)

    def _visit_comprehension(
        self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp
    ) -> None:
        """A comprehension over `range(...)`/`enumerate(...)` binds a Python
        counter, as a `for` does (`[step(c) for c in range(4)]` passes Python
        numbers), for the comprehension only: it has its own scope."""
        evidence = self.evidence[-1]
        saved: dict[str, str | None] = {}
        for generator in node.generators:
            self.record_list_loop(generator.target, generator.iter)
            iterated = generator.iter
            if isinstance(iterated, ast.Call) and dotted(iterated.func) in ("range", "enumerate"):
                counter = generator.target
                if isinstance(counter, ast.Tuple) and counter.elts:
                    counter = counter.elts[0]
                if isinstance(counter, ast.Name):
                    saved.setdefault(counter.id, evidence.get(counter.id))
                    evidence[counter.id] = "p"
        self.generic_visit(node)
        for name, before in saved.items():
            if before is None:
                evidence.pop(name, None)
            else:
                evidence[name] = before

    def visit_For(self, node: ast.For) -> None:
        self.bind_names(node.target)
        for target in node.target.elts if isinstance(node.target, ast.Tuple) else [node.target]:
            self._record_target(target)  # `for self.epoch in range(n)` rebinds `self.epoch`
        self.visit(node.iter)
        if self.function_stack and self._may_iterate_tensor(node.iter):
            self.function_stack[-1].loops_over_value = True
        if self.object_choices:
            self.record_loop_object(node.target, node.iter)
        self.record_list_loop(node.target, node.iter)
        if isinstance(node.iter, ast.Call) and dotted(node.iter.func) in ("range", "enumerate"):
            counter = node.target
            if isinstance(counter, ast.Tuple) and counter.elts:
                counter = counter.elts[0]
            if isinstance(counter, ast.Name):
                self.evidence[-1][counter.id] = "p"
        elif isinstance(node.target, ast.Name) and self.evidence:
            # Iterating over a tensor gives its rows, tensors (`for idx in
            # tf.where(mask)`); over anything else, nothing is known.
            rows = self._evidence(node.iter) in ("t", "s")
            self.evidence[-1][node.target.id] = "t" if rows else "?"
        self.loop_stack.append(self._feeds_short_batch(node.iter))
        params = self.function_stack[-1].params if self.function_stack else []
        iterated = node.iter.id if isinstance(node.iter, ast.Name) else ""
        self.loop_iterated.append(iterated if iterated in params else "")
        self.loop_targets.append(
            {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
        )
        self.loop_bodies.append(node.body)
        self.graph_loops.append(self._may_range_over_tensor(node.iter))
        counted = isinstance(node.iter, ast.Call) and dotted(node.iter.func) == "range"
        self.data_loops.append(not counted)
        for stmt in [*node.body, *node.orelse]:
            self.visit(stmt)
        self.loop_stack.pop()
        self.loop_iterated.pop()
        self.loop_targets.pop()
        self.loop_bodies.pop()
        self.graph_loops.pop()
        self.data_loops.pop()

    def _may_iterate_tensor(self, iterable: ast.expr) -> bool:
        """Whether a `for` over `iterable` may loop over a tensor: a tensor,
        or a call, item or local name nothing says is a Python value (not a
        parameter, whose value Keras passes as given, a list of inputs as
        often as one tensor; not `zip`/`.items()` and the like), or `range`
        of a bound that may be one."""
        if (
            isinstance(iterable, ast.Call)
            and isinstance(iterable.func, ast.Name)
            and iterable.func.id == "range"
        ):
            # `range(tf.shape(x)[0])`: a bound nothing says is a number.
            return any(self._evidence(arg) != "p" for arg in iterable.args)
        evidence = self._evidence(iterable)
        if evidence in ("t", "s"):
            return True
        if evidence == "p" or isinstance(iterable, ast.Attribute):
            return False
        if isinstance(iterable, ast.Name):
            return iterable.id not in self.function_stack[-1].params
        if isinstance(iterable, ast.Call):
            func = iterable.func
            if isinstance(func, ast.Name) and func.id in BUILTIN_NAMES:
                return False
            return not (isinstance(func, ast.Attribute) and func.attr in _PYTHON_ITERATORS)
        return isinstance(iterable, ast.Subscript)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.bind_names(node.target)
        self.generic_visit(node)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name and self.bound_here:
            self.bound_here[-1].add(node.name)
        self.generic_visit(node)

    def visit_While(self, node: ast.While) -> None:
        self._branch(node.test)  # a `while` tests its condition like an `if` (TFR101)
        self.visit(node.test)
        self.loop_stack.append(False)
        self.loop_iterated.append("")
        self.loop_targets.append(set())
        self.loop_bodies.append(node.body)
        self.graph_loops.append(True)  # on a tensor condition, a `tf.while_loop`
        for stmt in [*node.body, *node.orelse]:
            self.visit(stmt)
        self.loop_stack.pop()
        self.loop_iterated.pop()
        self.loop_targets.pop()
        self.loop_bodies.pop()
        self.graph_loops.pop()

    # -- uses -------------------------------------------------------------------
    def visit_Attribute(self, node: ast.Attribute) -> None:
        if isinstance(node.ctx, ast.Load):
            self.index.attribute_reads.add(node.attr)
        if self.function_stack and node.attr in ("shape", "get_shape"):
            self.function_stack[-1].reads_static_shape = True
        if (
            self.function_stack
            and isinstance(node.ctx, ast.Load)
            and isinstance(node.value, ast.Name)
            and node.value.id == "self"
        ):
            self.function_stack[-1].self_reads.add(node.attr)
        if (
            isinstance(node.ctx, ast.Load)
            and isinstance(node.value, ast.Name)
            and node.value.id in self.index.imports
        ):
            read = self.resolve(node)
            if read:
                self.index.module_attribute_reads.add(read)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        # A function an enclosing function defines (`train_step` nested in
        # `main`, called from `main`'s nested `train`) by its qualified name.
        callee = self.resolve_function(node.func)
        if (
            self.loop_stack
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in LIST_GROWING_METHODS
            and isinstance(node.func.value, ast.Name)
        ):
            self.grown_names[-1].add(node.func.value.id)  # `states.append(s)` per step
        if (
            self.mentions_batch
            and self.function_stack
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("batch", "padded_batch")
        ):
            info = self.function_stack[-1]
            drop = next((kw.value for kw in node.keywords if kw.arg == "drop_remainder"), None)
            keeps = not (isinstance(drop, ast.Constant) and drop.value is True)
            info.batch_sizes = "any" if keeps or info.batch_sizes == "any" else "equal"
        handed = eager_callable(node, callee)
        if handed is not None:
            self._record_eager(handed)
        if self._absorbs_keywords(node):
            owner = self._method_class()
            if owner is not None:
                owner.absorbs_keywords = True
        if self.function_stack and node.keywords and callee and ".layers." in f".{callee}":
            if any(kw.arg is None or kw.arg in RNN_DROPOUT_KEYWORDS for kw in node.keywords):
                self.function_stack[-1].builds_rnn_dropout = True
        for keyword in node.keywords:
            if keyword.arg and keyword.arg.endswith(WEIGHT_CALLBACK_SUFFIXES):
                self._record_weight_function(keyword.value)
            elif keyword.arg == "training":
                # A Keras 3 layer tests its `training` flag in Python (TFR110).
                self._branch(keyword.value)
        if _is_super_call(node) and len(node.args) > 1:
            self._branch(node.args[1])  # `super().call(x, training)`: the same
        for value in [*node.args, *(kw.value for kw in node.keywords)]:
            if isinstance(value, (ast.Name, ast.Attribute)):
                receiver = callee or ast.unparse(node.func)
                self._reference(value, f"handed to `{receiver}` at {self._line(node)}")
        # A function is handed over positionally, or as `Lambda(function=f)`.
        if node.args or (node.keywords and callee and callee.endswith("Lambda")):
            self._record_traced_argument(node, callee)
        if node.args or node.keywords:
            self.record_handed_callables(node)
        if self.traced_lambda_stack:
            self.record_lambda_call(node)
        if self.function_stack and callee and callee.startswith("tensorflow."):
            info = self.function_stack[-1]
            given = shape_parameter_names(node, callee, info.params)
            if given:
                info.shape_params = info.shape_params | given
        if (
            self.function_stack
            and isinstance(node.func, ast.Name)
            and node.func.id in ITERATING
            and any(self._evidence(arg) in ("t", "s") for arg in node.args)
        ):
            self.function_stack[-1].iterates_tensor = True
        instance = self._instance_call(node.func)
        # `agent.update(s, a, step)` on an object of a project class: the
        # method it runs (what a tape differentiates, when it gives a loss).
        method = None if instance else self.object_method(node.func)
        runs = instance or method
        if runs:
            self.instance_callees[id(node)] = runs
        if node.args or node.keywords:
            if method:
                self._record_call_site(node, method, method)
            elif callee:
                self._record_call_site(node, callee, instance)
        if self.module_tape_calls and not self.function_stack:
            called = instance or callee
            if called and called.split(".", 1)[0] not in EXTERNAL_ROOTS:
                self.module_tape_calls[-1].append(called)
        if callee:
            self.index.called_names.add(callee)
            if callee.rpartition(".")[2] in _AVERAGES and (value := _averaged_value(node)):
                if isinstance(value, ast.Starred):
                    value = value.value
                while (
                    isinstance(value, ast.Call)
                    and len(value.args) == 1
                    and self.resolve(value.func) in ARRAY_CONVERSIONS
                ):
                    value = value.args[0]
                if isinstance(value, (ast.Name, ast.ListComp, ast.GeneratorExp)):
                    self.index.averaged_callees.add(callee)
                if callee in MEAN_FUNCTIONS:
                    self._average_parameter(value)
            if self.loop_stack:
                short = self.index.loop_calls.get(callee, False) or any(self.loop_stack)
                self.index.loop_calls[callee] = short
        if self.loop_stack and isinstance(node.func, ast.Attribute):
            scope = self.function_stack[-1].qualname if self.function_stack else ""
            self.index.loop_methods.setdefault(scope, set()).add(node.func.attr)
        if callee and not self.function_stack:
            self.index.module_call_lines.setdefault(callee, []).append(node.lineno)
        if self.tape_owners and self.tape_owners[-1] is self.function_stack[-1]:
            # A call in a tape block of the function itself (`tape_reach`).
            info = self.function_stack[-1]
            reached = instance or callee
            if reached and reached not in info.tape_calls:
                info.tape_calls = (*info.tape_calls, reached)
        if self.function_stack:
            if callee and not self.eager_depth:
                self.function_stack[-1].calls.append(callee)
                if any(self.data_loops):
                    self.function_stack[-1].calls_in_data_loops.add(callee)
            if instance and not self.eager_depth:
                self.function_stack[-1].calls.append(instance)
            if isinstance(node.func, ast.Attribute):
                info = self.function_stack[-1]
                info.method_calls.add(node.func.attr)
                used = id(node) not in self.statement_calls
                method = self._instance_method(node.func, used)
                if method and not self.eager_depth:
                    info.calls.append(method)
                if not self.eager_depth:
                    info.calls.extend(self.chosen_methods(node.func))
                    info.calls.extend(self._extended_methods(node.func))
                if (
                    callee
                    and used
                    and (_is_held_method(node.func) or _is_parameter_method(node.func, info))
                ):
                    info.held_results.add(callee)
                if node.func.attr in MUTATING_METHODS:
                    self._mutation(node.func.value)
                    self.record_list_growth(node)
                if self._is_logging_call(node.func, callee):
                    self.function_stack[-1].calls_python_logging = True
        wrapped = _wrapped_function(node) if callee and is_tf_function(callee) else None
        if wrapped is not None:
            reason = "wrapped in tf.function(...)"
            # `tf.function(partial(self._lr, name))`: the partial runs `_lr`.
            parts = self._partial_parts(wrapped)
            if parts is not None:
                wrapped, reason = parts[0], f"bound by `functools.partial` and {reason}"
            # `step = tf.function(step)` in the function that defines `step`:
            # the nested function, as for any site handing code to a tracer.
            target = self.resolve_function(wrapped)
            if target:
                keywords = {kw.arg: ast.unparse(kw.value) for kw in node.keywords if kw.arg}
                caller = self.function_stack[-1].qualname if self.function_stack else ""
                self.index.traced_sites.append(
                    TracedSite(target, reason, node.lineno, keywords, caller=caller)
                )
        if callee and callee.endswith("run_functions_eagerly"):
            self.index.switches_tracing_off = True
        if isinstance(node.func, ast.Attribute):
            attr = node.func.attr
            if attr == "compile":
                self._record_compile(node)
                self._record_compiled_object(node)
                self._record_keras_run(node)
                if any(kw.arg == "run_eagerly" for kw in node.keywords):
                    self.index.switches_tracing_off = True
            elif runs_keras_traces(attr):
                self._record_keras_run(node)
            elif is_update_call(node) and self.function_stack:
                self.function_stack[-1].applies_gradients = True
                # The optimizer calls its callable learning rate here.
                schedule = self.learning_rate_callables.get(self._holder_key(node.func.value))
                if schedule is not None and not self.eager_depth:
                    self.function_stack[-1].calls.append(schedule)
        self.generic_visit(node)

    def visit_Return(self, node: ast.Return) -> None:
        if isinstance(node.value, ast.Name) and self.function_stack:
            info = self.function_stack[-1]
            returned_by = info.qualname.rpartition(".")[2]
            self._reference(node.value, f"returned by `{returned_by}` at {self._line(node)}")
            nested = f"{info.qualname}.{node.value.id}"
            if nested in self.index.functions:
                info.returns.append(nested)
                self.generic_visit(node)
                return
        if node.value is not None and self.function_stack:
            returns = self.function_stack[-1].returns
            returns += [f for f in self.returned_functions(node.value) if f not in returns]
        self.generic_visit(node)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        eager = id(node) in self.eager_lambdas
        self.eager_depth += eager
        try:
            super().visit_Lambda(node)
        finally:
            self.eager_depth -= eager

    def visit_Expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Call):
            self.statement_calls.add(id(node.value))
        self.generic_visit(node)

    def _line(self, node: ast.stmt | ast.expr) -> str:
        """How other files' messages name `node`'s line ("line 9", or
        "cell 3, line 4" in a notebook)."""
        return named_line(node.lineno, self.index.cell_starts)

    def _record_held_table(self, owner: ClassInfo, attr: str, table: ast.Dict) -> None:
        """`self.losses = {"gen": self._gen_loss(), "disc": disc_loss}`: the
        function each constant key holds, named or returned by the factory
        called there, under `losses[gen]` (`held_table_item`)."""
        for key, value in zip(table.keys, table.values, strict=True):
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                continue
            if not key.value.isidentifier():
                continue
            made_by = self._held_class(value)
            function = f"{made_by}()" if made_by else self._project_reference(value)
            if function is not None:
                owner.held_functions.setdefault(f"{attr}[{key.value}]", []).append(function)

    def _functions_named(self, value: ast.expr) -> list[str]:
        """The project functions `value` names: one it names itself, or
        those a local name of the function may be bound to (`self.loss =
        loss` after `loss = sse`)."""
        function = self._project_reference(value)
        if function is not None:
            return [function]
        if isinstance(value, ast.Name) and self.function_names:
            return list(self.function_names[-1].get(value.id, ()))
        return []

    def _project_reference(self, value: ast.expr) -> str | None:
        """The dotted name of what `value` names when the project may define
        it (an own or imported name), not a local's or a parameter's value,
        an attribute of a local object, nor an external package's name."""
        root = value
        while isinstance(root, ast.Attribute):
            root = root.value
        if not isinstance(root, ast.Name):
            return None
        if root.id not in self.index.imports and value is not root:
            return None  # an attribute of a local object (`y_pred.dtype`)
        name = self.resolve_function(value)
        if root.id in self.index.imports:
            if name is None or name.split(".", 1)[0] in EXTERNAL_ROOTS:
                return None  # `tf.float32`: an external package's name
        elif name is None or name == root.id:
            return None  # a local name or parameter: no definition of the project
        return name

    def _reference(self, value: ast.expr, how: str) -> None:
        """Record `value` as a function used as a value, when it names one
        the project may define (`_project_reference`)."""
        name = self._project_reference(value)
        if name is not None:
            self.index.value_references.setdefault(name, how)

    def visit_With(self, node: ast.With) -> None:
        for item in node.items:
            if item.optional_vars is not None:
                self.bind_names(item.optional_vars)
        if opens_tape(node, self.resolve):
            self.index.opens_gradient_tape = True
            if self.function_stack:
                self.function_stack[-1].opens_gradient_tape = True
                self.tape_functions.add(self.function_stack[-1].qualname)
                if self.loop_stack:
                    info = self.function_stack[-1]
                    info.tape_in_loop = True
                    if all(self.loop_iterated):
                        info.tape_loop_params.update(self.loop_iterated)
                    else:
                        info.tape_in_other_loop = True
                # What the block calls, as `calls` names it (`tape_reach`).
                self.tape_owners.append(self.function_stack[-1])
                self.generic_visit(node)
                self.tape_owners.pop()
                return
            elif self.loop_stack and not self.module_tape_calls:
                # A module-level tape in a loop: what it calls, TFR303's
                # extracted step will call traced.
                self.module_tape_calls.append([])
                self.generic_visit(node)
                called = self.module_tape_calls.pop()
                if called:
                    self.index.tape_block_calls[node.lineno] = list(dict.fromkeys(called))
                return
        self.generic_visit(node)


# Aliases so conventional that code using them unbound means the module:
# `@tf.function` in a file whose `import tensorflow as tf` went missing (a
# helper module split out of a notebook) still decorates with TensorFlow's.
_CONVENTIONAL_ALIASES = {"tf": "tensorflow", "np": "numpy"}


def _record_conventional_aliases(tree: ast.Module, source: str, index: ModuleIndex) -> None:
    """Read a conventional alias the file uses but binds nowhere (no
    import, assignment, parameter or definition of that name) as its
    module. Only a name the file reads: a rewrite writing `tf.` where the
    file uses no `tf` adds the import."""
    wanted = {
        alias
        for alias in _CONVENTIONAL_ALIASES
        if alias not in index.imports and f"{alias}." in source
    }
    if not wanted:
        return
    read: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in wanted:
            if isinstance(node.ctx, ast.Load):
                read.add(node.id)
            else:
                wanted.discard(node.id)
        elif isinstance(node, ast.arg) or isinstance(node, _FUNCTION_NODES + (ast.ClassDef,)):
            wanted.discard(node.arg if isinstance(node, ast.arg) else node.name)
    for alias in wanted & read:
        index.imports[alias] = _CONVENTIONAL_ALIASES[alias]


def build_index(
    source: str,
    path: str,
    module: str,
    star_names: Mapping[str, str] | None = None,
    cell_starts: CellStarts = (),
) -> ModuleIndex:
    """Index one file's source. A syntax error is recorded, not raised.
    `star_names`: what the names its `from module import *` statements
    bring are (`ModuleIndex.star_names`, which the project facts know);
    they resolve as imports do, unless the file binds the name itself.
    `cell_starts`: a notebook's cells in `source`, its Python view."""
    index = ModuleIndex(path=path, module=module, cell_starts=cell_starts)
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError as err:
        index.syntax_error = (err.lineno, err.offset, err.msg)
        return index
    except (ValueError, RecursionError) as err:  # null bytes, absurd nesting
        index.syntax_error = (None, None, str(err))
        return index
    indexer = _Indexer(index, is_package=path.endswith("__init__.py"))
    indexer.source = source
    indexer.top_level = tree.body
    indexer.module_level_names = _scope_definitions(tree.body)
    # Imports first, wherever they stand, so a function body that precedes an
    # import still resolves its names.
    for node in _statements(tree.body):
        if isinstance(node, ast.Import):
            indexer.record_import(node)
        elif isinstance(node, ast.ImportFrom):
            indexer.record_import_from(node)
    index.reexported = {
        alias: index.imports[alias]
        for statement in tree.body
        if isinstance(statement, ast.ImportFrom)
        for alias in (a.asname or a.name for a in statement.names)
        if alias in index.imports
    }
    for alias, target in (star_names or {}).items():
        if alias in indexer.module_level_names:
            continue
        # A name the file imports from a project module that re-exports an
        # outside package's (`from pkg import tf`) takes what `pkg` binds.
        current = index.imports.get(alias)
        if current is None or (_is_outside(target) and not _is_outside(current)):
            index.imports[alias] = target
    _record_conventional_aliases(tree, source, index)
    # `from tensorflow.keras.layers import *`: Keras' public names, as an
    # explicit import of each would bind them.
    for base in index.star_imports:
        for alias in star_imported_names(base):
            if alias not in indexer.module_level_names and alias not in index.imports:
                index.imports[alias] = f"{base}.{alias}"
    bindings = module_bindings(tree.body)
    indexer.module_once = {name for name, (count, _, _) in bindings.items() if count == 1}
    for statement in tree.body:
        if isinstance(statement, ast.Assign):
            indexer.record_module_alias(statement, indexer.module_once)
            indexer.record_tf_function_alias(statement)
            indexer.record_logger(statement)
    # Objects built in the module's scope, its `__main__` block included.
    assignments = [
        s for s in iter_statements(tree.body, into_definitions=False) if isinstance(s, ast.Assign)
    ]
    indexer.record_module_instances(assignments, bindings)
    indexer.module_lambdas = {
        s.targets[0].id: s.value
        for s in assignments
        if len(s.targets) == 1
        and isinstance(s.targets[0], ast.Name)
        and isinstance(s.value, ast.Lambda)
        and bindings.get(s.targets[0].id, (0, 0, False))[:1] == (1,)
    }
    index.module_instances = dict(indexer.module_instances)
    index.module_object_choices = dict(indexer.module_object_choices)
    indexer.mentions_batch = ".batch(" in source or "padded_batch(" in source
    indexer.mentions_apply = ".apply(" in source
    indexer.mentions_walrus = ":=" in source
    indexer.mentions_eager_test = "executing_eagerly" in source
    indexer.mentions_dataset = "Dataset" in source or "tensorflow_datasets" in source
    indexer.mentions_variables = "variables" in source or "weights" in source
    indexer.mentions_models = any(word in source for word in MODEL_BUILDER_WORDS)
    indexer.visit(tree)
    index.used_names = identifiers(source)
    index.divides_running_sum = not indexer.summed_names.isdisjoint(indexer.divided_names)
    indexer.decide_branches()
    for info, reads in indexer.branch_reads:
        if not reads.isdisjoint(indexer.self_call_attrs):
            info.branches = True
    index.module_names = set(bindings)
    for name, (count, last_line, looped) in bindings.items():
        if looped:
            index.rebound_module_names.setdefault(name, "rebound in a module-level loop")
        elif count > 1:
            if name not in index.rebound_module_names:
                index.straight_rebinds[name] = last_line
            index.rebound_module_names.setdefault(name, "assigned more than once")
    if index.eager_functions:
        _record_eager_helpers(index)

    def callee_of(call: ast.Call) -> str | None:
        return indexer.instance_callees.get(id(call)) or indexer.resolve(call.func)

    if index.opens_gradient_tape:
        _record_helper_gradients(index, indexer.gradient_helpers)
        record_tape_losses(
            index,
            indexer.resolve,
            callee_of,
            tree.body,
            "",
            tape_scopes(indexer.tape_functions),
        )
    if ".minimize(" in source:
        record_minimized_losses(index, indexer.resolve, callee_of, tree.body)
    _compact(index)
    return index


_NOTHING: frozenset[str] = frozenset()


def _record_eager_helpers(index: ModuleIndex) -> None:
    """Nested functions of the file that only functions running eagerly
    call (a helper nested in a traced `map` function, called only by the
    function it hands `tf.py_function`): eager too, and so are their spans
    (`ModuleIndex.eager_functions`, `eager_spans`)."""

    # The functions handed to `tf.py_function` themselves: what the rules
    # find in them is no finding, even where a traced function nests them.
    for qualname in sorted(index.eager_functions):
        info = index.functions.get(qualname)
        if info is not None:
            index.eager_spans.append((info.first_lineno, 1, info.end_lineno + 1, 1))
    callers: dict[str, list[str]] = {}
    for caller, info in index.functions.items():
        for callee in info.calls:
            callers.setdefault(callee, []).append(caller)
    changed = True
    while changed:
        changed = False
        for qualname, info in index.functions.items():
            parent, _, name = qualname.rpartition(".")
            if parent not in index.functions or index.runs_eagerly(qualname):
                continue
            # A call written before its sibling's `def` names it as written.
            found = callers.get(index.qualify(qualname), []) + [
                caller
                for caller in callers.get(name, [])
                if caller == parent or caller.startswith(f"{parent}.")
            ]
            if found and all(index.runs_eagerly(caller) for caller in found):
                index.eager_functions.add(qualname)
                index.eager_spans.append((info.first_lineno, 1, info.end_lineno + 1, 1))
                changed = True


def _record_helper_gradients(
    index: ModuleIndex,
    candidates: list[tuple[FunctionInfo, ast.FunctionDef | ast.AsyncFunctionDef]],
) -> None:
    """The functions that apply gradients without a tape of their own,
    calling a function of the file whose tape computes and returns them
    (`FunctionInfo.applies_helper_gradients`): one that `returns_gradients`,
    or a method whose tape differentiates with respect to the variables
    another method of its class returns (`tape.gradient(loss,
    self.training_variables())`; such a helper alone is no step: the
    function applying its gradients is)."""
    helpers = {qualname for qualname, info in index.functions.items() if info.returns_gradients}
    for info, node in candidates:
        owner = f"{info.class_name}."
        methods = frozenset(
            qualname.removeprefix(owner)
            for qualname, other in index.functions.items()
            if other.returns_variables and qualname.startswith(owner)
        )
        if methods and returns_gradients(node, methods):
            helpers.add(info.qualname)
    if not helpers:
        return
    # A helper whose callers in this file all leave its gradients unapplied
    # (a Hessian-vector product a conjugate-gradient solver multiplies) is no
    # step; one no function of the file calls may be another module's.
    for helper in helpers:
        callers = [
            info
            for info in index.functions.values()
            if any(index.local(callee) == helper for callee in info.calls)
        ]
        if callers and not any(info.applies_gradients for info in callers):
            index.functions[helper].gradients_unapplied = True
    for info in index.functions.values():
        if not info.applies_gradients or info.opens_gradient_tape:
            continue
        for callee in info.calls:
            # Called once per batch of its own loop over the data (`for data
            # in dataset: grads = self._step(data); opt.apply_gradients(...)`):
            # the function is the training loop, the helper its step.
            if index.local(callee) in helpers and callee not in info.calls_in_data_loops:
                info.applies_helper_gradients = True
                break


def _applied_function(value: ast.expr) -> str | None:
    """`ds.apply(f)` anywhere in a chain: `f` as the module names it
    (`prepare`, `input_pipeline.prepare`), whose batching is the dataset's."""
    for sub in ast.walk(value):
        if (
            isinstance(sub, ast.Call)
            and isinstance(sub.func, ast.Attribute)
            and sub.func.attr == "apply"
            and len(sub.args) == 1
            and not sub.keywords
        ):
            return dotted(sub.args[0])
    return None


def _adds_to_itself(node: ast.Assign) -> bool:
    """`total = total + loss` (either way round): a running sum, as
    `total += loss` is."""
    if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
        return False
    value, name = node.value, node.targets[0].id
    return (
        isinstance(value, ast.BinOp)
        and isinstance(value.op, ast.Add)
        and any(
            isinstance(side, ast.Name) and side.id == name for side in (value.left, value.right)
        )
    )


def _wrapped_function(call: ast.Call) -> ast.expr | None:
    """What `tf.function(...)` wraps: its first argument, also given by
    name (`tf.function(func=self._step, input_signature=[...])`)."""
    if call.args:
        return call.args[0]
    return next((kw.value for kw in call.keywords if kw.arg == "func"), None)


_FUNCTION_NODES = (ast.FunctionDef, ast.AsyncFunctionDef)


def _defaults_to_true(args: ast.arguments, name: str) -> bool:
    """Whether the parameter `name` defaults to the constant True."""
    positional = [*args.posonlyargs, *args.args]
    with_defaults = positional[len(positional) - len(args.defaults) :]
    pairs: list[tuple[ast.arg, ast.expr | None]] = [
        *zip(with_defaults, args.defaults, strict=True),
        *zip(args.kwonlyargs, args.kw_defaults, strict=True),
    ]
    return any(a.arg == name and isinstance(d, ast.Constant) and d.value is True for a, d in pairs)


def _scope_definitions(
    body: list[ast.stmt], kinds: tuple[type[ast.stmt], ...] = (*_FUNCTION_NODES, ast.ClassDef)
) -> set[str]:
    """The functions and classes (of `kinds`) defined in a scope's own body:
    at its top level or inside its `if`/`try`/`with`/loop statements (an `if
    __name__ == "__main__":` block defining `train_step`), not inside a
    function or class."""
    return {
        statement.name  # type: ignore[attr-defined]
        for statement in iter_statements(body, into_definitions=False)
        if isinstance(statement, kinds)
    }


def _is_outside(name: str) -> bool:
    """A dotted name of an outside package (`tensorflow.function`)."""
    return name.split(".", 1)[0] in EXTERNAL_ROOTS


def _is_parameter_method(func: ast.Attribute, info: FunctionInfo) -> bool:
    """`loss_obj.compute_losses`: a method of an object a parameter holds."""
    return isinstance(func.value, ast.Name) and func.value.id in info.params


def _is_self(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id == "self"


def _updates_a_mean(node: ast.BinOp) -> bool:
    """`(avg * i + value) / (i + 1)`: a mean kept up to date pass by pass
    (`per_batch_values.running_means` reads it exactly)."""
    left, right = node.left, node.right
    return (
        isinstance(left, ast.BinOp)
        and isinstance(left.op, ast.Add)
        and any(
            isinstance(part, ast.BinOp) and isinstance(part.op, ast.Mult)
            for part in (left.left, left.right)
        )
        and isinstance(right, ast.BinOp)
        and isinstance(right.op, ast.Add)
        and any(isinstance(p, ast.Constant) and p.value == 1 for p in (right.left, right.right))
    )


def _is_callback_model(node: ast.expr) -> bool:
    """`self.model`, in a Keras callback: the model being fit."""
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "model"
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
    )


def _counts_on_itself(node: ast.Assign) -> bool:
    """`self.step = self.step + 1`: an attribute given a value computed
    from its own."""
    written = {t.attr for t in node.targets if is_self_attribute(t)}  # type: ignore[attr-defined]
    return any(
        is_self_attribute(n) and n.attr in written  # type: ignore[attr-defined]
        for n in ast.walk(node.value)
    )


def _is_held_method(func: ast.Attribute) -> bool:
    """`self.memory.sample`: a method of an object `self` holds."""
    held = func.value
    return (
        isinstance(held, ast.Attribute)
        and isinstance(held.value, ast.Name)
        and held.value.id == "self"
    )


def _compact(index: ModuleIndex) -> None:
    """Shrink what the index keeps: every file's index stays in memory for
    the whole run (and is copied into each worker), and a project has tens of
    thousands of functions. Their name sets, mostly empty, become one shared
    empty set, the rest frozen; the names they call are interned, so a name
    called in many places is kept once."""
    intern = sys.intern
    for info in index.functions.values():
        info.calls = [intern(name) for name in info.calls]
        info.method_calls = frozenset(info.method_calls) if info.method_calls else _NOTHING
        info.self_writes = frozenset(info.self_writes) if info.self_writes else _NOTHING
        info.self_changes = frozenset(info.self_changes) if info.self_changes else _NOTHING
        info.self_item_writes = (
            frozenset(info.self_item_writes) if info.self_item_writes else _NOTHING
        )
        info.self_reads = frozenset(info.self_reads) if info.self_reads else _NOTHING
        info.held_results = frozenset(info.held_results) if info.held_results else _NOTHING


def _is_super_call(node: ast.Call) -> bool:
    """`super().call(...)`: a layer subclass calling the `call` it extends."""
    func = node.func
    return isinstance(func, ast.Attribute) and func.attr == "call" and on_super(func)
