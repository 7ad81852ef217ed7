"""Pass 1: a per-file index of what other files (and the rules) need to know.
The records it fills (`ModuleIndex`, `FunctionInfo`, ...) are in
`index_records`; this module is the visitor that fills them, and the
questions it asks of `ast` nodes that verify asks too (`opens_tape`,
`is_update_call`). The records are importable from here as well.

Built with the standard library's `ast`, which parses several times faster than
LibCST; the index is small and picklable so worker processes can return it.
Every reference is resolved through the file's imports to a dotted name: a
function `dice` defined in `pkg/losses.py` is `pkg.losses.dice`, and `tf.function`
is `tensorflow.function` whatever alias the file uses.
"""

from __future__ import annotations

import ast
import builtins
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from tfrewrite.facts.index_records import (
    CallSite,
    ClassInfo,
    FunctionInfo,
    ModuleIndex,
    TapeLoss,
    TracedLambda,
    TracedSite,
)
from tfrewrite.facts.keras_names import canonical_name, keras_path
from tfrewrite.facts.prefilters import (
    MUTATING_METHODS,
    own_local_names,
    self_attribute_from_call,
)
from tfrewrite.facts.python_conditions import PythonConditions
from tfrewrite.facts.tensor_kinds import ALWAYS_SCALAR, REDUCTIONS, is_tensor_op
from tfrewrite.facts.vocabulary import (
    LOG_METHODS,
    is_gradient_tape,
    is_gradient_update,
    is_logger_factory,
    is_logging_call,
)

# Last components of the averaging functions TFR306 reads (`np.mean`,
# `statistics.fmean`, `tf.reduce_mean`): see `ModuleIndex.averaged_callees`.
_AVERAGES = frozenset({"mean", "average", "fmean", "reduce_mean"})
# Keyword arguments of `Model.compile` whose values run traced inside `fit`.
COMPILE_TRACED_KEYWORDS = ("loss", "metrics", "weighted_metrics")


def module_name_for(path: Path, root: Path | None) -> str:
    """Dotted module name of `path` relative to `root` (a leading `src/` dropped)."""
    try:
        rel = path.resolve().relative_to(root.resolve()) if root else Path(path.name)
    except ValueError:
        rel = Path(path.name)
    parts = list(rel.with_suffix("").parts)
    if parts and parts[0] == "src":
        parts = parts[1:]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(p for p in parts if p.isidentifier())


def dotted(node: ast.AST) -> str | None:
    """`a.b.c` for a Name/Attribute chain, else None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _resolve_relative(module: str, level: int, name: str | None, is_package: bool) -> str:
    base = module.split(".") if module else []
    drop = level - (1 if is_package else 0)
    if drop > 0:
        base = base[:-drop] if drop <= len(base) else []
    return ".".join([*base, name] if name else base)


# Node types with nothing under them the index records (names, literals,
# operators, contexts): the traversal does not descend into them.
_LEAF_TYPES = frozenset(
    {
        ast.Name,
        ast.Constant,
        ast.Load,
        ast.Store,
        ast.Del,
        ast.Pass,
        ast.Break,
        ast.Continue,
        ast.Import,
        ast.ImportFrom,
        ast.alias,
        *(
            cls
            for cls in vars(ast).values()
            if isinstance(cls, type)
            and issubclass(
                cls, (ast.operator, ast.unaryop, ast.cmpop, ast.boolop, ast.expr_context)
            )
        ),
    }
)
# Expressions that hold no call: most defaults and annotations are these.
_ATOMS = frozenset({ast.Constant, ast.Name})


class _FastVisitor(ast.NodeVisitor):
    """`ast.NodeVisitor` with per-class dispatch cached and leaves skipped:
    pass 1 visits every file of a project, so its per-node cost matters
    (about 3x faster than the standard visitor on real code). Each class of
    node maps to the function that visits it (None for a leaf, or for what
    is no node: a name in `global`, a `None` default), looked up once."""

    _handlers: dict[type, Callable[[Any, Any], None] | None]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._handlers = {}  # per class: subclasses define different visitors

    def _handler(self, cls: type) -> Callable[[Any, Any], None] | None:
        if cls in _LEAF_TYPES or not issubclass(cls, ast.AST):
            handler = None
        else:
            handler = getattr(type(self), "visit_" + cls.__name__, None)
            if handler is None:
                handler = type(self).generic_visit
        self._handlers[cls] = handler
        return handler

    def visit(self, node: ast.AST) -> None:
        cls = node.__class__
        try:
            handler = self._handlers[cls]
        except KeyError:
            handler = self._handler(cls)
        if handler is not None:
            handler(self, node)

    def generic_visit(self, node: ast.AST) -> None:
        handlers = self._handlers
        for field_name in node._fields:
            value = getattr(node, field_name, None)
            for item in value if value.__class__ is list else (value,):
                cls = item.__class__
                try:
                    handler = handlers[cls]
                except KeyError:
                    handler = self._handler(cls)
                if handler is not None:
                    handler(self, item)


class _Indexer(_FastVisitor):
    def __init__(self, index: ModuleIndex, is_package: bool) -> None:
        self.index = index
        self.is_package = is_package
        self.scope: list[str] = []  # qualname parts
        self.class_stack: list[str] = []
        self.function_stack: list[FunctionInfo] = []
        self.tape_functions: set[str] = set()  # qualnames of functions opening a tape
        self.module_level_names: set[str] = set()
        self.mentions_batch = True  # whether `.batch(...)` can occur at all (a byte check)
        self.mentions_walrus = True  # whether `:=` can occur at all
        self.mentions_dataset = True  # whether a `tf.data` dataset can occur at all
        self.loop_stack: list[bool] = []  # per enclosing loop: may feed a short batch
        self.graph_loops: list[bool] = []  # per enclosing loop: may be a graph loop
        # Per function being visited: names a mutating method is called on,
        # and whether inside a loop that may be a graph loop.
        self.mutated_names: list[list[tuple[str, bool]]] = []
        self.batched_names: list[set[str]] = [set()]  # per scope: names bound to `.batch(n)`
        # Module-level names bound to `tf.function` (or a configured one):
        # `f = tf.function` then `@f`, `fn = partial(tf.function, jit_compile=True)`.
        self.tf_function_aliases: dict[str, dict[str, str]] = {}
        # Per scope: what a local name holds, as call-site evidence (`t`, `s`, `p`).
        self.evidence: list[dict[str, str]] = [{}]
        self.dataset_names: list[set[str]] = [set()]  # per scope: names bound to datasets
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

    # -- name resolution -------------------------------------------------------
    def resolve(self, node: ast.AST) -> str | None:
        name = dotted(node)
        if name is None:
            return None
        head, _, rest = name.partition(".")
        if head in self.index.imports:
            target = self.index.imports[head]
            return canonical_name(f"{target}.{rest}" if rest else target)
        if head == "self" and self.class_stack and rest:
            return self.index.qualify(f"{self.class_stack[-1]}.{rest}")
        if head in self.module_level_names:
            return self.index.qualify(name)
        return name

    # -- imports ----------------------------------------------------------------
    def record_import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.asname:
                self.index.imports[alias.asname] = alias.name
            else:
                head = alias.name.split(".")[0]
                self.index.imports[head] = head

    def record_import_from(self, node: ast.ImportFrom) -> None:
        if node.level:
            base = _resolve_relative(self.index.module, node.level, node.module, self.is_package)
        else:
            base = node.module or ""
        for alias in node.names:
            if alias.name == "*":
                if base:
                    self.index.star_imports.append(base)
                continue
            self.index.imports[alias.asname or alias.name] = (
                f"{base}.{alias.name}" if base else alias.name
            )

    # -- definitions ------------------------------------------------------------
    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        qualname = ".".join([*self.scope, node.name])
        bases = [b for b in (self.resolve(base) for base in node.bases) if b]
        methods = [
            s.name for s in node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
        ]
        self.index.classes[qualname] = ClassInfo(qualname, node.lineno, bases, methods)
        self.scope.append(node.name)
        self.class_stack.append(qualname)
        self.class_numbers.append((node, None))
        self.generic_visit(node)
        self.class_numbers.pop()
        steps = [
            info
            for info in (self.index.functions.get(f"{qualname}.{m}") for m in methods)
            if info is not None and info.opens_gradient_tape and info.applies_gradients
        ]
        if steps:  # only a train-step method needs the (whole-class) question
            grown = _methods_consuming_grown_lists(node, self.resolve)
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
            first_lineno=min([node.lineno, *(d.lineno for d in node.decorator_list)]),
            end_lineno=node.end_lineno or 0,
        )
        self.index.functions[qualname] = info
        self._record_default_calls(node)
        self.scope.append(node.name)
        self.function_stack.append(info)
        loops, self.loop_stack = self.loop_stack, []
        graph_loops, self.graph_loops = self.graph_loops, []
        self.mutated_names.append([])
        self.batched_names.append(set())
        # A parameter whose default is a number or a bool (`test=False`) is
        # passed on as a Python value.
        self.evidence.append({name: "p" for name in _number_defaults(node.args)})
        self.dataset_names.append(set())
        self.branch_tests.append([])
        for stmt in node.body:
            self.visit(stmt)
        tests = self.branch_tests.pop()
        if tests:
            self.functions_with_tests.append((info, node, tests))
        self.dataset_names.pop()
        self.evidence.pop()
        self.batched_names.pop()
        self.loop_stack = loops
        self.graph_loops = graph_loops
        self._decide_mutations(node, info)
        self.function_stack.pop()
        self.scope.pop()
        for dec in node.decorator_list:
            self.visit(dec)

    visit_FunctionDef = _visit_function
    visit_AsyncFunctionDef = _visit_function

    def _record_default_calls(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        """Calls in a function's defaults and annotations: they run when its
        `def` does (see `ModuleIndex.default_calls`)."""
        args = node.args
        evaluated = [
            *args.defaults,
            *(d for d in args.kw_defaults if d is not None),
            *(
                a.annotation
                for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg)
                if a is not None and a.annotation is not None
            ),
        ]
        if node.returns is not None:
            evaluated.append(node.returns)
        for part in evaluated:
            if part.__class__ in _ATOMS:
                continue
            for inner in ast.walk(part):
                if isinstance(inner, ast.Call):
                    callee = self.resolve(inner.func)
                    if callee:
                        self.index.default_calls.add(callee)

    # -- loops ------------------------------------------------------------------
    def _mark(self, fact: str) -> None:
        if self.function_stack:
            setattr(self.function_stack[-1], fact, True)

    def _branch(self, test: ast.expr) -> None:
        """A condition of the function being visited: decided at the end of
        the file (`_decide_branches`), once every import and every `self`
        attribute assigned from a call are known."""
        if self.function_stack:
            self.branch_tests[-1].append(test)

    def decide_branches(self) -> None:
        """Whether each function branches on a tensor (what TFR101 looks at):
        not when every condition is a Python value (`python_conditions`),
        given the `self` attributes read hold no variable (left in
        `branch_reads`, checked last) and the project proves no parameter
        read a tensor (`FunctionInfo.condition_params`, checked by TFR101)."""
        conditions = PythonConditions(self.resolve, self.index.imports, self.mentions_walrus)
        for info, node, tests in self.functions_with_tests:
            known = conditions.of_function(node, tests)
            if known is None:
                info.branches = True
                continue
            info.condition_params = known.params
            if known.self_reads:
                self.branch_reads.append((info, known.self_reads))

    def visit_If(self, node: ast.If) -> None:
        self._branch(node.test)
        self.generic_visit(node)

    def visit_IfExp(self, node: ast.IfExp) -> None:
        self._branch(node.test)
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
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._record_named_attribute_write(node.target)
        self._record_target(node.target)
        attr = self_attribute_from_call(node)
        if attr is not None:
            self.self_call_attrs.add(attr)
        self.generic_visit(node)

    def _record_target(self, target: ast.AST) -> None:
        """Attribute and item writes the TFR2xx rules test before parsing."""
        if isinstance(target, ast.Attribute):
            if self.function_stack and isinstance(target.value, ast.Name):
                if target.value.id == "self":
                    self.function_stack[-1].self_writes.add(target.attr)
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            self.index.item_writes.add(target.value.id)

    def _record_named_attribute_write(self, target: ast.expr) -> None:
        if (
            isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Name)
            and target.value.id not in ("self", "cls")
        ):
            self.index.named_attribute_writes.add(target.value.id)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        if _writes_outside(node.target, augmented=True):
            self._mark("writes_state")
        self._record_named_attribute_write(node.target)
        if isinstance(node.op, ast.Add) and isinstance(node.target, ast.Name):
            self.summed_names.add(node.target.id)
        if (
            self.loop_stack
            and isinstance(node.op, ast.Add)
            and not isinstance(node.value, ast.Constant)  # `n += 1` counts, it does not sum
        ):
            self.index.accumulates_in_loop = True
        self._record_target(node.target)
        owner = self._method_class()
        if owner is not None and _is_self_attribute(node.target):
            assert isinstance(node.target, ast.Attribute)
            method = self.function_stack[0].qualname.rpartition(".")[2]
            owner.updated_attrs.setdefault(node.target.attr, method)
        if isinstance(node.target, ast.Name) and isinstance(node.value, ast.Constant):
            # A Python counter (`step += 1`) stays a Python value.
            known = self.evidence[-1].get(node.target.id, "?")
            self.evidence[-1][node.target.id] = "p" if known == "p" else "?"
        self.generic_visit(node)

    # -- tf.function aliases ---------------------------------------------------
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
        if not _is_tf_function(self.resolve(node.args[0]) or ""):
            return None
        return {kw.arg: ast.unparse(kw.value) for kw in node.keywords if kw.arg}

    def record_tf_function_alias(self, node: ast.Assign) -> None:
        """`f = tf.function`, `f = tf.function(jit_compile=True)`,
        `f = partial(tf.function, ...)` at module level."""
        value = node.value
        options: dict[str, str] | None = None
        if _is_tf_function(self.resolve(value) or ""):
            options = {}
        elif (
            isinstance(value, ast.Call)
            and not value.args
            and _is_tf_function(self.resolve(value.func) or "")
        ):
            options = {kw.arg: ast.unparse(kw.value) for kw in value.keywords if kw.arg}
        else:
            options = self._partial_tf_function(value)
        if options is None:
            return
        for target in node.targets:
            if isinstance(target, ast.Name):
                self.tf_function_aliases[target.id] = options

    # -- call-site evidence ----------------------------------------------------
    def _evidence(self, node: ast.AST) -> str:
        """What an argument is: `s` a scalar tensor, `t` a tensor, `p` a
        Python value, `?` unknown."""
        if isinstance(node, (ast.Constant, ast.List, ast.Tuple, ast.Dict, ast.Set)):
            return "p"
        if isinstance(node, (ast.JoinedStr, ast.Lambda, ast.ListComp, ast.DictComp)):
            return "p"
        if isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant):
            return "p"
        if isinstance(node, ast.Name):
            return self.evidence[-1].get(node.id, "?")
        if isinstance(node, ast.Attribute) and node.attr in ("shape", "ndim", "dtype"):
            return "p"
        if _is_self_attribute(node) and self.class_numbers:
            assert isinstance(node, ast.Attribute)
            cls, numbers = self.class_numbers[-1]
            if numbers is None:
                numbers = _init_numbers(cls)
                self.class_numbers[-1] = (cls, numbers)
            return "p" if node.attr in numbers else "?"
        if isinstance(node, ast.BinOp):
            # `self.sigma * (1. - test)`: Python numbers make a Python number;
            # a tensor operand makes a tensor.
            left, right = self._evidence(node.left), self._evidence(node.right)
            if "t" in (left, right):
                return "t"
            if left == right and left in "ps":
                return left
            if {left, right} == {"s", "p"}:
                return "s"
            return "?"
        if isinstance(node, ast.Call):
            name = self.resolve(node.func) or ""
            if name in _PYTHON_VALUE_CALLS:
                return "p"
            if name in ("tensorflow.constant", "tensorflow.convert_to_tensor") and node.args:
                first = node.args[0]
                if isinstance(first, ast.UnaryOp):
                    first = first.operand
                scalar = isinstance(first, ast.Constant) and isinstance(
                    first.value, (int, float, bool)
                )
                return "s" if scalar else "t"
            if name in ALWAYS_SCALAR or (
                name in REDUCTIONS
                and len(node.args) == 1
                and not any(kw.arg in ("axis", "keepdims") for kw in node.keywords)
            ):
                return "s"  # `tf.size(x)`, `tf.reduce_mean(x)`: no axis, a scalar
            if is_tensor_op(name):
                return "t"
        return "?"

    def _record_call_site(self, node: ast.Call, callee: str) -> None:
        func = node.func
        via_attribute = False
        if isinstance(func, ast.Name):
            if func.id in _BUILTINS and func.id not in self.module_level_names:
                return
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            head = func.value.id
            if head == "self":
                via_attribute = True
            elif head not in self.index.imports:
                return
        else:
            return
        if callee.split(".", 1)[0] in _EXTERNAL_ROOTS:
            return
        args = "".join(
            "?" if isinstance(arg, ast.Starred) else self._evidence(arg) for arg in node.args
        )
        keywords = tuple((kw.arg, self._evidence(kw.value)) for kw in node.keywords if kw.arg)
        caller = self.function_stack[-1].qualname if self.function_stack else ""
        self.index.call_sites.append(
            CallSite(callee, args, keywords, node.lineno, via_attribute, caller)
        )

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

    def visit_Global(self, node: ast.Global) -> None:
        self._mark("writes_state")
        where = (
            f"rebound in `{self.function_stack[-1].qualname}`"
            if self.function_stack
            else ("declared global")
        )
        for name in node.names:
            self.index.rebound_module_names.setdefault(name, where)

    def visit_Nonlocal(self, node: ast.Nonlocal) -> None:
        self._mark("writes_state")

    def _method_class(self) -> ClassInfo | None:
        """The class whose method (or a function nested in one) is being visited."""
        if not self.function_stack or self.function_stack[0].class_name is None:
            return None
        return self.index.classes.get(self.function_stack[0].class_name)

    def visit_Assign(self, node: ast.Assign) -> None:
        attr = self_attribute_from_call(node)
        if attr is not None:
            self.self_call_attrs.add(attr)
        owner = self._method_class()
        if owner is not None and isinstance(node.value, ast.Call):
            held = self.resolve(node.value.func)
            for target in node.targets:
                if held and _is_self_attribute(target):
                    assert isinstance(target, ast.Attribute)
                    owner.held_objects.setdefault(target.attr, held)
        if any(_writes_outside(t, augmented=False) for t in node.targets):
            self._mark("writes_state")
        if any(isinstance(t, (ast.Attribute, ast.Subscript)) for t in node.targets):
            for target in node.targets:
                self._record_target(target)
                self._record_named_attribute_write(target)
                if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
                    if target.value.id in self.index.imports:
                        written = self.resolve(target)
                        if written:
                            self.index.foreign_writes.add(written)
        names = [t.id for t in node.targets if isinstance(t, ast.Name)]
        if names:
            evidence = self._evidence(node.value)
            dataset = self.mentions_dataset and self._is_dataset(node.value)
            for name in names:
                self.evidence[-1][name] = evidence
                if dataset:
                    self.dataset_names[-1].add(name)
                else:
                    self.dataset_names[-1].discard(name)
        if self.mentions_batch and _batch_keeps_remainder(node.value):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    self.batched_names[-1].add(target.id)
        self.generic_visit(node)

    def _feeds_short_batch(self, source: ast.AST) -> bool:
        if isinstance(source, ast.Call) and dotted(source.func) in ("enumerate", "zip", "iter"):
            return any(self._feeds_short_batch(arg) for arg in source.args)
        if isinstance(source, ast.Name) and any(source.id in names for names in self.batched_names):
            return True
        if isinstance(source, ast.Call) and dotted(source.func) == "range" and source.args[2:]:
            step = source.args[2]
            return not (isinstance(step, ast.Constant) and step.value == 1)
        return self.mentions_batch and _batch_keeps_remainder(source)

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
        self.visit(node.iter)
        if isinstance(node.iter, ast.Call) and dotted(node.iter.func) in ("range", "enumerate"):
            counter = node.target
            if isinstance(counter, ast.Tuple) and counter.elts:
                counter = counter.elts[0]
            if isinstance(counter, ast.Name):
                self.evidence[-1][counter.id] = "p"
        self.loop_stack.append(self._feeds_short_batch(node.iter))
        self.graph_loops.append(self._may_range_over_tensor(node.iter))
        for stmt in [*node.body, *node.orelse]:
            self.visit(stmt)
        self.loop_stack.pop()
        self.graph_loops.pop()

    def _may_range_over_tensor(self, iterated: ast.expr) -> bool:
        """A `for` AutoGraph may run as a `tf.while_loop`: over `tf.range(...)`
        (any `<module>.range(...)`, whatever the alias)."""
        if not isinstance(iterated, ast.Call):
            return False
        func = iterated.func
        return (isinstance(func, ast.Attribute) and func.attr == "range") or (
            self.resolve(func) == "tensorflow.range"
        )

    def _mutation(self, receiver: ast.expr) -> None:
        """A mutating method call: on `self.attr` it may mutate outside
        state; on a name, decided at the end of the function, once its
        locals are known (`_decide_mutations`)."""
        if isinstance(receiver, ast.Attribute) and _is_self_attribute(receiver):
            self.function_stack[-1].mutates_outside = True
        elif isinstance(receiver, ast.Name):
            in_graph_loop = any(self.graph_loops)
            self.mutated_names[-1].append((receiver.id, in_graph_loop))

    def _decide_mutations(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef, info: FunctionInfo
    ) -> None:
        mutated = self.mutated_names.pop()
        if info.mutates_outside or not mutated:
            return
        if any(in_loop for _, in_loop in mutated):
            info.mutates_outside = True
            return
        # A module (`ops.add(x, y)`) is no container TFR202 looks at.
        known = own_local_names(node, self.mentions_walrus) | self.index.imports.keys()
        info.mutates_outside = any(name not in known for name, _ in mutated)

    def visit_While(self, node: ast.While) -> None:
        self._branch(node.test)  # a `while` tests its condition like an `if` (TFR101)
        self.visit(node.test)
        self.loop_stack.append(False)
        self.graph_loops.append(True)  # on a tensor condition, a `tf.while_loop`
        for stmt in [*node.body, *node.orelse]:
            self.visit(stmt)
        self.loop_stack.pop()
        self.graph_loops.pop()

    # -- uses -------------------------------------------------------------------
    def visit_Attribute(self, node: ast.Attribute) -> None:
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
        callee = self.resolve(node.func)
        if node.args:
            self._record_traced_argument(node, callee)
        if callee and (node.args or node.keywords):
            self._record_call_site(node, callee)
        if callee:
            self.index.called_names.add(callee)
            if callee.rpartition(".")[2] in _AVERAGES and len(node.args) + len(node.keywords) == 1:
                value = node.args[0] if node.args else node.keywords[0].value
                if isinstance(value, ast.Starred):
                    value = value.value
                if isinstance(value, (ast.Name, ast.ListComp, ast.GeneratorExp)):
                    self.index.averaged_callees.add(callee)
            if self.loop_stack:
                short = self.index.loop_calls.get(callee, False) or any(self.loop_stack)
                self.index.loop_calls[callee] = short
        if callee and not self.function_stack:
            self.index.module_call_lines.setdefault(callee, []).append(node.lineno)
        if self.function_stack:
            if callee:
                self.function_stack[-1].calls.append(callee)
            if isinstance(node.func, ast.Attribute):
                self.function_stack[-1].method_calls.add(node.func.attr)
                if node.func.attr in MUTATING_METHODS:
                    self._mutation(node.func.value)
                if self._is_logging_call(node.func, callee):
                    self.function_stack[-1].calls_python_logging = True
        if callee and _is_tf_function(callee) and node.args:
            target = self.resolve(node.args[0])
            if target:
                keywords = {kw.arg: ast.unparse(kw.value) for kw in node.keywords if kw.arg}
                self.index.traced_sites.append(
                    TracedSite(target, "wrapped in tf.function(...)", node.lineno, keywords)
                )
        if callee and callee.endswith("run_functions_eagerly"):
            self.index.calls_run_functions_eagerly = True
        if isinstance(node.func, ast.Attribute):
            attr = node.func.attr
            if attr == "compile":
                self._record_compile(node)
            elif is_update_call(node) and self.function_stack:
                self.function_stack[-1].applies_gradients = True
        self.generic_visit(node)

    def record_logger(self, node: ast.Assign) -> None:
        """`logger = logging.getLogger(__name__)` at module level: calls of
        `logger.info(...)` are Python logging."""
        if isinstance(node.value, ast.Call) and is_logger_factory(self.resolve(node.value.func)):
            self.logger_names.update(t.id for t in node.targets if isinstance(t, ast.Name))

    def _is_logging_call(self, func: ast.Attribute, callee: str | None) -> bool:
        """`logging.info(...)`, `tf.get_logger().info(...)`, `logger.info(...)`."""
        if func.attr not in LOG_METHODS:
            return False
        receiver = func.value
        logger = (
            isinstance(receiver, ast.Call) and is_logger_factory(self.resolve(receiver.func))
        ) or (isinstance(receiver, ast.Name) and receiver.id in self.logger_names)
        return is_logging_call(func.attr, callee, logger)

    def visit_With(self, node: ast.With) -> None:
        if opens_tape(node, self.resolve):
            self.index.opens_gradient_tape = True
            if self.function_stack:
                self.function_stack[-1].opens_gradient_tape = True
                self.tape_functions.add(self.function_stack[-1].qualname)
                if self.loop_stack:
                    self.function_stack[-1].tape_in_loop = True
        self.generic_visit(node)

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


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement, nested ones included, without visiting expressions
    (imports are statements, so this finds them all cheaply)."""
    stack = list(reversed(body))
    while stack:
        statement = stack.pop()
        yield statement
        for field_name in ("body", "orelse", "finalbody", "handlers", "cases"):
            children = getattr(statement, field_name, None)
            if children.__class__ is list:
                stack.extend(reversed(children))


def _batch_keeps_remainder(node: ast.AST) -> bool:
    """`ds.batch(n)` (anywhere in a chain) without `drop_remainder=True`."""
    for sub in ast.walk(node):
        if (
            isinstance(sub, ast.Call)
            and isinstance(sub.func, ast.Attribute)
            and sub.func.attr in ("batch", "padded_batch")
        ):
            drop = next((kw.value for kw in sub.keywords if kw.arg == "drop_remainder"), None)
            if not (isinstance(drop, ast.Constant) and drop.value is True):
                return True
    return False


def _leaf_values(node: ast.AST) -> list[ast.AST]:
    """The callables inside `loss=f`, `metrics=[f, g]`, `loss={"out": f}`."""
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [leaf for elt in node.elts for leaf in _leaf_values(elt)]
    if isinstance(node, ast.Dict):
        return [leaf for v in node.values for leaf in _leaf_values(v)]
    return [node]


_BUILTINS = frozenset(dir(builtins))
# Top-level packages whose functions are never project functions.
_EXTERNAL_ROOTS = frozenset(
    {
        "tensorflow",
        "numpy",
        "keras",
        "tf_keras",
        "jax",
        "torch",
        "math",
        "os",
        "sys",
        "logging",
        "random",
        "time",
        "json",
        "re",
        "functools",
        "itertools",
        "collections",
        "typing",
        "pathlib",
        "absl",
        "scipy",
        "pandas",
        "sklearn",
        "matplotlib",
        "tqdm",
        "tensorflow_datasets",
        "tensorflow_probability",
        "tensorflow_addons",
        "copy",
        "warnings",
        "argparse",
        "pickle",
        "shutil",
        "glob",
        "datetime",
        "contextlib",
        "inspect",
        "string",
        "io",
        "PIL",
        "cv2",
        "h5py",
    }
)
_PYTHON_VALUE_CALLS = frozenset({"len", "int", "float", "bool", "str", "range", "round", "list"})
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


def _is_number(node: ast.AST | None) -> bool:
    if isinstance(node, ast.UnaryOp):
        node = node.operand
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, (int, float, bool))
        and not isinstance(node.value, complex)
    )


def _writes_outside(target: ast.expr, augmented: bool) -> bool:
    """Whether assigning `target` may write state that outlives a call, as
    TFR202 reads it: an item (`obj[k] = ...`), an attribute of a name
    (`obj.attr = ...`; on `self` only augmented, `self.n += 1`). A plain name
    is local unless declared `global`/`nonlocal` (marked where declared)."""
    if isinstance(target, ast.Subscript):
        return True
    if isinstance(target, (ast.Tuple, ast.List)):
        return any(_writes_outside(t, augmented) for t in target.elts)
    if isinstance(target, ast.Starred):
        return _writes_outside(target.value, augmented)
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
        return augmented or target.value.id != "self"
    return False


def _number_defaults(args: ast.arguments) -> list[str]:
    """Parameters whose default is a number or a bool."""
    positional = [*args.posonlyargs, *args.args]
    pairs = list(
        zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True)
    )
    pairs += [
        (a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None
    ]
    return [arg.arg for arg, default in pairs if _is_number(default)]


def _init_numbers(cls: ast.ClassDef) -> set[str]:
    """`self` attributes that hold Python numbers: assigned only in
    `__init__`, each time from a number or from a parameter of `__init__`
    whose default is a number (`self.sigma = sigma` with `sigma=0.1`)."""
    numbers: set[str] = set()
    others: set[str] = set()
    for method in cls.body:
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        defaults = set(_number_defaults(method.args)) if method.name == "__init__" else set()
        for node in _statements(method.body):
            if isinstance(node, ast.AugAssign) and _is_self_attribute(node.target):
                others.add(node.target.attr)  # type: ignore[attr-defined]
            if not isinstance(node, (ast.Assign, ast.AnnAssign)):
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for element in target.elts if isinstance(target, ast.Tuple) else [target]:
                    if not _is_self_attribute(element):
                        continue
                    attr = element.attr  # type: ignore[attr-defined]
                    value = node.value if element is target else None
                    number = _is_number(value) or (
                        isinstance(value, ast.Name) and value.id in defaults
                    )
                    (numbers if number and method.name == "__init__" else others).add(attr)
    return numbers - others


# Calls that turn a whole Python sequence into one array or tensor, whose
# shape is the sequence's length.
_WHOLE_SEQUENCE_CALLS = frozenset(
    {
        "numpy.array",
        "numpy.asarray",
        "numpy.stack",
        "numpy.vstack",
        "tensorflow.convert_to_tensor",
        "tensorflow.constant",
        "tensorflow.stack",
    }
)


def _methods_consuming_grown_lists(
    cls: ast.ClassDef, resolve: Callable[[ast.AST], str | None]
) -> list[str]:
    """Methods of `cls` that iterate over (`for g, s in zip(G, self.states)`)
    or turn whole into an array or tensor (`tf.convert_to_tensor(self.actions)`)
    a `self` list another method appends to (`self.states.append(s)`)."""
    methods = [m for m in cls.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))]
    appended: dict[str, set[str]] = {}  # attr -> methods appending to it
    for method in methods:
        for node in ast.walk(method):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("append", "extend", "insert")
                and _is_self_attribute(node.func.value)
            ):
                attr = node.func.value.attr  # type: ignore[attr-defined]
                appended.setdefault(attr, set()).add(method.name)
    if not appended:
        return []

    def grown(node: ast.AST, own: str) -> bool:
        if _is_self_attribute(node):
            return bool(appended.get(node.attr, set()) - {own})  # type: ignore[attr-defined]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id in ("zip", "enumerate", "reversed", "list"):
                return any(grown(arg, own) for arg in node.args)
        return False

    found = []
    for method in methods:
        for node in ast.walk(method):
            if isinstance(node, (ast.For, ast.comprehension)) and grown(node.iter, method.name):
                found.append(method.name)
                break
            if (
                isinstance(node, ast.Call)
                and node.args
                and (resolve(node.func) or "") in _WHOLE_SEQUENCE_CALLS
                and grown(node.args[0], method.name)
            ):
                found.append(method.name)
                break
    return found


def is_update_call(node: ast.Call) -> bool:
    """A call that applies gradients (`vocabulary.is_gradient_update`, asked
    on an `ast` node): `apply_gradients`, `minimize`, Keras 3's
    `optimizer.apply(grads, variables)`, or `w.assign_sub(lr * dw)`."""
    if not isinstance(node.func, ast.Attribute):
        return False
    first = node.args[0] if node.args else node.keywords[0].value if node.keywords else None
    return is_gradient_update(
        node.func.attr,
        dotted(node.func.value),
        len(node.args),
        None if first is None else _is_number_literal(first),
    )


def _is_number_literal(node: ast.AST) -> bool:
    """`1`, `0.5` as written (not `-1`, `True`): what LibCST parses as a number."""
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def _is_self_attribute(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
    )


def _module_bindings(
    body: list[ast.stmt], in_loop: bool = False
) -> dict[str, tuple[int, int, bool]]:
    """name -> (how many times it may be bound, line of the last binding, bound
    in a loop) for the names module-level statements bind, compound statements
    included (not functions, classes or comprehensions): `lr_scale = ...` in
    the module's epoch loop rebinds a module global as surely as a `global`
    statement does. Alternatives (`if`/`else`, `try`/`except`) count as the
    most bindings one of them makes, not their sum."""
    found: dict[str, tuple[int, int, bool]] = {}

    def add(name: str, count: int, line: int, looped: bool) -> None:
        old = found.get(name, (0, 0, False))
        found[name] = (old[0] + count, max(old[1], line), old[2] or looped)

    for statement in body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        targets: list[ast.AST] = []
        if isinstance(statement, ast.Assign):
            targets = list(statement.targets)
        elif isinstance(statement, ast.AugAssign):
            targets = [statement.target]
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            targets = [statement.target]
        elif isinstance(statement, (ast.For, ast.AsyncFor)):
            targets = [statement.target]
        for target in targets:
            for name in _bound_names(target):
                add(
                    name,
                    1,
                    statement.lineno,
                    in_loop or isinstance(statement, (ast.For, ast.AsyncFor)),
                )
        if isinstance(statement, (ast.For, ast.AsyncFor, ast.While)):
            for name, value in _module_bindings([*statement.body, *statement.orelse], True).items():
                add(name, *value)
        elif isinstance(statement, (ast.If, ast.Try)) or type(statement).__name__ == "TryStar":
            branches = [statement.body, statement.orelse]
            branches += [handler.body for handler in getattr(statement, "handlers", [])]
            merged: dict[str, tuple[int, int, bool]] = {}
            for branch in branches:
                for name, (count, line, looped) in _module_bindings(branch, in_loop).items():
                    old = merged.get(name, (0, 0, False))
                    merged[name] = (max(old[0], count), max(old[1], line), old[2] or looped)
            for name, value in merged.items():
                add(name, *value)
            final = getattr(statement, "finalbody", [])
            for name, value in _module_bindings(final, in_loop).items():
                add(name, *value)
        elif isinstance(statement, (ast.With, ast.AsyncWith)):
            for name, value in _module_bindings(statement.body, in_loop).items():
                add(name, *value)
    return found


def _bound_names(target: ast.AST) -> Iterator[str]:
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from _bound_names(element)
    elif isinstance(target, ast.Starred):
        yield from _bound_names(target.value)


def _is_tf_function(name: str) -> bool:
    return name in TF_FUNCTION_NAMES


def build_index(
    source: str, path: str, module: str, star_names: Mapping[str, str] | None = None
) -> ModuleIndex:
    """Index one file's source. A syntax error is recorded, not raised.
    `star_names`: what the names its `from module import *` statements
    bring are (`ModuleIndex.star_names`, which the project facts know);
    they resolve as imports do, unless the file binds the name itself."""
    index = ModuleIndex(path=path, module=module)
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError as err:
        index.syntax_error = (err.lineno, err.offset, err.msg)
        return index
    except (ValueError, RecursionError) as err:  # null bytes, absurd nesting
        index.syntax_error = (None, None, str(err))
        return index
    indexer = _Indexer(index, is_package=path.endswith("__init__.py"))
    indexer.module_level_names = {
        s.name
        for s in tree.body
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    }
    # Imports first, wherever they stand, so a function body that precedes an
    # import still resolves its names.
    for node in _statements(tree.body):
        if isinstance(node, ast.Import):
            indexer.record_import(node)
        elif isinstance(node, ast.ImportFrom):
            indexer.record_import_from(node)
    for alias, target in (star_names or {}).items():
        if alias not in index.imports and alias not in indexer.module_level_names:
            index.imports[alias] = target
    for statement in tree.body:
        if isinstance(statement, ast.Assign):
            indexer.record_tf_function_alias(statement)
            indexer.record_logger(statement)
    indexer.mentions_batch = ".batch(" in source or "padded_batch(" in source
    indexer.mentions_walrus = ":=" in source
    indexer.mentions_dataset = "Dataset" in source or "tensorflow_datasets" in source
    indexer.visit(tree)
    index.divides_running_sum = not indexer.summed_names.isdisjoint(indexer.divided_names)
    indexer.decide_branches()
    for info, reads in indexer.branch_reads:
        if not reads.isdisjoint(indexer.self_call_attrs):
            info.branches = True
    bindings = _module_bindings(tree.body)
    index.module_names = set(bindings)
    for name, (count, last_line, looped) in bindings.items():
        if looped:
            index.rebound_module_names.setdefault(name, "rebound in a module-level loop")
        elif count > 1:
            if name not in index.rebound_module_names:
                index.straight_rebinds[name] = last_line
            index.rebound_module_names.setdefault(name, "assigned more than once")
    if index.opens_gradient_tape:
        _record_tape_losses(indexer, tree.body, "", _tape_scopes(indexer))
    _compact(index)
    return index


_NOTHING: frozenset[str] = frozenset()


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
        info.self_reads = frozenset(info.self_reads) if info.self_reads else _NOTHING


def opens_tape(
    node: ast.AST, resolve: Callable[[ast.AST], str | None] = lambda n: dotted(n)
) -> bool:
    """A `with tf.GradientTape() as tape:` block (`vocabulary.is_gradient_tape`,
    asked on an `ast` node). `resolve` names what an item calls: through the
    file's imports in pass 1, as spelled elsewhere (verify)."""
    if not isinstance(node, ast.With):
        return False
    for item in node.items:
        expr = item.context_expr
        if is_gradient_tape(resolve(expr.func if isinstance(expr, ast.Call) else expr)):
            return True
    return False


def _scope_nodes(body: list[ast.stmt]) -> list[ast.AST]:
    """Every node of a scope's body, not descending into nested definitions."""
    result: list[ast.AST] = []
    stack: list[ast.AST] = list(reversed(body))
    while stack:
        node = stack.pop()
        result.append(node)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))
    return result


def _loss_calls(value: ast.AST) -> list[ast.Call]:
    """`f(a, b)` itself, or the two-argument calls added up in `f(a, b) + reg`."""
    if isinstance(value, ast.Call) and len(value.args) == 2 and not value.keywords:
        return [value]
    if isinstance(value, ast.BinOp):
        return [*_loss_calls(value.left), *_loss_calls(value.right)]
    return []


def _tape_scopes(indexer: _Indexer) -> set[str]:
    """The functions that open a tape, and those they are nested in."""
    scopes: set[str] = set()
    for qualname in indexer.tape_functions:
        parts = qualname.split(".")
        scopes.update(".".join(parts[:n]) for n in range(1, len(parts) + 1))
    return scopes


def _record_tape_losses(
    indexer: _Indexer, body: list[ast.stmt], qualname: str, tape_scopes: set[str]
) -> None:
    """Record two-argument calls whose result, assigned inside a GradientTape
    block, is what `tape.gradient` differentiates; recurse into the nested
    scopes that can hold a tape (`tape_scopes`, and every class)."""
    nodes = _scope_nodes(body)
    differentiated = {
        node.args[0].id
        for node in nodes
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "gradient"
        and node.args
        and isinstance(node.args[0], ast.Name)
    }
    for node in nodes:
        if opens_tape(node, indexer.resolve):
            for stmt in _scope_nodes(node.body):
                if not isinstance(stmt, (ast.Assign, ast.AnnAssign)) or stmt.value is None:
                    continue
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                if not any(isinstance(t, ast.Name) and t.id in differentiated for t in targets):
                    continue
                for call in _loss_calls(stmt.value):
                    callee = indexer.resolve(call.func)
                    if callee:
                        indexer.index.tape_losses.append(TapeLoss(callee, qualname, stmt.lineno))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            inner = f"{qualname}.{node.name}" if qualname else node.name
            if isinstance(node, ast.ClassDef) or inner in tape_scopes:
                _record_tape_losses(indexer, node.body, inner, tape_scopes)
